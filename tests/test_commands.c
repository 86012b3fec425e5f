/* command buffer and defer-mode tests: recording, pending handles, dropped
   commands, record-time errors, and structural changes while iterating. */
#include "test.h"

typedef struct cw { ecs_world *w; ecs_id a, b, t; } cw;

/* A world with int components A, B and a tag T. */
static int cw_init(cw *c) {
    c->w = ecs_world_new(NULL);
    if (!c->w) return 0;
    c->a = ecs_component(c->w, "A", sizeof(int), 0);
    c->b = ecs_component(c->w, "B", sizeof(int), 0);
    c->t = ecs_component(c->w, "T", 0, 0);
    return c->a && c->b && c->t;
}
static ecs_entity cw_make(cw *c, int a) {
    ecs_entity e = ecs_create(c->w);
    return e && ecs_set(c->w, e, c->a, &a) == ECS_OK ? e : 0;
}
static int get_int(const ecs_world *w, ecs_entity e, ecs_id id, int missing) {
    const int *p = (const int *)ecs_get(w, e, id);
    return p ? *p : missing;
}

TEST(commands_apply_in_recording_order) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 0), f = cw_make(&c, 0);
    REQUIRE(e && f);
    CHECK_EQ_INT(ecs_set(w, f, c.b, &(int){5}), ECS_OK);
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, c.a, &(int){1}), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, c.a, &(int){2}), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_add(cmd, e, c.b), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, c.b, &(int){3}), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_remove(cmd, e, c.b), ECS_OK);       /* e ends without B */
    CHECK_EQ_INT(ecs_cmd_remove(cmd, f, c.b), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_add(cmd, f, c.b), ECS_OK);          /* f ends with B zeroed */
    CHECK_EQ_INT(ecs_cmd_add(cmd, f, c.t), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_set(cmd, f, c.a, &(int){9}), ECS_OK);
    CHECK_EQ_INT(test_world_hash(w), h);                     /* recording changes nothing */
    CHECK_EQ_INT(get_int(w, e, c.a, -1), 0);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK_EQ_INT(get_int(w, e, c.a, -1), 2);
    CHECK(!ecs_has(w, e, c.b));
    CHECK_EQ_INT(get_int(w, f, c.b, -1), 0);
    CHECK(ecs_has(w, f, c.t));
    CHECK_EQ_INT(get_int(w, f, c.a, -1), 9);
    CHECK_EQ_INT(ecs_count(w), 2);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

TEST(commands_pending_create_then_add_and_set) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    REQUIRE(cw_make(&c, 1));
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    size_t n0 = ecs_count(w);
    ecs_entity p = ecs_cmd_create(cmd);
    CHECK(p != 0);
    CHECK(!ecs_is_alive(w, p));
    CHECK_EQ_INT(ecs_count(w), n0);
    CHECK_EQ_INT(ecs_cmd_set(cmd, p, c.b, &(int){7}), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_add(cmd, p, c.t), ECS_OK);
    ecs_entity p2 = ecs_cmd_create(cmd);
    CHECK(p2 != 0 && p2 != p);
    CHECK_EQ_INT(ecs_cmd_add(cmd, p2, c.b), ECS_OK);
    CHECK(!ecs_is_alive(w, p) && !ecs_is_alive(w, p2));
    CHECK_EQ_INT(ecs_count(w), n0);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), n0 + 2);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.b, 0, 0}}});
    REQUIRE(q);
    int rows = 0, with_tag = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        const int *fb = ECS_FIELD(&it, int, 0);
        REQUIRE(fb);
        for (int r = 0; r < it.count; r++, rows++) {
            ecs_entity e = it.entities[r];
            CHECK(ecs_is_alive(w, e));
            CHECK(!ecs_has(w, e, c.a));
            if (ecs_has(w, e, c.t)) { with_tag++; CHECK_EQ_INT(fb[r], 7); }
            else CHECK_EQ_INT(fb[r], 0);
        }
    }
    CHECK_EQ_INT(rows, 2);
    CHECK_EQ_INT(with_tag, 1);
    ecs_query_free(q);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

