/* Stale, recycled, never-issued and malformed entity handles, and unknown ids,
   through every handle-taking call: immediate, recorded in a command buffer,
   and in defer mode. A failing call must report an error and leave the world
   exactly as it was; a command whose target is dead when it applies is
   dropped and counted. The generation tests cycle one slot thousands of times
   (with -DECS_GENERATION_BITS=4 that exhausts slots, which must be retired). */
#include "test.h"

#include <stdint.h>

typedef struct { float x, y; } SPos;
typedef struct { float x, y; } SVel;
typedef struct { int v[4]; } SUnused;

#define GEN_MASK ((1ull << ECS_GENERATION_BITS) - 1ull)
#define PENDING_BIT (1ull << 63)
static uint32_t idx_of(ecs_entity e) { return (uint32_t)e; }
static unsigned long long gen_of(ecs_entity e) { return (e >> 32) & GEN_MASK; }
static ecs_entity make_handle(uint32_t idx, unsigned long long gen) {
    return ((ecs_entity)gen << 32) | idx;
}

/* ---- the kinds of bad handle ------------------------------------------- */
enum {
    SK_NEVER,          /* well-formed, index past every slot, generation 1 */
    SK_NEVER_TOP,      /* index 0xFFFFFFFF, generation 1 */
    SK_DESTROYED,
    SK_RECYCLED,       /* destroyed; its slot now holds a live entity */
    SK_WRONG_GEN,      /* a live entity's index with another generation */
    SK_ZERO,
    SK_ALL_ONES,       /* UINT64_MAX */
    SK_GEN0,           /* a live entity's index, generation 0 */
    SK_FAKE_PENDING,   /* a live entity's handle with bit 63 set */
    SK_GEN_OVERFLOW,   /* a live handle with a bit above the generation field */
    SK_COUNT
};
static const char *const sk_name[SK_COUNT] = {
    "never-issued", "never-issued index 0xFFFFFFFF", "destroyed", "recycled",
    "live index, other generation", "0", "UINT64_MAX", "generation 0",
    "bit 63 never from ecs_cmd_create", "bit above the generation field"};

/* Well-formed handles of entities that are not alive: exactly ECS_ERR_STALE. */
static int sk_strict(int k) { return k <= SK_WRONG_GEN; }
/* Handles no buffer can have produced: recording them must fail too. */
static int sk_must_fail_recording(int k) {
    return k == SK_ZERO || k == SK_ALL_ONES || k == SK_FAKE_PENDING;
}
static int sk_immediate_ok(int k, ecs_result r) {
    return sk_strict(k) ? r == ECS_ERR_STALE : (r == ECS_ERR_STALE || r == ECS_ERR_ARG);
}
/* Recording (or a call in defer mode): may be accepted and dropped later. */
static int sk_recording_ok(int k, ecs_result r) {
    if (sk_must_fail_recording(k)) return r == ECS_ERR_STALE || r == ECS_ERR_ARG;
    if (sk_strict(k)) return r == ECS_OK || r == ECS_ERR_STALE;
    return r == ECS_OK || r == ECS_ERR_STALE || r == ECS_ERR_ARG;
}

/* ---- fixture --------------------------------------------------------------
   Four live entities (one with pos+vel+tag, so a handle that aliases it shows
   up in ecs_has/ecs_get), plus whatever the kind needs. */
typedef struct fx {
    ecs_world *w;
    ecs_id pos, vel, tag, unused;
    ecs_entity live[4];
    ecs_entity successor;   /* SK_RECYCLED: the entity now in bad's slot */
    ecs_entity bad;
} fx;

static int fx_make(fx *f, int kind) {
    memset(f, 0, sizeof *f);
    f->w = ecs_world_new(NULL);
    if (!f->w) return 0;
    ecs_world *w = f->w;
    f->pos = ECS_COMPONENT(w, SPos);
    f->vel = ECS_COMPONENT(w, SVel);
    f->tag = ecs_component(w, "STag", 0, 0);
    f->unused = ECS_COMPONENT(w, SUnused);
    if (!f->pos || !f->vel || !f->tag || !f->unused) return 0;
    for (int i = 0; i < 4; i++) if (!(f->live[i] = ecs_create(w))) return 0;
    if (ecs_set(w, f->live[0], f->pos, &(SPos){1, 2}) || ecs_set(w, f->live[0], f->vel, &(SVel){3, 4}) ||
        ecs_add(w, f->live[0], f->tag) || ecs_set(w, f->live[1], f->pos, &(SPos){5, 6}) ||
        ecs_add(w, f->live[3], f->tag))
        return 0;
    ecs_entity l0 = f->live[0];
    switch (kind) {
    case SK_NEVER: f->bad = make_handle(1000, 1); break;
    case SK_NEVER_TOP: f->bad = make_handle(0xFFFFFFFFu, 1); break;
    case SK_DESTROYED: case SK_RECYCLED: {
        ecs_entity d = ecs_create(w);
        if (!d || ecs_set(w, d, f->pos, &(SPos){7, 8}) || ecs_add(w, d, f->tag)) return 0;
        if (ecs_destroy(w, d) != ECS_OK) return 0;
        f->bad = d;
        if (kind == SK_DESTROYED) break;
        /* Create until the slot comes back (a free list reuses it soon). */
        for (int i = 0; i < 256 && !f->successor; i++) {
            ecs_entity n = ecs_create(w);
            if (!n) return 0;
            if (idx_of(n) == idx_of(d)) f->successor = n;
        }
        if (!f->successor) {
            fprintf(stderr, "  fx_make: a destroyed slot was not reused in 256 creates\n");
            return 0;
        }
        if (f->successor == d) {
            fprintf(stderr, "  fx_make: a recycled slot kept its generation\n");
            return 0;
        }
        if (ecs_set(w, f->successor, f->pos, &(SPos){9, 9}) || ecs_add(w, f->successor, f->vel) ||
            ecs_add(w, f->successor, f->tag))
            return 0;
        break;
    }
    case SK_WRONG_GEN:
        f->bad = gen_of(l0) < GEN_MASK ? l0 + (1ull << 32) : l0 - (1ull << 32);
        break;
    case SK_ZERO: f->bad = 0; break;
    case SK_ALL_ONES: f->bad = UINT64_MAX; break;
    case SK_GEN0: f->bad = l0 & 0xFFFFFFFFull; break;
    case SK_FAKE_PENDING: f->bad = l0 | PENDING_BIT; break;
    case SK_GEN_OVERFLOW:
        f->bad = 32 + ECS_GENERATION_BITS < 63 ? l0 | (1ull << (32 + ECS_GENERATION_BITS))
                                              : l0 | PENDING_BIT;
        break;
    }
    return 1;
}

