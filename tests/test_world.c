/* world tests: world lifetime and descs, the allocator hook, result names and
   error text, and the registration of components, tags and resources. */
#include "test.h"
#include <stdint.h>

typedef struct { float x, y; } Pos;
typedef struct { int a; double b; } Cfg;

/* ---- an allocator hook that knows every block it handed out ---------------- */
typedef struct track {
    void **live;        /* blocks handed out and not yet freed */
    size_t n, cap;
    size_t allocs;      /* calls that created a block (ptr NULL, size > 0) */
    size_t frees;       /* calls that freed a block (size 0) */
    size_t foreign;     /* realloc/free of a pointer this hook never returned */
} track;

static void track_put(track *t, void *p) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        void **live = (void **)realloc(t->live, cap * sizeof *live);
        if (!live) abort();
        t->live = live; t->cap = cap;
    }
    t->live[t->n++] = p;
}
static int track_take(track *t, void *p) {
    for (size_t i = 0; i < t->n; i++)
        if (t->live[i] == p) { t->live[i] = t->live[--t->n]; return 1; }
    return 0;
}
static void *track_realloc(void *p, size_t size, void *user) {
    track *t = (track *)user;
    if (p && !track_take(t, p)) t->foreign++;
    if (size == 0) {
        if (p) { t->frees++; free(p); }
        return NULL;
    }
    if (!p) t->allocs++;
    void *q = realloc(p, size);
    if (q) track_put(t, q);
    else if (p) track_put(t, p);   /* a failed realloc keeps the old block */
    return q;
}
static void track_fini(track *t) { free(t->live); }

/* ---- world ---------------------------------------------------------------- */
TEST(world_new_null_desc_works) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    CHECK_EQ_INT(ecs_count(w), 0);
    ecs_entity e = ecs_create(w);
    CHECK(e != 0);
    CHECK(ecs_is_alive(w, e));
    CHECK_EQ_INT(ecs_count(w), 1);
    ecs_world_free(w);
}

TEST(world_new_with_desc_works) {
    const int threads[] = {0, 1, 2, 4};
    const ecs_order orders[] = {ECS_ORDER_INSERTION, ECS_ORDER_EXPLICIT, ECS_ORDER_WRITERS_FIRST};
    for (int t = 0; t < 4; t++) {
        for (int o = 0; o < 3; o++) {
            ecs_world_desc d = {.threads = threads[t], .order = orders[o]};
            ecs_world *w = ecs_world_new(&d);
            CHECKF(w != NULL, "threads %d order %d", threads[t], o);
            if (!w) continue;
            ecs_id pos = ECS_COMPONENT(w, Pos);
            ecs_entity e = ecs_create(w);
            CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 2}), ECS_OK);
            const Pos *p = (const Pos *)ecs_get(w, e, pos);
            CHECK(p && p->x == 1 && p->y == 2);
            ecs_world_free(w);
        }
    }
}

