/* game loop tests: run_if on systems and stages, enabling systems and stages
   (between frames, from MAIN_THREAD / EXCLUSIVE systems, refused elsewhere),
   intervals, fixed-step stages and step groups (steps, max_steps, max_lag,
   a sync point per step), ecs_progress_steps, the time scale, it->batch,
   stage stats and alpha, the clock in snapshots and save files, a random
   differential test against a model of the rules, bad input, and the DOT and
   trace output. The sched_ ones run at 1, 2, 3 and 8 threads and must give
   the same runs and hashes at each; systems report into per-thread slots
   read after ecs_progress (no atomics: TSan and helgrind see every hand-off
   through the library). */
#include "test.h"
#include <float.h>
#include <math.h>
#include <stdint.h>

static const int gl_threads[4] = {1, 2, 3, 8};

static ecs_world *gl_world(int threads) {
    return ecs_world_new(&(ecs_world_desc){.threads = threads});
}
static uint64_t gl_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h ^= h >> 31; h *= 0xff51afd7ed558ccdull; h ^= h >> 29;
    return h;
}

/* ---- per-thread report slots ------------------------------------------------ */
#define GL_SLOTS 9     /* threads 0..7, then "out of range" */
#define GL_SYS 64
#define GL_LOG 1024
#define GL_FRAMES 64
typedef struct gl_slot {
    long fails;              /* failed TCHECKs on this thread */
    int line;
    const char *what;
    long calls[GL_SYS];      /* fn calls per system handle */
    long runs[GL_SYS];       /* calls with it->chunk == 0: runs */
    char pad[64];
} gl_slot;
static gl_slot gl_slots[GL_SLOTS];
static struct {
    long frame;              /* the frame being run: set before each ecs_progress */
    float real_dt;           /* the dt passed: checked against it->real_dt (< 0: not) */
    const void *main_id;     /* the thread that calls ecs_progress */
    int log[GL_LOG];         /* codes of ordered systems, in run order */
    int log_n;
} gl;

static void gl_reset(void) {
    memset(gl_slots, 0, sizeof gl_slots);
    memset(&gl, 0, sizeof gl);
    gl.real_dt = -1;
    gl.main_id = test_thread_id();
}
static gl_slot *gl_of(const ecs_iter *it) {
    return &gl_slots[it->thread >= 0 && it->thread < GL_SLOTS - 1 ? it->thread : GL_SLOTS - 1];
}
/* CHECK for code inside systems: counted in the thread's slot. */
#define TCHECK(it, cond) do { if (!(cond)) { gl_slot *s_ = gl_of(it); \
    if (!s_->fails++) { s_->line = __LINE__; s_->what = #cond; } } } while (0)
#define GL_REPORT(label) gl_report(label, __LINE__)
static void gl_report(const char *label, int line) {
    for (int t = 0; t < GL_SLOTS; t++) {
        gl_slot *s = &gl_slots[t];
        if (!s->fails) continue;
        test_g.checks_failed++;
        fprintf(stderr, "  %s:%d: in a system (%s, thread %d%s): TCHECK(%s) failed %ld time(s); "
                "reported at line %d\n", __FILE__, s->line, label, t, t == GL_SLOTS - 1 ? ": out of range" : "",
                s->what, s->fails, line);
        s->fails = 0;
    }
}
static long gl_calls(ecs_system s) {
    long n = 0;
    for (int t = 0; t < GL_SLOTS; t++) n += s < GL_SYS ? gl_slots[t].calls[s] : 0;
    return n;
}
static long gl_runs(ecs_system s) {
    long n = 0;
    for (int t = 0; t < GL_SLOTS; t++) n += s < GL_SYS ? gl_slots[t].runs[s] : 0;
    return n;
}
/* Calls made on threads other than 0 (since the last clear). */
static long gl_helper_calls(void) {
    long n = 0;
    for (int t = 1; t < GL_SLOTS; t++)
        for (int k = 0; k < GL_SYS; k++) n += gl_slots[t].calls[k];
    return n;
}
#ifdef ECS_NO_THREADS
#define GL_THREADED 0
#else
#define GL_THREADED 1
#endif
/* At full scale, a threaded world must have run something on a helper. */
#define GL_CHECK_HELPERS(threads, helper_calls) do { if (GL_THREADED && (threads) > 1 && test_g.scale_pct >= 100) \
    CHECKF((helper_calls) > 0, "%d threads: everything ran on thread 0", (threads)); } while (0)
static void gl_clear_counts(void) {
    for (int t = 0; t < GL_SLOTS; t++) {
        memset(gl_slots[t].calls, 0, sizeof gl_slots[t].calls);
        memset(gl_slots[t].runs, 0, sizeof gl_slots[t].runs);
    }
}
/* One frame: sets gl.frame and gl.real_dt first. */
static ecs_result gl_progress(ecs_world *w, long frame, float dt) {
    gl.frame = frame;
    gl.real_dt = dt;
    return ecs_progress(w, dt);
}

/* ---- a generic system ------------------------------------------------------- */
typedef struct gl_sys {
    double spin;      /* microseconds per call */
    ecs_id spawn;     /* != 0: each run (chunk 0) records a new entity with this tag */
    float dt;         /* the it->dt it must see; < 0: not checked */
    int code;         /* != 0: appended to gl.log per run (only for systems run in a known order) */
    bool main;        /* must run on the ecs_progress caller's thread */
    bool bump;        /* field 0 is an int32_t WRITE term: add code + 1 to every row */
} gl_sys;

/* Counts the call (and the run, on chunk 0) in the thread's slot. */
static bool gl_count(ecs_iter *it) {
    gl_slot *s = gl_of(it);
    TCHECK(it, it->system > 0 && it->system < GL_SYS);
    if (it->system <= 0 || it->system >= GL_SYS) return false;
    s->calls[it->system]++;
    if (it->chunk == 0) s->runs[it->system]++;
    if (gl.real_dt >= 0) TCHECK(it, it->real_dt == gl.real_dt);
    return true;
}
static void gl_fn(ecs_iter *it) {
    const gl_sys *c = (const gl_sys *)it->ctx;
    if (!gl_count(it) || !c) return;
    if (c->dt >= 0) TCHECK(it, it->dt == c->dt);
    if (c->main) TCHECK(it, it->thread == 0 && test_thread_id() == gl.main_id);
    if (c->code && it->chunk == 0 && gl.log_n < GL_LOG) gl.log[gl.log_n++] = c->code;
    if (c->spawn && it->chunk == 0) {
        ecs_entity e = ecs_cmd_create(it->commands);
        TCHECK(it, e != 0);
        TCHECK(it, ecs_cmd_add(it->commands, e, c->spawn) == ECS_OK);
    }
    if (c->bump) {
        int32_t *p = (int32_t *)ecs_field(it, 0);
        TCHECK(it, p != NULL || it->count == 0);
        for (int i = 0; p && i < it->count; i++) p[i] += c->code + 1;
    }
    test_spin_us(c->spin);
}

/* ---- a condition driven by a pattern ---------------------------------------- */
typedef struct gl_cond {
    const char *pattern;     /* the answer per frame ('1' true), cycled */
    bool by_call;            /* index the pattern by this condition's call count instead */
    bool main;               /* must be asked on the ecs_progress caller's thread */
    long calls, off_main;
    long per_frame[GL_FRAMES];
} gl_cond;
static bool gl_pat(const char *p, long i) { return p[(size_t)i % strlen(p)] == '1'; }
static bool gl_cond_fn(ecs_world *w, void *ctx) {
    gl_cond *c = (gl_cond *)ctx;
    (void)w;
    long i = c->by_call ? c->calls : gl.frame;
    c->calls++;
    if (c->main && test_thread_id() != gl.main_id) c->off_main++;
    if (gl.frame >= 0 && gl.frame < GL_FRAMES) c->per_frame[gl.frame]++;
    return gl_pat(c->pattern, i);
}
static bool gl_never(ecs_world *w, void *ctx) { (void)w; (void)ctx; return false; }

/* The log so far as a string of digits (codes 1..9), for messages and compares. */
static const char *gl_log_str(void) {
    static char buf[GL_LOG + 1];
    int n = 0;
    for (int i = 0; i < gl.log_n && i < GL_LOG; i++) buf[n++] = (char)('0' + gl.log[i] % 10);
    buf[n] = 0;
    return buf;
}

static ecs_stage_stats gl_stats(ecs_world *w, ecs_stage st) {
    ecs_stage_stats s;
    memset(&s, 0, sizeof s);
    ecs_result r = ecs_stage_stats_get(w, st, &s);
    CHECK_EQ_INT(r, ECS_OK);
    return s;
}
static uint64_t gl_frames(ecs_world *w) {
    ecs_frame_stats fs;
    memset(&fs, 0, sizeof fs);
    CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
    return fs.frames;
}

/* ==== 1. system run_if ========================================================= */
/* A -> B -> C (declared), B conditional and spawning; a chunked conditional
   system; a conditional MAIN_THREAD and EXCLUSIVE system. Skipped systems
   make no call (no chunk either), record no commands, count no run; C runs
   whether B ran or not; every condition is asked once per frame, the
   MAIN_THREAD and EXCLUSIVE ones on the caller's thread. Same calls and
   hashes at every thread count. */
TEST(sched_gameloop_run_if_skips) {
    enum { FRAMES = 12, ROWS = 200, CHUNK = 16 };
    uint64_t ref = 0;
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_id pos = ecs_component(w, "Pos", sizeof(int32_t), _Alignof(int32_t));
        ecs_id made = ecs_component(w, "Made", 0, 0);
        REQUIRE(pos && made);
        REQUIRE(ecs_create_many(w, ROWS, &pos, 1, NULL) == ECS_OK);
        double spin = test_spin_len(25);
        gl_sys a = {.spin = spin, .dt = -1, .code = 1}, b = {.spin = spin, .dt = -1, .code = 2, .spawn = made},
               c = {.spin = spin, .dt = -1, .code = 3}, ch = {.spin = test_spin_len(8), .dt = -1, .spawn = made,
               .bump = true, .code = 0}, mn = {.spin = spin, .dt = -1, .main = true},
               ex = {.dt = -1, .main = true};
        gl_cond cb = {.pattern = "110"}, cch = {.pattern = "10"}, cmn = {.pattern = "1110", .main = true},
                cex = {.pattern = "100", .main = true};
        ecs_system A = ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = gl_fn, .ctx = &a});
        ecs_system B = ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = gl_fn, .ctx = &b,
            .after = {"A"}, .run_if = gl_cond_fn, .run_if_ctx = &cb});
        ecs_system C = ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = gl_fn, .ctx = &c, .after = {"B"}});
        ecs_system Ch = ecs_system_add(w, &(ecs_system_desc){.name = "Chunky", .fn = gl_fn, .ctx = &ch,
            .terms = {ECS_TERM_W(pos)}, .chunk_size = CHUNK, .run_if = gl_cond_fn, .run_if_ctx = &cch});
        ecs_system M = ecs_system_add(w, &(ecs_system_desc){.name = "Main", .fn = gl_fn, .ctx = &mn,
            .flags = ECS_SYSTEM_MAIN_THREAD, .run_if = gl_cond_fn, .run_if_ctx = &cmn});
        ecs_system X = ecs_system_add(w, &(ecs_system_desc){.name = "Excl", .fn = gl_fn, .ctx = &ex,
            .flags = ECS_SYSTEM_EXCLUSIVE, .run_if = gl_cond_fn, .run_if_ctx = &cex});
        REQUIRE(A && B && C && Ch && M && X);
        long want_b = 0, want_ch = 0, want_m = 0, want_x = 0;
        uint64_t sig = 0;
        for (long f = 0; f < FRAMES; f++) {
            long ch_calls = gl_calls(Ch);
            gl.log_n = 0;
            CHECK_EQ_INT(gl_progress(w, f, 1.0f / 60), ECS_OK);
            bool rb = gl_pat(cb.pattern, f), rch = gl_pat(cch.pattern, f);
            want_b += rb; want_ch += rch; want_m += gl_pat(cmn.pattern, f); want_x += gl_pat(cex.pattern, f);
            CHECKF(!strcmp(gl_log_str(), rb ? "123" : "13"), "threads %d frame %ld: order %s", gl_threads[ti], f,
                   gl_log_str());
            /* the chunked system: every chunk when it runs, not one call when skipped */
            CHECK_EQ_INT(gl_calls(Ch) - ch_calls, rch ? (ROWS + CHUNK - 1) / CHUNK : 0);
            sig = gl_mix(sig, ecs_world_hash(w));
            sig = gl_mix(sig, (uint64_t)gl_runs(B) << 32 | (uint64_t)gl_runs(M) << 16 | (uint64_t)gl_runs(X));
        }
        GL_REPORT("run_if");
        CHECK_EQ_INT(gl_runs(A), FRAMES);
        CHECK_EQ_INT(gl_runs(C), FRAMES);
        CHECK_EQ_INT(gl_runs(B), want_b);
        CHECK_EQ_INT(gl_runs(Ch), want_ch);
        CHECK_EQ_INT(gl_runs(M), want_m);
        CHECK_EQ_INT(gl_runs(X), want_x);
        /* each condition asked exactly once per frame */
        for (long f = 0; f < FRAMES; f++) {
            CHECK_EQ_INT(cb.per_frame[f], 1);
            CHECK_EQ_INT(cch.per_frame[f], 1);
            CHECK_EQ_INT(cmn.per_frame[f], 1);
            CHECK_EQ_INT(cex.per_frame[f], 1);
        }
        CHECK_EQ_INT(cmn.off_main, 0);
        CHECK_EQ_INT(cex.off_main, 0);
        /* skipped runs recorded no commands and count no run */
        CHECK_EQ_INT(ecs_count(w), ROWS + want_b + want_ch);
        ecs_system_stats st;
        CHECK_EQ_INT(ecs_system_stats_get(w, B, &st), ECS_OK);
        CHECK_EQ_INT(st.runs, want_b);
        CHECK_EQ_INT(ecs_system_stats_get(w, Ch, &st), ECS_OK);
        CHECK_EQ_INT(st.runs, want_ch);
        CHECK_EQ_INT(ecs_system_stats_get(w, X, &st), ECS_OK);
        CHECK_EQ_INT(st.runs, want_x);
        CHECK_EQ_INT(ecs_system_stats_get(w, C, &st), ECS_OK);
        CHECK_EQ_INT(st.runs, FRAMES);
        if (ti == 0) ref = sig;
        else CHECKF(sig == ref, "threads %d: a different run than at 1 thread", gl_threads[ti]);
        ecs_world_free(w);
    }
}

/* A condition on a resource that a predecessor of the same stage writes sees
   this turn's value: declared order, inferred order, a skipped system in
   between, and a chunked reader. */
typedef struct { int32_t v; } gl_counter;
typedef struct gl_res_ctx {
    ecs_id res;
    long nulls;                 /* the condition got no resource */
    long seen[GL_FRAMES];       /* the value the reader saw, per frame (0: not run) */
    long cond_seen[GL_FRAMES];  /* the value the condition saw */
} gl_res_ctx;
static void gl_res_writer(ecs_iter *it) {
    gl_res_ctx *c = (gl_res_ctx *)it->ctx;
    gl_counter *v = (gl_counter *)ecs_resource_get(it->world, c->res);
    TCHECK(it, v != NULL);
    if (v) v->v++;
    test_spin_us(test_spin_len(20));
}
static bool gl_res_even(ecs_world *w, void *ctx) {
    gl_res_ctx *c = (gl_res_ctx *)ctx;
    const gl_counter *v = (const gl_counter *)ecs_resource_get(w, c->res);
    if (!v) { c->nulls++; return false; }
    if (gl.frame >= 0 && gl.frame < GL_FRAMES) c->cond_seen[gl.frame] = v->v;
    return v->v % 2 == 0;
}
static void gl_res_reader(ecs_iter *it) {
    gl_res_ctx *c = (gl_res_ctx *)it->ctx;
    const gl_counter *v = (const gl_counter *)ecs_resource_get(it->world, c->res);
    TCHECK(it, v != NULL);
    if (!v) return;
    TCHECK(it, v->v == gl.frame + 1);
    if (it->chunk == 0 && gl.frame < GL_FRAMES) c->seen[gl.frame] = v->v;
    gl_of(it)->runs[it->system < GL_SYS ? it->system : 0] += it->chunk == 0;
}
TEST(sched_gameloop_run_if_sees_this_turn) {
    enum { FRAMES = 10 };
    for (int variant = 0; variant < 4; variant++)
        for (int ti = 0; ti < 4; ti++) {
            gl_reset();
            ecs_world *w = gl_world(gl_threads[ti]);
            REQUIRE(w);
            gl_res_ctx c;
            memset(&c, 0, sizeof c);
            c.res = ECS_RESOURCE(w, gl_counter, &(gl_counter){0});
            ecs_id pos = ecs_component(w, "Pos", sizeof(int32_t), _Alignof(int32_t));
            REQUIRE(c.res && pos);
            REQUIRE(ecs_create_many(w, 100, &pos, 1, NULL) == ECS_OK);
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Writer", .fn = gl_res_writer, .ctx = &c,
                .writes = {c.res}}));
            gl_sys mid = {.dt = -1};
            if (variant == 2)   /* a system that never runs, between the two */
                REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Mid", .fn = gl_fn, .ctx = &mid,
                    .after = {"Writer"}, .run_if = gl_never}));
            ecs_system_desc rd = {.name = "Reader", .fn = gl_res_reader, .ctx = &c, .reads = {c.res},
                .run_if = gl_res_even, .run_if_ctx = &c};
            if (variant == 0) rd.after[0] = "Writer";
            if (variant == 2) rd.after[0] = "Mid";
            if (variant == 3) {   /* chunked: the condition is asked once, before the chunks */
                rd.terms[0] = (ecs_term)ECS_TERM_R(pos);
                rd.chunk_size = 10;
            }
            ecs_system r = ecs_system_add(w, &rd);
            REQUIRE(r);
            for (long f = 0; f < FRAMES; f++) CHECK_EQ_INT(gl_progress(w, f, 0.5f), ECS_OK);
            GL_REPORT("run_if sees this turn");
            CHECK_EQ_INT(c.nulls, 0);
            for (long f = 0; f < FRAMES; f++) {
                /* the writer made it f + 1 before the condition was asked */
                CHECKF(c.cond_seen[f] == f + 1, "variant %d, threads %d, frame %ld: the condition saw %ld",
                       variant, gl_threads[ti], f, c.cond_seen[f]);
                CHECK_EQ_INT(c.seen[f], (f + 1) % 2 == 0 ? f + 1 : 0);
            }
            CHECK_EQ_INT(gl_runs(r), FRAMES / 2);
            ecs_world_free(w);
        }
}

