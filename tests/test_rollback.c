/* rollback: a scheduled world (spawning and despawning through commands,
   chunked systems, a component that owns memory with lifecycle hooks,
   parents set from chunked systems with cascade deletes, an EXCLUSIVE and a
   MAIN_THREAD system that write resources) is snapshotted at mid-run; the
   run from the snapshot to the end, repeated after a restore, must give the
   same world frame by frame, the same hook calls, and the same result at
   any thread count, and a save file of the snapshot must do the same in a
   fresh world that registers everything in another order.

   Every bit of the simulation's state lives in the world (components and
   resources), and its "random" numbers come from entity handles and values,
   so a snapshot holds all of it. Sizes and frames shrink with --scale. */
#include "test.h"
#include <stdatomic.h>
#include <stdint.h>

typedef struct { int32_t x, y; } rb_pos;
typedef struct { int32_t dx, dy; } rb_vel;
typedef struct { uint32_t age, life; } rb_life;
typedef struct { int32_t hp; } rb_hp;
typedef struct { char *s; } rb_name;   /* owns s */
typedef struct {                       /* written by the EXCLUSIVE system */
    uint64_t victim;
    uint64_t ring[8];                  /* the entities it made, oldest first */
    uint32_t frame, pop, cap, ring_n;
} rb_clock;
typedef struct {                       /* written by the MAIN_THREAD system */
    uint64_t hp_sum, named;
    uint32_t frames, batches;
} rb_tally;

static uint64_t rb_mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Labels come from here; a command holds the value's bytes (a pointer into
   this table) until it applies, and the copy hook makes the owned copy. */
static char rb_labels[8][12] = {"scout", "miner", "warden", "smith", "herald", "tiller", "archer", "seer"};

/* ---- the owning component's hooks: counted, and logged in order ---------- */
/* Event hooks run on thread 0 only (the ecs_progress caller applies
   commands), so plain counters do; a value a system records is constructed
   and copied on the recording thread, so those counters are atomic. */
static _Atomic long rb_ctor_n, rb_dtor_n;
static long rb_add_n, rb_set_n, rb_remove_n;
static uint64_t rb_log;   /* on_add / on_set / on_remove, in call order */

static uint64_t rb_str_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}
static void rb_name_ctor(void *p, int n, void *ctx) {
    (void)ctx;
    memset(p, 0, (size_t)n * sizeof(rb_name));
    rb_ctor_n += n;
}
static void rb_name_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) { free(((rb_name *)p)[i].s); ((rb_name *)p)[i].s = NULL; }
    rb_dtor_n += n;
}
static void rb_name_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        rb_name *d = (rb_name *)dst + i;
        const char *s = ((const rb_name *)src)[i].s;
        if (d->s == s) continue;
        free(d->s);
        d->s = NULL;
        if (s) { size_t len = strlen(s) + 1; if ((d->s = (char *)malloc(len))) memcpy(d->s, s, len); }
    }
}
static size_t rb_name_save(const void *value, void *out, size_t cap, void *ctx) {
    (void)ctx;
    const rb_name *v = (const rb_name *)value;
    size_t n = v->s ? strlen(v->s) : 0;
    if (n && n <= cap) memcpy(out, v->s, n);
    return n;
}
static bool rb_name_load(void *value, const void *data, size_t size, void *ctx) {
    (void)ctx;
    rb_name *v = (rb_name *)value;
    if (memchr(data, 0, size)) return false;
    free(v->s);
    v->s = NULL;
    if (!size) return true;
    if (!(v->s = (char *)malloc(size + 1))) return false;
    memcpy(v->s, data, size);
    v->s[size] = 0;
    return true;
}
static void rb_name_event(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx) {
    (void)w; (void)id;
    uintptr_t kind = (uintptr_t)ctx;   /* 1 add, 2 set, 3 remove */
    const rb_name *v = (const rb_name *)value;
    if (kind == 1) rb_add_n++;
    else if (kind == 2) rb_set_n++;
    else rb_remove_n++;
    rb_log = rb_mix(rb_log ^ e ^ (uint64_t)kind << 60 ^ rb_str_hash(v ? v->s : NULL));
}
/* One desc per event kind would need three components; the kind is told
   apart by wrappers instead. */
static void rb_on_add(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)ctx; rb_name_event(w, e, id, v, (void *)(uintptr_t)1);
}
static void rb_on_set(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)ctx; rb_name_event(w, e, id, v, (void *)(uintptr_t)2);
}
static void rb_on_remove(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    (void)ctx; rb_name_event(w, e, id, v, (void *)(uintptr_t)3);
}

/* ---- the world ------------------------------------------------------------ */
typedef struct rb_ids { ecs_id pos, vel, life, hp, name, marked, clock, tally, junk; } rb_ids;

/* Failures inside systems: one slot per thread (no sharing), read after
   ecs_progress returns. */
#define RB_SLOTS 9
static struct { long fails, batches; int line; char pad[48]; } rb_slot[RB_SLOTS];
#define RB_CHECK(it, cond) do { if (!(cond)) { int t_ = (it)->thread >= 0 && (it)->thread < RB_SLOTS - 1 ? \
    (it)->thread : RB_SLOTS - 1; if (!rb_slot[t_].fails++) rb_slot[t_].line = __LINE__; } } while (0)
