/* hardening tests: what an API fuzzer and a thread stress test found.
   1. an EXCLUSIVE system's own batch stays valid (its table is locked);
   2. an EXCLUSIVE system never runs between the chunks of a chunked
      independent_of partner;
   3. a defer block an EXCLUSIVE system leaves open is ended for it, and
      ordinary systems never record into the world's defer buffer;
   4. ecs_set goes through the debug access check;
   5. more than 32,767 sized components in one table;
   6. ecs_progress reports the real cause when a sync point fails;
   7. a failed command-buffer allocation stops the frame (nothing after it runs);
   8. pending-handle serials are never reused;
   and a value that would take a command buffer past 2 GiB is ECS_ERR_ARG.
   Tests that run threads are named sched_* (TSan and helgrind run them). */
#include "test.h"
#include <stdatomic.h>
#include <time.h>


typedef struct { float x, y; } hd_pos;

/* ---- 1. an exclusive system's own batch ------------------------------------------- */
typedef struct self_ctx { ecs_id pos, tag; int rows, busy, other_ok; ecs_entity outsider; } self_ctx;
static void self_fn(ecs_iter *it) {
    self_ctx *c = (self_ctx *)it->ctx;
    hd_pos *p = ECS_FIELD(it, hd_pos, 0);
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        p[i].x += 1;
        c->rows++;
        /* each would move rows of the table being iterated */
        c->busy += ecs_destroy(it->world, e) == ECS_ERR_BUSY;
        c->busy += ecs_add(it->world, e, c->tag) == ECS_ERR_BUSY;
        ecs_entity fresh = ecs_create(it->world);   /* the empty table: fine */
        c->busy += ecs_set(it->world, fresh, c->pos, &(hd_pos){9, 9}) == ECS_ERR_BUSY;
        c->other_ok += fresh && ecs_destroy(it->world, fresh) == ECS_OK;
        c->other_ok += ecs_add(it->world, c->outsider, c->tag) == ECS_OK;   /* another table */
        c->other_ok += ecs_remove(it->world, c->outsider, c->tag) == ECS_OK;
    }
    if (it->count) CHECK(strstr(ecs_last_error(it->world), "exclusive system \"SelfChanging\"") != NULL ||
                         c->busy == 0);
}
TEST(exclusive_batch_is_locked) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    self_ctx c;
    memset(&c, 0, sizeof c);
    c.pos = ECS_COMPONENT(w, hd_pos);
    c.tag = ecs_component(w, "HdTag", 0, 0);
    ecs_entity es[50];
    CHECK_EQ_INT(ecs_create_many(w, 50, &c.pos, 1, es), ECS_OK);
    c.outsider = ecs_create(w);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "SelfChanging", .fn = self_fn, .ctx = &c,
        .flags = ECS_SYSTEM_EXCLUSIVE, .terms = {{c.pos, ECS_WRITE, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK_EQ_INT(c.rows, 50);   /* every row once */
    CHECK_EQ_INT(c.busy, 150);
    CHECK_EQ_INT(c.other_ok, 150);
    CHECK_EQ_INT(ecs_count(w), 51);
    for (int i = 0; i < 50; i++) {
        const hd_pos *p = (const hd_pos *)ecs_get(w, es[i], c.pos);
        CHECK(p && p->x == 1);
    }
    CHECK_EQ_INT(ecs_destroy(w, es[0]), ECS_OK);   /* unlocked afterwards */
    ecs_world_free(w);
}

/* ---- 2. an exclusive system and a chunked independent_of partner ------------------- */
typedef struct chunky_ctx {
    ecs_id pos;
    _Atomic long rows;          /* rows the chunked system saw this frame */
    long short_frames;
    ecs_entity victims[20];
} chunky_ctx;
static void chunky_fn(ecs_iter *it) {
    chunky_ctx *c = (chunky_ctx *)it->ctx;
    hd_pos *p = ECS_FIELD(it, hd_pos, 0);
    for (int i = 0; i < it->count; i++) p[i].x += 1;
    atomic_fetch_add(&c->rows, it->count);
    test_spin_us(test_spin_len(15));
}
static void reshuffle_fn(ecs_iter *it) {   /* exclusive: destroy 20 rows, make 20 */
    chunky_ctx *c = (chunky_ctx *)it->ctx;
    for (int i = 0; i < 20; i++) {
        ecs_destroy(it->world, c->victims[i]);
        c->victims[i] = ecs_create(it->world);
        ecs_set(it->world, c->victims[i], c->pos, &(hd_pos){0, 0});
    }
}
TEST(sched_exclusive_never_between_chunks) {
    static const int threads[3] = {2, 3, 8};
    for (int t = 0; t < 3; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        chunky_ctx *c = (chunky_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(&c->rows, sizeof c->rows);
        c->pos = ECS_COMPONENT(w, hd_pos);
        ecs_entity es[400];
        CHECK_EQ_INT(ecs_create_many(w, 400, &c->pos, 1, es), ECS_OK);
        for (int i = 0; i < 20; i++) c->victims[i] = es[i * 19];
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Chunky", .fn = chunky_fn, .ctx = c,
            .chunk_size = 16, .terms = {{c->pos, ECS_WRITE, ECS_AND}}}));
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Reshuffle", .fn = reshuffle_fn, .ctx = c,
            .flags = ECS_SYSTEM_EXCLUSIVE, .independent_of = {"Chunky"}}));
        CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
        long frames = test_g.scale_pct >= 100 ? 40 : 10;
        for (long f = 0; f < frames; f++) {
            atomic_store(&c->rows, 0);
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
            if (atomic_load(&c->rows) != 400) c->short_frames++;
        }
        CHECKF(c->short_frames == 0, "threads %d: %ld of %ld frames saw rows skipped or twice",
               threads[t], c->short_frames, frames);
        CHECK_EQ_INT(ecs_count(w), 400);
        free(c);
        ecs_world_free(w);
    }
}

