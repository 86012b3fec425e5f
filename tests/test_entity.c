/* entity tests: lifetime, add/remove/set/get, values across table moves,
   create_many, swap-remove, and column alignment. */
#include "test.h"
#include <stdint.h>

typedef struct { int x, y; } Pos;
typedef struct { double v[3]; } Vel;
typedef struct { _Alignas(16) float v[4]; } Al16;
typedef struct { _Alignas(32) int x; } Al32;

static int pos_is(const ecs_world *w, ecs_entity e, ecs_id id, int x, int y) {
    const Pos *p = (const Pos *)ecs_get(w, e, id);
    return p && p->x == x && p->y == y;
}
static int all_zero(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) if (b[i]) return 0;
    return 1;
}

TEST(entity_create_destroy_alive_count) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_entity a = ecs_create(w), b = ecs_create(w), c = ecs_create(w);
    REQUIRE(a && b && c);
    CHECK(a != b && b != c && a != c);
    CHECK(ecs_is_alive(w, a) && ecs_is_alive(w, b) && ecs_is_alive(w, c));
    CHECK_EQ_INT(ecs_count(w), 3);
    CHECK_EQ_INT(ecs_destroy(w, b), ECS_OK);
    CHECK(!ecs_is_alive(w, b));
    CHECK(ecs_is_alive(w, a) && ecs_is_alive(w, c));
    CHECK_EQ_INT(ecs_count(w), 2);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_destroy(w, b), ECS_ERR_STALE);
    CHECK(ecs_destroy(w, 0) != ECS_OK);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_count(w), 2);
    CHECK(!ecs_is_alive(w, 0));
    CHECK_EQ_INT(ecs_destroy(w, a), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, c), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 0);
    ecs_world_free(w);
}

TEST(entity_add_set_get_has_remove) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    REQUIRE(pos && vel);
    ecs_entity e = ecs_create(w);
    CHECK(!ecs_has(w, e, pos));
    CHECK(ecs_get(w, e, pos) == NULL);
    CHECK_EQ_INT(ecs_add(w, e, pos), ECS_OK);
    CHECK(ecs_has(w, e, pos));
    const Pos *p = (const Pos *)ecs_get(w, e, pos);
    CHECK(p && all_zero(p, sizeof *p));
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 2}), ECS_OK);
    CHECK(pos_is(w, e, pos, 1, 2));
    Pos *m = (Pos *)ecs_get_mut(w, e, pos);
    REQUIRE(m);
    m->x = 3; m->y = 4;
    CHECK(pos_is(w, e, pos, 3, 4));
    CHECK_EQ_INT(ecs_set(w, e, vel, &(Vel){{5, 6, 7}}), ECS_OK);   /* adds */
    CHECK(ecs_has(w, e, vel));
    const Vel *v = (const Vel *)ecs_get(w, e, vel);
    CHECK(v && v->v[0] == 5 && v->v[1] == 6 && v->v[2] == 7);
    CHECK(pos_is(w, e, pos, 3, 4));
    CHECK_EQ_INT(ecs_remove(w, e, pos), ECS_OK);
    CHECK(!ecs_has(w, e, pos));
    CHECK(ecs_get(w, e, pos) == NULL);
    CHECK(ecs_get_mut(w, e, pos) == NULL);
    v = (const Vel *)ecs_get(w, e, vel);
    CHECK(v && v->v[0] == 5 && v->v[1] == 6 && v->v[2] == 7);
    CHECK_EQ_INT(ecs_add(w, e, pos), ECS_OK);   /* re-added: zero, not the old value */
    p = (const Pos *)ecs_get(w, e, pos);
    CHECK(p && all_zero(p, sizeof *p));
    ecs_world_free(w);
}

TEST(entity_get_mut_does_not_add) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, vel, &(Vel){{1, 1, 1}}), ECS_OK);
    unsigned long long h = test_world_hash(w);
    CHECK(ecs_get_mut(w, e, pos) == NULL);
    CHECK(!ecs_has(w, e, pos));
    CHECK_EQ_INT(test_world_hash(w), h);
    ecs_world_free(w);
}

