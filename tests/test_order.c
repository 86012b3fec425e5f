/* grouped iteration tests: tables in ascending group_by value (ties by
   table creation order) for query loops, systems and chunked systems,
   tables made later and tables made again after a restore put in their
   place, loops restricted with ecs_iter_set_group (and the change marks
   they leave), and bad input. */
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
    /* a table made during the loop settles before the batch out: the loop goes on after it */
    {
        int n = 0;
        float seq[16];
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it); n++) {
            seq[n < 16 ? n : 15] = ECS_FIELD(&it, od_pos, 0)[0].x;
            if (n == 2) {   /* at the L1 table: a new, empty group-0 table */
                ecs_id ids[3] = {k.pos, k.layer[0], k.layer[1]};
                CHECK(!ecs_create_many(w, 0, ids, 3, NULL));
                CHECK(ecs_iter_group(&it) == 1);   /* still the batch's own */
            }
        }
        CHECK_EQ_INT(n, 5);
        CHECK(seq[2] == 4 && seq[3] == 1 && seq[4] == 2);
    }
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

/* The tags of a loop's batches (restricted to a group unless -1). */
static int od_tags(ecs_world *w, ecs_query *q, int group, float *tags, int cap) {
    uint64_t groups[16];
    return od_loop(w, q, group, tags, groups, cap < 16 ? cap : 16);
}

/* A loop of one group completes that group's tables for change detection,
   no other; its mark goes through snapshots and save files. */
TEST(group_loops_mark_their_group) {
    od_ids k;
    ecs_world *w = od_world(&k, 1);
    REQUIRE(w);
    od_spawn(w, &k, 2, 3, k.layer[0], 0);
    od_spawn(w, &k, 2, 4, k.layer[1], 0);
    od_spawn(w, &k, 2, 1, k.layer[2], 0);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{k.pos, ECS_READ, ECS_CHANGED}},
                                                      .group_by = od_layer, .group_ctx = &k});
    ecs_query *t = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos)}, .group_by = od_layer, .group_ctx = &k});
    REQUIRE(q && t);
    ecs_entity in[3];   /* one entity of each layer's table: rows 0 */
    for (int l = 0; l < 3; l++) {
        ecs_iter it = ecs_query_iter(w, t);
        REQUIRE(!ecs_iter_set_group(&it, (uint64_t)l) && ecs_query_next(&it));
        in[l] = it.entities[0];
        ecs_iter_fini(&it);
    }
    float tags[16];
    CHECK_EQ_INT(od_tags(w, q, -1, tags, 16), 3);
    CHECK_EQ_INT(od_tags(w, q, -1, tags, 16), 0);
    /* L0 and L1 change; a loop of group 0 takes L0's change, the next full loop only L1's */
    for (int l = 0; l < 2; l++) REQUIRE(!ecs_set(w, in[l], k.pos, &(od_pos){3.f + (float)l, 9}));
    CHECK(od_tags(w, q, 0, tags, 16) == 1 && tags[0] == 3);
    CHECK_EQ_INT(od_tags(w, q, 0, tags, 16), 0);
    CHECK(od_tags(w, q, -1, tags, 16) == 1 && tags[0] == 4);
    CHECK_EQ_INT(od_tags(w, q, -1, tags, 16), 0);
    /* a group's mark is kept by a snapshot and by a save file */
    for (int l = 0; l < 2; l++) REQUIRE(!ecs_set(w, in[l], k.pos, &(od_pos){3.f + (float)l, 8}));
    CHECK(od_tags(w, q, 1, tags, 16) == 1 && tags[0] == 4);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    FILE *f = tmpfile();
    REQUIRE(f);
    REQUIRE(!ecs_snapshot_write(s, f));
    rewind(f);
    ecs_snapshot *fs = ecs_snapshot_read(w, f);
    fclose(f);
    REQUIRE(fs);
    for (int pass = 0; pass < 3; pass++) {   /* as taken, restored, read back */
        if (pass) REQUIRE(!ecs_snapshot_restore(w, pass == 1 ? s : fs));
        CHECKF(od_tags(w, q, -1, tags, 16) == 1 && tags[0] == 3, "pass %d: L0's change alone", pass);
        CHECK_EQ_INT(od_tags(w, q, -1, tags, 16), 0);
    }
    ecs_snapshot_free(s);
    ecs_snapshot_free(fs);
    /* ecs_query_changed asks each group since its own latest loop */
    CHECK(ecs_query_changed(w, t));
    CHECK_EQ_INT(od_tags(w, t, -1, tags, 16), 3);
    CHECK(!ecs_query_changed(w, t));
    REQUIRE(!ecs_set(w, in[1], k.pos, &(od_pos){4, 7}));
    CHECK_EQ_INT(od_tags(w, t, 1, tags, 16), 1);
    CHECK(!ecs_query_changed(w, t));
    REQUIRE(!ecs_set(w, in[2], k.pos, &(od_pos){1, 7}));
    CHECK_EQ_INT(od_tags(w, t, 1, tags, 16), 1);
    CHECK(ecs_query_changed(w, t));
    CHECK_EQ_INT(od_tags(w, t, 2, tags, 16), 1);
    CHECK(!ecs_query_changed(w, t));
    ecs_query_free(t);
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


