/* Randomized differential test.

   About a million random operations (scaled by --scale PCT) run against ecs.h
   and against a plain model of the world kept in this file: per entity an
   alive flag, a bitmask of ids, the value bytes of each component, its parent
   and its children in attach order. Every return value and error code is
   compared, and so is every batch of every query iteration; every
   RT_CHECK_EVERY operations the whole world is compared.

   Hooks: two components have lifecycle hooks and a component and a tag event
   hooks (RT_OWN, RT_PAT, RT_EVENTS). The model predicts the values ctors
   write, and the exact sequence of on_add / on_set / on_remove calls with the
   values they see, immediate or applied from a buffer or defer block (both
   apply in recording order); after every operation the sequences must match
   and constructed - destroyed values must equal the model's live values.
   Values held by buffers are live values too: recording a set of a
   component with lifecycle hooks (into a buffer or a defer block) constructs
   a copy in the buffer (ctor, then copy), destroyed (dtor) once its command
   applies or drops, or when the buffer is freed unapplied. RT_OWN's copies
   are counted as well: one when such a set is recorded, one when it applies
   (or only one, for an immediate ecs_set). RT_OWN owns a malloc'd buffer and
   checks in every hook that its value was constructed and not destroyed
   since, so ASan sees a double destroy or leak.

   The model never predicts handle values: it maps the handles the library
   returns to model slots. Defer mode's ecs_create gives the final handle.
   Entities that appear at apply time without one (command buffers,
   create_many without out) are named by their first hook call, then through
   a named parent (their place in ecs_children) or child (ecs_get_parent); the
   rest, whole trees of new entities, are found with a full query and matched
   by content, subtrees included; entities with equal content are
   interchangeable, so any match is right.

   The operations: create, create_many (random id lists with duplicates),
   destroy (children first, depth first), add, remove, set, get, get_mut
   (writing through it), has, is_alive, count, set_parent (detaching,
   re-attaching, loops and dead handles that must fail), get_parent and
   children; command buffers (a short one applied at once, a long one filled
   across many operations) with pending handles on either side of set_parent
   and targets destroyed before the command applies; nested defer blocks;
   seven fixed queries with AND/NOT/OPTIONAL terms, iterated plainly, writing
   through fields, in defer mode, left early with ecs_iter_fini, or probed
   with structural calls that must be ECS_ERR_BUSY exactly when they touch the
   locked table (a destroy: anywhere in its subtree); and bad calls
   (destroyed, 0 and forged handles, unknown ids, NULL values, bad query
   terms, another buffer's pending handle) that must fail and change nothing.

   Several independent sub-runs, each on its own world: sub-run 0 uses the
   --seed value (or a fixed default), the others seeds derived from it. A
   mismatch prints the sub-run's seed and op index and stops that sub-run;
   `-f random --seed N` replays it as sub-run 0. */
#include "test.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define RT_RUNS 4
#define RT_OPS 1000000L        /* all sub-runs together, at --scale 100 */
#define RT_CHECK_EVERY 10000
#define RT_DEFAULT_SEED 20251121ull
#define RT_NCOMP 8
#define RT_NTAG 3
#define RT_NID (RT_NCOMP + RT_NTAG)
#define RT_VSTRIDE 160         /* model bytes per entity: every component's value */
#define RT_DEAD_RING 1024      /* recently destroyed handles kept for stale calls */
#define RT_NQ 7
#define RT_DEAD (-1)           /* rt_hget: the handle was destroyed */
#define RT_ABSENT (-2)         /* rt_hget: the library never returned the handle */
#define RT_NONE (-1)           /* no parent, child or sibling slot */

/* Recording a command on a handle that is already dead. The contract lists
   no STALE among the recording errors and drops a command whose target is
   dead when it applies, so it records (ECS_OK) and is dropped at apply. */
#define RT_STALE_RECORD ECS_OK

#if ECS_GENERATION_BITS == 4
#  define RT_BINARY "build/tests_gen4"
#elif defined(__SANITIZE_ADDRESS__)
#  define RT_BINARY "build/tests_asan"
#elif defined(__clang__) && defined(NDEBUG)
#  define RT_BINARY "build/tests_release"
#else
#  define RT_BINARY "build/tests_asan"
#endif

typedef struct { _Alignas(32) unsigned char b[32]; } rt_a32;
/* Owns buf (holding RT_MAGIC while the value is constructed). The model keeps
   b only: where buf points is the library's business. */
typedef struct rt_own { unsigned char *buf; unsigned char b[16]; } rt_own;
#define RT_MAGIC 0x5EC0DE51u
#define RT_OWN_B offsetof(rt_own, b)

/* Model index k (0..RT_NID-1): components first, then tags. */
static const struct rt_comp { const char *name; size_t size, align, off; } rt_comps[RT_NID] = {
    {"rt_u8", 1, 1, 0},     {"rt_odd3", 3, 0, 1},  {"rt_u32", 4, 4, 4},
    {"rt_u64", 8, 8, 8},    {"rt_vec3", 12, 4, 16}, {"rt_own", sizeof(rt_own), _Alignof(rt_own), 28},
    {"rt_64", 64, 8, 52},   {"rt_a32", sizeof(rt_a32), _Alignof(rt_a32), 116},
    {"rt_tag_a", 0, 0, 0},  {"rt_tag_b", 0, 0, 0}, {"rt_tag_c", 0, 0, 0}};
#define RT_A32 7
_Static_assert(116 + sizeof(rt_a32) <= RT_VSTRIDE, "model value block too small");
_Static_assert(28 + sizeof(rt_own) <= 52, "rt_own overlaps rt_64 in the model");

/* Hooked ids: RT_OWN has ctor, dtor, copy and move; RT_PAT a ctor (a
   pattern) and a dtor, with the default move and copy; RT_EVENTS log
   on_add, on_set (components only) and on_remove. */
#define RT_OWN 5
#define RT_PAT 3
#define RT_EVENTS (1u << 2 | 1u << RT_OWN | 1u << 9)
#define RT_LIFE (1u << RT_PAT | 1u << RT_OWN)   /* ids with lifecycle hooks */
enum { RT_EV_ADD, RT_EV_SET, RT_EV_REMOVE };

/* Fixed queries as {model id, oper, access}; query 0 has no terms. */
static const struct { int nt; int t[5][3]; } rt_fixed[RT_NQ] = {
    {0, {{0}}},
    {2, {{2, ECS_AND, ECS_WRITE}, {6, ECS_AND, ECS_READ}}},
    {3, {{4, ECS_AND, ECS_WRITE}, {8, ECS_NOT, 0}, {7, ECS_OPTIONAL, ECS_WRITE}}},
    {5, {{9, ECS_AND, 0}, {0, ECS_OPTIONAL, ECS_WRITE}, {1, ECS_NOT, 0},
         {5, ECS_AND, ECS_WRITE}, {10, ECS_OPTIONAL, 0}}},
    {2, {{3, ECS_OPTIONAL, ECS_WRITE}, {7, ECS_OPTIONAL, ECS_READ}}},
    {2, {{2, ECS_NOT, 0}, {10, ECS_NOT, 0}}},
    {4, {{7, ECS_AND, ECS_WRITE}, {1, ECS_AND, ECS_WRITE}, {8, ECS_AND, 0}, {6, ECS_NOT, 0}}},
};

typedef struct rt_q {
    ecs_query *q;
    int nt, k[ECS_MAX_TERMS], oper[ECS_MAX_TERMS], write[ECS_MAX_TERMS];
    uint16_t all, none;        /* masks of the AND and NOT ids */
} rt_q;

enum { RT_CREATE, RT_DESTROY, RT_ADD, RT_REMOVE, RT_SET, RT_PARENT };

/* One recorded command. The target is a pending index of the list, or a handle
   (looked up when the command applies, so a target that died meanwhile drops);
   so is set_parent's parent (neither: detach). A create through the
   defer-mode ecs_create is named: its handle is the final one. */
typedef struct rt_cmd {
    int kind, k, pend, ppend, named;
    ecs_entity h, ph;
    unsigned char v[64];
} rt_cmd;

/* The model of a command buffer or defer block. */
typedef struct rt_list {
    rt_cmd *c;
    size_t n, cap;
    ecs_entity *ph;            /* pending handles, by pending index */
    int32_t *pslot;            /* their model slots once created by rt_simulate */
    size_t np, pcap;
} rt_list;

typedef struct rt rt;
typedef struct rt_hctx { rt *r; int k; } rt_hctx;   /* a hooked id's ctx */
/* A hook call: the library's by handle, the model's by slot (and handle if
   it had one then); v holds the bytes the model keeps of the value. */
typedef struct rt_ev { ecs_entity e; uint32_t s; int k, kind; unsigned char v[16]; } rt_ev;
typedef struct rt_log { rt_ev *ev; size_t n, cap; } rt_log;

struct rt {
    ecs_world *w;
    unsigned long long rng, seed;
    int run;
    long op, nops;
    jmp_buf jb;
    ecs_id id[RT_NID];
    rt_q q[RT_NQ];
    /* model slots */
    ecs_entity *hnd;           /* 0 while unnamed: created at apply time, not yet found */
    uint16_t *mask;
    unsigned char *alive, *val;
    uint32_t *livepos, *stamp, *live, *freel, *grave, *unnamed;
    uint32_t cap, nslots, nlive, nfree, ngrave, nunnamed, stamp_now;
    int32_t *par, *kid0, *kidn, *sibn, *sibp;   /* parent, first and last child, siblings */
    int in_sim;                /* slots killed now go to grave, reused after rt_settle */
    /* every handle ever returned -> model slot, or RT_DEAD */
    uint64_t *hk;
    int32_t *hv;
    size_t hcap, hn;
    ecs_entity dead[RT_DEAD_RING];
    uint32_t ndead, deadpos;
    size_t dropped;            /* expected ecs_commands_dropped */
    long target;               /* live entity count the op mix steers towards */
    int in_defer;
    ecs_commands *cbs, *cbl;   /* a reused short buffer; a long-lived one */
    rt_list Ls, Ll, Ld, Lq, Lp;
    unsigned char scribble[64];
    ecs_entity *scratch, *kids;
    uint32_t *rows;
    size_t scratch_cap, rows_cap, kids_cap;
    /* hooks */
    rt_hctx hc[RT_NID];
    ecs_component_desc desc[RT_NID];
    rt_log got, want;          /* hook calls since the last rt_events_check */
    long made[RT_NID], unmade[RT_NID], copies, want_copies;
    uint32_t nval[RT_NID];     /* the model's live values (or tags) of each id */
    long held[RT_NID];         /* values held by the model lists' unapplied set commands */
    char hook_err[256];        /* the first thing a hook found wrong */
};

/* ---- failure ------------------------------------------------------------- */
#if defined(__GNUC__)
TEST_PRINTF(4, 5)
#endif
static _Noreturn void rt_fail(rt *r, int line, const char *cond, const char *fmt, ...) {
    va_list ap;
    test_g.checks_failed++;
    fprintf(stderr, "  tests/test_random.c:%d: sub-run %d (seed %llu), op %ld: CHECK(%s) failed: ",
            line, r->run, r->seed, r->op, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  last error: \"%s\"\n  replay: %s -f random --seed %llu",
            r->w ? ecs_last_error(r->w) : "", RT_BINARY, r->seed);
    if (test_g.scale_pct != 100) fprintf(stderr, " --scale %ld", test_g.scale_pct);
    fputc('\n', stderr);
    longjmp(r->jb, 1);
}
#define RT_EXPECT(cond, ...) do { if (!(cond)) rt_fail(r, __LINE__, #cond, __VA_ARGS__); } while (0)
#define RT_H(e) ((unsigned long long)(e))

/* ---- small helpers ------------------------------------------------------- */
static void *rt_grow(void *p, size_t n, size_t size) {
    void *q = realloc(p, n * size);
    if (!q) { fprintf(stderr, "test_random: out of memory\n"); abort(); }
    return q;
}
static unsigned rt_below(rt *r, unsigned n) { return n ? test_below(&r->rng, n) : 0; }
static void rt_fill(rt *r, unsigned char *p, size_t n) {
    while (n) {
        unsigned long long x = test_rand(&r->rng);
        for (int i = 0; i < 8 && n; i++, n--) { *p++ = (unsigned char)x; x >>= 8; }
    }
}
static int rt_is_comp(int k) { return k < RT_NCOMP; }
static unsigned char *rt_val(rt *r, uint32_t s, int k) {
    return r->val + (size_t)s * RT_VSTRIDE + rt_comps[k].off;
}
static uint32_t rt_any_live(rt *r) { return r->live[rt_below(r, r->nlive)]; }
static ecs_id rt_bad_id(rt *r) { return rt_below(r, 2) ? 0 : ecs_id_count(r->w) + 5; }
static void rt_has_error_text(rt *r) {
    const char *msg = ecs_last_error(r->w);
    RT_EXPECT(msg && *msg, "a failed call left no ecs_last_error text");
}
static size_t rt_lo(int k) { return k == RT_OWN ? RT_OWN_B : 0; }   /* the model keeps [lo, size) */
/* Random bytes for a value given to ecs_set or ecs_cmd_set. For RT_OWN they
   are not a constructed value: buf gets the 0xDD bytes a dtor leaves, so a
   hook that takes it for one (a dtor or move of a value the buffer did not
   construct) says so instead of following a random pointer. */