TEST(entity_add_present_or_remove_absent_is_noop) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    ecs_entity e = ecs_create(w), f = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){7, 8}), ECS_OK);
    CHECK_EQ_INT(ecs_set(w, f, pos, &(Pos){9, 10}), ECS_OK);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_add(w, e, pos), ECS_OK);
    CHECK(pos_is(w, e, pos, 7, 8));             /* not zeroed */
    CHECK_EQ_INT(ecs_remove(w, e, vel), ECS_OK);
    CHECK(!ecs_has(w, e, vel));
    CHECK_EQ_INT(ecs_remove(w, f, vel), ECS_OK);
    CHECK_EQ_INT(test_world_hash(w), h);
    ecs_world_free(w);
}

TEST(entity_set_null_value_on_component_fails) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 2}), ECS_OK);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, NULL), ECS_ERR_ARG);     /* present */
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_set(w, e, vel, NULL), ECS_ERR_ARG);     /* missing: not added */
    CHECK(!ecs_has(w, e, vel));
    CHECK(pos_is(w, e, pos, 1, 2));
    CHECK_EQ_INT(test_world_hash(w), h);
    ecs_world_free(w);
}

TEST(entity_unknown_id_fails) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 2}), ECS_OK);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_add(w, e, 999), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_add(w, e, 0), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_set(w, e, 999, &(Pos){3, 4}), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_remove(w, e, 999), ECS_ERR_ARG);
    CHECK(!ecs_has(w, e, 999));
    CHECK(ecs_get(w, e, 999) == NULL);
    CHECK_EQ_INT(test_world_hash(w), h);
    ecs_world_free(w);
}

TEST(entity_dead_handle_calls_fail) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos);
    ecs_entity e = ecs_create(w), f = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 2}), ECS_OK);
    CHECK_EQ_INT(ecs_set(w, f, pos, &(Pos){3, 4}), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_add(w, e, pos), ECS_ERR_STALE);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){5, 6}), ECS_ERR_STALE);
    CHECK_EQ_INT(ecs_remove(w, e, pos), ECS_ERR_STALE);
    CHECK(!ecs_has(w, e, pos));
    CHECK(ecs_get(w, e, pos) == NULL);
    CHECK(ecs_get_mut(w, e, pos) == NULL);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK(pos_is(w, f, pos, 3, 4));
    ecs_world_free(w);
}

/* Five entities walk through many tables; every value must follow its entity. */
TEST(entity_values_survive_table_moves) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    ecs_id big = ecs_component(w, "Big", 100, 0), tag = ecs_component(w, "Tag", 0, 0);
    REQUIRE(pos && vel && big && tag);
    enum { N = 5 };
    ecs_entity e[N];
    for (int i = 0; i < N; i++) {
        e[i] = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, e[i], pos, &(Pos){i, -i}), ECS_OK);
    }
    int bad = 0;
    for (int round = 0; round < 60; round++) {
        for (int i = 0; i < N; i++) {
            int k = (round + i) % 4;
            int rc = 0;
            if (k == 0) {
                rc |= ecs_set(w, e[i], vel, &(Vel){{round, i, 0.5}});
            } else if (k == 1) {
                unsigned char b[100];
                memset(b, (round * 7 + i) & 0xFF, sizeof b);
                rc |= ecs_set(w, e[i], big, b);
                rc |= ecs_remove(w, e[i], vel);
            } else if (k == 2) {
                rc |= ecs_add(w, e[i], tag);
                rc |= ecs_remove(w, e[i], big);
            } else {
                rc |= ecs_remove(w, e[i], tag);
            }
            if (rc != ECS_OK) bad++;
        }
        for (int i = 0; i < N; i++) {
            if (!pos_is(w, e[i], pos, i, -i)) bad++;
            int k = (round + i) % 4;
            if (k == 0) {
                const Vel *v = (const Vel *)ecs_get(w, e[i], vel);
                if (!v || v->v[0] != round || v->v[1] != i || v->v[2] != 0.5) bad++;
            } else if (k == 1) {
                const unsigned char *b = (const unsigned char *)ecs_get(w, e[i], big);
                if (!b || b[0] != ((round * 7 + i) & 0xFF) || b[99] != ((round * 7 + i) & 0xFF)) bad++;
                if (ecs_has(w, e[i], vel)) bad++;
            } else if (k == 2) {
                if (!ecs_has(w, e[i], tag) || ecs_has(w, e[i], big)) bad++;
            } else if (ecs_has(w, e[i], tag)) {
                bad++;
            }
        }
    }
    CHECKF(bad == 0, "%d wrong values after table moves", bad);
    CHECK_EQ_INT(ecs_count(w), N);
    ecs_world_free(w);
}

