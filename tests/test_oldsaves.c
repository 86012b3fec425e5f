/* save files of older versions (tests/old_saves.h, written by the ecs.h of
   the commits that wrote each version) still load: the same handles, free
   slots, values, tags and resource; damaged or truncated copies are refused;
   saved again they are the current version and restore to the same world. */
#include "test.h"
#include "old_saves.h"

typedef struct os_pos { float x, y; } os_pos;
typedef struct os_vel { float x, y; } os_vel;
typedef struct os_health { int hp, max; } os_health;
typedef struct os_state { int frame, score; } os_state;

/* The generator's world (tests/old_saves_gen.c.txt): e[0..19] all with
   Position, 0-7 Velocity, 8-13 Health, 14-19 Velocity + Frozen; e[3], e[10],
   e[16] destroyed; e[20] the freed slot 16 again; its next ecs_create. */
#define OS_GEN1(i) ((ecs_entity)1 << 32 | (ecs_entity)(i))
#define OS_E20 ((ecs_entity)2 << 32 | 16u)
#define OS_NEXT ((ecs_entity)2 << 32 | 10u)

typedef struct os_ids { ecs_id pos, vel, hp, frozen, state; } os_ids;
static void os_register(ecs_world *w, os_ids *id) {   /* another order than the generator's */
    ecs_component(w, "Unused", 4, 0);
    id->frozen = ecs_component(w, "Frozen", 0, 0);
    id->state = ecs_resource(w, "GameState", sizeof(os_state), _Alignof(os_state), &(os_state){-1, -1});
    id->hp = ecs_component(w, "Health", sizeof(os_health), _Alignof(os_health));
    id->vel = ecs_component(w, "Velocity", sizeof(os_vel), _Alignof(os_vel));
    id->pos = ecs_component(w, "Position", sizeof(os_pos), _Alignof(os_pos));
}

typedef struct os_mem { unsigned char *p; size_t n, cap; } os_mem;
static ecs_result os_write(const void *bytes, size_t size, void *ctx) {
    os_mem *m = (os_mem *)ctx;
    return test_append(&m->p, &m->n, &m->cap, bytes, size) ? ECS_OK : ECS_ERR_NOMEM;
}
static ecs_snapshot *os_load(ecs_world *w, const unsigned char *p, size_t n) {
    test_src src = {p, n, 0};
    return ecs_snapshot_load(w, test_src_read, &src);
}

/* w is the generator's world as it was saved. */
static void os_check_world(ecs_world *w, const os_ids *id, const char *v) {
    CHECKF(ecs_count(w) == 18, "%s: %zu entities", v, ecs_count(w));
    for (int i = 0; i <= 20; i++) {
        ecs_entity e = i == 20 ? OS_E20 : OS_GEN1(i);
        if (i == 3 || i == 10 || i == 16) { CHECKF(!ecs_is_alive(w, e), "%s: e[%d] alive", v, i); continue; }
        CHECKF(ecs_is_alive(w, e), "%s: e[%d] not alive", v, i);
        const os_pos *p = (const os_pos *)ecs_get(w, e, id->pos);
        const os_vel *ve = (const os_vel *)ecs_get(w, e, id->vel);
        const os_health *h = (const os_health *)ecs_get(w, e, id->hp);
        bool has_vel = i < 8 || (i >= 14 && i < 20), has_hp = (i >= 8 && i < 14) || i == 20;
        CHECKF(p && (i == 20 ? p->x == 77.0f && p->y == 88.0f : p->x == (float)i + 0.5f && p->y == -2.0f * (float)i),
               "%s: e[%d] Position", v, i);
        CHECKF(has_vel ? ve && ve->x == (float)i * 0.25f && ve->y == 1.0f : !ve && !ecs_has(w, e, id->vel),
               "%s: e[%d] Velocity", v, i);
        CHECKF(has_hp ? h && h->hp == (i == 20 ? 5 : 100 - i) && h->max == (i == 20 ? 50 : 100)
                      : !h && !ecs_has(w, e, id->hp), "%s: e[%d] Health", v, i);
        CHECKF(ecs_has(w, e, id->frozen) == (i >= 14 && i < 20), "%s: e[%d] Frozen", v, i);
        const ecs_id *ids = NULL;
        CHECKF(ecs_entity_ids(w, e, &ids) == 1 + has_vel + has_hp + (i >= 14 && i < 20), "%s: e[%d] ids", v, i);
    }
    int seen = 0;   /* no entity besides these */
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    for (ecs_iter it = ecs_query_iter(w, all); all && ecs_query_next(&it);)
        for (int k = 0; k < it.count; k++, seen++) {
            ecs_entity e = it.entities[k];
            CHECKF(e == OS_E20 || (e >> 32 == 1 && (e & 0xffffffffu) < 20), "%s: unknown entity 0x%llx", v,
                   (unsigned long long)e);
        }
    ecs_query_free(all);
    CHECKF(seen == 18, "%s: the query saw %d entities", v, seen);
    const os_state *st = (const os_state *)ecs_resource_get(w, id->state);
    CHECKF(st && st->frame == 42 && st->score == 1234, "%s: GameState", v);
}

