/* ecs.h - v0.1 - public domain-style MIT - archetype ECS with a validated system graph

   An Entity-Component-System in one C11 header: entities grouped in archetype
   tables by their exact component set (one contiguous, 64-byte aligned column
   per component), cached add/remove transition edges, cached queries, and
   deterministic deferred commands.

   USAGE
       In exactly one .c file:
           #define ECS_IMPLEMENTATION
           #include "ecs.h"
       Everywhere else just #include "ecs.h".

   CONTENTS
       >>config     compile-time options
       >>api        public declarations (handles, world, components, entities,
                    queries, deferred commands)
       >>impl       the implementation, in data-flow order:
                    >>platform >>alloc >>containers >>ids >>entity >>table
                    >>query >>commands >>world
       >>license    at the very bottom

   CONFIG MACROS (define before including the implementation)
       ECS_STATIC            make every function static (private embedding)
       ECS_ASSERT(c)         internal invariant check; default assert()
       ECS_GENERATION_BITS   bits of an entity handle's generation, 1..31
                             (default 31); a slot whose generation would wrap
                             is retired instead of reused
       ECS_REALLOC(p, n)     the default allocator when the world desc gives
       ECS_FREE(p)           none; default realloc/free

   QUICK START
       #define ECS_IMPLEMENTATION
       #include "ecs.h"
       #include <stdio.h>

       typedef struct { float x, y; } Position;
       typedef struct { float x, y; } Velocity;

       int main(void) {
           ecs_world *w = ecs_world_new(NULL);
           ecs_id pos = ECS_COMPONENT(w, Position);
           ecs_id vel = ECS_COMPONENT(w, Velocity);
           for (int i = 0; i < 3; i++) {
               ecs_entity e = ecs_create(w);
               ecs_set(w, e, pos, &(Position){0, 0});
               ecs_set(w, e, vel, &(Velocity){1, (float)i});
           }
           ecs_query *q = ecs_query_new(w, &(ecs_query_desc){
               .terms = {{pos, ECS_WRITE, ECS_AND}, {vel, ECS_READ, ECS_AND}}});
           for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
               Position *p = ECS_FIELD(&it, Position, 0);
               const Velocity *v = ECS_FIELD(&it, Velocity, 1);
               for (int i = 0; i < it.count; i++) {
                   p[i].x += v[i].x; p[i].y += v[i].y;
                   printf("%g %g\n", p[i].x, p[i].y);
               }
           }
           ecs_query_free(q);
           ecs_world_free(w);
       }

   ERRORS
       Functions that can fail return an ecs_result (or 0 / NULL for handles
       and pointers) and leave the world unchanged; ecs_last_error(w) then
       holds one readable line. These checks stay on with -DNDEBUG.
       ECS_ASSERT guards only the library's own invariants.
*/
#ifndef ECS_H
#define ECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- >>config: compile-time options -------------------------------------- */
#ifndef ECS_API
#  ifdef ECS_STATIC
#    define ECS_API static
#  else
#    define ECS_API extern
#  endif
#endif

#ifndef ECS_GENERATION_BITS
#  define ECS_GENERATION_BITS 31
#endif
#if ECS_GENERATION_BITS < 1 || ECS_GENERATION_BITS > 31
#  error "ECS_GENERATION_BITS must be between 1 and 31"
#endif

