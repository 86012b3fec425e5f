/* scheduler tests: ecs_progress on 1..8 threads. Determinism of a whole
   simulation across thread counts, chunk coverage, no conflicting overlap
   (random graphs), MAIN_THREAD and EXCLUSIVE systems, world lifecycle with
   workers, the rules for calls made from inside systems, command order and
   dropped commands, stats, the trace and the schedule simulator.

   Systems report failures into per-thread slots (st_slots, indexed by
   it->thread) that the test reads after ecs_progress returns: nothing the
   test shares across threads needs a lock except the overlap and EXCLUSIVE
   trackers, which are C11 atomics (hidden from helgrind, which does not
   understand them). Sizes, frames and spins shrink with --scale, for
   helgrind. */
#include "test.h"

/* Threads a world asked for n really gets (1 in an ECS_NO_THREADS build). */
#ifdef ECS_NO_THREADS
#define SCHED_THREADS(n) 1
#else
#define SCHED_THREADS(n) (n)
#endif
#include <limits.h>
#include <stdatomic.h>
#include <time.h>


/* ---- helpers ------------------------------------------------------------------ */
static uint64_t mix64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}
static ecs_world *sched_world(int threads, ecs_order order) {
    ecs_world_desc d = {.threads = threads, .order = order};
    return ecs_world_new(&d);
}
static bool contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

static const int thread_counts[4] = {1, 2, 3, 8};

/* ---- per-thread report slots ------------------------------------------------------ */
#define ST_THREADS 8
#define ST_SYS 48
typedef struct st_slot {
    long fails;               /* failed TCHECKs on this thread */
    int line;                 /* the first one */
    const char *what;
    long sys_calls[ST_SYS];   /* per system handle */
    long sys_rows[ST_SYS];
    unsigned stages;          /* bit per stage this thread ran a system of */
    char pad[64];
} st_slot;
static st_slot st_slots[ST_THREADS + 1];   /* the last: it->thread out of range */
static const void *st_main;                     /* the thread that calls ecs_progress */

static void st_reset(void) {
    memset(st_slots, 0, sizeof st_slots);
    st_main = test_thread_id();
}
static st_slot *st_of(const ecs_iter *it) {
    return &st_slots[it->thread >= 0 && it->thread < ST_THREADS ? it->thread : ST_THREADS];
}
/* CHECK for code inside systems: counted in the thread's slot. */
#define TCHECK(it, cond) do { if (!(cond)) { st_slot *s_ = st_of(it); \
    if (!s_->fails++) { s_->line = __LINE__; s_->what = #cond; } } } while (0)

/* Turns the slots' failures into test failures. */
#define ST_REPORT(label) st_report(label, __LINE__)
static void st_report(const char *label, int line) {
    for (int t = 0; t <= ST_THREADS; t++) {
        const st_slot *s = &st_slots[t];
        if (!s->fails) continue;
        test_g.checks_failed++;
        fprintf(stderr, "  %s:%d: in a system (%s, thread %d%s): TCHECK(%s) failed %ld time(s); "
                "reported at line %d\n", __FILE__, s->line, label, t,
                t == ST_THREADS ? ": out of range" : "", s->what, s->fails, line);
    }
}
static long st_calls(ecs_system s) {
    long n = 0;
    for (int t = 0; t <= ST_THREADS; t++) n += st_slots[t].sys_calls[s];
    return n;
}
static long st_rows(ecs_system s) {
    long n = 0;
    for (int t = 0; t <= ST_THREADS; t++) n += st_slots[t].sys_rows[s];
    return n;
}
/* Threads that ran at least one system of `stage`. */
static int st_threads_in_stage(int stage) {
    int n = 0;
    for (int t = 0; t < ST_THREADS; t++) n += (st_slots[t].stages >> stage) & 1;
    return n;
}

/* A generic system: counts calls and rows per system, checks the batch
   size against the chunk size, spins. */
typedef struct gen_ctx { double spin; int chunk; int stage; } gen_ctx;
static void gen_fn(ecs_iter *it) {
    const gen_ctx *g = (const gen_ctx *)it->ctx;
    st_slot *s = st_of(it);
    TCHECK(it, it->thread >= 0 && it->thread < ecs_thread_count(it->world));
    TCHECK(it, it->system > 0 && it->system < ST_SYS);
    if (it->system < ST_SYS) { s->sys_calls[it->system]++; s->sys_rows[it->system] += it->count; }
    if (!g) return;
    s->stages |= 1u << g->stage;
    if (g->chunk > 0) TCHECK(it, it->count > 0 && it->count <= g->chunk);
    test_spin_us(g->spin);
}

/* ---- 1. determinism ----------------------------------------------------------------- */
/* A small simulation: movement, ageing, damage; spawning through
   ecs_cmd_create + ecs_cmd_set (some spawned entities destroyed or changed
   while still pending), despawning through ecs_cmd_destroy (some targets
   destroyed twice: by two systems, or by every chunk of one), and an
   EXCLUSIVE system that creates and destroys directly. The world hash after
   the run must not depend on the thread count. */
typedef struct { int32_t x, y; } dpos;
typedef struct { int32_t dx, dy; } dvel;
typedef struct { int32_t hp; } dhp;
typedef struct { uint32_t age, life; } dage;
typedef struct { uint64_t victim; uint32_t frame, pop, cap, pad; } dstate;

typedef struct det_ctx {
    ecs_id pos, vel, hp, age, marked, state;
    double spin;
    int stage_of[ST_SYS];      /* per system handle */
    ecs_entity ring[8];        /* the exclusive system's entities (thread 0 only) */
    int ring_n;
    long excl_errors, excl_runs;
} det_ctx;

static void det_begin(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    st_slot *s = st_of(it);
    if (it->system < ST_SYS) s->stages |= 1u << c->stage_of[it->system];
    test_spin_us(c->spin);
}
static void det_move(ecs_iter *it) {
    dpos *p = ECS_FIELD(it, dpos, 0);
    const dvel *v = ECS_FIELD(it, dvel, 1);
    det_begin(it);
    for (int i = 0; i < it->count; i++) {
        p[i].x = ((p[i].x + v[i].dx) % 1000 + 1000) % 1000;
        p[i].y = ((p[i].y + v[i].dy) % 1000 + 1000) % 1000;
    }
}
static void det_grow(ecs_iter *it) {
    dage *a = ECS_FIELD(it, dage, 0);
    det_begin(it);
    for (int i = 0; i < it->count; i++) a[i].age++;
}
static void det_steer(ecs_iter *it) {
    dvel *v = ECS_FIELD(it, dvel, 0);
    const dhp *h = ECS_FIELD(it, dhp, 1);
    det_begin(it);
    for (int i = 0; i < it->count; i++) {
        int32_t hp = h[i].hp < 0 ? -h[i].hp : h[i].hp;
        v[i].dx = hp % 7 - 3;
        v[i].dy = (hp / 7) % 7 - 3;
    }
}
static void det_hurt(ecs_iter *it) {
    dhp *h = ECS_FIELD(it, dhp, 0);
    const dpos *p = ECS_FIELD(it, dpos, 1);
    det_begin(it);
    for (int i = 0; i < it->count; i++) h[i].hp -= (p[i].x + p[i].y) % 3;
}
static void det_spawn(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    const dpos *p = ECS_FIELD(it, dpos, 0);
    const dage *a = ECS_FIELD(it, dage, 1);
    const dstate *st = (const dstate *)ecs_resource_get(it->world, c->state);
    det_begin(it);
    TCHECK(it, st != NULL);
    if (!st) return;
    for (int i = 0; i < it->count; i++) {
        uint64_t m = mix64(it->entities[i] ^ a[i].age);
        if (a[i].age % 23 != 5 || st->pop >= st->cap || !(m & 1)) continue;
        ecs_entity k = ecs_cmd_create(it->commands);
        TCHECK(it, k != 0);
        TCHECK(it, ecs_cmd_set(it->commands, k, c->pos, &(dpos){p[i].x, (p[i].y + 1) % 1000}) == ECS_OK);
        TCHECK(it, ecs_cmd_set(it->commands, k, c->age, &(dage){0, 30 + (uint32_t)(m >> 8) % 60}) == ECS_OK);
        if (m & 2) TCHECK(it, ecs_cmd_set(it->commands, k, c->vel, &(dvel){1, -1}) == ECS_OK);
        if (m & 4) TCHECK(it, ecs_cmd_set(it->commands, k, c->hp, &(dhp){80}) == ECS_OK);
        if ((m >> 16) % 5 == 1) TCHECK(it, ecs_cmd_remove(it->commands, k, c->pos) == ECS_OK);
        if ((m >> 24) % 7 == 0) {   /* dies before it is born: the set is dropped */
            TCHECK(it, ecs_cmd_destroy(it->commands, k) == ECS_OK);
            TCHECK(it, ecs_cmd_set(it->commands, k, c->hp, &(dhp){1}) == ECS_OK);
        }
    }
}
static void det_reap(ecs_iter *it) {
    const dage *a = ECS_FIELD(it, dage, 0);
    det_begin(it);
    for (int i = 0; i < it->count; i++)
        if (a[i].age >= a[i].life) TCHECK(it, ecs_cmd_destroy(it->commands, it->entities[i]) == ECS_OK);
}
static void det_reap2(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    const dpos *p = ECS_FIELD(it, dpos, 0);
    const dstate *st = (const dstate *)ecs_resource_get(it->world, c->state);
    det_begin(it);
    TCHECK(it, st != NULL);
    if (!st) return;
    for (int i = 0; i < it->count; i++)
        if (((p[i].x ^ p[i].y) & 63) == 0) TCHECK(it, ecs_cmd_destroy(it->commands, it->entities[i]) == ECS_OK);
    if (st->frame % 8 == 0 && st->victim)   /* every chunk: all but the first are dropped */
        TCHECK(it, ecs_cmd_destroy(it->commands, st->victim) == ECS_OK);
}
static void det_mark(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    const dhp *h = ECS_FIELD(it, dhp, 0);
    det_begin(it);
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        if (h[i].hp < 0) TCHECK(it, ecs_cmd_destroy(it->commands, e) == ECS_OK);   /* the set below drops */
        if (h[i].hp < 40) {
            TCHECK(it, ecs_cmd_add(it->commands, e, c->marked) == ECS_OK);
            TCHECK(it, ecs_cmd_set(it->commands, e, c->hp, &(dhp){h[i].hp + 25}) == ECS_OK);
        }
    }
}
static void det_pre_excl(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    dhp *h = ECS_FIELD(it, dhp, 1);
    det_begin(it);
    for (int i = 0; i < it->count; i++) {
        h[i].hp += 2;
        if (h[i].hp > 60) TCHECK(it, ecs_cmd_remove(it->commands, it->entities[i], c->marked) == ECS_OK);
    }
}
static void det_excl(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    ecs_world *w = it->world;
    det_begin(it);
    TCHECK(it, it->thread == 0);
    c->excl_runs++;
    dstate *st = (dstate *)ecs_resource_get(w, c->state);
    if (!st) { c->excl_errors++; return; }
    st->frame++;
    st->pop = (uint32_t)ecs_count(w);
    for (int k = 0; k < 3; k++) {
        ecs_entity e = ecs_create(w);
        if (!e) { c->excl_errors++; continue; }
        if (ecs_set(w, e, c->pos, &(dpos){k * 100, (int32_t)(st->frame % 1000)}) != ECS_OK) c->excl_errors++;
        if (ecs_set(w, e, c->age, &(dage){0, 25}) != ECS_OK) c->excl_errors++;
        if (ecs_add(w, e, c->vel) != ECS_OK) c->excl_errors++;
        if (c->ring_n == 8) {   /* the oldest goes, directly */
            if (ecs_is_alive(w, c->ring[0]) && ecs_destroy(w, c->ring[0]) != ECS_OK) c->excl_errors++;
            memmove(c->ring, c->ring + 1, 7 * sizeof *c->ring);
            c->ring_n--;
        }
        c->ring[c->ring_n++] = e;
    }
    if (ecs_is_alive(w, c->ring[0]) && ecs_remove(w, c->ring[0], c->vel) != ECS_OK) c->excl_errors++;
    st->victim = c->ring[c->ring_n / 2];
}
static void det_post_excl(ecs_iter *it) {
    det_ctx *c = (det_ctx *)it->ctx;
    const dage *a = ECS_FIELD(it, dage, 1);
    det_begin(it);
    for (int i = 0; i < it->count; i++)
        if ((mix64(it->entities[i]) & 3) == 0)
            TCHECK(it, ecs_cmd_set(it->commands, it->entities[i], c->hp, &(dhp){60 + (int32_t)a[i].age}) == ECS_OK);
}

typedef struct det_result {
    unsigned long long hash;
    size_t count, dropped, peak;
    long excl_errors, excl_runs;
    int parallel_stages;       /* stages that ran systems on 2+ threads */
    int ok;
} det_result;

