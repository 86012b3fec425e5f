/* snapshots, save files and the world hash: a restore gives back exactly the
   world that was taken (handles, free slots, row order, values, resources,
   parents), hooks keep values balanced, a save file loads into a build that
   registers components in another order, and a bad file never changes the
   world or crashes. */
#include "test.h"
#include <stddef.h>

typedef struct sn_pos { float x, y; } sn_pos;
typedef struct sn_vel { float x, y; } sn_vel;
typedef struct sn_name { char *s; } sn_name;   /* owns s */
typedef struct sn_score { int points, rounds; } sn_score;

static long sn_ctor_n, sn_dtor_n;
static void name_ctor(void *p, int n, void *ctx) { (void)ctx; memset(p, 0, (size_t)n * sizeof(sn_name)); sn_ctor_n += n; }
static void name_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) { free(((sn_name *)p)[i].s); ((sn_name *)p)[i].s = NULL; }
    sn_dtor_n += n;
}
static void name_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        sn_name *d = (sn_name *)dst + i;
        const sn_name *s = (const sn_name *)src + i;
        free(d->s);
        d->s = NULL;
        if (s->s) { d->s = (char *)malloc(strlen(s->s) + 1); if (d->s) strcpy(d->s, s->s); }
    }
}
static size_t name_save(const void *value, void *out, size_t cap, void *ctx) {
    (void)ctx;
    const sn_name *v = (const sn_name *)value;
    size_t n = v->s ? strlen(v->s) : 0;
    if (n <= cap && n) memcpy(out, v->s, n);
    return n;
}
static bool name_load(void *value, const void *data, size_t size, void *ctx) {
    (void)ctx;
    sn_name *v = (sn_name *)value;
    if (memchr(data, 0, size)) return false;
    free(v->s);
    v->s = (char *)malloc(size + 1);
    if (!v->s) return false;
    memcpy(v->s, data, size);
    v->s[size] = 0;
    return true;
}

typedef struct sn_ids { ecs_id pos, vel, name, tag, score; } sn_ids;
static void sn_register(ecs_world *w, sn_ids *id, bool reversed) {
    ecs_component_desc nd = {.name = "Name", .size = sizeof(sn_name), .align = _Alignof(sn_name),
        .ctor = name_ctor, .dtor = name_dtor, .copy = name_copy, .serialize = name_save,
        .deserialize = name_load};
    if (reversed) {   /* another build: other ids for the same components */
        id->score = ECS_RESOURCE(w, sn_score, &(sn_score){0, 0});
        id->tag = ECS_TAG(w, Frozen);
        id->name = ecs_component_init(w, &nd);
        id->vel = ecs_component(w, "sn_vel", sizeof(sn_vel), 0);
        id->pos = ecs_component(w, "sn_pos", sizeof(sn_pos), 0);
    } else {
        id->pos = ecs_component(w, "sn_pos", sizeof(sn_pos), 0);
        id->vel = ecs_component(w, "sn_vel", sizeof(sn_vel), 0);
        id->name = ecs_component_init(w, &nd);
        id->tag = ECS_TAG(w, Frozen);
        id->score = ECS_RESOURCE(w, sn_score, &(sn_score){0, 0});
    }
}

/* A little world: movers, named ones, frozen ones, a family tree. */
static void sn_populate(ecs_world *w, const sn_ids *id, unsigned long long seed, int n) {
    ecs_entity made[256];
    for (int i = 0; i < n && i < 256; i++) {
        ecs_entity e = made[i] = ecs_create(w);
        unsigned r = (unsigned)test_rand(&seed);
        CHECK_EQ_INT(ecs_set(w, e, id->pos, &(sn_pos){(float)i, (float)(r % 100)}), ECS_OK);
        if (r & 1) CHECK_EQ_INT(ecs_set(w, e, id->vel, &(sn_vel){1, (float)(r % 7)}), ECS_OK);
        if (r & 2) {
            char buf[32];
            snprintf(buf, sizeof buf, "unit-%d", i);
            sn_name v = {buf};
            CHECK_EQ_INT(ecs_set(w, e, id->name, &v), ECS_OK);
        }
        if (r & 4) CHECK_EQ_INT(ecs_add(w, e, id->tag), ECS_OK);
        ecs_entity p = i ? made[(r >> 8) % (unsigned)i] : 0, victim = i ? made[(r >> 4) % (unsigned)i] : 0;
        if ((r & 8) && ecs_is_alive(w, p)) CHECK_EQ_INT(ecs_set_parent(w, e, p), ECS_OK);
        if (r % 5 == 0 && ecs_is_alive(w, victim)) CHECK_EQ_INT(ecs_destroy(w, victim), ECS_OK);
    }
    sn_score *sc = (sn_score *)ecs_resource_get(w, id->score);
    sc->points += n;
    sc->rounds++;
}

