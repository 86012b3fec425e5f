/* netcode tools: snapshots saved and loaded through callbacks (the same
   bytes as the FILE * calls, the length up front so snapshots can follow
   each other in a stream, every truncation and thousands of corruptions
   refused or restored consistently, a failing writer's code returned), the
   random seed carried by snapshots, ecs_random's determinism, the hash
   trace (the same entries at any thread count and shuffle seed, an injected
   divergence named by system and frame), schedule shuffling (an order-
   dependent program is caught) and presentation stages skipped while
   resimulating. Tests whose worlds have threads > 1 are named sched_*. */
#include "test.h"
#include <stdatomic.h>
#include <stdint.h>

static uint64_t nc_mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* ---- memory streams ------------------------------------------------------ */
/* A growable buffer: written by nc_mem_write (which can be told to fail once
   it has taken fail_at bytes), read back by nc_mem_read from pos. */
typedef struct nc_mem {
    unsigned char *p;
    size_t n, cap, pos;
    size_t limit;            /* nc_mem_read gives bytes below this only (0: n) */
    long writes, reads;
    ecs_result fail_code;    /* not ECS_OK: fail the write that would pass fail_at bytes */
    size_t fail_at;
    bool failed;
    long calls_after_fail;
} nc_mem;

static ecs_result nc_mem_write(const void *bytes, size_t size, void *ctx) {
    nc_mem *m = (nc_mem *)ctx;
    m->writes++;
    if (m->failed) { m->calls_after_fail++; return m->fail_code; }
    size_t take = size;
    if (m->fail_code != ECS_OK && m->n + size > m->fail_at) { take = m->fail_at - m->n; m->failed = true; }
    if (!test_append(&m->p, &m->n, &m->cap, bytes, take)) return ECS_ERR_NOMEM;
    return m->failed ? m->fail_code : ECS_OK;
}

static size_t nc_mem_read(void *bytes, size_t size, void *ctx) {
    nc_mem *m = (nc_mem *)ctx;
    size_t end = m->limit ? m->limit : m->n;
    size_t left = m->pos < end ? end - m->pos : 0, k = size < left ? size : left;
    m->reads++;
    if (k) memcpy(bytes, m->p + m->pos, k);
    m->pos += k;
    return k;
}

/* s's bytes through ecs_snapshot_save into a fresh nc_mem (free m->p). */
static ecs_result nc_save(const ecs_snapshot *s, nc_mem *m) {
    memset(m, 0, sizeof *m);
    return ecs_snapshot_save(s, nc_mem_write, m);
}

/* The last error is reset to another function's before a call that must set
   its own. */
static void nc_other_error(ecs_world *w) {
    CHECK_EQ_INT(ecs_snapshot_restore(w, NULL), ECS_ERR_ARG);
    CHECK(strstr(ecs_last_error(w), "ecs_snapshot_restore") != NULL);
}

/* ---- a world with everything a snapshot holds ---------------------------- */
typedef struct nc_pos { float x, y; } nc_pos;
typedef struct nc_vel { float x, y; } nc_vel;
typedef struct nc_name { char *s; } nc_name;   /* owns s */
typedef struct nc_score { int64_t points, rounds; } nc_score;
typedef struct nc_hit { uint32_t a, b; } nc_hit;

static void nc_name_ctor(void *p, int n, void *ctx) { (void)ctx; memset(p, 0, (size_t)n * sizeof(nc_name)); }
static void nc_name_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) { free(((nc_name *)p)[i].s); ((nc_name *)p)[i].s = NULL; }
}
static void nc_name_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        nc_name *d = (nc_name *)dst + i;
        const char *s = ((const nc_name *)src)[i].s;
        if (d->s == s) continue;
        free(d->s);
        d->s = NULL;
        if (s) { size_t len = strlen(s) + 1; if ((d->s = (char *)malloc(len))) memcpy(d->s, s, len); }
    }
}
static size_t nc_name_save(const void *value, void *out, size_t cap, void *ctx) {
    (void)ctx;
    const nc_name *v = (const nc_name *)value;
    size_t n = v->s ? strlen(v->s) : 0;
    if (n && n <= cap) memcpy(out, v->s, n);
    return n;
}
static bool nc_name_load(void *value, const void *data, size_t size, void *ctx) {
    (void)ctx;
    nc_name *v = (nc_name *)value;
    if (size && memchr(data, 0, size)) return false;
    char *s = (char *)malloc(size + 1);
    if (!s) return false;
    if (size) memcpy(s, data, size);
    s[size] = 0;
    free(v->s);
    v->s = s;
    return true;
}

typedef struct nc_ids { ecs_id pos, vel, hp, name, frozen, score, hit; ecs_query *changed; } nc_ids;

static void nc_mover(ecs_iter *it) {
    nc_pos *p = ECS_FIELD(it, nc_pos, 0);
    const nc_vel *v = ECS_FIELD(it, nc_vel, 1);
    for (int i = 0; i < it->count; i++) { p[i].x += v[i].x; p[i].y += v[i].y; }
}
static void nc_emitter(ecs_iter *it) {
    const nc_ids *id = (const nc_ids *)it->ctx;
    const int32_t *hp = ECS_FIELD(it, int32_t, 0);
    for (int i = 0; i < it->count; i++)
        if (hp[i] % 3 == 0) {
            nc_hit h = {(uint32_t)it->entities[i], (uint32_t)hp[i]};
            CHECK_EQ_INT(ecs_emit(it, id->hit, &h), ECS_OK);
        }
}
static void nc_listener(ecs_iter *it) {
    const nc_ids *id = (const nc_ids *)it->ctx;
    int n = 0;
    const nc_hit *h = ECS_EVENTS(it, nc_hit, id->hit, &n);
    nc_score *sc = (nc_score *)ecs_resource_get(it->world, id->score);
    if (!sc) return;
    for (int i = 0; i < n; i++) sc->points += h[i].b;
    sc->rounds++;
}

/* Registrations and systems (the same in every world that restores another's
   snapshots). The listener runs before the emitter, so at the end of a
   frame the emitter's events wait unread in the snapshot. */
static ecs_world *nc_world(nc_ids *id, int threads) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!w) return NULL;
    id->pos = ecs_component(w, "nc_pos", sizeof(nc_pos), 0);
    id->vel = ecs_component(w, "nc_vel", sizeof(nc_vel), 0);
    id->hp = ecs_component(w, "nc_hp", sizeof(int32_t), 0);
    id->name = ecs_component_init(w, &(ecs_component_desc){.name = "nc_name", .size = sizeof(nc_name),
        .align = _Alignof(nc_name), .ctor = nc_name_ctor, .dtor = nc_name_dtor, .copy = nc_name_copy,
        .serialize = nc_name_save, .deserialize = nc_name_load});
    id->frozen = ECS_TAG(w, nc_frozen);
    id->score = ecs_resource(w, "nc_score", sizeof(nc_score), 0, &(nc_score){0, 0});
    id->hit = ecs_event(w, "nc_hit", sizeof(nc_hit), _Alignof(nc_hit));
    id->changed = ecs_query_new(w, &(ecs_query_desc){.terms = {{id->pos, ECS_READ, ECS_CHANGED}}});
    bool ok = id->pos && id->vel && id->hp && id->name && id->frozen && id->score && id->hit && id->changed;
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "listener", .fn = nc_listener, .ctx = id,
                                                    .reads = {id->hit}, .writes = {id->score}});
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "mover", .fn = nc_mover,
                                                    .terms = {ECS_TERM_W(id->pos), ECS_TERM_R(id->vel)}});
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "emitter", .fn = nc_emitter, .ctx = id,
                                                    .terms = {ECS_TERM_R(id->hp)}, .emits = {id->hit}});
    if (!ok) { ecs_world_free(w); return NULL; }
    return w;
}

/* Entities with random components, names, tags, parents, destroyed ones
   (free slots), a few frames (events, change stamps), then events queued
   by ecs_world_emit. */
static void nc_populate(ecs_world *w, const nc_ids *id, unsigned long long seed, int n, int frames) {
    ecs_entity made[512];
    if (n > 512) n = 512;
    (void)ecs_query_changed(w, id->changed);   /* change stamps on */
    for (int i = 0; i < n; i++) {
        ecs_entity e = made[i] = ecs_create(w);
        unsigned r = (unsigned)test_rand(&seed);
        CHECK_EQ_INT(ecs_set(w, e, id->pos, &(nc_pos){(float)i, (float)(r % 100)}), ECS_OK);
        if (r & 1) CHECK_EQ_INT(ecs_set(w, e, id->vel, &(nc_vel){1, (float)(r % 7)}), ECS_OK);
        if (r & 2) CHECK_EQ_INT(ecs_set(w, e, id->hp, &(int32_t){(int32_t)(r % 50)}), ECS_OK);
        if (r & 4) {
            char buf[24];
            snprintf(buf, sizeof buf, "unit-%d", i);
            nc_name v = {buf};
            CHECK_EQ_INT(ecs_set(w, e, id->name, &v), ECS_OK);
        }
        if (r & 8) CHECK_EQ_INT(ecs_add(w, e, id->frozen), ECS_OK);
        ecs_entity p = i ? made[(r >> 8) % (unsigned)i] : 0, victim = i ? made[(r >> 16) % (unsigned)i] : 0;
        if ((r & 16) && ecs_is_alive(w, p)) CHECK_EQ_INT(ecs_set_parent(w, e, p), ECS_OK);
        if (r % 7 == 0 && ecs_is_alive(w, victim)) CHECK_EQ_INT(ecs_destroy(w, victim), ECS_OK);
    }
    for (int f = 0; f < frames; f++) CHECK_EQ_INT(ecs_progress(w, 0.016f), ECS_OK);
    for (ecs_iter it = ecs_query_iter(w, id->changed); ecs_query_next(&it);) {}
    CHECK_EQ_INT(ecs_world_emit(w, id->hit, &(nc_hit){7, 1000}), ECS_OK);
    CHECK_EQ_INT(ecs_world_emit(w, id->hit, &(nc_hit){8, 2000}), ECS_OK);
}