/* ---- 3. a defer block left open by an exclusive system ------------------------------ */
typedef struct open_ctx { ecs_id pos; _Atomic long made, refused; } open_ctx;
static void opener_fn(ecs_iter *it) {
    CHECK_EQ_INT(ecs_defer_begin(it->world), ECS_OK);
    CHECK(ecs_create(it->world) != 0);   /* reserved; applied when the block is ended */
}
static void maker_fn(ecs_iter *it) {
    open_ctx *c = (open_ctx *)it->ctx;
    ecs_entity e = ecs_create(it->world);
    if (e) atomic_fetch_add(&c->made, 1);
    if (!e && strstr(ecs_last_error(it->world), "it->commands")) atomic_fetch_add(&c->refused, 1);
    if (ecs_defer_end(it->world) == ECS_ERR_BUSY) atomic_fetch_add(&c->refused, 1);
    test_spin_us(test_spin_len(5));
}
TEST(sched_exclusive_open_defer_block) {
    static const int threads[2] = {1, 2};
    for (int t = 0; t < 2; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        open_ctx *c = (open_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(c, sizeof *c);
        c->pos = ECS_COMPONENT(w, hd_pos);
        ecs_stage later = ecs_stage_add(w, "later");
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Opener", .fn = opener_fn,
            .flags = ECS_SYSTEM_EXCLUSIVE}));
        for (int i = 0; i < 4; i++) {
            char name[32];
            snprintf(name, sizeof name, "Maker%d", i);
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = name, .fn = maker_fn, .ctx = c,
                .stage = i < 2 ? 0 : later, .after = {i < 2 ? "Opener" : NULL}}));
        }
        ecs_result r = ecs_progress(w, 0);
        CHECK_EQ_INT(r, ECS_ERR_BUSY);
        CHECKF(strstr(ecs_last_error(w), "\"Opener\" returned inside a defer block") != NULL, "%s",
               ecs_last_error(w));
        CHECK_EQ_INT(atomic_load(&c->made), 0);
        CHECK_EQ_INT(ecs_count(w), 1);     /* the block's create was applied */
        ecs_entity e = ecs_create(w);        /* not in defer mode any more: live at once */
        CHECK(e && ecs_is_alive(w, e));
        CHECK_EQ_INT(ecs_defer_end(w), ECS_ERR_ARG);
        free(c);
        ecs_world_free(w);
    }
}