static void rt_raw_value(rt *r, int k, unsigned char *v, size_t n) {
    rt_fill(r, v, n);
    if (k == RT_OWN) memset(v, 0xDD, RT_OWN_B);
}
static uint64_t rt_mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

/* ---- hooks: they record what they see and never leave the library early --- */
/* What a ctor writes into a new value v (zeroed before, in the model). */
static void rt_pattern(int k, unsigned char *v) {
    if (k == RT_OWN) for (int j = 0; j < 16; j++) v[RT_OWN_B + (size_t)j] = (unsigned char)(0xC0 + j);
    if (k == RT_PAT) for (int j = 0; j < 8; j++) v[j] = (unsigned char)(0x70 + j);
}
static void rt_ev_bytes(int k, const unsigned char *v, unsigned char out[16]) {
    size_t lo = rt_lo(k), n = rt_comps[k].size - lo;
    memset(out, 0, 16);
    if (v) memcpy(out, v + lo, n < 16 ? n : 16);
}
static void rt_log_push(rt_log *g, const rt_ev *ev) {
    if (g->n == g->cap) { g->cap = g->cap ? g->cap * 2 : 256; g->ev = rt_grow(g->ev, g->cap, sizeof *g->ev); }
    g->ev[g->n++] = *ev;
}
#if defined(__GNUC__)
TEST_PRINTF(2, 3)
#endif
static void rt_hook_fail(rt *r, const char *fmt, ...) {
    va_list ap;
    if (r->hook_err[0]) return;
    va_start(ap, fmt);
    vsnprintf(r->hook_err, sizeof r->hook_err, fmt, ap);
    va_end(ap);
}
/* Constructed and not destroyed: dtor and move leave 0xDD bytes behind. */
static int rt_own_ok(const rt_own *o) {
    uintptr_t poison;
    uint32_t m;
    memset(&poison, 0xDD, sizeof poison);
    if (!o->buf || (uintptr_t)o->buf == poison) return 0;
    memcpy(&m, o->buf, sizeof m);
    return m == RT_MAGIC;
}
static void rt_own_ctor(void *p, int n, void *ctx) {
    rt_hctx *h = (rt_hctx *)ctx;
    rt_own *o = (rt_own *)p;
    const uint32_t m = RT_MAGIC;
    for (int i = 0; i < n; i++) {
        o[i].buf = malloc(sizeof m);
        if (!o[i].buf) { fprintf(stderr, "test_random: out of memory\n"); abort(); }
        memcpy(o[i].buf, &m, sizeof m);
        rt_pattern(RT_OWN, (unsigned char *)&o[i]);
    }
    h->r->made[h->k] += n;
}
static void rt_own_dtor(void *p, int n, void *ctx) {
    rt_hctx *h = (rt_hctx *)ctx;
    rt_own *o = (rt_own *)p;
    for (int i = 0; i < n; i++) {
        if (rt_own_ok(&o[i])) { memset(o[i].buf, 0, sizeof(uint32_t)); free(o[i].buf); }
        else rt_hook_fail(h->r, "dtor of an rt_own value that is not constructed");
        memset(&o[i], 0xDD, sizeof o[i]);
    }
    h->r->unmade[h->k] += n;
}
/* src is any value given to ecs_set or ecs_cmd_set (the test's random
   bytes, any alignment; a recorded one's buf poisoned, see rt_raw_value),
   or when a recorded set applies the copy its buffer holds (a constructed
   rt_own): only its b is taken, as bytes. */
static void rt_own_copy(void *dst, const void *src, int n, void *ctx) {
    rt_hctx *h = (rt_hctx *)ctx;
    rt_own *d = (rt_own *)dst;
    for (int i = 0; i < n; i++) {
        if (!rt_own_ok(&d[i])) rt_hook_fail(h->r, "copy into an rt_own value that is not constructed");
        memcpy(d[i].b, (const unsigned char *)src + (size_t)i * sizeof *d + RT_OWN_B, sizeof d[i].b);
    }
    h->r->copies += n;
}
static void rt_own_move(void *dst, const void *src, int n, void *ctx) {   /* src is left raw */
    rt_hctx *h = (rt_hctx *)ctx;
    rt_own *s = (rt_own *)src;
    for (int i = 0; i < n; i++)
        if (!rt_own_ok(&s[i])) rt_hook_fail(h->r, "move of an rt_own value that is not constructed");
    memcpy(dst, s, (size_t)n * sizeof *s);
    memset(s, 0xDD, (size_t)n * sizeof *s);
}
static void rt_pat_ctor(void *p, int n, void *ctx) {
    rt_hctx *h = (rt_hctx *)ctx;
    for (int i = 0; i < n; i++) rt_pattern(RT_PAT, (unsigned char *)p + (size_t)i * rt_comps[RT_PAT].size);
    h->r->made[h->k] += n;
}
static void rt_pat_dtor(void *p, int n, void *ctx) {
    (void)p;
    rt_hctx *h = (rt_hctx *)ctx;
    h->r->unmade[h->k] += n;
}
static void rt_event(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx, int kind) {
    static const char *const names[] = {"on_add", "on_set", "on_remove"};
    rt_hctx *h = (rt_hctx *)ctx;
    rt *r = h->r;
    int k = h->k;
    rt_ev ev = {e, 0, k, kind, {0}};
    if (id != r->id[k] || !ecs_is_alive(w, e) || !ecs_has(w, e, id))
        rt_hook_fail(r, "%s of id %d on %#llx: another id, or the entity is dead or lacks it",
                     names[kind], k, RT_H(e));
    if ((v != NULL) != rt_is_comp(k))
        rt_hook_fail(r, "%s of id %d on %#llx: value %p", names[kind], k, RT_H(e), v);
    if (k == RT_OWN && v && !rt_own_ok((const rt_own *)v))
        rt_hook_fail(r, "%s of id %d on %#llx: the value is not constructed", names[kind], k, RT_H(e));
    rt_ev_bytes(k, (const unsigned char *)v, ev.v);
    rt_log_push(&r->got, &ev);
}
static void rt_on_add(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    rt_event(w, e, id, v, ctx, RT_EV_ADD);
}
static void rt_on_set(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    rt_event(w, e, id, v, ctx, RT_EV_SET);
}
static void rt_on_remove(ecs_world *w, ecs_entity e, ecs_id id, void *v, void *ctx) {
    rt_event(w, e, id, v, ctx, RT_EV_REMOVE);
}

/* ---- handle map: open addressing, never deletes ------------------------- */
static size_t rt_hmix(uint64_t h) {
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33;
    return (size_t)h;
}
static int32_t rt_hget(const rt *r, ecs_entity h) {
    if (!h || !r->hcap) return RT_ABSENT;
    size_t m = r->hcap - 1;
    for (size_t i = rt_hmix(h) & m; r->hk[i]; i = (i + 1) & m)
        if (r->hk[i] == h) return r->hv[i];
    return RT_ABSENT;
}
static void rt_hput(rt *r, ecs_entity h, int32_t v) {
    if ((r->hn + 1) * 2 > r->hcap) {
        size_t ncap = r->hcap ? r->hcap * 2 : 4096, m = ncap - 1;
        uint64_t *nk = calloc(ncap, sizeof *nk);
        int32_t *nv = malloc(ncap * sizeof *nv);
        if (!nk || !nv) { fprintf(stderr, "test_random: out of memory\n"); abort(); }
        for (size_t i = 0; i < r->hcap; i++) {
            if (!r->hk[i]) continue;
            size_t j = rt_hmix(r->hk[i]) & m;
            while (nk[j]) j = (j + 1) & m;
            nk[j] = r->hk[i]; nv[j] = r->hv[i];
        }
        free(r->hk); free(r->hv);
        r->hk = nk; r->hv = nv; r->hcap = ncap;
    }
    size_t m = r->hcap - 1, i = rt_hmix(h) & m;
    while (r->hk[i] && r->hk[i] != h) i = (i + 1) & m;
    if (!r->hk[i]) { r->hk[i] = h; r->hn++; }
    r->hv[i] = v;
}

/* ---- model entities ------------------------------------------------------ */
static void rt_adopt(rt *r, uint32_t s, ecs_entity h) {
    RT_EXPECT(h != 0, "a new entity has handle 0");
    int32_t v = rt_hget(r, h);
    RT_EXPECT(v != RT_DEAD, "a new entity reuses the handle %#llx of a destroyed one", RT_H(h));
    RT_EXPECT(v == RT_ABSENT, "a new entity has the handle %#llx of a live one", RT_H(h));
    r->hnd[s] = h;
    rt_hput(r, h, (int32_t)s);
}
static void rt_dead_push(rt *r, ecs_entity h) {
    r->dead[r->deadpos] = h;
    r->deadpos = (r->deadpos + 1) % RT_DEAD_RING;
    if (r->ndead < RT_DEAD_RING) r->ndead++;
}
/* Names slot s, made at apply time, after the fact: it may have died there. */
static void rt_name(rt *r, uint32_t s, ecs_entity h) {
    if (r->alive[s]) { rt_adopt(r, s, h); return; }
    RT_EXPECT(h != 0 && rt_hget(r, h) == RT_ABSENT,
              "an entity made and destroyed by one apply had the known handle %#llx", RT_H(h));
    r->hnd[s] = h;
    rt_hput(r, h, RT_DEAD);
    rt_dead_push(r, h);
}
/* A live model entity with no ids; h 0 = unnamed until rt_settle finds it. */
static uint32_t rt_slot_new(rt *r, ecs_entity h) {
    uint32_t s;
    if (r->nfree) s = r->freel[--r->nfree];
    else {
        if (r->nslots == r->cap) {
            uint32_t c = r->cap ? r->cap * 2 : 1024;
            r->hnd = rt_grow(r->hnd, c, sizeof *r->hnd);
            r->mask = rt_grow(r->mask, c, sizeof *r->mask);
            r->alive = rt_grow(r->alive, c, 1);
            r->val = rt_grow(r->val, c, RT_VSTRIDE);
            r->livepos = rt_grow(r->livepos, c, sizeof(uint32_t));
            r->stamp = rt_grow(r->stamp, c, sizeof(uint32_t));
            r->live = rt_grow(r->live, c, sizeof(uint32_t));
            r->freel = rt_grow(r->freel, c, sizeof(uint32_t));
            r->grave = rt_grow(r->grave, c, sizeof(uint32_t));
            r->unnamed = rt_grow(r->unnamed, c, sizeof(uint32_t));
            r->par = rt_grow(r->par, c, sizeof(int32_t));
            r->kid0 = rt_grow(r->kid0, c, sizeof(int32_t));
            r->kidn = rt_grow(r->kidn, c, sizeof(int32_t));
            r->sibn = rt_grow(r->sibn, c, sizeof(int32_t));
            r->sibp = rt_grow(r->sibp, c, sizeof(int32_t));
            r->cap = c;
        }
        s = r->nslots++;
    }
    r->hnd[s] = 0; r->mask[s] = 0; r->alive[s] = 1; r->stamp[s] = 0;
    r->par[s] = r->kid0[s] = r->kidn[s] = r->sibn[s] = r->sibp[s] = RT_NONE;
    r->livepos[s] = r->nlive;
    r->live[r->nlive++] = s;
    if (h) rt_adopt(r, s, h);
    else r->unnamed[r->nunnamed++] = s;
    return s;
}
/* A hook call the library must make now: for slot s, with its value now. */
static void rt_emit(rt *r, uint32_t s, int k, int kind) {
    if (!(RT_EVENTS >> k & 1)) return;
    rt_ev ev = {r->hnd[s], s, k, kind, {0}};
    if (rt_is_comp(k)) rt_ev_bytes(k, rt_val(r, s, k), ev.v);
    rt_log_push(&r->want, &ev);
}
static void rt_unlink(rt *r, uint32_t c) {
    int32_t p = r->par[c];
    if (p == RT_NONE) return;
    if (r->sibp[c] != RT_NONE) r->sibn[r->sibp[c]] = r->sibn[c]; else r->kid0[p] = r->sibn[c];
    if (r->sibn[c] != RT_NONE) r->sibp[r->sibn[c]] = r->sibp[c]; else r->kidn[p] = r->sibp[c];
    r->par[c] = r->sibn[c] = r->sibp[c] = RT_NONE;
}
/* c's parent becomes p (RT_NONE: none), c the last of p's children. */
static void rt_m_parent(rt *r, uint32_t c, int32_t p) {
    rt_unlink(r, c);
    if (p == RT_NONE) return;
    r->par[c] = p;
    r->sibp[c] = r->kidn[p];
    if (r->kidn[p] != RT_NONE) r->sibn[r->kidn[p]] = (int32_t)c; else r->kid0[p] = (int32_t)c;
    r->kidn[p] = (int32_t)c;
}
/* a is s or an ancestor of s: making s a's parent would be a loop. */
static int rt_above(const rt *r, uint32_t a, uint32_t s) {
    for (int32_t x = (int32_t)s; x != RT_NONE; x = r->par[x]) if (x == (int32_t)a) return 1;
    return 0;
}
/* One entity goes: on_remove in id order (ids grow with k), then it leaves
   its parent's list (its children are gone by now). */