/* 1: save through callbacks = ecs_snapshot_write's bytes = ecs_snapshot_size;
   the bytes load into another world that then is the first (and runs on
   alike, events and all). */
TEST(netcode_save_load_memory) {
    nc_ids ia, ib;
    ecs_world *a = nc_world(&ia, 1), *b = nc_world(&ib, 1);
    REQUIRE(a && b);
    nc_populate(a, &ia, test_g.seed ^ 11, 300, 4);
    ecs_snapshot *s = ecs_snapshot_take(a);
    REQUIRE(s);
    nc_mem m;
    CHECK_EQ_INT(nc_save(s, &m), ECS_OK);
    REQUIRE(m.n >= 28);
    CHECK(!memcmp(m.p, "ECSHSNAP", 8));
    uint64_t len = 0;
    for (int k = 7; k >= 0; k--) len = len << 8 | m.p[12 + k];
    CHECK_EQ_INT(len, m.n);   /* the length up front */
    CHECK_EQ_INT(ecs_snapshot_size(s), m.n);
    FILE *f = tmpfile();
    REQUIRE(f);
    CHECK_EQ_INT(ecs_snapshot_write(s, f), ECS_OK);
    CHECK_EQ_INT(ftell(f), (long)m.n);
    rewind(f);
    unsigned char *file = (unsigned char *)malloc(m.n + 1);
    REQUIRE(file);
    CHECK_EQ_INT(fread(file, 1, m.n + 1, f), m.n);
    CHECK(!memcmp(file, m.p, m.n));   /* the same bytes */
    free(file);
    fclose(f);

    uint64_t ha = ecs_world_hash(a), hb0 = ecs_world_hash(b);
    CHECK(ha != 0 && hb0 != 0 && ha != hb0);
    ecs_snapshot *t = ecs_snapshot_load(b, nc_mem_read, &m);
    REQUIRE(t);
    CHECK_EQ_INT(m.pos, m.n);
    CHECK_EQ_INT(ecs_world_hash(b), hb0);   /* loading changes nothing */
    CHECK_EQ_INT(ecs_snapshot_size(t), m.n);
    nc_mem again;   /* and saves to the same bytes */
    CHECK_EQ_INT(nc_save(t, &again), ECS_OK);
    CHECK(again.n == m.n && !memcmp(again.p, m.p, m.n));
    free(again.p);
    CHECK_EQ_INT(ecs_snapshot_restore(b, t), ECS_OK);
    CHECK_EQ_INT(ecs_world_hash(b), ha);
    CHECK_EQ_INT(ecs_count(b), ecs_count(a));
    for (int fr = 0; fr < 3; fr++) {   /* the same frames: queued and unread events, stamps, clock */
        CHECK_EQ_INT(ecs_progress(a, 0.016f), ECS_OK);
        CHECK_EQ_INT(ecs_progress(b, 0.016f), ECS_OK);
        CHECKF(ecs_world_hash(a) == ecs_world_hash(b), "frame %d after the load: the worlds differ", fr);
        int na = 0, nb = 0;
        for (ecs_iter it = ecs_query_iter(a, ia.changed); ecs_query_next(&it);) na += it.count;
        for (ecs_iter it = ecs_query_iter(b, ib.changed); ecs_query_next(&it);) nb += it.count;
        CHECK_EQ_INT(na, nb);
    }
    const nc_score *sa = (const nc_score *)ecs_resource_get(a, ia.score), *sb = (const nc_score *)ecs_resource_get(b, ib.score);
    REQUIRE(sa && sb);
    CHECK(sa->points == sb->points && sa->rounds == sb->rounds && sa->points >= 3000);   /* the queued events too */
    /* refusals */
    CHECK_EQ_INT(ecs_snapshot_save(s, NULL, &m), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_snapshot_save(NULL, nc_mem_write, &m), ECS_ERR_ARG);
    CHECK(ecs_snapshot_load(b, NULL, &m) == NULL);
    CHECK(ecs_snapshot_load(NULL, nc_mem_read, &m) == NULL);
    CHECK_EQ_INT(ecs_snapshot_size(NULL), 0);
    free(m.p);
    ecs_snapshot_free(t);
    ecs_snapshot_free(s);
    ecs_world_free(a);
    ecs_world_free(b);
}

/* 2: two snapshots back to back in one stream: each load reads exactly its
   own bytes (through callbacks and through a FILE *). */
TEST(netcode_two_snapshots_one_stream) {
    nc_ids ia, ib;
    ecs_world *a = nc_world(&ia, 1), *b = nc_world(&ib, 1);
    REQUIRE(a && b);
    nc_populate(a, &ia, test_g.seed ^ 22, 120, 2);
    ecs_snapshot *s1 = ecs_snapshot_take(a);
    uint64_t h1 = ecs_world_hash(a);
    nc_populate(a, &ia, test_g.seed ^ 23, 200, 3);
    ecs_snapshot *s2 = ecs_snapshot_take(a);
    uint64_t h2 = ecs_world_hash(a);
    REQUIRE(s1 && s2 && h1 != h2);
    nc_mem m;
    memset(&m, 0, sizeof m);
    REQUIRE(ecs_snapshot_save(s1, nc_mem_write, &m) == ECS_OK);
    size_t n1 = m.n;
    REQUIRE(ecs_snapshot_save(s2, nc_mem_write, &m) == ECS_OK);
    size_t n2 = m.n - n1;
    CHECK(n1 == ecs_snapshot_size(s1) && n2 == ecs_snapshot_size(s2) && n1 != n2);
    ecs_snapshot *l1 = ecs_snapshot_load(b, nc_mem_read, &m);
    CHECK_EQ_INT(m.pos, n1);   /* not a byte of the second */
    ecs_snapshot *l2 = ecs_snapshot_load(b, nc_mem_read, &m);
    CHECK_EQ_INT(m.pos, n1 + n2);
    REQUIRE(l1 && l2);
    nc_other_error(b);
    CHECK(ecs_snapshot_load(b, nc_mem_read, &m) == NULL);   /* the end of the stream */
    CHECK(strstr(ecs_last_error(b), "ecs_snapshot_load") != NULL);
    CHECK_EQ_INT(ecs_snapshot_restore(b, l2), ECS_OK);
    CHECK_EQ_INT(ecs_world_hash(b), h2);
    CHECK_EQ_INT(ecs_snapshot_restore(b, l1), ECS_OK);
    CHECK_EQ_INT(ecs_world_hash(b), h1);
    ecs_snapshot_free(l1);
    ecs_snapshot_free(l2);

    FILE *f = tmpfile();   /* the FILE * calls: the same */
    REQUIRE(f);
    CHECK(ecs_snapshot_write(s2, f) == ECS_OK && ecs_snapshot_write(s1, f) == ECS_OK);
    CHECK_EQ_INT(ftell(f), (long)(n1 + n2));
    rewind(f);
    l2 = ecs_snapshot_read(b, f);
    CHECK_EQ_INT(ftell(f), (long)n2);
    l1 = ecs_snapshot_read(b, f);
    CHECK_EQ_INT(ftell(f), (long)(n1 + n2));
    REQUIRE(l1 && l2);
    CHECK(ecs_snapshot_restore(b, l2) == ECS_OK && ecs_world_hash(b) == h2);
    CHECK(ecs_snapshot_restore(b, l1) == ECS_OK && ecs_world_hash(b) == h1);
    fclose(f);
    ecs_snapshot_free(l1);
    ecs_snapshot_free(l2);
    free(m.p);
    ecs_snapshot_free(s1);
    ecs_snapshot_free(s2);
    ecs_world_free(a);
    ecs_world_free(b);
}

static void nc_put_le64(unsigned char *p, uint64_t v) { for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k)); }
static void nc_forge(unsigned char *p, size_t n) {   /* length and checksum made right again */
    nc_put_le64(p + 12, n);
    test_file_reseal(p, n);
}

/* A world restored from an accepted (corrupted) snapshot must be one the
   API can use: every entity alive, its ids present, parents and children
   agreeing, the hash computable, a frame, a new snapshot that round trips. */
static void nc_check_usable(ecs_world *w, const nc_ids *id, const char *what, long trial) {
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    REQUIRE(all);
    size_t seen = 0;
    for (ecs_iter it = ecs_query_iter(w, all); ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++) {
            ecs_entity e = it.entities[i];
            seen++;
            CHECKF(ecs_is_alive(w, e), "%s %ld: a row's entity is not alive", what, trial);
            const ecs_id *ids = NULL;
            int n = ecs_entity_ids(w, e, &ids);
            CHECKF(n >= 0, "%s %ld: ecs_entity_ids failed", what, trial);
            for (int k = 0; k < n; k++) CHECK(ecs_has(w, e, ids[k]));
            ecs_entity p = ecs_get_parent(w, e);
            if (p) {
                ecs_entity kids[64];
                size_t nk = ecs_children(w, p, kids, 64);
                bool found = nk > 64;
                for (size_t k = 0; k < nk && k < 64; k++) found |= kids[k] == e;
                CHECKF(ecs_is_alive(w, p) && found, "%s %ld: parent and children disagree", what, trial);
            }
            const nc_name *nm = (const nc_name *)ecs_get(w, e, id->name);
            if (nm && nm->s) (void)strlen(nm->s);
        }
    ecs_query_free(all);
    CHECKF(seen == ecs_count(w), "%s %ld: %zu rows, ecs_count %zu", what, trial, seen, ecs_count(w));
    CHECKF(ecs_world_hash(w) != 0, "%s %ld: no hash: %s", what, trial, ecs_last_error(w));
    ecs_entity e = ecs_create(w);
    CHECK(e && ecs_set(w, e, id->pos, &(nc_pos){1, 2}) == ECS_OK && ecs_destroy(w, e) == ECS_OK);
    CHECK_EQ_INT(ecs_progress(w, 0.016f), ECS_OK);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    nc_mem m;
    CHECKF(nc_save(s, &m) == ECS_OK, "%s %ld: the restored world does not save: %s", what, trial, ecs_last_error(w));
    ecs_snapshot *t = ecs_snapshot_load(w, nc_mem_read, &m);
    CHECKF(t != NULL, "%s %ld: its save does not load: %s", what, trial, ecs_last_error(w));
    ecs_snapshot_free(t);
    ecs_snapshot_free(s);
    free(m.p);
}