static void rb_slots_report(void) {
    for (int t = 0; t < RB_SLOTS; t++)
        if (rb_slot[t].fails) {
            test_g.checks_failed++;
            fprintf(stderr, "  %s:%d: in a system (thread %d): %ld failed check(s)\n", __FILE__,
                    rb_slot[t].line, t, rb_slot[t].fails);
            rb_slot[t].fails = 0;
        }
}
#ifdef ECS_NO_THREADS
#define RB_THREADED 0
#else
#define RB_THREADED 1
#endif
/* Batches run on threads other than 0 since the last reset. */
static long rb_helper_batches(void) {
    long n = 0;
    for (int t = 1; t < RB_SLOTS; t++) n += rb_slot[t].batches;
    return n;
}
/* Every chunked system starts with this: counts the batch on its thread
   and spins a little, so that the stages have enough work to run on
   several threads (ECS_PARALLEL_MIN_NS) even at -O2. */
static void rb_batch(ecs_iter *it) {
    rb_slot[it->thread >= 0 && it->thread < RB_SLOTS - 1 ? it->thread : RB_SLOTS - 1].batches++;
    test_spin_us(test_spin_len(0.008 * it->count));
}

/* stage 0 "sim": movement, ageing, damage, steering, a tally */
static void rb_move(ecs_iter *it) {
    rb_batch(it);
    rb_pos *p = ECS_FIELD(it, rb_pos, 0);
    const rb_vel *v = ECS_FIELD(it, rb_vel, 1);
    RB_CHECK(it, p && v);
    if (!p || !v) return;
    for (int i = 0; i < it->count; i++) {
        p[i].x = ((p[i].x + v[i].dx) % 1024 + 1024) % 1024;
        p[i].y = ((p[i].y + v[i].dy) % 1024 + 1024) % 1024;
    }
}
static void rb_age(ecs_iter *it) {
    rb_batch(it);
    rb_life *l = ECS_FIELD(it, rb_life, 0);
    RB_CHECK(it, l);
    for (int i = 0; l && i < it->count; i++) l[i].age++;
}
static void rb_hurt(ecs_iter *it) {
    rb_batch(it);
    rb_hp *h = ECS_FIELD(it, rb_hp, 0);
    const rb_pos *p = ECS_FIELD(it, rb_pos, 1);
    RB_CHECK(it, h && p);
    if (!h || !p) return;
    for (int i = 0; i < it->count; i++)
        h[i].hp -= (p[i].x + p[i].y) % 3 + (((p[i].x ^ p[i].y) & 127) == 0 ? 60 : 0);
}
static void rb_steer(ecs_iter *it) {
    rb_vel *v = ECS_FIELD(it, rb_vel, 0);
    const rb_hp *h = ECS_FIELD(it, rb_hp, 1);
    RB_CHECK(it, v && h);
    if (!v || !h) return;
    for (int i = 0; i < it->count; i++) {
        uint64_t m = rb_mix(it->entities[i] ^ (uint64_t)(uint32_t)h[i].hp << 32);
        v[i].dx = (int32_t)(m % 9) - 4;
        v[i].dy = (int32_t)((m >> 8) % 9) - 4;
    }
}
static void rb_tally_fn(ecs_iter *it) {   /* MAIN_THREAD: writes the Tally resource */
    const rb_ids *id = (const rb_ids *)it->ctx;
    rb_tally *t = (rb_tally *)ecs_resource_get(it->world, id->tally);
    const rb_hp *h = ECS_FIELD(it, rb_hp, 0);
    const rb_name *n = (const rb_name *)ecs_field(it, 1);   /* OPTIONAL */
    RB_CHECK(it, it->thread == 0);
    RB_CHECK(it, t && h);
    if (!t || !h) return;
    t->batches++;
    for (int i = 0; i < it->count; i++) {
        t->hp_sum += (uint64_t)(int64_t)h[i].hp;
        if (n && n[i].s) t->named += rb_str_hash(n[i].s) & 0xff;
    }
}
static void rb_tally_frame(ecs_iter *it) {   /* once per frame, before the batches */
    const rb_ids *id = (const rb_ids *)it->ctx;
    rb_tally *t = (rb_tally *)ecs_resource_get(it->world, id->tally);
    RB_CHECK(it, t && it->thread == 0);
    if (t) t->frames++;
}

/* stage 1 "life": spawning (single children and whole families, parented
   to the spawner: pending handles on both sides), dying of age, dying of
   wounds (cascading to the children) */