/* A condition reading an undeclared resource is refused like the system
   itself would be: ECS_ERR_ACCESS naming the system; declared, it is fine. */
/* An independent_of partner that conflicts never runs beside the system, so
   nor beside its run_if: Long writes the resource (odd while it is inside,
   even between), Cond's run_if reads it and must never see it odd. Cond
   becomes ready (after Short) while Long may be running on another thread. */
typedef struct gl_partner { volatile int value; } gl_partner;
typedef struct gl_pctx { ecs_id res; int odd_seen, asked, ran; double spin; } gl_pctx;
static void gl_long_writer(ecs_iter *it) {
    gl_pctx *c = (gl_pctx *)it->ctx;
    gl_partner *p = (gl_partner *)ecs_resource_get(it->world, c->res);
    if (!p) return;
    p->value++;   /* odd: inside */
    test_spin_us(c->spin);
    p->value++;
}
static void gl_short(ecs_iter *it) { (void)it; }
static bool gl_partner_cond(ecs_world *w, void *ctx) {
    gl_pctx *c = (gl_pctx *)ctx;
    const gl_partner *p = (const gl_partner *)ecs_resource_get(w, c->res);
    c->asked++;
    if (p && (p->value & 1)) c->odd_seen++;
    return true;
}
static void gl_cond_sys(ecs_iter *it) {
    gl_pctx *c = (gl_pctx *)it->ctx;
    if (it->chunk == 0) c->ran++;   /* one chunk counts the run (the others run beside it) */
}
TEST(sched_gameloop_run_if_partner) {
    for (int ti = 0; ti < 4; ti++)
        for (int chunked = 0; chunked < 2; chunked++) {
            ecs_world *w = gl_world(gl_threads[ti]);
            REQUIRE(w);
            gl_pctx c = {0, 0, 0, 0, test_spin_len(200)};
            c.res = ecs_resource(w, "Partnered", sizeof(gl_partner), 0, NULL);
            ecs_id pos = ecs_component(w, "PPos", sizeof(int), 0);
            REQUIRE(c.res && pos);
            for (int i = 0; i < 40; i++) {
                ecs_entity e = ecs_create(w);
                REQUIRE(ecs_set(w, e, pos, &i) == ECS_OK);
            }
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Long", .fn = gl_long_writer, .ctx = &c,
                                                         .writes = {c.res}}));
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Short", .fn = gl_short}));
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Cond", .fn = gl_cond_sys, .ctx = &c,
                .terms = {ECS_TERM_R(pos)}, .reads = {c.res}, .after = {"Short"}, .independent_of = {"Long"},
                .run_if = gl_partner_cond, .run_if_ctx = &c, .chunk_size = chunked ? 8 : 0}));
            long frames = test_scaled(60, 10);
            for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0.1f), ECS_OK);
            CHECKF(c.odd_seen == 0, "threads %d%s: the run_if ran beside its conflicting partner %d times",
                   gl_threads[ti], chunked ? ", chunked" : "", c.odd_seen);
            CHECK_EQ_INT(c.asked, frames);
            CHECK_EQ_INT(c.ran, frames);
            ecs_world_free(w);
        }
}

TEST(sched_gameloop_run_if_access) {
#if ECS_CHECK_ACCESS
    for (int ti = 0; ti < 4; ti++)
        for (int main_thread = 0; main_thread < 2; main_thread++) {
            gl_reset();
            ecs_world *w = gl_world(gl_threads[ti]);
            REQUIRE(w);
            gl_res_ctx c;
            memset(&c, 0, sizeof c);
            c.res = ECS_RESOURCE(w, gl_counter, &(gl_counter){0});
            gl_sys s = {.dt = -1};
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Peeker", .fn = gl_fn, .ctx = &s,
                .flags = main_thread ? ECS_SYSTEM_MAIN_THREAD : 0u, .run_if = gl_res_even, .run_if_ctx = &c}));
            CHECK_EQ_INT(gl_progress(w, 0, 0.1f), ECS_ERR_ACCESS);
            CHECKF(strstr(ecs_last_error(w), "Peeker") != NULL, "%s", ecs_last_error(w));
            CHECK(c.nulls >= 1);
            ecs_world_free(w);

            w = gl_world(gl_threads[ti]);
            REQUIRE(w);
            memset(&c, 0, sizeof c);
            c.res = ECS_RESOURCE(w, gl_counter, &(gl_counter){0});
            ecs_system ok = ecs_system_add(w, &(ecs_system_desc){.name = "Declared", .fn = gl_fn, .ctx = &s,
                .flags = main_thread ? ECS_SYSTEM_MAIN_THREAD : 0u, .reads = {c.res}, .run_if = gl_res_even,
                .run_if_ctx = &c});
            REQUIRE(ok);
            CHECK_EQ_INT(gl_progress(w, 0, 0.1f), ECS_OK);
            CHECK_EQ_INT(c.nulls, 0);
            CHECK_EQ_INT(gl_runs(ok), 1);   /* the value is 0: even */
            GL_REPORT("run_if access");
            ecs_world_free(w);
        }
#endif
}

/* ==== 3. intervals ============================================================= */
/* Counted by the stage's turns: frames for an ordinary stage, steps for a
   fixed-step one; turns a stage skips (disabled, run_if false) do not count;
   a disabled system's turns do. The expected runs come from a small loop. */
TEST(sched_gameloop_interval) {
    enum { FRAMES = 16 };
    uint64_t ref = 0;
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_stage fixed = ecs_stage_init(w, &(ecs_stage_desc){.name = "Fixed", .fixed_dt = 0.25f});
        ecs_stage paused = ecs_stage_add(w, "Paused");
        gl_cond gate = {.pattern = "1100111"};
        ecs_stage gated = ecs_stage_init(w, &(ecs_stage_desc){.name = "Gated", .run_if = gl_cond_fn,
            .run_if_ctx = &gate});
        REQUIRE(fixed && paused && gated);
        gl_sys any = {.spin = test_spin_len(20), .dt = -1}, step = {.spin = test_spin_len(20), .dt = 0.25f};
        ecs_system e3 = ecs_system_add(w, &(ecs_system_desc){.name = "E3", .fn = gl_fn, .ctx = &any, .interval = 3});
        ecs_system e1 = ecs_system_add(w, &(ecs_system_desc){.name = "E1", .fn = gl_fn, .ctx = &any, .interval = 1});
        ecs_system e0 = ecs_system_add(w, &(ecs_system_desc){.name = "E0", .fn = gl_fn, .ctx = &any});
        ecs_system d3 = ecs_system_add(w, &(ecs_system_desc){.name = "D3", .fn = gl_fn, .ctx = &any, .interval = 3});
        ecs_system s4 = ecs_system_add(w, &(ecs_system_desc){.name = "S4", .fn = gl_fn, .ctx = &step,
            .interval = 4, .stage = fixed});
        ecs_system s3 = ecs_system_add(w, &(ecs_system_desc){.name = "S3", .fn = gl_fn, .ctx = &step,
            .interval = 3, .stage = fixed});
        ecs_system p3 = ecs_system_add(w, &(ecs_system_desc){.name = "P3", .fn = gl_fn, .ctx = &any,
            .interval = 3, .stage = paused});
        ecs_system g2 = ecs_system_add(w, &(ecs_system_desc){.name = "G2", .fn = gl_fn, .ctx = &any,
            .interval = 2, .stage = gated});
        REQUIRE(e3 && e1 && e0 && d3 && s4 && s3 && p3 && g2);
        long ft = 0, pt = 0, gt = 0;   /* the model's turn counters */
        uint64_t sig = 0;
        for (long f = 0; f < FRAMES; f++) {
            bool d3_on = !(f == 3 || f == 4), fixed_on = f != 5, paused_on = !(f >= 3 && f <= 7);
            CHECK_EQ_INT(ecs_system_enable(w, d3, d3_on), ECS_OK);
            CHECK_EQ_INT(ecs_stage_enable(w, fixed, fixed_on), ECS_OK);
            CHECK_EQ_INT(ecs_stage_enable(w, paused, paused_on), ECS_OK);
            gl_clear_counts();
            CHECK_EQ_INT(gl_progress(w, f, 0.5f), ECS_OK);
            long want_s4 = 0, want_s3 = 0, want_p3 = 0, want_g2 = 0;
            if (fixed_on)
                for (int k = 0; k < 2; k++, ft++) { want_s4 += ft % 4 == 0; want_s3 += ft % 3 == 0; }
            if (paused_on) want_p3 = pt++ % 3 == 0;
            if (gl_pat(gate.pattern, f)) want_g2 = gt++ % 2 == 0;
            CHECKF(gl_runs(e3) == (f % 3 == 0) && gl_runs(e1) == 1 && gl_runs(e0) == 1 &&
                   gl_runs(d3) == (d3_on && f % 3 == 0) && gl_runs(s4) == want_s4 && gl_runs(s3) == want_s3 &&
                   gl_runs(p3) == want_p3 && gl_runs(g2) == want_g2,
                   "threads %d frame %ld: E3 %ld E1 %ld E0 %ld D3 %ld S4 %ld/%ld S3 %ld/%ld P3 %ld/%ld G2 %ld/%ld",
                   gl_threads[ti], f, gl_runs(e3), gl_runs(e1), gl_runs(e0), gl_runs(d3), gl_runs(s4), want_s4,
                   gl_runs(s3), want_s3, gl_runs(p3), want_p3, gl_runs(g2), want_g2);
            sig = gl_mix(sig, (uint64_t)(gl_runs(s4) * 7 + gl_runs(s3) * 3 + gl_runs(p3) * 11 + gl_runs(g2) * 13));
        }
        GL_REPORT("interval");
        CHECK_EQ_INT(gl_stats(w, 0).steps, FRAMES);
        CHECK_EQ_INT(gl_stats(w, fixed).steps, ft);
        CHECK_EQ_INT(gl_stats(w, paused).steps, pt);
        CHECK_EQ_INT(gl_stats(w, gated).steps, gt);
        if (ti == 0) ref = sig;
        else CHECK(sig == ref);
        ecs_world_free(w);
    }
}

/* ==== 4. enabling ============================================================== */
/* Between frames: flags, skipping, unknown ids; snapshots do not store the
   flags. */
