/* safety tests: every way a system can touch data is covered by validation
   or refused by the debug access checks.
   - independent_of partners that conflict never run at the same time (and
     the simulator models it);
   - a chunked system with a writes list is a SELF_RACE;
   - nested query iteration, ecs_get/ecs_get_mut/ecs_set inside systems, and
     ECS_FIELD sizes are checked (ECS_CHECK_ACCESS);
   - check_reads catches writes through READ fields;
   - it->chunk is deterministic; error lines are whole; a query loop left
     with break names itself in every ECS_ERR_BUSY it causes.
   Tests that run threads are named sched_* so the TSan and helgrind runs
   include them. */
#include "test.h"
#include <stdatomic.h>
#include <time.h>


typedef struct { float x, y; } sf_pos;
typedef struct { int hp; } sf_health;

/* ---- 1. independent_of: any order, never at once ------------------------------- */
typedef struct ind_ctx {
    _Atomic int inside;        /* systems of the exclusive group running now */
    _Atomic long overlaps, runs;
    ecs_id pos;
} ind_ctx;
static void ind_fn(ecs_iter *it) {
    ind_ctx *c = (ind_ctx *)it->ctx;
    if (atomic_fetch_add(&c->inside, 1)) atomic_fetch_add(&c->overlaps, 1);
    sf_pos *p = ECS_FIELD(it, sf_pos, 0);
    for (int i = 0; i < it->count; i++) { p[i].x += 1; p[i].y = p[i].x * 2; }
    test_spin_us(test_spin_len(60));
    atomic_fetch_sub(&c->inside, 1);
    atomic_fetch_add(&c->runs, 1);
}

TEST(sched_independent_of_never_concurrent) {
    static const int threads[3] = {2, 3, 8};
    for (int t = 0; t < 3; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        ind_ctx *c = (ind_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(c, sizeof *c);
        c->pos = ECS_COMPONENT(w, sf_pos);
        CHECK_EQ_INT(ecs_create_many(w, 64, &c->pos, 1, NULL), ECS_OK);
        /* A and B both write Position; B lists A (one side is enough), C lists
           both; D is unrelated and may run beside any of them */
        ecs_system a = ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = ind_fn, .ctx = c,
            .terms = {{c->pos, ECS_WRITE, ECS_AND}}});
        ecs_system b = ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = ind_fn, .ctx = c,
            .terms = {{c->pos, ECS_WRITE, ECS_AND}}, .independent_of = {"A"}});
        ecs_system s3 = ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = ind_fn, .ctx = c,
            .terms = {{c->pos, ECS_READ, ECS_AND}}, .independent_of = {"A", "B"}});
        REQUIRE(a && b && s3);
        CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
        CHECK(!ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a));
        long frames = test_scaled(60, 10);
        for (long f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECKF(atomic_load(&c->overlaps) == 0, "threads %d: %ld overlaps", threads[t],
               (long)atomic_load(&c->overlaps));
        CHECK_EQ_INT(atomic_load(&c->runs), 3 * frames);
        free(c);
        ecs_world_free(w);
    }
}

static void sim_nop(ecs_iter *it) { (void)it; }
TEST(independent_of_simulated_exclusion) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, sf_pos);
    ecs_id hp = ECS_COMPONENT(w, sf_health);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = sim_nop,
        .terms = {{pos, ECS_WRITE, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = sim_nop,
        .terms = {{pos, ECS_WRITE, ECS_AND}}, .independent_of = {"A"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = sim_nop,
        .terms = {{hp, ECS_WRITE, ECS_AND}}, .independent_of = {"A"}}));
    double d[3] = {10, 10, 10};
    ecs_sim_result r;
    CHECK_EQ_INT(ecs_schedule_simulate(w, 2, d, &r), ECS_OK);
    CHECKF(r.makespan == 20, "makespan %g: A and B must not overlap, C runs beside them", r.makespan);
    CHECK_EQ_INT(ecs_schedule_simulate(w, 3, d, &r), ECS_OK);
    CHECKF(r.makespan == 20, "makespan %g with 3 threads", r.makespan);
    ecs_world_free(w);
}

