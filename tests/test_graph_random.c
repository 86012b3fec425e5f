/* Randomized differential test of the system-graph validation.

   GR_GRAPHS random graphs (scaled by --scale PCT) of 2..64 systems, and 1 in
   100 of 65..200 (past the first 64-bit word of the library's bitsets), all
   in stage 0, each validated in all three orders (INSERTION, EXPLICIT,
   WRITERS_FIRST) on a fresh world, and compared with a brute-force reference
   kept in this file: bitmask rows of accesses and reachability, inference by
   the documented pair order, races and strongly connected components from the
   final closure. Checked: the result code, every CYCLE problem (one per
   cyclic component, its loop made of declared edges and visiting exactly that
   component), every RACE problem (exactly the unordered conflicting pairs,
   with the contested id and write_write; past the report's cap of 10,000,
   that the rest are counted in omitted), and ecs_system_precedes for every
   pair.

   Graph families: no edges; forward-only edges (after names earlier systems,
   before later ones: INSERTION's fast path); acyclic edges in both
   directions (a random topological order); sparse random edges; dense random
   edges (cycles, self-edges); some forward or acyclic graphs also get a
   chain through their topological order, making them fully ordered.
   Accesses: AND / NOT / OPTIONAL terms with every access value, reads,
   writes (components, tags, resources), ~5% EXCLUSIVE systems, occasional
   independent_of.

   Graph 0 uses the --seed value (or a fixed default), the others seeds
   derived from it. The first mismatch prints the graph's seed, its order, the
   graph, and the failed check, then the same for the smallest graph found by
   deleting systems, terms and list entries while the same check still fails,
   and stops; `-f graph_random --seed N` replays the graph as graph 0. */
#include "test.h"
#include <stdarg.h>
#include <stdint.h>

#define GR_GRAPHS 10000L       /* at --scale 100; each in all three orders */
#define GR_DEFAULT_SEED 20251207ull
#define GR_MAXN 200
#define GR_WORDS ((GR_MAXN + 63) / 64)
#define GR_LIST_CAP 10000      /* problems (and notes) a report lists */
#define GR_NCOMP 16            /* ids 1..16: components (13..16 tags) */
#define GR_BASE 1              /* the model's id k is the world's GR_BASE + k: the world's
                                  own ids (the prefab tag) come first */
#define GR_NRES 2              /* ids 17..18: resources, only in reads/writes */

#if ECS_GENERATION_BITS == 4
#  define GR_BINARY "build/tests_gen4"
#elif defined(__SANITIZE_ADDRESS__)
#  define GR_BINARY "build/tests_asan"
#elif defined(__clang__) && defined(NDEBUG)
#  define GR_BINARY "build/tests_release"
#else
#  define GR_BINARY "build/tests_asan"
#endif

enum { GR_AFTER, GR_BEFORE, GR_INDEP, GR_LISTS };
static const char *const gr_list_name[GR_LISTS] = {"after", "before", "indep"};
static const char *const gr_order_name[3] = {"INSERTION", "EXPLICIT", "WRITERS_FIRST"};
enum { GR_F_NONE, GR_F_FORWARD, GR_F_ACYCLIC, GR_F_SPARSE, GR_F_DENSE, GR_FAMILIES };
static const char *const gr_family_name[GR_FAMILIES] = {"no edges", "forward", "acyclic",
                                                         "sparse random", "dense random"};

typedef struct gr_sys {
    ecs_term terms[ECS_MAX_TERMS];
    int nterms, nreads, nwrites;
    ecs_id reads[ECS_MAX_TERMS], writes[ECS_MAX_TERMS];
    uint8_t dep[GR_LISTS][ECS_MAX_DEPS];   /* system indexes */
    int ndep[GR_LISTS];
    bool excl;
} gr_sys;

typedef struct gr_graph {
    int n, family;
    bool precedes_first;       /* call ecs_system_precedes before ecs_validate */
    gr_sys s[GR_MAXN];
} gr_graph;

/* A set of systems: bit v of word v / 64. */
typedef struct gr_set { uint64_t w[GR_WORDS]; } gr_set;
static inline bool gr_in(const gr_set *s, int v) { return s->w[v >> 6] >> (v & 63) & 1; }
static inline void gr_put(gr_set *s, int v) { s->w[v >> 6] |= 1ull << (v & 63); }
static inline void gr_union(gr_set *d, const gr_set *s) { for (int k = 0; k < GR_WORDS; k++) d->w[k] |= s->w[k]; }
static int gr_size(const gr_set *s) {
    int n = 0;
    for (int k = 0; k < GR_WORDS; k++) n += test_popcount64(s->w[k]);
    return n;
}
static int gr_min(const gr_set *s) {   /* the lowest member; -1 if empty */
    for (int k = 0; k < GR_WORDS; k++) if (s->w[k]) return k * 64 + test_ctz64(s->w[k]);
    return -1;
}
static bool gr_same(const gr_set *a, const gr_set *b) { return !memcmp(a, b, sizeof *a); }
/* The members as "s1 s5 ...", for messages. */
static const char *gr_str(const gr_set *s, char *buf, size_t cap) {
    size_t at = 0;
    buf[0] = 0;
    for (int v = 0; v < GR_MAXN && at < cap; v++)
        if (gr_in(s, v)) at += (size_t)snprintf(buf + at, cap - at, "%ss%d", at ? " " : "", v);
    return buf;
}