TEST(commands_pending_handle_of_other_buffer_rejected) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    REQUIRE(cw_make(&c, 1));
    ecs_commands *c1 = ecs_commands_new(w), *c2 = ecs_commands_new(w);
    REQUIRE(c1 && c2);
    ecs_entity p = ecs_cmd_create(c1);
    REQUIRE(p);
    CHECK_EQ_INT(ecs_cmd_add(c2, p, c.b), ECS_ERR_ARG);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_cmd_set(c2, p, c.b, &(int){1}), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_cmd_remove(c2, p, c.a), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_cmd_destroy(c2, p), ECS_ERR_ARG);
    unsigned long long h = test_world_hash(w);
    size_t d0 = ecs_commands_dropped(w);
    CHECK_EQ_INT(ecs_commands_apply(w, c2), ECS_OK);          /* nothing was recorded */
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0);
    CHECK_EQ_INT(ecs_cmd_set(c1, p, c.b, &(int){4}), ECS_OK);   /* its own buffer is fine */
    CHECK_EQ_INT(ecs_commands_apply(w, c1), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 2);
    ecs_commands_free(c1);
    ecs_commands_free(c2);
    ecs_world_free(w);
}

TEST(commands_on_target_destroyed_earlier_are_dropped) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e1 = cw_make(&c, 1), e2 = cw_make(&c, 2);
    REQUIRE(e1 && e2);
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    size_t d0 = ecs_commands_dropped(w);
    CHECK_EQ_INT(ecs_cmd_destroy(cmd, e1), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e1, c.a, &(int){9}), ECS_OK);   /* dropped */
    CHECK_EQ_INT(ecs_cmd_add(cmd, e1, c.b), ECS_OK);              /* dropped */
    CHECK_EQ_INT(ecs_cmd_set(cmd, e2, c.a, &(int){5}), ECS_OK);
    ecs_entity p = ecs_cmd_create(cmd);
    REQUIRE(p);
    CHECK_EQ_INT(ecs_cmd_destroy(cmd, p), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_add(cmd, p, c.t), ECS_OK);               /* dropped */
    CHECK_EQ_INT(ecs_cmd_add(cmd, e2, c.t), ECS_OK);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK(!ecs_is_alive(w, e1));
    CHECK_EQ_INT(get_int(w, e2, c.a, -1), 5);
    CHECK(ecs_has(w, e2, c.t));
    CHECK_EQ_INT(ecs_count(w), 1);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0 + 3);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

TEST(commands_record_errors) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1);
    REQUIRE(e);
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_cmd_add(cmd, e, 999), ECS_ERR_ARG);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_cmd_add(cmd, e, 0), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, 999, &(int){1}), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_cmd_remove(cmd, e, 999), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, c.a, NULL), ECS_ERR_ARG);   /* NULL for a component */
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, c.b, NULL), ECS_ERR_ARG);
    ecs_entity p = ecs_cmd_create(cmd);
    REQUIRE(p);
    CHECK_EQ_INT(ecs_cmd_set(cmd, p, c.b, NULL), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_cmd_add(cmd, p, 999), ECS_ERR_ARG);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_cmd_set(cmd, e, c.t, NULL), ECS_OK);        /* NULL is fine for a tag */
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    /* only the pending create and the tag got through */
    CHECK(ecs_has(w, e, c.t));
    CHECK(!ecs_has(w, e, c.b));
    CHECK_EQ_INT(get_int(w, e, c.a, -1), 1);
    CHECK_EQ_INT(ecs_count(w), 2);
    ecs_query *qb = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.b, 0, 0}}});
    REQUIRE(qb);
    CHECK_EQ_INT(ecs_query_count(w, qb), 0);
    ecs_query_free(qb);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

TEST(commands_apply_clears_buffer) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1);
    REQUIRE(e);
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    ecs_entity p = ecs_cmd_create(cmd);
    CHECK_EQ_INT(ecs_cmd_set(cmd, p, c.a, &(int){3}), ECS_OK);
    CHECK(ecs_cmd_create(cmd) != 0);
    CHECK_EQ_INT(ecs_cmd_destroy(cmd, e), ECS_OK);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 2);
    unsigned long long h = test_world_hash(w);
    size_t d0 = ecs_commands_dropped(w);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);             /* empty now */
    CHECK_EQ_INT(ecs_count(w), 2);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0);                    /* the destroy did not rerun */
    /* the buffer records again after being applied */
    ecs_entity q = ecs_cmd_create(cmd);
    CHECK(q != 0);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 3);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

TEST(commands_free_unapplied_changes_nothing) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1);
    REQUIRE(e);
    unsigned long long h = test_world_hash(w);
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    ecs_entity p = ecs_cmd_create(cmd);
    CHECK_EQ_INT(ecs_cmd_set(cmd, p, c.a, &(int){3}), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_destroy(cmd, e), ECS_OK);
    ecs_commands_free(cmd);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK(ecs_is_alive(w, e));
    CHECK_EQ_INT(ecs_count(w), 1);
    ecs_world_free(w);
}

/* A command that would touch a table a query is iterating stops the apply with
   ECS_ERR_BUSY; the rest stays in the buffer and a later apply resumes. */
