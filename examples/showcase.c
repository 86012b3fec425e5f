/* showcase.c - a 150,000-entity world on every hardware thread, and what the scheduler did.

   60,000 boids flock around 8 leaders while fountains throw ~90,000 short-lived
   sparks. 17 systems in 3 stages declare what they read and write (components
   through their query terms, resources through reads/writes); ecs.h infers the
   order of every conflicting pair from registration order, validates the
   graph, and runs whatever the graph leaves unordered in parallel. The heavy
   per-entity systems are chunked (4096 rows per task), so one system also
   spreads over all threads.
     simulate   clock, wind, clear, bin, track, lead, flock, age, cool, drift,
                integrate, bounds
     lifecycle  despawn and spawn record commands (it->commands); census is
                EXCLUSIVE: it sees the world after the despawns, counts it, and
                every 64 frames moves the Leader tag to other boids with
                immediate structural changes
     present    density fills a small map; render (MAIN_THREAD) prints it
   It prints the validation report, the schedule, per-system timings and the
   achieved parallelism; runs the same simulation again on one thread to
   measure the speedup, and hashes both worlds' final state to show the result
   does not depend on the thread count. It writes trace.json (a few traced
   frames, for Perfetto) and graph.dot (for Graphviz).
   Usage: showcase [frames] [--check-reads]   (default 300 frames; --check-reads
   turns on ecs_world_desc.check_reads: every write through a READ field is
   reported) */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    BOIDS = 60000, SPARKS = 90000, LEADERS = 8, CHUNK = 4096,
    GRID = 64, CELL = 16, SIZE = GRID * CELL,   /* the world is SIZE x SIZE */
    MAP_W = 64, MAP_H = 20, ELECT_EVERY = 64, SPAWN_MAX = 4000
};
#define DT (1.0f / 60)

/* components (Boid and Leader are tags) */
typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;
typedef struct { float age, span; } Life;    /* sparks */
typedef struct { float glow; } Heat;         /* sparks: 1 when born, fading */

/* resources */
typedef struct { float gravity, drag, min_speed, max_speed; int sparks; } Config;
typedef struct { float t; uint32_t frame; } Time;
typedef struct { float x, y; } Wind;
typedef struct { int n; float px, py, vx, vy; } Cell;
typedef struct { Cell cells[GRID][GRID]; } Grid;            /* boids binned per cell */
typedef struct { int count; Position at[LEADERS]; } Leaders;
typedef struct { size_t boids, sparks, born, died; } Census;
typedef struct { uint64_t state; } Rng;
typedef struct { int n[MAP_H][MAP_W]; } Screen;

typedef struct {   /* every system's ctx */
    ecs_id pos, vel, life, heat, boid, leader;
    ecs_id config, time, wind, grid, leaders, census, rng, screen;
    ecs_query *q_boids, *q_sparks, *q_leaders;
    ecs_system_desc desc[24];   /* per system, as registered: ecs.h has no getter for a
                                   system's stage, flags or chunk size */
    int frames;     /* how many frames this run has: render draws the last one */
    bool verbose;   /* render prints */
} App;

/* ---- seeded randomness: no rand(), no time-based seeds ---------------------------- */
static uint64_t mix64(uint64_t z) {   /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}
static uint64_t rng_next(Rng *r) { return mix64(r->state += 0x9e3779b97f4a7c15u); }
static float rng_float(Rng *r) { return (float)(rng_next(r) >> 40) / (float)(1u << 24); }   /* [0, 1) */

#define RES(it, T, id) ((T *)ecs_resource_get((it)->world, (id)))
static int cell_of(float v) { int c = (int)(v / CELL); return c < 0 ? 0 : c >= GRID ? GRID - 1 : c; }

/* ---- simulate -------------------------------------------------------------------- */
static void clock_system(ecs_iter *it) {
    const App *a = (const App *)it->ctx;
    Time *t = RES(it, Time, a->time);
    t->t += it->dt;
    t->frame++;
}

static void wind_system(ecs_iter *it) {   /* slow gusts */
    const App *a = (const App *)it->ctx;
    const Time *t = RES(it, Time, a->time);
    Wind *w = RES(it, Wind, a->wind);
    w->x = 60 * sinf(t->t * 0.7f) + 25 * sinf(t->t * 2.3f);
    w->y = 10 * cosf(t->t * 1.1f);
}

