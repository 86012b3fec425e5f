/* events tests: every reader sees every event once, in delivery order
   (checked against a model of the contract), the same order at 1, 2, 3 and
   8 threads, same-stage readers a turn late and step groups a step at a
   time, the backlog of skipped readers and the discards of disabled ones,
   observers (order, deferred structure, events they emit, unobserve,
   resimulation, access checks), pending handles in payloads, ecs_world_emit
   between frames, snapshots and save files with unread events, bad input,
   validation notes, and allocation failures at every point of a frame.
   Systems report into per-thread slots read after ecs_progress, and record
   what they see into their own ctx (one thread at a time: a reader's batch
   0, an unchunked system), so TSan sees every hand-off through the library. */
#include "test.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

static const int ev_threads[4] = {1, 2, 3, 8};
#ifdef ECS_NO_THREADS
#define EV_THREADED 0
#else
#define EV_THREADED 1
#endif

static ecs_world *ev_world(int threads) {
    return ecs_world_new(&(ecs_world_desc){.threads = threads});
}
static uint64_t ev_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h ^= h >> 31; h *= 0xff51afd7ed558ccdull; h ^= h >> 29;
    return h;
}

/* ---- per-thread check slots ------------------------------------------------- */
#define EV_SLOTS 9     /* threads 0..7, then "out of range" */
typedef struct ev_slot {
    long fails;
    int line;
    const char *what;
    char pad[64];
} ev_slot;
static ev_slot ev_slots[EV_SLOTS];
static long ev_frame;   /* the frame being run: set before each ecs_progress */

static void ev_reset(void) {
    memset(ev_slots, 0, sizeof ev_slots);
    ev_frame = 0;
}
/* CHECK for code inside systems: counted in the thread's slot. */
#define TCHECK(it, cond) do { if (!(cond)) { \
    ev_slot *s_ = &ev_slots[(it)->thread >= 0 && (it)->thread < EV_SLOTS - 1 ? (it)->thread : EV_SLOTS - 1]; \
    if (!s_->fails++) { s_->line = __LINE__; s_->what = #cond; } } } while (0)
#define EV_REPORT(label) ev_report(label, __LINE__)
static void ev_report(const char *label, int line) {
    for (int t = 0; t < EV_SLOTS; t++) {
        ev_slot *s = &ev_slots[t];
        if (!s->fails) continue;
        test_g.checks_failed++;
        fprintf(stderr, "  %s:%d: in a system (%s, thread %d): TCHECK(%s) failed %ld time(s); reported at line %d\n",
                __FILE__, s->line, label, t, s->what, s->fails, line);
        s->fails = 0;
    }
}

/* ---- payloads and recordings ------------------------------------------------- */
/* Four 32-bit fields: no padding, so hashes and save files see only these. */
typedef struct ev_msg { uint32_t src, frame, seq, aux; } ev_msg;
/* What a reader saw: the payload, and the turn of the run that saw it. */
typedef struct ev_rec { long run; ev_msg m; } ev_rec;
typedef struct ev_recs { ev_rec *v; size_t n, cap; bool oom; } ev_recs;

static void ev_push(ev_recs *x, long run, ev_msg m) {
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        ev_rec *v = (ev_rec *)realloc(x->v, cap * sizeof *v);
        if (!v) { x->oom = true; return; }
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n].run = run;
    x->v[x->n++].m = m;
}
static void ev_recs_free(ev_recs *x) {
    free(x->v);
    memset(x, 0, sizeof *x);
}
static bool ev_rec_eq(const ev_rec *a, const ev_rec *b) {
    return a->run == b->run && a->m.src == b->m.src && a->m.frame == b->m.frame && a->m.seq == b->m.seq &&
           a->m.aux == b->m.aux;
}
/* got must be want exactly: the same runs, events and order. */
#define EV_COMPARE(got, want, ...) ev_compare((got), (want), __LINE__, __VA_ARGS__)
static void ev_compare(const ev_recs *got, const ev_recs *want, int line, const char *fmt, ...)
    TEST_PRINTF(4, 5);
static void ev_compare(const ev_recs *got, const ev_recs *want, int line, const char *fmt, ...) {
    size_t i = 0;
    while (i < got->n && i < want->n && ev_rec_eq(&got->v[i], &want->v[i])) i++;
    if (i == got->n && i == want->n && !got->oom && !want->oom) return;
    test_g.checks_failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s:%d: ", __FILE__, line);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (seed %llu): %zu events seen, %zu expected; first difference at %zu:", test_g.seed, got->n,
            want->n, i);
    const ev_rec *g = i < got->n ? &got->v[i] : NULL, *w = i < want->n ? &want->v[i] : NULL;
    if (g) fprintf(stderr, " seen run %ld {src %u frame %u seq %u aux %u}", g->run, (unsigned)g->m.src,
                   (unsigned)g->m.frame, (unsigned)g->m.seq, (unsigned)g->m.aux);
    if (w) fprintf(stderr, " expected run %ld {src %u frame %u seq %u aux %u}", w->run, (unsigned)w->m.src,
                   (unsigned)w->m.frame, (unsigned)w->m.seq, (unsigned)w->m.aux);
    fprintf(stderr, "%s\n", got->oom || want->oom ? " (out of memory recording)" : "");
}
/* Delivery order within what one reader saw: (frame, src, seq) increasing,
   where src numbers the emitters in the order their events are delivered. */
static bool ev_in_order(const ev_recs *x) {
    for (size_t i = 1; i < x->n; i++) {
        const ev_msg *a = &x->v[i - 1].m, *b = &x->v[i].m;
        uint64_t ka = (uint64_t)a->frame << 40 | (uint64_t)a->src << 32 | a->seq;
        uint64_t kb = (uint64_t)b->frame << 40 | (uint64_t)b->src << 32 | b->seq;
        if (ka >= kb) return false;
    }
    return true;
}

/* ---- generic systems --------------------------------------------------------- */
/* Entities with Row = 0 .. n-1, in one table in that order: a chunked
   emitter's rows come in Row order. */
static bool ev_rows(ecs_world *w, ecs_id row, int32_t first, int32_t n) {
    int32_t *v = (int32_t *)malloc((size_t)n * sizeof *v);
    if (!v) return false;
    for (int32_t i = 0; i < n; i++) v[i] = first + i;
    const void *values[1] = {v};
    ecs_result r = ecs_create_many_values(w, (size_t)n, &row, 1, values, NULL);
    free(v);
    return r == ECS_OK;
}

/* Emits {src, frame, Row, aux} for each row whose Row % mod == rem (mod 0:
   none; set between frames), or, with no terms, one event per run whose seq
   is the turn of stage clock (clocked) or the frame. */
typedef struct ev_emitter {
    ecs_id ev;
    uint32_t src, mod, rem, aux;
    bool clocked;
    ecs_stage clock;
    double spin;       /* microseconds per batch: makes a stage worth running in parallel */
} ev_emitter;
static uint32_t ev_turn(ecs_world *w, ecs_stage st) {
    ecs_stage_stats s;
    return ecs_stage_stats_get(w, st, &s) == ECS_OK && s.steps ? (uint32_t)(s.steps - 1) : 0xFFFFFFFFu;
}
static void ev_emit_rows(ecs_iter *it) {
    const ev_emitter *e = (const ev_emitter *)it->ctx;
    const int32_t *row = ECS_FIELD(it, int32_t, 0);
    TCHECK(it, row != NULL);
    ecs_emitter *em = ECS_EMITTER(it, ev_msg, e->ev);
    TCHECK(it, em != NULL);
    for (int i = 0; row && e->mod && i < it->count; i++) {   /* the three ways to emit, interleaved */
        if ((uint32_t)row[i] % e->mod != e->rem) continue;
        ev_msg m = {e->src, (uint32_t)ev_frame, (uint32_t)row[i], e->aux}, *to = NULL;
        switch ((row[i] / 7) % 3) {
        case 0: TCHECK(it, ecs_emit(it, e->ev, &m) == ECS_OK); break;
        case 1: TCHECK(it, (to = (ev_msg *)ecs_emit_new(it, e->ev, sizeof m)) != NULL); break;
        default: TCHECK(it, (to = (ev_msg *)ecs_emitter_next(em, sizeof m)) != NULL); break;
        }
        if (to) *to = m;
    }
    test_spin_us(e->spin);
}
static void ev_emit_one(ecs_iter *it) {
    const ev_emitter *e = (const ev_emitter *)it->ctx;
    ev_msg m = {e->src, (uint32_t)ev_frame, e->clocked ? ev_turn(it->world, e->clock) : (uint32_t)ev_frame, e->aux};
    TCHECK(it, ecs_emit(it, e->ev, &m) == ECS_OK);
}

/* Records the events of each run (batch 0's, with the run's turn: the frame,
   or the turn of stage clock); every batch notes what it was handed. */
#define EV_BATCHES 128
typedef struct ev_reader {
    ecs_id ev;
    bool clocked;
    ecs_stage clock;
    bool main;          /* must run on thread 0 */
    double spin;
    ev_recs seen;
    long runs;
    struct { long frame; const ev_msg *p; int n, thread; } batch[EV_BATCHES];
} ev_reader;
static void ev_read(ecs_iter *it) {
    ev_reader *r = (ev_reader *)it->ctx;
    int n = -1;
    const ev_msg *m = ECS_EVENTS(it, ev_msg, r->ev, &n);
    TCHECK(it, n >= 0 && (m != NULL) == (n > 0));
    TCHECK(it, it->batch >= 0 && it->batch < EV_BATCHES);
    if (r->main) TCHECK(it, it->thread == 0);
    if (it->batch >= 0 && it->batch < EV_BATCHES) {
        r->batch[it->batch].frame = ev_frame;
        r->batch[it->batch].p = m;
        r->batch[it->batch].n = n;
        r->batch[it->batch].thread = it->thread;
    }
    test_spin_us(r->spin);
    if (it->batch != 0) return;
    long run = r->clocked ? (long)ev_turn(it->world, r->clock) : ev_frame;
    r->runs++;
    for (int i = 0; i < n; i++) ev_push(&r->seen, run, m[i]);
}
/* Every batch of r's latest run (in frame f) was handed batch 0's array.
   Returns how many ran on a helper thread. */
static int ev_check_batches(const ev_reader *r, int batches, long f, const char *label) {
    int helpers = 0;
    CHECKF(batches >= 1 && batches <= EV_BATCHES, "%s: %d batches", label, batches);
    for (int b = 0; b < batches && b < EV_BATCHES; b++) {
        helpers += r->batch[b].thread != 0;
        CHECKF(r->batch[b].frame == f && r->batch[b].p == r->batch[0].p && r->batch[b].n == r->batch[0].n,
               "%s frame %ld: batch %d (frame %ld) was handed %d events at %p, batch 0 %d at %p", label, f, b,
               r->batch[b].frame, r->batch[b].n, (const void *)r->batch[b].p, r->batch[0].n,
               (const void *)r->batch[0].p);
    }
    return helpers;
}

/* Records every call (on thread 0: plain CHECKs work here). */
typedef struct ev_observer {
    ecs_id ev;
    ev_recs seen;       /* the payloads, run = the frame */
    long calls;
    uint64_t sig;       /* (call, count, payloads) mixed */
} ev_observer;
static void ev_observe_fn(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    ev_observer *o = (ev_observer *)ctx;
    (void)w;
    CHECK(event == o->ev);
    CHECK(count > 0 && payloads != NULL);
    o->calls++;
    o->sig = ev_mix(o->sig, (uint64_t)count);
    for (int i = 0; i < count; i++) {
        const ev_msg *m = (const ev_msg *)payloads + i;
        ev_push(&o->seen, ev_frame, *m);
        o->sig = ev_mix(o->sig, (uint64_t)m->src << 48 ^ (uint64_t)m->frame << 24 ^ m->seq);
    }
}

static void ev_nop(ecs_iter *it) { (void)it; }   /* for systems that only validate */
static bool ev_table_cond(ecs_world *w, void *ctx) {   /* ctx: bool per frame */
    (void)w;
    return ((const bool *)ctx)[ev_frame];
}
static uint64_t ev_events_dropped(ecs_world *w, ecs_system s) {
    ecs_system_stats st;
    memset(&st, 0, sizeof st);
    CHECK_EQ_INT(ecs_system_stats_get(w, s, &st), ECS_OK);
    return st.events_dropped;
}

/* ---- a model of delivery ------------------------------------------------------ */
/* Every event in delivery order; a reader's cursor into it. At its stage's
   turn a reader takes what was delivered before the turn (runs), drops it
   (disabled), or keeps it (skipped). */
enum { EV_RUN, EV_SKIP, EV_OFF };
typedef struct ev_model_reader { size_t cursor; ev_recs want; } ev_model_reader;
static void ev_model_turn(const ev_recs *delivered, ev_model_reader *r, long run, int how) {
    if (how == EV_SKIP) return;
    for (size_t i = r->cursor; how == EV_RUN && i < delivered->n; i++) ev_push(&r->want, run, delivered->v[i].m);
    r->cursor = delivered->n;
}
static void ev_model_emit_rows(ev_recs *delivered, const ev_emitter *e, int32_t rows, long frame) {
    for (int32_t id = 0; e->mod && id < rows; id++)
        if ((uint32_t)id % e->mod == e->rem)
            ev_push(delivered, 0, (ev_msg){e->src, (uint32_t)frame, (uint32_t)id, e->aux});
}

/* ==== 1. exactly once ========================================================== */
/* Three chunked emitters (E0 in stage 0, E1 and E2 in Mid) emit one event
   per selected row; readers Early (stage 0), Same (Mid), Late (Late), Cond
   (Late, run_if every other frame), Every3 (Mid, interval 3) and Paused
   (stage 0, disabled in random episodes). The model gives each reader's
   exact runs and events: each event once, in delivery order, none of those
   delivered while disabled. Three quiet frames at the end let every reader
   catch up. */