static void fx_free(fx *f) {
    if (f->w) ecs_world_free(f->w);
    f->w = NULL;
}
#define FX(f, k) do { if (!fx_make(&(f), (k))) { fx_free(&(f)); REQUIRE(!"fixture"); } } while (0)
#define FX2(f, g, k) do { \
    int ok1_ = fx_make(&(f), (k)), ok2_ = fx_make(&(g), (k)); \
    if (!ok1_ || !ok2_) { fx_free(&(f)); fx_free(&(g)); REQUIRE(!"fixture"); } \
} while (0)

/* ---- operations ---------------------------------------------------------- */
enum { OP_DESTROY, OP_ADD, OP_ADD_HAD, OP_ADD_TAG, OP_REMOVE, OP_REMOVE_LACKED, OP_SET,
       OP_SET_TAG, OP_COUNT };
static const char *const op_name[OP_COUNT] = {
    "destroy", "add vel", "add pos", "add tag", "remove pos", "remove unused", "set pos",
    "set tag NULL"};

static ecs_result op_call(fx *f, int op, ecs_entity e) {
    ecs_world *w = f->w;
    switch (op) {
    case OP_DESTROY: return ecs_destroy(w, e);
    case OP_ADD: return ecs_add(w, e, f->vel);
    case OP_ADD_HAD: return ecs_add(w, e, f->pos);
    case OP_ADD_TAG: return ecs_add(w, e, f->tag);
    case OP_REMOVE: return ecs_remove(w, e, f->pos);
    case OP_REMOVE_LACKED: return ecs_remove(w, e, f->unused);
    case OP_SET: return ecs_set(w, e, f->pos, &(SPos){42, 43});
    default: return ecs_set(w, e, f->tag, NULL);
    }
}
static ecs_result op_record(fx *f, ecs_commands *c, int op, ecs_entity e) {
    switch (op) {
    case OP_DESTROY: return ecs_cmd_destroy(c, e);
    case OP_ADD: return ecs_cmd_add(c, e, f->vel);
    case OP_ADD_HAD: return ecs_cmd_add(c, e, f->pos);
    case OP_ADD_TAG: return ecs_cmd_add(c, e, f->tag);
    case OP_REMOVE: return ecs_cmd_remove(c, e, f->pos);
    case OP_REMOVE_LACKED: return ecs_cmd_remove(c, e, f->unused);
    case OP_SET: return ecs_cmd_set(c, e, f->pos, &(SPos){42, 43});
    default: return ecs_cmd_set(c, e, f->tag, NULL);
    }
}

/* The reads a bad handle must fail, on whatever world state is current. */
static void check_reads_fail(fx *f, int kind, const char *mode) {
    ecs_world *w = f->w;
    ecs_entity b = f->bad;
    CHECKF(!ecs_is_alive(w, b), "%s, %s: ecs_is_alive true", sk_name[kind], mode);
    CHECKF(!ecs_has(w, b, f->pos) && !ecs_has(w, b, f->vel) && !ecs_has(w, b, f->tag),
           "%s, %s: ecs_has true", sk_name[kind], mode);
    CHECKF(!ecs_get(w, b, f->pos) && !ecs_get(w, b, f->vel), "%s, %s: ecs_get not NULL",
           sk_name[kind], mode);
    CHECKF(!ecs_get_mut(w, b, f->pos) && !ecs_get_mut(w, b, f->vel),
           "%s, %s: ecs_get_mut not NULL", sk_name[kind], mode);
    if (f->successor) {
        CHECKF(ecs_is_alive(w, f->successor), "%s, %s: successor dead", sk_name[kind], mode);
        const SPos *p = (const SPos *)ecs_get(w, f->successor, f->pos);
        CHECKF(p && p->x == 9 && p->y == 9, "%s, %s: successor's value changed", sk_name[kind], mode);
    }
}

