/* bench.c - ecs.h against plain arrays, in one process.

   Each workload runs the same work twice: through ecs.h and through plain C
   arrays (the baseline), with samples interleaved (baseline, ecs, ecs,
   baseline, ...) so machine noise hits both sides alike. A row reports the
   median of each side in ns per op, their ratio, and the workload's target:
   a ratio to the baseline for iteration, an absolute ns/op for structural
   changes. Values come from a fixed seed, and both sides must end with the
   same checksum, else the run fails.

   usage: build/bench [--quick]    --quick takes 3 samples per workload
   exit status: 0 when every result checks out (missed targets included),
   1 when ecs.h computed something wrong or a call failed. */
#define _POSIX_C_SOURCE 200809L
#define ECS_IMPLEMENTATION
#include "../ecs.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;
typedef struct { int thingy; double dingy; bool mingy; unsigned numgy; } Data;

/* ---- harness ------------------------------------------------------------- */
static bool g_quick;
static bool g_wrong;                       /* a checksum or a call failed */
static volatile double g_sink;             /* checksums land here: no work is dead */
static volatile float g_dt = 1.0f / 60.0f; /* read per sample: no constant folding */

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "bench: %s\n", what);
    exit(1);
}
#define NEED(cond, what) do { if (!(cond)) die(what); } while (0)

/* Flushes pending stores and keeps the compiler from merging or moving work
   across it (e.g. collapsing repeated passes over the same array). Both sides
   call it at the same points. */