enum { EV1_EARLY, EV1_SAME, EV1_LATE, EV1_COND, EV1_EVERY3, EV1_PAUSED, EV1_READERS };
TEST(events_exactly_once) {
    enum { ROWS = 2000, CHUNK = 64, FRAMES = 30, TAIL = 3 };
    unsigned long long rng = test_g.seed ^ 0xE7E47501ull;
    ev_reset();
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ecs_id row = ecs_component(w, "Row", sizeof(int32_t), _Alignof(int32_t)), ev = ECS_EVENT(w, ev_msg);
    ecs_stage mid = ecs_stage_add(w, "Mid"), late = ecs_stage_add(w, "Late");
    REQUIRE(row && ev && mid && late && ev_rows(w, row, 0, ROWS));
    static const char *names[EV1_READERS] = {"Early", "Same", "Late", "Cond", "Every3", "Paused"};
    const ecs_stage stage_of[EV1_READERS] = {0, mid, late, late, mid, 0};
    static bool cond_on[FRAMES + TAIL];
    ev_emitter em[3] = {{.ev = ev, .src = 0}, {.ev = ev, .src = 1}, {.ev = ev, .src = 2}};
    const ecs_stage em_stage[3] = {0, mid, mid};
    ev_reader rd[EV1_READERS];
    ev_model_reader model[EV1_READERS];
    memset(rd, 0, sizeof rd);
    memset(model, 0, sizeof model);
    ecs_system rs[EV1_READERS];
    for (int k = 0; k < 3; k++)
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = k == 0 ? "E0" : k == 1 ? "E1" : "E2",
            .fn = ev_emit_rows, .ctx = &em[k], .terms = {ECS_TERM_R(row)}, .chunk_size = CHUNK,
            .emits = {ev}, .stage = em_stage[k]}));
    for (int r = 0; r < EV1_READERS; r++) {
        rd[r].ev = ev;
        rs[r] = ecs_system_add(w, &(ecs_system_desc){.name = names[r], .fn = ev_read, .ctx = &rd[r],
            .reads = {ev}, .stage = stage_of[r], .run_if = r == EV1_COND ? ev_table_cond : NULL,
            .run_if_ctx = cond_on, .interval = r == EV1_EVERY3 ? 3 : 0});
        REQUIRE(rs[r]);
    }
    ev_recs delivered = {0};
    bool paused = false;
    long total = 0;
    for (long f = 0; f < FRAMES + TAIL; f++) {
        bool tail = f >= FRAMES;
        for (int k = 0; k < 3; k++) {
            em[k].mod = tail ? 0 : test_below(&rng, 5);   /* 0: emits nothing */
            em[k].rem = em[k].mod ? test_below(&rng, em[k].mod) : 0;
        }
        cond_on[f] = tail || f % 2 == 0;
        if (!tail && test_below(&rng, 4) == 0) paused = !paused;
        if (f >= 5 && f < 8) paused = true;   /* at least one pause, whatever the seed */
        if (tail) paused = false;
        CHECK_EQ_INT(ecs_system_enable(w, rs[EV1_PAUSED], !paused), ECS_OK);
        ev_frame = f;
        CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
        for (ecs_stage st = 0; st <= late; st++) {
            for (int r = 0; r < EV1_READERS; r++) {
                if (stage_of[r] != st) continue;
                int how = EV_RUN;
                if (r == EV1_COND && !cond_on[f]) how = EV_SKIP;
                if (r == EV1_EVERY3 && f % 3) how = EV_SKIP;
                if (r == EV1_PAUSED && paused) how = EV_OFF;
                ev_model_turn(&delivered, &model[r], f, how);
            }
            for (int k = 0; k < 3; k++)
                if (em_stage[k] == st) ev_model_emit_rows(&delivered, &em[k], ROWS, f);
        }
    }
    total = (long)delivered.n;
    EV_REPORT("exactly once");
    CHECKF(total > 10000, "only %ld events: the test would prove little", total);
    for (int r = 0; r < EV1_READERS; r++) {
        EV_COMPARE(&rd[r].seen, &model[r].want, "reader %s", names[r]);
        CHECKF(ev_in_order(&rd[r].seen), "reader %s: not in delivery order", names[r]);
        CHECK_EQ_INT(ev_events_dropped(w, rs[r]), 0);
        if (r != EV1_PAUSED) CHECK_EQ_INT(rd[r].seen.n, total);   /* everything, once */
    }
    CHECKF(rd[EV1_PAUSED].seen.n < (size_t)total, "Paused saw everything: it was never paused (seed %llu)",
           test_g.seed);
    for (int r = 0; r < EV1_READERS; r++) {
        ev_recs_free(&rd[r].seen);
        ev_recs_free(&model[r].want);
    }
    ev_recs_free(&delivered);
    ecs_world_free(w);
}

/* ==== 2. the same order at any thread count ====================================== */
/* Chunked emitters A, B (stage 0) and C (Mid); chunked readers R0 (stage 0)
   and R1 (Mid), a run_if reader (Mid), an EXCLUSIVE one after C (Mid: it
   sees C's events the same frame, through its sync point), a MAIN_THREAD
   one with interval 2 (Late) and two observers. Per frame the readers'
   events, the observers' calls and the world hash make a signature that
   must be the same at 1, 2, 3 and 8 threads; every batch of a chunked
   reader was handed the same array. */
enum { EV2_R0, EV2_R1, EV2_COND, EV2_EXCL, EV2_MAIN, EV2_READERS };
TEST(sched_events_order_threads) {
    const long rows = test_scaled(1500, 150), frames = test_scaled(20, 6);
    unsigned long long rng = test_g.seed ^ 0x0DE25EEDull;
    uint32_t (*mods)[3] = (uint32_t (*)[3])calloc((size_t)frames, sizeof *mods);
    uint32_t (*rems)[3] = (uint32_t (*)[3])calloc((size_t)frames, sizeof *rems);
    bool *cond_on = (bool *)calloc((size_t)frames, sizeof *cond_on);
    uint64_t *ref = (uint64_t *)calloc((size_t)frames, sizeof *ref);
    uint64_t *sig = (uint64_t *)calloc((size_t)frames, sizeof *sig);
    if (!mods || !rems || !cond_on || !ref || !sig) {
        free(mods); free(rems); free(cond_on); free(ref); free(sig);
        REQUIRE(!"out of memory");
    }
    for (long f = 0; f < frames; f++) {
        for (int k = 0; k < 3; k++) {
            mods[f][k] = 1 + test_below(&rng, 4);
            rems[f][k] = test_below(&rng, mods[f][k]);
        }
        cond_on[f] = test_below(&rng, 3) != 0;
    }
    static const char *names[EV2_READERS] = {"R0", "R1", "Cond", "Excl", "Main"};
    for (int ti = 0; ti < 4; ti++) {
        ev_reset();
        ecs_world *w = ev_world(ev_threads[ti]);
        REQUIRE(w);
        ecs_id row = ecs_component(w, "Row", sizeof(int32_t), _Alignof(int32_t)), ev = ECS_EVENT(w, ev_msg);
        ecs_stage mid = ecs_stage_add(w, "Mid"), late = ecs_stage_add(w, "Late");
        REQUIRE(row && ev && mid && late && ev_rows(w, row, 0, (int32_t)rows));
        double spin = test_spin_len(4);
        ev_emitter em[3] = {{.ev = ev, .src = 0, .spin = spin}, {.ev = ev, .src = 1, .spin = spin},
                            {.ev = ev, .src = 2, .spin = spin}};
        ev_reader rd[EV2_READERS];
        memset(rd, 0, sizeof rd);
        for (int r = 0; r < EV2_READERS; r++) rd[r].ev = ev;
        rd[EV2_R0].spin = rd[EV2_R1].spin = spin;
        rd[EV2_MAIN].main = true;
        ev_observer ob[2] = {{.ev = ev}, {.ev = ev}};
        ecs_system rs[EV2_READERS];
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = ev_emit_rows, .ctx = &em[0],
            .terms = {ECS_TERM_R(row)}, .chunk_size = 32, .emits = {ev}}));
        rs[EV2_R0] = ecs_system_add(w, &(ecs_system_desc){.name = "R0", .fn = ev_read, .ctx = &rd[EV2_R0],
            .terms = {ECS_TERM_R(row)}, .chunk_size = 40, .reads = {ev}});
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = ev_emit_rows, .ctx = &em[1],
            .terms = {ECS_TERM_R(row)}, .chunk_size = 25, .emits = {ev}}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = ev_emit_rows, .ctx = &em[2],
            .terms = {ECS_TERM_R(row)}, .chunk_size = 50, .emits = {ev}, .stage = mid}));
        rs[EV2_R1] = ecs_system_add(w, &(ecs_system_desc){.name = "R1", .fn = ev_read, .ctx = &rd[EV2_R1],
            .terms = {ECS_TERM_R(row)}, .chunk_size = 100, .reads = {ev}, .stage = mid});
        rs[EV2_COND] = ecs_system_add(w, &(ecs_system_desc){.name = "Cond", .fn = ev_read, .ctx = &rd[EV2_COND],
            .reads = {ev}, .stage = mid, .run_if = ev_table_cond, .run_if_ctx = cond_on});
        rs[EV2_EXCL] = ecs_system_add(w, &(ecs_system_desc){.name = "Excl", .fn = ev_read, .ctx = &rd[EV2_EXCL],
            .reads = {ev}, .stage = mid, .flags = ECS_SYSTEM_EXCLUSIVE});
        rs[EV2_MAIN] = ecs_system_add(w, &(ecs_system_desc){.name = "Main", .fn = ev_read, .ctx = &rd[EV2_MAIN],
            .reads = {ev}, .stage = late, .flags = ECS_SYSTEM_MAIN_THREAD, .interval = 2});
        for (int r = 0; r < EV2_READERS; r++) REQUIRE(rs[r]);
        for (int o = 0; o < 2; o++)
            REQUIRE(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_observe_fn, .ctx = &ob[o]}));
        CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
        long helpers = 0;
        for (long f = 0; f < frames; f++) {
            for (int k = 0; k < 3; k++) { em[k].mod = mods[f][k]; em[k].rem = rems[f][k]; }
            size_t before[EV2_READERS];
            for (int r = 0; r < EV2_READERS; r++) before[r] = rd[r].seen.n;
            ob[0].sig = ob[1].sig = 0;
            ev_frame = f;
            CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
            uint64_t h = ev_mix(ob[0].sig, ob[1].sig);
            for (int r = 0; r < EV2_READERS; r++) {
                h = ev_mix(h, (uint64_t)r << 32 | (rd[r].seen.n - before[r]));
                for (size_t i = before[r]; i < rd[r].seen.n; i++) {
                    const ev_msg *m = &rd[r].seen.v[i].m;
                    h = ev_mix(h, (uint64_t)m->src << 48 ^ (uint64_t)m->frame << 24 ^ m->seq);
                }
            }
            sig[f] = ev_mix(h, ecs_world_hash(w));
            for (int r = EV2_R0; r <= EV2_R1; r++)
                helpers += ev_check_batches(&rd[r], ecs_system_chunks(w, rs[r]), f, names[r]);
        }
        EV_REPORT("order at any thread count");
        if (EV_THREADED && ev_threads[ti] > 1 && test_g.scale_pct >= 100)
            CHECKF(helpers > 0, "%d threads: every reader batch ran on thread 0", ev_threads[ti]);
        for (int r = 0; r < EV2_READERS; r++)
            CHECKF(ev_in_order(&rd[r].seen) && rd[r].seen.n > 0, "threads %d, %s: %zu events, not in delivery order",
                   ev_threads[ti], names[r], rd[r].seen.n);
        /* R0 sees everything a frame late, R1 and Excl only C's (the sync point
           before an EXCLUSIVE system applies commands, but events wait for the
           stage's end) */
        static const long lag[3][3] = {{1, 1, 1}, {0, 0, 1}, {0, 0, 1}};
        static const int lagged[3] = {EV2_R0, EV2_R1, EV2_EXCL};
        for (int k = 0; k < 3; k++)
            for (size_t i = 0; i < rd[lagged[k]].seen.n; i++) {
                const ev_rec *x = &rd[lagged[k]].seen.v[i];
                if (x->run - (long)x->m.frame == lag[k][x->m.src % 3]) continue;
                CHECKF(0, "threads %d, %s: saw frame %u's event of %c in frame %ld", ev_threads[ti],
                       names[lagged[k]], (unsigned)x->m.frame, "ABC"[x->m.src % 3], x->run);
                break;
            }
        CHECK_EQ_INT(ob[0].calls, ob[1].calls);
        CHECK(ob[0].calls >= 2 * frames);   /* two sync points with events a frame */
        if (ti == 0) memcpy(ref, sig, (size_t)frames * sizeof *ref);
        for (long f = 0; f < frames; f++)
            if (sig[f] != ref[f]) {
                CHECKF(0, "threads %d: frame %ld differs from 1 thread (seed %llu)", ev_threads[ti], f, test_g.seed);
                break;
            }
        for (int r = 0; r < EV2_READERS; r++) ev_recs_free(&rd[r].seen);
        ev_recs_free(&ob[0].seen);
        ev_recs_free(&ob[1].seen);
        ecs_world_free(w);
    }
    free(mods); free(rems); free(cond_on); free(ref); free(sig);
}

/* ==== 3. turns and steps ========================================================= */
/* Ordinary stages: a reader in the emitter's stage sees frame f's event in
   frame f + 1, one in a later stage in frame f. A step group (Physics with
   Damage) between ordinary stages: Damage sees the step's event in that
   step, a Physics reader one step late, the ordinary stage after the group
   every step of the frame, stage 0 the previous frame's steps. Frames run
   2, 3 (ecs_progress_steps), 0, 2, 0 and 1 steps. */