static void clear_system(ecs_iter *it) {   /* per-frame aggregates start empty */
    const App *a = (const App *)it->ctx;
    memset(RES(it, Grid, a->grid), 0, sizeof(Grid));
    RES(it, Leaders, a->leaders)->count = 0;
}

static void bin_system(ecs_iter *it) {   /* a reduction: one task, in a fixed order */
    const App *a = (const App *)it->ctx;
    const Position *p = ECS_FIELD(it, Position, 0);
    const Velocity *v = ECS_FIELD(it, Velocity, 1);
    Grid *g = RES(it, Grid, a->grid);
    for (int i = 0; i < it->count; i++) {
        Cell *c = &g->cells[cell_of(p[i].y)][cell_of(p[i].x)];
        c->n++; c->px += p[i].x; c->py += p[i].y; c->vx += v[i].x; c->vy += v[i].y;
    }
}

static void track_system(ecs_iter *it) {
    const App *a = (const App *)it->ctx;
    const Position *p = ECS_FIELD(it, Position, 0);
    Leaders *l = RES(it, Leaders, a->leaders);
    for (int i = 0; i < it->count && l->count < LEADERS; i++) l->at[l->count++] = p[i];
}

static void lead_system(ecs_iter *it) {   /* leaders fly Lissajous curves */
    const App *a = (const App *)it->ctx;
    const Position *p = ECS_FIELD(it, Position, 0);
    Velocity *v = ECS_FIELD(it, Velocity, 1);
    const Time *t = RES(it, Time, a->time);
    for (int i = 0; i < it->count; i++) {
        float phase = (float)(mix64(it->entities[i]) % 628) / 100;
        float tx = SIZE * (0.5f + 0.38f * sinf(0.31f * t->t + phase));
        float ty = SIZE * (0.5f + 0.38f * sinf(0.47f * t->t + 2 * phase));
        v[i].x = (tx - p[i].x) * 0.8f;
        v[i].y = (ty - p[i].y) * 0.8f;
    }
}

static void flock_system(ecs_iter *it) {   /* cohesion, alignment, separation, leaders */
    const App *a = (const App *)it->ctx;
    const Position *p = ECS_FIELD(it, Position, 0);
    Velocity *v = ECS_FIELD(it, Velocity, 1);
    const Config *cfg = RES(it, Config, a->config);
    const Grid *g = RES(it, Grid, a->grid);
    const Leaders *l = RES(it, Leaders, a->leaders);
    for (int i = 0; i < it->count; i++) {
        int cx = cell_of(p[i].x), cy = cell_of(p[i].y), n = 0;
        float px = 0, py = 0, vx = 0, vy = 0, sepx = 0, sepy = 0;
        for (int y = cy - 1; y <= cy + 1; y++)
            for (int x = cx - 1; x <= cx + 1; x++) {
                if (x < 0 || y < 0 || x >= GRID || y >= GRID) continue;
                const Cell *c = &g->cells[y][x];
                n += c->n; px += c->px; py += c->py; vx += c->vx; vy += c->vy;
                sepx -= (float)((x - cx) * c->n);   /* away from crowded neighbours */
                sepy -= (float)((y - cy) * c->n);
            }
        float ax = 0, ay = 0;
        if (n > 1) {
            float inv = 1.0f / (float)n;
            ax += (px * inv - p[i].x) * 0.6f + (vx * inv - v[i].x) * 0.9f + sepx * 0.8f;
            ay += (py * inv - p[i].y) * 0.6f + (vy * inv - v[i].y) * 0.9f + sepy * 0.8f;
        }
        float best = 1e30f, lx = 0, ly = 0;
        for (int k = 0; k < l->count; k++) {
            float dx = l->at[k].x - p[i].x, dy = l->at[k].y - p[i].y, d2 = dx * dx + dy * dy;
            if (d2 < best) { best = d2; lx = dx; ly = dy; }
        }
        if (best < 300.0f * 300.0f) {
            float d = sqrtf(best) + 1;
            ax += lx / d * 60; ay += ly / d * 60;
        }
        float nx = v[i].x + ax * it->dt, ny = v[i].y + ay * it->dt;
        float s = sqrtf(nx * nx + ny * ny);
        float k = s > cfg->max_speed ? cfg->max_speed / s : s < cfg->min_speed && s > 0 ? cfg->min_speed / s : 1;
        v[i].x = nx * k;
        v[i].y = ny * k;
    }
}

