/* sync point tests: a command buffer applies with exactly the result of
   its commands applied one by one, however the apply is organised (spawn
   runs place a new entity at once). The twin of a world makes the same
   calls immediately, which are the steps of a one-by-one apply; both worlds
   must then write the same save file, byte for byte (slots, tables in
   creation order, rows, values, change stamps), and have the same hash. */
#include "test.h"
#include <stdint.h>

typedef struct sy_vec { float x, y; } sy_vec;
typedef struct sy_ref { ecs_entity target; uint32_t n, pad; } sy_ref;   /* an entity field (no padding:
                                                                          the files compare bytes) */
typedef struct sy_ids { ecs_id pos, vel, hp, ref, tag_a, tag_b, hooked; } sy_ids;

static void sy_count_add(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx) {
    (void)w; (void)id; (void)value;
    unsigned long long *h = (unsigned long long *)ctx;
    *h = (*h ^ e) * 0x100000001B3ull;   /* the calls and their order */
}

/* The 7 ids, in this order in every world of these tests. */
static void sy_register(ecs_world *w, sy_ids *k, unsigned long long *hook_log) {
    k->pos = ecs_component(w, "Pos", sizeof(sy_vec), 4);
    k->vel = ecs_component(w, "Vel", sizeof(sy_vec), 4);
    k->hp = ecs_component(w, "Hp", sizeof(int), 4);
    k->ref = ecs_component_init(w, &(ecs_component_desc){.name = "Ref", .size = sizeof(sy_ref), .align = 8,
        .entity_fields = {offsetof(sy_ref, target)}, .entity_field_count = 1});
    k->tag_a = ecs_component(w, "TagA", 0, 0);
    k->tag_b = ecs_component(w, "TagB", 0, 0);
    k->hooked = ecs_component_init(w, &(ecs_component_desc){.name = "Hooked", .size = sizeof(int), .align = 4,
        .on_add = sy_count_add, .ctx = hook_log});
}

static ecs_world *sy_world(sy_ids *k, unsigned long long *hook_log) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    if (w) sy_register(w, k, hook_log);
    return w;
}

/* The save file of w, in memory (caller frees); NULL on failure. */
static unsigned char *sy_bytes(ecs_world *w, long *size) {
    ecs_snapshot *s = ecs_snapshot_take(w);
    FILE *f = tmpfile();
    unsigned char *out = NULL;
    if (s && f && ecs_snapshot_write(s, f) == ECS_OK) {
        *size = ftell(f);
        rewind(f);
        out = (unsigned char *)malloc((size_t)*size + 1);
        if (out && fread(out, 1, (size_t)*size, f) != (size_t)*size) { free(out); out = NULL; }
    }
    if (f) fclose(f);
    ecs_snapshot_free(s);
    return out;
}

/* One random program: rounds of commands recorded into a buffer of world a
   (creates followed by sets and adds, also of ids twice, of a hooked id,
   with entity fields naming pending and live handles; destroys, removes
   and plain sets of older entities between) and applied, while world b
   makes each call immediately in the same order. */