/* 3: every truncation is refused with the world unchanged; thousands of
   corruptions (bits, bytes, the header's length; and, with the checksum
   fixed up, damage inside) are refused or give a snapshot that restores to
   a usable world; never a crash (ASan). */
TEST(netcode_load_truncated_corrupted) {
    nc_ids id;
    ecs_world *w = nc_world(&id, 1);
    REQUIRE(w);
    nc_populate(w, &id, test_g.seed ^ 33, 40, 2);
    ecs_snapshot *orig = ecs_snapshot_take(w);
    REQUIRE(orig);
    nc_mem m;
    REQUIRE(nc_save(orig, &m) == ECS_OK && m.n > 28);
    const size_t n = m.n;
    const uint64_t h0 = ecs_world_hash(w), t0 = test_world_hash(w);
    long truncated_failures = 0;
    for (size_t len = 0; len < n; len++) {
        test_src src = {m.p, len, 0};
        nc_other_error(w);
        ecs_snapshot *s = ecs_snapshot_load(w, test_src_read, &src);
        if (s) { CHECKF(s == NULL, "a truncation to %zu of %zu bytes loaded", len, n); ecs_snapshot_free(s); continue; }
        const char *err = ecs_last_error(w);
        if (!err[0] || !strstr(err, "ecs_snapshot_load")) {
            CHECKF(0, "truncation to %zu: error \"%s\"", len, err);
            truncated_failures++;
        }
        if (len % 97 == 0 || len + 9 > n) CHECKF(ecs_world_hash(w) == h0, "truncation to %zu: the world changed", len);
        if (truncated_failures > 5) break;
    }
    CHECK_EQ_INT(test_world_hash(w), t0);
    CHECK_EQ_INT(ecs_world_hash(w), h0);

    bool forgeable = test_file_checksum(m.p, n - 8) == test_le64(m.p + n - 8);
    if (!forgeable) fprintf(stderr, "  note: netcode_load_truncated_corrupted: the save file's checksum is no longer "
                                    "the one mirrored in test.h (test_file_checksum): only unforged corruptions are tried\n");
    unsigned long long rs = test_g.seed ^ 0xc0ffee;
    long trials = test_scaled(3000, 200), accepted = 0, refused = 0;
    unsigned char *buf = (unsigned char *)malloc(n * 2 + 64);
    REQUIRE(buf);
    for (long t = 0; t < trials; t++) {
        size_t len = n;
        memcpy(buf, m.p, n);
        int kind = (int)test_below(&rs, forgeable ? 7 : 3);
        switch (kind) {
        case 0: {   /* bits anywhere */
            int flips = 1 + (int)test_below(&rs, 3);
            for (int k = 0; k < flips; k++) { size_t at = test_below(&rs, (unsigned)n); buf[at] ^= (unsigned char)(1u << test_below(&rs, 8)); }
            break;
        }
        case 1:   /* a byte anywhere */
            buf[test_below(&rs, (unsigned)n)] = (unsigned char)test_rand(&rs);
            break;
        case 2:   /* the header's length */
            if (test_below(&rs, 2)) buf[12 + test_below(&rs, 8)] ^= (unsigned char)(1u << test_below(&rs, 8));
            else nc_put_le64(buf + 12, test_below(&rs, 2) ? n + test_below(&rs, 64) - 32 : test_rand(&rs));
            break;
        case 3: {   /* forged: bits inside */
            int flips = 1 + (int)test_below(&rs, 4);
            for (int k = 0; k < flips; k++) buf[20 + test_below(&rs, (unsigned)(n - 28))] ^= (unsigned char)(1u << test_below(&rs, 8));
            nc_forge(buf, len);
            break;
        }
        case 4: {   /* forged: a 32-bit field inside set to an edge value */
            static const uint32_t edge[] = {0, 1, 2, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0xfffffffeu, 255, 256, 65536};
            size_t at = 20 + 4 * test_below(&rs, (unsigned)((n - 32) / 4));
            uint32_t v = test_below(&rs, 4) ? edge[test_below(&rs, 10)] : (uint32_t)test_below(&rs, (unsigned)n);
            for (int k = 0; k < 4; k++) buf[at + (size_t)k] = (unsigned char)(v >> (8 * k));
            nc_forge(buf, len);
            break;
        }
        case 5: {   /* forged: a piece cut out */
            size_t at = 20 + test_below(&rs, (unsigned)(n - 28)), cut = 1 + test_below(&rs, 16);
            if (at + cut > n - 8) cut = n - 8 - at;
            memmove(buf + at, buf + at + cut, n - at - cut);
            len = n - cut;
            nc_forge(buf, len);
            break;
        }
        default: {  /* forged: a piece repeated */
            size_t at = 20 + test_below(&rs, (unsigned)(n - 28)), dup = 1 + test_below(&rs, 16);
            if (at + dup > n - 8) dup = n - 8 - at;
            memmove(buf + at + dup, buf + at, n - at);
            len = n + dup;
            nc_forge(buf, len);
            break;
        }
        }
        test_src src = {buf, len, 0};
        nc_other_error(w);
        ecs_snapshot *s = ecs_snapshot_load(w, test_src_read, &src);
        CHECKF(src.pos <= len, "trial %ld: read past the data", t);
        if (!s) {
            refused++;
            CHECKF(strstr(ecs_last_error(w), "ecs_snapshot_load") != NULL, "trial %ld (kind %d): error \"%s\"", t, kind,
                   ecs_last_error(w));
            if (t % 64 == 0) CHECKF(ecs_world_hash(w) == h0, "trial %ld (kind %d): a refused load changed the world", t, kind);
            continue;
        }
        accepted++;
        ecs_result r = ecs_snapshot_restore(w, s);
        if (r == ECS_OK) nc_check_usable(w, &id, "accepted corruption", t);
        else CHECKF(ecs_world_hash(w) == h0, "trial %ld: a refused restore changed the world", t);
        ecs_snapshot_free(s);
        CHECKF(ecs_snapshot_restore(w, orig) == ECS_OK && ecs_world_hash(w) == h0, "trial %ld: back to the original", t);
        if (test_g.checks_failed > 20) break;
    }
    CHECK(refused > 0);
    CHECK_EQ_INT(ecs_world_hash(w), h0);
    if (test_g.checks_failed) fprintf(stderr, "  %ld trials: %ld refused, %ld accepted\n", trials, refused, accepted);
    free(buf);
    free(m.p);
    ecs_snapshot_free(orig);
    ecs_world_free(w);
}

/* 4: a write callback that fails after k bytes: save returns its code, with
   the error set, never calls it again, and what it took is a prefix of the
   snapshot's bytes. */
TEST(netcode_save_write_fails) {
    nc_ids id;
    ecs_world *w = nc_world(&id, 1);
    REQUIRE(w);
    nc_populate(w, &id, test_g.seed ^ 44, 500, 1);
    ecs_entity many[4000];   /* more than one buffer's worth */
    REQUIRE(ecs_create_many(w, 4000, &id.pos, 1, many) == ECS_OK);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    nc_mem full;
    REQUIRE(nc_save(s, &full) == ECS_OK);
    const size_t n = full.n;
    REQUIRE(n > 40000);   /* (the limits below are inside it) */
    CHECK(full.writes >= 3);
    static const ecs_result codes[] = {ECS_ERR_NOMEM, ECS_ERR_ARG, ECS_ERR_BUSY, ECS_ERR_STALE, ECS_ERR_ACCESS};
    size_t ks[] = {0, 1, 8, 19, 20, 21, 100, 32767, 32768, 32769, n / 2, n - 9, n - 8, n - 1};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        nc_mem m;
        memset(&m, 0, sizeof m);
        m.fail_code = codes[i % 5];
        m.fail_at = ks[i];
        nc_other_error(w);
        ecs_result r = ecs_snapshot_save(s, nc_mem_write, &m);
        CHECKF(r == m.fail_code, "fail after %zu bytes: save returned %s, the callback %s", ks[i], ecs_result_str(r),
               ecs_result_str(m.fail_code));
        CHECKF(m.failed && m.n == ks[i], "fail after %zu: took %zu", ks[i], m.n);
        CHECKF(m.calls_after_fail == 0, "fail after %zu: called %ld times after failing", ks[i], m.calls_after_fail);
        CHECK(!memcmp(m.p ? m.p : full.p, full.p, m.n));
        const char *err = ecs_last_error(w);
        CHECKF(strstr(err, "ecs_snapshot_save") && strstr(err, "write"), "fail after %zu: error \"%s\"", ks[i], err);
        free(m.p);
    }
    nc_mem m;   /* a limit at the end: nothing fails */
    memset(&m, 0, sizeof m);
    m.fail_code = ECS_ERR_NOMEM;
    m.fail_at = n;
    CHECK_EQ_INT(ecs_snapshot_save(s, nc_mem_write, &m), ECS_OK);
    CHECK(!m.failed && m.n == n && !memcmp(m.p, full.p, n));
    free(m.p);
    free(full.p);
    ecs_snapshot_free(s);
    ecs_world_free(w);
}

/* ---- ecs_random ---------------------------------------------------------- */
typedef struct nc_roll { uint64_t a, b; } nc_roll;
typedef struct nc_rctx { ecs_id roll; int bad_checks_failed; } nc_rctx;