TEST(gameloop_enable_between_frames) {
    gl_reset();
    ecs_world *w = gl_world(2);
    REQUIRE(w);
    ecs_id pos = ecs_component(w, "Pos", sizeof(int32_t), _Alignof(int32_t));
    REQUIRE(ecs_create_many(w, 10, &pos, 1, NULL) == ECS_OK);
    ecs_stage late = ecs_stage_add(w, "late");
    gl_sys s = {.dt = -1, .code = 1, .bump = true}, t = {.dt = -1};
    ecs_system a = ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = gl_fn, .ctx = &s,
        .terms = {ECS_TERM_W(pos)}});
    ecs_system b = ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = gl_fn, .ctx = &t, .stage = late});
    REQUIRE(late && a && b);
    CHECK(ecs_system_enabled(w, a) && ecs_system_enabled(w, b));
    CHECK(ecs_stage_enabled(w, 0) && ecs_stage_enabled(w, late));
    CHECK_EQ_INT(gl_progress(w, 0, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 1 && gl_runs(b) == 1);
    CHECK_EQ_INT(ecs_system_enable(w, a, false), ECS_OK);
    CHECK(!ecs_system_enabled(w, a));
    CHECK_EQ_INT(ecs_system_enable(w, a, false), ECS_OK);   /* again: no change */
    uint64_t h = ecs_world_hash(w);
    CHECK_EQ_INT(gl_progress(w, 1, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 1 && gl_runs(b) == 2);
    CHECK(ecs_world_hash(w) == h);   /* it did not touch its rows */
    CHECK_EQ_INT(ecs_system_enable(w, a, true), ECS_OK);
    CHECK(ecs_system_enabled(w, a));
    CHECK_EQ_INT(gl_progress(w, 2, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 2 && gl_runs(b) == 3);
    /* a stage */
    CHECK_EQ_INT(ecs_stage_enable(w, late, false), ECS_OK);
    CHECK(!ecs_stage_enabled(w, late));
    CHECK_EQ_INT(gl_progress(w, 3, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 3 && gl_runs(b) == 3);
    CHECK(ecs_system_enabled(w, b));   /* the system's own flag is untouched */
    CHECK_EQ_INT(gl_stats(w, late).steps, 3);
    CHECK_EQ_INT(gl_stats(w, late).steps_last, 0);
    CHECK_EQ_INT(ecs_stage_enable(w, late, true), ECS_OK);
    /* stage 0 too */
    CHECK_EQ_INT(ecs_stage_enable(w, 0, false), ECS_OK);
    CHECK_EQ_INT(gl_progress(w, 4, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 3 && gl_runs(b) == 4);
    CHECK_EQ_INT(ecs_stage_enable(w, 0, true), ECS_OK);
    /* unknown ids */
    uint32_t n = ecs_system_count(w);
    CHECK_EQ_INT(ecs_system_enable(w, 0, false), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_system_enable(w, n + 1, false), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_enable(w, ecs_stage_count(w), false), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_enable(w, 1000, true), ECS_ERR_ARG);
    CHECK(!ecs_system_enabled(w, 0) && !ecs_system_enabled(w, n + 1));
    CHECK(!ecs_stage_enabled(w, ecs_stage_count(w)));
    CHECK_EQ_INT(ecs_system_enable(NULL, a, false), ECS_ERR_ARG);
    CHECK(!ecs_system_enabled(NULL, a));
    CHECK(ecs_system_enabled(w, a) && ecs_stage_enabled(w, late));   /* the failures changed nothing */
    /* snapshots: the flags are configuration */
    ecs_snapshot *snap = ecs_snapshot_take(w);   /* everything enabled */
    REQUIRE(snap);
    CHECK_EQ_INT(ecs_system_enable(w, a, false), ECS_OK);
    CHECK_EQ_INT(ecs_stage_enable(w, late, false), ECS_OK);
    CHECK_EQ_INT(ecs_snapshot_restore(w, snap), ECS_OK);
    CHECK(!ecs_system_enabled(w, a));
    CHECK(!ecs_stage_enabled(w, late));
    gl_clear_counts();
    CHECK_EQ_INT(gl_progress(w, 5, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 0 && gl_runs(b) == 0);
    ecs_snapshot_free(snap);
    snap = ecs_snapshot_take(w);   /* taken disabled, restored enabled: stays enabled */
    REQUIRE(snap);
    CHECK_EQ_INT(ecs_system_enable(w, a, true), ECS_OK);
    CHECK_EQ_INT(ecs_stage_enable(w, late, true), ECS_OK);
    CHECK_EQ_INT(ecs_snapshot_restore(w, snap), ECS_OK);
    CHECK(ecs_system_enabled(w, a) && ecs_stage_enabled(w, late));
    CHECK_EQ_INT(gl_progress(w, 6, 0.1f), ECS_OK);
    CHECK(gl_runs(a) == 1 && gl_runs(b) == 1);
    ecs_snapshot_free(snap);
    GL_REPORT("enable between frames");
    ecs_world_free(w);
}

/* From inside systems: a MAIN_THREAD system in stage 0 and an EXCLUSIVE one
   in stage 1 enable and disable systems and stages (effective at the next
   turn of the target's stage: this frame for a later stage, next frame for
   the same or an earlier one); an ordinary system is refused with
   ECS_ERR_BUSY at any thread count. */
typedef struct gl_ctl {
    ecs_system early, same, later, later2;
    ecs_stage late, late2;
    long bad;         /* results other than ECS_OK (controllers) */
    long busy, other; /* the ordinary system's results: ECS_ERR_BUSY and anything else */
    long flag_wrong;  /* ecs_system_enabled / ecs_stage_enabled disagreeing with the last set */
} gl_ctl;
static void gl_ctl_sys(gl_ctl *c, ecs_world *w, ecs_system s, bool on) {
    if (ecs_system_enable(w, s, on) != ECS_OK) c->bad++;
    if (ecs_system_enabled(w, s) != on) c->flag_wrong++;
}
static void gl_ctl_stage(gl_ctl *c, ecs_world *w, ecs_stage s, bool on) {
    if (ecs_stage_enable(w, s, on) != ECS_OK) c->bad++;
    if (ecs_stage_enabled(w, s) != on) c->flag_wrong++;
}
static void gl_ctl_main(ecs_iter *it) {   /* MAIN_THREAD, stage 0 */
    gl_ctl *c = (gl_ctl *)it->ctx;
    gl_count(it);
    if (gl.frame == 2) { gl_ctl_sys(c, it->world, c->same, false); gl_ctl_sys(c, it->world, c->later, false); }
    if (gl.frame == 5) { gl_ctl_sys(c, it->world, c->same, true); gl_ctl_sys(c, it->world, c->later, true); }
    if (gl.frame == 8) gl_ctl_stage(c, it->world, c->late2, false);
    if (gl.frame == 9) gl_ctl_stage(c, it->world, c->late2, true);
    if (gl.frame == 10) gl_ctl_stage(c, it->world, c->late, false);
    if (gl.frame == 11) gl_ctl_stage(c, it->world, c->late, true);
}
static void gl_ctl_excl(ecs_iter *it) {   /* EXCLUSIVE, stage 1 */
    gl_ctl *c = (gl_ctl *)it->ctx;
    gl_count(it);
    if (gl.frame == 3) { gl_ctl_sys(c, it->world, c->early, false); gl_ctl_sys(c, it->world, c->later2, false); }
    if (gl.frame == 6) { gl_ctl_sys(c, it->world, c->early, true); gl_ctl_sys(c, it->world, c->later2, true); }
}
static void gl_ctl_worker(ecs_iter *it) {   /* an ordinary system: refused */
    gl_ctl *c = (gl_ctl *)it->ctx;
    gl_count(it);
    ecs_result r[4] = {ecs_system_enable(it->world, c->same, false), ecs_system_enable(it->world, c->early, true),
                       ecs_stage_enable(it->world, c->late2, false), ecs_stage_enable(it->world, c->late, true)};
    for (int i = 0; i < 4; i++) { if (r[i] == ECS_ERR_BUSY) c->busy++; else c->other++; }
}
static void gl_scaler(ecs_iter *it) {   /* an ordinary system setting the scale: refused */
    gl_count(it);
    ecs_world_set_time_scale(it->world, 3.0f);
}
TEST(sched_gameloop_enable_inside) {
    enum { FRAMES = 13 };
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        gl_ctl c;
        memset(&c, 0, sizeof c);
        c.late = ecs_stage_add(w, "late");
        c.late2 = ecs_stage_add(w, "late2");
        gl_sys any = {.spin = test_spin_len(20), .dt = -1};
        ecs_system ctl = ecs_system_add(w, &(ecs_system_desc){.name = "Ctl", .fn = gl_ctl_main, .ctx = &c,
            .flags = ECS_SYSTEM_MAIN_THREAD});
        c.early = ecs_system_add(w, &(ecs_system_desc){.name = "Early", .fn = gl_fn, .ctx = &any});
        c.same = ecs_system_add(w, &(ecs_system_desc){.name = "Same", .fn = gl_fn, .ctx = &any, .after = {"Ctl"}});
        ecs_system wk = ecs_system_add(w, &(ecs_system_desc){.name = "Worker", .fn = gl_ctl_worker, .ctx = &c});
        ecs_system ex = ecs_system_add(w, &(ecs_system_desc){.name = "Ex", .fn = gl_ctl_excl, .ctx = &c,
            .flags = ECS_SYSTEM_EXCLUSIVE, .stage = c.late});
        c.later = ecs_system_add(w, &(ecs_system_desc){.name = "Later", .fn = gl_fn, .ctx = &any, .stage = c.late});
        c.later2 = ecs_system_add(w, &(ecs_system_desc){.name = "Later2", .fn = gl_fn, .ctx = &any,
            .stage = c.late, .after = {"Ex"}});
        ecs_system l2 = ecs_system_add(w, &(ecs_system_desc){.name = "L2", .fn = gl_fn, .ctx = &any, .stage = c.late2});
        REQUIRE(c.late && c.late2 && ctl && c.early && c.same && wk && ex && c.later && c.later2 && l2);
        for (long f = 0; f < FRAMES; f++) {
            gl_clear_counts();
            CHECK_EQ_INT(gl_progress(w, f, 0.1f), ECS_OK);
            struct { ecs_system s; bool want; const char *name; } rows[] = {
                {ctl, true, "Ctl"}, {wk, true, "Worker"},
                {c.early, !(f >= 4 && f <= 6), "Early"},   /* off from stage 1 at 3 (stage 0 done): 4..6 */
                {c.same, !(f >= 3 && f <= 5), "Same"},     /* off in its own stage at 2: 3..5 */
                {c.later, !(f >= 2 && f <= 4) && f != 10, "Later"},   /* off from stage 0 at 2: 2..4 */
                {c.later2, !(f >= 4 && f <= 6) && f != 10, "Later2"}, /* off in its own stage at 3: 4..6 */
                {ex, f != 10, "Ex"}, {l2, f != 8, "L2"}};
            for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
                CHECKF(gl_runs(rows[i].s) == rows[i].want, "threads %d frame %ld: %s ran %ld time(s)",
                       gl_threads[ti], f, rows[i].name, gl_runs(rows[i].s));
        }
        GL_REPORT("enable inside");
        CHECK_EQ_INT(c.bad, 0);
        CHECK_EQ_INT(c.flag_wrong, 0);
        CHECK_EQ_INT(c.busy, 4 * FRAMES);
        CHECK_EQ_INT(c.other, 0);
        CHECK(ecs_system_enabled(w, c.same) && ecs_system_enabled(w, c.early) && ecs_stage_enabled(w, c.late));
        /* the time scale from an ordinary system: refused, and the call being void, the frame reports it */
        ecs_system sc = ecs_system_add(w, &(ecs_system_desc){.name = "Scaler", .fn = gl_scaler});
        REQUIRE(sc);
        ecs_result r = gl_progress(w, FRAMES, 0.1f);
        CHECKF(r == ECS_ERR_ACCESS && strstr(ecs_last_error(w), "Scaler"), "%s: %s",
               ecs_result_str(r), ecs_last_error(w));
        CHECK_EQ_INT(gl_runs(sc), 1);
        CHECK(ecs_world_time_scale(w) == 1.0f);
        ecs_world_free(w);
    }
}

/* Inside a step group the next turn of a stage is its next step: a
   MAIN_THREAD system of the fixed-step stage switching a system of its own
   stage off affects the next step, one of the member stage this very step;
   an EXCLUSIVE system of the member switching one of the first stage off
   affects the next step too. */
typedef struct gl_step_ctl {
    ecs_system fa, fb, ma;
    long step;          /* the controller's calls this frame */
    long bad;
} gl_step_ctl;
static void gl_step_ctl_fn(ecs_iter *it) {   /* MAIN_THREAD, in F */
    gl_step_ctl *c = (gl_step_ctl *)it->ctx;
    gl_count(it);
    if (gl.log_n < GL_LOG) gl.log[gl.log_n++] = 1;
    if (gl.frame == 1 && c->step == 0) {
        c->bad += ecs_system_enable(it->world, c->fa, false) != ECS_OK;
        c->bad += ecs_system_enable(it->world, c->ma, false) != ECS_OK;
    }
    if (gl.frame == 1 && c->step == 1) {
        c->bad += ecs_system_enable(it->world, c->fa, true) != ECS_OK;
        c->bad += ecs_system_enable(it->world, c->ma, true) != ECS_OK;
    }
    c->step++;
}
static void gl_step_excl_fn(ecs_iter *it) {   /* EXCLUSIVE, in M */
    gl_step_ctl *c = (gl_step_ctl *)it->ctx;
    gl_count(it);
    if (gl.log_n < GL_LOG) gl.log[gl.log_n++] = 4;
    if (gl.frame == 1 && c->step == 1) c->bad += ecs_system_enable(it->world, c->fb, false) != ECS_OK;
    if (gl.frame == 1 && c->step == 2) c->bad += ecs_system_enable(it->world, c->fb, true) != ECS_OK;
}
TEST(sched_gameloop_enable_in_steps) {
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.25f});
        ecs_stage m = ecs_stage_init(w, &(ecs_stage_desc){.name = "M", .step_with = f});
        REQUIRE(f && m);
        gl_step_ctl c;
        memset(&c, 0, sizeof c);
        gl_sys fa = {.dt = 0.25f, .code = 2, .spin = test_spin_len(10)}, fb = {.dt = 0.25f, .code = 3},
               ma = {.dt = 0.25f, .code = 5}, fill = {.dt = 0.25f, .spin = test_spin_len(20)};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Ctl", .fn = gl_step_ctl_fn, .ctx = &c, .stage = f,
            .flags = ECS_SYSTEM_MAIN_THREAD}));
        c.fa = ecs_system_add(w, &(ecs_system_desc){.name = "Fa", .fn = gl_fn, .ctx = &fa, .stage = f,
            .after = {"Ctl"}});
        c.fb = ecs_system_add(w, &(ecs_system_desc){.name = "Fb", .fn = gl_fn, .ctx = &fb, .stage = f,
            .after = {"Ctl", "Fa"}});
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Ff", .fn = gl_fn, .ctx = &fill, .stage = f}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Mb", .fn = gl_step_excl_fn, .ctx = &c, .stage = m,
            .flags = ECS_SYSTEM_EXCLUSIVE}));
        c.ma = ecs_system_add(w, &(ecs_system_desc){.name = "Ma", .fn = gl_fn, .ctx = &ma, .stage = m,
            .after = {"Mb"}});
        REQUIRE(c.fa && c.fb && c.ma);
        static const char *want[3] = {"123451234512345", "1234" "145" "12345", "123451234512345"};
        for (long fr = 0; fr < 3; fr++) {
            gl.log_n = 0;
            c.step = 0;
            CHECK_EQ_INT(gl_progress(w, fr, 0.75f), ECS_OK);
            CHECKF(!strcmp(gl_log_str(), want[fr]), "threads %d frame %ld: ran %s, want %s", gl_threads[ti], fr,
                   gl_log_str(), want[fr]);
        }
        CHECK_EQ_INT(c.bad, 0);
        GL_REPORT("enable in steps");
        ecs_world_free(w);
    }
}

/* ==== 5. stage run_if ========================================================== */
/* Asked once per frame on the caller's thread, at the start of the stage
   (after earlier stages wrote what it reads); false: none of its systems,
   no turn. On a fixed-step stage: once per frame, before time is added
   (false: no steps, nothing accumulated); on a member: before each step.
   Structural calls inside it are refused. */
typedef struct gl_state { int32_t mode; } gl_state;
typedef struct gl_stage_cond {
    ecs_id state, tag;
    ecs_entity victim;
    long calls, off_main, made, add_not_busy;
    long per_frame[GL_FRAMES];
} gl_stage_cond;
static const char gl_mode_pattern[] = "1101001110";
static void gl_set_mode(ecs_iter *it) {
    gl_stage_cond *c = (gl_stage_cond *)it->ctx;
    gl_state *s = (gl_state *)ecs_resource_get(it->world, c->state);
    TCHECK(it, s != NULL);
    if (s) s->mode = gl_pat(gl_mode_pattern, gl.frame) ? 1 : 0;
}
static bool gl_mode_cond(ecs_world *w, void *ctx) {
    gl_stage_cond *c = (gl_stage_cond *)ctx;
    c->calls++;
    if (gl.frame >= 0 && gl.frame < GL_FRAMES) c->per_frame[gl.frame]++;
    if (test_thread_id() != gl.main_id) c->off_main++;
    if (ecs_create(w) != 0) c->made++;
    if (ecs_add(w, c->victim, c->tag) != ECS_ERR_BUSY) c->add_not_busy++;
    const gl_state *s = (const gl_state *)ecs_resource_get(w, c->state);
    return s && s->mode == 1;
}
TEST(sched_gameloop_stage_run_if) {
    enum { FRAMES = 20 };
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        gl_stage_cond sc;
        memset(&sc, 0, sizeof sc);
        sc.state = ECS_RESOURCE(w, gl_state, &(gl_state){0});
        ecs_id tag = sc.tag = ecs_component(w, "Tag", 0, 0);   /* what the condition tries to add */
        ecs_id pos = ecs_component(w, "Pos", sizeof(int32_t), _Alignof(int32_t));
        REQUIRE(sc.state && tag && pos);
        sc.victim = ecs_create(w);
        REQUIRE(ecs_create_many(w, 64, &pos, 1, NULL) == ECS_OK);
        size_t count0 = ecs_count(w);
        gl_cond phys_if = {.pattern = "1101", .main = true}, member_if = {.pattern = "10", .by_call = true};
        ecs_stage play = ecs_stage_init(w, &(ecs_stage_desc){.name = "Play", .run_if = gl_mode_cond,
            .run_if_ctx = &sc});
        ecs_stage phys = ecs_stage_init(w, &(ecs_stage_desc){.name = "Phys", .fixed_dt = 0.25f, .run_if = gl_cond_fn,
            .run_if_ctx = &phys_if});
        ecs_stage physm = ecs_stage_init(w, &(ecs_stage_desc){.name = "PhysM", .step_with = phys,
            .run_if = gl_cond_fn, .run_if_ctx = &member_if});
        REQUIRE(play && phys && physm);
        gl_sys any = {.spin = test_spin_len(20), .dt = -1}, chunk = {.dt = -1, .bump = true, .code = 0},
               step = {.spin = test_spin_len(10), .dt = 0.25f};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "SetMode", .fn = gl_set_mode, .ctx = &sc,
            .writes = {sc.state}}));
        ecs_system p1 = ecs_system_add(w, &(ecs_system_desc){.name = "P1", .fn = gl_fn, .ctx = &any, .stage = play});
        ecs_system p2 = ecs_system_add(w, &(ecs_system_desc){.name = "P2", .fn = gl_fn, .ctx = &chunk, .stage = play,
            .terms = {ECS_TERM_W(pos)}, .chunk_size = 8});
        ecs_system f1 = ecs_system_add(w, &(ecs_system_desc){.name = "F1", .fn = gl_fn, .ctx = &step, .stage = phys});
        ecs_system m1 = ecs_system_add(w, &(ecs_system_desc){.name = "M1", .fn = gl_fn, .ctx = &step, .stage = physm});
        REQUIRE(p1 && p2 && f1 && m1);
        long play_turns = 0, phys_steps = 0, member_calls = 0, member_turns = 0;
        double acc = 0;
        for (long f = 0; f < FRAMES; f++) {
            gl_clear_counts();
            float dt = 0.375f;
            CHECK_EQ_INT(gl_progress(w, f, dt), ECS_OK);
            bool on = gl_pat(gl_mode_pattern, f);   /* this frame's mode, set by stage 0 */
            play_turns += on;
            CHECKF(gl_runs(p1) == on && gl_runs(p2) == on, "threads %d frame %ld: P1 %ld P2 %ld, want %d",
                   gl_threads[ti], f, gl_runs(p1), gl_runs(p2), on);
            CHECK_EQ_INT(gl_calls(p2), on ? 8 : 0);
            ecs_stage_stats ps = gl_stats(w, play);
            CHECK_EQ_INT(ps.steps, play_turns);
            CHECK_EQ_INT(ps.steps_last, on ? 1 : 0);
            /* the fixed-step stage: no time added on a false frame */
            int steps = 0;
            if (gl_pat(phys_if.pattern, f)) {
                acc += dt;
                while (acc >= 0.25) { acc -= 0.25; steps++; }
            }
            phys_steps += steps;
            long member_runs = 0;
            for (int k = 0; k < steps; k++) member_runs += gl_pat(member_if.pattern, member_calls++);
            member_turns += member_runs;
            CHECKF(gl_runs(f1) == steps && gl_runs(m1) == member_runs,
                   "threads %d frame %ld: F1 %ld (want %d), M1 %ld (want %ld)", gl_threads[ti], f, gl_runs(f1),
                   steps, gl_runs(m1), member_runs);
            CHECK(fabs(ecs_stage_alpha(w, phys) - acc / 0.25) < 1e-6);
            CHECK_EQ_INT(gl_stats(w, phys).steps_last, steps);
            CHECK_EQ_INT(gl_stats(w, physm).steps_last, member_runs);
            CHECK_EQ_INT(phys_if.per_frame[f], 1);   /* once per frame, not per step */
        }
        GL_REPORT("stage run_if");
        for (long f = 0; f < FRAMES; f++) CHECK_EQ_INT(sc.per_frame[f], 1);
        CHECK_EQ_INT(sc.off_main, 0);
        CHECK_EQ_INT(phys_if.off_main, 0);
        CHECK_EQ_INT(sc.made, 0);
        CHECK_EQ_INT(sc.add_not_busy, 0);
        CHECK_EQ_INT(ecs_count(w), count0);
        CHECK(!ecs_has(w, sc.victim, tag));
        CHECK_EQ_INT(member_if.calls, phys_steps);   /* a member's: before each step */
        CHECK_EQ_INT(gl_stats(w, phys).steps, phys_steps);
        CHECK_EQ_INT(gl_stats(w, physm).steps, member_turns);
        ecs_world_free(w);
    }
}

/* ==== 6. fixed steps =========================================================== */
/* Exactly k * fixed_dt takes k steps, frame after frame. */
TEST(gameloop_fixed_exact) {
    static const struct { float fixed, dt; int steps; long frames; } cases[] = {
        {0.25f, 0.75f, 3, 50}, {1 / 64.f, 3 / 64.f, 3, 200}, {1 / 60.f, 1 / 60.f, 1, 1000},
        {1 / 60.f, 2 / 60.f, 2, 500}, {0.1f, 0.1f, 1, 500}, {0.125f, 1.0f, 8, 20}, {0.5f, 0.25f, -1, 40},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gl_reset();
        ecs_world *w = gl_world(1);
        REQUIRE(w);
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "Fixed", .fixed_dt = cases[k].fixed,
            .max_lag = 1.0f});
        REQUIRE(f);
        gl_sys s = {.dt = cases[k].fixed};
        ecs_system sys = ecs_system_add(w, &(ecs_system_desc){.name = "S", .fn = gl_fn, .ctx = &s, .stage = f});
        REQUIRE(sys);
        long bad = 0;
        for (long i = 0; i < cases[k].frames; i++) {
            gl_clear_counts();
            CHECK_EQ_INT(gl_progress(w, i, cases[k].dt), ECS_OK);
            int want = cases[k].steps >= 0 ? cases[k].steps : (int)(i % 2);   /* half a step a frame */
            ecs_stage_stats st = gl_stats(w, f);
            if (gl_runs(sys) != want || st.steps_last != want) {
                if (!bad++) CHECKF(0, "fixed_dt %g, dt %g, frame %ld: %ld steps (stats %d), want %d",
                                   (double)cases[k].fixed, (double)cases[k].dt, i, gl_runs(sys), st.steps_last, want);
            }
            if (cases[k].steps >= 0 && ecs_stage_alpha(w, f) != 0.0f && !bad++)
                CHECKF(0, "fixed_dt %g frame %ld: alpha %g", (double)cases[k].fixed, i, (double)ecs_stage_alpha(w, f));
        }
        ecs_stage_stats st = gl_stats(w, f);
        if (cases[k].steps >= 0) CHECK_EQ_INT(st.steps, (long)cases[k].steps * cases[k].frames);
        CHECK(st.dropped_time == 0);
        GL_REPORT("fixed exact");
        ecs_world_free(w);
    }
}

/* A jittery dt sequence against a double-precision model: exactly
   representable times (multiples of 1/1024, compared exactly) and arbitrary
   floats (compared closely), with max_steps and max_lag cutting in. */