#ifdef __cplusplus
#  define ECS__ALIGNOF(T) alignof(T)
extern "C" {
#else
#  define ECS__ALIGNOF(T) _Alignof(T)
#endif

/* ---- >>api: handles and results ------------------------------------------ */
typedef struct ecs_world ecs_world;
typedef uint64_t ecs_entity;  /* 0 is never live; low 32 bits index, then the
                                 generation, so a dead handle stays dead */
typedef uint32_t ecs_id;      /* a component, tag (size 0) or resource; 0 = none */
typedef uint32_t ecs_system;  /* 0 = none */
typedef uint32_t ecs_stage;   /* stage 0 always exists and runs first */

typedef enum ecs_result {
    ECS_OK = 0,
    ECS_ERR_ARG,           /* bad argument: unknown id, NULL where a value is needed */
    ECS_ERR_STALE,         /* the entity handle is dead (destroyed, or never existed) */
    ECS_ERR_NOMEM,         /* an allocation failed; the world is unchanged */
    ECS_ERR_INVALID_GRAPH, /* the system graph has problems: see ecs_validate */
    ECS_ERR_BUSY           /* not allowed now (a structural change on a table a
                              query is iterating, or while systems run) */
} ecs_result;

/* One line describing the most recent failure on this world ("" if none).
   Valid until the next failing call. */
ECS_API const char *ecs_last_error(const ecs_world *w);
/* A static name for a result code, e.g. "ECS_ERR_STALE". */
ECS_API const char *ecs_result_str(ecs_result r);

/* ---- >>api: world -------------------------------------------------------- */
typedef enum ecs_order {
    ECS_ORDER_INSERTION = 0,  /* unordered conflicting systems run in
                                 registration order (an edge is inferred) */
    ECS_ORDER_EXPLICIT,       /* only declared order; an unordered conflict is a RACE */
    ECS_ORDER_WRITERS_FIRST   /* a writer runs before readers of the same data;
                                 two unordered writers are a RACE */
} ecs_order;

typedef struct ecs_world_desc {
    int threads;          /* threads that run systems, the caller included;
                             0 = all hardware threads; 1 = the calling thread only */
    ecs_order order;
    void *(*realloc_fn)(void *ptr, size_t size, void *user); /* realloc-style:
                             size 0 frees (and returns NULL); NULL = libc */
    void *alloc_user;     /* passed to realloc_fn */
} ecs_world_desc;

/* A new world; desc may be NULL (all defaults). NULL if allocation fails or
   desc is out of range (threads < 0, unknown order). */
ECS_API ecs_world *ecs_world_new(const ecs_world_desc *desc);
/* Frees the world and everything it owns, queries and command buffers included. */
ECS_API void ecs_world_free(ecs_world *w);

/* ---- >>api: components, tags, resources ---------------------------------- */
/* Registers a component (size > 0) or tag (size 0) by name. The same name with
   the same size returns the same id; with another size, or a name already
   used by a resource, it returns 0 (ECS_ERR_ARG). align 0 picks the natural
   alignment for size; align must be a power of two <= 64. */
ECS_API ecs_id ecs_component(ecs_world *w, const char *name, size_t size, size_t align);
#define ECS_COMPONENT(w, T) ecs_component((w), #T, sizeof(T), ECS__ALIGNOF(T))
#define ECS_TAG(w, T) ecs_component((w), #T, 0, 0)
/* The id registered under name, or 0. */
ECS_API ecs_id ecs_lookup(const ecs_world *w, const char *name);
/* The name of an id, or NULL if the id is unknown. */
ECS_API const char *ecs_id_name(const ecs_world *w, ecs_id id);
/* The size of a component or resource (0 for a tag or an unknown id). */
ECS_API size_t ecs_id_size(const ecs_world *w, ecs_id id);
/* Number of ids registered so far; valid ids are 1 .. ecs_id_count(w). */
ECS_API ecs_id ecs_id_count(const ecs_world *w);

/* Registers a resource: one instance per world, not attached to entities.
   init (may be NULL: zeroed) is copied in on first registration only; the
   same name again returns the same id if the size matches, else 0. */
ECS_API ecs_id ecs_resource(ecs_world *w, const char *name, size_t size, size_t align,
                            const void *init);
/* The resource's storage, or NULL (ECS_ERR_ARG) if id is not a resource. */
ECS_API void *ecs_resource_get(ecs_world *w, ecs_id resource);

/* ---- >>api: entities ----------------------------------------------------- */
/* Structural calls (create, destroy, add, remove, set of a missing component)
   return ECS_ERR_BUSY when they would touch a table a query is iterating;
   inside ecs_defer_begin/end they are recorded and applied at ecs_defer_end. */

/* A new entity with no components; 0 on failure. In defer mode the handle is
   pending: usable in later calls of the same defer block, live after it. */
ECS_API ecs_entity ecs_create(ecs_world *w);
/* n entities holding ids (any order, duplicates ignored), values zeroed; their
   handles go to out (may be NULL). All or nothing. */
ECS_API ecs_result ecs_create_many(ecs_world *w, size_t n, const ecs_id *ids, size_t id_count,
                                   ecs_entity *out);
ECS_API ecs_result ecs_destroy(ecs_world *w, ecs_entity e);
ECS_API bool       ecs_is_alive(const ecs_world *w, ecs_entity e);
/* Adding an id the entity has, or removing one it lacks, is ECS_OK and no change. */
ECS_API ecs_result ecs_add(ecs_world *w, ecs_entity e, ecs_id id);     /* zero value */
ECS_API ecs_result ecs_remove(ecs_world *w, ecs_entity e, ecs_id id);
/* Copies value into e's component, adding it if missing. value may be NULL
   only for a tag. */
ECS_API ecs_result ecs_set(ecs_world *w, ecs_entity e, ecs_id id, const void *value);
ECS_API bool       ecs_has(const ecs_world *w, ecs_entity e, ecs_id id);
/* The component's value; NULL if e is dead, lacks it, or id is a tag. The
   pointer is valid until the next structural change to e's table. */
ECS_API const void *ecs_get(const ecs_world *w, ecs_entity e, ecs_id id);
/* As ecs_get, writable. Does not add a missing component. */
ECS_API void      *ecs_get_mut(ecs_world *w, ecs_entity e, ecs_id id);
/* Live entities (pending ones not included). */
ECS_API size_t     ecs_count(const ecs_world *w);

/* ---- >>api: queries and iteration ---------------------------------------- */
#define ECS_MAX_TERMS 16
typedef enum ecs_access { ECS_READ = 1, ECS_WRITE = 2 } ecs_access;  /* WRITE implies read */
typedef enum ecs_oper   { ECS_AND = 0, ECS_NOT, ECS_OPTIONAL } ecs_oper;
typedef struct ecs_term { ecs_id id; ecs_access access; ecs_oper oper; } ecs_term;
                        /* access 0 means ECS_READ; a term list ends at the first id 0 */

typedef struct ecs_query_desc { ecs_term terms[ECS_MAX_TERMS]; } ecs_query_desc;
typedef struct ecs_query ecs_query;
typedef struct ecs_commands ecs_commands;

typedef struct ecs_iter {
    ecs_world *world;
    ecs_system system;            /* 0 outside systems */
    int count;                    /* rows in this batch */
    const ecs_entity *entities;   /* count handles */
    float dt;                     /* the value passed to ecs_progress */
    void *ctx;                    /* the system's ctx */
    ecs_commands *commands;       /* deferred structural changes; NULL for a
                                     plain query outside defer mode */
    int thread;                   /* 0 .. threads-1; 0 = the ecs_progress caller */
    /* private state follows; do not touch */
    struct {
        void *fields[ECS_MAX_TERMS];
        ecs_query *query;
        void *table;              /* the table this batch locks, or NULL */
        uint32_t cursor;          /* next entry of the query's table list */
    } priv;
} ecs_iter;

/* Column of term `term` (0-based index into desc.terms) for this batch:
   `count` contiguous values; NULL for a NOT term, an OPTIONAL term the batch
   lacks, a tag, or an index past the last term. */
ECS_API void *ecs_field(const ecs_iter *it, int term);
#define ECS_FIELD(it, T, i) ((T *)ecs_field((it), (i)))

/* A cached query: it keeps the list of matching tables and is told about new
   tables as they appear. NULL (ECS_ERR_ARG / ECS_ERR_NOMEM) on a bad term
   (unknown id, a resource, bad oper/access) or allocation failure. A query
   with no terms matches every entity. */
ECS_API ecs_query *ecs_query_new(ecs_world *w, const ecs_query_desc *desc);
/* Starts an iteration. Batches come one table at a time, in a deterministic
   order (table creation order, then row order). While a batch is out, its
   table is locked against structural changes (ECS_ERR_BUSY); use
   ecs_defer_begin/end to change structure while iterating. */
ECS_API ecs_iter   ecs_query_iter(ecs_world *w, ecs_query *q);
ECS_API bool       ecs_query_next(ecs_iter *it);   /* false when done */
/* Releases the lock of an iteration left before ecs_query_next returned false. */
ECS_API void       ecs_iter_fini(ecs_iter *it);
ECS_API size_t     ecs_query_count(ecs_world *w, ecs_query *q);  /* matching entities */
ECS_API void       ecs_query_free(ecs_query *q);

/* ---- >>api: deferred commands -------------------------------------------- */
/* A command buffer records structural changes and applies them later, in
   recording order. ecs_cmd_create returns a pending handle, usable in later
   commands of the same buffer and turned into a live entity at apply time.
   A command whose target is dead when it applies is dropped and counted
   (ecs_commands_dropped), never an error that stops the rest. Recording
   returns ECS_ERR_ARG for an unknown id, a NULL value for a component, or a
   pending handle of another buffer; ECS_ERR_NOMEM if the buffer cannot grow. */
ECS_API ecs_entity ecs_cmd_create(ecs_commands *c);   /* 0 on failure */
ECS_API ecs_result ecs_cmd_destroy(ecs_commands *c, ecs_entity e);
ECS_API ecs_result ecs_cmd_add(ecs_commands *c, ecs_entity e, ecs_id id);
ECS_API ecs_result ecs_cmd_remove(ecs_commands *c, ecs_entity e, ecs_id id);
ECS_API ecs_result ecs_cmd_set(ecs_commands *c, ecs_entity e, ecs_id id, const void *value);

/* A buffer of your own, for recording outside systems. */
ECS_API ecs_commands *ecs_commands_new(ecs_world *w);
/* Applies and clears c. If a command fails for lack of memory (or hits a
   locked table: ECS_ERR_BUSY), applying stops there and the rest stays in the
   buffer; calling again resumes. ECS_ERR_BUSY in defer mode. */
ECS_API ecs_result ecs_commands_apply(ecs_world *w, ecs_commands *c);
ECS_API void ecs_commands_free(ecs_commands *c);
/* Commands dropped so far because their target was dead. */
ECS_API size_t ecs_commands_dropped(const ecs_world *w);

/* Defer mode: between begin and end, ecs_create/destroy/add/remove/set are
   recorded instead of applied (their arguments are still checked), so a
   query loop may change structure freely. Blocks nest; the outermost end
   applies everything in call order, with ecs_commands_apply's rules. */
ECS_API ecs_result ecs_defer_begin(ecs_world *w);
ECS_API ecs_result ecs_defer_end(ecs_world *w);

#ifdef __cplusplus
}
#endif
#endif /* ECS_H */

/* ========================================================================== */
/* ---- >>impl: implementation ----------------------------------------------- */
#ifdef ECS_IMPLEMENTATION
#ifndef ECS__IMPLEMENTED
#define ECS__IMPLEMENTED

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifndef ECS_ASSERT
#  include <assert.h>
#  define ECS_ASSERT(c) assert(c)
#endif
#if !defined(ECS_REALLOC) || !defined(ECS_FREE)
#  define ECS_REALLOC(p, n) realloc((p), (n))
#  define ECS_FREE(p) free(p)
#endif

/* ---- >>platform: handles and small helpers -------------------------------- */
#define ECS__GEN_MAX     ((uint32_t)((1u << ECS_GENERATION_BITS) - 1u))
#define ECS__NONE        UINT32_MAX           /* no slot / no table */
#define ECS__PENDING     (1ull << 63)          /* marks a command buffer's pending handle */
#define ECS__MAX_ROWS    ((uint32_t)INT32_MAX) /* rows per table: it->count is an int */

static uint32_t   ecs__index(ecs_entity e) { return (uint32_t)e; }
static uint32_t   ecs__gen(ecs_entity e) { return (uint32_t)(e >> 32); }
static ecs_entity ecs__handle(uint32_t index, uint32_t gen) { return ((uint64_t)gen << 32) | index; }

