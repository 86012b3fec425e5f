/* scheduler stress: random worlds and random system graphs, each run on 1, 2,
   3 and 8 threads, must end every frame in the same state.

   A graph has 8-16 components (structs of 1-4 uint32 words, a few tags), 1-3
   resources, a few hundred to ~3000 entities, and 10-60 systems in 1-3
   stages: random terms (READ / WRITE, AND / NOT / OPTIONAL), random reads and
   writes of resources and of components reached through ecs_get /
   ecs_get_mut, chunked (1, 16 or 100 rows) or not, some after / before, at
   least one MAIN_THREAD system and exactly one EXCLUSIVE system, which makes
   immediate structural changes. The other systems are pure functions of what
   they declared: integer mixing of their READ values into their WRITE
   values and resources, plus commands through it->commands (spawn with
   values from the batch, despawn, add, remove, set) whose targets and
   values come from the batch too. The population stays near its start:
   spawns stop above it, despawns speed up well above it, and the EXCLUSIVE
   system culls when it overshoots. Entities are made from a dozen
   archetypes and structural changes add and remove only 2-3 churn
   components, so tables keep more than a few rows.

   A graph that does not validate is regenerated; a WRITERS_FIRST graph gets
   its races ordered by declared edges, or falls back to INSERTION. No
   independent_of: systems it leaves unordered may run in either order.

   After every frame: ecs_progress == ECS_OK, and the same resource bytes,
   the same per-system and per-chunk results, entity count and dropped
   command count as on 1 thread; every 10th frame and the last, the same
   test_world_hash. Inside the systems: the batch fits the chunk size,
   MAIN_THREAD systems run on thread 0, ecs_get / ecs_get_mut of a row
   returns its field's address, every command records. Outside the world,
   systems write only their own context (the per-system state and per-chunk
   sums, the EXCLUSIVE system's bookkeeping) and the calling thread's report
   slot.

   Size: 10 graphs x 300 frames x 4 thread counts at --scale 100 (about 15 s
   under ASan on 2 cores); 4 graphs x 60 frames, a fifth of the entities,
   at --scale 20. --seed N makes N the first graph's seed. */
#include "test.h"

#define SR_MAX_COMPS 16
#define SR_MAX_RES 3
#define SR_MAX_SYS 60
#define SR_MAX_TERMS 4
#define SR_MAX_EXTRA 2
#define SR_SLOTS 9            /* threads 0..7, then one for an out-of-range it->thread */
#define SR_CHUNK_SUMS 256     /* per chunked system: the results of its first chunks */
#define SR_RING 12            /* the EXCLUSIVE system's own entities */

enum { SR_SPAWN = 1, SR_DESPAWN = 2, SR_ADD = 4, SR_REMOVE = 8, SR_SET = 16 };

/* ---- the graph: a plain description, generated from a seed ---------------- */
typedef struct sr_sys {
    int stage;
    unsigned flags;
    int chunk;
    int nt, tcomp[SR_MAX_TERMS];
    ecs_access tacc[SR_MAX_TERMS];
    ecs_oper toper[SR_MAX_TERMS];
    int nrr, rres[SR_MAX_RES], nrw, wres[SR_MAX_RES];       /* resources it reads / writes */
    int ncr, rcomp[SR_MAX_EXTRA], ncw, wcomp[SR_MAX_EXTRA]; /* components in reads / writes */
    int nafter, after[ECS_MAX_DEPS], nbefore, before[ECS_MAX_DEPS];   /* system indices */
    bool use_target;          /* ecs_get / ecs_get_mut on the EXCLUSIVE system's target too */
    unsigned cmds;
    int cmd_comp[3];          /* add, remove, set: churn components */
    uint32_t salt, spawn_mod, despawn_mod, struct_mod;
} sr_sys;

typedef struct sr_graph {
    unsigned long long seed;
    int ncomp, cwords[SR_MAX_COMPS];   /* uint32 words; 0 = a tag */
    int nres, rwords[SR_MAX_RES];
    int nstages;
    ecs_order order;
    int nsys, excl;           /* excl: the EXCLUSIVE system's index */
    sr_sys sys[SR_MAX_SYS];
    int n0;                   /* entities at the start; the population cap */
    int pick_comp;            /* the EXCLUSIVE system's query */
    int narch;                /* archetypes: entities start as one, spawns too */
    unsigned arch[12];
    int nchurn, churn[3];     /* the components structural changes add and remove
                                 (any component would splinter the world into
                                 hundreds of tables of a few rows) */
} sr_graph;

/* ---- one run: a world built from the graph ------------------------------------ */
typedef struct sr_slot {      /* written only by thread `index` while systems run */
    long fails;
    int line, sys;
    const char *what;
    long calls;
    int used;                 /* ran a batch this frame */
    char pad[64];
} sr_slot;

struct sr_run;
typedef struct sr_sysctx {
    struct sr_run *run;
    int idx;
    uint32_t state;                   /* unchunked systems: folded batch results */
    uint32_t sums[SR_CHUNK_SUMS];     /* chunked systems: chunk k's result */
} sr_sysctx;

typedef struct sr_run {
    const sr_graph *g;
    ecs_world *w;
    ecs_id comp[SR_MAX_COMPS], res[SR_MAX_RES];
    uint32_t frame;           /* set between frames */
    ecs_entity target;        /* set by the EXCLUSIVE system */
    sr_slot slot[SR_SLOTS];
    sr_sysctx sc[SR_MAX_SYS];
    /* the EXCLUSIVE system's own state: thread 0, nothing else running */
    unsigned long long rng;
    ecs_entity ring[SR_RING];
    int ring_n;
    ecs_query *q_pick, *q_all;
    ecs_entity *buf;
    size_t buf_cap;
    long excl_runs, excl_errors;
    char excl_msg[200];
} sr_run;

