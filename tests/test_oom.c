/* Allocation-failure injection. Each scenario runs once with no failure to
   count its K allocation requests, then K more times, failing request i. Every
   step checks its own result: a failed call must report ECS_ERR_NOMEM (or
   0/NULL), leave the world unchanged, and succeed when retried; the run must
   end in the same state as the failure-free run, and after ecs_world_free the
   allocator must hold no blocks. */
#include "test.h"

#include <stdarg.h>
#include <stddef.h>

/* ---- the allocator hook ------------------------------------------------------ */
typedef struct oom_hook {
    long requests;     /* allocation requests (size > 0) while not paused */
    long fail_at;      /* the request to fail, 1-based; 0 = none */
    long injected;     /* failures injected so far */
    int paused;        /* > 0: neither counted nor failed (the test's own hashing) */
    long live;         /* blocks outstanding */
    long long bytes;   /* bytes outstanding */
    long foreign;      /* pointers passed in that this hook never handed out */
} oom_hook;

/* A header in front of each block keeps its size (realloc may move it). */
#define OOM_MAGIC 0x6f6f6d2d626c6b21ull
typedef union oom_hdr {
    struct { size_t size; unsigned long long magic; } h;
    max_align_t align;
} oom_hdr;

static void *oom_realloc(void *ptr, size_t size, void *user) {
    oom_hook *k = (oom_hook *)user;
    oom_hdr *old = ptr ? (oom_hdr *)ptr - 1 : NULL;
    if (old && old->h.magic != OOM_MAGIC) { k->foreign++; return NULL; }
    if (size == 0) {
        if (old) {
            k->live--;
            k->bytes -= (long long)old->h.size;
            old->h.magic = 0;
            free(old);
        }
        return NULL;
    }
    if (!k->paused) {
        k->requests++;
        if (k->requests == k->fail_at) { k->injected++; return NULL; }  /* ptr stays valid */
    }
    if (size > (size_t)-1 - sizeof(oom_hdr)) return NULL;
    size_t old_size = old ? old->h.size : 0;
    oom_hdr *n = (oom_hdr *)realloc(old, sizeof(oom_hdr) + size);
    if (!n) return NULL;
    if (!old) k->live++;
    k->bytes += (long long)size - (long long)old_size;
    n->h.size = size;
    n->h.magic = OOM_MAGIC;
    return n + 1;
}

/* ---- scenario context and step checks ---------------------------------------- */
typedef struct { float x, y; } OPos;
typedef struct { float x, y; } OVel;
typedef struct { int hp; } OHp;
typedef struct { _Alignas(64) unsigned char b[96]; } OBig;
typedef struct { int frame, spare; } ORes;

typedef struct oom_ctx {
    oom_hook k;
    ecs_world *w;
    unsigned long long sig;      /* everything observed along the way, handles included */
    unsigned long long content;  /* the same without handle values (for diagnosis) */
    ecs_id pos, vel, hp, big, ta, tb, res;
} oom_ctx;

#define OOM_FNV 1469598103934665603ull
static void oom_mix(unsigned long long *h, unsigned long long v) { *h = (*h ^ v) * 1099511628211ull; }