static void sy_program(unsigned long long seed, int rounds, int per_round, bool stamps) {
    sy_ids ka, kb;
    unsigned long long log_a = 0, log_b = 0;
    ecs_world *a = sy_world(&ka, &log_a), *b = sy_world(&kb, &log_b);
    REQUIRE(a && b);
    ecs_query *qa = ecs_query_new(a, &(ecs_query_desc){.terms = {ECS_TERM_R(ka.pos)}});
    ecs_query *qb = ecs_query_new(b, &(ecs_query_desc){.terms = {ECS_TERM_R(kb.pos)}});
    REQUIRE(qa && qb);
    if (stamps) CHECK(ecs_query_changed(a, qa) && ecs_query_changed(b, qb));   /* stamps on */
    const ecs_id *ida = &ka.pos, *idb = &kb.pos;   /* the 7 ids, in the same order in both */
    ecs_commands *c = ecs_commands_new(a);
    REQUIRE(c);
    enum { CAP = 1 << 14 };
    ecs_entity *live_a = (ecs_entity *)calloc(CAP, sizeof *live_a), *live_b = (ecs_entity *)calloc(CAP, sizeof *live_b);
    ecs_entity *pend = (ecs_entity *)calloc(CAP, sizeof *pend), *made_b = (ecs_entity *)calloc(CAP, sizeof *made_b);
    REQUIRE(live_a && live_b && pend && made_b);
    int live = 0;
    unsigned long long s = seed;
    for (int round = 0; round < rounds; round++) {
        int np = 0;
        for (int i = 0; i < per_round && np < CAP; i++) {
            unsigned long long r = test_rand(&s);
            if (r % 10 == 0 && live) {   /* an older entity: destroy, remove, or set */
                int at = (int)(test_rand(&s) % (unsigned)live), op = (int)(r / 10 % 3);
                int id = (int)(test_rand(&s) % 7);
                if (op == 0) {
                    CHECK(!ecs_cmd_destroy(c, live_a[at]) && !ecs_destroy(b, live_b[at]));
                    live_a[at] = live_a[--live];
                    live_b[at] = live_b[live];
                } else if (op == 1) {
                    CHECK(!ecs_cmd_remove(c, live_a[at], ida[id]) && !ecs_remove(b, live_b[at], idb[id]));
                } else {
                    int v = (int)r;
                    CHECK(!ecs_cmd_set(c, live_a[at], ka.hp, &v) && !ecs_set(b, live_b[at], kb.hp, &v));
                }
                continue;
            }
            ecs_entity pa = ecs_cmd_create(c), eb = ecs_create(b);
            REQUIRE(pa && eb);
            pend[np] = pa;
            made_b[np++] = eb;
            int ops = (int)(test_rand(&s) % 6);
            for (int o = 0; o < ops; o++) {
                unsigned long long q = test_rand(&s);
                int id = (int)(q % 7);
                bool set = (q >> 8) % 4 != 0;
                if (id == 4 || id == 5) set = false;   /* tags */
                if (!set) {
                    CHECK(!ecs_cmd_add(c, pa, ida[id]) && !ecs_add(b, eb, idb[id]));
                } else if (id == 3) {   /* a Ref to itself, to an earlier or later pending, or a live one */
                    sy_ref va = {0, (uint32_t)q, 0}, vb = {0, (uint32_t)q, 0};
                    int pick = (int)((q >> 16) % 4);
                    if (pick == 0) { va.target = pa; vb.target = eb; }
                    else if (pick == 1 && np > 1) { int j = (int)((q >> 20) % (unsigned)np); va.target = pend[j]; vb.target = made_b[j]; }
                    else if (pick == 2 && live) { int j = (int)((q >> 20) % (unsigned)live); va.target = live_a[j]; vb.target = live_b[j]; }
                    CHECK(!ecs_cmd_set(c, pa, ka.ref, &va) && !ecs_set(b, eb, kb.ref, &vb));
                } else if (id == 2 || id == 6) {
                    int v = (int)(q >> 24);
                    CHECK(!ecs_cmd_set(c, pa, ida[id], &v) && !ecs_set(b, eb, idb[id], &v));
                } else {
                    sy_vec v = {(float)(q & 255), (float)(q >> 56)};
                    CHECK(!ecs_cmd_set(c, pa, ida[id], &v) && !ecs_set(b, eb, idb[id], &v));
                }
            }
        }
        REQUIRE(ecs_commands_apply(a, c) == ECS_OK);
        /* the made entities join the older ones: a's apply must have given b's handles (the same
           slots and generations; a difference also shows in the files below) */
        for (int i = 0; i < np && live < CAP; i++) {
            CHECKF(ecs_is_alive(a, made_b[i]), "round %d: entity %d of the twin is not alive in the applied world",
                   round, i);
            live_b[live] = made_b[i];
            live_a[live++] = made_b[i];
        }
        if (stamps && round % 2) {   /* the clock moves on, and one query takes what changed */
            int na = 0, nb = 0;
            for (ecs_iter it = ecs_query_iter(a, qa); ecs_query_next(&it);) na += it.count;
            for (ecs_iter it = ecs_query_iter(b, qb); ecs_query_next(&it);) nb += it.count;
            CHECK_EQ_INT(na, nb);
        }
    }
    CHECK(log_a == log_b);
    CHECK(ecs_world_hash(a) == ecs_world_hash(b));
    long sa = 0, sb = 0;
    unsigned char *fa = sy_bytes(a, &sa), *fb = sy_bytes(b, &sb);
    CHECK(fa && fb);
    if (fa && fb) {
        long at = 0;
        while (at < sa && at < sb && fa[at] == fb[at]) at++;
        CHECKF(sa == sb && at == sa, "seed %llu: save files differ (%ld and %ld bytes, first at %ld)", seed, sa, sb, at);
    }
    free(fa); free(fb);
    free(live_a); free(live_b); free(pend); free(made_b);
    ecs_world_free(a);
    ecs_world_free(b);
}