static void nc_roller(ecs_iter *it) {
    nc_rctx *x = (nc_rctx *)it->ctx;
    nc_roll *r = ECS_FIELD(it, nc_roll, 0);
    for (int i = 0; i < it->count; i++) {
        r[i].a = ecs_random(it, i, 1);
        r[i].b = ecs_random(it, i, 2);
    }
    if (ecs_random(it, it->count, 1) != 0 || ecs_random(it, -1, 1) != 0 || ecs_random(NULL, 0, 1) != 0)
        x->bad_checks_failed = 1;   /* (chunks may write it at once: the same value) */
}
static void nc_roller2(ecs_iter *it) {   /* another system, the same salt */
    uint64_t *v = ECS_FIELD(it, uint64_t, 0);
    for (int i = 0; i < it->count; i++) v[i] = ecs_random(it, i, 1);
}

typedef struct nc_rworld { ecs_world *w; ecs_id roll, other; nc_rctx x; } nc_rworld;

static bool nc_rworld_make(nc_rworld *r, int threads, int chunk, uint64_t shuffle, uint64_t seed, int n) {
    memset(r, 0, sizeof *r);
    r->w = ecs_world_new(&(ecs_world_desc){.threads = threads, .shuffle_seed = shuffle, .random_seed = seed});
    if (!r->w) return false;
    r->roll = ecs_component(r->w, "nc_roll", sizeof(nc_roll), 0);
    r->other = ecs_component(r->w, "nc_other", sizeof(uint64_t), 0);
    r->x.roll = r->roll;
    ecs_entity *es = (ecs_entity *)malloc((size_t)n * sizeof *es);
    bool ok = r->roll && r->other && es && ecs_create_many(r->w, (size_t)n, &r->roll, 1, es) == ECS_OK;
    for (int i = 0; ok && i < n; i += 3) ok = ecs_add(r->w, es[i], r->other) == ECS_OK;   /* two tables */
    for (int i = 0; ok && i < n; i += 11) ok = ecs_destroy(r->w, es[i]) == ECS_OK;
    free(es);
    ok = ok && ecs_system_add(r->w, &(ecs_system_desc){.name = "roller", .fn = nc_roller, .ctx = &r->x,
                                                      .terms = {ECS_TERM_W(r->roll)}, .chunk_size = chunk});
    ok = ok && ecs_system_add(r->w, &(ecs_system_desc){.name = "roller2", .fn = nc_roller2,
                                                      .terms = {ECS_TERM_W(r->other)}, .chunk_size = chunk});
    return ok;
}

/* Every roll, in query order: 3 values per entity with the other component, 2 without. */
static size_t nc_rolls(nc_rworld *r, uint64_t *out, size_t cap) {
    size_t k = 0;
    ecs_query *q = ecs_query_new(r->w, &(ecs_query_desc){.terms = {ECS_TERM_R(r->roll)}});
    if (!q) return 0;
    for (ecs_iter it = ecs_query_iter(r->w, q); ecs_query_next(&it);) {
        const nc_roll *v = ECS_FIELD(&it, nc_roll, 0);
        for (int i = 0; i < it.count && k + 3 <= cap; i++) {
            out[k++] = v[i].a;
            out[k++] = v[i].b;
            const uint64_t *o = (const uint64_t *)ecs_get(r->w, it.entities[i], r->other);
            if (o) out[k++] = *o;
        }
    }
    ecs_query_free(q);
    return k;
}

static int nc_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 6: ecs_random gives the same values at any thread count, chunking and
   shuffle seed, and after a snapshot restore; values differ by salt,
   entity, system and turn; bad arguments give 0. */
TEST(sched_netcode_random_determinism) {
    const int n = (int)test_scaled(2000, 300), frames = 3;
    const size_t cap = (size_t)n * 3;
    static const struct { int threads, chunk; uint64_t shuffle; } cfg[] = {
        {1, 0, 0}, {1, 64, 0}, {2, 64, 0}, {3, 64, 0}, {8, 64, 0}, {2, 64, 5}, {3, 0, 9}, {8, 64, 13}, {1, 64, 21}};
    enum { NCFG = sizeof cfg / sizeof cfg[0] };
    uint64_t *base = (uint64_t *)malloc(cap * frames * sizeof *base), *got = (uint64_t *)malloc(cap * sizeof *got);
    REQUIRE(base && got);
    size_t base_n[3] = {0};
    for (int c = 0; c < NCFG; c++) {
        nc_rworld r;
        REQUIRE(nc_rworld_make(&r, cfg[c].threads, cfg[c].chunk, cfg[c].shuffle, 0x5eed ^ test_g.seed, n));
        ecs_snapshot *snap = NULL;
        if (c == 0) REQUIRE((snap = ecs_snapshot_take(r.w)) != NULL);
        for (int f = 0; f < frames; f++) {
            REQUIRE(ecs_progress(r.w, 0.016f) == ECS_OK);
            size_t k = nc_rolls(&r, got, cap);
            if (c == 0) { memcpy(base + cap * (size_t)f, got, k * sizeof *got); base_n[f] = k; continue; }
            CHECKF(k == base_n[f] && !memcmp(got, base + cap * (size_t)f, k * sizeof *got),
                   "threads %d, chunk_size %d, shuffle %llu, frame %d: other values than 1 thread unchunked",
                   cfg[c].threads, cfg[c].chunk, (unsigned long long)cfg[c].shuffle, f);
        }
        CHECKF(!r.x.bad_checks_failed, "config %d: ecs_random of a bad row or NULL it was not 0", c);
        if (c == 0) {   /* a restore replays the same values */
            REQUIRE(ecs_snapshot_restore(r.w, snap) == ECS_OK);
            for (int f = 0; f < frames; f++) {
                REQUIRE(ecs_progress(r.w, 0.016f) == ECS_OK);
                size_t k = nc_rolls(&r, got, cap);
                CHECKF(k == base_n[f] && !memcmp(got, base + cap * (size_t)f, k * sizeof *got),
                       "frame %d after the restore: other values", f);
            }
            ecs_snapshot_free(snap);
        }
        ecs_world_free(r.w);
    }
    /* no duplicates among every salt, entity, system and frame */
    size_t total = base_n[0] + base_n[1] + base_n[2];
    uint64_t *all = (uint64_t *)malloc(total * sizeof *all);
    REQUIRE(all);
    memcpy(all, base, base_n[0] * sizeof *all);
    memcpy(all + base_n[0], base + cap, base_n[1] * sizeof *all);
    memcpy(all + base_n[0] + base_n[1], base + 2 * cap, base_n[2] * sizeof *all);
    qsort(all, total, sizeof *all, nc_cmp_u64);
    size_t dups = 0, zeros = 0;
    for (size_t i = 0; i < total; i++) { dups += i && all[i] == all[i - 1]; zeros += all[i] == 0; }
    CHECKF(total > (size_t)n * 6 && dups == 0 && zeros == 0, "%zu values: %zu duplicates, %zu zeros", total,
           dups, zeros);
    /* another seed: other values */
    nc_rworld r;
    REQUIRE(nc_rworld_make(&r, 1, 0, 0, 0x5eed ^ test_g.seed ^ 1, n));
    REQUIRE(ecs_progress(r.w, 0.016f) == ECS_OK);
    size_t k = nc_rolls(&r, got, cap), same = 0;
    for (size_t i = 0; i < k && i < base_n[0]; i++) same += got[i] == base[i];
    CHECKF(k == base_n[0] && same == 0, "another random_seed: %zu of %zu values the same", same, k);
    /* outside systems: a query iterator's row, by frame count */
    ecs_query *q = ecs_query_new(r.w, &(ecs_query_desc){.terms = {ECS_TERM_R(r.roll)}});
    REQUIRE(q);
    ecs_iter it = ecs_query_iter(r.w, q);
    REQUIRE(ecs_query_next(&it));
    uint64_t v0 = ecs_random(&it, 0, 1), v0b = ecs_random(&it, 0, 1);
    CHECK(v0 != 0 && v0 == v0b && ecs_random(&it, 0, 2) != v0 && ecs_random(&it, it.count, 1) == 0);
    ecs_iter_fini(&it);
    REQUIRE(ecs_progress(r.w, 0.016f) == ECS_OK);
    it = ecs_query_iter(r.w, q);
    REQUIRE(ecs_query_next(&it));
    CHECK(ecs_random(&it, 0, 1) != v0);   /* the next frame */
    ecs_iter_fini(&it);
    ecs_query_free(q);
    ecs_world_free(r.w);
    free(all);
    free(base);
    free(got);
}

/* 5: the random seed is part of snapshots and save files: a world with
   another seed that restores one rolls what the first world rolled. */
TEST(netcode_random_seed_in_snapshots) {
    const int n = 300, frames = 3;
    const size_t cap = (size_t)n * 3;
    uint64_t *want = (uint64_t *)malloc(cap * frames * sizeof *want), *got = (uint64_t *)malloc(cap * sizeof *got);
    size_t want_n[3];
    REQUIRE(want && got);
    nc_rworld a, b, c;
    REQUIRE(nc_rworld_make(&a, 1, 0, 0, 7, n) && nc_rworld_make(&b, 1, 0, 0, 9, n) && nc_rworld_make(&c, 1, 0, 0, 9, n));
    for (int f = 0; f < 2; f++) REQUIRE(ecs_progress(a.w, 0.016f) == ECS_OK && ecs_progress(b.w, 0.016f) == ECS_OK);
    ecs_snapshot *s = ecs_snapshot_take(a.w);
    REQUIRE(s);
    nc_mem m;
    REQUIRE(nc_save(s, &m) == ECS_OK);
    for (int f = 0; f < frames; f++) {
        REQUIRE(ecs_progress(a.w, 0.016f) == ECS_OK);
        want_n[f] = nc_rolls(&a, want + cap * (size_t)f, cap);
    }
    REQUIRE(ecs_progress(b.w, 0.016f) == ECS_OK);   /* its own seed: other values */
    size_t k = nc_rolls(&b, got, cap);
    CHECK(k == want_n[0] && memcmp(got, want, k * sizeof *got) != 0);
    REQUIRE(ecs_snapshot_restore(b.w, s) == ECS_OK);
    ecs_snapshot *l = ecs_snapshot_load(c.w, nc_mem_read, &m);
    REQUIRE(l);
    REQUIRE(ecs_snapshot_restore(c.w, l) == ECS_OK);
    for (int f = 0; f < frames; f++) {
        REQUIRE(ecs_progress(b.w, 0.016f) == ECS_OK && ecs_progress(c.w, 0.016f) == ECS_OK);
        k = nc_rolls(&b, got, cap);
        CHECKF(k == want_n[f] && !memcmp(got, want + cap * (size_t)f, k * sizeof *got),
               "frame %d: the restored world (random_seed 9) rolls other values than the seed-7 world", f);
        k = nc_rolls(&c, got, cap);
        CHECKF(k == want_n[f] && !memcmp(got, want + cap * (size_t)f, k * sizeof *got),
               "frame %d: the world loaded from the save rolls other values than the seed-7 world", f);
    }
    ecs_snapshot_free(l);
    ecs_snapshot_free(s);
    free(m.p);
    ecs_world_free(a.w);
    ecs_world_free(b.w);
    ecs_world_free(c.w);
    free(want);
    free(got);
}