static void oom_fail(oom_ctx *c, int line, const char *what, const char *fmt, ...) {
    va_list ap;
    test_g.checks_failed++;
    fprintf(stderr, "  %s:%d: %s: ", __FILE__, line, what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (c->k.fail_at) fprintf(stderr, " [failing allocation %ld]\n", c->k.fail_at);
    else fputc('\n', stderr);
}

static unsigned long long oom_hash(oom_ctx *c) {
    c->k.paused++;
    unsigned long long h = test_world_hash(c->w);
    c->k.paused--;
    return h;
}

/* After a call failed: it must be the injected failure, and change nothing. */
static void oom_after_fail(oom_ctx *c, int line, const char *expr, int code, unsigned long long h0,
                           size_t n0, long inj0) {
    const char *rs = code >= 0 ? ecs_result_str((ecs_result)code) : "0/NULL";
    if (c->k.injected == inj0)
        oom_fail(c, line, expr, "failed (%s) with no allocation failing: %s", rs, ecs_last_error(c->w));
    else if (code >= 0 && code != ECS_ERR_NOMEM)
        oom_fail(c, line, expr, "returned %s, want ECS_ERR_NOMEM", rs);
    if (!ecs_last_error(c->w) || !ecs_last_error(c->w)[0]) oom_fail(c, line, expr, "no last error");
    if (oom_hash(c) != h0 || ecs_count(c->w) != n0)
        oom_fail(c, line, expr, "the failed call changed the world");
}

/* A call returning ecs_result: on failure, check and retry. */
#define OOM_RES(c, expr) do { \
    unsigned long long h0_ = oom_hash(c); size_t n0_ = ecs_count((c)->w); long i0_ = (c)->k.injected; \
    ecs_result r_ = (expr); \
    if (r_ != ECS_OK) { \
        oom_after_fail((c), __LINE__, #expr, (int)r_, h0_, n0_, i0_); \
        r_ = (expr); \
        if (r_ != ECS_OK) oom_fail((c), __LINE__, #expr, "retry returned %s", ecs_result_str(r_)); \
    } \
} while (0)

/* A call returning a handle or pointer (0/NULL on failure). */
#define OOM_VAL(c, var, expr) do { \
    unsigned long long h0_ = oom_hash(c); size_t n0_ = ecs_count((c)->w); long i0_ = (c)->k.injected; \
    (var) = (expr); \
    if (!(var)) { \
        oom_after_fail((c), __LINE__, #expr, -1, h0_, n0_, i0_); \
        (var) = (expr); \
        if (!(var)) oom_fail((c), __LINE__, #expr, "retry failed: %s", ecs_last_error((c)->w)); \
    } \
} while (0)

/* Applying (a buffer, or defer_end) may stop part way on NOMEM; the next call
   resumes. Only one allocation fails per run, so the second call must finish. */
#define OOM_RESUME(c, expr) do { \
    ecs_result r_; int tries_ = 0; \
    for (;;) { \
        long i0_ = (c)->k.injected; \
        r_ = (expr); \
        if (r_ == ECS_OK || tries_++ == 2) break; \
        if (r_ != ECS_ERR_NOMEM || (c)->k.injected == i0_) \
            oom_fail((c), __LINE__, #expr, "returned %s with no allocation failing in this call", \
                     ecs_result_str(r_)); \
        if (!ecs_last_error((c)->w)[0]) oom_fail((c), __LINE__, #expr, "no last error"); \
    } \
    if (r_ != ECS_OK) oom_fail((c), __LINE__, #expr, "still %s after retries", ecs_result_str(r_)); \
} while (0)

/* ---- observations --------------------------------------------------------------- */
/* Does entity e match the query terms (brute force over ecs_has)? */
static int oom_matches(oom_ctx *c, ecs_entity e, const ecs_term *terms) {
    for (int t = 0; t < ECS_MAX_TERMS && terms[t].id; t++) {
        bool has = ecs_has(c->w, e, terms[t].id);
        if (terms[t].oper == ECS_AND && !has) return 0;
        if (terms[t].oper == ECS_NOT && has) return 0;
    }
    return 1;
}

/* Iterates q, checks every batch against brute force, and mixes what it saw
   into the signatures. move: term 0 is Pos (write), term 1 Vel (read). */
static void oom_iterate(oom_ctx *c, ecs_query *q, const ecs_query_desc *d, int move, int line) {
    size_t total = 0, wrong = 0;
    for (ecs_iter it = ecs_query_iter(c->w, q); ecs_query_next(&it);) {
        oom_mix(&c->sig, (unsigned long long)it.count);
        oom_mix(&c->content, (unsigned long long)it.count);
        for (int i = 0; i < it.count; i++) {
            oom_mix(&c->sig, it.entities[i]);
            wrong += !oom_matches(c, it.entities[i], d->terms);
        }
        for (int t = 0; t < ECS_MAX_TERMS && d->terms[t].id; t++) {
            bool want = d->terms[t].oper == ECS_AND && ecs_id_size(c->w, d->terms[t].id) > 0;
            if (want && it.count > 0 && !ecs_field(&it, t)) wrong++;
        }
        if (move && it.count > 0) {
            OPos *p = ECS_FIELD(&it, OPos, 0);
            const OVel *v = ECS_FIELD(&it, OVel, 1);
            for (int i = 0; p && v && i < it.count; i++) {
                p[i].x += v[i].x;
                p[i].y += v[i].y;
                oom_mix(&c->content, (unsigned long long)(long long)p[i].x);
            }
        }
        total += (size_t)it.count;
    }
    /* the same count by brute force over every entity */
    size_t expect = 0;
    c->k.paused++;
    ecs_query *all = ecs_query_new(c->w, &(ecs_query_desc){.terms = {{0}}});
    for (ecs_iter it = ecs_query_iter(c->w, all); all && ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++) expect += (size_t)oom_matches(c, it.entities[i], d->terms);
    ecs_query_free(all);
    c->k.paused--;
    if (wrong) oom_fail(c, line, "query", "%zu wrong rows or fields", wrong);
    if (total != expect) oom_fail(c, line, "query", "iterated %zu entities, %zu match", total, expect);
    size_t counted = ecs_query_count(c->w, q);
    if (counted != total) oom_fail(c, line, "query", "ecs_query_count %zu, iterated %zu", counted, total);
    oom_mix(&c->sig, total);
    oom_mix(&c->content, total);
}

/* Mixes the whole world into the signatures (with and without handles). */
static void oom_observe(oom_ctx *c) {
    c->k.paused++;
    oom_mix(&c->sig, test_world_hash(c->w));
    ecs_query *all = ecs_query_new(c->w, &(ecs_query_desc){.terms = {{0}}});
    ecs_id n = ecs_id_count(c->w);
    for (ecs_iter it = ecs_query_iter(c->w, all); all && ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++)
            for (ecs_id id = 1; id <= n; id++) {
                if (!ecs_has(c->w, it.entities[i], id)) continue;
                oom_mix(&c->content, id);
                const unsigned char *v = (const unsigned char *)ecs_get(c->w, it.entities[i], id);
                for (size_t b = 0; v && b < ecs_id_size(c->w, id); b++) oom_mix(&c->content, v[b]);
            }
    ecs_query_free(all);
    c->k.paused--;
    oom_mix(&c->sig, ecs_count(c->w));
    oom_mix(&c->content, ecs_count(c->w));
    oom_mix(&c->sig, ecs_commands_dropped(c->w));
    oom_mix(&c->content, ecs_commands_dropped(c->w));
}

/* ---- scenario building blocks ------------------------------------------------- */
static int oom_world_new(oom_ctx *c) {
    ecs_world_desc d;
    memset(&d, 0, sizeof d);
    d.threads = 1;
    d.realloc_fn = oom_realloc;
    d.alloc_user = &c->k;
    long i0 = c->k.injected;
    c->w = ecs_world_new(&d);
    if (!c->w) {
        if (c->k.injected == i0) oom_fail(c, __LINE__, "ecs_world_new", "failed with no allocation failing");
        if (c->k.live) oom_fail(c, __LINE__, "ecs_world_new", "failed and kept %ld blocks", c->k.live);
        c->w = ecs_world_new(&d);
        if (!c->w) oom_fail(c, __LINE__, "ecs_world_new", "retry failed");
    }
    if (c->w && ecs_last_error(c->w)[0]) oom_fail(c, __LINE__, "ecs_world_new", "new world has an error");
    return c->w != NULL;
}

static void oom_finish(oom_ctx *c) {
    if (c->k.foreign) oom_fail(c, __LINE__, "hook", "%ld pointers it never handed out", c->k.foreign);
    oom_observe(c);
    ecs_world_free(c->w);
    c->w = NULL;
    if (c->k.live || c->k.bytes)
        oom_fail(c, __LINE__, "ecs_world_free", "%ld blocks (%lld bytes) still allocated", c->k.live,
                 c->k.bytes);
}

static const char *const oom_tag_names[] = {"OT0", "OT1", "OT2", "OT3", "OT4", "OT5", "OT6", "OT7",
                                            "OT8", "OT9", "OT10", "OT11"};

static void oom_register(oom_ctx *c) {
    ecs_world *w = c->w;
    OOM_VAL(c, c->pos, ECS_COMPONENT(w, OPos));
    OOM_VAL(c, c->vel, ECS_COMPONENT(w, OVel));
    OOM_VAL(c, c->hp, ECS_COMPONENT(w, OHp));
    OOM_VAL(c, c->big, ECS_COMPONENT(w, OBig));
    OOM_VAL(c, c->ta, ecs_component(w, "OTagA", 0, 0));
    OOM_VAL(c, c->tb, ecs_component(w, "OTagB", 0, 0));
    OOM_VAL(c, c->res, ecs_resource(w, "ORes", sizeof(ORes), 0, &(ORes){7, 8}));
}

/* ---- scenarios ------------------------------------------------------------------ */
static void scen_world(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    ecs_id extra[12], again = 0, res2 = 0;
    for (int i = 0; i < 12; i++)
        OOM_VAL(c, extra[i], ecs_component(w, oom_tag_names[i], (size_t)(i % 3) * 4, 0));
    OOM_VAL(c, again, ECS_COMPONENT(w, OPos));
    if (again != c->pos) oom_fail(c, __LINE__, "ECS_COMPONENT again", "id %u, want %u", again, c->pos);
    OOM_VAL(c, res2, ecs_resource(w, "ORes", sizeof(ORes), 0, &(ORes){1, 1}));
    if (res2 != c->res) oom_fail(c, __LINE__, "ecs_resource again", "id %u, want %u", res2, c->res);
    ORes *r = (ORes *)ecs_resource_get(w, c->res);
    if (!r || r->frame != 7 || r->spare != 8) oom_fail(c, __LINE__, "ecs_resource_get", "wrong value");
    for (int i = 0; i < 12; i++) {
        if (ecs_lookup(w, oom_tag_names[i]) != extra[i])
            oom_fail(c, __LINE__, "ecs_lookup", "%s", oom_tag_names[i]);
        oom_mix(&c->sig, extra[i]);
    }
    oom_mix(&c->sig, ecs_id_count(w));
    oom_mix(&c->content, ecs_id_count(w));
    oom_finish(c);
}

static void scen_entities(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    enum { NE = 70 };
    ecs_entity e[NE] = {0}, many[24] = {0}, more[40] = {0};
    OBig big;
    memset(&big, 0xAB, sizeof big);
    for (int i = 0; i < NE; i++) OOM_VAL(c, e[i], ecs_create(w));
    for (int i = 0; i < NE; i++) {
        OOM_RES(c, ecs_set(w, e[i], c->pos, &(OPos){(float)i, (float)-i}));
        if (i % 2) OOM_RES(c, ecs_add(w, e[i], c->vel));
        if (i % 3 == 0) OOM_RES(c, ecs_set(w, e[i], c->hp, &(OHp){i}));
        if (i % 5 == 0) OOM_RES(c, ecs_add(w, e[i], c->ta));
        if (i % 7 == 0) OOM_RES(c, ecs_set(w, e[i], c->big, &big));
    }
    OOM_RES(c, ecs_create_many(w, 24, (const ecs_id[]){c->pos, c->vel, c->tb}, 3, many));
    OOM_RES(c, ecs_create_many(w, 6, (const ecs_id[]){c->hp, c->ta, c->hp}, 3, NULL));
    {
        static const OPos pv[5] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}};
        static const OHp hv[5] = {{7}, {8}, {9}, {10}, {11}};
        OOM_RES(c, ecs_create_many_values(w, 5, (const ecs_id[]){c->hp, c->pos, c->big}, 3,
                                          (const void *const[]){hv, pv, NULL}, NULL));
    }
    for (int i = 0; i < NE; i += 4) {
        OOM_RES(c, ecs_remove(w, e[i], c->vel));
        OOM_RES(c, ecs_remove(w, e[i], c->pos));
    }
    for (int i = 0; i < NE; i += 6) OOM_RES(c, ecs_destroy(w, e[i]));
    for (int i = 0; i < NE; i += 6) {  /* new entities in the freed slots */
        OOM_VAL(c, e[i], ecs_create(w));
        OOM_RES(c, ecs_set(w, e[i], c->vel, &(OVel){1, 2}));
        OOM_RES(c, ecs_add(w, e[i], c->tb));
    }
    for (int i = 0; i < 24; i += 3) {
        OOM_RES(c, ecs_set(w, many[i], c->hp, &(OHp){100 + i}));
        OOM_RES(c, ecs_remove(w, many[i], c->tb));
    }
    OOM_RES(c, ecs_remove(w, many[1], c->pos));
    OOM_RES(c, ecs_remove(w, many[1], c->vel));
    OOM_RES(c, ecs_remove(w, many[1], c->tb));
    OOM_RES(c, ecs_create_many(w, 40, (const ecs_id[]){c->pos, c->hp, c->vel, c->ta, c->tb}, 5, more));
    for (int i = 0; i < 40; i += 9) OOM_RES(c, ecs_set(w, more[i], c->big, &big));
    for (int i = 0; i < 40; i += 2) OOM_RES(c, ecs_destroy(w, more[i]));
    OOM_RES(c, ecs_set(w, many[2], c->pos, &(OPos){5, 5}));  /* no structural change */
    OPos *p = (OPos *)ecs_get_mut(w, many[3], c->pos);
    if (p) p->x = 33;
    else oom_fail(c, __LINE__, "ecs_get_mut", "NULL");
    OOM_RES(c, ecs_destroy_many(w, (const ecs_entity[]){more[1], more[3], more[1]}, 3));
    OOM_RES(c, ecs_destroy_with(w, c->ta));   /* its list of entities is allocated */
    ORes *r = (ORes *)ecs_resource_get(w, c->res);
    if (r) r->frame++;
    oom_mix(&c->content, r ? (unsigned long long)r->frame : 0);
    oom_finish(c);
}

static void scen_queries(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    const ecs_query_desc d1 = {.terms = {{c->pos, ECS_WRITE, ECS_AND}, {c->vel, ECS_READ, ECS_AND}}};
    const ecs_query_desc d2 = {.terms = {{c->hp, ECS_READ, ECS_AND}, {c->ta, ECS_READ, ECS_NOT}}};
    const ecs_query_desc d3 = {.terms = {{c->pos, ECS_READ, ECS_AND}, {c->hp, ECS_READ, ECS_OPTIONAL},
                                {c->tb, ECS_READ, ECS_NOT}}};
    const ecs_query_desc d4 = {.terms = {{0}}};
    const ecs_query_desc d5 = {.terms = {{c->big, ECS_READ, ECS_AND}, {c->ta, ECS_READ, ECS_AND}}};
    ecs_query *q1 = NULL, *q2 = NULL, *q3 = NULL, *q4 = NULL, *q5 = NULL;
    OOM_VAL(c, q1, ecs_query_new(w, &d1));  /* before any table */
    OOM_VAL(c, q2, ecs_query_new(w, &d2));
    ecs_entity e[24] = {0};
    for (int i = 0; i < 24; i++) {
        OOM_VAL(c, e[i], ecs_create(w));
        OOM_RES(c, ecs_set(w, e[i], c->pos, &(OPos){(float)i, 0}));
        if (i % 2) OOM_RES(c, ecs_set(w, e[i], c->vel, &(OVel){1, (float)i}));
        if (i % 3 == 0) OOM_RES(c, ecs_set(w, e[i], c->hp, &(OHp){i}));
        if (i % 4 == 0) OOM_RES(c, ecs_add(w, e[i], c->ta));
    }
    oom_iterate(c, q1, &d1, 1, __LINE__);
    oom_iterate(c, q2, &d2, 0, __LINE__);
    OOM_VAL(c, q3, ecs_query_new(w, &d3));  /* after tables exist */
    OOM_VAL(c, q4, ecs_query_new(w, &d4));
    oom_iterate(c, q3, &d3, 0, __LINE__);
    oom_iterate(c, q4, &d4, 0, __LINE__);
    for (int i = 0; i < 24; i += 5) OOM_RES(c, ecs_add(w, e[i], c->tb));
    for (int i = 1; i < 24; i += 4) OOM_RES(c, ecs_add(w, e[i], c->big));
    for (int i = 1; i < 24; i += 8) OOM_RES(c, ecs_add(w, e[i], c->ta));
    OOM_VAL(c, q5, ecs_query_new(w, &d5));
    oom_iterate(c, q1, &d1, 1, __LINE__);
    oom_iterate(c, q2, &d2, 0, __LINE__);
    oom_iterate(c, q3, &d3, 0, __LINE__);
    oom_iterate(c, q5, &d5, 0, __LINE__);
    ecs_query_free(q2);
    OOM_RES(c, ecs_create_many(w, 30, (const ecs_id[]){c->vel, c->pos, c->hp, c->big, c->ta}, 5, NULL));
    for (int i = 0; i < 24; i += 3) OOM_RES(c, ecs_destroy(w, e[i]));
    oom_iterate(c, q1, &d1, 1, __LINE__);
    oom_iterate(c, q3, &d3, 0, __LINE__);
    oom_iterate(c, q4, &d4, 0, __LINE__);
    oom_iterate(c, q5, &d5, 0, __LINE__);
    ecs_query_free(q3);
    oom_finish(c);  /* q1, q4, q5 are freed by the world */
}

/* Change stamps: turned on with tables already there, kept through growth
   and new tables, and through a snapshot's take and restore. */
static long oom_changed_rows(oom_ctx *c, ecs_query *q) {
    long n = 0;
    for (ecs_iter it = ecs_query_iter(c->w, q); ecs_query_next(&it);) n += it.count;
    oom_mix(&c->sig, (unsigned long long)n);
    oom_mix(&c->content, (unsigned long long)n);
    return n;
}
static void scen_changes(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    ecs_entity e[40] = {0};
    for (int i = 0; i < 20; i++) {
        OOM_VAL(c, e[i], ecs_create(w));
        OOM_RES(c, ecs_set(w, e[i], c->pos, &(OPos){(float)i, 0}));
    }
    ecs_query *q = NULL;
    OOM_VAL(c, q, ecs_query_new(w, &(ecs_query_desc){.terms = {{c->pos, ECS_READ, ECS_CHANGED}}}));
    if (!q) { oom_finish(c); return; }
    for (int i = 20; i < 40; i++) {
        OOM_VAL(c, e[i], ecs_create(w));
        OOM_RES(c, ecs_set(w, e[i], c->pos, &(OPos){(float)i, 0}));
        if (i % 2) OOM_RES(c, ecs_set(w, e[i], c->vel, &(OVel){1, 0}));
    }
    if (oom_changed_rows(c, q) != 40) oom_fail(c, __LINE__, "changes", "the first loop missed rows");
    OOM_RES(c, ecs_set(w, e[3], c->pos, &(OPos){1, 1}));
    ecs_snapshot *s = NULL;
    OOM_VAL(c, s, ecs_snapshot_take(w));
    long at_take = oom_changed_rows(c, q);
    OOM_RES(c, ecs_add(w, e[4], c->hp));
    if (s) OOM_RES(c, ecs_snapshot_restore(w, s));
    if (s && oom_changed_rows(c, q) != at_take) oom_fail(c, __LINE__, "changes", "the restore lost its stamps");
    ecs_snapshot_free(s);
    oom_finish(c);
}

static void scen_commands(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    ecs_entity e[16] = {0};
    for (int i = 0; i < 16; i++) {
        OOM_VAL(c, e[i], ecs_create(w));
        OOM_RES(c, ecs_set(w, e[i], c->pos, &(OPos){(float)i, 1}));
    }
    ecs_commands *cb = NULL, *cb2 = NULL;
    OOM_VAL(c, cb, ecs_commands_new(w));
    if (!cb) { oom_finish(c); return; }
    for (int i = 0; i < 12; i++) {
        ecs_entity p = 0;
        OOM_VAL(c, p, ecs_cmd_create(cb));
        OOM_RES(c, ecs_cmd_set(cb, p, c->pos, &(OPos){(float)-i, 2}));
        if (i % 2) OOM_RES(c, ecs_cmd_add(cb, p, c->ta));
        if (i % 3 == 0) OOM_RES(c, ecs_cmd_set(cb, p, c->hp, &(OHp){i}));
        if (i == 5) OOM_RES(c, ecs_cmd_destroy(cb, p));
        if (i == 7) OOM_RES(c, ecs_cmd_remove(cb, p, c->pos));
    }
    for (int i = 0; i < 16; i++) {
        if (i % 2) OOM_RES(c, ecs_cmd_add(cb, e[i], c->vel));
        if (i % 4 == 0) OOM_RES(c, ecs_cmd_remove(cb, e[i], c->pos));
        if (i % 5 == 0) {
            OOM_RES(c, ecs_cmd_destroy(cb, e[i]));
            OOM_RES(c, ecs_cmd_set(cb, e[i], c->hp, &(OHp){1}));  /* dropped at apply */
        }
    }
    OOM_RESUME(c, ecs_commands_apply(w, cb));
    oom_observe(c);
    /* the same buffer again, growing tables that already exist */
    for (int i = 0; i < 20; i++) {
        ecs_entity p = 0;
        OOM_VAL(c, p, ecs_cmd_create(cb));
        OOM_RES(c, ecs_cmd_set(cb, p, c->pos, &(OPos){(float)i, 3}));
        OOM_RES(c, ecs_cmd_add(cb, p, c->vel));
        if (i % 4 == 0) OOM_RES(c, ecs_cmd_add(cb, p, c->big));
        if (i % 5 == 0) OOM_RES(c, ecs_cmd_set(cb, p, c->tb, NULL));  /* a tag */
    }
    OOM_RESUME(c, ecs_commands_apply(w, cb));
    oom_observe(c);
    ecs_commands_free(cb);
    /* a second buffer left unapplied: the world frees it */
    OOM_VAL(c, cb2, ecs_commands_new(w));
    if (cb2) {
        ecs_entity p = 0;
        OOM_VAL(c, p, ecs_cmd_create(cb2));
        OOM_RES(c, ecs_cmd_set(cb2, p, c->hp, &(OHp){9}));
        OOM_RES(c, ecs_cmd_destroy(cb2, e[1]));
    }
    oom_finish(c);
}

/* Prefabs: a tree of three made and filled, instantiated singly, in bulk
   (all or nothing), through a buffer and in defer mode. */
static void scen_prefabs(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    ecs_entity tank = 0, turret = 0, light = 0, one = 0, pend = 0, many[40] = {0};
    OOM_VAL(c, tank, ecs_prefab_new(w));
    OOM_VAL(c, turret, ecs_prefab_new(w));
    OOM_VAL(c, light, ecs_prefab_new(w));
    OOM_RES(c, ecs_set(w, tank, c->pos, &(OPos){1, 2}));
    OOM_RES(c, ecs_set(w, tank, c->big, &(OBig){{3}}));
    OOM_RES(c, ecs_set(w, turret, c->hp, &(OHp){4}));
    OOM_RES(c, ecs_add(w, light, c->ta));
    OOM_RES(c, ecs_set_parent(w, turret, tank));
    OOM_RES(c, ecs_set_parent(w, light, tank));
    OOM_VAL(c, one, ecs_instantiate(w, tank));
    OOM_RES(c, ecs_instantiate_many(w, tank, 40, many));
    OOM_RES(c, ecs_instantiate_many(w, turret, 7, NULL));
    ecs_commands *cb = NULL;
    OOM_VAL(c, cb, ecs_commands_new(w));
    if (cb) {
        OOM_VAL(c, pend, ecs_cmd_instantiate(cb, tank));
        OOM_RES(c, ecs_cmd_set(cb, pend, c->vel, &(OVel){5, 6}));
        OOM_RESUME(c, ecs_commands_apply(w, cb));
        ecs_commands_free(cb);
    }
    OOM_RES(c, ecs_defer_begin(w));
    OOM_VAL(c, one, ecs_instantiate(w, turret));
    OOM_RES(c, ecs_instantiate_many(w, tank, 5, many));
    OOM_RESUME(c, ecs_defer_end(w));
    oom_finish(c);
}

/* Sorted and grouped loops: a sort's first build, its growth, a re-sort
   after changes, and a sorted system in frames. */
static int oom_cmp_pos(ecs_entity a, const void *va, ecs_entity b, const void *vb, void *ctx) {
    (void)a; (void)b; (void)ctx;
    float x = ((const OPos *)va)->x, y = ((const OPos *)vb)->x;
    return (x > y) - (x < y);
}
static uint64_t oom_group_ta(const ecs_world *w, const ecs_id *ids, int n, void *ctx) {
    (void)w;
    for (int i = 0; i < n; i++) if (ids[i] == *(const ecs_id *)ctx) return 0;
    return 1;
}
static void oom_sorted_sys(ecs_iter *it) { (void)it; }
static void scen_sorted(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    ecs_entity e[64] = {0};
    for (int i = 0; i < 64; i++) {
        OOM_VAL(c, e[i], ecs_create(w));
        OOM_RES(c, ecs_set(w, e[i], c->pos, &(OPos){(float)((i * 37) % 64), 0}));
        if (i % 3 == 0) OOM_RES(c, ecs_add(w, e[i], c->ta));
    }
    ecs_query *q = NULL;
    OOM_VAL(c, q, ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(c->pos)}, .order_by = c->pos,
        .compare = oom_cmp_pos, .group_by = oom_group_ta, .group_ctx = &c->ta}));
    if (!q) { oom_finish(c); return; }
    for (int round = 0; round < 3; round++) {
        /* a loop whose sort failed yields nothing and says why; the next one sorts */
        long inj0 = c->k.injected;
        int rows = 0;
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) rows += it.count;
        if (rows != 64 && c->k.injected == inj0) oom_fail(c, __LINE__, "sorted loop", "%d rows", rows);
        if (rows != 64) {
            rows = 0;
            for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) rows += it.count;
            if (rows != 64) oom_fail(c, __LINE__, "sorted loop", "retry: %d rows", rows);
        }
        oom_mix(&c->sig, (unsigned long long)rows);
        OOM_RES(c, ecs_set(w, e[round * 5], c->pos, &(OPos){-1.f - (float)round, 0}));
        ecs_entity more = 0;
        OOM_VAL(c, more, ecs_create(w));
        OOM_RES(c, ecs_destroy(w, more));
    }
    /* a loop of one group of a marked query: its group's mark finds room first */
    (void)ecs_query_changed(w, q);
    for (int g = 0; g < 2; g++) {
        ecs_iter it = ecs_query_iter(w, q);
        int rows = 0;
        OOM_RES(c, ecs_iter_set_group(&it, (uint64_t)g));
        while (ecs_query_next(&it)) rows += it.count;
        oom_mix(&c->sig, (unsigned long long)rows);
    }
    ecs_system sys = 0;
    OOM_VAL(c, sys, ecs_system_add(w, &(ecs_system_desc){.name = "sorted", .fn = oom_sorted_sys,
        .terms = {ECS_TERM_R(c->pos)}, .order_by = c->pos, .compare = oom_cmp_pos}));
    (void)sys;
    oom_finish(c);
}