/* The reference: bit 0 of an access mask is the virtual "whole world" id
   that every system reads (as a list entry) and an EXCLUSIVE system writes.
   Accesses are kept apart by where they come from: query terms (t*) or the
   reads/writes lists (l*); and/not are the query's filters. */
typedef struct gr_ref {
    uint32_t acc[GR_MAXN], wr[GR_MAXN];   /* all of them, for the dump */
    uint32_t tacc[GR_MAXN], twr[GR_MAXN], lacc[GR_MAXN], lwr[GR_MAXN], andm[GR_MAXN], notm[GR_MAXN];
    gr_set indep[GR_MAXN], conflict[GR_MAXN];   /* conflict[a] holds b: by gr_conflict */
    gr_set adj[GR_MAXN], dreach[GR_MAXN];   /* declared edges and their closure */
    gr_set fadj[GR_MAXN], reach[GR_MAXN];   /* with the inferred edges */
    gr_set race[GR_MAXN];      /* race[a] holds b: the pair a < b races */
    gr_set note[GR_MAXN];      /* note[a] holds b: a reads before b writes, by inferred order */
    int inferred;
} gr_ref;

typedef enum gr_check_kind {
    GR_OK, GR_SETUP, GR_RESULT, GR_KIND, GR_CYCLE, GR_RACE_UNEXPECTED, GR_RACE_MISSING,
    GR_RACE_ID, GR_RACE_WW, GR_PRECEDES, GR_NOTE
} gr_check_kind;
static const char *const gr_check_name[] = {"ok", "setup", "result code", "problem kind", "cycle",
                                            "unexpected race", "missing race", "race id",
                                            "race write_write", "precedes", "note"};

typedef struct gr_fail { gr_check_kind kind; char msg[1024]; } gr_fail;

static char gr_names[GR_MAXN][16];
static long gr_stat_cyclic, gr_stat_races[3], gr_stat_inferred[3], gr_stat_family[GR_FAMILIES], gr_stat_valid[3];

static void gr_noop(ecs_iter *it) { (void)it; }