/* The world as a save would want it. (test_world_hash would see the
   pointers inside Name, which a restore copies to new strings.) */
static uint64_t sn_state(ecs_world *w) { return ecs_world_hash(w) ^ ecs_count(w); }

TEST(snapshot_restore_exact) {
    sn_ctor_n = sn_dtor_n = 0;
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    sn_ids id;
    sn_register(w, &id, false);
    sn_populate(w, &id, 1, 200);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{id.pos, ECS_READ, ECS_AND}, {id.vel, ECS_READ, ECS_AND}}});
    REQUIRE(q);
    size_t qn = ecs_query_count(w, q);
    uint64_t h0 = sn_state(w);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    CHECK_EQ_INT(sn_state(w), h0);   /* taking changes nothing */
    ecs_entity next = ecs_create(w);
    sn_populate(w, &id, 2, 150);     /* other values, slots, tables and parents */
    ecs_id extra = ecs_component(w, "Later", 4, 0);   /* registered after the take: still fine */
    ecs_entity x = ecs_create(w);
    CHECK_EQ_INT(ecs_add(w, x, extra), ECS_OK);
    CHECK(sn_state(w) != h0);
    CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_OK);
    CHECK_EQ_INT(sn_state(w), h0);
    CHECK_EQ_INT(ecs_query_count(w, q), qn);   /* cached queries stay valid */
    CHECK_EQ_INT(ecs_create(w), next);          /* the free slots too */
    CHECK(!ecs_is_alive(w, x));
    sn_populate(w, &id, 2, 150);                /* and the same work gives the same world */
    uint64_t h1 = sn_state(w);
    CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_OK);
    CHECK_EQ_INT(sn_state(w), h0);
    ecs_create(w);
    sn_populate(w, &id, 2, 150);
    CHECK_EQ_INT(ecs_add(w, ecs_create(w), extra), ECS_OK);
    ecs_destroy(w, ecs_create(w));
    CHECK(sn_state(w) != h1);
    ecs_snapshot_free(s);
    ecs_query_free(q);
    ecs_world_free(w);
    CHECK_EQ_INT(sn_ctor_n, sn_dtor_n);   /* owned names: none leaked, none freed twice (ASan) */
}

/* The free slots are state too. Taken while destroyed entities wait for
   reuse, a restore hands out the same handles again, whatever was created
   and destroyed in between (which left a slot live in the snapshot at the
   head of the free list). */