TEST(sync_apply_equals_one_by_one) {
    long scale = test_g.scale_pct > 0 ? test_g.scale_pct : 100;
    int per_round = (int)(1500 * scale / 100) + 50;
    for (int k = 0; k < 3; k++) {
        sy_program(test_g.seed + 101 * (unsigned long long)k, 6, per_round, false);
        sy_program(test_g.seed + 7 + 101 * (unsigned long long)k, 6, per_round, true);
    }
}

/* Each step of a new entity's way counts as a change of that step's table,
   also where nothing stays: a query of such a table alone sees it, in the
   applied world as in its twin. */
TEST(sync_spawn_steps_leave_their_stamps) {
    sy_ids k[2];
    unsigned long long logs[2] = {0, 0};
    ecs_world *w[2] = {sy_world(&k[0], &logs[0]), sy_world(&k[1], &logs[1])};
    REQUIRE(w[0] && w[1]);
    ecs_query *q[2];
    for (int i = 0; i < 2; i++) {   /* {Vel} alone: a step on the way to {Pos, Vel}, nothing stays */
        q[i] = ecs_query_new(w[i], &(ecs_query_desc){.terms = {ECS_TERM_R(k[i].vel), ECS_TERM_NOT(k[i].pos)}});
        REQUIRE(q[i]);
        CHECK(ecs_query_changed(w[i], q[i]));   /* stamps on */
        for (ecs_iter it = ecs_query_iter(w[i], q[i]); ecs_query_next(&it);) {}
        CHECK(!ecs_query_changed(w[i], q[i]));
    }
    ecs_commands *c = ecs_commands_new(w[0]);
    REQUIRE(c);
    for (int n = 0; n < 3; n++) {
        sy_vec v = {(float)n, 1};
        ecs_entity p = ecs_cmd_create(c), e = ecs_create(w[1]);
        CHECK(!ecs_cmd_set(c, p, k[0].vel, &v) && !ecs_cmd_set(c, p, k[0].pos, &v));
        CHECK(!ecs_set(w[1], e, k[1].vel, &v) && !ecs_set(w[1], e, k[1].pos, &v));
    }
    REQUIRE(!ecs_commands_apply(w[0], c));
    CHECK_EQ_INT(ecs_count(w[0]), 3);
    CHECK(ecs_query_changed(w[1], q[1]));
    CHECK(ecs_query_changed(w[0], q[0]));
    for (int i = 0; i < 2; i++) ecs_world_free(w[i]);
}

/* A table on the way locked by a loop: the apply stops where one by one
   stops (the entity made, its first set applied), and resumes to the same
   world. */
TEST(sync_spawn_locked_step) {
    sy_ids k;
    unsigned long long log = 0;
    ecs_world *w = sy_world(&k, &log);
    REQUIRE(w);
    ecs_entity old = ecs_create(w);
    sy_vec v = {1, 2};
    REQUIRE(!ecs_set(w, old, k.vel, &v));   /* {Vel}, which the loop below holds */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.vel), ECS_TERM_NOT(k.pos)}});
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(q && c);
    ecs_entity p = ecs_cmd_create(c);
    REQUIRE(p && !ecs_cmd_set(c, p, k.vel, &v) && !ecs_cmd_set(c, p, k.pos, &v));
    ecs_iter it = ecs_query_iter(w, q);
    REQUIRE(ecs_query_next(&it));
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_ERR_BUSY);
    CHECK_EQ_INT(ecs_count(w), 2);   /* made, in the empty table: its set of Vel waits */
    ecs_iter_fini(&it);
    REQUIRE(!ecs_commands_apply(w, c));
    CHECK_EQ_INT(ecs_count(w), 2);
    int both = 0;
    ecs_query *pv = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos), ECS_TERM_R(k.vel)}});
    REQUIRE(pv);
    for (ecs_iter i2 = ecs_query_iter(w, pv); ecs_query_next(&i2);) both += i2.count;
    CHECK_EQ_INT(both, 1);
    ecs_world_free(w);
}