static det_result det_run(int threads, long frames, int n0, unsigned long long seed) {
    det_result res;
    memset(&res, 0, sizeof res);
    st_reset();
    ecs_world *w = sched_world(threads, ECS_ORDER_INSERTION);
    if (!w) return res;
    det_ctx *c = (det_ctx *)calloc(1, sizeof *c);
    if (!c) { ecs_world_free(w); return res; }
    c->spin = test_spin_len(1.0);
    c->pos = ECS_COMPONENT(w, dpos);
    c->vel = ECS_COMPONENT(w, dvel);
    c->hp = ECS_COMPONENT(w, dhp);
    c->age = ECS_COMPONENT(w, dage);
    c->marked = ecs_component(w, "Marked", 0, 0);
    dstate init = {0, 0, 0, (uint32_t)(2 * n0), 0};
    c->state = ecs_resource(w, "DState", sizeof(dstate), 0, &init);
    ecs_stage life = ecs_stage_add(w, "life"), sync = ecs_stage_add(w, "sync");

    unsigned long long r = seed;
    for (int i = 0; i < n0; i++) {
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, c->pos, &(dpos){(int32_t)test_below(&r, 1000), (int32_t)test_below(&r, 1000)});
        if (i % 4 != 3)
            ecs_set(w, e, c->vel, &(dvel){(int32_t)test_below(&r, 7) - 3, (int32_t)test_below(&r, 7) - 3});
        ecs_set(w, e, c->age, &(dage){test_below(&r, 40), 40 + test_below(&r, 80)});
        if (i % 3 != 0) ecs_set(w, e, c->hp, &(dhp){50 + (int32_t)test_below(&r, 100)});
        if (i % 11 == 0) ecs_add(w, e, c->marked);
    }
    const ecs_access W = ECS_WRITE, R = ECS_READ;
    struct { ecs_system_desc d; int stage; } sys[] = {
        {{.name = "Move", .fn = det_move, .chunk_size = 7,
          .terms = {{c->pos, W, ECS_AND}, {c->vel, R, ECS_AND}}}, 0},
        {{.name = "Grow", .fn = det_grow, .chunk_size = 13, .terms = {{c->age, W, ECS_AND}}}, 0},
        {{.name = "Steer", .fn = det_steer, .terms = {{c->vel, W, ECS_AND}, {c->hp, R, ECS_AND}}}, 0},
        {{.name = "Hurt", .fn = det_hurt, .chunk_size = 11,
          .terms = {{c->hp, W, ECS_AND}, {c->pos, R, ECS_AND}}}, 0},
        {{.name = "Spawn", .fn = det_spawn, .chunk_size = 5, .reads = {c->state},
          .terms = {{c->pos, R, ECS_AND}, {c->age, R, ECS_AND}}}, 1},
        {{.name = "Reap", .fn = det_reap, .chunk_size = 9, .terms = {{c->age, R, ECS_AND}}}, 1},
        {{.name = "Reap2", .fn = det_reap2, .chunk_size = 4, .reads = {c->state},
          .terms = {{c->pos, R, ECS_AND}}}, 1},
        {{.name = "Mark", .fn = det_mark, .chunk_size = 6, .terms = {{c->hp, R, ECS_AND}}}, 1},
        {{.name = "PreExcl", .fn = det_pre_excl, .chunk_size = 3,
          .terms = {{c->marked, R, ECS_AND}, {c->hp, W, ECS_AND}}}, 2},
        {{.name = "Excl", .fn = det_excl, .flags = ECS_SYSTEM_EXCLUSIVE, .writes = {c->state}}, 2},
        {{.name = "PostExcl", .fn = det_post_excl, .chunk_size = 8,
          .terms = {{c->pos, R, ECS_AND}, {c->age, R, ECS_AND}, {c->hp, R, ECS_NOT}}}, 2},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++) {
        sys[i].d.ctx = c;
        sys[i].d.stage = sys[i].stage == 0 ? 0 : sys[i].stage == 1 ? life : sync;
        ecs_system s = ecs_system_add(w, &sys[i].d);
        if (!s || s >= ST_SYS) { ok = 0; break; }
        c->stage_of[s] = sys[i].stage;
    }
    unsigned long long h = 1469598103934665603ull;
    for (long f = 0; ok && f < frames; f++) {
        ecs_result pr = ecs_progress(w, 1.0f / 60);
        if (pr != ECS_OK) {
            fprintf(stderr, "  det_run(%d threads): frame %ld: %s: %s\n", threads, f,
                    ecs_result_str(pr), ecs_last_error(w));
            ok = 0;
        }
        if (ecs_count(w) > res.peak) res.peak = ecs_count(w);
        if (f % 20 == 19) h = mix64(h ^ test_world_hash(w));
    }
    h = mix64(h ^ test_world_hash(w));
    h = mix64(h ^ ecs_commands_dropped(w));
    res.hash = h;
    res.count = ecs_count(w);
    res.dropped = ecs_commands_dropped(w);
    res.excl_errors = c->excl_errors;
    res.excl_runs = c->excl_runs;
    for (int s = 0; s < 3; s++) res.parallel_stages += st_threads_in_stage(s) >= 2;
    res.ok = ok;
    free(c);
    ecs_world_free(w);
    return res;
}

TEST(sched_determinism) {
    long frames = test_scaled(200, 20);
    int n0 = (int)test_scaled(600, 60);
    unsigned long long seed = test_g.seed_given ? test_g.seed : 20251121ull;
    det_result first;
    memset(&first, 0, sizeof first);
    for (int k = 0; k < 4; k++) {
        int threads = thread_counts[k];
        det_result r = det_run(threads, frames, n0, seed);
        ST_REPORT("sched_determinism");
        CHECKF(r.ok, "%d threads: the run failed", threads);
        CHECKF(r.excl_errors == 0, "%d threads: %ld failed calls in the exclusive system", threads, r.excl_errors);
        CHECK_EQ_INT(r.excl_runs, frames);
        if (k == 0) {
            first = r;
            /* the simulation does what it is meant to: spawns, deaths, drops */
            CHECKF(r.dropped > 0, "no command was dropped");
            CHECKF(r.peak > (size_t)n0, "nothing was spawned (peak %zu)", r.peak);
            continue;
        }
        CHECKF(r.hash == first.hash, "%d threads: world hash %016llx, 1 thread %016llx (seed %llu)",
               threads, r.hash, first.hash, seed);
        CHECKF(r.count == first.count, "%d threads: %zu entities, 1 thread %zu", threads, r.count, first.count);
        CHECKF(r.dropped == first.dropped, "%d threads: %zu dropped, 1 thread %zu", threads, r.dropped,
               first.dropped);
        /* the parallel path really ran: systems of a stage on two threads (at full size
           only: scaled down, e.g. under helgrind, the caller may well take every task) */
        if (test_g.scale_pct >= 100)
            CHECKF(SCHED_THREADS(threads) == 1 || r.parallel_stages >= 2, "%d threads: only %d of 3 stages ran on 2+ threads", threads,
                   r.parallel_stages);
    }
}

/* ---- 2. chunk coverage ------------------------------------------------------------ */
typedef struct { uint32_t chunked, plain; } cov_t;
typedef struct cov_ctx { ecs_id cnt; int chunk; } cov_ctx;
static void cov_chunked(ecs_iter *it) {
    const cov_ctx *c = (const cov_ctx *)it->ctx;
    cov_t *v = ECS_FIELD(it, cov_t, 0);
    st_slot *s = st_of(it);
    TCHECK(it, it->count > 0 && it->count <= c->chunk);
    TCHECK(it, it->thread >= 0 && it->thread < ecs_thread_count(it->world));
    s->sys_calls[1]++;
    s->sys_rows[1] += it->count;
    for (int i = 0; i < it->count; i++) v[i].chunked++;
}
static void cov_plain(ecs_iter *it) {
    cov_t *v = ECS_FIELD(it, cov_t, 0);
    st_slot *s = st_of(it);
    TCHECK(it, it->count > 0);
    s->sys_calls[2]++;
    s->sys_rows[2] += it->count;
    for (int i = 0; i < it->count; i++) v[i].plain++;
}

TEST(sched_chunk_coverage) {
    static const int chunk_sizes[3] = {1, 7, 64};
    long frames = test_scaled(3, 2);
    for (int ci = 0; ci < 3; ci++) {
        int c = chunk_sizes[ci];
        long big = test_scaled(65537, 2 * c + 3);
        long sizes[7] = {0, 1, c - 1, c, c + 1, 1000, big};
        long total = 0, chunks = 0, tables = 0;
        for (int k = 0; k < 7; k++) {
            total += sizes[k];
            chunks += (sizes[k] + c - 1) / c;
            tables += sizes[k] > 0;
        }
        for (int ti = 0; ti < 4; ti++) {
            int threads = thread_counts[ti];
            st_reset();
            ecs_world *w = sched_world(threads, ECS_ORDER_INSERTION);
            REQUIRE(w);
            ecs_id cnt = ECS_COMPONENT(w, cov_t);
            ecs_id other = ecs_component(w, "Other", sizeof(int), 0);
            char name[16];
            for (int k = 0; k < 7; k++) {   /* one table per size: cnt + a tag of its own */
                snprintf(name, sizeof name, "Size%d", k);
                ecs_id ids[2] = {cnt, ecs_component(w, name, 0, 0)};
                CHECK_EQ_INT(ecs_create_many(w, (size_t)sizes[k], ids, 2, NULL), ECS_OK);
            }
            CHECK_EQ_INT(ecs_create_many(w, 50, &other, 1, NULL), ECS_OK);   /* not matched */
            cov_ctx cc = {cnt, c};
            ecs_system sc = ecs_system_add(w, &(ecs_system_desc){.name = "Chunked", .fn = cov_chunked,
                .ctx = &cc, .chunk_size = c, .terms = {{cnt, ECS_WRITE, ECS_AND}}});
            ecs_system sp = ecs_system_add(w, &(ecs_system_desc){.name = "Plain", .fn = cov_plain,
                .ctx = &cc, .terms = {{cnt, ECS_WRITE, ECS_AND}}});
            REQUIRE(sc == 1 && sp == 2);
            for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
            ST_REPORT("sched_chunk_coverage");
            CHECKF(st_rows(1) == total * frames, "c = %d, %d threads: chunked rows %ld, want %ld", c,
                   threads, st_rows(1), total * frames);
            CHECKF(st_calls(1) == chunks * frames, "c = %d, %d threads: %ld chunks, want %ld", c,
                   threads, st_calls(1), chunks * frames);
            CHECKF(st_rows(2) == total * frames, "c = %d, %d threads: plain rows %ld, want %ld", c,
                   threads, st_rows(2), total * frames);
            CHECKF(st_calls(2) == tables * frames, "c = %d, %d threads: %ld plain batches, want %ld", c,
                   threads, st_calls(2), tables * frames);
            /* every entity exactly once per frame, by each system */
            ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{cnt, ECS_READ, ECS_AND}}});
            REQUIRE(q);
            long seen = 0, wrong = 0;
            for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
                const cov_t *v = ECS_FIELD(&it, cov_t, 0);
                for (int i = 0; i < it.count; i++, seen++)
                    wrong += v[i].chunked != (uint32_t)frames || v[i].plain != (uint32_t)frames;
            }
            CHECK_EQ_INT(seen, total);
            CHECKF(wrong == 0, "c = %d, %d threads: %ld entities not visited exactly once per frame", c,
                   threads, wrong);
            ecs_system_stats ss;
            CHECK_EQ_INT(ecs_system_stats_get(w, sc, &ss), ECS_OK);
            CHECK_EQ_INT(ss.runs, frames);
            ecs_query_free(q);
            ecs_world_free(w);
        }
    }
}

/* ---- 3. safety: no conflicting overlap, MAIN_THREAD, EXCLUSIVE --------------------- */
/* Random graphs of systems with declared access. Each system, while it runs,
   registers as reader or writer of every id it declared (atomics, per id and
   system) and checks that no other system writes what it touches, or
   touches what it writes, by ecs.h's conflict rules: two systems whose
   queries can never match the same table (AND x in one, NOT x in the other)
   do not conflict through their terms. Also: every system that ecs_system_precedes says
   runs before another finishes before that one starts (tickets), and every
   system covers its query's rows exactly once per frame. */
#define OV_COMPS 8
#define OV_RES 4
#define OV_IDS (OV_COMPS + OV_RES)
#define OV_MAX 40
typedef struct ov_sys {
    int n, slot[OV_IDS];
    bool write[OV_IDS];
    bool excl, main_only, has_terms;
    unsigned and_ids, not_ids;   /* component slots of its AND and NOT terms */
    ecs_query_desc qd;
} ov_sys;
typedef struct ov_ctx {
    atomic_int wr[OV_IDS][OV_MAX + 1], rd[OV_IDS][OV_MAX + 1];
    atomic_int running, excl_active;
    atomic_ulong ticket;
    atomic_ulong first[OV_MAX + 1], last[OV_MAX + 1];
    atomic_long rows[OV_MAX + 1], calls[OV_MAX + 1];
    atomic_int conflict_a, conflict_b, conflict_slot;   /* the first overlap seen */
    ov_sys sys[OV_MAX + 1];   /* by system handle; read-only while running */
    double spin;
} ov_ctx;

static void ov_note(ov_ctx *c, int a, int b, int slot) {
    int none = 0;
    if (atomic_compare_exchange_strong(&c->conflict_a, &none, a)) {
        atomic_store(&c->conflict_b, b);
        atomic_store(&c->conflict_slot, slot);
    }
}
/* Whether a's and b's queries can never match the same table (AND x in one,
   NOT x in the other): then their terms do not conflict. An EXCLUSIVE system
   conflicts with everything. */
static bool ov_disjoint(const ov_sys *a, const ov_sys *b) {
    return !a->excl && !b->excl && ((a->and_ids & b->not_ids) || (a->not_ids & b->and_ids));
}
/* 0 when no other system conflicts with s on its ids right now. */
static int ov_check(ov_ctx *c, int s) {
    const ov_sys *me = &c->sys[s];
    for (int k = 0; k < me->n; k++) {
        int j = me->slot[k];
        for (int t = 1; t <= OV_MAX; t++) {
            if (t == s) continue;
            if (j < OV_COMPS && ov_disjoint(me, &c->sys[t])) continue;   /* components: terms only */
            if (atomic_load(&c->wr[j][t]) || (me->write[k] && atomic_load(&c->rd[j][t]))) {
                ov_note(c, s, t, j);
                return 1;
            }
        }
    }
    return 0;
}
static void ov_min(atomic_ulong *a, unsigned long v) {
    unsigned long cur = atomic_load(a);
    while (v < cur && !atomic_compare_exchange_weak(a, &cur, v)) {}
}
static void ov_max(atomic_ulong *a, unsigned long v) {
    unsigned long cur = atomic_load(a);
    while (v > cur && !atomic_compare_exchange_weak(a, &cur, v)) {}
}
static void ov_fn(ecs_iter *it) {
    ov_ctx *c = (ov_ctx *)it->ctx;
    int s = (int)it->system;
    TCHECK(it, s >= 1 && s <= OV_MAX);
    if (s < 1 || s > OV_MAX) return;
    const ov_sys *me = &c->sys[s];
    ov_min(&c->first[s], atomic_fetch_add(&c->ticket, 1));
    atomic_fetch_add(&c->calls[s], 1);
    atomic_fetch_add(&c->rows[s], it->count);
    TCHECK(it, it->count > 0 || !me->has_terms);
    TCHECK(it, it->thread >= 0 && it->thread < ecs_thread_count(it->world));
    if (me->main_only || me->excl) TCHECK(it, it->thread == 0 && (test_thread_id() == st_main));
    if (me->excl) atomic_fetch_add(&c->excl_active, 1);
    int running = atomic_fetch_add(&c->running, 1) + 1;
    for (int k = 0; k < me->n; k++)
        atomic_fetch_add(me->write[k] ? &c->wr[me->slot[k]][s] : &c->rd[me->slot[k]][s], 1);
    if (me->excl) TCHECK(it, running == 1 && atomic_load(&c->excl_active) == 1);
    else TCHECK(it, atomic_load(&c->excl_active) == 0);
    TCHECK(it, ov_check(c, s) == 0);
    test_spin_us(c->spin);
    TCHECK(it, ov_check(c, s) == 0);
    if (me->excl) TCHECK(it, atomic_load(&c->running) == 1);
    else TCHECK(it, atomic_load(&c->excl_active) == 0);
    for (int k = 0; k < me->n; k++)
        atomic_fetch_sub(me->write[k] ? &c->wr[me->slot[k]][s] : &c->rd[me->slot[k]][s], 1);
    atomic_fetch_sub(&c->running, 1);
    if (me->excl) atomic_fetch_sub(&c->excl_active, 1);
    ov_max(&c->last[s], atomic_fetch_add(&c->ticket, 1));
}