/* ---- 4. ecs_set and the access check ----------------------------------------------- */
#if ECS_CHECK_ACCESS
typedef struct setter_ctx { ecs_id pos; ecs_entity target; _Atomic int refused; } setter_ctx;
static void setter_fn(ecs_iter *it) {
    setter_ctx *c = (setter_ctx *)it->ctx;
    if (ecs_set(it->world, c->target, c->pos, &(hd_pos){5, 5}) == ECS_ERR_ACCESS)
        atomic_fetch_add(&c->refused, 1);
}
TEST(sched_set_is_access_checked) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    REQUIRE(w);
    setter_ctx *c = (setter_ctx *)calloc(1, sizeof *c);
    REQUIRE(c);
    TEST_HG_IGNORE(c, sizeof *c);
    c->pos = ECS_COMPONENT(w, hd_pos);
    c->target = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, c->target, c->pos, &(hd_pos){1, 1}), ECS_OK);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "ReadsOnly", .fn = setter_fn, .ctx = c,
        .terms = {{c->pos, ECS_READ, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);
    CHECKF(strstr(ecs_last_error(w), "ecs_set") && strstr(ecs_last_error(w), "\"ReadsOnly\""), "%s",
           ecs_last_error(w));
    CHECK_EQ_INT(atomic_load(&c->refused), 1);
    CHECK(((const hd_pos *)ecs_get(w, c->target, c->pos))->x == 1);
    free(c);
    ecs_world_free(w);
}
#endif

/* ---- 5. a table with more than 32,767 sized components ------------------------------ */
TEST(table_with_40000_columns) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    enum { N = 40000 };
    ecs_id *ids = (ecs_id *)malloc(N * sizeof *ids);
    REQUIRE(ids);
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "C%d", i);
        ids[i] = ecs_component(w, name, sizeof(int), 0);
        REQUIRE(ids[i]);
    }
    ecs_entity e[3];
    CHECK_EQ_INT(ecs_create_many(w, 3, ids, N, e), ECS_OK);
    static const int probe[4] = {100, 32767, 32768, 39999};
    for (int k = 0; k < 4; k++) {
        ecs_id id = ids[probe[k]];
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{ids[0], ECS_READ, ECS_AND}, {id, ECS_WRITE, ECS_AND}}});
        REQUIRE(q);
        int rows = 0;
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
            int *v = ECS_FIELD(&it, int, 1);
            CHECK(v != NULL);
            for (int i = 0; v && i < it.count; i++) { v[i] = probe[k] * 10 + i; rows++; }
        }
        CHECK_EQ_INT(rows, 3);
        for (int i = 0; i < 3; i++) {
            const int *got = (const int *)ecs_get(w, e[i], id);
            CHECK(got && *got == probe[k] * 10 + i);
        }
        ecs_query_free(q);
    }
    for (int i = 0; i < N; i++) {   /* nothing else was written */
        bool probed = i == 100 || i == 32767 || i == 32768 || i == 39999;
        if (!probed && *(const int *)ecs_get(w, e[1], ids[i]) != 0) { CHECKF(0, "column %d changed", i); break; }
    }
    free(ids);
    ecs_world_free(w);
}

/* ---- 6. a sync point that fails for another reason than memory ---------------------- */
typedef struct leak_ctx { ecs_query *q; ecs_id pos, tag; ecs_iter open; int closed; } leak_ctx;
static void leaves_loop_open(ecs_iter *it) {   /* exclusive: a loop left without ecs_iter_fini */
    leak_ctx *c = (leak_ctx *)it->ctx;
    c->open = ecs_query_iter(it->world, c->q);
    (void)ecs_query_next(&c->open);
}
static void closes_it(ecs_iter *it) {   /* exclusive: ends it, after its own sync point */
    leak_ctx *c = (leak_ctx *)it->ctx;
    ecs_iter_fini(&c->open);
    c->closed++;
}
static void tags_rows(ecs_iter *it) {
    const leak_ctx *c = (const leak_ctx *)it->ctx;
    for (int i = 0; i < it->count; i++) ecs_cmd_add(it->commands, it->entities[i], c->tag);
}
typedef struct count_hook { long requests, failures; } count_hook;
static void *count_realloc(void *p, size_t n, void *user) {
    count_hook *h = (count_hook *)user;
    if (n == 0) { free(p); return NULL; }
    h->requests++;
    void *q = realloc(p, n);
    if (!q) h->failures++;
    return q;
}
TEST(progress_reports_busy_not_nomem) {
    count_hook h = {0, 0};
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = count_realloc, .alloc_user = &h});
    REQUIRE(w);
    leak_ctx c;
    memset(&c, 0, sizeof c);
    c.pos = ECS_COMPONENT(w, hd_pos);
    c.tag = ecs_component(w, "HdTag", 0, 0);
    CHECK_EQ_INT(ecs_create_many(w, 10, &c.pos, 1, NULL), ECS_OK);
    c.q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.pos, ECS_READ, ECS_AND}}});
    REQUIRE(c.q);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Leaky", .fn = leaves_loop_open, .ctx = &c,
        .flags = ECS_SYSTEM_EXCLUSIVE}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Tagger", .fn = tags_rows, .ctx = &c,
        .terms = {{c.pos, ECS_READ, ECS_AND}}, .after = {"Leaky"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Later", .fn = closes_it, .ctx = &c,
        .flags = ECS_SYSTEM_EXCLUSIVE, .after = {"Tagger"}}));
    /* Tagger's commands cannot apply before Later (the loop holds their
       table): the frame stops there and says why */
    ecs_result r = ecs_progress(w, 0);
    CHECK_EQ_INT(r, ECS_ERR_BUSY);
    CHECKF(strstr(ecs_last_error(w), "(hd_pos)") && strstr(ecs_last_error(w), "ecs_iter_fini"), "%s",
           ecs_last_error(w));
    CHECK_EQ_INT(h.failures, 0);
    CHECK_EQ_INT(c.closed, 0);   /* the frame stopped before it */
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_BUSY);   /* still open: refused up front */
    ecs_iter_fini(&c.open);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);    /* the kept commands apply first, then a whole frame */
    CHECK_EQ_INT(c.closed, 1);
    ecs_iter_fini(&c.open);
    ecs_world_free(w);
}