static bool gr_failf(gr_fail *f, gr_check_kind kind, const char *fmt, ...) {
    va_list ap;
    f->kind = kind;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- generation ---------------------------------------------------------- */
static void gr_dep_add(gr_sys *s, int list, int target) {
    if (s->ndep[list] < ECS_MAX_DEPS) s->dep[list][s->ndep[list]++] = (uint8_t)target;
}

static void gr_generate(gr_graph *g, unsigned long long seed) {
    unsigned long long r = seed;
    memset(g, 0, sizeof *g);
    unsigned size = test_below(&r, 100);
    g->n = size < 40 ? 2 + (int)test_below(&r, 7) : size < 70 ? 2 + (int)test_below(&r, 23)
         : size < 99 ? 2 + (int)test_below(&r, 63) : 65 + (int)test_below(&r, GR_MAXN - 64);
    unsigned f = test_below(&r, 100);
    g->family = f < 15 ? GR_F_NONE : f < 40 ? GR_F_FORWARD : f < 65 ? GR_F_ACYCLIC
              : f < 85 ? GR_F_SPARSE : GR_F_DENSE;
    g->precedes_first = test_below(&r, 4) == 0;
    unsigned ids = 1 + test_below(&r, GR_NCOMP);          /* the ids this graph uses */
    unsigned write_pct = 5 + test_below(&r, 60);
    unsigned edge_max = g->family == GR_F_DENSE ? 6 : g->family == GR_F_SPARSE ? 1 : 3;
    unsigned edge_pct = g->family == GR_F_SPARSE ? 20 + test_below(&r, 40) : 100;
    int rank[GR_MAXN], by_rank[GR_MAXN];                   /* a topological order */
    for (int i = 0; i < g->n; i++) rank[i] = i;
    if (g->family != GR_F_FORWARD)
        for (int i = g->n - 1; i > 0; i--) {
            int j = (int)test_below(&r, (unsigned)i + 1), t = rank[i];
            rank[i] = rank[j]; rank[j] = t;
        }
    for (int i = 0; i < g->n; i++) by_rank[rank[i]] = i;
    /* FORWARD and ACYCLIC: sometimes a chain through that order, so that
       EXPLICIT has no race */
    bool chain = (g->family == GR_F_FORWARD || g->family == GR_F_ACYCLIC) && test_below(&r, 100) < 15;
    for (int i = 0; i < g->n; i++) {
        gr_sys *s = &g->s[i];
        s->nterms = test_below(&r, 100) < 3 ? ECS_MAX_TERMS : (int)test_below(&r, 6);
        for (int t = 0; t < s->nterms; t++) {
            unsigned o = test_below(&r, 100);
            s->terms[t].id = 1 + test_below(&r, ids);
            s->terms[t].oper = o < 70 ? ECS_AND : o < 85 ? ECS_NOT : ECS_OPTIONAL;
            if (test_below(&r, 100) < write_pct)
                s->terms[t].access = test_below(&r, 4) ? ECS_WRITE : (ecs_access)(ECS_READ | ECS_WRITE);
            else
                s->terms[t].access = test_below(&r, 5) ? ECS_READ : (ecs_access)0;
        }
        s->nreads = test_below(&r, 100) < 2 ? ECS_MAX_TERMS : test_below(&r, 3) ? 0 : 1 + (int)test_below(&r, 2);
        s->nwrites = test_below(&r, 100) < 2 ? ECS_MAX_TERMS
                   : test_below(&r, 100) < write_pct / 2 ? 1 + (int)test_below(&r, 2) : 0;
        for (int k = 0; k < s->nreads + s->nwrites; k++) {
            ecs_id id = test_below(&r, 10) ? 1 + test_below(&r, ids) : GR_NCOMP + 1 + test_below(&r, GR_NRES);
            if (k < s->nreads) s->reads[k] = id; else s->writes[k - s->nreads] = id;
        }
        s->excl = test_below(&r, 100) < 5;
        if (chain && rank[i] > 0) gr_dep_add(s, GR_AFTER, by_rank[rank[i] - 1]);
        if (g->family != GR_F_NONE && test_below(&r, 100) < edge_pct) {
            unsigned d = test_below(&r, edge_max + 1);
            if (test_below(&r, 100) < 2) d = 2 * ECS_MAX_DEPS;   /* full lists */
            for (unsigned k = 0; k < d; k++) {
                int list = (int)test_below(&r, 2), t;
                if (g->family == GR_F_FORWARD) {
                    if (list == GR_AFTER && i == 0) list = GR_BEFORE;
                    if (list == GR_BEFORE && i == g->n - 1) list = GR_AFTER;
                    t = list == GR_AFTER ? (int)test_below(&r, (unsigned)i)
                                         : i + 1 + (int)test_below(&r, (unsigned)(g->n - 1 - i));
                } else {
                    t = (int)test_below(&r, (unsigned)g->n - 1);
                    if (t >= i) t++;
                    if (g->family == GR_F_ACYCLIC) list = rank[t] < rank[i] ? GR_AFTER : GR_BEFORE;
                    else if (test_below(&r, 100) < 2) t = i;   /* a self-edge */
                }
                gr_dep_add(s, list, t);
            }
        }
        if (test_below(&r, 100) < 6) {
            unsigned d = 1 + test_below(&r, 2);
            for (unsigned k = 0; k < d; k++)
                gr_dep_add(s, GR_INDEP, test_below(&r, 20) ? (int)test_below(&r, (unsigned)g->n) : i);
        }
    }
}

/* ---- the reference --------------------------------------------------------- */
static bool gr_disjoint(const gr_ref *x, int a, int b) {
    return (x->andm[a] & x->notm[b]) || (x->notm[a] & x->andm[b]);
}
/* The ids a writes that b accesses, as the conflict rules count them: a
   list access conflicts with any, a term access with list accesses and
   with the terms of a query that is not disjoint. */
static uint32_t gr_writes_into(const gr_ref *x, int a, int b) {
    uint32_t m = (x->lwr[a] & (x->tacc[b] | x->lacc[b])) | (x->twr[a] & x->lacc[b]);
    if (!gr_disjoint(x, a, b)) m |= x->twr[a] & x->tacc[b];
    return m;
}
static bool gr_conflict(const gr_ref *x, int a, int b) {
    return a != b && !gr_in(&x->indep[a], b) && (gr_writes_into(x, a, b) || gr_writes_into(x, b, a));
}

static void gr_close(const gr_set *adj, gr_set *reach, int n) {   /* Floyd-Warshall on bitmasks */
    for (int i = 0; i < n; i++) reach[i] = adj[i];
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            if (gr_in(&reach[i], k)) gr_union(&reach[i], &reach[k]);
}
/* The closure reach after adding the edge i -> j: i, and whatever reaches
   i, now reach j and whatever j reaches. */
static void gr_close_edge(gr_set *reach, int n, int i, int j) {
    gr_set add = reach[j];
    gr_put(&add, j);
    for (int u = 0; u < n; u++)
        if (u == i || gr_in(&reach[u], i)) gr_union(&reach[u], &add);
}
/* The strongly connected component of v under reach (v itself always). */
static gr_set gr_scc_of(const gr_set *reach, int n, int v) {
    gr_set m = {{0}};
    gr_put(&m, v);
    for (int u = 0; u < n; u++)
        if (gr_in(&reach[v], u) && gr_in(&reach[u], v)) gr_put(&m, u);
    return m;
}

/* The run order: components of the declared graph, each system as early as
   declared order allows in registration priority: repeatedly place last,
   among the components whose successors are all placed, the one whose
   first system was registered last. pos[v] = v's place. */
static void gr_run_order(const gr_ref *x, int n, int *pos) {
    static gr_set members[GR_MAXN], out[GR_MAXN];   /* of the component each system is first of */
    for (int v = 0; v < n; v++) {
        members[v] = gr_scc_of(x->dreach, n, v);
        memset(&out[v], 0, sizeof out[v]);
        if (gr_min(&members[v]) != v) continue;
        for (int u = 0; u < n; u++) if (gr_in(&members[v], u)) gr_union(&out[v], &x->adj[u]);
    }
    gr_set placed = {{0}};
    for (int place = n; place > 0;) {
        int best = -1;
        for (int v = 0; v < n; v++) {
            if (gr_in(&placed, v) || gr_min(&members[v]) != v) continue;   /* one visit per component */
            bool ready = true;
            for (int k = 0; k < GR_WORDS; k++) ready &= !(out[v].w[k] & ~members[v].w[k] & ~placed.w[k]);
            if (ready) best = v;
        }
        place -= gr_size(&members[best]);
        int k = place;
        for (int u = 0; u < n; u++) if (gr_in(&members[best], u)) pos[u] = k++;
        gr_union(&placed, &members[best]);
    }
}

static void gr_reference(const gr_graph *g, ecs_order order, gr_ref *x) {
    int n = g->n;
    memset(x, 0, sizeof *x);
    for (int i = 0; i < n; i++) {
        const gr_sys *s = &g->s[i];
        x->lacc[i] = 1;
        if (s->excl) x->lwr[i] = 1;
        for (int t = 0; t < s->nterms; t++) {
            uint32_t bit = 1u << s->terms[t].id;
            if (s->terms[t].oper == ECS_AND) x->andm[i] |= bit;
            if (s->terms[t].oper == ECS_NOT) { x->notm[i] |= bit; continue; }
            x->tacc[i] |= bit;
            if (s->terms[t].access & ECS_WRITE) x->twr[i] |= bit;
        }
        for (int k = 0; k < s->nreads; k++) x->lacc[i] |= 1u << s->reads[k];
        for (int k = 0; k < s->nwrites; k++) { x->lacc[i] |= 1u << s->writes[k]; x->lwr[i] |= 1u << s->writes[k]; }
        x->acc[i] = x->tacc[i] | x->lacc[i];
        x->wr[i] = x->twr[i] | x->lwr[i];
        for (int k = 0; k < s->ndep[GR_AFTER]; k++) gr_put(&x->adj[s->dep[GR_AFTER][k]], i);
        for (int k = 0; k < s->ndep[GR_BEFORE]; k++) gr_put(&x->adj[i], s->dep[GR_BEFORE][k]);
        for (int k = 0; k < s->ndep[GR_INDEP]; k++) {
            int t = s->dep[GR_INDEP][k];
            gr_put(&x->indep[i], t);
            gr_put(&x->indep[t], i);
        }
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) if (gr_conflict(x, a, b)) gr_put(&x->conflict[a], b);
    gr_close(x->adj, x->dreach, n);
    memcpy(x->fadj, x->adj, sizeof x->adj);
    if (order == ECS_ORDER_INSERTION) {
        /* along the run order: each system's pairs with everything placed
           before its component, nearest first, unless already ordered */
        int pos[GR_MAXN], at[GR_MAXN];
        gr_run_order(x, n, pos);
        for (int v = 0; v < n; v++) at[pos[v]] = v;
        memcpy(x->reach, x->dreach, sizeof x->reach);
        for (int p = 0; p < n; p++) {
            int j = at[p], f = p;
            gr_set comp = gr_scc_of(x->dreach, n, j);
            for (int u = 0; u < n; u++) if (gr_in(&comp, u) && pos[u] < f) f = pos[u];
            for (int q = f - 1; q >= 0; q--) {
                int i = at[q];
                if (!gr_in(&x->conflict[i], j) || gr_in(&x->reach[i], j)) continue;
                gr_put(&x->fadj[i], j);
                x->inferred++;
                gr_close_edge(x->reach, n, i, j);
            }
        }
    } else if (order == ECS_ORDER_WRITERS_FIRST) {
        for (int w = 0; w < n; w++)
            for (int r = 0; r < n; r++)
                if (gr_in(&x->conflict[w], r) && gr_writes_into(x, w, r) && !gr_writes_into(x, r, w) &&
                    !gr_in(&x->dreach[r], w) && !gr_in(&x->dreach[w], r)) {
                    gr_put(&x->fadj[w], r);
                    x->inferred++;
                }
    }
    gr_close(x->fadj, x->reach, n);
    if (order != ECS_ORDER_INSERTION)
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (gr_in(&x->conflict[a], b) && !gr_in(&x->reach[a], b) && !gr_in(&x->reach[b], a))
                    gr_put(&x->race[a], b);
    for (int a = 0; a < n; a++)   /* notes: never about an EXCLUSIVE system */
        for (int b = 0; b < n; b++)
            if (!g->s[a].excl && !g->s[b].excl && gr_in(&x->conflict[a], b) && gr_in(&x->reach[a], b) &&
                !gr_in(&x->dreach[a], b) && !gr_in(&x->reach[b], a) && gr_writes_into(x, b, a) &&
                !gr_writes_into(x, a, b))
                gr_put(&x->note[a], b);
}

/* The strongly connected component of a system on a cycle. */
static gr_set gr_scc(const gr_ref *x, int n, int v) { return gr_scc_of(x->reach, n, v); }

/* The length of a shortest loop inside component comp (breadth first from each member). */
static int gr_girth(const gr_ref *x, int n, const gr_set *comp) {
    int best = INT32_MAX;
    for (int s = 0; s < n; s++) {
        if (!gr_in(comp, s)) continue;
        gr_set seen = {{0}}, frontier = {{0}};
        gr_put(&seen, s);
        gr_put(&frontier, s);
        for (int d = 1; gr_min(&frontier) >= 0 && d < best; d++) {
            gr_set next = {{0}};
            for (int u = 0; u < n; u++)
                if (gr_in(&frontier, u)) gr_union(&next, &x->fadj[u]);
            if (gr_in(&next, s)) { best = d; break; }
            for (int k = 0; k < GR_WORDS; k++) {
                next.w[k] &= comp->w[k];
                frontier.w[k] = next.w[k] & ~seen.w[k];
                seen.w[k] |= next.w[k];
            }
        }
    }
    return best;
}

/* ---- one graph in one order -------------------------------------------------- */
static ecs_world *gr_build(const gr_graph *g, ecs_order order, gr_fail *f) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .order = order});
    if (!w) { gr_failf(f, GR_SETUP, "ecs_world_new failed"); return NULL; }
    for (int c = 1; c <= GR_NCOMP + GR_NRES; c++) {
        char name[16];
        snprintf(name, sizeof name, "gr_c%d", c);
        ecs_id id = c > GR_NCOMP ? ecs_resource(w, name, 8, 0, NULL) : ecs_component(w, name, c > 12 ? 0 : 4, 0);
        if (id != (ecs_id)(GR_BASE + c)) {
            gr_failf(f, GR_SETUP, "registering id %d returned %u: %s", c, (unsigned)id, ecs_last_error(w));
            ecs_world_free(w);
            return NULL;
        }
    }
    for (int i = 0; i < g->n; i++) {
        const gr_sys *s = &g->s[i];
        ecs_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = gr_names[i];
        d.fn = gr_noop;
        memcpy(d.terms, s->terms, sizeof d.terms);
        memcpy(d.reads, s->reads, sizeof d.reads);
        memcpy(d.writes, s->writes, sizeof d.writes);
        for (int k = 0; k < ECS_MAX_TERMS; k++) {   /* the model's ids to the world's */
            if (d.terms[k].id) d.terms[k].id += GR_BASE;
            if (d.reads[k]) d.reads[k] += GR_BASE;
            if (d.writes[k]) d.writes[k] += GR_BASE;
        }
        const char **lists[GR_LISTS] = {d.after, d.before, d.independent_of};
        for (int l = 0; l < GR_LISTS; l++)
            for (int k = 0; k < s->ndep[l]; k++) lists[l][k] = gr_names[s->dep[l][k]];
        d.flags = s->excl ? ECS_SYSTEM_EXCLUSIVE : 0;
        ecs_system h = ecs_system_add(w, &d);
        if (h != (ecs_system)(i + 1)) {
            gr_failf(f, GR_SETUP, "ecs_system_add(s%d) returned %u: %s", i, (unsigned)h, ecs_last_error(w));
            ecs_world_free(w);
            return NULL;
        }
    }
    return w;
}