/* ---- tests ----------------------------------------------------------------- */
TEST(stale_fresh_world_has_no_error) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    CHECK(ecs_last_error(w) && ecs_last_error(w)[0] == '\0');
    ecs_entity e = ecs_create(w);
    CHECK(e && ecs_is_alive(w, e));
    CHECK(ecs_last_error(w)[0] == '\0');
    CHECK(ecs_destroy(w, e) == ECS_OK);
    CHECK(ecs_destroy(w, e) == ECS_ERR_STALE);
    CHECK(ecs_last_error(w)[0] != '\0');
    ecs_world_free(w);
}

TEST(stale_immediate_calls_fail) {
    for (int k = 0; k < SK_COUNT; k++) {
        for (int op = 0; op < OP_COUNT; op++) {
            fx f;
            FX(f, k);
            unsigned long long h0 = test_world_hash(f.w);
            size_t n0 = ecs_count(f.w);
            const char *before = ecs_last_error(f.w);
            CHECKF(before && !before[0], "%s: last error set before any failure: %s", sk_name[k], before);
            ecs_result r = op_call(&f, op, f.bad);
            CHECKF(sk_immediate_ok(k, r), "%s %s: returned %s", op_name[op], sk_name[k], ecs_result_str(r));
            CHECKF(ecs_last_error(f.w) && ecs_last_error(f.w)[0], "%s %s: no last error", op_name[op],
                   sk_name[k]);
            CHECKF(test_world_hash(f.w) == h0 && ecs_count(f.w) == n0, "%s %s: world changed",
                   op_name[op], sk_name[k]);
            check_reads_fail(&f, k, op_name[op]);
            for (int i = 0; i < 4; i++) CHECK(ecs_is_alive(f.w, f.live[i]));
            ecs_world_free(f.w);
        }
    }
}

TEST(stale_reads_fail) {
    for (int k = 0; k < SK_COUNT; k++) {
        fx f;
        FX(f, k);
        unsigned long long h0 = test_world_hash(f.w);
        check_reads_fail(&f, k, "immediate");
        CHECK(test_world_hash(f.w) == h0);
        ecs_world_free(f.w);
    }
}

/* Records a command on the bad handle plus a valid one, applies, and compares
   with a twin world where only the valid change was made directly. */
TEST(stale_commands_dropped) {
    for (int k = 0; k < SK_COUNT; k++) {
        for (int op = 0; op < OP_COUNT; op++) {
            fx f, ref;
            FX2(f, ref, k);
            CHECK(ecs_add(ref.w, ref.live[2], ref.vel) == ECS_OK);
            unsigned long long h0 = test_world_hash(f.w);
            size_t d0 = ecs_commands_dropped(f.w);
            ecs_commands *c = ecs_commands_new(f.w);
            if (!c) { fx_free(&f); fx_free(&ref); REQUIRE(c); }
            ecs_result r = op_record(&f, c, op, f.bad);
            CHECKF(sk_recording_ok(k, r), "record %s %s: returned %s", op_name[op], sk_name[k],
                   ecs_result_str(r));
            CHECKF(r == ECS_OK || ecs_last_error(f.w)[0], "record %s %s: no last error", op_name[op],
                   sk_name[k]);
            CHECKF(r == ECS_OK || test_world_hash(f.w) == h0, "record %s %s: world changed", op_name[op],
                   sk_name[k]);
            CHECK(ecs_cmd_add(c, f.live[2], f.vel) == ECS_OK);
            CHECK(test_world_hash(f.w) == h0);  /* nothing applies before apply */
            ecs_result ra = ecs_commands_apply(f.w, c);
            CHECKF(ra == ECS_OK, "apply after %s %s: %s", op_name[op], sk_name[k], ecs_result_str(ra));
            size_t want = d0 + (r == ECS_OK ? 1 : 0);
            CHECKF(ecs_commands_dropped(f.w) == want, "%s %s (recording %s): dropped %zu, want %zu",
                   op_name[op], sk_name[k], ecs_result_str(r), ecs_commands_dropped(f.w), want);
            CHECKF(test_world_hash(f.w) == test_world_hash(ref.w) && ecs_count(f.w) == ecs_count(ref.w),
                   "%s %s: world differs from applying only the valid command", op_name[op], sk_name[k]);
            CHECK(ecs_has(f.w, f.live[2], f.vel));
            check_reads_fail(&f, k, "after apply");
            /* The buffer was cleared: applying again changes nothing. */
            CHECK(ecs_commands_apply(f.w, c) == ECS_OK);
            CHECK(ecs_commands_dropped(f.w) == want);
            ecs_commands_free(c);
            ecs_world_free(f.w);
            ecs_world_free(ref.w);
        }
    }
}