enum { EV3_SAME, EV3_LATER, EV3_PHYS, EV3_DAMAGE, EV3_AFTER, EV3_EARLY, EV3_READERS };
TEST(events_turns_and_steps) {
    ev_reset();
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ecs_id ef = ecs_event(w, "FrameEv", sizeof(ev_msg), _Alignof(ev_msg));
    ecs_id es = ecs_event(w, "StepEv", sizeof(ev_msg), _Alignof(ev_msg));
    ecs_stage later = ecs_stage_add(w, "Later");
    ecs_stage phys = ecs_stage_init(w, &(ecs_stage_desc){.name = "Physics", .fixed_dt = 0.25f});
    ecs_stage dmg = ecs_stage_init(w, &(ecs_stage_desc){.name = "Damage", .step_with = phys});
    ecs_stage after = ecs_stage_add(w, "After");
    REQUIRE(ef && es && later && phys && dmg && after);
    ev_emitter frame_em = {.ev = ef}, step_em = {.ev = es, .src = 1, .clocked = true, .clock = phys};
    ecs_system efs = ecs_system_add(w, &(ecs_system_desc){.name = "EmitFrame", .fn = ev_emit_one, .ctx = &frame_em,
        .emits = {ef}});
    ecs_system ess = ecs_system_add(w, &(ecs_system_desc){.name = "EmitStep", .fn = ev_emit_one, .ctx = &step_em,
        .emits = {es}, .stage = phys});
    REQUIRE(efs && ess);
    static const char *names[EV3_READERS] = {"Same", "Later", "Phys", "Damage", "After", "Early"};
    const ecs_stage stage_of[EV3_READERS] = {0, later, phys, dmg, after, 0};
    ev_reader rd[EV3_READERS];
    memset(rd, 0, sizeof rd);
    ecs_system rs[EV3_READERS];
    for (int r = 0; r < EV3_READERS; r++) {
        bool step_ev = r >= EV3_PHYS;
        rd[r].ev = step_ev ? es : ef;
        rd[r].clocked = r == EV3_PHYS || r == EV3_DAMAGE;   /* their run is the step */
        rd[r].clock = phys;
        rs[r] = ecs_system_add(w, &(ecs_system_desc){.name = names[r], .fn = ev_read, .ctx = &rd[r],
            .reads = {rd[r].ev}, .stage = stage_of[r]});
        REQUIRE(rs[r]);
    }
    /* the two same-stage readers get a note; the step one says "step group" */
    ecs_report rep;
    CHECK_EQ_INT(ecs_validate(w, &rep), ECS_OK);
    int notes = 0;
    for (int i = 0; i < rep.note_count; i++) {
        const ecs_problem *p = &rep.notes[i];
        if (p->kind != ECS_NOTE_EVENT_NEXT_FRAME) continue;
        notes++;
        CHECKF((p->a == rs[EV3_SAME] && p->b == efs && p->id == ef) ||
               (p->a == rs[EV3_PHYS] && p->b == ess && p->id == es && strstr(p->message, "step group")),
               "unexpected note: %s", p->message);
    }
    CHECK_EQ_INT(notes, 2);
    ev_recs want[EV3_READERS];
    memset(want, 0, sizeof want);
    struct { int steps; float dt; int expect; } plan[] = {{-1, 0.5f, 2}, {3, 0.5f, 3}, {-1, 0.1f, 0},
                                                          {-1, 0.4f, 2}, {0, 1.0f, 0}, {-1, 0.25f, 1}};
    const long frames = (long)(sizeof plan / sizeof plan[0]);
    uint32_t step = 0, prev_first = 0, prev_count = 0;
    long step_frame = -1;   /* the frame of the latest step */
    for (long f = 0; f < frames; f++) {
        ev_frame = f;
        ecs_result r = plan[f].steps < 0 ? ecs_progress(w, plan[f].dt)
                                         : ecs_progress_steps(w, plan[f].steps, plan[f].dt);
        CHECK_EQ_INT(r, ECS_OK);
        ecs_stage_stats st;
        CHECK_EQ_INT(ecs_stage_stats_get(w, phys, &st), ECS_OK);
        CHECK_EQ_INT(st.steps_last, plan[f].expect);
        uint32_t count = (uint32_t)plan[f].expect;
        if (f > 0) ev_push(&want[EV3_SAME], f, (ev_msg){0, (uint32_t)f - 1, (uint32_t)f - 1, 0});
        ev_push(&want[EV3_LATER], f, (ev_msg){0, (uint32_t)f, (uint32_t)f, 0});
        for (uint32_t k = step; k < step + count; k++) {
            ev_msg sm = {1, (uint32_t)f, k, 0};
            if (k > 0) ev_push(&want[EV3_PHYS], (long)k, (ev_msg){1, (uint32_t)step_frame, k - 1, 0});
            ev_push(&want[EV3_DAMAGE], (long)k, sm);
            ev_push(&want[EV3_AFTER], f, sm);
            step_frame = f;
        }
        for (uint32_t k = prev_first; k < prev_first + prev_count; k++)
            ev_push(&want[EV3_EARLY], f, (ev_msg){1, (uint32_t)f - 1, k, 0});
        prev_first = step;
        prev_count = count;
        step += count;
    }
    EV_REPORT("turns and steps");
    for (int r = 0; r < EV3_READERS; r++) {
        EV_COMPARE(&rd[r].seen, &want[r], "reader %s", names[r]);
        ev_recs_free(&rd[r].seen);
        ev_recs_free(&want[r]);
    }
    CHECK_EQ_INT(rd[EV3_PHYS].runs, step);
    CHECK_EQ_INT(rd[EV3_DAMAGE].runs, step);
    ecs_world_free(w);
}

/* ==== 4. backlog and discards ==================================================== */
/* Flood (stage 0) emits X = ECS_EVENT_BACKLOG / 2 + 1000 events in each of
   frames 0-2, none in 3 and 4, five in 5. Lagging (run_if false in frames
   0-2) then sees exactly the newest ECS_EVENT_BACKLOG and counts the rest in
   events_dropped; Sparse (interval 4) sees frame 0's and then the newest
   backlog of frames 1-2; Off (disabled) and InPaused (its stage disabled)
   drop everything of frames 0-2 uncounted; All sees everything. */
typedef struct ev_flood { ecs_id ev; const long *per_frame; uint32_t next; } ev_flood;
static void ev_flood_fn(ecs_iter *it) {
    ev_flood *c = (ev_flood *)it->ctx;
    for (long i = 0; i < c->per_frame[ev_frame]; i++) {
        ev_msg m = {0, (uint32_t)ev_frame, c->next++, 0};
        TCHECK(it, ecs_emit(it, c->ev, &m) == ECS_OK);
    }
}
enum { EV4_LAGGING, EV4_SPARSE, EV4_OFF, EV4_PAUSED, EV4_ALL, EV4_READERS };
TEST(events_backlog) {
    enum { FRAMES = 6 };
    const long x = ECS_EVENT_BACKLOG / 2 + 1000, backlog = ECS_EVENT_BACKLOG;
    const long per_frame[FRAMES] = {x, x, x, 0, 0, 5};
    static const bool lag_on[FRAMES] = {false, false, false, true, true, true};
    ev_reset();
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ecs_id ev = ECS_EVENT(w, ev_msg);
    ecs_stage late = ecs_stage_add(w, "Late"), paused = ecs_stage_add(w, "Paused");
    REQUIRE(ev && late && paused);
    ev_flood flood = {ev, per_frame, 0};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Flood", .fn = ev_flood_fn, .ctx = &flood, .emits = {ev}}));
    static const char *names[EV4_READERS] = {"Lagging", "Sparse", "Off", "InPaused", "All"};
    ev_reader rd[EV4_READERS];
    memset(rd, 0, sizeof rd);
    ecs_system rs[EV4_READERS];
    for (int r = 0; r < EV4_READERS; r++) {
        rd[r].ev = ev;
        rs[r] = ecs_system_add(w, &(ecs_system_desc){.name = names[r], .fn = ev_read, .ctx = &rd[r],
            .reads = {ev}, .stage = r == EV4_PAUSED ? paused : late,
            .run_if = r == EV4_LAGGING ? ev_table_cond : NULL, .run_if_ctx = (void *)lag_on,
            .interval = r == EV4_SPARSE ? 4 : 0});
        REQUIRE(rs[r]);
    }
    for (long f = 0; f < FRAMES; f++) {
        CHECK_EQ_INT(ecs_system_enable(w, rs[EV4_OFF], f >= 3), ECS_OK);
        CHECK_EQ_INT(ecs_stage_enable(w, paused, f >= 3), ECS_OK);
        ev_frame = f;
        CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    }
    EV_REPORT("backlog");
    /* the expected runs: events are numbered 0 .. 3x - 1, then 3x .. 3x + 4 */
    ev_recs want[EV4_READERS];
    memset(want, 0, sizeof want);
    const uint32_t n3 = (uint32_t)(3 * x);
    for (uint32_t s = 0; s < n3 + 5; s++) {
        ev_msg m = {0, s < n3 ? s / (uint32_t)x : 5, s, 0};
        ev_push(&want[EV4_ALL], m.frame, m);
        if (s >= n3 - (uint32_t)backlog) ev_push(&want[EV4_LAGGING], s < n3 ? 3 : 5, m);
        if (s < (uint32_t)x) ev_push(&want[EV4_SPARSE], 0, m);
        else if (s >= n3 - (uint32_t)backlog && s < n3) ev_push(&want[EV4_SPARSE], 4, m);
        if (s >= n3) {
            ev_push(&want[EV4_OFF], 5, m);
            ev_push(&want[EV4_PAUSED], 5, m);
        }
    }
    /* Sparse skipped frames 1-3 with 2x events waiting: the oldest 2x - backlog went */
    const uint64_t dropped[EV4_READERS] = {(uint64_t)(3 * x - backlog), (uint64_t)(2 * x - backlog), 0, 0, 0};
    for (int r = 0; r < EV4_READERS; r++) {
        EV_COMPARE(&rd[r].seen, &want[r], "reader %s", names[r]);
        CHECKF(ev_events_dropped(w, rs[r]) == dropped[r], "%s: events_dropped %llu, want %llu", names[r],
               (unsigned long long)ev_events_dropped(w, rs[r]), (unsigned long long)dropped[r]);
        ev_recs_free(&rd[r].seen);
        ev_recs_free(&want[r]);
    }
    /* Off and InPaused ran in frames 3-5 (with nothing to read in 3 and 4) */
    CHECK_EQ_INT(rd[EV4_OFF].runs, 3);
    CHECK_EQ_INT(rd[EV4_PAUSED].runs, 3);
    ecs_world_free(w);
}

/* ==== 5. observers ================================================================ */
/* Emit0 (stage 0) and Emit1 (Late) emit n0[f] and n1[f] events. Observers in
   registration order: Maker (creates an entity per event, Made = seq: the
   structural calls apply right after it), Checker (finds them live with
   their value, and emits one Echo event with ecs_world_emit per call), Never
   (another type: never called) and EchoObs. The call log must be exactly
   the model's: once per sync point per observer with all its events, never
   with zero, Echo events at the next sync point (the last frame's at the
   start of the next ecs_progress). Then: unobserve, resimulation, and
   (checked builds) an observer's undeclared access. */
typedef struct ev_call { int obs; long frame; int count; ev_msg first; } ev_call;
typedef struct ev_obs5 {
    ecs_id ev, echo, made, never;
    ev_call log[256];
    int log_n;
    ecs_entity made_now[64];   /* Maker's entities of its latest call */
    int made_n;
    long skipper_events;       /* what the skip_when_resimulating observer got */
    char access_error[256];
    const void *access_got;
    ecs_result access_set;
    ecs_entity target;
} ev_obs5;
static ev_obs5 ev5;
static void ev5_log(int obs, const void *payloads, int count) {
    const ev_msg *m = (const ev_msg *)payloads;
    CHECK(count > 0 && m != NULL);
    if (count <= 0 || !m) return;
    for (int i = 1; i < count; i++)   /* one source's events, in emission order */
        CHECK(m[i].src == m[0].src && m[i].seq == m[0].seq + (uint32_t)i);
    if (ev5.log_n < 256) ev5.log[ev5.log_n++] = (ev_call){obs, ev_frame, count, m[0]};
}
static void ev5_maker(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)event; (void)ctx;
    ev5_log(0, payloads, count);
    ev5.made_n = 0;
    for (int i = 0; i < count && i < 64; i++) {
        ecs_entity e = ecs_create(w);
        int32_t v = (int32_t)((const ev_msg *)payloads)[i].seq;
        CHECK(e != 0);
        CHECK_EQ_INT(ecs_set(w, e, ev5.made, &v), ECS_OK);
        ev5.made_n += e != 0;
        ev5.made_now[i] = e;
    }
}
static void ev5_checker(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)event; (void)ctx;
    ev5_log(1, payloads, count);
    CHECK_EQ_INT(ev5.made_n, count);
    for (int i = 0; i < ev5.made_n; i++) {   /* Maker's structure applied before this observer */
        const int32_t *v = (const int32_t *)ecs_get(w, ev5.made_now[i], ev5.made);
        CHECKF(ecs_is_alive(w, ev5.made_now[i]) && v && *v == (int32_t)((const ev_msg *)payloads)[i].seq,
               "frame %ld: Maker's entity %d is not there", ev_frame, i);
    }
    ev_msg echo = {9, (uint32_t)ev_frame, ((const ev_msg *)payloads)[0].src, 0};
    CHECK_EQ_INT(ecs_world_emit(w, ev5.echo, &echo), ECS_OK);
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = ev5.ev, .fn = ev5_checker}) == 0);   /* not in here */
    CHECK_EQ_INT(ecs_unobserve(w, 1), ECS_ERR_BUSY);
}
static void ev5_echo(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)w; (void)event; (void)ctx;
    ev5_log(3, payloads, count);
}
static void ev5_never(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)w; (void)event; (void)ctx;
    ev5_log(2, payloads, count);
}
static void ev5_skipper(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)w; (void)event; (void)payloads; (void)ctx;
    ev5.skipper_events += count;
}
#if ECS_CHECK_ACCESS
static void ev5_snoop(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)event; (void)payloads; (void)count; (void)ctx;
    ev5.access_got = ecs_get(w, ev5.target, ev5.made);
    snprintf(ev5.access_error, sizeof ev5.access_error, "%s", ecs_last_error(w));
    int32_t v = 5;
    ev5.access_set = ecs_set(w, ev5.target, ev5.made, &v);
}
#endif
typedef struct ev_count_emitter { ecs_id ev; uint32_t src; const int *n; } ev_count_emitter;
static void ev5_emit(ecs_iter *it) {
    const ev_count_emitter *c = (const ev_count_emitter *)it->ctx;
    for (int i = 0; i < c->n[ev_frame]; i++) {
        ev_msg m = {c->src, (uint32_t)ev_frame, (uint32_t)i, 0};
        TCHECK(it, ecs_emit(it, c->ev, &m) == ECS_OK);
    }
}
/* One sync point of the model: Maker and Checker when it has count events
   of src; EchoObs when an echo waits from the previous point (Checker's
   echo waits for the next one: after Late's, the start of the next frame). */