/* ---- random programs for the hash trace and shuffling -------------------- */
enum { NC_COMPS = 6, NC_MAXSYS = 20, NC_MAXSTAGES = 3, NC_FRAMES = 20, NC_MAXSTEPS = 2 * (NC_MAXSYS + NC_MAXSTAGES) };
typedef struct nc_val { uint64_t v; } nc_val;
typedef struct nc_ev { uint64_t e, h; } nc_ev;
typedef struct nc_acc { uint64_t v, n; } nc_acc;

typedef struct nc_sysdef {
    char name[16];
    int stage, nterms;
    int comp[4], access[4], oper[4];   /* component index, ECS_READ / ECS_WRITE, ECS_AND / ECS_NOT */
    int chunk;
    int after[3], nafter, before[3], nbefore;
    int cmd;              /* 0 none, 1 set (may add), 2 create, 3 destroy, 4 remove */
    int cmd_comp, cmd_mod;
    int gate;             /* 0 none, 1 run_if, 2 interval */
    int interval;
    uint32_t flags;       /* ECS_SYSTEM_MAIN_THREAD / ECS_SYSTEM_EXCLUSIVE (unchunked ones) */
    bool use_random, res_write, emit, reader;
    uint32_t salt;
    /* per world */
    const int *frame;
    const ecs_id *ids;    /* components, then the resource, the event, the reader's resource */
    _Atomic int calls;
    ecs_system handle;
    int bug_frame;        /* >= 0: this frame it writes something else (the injected divergence) */
} nc_sysdef;

typedef struct nc_prog {
    int nsys, nstages, entities;
    int fixed;            /* > 0: this stage is fixed-step, 2 steps a frame */
    nc_sysdef sys[NC_MAXSYS];
    unsigned long long seed;
} nc_prog;

static void nc_prog_fn(ecs_iter *it) {
    nc_sysdef *d = (nc_sysdef *)it->ctx;
    atomic_fetch_add_explicit(&d->calls, 1, memory_order_relaxed);
    const ecs_id *ids = d->ids;
    uint64_t acc = 0;
    if (d->reader) {   /* folds this run's events into its resource */
        int n = 0;
        const nc_ev *ev = ECS_EVENTS(it, nc_ev, ids[NC_COMPS + 1], &n);
        nc_acc *r = (nc_acc *)ecs_resource_get(it->world, ids[NC_COMPS + 2]);
        if (!r) return;
        for (int i = 0; i < n; i++) r->v = nc_mix(r->v ^ ev[i].e ^ nc_mix(ev[i].h));
        r->n += (uint64_t)n;
        return;
    }
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        uint64_t h = nc_mix(d->salt ^ e * 0x9e3779b97f4a7c15ull);
        for (int k = 0; k < d->nterms; k++) {
            const nc_val *f = d->oper[k] == ECS_AND ? (const nc_val *)ecs_field(it, k) : NULL;
            if (f) h = nc_mix(h ^ f[i].v);
        }
        if (d->use_random) h ^= ecs_random(it, i, d->salt);
        if (d->bug_frame >= 0 && *d->frame == d->bug_frame) h++;
        for (int k = 0; k < d->nterms; k++)
            if (d->access[k] == ECS_WRITE) ((nc_val *)ecs_field(it, k))[i].v = nc_mix(h + (uint64_t)k);
        acc += h;
        if (d->cmd && h % (uint64_t)d->cmd_mod == 0) {
            ecs_id c = ids[d->cmd_comp], c2 = ids[(d->cmd_comp + 1) % NC_COMPS];
            switch (d->cmd) {
            case 1: CHECK_EQ_INT(ecs_cmd_set(it->commands, e, c, &(nc_val){h}), ECS_OK); break;
            case 2: {
                ecs_entity x = ecs_cmd_create(it->commands);
                CHECK(x != 0);
                CHECK_EQ_INT(ecs_cmd_set(it->commands, x, c, &(nc_val){h}), ECS_OK);
                if (h & 1) CHECK_EQ_INT(ecs_cmd_set(it->commands, x, c2, &(nc_val){h >> 1}), ECS_OK);
                break;
            }
            case 3: CHECK_EQ_INT(ecs_cmd_destroy(it->commands, e), ECS_OK); break;
            default: CHECK_EQ_INT(ecs_cmd_remove(it->commands, e, c), ECS_OK); break;
            }
        }
        if (d->emit && h % 5 == 0) CHECK_EQ_INT(ecs_emit(it, ids[NC_COMPS + 1], &(nc_ev){e, h}), ECS_OK);
    }
    if (d->res_write) {
        nc_acc *r = (nc_acc *)ecs_resource_get(it->world, ids[NC_COMPS]);
        if (r) { r->v = nc_mix(r->v ^ acc); r->n += (uint64_t)it->count; }
    }
}

static bool nc_prog_gate(ecs_world *w, void *ctx) {
    (void)w;
    const nc_sysdef *d = (const nc_sysdef *)ctx;
    return (*d->frame + (int)(d->salt % 3)) % 3 != 0;
}

/* A random program: systems in 1-3 stages with random terms among the 6
   components, some chunked, declared order only along a random permutation
   of each stage (so never a cycle), commands, events, a run_if or an
   interval here and there. Every value written depends only on the row's
   entity and inputs. */