/* ---- sorted iteration ---------------------------------------------------------- */
typedef struct so_key { int32_t k; } so_key;
static long so_compares;
static int so_cmp(ecs_entity a, const void *va, ecs_entity b, const void *vb, void *ctx) {
    (void)a; (void)b; (void)ctx;
    so_compares++;
    int32_t x = ((const so_key *)va)->k, y = ((const so_key *)vb)->k;
    return (x > y) - (x < y);
}
typedef struct so_ids { ecs_id key, a, b, layer[3]; } so_ids;
static uint64_t so_layer(const ecs_world *w, const ecs_id *ids, int n, void *ctx) {
    const so_ids *k = (const so_ids *)ctx;
    (void)w;
    for (int i = 0; i < n; i++)
        for (uint64_t l = 0; l < 3; l++) if (ids[i] == k->layer[l]) return 2 - l;   /* descending tag order */
    return 9;
}
typedef struct so_row { uint64_t group; int32_t k; ecs_entity e; } so_row;
static int so_row_cmp(const void *pa, const void *pb) {
    const so_row *a = (const so_row *)pa, *b = (const so_row *)pb;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    return (a->e > b->e) - (a->e < b->e);
}

/* The rows a sorted loop hands out, against qsort of the same rows read
   through an unsorted query; batches must be consecutive rows of a table. */
static bool so_check(ecs_world *w, ecs_query *sorted, ecs_query *plain, const so_ids *k, bool grouped, so_row *got,
                     so_row *want, int cap) {
    int n = 0, m = 0;
    for (ecs_iter it = ecs_query_iter(w, plain); ecs_query_next(&it);) {
        const so_key *v = ECS_FIELD(&it, so_key, 0);
        for (int i = 0; i < it.count && m < cap; i++, m++) {
            const ecs_id *ids = NULL;
            int c = ecs_entity_ids(w, it.entities[i], &ids);
            want[m].group = grouped ? so_layer(w, ids, c, (void *)k) : 0;
            want[m].k = v[i].k;
            want[m].e = it.entities[i];
        }
    }
    qsort(want, (size_t)m, sizeof *want, so_row_cmp);
    bool ok = true;
    for (ecs_iter it = ecs_query_iter(w, sorted); ecs_query_next(&it);) {
        const so_key *v = ECS_FIELD(&it, so_key, 0);
        for (int i = 0; i < it.count && n < cap; i++, n++) {
            got[n].group = ecs_iter_group(&it);
            got[n].k = v[i].k;
            got[n].e = it.entities[i];
            if (i && (const void *)&v[i] != (const void *)ecs_get(w, it.entities[i], k->key)) ok = false;
        }
    }
    if (n != m) { fprintf(stderr, "  sorted loop: %d rows, model %d\n", n, m); return false; }
    for (int i = 0; i < n; i++)
        if (got[i].e != want[i].e || got[i].k != want[i].k || got[i].group != want[i].group) {
            fprintf(stderr, "  row %d: got %llx k %d g %llu, want %llx k %d g %llu\n", i, (unsigned long long)got[i].e,
                    got[i].k, (unsigned long long)got[i].group, (unsigned long long)want[i].e, want[i].k,
                    (unsigned long long)want[i].group);
            return false;
        }
    if (!ok) fprintf(stderr, "  a batch's rows are not consecutive rows of one table\n");
    return ok;
}