static inline void clobber(void) {
#if defined(__GNUC__)
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* 64-byte aligned, as ecs.h aligns its columns. */
static void *alloc64(size_t bytes) {
    void *p = aligned_alloc(64, bytes ? (bytes + 63) & ~(size_t)63 : 64);
    NEED(p, "out of memory");
    return p;
}

static uint64_t g_rng;
static void rng_seed(uint64_t s) { g_rng = s; }
static float rng_float(float lo, float hi) {  /* splitmix64 */
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * (float)((double)(z >> 40) / (double)(1u << 24));
}

static int reps(int full) { return g_quick ? 3 : full; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One timed sample of one side; returns the timed ns (setup excluded). */
typedef double (*sample_fn)(void *ctx);

#define MAX_REPS 256
/* Runs n interleaved samples of both sides on ctx; medians in ns per op. */
static void run_pair(int n, sample_fn base, sample_fn ecs, void *ctx, double ops,
                     double *base_ns, double *ecs_ns) {
    double b[MAX_REPS], e[MAX_REPS];
    NEED(n > 0 && n <= MAX_REPS, "bad sample count");
    for (int r = 0; r < n; r++) {
        if (r & 1) { e[r] = ecs(ctx); b[r] = base(ctx); }
        else       { b[r] = base(ctx); e[r] = ecs(ctx); }
    }
    *base_ns = median(b, n) / ops;
    *ecs_ns = median(e, n) / ops;
}

/* Marks the run wrong when the two sides disagree. */
static void check(bool ok, const char *bench, const char *what) {
    if (!ok) {
        fprintf(stderr, "bench: %s: %s\n", bench, what);
        g_wrong = true;
    }
}
static bool same_sum(double a, double b) {
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-9;
}

typedef struct bench_row {
    const char *name;
    double ecs_ns, base_ns;  /* median ns per op */
    double target;           /* max ecs/base ratio, or max ecs ns/op */
    bool target_is_ratio;
} bench_row;

static bool row_ok(const bench_row *r) {
    return r->target_is_ratio ? r->ecs_ns <= r->target * r->base_ns : r->ecs_ns <= r->target;
}

static void print_header(void) {
    printf("%-46s %12s %15s %8s %10s  %s\n", "workload", "ecs.h ns/op", "baseline ns/op",
           "ratio", "target", "ok/MISS");
    printf("%.*s\n", 100, "----------------------------------------------------------------"
                          "----------------------------------------------------------------");
}
static void print_row(const bench_row *r) {
    char target[32];
    if (r->target_is_ratio) snprintf(target, sizeof target, "<= %.2fx", r->target);
    else                    snprintf(target, sizeof target, "<= %.0f ns", r->target);
    printf("%-46s %12.3f %15.3f %7.3fx %10s  %s\n", r->name, r->ecs_ns, r->base_ns,
           r->ecs_ns / r->base_ns, target, row_ok(r) ? "ok" : "MISS");
    fflush(stdout);
}

/* A new world with Position, Velocity and Data registered. */
typedef struct ids { ecs_id pos, vel, data; } ids;
static ecs_world *world_new(ids *id) {
    ecs_world *w = ecs_world_new(NULL);
    NEED(w, "ecs_world_new failed");
    id->pos = ECS_COMPONENT(w, Position);
    id->vel = ECS_COMPONENT(w, Velocity);
    id->data = ECS_COMPONENT(w, Data);
    NEED(id->pos && id->vel && id->data, "ECS_COMPONENT failed");
    return w;
}

/* ---- iteration: the same kernels on both sides --------------------------- */
/* Both sides call the very same machine code for the loop body: inlined, the
   compiler would generate (and align) a copy per call site, and copies of one
   loop were seen to differ by 10-25% here. Columns of different components
   never alias, nor do the baseline arrays. */
#if defined(__GNUC__)
#  define KERNEL __attribute__((noinline)) static void
#else
#  define KERNEL static void
#endif
KERNEL kernel_pv(Position *restrict p, const Velocity *restrict v, int n, float dt) {
    for (int i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
    }
}
KERNEL kernel_pvd(Position *restrict p, Velocity *restrict v, Data *restrict d, int n,
                  float dt) {
    for (int i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
        v[i].y -= 9.81f * dt;
        d[i].thingy += 1;
        d[i].dingy += dt;
        d[i].mingy = !d[i].mingy;
        d[i].numgy += 1;
    }
}
KERNEL kernel_data(Data *restrict d, int n) {
    for (int i = 0; i < n; i++) {
        d[i].thingy += 1;
        d[i].dingy += (double)d[i].thingy * 0.5;
        d[i].mingy = !d[i].mingy;
        d[i].numgy += (unsigned)d[i].mingy;
    }
}

static double sum_pvd(const Position *p, const Velocity *v, const Data *d, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        s += (double)p[i].x + (double)p[i].y;
        if (v) s += (double)v[i].x + (double)v[i].y;
        if (d) s += d[i].thingy + d[i].dingy + d[i].mingy + d[i].numgy;
    }
    return s;
}
static double sum_data(const Data *d, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += d[i].thingy + d[i].dingy + d[i].mingy + d[i].numgy;
    return s;
}

static void random_values(Position *p, Velocity *v, Data *d, int n, uint64_t seed) {
    rng_seed(seed);
    for (int i = 0; i < n; i++) {
        if (p) p[i] = (Position){rng_float(-100, 100), rng_float(-100, 100)};
        if (v) v[i] = (Velocity){rng_float(-10, 10), rng_float(-10, 10)};
        if (d) d[i] = (Data){(int)rng_float(0, 1000), rng_float(-1, 1), rng_float(0, 1) < 0.5f,
                             (unsigned)rng_float(0, 1000)};
    }
}

enum { N_ITER = 1000000 };

typedef struct iter_ctx {
    int n;
    Position *p; Velocity *v; Data *d;  /* baseline; d NULL for Position+Velocity */
    ecs_world *w;
    ecs_query *q;                       /* terms: Position, Velocity[, Data] */
    ids id;
} iter_ctx;

/* n entities with the same random values on both sides, in one table. */
static void iter_setup(iter_ctx *c, int n, bool with_data) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->p = alloc64((size_t)n * sizeof *c->p);
    c->v = alloc64((size_t)n * sizeof *c->v);
    c->d = with_data ? alloc64((size_t)n * sizeof *c->d) : NULL;
    random_values(c->p, c->v, c->d, n, 0xEC5BE7C4u);

    c->w = world_new(&c->id);
    ecs_id cids[3] = {c->id.pos, c->id.vel, c->id.data};
    ecs_entity *h = alloc64((size_t)n * sizeof *h);
    NEED(ecs_create_many(c->w, (size_t)n, cids, with_data ? 3 : 2, h) == ECS_OK,
         "ecs_create_many failed");
    for (int i = 0; i < n; i++) {
        NEED(ecs_set(c->w, h[i], c->id.pos, &c->p[i]) == ECS_OK, "ecs_set failed");
        NEED(ecs_set(c->w, h[i], c->id.vel, &c->v[i]) == ECS_OK, "ecs_set failed");
        if (with_data) NEED(ecs_set(c->w, h[i], c->id.data, &c->d[i]) == ECS_OK, "ecs_set failed");
    }
    free(h);
    ecs_query_desc qd = {.terms = {{c->id.pos, ECS_WRITE, ECS_AND},
                                   {c->id.vel, with_data ? ECS_WRITE : ECS_READ, ECS_AND},
                                   {with_data ? c->id.data : 0, ECS_WRITE, ECS_AND}}};
    c->q = ecs_query_new(c->w, &qd);
    NEED(c->q, "ecs_query_new failed");
    NEED(ecs_query_count(c->w, c->q) == (size_t)n, "ecs_query_count is wrong");
}