typedef struct gl_clock { double fixed, lag, acc, dropped; int max_steps; uint64_t steps; } gl_clock;
static int gl_clock_frame(gl_clock *c, double add) {
    c->acc += add;
    int k = (int)floor(c->acc / c->fixed);
    if (k > c->max_steps) k = c->max_steps;
    c->acc -= k * c->fixed;
    if (c->acc > c->lag) { c->dropped += c->acc - c->lag; c->acc = c->lag; }
    c->steps += (uint64_t)k;
    return k;
}
TEST(gameloop_fixed_jitter) {
    unsigned long long rng = test_g.seed ^ 0x6A77E5ull;
    for (int exact = 1; exact >= 0; exact--) {
        gl_reset();
        ecs_world *w = gl_world(1);
        REQUIRE(w);
        /* A: defaults (8 steps, lag 0.25); B: 3 steps, lag 0.1 */
        float fa = exact ? 1 / 64.f : 1 / 60.f, fb = exact ? 3 / 128.f : 0.0213f;
        ecs_stage a = ecs_stage_init(w, &(ecs_stage_desc){.name = "A", .fixed_dt = fa});
        ecs_stage b = ecs_stage_init(w, &(ecs_stage_desc){.name = "B", .fixed_dt = fb, .max_steps = 3,
            .max_lag = exact ? 0.125f : 0.1f});   /* (stored as a float: rounded) */
        REQUIRE(a && b);
        gl_sys sa = {.dt = fa}, sb = {.dt = fb};
        ecs_system xa = ecs_system_add(w, &(ecs_system_desc){.name = "XA", .fn = gl_fn, .ctx = &sa, .stage = a});
        ecs_system xb = ecs_system_add(w, &(ecs_system_desc){.name = "XB", .fn = gl_fn, .ctx = &sb, .stage = b});
        REQUIRE(xa && xb);
        /* (float) casts: with FLT_EVAL_METHOD 2 (x87) a float constant may carry more precision */
        float lag_b = exact ? (float)0.125f : (float)0.1f;
        gl_clock ca = {fa, 0.25, 0, 0, 8, 0}, cb = {fb, (double)lag_b, 0, 0, 3, 0};
        long frames = test_scaled(2000, 200), bad = 0;
        for (long i = 0; i < frames && bad < 3; i++) {
            float dt;
            if (exact)
                dt = (float)(test_below(&rng, 10) == 0 ? 300 + test_below(&rng, 700) : test_below(&rng, 60)) / 1024.0f;
            else dt = test_below(&rng, 12) == 0 ? 0.3f + (float)test_below(&rng, 1000) / 1000.0f
                                                 : 0.004f + (float)test_below(&rng, 30000) / 1e6f;
            gl_clear_counts();
            CHECK_EQ_INT(gl_progress(w, i, dt), ECS_OK);
            int ka = gl_clock_frame(&ca, (double)dt), kb = gl_clock_frame(&cb, (double)dt);
            ecs_stage_stats sta = gl_stats(w, a), stb = gl_stats(w, b);
            double tol = exact ? 0 : 1e-9;
            float alpha_a = ecs_stage_alpha(w, a), alpha_b = ecs_stage_alpha(w, b);
            bool ok = gl_runs(xa) == ka && gl_runs(xb) == kb && sta.steps_last == ka && stb.steps_last == kb &&
                      sta.steps == ca.steps && stb.steps == cb.steps && fabs(sta.dropped_time - ca.dropped) <= tol &&
                      fabs(stb.dropped_time - cb.dropped) <= tol &&
                      fabs((double)alpha_a - ca.acc / ca.fixed) <= (exact ? 0 : 1e-5) + 1e-6 * (ca.acc / ca.fixed) &&
                      fabs((double)alpha_b - cb.acc / cb.fixed) <= (exact ? 0 : 1e-5) + 1e-6 * (cb.acc / cb.fixed);
            if (!ok) {
                bad++;
                CHECKF(0, "%s frame %ld dt %.9g: A %ld/%d steps (stats %d), dropped %.12g/%.12g, alpha %.9g/%.9g; "
                       "B %ld/%d (stats %d), dropped %.12g/%.12g, alpha %.9g/%.9g", exact ? "exact" : "floats", i,
                       (double)dt, gl_runs(xa), ka, sta.steps_last, sta.dropped_time, ca.dropped, (double)alpha_a,
                       ca.acc / ca.fixed, gl_runs(xb), kb, stb.steps_last, stb.dropped_time, cb.dropped,
                       (double)alpha_b, cb.acc / cb.fixed);
            }
        }
        CHECK(ca.dropped > 0 && cb.dropped > 0);   /* the caps did cut in */
        GL_REPORT("fixed jitter");
        ecs_world_free(w);
    }
}

/* max_steps leaves the rest for later frames (alpha above 1 meanwhile);
   max_lag drops the excess and counts it. */
TEST(gameloop_fixed_caps) {
    gl_reset();
    ecs_world *w = gl_world(1);
    REQUIRE(w);
    ecs_stage capped = ecs_stage_init(w, &(ecs_stage_desc){.name = "Capped", .fixed_dt = 0.25f, .max_steps = 2,
        .max_lag = 10.0f});
    ecs_stage lagged = ecs_stage_init(w, &(ecs_stage_desc){.name = "Lagged", .fixed_dt = 0.25f, .max_steps = 1,
        .max_lag = 0.3f});
    REQUIRE(capped && lagged);
    gl_sys s = {.dt = 0.25f};
    ecs_system c = ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = gl_fn, .ctx = &s, .stage = capped});
    ecs_system l = ecs_system_add(w, &(ecs_system_desc){.name = "L", .fn = gl_fn, .ctx = &s, .stage = lagged});
    REQUIRE(c && l);
    static const float dts[] = {1, 1, 1, 0, 0, 0, 0};
    static const int want_c[] = {2, 2, 2, 2, 2, 2, 0};
    static const double alpha_c[] = {2, 4, 6, 4, 2, 0, 0};
    double lag = (double)(float)0.3f;   /* a float constant may carry more precision (x87) */
    const int want_l[] = {1, 1, 1, 1, 0, 0, 0};
    double acc_l = 0, dropped_l = 0;
    for (int i = 0; i < 7; i++) {
        gl_clear_counts();
        CHECK_EQ_INT(gl_progress(w, i, dts[i]), ECS_OK);
        CHECKF(gl_runs(c) == want_c[i], "frame %d: Capped took %ld steps, want %d", i, gl_runs(c), want_c[i]);
        CHECK_EQ_INT(gl_stats(w, capped).steps_last, want_c[i]);
        CHECKF(ecs_stage_alpha(w, capped) == (float)alpha_c[i], "frame %d: alpha %g, want %g", i,
               (double)ecs_stage_alpha(w, capped), alpha_c[i]);
        CHECK(gl_stats(w, capped).dropped_time == 0);
        /* the lagged one: 1 step a frame, then at most 0.3 s kept */
        acc_l += dts[i];
        int k = acc_l >= 0.25 ? 1 : 0;
        acc_l -= k * 0.25;
        if (acc_l > lag) { dropped_l += acc_l - lag; acc_l = lag; }
        CHECKF(gl_runs(l) == want_l[i] && k == want_l[i], "frame %d: Lagged took %ld steps, want %d", i, gl_runs(l),
               want_l[i]);
        ecs_stage_stats st = gl_stats(w, lagged);
        CHECKF(fabs(st.dropped_time - dropped_l) < 1e-9, "frame %d: dropped %.12g, want %.12g", i, st.dropped_time,
               dropped_l);
        CHECK(fabs((double)ecs_stage_alpha(w, lagged) - acc_l / 0.25) < 1e-6);
    }
    CHECK(fabs(gl_stats(w, lagged).dropped_time - (0.75 - lag + 0.75 + 0.75)) < 1e-6);
    CHECK_EQ_INT(gl_stats(w, capped).steps, 12);
    GL_REPORT("fixed caps");
    ecs_world_free(w);
}

/* Each step has its own sync point: entities made by commands in step k are
   there in step k + 1 (and in the group's next stage, in step k). */
typedef struct { int32_t step; } gl_stamp;
typedef struct gl_sync_ctx {
    ecs_id stamp;
    long tick, cur;
    long seen[GL_LOG], mseen[GL_LOG];
} gl_sync_ctx;
static void gl_tick(ecs_iter *it) {
    gl_sync_ctx *c = (gl_sync_ctx *)it->ctx;
    c->cur = c->tick++;
    TCHECK(it, it->dt == 0.25f && it->real_dt == gl.real_dt);
    test_spin_us(test_spin_len(10));
}
static void gl_count_stamps(ecs_iter *it) {
    gl_sync_ctx *c = (gl_sync_ctx *)it->ctx;
    if (c->cur >= 0 && c->cur < GL_LOG) c->seen[c->cur] += it->count;
}
static void gl_count_stamps_member(ecs_iter *it) {
    gl_sync_ctx *c = (gl_sync_ctx *)it->ctx;
    if (c->cur >= 0 && c->cur < GL_LOG) c->mseen[c->cur] += it->count;
}
static void gl_spawn_stamp(ecs_iter *it) {
    gl_sync_ctx *c = (gl_sync_ctx *)it->ctx;
    ecs_entity e = ecs_cmd_create(it->commands);
    TCHECK(it, e && ecs_cmd_set(it->commands, e, c->stamp, &(gl_stamp){(int32_t)c->cur}) == ECS_OK);
}
TEST(sched_gameloop_step_sync) {
    enum { FRAMES = 5, STEPS = 3 };
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        gl_sync_ctx *c = (gl_sync_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        c->stamp = ecs_component(w, "Stamp", sizeof(gl_stamp), _Alignof(gl_stamp));
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.25f});
        ecs_stage m = ecs_stage_init(w, &(ecs_stage_desc){.name = "M", .step_with = f});
        REQUIRE(c->stamp && f && m);
        gl_sys filler = {.spin = test_spin_len(30), .dt = 0.25f};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Tick", .fn = gl_tick, .ctx = c, .stage = f}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Count", .fn = gl_count_stamps, .ctx = c, .stage = f,
            .terms = {ECS_TERM_R(c->stamp)}, .after = {"Tick"}}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Spawn", .fn = gl_spawn_stamp, .ctx = c, .stage = f,
            .after = {"Count"}}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Filler", .fn = gl_fn, .ctx = &filler, .stage = f}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MCount", .fn = gl_count_stamps_member, .ctx = c,
            .stage = m, .terms = {ECS_TERM_R(c->stamp)}}));
        for (long i = 0; i < FRAMES; i++) {
            CHECK_EQ_INT(gl_progress(w, i, 0.75f), ECS_OK);
            CHECK_EQ_INT(ecs_count(w), (i + 1) * STEPS);
        }
        GL_REPORT("step sync");
        CHECK_EQ_INT(c->tick, FRAMES * STEPS);
        for (long k = 0; k < FRAMES * STEPS; k++) {
            CHECKF(c->seen[k] == k, "threads %d step %ld: saw %ld stamped entities, want %ld", gl_threads[ti], k,
                   c->seen[k], k);
            CHECKF(c->mseen[k] == k + 1, "threads %d step %ld: the member saw %ld, want %ld", gl_threads[ti], k,
                   c->mseen[k], k + 1);
        }
        free(c);
        ecs_world_free(w);
    }
}

/* A step group between two ordinary stages: A, then per step F, M1, M2,
   then B. Disabling a member skips only it; disabling F stops the group and
   accumulates nothing (no burst when it comes back). */
TEST(sched_gameloop_step_group) {
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.25f});
        ecs_stage m1 = ecs_stage_init(w, &(ecs_stage_desc){.name = "M1", .step_with = f});
        ecs_stage m2 = ecs_stage_init(w, &(ecs_stage_desc){.name = "M2", .step_with = f});
        ecs_stage post = ecs_stage_add(w, "post");
        REQUIRE(f && m1 && m2 && post);
        double spin = test_spin_len(20);
        gl_sys a = {.dt = -1, .code = 1}, fs = {.dt = 0.25f, .code = 2}, m1s = {.dt = 0.25f, .code = 3},
               m2s = {.dt = 0.25f, .code = 4}, b = {.dt = -1, .code = 5}, fill = {.spin = spin, .dt = 0.25f},
               fill0 = {.spin = spin, .dt = -1};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = gl_fn, .ctx = &a}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A2", .fn = gl_fn, .ctx = &fill0}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Fs", .fn = gl_fn, .ctx = &fs, .stage = f}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Ff", .fn = gl_fn, .ctx = &fill, .stage = f}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "M1s", .fn = gl_fn, .ctx = &m1s, .stage = m1}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "M1f", .fn = gl_fn, .ctx = &fill, .stage = m1}));
        ecs_system m2sys = ecs_system_add(w, &(ecs_system_desc){.name = "M2s", .fn = gl_fn, .ctx = &m2s, .stage = m2});
        REQUIRE(m2sys);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = gl_fn, .ctx = &b, .stage = post}));
        long frame = 0;
#define GL_FRAME_LOG(dt, want) do { gl.log_n = 0; CHECK_EQ_INT(gl_progress(w, frame, (dt)), ECS_OK); \
        CHECKF(!strcmp(gl_log_str(), want), "threads %d frame %ld: ran %s, want %s", gl_threads[ti], frame, \
               gl_log_str(), want); frame++; } while (0)
        GL_FRAME_LOG(0.625f, "12342345");   /* 2.5 steps: 2, half a step left */
        CHECK(ecs_stage_alpha(w, f) == 0.5f);
        GL_FRAME_LOG(0.5f, "12342345");
        CHECK(ecs_stage_alpha(w, f) == 0.5f);
        CHECK_EQ_INT(ecs_stage_enable(w, m1, false), ECS_OK);
        GL_FRAME_LOG(0.5f, "124245");
        GL_FRAME_LOG(0.5f, "124245");
        CHECK_EQ_INT(ecs_stage_enable(w, m1, true), ECS_OK);
        ecs_stage_stats before_f = gl_stats(w, f), before_m1 = gl_stats(w, m1), before_m2 = gl_stats(w, m2);
        CHECK_EQ_INT(before_f.steps, 8);
        CHECK_EQ_INT(before_m1.steps, 4);
        CHECK_EQ_INT(before_m2.steps, 8);
        CHECK_EQ_INT(ecs_stage_enable(w, f, false), ECS_OK);
        for (int i = 0; i < 10; i++) {
            GL_FRAME_LOG(0.5f, "15");
            CHECK(ecs_stage_alpha(w, f) == 0.5f);
            CHECK_EQ_INT(gl_stats(w, f).steps_last, 0);
            CHECK_EQ_INT(gl_stats(w, m1).steps_last, 0);
        }
        CHECK_EQ_INT(gl_stats(w, f).steps, before_f.steps);
        CHECK_EQ_INT(gl_stats(w, m1).steps, before_m1.steps);
        CHECK_EQ_INT(gl_stats(w, m2).steps, before_m2.steps);
        CHECK_EQ_INT(ecs_stage_enable(w, f, true), ECS_OK);
        GL_FRAME_LOG(0.5f, "12342345");   /* no burst */
        CHECK_EQ_INT(gl_stats(w, f).steps_last, 2);
        CHECK_EQ_INT(gl_stats(w, m2).steps_last, 2);
        CHECK_EQ_INT(ecs_system_enable(w, m2sys, false), ECS_OK);
        GL_FRAME_LOG(0.5f, "123235");
        CHECK_EQ_INT(gl_stats(w, m2).steps_last, 2);   /* the stage took its turns */
        CHECK_EQ_INT(ecs_system_enable(w, m2sys, true), ECS_OK);
        GL_FRAME_LOG(0.75f, "12342342345");
#undef GL_FRAME_LOG
        GL_REPORT("step group");
        ecs_world_free(w);
    }
}

/* ==== 7. ecs_progress_steps ==================================================== */
/* Every enabled group takes exactly n steps (max_steps does not cap it), the
   accumulators stay as they were, ordinary stages run once; n < 0 is refused
   and runs nothing. */