static void rt_kill(rt *r, uint32_t s) {
    for (int k = 0; k < RT_NID; k++) {
        if (!(r->mask[s] >> k & 1)) continue;
        rt_emit(r, s, k, RT_EV_REMOVE);
        r->nval[k]--;
    }
    rt_unlink(r, s);
    uint32_t p = r->livepos[s], last = r->live[--r->nlive];
    r->live[p] = last; r->livepos[last] = p;
    r->alive[s] = 0;
    if (r->hnd[s]) {
        rt_hput(r, r->hnd[s], RT_DEAD);
        rt_dead_push(r, r->hnd[s]);
    }
    if (r->in_sim) r->grave[r->ngrave++] = s;
    else r->freel[r->nfree++] = s;
}
/* ecs_destroy: the children first, depth first, in attach order. */
static void rt_destroy(rt *r, uint32_t s) {
    while (r->kid0[s] != RT_NONE) rt_destroy(r, (uint32_t)r->kid0[s]);
    rt_kill(r, s);
}
static void rt_m_add(rt *r, uint32_t s, int k) {
    if (r->mask[s] >> k & 1) return;
    r->mask[s] |= (uint16_t)(1u << k);
    r->nval[k]++;
    if (rt_is_comp(k)) {
        memset(rt_val(r, s, k), 0, rt_comps[k].size);
        rt_pattern(k, rt_val(r, s, k));
    }
    rt_emit(r, s, k, RT_EV_ADD);
}
static void rt_m_remove(rt *r, uint32_t s, int k) {
    if (!(r->mask[s] >> k & 1)) return;
    rt_emit(r, s, k, RT_EV_REMOVE);
    r->mask[s] &= (uint16_t)~(1u << k);
    r->nval[k]--;
}
/* ecs_set: a missing id is added first (on_add sees the constructed value). */
static void rt_m_set(rt *r, uint32_t s, int k, const unsigned char *v) {
    rt_m_add(r, s, k);
    if (!rt_is_comp(k)) return;
    memcpy(rt_val(r, s, k), v, rt_comps[k].size);
    r->want_copies += k == RT_OWN;
    rt_emit(r, s, k, RT_EV_SET);
}
/* Random bytes written through a value pointer p, and into the model. */
static void rt_write(rt *r, unsigned char *p, uint32_t s, int k) {
    size_t lo = rt_lo(k), n = rt_comps[k].size - lo;
    rt_fill(r, p + lo, n);
    memcpy(rt_val(r, s, k) + lo, p + lo, n);
}

/* ---- checks against the library ----------------------------------------- */
static void rt_check_ptr(rt *r, const void *p, uint32_t s, int k, const char *what) {
    size_t al = rt_comps[k].align ? rt_comps[k].align : 1;
    RT_EXPECT((uintptr_t)p % al == 0, "%s of id %d at %p is not %zu-byte aligned", what, k, p, al);
    if (k == RT_A32) {
        const rt_a32 *a = (const rt_a32 *)p;   /* a typed access, for UBSan */
        RT_EXPECT(memcmp(a->b, rt_val(r, s, k), sizeof a->b) == 0,
                  "%s of id %d of %#llx differs from the model", what, k, RT_H(r->hnd[s]));
    } else if (k == RT_OWN) {
        const rt_own *o = (const rt_own *)p;
        RT_EXPECT(rt_own_ok(o), "%s of id %d of %#llx is not a constructed value", what, k, RT_H(r->hnd[s]));
        RT_EXPECT(memcmp(o->b, rt_val(r, s, k) + RT_OWN_B, sizeof o->b) == 0,
                  "%s of id %d of %#llx differs from the model", what, k, RT_H(r->hnd[s]));
    } else {
        RT_EXPECT(memcmp(p, rt_val(r, s, k), rt_comps[k].size) == 0,
                  "%s of id %d of %#llx differs from the model", what, k, RT_H(r->hnd[s]));
    }
}
static void rt_check_get(rt *r, uint32_t s, int k) {
    const void *p = ecs_get(r->w, r->hnd[s], r->id[k]);
    if (rt_is_comp(k) && (r->mask[s] >> k & 1)) {
        RT_EXPECT(p != NULL, "ecs_get(%#llx, id %d) is NULL; the model has it", RT_H(r->hnd[s]), k);
        rt_check_ptr(r, p, s, k, "ecs_get");
    } else {
        RT_EXPECT(p == NULL, "ecs_get(%#llx, id %d) is not NULL (model mask %#x)",
                  RT_H(r->hnd[s]), k, r->mask[s]);
    }
}
static void rt_kids_reserve(rt *r, size_t n) {
    if (n > r->kids_cap) { r->kids_cap = n * 2; r->kids = rt_grow(r->kids, r->kids_cap, sizeof *r->kids); }
}
/* s's parent, and its children in attach order, sometimes into a short out. */
static void rt_check_rel(rt *r, uint32_t s) {
    ecs_entity e = r->hnd[s], p = ecs_get_parent(r->w, e);
    ecs_entity want = r->par[s] == RT_NONE ? 0 : r->hnd[r->par[s]];
    RT_EXPECT(p == want, "ecs_get_parent(%#llx) = %#llx, the model has %#llx", RT_H(e), RT_H(p), RT_H(want));
    size_t n = 0, i = 0;
    for (int32_t c = r->kid0[s]; c != RT_NONE; c = r->sibn[c]) n++;
    rt_kids_reserve(r, n + 1);
    size_t cap = n && rt_below(r, 4) == 0 ? rt_below(r, (unsigned)n) : n;
    r->kids[cap] = ~(ecs_entity)0;
    size_t got = ecs_children(r->w, e, r->kids, cap);
    RT_EXPECT(got == n, "ecs_children(%#llx) = %zu, the model has %zu", RT_H(e), got, n);
    RT_EXPECT(r->kids[cap] == ~(ecs_entity)0, "ecs_children(%#llx) wrote past cap %zu", RT_H(e), cap);
    for (int32_t c = r->kid0[s]; c != RT_NONE && i < cap; c = r->sibn[c], i++)
        RT_EXPECT(r->kids[i] == r->hnd[c], "child %zu of %#llx is %#llx, the model has %#llx", i, RT_H(e),
                  RT_H(r->kids[i]), RT_H(r->hnd[c]));
}
static void rt_check_ent(rt *r, uint32_t s) {
    ecs_entity e = r->hnd[s];
    RT_EXPECT(ecs_is_alive(r->w, e), "live entity %#llx is not alive", RT_H(e));
    for (int k = 0; k < RT_NID; k++) {
        int has = ecs_has(r->w, e, r->id[k]);
        RT_EXPECT(has == (r->mask[s] >> k & 1), "ecs_has(%#llx, id %d) = %d (model mask %#x)",
                  RT_H(e), k, has, r->mask[s]);
        rt_check_get(r, s, k);
    }
    rt_check_rel(r, s);
}
static void rt_check_dead(rt *r, ecs_entity e) {
    RT_EXPECT(!ecs_is_alive(r->w, e), "destroyed handle %#llx is alive", RT_H(e));
    int k = (int)rt_below(r, RT_NID);
    RT_EXPECT(!ecs_has(r->w, e, r->id[k]), "ecs_has on destroyed %#llx is true", RT_H(e));
    RT_EXPECT(ecs_get(r->w, e, r->id[k]) == NULL, "ecs_get on destroyed %#llx", RT_H(e));
    RT_EXPECT(ecs_get_parent(r->w, e) == 0 && ecs_children(r->w, e, NULL, 0) == 0,
              "destroyed %#llx has a parent or children", RT_H(e));
}
/* The hook calls since the last check against the model's, in order
   (naming entities made at apply time by their first call), and the value
   counts: constructed - destroyed = live, one copy per set of RT_OWN. */
static void rt_events_check(rt *r) {
    static const char *const names[] = {"on_add", "on_set", "on_remove"};
    RT_EXPECT(!r->hook_err[0], "a hook saw %s", r->hook_err);
    for (size_t i = 0; i < r->got.n && i < r->want.n; i++) {
        const rt_ev *a = &r->got.ev[i], *b = &r->want.ev[i];
        ecs_entity h = b->e ? b->e : r->hnd[b->s];
        RT_EXPECT(a->k == b->k && a->kind == b->kind && (!h || a->e == h),
                  "hook call %zu is %s of id %d on %#llx, the model expects %s of id %d on %#llx", i,
                  names[a->kind], a->k, RT_H(a->e), names[b->kind], b->k, RT_H(h));
        if (!h) rt_name(r, b->s, a->e);
        RT_EXPECT(!memcmp(a->v, b->v, sizeof a->v), "hook call %zu (%s of id %d on %#llx) saw a value "
                  "that differs from the model", i, names[a->kind], a->k, RT_H(a->e));
    }
    RT_EXPECT(r->got.n == r->want.n, "%zu hook calls, the model expects %zu", r->got.n, r->want.n);
    r->got.n = r->want.n = 0;
    static const int life[2] = {RT_PAT, RT_OWN};
    for (int i = 0; i < 2; i++)
        RT_EXPECT(r->made[life[i]] - r->unmade[life[i]] == (long)r->nval[life[i]] + r->held[life[i]],
                  "id %d: %ld values constructed, %ld destroyed, the model has %u live in entities and "
                  "%ld held by command buffers", life[i], r->made[life[i]], r->unmade[life[i]],
                  r->nval[life[i]], r->held[life[i]]);
    RT_EXPECT(r->copies == r->want_copies, "%ld copies of rt_own values, the model expects %ld (one per "
              "set applied, one per set of it recorded)", r->copies, r->want_copies);
}
static void rt_check_count(rt *r) {
    size_t n = ecs_count(r->w);
    RT_EXPECT(n == r->nlive, "ecs_count = %zu, model %u", n, r->nlive);
}
static void rt_check_dropped(rt *r) {
    size_t d = ecs_commands_dropped(r->w);
    RT_EXPECT(d == r->dropped, "ecs_commands_dropped = %zu, model %zu", d, r->dropped);
}

/* ---- command lists ------------------------------------------------------- */
static void rt_list_clear(rt_list *L) { L->n = 0; L->np = 0; }
static void rt_list_push(rt_list *L, const rt_cmd *c) {
    if (L->n == L->cap) { L->cap = L->cap ? L->cap * 2 : 32; L->c = rt_grow(L->c, L->cap, sizeof *L->c); }
    L->c[L->n++] = *c;
}
static int rt_list_pend(rt_list *L, ecs_entity p) {
    if (L->np == L->pcap) {
        L->pcap = L->pcap ? L->pcap * 2 : 16;
        L->ph = rt_grow(L->ph, L->pcap, sizeof *L->ph);
        L->pslot = rt_grow(L->pslot, L->pcap, sizeof *L->pslot);
    }
    L->ph[L->np] = p;
    L->pslot[L->np] = -1;
    return (int)L->np++;
}
static void rt_list_free(rt_list *L) { free(L->c); free(L->ph); free(L->pslot); }
/* A set of a component with lifecycle hooks: its buffer holds a constructed
   copy of the value from recording until the command applies or drops. */
static int rt_holds(const rt_cmd *c) { return c->kind == RT_SET && (RT_LIFE >> c->k & 1); }
/* c was recorded in L: a held value is constructed and copied into (ctor,
   copy) at once. */
static void rt_list_record(rt *r, rt_list *L, const rt_cmd *c) {
    rt_list_push(L, c);
    if (!rt_holds(c)) return;
    r->held[c->k]++;
    r->want_copies += c->k == RT_OWN;
}
/* L's buffer was freed unapplied: what it held is destroyed. */
static void rt_list_discard(rt *r, rt_list *L) {
    for (size_t i = 0; i < L->n; i++) if (rt_holds(&L->c[i])) r->held[L->c[i].k]--;
    rt_list_clear(L);
}

/* Applies commands [from, to) of L to the model; returns how many drop. A
   set's held value is destroyed after it applies, or when it drops. */