TEST(stale_defer_calls) {
    for (int k = 0; k < SK_COUNT; k++) {
        for (int op = 0; op < OP_COUNT; op++) {
            fx f, ref;
            FX2(f, ref, k);
            CHECK(ecs_add(ref.w, ref.live[2], ref.vel) == ECS_OK);
            unsigned long long h0 = test_world_hash(f.w);
            size_t d0 = ecs_commands_dropped(f.w);
            CHECK(ecs_defer_begin(f.w) == ECS_OK);
            ecs_result r = op_call(&f, op, f.bad);
            CHECKF(sk_recording_ok(k, r), "deferred %s %s: returned %s", op_name[op], sk_name[k],
                   ecs_result_str(r));
            CHECKF(r == ECS_OK || ecs_last_error(f.w)[0], "deferred %s %s: no last error", op_name[op],
                   sk_name[k]);
            check_reads_fail(&f, k, "in defer mode");
            CHECK(ecs_add(f.w, f.live[2], f.vel) == ECS_OK);
            CHECK(test_world_hash(f.w) == h0);  /* recorded, not applied */
            ecs_result re = ecs_defer_end(f.w);
            CHECKF(re == ECS_OK, "defer_end after %s %s: %s", op_name[op], sk_name[k], ecs_result_str(re));
            size_t want = d0 + (r == ECS_OK ? 1 : 0);
            CHECKF(ecs_commands_dropped(f.w) == want, "deferred %s %s (call %s): dropped %zu, want %zu",
                   op_name[op], sk_name[k], ecs_result_str(r), ecs_commands_dropped(f.w), want);
            CHECKF(test_world_hash(f.w) == test_world_hash(ref.w) && ecs_count(f.w) == ecs_count(ref.w),
                   "deferred %s %s: world differs from making only the valid change", op_name[op],
                   sk_name[k]);
            check_reads_fail(&f, k, "after defer_end");
            ecs_world_free(f.w);
            ecs_world_free(ref.w);
        }
    }
}

/* Alive when recorded, dead when applied: dropped, counted, the rest applies. */
TEST(stale_commands_target_dies_before_apply) {
    fx f;
    FX(f, SK_NEVER);
    ecs_world *w = f.w;
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    ecs_entity e = f.live[1];
    size_t d0 = ecs_commands_dropped(w);
    /* destroyed directly between recording and apply */
    CHECK(ecs_cmd_add(c, e, f.vel) == ECS_OK);
    CHECK(ecs_cmd_set(c, e, f.pos, &(SPos){1, 1}) == ECS_OK);
    CHECK(ecs_cmd_add(c, f.live[2], f.tag) == ECS_OK);
    CHECK(ecs_destroy(w, e) == ECS_OK);
    unsigned long long h0 = test_world_hash(w);
    CHECK(ecs_commands_apply(w, c) == ECS_OK);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0 + 2);
    CHECK(ecs_has(w, f.live[2], f.tag));
    CHECK(test_world_hash(w) != h0);
    CHECK(ecs_remove(w, f.live[2], f.tag) == ECS_OK);
    CHECK(test_world_hash(w) == h0);
    CHECK(!ecs_is_alive(w, e));

    /* destroyed by an earlier command of the same buffer */
    ecs_entity g = f.live[0];
    d0 = ecs_commands_dropped(w);
    CHECK(ecs_cmd_destroy(c, g) == ECS_OK);
    CHECK(ecs_cmd_add(c, g, f.unused) == ECS_OK);
    CHECK(ecs_cmd_remove(c, g, f.pos) == ECS_OK);
    CHECK(ecs_cmd_set(c, g, f.vel, &(SVel){5, 5}) == ECS_OK);
    CHECK(ecs_cmd_destroy(c, g) == ECS_OK);
    CHECK(ecs_cmd_add(c, f.live[3], f.vel) == ECS_OK);
    size_t n0 = ecs_count(w);
    CHECK(ecs_commands_apply(w, c) == ECS_OK);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0 + 4);
    CHECK(!ecs_is_alive(w, g));
    CHECK_EQ_INT(ecs_count(w), n0 - 1);
    CHECK(ecs_has(w, f.live[3], f.vel));

    /* slot recycled between recording and apply: the newcomer is untouched */
    ecs_entity v = f.live[3];
    d0 = ecs_commands_dropped(w);
    CHECK(ecs_cmd_set(c, v, f.pos, &(SPos){6, 6}) == ECS_OK);
    CHECK(ecs_cmd_add(c, v, f.unused) == ECS_OK);
    CHECK(ecs_cmd_destroy(c, v) == ECS_OK);
    CHECK(ecs_destroy(w, v) == ECS_OK);
    ecs_entity succ = 0;
    for (int i = 0; i < 256 && !succ; i++) {
        ecs_entity n = ecs_create(w);
        REQUIRE(n);
        if (idx_of(n) == idx_of(v)) succ = n;
    }
    REQUIRE(succ);
    CHECK(succ != v);
    h0 = test_world_hash(w);
    n0 = ecs_count(w);
    CHECK(ecs_commands_apply(w, c) == ECS_OK);
    CHECK_EQ_INT(ecs_commands_dropped(w), d0 + 3);
    CHECK(ecs_is_alive(w, succ));
    CHECK(!ecs_has(w, succ, f.pos) && !ecs_has(w, succ, f.unused));
    CHECK(test_world_hash(w) == h0);
    CHECK_EQ_INT(ecs_count(w), n0);
    ecs_commands_free(c);
    ecs_world_free(w);
}

