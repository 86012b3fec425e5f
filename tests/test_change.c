/* change detection tests: ECS_CHANGED systems and query loops against a
   per-row model of the world (every table's rows in order, swap-remove and
   all), over random frames of sets, ecs_get_mut, adds, removes, destroys
   and creates between frames and WRITE-term writers (some batches calling
   ecs_iter_skip_changes) inside them. Every changed row must be handed out;
   a table nothing touched never is; the batches are the same at 1, 2, 3
   and 8 threads. Then ecs_query_changed's truth table and bad input.
   Systems record what they were handed into per-chunk slots, read after
   ecs_progress (one writer per slot: TSan sees only the library's hand-offs). */
#include "test.h"
#include <stdint.h>

typedef struct ch_val { int32_t v; } ch_val;

/* ---- the model: tables as row arrays, keyed by their id lists ---------------- */
enum { CH_MAX_ENT = 32768, CH_MAX_TABLES = 16, CH_READERS = 4, CH_MAX_CHUNKS = 256, CH_MAX_BATCH = 64 };
typedef struct ch_table { const ecs_id *key; ecs_entity *rows; uint32_t n; bool touched[CH_READERS]; } ch_table;
typedef struct ch_model {
    ch_table t[CH_MAX_TABLES];
    int tables;
    bool dirty[CH_READERS][CH_MAX_ENT];   /* by entity index: changed since the reader's run */
} ch_model;

static uint32_t ch_index(ecs_entity e) { return (uint32_t)e; }
static ch_table *ch_table_of(ch_model *m, ecs_world *w, ecs_entity e) {
    const ecs_id *ids = NULL;
    ecs_entity_ids(w, e, &ids);
    for (int i = 0; i < m->tables; i++)
        if (m->t[i].key == ids) return &m->t[i];
    if (m->tables == CH_MAX_TABLES) return NULL;
    ch_table *t = &m->t[m->tables++];
    memset(t, 0, sizeof *t);
    t->key = ids;
    t->rows = (ecs_entity *)calloc(CH_MAX_ENT, sizeof *t->rows);
    return t;
}
/* Readers 0-2 watch A, reader 3 watches B: a change of `cols` (1: A, 2: B, 3: both). */
static void ch_mark_cols(ch_model *m, ecs_entity e, int cols) {
    for (int r = 0; r < CH_READERS; r++)
        if (cols & (r == 3 ? 2 : 1)) m->dirty[r][ch_index(e)] = true;
}
static void ch_mark(ch_model *m, ecs_entity e) { ch_mark_cols(m, e, 3); }
static void ch_touch(ch_table *t) {
    for (int r = 0; r < CH_READERS; r++) t->touched[r] = true;
}
/* e leaves t: the last row fills its place (and counts as changed). */
static void ch_leave(ch_model *m, ch_table *t, ecs_entity e) {
    for (uint32_t i = 0; i < t->n; i++)
        if (t->rows[i] == e) {
            t->rows[i] = t->rows[--t->n];
            if (i < t->n) ch_mark(m, t->rows[i]);
            ch_touch(t);
            return;
        }
}
static void ch_enter(ch_model *m, ch_table *t, ecs_entity e) {
    t->rows[t->n++] = e;
    ch_mark(m, e);
    ch_touch(t);
}
/* A structural call on e: from where the model has it to where it is now. */
static void ch_moved(ch_model *m, ecs_world *w, ch_table *from, ecs_entity e) {
    ch_table *to = ecs_is_alive(w, e) ? ch_table_of(m, w, e) : NULL;
    if (from == to) return;
    if (from) ch_leave(m, from, e);
    if (to) ch_enter(m, to, e);
}

/* ---- systems: writers and ECS_CHANGED readers, recording per chunk ----------- */
typedef struct ch_batch { ecs_entity first; int count; } ch_batch;
typedef struct ch_rec {   /* one system's run: its batches, per chunk */
    ch_batch b[CH_MAX_CHUNKS][CH_MAX_BATCH];
    int n[CH_MAX_CHUNKS];
    bool overflow[CH_MAX_CHUNKS];
} ch_rec;
typedef struct ch_sys { ecs_id a, b; int term; bool skips; ch_rec rec; const ecs_entity *ents[CH_MAX_CHUNKS][CH_MAX_BATCH]; } ch_sys;