/* ---- 2. a chunked system that writes beyond its rows races with itself --------- */
static void score_fn(ecs_iter *it) {
    int *score = (int *)ecs_resource_get(it->world, *(const ecs_id *)it->ctx);
    for (int i = 0; score && i < it->count; i++) (*score)++;
}
TEST(systems_chunked_writes_self_race) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, sf_pos);
    ecs_id hp = ECS_COMPONENT(w, sf_health);
    ecs_id score = ecs_resource(w, "Score", sizeof(int), 0, NULL);
    CHECK_EQ_INT(ecs_create_many(w, 5000, &pos, 1, NULL), ECS_OK);
    ecs_system s = ecs_system_add(w, &(ecs_system_desc){.name = "CountRows", .fn = score_fn,
        .ctx = &score, .chunk_size = 1024, .terms = {{pos, ECS_READ, ECS_AND}},
        .writes = {score, hp}});
    REQUIRE(s);
    ecs_report rep;
    CHECK_EQ_INT(ecs_validate(w, &rep), ECS_ERR_INVALID_GRAPH);
    REQUIRE(rep.count == 1);   /* one problem per system, whatever it writes */
    const ecs_problem *p = &rep.problems[0];
    CHECK_EQ_INT(p->kind, ECS_PROBLEM_SELF_RACE);
    CHECK(p->a == s && p->b == s);
    CHECK_EQ_INT(p->id, hp < score ? hp : score);
    CHECKF(strstr(p->message, "\"CountRows\" is chunked") && strstr(p->message, "Score") &&
           strstr(p->message, "sf_health") && strstr(p->message, "drop chunk_size"), "%s", p->message);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(*(int *)ecs_resource_get(w, score), 0);   /* nothing ran */
    /* the fix the message names: the same work unchunked is valid and exact */
    ecs_world_free(w);
    w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    REQUIRE(w);
    pos = ECS_COMPONENT(w, sf_pos);
    score = ecs_resource(w, "Score", sizeof(int), 0, NULL);
    CHECK_EQ_INT(ecs_create_many(w, 5000, &pos, 1, NULL), ECS_OK);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "CountRows", .fn = score_fn,
        .ctx = &score, .terms = {{pos, ECS_READ, ECS_AND}}, .writes = {score}}));
    for (int f = 0; f < 4; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK_EQ_INT(*(int *)ecs_resource_get(w, score), 4 * 5000);
    ecs_world_free(w);
}

/* ---- 3. nested queries inside systems ------------------------------------------- */
typedef struct nest_ctx {
    ecs_query *q;
    _Atomic long rows_seen, batches;
    bool expect_rows;
} nest_ctx;
static void nest_fn(ecs_iter *it) {
    nest_ctx *c = (nest_ctx *)it->ctx;
    long rows = 0;
    for (ecs_iter q = ecs_query_iter(it->world, c->q); ecs_query_next(&q);) {
        const sf_pos *p = ECS_FIELD(&q, sf_pos, 0);
        for (int i = 0; i < q.count; i++) rows += p[i].x >= 0;
    }
    atomic_fetch_add(&c->rows_seen, rows);
}
static void nest_writer(ecs_iter *it) {
    sf_pos *p = ECS_FIELD(it, sf_pos, 0);
    for (int i = 0; i < it->count; i++) p[i].x += 1;
    test_spin_us(test_spin_len(20));
}
/* A system with no terms and no reads iterates Position while a chunked
   writer runs: refused (the iterator yields nothing, the frame reports
   ECS_ERR_ACCESS); declared in reads, it is ordered and sees every row. */
