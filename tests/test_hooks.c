/* component hooks: a component that owns memory is constructed, moved,
   copied and destroyed exactly once on every path (ASan sees the leaks and
   double frees), events run in order, structural calls made in hooks are
   deferred to right after the change, and entity fields of a command
   buffer's values get the live handles of its pending entities. */
#include "test.h"
#include <stdatomic.h>
#include <stddef.h>

typedef struct trail { int *points; int n; } trail;   /* owns points */
typedef struct hk_count { long ctor, dtor, copy, move, add, set, remove; char log[4096]; int len; } hk_count;
static hk_count hk;

static void trail_ctor(void *p, int n, void *ctx) {
    (void)ctx;
    trail *t = (trail *)p;
    for (int i = 0; i < n; i++) { t[i].points = (int *)malloc(4 * sizeof(int)); t[i].n = 0; hk.ctor++; }
}
static void trail_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    trail *t = (trail *)p;
    for (int i = 0; i < n; i++) { free(t[i].points); t[i].points = NULL; hk.dtor++; }
}
static void trail_copy(void *dst, const void *src, int n, void *ctx) {   /* dst constructed */
    (void)ctx;
    trail *d = (trail *)dst;
    const trail *s = (const trail *)src;
    for (int i = 0; i < n; i++) { d[i].n = s[i].n; if (s[i].points) memcpy(d[i].points, s[i].points, 4 * sizeof(int)); hk.copy++; }
}
static void trail_move(void *dst, const void *src, int n, void *ctx) {   /* dst raw, src left raw */
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(trail));
    hk.move += n;
}
static void hk_log(char c) { if (hk.len < (int)sizeof hk.log - 1) hk.log[hk.len++] = c; }
static void on_add(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)e; (void)id; (void)v; (void)ctx; hk.add++; hk_log('a');
}
static void on_set(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)e; (void)id; (void)ctx;
    hk.set++; hk_log('s');
    CHECK(v && ((trail *)v)->points);
}
static void on_remove(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)id; (void)ctx;
    hk.remove++; hk_log('r');
    CHECK(ecs_is_alive(w, e) && v && ((trail *)v)->points);
}

static ecs_id hk_trail(ecs_world *w) {
    return ecs_component_init(w, &(ecs_component_desc){.name = "trail", .size = sizeof(trail),
        .align = _Alignof(trail), .ctor = trail_ctor, .dtor = trail_dtor, .copy = trail_copy,
        .move = trail_move, .on_add = on_add, .on_set = on_set, .on_remove = on_remove});
}
static int hk_paused;   /* the test's own queries never fail an allocation */
static size_t hk_live(ecs_world *w, ecs_id id) {
    hk_paused++;
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{id, ECS_READ, ECS_AND}}});
    size_t n = q ? ecs_query_count(w, q) : 0;
    ecs_query_free(q);
    hk_paused--;
    return n;
}
#define HK_BALANCED(w, id) CHECKF(hk.ctor - hk.dtor == (long)hk_live((w), (id)), \
    "constructed %ld, destroyed %ld, live %zu", hk.ctor, hk.dtor, hk_live((w), (id)))

TEST(hooks_every_path_balanced) {
    memset(&hk, 0, sizeof hk);
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id tr = hk_trail(w);
    REQUIRE(tr);
    CHECK_EQ_INT(hk_trail(w), tr);   /* the same desc again: the same id */
    ecs_id ta = ecs_component(w, "TagA", 0, 0), tb = ecs_component(w, "TagB", 0, 0);
    ecs_id pos = ecs_component(w, "Pos", 8, 0);
    ecs_entity many[300];
    CHECK_EQ_INT(ecs_create_many(w, 300, &tr, 1, many), ECS_OK);   /* bulk: ctor, on_add; growth moves */
    CHECK_EQ_INT(hk.ctor, 300);
    CHECK_EQ_INT(hk.add, 300);
    HK_BALANCED(w, tr);
    for (int i = 0; i < 300; i += 3) {   /* moves across tables: tags and a plain component */
        CHECK_EQ_INT(ecs_add(w, many[i], ta), ECS_OK);
        CHECK_EQ_INT(ecs_add(w, many[i], tb), ECS_OK);
        CHECK_EQ_INT(ecs_add(w, many[i], pos), ECS_OK);
        CHECK_EQ_INT(ecs_remove(w, many[i], ta), ECS_OK);
    }
    CHECK_EQ_INT(hk.add, 300);   /* kept ids run no add/remove hooks */
    HK_BALANCED(w, tr);
    ecs_entity e = ecs_create(w);
    hk.len = 0;
    trail v = {NULL, 0};
    int pts[4] = {1, 2, 3, 4};
    v.points = pts;
    v.n = 4;
    CHECK_EQ_INT(ecs_set(w, e, tr, &v), ECS_OK);   /* missing: ctor, on_add, copy, on_set */
    CHECK_EQ_INT(ecs_set(w, e, tr, &v), ECS_OK);   /* present: copy, on_set */
    CHECK(hk.len == 3 && !memcmp(hk.log, "ass", 3));
    const trail *got = (const trail *)ecs_get(w, e, tr);
    CHECK(got && got->n == 4 && got->points != pts && got->points[3] == 4);
    CHECK_EQ_INT(ecs_remove(w, e, tr), ECS_OK);    /* on_remove, dtor */
    CHECK_EQ_INT(hk.remove, 1);
    HK_BALANCED(w, tr);
    CHECK_EQ_INT(ecs_destroy(w, many[299]), ECS_OK);   /* the last row: no move needed */
    CHECK_EQ_INT(ecs_destroy(w, many[1]), ECS_OK);     /* a hole: the last row moves into it */
    HK_BALANCED(w, tr);
    /* defer mode and command buffers, a command dropped because its target died */
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    ecs_entity d = ecs_create(w);
    CHECK_EQ_INT(ecs_set(w, d, tr, &v), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, many[2]), ECS_OK);
    CHECK_EQ_INT(ecs_add(w, many[2], ta), ECS_OK);   /* dropped: many[2] is dead by then */
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    HK_BALANCED(w, tr);
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    ecs_entity p = ecs_cmd_create(c);
    CHECK_EQ_INT(ecs_cmd_set(c, p, tr, &v), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_destroy(c, many[4]), ECS_OK);
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
    HK_BALANCED(w, tr);
    long live = (long)hk_live(w, tr);
    CHECK(live > 250);
    ecs_world_free(w);   /* world free: on_remove and dtor of every live value */
    CHECK_EQ_INT(hk.ctor, hk.dtor);
    CHECK(hk.remove >= live);
}