/* ecs_set's value may point into the world: at the entity's own row, which
   the move vacates and the table's last row then fills. The value must be
   read before that, with and without lifecycle hooks on the tables. */
static void al_move(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(Pos));
}
TEST(entity_set_value_from_own_row) {
    for (int hooked = 0; hooked < 2; hooked++) {
        ecs_world *w = ecs_world_new(NULL);
        REQUIRE(w);
        ecs_id pos = hooked ? ecs_component_init(w, &(ecs_component_desc){.name = "Pos",
                                  .size = sizeof(Pos), .align = _Alignof(Pos), .move = al_move})
                            : ECS_COMPONENT(w, Pos);
        ecs_id other = ecs_component(w, "Other", sizeof(Pos), _Alignof(Pos));
        REQUIRE(pos && other);
        ecs_entity e[4];
        for (int i = 0; i < 4; i++) {
            e[i] = ecs_create(w);
            CHECK_EQ_INT(ecs_set(w, e[i], pos, &(Pos){i, 10 * i}), ECS_OK);
        }
        for (int i = 0; i < 3; i++) {   /* rows 0, 1, 2 of 4: the last row fills each hole */
            const Pos *own = (const Pos *)ecs_get(w, e[i], pos);
            REQUIRE(own);
            CHECK_EQ_INT(ecs_set(w, e[i], other, own), ECS_OK);
            const Pos *got = (const Pos *)ecs_get(w, e[i], other);
            CHECKF(got && got->x == i && got->y == 10 * i, "hooked %d, entity %d: (%d, %d)", hooked, i,
                   got ? got->x : -1, got ? got->y : -1);
            CHECK(pos_is(w, e[i], pos, i, 10 * i));
        }
        CHECK(pos_is(w, e[3], pos, 3, 30));
        /* from the last row (it fills the hole), and from a table that grows */
        ecs_entity f[3];
        for (int i = 0; i < 3; i++) {
            f[i] = ecs_create(w);
            CHECK_EQ_INT(ecs_set(w, f[i], pos, &(Pos){100 + i, 0}), ECS_OK);
        }
        CHECK_EQ_INT(ecs_set(w, f[0], other, ecs_get(w, f[2], pos)), ECS_OK);
        CHECK(pos_is(w, f[0], other, 102, 0) && pos_is(w, f[2], pos, 102, 0));
        ecs_id third = ecs_component(w, "Third", sizeof(Pos), _Alignof(Pos));
        REQUIRE(third);
        ecs_entity g = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, g, other, &(Pos){7, 7}), ECS_OK);
        CHECK_EQ_INT(ecs_add(w, g, third), ECS_OK);   /* {Other, Third}: room for one row */
        for (int i = 0; i < 40; i++) {   /* each value comes from that table's first row */
            ecs_entity h = ecs_create(w);
            CHECK_EQ_INT(ecs_set(w, h, other, &(Pos){i, i}), ECS_OK);
            CHECK_EQ_INT(ecs_set(w, h, third, ecs_get(w, g, other)), ECS_OK);
            CHECK(pos_is(w, h, third, 7, 7));
        }
        ecs_world_free(w);
    }
}

/* Overwriting a component the entity has: after the first ecs_set, the
   next ones take the direct path, which must still defer in defer mode,
   write through a locked table, and leave copy and on_set hooks to the
   checked path. */
