/* prefab tests: what prefabs are invisible to, what instantiating copies
   (values, hooks in order, child prefabs in attach order, entity fields
   remapped into the new subtree), the bulk form equal to single calls,
   defer mode and commands (a dead prefab drops the command), bad input, and
   ecs_cmd_instantiate from a chunked system giving the same world at 1, 2,
   3 and 8 threads and after a snapshot restore. */
#include "test.h"
#include <stdint.h>

typedef struct pf_pos { float x, y; } pf_pos;
typedef struct pf_hp { int hp; } pf_hp;
typedef struct pf_owner { ecs_entity owner, other; int slot; } pf_owner;

/* ---- a hook log: every ctor / copy / dtor / on_add / on_set / on_remove --- */
typedef struct pf_log { char line[4096][48]; int n; int ctors, copies, dtors; } pf_log;
static pf_log pf_g;
static void pf_note(const char *fmt, unsigned long long a, int b) {
    if (pf_g.n < 4096) snprintf(pf_g.line[pf_g.n++], sizeof pf_g.line[0], fmt, a, b);
}
static void pf_ctor(void *p, int n, void *ctx) {
    (void)ctx;
    memset(p, 0, (size_t)n * sizeof(pf_hp));
    pf_g.ctors += n;
    pf_note("ctor %llu x%d", 0, n);
}
static void pf_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(pf_hp));
    pf_g.copies += n;
    pf_note("copy %llu hp %d", 0, ((const pf_hp *)src)->hp);
}
static size_t pf_ser(const void *v, void *out, size_t cap, void *ctx) {
    (void)ctx;
    if (cap >= sizeof(pf_hp)) memcpy(out, v, sizeof(pf_hp));
    return sizeof(pf_hp);
}
static bool pf_deser(void *v, const void *data, size_t size, void *ctx) {
    (void)ctx;
    if (size != sizeof(pf_hp)) return false;
    memcpy(v, data, size);
    return true;
}
static void pf_dtor(void *p, int n, void *ctx) { (void)p; (void)ctx; pf_g.dtors += n; }
static void pf_on_add(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)v; (void)ctx;
    pf_note("add %llx id %d", (unsigned long long)e, (int)id);
}
static void pf_on_set(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)ctx;
    pf_note("set %llx hp %d", (unsigned long long)e, v && id ? ((pf_hp *)v)->hp : -1);
}
static void pf_on_remove(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)w; (void)v; (void)ctx;
    pf_note("remove %llx id %d", (unsigned long long)e, (int)id);
}

typedef struct pf_ids { ecs_id pos, hp, owner, tag; } pf_ids;
static ecs_world *pf_world(pf_ids *k, int threads) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!w) return NULL;
    k->pos = ECS_COMPONENT(w, pf_pos);
    k->hp = ecs_component_init(w, &(ecs_component_desc){.name = "pf_hp", .size = sizeof(pf_hp),
        .align = _Alignof(pf_hp), .ctor = pf_ctor, .dtor = pf_dtor, .copy = pf_copy,
        .on_add = pf_on_add, .on_set = pf_on_set, .on_remove = pf_on_remove,
        .serialize = pf_ser, .deserialize = pf_deser});
    k->owner = ecs_component_init(w, &(ecs_component_desc){.name = "pf_owner", .size = sizeof(pf_owner),
        .align = _Alignof(pf_owner), .entity_fields = {offsetof(pf_owner, owner), offsetof(pf_owner, other)},
        .entity_field_count = 2});
    k->tag = ecs_component(w, "pf_tag", 0, 0);
    return w;
}

static size_t pf_count(ecs_world *w, const ecs_term *terms) {
    ecs_query_desc d;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < ECS_MAX_TERMS && terms[i].id; i++) d.terms[i] = terms[i];
    ecs_query *q = ecs_query_new(w, &d);
    size_t n = 0;
    for (ecs_iter it = ecs_query_iter(w, q); q && ecs_query_next(&it);) n += (size_t)it.count;
    ecs_query_free(q);
    return n;
}