static uint64_t ecs__hash64(uint64_t x) {   /* murmur3 finalizer */
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}
static uint64_t ecs__hash_bytes(const void *p, size_t n) {   /* FNV-1a, never 0 */
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* ---- >>alloc: the one allocation path, and errors ------------------------- */
static void *ecs__libc_realloc(void *p, size_t n, void *user) {
    (void)user;
    if (n == 0) { ECS_FREE(p); return NULL; }
    return ECS_REALLOC(p, n);
}

struct ecs_world;
static void *ecs__alloc(struct ecs_world *w, size_t n);
static void *ecs__realloc(struct ecs_world *w, void *p, size_t n);
static void  ecs__free(struct ecs_world *w, void *p);

/* ---- >>containers: growable arrays and an open-addressing hash map -------- */

/* Grows the array *vec (elements of elem bytes, capacity *cap) to hold need
   elements. On failure nothing changes. vec is a pointer to the array pointer;
   the ECS__RESERVE macro supplies it with the element size. */
static bool ecs__reserve(struct ecs_world *w, void *vec, uint32_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t n = *cap ? (size_t)*cap : 8;
    while (n < need) n *= 2;
    if (n > UINT32_MAX || n > SIZE_MAX / elem) return false;
    void *old, *p;
    memcpy(&old, vec, sizeof old);
    p = ecs__realloc(w, old, n * elem);
    if (!p) return false;
    memcpy(vec, &p, sizeof p);
    *cap = (uint32_t)n;
    return true;
}
#define ECS__RESERVE(w, vec, cap, need) ecs__reserve((w), &(vec), &(cap), (need), sizeof *(vec))

/* uint64 -> uint64 map, linear probing, load <= 1/2, key 0 = empty. Several
   values may share a key (names and id sets are stored under their hash);
   ecs__map_next walks them. Nothing is ever removed. */
typedef struct ecs__map { uint64_t *keys, *vals; uint32_t cap, count; } ecs__map;

static void ecs__map_put(ecs__map *m, uint64_t key, uint64_t val) {   /* after reserve */
    uint32_t mask = m->cap - 1, i = (uint32_t)ecs__hash64(key) & mask;
    while (m->keys[i]) i = (i + 1) & mask;
    m->keys[i] = key; m->vals[i] = val; m->count++;
}
static bool ecs__map_reserve(struct ecs_world *w, ecs__map *m, uint32_t extra) {
    size_t need = ((size_t)m->count + extra) * 2;
    if (need <= m->cap) return true;
    size_t cap = m->cap ? (size_t)m->cap : 8;
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX / 2) return false;
    uint64_t *mem = (uint64_t *)ecs__alloc(w, cap * 2 * sizeof(uint64_t));
    if (!mem) return false;
    memset(mem, 0, cap * sizeof(uint64_t));
    ecs__map old = *m;
    m->keys = mem; m->vals = mem + cap; m->cap = (uint32_t)cap; m->count = 0;
    for (uint32_t i = 0; i < old.cap; i++)
        if (old.keys[i]) ecs__map_put(m, old.keys[i], old.vals[i]);
    ecs__free(w, old.keys);
    return true;
}
/* The next value stored under key; *step starts at 0. */
static uint64_t *ecs__map_next(const ecs__map *m, uint64_t key, uint32_t *step) {
    if (!m->cap) return NULL;
    uint32_t mask = m->cap - 1, h = (uint32_t)ecs__hash64(key);
    for (uint32_t s = *step; s < m->cap; s++) {
        uint32_t i = (h + s) & mask;
        if (!m->keys[i]) return NULL;
        if (m->keys[i] == key) { *step = s + 1; return &m->vals[i]; }
    }
    return NULL;
}
static uint64_t *ecs__map_get(const ecs__map *m, uint64_t key) {
    uint32_t step = 0;
    return ecs__map_next(m, key, &step);
}
static void ecs__map_fini(struct ecs_world *w, ecs__map *m) { ecs__free(w, m->keys); }

/* ---- >>world: the world's state (functions that need all of it come last) - */
typedef struct ecs__idinfo {
    char *name;
    uint32_t size, align;
    bool resource;
    void *raw, *data;        /* a resource's storage (raw is the allocation) */
} ecs__idinfo;

/* An entity slot. Free slots chain through row; table == ECS__NONE means the
   slot holds no live entity (free, or retired when its generation ran out). */
typedef struct ecs__record { uint32_t table, row, gen; } ecs__record;

typedef struct ecs__column {
    unsigned char *data;     /* 64-byte aligned, inside the table's block */
    uint32_t size;
    ecs_id id;
} ecs__column;

/* An archetype table: every entity with exactly this id set. Columns hold the
   sized components in id order; tags are in ids but have no column. */
typedef struct ecs__table {
    uint32_t index;          /* in world->tables */
    uint32_t id_count, column_count;
    ecs_id *ids;             /* sorted */
    int32_t *column_of;      /* per ids[i]: its column, or -1 for a tag */
    ecs__column *columns;
    ecs_entity *entities;
    void *block;             /* one allocation holds the entity column and all columns */
    uint32_t count, cap;
    uint32_t lock;           /* iterators inside: structural changes are ECS_ERR_BUSY */
    ecs__map edges;          /* (id << 1 | removing) -> table reached: seed 004's cached edges */
} ecs__table;

typedef struct ecs__match {  /* one table a query matches */
    ecs__table *table;
    int16_t column[ECS_MAX_TERMS];   /* per term, or -1: the field is NULL */
} ecs__match;

struct ecs_query {
    ecs_world *world;
    ecs_term terms[ECS_MAX_TERMS];
    int term_count;
    ecs__match *matches;     /* in table creation order */
    uint32_t match_count, match_cap;
    uint32_t slot;           /* in world->queries */
};

enum { ECS__CMD_CREATE, ECS__CMD_DESTROY, ECS__CMD_ADD, ECS__CMD_REMOVE, ECS__CMD_SET };
typedef struct ecs__cmd {
    uint32_t op;
    ecs_id id;
    ecs_entity e;            /* live or pending handle */
    uint32_t value;          /* ECS__CMD_SET: offset of the value in data */
} ecs__cmd;

struct ecs_commands {
    ecs_world *world;
    ecs__cmd *cmds;
    uint32_t count, cap;
    unsigned char *data;     /* values of set commands */
    uint32_t data_size, data_cap;
    ecs_entity *created;     /* per pending index: the live handle, once applied */
    uint32_t created_count, created_cap;
    uint32_t applied;        /* commands done; apply resumes here after a failure */
    uint32_t serial;         /* stamped into pending handles; renewed when cleared */
    uint32_t slot;           /* in world->buffers, or ECS__NONE for the defer buffer */
};

struct ecs_world {
    void *(*realloc_fn)(void *, size_t, void *);
    void *alloc_user;
    int threads;
    ecs_order order;
    char error[256];

    ecs__idinfo *ids;        /* indexed by id; ids[0] unused */
    uint32_t id_count, id_cap;
    ecs__map id_names;       /* name hash -> id */

    ecs__record *records;
    uint32_t record_count, record_cap;
    uint32_t free_head, free_count;
    uint32_t alive;

    ecs__table **tables;     /* tables[0] is the empty set */
    uint32_t table_count, table_cap;
    ecs__map table_sets;     /* id set hash -> table index */
    ecs_id *scratch;         /* id set under construction */
    uint32_t scratch_cap;

    ecs_query **queries;
    uint32_t query_count, query_cap;

    ecs_commands **buffers;  /* user command buffers, freed with the world */
    uint32_t buffer_count, buffer_cap;
    ecs_commands *defer;     /* defer mode's buffer (lazily made) */
    int defer_depth;
    uint32_t next_serial;
    size_t dropped;
};

static void *ecs__alloc(ecs_world *w, size_t n) { return w->realloc_fn(NULL, n, w->alloc_user); }
static void *ecs__realloc(ecs_world *w, void *p, size_t n) { return w->realloc_fn(p, n, w->alloc_user); }
static void  ecs__free(ecs_world *w, void *p) { if (p) w->realloc_fn(p, 0, w->alloc_user); }

/* Records a failure: the result code plus one line for ecs_last_error. The
   message buffer is the only state a const call may change. */
static ecs_result ecs__fail(const ecs_world *cw, ecs_result r, const char *fmt, ...) {
    ecs_world *w = (ecs_world *)cw;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
    return r;
}
#define ECS__OOM(w, fn) ecs__fail((w), ECS_ERR_NOMEM, "%s: out of memory", (fn))

ECS_API const char *ecs_last_error(const ecs_world *w) { return w ? w->error : "world is NULL"; }