TEST(world_new_bad_desc_returns_null) {
    track t = {0};
    ecs_world_desc bad[] = {
        {-1, ECS_ORDER_INSERTION, track_realloc, &t, false, 0, 0},
        {-1000, ECS_ORDER_INSERTION, track_realloc, &t, false, 0, 0},
        {1, (ecs_order)3, track_realloc, &t, false, 0, 0},
        {1, (ecs_order)-1, track_realloc, &t, false, 0, 0},
        {1, (ecs_order)1000, track_realloc, &t, false, 0, 0},
        {-1, (ecs_order)3, NULL, NULL, false, 0, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ecs_world *w = ecs_world_new(&bad[i]);
        CHECKF(w == NULL, "bad desc %zu (threads %d, order %d) made a world",
               i, bad[i].threads, (int)bad[i].order);
        if (w) ecs_world_free(w);
    }
    CHECKF(t.n == 0, "%zu blocks leaked by rejected descs", t.n);
    CHECK_EQ_INT(t.foreign, 0);
    track_fini(&t);
}

/* Builds a bit of everything, so that most allocation paths run. Leaves the
   query and the command buffer to ecs_world_free. */
static void world_workload(ecs_world *w) {
    ecs_id pos = ECS_COMPONENT(w, Pos);
    ecs_id cfg = ecs_component(w, "Cfg", sizeof(Cfg), 0);
    ecs_id tag = ecs_component(w, "Tag", 0, 0);
    ecs_id res = ecs_resource(w, "Res", 256, 64, NULL);
    CHECK(pos && cfg && tag && res);
    ecs_entity first = 0;
    for (int i = 0; i < 300; i++) {
        ecs_entity e = ecs_create(w);
        if (!first) first = e;
        CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){(float)i, 0}), ECS_OK);
        if (i % 2) CHECK_EQ_INT(ecs_add(w, e, cfg), ECS_OK);
        if (i % 3) CHECK_EQ_INT(ecs_add(w, e, tag), ECS_OK);
        if (i % 5 == 0) CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    }
    ecs_entity many[50];
    CHECK_EQ_INT(ecs_create_many(w, 50, (ecs_id[]){cfg, tag}, 2, many), ECS_OK);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_WRITE, ECS_AND}}});
    CHECK(q != NULL);
    if (q) CHECK(ecs_query_count(w, q) > 0);
    ecs_commands *c = ecs_commands_new(w);
    CHECK(c != NULL);
    if (c) {
        ecs_entity p = ecs_cmd_create(c);
        CHECK_EQ_INT(ecs_cmd_set(c, p, pos, &(Pos){5, 5}), ECS_OK);
        CHECK_EQ_INT(ecs_cmd_destroy(c, many[0]), ECS_OK);
        CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
        ecs_entity p2 = ecs_cmd_create(c);   /* left unapplied in the buffer */
        CHECK_EQ_INT(ecs_cmd_add(c, p2, tag), ECS_OK);
    }
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, many[1]), ECS_OK);
    CHECK(ecs_create(w) != 0);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(ecs_component(w, "Pos", 1, 0) == 0);   /* a failure, with an error text */
}

TEST(world_realloc_hook_used_and_balanced) {
    track t = {0};
    ecs_world_desc d = {.threads = 1, .realloc_fn = track_realloc, .alloc_user = &t};
    ecs_world *w = ecs_world_new(&d);
    REQUIRE(w);
    world_workload(w);
    CHECKF(t.allocs > 0, "the realloc hook was never asked for memory");
    CHECK(t.n > 0);
    ecs_world_free(w);
    CHECKF(t.n == 0, "%zu of %zu blocks still live after ecs_world_free", t.n, t.allocs);
    CHECK_EQ_INT(t.frees, t.allocs);
    CHECKF(t.foreign == 0, "%zu reallocs/frees of blocks the hook never returned", t.foreign);
    track_fini(&t);
}

TEST(world_free_frees_queries_and_command_buffers) {
    track t = {0};
    ecs_world_desc d = {.threads = 1, .realloc_fn = track_realloc, .alloc_user = &t};
    ecs_world *w = ecs_world_new(&d);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 1}), ECS_OK);
    size_t before = t.n;
    for (int i = 0; i < 4; i++) {
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
        CHECK(q != NULL);
        ecs_commands *c = ecs_commands_new(w);
        CHECK(c != NULL);
        if (c) CHECK_EQ_INT(ecs_cmd_set(c, e, pos, &(Pos){2, 2}), ECS_OK);
    }
    CHECKF(t.n > before, "queries and command buffers did not allocate through the hook");
    ecs_world_free(w);
    CHECKF(t.n == 0, "%zu blocks still live after ecs_world_free", t.n);
    CHECK_EQ_INT(t.foreign, 0);
    track_fini(&t);
}