TEST(snapshot_restore_free_slots) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    ecs_id pos = ecs_component(w, "sn_pos", sizeof(sn_pos), 0);
    ecs_entity es[10], next[6];
    CHECK_EQ_INT(ecs_create_many(w, 10, &pos, 1, es), ECS_OK);
    for (int i = 2; i < 10; i += 3) CHECK_EQ_INT(ecs_destroy(w, es[i]), ECS_OK);   /* 3 free slots */
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    uint64_t h0 = ecs_world_hash(w);
    for (int i = 0; i < 6; i++) next[i] = ecs_create(w);   /* the 3 freed slots, then 3 new ones */
    uint64_t h1 = ecs_world_hash(w);
    CHECK_EQ_INT(ecs_destroy(w, next[4]), ECS_OK);
    CHECK_EQ_INT(ecs_destroy(w, es[1]), ECS_OK);
    CHECK(ecs_create(w) != 0);                       /* es[1]'s slot again */
    CHECK_EQ_INT(ecs_destroy(w, es[0]), ECS_OK);   /* the head now */
    CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_OK);
    CHECK_EQ_INT(ecs_world_hash(w), h0);
    CHECK(ecs_is_alive(w, es[0]) && ecs_is_alive(w, es[1]) && !ecs_is_alive(w, next[0]));
    for (int i = 0; i < 6; i++) {
        ecs_entity e = ecs_create(w);
        CHECKF(e == next[i], "create %d after the restore: slot %u generation %u, want slot %u generation %u", i,
               (unsigned)(e & 0xffffffffu), (unsigned)(e >> 32), (unsigned)(next[i] & 0xffffffffu),
               (unsigned)(next[i] >> 32));
    }
    CHECK_EQ_INT(ecs_world_hash(w), h1);   /* the same work gives the same world */
    CHECK_EQ_INT(ecs_count(w), 13);
    ecs_snapshot_free(s);
    ecs_world_free(w);
}

TEST(snapshot_refusals) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    sn_ids id;
    sn_register(w, &id, false);
    sn_populate(w, &id, 3, 50);
    uint64_t h0 = sn_state(w);
    ecs_snapshot *s = ecs_snapshot_take(w);
    REQUIRE(s);
    CHECK_EQ_INT(ecs_defer_begin(w), ECS_OK);   /* between frames only */
    CHECK(ecs_snapshot_take(w) == NULL);
    CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_ERR_BUSY);
    CHECK_EQ_INT(ecs_defer_end(w), ECS_OK);
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{id.pos, ECS_READ, ECS_AND}}});
    ecs_iter it = ecs_query_iter(w, q);
    CHECK(ecs_query_next(&it));
    CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_ERR_BUSY);
    CHECK(strstr(ecs_last_error(w), "ecs_iter_fini") != NULL);
    ecs_iter_fini(&it);
    ecs_query_free(q);
    ecs_world *other = ecs_world_new(&(ecs_world_desc){.threads = 1});   /* other registrations */
    REQUIRE(other);
    sn_register(other, &id, true);
    CHECK_EQ_INT(ecs_snapshot_restore(other, s), ECS_ERR_ARG);
    CHECK_EQ_INT(ecs_snapshot_restore(w, NULL), ECS_ERR_ARG);
    CHECK(ecs_snapshot_take(NULL) == NULL);
    CHECK_EQ_INT(ecs_snapshot_write(s, NULL), ECS_ERR_ARG);
    CHECK(ecs_snapshot_read(w, NULL) == NULL);
    CHECK_EQ_INT(sn_state(w), h0);
    /* a value that owns memory needs serialize to be written */
    ecs_id raw = ecs_component_init(w, &(ecs_component_desc){.name = "Owner", .size = sizeof(sn_name),
        .ctor = name_ctor, .dtor = name_dtor, .copy = name_copy});
    sn_name v = {"x"};
    CHECK_EQ_INT(ecs_set(w, ecs_create(w), raw, &v), ECS_OK);
    ecs_snapshot *s2 = ecs_snapshot_take(w);
    REQUIRE(s2);
    FILE *f = tmpfile();
    REQUIRE(f);
    CHECK_EQ_INT(ecs_snapshot_write(s2, f), ECS_ERR_ARG);
    CHECK(strstr(ecs_last_error(w), "\"Owner\"") != NULL);
    fclose(f);
    CHECK_EQ_INT(ecs_component_init(w, &(ecs_component_desc){.name = "Half", .size = 4,
        .serialize = name_save}), 0);   /* serialize without deserialize */
    ecs_snapshot_free(s2);
    /* a resource that would be freed twice (dtor, no copy) cannot be taken */
    ecs_id lone = ecs_resource_init(other, &(ecs_component_desc){.name = "Lone", .size = sizeof(sn_name),
        .ctor = name_ctor, .dtor = name_dtor}, NULL);
    REQUIRE(lone);
    CHECK(ecs_snapshot_take(other) == NULL);
    CHECK(strstr(ecs_last_error(other), "\"Lone\"") != NULL);
    ecs_snapshot_free(s);
    ecs_world_free(other);
    ecs_world_free(w);
}