ECS_API const char *ecs_result_str(ecs_result r) {
    switch (r) {
    case ECS_OK: return "ECS_OK";
    case ECS_ERR_ARG: return "ECS_ERR_ARG";
    case ECS_ERR_STALE: return "ECS_ERR_STALE";
    case ECS_ERR_NOMEM: return "ECS_ERR_NOMEM";
    case ECS_ERR_INVALID_GRAPH: return "ECS_ERR_INVALID_GRAPH";
    case ECS_ERR_BUSY: return "ECS_ERR_BUSY";
    }
    return "unknown ecs_result";
}

/* ---- >>ids: components, tags, resources ----------------------------------- */
static bool ecs__id_valid(const ecs_world *w, ecs_id id) { return id >= 1 && id <= w->id_count; }

/* ECS_OK if id can sit on an entity (a component or tag), else ECS_ERR_ARG
   with a message naming the calling function. */
static ecs_result ecs__check_component(const ecs_world *w, const char *fn, ecs_id id) {
    if (!ecs__id_valid(w, id))
        return ecs__fail(w, ECS_ERR_ARG, "%s: id %u is not registered", fn, (unsigned)id);
    if (w->ids[id].resource)
        return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is a resource, not a component",
                         fn, w->ids[id].name);
    return ECS_OK;
}

static ecs_id ecs__id_find(const ecs_world *w, const char *name) {
    uint64_t h = ecs__hash_bytes(name, strlen(name)), *v;
    uint32_t step = 0;
    while ((v = ecs__map_next(&w->id_names, h, &step)))
        if (!strcmp(w->ids[*v].name, name)) return (ecs_id)*v;
    return 0;
}

static ecs_id ecs__register(ecs_world *w, const char *fn, const char *name, size_t size,
                            size_t align, bool resource, const void *init) {
    if (!w) return 0;
    if (!name || !*name) { ecs__fail(w, ECS_ERR_ARG, "%s: name is NULL or empty", fn); return 0; }
    if (size > INT32_MAX) { ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is too large", fn, name); return 0; }
    if (resource && size == 0) {
        ecs__fail(w, ECS_ERR_ARG, "%s: resource \"%s\" has size 0", fn, name);
        return 0;
    }
    if (size == 0) align = 0;
    else if (align == 0) for (align = 1; align < 16 && size % (align * 2) == 0; align *= 2) {}
    if (size && ((align & (align - 1)) || align > 64 || size % align)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" has alignment %zu (must be a power of two "
                  "<= 64 dividing its size %zu)", fn, name, align, size);
        return 0;
    }
    ecs_id id = ecs__id_find(w, name);
    if (id) {
        const ecs__idinfo *in = &w->ids[id];
        if (in->resource == resource && in->size == size && in->align == align) return id;
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is already registered as a %s of size %u "
                  "(now asked for a %s of size %zu)", fn, name,
                  in->resource ? "resource" : "component", (unsigned)in->size,
                  resource ? "resource" : "component", size);
        return 0;
    }
    size_t len = strlen(name) + 1;
    char *copy = NULL;
    void *raw = NULL;
    if (!ECS__RESERVE(w, w->ids, w->id_cap, (size_t)w->id_count + 2) ||
        !ecs__map_reserve(w, &w->id_names, 1) ||
        !(copy = (char *)ecs__alloc(w, len)) ||
        (resource && !(raw = ecs__alloc(w, size + align - 1)))) {
        ecs__free(w, copy);
        ECS__OOM(w, fn);
        return 0;
    }
    memcpy(copy, name, len);
    id = ++w->id_count;
    ecs__idinfo *in = &w->ids[id];
    memset(in, 0, sizeof *in);
    in->name = copy; in->size = (uint32_t)size; in->align = (uint32_t)align;
    in->resource = resource;
    if (resource) {
        in->raw = raw;
        in->data = (void *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
        if (init) memcpy(in->data, init, size); else memset(in->data, 0, size);
    }
    ecs__map_put(&w->id_names, ecs__hash_bytes(name, len - 1), id);
    return id;
}

ECS_API ecs_id ecs_component(ecs_world *w, const char *name, size_t size, size_t align) {
    return ecs__register(w, "ecs_component", name, size, align, false, NULL);
}
ECS_API ecs_id ecs_resource(ecs_world *w, const char *name, size_t size, size_t align,
                            const void *init) {
    return ecs__register(w, "ecs_resource", name, size, align, true, init);
}
ECS_API ecs_id ecs_lookup(const ecs_world *w, const char *name) {
    return w && name ? ecs__id_find(w, name) : 0;
}
ECS_API const char *ecs_id_name(const ecs_world *w, ecs_id id) {
    return w && ecs__id_valid(w, id) ? w->ids[id].name : NULL;
}
ECS_API size_t ecs_id_size(const ecs_world *w, ecs_id id) {
    return w && ecs__id_valid(w, id) ? w->ids[id].size : 0;
}
ECS_API ecs_id ecs_id_count(const ecs_world *w) { return w ? w->id_count : 0; }

ECS_API void *ecs_resource_get(ecs_world *w, ecs_id id) {
    if (!w) return NULL;
    if (!ecs__id_valid(w, id) || !w->ids[id].resource) {
        ecs__fail(w, ECS_ERR_ARG, "ecs_resource_get: id %u is not a resource", (unsigned)id);
        return NULL;
    }
    return w->ids[id].data;
}

/* ---- >>entity: the entity index ------------------------------------------- */
/* A handle is live when its slot holds an entity of the same generation.
   Generations start at 1, so 0 and pending handles (bit 63) never match. */
static bool ecs__alive(const ecs_world *w, ecs_entity e) {
    uint32_t i = ecs__index(e);
    return i < w->record_count && w->records[i].table != ECS__NONE &&
           w->records[i].gen == ecs__gen(e);
}

static ecs_result ecs__check_alive(const ecs_world *w, const char *fn, ecs_entity e) {
    if (ecs__alive(w, e)) return ECS_OK;
    if (e == 0) return ecs__fail(w, ECS_ERR_STALE, "%s: entity 0 is never a live entity", fn);
    if (e & ECS__PENDING)
        return ecs__fail(w, ECS_ERR_STALE, "%s: entity %llx is a pending handle; it is "
                         "live only after its commands are applied", fn, (unsigned long long)e);
    return ecs__fail(w, ECS_ERR_STALE, "%s: entity %u (generation %u) is not alive", fn,
                     (unsigned)ecs__index(e), (unsigned)ecs__gen(e));
}

/* Slots needed beyond the free list must have been reserved in records. */
static uint32_t ecs__slot_take(ecs_world *w) {
    uint32_t i;
    if (w->free_head != ECS__NONE) {
        i = w->free_head;
        w->free_head = w->records[i].row;
        w->free_count--;
    } else {
        i = w->record_count++;
        w->records[i].gen = 1;
    }
    return i;
}
static bool ecs__slots_reserve(ecs_world *w, size_t n) {
    if (n <= w->free_count) return true;
    size_t need = (size_t)w->record_count + (n - w->free_count);
    return need < ECS__NONE && ECS__RESERVE(w, w->records, w->record_cap, need);
}
/* A slot whose generation is used up is retired: never reused, so no old
   handle can come back to life. */
static void ecs__slot_release(ecs_world *w, uint32_t i) {
    ecs__record *r = &w->records[i];
    r->table = ECS__NONE;
    if (r->gen == ECS__GEN_MAX) return;
    r->gen++;
    r->row = w->free_head;
    w->free_head = i;
    w->free_count++;
}

/* ---- >>table: archetype tables and transition edges ----------------------- */
static int32_t ecs__table_find_id(const ecs__table *t, ecs_id id) {
    uint32_t lo = 0, hi = t->id_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t->ids[mid] < id) lo = mid + 1; else hi = mid;
    }
    return lo < t->id_count && t->ids[lo] == id ? (int32_t)lo : -1;
}
static unsigned char *ecs__table_cell(const ecs__table *t, int32_t at, uint32_t row) {
    int32_t c = t->column_of[at];
    return c < 0 ? NULL : t->columns[c].data + (size_t)row * t->columns[c].size;
}

static uint64_t ecs__set_hash(const ecs_id *ids, uint32_t n) {
    return ecs__hash_bytes(ids, n * sizeof *ids);
}
static ecs__table *ecs__table_find(const ecs_world *w, const ecs_id *ids, uint32_t n) {
    uint32_t step = 0;
    uint64_t *v;
    while ((v = ecs__map_next(&w->table_sets, ecs__set_hash(ids, n), &step))) {
        ecs__table *t = w->tables[*v];
        if (t->id_count == n && !memcmp(t->ids, ids, n * sizeof *ids)) return t;
    }
    return NULL;
}

