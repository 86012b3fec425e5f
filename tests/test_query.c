/* query tests: AND/NOT/OPTIONAL matching, ecs_field, the table cache,
   deterministic order, and the lock against structural changes. */
#include "test.h"

typedef struct qw { ecs_world *w; ecs_id a, b, c, t; } qw;

/* A world with int components A, B, C and a tag T. */
static int qw_init(qw *q) {
    q->w = ecs_world_new(NULL);
    if (!q->w) return 0;
    q->a = ecs_component(q->w, "A", sizeof(int), 0);
    q->b = ecs_component(q->w, "B", sizeof(int), 0);
    q->c = ecs_component(q->w, "C", sizeof(int), 0);
    q->t = ecs_component(q->w, "T", 0, 0);
    return q->a && q->b && q->c && q->t;
}

/* An entity holding the given ids, each int component set to val. */
static ecs_entity qw_make(qw *q, int val, int has_a, int has_b, int has_c, int has_t) {
    ecs_entity e = ecs_create(q->w);
    int ok = e != 0;
    if (has_a) ok &= ecs_set(q->w, e, q->a, &val) == ECS_OK;
    if (has_b) ok &= ecs_set(q->w, e, q->b, &val) == ECS_OK;
    if (has_c) ok &= ecs_set(q->w, e, q->c, &val) == ECS_OK;
    if (has_t) ok &= ecs_add(q->w, e, q->t) == ECS_OK;
    return ok ? e : 0;
}