static void ch_record(ch_sys *c, ecs_iter *it) {
    int k = it->chunk;
    if (k >= CH_MAX_CHUNKS || c->rec.n[k] == CH_MAX_BATCH) { c->rec.overflow[k < CH_MAX_CHUNKS ? k : 0] = true; return; }
    c->rec.b[k][c->rec.n[k]] = (ch_batch){it->entities[0], it->count};
    c->ents[k][c->rec.n[k]++] = it->entities;
}
static void ch_read(ecs_iter *it) { ch_record((ch_sys *)it->ctx, it); }
/* Writes term 0; a batch whose first entity is odd-numbered (skips) says it wrote nothing. */
static void ch_write(ecs_iter *it) {
    ch_sys *c = (ch_sys *)it->ctx;
    ch_val *v = ECS_FIELD(it, ch_val, 0);
    if (c->skips && (ch_index(it->entities[0]) & 1)) {
        ecs_iter_skip_changes(it, 0);
        return;   /* (and records nothing: the model sees no write) */
    }
    for (int i = 0; i < it->count; i++) v[i].v++;
    ch_record(c, it);
}
static void ch_rec_clear(ch_sys *c) { memset(c->rec.n, 0, sizeof c->rec.n); }

/* The rows a system was handed this run, as a set of entity indices. */
static void ch_handed(const ch_sys *c, bool *out) {
    memset(out, 0, CH_MAX_ENT * sizeof *out);
    for (int k = 0; k < CH_MAX_CHUNKS; k++)
        for (int i = 0; i < c->rec.n[k]; i++)
            for (int j = 0; j < c->rec.b[k][i].count; j++) out[ch_index(c->ents[k][i][j])] = true;
}

/* ---- the program ------------------------------------------------------------------ */
typedef struct ch_world {
    ecs_world *w;
    ecs_id a, b, tag;
    ch_model m;
    ch_sys wr[2], rd[CH_READERS];
    ecs_entity ents[CH_MAX_ENT];
    int ent_count;
    uint64_t sig;
} ch_world;

static void ch_world_free(ch_world *cw) {
    for (int i = 0; i < cw->m.tables; i++) free(cw->m.t[i].rows);
    ecs_world_free(cw->w);
}

/* Readers: R0 before writer W0 in stage 0 (sees its writes a frame late),
   R1 after it, R2 and R3 in the late stage (R3 also watches B, chunked). */
static bool ch_setup(ch_world *cw, int threads, unsigned long long seed) {
    memset(cw, 0, sizeof *cw);
    cw->w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!cw->w) return false;
    ecs_world *w = cw->w;
    cw->a = ecs_component(w, "A", sizeof(ch_val), _Alignof(ch_val));
    cw->b = ecs_component(w, "B", sizeof(ch_val), _Alignof(ch_val));
    cw->tag = ecs_component(w, "T", 0, 0);   /* a tag */
    ecs_stage late = ecs_stage_add(w, "late");
    if (!cw->a || !cw->b || !cw->tag || !late) return false;
    unsigned long long rng = seed;
    int n = 16000 + (int)test_below(&rng, 4000);   /* ~20 blocks: filtering shows */
    for (int i = 0; i < n; i++) {
        ecs_entity e = ecs_create(w);
        ch_table *from = ch_table_of(&cw->m, w, e);
        ch_enter(&cw->m, from, e);
        ecs_set(w, e, cw->a, &(ch_val){i});
        if (i % 3 == 0) ecs_set(w, e, cw->b, &(ch_val){i});
        if (i % 5 == 0) ecs_add(w, e, cw->tag);
        ch_moved(&cw->m, w, from, e);
        cw->ents[cw->ent_count++] = e;
    }
    for (int s = 0; s < 2; s++) cw->wr[s].skips = s == 1;
    ecs_term rd_a = {cw->a, ECS_READ, ECS_CHANGED};
    bool ok = ecs_system_add(w, &(ecs_system_desc){.name = "R0", .fn = ch_read, .ctx = &cw->rd[0],
                  .terms = {rd_a}, .before = {"W0"}}) &&
              ecs_system_add(w, &(ecs_system_desc){.name = "W0", .fn = ch_write, .ctx = &cw->wr[0],
                  .terms = {ECS_TERM_W(cw->a), ECS_TERM_R(cw->tag)}, .chunk_size = 150}) &&
              ecs_system_add(w, &(ecs_system_desc){.name = "R1", .fn = ch_read, .ctx = &cw->rd[1],
                  .terms = {rd_a}, .after = {"W0"}, .chunk_size = 700}) &&
              ecs_system_add(w, &(ecs_system_desc){.name = "W1", .fn = ch_write, .ctx = &cw->wr[1],
                  .terms = {ECS_TERM_W(cw->a), ECS_TERM_NOT(cw->tag)}, .chunk_size = 90, .stage = late,
                  .interval = 4}) &&
              ecs_system_add(w, &(ecs_system_desc){.name = "R2", .fn = ch_read, .ctx = &cw->rd[2],
                  .terms = {rd_a}, .stage = late, .after = {"W1"}}) &&
              ecs_system_add(w, &(ecs_system_desc){.name = "R3", .fn = ch_read, .ctx = &cw->rd[3],
                  .terms = {{cw->a, ECS_READ, ECS_OPTIONAL}, {cw->b, ECS_READ, ECS_CHANGED}}, .stage = late,
                  .chunk_size = 333, .before = {"W1"}});
    return ok && ecs_validate(w, NULL) == ECS_OK;
}