static void nc_prog_make(nc_prog *p, unsigned long long seed) {
    memset(p, 0, sizeof *p);
    p->seed = seed;
    unsigned long long s = seed;
    p->nstages = 1 + (int)test_below(&s, NC_MAXSTAGES);
    p->nsys = 6 + (int)test_below(&s, NC_MAXSYS - 7);   /* (room for the reader) */
    p->entities = (int)test_scaled(1200, 200);
    int perm[NC_MAXSYS];
    for (int i = 0; i < p->nsys; i++) {
        nc_sysdef *d = &p->sys[i];
        snprintf(d->name, sizeof d->name, "s%d", i);
        d->stage = (int)test_below(&s, (unsigned)p->nstages);
        d->salt = (uint32_t)test_rand(&s) | 1;
        d->nterms = 1 + (int)test_below(&s, 3);
        int used = 0;
        for (int k = 0; k < d->nterms; k++) {
            int c;
            do c = (int)test_below(&s, NC_COMPS); while (used >> c & 1);
            used |= 1 << c;
            d->comp[k] = c;
            d->access[k] = test_below(&s, 2) ? ECS_WRITE : ECS_READ;
            d->oper[k] = k && test_below(&s, 6) == 0 ? ECS_NOT : ECS_AND;
            if (d->oper[k] == ECS_NOT) d->access[k] = ECS_READ;
        }
        d->chunk = test_below(&s, 3) == 0 ? 16 << test_below(&s, 3) : 0;
        d->use_random = test_below(&s, 3) == 0;
        d->res_write = !d->chunk && test_below(&s, 4) == 0;
        d->emit = test_below(&s, 4) == 0;
        d->cmd = test_below(&s, 2) ? 1 + (int)test_below(&s, 4) : 0;
        d->cmd_comp = (int)test_below(&s, NC_COMPS);
        d->cmd_mod = 23 + (int)test_below(&s, 40);
        d->gate = test_below(&s, 5) == 0 ? 1 + (int)test_below(&s, 2) : 0;
        d->interval = 2 + (int)test_below(&s, 2);
        if (!d->chunk && test_below(&s, 8) == 0) d->flags = test_below(&s, 2) ? ECS_SYSTEM_MAIN_THREAD : ECS_SYSTEM_EXCLUSIVE;
        d->bug_frame = -1;
    }
    p->fixed = p->nstages > 1 && test_below(&s, 2) ? 1 + (int)test_below(&s, (unsigned)p->nstages - 1) : 0;
    for (int st = 0; st < p->nstages; st++) {   /* declared order along a random permutation */
        int n = 0;
        for (int i = 0; i < p->nsys; i++) if (p->sys[i].stage == st) perm[n++] = i;
        for (int i = n - 1; i > 0; i--) { int j = (int)test_below(&s, (unsigned)i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
        for (int i = 0; i < n; i++) {
            nc_sysdef *d = &p->sys[perm[i]];
            for (int e = 0; e < 2 && i + 1 < n; e++) {
                if (test_below(&s, 3)) continue;
                int j = i + 1 + (int)test_below(&s, (unsigned)(n - i - 1));   /* perm[i] before perm[j] */
                if (test_below(&s, 2) && d->nbefore < 3) d->before[d->nbefore++] = perm[j];
                else if (p->sys[perm[j]].nafter < 3) p->sys[perm[j]].after[p->sys[perm[j]].nafter++] = perm[i];
            }
        }
    }
    nc_sysdef *r = &p->sys[p->nsys++];   /* the events' reader, in the last stage */
    snprintf(r->name, sizeof r->name, "reader");
    r->stage = p->nstages - 1;
    r->reader = true;
    r->salt = 1;
    r->bug_frame = -1;
}

typedef struct nc_run {
    uint64_t hash[NC_FRAMES];
    ecs_hash_step steps[NC_FRAMES][NC_MAXSTEPS];
    int nsteps[NC_FRAMES];
    int calls[NC_FRAMES][NC_MAXSYS];
} nc_run;

/* Runs p on a new world: its world hash and hash trace per frame into out.
   False (with a failed check) if the world could not be made or run. */
static bool nc_prog_frame(ecs_world *w, nc_prog *p, int f, int *frame, nc_run *out) {
    *frame = f;
    for (int i = 0; i < p->nsys; i++) atomic_store(&p->sys[i].calls, 0);
    ecs_result r = ecs_progress_steps(w, 2, 0.016f);
    if (r != ECS_OK) { CHECKF(0, "program %llu, frame %d: %s: %s", p->seed, f, ecs_result_str(r), ecs_last_error(w)); return false; }
    out->hash[f] = ecs_world_hash(w);
    const ecs_hash_step *st = NULL;
    int n = ecs_hash_trace(w, &st);
    if (n > NC_MAXSTEPS || n < 0 || (n && !st)) { CHECKF(0, "program %llu, frame %d: %d trace entries", p->seed, f, n); return false; }
    out->nsteps[f] = n;
    if (n) memcpy(out->steps[f], st, (size_t)n * sizeof *st);
    for (int i = 0; i < p->nsys; i++) out->calls[f][i] = atomic_load(&p->sys[i].calls);
    return true;
}

static void nc_expect_same(const nc_prog *p, const nc_run *base, const nc_run *r, const char *what);

/* replay: take a snapshot before frame NC_FRAMES / 2, and at the end
   restore it and run the second half again: the same hashes and trace. */
static bool nc_prog_run(nc_prog *p, int threads, uint64_t shuffle, nc_run *out, bool replay) {
    static int frame;
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads, .shuffle_seed = shuffle,
                                                   .random_seed = p->seed ^ 0xabc});
    if (!w) { CHECK(w); return false; }
    ecs_id ids[NC_COMPS + 3];
    char nm[16];
    bool ok = true;
    for (int c = 0; c < NC_COMPS; c++) {
        snprintf(nm, sizeof nm, "nc_c%d", c);
        ok &= (ids[c] = ecs_component(w, nm, sizeof(nc_val), 0)) != 0;
    }
    ids[NC_COMPS] = ecs_resource(w, "nc_acc", sizeof(nc_acc), 0, NULL);
    ids[NC_COMPS + 1] = ecs_event(w, "nc_ev", sizeof(nc_ev), _Alignof(nc_ev));
    ids[NC_COMPS + 2] = ecs_resource(w, "nc_evacc", sizeof(nc_acc), 0, NULL);
    ok &= ids[NC_COMPS] && ids[NC_COMPS + 1] && ids[NC_COMPS + 2];
    for (int st = 1; st < p->nstages; st++)
        ok &= ecs_stage_init(w, &(ecs_stage_desc){.fixed_dt = st == p->fixed ? 0.008f : 0}) == (ecs_stage)st;
    unsigned long long s = p->seed ^ 0x77;
    for (int i = 0; ok && i < p->entities; i++) {   /* random component sets: several tables */
        unsigned r = (unsigned)test_rand(&s);
        ecs_entity e = ecs_create(w);
        for (int c = 0; c < NC_COMPS; c++)
            if (r >> c & 1 || c == (int)(r >> 8) % NC_COMPS) ok &= ecs_set(w, e, ids[c], &(nc_val){r * (uint64_t)(c + 1)}) == ECS_OK;
    }
    for (int i = 0; ok && i < p->nsys; i++) {
        nc_sysdef *d = &p->sys[i];
        d->frame = &frame;
        d->ids = ids;
        ecs_system_desc sd = {.name = d->name, .fn = nc_prog_fn, .ctx = d, .stage = (ecs_stage)d->stage,
                              .chunk_size = d->chunk, .flags = d->flags};
        for (int k = 0; k < d->nterms; k++)
            sd.terms[k] = (ecs_term){ids[d->comp[k]], (ecs_access)d->access[k], (ecs_oper)d->oper[k]};
        for (int k = 0; k < d->nafter; k++) sd.after[k] = p->sys[d->after[k]].name;
        for (int k = 0; k < d->nbefore; k++) sd.before[k] = p->sys[d->before[k]].name;
        if (d->res_write) sd.writes[0] = ids[NC_COMPS];
        if (d->emit) sd.emits[0] = ids[NC_COMPS + 1];
        if (d->reader) {
            sd.reads[0] = ids[NC_COMPS + 1];
            sd.writes[0] = ids[NC_COMPS + 2];
        }
        if (d->gate == 1) { sd.run_if = nc_prog_gate; sd.run_if_ctx = d; }
        if (d->gate == 2) sd.interval = d->interval;
        ok &= (d->handle = ecs_system_add(w, &sd)) != 0;
    }
    ecs_report rep;
    if (ok && ecs_validate(w, &rep) != ECS_OK) {
        CHECKF(0, "program %llu: not valid", p->seed);
        ecs_report_print(&rep, stderr);
        ok = false;
    }
    if (ok) ecs_hash_trace_enable(w, true);
    ecs_snapshot *snap = NULL;
    for (int f = 0; ok && f < NC_FRAMES; f++) {
        if (replay && f == NC_FRAMES / 2) ok = (snap = ecs_snapshot_take(w)) != NULL;
        ok = ok && nc_prog_frame(w, p, f, &frame, out);
    }
    if (ok && replay) {
        nc_run *again = (nc_run *)malloc(sizeof *again);
        ok = again && ecs_snapshot_restore(w, snap) == ECS_OK;
        CHECK(ok);
        if (ok) memcpy(again, out, sizeof *again);
        for (int f = NC_FRAMES / 2; ok && f < NC_FRAMES; f++) ok = nc_prog_frame(w, p, f, &frame, again);
        if (ok) nc_expect_same(p, out, again, "replayed after a restore");
        free(again);
    }
    ecs_snapshot_free(snap);
    ecs_world_free(w);
    return ok;
}

/* Whether system d is skipped by its gate at frame f, step `step` of its
   stage (turns counted from 0: one a frame, two in the fixed-step stage). */
static bool nc_gated_off(const nc_sysdef *d, int f, int step, bool fixed) {
    if (d->gate == 1) return (f + (int)(d->salt % 3)) % 3 == 0;
    if (d->gate == 2) return (fixed ? 2 * f + step : f) % d->interval != 0;
    return false;
}

/* A frame's trace has the documented shape: per stage turn, every system of
   the stage in registration order, then the sync point (system 0); a system
   ran exactly when it was called, one that did not has hash 0, and a gated
   system that was not due did not run. */
static void nc_check_shape(const nc_prog *p, const nc_run *r, const char *what) {
    int gated_skips = 0, ran = 0, failed = test_g.checks_failed;
    for (int f = 0; f < NC_FRAMES && test_g.checks_failed == failed; f++) {   /* (the first bad frame only) */
        int at = 0;
        bool any[NC_MAXSYS] = {false};
        for (int st = 0; st < p->nstages; st++) {
            const bool fixed = p->fixed > 0 && st == p->fixed;
            for (int step = 0; step < (fixed ? 2 : 1); step++) {
                for (int i = 0; i < p->nsys; i++) {
                    const nc_sysdef *d = &p->sys[i];
                    if (d->stage != st) continue;
                    if (at >= r->nsteps[f]) { CHECKF(0, "%s, frame %d: the trace ends early (%d entries)", what, f, r->nsteps[f]); return; }
                    const ecs_hash_step *e = &r->steps[f][at++];
                    CHECKF(e->system == d->handle && e->stage == (ecs_stage)st && e->step == step,
                           "%s, frame %d, entry %d: system %u stage %u step %d, want %s (%u) of stage %d step %d", what, f,
                           at - 1, (unsigned)e->system, (unsigned)e->stage, e->step, d->name, (unsigned)d->handle, st, step);
                    CHECKF(e->ran || e->hash == 0, "%s, frame %d: %s did not run but has a hash", what, f, d->name);
                    if (nc_gated_off(d, f, step, fixed)) {
                        gated_skips++;
                        CHECKF(!e->ran, "%s, frame %d, step %d: %s ran while its gate was shut", what, f, step, d->name);
                    }
                    any[i] |= e->ran;
                    ran += e->ran;
                }
                if (at >= r->nsteps[f]) { CHECKF(0, "%s, frame %d: no sync entry for stage %d", what, f, st); return; }
                const ecs_hash_step *e = &r->steps[f][at++];
                CHECKF(e->system == 0 && e->stage == (ecs_stage)st && e->ran && e->step == step,
                       "%s, frame %d: entry %d is not stage %d's sync point (step %d)", what, f, at - 1, st, step);
            }
        }
        CHECKF(at == r->nsteps[f], "%s, frame %d: %d entries, want %d", what, f, r->nsteps[f], at);
        for (int i = 0; i < p->nsys; i++)   /* ran in a turn of the frame exactly when called in it */
            CHECKF(any[i] == (r->calls[f][i] > 0), "%s, frame %d: %s called %d times, ran in a turn: %d", what, f,
                   p->sys[i].name, r->calls[f][i], (int)any[i]);
    }
    CHECK(ran > 0);
    bool gated = false;
    for (int i = 0; i < p->nsys; i++) gated |= p->sys[i].gate != 0;
    if (gated) CHECK(gated_skips > 0);
}

/* The first difference between two runs of one program (world hashes and
   traces); false if they are alike. */
static bool nc_first_diff(const nc_run *a, const nc_run *b, int *frame, int *entry) {
    for (int f = 0; f < NC_FRAMES; f++) {
        int n = a->nsteps[f] < b->nsteps[f] ? a->nsteps[f] : b->nsteps[f];
        for (int k = 0; k < n; k++) {
            const ecs_hash_step *x = &a->steps[f][k], *y = &b->steps[f][k];
            if (x->system != y->system || x->stage != y->stage || x->step != y->step || x->ran != y->ran ||
                x->hash != y->hash) {
                *frame = f; *entry = k;
                return true;
            }
        }
        if (a->nsteps[f] != b->nsteps[f] || a->hash[f] != b->hash[f]) { *frame = f; *entry = n; return true; }
    }
    return false;
}