/* A tank prefab (pos, hp) with a turret child prefab (owner -> the tank,
   other -> an outside entity) that has a barrel child prefab (owner -> the
   turret), and a second child (a light, tag only) attached after the turret. */
typedef struct pf_tank { ecs_entity tank, turret, barrel, light, outside; } pf_tank;
static bool pf_tank_make(ecs_world *w, const pf_ids *k, pf_tank *t) {
    t->outside = ecs_create(w);
    t->tank = ecs_prefab_new(w);
    t->turret = ecs_prefab_new(w);
    t->barrel = ecs_prefab_new(w);
    t->light = ecs_prefab_new(w);
    if (!t->outside || !t->tank || !t->turret || !t->barrel || !t->light) return false;
    pf_owner tu, ba;   /* (zeroed first: the world hash reads the padding too) */
    memset(&tu, 0, sizeof tu);
    memset(&ba, 0, sizeof ba);
    tu.owner = t->tank; tu.other = t->outside; tu.slot = 1;
    ba.owner = t->turret; ba.slot = 2;
    return !ecs_set(w, t->tank, k->pos, &(pf_pos){1, 2}) && !ecs_set(w, t->tank, k->hp, &(pf_hp){100}) &&
           !ecs_set(w, t->turret, k->owner, &tu) && !ecs_set(w, t->barrel, k->owner, &ba) &&
           !ecs_set(w, t->barrel, k->pos, &(pf_pos){0, 3}) && !ecs_add(w, t->light, k->tag) &&
           !ecs_set_parent(w, t->turret, t->tank) && !ecs_set_parent(w, t->barrel, t->turret) &&
           !ecs_set_parent(w, t->light, t->tank);
}

/* A one-thread world with the tank tree made (NULL if that failed). */
static ecs_world *pf_tank_world(pf_ids *k, pf_tank *t) {
    ecs_world *w = pf_world(k, 1);
    if (w && !pf_tank_make(w, k, t)) { ecs_world_free(w); return NULL; }
    return w;
}

TEST(prefab_invisible) {
    pf_ids k;
    ecs_world *w = pf_world(&k, 1);
    REQUIRE(w);
    ecs_id tag = ecs_prefab_tag(w);
    CHECK(tag != 0 && ecs_id_name(w, tag) && ecs_id_size(w, tag) == 0);
    ecs_entity live = ecs_create(w);
    CHECK(!ecs_set(w, live, k.pos, &(pf_pos){5, 5}));
    pf_tank t;
    REQUIRE(pf_tank_make(w, &k, &t));
    CHECK(ecs_is_prefab(w, t.tank) && ecs_is_prefab(w, t.barrel) && !ecs_is_prefab(w, live));
    CHECK(ecs_has(w, t.tank, tag));
    CHECK_EQ_INT(ecs_count(w), 2);   /* live and outside */
    CHECK_EQ_INT(pf_count(w, (ecs_term[]){ECS_TERM_R(k.pos), {0}}), 1);
    CHECK_EQ_INT(pf_count(w, (ecs_term[]){{0}}), 2);
    CHECK_EQ_INT(pf_count(w, (ecs_term[]){ECS_TERM_R(k.pos), ECS_TERM_R(tag), {0}}), 2);   /* tank, barrel */
    CHECK_EQ_INT(pf_count(w, (ecs_term[]){ECS_TERM_OPT(tag), {0}}), 6);
    CHECK_EQ_INT(pf_count(w, (ecs_term[]){ECS_TERM_NOT(tag), {0}}), 2);
    /* no event hooks on prefabs; ctor and copy still run */
    CHECK_EQ_INT(pf_g.ctors >= 1 && pf_g.copies >= 1, 1);
    for (int i = 0; i < pf_g.n; i++) CHECKF(strncmp(pf_g.line[i], "add", 3) && strncmp(pf_g.line[i], "set", 3), "%s", pf_g.line[i]);
    /* the tag comes and goes with nothing but ecs_prefab_new / destroy */
    CHECK(ecs_add(w, live, tag) == ECS_ERR_ARG && !ecs_has(w, live, tag));
    CHECK(ecs_remove(w, t.tank, tag) == ECS_ERR_ARG && ecs_is_prefab(w, t.tank));
    CHECK(ecs_set(w, live, tag, NULL) == ECS_ERR_ARG);
    CHECK(ecs_create_many(w, 2, &tag, 1, NULL) == ECS_ERR_ARG);
    ecs_commands *cb = ecs_commands_new(w);
    CHECK(ecs_cmd_add(cb, live, tag) == ECS_ERR_ARG && ecs_cmd_remove(cb, t.tank, tag) == ECS_ERR_ARG);
    ecs_commands_free(cb);
    /* a prefab's child must be a prefab */
    CHECK(ecs_set_parent(w, live, t.tank) == ECS_ERR_ARG && ecs_get_parent(w, live) == 0);
    CHECK(strstr(ecs_last_error(w), "prefab") != NULL);
    /* ecs_destroy_with leaves prefabs unless it names the tag */
    CHECK(!ecs_destroy_with(w, k.pos));
    CHECK(!ecs_is_alive(w, live) && ecs_is_alive(w, t.tank) && ecs_is_alive(w, t.barrel));
    CHECK(!ecs_destroy_with(w, tag));
    CHECK(!ecs_is_alive(w, t.tank) && !ecs_is_alive(w, t.light) && ecs_is_alive(w, t.outside));
    CHECK_EQ_INT(ecs_count(w), 1);
    ecs_world_free(w);
}