/* Lifecycle hooks without events: add and remove take the direct path, which
   must still construct, move and destroy each value exactly once, keep every
   entity's own value through swap-removes, and leave ecs_set, iteration
   locks and defer mode to the checked path. */
static long lf_ctor, lf_dtor;
static void lf_ctor_fn(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) { ((int **)p)[i] = (int *)calloc(1, sizeof(int)); lf_ctor++; }
}
static void lf_dtor_fn(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) { free(((int **)p)[i]); lf_dtor++; }
}
static void lf_move_fn(void *dst, const void *src, int n, void *ctx) {   /* dst raw */
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(int *));
}
static void lf_copy_fn(void *dst, const void *src, int n, void *ctx) {   /* dst constructed */
    (void)ctx;
    for (int i = 0; i < n; i++) **((int **)dst + i) = **((int *const *)src + i);
}
TEST(hooks_lifecycle_direct_moves) {
    lf_ctor = lf_dtor = 0;
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id box = ecs_component_init(w, &(ecs_component_desc){.name = "Box", .size = sizeof(int *),
        .align = _Alignof(int *), .ctor = lf_ctor_fn, .dtor = lf_dtor_fn, .copy = lf_copy_fn, .move = lf_move_fn});
    ecs_id pos = ecs_component(w, "Pos", 12, 4), tag = ecs_component(w, "Tag", 0, 0);
    REQUIRE(box && pos && tag);
    enum { N = 64 };
    ecs_entity e[N];
    CHECK_EQ_INT(ecs_create_many(w, N, &pos, 1, e), ECS_OK);
    for (int i = 0; i < N; i++) {
        float v[3] = {(float)i, 0, 0};
        CHECK_EQ_INT(ecs_set(w, e[i], pos, v), ECS_OK);
        CHECK_EQ_INT(ecs_add(w, e[i], box), ECS_OK);   /* constructed */
        int **b = (int **)ecs_get_mut(w, e[i], box);
        REQUIRE(b && *b);
        **b = 1000 + i;
    }
    CHECK_EQ_INT(lf_ctor, N);
    for (int round = 0; round < 3; round++)   /* holes everywhere: every row moves */
        for (int i = round; i < N; i += 2) {
            CHECK_EQ_INT(ecs_add(w, e[i], tag), ECS_OK);
            CHECK_EQ_INT(ecs_remove(w, e[i], tag), ECS_OK);
            CHECK_EQ_INT(ecs_add(w, e[i], tag), ECS_OK);
        }
    for (int i = 0; i < N; i += 3) CHECK_EQ_INT(ecs_remove(w, e[i], box), ECS_OK);   /* destroyed */
    long removed = (N + 2) / 3;
    CHECK_EQ_INT(lf_ctor, N);
    CHECK_EQ_INT(lf_dtor, removed);
    for (int i = 0; i < N; i++) {
        const float *p = (const float *)ecs_get(w, e[i], pos);
        int *const *b = (int *const *)ecs_get(w, e[i], box);
        CHECK(p && p[0] == (float)i);
        if (i % 3 == 0) CHECK(!b);
        else CHECK(b && *b && **b == 1000 + i);
    }
    /* the checked path still answers: a value set, a locked table, defer mode */
    int seven = 7, *mine = &seven;
    CHECK_EQ_INT(ecs_set(w, e[0], box, &mine), ECS_OK);   /* constructed, then copied into */
    CHECK_EQ_INT(lf_ctor, N + 1);
    int *const *b0 = (int *const *)ecs_get(w, e[0], box);
    CHECK(b0 && *b0 != mine && **b0 == 7);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    ecs_iter it = ecs_query_iter(w, q);
    CHECK(ecs_query_next(&it));
    CHECK_EQ_INT(ecs_remove(w, it.entities[0], tag), ECS_ERR_BUSY);
    ecs_iter_fini(&it);
    ecs_query_free(q);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_remove(w, e[1], box), ECS_OK);
    CHECK(ecs_has(w, e[1], box));   /* recorded, not done */
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(!ecs_has(w, e[1], box));
    CHECK_EQ_INT(lf_dtor, removed + 1);
    ecs_world_free(w);
    CHECK_EQ_INT(lf_ctor, lf_dtor);
}

/* A resource that owns memory: constructed, assigned from init with copy,
   destroyed at world free; event hooks are refused (no entity). */
TEST(hooks_resource_owns_memory) {
    memset(&hk, 0, sizeof hk);
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    int pts[4] = {5, 6, 7, 8};
    trail init = {pts, 4};
    ecs_component_desc d = {.name = "Trails", .size = sizeof(trail), .align = _Alignof(trail),
        .ctor = trail_ctor, .dtor = trail_dtor, .copy = trail_copy, .move = trail_move};
    ecs_id r = ecs_resource_init(w, &d, &init);
    REQUIRE(r);
    CHECK(hk.ctor == 1 && hk.copy == 1 && hk.dtor == 0);
    const trail *t = (const trail *)ecs_resource_get(w, r);
    CHECK(t && t->n == 4 && t->points != pts && t->points[2] == 7);
    CHECK_EQ_INT(ecs_resource_init(w, &d, &init), r);   /* the same again: no second construction */
    CHECK_EQ_INT(hk.ctor, 1);
    d.name = "Scores";
    d.on_set = on_set;
    CHECK_EQ_INT(ecs_resource_init(w, &d, NULL), 0);
    CHECK(strstr(ecs_last_error(w), "is a resource") != NULL);
    CHECK_EQ_INT(ecs_lookup(w, "Scores"), 0);
    d.on_set = NULL;
    d.entity_field_count = 1;
    CHECK_EQ_INT(ecs_resource_init(w, &d, NULL), 0);
    d.entity_field_count = 0;
    d.name = "Trail";
    CHECK_EQ_INT(ecs_component(w, "Trail", 8, 0) != 0, 1);
    CHECK_EQ_INT(ecs_resource_init(w, &d, NULL), 0);   /* a component of that name with no hooks */
    CHECK_EQ_INT(ecs_resource_init(NULL, &d, NULL), 0);
    CHECK_EQ_INT(ecs_resource_init(w, NULL, NULL), 0);
    ecs_world_free(w);   /* the dtor frees what the resource owns (ASan sees a leak otherwise) */
    CHECK(hk.ctor == 1 && hk.dtor == 1);
}

/* A command buffer stores values aligned for their type: copy hooks read
   their source as the type (UBSan and this check catch a misaligned one). */