/* One save file: refused when damaged or truncated; loaded, restored,
   checked, saved again and checked again. *first_hash: the world hash every
   file must restore to (0: not yet known). */
static void os_check_save(const char *name, const unsigned char *bytes, size_t n, unsigned version,
                          uint64_t *first_hash) {
    CHECKF((test_le64(bytes + 8) & 0xffffffffu) == version, "%s: another version in the file", name);
    ecs_world *w = ecs_world_new(NULL), *w2 = ecs_world_new(NULL);
    unsigned char *bad = (unsigned char *)malloc(n);
    os_ids id, id2;
    REQUIRE(w && w2 && bad);
    os_register(w, &id);
    os_register(w2, &id2);
    memcpy(bad, bytes, n);   /* one byte flipped in the middle */
    bad[n / 2] ^= 0x20;
    CHECKF(os_load(w, bad, n) == NULL, "%s: a flipped byte loaded", name);
    CHECKF(strstr(ecs_last_error(w), "ecs_snapshot_load") != NULL, "%s: error \"%s\"", name, ecs_last_error(w));
    free(bad);
    CHECKF(os_load(w, bytes, n - 1) == NULL, "%s: a truncated file loaded", name);
    CHECKF(strstr(ecs_last_error(w), "ecs_snapshot_load") != NULL, "%s: error \"%s\"", name, ecs_last_error(w));
    CHECKF(ecs_count(w) == 0, "%s: a refused file changed the world", name);

    ecs_snapshot *s = os_load(w, bytes, n);
    CHECKF(s != NULL, "%s: %s", name, ecs_last_error(w));
    if (s) {
        CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_OK);
        ecs_snapshot_free(s);
        os_check_world(w, &id, name);
        uint64_t hash = ecs_world_hash(w);
        if (!*first_hash) *first_hash = hash;
        CHECKF(hash == *first_hash, "%s: another world hash than the first file's", name);

        os_mem m = {NULL, 0, 0};   /* saved again: the current version, the same world */
        ecs_snapshot *t = ecs_snapshot_take(w);
        CHECK(t != NULL);
        CHECK_EQ_INT(t ? ecs_snapshot_save(t, os_write, &m) : ECS_ERR_ARG, ECS_OK);
        ecs_snapshot_free(t);
        CHECKF(m.n >= 16 && (test_le64(m.p + 8) & 0xffffffffu) == 7, "%s: saved again as another version", name);
        ecs_snapshot *u = m.n >= 16 ? os_load(w2, m.p, m.n) : NULL;
        CHECKF(u != NULL, "%s saved again: %s", name, ecs_last_error(w2));
        if (u) {
            CHECK_EQ_INT(ecs_snapshot_restore(w2, u), ECS_OK);
            ecs_snapshot_free(u);
            os_check_world(w2, &id2, name);
            CHECKF(ecs_world_hash(w2) == hash, "%s saved again: another world hash", name);
            CHECKF(ecs_create(w2) == OS_NEXT, "%s saved again: another next handle", name);
        }
        free(m.p);
        ecs_entity next = ecs_create(w);   /* the free list came through */
        CHECKF(next == OS_NEXT, "%s: next handle 0x%llx", name, (unsigned long long)next);
    }
    ecs_world_free(w);
    ecs_world_free(w2);
}

/* Every file, in version order. Versions 2 and 3 each had two layouts under
   one number (f1e3c72 added a clock flag to version 2, 2af1c30 queued events
   to version 3): v2 and v3 are the first layouts, v2b and v3b the later. */
TEST(snapshot_old_versions) {
#define OS_SAVE(v, version) {#v, ecs_test_save_##v, sizeof ecs_test_save_##v, version}
    static const struct { const char *name; const unsigned char *p; size_t n; unsigned version; } saves[] = {
        OS_SAVE(v1, 1), OS_SAVE(v2, 2), OS_SAVE(v2b, 2), OS_SAVE(v3, 3), OS_SAVE(v3b, 3), OS_SAVE(v4, 4),
        OS_SAVE(v5, 5), OS_SAVE(v6, 6)};
#undef OS_SAVE
    uint64_t first_hash = 0;
    for (size_t k = 0; k < sizeof saves / sizeof saves[0]; k++)
        os_check_save(saves[k].name, saves[k].p, saves[k].n, saves[k].version, &first_hash);
}

void suite_oldsaves(void) {
    RUN(snapshot_old_versions);
}