static void age_system(ecs_iter *it) {
    Life *l = ECS_FIELD(it, Life, 0);
    for (int i = 0; i < it->count; i++) l[i].age += it->dt;
}

static void cool_system(ecs_iter *it) {
    const Life *l = ECS_FIELD(it, Life, 0);
    Heat *h = ECS_FIELD(it, Heat, 1);
    for (int i = 0; i < it->count; i++) h[i].glow = expf(-3 * l[i].age / l[i].span);
}

static void drift_system(ecs_iter *it) {   /* sparks: gravity, wind, drag */
    const App *a = (const App *)it->ctx;
    Velocity *v = ECS_FIELD(it, Velocity, 1);
    const Config *cfg = RES(it, Config, a->config);
    const Wind *w = RES(it, Wind, a->wind);
    float drag = 1 - cfg->drag * it->dt;
    for (int i = 0; i < it->count; i++) {
        v[i].x = (v[i].x + w->x * it->dt) * drag;
        v[i].y = (v[i].y + (w->y - cfg->gravity) * it->dt) * drag;
    }
}

static void integrate_system(ecs_iter *it) {
    Position *p = ECS_FIELD(it, Position, 0);
    const Velocity *v = ECS_FIELD(it, Velocity, 1);
    for (int i = 0; i < it->count; i++) { p[i].x += v[i].x * it->dt; p[i].y += v[i].y * it->dt; }
}

static void bounds_system(ecs_iter *it) {   /* bounce off the walls, losing a little */
    Position *p = ECS_FIELD(it, Position, 0);
    Velocity *v = ECS_FIELD(it, Velocity, 1);
    for (int i = 0; i < it->count; i++) {
        if (p[i].x < 0) { p[i].x = -p[i].x; v[i].x = -0.8f * v[i].x; }
        if (p[i].x >= SIZE) { p[i].x = 2 * SIZE - 0.01f - p[i].x; v[i].x = -0.8f * v[i].x; }
        if (p[i].y < 0) { p[i].y = -p[i].y; v[i].y = -0.6f * v[i].y; }
        if (p[i].y >= SIZE) { p[i].y = 2 * SIZE - 0.01f - p[i].y; v[i].y = -0.8f * v[i].y; }
    }
}

/* ---- lifecycle ------------------------------------------------------------------- */
static void despawn_system(ecs_iter *it) {
    const Life *l = ECS_FIELD(it, Life, 0);
    for (int i = 0; i < it->count; i++)
        if (l[i].age >= l[i].span) ecs_cmd_destroy(it->commands, it->entities[i]);
}

/* The k-th boid in query order (k < the boid count). */
static ecs_entity nth_boid(ecs_world *w, ecs_query *q, size_t k) {
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        if (k < (size_t)it.count) {
            ecs_entity e = it.entities[k];
            ecs_iter_fini(&it);   /* leaving early: release the table */
            return e;
        }
        k -= (size_t)it.count;
    }
    return 0;
}

static void census_system(ecs_iter *it) {   /* EXCLUSIVE: runs alone, may change structure */
    const App *a = (const App *)it->ctx;
    ecs_world *w = it->world;
    Census *c = RES(it, Census, a->census);
    const Time *t = RES(it, Time, a->time);
    size_t sparks = ecs_query_count(w, a->q_sparks);
    c->died += c->sparks > sparks ? c->sparks - sparks : 0;
    c->sparks = sparks;
    c->boids = ecs_query_count(w, a->q_boids);
    if (t->frame % ELECT_EVERY != 1 || !c->boids) return;
    /* new leaders: tables cannot change while a query iterates them, so
       collect the handles first */
    ecs_entity old[LEADERS], elected[LEADERS];
    int n = 0;
    for (ecs_iter q = ecs_query_iter(w, a->q_leaders); ecs_query_next(&q);)
        for (int i = 0; i < q.count && n < LEADERS; i++) old[n++] = q.entities[i];
    for (int i = 0; i < n; i++) ecs_remove(w, old[i], a->leader);
    Rng *r = RES(it, Rng, a->rng);
    size_t first = (size_t)(rng_next(r) % c->boids);
    for (int i = 0; i < LEADERS; i++)
        elected[i] = nth_boid(w, a->q_boids, (first + (size_t)i * (c->boids / LEADERS)) % c->boids);
    for (int i = 0; i < LEADERS; i++) ecs_add(w, elected[i], a->leader);
}

