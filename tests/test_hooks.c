/* component hooks: a component that owns memory is constructed, moved,
   copied and destroyed exactly once on every path (ASan sees the leaks and
   double frees), events run in order, structural calls made in hooks are
   deferred to right after the change, and entity fields of a command
   buffer's values get the live handles of its pending entities. */
#include "test.h"
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
static size_t hk_live(ecs_world *w, ecs_id id) {
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){{{id, ECS_READ, ECS_AND}}});
    size_t n = q ? ecs_query_count(w, q) : 0;
    ecs_query_free(q);
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
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){{{c.orb_id, ECS_READ, ECS_AND}}});
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

void suite_hooks(void) {
    RUN(hooks_every_path_balanced);
    RUN(hooks_structural_calls_deferred);
    RUN(hooks_entity_fields_resolved);
    RUN(hooks_bad_descs);
}