static void ev5_model_sync(ev_call *want, int *n, ev_msg *echo, bool *echo_waits, long f, int count, uint32_t src) {
    if (count) {
        want[(*n)++] = (ev_call){0, f, count, {src, (uint32_t)f, 0, 0}};
        want[(*n)++] = (ev_call){1, f, count, {src, (uint32_t)f, 0, 0}};
    }
    if (*echo_waits) want[(*n)++] = (ev_call){3, f, 1, *echo};
    *echo_waits = count > 0;
    if (count) *echo = (ev_msg){9, (uint32_t)f, src, 0};
}
TEST(events_observers) {
    enum { FRAMES = 5 };
    static const int n0[FRAMES + 4] = {3, 0, 2, 1, 0, 1, 1, 1, 1}, n1[FRAMES + 4] = {2, 1, 0, 4, 0, 1, 1, 1, 1};
    ev_reset();
    memset(&ev5, 0, sizeof ev5);
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ev5.ev = ecs_event(w, "Hit", sizeof(ev_msg), _Alignof(ev_msg));
    ev5.echo = ecs_event(w, "Echo", sizeof(ev_msg), _Alignof(ev_msg));
    ev5.never = ecs_event(w, "Never", sizeof(ev_msg), _Alignof(ev_msg));
    ev5.made = ecs_component(w, "Made", sizeof(int32_t), _Alignof(int32_t));
    ecs_stage late = ecs_stage_add(w, "Late");
    REQUIRE(ev5.ev && ev5.echo && ev5.never && ev5.made && late);
    ev_count_emitter e0 = {ev5.ev, 0, n0}, e1 = {ev5.ev, 1, n1};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Emit0", .fn = ev5_emit, .ctx = &e0, .emits = {ev5.ev}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Emit1", .fn = ev5_emit, .ctx = &e1, .emits = {ev5.ev},
        .stage = late}));
    ecs_observer maker = ecs_observe(w, &(ecs_observer_desc){.event = ev5.ev, .fn = ev5_maker, .writes = {ev5.made}});
    ecs_observer checker = ecs_observe(w, &(ecs_observer_desc){.event = ev5.ev, .fn = ev5_checker,
        .reads = {ev5.made}});
    ecs_observer never = ecs_observe(w, &(ecs_observer_desc){.event = ev5.never, .fn = ev5_never});
    ecs_observer echo = ecs_observe(w, &(ecs_observer_desc){.event = ev5.echo, .fn = ev5_echo});
    ecs_observer skipper = ecs_observe(w, &(ecs_observer_desc){.event = ev5.ev, .fn = ev5_skipper,
        .skip_when_resimulating = true});
    REQUIRE(maker && checker && never && echo && skipper);
    CHECK(maker != checker && checker != never && never != echo && echo != skipper);
    ev_call want[256];
    int want_n = 0;
    ev_msg echo_wait = {0, 0, 0, 0};
    bool echo_waits = false;
    long made = 0;
    for (long f = 0; f < FRAMES; f++) {
        ev_frame = f;
        CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
        ev5_model_sync(want, &want_n, &echo_wait, &echo_waits, f, 0, 0);       /* the start of the frame */
        ev5_model_sync(want, &want_n, &echo_wait, &echo_waits, f, n0[f], 0);   /* stage 0 */
        ev5_model_sync(want, &want_n, &echo_wait, &echo_waits, f, n1[f], 1);   /* Late */
        made += n0[f] + n1[f];
    }
    EV_REPORT("observers");
    CHECK_EQ_INT(ev5.log_n, want_n);
    for (int i = 0; i < ev5.log_n && i < want_n; i++) {
        const ev_call *g = &ev5.log[i], *x = &want[i];
        CHECKF(g->obs == x->obs && g->frame == x->frame && g->count == x->count && g->first.src == x->first.src &&
               g->first.frame == x->first.frame && g->first.seq == x->first.seq,
               "call %d: observer %d frame %ld count %d first {%u %u %u}, want observer %d frame %ld count %d "
               "first {%u %u %u}", i, g->obs, g->frame, g->count, (unsigned)g->first.src, (unsigned)g->first.frame,
               (unsigned)g->first.seq, x->obs, x->frame, x->count, (unsigned)x->first.src,
               (unsigned)x->first.frame, (unsigned)x->first.seq);
    }
    CHECK_EQ_INT(ecs_count(w), made);   /* Maker's entities, all applied */
    CHECK_EQ_INT(ev5.skipper_events, made);

    /* unobserve: Checker is called no more (nor can it be unobserved twice) */
    CHECK_EQ_INT(ecs_unobserve(w, checker), ECS_OK);
    CHECK_EQ_INT(ecs_unobserve(w, checker), ECS_ERR_ARG);
    int mark = ev5.log_n;
    ev_frame = FRAMES;
    ev5.made_n = 0;
    CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    int maker_calls = 0;
    for (int i = mark; i < ev5.log_n; i++) {
        CHECKF(ev5.log[i].obs != 1, "call %d: Checker called after ecs_unobserve", i);
        maker_calls += ev5.log[i].obs == 0;
    }
    CHECK_EQ_INT(maker_calls, 2);

    /* resimulating: the skipper hears nothing, the others as before */
    CHECK(!ecs_world_resimulating(w));
    ecs_world_set_resimulating(w, true);
    CHECK(ecs_world_resimulating(w));
    long skipped_before = ev5.skipper_events;
    mark = ev5.log_n;
    ev_frame = FRAMES + 1;
    CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    CHECK_EQ_INT(ev5.skipper_events, skipped_before);
    maker_calls = 0;
    for (int i = mark; i < ev5.log_n; i++) maker_calls += ev5.log[i].obs == 0;
    CHECK_EQ_INT(maker_calls, 2);
    ecs_world_set_resimulating(w, false);
    ev_frame = FRAMES + 2;
    CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    CHECK_EQ_INT(ev5.skipper_events, skipped_before + n0[FRAMES + 2] + n1[FRAMES + 2]);
#if ECS_CHECK_ACCESS
    /* an observer that declared nothing may not read or write Made */
    ev5.target = ecs_create(w);
    REQUIRE(ecs_set(w, ev5.target, ev5.made, &(int32_t){1}) == ECS_OK);
    ecs_observer snoop = ecs_observe(w, &(ecs_observer_desc){.event = ev5.ev, .fn = ev5_snoop});
    REQUIRE(snoop);
    ev5.access_got = (const void *)&ev5;
    ev_frame = FRAMES + 3;
    (void)ecs_progress(w, 1.0f / 60);
    CHECK(ev5.access_got == NULL);
    CHECKF(strstr(ev5.access_error, "Made") != NULL, "error: %s", ev5.access_error);
    CHECK_EQ_INT(ev5.access_set, ECS_ERR_ACCESS);
    CHECK_EQ_INT(*(const int32_t *)ecs_get(w, ev5.target, ev5.made), 1);
    CHECK_EQ_INT(ecs_unobserve(w, snoop), ECS_OK);
#endif
    ecs_world_free(w);
}

/* ==== 6. pending handles in payloads =============================================== */
/* Spawner (chunked) makes an event per row: kind 0 carries a pending handle
   of an entity it creates (Spawned = Row), kind 1 one it creates and
   destroys in the same buffer, kind 2 a live victim that Killer (same
   stage) destroys with a command at the same sync point. A reader in a
   later stage and an observer find kind 0 live with its value, the others
   dead; no two kind 0 handles are alike. raw, a copy of who that is not an
   entity field, must come through as emitted: pending for kinds 0 and 1
   (so who was resolved), the victim for kind 2. */
typedef struct ev_spawn { ecs_entity who, raw; uint32_t seq, kind; } ev_spawn;
typedef struct ev_spawn_ctx {
    ecs_id ev, spawned;
    ecs_entity *victims;      /* by Row, made between frames */
    int32_t rows;
    ecs_entity *live;         /* kind 0 handles the reader saw */
    long live_n, dead_n, bad;
    long obs_events, obs_bad;
} ev_spawn_ctx;
static void ev6_spawner(ecs_iter *it) {
    const ev_spawn_ctx *c = (const ev_spawn_ctx *)it->ctx;
    const int32_t *row = ECS_FIELD(it, int32_t, 0);
    TCHECK(it, row != NULL);
    for (int i = 0; row && i < it->count; i++) {
        ev_spawn m = {0, 0, (uint32_t)row[i], (uint32_t)row[i] % 3};
        if (m.kind == 2) m.who = c->victims[row[i]];
        else {
            m.who = ecs_cmd_create(it->commands);
            TCHECK(it, m.who != 0 && ecs_cmd_set(it->commands, m.who, c->spawned, &row[i]) == ECS_OK);
            if (m.kind == 1) TCHECK(it, ecs_cmd_destroy(it->commands, m.who) == ECS_OK);
        }
        m.raw = m.who;
        TCHECK(it, ecs_emit(it, c->ev, &m) == ECS_OK);
    }
}
static void ev6_killer(ecs_iter *it) {
    const ev_spawn_ctx *c = (const ev_spawn_ctx *)it->ctx;
    for (int32_t id = 2; id < c->rows; id += 3) TCHECK(it, ecs_cmd_destroy(it->commands, c->victims[id]) == ECS_OK);
}
/* Whether a delivered payload is right: kind 0 live with its value, else dead. */
static bool ev6_ok(const ecs_world *w, const ev_spawn_ctx *c, const ev_spawn *m) {
    if (!m->who || (m->kind == 2) != (m->who == m->raw)) return false;
    if (m->kind != 0) return !ecs_is_alive(w, m->who);
    const int32_t *v = (const int32_t *)ecs_get(w, m->who, c->spawned);
    return ecs_is_alive(w, m->who) && v && *v == (int32_t)m->seq;
}
static void ev6_reader(ecs_iter *it) {
    ev_spawn_ctx *c = (ev_spawn_ctx *)it->ctx;
    int n = 0;
    const ev_spawn *m = ECS_EVENTS(it, ev_spawn, c->ev, &n);
    TCHECK(it, n == c->rows);
    for (int i = 0; m && i < n; i++) {
        c->bad += !ev6_ok(it->world, c, &m[i]);
        if (m[i].kind == 0 && c->live_n < 4 * c->rows) c->live[c->live_n++] = m[i].who;
        else c->dead_n += m[i].kind != 0;
    }
}
static void ev6_observer(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    ev_spawn_ctx *c = (ev_spawn_ctx *)ctx;
    (void)event;
    for (int i = 0; i < count; i++) c->obs_bad += !ev6_ok(w, c, (const ev_spawn *)payloads + i);
    c->obs_events += count;
}
static int ev6_cmp(const void *a, const void *b) {
    ecs_entity x = *(const ecs_entity *)a, y = *(const ecs_entity *)b;
    return x < y ? -1 : x > y;
}
TEST(sched_events_pending_handles) {
    enum { FRAMES = 3 };
    const int32_t rows = (int32_t)test_scaled(300, 60);
    for (int ti = 0; ti < 4; ti++) {
        ev_reset();
        ecs_world *w = ev_world(ev_threads[ti]);
        REQUIRE(w);
        ev_spawn_ctx c;
        memset(&c, 0, sizeof c);
        c.rows = rows;
        ecs_id row = ecs_component(w, "Row", sizeof(int32_t), _Alignof(int32_t));
        c.spawned = ecs_component(w, "Spawned", sizeof(int32_t), _Alignof(int32_t));
        c.ev = ecs_event_init(w, &(ecs_event_desc){.name = "Spawn", .size = sizeof(ev_spawn),
            .align = _Alignof(ev_spawn), .entity_fields = {offsetof(ev_spawn, who)}, .entity_field_count = 1});
        ecs_stage late = ecs_stage_add(w, "Late");
        c.victims = (ecs_entity *)calloc((size_t)rows, sizeof *c.victims);
        c.live = (ecs_entity *)calloc((size_t)rows * 4, sizeof *c.live);
        if (!c.victims || !c.live) { free(c.victims); free(c.live); ecs_world_free(w); REQUIRE(!"out of memory"); }
        REQUIRE(row && c.spawned && c.ev && late && ev_rows(w, row, 0, rows));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Spawner", .fn = ev6_spawner, .ctx = &c,
            .terms = {ECS_TERM_R(row)}, .chunk_size = 16, .emits = {c.ev}}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Killer", .fn = ev6_killer, .ctx = &c}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Reader", .fn = ev6_reader, .ctx = &c,
            .reads = {c.ev, c.spawned}, .stage = late}));
        REQUIRE(ecs_observe(w, &(ecs_observer_desc){.event = c.ev, .fn = ev6_observer, .ctx = &c,
            .reads = {c.spawned}}));
        for (long f = 0; f < FRAMES; f++) {
            for (int32_t id = 2; id < rows; id += 3) REQUIRE((c.victims[id] = ecs_create(w)) != 0);
            ev_frame = f;
            CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
        }
        EV_REPORT("pending handles");
        const long per_frame_live = (rows + 2) / 3;
        CHECK_EQ_INT(c.bad, 0);
        CHECK_EQ_INT(c.obs_bad, 0);
        CHECK_EQ_INT(c.live_n, per_frame_live * FRAMES);
        CHECK_EQ_INT(c.dead_n, (rows - per_frame_live) * FRAMES);
        CHECK_EQ_INT(c.obs_events, (long)rows * FRAMES);
        qsort(c.live, (size_t)c.live_n, sizeof *c.live, ev6_cmp);
        for (long i = 1; i < c.live_n; i++)
            CHECKF(c.live[i] != c.live[i - 1], "threads %d: a handle twice", ev_threads[ti]);
        free(c.victims);
        free(c.live);
        ecs_world_free(w);
    }
}

/* Counts a type's events per frame (any size). */
typedef struct ev_tally { ecs_id ev; long per_frame[16]; } ev_tally;
static void ev_tally_fn(ecs_iter *it) {
    ev_tally *c = (ev_tally *)it->ctx;
    int n = -1;
    (void)ecs_events(it, c->ev, &n);
    TCHECK(it, n >= 0 && ev_frame < 16);
    if (ev_frame < 16) c->per_frame[ev_frame] += n;
}

/* ==== 7. ecs_world_emit between frames ============================================= */
/* Three events (and one of a size-0 type, NULL payload) emitted before the
   first frame are delivered at its start: the stage 0 reader sees them in
   frame 0, first, and the observer once with all three. Between frames 0
   and 1 another: Early sees Tick's frame 0 event, then it. */
TEST(events_world_emit_between_frames) {
    ev_reset();
    ecs_world *w = ev_world(2);
    REQUIRE(w);
    ecs_id ev = ECS_EVENT(w, ev_msg), bare = ecs_event(w, "Bare", 0, 0);
    ecs_stage late = ecs_stage_add(w, "Late");
    REQUIRE(ev && bare && late);
    ev_emitter tick = {.ev = ev, .src = 1};
    ev_reader early = {.ev = ev}, later = {.ev = ev};
    ev_observer ob = {.ev = ev};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Tick", .fn = ev_emit_one, .ctx = &tick, .emits = {ev}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Early", .fn = ev_read, .ctx = &early, .reads = {ev}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Later", .fn = ev_read, .ctx = &later, .reads = {ev},
        .stage = late}));
    REQUIRE(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_observe_fn, .ctx = &ob}));
    ev_tally bare_seen = {bare, {0}};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "BareReader", .fn = ev_tally_fn, .ctx = &bare_seen,
        .reads = {bare}}));
    for (uint32_t i = 0; i < 3; i++) CHECK_EQ_INT(ecs_world_emit(w, ev, &(ev_msg){0, 0, i, 0}), ECS_OK);
    CHECK_EQ_INT(ecs_world_emit(w, bare, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    CHECK_EQ_INT(ob.calls, 2);   /* at the start (3), then Tick's at stage 0's sync point */
    CHECK_EQ_INT(ecs_world_emit(w, ev, &(ev_msg){0, 1, 3, 0}), ECS_OK);
    ev_frame = 1;
    CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    EV_REPORT("world emit");
    ev_recs want_early = {0}, want_later = {0}, want_obs = {0};
    for (uint32_t i = 0; i < 3; i++) {
        ev_push(&want_early, 0, (ev_msg){0, 0, i, 0});
        ev_push(&want_later, 0, (ev_msg){0, 0, i, 0});
        ev_push(&want_obs, 0, (ev_msg){0, 0, i, 0});
    }
    ev_push(&want_later, 0, (ev_msg){1, 0, 0, 0});
    ev_push(&want_obs, 0, (ev_msg){1, 0, 0, 0});
    ev_push(&want_early, 1, (ev_msg){1, 0, 0, 0});   /* Tick's, delivered last frame, then the new one */
    ev_push(&want_early, 1, (ev_msg){0, 1, 3, 0});
    ev_push(&want_later, 1, (ev_msg){0, 1, 3, 0});
    ev_push(&want_later, 1, (ev_msg){1, 1, 1, 0});
    ev_push(&want_obs, 1, (ev_msg){0, 1, 3, 0});
    ev_push(&want_obs, 1, (ev_msg){1, 1, 1, 0});
    EV_COMPARE(&early.seen, &want_early, "Early");
    EV_COMPARE(&later.seen, &want_later, "Later");
    EV_COMPARE(&ob.seen, &want_obs, "the observer");
    CHECK_EQ_INT(ob.calls, 4);
    CHECK(bare_seen.per_frame[0] == 1 && bare_seen.per_frame[1] == 0);
    ev_recs_free(&early.seen); ev_recs_free(&later.seen); ev_recs_free(&ob.seen);
    ev_recs_free(&want_early); ev_recs_free(&want_later); ev_recs_free(&want_obs);
    ecs_world_free(w);
}

/* ==== 8. snapshots, save files, hash ================================================ */
/* A world with unread events at the snapshot: Same (stage 0) has frame
   K - 1's events waiting, Cond (run_if every third frame) two frames' worth.
   N frames from the live world, N after a restore (and after a second
   restore that drops an event emitted between frames), and N in a new world
   restored from a save file must see the same events and hash alike after
   every frame; the restore re-delivers nothing to the observer. */
enum { EV8_SAME, EV8_LATER, EV8_COND, EV8_READERS };
typedef struct ev_snap {
    ecs_world *w;
    ecs_id row, ev;
    ev_emitter emit;
    ev_reader rd[EV8_READERS];
    ev_observer ob;
    bool cond_on[64];
} ev_snap;
static void ev8_spawn(ecs_iter *it) {
    const ev_snap *s = (const ev_snap *)it->ctx;
    ecs_entity e = ecs_cmd_create(it->commands);
    int32_t id = 1000 + (int32_t)ev_frame;
    TCHECK(it, e && ecs_cmd_set(it->commands, e, s->row, &id) == ECS_OK);
}
static bool ev8_build(ev_snap *s, ecs_world *w) {
    memset(s, 0, sizeof *s);
    s->w = w;
    s->row = ecs_component(w, "Row", sizeof(int32_t), _Alignof(int32_t));
    s->ev = ECS_EVENT(w, ev_msg);
    ecs_stage late = ecs_stage_add(w, "Late");
    if (!s->row || !s->ev || !late || !ev_rows(w, s->row, 0, 40)) return false;
    for (int f = 0; f < 64; f++) s->cond_on[f] = f % 3 == 2;
    s->emit.ev = s->ev;
    s->ob.ev = s->ev;
    static const char *names[EV8_READERS] = {"Same", "Later", "Cond"};
    bool ok = ecs_system_add(w, &(ecs_system_desc){.name = "Emit", .fn = ev_emit_rows, .ctx = &s->emit,
                  .terms = {ECS_TERM_R(s->row)}, .chunk_size = 8, .emits = {s->ev}}) &&
              ecs_system_add(w, &(ecs_system_desc){.name = "Spawn", .fn = ev8_spawn, .ctx = s});
    for (int r = 0; r < EV8_READERS; r++) {
        s->rd[r].ev = s->ev;
        ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = names[r], .fn = ev_read, .ctx = &s->rd[r],
                       .reads = {s->ev}, .stage = r == EV8_SAME ? 0 : late,
                       .run_if = r == EV8_COND ? ev_table_cond : NULL, .run_if_ctx = s->cond_on});
    }
    return ok && ecs_observe(w, &(ecs_observer_desc){.event = s->ev, .fn = ev_observe_fn, .ctx = &s->ob});
}
static void ev8_free(ev_snap *s) {
    for (int r = 0; r < EV8_READERS; r++) ev_recs_free(&s->rd[r].seen);
    ev_recs_free(&s->ob.seen);
    ecs_world_free(s->w);
}
/* Frames [from, to): what each reader and the observer saw (run = frame * 4
   + who) and the hash after each frame (run = -1 - frame) go to trace. */