static void spawn_system(ecs_iter *it) {   /* fountains top the sparks up to the target */
    const App *a = (const App *)it->ctx;
    const Config *cfg = RES(it, Config, a->config);
    const Time *t = RES(it, Time, a->time);
    Census *c = RES(it, Census, a->census);
    Rng *r = RES(it, Rng, a->rng);
    size_t want = (size_t)cfg->sparks > c->sparks ? (size_t)cfg->sparks - c->sparks : 0;
    if (want > SPAWN_MAX) want = SPAWN_MAX;
    for (size_t i = 0; i < want; i++) {
        int f = (int)(i % 4);
        float fx = SIZE * (0.2f + 0.2f * (float)f) + 80 * sinf(t->t * (0.5f + 0.2f * (float)f));
        float angle = 1.5708f + (rng_float(r) - 0.5f) * 0.9f, speed = 250 + 200 * rng_float(r);
        ecs_entity e = ecs_cmd_create(it->commands);
        ecs_cmd_set(it->commands, e, a->pos, &(Position){fx, 2});
        ecs_cmd_set(it->commands, e, a->vel, &(Velocity){speed * cosf(angle), speed * sinf(angle)});
        ecs_cmd_set(it->commands, e, a->life, &(Life){0, 1.0f + 1.5f * rng_float(r)});
        ecs_cmd_set(it->commands, e, a->heat, &(Heat){1});
    }
    c->born += want;
    c->sparks += want;   /* alive once this stage's commands apply */
}

/* ---- present --------------------------------------------------------------------- */
static void density_system(ecs_iter *it) {
    const App *a = (const App *)it->ctx;
    const Position *p = ECS_FIELD(it, Position, 0);
    Screen *s = RES(it, Screen, a->screen);
    for (int i = 0; i < it->count; i++) {
        int x = (int)(p[i].x * MAP_W / SIZE), y = MAP_H - 1 - (int)(p[i].y * MAP_H / SIZE);
        if (x >= 0 && x < MAP_W && y >= 0 && y < MAP_H) s->n[y][x]++;
    }
}

static void render_system(ecs_iter *it) {   /* MAIN_THREAD: where a renderer would submit */
    const App *a = (const App *)it->ctx;
    const Census *c = RES(it, Census, a->census);
    const Time *t = RES(it, Time, a->time);
    Screen *s = RES(it, Screen, a->screen);
    if (a->verbose && t->frame % 100 == 0)
        printf("  frame %3u: %zu boids, %zu sparks (%zu born, %zu died so far)\n", (unsigned)t->frame,
               c->boids, c->sparks, c->born, c->died);
    if (a->verbose && t->frame == (uint32_t)a->frames) {
        static const char ramp[] = " .:-=+*#%@";
        double avg = (double)(c->boids + c->sparks) / (MAP_W * MAP_H);
        printf("  density at frame %u (boids flocking, spark fountains at the bottom):\n", (unsigned)t->frame);
        for (int y = 0; y < MAP_H; y++) {
            char line[MAP_W + 1];
            for (int x = 0; x < MAP_W; x++) {
                int level = s->n[y][x] ? 1 + (int)(2.5 * sqrt(s->n[y][x] / avg)) : 0;
                line[x] = ramp[level > 9 ? 9 : level];
            }
            line[MAP_W] = '\0';
            printf("  |%s|\n", line);
        }
    }
    memset(s, 0, sizeof *s);
}

/* ---- the world ------------------------------------------------------------------- */
#define RESOURCE(w, T, init) ecs_resource((w), #T, sizeof(T), _Alignof(T), (init))

static bool check_reads;