/* ---- results and error text ------------------------------------------------ */
TEST(result_str_names_every_code) {
    CHECK(!strcmp(ecs_result_str(ECS_OK), "ECS_OK"));
    CHECK(!strcmp(ecs_result_str(ECS_ERR_ARG), "ECS_ERR_ARG"));
    CHECK(!strcmp(ecs_result_str(ECS_ERR_STALE), "ECS_ERR_STALE"));
    CHECK(!strcmp(ecs_result_str(ECS_ERR_NOMEM), "ECS_ERR_NOMEM"));
    CHECK(!strcmp(ecs_result_str(ECS_ERR_INVALID_GRAPH), "ECS_ERR_INVALID_GRAPH"));
    CHECK(!strcmp(ecs_result_str(ECS_ERR_BUSY), "ECS_ERR_BUSY"));
}

TEST(last_error_empty_on_new_world) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    const char *msg = ecs_last_error(w);
    CHECK(msg != NULL);
    if (msg) CHECKF(msg[0] == '\0', "fresh world has error \"%s\"", msg);
    ecs_world_free(w);
}

TEST(last_error_describes_failures) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ecs_component(w, "Position", sizeof(Pos), 0);
    REQUIRE(pos);

    CHECK(ecs_component(w, "Position", 4, 0) == 0);
    const char *msg = ecs_last_error(w);
    REQUIRE(msg);
    CHECKF(strstr(msg, "Position") != NULL, "size clash error does not name the component: \"%s\"", msg);
    CHECK(strchr(msg, '\n') == NULL || strchr(msg, '\n')[1] == '\0');   /* one line */

    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_ERR_STALE);
    msg = ecs_last_error(w);
    CHECK(msg && msg[0]);

    ecs_entity e2 = ecs_create(w);
    CHECK_EQ_INT(ecs_add(w, e2, 999), ECS_ERR_ARG);
    msg = ecs_last_error(w);
    CHECK(msg && msg[0]);

    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{999, ECS_READ, ECS_AND}}}) == NULL);
    msg = ecs_last_error(w);
    CHECK(msg && msg[0]);

    CHECK(ecs_resource_get(w, pos) == NULL);
    msg = ecs_last_error(w);
    CHECK(msg && msg[0]);
    ecs_world_free(w);
}

/* ---- components and tags ----------------------------------------------------- */
TEST(component_same_name_returns_same_id) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ecs_component(w, "Pos", sizeof(Pos), _Alignof(Pos));
    REQUIRE(a != 0);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_component(w, "Pos", sizeof(Pos), _Alignof(Pos)), a);
    CHECK_EQ_INT(ECS_COMPONENT(w, Pos), a);
    CHECK_EQ_INT(ecs_id_count(w), n);
    ecs_id b = ecs_component(w, "Other", sizeof(Pos), 0);
    CHECK(b != 0 && b != a);
    CHECK_EQ_INT(ecs_id_count(w), n + 1);
    ecs_world_free(w);
}

/* The contract ties identity to name and size; the alignment asked for the
   second time (explicit or 0 = natural) does not matter. */
TEST(component_same_name_same_size_other_align_same_id) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ECS_COMPONENT(w, Pos);                    /* size 8, align 4 */
    REQUIRE(a != 0);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_component(w, "Pos", sizeof(Pos), 0), a);
    CHECK_EQ_INT(ecs_component(w, "Pos", sizeof(Pos), 8), a);
    CHECK_EQ_INT(ecs_id_count(w), n);
    ecs_id r = ecs_resource(w, "Cfg", sizeof(Cfg), 0, NULL);
    REQUIRE(r != 0);
    CHECK_EQ_INT(ecs_resource(w, "Cfg", sizeof(Cfg), _Alignof(Cfg), NULL), r);
    ecs_world_free(w);
}