static void ev8_run(ev_snap *s, long from, long to, ev_recs *trace) {
    for (long f = from; f < to; f++) {
        s->emit.mod = 1 + (uint32_t)f % 3;
        s->emit.rem = (uint32_t)f % s->emit.mod;
        ev_frame = f;
        CHECK_EQ_INT(ecs_progress(s->w, 1.0f / 60), ECS_OK);
        for (int r = 0; r <= EV8_READERS; r++) {
            ev_recs *x = r < EV8_READERS ? &s->rd[r].seen : &s->ob.seen;
            for (size_t i = 0; i < x->n; i++) ev_push(trace, f * 4 + r, x->v[i].m);
            x->n = 0;
        }
        uint64_t h = ecs_world_hash(s->w);
        CHECK(h != 0);
        ev_push(trace, -1 - f, (ev_msg){(uint32_t)h, (uint32_t)(h >> 32), 0, 0});
    }
}
TEST(events_snapshot_restore) {
    enum { K = 5, N = 6 };
    ev_reset();
    ev_snap a, b;
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    if (!ev8_build(&a, w)) { ev8_free(&a); REQUIRE(!"build"); }
    ev_recs before = {0}, t1 = {0}, t2 = {0}, t3 = {0};
    ev8_run(&a, 0, K, &before);
    uint64_t h0 = ecs_world_hash(w);
    ecs_snapshot *snap = ecs_snapshot_take(w);
    REQUIRE(h0 != 0 && snap);
    ev8_run(&a, K, K + N, &t1);
    /* Same's first run after the snapshot read frame K - 1's events */
    bool pending = false;
    for (size_t i = 0; i < t1.n; i++) pending |= t1.v[i].run == K * 4 + EV8_SAME && t1.v[i].m.frame == K - 1;
    CHECK(pending);
    long calls = a.ob.calls;
    CHECK_EQ_INT(ecs_snapshot_restore(w, snap), ECS_OK);
    CHECK_EQ_INT(a.ob.calls, calls);
    CHECK(ecs_world_hash(w) == h0);
    /* not delivered yet, so not in the snapshot: a restore drops it */
    CHECK_EQ_INT(ecs_world_emit(w, a.ev, &(ev_msg){7, 7, 7, 7}), ECS_OK);
    CHECK_EQ_INT(ecs_snapshot_restore(w, snap), ECS_OK);
    CHECK(ecs_world_hash(w) == h0);
    ev8_run(&a, K, K + N, &t2);
    EV_COMPARE(&t2, &t1, "after a restore");

    FILE *f = tmpfile();
    REQUIRE(f);
    CHECK_EQ_INT(ecs_snapshot_write(snap, f), ECS_OK);
    rewind(f);
    ecs_world *w2 = ev_world(1);
    REQUIRE(w2);
    if (!ev8_build(&b, w2)) { ev8_free(&b); REQUIRE(!"build"); }
    ecs_snapshot *read = ecs_snapshot_read(w2, f);
    fclose(f);
    CHECKF(read != NULL, "%s", ecs_last_error(w2));
    if (read) {
        CHECK_EQ_INT(ecs_snapshot_restore(w2, read), ECS_OK);
        CHECK(ecs_world_hash(w2) == h0);
        ev8_run(&b, K, K + N, &t3);
        EV_COMPARE(&t3, &t1, "restored from a save file");
        CHECK_EQ_INT(b.ob.calls, a.ob.calls - calls);
    }
    EV_REPORT("snapshot");
    ecs_snapshot_free(read);
    ecs_snapshot_free(snap);
    ev_recs_free(&before); ev_recs_free(&t1); ev_recs_free(&t2); ev_recs_free(&t3);
    ev8_free(&b);
    ev8_free(&a);
}

/* Unread payloads are part of the hash: worlds that differ only in the aux
   of an event Same has not read yet hash apart, and alike once it read it. */
TEST(events_hash_unread_payloads) {
    ev_reset();
    const uint32_t aux[3] = {1, 2, 1};
    ev_emitter em[3];
    ev_reader rd[3];
    ecs_world *w[3];
    memset(rd, 0, sizeof rd);
    for (int i = 0; i < 3; i++) {
        w[i] = ev_world(1);
        REQUIRE(w[i]);
        ecs_id ev = ECS_EVENT(w[i], ev_msg);
        em[i] = (ev_emitter){.ev = ev, .aux = aux[i]};
        rd[i].ev = ev;
        REQUIRE(ev && ecs_system_add(w[i], &(ecs_system_desc){.name = "Emit", .fn = ev_emit_one, .ctx = &em[i],
            .emits = {ev}}));
        REQUIRE(ecs_system_add(w[i], &(ecs_system_desc){.name = "Same", .fn = ev_read, .ctx = &rd[i], .reads = {ev}}));
    }
    uint64_t h[3];
    ev_frame = 0;
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(ecs_progress(w[i], 1.0f / 60), ECS_OK);
        h[i] = ecs_world_hash(w[i]);
    }
    CHECK(h[0] != h[1]);
    CHECK(h[0] == h[2]);
    ev_frame = 1;
    for (int i = 0; i < 3; i++) {
        em[i].aux = 7;
        CHECK_EQ_INT(ecs_progress(w[i], 1.0f / 60), ECS_OK);
        h[i] = ecs_world_hash(w[i]);
        CHECK_EQ_INT(rd[i].seen.n, 1);
        ev_recs_free(&rd[i].seen);
    }
    CHECK(h[0] == h[1] && h[1] == h[2]);
    EV_REPORT("hash");
    for (int i = 0; i < 3; i++) ecs_world_free(w[i]);
}

/* ==== 9. bad input ================================================================== */
typedef struct ev_probe {
    ecs_id ev, other, comp;
    int mode;
    ecs_result r[5];
    const void *p[2];
    int n[2];
} ev_probe;
enum { EV9_WRONG_IDS, EV9_EMIT_UNDECLARED, EV9_READ_UNDECLARED, EV9_WRONG_SIZE };
static void ev9_probe(ecs_iter *it) {
    ev_probe *c = (ev_probe *)it->ctx;
    ev_msg m = {0, 0, 0, 0};
    switch (c->mode) {
    case EV9_WRONG_IDS:
        c->r[0] = ecs_emit(it, 9999, &m);
        c->r[1] = ecs_emit(it, c->comp, &m);
        c->r[2] = ecs_emit(it, c->ev, NULL);
        c->r[3] = ecs_world_emit(it->world, c->ev, &m);   /* a system uses ecs_emit */
        c->r[4] = ecs_emit(NULL, c->ev, &m);
        c->p[0] = ecs_events(it, 9999, &c->n[0]);
        c->p[1] = ecs_events(it, c->comp, &c->n[1]);
        break;
    case EV9_EMIT_UNDECLARED:
        c->r[0] = ecs_emit(it, c->other, &m);
        break;
    case EV9_READ_UNDECLARED:
        c->p[0] = ecs_events(it, c->other, &c->n[0]);
        break;
    case EV9_WRONG_SIZE:
        c->p[0] = ECS_EVENTS(it, uint64_t, c->ev, &c->n[0]);
        break;
    }
}
/* One frame of a world with Emitter (emits ev) feeding Probe (stage 0, emits
   and reads ev) and a tally of other in a later stage. */
static ecs_result ev9_frame(ev_probe *c, int mode, ev_tally *other_seen, char *error, size_t cap) {
    memset(c, 0, sizeof *c);
    c->mode = mode;
    c->n[0] = c->n[1] = -1;
    c->p[0] = c->p[1] = (const void *)c;
    ecs_world *w = ev_world(2);
    if (!w) return ECS_ERR_NOMEM;
    c->ev = ECS_EVENT(w, ev_msg);
    c->other = ecs_event(w, "Other", sizeof(ev_msg), _Alignof(ev_msg));
    c->comp = ecs_component(w, "Comp", sizeof(int32_t), _Alignof(int32_t));
    ecs_stage late = ecs_stage_add(w, "Late");
    ev_emitter em = {.ev = c->ev};
    memset(other_seen, 0, sizeof *other_seen);
    other_seen->ev = c->other;
    ecs_result r = ECS_ERR_ARG;
    if (c->ev && c->other && c->comp && late &&
        ecs_system_add(w, &(ecs_system_desc){.name = "Emitter", .fn = ev_emit_one, .ctx = &em, .emits = {c->ev}}) &&
        ecs_system_add(w, &(ecs_system_desc){.name = "Probe", .fn = ev9_probe, .ctx = c, .emits = {c->ev},
            .reads = {c->ev}}) &&
        ecs_system_add(w, &(ecs_system_desc){.name = "OtherReader", .fn = ev_tally_fn, .ctx = other_seen,
            .reads = {c->other}, .stage = late})) {
        ev_frame = 0;
        r = ecs_progress(w, 1.0f / 60);
        ev_frame = 1;   /* Probe reads the Emitter's events of frame 0 */
        ecs_result r2 = ecs_progress(w, 1.0f / 60);
        if (!r) r = r2;
    }
    snprintf(error, cap, "%s", ecs_last_error(w));
    ecs_world_free(w);
    return r;
}
TEST(events_bad_input) {
    ev_reset();
    ev_probe c;
    ev_tally other;
    char err[512];
    /* wrong ids, NULL payloads, the wrong call: refused, nothing emitted */
    (void)ev9_frame(&c, EV9_WRONG_IDS, &other, err, sizeof err);
    CHECK_EQ_INT(c.r[0], ECS_ERR_ARG);
    CHECK_EQ_INT(c.r[1], ECS_ERR_ARG);
    CHECK_EQ_INT(c.r[2], ECS_ERR_ARG);
    CHECK_EQ_INT(c.r[3], ECS_ERR_BUSY);
    CHECK_EQ_INT(c.r[4], ECS_ERR_ARG);
    CHECK(c.p[0] == NULL && c.n[0] == 0 && c.p[1] == NULL && c.n[1] == 0);
#if ECS_CHECK_ACCESS
    /* emitting a type not in emits: refused, the frame says so, nothing delivered */
    CHECK_EQ_INT(ev9_frame(&c, EV9_EMIT_UNDECLARED, &other, err, sizeof err), ECS_ERR_ACCESS);
    CHECK_EQ_INT(c.r[0], ECS_ERR_ACCESS);
    CHECKF(strstr(err, "Probe") && strstr(err, "Other") && strstr(err, "emits"), "error: %s", err);
    CHECK(other.per_frame[0] == 0 && other.per_frame[1] == 0);
#endif
    /* reading a type not in reads, or at the wrong size: refused in every build */
    CHECK_EQ_INT(ev9_frame(&c, EV9_READ_UNDECLARED, &other, err, sizeof err), ECS_ERR_ACCESS);
    CHECK(c.p[0] == NULL && c.n[0] == 0);
    CHECKF(strstr(err, "Probe") && strstr(err, "Other") && strstr(err, "reads"), "error: %s", err);
    CHECK_EQ_INT(ev9_frame(&c, EV9_WRONG_SIZE, &other, err, sizeof err), ECS_ERR_ACCESS);
    CHECK(c.p[0] == NULL && c.n[0] == 0);
    CHECKF(strstr(err, "Probe"), "error: %s", err);

    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ecs_id ev = ECS_EVENT(w, ev_msg), comp = ecs_component(w, "Comp", sizeof(int32_t), _Alignof(int32_t));
    ecs_id res = ecs_resource(w, "Res", sizeof(int32_t), _Alignof(int32_t), NULL);
    REQUIRE(ev && comp && res);
    /* registration: the same again is the same id; another size, a component's name: 0 */
    CHECK_EQ_INT(ecs_event(w, "ev_msg", sizeof(ev_msg), _Alignof(ev_msg)), ev);
    CHECK_EQ_INT(ECS_EVENT(w, ev_msg), ev);
    CHECK_EQ_INT(ecs_event(w, "ev_msg", sizeof(ev_msg) + 4, _Alignof(ev_msg)), 0);
    CHECK(ecs_last_error(w)[0] != 0);
    CHECK_EQ_INT(ecs_event(w, "Comp", sizeof(int32_t), _Alignof(int32_t)), 0);
    CHECK_EQ_INT(ecs_event(w, "Res", sizeof(int32_t), _Alignof(int32_t)), 0);
    CHECK_EQ_INT(ecs_component(w, "ev_msg", sizeof(ev_msg), _Alignof(ev_msg)), 0);
    CHECK_EQ_INT(ecs_event_init(w, NULL), 0);
    CHECK_EQ_INT(ecs_event_init(NULL, &(ecs_event_desc){.name = "X", .size = 4, .align = 4}), 0);
    CHECK_EQ_INT(ecs_event_init(w, &(ecs_event_desc){.name = "Spawn", .size = 4, .align = 4,
        .entity_fields = {0}, .entity_field_count = 1}), 0);   /* an entity field past the payload */
    /* systems: an event type in terms or writes, anything else in emits */
    uint32_t systems = ecs_system_count(w);
    struct { const char *what; ecs_system_desc d; } bad[] = {
        {"event in terms", {.name = "B", .fn = ev_nop, .terms = {ECS_TERM_R(ev)}}},
        {"event in WRITE terms", {.name = "B", .fn = ev_nop, .terms = {ECS_TERM_W(ev)}}},
        {"event in writes", {.name = "B", .fn = ev_nop, .writes = {ev}}},
        {"component in emits", {.name = "B", .fn = ev_nop, .emits = {comp}}},
        {"resource in emits", {.name = "B", .fn = ev_nop, .emits = {res}}},
        {"unknown id in emits", {.name = "B", .fn = ev_nop, .emits = {9999}}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ecs_system s = ecs_system_add(w, &bad[i].d);
        CHECKF(s == 0, "%s: made system %u", bad[i].what, (unsigned)s);
        CHECKF(ecs_last_error(w)[0] != 0, "%s: no error", bad[i].what);
    }
    CHECK_EQ_INT(ecs_system_count(w), systems);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(ev)}}) == NULL);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(comp), ECS_TERM_NOT(ev)}}) == NULL);
    /* events are not data on entities */
    ecs_entity e = ecs_create(w);
    REQUIRE(e);
    ev_msg m = {1, 2, 3, 4};
    CHECK_EQ_INT(ecs_add(w, e, ev), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_set(w, e, ev, &m), ECS_ERR_ARG);
    CHECK(!ecs_has(w, e, ev) && ecs_get(w, e, ev) == NULL);
    /* ecs_world_emit and ecs_observe */
    CHECK_EQ_INT(ecs_world_emit(w, 9999, &m), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_world_emit(w, comp, &m), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_world_emit(w, ev, NULL), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_world_emit(NULL, ev, &m), ECS_ERR_ARG);
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = 9999, .fn = ev_observe_fn}) == 0);
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = comp, .fn = ev_observe_fn}) == 0);
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = ev}) == 0);
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_observe_fn, .reads = {ev}}) == 0);
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_observe_fn, .writes = {9999}}) == 0);
    CHECK(ecs_observe(w, NULL) == 0);
    CHECK_EQ_INT(ecs_unobserve(w, 0), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_unobserve(w, 9999), ECS_ERR_ARG);
    /* outside a system: a query's iterator is no system's */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(comp)}});
    REQUIRE(q);
    ecs_iter it = ecs_query_iter(w, q);
    int n = -1;
    CHECK_EQ_INT(ecs_emit(&it, ev, &m), ECS_ERR_ARG);
    CHECK(ecs_events(&it, ev, &n) == NULL && n == 0);
    ecs_iter_fini(&it);
    ecs_query_free(q);
    /* nothing of the above was delivered */
    ev_observer ob = {.ev = ev};
    REQUIRE(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_observe_fn, .ctx = &ob}));
    CHECK_EQ_INT(ecs_progress(w, 1.0f / 60), ECS_OK);
    CHECK_EQ_INT(ob.calls, 0);
    EV_REPORT("bad input");
    ecs_world_free(w);
}