TEST(prefab_instantiate_tree) {
    pf_ids k;
    pf_tank t;
    ecs_world *w = pf_tank_world(&k, &t);
    REQUIRE(w);
    ecs_entity roots[5] = {0};
    REQUIRE(!ecs_instantiate_many(w, t.tank, 5, roots));
    CHECK_EQ_INT(ecs_count(w), 1 + 5 * 4);
    for (int i = 0; i < 5; i++) {
        ecs_entity r = roots[i], kids[4] = {0}, grand[2] = {0};
        CHECK(ecs_is_alive(w, r) && !ecs_is_prefab(w, r) && !ecs_has(w, r, ecs_prefab_tag(w)));
        const pf_pos *p = (const pf_pos *)ecs_get(w, r, k.pos);
        const pf_hp *h = (const pf_hp *)ecs_get(w, r, k.hp);
        CHECK(p && p->x == 1 && p->y == 2 && h && h->hp == 100);
        REQUIRE(ecs_children(w, r, kids, 4) == 2);   /* turret, then light: attach order */
        const pf_owner *o = (const pf_owner *)ecs_get(w, kids[0], k.owner);
        CHECK(o && o->owner == r && o->other == t.outside && o->slot == 1);
        CHECK(ecs_has(w, kids[1], k.tag) && !ecs_is_prefab(w, kids[1]));
        REQUIRE(ecs_children(w, kids[0], grand, 2) == 1);
        const pf_owner *b = (const pf_owner *)ecs_get(w, grand[0], k.owner);
        CHECK(b && b->owner == kids[0] && b->other == 0 && b->slot == 2);
        CHECK(ecs_get_parent(w, r) == 0 && ecs_get_parent(w, grand[0]) == kids[0]);
    }
    /* the prefab is untouched; editing it changes later instances only */
    const pf_owner *po = (const pf_owner *)ecs_get(w, t.turret, k.owner);
    CHECK(po && po->owner == t.tank);
    CHECK(!ecs_set(w, t.tank, k.pos, &(pf_pos){9, 9}));
    ecs_entity late = ecs_instantiate(w, t.tank);
    CHECK(late && ((const pf_pos *)ecs_get(w, late, k.pos))->x == 9);
    CHECK(((const pf_pos *)ecs_get(w, roots[0], k.pos))->x == 1);
    /* instantiating a child prefab on its own: no parent, owner still the prefab tank */
    ecs_entity lone = ecs_instantiate(w, t.turret);
    CHECK(lone && ecs_get_parent(w, lone) == 0 && ecs_children(w, lone, NULL, 0) == 1);
    CHECK(((const pf_owner *)ecs_get(w, lone, k.owner))->owner == t.tank);
    /* destroying an instance takes its subtree, never the prefab */
    size_t before = ecs_count(w);
    CHECK(!ecs_destroy(w, roots[2]));
    CHECK_EQ_INT(ecs_count(w), before - 4);
    CHECK(ecs_is_alive(w, t.barrel));
    /* n = 0, out NULL */
    CHECK(!ecs_instantiate_many(w, t.tank, 0, NULL) && !ecs_instantiate_many(w, t.tank, 3, NULL));
    ecs_world_free(w);
}