TEST(sched_nested_query_must_be_declared) {
    for (int declared = 0; declared < 2; declared++) {
#if !ECS_CHECK_ACCESS
        if (!declared) continue;   /* unchecked, the undeclared loop would really race */
#endif
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
        REQUIRE(w);
        ecs_id pos = ECS_COMPONENT(w, sf_pos);
        CHECK_EQ_INT(ecs_create_many(w, 4000, &pos, 1, NULL), ECS_OK);
        nest_ctx *c = (nest_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(c, sizeof *c);
        c->q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
        REQUIRE(c->q);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Writer", .fn = nest_writer,
            .chunk_size = 256, .terms = {{pos, ECS_WRITE, ECS_AND}}}));
        ecs_system_desc d = {.name = "Looker", .fn = nest_fn, .ctx = c};
        if (declared) d.reads[0] = pos;
        REQUIRE(ecs_system_add(w, &d));
        CHECK_EQ_INT(ecs_validate(w, NULL), ECS_OK);
        for (int f = 0; f < 8; f++) {
            ecs_result r = ecs_progress(w, 0);
            if (declared) CHECK_EQ_INT(r, ECS_OK);
            else {
                CHECK_EQ_INT(r, ECS_ERR_ACCESS);
                CHECKF(strstr(ecs_last_error(w), "\"Looker\"") && strstr(ecs_last_error(w), "sf_pos"),
                       "%s", ecs_last_error(w));
            }
        }
        CHECK_EQ_INT(atomic_load(&c->rows_seen), declared ? 8 * 4000 : 0);
        free(c);
        ecs_world_free(w);
    }
}

#if ECS_CHECK_ACCESS
/* Inside a chunked system: its own rows of what it writes, never others'. */
typedef struct own_ctx { ecs_id pos; ecs_entity other; _Atomic long own_ok, other_refused; } own_ctx;
static void own_fn(ecs_iter *it) {
    own_ctx *c = (own_ctx *)it->ctx;
    if (it->count && ecs_get_mut(it->world, it->entities[0], c->pos)) atomic_fetch_add(&c->own_ok, 1);
    bool mine = false;
    for (int i = 0; i < it->count; i++) mine |= it->entities[i] == c->other;
    if (!mine && !ecs_get_mut(it->world, c->other, c->pos) && !ecs_get(it->world, c->other, c->pos) &&
        ecs_set(it->world, c->other, c->pos, &(sf_pos){1, 1}) == ECS_ERR_ACCESS)
        atomic_fetch_add(&c->other_refused, 1);
}
TEST(sched_chunked_system_own_rows_only) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    REQUIRE(w);
    own_ctx *c = (own_ctx *)calloc(1, sizeof *c);
    REQUIRE(c);
    TEST_HG_IGNORE(c, sizeof *c);
    c->pos = ECS_COMPONENT(w, sf_pos);
    ecs_entity es[100];
    CHECK_EQ_INT(ecs_create_many(w, 100, &c->pos, 1, es), ECS_OK);
    c->other = es[99];
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Chunky", .fn = own_fn, .ctx = c,
        .chunk_size = 10, .terms = {{c->pos, ECS_WRITE, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);
    CHECKF(strstr(ecs_last_error(w), "\"Chunky\" is chunked") != NULL, "%s", ecs_last_error(w));
    CHECK_EQ_INT(atomic_load(&c->own_ok), 10);
    CHECK_EQ_INT(atomic_load(&c->other_refused), 9);
    const sf_pos *p = (const sf_pos *)ecs_get(w, c->other, c->pos);
    CHECK(p && p->x == 0);   /* the refused set wrote nothing */
    free(c);
    ecs_world_free(w);
}

/* Both neighbours of every chunk boundary: a batch's first and last rows are
   its own, the rows just before and after it (same table) are another
   chunk's, for get, get_mut and set alike. Tables of 10, 7 and 13 rows in
   chunks of 4. */