/* ==== 10. validation ================================================================= */
/* Emitter (writes A) and Reader (writes B) in stage 0, under every order
   mode: valid, no RACE, a note naming both, no order either way. Emitter2
   gives Reader a second note; Both (emits and reads, alone in its stage)
   none about itself; LateReader (another stage) none; AfterExcl (after Excl,
   whose sync point follows both emitters) two as well, as events wait for
   the stage's end. Reader runs before Excl
   (an EXCLUSIVE system conflicts with its whole stage: ECS_ORDER_EXPLICIT
   wants that order declared). */
TEST(events_validation_notes) {
    static const ecs_order orders[3] = {ECS_ORDER_INSERTION, ECS_ORDER_EXPLICIT, ECS_ORDER_WRITERS_FIRST};
    for (int oi = 0; oi < 3; oi++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .order = orders[oi]});
        REQUIRE(w);
        ecs_id a = ecs_component(w, "A", 4, 4), b = ecs_component(w, "B", 4, 4), ev = ECS_EVENT(w, ev_msg);
        ecs_stage late = ecs_stage_add(w, "Late"), own = ecs_stage_add(w, "Own");
        REQUIRE(a && b && ev && late && own);
        ecs_system em = ecs_system_add(w, &(ecs_system_desc){.name = "Emitter", .fn = ev_nop,
            .terms = {ECS_TERM_W(a)}, .emits = {ev}});
        ecs_system rd = ecs_system_add(w, &(ecs_system_desc){.name = "Reader", .fn = ev_nop,
            .terms = {ECS_TERM_W(b)}, .reads = {ev}, .before = {"Excl"}});
        ecs_system em2 = ecs_system_add(w, &(ecs_system_desc){.name = "Emitter2", .fn = ev_nop, .emits = {ev}});
        ecs_system both = ecs_system_add(w, &(ecs_system_desc){.name = "Both", .fn = ev_nop, .emits = {ev},
            .reads = {ev}, .stage = own});
        ecs_system lr = ecs_system_add(w, &(ecs_system_desc){.name = "LateReader", .fn = ev_nop, .reads = {ev},
            .stage = late});
        ecs_system ex = ecs_system_add(w, &(ecs_system_desc){.name = "Excl", .fn = ev_nop,
            .flags = ECS_SYSTEM_EXCLUSIVE, .after = {"Emitter", "Emitter2"}});
        ecs_system ae = ecs_system_add(w, &(ecs_system_desc){.name = "AfterExcl", .fn = ev_nop, .reads = {ev},
            .after = {"Excl"}});
        REQUIRE(em && rd && em2 && both && lr && ex && ae);
        ecs_report rep;
        CHECKF(ecs_validate(w, &rep) == ECS_OK && rep.count == 0, "order %d: %d problems", (int)orders[oi], rep.count);
        int notes[2][2] = {{0, 0}, {0, 0}};   /* [Reader, AfterExcl][Emitter, Emitter2] */
        for (int i = 0; i < rep.note_count; i++) {
            const ecs_problem *p = &rep.notes[i];
            if (p->kind != ECS_NOTE_EVENT_NEXT_FRAME) continue;
            CHECKF((p->a == rd || p->a == ae) && (p->b == em || p->b == em2) && p->id == ev,
                   "order %d: a note about %u and %u: %s", (int)orders[oi], (unsigned)p->a, (unsigned)p->b, p->message);
            CHECKF(p->message && strstr(p->message, p->a == rd ? "\"Reader\"" : "\"AfterExcl\"") &&
                   strstr(p->message, p->b == em ? "\"Emitter\"" : "\"Emitter2\"") && strstr(p->message, "later stage"),
                   "message: %s", p->message ? p->message : "(null)");
            notes[p->a == ae][p->b == em2]++;
        }
        for (int r = 0; r < 2; r++)
            for (int e = 0; e < 2; e++) CHECKF(notes[r][e] == 1, "order %d: %d notes [%d][%d]", (int)orders[oi], notes[r][e], r, e);
        /* events infer no order (and validation passed, so they make no race) */
        CHECK(!ecs_system_precedes(w, em, rd) && !ecs_system_precedes(w, rd, em));
        CHECK(!ecs_system_precedes(w, em2, rd) && !ecs_system_precedes(w, rd, em2));
        CHECK(ecs_system_precedes(w, em, lr));   /* stage order, as always */
        ecs_world_free(w);
    }
}

/* ==== 11. allocation failures ======================================================== */
/* The fail_at-th request fails, once; the rest succeed, so the world can
   recover. Single-threaded worlds only: plain counters. */
typedef struct ev_alloc { long requests, fail_at, injected, live; } ev_alloc;
static void *ev_realloc(void *ptr, size_t size, void *user) {
    ev_alloc *a = (ev_alloc *)user;
    if (size == 0) {
        if (ptr) { a->live--; free(ptr); }
        return NULL;
    }
    if (++a->requests == a->fail_at) { a->injected++; return NULL; }
    void *p = realloc(ptr, size);
    if (p && !ptr) a->live++;
    return p;
}
/* An event's identity, for sorting: (src, frame, seq). */
static uint64_t ev_key(const ev_msg *m) { return (uint64_t)m->src << 48 | (uint64_t)m->frame << 24 | m->seq; }
static int ev_key_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
/* Emits like ev_emit_rows, noting each attempt and whether it succeeded. */
typedef struct ev_oom_emitter { ev_emitter e; ev_recs *attempts; } ev_oom_emitter;
static void ev11_emit(ecs_iter *it) {
    ev_oom_emitter *c = (ev_oom_emitter *)it->ctx;
    const int32_t *row = ECS_FIELD(it, int32_t, 0);
    ecs_emitter *em = c->e.src == 2 ? ECS_EMITTER(it, ev_msg, c->e.ev) : NULL;   /* E1: NULL if out of memory */
    for (int i = 0; row && i < it->count; i++) {
        if (!c->e.mod || (uint32_t)row[i] % c->e.mod != c->e.rem) continue;
        ev_msg m = {c->e.src, (uint32_t)ev_frame, (uint32_t)row[i], 0}, *to = NULL;
        ecs_result r = c->e.src != 2 ? ecs_emit(it, c->e.ev, &m)
                     : (to = (ev_msg *)ecs_emitter_next(em, sizeof m)) != NULL ? ECS_OK : ECS_ERR_NOMEM;
        if (to) *to = m;
        TCHECK(it, r == ECS_OK || r == ECS_ERR_NOMEM);
        ev_push(c->attempts, r == ECS_OK, m);
    }
}
static void ev11_spawn(ecs_iter *it) {   /* more rows each frame: more chunks, more buffers */
    const ecs_id *row = (const ecs_id *)it->ctx;
    for (int32_t i = 0; i < 20; i++) {
        ecs_entity e = ecs_cmd_create(it->commands);
        int32_t id = 1000 * (int32_t)(ev_frame + 1) + i;
        if (e) (void)ecs_cmd_set(it->commands, e, *row, &id);
    }
}
enum { EV11_READERS = 4, EV11_WHO = EV11_READERS + 2 };   /* readers, then two observers */
typedef struct ev_oom_run {
    ev_alloc a;
    long setup_requests, swept_requests;   /* in setup; in frames 0-3 */
    ecs_result results[8];
    ev_recs attempts;            /* run = 1 if ecs_emit / ecs_world_emit succeeded */
    ev_reader rd[EV11_READERS];
    ev_observer ob[2];
    ev_oom_emitter em[2];
    ecs_id row;
    bool consistent;             /* validation and the hash after recovery */
} ev_oom_run;
/* Setup (not failing), then frames 0-3 with events (the swept part: a
   world_emit before each), then frames 4-7 without (allocation recovered). */
static void ev11_run(ev_oom_run *o, long fail_at) {
    memset(o, 0, sizeof *o);
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = ev_realloc, .alloc_user = &o->a});
    if (!w) return;
    o->row = ecs_component(w, "Row", sizeof(int32_t), _Alignof(int32_t));
    ecs_id ev = ECS_EVENT(w, ev_msg);
    ecs_stage mid = ecs_stage_add(w, "Mid"), late = ecs_stage_add(w, "Late");
    bool ok = o->row && ev && mid && late && ev_rows(w, o->row, 0, 100);
    for (int k = 0; k < 2; k++)
        o->em[k] = (ev_oom_emitter){{.ev = ev, .src = (uint32_t)k + 1, .mod = 2, .rem = 0}, &o->attempts};
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "E0", .fn = ev11_emit, .ctx = &o->em[0],
                   .terms = {ECS_TERM_R(o->row)}, .chunk_size = 16, .emits = {ev}});
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "Spawn", .fn = ev11_spawn, .ctx = &o->row});
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "E1", .fn = ev11_emit, .ctx = &o->em[1],
                   .terms = {ECS_TERM_R(o->row)}, .chunk_size = 32, .emits = {ev}, .stage = mid});
    const ecs_stage stage_of[EV11_READERS] = {0, mid, late, late};
    for (int r = 0; r < EV11_READERS; r++) {
        o->rd[r].ev = ev;
        ecs_system_desc d = {.name = r == 0 ? "R0" : r == 1 ? "R1" : r == 2 ? "R2" : "R3", .fn = ev_read,
                             .ctx = &o->rd[r], .reads = {ev}, .stage = stage_of[r]};
        if (r == 3) {   /* chunked: new rows need new buffers for it */
            d.terms[0] = (ecs_term)ECS_TERM_R(o->row);
            d.chunk_size = 24;
        }
        ok = ok && ecs_system_add(w, &d);
    }
    for (int k = 0; k < 2; k++) {
        o->ob[k].ev = ev;
        ok = ok && ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_observe_fn, .ctx = &o->ob[k]});
    }
    if (!ok) { ecs_world_free(w); return; }
    o->setup_requests = o->a.requests;
    o->a.fail_at = fail_at ? o->setup_requests + fail_at : 0;
    for (long f = 0; f < 8; f++) {
        ev_frame = f;
        for (int k = 0; k < 2; k++) o->em[k].e.mod = f < 4 ? 2 : 0;   /* then nothing */
        if (f < 4) {
            ev_msg m = {0, (uint32_t)f, 0, 0};
            ecs_result r = ecs_world_emit(w, ev, &m);
            CHECKF(r == ECS_OK || r == ECS_ERR_NOMEM, "fail_at %ld: ecs_world_emit returned %s", fail_at,
                   ecs_result_str(r));
            ev_push(&o->attempts, r == ECS_OK, m);
        }
        o->results[f] = ecs_progress(w, 1.0f / 60);
        if (f == 3) o->swept_requests = o->a.requests - o->setup_requests;
    }
    o->consistent = ecs_validate(w, NULL) == ECS_OK && ecs_world_hash(w) != 0;
    ecs_world_free(w);
}
/* Each participant saw each event at most once; an event whose emit
   succeeded was seen by all of them, one whose emit failed by none. */