TEST(query_and_not_optional_across_tables) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    /* tables {A} {A,B} {A,C} {A,B,C} {B} {C} {}, two entities each; value =
       10 * table + copy */
    const int has[7][3] = {{1, 0, 0}, {1, 1, 0}, {1, 0, 1}, {1, 1, 1}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};
    for (int k = 0; k < 2; k++)
        for (int t = 0; t < 7; t++)
            REQUIRE(qw_make(&q, 10 * t + k, has[t][0], has[t][1], has[t][2], 0));
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {
        {q.a, ECS_READ, ECS_AND}, {q.b, ECS_READ, ECS_NOT}, {q.c, ECS_WRITE, ECS_OPTIONAL}}});
    REQUIRE(qr);
    int seen[7] = {0}, batches = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        batches++;
        const int *fa = ECS_FIELD(&it, int, 0);
        const int *fc = ECS_FIELD(&it, int, 2);
        REQUIRE(fa);
        CHECK(ecs_field(&it, 1) == NULL);
        for (int r = 0; r < it.count; r++) {
            int t = fa[r] / 10;
            CHECK(t == 0 || t == 2);
            if (t < 0 || t >= 7) continue;
            seen[t]++;
            CHECK(ecs_has(w, it.entities[r], q.a));
            CHECK(!ecs_has(w, it.entities[r], q.b));
            if (ecs_has(w, it.entities[r], q.c)) CHECK(fc && fc[r] == fa[r]);
            else CHECK(fc == NULL);
        }
    }
    CHECK_EQ_INT(batches, 2);
    CHECK_EQ_INT(seen[0], 2);
    CHECK_EQ_INT(seen[2], 2);
    CHECK_EQ_INT(ecs_query_count(w, qr), 4);

    ecs_query *ab = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, ECS_AND}, {q.b, 0, ECS_AND}}});
    REQUIRE(ab);
    int rows = 0;
    for (ecs_iter it = ecs_query_iter(w, ab); ecs_query_next(&it);) {
        const int *fa = ECS_FIELD(&it, int, 0), *fb = ECS_FIELD(&it, int, 1);
        REQUIRE(fa && fb);
        for (int r = 0; r < it.count; r++, rows++) {
            CHECK(fa[r] == fb[r]);
            CHECK(fa[r] / 10 == 1 || fa[r] / 10 == 3);
        }
    }
    CHECK_EQ_INT(rows, 4);

    ecs_query *notall = ecs_query_new(w, &(ecs_query_desc){.terms = {
        {q.a, 0, ECS_NOT}, {q.b, 0, ECS_NOT}, {q.c, 0, ECS_NOT}}});
    REQUIRE(notall);
    CHECK_EQ_INT(ecs_query_count(w, notall), 2);   /* only the {} entities */
    ecs_query_free(notall);
    ecs_query_free(ab);
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_field_null_cases) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_id d = ecs_component(w, "D", sizeof(int), 0);
    REQUIRE(d);
    REQUIRE(qw_make(&q, 1, 1, 0, 1, 1));
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {
        {q.a, ECS_READ, ECS_AND}, {q.t, ECS_READ, ECS_AND}, {q.b, ECS_READ, ECS_NOT},
        {d, ECS_READ, ECS_OPTIONAL}, {q.c, ECS_READ, ECS_OPTIONAL}}});
    REQUIRE(qr);
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        batches++;
        CHECK_EQ_INT(it.count, 1);
        CHECK(ecs_field(&it, 0) != NULL);
        CHECK(ecs_field(&it, 1) == NULL);             /* tag */
        CHECK(ecs_field(&it, 2) == NULL);             /* NOT */
        CHECK(ecs_field(&it, 3) == NULL);             /* OPTIONAL, missing */
        CHECK(ecs_field(&it, 4) != NULL);             /* OPTIONAL, present */
        CHECK(ecs_field(&it, 5) == NULL);             /* past the last term */
        CHECK(ecs_field(&it, ECS_MAX_TERMS - 1) == NULL);
        CHECK(ecs_field(&it, ECS_MAX_TERMS) == NULL);
        CHECK(ecs_field(&it, 1000) == NULL);
        CHECK(ecs_field(&it, -1) == NULL);
    }
    CHECK_EQ_INT(batches, 1);
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_terms_end_at_first_zero_id) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    REQUIRE(qw_make(&q, 1, 1, 0, 0, 0));
    REQUIRE(qw_make(&q, 2, 1, 1, 0, 0));
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, 0}, {0, 0, 0}, {q.b, 0, ECS_AND}}});
    REQUIRE(qr);
    CHECK_EQ_INT(ecs_query_count(w, qr), 2);   /* the B term is not part of the query */
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        CHECK(ecs_field(&it, 0) != NULL);
        CHECK(ecs_field(&it, 1) == NULL);
        CHECK(ecs_field(&it, 2) == NULL);
    }
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_made_before_tables_sees_them) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, 0}, {q.b, 0, 0}}});
    REQUIRE(qr);
    CHECK_EQ_INT(ecs_query_count(w, qr), 0);
    int n = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) n++;
    CHECK_EQ_INT(n, 0);
    REQUIRE(qw_make(&q, 1, 1, 1, 0, 0));
    REQUIRE(qw_make(&q, 2, 1, 1, 1, 0));
    REQUIRE(qw_make(&q, 3, 1, 0, 1, 0));
    REQUIRE(qw_make(&q, 4, 0, 1, 1, 0));
    CHECK_EQ_INT(ecs_query_count(w, qr), 2);
    int sum = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        const int *fa = ECS_FIELD(&it, int, 0);
        REQUIRE(fa);
        for (int r = 0; r < it.count; r++) sum += fa[r];
    }
    CHECK_EQ_INT(sum, 1 + 2);
    /* a table made after the first iteration joins too */
    REQUIRE(qw_make(&q, 5, 1, 1, 0, 1));
    CHECK_EQ_INT(ecs_query_count(w, qr), 3);
    sum = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        const int *fa = ECS_FIELD(&it, int, 0);
        REQUIRE(fa);
        for (int r = 0; r < it.count; r++) sum += fa[r];
    }
    CHECK_EQ_INT(sum, 1 + 2 + 5);
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_count_tracks_changes) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, 0}, {q.t, 0, ECS_NOT}}});
    REQUIRE(qr);
    ecs_entity e[6];
    for (int i = 0; i < 6; i++) REQUIRE(e[i] = qw_make(&q, i, 1, i % 2, 0, 0));
    CHECK_EQ_INT(ecs_query_count(w, qr), 6);
    CHECK_EQ_INT(ecs_add(w, e[0], q.t), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, e[1]), ECS_OK);
    CHECK_EQ_INT(ecs_remove(w, e[2], q.a), ECS_OK);
    CHECK_EQ_INT(ecs_query_count(w, qr), 3);
    int rows = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) rows += it.count;
    CHECK_EQ_INT(rows, 3);
    ecs_query_free(qr);
    ecs_world_free(w);
}