static void rb_spawn(ecs_iter *it) {
    rb_batch(it);
    const rb_ids *id = (const rb_ids *)it->ctx;
    const rb_pos *p = ECS_FIELD(it, rb_pos, 0);
    const rb_life *l = ECS_FIELD(it, rb_life, 1);
    const rb_clock *ck = (const rb_clock *)ecs_resource_get(it->world, id->clock);
    RB_CHECK(it, p && l && ck);
    if (!p || !l || !ck || ck->pop >= ck->cap) return;
    ecs_commands *c = it->commands;
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        uint64_t m = rb_mix(e ^ (uint64_t)l[i].age << 40 ^ ck->frame);
        unsigned roll = (unsigned)(m % 256);
        if (roll >= 3) continue;
        rb_pos at = {(p[i].x + 1) % 1024, p[i].y};
        if (roll < 2) {   /* a child */
            ecs_entity k = ecs_cmd_create(c);
            RB_CHECK(it, k != 0);
            RB_CHECK(it, ecs_cmd_set(c, k, id->pos, &at) == ECS_OK);
            RB_CHECK(it, ecs_cmd_set(c, k, id->life, &(rb_life){0, 30 + (uint32_t)(m >> 8) % 90}) == ECS_OK);
            if (m & (1u << 16)) RB_CHECK(it, ecs_cmd_set(c, k, id->vel, &(rb_vel){1, -1}) == ECS_OK);
            if (m & (1u << 17)) RB_CHECK(it, ecs_cmd_set(c, k, id->hp, &(rb_hp){90}) == ECS_OK);
            if (m & (1u << 18)) {
                rb_name nm = {rb_labels[(m >> 20) % 8]};
                RB_CHECK(it, ecs_cmd_set(c, k, id->name, &nm) == ECS_OK);
            }
            if ((m >> 19) % 4 == 0) RB_CHECK(it, ecs_cmd_set_parent(c, k, e) == ECS_OK);
            if ((m >> 24) % 11 == 0) {   /* dies before it is born: the later set is dropped */
                RB_CHECK(it, ecs_cmd_destroy(c, k) == ECS_OK);
                RB_CHECK(it, ecs_cmd_set(c, k, id->hp, &(rb_hp){1}) == ECS_OK);
            }
        } else {          /* a family: a pending parent with two pending children */
            ecs_entity head = ecs_cmd_create(c);
            RB_CHECK(it, head != 0);
            rb_name nm = {rb_labels[(m >> 12) % 8]};
            RB_CHECK(it, ecs_cmd_set(c, head, id->pos, &at) == ECS_OK);
            RB_CHECK(it, ecs_cmd_set(c, head, id->life, &(rb_life){0, 60 + (uint32_t)(m >> 8) % 60}) == ECS_OK);
            RB_CHECK(it, ecs_cmd_set(c, head, id->name, &nm) == ECS_OK);
            for (int k = 0; k < 2; k++) {
                ecs_entity kid = ecs_cmd_create(c);
                RB_CHECK(it, kid != 0);
                RB_CHECK(it, ecs_cmd_set(c, kid, id->pos, &at) == ECS_OK);
                RB_CHECK(it, ecs_cmd_set(c, kid, id->hp, &(rb_hp){70 + 10 * k}) == ECS_OK);
                RB_CHECK(it, ecs_cmd_set(c, kid, id->life, &(rb_life){0, 200}) == ECS_OK);
                if (k) RB_CHECK(it, ecs_cmd_set(c, kid, id->vel, &(rb_vel){-1, 1}) == ECS_OK);
                RB_CHECK(it, ecs_cmd_set_parent(c, kid, head) == ECS_OK);
            }
            if ((m >> 32) % 3 == 0) RB_CHECK(it, ecs_cmd_set_parent(c, head, e) == ECS_OK);
            if ((m >> 28) % 9 == 0) RB_CHECK(it, ecs_cmd_destroy(c, head) == ECS_OK);   /* the kids go too */
        }
    }
}
static void rb_reap(ecs_iter *it) {
    rb_batch(it);
    const rb_life *l = ECS_FIELD(it, rb_life, 0);
    RB_CHECK(it, l);
    for (int i = 0; l && i < it->count; i++)
        if (l[i].age >= l[i].life) RB_CHECK(it, ecs_cmd_destroy(it->commands, it->entities[i]) == ECS_OK);
}
static void rb_wounds(ecs_iter *it) {
    rb_batch(it);
    const rb_ids *id = (const rb_ids *)it->ctx;
    const rb_hp *h = ECS_FIELD(it, rb_hp, 0);
    RB_CHECK(it, h);
    for (int i = 0; h && i < it->count; i++) {
        ecs_entity e = it->entities[i];
        if (h[i].hp < 0) RB_CHECK(it, ecs_cmd_destroy(it->commands, e) == ECS_OK);   /* the set below drops */
        if (h[i].hp < 40) {
            RB_CHECK(it, ecs_cmd_add(it->commands, e, id->marked) == ECS_OK);
            RB_CHECK(it, ecs_cmd_set(it->commands, e, id->hp, &(rb_hp){h[i].hp + 20}) == ECS_OK);
        }
    }
}

/* stage 2 "sync": relabelling (owned values set and removed through
   commands), healing, the census (EXCLUSIVE: direct structural changes and
   the Clock resource), and the aftermath */