/* ---- a sync point's spawn runs split over the threads ---- */
/* Frames whose systems record many commands: chunked spawners (creates with
   sets and adds, Refs to their own and earlier pending handles, now and then
   a command that ends the runs: a remove, a destroy, a parent, a create
   with a hooked id, a bare create), one buffer longer than a piece, a reaper
   destroying older entities (free slots for the next frame's creates), and
   an EXCLUSIVE system whose sync point comes mid-stage. At 2, 3, 8 and 16
   threads the sync points split (the trace shows their work per thread);
   each frame's save file, hash, hook calls and dropped count must be those
   of 1 thread, where they apply one by one. */
typedef struct sp_ctx {
    sy_ids k;
    ecs_id beep;           /* an event type: buffers with events and no commands sit between */
    unsigned long long seed;
    int frame, big;
    bool quiet;            /* the systems record nothing (a frame that only applies leftovers) */
    int *armed;            /* set by the stage's last system: its sync point is next */
    uint64_t excl_seen;
} sp_ctx;

static unsigned long long sp_mix(unsigned long long x) {
    x ^= x >> 31; x *= 0x9E3779B97F4A7C15ull; x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 32);
}

/* The commands of a spawner row (r: its random bits; prev: the batch's last
   create). */
static void sp_record(ecs_commands *c, const sy_ids *k, unsigned long long r, ecs_entity *prev, int frame) {
    ecs_entity e = ecs_cmd_create(c);
    if (!e) return;
    switch (r % (frame % 3 ? 4999 : 97)) {   /* runs cut now and then, or often */
    case 0: return;                                                   /* a bare create */
    case 1: (void)ecs_cmd_set(c, e, k->hooked, &(int){1}); break;     /* a hook fires */
    case 2: if (*prev) (void)ecs_cmd_remove(c, *prev, k->vel); break; /* (after its run) */
    case 3: if (*prev) (void)ecs_cmd_set_parent(c, e, *prev); break;
    case 4: if (*prev) (void)ecs_cmd_destroy(c, *prev); break;
    default: break;
    }
    sy_vec pos = {(float)(r & 1023), (float)(r >> 10 & 1023)}, vel = {1, (float)(r >> 20 & 7)};
    (void)ecs_cmd_set(c, e, k->pos, &pos);
    if (r >> 23 & 1) (void)ecs_cmd_add(c, e, k->tag_a);
    (void)ecs_cmd_set(c, e, k->vel, &vel);
    if (r >> 24 & 1) {
        sy_ref ref = {(r >> 25 & 1) || !*prev ? e : *prev, (uint32_t)r, 0};
        (void)ecs_cmd_set(c, e, k->ref, &ref);
    }
    if (r % 13 == 0) (void)ecs_cmd_add(c, e, k->tag_b);
    *prev = e;
}

static void sp_spawn(ecs_iter *it) {
    const sp_ctx *x = (const sp_ctx *)it->ctx;
    if (x->quiet) return;
    const int *hp = ECS_FIELD(it, int, 0);
    ecs_entity prev = 0;
    for (int i = 0; i < it->count; i++)
        for (int n = 0; n < 1 + (hp[i] & 1); n++)
            sp_record(it->commands, &x->k, sp_mix(x->seed ^ (uint64_t)hp[i] << 20 ^ (uint64_t)x->frame << 44 ^ (uint64_t)n), &prev, x->frame);
}

static void sp_big(ecs_iter *it) {   /* one buffer of several pieces */
    const sp_ctx *x = (const sp_ctx *)it->ctx;
    if (x->quiet) return;
    ecs_entity prev = 0;
    for (int i = 0; i < x->big; i++) sp_record(it->commands, &x->k, sp_mix(x->seed * 31 + (uint64_t)i + ((uint64_t)x->frame << 40)) | 64, &prev, x->frame);
}

static void sp_reap(ecs_iter *it) {
    const sp_ctx *x = (const sp_ctx *)it->ctx;
    if (x->quiet) return;
    for (int i = 0; i < it->count; i++)
        if (sp_mix(it->entities[i] ^ (uint64_t)x->frame << 48 ^ x->seed) % 3 == 0) (void)ecs_cmd_destroy(it->commands, it->entities[i]);
}