TEST(sched_gameloop_progress_steps) {
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.25f});
        ecs_stage m = ecs_stage_init(w, &(ecs_stage_desc){.name = "M", .step_with = f});
        ecs_stage o = ecs_stage_add(w, "O");
        ecs_stage g = ecs_stage_init(w, &(ecs_stage_desc){.name = "G", .fixed_dt = 0.125f, .max_steps = 2});
        REQUIRE(f && m && o && g);
        double spin = test_spin_len(20);
        gl_sys fs = {.spin = spin, .dt = 0.25f}, gs = {.spin = spin, .dt = 0.125f}, os = {.spin = spin, .dt = -1};
        ecs_system sf = ecs_system_add(w, &(ecs_system_desc){.name = "SF", .fn = gl_fn, .ctx = &fs, .stage = f});
        ecs_system sf2 = ecs_system_add(w, &(ecs_system_desc){.name = "SF2", .fn = gl_fn, .ctx = &fs, .stage = f});
        ecs_system sm = ecs_system_add(w, &(ecs_system_desc){.name = "SM", .fn = gl_fn, .ctx = &fs, .stage = m});
        ecs_system so = ecs_system_add(w, &(ecs_system_desc){.name = "SO", .fn = gl_fn, .ctx = &os, .stage = o});
        ecs_system s0 = ecs_system_add(w, &(ecs_system_desc){.name = "S0", .fn = gl_fn, .ctx = &os});
        ecs_system sg = ecs_system_add(w, &(ecs_system_desc){.name = "SG", .fn = gl_fn, .ctx = &gs, .stage = g});
        REQUIRE(sf && sf2 && sm && so && s0 && sg);
        CHECK_EQ_INT(gl_progress(w, 0, 0.3125f), ECS_OK);   /* F: 1 step, 1/16 left; G: 2 (cap), 1/16 left */
        CHECK_EQ_INT(gl_runs(sf), 1);
        CHECK_EQ_INT(gl_runs(sg), 2);
        float alpha_f = ecs_stage_alpha(w, f), alpha_g = ecs_stage_alpha(w, g);
        CHECK(alpha_f == 0.25f && alpha_g == 0.5f);
        static const int ns[] = {3, 0, 1, 10};
        for (int k = 0; k < 4; k++) {
            gl_clear_counts();
            uint64_t fr = gl_frames(w);
            gl.frame = k + 1;
            gl.real_dt = 0.3f;
            CHECK_EQ_INT(ecs_progress_steps(w, ns[k], 0.3f), ECS_OK);
            CHECK_EQ_INT(gl_frames(w), fr + 1);
            CHECKF(gl_runs(sf) == ns[k] && gl_runs(sf2) == ns[k] && gl_runs(sm) == ns[k] && gl_runs(sg) == ns[k],
                   "threads %d, %d steps: F %ld, M %ld, G %ld", gl_threads[ti], ns[k], gl_runs(sf), gl_runs(sm),
                   gl_runs(sg));
            CHECK(gl_runs(so) == 1 && gl_runs(s0) == 1);
            CHECK_EQ_INT(gl_stats(w, f).steps_last, ns[k]);
            CHECK_EQ_INT(gl_stats(w, m).steps_last, ns[k]);
            CHECK_EQ_INT(gl_stats(w, g).steps_last, ns[k]);
            CHECK_EQ_INT(gl_stats(w, o).steps_last, 1);
            CHECK(ecs_stage_alpha(w, f) == alpha_f && ecs_stage_alpha(w, g) == alpha_g);
        }
        /* a disabled group takes none */
        CHECK_EQ_INT(ecs_stage_enable(w, f, false), ECS_OK);
        gl_clear_counts();
        CHECK_EQ_INT(ecs_progress_steps(w, 2, 0.3f), ECS_OK);
        CHECK(gl_runs(sf) == 0 && gl_runs(sm) == 0 && gl_runs(sg) == 2 && gl_runs(so) == 1);
        CHECK_EQ_INT(ecs_stage_enable(w, f, true), ECS_OK);
        /* refused: nothing runs, no frame counted */
        gl_clear_counts();
        uint64_t fr = gl_frames(w), steps_f = gl_stats(w, f).steps;
        CHECK_EQ_INT(ecs_progress_steps(w, -1, 0.3f), ECS_ERR_ARG);
        CHECK_EQ_INT(ecs_progress_steps(w, 1, NAN), ECS_ERR_ARG);
        CHECK_EQ_INT(ecs_progress_steps(w, 1, -0.5f), ECS_ERR_ARG);
        CHECK_EQ_INT(ecs_progress_steps(w, 1, INFINITY), ECS_ERR_ARG);
        CHECK_EQ_INT(gl_frames(w), fr);
        CHECK(gl_runs(sf) == 0 && gl_runs(so) == 0 && gl_runs(s0) == 0);
        CHECK_EQ_INT(gl_stats(w, f).steps, steps_f);
        CHECK(ecs_stage_alpha(w, f) == alpha_f);
        /* and ordinary frames go on from the same accumulators */
        gl_clear_counts();
        CHECK_EQ_INT(gl_progress(w, 9, 0.1875f), ECS_OK);   /* F: 1/16 + 3/16 = 1 step; G: 1/16 + 3/16 = 2 */
        CHECK(gl_runs(sf) == 1 && gl_runs(sg) == 2);
        CHECK(ecs_stage_alpha(w, f) == 0.0f && ecs_stage_alpha(w, g) == 0.0f);
        GL_REPORT("progress_steps");
        ecs_world_free(w);
    }
}

/* ==== 8. time scale ============================================================ */
typedef struct gl_dt_ctx { float dt[GL_SYS], real[GL_SYS]; } gl_dt_ctx;
static void gl_record_dt(ecs_iter *it) {   /* one system per stage, run once per turn */
    gl_dt_ctx *c = (gl_dt_ctx *)it->ctx;
    if (!gl_count(it)) return;
    c->dt[it->system] = it->dt;
    c->real[it->system] = it->real_dt;
    test_spin_us(test_spin_len(10));
}
TEST(sched_gameloop_time_scale) {
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_stage u = ecs_stage_init(w, &(ecs_stage_desc){.name = "UI", .unscaled = true});
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.25f, .max_lag = 4});
        ecs_stage fu = ecs_stage_init(w, &(ecs_stage_desc){.name = "FU", .fixed_dt = 0.25f, .unscaled = true,
            .max_lag = 4});
        REQUIRE(u && f && fu);
        gl_dt_ctx c;
        memset(&c, 0, sizeof c);
        ecs_system s = ecs_system_add(w, &(ecs_system_desc){.name = "S", .fn = gl_record_dt, .ctx = &c});
        ecs_system su = ecs_system_add(w, &(ecs_system_desc){.name = "SU", .fn = gl_record_dt, .ctx = &c, .stage = u});
        ecs_system sf = ecs_system_add(w, &(ecs_system_desc){.name = "SF", .fn = gl_record_dt, .ctx = &c, .stage = f});
        ecs_system sfu = ecs_system_add(w, &(ecs_system_desc){.name = "SFU", .fn = gl_record_dt, .ctx = &c,
            .stage = fu});
        REQUIRE(s && su && sf && sfu);
        CHECK(ecs_world_time_scale(w) == 1.0f);
        static const struct { float scale, dt; int f_steps, fu_steps; } rows[] = {
            {1.0f, 0.5f, 2, 2}, {0.5f, 1.0f, 2, 4}, {0.0f, 1.0f, 0, 4}, {2.0f, 0.25f, 2, 1}, {0.25f, 0.5f, 0, 2},
            {0.25f, 0.5f, 1, 2},
        };
        for (int i = 0; i < (int)(sizeof rows / sizeof rows[0]); i++) {
            ecs_world_set_time_scale(w, rows[i].scale);
            CHECK(ecs_world_time_scale(w) == rows[i].scale);
            gl_clear_counts();
            memset(&c, 0, sizeof c);
            CHECK_EQ_INT(gl_progress(w, i, rows[i].dt), ECS_OK);
            CHECKF(gl_runs(sf) == rows[i].f_steps && gl_runs(sfu) == rows[i].fu_steps,
                   "threads %d row %d: scaled %ld steps (want %d), unscaled %ld (want %d)", gl_threads[ti], i,
                   gl_runs(sf), rows[i].f_steps, gl_runs(sfu), rows[i].fu_steps);
            CHECK(c.dt[s] == rows[i].dt * rows[i].scale && c.real[s] == rows[i].dt);
            CHECK(c.dt[su] == rows[i].dt && c.real[su] == rows[i].dt);
            if (rows[i].f_steps) CHECK(c.dt[sf] == 0.25f && c.real[sf] == rows[i].dt);
            CHECK(c.dt[sfu] == 0.25f && c.real[sfu] == rows[i].dt);
        }
        /* scale 0 pauses: the scaled accumulator does not move */
        ecs_world_set_time_scale(w, 0);
        float alpha = ecs_stage_alpha(w, f);
        for (int i = 0; i < 5; i++) {
            gl_clear_counts();
            CHECK_EQ_INT(gl_progress(w, 10 + i, 0.5f), ECS_OK);
            CHECK(gl_runs(sf) == 0 && gl_runs(sfu) == 2 && gl_runs(s) == 1);
        }
        CHECK(ecs_stage_alpha(w, f) == alpha);
        /* bad scales are ignored, with an error */
        ecs_world_set_time_scale(w, 0.75f);
        static const float bad[] = {-1.0f, -0.0001f, NAN, INFINITY, -INFINITY};
        for (int i = 0; i < 5; i++) {
            CHECK_EQ_INT(ecs_system_enable(w, 0, true), ECS_ERR_ARG);   /* some other error first */
            const char *before = ecs_last_error(w);
            char prev[256];
            snprintf(prev, sizeof prev, "%s", before ? before : "");
            ecs_world_set_time_scale(w, bad[i]);
            CHECKF(ecs_world_time_scale(w) == 0.75f, "scale %g: now %g", (double)bad[i],
                   (double)ecs_world_time_scale(w));
            CHECKF(strcmp(prev, ecs_last_error(w)) != 0 && strstr(ecs_last_error(w), "scale") != NULL,
                   "scale %g: last error \"%s\"", (double)bad[i], ecs_last_error(w));
        }
        GL_REPORT("time scale");
        ecs_world_free(w);
    }
}

/* ==== 9. it->batch ============================================================= */
typedef struct gl_batch_ctx { int seq[GL_SYS][16]; int n[GL_SYS]; long chunk_mismatch[GL_SLOTS]; } gl_batch_ctx;
static void gl_batch_plain(ecs_iter *it) {   /* unchunked: one thread at a time */
    gl_batch_ctx *c = (gl_batch_ctx *)it->ctx;
    if (!gl_count(it)) return;
    if (c->n[it->system] < 16) c->seq[it->system][c->n[it->system]++] = it->batch;
    test_spin_us(test_spin_len(5));
}
static void gl_batch_chunked(ecs_iter *it) {
    gl_batch_ctx *c = (gl_batch_ctx *)it->ctx;
    if (!gl_count(it)) return;
    if (it->batch != it->chunk) c->chunk_mismatch[gl_of(it) - gl_slots]++;
    test_spin_us(test_spin_len(5));
}
TEST(sched_gameloop_batch) {
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", sizeof(int32_t), _Alignof(int32_t));
        ecs_id b = ecs_component(w, "B", sizeof(int32_t), _Alignof(int32_t));
        ecs_id cc = ecs_component(w, "C", sizeof(int32_t), _Alignof(int32_t));
        REQUIRE(a && b && cc);
        ecs_id ab[2] = {a, b}, ac[2] = {a, cc};
        REQUIRE(ecs_create_many(w, 7, &a, 1, NULL) == ECS_OK);
        REQUIRE(ecs_create_many(w, 9, ab, 2, NULL) == ECS_OK);
        REQUIRE(ecs_create_many(w, 11, ac, 2, NULL) == ECS_OK);
        ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.5f});
        REQUIRE(f);
        gl_batch_ctx *c = (gl_batch_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        ecs_system plain = ecs_system_add(w, &(ecs_system_desc){.name = "Plain", .fn = gl_batch_plain, .ctx = c,
            .terms = {ECS_TERM_R(a)}});
        ecs_system chunked = ecs_system_add(w, &(ecs_system_desc){.name = "Chunked", .fn = gl_batch_chunked, .ctx = c,
            .terms = {ECS_TERM_W(a)}, .chunk_size = 3});
        ecs_system stepped = ecs_system_add(w, &(ecs_system_desc){.name = "Stepped", .fn = gl_batch_plain, .ctx = c,
            .terms = {ECS_TERM_R(a)}, .stage = f});
        ecs_system stepped_ch = ecs_system_add(w, &(ecs_system_desc){.name = "SteppedChunked", .fn = gl_batch_chunked,
            .ctx = c, .terms = {ECS_TERM_W(a)}, .chunk_size = 4, .stage = f});
        REQUIRE(plain && chunked && stepped && stepped_ch);
        CHECK_EQ_INT(gl_progress(w, 0, 1.0f), ECS_OK);   /* two steps */
        GL_REPORT("batch");
        CHECK_EQ_INT(c->n[plain], 3);
        for (int i = 0; i < 3; i++) CHECK_EQ_INT(c->seq[plain][i], i);
        CHECK_EQ_INT(c->n[stepped], 6);
        for (int i = 0; i < 6; i++) CHECK_EQ_INT(c->seq[stepped][i], i % 3);   /* each run starts at 0 */
        CHECK_EQ_INT(gl_calls(chunked), 3 + 3 + 4);   /* 7, 9 and 11 rows in chunks of 3 */
        CHECK_EQ_INT(gl_calls(stepped_ch), 2 * (2 + 3 + 3));
        for (int t = 0; t < GL_SLOTS; t++) CHECK_EQ_INT(c->chunk_mismatch[t], 0);
        /* plain query loops */
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(a)}});
        REQUIRE(q);
        for (int round = 0; round < 2; round++) {
            int k = 0;
            for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it); k++) CHECK_EQ_INT(it.batch, k);
            CHECK_EQ_INT(k, 3);
        }
        ecs_query_free(q);
        free(c);
        ecs_world_free(w);
    }
}

/* ==== 10. stage stats and alpha ================================================ */
TEST(gameloop_stage_stats) {
    gl_reset();
    ecs_world *w = gl_world(1);
    REQUIRE(w);
    ecs_stage o = ecs_stage_add(w, "O");
    ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.5f, .max_steps = 1, .max_lag = 0.75f});
    REQUIRE(o && f);
    ecs_stage_stats s;
    memset(&s, 0xff, sizeof s);
    CHECK_EQ_INT(ecs_stage_stats_get(w, 0, &s), ECS_OK);   /* nothing run yet */
    CHECK(s.steps == 0 && s.steps_last == 0 && s.dropped_time == 0);
    CHECK_EQ_INT(ecs_stage_stats_get(w, ecs_stage_count(w), &s), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_stats_get(w, 12345, &s), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_stats_get(w, 0, NULL), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_stats_get(NULL, 0, &s), ECS_ERR_ARG);
    CHECK(ecs_stage_alpha(w, 0) == 0.0f && ecs_stage_alpha(w, o) == 0.0f && ecs_stage_alpha(w, 999) == 0.0f);
    CHECK(ecs_stage_alpha(NULL, f) == 0.0f);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(gl_progress(w, i, 0.25f), ECS_OK);   /* empty stages count too */
    CHECK_EQ_INT(gl_stats(w, 0).steps, 4);
    CHECK_EQ_INT(gl_stats(w, 0).steps_last, 1);
    CHECK_EQ_INT(gl_stats(w, o).steps, 4);
    CHECK_EQ_INT(gl_stats(w, f).steps, 2);
    CHECK_EQ_INT(gl_stats(w, f).steps_last, 1);   /* frame 3: 0.5 in it */
    CHECK(ecs_stage_alpha(w, f) == 0.0f);
    CHECK(ecs_stage_alpha(w, o) == 0.0f);
    CHECK_EQ_INT(gl_progress(w, 4, 0.25f), ECS_OK);
    CHECK_EQ_INT(gl_stats(w, f).steps_last, 0);
    CHECK(ecs_stage_alpha(w, f) == 0.5f);
    CHECK_EQ_INT(gl_progress(w, 5, 2.0f), ECS_OK);   /* 2.25: one step, 1.75 left, 1.0 dropped */
    s = gl_stats(w, f);
    CHECK_EQ_INT(s.steps_last, 1);
    CHECK_EQ_INT(s.steps, 3);
    CHECK(s.dropped_time == 1.0);
    CHECK(ecs_stage_alpha(w, f) == 1.5f);
    CHECK(gl_stats(w, o).dropped_time == 0);
    ecs_world_free(w);
}

/* ==== 11. the clock in snapshots and save files ================================ */
/* A world with a conditional system on a resource, intervals, a step group
   with max_steps and max_lag, an unscaled stage and a time scale runs N
   frames of jittery dt; a snapshot (and a save file of it) taken there, then
   M more frames, recorded; restoring either and running the same M frames
   gives the same record (hash, runs per system, steps, alpha). The same at
   every thread count. */
typedef struct { uint32_t x, v; } gl_body;
typedef struct { int32_t m; } gl_mode;
enum { SN_N = 37, SN_M = 30, SN_SYS = 8 };
typedef struct gl_snap {
    ecs_world *w;
    ecs_id body, mode, spawned;
    ecs_stage phys, physm, ui;
    ecs_system sys[SN_SYS], half;
    gl_sys spawner;
} gl_snap;
typedef struct gl_snap_rec { uint64_t hash; long runs[SN_SYS]; int steps_last; float alpha, scale; } gl_snap_rec;
static void gl_drive(ecs_iter *it) {
    const gl_snap *s = (const gl_snap *)it->ctx;
    gl_count(it);
    gl_mode *m = (gl_mode *)ecs_resource_get(it->world, s->mode);
    TCHECK(it, m != NULL);
    if (m) m->m = (m->m * 7 + 3) % 11;
    test_spin_us(test_spin_len(10));
}
static bool gl_mode_ok(ecs_world *w, void *ctx) {
    const gl_snap *s = (const gl_snap *)ctx;
    const gl_mode *m = (const gl_mode *)ecs_resource_get(w, s->mode);
    return m && m->m % 3 != 0;
}
static void gl_body_move(ecs_iter *it) {
    gl_count(it);
    gl_body *b = (gl_body *)ecs_field(it, 0);
    TCHECK(it, b != NULL);
    for (int i = 0; b && i < it->count; i++) b[i].x += b[i].v;
    test_spin_us(test_spin_len(0.5 * it->count));
}
static void gl_body_damp(ecs_iter *it) {
    gl_count(it);
    gl_body *b = (gl_body *)ecs_field(it, 0);
    TCHECK(it, b != NULL);
    for (int i = 0; b && i < it->count; i++) b[i].v = (b[i].v * 3 + b[i].x) % 7 + 1;
}
static bool gl_snap_build(gl_snap *s, int threads) {
    memset(s, 0, sizeof *s);
    ecs_world *w = s->w = gl_world(threads);
    if (!w) return false;
    s->body = ecs_component(w, "Body", sizeof(gl_body), _Alignof(gl_body));
    s->spawned = ecs_component(w, "Spawned", 0, 0);
    s->mode = ECS_RESOURCE(w, gl_mode, &(gl_mode){1});
    s->phys = ecs_stage_init(w, &(ecs_stage_desc){.name = "Phys", .fixed_dt = 1 / 64.f, .max_steps = 4,
        .max_lag = 0.125f});
    s->physm = ecs_stage_init(w, &(ecs_stage_desc){.name = "PhysM", .step_with = s->phys});
    s->ui = ecs_stage_init(w, &(ecs_stage_desc){.name = "UI", .unscaled = true});
    s->spawner = (gl_sys){.dt = -1, .spawn = s->spawned};
    ecs_system *y = s->sys;
    y[0] = ecs_system_add(w, &(ecs_system_desc){.name = "Drive", .fn = gl_drive, .ctx = s, .writes = {s->mode}});
    y[1] = ecs_system_add(w, &(ecs_system_desc){.name = "Cond", .fn = gl_fn, .ctx = &s->spawner, .reads = {s->mode},
        .run_if = gl_mode_ok, .run_if_ctx = s});
    y[2] = s->half = ecs_system_add(w, &(ecs_system_desc){.name = "Half", .fn = gl_body_move, .interval = 2,
        .terms = {ECS_TERM_W(s->body)}, .chunk_size = 16});
    y[3] = ecs_system_add(w, &(ecs_system_desc){.name = "Move", .fn = gl_body_move, .stage = s->phys,
        .terms = {ECS_TERM_W(s->body)}, .chunk_size = 16});
    y[4] = ecs_system_add(w, &(ecs_system_desc){.name = "Step3", .fn = gl_fn, .ctx = &s->spawner, .stage = s->phys,
        .interval = 3});
    y[5] = ecs_system_add(w, &(ecs_system_desc){.name = "Damp", .fn = gl_body_damp, .stage = s->physm, .interval = 2,
        .terms = {ECS_TERM_W(s->body)}});
    y[6] = ecs_system_add(w, &(ecs_system_desc){.name = "Ui4", .fn = gl_fn, .ctx = &s->spawner, .stage = s->ui,
        .interval = 4});
    y[7] = ecs_system_add(w, &(ecs_system_desc){.name = "CondStep", .fn = gl_fn, .ctx = &s->spawner, .stage = s->physm,
        .reads = {s->mode}, .run_if = gl_mode_ok, .run_if_ctx = s});
    for (int i = 0; i < SN_SYS; i++) if (!y[i]) return false;
    if (!s->body || !s->spawned || !s->mode || !s->phys || !s->physm || !s->ui) return false;
    for (uint32_t i = 0; i < 100; i++) {
        ecs_entity e = ecs_create(w);
        if (!e || ecs_set(w, e, s->body, &(gl_body){i, i % 5 + 1}) != ECS_OK) return false;
    }
    return true;
}
/* The program: frame f of it (a scale change before the snapshot and one
   after, a system switched off and on again after it). */
