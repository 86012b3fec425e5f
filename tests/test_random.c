/* Randomized differential test.

   About a million random operations (scaled by --scale PCT) run against ecs.h
   and against a plain model of the world kept in this file: per entity an
   alive flag, a bitmask of ids and the value bytes of each component. Every
   return value and error code is compared, and so is every batch of every
   query iteration; every RT_CHECK_EVERY operations the whole world is compared.

   The model never predicts handle values: it maps the handles the library
   returns to model slots. Entities that appear at apply time (command buffers,
   defer blocks, create_many without out) are found with a full query and
   matched to the model's new entities by content; entities with equal content
   are interchangeable, so any match is right.

   The operations: create, create_many (random id lists with duplicates),
   destroy, add, remove, set, get, get_mut (writing through it), has,
   is_alive, count; command buffers (a short one applied at once, a long one
   filled across many operations) with pending handles and targets destroyed
   before the command applies; nested defer blocks; seven fixed queries with
   AND/NOT/OPTIONAL terms, iterated plainly, writing through fields, in defer
   mode, left early with ecs_iter_fini, or probed with structural calls that
   must be ECS_ERR_BUSY exactly when they touch the locked table; and bad
   calls (destroyed, 0 and forged handles, unknown ids, NULL values, bad query
   terms, another buffer's pending handle) that must fail and change nothing.

   Several independent sub-runs, each on its own world: sub-run 0 uses the
   --seed value (or a fixed default), the others seeds derived from it. A
   mismatch prints the sub-run's seed and op index and stops that sub-run;
   `-f random --seed N` replays it as sub-run 0. */
#include "test.h"
#include <setjmp.h>
#include <stdarg.h>
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

/* Model index k (0..RT_NID-1): components first, then tags. */
static const struct rt_comp { const char *name; size_t size, align, off; } rt_comps[RT_NID] = {
    {"rt_u8", 1, 1, 0},     {"rt_odd3", 3, 0, 1},  {"rt_u32", 4, 4, 4},
    {"rt_u64", 8, 8, 8},    {"rt_vec3", 12, 4, 16}, {"rt_24", 24, 8, 28},
    {"rt_64", 64, 8, 52},   {"rt_a32", sizeof(rt_a32), _Alignof(rt_a32), 116},
    {"rt_tag_a", 0, 0, 0},  {"rt_tag_b", 0, 0, 0}, {"rt_tag_c", 0, 0, 0}};
#define RT_A32 7
_Static_assert(116 + sizeof(rt_a32) <= RT_VSTRIDE, "model value block too small");

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

enum { RT_CREATE, RT_DESTROY, RT_ADD, RT_REMOVE, RT_SET };

/* One recorded command. The target is a pending index of the list, or a handle
   (looked up when the command applies, so a target that died meanwhile drops). */
typedef struct rt_cmd {
    int kind, k, pend;
    ecs_entity h;
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

typedef struct rt {
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
    ecs_entity *scratch;
    uint32_t *rows;
    size_t scratch_cap, rows_cap;
} rt;

/* ---- failure ------------------------------------------------------------- */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
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
            r->cap = c;
        }
        s = r->nslots++;
    }
    r->hnd[s] = 0; r->mask[s] = 0; r->alive[s] = 1; r->stamp[s] = 0;
    r->livepos[s] = r->nlive;
    r->live[r->nlive++] = s;
    if (h) rt_adopt(r, s, h);
    else r->unnamed[r->nunnamed++] = s;
    return s;
}
static void rt_kill(rt *r, uint32_t s) {
    uint32_t p = r->livepos[s], last = r->live[--r->nlive];
    r->live[p] = last; r->livepos[last] = p;
    r->alive[s] = 0;
    if (r->hnd[s]) {
        rt_hput(r, r->hnd[s], RT_DEAD);
        r->dead[r->deadpos] = r->hnd[s];
        r->deadpos = (r->deadpos + 1) % RT_DEAD_RING;
        if (r->ndead < RT_DEAD_RING) r->ndead++;
    }
    if (r->in_sim) r->grave[r->ngrave++] = s;
    else r->freel[r->nfree++] = s;
}
static void rt_m_add(rt *r, uint32_t s, int k) {
    if (r->mask[s] >> k & 1) return;
    r->mask[s] |= (uint16_t)(1u << k);
    if (rt_is_comp(k)) memset(rt_val(r, s, k), 0, rt_comps[k].size);
}
static void rt_m_remove(rt *r, uint32_t s, int k) { r->mask[s] &= (uint16_t)~(1u << k); }
static void rt_m_set(rt *r, uint32_t s, int k, const unsigned char *v) {
    r->mask[s] |= (uint16_t)(1u << k);
    if (rt_is_comp(k)) memcpy(rt_val(r, s, k), v, rt_comps[k].size);
}