/* Both sides ran the same passes: their data must match. */
static void iter_check(iter_ctx *c, const char *bench) {
    double base = sum_pvd(c->p, c->v, c->d, c->n), ecs = 0;
    long rows = 0;
    for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);) {
        ecs += sum_pvd(ECS_FIELD(&it, Position, 0), ECS_FIELD(&it, Velocity, 1),
                       c->d ? ECS_FIELD(&it, Data, 2) : NULL, it.count);
        rows += it.count;
    }
    check(rows == c->n, bench, "the query visited the wrong number of rows");
    check(same_sum(base, ecs), bench, "checksums differ");
    g_sink = base + ecs;
}

static void iter_teardown(iter_ctx *c) {
    ecs_query_free(c->q);
    ecs_world_free(c->w);
    free(c->p); free(c->v); free(c->d);
}

static double pv_base(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    kernel_pv(c->p, c->v, c->n, dt);
    clobber();
    return now_ns() - t0;
}
static double pv_ecs(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);)
        kernel_pv(ECS_FIELD(&it, Position, 0), ECS_FIELD(&it, const Velocity, 1), it.count, dt);
    clobber();
    return now_ns() - t0;
}

static bench_row bench_iter_pv(void) {
    bench_row r = {"iterate P+V, 1M entities (per entity)", 0, 0, 1.05, true};
    iter_ctx c;
    iter_setup(&c, N_ITER, false);
    run_pair(reps(251), pv_base, pv_ecs, &c, N_ITER, &r.base_ns, &r.ecs_ns);
    iter_check(&c, r.name);
    iter_teardown(&c);
    return r;
}

static double pvd_base(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    kernel_pvd(c->p, c->v, c->d, c->n, dt);
    clobber();
    return now_ns() - t0;
}
static double pvd_ecs(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);)
        kernel_pvd(ECS_FIELD(&it, Position, 0), ECS_FIELD(&it, Velocity, 1),
                   ECS_FIELD(&it, Data, 2), it.count, dt);
    clobber();
    return now_ns() - t0;
}

static bench_row bench_iter_pvd(void) {
    bench_row r = {"iterate P+V+Data, 1M entities (per entity)", 0, 0, 1.05, true};
    iter_ctx c;
    iter_setup(&c, N_ITER, true);
    run_pair(reps(201), pvd_base, pvd_ecs, &c, N_ITER, &r.base_ns, &r.ecs_ns);
    iter_check(&c, r.name);
    iter_teardown(&c);
    return r;
}

/* ---- fragmented: 26 tags x 20 entities with Data, 26 tables --------------- */
enum { FRAG_TAGS = 26, FRAG_PER_TAG = 20, FRAG_N = FRAG_TAGS * FRAG_PER_TAG,
       FRAG_PASSES = 2000 };  /* passes per sample: the workload is tiny */

typedef struct frag_ctx {
    Data *d;  /* baseline: FRAG_N in one array, in the tables' order */
    ecs_world *w;
    ecs_query *q;  /* terms: Data */
} frag_ctx;

static double frag_base(void *ctx) {
    frag_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < FRAG_PASSES; k++) {
        kernel_data(c->d, FRAG_N);
        clobber();
    }
    return now_ns() - t0;
}
static double frag_ecs(void *ctx) {
    frag_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < FRAG_PASSES; k++) {
        for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);)
            kernel_data(ECS_FIELD(&it, Data, 0), it.count);
        clobber();
    }
    return now_ns() - t0;
}