static void scen_defer(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    ecs_world *w = c->w;
    oom_register(c);
    ecs_entity many[24] = {0};
    OOM_RES(c, ecs_create_many(w, 24, (const ecs_id[]){c->pos, c->vel}, 2, many));
    const ecs_query_desc d = {.terms = {{c->pos, ECS_WRITE, ECS_AND}, {c->vel, ECS_READ, ECS_AND}}};
    const ecs_query_desc dall = {.terms = {{0}}};
    ecs_query *q = NULL, *qall = NULL;
    OOM_VAL(c, q, ecs_query_new(w, &d));
    OOM_VAL(c, qall, ecs_query_new(w, &dall));
    if (!q || !qall) { oom_finish(c); return; }
    OOM_RES(c, ecs_defer_begin(w));
    int n = 0;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        OPos *p = ECS_FIELD(&it, OPos, 0);
        for (int i = 0; i < it.count; i++, n++) {
            ecs_entity ent = it.entities[i];
            if (p) p[i].x += 1;
            switch (n % 4) {
            case 0: OOM_RES(c, ecs_destroy(w, ent)); break;
            case 1: OOM_RES(c, ecs_add(w, ent, c->ta)); break;
            case 2: OOM_RES(c, ecs_set(w, ent, c->hp, &(OHp){n})); break;
            default: {
                ecs_entity ne = 0;
                OOM_VAL(c, ne, ecs_create(w));
                OOM_RES(c, ecs_set(w, ne, c->pos, &(OPos){(float)n, 9}));
                OOM_RES(c, ecs_add(w, ne, c->tb));
            }
            }
            if (n % 8 == 0) OOM_RES(c, ecs_remove(w, ent, c->vel));  /* destroyed: dropped */
            if (n == 10) OOM_RES(c, ecs_defer_begin(w));  /* nested */
            if (n == 14) OOM_RES(c, ecs_defer_end(w));
        }
    }
    OOM_RESUME(c, ecs_defer_end(w));
    oom_iterate(c, q, &d, 1, __LINE__);
    oom_iterate(c, qall, &dall, 0, __LINE__);
    oom_observe(c);
    /* a second block that grows the new tables */
    OOM_RES(c, ecs_defer_begin(w));
    for (int i = 0; i < 12; i++) {
        ecs_entity ne = 0;
        OOM_VAL(c, ne, ecs_create(w));
        OOM_RES(c, ecs_add(w, ne, c->hp));
        OOM_RES(c, ecs_add(w, ne, c->ta));
    }
    ecs_entity batch[6] = {0};
    OOM_RES(c, ecs_create_many(w, 6, (const ecs_id[]){c->vel, c->big, c->vel}, 3, batch));
    {
        static const OVel vv[4] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
        OOM_RES(c, ecs_create_many_values(w, 4, (const ecs_id[]){c->vel, c->ta}, 2, (const void *const[]){vv, NULL},
                                          NULL));
    }
    OOM_RES(c, ecs_set(w, batch[2], c->vel, &(OVel){4, 4}));
    ecs_entity keep = 0;
    for (int i = 0; i < 24 && !keep; i++)
        if (ecs_is_alive(w, many[i]) && ecs_has(w, many[i], c->pos)) keep = many[i];
    if (keep) OOM_RES(c, ecs_set(w, keep, c->pos, &(OPos){-1, -1}));  /* existing component */
    else oom_fail(c, __LINE__, "defer", "no entity of the first batch left");
    OOM_RESUME(c, ecs_defer_end(w));
    oom_iterate(c, qall, &dall, 0, __LINE__);
    ecs_query_free(q);
    oom_finish(c);
}