typedef struct hk_wide { double d; long long n; } hk_wide;
static long hk_misaligned, hk_copies;
static void wide_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    if ((uintptr_t)src % _Alignof(hk_wide)) hk_misaligned++;
    for (int i = 0; i < n; i++) { ((hk_wide *)dst)[i] = ((const hk_wide *)src)[i]; hk_copies++; }
}
TEST(hooks_command_values_aligned) {
    hk_misaligned = hk_copies = 0;
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id byte = ecs_component(w, "Byte", 1, 1);
    ecs_id wide = ecs_component_init(w, &(ecs_component_desc){.name = "Wide", .size = sizeof(hk_wide),
        .align = _Alignof(hk_wide), .copy = wide_copy});
    ecs_entity e = ecs_create(w);
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c && byte && wide);
    for (int k = 0; k < 20; k++) {   /* odd offsets before every value */
        char b = (char)k;
        hk_wide v = {k * 0.5, k};
        CHECK_EQ_INT(ecs_cmd_set(c, e, byte, &b), ECS_OK);
        CHECK_EQ_INT(ecs_cmd_set(c, e, wide, &v), ECS_OK);
        CHECK_EQ_INT(ecs_cmd_set_parent(c, ecs_cmd_create(c), e), ECS_OK);
    }
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);   /* deferred ecs_set: the same buffer kind */
    char b = 1;
    hk_wide v = {2.5, 7};
    CHECK_EQ_INT(ecs_set(w, e, byte, &b), ECS_OK);
    CHECK_EQ_INT(ecs_set(w, e, wide, &v), ECS_OK);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK_EQ_INT(hk_copies, 42);   /* into the buffer when recorded, into the entity when applied */
    CHECK_EQ_INT(hk_misaligned, 0);
    const hk_wide *got = (const hk_wide *)ecs_get(w, e, wide);
    CHECK(got && got->d == 2.5 && got->n == 7);
    CHECK_EQ_INT(ecs_children(w, e, NULL, 0), 20);
    ecs_world_free(w);
}

/* Bulk creation with values: plain columns copied whole, hooked ones
   constructed then copied (on_add, then on_set), NULL means the default,
   in defer mode at the block's end; repeated ids refused. */
TEST(create_many_values) {
    memset(&hk, 0, sizeof hk);
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id tr = hk_trail(w), pos = ecs_component(w, "Pos", 8, 0), vel = ecs_component(w, "Vel", 8, 0),
           tag = ecs_component(w, "Tag", 0, 0);
    enum { N = 300 };
    static float p[N][2];
    static trail t[N];
    static int pts[N][4];
    for (int i = 0; i < N; i++) {
        p[i][0] = (float)i; p[i][1] = -(float)i;
        pts[i][0] = i;
        t[i].points = pts[i];
        t[i].n = i % 5;
    }
    ecs_entity out[N];
    ecs_id ids[4] = {vel, pos, tr, tag};
    const void *vals[4] = {NULL, p, t, p};   /* a value for a tag is ignored */
    hk.len = 0;
    CHECK_EQ_INT(ecs_create_many_values(w, N, ids, 4, vals, out), ECS_OK);
    CHECK(hk.ctor == N && hk.copy == N && hk.add == N && hk.set == N);
    CHECK(hk.len >= 4 && !memcmp(hk.log, "asas", 4));   /* per entity: on_add, then on_set */
    bool ok = true;
    for (int i = 0; i < N; i++) {
        const float *gp = (const float *)ecs_get(w, out[i], pos), *gv = (const float *)ecs_get(w, out[i], vel);
        const trail *gt = (const trail *)ecs_get(w, out[i], tr);
        ok &= gp && gp[0] == (float)i && gp[1] == -(float)i && gv && gv[0] == 0 && gv[1] == 0 &&
              gt && gt->n == i % 5 && gt->points != pts[i] && gt->points[0] == i && ecs_has(w, out[i], tag);
    }
    CHECK(ok);
    HK_BALANCED(w, tr);
    ecs_id twice[2] = {pos, pos};
    const void *two[2] = {p, p};
    size_t before = ecs_count(w);
    CHECK_EQ_INT(ecs_create_many_values(w, 3, twice, 2, two, NULL), ECS_ERR_ARG);
    CHECK(strstr(ecs_last_error(w), "twice") != NULL);
    CHECK_EQ_INT(ecs_count(w), before);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);   /* deferred: the values land at the end */
    ecs_entity d[2];
    CHECK_EQ_INT(ecs_create_many_values(w, 2, ids, 3, vals, d), ECS_OK);
    CHECK(!ecs_is_alive(w, d[0]));
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    const float *g1 = (const float *)ecs_get(w, d[1], pos);
    const trail *t1 = (const trail *)ecs_get(w, d[1], tr);
    CHECK(g1 && g1[0] == 1 && g1[1] == -1 && t1 && t1->n == 1 && t1->points[0] == 1);
    HK_BALANCED(w, tr);
    ecs_world_free(w);
    CHECK_EQ_INT(hk.ctor, hk.dtor);
}