static const char *nc_sys_name(const nc_prog *p, ecs_system s) {
    for (int i = 0; i < p->nsys; i++) if (p->sys[i].handle == s) return p->sys[i].name;
    return s ? "?" : "(sync point)";
}

static void nc_expect_same(const nc_prog *p, const nc_run *base, const nc_run *r, const char *what) {
    int f, k;
    if (!nc_first_diff(base, r, &f, &k)) return;
    const ecs_hash_step *e = k < r->nsteps[f] ? &r->steps[f][k] : NULL;
    CHECKF(0, "program %llu, %s: differs from the reference run (1 thread, unshuffled) first at frame %d, entry %d (%s, stage %u)%s", p->seed,
           what, f, k, e ? nc_sys_name(p, e->system) : "-", e ? (unsigned)e->stage : 0u,
           base->hash[f] != r->hash[f] ? "; the world hash differs too" : "");
}

/* 7: the hash trace is the same at 1, 2, 3 and 8 threads over random
   programs, and has its documented shape. */
/* p again on `threads` with shuffle seed `shuffle` (into r): the same as
   base, entry by entry, and well formed. False if it could not run. */
static bool nc_run_same(nc_prog *p, const nc_run *base, nc_run *r, int threads, uint64_t shuffle, bool replay) {
    memset(r, 0, sizeof *r);
    if (!nc_prog_run(p, threads, shuffle, r, replay)) return false;
    char what[64];
    snprintf(what, sizeof what, "%d thread(s), shuffle seed %llu", threads, (unsigned long long)shuffle);
    nc_expect_same(p, base, r, what);
    nc_check_shape(p, r, what);
    return true;
}

TEST(sched_netcode_trace_threads) {
    static const int threads[] = {2, 3, 8};
    int programs = (int)test_scaled(12, 2);
    nc_prog *p = (nc_prog *)malloc(sizeof *p);
    nc_run *base = (nc_run *)malloc(sizeof *base), *r = (nc_run *)malloc(sizeof *r);
    REQUIRE(p && base && r);
    for (int g = 0; g < programs; g++) {
        nc_prog_make(p, test_g.seed * 1000 + (unsigned long long)g + 1);
        if (!nc_prog_run(p, 1, 0, base, true)) break;
        char what[64];
        snprintf(what, sizeof what, "program %llu, 1 thread", p->seed);
        nc_check_shape(p, base, what);
        for (int t = 0; t < 3; t++)
            if (!nc_run_same(p, base, r, threads[t], 0, t == 0)) break;
        if (test_g.checks_failed) break;
    }
    free(p);
    free(base);
    free(r);
}

/* 9a: shuffle seeds change nothing in a correct program: the same world
   hash every frame and the same trace under seeds 0..5 at 1 and 2 threads. */
TEST(sched_netcode_shuffle_invariant) {
    int programs = (int)test_scaled(6, 1);
    nc_prog *p = (nc_prog *)malloc(sizeof *p);
    nc_run *base = (nc_run *)malloc(sizeof *base), *r = (nc_run *)malloc(sizeof *r);
    REQUIRE(p && base && r);
    for (int g = 0; g < programs; g++) {
        nc_prog_make(p, test_g.seed * 1000 + (unsigned long long)g + 500);
        if (!nc_prog_run(p, 1, 0, base, false)) break;
        for (int t = 1; t <= 2; t++)
            for (uint64_t seed = 0; seed <= 5; seed++) {
                if (t == 1 && seed == 0) continue;
                if (!nc_run_same(p, base, r, t, seed, false)) break;
            }
        if (test_g.checks_failed) break;
    }
    free(p);
    free(base);
    free(r);
}

/* 8: an injected divergence is named exactly: "buggy" (in the middle of its
   stage, between systems that write other things, and read by a later
   one) writes something else on frame 5 only; the first entry that
   differs is buggy's on frame 5, and nothing before it does. */
TEST(sched_netcode_divergence_named) {
    static const struct { const char *name; int stage; int c[2], acc[2]; } def[] = {
        {"pre_a", 0, {0, -1}, {ECS_WRITE, 0}},
        {"pre_b", 0, {0, 1}, {ECS_READ, ECS_WRITE}},
        {"buggy", 0, {1, 2}, {ECS_READ, ECS_WRITE}},
        {"post_c", 0, {3, 5}, {ECS_WRITE, ECS_READ}},
        {"late", 0, {2, 4}, {ECS_READ, ECS_WRITE}},
        {"next", 1, {4, 5}, {ECS_READ, ECS_WRITE}},
    };
    enum { NDEF = sizeof def / sizeof def[0], BUGGY = 2, LATE = 4, BUG_FRAME = 5 };
    nc_prog *p = (nc_prog *)malloc(sizeof *p);
    nc_run *a = (nc_run *)malloc(sizeof *a), *b = (nc_run *)malloc(sizeof *b);
    REQUIRE(p && a && b);
    memset(p, 0, sizeof *p);
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    p->seed = test_g.seed ^ 0xd1f;
    p->nstages = 2;
    p->nsys = NDEF;
    p->entities = (int)test_scaled(800, 200);
    for (int i = 0; i < NDEF; i++) {
        nc_sysdef *d = &p->sys[i];
        snprintf(d->name, sizeof d->name, "%s", def[i].name);
        d->stage = def[i].stage;
        d->salt = (uint32_t)(i * 2 + 1);
        d->chunk = i == BUGGY ? 0 : 64;
        for (int k = 0; k < 2 && def[i].c[k] >= 0; k++) {
            d->comp[k] = def[i].c[k];
            d->access[k] = def[i].acc[k];
            d->oper[k] = ECS_AND;
            d->nterms++;
        }
        d->bug_frame = -1;
    }
    bool ok = nc_prog_run(p, 1, 0, a, false);
    p->sys[BUGGY].bug_frame = BUG_FRAME;
    ok = ok && nc_prog_run(p, 2, 0, b, false);
    REQUIRE(ok);
    int f = -1, k = -1;
    REQUIRE(nc_first_diff(a, b, &f, &k));
    const ecs_hash_step *e = k < b->nsteps[f] ? &b->steps[f][k] : NULL;
    CHECKF(f == BUG_FRAME && e && e->system == p->sys[BUGGY].handle && e->stage == 0 && e->ran,
           "the first difference: frame %d, entry %d (%s), want buggy's on frame %d", f, k,
           e ? nc_sys_name(p, e->system) : "-", BUG_FRAME);
    for (int x = 0; x < BUG_FRAME; x++) CHECK(a->hash[x] == b->hash[x]);
    CHECK(a->hash[BUG_FRAME] != b->hash[BUG_FRAME]);
    if (f == BUG_FRAME && e) {   /* the system that reads it differs too; the others of the frame do not */
        for (int x = 0; x < b->nsteps[f]; x++) {
            const ecs_hash_step *y = &b->steps[f][x], *z = &a->steps[f][x];
            bool downstream = y->system == p->sys[BUGGY].handle || y->system == p->sys[LATE].handle ||
                              y->system == p->sys[5].handle;
            CHECKF((y->hash != z->hash) == downstream, "frame %d: %s's entry %s", f, nc_sys_name(p, y->system),
                   downstream ? "is unchanged" : "changed");
        }
    }
    free(p);
    free(a);
    free(b);
}

/* ---- shuffling an order-dependent program --------------------------------- */
typedef struct nc_ord { ecs_id x; ecs_result in_system; uint64_t mul, add; } nc_ord;
static void nc_ord_fn(ecs_iter *it) {   /* x*3+1 or x*x+2: (x*3+1)*5+2 and (x*5+2)*3+1 would commute */
    const nc_ord *o = (const nc_ord *)it->ctx;
    uint64_t *x = (uint64_t *)ecs_resource_get(it->world, o->x);
    if (x) *x = *x * (o->mul ? o->mul : *x) + o->add;
}
static void nc_ord_probe(ecs_iter *it) {
    nc_ord *o = (nc_ord *)it->ctx;
    o->in_system = ecs_world_set_shuffle_seed(it->world, 77);
}

/* Two independent_of systems doing non-commutative work on one resource:
   the result after some frames, with a shuffle seed (from the desc or set). */
static uint64_t nc_ord_run(uint64_t seed, bool by_desc, ecs_result *probe) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .shuffle_seed = by_desc ? seed : 0});
    uint64_t out = 0;
    if (!w) { CHECK(w); return 0; }
    static nc_ord t3, t5, pr;
    ecs_id x = ecs_resource(w, "nc_x", sizeof(uint64_t), 0, &(uint64_t){1});
    t3 = (nc_ord){x, ECS_OK, 3, 1};
    t5 = (nc_ord){x, ECS_OK, 0, 2};
    pr = (nc_ord){x, ECS_OK, 0, 0};
    bool ok = x && ecs_system_add(w, &(ecs_system_desc){.name = "triple", .fn = nc_ord_fn, .ctx = &t3,
                                                       .writes = {x}, .independent_of = {"square"}});
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "square", .fn = nc_ord_fn, .ctx = &t5,
                                                    .writes = {x}, .independent_of = {"triple"}});
    ok = ok && ecs_system_add(w, &(ecs_system_desc){.name = "probe", .fn = nc_ord_probe, .ctx = &pr});
    ok = ok && ecs_validate(w, NULL) == ECS_OK;
    CHECK(ok);
    if (ok && !by_desc) CHECK_EQ_INT(ecs_world_set_shuffle_seed(w, seed), ECS_OK);
    for (int f = 0; ok && f < 8; f++) ok = ecs_progress(w, 0.016f) == ECS_OK;
    CHECK(ok);
    if (ok) out = *(const uint64_t *)ecs_resource_get(w, x);
    if (probe) *probe = pr.in_system;
    ecs_world_free(w);
    return out;
}

/* 9b: the shuffle really reorders: an order-dependent program gives several
   results across seeds (each seed always the same one); a system may not
   change the seed. */