/* ---- checks against the library ----------------------------------------- */
static void rt_check_ptr(rt *r, const void *p, uint32_t s, int k, const char *what) {
    size_t al = rt_comps[k].align ? rt_comps[k].align : 1;
    RT_EXPECT((uintptr_t)p % al == 0, "%s of id %d at %p is not %zu-byte aligned", what, k, p, al);
    if (k == RT_A32) {
        const rt_a32 *a = (const rt_a32 *)p;   /* a typed access, for UBSan */
        RT_EXPECT(memcmp(a->b, rt_val(r, s, k), sizeof a->b) == 0,
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
static void rt_check_ent(rt *r, uint32_t s) {
    ecs_entity e = r->hnd[s];
    RT_EXPECT(ecs_is_alive(r->w, e), "live entity %#llx is not alive", RT_H(e));
    for (int k = 0; k < RT_NID; k++) {
        int has = ecs_has(r->w, e, r->id[k]);
        RT_EXPECT(has == (r->mask[s] >> k & 1), "ecs_has(%#llx, id %d) = %d (model mask %#x)",
                  RT_H(e), k, has, r->mask[s]);
        rt_check_get(r, s, k);
    }
}
static void rt_check_dead(rt *r, ecs_entity e) {
    RT_EXPECT(!ecs_is_alive(r->w, e), "destroyed handle %#llx is alive", RT_H(e));
    int k = (int)rt_below(r, RT_NID);
    RT_EXPECT(!ecs_has(r->w, e, r->id[k]), "ecs_has on destroyed %#llx is true", RT_H(e));
    RT_EXPECT(ecs_get(r->w, e, r->id[k]) == NULL, "ecs_get on destroyed %#llx", RT_H(e));
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

/* Applies commands [from, to) of L to the model; returns how many drop. */
static size_t rt_simulate(rt *r, rt_list *L, size_t from, size_t to) {
    size_t dropped = 0;
    r->in_sim = 1;
    for (size_t i = from; i < to; i++) {
        const rt_cmd *c = &L->c[i];
        if (c->kind == RT_CREATE) { L->pslot[c->pend] = (int32_t)rt_slot_new(r, 0); continue; }
        int32_t s = c->pend >= 0 ? L->pslot[c->pend] : rt_hget(r, c->h);
        if (s < 0 || !r->alive[s]) { dropped++; continue; }
        switch (c->kind) {
        case RT_DESTROY: rt_kill(r, (uint32_t)s); break;
        case RT_ADD: rt_m_add(r, (uint32_t)s, c->k); break;
        case RT_REMOVE: rt_m_remove(r, (uint32_t)s, c->k); break;
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

/* Finds the entities that appeared without a known handle (unnamed model
   slots) with a full query, and matches them to the model by content. */
static void rt_settle(rt *r) {
    uint32_t want = 0;
    for (uint32_t i = 0; i < r->nunnamed; i++) want += r->alive[r->unnamed[i]];
    if (want) {
        size_t nu = 0;
        for (ecs_iter it = ecs_query_iter(r->w, r->q[0].q); ecs_query_next(&it);) {
            for (int i = 0; i < it.count; i++) {
                int32_t v = rt_hget(r, it.entities[i]);
                RT_EXPECT(v != RT_DEAD, "destroyed handle %#llx is alive again", RT_H(it.entities[i]));
                if (v == RT_ABSENT) rt_scratch_push(r, &nu, it.entities[i]);
            }
        }
        RT_EXPECT(nu == want, "%zu new entities appeared, the model expects %u", nu, want);
        for (size_t j = 0; j < nu; j++) {
            ecs_entity e = r->scratch[j];
            uint16_t m = 0;
            for (int k = 0; k < RT_NID; k++)
                if (ecs_has(r->w, e, r->id[k])) m |= (uint16_t)(1u << k);
            uint32_t found = UINT32_MAX;
            for (uint32_t i = 0; i < r->nunnamed && found == UINT32_MAX; i++) {
                uint32_t s = r->unnamed[i];
                if (!r->alive[s] || r->hnd[s] || r->mask[s] != m) continue;
                int same = 1;
                for (int k = 0; k < RT_NCOMP && same; k++) {
                    if (!(m >> k & 1)) continue;
                    const void *p = ecs_get(r->w, e, r->id[k]);
                    same = p && !memcmp(p, rt_val(r, s, k), rt_comps[k].size);
                }
                if (same) found = s;
            }
            RT_EXPECT(found != UINT32_MAX,
                      "new entity %#llx (mask %#x) matches none of the model's new entities",
                      RT_H(e), m);
            rt_adopt(r, found, e);
        }
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

/* Records one random command in L: through buffer c, or through the immediate
   API in defer mode when c is NULL. forced != 0 fixes the target. */
static void rt_record(rt *r, rt_list *L, ecs_commands *c, ecs_entity forced) {
    ecs_world *w = r->w;
    rt_cmd cmd;
    unsigned x = rt_below(r, 100);
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = x < 14 ? RT_CREATE : x < 28 ? RT_DESTROY : x < 55 ? RT_ADD : x < 75 ? RT_REMOVE : RT_SET;
    cmd.pend = -1;
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
        rt_list_push(L, &cmd);
        return;
    }
    ecs_entity e = cmd.pend >= 0 ? L->ph[cmd.pend] : cmd.h;
    cmd.k = (int)rt_below(r, RT_NID);
    ecs_id id = r->id[cmd.k];
    unsigned char *tmp = r->scribble;
    const void *v = tmp;
    ecs_result res;
    switch (cmd.kind) {
    case RT_DESTROY: res = c ? ecs_cmd_destroy(c, e) : ecs_destroy(w, e); break;
    case RT_ADD: res = c ? ecs_cmd_add(c, e, id) : ecs_add(w, e, id); break;
    case RT_REMOVE: res = c ? ecs_cmd_remove(c, e, id) : ecs_remove(w, e, id); break;
    default:
        rt_fill(r, tmp, sizeof r->scribble);
        memcpy(cmd.v, tmp, sizeof cmd.v);
        if (!rt_is_comp(cmd.k) && rt_below(r, 2)) v = NULL;
        res = c ? ecs_cmd_set(c, e, id, v) : ecs_set(w, e, id, v);
        memset(tmp, 0xA5, sizeof r->scribble);   /* the value must have been copied */
        break;
    }
    int dead = cmd.pend < 0 && rt_hget(r, cmd.h) < 0;
    ecs_result want = !dead ? ECS_OK : c ? RT_STALE_RECORD : ECS_ERR_STALE;
    static const char *const names[] = {"create", "destroy", "add", "remove", "set"};
    RT_EXPECT(res == want, "%s%s(%s %#llx, id %d) = %s, expected %s", c ? "ecs_cmd_" : "deferred ecs_",
              names[cmd.kind], cmd.pend >= 0 ? "pending" : dead ? "dead" : "live", RT_H(e), cmd.k,
              ecs_result_str(res), ecs_result_str(want));
    if (res == ECS_OK) rt_list_push(L, &cmd);
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

/* Applies c (modelled by L), then checks drops, new entities and the count. */
static void rt_apply(rt *r, ecs_commands *c, rt_list *L) {
    ecs_result res = ecs_commands_apply(r->w, c);
    RT_EXPECT(res == ECS_OK, "ecs_commands_apply = %s", ecs_result_str(res));
    r->dropped += rt_simulate(r, L, 0, L->n);
    rt_list_clear(L);
    rt_settle(r);
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

/* Structural calls while a batch of table bm is out (no defer mode): those
   that touch that table are ECS_ERR_BUSY and change nothing; others apply.
   Returns 1 if the world's structure changed (the iteration must stop). */
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
    /* an entity anywhere: BUSY iff its table or its destination is the locked one */
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
        int touches = m == bm || (!destroy && dst == bm);
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
            if (destroy) rt_kill(r, s2);
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
            rt_fill(r, c0.v, sizeof c0.v);
            c1 = c0; c1.kind = RT_DESTROY; c1.h = e;
            c2 = c0; c2.kind = RT_ADD; c2.k = (int)rt_below(r, RT_NID);
            *pc = ecs_commands_new(w);
            RT_EXPECT(*pc != NULL, "ecs_commands_new failed");
            rt_list_clear(P);
            RT_EXPECT(ecs_cmd_set(*pc, c0.h, r->id[c0.k], c0.v) == ECS_OK, "ecs_cmd_set");
            RT_EXPECT(ecs_cmd_destroy(*pc, c1.h) == ECS_OK, "ecs_cmd_destroy");
            RT_EXPECT(ecs_cmd_add(*pc, c2.h, r->id[c2.k]) == ECS_OK, "ecs_cmd_add");
            rt_list_push(P, &c0); rt_list_push(P, &c1); rt_list_push(P, &c2);
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
                for (int i = 0; i < it.count; i++) {
                    if (rt_below(r, 3)) continue;
                    rt_fill(r, f + (size_t)i * sz, sz);
                    memcpy(rt_val(r, r->rows[i], k), f + (size_t)i * sz, sz);
                }
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
    ecs_result res = ecs_destroy(r->w, e);
    RT_EXPECT(res == ECS_OK, "ecs_destroy(%#llx) = %s", RT_H(e), ecs_result_str(res));
    rt_kill(r, s);
    rt_check_dead(r, e);
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
        rt_fill(r, p, rt_comps[k].size);
        memcpy(rt_val(r, s, k), p, rt_comps[k].size);
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
        unsigned op = rt_below(r, 8);
        switch (op) {
        case 0: res = ecs_destroy(w, e); break;
        case 1: res = ecs_add(w, e, r->id[k]); break;
        case 2: res = ecs_remove(w, e, r->id[k]); break;
        case 3: res = ecs_set(w, e, r->id[k], v); break;
        case 4: RT_EXPECT(!ecs_has(w, e, r->id[k]), "ecs_has on a %s handle %#llx", kind, RT_H(e)); return;
        case 5: RT_EXPECT(!ecs_get(w, e, r->id[k]), "ecs_get on a %s handle %#llx", kind, RT_H(e)); return;
        case 6: RT_EXPECT(!ecs_get_mut(w, e, r->id[k]), "ecs_get_mut on a %s handle %#llx", kind, RT_H(e)); return;
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
            ecs_result res = ecs_cmd_remove(r->cbl, L->ph[rt_below(r, (unsigned)L->np)], r->id[0]);
            RT_EXPECT(res == ECS_ERR_ARG, "recording another buffer's pending handle = %s", ecs_result_str(res));
        } else rt_record(r, L, r->cbs, 0);
    }
    if (rt_below(r, 25) == 0) {   /* freed unapplied: nothing happens */
        ecs_commands_free(r->cbs);
        r->cbs = NULL;
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
        rt_list_clear(&r->Ll);
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
    rt_check_dropped(r);
    rt_check_count(r);
}

/* Destroys everything from inside a defer-mode iteration. */
static void rt_op_clear(rt *r) {
    ecs_world *w = r->w;
    size_t n = 0;
    RT_EXPECT(ecs_defer_begin(w) == ECS_OK, "ecs_defer_begin failed");
    for (ecs_iter it = ecs_query_iter(w, r->q[0].q); ecs_query_next(&it);) {
        for (int i = 0; i < it.count; i++, n++) {
            ecs_result res = ecs_destroy(w, it.entities[i]);
            RT_EXPECT(res == ECS_OK, "deferred ecs_destroy(%#llx) = %s", RT_H(it.entities[i]), ecs_result_str(res));
        }
    }
    RT_EXPECT(n == r->nlive, "the full query visited %zu entities, the model has %u", n, r->nlive);
    RT_EXPECT(ecs_defer_end(w) == ECS_OK, "ecs_defer_end failed");
    while (r->nlive) rt_kill(r, r->live[0]);
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
    rt_check_count(r);
    rt_check_dropped(r);
    for (uint32_t i = 0; i < r->nlive; i++) rt_check_ent(r, r->live[i]);
    for (uint32_t i = 0; i < r->ndead; i++) rt_check_dead(r, r->dead[i]);
    for (int i = 0; i < RT_NQ; i++) rt_query(r, &r->q[i], RT_QM_PLAIN);
    rt_random_query(r);
}

enum { OP_CREATE, OP_CREATE_MANY, OP_DESTROY, OP_ADD, OP_REMOVE, OP_SET, OP_GET, OP_GET_MUT,
       OP_HAS, OP_ALIVE, OP_COUNT, OP_BAD, OP_CMDS, OP_CMD_LONG, OP_CMD_LONG_APPLY, OP_DEFER,
       OP_QUERY, OP_N };

static void rt_step(rt *r) {
    static const long targets[] = {0, 40, 400, 1200, 2500};
    if (r->op % 20000 == 0) {
        r->target = targets[rt_below(r, 5)];
        if (r->target == 0 && rt_below(r, 2)) rt_op_clear(r);
    }
    int grow = (long)r->nlive < r->target, shrink = (long)r->nlive > r->target;
    unsigned wt[OP_N] = {
        [OP_CREATE] = grow ? 150 : 30, [OP_CREATE_MANY] = grow ? 20 : 3, [OP_DESTROY] = shrink ? 150 : 30,
        [OP_ADD] = 120, [OP_REMOVE] = 90, [OP_SET] = 120, [OP_GET] = 80, [OP_GET_MUT] = 60,
        [OP_HAS] = 50, [OP_ALIVE] = 20, [OP_COUNT] = 10, [OP_BAD] = 40, [OP_CMDS] = 15,
        [OP_CMD_LONG] = 25, [OP_CMD_LONG_APPLY] = 4, [OP_DEFER] = 15, [OP_QUERY] = 15};
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
}

static void rt_setup(rt *r) {
    ecs_world *w = r->w;
    RT_EXPECT(w != NULL, "ecs_world_new failed");
    for (int k = 0; k < RT_NID; k++) {
        r->id[k] = ecs_component(w, rt_comps[k].name, rt_comps[k].size, rt_comps[k].align);
        RT_EXPECT(r->id[k] != 0, "registering %s failed", rt_comps[k].name);
        for (int j = 0; j < k; j++) RT_EXPECT(r->id[j] != r->id[k], "ids %d and %d are equal", j, k);
        RT_EXPECT(ecs_id_size(w, r->id[k]) == rt_comps[k].size, "ecs_id_size(%s)", rt_comps[k].name);
        RT_EXPECT(!strcmp(ecs_id_name(w, r->id[k]), rt_comps[k].name), "ecs_id_name(%s)", rt_comps[k].name);
        RT_EXPECT(r->id[k] <= ecs_id_count(w), "id %u above ecs_id_count", r->id[k]);
    }
    for (int i = 0; i < RT_NQ; i++) rt_q_make(r, &r->q[i], rt_fixed[i].nt, rt_fixed[i].t);
}

static void rt_free(rt *r) {
    free(r->hnd); free(r->mask); free(r->alive); free(r->val); free(r->livepos); free(r->stamp);
    free(r->live); free(r->freel); free(r->grave); free(r->unnamed); free(r->hk); free(r->hv);
    free(r->scratch); free(r->rows);
    rt_list_free(&r->Ls); rt_list_free(&r->Ll); rt_list_free(&r->Ld); rt_list_free(&r->Lq);
    rt_list_free(&r->Lp);
    free(r);
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