/* ---- the sweep -------------------------------------------------------------------- */
static void oom_sweep(const char *name, void (*scen)(oom_ctx *)) {
    oom_ctx ref;
    memset(&ref, 0, sizeof ref);
    ref.sig = ref.content = OOM_FNV;
    int base = test_g.checks_failed;
    scen(&ref);
    if (test_g.checks_failed != base) {
        fprintf(stderr, "  %s: fails with no allocation failing; no sweep\n", name);
        return;
    }
    long total = ref.k.requests;
    CHECKF(total > 0, "%s: no allocations through the hook", name);
    int bad_runs = 0;
    for (long i = 1; i <= total && bad_runs < 3; i++) {
        oom_ctx c;
        memset(&c, 0, sizeof c);
        c.sig = c.content = OOM_FNV;
        c.k.fail_at = i;
        int before = test_g.checks_failed;
        scen(&c);
        if (c.k.injected != 1)
            oom_fail(&c, __LINE__, name, "allocation %ld never requested (%ld requests)", i, c.k.requests);
        if (c.sig != ref.sig)
            oom_fail(&c, __LINE__, name, "end state differs from the run with no failure%s",
                     c.content == ref.content ? " (only in handle values)" : "");
        if (test_g.checks_failed != before) bad_runs++;
    }
    if (bad_runs >= 3) fprintf(stderr, "  %s: stopped after 3 failing runs (of %ld)\n", name, total);
}