/* Bulk destroys: all or nothing, with cascades and hooks. */
TEST(destroy_many_and_with) {
    memset(&hk, 0, sizeof hk);
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id tr = hk_trail(w), pos = ecs_component(w, "Pos", 8, 0), tag = ecs_component(w, "Doomed", 0, 0);
    ecs_entity e[40];
    CHECK_EQ_INT(ecs_create_many(w, 40, &pos, 1, e), ECS_OK);
    for (int i = 0; i < 40; i++) {
        if (i % 2) CHECK_EQ_INT(ecs_add(w, e[i], tr), ECS_OK);
        if (i % 3 == 0) CHECK_EQ_INT(ecs_add(w, e[i], tag), ECS_OK);
        if (i >= 30) CHECK_EQ_INT(ecs_set_parent(w, e[i], e[i - 10]), ECS_OK);   /* 20..29 have children */
    }
    ecs_entity list[4] = {e[20], e[30], e[20], e[5]};   /* twice, and a child after its parent */
    CHECK_EQ_INT(ecs_destroy_many(w, list, 4), ECS_OK);
    CHECK(!ecs_is_alive(w, e[20]) && !ecs_is_alive(w, e[30]) && !ecs_is_alive(w, e[5]) && ecs_is_alive(w, e[21]));
    CHECK_EQ_INT(ecs_count(w), 37);
    HK_BALANCED(w, tr);
    ecs_entity stale[2] = {e[1], e[5]};   /* e[5] is dead: nothing happens */
    CHECK_EQ_INT(ecs_destroy_many(w, stale, 2), ECS_ERR_STALE);
    CHECK(ecs_is_alive(w, e[1]));
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{tr, ECS_READ, ECS_AND}}});
    ecs_iter it = ecs_query_iter(w, q);
    CHECK(ecs_query_next(&it));
    ecs_entity busy[2] = {e[2], e[1]};   /* e[1]'s table is being iterated */
    CHECK_EQ_INT(ecs_destroy_many(w, busy, 2), ECS_ERR_BUSY);
    CHECK_EQ_INT(ecs_destroy_with(w, tag), ECS_ERR_BUSY);
    CHECK(ecs_is_alive(w, e[2]) && ecs_is_alive(w, e[1]));
    ecs_iter_fini(&it);
    ecs_query_free(q);
    size_t before = ecs_count(w), doomed = 0, kids = 0;
    for (int i = 0; i < 40; i++)
        if (ecs_is_alive(w, e[i]) && ecs_has(w, e[i], tag)) {
            doomed++;
            kids += (i >= 20 && i < 30 && ecs_is_alive(w, e[i + 10]) && !ecs_has(w, e[i + 10], tag));
        }
    CHECK_EQ_INT(ecs_destroy_with(w, tag), ECS_OK);   /* and the children of those that had it */
    CHECK_EQ_INT(ecs_count(w), before - doomed - kids);
    for (int i = 0; i < 40; i++) CHECK(!ecs_is_alive(w, e[i]) || !ecs_has(w, e[i], tag));
    HK_BALANCED(w, tr);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);   /* deferred: recorded, applied at the end */
    CHECK_EQ_INT(ecs_destroy_many(w, &e[1], 1), ECS_OK);
    CHECK(ecs_is_alive(w, e[1]));
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(!ecs_is_alive(w, e[1]));
    CHECK_EQ_INT(ecs_destroy_many(w, NULL, 0), ECS_OK);
    CHECK_EQ_INT(ecs_destroy_many(w, NULL, 2), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_destroy_with(w, 9999), ECS_ERR_ARG);
    ecs_world_free(w);
    CHECK_EQ_INT(hk.ctor, hk.dtor);
}

/* Structural calls made in a hook wait until the change that ran it is done. */
static ecs_id hk_tag;
static void adds_tag(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)id; (void)v; (void)ctx;
    CHECK_EQ_INT(ecs_add(w, e, hk_tag), ECS_OK);   /* recorded */
    CHECK(!ecs_has(w, e, hk_tag));
    CHECK(ecs_create(w) != 0);                      /* reserved, live right after */
}
TEST(hooks_structural_calls_deferred) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    hk_tag = ecs_component(w, "Marked", 0, 0);
    ecs_id x = ecs_component_init(w, &(ecs_component_desc){.name = "X", .size = 4, .on_add = adds_tag});
    REQUIRE(x);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_add(w, e, x), ECS_OK);
    CHECK(ecs_has(w, e, hk_tag));
    CHECK_EQ_INT(ecs_count(w), 2);
    CHECK(ecs_component(w, "Late", 4, 0) != 0);
    ecs_world_free(w);
}

/* A parent and the orb that points at it, spawned together by a system. */
typedef struct orb { float angle; ecs_entity parent; } orb;
typedef struct spawn_ctx { ecs_id orb_id, hp; int frames; } spawn_ctx;
static void spawner(ecs_iter *it) {
    spawn_ctx *c = (spawn_ctx *)it->ctx;
    if (c->frames++) return;
    ecs_entity parent = ecs_cmd_create(it->commands);
    ecs_cmd_set(it->commands, parent, c->hp, &(int){100});
    for (int i = 0; i < 3; i++) {
        ecs_entity o = ecs_cmd_create(it->commands);
        ecs_cmd_set(it->commands, o, c->orb_id, &(orb){(float)i, parent});
    }
}
TEST(hooks_entity_fields_resolved) {
    static const int threads[4] = {1, 2, 3, 8};
    for (int t = 0; t < 4; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        spawn_ctx c = {0, 0, 0};
        c.orb_id = ecs_component_init(w, &(ecs_component_desc){.name = "orb", .size = sizeof(orb),
            .align = _Alignof(orb), .entity_fields = {offsetof(orb, parent)}, .entity_field_count = 1});
        c.hp = ecs_component(w, "hp", sizeof(int), 0);
        REQUIRE(c.orb_id && c.hp);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "spawn", .fn = spawner, .ctx = &c}));
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.orb_id, ECS_READ, ECS_AND}}});
        REQUIRE(q);
        int n = 0;
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
            const orb *o = ECS_FIELD(&it, orb, 0);
            for (int i = 0; i < it.count; i++, n++) {
                CHECKF(ecs_is_alive(w, o[i].parent) && ecs_has(w, o[i].parent, c.hp),
                       "orb %d points at %llx", i, (unsigned long long)o[i].parent);
            }
        }
        CHECK_EQ_INT(n, 3);
        ecs_query_free(q);
        ecs_world_free(w);
    }
}

TEST(hooks_bad_descs) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    CHECK(ecs_component_init(w, NULL) == 0);
    CHECK(ecs_component_init(w, &(ecs_component_desc){.name = "T", .ctor = trail_ctor}) == 0);   /* a tag */
    CHECK(ecs_component_init(w, &(ecs_component_desc){.name = "F", .size = 4, .entity_fields = {0},
        .entity_field_count = 1}) == 0);   /* no room for a handle */
    CHECK(ecs_component_init(w, &(ecs_component_desc){.name = "G", .size = 8, .entity_field_count = 9}) == 0);
    CHECK(hk_trail(w) != 0);
    CHECK(ecs_component_init(w, &(ecs_component_desc){.name = "trail", .size = sizeof(trail),
        .align = _Alignof(trail), .ctor = trail_ctor}) == 0);   /* other hooks: refused */
    CHECK(strstr(ecs_last_error(w), "other hooks") != NULL);
    ecs_world_free(w);
}