/* ---- 7. a failed command-buffer allocation stops the frame ------------------------------ */
/* With threads > 1 the allocator is called from workers too: thread-safe. */
typedef struct fail_hook { _Atomic long requests; long fail_at; } fail_hook;
static void *fail_realloc(void *p, size_t n, void *user) {
    fail_hook *h = (fail_hook *)user;
    if (n == 0) { free(p); return NULL; }
    if (atomic_fetch_add(&h->requests, 1) + 1 == h->fail_at) return NULL;
    return realloc(p, n);
}
typedef struct ran_ctx { _Atomic long ran[4]; } ran_ctx;
static void ran_fn(ecs_iter *it) {
    ran_ctx *c = (ran_ctx *)it->ctx;
    if (it->chunk == 0) atomic_fetch_add(&c->ran[it->system - 1], 1);
    ecs_cmd_create(it->commands);
}
TEST(sched_failed_buffer_stops_the_frame) {
    static const int threads[2] = {1, 2};
    for (int t = 0; t < 2; t++) {
        int stopped = 0;
        for (long at = 1; at < 400; at++) {
            fail_hook h;
            atomic_init(&h.requests, 0);
            h.fail_at = 0;
            TEST_HG_IGNORE(&h, sizeof h);
            ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t], .realloc_fn = fail_realloc,
                                                            .alloc_user = &h});
            REQUIRE(w);
            ran_ctx *c = (ran_ctx *)calloc(1, sizeof *c);
            REQUIRE(c);
            TEST_HG_IGNORE(c, sizeof *c);
            ecs_id pos = ECS_COMPONENT(w, hd_pos);
            CHECK_EQ_INT(ecs_create_many(w, 200, &pos, 1, NULL), ECS_OK);
            ecs_stage two = ecs_stage_add(w, "two");
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "First", .fn = ran_fn, .ctx = c,
                .chunk_size = 8, .terms = {{pos, ECS_READ, ECS_AND}}}));
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Second", .fn = ran_fn, .ctx = c,
                .chunk_size = 8, .terms = {{pos, ECS_WRITE, ECS_AND}}, .after = {"First"}}));
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Third", .fn = ran_fn, .ctx = c,
                .terms = {{pos, ECS_READ, ECS_AND}}, .after = {"Second"}}));
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Fourth", .fn = ran_fn, .ctx = c,
                .stage = two}));
            CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
            long start = atomic_load(&h.requests);
            h.fail_at = start + at;   /* count from here: the frame's allocations */
            ecs_result r = ecs_progress(w, 0);
            long frame_allocs = atomic_load(&h.requests) - start;
            long ran[4];
            for (int i = 0; i < 4; i++) ran[i] = atomic_load(&c->ran[i]);
            if (r == ECS_OK) {
                for (int i = 0; i < 4; i++) CHECK_EQ_INT(ran[i], 1);
            } else {
                CHECK(r == ECS_ERR_NOMEM);
                stopped++;
                /* a prefix of the schedule ran: nothing after a system that did not */
                CHECKF(ran[1] <= ran[0] && ran[2] <= ran[1] && ran[3] <= ran[2],
                       "fail at %ld: ran %ld %ld %ld %ld", at, ran[0], ran[1], ran[2], ran[3]);
            }
            h.fail_at = 0;
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);   /* the next frame is whole */
            free(c);
            ecs_world_free(w);
            if (r == ECS_OK && frame_allocs < at) break;   /* past the frame's last allocation */
        }
        CHECK(stopped > 0);
    }
}