TEST(stale_defer_target_dies_in_block) {
    fx f;
    FX(f, SK_NEVER);
    ecs_world *w = f.w;
    ecs_entity e = f.live[0];
    size_t d0 = ecs_commands_dropped(w), n0 = ecs_count(w);
    CHECK(ecs_defer_begin(w) == ECS_OK);
    CHECK(ecs_destroy(w, e) == ECS_OK);
    CHECK(ecs_is_alive(w, e));  /* recorded, not yet applied */
    /* e is alive when these are called, dead when they apply */
    ecs_result r1 = ecs_add(w, e, f.unused);
    ecs_result r2 = ecs_set(w, e, f.pos, &(SPos){3, 3});
    ecs_result r3 = ecs_destroy(w, e);
    CHECKF(r1 == ECS_OK || r1 == ECS_ERR_STALE, "%s", ecs_result_str(r1));
    CHECKF(r2 == ECS_OK || r2 == ECS_ERR_STALE, "%s", ecs_result_str(r2));
    CHECKF(r3 == ECS_OK || r3 == ECS_ERR_STALE, "%s", ecs_result_str(r3));
    CHECK(ecs_add(w, f.live[2], f.tag) == ECS_OK);
    CHECK(ecs_defer_end(w) == ECS_OK);
    size_t want = d0 + (r1 == ECS_OK) + (r2 == ECS_OK) + (r3 == ECS_OK);
    CHECK_EQ_INT(ecs_commands_dropped(w), want);
    CHECK(!ecs_is_alive(w, e));
    CHECK_EQ_INT(ecs_count(w), n0 - 1);
    CHECK(ecs_has(w, f.live[2], f.tag));
    CHECK(ecs_destroy(w, e) == ECS_ERR_STALE);
    ecs_world_free(w);
}

/* Pending handles: only their own buffer may use them, never the world directly. */
TEST(stale_pending_handles) {
    fx f;
    FX(f, SK_NEVER);
    ecs_world *w = f.w;
    ecs_commands *c1 = ecs_commands_new(w), *c2 = ecs_commands_new(w);
    REQUIRE(c1 && c2);
    ecs_entity p = ecs_cmd_create(c1);
    REQUIRE(p);
    CHECK(p & PENDING_BIT);
    unsigned long long h0 = test_world_hash(w);
    size_t n0 = ecs_count(w);
    CHECK(!ecs_is_alive(w, p));
    CHECK(!ecs_has(w, p, f.pos) && !ecs_get(w, p, f.pos) && !ecs_get_mut(w, p, f.pos));
    ecs_result r = ecs_add(w, p, f.pos);
    CHECKF(r == ECS_ERR_STALE || r == ECS_ERR_ARG, "immediate add on a pending handle: %s",
           ecs_result_str(r));
    r = ecs_destroy(w, p);
    CHECKF(r == ECS_ERR_STALE || r == ECS_ERR_ARG, "immediate destroy of a pending handle: %s",
           ecs_result_str(r));
    /* c2 has a pending entity of its own at the same position */
    ecs_entity p2 = ecs_cmd_create(c2);
    REQUIRE(p2);
    CHECK(p2 != p);
    CHECK(ecs_cmd_destroy(c2, p2) == ECS_OK);
    CHECK(ecs_cmd_add(c2, p, f.pos) == ECS_ERR_ARG);
    CHECK(ecs_cmd_set(c2, p, f.pos, &(SPos){1, 1}) == ECS_ERR_ARG);
    CHECK(ecs_cmd_remove(c2, p, f.pos) == ECS_ERR_ARG);
    CHECK(ecs_cmd_destroy(c2, p) == ECS_ERR_ARG);
    CHECK(ecs_last_error(w)[0]);
    CHECK(test_world_hash(w) == h0 && ecs_count(w) == n0);
    size_t d0 = ecs_commands_dropped(w);
    CHECK(ecs_commands_apply(w, c2) == ECS_OK);   /* nothing recorded */
    CHECK(test_world_hash(w) == h0 && ecs_count(w) == n0);
    CHECK(ecs_commands_dropped(w) == d0);
    /* a pending handle of c1 that c1 never issued */
    r = ecs_cmd_add(c1, p + 1, f.pos);
    CHECKF(r == ECS_ERR_ARG || r == ECS_ERR_STALE, "unissued pending handle: %s", ecs_result_str(r));
    CHECK(ecs_cmd_set(c1, p, f.pos, &(SPos){4, 4}) == ECS_OK);
    CHECK(ecs_commands_apply(w, c1) == ECS_OK);
    CHECK_EQ_INT(ecs_count(w), n0 + 1);
    CHECK(ecs_commands_dropped(w) == d0);

    /* in defer mode: a pending handle from ecs_cmd_create is foreign */
    CHECK(ecs_defer_begin(w) == ECS_OK);
    ecs_entity q = ecs_cmd_create(c2);
    REQUIRE(q);
    r = ecs_add(w, q, f.pos);
    CHECKF(r == ECS_ERR_ARG || r == ECS_ERR_STALE, "defer-mode add on c2's pending handle: %s",
           ecs_result_str(r));
    CHECK(ecs_defer_end(w) == ECS_OK);
    CHECK_EQ_INT(ecs_count(w), n0 + 1);
    ecs_world_free(w);  /* frees c1 and c2 too */
}