static bench_row bench_fragmented(void) {
    static const char *const tag_names[FRAG_TAGS] = {
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M",
        "N", "O", "P", "Q", "R", "S", "T", "U", "V", "W", "X", "Y", "Z"};
    bench_row r = {"fragmented: Data in 26 tables x 20 (per entity)", 0, 0, 1.5, true};
    frag_ctx c;
    ids id;
    c.d = alloc64(FRAG_N * sizeof *c.d);
    random_values(NULL, NULL, c.d, FRAG_N, 0xF7A6u);
    c.w = world_new(&id);
    /* created straight into {Data, tag}, so no third table appears */
    for (int t = 0; t < FRAG_TAGS; t++) {
        ecs_id tag = ecs_component(c.w, tag_names[t], 0, 0);
        NEED(tag, "ecs_component (tag) failed");
        ecs_id cids[2] = {id.data, tag};
        ecs_entity h[FRAG_PER_TAG];
        NEED(ecs_create_many(c.w, FRAG_PER_TAG, cids, 2, h) == ECS_OK, "ecs_create_many failed");
        for (int i = 0; i < FRAG_PER_TAG; i++)
            NEED(ecs_set(c.w, h[i], id.data, &c.d[t * FRAG_PER_TAG + i]) == ECS_OK,
                 "ecs_set failed");
    }
    c.q = ecs_query_new(c.w, &(ecs_query_desc){.terms = {{id.data, ECS_WRITE, ECS_AND}}});
    NEED(c.q, "ecs_query_new failed");

    run_pair(reps(101), frag_base, frag_ecs, &c, (double)FRAG_N * FRAG_PASSES, &r.base_ns,
             &r.ecs_ns);

    double ecs = 0;
    int rows = 0, tables = 0;
    for (ecs_iter it = ecs_query_iter(c.w, c.q); ecs_query_next(&it);) {
        ecs += sum_data(ECS_FIELD(&it, Data, 0), it.count);
        rows += it.count;
        tables += it.count > 0;
    }
    check(rows == FRAG_N && tables == FRAG_TAGS, r.name, "the query visited the wrong rows");
    check(same_sum(ecs, sum_data(c.d, FRAG_N)), r.name, "checksums differ");
    g_sink = ecs;
    ecs_query_free(c.q);
    ecs_world_free(c.w);
    free(c.d);
    return r;
}

/* ---- structural changes --------------------------------------------------- */
enum { N_CREATE = 1000000, N_MOVE = 10000, MOVE_PASSES = 10 };

static Position pos_of(size_t i) { return (Position){(float)i, (float)(i & 15)}; }
static Velocity vel_of(size_t i) { return (Velocity){1.0f, (float)(i & 7)}; }

/* The plain-array store: an entity table as a struct of arrays (handles,
   Position, Velocity). Handles are index+1 with a generation above bit 32. */
typedef struct soa {
    uint64_t *ents;
    Position *p;
    Velocity *v;
    size_t n, cap;
} soa;

static void soa_grow(soa *s) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    uint64_t *e = realloc(s->ents, cap * sizeof *e);
    NEED(e, "out of memory");
    s->ents = e;
    Position *p = realloc(s->p, cap * sizeof *p);
    NEED(p, "out of memory");
    s->p = p;
    Velocity *v = realloc(s->v, cap * sizeof *v);
    NEED(v, "out of memory");
    s->v = v;
    s->cap = cap;
}
static void soa_free(soa *s) {
    free(s->ents); free(s->p); free(s->v);
    memset(s, 0, sizeof *s);
}

typedef struct create_ctx {
    ecs_entity *out;  /* N_CREATE handles, reused by every sample */
} create_ctx;

/* Baseline: append to a struct of arrays that starts empty and doubles
   (realloc) as it fills, as the ecs.h world starts empty too. */