typedef struct sr_frame { unsigned long long world, res, sys; size_t count, dropped; } sr_frame;
typedef struct sr_summary {
    int ok;
    long frames_run, calls, excl_runs, excl_errors;
    int max_threads_in_frame;
    size_t peak, low;
} sr_summary;

static uint32_t sr_mix32(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    return x ^ (x >> 16);
}
static unsigned long long sr_mix64(unsigned long long h, unsigned long long v) {
    h = (h ^ v) * 0x100000001b3ull;
    return h ^ (h >> 29);
}
static bool sr_has_term(const sr_sys *s, int j) {
    for (int k = 0; k < s->nt; k++) if (s->tcomp[k] == j) return true;
    return false;
}

/* In-system checks: counted in the calling thread's slot. */
static sr_slot *sr_slot_of(sr_run *R, const ecs_iter *it) {
    return &R->slot[it->thread >= 0 && it->thread < SR_SLOTS - 1 ? it->thread : SR_SLOTS - 1];
}
#define SR_TCHECK(R, it, cond) do { if (!(cond)) { sr_slot *s_ = sr_slot_of((R), (it)); \
    if (!s_->fails++) { s_->line = __LINE__; s_->what = #cond; s_->sys = (int)(it)->system; } } } while (0)

/* ---- printing a graph ------------------------------------------------------------ */
static void sr_print_graph(const sr_graph *g) {
    static const char *opers[3] = {"AND", "NOT", "OPT"};
    fprintf(stderr, "    graph (seed %llu): order %s, %d stages, %d entities, %d resources (words",
            g->seed, g->order == ECS_ORDER_WRITERS_FIRST ? "WRITERS_FIRST" : "INSERTION", g->nstages,
            g->n0, g->nres);
    for (int j = 0; j < g->nres; j++) fprintf(stderr, " R%d:%d", j, g->rwords[j]);
    fprintf(stderr, "), %d components (words", g->ncomp);
    for (int j = 0; j < g->ncomp; j++) fprintf(stderr, " C%d:%d", j, g->cwords[j]);
    fprintf(stderr, "), exclusive picks by C%d, archetypes", g->pick_comp);
    for (int a = 0; a < g->narch; a++) fprintf(stderr, " 0x%x", g->arch[a]);
    fprintf(stderr, ", churn");
    for (int k = 0; k < g->nchurn; k++) fprintf(stderr, " C%d", g->churn[k]);
    fprintf(stderr, "\n");
    for (int i = 0; i < g->nsys; i++) {
        const sr_sys *s = &g->sys[i];
        fprintf(stderr, "    s%d: stage %d%s%s chunk %d terms [", i + 1, s->stage,
                s->flags & ECS_SYSTEM_EXCLUSIVE ? " EXCLUSIVE" : "",
                s->flags & ECS_SYSTEM_MAIN_THREAD ? " MAIN_THREAD" : "", s->chunk);
        for (int k = 0; k < s->nt; k++)
            fprintf(stderr, "%sC%d %s %s", k ? ", " : "", s->tcomp[k], s->tacc[k] == ECS_WRITE ? "W" : "R",
                    opers[s->toper[k]]);
        fprintf(stderr, "] reads [");
        for (int k = 0; k < s->nrr; k++) fprintf(stderr, " R%d", s->rres[k]);
        for (int k = 0; k < s->ncr; k++) fprintf(stderr, " C%d", s->rcomp[k]);
        fprintf(stderr, " ] writes [");
        for (int k = 0; k < s->nrw; k++) fprintf(stderr, " R%d", s->wres[k]);
        for (int k = 0; k < s->ncw; k++) fprintf(stderr, " C%d", s->wcomp[k]);
        fprintf(stderr, " ] after [");
        for (int k = 0; k < s->nafter; k++) fprintf(stderr, " s%d", s->after[k] + 1);
        fprintf(stderr, " ] before [");
        for (int k = 0; k < s->nbefore; k++) fprintf(stderr, " s%d", s->before[k] + 1);
        fprintf(stderr, " ] cmds 0x%x (C%d C%d C%d)%s\n", s->cmds, s->cmd_comp[0], s->cmd_comp[1],
                s->cmd_comp[2], s->use_target ? " target" : "");
    }
}

/* ---- the systems ------------------------------------------------------------------ */
/* Values for a command's component, from a batch result. */
static void sr_values(uint32_t *v, int words, uint32_t in) {
    for (int k = 0; k < words; k++) v[k] = sr_mix32(in + (uint32_t)k * 0x9e3779b9u);
}
/* ecs_cmd_set, or ecs_cmd_add for a tag. */
static ecs_result sr_cmd_set(sr_run *R, ecs_commands *c, ecs_entity e, int j, uint32_t in) {
    uint32_t v[4];
    if (!R->g->cwords[j]) return ecs_cmd_add(c, e, R->comp[j]);
    sr_values(v, R->g->cwords[j], in);
    return ecs_cmd_set(c, e, R->comp[j], v);
}

static void sr_fn(ecs_iter *it) {
    sr_sysctx *sc = (sr_sysctx *)it->ctx;
    sr_run *R = sc->run;
    const sr_graph *g = R->g;
    const sr_sys *d = &g->sys[sc->idx];
    ecs_world *w = it->world;
    sr_slot *slot = sr_slot_of(R, it);
    slot->used = 1;
    slot->calls++;
    SR_TCHECK(R, it, it->system == (ecs_system)(sc->idx + 1));
    SR_TCHECK(R, it, it->thread >= 0 && it->thread < ecs_thread_count(w));
    if (d->flags & ECS_SYSTEM_MAIN_THREAD) SR_TCHECK(R, it, it->thread == 0);
    if (d->chunk) SR_TCHECK(R, it, it->count >= 1 && it->count <= d->chunk);
    else SR_TCHECK(R, it, it->chunk == 0);
    if (d->nt) SR_TCHECK(R, it, it->count > 0);
    else SR_TCHECK(R, it, it->count == 0);

    /* the resources it declared */
    uint32_t rin = d->salt ^ R->frame;
    for (int k = 0; k < d->nrr + d->nrw; k++) {
        int r = k < d->nrr ? d->rres[k] : d->wres[k - d->nrr];
        const uint32_t *p = (const uint32_t *)ecs_resource_get(w, R->res[r]);
        SR_TCHECK(R, it, p != NULL);
        for (int q = 0; p && q < g->rwords[r]; q++) rin = rin * 0x01000193u + p[q];
    }
    uint32_t *f[SR_MAX_TERMS];
    int words[SR_MAX_TERMS];
    for (int t = 0; t < d->nt; t++) {
        int j = d->tcomp[t];
        words[t] = g->cwords[j];
        f[t] = words[t] ? (uint32_t *)ecs_field_sized(it, t, (size_t)words[t] * 4) : NULL;
        if (d->toper[t] == ECS_NOT) SR_TCHECK(R, it, ecs_field(it, t) == NULL);
        else if (d->toper[t] == ECS_AND && words[t]) SR_TCHECK(R, it, f[t] != NULL);
    }
    size_t pop = ecs_count(w), cap = (size_t)g->n0;
    uint32_t despawn_mod = pop > cap + cap / 4 ? 4 : pop > cap / 2 ? d->despawn_mod : 0;
    uint32_t acc = rin;
    int spawned = 0;
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        uint32_t in = rin ^ (uint32_t)i;
        for (int t = 0; t < d->nt; t++)
            for (int q = 0; f[t] && q < words[t]; q++) in = in * 0x9e3779b1u + f[t][i * words[t] + q];
        for (int k = 0; k < d->ncr; k++) {
            const uint32_t *p = (const uint32_t *)ecs_get(w, e, R->comp[d->rcomp[k]]);
            if (p) in = in * 0x9e3779b1u + p[0];
            SR_TCHECK(R, it, (p != NULL) == ecs_has(w, e, R->comp[d->rcomp[k]]));
        }
        for (int k = 0; k < d->ncw; k++) {
            uint32_t *p = (uint32_t *)ecs_get_mut(w, e, R->comp[d->wcomp[k]]);
            SR_TCHECK(R, it, (p != NULL) == ecs_has(w, e, R->comp[d->wcomp[k]]));
            if (p) { in = in * 0x9e3779b1u + p[0]; p[0] = p[0] * 31u + (in >> 3); }
        }
        for (int t = 0; t < d->nt; t++)
            if (f[t] && d->tacc[t] == ECS_WRITE)
                for (int q = 0; q < words[t]; q++) {
                    uint32_t *v = &f[t][i * words[t] + q];
                    *v = *v * 31u + in + (uint32_t)q;
                }
        acc = acc * 31u + in;
        if ((in & 15) == 0)   /* ecs_get of its own row is its field (chunked: own batch) */
            for (int t = 0; t < d->nt; t++) {
                if (!f[t]) continue;
                ecs_id id = R->comp[d->tcomp[t]];
                const void *p = d->tacc[t] == ECS_WRITE ? ecs_get_mut(w, e, id) : ecs_get(w, e, id);
                SR_TCHECK(R, it, p == (const void *)&f[t][i * words[t]]);
            }

        /* commands, chosen and filled from the batch */
        uint32_t h = sr_mix32(in);
        ecs_commands *c = it->commands;
        if ((d->cmds & SR_SPAWN) && pop < cap && spawned < 4 && h % d->spawn_mod == 0) {
            spawned++;
            ecs_entity k = ecs_cmd_create(c);
            SR_TCHECK(R, it, k != 0);
            if (k) {
                unsigned m = g->arch[(h >> 8) % (uint32_t)g->narch];
                for (int j = 0; j < g->ncomp; j++)
                    if (m >> j & 1) SR_TCHECK(R, it, sr_cmd_set(R, c, k, j, in + (uint32_t)j) == ECS_OK);
                if ((h >> 16) & 1) SR_TCHECK(R, it, sr_cmd_set(R, c, k, d->cmd_comp[2], in) == ECS_OK);
                if ((h >> 20) % 7 == 0)
                    SR_TCHECK(R, it, ecs_cmd_remove(c, k, R->comp[d->cmd_comp[2]]) == ECS_OK);
                if ((h >> 24) % 11 == 0) {   /* dies pending: the set after it is dropped */
                    SR_TCHECK(R, it, ecs_cmd_destroy(c, k) == ECS_OK);
                    SR_TCHECK(R, it, sr_cmd_set(R, c, k, d->cmd_comp[0], in) == ECS_OK);
                }
            }
        }
        if ((d->cmds & SR_DESPAWN) && despawn_mod && (h >> 3) % despawn_mod == 0)
            SR_TCHECK(R, it, ecs_cmd_destroy(c, e) == ECS_OK);
        if ((d->cmds & SR_ADD) && (h >> 5) % d->struct_mod == 0)
            SR_TCHECK(R, it, ecs_cmd_add(c, e, R->comp[d->cmd_comp[0]]) == ECS_OK);
        if ((d->cmds & SR_REMOVE) && (h >> 7) % d->struct_mod == 0)
            SR_TCHECK(R, it, ecs_cmd_remove(c, e, R->comp[d->cmd_comp[1]]) == ECS_OK);
        if ((d->cmds & SR_SET) && (h >> 9) % d->struct_mod == 0)
            SR_TCHECK(R, it, sr_cmd_set(R, c, e, d->cmd_comp[2], h) == ECS_OK);
    }
    if (!d->nt && (d->cmds & SR_SPAWN) && pop < cap && rin % 3 == 0) {   /* no batch: from resources */
        ecs_entity k = ecs_cmd_create(it->commands);
        SR_TCHECK(R, it, k != 0);
        if (k) SR_TCHECK(R, it, sr_cmd_set(R, it->commands, k, d->cmd_comp[2], rin) == ECS_OK);
    }
    /* the EXCLUSIVE system's target: any entity, so only what it does not write in chunks */
    ecs_entity tg = R->target;
    if (d->use_target && tg && ecs_is_alive(w, tg)) {
        for (int k = 0; k < d->ncr; k++) {
            const uint32_t *p = (const uint32_t *)ecs_get(w, tg, R->comp[d->rcomp[k]]);
            if (p) acc = acc * 31u + p[g->cwords[d->rcomp[k]] - 1];
        }
        for (int k = 0; k < d->ncw; k++) {   /* unchunked only */
            uint32_t *p = (uint32_t *)ecs_get_mut(w, tg, R->comp[d->wcomp[k]]);
            if (p) p[0] += acc | 1u;
        }
    }
    /* results: resources and state in unchunked systems, per-chunk sums in chunked ones */
    for (int k = 0; k < d->nrw; k++) {
        int r = d->wres[k];
        uint32_t *p = (uint32_t *)ecs_resource_get(w, R->res[r]);
        SR_TCHECK(R, it, p != NULL);
        for (int q = 0; p && q < g->rwords[r]; q++) p[q] = p[q] * 31u + acc + (uint32_t)(it->count + q);
    }
    if (d->chunk) {
        if (it->chunk >= 0 && it->chunk < SR_CHUNK_SUMS) sc->sums[it->chunk] = acc ^ (uint32_t)it->count;
    } else {
        sc->state = sc->state * 0x01000193u + acc;
    }
}