static bool ecs__query_match(const ecs_query *q, const ecs__table *t, ecs__match *m);

/* Makes the table for a sorted id set. Everything that can fail (the table,
   its place in the world, a slot in every query's match list) is reserved
   first, so a failure changes nothing. */
static ecs__table *ecs__table_new(ecs_world *w, const ecs_id *ids, uint32_t n) {
    uint32_t columns = 0;
    for (uint32_t i = 0; i < n; i++) columns += w->ids[ids[i]].size > 0;
    size_t bytes = sizeof(ecs__table) + columns * sizeof(ecs__column) +
                   n * (sizeof(ecs_id) + sizeof(int32_t));
    if (!ECS__RESERVE(w, w->tables, w->table_cap, (size_t)w->table_count + 1) ||
        !ecs__map_reserve(w, &w->table_sets, 1))
        return NULL;
    for (uint32_t i = 0; i < w->query_count; i++) {
        ecs_query *q = w->queries[i];
        if (!ECS__RESERVE(w, q->matches, q->match_cap, (size_t)q->match_count + 1)) return NULL;
    }
    ecs__table *t = (ecs__table *)ecs__alloc(w, bytes);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->index = w->table_count;
    t->id_count = n;
    t->column_count = columns;
    t->columns = (ecs__column *)(t + 1);
    t->ids = (ecs_id *)(t->columns + columns);
    t->column_of = (int32_t *)(t->ids + n);
    if (n) memcpy(t->ids, ids, n * sizeof *ids);
    for (uint32_t i = 0, c = 0; i < n; i++) {
        uint32_t size = w->ids[ids[i]].size;
        t->column_of[i] = size ? (int32_t)c : -1;
        if (size) { t->columns[c].data = NULL; t->columns[c].size = size; t->columns[c].id = ids[i]; c++; }
    }
    w->tables[w->table_count++] = t;
    ecs__map_put(&w->table_sets, ecs__set_hash(ids, n), t->index);
    for (uint32_t i = 0; i < w->query_count; i++) {
        ecs_query *q = w->queries[i];
        if (ecs__query_match(q, t, &q->matches[q->match_count])) q->match_count++;
    }
    return t;
}

static void ecs__table_free(ecs_world *w, ecs__table *t) {
    ecs__map_fini(w, &t->edges);
    ecs__free(w, t->block);
    ecs__free(w, t);
}

/* Makes room for need rows. The entity column and every component column
   share one allocation, each starting on a 64-byte boundary (cache lines,
   and aligned vector loads in loops over a column). */