TEST(snapshot_entity_ids) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1});
    REQUIRE(w);
    sn_ids id;
    sn_register(w, &id, true);
    ecs_entity e = ecs_create(w);
    const ecs_id *ids = NULL;
    CHECK_EQ_INT(ecs_entity_ids(w, e, &ids), 0);
    CHECK_EQ_INT(ecs_add(w, e, id.pos), ECS_OK);
    CHECK_EQ_INT(ecs_add(w, e, id.tag), ECS_OK);
    CHECK_EQ_INT(ecs_entity_ids(w, e, &ids), 2);
    CHECK(ids && ids[0] == (id.tag < id.pos ? id.tag : id.pos) && ids[0] < ids[1]);
    ecs_destroy(w, e);
    CHECK_EQ_INT(ecs_entity_ids(w, e, &ids), -1);
    CHECK(ids == NULL);
    ecs_world_free(w);
}

/* The file as bytes. */
static unsigned char *sn_file(ecs_world *w, size_t *size) {
    ecs_snapshot *s = ecs_snapshot_take(w);
    FILE *f = tmpfile();
    unsigned char *buf = NULL;
    *size = 0;
    if (s && f && ecs_snapshot_write(s, f) == ECS_OK) {
        long n = ftell(f);
        buf = (unsigned char *)malloc((size_t)n);
        rewind(f);
        if (buf) *size = fread(buf, 1, (size_t)n, f);
    }
    if (f) fclose(f);
    ecs_snapshot_free(s);
    return buf;
}
static ecs_snapshot *sn_read(ecs_world *w, const unsigned char *bytes, size_t n) {
    FILE *f = tmpfile();
    if (!f) return NULL;
    if (n) fwrite(bytes, 1, n, f);
    rewind(f);
    ecs_snapshot *s = ecs_snapshot_read(w, f);
    fclose(f);
    return s;
}

/* Two worlds of two builds: a registers in one order, b in the other. */
static bool sn_two_builds(ecs_world **a, ecs_world **b, sn_ids *ia, sn_ids *ib) {
    sn_ctor_n = sn_dtor_n = 0;
    *a = ecs_world_new(&(ecs_world_desc){.threads = 1});
    *b = ecs_world_new(&(ecs_world_desc){.threads = 1});
    if (!*a || !*b) return false;
    sn_register(*a, ia, false);
    sn_register(*b, ib, true);
    return true;
}

TEST(snapshot_file_other_build) {
    ecs_world *a, *b;
    sn_ids ia, ib;
    REQUIRE(sn_two_builds(&a, &b, &ia, &ib));
    CHECK(ia.pos != ib.pos);
    sn_populate(a, &ia, 4, 220);
    sn_populate(b, &ib, 5, 40);   /* b has its own tables and entities before loading */
    size_t n;
    unsigned char *bytes = sn_file(a, &n);
    REQUIRE(bytes);
    ecs_snapshot *s = sn_read(b, bytes, n);
    REQUIRE(s);
    CHECK_EQ_INT(ecs_snapshot_restore(b, s), ECS_OK);
    ecs_snapshot_free(s);
    CHECK_EQ_INT(ecs_world_hash(b), ecs_world_hash(a));   /* by names: the registration order does not show */
    CHECK_EQ_INT(ecs_count(b), ecs_count(a));
    sn_populate(a, &ia, 6, 120);   /* continue both: still the same */
    sn_populate(b, &ib, 6, 120);
    CHECK_EQ_INT(ecs_world_hash(b), ecs_world_hash(a));
    const sn_score *sa = (const sn_score *)ecs_resource_get(a, ia.score), *sb = (const sn_score *)ecs_resource_get(b, ib.score);
    CHECK(sa->points == sb->points && sa->rounds == sb->rounds);
    free(bytes);
    ecs_world_free(a);
    ecs_world_free(b);
    CHECK_EQ_INT(sn_ctor_n, sn_dtor_n);
}