TEST(component_same_name_other_size_fails) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ecs_component(w, "Pos", sizeof(Pos), 0);
    REQUIRE(a != 0);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_component(w, "Pos", sizeof(Pos) + 4, 0), 0);
    const char *msg = ecs_last_error(w);
    CHECK(msg && strstr(msg, "Pos"));
    CHECK_EQ_INT(ecs_component(w, "Pos", 0, 0), 0);            /* as a tag */
    CHECK_EQ_INT(ecs_id_count(w), n);
    CHECK_EQ_INT(ecs_lookup(w, "Pos"), a);
    CHECK_EQ_INT(ecs_id_size(w, a), sizeof(Pos));
    ecs_world_free(w);
}

TEST(component_name_of_resource_fails) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id r = ecs_resource(w, "Time", sizeof(double), 0, NULL);
    REQUIRE(r != 0);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_component(w, "Time", sizeof(double), 0), 0);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_component(w, "Time", 0, 0), 0);
    CHECK_EQ_INT(ecs_id_count(w), n);
    CHECK_EQ_INT(ecs_lookup(w, "Time"), r);
    CHECK(ecs_resource_get(w, r) != NULL);
    ecs_world_free(w);
}

TEST(tag_same_name_returns_same_id) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id t = ecs_component(w, "Frozen", 0, 0);
    REQUIRE(t != 0);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_component(w, "Frozen", 0, 0), t);
    CHECK_EQ_INT(ecs_id_count(w), n);
    CHECK_EQ_INT(ecs_id_size(w, t), 0);
    CHECK_EQ_INT(ecs_component(w, "Frozen", 4, 0), 0);   /* a tag is size 0 */
    CHECK_EQ_INT(ecs_id_count(w), n);
    ecs_world_free(w);
}

TEST(component_null_or_empty_name_fails) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_component(w, NULL, 4, 0), 0);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_component(w, "", 4, 0), 0);
    CHECK_EQ_INT(ecs_component(w, NULL, 0, 0), 0);
    CHECK_EQ_INT(ecs_component(w, "", 0, 0), 0);
    CHECK_EQ_INT(ecs_resource(w, NULL, 4, 0, NULL), 0);
    CHECK_EQ_INT(ecs_resource(w, "", 4, 0, NULL), 0);
    CHECK_EQ_INT(ecs_id_count(w), n);
    ecs_world_free(w);
}

TEST(component_bad_align_fails) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id n = ecs_id_count(w);
    const size_t bad[] = {3, 5, 6, 12, 24, 48, 65, 96, 128, 256, 4096};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "Bad%zu", bad[i]);
        CHECKF(ecs_component(w, name, 256, bad[i]) == 0, "align %zu accepted", bad[i]);
        CHECKF(ecs_resource(w, name, 256, bad[i], NULL) == 0, "resource align %zu accepted", bad[i]);
        CHECK_EQ_INT(ecs_lookup(w, name), 0);
    }
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_id_count(w), n);
    for (size_t a = 1; a <= 64; a *= 2) {
        char name[32];
        snprintf(name, sizeof name, "Good%zu", a);
        CHECKF(ecs_component(w, name, 64, a) != 0, "align %zu refused", a);
    }
    CHECK(ecs_component(w, "Natural", 24, 0) != 0);
    CHECK_EQ_INT(ecs_id_count(w), n + 8);
    ecs_world_free(w);
}