static bool gr_check_world(ecs_world *w, const gr_graph *g, const gr_ref *x, gr_fail *f) {
    int n = g->n;
    char s1[512], s2[512], s3[512];
    if (g->precedes_first) (void)ecs_system_precedes(w, 1, (ecs_system)n);
    ecs_report rep;
    ecs_result res = ecs_validate(w, &rep);

    gr_set on_cycle = {{0}};
    int cyclic = 0, races = 0, notes = 0;
    for (int v = 0; v < n; v++) {
        if (!gr_in(&x->reach[v], v) || gr_in(&on_cycle, v)) continue;
        cyclic++;
        gr_set scc = gr_scc(x, n, v);
        gr_union(&on_cycle, &scc);
    }
    for (int a = 0; a < n; a++) { races += gr_size(&x->race[a]); notes += gr_size(&x->note[a]); }
    int expected = cyclic + races, listed = expected < GR_LIST_CAP ? expected : GR_LIST_CAP;
    if (res != (expected ? ECS_ERR_INVALID_GRAPH : ECS_OK) || rep.count != listed || rep.omitted != expected - listed)
        return gr_failf(f, GR_RESULT, "ecs_validate = %s with %d problems (%d omitted); expected %s with %d "
                        "(%d cycles, %d races)", ecs_result_str(res), rep.count, rep.omitted,
                        expected ? "ECS_ERR_INVALID_GRAPH" : "ECS_OK", expected, cyclic, races);

    static gr_set races_seen[GR_MAXN];
    gr_set cycles_seen = {{0}};
    memset(races_seen, 0, sizeof races_seen);
    for (int p = 0; p < rep.count; p++) {
        const ecs_problem *pr = &rep.problems[p];
        if (!pr->message || !*pr->message)
            return gr_failf(f, GR_KIND, "problem %d (kind %d) has no message", p, (int)pr->kind);
        if (pr->kind == ECS_PROBLEM_CYCLE) {
            if (pr->cycle_len < 1 || !pr->cycle)
                return gr_failf(f, GR_CYCLE, "problem %d: cycle_len %d, cycle %p", p, pr->cycle_len,
                                (const void *)pr->cycle);
            gr_set members = {{0}};
            for (int k = 0; k < pr->cycle_len; k++) {
                ecs_system u = pr->cycle[k], v = pr->cycle[(k + 1) % pr->cycle_len];
                if (u < 1 || u > (ecs_system)n || v < 1 || v > (ecs_system)n)
                    return gr_failf(f, GR_CYCLE, "problem %d: cycle[%d] = %u is no system", p, k, (unsigned)u);
                if (!gr_in(&x->fadj[u - 1], (int)v - 1))
                    return gr_failf(f, GR_CYCLE, "problem %d: cycle[%d] = s%u -> s%u is no declared or "
                                    "inferable edge", p, k, u - 1, v - 1);
                if (gr_in(&members, (int)u - 1))
                    return gr_failf(f, GR_CYCLE, "problem %d: s%u repeats in the loop", p, u - 1);
                gr_put(&members, (int)u - 1);
            }
            int first = (int)pr->cycle[0] - 1;
            gr_set scc = gr_scc(x, n, first), listed_members = {{0}};
            for (int k = 0; pr->members && k < pr->member_count; k++) {
                if (k && pr->members[k - 1] >= pr->members[k])
                    return gr_failf(f, GR_CYCLE, "problem %d: members not ascending", p);
                gr_put(&listed_members, (int)pr->members[k] - 1);
            }
            bool outside = false;
            for (int k = 0; k < GR_WORDS; k++) outside |= (members.w[k] & ~scc.w[k]) != 0;
            if (!gr_in(&x->reach[first], first) || outside || !gr_same(&listed_members, &scc))
                return gr_failf(f, GR_CYCLE, "problem %d: the loop visits {%s}, members {%s}; the "
                                "component of s%d is {%s}%s", p, gr_str(&members, s1, sizeof s1),
                                gr_str(&listed_members, s2, sizeof s2), first, gr_str(&scc, s3, sizeof s3),
                                gr_in(&x->reach[first], first) ? "" : " (acyclic)");
            if (pr->cycle_len != gr_girth(x, n, &scc))
                return gr_failf(f, GR_CYCLE, "problem %d: the loop has %d steps, the shortest %d", p,
                                pr->cycle_len, gr_girth(x, n, &scc));
            if (gr_in(&cycles_seen, first))
                return gr_failf(f, GR_CYCLE, "problem %d: the component {%s} is reported twice", p,
                                gr_str(&scc, s1, sizeof s1));
            gr_union(&cycles_seen, &scc);
        } else if (pr->kind == ECS_PROBLEM_RACE) {
            int a = (int)pr->a - 1, b = (int)pr->b - 1;
            if (a < 0 || b >= n || a >= b || !gr_in(&x->race[a], b) || gr_in(&races_seen[a], b))
                return gr_failf(f, GR_RACE_UNEXPECTED, "problem %d: RACE a = %u, b = %u (id %u) is not an "
                                "expected race%s", p, (unsigned)pr->a, (unsigned)pr->b, (unsigned)pr->id,
                                a >= 0 && a < b && b < n && gr_in(&races_seen[a], b) ? " (reported twice)" : "");
            gr_put(&races_seen[a], b);
            uint32_t contested = (gr_writes_into(x, a, b) | gr_writes_into(x, b, a)) & ~1u;
            ecs_id id = contested ? (ecs_id)test_ctz64(contested) : 0;
            /* id 0 (only exclusivity conflicts): both write the virtual id,
               i.e. both are EXCLUSIVE */
            bool ww = (gr_writes_into(x, a, b) & gr_writes_into(x, b, a)) >> id & 1;
            if (pr->id != (id ? id + GR_BASE : 0))
                return gr_failf(f, GR_RACE_ID, "problem %d: RACE s%d s%d id = %u, expected %u", p, a, b,
                                (unsigned)pr->id, (unsigned)id);
            if (pr->write_write != ww)
                return gr_failf(f, GR_RACE_WW, "problem %d: RACE s%d s%d id %u write_write = %d, expected %d",
                                p, a, b, (unsigned)id, pr->write_write, ww);
        } else {
            return gr_failf(f, GR_KIND, "problem %d has kind %d: %s", p, (int)pr->kind, pr->message);
        }
    }
    if (!rep.omitted) {   /* past the cap, only what is listed is checked */
        if (!gr_same(&cycles_seen, &on_cycle))
            return gr_failf(f, GR_CYCLE, "cycles cover systems {%s}, expected {%s}",
                            gr_str(&cycles_seen, s1, sizeof s1), gr_str(&on_cycle, s2, sizeof s2));
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (gr_in(&x->race[a], b) && !gr_in(&races_seen[a], b))
                    return gr_failf(f, GR_RACE_MISSING, "RACE s%d s%d not reported", a, b);
    }
    int notes_listed = notes < GR_LIST_CAP ? notes : GR_LIST_CAP;
    if (rep.note_count != notes_listed || rep.notes_omitted != notes - notes_listed)
        return gr_failf(f, GR_NOTE, "%d notes (%d omitted), expected %d", rep.note_count, rep.notes_omitted, notes);
    static gr_set notes_seen[GR_MAXN];
    memset(notes_seen, 0, sizeof notes_seen);
    for (int k = 0; k < rep.note_count; k++) {
        const ecs_problem *pr = &rep.notes[k];
        int a = (int)pr->a - 1, b = (int)pr->b - 1;
        if (pr->kind != ECS_NOTE_READ_BEFORE_WRITE || a < 0 || a >= n || b < 0 || b >= n ||
            !gr_in(&x->note[a], b) || gr_in(&notes_seen[a], b))
            return gr_failf(f, GR_NOTE, "note %d: s%d before s%d is not an expected note: %s", k, a, b, pr->message);
        if (pr->id <= GR_BASE || !(gr_writes_into(x, b, a) >> (pr->id - GR_BASE) & 1))
            return gr_failf(f, GR_NOTE, "note %d: s%d s%d names id %u", k, a, b, (unsigned)pr->id);
        gr_put(&notes_seen[a], b);
    }
    for (int a = 0; a < n && !rep.notes_omitted; a++)
        for (int b = 0; b < n; b++)
            if (gr_in(&x->note[a], b) && !gr_in(&notes_seen[a], b))
                return gr_failf(f, GR_NOTE, "note s%d before s%d missing", a, b);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            bool got = ecs_system_precedes(w, (ecs_system)(a + 1), (ecs_system)(b + 1));
            bool want = a != b && gr_in(&x->reach[a], b);
            if (got != want)
                return gr_failf(f, GR_PRECEDES, "ecs_system_precedes(s%d, s%d) = %d, expected %d", a, b, got, want);
        }
    return true;
}
static bool gr_check(const gr_graph *g, ecs_order order, gr_fail *f) {
    static gr_ref x;
    f->kind = GR_OK;
    f->msg[0] = 0;
    gr_reference(g, order, &x);
    ecs_world *w = gr_build(g, order, f);
    if (!w) return false;
    bool ok = gr_check_world(w, g, &x, f);
    ecs_world_free(w);
    if (ok) {
        for (int a = 0; a < g->n; a++) gr_stat_races[order] += gr_size(&x.race[a]);
        gr_stat_inferred[order] += x.inferred;
        bool valid = true;
        for (int a = 0; a < g->n; a++) valid &= gr_min(&x.race[a]) < 0 && !gr_in(&x.reach[a], a);
        gr_stat_valid[order] += valid;
    }
    return ok;
}