/* The hook log and handles of one world doing n single instantiations and
   one doing them in bulk are the same. */
TEST(prefab_hooks_bulk_equals_single) {
    pf_ids k1, k2;
    ecs_world *a = pf_world(&k1, 1), *b = pf_world(&k2, 1);
    REQUIRE(a && b);
    pf_tank ta, tb;
    REQUIRE(pf_tank_make(a, &k1, &ta) && pf_tank_make(b, &k2, &tb));
    REQUIRE(!ecs_set(a, ta.turret, k1.hp, &(pf_hp){7}) && !ecs_set(b, tb.turret, k2.hp, &(pf_hp){7}));
    static pf_log la;
    memset(&pf_g, 0, sizeof pf_g);
    ecs_entity ra[4], rb[4];
    for (int i = 0; i < 4; i++) ra[i] = ecs_instantiate(a, ta.tank);
    la = pf_g;
    memset(&pf_g, 0, sizeof pf_g);
    REQUIRE(!ecs_instantiate_many(b, tb.tank, 4, rb));
    CHECK(memcmp(ra, rb, sizeof ra) == 0);
    /* the same event hooks in the same order (ctor and copy run column by column in bulk) */
    int ia = 0, ib = 0;
    for (;; ia++, ib++) {
        while (ia < la.n && (!strncmp(la.line[ia], "ctor", 4) || !strncmp(la.line[ia], "copy", 4))) ia++;
        while (ib < pf_g.n && (!strncmp(pf_g.line[ib], "ctor", 4) || !strncmp(pf_g.line[ib], "copy", 4))) ib++;
        if (ia == la.n || ib == pf_g.n) break;
        CHECKF(!strcmp(la.line[ia], pf_g.line[ib]), "%s vs %s", la.line[ia], pf_g.line[ib]);
    }
    CHECK(ia == la.n && ib == pf_g.n);
    CHECK(ecs_world_hash(a) == ecs_world_hash(b));
    /* per instance: the tank's hp and the turret's hp are constructed and copied
       (8 values), on_add for every id then on_set, entity by entity */
    CHECK_EQ_INT(pf_g.ctors, 8);
    CHECK_EQ_INT(pf_g.copies, 8);
    char want[8][48];
    ecs_entity kids[2];
    REQUIRE(ecs_children(b, rb[0], kids, 2) == 2);
    snprintf(want[0], 48, "add %llx id %d", (unsigned long long)rb[0], (int)k2.hp);
    snprintf(want[1], 48, "set %llx hp %d", (unsigned long long)rb[0], 100);
    snprintf(want[2], 48, "add %llx id %d", (unsigned long long)kids[0], (int)k2.hp);
    snprintf(want[3], 48, "set %llx hp %d", (unsigned long long)kids[0], 7);
    snprintf(want[4], 48, "add %llx id %d", (unsigned long long)rb[1], (int)k2.hp);
    int at = 0, hooks = 0;
    for (int i = 0; i < pf_g.n; i++) {
        if (!strncmp(pf_g.line[i], "add", 3) || !strncmp(pf_g.line[i], "set", 3)) {
            CHECKF(at >= 5 || !strcmp(pf_g.line[i], want[at]), "hook %d: %s, want %s", at, pf_g.line[i], want[at]);
            at++;
        }
        hooks += !strncmp(pf_g.line[i], "set", 3);
    }
    CHECK_EQ_INT(at, 16);   /* 4 instances x (add + set) x 2 entities with hp */
    CHECK_EQ_INT(hooks, 8);
    /* the hooks of instances fire on destroy; the prefab's do not */
    memset(&pf_g, 0, sizeof pf_g);
    CHECK(!ecs_destroy(b, tb.tank));
    for (int i = 0; i < pf_g.n; i++) CHECKF(strncmp(pf_g.line[i], "remove", 6), "%s", pf_g.line[i]);
    CHECK_EQ_INT(pf_g.dtors, 2);
    ecs_world_free(a);
    ecs_world_free(b);
}