/* ---- parents and children ------------------------------------------------------ */
static ecs_entity pc_order[64];
static int pc_n;
static void pc_gone(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)id; (void)v; (void)ctx;
    if (pc_n < 64) pc_order[pc_n++] = e;
}
TEST(parents_cascade_and_loops) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id mark = ecs_component_init(w, &(ecs_component_desc){.name = "Mark", .on_remove = pc_gone});
    REQUIRE(mark);
    ecs_entity p = ecs_create(w), c1 = ecs_create(w), c2 = ecs_create(w), g1 = ecs_create(w), g2 = ecs_create(w),
               other = ecs_create(w);
    ecs_entity all[6] = {p, c1, c2, g1, g2, other};
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(ecs_add(w, all[i], mark), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, c1, p), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, c2, p), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, g2, c1), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, g1, c1), ECS_OK);
    CHECK(ecs_get_parent(w, g1) == c1 && ecs_get_parent(w, c1) == p && ecs_get_parent(w, p) == 0);
    ecs_entity kids[4];
    CHECK_EQ_INT(ecs_children(w, c1, kids, 4), 2);
    CHECK(kids[0] == g2 && kids[1] == g1);   /* attach order */
    CHECK_EQ_INT(ecs_set_parent(w, p, g1), ECS_ERR_ARG);   /* a loop: refused, nothing changes */
    CHECK(strstr(ecs_last_error(w), "loop") != NULL);
    CHECK_EQ_INT(ecs_set_parent(w, p, p), ECS_ERR_ARG);
    CHECK(ecs_get_parent(w, p) == 0);
    CHECK_EQ_INT(ecs_set_parent(w, other, c2), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, other, 0), ECS_OK);     /* detach */
    CHECK_EQ_INT(ecs_children(w, c2, NULL, 0), 0);
    CHECK_EQ_INT(ecs_set_parent(w, other, c2), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, other, g1), ECS_OK);    /* moves */
    CHECK_EQ_INT(ecs_children(w, c2, NULL, 0), 0);
    pc_n = 0;
    CHECK_EQ_INT(ecs_destroy(w, p), ECS_OK);   /* depth first, attach order: g2, other, g1, c1, c2, p */
    ecs_entity want[6] = {g2, other, g1, c1, c2, p};
    CHECK_EQ_INT(pc_n, 6);
    for (int i = 0; i < 6 && i < pc_n; i++) CHECKF(pc_order[i] == want[i], "destroyed %d: %llx", i, (unsigned long long)pc_order[i]);
    CHECK_EQ_INT(ecs_count(w), 0);
    ecs_entity fresh = ecs_create(w);   /* a recycled slot has no parent or children */
    CHECK(ecs_get_parent(w, fresh) == 0 && ecs_children(w, fresh, NULL, 0) == 0);
    ecs_world_free(w);
}

/* Parents and children spawned together from a chunked system, then
   cascades, identical at any thread count. */
typedef struct fam_ctx { ecs_id hp; } fam_ctx;
static unsigned long long fam_log;   /* the order of hook calls, hashed (they run on thread 0 only) */
static long fam_calls;
static void fam_hook(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)id;
    fam_log = (fam_log ^ e ^ (unsigned long long)(uintptr_t)ctx << 56 ^ (unsigned long long)*(int *)v << 20) *
              1099511628211ull;
    fam_calls++;
}
static void fam_spawn(ecs_iter *it) {
    const fam_ctx *c = (const fam_ctx *)it->ctx;
    const int *hp = ECS_FIELD(it, int, 0);
    for (int i = 0; i < it->count; i++) {
        if (hp[i] % 3 == 0) {   /* a new parent with two children */
            ecs_entity parent = ecs_cmd_create(it->commands);
            ecs_cmd_set(it->commands, parent, c->hp, &(int){hp[i] + 1});
            for (int k = 0; k < 2; k++) {
                ecs_entity kid = ecs_cmd_create(it->commands);
                ecs_cmd_set(it->commands, kid, c->hp, &(int){hp[i] * 7 + k});
                ecs_cmd_set_parent(it->commands, kid, parent);
            }
            ecs_cmd_set_parent(it->commands, parent, it->entities[i]);
        }
        if (hp[i] % 5 == 1) ecs_cmd_destroy(it->commands, it->entities[i]);   /* cascades */
    }
}
static unsigned long long fam_hash(ecs_world *w) {
    unsigned long long h = test_world_hash(w);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++) {
            ecs_entity kids[8];
            size_t n = ecs_children(w, it.entities[i], kids, 8);
            h = (h ^ ecs_get_parent(w, it.entities[i])) * 1099511628211ull;
            for (size_t k = 0; k < n && k < 8; k++) h = (h ^ kids[k]) * 1099511628211ull;
        }
    ecs_query_free(q);
    return h;
}
TEST(sched_parents_deterministic) {
    static const int threads[4] = {1, 2, 3, 8};
    unsigned long long first = 0;
    size_t count = 0;
    for (int t = 0; t < 4; t++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        fam_ctx c = {ecs_component_init(w, &(ecs_component_desc){.name = "hp", .size = sizeof(int),
            .on_add = fam_hook, .on_set = fam_hook, .on_remove = fam_hook, .ctx = (void *)(uintptr_t)1})};
        fam_log = 1469598103934665603ull;
        fam_calls = 0;
        for (int i = 0; i < 40; i++) {
            ecs_entity e = ecs_create(w);
            ecs_set(w, e, c.hp, &i);
        }
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "families", .fn = fam_spawn, .ctx = &c,
            .chunk_size = 8, .terms = {{c.hp, ECS_READ, ECS_AND}}}));
        for (int f = 0; f < 6; f++) CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        unsigned long long h = fam_hash(w) ^ fam_log;
        if (t == 0) { first = h; count = ecs_count(w); }
        CHECKF(h == first && ecs_count(w) == count, "threads %d: hash %llx vs %llx, %zu vs %zu entities",
               threads[t], h, first, ecs_count(w), count);
        CHECK(fam_calls > 100);
        ecs_world_free(w);
    }
    CHECK(count > 40);
}

static void pc_busy(ecs_iter *it) {
    ecs_entity *e = (ecs_entity *)it->ctx;
    CHECK_EQ_INT(ecs_set_parent(it->world, e[0], e[1]), ECS_ERR_BUSY);
}
TEST(parents_busy_in_systems) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_entity e[2] = {ecs_create(w), ecs_create(w)};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "tries", .fn = pc_busy, .ctx = e}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
    CHECK(ecs_get_parent(w, e[0]) == 0);
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    CHECK_EQ_INT(ecs_cmd_set_parent(c, e[0], e[1]), ECS_OK);
    CHECK_EQ_INT(ecs_cmd_set_parent(c, e[1], e[0]), ECS_OK);   /* a loop: dropped when applied */
    size_t dropped = ecs_commands_dropped(w);
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
    CHECK(ecs_get_parent(w, e[0]) == e[1] && ecs_get_parent(w, e[1]) == 0);
    CHECK_EQ_INT(ecs_commands_dropped(w), dropped + 1);
    ecs_world_free(w);
}