/* The same calls on two worlds: the same handles in the same order. */
static void order_script(qw *q, ecs_entity *keep) {
    ecs_entity e[40];
    for (int i = 0; i < 40; i++) e[i] = qw_make(q, i, i % 2, i % 3 == 0, i % 5 == 0, i % 7 == 0);
    for (int i = 0; i < 40; i += 6) ecs_destroy(q->w, e[i]);
    for (int i = 1; i < 40; i += 4) ecs_add(q->w, e[i], q->c);
    for (int i = 3; i < 40; i += 5) ecs_remove(q->w, e[i], q->a);
    ecs_create_many(q->w, 5, (ecs_id[]){q->b, q->a}, 2, NULL);
    for (int i = 0; i < 10; i++) qw_make(q, 100 + i, 1, 0, 0, 0);   /* reuses freed slots */
    *keep = e[1];
}
typedef struct trace { ecs_entity h[200]; int counts[50]; int n, batches; } trace;
static void order_trace(ecs_world *w, ecs_query *qr, trace *t) {
    memset(t, 0, sizeof *t);
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        if (t->batches < 50) t->counts[t->batches] = it.count;
        t->batches++;
        for (int r = 0; r < it.count; r++) if (t->n < 200) t->h[t->n++] = it.entities[r];
    }
}

TEST(query_order_is_deterministic) {
    qw q1, q2;
    REQUIRE(qw_init(&q1));
    REQUIRE(qw_init(&q2));
    ecs_entity k1, k2;
    order_script(&q1, &k1);
    order_script(&q2, &k2);
    CHECK(k1 == k2);
    ecs_query *all1 = ecs_query_new(q1.w, &(ecs_query_desc){.terms = {{0}}});
    ecs_query *all2 = ecs_query_new(q2.w, &(ecs_query_desc){.terms = {{0}}});
    ecs_query *a1 = ecs_query_new(q1.w, &(ecs_query_desc){.terms = {{q1.a, 0, 0}, {q1.c, 0, ECS_OPTIONAL}}});
    ecs_query *a2 = ecs_query_new(q2.w, &(ecs_query_desc){.terms = {{q2.a, 0, 0}, {q2.c, 0, ECS_OPTIONAL}}});
    REQUIRE(all1 && all2 && a1 && a2);
    static trace t1, t2, t3;
    order_trace(q1.w, all1, &t1);
    order_trace(q2.w, all2, &t2);
    CHECK(t1.n > 0);
    CHECK_EQ_INT(t1.n, ecs_count(q1.w));
    CHECK_EQ_INT(t1.n, t2.n);
    CHECK_EQ_INT(t1.batches, t2.batches);
    CHECK(!memcmp(t1.h, t2.h, sizeof t1.h));
    CHECK(!memcmp(t1.counts, t2.counts, sizeof t1.counts));
    order_trace(q1.w, all1, &t3);                   /* and again on the same world */
    CHECK(!memcmp(t1.h, t3.h, sizeof t1.h));
    order_trace(q1.w, a1, &t1);
    order_trace(q2.w, a2, &t2);
    CHECK(t1.n > 0);
    CHECK_EQ_INT(t1.n, t2.n);
    CHECK(!memcmp(t1.h, t2.h, sizeof t1.h));
    CHECK(!memcmp(t1.counts, t2.counts, sizeof t1.counts));
    ecs_query_free(all1); ecs_query_free(all2); ecs_query_free(a1); ecs_query_free(a2);
    ecs_world_free(q1.w);
    ecs_world_free(q2.w);
}

/* Batches come in table creation order, rows in insertion order. */
TEST(query_order_is_table_creation_then_row) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_entity x = qw_make(&q, 1, 0, 1, 0, 0);          /* makes {B} */
    ecs_entity y = qw_make(&q, 2, 1, 0, 0, 0);          /* makes {A} */
    ecs_entity z = qw_make(&q, 3, 1, 1, 0, 0);          /* makes {A,B} */
    ecs_entity v = qw_make(&q, 4, 0, 0, 1, 0);          /* makes {C} */
    REQUIRE(x && y && z && v);
    CHECK_EQ_INT(ecs_add(w, v, q.b), ECS_OK);           /* makes {B,C} */
    ecs_entity u = qw_make(&q, 5, 0, 1, 0, 0);          /* joins {B} */
    REQUIRE(u);
    ecs_query *qb = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.b, 0, 0}}});
    REQUIRE(qb);
    ecs_entity want[5] = {x, u, z, v, 0};
    int counts[4] = {2, 1, 1, 0};
    int n = 0, b = 0;
    for (ecs_iter it = ecs_query_iter(w, qb); ecs_query_next(&it);) {
        CHECKF(b < 3 && it.count == counts[b], "batch %d has %d rows", b, it.count);
        b++;
        for (int r = 0; r < it.count; r++, n++) CHECKF(n < 4 && it.entities[r] == want[n], "row %d out of order", n);
    }
    CHECK_EQ_INT(b, 3);
    CHECK_EQ_INT(n, 4);
    ecs_query_free(qb);
    ecs_world_free(w);
}