static void pf_try_in_system(ecs_iter *it) {
    ecs_entity *out = (ecs_entity *)it->ctx;
    out[0] = ecs_instantiate(it->world, out[1]);
    out[2] = (ecs_entity)ecs_instantiate_many(it->world, out[1], 2, NULL);
}

TEST(prefab_bad_input) {
    pf_ids k;
    ecs_world *w = pf_world(&k, 1);
    REQUIRE(w);
    ecs_entity live = ecs_create(w), prefab = ecs_prefab_new(w), dead = ecs_create(w);
    REQUIRE(live && prefab && dead && !ecs_destroy(w, dead));
    CHECK(ecs_instantiate(w, live) == 0 && strstr(ecs_last_error(w), "not a prefab"));
    CHECK(ecs_instantiate_many(w, live, 3, NULL) == ECS_ERR_ARG);
    CHECK(ecs_instantiate(w, dead) == 0 && ecs_instantiate_many(w, dead, 1, NULL) == ECS_ERR_STALE);
    CHECK(ecs_instantiate(w, 0) == 0 && ecs_instantiate(NULL, prefab) == 0);
    CHECK(ecs_instantiate_many(NULL, prefab, 1, NULL) == ECS_ERR_ARG);
    CHECK(!ecs_is_prefab(NULL, prefab) && !ecs_is_prefab(w, dead) && ecs_prefab_tag(NULL) == 0);
    ecs_commands *cb = ecs_commands_new(w);
    CHECK(ecs_cmd_instantiate(cb, live) == 0 && ecs_cmd_instantiate(cb, dead) == 0);
    CHECK(ecs_cmd_instantiate(NULL, prefab) == 0);
    ecs_commands_free(cb);
    CHECK_EQ_INT(ecs_count(w), 1);
    /* a loop holding the table an instance goes to */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    ecs_iter it = ecs_query_iter(w, q);
    REQUIRE(ecs_query_next(&it));
    CHECK(ecs_instantiate_many(w, prefab, 2, NULL) == ECS_ERR_BUSY);
    ecs_iter_fini(&it);
    ecs_query_free(q);
    CHECK_EQ_INT(ecs_count(w), 1);
    /* inside an ordinary system: BUSY */
    ecs_entity box[3] = {1, prefab, 0};
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "try", .fn = pf_try_in_system, .ctx = box}));
    CHECK(ecs_progress(w, 0.f) == ECS_OK);
    CHECK(box[0] == 0 && box[2] == (ecs_entity)ECS_ERR_BUSY);
    CHECK_EQ_INT(ecs_count(w), 1);
    ecs_world_free(w);
}