/* ---- systems, validation, frames ------------------------------------------------ */
static void oom_nop(ecs_iter *it) { (void)it; }

/* Spawns one entity per frame per batch and moves everything; despawns what
   drifted far. Recording failures are the system's to see: it skips. */
typedef struct oom_sys_ctx { ecs_id pos, vel; } oom_sys_ctx;
static void oom_spawn(ecs_iter *it) {
    const oom_sys_ctx *k = (const oom_sys_ctx *)it->ctx;
    ecs_entity e = ecs_cmd_create(it->commands);
    if (e && !ecs_cmd_set(it->commands, e, k->pos, &(OPos){0, (float)it->count}))
        (void)ecs_cmd_set(it->commands, e, k->vel, &(OVel){1, 0});
}
static void oom_move(ecs_iter *it) {
    OPos *p = ECS_FIELD(it, OPos, 0);
    const OVel *v = ECS_FIELD(it, OVel, 1);
    for (int i = 0; i < it->count; i++) p[i].x += v[i].x;
}
static void oom_despawn(ecs_iter *it) {
    const OPos *p = ECS_FIELD(it, OPos, 0);
    for (int i = 0; i < it->count; i++)
        if (p[i].x > 5) (void)ecs_cmd_destroy(it->commands, it->entities[i]);
}