static size_t rt_simulate(rt *r, rt_list *L, size_t from, size_t to) {
    size_t dropped = 0;
    r->in_sim = 1;
    for (size_t i = from; i < to; i++) {
        const rt_cmd *c = &L->c[i];
        if (c->kind == RT_CREATE) {
            L->pslot[c->pend] = (int32_t)rt_slot_new(r, c->named ? L->ph[c->pend] : 0);
            continue;
        }
        if (rt_holds(c)) r->held[c->k]--;
        int32_t s = c->pend >= 0 ? L->pslot[c->pend] : rt_hget(r, c->h);
        if (s < 0 || !r->alive[s]) { dropped++; continue; }
        switch (c->kind) {
        case RT_DESTROY: rt_destroy(r, (uint32_t)s); break;
        case RT_ADD: rt_m_add(r, (uint32_t)s, c->k); break;
        case RT_REMOVE: rt_m_remove(r, (uint32_t)s, c->k); break;
        case RT_PARENT: {   /* dropped if the parent is dead or it would make a loop */
            int32_t p = c->ppend >= 0 ? L->pslot[c->ppend] : c->ph ? rt_hget(r, c->ph) : RT_NONE;
            if ((c->ppend >= 0 || c->ph) && (p < 0 || !r->alive[p])) dropped++;
            else if (p != RT_NONE && rt_above(r, (uint32_t)s, (uint32_t)p)) dropped++;
            else rt_m_parent(r, (uint32_t)s, p);
            break;
        }
        default: rt_m_set(r, (uint32_t)s, c->k, c->v); break;
        }
    }
    r->in_sim = 0;
    return dropped;
}

static void rt_scratch_push(rt *r, size_t *n, ecs_entity e) {
    if (*n == r->scratch_cap) {
        r->scratch_cap = r->scratch_cap ? r->scratch_cap * 2 : 256;
        r->scratch = rt_grow(r->scratch, r->scratch_cap, sizeof *r->scratch);
    }
    r->scratch[(*n)++] = e;
}

/* The handle of s from its named parent p's ecs_children. */
static ecs_entity rt_child_handle(rt *r, uint32_t p, uint32_t s) {
    size_t n = 0, at = 0;
    for (int32_t c = r->kid0[p]; c != RT_NONE; c = r->sibn[c], n++) if (c == (int32_t)s) at = n;
    rt_kids_reserve(r, n);
    size_t got = ecs_children(r->w, r->hnd[p], r->kids, n);
    RT_EXPECT(got == n, "ecs_children(%#llx) = %zu after an apply, the model has %zu", RT_H(r->hnd[p]), got, n);
    return r->kids[at];
}
/* Names unnamed live slots through a named parent or child, until no more
   can be; returns how many are left (whole trees of new entities). */
static uint32_t rt_name_by_relatives(rt *r) {
    uint32_t left;
    int named;
    do {
        named = 0;
        left = 0;
        for (uint32_t i = 0; i < r->nunnamed; i++) {
            uint32_t s = r->unnamed[i];
            if (!r->alive[s] || r->hnd[s]) continue;
            ecs_entity h = 0;
            if (r->par[s] != RT_NONE && r->hnd[r->par[s]]) h = rt_child_handle(r, (uint32_t)r->par[s], s);
            for (int32_t c = r->kid0[s]; !h && c != RT_NONE; c = r->sibn[c]) {
                if (!r->hnd[c]) continue;
                h = ecs_get_parent(r->w, r->hnd[c]);
                RT_EXPECT(h != 0, "%#llx has no parent; the model's is a new entity", RT_H(r->hnd[c]));
            }
            if (h) { rt_name(r, s, h); named = 1; }
            else left++;
        }
    } while (named && left);
    return left;
}
/* A hash of the subtree of s (masks, kept value bytes, children in order),
   in the model and in the library (r->kids as a stack from base). */
static uint64_t rt_tree_model(rt *r, uint32_t s) {
    uint64_t h = rt_mix(1469598103934665603ull, r->mask[s]), n = 0;
    for (int k = 0; k < RT_NCOMP; k++)
        if (r->mask[s] >> k & 1)
            for (size_t b = rt_lo(k); b < rt_comps[k].size; b++) h = rt_mix(h, rt_val(r, s, k)[b]);
    for (int32_t c = r->kid0[s]; c != RT_NONE; c = r->sibn[c], n++) h = rt_mix(h, rt_tree_model(r, (uint32_t)c));
    return rt_mix(h, n);
}
static uint64_t rt_tree_lib(rt *r, ecs_entity e, size_t base) {
    RT_EXPECT(base <= r->nlive, "the children of new entity %#llx make a loop", RT_H(e));
    uint16_t m = 0;
    for (int k = 0; k < RT_NID; k++) if (ecs_has(r->w, e, r->id[k])) m |= (uint16_t)(1u << k);
    uint64_t h = rt_mix(1469598103934665603ull, m);
    for (int k = 0; k < RT_NCOMP; k++) {
        if (!(m >> k & 1)) continue;
        const unsigned char *p = (const unsigned char *)ecs_get(r->w, e, r->id[k]);
        RT_EXPECT(p != NULL, "ecs_get(%#llx, id %d) is NULL; ecs_has says it has it", RT_H(e), k);
        for (size_t b = rt_lo(k); b < rt_comps[k].size; b++) h = rt_mix(h, p[b]);
    }
    size_t n = ecs_children(r->w, e, NULL, 0);
    rt_kids_reserve(r, base + n + 1);
    ecs_children(r->w, e, r->kids + base, n);
    for (size_t i = 0; i < n; i++) h = rt_mix(h, rt_tree_lib(r, r->kids[base + i], base + n));
    return rt_mix(h, n);
}

/* Names the model slots made at apply time: by their hook calls, their
   relatives, and the rest by content, tree by tree, found with a full query. */
static void rt_settle(rt *r) {
    rt_events_check(r);
    uint32_t want = rt_name_by_relatives(r);
    if (want) {
        size_t nu = 0;
        for (ecs_iter it = ecs_query_iter(r->w, r->q[0].q); ecs_query_next(&it);) {
            for (int i = 0; i < it.count; i++) {
                int32_t v = rt_hget(r, it.entities[i]);
                RT_EXPECT(v != RT_DEAD, "destroyed handle %#llx is alive again", RT_H(it.entities[i]));
                if (v == RT_ABSENT) rt_scratch_push(r, &nu, it.entities[i]);
            }
        }
        RT_EXPECT(nu == want, "%zu new entities appeared unnamed, the model expects %u", nu, want);
        for (size_t j = 0; j < nu; j++) {
            ecs_entity e = r->scratch[j];
            if (ecs_get_parent(r->w, e)) continue;   /* named from its root below */
            uint64_t th = rt_tree_lib(r, e, 0);
            uint32_t found = UINT32_MAX;
            for (uint32_t i = 0; i < r->nunnamed && found == UINT32_MAX; i++) {
                uint32_t s = r->unnamed[i];
                if (r->alive[s] && !r->hnd[s] && r->par[s] == RT_NONE && rt_tree_model(r, s) == th) found = s;
            }
            RT_EXPECT(found != UINT32_MAX, "new entity %#llx (with its children) matches none of the "
                      "model's new entities", RT_H(e));
            rt_adopt(r, found, e);
        }
        want = rt_name_by_relatives(r);
        RT_EXPECT(want == 0, "%u of the model's new entities match no new entity", want);
    }
    r->nunnamed = 0;
    while (r->ngrave) r->freel[r->nfree++] = r->grave[--r->ngrave];
}

/* ---- recording ----------------------------------------------------------- */
/* A target for a recorded command: a pending handle of L, a target L already
   destroys, or a live entity. */
static int rt_pick_target(rt *r, rt_list *L, int *pend, ecs_entity *h) {
    unsigned c = rt_below(r, 10);
    *pend = -1; *h = 0;
    if (c < 3 && L->np) { *pend = (int)rt_below(r, (unsigned)L->np); return 1; }
    if (c < 5 && L->n) {
        for (int t = 0; t < 4; t++) {
            const rt_cmd *d = &L->c[rt_below(r, (unsigned)L->n)];
            if (d->kind == RT_DESTROY) { *pend = d->pend; *h = d->h; return 1; }
        }
    }
    if (r->nlive) { *h = r->hnd[rt_any_live(r)]; return 1; }
    if (L->np) { *pend = (int)rt_below(r, (unsigned)L->np); return 1; }
    return 0;
}

/* A random proper descendant of s, which has children. */
static uint32_t rt_desc(rt *r, uint32_t s) {
    uint32_t d = s;
    do {
        int32_t c = r->kid0[d];
        for (unsigned n = rt_below(r, 4); n && r->sibn[c] != RT_NONE; n--) c = r->sibn[c];
        d = (uint32_t)c;
    } while (r->kid0[d] != RT_NONE && rt_below(r, 2));
    return d;
}

/* The parent of a recorded set_parent: none (detach), a pending handle of L,
   a dead entity, the child itself or one of its descendants (loops, dropped
   if they still are when applied), or a live entity. */
static void rt_pick_parent(rt *r, const rt_list *L, rt_cmd *cmd) {
    unsigned x = rt_below(r, 20);
    int32_t cs = cmd->pend < 0 ? rt_hget(r, cmd->h) : RT_NONE;
    if (x < 3) return;
    if (x < 8 && L->np) cmd->ppend = (int)rt_below(r, (unsigned)L->np);
    else if (x < 9 && r->ndead) cmd->ph = r->dead[rt_below(r, r->ndead)];
    else if (x < 10) { cmd->ppend = cmd->pend; cmd->ph = cmd->h; }
    else if (x < 13 && cs >= 0 && r->kid0[cs] != RT_NONE) cmd->ph = r->hnd[rt_desc(r, (uint32_t)cs)];
    else if (r->nlive) cmd->ph = r->hnd[rt_any_live(r)];
}

/* Records one random command in L: through buffer c, or through the immediate
   API in defer mode when c is NULL. forced != 0 fixes the target. */
static void rt_record(rt *r, rt_list *L, ecs_commands *c, ecs_entity forced) {
    ecs_world *w = r->w;
    rt_cmd cmd;
    unsigned x = rt_below(r, 100);
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = x < 13 ? RT_CREATE : x < 26 ? RT_DESTROY : x < 50 ? RT_ADD : x < 68 ? RT_REMOVE :
               x < 88 ? RT_SET : RT_PARENT;
    cmd.pend = cmd.ppend = -1;
    if (forced) {
        if (cmd.kind == RT_CREATE) cmd.kind = RT_ADD;
        cmd.h = forced;
    } else if (cmd.kind != RT_CREATE && !rt_pick_target(r, L, &cmd.pend, &cmd.h)) {
        cmd.kind = RT_CREATE;
    }
    if (cmd.kind == RT_CREATE) {
        ecs_entity p = c ? ecs_cmd_create(c) : ecs_create(w);
        RT_EXPECT(p != 0, "%s returned 0", c ? "ecs_cmd_create" : "ecs_create (deferred)");
        cmd.pend = rt_list_pend(L, p);
        cmd.named = !c;
        rt_list_record(r, L, &cmd);
        return;
    }
    ecs_entity e = cmd.pend >= 0 ? L->ph[cmd.pend] : cmd.h, pe = 0;
    cmd.k = (int)rt_below(r, RT_NID);
    ecs_id id = r->id[cmd.k];
    unsigned char *tmp = r->scribble;
    const void *v = tmp;
    ecs_result res;
    switch (cmd.kind) {
    case RT_DESTROY: res = c ? ecs_cmd_destroy(c, e) : ecs_destroy(w, e); break;
    case RT_ADD: res = c ? ecs_cmd_add(c, e, id) : ecs_add(w, e, id); break;
    case RT_REMOVE: res = c ? ecs_cmd_remove(c, e, id) : ecs_remove(w, e, id); break;
    case RT_PARENT:
        rt_pick_parent(r, L, &cmd);
        pe = cmd.ppend >= 0 ? L->ph[cmd.ppend] : cmd.ph;
        res = c ? ecs_cmd_set_parent(c, e, pe) : ecs_set_parent(w, e, pe);
        break;
    default:
        rt_raw_value(r, cmd.k, tmp, sizeof r->scribble);
        memcpy(cmd.v, tmp, sizeof cmd.v);
        if (!rt_is_comp(cmd.k) && rt_below(r, 2)) v = NULL;
        res = c ? ecs_cmd_set(c, e, id, v) : ecs_set(w, e, id, v);
        memset(tmp, 0xA5, sizeof r->scribble);   /* the value must have been copied */
        break;
    }
    /* the defer-mode set_parent refuses itself as the parent at once; loops
       of more entities depend on what applies before it */
    int dead = (cmd.pend < 0 && rt_hget(r, cmd.h) < 0) || (cmd.ppend < 0 && pe && rt_hget(r, pe) < 0);
    ecs_result want = dead ? (c ? RT_STALE_RECORD : ECS_ERR_STALE) :
                      !c && cmd.kind == RT_PARENT && pe == e ? ECS_ERR_ARG : ECS_OK;
    static const char *const names[] = {"create", "destroy", "add", "remove", "set", "set_parent"};
    RT_EXPECT(res == want, "%s%s(%s %#llx, id %d, parent %#llx) = %s, expected %s",
              c ? "ecs_cmd_" : "deferred ecs_", names[cmd.kind],
              cmd.pend >= 0 ? "pending" : dead ? "dead" : "live", RT_H(e), cmd.k, RT_H(pe),
              ecs_result_str(res), ecs_result_str(want));
    if (res == ECS_OK) rt_list_record(r, L, &cmd);
    else rt_has_error_text(r);
}