static ecs_world *so_world(so_ids *k, int threads) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!w) return NULL;
    k->key = ECS_COMPONENT(w, so_key);
    k->a = ecs_component(w, "SA", 0, 0);
    k->b = ecs_component(w, "SB", 0, 0);
    k->layer[0] = ecs_component(w, "SL0", 0, 0);
    k->layer[1] = ecs_component(w, "SL1", 0, 0);
    k->layer[2] = ecs_component(w, "SL2", 0, 0);
    return w;
}

/* Random sets, ecs_get_mut writes, tag moves, creates and destroys between
   loops; every loop checked against qsort, with and without group_by. */
TEST(sort_against_qsort) {
    enum { CAP = 4096 };
    static so_row got[CAP], want[CAP];
    for (int grouped = 0; grouped < 2; grouped++) {
        so_ids k;
        ecs_world *w = so_world(&k, 1);
        REQUIRE(w);
        unsigned long long rng = test_g.seed + 77 + (unsigned long long)grouped;
        ecs_entity ents[1200];
        int n = 0;
        for (; n < 600; n++) {
            ents[n] = ecs_create(w);
            ecs_set(w, ents[n], k.key, &(so_key){(int32_t)test_below(&rng, 200)});
            if (test_below(&rng, 2)) ecs_add(w, ents[n], k.a);
            if (test_below(&rng, 3) == 0) ecs_add(w, ents[n], k.layer[test_below(&rng, 3)]);
        }
        ecs_query *sorted = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}, .order_by = k.key,
            .compare = so_cmp, .group_by = grouped ? so_layer : NULL, .group_ctx = &k});
        ecs_query *plain = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}});
        REQUIRE(sorted && plain);
        int rounds = (int)test_scaled(300, 40);
        for (int r = 0; r < rounds; r++) {
            int ops = test_below(&rng, 4) == 0 ? 0 : 1 + (int)test_below(&rng, 12);
            for (int o = 0; o < ops; o++) {
                ecs_entity e = ents[test_below(&rng, (unsigned)n)];
                if (!ecs_is_alive(w, e)) continue;
                switch (test_below(&rng, 7)) {
                case 0: ecs_set(w, e, k.key, &(so_key){(int32_t)test_below(&rng, 200)}); break;
                case 1: { so_key *p = (so_key *)ecs_get_mut(w, e, k.key); if (p) p->k = (int32_t)test_below(&rng, 200); break; }
                case 2: ecs_has(w, e, k.a) ? ecs_remove(w, e, k.a) : ecs_add(w, e, k.a); break;
                case 3: ecs_add(w, e, k.layer[test_below(&rng, 3)]); break;
                case 4: ecs_destroy(w, e); break;
                case 5: if (n < 1200) { ents[n] = ecs_create(w); ecs_set(w, ents[n++], k.key, &(so_key){(int32_t)test_below(&rng, 200)}); } break;
                default: ecs_has(w, e, k.key) ? ecs_remove(w, e, k.key) : ecs_set(w, e, k.key, &(so_key){5}); break;
                }
            }
            if (r % 7 == 3) {   /* an empty matching table (no stamps): the matches move under the order */
                ecs_id ids[3] = {k.key, k.layer[test_below(&rng, 3)], test_below(&rng, 2) ? k.b : k.a};
                (void)ecs_create_many(w, 0, ids, 3, NULL);
            }
            if (!so_check(w, sorted, plain, &k, grouped != 0, got, want, CAP)) {
                CHECKF(0, "round %d (grouped %d) differs from qsort", r, grouped);
                break;
            }
        }
        ecs_query_free(sorted);
        ecs_query_free(plain);
        ecs_world_free(w);
    }
}

/* With nothing changed a loop calls compare never; after one key changed,
   about twice log2 of the rows. */