/* ---- reporting and shrinking ---------------------------------------------- */
static void gr_dump(const gr_graph *g, ecs_order order) {
    static gr_ref x;
    gr_reference(g, order, &x);
    fprintf(stderr, "  graph (%s, n = %d%s); T = AND, ? = OPTIONAL, ! = NOT, then access r/w/0/3 and id;\n"
            "  [R reads only, W writes: id bitmasks, bit 0 = the whole world (EXCLUSIVE)]\n",
            gr_family_name[g->family], g->n, g->precedes_first ? ", precedes called first" : "");
    for (int i = 0; i < g->n; i++) {
        const gr_sys *s = &g->s[i];
        fprintf(stderr, "    s%d%s terms={", i, s->excl ? " EXCLUSIVE" : "");
        for (int t = 0; t < s->nterms; t++) {
            ecs_access a = s->terms[t].access;
            fprintf(stderr, "%s%c%c%u", t ? " " : "", "T!?"[s->terms[t].oper],
                    a == ECS_READ ? 'r' : a == ECS_WRITE ? 'w' : a ? '3' : '0', (unsigned)s->terms[t].id);
        }
        fprintf(stderr, "}");
        if (s->nreads) fprintf(stderr, " reads={");
        for (int k = 0; k < s->nreads; k++) fprintf(stderr, "%s%u%s", k ? " " : "", (unsigned)s->reads[k], k + 1 < s->nreads ? "" : "}");
        if (s->nwrites) fprintf(stderr, " writes={");
        for (int k = 0; k < s->nwrites; k++) fprintf(stderr, "%s%u%s", k ? " " : "", (unsigned)s->writes[k], k + 1 < s->nwrites ? "" : "}");
        for (int l = 0; l < GR_LISTS; l++) {
            if (!s->ndep[l]) continue;
            fprintf(stderr, " %s={", gr_list_name[l]);
            for (int k = 0; k < s->ndep[l]; k++) fprintf(stderr, "%ss%d", k ? " " : "", s->dep[l][k]);
            fprintf(stderr, "}");
        }
        fprintf(stderr, "  [R 0x%x W 0x%x]\n", x.acc[i] & ~x.wr[i] & ~1u, x.wr[i]);
    }
}