static bool oom_yes(ecs_world *w, void *ctx) { (void)w; (void)ctx; return true; }

static void oom_add_systems(oom_ctx *c, oom_sys_ctx *k) {
    ecs_world *w = c->w;
    ecs_stage late = 0;
    ecs_system s = 0;
    k->pos = c->pos;
    k->vel = c->vel;
    OOM_VAL(c, late, ecs_stage_add(w, "late"));
    OOM_VAL(c, s, ecs_system_add(w, &(ecs_system_desc){.name = "move", .fn = oom_move, .terms = {
        {c->pos, ECS_WRITE, ECS_AND}, {c->vel, ECS_READ, ECS_AND}}, .chunk_size = 3}));
    OOM_VAL(c, s, ecs_system_add(w, &(ecs_system_desc){.name = "spawn", .fn = oom_spawn, .ctx = k,
        .after = {"move"}}));
    OOM_VAL(c, s, ecs_system_add(w, &(ecs_system_desc){.name = "despawn", .fn = oom_despawn,
        .terms = {{c->pos, ECS_READ, ECS_AND}}, .stage = late, .chunk_size = 4}));
    OOM_VAL(c, s, ecs_system_add(w, &(ecs_system_desc){.name = "x", .fn = oom_nop,
        .reads = {c->res}, .before = {"spawn"}, .independent_of = {"move"}}));
    /* a step group of two stages, two steps a frame (ecs_progress(w, 1)), with
       an interval and a run_if: each step's sync point may fail too */
    ecs_stage fixed = 0, member = 0;
    OOM_VAL(c, fixed, ecs_stage_init(w, &(ecs_stage_desc){.name = "fixed", .fixed_dt = 0.5f}));
    OOM_VAL(c, member, ecs_stage_init(w, &(ecs_stage_desc){.name = "fixed 2", .step_with = fixed}));
    OOM_VAL(c, s, ecs_system_add(w, &(ecs_system_desc){.name = "step spawn", .fn = oom_spawn, .ctx = k,
        .stage = fixed, .interval = 3}));
    OOM_VAL(c, s, ecs_system_add(w, &(ecs_system_desc){.name = "step move", .fn = oom_move, .terms = {
        {c->pos, ECS_WRITE, ECS_AND}, {c->vel, ECS_READ, ECS_AND}}, .stage = member, .run_if = oom_yes}));
    (void)s;
}