static void sp_beep(ecs_iter *it) {   /* events only */
    const sp_ctx *x = (const sp_ctx *)it->ctx;
    if (x->quiet || (it->entities[0] + (uint64_t)x->frame) % 3 == 0) return;
    uint64_t v = it->entities[0] * 31 + (uint64_t)x->frame;
    (void)ecs_emit(it, x->beep, &v);
}

static void sp_listen(ecs_iter *it) {   /* what it hears, in order, into excl_seen */
    sp_ctx *x = (sp_ctx *)it->ctx;
    int n = 0;
    const uint64_t *v = ECS_EVENTS(it, uint64_t, x->beep, &n);
    for (int i = 0; i < n; i++) x->excl_seen = x->excl_seen * 1099511628211ull ^ v[i];
}

static void sp_excl(ecs_iter *it) {   /* sees what the sync point before it applied */
    sp_ctx *x = (sp_ctx *)it->ctx;
    x->excl_seen = x->excl_seen * 31 + ecs_world_hash(it->world);
}

static void sp_arm(ecs_iter *it) {
    const sp_ctx *x = (const sp_ctx *)it->ctx;
    if (x->armed) *x->armed = 1;
}

/* late: a second stage with an EXCLUSIVE system; else the first stage ends
   with a MAIN_THREAD system that arms x->armed. */
static ecs_world *sp_world(sp_ctx *x, int threads, unsigned long long *log, int spawners, bool late_stage,
                           void *(*alloc)(void *, size_t, void *)) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads, .realloc_fn = alloc, .alloc_user = x});
    if (!w) return NULL;
    sy_ids *k = &x->k;
    sy_register(w, k, log);
    for (int i = 0; i < spawners; i++) (void)ecs_set(w, ecs_create(w), k->hp, &i);
    for (int i = 0; i < 1500; i++) {   /* rows in tables that are steps of the spawns' ways (their stamps) */
        ecs_entity e = ecs_create(w);
        (void)ecs_set(w, e, k->pos, &(sy_vec){(float)i, 0});
        if (i % 2) (void)ecs_add(w, e, k->tag_a);
    }
    ecs_system_add(w, &(ecs_system_desc){.name = "Spawn", .fn = sp_spawn, .ctx = x, .chunk_size = 97,
                                         .terms = {ECS_TERM_R(k->hp)}});
    x->beep = ecs_event(w, "Beep", sizeof(uint64_t), 8);
    ecs_system_add(w, &(ecs_system_desc){.name = "Beeper", .fn = sp_beep, .ctx = x, .chunk_size = 300,
                                         .terms = {ECS_TERM_R(k->hp)}, .emits = {x->beep}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Big", .fn = sp_big, .ctx = x});
    ecs_system_add(w, &(ecs_system_desc){.name = "Reap", .fn = sp_reap, .ctx = x, .chunk_size = 500,
                                         .terms = {ECS_TERM_R(k->vel)}});
    if (!late_stage) {
        ecs_system_add(w, &(ecs_system_desc){.name = "Arm", .fn = sp_arm, .ctx = x, .flags = ECS_SYSTEM_MAIN_THREAD,
                                             .after = {"Spawn", "Big", "Reap"}});
        return w;
    }
    ecs_query *marks = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k->pos)}});
    if (marks) (void)ecs_query_changed(w, marks);   /* change stamps on: the save files compare them */
    ecs_stage late = ecs_stage_add(w, "late");
    ecs_system_add(w, &(ecs_system_desc){.name = "Spawn2", .fn = sp_spawn, .ctx = x, .chunk_size = 61,
                                         .terms = {ECS_TERM_R(k->hp)}, .stage = late});
    ecs_system_add(w, &(ecs_system_desc){.name = "Excl", .fn = sp_excl, .ctx = x, .stage = late,
                                         .flags = ECS_SYSTEM_EXCLUSIVE, .after = {"Spawn2"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Listen", .fn = sp_listen, .ctx = x, .stage = late,
                                         .reads = {x->beep}, .flags = ECS_SYSTEM_MAIN_THREAD});
    return w;
}

static bool sp_traced_split(ecs_world *w) {
    FILE *f = tmpfile();
    if (!f) return false;
    bool found = false;
    if (ecs_write_trace(w, f) == ECS_OK) {
        rewind(f);
        char line[4096];
        while (!found && fgets(line, sizeof line, f)) found = strstr(line, "\"sync point work\"") != NULL;
    }
    fclose(f);
    return found;
}

