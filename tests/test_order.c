/* grouped iteration tests: tables in ascending group_by value (ties by
   table creation order) for query loops, systems and chunked systems,
   tables made later and tables made again after a restore put in their
   place, loops restricted with ecs_iter_set_group, and bad input. */
#include "test.h"
#include <stdint.h>

typedef struct od_pos { float x, y; } od_pos;
typedef struct od_ids { ecs_id pos, layer[3], extra; } od_ids;

/* The group of a table: its layer tag's number (0..2), 7 without one. */
static uint64_t od_layer(const ecs_world *w, const ecs_id *ids, int n, void *ctx) {
    const od_ids *k = (const od_ids *)ctx;
    (void)w;
    for (int i = 0; i < n; i++)
        for (uint64_t l = 0; l < 3; l++) if (ids[i] == k->layer[l]) return l;
    return 7;
}

static ecs_world *od_world(od_ids *k, int threads) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!w) return NULL;
    k->pos = ECS_COMPONENT(w, od_pos);
    k->layer[0] = ecs_component(w, "L0", 0, 0);
    k->layer[1] = ecs_component(w, "L1", 0, 0);
    k->layer[2] = ecs_component(w, "L2", 0, 0);
    k->extra = ecs_component(w, "Extra", 0, 0);
    return w;
}

/* n entities with pos (x = tag) and the given tags. */
static void od_spawn(ecs_world *w, const od_ids *k, int n, float tag, ecs_id a, ecs_id b) {
    for (int i = 0; i < n; i++) {
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, k->pos, &(od_pos){tag, (float)i});
        if (a) ecs_add(w, e, a);
        if (b) ecs_add(w, e, b);
    }
}

/* The x tags of a loop's batches, in order (one per batch), with their groups. */
static int od_loop(ecs_world *w, ecs_query *q, int restrict_to, float *tags, uint64_t *groups, int cap) {
    int n = 0;
    ecs_iter it = ecs_query_iter(w, q);
    if (restrict_to >= 0 && ecs_iter_set_group(&it, (uint64_t)restrict_to)) return -1;
    while (ecs_query_next(&it)) {
        const od_pos *p = ECS_FIELD(&it, od_pos, 0);
        if (n < cap) { tags[n] = p[0].x; groups[n] = ecs_iter_group(&it); }
        n++;
    }
    return n;
}

TEST(group_order_and_restriction) {
    od_ids k;
    ecs_world *w = od_world(&k, 1);
    REQUIRE(w);
    /* tables made in the order: L2 (tag 1), none (2), L0 (3), L1 (4), L0+Extra (5) */
    od_spawn(w, &k, 3, 1, k.layer[2], 0);
    od_spawn(w, &k, 3, 2, 0, 0);
    od_spawn(w, &k, 3, 3, k.layer[0], 0);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos)}, .group_by = od_layer, .group_ctx = &k});
    REQUIRE(q);
    od_spawn(w, &k, 3, 4, k.layer[1], 0);   /* tables made after the query */
    od_spawn(w, &k, 3, 5, k.layer[0], k.extra);
    float tags[16];
    uint64_t groups[16];
    const float want[] = {3, 5, 4, 1, 2};
    const uint64_t want_g[] = {0, 0, 1, 2, 7};
    REQUIRE(od_loop(w, q, -1, tags, groups, 16) == 5);
    for (int i = 0; i < 5; i++) CHECKF(tags[i] == want[i] && groups[i] == want_g[i], "batch %d: tag %g group %llu", i, tags[i], (unsigned long long)groups[i]);
    /* restricted */
    CHECK(od_loop(w, q, 0, tags, groups, 16) == 2 && tags[0] == 3 && tags[1] == 5);
    CHECK(od_loop(w, q, 2, tags, groups, 16) == 1 && tags[0] == 1 && groups[0] == 2);
    CHECK(od_loop(w, q, 5, tags, groups, 16) == 0);
    /* an unrestricted loop of a plain query reports group 0 */
    ecs_query *plain = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos)}});
    REQUIRE(plain);
    CHECK(od_loop(w, plain, -1, tags, groups, 16) == 5 && tags[0] == 2 && groups[0] == 0);   /* {pos} came first */
    /* bad input: no group_by, a started loop, NULL */
    ecs_iter it = ecs_query_iter(w, plain);
    CHECK(ecs_iter_set_group(&it, 0) == ECS_ERR_ARG);
    ecs_iter_fini(&it);
    it = ecs_query_iter(w, q);
    REQUIRE(ecs_query_next(&it));
    CHECK(ecs_iter_set_group(&it, 1) == ECS_ERR_ARG && strstr(ecs_last_error(w), "started"));
    ecs_iter_fini(&it);
    CHECK(ecs_iter_set_group(NULL, 1) == ECS_ERR_ARG && ecs_iter_group(NULL) == 0);
    ecs_query_free(plain);
    ecs_query_free(q);
    ecs_world_free(w);
}