static ecs_result gl_snap_frame(gl_snap *s, long f, const float *dts, gl_snap_rec *rec) {
    if (f == 5) ecs_world_set_time_scale(s->w, 0.5f);
    if (f == SN_N + 3) ecs_world_set_time_scale(s->w, 1.25f);
    if (f == SN_N + 10) CHECK_EQ_INT(ecs_system_enable(s->w, s->half, false), ECS_OK);
    if (f == SN_N + 20) CHECK_EQ_INT(ecs_system_enable(s->w, s->half, true), ECS_OK);
    gl_clear_counts();
    ecs_result r = gl_progress(s->w, f, dts[f]);
    memset(rec, 0, sizeof *rec);
    rec->hash = ecs_world_hash(s->w);
    for (int i = 0; i < SN_SYS; i++) rec->runs[i] = gl_runs(s->sys[i]);
    ecs_stage_stats st;
    memset(&st, 0, sizeof st);
    ecs_stage_stats_get(s->w, s->phys, &st);
    rec->steps_last = st.steps_last;
    rec->alpha = ecs_stage_alpha(s->w, s->phys);
    rec->scale = ecs_world_time_scale(s->w);
    return r;
}
static int gl_snap_diff(const gl_snap_rec *a, const gl_snap_rec *b, int n) {
    for (int i = 0; i < n; i++)
        if (a[i].hash != b[i].hash || memcmp(a[i].runs, b[i].runs, sizeof a[i].runs) ||
            a[i].steps_last != b[i].steps_last || a[i].alpha != b[i].alpha || a[i].scale != b[i].scale) return i;
    return -1;
}
typedef struct gl_clock_state {
    uint64_t frames, steps[4];
    double dropped[4];
    int last[4];
    float alpha, scale;
} gl_clock_state;
static gl_clock_state gl_clock_of(gl_snap *s) {
    gl_clock_state c;
    memset(&c, 0, sizeof c);
    c.frames = gl_frames(s->w);
    for (ecs_stage st = 0; st < 4; st++) {
        ecs_stage_stats x = gl_stats(s->w, st);
        c.steps[st] = x.steps;
        c.dropped[st] = x.dropped_time;
        c.last[st] = x.steps_last;
    }
    c.alpha = ecs_stage_alpha(s->w, s->phys);
    c.scale = ecs_world_time_scale(s->w);
    return c;
}
static void gl_clock_check(const gl_clock_state *a, const gl_clock_state *b, const char *what, int threads) {
    CHECKF(a->frames == b->frames, "%s, threads %d: frames %llu, want %llu", what, threads,
           (unsigned long long)a->frames, (unsigned long long)b->frames);
    for (int st = 0; st < 4; st++)
        CHECKF(a->steps[st] == b->steps[st] && a->dropped[st] == b->dropped[st], "%s, threads %d: stage %d: "
               "%llu turns, %.9g dropped; want %llu, %.9g", what, threads, st, (unsigned long long)a->steps[st],
               a->dropped[st], (unsigned long long)b->steps[st], b->dropped[st]);
    CHECKF(a->alpha == b->alpha, "%s, threads %d: alpha %.9g, want %.9g", what, threads, (double)a->alpha,
           (double)b->alpha);
    CHECKF(a->scale == b->scale, "%s, threads %d: time scale %g, want %g", what, threads, (double)a->scale,
           (double)b->scale);
}
TEST(sched_gameloop_snapshot_clock) {
    float dts[SN_N + SN_M];
    unsigned long long rng = 0x5EED0C10Cull;
    for (int i = 0; i < SN_N + SN_M; i++)
        dts[i] = i % 11 == 7 ? 0.5f : 0.004f + (float)test_below(&rng, 30000) / 1e6f;
    gl_snap_rec *ref = (gl_snap_rec *)calloc(SN_N + SN_M, sizeof *ref);
    gl_snap_rec *run = (gl_snap_rec *)calloc(SN_N + SN_M, sizeof *run);
    gl_snap_rec *again = (gl_snap_rec *)calloc(SN_M, sizeof *again);
    gl_snap *s = (gl_snap *)calloc(1, sizeof *s), *s2 = (gl_snap *)calloc(1, sizeof *s2);
    REQUIRE(ref && run && again && s && s2);
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        REQUIRE(gl_snap_build(s, gl_threads[ti]));
        bool ok = true;
        for (long f = 0; f < SN_N && ok; f++) ok = gl_snap_frame(s, f, dts, &run[f]) == ECS_OK;
        CHECK(ok);
        ecs_snapshot *snap = ecs_snapshot_take(s->w);
        FILE *file = tmpfile();
        ecs_snapshot *loaded = NULL;
        CHECK(snap && file);
        if (snap && file) {
            CHECK_EQ_INT(ecs_snapshot_write(snap, file), ECS_OK);
            rewind(file);
            loaded = ecs_snapshot_read(s->w, file);
            CHECKF(loaded != NULL, "save file: %s", ecs_last_error(s->w));
        }
        gl_clock_state at_take = gl_clock_of(s);
        CHECK(at_take.scale == 0.5f);
        CHECK(at_take.dropped[s->phys] > 0);   /* the spikes went past max_lag */
        for (long f = SN_N; f < SN_N + SN_M && ok; f++) ok = gl_snap_frame(s, f, dts, &run[f]) == ECS_OK;
        CHECK(ok);
        CHECK(ecs_world_time_scale(s->w) == 1.25f);
        for (int k = 0; k < 2 && snap; k++) {
            const ecs_snapshot *from = k ? loaded : snap;
            if (!from) continue;
            const char *what = k ? "save file" : "snapshot";
            CHECK_EQ_INT(ecs_snapshot_restore(s->w, from), ECS_OK);
            gl_clock_state now = gl_clock_of(s);
            gl_clock_check(&now, &at_take, what, gl_threads[ti]);
            for (long f = SN_N; f < SN_N + SN_M; f++)
                if (gl_snap_frame(s, f, dts, &again[f - SN_N]) != ECS_OK) { CHECK(0); break; }
            int d = gl_snap_diff(again, run + SN_N, SN_M);
            CHECKF(d < 0, "%s, threads %d: frame %d after the restore differs (hash %016llx vs %016llx, "
                   "steps %d vs %d, alpha %g vs %g)", what, gl_threads[ti], SN_N + (d < 0 ? 0 : d),
                   (unsigned long long)again[d < 0 ? 0 : d].hash, (unsigned long long)run[SN_N + (d < 0 ? 0 : d)].hash,
                   again[d < 0 ? 0 : d].steps_last, run[SN_N + (d < 0 ? 0 : d)].steps_last,
                   (double)again[d < 0 ? 0 : d].alpha, (double)run[SN_N + (d < 0 ? 0 : d)].alpha);
        }
        ecs_snapshot_free(snap);
        ecs_snapshot_free(loaded);
        GL_REPORT("snapshot clock");
        if (ti == 0) memcpy(ref, run, (SN_N + SN_M) * sizeof *ref);
        else {
            int d = gl_snap_diff(run, ref, SN_N + SN_M);
            CHECKF(d < 0, "threads %d: frame %d differs from the run at 1 thread", gl_threads[ti], d);
        }
        ecs_world_free(s->w);   /* (first: Emscripten's pool has threads for one 8-thread world) */
        /* the save file loaded by a fresh world (a saved game loaded in a new session) */
        if (file && gl_snap_build(s2, gl_threads[ti])) {
            rewind(file);
            ecs_snapshot *fresh = ecs_snapshot_read(s2->w, file);
            CHECKF(fresh != NULL, "fresh world: %s", ecs_last_error(s2->w));
            if (fresh) {
                CHECK_EQ_INT(ecs_snapshot_restore(s2->w, fresh), ECS_OK);
                ecs_snapshot_free(fresh);
                gl_clock_state now = gl_clock_of(s2);
                gl_clock_check(&now, &at_take, "fresh world", gl_threads[ti]);
                for (long f = SN_N; f < SN_N + SN_M; f++)
                    if (gl_snap_frame(s2, f, dts, &again[f - SN_N]) != ECS_OK) { CHECK(0); break; }
                int d = gl_snap_diff(again, run + SN_N, SN_M);
                CHECKF(d < 0, "fresh world, threads %d: frame %d after the load differs", gl_threads[ti],
                       SN_N + d);
            }
        } else CHECK(0);
        GL_REPORT("snapshot clock, fresh world");
        if (s2->w) ecs_world_free(s2->w);
        if (file) fclose(file);
    }
    /* the runs per system are sane: everything ran at some point, some were skipped */
    long total[SN_SYS] = {0};
    for (int f = 0; f < SN_N + SN_M; f++) for (int i = 0; i < SN_SYS; i++) total[i] += ref[f].runs[i] > 0;
    for (int i = 0; i < SN_SYS; i++) CHECKF(total[i] > 0, "system %d never ran", i);
    CHECK(total[1] < SN_N + SN_M && total[2] < SN_N + SN_M && total[6] < SN_N + SN_M);
    free(ref);
    free(run);
    free(again);
    free(s);
    free(s2);
}

/* ==== 12. random differential test ============================================= */
/* Random stage lists (ordinary stages, fixed-step stages, step groups; some
   unscaled, some with a run_if), random systems in them (chunked,
   MAIN_THREAD, EXCLUSIVE, declared order, intervals, run_if, some spawning),
   and per frame a random dt (exactly representable), time scale, sometimes
   ecs_progress_steps, toggles between frames and toggles made by a
   MAIN_THREAD controller in stage 0. A model written from the rules (not
   from the implementation) predicts per frame how often every system runs,
   every stage's turns, accumulator (alpha) and dropped time, the enabled
   flags and the entity count; the world must agree at 1, 2, 3 and 8
   threads, with the same world hash at each. */
enum { RM_FRAMES = 40, RM_STAGES = 7, RM_SYS = 40, RM_ROWS = 100 };
typedef struct rm_stage {
    int kind;                  /* 0 ordinary, 1 fixed-step (first of its group), 2 group member */
    int head;                  /* kind 2: the group's first stage */
    float fixed_dt, max_lag;
    int max_steps;
    bool unscaled, has_cond;
    bool cond[RM_FRAMES];      /* its run_if's answer per frame */
    ecs_stage id;
} rm_stage;
typedef struct rm_sys {
    int stage, interval, chunk, after[2], after_n;
    uint32_t flags;
    bool spawn, has_cond, unscaled;
    bool cond[RM_FRAMES];
    float fixed;               /* the it->dt of a fixed-step stage's system; 0 in an ordinary stage */
    char name[16];
    ecs_system id;
    ecs_id pos, tag;
} rm_sys;
typedef struct rm_toggle { int kind, index; bool on; } rm_toggle;   /* kind 0: system, 1: stage */
typedef struct rm_frame {
    float dt, scale;
    int steps;                 /* < 0: ecs_progress; else ecs_progress_steps(steps) */
    rm_toggle between[2], ctl[2];
    int between_n, ctl_n;
} rm_frame;
typedef struct rm_cfg {
    int stage_n, sys_n;
    rm_stage st[RM_STAGES];
    rm_sys sys[RM_SYS];
    rm_frame fr[RM_FRAMES];
    /* the model's predictions, per frame */
    long runs[RM_FRAMES][RM_SYS];
    int last[RM_FRAMES][RM_STAGES];
    uint64_t turns[RM_FRAMES][RM_STAGES];
    double acc[RM_FRAMES][RM_STAGES], dropped[RM_FRAMES][RM_STAGES];
    bool sys_en[RM_FRAMES][RM_SYS], st_en[RM_FRAMES][RM_STAGES];
    long spawned[RM_FRAMES];
} rm_cfg;
static float rm_scale;   /* the time scale of the running frame (set between frames) */

static void rm_generate(rm_cfg *c, unsigned long long *rng) {
    static const int fixed_n[] = {8, 16, 24, 32, 64};
    static const int steps_n[] = {0, 1, 2, 3, 8};
    static const float lags[] = {0, 1 / 16.f, 1 / 8.f, 0.5f};
    static const float scales[] = {0, 0.5f, 1, 2};
    memset(c, 0, sizeof *c);
    c->stage_n = 2 + (int)test_below(rng, RM_STAGES - 1);
    for (int i = 1; i < c->stage_n; i++) {
        rm_stage *s = &c->st[i];
        const rm_stage *p = &c->st[i - 1];
        unsigned k = test_below(rng, 10);
        if (p->kind != 0 && k < 5) {
            s->kind = 2;
            s->head = p->kind == 1 ? i - 1 : p->head;
        } else if (k < 7) {
            s->kind = 1;
            s->fixed_dt = (float)fixed_n[test_below(rng, 5)] / 1024.0f;
            s->max_steps = steps_n[test_below(rng, 5)];
            s->max_lag = lags[test_below(rng, 4)];
            s->unscaled = test_below(rng, 4) == 0;
        } else {
            s->unscaled = test_below(rng, 4) == 0;
        }
        s->has_cond = test_below(rng, 10) < 3;
        for (int f = 0; f < RM_FRAMES; f++) s->cond[f] = test_below(rng, 4) != 0;
    }
    c->sys_n = 1;   /* 0: the controller, MAIN_THREAD in stage 0 */
    c->sys[0].flags = ECS_SYSTEM_MAIN_THREAD;
    snprintf(c->sys[0].name, sizeof c->sys[0].name, "ctl");
    for (int i = 0; i < c->stage_n; i++) {
        int n = 1 + (int)test_below(rng, 4), first = c->sys_n;
        const rm_stage *st = &c->st[i];
        for (int j = 0; j < n && c->sys_n < RM_SYS; j++) {
            rm_sys *s = &c->sys[c->sys_n];
            s->stage = i;
            snprintf(s->name, sizeof s->name, "s%u", (unsigned)c->sys_n % 1000u);
            unsigned k = test_below(rng, 20);
            if (k < 5) s->chunk = 8 + (int)test_below(rng, 25);
            else if (k < 8) s->flags = ECS_SYSTEM_MAIN_THREAD;
            else if (k == 8) s->flags = ECS_SYSTEM_EXCLUSIVE;
            s->interval = test_below(rng, 2) ? 0 : 1 + (int)test_below(rng, 4);
            s->has_cond = test_below(rng, 10) < 4;
            for (int f = 0; f < RM_FRAMES; f++) s->cond[f] = test_below(rng, 5) < 3;
            s->spawn = !s->chunk && test_below(rng, 5) == 0;
            for (int a = 0; a < 2; a++)
                if (c->sys_n > first && test_below(rng, 10) < 4) {
                    int t = first + (int)test_below(rng, (unsigned)(c->sys_n - first));
                    if (!s->after_n || s->after[0] != t) s->after[s->after_n++] = t;
                }
            s->fixed = st->kind == 1 ? st->fixed_dt : st->kind == 2 ? c->st[st->head].fixed_dt : 0;
            s->unscaled = st->kind == 0 && st->unscaled;
            c->sys_n++;
        }
    }
    float scale = 1;
    for (int f = 0; f < RM_FRAMES; f++) {
        rm_frame *fr = &c->fr[f];
        fr->dt = test_below(rng, 8) == 0 ? 0 : (float)(1 + test_below(rng, 96)) / 1024.0f;
        if (test_below(rng, 15) == 0) fr->dt = (float)(200 + test_below(rng, 400)) / 1024.0f;
        if (test_below(rng, 8) == 0) scale = scales[test_below(rng, 4)];
        fr->scale = scale;
        fr->steps = test_below(rng, 5) == 0 ? (int)test_below(rng, 4) : -1;
        rm_toggle *lists[2] = {fr->between, fr->ctl};
        int *counts[2] = {&fr->between_n, &fr->ctl_n};
        for (int l = 0; l < 2; l++) {
            *counts[l] = (int)test_below(rng, 3);
            for (int t = 0; t < *counts[l]; t++) {
                rm_toggle *x = &lists[l][t];
                x->kind = (int)test_below(rng, 2);
                x->index = x->kind ? 1 + (int)test_below(rng, (unsigned)(c->stage_n - 1))
                                   : 1 + (int)test_below(rng, (unsigned)(c->sys_n - 1));
                x->on = test_below(rng, 5) < 3;
            }
        }
    }
}