TEST(stale_unknown_ids) {
    fx f;
    FX(f, SK_NEVER);
    ecs_world *w = f.w;
    ecs_entity e = f.live[0];
    unsigned char value[256] = {0};
    const ecs_id bad_ids[3] = {0, ecs_id_count(w) + 1, 0xFFFFFFFFu};
    unsigned long long h0 = test_world_hash(w);
    size_t n0 = ecs_count(w), d0 = ecs_commands_dropped(w);
    CHECK(ecs_id_count(w) >= 4);
    for (int i = 0; i < 3; i++) {
        ecs_id id = bad_ids[i];
        CHECKF(ecs_add(w, e, id) == ECS_ERR_ARG, "add id %u", id);
        CHECK(ecs_last_error(w)[0]);
        CHECKF(ecs_remove(w, e, id) == ECS_ERR_ARG, "remove id %u", id);
        CHECKF(ecs_set(w, e, id, value) == ECS_ERR_ARG, "set id %u", id);
        CHECKF(ecs_set(w, e, id, NULL) == ECS_ERR_ARG, "set id %u NULL", id);
        CHECKF(!ecs_has(w, e, id), "has id %u", id);
        CHECKF(!ecs_get(w, e, id) && !ecs_get_mut(w, e, id), "get id %u", id);
        CHECKF(ecs_id_size(w, id) == 0 && ecs_id_name(w, id) == NULL, "size/name of id %u", id);
        ecs_entity out[3] = {0, 0, 0};
        CHECKF(ecs_create_many(w, 3, &id, 1, out) == ECS_ERR_ARG, "create_many id %u", id);
        ecs_id mixed[2] = {f.pos, id};
        CHECKF(ecs_create_many(w, 3, mixed, 2, out) == ECS_ERR_ARG, "create_many pos+id %u", id);
        ecs_id qid = id ? id : 0xFFFFFFFFu;  /* id 0 would just end the term list */
        CHECKF(!ecs_query_new(w, &(ecs_query_desc){.terms = {{f.pos, ECS_READ, ECS_AND}, {qid, ECS_READ, ECS_AND}}}),
               "query with id %u", qid);
        /* a dead handle and an unknown id: an error either way */
        ecs_result r = ecs_add(w, make_handle(1000, 1), id);
        CHECKF(r == ECS_ERR_ARG || r == ECS_ERR_STALE, "add id %u to a dead handle: %s", id,
               ecs_result_str(r));
        CHECKF(test_world_hash(w) == h0 && ecs_count(w) == n0, "world changed by id %u", id);

        ecs_commands *c = ecs_commands_new(w);
        REQUIRE(c);
        CHECKF(ecs_cmd_add(c, e, id) == ECS_ERR_ARG, "cmd_add id %u", id);
        CHECKF(ecs_cmd_remove(c, e, id) == ECS_ERR_ARG, "cmd_remove id %u", id);
        CHECKF(ecs_cmd_set(c, e, id, value) == ECS_ERR_ARG, "cmd_set id %u", id);
        ecs_entity p = ecs_cmd_create(c);
        CHECK(p != 0);
        CHECKF(ecs_cmd_add(c, p, id) == ECS_ERR_ARG, "cmd_add id %u on pending", id);
        CHECK(ecs_cmd_destroy(c, p) == ECS_OK);  /* so applying leaves no trace */
        CHECK(ecs_commands_apply(w, c) == ECS_OK);
        ecs_commands_free(c);
        CHECKF(test_world_hash(w) == h0 && ecs_count(w) == n0, "world changed by commands with id %u", id);
        CHECK(ecs_commands_dropped(w) == d0);

        CHECK(ecs_defer_begin(w) == ECS_OK);
        CHECKF(ecs_add(w, e, id) == ECS_ERR_ARG, "deferred add id %u", id);
        CHECKF(ecs_remove(w, e, id) == ECS_ERR_ARG, "deferred remove id %u", id);
        CHECKF(ecs_set(w, e, id, value) == ECS_ERR_ARG, "deferred set id %u", id);
        CHECK(ecs_defer_end(w) == ECS_OK);
        CHECKF(test_world_hash(w) == h0 && ecs_count(w) == n0, "world changed in defer mode by id %u", id);
        CHECK(ecs_commands_dropped(w) == d0);
    }
    /* NULL value for a component (not a tag) */
    CHECK(ecs_set(w, e, f.vel, NULL) == ECS_ERR_ARG);
    CHECK(ecs_set(w, f.live[2], f.pos, NULL) == ECS_ERR_ARG);
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    CHECK(ecs_cmd_set(c, e, f.vel, NULL) == ECS_ERR_ARG);
    CHECK(ecs_commands_apply(w, c) == ECS_OK);
    CHECK(test_world_hash(w) == h0 && ecs_count(w) == n0);
    ecs_world_free(w);
}

/* Checks the handles issued so far: every one distinct, generations in range,
   and enough distinct slots for the generations available. */
