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
               .terms = {{pos, ECS_WRITE}, {vel, ECS_READ}}});
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