static void rb_relabel(ecs_iter *it) {
    rb_batch(it);
    const rb_ids *id = (const rb_ids *)it->ctx;
    const rb_name *n = ECS_FIELD(it, rb_name, 0);
    const rb_life *l = ECS_FIELD(it, rb_life, 1);
    RB_CHECK(it, n && l);
    if (!n || !l) return;
    for (int i = 0; i < it->count; i++) {
        uint64_t m = rb_mix(it->entities[i] * 31 ^ l[i].age ^ rb_str_hash(n[i].s));
        if (m % 29 == 0) {
            rb_name nm = {rb_labels[(m >> 8) % 8]};
            RB_CHECK(it, ecs_cmd_set(it->commands, it->entities[i], id->name, &nm) == ECS_OK);
        } else if (m % 29 == 1) {
            RB_CHECK(it, ecs_cmd_remove(it->commands, it->entities[i], id->name) == ECS_OK);
        }
    }
}
static void rb_heal(ecs_iter *it) {
    rb_batch(it);
    const rb_ids *id = (const rb_ids *)it->ctx;
    rb_hp *h = ECS_FIELD(it, rb_hp, 1);
    RB_CHECK(it, h);
    for (int i = 0; h && i < it->count; i++) {
        h[i].hp += 3;
        if (h[i].hp > 60) RB_CHECK(it, ecs_cmd_remove(it->commands, it->entities[i], id->marked) == ECS_OK);
    }
}
static void rb_census(ecs_iter *it) {   /* EXCLUSIVE */
    const rb_ids *id = (const rb_ids *)it->ctx;
    ecs_world *w = it->world;
    rb_clock *ck = (rb_clock *)ecs_resource_get(w, id->clock);
    RB_CHECK(it, ck && it->thread == 0);
    if (!ck) return;
    ck->frame++;
    ck->pop = (uint32_t)ecs_count(w);
    ecs_entity first = 0;
    for (int k = 0; k < 3; k++) {
        ecs_entity e = ecs_create(w);
        RB_CHECK(it, e != 0);
        if (!e) continue;
        RB_CHECK(it, ecs_set(w, e, id->pos, &(rb_pos){k * 300, (int32_t)(ck->frame % 1024)}) == ECS_OK);
        RB_CHECK(it, ecs_set(w, e, id->life, &(rb_life){0, 40}) == ECS_OK);
        RB_CHECK(it, ecs_add(w, e, id->vel) == ECS_OK);
        rb_name nm = {rb_labels[(ck->frame + (uint32_t)k) % 8]};
        if (k != 1) RB_CHECK(it, ecs_set(w, e, id->name, &nm) == ECS_OK);   /* on_add, on_set, right here */
        if (k == 0) first = e;
        else if (k == 2) RB_CHECK(it, ecs_set_parent(w, e, first) == ECS_OK);
        if (ck->ring_n == 8) {   /* the oldest goes, directly, with its children */
            if (ecs_is_alive(w, ck->ring[0])) RB_CHECK(it, ecs_destroy(w, ck->ring[0]) == ECS_OK);
            memmove(ck->ring, ck->ring + 1, 7 * sizeof *ck->ring);
            ck->ring_n--;
        }
        ck->ring[ck->ring_n++] = e;
    }
    if (ecs_is_alive(w, ck->ring[0])) RB_CHECK(it, ecs_remove(w, ck->ring[0], id->vel) == ECS_OK);
    ck->victim = ck->ring[ck->ring_n / 2];
}
static void rb_aftermath(ecs_iter *it) {
    rb_batch(it);
    const rb_ids *id = (const rb_ids *)it->ctx;
    const rb_life *l = ECS_FIELD(it, rb_life, 1);
    const rb_clock *ck = (const rb_clock *)ecs_resource_get(it->world, id->clock);
    RB_CHECK(it, l && ck);
    if (!l || !ck) return;
    for (int i = 0; i < it->count; i++)
        if ((rb_mix(it->entities[i]) & 3) == 0)
            RB_CHECK(it, ecs_cmd_set(it->commands, it->entities[i], id->hp, &(rb_hp){50 + (int32_t)(l[i].age % 50)}) == ECS_OK);
    if (ck->frame % 8 == 0 && ck->victim)   /* from every chunk: all but the first are dropped */
        RB_CHECK(it, ecs_cmd_destroy(it->commands, ck->victim) == ECS_OK);
}

/* Every applied command buffer (one per chunk that recorded something)
   takes a serial for good; a build with 16-bit serials (the gen4 test
   configuration) has 65536 per world, so its chunks are bigger. */
#define RB_CHUNK(n) (ECS_PENDING_SERIAL_BITS <= 16 ? 4 * (n) : (n))

/* Registers the components, resources, stages and systems. `other` is
   another build: components in another order (an extra one first, so every
   id differs), systems in another order. Only two orders are kept, as they
   must be for the same result: stages are created in run order, and
   systems of a stage that record commands keep their relative order
   (commands apply in stage, then registration, order). Order between
   systems is declared, never inferred (ECS_ORDER_EXPLICIT), so the
   registration order does not decide it. */