/* The model: the rules of the API contract, run on plain arrays. */
static void rm_model_turn(rm_cfg *c, int stage, uint64_t turn, int f, const bool *en, long *spawned) {
    for (int s = 0; s < c->sys_n; s++) {
        const rm_sys *y = &c->sys[s];
        if (y->stage != stage || !en[s]) continue;
        if (y->interval > 1 && turn % (uint64_t)y->interval) continue;
        if (y->has_cond && !y->cond[f]) continue;
        c->runs[f][s]++;
        if (y->spawn) (*spawned)++;
    }
}
static void rm_model(rm_cfg *c) {
    bool sys_en[RM_SYS], st_en[RM_STAGES], latch0[RM_SYS];
    double acc[RM_STAGES] = {0}, dropped[RM_STAGES] = {0};
    uint64_t turns[RM_STAGES] = {0};
    long spawned = 0;
    for (int s = 0; s < RM_SYS; s++) sys_en[s] = true;
    for (int i = 0; i < RM_STAGES; i++) st_en[i] = true;
    for (int f = 0; f < RM_FRAMES; f++) {
        const rm_frame *fr = &c->fr[f];
        for (int t = 0; t < fr->between_n; t++)
            *(fr->between[t].kind ? &st_en[fr->between[t].index] : &sys_en[fr->between[t].index]) = fr->between[t].on;
        memcpy(latch0, sys_en, sizeof latch0);   /* stage 0's turn has begun when the controller runs */
        for (int t = 0; t < fr->ctl_n; t++)
            *(fr->ctl[t].kind ? &st_en[fr->ctl[t].index] : &sys_en[fr->ctl[t].index]) = fr->ctl[t].on;
        for (int i = 0; i < c->stage_n; i++) {
            const rm_stage *st = &c->st[i];
            if (st->kind == 2) continue;   /* with its group */
            if (!st_en[i] || (st->has_cond && !st->cond[f])) continue;
            if (st->kind == 0) {
                rm_model_turn(c, i, turns[i]++, f, i == 0 ? latch0 : sys_en, &spawned);
                c->last[f][i]++;
                continue;
            }
            int k;
            double fixed = (double)st->fixed_dt;
            if (fr->steps >= 0) k = fr->steps;
            else {
                acc[i] += (double)fr->dt * (st->unscaled ? 1.0 : (double)fr->scale);
                k = (int)floor(acc[i] / fixed);
                if (k > (st->max_steps ? st->max_steps : 8)) k = st->max_steps ? st->max_steps : 8;
                acc[i] -= k * fixed;
            }
            for (int step = 0; step < k; step++) {
                rm_model_turn(c, i, turns[i]++, f, sys_en, &spawned);
                c->last[f][i]++;
                for (int m = i + 1; m < c->stage_n && c->st[m].kind == 2; m++) {
                    if (!st_en[m] || (c->st[m].has_cond && !c->st[m].cond[f])) continue;
                    rm_model_turn(c, m, turns[m]++, f, sys_en, &spawned);
                    c->last[f][m]++;
                }
            }
            if (fr->steps < 0) {
                double lag = st->max_lag > 0 ? (double)st->max_lag : 0.25;
                if (acc[i] > lag) { dropped[i] += acc[i] - lag; acc[i] = lag; }
            }
        }
        for (int i = 0; i < RM_STAGES; i++) {
            c->turns[f][i] = turns[i];
            c->acc[f][i] = acc[i];
            c->dropped[f][i] = dropped[i];
            c->st_en[f][i] = st_en[i];
        }
        memcpy(c->sys_en[f], sys_en, sizeof sys_en);
        c->spawned[f] = spawned;
    }
}

static bool rm_sys_cond(ecs_world *w, void *ctx) {
    (void)w;
    return ((const rm_sys *)ctx)->cond[gl.frame];
}
static bool rm_stage_cond(ecs_world *w, void *ctx) {
    (void)w;
    return ((const rm_stage *)ctx)->cond[gl.frame];
}
static void rm_fn(ecs_iter *it) {
    const rm_sys *s = (const rm_sys *)it->ctx;
    if (!gl_count(it)) return;
    float want = s->fixed > 0 ? s->fixed : s->unscaled ? gl.real_dt : gl.real_dt * rm_scale;
    TCHECK(it, it->dt == want);
    if (s->flags) TCHECK(it, it->thread == 0);
    if (s->chunk) {
        int32_t *p = (int32_t *)ecs_field(it, 0);
        TCHECK(it, p != NULL);
        for (int i = 0; p && i < it->count; i++)   /* (no signed overflow) */
            p[i] = (int32_t)(((uint32_t)p[i] * 3u + (uint32_t)s->stage + 1u) & 0x7fffffffu);
        test_spin_us(test_spin_len(0.3 * it->count));
    } else {
        test_spin_us(test_spin_len(25));
    }
    if (s->spawn) {
        ecs_entity e = ecs_cmd_create(it->commands);
        TCHECK(it, e && ecs_cmd_add(it->commands, e, s->tag) == ECS_OK);
    }
}
static void rm_ctl(ecs_iter *it) {
    const rm_cfg *c = (const rm_cfg *)it->ctx;
    if (!gl_count(it)) return;
    TCHECK(it, it->thread == 0);
    const rm_frame *fr = &c->fr[gl.frame];
    for (int t = 0; t < fr->ctl_n; t++) {
        const rm_toggle *x = &fr->ctl[t];
        ecs_result r = x->kind ? ecs_stage_enable(it->world, c->st[x->index].id, x->on)
                               : ecs_system_enable(it->world, c->sys[x->index].id, x->on);
        TCHECK(it, r == ECS_OK);
    }
}
static void rm_dump(const rm_cfg *c, int upto) {
    for (int i = 0; i < c->stage_n; i++) {
        const rm_stage *s = &c->st[i];
        fprintf(stderr, "    stage %d: %s", i, s->kind == 0 ? "ordinary" : s->kind == 1 ? "fixed" : "member");
        if (s->kind == 1) fprintf(stderr, " fixed_dt %g max_steps %d max_lag %g", (double)s->fixed_dt, s->max_steps,
                                  (double)s->max_lag);
        if (s->kind == 2) fprintf(stderr, " of %d", s->head);
        if (s->unscaled) fprintf(stderr, " unscaled");
        if (s->has_cond) {
            fprintf(stderr, " run_if ");
            for (int f = 0; f <= upto; f++) fputc(s->cond[f] ? '1' : '0', stderr);
        }
        fputc('\n', stderr);
    }
    for (int k = 0; k < c->sys_n; k++) {
        const rm_sys *s = &c->sys[k];
        fprintf(stderr, "    %s (handle %u): stage %d%s%s", s->name, (unsigned)s->id, s->stage,
                s->flags & ECS_SYSTEM_MAIN_THREAD ? " main" : "", s->flags & ECS_SYSTEM_EXCLUSIVE ? " exclusive" : "");
        if (s->chunk) fprintf(stderr, " chunk %d", s->chunk);
        if (s->interval) fprintf(stderr, " interval %d", s->interval);
        for (int a = 0; a < s->after_n; a++) fprintf(stderr, " after s%d", s->after[a]);
        if (s->has_cond) {
            fprintf(stderr, " run_if ");
            for (int f = 0; f <= upto; f++) fputc(s->cond[f] ? '1' : '0', stderr);
        }
        fputc('\n', stderr);
    }
    for (int f = 0; f <= upto; f++) {
        const rm_frame *fr = &c->fr[f];
        fprintf(stderr, "    frame %d: dt %g scale %g steps %d;", f, (double)fr->dt, (double)fr->scale, fr->steps);
        for (int t = 0; t < fr->between_n; t++)
            fprintf(stderr, " between: %s %d %s;", fr->between[t].kind ? "stage" : "system", fr->between[t].index,
                    fr->between[t].on ? "on" : "off");
        for (int t = 0; t < fr->ctl_n; t++)
            fprintf(stderr, " ctl: %s %d %s;", fr->ctl[t].kind ? "stage" : "system", fr->ctl[t].index,
                    fr->ctl[t].on ? "on" : "off");
        fputc('\n', stderr);
    }
}

/* Runs config c at `threads`; returns the frame hash signature (0 on a
   mismatch, after reporting it). */
static uint64_t rm_run(rm_cfg *c, int threads, long config, long *helper_calls) {
    gl_reset();
    ecs_world *w = gl_world(threads);
    if (!w) { CHECK(w); return 0; }
    ecs_id pos = ecs_component(w, "Pos", sizeof(int32_t), _Alignof(int32_t));
    ecs_id tag = ecs_component(w, "Spawned", 0, 0);
    CHECK(ecs_create_many(w, RM_ROWS, &pos, 1, NULL) == ECS_OK);
    for (int i = 1; i < c->stage_n; i++) {
        rm_stage *s = &c->st[i];
        ecs_stage_desc d = {.name = NULL, .run_if = s->has_cond ? rm_stage_cond : NULL, .run_if_ctx = s};
        if (s->kind == 1) { d.fixed_dt = s->fixed_dt; d.max_steps = s->max_steps; d.max_lag = s->max_lag; }
        if (s->kind == 2) d.step_with = c->st[s->head].id;
        else d.unscaled = s->unscaled;
        s->id = ecs_stage_init(w, &d);
        CHECKF(s->id == (ecs_stage)i, "config %ld stage %d: %s", config, i, ecs_last_error(w));
    }
    for (int k = 0; k < c->sys_n; k++) {
        rm_sys *s = &c->sys[k];
        s->pos = pos;
        s->tag = tag;
        ecs_system_desc d = {.name = s->name, .fn = k ? rm_fn : rm_ctl, .ctx = k ? (void *)s : (void *)c,
            .stage = c->st[s->stage].id, .flags = s->flags, .interval = s->interval, .chunk_size = s->chunk,
            .run_if = s->has_cond ? rm_sys_cond : NULL, .run_if_ctx = s};
        if (s->chunk) d.terms[0] = (ecs_term)ECS_TERM_W(pos);
        for (int a = 0; a < s->after_n; a++) d.after[a] = c->sys[s->after[a]].name;
        s->id = ecs_system_add(w, &d);
        CHECKF(s->id != 0, "config %ld system %d: %s", config, k, ecs_last_error(w));
    }
    uint64_t sig = 1;
    long helpers = 0;
    for (int f = 0; f < RM_FRAMES; f++) {
        const rm_frame *fr = &c->fr[f];
        for (int t = 0; t < fr->between_n; t++) {
            const rm_toggle *x = &fr->between[t];
            CHECK_EQ_INT(x->kind ? ecs_stage_enable(w, c->st[x->index].id, x->on)
                                 : ecs_system_enable(w, c->sys[x->index].id, x->on), ECS_OK);
        }
        ecs_world_set_time_scale(w, fr->scale);
        rm_scale = fr->scale;
        helpers += gl_helper_calls();
        gl_clear_counts();
        gl.frame = f;
        gl.real_dt = fr->dt;
        ecs_result r = fr->steps < 0 ? ecs_progress(w, fr->dt) : ecs_progress_steps(w, fr->steps, fr->dt);
        char why[400] = "";
        int n = 0;
#define RM_WHY(...) do { if (n < (int)sizeof why - 1) \
        n += snprintf(why + n, sizeof why - (size_t)n, __VA_ARGS__); } while (0)
        if (r != ECS_OK) RM_WHY(" progress: %s (%s);", ecs_result_str(r), ecs_last_error(w));
        for (int k = 0; k < c->sys_n; k++) {
            const rm_sys *s = &c->sys[k];
            long runs = gl_runs(s->id), calls = gl_calls(s->id);
            long want_calls = c->runs[f][k] * (s->chunk ? (RM_ROWS + s->chunk - 1) / s->chunk : 1);
            if (runs != c->runs[f][k] || calls != want_calls)
                RM_WHY(" %s ran %ld (%ld calls), want %ld (%ld calls);", s->name, runs, calls, c->runs[f][k], want_calls);
            if (ecs_system_enabled(w, s->id) != c->sys_en[f][k])
                RM_WHY(" %s enabled %d, want %d;", s->name, ecs_system_enabled(w, s->id), c->sys_en[f][k]);
        }
        for (int i = 0; i < c->stage_n; i++) {
            const rm_stage *st = &c->st[i];
            ecs_stage_stats ss;
            memset(&ss, 0, sizeof ss);
            ecs_stage_stats_get(w, st->id, &ss);
            if (ss.steps_last != c->last[f][i] || ss.steps != c->turns[f][i])
                RM_WHY(" stage %d: %d turns (%llu in all), want %d (%llu);", i, ss.steps_last,
                       (unsigned long long)ss.steps, c->last[f][i], (unsigned long long)c->turns[f][i]);
            if (ecs_stage_enabled(w, st->id) != c->st_en[f][i])
                RM_WHY(" stage %d enabled %d, want %d;", i, ecs_stage_enabled(w, st->id), c->st_en[f][i]);
            if (st->kind == 1) {
                double want_alpha = c->acc[f][i] / (double)st->fixed_dt, alpha = (double)ecs_stage_alpha(w, st->id);
                if (fabs(alpha - want_alpha) > 1e-6 * (1 + want_alpha) || ss.dropped_time != c->dropped[f][i])
                    RM_WHY(" stage %d: alpha %.9g dropped %.9g, want %.9g, %.9g;", i, alpha, ss.dropped_time,
                           want_alpha, c->dropped[f][i]);
            }
        }
        if (ecs_count(w) != (size_t)(RM_ROWS + c->spawned[f]))
            RM_WHY(" %zu entities, want %ld;", ecs_count(w), RM_ROWS + c->spawned[f]);
#undef RM_WHY
        if (n) {
            CHECKF(0, "config %ld (seed %llu), %d threads, frame %d:%s", config, test_g.seed, threads, f, why);
            rm_dump(c, f);
            sig = 0;
            break;
        }
        sig = gl_mix(sig, ecs_world_hash(w));
    }
    GL_REPORT("random model");
    ecs_world_free(w);
    *helper_calls += helpers + gl_helper_calls();
    return sig;
}
TEST(sched_gameloop_random_model) {
    rm_cfg *c = (rm_cfg *)malloc(sizeof *c);
    REQUIRE(c);
    unsigned long long rng = test_g.seed ^ 0x6A3E100Bull;
    long configs = test_scaled(30, 3), helpers[4] = {0};
    for (long k = 0; k < configs && !test_g.checks_failed; k++) {
        rm_generate(c, &rng);
        rm_model(c);
        uint64_t ref = 0;
        for (int ti = 0; ti < 4; ti++) {
            uint64_t sig = rm_run(c, gl_threads[ti], k, &helpers[ti]);
            if (!sig) break;
            if (ti == 0) ref = sig;
            else CHECKF(sig == ref, "config %ld: the world hashes at %d threads differ from 1 thread's", k,
                        gl_threads[ti]);
        }
    }
    for (int ti = 1; ti < 4 && !test_g.checks_failed; ti++) GL_CHECK_HELPERS(gl_threads[ti], helpers[ti]);
    free(c);
}

/* ==== 13. bad input ============================================================ */
/* Each is refused with the documented error and changes nothing: no stage
   is added, no frame is counted, no system runs, the scale stays. */