static void gr_remove_at(void *array, size_t size, int *count, int at) {
    unsigned char *p = (unsigned char *)array;
    memmove(p + (size_t)at * size, p + (size_t)(at + 1) * size, (size_t)(*count - at - 1) * size);
    (*count)--;
    memset(p + (size_t)*count * size, 0, size);
}

static void gr_remove_system(gr_graph *g, int v) {
    memmove(&g->s[v], &g->s[v + 1], (size_t)(g->n - v - 1) * sizeof g->s[0]);
    g->n--;
    for (int i = 0; i < g->n; i++)
        for (int l = 0; l < GR_LISTS; l++)
            for (int k = g->s[i].ndep[l]; k-- > 0;) {
                uint8_t *d = &g->s[i].dep[l][k];
                if (*d == v) gr_remove_at(g->s[i].dep[l], 1, &g->s[i].ndep[l], k);
                else if (*d > v) (*d)--;
            }
}

/* Mutation number m of g (deleting one thing), or false when m is past the last. */
static bool gr_mutate(gr_graph *g, int m) {
    if (m < g->n) { if (g->n < 2) return true; gr_remove_system(g, g->n - 1 - m); return true; }
    m -= g->n;
    for (int i = 0; i < g->n; i++) {
        gr_sys *s = &g->s[i];
        if (m < s->nterms) { gr_remove_at(s->terms, sizeof s->terms[0], &s->nterms, m); return true; }
        m -= s->nterms;
        if (m < s->nreads) { gr_remove_at(s->reads, sizeof s->reads[0], &s->nreads, m); return true; }
        m -= s->nreads;
        if (m < s->nwrites) { gr_remove_at(s->writes, sizeof s->writes[0], &s->nwrites, m); return true; }
        m -= s->nwrites;
        for (int l = 0; l < GR_LISTS; l++) {
            if (m < s->ndep[l]) { gr_remove_at(s->dep[l], 1, &s->ndep[l], m); return true; }
            m -= s->ndep[l];
        }
        if (m == 0) { s->excl = false; return true; }
        m--;
        for (int t = 0; t < s->nterms; t++) {   /* simpler terms: AND, plain READ / WRITE */
            if (m == 0) { s->terms[t].oper = ECS_AND; return true; }
            if (m == 1) {
                s->terms[t].access = s->terms[t].access & ECS_WRITE ? ECS_WRITE : ECS_READ;
                return true;
            }
            m -= 2;
        }
    }
    if (m == 0) { g->precedes_first = false; return true; }
    return false;
}