static int ow_copies, ow_sets;
static void ow_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(Pos));
    ow_copies += n;
}
static void ow_on_set(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)e; (void)id; (void)v; (void)ctx;
    ow_sets++;
}
TEST(entity_set_overwrite_paths) {
    ow_copies = ow_sets = 0;
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos);
    ecs_id cp = ecs_component_init(w, &(ecs_component_desc){.name = "Copied", .size = sizeof(Pos),
        .align = _Alignof(Pos), .copy = ow_copy});
    ecs_id ev = ecs_component_init(w, &(ecs_component_desc){.name = "Watched", .size = sizeof(Pos),
        .align = _Alignof(Pos), .on_set = ow_on_set});
    REQUIRE(pos && cp && ev);
    ecs_entity e = ecs_create(w), f = ecs_create(w), g = ecs_create(w);   /* f, g: one hook each */
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){i, i}), ECS_OK);
        CHECK(pos_is(w, e, pos, i, i));
        CHECK_EQ_INT(ecs_set(w, f, cp, &(Pos){i, 0}), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, g, ev, &(Pos){0, i}), ECS_OK);
    }
    CHECK(pos_is(w, f, cp, 4, 0) && pos_is(w, g, ev, 0, 4));
    CHECK_EQ_INT(ow_copies, 5);   /* every overwrite through the copy hook */
    CHECK_EQ_INT(ow_sets, 5);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){7, 7}), ECS_OK);
    CHECK(pos_is(w, e, pos, 4, 4));   /* recorded, not written */
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(pos_is(w, e, pos, 7, 7));
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)   /* a value write, not a change */
        for (int i = 0; i < it.count; i++) CHECK_EQ_INT(ecs_set(w, it.entities[i], pos, &(Pos){8, 8}), ECS_OK);
    CHECK(pos_is(w, e, pos, 8, 8));
    CHECK_EQ_INT(ecs_set(w, e, pos, NULL), ECS_ERR_ARG);
    CHECK(pos_is(w, e, pos, 8, 8));
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){9, 9}), ECS_ERR_STALE);
    ecs_query_free(q);
    ecs_world_free(w);
}

/* Destroying first, middle and last rows moves the last row into the hole;
   every survivor must keep its own value. */
TEST(entity_destroy_keeps_other_rows_intact) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    enum { N = 10 };
    ecs_entity e[N];
    for (int i = 0; i < N; i++) {
        e[i] = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, e[i], pos, &(Pos){i, i * 10}), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, e[i], vel, &(Vel){{i, i, i}}), ECS_OK);
    }
    const int gone[] = {0, 4, 9, 5};
    int dead[N] = {0};
    for (int g = 0; g < 4; g++) {
        CHECK_EQ_INT(ecs_destroy(w, e[gone[g]]), ECS_OK);
        dead[gone[g]] = 1;
        for (int i = 0; i < N; i++) {
            if (dead[i]) { CHECK(!ecs_is_alive(w, e[i])); continue; }
            CHECKF(pos_is(w, e[i], pos, i, i * 10), "entity %d after destroying %d", i, gone[g]);
            const Vel *v = (const Vel *)ecs_get(w, e[i], vel);
            CHECK(v && v->v[0] == i && v->v[2] == i);
        }
    }
    CHECK_EQ_INT(ecs_count(w), N - 4);
    /* the query sees each survivor once, with its own value */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    int seen[N] = {0}, total = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        const Pos *p = ECS_FIELD(&it, Pos, 0);
        REQUIRE(p);
        for (int r = 0; r < it.count; r++) {
            total++;
            int i = p[r].x;
            CHECK(i >= 0 && i < N);
            if (i < 0 || i >= N) continue;
            CHECK(it.entities[r] == e[i]);
            CHECK(!dead[i]);
            seen[i]++;
        }
    }
    CHECK_EQ_INT(total, N - 4);
    for (int i = 0; i < N; i++) CHECK_EQ_INT(seen[i], dead[i] ? 0 : 1);
    ecs_query_free(q);
    ecs_world_free(w);
}

/* A component removed from a middle row (a move out of the table) keeps the
   rows left behind intact too. */
TEST(entity_remove_keeps_other_rows_intact) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    enum { N = 8 };
    ecs_entity e[N];
    for (int i = 0; i < N; i++) {
        e[i] = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, e[i], pos, &(Pos){i, -i}), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, e[i], vel, &(Vel){{i, 0, 0}}), ECS_OK);
    }
    CHECK_EQ_INT(ecs_remove(w, e[3], vel), ECS_OK);
    CHECK_EQ_INT(ecs_remove(w, e[0], vel), ECS_OK);
    for (int i = 0; i < N; i++) {
        CHECKF(pos_is(w, e[i], pos, i, -i), "entity %d", i);
        const Vel *v = (const Vel *)ecs_get(w, e[i], vel);
        if (i == 3 || i == 0) CHECK(v == NULL);
        else CHECKF(v && v->v[0] == i, "entity %d vel", i);
    }
    ecs_world_free(w);
}