/* Between frames: sets, get_mut, adds and removes of B and T, destroys and creates. */
static void ch_ops(ch_world *cw, unsigned long long *rng) {
    ecs_world *w = cw->w;
    int ops = (int)test_below(rng, 12);
    for (int k = 0; k < ops; k++) {
        ecs_entity e = cw->ents[test_below(rng, (unsigned)cw->ent_count)];
        if (!ecs_is_alive(w, e)) continue;
        ch_table *from = ch_table_of(&cw->m, w, e);
        switch (test_below(rng, 7)) {
        case 0: ecs_set(w, e, cw->a, &(ch_val){k}); ch_mark_cols(&cw->m, e, 1); ch_touch(from); break;
        case 1: {
            ch_val *v = (ch_val *)ecs_get_mut(w, e, cw->a);
            if (v) v->v--;
            ch_mark_cols(&cw->m, e, 1);
            ch_touch(from);
            break;
        }
        case 2: ecs_set(w, e, cw->b, &(ch_val){k}); ch_mark_cols(&cw->m, e, 2); ch_touch(from); break;
        case 3: ecs_remove(w, e, cw->b); break;
        case 4: if (ecs_has(w, e, cw->tag)) ecs_remove(w, e, cw->tag); else ecs_add(w, e, cw->tag); break;
        case 5: ecs_destroy(w, e); break;
        default:
            if (cw->ent_count < CH_MAX_ENT - 1) {
                ecs_entity c = ecs_create(w);
                ch_table *root = ch_table_of(&cw->m, w, c);
                ch_enter(&cw->m, root, c);
                ecs_set(w, c, cw->a, &(ch_val){-k});
                ch_moved(&cw->m, w, root, c);
                if (ch_index(c) < CH_MAX_ENT) cw->ents[cw->ent_count++] = c;
            }
        }
        ch_moved(&cw->m, w, from, e);
    }
}

/* A reader's run checked against the model: every row dirty for it (and
   with its columns) handed out, no batch from an untouched table; then
   its marks clear. */
static int ch_check_reader(ch_world *cw, int r, long frame, bool watch_b) {
    static bool handed[CH_MAX_ENT];
    const ch_sys *c = &cw->rd[r];
    int bad = 0;
    for (int k = 0; k < CH_MAX_CHUNKS; k++)
        if (c->rec.overflow[k]) { CHECKF(0, "R%d: too many batches in chunk %d", r, k); return 1; }
    ch_handed(c, handed);
    for (int i = 0; i < cw->m.tables; i++) {
        ch_table *t = &cw->m.t[i];
        for (uint32_t j = 0; j < t->n; j++) {
            ecs_entity e = t->rows[j];
            bool has = ecs_has(cw->w, e, watch_b ? cw->b : cw->a);
            if (has && cw->m.dirty[r][ch_index(e)] && !handed[ch_index(e)] && !bad++)
                CHECKF(0, "R%d, frame %ld: changed entity %u (table %d, row %u) not handed out", r, frame,
                       (unsigned)ch_index(e), i, (unsigned)j);
            if (handed[ch_index(e)] && !t->touched[r] && !bad++)
                CHECKF(0, "R%d, frame %ld: entity %u of untouched table %d handed out", r, frame,
                       (unsigned)ch_index(e), i);
        }
        t->touched[r] = false;
    }
    memset(cw->m.dirty[r], 0, sizeof cw->m.dirty[r]);
    uint64_t h = cw->sig ^ (uint64_t)(r + 1) * 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < CH_MAX_CHUNKS; k++)
        for (int i = 0; i < c->rec.n[k]; i++) {
            h = (h ^ c->rec.b[k][i].first) * 0xff51afd7ed558ccdull;
            h = (h ^ (uint64_t)c->rec.b[k][i].count << 20 ^ (uint64_t)k) * 0xff51afd7ed558ccdull;
        }
    cw->sig = h ^ h >> 29;
    return bad;
}
/* A writer's batches: its rows changed, for everyone after it. */
static void ch_apply_writer(ch_world *cw, int s) {
    const ch_sys *c = &cw->wr[s];
    for (int k = 0; k < CH_MAX_CHUNKS; k++)
        for (int i = 0; i < c->rec.n[k]; i++) {
            for (int j = 0; j < c->rec.b[k][i].count; j++) ch_mark_cols(&cw->m, c->ents[k][i][j], 1);
            ch_touch(ch_table_of(&cw->m, cw->w, c->ents[k][i][0]));
        }
}