TEST(lookup_name_size_count) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id n0 = ecs_id_count(w);
    ecs_id a = ecs_component(w, "A", 12, 4);
    ecs_id t = ecs_component(w, "T", 0, 0);
    ecs_id r = ecs_resource(w, "R", 24, 8, NULL);
    REQUIRE(a && t && r);
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(n, n0 + 3);
    CHECK(a != t && t != r && a != r);
    CHECK(a >= 1 && a <= n && t >= 1 && t <= n && r >= 1 && r <= n);
    CHECK_EQ_INT(ecs_lookup(w, "A"), a);
    CHECK_EQ_INT(ecs_lookup(w, "T"), t);
    CHECK_EQ_INT(ecs_lookup(w, "R"), r);
    CHECK_EQ_INT(ecs_lookup(w, "Nope"), 0);
    CHECK_EQ_INT(ecs_lookup(w, "a"), 0);
    CHECK(ecs_id_name(w, a) && !strcmp(ecs_id_name(w, a), "A"));
    CHECK(ecs_id_name(w, t) && !strcmp(ecs_id_name(w, t), "T"));
    CHECK(ecs_id_name(w, r) && !strcmp(ecs_id_name(w, r), "R"));
    CHECK(ecs_id_name(w, 0) == NULL);
    CHECK(ecs_id_name(w, n + 1) == NULL);
    CHECK(ecs_id_name(w, 0xFFFFFFFFu) == NULL);
    CHECK_EQ_INT(ecs_id_size(w, a), 12);
    CHECK_EQ_INT(ecs_id_size(w, t), 0);
    CHECK_EQ_INT(ecs_id_size(w, r), 24);
    CHECK_EQ_INT(ecs_id_size(w, 0), 0);
    CHECK_EQ_INT(ecs_id_size(w, n + 1), 0);
    ecs_world_free(w);
}

TEST(id_name_is_copied) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    char buf[16] = "Velocity";
    ecs_id v = ecs_component(w, buf, 8, 0);
    REQUIRE(v);
    strcpy(buf, "XXXXXXXX");
    CHECK(ecs_id_name(w, v) && !strcmp(ecs_id_name(w, v), "Velocity"));
    CHECK_EQ_INT(ecs_lookup(w, "Velocity"), v);
    CHECK_EQ_INT(ecs_lookup(w, "XXXXXXXX"), 0);
    ecs_world_free(w);
}

/* ---- resources ----------------------------------------------------------- */
TEST(resource_macro_registers_by_type) {
    typedef struct { int a; double b; } Config;
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id id = ECS_RESOURCE(w, Config, &(Config){3, 4.5});
    REQUIRE(id);
    CHECK(!strcmp(ecs_id_name(w, id), "Config"));
    CHECK_EQ_INT(ecs_id_size(w, id), sizeof(Config));
    const Config *c = (const Config *)ecs_resource_get(w, id);
    CHECK(c && c->a == 3 && c->b == 4.5);
    CHECK_EQ_INT(ECS_RESOURCE(w, Config, NULL), id);   /* same name and size: same id */
    ecs_world_free(w);
}

TEST(resource_init_is_copied_once) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    Cfg init = {5, 2.5};
    ecs_id r = ecs_resource(w, "Cfg", sizeof(Cfg), _Alignof(Cfg), &init);
    REQUIRE(r);
    init.a = 99; init.b = -1;
    Cfg *c = (Cfg *)ecs_resource_get(w, r);
    REQUIRE(c);
    CHECK(c != &init);
    CHECK(c->a == 5 && c->b == 2.5);
    c->a = 6;
    Cfg other = {100, 100};
    ecs_id n = ecs_id_count(w);
    CHECK_EQ_INT(ecs_resource(w, "Cfg", sizeof(Cfg), _Alignof(Cfg), &other), r);
    CHECK_EQ_INT(ecs_id_count(w), n);
    c = (Cfg *)ecs_resource_get(w, r);
    REQUIRE(c);
    CHECKF(c->a == 6 && c->b == 2.5, "re-registration changed the value to {%d, %g}", c->a, c->b);
    CHECK_EQ_INT(ecs_resource(w, "Cfg", sizeof(Cfg) + 8, 0, &other), 0);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_id_count(w), n);
    ecs_world_free(w);
}

TEST(resource_null_init_is_zeroed_and_aligned) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id r = ecs_resource(w, "Blob", 200, 0, NULL);
    ecs_id r32 = ecs_resource(w, "Blob32", 96, 32, NULL);
    ecs_id r64 = ecs_resource(w, "Blob64", 64, 64, NULL);
    REQUIRE(r && r32 && r64);
    const unsigned char *b = (const unsigned char *)ecs_resource_get(w, r);
    REQUIRE(b);
    int nonzero = 0;
    for (int i = 0; i < 200; i++) nonzero += b[i] != 0;
    CHECK_EQ_INT(nonzero, 0);
    void *p32 = ecs_resource_get(w, r32), *p64 = ecs_resource_get(w, r64);
    CHECK(p32 && (uintptr_t)p32 % 32 == 0);
    CHECK(p64 && (uintptr_t)p64 % 64 == 0);
    ecs_world_free(w);
}