TEST(sort_work_follows_changes) {
    so_ids k;
    ecs_world *w = so_world(&k, 1);
    REQUIRE(w);
    ecs_entity e[4096];
    for (int i = 0; i < 4096; i++) {
        e[i] = ecs_create(w);
        ecs_set(w, e[i], k.key, &(so_key){(int32_t)((i * 7919) % 4096)});
        if (i % 2) ecs_add(w, e[i], k.a);
    }
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}, .order_by = k.key, .compare = so_cmp});
    REQUIRE(q);
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {}
    so_compares = 0;
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) batches++;
    CHECK_EQ_INT(so_compares, 0);
    CHECK(batches > 1);
    ecs_set(w, e[100], k.key, &(so_key){-5});
    so_compares = 0;
    ecs_iter it = ecs_query_iter(w, q);
    REQUIRE(ecs_query_next(&it));
    CHECK(it.entities[0] == e[100] && it.count == 1);
    ecs_iter_fini(&it);
    CHECKF(so_compares <= 2 * 13 + 4, "%ld compares for one changed key of 4096", so_compares);
    ecs_query_free(q);
    ecs_world_free(w);
}

/* A loop of a sorted query inside systems: refused in an ordinary one,
   allowed in a MAIN_THREAD one. */
typedef struct so_try { ecs_query *q; int rows; ecs_result err; } so_try;
static void so_loop_in_system(ecs_iter *it) {
    so_try *t = (so_try *)it->ctx;
    t->rows = 0;
    ecs_iter in = ecs_query_iter(it->world, t->q);
    while (ecs_query_next(&in)) t->rows += in.count;
}

/* A sorted loop opened inside a batch that wrote the order key through its
   fields (stamped only when the batch ends): it compares the tables with
   their shadows and follows the new keys, outside frames (a user loop) and
   in a MAIN_THREAD system writing the key through its own term. */
typedef struct so_flip { ecs_query *q; int32_t first, rows; } so_flip;
static int32_t so_first(ecs_world *w, ecs_query *q, int *rows) {
    int32_t first = -1;
    *rows = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        if (first < 0) first = ECS_FIELD(&it, so_key, 0)[0].k;
        *rows += it.count;
    }
    return first;
}
static void so_flip_sys(ecs_iter *it) {
    so_flip *f = (so_flip *)it->ctx;
    so_key *key = ECS_FIELD(it, so_key, 0);
    for (int i = 0; i < it->count; i++) key[i].k = 1000 - key[i].k;
    int rows = 0;
    f->first = so_first(it->world, f->q, &rows);
    f->rows += rows;
}
TEST(sort_inside_a_writing_batch) {
    so_ids k;
    ecs_world *w = so_world(&k, 1);
    REQUIRE(w);
    for (int i = 1; i <= 20; i++) ecs_set(w, ecs_create(w), k.key, &(so_key){i});
    ecs_query *sorted = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}, .order_by = k.key,
                                                           .compare = so_cmp});
    ecs_query *writer = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_W(k.key)}});
    REQUIRE(sorted && writer);
    int rows = 0;
    CHECK(so_first(w, sorted, &rows) == 1 && rows == 20);
    for (ecs_iter it = ecs_query_iter(w, writer); ecs_query_next(&it);) {   /* keys flipped, then sorted */
        so_key *key = ECS_FIELD(&it, so_key, 0);
        for (int i = 0; i < it.count; i++) key[i].k = 1000 - key[i].k;
        CHECK_EQ_INT(so_first(w, sorted, &rows), 980);
        CHECK_EQ_INT(rows, 20);
    }
    CHECK_EQ_INT(so_first(w, sorted, &rows), 980);
    /* in a MAIN_THREAD system that writes the key through its term */
    static so_flip f;
    f.q = sorted;
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "flip", .fn = so_flip_sys, .ctx = &f,
                                                  .terms = {ECS_TERM_W(k.key)}, .flags = ECS_SYSTEM_MAIN_THREAD}));
    REQUIRE(ecs_progress(w, 0.f) == ECS_OK);
    CHECK_EQ_INT(f.first, 1);
    CHECK_EQ_INT(f.rows, 20);
    REQUIRE(ecs_progress(w, 0.f) == ECS_OK);
    CHECK_EQ_INT(f.first, 980);
    ecs_query_free(sorted);
    ecs_query_free(writer);
    ecs_world_free(w);
}

/* order_by a tag: no keys, so compare orders by handle alone (here newest
   first), over tables that interleave. */