static int ev11_check(ev_oom_run *o, long fail_at) {
    int before = test_g.checks_failed;
    for (long f = 0; f < 8; f++)
        CHECKF(o->results[f] == ECS_OK || (o->results[f] == ECS_ERR_NOMEM && f < 4),
               "fail_at %ld: frame %ld returned %s", fail_at, f, ecs_result_str(o->results[f]));
    CHECKF(o->consistent, "fail_at %ld: the world is not valid after recovering", fail_at);
    CHECKF(o->a.live == 0, "fail_at %ld: %ld blocks leaked", fail_at, o->a.live);
    uint64_t *keys[EV11_WHO];
    size_t n[EV11_WHO];
    for (int p = 0; p < EV11_WHO; p++) {
        const ev_recs *x = p < EV11_READERS ? &o->rd[p].seen : &o->ob[p - EV11_READERS].seen;
        keys[p] = (uint64_t *)malloc((x->n + 1) * sizeof **keys);
        n[p] = keys[p] ? x->n : 0;
        for (size_t i = 0; i < n[p]; i++) keys[p][i] = ev_key(&x->v[i].m);
        if (n[p]) qsort(keys[p], n[p], sizeof **keys, ev_key_cmp);
        for (size_t i = 1; i < n[p]; i++)
            CHECKF(keys[p][i] != keys[p][i - 1], "fail_at %ld: participant %d saw event %llx twice", fail_at, p,
                   (unsigned long long)keys[p][i]);
    }
    size_t ok = 0, wrong = 0;
    for (size_t i = 0; i < o->attempts.n; i++) {
        uint64_t k = ev_key(&o->attempts.v[i].m);
        bool emitted = o->attempts.v[i].run != 0;
        ok += emitted;
        unsigned seen = 0;   /* a bit per participant */
        for (int p = 0; p < EV11_WHO; p++)
            seen |= (unsigned)(n[p] && bsearch(&k, keys[p], n[p], sizeof k, ev_key_cmp) != NULL) << p;
        if (seen != (emitted ? (1u << EV11_WHO) - 1 : 0) && !wrong++)
            CHECKF(0, "fail_at %ld: event {src %u frame %u seq %u} (emit %s) seen by participants %#x of %#x",
                   fail_at, (unsigned)o->attempts.v[i].m.src, (unsigned)o->attempts.v[i].m.frame,
                   (unsigned)o->attempts.v[i].m.seq, emitted ? "succeeded" : "failed", seen, (1u << EV11_WHO) - 1);
    }
    CHECKF(wrong == 0, "fail_at %ld: %zu events seen by some but not all", fail_at, wrong);
    for (int p = 0; p < EV11_WHO; p++) {
        CHECKF(n[p] == ok, "fail_at %ld: participant %d saw %zu events of %zu emitted", fail_at, p, n[p], ok);
        free(keys[p]);
    }
    CHECK(!o->attempts.oom);
    return test_g.checks_failed - before;
}
static void ev11_free(ev_oom_run *o) {
    ev_recs_free(&o->attempts);
    for (int r = 0; r < EV11_READERS; r++) ev_recs_free(&o->rd[r].seen);
    for (int k = 0; k < 2; k++) ev_recs_free(&o->ob[k].seen);
}
TEST(events_oom) {
    ev_reset();
    static ev_oom_run o;
    ev11_run(&o, 0);
    long total = o.swept_requests;
    REQUIRE(o.setup_requests > 0);
    int base = ev11_check(&o, 0);
    ev11_free(&o);
    REQUIRE(base == 0);
    CHECKF(total > 10, "only %ld allocations in the frames", total);
    int bad_runs = 0, failed_frames = 0;
    for (long i = 1; i <= total && bad_runs < 3; i++) {
        ev11_run(&o, i);
        CHECKF(o.a.injected == 1, "fail_at %ld: %ld failures injected", i, o.a.injected);
        for (int f = 0; f < 8; f++) failed_frames += o.results[f] == ECS_ERR_NOMEM;
        bad_runs += ev11_check(&o, i) != 0;
        ev11_free(&o);
    }
    EV_REPORT("oom");
    CHECKF(failed_frames > 0, "no frame ever reported ECS_ERR_NOMEM in %ld runs", total);
    if (bad_runs >= 3) fprintf(stderr, "  events_oom: stopped after 3 failing runs\n");
}

/* An observer's echo of an event queued between frames arrives at the end
   of the first stage's turn, however many stages the world has (the start
   of a frame runs a leftover sync point per stage; only the first delivers). */
typedef struct ev_echo { ecs_id ev; int heard, seen_frame[4]; long frame; } ev_echo;
static void ev_echo_obs(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    ev_echo *e = ctx;
    (void)payloads;
    for (int i = 0; i < count && e->heard++ == 0; i++) {
        int two = 2;
        CHECK(ecs_world_emit(w, event, &two) == ECS_OK);
    }
}
static void ev_echo_read(ecs_iter *it) {
    ev_echo *e = it->ctx;
    int n;
    const int *v = ECS_EVENTS(it, int, e->ev, &n);
    for (int i = 0; i < n; i++) e->seen_frame[v[i] & 3] = (int)e->frame + 1;
}
TEST(events_echo_independent_of_stages) {
    for (int stages = 1; stages <= 3; stages++) {
        ecs_world *w = ev_world(1);
        REQUIRE(w);
        ev_echo e;
        memset(&e, 0, sizeof e);
        e.ev = ecs_event(w, "Echo", sizeof(int), 0);
        for (int k = 1; k < stages; k++) ecs_stage_add(w, k == 1 ? "b" : "c");
        CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "reader", .fn = ev_echo_read, .ctx = &e,
                                                   .reads = {e.ev}}) != 0);
        CHECK(ecs_observe(w, &(ecs_observer_desc){.event = e.ev, .fn = ev_echo_obs, .ctx = &e}) != 0);
        int one = 1;
        CHECK(ecs_world_emit(w, e.ev, &one) == ECS_OK);
        for (e.frame = 0; e.frame < 3; e.frame++) CHECK(ecs_progress(w, 0.01f) == ECS_OK);
        CHECKF(e.seen_frame[1] == 1 && e.seen_frame[2] == 2, "%d stages: the event seen in frame %d, its echo in "
               "frame %d (want 1 and 2: the echo is delivered at stage 0's sync point)", stages,
               e.seen_frame[1], e.seen_frame[2]);
        CHECK_EQ_INT(e.heard, 2);
        ecs_world_free(w);
    }
}

/* The DOT export draws each emitter -> reader pair, labelled with the type;
   the trace shows each observer's run with its event type. */
static void ev_dot_emit(ecs_iter *it) {
    int one = 1;
    ecs_emit(it, *(const ecs_id *)it->ctx, &one);
}
static void ev_dot_obs(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)w; (void)event; (void)payloads; (void)ctx; (void)count;
}
static char *ev_written(ecs_world *w, ecs_result (*write)(ecs_world *, FILE *)) {   /* what write wrote */
    FILE *f = tmpfile();
    if (!f) return NULL;
    char *text = write(w, f) == ECS_OK ? test_read_all(f) : NULL;
    fclose(f);
    return text;
}
TEST(events_dot_and_trace) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ecs_id ev = ecs_event(w, "Boom\"Event", sizeof(int), 0);   /* a quote: escaped in both */
    ecs_stage late = ecs_stage_add(w, "late");
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "emitter", .fn = ev_dot_emit, .ctx = &ev, .emits = {ev}}));
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "reader", .fn = ev_nop, .stage = late, .reads = {ev}}));
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_dot_obs}));
    char *dot = ev_written(w, ecs_write_dot);
    REQUIRE(dot);
    CHECKF(strstr(dot, "s1 -> s2 [style=dotted") && strstr(dot, "label=\"Boom\\\"Event\""),
           "no labelled event edge in:\n%s", dot);
    free(dot);
    ecs_trace_enable(w, true);
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    char *json = ev_written(w, ecs_write_trace);
    REQUIRE(json);
    CHECKF(strstr(json, "\"observer 1\",\"cat\":\"observer\"") && strstr(json, "\"event\":\"Boom\\\"Event\""),
           "no observer span in the trace");
    free(json);
    ecs_world_free(w);
}

/* ecs_emit_new / ECS_EMIT: a zeroed slot filled in place, the same event
   as ecs_emit's; a wrong size is refused. */
typedef struct ev_pad { uint8_t tag; uint32_t value; } ev_pad;   /* 3 bytes of padding */
typedef struct ev_new_ctx { ecs_id ev; int bad; uint64_t seen; ev_pad last; } ev_new_ctx;
static void ev_new_emit(ecs_iter *it) {
    ev_new_ctx *c = it->ctx;
    ev_pad *p = ecs_emit_new(it, c->ev, sizeof(ev_pad));
    if (!p) { c->bad++; return; }
    p->tag = 7;
    p->value = 1;
    ECS_EMIT(it, ev_pad, c->ev, {8, 2});
    ev_pad copy = {9, 3};
    c->bad += ecs_emit(it, c->ev, &copy) != ECS_OK;
    c->bad += ecs_emit_new(it, c->ev, sizeof(ev_pad) + 4) != NULL;   /* the wrong size */
    c->bad += ecs_emit_new(it, 9999, sizeof(ev_pad)) != NULL;        /* not an event */
}
static void ev_new_read(ecs_iter *it) {
    ev_new_ctx *c = it->ctx;
    int n;
    const ev_pad *p = ECS_EVENTS(it, ev_pad, c->ev, &n);
    for (int i = 0; i < n; i++) {
        c->seen = c->seen * 10 + p[i].tag;
        const unsigned char *b = (const unsigned char *)&p[i];
        if (i == 0 && (b[1] | b[2] | b[3])) c->bad++;   /* ecs_emit_new zeroed the padding */
    }
}
TEST(events_emit_in_place) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ev_new_ctx c;
    memset(&c, 0, sizeof c);
    c.ev = ECS_EVENT(w, ev_pad);
    ecs_stage late = ecs_stage_add(w, "late");
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "emit", .fn = ev_new_emit, .ctx = &c, .emits = {c.ev}}));
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "read", .fn = ev_new_read, .ctx = &c, .stage = late,
                                               .reads = {c.ev}}));
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    CHECK_EQ_INT(c.bad, 0);
    CHECK(c.seen == 789);
    {
        ecs_iter none;
        memset(&none, 0, sizeof none);
        none.world = w;
        CHECK(ecs_emit_new(&none, c.ev, sizeof(ev_pad)) == NULL);   /* not in a system */
        CHECK(ecs_emit_new(NULL, c.ev, sizeof(ev_pad)) == NULL);
    }
    ecs_world_free(w);
}

/* ecs_emitter: thousands of events a batch (blocks of room and growth),
   zeroed slots on reused memory, in call order with ecs_emit and
   ecs_emit_new of the same type and an emitter of another type; bad input;
   an emitter kept past its batch does nothing. */
typedef struct ev_emr {
    ecs_id ev, other, ping, undeclared;
    ecs_emitter *kept;
    long bad, next, seen, other_seen, other_made, other_last, pings;
    char error[256];
} ev_emr;
enum { EV_EMR_N = 3000 };
static void ev_emr_emit(ecs_iter *it) {
    ev_emr *c = it->ctx;
    ecs_emitter *em = ECS_EMITTER(it, ev_pad, c->ev), *other = ECS_EMITTER(it, int, c->other);
    ecs_emitter *ping = ecs_emitter_get(it, c->ping, 0);
    c->bad += !em || !other || !ping || ECS_EMITTER(it, int, c->ev) != NULL;   /* the wrong size */
    c->bad += ecs_emitter_get(it, 9999, sizeof(int)) != NULL;                   /* not an event */
    for (int i = 0; em && i < EV_EMR_N; i++) {
        uint32_t v = (uint32_t)c->next++;
        ev_pad *p = NULL;
        if (i % 100 == 7) {
            ev_pad copy;
            memset(&copy, 0, sizeof copy);   /* (the padding, which readers check) */
            copy.tag = 1;
            copy.value = v;
            c->bad += ecs_emit(it, c->ev, &copy) != ECS_OK;
        }
        else if (i % 100 == 8) p = (ev_pad *)ecs_emit_new(it, c->ev, sizeof *p);
        else p = (ev_pad *)ecs_emitter_next(em, sizeof *p);
        if (i % 100 == 7) continue;
        if (!p) { c->bad++; continue; }
        const unsigned char *b = (const unsigned char *)p;
        for (size_t k = 0; k < sizeof *p; k++) c->bad += b[k] != 0;   /* zeroed, though the memory is reused */
        p->tag = 1;
        p->value = v;
        if (i % 3 == 0) {
            int *o = (int *)ecs_emitter_next(other, sizeof *o);
            if (o) *o = (int)v, c->other_made++; else c->bad++;
        }
        if (i % 1000 == 0) c->bad += ecs_emitter_next(ping, 0) == NULL;
        if (i == 500) c->bad += ecs_emitter_next(em, sizeof *p + 4) != NULL;   /* the wrong size: nothing */
    }
    c->kept = em;
}
static void ev_emr_read(ecs_iter *it) {
    ev_emr *c = it->ctx;
    int n, no, np;
    const ev_pad *p = ECS_EVENTS(it, ev_pad, c->ev, &n);
    const int *o = ECS_EVENTS(it, int, c->other, &no);
    ecs_events(it, c->ping, &np);
    for (int i = 0; i < n; i++) {
        const unsigned char *b = (const unsigned char *)&p[i];
        c->bad += p[i].tag != 1 || p[i].value != (uint32_t)c->seen++ || b[1] || b[2] || b[3];
    }
    for (int i = 0; i < no; i++, c->other_seen++) {   /* increasing, each i % 3 == 0 (and N % 3 == 0) */
        c->bad += o[i] <= c->other_last || o[i] % 3 != 0;
        c->other_last = o[i];
    }
    c->pings += np;
}
static void ev_emr_stale(ecs_iter *it) {   /* the emitter of an earlier turn: refused */
    ev_emr *c = it->ctx;
    c->bad += c->kept && ecs_emitter_next(c->kept, sizeof(ev_pad)) != NULL;
    snprintf(c->error, sizeof c->error, "%s", ecs_last_error(it->world));
#if ECS_CHECK_ACCESS   /* (unchecked builds do not look) */
    if (c->next == 3 * EV_EMR_N) c->bad += ecs_emitter_get(it, c->undeclared, sizeof(int)) != NULL;   /* not in emits */
#endif
}
TEST(events_emitter) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ev_emr c;
    memset(&c, 0, sizeof c);
    c.other_last = -1;
    c.ev = ECS_EVENT(w, ev_pad);
    c.other = ecs_event(w, "Other", sizeof(int), _Alignof(int));
    c.ping = ecs_event(w, "Ping", 0, 0);
    c.undeclared = ecs_event(w, "Undeclared", sizeof(int), _Alignof(int));
    ecs_stage late = ecs_stage_add(w, "late");
    REQUIRE(c.ev && c.other && c.ping && c.undeclared && late);
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "emit", .fn = ev_emr_emit, .ctx = &c,
                                               .emits = {c.ev, c.other, c.ping}}));
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "read", .fn = ev_emr_read, .ctx = &c, .stage = late,
                                               .reads = {c.ev, c.other, c.ping}}));
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "stale", .fn = ev_emr_stale, .ctx = &c, .stage = late,
                                               .emits = {c.ev}}));
    for (int f = 0; f < 3; f++)   /* the last frame reports the undeclared type (checked builds) */
        CHECK_EQ_INT(ecs_progress(w, 0.01f), f == 2 && ECS_CHECK_ACCESS ? ECS_ERR_ACCESS : ECS_OK);
    CHECK_EQ_INT(c.bad, 0);
    CHECK_EQ_INT(c.seen, 3 * EV_EMR_N);
    CHECK_EQ_INT(c.pings, 3 * 3);
    CHECK(c.other_made > 2900 && c.other_seen == c.other_made);
    CHECK(strstr(c.error, "after its batch") != NULL);
    CHECK(ecs_emitter_next(c.kept, sizeof(ev_pad)) == NULL);   /* between frames */
    CHECK(ecs_emitter_next(NULL, 4) == NULL);
    {
        ecs_iter none;
        memset(&none, 0, sizeof none);
        none.world = w;
        CHECK(ecs_emitter_get(&none, c.ev, sizeof(ev_pad)) == NULL);   /* not in a system */
        CHECK(ecs_emitter_get(NULL, c.ev, sizeof(ev_pad)) == NULL);
    }
    ecs_world_free(w);
}