static double create_base(void *ctx) {
    (void)ctx;
    soa s = {0};
    double t0 = now_ns();
    for (size_t i = 0; i < N_CREATE; i++) {
        if (s.n == s.cap) soa_grow(&s);
        s.ents[s.n] = ((uint64_t)1 << 32) | (i + 1);
        s.p[s.n] = pos_of(i);
        s.v[s.n] = vel_of(i);
        s.n++;
    }
    clobber();
    double t = now_ns() - t0;
    g_sink = s.p[N_CREATE - 1].x + (double)s.ents[N_CREATE / 2];
    soa_free(&s);
    return t;
}
static double create_ecs(void *ctx) {
    (void)ctx;
    ids id;
    ecs_world *w = world_new(&id);
    bool bad = false;
    double t0 = now_ns();
    for (size_t i = 0; i < N_CREATE; i++) {
        ecs_entity e = ecs_create(w);
        Position p = pos_of(i);
        Velocity v = vel_of(i);
        bad |= e == 0;
        bad |= ecs_set(w, e, id.pos, &p) != ECS_OK;
        bad |= ecs_set(w, e, id.vel, &v) != ECS_OK;
    }
    double t = now_ns() - t0;
    check(!bad && ecs_count(w) == N_CREATE, "create", "ecs_create/ecs_set failed");
    ecs_world_free(w);
    return t;
}

static bench_row bench_create(void) {
    bench_row r = {"create 1M one at a time + set P, V (per entity)", 0, 0, 25, false};
    run_pair(reps(41), create_base, create_ecs, NULL, N_CREATE, &r.base_ns, &r.ecs_ns);
    return r;
}

/* Baseline: allocate the three arrays at their final size, zero the
   components, write the handles and copy them out (ecs.h allocates through a
   realloc-style hook, so it cannot lean on calloc's zero pages either). */
static double bulk_base(void *ctx) {
    create_ctx *c = ctx;
    double t0 = now_ns();
    uint64_t *ents = alloc64(N_CREATE * sizeof *ents);
    Position *p = alloc64(N_CREATE * sizeof *p);
    Velocity *v = alloc64(N_CREATE * sizeof *v);
    memset(p, 0, N_CREATE * sizeof *p);
    memset(v, 0, N_CREATE * sizeof *v);
    for (size_t i = 0; i < N_CREATE; i++) ents[i] = ((uint64_t)1 << 32) | (i + 1);
    memcpy(c->out, ents, N_CREATE * sizeof *ents);
    clobber();
    double t = now_ns() - t0;
    g_sink = p[N_CREATE - 1].x + v[0].y + (double)c->out[N_CREATE - 1];
    free(ents); free(p); free(v);
    return t;
}
static double bulk_ecs(void *ctx) {
    create_ctx *c = ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    double t0 = now_ns();
    ecs_result res = ecs_create_many(w, N_CREATE, cids, 2, c->out);
    double t = now_ns() - t0;
    check(res == ECS_OK && ecs_count(w) == N_CREATE && ecs_has(w, c->out[N_CREATE - 1], id.vel),
          "bulk create", "ecs_create_many failed");
    ecs_world_free(w);
    return t;
}

static bench_row bench_bulk_create(void) {
    bench_row r = {"bulk create 1M with P+V (per entity)", 0, 0, 12, false};
    create_ctx c = {alloc64(N_CREATE * sizeof(ecs_entity))};
    memset(c.out, 0, N_CREATE * sizeof(ecs_entity));
    run_pair(reps(41), bulk_base, bulk_ecs, &c, N_CREATE, &r.base_ns, &r.ecs_ns);
    free(c.out);
    return r;
}

/* Baseline for add/remove: two tables {Position} and {Position, Velocity} as
   arrays, an entity -> (table, row) map, and the archetype move: append to
   the other table, swap-remove from this one. */
typedef struct move_table {
    uint32_t *ents;
    Position *p;
    Velocity *v;  /* NULL in the {Position} table */
    uint32_t n;
} move_table;
typedef struct move_loc { uint32_t table, row; } move_loc;

typedef struct move_ctx {
    move_table t[2];
    move_loc *loc;
    ecs_world *w;
    ecs_entity *h;
    ids id;
} move_ctx;

