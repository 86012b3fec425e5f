/* safety soak: "ecs_validate says the graph is valid" must mean "no two
   systems ever touch the same data at the same time in a conflicting way".

   Random graphs (components, a tag, resources, two stages, 20-60 systems
   with random terms, reads/writes, chunking, MAIN_THREAD / EXCLUSIVE flags,
   after/before/independent_of, nested query iterations and deferred
   commands) over a few hundred to ~2000 entities run 100 frames each on 2, 3
   and 8 threads (half the graphs under a shuffled schedule, a third with
   the hash trace reading what systems wrote while others run). EXPLICIT
   and WRITERS_FIRST graphs usually have races; they
   are repaired from ecs_validate's report (an `after` edge or an
   independent_of entry per racing pair) until valid, or regenerated.

   The overlap detector: every (entity slot, id) pair, and every resource,
   has an atomic cell. While a system batch runs it holds a cell for each
   datum it touches - every row of every field it was handed, every ecs_get /
   ecs_get_mut on another entity, every resource, every row of a nested
   query - for reading (a count, refused while a writer holds the cell) or
   for writing (0 -> writer, refused while anyone holds it). A refusal is an
   overlap: two systems touched the same datum at once and one of them
   writes. A batch holds its cells for a short busy window and really reads
   and writes the values through the pointers it was given (so
   ThreadSanitizer and helgrind see the accesses); at release every value
   must still be what the batch last saw or wrote there, which also catches
   writers that hold no cell (the library itself, say).

   What a system touches stays inside what it declared: an id in its writes
   list (or, for reading, its reads list) on any entity; one it declared
   for that access only through its terms on the entities its query matches
   (it may run beside a disjoint query); in a chunked system, what it
   writes on its own batch only.

   Besides: every frame returns ECS_OK; an EXCLUSIVE system runs alone; a
   graph without independent_of ends in the same world on every thread
   count; a chunked system with a writes list is a SELF_RACE (the one
   problem the generator never makes).

   Systems report into per-thread slots indexed by it->thread; the cells and
   counters are C11 atomics (hidden from helgrind). A failure prints the seed
   (replay with --seed N: the first graph then uses N), the thread count and
   both systems' descriptions. Sizes and frames shrink with --scale. */
#include "test.h"

#include <stdatomic.h>
#include <time.h>


