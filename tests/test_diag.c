/* diagnostics: every kind of validation message names the systems and data
   it is about (never a placeholder, never an EXCLUSIVE system in a note),
   ecs_world_hash refuses values it can only hash as pointers, an access
   refusal for a disjoint pair names the other system, the system getters,
   and the frame stats and simulation that count sync points as work. */
#include "test.h"
#include <math.h>
#include <stdatomic.h>

static void dg_nop(ecs_iter *it) { (void)it; }
static ecs_world *dg_world(ecs_order order) {
    return ecs_world_new(&(ecs_world_desc){.threads = 1, .order = order});
}

/* The messages of a report's problems (or notes) of kind k, one per line. */
static int dg_find(const ecs_problem *list, int n, ecs_problem_kind k, const char *const *needles, int nn) {
    for (int i = 0; i < n; i++) {
        if (list[i].kind != k) continue;
        int all = 1;
        for (int j = 0; j < nn; j++) all &= strstr(list[i].message, needles[j]) != NULL;
        if (all) return i;
    }
    return -1;
}
/* No message of the report uses a placeholder for data, or a format left over. */
static void dg_clean(const ecs_report *r) {
    for (int i = 0; i < r->count + r->note_count; i++) {
        const char *m = i < r->count ? r->problems[i].message : r->notes[i - r->count].message;
        CHECKF(!strstr(m, "whole stage") && !strstr(m, "%") && !strstr(m, "(null)") && !strstr(m, "\"\""),
               "placeholder in: %s", m);
    }
}
#define DG_EXPECT(list, n, kind, ...) do { static const char *const nd_[] = {__VA_ARGS__}; \
    int at_ = dg_find((list), (n), (kind), nd_, (int)(sizeof nd_ / sizeof *nd_)); \
    CHECKF(at_ >= 0, "no %s message with: %s ...", #kind, nd_[0]); } while (0)

/* Races in every shape, in EXPLICIT order (nothing is inferred). */
TEST(diag_race_messages) {
    ecs_world *w = dg_world(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id pos = ecs_component(w, "Pos", 8, 0), vel = ecs_component(w, "Vel", 8, 0);
    ecs_stage st[6];
    static const char *const names[6] = {"s0", "s1", "s2", "s3", "s4", "s5"};
    for (int i = 0; i < 6; i++) { st[i] = ecs_stage_add(w, names[i]); REQUIRE(st[i]); }
    /* one id, both write / one writes */
    ecs_system_add(w, &(ecs_system_desc){.name = "WriterA", .fn = dg_nop, .stage = st[0], .terms = {{pos, ECS_WRITE, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "WriterB", .fn = dg_nop, .stage = st[0], .terms = {{pos, ECS_WRITE, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Mover", .fn = dg_nop, .stage = st[1], .writes = {pos}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Drawer", .fn = dg_nop, .stage = st[1], .reads = {pos}});
    /* several ids */
    ecs_system_add(w, &(ecs_system_desc){.name = "Physics", .fn = dg_nop, .stage = st[2],
        .terms = {{pos, ECS_WRITE, ECS_AND}, {vel, ECS_WRITE, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Steer", .fn = dg_nop, .stage = st[2],
        .terms = {{pos, ECS_READ, ECS_AND}, {vel, ECS_WRITE, ECS_AND}}});
    /* exclusivity alone, with data, and both exclusive */
    ecs_system_add(w, &(ecs_system_desc){.name = "Spawner", .fn = dg_nop, .stage = st[3], .flags = ECS_SYSTEM_EXCLUSIVE});
    ecs_system_add(w, &(ecs_system_desc){.name = "Counter", .fn = dg_nop, .stage = st[3]});
    ecs_system_add(w, &(ecs_system_desc){.name = "Cleanup", .fn = dg_nop, .stage = st[4], .flags = ECS_SYSTEM_EXCLUSIVE,
        .terms = {{pos, ECS_WRITE, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Gold", .fn = dg_nop, .stage = st[4], .writes = {pos}});
    ecs_system_add(w, &(ecs_system_desc){.name = "SaveA", .fn = dg_nop, .stage = st[5], .flags = ECS_SYSTEM_EXCLUSIVE});
    ecs_system_add(w, &(ecs_system_desc){.name = "SaveB", .fn = dg_nop, .stage = st[5], .flags = ECS_SYSTEM_EXCLUSIVE});
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 6);
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_RACE, "\"WriterA\" and \"WriterB\" both write Pos and nothing orders them");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_RACE, "\"Mover\" writes Pos, which \"Drawer\" reads, and nothing");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_RACE, "\"Physics\" and \"Steer\" conflict on Pos (\"Physics\" writes, "
              "\"Steer\" reads), Vel (both write) and nothing orders them");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_RACE, "\"Spawner\" is exclusive (it runs alone in its stage) and "
              "\"Counter\" shares that stage and nothing orders them");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_RACE, "\"Cleanup\" is exclusive (it runs alone in its stage) and "
              "\"Gold\" shares that stage; they also conflict on Pos (both write) and nothing");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_RACE, "\"SaveA\" and \"SaveB\" are both exclusive");
    for (int i = 0; i < r.count; i++)
        CHECKF(strstr(r.problems[i].message, "add .after = {\"") != NULL, "no fix in: %s", r.problems[i].message);
    dg_clean(&r);
    ecs_world_free(w);
}

/* Cycles (declared, inferred through an exclusive system, a system after
   itself, across stages), unknown and duplicate names, a self race. */
TEST(diag_cycle_and_name_messages) {
    ecs_world *w = dg_world(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    ecs_id pos = ecs_component(w, "Pos", 8, 0), score = ecs_resource(w, "Score", 4, 0, NULL);
    ecs_stage late = ecs_stage_add(w, "late");
    REQUIRE(pos && score && late);
    ecs_system_add(w, &(ecs_system_desc){.name = "Ping", .fn = dg_nop, .after = {"Pong"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Pong", .fn = dg_nop, .after = {"Ping"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Narcissus", .fn = dg_nop, .after = {"Narcissus"}});
    /* writer-first: the exclusive Rebuild counts as writing everything Tick reads (Rebuild ->
       Tick), Tick writes Pos, which Draw reads (Tick -> Draw), and Draw declares before Rebuild */
    ecs_system_add(w, &(ecs_system_desc){.name = "Rebuild", .fn = dg_nop, .flags = ECS_SYSTEM_EXCLUSIVE});
    ecs_system_add(w, &(ecs_system_desc){.name = "Tick", .fn = dg_nop, .terms = {{pos, ECS_WRITE, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Draw", .fn = dg_nop, .terms = {{pos, ECS_READ, ECS_AND}},
        .before = {"Rebuild"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Late", .fn = dg_nop, .stage = late, .before = {"Early"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Early", .fn = dg_nop});
    ecs_system_add(w, &(ecs_system_desc){.name = "Lost", .fn = dg_nop, .stage = late, .after = {"Nobody"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Twin", .fn = dg_nop, .stage = late});
    ecs_system_add(w, &(ecs_system_desc){.name = "Twin", .fn = dg_nop, .stage = late});
    ecs_system_add(w, &(ecs_system_desc){.name = "Tally", .fn = dg_nop, .stage = late, .chunk_size = 64,
        .terms = {{pos, ECS_READ, ECS_AND}}, .writes = {score}});
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_CYCLE, "\"Ping\"", "\"Pong\"", "lists \"Ping\" in after");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_CYCLE, "\"Narcissus\" must run after itself", "lists \"Narcissus\" in after");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_CYCLE, "\"Rebuild\" is exclusive, so it counts as writing "
              "everything \"Tick\" reads", "\"Tick\" writes Pos, which \"Draw\" reads", "lists \"Rebuild\" in before");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_CYCLE, "\"Late\"", "\"Early\"", "stage \"default\" runs before stage \"late\"");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_UNKNOWN_SYSTEM, "\"Lost\" lists \"Nobody\" in after");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_DUPLICATE_NAME, "both called \"Twin\"");
    DG_EXPECT(r.problems, r.count, ECS_PROBLEM_SELF_RACE, "\"Tally\" is chunked (chunk_size 64)", "writes Score");
    CHECK_EQ_INT(r.count, 7);
    dg_clean(&r);
    ecs_world_free(w);
}

/* A note names a reader, a writer and the data; never an EXCLUSIVE system,
   which accesses everything (the note's rule, "the reader writes nothing
   the writer accesses", excludes it). */
TEST(diag_note_messages) {
    ecs_world *w = dg_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id gold = ecs_component(w, "Gold", 4, 0), hp = ecs_component(w, "Hp", 4, 0);
    ecs_system_add(w, &(ecs_system_desc){.name = "Hud", .fn = dg_nop, .terms = {{gold, ECS_READ, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Income", .fn = dg_nop, .terms = {{gold, ECS_WRITE, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "HealthBar", .fn = dg_nop, .terms = {{hp, ECS_READ, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "EventCleanup", .fn = dg_nop, .flags = ECS_SYSTEM_EXCLUSIVE});
    ecs_system_add(w, &(ecs_system_desc){.name = "Regen", .fn = dg_nop, .terms = {{hp, ECS_WRITE, ECS_AND}}});
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_OK);
    DG_EXPECT(r.notes, r.note_count, ECS_NOTE_READ_BEFORE_WRITE, "\"Hud\" runs before \"Income\" only by inferred "
              "order and reads Gold, which \"Income\" writes, so \"Hud\" sees last frame's Gold; if it should see "
              "this frame's, add .after = {\"Income\"} to \"Hud\"");
    for (int i = 0; i < r.note_count; i++) {
        CHECKF(!strstr(r.notes[i].message, "EventCleanup"), "a note names an exclusive system: %s", r.notes[i].message);
        CHECK(r.notes[i].id != 0 && r.notes[i].a != 4 && r.notes[i].b != 4);
    }
    CHECK_EQ_INT(r.note_count, 2);   /* Hud before Income, HealthBar before Regen (across the exclusive one) */
    dg_clean(&r);
    ecs_world_free(w);
}

/* ---- ecs_world_hash never hashes a pointer silently ---------------------- */
typedef struct dg_name { char *s; } dg_name;
static void dg_name_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) free(((dg_name *)p)[i].s);
}
static void dg_name_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        dg_name *d = (dg_name *)dst + i;
        const char *s = ((const dg_name *)src)[i].s;
        free(d->s);
        d->s = NULL;
        if (s) { d->s = (char *)malloc(strlen(s) + 1); strcpy(d->s, s); }
    }
}
static size_t dg_name_save(const void *v, void *out, size_t cap, void *ctx) {
    (void)ctx;
    const char *s = ((const dg_name *)v)->s;
    size_t n = s ? strlen(s) : 0;
    if (n <= cap && n) memcpy(out, s, n);
    return n;
}
static bool dg_name_load(void *v, const void *data, size_t size, void *ctx) {
    (void)v; (void)data; (void)size; (void)ctx;
    return true;
}
static ecs_world *dg_named_world(bool serialize, bool resource, const char *text) {
    ecs_world *w = dg_world(ECS_ORDER_INSERTION);
    if (!w) return NULL;
    ecs_component_desc d = {.name = "Name", .size = sizeof(dg_name), .align = _Alignof(dg_name),
                            .dtor = dg_name_dtor, .copy = dg_name_copy};
    if (serialize) { d.serialize = dg_name_save; d.deserialize = dg_name_load; }
    dg_name v = {(char *)(uintptr_t)text};
    if (resource) {
        ecs_resource_init(w, &d, &v);
    } else {
        ecs_id id = ecs_component_init(w, &d);
        ecs_set(w, ecs_create(w), id, &v);
    }
    return w;
}
static void dg_hash_system(ecs_iter *it) { *(uint64_t *)it->ctx = ecs_world_hash(it->world); }
TEST(diag_world_hash_refuses_pointers) {
    for (int resource = 0; resource < 2; resource++) {
        ecs_world *w = dg_named_world(false, resource, "Archer");
        REQUIRE(w);
        CHECK_EQ_INT(ecs_world_hash(w), 0);
        CHECKF(strstr(ecs_last_error(w), "\"Name\"") && strstr(ecs_last_error(w), "serialize"), "%s", ecs_last_error(w));
        ecs_world_free(w);
        /* with serialize: what the value says, so two worlds that hold it alike agree */
        ecs_world *a = dg_named_world(true, resource, "Archer"), *b = dg_named_world(true, resource, "Archer"),
                  *c = dg_named_world(true, resource, "Knight");
        REQUIRE(a && b && c);
        uint64_t ha = ecs_world_hash(a);
        CHECK(ha != 0 && ha == ecs_world_hash(b) && ha != ecs_world_hash(c));
        ecs_world_free(a);
        ecs_world_free(b);
        ecs_world_free(c);
    }
    /* a hooked component without live values does not matter */
    ecs_world *w = dg_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id id = ecs_component_init(w, &(ecs_component_desc){.name = "Name", .size = sizeof(dg_name),
        .align = _Alignof(dg_name), .dtor = dg_name_dtor, .copy = dg_name_copy});
    ecs_entity e = ecs_create(w);
    CHECK(ecs_world_hash(w) != 0);
    CHECK_EQ_INT(ecs_set(w, e, id, &(dg_name){NULL}), ECS_OK);
    CHECK_EQ_INT(ecs_world_hash(w), 0);
    CHECK_EQ_INT(ecs_remove(w, e, id), ECS_OK);
    CHECK(ecs_world_hash(w) != 0);
    /* inside an ordinary system it would read what others write: refused; an exclusive one may */
    uint64_t inside = 1, alone = 0;
    ecs_system_add(w, &(ecs_system_desc){.name = "Hasher", .fn = dg_hash_system, .ctx = &inside});
    ecs_system_add(w, &(ecs_system_desc){.name = "Alone", .fn = dg_hash_system, .ctx = &alone,
        .flags = ECS_SYSTEM_EXCLUSIVE});
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK_EQ_INT(inside, 0);
    CHECK(alone != 0 && alone == ecs_world_hash(w));
    ecs_world_free(w);
}

/* ---- getters --------------------------------------------------------------- */
typedef struct dg_chunks { ecs_system self; _Atomic int seen[64], other; } dg_chunks;
static void dg_chunked(ecs_iter *it) {
    dg_chunks *c = (dg_chunks *)it->ctx;
    int n = ecs_system_chunks(it->world, it->system);
    if (it->chunk < 64) c->seen[it->chunk] = n;
    if (ecs_system_chunks(it->world, c->self) == 0) c->other++;   /* another system's: refused */
}
TEST(sched_system_getters) {
    static const int threads[4] = {1, 2, 3, 8};
    for (int t = 0; t < 4; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        ecs_id pos = ecs_component(w, "Pos", 8, 0);
        dg_chunks c;
        memset(&c, 0, sizeof c);
        ecs_system plain = ecs_system_add(w, &(ecs_system_desc){.name = "Plain", .fn = dg_nop,
            .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {{pos, ECS_READ, ECS_AND}}});
        ecs_system ch = ecs_system_add(w, &(ecs_system_desc){.name = "Chunked", .fn = dg_chunked, .ctx = &c,
            .chunk_size = 10, .terms = {{pos, ECS_WRITE, ECS_AND}}});
        c.self = plain;
        REQUIRE(plain && ch);
        CHECK_EQ_INT(ecs_system_flags(w, plain), ECS_SYSTEM_MAIN_THREAD);
        CHECK_EQ_INT(ecs_system_flags(w, ch), 0);
        CHECK_EQ_INT(ecs_system_flags(w, 99), 0);
        CHECK_EQ_INT(ecs_system_chunk_size(w, plain), 0);
        CHECK_EQ_INT(ecs_system_chunk_size(w, ch), 10);
        CHECK_EQ_INT(ecs_system_chunks(w, ch), 0);   /* not run yet */
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(ecs_system_chunks(w, ch), 0);   /* nothing matched: it did not run */
        CHECK_EQ_INT(ecs_system_chunks(w, plain), 0);
        CHECK_EQ_INT(ecs_create_many(w, 95, &pos, 1, NULL), ECS_OK);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(ecs_system_chunks(w, ch), 10);
        CHECK_EQ_INT(ecs_system_chunks(w, plain), 1);
        for (int k = 0; k < 10; k++) CHECK_EQ_INT(c.seen[k], 10);
        CHECK_EQ_INT(c.other, 10);
        CHECK_EQ_INT(ecs_create_many(w, 200, &pos, 1, NULL), ECS_OK);
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(ecs_system_chunks(w, ch), 30);
        for (int k = 0; k < 30; k++) CHECK_EQ_INT(c.seen[k], 30);
        CHECK_EQ_INT(ecs_system_chunks(w, 0), 0);
        CHECK_EQ_INT(ecs_system_chunks(NULL, ch), 0);
        ecs_world_free(w);
    }
}

#if ECS_CHECK_ACCESS
/* The refusal for a system that runs beside a disjoint query names that system. */
typedef struct dg_dis { ecs_id pos; ecs_entity frozen; } dg_dis;
static void dg_touch_frozen(ecs_iter *it) {
    dg_dis *c = (dg_dis *)it->ctx;
    CHECK(ecs_get_mut(it->world, c->frozen, c->pos) == NULL);
}
TEST(diag_disjoint_refusal_names_partner) {
    ecs_world *w = dg_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    dg_dis c = {ecs_component(w, "Position", 8, 0), 0};
    ecs_id frozen = ecs_component(w, "Frozen", 0, 0);
    ecs_entity live = ecs_create(w);
    c.frozen = ecs_create(w);
    ecs_set(w, live, c.pos, &(double){1});
    ecs_set(w, c.frozen, c.pos, &(double){2});
    ecs_add(w, c.frozen, frozen);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MoveLive", .fn = dg_touch_frozen, .ctx = &c,
        .terms = {{c.pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_NOT}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "ThawFrozen", .fn = dg_nop,
        .terms = {{c.pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);
    CHECKF(strstr(ecs_last_error(w), "\"MoveLive\"") && strstr(ecs_last_error(w), "runs beside \"ThawFrozen\""),
           "%s", ecs_last_error(w));
    ecs_world_free(w);
}
#endif

/* ---- sync points in the frame stats and the simulation --------------------- */
/* Two systems of fixed work that each record many commands: a frame whose
   sync point is a large part of it. */
typedef struct dg_heavy { ecs_id hp; double work_us; int sets; } dg_heavy;
static void dg_heavy_fn(ecs_iter *it) {
    const dg_heavy *c = (const dg_heavy *)it->ctx;
    test_spin_us(c->work_us);
    for (int k = 0; k < c->sets; k++)
        for (int i = 0; i < it->count; i++) ecs_cmd_set(it->commands, it->entities[i], c->hp, &(int){k});
}
static ecs_world *dg_heavy_world(int threads, dg_heavy *c) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!w) return NULL;
    ecs_id a = ecs_component(w, "A", 4, 0), b = ecs_component(w, "B", 4, 0);
    c->hp = ecs_component(w, "Hp", 4, 0);
    ecs_create_many(w, 200, &a, 1, NULL);
    ecs_create_many(w, 200, &b, 1, NULL);
    ecs_system_add(w, &(ecs_system_desc){.name = "HeavyA", .fn = dg_heavy_fn, .ctx = c, .terms = {{a, ECS_READ, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "HeavyB", .fn = dg_heavy_fn, .ctx = c, .terms = {{b, ECS_READ, ECS_AND}}});
    ecs_timing_interval(w, 1);
    return w;
}
static int dg_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
/* One thread: parallelism is 1.0 within timing noise (sync points count as
   work); the sync time is reported and is most of this frame. */
TEST(sched_sync_counted_as_work) {
    dg_heavy c = {0, test_spin_len(300), (int)test_scaled(10, 2)};
    ecs_world *w = dg_heavy_world(1, &c);
    REQUIRE(w);
    enum { FRAMES = 9 };
    double par[FRAMES];
    ecs_frame_stats fs;
    for (int f = 0; f < FRAMES; f++) {
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
        CHECK(fs.sync_us > 0 && fs.sync_work_us >= fs.sync_us * 0.999 && fs.sync_us < fs.wall_us);
        par[f] = fs.parallelism;
    }
    qsort(par, FRAMES, sizeof *par, dg_cmp);
    CHECKF(par[FRAMES / 2] > 0.9 && par[FRAMES / 2] < 1.1, "median parallelism on one thread %.3f", par[FRAMES / 2]);
    ecs_world_free(w);
}

/* The simulation of the measured frame is the frame ecs_progress runs:
   each system's measured average, the stage's measured sync time added
   (serial, on thread 0), on one thread the sum, on two the longer of two
   independent systems. (How close that comes to the frame's wall time is a
   bench row: timing a shared machine is no unit test.) */
TEST(sched_simulate_includes_sync) {
    for (int threads = 1; threads <= 2; threads++) {
        dg_heavy c = {0, 100, (int)test_scaled(10, 3)};   /* 200 us of work: above ECS_PARALLEL_MIN_NS */
        ecs_world *w = dg_heavy_world(threads, &c);
        REQUIRE(w);
        ecs_sim_result sim;
        CHECK_EQ_INT(ecs_schedule_simulate(w, threads, NULL, &sim), ECS_OK);
        CHECK(sim.sync == 0);   /* nothing measured yet */
        double lo = 1e30, hi = 0;
        for (int f = 0; f < 12; f++) {
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
            ecs_frame_stats fs;
            CHECK_EQ_INT(ecs_frame_stats_get(w, &fs), ECS_OK);
            if (fs.sync_us < lo) lo = fs.sync_us;
            if (fs.sync_us > hi) hi = fs.sync_us;
        }
        ecs_system_stats a, b;
        CHECK_EQ_INT(ecs_system_stats_get(w, 1, &a), ECS_OK);
        CHECK_EQ_INT(ecs_system_stats_get(w, 2, &b), ECS_OK);
        CHECK_EQ_INT(ecs_schedule_simulate(w, threads, NULL, &sim), ECS_OK);
        CHECKF(sim.sync >= lo * 0.999 && sim.sync <= hi * 1.001, "sync %.1f, frames %.1f..%.1f", sim.sync, lo, hi);
        double work = threads == 1 ? a.avg_us + b.avg_us : (a.avg_us > b.avg_us ? a.avg_us : b.avg_us);
        CHECKF(fabs(sim.makespan - (work + sim.sync)) < 1e-6 * sim.makespan, "%d threads: makespan %.3f, "
               "systems %.3f + sync %.3f", threads, sim.makespan, work, sim.sync);
        CHECKF(fabs(sim.total_work - (a.avg_us + b.avg_us + sim.sync)) < 1e-6 * sim.total_work, "total %.3f",
               sim.total_work);
        double given[2] = {5, 7};   /* durations given: the caller's units, no sync time */
        CHECK_EQ_INT(ecs_schedule_simulate(w, threads, given, &sim), ECS_OK);
        CHECK(sim.sync == 0 && sim.makespan == (threads == 1 ? 12 : 7));
        ecs_world_free(w);
    }
}

void suite_diag(void) {
    RUN(diag_race_messages);
    RUN(diag_cycle_and_name_messages);
    RUN(diag_note_messages);
    RUN(diag_world_hash_refuses_pointers);
    RUN(sched_system_getters);
#if ECS_CHECK_ACCESS
    RUN(diag_disjoint_refusal_names_partner);
#endif
    RUN(sched_sync_counted_as_work);
    RUN(sched_simulate_includes_sync);
}