static bool ecs__table_reserve(ecs_world *w, ecs__table *t, size_t need) {
    if (need <= t->cap) return true;
    if (need > ECS__MAX_ROWS) return false;
    size_t cap = t->cap ? (size_t)t->cap * 2 : 8;
    if (cap < need) cap = need;
    if (cap > ECS__MAX_ROWS) cap = ECS__MAX_ROWS;
    size_t total = 64, room;   /* 64: slack to align the block's start */
    for (uint32_t c = 0; c <= t->column_count; c++) {
        size_t size = c < t->column_count ? t->columns[c].size : sizeof(ecs_entity);
        if (cap > (SIZE_MAX - total - 64) / size) return false;
        room = (cap * size + 63) & ~(size_t)63;
        total += room;
    }
    unsigned char *block = (unsigned char *)ecs__alloc(w, total);
    if (!block) return false;
    unsigned char *at = (unsigned char *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    if (t->count) memcpy(at, t->entities, t->count * sizeof(ecs_entity));
    t->entities = (ecs_entity *)(void *)at;
    at += (cap * sizeof(ecs_entity) + 63) & ~(size_t)63;
    for (uint32_t c = 0; c < t->column_count; c++) {
        ecs__column *col = &t->columns[c];
        if (t->count) memcpy(at, col->data, (size_t)t->count * col->size);
        col->data = at;
        at += (cap * col->size + 63) & ~(size_t)63;
    }
    ecs__free(w, t->block);
    t->block = block;
    t->cap = (uint32_t)cap;
    return true;
}

/* Fills row drow of dst from row srow of src: shared columns are copied,
   the others zeroed. Both column lists are sorted by id. */
static void ecs__row_copy(ecs__table *dst, uint32_t drow, const ecs__table *src, uint32_t srow) {
    uint32_t j = 0;
    for (uint32_t i = 0; i < dst->column_count; i++) {
        ecs__column *d = &dst->columns[i];
        while (j < src->column_count && src->columns[j].id < d->id) j++;
        unsigned char *to = d->data + (size_t)drow * d->size;
        if (j < src->column_count && src->columns[j].id == d->id)
            memcpy(to, src->columns[j].data + (size_t)srow * d->size, d->size);
        else
            memset(to, 0, d->size);
    }
}

/* Swap-remove: the last row moves into the hole, and its entity's record
   follows it. */
static void ecs__row_delete(ecs_world *w, ecs__table *t, uint32_t row) {
    uint32_t last = t->count - 1;
    if (row != last) {
        for (uint32_t c = 0; c < t->column_count; c++) {
            ecs__column *col = &t->columns[c];
            memcpy(col->data + (size_t)row * col->size, col->data + (size_t)last * col->size,
                   col->size);
        }
        ecs_entity moved = t->entities[last];
        t->entities[row] = moved;
        w->records[ecs__index(moved)].row = row;
    }
    t->count = last;
}

/* Moves an entity's row from its table to dst (which has room). */
static uint32_t ecs__row_move(ecs_world *w, ecs__record *r, ecs__table *dst) {
    ecs__table *src = w->tables[r->table];
    uint32_t srow = r->row, drow = dst->count++;
    dst->entities[drow] = src->entities[srow];
    ecs__row_copy(dst, drow, src, srow);
    ecs__row_delete(w, src, srow);
    r->table = dst->index;
    r->row = drow;
    return drow;
}

/* The table reached from src by adding (or removing) id. The first time it
   is built (and created if new); then the edge is cached in both tables, so
   a repeated transition is one lookup (seed 004). NULL only on NOMEM. */
static ecs__table *ecs__table_step(ecs_world *w, ecs__table *src, ecs_id id, bool removing) {
    uint64_t key = ((uint64_t)id << 1) | removing;
    uint64_t *hit = ecs__map_get(&src->edges, key);
    if (hit) return w->tables[*hit];
    if (!ECS__RESERVE(w, w->scratch, w->scratch_cap, (size_t)src->id_count + 1)) return NULL;
    uint32_t n = 0, i = 0;
    for (; i < src->id_count && src->ids[i] < id; i++) w->scratch[n++] = src->ids[i];
    if (!removing) w->scratch[n++] = id;
    for (; i < src->id_count; i++) if (src->ids[i] != id) w->scratch[n++] = src->ids[i];
    ecs__table *dst = ecs__table_find(w, w->scratch, n);
    if (!dst && !(dst = ecs__table_new(w, w->scratch, n))) return NULL;
    /* the edges are only a cache: if they cannot be stored, the next
       transition just builds the set again */
    if (ecs__map_reserve(w, &src->edges, 1)) ecs__map_put(&src->edges, key, dst->index);
    if (!ecs__map_get(&dst->edges, key ^ 1) && ecs__map_reserve(w, &dst->edges, 1))
        ecs__map_put(&dst->edges, key ^ 1, src->index);
    return dst;
}

static ecs_result ecs__busy(ecs_world *w, const char *fn) {
    return ecs__fail(w, ECS_ERR_BUSY, "%s: a query is iterating the entity's table; wrap the "
                     "loop in ecs_defer_begin/ecs_defer_end to change structure while iterating", fn);
}

/* ---- immediate structural operations (arguments already checked) ---- */
static ecs_entity ecs__create(ecs_world *w, const char *fn) {
    ecs__table *root = w->tables[0];
    if (root->lock) { ecs__busy(w, fn); return 0; }
    if (!ecs__slots_reserve(w, 1) || !ecs__table_reserve(w, root, (size_t)root->count + 1)) {
        ECS__OOM(w, fn);
        return 0;
    }
    uint32_t i = ecs__slot_take(w);
    ecs__record *r = &w->records[i];
    ecs_entity e = ecs__handle(i, r->gen);
    r->table = 0;
    r->row = root->count;
    root->entities[root->count++] = e;
    w->alive++;
    return e;
}

static ecs_result ecs__destroy(ecs_world *w, const char *fn, ecs_entity e) {
    ecs__record *r = &w->records[ecs__index(e)];
    ecs__table *t = w->tables[r->table];
    if (t->lock) return ecs__busy(w, fn);
    ecs__row_delete(w, t, r->row);
    ecs__slot_release(w, ecs__index(e));
    w->alive--;
    return ECS_OK;
}

/* Adds id (copying value in, or zeroing it) or, if present, overwrites it. */
static ecs_result ecs__add(ecs_world *w, const char *fn, ecs_entity e, ecs_id id,
                           const void *value) {
    ecs__record *r = &w->records[ecs__index(e)];
    ecs__table *src = w->tables[r->table];
    int32_t at = ecs__table_find_id(src, id);
    if (at >= 0) {
        unsigned char *cell = ecs__table_cell(src, at, r->row);
        if (value && cell) memcpy(cell, value, w->ids[id].size);
        return ECS_OK;
    }
    if (src->lock) return ecs__busy(w, fn);
    ecs__table *dst = ecs__table_step(w, src, id, false);
    if (!dst) return ECS__OOM(w, fn);
    if (dst->lock) return ecs__busy(w, fn);
    if (!ecs__table_reserve(w, dst, (size_t)dst->count + 1)) return ECS__OOM(w, fn);
    uint32_t row = ecs__row_move(w, r, dst);
    unsigned char *cell = ecs__table_cell(dst, ecs__table_find_id(dst, id), row);
    if (value && cell) memcpy(cell, value, w->ids[id].size);
    return ECS_OK;
}

static ecs_result ecs__remove(ecs_world *w, const char *fn, ecs_entity e, ecs_id id) {
    ecs__record *r = &w->records[ecs__index(e)];
    ecs__table *src = w->tables[r->table];
    if (ecs__table_find_id(src, id) < 0) return ECS_OK;
    if (src->lock) return ecs__busy(w, fn);
    ecs__table *dst = ecs__table_step(w, src, id, true);
    if (!dst) return ECS__OOM(w, fn);
    if (dst->lock) return ecs__busy(w, fn);
    if (!ecs__table_reserve(w, dst, (size_t)dst->count + 1)) return ECS__OOM(w, fn);
    ecs__row_move(w, r, dst);
    return ECS_OK;
}

/* ---- >>query: cached queries and iteration -------------------------------- */
/* Tests t against q's terms and fills m with the column of each term. */
static bool ecs__query_match(const ecs_query *q, const ecs__table *t, ecs__match *m) {
    m->table = (ecs__table *)t;
    for (int i = 0; i < q->term_count; i++) {
        int32_t at = ecs__table_find_id(t, q->terms[i].id);
        if (q->terms[i].oper == ECS_AND && at < 0) return false;
        if (q->terms[i].oper == ECS_NOT && at >= 0) return false;
        m->column[i] = (int16_t)(q->terms[i].oper != ECS_NOT && at >= 0 ? t->column_of[at] : -1);
    }
    return true;
}

/* Counts the terms of a term list (it ends at the first id 0) and checks
   each; shared by queries and systems. */
static ecs_result ecs__terms_check(const ecs_world *w, const char *fn, const ecs_term *terms,
                                   int *count) {
    int n = 0;
    for (; n < ECS_MAX_TERMS && terms[n].id; n++) {
        ecs_result r = ecs__check_component(w, fn, terms[n].id);
        if (r) return r;
        if ((unsigned)terms[n].oper > ECS_OPTIONAL)
            return ecs__fail(w, ECS_ERR_ARG, "%s: term %d has an unknown oper %d", fn, n,
                             (int)terms[n].oper);
        if ((unsigned)terms[n].access > (ECS_READ | ECS_WRITE))
            return ecs__fail(w, ECS_ERR_ARG, "%s: term %d has an unknown access %d", fn, n,
                             (int)terms[n].access);
    }
    *count = n;
    return ECS_OK;
}

ECS_API ecs_query *ecs_query_new(ecs_world *w, const ecs_query_desc *desc) {
    if (!w) return NULL;
    if (!desc) { ecs__fail(w, ECS_ERR_ARG, "ecs_query_new: desc is NULL"); return NULL; }
    int n = 0;
    if (ecs__terms_check(w, "ecs_query_new", desc->terms, &n)) return NULL;
    ecs_query *q = (ecs_query *)ecs__alloc(w, sizeof *q);
    if (!q || !ECS__RESERVE(w, w->queries, w->query_cap, (size_t)w->query_count + 1)) {
        ecs__free(w, q);
        ECS__OOM(w, "ecs_query_new");
        return NULL;
    }
    memset(q, 0, sizeof *q);
    q->world = w;
    q->term_count = n;
    memcpy(q->terms, desc->terms, (size_t)n * sizeof *q->terms);
    for (uint32_t i = 0; i < w->table_count; i++) {
        ecs__match m;
        if (!ecs__query_match(q, w->tables[i], &m)) continue;
        if (!ECS__RESERVE(w, q->matches, q->match_cap, (size_t)q->match_count + 1)) {
            ecs__free(w, q->matches);
            ecs__free(w, q);
            ECS__OOM(w, "ecs_query_new");
            return NULL;
        }
        q->matches[q->match_count++] = m;
    }
    q->slot = w->query_count;
    w->queries[w->query_count++] = q;
    return q;
}

ECS_API void ecs_query_free(ecs_query *q) {
    if (!q) return;
    ecs_world *w = q->world;
    ecs_query *last = w->queries[--w->query_count];
    w->queries[q->slot] = last;
    last->slot = q->slot;
    ecs__free(w, q->matches);
    ecs__free(w, q);
}

ECS_API ecs_iter ecs_query_iter(ecs_world *w, ecs_query *q) {
    ecs_iter it;
    memset(&it, 0, sizeof it);
    it.world = w;
    if (!w) return it;
    if (!q || q->world != w) {
        ecs__fail(w, ECS_ERR_ARG, "ecs_query_iter: the query is NULL or of another world");
        return it;
    }
    it.priv.query = q;
    it.commands = w->defer_depth ? w->defer : NULL;
    return it;
}

/* Each batch locks its table until the next call, so a structural change
   cannot move rows out from under the caller's column pointers. */
ECS_API bool ecs_query_next(ecs_iter *it) {
    if (!it) return false;
    if (it->priv.table) { ((ecs__table *)it->priv.table)->lock--; it->priv.table = NULL; }
    const ecs_query *q = it->priv.query;
    if (!q) return false;
    while (it->priv.cursor < q->match_count) {
        const ecs__match *m = &q->matches[it->priv.cursor++];
        ecs__table *t = m->table;
        if (!t->count) continue;
        t->lock++;
        it->priv.table = t;
        it->count = (int)t->count;
        it->entities = t->entities;
        for (int i = 0; i < q->term_count; i++)
            it->priv.fields[i] = m->column[i] < 0 ? NULL : t->columns[m->column[i]].data;
        return true;
    }
    it->priv.query = NULL;
    it->count = 0;
    return false;
}

ECS_API void ecs_iter_fini(ecs_iter *it) {
    if (!it) return;
    if (it->priv.table) { ((ecs__table *)it->priv.table)->lock--; it->priv.table = NULL; }
    it->priv.query = NULL;
}

ECS_API void *ecs_field(const ecs_iter *it, int term) {
    return it && term >= 0 && term < ECS_MAX_TERMS ? it->priv.fields[term] : NULL;
}

ECS_API size_t ecs_query_count(ecs_world *w, ecs_query *q) {
    if (!w || !q) return 0;
    size_t n = 0;
    for (uint32_t i = 0; i < q->match_count; i++) n += q->matches[i].table->count;
    return n;
}

/* ---- >>commands: deferred structural changes ------------------------------ */
static uint32_t ecs__serial_next(ecs_world *w) {
    w->next_serial = w->next_serial >= 0x7fffffffu ? 1 : w->next_serial + 1;
    return w->next_serial;
}
static bool ecs__is_pending_of(const ecs_commands *c, ecs_entity e) {
    return (e & ECS__PENDING) && (uint32_t)((e >> 32) & 0x7fffffffu) == c->serial &&
           ecs__index(e) < c->created_count;
}

static ecs_commands *ecs__commands_new(ecs_world *w) {
    ecs_commands *c = (ecs_commands *)ecs__alloc(w, sizeof *c);
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->world = w;
    c->serial = ecs__serial_next(w);
    c->slot = ECS__NONE;
    return c;
}
static void ecs__commands_free(ecs_world *w, ecs_commands *c) {
    ecs__free(w, c->cmds);
    ecs__free(w, c->data);
    ecs__free(w, c->created);
    ecs__free(w, c);
}
static void ecs__commands_clear(ecs_commands *c) {
    c->count = c->data_size = c->created_count = c->applied = 0;
    c->serial = ecs__serial_next(c->world);
}

/* Appends one command. A pending target must come from this buffer; a live
   target is only checked when the command applies (it may die before). */
static ecs_result ecs__cmd_push(ecs_commands *c, const char *fn, uint32_t op, ecs_entity e,
                                ecs_id id, const void *value) {
    if (!c) return ECS_ERR_ARG;
    ecs_world *w = c->world;
    ecs_result r;
    if (e == 0) return ecs__fail(w, ECS_ERR_STALE, "%s: entity 0 is never a live entity", fn);
    if ((e & ECS__PENDING) && !ecs__is_pending_of(c, e))
        return ecs__fail(w, ECS_ERR_ARG, "%s: pending entity %llx was made by another command "
                         "buffer or an earlier apply", fn, (unsigned long long)e);
    if (op != ECS__CMD_DESTROY && (r = ecs__check_component(w, fn, id))) return r;
    uint32_t size = op == ECS__CMD_SET ? w->ids[id].size : 0;
    if (op == ECS__CMD_SET && size && !value)
        return ecs__fail(w, ECS_ERR_ARG, "%s: value is NULL for component \"%s\"", fn,
                         w->ids[id].name);
    if (op == ECS__CMD_SET && !size) op = ECS__CMD_ADD;   /* setting a tag adds it */
    if (!ECS__RESERVE(w, c->cmds, c->cap, (size_t)c->count + 1) ||
        (size && ((size_t)c->data_size + size > UINT32_MAX ||
                  !ECS__RESERVE(w, c->data, c->data_cap, (size_t)c->data_size + size))))
        return ECS__OOM(w, fn);
    ecs__cmd *cmd = &c->cmds[c->count++];
    cmd->op = op; cmd->id = id; cmd->e = e; cmd->value = c->data_size;
    if (size) { memcpy(c->data + c->data_size, value, size); c->data_size += size; }
    return ECS_OK;
}

ECS_API ecs_entity ecs_cmd_create(ecs_commands *c) {
    if (!c) return 0;
    ecs_world *w = c->world;
    if (c->created_count >= 0x7fffffffu ||
        !ECS__RESERVE(w, c->created, c->created_cap, (size_t)c->created_count + 1) ||
        !ECS__RESERVE(w, c->cmds, c->cap, (size_t)c->count + 1)) {
        ECS__OOM(w, "ecs_cmd_create");
        return 0;
    }
    ecs_entity e = ECS__PENDING | ((uint64_t)c->serial << 32) | c->created_count;
    c->created[c->created_count++] = 0;
    ecs__cmd *cmd = &c->cmds[c->count++];
    cmd->op = ECS__CMD_CREATE; cmd->id = 0; cmd->e = e; cmd->value = 0;
    return e;
}
ECS_API ecs_result ecs_cmd_destroy(ecs_commands *c, ecs_entity e) {
    return ecs__cmd_push(c, "ecs_cmd_destroy", ECS__CMD_DESTROY, e, 0, NULL);
}
ECS_API ecs_result ecs_cmd_add(ecs_commands *c, ecs_entity e, ecs_id id) {
    return ecs__cmd_push(c, "ecs_cmd_add", ECS__CMD_ADD, e, id, NULL);
}
ECS_API ecs_result ecs_cmd_remove(ecs_commands *c, ecs_entity e, ecs_id id) {
    return ecs__cmd_push(c, "ecs_cmd_remove", ECS__CMD_REMOVE, e, id, NULL);
}
ECS_API ecs_result ecs_cmd_set(ecs_commands *c, ecs_entity e, ecs_id id, const void *value) {
    return ecs__cmd_push(c, "ecs_cmd_set", ECS__CMD_SET, e, id, value);
}

/* Applies from where the last call stopped. A dead target drops its command;
   NOMEM or BUSY stops here with the rest kept for the next call. */
static ecs_result ecs__commands_apply(ecs_world *w, ecs_commands *c) {
    static const char fn[] = "ecs_commands_apply";
    for (; c->applied < c->count; c->applied++) {
        const ecs__cmd *cmd = &c->cmds[c->applied];
        ecs_entity e = cmd->e;
        ecs_result r = ECS_OK;
        if (cmd->op == ECS__CMD_CREATE) {
            ecs_entity made = ecs__create(w, fn);
            if (!made) return w->tables[0]->lock ? ECS_ERR_BUSY : ECS_ERR_NOMEM;
            c->created[ecs__index(e)] = made;
            continue;
        }
        if (e & ECS__PENDING) e = c->created[ecs__index(e)];
        if (!ecs__alive(w, e)) { w->dropped++; continue; }
        switch (cmd->op) {
        case ECS__CMD_DESTROY: r = ecs__destroy(w, fn, e); break;
        case ECS__CMD_ADD:     r = ecs__add(w, fn, e, cmd->id, NULL); break;
        case ECS__CMD_REMOVE:  r = ecs__remove(w, fn, e, cmd->id); break;
        default:               r = ecs__add(w, fn, e, cmd->id, c->data + cmd->value); break;
        }
        if (r) return r;
    }
    ecs__commands_clear(c);
    return ECS_OK;
}

ECS_API ecs_commands *ecs_commands_new(ecs_world *w) {
    if (!w) return NULL;
    ecs_commands *c = NULL;
    if (!ECS__RESERVE(w, w->buffers, w->buffer_cap, (size_t)w->buffer_count + 1) ||
        !(c = ecs__commands_new(w))) {
        ECS__OOM(w, "ecs_commands_new");
        return NULL;
    }
    c->slot = w->buffer_count;
    w->buffers[w->buffer_count++] = c;
    return c;
}
ECS_API void ecs_commands_free(ecs_commands *c) {
    if (!c || c->slot == ECS__NONE) return;   /* the defer buffer belongs to the world */
    ecs_world *w = c->world;
    ecs_commands *last = w->buffers[--w->buffer_count];
    w->buffers[c->slot] = last;
    last->slot = c->slot;
    ecs__commands_free(w, c);
}
ECS_API ecs_result ecs_commands_apply(ecs_world *w, ecs_commands *c) {
    if (!w) return ECS_ERR_ARG;
    if (!c || c->world != w)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_commands_apply: the buffer is NULL or of another world");
    if (w->defer_depth)
        return ecs__fail(w, ECS_ERR_BUSY, "ecs_commands_apply: not allowed in defer mode");
    return ecs__commands_apply(w, c);
}
ECS_API size_t ecs_commands_dropped(const ecs_world *w) { return w ? w->dropped : 0; }

ECS_API ecs_result ecs_defer_begin(ecs_world *w) {
    if (!w) return ECS_ERR_ARG;
    if (!w->defer && !(w->defer = ecs__commands_new(w))) return ECS__OOM(w, "ecs_defer_begin");
    w->defer_depth++;
    return ECS_OK;
}
ECS_API ecs_result ecs_defer_end(ecs_world *w) {
    if (!w) return ECS_ERR_ARG;
    if (w->defer_depth == 0) {
        if (w->defer && w->defer->applied < w->defer->count)   /* retry a failed apply */
            return ecs__commands_apply(w, w->defer);
        return ecs__fail(w, ECS_ERR_ARG, "ecs_defer_end: not in defer mode");
    }
    if (--w->defer_depth) return ECS_OK;
    return ecs__commands_apply(w, w->defer);
}

/* ---- >>entity api: immediate calls, routed to the defer buffer in defer mode */
/* In defer mode a target may be live or pending in the defer buffer. */
static ecs_result ecs__check_target(const ecs_world *w, const char *fn, ecs_entity e) {
    if (w->defer_depth && ecs__is_pending_of(w->defer, e)) return ECS_OK;
    return ecs__check_alive(w, fn, e);
}

ECS_API ecs_entity ecs_create(ecs_world *w) {
    if (!w) return 0;
    if (w->defer_depth) return ecs_cmd_create(w->defer);
    return ecs__create(w, "ecs_create");
}

ECS_API ecs_result ecs_create_many(ecs_world *w, size_t n, const ecs_id *ids, size_t id_count,
                                   ecs_entity *out) {
    static const char fn[] = "ecs_create_many";
    if (!w) return ECS_ERR_ARG;
    if (id_count && !ids) return ecs__fail(w, ECS_ERR_ARG, "%s: ids is NULL", fn);
    if (n > ECS__MAX_ROWS) return ecs__fail(w, ECS_ERR_ARG, "%s: n is too large", fn);
    for (size_t i = 0; i < id_count; i++) {
        ecs_result r = ecs__check_component(w, fn, ids[i]);
        if (r) return r;
    }
    if (w->defer_depth) {   /* all or nothing: on failure cut the buffer back */
        ecs_commands *c = w->defer;
        uint32_t count = c->count, data = c->data_size, created = c->created_count;
        for (size_t i = 0; i < n; i++) {
            ecs_entity e = ecs_cmd_create(c);
            bool ok = e != 0;
            for (size_t k = 0; ok && k < id_count; k++) ok = !ecs_cmd_add(c, e, ids[k]);
            if (!ok) {
                c->count = count; c->data_size = data; c->created_count = created;
                return ECS__OOM(w, fn);
            }
            if (out) out[i] = e;
        }
        return ECS_OK;
    }
    if (!ECS__RESERVE(w, w->scratch, w->scratch_cap, id_count ? id_count : 1))
        return ECS__OOM(w, fn);
    uint32_t m = 0;   /* sorted, without duplicates */
    for (size_t i = 0; i < id_count; i++) {
        uint32_t j = m;
        while (j > 0 && w->scratch[j - 1] > ids[i]) j--;
        if (j > 0 && w->scratch[j - 1] == ids[i]) continue;
        memmove(w->scratch + j + 1, w->scratch + j, (m - j) * sizeof *w->scratch);
        w->scratch[j] = ids[i];
        m++;
    }
    ecs__table *t = ecs__table_find(w, w->scratch, m);
    if (!t && !(t = ecs__table_new(w, w->scratch, m))) return ECS__OOM(w, fn);
    if (n == 0) return ECS_OK;
    if (t->lock) return ecs__busy(w, fn);
    if (!ecs__slots_reserve(w, n) || !ecs__table_reserve(w, t, (size_t)t->count + n))
        return ECS__OOM(w, fn);
    uint32_t first = t->count;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ecs__slot_take(w);
        ecs__record *r = &w->records[s];
        ecs_entity e = ecs__handle(s, r->gen);
        r->table = t->index;
        r->row = t->count;
        t->entities[t->count++] = e;
        if (out) out[i] = e;
    }
    for (uint32_t c = 0; c < t->column_count; c++)
        memset(t->columns[c].data + (size_t)first * t->columns[c].size, 0,
               n * t->columns[c].size);
    w->alive += (uint32_t)n;
    return ECS_OK;
}