#define CB_ROWS 30
typedef struct cb_ctx {
    ecs_id pos;
    ecs_entity rows[CB_ROWS];   /* the matched entities in table, then row order */
    int table_of[CB_ROWS];
    _Atomic long batches, own_ok, neighbours, refused;
} cb_ctx;
static void cb_fn(ecs_iter *it) {
    cb_ctx *c = (cb_ctx *)it->ctx;
    sf_pos *p = ECS_FIELD(it, sf_pos, 0);
    for (int i = 0; i < it->count; i++) p[i].y += 1;
    int first = 0;
    while (first < CB_ROWS && c->rows[first] != it->entities[0]) first++;
    if (first == CB_ROWS) return;   /* an unknown batch: the batch count tells */
    atomic_fetch_add(&c->batches, 1);
    int last = first + it->count - 1;
    atomic_fetch_add(&c->own_ok, (ecs_get_mut(it->world, c->rows[first], c->pos) != NULL) +
                                 (ecs_get_mut(it->world, c->rows[last], c->pos) != NULL));
    int next[2] = {first - 1, last + 1};
    for (int k = 0; k < 2; k++) {
        int r = next[k];
        if (r < 0 || r >= CB_ROWS || c->table_of[r] != c->table_of[first]) continue;
        atomic_fetch_add(&c->neighbours, 1);
        void *mut = ecs_get_mut(it->world, c->rows[r], c->pos);
        const void *get = ecs_get(it->world, c->rows[r], c->pos);
        ecs_result set = ecs_set(it->world, c->rows[r], c->pos, &(sf_pos){-1, -1});
        if (!mut && !get && set == ECS_ERR_ACCESS) atomic_fetch_add(&c->refused, 1);
    }
}
TEST(sched_chunked_system_batch_bounds) {
    static const int threads[4] = {1, 2, 3, 8};
    for (int t = 0; t < 4; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        cb_ctx *c = (cb_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(c, sizeof *c);
        c->pos = ECS_COMPONENT(w, sf_pos);
        ecs_id ids[3] = {c->pos, ECS_TAG(w, TagA), ECS_TAG(w, TagB)};
        CHECK_EQ_INT(ecs_create_many(w, 10, ids, 1, NULL), ECS_OK);
        CHECK_EQ_INT(ecs_create_many(w, 7, ids, 2, NULL), ECS_OK);
        ids[1] = ids[2];
        CHECK_EQ_INT(ecs_create_many(w, 13, ids, 2, NULL), ECS_OK);
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c->pos, ECS_WRITE, ECS_AND}}});
        REQUIRE(q);
        int n = 0, table = 0;
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it); table++) {
            sf_pos *p = ECS_FIELD(&it, sf_pos, 0);
            for (int i = 0; i < it.count && n < CB_ROWS; i++, n++) {
                c->rows[n] = it.entities[i];
                c->table_of[n] = table;
                p[i] = (sf_pos){(float)n, 0};
            }
        }
        ecs_query_free(q);
        REQUIRE(n == CB_ROWS && table == 3);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Bounds", .fn = cb_fn, .ctx = c,
            .chunk_size = 4, .terms = {{c->pos, ECS_WRITE, ECS_AND}}}));
        const int frames = 3;
        for (int f = 0; f < frames; f++) {
            CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);   /* the refusals are reported */
            CHECKF(strstr(ecs_last_error(w), "\"Bounds\" is chunked") != NULL, "%s", ecs_last_error(w));
        }
        /* per frame: 3 + 2 + 4 batches, 2 + 1 + 3 boundaries with two neighbours each */
        CHECK_EQ_INT(atomic_load(&c->batches), 9 * frames);
        CHECK_EQ_INT(atomic_load(&c->own_ok), 2 * 9 * frames);
        CHECK_EQ_INT(atomic_load(&c->neighbours), 12 * frames);
        CHECKF(atomic_load(&c->refused) == 12 * frames, "threads %d: %ld of %d neighbour accesses refused",
               threads[t], (long)atomic_load(&c->refused), 12 * frames);
        int changed = 0;   /* the refused sets wrote nothing; each row was written by its own batch */
        for (int r = 0; r < CB_ROWS; r++) {
            const sf_pos *p = (const sf_pos *)ecs_get(w, c->rows[r], c->pos);
            changed += !p || p->x != (float)r || p->y != (float)frames;
        }
        CHECKF(changed == 0, "threads %d: %d rows changed", threads[t], changed);
        free(c);
        ecs_world_free(w);
    }
}
#endif