static int od_newest_first(ecs_entity a, const void *ka, ecs_entity b, const void *kb, void *ctx) {
    (void)ctx;
    return ka || kb ? 99 : (a < b) - (a > b);
}
TEST(sort_by_tag) {
    od_ids k;
    ecs_world *w = od_world(&k, 1);
    REQUIRE(w);
    ecs_entity made[40];
    for (int i = 0; i < 40; i++) {
        made[i] = ecs_create(w);
        REQUIRE(!ecs_add(w, made[i], k.extra) && !ecs_add(w, made[i], k.layer[i % 3]));
    }
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.extra)}, .order_by = k.extra,
                                                      .compare = od_newest_first});
    REQUIRE(q);
    int n = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++, n++) CHECKF(n < 40 && it.entities[i] == made[39 - n], "row %d", n);
    CHECK_EQ_INT(n, 40);
    ecs_world_free(w);
}

static int od_by_y(ecs_entity a, const void *ka, ecs_entity b, const void *kb, void *ctx) {
    (void)a; (void)b; (void)ctx;
    float x = ((const od_pos *)ka)->y, y = ((const od_pos *)kb)->y;
    return (x > y) - (x < y);
}

/* A last row leaving a table stamps nothing (the rows left did not
   change), yet the order must drop it: destroyed, or moved out by a remove. */
TEST(sort_last_row_leaves) {
    od_ids k;
    ecs_world *w = od_world(&k, 1);
    REQUIRE(w);
    ecs_entity e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = ecs_create(w);
        REQUIRE(!ecs_set(w, e[i], k.pos, &(od_pos){(float)i, (float)(6 - i)}));
        if (i >= 3) REQUIRE(!ecs_add(w, e[i], k.extra));
    }
    od_spawn(w, &k, 1, 9, k.layer[2], 0);   /* the tables a remove leads to exist already: no table */
    od_spawn(w, &k, 1, 9, k.layer[2], k.extra);   /* birth (which re-sorts anyway) hides anything */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos), ECS_TERM_NOT(k.layer[2])},
                                                      .order_by = k.pos, .compare = od_by_y});
    REQUIRE(q);
    for (int round = 0; round < 3; round++) {
        int n = 0;
        float last = -1;
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
            for (int i = 0; i < it.count; i++, n++) {
                CHECKF(ecs_is_alive(w, it.entities[i]) && !ecs_has(w, it.entities[i], k.layer[2]),
                       "round %d: row %d is gone", round, n);
                const od_pos *p = ECS_FIELD(&it, od_pos, 0);
                CHECK(p[i].y >= last);
                last = p[i].y;
            }
        CHECK_EQ_INT(n, 6 - round * 2);
        REQUIRE(!ecs_destroy(w, e[2 + round]));                /* the last row of its table */
        REQUIRE(!ecs_add(w, e[5 - round], k.layer[2]));        /* moved out of the last row */
        if (round == 1) break;
    }
    ecs_world_free(w);
}