static int cmp_u64(const void *a, const void *b) {
    ecs_entity x = *(const ecs_entity *)a, y = *(const ecs_entity *)b;
    return x < y ? -1 : x > y;
}
static void check_issued(const ecs_entity *h, size_t n) {
    ecs_entity *s = (ecs_entity *)malloc(n * sizeof *s);
    if (!s) { CHECK(!"malloc"); return; }
    memcpy(s, h, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_u64);
    size_t dup = 0, bad_gen = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && s[i] == s[i - 1]) dup++;
        if (gen_of(s[i]) == 0 || (s[i] >> 32) > GEN_MASK) bad_gen++;
    }
    CHECKF(dup == 0, "%zu duplicate handles among %zu issued", dup, n);
    CHECKF(bad_gen == 0, "%zu handles with generation 0 or out of range", bad_gen);
    uint32_t *ix = (uint32_t *)malloc(n * sizeof *ix);
    if (!ix) { free(s); CHECK(!"malloc"); return; }
    for (size_t i = 0; i < n; i++) ix[i] = idx_of(h[i]);
    for (size_t i = 0; i < n; i++) s[i] = ix[i];
    qsort(s, n, sizeof *s, cmp_u64);
    size_t distinct = n ? 1 : 0, worst = 0, run = 1;
    for (size_t i = 1; i < n; i++) {
        if (s[i] != s[i - 1]) { distinct++; run = 1; } else run++;
        if (run > worst) worst = run;
    }
    size_t need = (size_t)((n + GEN_MASK - 1) / GEN_MASK);
    CHECKF(distinct >= need, "%zu handles over %zu slots, but a slot has only %llu generations", n,
           distinct, (unsigned long long)GEN_MASK);
    CHECKF(worst <= GEN_MASK, "a slot was issued %zu times with %llu generations", worst,
           (unsigned long long)GEN_MASK);
#if ECS_GENERATION_BITS <= 8
    CHECKF(distinct > 1, "slot index never changed over %zu handles", n);
#endif
    free(ix);
    free(s);
}

TEST(stale_generation_cycle) {
    enum { N = 5000, WINDOW = 16 };
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, SPos), tag = ecs_component(w, "STag", 0, 0);
    REQUIRE(pos && tag);
    ecs_entity *h = (ecs_entity *)calloc(N + 1, sizeof *h);
    REQUIRE(h);
    int base = test_g.checks_failed;
    h[0] = ecs_create(w);
    CHECK(h[0] && ecs_set(w, h[0], pos, &(SPos){0, 0}) == ECS_OK);
    size_t n = 1;
    for (int i = 1; i <= N && h[i - 1] && test_g.checks_failed - base < 10; i++) {
        CHECKF(ecs_destroy(w, h[i - 1]) == ECS_OK, "step %d: destroy", i);
        h[i] = ecs_create(w);
        CHECKF(h[i] != 0, "step %d: create failed: %s", i, ecs_last_error(w));
        if (!h[i]) break;
        n = (size_t)i + 1;
        CHECKF(gen_of(h[i]) != 0 && (h[i] >> 32) <= GEN_MASK, "step %d: handle %llx out of range", i,
               (unsigned long long)h[i]);
        CHECK(ecs_set(w, h[i], pos, &(SPos){(float)i, 0}) == ECS_OK);
        CHECK_EQ_INT(ecs_count(w), 1);
        int alive = 0;
        for (int j = 0; j <= i; j++) alive += ecs_is_alive(w, h[j]);
        CHECKF(alive == 1 && ecs_is_alive(w, h[i]), "step %d: %d of %d issued handles alive", i, alive,
               i + 1);
        for (int j = i > WINDOW ? i - WINDOW : 0; j < i; j++) {
            CHECKF(!ecs_get(w, h[j], pos) && !ecs_has(w, h[j], pos) && !ecs_get_mut(w, h[j], pos),
                   "step %d: old handle %d reads", i, j);
            CHECKF(ecs_add(w, h[j], tag) == ECS_ERR_STALE, "step %d: add on old handle %d", i, j);
        }
        const SPos *p = (const SPos *)ecs_get(w, h[i], pos);
        CHECKF(p && p->x == (float)i, "step %d: new entity's value", i);
    }
    /* every old handle, every call */
    int stale_ok = 0;
    for (size_t j = 0; j + 1 < n; j++) {
        stale_ok += !ecs_is_alive(w, h[j]) && !ecs_get(w, h[j], pos) && !ecs_has(w, h[j], pos) &&
                    ecs_add(w, h[j], tag) == ECS_ERR_STALE && ecs_remove(w, h[j], pos) == ECS_ERR_STALE &&
                    ecs_set(w, h[j], pos, &(SPos){1, 1}) == ECS_ERR_STALE &&
                    ecs_destroy(w, h[j]) == ECS_ERR_STALE;
    }
    CHECKF((size_t)stale_ok == n - 1, "%d of %zu old handles fully stale", stale_ok, n - 1);
    CHECK(n == N + 1);
    CHECK(ecs_is_alive(w, h[n - 1]) && ecs_count(w) == 1);
    check_issued(h, n);
    free(h);
    ecs_world_free(w);
}