/* Notes a failed immediate call of the EXCLUSIVE system. */
static void sr_excl_err(sr_run *R, ecs_result r, const char *what) {
    if (r == ECS_OK) return;
    if (!R->excl_errors++)
        snprintf(R->excl_msg, sizeof R->excl_msg, "frame %u: %s: %s: %s", (unsigned)R->frame, what,
                 ecs_result_str(r), ecs_last_error(R->w));
}
static ecs_result sr_set_now(sr_run *R, ecs_entity e, int j, uint32_t in) {
    uint32_t v[4];
    if (!R->g->cwords[j]) return ecs_add(R->w, e, R->comp[j]);
    sr_values(v, R->g->cwords[j], in);
    return ecs_set(R->w, e, R->comp[j], v);
}

/* Alone, on thread 0: culls when the population overshoots, changes a few
   entities picked by value, creates a few of its own (destroying the
   oldest), picks the target, writes the resources. */
static void sr_excl(ecs_iter *it) {
    sr_sysctx *sc = (sr_sysctx *)it->ctx;
    sr_run *R = sc->run;
    const sr_graph *g = R->g;
    ecs_world *w = it->world;
    sr_slot *slot = sr_slot_of(R, it);
    slot->used = 1;
    slot->calls++;
    SR_TCHECK(R, it, it->thread == 0);
    SR_TCHECK(R, it, it->count == 0);
    R->excl_runs++;
    size_t pop = ecs_count(w), cap = (size_t)g->n0;

    if (pop > cap + cap / 8) {   /* cull, chosen by handle and frame */
        size_t want = pop - cap, n = 0;
        if (R->buf_cap < want) {
            ecs_entity *p = (ecs_entity *)realloc(R->buf, want * sizeof *p);
            if (!p) { R->excl_errors++; return; }
            R->buf = p;
            R->buf_cap = want;
        }
        for (ecs_iter q = ecs_query_iter(w, R->q_all); ecs_query_next(&q);)
            for (int i = 0; i < q.count; i++) {
                ecs_entity e = q.entities[i];
                if (n < want && (sr_mix32((uint32_t)e ^ (uint32_t)(e >> 32)) + R->frame) % 3 == 0) R->buf[n++] = e;
            }
        for (size_t i = 0; i < n; i++) sr_excl_err(R, ecs_destroy(w, R->buf[i]), "ecs_destroy (cull)");
    }

    ecs_entity pick[6];
    uint32_t pv[6];
    int np = 0, pw = g->cwords[g->pick_comp];
    uint32_t rule = (uint32_t)test_rand(&R->rng) % 13;
    for (ecs_iter q = ecs_query_iter(w, R->q_pick); ecs_query_next(&q);) {
        const uint32_t *v = pw ? (const uint32_t *)ecs_field_sized(&q, 0, (size_t)pw * 4) : NULL;
        for (int i = 0; i < q.count && np < 6; i++) {
            uint32_t x = v ? v[i * pw] : sr_mix32((uint32_t)q.entities[i]);
            if (x % 13 == rule) { pv[np] = x; pick[np++] = q.entities[i]; }
        }
    }
    for (int k = 0; k < np; k++) {
        int j = g->churn[(pv[k] >> 4) % (uint32_t)g->nchurn];
        switch ((pv[k] >> 8) % 4) {
        case 0: sr_excl_err(R, ecs_remove(w, pick[k], R->comp[j]), "ecs_remove"); break;
        case 1: sr_excl_err(R, ecs_add(w, pick[k], R->comp[j]), "ecs_add"); break;
        case 2: sr_excl_err(R, sr_set_now(R, pick[k], j, pv[k]), "ecs_set"); break;
        default: sr_excl_err(R, ecs_destroy(w, pick[k]), "ecs_destroy"); break;
        }
    }

    int make = 1 + (int)test_below(&R->rng, 3);
    for (int k = 0; k < make; k++) {
        ecs_entity e = ecs_create(w);
        if (!e) { sr_excl_err(R, ECS_ERR_NOMEM, "ecs_create"); continue; }
        unsigned m = g->arch[test_below(&R->rng, (unsigned)g->narch)];
        for (int j = 0; j < g->ncomp; j++)
            if (m >> j & 1) sr_excl_err(R, sr_set_now(R, e, j, (uint32_t)test_rand(&R->rng)), "ecs_set (new)");
        if (R->ring_n == SR_RING) {
            if (ecs_is_alive(w, R->ring[0])) sr_excl_err(R, ecs_destroy(w, R->ring[0]), "ecs_destroy (ring)");
            memmove(R->ring, R->ring + 1, (SR_RING - 1) * sizeof *R->ring);
            R->ring_n--;
        }
        R->ring[R->ring_n++] = e;
    }
    if (ecs_is_alive(w, R->ring[0])) {
        ecs_id id = R->comp[g->churn[test_below(&R->rng, (unsigned)g->nchurn)]];
        sr_excl_err(R, ecs_remove(w, R->ring[0], id), "ecs_remove (ring)");
    }
    R->target = np && test_below(&R->rng, 2) ? pick[0] : R->ring[test_below(&R->rng, (unsigned)R->ring_n)];
    for (int r = 0; r < g->nres; r++) {
        uint32_t *p = (uint32_t *)ecs_resource_get(w, R->res[r]);
        if (!p) { sr_excl_err(R, ECS_ERR_ARG, "ecs_resource_get"); continue; }
        p[0] += R->frame + (uint32_t)ecs_count(w);
    }
}