/* Adds id slot j to s's tracked access. */
static void ov_track(ov_sys *s, int j, bool write) {
    for (int k = 0; k < s->n; k++)
        if (s->slot[k] == j) { s->write[k] |= write; return; }
    s->slot[s->n] = j;
    s->write[s->n++] = write;
}

static void ov_run_graph(unsigned long long seed, int threads, long frames) {
    st_reset();
    ecs_world *w = sched_world(threads, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ov_ctx *c = (ov_ctx *)calloc(1, sizeof *c);
    REQUIRE(c);
    TEST_HG_IGNORE(c, offsetof(ov_ctx, sys));   /* the atomics */
    c->spin = test_spin_len(2.0);
    ecs_id ids[OV_IDS];
    char name[32];
    for (int j = 0; j < OV_IDS; j++) {
        snprintf(name, sizeof name, "Ov%d", j);
        ids[j] = j < OV_COMPS ? ecs_component(w, name, sizeof(int), 0)
                              : ecs_resource(w, name, sizeof(int), 0, NULL);
        REQUIRE(ids[j]);
    }
    ecs_stage stage1 = ecs_stage_add(w, "second");
    unsigned long long r = seed;
    for (int i = 0; i < (int)test_scaled(300, 40); i++) {
        ecs_entity e = ecs_create(w);
        for (int j = 0; j < OV_COMPS; j++)
            if (test_below(&r, 2)) ecs_add(w, e, ids[j]);
    }
    int n = 20 + (int)test_below(&r, 9);
    static const int chunks[4] = {0, 2, 5, 16};
    int stage_of[OV_MAX + 1];   /* declared order only inside a stage: across stages it is a cycle */
    for (int i = 1; i <= n; i++) stage_of[i] = test_below(&r, 3) ? 0 : 1;
    for (int i = 1; i <= n; i++) {
        ov_sys *s = &c->sys[i];
        ecs_system_desc d;
        memset(&d, 0, sizeof d);
        char sname[16], after[16], before[16];
        snprintf(sname, sizeof sname, "ov%d", i);
        d.name = sname;
        d.fn = ov_fn;
        d.ctx = c;
        d.stage = stage_of[i] ? stage1 : 0;
        unsigned kind = test_below(&r, 100);
        s->excl = kind < 3;
        s->main_only = kind >= 3 && kind < 10;
        d.flags = s->excl ? ECS_SYSTEM_EXCLUSIVE : s->main_only ? ECS_SYSTEM_MAIN_THREAD : 0;
        int nt = (int)test_below(&r, 4), t = 0;
        unsigned used = 0;
        for (int k = 0; k < nt; k++) {
            int j = (int)test_below(&r, OV_COMPS);
            if (used & (1u << j)) continue;
            used |= 1u << j;
            unsigned o = test_below(&r, 10);
            ecs_oper oper = o == 0 ? ECS_NOT : o == 1 ? ECS_OPTIONAL : ECS_AND;
            ecs_access acc = test_below(&r, 5) < 2 ? ECS_WRITE : ECS_READ;
            d.terms[t].id = ids[j];
            d.terms[t].access = acc;
            d.terms[t].oper = oper;
            t++;
            if (oper != ECS_NOT) ov_track(s, j, acc == ECS_WRITE);
            if (oper == ECS_AND) s->and_ids |= 1u << j;
            if (oper == ECS_NOT) s->not_ids |= 1u << j;
        }
        s->has_terms = t > 0;
        memcpy(s->qd.terms, d.terms, sizeof d.terms);
        int nr = 0, nw = 0;
        for (int j = OV_COMPS; j < OV_IDS; j++) {
            unsigned a = test_below(&r, 20);
            if (a < 3) { d.reads[nr++] = ids[j]; ov_track(s, j, false); }
            else if (a < 5) { d.writes[nw++] = ids[j]; ov_track(s, j, true); }
        }
        if (s->excl)   /* it may touch anything */
            for (int j = 0; j < OV_IDS; j++) ov_track(s, j, true);
        if (!d.flags && t && !nw) d.chunk_size = chunks[test_below(&r, 4)];   /* else a SELF_RACE */
        if (i > 1 && test_below(&r, 7) == 0) {
            int j = 1 + (int)test_below(&r, (unsigned)i - 1);
            snprintf(after, sizeof after, "ov%d", j);
            if (stage_of[j] == stage_of[i]) d.after[0] = after;
        }
        if (i < n && test_below(&r, 10) == 0) {
            int j = i + 1 + (int)test_below(&r, (unsigned)(n - i));
            snprintf(before, sizeof before, "ov%d", j);
            if (stage_of[j] == stage_of[i]) d.before[0] = before;
        }
        REQUIRE(ecs_system_add(w, &d) == (ecs_system)i);
    }
    ecs_report rep;
    if (ecs_validate(w, &rep) != ECS_OK) {
        CHECKF(0, "seed %llu: the random graph is not valid", seed);
        ecs_report_print(&rep, stderr);
        free(c);
        ecs_world_free(w);
        return;
    }
    /* what must hold every frame */
    long expect_rows[OV_MAX + 1];
    static bool prec[OV_MAX + 1][OV_MAX + 1];
    for (int i = 1; i <= n; i++) {
        expect_rows[i] = 0;
        if (c->sys[i].has_terms) {
            ecs_query *q = ecs_query_new(w, &c->sys[i].qd);
            REQUIRE(q);
            expect_rows[i] = (long)ecs_query_count(w, q);
            ecs_query_free(q);
        }
        for (int j = 1; j <= n; j++) prec[i][j] = ecs_system_precedes(w, (ecs_system)i, (ecs_system)j);
    }
    long order_bad = 0, rows_bad = 0;
    for (long f = 0; f < frames; f++) {
        for (int i = 0; i <= OV_MAX; i++) {
            atomic_store(&c->first[i], ULONG_MAX);
            atomic_store(&c->last[i], 0);
            atomic_store(&c->rows[i], 0);
            atomic_store(&c->calls[i], 0);
        }
        ecs_result pr = ecs_progress(w, 0);
        CHECKF(pr == ECS_OK, "seed %llu: %s: %s", seed, ecs_result_str(pr), ecs_last_error(w));
        for (int i = 1; i <= n; i++) {
            long calls = atomic_load(&c->calls[i]), rows = atomic_load(&c->rows[i]);
            bool ok = c->sys[i].has_terms ? rows == expect_rows[i] && (rows > 0) == (calls > 0) : calls == 1;
            if (!ok && !rows_bad++)
                fprintf(stderr, "  seed %llu, %d threads, frame %ld: ov%d: %ld calls, %ld rows (want %ld)\n",
                        seed, threads, f, i, calls, rows, expect_rows[i]);
            if (!calls) continue;
            for (int j = 1; j <= n; j++) {
                if (!prec[i][j] || !atomic_load(&c->calls[j])) continue;
                if (atomic_load(&c->last[i]) < atomic_load(&c->first[j])) continue;
                if (!order_bad++)
                    fprintf(stderr, "  seed %llu, %d threads, frame %ld: ov%d precedes ov%d but they "
                            "overlapped\n", seed, threads, f, i, j);
            }
        }
    }
    CHECKF(rows_bad == 0, "seed %llu, %d threads: %ld wrong row counts", seed, threads, rows_bad);
    CHECKF(order_bad == 0, "seed %llu, %d threads: %ld ordered pairs overlapped", seed, threads, order_bad);
    int a = atomic_load(&c->conflict_a);
    CHECKF(a == 0, "seed %llu, %d threads: ov%d and ov%d overlapped on Ov%d", seed, threads, a,
           atomic_load(&c->conflict_b), atomic_load(&c->conflict_slot));
    ST_REPORT("sched_no_conflicting_overlap");
    free(c);
    ecs_world_free(w);
}

TEST(sched_no_conflicting_overlap) {
    unsigned long long base = test_g.seed_given ? test_g.seed : 777ull, next = base;
    long frames = test_scaled(10, 3);
    int graphs = (int)test_scaled(3, 2);
    for (int g = 0; g < graphs; g++) {
        unsigned long long seed = g ? test_rand(&next) : base;
        ov_run_graph(seed, 4, frames);
        ov_run_graph(seed, 8, frames);
    }
}

/* INSERTION orders conflicting systems along registration order past the
   64 systems of one bitset word: 130 systems that all write one id form a
   chain, and run one at a time in that order on any thread count. */
#define IC_SYSTEMS 130
static struct { int order[IC_SYSTEMS], n; } ic_log;   /* systems in the order they ran */
static void ic_fn(ecs_iter *it) {
    if (ic_log.n < IC_SYSTEMS) ic_log.order[ic_log.n] = *(const int *)it->ctx;
    ic_log.n++;
}
TEST(sched_insertion_chain_past_64_systems) {
    static int index[IC_SYSTEMS];
    static char names[IC_SYSTEMS][16];
    long frames = test_scaled(4, 2);
    for (int k = 0; k < 4; k++) {
        ecs_world *w = sched_world(thread_counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id pos = ecs_component(w, "Pos", sizeof(int), 0);
        CHECK_EQ_INT(ecs_create_many(w, 1, &pos, 1, NULL), ECS_OK);
        ecs_system s[IC_SYSTEMS];
        for (int i = 0; i < IC_SYSTEMS; i++) {
            index[i] = i;
            snprintf(names[i], sizeof names[i], "ic%d", i);
            s[i] = ecs_system_add(w, &(ecs_system_desc){.name = names[i], .fn = ic_fn, .ctx = &index[i],
                .terms = {{pos, ECS_WRITE, ECS_AND}}});
            REQUIRE(s[i]);
        }
        CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
        int unordered = 0;
        for (int i = 0; i < IC_SYSTEMS; i++)
            for (int j = i + 1; j < IC_SYSTEMS; j++)
                if ((!ecs_system_precedes(w, s[i], s[j]) || ecs_system_precedes(w, s[j], s[i])) && !unordered++)
                    fprintf(stderr, "  ic%d does not precede ic%d\n", i, j);
        CHECKF(unordered == 0, "%d pairs out of registration order", unordered);
        for (long f = 0; f < frames; f++) {
            ic_log.n = 0;
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
            CHECK_EQ_INT(ic_log.n, IC_SYSTEMS);
            int at = 0;   /* the first place out of order */
            while (at < ic_log.n && at < IC_SYSTEMS && ic_log.order[at] == at) at++;
            CHECKF(at == IC_SYSTEMS, "%d threads, frame %ld: place %d ran ic%d", thread_counts[k], f, at,
                   at < ic_log.n && at < IC_SYSTEMS ? ic_log.order[at] : -1);
        }
        ecs_world_free(w);
    }
}

/* MAIN_THREAD systems run on thread 0, the OS thread that called
   ecs_progress; the others run on threads 0 .. threads - 1, and a thread
   index always belongs to the same OS thread. */
typedef struct mt_ctx { bool main_only; double spin; } mt_ctx;
static struct { const void *seen[ST_THREADS]; bool have[ST_THREADS]; } mt_threads;   /* slot t: thread t only */
static void mt_fn(ecs_iter *it) {
    const mt_ctx *c = (const mt_ctx *)it->ctx;
    st_slot *s = st_of(it);
    TCHECK(it, it->thread >= 0 && it->thread < ecs_thread_count(it->world));
    if (it->system < ST_SYS) s->sys_calls[it->system]++;
    if (c->main_only) {
        TCHECK(it, it->thread == 0);
        TCHECK(it, (test_thread_id() == st_main));
    }
    if (it->thread >= 0 && it->thread < ST_THREADS) {
        int t = it->thread;
        if (!mt_threads.have[t]) { mt_threads.seen[t] = test_thread_id(); mt_threads.have[t] = true; }
        else TCHECK(it, (mt_threads.seen[t] == test_thread_id()));
        if (t == 0) TCHECK(it, (test_thread_id() == st_main));
        else TCHECK(it, !(test_thread_id() == st_main));
    }
    test_spin_us(c->spin);
}

TEST(sched_main_thread_on_thread_0) {
    static const int counts[2] = {4, 8};
    long frames = test_scaled(10, 3);
    for (int k = 0; k < 2; k++) {
        st_reset();
        memset(&mt_threads, 0, sizeof mt_threads);
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", sizeof(int), 0), b = ecs_component(w, "B", sizeof(int), 0);
        ecs_id t1 = ecs_component(w, "T1", 0, 0), t2 = ecs_component(w, "T2", 0, 0);
        ecs_id set1[2] = {a, t1}, set2[3] = {a, b, t2};
        CHECK_EQ_INT(ecs_create_many(w, (size_t)test_scaled(200, 20), set1, 2, NULL), ECS_OK);
        CHECK_EQ_INT(ecs_create_many(w, (size_t)test_scaled(200, 20), set2, 3, NULL), ECS_OK);
        mt_ctx main_c = {true, test_spin_len(20)}, any_c = {false, test_spin_len(5)};
        ecs_system mains[4];
        char name[16];
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "Main%d", i);
            mains[i] = ecs_system_add(w, &(ecs_system_desc){.name = name, .fn = mt_fn, .ctx = &main_c,
                .flags = ECS_SYSTEM_MAIN_THREAD, .stage = 0,
                .terms = {{i % 2 ? b : a, ECS_READ, ECS_AND}}});
            REQUIRE(mains[i]);
        }
        ecs_system noterm = ecs_system_add(w, &(ecs_system_desc){.name = "MainNoTerms", .fn = mt_fn,
            .ctx = &main_c, .flags = ECS_SYSTEM_MAIN_THREAD});
        for (int i = 0; i < 6; i++) {
            snprintf(name, sizeof name, "Any%d", i);
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = name, .fn = mt_fn, .ctx = &any_c,
                .chunk_size = 8 + i, .terms = {{i % 2 ? b : a, ECS_READ, ECS_AND}}}));
        }
        for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        ST_REPORT("sched_main_thread_on_thread_0");
        for (int i = 0; i < 4; i++) CHECK_EQ_INT(st_calls(mains[i]), frames * (1 + (i % 2 == 0)));
        CHECK_EQ_INT(st_calls(noterm), frames);
        for (int t = 1; t < ST_THREADS; t++)
            CHECKF(st_slots[t].sys_calls[mains[0]] == 0 && st_slots[t].sys_calls[noterm] == 0,
                   "a MAIN_THREAD system ran on thread %d", t);
        ecs_world_free(w);
    }
}