/* A restore that predates tables makes them again when next needed: they
   go back to their group's place. */
TEST(group_order_after_restore) {
    od_ids k;
    ecs_world *w = od_world(&k, 1);
    REQUIRE(w);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos)}, .group_by = od_layer, .group_ctx = &k});
    REQUIRE(q);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    od_spawn(w, &k, 2, 1, k.layer[2], 0);
    od_spawn(w, &k, 2, 2, k.layer[1], 0);
    od_spawn(w, &k, 2, 3, k.layer[0], 0);
    REQUIRE(!ecs_snapshot_restore(w, s));
    od_spawn(w, &k, 2, 3, k.layer[0], 0);   /* made again in another order */
    od_spawn(w, &k, 2, 1, k.layer[2], 0);
    od_spawn(w, &k, 2, 2, k.layer[1], 0);
    float tags[8];
    uint64_t groups[8];
    REQUIRE(od_loop(w, q, -1, tags, groups, 8) == 3);
    CHECK(tags[0] == 3 && tags[1] == 2 && tags[2] == 1);
    ecs_snapshot_free(s);
    ecs_query_free(q);
    ecs_world_free(w);
}

/* Systems: batches in group order; a chunked system's chunks follow it. */
typedef struct od_seen { float tag[64]; int chunk[64]; int hit[64]; } od_seen;   /* per chunk: one writer */
static void od_record(ecs_iter *it) {
    od_seen *s = (od_seen *)it->ctx;
    const od_pos *p = ECS_FIELD(it, od_pos, 0);
    if (it->chunk < 64) {
        s->tag[it->chunk] = p[0].x;
        s->chunk[it->chunk] = (int)ecs_iter_group(it);
        s->hit[it->chunk]++;
    }
}

TEST(sched_group_systems) {
    const int threads[] = {1, 2, 3, 8};
    for (int ti = 0; ti < 4; ti++) {
        od_ids k;
        ecs_world *w = od_world(&k, threads[ti]);
        REQUIRE(w);
        od_spawn(w, &k, 20, 1, k.layer[2], 0);
        od_spawn(w, &k, 20, 2, k.layer[1], 0);
        od_spawn(w, &k, 20, 3, k.layer[0], 0);
        static od_seen seen;
        memset(&seen, 0, sizeof seen);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "chunked", .fn = od_record, .ctx = &seen,
            .terms = {ECS_TERM_R(k.pos)}, .chunk_size = 10, .group_by = od_layer, .group_ctx = &k}));
        REQUIRE(!ecs_progress(w, 0.f));
        int n = 0;
        for (int c = 0; c < 64; c++) n += seen.hit[c];
        CHECK_EQ_INT(n, 6);
        const float want[] = {3, 3, 2, 2, 1, 1};
        for (int c = 0; c < 6; c++)
            CHECKF(seen.tag[c] == want[c] && seen.chunk[c] == c / 2, "%d threads, chunk %d: tag %g group %d",
                   threads[ti], c, seen.tag[c], seen.chunk[c]);
        ecs_world_free(w);
    }
}

void suite_order(void) {
    RUN(group_order_and_restriction);
    RUN(group_order_after_restore);
    RUN(sched_group_systems);
}