/* ==== review regressions ============================================================= */
typedef struct ev_rr {
    ecs_id ev, counted;   /* counted: what ev_rr_count counts (0: ev) */
    long seen, bad, next;
    ecs_system self;
    char order[8];
    int on;
} ev_rr;
static void ev_rr_emit(ecs_iter *it) {   /* 100 numbered events a frame */
    ev_rr *c = it->ctx;
    for (int i = 0; i < 100; i++) {
        int v = (int)c->next++;
        ecs_emit(it, c->ev, &v);
    }
}
static void ev_rr_read(ecs_iter *it) {   /* each number once, in order */
    ev_rr *c = it->ctx;
    int n;
    const int *v = ECS_EVENTS(it, int, c->ev, &n);
    for (int i = 0; i < n; i++) c->bad += v[i] != (int)c->seen++;
}
static void ev_rr_nop_excl(ecs_iter *it) { (void)it; }
/* A 1-thread world: event type name (size bytes), an emitter in stage 0
   and a reader in a later stage (its reads: the type twice if twice). */
static ecs_world *ev_rr_world(ev_rr *c, const char *name, size_t size, ecs_system_fn emit, ecs_system_fn read,
                              bool twice) {
    ecs_world *w = ev_world(1);
    memset(c, 0, sizeof *c);
    if (!w) return NULL;
    c->ev = ecs_event(w, name, size, 0);
    ecs_stage late = ecs_stage_add(w, "late");
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "emit", .fn = emit, .ctx = c, .emits = {c->ev}}));
    c->self = ecs_system_add(w, &(ecs_system_desc){.name = "read", .fn = read, .ctx = c, .stage = late,
                                                   .reads = {c->ev, twice ? c->ev : 0}});
    CHECK(c->self);
    return w;
}

/* A system listing an event type twice in reads has one window (a snapshot
   wrote past its cursors; it got two notes and hashed twice). */
TEST(events_reads_listed_twice) {
    ev_rr c;
    ecs_world *w = ev_rr_world(&c, "N", sizeof(int), ev_rr_emit, ev_rr_read, true);
    REQUIRE(w);
    for (int f = 0; f < 3; f++) CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    CHECK(c.seen == 300 && c.bad == 0);
    ecs_snapshot *snap = ecs_snapshot_take(w);
    CHECK(snap != NULL);
    CHECK_EQ_INT(ecs_snapshot_restore(w, snap), ECS_OK);
    ecs_snapshot_free(snap);
    ecs_world_free(w);
}

/* A reader independent_of an EXCLUSIVE system of its stage: its window was
   taken before the EXCLUSIVE system's sync point, which trimmed (and moved)
   what it had not read yet. Every event once, in order, on any threads. */
TEST(sched_events_independent_of_exclusive) {
    for (int ti = 0; ti < 4; ti++) {
        ecs_world *w = ev_world(ev_threads[ti]);
        REQUIRE(w);
        ev_rr c;
        memset(&c, 0, sizeof c);
        c.ev = ecs_event(w, "N", sizeof(int), 0);
        CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "P", .fn = ev_rr_emit, .ctx = &c, .emits = {c.ev}}));
        CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "E", .fn = ev_rr_nop_excl, .flags = ECS_SYSTEM_EXCLUSIVE,
                                                   .after = {"P"}}));
        CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "X", .fn = ev_rr_read, .ctx = &c, .reads = {c.ev},
                                                   .after = {"P"}, .independent_of = {"E"}}));
        long frames = test_scaled(40, 8);
        for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
        CHECKF(c.bad == 0 && c.seen == (frames - 1) * 100, "%d threads: %ld seen, %ld out of order",
               ev_threads[ti], c.seen, c.bad);
        ecs_world_free(w);
    }
}

/* ecs_emit_new of a type of size 0 is never NULL when the emit works. */
static void ev_rr_emit_zero(ecs_iter *it) {
    ev_rr *c = it->ctx;
    for (int i = 0; i < 3; i++) c->bad += ecs_emit_new(it, c->ev, 0) == NULL;
}
static void ev_rr_count(ecs_iter *it) {
    ev_rr *c = it->ctx;
    int n;
    ecs_events(it, c->counted ? c->counted : c->ev, &n);
    c->seen += n;
}
TEST(events_emit_new_size_zero) {
    ev_rr c;
    ecs_world *w = ev_rr_world(&c, "Ping", 0, ev_rr_emit_zero, ev_rr_count, false);
    REQUIRE(w);
    for (int f = 0; f < 2; f++) CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    CHECK_EQ_INT(c.bad, 0);
    CHECK_EQ_INT(c.seen, 6);
    ecs_world_free(w);
}

/* A reader in a fixed-step stage that takes no steps (time scale 0: a
   pause) keeps at most the backlog, and counts what it dropped. */
static void ev_rr_flood(ecs_iter *it) {
    ev_rr *c = it->ctx;
    for (int i = 0; i < 1000; i++) {
        int v = (int)c->next++;
        ecs_emit(it, c->ev, &v);
    }
}
static void ev_rr_max(ecs_iter *it) {
    ev_rr *c = it->ctx;
    int n;
    ecs_events(it, c->ev, &n);
    if (n > c->seen) c->seen = n;
}
TEST(events_paused_fixed_step_backlog) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ev_rr c;
    memset(&c, 0, sizeof c);
    c.ev = ecs_event(w, "N", sizeof(int), 0);
    ecs_stage fixed = ecs_stage_init(w, &(ecs_stage_desc){.name = "fixed", .fixed_dt = 0.01f});
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "flood", .fn = ev_rr_flood, .ctx = &c, .emits = {c.ev}}));
    ecs_system r = ecs_system_add(w, &(ecs_system_desc){.name = "read", .fn = ev_rr_max, .ctx = &c, .stage = fixed,
                                                        .reads = {c.ev}});
    REQUIRE(r);
    ecs_world_set_time_scale(w, 0);
    for (int f = 0; f < 100; f++) CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    ecs_world_set_time_scale(w, 1);
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    CHECKF(c.seen > 0 && c.seen <= ECS_EVENT_BACKLOG + 1000, "one run saw %ld events", c.seen);
    ecs_system_stats st;
    CHECK_EQ_INT(ecs_system_stats_get(w, r, &st), ECS_OK);
    CHECK(st.events_dropped == 101000 - (uint64_t)c.seen);
    ecs_world_free(w);
}

/* Observers run in registration order after an ecs_unobserve; a stale
   handle names no other observer. */
static void ev_rr_obs(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)w; (void)event; (void)payloads; (void)count;
    ev_rr *c = ((ev_rr **)ctx)[0];
    c->order[c->on++ % 7] = *(const char *)((void **)ctx)[1];
}
TEST(events_observer_order_after_unobserve) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ev_rr c;
    memset(&c, 0, sizeof c);
    c.ev = ecs_event(w, "N", sizeof(int), 0);
    void *ca[2] = {&c, "A"}, *cb[2] = {&c, "B"}, *cc[2] = {&c, "C"};
    ecs_observer a = ecs_observe(w, &(ecs_observer_desc){.event = c.ev, .fn = ev_rr_obs, .ctx = ca});
    ecs_observer b = ecs_observe(w, &(ecs_observer_desc){.event = c.ev, .fn = ev_rr_obs, .ctx = cb});
    CHECK(a && b);
    CHECK_EQ_INT(ecs_unobserve(w, a), ECS_OK);
    ecs_observer cobs = ecs_observe(w, &(ecs_observer_desc){.event = c.ev, .fn = ev_rr_obs, .ctx = cc});
    CHECK(cobs && cobs != a);
    CHECK_EQ_INT(ecs_unobserve(w, a), ECS_ERR_ARG);   /* stale: C stays */
    int one = 1;
    CHECK_EQ_INT(ecs_world_emit(w, c.ev, &one), ECS_OK);
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    CHECKF(!strcmp(c.order, "BC"), "order %s", c.order);
    ecs_world_free(w);
}

/* An observer's echo at a frame's last sync point waits for the next frame:
   a snapshot between the two holds it, so a replay from it (and a save
   file of it) gives the same frame as the original. */
static void ev_rr_echo(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    (void)event; (void)payloads;
    ev_rr *c = ctx;
    for (int i = 0; i < count; i++) {
        int two = 2;
        c->bad += ecs_world_emit(w, c->counted, &two) != ECS_OK;
    }
}
TEST(events_queued_echo_in_snapshots) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ev_rr c;
    memset(&c, 0, sizeof c);
    c.ev = ecs_event(w, "N", sizeof(int), 0);
    c.counted = ecs_event(w, "Echo", sizeof(int), 0);
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "count", .fn = ev_rr_count, .ctx = &c, .reads = {c.counted}}));
    CHECK(ecs_system_add(w, &(ecs_system_desc){.name = "emit", .fn = ev_rr_emit, .ctx = &c, .emits = {c.ev}}));
    CHECK(ecs_observe(w, &(ecs_observer_desc){.event = c.ev, .fn = ev_rr_echo, .ctx = &c}));
    for (int f = 0; f < 3; f++) CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    ecs_snapshot *snap = ecs_snapshot_take(w);
    REQUIRE(snap);
    uint64_t h0 = ecs_world_hash(w);
    long seen0 = c.seen;
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    long first = c.seen - seen0;
    uint64_t h1 = ecs_world_hash(w);
    CHECK(first == 100);   /* the last frame's 100 echoes */
    for (int k = 0; k < 2; k++) {   /* replay from the snapshot, then from a save file of it */
        ecs_snapshot *from = snap;
        FILE *f = NULL;
        if (k) {
            f = tmpfile();
            REQUIRE(f);
            CHECK_EQ_INT(ecs_snapshot_write(snap, f), ECS_OK);
            rewind(f);
            from = ecs_snapshot_read(w, f);
            fclose(f);
            REQUIRE(from);
        }
        CHECK_EQ_INT(ecs_snapshot_restore(w, from), ECS_OK);
        CHECK(ecs_world_hash(w) == h0);
        c.seen = seen0;
        CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
        CHECKF(c.seen - seen0 == first && ecs_world_hash(w) == h1, "replay %d: %ld echoes", k, c.seen - seen0);
        if (k) ecs_snapshot_free(from);
    }
    ecs_snapshot_free(snap);
    CHECK_EQ_INT(c.bad, 0);
    ecs_world_free(w);
}

/* Findings of the API fuzzer. (1) Events an observer queued (for the next
   delivery) come first there, also when that stage stages events at a sync
   point before an EXCLUSIVE system. (2) Events a sync point before an
   EXCLUSIVE system applied come before those of the stage's end, whatever
   the registration order (as commands: sync points as they happen).
   (3) ecs_world_hash with a queued event of size 0 (no buffer). */
typedef struct ev_fz { ecs_id ev; int value; int seen[16]; int n; bool echoed; } ev_fz;
static void ev_fz_emit(ecs_iter *it) {
    ev_fz *c = it->ctx;
    CHECK(ecs_emit(it, c->ev, &c->value) == ECS_OK);
}
static void ev_fz_nop(ecs_iter *it) { (void)it; }
static void ev_fz_read(ecs_iter *it) {
    ev_fz *c = it->ctx;
    int n;
    const int *v = ECS_EVENTS(it, int, c->ev, &n);
    for (int i = 0; i < n && c->n < 16; i++) c->seen[c->n++] = v[i];
}
static void ev_fz_echo(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    ev_fz *c = ctx;
    (void)payloads; (void)count;
    if (c->echoed) return;
    c->echoed = true;
    int echo = 99;
    CHECK(ecs_world_emit(w, event, &echo) == ECS_OK);
}
TEST(events_fuzz_findings) {
    ecs_world *w = ev_world(1);
    REQUIRE(w);
    ecs_id ev = ecs_event(w, "N", sizeof(int), 0);
    ecs_stage s1 = ecs_stage_add(w, "s1"), s2 = ecs_stage_add(w, "s2");
    ev_fz c0 = {.ev = ev, .value = 1}, ca = {.ev = ev, .value = 2}, cb = {.ev = ev, .value = 3}, rd = {.ev = ev};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "E0", .fn = ev_fz_emit, .ctx = &c0, .emits = {ev}}));
    /* stage s1 runs A, then X (EXCLUSIVE), then B (registered first) */
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = ev_fz_emit, .ctx = &cb, .emits = {ev},
                                                 .stage = s1, .after = {"X"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "X", .fn = ev_fz_nop, .stage = s1,
                                                 .flags = ECS_SYSTEM_EXCLUSIVE}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = ev_fz_emit, .ctx = &ca, .emits = {ev},
                                                 .stage = s1, .before = {"X"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "R", .fn = ev_fz_read, .ctx = &rd, .reads = {ev},
                                                 .stage = s2}));
    REQUIRE(ecs_observe(w, &(ecs_observer_desc){.event = ev, .fn = ev_fz_echo, .ctx = &c0}));
    CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    /* stage 0 delivers 1 (the observer queues 99), stage s1 stages A's 2 at X's sync point, then B's 3 */
    static const int want[4] = {1, 99, 2, 3};
    CHECK_EQ_INT(rd.n, 4);
    for (int i = 0; i < 4 && i < rd.n; i++) CHECKF(rd.seen[i] == want[i], "event %d: %d, want %d", i, rd.seen[i], want[i]);
    ecs_world_free(w);

    ev_rr z;   /* (3) */
    w = ev_rr_world(&z, "Ping", 0, ev_rr_emit_zero, ev_rr_count, false);
    REQUIRE(w);
    CHECK_EQ_INT(ecs_world_emit(w, z.ev, NULL), ECS_OK);
    uint64_t h = ecs_world_hash(w);
    CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
    CHECK(h != 0 && ecs_world_hash(w) != h);
    ecs_world_free(w);
}

void suite_events(void) {
    RUN(events_exactly_once);
    RUN(sched_events_order_threads);
    RUN(events_turns_and_steps);
    RUN(events_backlog);
    RUN(events_observers);
    RUN(sched_events_pending_handles);
    RUN(events_world_emit_between_frames);
    RUN(events_snapshot_restore);
    RUN(events_hash_unread_payloads);
    RUN(events_bad_input);
    RUN(events_validation_notes);
    RUN(events_oom);
    RUN(events_echo_independent_of_stages);
    RUN(events_dot_and_trace);
    RUN(events_emit_in_place);
    RUN(events_emitter);
    RUN(events_reads_listed_twice);
    RUN(sched_events_independent_of_exclusive);
    RUN(events_emit_new_size_zero);
    RUN(events_paused_fixed_step_backlog);
    RUN(events_observer_order_after_unobserve);
    RUN(events_queued_echo_in_snapshots);
    RUN(events_fuzz_findings);
}