static bool rb_register(ecs_world *w, rb_ids *id, bool other) {
    memset(id, 0, sizeof *id);
    ecs_component_desc nd = {.name = "rb_name", .size = sizeof(rb_name), .align = _Alignof(rb_name),
        .ctor = rb_name_ctor, .dtor = rb_name_dtor, .copy = rb_name_copy,
        .on_add = rb_on_add, .on_set = rb_on_set, .on_remove = rb_on_remove,
        .serialize = rb_name_save, .deserialize = rb_name_load};
    rb_clock ck0;
    memset(&ck0, 0, sizeof ck0);
    rb_tally t0;
    memset(&t0, 0, sizeof t0);
    if (other) {
        id->junk = ecs_component(w, "rb_junk", 16, 0);
        id->tally = ecs_resource(w, "rb_tally", sizeof(rb_tally), 0, &t0);
        id->marked = ecs_component(w, "Marked", 0, 0);
        id->name = ecs_component_init(w, &nd);
        id->hp = ECS_COMPONENT(w, rb_hp);
        id->clock = ecs_resource(w, "rb_clock", sizeof(rb_clock), 0, &ck0);
        id->life = ECS_COMPONENT(w, rb_life);
        id->vel = ECS_COMPONENT(w, rb_vel);
        id->pos = ECS_COMPONENT(w, rb_pos);
    } else {
        id->pos = ECS_COMPONENT(w, rb_pos);
        id->vel = ECS_COMPONENT(w, rb_vel);
        id->life = ECS_COMPONENT(w, rb_life);
        id->hp = ECS_COMPONENT(w, rb_hp);
        id->name = ecs_component_init(w, &nd);
        id->marked = ecs_component(w, "Marked", 0, 0);
        id->clock = ecs_resource(w, "rb_clock", sizeof(rb_clock), 0, &ck0);
        id->tally = ecs_resource(w, "rb_tally", sizeof(rb_tally), 0, &t0);
    }
    if (!id->pos || !id->vel || !id->life || !id->hp || !id->name || !id->marked || !id->clock ||
        !id->tally || (other && !id->junk))
        return false;
    ecs_stage life = ecs_stage_add(w, "life"), sync = ecs_stage_add(w, "sync");
    if (!life || !sync) return false;
    const ecs_access W = ECS_WRITE, R = ECS_READ;
    ecs_system_desc sys[] = {
        /* sim */
        {.name = "Move", .fn = rb_move, .chunk_size = RB_CHUNK(64), .terms = {{id->pos, W, ECS_AND}, {id->vel, R, ECS_AND}}},
        {.name = "Age", .fn = rb_age, .chunk_size = RB_CHUNK(96), .terms = {{id->life, W, ECS_AND}}},
        {.name = "Hurt", .fn = rb_hurt, .chunk_size = RB_CHUNK(48), .after = {"Move"},
         .terms = {{id->hp, W, ECS_AND}, {id->pos, R, ECS_AND}}},
        {.name = "Steer", .fn = rb_steer, .after = {"Hurt"},
         .terms = {{id->vel, W, ECS_AND}, {id->hp, R, ECS_AND}}},
        {.name = "TallyFrame", .fn = rb_tally_frame, .flags = ECS_SYSTEM_MAIN_THREAD, .writes = {id->tally}},
        {.name = "Tally", .fn = rb_tally_fn, .flags = ECS_SYSTEM_MAIN_THREAD, .after = {"Hurt", "TallyFrame"},
         .writes = {id->tally}, .terms = {{id->hp, R, ECS_AND}, {id->name, R, ECS_OPTIONAL}}},
        /* life: all three record commands */
        {.name = "Spawn", .fn = rb_spawn, .chunk_size = RB_CHUNK(40), .stage = life, .reads = {id->clock},
         .terms = {{id->pos, R, ECS_AND}, {id->life, R, ECS_AND}}},
        {.name = "Reap", .fn = rb_reap, .chunk_size = RB_CHUNK(80), .stage = life, .terms = {{id->life, R, ECS_AND}}},
        {.name = "Wounds", .fn = rb_wounds, .chunk_size = RB_CHUNK(50), .stage = life, .terms = {{id->hp, R, ECS_AND}}},
        /* sync: Relabel and Heal record commands applied before Census; Aftermath's at the end */
        {.name = "Relabel", .fn = rb_relabel, .chunk_size = RB_CHUNK(32), .stage = sync, .before = {"Census"},
         .terms = {{id->name, R, ECS_AND}, {id->life, R, ECS_AND}}},
        {.name = "Heal", .fn = rb_heal, .chunk_size = RB_CHUNK(16), .stage = sync, .before = {"Census"},
         .terms = {{id->marked, R, ECS_AND}, {id->hp, W, ECS_AND}}},
        {.name = "Census", .fn = rb_census, .stage = sync, .flags = ECS_SYSTEM_EXCLUSIVE, .writes = {id->clock}},
        {.name = "Aftermath", .fn = rb_aftermath, .chunk_size = RB_CHUNK(24), .stage = sync, .after = {"Census"},
         .reads = {id->clock},
         .terms = {{id->pos, R, ECS_AND}, {id->life, R, ECS_AND}, {id->hp, R, ECS_NOT}}},
    };
    enum { NSYS = sizeof sys / sizeof sys[0] };
    /* the other build: sync's systems first (Relabel still before Heal), then
       sim's backwards, then life's */
    static const int other_order[NSYS] = {12, 11, 9, 10, 5, 4, 3, 2, 1, 0, 6, 7, 8};
    for (int k = 0; k < NSYS; k++) {
        ecs_system_desc *d = &sys[other ? other_order[k] : k];
        d->ctx = id;
        if (!ecs_system_add(w, d)) return false;
    }
    return true;
}