/* Every allocation of a scenario with hooks and parents fails in turn: each
   call reports ECS_ERR_NOMEM or works, values stay balanced (constructed -
   destroyed == live) after every step, and nothing leaks. */
typedef struct hk_fail { long requests, fail_at; } hk_fail;
static void *hk_realloc(void *p, size_t n, void *user) {
    hk_fail *f = (hk_fail *)user;
    if (n == 0) { free(p); return NULL; }
    if (!hk_paused && ++f->requests == f->fail_at) return NULL;
    return realloc(p, n);
}
static long hk_scenario(long fail_at) {
    hk_fail f = {0, fail_at};
    memset(&hk, 0, sizeof hk);
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = hk_realloc, .alloc_user = &f});
    if (!w) return f.requests;
    ecs_id tr = hk_trail(w), tag = ecs_component(w, "Tag", 0, 0);
    ecs_entity es[40] = {0};
    if (tr && tag) {
        ecs_result r = ecs_create_many(w, 20, &tr, 1, es);
        CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
        HK_BALANCED(w, tr);
        for (int i = 20; i < 40; i++) {
            es[i] = ecs_create(w);
            trail v = {NULL, 0};
            if (es[i]) r = ecs_set(w, es[i], tr, &v);   /* no points to copy */
            CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
            HK_BALANCED(w, tr);
        }
        for (int i = 0; i < 40; i += 2) {
            if (!ecs_is_alive(w, es[i])) continue;
            r = ecs_add(w, es[i], tag);
            CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
            if (es[i + 1] && ecs_is_alive(w, es[i + 1])) {
                r = ecs_set_parent(w, es[i + 1], es[i]);
                CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
            }
            HK_BALANCED(w, tr);
        }
        ecs_commands *c = ecs_commands_new(w);
        if (c) {
            ecs_entity p = ecs_cmd_create(c);
            if (p) (void)ecs_cmd_add(c, p, tr);
            for (int i = 0; i < 40; i += 4) if (es[i]) (void)ecs_cmd_destroy(c, es[i]);
            for (int k = 0; k < 3 && ecs_commands_apply(w, c) == ECS_ERR_NOMEM; k++) {}
            HK_BALANCED(w, tr);
        }
        for (int i = 0; i < 40; i += 3)
            if (ecs_is_alive(w, es[i])) {
                r = ecs_destroy(w, es[i]);
                CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
            }
        HK_BALANCED(w, tr);
    }
    ecs_world_free(w);
    CHECKF(hk.ctor == hk.dtor, "fail at %ld: constructed %ld, destroyed %ld", fail_at, hk.ctor, hk.dtor);
    return f.requests;
}
TEST(hooks_out_of_memory_sweep) {
    long total = hk_scenario(0);
    for (long i = 1; i <= total; i++) hk_scenario(i);
}

/* A recorded set_parent that runs out of memory stays in the buffer (found
   by the API fuzzer). */
TEST(parents_command_out_of_memory_kept) {
    hk_fail f = {0, 0};
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = hk_realloc, .alloc_user = &f});
    REQUIRE(w);
    ecs_entity e[6];
    CHECK_EQ_INT(ecs_create_many(w, 6, NULL, 0, e), ECS_OK);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_set_parent(w, e[0], e[4]), ECS_OK);   /* recorded */
    f.fail_at = f.requests + 1;
    CHECK_EQ_INT(ecs_defer_end(w), ECS_ERR_NOMEM);
    CHECK(ecs_get_parent(w, e[0]) == 0);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);   /* resumes */
    CHECK(ecs_get_parent(w, e[0]) == e[4]);
    ecs_world_free(w);
}

/* ---- values held by command buffers --------------------------------------- */
/* A value that owns heap memory and points into itself (as a short string
   does): relocated as bytes, its self-pointer would name the old place.
   Every hook checks the value it gets; the caller's own values are made and
   poisoned by the test, never counted. */
typedef struct held { char *heap; char *at; char small[8]; } held;
static struct { _Atomic long ctor, dtor, copy, move, bad; } hv;   /* systems record on any thread */
static void hv_reset(void) { hv.ctor = hv.dtor = hv.copy = hv.move = hv.bad = 0; }
static int held_ok(const held *h) { return h->at == h->small && h->heap && h->heap[0] == 'h'; }
static void held_ctor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        held *h = (held *)p + i;
        h->heap = (char *)malloc(8);
        strcpy(h->heap, "h");
        h->at = h->small;
        h->small[0] = 0;
        hv.ctor++;
    }
}
static void held_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        held *h = (held *)p + i;
        if (!held_ok(h)) hv.bad++;
        else free(h->heap);
        memset(h, 0xDD, sizeof *h);
        hv.dtor++;
    }
}
static void held_copy(void *dst, const void *src, int n, void *ctx) {   /* dst constructed */
    (void)ctx;
    for (int i = 0; i < n; i++) {
        held *d = (held *)dst + i;
        const held *s = (const held *)src + i;
        if (!held_ok(d) || !held_ok(s)) { hv.bad++; continue; }
        size_t len = strlen(s->heap) + 1;
        char *copy = (char *)malloc(len);
        memcpy(copy, s->heap, len);
        free(d->heap);
        d->heap = copy;
        memcpy(d->small, s->small, sizeof d->small);
        hv.copy++;
    }
}
static void held_move(void *dst, const void *src, int n, void *ctx) {   /* dst raw, src left raw */
    (void)ctx;
    for (int i = 0; i < n; i++) {
        held *d = (held *)dst + i, *s = (held *)(uintptr_t)src + i;
        if (!held_ok(s)) hv.bad++;
        d->heap = s->heap;
        d->at = d->small;
        memcpy(d->small, s->small, sizeof d->small);
        memset(s, 0xDD, sizeof *s);
        hv.move++;
    }
}
static ecs_id held_register(ecs_world *w) {
    return ecs_component_init(w, &(ecs_component_desc){.name = "held", .size = sizeof(held),
        .align = _Alignof(held), .ctor = held_ctor, .dtor = held_dtor, .copy = held_copy, .move = held_move});
}
/* The caller's value: "h" + text on the heap, the number in small. */
static void held_make(held *h, const char *text, int n) {
    h->heap = (char *)malloc(strlen(text) + 2);
    h->heap[0] = 'h';
    strcpy(h->heap + 1, text);
    h->at = h->small;
    snprintf(h->small, sizeof h->small, "%d", n);
}
/* The caller is done with it: freed, then poisoned. */
static void held_kill(held *h) {
    free(h->heap);
    memset(h, 0xEE, sizeof *h);
}
static int held_is(ecs_world *w, ecs_entity e, ecs_id id, const char *text, int n) {
    const held *h = (const held *)ecs_get(w, e, id);
    char small[8];
    snprintf(small, sizeof small, "%d", n);
    return h && held_ok(h) && !strcmp(h->heap + 1, text) && !strcmp(h->small, small);
}
/* Constructed - destroyed == values on entities + values held by buffers. */
#define HV_BALANCED(w, id, held_now) CHECKF(hv.ctor - hv.dtor == (long)hk_live((w), (id)) + (held_now) && \
    !hv.bad, "constructed %ld, destroyed %ld, on entities %zu, held %ld, bad %ld", hv.ctor, hv.dtor, \
    hk_live((w), (id)), (long)(held_now), hv.bad)