TEST(sort_bad_input_and_rules) {
    so_ids k;
    ecs_world *w = so_world(&k, 2);
    REQUIRE(w);
    for (int i = 0; i < 10; i++) {
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, k.key, &(so_key){10 - i});
    }
    CHECK(!ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}, .compare = so_cmp}));
    CHECK(!ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}, .order_by = k.key}));
    CHECK(!ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_OPT(k.key)}, .order_by = k.key, .compare = so_cmp}));
    CHECK(!ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.a)}, .order_by = k.key, .compare = so_cmp}));
    CHECK(!ecs_query_new(w, &(ecs_query_desc){.terms = {{k.key, ECS_READ, ECS_CHANGED}}, .order_by = k.key,
                                               .compare = so_cmp}));
    CHECK(strstr(ecs_last_error(w), "ECS_CHANGED") != NULL);
    CHECK(!ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key), {k.a, ECS_READ, ECS_CHANGED}},
                                               .order_by = k.key, .compare = so_cmp}));
    CHECK(!ecs_system_add(w, &(ecs_system_desc){.name = "chunked", .fn = so_loop_in_system, .chunk_size = 4,
                                                 .terms = {ECS_TERM_R(k.key)}, .order_by = k.key, .compare = so_cmp}));
    CHECK(strstr(ecs_last_error(w), "chunked") != NULL);
    /* a system's order and groups are checked as a query's, under its own call */
    CHECK(!ecs_system_add(w, &(ecs_system_desc){.name = "no_terms", .fn = so_loop_in_system, .order_by = k.key,
                                                 .compare = so_cmp}));
    CHECK(strstr(ecs_last_error(w), "ecs_system_add: order_by") && !strstr(ecs_last_error(w), "memory"));
    CHECK(!ecs_system_add(w, &(ecs_system_desc){.name = "not_a_term", .fn = so_loop_in_system, .order_by = k.a,
                                                 .compare = so_cmp, .terms = {ECS_TERM_R(k.key)}}));
    CHECK(strstr(ecs_last_error(w), "ecs_system_add: order_by") && !strstr(ecs_last_error(w), "memory"));
    CHECK(!ecs_system_add(w, &(ecs_system_desc){.name = "half", .fn = so_loop_in_system, .compare = so_cmp,
                                                 .terms = {ECS_TERM_R(k.key)}}));
    CHECK(strstr(ecs_last_error(w), "ecs_system_add") && strstr(ecs_last_error(w), "pair"));
    CHECK(!ecs_system_add(w, &(ecs_system_desc){.name = "groups", .fn = so_loop_in_system, .group_by = od_layer}));
    CHECK(strstr(ecs_last_error(w), "ecs_system_add") && strstr(ecs_last_error(w), "group_by"));
    CHECK(ecs_system_count(w) == 0);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.key)}, .order_by = k.key, .compare = so_cmp});
    REQUIRE(q);
    /* one loop at a time; its tables locked while it is open */
    ecs_iter a = ecs_query_iter(w, q);
    REQUIRE(ecs_query_next(&a));
    CHECK(((const so_key *)ecs_field(&a, 0))->k == 1);
    ecs_iter b = ecs_query_iter(w, q);
    CHECK(!ecs_query_next(&b) && strstr(ecs_last_error(w), "open"));
    ecs_entity other = a.entities[0];
    CHECK(ecs_add(w, other, k.b) == ECS_ERR_BUSY && ecs_create(w) != 0);
    CHECK(ecs_set(w, other, k.key, &(so_key){50}) == ECS_OK);   /* values may change: the next loop sorts */
    ecs_iter_fini(&a);
    CHECK(ecs_add(w, other, k.b) == ECS_OK);
    int first = -1, rows = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        if (first < 0) first = ((const so_key *)ecs_field(&it, 0))->k;
        rows += it.count;
    }
    CHECK(first == 2 && rows == 10);
    /* in systems */
    static so_try t1, t2;
    t1.q = t2.q = q;
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "ordinary", .fn = so_loop_in_system, .ctx = &t1,
                                                  .reads = {k.key}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "main", .fn = so_loop_in_system, .ctx = &t2,
                                                  .reads = {k.key}, .flags = ECS_SYSTEM_MAIN_THREAD}));
    (void)ecs_progress(w, 0.f);
    CHECK(t1.rows == 0 && t2.rows == 10);
    ecs_query_free(q);
    ecs_world_free(w);
}

/* A sorted system after a chunked writer of the keys: its batches in order
   each frame, the same at 1, 2, 3 and 8 threads and after a restore. */