/* Eight live entities, one destroyed and one created per step, at random. */
TEST(stale_generation_churn) {
    enum { LIVE = 8, STEPS = 12000 };
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, SPos);
    REQUIRE(pos);
    ecs_entity *h = (ecs_entity *)calloc(LIVE + STEPS, sizeof *h);
    REQUIRE(h);
    size_t n = 0;
    ecs_entity cur[LIVE];
    size_t cur_at[LIVE];
    for (int i = 0; i < LIVE; i++) {
        cur[i] = h[n] = ecs_create(w);
        cur_at[i] = n++;
        CHECK(cur[i] && ecs_set(w, cur[i], pos, &(SPos){(float)(n - 1), 0}) == ECS_OK);
    }
    unsigned long long rng = 12345;
    int base = test_g.checks_failed;
    for (int s = 0; s < STEPS && test_g.checks_failed - base < 10; s++) {
        unsigned k = test_below(&rng, LIVE);
        ecs_entity old = cur[k];
        CHECK(ecs_destroy(w, old) == ECS_OK);
        ecs_entity e = ecs_create(w);
        CHECKF(e, "step %d: create", s);
        if (!e) break;
        h[n] = cur[k] = e;
        cur_at[k] = n++;
        CHECK(ecs_set(w, e, pos, &(SPos){(float)(n - 1), 0}) == ECS_OK);
        CHECKF(e != old && !ecs_is_alive(w, old) && !ecs_get(w, old, pos), "step %d", s);
        CHECK(ecs_destroy(w, old) == ECS_ERR_STALE);
        CHECK_EQ_INT(ecs_count(w), LIVE);
    }
    size_t alive = 0;
    for (size_t j = 0; j < n; j++) alive += ecs_is_alive(w, h[j]);
    CHECKF(alive == LIVE, "%zu of %zu issued handles alive", alive, n);
    for (int i = 0; i < LIVE; i++) {
        const SPos *p = (const SPos *)ecs_get(w, cur[i], pos);
        CHECK(p && p->x == (float)cur_at[i]);
    }
    check_issued(h, n);
    free(h);
    ecs_world_free(w);
}

/* Slots freed by destroy and reused by ecs_create_many and by commands. */
TEST(stale_recycled_by_create_many_and_commands) {
    enum { N = 40 };
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id pos = ECS_COMPONENT(w, SPos);
    REQUIRE(pos);
    ecs_entity old[N], fresh[N], all[3 * N];
    for (int i = 0; i < N; i++) {
        old[i] = all[i] = ecs_create(w);
        REQUIRE(old[i]);
        CHECK(ecs_set(w, old[i], pos, &(SPos){1, 1}) == ECS_OK);
    }
    for (int i = 0; i < N; i++) CHECK(ecs_destroy(w, old[i]) == ECS_OK);
    REQUIRE(ecs_create_many(w, N, &pos, 1, fresh) == ECS_OK);
    for (int i = 0; i < N; i++) {
        all[N + i] = fresh[i];
        CHECK(ecs_is_alive(w, fresh[i]) && ecs_has(w, fresh[i], pos));
    }
    for (int j = 0; j < N; j++) {
        CHECK(!ecs_is_alive(w, old[j]) && !ecs_get(w, old[j], pos));
        CHECK(ecs_add(w, old[j], pos) == ECS_ERR_STALE);
    }
    /* destroy via commands, recreate via commands */
    ecs_commands *c = ecs_commands_new(w);
    REQUIRE(c);
    for (int i = 0; i < N; i++) CHECK(ecs_cmd_destroy(c, fresh[i]) == ECS_OK);
    CHECK(ecs_commands_apply(w, c) == ECS_OK);
    CHECK_EQ_INT(ecs_count(w), 0);
    for (int i = 0; i < N; i++) {
        ecs_entity p = ecs_cmd_create(c);
        CHECK(p && ecs_cmd_set(c, p, pos, &(SPos){2, 2}) == ECS_OK);
    }
    CHECK(ecs_commands_apply(w, c) == ECS_OK);
    CHECK_EQ_INT(ecs_count(w), N);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{pos, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    int k = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
        for (int i = 0; i < it.count && k < N; i++) all[2 * N + k++] = it.entities[i];
    CHECK_EQ_INT(k, N);
    for (int j = 0; j < 2 * N; j++) {
        CHECK(!ecs_is_alive(w, all[j]) && !ecs_has(w, all[j], pos));
        CHECK(ecs_destroy(w, all[j]) == ECS_ERR_STALE);
    }
    check_issued(all, (size_t)(2 * N + k));
    ecs_query_free(q);
    ecs_commands_free(c);
    ecs_world_free(w);
}

void suite_stale(void) {
    RUN(stale_fresh_world_has_no_error);
    RUN(stale_immediate_calls_fail);
    RUN(stale_reads_fail);
    RUN(stale_commands_dropped);
    RUN(stale_defer_calls);
    RUN(stale_commands_target_dies_before_apply);
    RUN(stale_defer_target_dies_in_block);
    RUN(stale_pending_handles);
    RUN(stale_unknown_ids);
    RUN(stale_generation_cycle);
    RUN(stale_generation_churn);
    RUN(stale_recycled_by_create_many_and_commands);
}