/* A system names what it spawns from a local that dies right after the call. */
typedef struct held_sys { ecs_id held, seed; } held_sys;
static void held_spawner(ecs_iter *it) {
    const held_sys *c = (const held_sys *)it->ctx;
    const int *seed = ECS_FIELD(it, int, 0);
    for (int i = 0; i < it->count; i++) {
        held v;
        held_make(&v, "spawned", seed[i]);
        ecs_entity p = ecs_cmd_create(it->commands);
        CHECK_EQ_INT(ecs_cmd_set(it->commands, p, c->held, &v), ECS_OK);
        held_kill(&v);
        held_make(&v, "renamed", seed[i]);
        CHECK_EQ_INT(ecs_cmd_set(it->commands, it->entities[i], c->held, &v), ECS_OK);
        held_kill(&v);
    }
}
TEST(sched_held_values_system_buffers) {
    static const int threads[4] = {1, 2, 3, 8};
    for (int t = 0; t < 4; t++) {
        hv_reset();
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads[t]});
        REQUIRE(w);
        held_sys c = {held_register(w), ecs_component(w, "seed", sizeof(int), 0)};
        REQUIRE(c.held && c.seed);
        enum { N = 200 };
        ecs_entity e[N];
        CHECK_EQ_INT(ecs_create_many(w, N, &c.seed, 1, e), ECS_OK);
        for (int i = 0; i < N; i++) *(int *)ecs_get_mut(w, e[i], c.seed) = i;
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "spawn", .fn = held_spawner, .ctx = &c,
            .terms = {{c.seed, ECS_READ, ECS_AND}}, .chunk_size = 16}));
        CHECK_EQ_INT(ecs_progress(w, 0), ECS_OK);
        HV_BALANCED(w, c.held, 0);
        for (int i = 0; i < N; i++) CHECKF(held_is(w, e[i], c.held, "renamed", i), "entity %d", i);
        int spawned = 0;
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{c.held, ECS_READ, ECS_AND},
            {c.seed, ECS_READ, ECS_NOT}}});
        REQUIRE(q);
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
            for (int i = 0; i < it.count; i++) spawned += held_is(w, it.entities[i], c.held, "spawned", spawned);
        CHECK_EQ_INT(spawned, N);   /* in seed order: the sync point applies in chunk order */
        ecs_query_free(q);
        ecs_world_free(w);
        CHECK(hv.ctor == hv.dtor && !hv.bad);
    }
}

/* Defer mode, a user buffer (applied, freed unapplied, with a command
   dropped), a buffer that grows while holding values, bulk creation in
   defer mode, and world free with values still held. */
TEST(held_values_every_buffer) {
    hv_reset();
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id id = held_register(w);
    REQUIRE(id);
    ecs_entity e = ecs_create(w), f = ecs_create(w);
    held v;
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);   /* a deferred ecs_set */
    held_make(&v, "deferred", 1);
    CHECK_EQ_INT(ecs_set(w, e, id, &v), ECS_OK);
    held_kill(&v);
    HV_BALANCED(w, id, 1);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    CHECK(held_is(w, e, id, "deferred", 1));
    HV_BALANCED(w, id, 0);

    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    held_make(&v, "cmd", 2);
    CHECK_EQ_INT(ecs_cmd_set(c, f, id, &v), ECS_OK);
    held_kill(&v);
    held_make(&v, "dropped", 3);
    CHECK_EQ_INT(ecs_cmd_set(c, e, id, &v), ECS_OK);
    held_kill(&v);
    CHECK_EQ_INT(ecs_destroy(w, e), ECS_OK);   /* its command is dropped, its value destroyed */
    HV_BALANCED(w, id, 2);
    size_t dropped = ecs_commands_dropped(w);
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
    CHECK_EQ_INT(ecs_commands_dropped(w), dropped + 1);
    CHECK(held_is(w, f, id, "cmd", 2));
    HV_BALANCED(w, id, 0);

    enum { N = 1000 };   /* growth relocates held values with move */
    for (int i = 0; i < N; i++) {
        held_make(&v, "grown", i);
        CHECK_EQ_INT(ecs_cmd_set(c, f, id, &v), ECS_OK);
        held_kill(&v);
    }
    HV_BALANCED(w, id, N);
    CHECK(hv.move > 0);
    CHECK_EQ_INT(ecs_commands_apply(w, c), ECS_OK);
    CHECK(held_is(w, f, id, "grown", N - 1));
    HV_BALANCED(w, id, 0);

    for (int i = 0; i < 5; i++) {   /* freed unapplied */
        held_make(&v, "unapplied", i);
        CHECK_EQ_INT(ecs_cmd_set(c, ecs_cmd_create(c), id, &v), ECS_OK);
        held_kill(&v);
    }
    HV_BALANCED(w, id, 5);
    ecs_commands_free(c);
    HV_BALANCED(w, id, 0);

    static held many[64];   /* bulk creation in defer mode: the values are copied when recorded */
    for (int i = 0; i < 64; i++) held_make(&many[i], "bulk", i);
    const void *values[1] = {many};
    ecs_entity out[64];
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    CHECK_EQ_INT(ecs_create_many_values(w, 64, &id, 1, values, out), ECS_OK);
    for (int i = 0; i < 64; i++) held_kill(&many[i]);
    HV_BALANCED(w, id, 64);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    for (int i = 0; i < 64; i++) CHECKF(held_is(w, out[i], id, "bulk", i), "bulk %d", i);
    HV_BALANCED(w, id, 0);

    ecs_commands *kept = ecs_commands_new(w);   /* world free with values held */
    REQUIRE(kept);
    held_make(&v, "kept", 4);
    CHECK_EQ_INT(ecs_cmd_set(kept, f, id, &v), ECS_OK);
    held_kill(&v);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);
    held_make(&v, "open", 5);
    CHECK_EQ_INT(ecs_set(w, f, id, &v), ECS_OK);
    held_kill(&v);
    HV_BALANCED(w, id, 2);
    ecs_world_free(w);
    CHECK(hv.ctor == hv.dtor && !hv.bad);
}