/* Every truncation, and thousands of byte changes (resealed, so the reader's
   own checks see them): an error with the world untouched, or a snapshot
   that restores to a consistent world. */
TEST(snapshot_file_robust) {
    ecs_world *a, *b;
    sn_ids ia, ib;
    REQUIRE(sn_two_builds(&a, &b, &ia, &ib));
    sn_populate(a, &ia, 7, 40);
    sn_populate(b, &ib, 8, 10);
    size_t n;
    unsigned char *bytes = sn_file(a, &n);
    REQUIRE(bytes);
    CHECK(test_file_checksum(bytes, n - 8) == test_le64(bytes + n - 8));
    uint64_t hb = sn_state(b);
    int refused = 0, accepted = 0;
    for (size_t len = 0; len < n; len++) {
        ecs_snapshot *s = sn_read(b, bytes, len);
        CHECK(s == NULL);
        ecs_snapshot_free(s);
    }
    CHECK_EQ_INT(sn_state(b), hb);
    unsigned char *mut = (unsigned char *)malloc(n);
    REQUIRE(mut);
    unsigned long long seed = test_g.seed_given ? test_g.seed : 77;
    long rounds = test_scaled(4000, 400);
    for (long k = 0; k < rounds; k++) {
        memcpy(mut, bytes, n);
        int flips = 1 + (int)test_below(&seed, 3);
        for (int f = 0; f < flips; f++) {
            size_t at = 8 + test_below(&seed, (unsigned)(n - 16));
            mut[at] ^= test_below(&seed, 2) ? (unsigned char)(1 + test_below(&seed, 255)) : (unsigned char)(1u << test_below(&seed, 8));
        }
        if (!memcmp(mut, bytes, n)) continue;   /* two changes undid each other */
        bool sealed = k % 4 != 0;   /* a quarter keep the old checksum: caught by it */
        if (sealed) test_file_reseal(mut, n);
        ecs_snapshot *s = sn_read(b, mut, n);
        if (!s) {
            refused++;
            CHECKF(sn_state(b) == hb, "round %ld: a refused file changed the world", k);
            CHECKF(!sealed || strstr(ecs_last_error(b), "ecs_snapshot_read") != NULL, "round %ld: %s", k,
                   ecs_last_error(b));
            continue;
        }
        accepted++;
        CHECKF(sealed, "round %ld: a damaged checksum was accepted", k);
        CHECK_EQ_INT(ecs_snapshot_restore(b, s), ECS_OK);
        ecs_snapshot_free(s);
        /* consistent: every live entity answers, queries agree with counts */
        ecs_query *all = ecs_query_new(b, &(ecs_query_desc){.terms = {{0}}});
        size_t seen = 0;
        for (ecs_iter it = ecs_query_iter(b, all); ecs_query_next(&it);)
            for (int i = 0; i < it.count; i++) {
                seen++;
                CHECK(ecs_is_alive(b, it.entities[i]));
                ecs_entity p = ecs_get_parent(b, it.entities[i]);
                CHECK(p == 0 || ecs_is_alive(b, p));
            }
        CHECK_EQ_INT(seen, ecs_count(b));
        ecs_query_free(all);
        ecs_entity e = ecs_create(b);   /* and it keeps working */
        CHECK_EQ_INT(ecs_add(b, e, ib.pos), ECS_OK);
        ecs_destroy(b, ecs_create(b));
        hb = sn_state(b);
    }
    CHECK(refused > rounds / 2);
    printf("snapshot_file_robust: %zu-byte file, %zu truncations refused; %ld changed files: %d refused, "
           "%d accepted and restored consistently\n", n, n, rounds, refused, accepted);
    free(mut);
    free(bytes);
    ecs_world_free(a);
    ecs_world_free(b);
    CHECK_EQ_INT(sn_ctor_n, sn_dtor_n);
}

/* ---- allocation failures: each request of take, restore, write and read
   fails once; the call reports it and the world is unchanged */