typedef struct so_rec { ecs_entity order[512]; int n; int32_t last; bool sorted; } so_rec;
static void so_shuffle(ecs_iter *it) {
    so_key *v = ECS_FIELD(it, so_key, 0);
    for (int i = 0; i < it->count; i++)
        if ((it->entities[i] + (ecs_entity)it->chunk) % 3 == 0) v[i].k = (v[i].k * 37 + 11) % 101;
}
static void so_record(ecs_iter *it) {
    so_rec *r = (so_rec *)it->ctx;
    const so_key *v = ECS_FIELD(it, so_key, 0);
    if (it->batch == 0) { r->n = 0; r->last = INT32_MIN; r->sorted = true; }
    for (int i = 0; i < it->count; i++) {
        if (v[i].k < r->last) r->sorted = false;
        r->last = v[i].k;
        if (r->n < 512) r->order[r->n++] = it->entities[i];
    }
}
static uint64_t so_sched_run(int threads, bool restore, bool *ok) {
    so_ids k;
    ecs_world *w = so_world(&k, threads);
    if (!w) return 0;
    for (int i = 0; i < 300; i++) {
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, k.key, &(so_key){(i * 31) % 101});
        if (i % 3) ecs_add(w, e, i % 3 == 1 ? k.a : k.b);
    }
    static so_rec rec;
    memset(&rec, 0, sizeof rec);
    ecs_system_add(w, &(ecs_system_desc){.name = "shuffle", .fn = so_shuffle, .terms = {ECS_TERM_W(k.key)}, .chunk_size = 32});
    ecs_system_add(w, &(ecs_system_desc){.name = "record", .fn = so_record, .ctx = &rec, .after = {"shuffle"},
                                         .terms = {ECS_TERM_R(k.key)}, .order_by = k.key, .compare = so_cmp});
    uint64_t h = 1469598103934665603ull;
    ecs_snapshot *s = NULL;
    for (int f = 0; f < 12; f++) {
        if (restore && f == 6) s = ecs_snapshot_take(w);
        if (ecs_progress(w, 0.f)) *ok = false;
        if (!rec.sorted || rec.n != 300) *ok = false;
        for (int i = 0; i < rec.n; i++) h = (h ^ rec.order[i]) * 1099511628211ull;
    }
    if (s) {
        h = 1469598103934665603ull;
        if (ecs_snapshot_restore(w, s)) *ok = false;
        for (int f = 6; f < 12; f++) {
            (void)ecs_progress(w, 0.f);
            if (!rec.sorted || rec.n != 300) *ok = false;
            for (int i = 0; i < rec.n; i++) h = (h ^ rec.order[i]) * 1099511628211ull;
        }
        ecs_snapshot_free(s);
    }
    ecs_world_free(w);
    return h;
}

TEST(sched_sorted_system) {
    bool ok = true;
    uint64_t h1 = so_sched_run(1, false, &ok);
    CHECK(ok);
    const int threads[] = {2, 3, 8};
    for (int i = 0; i < 3; i++) {
        uint64_t h = so_sched_run(threads[i], false, &ok);
        CHECKF(ok && h == h1, "%d threads: %llx vs %llx", threads[i], (unsigned long long)h, (unsigned long long)h1);
    }
    /* the second half again after a restore: the same orders as a run that recorded only that half */
    bool ok2 = true;
    uint64_t hr = so_sched_run(3, true, &ok2), hr1 = so_sched_run(1, true, &ok2);
    CHECK(ok2 && hr == hr1);
}

/* An EXCLUSIVE grouped system that makes a table of a lower group during its
   run: its batches go on after the table it is in, none twice. */
typedef struct od_excl { od_ids *k; float seen[16]; int n; } od_excl;
static void od_excl_run(ecs_iter *it) {
    od_excl *x = (od_excl *)it->ctx;
    if (x->n < 16) x->seen[x->n] = ECS_FIELD(it, od_pos, 0)[0].x;
    if (x->n++ == 0) {
        ecs_id ids[3] = {x->k->pos, x->k->layer[0], x->k->extra};
        (void)ecs_create_many(it->world, 0, ids, 3, NULL);
    }
}

TEST(group_exclusive_makes_tables) {
    od_ids k;
    ecs_world *w = od_world(&k, 2);
    REQUIRE(w);
    od_spawn(w, &k, 2, 1, k.layer[1], 0);
    od_spawn(w, &k, 2, 2, k.layer[2], 0);
    static od_excl x;
    memset(&x, 0, sizeof x);
    x.k = &k;
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "excl", .fn = od_excl_run, .ctx = &x,
        .flags = ECS_SYSTEM_EXCLUSIVE, .terms = {ECS_TERM_R(k.pos)}, .group_by = od_layer, .group_ctx = &k}));
    REQUIRE(!ecs_progress(w, 0.f));
    CHECK_EQ_INT(x.n, 2);   /* L1, then L2 (the {pos} table they passed through is empty) */
    CHECK(x.seen[0] == 1 && x.seen[1] == 2);
    ecs_world_free(w);
}

void suite_order(void) {
    RUN(group_order_and_restriction);
    RUN(group_order_after_restore);
    RUN(group_loops_mark_their_group);
    RUN(sched_group_systems);
    RUN(group_exclusive_makes_tables);
    RUN(sort_against_qsort);
    RUN(sort_work_follows_changes);
    RUN(sort_bad_input_and_rules);
    RUN(sort_by_tag);
    RUN(sort_inside_a_writing_batch);
    RUN(sort_last_row_leaves);
    RUN(sched_sorted_system);
}