/* EXCLUSIVE systems run alone, on thread 0, after the commands recorded
   before them in the stage are applied; their direct structural changes are
   seen by the systems after them. */
typedef struct ex_ctx {
    atomic_int running, excl_active;
    ecs_id a, b, c, fresh, marked;
    double spin;
    /* written by the exclusive systems only (thread 0) */
    ecs_entity bs[16];
    int bs_n;
    ecs_entity made[64];      /* a ring: made[i % 64] */
    int made_n;
    long excl_errors, excl_calls;
} ex_ctx;
static void ex_enter(ecs_iter *it, ex_ctx *c) {
    atomic_fetch_add(&c->running, 1);
    TCHECK(it, atomic_load(&c->excl_active) == 0);
}
static void ex_leave(ecs_iter *it, ex_ctx *c) {
    TCHECK(it, atomic_load(&c->excl_active) == 0);
    atomic_fetch_sub(&c->running, 1);
}
static void ex_work(ecs_iter *it) {   /* a parallel system */
    ex_ctx *c = (ex_ctx *)it->ctx;
    ex_enter(it, c);
    st_of(it)->sys_calls[it->system < ST_SYS ? it->system : 0]++;
    test_spin_us(c->spin);
    ex_leave(it, c);
}
static void ex_marker(ecs_iter *it) {   /* marks B entities by command, before the exclusive */
    ex_ctx *c = (ex_ctx *)it->ctx;
    ex_enter(it, c);
    for (int i = 0; i < it->count; i++)
        TCHECK(it, ecs_cmd_add(it->commands, it->entities[i], c->marked) == ECS_OK);
    test_spin_us(c->spin);
    ex_leave(it, c);
}
static void ex_fresh_reader(ecs_iter *it) {   /* after the exclusive: sees what it made */
    ex_ctx *c = (ex_ctx *)it->ctx;
    ex_enter(it, c);
    st_slot *s = st_of(it);
    if (it->system < ST_SYS) s->sys_rows[it->system] += it->count;
    for (int i = 0; i < it->count; i++)
        TCHECK(it, ecs_cmd_remove(it->commands, it->entities[i], c->fresh) == ECS_OK);
    test_spin_us(c->spin);
    ex_leave(it, c);
}
static void ex_excl(ecs_iter *it) {
    ex_ctx *c = (ex_ctx *)it->ctx;
    ecs_world *w = it->world;
    atomic_fetch_add(&c->excl_active, 1);
    int running = atomic_fetch_add(&c->running, 1) + 1;
    TCHECK(it, running == 1);
    TCHECK(it, it->thread == 0 && (test_thread_id() == st_main));
    c->excl_calls++;
    test_spin_us(c->spin * 4);
    TCHECK(it, atomic_load(&c->running) == 1);
    for (int i = 0; i < c->bs_n; i++)   /* the marker's commands were applied first */
        if (!ecs_has(w, c->bs[i], c->marked)) c->excl_errors++;
    for (int k = 0; k < 3; k++) {   /* immediate structural changes */
        ecs_entity e = ecs_create(w);
        if (!e) { c->excl_errors++; continue; }
        if (ecs_add(w, e, c->c) != ECS_OK) c->excl_errors++;
        if (ecs_set(w, e, c->a, &(int){k}) != ECS_OK) c->excl_errors++;
        if (ecs_add(w, e, c->fresh) != ECS_OK) c->excl_errors++;
        c->made[c->made_n++ % 64] = e;
    }
    if (c->made_n > 6 && ecs_destroy(w, c->made[(c->made_n - 7) % 64]) != ECS_OK) c->excl_errors++;
    TCHECK(it, atomic_load(&c->running) == 1);
    atomic_fetch_sub(&c->running, 1);
    atomic_fetch_sub(&c->excl_active, 1);
}
static void ex_excl_terms(ecs_iter *it) {   /* with a query: every batch alone */
    ex_ctx *c = (ex_ctx *)it->ctx;
    atomic_fetch_add(&c->excl_active, 1);
    TCHECK(it, atomic_fetch_add(&c->running, 1) == 0);
    TCHECK(it, it->thread == 0);
    TCHECK(it, it->count > 0);
    test_spin_us(c->spin);
    TCHECK(it, atomic_load(&c->running) == 1);
    atomic_fetch_sub(&c->running, 1);
    atomic_fetch_sub(&c->excl_active, 1);
}

TEST(sched_exclusive_runs_alone) {
    static const int counts[2] = {4, 8};
    long frames = test_scaled(30, 3);
    for (int k = 0; k < 2; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ex_ctx *c = (ex_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(c, offsetof(ex_ctx, a));
        c->spin = test_spin_len(10);
        c->a = ecs_component(w, "A", sizeof(int), 0);
        c->b = ecs_component(w, "B", sizeof(int), 0);
        c->c = ecs_component(w, "C", sizeof(int), 0);
        c->fresh = ecs_component(w, "Fresh", 0, 0);
        c->marked = ecs_component(w, "Marked", 0, 0);
        ecs_stage s1 = ecs_stage_add(w, "second");
        CHECK_EQ_INT(ecs_create_many(w, (size_t)test_scaled(400, 40), &c->a, 1, NULL), ECS_OK);
        c->bs_n = 16;
        CHECK_EQ_INT(ecs_create_many(w, 16, &c->b, 1, c->bs), ECS_OK);
        const ecs_access R = ECS_READ, W = ECS_WRITE;
        ecs_system w1 = ecs_system_add(w, &(ecs_system_desc){.name = "WorkA", .fn = ex_work, .ctx = c,
            .chunk_size = 16, .terms = {{c->a, W, ECS_AND}}});
        ecs_system_add(w, &(ecs_system_desc){.name = "MarkB", .fn = ex_marker, .ctx = c, .chunk_size = 4,
            .terms = {{c->b, R, ECS_AND}}});
        ecs_system_add(w, &(ecs_system_desc){.name = "WorkB", .fn = ex_work, .ctx = c, .chunk_size = 3,
            .terms = {{c->b, W, ECS_AND}}});
        ecs_system x = ecs_system_add(w, &(ecs_system_desc){.name = "Excl", .fn = ex_excl, .ctx = c,
            .flags = ECS_SYSTEM_EXCLUSIVE});
        ecs_system fr = ecs_system_add(w, &(ecs_system_desc){.name = "ReadFresh", .fn = ex_fresh_reader,
            .ctx = c, .chunk_size = 2, .terms = {{c->fresh, R, ECS_AND}, {c->c, R, ECS_AND}}});
        ecs_system_add(w, &(ecs_system_desc){.name = "WorkA2", .fn = ex_work, .ctx = c, .chunk_size = 32,
            .terms = {{c->a, R, ECS_AND}}});
        ecs_system_add(w, &(ecs_system_desc){.name = "Work2A", .fn = ex_work, .ctx = c, .chunk_size = 16,
            .stage = s1, .terms = {{c->a, R, ECS_AND}}});
        ecs_system x2 = ecs_system_add(w, &(ecs_system_desc){.name = "ExclTerms", .fn = ex_excl_terms,
            .ctx = c, .stage = s1, .flags = ECS_SYSTEM_EXCLUSIVE, .terms = {{c->a, R, ECS_AND}}});
        ecs_system_add(w, &(ecs_system_desc){.name = "Work2B", .fn = ex_work, .ctx = c, .chunk_size = 4,
            .stage = s1, .terms = {{c->b, R, ECS_AND}}});
        REQUIRE(w1 && x && fr && x2);
        long fresh_bad = 0;
        for (long f = 0; f < frames; f++) {
            for (int t = 0; t <= ST_THREADS; t++) st_slots[t].sys_rows[fr] = 0;
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
            fresh_bad += st_rows(fr) != 3;   /* the three made this frame */
        }
        ST_REPORT("sched_exclusive_runs_alone");
        CHECK_EQ_INT(c->excl_calls, frames);
        CHECKF(c->excl_errors == 0, "%d threads: %ld failed structural calls or unapplied commands in "
               "the exclusive system", counts[k], c->excl_errors);
        CHECKF(fresh_bad == 0, "%d threads: in %ld frames the system after the exclusive one did not see "
               "its 3 new entities", counts[k], fresh_bad);
        CHECK(st_calls(w1) >= frames * ((test_scaled(400, 40) + 15) / 16));
        /* the new entities are there, and their commands (remove Fresh) applied */
        for (int i = 0; i < c->made_n && i < 64; i++) {
            if (!ecs_is_alive(w, c->made[i])) continue;
            CHECK(ecs_has(w, c->made[i], c->c) && !ecs_has(w, c->made[i], c->fresh));
        }
        free(c);
        ecs_world_free(w);
    }
}

/* ---- 4. lifecycle ------------------------------------------------------------------ */
static void life_fn(ecs_iter *it) {
    int *v = ECS_FIELD(it, int, 0);
    const double *spin = (const double *)it->ctx;
    for (int i = 0; i < it->count; i++) v[i]++;
    test_spin_us(*spin);
}

TEST(sched_lifecycle) {
    long cycles = test_scaled(1000, 20);
    double spin = test_spin_len(30), none = 0;
    for (long i = 0; i < cycles; i++) {
        ecs_world *w = sched_world(8, ECS_ORDER_INSERTION);
        REQUIRE(w);
        CHECK_EQ_INT(ecs_thread_count(w), SCHED_THREADS(8));
        ecs_id v = ecs_component(w, "V", sizeof(int), 0);
        ecs_entity es[64];
        CHECK_EQ_INT(ecs_create_many(w, 64, &v, 1, es), ECS_OK);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Inc", .fn = life_fn,
            .ctx = i % 8 == 3 ? &spin : &none, .chunk_size = 4, .terms = {{v, ECS_WRITE, ECS_AND}}}));
        int frames = (int)(i % 4);   /* 0: workers never woken; 3 with a spin: the parallel path */
        for (int f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        const int *x = (const int *)ecs_get(w, es[63], v);
        CHECKF(x && *x == frames, "cycle %ld: %d frames, value %d", i, frames, x ? *x : -1);
        ecs_world_free(w);
        if (test_g.checks_failed) return;
    }
}

/* Workers start at the first parallel stage, not in ecs_world_new; the
   first frame after systems are added runs in parallel (and is timed), so a
   world's first frame is not stuck on one thread. Threads are counted in
   /proc/self/task (Linux). */