TEST(commands_apply_busy_on_locked_table_resumes) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1);                  /* {A} */
    ecs_entity f = ecs_create(w);                   /* {B} */
    REQUIRE(e && f);
    CHECK_EQ_INT(ecs_set(w, f, c.b, &(int){2}), ECS_OK);
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    CHECK_EQ_INT(ecs_cmd_set(cmd, f, c.b, &(int){20}), ECS_OK);   /* applies */
    CHECK_EQ_INT(ecs_cmd_destroy(cmd, e), ECS_OK);                 /* hits the lock */
    CHECK_EQ_INT(ecs_cmd_add(cmd, f, c.t), ECS_OK);                /* waits */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.a, 0, 0}}});
    REQUIRE(q);
    int batches = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        batches++;
        CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_ERR_BUSY);
        CHECK(ecs_is_alive(w, e));
    }
    CHECK_EQ_INT(batches, 1);
    CHECK_EQ_INT(get_int(w, f, c.b, -1), 20);
    CHECK(ecs_is_alive(w, e));
    CHECK(!ecs_has(w, f, c.t));
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK(!ecs_is_alive(w, e));
    CHECK(ecs_has(w, f, c.t));
    CHECK_EQ_INT(get_int(w, f, c.b, -1), 20);
    ecs_query_free(q);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

TEST(commands_apply_to_other_world_rejected) {
    cw c, d;
    REQUIRE(cw_init(&c));
    REQUIRE(cw_init(&d));
    ecs_commands *cmd = ecs_commands_new(c.w);
    REQUIRE(cmd);
    CHECK(ecs_cmd_create(cmd) != 0);
    unsigned long long h = test_world_hash(d.w);
    CHECK_EQ_INT(ecs_commands_apply(d.w, cmd), ECS_ERR_ARG);
    CHECK_EQ_INT(test_world_hash(d.w), h);
    CHECK_EQ_INT(ecs_count(d.w), 0);
    CHECK_EQ_INT(ecs_count(c.w), 0);
    CHECK_EQ_INT(ecs_commands_apply(c.w, cmd), ECS_OK);
    CHECK_EQ_INT(ecs_count(c.w), 1);
    ecs_world_free(d.w);
    ecs_world_free(c.w);   /* frees cmd too */
}

/* ---- defer mode ---------------------------------------------------------- */
TEST(defer_restructure_while_iterating) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    enum { N = 9 };
    ecs_entity e[N];
    for (int i = 0; i < N; i++) REQUIRE(e[i] = cw_make(&c, i));
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.a, ECS_WRITE, 0}}});
    REQUIRE(q);
    unsigned long long h = test_world_hash(w);
    size_t d0 = ecs_commands_dropped(w);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    int rows = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        CHECK(it.commands != NULL);
        const int *fa = ECS_FIELD(&it, int, 0);
        REQUIRE(fa);
        for (int r = 0; r < it.count; r++, rows++) {
            ecs_entity x = it.entities[r];
            int k = fa[r] % 3;
            if (k == 0) CHECK_EQ_INT(ecs_destroy(w, x), ECS_OK);
            else if (k == 1) CHECK_EQ_INT(ecs_set(w, x, c.b, &(int){fa[r] * 10}), ECS_OK);
            else CHECK_EQ_INT(ecs_remove(w, x, c.a), ECS_OK);
            CHECK_EQ_INT(ecs_add(w, x, c.t), ECS_OK);
        }
    }
    CHECK_EQ_INT(rows, N);
    CHECK_EQ_INT(test_world_hash(w), h);          /* nothing applied yet */
    CHECK_EQ_INT(ecs_count(w), N);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    for (int i = 0; i < N; i++) {
        int k = i % 3;
        if (k == 0) { CHECK(!ecs_is_alive(w, e[i])); continue; }
        CHECK(ecs_is_alive(w, e[i]));
        CHECK(ecs_has(w, e[i], c.t));
        if (k == 1) {
            CHECK_EQ_INT(get_int(w, e[i], c.a, -1), i);
            CHECK_EQ_INT(get_int(w, e[i], c.b, -1), i * 10);
        } else {
            CHECK(!ecs_has(w, e[i], c.a));
        }
    }
    CHECK_EQ_INT(ecs_count(w), N - 3);
    CHECK_EQ_INT(ecs_query_count(w, q), 3);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0 + 3);   /* the tag adds after a destroy */
    ecs_query_free(q);
    ecs_world_free(w);
}