static void move_swap_remove(move_table *t, move_loc *loc, uint32_t row) {
    uint32_t last = --t->n;
    if (row != last) {
        t->ents[row] = t->ents[last];
        t->p[row] = t->p[last];
        if (t->v) t->v[row] = t->v[last];
        loc[t->ents[row]].row = row;
    }
}
static void move_add_vel(move_ctx *c, uint32_t e) {
    move_loc l = c->loc[e];
    if (l.table == 1) return;
    move_table *from = &c->t[0], *to = &c->t[1];
    uint32_t row = to->n++;
    to->ents[row] = e;
    to->p[row] = from->p[l.row];
    to->v[row] = (Velocity){0, 0};
    c->loc[e] = (move_loc){1, row};
    move_swap_remove(from, c->loc, l.row);
}
static void move_remove_vel(move_ctx *c, uint32_t e) {
    move_loc l = c->loc[e];
    if (l.table == 0) return;
    move_table *from = &c->t[1], *to = &c->t[0];
    uint32_t row = to->n++;
    to->ents[row] = e;
    to->p[row] = from->p[l.row];
    c->loc[e] = (move_loc){0, row};
    move_swap_remove(from, c->loc, l.row);
}

static double move_base(void *ctx) {
    move_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (uint32_t e = 0; e < N_MOVE; e++) {
            move_add_vel(c, e);
            move_remove_vel(c, e);
        }
        clobber();
    }
    return now_ns() - t0;
}
static double move_ecs(void *ctx) {
    move_ctx *c = ctx;
    bool bad = false;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++) {
            bad |= ecs_add(c->w, c->h[i], c->id.vel) != ECS_OK;
            bad |= ecs_remove(c->w, c->h[i], c->id.vel) != ECS_OK;
        }
        clobber();
    }
    double t = now_ns() - t0;
    check(!bad, "add/remove", "ecs_add/ecs_remove failed");
    return t;
}

static bench_row bench_add_remove(void) {
    bench_row r = {"add+remove Velocity, 10k with P (per pair)", 0, 0, 15, false};
    move_ctx c;
    memset(&c, 0, sizeof c);
    for (int t = 0; t < 2; t++) {
        c.t[t].ents = alloc64(N_MOVE * sizeof(uint32_t));
        c.t[t].p = alloc64(N_MOVE * sizeof(Position));
    }
    c.t[1].v = alloc64(N_MOVE * sizeof(Velocity));
    c.loc = alloc64(N_MOVE * sizeof *c.loc);
    for (uint32_t e = 0; e < N_MOVE; e++) {
        c.t[0].ents[e] = e;
        c.t[0].p[e] = pos_of(e);
        c.loc[e] = (move_loc){0, e};
    }
    c.t[0].n = N_MOVE;

    c.w = world_new(&c.id);
    c.h = alloc64(N_MOVE * sizeof *c.h);
    NEED(ecs_create_many(c.w, N_MOVE, &c.id.pos, 1, c.h) == ECS_OK, "ecs_create_many failed");
    for (size_t i = 0; i < N_MOVE; i++) {
        Position p = pos_of(i);
        NEED(ecs_set(c.w, c.h[i], c.id.pos, &p) == ECS_OK, "ecs_set failed");
    }

    run_pair(reps(101), move_base, move_ecs, &c, (double)N_MOVE * MOVE_PASSES, &r.base_ns,
             &r.ecs_ns);

    double base = 0, ecs = 0;
    bool moved_back = c.t[0].n == N_MOVE;
    for (size_t i = 0; i < N_MOVE; i++) {
        const Position *p = ecs_get(c.w, c.h[i], c.id.pos);
        moved_back &= p && !ecs_has(c.w, c.h[i], c.id.vel);
        ecs += p ? (double)p->x + (double)p->y : 0;
        base += (double)c.t[0].p[i].x + (double)c.t[0].p[i].y;
    }
    check(moved_back && ecs_count(c.w) == N_MOVE, r.name, "entities did not keep Position only");
    check(same_sum(base, ecs), r.name, "Position values changed in the moves");
    g_sink = base + ecs;
    ecs_world_free(c.w);
    free(c.h);
    free(c.loc);
    for (int t = 0; t < 2; t++) { free(c.t[t].ents); free(c.t[t].p); free(c.t[t].v); }
    return r;
}

/* Baseline for destroy: the struct of arrays holding N entities, an index ->
   row map and a generation per index; destroying checks the generation,
   swap-removes the row, bumps the generation and pushes the index on a free
   list. */
typedef struct destroy_ctx {
    ecs_entity *h;  /* N_CREATE handles, reused by every sample */
    soa s;
    uint32_t *row, *gen, *free_list;
} destroy_ctx;