#if defined(__linux__) && !defined(ECS_NO_THREADS)
#include <dirent.h>
static int process_threads(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
TEST(sched_workers_start_lazily) {
    int before = process_threads();
    REQUIRE(before > 0);
    ecs_world *w = sched_world(4, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id v = ecs_component(w, "V", sizeof(int), 0);
    ecs_entity es[64];
    CHECK_EQ_INT(ecs_create_many(w, 64, &v, 1, es), ECS_OK);
    CHECK_EQ_INT(process_threads(), before);   /* a world that has not run a frame */
    double none = 0;
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Inc", .fn = life_fn, .ctx = &none,
        .chunk_size = 4, .terms = {{v, ECS_WRITE, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* the first frame: in parallel */
    CHECK_EQ_INT(process_threads(), before + 3);
    ecs_frame_stats fs;
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK_EQ_INT(fs.timed_frame, 0);
    for (int f = 0; f < 20; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* tiny: inline */
    const int *x = (const int *)ecs_get(w, es[63], v);
    CHECK(x && *x == 21);
    ecs_world_free(w);
    CHECK_EQ_INT(process_threads(), before);
    /* threads = 1, or frames that never need workers: none start */
    w = sched_world(1, ECS_ORDER_INSERTION);
    REQUIRE(w);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK_EQ_INT(process_threads(), before);
    ecs_world_free(w);
}
#endif

/* An EXCLUSIVE system may change structure as it runs: a table it creates
   that its own query matches is visited in the same run (its batches walk
   the query's matches as they are at each step, not as they were at the
   start). */
typedef struct grow_ctx { ecs_id a, b; int batches, rows; bool added; } grow_ctx;
static void grow_fn(ecs_iter *it) {
    grow_ctx *c = (grow_ctx *)it->ctx;
    c->batches++;
    c->rows += it->count;
    if (c->batches == 1) {   /* a new table {A, B}, through {B}: {A} is held by this batch */
        ecs_entity e = ecs_create(it->world);
        c->added = e && ecs_add(it->world, e, c->b) == ECS_OK && ecs_add(it->world, e, c->a) == ECS_OK;
    }
}
TEST(sched_exclusive_sees_tables_it_adds) {
    for (int t = 0; t < 4; t++) {
        ecs_world *w = sched_world(thread_counts[t], ECS_ORDER_INSERTION);
        REQUIRE(w);
        grow_ctx c = {ecs_component(w, "A", sizeof(int), 0), ecs_component(w, "B", sizeof(int), 0), 0, 0, false};
        CHECK_EQ_INT(ecs_create_many(w, 3, &c.a, 1, NULL), ECS_OK);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Grow", .fn = grow_fn, .ctx = &c,
            .flags = ECS_SYSTEM_EXCLUSIVE, .terms = {{c.a, ECS_READ, ECS_AND}}}));
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECKF(c.added && c.batches == 2 && c.rows == 4, "%d threads: added %d, %d batches, %d rows",
               thread_counts[t], (int)c.added, c.batches, c.rows);
        ecs_world_free(w);
    }
}

/* ---- 5. rules ------------------------------------------------------------------- */
/* Structural and registering calls from a non-exclusive system: refused,
   the world unchanged. */
typedef struct { int x, y; } bpos;
typedef struct busy_ctx {
    ecs_id pos, vel, mark;
    ecs_entity e;
    ecs_query *q;
    ecs_commands *user;
    double spin;
    bool sets_pos;
} busy_ctx;
static void busy_fn(ecs_iter *it) {
    const busy_ctx *c = (const busy_ctx *)it->ctx;
    ecs_world *w = it->world;
    st_slot *s = st_of(it);
    if (it->system < ST_SYS) s->sys_calls[it->system]++;
    ecs_entity out[2] = {0, 0};
    TCHECK(it, ecs_create(w) == 0);
    TCHECK(it, ecs_last_error(w)[0] != 0);
    TCHECK(it, ecs_create_many(w, 2, &c->pos, 1, out) == ECS_ERR_BUSY);
    TCHECK(it, ecs_destroy(w, c->e) == ECS_ERR_BUSY);
    TCHECK(it, contains(ecs_last_error(w), "ecs_destroy"));
    TCHECK(it, ecs_add(w, c->e, c->vel) == ECS_ERR_BUSY);
    TCHECK(it, ecs_remove(w, c->e, c->pos) == ECS_ERR_BUSY);
    TCHECK(it, ecs_set(w, c->e, c->vel, &(bpos){7, 7}) == ECS_ERR_BUSY);   /* would add */
    TCHECK(it, ecs_component(w, "Fresh", sizeof(int), 0) == 0);
    TCHECK(it, ecs_component(w, "Pos", sizeof(bpos), 0) == 0);
    TCHECK(it, ecs_resource(w, "FreshRes", sizeof(int), 0, NULL) == 0);
    TCHECK(it, ecs_query_new(w, &(ecs_query_desc){.terms = {{c->pos, ECS_READ, ECS_AND}}}) == NULL);
    ecs_query_free(c->q);       /* refused: the query stays usable */
    TCHECK(it, ecs_defer_begin(w) == ECS_ERR_BUSY);
    TCHECK(it, ecs_commands_new(w) == NULL);
    TCHECK(it, ecs_commands_apply(w, c->user) == ECS_ERR_BUSY);
    ecs_commands_free(c->user); /* refused */
    TCHECK(it, ecs_system_add(w, &(ecs_system_desc){.name = "Late", .fn = busy_fn}) == 0);
    TCHECK(it, ecs_stage_add(w, "late") == 0);
    TCHECK(it, ecs_validate(w, NULL) == ECS_ERR_BUSY);
    if (c->sets_pos) {   /* a value write on an existing component is fine */
        const bpos *p = (const bpos *)ecs_get(w, c->e, c->pos);
        TCHECK(it, p != NULL);
        if (p) {
            bpos same = *p;
            TCHECK(it, ecs_set(w, c->e, c->pos, &same) == ECS_OK);
        }
    }
    test_spin_us(c->spin);
}

TEST(sched_structural_calls_busy_in_systems) {
    static const int counts[2] = {1, 4};
    for (int k = 0; k < 2; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        busy_ctx c0, c1;
        memset(&c0, 0, sizeof c0);
        c0.pos = ecs_component(w, "Pos", sizeof(bpos), 0);
        c0.vel = ecs_component(w, "Vel", sizeof(bpos), 0);
        c0.mark = ecs_component(w, "Mark", sizeof(int), 0);
        c0.e = ecs_create(w);
        REQUIRE(c0.e && ecs_set(w, c0.e, c0.pos, &(bpos){1, 2}) == ECS_OK);
        ecs_entity dead = ecs_create(w);
        CHECK_EQ_INT(ecs_destroy(w, dead), ECS_OK);   /* a free slot a create could take */
        CHECK_EQ_INT(ecs_create_many(w, 40, &c0.mark, 1, NULL), ECS_OK);
        c0.q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c0.pos, ECS_READ, ECS_AND}}});
        c0.user = ecs_commands_new(w);
        REQUIRE(c0.q && c0.user);
        CHECK_EQ_INT(ecs_cmd_add(c0.user, c0.e, c0.vel), ECS_OK);
        c0.spin = test_spin_len(20);
        c1 = c0;
        c0.sets_pos = true;
        ecs_system s0 = ecs_system_add(w, &(ecs_system_desc){.name = "SetsPos", .fn = busy_fn, .ctx = &c0,
            .terms = {{c0.pos, ECS_WRITE, ECS_AND}}});
        ecs_system s1 = ecs_system_add(w, &(ecs_system_desc){.name = "Chunks", .fn = busy_fn, .ctx = &c1,
            .chunk_size = 4, .terms = {{c0.mark, ECS_READ, ECS_AND}}});
        ecs_system s2 = ecs_system_add(w, &(ecs_system_desc){.name = "NoTerms", .fn = busy_fn, .ctx = &c1});
        REQUIRE(s0 && s1 && s2);
        unsigned long long h = test_world_hash(w);
        ecs_id ids = ecs_id_count(w);
        size_t count = ecs_count(w);
        long frames = 3;
        for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        ST_REPORT("sched_structural_calls_busy_in_systems");
        CHECK_EQ_INT(st_calls(s0), frames);
        CHECK_EQ_INT(st_calls(s1), frames * 10);
        CHECK_EQ_INT(st_calls(s2), frames);
        CHECK(test_world_hash(w) == h);
        CHECK_EQ_INT(ecs_id_count(w), ids);
        CHECK_EQ_INT(ecs_count(w), count);
        CHECK_EQ_INT(ecs_system_count(w), 3);
        CHECK(ecs_stage_name(w, 1) == NULL);
        CHECK(!ecs_is_alive(w, dead) && ecs_is_alive(w, c0.e) && !ecs_has(w, c0.e, c0.vel));
        CHECK_EQ_INT(ecs_query_count(w, c0.q), 1);           /* not freed */
        CHECK_EQ_INT(ecs_commands_apply(w, c0.user), ECS_OK); /* not freed, not applied before */
        CHECK(ecs_has(w, c0.e, c0.vel));
        ecs_world_free(w);
    }
}

/* ecs_progress from a system, or in defer mode: ECS_ERR_BUSY. */
static void reent_fn(ecs_iter *it) {
    st_slot *s = st_of(it);
    if (it->system < ST_SYS) s->sys_calls[it->system]++;
    TCHECK(it, ecs_progress(it->world, 0) == ECS_ERR_BUSY);
    TCHECK(it, contains(ecs_last_error(it->world), "ecs_progress"));
    test_spin_us(*(const double *)it->ctx);
}

TEST(sched_progress_reentrant_busy) {
    static const int counts[2] = {1, 4};
    double spin = test_spin_len(20);
    for (int k = 0; k < 2; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", sizeof(int), 0);
        CHECK_EQ_INT(ecs_create_many(w, 32, &a, 1, NULL), ECS_OK);
        ecs_system s0 = ecs_system_add(w, &(ecs_system_desc){.name = "Reenter", .fn = reent_fn,
            .ctx = &spin, .chunk_size = 4, .terms = {{a, ECS_READ, ECS_AND}}});
        ecs_system s1 = ecs_system_add(w, &(ecs_system_desc){.name = "ReenterMain", .fn = reent_fn,
            .ctx = &spin, .flags = ECS_SYSTEM_MAIN_THREAD});
        REQUIRE(s0 && s1);
        for (int f = 0; f < 3; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(st_calls(s0), 3 * 8);
        CHECK_EQ_INT(st_calls(s1), 3);
        ecs_frame_stats fs;
        CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
        CHECK_EQ_INT(fs.frames, 3);
        CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_BUSY);
        CHECK(contains(ecs_last_error(w), "defer"));
        CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
        CHECK_EQ_INT(st_calls(s1), 3);   /* nothing ran */
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(st_calls(s1), 4);
        ST_REPORT("sched_progress_reentrant_busy");
        ecs_world_free(w);
    }
}

/* An invalid graph runs nothing, not even its valid stages. */
TEST(sched_invalid_graph_runs_nothing) {
    static const int counts[2] = {1, 4};
    for (int k = 0; k < 2; k++) {
        st_reset();
        gen_ctx g = {0, 0, 0};
        /* a RACE under EXPLICIT, with a valid stage before it */
        ecs_world *w = sched_world(counts[k], ECS_ORDER_EXPLICIT);
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", sizeof(int), 0);
        CHECK_EQ_INT(ecs_create_many(w, 10, &a, 1, NULL), ECS_OK);
        ecs_stage s1 = ecs_stage_add(w, "later");
        ecs_system ok0 = ecs_system_add(w, &(ecs_system_desc){.name = "Fine", .fn = gen_fn, .ctx = &g,
            .terms = {{a, ECS_WRITE, ECS_AND}}});
        ecs_system none = ecs_system_add(w, &(ecs_system_desc){.name = "NoTerms", .fn = gen_fn, .ctx = &g});
        ecs_system w1 = ecs_system_add(w, &(ecs_system_desc){.name = "W1", .fn = gen_fn, .ctx = &g,
            .stage = s1, .terms = {{a, ECS_WRITE, ECS_AND}}});
        ecs_system w2 = ecs_system_add(w, &(ecs_system_desc){.name = "W2", .fn = gen_fn, .ctx = &g,
            .stage = s1, .chunk_size = 2, .terms = {{a, ECS_WRITE, ECS_AND}}});
        REQUIRE(ok0 && none && w1 && w2);
        unsigned long long h = test_world_hash(w);
        for (int f = 0; f < 3; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_INVALID_GRAPH);
        CHECK(ecs_last_error(w)[0] != 0);
        for (ecs_system s = 1; s <= 4; s++) CHECK_EQ_INT(st_calls(s), 0);
        CHECK(test_world_hash(w) == h);
        ecs_world_free(w);

        /* a cycle, then an unknown name that registering it fixes */
        w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        a = ecs_component(w, "A", sizeof(int), 0);
        CHECK_EQ_INT(ecs_create_many(w, 10, &a, 1, NULL), ECS_OK);
        ecs_system x = ecs_system_add(w, &(ecs_system_desc){.name = "X", .fn = gen_fn, .ctx = &g,
            .after = {"Later"}, .terms = {{a, ECS_READ, ECS_AND}}});
        REQUIRE(x);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_INVALID_GRAPH);   /* "Later" is unknown */
        CHECK_EQ_INT(st_calls(x), 0);
        ecs_system later = ecs_system_add(w, &(ecs_system_desc){.name = "Later", .fn = gen_fn, .ctx = &g});
        REQUIRE(later);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(st_calls(x), 1);
        CHECK_EQ_INT(st_calls(later), 1);
        ecs_system y = ecs_system_add(w, &(ecs_system_desc){.name = "Y", .fn = gen_fn, .ctx = &g,
            .after = {"Z"}});
        ecs_system z = ecs_system_add(w, &(ecs_system_desc){.name = "Z", .fn = gen_fn, .ctx = &g,
            .after = {"Y"}});
        REQUIRE(y && z);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_INVALID_GRAPH);   /* a cycle */
        CHECK_EQ_INT(st_calls(x), 1);
        CHECK_EQ_INT(st_calls(later), 1);
        CHECK_EQ_INT(st_calls(y) + st_calls(z), 0);
        ST_REPORT("sched_invalid_graph_runs_nothing");
        ecs_world_free(w);
    }
}

/* Commands apply in stage, registration, chunk and recording order; the
   handles made by ecs_cmd_create follow that order too. */
typedef struct { int32_t sys, v, k; } cout_t;
typedef struct co_ctx { ecs_id val, out, last; ecs_entity last_e; int sys; double spin; } co_ctx;
static void co_fn(ecs_iter *it) {
    const co_ctx *c = (const co_ctx *)it->ctx;
    const int *v = ECS_FIELD(it, int, 0);
    test_spin_us(c->spin);   /* the first system is the slowest: applying must not follow finishing */
    for (int i = 0; i < it->count; i++) {
        for (int k = 0; k < 2; k++) {
            ecs_entity e = ecs_cmd_create(it->commands);
            TCHECK(it, e != 0);
            TCHECK(it, ecs_cmd_set(it->commands, e, c->out, &(cout_t){c->sys, v[i], k ? -1 : 0}) == ECS_OK);
            if (k) TCHECK(it, ecs_cmd_set(it->commands, e, c->out, &(cout_t){c->sys, v[i], 1}) == ECS_OK);
        }
        TCHECK(it, ecs_cmd_set(it->commands, c->last_e, c->last, &(int){c->sys * 1000 + v[i]}) == ECS_OK);
    }
}

typedef struct co_result { ecs_entity handles[256]; cout_t vals[256]; int n; int last; } co_result;