TEST(defer_nested_applies_at_outermost_end) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1), f = cw_make(&c, 2);
    REQUIRE(e && f);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_add(w, f, c.b), ECS_OK);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(ecs_is_alive(w, e));                     /* inner end applies nothing */
    CHECK(!ecs_has(w, f, c.b));
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_remove(w, f, c.a), ECS_OK);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(!ecs_is_alive(w, e));
    CHECK(ecs_has(w, f, c.b));
    CHECK(!ecs_has(w, f, c.a));
    CHECK_EQ_INT(ecs_count(w), 1);
    /* out of defer mode again: immediate */
    CHECK_EQ_INT(ecs_add(w, f, c.a), ECS_OK);
    CHECK(ecs_has(w, f, c.a));
    ecs_world_free(w);
}

TEST(defer_create_returns_pending_handle) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    REQUIRE(cw_make(&c, 1));
    size_t n0 = ecs_count(w);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    ecs_entity p = ecs_create(w);
    CHECK(p != 0);
    CHECK(!ecs_is_alive(w, p));
    CHECK_EQ_INT(ecs_count(w), n0);
    CHECK_EQ_INT(ecs_set(w, p, c.a, &(int){42}), ECS_OK);
    CHECK_EQ_INT(ecs_add(w, p, c.t), ECS_OK);
    CHECK_EQ_INT(ecs_set(w, p, c.b, &(int){43}), ECS_OK);
    CHECK_EQ_INT(ecs_remove(w, p, c.b), ECS_OK);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), n0 + 1);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.a, 0, 0}, {c.t, 0, 0}}});
    REQUIRE(q);
    int rows = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        const int *fa = ECS_FIELD(&it, int, 0);
        REQUIRE(fa);
        for (int r = 0; r < it.count; r++, rows++) CHECK_EQ_INT(fa[r], 42);
    }
    CHECK_EQ_INT(rows, 1);
    ecs_query_free(q);
    /* the handle itself is the new entity ("live after it") */
    CHECK(ecs_is_alive(w, p));
    CHECK_EQ_INT(get_int(w, p, c.a, -1), 42);
    CHECK(ecs_has(w, p, c.t));
    CHECK(!ecs_has(w, p, c.b));
    ecs_world_free(w);
}

TEST(defer_checks_arguments) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1);
    REQUIRE(e);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_add(w, e, 999), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_set(w, e, 999, &(int){1}), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_set(w, e, c.b, NULL), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_remove(w, e, 999), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK_EQ_INT(test_world_hash(w), h);
    ecs_world_free(w);
}

TEST(defer_end_without_begin_fails) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_entity e = cw_make(&c, 1);
    REQUIRE(e);
    unsigned long long h = test_world_hash(w);
    CHECK(ecs_defer_end(w) != ECS_OK);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(ecs_defer_end(w) != ECS_OK);             /* one end too many */
    /* still immediate mode: changes apply at once */
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    CHECK(!ecs_is_alive(w, e));
    ecs_world_free(w);
}

TEST(defer_commands_apply_is_busy) {
    cw c;
    REQUIRE(cw_init(&c));
    ecs_world *w = c.w;
    ecs_commands *cmd = ecs_commands_new(w);
    REQUIRE(cmd);
    ecs_entity p = ecs_cmd_create(cmd);
    CHECK_EQ_INT(ecs_cmd_set(cmd, p, c.a, &(int){5}), ECS_OK);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_ERR_BUSY);
    CHECK_EQ_INT(ecs_count(w), 0);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 0);                 /* the buffer is not the defer queue */
    CHECK_EQ_INT(ecs_commands_apply(w, cmd), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 1);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.a, 0, 0}}});
    REQUIRE(q);
    int sum = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        const int *fa = ECS_FIELD(&it, int, 0);
        REQUIRE(fa);
        for (int r = 0; r < it.count; r++) sum += fa[r];
    }
    CHECK_EQ_INT(sum, 5);
    ecs_query_free(q);
    ecs_commands_free(cmd);
    ecs_world_free(w);
}

void suite_commands(void) {
    RUN(commands_apply_in_recording_order);
    RUN(commands_pending_create_then_add_and_set);
    RUN(commands_pending_handle_of_other_buffer_rejected);
    RUN(commands_on_target_destroyed_earlier_are_dropped);
    RUN(commands_record_errors);
    RUN(commands_apply_clears_buffer);
    RUN(commands_free_unapplied_changes_nothing);
    RUN(commands_apply_busy_on_locked_table_resumes);
    RUN(commands_apply_to_other_world_rejected);
    RUN(defer_restructure_while_iterating);
    RUN(defer_nested_applies_at_outermost_end);
    RUN(defer_create_returns_pending_handle);
    RUN(defer_checks_arguments);
    RUN(defer_end_without_begin_fails);
    RUN(defer_commands_apply_is_busy);
}