TEST(sched_sync_split_equals_serial) {
    long scale = test_g.scale_pct > 0 ? test_g.scale_pct : 100;
    const int spawners = (int)(3000 * scale / 100) + 200, frames = 8;
#ifdef __EMSCRIPTEN__
    enum { SP_MANY = 8 };    /* the wasm build's pool has 8 workers: a world of 16 would wait on the
                                event loop for threads that never start */
#else
    enum { SP_MANY = 16 };
#endif
    static const int threads[5] = {1, 2, 3, 8, SP_MANY};
    uint64_t hashes[5][8], files[5] = {0};
    unsigned long long logs[5] = {0};
    for (int t = 0; t < 5; t++) {
        static sp_ctx x;
        memset(&x, 0, sizeof x);
        x.seed = test_g.seed;
        x.big = (int)(2500 * scale / 100) + 100;
        ecs_world *w = sp_world(&x, threads[t], &logs[t], spawners, true, NULL);
        REQUIRE(w);
        REQUIRE(ecs_validate(w, NULL) == ECS_OK);
        ecs_trace_enable(w, true);
        ecs_timing_interval(w, 1);
        ecs_snapshot *snap = NULL;
        uint64_t plain[8] = {0};
        for (int f = 0; f < frames; f++) {
            x.frame = f;
            REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
            plain[f] = ecs_world_hash(w);
            hashes[t][f] = plain[f] ^ x.excl_seen * 7 ^ (uint64_t)ecs_commands_dropped(w) << 1;
            if (f == 3) REQUIRE((snap = ecs_snapshot_take(w)) != NULL);
        }
        if (ecs_thread_count(w) > 1) CHECKF(sp_traced_split(w), "threads %d: no sync point split", threads[t]);
        long size = 0;
        unsigned char *bytes = sy_bytes(w, &size);   /* slots, rows, values and change stamps */
        REQUIRE(bytes);
        files[t] = 1469598103934665603ull;
        for (long i = 0; i < size; i++) files[t] = (files[t] ^ bytes[i]) * 1099511628211ull;
        free(bytes);
        ecs_sim_result one, two;   /* the simulator divides the shared part by its threads */
        REQUIRE(ecs_schedule_simulate(w, 1, NULL, &one) == ECS_OK && ecs_schedule_simulate(w, 2, NULL, &two) == ECS_OK);
        if (ecs_thread_count(w) > 1) CHECKF(two.sync < one.sync, "threads %d: simulated sync %g at 2 threads, %g at 1",
                                            threads[t], two.sync, one.sync);
        else CHECK(two.sync == one.sync && one.sync > 0);
        REQUIRE(ecs_snapshot_restore(w, snap) == ECS_OK);   /* the same frames again */
        for (int f = 4; f < frames; f++) {
            x.frame = f;
            REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
            CHECKF(ecs_world_hash(w) == plain[f], "threads %d, frame %d: differs after a restore", threads[t], f);
        }
        ecs_snapshot_free(snap);
        ecs_world_free(w);
    }
    for (int t = 1; t < 5; t++) {
        for (int f = 0; f < frames; f++)
            CHECKF(hashes[t][f] == hashes[0][f], "threads %d, frame %d: the world differs from 1 thread's", threads[t], f);
        CHECKF(logs[t] == logs[0], "threads %d: the hook calls differ", threads[t]);
        CHECKF(files[t] == files[0], "threads %d: the save files differ", threads[t]);
    }
}

/* Allocation failures in a split sync point: each request made while it
   applies fails in turn; the frame reports ECS_ERR_NOMEM, and the next
   frame (whose systems record nothing) applies the rest: the world and the
   hook calls are then those of the run with no failure. */
typedef struct sp_oom { sp_ctx x; int armed; long requests, fail_at, injected; } sp_oom;

static void *sp_oom_realloc(void *ptr, size_t size, void *user) {
    sp_oom *o = (sp_oom *)user;   /* (x first: the world's alloc_user is &o->x) */
    if (size && o->armed && ++o->requests == o->fail_at) { o->injected++; return NULL; }   /* thread 0 only */
    if (!size) { free(ptr); return NULL; }
    return realloc(ptr, size);
}

/* Frames in pairs (recording, then quiet) at 2 threads; each pair's hash
   and hook log into out. The requests made in sync points: returned. */