static void co_run(int threads, co_result *res) {
    memset(res, 0, sizeof *res);
    st_reset();
    ecs_world *w = sched_world(threads, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id val = ecs_component(w, "Val", sizeof(int), 0);
    ecs_id out = ECS_COMPONENT(w, cout_t);
    ecs_id last = ecs_component(w, "Last", sizeof(int), 0);
    ecs_id tag = ecs_component(w, "Tag", 0, 0);
    ecs_entity last_e = ecs_create(w);
    REQUIRE(last_e && ecs_set(w, last_e, last, &(int){0}) == ECS_OK);
    /* values 0..9 in two tables: {Val} then {Val, Tag}; 3 destroyed slots to reuse */
    for (int i = 0; i < 13; i++) {
        ecs_entity e = ecs_create(w);
        REQUIRE(e && ecs_set(w, e, val, &(int){i}) == ECS_OK);
        if (i >= 6 && i < 10) ecs_add(w, e, tag);
        if (i >= 10) ecs_destroy(w, e);
    }
    ecs_stage s1 = ecs_stage_add(w, "later");
    co_ctx ca = {val, out, last, last_e, 1, test_spin_len(300)}, cb = ca, cc = ca;
    cb.sys = 2; cb.spin = 0;
    cc.sys = 3; cc.spin = 0;
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = co_fn, .ctx = &ca, .chunk_size = 4,
        .terms = {{val, ECS_READ, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = co_fn, .ctx = &cb, .chunk_size = 3,
        .terms = {{val, ECS_READ, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = co_fn, .ctx = &cc, .stage = s1,
        .terms = {{val, ECS_READ, ECS_AND}}}));
    /* a first frame to learn the durations, so the second runs in parallel */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{out, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    for (int f = 0; f < 2; f++) {
        if (f == 1) {   /* keep only the second frame's output */
            ecs_defer_begin(w);
            for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
                for (int i = 0; i < it.count; i++) ecs_destroy(w, it.entities[i]);
            ecs_defer_end(w);
        }
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    }
    ST_REPORT("sched_commands_order");
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        const cout_t *o = ECS_FIELD(&it, cout_t, 0);
        for (int i = 0; i < it.count && res->n < 256; i++, res->n++) {
            res->handles[res->n] = it.entities[i];
            res->vals[res->n] = o[i];
        }
    }
    const int *l = (const int *)ecs_get(w, last_e, last);
    res->last = l ? *l : -1;
    ecs_world_free(w);
}

TEST(sched_commands_order) {
    static co_result r1, r4;
    co_run(1, &r1);
    co_run(4, &r4);
    /* systems A, B, C; each over rows 0..5 ({Val}) then 6..9 ({Val, Tag}), two entities per row */
    CHECK_EQ_INT(r1.n, 3 * 10 * 2);
    int n = 0, bad = 0;
    for (int sys = 1; sys <= 3; sys++)
        for (int v = 0; v < 10; v++)
            for (int k = 0; k < 2; k++, n++) {
                if (n >= r1.n) continue;
                const cout_t *o = &r1.vals[n];
                if ((o->sys != sys || o->v != v || o->k != k) && !bad++)
                    fprintf(stderr, "  entity %d: {%d, %d, %d}, want {%d, %d, %d}\n", n, o->sys, o->v, o->k,
                            sys, v, k);
            }
    CHECKF(bad == 0, "%d entities out of order", bad);
    CHECK_EQ_INT(r1.last, 3 * 1000 + 9);   /* the last set recorded by the last system */
    /* created in that order: handles follow it (reused slots first, LIFO, then new ones) */
    CHECK_EQ_INT(r4.n, r1.n);
    CHECK_EQ_INT(r4.last, r1.last);
    int diff = 0;
    for (int i = 0; i < r1.n && i < r4.n; i++)
        diff += r1.handles[i] != r4.handles[i] || memcmp(&r1.vals[i], &r4.vals[i], sizeof r1.vals[i]) != 0;
    CHECKF(diff == 0, "%d entities differ between 1 and 4 threads", diff);
}

/* Destroying twice: the second is dropped and counted. */
typedef struct dr_ctx { ecs_id val, tag; ecs_entity e1, e3; int who; double spin; } dr_ctx;
static void dr_fn(ecs_iter *it) {
    const dr_ctx *c = (const dr_ctx *)it->ctx;
    test_spin_us(c->spin);
    TCHECK(it, ecs_cmd_destroy(it->commands, c->e3) == ECS_OK);   /* every chunk of both systems */
    for (int i = 0; i < it->count; i++) {
        if (it->entities[i] != c->e1) continue;
        TCHECK(it, ecs_cmd_destroy(it->commands, c->e1) == ECS_OK);
        TCHECK(it, ecs_cmd_set(it->commands, c->e1, c->val, &(int){5}) == ECS_OK);
        if (c->who == 1) {   /* a pending entity destroyed, then changed */
            ecs_entity p = ecs_cmd_create(it->commands);
            TCHECK(it, p != 0);
            TCHECK(it, ecs_cmd_destroy(it->commands, p) == ECS_OK);
            TCHECK(it, ecs_cmd_add(it->commands, p, c->tag) == ECS_OK);
            TCHECK(it, ecs_cmd_destroy(it->commands, p) == ECS_OK);
        }
    }
}

TEST(sched_dropped_commands) {
    static const int counts[2] = {1, 4};
    for (int k = 0; k < 2; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id val = ecs_component(w, "Val", sizeof(int), 0);
        ecs_id tag = ecs_component(w, "Tag", 0, 0);
        ecs_entity es[8];
        CHECK_EQ_INT(ecs_create_many(w, 8, &val, 1, es), ECS_OK);
        ecs_entity e3 = ecs_create(w);   /* not matched */
        REQUIRE(e3);
        dr_ctx ca = {val, tag, es[5], e3, 1, test_spin_len(50)}, cb = ca;
        cb.who = 2;
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "DropA", .fn = dr_fn, .ctx = &ca,
            .chunk_size = 2, .terms = {{val, ECS_READ, ECS_AND}}}));   /* 4 chunks */
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "DropB", .fn = dr_fn, .ctx = &cb,
            .chunk_size = 3, .terms = {{val, ECS_READ, ECS_AND}}}));   /* 3 chunks */
        size_t before = ecs_commands_dropped(w);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        ST_REPORT("sched_dropped_commands");
        /* e3: 7 destroys, 6 dropped. e1: A destroys it, then A's set, B's destroy and
           B's set drop: 3. The pending entity: add and second destroy drop: 2. */
        CHECK_EQ_INT(ecs_commands_dropped(w) - before, 6 + 3 + 2);
        CHECK(!ecs_is_alive(w, es[5]) && !ecs_is_alive(w, e3));
        CHECK_EQ_INT(ecs_count(w), 7);
        /* nothing matched by e1 or e3 any more: the next frame drops only e3's destroys */
        before = ecs_commands_dropped(w);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(ecs_commands_dropped(w) - before, 4 + 3);
        CHECK_EQ_INT(ecs_count(w), 7);
        ecs_world_free(w);
    }
}

/* A system without terms: called once per frame with count 0, chunked or not. */
TEST(sched_system_without_terms_called_once) {
    static const int counts[3] = {1, 2, 8};
    long frames = test_scaled(10, 3);
    for (int k = 0; k < 3; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", sizeof(int), 0);
        CHECK_EQ_INT(ecs_create_many(w, (size_t)test_scaled(200, 20), &a, 1, NULL), ECS_OK);
        gen_ctx busy = {test_spin_len(10), 8, 0}, quiet = {0, 0, 0};
        ecs_system s[5];
        s[0] = ecs_system_add(w, &(ecs_system_desc){.name = "Plain", .fn = gen_fn, .ctx = &quiet});
        s[1] = ecs_system_add(w, &(ecs_system_desc){.name = "Chunked", .fn = gen_fn, .ctx = &quiet,
            .chunk_size = 4});
        s[2] = ecs_system_add(w, &(ecs_system_desc){.name = "Main", .fn = gen_fn, .ctx = &quiet,
            .flags = ECS_SYSTEM_MAIN_THREAD});
        s[3] = ecs_system_add(w, &(ecs_system_desc){.name = "Excl", .fn = gen_fn, .ctx = &quiet,
            .flags = ECS_SYSTEM_EXCLUSIVE});
        s[4] = ecs_system_add(w, &(ecs_system_desc){.name = "Busy", .fn = gen_fn, .ctx = &busy,
            .chunk_size = 8, .terms = {{a, ECS_WRITE, ECS_AND}}});
        for (long f = 0; f < frames; f++) {
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
            for (int i = 0; i < 4; i++)
                CHECKF(st_calls(s[i]) == f + 1, "%d threads, frame %ld: system %d called %ld times",
                       counts[k], f, i, st_calls(s[i]));
        }
        for (int i = 0; i < 4; i++) CHECK_EQ_INT(st_rows(s[i]), 0);
        CHECK_EQ_INT(st_rows(s[4]), frames * test_scaled(200, 20));
        ST_REPORT("sched_system_without_terms_called_once");
        ecs_world_free(w);
    }
}

/* A plain system (a query, no chunks, not exclusive) on thread 0 in a frame
   that is not timed takes a lean path of its own. Two worlds run the same
   program, one timing every frame (the general path) and one timing none
   after its first: calls, rows, values, commands, handles and stats must
   match, with an empty table first in match order and tables that appear,
   empty and fill again as the systems' commands move entities. */
typedef struct plain_ctx {
    ecs_id a, b;
    long calls, rows;
    uint64_t h;
} plain_ctx;
static void plain_fn(ecs_iter *it) {
    plain_ctx *c = it->ctx;
    int *v = ECS_FIELD(it, int, 0);
    c->calls++;
    c->rows += it->count;
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        v[i] += 1 + (int)(e & 3);
        c->h = mix64(c->h ^ e ^ (uint64_t)v[i] << 32 ^ (uint64_t)it->system);
        if (v[i] % 5 == 0) TCHECK(it, ecs_cmd_add(it->commands, e, c->b) == ECS_OK);
        if (v[i] % 7 == 0) TCHECK(it, ecs_cmd_remove(it->commands, e, c->b) == ECS_OK);
        if (v[i] % 97 == 0) TCHECK(it, ecs_cmd_destroy(it->commands, e) == ECS_OK);
        if (v[i] % 31 == 0) {
            ecs_entity n = ecs_cmd_create(it->commands);
            int one = 1;
            TCHECK(it, n && ecs_cmd_set(it->commands, n, c->a, &one) == ECS_OK);
        }
    }
}
TEST(sched_plain_inline_same_as_timed) {
    static gen_ctx quiet = {0, 0, 0};
    long frames = test_scaled(200, 40);
    for (int k = 0; k < 4; k++) {
        st_reset();
        plain_ctx ctx[2][3];
        uint64_t runs[2][3], hash[2];
        int timed[2][3];
        size_t count[2];
        for (int v = 0; v < 2; v++) {   /* one world at a time: Emscripten's pool has 8 threads */
            ecs_world *w = sched_world(thread_counts[k], ECS_ORDER_INSERTION);
            REQUIRE(w);
            ecs_id a = ecs_component(w, "A", sizeof(int), 0), b = ecs_component(w, "B", 0, 0);
            ecs_id c = ecs_component(w, "C", sizeof(int), 0), d = ecs_component(w, "D", 0, 0);
            REQUIRE(a && b && c && d);
            ecs_entity first = ecs_create(w);   /* {A, C}: first in match order, then empty */
            int zero = 0;
            REQUIRE(first && ecs_set(w, first, c, &zero) == ECS_OK && ecs_set(w, first, a, &zero) == ECS_OK);
            CHECK_EQ_INT(ecs_destroy(w, first), ECS_OK);
            ecs_id ids[2] = {a, d};
            CHECK_EQ_INT(ecs_create_many(w, (size_t)test_scaled(60, 20), &a, 1, NULL), ECS_OK);
            CHECK_EQ_INT(ecs_create_many(w, (size_t)test_scaled(30, 10), ids, 2, NULL), ECS_OK);
            for (int i = 0; i < 3; i++) ctx[v][i] = (plain_ctx){a, b, 0, 0, 0x5eed};
            ecs_system sys[4];
            sys[0] = ecs_system_add(w, &(ecs_system_desc){.name = "OnA", .fn = plain_fn, .ctx = &ctx[v][0],
                .terms = {{a, ECS_WRITE, ECS_AND}}});
            sys[1] = ecs_system_add(w, &(ecs_system_desc){.name = "OnAB", .fn = plain_fn, .ctx = &ctx[v][1],
                .after = {"OnA"}, .terms = {{a, ECS_WRITE, ECS_AND}, {b, ECS_READ, ECS_AND}}});
            sys[2] = ecs_system_add(w, &(ecs_system_desc){.name = "MainOnC", .fn = plain_fn, .ctx = &ctx[v][2],
                .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {{c, ECS_WRITE, ECS_AND}}});   /* its table is empty */
            sys[3] = ecs_system_add(w, &(ecs_system_desc){.name = "Tail", .fn = gen_fn, .ctx = &quiet,
                .after = {"OnAB"}});
            REQUIRE(sys[0] && sys[1] && sys[2] && sys[3]);
            ecs_timing_interval(w, v ? 1000000 : 1);
            for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
            for (int i = 0; i < 3; i++) {
                ecs_system_stats ss;
                CHECK_EQ_INT(ecs_system_stats_get(w, sys[i], &ss), ECS_OK);
                runs[v][i] = ss.runs;
                timed[v][i] = (int)ss.timed;
            }
            count[v] = ecs_count(w);
            hash[v] = ecs_world_hash(w);
            ecs_world_free(w);
        }
        for (int i = 0; i < 3; i++) {
            CHECKF(ctx[0][i].calls == ctx[1][i].calls && ctx[0][i].rows == ctx[1][i].rows &&
                   ctx[0][i].h == ctx[1][i].h, "%d threads, system %d: %ld calls, %ld rows timed; "
                   "%ld calls, %ld rows not", thread_counts[k], i, ctx[0][i].calls, ctx[0][i].rows,
                   ctx[1][i].calls, ctx[1][i].rows);
            CHECK(runs[0][i] == runs[1][i]);
            CHECK(timed[0][i] == (int)runs[0][i] && timed[1][i] <= 1);
        }
        CHECKF(ctx[1][0].calls > 2 * frames && ctx[1][0].rows > ctx[1][0].calls,   /* tables came and went */
               "%ld calls, %ld rows in %ld frames", ctx[1][0].calls, ctx[1][0].rows, frames);
        CHECK(ctx[1][1].calls > 0 && ctx[1][1].calls < ctx[1][1].rows);
        CHECK_EQ_INT(ctx[1][2].calls, 0);
        CHECK(count[0] == count[1] && hash[0] == hash[1]);
        ST_REPORT("sched_plain_inline_same_as_timed");
    }
}

/* ecs_field past a system's last term is NULL, on every thread, also right
   after a system with more terms ran on that thread, in lean, timed and
   chunked runs. Terms: 5, 1, 3, none, 2 chunked, 4 with a NOT and an
   OPTIONAL the rows lack. */