TEST(entity_add_remove_same_id_10000_times) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos), vel = ECS_COMPONENT(w, Vel);
    ecs_entity e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, e[i], pos, &(Pos){40 + i, 50 + i}), ECS_OK);
    }
    CHECK_EQ_INT(ecs_add(w, e[2], vel), ECS_OK);   /* a neighbour in {Pos, Vel} */
    int bad_rc = 0, bad_val = 0;
    for (int n = 0; n < 10000; n++) {
        ecs_entity x = e[n % 2];
        if (ecs_add(w, x, vel) != ECS_OK) bad_rc++;
        const Vel *v = (const Vel *)ecs_get(w, x, vel);
        if (!v || !all_zero(v, sizeof *v)) bad_val++;
        if (ecs_set(w, x, vel, &(Vel){{n, n, n}}) != ECS_OK) bad_rc++;
        if (ecs_remove(w, x, vel) != ECS_OK) bad_rc++;
        if (ecs_has(w, x, vel)) bad_val++;
    }
    CHECK_EQ_INT(bad_rc, 0);
    CHECKF(bad_val == 0, "%d iterations saw a non-zero re-added value or a left-over component", bad_val);
    for (int i = 0; i < 3; i++) CHECKF(pos_is(w, e[i], pos, 40 + i, 50 + i), "entity %d", i);
    const Vel *v = (const Vel *)ecs_get(w, e[2], vel);
    CHECK(v && all_zero(v, sizeof *v));
    CHECK_EQ_INT(ecs_count(w), 3);
    ecs_world_free(w);
}

TEST(create_many_unsorted_duplicate_ids_zeroed) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ECS_COMPONENT(w, Pos), b = ECS_COMPONENT(w, Vel);
    ecs_id c = ecs_component(w, "C", 40, 0), d = ecs_component(w, "D", 4, 0);
    ecs_id t = ecs_component(w, "T", 0, 0);
    REQUIRE(a && b && c && d && t);
    /* dirty the rows of table {a, b, c, t} first, then empty it */
    unsigned char junk[64];
    memset(junk, 0xAB, sizeof junk);
    ecs_entity tmp[4];
    for (int i = 0; i < 4; i++) {
        tmp[i] = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, tmp[i], c, junk), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, tmp[i], b, junk), ECS_OK);
        CHECK_EQ_INT(ecs_add(w, tmp[i], t), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, tmp[i], a, junk), ECS_OK);
    }
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(ecs_destroy(w, tmp[i]), ECS_OK);
    size_t n0 = ecs_count(w);
    ecs_entity out[5] = {0};
    const ecs_id ids[] = {c, a, t, c, b, a};
    CHECK_EQ_INT(ecs_create_many(w, 5, ids, 6, out), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), n0 + 5);
    for (int i = 0; i < 5; i++) {
        CHECK(out[i] != 0 && ecs_is_alive(w, out[i]));
        for (int j = 0; j < i; j++) CHECK(out[i] != out[j]);
        CHECK(ecs_has(w, out[i], a) && ecs_has(w, out[i], b) && ecs_has(w, out[i], c));
        CHECK(ecs_has(w, out[i], t));
        CHECK(!ecs_has(w, out[i], d));
        const void *pa = ecs_get(w, out[i], a), *pb = ecs_get(w, out[i], b), *pc = ecs_get(w, out[i], c);
        CHECKF(pa && all_zero(pa, sizeof(Pos)), "entity %d Pos not zeroed", i);
        CHECKF(pb && all_zero(pb, sizeof(Vel)), "entity %d Vel not zeroed", i);
        CHECKF(pc && all_zero(pc, 40), "entity %d C not zeroed", i);
    }
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{a, 0, 0}, {b, 0, 0}, {c, 0, 0}, {t, 0, 0}}});
    REQUIRE(q);
    CHECK_EQ_INT(ecs_query_count(w, q), 5);
    ecs_query_free(q);
    ecs_world_free(w);
}