/* ---- helpers ---------------------------------------------------------------- */
static unsigned long long sk_mix64(unsigned long long x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* ---- limits ----------------------------------------------------------------- */
#define SK_MAX_SLOTS (1u << 16)        /* entity slots tracked; the population stays far below */
#define SK_MAX_IDS 24                  /* ecs ids are 1 .. 21 here */
#define SK_CELLS ((SK_MAX_SLOTS + 1u) * SK_MAX_IDS)   /* the last row: resources */
#define SK_MAX_COMPS 16
#define SK_MAX_RES 4
#define SK_MAX_OBJ (SK_MAX_COMPS + 1 + SK_MAX_RES)    /* components, the tag, resources */
#define SK_MAX_SYS 60
#define SK_THREADS 8
#define SK_HASH (1u << 16)             /* per-thread set of the cells a batch holds */
#define SK_LIST (1u << 15)

/* A cell: bits 0-15 readers, bit 16 a writer, bits 17-24 the system (1-based)
   that took it last (the writer, or one of the readers). */
#define SK_READERS 0xffffu
#define SK_WRITER (1u << 16)
#define SK_OWNER_SHIFT 17
#define SK_OWNER(v) ((int)(((v) >> SK_OWNER_SHIFT) & 0xffu))

/* ---- the random graph ------------------------------------------------------- */
typedef struct sk_term { int obj; ecs_access acc; ecs_oper oper; } sk_term;
typedef struct sk_def {
    int stage;
    uint32_t flags;
    int chunk;
    int nterms, nreads, nwrites, nafter, nbefore, nind, nnq;
    sk_term terms[4];
    int reads[8], writes[8];              /* objects: components or resources */
    int after[ECS_MAX_DEPS], before[ECS_MAX_DEPS], ind[ECS_MAX_DEPS];   /* system indices */
    sk_term nq[8];                        /* nested query terms (nnq 0: none) */
    int gets;                             /* ecs_get / ecs_get_mut calls per batch */
    bool cmds;                            /* records commands */
    bool cond;                            /* a run_if, which holds its resources' cells too */
    int interval;
} sk_def;

typedef struct sk_graph {
    unsigned long long seed;
    int attempt, repairs;
    ecs_order order;
    bool check_reads;
    bool use_ind;                         /* independent_of entries (random and repairs) */
    int nc, nres, nsys, ntpl, entities;
    int size[SK_MAX_OBJ];                 /* objects 0 .. nc-1 components, nc the tag,
                                             nc+1 .. nc+nres resources */
    sk_def sys[SK_MAX_SYS];
    char name[SK_MAX_SYS][16];
    uint32_t tpl[32];                     /* entity templates: bit per component / the tag */
    int toggle[2];                        /* components commands add and remove */
} sk_graph;

static bool sk_is_res(const sk_graph *G, int obj) { return obj > G->nc; }

static const char *sk_order_name(ecs_order o) {
    return o == ECS_ORDER_INSERTION ? "INSERTION" : o == ECS_ORDER_EXPLICIT ? "EXPLICIT" : "WRITERS_FIRST";
}
static void sk_obj_name(const sk_graph *G, int obj, char *buf, size_t n) {
    if (obj < G->nc) snprintf(buf, n, "C%d", obj);
    else if (obj == G->nc) snprintf(buf, n, "Tag");
    else snprintf(buf, n, "R%d", obj - G->nc - 1);
}

/* What system i declared on obj, by the library's rule (NOT terms access
   nothing): 0 nothing, 1 read, 2 write. */
static int sk_declared(const sk_graph *G, int i, int obj) {
    const sk_def *d = &G->sys[i];
    int a = 0;
    for (int k = 0; k < d->nterms; k++)
        if (d->terms[k].obj == obj && d->terms[k].oper != ECS_NOT)
            a = d->terms[k].acc == ECS_WRITE ? 2 : a > 1 ? a : 1;
    for (int k = 0; k < d->nreads; k++) if (d->reads[k] == obj && !a) a = 1;
    for (int k = 0; k < d->nwrites; k++) if (d->writes[k] == obj) a = 2;
    return a;
}

static void sk_def_print(const sk_graph *G, int i, FILE *out) {
    const sk_def *d = &G->sys[i];
    char b[16];
    static const char *opers[3] = {"AND", "NOT", "OPTIONAL"};
    fprintf(out, "    %s: stage %d%s%s chunk_size %d terms {", G->name[i], d->stage,
            d->flags & ECS_SYSTEM_MAIN_THREAD ? " MAIN_THREAD" : "",
            d->flags & ECS_SYSTEM_EXCLUSIVE ? " EXCLUSIVE" : "", d->chunk);
    for (int k = 0; k < d->nterms; k++) {
        sk_obj_name(G, d->terms[k].obj, b, sizeof b);
        fprintf(out, "%s%s %s %s", k ? ", " : "", b, d->terms[k].acc == ECS_WRITE ? "WRITE" : "READ",
                opers[d->terms[k].oper]);
    }
    fprintf(out, "} reads {");
    for (int k = 0; k < d->nreads; k++) { sk_obj_name(G, d->reads[k], b, sizeof b); fprintf(out, "%s%s", k ? ", " : "", b); }
    fprintf(out, "} writes {");
    for (int k = 0; k < d->nwrites; k++) { sk_obj_name(G, d->writes[k], b, sizeof b); fprintf(out, "%s%s", k ? ", " : "", b); }
    fprintf(out, "} after {");
    for (int k = 0; k < d->nafter; k++) fprintf(out, "%s%s", k ? ", " : "", G->name[d->after[k]]);
    fprintf(out, "} before {");
    for (int k = 0; k < d->nbefore; k++) fprintf(out, "%s%s", k ? ", " : "", G->name[d->before[k]]);
    fprintf(out, "} independent_of {");
    for (int k = 0; k < d->nind; k++) fprintf(out, "%s%s", k ? ", " : "", G->name[d->ind[k]]);
    fprintf(out, "} nested {");
    for (int k = 0; k < d->nnq; k++) {
        sk_obj_name(G, d->nq[k].obj, b, sizeof b);
        fprintf(out, "%s%s %s %s", k ? ", " : "", b, d->nq[k].acc == ECS_WRITE ? "WRITE" : "READ",
                opers[d->nq[k].oper]);
    }
    fprintf(out, "} gets %d%s%s", d->gets, d->cmds ? " commands" : "", d->cond ? " run_if" : "");
    if (d->interval) fprintf(out, " interval %d", d->interval);
    fputc('\n', out);
}

static bool sk_has(const int *list, int n, int v) {
    for (int k = 0; k < n; k++) if (list[k] == v) return true;
    return false;
}

/* Whether system d declared obj in its lists for this access: then it may
   touch obj on any entity; else (declared only through its terms) only on
   the entities its query matches, since it may run beside a system whose
   query is disjoint from its own (AND x against NOT x). A reads entry does
   not widen a write that only a WRITE term declares. */
static bool sk_listed(const sk_def *d, int obj, bool write) {
    return sk_has(d->writes, d->nwrites, obj) || (!write && sk_has(d->reads, d->nreads, obj));
}

/* A nested query over an id the system may touch only inside its query's
   tables also carries the system's AND and NOT terms. (A chunked system
   whose AND terms write cannot: its nested queries may not touch what it
   writes.) */
static void sk_nested_scope(sk_def *d) {
    bool need = false;
    for (int k = 0; k < d->nnq; k++)
        need |= d->nq[k].oper != ECS_NOT && !sk_listed(d, d->nq[k].obj, d->nq[k].acc == ECS_WRITE);
    if (!need) return;
    sk_term out[8];
    int n = 0;
    for (int k = 0; k < d->nterms; k++) {
        const sk_term *t = &d->terms[k];
        if (t->oper == ECS_OPTIONAL) continue;
        if (d->chunk && t->oper == ECS_AND && t->acc == ECS_WRITE) { d->nnq = 0; return; }
        out[n++] = (sk_term){t->obj, ECS_READ, t->oper};
    }
    for (int k = 0; k < d->nnq; k++) {
        const sk_term *c = &d->nq[k];
        int j = 0;
        while (j < n && out[j].obj != c->obj) j++;
        if (j == n) out[n++] = *c;
        else if (out[j].oper == ECS_AND && c->oper != ECS_NOT && c->acc == ECS_WRITE) out[j].acc = ECS_WRITE;
    }
    memcpy(d->nq, out, sizeof out[0] * (size_t)n);
    d->nnq = n;
}

static void sk_gen(unsigned long long seed, int attempt, sk_graph *G) {
    memset(G, 0, sizeof *G);
    unsigned long long r = seed + (unsigned long long)attempt * 0x632BE59BD9B4E019ull;
    G->seed = seed;
    G->attempt = attempt;
    unsigned o = test_below(&r, 100);
    G->order = o < 70 ? ECS_ORDER_INSERTION : o < 85 ? ECS_ORDER_WRITERS_FIRST : ECS_ORDER_EXPLICIT;
    G->check_reads = test_below(&r, 4) == 0;
    G->use_ind = G->order == ECS_ORDER_WRITERS_FIRST || test_below(&r, 2);   /* WRITERS_FIRST repairs need them */
    G->nc = 8 + (int)test_below(&r, 9);
    static const int sizes[6] = {4, 4, 4, 8, 12, 16};
    for (int c = 0; c < G->nc; c++) G->size[c] = sizes[test_below(&r, 6)];
    G->size[G->nc] = 0;
    G->nres = 2 + (int)test_below(&r, 3);
    for (int k = 0; k < G->nres; k++) G->size[G->nc + 1 + k] = test_below(&r, 2) ? 4 : 8;
    G->nsys = 20 + (int)test_below(&r, 41);
    G->ntpl = 8 + (int)test_below(&r, 17);
    for (int t = 0; t < G->ntpl; t++) {
        uint32_t m = 0;
        for (int c = 0; c < G->nc; c++) if (test_below(&r, 5) < 2) m |= 1u << c;
        if (test_below(&r, 3) == 0) m |= 1u << G->nc;
        G->tpl[t] = m;
    }
    G->toggle[0] = (int)test_below(&r, (unsigned)G->nc);
    G->toggle[1] = (G->toggle[0] + 1 + (int)test_below(&r, (unsigned)G->nc - 1)) % G->nc;
    G->entities = (int)test_scaled(300 + (long)test_below(&r, 1701), 40);

    int n = G->nsys;
    for (int i = 0; i < n; i++) {
        snprintf(G->name[i], sizeof G->name[i], "s%02d", i);
        G->sys[i].stage = test_below(&r, 3) == 0;
    }
    int p_edge = G->order == ECS_ORDER_WRITERS_FIRST ? 5 : 15;
    for (int i = 0; i < n; i++) {
        sk_def *d = &G->sys[i];
        unsigned kind = test_below(&r, 100);
        if (G->order == ECS_ORDER_INSERTION && kind < 2) d->flags = ECS_SYSTEM_EXCLUSIVE;
        else if (kind < 10) d->flags = ECS_SYSTEM_MAIN_THREAD;
        int nt = (int)test_below(&r, 5);
        if ((d->flags & ECS_SYSTEM_EXCLUSIVE) && test_below(&r, 2)) nt = 0;   /* it may change structure */
        for (int k = 0; k < nt; k++) {
            int c = (int)test_below(&r, (unsigned)G->nc + 1);   /* the tag too */
            bool used = false;
            for (int q = 0; q < d->nterms; q++) used |= d->terms[q].obj == c;
            if (used) continue;
            unsigned op = test_below(&r, 100);
            sk_term *t = &d->terms[d->nterms++];
            t->obj = c;
            t->oper = op < 70 ? ECS_AND : op < 85 ? ECS_NOT : ECS_OPTIONAL;
            t->acc = test_below(&r, 100) < 35 ? ECS_WRITE : ECS_READ;
        }
        if (!d->flags && d->nterms && test_below(&r, 100) < 40) {
            static const int chunks[5] = {1, 7, 7, 64, 64};
            d->chunk = chunks[test_below(&r, 5)];
        }
        for (int k = 0; k < G->nres; k++) {
            int obj = G->nc + 1 + k;
            unsigned a = test_below(&r, 100);
            if (a < 15) d->reads[d->nreads++] = obj;
            else if (a < 25 && !d->chunk) d->writes[d->nwrites++] = obj;   /* else a SELF_RACE */
        }
        for (int k = (int)test_below(&r, 3); k > 0; k--) {
            int c = (int)test_below(&r, (unsigned)G->nc);
            if (!sk_has(d->reads, d->nreads, c)) d->reads[d->nreads++] = c;
        }
        if (!d->chunk) {
            unsigned a = test_below(&r, 100);
            for (int k = a < 60 ? 0 : a < 90 ? 1 : 2; k > 0; k--) {
                int c = (int)test_below(&r, (unsigned)G->nc);
                if (!sk_has(d->writes, d->nwrites, c)) d->writes[d->nwrites++] = c;
            }
        }
        d->gets = 1 + (int)test_below(&r, 4);
        if (test_below(&r, 100) < 18) {   /* a nested query over what it declared */
            int cand[SK_MAX_COMPS], cw[SK_MAX_COMPS], nc = 0;
            for (int c = 0; c < G->nc; c++) {
                int a = sk_declared(G, i, c);
                if (!a || (d->chunk && a == 2)) continue;   /* chunked: nothing it writes */
                cand[nc] = c; cw[nc++] = a == 2;
            }
            for (int k = 1 + (int)test_below(&r, 2); k > 0 && nc > 0; k--) {
                int x = (int)test_below(&r, (unsigned)nc);
                sk_term *t = &d->nq[d->nnq++];
                t->obj = cand[x];
                t->acc = cw[x] && test_below(&r, 2) ? ECS_WRITE : ECS_READ;
                t->oper = test_below(&r, 4) ? ECS_AND : ECS_OPTIONAL;
                cand[x] = cand[--nc]; cw[x] = cw[nc];
            }
            if (d->nnq && test_below(&r, 3) == 0) {   /* NOT terms need no declaration */
                int c = (int)test_below(&r, (unsigned)G->nc + 1);
                bool used = false;
                for (int q = 0; q < d->nnq; q++) used |= d->nq[q].obj == c;
                if (!used) d->nq[d->nnq++] = (sk_term){c, ECS_READ, ECS_NOT};
            }
            sk_nested_scope(d);
        }
        d->cmds = test_below(&r, 100) < 25 || (d->flags & ECS_SYSTEM_EXCLUSIVE);
        d->cond = test_below(&r, 100) < 25;
        d->interval = test_below(&r, 100) < 10 ? 2 + (int)test_below(&r, 3) : 0;
        if (i > 0 && (int)test_below(&r, 100) < p_edge) {
            int j = (int)test_below(&r, (unsigned)i);
            if (G->sys[j].stage == d->stage) d->after[d->nafter++] = j;
        }
        if (i + 1 < n && (int)test_below(&r, 100) < p_edge) {
            int j = i + 1 + (int)test_below(&r, (unsigned)(n - i - 1));
            if (G->sys[j].stage == d->stage) d->before[d->nbefore++] = j;
        }
        for (int k = G->use_ind && test_below(&r, 100) < 20 ? 1 + (int)test_below(&r, 2) : 0; k > 0; k--) {
            int j = (int)test_below(&r, (unsigned)n);
            if (j != i && G->sys[j].stage == d->stage && !sk_has(d->ind, d->nind, j)) d->ind[d->nind++] = j;
        }
    }
}

/* ---- shared run state ------------------------------------------------------------ */
typedef struct sk_hold {
    uint32_t cell, hslot;
    uint32_t *ptr;             /* the datum's first 4 bytes */
    uint32_t val;              /* what this batch last saw or wrote there */
    bool write;
} sk_hold;
typedef struct sk_scratch {    /* one per thread index: what the running batch holds */
    uint32_t *hkey;            /* cell + 1, 0 = empty */
    uint32_t *hidx;            /* index into list */
    sk_hold *list;
    uint32_t n;
} sk_scratch;

typedef struct sk_slot {       /* per thread index; read by the test after ecs_progress */
    long fails;
    int line;
    const char *what;
    long batches, holds, overflow;
    uint32_t sink;
    char pad[64];
} sk_slot;
static sk_slot sk_slots[SK_THREADS + 1];   /* the last: it->thread out of range */

typedef struct sk_atoms {      /* shared across threads: atomics only */
    atomic_long overlaps, torn, corrupt;
    atomic_int first, f_me, f_other, f_obj, f_kind;
    atomic_uint f_slot;
    atomic_long f_frame;
    atomic_int running, excl, max_running;
    atomic_long emitted, bad_events;   /* events: emitted, and read with a wrong payload */
} sk_atoms;

struct sk_run;
typedef struct sk_sysctx {
    struct sk_run *run;
    int index;
    ecs_query *nq;
    int ntarget;               /* what ecs_get / ecs_get_mut may touch */
    int tobj[SK_MAX_COMPS];
    bool twrite[SK_MAX_COMPS];
    bool tlisted[SK_MAX_COMPS];   /* sk_listed: on any entity, not only its query's */
    bool emits, reads;         /* events: every batch emits one; reads them all */
    atomic_long seen;
} sk_sysctx;

typedef struct sk_run {
    const sk_graph *G;
    ecs_world *w;
    int threads;
    ecs_id ids[SK_MAX_OBJ];
    int obj_of_id[SK_MAX_IDS];
    ecs_id event;              /* sk_event, which systems emit and read beside everything else */
    sk_atoms *at;
    _Atomic unsigned *cells;
    sk_scratch *scratch;       /* SK_THREADS + 1 */
    sk_sysctx sys[SK_MAX_SYS];
    ecs_entity *snap;          /* the live entities before this frame */
    uint32_t snap_n;
    long frame;
    double spin;
} sk_run;

#define SK_TCHECK(it, cond) do { if (!(cond)) { sk_slot *s_ = sk_slot_of(it); \
    if (!s_->fails++) { s_->line = __LINE__; s_->what = #cond; } } } while (0)
static sk_slot *sk_slot_of(const ecs_iter *it) {
    return &sk_slots[it->thread >= 0 && it->thread < SK_THREADS ? it->thread : SK_THREADS];
}

enum { SK_WRITE_VS_HELD, SK_READ_VS_WRITER, SK_UPGRADE_VS_READERS, SK_VALUE_CHANGED };
static const char *const sk_kind_text[4] = {
    "a write found the datum held", "a read found a writer holding the datum",
    "a read turned into a write found other readers", "a held value changed under the holder"};

static void sk_note(sk_run *R, int me, unsigned seen, uint32_t cell, int kind) {
    sk_atoms *a = R->at;
    atomic_fetch_add(kind == SK_VALUE_CHANGED ? &a->torn : &a->overlaps, 1);
    int zero = 0;
    if (!atomic_compare_exchange_strong(&a->first, &zero, 1)) return;
    atomic_store(&a->f_me, me);
    atomic_store(&a->f_other, SK_OWNER(seen));
    atomic_store(&a->f_obj, (int)(cell % SK_MAX_IDS));
    atomic_store(&a->f_slot, cell / SK_MAX_IDS);
    atomic_store(&a->f_kind, kind);
    atomic_store(&a->f_frame, R->frame);
}

static uint32_t sk_hash(uint32_t cell) { return (cell * 2654435761u) >> 16; }

/* Takes cell for reading or writing (a batch holds each cell once; a second
   touch of its own datum is no overlap) and touches the value. Returns the
   hold, or NULL after an overlap. */
static sk_hold *sk_acquire(sk_run *R, sk_scratch *S, sk_slot *slot, int me, uint32_t cell, bool write, void *ptr) {
    uint32_t h = sk_hash(cell) & (SK_HASH - 1);
    uint32_t *p = (uint32_t *)ptr;
    while (S->hkey[h]) {
        if (S->hkey[h] == cell + 1) {
            sk_hold *e = &S->list[S->hidx[h]];
            if (e->ptr != p) {   /* one datum, one address */
                atomic_fetch_add(&R->at->corrupt, 1);
                return NULL;
            }
            if (!write || e->write) { slot->sink += *p; return e; }
            unsigned v = atomic_load(&R->cells[cell]);
            unsigned mine = SK_WRITER | ((unsigned)me << SK_OWNER_SHIFT);
            if ((v & SK_WRITER) || (v & SK_READERS) != 1 ||
                !atomic_compare_exchange_strong(&R->cells[cell], &v, mine)) {
                sk_note(R, me, v, cell, SK_UPGRADE_VS_READERS);
                return NULL;
            }
            e->write = true;
            *p = *p * 3u + (uint32_t)me;
            e->val = *p;
            return e;
        }
        h = (h + 1) & (SK_HASH - 1);
    }
    if (S->n == SK_LIST) { slot->overflow++; return NULL; }
    _Atomic unsigned *c = &R->cells[cell];
    unsigned own = (unsigned)me << SK_OWNER_SHIFT;
    if (write) {
        unsigned exp = 0;
        if (!atomic_compare_exchange_strong(c, &exp, SK_WRITER | own)) {
            sk_note(R, me, exp, cell, SK_WRITE_VS_HELD);
            return NULL;
        }
    } else {
        unsigned v = atomic_load(c);
        do {
            if (v & SK_WRITER) { sk_note(R, me, v, cell, SK_READ_VS_WRITER); return NULL; }
            if ((v & SK_READERS) == SK_READERS) { atomic_fetch_add(&R->at->corrupt, 1); return NULL; }
        } while (!atomic_compare_exchange_weak(c, &v, ((v & SK_READERS) + 1) | own));
    }
    sk_hold *e = &S->list[S->n];
    S->hkey[h] = cell + 1;
    S->hidx[h] = S->n++;
    e->cell = cell;
    e->hslot = h;
    e->ptr = p;
    e->write = write;
    if (write) *p = *p * 3u + (uint32_t)me;
    e->val = *p;
    slot->sink += e->val;
    slot->holds++;
    return e;
}

/* Checks every held value and lets go of everything, newest first. */
/* Lets go of one read hold on cell c (the last reader clears the owner). */
static void sk_read_release(sk_run *R, _Atomic unsigned *c) {
    unsigned v = atomic_load(c), nv;
    do {
        if ((v & SK_WRITER) || !(v & SK_READERS)) { atomic_fetch_add(&R->at->corrupt, 1); break; }
        nv = (v & SK_READERS) - 1;
        if (nv) nv |= v & ~(SK_READERS | SK_WRITER);
    } while (!atomic_compare_exchange_weak(c, &v, nv));
}

static void sk_release_all(sk_run *R, sk_scratch *S, int me) {
    for (uint32_t i = S->n; i-- > 0;) {
        sk_hold *e = &S->list[i];
        if (*e->ptr != e->val) sk_note(R, me, atomic_load(&R->cells[e->cell]), e->cell, SK_VALUE_CHANGED);
        _Atomic unsigned *c = &R->cells[e->cell];
        if (e->write) {
            unsigned exp = SK_WRITER | ((unsigned)me << SK_OWNER_SHIFT);
            if (!atomic_compare_exchange_strong(c, &exp, 0)) atomic_fetch_add(&R->at->corrupt, 1);
        } else {
            sk_read_release(R, c);
        }
        S->hkey[e->hslot] = 0;
    }
    S->n = 0;
}

static uint32_t sk_cell_of(ecs_entity e, ecs_id id) {
    return (uint32_t)e * SK_MAX_IDS + id;
}

/* Acquires every row of the batch or nested batch `b` for each non-NOT
   sized term. */
static void sk_take_rows(sk_run *R, sk_scratch *S, sk_slot *slot, int me, const ecs_iter *it,
                         const ecs_iter *b, const sk_term *terms, int nterms) {
    const sk_graph *G = R->G;
    for (int k = 0; k < nterms; k++) {
        const sk_term *t = &terms[k];
        size_t size = (size_t)G->size[t->obj];
        if (t->oper == ECS_NOT) { SK_TCHECK(it, ecs_field(b, k) == NULL); continue; }
        if (!size) { SK_TCHECK(it, ecs_field(b, k) == NULL); continue; }
        unsigned char *col = (unsigned char *)ecs_field_sized(b, k, size);
        if (t->oper == ECS_AND) SK_TCHECK(it, col != NULL || b->count == 0);
        if (!col) continue;
        ecs_id id = R->ids[t->obj];
        for (int i = 0; i < b->count; i++) {
            ecs_entity e = b->entities[i];
            if ((uint32_t)e >= SK_MAX_SLOTS) { SK_TCHECK(it, (uint32_t)e < SK_MAX_SLOTS); continue; }
            sk_acquire(R, S, slot, me, sk_cell_of(e, id), t->acc == ECS_WRITE, col + (size_t)i * size);
        }
    }
}

/* Whether e matches the system's query (its AND and NOT terms). */
static bool sk_matches(const sk_run *R, const sk_def *d, ecs_world *w, ecs_entity e) {
    for (int k = 0; k < d->nterms; k++) {
        bool has = ecs_has(w, e, R->ids[d->terms[k].obj]);
        if ((d->terms[k].oper == ECS_AND && !has) || (d->terms[k].oper == ECS_NOT && has)) return false;
    }
    return true;
}

/* Events ride along: emitters and readers never conflict, so a random graph
   stays valid whatever it adds, and under TSan every emit (into its chunk's
   buffer) and every read (of the delivered array) runs beside the rest. */
typedef struct sk_event { uint32_t frame, sys, chunk, check; } sk_event;
static uint32_t sk_event_check(const sk_event *e) { return (e->frame * 31u + e->sys) * 31u + e->chunk; }
static void sk_events(ecs_iter *it, sk_sysctx *x) {
    sk_run *R = x->run;
    if (x->emits) {
        sk_event e = {(uint32_t)R->frame, (uint32_t)it->system, (uint32_t)it->chunk, 0};
        e.check = sk_event_check(&e);
        if (it->system & 1) {   /* odd systems through their batch's emitter */
            sk_event *to = (sk_event *)ecs_emitter_next(ECS_EMITTER(it, sk_event, R->event), sizeof e);
            SK_TCHECK(it, to != NULL);
            if (to) *to = e;
        } else {
            SK_TCHECK(it, ecs_emit(it, R->event, &e) == ECS_OK);
        }
        atomic_fetch_add(&R->at->emitted, 1);
    }
    if (!x->reads || (it->batch && !x->run->G->sys[x->index].chunk)) return;   /* once a run (a chunk each) */
    int n;
    const sk_event *ev = ECS_EVENTS(it, sk_event, R->event, &n);
    long bad = 0;
    for (int i = 0; i < n; i++)
        bad += ev[i].check != sk_event_check(&ev[i]) || ev[i].frame > (uint32_t)R->frame ||
               ev[i].sys < 1 || ev[i].sys > (uint32_t)R->G->nsys;
    if (bad) atomic_fetch_add(&R->at->bad_events, bad);
    if (!it->chunk) atomic_fetch_add(&x->seen, n);
}

static void sk_fn(ecs_iter *it) {
    sk_sysctx *x = (sk_sysctx *)it->ctx;
    sk_run *R = x->run;
    const sk_graph *G = R->G;
    const sk_def *d = &G->sys[x->index];
    ecs_world *w = it->world;
    sk_slot *slot = sk_slot_of(it);
    int th = it->thread >= 0 && it->thread < SK_THREADS ? it->thread : SK_THREADS;
    sk_scratch *S = &R->scratch[th];
    int me = (int)it->system;
    bool excl = (d->flags & ECS_SYSTEM_EXCLUSIVE) != 0;
    SK_TCHECK(it, it->thread >= 0 && it->thread < ecs_thread_count(w));
    SK_TCHECK(it, me == x->index + 1);
    SK_TCHECK(it, S->n == 0);
    if (d->flags) SK_TCHECK(it, it->thread == 0);
    if (d->chunk) SK_TCHECK(it, it->count > 0 && it->count <= d->chunk);
    else SK_TCHECK(it, it->chunk == 0);
    if (!d->nterms) SK_TCHECK(it, it->count == 0);
    slot->batches++;

    sk_atoms *a = R->at;
    if (excl) atomic_fetch_add(&a->excl, 1);
    int running = atomic_fetch_add(&a->running, 1) + 1;
    int mx = atomic_load(&a->max_running);
    while (running > mx && !atomic_compare_exchange_weak(&a->max_running, &mx, running)) {}
    if (excl) SK_TCHECK(it, running == 1);
    else SK_TCHECK(it, atomic_load(&a->excl) == 0);

    unsigned long long r = sk_mix64((unsigned long long)R->frame * 0x9E3779B97F4A7C15ull ^
                                    (unsigned long long)me << 40 ^ (unsigned long long)it->chunk << 20 ^
                                    (it->count ? it->entities[0] : 0) ^ G->seed);

    /* an EXCLUSIVE system without terms (no batch table out) changes
       structure at once, before it holds anything: despawns a snapshot
       entity, spawns one */
    if (excl && d->cmds && !d->nterms) {
        ecs_entity e = R->snap_n ? R->snap[test_below(&r, R->snap_n)] : 0;
        if (e && ecs_is_alive(w, e)) SK_TCHECK(it, ecs_destroy(w, e) == ECS_OK);
        uint32_t m = G->tpl[test_below(&r, (unsigned)G->ntpl)];
        ecs_id ids[SK_MAX_COMPS + 1];
        size_t k = 0;
        for (int c = 0; c <= G->nc; c++) if (m >> c & 1u) ids[k++] = R->ids[c];
        SK_TCHECK(it, ecs_create_many(w, 1, ids, k, NULL) == ECS_OK);
    }

    /* 1. the batch's own rows */
    sk_take_rows(R, S, slot, me, it, it, d->terms, d->nterms);

    /* 2. resources */
    for (int k = 0; k < d->nreads + d->nwrites; k++) {
        bool wr = k >= d->nreads;
        int obj = wr ? d->writes[k - d->nreads] : d->reads[k];
        if (!sk_is_res(G, obj)) continue;
        void *p = ecs_resource_get(w, R->ids[obj]);
        SK_TCHECK(it, p != NULL);
        if (p) sk_acquire(R, S, slot, me, SK_MAX_SLOTS * SK_MAX_IDS + R->ids[obj], wr && !d->chunk, p);
    }
    if (excl)   /* it may touch every resource */
        for (int k = 0; k < G->nres; k++) {
            int obj = G->nc + 1 + k;
            void *p = ecs_resource_get(w, R->ids[obj]);
            SK_TCHECK(it, p != NULL);
            if (p) sk_acquire(R, S, slot, me, SK_MAX_SLOTS * SK_MAX_IDS + R->ids[obj], true, p);
        }

    /* 3. ecs_get / ecs_get_mut (sometimes then ecs_set) on other entities (a
       chunked system: on its own batch only for what it writes; what it
       declared only through its terms: on entities its query matches) */
    for (int g = 0; g < d->gets && x->ntarget; g++) {
        int t = (int)test_below(&r, (unsigned)x->ntarget);
        bool wr = x->twrite[t];
        ecs_id id = R->ids[x->tobj[t]];
        ecs_entity e = 0;
        if ((d->chunk && wr) || test_below(&r, 3) == 0) {
            if (it->count) e = it->entities[test_below(&r, (unsigned)it->count)];
        } else if (R->snap_n) {
            e = R->snap[test_below(&r, R->snap_n)];
            if (!excl && !x->tlisted[t] && !sk_matches(R, d, w, e))
                e = it->count ? it->entities[test_below(&r, (unsigned)it->count)] : 0;
        }
        if (!e) continue;
        void *p = wr ? ecs_get_mut(w, e, id) : (void *)ecs_get(w, e, id);
        SK_TCHECK(it, p != NULL || !ecs_has(w, e, id));
        if (!p) continue;
        if ((uint32_t)e >= SK_MAX_SLOTS) { SK_TCHECK(it, (uint32_t)e < SK_MAX_SLOTS); continue; }
        sk_hold *hd = sk_acquire(R, S, slot, me, sk_cell_of(e, id), wr, p);
        if (hd && hd->write && test_below(&r, 4) == 0) {   /* a value write through ecs_set */
            unsigned char buf[16];
            uint32_t v = hd->val * 3u + (uint32_t)me;
            memcpy(buf, p, (size_t)G->size[x->tobj[t]]);
            memcpy(buf, &v, sizeof v);
            SK_TCHECK(it, ecs_set(w, e, id, buf) == ECS_OK);
            hd->val = v;
        }
    }

    /* 4. a nested query over what it declared */
    if (x->nq) {
        long rows = 0;
        for (ecs_iter q = ecs_query_iter(w, x->nq); ecs_query_next(&q);) {
            rows += q.count;
            sk_take_rows(R, S, slot, me, it, &q, d->nq, d->nnq);
        }
        SK_TCHECK(it, rows == (long)ecs_query_count(w, x->nq));
    }

    /* 5. deferred commands: spawn from a template (now and then a wave: sync points big enough
          to be shared by the threads), despawn, toggle */
    if (d->cmds) {
        unsigned spawns = test_below(&r, 8) == 0 ? 1 : 0;
        if (test_below(&r, 48) == 0) spawns = 16 + test_below(&r, 48);
        for (unsigned k = 0; k < spawns; k++) {
            ecs_entity ne = ecs_cmd_create(it->commands);
            SK_TCHECK(it, ne != 0);
            uint32_t m = G->tpl[test_below(&r, (unsigned)G->ntpl)];
            for (int c = 0; ne && c <= G->nc; c++) {
                if (!(m >> c & 1u)) continue;
                uint32_t val[4] = {(uint32_t)test_rand(&r), 1, 2, 3};
                ecs_result cr = G->size[c] ? ecs_cmd_set(it->commands, ne, R->ids[c], val)
                                           : ecs_cmd_add(it->commands, ne, R->ids[c]);
                SK_TCHECK(it, cr == ECS_OK);
            }
        }
        if (it->count && test_below(&r, 8) == 0)
            SK_TCHECK(it, ecs_cmd_destroy(it->commands, it->entities[test_below(&r, (unsigned)it->count)]) == ECS_OK);
        if (it->count && test_below(&r, 6) == 0) {
            ecs_entity e = it->entities[test_below(&r, (unsigned)it->count)];
            ecs_id id = R->ids[G->toggle[test_below(&r, 2)]];
            uint32_t val[4] = {7, 7, 7, 7};
            unsigned op = test_below(&r, 3);
            ecs_result cr = op == 0 ? ecs_cmd_add(it->commands, e, id)
                          : op == 1 ? ecs_cmd_remove(it->commands, e, id)
                                    : ecs_cmd_set(it->commands, e, id, val);
            SK_TCHECK(it, cr == ECS_OK);
        }
    }

    /* 6. hold it all for a moment, then check and let go */
    if (it->count >= 8 || it->count == 0 || test_below(&r, 16) == 0)
        test_spin_us(R->spin * (double)(1 + test_below(&r, 4)));
    if (excl) SK_TCHECK(it, atomic_load(&a->running) == 1);
    else SK_TCHECK(it, atomic_load(&a->excl) == 0);
    sk_events(it, x);
    sk_release_all(R, S, me);
    atomic_fetch_sub(&a->running, 1);
    if (excl) atomic_fetch_sub(&a->excl, 1);
}

/* A system's run_if: it is asked under the system's declarations, so it
   holds read cells on the resources the system declared, for a moment, like
   a batch (an overlap is a condition asked beside a conflicting writer). It
   says yes three times in four, by frame and system: the same on every
   thread count. */
static bool sk_cond(ecs_world *w, void *ctx) {
    sk_sysctx *x = (sk_sysctx *)ctx;
    sk_run *R = x->run;
    const sk_def *d = &R->G->sys[x->index];
    int me = x->index + 1, n = 0;
    uint32_t cells[16], vals[16];
    const uint32_t *ptrs[16];
    for (int k = 0; k < d->nreads + d->nwrites; k++) {
        int obj = k < d->nreads ? d->reads[k] : d->writes[k - d->nreads];
        if (!sk_is_res(R->G, obj)) continue;
        uint32_t cell = SK_MAX_SLOTS * SK_MAX_IDS + R->ids[obj];
        bool held = false;
        for (int i = 0; i < n; i++) held |= cells[i] == cell;
        const uint32_t *p = (const uint32_t *)ecs_resource_get(w, R->ids[obj]);
        if (held || !p) continue;
        _Atomic unsigned *c = &R->cells[cell];
        unsigned v = atomic_load(c);
        bool got = true;
        do {
            if (v & SK_WRITER) { sk_note(R, me, v, cell, SK_READ_VS_WRITER); got = false; break; }
        } while (!atomic_compare_exchange_weak(c, &v, ((v & SK_READERS) + 1) | ((unsigned)me << SK_OWNER_SHIFT)));
        if (!got) continue;
        cells[n] = cell; ptrs[n] = p; vals[n++] = *p;
    }
    if (n) test_spin_us(R->spin);
    while (n-- > 0) {
        if (*ptrs[n] != vals[n]) sk_note(R, me, atomic_load(&R->cells[cells[n]]), cells[n], SK_VALUE_CHANGED);
        sk_read_release(R, &R->cells[cells[n]]);
    }
    return (sk_mix64(R->G->seed ^ (unsigned long long)R->frame * 0x9E3779B97F4A7C15ull ^ (unsigned long long)me) & 3) != 0;
}

/* ---- building a world from a graph -------------------------------------------------- */
/* Registers G's components, resources, stages and systems in a new world
   (R NULL: for validation only). */
static ecs_world *sk_build(const sk_graph *G, int threads, sk_run *R) {
    ecs_world_desc wd = {.threads = threads, .order = G->order, .check_reads = G->check_reads,
                         .shuffle_seed = G->seed & 2 ? G->seed | 1 : 0};   /* a valid graph is safe in any order */
    ecs_world *w = ecs_world_new(&wd);
    if (!w) return NULL;
    if (G->seed % 3 == 0) ecs_hash_trace_enable(w, true);   /* it reads what systems wrote while others run */
    ecs_id ids[SK_MAX_OBJ];
    char name[16];
    for (int o = 0; o <= G->nc + G->nres; o++) {
        sk_obj_name(G, o, name, sizeof name);
        ids[o] = sk_is_res(G, o) ? ecs_resource(w, name, (size_t)G->size[o], 0, NULL)
                                 : ecs_component(w, name, (size_t)G->size[o], 0);
        if (!ids[o] || ids[o] >= SK_MAX_IDS) { ecs_world_free(w); return NULL; }
        if (R) { R->ids[o] = ids[o]; R->obj_of_id[ids[o]] = o; }
    }
    ecs_stage second = ecs_stage_add(w, "second");
    ecs_id event = ECS_EVENT(w, sk_event);
    if (!second || !event) { ecs_world_free(w); return NULL; }
    if (R) R->event = event;
    for (int i = 0; i < G->nsys; i++) {
        const sk_def *s = &G->sys[i];
        ecs_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = G->name[i];
        d.fn = sk_fn;
        d.ctx = R ? &R->sys[i] : NULL;
        for (int k = 0; k < s->nterms; k++)
            d.terms[k] = (ecs_term){ids[s->terms[k].obj], s->terms[k].acc, s->terms[k].oper};
        for (int k = 0; k < s->nreads; k++) d.reads[k] = ids[s->reads[k]];
        unsigned long long ev = sk_mix64(G->seed ^ (unsigned long long)(i + 1) * 0xE7E27ull);   /* not G's stream */
        if (ev & 1) d.emits[0] = event;
        if (ev & 2) d.reads[s->nreads] = event;
        if (R) { R->sys[i].emits = ev & 1; R->sys[i].reads = (ev & 2) != 0; }
        for (int k = 0; k < s->nwrites; k++) d.writes[k] = ids[s->writes[k]];
        for (int k = 0; k < s->nafter; k++) d.after[k] = G->name[s->after[k]];
        for (int k = 0; k < s->nbefore; k++) d.before[k] = G->name[s->before[k]];
        for (int k = 0; k < s->nind; k++) d.independent_of[k] = G->name[s->ind[k]];
        d.stage = s->stage ? second : 0;
        d.flags = s->flags;
        d.chunk_size = s->chunk;
        d.run_if = s->cond ? sk_cond : NULL;
        d.run_if_ctx = d.ctx;
        d.interval = s->interval;
        if (ecs_system_add(w, &d) != (ecs_system)(i + 1)) { ecs_world_free(w); return NULL; }
    }
    return w;
}

/* Adds "b runs after a" or "a independent_of b" for a racing pair; false if
   every list is full. */
static bool sk_repair(sk_graph *G, int a, int b, unsigned long long *r) {
    sk_def *da = &G->sys[a], *db = &G->sys[b];
    bool edge = G->order == ECS_ORDER_EXPLICIT && a < b && (!G->use_ind || test_below(r, 4) != 0);   /* low -> high: no cycle */
    if (edge) {
        if (db->nafter < ECS_MAX_DEPS) { db->after[db->nafter++] = a; return true; }
        if (da->nbefore < ECS_MAX_DEPS) { da->before[da->nbefore++] = b; return true; }
    }
    if (!G->use_ind) return false;
    if (da->nind < ECS_MAX_DEPS) { da->ind[da->nind++] = b; return true; }
    if (db->nind < ECS_MAX_DEPS) { db->ind[db->nind++] = a; return true; }
    return false;
}

/* A valid graph for seed: generated, repaired from the validation report,
   regenerated (next attempt) when it has a cycle or cannot be repaired.
   False if no attempt gave one. */
static bool sk_make_graph(unsigned long long seed, sk_graph *G) {
    for (int attempt = 0; attempt < 8; attempt++) {
        sk_gen(seed, attempt, G);
        unsigned long long r = seed ^ 0xA5A5A5A5ull;
        for (int round = 0; round < 12; round++) {
            ecs_world *w = sk_build(G, 1, NULL);
            if (!w) { CHECKF(0, "seed %llu: could not build the graph", seed); return false; }
            ecs_report rep;
            ecs_result v = ecs_validate(w, &rep);
            if (v == ECS_OK) { ecs_world_free(w); return true; }
            bool fixable = v == ECS_ERR_INVALID_GRAPH, fixed = false;
            for (int p = 0; fixable && p < rep.count; p++) {
                const ecs_problem *pb = &rep.problems[p];
                if (pb->kind == ECS_PROBLEM_SELF_RACE) {   /* the generator never makes one */
                    CHECKF(0, "seed %llu: unexpected SELF_RACE: %s", seed, pb->message);
                    fixable = false;
                } else if (pb->kind == ECS_PROBLEM_RACE && pb->a && pb->b && pb->a != pb->b) {
                    fixable = sk_repair(G, (int)pb->a - 1, (int)pb->b - 1, &r);
                    fixed = true;
                } else {
                    fixable = false;   /* a cycle (WRITERS_FIRST against a declared edge) */
                }
            }
            ecs_world_free(w);
            if (!fixable || !fixed) break;
            G->repairs++;
        }
    }
    return false;
}

/* ---- running one graph on one thread count ---------------------------------------------- */
static void sk_snapshot(sk_run *R, ecs_query *all) {
    R->snap_n = 0;
    for (ecs_iter it = ecs_query_iter(R->w, all); ecs_query_next(&it);)
        for (int i = 0; i < it.count && R->snap_n < SK_MAX_SLOTS; i++) R->snap[R->snap_n++] = it.entities[i];
}

static void sk_create_from_template(sk_run *R, unsigned long long *r, int n) {
    const sk_graph *G = R->G;
    while (n > 0) {
        uint32_t m = G->tpl[test_below(r, (unsigned)G->ntpl)];
        ecs_id ids[SK_MAX_COMPS + 1];
        size_t k = 0;
        for (int c = 0; c <= G->nc; c++) if (m >> c & 1u) ids[k++] = R->ids[c];
        int batch = 1 + (int)test_below(r, 32);
        if (batch > n) batch = n;
        CHECK_EQ_INT(ecs_create_many(R->w, (size_t)batch, ids, k, NULL), ECS_OK);
        n -= batch;
    }
}

/* One graph on `threads`; returns the threads the world really had (0 on a
   setup failure). */
static int sk_run_graph(const sk_graph *G, int threads, long frames, sk_run *R, sk_atoms *at,
                        _Atomic unsigned *cells, sk_scratch *scratch, unsigned long long *hash) {
    ecs_entity *snap = R->snap;
    memset(R, 0, sizeof *R);
    R->G = G;
    R->threads = threads;
    R->at = at;
    R->cells = cells;
    R->scratch = scratch;
    R->snap = snap;
    R->spin = test_spin_len(1.0);
    memset(at, 0, sizeof *at);
    memset(sk_slots, 0, sizeof sk_slots);
    ecs_world *w = sk_build(G, threads, R);
    if (!w) { CHECKF(0, "seed %llu: could not build the world", G->seed); return 0; }
    R->w = w;
    int real_threads = ecs_thread_count(w);
    ecs_result v = ecs_validate(w, NULL);
    CHECKF(v == ECS_OK, "seed %llu, %d threads: the repaired graph does not validate: %s", G->seed,
           threads, ecs_last_error(w));
    unsigned long long r = G->seed ^ 0x5EEDull;
    sk_create_from_template(R, &r, G->entities);
    /* the systems' contexts: nested queries and get targets */
    bool ok = v == ECS_OK;
    for (int i = 0; i < G->nsys && ok; i++) {
        const sk_def *d = &G->sys[i];
        sk_sysctx *x = &R->sys[i];
        x->run = R;
        x->index = i;
        for (int c = 0; c < G->nc; c++) {
            /* an EXCLUSIVE system may also read what it did not declare (it
               writes only what it declared: check_reads would take a write
               into one of its READ columns for a write through the field) */
            int acc = sk_declared(G, i, c);
            if (!acc && (d->flags & ECS_SYSTEM_EXCLUSIVE)) acc = 1;
            if (!acc || !G->size[c]) continue;
            x->tobj[x->ntarget] = c;
            x->tlisted[x->ntarget] = sk_listed(d, c, acc == 2);
            x->twrite[x->ntarget++] = acc == 2;
        }
        if (d->nnq) {
            ecs_query_desc qd;
            memset(&qd, 0, sizeof qd);
            for (int k = 0; k < d->nnq; k++)
                qd.terms[k] = (ecs_term){R->ids[d->nq[k].obj], d->nq[k].acc, d->nq[k].oper};
            x->nq = ecs_query_new(w, &qd);
            CHECK(x->nq != NULL);
            ok = x->nq != NULL;
        }
    }
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    CHECK(all != NULL);
    ok = ok && all;
    long lo = G->entities * 3L / 4, hi = G->entities * 5L / 4;
    long frame_errors = 0;
    for (long f = 0; f < frames && ok; f++) {
        sk_snapshot(R, all);
        R->frame = f;
        ecs_result pr = ecs_progress(w, 1.0f / 60);
        if (pr != ECS_OK && !frame_errors++)
            CHECKF(0, "seed %llu, %d threads, frame %ld: ecs_progress: %s: %s (replay: --seed %llu)", G->seed,
                   threads, f, ecs_result_str(pr), ecs_last_error(w), G->seed);
        if (frame_errors > 3) break;
        /* keep the population near its target */
        sk_snapshot(R, all);
        if ((long)R->snap_n > hi) {
            for (long k = (long)R->snap_n - G->entities; k > 0 && R->snap_n; k--) {
                uint32_t j = test_below(&r, R->snap_n);
                CHECK_EQ_INT(ecs_destroy(w, R->snap[j]), ECS_OK);
                R->snap[j] = R->snap[--R->snap_n];
            }
        } else if ((long)R->snap_n < lo) {
            sk_create_from_template(R, &r, G->entities - (int)R->snap_n);
        }
    }
    /* the verdict */
    long ov = atomic_load(&at->overlaps), torn = atomic_load(&at->torn), corrupt = atomic_load(&at->corrupt);
    if (ov || torn) {
        int me = atomic_load(&at->f_me), other = atomic_load(&at->f_other), obj = atomic_load(&at->f_obj);
        int kind = atomic_load(&at->f_kind);
        unsigned slotx = atomic_load(&at->f_slot);
        char oname[16], where[48];
        if (obj > 0 && obj < SK_MAX_IDS) sk_obj_name(G, R->obj_of_id[obj], oname, sizeof oname);
        else snprintf(oname, sizeof oname, "id %d", obj);
        if (slotx >= SK_MAX_SLOTS) snprintf(where, sizeof where, "resource %s", oname);
        else snprintf(where, sizeof where, "%s of entity slot %u", oname, slotx);
        CHECKF(0, "seed %llu, %d threads, order %s, frame %ld: %ld overlaps, %ld changed values; first: "
               "%s, on %s: system %s, holder %s (replay: --seed %llu)", G->seed, real_threads,
               sk_order_name(G->order), atomic_load(&at->f_frame), ov, torn, sk_kind_text[kind], where,
               me >= 1 && me <= G->nsys ? G->name[me - 1] : "?",
               other >= 1 && other <= G->nsys ? G->name[other - 1] : "?", G->seed);
        if (me >= 1 && me <= G->nsys) sk_def_print(G, me - 1, stderr);
        if (other >= 1 && other <= G->nsys && other != me) sk_def_print(G, other - 1, stderr);
    }
    CHECKF(corrupt == 0, "seed %llu, %d threads: %ld inconsistent cells", G->seed, real_threads, corrupt);
    CHECKF(atomic_load(&at->bad_events) == 0, "seed %llu, %d threads: %ld events read with a wrong payload",
           G->seed, real_threads, atomic_load(&at->bad_events));
    bool emitters = false;
    for (int i = 0; i < G->nsys; i++) emitters |= R->sys[i].emits;
    CHECKF(!ok || frames == 0 || !emitters || atomic_load(&at->emitted) > 0, "seed %llu: no event emitted", G->seed);
    for (int i = 0; i < G->nsys; i++)   /* each read once at most (the last frame's may be unread) */
        CHECKF(atomic_load(&R->sys[i].seen) <= atomic_load(&at->emitted), "seed %llu: %s read %ld events of %ld",
               G->seed, G->name[i], atomic_load(&R->sys[i].seen), atomic_load(&at->emitted));
    long batches = 0, holds = 0;
    for (int t = 0; t <= SK_THREADS; t++) {
        const sk_slot *s = &sk_slots[t];
        batches += s->batches;
        holds += s->holds;
        CHECKF(s->overflow == 0, "seed %llu: a batch held more than %u cells", G->seed, SK_LIST);
        if (!s->fails) continue;
        test_g.checks_failed++;
        fprintf(stderr, "  %s:%d: in a system (seed %llu, %d threads, thread %d%s): SK_TCHECK(%s) failed "
                "%ld time(s)\n", __FILE__, s->line, G->seed, real_threads, t,
                t == SK_THREADS ? ": out of range" : "", s->what, s->fails);
    }
    CHECKF(!ok || frames == 0 || (batches > 0 && holds > 0), "seed %llu: the systems touched nothing", G->seed);
    for (int i = 0; i < G->nsys; i++) if (R->sys[i].nq) ecs_query_free(R->sys[i].nq);
    if (all) ecs_query_free(all);
    *hash = test_world_hash(w);
    ecs_world_free(w);
    return ok ? real_threads : 0;
}

/* A chunked system with a writes list is a SELF_RACE, the one thing the
   generator avoids. */
static void sk_self_race(void) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    REQUIRE(w);
    ecs_id c = ecs_component(w, "C", sizeof(int), 0), d = ecs_component(w, "D", sizeof(int), 0);
    ecs_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "chunky";
    sd.fn = sk_fn;
    sd.terms[0] = (ecs_term){c, ECS_READ, ECS_AND};
    sd.writes[0] = d;
    sd.chunk_size = 7;
    REQUIRE(ecs_system_add(w, &sd) == 1);
    ecs_report rep;
    CHECK_EQ_INT(ecs_validate(w, &rep), ECS_ERR_INVALID_GRAPH);
    CHECK(rep.count == 1 && rep.problems[0].kind == ECS_PROBLEM_SELF_RACE && rep.problems[0].a == 1 &&
          rep.problems[0].b == 1 && rep.problems[0].id == d);
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_INVALID_GRAPH);
    ecs_world_free(w);
}