ECS_API ecs_result ecs_destroy(ecs_world *w, ecs_entity e) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_target(w, "ecs_destroy", e);
    if (r) return r;
    if (w->defer_depth) return ecs_cmd_destroy(w->defer, e);
    return ecs__destroy(w, "ecs_destroy", e);
}

ECS_API bool ecs_is_alive(const ecs_world *w, ecs_entity e) { return w && ecs__alive(w, e); }

ECS_API ecs_result ecs_add(ecs_world *w, ecs_entity e, ecs_id id) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_target(w, "ecs_add", e);
    if (!r) r = ecs__check_component(w, "ecs_add", id);
    if (r) return r;
    if (w->defer_depth) return ecs_cmd_add(w->defer, e, id);
    return ecs__add(w, "ecs_add", e, id, NULL);
}

ECS_API ecs_result ecs_remove(ecs_world *w, ecs_entity e, ecs_id id) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_target(w, "ecs_remove", e);
    if (!r) r = ecs__check_component(w, "ecs_remove", id);
    if (r) return r;
    if (w->defer_depth) return ecs_cmd_remove(w->defer, e, id);
    return ecs__remove(w, "ecs_remove", e, id);
}

ECS_API ecs_result ecs_set(ecs_world *w, ecs_entity e, ecs_id id, const void *value) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_target(w, "ecs_set", e);
    if (!r) r = ecs__check_component(w, "ecs_set", id);
    if (r) return r;
    if (!value && w->ids[id].size)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_set: value is NULL for component \"%s\"",
                         w->ids[id].name);
    if (w->defer_depth) return ecs_cmd_set(w->defer, e, id, value);
    return ecs__add(w, "ecs_set", e, id, value);
}