TEST(sched_change_model) {
    const long frames = test_scaled(40, 12);
    static const int threads[4] = {1, 2, 3, 8};
    uint64_t ref = 0;
    for (int ti = 0; ti < 4; ti++) {
        static ch_world cw;
        unsigned long long rng = test_g.seed ^ 0xC4A46Eull;
        REQUIRE(ch_setup(&cw, threads[ti], rng));
        int bad = 0;
        long handed_rows = 0;
        for (long f = 0; f < frames && !bad; f++) {
            if (f) ch_ops(&cw, &rng);
            for (int s = 0; s < 2; s++) ch_rec_clear(&cw.wr[s]);
            for (int r = 0; r < CH_READERS; r++) ch_rec_clear(&cw.rd[r]);
            CHECK_EQ_INT(ecs_progress(cw.w, 0.01f), ECS_OK);
            for (int r = 0; r < CH_READERS; r++)
                for (int k = 0; k < CH_MAX_CHUNKS; k++)
                    for (int i = 0; i < cw.rd[r].rec.n[k]; i++) handed_rows += cw.rd[r].rec.b[k][i].count;
            /* in run order: R0, W0, R1 | R3, W1, R2 */
            bad += ch_check_reader(&cw, 0, f, false);
            ch_apply_writer(&cw, 0);
            bad += ch_check_reader(&cw, 1, f, false);
            bad += ch_check_reader(&cw, 3, f, true);
            ch_apply_writer(&cw, 1);
            bad += ch_check_reader(&cw, 2, f, false);
        }
        CHECKF(handed_rows < (long)frames * CH_READERS * 16000 / 2, "%d threads: %ld rows handed out: little filtering",
               threads[ti], handed_rows);
        if (ti == 0) ref = cw.sig;
        CHECKF(cw.sig == ref, "%d threads: the batches differ from 1 thread's (seed %llu)", threads[ti], test_g.seed);
        ch_world_free(&cw);
    }
}