TEST(query_skips_empty_tables) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_entity e[9];
    for (int i = 0; i < 9; i++) REQUIRE(e[i] = qw_make(&q, i, 1, i % 3 == 1, i % 3 == 2, 0));
    for (int i = 1; i < 9; i += 3) CHECK_EQ_INT(ecs_destroy(w, e[i]), ECS_OK);       /* empties {A,B} */
    for (int i = 2; i < 9; i += 3) CHECK_EQ_INT(ecs_remove(w, e[i], q.c), ECS_OK);   /* empties {A,C} */
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, 0}}});
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    REQUIRE(qr && all);
    int batches = 0, empty = 0, rows = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        batches++; rows += it.count;
        if (it.count <= 0) empty++;
    }
    CHECK_EQ_INT(empty, 0);
    CHECK_EQ_INT(batches, 1);
    CHECK_EQ_INT(rows, 6);
    batches = empty = 0;
    for (ecs_iter it = ecs_query_iter(w, all); ecs_query_next(&it);) {
        batches++;
        if (it.count <= 0) empty++;
    }
    CHECK_EQ_INT(empty, 0);
    CHECK_EQ_INT(batches, 1);
    ecs_query_free(all);
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_zero_terms_matches_every_entity) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_entity e[5];
    e[0] = ecs_create(w);
    e[1] = qw_make(&q, 1, 1, 0, 0, 0);
    e[2] = qw_make(&q, 2, 0, 0, 0, 1);
    e[3] = qw_make(&q, 3, 1, 1, 1, 1);
    e[4] = ecs_create(w);
    ecs_entity dead = qw_make(&q, 9, 1, 0, 0, 0);
    CHECK_EQ_INT(ecs_destroy(w, dead), ECS_OK);
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    REQUIRE(all);
    CHECK_EQ_INT(ecs_query_count(w, all), 5);
    int seen[5] = {0}, rows = 0;
    for (ecs_iter it = ecs_query_iter(w, all); ecs_query_next(&it);) {
        CHECK(ecs_field(&it, 0) == NULL);
        for (int r = 0; r < it.count; r++, rows++) {
            CHECK(it.entities[r] != dead);
            for (int i = 0; i < 5; i++) if (it.entities[r] == e[i]) seen[i]++;
        }
    }
    CHECK_EQ_INT(rows, 5);
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(seen[i], 1);
    ecs_query_free(all);
    ecs_world_free(w);
}

TEST(query_bad_desc_returns_null) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_id r = ecs_resource(w, "Res", 8, 0, NULL);
    REQUIRE(r);
    REQUIRE(qw_make(&q, 1, 1, 1, 0, 0));
    unsigned long long h = test_world_hash(w);
    ecs_id n = ecs_id_count(w);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, 0}, {999, 0, 0}}}) == NULL);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{n + 1, 0, 0}}}) == NULL);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{r, 0, 0}}}) == NULL);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, 0}, {r, 0, ECS_OPTIONAL}}}) == NULL);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, 0, (ecs_oper)7}}}) == NULL);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, (ecs_access)9, 0}}}) == NULL);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, (ecs_access)-1, 0}}}) == NULL);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_id_count(w), n);
    ecs_world_free(w);
}