TEST(create_many_null_out_and_zero_n) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ECS_COMPONENT(w, Pos), b = ECS_COMPONENT(w, Vel);
    const ecs_id ids[] = {b, a};
    CHECK_EQ_INT(ecs_create_many(w, 3, ids, 2, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 3);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{a, 0, 0}, {b, 0, 0}}});
    REQUIRE(q);
    CHECK_EQ_INT(ecs_query_count(w, q), 3);
    unsigned long long h = test_world_hash(w);
    ecs_entity out[1] = {0};
    CHECK_EQ_INT(ecs_create_many(w, 0, ids, 2, out), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 0, ids, 2, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 3);
    CHECK_EQ_INT(test_world_hash(w), h);
    /* no ids: plain empty entities */
    ecs_entity many[4] = {0};
    CHECK_EQ_INT(ecs_create_many(w, 4, ids, 0, many), ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 7);
    for (int i = 0; i < 4; i++) {
        CHECK(ecs_is_alive(w, many[i]));
        CHECK(!ecs_has(w, many[i], a) && !ecs_has(w, many[i], b));
    }
    CHECK_EQ_INT(ecs_query_count(w, q), 3);
    ecs_query_free(q);
    ecs_world_free(w);
}

TEST(create_many_bad_id_creates_nothing) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ECS_COMPONENT(w, Pos), b = ECS_COMPONENT(w, Vel);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, a, &(Pos){1, 1}), ECS_OK);
    unsigned long long h = test_world_hash(w);
    ecs_entity out[3] = {0};
    CHECK_EQ_INT(ecs_create_many(w, 3, (ecs_id[]){a, 999, b}, 3, out), ECS_ERR_ARG);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_create_many(w, 3, (ecs_id[]){a, b, 0}, 3, out), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_create_many(w, 3, NULL, 2, out), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_count(w), 1);
    CHECK_EQ_INT(test_world_hash(w), h);
    ecs_world_free(w);
}

static int aligned(const void *p, size_t a) { return p && (uintptr_t)p % a == 0; }

TEST(component_first_row_is_64_byte_aligned) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id c1 = ecs_component(w, "Byte", 1, 1);
    ecs_id c12 = ecs_component(w, "Twelve", 12, 4);
    ecs_id vel = ECS_COMPONENT(w, Vel);
    REQUIRE(c1 && c12 && vel);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, c1, &(char){7}), ECS_OK);       /* fresh table {Byte} */
    CHECKF(aligned(ecs_get(w, e, c1), 64), "first row of {Byte} at %p", ecs_get(w, e, c1));
    ecs_entity f;
    CHECK_EQ_INT(ecs_create_many(w, 1, (ecs_id[]){c12, vel, c1}, 3, &f), ECS_OK);  /* fresh {Byte, Twelve, Vel} */
    CHECK(aligned(ecs_get(w, f, c1), 64));
    CHECK(aligned(ecs_get(w, f, c12), 64));
    CHECK(aligned(ecs_get(w, f, vel), 64));
    /* the first row stays aligned while the columns grow */
    for (int i = 0; i < 1000; i++) CHECK_EQ_INT(ecs_create_many(w, 1, (ecs_id[]){c1, c12, vel}, 3, NULL), ECS_OK);
    CHECK(aligned(ecs_get(w, f, c1), 64));
    CHECK(aligned(ecs_get(w, f, c12), 64));
    CHECK(aligned(ecs_get(w, f, vel), 64));
    ecs_entity g = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, g, c12, &(char[12]){0}), ECS_OK);   /* fresh {Twelve} */
    CHECK(aligned(ecs_get(w, g, c12), 64));
    ecs_world_free(w);
}