/* Recording calls with a bad id or a NULL component value: ECS_ERR_ARG, not
   recorded. Through buffer c, or the defer-mode immediate API when c is NULL. */
static void rt_bad_record(rt *r, ecs_commands *c) {
    if (!r->nlive) return;
    ecs_world *w = r->w;
    ecs_entity e = r->hnd[rt_any_live(r)];
    unsigned char tmp[64] = {0};
    ecs_result res;
    ecs_id bad = rt_bad_id(r);
    const char *what;
    switch (rt_below(r, 4)) {
    case 0: what = "add of an unknown id"; res = c ? ecs_cmd_add(c, e, bad) : ecs_add(w, e, bad); break;
    case 1: what = "remove of an unknown id"; res = c ? ecs_cmd_remove(c, e, bad) : ecs_remove(w, e, bad); break;
    case 2: what = "set of an unknown id"; res = c ? ecs_cmd_set(c, e, bad, tmp) : ecs_set(w, e, bad, tmp); break;
    default: {
        ecs_id id = r->id[rt_below(r, RT_NCOMP)];
        what = "set of a component with a NULL value";
        res = c ? ecs_cmd_set(c, e, id, NULL) : ecs_set(w, e, id, NULL);
        break;
    }
    }
    RT_EXPECT(res == ECS_ERR_ARG, "%s %s = %s, expected ECS_ERR_ARG", c ? "recording" : "deferred",
              what, ecs_result_str(res));
    rt_has_error_text(r);
}

/* After L applied: the parents and children its set_parent commands touched. */
static void rt_check_list_rels(rt *r, const rt_list *L) {
    for (size_t i = 0; i < L->n; i++) {
        const rt_cmd *c = &L->c[i];
        if (c->kind != RT_PARENT) continue;
        int32_t s = c->pend >= 0 ? L->pslot[c->pend] : rt_hget(r, c->h);
        int32_t p = c->ppend >= 0 ? L->pslot[c->ppend] : rt_hget(r, c->ph);
        if (s >= 0 && r->alive[s]) rt_check_rel(r, (uint32_t)s);
        if (p >= 0 && r->alive[p]) rt_check_rel(r, (uint32_t)p);
    }
}

/* Applies c (modelled by L), then checks drops, new entities and the count. */
static void rt_apply(rt *r, ecs_commands *c, rt_list *L) {
    ecs_result res = ecs_commands_apply(r->w, c);
    RT_EXPECT(res == ECS_OK, "ecs_commands_apply = %s", ecs_result_str(res));
    r->dropped += rt_simulate(r, L, 0, L->n);
    rt_settle(r);
    rt_check_list_rels(r, L);
    rt_list_clear(L);
    rt_check_dropped(r);
    rt_check_count(r);
}

/* ---- queries ------------------------------------------------------------- */
static void rt_q_make(rt *r, rt_q *q, int nt, const int (*t)[3]) {
    ecs_query_desc d;
    memset(&d, 0, sizeof d);
    memset(q, 0, sizeof *q);
    q->nt = nt;
    for (int i = 0; i < nt; i++) {
        q->k[i] = t[i][0]; q->oper[i] = t[i][1]; q->write[i] = t[i][2] == ECS_WRITE;
        d.terms[i].id = r->id[t[i][0]];
        d.terms[i].oper = (ecs_oper)t[i][1];
        d.terms[i].access = (ecs_access)t[i][2];
        if (t[i][1] == ECS_AND) q->all |= (uint16_t)(1u << t[i][0]);
        if (t[i][1] == ECS_NOT) q->none |= (uint16_t)(1u << t[i][0]);
    }
    q->q = ecs_query_new(r->w, &d);
    RT_EXPECT(q->q != NULL, "ecs_query_new failed for a valid %d-term query", nt);
}
static int rt_q_match(const rt_q *q, uint16_t m) { return (m & q->all) == q->all && !(m & q->none); }
static uint32_t rt_q_model_count(rt *r, const rt_q *q) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->nlive; i++) n += (uint32_t)rt_q_match(q, r->mask[r->live[i]]);
    return n;
}

enum { RT_QM_PLAIN, RT_QM_WRITE, RT_QM_PROBE, RT_QM_DEFER, RT_QM_BREAK };

/* Whether an entity of s's subtree (which its destroy takes along) has mask bm. */
static int rt_tree_has(const rt *r, uint32_t s, uint16_t bm) {
    if (r->mask[s] == bm) return 1;
    for (int32_t c = r->kid0[s]; c != RT_NONE; c = r->sibn[c])
        if (rt_tree_has(r, (uint32_t)c, bm)) return 1;
    return 0;
}

static void rt_op_set_parent(rt *r);

/* Structural calls while a batch of table bm is out (no defer mode): those
   that touch that table are ECS_ERR_BUSY and change nothing; others apply.
   set_parent changes no table: it works. Returns 1 if the world's structure
   changed (the iteration must stop). */
static int rt_probe(rt *r, uint16_t bm, int count, const uint32_t *slots, ecs_commands **pc) {
    ecs_world *w = r->w;
    uint32_t s = slots[rt_below(r, (unsigned)count)];
    ecs_entity e = r->hnd[s];
    int k = (int)rt_below(r, RT_NID), has = bm >> k & 1, changed = 0;
    unsigned char v[64];
    ecs_result res;
    rt_fill(r, v, sizeof v);
    /* a row of the locked table */
    switch (rt_below(r, 4)) {
    case 0:
        res = ecs_destroy(w, e);
        RT_EXPECT(res == ECS_ERR_BUSY, "ecs_destroy of a row of the iterated table = %s", ecs_result_str(res));
        break;
    case 1:
        res = has ? ecs_remove(w, e, r->id[k]) : ecs_add(w, e, r->id[k]);
        RT_EXPECT(res == ECS_ERR_BUSY, "ecs_%s(id %d) on a row of the iterated table = %s",
                  has ? "remove" : "add", k, ecs_result_str(res));
        break;
    case 2:
        if (!has) {
            res = ecs_set(w, e, r->id[k], v);
            RT_EXPECT(res == ECS_ERR_BUSY, "ecs_set of missing id %d on a row of the iterated table = %s",
                      k, ecs_result_str(res));
        } else if (rt_is_comp(k)) {
            res = ecs_set(w, e, r->id[k], v);
            RT_EXPECT(res == ECS_OK, "ecs_set of present component %d on a row of the iterated table = %s",
                      k, ecs_result_str(res));
            rt_m_set(r, s, k, v);
            rt_check_get(r, s, k);
            return 0;
        }
        break;
    default: break;
    }
    rt_check_ent(r, s);
    if (rt_below(r, 4) == 0) rt_op_set_parent(r);
    /* an entity anywhere: BUSY iff its table or its destination is the locked one
       (or for a destroy, the table of one in its subtree) */
    if (r->nlive && rt_below(r, 2)) {
        uint32_t s2 = rt_any_live(r);
        int k2 = (int)rt_below(r, RT_NID), destroy = rt_below(r, 4) == 0;
        for (int t = 0; t < 32 && !destroy; t++) {   /* prefer one whose step leads into bm */
            uint32_t c = rt_any_live(r);
            uint16_t d = (uint16_t)(r->mask[c] ^ bm);
            if (d && !(d & (d - 1))) {
                s2 = c;
                for (k2 = 0; !(d >> k2 & 1); k2++) {}
                break;
            }
        }
        ecs_entity e2 = r->hnd[s2];
        uint16_t m = r->mask[s2];
        int set = !destroy && !(m >> k2 & 1) && rt_is_comp(k2) && rt_below(r, 2);
        uint16_t dst = (uint16_t)(m ^ (1u << k2));
        int touches = destroy ? rt_tree_has(r, s2, bm) : m == bm || dst == bm;
        if (destroy) res = ecs_destroy(w, e2);
        else if (m >> k2 & 1) res = ecs_remove(w, e2, r->id[k2]);
        else if (set) res = ecs_set(w, e2, r->id[k2], v);
        else res = ecs_add(w, e2, r->id[k2]);
        RT_EXPECT(res == (touches ? ECS_ERR_BUSY : ECS_OK),
                  "%s of id %d on %#llx (mask %#x) while table %#x is iterated = %s",
                  destroy ? "destroy" : "a change", k2, RT_H(e2), m, bm, ecs_result_str(res));
        if (touches) {
            rt_has_error_text(r);
            rt_check_ent(r, s2);
        } else {
            changed = 1;
            if (destroy) rt_destroy(r, s2);
            else if (m >> k2 & 1) rt_m_remove(r, s2, k2);
            else if (set) rt_m_set(r, s2, k2, v);
            else rt_m_add(r, s2, k2);
            if (!destroy) rt_check_ent(r, s2);
        }
    }
    /* create: BUSY iff the locked table is the empty one */
    if (rt_below(r, 4) == 0) {
        ecs_entity c = ecs_create(w);
        if (bm == 0) {
            RT_EXPECT(c == 0, "ecs_create while the empty table is iterated returned %#llx", RT_H(c));
            rt_has_error_text(r);
        } else {
            RT_EXPECT(c != 0, "ecs_create while table %#x is iterated failed", bm);
            rt_slot_new(r, c);
            changed = 1;
        }
    }
    /* a buffer whose second command hits the locked table: apply stops there */
    if (!*pc && r->nlive && rt_below(r, 3) == 0) {
        uint32_t s3 = rt_any_live(r);
        int k3 = (int)rt_below(r, RT_NCOMP);
        if (r->mask[s3] != bm && (r->mask[s3] >> k3 & 1) && s3 != s) {
            rt_list *P = &r->Lp;
            rt_cmd c0, c1, c2;
            memset(&c0, 0, sizeof c0);
            c0.kind = RT_SET; c0.k = k3; c0.pend = -1; c0.h = r->hnd[s3];
            rt_raw_value(r, k3, c0.v, sizeof c0.v);
            c1 = c0; c1.kind = RT_DESTROY; c1.h = e;
            c2 = c0; c2.kind = RT_ADD; c2.k = (int)rt_below(r, RT_NID);
            *pc = ecs_commands_new(w);
            RT_EXPECT(*pc != NULL, "ecs_commands_new failed");
            rt_list_clear(P);
            RT_EXPECT(ecs_cmd_set(*pc, c0.h, r->id[c0.k], c0.v) == ECS_OK, "ecs_cmd_set");
            RT_EXPECT(ecs_cmd_destroy(*pc, c1.h) == ECS_OK, "ecs_cmd_destroy");
            RT_EXPECT(ecs_cmd_add(*pc, c2.h, r->id[c2.k]) == ECS_OK, "ecs_cmd_add");
            rt_list_record(r, P, &c0); rt_list_record(r, P, &c1); rt_list_record(r, P, &c2);
            res = ecs_commands_apply(w, *pc);
            RT_EXPECT(res == ECS_ERR_BUSY, "applying a buffer that destroys a row of the iterated "
                      "table = %s", ecs_result_str(res));
            r->dropped += rt_simulate(r, P, 0, 1);
            rt_check_dropped(r);
            rt_check_ent(r, s3);
            rt_check_ent(r, s);
        }
    }
    return changed;
}