TEST(resource_get_on_non_resource_is_null) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id c = ECS_COMPONENT(w, Pos);
    ecs_id t = ecs_component(w, "Tag", 0, 0);
    REQUIRE(c && t);
    CHECK(ecs_resource_get(w, c) == NULL);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK(ecs_resource_get(w, t) == NULL);
    CHECK(ecs_resource_get(w, 0) == NULL);
    CHECK(ecs_resource_get(w, 999) == NULL);
    ecs_world_free(w);
}

TEST(resource_id_rejected_by_entity_calls) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, Pos);
    ecs_id r = ecs_resource(w, "Gravity", sizeof(Pos), 0, NULL);
    REQUIRE(pos && r);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, e, pos, &(Pos){1, 2}), ECS_OK);
    unsigned long long h = test_world_hash(w);
    CHECK_EQ_INT(ecs_add(w, e, r), ECS_ERR_ARG);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0]);
    CHECK_EQ_INT(ecs_set(w, e, r, &(Pos){3, 4}), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_create_many(w, 2, (ecs_id[]){pos, r}, 2, NULL), ECS_ERR_ARG);
    CHECK(!ecs_has(w, e, r));
    CHECK(ecs_get(w, e, r) == NULL);
    CHECK_EQ_INT(test_world_hash(w), h);
    CHECK_EQ_INT(ecs_count(w), 1);
    const Pos *g = (const Pos *)ecs_resource_get(w, r);
    CHECK(g && g->x == 0 && g->y == 0);
    ecs_world_free(w);
}

TEST(tag_has_no_value) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id t = ecs_component(w, "Tag", 0, 0);
    REQUIRE(t);
    ecs_entity e = ecs_create(w), f = ecs_create(w);
    CHECK_EQ_INT(ecs_add(w, e, t), ECS_OK);
    CHECK(ecs_has(w, e, t));
    CHECK(ecs_get(w, e, t) == NULL);
    CHECK(ecs_get_mut(w, e, t) == NULL);
    CHECK_EQ_INT(ecs_set(w, f, t, NULL), ECS_OK);   /* NULL is fine for a tag */
    CHECK(ecs_has(w, f, t));
    CHECK(ecs_get(w, f, t) == NULL);
    CHECK_EQ_INT(ecs_remove(w, e, t), ECS_OK);
    CHECK(!ecs_has(w, e, t));
    CHECK(ecs_has(w, f, t));
    ecs_world_free(w);
}

void suite_world(void) {
    RUN(world_new_null_desc_works);
    RUN(world_new_with_desc_works);
    RUN(world_new_bad_desc_returns_null);
    RUN(world_realloc_hook_used_and_balanced);
    RUN(world_free_frees_queries_and_command_buffers);
    RUN(result_str_names_every_code);
    RUN(last_error_empty_on_new_world);
    RUN(last_error_describes_failures);
    RUN(component_same_name_returns_same_id);
    RUN(component_same_name_same_size_other_align_same_id);
    RUN(component_same_name_other_size_fails);
    RUN(component_name_of_resource_fails);
    RUN(tag_same_name_returns_same_id);
    RUN(component_null_or_empty_name_fails);
    RUN(component_bad_align_fails);
    RUN(lookup_name_size_count);
    RUN(id_name_is_copied);
    RUN(resource_init_is_copied_once);
    RUN(resource_macro_registers_by_type);
    RUN(resource_null_init_is_zeroed_and_aligned);
    RUN(resource_get_on_non_resource_is_null);
    RUN(resource_id_rejected_by_entity_calls);
    RUN(tag_has_no_value);
}