static void gl_try_stage_init(ecs_world *w) {   /* inside a system: refused */
    gl_slot *s = &gl_slots[GL_SLOTS - 1];
    if (ecs_stage_init(w, &(ecs_stage_desc){.name = "Inside", .fixed_dt = 0.5f}) != 0) s->calls[0]++;
    if (ecs_stage_add(w, "Inside2") != 0) s->calls[0]++;
}
static void gl_stage_init_inside(ecs_iter *it) {
    gl_count(it);
    gl_try_stage_init(it->world);
}
TEST(gameloop_bad_input) {
    gl_reset();
    ecs_world *w = gl_world(2);
    REQUIRE(w);
    ecs_stage f = ecs_stage_init(w, &(ecs_stage_desc){.name = "F", .fixed_dt = 0.25f});
    ecs_stage o = ecs_stage_add(w, "O");
    REQUIRE(f && o);
    gl_sys any = {.dt = -1};
    ecs_system s0 = ecs_system_add(w, &(ecs_system_desc){.name = "S0", .fn = gl_fn, .ctx = &any});
    ecs_system sf = ecs_system_add(w, &(ecs_system_desc){.name = "SF", .fn = gl_fn, .ctx = &any, .stage = f});
    REQUIRE(s0 && sf);
    CHECK_EQ_INT(gl_progress(w, 0, 0.25f), ECS_OK);
    CHECK(gl_runs(s0) == 1 && gl_runs(sf) == 1);
    uint32_t stages = ecs_stage_count(w);
    struct { const char *what; ecs_stage_desc d; } bad[] = {
        {"fixed_dt < 0", {.name = "B", .fixed_dt = -0.25f}},
        {"fixed_dt NaN", {.name = "B", .fixed_dt = NAN}},
        {"fixed_dt inf", {.name = "B", .fixed_dt = INFINITY}},
        {"max_steps < 0", {.name = "B", .fixed_dt = 0.25f, .max_steps = -1}},
        {"max_lag < 0", {.name = "B", .fixed_dt = 0.25f, .max_lag = -0.5f}},
        {"max_lag NaN", {.name = "B", .fixed_dt = 0.25f, .max_lag = NAN}},
        {"max_lag inf", {.name = "B", .fixed_dt = 0.25f, .max_lag = INFINITY}},
        {"step_with an ordinary stage", {.name = "B", .step_with = o}},
        {"step_with a group that is not the last stage's", {.name = "B", .step_with = f}},
        {"step_with an unknown stage", {.name = "B", .step_with = 999}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ecs_stage st = ecs_stage_init(w, &bad[i].d);
        CHECKF(st == 0, "%s: made stage %u", bad[i].what, (unsigned)st);
        CHECKF(ecs_last_error(w)[0] != 0, "%s: no error", bad[i].what);
        CHECK_EQ_INT(ecs_stage_count(w), stages);
    }
    CHECK(ecs_stage_init(w, NULL) == 0);
    CHECK(ecs_stage_init(NULL, &(ecs_stage_desc){.name = "X"}) == 0);
    /* members with a clock of their own */
    ecs_stage g = ecs_stage_init(w, &(ecs_stage_desc){.name = "G", .fixed_dt = 0.125f});
    REQUIRE(g);
    stages = ecs_stage_count(w);
    struct { const char *what; ecs_stage_desc d; } bad_member[] = {
        {"member with fixed_dt", {.name = "M", .step_with = g, .fixed_dt = 0.125f}},
        {"member with max_steps", {.name = "M", .step_with = g, .max_steps = 2}},
        {"member with max_lag", {.name = "M", .step_with = g, .max_lag = 0.5f}},
        {"member with unscaled", {.name = "M", .step_with = g, .unscaled = true}},
        {"step_with an earlier group", {.name = "M", .step_with = f}},
    };
    for (size_t i = 0; i < sizeof bad_member / sizeof bad_member[0]; i++) {
        ecs_stage st = ecs_stage_init(w, &bad_member[i].d);
        CHECKF(st == 0, "%s: made stage %u", bad_member[i].what, (unsigned)st);
        CHECK_EQ_INT(ecs_stage_count(w), stages);
    }
    ecs_stage m = ecs_stage_init(w, &(ecs_stage_desc){.name = "M", .step_with = g});
    ecs_stage m2 = ecs_stage_init(w, &(ecs_stage_desc){.name = "M2", .step_with = g});   /* after a member */
    CHECK(m == stages && m2 == stages + 1);
    stages = ecs_stage_count(w);
    /* a member is not a clock: step_with names the group's first stage */
    CHECK_EQ_INT(ecs_stage_init(w, &(ecs_stage_desc){.name = "M3", .step_with = m2}), 0);
    CHECK(strstr(ecs_last_error(w), "fixed-step"));
    CHECK_EQ_INT(ecs_stage_count(w), stages);
    uint32_t systems = ecs_system_count(w);
    CHECK_EQ_INT(ecs_system_add(w, &(ecs_system_desc){.name = "Neg", .fn = gl_fn, .interval = -1}), 0);
    CHECK(strstr(ecs_last_error(w), "interval"));
    CHECK_EQ_INT(ecs_system_count(w), systems);
    /* dt and steps */
    gl_clear_counts();
    uint64_t frames = gl_frames(w);
    static const float bad_dt[] = {NAN, -NAN, INFINITY, -INFINITY, -0.25f, -1e-30f};
    for (int i = 0; i < 6; i++) {
        CHECKF(ecs_progress(w, bad_dt[i]) == ECS_ERR_ARG, "dt %g", (double)bad_dt[i]);
        CHECK_EQ_INT(ecs_progress_steps(w, 1, bad_dt[i]), ECS_ERR_ARG);
    }
    CHECK_EQ_INT(ecs_progress_steps(w, -1, 0.25f), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_progress_steps(w, -100, 0.25f), ECS_ERR_ARG);
    CHECK_EQ_INT(gl_frames(w), frames);
    CHECK(gl_runs(s0) == 0 && gl_runs(sf) == 0);
    CHECK(ecs_stage_alpha(w, f) == 0.0f);
    /* the scale */
    ecs_world_set_time_scale(w, 1.5f);
    ecs_world_set_time_scale(w, -2.0f);
    ecs_world_set_time_scale(w, NAN);
    CHECK(ecs_world_time_scale(w) == 1.5f);
    ecs_world_set_time_scale(NULL, 2.0f);   /* no crash */
    /* enabling unknown things */
    CHECK_EQ_INT(ecs_system_enable(w, 0, false), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_system_enable(w, ecs_system_count(w) + 1, false), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_enable(w, stages, false), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_stage_enable(NULL, 0, false), ECS_ERR_ARG);
    /* a stage made while systems run */
    ecs_system in = ecs_system_add(w, &(ecs_system_desc){.name = "In", .fn = gl_stage_init_inside, .ctx = &any});
    ecs_system in_ex = ecs_system_add(w, &(ecs_system_desc){.name = "InEx", .fn = gl_stage_init_inside, .ctx = &any,
        .flags = ECS_SYSTEM_EXCLUSIVE});
    REQUIRE(in && in_ex);
    CHECK_EQ_INT(gl_progress(w, 1, 0.25f), ECS_OK);
    CHECK_EQ_INT(gl_frames(w), frames + 1);
    CHECK(gl_runs(in) == 1 && gl_runs(in_ex) == 1);
    CHECK_EQ_INT(gl_slots[GL_SLOTS - 1].calls[0], 0);
    CHECK_EQ_INT(ecs_stage_count(w), stages);
    GL_REPORT("bad input");
    ecs_world_free(w);
}

/* ==== 14. DOT and trace ======================================================== */
TEST(gameloop_dot) {
    gl_reset();
    ecs_world *w = gl_world(1);
    REQUIRE(w);
    ecs_stage phys = ecs_stage_init(w, &(ecs_stage_desc){.name = "Physics", .fixed_dt = 1 / 60.f});
    ecs_stage dmg = ecs_stage_init(w, &(ecs_stage_desc){.name = "Damage", .step_with = phys});
    REQUIRE(phys && dmg);
    gl_sys any = {.dt = -1};
    gl_cond never = {.pattern = "0"};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Plain", .fn = gl_fn, .ctx = &any}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Gated", .fn = gl_fn, .ctx = &any, .run_if = gl_cond_fn,
        .run_if_ctx = &never}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Every3", .fn = gl_fn, .ctx = &any, .interval = 3}));
    ecs_system off = ecs_system_add(w, &(ecs_system_desc){.name = "Off", .fn = gl_fn, .ctx = &any});
    REQUIRE(off && ecs_system_enable(w, off, false) == ECS_OK);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Integrate", .fn = gl_fn, .ctx = &any, .stage = phys}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Hurt", .fn = gl_fn, .ctx = &any, .stage = dmg}));
    FILE *f = tmpfile();
    REQUIRE(f);
    CHECK_EQ_INT(ecs_write_dot(w, f), ECS_OK);
    char *s = test_read_all(f);
    fclose(f);
    REQUIRE(s);
    CHECKF(strstr(s, "run_if") != NULL, "no run_if in\n%s", s);
    CHECKF(strstr(s, "every 3") != NULL, "no \"every 3\" in\n%s", s);
    CHECKF(strstr(s, "disabled") != NULL, "no \"disabled\" in\n%s", s);
    CHECKF(strstr(s, "fixed") != NULL, "no fixed-step label in\n%s", s);
    CHECKF(strstr(s, "steps with Physics") != NULL, "no \"steps with Physics\" in\n%s", s);
    CHECK(strstr(s, "dashed") != NULL);
    CHECK(test_count_str(s, "{") == test_count_str(s, "}"));
    free(s);
    /* a disabled stage is shown too; the graph is still valid */
    CHECK_EQ_INT(ecs_stage_enable(w, dmg, false), ECS_OK);
    f = tmpfile();
    REQUIRE(f);
    CHECK_EQ_INT(ecs_write_dot(w, f), ECS_OK);
    s = test_read_all(f);
    fclose(f);
    REQUIRE(s);
    CHECK(test_count_str(s, "disabled") >= 2);
    free(s);
    ecs_world_free(w);
}

/* A system that may be skipped is still proven: its race is reported, and
   the message says why a condition does not excuse it. */
TEST(gameloop_race_of_skipped_system) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .order = ECS_ORDER_EXPLICIT});
    REQUIRE(w);
    ecs_id hp = ecs_component(w, "Hp", sizeof(int), 0);
    REQUIRE(hp);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Heal", .fn = gl_fn, .terms = {ECS_TERM_W(hp)},
                                                 .run_if = gl_never}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Hurt", .fn = gl_fn, .terms = {ECS_TERM_W(hp)},
                                                 .interval = 4}));
    ecs_report rep;
    CHECK_EQ_INT(ecs_validate(w, &rep), ECS_ERR_INVALID_GRAPH);
    REQUIRE(rep.count == 1);
    CHECK(rep.problems[0].kind == ECS_PROBLEM_RACE);
    CHECKF(strstr(rep.problems[0].message, "\"Heal\" has a run_if, but a system that may run is checked"),
           "%s", rep.problems[0].message);
    CHECK_EQ_INT(ecs_progress(w, 0.1f), ECS_ERR_INVALID_GRAPH);
    ecs_world_free(w);
}

/* ---- found in review ---------------------------------------------------------- */
/* An EXCLUSIVE system's run_if is asked after the sync point that runs
   before it, so it sees what the system will see: Spawner's entity. */
static void gl_spawner(ecs_iter *it) { (void)ecs_cmd_create(it->commands); }
static bool gl_any_entity(ecs_world *w, void *ctx) { (void)ctx; return ecs_count(w) > 0; }
static void gl_cleanup(ecs_iter *it) {
    int *runs = (int *)it->ctx;
    ++*runs;
    ecs_query *all = ecs_query_new(it->world, &(ecs_query_desc){.terms = {{0}}});
    if (!all) return;
    ecs_entity e = 0;
    ecs_iter q = ecs_query_iter(it->world, all);
    if (ecs_query_next(&q) && q.count) e = q.entities[0];
    ecs_iter_fini(&q);
    ecs_query_free(all);
    if (e) (void)ecs_destroy(it->world, e);
}
TEST(sched_gameloop_exclusive_run_if_after_sync) {
    for (int ti = 0; ti < 4; ti++) {
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        int runs = 0;
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Spawner", .fn = gl_spawner}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Cleanup", .fn = gl_cleanup, .ctx = &runs,
            .after = {"Spawner"}, .flags = ECS_SYSTEM_EXCLUSIVE, .run_if = gl_any_entity}));
        for (int f = 0; f < 5; f++) CHECK_EQ_INT(ecs_progress(w, 0.1f), ECS_OK);
        CHECKF(runs == 5, "threads %d: Cleanup ran %d times in 5 frames (its run_if must see Spawner's entity)",
               gl_threads[ti], runs);
        CHECK_EQ_INT(ecs_count(w), 0);
        ecs_world_free(w);
    }
}

/* A fixed step longer than the default lag still steps; a max_lag below
   fixed_dt, which could never hold a step, is refused. */
TEST(gameloop_long_fixed_step) {
    ecs_world *w = gl_world(1);
    REQUIRE(w);
    ecs_stage slow = ecs_stage_init(w, &(ecs_stage_desc){.name = "Slow", .fixed_dt = 0.5f});
    REQUIRE(slow);
    for (int f = 0; f < 64; f++) CHECK_EQ_INT(ecs_progress(w, 1.0f / 16), ECS_OK);   /* 4 s */
    ecs_stage_stats st;
    REQUIRE(ecs_stage_stats_get(w, slow, &st) == ECS_OK);
    CHECK_EQ_INT(st.steps, 8);
    CHECK(st.dropped_time == 0);
    uint32_t stages = ecs_stage_count(w);
    CHECK_EQ_INT(ecs_stage_init(w, &(ecs_stage_desc){.name = "Bad", .fixed_dt = 0.2f, .max_lag = 0.1f}), 0);
    CHECK(strstr(ecs_last_error(w), "max_lag"));
    CHECK_EQ_INT(ecs_stage_count(w), stages);
    CHECK(ecs_stage_init(w, &(ecs_stage_desc){.name = "Edge", .fixed_dt = 0.25f, .max_lag = 0.25f}) != 0);
    ecs_world_free(w);
}

/* A frame stopped by an error: the stages it did not reach took no turn
   (steps_last 0, not the previous frame's), and got no time. */
static void gl_open_defer(ecs_iter *it) {
    int *frame = (int *)it->ctx;
    if (++*frame == 2) ecs_defer_begin(it->world);   /* left open: the frame stops */
}
TEST(gameloop_stopped_frame_stats) {
    ecs_world *w = gl_world(1);
    REQUIRE(w);
    int frame = 0;
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Opener", .fn = gl_open_defer, .ctx = &frame,
                                                 .flags = ECS_SYSTEM_EXCLUSIVE}));
    ecs_stage fx = ecs_stage_init(w, &(ecs_stage_desc){.name = "Fixed", .fixed_dt = 0.25f});
    REQUIRE(fx);
    CHECK_EQ_INT(ecs_progress(w, 0.75f), ECS_OK);
    ecs_stage_stats st;
    REQUIRE(ecs_stage_stats_get(w, fx, &st) == ECS_OK);
    CHECK_EQ_INT(st.steps_last, 3);
    CHECK_EQ_INT(ecs_progress(w, 0.75f), ECS_ERR_BUSY);
    REQUIRE(ecs_stage_stats_get(w, fx, &st) == ECS_OK);
    CHECK_EQ_INT(st.steps_last, 0);
    CHECK_EQ_INT(st.steps, 3);
    CHECK(ecs_stage_alpha(w, fx) == 0);
    CHECK_EQ_INT(ecs_progress(w, 0.75f), ECS_OK);
    REQUIRE(ecs_stage_stats_get(w, fx, &st) == ECS_OK);
    CHECK_EQ_INT(st.steps, 6);
    ecs_world_free(w);
}

/* A huge dt times the scale stays finite in the clock, so the save file the
   world writes reads back. */
TEST(gameloop_huge_dt_saves) {
    ecs_world *w = gl_world(1);
    REQUIRE(w);
    ecs_stage fx = ecs_stage_init(w, &(ecs_stage_desc){.name = "Fixed", .fixed_dt = 0.25f});
    REQUIRE(fx);
    ecs_world_set_time_scale(w, 4);
    CHECK_EQ_INT(ecs_progress(w, FLT_MAX), ECS_OK);
    ecs_stage_stats st;
    REQUIRE(ecs_stage_stats_get(w, fx, &st) == ECS_OK);
    CHECK(st.dropped_time > 1e38 && st.dropped_time < 1e300);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    FILE *f = tmpfile();
    REQUIRE(f);
    CHECK_EQ_INT(ecs_snapshot_write(s, f), ECS_OK);
    rewind(f);
    ecs_snapshot *back = ecs_snapshot_read(w, f);
    CHECKF(back != NULL, "%s", ecs_last_error(w));
    fclose(f);
    ecs_snapshot_free(back);
    ecs_snapshot_free(s);
    ecs_world_free(w);
}

/* The time scale, set by a MAIN_THREAD system while worker systems read it
   (the getters may be called anywhere): ThreadSanitizer must see no race. */
static void gl_scale_setter(ecs_iter *it) {
    ecs_world_set_time_scale(it->world, ecs_world_time_scale(it->world) == 1.0f ? 0.5f : 1.0f);
}
static void gl_scale_reader(ecs_iter *it) {
    float *seen = (float *)it->ctx;
    float v = ecs_world_time_scale(it->world);
    if (it->thread >= 0 && it->thread < GL_SLOTS) seen[it->thread] = v;
}
TEST(sched_gameloop_scale_getter) {
    for (int ti = 0; ti < 4; ti++) {
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        float seen[GL_SLOTS] = {0};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Setter", .fn = gl_scale_setter,
                                                     .flags = ECS_SYSTEM_MAIN_THREAD}));
        static const char *const names[8] = {"R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7"};
        for (int i = 0; i < 8; i++)
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = names[i], .fn = gl_scale_reader, .ctx = seen}));
        long frames = test_scaled(40, 8);
        for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0.1f), ECS_OK);
        for (int t = 0; t < GL_SLOTS; t++) CHECK(seen[t] == 0 || seen[t] == 0.5f || seen[t] == 1.0f);
        ecs_world_free(w);
    }
}

TEST(sched_gameloop_trace) {
    for (int ti = 0; ti < 4; ti++) {
        gl_reset();
        ecs_world *w = gl_world(gl_threads[ti]);
        REQUIRE(w);
        ecs_stage phys = ecs_stage_init(w, &(ecs_stage_desc){.name = "Physics", .fixed_dt = 0.25f});
        REQUIRE(phys);
        gl_sys any = {.dt = -1, .spin = test_spin_len(10)};
        gl_cond never = {.pattern = "0"};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Runner", .fn = gl_fn, .ctx = &any}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Skipper", .fn = gl_fn, .ctx = &any, .run_if = gl_cond_fn,
            .run_if_ctx = &never}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Stepper", .fn = gl_fn, .ctx = &any, .stage = phys}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Rarely", .fn = gl_fn, .ctx = &any, .stage = phys,
            .interval = 4}));   /* step 0 of the frame only */
        ecs_system off = ecs_system_add(w, &(ecs_system_desc){.name = "Offline", .fn = gl_fn, .ctx = &any});
        REQUIRE(off && ecs_system_enable(w, off, false) == ECS_OK);
        ecs_trace_enable(w, true);
        CHECK_EQ_INT(gl_progress(w, 0, 0.75f), ECS_OK);   /* 3 steps */
        FILE *f = tmpfile();
        REQUIRE(f);
        CHECK_EQ_INT(ecs_write_trace(w, f), ECS_OK);
        char *s = test_read_all(f);
        fclose(f);
        REQUIRE(s);
        CHECKF(test_count_str(s, "\"Stepper\"") == 3, "threads %d: %d Stepper events", gl_threads[ti],
               test_count_str(s, "\"Stepper\""));
        CHECK_EQ_INT(test_count_str(s, "\"Rarely\""), 1);
        CHECK_EQ_INT(test_count_str(s, "\"Runner\""), 1);
        CHECK_EQ_INT(test_count_str(s, "Skipper"), 0);
        CHECK_EQ_INT(test_count_str(s, "Offline"), 0);
        CHECKF(strstr(s, "\"step\":0") && strstr(s, "\"step\":1") && strstr(s, "\"step\":2") && !strstr(s, "\"step\":3"),
               "threads %d: steps in\n%s", gl_threads[ti], s);
        free(s);
        GL_REPORT("trace");
        ecs_world_free(w);
    }
}

void suite_gameloop(void) {
    RUN(sched_gameloop_run_if_skips);
    RUN(sched_gameloop_run_if_sees_this_turn);
    RUN(sched_gameloop_run_if_partner);
    RUN(sched_gameloop_run_if_access);
    RUN(sched_gameloop_interval);
    RUN(gameloop_enable_between_frames);
    RUN(sched_gameloop_enable_inside);
    RUN(sched_gameloop_enable_in_steps);
    RUN(sched_gameloop_stage_run_if);
    RUN(gameloop_fixed_exact);
    RUN(gameloop_fixed_jitter);
    RUN(gameloop_fixed_caps);
    RUN(sched_gameloop_step_sync);
    RUN(sched_gameloop_step_group);
    RUN(sched_gameloop_progress_steps);
    RUN(sched_gameloop_time_scale);
    RUN(sched_gameloop_batch);
    RUN(gameloop_stage_stats);
    RUN(sched_gameloop_snapshot_clock);
    RUN(sched_gameloop_random_model);
    RUN(gameloop_bad_input);
    RUN(gameloop_dot);
    RUN(sched_gameloop_trace);
    RUN(gameloop_race_of_skipped_system);
    RUN(sched_gameloop_exclusive_run_if_after_sync);
    RUN(gameloop_long_fixed_step);
    RUN(gameloop_stopped_frame_stats);
    RUN(gameloop_huge_dt_saves);
    RUN(sched_gameloop_scale_getter);
}