typedef struct sn_alloc { long requests, fail_at, live; } sn_alloc;
static void *sn_realloc(void *p, size_t n, void *user) {
    sn_alloc *a = (sn_alloc *)user;
    size_t *h = p ? (size_t *)p - 2 : NULL;
    if (!n) { if (h) { a->live--; free(h); } return NULL; }
    if (++a->requests == a->fail_at) return NULL;
    size_t *m = (size_t *)realloc(h, n + 2 * sizeof(size_t));
    if (!m) return NULL;
    if (!h) a->live++;
    return m + 2;
}
TEST(snapshot_out_of_memory_sweep) {
    sn_ctor_n = sn_dtor_n = 0;
    long swept = 0;
    for (int op = 0; op < 4; op++) {
        for (long fail = 1;; fail++) {
            sn_alloc al = {0, 0, 0};
            ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .realloc_fn = sn_realloc, .alloc_user = &al});
            REQUIRE(w);
            sn_ids id;
            sn_register(w, &id, false);
            sn_populate(w, &id, 9, 60);
            ecs_snapshot *s = op ? ecs_snapshot_take(w) : NULL;
            REQUIRE(op == 0 || s);
            unsigned char *bytes = NULL;
            size_t n = 0;
            if (op == 3) {
                bytes = sn_file(w, &n);
                REQUIRE(bytes);
            }
            if (op == 1) sn_populate(w, &id, 10, 30);   /* a restore with work to do */
            uint64_t h0 = sn_state(w);
            al.requests = 0;
            al.fail_at = fail;
            ecs_result r = ECS_OK;
            ecs_snapshot *got = NULL;
            FILE *f = op >= 2 ? tmpfile() : NULL;
            if (op == 0) r = (got = ecs_snapshot_take(w)) ? ECS_OK : ECS_ERR_NOMEM;
            if (op == 1) r = ecs_snapshot_restore(w, s);
            if (op == 2) r = ecs_snapshot_write(s, f);
            if (op == 3) {
                fwrite(bytes, 1, n, f);
                rewind(f);
                r = (got = ecs_snapshot_read(w, f)) ? ECS_OK : ECS_ERR_NOMEM;
            }
            bool failed = al.requests >= fail;
            al.fail_at = 0;
            if (failed) {
                swept++;
                CHECKF(r != ECS_OK || op == 2, "op %d, failing request %ld: reported success", op, fail);
                CHECKF(op == 2 || strstr(ecs_last_error(w), "out of memory"), "op %d: %s", op, ecs_last_error(w));
                CHECKF(sn_state(w) == h0, "op %d, failing request %ld: the world changed", op, fail);
                if (op == 1) CHECK_EQ_INT(ecs_snapshot_restore(w, s), ECS_OK);   /* and works when retried */
            } else {
                CHECK_EQ_INT(r, ECS_OK);
            }
            if (f) fclose(f);
            ecs_snapshot_free(got);
            ecs_snapshot_free(s);
            free(bytes);
            ecs_world_free(w);
            CHECKF(al.live == 0, "op %d, failing request %ld: %ld blocks leaked", op, fail, al.live);
            if (!failed) break;
        }
    }
    CHECK(swept > 20);
    CHECK_EQ_INT(sn_ctor_n, sn_dtor_n);
}

/* Rollback to a different future: tables the abandoned branch made must not
   exist in the replayed one (they would change the table order, so query
   order, commands and handles). Each world runs steps with a seed; world a
   also ran a wrong branch between the take and the restore. */