/* ---- 4. ECS_FIELD sizes and check_reads ------------------------------------------ */
TEST(query_field_size_checked) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, sf_pos);
    CHECK_EQ_INT(ecs_create_many(w, 3, &pos, 1, NULL), ECS_OK);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        batches++;
        CHECK(ECS_FIELD(&it, sf_pos, 0) != NULL);
#if ECS_CHECK_ACCESS
        CHECK(ECS_FIELD(&it, sf_health, 0) == NULL);
        CHECKF(strstr(ecs_last_error(w), "sf_pos") && strstr(ecs_last_error(w), "8 bytes"),
               "%s", ecs_last_error(w));
#endif
        CHECK(ecs_field(&it, 0) != NULL);   /* unchecked access stays */
    }
    CHECK_EQ_INT(batches, 1);
    ecs_query_free(q);
    ecs_world_free(w);
}

typedef struct cr_ctx { ecs_id pos; bool cheat; } cr_ctx;
static void cr_fn(ecs_iter *it) {
    const cr_ctx *c = (const cr_ctx *)it->ctx;
    sf_pos *p = ECS_FIELD(it, sf_pos, 0);   /* a READ term: a const view is meant */
    if (c->cheat && it->count) p[it->count - 1].y += 1;
}
TEST(sched_check_reads) {
    static const int threads[2] = {1, 2};
    for (int t = 0; t < 2; t++)
        for (int cheat = 0; cheat < 2; cheat++) {
            ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t], .check_reads = true});
            REQUIRE(w);
            cr_ctx c = {ECS_COMPONENT(w, sf_pos), cheat != 0};
            CHECK_EQ_INT(ecs_create_many(w, 300, &c.pos, 1, NULL), ECS_OK);
            REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Reader", .fn = cr_fn, .ctx = &c,
                .chunk_size = 64, .terms = {{c.pos, ECS_READ, ECS_AND}}}));
            ecs_result r = ecs_progress(w, 0);
            if (cheat) {
                CHECK_EQ_INT(r, ECS_ERR_ACCESS);
                CHECKF(strstr(ecs_last_error(w), "\"Reader\"") && strstr(ecs_last_error(w), "sf_pos") &&
                       strstr(ecs_last_error(w), "READ"), "%s", ecs_last_error(w));
            } else {
                CHECK_EQ_INT(r, ECS_OK);
            }
            CHECK_EQ_INT(ecs_progress(w, 0), cheat ? ECS_ERR_ACCESS : ECS_OK);   /* every frame */
            ecs_world_free(w);
        }
}

/* ---- 5. it->chunk -------------------------------------------------------------------- */
typedef struct chunk_ctx { int first_row_chunk[1000]; _Atomic int calls; } chunk_ctx;
static void chunk_fn(ecs_iter *it) {
    chunk_ctx *c = (chunk_ctx *)it->ctx;
    const int *v = ECS_FIELD(it, int, 0);
    for (int i = 0; i < it->count; i++) c->first_row_chunk[v[i]] = it->chunk;
    atomic_fetch_add(&c->calls, 1);
}
TEST(sched_iter_chunk_index) {
    static const int threads[4] = {1, 2, 3, 8};
    int expect[1000];
    for (int t = 0; t < 4; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        ecs_id val = ecs_component(w, "Val", sizeof(int), 0);
        ecs_id tag = ecs_component(w, "Tag", 0, 0);
        ecs_id both[2] = {val, tag};
        ecs_entity es[1000];
        CHECK_EQ_INT(ecs_create_many(w, 700, &val, 1, es), ECS_OK);   /* table 1: 700 rows */
        CHECK_EQ_INT(ecs_create_many(w, 300, both, 2, es + 700), ECS_OK);   /* table 2: 300 */
        for (int i = 0; i < 1000; i++) *(int *)ecs_get_mut(w, es[i], val) = i;
        chunk_ctx *c = (chunk_ctx *)calloc(1, sizeof *c);
        REQUIRE(c);
        TEST_HG_IGNORE(&c->calls, sizeof c->calls);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Chunks", .fn = chunk_fn, .ctx = c,
            .chunk_size = 128, .terms = {{val, ECS_READ, ECS_AND}}}));
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        CHECK_EQ_INT(atomic_load(&c->calls), 6 + 3);   /* ceil(700/128) + ceil(300/128) */
        for (int i = 0; i < 1000; i++) {
            int want = i < 700 ? i / 128 : 6 + (i - 700) / 128;
            if (t == 0) expect[i] = c->first_row_chunk[i];
            CHECKF(c->first_row_chunk[i] == want && c->first_row_chunk[i] == expect[i],
                   "row %d: chunk %d, want %d (threads %d)", i, c->first_row_chunk[i], want, threads[t]);
            if (c->first_row_chunk[i] != want) break;
        }
        free(c);
        ecs_world_free(w);
    }
}