static long sp_oom_run(long fail_at, uint64_t *out, int pairs) {
    static sp_oom o;
    memset(&o, 0, sizeof o);
    o.x.seed = test_g.seed ^ 0x5eed;
    o.x.big = 900;
    o.x.armed = &o.armed;
    o.fail_at = fail_at;
    unsigned long long log = 0;
    ecs_world *w = sp_world(&o.x, 2, &log, 1400, false, sp_oom_realloc);
    if (!w) return 0;
    for (int f = 0; f < pairs; f++) {
        o.x.frame = f;
        o.x.quiet = false;
        long before = o.injected;
        ecs_result r = ecs_progress(w, 0.016f);
        o.armed = 0;
        CHECKF(r == ECS_OK || (r == ECS_ERR_NOMEM && o.injected > before), "fail_at %ld, frame %d: %s", fail_at, f,
               ecs_result_str(r));
        o.x.quiet = true;
        r = ecs_progress(w, 0.016f);
        o.armed = 0;
        CHECKF(r == ECS_OK || (r == ECS_ERR_NOMEM && o.injected > before), "fail_at %ld, frame %d, the quiet one: %s",
               fail_at, f, ecs_result_str(r));
        if (r != ECS_OK) CHECK(ecs_progress(w, 0.016f) == ECS_OK);   /* (the failure hit its leftovers) */
        out[f] = ecs_world_hash(w) ^ log * 3;
    }
    ecs_world_free(w);
    return o.requests;
}

TEST(sync_split_out_of_memory) {
    enum { PAIRS = 2 };
    uint64_t ref[PAIRS], got[PAIRS];
    long total = sp_oom_run(0, ref, PAIRS);
    CHECKF(total > 0, "no allocation in a sync point");
    long step = test_g.scale_pct > 0 && test_g.scale_pct < 100 ? 3 : 1;
    for (long i = 1; i <= total; i += step) {
        sp_oom_run(i, got, PAIRS);
        for (int f = 0; f < PAIRS; f++)
            CHECKF(got[f] == ref[f], "allocation %ld of %ld failing: frame pair %d differs from the run with no failure",
                   i, total, f);
    }
}

/* The steps of a spawn's way stamp their tables when shared too: a table
   with rows that the spawns only pass through (Pos alone) has the block of
   its next row stamped, as one by one leaves it; the save files at 1 and 2
   threads are equal. */
static ecs_id sp_pos_id, sp_vel_id;
static void sp_pass(ecs_iter *it) {
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = ecs_cmd_create(it->commands);
        (void)ecs_cmd_set(it->commands, e, sp_pos_id, &(sy_vec){1, 2});
        (void)ecs_cmd_set(it->commands, e, sp_vel_id, &(sy_vec){3, 4});
    }
}
TEST(sched_sync_split_step_stamps) {
    unsigned long long h[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        sy_ids k;
        unsigned long long log = 0;
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = t + 1});
        REQUIRE(w);
        sy_register(w, &k, &log);
        sp_pos_id = k.pos;
        sp_vel_id = k.vel;
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos)}});
        REQUIRE(q && ecs_query_changed(w, q));
        for (int i = 0; i < 1500; i++) CHECK(ecs_set(w, ecs_create(w), k.pos, &(sy_vec){0, 0}) == ECS_OK);
        for (int i = 0; i < 3000; i++) CHECK(ecs_add(w, ecs_create(w), k.tag_a) == ECS_OK);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "pass", .fn = sp_pass, .chunk_size = 100,
                                                      .terms = {ECS_TERM_R(k.tag_a)}}));
        for (int f = 0; f < 3; f++) REQUIRE(ecs_progress(w, 0.01f) == ECS_OK);
        long size = 0;
        unsigned char *bytes = sy_bytes(w, &size);
        REQUIRE(bytes);
        h[t] = 1469598103934665603ull;
        for (long i = 0; i < size; i++) h[t] = (h[t] ^ bytes[i]) * 1099511628211ull;
        free(bytes);
        ecs_world_free(w);
    }
    CHECK(h[0] == h[1]);
}

void suite_sync(void) {
    RUN(sync_apply_equals_one_by_one);
    RUN(sync_spawn_steps_leave_their_stamps);
    RUN(sync_spawn_locked_step);
    RUN(sched_sync_split_equals_serial);
    RUN(sched_sync_split_step_stamps);
    RUN(sync_split_out_of_memory);
}