/* ---- building a world from the graph ---------------------------------------------- */
/* The world of g on `threads` threads; with R, its systems get their
   contexts and the entities are created. NULL (with a failed check) if any
   call fails. */
static ecs_world *sr_build(const sr_graph *g, int threads, sr_run *R) {
    ecs_world_desc wd = {.threads = threads, .order = g->order};
    ecs_world *w = ecs_world_new(&wd);
    if (!w) { CHECKF(0, "seed %llu: ecs_world_new(%d threads) failed", g->seed, threads); return NULL; }
    ecs_id comp[SR_MAX_COMPS], res[SR_MAX_RES];
    ecs_stage stage[3] = {0, 0, 0};
    char name[32];
    unsigned long long r = g->seed ^ 0x51ed270b27d1a3c5ull;
    for (int j = 0; j < g->ncomp; j++) {
        snprintf(name, sizeof name, "C%d", j);
        comp[j] = ecs_component(w, name, (size_t)g->cwords[j] * 4, g->cwords[j] ? 4 : 0);
        if (!comp[j]) goto fail;
    }
    for (int j = 0; j < g->nres; j++) {
        uint32_t init[8];
        for (int q = 0; q < 8; q++) init[q] = (uint32_t)test_rand(&r);
        snprintf(name, sizeof name, "R%d", j);
        res[j] = ecs_resource(w, name, (size_t)g->rwords[j] * 4, 4, init);
        if (!res[j]) goto fail;
    }
    for (int s = 1; s < g->nstages; s++) {
        snprintf(name, sizeof name, "S%d", s);
        if (!(stage[s] = ecs_stage_add(w, name))) goto fail;
    }
    static char names[SR_MAX_SYS][16];
    for (int i = 0; i < g->nsys; i++) snprintf(names[i], sizeof names[i], "s%d", i + 1);
    for (int i = 0; i < g->nsys; i++) {
        const sr_sys *s = &g->sys[i];
        ecs_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = names[i];
        d.fn = i == g->excl ? sr_excl : sr_fn;
        d.ctx = R ? &R->sc[i] : NULL;
        d.stage = stage[s->stage];
        d.flags = s->flags;
        d.chunk_size = s->chunk;
        for (int k = 0; k < s->nt; k++) {
            d.terms[k].id = comp[s->tcomp[k]];
            d.terms[k].access = s->tacc[k];
            d.terms[k].oper = s->toper[k];
        }
        int nr = 0, nw = 0;
        for (int k = 0; k < s->nrr; k++) d.reads[nr++] = res[s->rres[k]];
        for (int k = 0; k < s->ncr; k++) d.reads[nr++] = comp[s->rcomp[k]];
        for (int k = 0; k < s->nrw; k++) d.writes[nw++] = res[s->wres[k]];
        for (int k = 0; k < s->ncw; k++) d.writes[nw++] = comp[s->wcomp[k]];
        for (int k = 0; k < s->nafter; k++) d.after[k] = names[s->after[k]];
        for (int k = 0; k < s->nbefore; k++) d.before[k] = names[s->before[k]];
        if (ecs_system_add(w, &d) != (ecs_system)(i + 1)) goto fail;
        if (R) { R->sc[i].run = R; R->sc[i].idx = i; }
    }
    if (!R) return w;
    memcpy(R->comp, comp, sizeof comp);
    memcpy(R->res, res, sizeof res);
    R->g = g;
    R->w = w;
    R->rng = g->seed ^ 0x2545f4914f6cdd1dull;
    R->q_pick = ecs_query_new(w, &(ecs_query_desc){.terms = {{comp[g->pick_comp], ECS_READ, ECS_AND}}});
    R->q_all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    if (!R->q_pick || !R->q_all) goto fail;
    /* entities: the archetypes, a tenth with a churn component flipped */
    for (int i = 0; i < g->n0; i++) {
        unsigned m = g->arch[test_below(&r, (unsigned)g->narch)];
        if (test_below(&r, 10) == 0) m ^= 1u << g->churn[test_below(&r, (unsigned)g->nchurn)];
        ecs_entity e = ecs_create(w);
        if (!e) goto fail;
        for (int j = 0; j < g->ncomp; j++) {
            if (!(m >> j & 1)) continue;
            uint32_t v[4];
            for (int q = 0; q < 4; q++) v[q] = (uint32_t)test_rand(&r);
            if ((g->cwords[j] ? ecs_set(w, e, comp[j], v) : ecs_add(w, e, comp[j])) != ECS_OK) goto fail;
        }
    }
    return w;
fail:
    CHECKF(0, "seed %llu: building the world failed: %s", g->seed, ecs_last_error(w));
    ecs_world_free(w);
    return NULL;
}