/* Registration, validation and the DOT export are all-or-nothing. */
static void scen_systems(oom_ctx *c) {
    if (!oom_world_new(c)) return;
    oom_register(c);
    oom_sys_ctx k;
    oom_add_systems(c, &k);
    OOM_RES(c, ecs_validate(c->w, NULL));
    c->k.paused++;
    FILE *f = tmpfile();
    c->k.paused--;
    if (f) {
        ecs_system_add(c->w, &(ecs_system_desc){.name = "late add", .fn = oom_nop});  /* needs a rebuild */
        OOM_RES(c, ecs_write_dot(c->w, f));
        fclose(f);
    }
    ecs_report rep;
    ecs_result r = ecs_validate(c->w, &rep);
    CHECKF(r == ECS_OK, "validate after the sweep step: %s", ecs_result_str(r));
    oom_mix(&c->sig, (unsigned long long)rep.count);
    oom_finish(c);
}
TEST(oom_systems_and_validation) { oom_sweep("systems", scen_systems); }

/* Frames: a failing frame reports ECS_ERR_NOMEM (only for an injected
   failure), the world stays consistent, later frames succeed, and nothing
   leaks. Commands a failed sync point could not apply come first next frame,
   so the end state need not equal the failure-free run's. */
static long oom_frames_run(long fail_at, size_t *entities) {
    oom_ctx c;
    memset(&c, 0, sizeof c);
    c.sig = c.content = OOM_FNV;
    c.k.paused++;   /* set-up never fails here: the frames are what is swept */
    if (!oom_world_new(&c)) return 0;
    oom_register(&c);
    oom_sys_ctx k;
    oom_add_systems(&c, &k);
    for (int i = 0; i < 8; i++) {
        ecs_entity e = ecs_create(c.w);
        ecs_set(c.w, e, c.pos, &(OPos){(float)i, 0});
        ecs_set(c.w, e, c.vel, &(OVel){1, 0});
    }
    c.k.paused--;
    c.k.fail_at = fail_at;
    for (int f = 0; f < 12; f++) {
        long i0 = c.k.injected;
        ecs_result r = ecs_progress(c.w, 1);
        if (r != ECS_OK && (r != ECS_ERR_NOMEM || c.k.injected == i0))
            oom_fail(&c, __LINE__, "ecs_progress", "returned %s (injected %ld)", ecs_result_str(r),
                     c.k.injected - i0);
        if (r != ECS_OK && !ecs_last_error(c.w)[0]) oom_fail(&c, __LINE__, "ecs_progress", "no last error");
        oom_hash(&c);   /* walks every entity: consistent after a failure too */
    }
    c.k.fail_at = 0;
    for (int f = 0; f < 3; f++)
        if (ecs_progress(c.w, 1) != ECS_OK) oom_fail(&c, __LINE__, "ecs_progress", "failed with nothing failing");
    *entities = ecs_count(c.w);
    long requests = c.k.requests;
    ecs_world_free(c.w);
    if (c.k.live || c.k.bytes) oom_fail(&c, __LINE__, "ecs_world_free", "%ld blocks still allocated", c.k.live);
    return requests;
}
TEST(oom_frames) {
    size_t ref = 0, n = 0;
    long total = oom_frames_run(0, &ref);
    CHECKF(total > 0 && ref > 0, "frames made no allocations (%ld) or no entities (%zu)", total, ref);
    for (long i = 1; i <= total; i++) oom_frames_run(i, &n);
}