TEST(prefab_defer_and_commands) {
    pf_ids k;
    pf_tank t;
    ecs_world *w = pf_tank_world(&k, &t);
    REQUIRE(w);
    REQUIRE(!ecs_defer_begin(w));
    CHECK(!ecs_set(w, t.tank, k.pos, &(pf_pos){4, 4}));   /* recorded first: applied first */
    ecs_entity p2 = ecs_prefab_new(w), a = ecs_instantiate(w, t.tank), many[3] = {0};
    CHECK(p2 && a && !ecs_is_alive(w, a));
    CHECK(!ecs_instantiate_many(w, t.tank, 3, many) && many[2]);
    REQUIRE(!ecs_defer_end(w));
    CHECK(ecs_is_prefab(w, p2) && ecs_is_alive(w, a) && ecs_is_alive(w, many[2]));
    CHECK(((const pf_pos *)ecs_get(w, a, k.pos))->x == 4);
    CHECK(ecs_children(w, a, NULL, 0) == 2);
    /* a prefab that dies before the block ends drops its instantiations */
    size_t dropped = ecs_commands_dropped(w), n = ecs_count(w);
    REQUIRE(!ecs_defer_begin(w));
    CHECK(!ecs_destroy(w, p2));   /* recorded: the prefab is still live here */
    ecs_entity b = ecs_instantiate(w, p2);
    CHECK(b != 0);
    REQUIRE(!ecs_defer_end(w));
    CHECK(!ecs_is_alive(w, b) && !ecs_is_alive(w, p2));
    CHECK_EQ_INT(ecs_commands_dropped(w), dropped + 1);
    CHECK_EQ_INT(ecs_count(w), n);
    /* command buffers: pending handles usable in later commands */
    ecs_commands *cb = ecs_commands_new(w);
    ecs_entity pend = ecs_cmd_instantiate(cb, t.tank);
    CHECK(pend && !ecs_cmd_set(cb, pend, k.pos, &(pf_pos){-1, -1}));
    ecs_entity pend2 = ecs_cmd_instantiate(cb, t.light);
    CHECK(pend2 && !ecs_cmd_set_parent(cb, pend2, pend));
    CHECK(!ecs_commands_apply(w, cb));
    CHECK_EQ_INT(ecs_count(w), n + 5);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.pos)}});
    int found = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        const pf_pos *p = ECS_FIELD(&it, pf_pos, 0);
        for (int i = 0; i < it.count; i++)
            if (p[i].x == -1) { found++; CHECK(ecs_children(w, it.entities[i], NULL, 0) == 3); }
    }
    ecs_query_free(q);
    CHECK_EQ_INT(found, 1);
    /* the prefab dies between recording and applying: dropped */
    ecs_entity p3 = ecs_prefab_new(w);
    CHECK(ecs_cmd_instantiate(cb, p3) != 0 && !ecs_destroy(w, p3));
    dropped = ecs_commands_dropped(w);
    n = ecs_count(w);
    CHECK(!ecs_commands_apply(w, cb));
    CHECK_EQ_INT(ecs_commands_dropped(w), dropped + 1);
    CHECK_EQ_INT(ecs_count(w), n);
    ecs_commands_free(cb);
    ecs_world_free(w);
}

TEST(prefab_snapshot_and_file) {
    pf_ids k;
    pf_tank t;
    ecs_world *w = pf_tank_world(&k, &t);
    REQUIRE(w);
    REQUIRE(!ecs_instantiate_many(w, t.tank, 3, NULL));
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    uint64_t h = ecs_world_hash(w);
    size_t n = ecs_count(w);
    CHECK(!ecs_destroy(w, t.tank) && ecs_create(w) != 0);
    CHECK(!ecs_snapshot_restore(w, s));
    CHECK(ecs_world_hash(w) == h && ecs_count(w) == n && ecs_is_prefab(w, t.tank) && ecs_is_prefab(w, t.barrel));
    ecs_entity again = ecs_instantiate(w, t.tank);
    CHECK(again && ecs_children(w, again, NULL, 0) == 2);
    /* a save file: the prefab tree comes back and instantiates the same */
    FILE *f = tmpfile();
    REQUIRE(f);
    CHECK(!ecs_snapshot_write(s, f));
    rewind(f);
    pf_ids k2;
    ecs_world *w2 = pf_world(&k2, 1);
    REQUIRE(w2);
    ecs_snapshot *s2 = ecs_snapshot_read(w2, f);
    fclose(f);
    REQUIRE(s2);
    CHECK(!ecs_snapshot_restore(w2, s2));
    CHECK(ecs_is_prefab(w2, t.tank) && ecs_count(w2) == n);
    ecs_entity again2 = ecs_instantiate(w2, t.tank);
    CHECK(again2 == again && ecs_world_hash(w2) == ecs_world_hash(w));
    ecs_snapshot_free(s2);
    ecs_snapshot_free(s);
    ecs_world_free(w2);
    ecs_world_free(w);
}