/* ---- 8. pending-handle serials ------------------------------------------------------------ */
TEST(commands_pending_handles_never_alias) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, hd_pos);
    ecs_commands *a = ecs_commands_new(w), *b = ecs_commands_new(w);
    REQUIRE(a && b);
    ecs_entity stale = ecs_cmd_create(a);
    REQUIRE(stale);
    CHECK_EQ_INT(ecs_commands_apply(w, a), ECS_OK);
    /* the 39-bit default would need 2^39 applies to come back round; a build
       with few serial bits (the gen4 configuration) runs out instead */
    long applies = ECS_PENDING_SERIAL_BITS <= 16 ? (1L << ECS_PENDING_SERIAL_BITS) + 8 : 3000;
    long refused = 0, creates = 0;
    for (long i = 0; i < applies; i++) {
        ecs_entity p = ecs_cmd_create(b);
        if (p) creates++;
        else CHECK(strstr(ecs_last_error(w), "used up") != NULL);
        CHECK(p != stale);
        refused += ecs_cmd_set(b, stale, pos, &(hd_pos){1, 1}) == ECS_ERR_ARG;
        CHECK_EQ_INT(ecs_commands_apply(w, b), ECS_OK);
    }
    CHECK_EQ_INT(refused, applies);
    CHECK_EQ_INT(ecs_count(w), (size_t)(1 + creates));
    if (ECS_PENDING_SERIAL_BITS <= 16) CHECK(creates < applies);   /* ran out, never wrapped */
    ecs_world_free(w);
}

/* ---- a command buffer past 2 GiB of values ------------------------------------------------- */
TEST(commands_value_past_2gib_is_arg) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id small = ecs_component(w, "Small", sizeof(int), 0);
    ecs_id huge = ecs_component(w, "Huge", (size_t)INT32_MAX, 1);
    REQUIRE(small && huge);
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    ecs_entity e = ecs_create(w);
    int v = 7;
    CHECK_EQ_INT(ecs_cmd_set(c, e, small, &v), ECS_OK);
    /* refused before the value is read: the 4-byte source is never touched */
    CHECK_EQ_INT(ecs_cmd_set(c, e, huge, &v), ECS_ERR_ARG);
    CHECKF(strstr(ecs_last_error(w), "2 GiB") && strstr(ecs_last_error(w), "Huge"), "%s", ecs_last_error(w));
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
    CHECK(ecs_has(w, e, small) && !ecs_has(w, e, huge));
    ecs_world_free(w);
}

/* A system that could not record a command: the frame says so (found by
   the API fuzzer). */
typedef struct rec_ctx { int refused; } rec_ctx;
static void recorder(ecs_iter *it) {
    rec_ctx *c = (rec_ctx *)it->ctx;
    for (int k = 0; k < 20; k++) if (!ecs_cmd_create(it->commands)) c->refused++;
}
TEST(progress_reports_lost_commands) {
    int seen = 0;
    for (long at = 1; at < 60; at++) {
        fail_hook h;
        atomic_init(&h.requests, 0);
        h.fail_at = 0;
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = fail_realloc, .alloc_user = &h});
        REQUIRE(w);
        rec_ctx c = {0};
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Recorder", .fn = recorder, .ctx = &c}));
        CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
        h.fail_at = atomic_load(&h.requests) + at;
        ecs_result r = ecs_progress(w, 0);
        if (c.refused) {
            seen++;
            CHECKF(r == ECS_ERR_NOMEM, "allocation %ld: a command was lost and the frame said %s", at,
                   ecs_result_str(r));
        }
        ecs_world_free(w);
    }
    CHECK(seen > 0);
}

void suite_hardening(void) {
    RUN(progress_reports_lost_commands);
    RUN(exclusive_batch_is_locked);
    RUN(sched_exclusive_never_between_chunks);
    RUN(sched_exclusive_open_defer_block);
#if ECS_CHECK_ACCESS
    RUN(sched_set_is_access_checked);
#endif
    RUN(table_with_40000_columns);
    RUN(progress_reports_busy_not_nomem);
    RUN(sched_failed_buffer_stops_the_frame);
    RUN(commands_pending_handles_never_alias);
    RUN(commands_value_past_2gib_is_arg);
}