static ecs_world *build(App *a, int threads, int frames, bool verbose) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads, .check_reads = check_reads});
    if (!w) return NULL;
    memset(a, 0, sizeof *a);
    a->frames = frames;
    a->verbose = verbose;
    a->pos = ECS_COMPONENT(w, Position);
    a->vel = ECS_COMPONENT(w, Velocity);
    a->life = ECS_COMPONENT(w, Life);
    a->heat = ECS_COMPONENT(w, Heat);
    a->boid = ECS_TAG(w, Boid);
    a->leader = ECS_TAG(w, Leader);
    a->config = RESOURCE(w, Config, &((Config){.gravity = 220, .drag = 0.4f, .min_speed = 40,
                                               .max_speed = 160, .sparks = SPARKS}));
    a->time = RESOURCE(w, Time, NULL);
    a->wind = RESOURCE(w, Wind, NULL);
    a->grid = RESOURCE(w, Grid, NULL);
    a->leaders = RESOURCE(w, Leaders, NULL);
    a->census = RESOURCE(w, Census, NULL);
    a->rng = RESOURCE(w, Rng, &((Rng){2024}));
    a->screen = RESOURCE(w, Screen, NULL);
    a->q_boids = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(a->boid)}});
    a->q_sparks = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(a->life)}});
    a->q_leaders = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(a->leader)}});

    ecs_stage sim = ecs_stage_add(w, "simulate"), life = ecs_stage_add(w, "lifecycle"),
              present = ecs_stage_add(w, "present");
    const ecs_system_desc systems[] = {
        {.name = "clock", .fn = clock_system, .stage = sim, .writes = {a->time}},
        {.name = "wind", .fn = wind_system, .stage = sim, .reads = {a->time}, .writes = {a->wind}},
        {.name = "clear", .fn = clear_system, .stage = sim, .writes = {a->grid, a->leaders}},
        {.name = "bin", .fn = bin_system, .stage = sim, .writes = {a->grid},
         .terms = {ECS_TERM_R(a->pos), ECS_TERM_R(a->vel), ECS_TERM_R(a->boid)}},
        {.name = "track", .fn = track_system, .stage = sim, .writes = {a->leaders},
         .terms = {ECS_TERM_R(a->pos), ECS_TERM_R(a->leader)}},
        {.name = "lead", .fn = lead_system, .stage = sim, .reads = {a->time},
         .terms = {ECS_TERM_R(a->pos), ECS_TERM_W(a->vel), ECS_TERM_R(a->leader)}},
        {.name = "flock", .fn = flock_system, .stage = sim, .chunk_size = CHUNK,
         .reads = {a->config, a->grid, a->leaders},
         .terms = {ECS_TERM_R(a->pos), ECS_TERM_W(a->vel), ECS_TERM_R(a->boid),
                   ECS_TERM_NOT(a->leader)}},
        {.name = "age", .fn = age_system, .stage = sim, .chunk_size = CHUNK,
         .terms = {ECS_TERM_W(a->life)}},
        {.name = "cool", .fn = cool_system, .stage = sim, .chunk_size = CHUNK,
         .terms = {ECS_TERM_R(a->life), ECS_TERM_W(a->heat)}},
        {.name = "drift", .fn = drift_system, .stage = sim, .chunk_size = CHUNK,
         .reads = {a->config, a->wind},
         .terms = {ECS_TERM_R(a->life), ECS_TERM_W(a->vel)}},
        {.name = "integrate", .fn = integrate_system, .stage = sim, .chunk_size = CHUNK,
         .terms = {ECS_TERM_W(a->pos), ECS_TERM_R(a->vel)}},
        {.name = "bounds", .fn = bounds_system, .stage = sim, .chunk_size = CHUNK,
         .terms = {ECS_TERM_W(a->pos), ECS_TERM_W(a->vel)}},
        {.name = "despawn", .fn = despawn_system, .stage = life, .chunk_size = CHUNK,
         .terms = {ECS_TERM_R(a->life)}},
        {.name = "census", .fn = census_system, .stage = life, .flags = ECS_SYSTEM_EXCLUSIVE,
         .reads = {a->time}, .writes = {a->census, a->rng}},
        {.name = "spawn", .fn = spawn_system, .stage = life, .reads = {a->config, a->time},
         .writes = {a->census, a->rng}},
        {.name = "density", .fn = density_system, .stage = present, .writes = {a->screen},
         .terms = {ECS_TERM_R(a->pos)}},
        {.name = "render", .fn = render_system, .stage = present, .flags = ECS_SYSTEM_MAIN_THREAD,
         .reads = {a->census, a->time}, .writes = {a->screen}},
    };
    for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) {
        ecs_system_desc d = systems[i];
        d.ctx = a;
        ecs_system id = ecs_system_add(w, &d);
        if (!id || id >= sizeof a->desc / sizeof a->desc[0]) {
            fprintf(stderr, "ecs_system_add(%s): %s\n", d.name, ecs_last_error(w));
            ecs_world_free(w);
            return NULL;
        }
        a->desc[id] = d;
    }

    /* the starting population, made in bulk (zeroed) and then filled in */
    Rng seed = {7};
    ecs_id boid_ids[] = {a->pos, a->vel, a->boid}, spark_ids[] = {a->pos, a->vel, a->life, a->heat};
    if (ecs_create_many(w, BOIDS, boid_ids, 3, NULL) || ecs_create_many(w, SPARKS, spark_ids, 4, NULL)) {
        fprintf(stderr, "ecs_create_many: %s\n", ecs_last_error(w));
        ecs_world_free(w);
        return NULL;
    }
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {
        ECS_TERM_W(a->pos), ECS_TERM_W(a->vel), {a->life, ECS_WRITE, ECS_OPTIONAL}}});
    for (ecs_iter it = ecs_query_iter(w, all); ecs_query_next(&it);) {
        Position *p = ECS_FIELD(&it, Position, 0);
        Velocity *v = ECS_FIELD(&it, Velocity, 1);
        Life *l = ECS_FIELD(&it, Life, 2);
        for (int i = 0; i < it.count; i++) {
            p[i] = (Position){SIZE * rng_float(&seed), SIZE * rng_float(&seed)};
            v[i] = (Velocity){200 * rng_float(&seed) - 100, 200 * rng_float(&seed) - 100};
            if (l) l[i] = (Life){2.5f * rng_float(&seed), 2.5f};   /* spread the first deaths */
        }
    }
    ecs_query_free(all);
    for (int i = 0; i < LEADERS; i++)
        ecs_add(w, nth_boid(w, a->q_boids, (size_t)i * (BOIDS / LEADERS)), a->leader);
    Census *c = (Census *)ecs_resource_get(w, a->census);
    c->boids = BOIDS;
    c->sparks = SPARKS;
    return w;
}