/* While a batch of table {A} is out, nothing may change that table's rows. */
TEST(query_structural_change_while_iterating_is_busy) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    for (int i = 0; i < 3; i++) REQUIRE(qw_make(&q, i, 1, 0, 0, 0));   /* {A} */
    ecs_entity ac = qw_make(&q, 7, 1, 0, 1, 0);                         /* {A,C} */
    ecs_entity bare = ecs_create(w);                                    /* {} */
    REQUIRE(ac && bare);
    unsigned long long h = test_world_hash(w);
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, ECS_WRITE, 0}, {q.c, 0, ECS_NOT}}});
    REQUIRE(qr);
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        batches++;
        REQUIRE(it.count == 3);
        ecs_entity e = it.entities[1];
        CHECK_EQ_INT(ecs_destroy(w, e), ECS_ERR_BUSY);
        CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
        CHECK_EQ_INT(ecs_destroy(w, it.entities[2]), ECS_ERR_BUSY);
        CHECK_EQ_INT(ecs_add(w, e, q.b), ECS_ERR_BUSY);
        CHECK_EQ_INT(ecs_add(w, e, q.t), ECS_ERR_BUSY);
        CHECK_EQ_INT(ecs_remove(w, e, q.a), ECS_ERR_BUSY);
        CHECK_EQ_INT(ecs_set(w, e, q.b, &(int){5}), ECS_ERR_BUSY);   /* missing: structural */
        CHECK_EQ_INT(ecs_create_many(w, 2, (ecs_id[]){q.a}, 1, NULL), ECS_ERR_BUSY);
        /* moves into the locked table */
        CHECK_EQ_INT(ecs_add(w, bare, q.a), ECS_ERR_BUSY);
        CHECK_EQ_INT(ecs_set(w, bare, q.a, &(int){5}), ECS_ERR_BUSY);
        CHECK_EQ_INT(ecs_remove(w, ac, q.c), ECS_ERR_BUSY);
        CHECK_EQ_INT(it.count, 3);
        CHECK(ecs_is_alive(w, e));
        CHECK(!ecs_has(w, e, q.b));
        CHECK(ecs_has(w, e, q.a));
    }
    CHECK_EQ_INT(batches, 1);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_count(w), 5);
    /* the lock is gone once the iteration ends */
    ecs_entity first = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) first = it.entities[0];
    CHECK_EQ_INT(ecs_add(w, first, q.b), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, first), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 2, (ecs_id[]){q.a}, 1, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_add(w, bare, q.a), ECS_OK);
    CHECK_EQ_INT(ecs_remove(w, ac, q.c), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 6);
    ecs_query_free(qr);
    ecs_world_free(w);
}

/* A query with no terms iterates the table of entities without components,
   which is where ecs_create puts a new entity. */
TEST(query_create_while_iterating_empty_set_table_is_busy) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    REQUIRE(ecs_create(w) && ecs_create(w));
    unsigned long long h = test_world_hash(w);
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    REQUIRE(all);
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, all); ecs_query_next(&it);) {
        batches++;
        CHECK_EQ_INT(ecs_create(w), 0);
        CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
        CHECK_EQ_INT(ecs_create_many(w, 1, (ecs_id[]){q.a}, 0, NULL), ECS_ERR_BUSY);
    }
    CHECK_EQ_INT(batches, 1);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_count(w), 2);
    CHECK(ecs_create(w) != 0);
    ecs_query_free(all);
    ecs_world_free(w);
}

TEST(query_change_in_other_table_while_iterating_is_ok) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    for (int i = 0; i < 3; i++) REQUIRE(qw_make(&q, i, 1, 0, 0, 0));
    ecs_entity other = qw_make(&q, 7, 0, 0, 1, 0);      /* in {C} */
    ecs_entity gone = qw_make(&q, 8, 0, 0, 1, 0);
    REQUIRE(other && gone);
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, ECS_WRITE, 0}}});
    REQUIRE(qr);
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        batches++;
        CHECK_EQ_INT(ecs_set(w, other, q.b, &(int){9}), ECS_OK);   /* {C} -> {B,C} */
        CHECK_EQ_INT(ecs_destroy(w, gone), ECS_OK);
    }
    CHECK_EQ_INT(batches, 1);
    const int *b = (const int *)ecs_get(w, other, q.b);
    CHECK(b && *b == 9);
    CHECK(!ecs_is_alive(w, gone));
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_set_existing_component_while_iterating_is_ok) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    ecs_entity e[4];
    for (int i = 0; i < 4; i++) REQUIRE(e[i] = qw_make(&q, i, 1, 1, 0, 0));
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, ECS_WRITE, 0}, {q.b, ECS_WRITE, 0}}});
    REQUIRE(qr);
    for (ecs_iter it = ecs_query_iter(w, qr); ecs_query_next(&it);) {
        const int *fa = ECS_FIELD(&it, int, 0);
        REQUIRE(fa);
        for (int r = 0; r < it.count; r++) {
            int v = fa[r] + 100;
            CHECK_EQ_INT(ecs_set(w, it.entities[r], q.a, &v), ECS_OK);
            CHECK_EQ_INT(fa[r], v);                      /* same storage */
            int *mb = (int *)ecs_get_mut(w, it.entities[r], q.b);
            CHECK(mb != NULL);
            if (mb) *mb = -v;
        }
    }
    for (int i = 0; i < 4; i++) {
        const int *a = (const int *)ecs_get(w, e[i], q.a), *b = (const int *)ecs_get(w, e[i], q.b);
        CHECK(a && *a == i + 100);
        CHECK(b && *b == -(i + 100));
    }
    ecs_query_free(qr);
    ecs_world_free(w);
}