static void gr_shrink(gr_graph *g, ecs_order order, gr_check_kind kind) {
    static gr_graph trial;
    gr_fail f;
    for (bool progress = true; progress;) {
        progress = false;
        for (int m = 0;; m++) {
            trial = *g;
            if (!gr_mutate(&trial, m)) break;
            if (!memcmp(&trial, g, sizeof trial)) continue;
            if (!gr_check(&trial, order, &f) && f.kind == kind) { *g = trial; progress = true; m--; }
        }
    }
}

/* ---- the test ----------------------------------------------------------------- */
TEST(graph_random) {
    static gr_graph g;
    for (int i = 0; i < GR_MAXN; i++) snprintf(gr_names[i], sizeof gr_names[i], "s%d", i);
    unsigned long long base = test_g.seed_given ? test_g.seed : GR_DEFAULT_SEED, next = base;
    long graphs = (long)((double)GR_GRAPHS * (double)test_g.scale_pct / 100.0);
    if (graphs < 1) graphs = 1;
    for (long k = 0; k < graphs; k++) {
        unsigned long long seed = k ? test_rand(&next) : base;
        gr_generate(&g, seed);
        gr_stat_family[g.family]++;
        {
            static gr_ref x;
            gr_reference(&g, ECS_ORDER_EXPLICIT, &x);
            for (int v = 0; v < g.n; v++) if (gr_in(&x.reach[v], v)) { gr_stat_cyclic++; break; }
        }
        for (int o = 0; o < 3; o++) {
            gr_fail f;
            if (gr_check(&g, (ecs_order)o, &f)) continue;
            test_g.checks_failed++;
            fprintf(stderr, "  tests/test_graph_random.c: graph %ld (seed %llu), order %s, n = %d: %s check "
                    "failed: %s\n", k, seed, gr_order_name[o], g.n, gr_check_name[f.kind], f.msg);
            gr_dump(&g, (ecs_order)o);
            gr_check_kind kind = f.kind;
            gr_shrink(&g, (ecs_order)o, kind);
            gr_check(&g, (ecs_order)o, &f);
            fprintf(stderr, "  shrunk to n = %d, same check failing: %s\n", g.n, f.msg);
            gr_dump(&g, (ecs_order)o);
            fprintf(stderr, "  replay: %s -f graph_random --seed %llu\n", GR_BINARY, seed);
            return;
        }
    }
    printf("graph_random: %ld graphs x 3 orders, seed %llu; families", graphs, base);
    for (int fam = 0; fam < GR_FAMILIES; fam++) printf("%s %s %ld", fam ? "," : "", gr_family_name[fam], gr_stat_family[fam]);
    printf("; %ld with cycles; races EXPLICIT %ld, WRITERS_FIRST %ld; inferred INSERTION %ld, WRITERS_FIRST %ld; "
           "valid graphs INSERTION %ld, EXPLICIT %ld, WRITERS_FIRST %ld\n",
           gr_stat_cyclic, gr_stat_races[ECS_ORDER_EXPLICIT], gr_stat_races[ECS_ORDER_WRITERS_FIRST],
           gr_stat_inferred[ECS_ORDER_INSERTION], gr_stat_inferred[ECS_ORDER_WRITERS_FIRST],
           gr_stat_valid[ECS_ORDER_INSERTION], gr_stat_valid[ECS_ORDER_EXPLICIT], gr_stat_valid[ECS_ORDER_WRITERS_FIRST]);
}

void suite_graph_random(void) {
    RUN(graph_random);
}