/* The starting population: movers, the wounded, the named, families. */
static void rb_populate(ecs_world *w, const rb_ids *id, int n0) {
    rb_clock *ck = (rb_clock *)ecs_resource_get(w, id->clock);
    if (ck) ck->cap = (uint32_t)(n0 + n0 / 2);
    unsigned long long r = test_g.seed_given ? test_g.seed : 20260315ull;
    ecs_entity prev = 0;
    for (int i = 0; i < n0; i++) {
        ecs_entity e = ecs_create(w);
        CHECK(e != 0);
        CHECK_EQ_INT(ecs_set(w, e, id->pos, &(rb_pos){(int32_t)test_below(&r, 1024), (int32_t)test_below(&r, 1024)}), ECS_OK);
        if (i % 4 != 3)
            CHECK_EQ_INT(ecs_set(w, e, id->vel, &(rb_vel){(int32_t)test_below(&r, 9) - 4, (int32_t)test_below(&r, 9) - 4}), ECS_OK);
        CHECK_EQ_INT(ecs_set(w, e, id->life, &(rb_life){test_below(&r, 40), 60 + test_below(&r, 240)}), ECS_OK);
        if (i % 3 != 0) CHECK_EQ_INT(ecs_set(w, e, id->hp, &(rb_hp){20 + (int32_t)test_below(&r, 120)}), ECS_OK);
        if (i % 5 == 0) {
            rb_name nm = {rb_labels[i % 8]};
            CHECK_EQ_INT(ecs_set(w, e, id->name, &nm), ECS_OK);
        }
        if (i % 11 == 0) CHECK_EQ_INT(ecs_add(w, e, id->marked), ECS_OK);
        if (i % 7 == 1 && prev) CHECK_EQ_INT(ecs_set_parent(w, e, prev), ECS_OK);
        if (i % 7 == 0) prev = e;
    }
}

typedef struct rb_world { ecs_world *w; rb_ids id; ecs_query *named; } rb_world;

static bool rb_make(rb_world *x, int threads, bool other) {
    memset(x, 0, sizeof *x);
    x->w = ecs_world_new(&(ecs_world_desc){.threads = threads, .order = ECS_ORDER_EXPLICIT});
    if (!x->w) return false;
    if (!rb_register(x->w, &x->id, other)) return false;
    x->named = ecs_query_new(x->w, &(ecs_query_desc){.terms = {{x->id.name, ECS_READ, ECS_AND}}});
    ecs_report rep;
    ecs_result vr = ecs_validate(x->w, &rep);
    if (vr != ECS_OK) ecs_report_print(&rep, stderr);
    CHECK_EQ_INT(vr, ECS_OK);
    return x->named && vr == ECS_OK;
}
static long rb_named(rb_world *x) { return x->w && x->named ? (long)ecs_query_count(x->w, x->named) : 0; }

/* Runs frames from..to-1 (frame numbers of the run); hashes[f - from] gets
   the hash after frame f. false after a failed frame. */
static bool rb_frames(rb_world *x, long from, long to, uint64_t *hashes) {
    for (long f = from; f < to; f++) {
        ecs_result r = ecs_progress(x->w, 1.0f / 60);
        rb_slots_report();
        if (r != ECS_OK) {
            CHECKF(r == ECS_OK, "frame %ld: %s: %s", f, ecs_result_str(r), ecs_last_error(x->w));
            return false;
        }
        if (hashes) hashes[f - from] = ecs_world_hash(x->w);
    }
    return true;
}

/* Hook calls are counted globally: constructed - destroyed must equal the
   values alive in the worlds and snapshots that exist. */
#define RB_BALANCED(held) CHECKF(rb_ctor_n - rb_dtor_n == (held), \
    "constructed %ld - destroyed %ld != %ld values held", (long)rb_ctor_n, (long)rb_dtor_n, (long)(held))

static void rb_reset_counts(void) {
    rb_ctor_n = rb_dtor_n = rb_add_n = rb_set_n = rb_remove_n = 0;
    rb_log = 1469598103934665603ull;
    memset(rb_slot, 0, sizeof rb_slot);
}

/* Entities with a parent (the trees the cascades cut down). */
static long rb_parented(rb_world *x) {
    long n = 0;
    ecs_query *all = ecs_query_new(x->w, &(ecs_query_desc){.terms = {{0}}});
    for (ecs_iter it = ecs_query_iter(x->w, all); all && ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++) n += ecs_get_parent(x->w, it.entities[i]) != 0;
    ecs_query_free(all);
    return n;
}

static int rb_first_diff(const uint64_t *a, const uint64_t *b, long n) {
    for (long i = 0; i < n; i++) if (a[i] != b[i]) return (int)i;
    return -1;
}

/* 1. Run to the middle, take, run to the end (A); restore; run to the end
   again (B): the same world after every frame, the same hook calls, and A
   the same at every thread count. */