TEST(query_iter_fini_releases_lock) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    for (int i = 0; i < 3; i++) REQUIRE(qw_make(&q, i, 1, 0, 0, 0));
    for (int i = 0; i < 3; i++) REQUIRE(qw_make(&q, 10 + i, 1, 1, 0, 0));
    ecs_query *qr = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, ECS_WRITE, 0}}});
    REQUIRE(qr);
    ecs_iter it = ecs_query_iter(w, qr);
    REQUIRE(ecs_query_next(&it));
    REQUIRE(it.count == 3);
    ecs_entity e = it.entities[0];
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_ERR_BUSY);
    ecs_iter_fini(&it);                                   /* left early */
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    CHECK(!ecs_is_alive(w, e));
    CHECK_EQ_INT(ecs_count(w), 5);
    /* and a fresh iteration afterwards works from the start */
    int rows = 0;
    for (ecs_iter it2 = ecs_query_iter(w, qr); ecs_query_next(&it2);) rows += it2.count;
    CHECK_EQ_INT(rows, 5);
    ecs_query_free(qr);
    ecs_world_free(w);
}

/* The term macros are the long form: same terms, same batches. */
TEST(query_term_macros_are_the_long_form) {
    qw q;
    REQUIRE(qw_init(&q));
    ecs_world *w = q.w;
    const ecs_term r = ECS_TERM_R(q.a), wr = ECS_TERM_W(q.b), no = ECS_TERM_NOT(q.c), opt = ECS_TERM_OPT(q.t);
    CHECK(r.id == q.a && r.access == ECS_READ && r.oper == ECS_AND);
    CHECK(wr.id == q.b && wr.access == ECS_WRITE && wr.oper == ECS_AND);
    CHECK(no.id == q.c && no.access == ECS_READ && no.oper == ECS_NOT);
    CHECK(opt.id == q.t && opt.access == ECS_READ && opt.oper == ECS_OPTIONAL);
    for (int k = 0; k < 16; k++) REQUIRE(qw_make(&q, k, 1, k & 1, k & 2, k & 4));
    ecs_query *qs = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(q.a), ECS_TERM_NOT(q.c),
                                                                   ECS_TERM_OPT(q.b)}});
    ecs_query *ql = ecs_query_new(w, &(ecs_query_desc){.terms = {{q.a, ECS_READ, ECS_AND},
        {q.c, ECS_READ, ECS_NOT}, {q.b, ECS_READ, ECS_OPTIONAL}}});
    REQUIRE(qs && ql);
    int seen = 0, with_b = 0;
    ecs_iter is = ecs_query_iter(w, qs), il = ecs_query_iter(w, ql);
    for (;;) {
        bool ns = ecs_query_next(&is), nl = ecs_query_next(&il);
        CHECK(ns == nl);
        if (!ns || !nl) break;
        CHECK(is.count == il.count && is.entities[0] == il.entities[0]);
        CHECK((ecs_field(&is, 2) != NULL) == (ecs_field(&il, 2) != NULL));
        seen += is.count;
        with_b += ecs_field(&is, 2) ? is.count : 0;
    }
    CHECK(seen == 8 && with_b == 4);   /* the 8 without C, 4 of them with B */
    ecs_query_free(qs);
    ecs_query_free(ql);
    ecs_world_free(w);
}

void suite_query(void) {
    RUN(query_and_not_optional_across_tables);
    RUN(query_field_null_cases);
    RUN(query_terms_end_at_first_zero_id);
    RUN(query_made_before_tables_sees_them);
    RUN(query_count_tracks_changes);
    RUN(query_order_is_deterministic);
    RUN(query_order_is_table_creation_then_row);
    RUN(query_skips_empty_tables);
    RUN(query_zero_terms_matches_every_entity);
    RUN(query_bad_desc_returns_null);
    RUN(query_structural_change_while_iterating_is_busy);
    RUN(query_create_while_iterating_empty_set_table_is_busy);
    RUN(query_change_in_other_table_while_iterating_is_ok);
    RUN(query_set_existing_component_while_iterating_is_ok);
    RUN(query_iter_fini_releases_lock);
    RUN(query_term_macros_are_the_long_form);
}