/* Iterates q and checks every batch against the model; see RT_QM_*. */
static void rt_query(rt *r, rt_q *q, int mode) {
    ecs_world *w = r->w;
    uint32_t st = ++r->stamp_now;
    size_t visited = 0;
    int stop = 0, probed = 0, recorded = 0;
    ecs_commands *pc = NULL;
    rt_list *L = &r->Lq;
    if (mode == RT_QM_DEFER) {
        RT_EXPECT(ecs_defer_begin(w) == ECS_OK, "ecs_defer_begin failed");
        r->in_defer++;
        rt_list_clear(L);
    }
    ecs_iter it = ecs_query_iter(w, q->q);
    RT_EXPECT(it.world == w, "it.world is not the world");
    while (ecs_query_next(&it)) {
        RT_EXPECT(it.count >= 0 && it.system == 0, "batch count %d, system %u", it.count, it.system);
        RT_EXPECT(r->in_defer || it.commands == NULL, "it.commands is not NULL outside defer mode");
        if (it.count == 0) continue;
        RT_EXPECT(it.entities != NULL, "a batch of %d rows has no entities", it.count);
        if ((size_t)it.count > r->rows_cap) {
            r->rows_cap = (size_t)it.count * 2;
            r->rows = rt_grow(r->rows, r->rows_cap, sizeof *r->rows);
        }
        int32_t s0 = rt_hget(r, it.entities[0]);
        RT_EXPECT(s0 >= 0, "query visited %s handle %#llx", s0 == RT_DEAD ? "a destroyed" : "an unknown",
                  RT_H(it.entities[0]));
        uint16_t bm = r->mask[s0];
        RT_EXPECT(rt_q_match(q, bm), "batch of mask %#x does not match the query", bm);
        for (int i = 0; i < it.count; i++) {
            ecs_entity e = it.entities[i];
            int32_t s = rt_hget(r, e);
            RT_EXPECT(s >= 0, "query visited %s handle %#llx", s == RT_DEAD ? "a destroyed" : "an unknown",
                      RT_H(e));
            RT_EXPECT(r->stamp[s] != st, "query visited %#llx twice", RT_H(e));
            RT_EXPECT(r->mask[s] == bm, "one batch holds masks %#x and %#x", bm, r->mask[s]);
            r->stamp[s] = st;
            r->rows[i] = (uint32_t)s;
            visited++;
        }
        for (int t = 0; t < q->nt; t++) {
            int k = q->k[t];
            unsigned char *f = ecs_field(&it, t);
            int present = q->oper[t] != ECS_NOT && rt_is_comp(k) && (bm >> k & 1);
            RT_EXPECT(present == (f != NULL), "ecs_field(term %d, id %d, oper %d) is %s for mask %#x",
                      t, k, q->oper[t], f ? "set" : "NULL", bm);
            if (!f) continue;
            size_t sz = rt_comps[k].size;
            for (int i = 0; i < it.count; i++) rt_check_ptr(r, f + (size_t)i * sz, r->rows[i], k, "ecs_field");
            if (mode == RT_QM_WRITE && q->write[t]) {
                for (int i = 0; i < it.count; i++)
                    if (!rt_below(r, 3)) rt_write(r, f + (size_t)i * sz, r->rows[i], k);
            }
        }
        RT_EXPECT(ecs_field(&it, q->nt) == NULL, "ecs_field past the last term is not NULL");
        if (q->nt + 1 < ECS_MAX_TERMS)
            RT_EXPECT(ecs_field(&it, ECS_MAX_TERMS - 1) == NULL, "ecs_field(15) is not NULL");
        if (mode == RT_QM_PROBE && !probed && rt_below(r, 2)) {
            probed = 1;
            stop = rt_probe(r, bm, it.count, r->rows, &pc);
        } else if (mode == RT_QM_DEFER) {
            for (int i = 0; i < it.count && recorded < 24; i++) {
                if (rt_below(r, 6)) continue;
                recorded++;
                unsigned x = rt_below(r, 10);
                if (x < 6) rt_record(r, L, NULL, it.entities[i]);
                else if (x < 7 && it.commands) rt_record(r, L, it.commands, it.entities[i]);
                else if (x < 9) rt_record(r, L, NULL, 0);
                else rt_check_ent(r, r->rows[i]);
            }
        } else if (mode == RT_QM_BREAK && rt_below(r, 2)) {
            int count = it.count;
            ecs_iter_fini(&it);
            stop = 1;
            /* the lock is gone: a row of that table can change structure again */
            uint32_t s = r->rows[rt_below(r, (unsigned)count)];
            int k = (int)rt_below(r, RT_NID);
            int has = r->mask[s] >> k & 1;
            ecs_result res = has ? ecs_remove(w, r->hnd[s], r->id[k]) : ecs_add(w, r->hnd[s], r->id[k]);
            RT_EXPECT(res == ECS_OK, "a structural change after ecs_iter_fini = %s", ecs_result_str(res));
            if (has) rt_m_remove(r, s, k); else rt_m_add(r, s, k);
            rt_check_ent(r, s);
        }
        if (stop) {
            if (mode != RT_QM_BREAK) ecs_iter_fini(&it);
            break;
        }
    }
    if (!stop) {
        uint32_t want = rt_q_model_count(r, q);
        size_t qc = ecs_query_count(w, q->q);
        RT_EXPECT(visited == want, "query visited %zu entities, the model matches %u", visited, want);
        RT_EXPECT(qc == want, "ecs_query_count = %zu, the model matches %u", qc, want);
    }
    if (pc) {
        ecs_result res = ecs_commands_apply(w, pc);
        RT_EXPECT(res == ECS_OK, "resuming a buffer that stopped at a locked table = %s", ecs_result_str(res));
        r->dropped += rt_simulate(r, &r->Lp, 1, r->Lp.n);
        rt_settle(r);
        rt_check_dropped(r);
        ecs_commands_free(pc);
    }
    if (mode == RT_QM_DEFER) {
        rt_check_count(r);   /* nothing applied yet */
        r->in_defer--;
        RT_EXPECT(ecs_defer_end(w) == ECS_OK, "ecs_defer_end failed");
        r->dropped += rt_simulate(r, L, 0, L->n);
        rt_settle(r);
        rt_check_list_rels(r, L);
        rt_check_dropped(r);
    }
    rt_check_count(r);
}

/* ---- operations ---------------------------------------------------------- */
static void rt_op_create(rt *r) {
    ecs_entity e = ecs_create(r->w);
    rt_slot_new(r, e);
    RT_EXPECT(ecs_is_alive(r->w, e), "a new entity %#llx is not alive", RT_H(e));
    rt_check_count(r);
}

static void rt_op_create_many(rt *r) {
    ecs_world *w = r->w;
    ecs_id ids[8];
    int ks[8];
    ecs_entity out[320];
    uint16_t m = 0;
    size_t nid = rt_below(r, 7);
    size_t n = rt_below(r, 8) ? rt_below(r, 17) : rt_below(r, 301);
    int with_out = n > 32 || rt_below(r, 4);
    for (size_t i = 0; i < nid; i++) {
        ks[i] = i && rt_below(r, 4) == 0 ? ks[rt_below(r, (unsigned)i)] : (int)rt_below(r, RT_NID);
        ids[i] = r->id[ks[i]];
        m |= (uint16_t)(1u << ks[i]);
    }
    ecs_result res = ecs_create_many(w, n, nid || rt_below(r, 2) ? ids : NULL, nid, with_out ? out : NULL);
    RT_EXPECT(res == ECS_OK, "ecs_create_many(%zu, %zu ids) = %s", n, nid, ecs_result_str(res));
    for (size_t i = 0; i < n; i++) {
        uint32_t s = rt_slot_new(r, with_out ? out[i] : 0);
        for (int k = 0; k < RT_NID; k++) if (m >> k & 1) rt_m_add(r, s, k);
        if (with_out && rt_below(r, 8) == 0) rt_check_ent(r, s);
    }
    rt_settle(r);
    rt_check_count(r);
}

static void rt_op_destroy(rt *r) {
    uint32_t s = rt_any_live(r);
    ecs_entity e = r->hnd[s];
    int32_t p = r->par[s];
    ecs_result res = ecs_destroy(r->w, e);
    RT_EXPECT(res == ECS_OK, "ecs_destroy(%#llx) = %s", RT_H(e), ecs_result_str(res));
    rt_destroy(r, s);
    rt_check_dead(r, e);
    if (p != RT_NONE) rt_check_rel(r, (uint32_t)p);
    rt_check_count(r);
}

/* ecs_set_parent: detach, re-attach (to the end of the list), a new parent,
   loops (ECS_ERR_ARG) and dead handles (ECS_ERR_STALE) that change nothing. */
static void rt_op_set_parent(rt *r) {
    uint32_t s = rt_any_live(r);
    int32_t p = RT_NONE, old = r->par[s];
    unsigned x = rt_below(r, 20);
    if (x < 2) p = RT_NONE;
    else if (x < 4 && r->kid0[s] != RT_NONE) p = (int32_t)rt_desc(r, s);
    else if (x == 4) p = (int32_t)s;
    else if (x < 7 && old != RT_NONE) p = old;
    else p = (int32_t)rt_any_live(r);
    ecs_entity child = r->hnd[s], parent = p == RT_NONE ? 0 : r->hnd[p];
    ecs_result want = p != RT_NONE && rt_above(r, s, (uint32_t)p) ? ECS_ERR_ARG : ECS_OK;
    if (r->ndead && rt_below(r, 10) == 0) {   /* a dead child or parent */
        ecs_entity d = r->dead[rt_below(r, r->ndead)];
        if (rt_below(r, 2)) child = d; else parent = d;
        want = ECS_ERR_STALE;
    }
    ecs_result res = ecs_set_parent(r->w, child, parent);
    RT_EXPECT(res == want, "ecs_set_parent(%#llx, %#llx) = %s, expected %s", RT_H(child), RT_H(parent),
              ecs_result_str(res), ecs_result_str(want));
    if (res == ECS_OK) rt_m_parent(r, s, p);
    else rt_has_error_text(r);
    rt_check_rel(r, s);
    if (old != RT_NONE) rt_check_rel(r, (uint32_t)old);
    if (p != RT_NONE && p != old) rt_check_rel(r, (uint32_t)p);
}

static void rt_op_change(rt *r, int kind) {
    ecs_world *w = r->w;
    uint32_t s = rt_any_live(r);
    ecs_entity e = r->hnd[s];
    int k = (int)rt_below(r, RT_NID);
    unsigned char v[64];
    ecs_result res;
    if (kind == RT_ADD) {
        res = ecs_add(w, e, r->id[k]);
        rt_m_add(r, s, k);
    } else if (kind == RT_REMOVE) {
        res = ecs_remove(w, e, r->id[k]);
        rt_m_remove(r, s, k);
    } else {
        rt_fill(r, v, sizeof v);
        res = ecs_set(w, e, r->id[k], !rt_is_comp(k) && rt_below(r, 2) ? NULL : v);
        rt_m_set(r, s, k, v);
    }
    RT_EXPECT(res == ECS_OK, "ecs_%s(%#llx, id %d) = %s", kind == RT_ADD ? "add" : kind == RT_REMOVE ?
              "remove" : "set", RT_H(e), k, ecs_result_str(res));
    int has = ecs_has(w, e, r->id[k]);
    RT_EXPECT(has == (kind != RT_REMOVE), "ecs_has after the change = %d", has);
    rt_check_get(r, s, k);
    if (rt_below(r, 16) == 0) rt_check_ent(r, s);
}

static void rt_op_get_mut(rt *r) {
    ecs_world *w = r->w;
    uint32_t s = rt_any_live(r);
    ecs_entity e = r->hnd[s];
    int k = (int)rt_below(r, RT_NID);
    unsigned char *p = ecs_get_mut(w, e, r->id[k]);
    if (rt_is_comp(k) && (r->mask[s] >> k & 1)) {
        RT_EXPECT(p != NULL, "ecs_get_mut(%#llx, id %d) is NULL; the model has it", RT_H(e), k);
        rt_check_ptr(r, p, s, k, "ecs_get_mut");
        rt_write(r, p, s, k);
        rt_check_get(r, s, k);
    } else {
        RT_EXPECT(p == NULL, "ecs_get_mut(%#llx, id %d) is not NULL (model mask %#x)", RT_H(e), k, r->mask[s]);
        int has = ecs_has(w, e, r->id[k]);
        RT_EXPECT(has == (r->mask[s] >> k & 1), "ecs_get_mut changed ecs_has to %d", has);
    }
}