/* ---- generating a graph --------------------------------------------------------------- */
static void sr_gen(sr_graph *g, unsigned long long seed) {
    memset(g, 0, sizeof *g);
    unsigned long long r = seed;
    g->seed = seed;
    g->ncomp = 8 + (int)test_below(&r, 9);
    for (int j = 0; j < g->ncomp; j++) g->cwords[j] = test_below(&r, 10) == 0 ? 0 : 1 + (int)test_below(&r, 4);
    g->nres = 1 + (int)test_below(&r, 3);
    for (int j = 0; j < g->nres; j++) g->rwords[j] = 2 + (int)test_below(&r, 7);
    g->nstages = 1 + (int)test_below(&r, 3);
    g->order = test_below(&r, 3) == 0 ? ECS_ORDER_WRITERS_FIRST : ECS_ORDER_INSERTION;
    g->n0 = (int)test_scaled(300 + (long)test_below(&r, 2701), 40);
    g->pick_comp = (int)test_below(&r, (unsigned)g->ncomp);
    g->narch = 3 + (int)test_below(&r, 10);
    for (int a = 0; a < g->narch; a++)
        for (int j = 0; j < g->ncomp; j++) if (test_below(&r, 5) < 2) g->arch[a] |= 1u << j;
    g->nchurn = 2 + (int)test_below(&r, 2);
    for (int k = 0; k < g->nchurn; k++) g->churn[k] = (int)test_below(&r, (unsigned)g->ncomp);
    g->nsys = 10 + (int)test_below(&r, 51);
    g->excl = (int)test_below(&r, (unsigned)g->nsys);
    static const int chunks[5] = {1, 16, 16, 100, 100};
    int spawners = 0, despawners = 0, mains = 0, ones = 0;
    for (int i = 0; i < g->nsys; i++) {
        sr_sys *s = &g->sys[i];
        s->stage = (int)test_below(&r, (unsigned)g->nstages);
        s->salt = (uint32_t)test_rand(&r);
        for (int k = 0; k < 3; k++) s->cmd_comp[k] = g->churn[test_below(&r, (unsigned)g->nchurn)];
        s->struct_mod = 16 + (uint32_t)test_below(&r, 64);
        if (i == g->excl) { s->flags = ECS_SYSTEM_EXCLUSIVE; continue; }
        if (test_below(&r, 10) == 0) { s->flags = ECS_SYSTEM_MAIN_THREAD; mains++; }
        int want = (int)test_below(&r, 5);
        for (int k = 0; k < want; k++) {
            int j = (int)test_below(&r, (unsigned)g->ncomp);
            if (sr_has_term(s, j)) continue;
            unsigned o = test_below(&r, 10);
            s->tcomp[s->nt] = j;
            s->tacc[s->nt] = test_below(&r, 5) < 2 ? ECS_WRITE : ECS_READ;
            s->toper[s->nt] = o == 0 ? ECS_NOT : o < 3 ? ECS_OPTIONAL : ECS_AND;
            s->nt++;
        }
        if (!s->flags && s->nt && test_below(&r, 5) < 2) {   /* chunks of 1 row: one system at most */
            s->chunk = chunks[test_below(&r, 5)];
            if (s->chunk == 1 && ones++) s->chunk = 16;
        }
        for (int j = 0; j < g->nres; j++) {
            unsigned a = test_below(&r, 20);
            if (a < 3 || (a < 5 && s->chunk)) s->rres[s->nrr++] = j;
            else if (a < 5) s->wres[s->nrw++] = j;
        }
        if (test_below(&r, 5) == 0) {   /* a component through ecs_get, not one of its terms */
            int j = (int)test_below(&r, (unsigned)g->ncomp);
            if (!sr_has_term(s, j) && g->cwords[j]) s->rcomp[s->ncr++] = j;
        }
        if (!s->chunk && test_below(&r, 6) == 0) {   /* and through ecs_get_mut */
            int j = (int)test_below(&r, (unsigned)g->ncomp);
            if (!sr_has_term(s, j) && g->cwords[j] && !(s->ncr && s->rcomp[0] == j)) s->wcomp[s->ncw++] = j;
        }
        s->use_target = (s->ncr || s->ncw) && test_below(&r, 2);
        if (test_below(&r, 4) == 0) { s->cmds |= SR_SPAWN; spawners++; }
        if (test_below(&r, 4) == 0) { s->cmds |= SR_DESPAWN; despawners++; }
        if (test_below(&r, 5) == 0) s->cmds |= SR_ADD;
        if (test_below(&r, 5) == 0) s->cmds |= SR_REMOVE;
        if (test_below(&r, 5) == 0) s->cmds |= SR_SET;
    }
    if (!mains) {   /* at least one MAIN_THREAD system */
        sr_sys *s = &g->sys[(g->excl + 1) % g->nsys];
        s->flags = ECS_SYSTEM_MAIN_THREAD;
        s->chunk = 0;
    }
    for (int i = 0; i < g->nsys; i++) {   /* spawns and despawns: a few percent a frame in all */
        sr_sys *s = &g->sys[i];
        s->spawn_mod = 16 * (uint32_t)(spawners + 1) + s->salt % 16;
        s->despawn_mod = 64 * (uint32_t)(despawners + 1) + (s->salt >> 8) % 32;
    }
    for (int i = 0; i < g->nsys; i++) {   /* declared order, inside a stage; now and then backwards */
        sr_sys *s = &g->sys[i];
        for (int pass = 0; pass < 2; pass++) {
            if (test_below(&r, 8)) continue;
            bool back = test_below(&r, 6) == 0;
            int j = (int)test_below(&r, (unsigned)g->nsys);
            if (j == i || g->sys[j].stage != s->stage) continue;
            if (!back && (pass == 0 ? j > i : j < i)) continue;
            if (pass == 0) s->after[s->nafter++] = j;
            else s->before[s->nbefore++] = j;
        }
    }
}