static double destroy_base(void *ctx) {
    destroy_ctx *c = ctx;
    soa *s = &c->s;
    if (s->cap < N_CREATE) {
        soa_free(s);
        s->ents = alloc64(N_CREATE * sizeof *s->ents);
        s->p = alloc64(N_CREATE * sizeof *s->p);
        s->v = alloc64(N_CREATE * sizeof *s->v);
        s->cap = N_CREATE;
    }
    for (uint32_t i = 0; i < N_CREATE; i++) {
        s->ents[i] = ((uint64_t)c->gen[i] << 32) | (i + 1);
        s->p[i] = pos_of(i);
        s->v[i] = vel_of(i);
        c->row[i] = i;
        c->h[i] = s->ents[i];
    }
    s->n = N_CREATE;
    uint32_t n_free = 0;
    size_t stale = 0;
    double t0 = now_ns();
    for (size_t i = 0; i < N_CREATE; i++) {
        uint64_t e = c->h[i];
        uint32_t idx = (uint32_t)e - 1;
        if (c->gen[idx] != (uint32_t)(e >> 32)) { stale++; continue; }
        uint32_t row = c->row[idx], last = (uint32_t)--s->n;
        if (row != last) {
            s->ents[row] = s->ents[last];
            s->p[row] = s->p[last];
            s->v[row] = s->v[last];
            c->row[(uint32_t)s->ents[row] - 1] = row;
        }
        c->gen[idx]++;
        c->free_list[n_free++] = idx;
    }
    clobber();
    double t = now_ns() - t0;
    check(stale == 0 && s->n == 0, "destroy", "baseline lost track");
    return t;
}
static double destroy_ecs(void *ctx) {
    destroy_ctx *c = ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    NEED(ecs_create_many(w, N_CREATE, cids, 2, c->h) == ECS_OK, "ecs_create_many failed");
    bool bad = false;
    double t0 = now_ns();
    for (size_t i = 0; i < N_CREATE; i++) bad |= ecs_destroy(w, c->h[i]) != ECS_OK;
    double t = now_ns() - t0;
    check(!bad && ecs_count(w) == 0, "destroy", "ecs_destroy failed");
    ecs_world_free(w);
    return t;
}

static bench_row bench_destroy(void) {
    bench_row r = {"destroy 1M one at a time (per entity)", 0, 0, 9, false};
    destroy_ctx c;
    memset(&c, 0, sizeof c);
    c.h = alloc64(N_CREATE * sizeof *c.h);
    c.row = alloc64(N_CREATE * sizeof *c.row);
    c.gen = alloc64(N_CREATE * sizeof *c.gen);
    c.free_list = alloc64(N_CREATE * sizeof *c.free_list);
    for (size_t i = 0; i < N_CREATE; i++) c.gen[i] = 1;
    memset(c.free_list, 0, N_CREATE * sizeof *c.free_list);
    run_pair(reps(41), destroy_base, destroy_ecs, &c, N_CREATE, &r.base_ns, &r.ecs_ns);
    g_sink = (double)c.free_list[N_CREATE - 1];
    soa_free(&c.s);
    free(c.h); free(c.row); free(c.gen); free(c.free_list);
    return r;
}

/* ---- the list ------------------------------------------------------------- */
typedef bench_row (*bench_fn)(void);
static const bench_fn g_benches[] = {
    bench_iter_pv,
    bench_iter_pvd,
    bench_fragmented,
    bench_create,
    bench_bulk_create,
    bench_add_remove,
    bench_destroy,
};

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) g_quick = true;
        else { fprintf(stderr, "usage: %s [--quick]\n", argv[0]); return 2; }
    }
    int n = (int)(sizeof g_benches / sizeof g_benches[0]), met = 0;
    double t0 = now_ns();
    printf("ecs.h bench: medians of interleaved samples (%s), ratio = ecs.h / baseline\n",
           g_quick ? "--quick: 3 each" : "41-251 each");
    print_header();
    for (int i = 0; i < n; i++) {
        bench_row r = g_benches[i]();
        print_row(&r);
        met += row_ok(&r);
    }
    printf("%d/%d targets met (%.1f s)%s\n", met, n, (now_ns() - t0) / 1e9,
           g_wrong ? "; RESULTS WRONG, see stderr" : "");
    return g_wrong ? 1 : 0;
}