/* Calls that must fail (or answer false/NULL) and change nothing. */
static void rt_op_bad(rt *r) {
    ecs_world *w = r->w;
    unsigned char v[64];
    ecs_result res = ECS_OK;
    int k = (int)rt_below(r, RT_NID);
    unsigned c = rt_below(r, 10);
    rt_fill(r, v, sizeof v);
    if ((c == 0 || c == 6) && !r->ndead) c = 1;
    if ((c >= 3 && c <= 5) && !r->nlive) c = 1;
    switch (c) {
    case 0: case 1: case 2: {   /* a dead handle: destroyed, 0, or never returned */
        ecs_entity e = 0;
        const char *kind = "0";
        if (c == 0) { e = r->dead[rt_below(r, r->ndead)]; kind = "destroyed"; }
        else if (c == 2) {
            kind = "forged";
            if (r->nlive && rt_below(r, 2)) {   /* a live handle with one bit flipped */
                e = r->hnd[rt_any_live(r)] ^ (1ull << (rt_below(r, 2) ? 32 + rt_below(r, 32) : rt_below(r, 12)));
            } else {
                e = (1 + rt_below(r, 8192)) | (test_rand(&r->rng) << 32);
            }
            if (!e || rt_hget(r, e) >= 0) return;
        }
        unsigned op = rt_below(r, 10);
        ecs_entity other = r->nlive ? r->hnd[rt_any_live(r)] : 0;
        switch (op) {
        case 0: res = ecs_destroy(w, e); break;
        case 1: res = ecs_add(w, e, r->id[k]); break;
        case 2: res = ecs_remove(w, e, r->id[k]); break;
        case 3: res = ecs_set(w, e, r->id[k], v); break;
        case 4:   /* as the child or the parent (parent 0 would detach) */
            res = e && other && rt_below(r, 2) ? ecs_set_parent(w, other, e) : ecs_set_parent(w, e, other);
            break;
        case 5: RT_EXPECT(!ecs_has(w, e, r->id[k]), "ecs_has on a %s handle %#llx", kind, RT_H(e)); return;
        case 6: RT_EXPECT(!ecs_get(w, e, r->id[k]), "ecs_get on a %s handle %#llx", kind, RT_H(e)); return;
        case 7: RT_EXPECT(!ecs_get_mut(w, e, r->id[k]), "ecs_get_mut on a %s handle %#llx", kind, RT_H(e)); return;
        case 8:
            RT_EXPECT(!ecs_get_parent(w, e) && !ecs_children(w, e, NULL, 0),
                      "a %s handle %#llx has a parent or children", kind, RT_H(e));
            return;
        default: RT_EXPECT(!ecs_is_alive(w, e), "ecs_is_alive on a %s handle %#llx", kind, RT_H(e)); return;
        }
        RT_EXPECT(res == ECS_ERR_STALE || (e == 0 && res == ECS_ERR_ARG),
                  "call %u on a %s handle %#llx = %s, expected ECS_ERR_STALE", op, kind, RT_H(e),
                  ecs_result_str(res));
        rt_has_error_text(r);
        break;
    }
    case 3: {   /* an unknown id on a live entity */
        uint32_t s = rt_any_live(r);
        ecs_entity e = r->hnd[s];
        ecs_id bad = rt_bad_id(r);
        unsigned op = rt_below(r, 6);
        switch (op) {
        case 0: res = ecs_add(w, e, bad); break;
        case 1: res = ecs_remove(w, e, bad); break;
        case 2: res = ecs_set(w, e, bad, v); break;
        case 3: RT_EXPECT(!ecs_has(w, e, bad), "ecs_has of unknown id %u", bad); break;
        case 4: RT_EXPECT(!ecs_get(w, e, bad), "ecs_get of unknown id %u", bad); break;
        default: RT_EXPECT(!ecs_get_mut(w, e, bad), "ecs_get_mut of unknown id %u", bad); break;
        }
        if (op < 3) {
            RT_EXPECT(res == ECS_ERR_ARG, "call %u with unknown id %u = %s", op, bad, ecs_result_str(res));
            rt_has_error_text(r);
        }
        rt_check_ent(r, s);
        break;
    }
    case 4: {   /* a NULL value for a component */
        uint32_t s = rt_any_live(r);
        int kc = (int)rt_below(r, RT_NCOMP);
        res = ecs_set(w, r->hnd[s], r->id[kc], NULL);
        RT_EXPECT(res == ECS_ERR_ARG, "ecs_set(component %d, NULL) = %s", kc, ecs_result_str(res));
        rt_has_error_text(r);
        rt_check_ent(r, s);
        break;
    }
    case 5: {   /* create_many with an unknown id: all or nothing */
        ecs_id ids[4] = {r->id[k], r->id[rt_below(r, RT_NID)], r->id[rt_below(r, RT_NID)], r->id[0]};
        ecs_entity out[8];
        ids[rt_below(r, 4)] = rt_bad_id(r);
        res = ecs_create_many(w, 1 + rt_below(r, 8), ids, 4, out);
        RT_EXPECT(res == ECS_ERR_ARG, "ecs_create_many with an unknown id = %s", ecs_result_str(res));
        rt_has_error_text(r);
        break;
    }
    case 6: {   /* a destroyed handle and an unknown id together */
        ecs_entity e = r->dead[rt_below(r, r->ndead)];
        res = rt_below(r, 2) ? ecs_add(w, e, rt_bad_id(r)) : ecs_set(w, e, rt_bad_id(r), v);
        RT_EXPECT(res == ECS_ERR_STALE || res == ECS_ERR_ARG, "a dead handle and a bad id = %s",
                  ecs_result_str(res));
        rt_has_error_text(r);
        break;
    }
    case 7: {   /* bad query terms */
        ecs_query_desc d;
        memset(&d, 0, sizeof d);
        d.terms[0].id = r->id[k];
        d.terms[1].id = r->id[rt_below(r, RT_NID)];
        switch (rt_below(r, 3)) {
        case 0: d.terms[1].id = ecs_id_count(w) + 5; break;
        case 1: d.terms[1].oper = (ecs_oper)7; break;
        default: d.terms[1].access = (ecs_access)9; break;
        }
        ecs_query *q = ecs_query_new(w, &d);
        RT_EXPECT(q == NULL, "ecs_query_new accepted a bad term");
        rt_has_error_text(r);
        break;
    }
    case 8: {   /* registration lookups */
        ecs_id bad = ecs_id_count(w) + 5;
        RT_EXPECT(ecs_component(w, rt_comps[k].name, rt_comps[k].size, rt_comps[k].align) == r->id[k],
                  "registering %s again gave another id", rt_comps[k].name);
        RT_EXPECT(ecs_component_init(w, &r->desc[k]) == r->id[k], "registering %s again with its hooks "
                  "gave another id", rt_comps[k].name);
        RT_EXPECT(ecs_component(w, rt_comps[k].name, rt_comps[k].size + 4, 0) == 0,
                  "registering %s with another size did not fail", rt_comps[k].name);
        rt_has_error_text(r);
        RT_EXPECT(ecs_lookup(w, rt_comps[k].name) == r->id[k], "ecs_lookup(%s)", rt_comps[k].name);
        RT_EXPECT(ecs_lookup(w, "rt_no_such_id") == 0, "ecs_lookup of an unknown name");
        RT_EXPECT(ecs_id_size(w, r->id[k]) == rt_comps[k].size, "ecs_id_size(%s)", rt_comps[k].name);
        RT_EXPECT(ecs_id_size(w, bad) == 0 && ecs_id_name(w, bad) == NULL, "size/name of unknown id %u", bad);
        RT_EXPECT(ecs_id_name(w, 0) == NULL, "ecs_id_name(0) is not NULL");
        break;
    }
    default: {   /* recording with a bad id or value, or another buffer's pending handle */
        if (!r->cbl) return;
        if (r->Ll.np && rt_below(r, 2)) {
            ecs_commands *c2 = ecs_commands_new(w);
            RT_EXPECT(c2 != NULL, "ecs_commands_new failed");
            ecs_entity p = r->Ll.ph[rt_below(r, (unsigned)r->Ll.np)];
            res = rt_below(r, 2) ? ecs_cmd_destroy(c2, p) : ecs_cmd_add(c2, p, r->id[k]);
            RT_EXPECT(res == ECS_ERR_ARG, "recording another buffer's pending handle = %s", ecs_result_str(res));
            rt_has_error_text(r);
            ecs_commands_free(c2);
        } else {
            rt_bad_record(r, r->cbl);
        }
        break;
    }
    }
    rt_check_count(r);
}

/* A short buffer: record a random mix, then apply (or sometimes discard). */
static void rt_op_cmds(rt *r) {
    ecs_world *w = r->w;
    if (!r->cbs) {
        r->cbs = ecs_commands_new(w);
        RT_EXPECT(r->cbs != NULL, "ecs_commands_new failed");
    }
    rt_list *L = &r->Ls;
    rt_list_clear(L);
    unsigned n = 1 + rt_below(r, 12);
    for (unsigned i = 0; i < n; i++) {
        unsigned x = rt_below(r, 20);
        if (x == 0) rt_bad_record(r, r->cbs);
        else if (x == 1 && r->ndead) rt_record(r, L, r->cbs, r->dead[rt_below(r, r->ndead)]);
        else if (x == 2 && L->np && r->cbl) {   /* this buffer's pending handle in another buffer */
            ecs_entity p = L->ph[rt_below(r, (unsigned)L->np)], e = r->nlive ? r->hnd[rt_any_live(r)] : p;
            unsigned y = rt_below(r, 3);
            ecs_result res = y == 0 ? ecs_cmd_remove(r->cbl, p, r->id[0]) :
                             y == 1 ? ecs_cmd_set_parent(r->cbl, p, e) : ecs_cmd_set_parent(r->cbl, e, p);
            RT_EXPECT(res == ECS_ERR_ARG, "recording another buffer's pending handle = %s", ecs_result_str(res));
        } else rt_record(r, L, r->cbs, 0);
    }
    if (rt_below(r, 25) == 0) {   /* freed unapplied: nothing happens but held values' dtors */
        ecs_commands_free(r->cbs);
        r->cbs = NULL;
        rt_list_discard(r, L);
        rt_check_count(r);
        return;
    }
    rt_apply(r, r->cbs, L);
    if (rt_below(r, 8) == 0) rt_apply(r, r->cbs, L);   /* applied buffers are empty */
    if (rt_below(r, 4) == 0) { ecs_commands_free(r->cbs); r->cbs = NULL; }
}

static void rt_op_cmd_long(rt *r, int apply) {
    if (!r->cbl) {
        r->cbl = ecs_commands_new(r->w);
        RT_EXPECT(r->cbl != NULL, "ecs_commands_new failed");
        rt_list_clear(&r->Ll);
    }
    if (!apply) {
        unsigned n = 1 + rt_below(r, 3);
        for (unsigned i = 0; i < n; i++) rt_record(r, &r->Ll, r->cbl, 0);
        if (r->Ll.n < 64) return;
    }
    if (rt_below(r, 12) == 0) {
        ecs_commands_free(r->cbl);
        r->cbl = NULL;
        rt_list_discard(r, &r->Ll);
        rt_check_count(r);
        return;
    }
    rt_apply(r, r->cbl, &r->Ll);
}

static void rt_op_defer(rt *r) {
    ecs_world *w = r->w;
    rt_list *L = &r->Ld;
    int depth = 1;
    rt_list_clear(L);
    RT_EXPECT(ecs_defer_begin(w) == ECS_OK, "ecs_defer_begin failed");
    r->in_defer++;
    unsigned n = 1 + rt_below(r, 10);
    for (unsigned i = 0; i < n; i++) {
        unsigned x = rt_below(r, 24);
        if (x < 13) rt_record(r, L, NULL, 0);
        else if (x == 13 && depth < 3) {
            RT_EXPECT(ecs_defer_begin(w) == ECS_OK, "nested ecs_defer_begin failed");
            depth++;
        } else if (x == 14 && depth > 1) {
            RT_EXPECT(ecs_defer_end(w) == ECS_OK, "nested ecs_defer_end failed");
            depth--;
            rt_check_count(r);   /* only the outermost end applies */
        } else if (x == 15 && r->nlive) rt_op_get_mut(r);
        else if (x == 16 && r->nlive) rt_check_ent(r, rt_any_live(r));
        else if (x == 17) rt_bad_record(r, NULL);
        else if (x == 18 && r->ndead) rt_record(r, L, NULL, r->dead[rt_below(r, r->ndead)]);
        else if (x == 19) {
            ecs_commands *c = r->cbl ? r->cbl : ecs_commands_new(w);
            RT_EXPECT(c != NULL, "ecs_commands_new failed");
            ecs_result res = ecs_commands_apply(w, c);
            RT_EXPECT(res == ECS_ERR_BUSY, "ecs_commands_apply in defer mode = %s", ecs_result_str(res));
            if (c != r->cbl) ecs_commands_free(c);
        } else if (x == 20) rt_check_count(r);
        else if (x == 21 && rt_below(r, 3) == 0) rt_query(r, &r->q[rt_below(r, RT_NQ)], RT_QM_PLAIN);
        else if (x == 22 && r->cbl) rt_record(r, &r->Ll, r->cbl, 0);
        else rt_record(r, L, NULL, 0);
    }
    while (depth > 1) {
        RT_EXPECT(ecs_defer_end(w) == ECS_OK, "nested ecs_defer_end failed");
        depth--;
    }
    rt_check_count(r);
    r->in_defer--;
    RT_EXPECT(ecs_defer_end(w) == ECS_OK, "ecs_defer_end failed");
    r->dropped += rt_simulate(r, L, 0, L->n);
    rt_settle(r);
    rt_check_list_rels(r, L);
    rt_check_dropped(r);
    rt_check_count(r);
}

/* Destroys everything from inside a defer-mode iteration: the destroys of
   entities a parent's destroy took along drop. */