ECS_API bool ecs_has(const ecs_world *w, ecs_entity e, ecs_id id) {
    if (!w || !ecs__alive(w, e)) return false;
    const ecs__record *r = &w->records[ecs__index(e)];
    return ecs__table_find_id(w->tables[r->table], id) >= 0;
}

static void *ecs__get(const ecs_world *w, const char *fn, ecs_entity e, ecs_id id) {
    if (!w || ecs__check_alive(w, fn, e) || ecs__check_component(w, fn, id)) return NULL;
    const ecs__record *r = &w->records[ecs__index(e)];
    const ecs__table *t = w->tables[r->table];
    int32_t at = ecs__table_find_id(t, id);
    return at < 0 ? NULL : ecs__table_cell(t, at, r->row);
}
ECS_API const void *ecs_get(const ecs_world *w, ecs_entity e, ecs_id id) {
    return ecs__get(w, "ecs_get", e, id);
}
ECS_API void *ecs_get_mut(ecs_world *w, ecs_entity e, ecs_id id) {
    return ecs__get(w, "ecs_get_mut", e, id);
}

ECS_API size_t ecs_count(const ecs_world *w) { return w ? w->alive : 0; }

/* ---- >>world: lifetime ---------------------------------------------------- */
ECS_API void ecs_world_free(ecs_world *w) {
    if (!w) return;
    while (w->query_count) ecs_query_free(w->queries[w->query_count - 1]);
    while (w->buffer_count) ecs_commands_free(w->buffers[w->buffer_count - 1]);
    if (w->defer) ecs__commands_free(w, w->defer);
    for (uint32_t i = 0; i < w->table_count; i++) ecs__table_free(w, w->tables[i]);
    for (uint32_t i = 1; i <= w->id_count; i++) {
        ecs__free(w, w->ids[i].name);
        ecs__free(w, w->ids[i].raw);
    }
    ecs__free(w, w->queries);
    ecs__free(w, w->buffers);
    ecs__free(w, w->tables);
    ecs__map_fini(w, &w->table_sets);
    ecs__free(w, w->scratch);
    ecs__free(w, w->records);
    ecs__free(w, w->ids);
    ecs__map_fini(w, &w->id_names);
    w->realloc_fn(w, 0, w->alloc_user);
}

ECS_API ecs_world *ecs_world_new(const ecs_world_desc *desc) {
    ecs_world_desc d;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if (d.threads < 0 || (unsigned)d.order > ECS_ORDER_WRITERS_FIRST) return NULL;
    if (!d.realloc_fn) d.realloc_fn = ecs__libc_realloc;
    ecs_world *w = (ecs_world *)d.realloc_fn(NULL, sizeof *w, d.alloc_user);
    if (!w) return NULL;
    memset(w, 0, sizeof *w);
    w->realloc_fn = d.realloc_fn;
    w->alloc_user = d.alloc_user;
    w->threads = d.threads ? d.threads : 1;
    w->order = d.order;
    w->free_head = ECS__NONE;
    if (!ecs__table_new(w, NULL, 0)) {   /* tables[0]: entities with no components */
        ecs_world_free(w);
        return NULL;
    }
    return w;
}

#endif /* ECS__IMPLEMENTED */
#endif /* ECS_IMPLEMENTATION */

/*
---- >>license ------------------------------------------------------------------
MIT License

Copyright (c) 2026 the ecs.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of
the Software, and to permit persons to whom the Software is furnished to do so,
subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS
FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR
COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