/* ---- looking at it --------------------------------------------------------------- */
/* Each stage's systems in registration order, each with the systems of its
   stage that must finish right before it starts (the rest follows from those). */
static void print_schedule(ecs_world *w, const App *a) {
    uint32_t n = ecs_system_count(w);
    for (ecs_stage st = 0; ecs_stage_name(w, st); st++) {
        bool any = false;
        for (ecs_system s = 1; s <= n; s++) {
            if (a->desc[s].stage != st) continue;
            if (!any) printf("  stage \"%s\"\n", ecs_stage_name(w, st));
            any = true;
            const ecs_system_desc *d = &a->desc[s];
            char flags[32] = "";
            if (d->flags & ECS_SYSTEM_EXCLUSIVE) snprintf(flags, sizeof flags, "exclusive");
            else if (d->flags & ECS_SYSTEM_MAIN_THREAD) snprintf(flags, sizeof flags, "main thread");
            else if (d->chunk_size) snprintf(flags, sizeof flags, "chunks of %d", d->chunk_size);
            char line[256];
            int len = snprintf(line, sizeof line, "    %-10s %-14s", ecs_system_name(w, s), flags);
            const char *sep = " after ";
            for (ecs_system p = 1; p <= n; p++) {
                if (a->desc[p].stage != st || !ecs_system_precedes(w, p, s)) continue;
                bool direct = true;
                for (ecs_system q = 1; q <= n && direct; q++)
                    if (a->desc[q].stage == st && ecs_system_precedes(w, p, q) && ecs_system_precedes(w, q, s))
                        direct = false;
                if (direct && len < (int)sizeof line)
                    len += snprintf(line + len, sizeof line - (size_t)len, "%s%s", sep, ecs_system_name(w, p));
                if (direct) sep = ", ";
            }
            if (len >= (int)sizeof line) len = (int)sizeof line - 1;   /* truncated */
            while (len > 0 && line[len - 1] == ' ') line[--len] = '\0';
            printf("%s\n", line);
        }
    }
}

static double now_s(void) {
#ifdef _WIN32   /* msvcrt has no timespec_get, and its clock() is wall time */
    return (double)clock() / CLOCKS_PER_SEC;
#else
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
}