typedef struct fields_ctx { int terms; int present; } fields_ctx;   /* present: AND terms first */
static void fields_fn(ecs_iter *it) {
    const fields_ctx *c = (const fields_ctx *)it->ctx;
    st_of(it)->sys_calls[it->system]++;
    st_of(it)->sys_rows[it->system] += it->count;
    for (int k = 0; k < c->present; k++) TCHECK(it, ecs_field(it, k) != NULL);
    for (int k = c->present; k < ECS_MAX_TERMS + 2; k++) TCHECK(it, ecs_field(it, k) == NULL);
    TCHECK(it, ecs_field(it, -1) == NULL && ecs_field(it, INT_MIN) == NULL);
}
TEST(sched_fields_past_terms_null) {
    long frames = test_scaled(40, 10);
    for (int k = 0; k < 4; k++) {
        st_reset();
        ecs_world *w = sched_world(thread_counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id c[6];
        static const char *const names[6] = {"F0", "F1", "F2", "F3", "F4", "F5"};
        for (int i = 0; i < 6; i++) {
            c[i] = ecs_component(w, names[i], sizeof(int), 0);
            REQUIRE(c[i]);
        }
        CHECK_EQ_INT(ecs_create_many(w, 100, c, 5, NULL), ECS_OK);   /* F0..F4, never F5 */
        static const fields_ctx ctx[6] = {{5, 5}, {1, 1}, {3, 3}, {0, 0}, {2, 2}, {4, 2}};
        ecs_system sys[6];
#define R(i) {c[i], ECS_READ, ECS_AND}
        sys[0] = ecs_system_add(w, &(ecs_system_desc){.name = "Five", .fn = fields_fn, .ctx = (void *)&ctx[0],
            .terms = {R(0), R(1), R(2), R(3), R(4)}});
        sys[1] = ecs_system_add(w, &(ecs_system_desc){.name = "One", .fn = fields_fn, .ctx = (void *)&ctx[1],
            .terms = {R(1)}});
        sys[2] = ecs_system_add(w, &(ecs_system_desc){.name = "Three", .fn = fields_fn, .ctx = (void *)&ctx[2],
            .terms = {R(2), R(3), R(4)}});
        sys[3] = ecs_system_add(w, &(ecs_system_desc){.name = "None", .fn = fields_fn, .ctx = (void *)&ctx[3]});
        sys[4] = ecs_system_add(w, &(ecs_system_desc){.name = "TwoChunked", .fn = fields_fn,
            .ctx = (void *)&ctx[4], .chunk_size = 16, .terms = {R(3), R(0)}});
        sys[5] = ecs_system_add(w, &(ecs_system_desc){.name = "NotOptional", .fn = fields_fn,
            .ctx = (void *)&ctx[5], .terms = {R(0), R(4), {c[5], ECS_READ, ECS_NOT},
                                              {c[5], ECS_READ, ECS_OPTIONAL}}});
#undef R
        for (int i = 0; i < 6; i++) REQUIRE(sys[i]);
        ecs_timing_interval(w, 3);
        for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
        for (int i = 0; i < 6; i++) {
            long calls = st_calls(sys[i]), rows = 0;
            for (int t = 0; t <= ST_THREADS; t++) rows += st_slots[t].sys_rows[sys[i]];
            CHECKF(calls >= frames && rows == (i == 3 ? 0 : 100 * frames), "%d threads, system %d: "
                   "%ld calls, %ld rows in %ld frames", thread_counts[k], i, calls, rows, frames);
        }
        ST_REPORT("sched_fields_past_terms_null");
        ecs_world_free(w);
    }
}

/* A system whose query matches no row is not called and leaves no trace. */
TEST(sched_empty_query_not_called) {
    static const int counts[2] = {1, 4};
    for (int k = 0; k < 2; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", sizeof(int), 0), b = ecs_component(w, "B", sizeof(int), 0);
        ecs_id c = ecs_component(w, "C", sizeof(int), 0);
        CHECK_EQ_INT(ecs_create_many(w, 50, &a, 1, NULL), ECS_OK);
        ecs_entity eb = ecs_create(w);   /* table {B} exists, empty */
        REQUIRE(eb && ecs_add(w, eb, b) == ECS_OK && ecs_destroy(w, eb) == ECS_OK);
        gen_ctx g = {test_spin_len(5), 0, 0};
        ecs_system empty[4];
        empty[0] = ecs_system_add(w, &(ecs_system_desc){.name = "EmptyTable", .fn = gen_fn, .ctx = &g,
            .terms = {{b, ECS_WRITE, ECS_AND}}});
        empty[1] = ecs_system_add(w, &(ecs_system_desc){.name = "NoTable", .fn = gen_fn, .ctx = &g,
            .terms = {{c, ECS_READ, ECS_AND}}});
        empty[2] = ecs_system_add(w, &(ecs_system_desc){.name = "EmptyChunked", .fn = gen_fn, .ctx = &g,
            .chunk_size = 3, .terms = {{b, ECS_READ, ECS_AND}}});
        empty[3] = ecs_system_add(w, &(ecs_system_desc){.name = "EmptyMain", .fn = gen_fn, .ctx = &g,
            .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {{a, ECS_READ, ECS_AND}, {b, ECS_READ, ECS_AND}}});
        ecs_system full = ecs_system_add(w, &(ecs_system_desc){.name = "Full", .fn = gen_fn, .ctx = &g,
            .chunk_size = 10, .terms = {{a, ECS_READ, ECS_AND}}});
        ecs_system after = ecs_system_add(w, &(ecs_system_desc){.name = "Follower", .fn = gen_fn, .ctx = &g,
            .after = {"EmptyTable", "NoTable", "EmptyChunked", "EmptyMain"}});
        REQUIRE(empty[0] && empty[1] && empty[2] && empty[3] && full && after);
        ecs_timing_interval(w, 1);
        ecs_trace_enable(w, true);
        for (int f = 0; f < 4; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        for (int i = 0; i < 4; i++) {
            CHECK_EQ_INT(st_calls(empty[i]), 0);
            ecs_system_stats ss;
            CHECK_EQ_INT(ecs_system_stats_get(w, empty[i], &ss), ECS_OK);
            CHECK_EQ_INT(ss.runs, 0);
            CHECK_EQ_INT(ss.timed, 0);   /* "of those [frames in which it ran]" */
            CHECK(ss.last_us == 0 && ss.avg_us == 0);
        }
        CHECK_EQ_INT(st_calls(full), 4 * 5);
        CHECK_EQ_INT(st_calls(after), 4);   /* its predecessors finished without running */
        FILE *f = tmpfile();
        REQUIRE(f);
        CHECK_EQ_INT(ecs_write_trace(w, f), ECS_OK);
        char *json = test_read_all(f);
        fclose(f);
        REQUIRE(json);
        CHECK(contains(json, "\"Full\""));
        CHECK(!contains(json, "Empty") && !contains(json, "NoTable"));
        free(json);
        /* a row appears: it runs; the row goes: it stops */
        ecs_entity e = ecs_create(w);
        REQUIRE(e && ecs_add(w, e, c) == ECS_OK);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(st_calls(empty[1]), 1);
        CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(st_calls(empty[1]), 1);
        ST_REPORT("sched_empty_query_not_called");
        ecs_world_free(w);
    }
}

/* Debug builds: ecs_get / ecs_get_mut / ecs_resource_get inside a system
   only on declared ids (get_mut only on written ones); release: the
   declared path works. */
typedef struct ac_ctx { ecs_id p, v, h, undeclared, r_read, r_write, r_secret; ecs_entity target; } ac_ctx;
#if ECS_CHECK_ACCESS
static void ac_check_error(ecs_iter *it, const char *sys, const char *id) {
    const char *err = ecs_last_error(it->world);
    TCHECK(it, contains(err, sys));
    TCHECK(it, contains(err, id));
}
#endif
static void ac_fn(ecs_iter *it) {
    const ac_ctx *c = (const ac_ctx *)it->ctx;
    ecs_world *w = it->world;
    st_of(it)->sys_calls[1]++;
    TCHECK(it, ecs_get(w, c->target, c->p) != NULL);        /* a read term */
    TCHECK(it, ecs_get(w, c->target, c->h) != NULL);        /* reads */
    TCHECK(it, ecs_get(w, c->target, c->v) != NULL);        /* writes implies read */
    TCHECK(it, ecs_get_mut(w, c->target, c->v) != NULL);    /* writes */
    TCHECK(it, ecs_resource_get(w, c->r_read) != NULL);
    TCHECK(it, ecs_resource_get(w, c->r_write) != NULL);
#if ECS_CHECK_ACCESS
    TCHECK(it, ecs_get(w, c->target, c->undeclared) == NULL);
    ac_check_error(it, "AccessCheck", "Undeclared");
    TCHECK(it, ecs_get_mut(w, c->target, c->p) == NULL);    /* only read */
    ac_check_error(it, "AccessCheck", "AccP");
    TCHECK(it, ecs_get_mut(w, c->target, c->h) == NULL);
    ac_check_error(it, "AccessCheck", "AccH");
    TCHECK(it, ecs_resource_get(w, c->r_secret) == NULL);
    ac_check_error(it, "AccessCheck", "Secret");
#endif
}
static void ac_excl(ecs_iter *it) {   /* an exclusive system has the whole world */
    const ac_ctx *c = (const ac_ctx *)it->ctx;
    st_of(it)->sys_calls[2]++;
    TCHECK(it, ecs_get(it->world, c->target, c->undeclared) != NULL);
    TCHECK(it, ecs_get_mut(it->world, c->target, c->p) != NULL);
    TCHECK(it, ecs_resource_get(it->world, c->r_secret) != NULL);
}

TEST(sched_access_checks_debug) {
    static const int counts[2] = {1, 4};
    for (int k = 0; k < 2; k++) {
        st_reset();
        ecs_world *w = sched_world(counts[k], ECS_ORDER_INSERTION);
        REQUIRE(w);
        ac_ctx c;
        c.p = ecs_component(w, "AccP", sizeof(int), 0);
        c.v = ecs_component(w, "AccV", sizeof(int), 0);
        c.h = ecs_component(w, "AccH", sizeof(int), 0);
        c.undeclared = ecs_component(w, "Undeclared", sizeof(int), 0);
        c.r_read = ecs_resource(w, "ResRead", sizeof(int), 0, NULL);
        c.r_write = ecs_resource(w, "ResWrite", sizeof(int), 0, NULL);
        c.r_secret = ecs_resource(w, "Secret", sizeof(int), 0, NULL);
        ecs_id set[4] = {c.p, c.v, c.h, c.undeclared};
        ecs_entity es[24];
        CHECK_EQ_INT(ecs_create_many(w, 24, set, 4, es), ECS_OK);
        c.target = es[0];
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "AccessCheck", .fn = ac_fn, .ctx = &c,
            .terms = {{c.p, ECS_READ, ECS_AND}}, .reads = {c.h, c.r_read},
            .writes = {c.v, c.r_write}}) == 1);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "AccessExcl", .fn = ac_excl, .ctx = &c,
            .flags = ECS_SYSTEM_EXCLUSIVE}) == 2);
        gen_ctx other = {test_spin_len(20), 4, 0};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Other", .fn = gen_fn, .ctx = &other,
            .chunk_size = 4, .terms = {{c.h, ECS_READ, ECS_AND}}}));
        for (int f = 0; f < 3; f++) {
#if ECS_CHECK_ACCESS   /* the refusals above make the frame report them */
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);
            CHECK(contains(ecs_last_error(w), "AccessCheck"));
#else
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
#endif
        }
        ST_REPORT("sched_access_checks_debug");
        CHECK_EQ_INT(st_calls(1), 3);
        CHECK_EQ_INT(st_calls(2), 3);
        /* outside systems: no restriction */
        CHECK(ecs_get_mut(w, c.target, c.undeclared) != NULL);
        CHECK(ecs_resource_get(w, c.r_secret) != NULL);
        ecs_world_free(w);
    }
}