TEST(sched_safety_soak) {
    sk_self_race();
    unsigned long long base = test_g.seed_given ? test_g.seed : 20240611ull, next = base;
    int graphs = (int)test_scaled(10, 2);
    long frames = test_scaled(100, 10);
    static const int counts[3] = {2, 3, 8};
    sk_graph *G = (sk_graph *)calloc(1, sizeof *G);
    sk_run *R = (sk_run *)calloc(1, sizeof *R);
    sk_atoms *at = (sk_atoms *)calloc(1, sizeof *at);
    _Atomic unsigned *cells = (_Atomic unsigned *)calloc(SK_CELLS, sizeof *cells);
    sk_scratch *scratch = (sk_scratch *)calloc(SK_THREADS + 1, sizeof *scratch);
    ecs_entity *snap = (ecs_entity *)malloc(SK_MAX_SLOTS * sizeof *snap);
    bool ok = G && R && at && cells && scratch && snap;
    for (int t = 0; ok && t <= SK_THREADS; t++) {
        scratch[t].hkey = (uint32_t *)calloc(SK_HASH, sizeof(uint32_t));
        scratch[t].hidx = (uint32_t *)calloc(SK_HASH, sizeof(uint32_t));
        scratch[t].list = (sk_hold *)calloc(SK_LIST, sizeof(sk_hold));
        ok = scratch[t].hkey && scratch[t].hidx && scratch[t].list;
    }
    CHECK(ok);
    if (ok) {
        TEST_HG_IGNORE(at, sizeof *at);
        TEST_HG_IGNORE(cells, SK_CELLS * sizeof *cells);
        R->snap = snap;
    }
    int ran = 0, skipped = 0, max_running = 0;
    for (int g = 0; ok && g < graphs; g++) {
        unsigned long long seed = g ? test_rand(&next) : base;
        if (!sk_make_graph(seed, G)) { skipped++; continue; }
        ran++;
        /* without independent_of, every conflicting pair runs in one fixed
           order: the world must end the same on any thread count */
        bool fixed_order = true;
        for (int i = 0; i < G->nsys; i++) fixed_order &= G->sys[i].nind == 0;
        int last = 0;
        unsigned long long hash[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            if (last == 1) break;   /* ECS_NO_THREADS: every world has 1 thread */
            last = sk_run_graph(G, counts[k], frames, R, at, cells, scratch, &hash[k]);
            int m = atomic_load(&at->max_running);
            if (m > max_running) max_running = m;
            if (!last) break;
            CHECKF(!fixed_order || hash[k] == hash[0], "seed %llu, order %s: the world after %d frames on "
                   "%d threads differs from the one on %d (replay: --seed %llu)", seed,
                   sk_order_name(G->order), (int)frames, last, counts[0], seed);
        }
    }
    CHECKF(skipped * 4 <= graphs, "%d of %d random graphs could not be made valid (seed %llu)", skipped,
           graphs, base);
#ifndef ECS_NO_THREADS   /* smaller runs may be too short for the scheduler to go parallel */
    CHECKF(ran == 0 || test_g.scale_pct < 100 || max_running >= 2,
           "no two systems ever ran at once (seed %llu)", base);
#endif
    if (scratch)
        for (int t = 0; t <= SK_THREADS; t++) {
            free(scratch[t].hkey);
            free(scratch[t].hidx);
            free(scratch[t].list);
        }
    free(scratch);
    free(snap);
    free((void *)cells);
    free(at);
    free(R);
    free(G);
}

void suite_soak(void) {
    RUN(sched_safety_soak);
}