/* ---- snapshots: a restored world hands out exactly the batches it did --------- */
static uint64_t ch_frame_sig(const ch_world *cw) {
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int r = 0; r < CH_READERS + 2; r++) {
        const ch_sys *c = r < CH_READERS ? &cw->rd[r] : &cw->wr[r - CH_READERS];
        for (int k = 0; k < CH_MAX_CHUNKS; k++)
            for (int i = 0; i < c->rec.n[k]; i++) {
                h = (h ^ c->rec.b[k][i].first ^ (uint64_t)r << 56) * 0xff51afd7ed558ccdull;
                h = (h ^ (uint64_t)c->rec.b[k][i].count << 24 ^ (uint64_t)k) * 0xff51afd7ed558ccdull;
            }
    }
    return h ^ h >> 31;
}
TEST(change_snapshot_replay) {
    enum { FRAMES = 20, AT = 8 };
    static const int threads[2] = {1, 3};
    for (int ti = 0; ti < 2; ti++) {
        static ch_world cw;
        REQUIRE(ch_setup(&cw, threads[ti], test_g.seed ^ 0x5AA9ull));
        uint64_t sig[FRAMES];
        ecs_snapshot *snap = NULL, *read = NULL;
        int ents_at = 0;
        for (int pass = 0; pass < 3; pass++)   /* as run; restored; restored from a save file */
            for (int f = pass ? AT : 0; f < FRAMES; f++) {
                if (f == AT && !pass) {
                    REQUIRE((snap = ecs_snapshot_take(cw.w)) != NULL);
                    ents_at = cw.ent_count;
                    FILE *file = tmpfile();
                    REQUIRE(file);
                    CHECK_EQ_INT(ecs_snapshot_write(snap, file), ECS_OK);
                    rewind(file);
                    read = ecs_snapshot_read(cw.w, file);
                    fclose(file);
                    CHECKF(read != NULL, "%s", ecs_last_error(cw.w));
                    REQUIRE(read);
                } else if (f == AT) {
                    CHECK_EQ_INT(ecs_snapshot_restore(cw.w, pass == 1 ? snap : read), ECS_OK);
                    cw.ent_count = ents_at;
                }
                unsigned long long rng = test_g.seed ^ (unsigned long long)f * 0x9E3779B97F4A7C15ull;
                if (f) ch_ops(&cw, &rng);
                for (int k = 0; k < 2; k++) ch_rec_clear(&cw.wr[k]);
                for (int r = 0; r < CH_READERS; r++) ch_rec_clear(&cw.rd[r]);
                CHECK_EQ_INT(ecs_progress(cw.w, 0.01f), ECS_OK);
                uint64_t h = ch_frame_sig(&cw);
                if (!pass) sig[f] = h;
                else if (h != sig[f]) {
                    CHECKF(0, "%d threads: frame %d after the restore%s handed out other batches", threads[ti], f,
                           pass == 2 ? " from a file" : "");
                    break;
                }
            }
        ecs_snapshot_free(snap);
        ecs_snapshot_free(read);
        ch_world_free(&cw);
    }
}

/* ---- query loops and ecs_query_changed ------------------------------------------- */
static long ch_loop(ecs_world *w, ecs_query *q, bool write) {
    long n = 0;
    ecs_iter it = ecs_query_iter(w, q);
    while (ecs_query_next(&it)) {
        n += it.count;
        if (write) ((ch_val *)ecs_field(&it, 0))[0].v++;
    }
    return n;
}
TEST(change_query_loops) {
    ecs_world *w = ecs_world_new(NULL);
    REQUIRE(w);
    ecs_id a = ECS_COMPONENT(w, ch_val), b = ecs_component(w, "B", 4, 4);
    ecs_entity e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = ecs_create(w);
        ecs_set(w, e[i], a, &(ch_val){i});
    }
    ecs_query *plain = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(a)}});
    ecs_query *changed = ecs_query_new(w, &(ecs_query_desc){.terms = {{a, ECS_READ, ECS_CHANGED}}});
    ecs_query *writer = ecs_query_new(w, &(ecs_query_desc){.terms = {{a, ECS_WRITE, ECS_CHANGED}}});
    REQUIRE(plain && changed && writer);
    CHECK(ecs_query_changed(w, plain));           /* never looped */
    CHECK_EQ_INT(ch_loop(w, plain, false), 3000);
    CHECK(!ecs_query_changed(w, plain));          /* looped, nothing since */
    CHECK_EQ_INT(ch_loop(w, changed, false), 3000);   /* the first loop: everything */
    CHECK_EQ_INT(ch_loop(w, changed, false), 0);
    ecs_set(w, e[1500], a, &(ch_val){7});
    CHECK(ecs_query_changed(w, plain));
    CHECK_EQ_INT(ch_loop(w, changed, false), 1024);   /* block 1 */
    CHECK_EQ_INT(ch_loop(w, plain, false), 3000);
    CHECK(!ecs_query_changed(w, plain));
    /* a loop's own writes do not count for it, but do for others */
    CHECK_EQ_INT(ch_loop(w, writer, true), 3000);
    CHECK_EQ_INT(ch_loop(w, writer, false), 0);
    CHECK_EQ_INT(ch_loop(w, changed, false), 3000);
    CHECK(ecs_query_changed(w, plain));
    ch_loop(w, plain, false);
    /* a loop left early completes nothing */
    ecs_set(w, e[10], a, &(ch_val){1});
    ecs_iter it = ecs_query_iter(w, changed);
    CHECK(ecs_query_next(&it));
    ecs_iter_fini(&it);
    CHECK_EQ_INT(ch_loop(w, changed, false), 1024);
    /* an entity leaving a table: the hole's block changed; the table left empty counts */
    ecs_destroy(w, e[0]);
    CHECK_EQ_INT(ch_loop(w, changed, false), 1024);
    CHECK(ecs_query_changed(w, plain));
    ch_loop(w, plain, false);
    ecs_query *onb = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(b)}});
    REQUIRE(onb);
    ecs_set(w, e[5], b, &(ch_val){1});
    CHECK(ecs_query_changed(w, onb));   /* (the first call: loops mark it from now on) */
    ch_loop(w, onb, false);
    CHECK(!ecs_query_changed(w, onb));
    ecs_remove(w, e[5], b);   /* its table is empty now */
    CHECK(ecs_query_changed(w, onb));
    /* a restore brings back the stamps and the query's mark: the same batches again */
    ch_loop(w, changed, false);
    ecs_set(w, e[100], a, &(ch_val){5});
    ecs_snapshot *snap = ecs_snapshot_take(w);
    REQUIRE(snap);
    CHECK_EQ_INT(ch_loop(w, changed, false), 1024);
    ecs_set(w, e[2998], a, &(ch_val){5});
    CHECK_EQ_INT(ecs_snapshot_restore(w, snap), ECS_OK);
    CHECK_EQ_INT(ch_loop(w, changed, false), 1024);
    CHECK_EQ_INT(ch_loop(w, changed, false), 0);
    ecs_snapshot_free(snap);
    /* bad input */
    CHECK(!ecs_query_changed(w, NULL));
    CHECK(!ecs_query_changed(NULL, plain));
    ecs_iter_skip_changes(NULL, 0);
    CHECK(ecs_query_new(w, &(ecs_query_desc){.terms = {{a, ECS_READ, (ecs_oper)4}}}) == NULL);
    ecs_world_free(w);
}