/* A hook's ecs_set is recorded in the hook buffer and applied right after
   the change that ran it: the hook's local may die first. */
static ecs_id held_id;
static void held_on_add(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx) {
    (void)id; (void)value; (void)ctx;
    held v;
    held_make(&v, "from a hook", 6);
    CHECK_EQ_INT(ecs_set(w, e, held_id, &v), ECS_OK);
    held_kill(&v);
}
/* A hook may not record into, apply or free the buffer that is applying it. */
static ecs_commands *held_applying;
static void held_on_set_reenter(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx) {
    (void)value; (void)ctx;
    held v;
    held_make(&v, "reentered", 7);
    CHECK_EQ_INT(ecs_cmd_set(held_applying, e, held_id, &v), ECS_ERR_BUSY);
    held_kill(&v);
    CHECK_EQ_INT(ecs_cmd_create(held_applying), 0);
    CHECK_EQ_INT(ecs_cmd_remove(held_applying, e, id), ECS_ERR_BUSY);
    CHECK_EQ_INT(ecs_commands_apply(w, held_applying), ECS_ERR_BUSY);
    ecs_commands_free(held_applying);   /* refused: the apply goes on */
    CHECK(strstr(ecs_last_error(w), "being applied") != NULL);
}
TEST(held_values_buffer_reentered) {
    hv_reset();
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    held_id = held_register(w);
    ecs_id watched = ecs_component_init(w, &(ecs_component_desc){.name = "watched", .size = 4,
        .on_set = held_on_set_reenter});
    REQUIRE(held_id && watched);
    ecs_entity e = ecs_create(w);
    held_applying = ecs_commands_new(w);
    REQUIRE(held_applying);
    CHECK_EQ_INT(ecs_cmd_set(held_applying, e, watched, &(int){1}), ECS_OK);
    held v;
    held_make(&v, "after", 8);
    CHECK_EQ_INT(ecs_cmd_set(held_applying, e, held_id, &v), ECS_OK);
    held_kill(&v);
    CHECK_EQ_INT(ecs_commands_apply(w, held_applying), ECS_OK);
    CHECK(held_is(w, e, held_id, "after", 8));
    HV_BALANCED(w, held_id, 0);
    ecs_commands_free(held_applying);
    ecs_world_free(w);
    CHECK(hv.ctor == hv.dtor && !hv.bad);
}

TEST(held_values_hook_buffer) {
    hv_reset();
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    held_id = held_register(w);
    ecs_id trigger = ecs_component_init(w, &(ecs_component_desc){.name = "trigger", .size = 4,
        .on_add = held_on_add});
    REQUIRE(held_id && trigger);
    ecs_entity e = ecs_create(w);
    CHECK_EQ_INT(ecs_add(w, e, trigger), ECS_OK);
    CHECK(held_is(w, e, held_id, "from a hook", 6));
    HV_BALANCED(w, held_id, 0);
    ecs_world_free(w);
    CHECK(hv.ctor == hv.dtor && !hv.bad);
}

/* Every allocation fails in turn while buffers hold values: each call
   works or reports ECS_ERR_NOMEM, constructed - destroyed stays equal to
   what entities and buffers hold, and nothing leaks. */
static long held_scenario(long fail_at) {
    hk_fail f = {0, fail_at};
    hv_reset();
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = hk_realloc, .alloc_user = &f});
    if (!w) return f.requests;
    ecs_id id = held_register(w);
    ecs_commands *c = id ? ecs_commands_new(w) : NULL;
    long held_now = 0;
    if (c) {
        ecs_entity es[8] = {0};
        for (int i = 0; i < 8; i++) es[i] = ecs_create(w);
        held v;
        for (int i = 0; i < 40; i++) {
            held_make(&v, "oom", i);
            ecs_entity p = i % 3 ? es[i % 8] : ecs_cmd_create(c);
            ecs_result r = p ? ecs_cmd_set(c, p, id, &v) : ECS_ERR_NOMEM;
            held_kill(&v);
            CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
            held_now += r == ECS_OK;
            hk_paused++;
            HV_BALANCED(w, id, held_now);
            hk_paused--;
        }
        if (es[1]) (void)ecs_destroy(w, es[1]);   /* some commands drop */
        for (int k = 0; k < 3 && ecs_commands_apply(w, c) == ECS_ERR_NOMEM; k++) {}
        CHECK(hv.ctor - hv.dtor <= (long)hk_live(w, id) + held_now && !hv.bad);
        if (ecs_defer_begin(w) == ECS_OK) {
            held_make(&v, "deferred", 1);
            ecs_result r = es[2] ? ecs_set(w, es[2], id, &v) : ECS_OK;
            held_kill(&v);
            CHECK(r == ECS_OK || r == ECS_ERR_NOMEM);
            for (int k = 0; k < 3 && ecs_defer_end(w) == ECS_ERR_NOMEM; k++) {}
        }
    }
    ecs_world_free(w);
    CHECKF(hv.ctor == hv.dtor && !hv.bad, "fail at %ld: constructed %ld, destroyed %ld, bad %ld", fail_at,
           (long)hv.ctor, (long)hv.dtor, (long)hv.bad);
    return f.requests;
}
TEST(held_values_out_of_memory_sweep) {
    long total = held_scenario(0);
    for (long i = 1; i <= total; i++) held_scenario(i);
}

void suite_hooks(void) {
    RUN(parents_command_out_of_memory_kept);
    RUN(hooks_out_of_memory_sweep);
    RUN(parents_cascade_and_loops);
    RUN(sched_parents_deterministic);
    RUN(parents_busy_in_systems);
    RUN(hooks_every_path_balanced);
    RUN(hooks_lifecycle_direct_moves);
    RUN(hooks_structural_calls_deferred);
    RUN(hooks_entity_fields_resolved);
    RUN(hooks_bad_descs);
    RUN(hooks_resource_owns_memory);
    RUN(hooks_command_values_aligned);
    RUN(create_many_values);
    RUN(destroy_many_and_with);
    RUN(sched_held_values_system_buffers);
    RUN(held_values_every_buffer);
    RUN(held_values_hook_buffer);
    RUN(held_values_buffer_reentered);
    RUN(held_values_out_of_memory_sweep);
}