/* ---- ecs_cmd_instantiate from a chunked system, any thread count ------------ */
typedef struct pf_spawn_ctx { ecs_entity prefab; ecs_id pos; } pf_spawn_ctx;
static void pf_spawner(ecs_iter *it) {
    const pf_spawn_ctx *c = (const pf_spawn_ctx *)it->ctx;
    pf_pos *p = ECS_FIELD(it, pf_pos, 0);
    for (int i = 0; i < it->count; i++) {
        p[i].x += 1;
        if ((int)p[i].y % 7 != (int)p[i].x % 7) continue;
        ecs_entity e = ecs_cmd_instantiate(it->commands, c->prefab);
        if (e) (void)ecs_cmd_set(it->commands, e, c->pos, &(pf_pos){p[i].x, p[i].y + (float)it->chunk});
    }
}
static void pf_reaper(ecs_iter *it) {
    const pf_pos *p = ECS_FIELD(it, pf_pos, 0);
    for (int i = 0; i < it->count; i++)
        if (p[i].x > 12 && (int)p[i].y % 2) (void)ecs_cmd_destroy(it->commands, it->entities[i]);
}

static uint64_t pf_run(int threads, int frames, bool roundtrip, size_t *count) {
    pf_ids k;
    ecs_world *w = pf_world(&k, threads);
    if (!w) return 0;
    pf_tank t;
    static pf_spawn_ctx ctx;
    if (!pf_tank_make(w, &k, &t)) return 0;
    ctx.prefab = t.tank;
    ctx.pos = k.pos;
    ecs_entity seeds[300];
    if (ecs_instantiate_many(w, t.tank, 300, seeds)) return 0;
    for (int i = 0; i < 300; i++) (void)ecs_set(w, seeds[i], k.pos, &(pf_pos){0, (float)i});
    ecs_system_add(w, &(ecs_system_desc){.name = "spawn", .fn = pf_spawner, .ctx = &ctx,
                                         .terms = {ECS_TERM_W(k.pos), ECS_TERM_R(k.hp)}, .chunk_size = 16});
    ecs_system_add(w, &(ecs_system_desc){.name = "reap", .fn = pf_reaper, .after = {"spawn"},
                                         .terms = {ECS_TERM_R(k.pos), ECS_TERM_R(k.hp)}, .chunk_size = 32});
    ecs_snapshot *s = NULL;
    for (int f = 0; f < frames; f++) {
        if (roundtrip && f == frames / 2) s = ecs_snapshot_take(w);
        if (ecs_progress(w, 1.f / 60)) { ecs_world_free(w); return 0; }
        if (getenv("PFDBG")) fprintf(stderr, "t%d f%d %zu %llx\n", threads, f, ecs_count(w), (unsigned long long)ecs_world_hash(w));
    }
    if (s) {   /* back to the middle, and the second half again */
        if (ecs_snapshot_restore(w, s)) return 0;
        for (int f = frames / 2; f < frames; f++) (void)ecs_progress(w, 1.f / 60);
        ecs_snapshot_free(s);
    }
    uint64_t h = ecs_world_hash(w);
    *count = ecs_count(w);
    ecs_world_free(w);
    return h;
}

TEST(sched_prefab_cmd_instantiate) {
    int frames = (int)test_scaled(24, 8);
    size_t n1 = 0;
    uint64_t h1 = pf_run(1, frames, false, &n1);
    CHECKF(h1 != 0 && n1 > 1 && n1 != 300 * 4 + 1, "1 thread: %zu entities", n1);
    const int threads[] = {2, 3, 8};
    for (int i = 0; i < 3; i++) {
        size_t n = 0;
        uint64_t h = pf_run(threads[i], frames, false, &n);
        CHECKF(h == h1 && n == n1, "%d threads: hash %llx count %zu, 1 thread %llx %zu", threads[i],
               (unsigned long long)h, n, (unsigned long long)h1, n1);
    }
    size_t nr = 0;
    uint64_t hr = pf_run(3, frames, true, &nr);
    CHECKF(hr == h1 && nr == n1, "after a restore: %llx %zu", (unsigned long long)hr, nr);
}

void suite_prefab(void) {
    RUN(prefab_invisible);
    RUN(prefab_instantiate_tree);
    RUN(prefab_hooks_bulk_equals_single);
    RUN(prefab_bad_input);
    RUN(prefab_defer_and_commands);
    RUN(prefab_snapshot_and_file);
    RUN(sched_prefab_cmd_instantiate);
}