TEST(oom_world_and_registration) { oom_sweep("world", scen_world); }
TEST(oom_entities_and_tables) { oom_sweep("entities", scen_entities); }
TEST(oom_queries_and_iteration) { oom_sweep("queries", scen_queries); }
TEST(oom_command_buffers) { oom_sweep("commands", scen_commands); }
TEST(oom_defer_mode) { oom_sweep("defer", scen_defer); }
TEST(oom_change_stamps) { oom_sweep("changes", scen_changes); }
TEST(oom_prefabs) { oom_sweep("prefabs", scen_prefabs); }
TEST(oom_sorted_loops) { oom_sweep("sorted", scen_sorted); }

/* The hook itself: counting, failing one request, tracking moved blocks. */
TEST(oom_hook_self_test) {
    oom_hook k;
    memset(&k, 0, sizeof k);
    k.fail_at = 2;
    void *a = oom_realloc(NULL, 10, &k);
    CHECK(a && k.live == 1 && k.bytes == 10);
    void *b = oom_realloc(a, 1000, &k);  /* the 2nd request fails; a survives */
    CHECK(!b && k.injected == 1 && k.live == 1 && k.bytes == 10);
    b = oom_realloc(a, 1000, &k);
    CHECK(b && k.live == 1 && k.bytes == 1000);
    CHECK(oom_realloc(b, 0, &k) == NULL && k.live == 0 && k.bytes == 0);
    CHECK(k.requests == 3);
}

void suite_oom(void) {
    RUN(oom_hook_self_test);
    RUN(oom_world_and_registration);
    RUN(oom_entities_and_tables);
    RUN(oom_queries_and_iteration);
    RUN(oom_command_buffers);
    RUN(oom_defer_mode);
    RUN(oom_change_stamps);
    RUN(oom_prefabs);
    RUN(oom_sorted_loops);
    RUN(oom_systems_and_validation);
    RUN(oom_frames);
}