/* Adds "b after a" to g, wherever a dependency list has room. */
static bool sr_add_edge(sr_graph *g, int a, int b) {
    sr_sys *sa = &g->sys[a], *sb = &g->sys[b];
    if (sb->nafter < ECS_MAX_DEPS) { sb->after[sb->nafter++] = a; return true; }
    if (sa->nbefore < ECS_MAX_DEPS) { sa->before[sa->nbefore++] = b; return true; }
    return false;
}

/* ECS_OK, or the validation result; with repair, RACE problems become
   declared edges (earlier registration first) until the graph validates. */
static ecs_result sr_validate(sr_graph *g, bool repair) {
    for (int round = 0; round < 12; round++) {
        ecs_world *w = sr_build(g, 1, NULL);
        if (!w) return ECS_ERR_NOMEM;
        ecs_report rep;
        ecs_result v = ecs_validate(w, &rep);
        bool fixed = false;
        if (v == ECS_ERR_INVALID_GRAPH && repair) {
            fixed = true;
            for (int p = 0; p < rep.count && fixed; p++) {
                const ecs_problem *pr = &rep.problems[p];
                fixed = pr->kind == ECS_PROBLEM_RACE && pr->a >= 1 && pr->b > pr->a &&
                        (int)pr->b <= g->nsys && sr_add_edge(g, (int)pr->a - 1, (int)pr->b - 1);
            }
        }
        ecs_world_free(w);
        if (v != ECS_ERR_INVALID_GRAPH || !fixed) return v;
    }
    return ECS_ERR_INVALID_GRAPH;
}