static void sn_branch(ecs_world *w, const ecs_id *ids, unsigned long long seed, int steps) {
    for (int k = 0; k < steps; k++) {
        unsigned r = (unsigned)test_rand(&seed);
        ecs_id set[3] = {ids[r % 6], ids[(r >> 3) % 6], ids[(r >> 6) % 6]};
        if (r & 0x1000) CHECK_EQ_INT(ecs_create_many(w, (r >> 9) % 3, set, 1 + (r >> 11) % 3, NULL), ECS_OK);
        ecs_entity e = ecs_create(w);
        CHECK_EQ_INT(ecs_add(w, e, set[0]), ECS_OK);
        if (r & 0x2000) CHECK_EQ_INT(ecs_add(w, e, set[1]), ECS_OK);
        if (r & 0x4000) CHECK_EQ_INT(ecs_remove(w, e, set[0]), ECS_OK);
    }
}
static uint64_t sn_visit_order(ecs_world *w) {   /* every entity in query order */
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    uint64_t h = 1469598103934665603ull;
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
        for (int i = 0; i < it.count; i++) h = (h ^ it.entities[i]) * 1099511628211ull;
    ecs_query_free(q);
    return h;
}
TEST(snapshot_rollback_other_branch) {
    for (int round = 0; round < 20; round++) {
        ecs_world *w[2];
        ecs_id ids[2][6];
        ecs_query *old[2];
        for (int k = 0; k < 2; k++) {
            w[k] = ecs_world_new(&(ecs_world_desc){.threads = 1});
            REQUIRE(w[k]);
            for (int i = 0; i < 6; i++) {
                char name[8] = {'C', (char)('0' + i), 0};
                ids[k][i] = ecs_component(w[k], name, i % 3 ? 4 : 0, 0);
            }
            old[k] = ecs_query_new(w[k], &(ecs_query_desc){.terms = {{ids[k][1], ECS_READ, ECS_AND}}});   /* made before */
            sn_branch(w[k], ids[k], 100 + (unsigned long long)round, 5);
        }
        ecs_snapshot *s = ecs_snapshot_take(w[0]);
        REQUIRE(s);
        sn_branch(w[0], ids[0], 900 + (unsigned long long)round, 12);   /* the wrong branch */
        CHECK_EQ_INT(ecs_snapshot_restore(w[0], s), ECS_OK);
        for (int step = 0; step < 3; step++) {   /* the right one, on both */
            for (int k = 0; k < 2; k++) sn_branch(w[k], ids[k], 500 + (unsigned long long)(round * 7 + step), 6);
            CHECKF(ecs_world_hash(w[0]) == ecs_world_hash(w[1]), "round %d, step %d: hashes differ", round, step);
            CHECKF(sn_visit_order(w[0]) == sn_visit_order(w[1]), "round %d, step %d: queries visit entities "
                   "in another order", round, step);
            CHECKF(ecs_query_count(w[0], old[0]) == ecs_query_count(w[1], old[1]), "round %d", round);
            uint64_t h[2];
            for (int k = 0; k < 2; k++) {   /* an old query's order too */
                h[k] = 1469598103934665603ull;
                for (ecs_iter it = ecs_query_iter(w[k], old[k]); ecs_query_next(&it);)
                    for (int i = 0; i < it.count; i++) h[k] = (h[k] ^ it.entities[i]) * 1099511628211ull;
            }
            CHECKF(h[0] == h[1], "round %d, step %d: a query made before the take visits in another order", round, step);
        }
        ecs_snapshot *again = ecs_snapshot_take(w[0]);   /* and a second rollback still agrees */
        sn_branch(w[0], ids[0], 77, 9);
        CHECK_EQ_INT(ecs_snapshot_restore(w[0], again), ECS_OK);
        sn_branch(w[0], ids[0], 78, 9);
        sn_branch(w[1], ids[1], 78, 9);
        CHECKF(ecs_world_hash(w[0]) == ecs_world_hash(w[1]), "round %d: second rollback", round);
        CHECKF(sn_visit_order(w[0]) == sn_visit_order(w[1]), "round %d: second rollback order", round);
        ecs_snapshot_free(again);
        ecs_snapshot_free(s);
        for (int k = 0; k < 2; k++) { ecs_query_free(old[k]); ecs_world_free(w[k]); }
    }
}

void suite_snapshot(void) {
    RUN(snapshot_rollback_other_branch);
    RUN(snapshot_out_of_memory_sweep);
    RUN(snapshot_restore_exact);
    RUN(snapshot_restore_free_slots);
    RUN(snapshot_refusals);
    RUN(snapshot_entity_ids);
    RUN(snapshot_file_other_build);
    RUN(snapshot_file_robust);
}