/* FNV-1a over every entity's handle, tags and component bytes, in query order. */
static uint64_t world_hash(ecs_world *w, const App *a) {
    uint64_t h = 0xcbf29ce484222325u;
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {
        ECS_TERM_OPT(a->pos), ECS_TERM_OPT(a->vel),
        ECS_TERM_OPT(a->life), ECS_TERM_OPT(a->heat)}});
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++) {
            unsigned char tags = (unsigned char)(ecs_has(w, it.entities[i], a->boid) |
                                                 ecs_has(w, it.entities[i], a->leader) << 1);
            const void *parts[] = {&it.entities[i], &tags, NULL, NULL, NULL, NULL};
            size_t sizes[] = {sizeof(ecs_entity), 1, sizeof(Position), sizeof(Velocity), sizeof(Life),
                              sizeof(Heat)};
            for (int t = 0; t < 4; t++) {
                const unsigned char *f = (const unsigned char *)ecs_field(&it, t);
                parts[2 + t] = f ? f + (size_t)i * sizes[2 + t] : NULL;
            }
            for (int k = 0; k < 6; k++)
                for (size_t b = 0; parts[k] && b < sizes[k]; b++)
                    h = (h ^ ((const unsigned char *)parts[k])[b]) * 0x100000001b3u;
        }
    ecs_query_free(q);
    return h;
}

/* Runs the frames; returns the wall time in seconds (negative on failure).
   Traces frames [trace_from, trace_from + 4) when trace_from >= 0. Sums the
   work and wall time of the timed frames (every 8th, at most one per 50 ms;
   every traced one) after the first few into *work_us, *wall_us and counts
   them in *timed. */