/* A valid graph from seed: regenerated (from a seed derived from it) while
   invalid; WRITERS_FIRST graphs get their races ordered, or fall back to
   INSERTION. Returns the attempts it took, 0 if none validated. */
static int sr_make_graph(sr_graph *g, unsigned long long seed) {
    unsigned long long next = seed;
    static sr_graph copy;
    for (int attempt = 1; attempt <= 30; attempt++) {
        sr_gen(g, attempt == 1 ? seed : test_rand(&next));
        if (g->order == ECS_ORDER_WRITERS_FIRST) {
            copy = *g;
            ecs_result v = sr_validate(g, true);
            if (v == ECS_OK) return attempt;
            if (v != ECS_ERR_INVALID_GRAPH) return 0;
            *g = copy;
            g->order = ECS_ORDER_INSERTION;
        }
        ecs_result v = sr_validate(g, false);
        if (v == ECS_OK) return attempt;
        if (v != ECS_ERR_INVALID_GRAPH) return 0;
    }
    return 0;
}

/* ---- running ------------------------------------------------------------------------------ */
static unsigned long long sr_resource_hash(sr_run *R) {
    unsigned long long h = 1469598103934665603ull;
    for (int r = 0; r < R->g->nres; r++) {
        const unsigned char *p = (const unsigned char *)ecs_resource_get(R->w, R->res[r]);
        if (!p) return 0;
        for (size_t b = 0; b < (size_t)R->g->rwords[r] * 4; b++) h = sr_mix64(h, p[b]);
    }
    return h;
}
/* The systems' own results this frame; clears the chunk sums. */
static unsigned long long sr_system_hash(sr_run *R) {
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < R->g->nsys; i++) {
        sr_sysctx *sc = &R->sc[i];
        h = sr_mix64(h, sc->state);
        if (!R->g->sys[i].chunk) continue;
        for (int k = 0; k < SR_CHUNK_SUMS; k++) {
            if (sc->sums[k]) h = sr_mix64(h, ((unsigned long long)k << 32) | sc->sums[k]);
            sc->sums[k] = 0;
        }
    }
    return sr_mix64(h, R->target);
}