/* A query with ECS_CHANGED terms in a system: its loop is the system's (own
   writes do not count); a chunked system's chunks would mark it at once, so
   the access checks refuse that. */
typedef struct ch_qs { ecs_query *q; long rows; int loops; } ch_qs;
static void ch_loop_sys(ecs_iter *it) {
    ch_qs *c = (ch_qs *)it->ctx;
    if (it->chunk > 0) return;   /* (one chunk is enough to be refused) */
    c->loops++;
    for (ecs_iter q = ecs_query_iter(it->world, c->q); ecs_query_next(&q);) c->rows += q.count;
}
TEST(change_query_in_systems) {
    for (int chunked = 0; chunked < 2; chunked++) {
        ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
        REQUIRE(w);
        ecs_id a = ECS_COMPONENT(w, ch_val);
        ecs_entity e[2000];
        for (int i = 0; i < 2000; i++) {
            e[i] = ecs_create(w);
            ecs_set(w, e[i], a, &(ch_val){i});
        }
        ch_qs c = {ecs_query_new(w, &(ecs_query_desc){.terms = {{a, ECS_READ, ECS_CHANGED}}}), 0, 0};
        REQUIRE(c.q);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "loop", .fn = ch_loop_sys, .ctx = &c,
                                                     .terms = {ECS_TERM_R(a)}, .chunk_size = chunked ? 100 : 0}));
        ecs_result r = ecs_progress(w, 0.01f);
        if (chunked && ECS_CHECK_ACCESS) {
            CHECK_EQ_INT(r, ECS_ERR_ACCESS);
            CHECK(strstr(ecs_last_error(w), "chunked") != NULL);
        } else if (!chunked) {
            CHECK_EQ_INT(r, ECS_OK);
            CHECK_EQ_INT(c.rows, 2000);   /* the first loop: everything */
            ecs_set(w, e[1500], a, &(ch_val){0});
            CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
            CHECK_EQ_INT(c.rows, 2000 + 976);   /* block 1: rows 1024-1999 */
            CHECK_EQ_INT(ecs_progress(w, 0.01f), ECS_OK);
            CHECK_EQ_INT(c.rows, 2000 + 976);
            CHECK_EQ_INT(c.loops, 3);
        }
        ecs_world_free(w);
    }
}

void suite_change(void) {
    RUN(sched_change_model);
    RUN(change_snapshot_replay);
    RUN(change_query_loops);
    RUN(change_query_in_systems);
}