/* ---- 6. looking inside -------------------------------------------------------------- */
TEST(sched_stats) {
    st_reset();
    ecs_world *w = sched_world(4, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id a = ecs_component(w, "A", sizeof(int), 0), b = ecs_component(w, "B", sizeof(int), 0);
    ecs_id c = ecs_component(w, "C", sizeof(int), 0);
    CHECK_EQ_INT(ecs_create_many(w, 95, &a, 1, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 40, &b, 1, NULL), ECS_OK);
    gen_ctx spin = {test_spin_len(200) < 2 ? 2 : test_spin_len(200), 0, 0}, chunky = {test_spin_len(5), 10, 0}, quiet = {0, 0, 0};
    ecs_system sp = ecs_system_add(w, &(ecs_system_desc){.name = "Spinner", .fn = gen_fn, .ctx = &spin,
        .terms = {{b, ECS_WRITE, ECS_AND}}});
    ecs_system ch = ecs_system_add(w, &(ecs_system_desc){.name = "Chunky", .fn = gen_fn, .ctx = &chunky,
        .chunk_size = 10, .terms = {{a, ECS_WRITE, ECS_AND}}});
    ecs_system em = ecs_system_add(w, &(ecs_system_desc){.name = "Empty", .fn = gen_fn, .ctx = &quiet,
        .terms = {{c, ECS_READ, ECS_AND}}});
    ecs_system nt = ecs_system_add(w, &(ecs_system_desc){.name = "NoTerms", .fn = gen_fn, .ctx = &quiet});
    REQUIRE(sp && ch && em && nt);
    ecs_frame_stats fs;
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK(fs.frames == 0 && fs.threads == SCHED_THREADS(4));
    ecs_timing_interval(w, 1);
    const int frames = 10;
    for (int f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    ecs_system_stats ss;
    CHECK_EQ_INT(ecs_system_stats_get(w, sp, &ss), ECS_OK);
    CHECK_EQ_INT(ss.runs, frames);
    CHECK_EQ_INT(ss.timed, frames);
    CHECK(ss.avg_us > 0 && ss.last_us > 0);
    CHECK_EQ_INT(ss.chunks, 1);
    CHECK_EQ_INT(ecs_system_stats_get(w, ch, &ss), ECS_OK);
    CHECK_EQ_INT(ss.runs, frames);
    CHECK_EQ_INT(ss.chunks, 10);
    CHECK_EQ_INT(ecs_system_stats_get(w, em, &ss), ECS_OK);
    CHECK_EQ_INT(ss.runs, 0);
    CHECK_EQ_INT(ss.timed, 0);
    CHECK_EQ_INT(ecs_system_stats_get(w, nt, &ss), ECS_OK);
    CHECK_EQ_INT(ss.runs, frames);
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK_EQ_INT(fs.frames, frames);
    CHECK_EQ_INT(fs.timed_frame, frames - 1);
    CHECK(fs.wall_us > 0 && fs.work_us > 0 && fs.critical_path_us > 0 && fs.parallelism > 0);
    CHECK_EQ_INT(fs.threads, SCHED_THREADS(4));
    CHECK_EQ_INT(st_calls(sp), frames);
    /* errors */
    CHECK_EQ_INT(ecs_system_stats_get(w, 0, &ss), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_system_stats_get(w, 99, &ss), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_system_stats_get(w, sp, NULL), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_frame_stats_get(w, NULL), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_system_stats_get(NULL, sp, &ss), ECS_ERR_ARG);
    ST_REPORT("sched_stats");
    ecs_world_free(w);

    /* the default: the first frame, then every 8th frame at least
       ECS_TIMING_MS (50 ms) after the last timed one */
    w = sched_world(2, ECS_ORDER_INSERTION);
    REQUIRE(w);
    a = ecs_component(w, "A", sizeof(int), 0);
    CHECK_EQ_INT(ecs_create_many(w, 10, &a, 1, NULL), ECS_OK);
    sp = ecs_system_add(w, &(ecs_system_desc){.name = "S", .fn = gen_fn, .ctx = &quiet,
        .terms = {{a, ECS_READ, ECS_AND}}});
    REQUIRE(sp);
    double t0 = test_now_us();
    for (int f = 0; f < 16; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    bool fast = test_now_us() - t0 < 40e3;   /* else the machine stalled: frame 8 may be timed */
    CHECK_EQ_INT(ecs_system_stats_get(w, sp, &ss), ECS_OK);
    CHECK_EQ_INT(ss.runs, 16);
    if (fast) CHECK_EQ_INT(ss.timed, 1);
    uint64_t timed = ss.timed;
    for (t0 = test_now_us(); test_now_us() - t0 < 55e3;) {}
    for (int f = 0; f < 8; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* frame 16: 55 ms later */
    CHECK_EQ_INT(ecs_system_stats_get(w, sp, &ss), ECS_OK);
    CHECK_EQ_INT(ss.timed, timed + 1);
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK_EQ_INT(fs.timed_frame, 16);
    /* a new system: the next frame is timed; interval 3 then 0 (back to the default) */
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "T", .fn = gen_fn, .ctx = &quiet,
        .terms = {{a, ECS_READ, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK_EQ_INT(fs.timed_frame, 24);
    ecs_timing_interval(w, 3);
    t0 = test_now_us();   /* frame 30 is timed after this */
    for (int f = 0; f < 6; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* frames 25..30 */
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK_EQ_INT(fs.timed_frame, 30);
    ecs_timing_interval(w, 0);
    for (int f = 0; f < 2; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* frame 32: too soon */
    fast = test_now_us() - t0 < 45e3;   /* else (a stall, a slow checker) frame 32 may be timed */
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    if (fast) CHECK_EQ_INT(fs.timed_frame, 30);
    CHECK(ecs_stage_add(w, "later"));   /* a new graph: measured again at once */
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    CHECK_EQ_INT(fs.timed_frame, 33);
    ecs_world_free(w);
}

/* A minimal JSON validator: the trace must parse. */
static const char *js_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}
static const char *js_string(const char *p) {
    if (*p != '"') return NULL;
    for (p++; *p != '"'; p++) {
        if (!*p || (unsigned char)*p < 0x20) return NULL;
        if (*p != '\\') continue;
        p++;
        if (*p == 'u') {
            for (int i = 1; i <= 4; i++)
                if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
            p += 4;
        } else if (!*p || !strchr("\"\\/bfnrt", *p)) return NULL;
    }
    return p + 1;
}
static const char *js_digits(const char *p) {
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return p;
}
static const char *js_number(const char *p) {
    if (*p == '-') p++;
    if (!(p = js_digits(p))) return NULL;
    if (*p == '.' && !(p = js_digits(p + 1))) return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(p = js_digits(p))) return NULL;
    }
    return p;
}
static const char *js_value(const char *p, int depth) {
    if (depth > 64) return NULL;
    p = js_ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool object = *p == '{';
        p = js_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (object) {
                if (!(p = js_string(js_ws(p)))) return NULL;
                p = js_ws(p);
                if (*p++ != ':') return NULL;
            }
            if (!(p = js_value(p, depth + 1))) return NULL;
            p = js_ws(p);
            if (*p == ',') { p++; continue; }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"') return js_string(p);
    if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    return js_number(p);
}
static bool json_valid(const char *s) {
    const char *p = js_value(s, 0);
    return p && *js_ws(p) == 0;
}

static char *trace_text(ecs_world *w) {
    FILE *f = tmpfile();
    if (!f) return NULL;
    char *s = ecs_write_trace(w, f) == ECS_OK ? test_read_all(f) : NULL;
    fclose(f);
    return s;
}

TEST(sched_trace_json) {
    CHECK(json_valid("{\"a\":[1,-2.5e3,\"x\\\"y\",true,null,{}]}") && !json_valid("{\"a\":[1,}") &&
          !json_valid("{\"a\" 1}") && !json_valid("[\"a\\q\"]"));
    st_reset();
    ecs_world *w = sched_world(4, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id a = ecs_component(w, "A", sizeof(int), 0), b = ecs_component(w, "B", sizeof(int), 0);
    CHECK_EQ_INT(ecs_create_many(w, 40, &a, 1, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 10, &b, 1, NULL), ECS_OK);
    gen_ctx chunky = {test_spin_len(20), 4, 0}, plain = {test_spin_len(30), 0, 0};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "TraceChunked", .fn = gen_fn, .ctx = &chunky,
        .chunk_size = 4, .terms = {{a, ECS_WRITE, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "TracePlain", .fn = gen_fn, .ctx = &plain,
        .terms = {{b, ECS_WRITE, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "TraceMain", .fn = gen_fn, .ctx = &plain,
        .flags = ECS_SYSTEM_MAIN_THREAD}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Quote\"Back\\slash", .fn = gen_fn, .ctx = &plain,
        .stage = ecs_stage_add(w, "second"), .terms = {{b, ECS_READ, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* before the recording */
    ecs_trace_enable(w, true);
    const int frames = 3;
    for (int f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    char *s = trace_text(w);
    REQUIRE(s);
    CHECKF(json_valid(s), "the trace is not valid JSON");
    CHECK(contains(s, "\"traceEvents\""));
    CHECK(contains(s, "\"TraceChunked\"") && contains(s, "\"TracePlain\"") && contains(s, "\"TraceMain\""));
    CHECK(contains(s, "\"Quote\\\"Back\\\\slash\""));
    CHECK(contains(s, "\"ph\":\"X\""));
    CHECK_EQ_INT(test_count_str(s, "\"thread_name\""), SCHED_THREADS(4));
    CHECK(contains(s, "\"chunk\":"));
    /* per frame: 10 chunks, 3 systems, a frame event; sync points */
    CHECK_EQ_INT(test_count_str(s, "\"cat\":\"chunk\""), frames * 10);
    CHECK_EQ_INT(test_count_str(s, "\"cat\":\"system\""), frames * 3);
    CHECK_EQ_INT(test_count_str(s, "\"cat\":\"frame\""), frames);
    CHECK(contains(s, "\"frame 1\"") && !contains(s, "\"frame 0\""));
    int events = test_count_str(s, "\"ph\":\"X\"");
    free(s);
    /* off: nothing more is recorded */
    ecs_trace_enable(w, false);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    s = trace_text(w);
    REQUIRE(s);
    CHECK_EQ_INT(test_count_str(s, "\"ph\":\"X\""), events);
    free(s);
    /* on again: a new recording */
    ecs_trace_enable(w, true);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    s = trace_text(w);
    REQUIRE(s);
    CHECK(json_valid(s));
    CHECK_EQ_INT(test_count_str(s, "\"cat\":\"frame\""), 1);
    CHECK_EQ_INT(test_count_str(s, "\"cat\":\"chunk\""), 10);
    free(s);
    CHECK_EQ_INT(ecs_write_trace(w, NULL), ECS_ERR_ARG);
    ST_REPORT("sched_trace_json");
    ecs_world_free(w);
}

static bool st_near(double a, double b) { return a - b < 1e-9 && b - a < 1e-9; }
#define CHECK_NEAR(a, b) do { double a_ = (a), b_ = (b); \
    CHECKF(st_near(a_, b_), "%s = %g, %s = %g", #a, a_, #b, b_); } while (0)

TEST(sched_simulate) {
    gen_ctx g = {0, 0, 0};
    ecs_world *w = sched_world(1, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id ca = ecs_component(w, "CA", sizeof(int), 0), cb = ecs_component(w, "CB", sizeof(int), 0);
    ecs_id cc = ecs_component(w, "CC", sizeof(int), 0), cd = ecs_component(w, "CD", sizeof(int), 0);
    /* registered C, D, A, B: a first-come queue starts C and D and leaves the
       chain A -> B for later; critical path first starts A at once */
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = gen_fn, .ctx = &g,
        .terms = {{cc, ECS_WRITE, ECS_AND}}}) == 1);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "D", .fn = gen_fn, .ctx = &g,
        .terms = {{cd, ECS_WRITE, ECS_AND}}}) == 2);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = gen_fn, .ctx = &g,
        .terms = {{ca, ECS_WRITE, ECS_AND}}}) == 3);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = gen_fn, .ctx = &g, .after = {"A"},
        .terms = {{cb, ECS_WRITE, ECS_AND}}}) == 4);
    const double d[4] = {3, 3, 4, 4};
    ecs_sim_result r;
    CHECK_EQ_INT(ecs_schedule_simulate(w, 1, d, &r), ECS_OK);
    CHECK_NEAR(r.makespan, 14);
    CHECK_NEAR(r.fifo_makespan, 14);
    CHECK_NEAR(r.total_work, 14);
    CHECK_NEAR(r.critical_path, 8);
    CHECK_NEAR(r.lower_bound, 14);
    CHECK_EQ_INT(ecs_schedule_simulate(w, 2, d, &r), ECS_OK);
    CHECK_NEAR(r.makespan, 8);       /* = max(critical path 8, work 14 / 2) */
    CHECK_NEAR(r.lower_bound, 8);
    CHECK_NEAR(r.fifo_makespan, 11); /* C, D | A | B */
    CHECK(r.fifo_makespan > r.makespan);
    CHECK_NEAR(r.critical_path, 8);
    CHECK_NEAR(r.total_work, 14);
    CHECK_EQ_INT(ecs_schedule_simulate(w, 3, d, &r), ECS_OK);
    CHECK_NEAR(r.makespan, 8);
    CHECK_NEAR(r.lower_bound, 8);
    CHECK(r.fifo_makespan >= r.makespan);
    /* errors */
    CHECK_EQ_INT(ecs_schedule_simulate(w, 0, d, &r), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_schedule_simulate(w, -1, d, &r), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_schedule_simulate(w, 2, d, NULL), ECS_ERR_ARG);
    /* NULL durations: 1 for systems never timed */
    CHECK_EQ_INT(ecs_schedule_simulate(w, 1, NULL, &r), ECS_OK);
    CHECK_NEAR(r.total_work, 4);
    CHECK_NEAR(r.makespan, 4);
    /* measured durations, once systems ran */
    ecs_timing_interval(w, 1);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* no entities: nothing ran, nothing measured */
    CHECK_EQ_INT(ecs_schedule_simulate(w, 2, NULL, &r), ECS_OK);
    CHECK_NEAR(r.total_work, 4);   /* still never timed: 1 each */
    CHECK(r.makespan >= r.lower_bound - 1e-9);
    ecs_world_free(w);

    /* stages add up; a chunked system is `threads` pieces; MAIN_THREAD systems share thread 0 */
    w = sched_world(1, ECS_ORDER_INSERTION);
    REQUIRE(w);
    ca = ecs_component(w, "CA", sizeof(int), 0);
    cb = ecs_component(w, "CB", sizeof(int), 0);
    ecs_stage s1 = ecs_stage_add(w, "mains");
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "K", .fn = gen_fn, .ctx = &g, .chunk_size = 4,
        .terms = {{ca, ECS_WRITE, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "M1", .fn = gen_fn, .ctx = &g, .stage = s1,
        .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {{ca, ECS_READ, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "M2", .fn = gen_fn, .ctx = &g, .stage = s1,
        .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {{cb, ECS_READ, ECS_AND}}}));
    const double d2[3] = {6, 2, 2};
    CHECK_EQ_INT(ecs_schedule_simulate(w, 3, d2, &r), ECS_OK);
    CHECK_NEAR(r.total_work, 10);
    CHECK_NEAR(r.makespan, 6);        /* K: 6 / 3, then M1 and M2 one after another */
    CHECK_NEAR(r.lower_bound, 4);     /* max(2, 2) + max(2, 4 / 3) */
    CHECK_NEAR(r.critical_path, 4);
    CHECK_EQ_INT(ecs_schedule_simulate(w, 1, d2, &r), ECS_OK);
    CHECK_NEAR(r.makespan, 10);
    ecs_world_free(w);

    /* an invalid graph */
    w = sched_world(1, ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ca = ecs_component(w, "CA", sizeof(int), 0);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "W1", .fn = gen_fn, .ctx = &g,
        .terms = {{ca, ECS_WRITE, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "W2", .fn = gen_fn, .ctx = &g,
        .terms = {{ca, ECS_WRITE, ECS_AND}}}));
    CHECK_EQ_INT(ecs_schedule_simulate(w, 2, NULL, &r), ECS_ERR_INVALID_GRAPH);
    ecs_world_free(w);
}

void suite_sched(void) {
    RUN(sched_determinism);
    RUN(sched_chunk_coverage);
    RUN(sched_no_conflicting_overlap);
    RUN(sched_insertion_chain_past_64_systems);
    RUN(sched_main_thread_on_thread_0);
    RUN(sched_exclusive_runs_alone);
    RUN(sched_exclusive_sees_tables_it_adds);
    RUN(sched_lifecycle);
#if defined(__linux__) && !defined(ECS_NO_THREADS)
    RUN(sched_workers_start_lazily);
#endif
    RUN(sched_structural_calls_busy_in_systems);
    RUN(sched_progress_reentrant_busy);
    RUN(sched_invalid_graph_runs_nothing);
    RUN(sched_commands_order);
    RUN(sched_dropped_commands);
    RUN(sched_system_without_terms_called_once);
    RUN(sched_plain_inline_same_as_timed);
    RUN(sched_fields_past_terms_null);
    RUN(sched_empty_query_not_called);
    RUN(sched_access_checks_debug);
    RUN(sched_stats);
    RUN(sched_trace_json);
    RUN(sched_simulate);
}