static sr_summary sr_run_graph(const sr_graph *g, int threads, long frames, sr_frame *rec) {
    sr_summary out;
    memset(&out, 0, sizeof out);
    memset(rec, 0, (size_t)frames * sizeof *rec);
    sr_run *R = (sr_run *)calloc(1, sizeof *R);
    if (!R) { CHECKF(0, "seed %llu: out of memory", g->seed); return out; }
    ecs_world *w = sr_build(g, threads, R);
    if (!w) { free(R); return out; }
    ecs_report rep;
    ecs_result v = ecs_validate(w, &rep);
    CHECKF(v == ECS_OK, "seed %llu, %d threads: ecs_validate: %s", g->seed, threads, ecs_result_str(v));
    out.ok = v == ECS_OK;
    out.low = (size_t)-1;
    for (long f = 0; out.ok && f < frames; f++) {
        R->frame = (uint32_t)f;
        for (int t = 0; t < SR_SLOTS; t++) R->slot[t].used = 0;
        ecs_result pr = ecs_progress(w, 1.0f / 60);
        if (pr != ECS_OK) {
            CHECKF(0, "seed %llu, %d threads, frame %ld: ecs_progress: %s: %s", g->seed, threads, f,
                   ecs_result_str(pr), ecs_last_error(w));
            out.ok = 0;
            break;
        }
        int used = 0;
        for (int t = 0; t < SR_SLOTS; t++) used += R->slot[t].used;
        if (used > out.max_threads_in_frame) out.max_threads_in_frame = used;
        sr_frame *fr = &rec[f];
        fr->res = sr_resource_hash(R);
        fr->sys = sr_system_hash(R);
        fr->count = ecs_count(w);
        fr->dropped = ecs_commands_dropped(w);
        if (f % 10 == 9 || f == frames - 1) fr->world = test_world_hash(w);
        if (fr->count > out.peak) out.peak = fr->count;
        if (fr->count < out.low) out.low = fr->count;
        out.frames_run = f + 1;
    }
    for (int t = 0; t < SR_SLOTS; t++) {
        const sr_slot *s = &R->slot[t];
        out.calls += s->calls;
        if (!s->fails) continue;
        out.ok = 0;
        CHECKF(0, "seed %llu, %d threads: in system s%d on thread %d%s: SR_TCHECK(%s) at line %d failed "
               "%ld time(s)", g->seed, threads, s->sys, t, t == SR_SLOTS - 1 ? " (out of range)" : "",
               s->what, s->line, s->fails);
    }
    if (R->excl_errors) {
        out.ok = 0;
        CHECKF(0, "seed %llu, %d threads: %ld failed calls in the exclusive system; first: %s", g->seed,
               threads, R->excl_errors, R->excl_msg);
    }
    out.excl_runs = R->excl_runs;
    out.excl_errors = R->excl_errors;
    ecs_query_free(R->q_pick);
    ecs_query_free(R->q_all);
    ecs_world_free(w);
    free(R->buf);
    free(R);
    return out;
}

/* The first frame where b differs from a, or -1; what names the field. */
static long sr_diverged(const sr_frame *a, const sr_frame *b, long frames, const char **what) {
    for (long f = 0; f < frames; f++) {
        *what = a[f].count != b[f].count ? "entity count" : a[f].dropped != b[f].dropped ? "dropped commands"
              : a[f].res != b[f].res ? "resource bytes" : a[f].sys != b[f].sys ? "system / chunk results"
              : a[f].world != b[f].world ? "test_world_hash" : NULL;
        if (*what) return f;
    }
    return -1;
}

TEST(sched_random_stress_hashes) {
    static const int thread_counts[4] = {1, 2, 3, 8};
    unsigned long long base = test_g.seed_given ? test_g.seed : 0x5eed5151ull, next = base;
    int graphs = (int)test_scaled(10, 4);
    long frames = test_scaled(300, 40);
    static sr_graph g;
    sr_frame *first = (sr_frame *)calloc((size_t)frames, sizeof *first);
    sr_frame *rec = (sr_frame *)calloc((size_t)frames, sizeof *rec);
    REQUIRE(first && rec);
    size_t dropped = 0;
    int most_threads = 0;
    for (int gi = 0; gi < graphs; gi++) {
        unsigned long long seed = gi ? test_rand(&next) : base;
        int attempts = sr_make_graph(&g, seed);
        if (!attempts) {
            CHECKF(0, "seed %llu: no valid graph in 30 attempts", seed);
            continue;
        }
        sr_summary s1;
        memset(&s1, 0, sizeof s1);
        bool printed = false;
        for (int k = 0; k < 4; k++) {
            int threads = thread_counts[k];
            int fails0 = test_g.checks_failed;
            sr_summary s = sr_run_graph(&g, threads, frames, k ? rec : first);
            if (k == 0) {
                s1 = s;
                dropped += s.frames_run ? first[s.frames_run - 1].dropped : 0;
            } else if (s.ok && s1.ok) {
                const char *what = NULL;
                long f = sr_diverged(first, rec, frames, &what);
                CHECKF(f < 0, "seed %llu (graph %d): %d threads vs 1: %s first differs after frame %ld (0-based) "
                       "(count %zu vs %zu, dropped %zu vs %zu)", g.seed, gi, threads, what ? what : "",
                       f, f >= 0 ? rec[f].count : 0, f >= 0 ? first[f].count : 0,
                       f >= 0 ? rec[f].dropped : 0, f >= 0 ? first[f].dropped : 0);
                CHECKF(s.calls == s1.calls, "seed %llu: %d threads: %ld system calls, 1 thread: %ld",
                       g.seed, threads, s.calls, s1.calls);
                CHECKF(s.excl_runs == s1.excl_runs && s.excl_runs == frames,
                       "seed %llu: %d threads: the exclusive system ran %ld times (1 thread: %ld, frames %ld)",
                       g.seed, threads, s.excl_runs, s1.excl_runs, frames);
                if (s.max_threads_in_frame > most_threads) most_threads = s.max_threads_in_frame;
            }
            if (test_g.checks_failed != fails0 && !printed) {
                printed = true;
                fprintf(stderr, "  rerun: --seed %llu (graph %d of seed %llu)\n", seed, gi, base);
                sr_print_graph(&g);
            }
        }
        if (!s1.ok) continue;
        CHECKF(s1.low > 0, "seed %llu: the population died out (low %zu, peak %zu)", g.seed, s1.low, s1.peak);
        CHECKF(s1.peak <= (size_t)g.n0 * 3 + 64, "seed %llu: the population ran away (peak %zu, start %d)",
               g.seed, s1.peak, g.n0);
    }
    CHECKF(dropped > 0, "no command was ever dropped (seed %llu)", base);
#if !defined(ECS_NO_THREADS) && !defined(ECS_VALGRIND)
    /* Valgrind runs one thread at a time, so overlap is luck there. */
    CHECKF(most_threads >= 2, "no frame ran systems on two threads (seed %llu)", base);
#endif
    free(first);
    free(rec);
}

void suite_stress(void) {
    RUN(sched_random_stress_hashes);
}