TEST(query_fields_are_64_byte_aligned) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id c1 = ecs_component(w, "Byte", 1, 1);
    ecs_id c12 = ecs_component(w, "Twelve", 12, 4);
    ecs_id t = ecs_component(w, "T", 0, 0);
    REQUIRE(c1 && c12 && t);
    CHECK_EQ_INT(ecs_create_many(w, 3, (ecs_id[]){c1}, 1, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 5, (ecs_id[]){c1, c12}, 2, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 7, (ecs_id[]){c1, t}, 2, NULL), ECS_OK);
    CHECK_EQ_INT(ecs_create_many(w, 100, (ecs_id[]){c1, c12, t}, 3, NULL), ECS_OK);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c1, ECS_WRITE, ECS_AND}, {c12, ECS_WRITE, ECS_OPTIONAL}}});
    REQUIRE(q);
    int batches = 0, rows = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        batches++; rows += it.count;
        void *f0 = ecs_field(&it, 0), *f1 = ecs_field(&it, 1);
        CHECKF(aligned(f0, 64), "batch %d field 0 at %p", batches, f0);
        CHECK(f1 == NULL || aligned(f1, 64));
    }
    CHECK_EQ_INT(batches, 4);
    CHECK_EQ_INT(rows, 115);
    ecs_query_free(q);
    ecs_world_free(w);
}

TEST(component_align_16_and_32_respected) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a16 = ECS_COMPONENT(w, Al16), a32 = ECS_COMPONENT(w, Al32);
    ecs_id c1 = ecs_component(w, "Byte", 1, 1), c12 = ecs_component(w, "Twelve", 12, 4);
    REQUIRE(a16 && a32 && c1 && c12);
    enum { N = 100 };
    ecs_entity e[N];
    for (int i = 0; i < N; i++) {
        e[i] = ecs_create(w);
        CHECK_EQ_INT(ecs_set(w, e[i], c1, &(char){(char)i}), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, e[i], a16, &(Al16){{(float)i, 1, 2, 3}}), ECS_OK);
        if (i % 3) CHECK_EQ_INT(ecs_add(w, e[i], c12), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, e[i], a32, &(Al32){i}), ECS_OK);
    }
    for (int i = 0; i < N; i += 4) CHECK_EQ_INT(ecs_remove(w, e[i], c1), ECS_OK);   /* move some */
    int bad_align = 0, bad_val = 0;
    for (int i = 0; i < N; i++) {
        const Al16 *p16 = (const Al16 *)ecs_get(w, e[i], a16);
        const Al32 *p32 = (const Al32 *)ecs_get(w, e[i], a32);
        if (!aligned(p16, 16) || !aligned(p32, 32)) bad_align++;
        if (!p16 || p16->v[0] != (float)i || p16->v[3] != 3) bad_val++;
        if (!p32 || p32->x != i) bad_val++;
    }
    CHECKF(bad_align == 0, "%d entities with misaligned Al16/Al32", bad_align);
    CHECK_EQ_INT(bad_val, 0);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{a16, ECS_WRITE, 0}, {a32, ECS_WRITE, 0}}});
    REQUIRE(q);
    int rows = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        Al16 *p16 = ECS_FIELD(&it, Al16, 0);
        Al32 *p32 = ECS_FIELD(&it, Al32, 1);
        CHECK(aligned(p16, 16) && aligned(p32, 32));
        if (!p16 || !p32) continue;
        for (int r = 0; r < it.count; r++) {
            rows++;
            CHECK((int)p16[r].v[0] == p32[r].x);
        }
    }
    CHECK_EQ_INT(rows, N);
    ecs_query_free(q);
    ecs_world_free(w);
}

void suite_entity(void) {
    RUN(entity_create_destroy_alive_count);
    RUN(entity_add_set_get_has_remove);
    RUN(entity_get_mut_does_not_add);
    RUN(entity_add_present_or_remove_absent_is_noop);
    RUN(entity_set_null_value_on_component_fails);
    RUN(entity_unknown_id_fails);
    RUN(entity_dead_handle_calls_fail);
    RUN(entity_values_survive_table_moves);
    RUN(entity_set_value_from_own_row);
    RUN(entity_set_overwrite_paths);
    RUN(entity_destroy_keeps_other_rows_intact);
    RUN(entity_remove_keeps_other_rows_intact);
    RUN(entity_add_remove_same_id_10000_times);
    RUN(create_many_unsorted_duplicate_ids_zeroed);
    RUN(create_many_null_out_and_zero_n);
    RUN(create_many_bad_id_creates_nothing);
    RUN(component_first_row_is_64_byte_aligned);
    RUN(query_fields_are_64_byte_aligned);
    RUN(component_align_16_and_32_respected);
}