static void rt_op_clear(rt *r) {
    ecs_world *w = r->w;
    rt_list *L = &r->Ld;
    rt_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = RT_DESTROY;
    cmd.pend = cmd.ppend = -1;
    rt_list_clear(L);
    RT_EXPECT(ecs_defer_begin(w) == ECS_OK, "ecs_defer_begin failed");
    for (ecs_iter it = ecs_query_iter(w, r->q[0].q); ecs_query_next(&it);) {
        for (int i = 0; i < it.count; i++) {
            ecs_result res = ecs_destroy(w, it.entities[i]);
            RT_EXPECT(res == ECS_OK, "deferred ecs_destroy(%#llx) = %s", RT_H(it.entities[i]), ecs_result_str(res));
            cmd.h = it.entities[i];
            rt_list_push(L, &cmd);
        }
    }
    RT_EXPECT(L->n == r->nlive, "the full query visited %zu entities, the model has %u", L->n, r->nlive);
    RT_EXPECT(ecs_defer_end(w) == ECS_OK, "ecs_defer_end failed");
    r->dropped += rt_simulate(r, L, 0, L->n);
    rt_settle(r);
    RT_EXPECT(r->nlive == 0, "the model has %u entities left", r->nlive);
    rt_check_count(r);
    rt_check_dropped(r);
}

/* A random query made now, over tables that exist already. */
static void rt_random_query(rt *r) {
    int t[ECS_MAX_TERMS][3], nt = (int)rt_below(r, 6);
    uint16_t used = 0;
    for (int i = 0; i < nt; i++) {
        int k;
        do k = (int)rt_below(r, RT_NID); while (used >> k & 1);
        used |= (uint16_t)(1u << k);
        t[i][0] = k;
        t[i][1] = (int)rt_below(r, 3);
        t[i][2] = (int)rt_below(r, 3);
    }
    rt_q q;
    rt_q_make(r, &q, nt, (const int (*)[3])t);
    rt_query(r, &q, (int)rt_below(r, 2));
    ecs_query_free(q.q);
}

static void rt_check_world(rt *r) {
    rt_events_check(r);
    rt_check_count(r);
    rt_check_dropped(r);
    for (uint32_t i = 0; i < r->nlive; i++) rt_check_ent(r, r->live[i]);
    for (uint32_t i = 0; i < r->ndead; i++) rt_check_dead(r, r->dead[i]);
    for (int i = 0; i < RT_NQ; i++) rt_query(r, &r->q[i], RT_QM_PLAIN);
    rt_random_query(r);
}

enum { OP_CREATE, OP_CREATE_MANY, OP_DESTROY, OP_ADD, OP_REMOVE, OP_SET, OP_GET, OP_GET_MUT,
       OP_SET_PARENT, OP_RELS, OP_HAS, OP_ALIVE, OP_COUNT, OP_BAD, OP_CMDS, OP_CMD_LONG,
       OP_CMD_LONG_APPLY, OP_DEFER, OP_QUERY, OP_N };

static void rt_step(rt *r) {
    static const long targets[] = {0, 40, 400, 1200, 2500};
    if (r->op % 20000 == 0) {
        r->target = targets[rt_below(r, 5)];
        if (r->target == 0 && rt_below(r, 2)) rt_op_clear(r);
    }
    int grow = (long)r->nlive < r->target, shrink = (long)r->nlive > r->target;
    /* a destroy takes its subtree along: few of them unless shrinking */
    unsigned wt[OP_N] = {
        [OP_CREATE] = grow ? 150 : 30, [OP_CREATE_MANY] = grow ? 20 : 3, [OP_DESTROY] = shrink ? 150 : 15,
        [OP_ADD] = 120, [OP_REMOVE] = 90, [OP_SET] = 120, [OP_GET] = 80, [OP_GET_MUT] = 60,
        [OP_SET_PARENT] = 50, [OP_RELS] = 20, [OP_HAS] = 50, [OP_ALIVE] = 20, [OP_COUNT] = 10,
        [OP_BAD] = 40, [OP_CMDS] = 15, [OP_CMD_LONG] = 25, [OP_CMD_LONG_APPLY] = 4, [OP_DEFER] = 15,
        [OP_QUERY] = 15};
    unsigned sum = 0, op = 0;
    for (int i = 0; i < OP_N; i++) sum += wt[i];
    unsigned x = rt_below(r, sum);
    while (x >= wt[op]) x -= wt[op++];
    if (!r->nlive && op >= OP_DESTROY && op <= OP_HAS) op = OP_CREATE;
    switch (op) {
    case OP_CREATE: rt_op_create(r); break;
    case OP_CREATE_MANY: rt_op_create_many(r); break;
    case OP_DESTROY: rt_op_destroy(r); break;
    case OP_ADD: rt_op_change(r, RT_ADD); break;
    case OP_REMOVE: rt_op_change(r, RT_REMOVE); break;
    case OP_SET: rt_op_change(r, RT_SET); break;
    case OP_GET: rt_check_get(r, rt_any_live(r), (int)rt_below(r, RT_NID)); break;
    case OP_GET_MUT: rt_op_get_mut(r); break;
    case OP_SET_PARENT: rt_op_set_parent(r); break;
    case OP_RELS: {   /* get_parent and children, more often of a parent */
        uint32_t s = rt_any_live(r);
        rt_check_rel(r, r->par[s] != RT_NONE && rt_below(r, 2) ? (uint32_t)r->par[s] : s);
        break;
    }
    case OP_HAS: {
        uint32_t s = rt_any_live(r);
        int k = (int)rt_below(r, RT_NID), has = ecs_has(r->w, r->hnd[s], r->id[k]);
        RT_EXPECT(has == (r->mask[s] >> k & 1), "ecs_has(%#llx, id %d) = %d (model mask %#x)",
                  RT_H(r->hnd[s]), k, has, r->mask[s]);
        break;
    }
    case OP_ALIVE:
        if (r->nlive && rt_below(r, 2)) {
            ecs_entity e = r->hnd[rt_any_live(r)];
            RT_EXPECT(ecs_is_alive(r->w, e), "live %#llx is not alive", RT_H(e));
        } else if (r->ndead) rt_check_dead(r, r->dead[rt_below(r, r->ndead)]);
        break;
    case OP_COUNT: {
        rt_check_count(r);
        size_t qc = ecs_query_count(r->w, r->q[0].q);
        RT_EXPECT(qc == r->nlive, "ecs_query_count of the full query = %zu, model %u", qc, r->nlive);
        break;
    }
    case OP_BAD: rt_op_bad(r); break;
    case OP_CMDS: rt_op_cmds(r); break;
    case OP_CMD_LONG: rt_op_cmd_long(r, 0); break;
    case OP_CMD_LONG_APPLY: rt_op_cmd_long(r, 1); break;
    case OP_DEFER: rt_op_defer(r); break;
    default: {
        static const int modes[] = {RT_QM_PLAIN, RT_QM_WRITE, RT_QM_WRITE, RT_QM_PROBE, RT_QM_PROBE,
                                    RT_QM_DEFER, RT_QM_DEFER, RT_QM_BREAK};
        rt_query(r, &r->q[rt_below(r, RT_NQ)], modes[rt_below(r, 8)]);
        break;
    }
    }
    rt_events_check(r);
}

static void rt_setup(rt *r) {
    ecs_world *w = r->w;
    RT_EXPECT(w != NULL, "ecs_world_new failed");
    for (int k = 0; k < RT_NID; k++) {
        ecs_component_desc *d = &r->desc[k];
        r->hc[k].r = r;
        r->hc[k].k = k;
        d->name = rt_comps[k].name;
        d->size = rt_comps[k].size;
        d->align = rt_comps[k].align;
        if (k == RT_OWN) {
            d->ctor = rt_own_ctor; d->dtor = rt_own_dtor;
            d->copy = rt_own_copy; d->move = rt_own_move;
        }
        if (k == RT_PAT) { d->ctor = rt_pat_ctor; d->dtor = rt_pat_dtor; }
        if (RT_EVENTS >> k & 1) {
            d->on_add = rt_on_add;
            d->on_remove = rt_on_remove;
            if (rt_is_comp(k)) d->on_set = rt_on_set;
        }
        if (d->ctor || d->on_add) d->ctx = &r->hc[k];
        r->id[k] = d->ctx ? ecs_component_init(w, d)
                          : ecs_component(w, rt_comps[k].name, rt_comps[k].size, rt_comps[k].align);
        RT_EXPECT(r->id[k] != 0, "registering %s failed", rt_comps[k].name);
        /* the model orders on_remove calls of one destroy by k */
        RT_EXPECT(k == 0 || r->id[k] > r->id[k - 1], "ids are not registered in increasing order");
        RT_EXPECT(ecs_id_size(w, r->id[k]) == rt_comps[k].size, "ecs_id_size(%s)", rt_comps[k].name);
        RT_EXPECT(!strcmp(ecs_id_name(w, r->id[k]), rt_comps[k].name), "ecs_id_name(%s)", rt_comps[k].name);
        RT_EXPECT(r->id[k] <= ecs_id_count(w), "id %u above ecs_id_count", r->id[k]);
    }
    for (int i = 0; i < RT_NQ; i++) rt_q_make(r, &r->q[i], rt_fixed[i].nt, rt_fixed[i].t);
}

static void rt_free(rt *r) {
    free(r->hnd); free(r->mask); free(r->alive); free(r->val); free(r->livepos); free(r->stamp);
    free(r->live); free(r->freel); free(r->grave); free(r->unnamed); free(r->hk); free(r->hv);
    free(r->par); free(r->kid0); free(r->kidn); free(r->sibn); free(r->sibp);
    free(r->scratch); free(r->kids); free(r->rows); free(r->got.ev); free(r->want.ev);
    rt_list_free(&r->Ls); rt_list_free(&r->Ll); rt_list_free(&r->Ld); rt_list_free(&r->Lq);
    rt_list_free(&r->Lp);
    free(r);
}

/* ecs_world_free runs on_remove, then dtor, for every live value, and dtor
   for the values its buffers still hold. */
static void rt_check_free(rt *r) {
    static const char *const names[] = {"on_add", "on_set", "on_remove"};
    uint32_t want = 0;
    for (int k = 0; k < RT_NID; k++) if (RT_EVENTS >> k & 1) want += r->nval[k];
    ecs_world_free(r->w);
    r->w = NULL;
    RT_EXPECT(!r->hook_err[0], "a hook saw %s", r->hook_err);
    for (int k = 0; k < RT_NID; k++)
        RT_EXPECT(r->made[k] == r->unmade[k], "id %d: %ld values constructed, %ld destroyed by "
                  "ecs_world_free", k, r->made[k], r->unmade[k]);
    RT_EXPECT(r->got.n == want, "ecs_world_free made %zu hook calls, the model has %u values with "
              "on_remove", r->got.n, want);
    for (size_t i = 0; i < r->got.n; i++) {   /* each live value once, in any order */
        const rt_ev *a = &r->got.ev[i];
        unsigned char v[16];
        int32_t s = rt_hget(r, a->e);
        RT_EXPECT(a->kind == RT_EV_REMOVE && s >= 0 && (r->mask[s] >> a->k & 1), "ecs_world_free "
                  "made %s of id %d on %#llx", names[a->kind], a->k, RT_H(a->e));
        rt_ev_bytes(a->k, rt_is_comp(a->k) ? rt_val(r, (uint32_t)s, a->k) : NULL, v);
        RT_EXPECT(!memcmp(a->v, v, sizeof v), "on_remove of id %d on %#llx in ecs_world_free saw a value "
                  "that differs from the model", a->k, RT_H(a->e));
        r->mask[s] &= (uint16_t)~(1u << a->k);
    }
}

/* One sub-run on its own world; a mismatch longjmps back here. */
static void rt_run(int run, unsigned long long seed, long nops) {
    rt *r = calloc(1, sizeof *r);
    if (!r) { fprintf(stderr, "test_random: out of memory\n"); abort(); }
    r->run = run;
    r->seed = r->rng = seed;
    r->nops = nops;
    r->w = ecs_world_new(NULL);
    if (!setjmp(r->jb)) {
        rt_setup(r);
        for (r->op = 0; r->op < r->nops; r->op++) {
            rt_step(r);
            if ((r->op + 1) % RT_CHECK_EVERY == 0) rt_check_world(r);
        }
        rt_check_world(r);
        if (r->cbl && rt_below(r, 2)) rt_apply(r, r->cbl, &r->Ll);
        /* the world frees the rest: some queries and buffers are left to it */
        ecs_query_free(r->q[RT_NQ - 1].q);
        if (r->cbs && rt_below(r, 2)) ecs_commands_free(r->cbs);
        rt_events_check(r);
        rt_check_free(r);
    }
    if (r->w) ecs_world_free(r->w);
    rt_free(r);
}

TEST(random_differential) {
    unsigned long long base = test_g.seed_given ? test_g.seed : RT_DEFAULT_SEED;
    long total = (long)((double)RT_OPS * (double)test_g.scale_pct / 100.0);
    long per = total / RT_RUNS;
    printf("random: %d sub-runs x %ld ops, seed %llu\n", RT_RUNS, per, base);
    for (int i = 0; i < RT_RUNS; i++) {
        unsigned long long t = base ^ (0x9E3779B97F4A7C15ull * (unsigned long long)i);
        rt_run(i, i ? test_rand(&t) : base, per);
    }
}

void suite_random(void) {
    RUN(random_differential);
}