TEST(sched_rollback_exact) {
    static const int threads[3] = {1, 2, 8};
    long frames = test_scaled(600, 100), mid = frames / 2, rest = frames - mid;
    int n0 = (int)test_scaled(2000, 200);
    uint64_t *ha = (uint64_t *)malloc((size_t)rest * sizeof *ha), *hb = (uint64_t *)malloc((size_t)rest * sizeof *hb);
    REQUIRE(ha && hb);
    uint64_t first_a = 0, first_log = 0;
    size_t first_count = 0;
    for (int t = 0; t < 3; t++) {
        rb_reset_counts();
        rb_world x;
        bool ok = rb_make(&x, threads[t], false);
        if (ok) {
            rb_populate(x.w, &x.id, n0);
            ok = rb_frames(&x, 0, mid, NULL);
        }
        ecs_snapshot *s = NULL;
        if (ok) {
            uint64_t h_mid = ecs_world_hash(x.w);
            long held = rb_named(&x);
            s = ecs_snapshot_take(x.w);
            CHECKF(s != NULL, "take: %s", ecs_last_error(x.w));
            ok = s != NULL;
            if (ok) {
                CHECK_EQ_INT(ecs_world_hash(x.w), h_mid);   /* taking changes nothing */
                RB_BALANCED(rb_named(&x) + held);
                long adds0 = rb_add_n, sets0 = rb_set_n, removes0 = rb_remove_n;
                uint64_t log0 = rb_log;
                size_t dropped0 = ecs_commands_dropped(x.w);
                ok = rb_frames(&x, mid, frames, ha);
                uint64_t log_a = rb_log;
                long adds_a = rb_add_n - adds0, sets_a = rb_set_n - sets0, removes_a = rb_remove_n - removes0;
                size_t count_a = ecs_count(x.w), dropped_a = ecs_commands_dropped(x.w);
                RB_BALANCED(rb_named(&x) + held);
                /* the run did what it is meant to */
                CHECKF(adds_a > 100 && sets_a > 100 && removes_a > 100, "hooks: %ld adds, %ld sets, %ld removes",
                       adds_a, sets_a, removes_a);
                CHECKF(dropped_a > dropped0, "no command was dropped in the second half");
                CHECKF(ecs_world_hash(x.w) != h_mid, "the world did not change");
                if (ok) {
                    CHECK_EQ_INT(ecs_snapshot_restore(x.w, s), ECS_OK);
                    CHECKF(ecs_world_hash(x.w) == h_mid, "%d threads: restored hash %016llx, taken %016llx",
                           threads[t], (unsigned long long)ecs_world_hash(x.w), (unsigned long long)h_mid);
                    CHECK_EQ_INT(ecs_commands_dropped(x.w), dropped0);
                    CHECK_EQ_INT(rb_named(&x), held);
                    RB_BALANCED(2 * held);
                    rb_log = log0;
                    adds0 = rb_add_n; sets0 = rb_set_n; removes0 = rb_remove_n;
                    ok = rb_frames(&x, mid, frames, hb);
                }
                if (ok) {
                    int d = rb_first_diff(ha, hb, rest);
                    CHECKF(d < 0, "%d threads: after the restore, frame %ld differs", threads[t], mid + d);
                    CHECKF(hb[rest - 1] == ha[rest - 1], "%d threads: hash A %016llx, B %016llx", threads[t],
                           (unsigned long long)ha[rest - 1], (unsigned long long)hb[rest - 1]);
                    CHECKF(rb_log == log_a, "%d threads: the hooks ran otherwise after the restore", threads[t]);
                    CHECK_EQ_INT(rb_add_n - adds0, adds_a);
                    CHECK_EQ_INT(rb_set_n - sets0, sets_a);
                    CHECK_EQ_INT(rb_remove_n - removes0, removes_a);
                    CHECK_EQ_INT(ecs_count(x.w), count_a);
                    CHECK_EQ_INT(ecs_commands_dropped(x.w), dropped_a);
                    RB_BALANCED(rb_named(&x) + held);
                    if (t == 0) {
                        first_a = ha[rest - 1];
                        first_log = log_a;
                        first_count = count_a;
                        CHECKF(count_a > (size_t)n0 / 2, "the population collapsed: %zu", count_a);
                        CHECKF(rb_parented(&x) > n0 / 20, "only %ld entities have a parent", rb_parented(&x));
                    } else {
                        CHECKF(ha[rest - 1] == first_a, "%d threads: hash A %016llx, 1 thread %016llx", threads[t],
                               (unsigned long long)ha[rest - 1], (unsigned long long)first_a);
                        CHECKF(log_a == first_log, "%d threads: the hooks ran otherwise than on 1 thread", threads[t]);
                        CHECK_EQ_INT(count_a, first_count);
                    }
                }
            }
        }
        /* the parallel path really ran (at full size: scaled down, the stages
           may all be too small to be worth the other threads) */
        if (ok && RB_THREADED && threads[t] > 1 && test_g.scale_pct >= 100)
            CHECKF(rb_helper_batches() > 0, "%d threads: every batch ran on thread 0", threads[t]);
        ecs_snapshot_free(s);
        RB_BALANCED(rb_named(&x));
        ecs_world_free(x.w);
        CHECKF(rb_ctor_n == rb_dtor_n, "%d threads: constructed %ld, destroyed %ld", threads[t], (long)rb_ctor_n,
               (long)rb_dtor_n);
        if (!ok) break;
    }
    free(ha);
    free(hb);
}

/* 2. The snapshot as a save file, loaded into another build (components
   and systems registered in another order, an extra component, entities of
   its own, maybe another thread count): from there it runs exactly as the
   world that wrote it. */