TEST(netcode_shuffle_order_dependent) {
    uint64_t results[20];
    int distinct = 0;
    ecs_result probe = ECS_OK;
    uint64_t none = nc_ord_run(0, true, &probe);
    CHECK_EQ_INT(probe, ECS_ERR_BUSY);   /* ecs_world_set_shuffle_seed inside a system */
#if !ECS_SHUFFLE_SEED   /* (a build with ECS_SHUFFLE_SEED shuffles worlds whose desc gives 0) */
    CHECK_EQ_INT(nc_ord_run(0, false, NULL), none);
#else
    (void)none;
#endif
    for (int s = 0; s < 20; s++) {
        results[s] = nc_ord_run((uint64_t)s + 1, s % 2 == 0, NULL);
        CHECK_EQ_INT(nc_ord_run((uint64_t)s + 1, s % 2 != 0, NULL), results[s]);   /* a seed is one order */
        bool seen = false;
        for (int k = 0; k < s; k++) seen |= results[k] == results[s];
        distinct += !seen;
    }
    CHECKF(distinct >= 2, "20 shuffle seeds gave %d result(s): the order never changed", distinct);
    CHECK_EQ_INT(ecs_world_set_shuffle_seed(NULL, 1), ECS_ERR_ARG);
}

/* ---- presentation stages and the trace switch ----------------------------- */
static void nc_count(ecs_iter *it) { (*(int *)it->ctx)++; }

/* 10: a presentation stage takes no turn while resimulating, and runs
   again after; an ordinary stage runs in both. */
TEST(netcode_presentation_stage) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    int sim = 0, draw = 0, late = 0;
    ecs_stage draw_st = ecs_stage_init(w, &(ecs_stage_desc){.name = "draw", .presentation = true});
    ecs_stage late_st = ecs_stage_add(w, "late");
    REQUIRE(draw_st && late_st);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "sim", .fn = nc_count, .ctx = &sim}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "draw", .fn = nc_count, .ctx = &draw, .stage = draw_st}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "late", .fn = nc_count, .ctx = &late, .stage = late_st}));
    ecs_hash_trace_enable(w, true);
    for (int f = 0; f < 3; f++) REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
    CHECK(sim == 3 && draw == 3 && late == 3);
    CHECK(!ecs_world_resimulating(w));
    ecs_world_set_resimulating(w, true);
    CHECK(ecs_world_resimulating(w));
    for (int f = 0; f < 2; f++) {
        REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
        const ecs_hash_step *st = NULL;
        int n = ecs_hash_trace(w, &st);
        bool has_draw = false, has_sim = false;
        for (int k = 0; k < n; k++) { has_draw |= st[k].stage == draw_st; has_sim |= st[k].stage == 0; }
        CHECK(n == 4 && has_sim && !has_draw);   /* stages 0 and late: a system and a sync point each */
    }
    CHECKF(sim == 5 && draw == 3 && late == 5, "while resimulating: sim %d, draw %d, late %d", sim, draw, late);
    ecs_stage_stats ss;
    CHECK(ecs_stage_stats_get(w, draw_st, &ss) == ECS_OK && ss.steps == 3);
    ecs_world_set_resimulating(w, false);
    REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
    CHECK(sim == 6 && draw == 4 && late == 6);
    CHECK_EQ_INT(ecs_hash_trace(w, NULL), 6);
    CHECK(ecs_stage_stats_get(w, draw_st, &ss) == ECS_OK && ss.steps == 4);
    CHECK(!ecs_world_resimulating(NULL));
    ecs_world_free(w);
}

typedef struct nc_sw { int frame, toggle_at; } nc_sw;
static void nc_switch_fn(ecs_iter *it) {
    nc_sw *s = (nc_sw *)it->ctx;
    if (s->frame == s->toggle_at) ecs_hash_trace_enable(it->world, false);   /* refused: between frames only */
}

/* 11: the trace is off by default and after turning it off; NULL gives 0;
   turning it on or off empties it; a system cannot switch it. */
TEST(netcode_hash_trace_switch) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    nc_sw sw = {0, 2};
    ecs_id c = ecs_component(w, "nc_c", sizeof(uint64_t), 0);
    REQUIRE(c && ecs_create_many(w, 10, &c, 1, NULL) == ECS_OK);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "sw", .fn = nc_switch_fn, .ctx = &sw, .terms = {ECS_TERM_W(c)}}));
    const ecs_hash_step *st = (const ecs_hash_step *)&sw;
    REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
    CHECK(ecs_hash_trace(w, &st) == 0 && st == NULL);   /* off by default */
    ecs_hash_trace_enable(w, true);
    CHECK_EQ_INT(ecs_hash_trace(w, NULL), 0);
    sw.frame = 1;
    REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
    CHECK(ecs_hash_trace(w, &st) == 2 && st && st[0].system == 1 && st[0].ran && st[0].hash != 0 && st[1].system == 0);
    sw.frame = 2;
    ecs_result r = ecs_progress(w, 0.016f);
    CHECK(r == ECS_OK || r == ECS_ERR_BUSY || r == ECS_ERR_ACCESS);
    CHECKF(ecs_hash_trace(w, &st) == 2, "the trace was switched off from inside a system");
    ecs_hash_trace_enable(w, false);
    CHECK(ecs_hash_trace(w, &st) == 0 && st == NULL);
    REQUIRE(ecs_progress(w, 0.016f) == ECS_OK);
    CHECK_EQ_INT(ecs_hash_trace(w, NULL), 0);
    st = (const ecs_hash_step *)&sw;
    CHECK(ecs_hash_trace(NULL, &st) == 0 && st == NULL);
    CHECK_EQ_INT(ecs_hash_trace(NULL, NULL), 0);
    ecs_hash_trace_enable(NULL, true);   /* no crash */
    ecs_world_free(w);
}

/* A loaded snapshot's plain columns stay in the bytes it read, at whatever
   offset the file puts them; only columns nothing reads as their type may
   (a component this world gives serialize hooks, though the file holds its
   plain bytes, is copied: the hook reads a typed, aligned value). The names
   of a first component shift the column through every offset mod 8. */
typedef struct nc_vec { double x, y; } nc_vec;
static int g_nc_misaligned, g_nc_serialized;
static size_t nc_vec_serialize(const void *value, void *out, size_t cap, void *ctx) {
    (void)ctx;
    g_nc_misaligned += (uintptr_t)value % _Alignof(nc_vec) != 0;
    g_nc_serialized++;
    const nc_vec *v = (const nc_vec *)value;
    if (cap >= sizeof *v) memcpy(out, v, sizeof *v);
    return sizeof *v;
}
static bool nc_vec_deserialize(void *value, const void *data, size_t size, void *ctx) {
    (void)ctx;
    if (size != sizeof(nc_vec)) return false;
    memcpy(value, data, size);
    return true;
}
TEST(netcode_loaded_columns_aligned) {
    for (int shift = 0; shift < 8; shift++) {
        char name[16] = "pad";
        for (int i = 0; i < shift; i++) name[3 + i] = 'x';
        ecs_world *a = ecs_world_new(NULL), *b = ecs_world_new(NULL);
        REQUIRE(a && b);
        ecs_component(a, name, 4, 4);
        ecs_id va = ecs_component(a, "nc_vec", sizeof(nc_vec), _Alignof(nc_vec));
        ecs_component(b, name, 4, 4);
        ecs_id vb = ecs_component_init(b, &(ecs_component_desc){.name = "nc_vec", .size = sizeof(nc_vec),
                                                                .align = _Alignof(nc_vec),
                                                                .serialize = nc_vec_serialize,
                                                                .deserialize = nc_vec_deserialize});
        REQUIRE(va && vb);
        ecs_entity e[5];
        for (int i = 0; i < 5; i++) {
            nc_vec v = {i + 0.5, i * 2.0};
            e[i] = ecs_create(a);
            CHECK_EQ_INT(ecs_set(a, e[i], va, &v), ECS_OK);
        }
        ecs_snapshot *s = ecs_snapshot_take(a);
        REQUIRE(s);
        nc_mem m, again;
        CHECK_EQ_INT(nc_save(s, &m), ECS_OK);   /* plain bytes: a has no hooks for it */
        ecs_snapshot *t = ecs_snapshot_load(b, nc_mem_read, &m);
        REQUIRE(t);
        g_nc_misaligned = g_nc_serialized = 0;
        CHECK_EQ_INT(nc_save(t, &again), ECS_OK);   /* b's serialize hook reads the loaded values */
        CHECKF(g_nc_serialized >= 10 && g_nc_misaligned == 0, "shift %d: %d values serialized (both passes), %d misaligned", shift,
               g_nc_serialized, g_nc_misaligned);
        CHECK_EQ_INT(ecs_snapshot_restore(b, t), ECS_OK);
        for (int i = 0; i < 5; i++) {   /* (the hashes differ: b hashes through its hook) */
            const nc_vec *v = (const nc_vec *)ecs_get(b, e[i], vb);
            CHECKF(v && v->x == i + 0.5 && v->y == i * 2.0, "shift %d: entity %d", shift, i);
        }
        free(m.p);
        free(again.p);
        ecs_snapshot_free(t);
        ecs_snapshot_free(s);
        ecs_world_free(a);
        ecs_world_free(b);
    }
}

void suite_netcode(void) {
    RUN(netcode_save_load_memory);
    RUN(netcode_two_snapshots_one_stream);
    RUN(netcode_load_truncated_corrupted);
    RUN(netcode_save_write_fails);
    RUN(netcode_random_seed_in_snapshots);
    RUN(sched_netcode_random_determinism);
    RUN(sched_netcode_trace_threads);
    RUN(sched_netcode_divergence_named);
    RUN(sched_netcode_shuffle_invariant);
    RUN(netcode_shuffle_order_dependent);
    RUN(netcode_presentation_stage);
    RUN(netcode_hash_trace_switch);
    RUN(netcode_loaded_columns_aligned);
}