static double run(ecs_world *w, int frames, int trace_from, double *work_us, double *wall_us, int *timed) {
    double t0 = now_s();
    uint64_t seen = 0;
    *work_us = *wall_us = 0;
    *timed = 0;
    for (int f = 0; f < frames; f++) {
        if (f == trace_from) ecs_trace_enable(w, true);
        if (f == trace_from + 4) ecs_trace_enable(w, false);
        ecs_result r = ecs_progress(w, DT);
        if (r) { fprintf(stderr, "ecs_progress: %s\n", ecs_last_error(w)); return -1; }
        ecs_frame_stats fs = {0};
        ecs_frame_stats_get(w, &fs);
        if (fs.timed_frame != seen && f >= 8) { *work_us += fs.work_us; *wall_us += fs.wall_us; ++*timed; }
        seen = fs.timed_frame;
    }
    ecs_trace_enable(w, false);
    return now_s() - t0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* `make bench`: what the hash trace (ecs_hash_trace_enable) costs a frame.
   Two worlds run alternately, five frames at a time, one with the trace on;
   the ratio is the median of the blocks' ratios, and both must end equal. */
static int hash_trace_cost(int frames) {
    App a, b;
    ecs_world *off = build(&a, 0, frames, false), *on = build(&b, 0, frames, false);
    if (!off || !on) return 1;
    ecs_hash_trace_enable(on, true);
    enum { BLOCK = 5 };
    int blocks = frames / BLOCK, entries = 0;
    double *ratio = (double *)malloc(sizeof(double) * (size_t)(blocks > 0 ? blocks : 1)), sum_off = 0, sum_on = 0;
    for (int k = 0; ratio && k < blocks; k++) {
        double t[2];
        for (int side = 0; side < 2; side++) {
            ecs_world *w = side ? on : off;
            double t0 = now_s();
            for (int f = 0; f < BLOCK; f++)
                if (ecs_progress(w, DT)) { fprintf(stderr, "ecs_progress: %s\n", ecs_last_error(w)); return 1; }
            t[side] = now_s() - t0;
        }
        ratio[k] = t[1] / t[0];
        sum_off += t[0];
        sum_on += t[1];
    }
    entries = ecs_hash_trace(on, NULL);
    qsort(ratio, (size_t)blocks, sizeof *ratio, cmp_double);
    double r = blocks ? ratio[blocks / 2] : 0;
    bool same = world_hash(off, &a) == world_hash(on, &b);
    printf("hash trace (the showcase, %d frames on %d threads, %d entries a frame): %.2f ms a frame off, "
           "%.2f ms on: %.2fx (target <= 1.3) %s; final states %s\n", blocks * BLOCK, ecs_thread_count(on), entries,
           sum_off * 1000 / (blocks * BLOCK), sum_on * 1000 / (blocks * BLOCK), r, r <= 1.3 ? "ok" : "MISS",
           same ? "identical" : "DIFFERENT");
    free(ratio);
    ecs_world_free(off);
    ecs_world_free(on);
    return same ? 0 : 1;
}

int main(int argc, char **argv) {
    int frames = argc > 1 ? atoi(argv[1]) : 300;
    if (frames < 1) frames = 300;
    if (argc > 2 && !strcmp(argv[2], "--hash-trace")) return hash_trace_cost(frames);
    check_reads = argc > 2 && !strcmp(argv[2], "--check-reads");
    App a;
    ecs_world *w = build(&a, 0, frames, true);
    if (!w) return 1;
    printf("showcase: %d boids, %d sparks, %u systems, %d frames on %d threads\n\n", BOIDS, SPARKS,
           (unsigned)ecs_system_count(w), frames, ecs_thread_count(w));

    ecs_report report;
    ecs_result r = ecs_validate(w, &report);
    printf("validation: ");
    ecs_report_print(&report, stdout);
    if (r) { ecs_world_free(w); return 1; }
    printf("\nschedule (inferred from reads and writes, registration order between conflicts):\n");
    print_schedule(w, &a);

    FILE *f = fopen("graph.dot", "w");
    if (!f || ecs_write_dot(w, f) || fclose(f)) { perror("graph.dot"); ecs_world_free(w); return 1; }

    printf("\nrunning on %d threads:\n", ecs_thread_count(w));
    int timed;
    double work_us, wall_us, wall_a = run(w, frames, frames / 2, &work_us, &wall_us, &timed);
    if (wall_a < 0) { ecs_world_free(w); return 1; }
    f = fopen("trace.json", "w");
    if (!f || ecs_write_trace(w, f) || fclose(f)) { perror("trace.json"); ecs_world_free(w); return 1; }

    printf("\nper system (%d threads; work summed over chunks):\n", ecs_thread_count(w));
    printf("    %-10s %-9s %6s %9s %7s\n", "system", "stage", "runs", "avg us", "chunks");
    for (ecs_system s = 1; s <= ecs_system_count(w); s++) {
        ecs_system_stats st;
        ecs_system_stats_get(w, s, &st);
        printf("    %-10s %-9s %6llu %9.1f %7u\n", ecs_system_name(w, s), ecs_stage_name(w, a.desc[s].stage),
               (unsigned long long)st.runs, st.avg_us, (unsigned)st.chunks);
    }
    ecs_frame_stats fs = {0};
    ecs_frame_stats_get(w, &fs);
    ecs_sim_result sim;
    if (timed)
        printf("\na frame (mean of %d timed frames): %.2f ms of work in %.2f ms wall: parallelism %.2f "
               "(critical path %.2f ms)\n", timed, work_us / timed / 1000, wall_us / timed / 1000,
               work_us / wall_us, fs.critical_path_us / 1000);
    if (!ecs_schedule_simulate(w, ecs_thread_count(w), NULL, &sim))
        printf("simulated on %d threads: %.2f ms a frame (lower bound %.2f ms; one thread %.2f ms)\n",
               ecs_thread_count(w), sim.makespan / 1000, sim.lower_bound / 1000, sim.total_work / 1000);
    uint64_t hash_a = world_hash(w, &a);
    size_t count_a = ecs_count(w);
    int threads_a = ecs_thread_count(w);
    ecs_world_free(w);

    w = build(&a, 1, frames, false);
    if (!w) return 1;
    double wall_b = run(w, frames, -1, &work_us, &wall_us, &timed);
    if (wall_b < 0) { ecs_world_free(w); return 1; }
    uint64_t hash_b = world_hash(w, &a);
    size_t count_b = ecs_count(w);
    ecs_world_free(w);

    printf("\n%d frames: %.2f s on %d threads, %.2f s on 1 thread: speedup %.2fx\n", frames, wall_a,
           threads_a, wall_b, wall_b / wall_a);
    printf("final state: %zu entities, hash %016llx (%d threads) vs %zu entities, hash %016llx (1 thread): %s\n",
           count_a, (unsigned long long)hash_a, threads_a, count_b, (unsigned long long)hash_b,
           hash_a == hash_b && count_a == count_b ? "identical" : "DIFFERENT");
    printf("\nwrote trace.json (frames %d-%d): open https://ui.perfetto.dev -> Open trace file\n",
           frames / 2, frames / 2 + 3 < frames ? frames / 2 + 3 : frames - 1);
    printf("wrote graph.dot: dot -Tsvg graph.dot -o graph.svg\n");
    return hash_a == hash_b && count_a == count_b ? 0 : 1;
}