/* ---- 6. honest errors ------------------------------------------------------------------ */
TEST(last_error_is_whole) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    char name[700];
    for (int i = 0; i < 699; i++) name[i] = (char)('a' + i % 26);
    name[699] = 0;
    name[690] = 'Z';
    CHECK(ecs_component(w, name, 4, 0) != 0);
    CHECK(ecs_component(w, name, 8, 0) == 0);   /* another size: the error names it */
    const char *err = ecs_last_error(w);
    CHECKF(strlen(err) > 700 && strstr(err, name) && strstr(err, "size 8"), "%zu: %s", strlen(err), err);
    CHECK(ecs_component(w, "", 4, 0) == 0);      /* and a short one after it */
    CHECK(strlen(ecs_last_error(w)) < 100);
    ecs_world_free(w);
}

TEST(query_left_with_break_names_itself) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, sf_pos);
    ecs_id hp = ECS_COMPONENT(w, sf_health);
    ecs_entity es[4];
    CHECK_EQ_INT(ecs_create_many(w, 4, &pos, 1, es), ECS_OK);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}, {hp, ECS_READ, ECS_NOT}}});
    REQUIRE(q);
    ecs_iter it = ecs_query_iter(w, q);
    for (; ecs_query_next(&it);) break;   /* left without ecs_iter_fini */
    CHECK_EQ_INT(ecs_destroy(w, es[0]), ECS_ERR_BUSY);
    const char *err = ecs_last_error(w);
    CHECKF(strstr(err, "(sf_pos, !sf_health)") && strstr(err, "ecs_iter_fini"), "%s", err);
    CHECK_EQ_INT(ecs_add(w, es[1], hp), ECS_ERR_BUSY);
    CHECK(strstr(ecs_last_error(w), "ecs_iter_fini") != NULL);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_BUSY);
    CHECKF(strstr(ecs_last_error(w), "ecs_progress") && strstr(ecs_last_error(w), "(sf_pos, !sf_health)") &&
           strstr(ecs_last_error(w), "ecs_iter_fini"), "%s", ecs_last_error(w));
    ecs_iter_fini(&it);
    CHECK_EQ_INT(ecs_destroy(w, es[0]), ECS_OK);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    ecs_query_free(q);
    ecs_world_free(w);
}

void suite_safety(void) {
    RUN(sched_independent_of_never_concurrent);
    RUN(independent_of_simulated_exclusion);
    RUN(systems_chunked_writes_self_race);
    RUN(sched_nested_query_must_be_declared);
#if ECS_CHECK_ACCESS
    RUN(sched_chunked_system_own_rows_only);
    RUN(sched_chunked_system_batch_bounds);
#endif
    RUN(query_field_size_checked);
    RUN(sched_check_reads);
    RUN(sched_iter_chunk_index);
    RUN(last_error_is_whole);
    RUN(query_left_with_break_names_itself);
}