TEST(sched_rollback_save_file) {
    static const int pairs[3][2] = {{1, 1}, {2, 2}, {8, 1}};   /* writer's threads, reader's */
    long frames = test_scaled(600, 100), mid = frames / 2, rest = frames - mid;
    int n0 = (int)test_scaled(2000, 200);
    uint64_t *ha = (uint64_t *)malloc((size_t)rest * sizeof *ha), *hb = (uint64_t *)malloc((size_t)rest * sizeof *hb);
    REQUIRE(ha && hb);
    for (int p = 0; p < 3; p++) {
        rb_reset_counts();
        rb_world x, y;
        memset(&y, 0, sizeof y);
        FILE *f = NULL;
        bool ok = rb_make(&x, pairs[p][0], false);
        if (ok) {
            rb_populate(x.w, &x.id, n0);
            ok = rb_frames(&x, 0, mid, NULL);
        }
        uint64_t h_mid = 0, log_mid = 0, log_a = 0;
        long held = 0;
        if (ok) {   /* the save */
            h_mid = ecs_world_hash(x.w);
            ecs_snapshot *s = ecs_snapshot_take(x.w);
            f = tmpfile();
            ok = s && f;
            CHECK(ok);
            if (ok) CHECK_EQ_INT(ecs_snapshot_write(s, f), ECS_OK);
            held = rb_named(&x);
            ecs_snapshot_free(s);
        }
        if (ok) {   /* the writer goes on: A */
            log_mid = rb_log;
            ok = rb_frames(&x, mid, frames, ha);
            log_a = rb_log;
        }
        if (ok) ok = rb_make(&y, pairs[p][1], true);
        /* The reader has a life of its own first. Its tables are ones the
           writer never makes ({pos}, {pos, name}, {pos, junk}) or has made by
           the save (the census's): a restore keeps tables the snapshot lacks,
           empty, after the snapshot's, so one the writer only makes after the
           save would sit elsewhere in the table order here than there. */
        if (ok) {
            ecs_entity own[6];
            for (int i = 0; i < 6; i++) {
                own[i] = ecs_create(y.w);
                CHECK_EQ_INT(ecs_set(y.w, own[i], y.id.pos, &(rb_pos){i, i}), ECS_OK);
                if (i % 2) CHECK_EQ_INT(ecs_set(y.w, own[i], y.id.name, &(rb_name){rb_labels[i]}), ECS_OK);
                if (i == 4) CHECK_EQ_INT(ecs_add(y.w, own[i], y.id.junk), ECS_OK);
                if (i) CHECK_EQ_INT(ecs_set_parent(y.w, own[i], own[0]), ECS_OK);
            }
            CHECK_EQ_INT(ecs_destroy(y.w, own[5]), ECS_OK);
            CHECK_EQ_INT(ecs_progress(y.w, 1.0f / 60), ECS_OK);
            rb_slots_report();
            RB_BALANCED(rb_named(&x) + rb_named(&y));
            long y_own = rb_named(&y);
            rewind(f);
            ecs_snapshot *s = ecs_snapshot_read(y.w, f);
            CHECKF(s != NULL, "read: %s", ecs_last_error(y.w));
            ok = s != NULL;
            if (ok) {
                RB_BALANCED(rb_named(&x) + y_own + held);   /* the read snapshot holds values too */
                CHECK_EQ_INT(ecs_snapshot_restore(y.w, s), ECS_OK);
                CHECKF(ecs_world_hash(y.w) == h_mid, "writer %d, reader %d threads: loaded hash %016llx, saved %016llx",
                       pairs[p][0], pairs[p][1], (unsigned long long)ecs_world_hash(y.w), (unsigned long long)h_mid);
                CHECK_EQ_INT(rb_named(&y), held);
                RB_BALANCED(rb_named(&x) + 2 * held);
                ecs_snapshot_free(s);
                RB_BALANCED(rb_named(&x) + held);
                rb_log = log_mid;   /* the reader's own frame logged hook calls too */
                ok = rb_frames(&y, mid, frames, hb);
            }
            if (ok) {
                int d = rb_first_diff(ha, hb, rest);
                CHECKF(d < 0, "writer %d, reader %d threads: after loading, frame %ld differs", pairs[p][0],
                       pairs[p][1], mid + d);
                CHECKF(hb[rest - 1] == ha[rest - 1], "hash A %016llx, loaded %016llx",
                       (unsigned long long)ha[rest - 1], (unsigned long long)hb[rest - 1]);
                CHECKF(rb_log == log_a, "writer %d, reader %d threads: the hooks ran otherwise after loading",
                       pairs[p][0], pairs[p][1]);
                CHECK_EQ_INT(ecs_count(y.w), ecs_count(x.w));
                CHECK_EQ_INT(ecs_commands_dropped(y.w), ecs_commands_dropped(x.w));
                const rb_tally *ta = (const rb_tally *)ecs_resource_get(x.w, x.id.tally);
                const rb_tally *tb = (const rb_tally *)ecs_resource_get(y.w, y.id.tally);
                CHECK(ta && tb && !memcmp(ta, tb, sizeof *ta));
            }
            /* and the file loads back into the world that wrote it */
            if (ok) {
                rewind(f);
                ecs_snapshot *s2 = ecs_snapshot_read(x.w, f);
                CHECKF(s2 != NULL, "read back: %s", ecs_last_error(x.w));
                if (s2) {
                    CHECK_EQ_INT(ecs_snapshot_restore(x.w, s2), ECS_OK);
                    CHECK_EQ_INT(ecs_world_hash(x.w), h_mid);
                    ecs_snapshot_free(s2);
                }
            }
        }
        if (f) fclose(f);
        RB_BALANCED(rb_named(&x) + rb_named(&y));
        ecs_world_free(y.w);
        ecs_world_free(x.w);
        CHECKF(rb_ctor_n == rb_dtor_n, "constructed %ld, destroyed %ld", (long)rb_ctor_n, (long)rb_dtor_n);
        if (!ok) break;
    }
    free(ha);
    free(hb);
}

void suite_rollback(void) {
    RUN(sched_rollback_exact);
    RUN(sched_rollback_save_file);
}
