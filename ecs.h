/* ecs.h - v0.1 - MIT - archetype ECS with a validated, parallel system scheduler

   An Entity-Component-System in one C11 header: entities grouped in archetype
   tables by their exact component set (one contiguous, 64-byte aligned column
   per component) with cached add/remove transition edges; cached queries;
   systems that declare what they read and write, checked for cycles and races
   before they run; and a fork/join scheduler that runs independent systems in
   parallel, splits big tables into chunks, and applies deferred structural
   changes in an order that never depends on the thread count.

   USAGE
       In exactly one .c (or .cpp) file:
           #define ECS_IMPLEMENTATION
           #include "ecs.h"
       Everywhere else just #include "ecs.h". Needs C11 or C++11; threads
       are Win32 on Windows, else C11 <threads.h> or pthreads.

   CONTENTS (grep for the tags)
       >>config     compile-time options
       >>api        public declarations: handles, world, components, entities
                    (prefabs), snapshots, queries, deferred commands
       >>sysapi     public declarations: systems, events, validation,
                    running, netcode, looking inside
       >>impl       the implementation, in data-flow order:
                    >>platform >>alloc >>containers >>world >>terms >>access
                    >>hooks >>ids >>entity >>hierarchy >>change >>table >>order >>query
                    >>commands >>events >>sync >>calls >>prefab >>snapshot >>savefile >>hash
                    >>systems >>graph
                    >>conflicts >>report >>validate >>dot >>netcode >>sched >>loop
                    >>stats >>simulate >>trace >>lifetime
       >>license    at the very bottom

   CONFIG MACROS (define before including the implementation)
       ECS_STATIC            make every function static (private embedding)
       ECS_ASSERT(c)         internal invariant check; default assert()
       ECS_GENERATION_BITS   bits of an entity handle's generation, 1..31
                             (default 31); a slot whose generation would wrap
                             is retired instead of reused
       ECS_REALLOC(p, n)     the default allocator when the world desc gives
       ECS_FREE(p)           none; default realloc/free (define both or neither)
       ECS_USE_PTHREADS      pthreads instead of C11 <threads.h> (automatic
                             where <threads.h> is missing, in C++, and under
                             ThreadSanitizer), or instead of Win32 threads
                             on Windows
       ECS_NO_THREADS        single-threaded library, same API; threads > 1
                             then runs on the calling thread (automatic for
                             tcc and for Emscripten without -pthread)
       ECS_USE_INTERLOCKED   MSVC's _Interlocked atomics (automatic with MSVC)
       ECS_USE_STDATOMIC     C11 <stdatomic.h> instead of GCC/Clang builtins
                             (automatic for other C compilers)
       ECS_VALGRIND          annotate atomic hand-offs for helgrind
       ECS_CHECK_ACCESS      1/0: the debug access checks on/off (default: on
                             unless NDEBUG); see ecs_progress
       ECS_PENDING_SERIAL_BITS  bits of a command buffer's serial in pending
                             handles, 4..39 (default 39); serials are never
                             reused: when they run out, ecs_cmd_create fails
       ECS_SPIN_NS           idle worker spin before sleeping (default 50000)
       ECS_NO_STDIO          no <stdio.h> in the public part and no FILE *
                             calls (ecs_snapshot_save/load take callbacks)
       ECS_SHUFFLE_SEED      not 0: worlds whose desc gives shuffle_seed 0
                             shuffle anyway, the n-th world made with seed
                             ECS_SHUFFLE_SEED + n (default 0: none): build a
                             test suite with it to run every world shuffled,
                             each differently (ecs_world_set_shuffle_seed)
       ECS_SPLIT_MIN         commands from which a sync point applies its spawn
                             runs on every thread (default 4096; 256 when no
                             worker sleeps)
       ECS_PARALLEL_MIN_NS   stages with less measured work run on the calling
                             thread (default 50000)
       ECS_TIMING_MS         automatic timing: at most one timed frame per this
                             many ms (default 50; see ecs_timing_interval)
       ECS_EVENT_BACKLOG     events of a type a reader skipped by run_if or
                             interval keeps (default 65536; see >>sysapi: events)

   QUICK START
       README.md opens with a complete program: components, systems that
       declare what they read and write, ecs_validate's report, and frames
       run by ecs_progress. examples/quickstart.c is the smallest query loop.

   ERRORS
       Functions that can fail return an ecs_result (or 0 / NULL for handles
       and pointers) and leave the world unchanged; ecs_last_error(w) then
       holds one readable line. These checks stay on with -DNDEBUG.
       ECS_ASSERT guards only the library's own invariants.
*/
#ifndef ECS_H
#define ECS_H

#if defined(__cplusplus)
#  if __cplusplus < 201103L && (!defined(_MSVC_LANG) || _MSVC_LANG < 201103L)
#    error "ecs.h needs C++11 or later (-std=c++11)"
#  endif
#elif !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#  error "ecs.h needs C11: compile with -std=c11 or later (MSVC: /std:c11)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef ECS_NO_STDIO   /* defined: no FILE * calls in the public part (the save-file bytes go
                          through ecs_snapshot_save / ecs_snapshot_load) */
#  include <stdio.h>
#endif
#include <string.h>   /* (ecs_emitter_next's memset) */

/* ---- >>config: compile-time options -------------------------------------- */
#ifndef ECS_API
#  if defined(ECS_STATIC) && (defined(__GNUC__) || defined(__clang__))
#    define ECS_API static __attribute__((unused))   /* what the program does not call is fine */
#  elif defined(ECS_STATIC)
#    define ECS_API static
#  else
#    define ECS_API extern
#  endif
#endif

#ifndef ECS_CHECK_ACCESS   /* the debug access checks: see ecs_progress */
#  ifdef NDEBUG
#    define ECS_CHECK_ACCESS 0
#  else
#    define ECS_CHECK_ACCESS 1
#  endif
#endif

#ifndef ECS_PENDING_SERIAL_BITS   /* command-buffer serials: see ecs_cmd_create */
#  define ECS_PENDING_SERIAL_BITS 39
#endif
#if ECS_PENDING_SERIAL_BITS < 4 || ECS_PENDING_SERIAL_BITS > 39
#  error "ECS_PENDING_SERIAL_BITS must be between 4 and 39"
#endif

/* No threads where there are no atomics (tcc) or no threads (Emscripten
   without -pthread): the same API, every system on the calling thread. */
#if !defined(ECS_NO_THREADS) && (defined(__TINYC__) || \
    (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)) || \
    (!defined(__GNUC__) && !defined(_MSC_VER) && !defined(__cplusplus) && defined(__STDC_NO_ATOMICS__)))
#  define ECS_NO_THREADS
#endif

#ifndef ECS_GENERATION_BITS
#  define ECS_GENERATION_BITS 31
#endif

#ifndef ECS_EVENT_BACKLOG   /* events per type a skipped reader keeps: see >>sysapi: events */
#  define ECS_EVENT_BACKLOG 65536
#endif
#ifndef ECS_SHUFFLE_SEED    /* not 0: worlds made with shuffle_seed 0 shuffle anyway (>>config) */
#  define ECS_SHUFFLE_SEED 0
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
    ECS_ERR_BUSY,          /* not allowed now (a structural change on a table a
                              query is iterating, or while systems run) */
    ECS_ERR_ACCESS         /* a debug access check refused a call made inside a
                              system (see ECS_CHECK_ACCESS); ecs_progress returns
                              it after such a frame */
} ecs_result;

/* One line describing the most recent failure on this world ("" if none),
   however long. Valid until the next failing call. Inside a system it is the
   calling thread's own line. */
ECS_API const char *ecs_last_error(const ecs_world *w);
/* A static name for a result code, e.g. "ECS_ERR_STALE". */
ECS_API const char *ecs_result_str(ecs_result r);

/* ---- >>api: world -------------------------------------------------------- */
typedef enum ecs_order {
    ECS_ORDER_INSERTION = 0,  /* unordered conflicting systems run in the stage's
                                 run order: registration order, as far as declared
                                 order allows (an edge is inferred; never a race) */
    ECS_ORDER_EXPLICIT,       /* only declared order; an unordered conflict is a RACE */
    ECS_ORDER_WRITERS_FIRST   /* a writer runs before readers of the same data unless
                                 declared order says otherwise; two systems that each
                                 write what the other accesses are a RACE; writer-first
                                 edges that close a loop are a CYCLE */
} ecs_order;

typedef struct ecs_world_desc {
    int threads;          /* threads that run systems, the caller included;
                             0 = all hardware threads; 1 = the calling thread only */
    ecs_order order;
    void *(*realloc_fn)(void *ptr, size_t size, void *user); /* realloc-style:
                             size 0 frees (and returns NULL); NULL = libc */
    void *alloc_user;     /* passed to realloc_fn; with threads > 1 realloc_fn must be
                             thread-safe (systems record commands on worker threads) */
    bool check_reads;     /* after every system batch, compare the READ columns it was
                             handed with a checksum taken before it ran: a write through
                             a READ field is an access violation (costs a pass over
                             each READ column per batch) */
    uint64_t shuffle_seed; /* not 0: each frame a random order among systems the graph
                             leaves unordered, random chunk-to-thread assignment and
                             worker wake order (ecs_world_set_shuffle_seed) */
    uint64_t random_seed; /* the seed of ecs_random; part of snapshots */
} ecs_world_desc;

/* A new world; desc may be NULL (all defaults). Its threads - 1 worker
   threads start at the first frame that runs a stage in parallel (none for a
   world that never does) and sleep whenever no frame is running; if the
   system refuses one, frames run on those that started. NULL if allocation
   fails or desc is out of range (threads < 0, unknown order). threads is
   capped at 256. */
ECS_API ecs_world *ecs_world_new(const ecs_world_desc *desc);
/* Frees the world and everything it owns, queries and command buffers included. */
ECS_API void ecs_world_free(ecs_world *w);

/* ---- >>api: components, tags, resources ---------------------------------- */
/* Registers a component (size > 0) or tag (size 0) by name. The same name with
   the same size returns the same id (keeping the first alignment); with
   another size, or a name already used by a resource, it returns 0
   (ECS_ERR_ARG). align 0 picks the natural alignment for size; otherwise it
   must be a power of two <= 64 that divides size. */
ECS_API ecs_id ecs_component(ecs_world *w, const char *name, size_t size, size_t align);
#ifdef __cplusplus   /* a template below gives C++ types their constructors and destructor */
#  define ECS_COMPONENT(w, T) ecs__component_cxx<T>((w), #T)
#else
#  define ECS_COMPONENT(w, T) ecs_component((w), #T, sizeof(T), ECS__ALIGNOF(T))
#endif
#define ECS_TAG(w, T) ecs_component((w), #T, 0, 0)
/* Components that own things: lifecycle hooks. Every value is constructed
   (ctor, default zero bytes) before it is used, moved between tables with
   move (default memcpy; dst raw, src left raw), assigned by ecs_set /
   ecs_cmd_set with copy (default memcpy; dst constructed), and destroyed with
   dtor (remove, destroy, world free). on_add runs after the entity has the
   id and its value is constructed, on_set after ecs_set / ecs_cmd_set wrote
   it, on_remove before the value goes away; value is NULL for a tag. Hooks
   run on the thread that applies the change (the caller, or thread 0 at a
   sync point), in the deterministic command order; structural calls made in
   a hook are deferred and applied right after the change that ran it. The
   one exception: a command buffer's copy of a value (see ecs_cmd_set) is
   made with ctor and copy on the thread that records it, so those two may
   run in several systems at once (keep them free of shared state).
   Inside an ordinary system, ecs_set of a component with on_set returns
   ECS_ERR_BUSY (use it->commands: the hook then runs at the sync point). */
typedef void (*ecs_ctor_fn)(void *ptr, int count, void *ctx);
typedef void (*ecs_copy_fn)(void *dst, const void *src, int count, void *ctx);
typedef void (*ecs_hook_fn)(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx);
/* Save files (ecs_snapshot_write / read): serialize writes value's bytes to
   out if they fit in cap and returns how many it needs; deserialize fills a
   constructed value from them and returns false for bad data. */
typedef size_t (*ecs_serialize_fn)(const void *value, void *out, size_t cap, void *ctx);
typedef bool (*ecs_deserialize_fn)(void *value, const void *data, size_t size, void *ctx);
#define ECS_MAX_ENTITY_FIELDS 8
typedef struct ecs_component_desc {
    const char *name;
    size_t size, align;         /* as ecs_component: size 0 is a tag (only on_add/on_remove) */
    ecs_ctor_fn ctor, dtor;
    ecs_copy_fn copy, move;
    ecs_hook_fn on_add, on_set, on_remove;
    void *ctx;                  /* passed to every hook */
    size_t entity_fields[ECS_MAX_ENTITY_FIELDS];   /* offsets of ecs_entity members: a pending
                                   handle of a command buffer written there by a command of
                                   that buffer becomes the live handle when it applies */
    int entity_field_count;
    ecs_serialize_fn serialize;     /* save files: a value with ctor/dtor/copy/move as bytes */
    ecs_deserialize_fn deserialize; /* ...and back into a constructed value */
} ecs_component_desc;
/* Registers a component with hooks. The same name again with the same desc
   returns the same id; 0 + ECS_ERR_ARG for a bad desc (or a name already
   registered otherwise). */
ECS_API ecs_id ecs_component_init(ecs_world *w, const ecs_component_desc *desc);
/* The id registered under name, or 0. */
ECS_API ecs_id ecs_lookup(const ecs_world *w, const char *name);
/* The name of an id, or NULL if the id is unknown. */
ECS_API const char *ecs_id_name(const ecs_world *w, ecs_id id);
/* The size of a component or resource (0 for a tag or an unknown id). */
ECS_API size_t ecs_id_size(const ecs_world *w, ecs_id id);
/* Number of ids registered so far; valid ids are 1 .. ecs_id_count(w) (1 is
   the prefab tag, which every world registers first). */
ECS_API ecs_id ecs_id_count(const ecs_world *w);

/* Registers a resource: one instance per world, not attached to entities.
   init (may be NULL: zeroed) is copied in on first registration only; the
   same name again returns the same id if the size matches, else 0. */
ECS_API ecs_id ecs_resource(ecs_world *w, const char *name, size_t size, size_t align,
                            const void *init);
/* ECS_RESOURCE(w, T, init): init may be a compound literal, commas and all. */
#define ECS_RESOURCE(w, T, ...) ecs_resource((w), #T, sizeof(T), ECS__ALIGNOF(T), __VA_ARGS__)
/* A resource that owns things: desc's ctor constructs it (default zero
   bytes), then init (may be NULL) is copied in with copy (default memcpy);
   dtor runs at world free. A resource has no entity: on_add, on_set,
   on_remove and entity_fields are refused (0 + ECS_ERR_ARG). */
ECS_API ecs_id ecs_resource_init(ecs_world *w, const ecs_component_desc *desc, const void *init);
/* The resource's storage, or NULL (ECS_ERR_ARG) if id is not a resource. */
ECS_API void *ecs_resource_get(ecs_world *w, ecs_id resource);

/* ---- >>api: entities ----------------------------------------------------- */
/* Structural calls (create, destroy, add, remove, set of a missing component)
   return ECS_ERR_BUSY when they would touch a table a query is iterating, and
   from inside a system that is not EXCLUSIVE (use it->commands there); inside
   ecs_defer_begin/end they are recorded and applied at ecs_defer_end. */

/* A new entity with no components; 0 on failure. In defer mode the handle is
   reserved: usable in later calls of the same defer block, and live, with the
   same value, once the block's commands are applied. */
ECS_API ecs_entity ecs_create(ecs_world *w);
/* n entities holding ids (any order, duplicates ignored), values zeroed; their
   handles go to out (may be NULL). All or nothing. */
ECS_API ecs_result ecs_create_many(ecs_world *w, size_t n, const ecs_id *ids, size_t id_count,
                                   ecs_entity *out);
/* As ecs_create_many, with initial values: values[k] (NULL: the default
   value) points to n values of ids[k], back to back, copied in as whole
   columns (with copy into constructed values where the component has hooks;
   on_add for every id, then on_set for each id with values). ids may not
   repeat here. */
ECS_API ecs_result ecs_create_many_values(ecs_world *w, size_t n, const ecs_id *ids, size_t id_count,
                                          const void *const *values, ecs_entity *out);
/* Destroys e and its children (depth first, in attach order), with their
   on_remove hooks and dtors; ECS_ERR_STALE if e is not alive. */
ECS_API ecs_result ecs_destroy(ecs_world *w, ecs_entity e);
/* Destroys n entities (each with its children, as ecs_destroy), all or
   nothing: a handle that is not alive is ECS_ERR_STALE, an open query loop
   on any of their tables ECS_ERR_BUSY, and nothing is destroyed. One that
   dies earlier in the call (listed twice, or under one listed before) is
   skipped. In defer mode the destroys are recorded. */
ECS_API ecs_result ecs_destroy_many(ecs_world *w, const ecs_entity *entities, size_t n);
/* Destroys every entity that has id (and their children), all or nothing. */
ECS_API ecs_result ecs_destroy_with(ecs_world *w, ecs_id id);
ECS_API bool       ecs_is_alive(const ecs_world *w, ecs_entity e);   /* created, not destroyed */
/* Adding an id the entity has, or removing one it lacks, is ECS_OK and no change. */
ECS_API ecs_result ecs_add(ecs_world *w, ecs_entity e, ecs_id id);     /* zero value */
ECS_API ecs_result ecs_remove(ecs_world *w, ecs_entity e, ecs_id id);
/* Copies value into e's component, adding it if missing. value may be NULL
   only for a tag; it may point into the world (another entity's ecs_get, or
   e's own): it is read before any row moves. */
ECS_API ecs_result ecs_set(ecs_world *w, ecs_entity e, ecs_id id, const void *value);
ECS_API bool       ecs_has(const ecs_world *w, ecs_entity e, ecs_id id);   /* false if e is dead */
/* The component's value; NULL if e is dead, lacks it, or id is a tag. The
   pointer is valid until the next structural change to e's table. */
ECS_API const void *ecs_get(const ecs_world *w, ecs_entity e, ecs_id id);
/* As ecs_get, writable. Does not add a missing component. */
ECS_API void      *ecs_get_mut(ecs_world *w, ecs_entity e, ecs_id id);
/* Live entities (pending and reserved ones not included). */
ECS_API size_t     ecs_count(const ecs_world *w);

/* Parents and children. Destroying an entity destroys its children first
   (depth first, in the order they were attached), running their hooks.
   Parents change only where structure may (not inside ordinary systems:
   ECS_ERR_BUSY; use ecs_cmd_set_parent), so systems may read them freely. */
/* parent 0 detaches; ECS_ERR_ARG when it would make a loop. */
ECS_API ecs_result ecs_set_parent(ecs_world *w, ecs_entity child, ecs_entity parent);
ECS_API ecs_entity ecs_get_parent(const ecs_world *w, ecs_entity e);   /* 0 if none */
/* The children in the order they were attached (up to cap into out, which
   may be NULL); returns how many there are. */
ECS_API size_t     ecs_children(const ecs_world *w, ecs_entity parent, ecs_entity *out, size_t cap);

/* Prefabs: templates that live in the world but outside the game. A prefab
   is an entity with the prefab tag; give it values with ecs_set and child
   prefabs with ecs_set_parent (a prefab's child must be a prefab:
   ECS_ERR_ARG). Only terms that name the tag see prefabs: queries, systems,
   change detection, ecs_count and ecs_destroy_with leave them out, and
   on_add / on_set / on_remove do not fire for them (ctor, copy and dtor do).
   The tag comes only with ecs_prefab_new: adding or removing it, or listing
   it in ecs_create_many, is ECS_ERR_ARG. Prefabs are in snapshots and save
   files like any entity. */
ECS_API ecs_entity ecs_prefab_new(ecs_world *w);   /* 0 on failure; in defer mode reserved */
ECS_API ecs_id     ecs_prefab_tag(const ecs_world *w);
ECS_API bool       ecs_is_prefab(const ecs_world *w, ecs_entity e);   /* false if e is dead */
/* A copy of the prefab: every component but the tag (copy hooks; on_add for
   every id, then on_set for every value, as ecs_create_many_values), its
   child prefabs copied under it recursively in attach order, and entity
   fields that name an entity of the prefab's subtree rewritten to that
   entity's copy (a turret's owner field names the new tank). Later edits of
   the prefab change later instances only. 0 on failure: ECS_ERR_ARG for an
   entity without the tag, ECS_ERR_STALE for a dead one, ECS_ERR_BUSY inside
   an ordinary system (use ecs_cmd_instantiate) or when a loop holds a table
   it fills. In defer mode the handle is reserved and the values are copied
   when the block's commands apply. */
ECS_API ecs_entity ecs_instantiate(ecs_world *w, ecs_entity prefab);
/* n instances (whole columns copied: in bulk about as fast as
   ecs_create_many_values), roots to out (may be NULL); all or nothing. n
   instances get the handles, rows and hook calls n ecs_instantiate calls
   would have. */
ECS_API ecs_result ecs_instantiate_many(ecs_world *w, ecs_entity prefab, size_t n, ecs_entity *out);

/* The ids e has, ascending (*out is valid until the next structural
   change); -1 (ECS_ERR_STALE) if e is not alive. */
ECS_API int        ecs_entity_ids(const ecs_world *w, ecs_entity e, const ecs_id **out);

/* ---- >>api: snapshots, save files, world hash ----------------------------- */
/* A snapshot is the world's state: live handles and generations, the free
   slots (the next ecs_create returns the same handle), tables and their row
   order, component values, resources, parents, the dropped-command count,
   and the simulation clock (the frame count, each stage's turns, fixed-step
   accumulator and dropped time, the time scale), so the same dts replay the
   same steps; and the change stamps (ECS_CHANGED hands out the same batches). Enabled flags are configuration and are not in it (a rollback
   never un-pauses a game); a stage registered after the snapshot starts
   from zero. Restoring one makes the world exactly that again; registered
   components, systems, stages and queries stay (cached queries stay valid), and no event
   hook runs: values are destroyed (dtor) and copied in (ctor + copy) only.
   A snapshot needs the same registrations (the first ids, by name, size and
   kind) as the world it is restored into, else ECS_ERR_ARG. Take and restore
   are for between frames: inside a system, a hook, a defer block or an open
   query loop they fail with ECS_ERR_BUSY. Command buffers you own are not
   part of a snapshot. The snapshot lives in the world's allocator; write and
   restore report errors through the world it came from, so free snapshots
   before their world. Values (and resources) with a dtor need a copy hook. */
typedef struct ecs_snapshot ecs_snapshot;
ECS_API ecs_snapshot *ecs_snapshot_take(ecs_world *w);                  /* NULL + error */
ECS_API ecs_result    ecs_snapshot_restore(ecs_world *w, const ecs_snapshot *s);
ECS_API void          ecs_snapshot_free(ecs_snapshot *s);               /* NULL is fine */
/* A save file: versioned, little-endian framing, its own length up front,
   checksummed; component values are their bytes as this platform lays them
   out (or serialize's output), so files move between builds of one
   platform, not between platforms. Components are matched by name and size,
   not by id, so a build that registers them in another order reads it. A
   component or resource with ctor/dtor/copy/move needs serialize/deserialize,
   else saving fails with ECS_ERR_ARG naming it.
   ecs_snapshot_save hands the bytes to write in pieces (memory, a socket, a
   compressor); a write that returns an error stops it and save returns that
   error. ecs_snapshot_load asks read for exactly the bytes the snapshot
   has (never past its end, so snapshots can follow each other in a stream);
   read returns how many it gave, short only at the end of its data. A read
   that comes up short, or bytes that are not a valid snapshot, one naming a
   component w lacks (with values, or with another size): NULL +
   ECS_ERR_ARG (out of memory: ECS_ERR_NOMEM); w is never changed. A failed
   load may have read part of the snapshot's bytes, or all of them. A loaded
   snapshot keeps the bytes it read and its plain columns stay in them (no
   second copy). */
typedef ecs_result (*ecs_write_fn)(const void *bytes, size_t size, void *ctx);   /* ECS_OK, or
                                                    an error that stops ecs_snapshot_save */
typedef size_t     (*ecs_read_fn)(void *bytes, size_t size, void *ctx);   /* bytes given */
ECS_API ecs_result    ecs_snapshot_save(const ecs_snapshot *s, ecs_write_fn write, void *ctx);   /* above */
ECS_API ecs_snapshot *ecs_snapshot_load(ecs_world *w, ecs_read_fn read, void *ctx);   /* above */
/* The bytes ecs_snapshot_save writes (to size a ring buffer); 0 + error if
   it would fail (a value that cannot be written, a serialize hook failing). */
ECS_API size_t        ecs_snapshot_size(const ecs_snapshot *s);
#ifndef ECS_NO_STDIO
/* The same through a FILE * (read: the stream up to the snapshot's end). */
ECS_API ecs_result    ecs_snapshot_write(const ecs_snapshot *s, FILE *out);
ECS_API ecs_snapshot *ecs_snapshot_read(ecs_world *w, FILE *in);   /* (as ecs_snapshot_load) */
#endif
/* A 64-bit hash of the world's state: the slot counters, then per non-empty
   table in iteration order its handles and, by component name, component
   bytes (through serialize where a component has it: what an owned string
   says, not where it lives); then parents and resources (by name, through
   serialize too). Names, not ids, so two builds that register components
   in another order hash alike; the bytes are this platform's. It hashes
   bytes, so padding inside a component struct must be deterministic: zero
   it (memset, or designated initialisers of the whole struct) or avoid it
   with explicit fields. Never 0 for a world: 0 means refused, with
   ecs_last_error saying why: a component with live values, or a resource,
   that has lifecycle hooks (ctor/dtor/copy/move) but no serialize (its
   bytes would be pointers: identical worlds would never agree), or a call
   while systems run (ECS_ERR_BUSY; an EXCLUSIVE system may call it). */
ECS_API uint64_t      ecs_world_hash(ecs_world *w);

/* ---- >>api: queries and iteration ---------------------------------------- */
#define ECS_MAX_TERMS 16
typedef enum ecs_access { ECS_READ = 1, ECS_WRITE = 2 } ecs_access;  /* WRITE implies read */
typedef enum ecs_oper   { ECS_AND = 0, ECS_NOT, ECS_OPTIONAL, ECS_CHANGED } ecs_oper;
          /* ECS_CHANGED: an AND term that also filters batches by change (see
             "Change detection" below); {health, ECS_READ, ECS_CHANGED} */
typedef struct ecs_term { ecs_id id; ecs_access access; ecs_oper oper; } ecs_term;
                        /* access 0 means ECS_READ; a term list ends at the first id 0 */
/* Terms written short: .terms = {ECS_TERM_W(pos), ECS_TERM_R(vel)}. */
#define ECS_TERM_R(id)   {(id), ECS_READ, ECS_AND}
#define ECS_TERM_W(id)   {(id), ECS_WRITE, ECS_AND}
#define ECS_TERM_NOT(id) {(id), ECS_READ, ECS_NOT}
#define ECS_TERM_OPT(id) {(id), ECS_READ, ECS_OPTIONAL}

/* Sorted iteration: order_by (the id of one of the query's ECS_AND terms)
   with compare (pure: no library calls; negative, 0, positive as strcmp):
   every matched row in ascending order of compare on its order_by value
   (NULL for a tag), ties by the entity handle, in batches that are runs of
   consecutive rows of one table. The sort happens when a loop starts, and
   re-sorts only what changed since the last one. A sorted loop locks every
   table it matches until it ends; a second loop of the same query while one
   is open is ECS_ERR_BUSY; inside ordinary systems only MAIN_THREAD ones may
   loop a sorted query. ECS_CHANGED terms with order_by are ECS_ERR_ARG. */
typedef int (*ecs_compare_fn)(ecs_entity a, const void *va, ecs_entity b, const void *vb, void *ctx);
/* Grouped iteration: group_by (pure: no library calls) gives each matched
   table a group from its ids (render layers, lanes: usually its tags); it is
   called on thread 0 once per query and table. Loops visit tables in
   ascending group value (ties: table creation order); ecs_iter_set_group
   restricts a loop to one group. */
typedef uint64_t (*ecs_group_fn)(const ecs_world *w, const ecs_id *table_ids, int id_count, void *ctx);
typedef struct ecs_query_desc {
    ecs_term terms[ECS_MAX_TERMS];
    ecs_id order_by; ecs_compare_fn compare; void *compare_ctx;   /* sorted iteration (0: none) */
    ecs_group_fn group_by; void *group_ctx;   /* grouped iteration (NULL: table creation order);
                                                 with both, groups first, sorted within each */
} ecs_query_desc;   /* (initialise it with .terms = {...}: a positional {{...}} leaves fields out) */
typedef struct ecs_query ecs_query;
typedef struct ecs_commands ecs_commands;

typedef struct ecs_iter {
    ecs_world *world;
    ecs_system system;            /* 0 outside systems */
    int count;                    /* rows in this batch */
    const ecs_entity *entities;   /* count handles */
    float dt;                     /* the dt passed to ecs_progress times the time scale
                                     (ecs_world_set_time_scale; unscaled stages: as
                                     passed); fixed_dt in a fixed-step stage */
    float real_dt;                /* the dt passed to ecs_progress, unscaled */
    void *ctx;                    /* the system's ctx */
    ecs_commands *commands;       /* deferred structural changes; NULL for a
                                     plain query outside defer mode */
    int thread;                   /* 0 .. threads-1; 0 = the ecs_progress caller */
    int chunk;                    /* this batch's chunk within its system's run this
                                     frame: 0-based, in table then row order, the same
                                     for any thread count; 0 if not chunked */
    int batch;                    /* this batch's index within the system's run (or the
                                     query loop): 0 first; equals chunk when chunked */
    /* private state follows; do not touch */
    struct {
        void *fields[ECS_MAX_TERMS];
        const ecs_term *terms;    /* for the size check of ECS_FIELD */
        int term_count;           /* fields past it read as NULL */
        ecs_query *query;
        void *table;              /* the table this batch locks, or NULL */
        uint32_t cursor;          /* next entry of the query's table list */
        int locks;                /* batches lock their table (not while systems run) */
        uint32_t skip;            /* ecs_iter_skip_changes: this batch's terms that wrote nothing */
        uint32_t row;             /* a query with ECS_CHANGED terms: where the next batch may start */
        uint32_t held, held_row;  /* a query loop's batch out: its match + 1, its first row */
        uint64_t only;            /* ecs_iter_set_group: the one group this loop visits */
        bool restricted;          /* ...if set */
        bool sorted;              /* a sorted loop: cursor walks the query's runs, tables locked */
    } priv;
} ecs_iter;

/* Column of term `term` (0-based index into desc.terms) for this batch:
   `count` contiguous values; NULL for a NOT term, an OPTIONAL term the batch
   lacks, a tag, or an index past the last term. */
ECS_API void *ecs_field(const ecs_iter *it, int term);
/* As ecs_field, checking that size is the term's component size: NULL and
   ECS_ERR_ACCESS (naming the system and id) if not, when ECS_CHECK_ACCESS. */
ECS_API void *ecs_field_sized(const ecs_iter *it, int term, size_t size);
#define ECS_FIELD(it, T, i) ((T *)ecs_field_sized((it), (i), sizeof(T)))

/* A cached query: it keeps the list of matching tables and is told about new
   tables as they appear. NULL (ECS_ERR_ARG / ECS_ERR_NOMEM) on a bad term
   (unknown id, a resource, bad oper/access) or allocation failure. A query
   with no terms matches every entity. */
ECS_API ecs_query *ecs_query_new(ecs_world *w, const ecs_query_desc *desc);
/* Starts an iteration. Batches come one table at a time, in a deterministic
   order (table creation order, or ascending group with group_by; then row
   order). While a batch is out, its
   table is locked against structural changes (ECS_ERR_BUSY); use
   ecs_defer_begin/end to change structure while iterating. */
ECS_API ecs_iter   ecs_query_iter(ecs_world *w, ecs_query *q);
ECS_API bool       ecs_query_next(ecs_iter *it);   /* false when done */
/* Restricts a loop of a grouped query to the tables of one group; call it
   before the first ecs_query_next (ECS_ERR_ARG later, or for a query without
   group_by; ECS_ERR_NOMEM if the group's change mark finds no room). Such a
   loop completes only its group's tables for change detection: its next
   ECS_CHANGED loop (and ecs_query_changed) compare them with this loop's
   end, the other groups' tables with their own latest loop. */
ECS_API ecs_result ecs_iter_set_group(ecs_iter *it, uint64_t group);
/* The current batch's group (0 for a query without group_by). */
ECS_API uint64_t   ecs_iter_group(const ecs_iter *it);
/* Releases the lock of an iteration left before ecs_query_next returned false. */
ECS_API void       ecs_iter_fini(ecs_iter *it);
ECS_API size_t     ecs_query_count(ecs_world *w, ecs_query *q);  /* matching entities */
ECS_API void       ecs_query_free(ecs_query *q);

/* Change detection: {id, access, ECS_CHANGED} matches like ECS_AND and
   hands out only rows whose column of id may have changed since the
   system's previous run (a query: its previous complete loop; before the
   first, all): blocks of 1024 rows, never leaving a changed row out; with
   several such terms, any counts. A change: a batch with a WRITE term on it
   (unless it called ecs_iter_skip_changes), ecs_set / ecs_get_mut /
   ecs_cmd_set, an entity entering the table (adding the id too), a row
   moved to fill a hole. A system's own writes do not count for it (nor, for
   a query loop, its own or its system's). The same batches on any thread
   count. Stamps are kept from the first ECS_CHANGED term or
   ecs_query_changed on (a store per block written). Such a query is marked
   by each complete loop: one loop at a time, not in two systems at once. */
/* True if an id q reads may have changed in a matching table, or a table
   was added or emptied, since q's previous complete loop: loops mark q from
   its first call between frames on (that call, and any in a frame before
   it, return true); that call turns stamps on. */
ECS_API bool       ecs_query_changed(ecs_world *w, ecs_query *q);
/* This batch wrote nothing through WRITE term `term`: no change counts. */
ECS_API void       ecs_iter_skip_changes(ecs_iter *it, int term);

/* ---- >>api: deferred commands -------------------------------------------- */
/* A command buffer records structural changes and applies them later, in
   recording order. ecs_cmd_create returns a pending handle, usable in later
   commands of the same buffer and turned into a live entity at apply time.
   A command whose target is dead when it applies is dropped and counted
   (ecs_commands_dropped), never an error that stops the rest. Recording
   returns ECS_ERR_ARG for an unknown id, a NULL value for a component, or a
   pending handle of another buffer, ECS_ERR_STALE for entity 0, ECS_ERR_NOMEM
   if the buffer cannot grow, ECS_ERR_BUSY from a hook of the buffer's own
   apply. A live target is only checked when applied.
   Values are copied when recorded, so the caller's may die right after the
   call: a component with lifecycle hooks is held as a constructed copy (ctor
   + copy on the recording thread, moved when the buffer grows), copied into
   the entity when the command applies and then destroyed; a buffer freed or
   dropped unapplied, or a dropped command, destroys what it holds. Plain
   components are held as bytes. */
/* 0 on failure. Each applied buffer takes a new serial, and serials are
   never reused, so a stale pending handle never names a newer entity; a
   world has 2^ECS_PENDING_SERIAL_BITS of them (2.9 years of 100 buffers
   applied at 60 fps), then ecs_cmd_create fails with ECS_ERR_NOMEM. A buffer
   holds at most 2^24 pending creates and 2 GiB of values (ECS_ERR_ARG). */
ECS_API ecs_entity ecs_cmd_create(ecs_commands *c);
ECS_API ecs_result ecs_cmd_destroy(ecs_commands *c, ecs_entity e);              /* as ecs_destroy */
ECS_API ecs_result ecs_cmd_add(ecs_commands *c, ecs_entity e, ecs_id id);       /* as ecs_add */
ECS_API ecs_result ecs_cmd_remove(ecs_commands *c, ecs_entity e, ecs_id id);    /* as ecs_remove */
ECS_API ecs_result ecs_cmd_set(ecs_commands *c, ecs_entity e, ecs_id id,
                               const void *value);   /* as ecs_set; value copied now (above) */
/* Pending handles of the buffer allowed on both sides; a command whose child
   or parent is dead when it applies, or that would make a loop, is dropped. */
ECS_API ecs_result ecs_cmd_set_parent(ecs_commands *c, ecs_entity child, ecs_entity parent);
/* An instance of prefab (as ecs_instantiate, values copied when it applies):
   a pending handle of its root, or 0 (ECS_ERR_ARG / ECS_ERR_STALE if prefab
   is not a live prefab now). If the prefab died before, it is dropped. */
ECS_API ecs_entity ecs_cmd_instantiate(ecs_commands *c, ecs_entity prefab);

/* A buffer of your own, for recording outside systems. */
ECS_API ecs_commands *ecs_commands_new(ecs_world *w);
/* Applies and clears c. If a command fails for lack of memory (or hits a
   locked table: ECS_ERR_BUSY), applying stops there and the rest stays in the
   buffer; calling again resumes. ECS_ERR_BUSY in defer mode. */
ECS_API ecs_result ecs_commands_apply(ecs_world *w, ecs_commands *c);
ECS_API void ecs_commands_free(ecs_commands *c);   /* unapplied commands are dropped */
/* Commands dropped so far because their target was dead. */
ECS_API size_t ecs_commands_dropped(const ecs_world *w);

/* Defer mode: between begin and end, ecs_create/create_many/destroy/add/
   remove/set are recorded instead of applied (their arguments are still
   checked), so a query loop may change structure freely. Blocks nest; the
   outermost end applies everything in call order, with ecs_commands_apply's
   rules; if that stops on ECS_ERR_NOMEM, ecs_defer_end again resumes it. */
ECS_API ecs_result ecs_defer_begin(ecs_world *w);
ECS_API ecs_result ecs_defer_end(ecs_world *w);   /* not in defer mode, nothing to resume: ECS_ERR_ARG */

/* ---- >>sysapi: systems --------------------------------------------------- */
#define ECS_MAX_DEPS 16
enum { ECS_SYSTEM_MAIN_THREAD = 1u << 0,  /* always runs on the thread that calls ecs_progress */
       ECS_SYSTEM_EXCLUSIVE   = 1u << 1 };/* runs alone with the whole world: a sync point; it
                                             may make immediate structural changes */
typedef void (*ecs_system_fn)(ecs_iter *it);
/* A run condition: whether a system (or a stage) runs this turn. It only
   reads; a system's reads what the system may read (the access checks apply). */
typedef bool (*ecs_condition_fn)(ecs_world *w, void *ctx);

typedef struct ecs_system_desc {
    const char *name;                   /* unique in the world */
    ecs_system_fn fn;                   /* called once per batch of matched rows; a system
                                           with no terms is called once per frame, count 0 */
    void *ctx;
    ecs_term terms[ECS_MAX_TERMS];      /* its query, with the access of each term */
    ecs_id reads[ECS_MAX_TERMS];        /* other data it reads: resources, ecs_get on any
                                           entity, event types (ecs_events) (the list ends
                                           at the first 0) */
    ecs_id writes[ECS_MAX_TERMS];       /* other data it writes: resources, ecs_get_mut */
    const char *after[ECS_MAX_DEPS];    /* runs after these systems (names may be registered
                                           later; an unknown name is a validation problem) */
    const char *before[ECS_MAX_DEPS];
    const char *independent_of[ECS_MAX_DEPS]; /* escape hatch: never inferred against, never
                                                 a race with these */
    ecs_stage stage;
    uint32_t flags;
    int chunk_size;                     /* > 0: matched rows are split into chunks of at most
                                           this many rows, run in parallel on all threads */
    ecs_condition_fn run_if;            /* NULL: always. Asked once per turn when the system
                                           is about to run (its predecessors done; before any
                                           chunk is dispatched), under its declarations: it
                                           sees this turn's values of what it reads. On
                                           thread 0 for MAIN_THREAD and EXCLUSIVE systems,
                                           else on any of the world's threads */
    void *run_if_ctx;
    int interval;                       /* > 1: runs on every interval-th turn of its stage
                                           (frames; steps in a fixed-step stage), counted
                                           from the stage's first: 0, interval, ... */
    ecs_id emits[ECS_MAX_TERMS];        /* event types it emits with ecs_emit (the list ends
                                           at the first 0); an event type it reads goes in
                                           reads. Neither is a conflict or an order */
    ecs_id order_by;                    /* as ecs_query_desc: its batches in sorted order,
                                           sorted when its run starts (not chunked) */
    ecs_compare_fn compare;
    void *compare_ctx;
    ecs_group_fn group_by;              /* as ecs_query_desc: its batches (and a chunked
                                           system's chunks) follow ascending group order */
    void *group_ctx;
} ecs_system_desc;

/* Registers a system; the graph is built and checked by ecs_validate or the
   next ecs_progress. 0 with ECS_ERR_ARG for a bad desc (NULL name or fn, bad
   term, unknown id in reads/writes, an event type in terms or writes, an id
   in emits that is not an event type, unknown stage or flag, chunk_size < 0 or
   > 0 on a MAIN_THREAD or EXCLUSIVE system, interval < 0, an empty
   dependency name),
   ECS_ERR_NOMEM, or ECS_ERR_BUSY during ecs_progress. A name used twice is
   accepted here and reported by ecs_validate (DUPLICATE_NAME). */
ECS_API ecs_system ecs_system_add(ecs_world *w, const ecs_system_desc *desc);
/* A system that does not run in a turn (disabled, its stage disabled,
   run_if false, not its interval) is skipped as if it had run instantly: its
   successors do not wait, it records nothing, no call and no chunk is made,
   its stats count no run. Validation and the access checks treat it as
   always running: a system that might run is part of the proof.
   Enabling is allowed between frames and from an EXCLUSIVE or MAIN_THREAD
   system (ECS_ERR_BUSY elsewhere; ECS_ERR_ARG for an unknown system) and
   takes effect at the next turn of its stage. Enabled flags are
   configuration: snapshots do not store them (a rollback never un-pauses). */
ECS_API ecs_result ecs_system_enable(ecs_world *w, ecs_system s, bool enabled);
ECS_API bool       ecs_system_enabled(const ecs_world *w, ecs_system s);   /* false if unknown */
/* The first system registered under name, or 0. */
ECS_API ecs_system ecs_system_lookup(const ecs_world *w, const char *name);
ECS_API const char *ecs_system_name(const ecs_world *w, ecs_system s);   /* NULL if unknown */
ECS_API uint32_t   ecs_system_count(const ecs_world *w);
ECS_API ecs_stage  ecs_system_stage(const ecs_world *w, ecs_system s);   /* 0 if unknown */
ECS_API uint32_t   ecs_system_flags(const ecs_world *w, ecs_system s);       /* 0 if unknown */
ECS_API int        ecs_system_chunk_size(const ecs_world *w, ecs_system s);  /* 0: not chunked */
/* Its chunks, to size per-chunk arrays: inside the system, this frame's run
   (the same in every chunk); between frames, its latest run; 1 for an
   unchunked system that ran; 0 if it has not run or is unknown. While
   systems run, only a system's own count may be asked (another's: 0 and
   ECS_ERR_BUSY, as other threads may be setting it). */
ECS_API int        ecs_system_chunks(const ecs_world *w, ecs_system s);
/* A new stage, run after all earlier ones; 0 on failure. Stage 0 ("default")
   always exists, an ordinary stage. */
ECS_API ecs_stage  ecs_stage_add(ecs_world *w, const char *name);   /* ecs_stage_init with a name */

/* Stages with a clock. An ordinary stage takes one turn per ecs_progress.
   A fixed-step stage (fixed_dt > 0) adds the frame's dt (times the time
   scale unless unscaled) to its accumulator, a double, and takes one step per
   whole fixed_dt in it, at most max_steps a frame (the rest stays for later
   frames); after the frame's steps, time beyond max_lag is dropped and
   counted. An accumulator holding exactly k * fixed_dt takes k steps. Each
   step has it->dt == fixed_dt and its own sync point.
   Stages that name a fixed-step stage in step_with (registered right after
   it or after another member, fixed_dt 0) form its step group: they share
   its clock, and each step runs the whole group in order (physics, sync,
   damage, sync, death, sync), then the next step. Disabling the first stage
   (or its run_if false) stops the group: no step, nothing accumulated that
   frame; disabling a member skips only it. A group keeps its place in the
   frame among ordinary stages. Steps a group does not take because it was
   disabled (by one of its steps) or the frame stopped on an error are
   dropped and counted; a frame that stops adds no time to the stages after. */
typedef struct ecs_stage_desc {
    const char *name;          /* NULL: "stage N" */
    float fixed_dt;            /* > 0: a fixed-step stage */
    int max_steps;             /* steps per ecs_progress at most; 0 = 8 */
    float max_lag;             /* seconds the accumulator may keep, >= fixed_dt; 0 = 0.25
                                  or fixed_dt if longer */
    ecs_stage step_with;       /* joins this fixed-step stage's step group (0: none) */
    bool presentation;         /* drawing, sounds: takes no turn while the world is
                                  resimulating (a rollback replay; ecs_world_set_resimulating) */
    bool unscaled;             /* ignores ecs_world_set_time_scale (menus, UI) */
    ecs_condition_fn run_if;   /* the whole stage: asked on thread 0 at the start of its
                                  frame (a member: of each step), before time is added;
                                  false = skipped this time. It reads only */
    void *run_if_ctx;
} ecs_stage_desc;
/* 0 (and ECS_ERR_ARG) for a bad desc: fixed_dt, max_steps or max_lag
   negative or not finite, max_lag below fixed_dt; step_with naming a stage that is not fixed-step,
   or not the last registered stage's group; a member with its own clock
   (fixed_dt, max_steps, max_lag or unscaled set). ECS_ERR_BUSY during
   ecs_progress. */
ECS_API ecs_stage  ecs_stage_init(ecs_world *w, const ecs_stage_desc *desc);
/* As ecs_system_enable, for a whole stage (turns it skips do not count). */
ECS_API ecs_result ecs_stage_enable(ecs_world *w, ecs_stage st, bool enabled);
ECS_API bool       ecs_stage_enabled(const ecs_world *w, ecs_stage st);   /* false if unknown */
/* A fixed-step stage's accumulator / fixed_dt after its steps this frame,
   for interpolating what is drawn between steps (above 1 only when max_steps
   cut a frame short); 0 for an ordinary or unknown stage. */
ECS_API float      ecs_stage_alpha(const ecs_world *w, ecs_stage st);
typedef struct ecs_stage_stats {
    uint64_t steps;            /* turns taken so far: frames for an ordinary stage, steps
                                  for a fixed-step one */
    int steps_last;            /* turns in the latest ecs_progress */
    double dropped_time;       /* seconds max_lag dropped so far */
} ecs_stage_stats;
/* Stage st's clock; ECS_ERR_ARG for an unknown stage or a NULL out. */
ECS_API ecs_result ecs_stage_stats_get(const ecs_world *w, ecs_stage st, ecs_stage_stats *out);
ECS_API const char *ecs_stage_name(const ecs_world *w, ecs_stage stage);  /* NULL if unknown */
ECS_API uint32_t   ecs_stage_count(const ecs_world *w);   /* stages are 0 .. count - 1 */

/* Two systems CONFLICT on an id when both access it and at least one writes
   it (terms with ECS_WRITE, or writes). NOT terms access nothing. Two queries
   that can never match the same table (an AND term on an id in one, a NOT
   term on it in the other) do not conflict through their terms (their reads
   and writes lists still do). Systems in different stages never conflict; an
   EXCLUSIVE system conflicts with every other system of its stage.
   independent_of frees the order of two systems, never their data: if they
   conflict, they run in either order but never at the same time. */

/* ---- >>sysapi: events ---------------------------------------------------- */
/* Events between systems. A system emits into its own buffer (one per
   chunk), so emitters never conflict with each other or with readers: an
   event type in emits or reads is no conflict and infers no order. At the
   end of each stage's turn, in this order: (1) commands are applied; (2)
   pending handles in payloads (entity_fields) become live (entities
   destroyed in (1) are dead there: carry what readers need); (3) observers
   run on thread 0 in registration order, each once with all of this
   point's events of its type; (4) the events become readable. (The sync
   point before an EXCLUSIVE system applies commands and resolves handles;
   its events wait for the stage's end.) Delivery order: stage turns as they
   happen (a step group: step 0's stages, then step 1's...), then the sync
   points that applied them (one before an EXCLUSIVE system, then the
   stage's end: as for commands), then system registration, chunk,
   emission; ecs_world_emit's events come first at the next delivery
   (between frames: at the start of the next ecs_progress).
   Every reading system sees every event once per run: each run gets, in
   every batch, the same array, the events delivered since its previous run
   (a reader in a later stage sees them the same turn; in the same or an
   earlier stage, next turn). A system that runs but matches no rows used its
   window. One skipped by run_if or interval keeps it: at each skipped turn
   at most ECS_EVENT_BACKLOG events per type (the oldest beyond are dropped
   and counted in events_dropped), plus what arrives until it runs; a
   disabled one, or one in a disabled stage, discards it at each turn of
   its stage. Unread events, readers' places and events queued by
   ecs_world_emit are part of snapshots, save files and ecs_world_hash.
   Payloads are bytes: C leaves the padding of automatic structs undefined
   (designated initialisers and compound literals too, so ECS_EMIT as well),
   so memset a padded payload before filling it (or fill ecs_emit_new's
   zeroed slot field by field), or give the type serialize, or snapshots,
   save files and ecs_world_hash see the garbage. */
typedef struct ecs_event_desc {
    const char *name;
    size_t size, align;         /* as ecs_component; size 0: no payload (NULL is fine) */
    size_t entity_fields[ECS_MAX_ENTITY_FIELDS];   /* ecs_entity members: a pending handle of
                                   the emitting chunk's it->commands becomes live at delivery */
    int entity_field_count;
    ecs_serialize_fn serialize;     /* as for components: the hash and save files use them */
    ecs_deserialize_fn deserialize;
    void *ctx;                      /* passed to serialize / deserialize */
} ecs_event_desc;
/* Registers an event type (an id: it goes in emits and reads, never in
   terms, writes, queries or on entities). The same name and desc again
   returns the same id; 0 + ECS_ERR_ARG for a bad desc or a name registered
   otherwise; ECS_ERR_BUSY while systems run. */
ECS_API ecs_id ecs_event_init(ecs_world *w, const ecs_event_desc *desc);
ECS_API ecs_id ecs_event(ecs_world *w, const char *name, size_t size, size_t align);  /* short form */
#define ECS_EVENT(w, T) ecs_event((w), #T, sizeof(T), ECS__ALIGNOF(T))
/* Inside a system: appends a copy of payload (the type's size). ECS_ERR_ARG
   for an unknown or non-event id, a NULL payload of a sized type, or outside
   a system (the caller's to handle: the frame does not report it);
   ECS_ERR_ACCESS (checked builds) for a type not in its emits, which the
   frame reports; ECS_ERR_NOMEM if the buffer cannot grow (so does the
   frame). */
ECS_API ecs_result ecs_emit(ecs_iter *it, ecs_id event, const void *payload);
/* The same, filled in place (no copy: the fastest emit): room for one
   payload of size bytes (which must be the type's: else NULL and
   ECS_ERR_ARG), zeroed, valid until the system's next emit; NULL when
   ecs_emit would fail. ECS_EMIT(it, T, event, {fields...}) fills it from a
   braced initializer (its padding, if the type has any, is the compound
   literal's: unspecified). */
ECS_API void *ecs_emit_new(ecs_iter *it, ecs_id event, size_t size);
#ifdef __cplusplus
#  define ECS_EMIT(it, T, event, ...) do { T *ecs__slot = (T *)ecs_emit_new((it), (event), sizeof(T)); \
                                           if (ecs__slot) *ecs__slot = T __VA_ARGS__; } while (0)
#else
#  define ECS_EMIT(it, T, event, ...) do { T *ecs__slot = (T *)ecs_emit_new((it), (event), sizeof(T)); \
                                           if (ecs__slot) *ecs__slot = (T)__VA_ARGS__; } while (0)
#endif

/* Many events of one type from a batch, the fastest way: ecs_emitter_get
   once, then ecs_emitter_next(em, size) per event, inline: a zeroed payload
   to fill in place (size: the type's; give a constant sizeof). NULL when
   memory runs out (ECS_ERR_NOMEM, reported by the frame), for the wrong
   size (ECS_ERR_ARG) or a NULL emitter. Events keep their order among the
   batch's other emits; nothing to close. Use it in its batch only (another
   chunk has its own; refused from the next sync point on). */
typedef struct ecs_emitter {
    unsigned char *next, *end;  /* free room of the buffer; private, as the rest */
    size_t size;
    ecs_world *world;
    ecs_commands *commands;     /* set by each ecs_emitter_get (buffers move as chunks are added) */
    uint32_t buf;               /* its type's events in commands */
    bool live;                  /* got in the current stage turn */
} ecs_emitter;
/* Inside a system: the batch's emitter of a type in its emits; NULL when
   ecs_emit would fail (the same checks and errors) or size is not the type's. */
ECS_API ecs_emitter *ecs_emitter_get(ecs_iter *it, ecs_id event, size_t size);
#define ECS_EMITTER(it, T, event) ecs_emitter_get((it), (event), sizeof(T))
ECS_API void *ecs_emitter_more(ecs_emitter *em, size_t size);   /* ecs_emitter_next's out-of-line half */
static inline void *ecs_emitter_next(ecs_emitter *em, size_t size) {
    if (!em || em->next == em->end || size != em->size) return ecs_emitter_more(em, size);
    unsigned char *slot = em->next;
    em->next += size;
    memset(slot, 0, size);
    return slot;
}

/* Between frames or inside an observer: delivered at the next delivery (the
   start of the next frame, or the end of the current stage's turn).
   ECS_ERR_BUSY elsewhere while ecs_progress runs. */
ECS_API ecs_result ecs_world_emit(ecs_world *w, ecs_id event, const void *payload);
/* Inside a system: this run's events of a type in its reads (count of them,
   NULL if none); NULL, 0 and ECS_ERR_ACCESS for a type it does not read. */
ECS_API const void *ecs_events(const ecs_iter *it, ecs_id event, int *count);
/* The same, checking the payload size: NULL, 0 and ECS_ERR_ACCESS if it differs. */
ECS_API const void *ecs_events_sized(const ecs_iter *it, ecs_id event, size_t size, int *count);
#define ECS_EVENTS(it, T, event, count) ((const T *)ecs_events_sized((it), (event), sizeof(T), (count)))

/* Observers: called on thread 0 at delivery (the end of a stage's turn),
   once with every event of their type there (never with zero). Structural calls they
   make are applied right after them; events they emit with ecs_world_emit
   join the next delivery. reads / writes: what they may touch (the access
   checks refuse the rest). A snapshot restore re-delivers nothing to them. */
typedef uint32_t ecs_observer;
typedef void (*ecs_observer_fn)(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx);
typedef struct ecs_observer_desc {
    ecs_id event;
    ecs_observer_fn fn;
    void *ctx;
    ecs_id reads[ECS_MAX_TERMS], writes[ECS_MAX_TERMS];   /* ids it touches (lists end at 0) */
    bool skip_when_resimulating;   /* sounds, logs, particles: not during a rollback replay */
} ecs_observer_desc;
/* 0 + ECS_ERR_ARG for a bad desc, ECS_ERR_BUSY during ecs_progress.
   Handles are never reused. */
ECS_API ecs_observer ecs_observe(ecs_world *w, const ecs_observer_desc *desc);
/* ECS_ERR_ARG for an unknown observer, ECS_ERR_BUSY during ecs_progress. */
ECS_API ecs_result   ecs_unobserve(ecs_world *w, ecs_observer o);
/* While on, observers with skip_when_resimulating do not run and
   presentation stages take no turn (a rollback replays ticks that were
   already heard and seen; readers in those stages drop the replay's
   events, as in a disabled stage). Not part of snapshots. Between frames. */
ECS_API void ecs_world_set_resimulating(ecs_world *w, bool on);
/* Whether resimulating is on (false for NULL). */
ECS_API bool ecs_world_resimulating(const ecs_world *w);

/* ---- >>sysapi: validation ------------------------------------------------ */
typedef enum ecs_problem_kind {
    ECS_PROBLEM_CYCLE,           /* systems that must each run before the next, in a loop */
    ECS_PROBLEM_RACE,            /* two conflicting systems that nothing orders */
    ECS_PROBLEM_UNKNOWN_SYSTEM,  /* after/before/independent_of names no system */
    ECS_PROBLEM_DUPLICATE_NAME,
    ECS_PROBLEM_SELF_RACE,       /* a chunked system with a writes list: its chunks run at
                                    once and all write those ids; a == b == the system,
                                    id = the lowest such id */
    ECS_NOTE_READ_BEFORE_WRITE,  /* only in ecs_report.notes: a runs before b only through
                                    inferred order (no declared path a -> b), b writes id,
                                    which a reads, and a writes nothing b accesses: a sees
                                    last frame's value. The message says how to flip it.
                                    Never about an EXCLUSIVE system (it accesses
                                    everything, so that rule excludes it). */
    ECS_NOTE_EVENT_NEXT_FRAME    /* only in notes: a reads event type id, which b emits in
                                    the same stage, so a sees those events a turn late (they
                                    are delivered at the stage's end); the message says to
                                    move a to a later stage (of the step group, if fixed-step) */
} ecs_problem_kind;

typedef struct ecs_problem {
    ecs_problem_kind kind;
    ecs_system a, b;            /* RACE: the pair, a < b; UNKNOWN_SYSTEM: a is the referrer;
                                   DUPLICATE_NAME: a is the first, b the later system */
    ecs_id id;                  /* RACE: the lowest contested id (0: an EXCLUSIVE system) */
    bool write_write;           /* RACE: both write that id */
    const ecs_system *cycle;    /* CYCLE: a shortest loop, each system at most once;
                                   cycle[i] runs before cycle[i+1] and the last before the
                                   first (cycle_len <= member_count) */
    int cycle_len;
    const ecs_system *members;  /* CYCLE: every system of the strongly connected component,
                                   ascending */
    int member_count;
    const char *name;           /* UNKNOWN_SYSTEM / DUPLICATE_NAME: the name */
    const char *message;        /* one readable line naming systems and data, with a fix hint */
} ecs_problem;

typedef struct ecs_report {
    int count;                  /* problems listed (at most 10,000) */
    const ecs_problem *problems;
    int note_count;             /* notes listed (at most 10,000); never make validation fail */
    const ecs_problem *notes;
    int omitted;                /* problems beyond the cap: counted, not listed */
    int notes_omitted;
} ecs_report;

/* Builds the system graph (explicit, stage and inferred order; see
   ecs_world_desc.order) and checks it. ECS_OK iff there are no problems
   (notes never count), ECS_ERR_INVALID_GRAPH otherwise, ECS_ERR_NOMEM if it
   could not finish. out (may be NULL) receives the report, valid until the
   next validation. One CYCLE per strongly connected component with a loop
   (the loop shown is a shortest one: of all loops in components of modest
   size, else of those through its first-registered system); one RACE per
   unordered conflicting pair; at most 10,000 problems and 10,000 notes are
   listed, the rest counted in omitted / notes_omitted. */
ECS_API ecs_result ecs_validate(ecs_world *w, ecs_report *out);
#ifndef ECS_NO_STDIO
/* One problem per line, then a summary line. */
ECS_API void ecs_report_print(const ecs_report *r, FILE *out);
#endif
/* True when a always finishes before b starts, through declared, inferred or
   stage order (validating first if the graph changed). False for a == b. */
ECS_API bool ecs_system_precedes(ecs_world *w, ecs_system a, ecs_system b);

/* ---- >>sysapi: running --------------------------------------------------- */
/* Runs one frame: every stage once (a disabled one, or one whose run_if says
   no, not at all; a fixed-step group the steps its clock gives, see
   ecs_stage_init); validates if the graph changed (ECS_ERR_INVALID_GRAPH,
   running nothing, if it has problems); systems run in parallel where the
   graph allows; commands recorded in it->commands are applied at the end of
   each stage's turn and before each EXCLUSIVE system, in the order stage,
   step, system registration, chunk, recording. ECS_ERR_BUSY from inside a system or in
   defer mode; ECS_ERR_NOMEM if memory ran out while commands were recorded
   or applied (the frame stops at that sync point; commands that did not
   apply are kept and applied first by the next call). While systems run,
   structural calls other than it->commands return ECS_ERR_BUSY, except in an
   EXCLUSIVE system. ECS_ERR_BUSY also while a query iteration is open (a loop
   left with break needs ecs_iter_fini).

   Debug access checks (ECS_CHECK_ACCESS; on unless NDEBUG). Inside a system
   that is not EXCLUSIVE, each of these is refused with ECS_ERR_ACCESS and an
   error naming the system and the id:
   - ecs_get / ecs_resource_get on an id it did not declare, ecs_get_mut /
     ecs_set on one it did not declare for writing: NULL / ECS_ERR_ACCESS;
   - in a chunked system, ecs_get / ecs_get_mut / ecs_set on an id it writes,
     of an entity outside its own batch, and ecs_resource_get of one it
     writes (other chunks write them at the same time);
   - ecs_query_iter on a query whose AND / OPTIONAL terms the system did not
     declare (a WRITE term needs write access; in a chunked system no term may
     touch what it writes): the iterator yields nothing;
   - ECS_FIELD(it, T, i) with sizeof(T) other than the component's size: NULL.
   With ecs_world_desc.check_reads (any build), a write through a READ field
   is caught after the batch. After a frame with any refusal, ecs_progress
   returns ECS_ERR_ACCESS and ecs_last_error holds the refusal of the
   lowest-registered system involved. */
ECS_API ecs_result ecs_progress(ecs_world *w, float dt);
/* As ecs_progress(w, dt), but every fixed-step group takes exactly `steps`
   steps and its accumulator is untouched: one netcode tick is steps = 1.
   ECS_ERR_ARG for steps < 0. Both refuse a dt that is negative or not
   finite (ECS_ERR_ARG, nothing run). */
ECS_API ecs_result ecs_progress_steps(ecs_world *w, int steps, float dt);
/* it->dt = dt * scale (slow motion, pause at 0), except in unscaled stages;
   fixed steps accumulate scaled time. Between frames or from an EXCLUSIVE or
   MAIN_THREAD system (from another system it is refused as an access: the
   frame returns ECS_ERR_ACCESS naming it); a negative or non-finite scale is
   refused (the error is set, the scale kept). Default 1. */
ECS_API void       ecs_world_set_time_scale(ecs_world *w, float scale);
ECS_API float      ecs_world_time_scale(const ecs_world *w);   /* the scale; 0 for NULL */
/* Threads that run systems, the caller included. */
ECS_API int ecs_thread_count(const ecs_world *w);

/* ---- >>sysapi: netcode --------------------------------------------------- */
/* The hash trace finds where two peers (or a run and its replay) diverged.
   While on, after each system the library hashes what it was allowed to
   write: its WRITE terms' columns in the tables its query matched (in
   match order, which is chunk order), its `writes` ids (their columns in
   every table, or the resource), and the commands and events it recorded
   (chunk order; pending handles by index, values through serialize where
   a component has it, a component with hooks and no serialize by count).
   It hashes on the thread that finishes the system, before any system
   ordered after it starts, so the entry is the same on any thread count
   and shuffle seed. After each turn's sync point it hashes the entity
   counters and every table's size. Per stage turn the list holds every
   system of the stage in registration order (ran false and hash 0 when it
   did not run: peers' lists line up), then the sync point (system 0). */
typedef struct ecs_hash_step {
    ecs_system system;         /* 0: the turn's sync point */
    ecs_stage stage;
    int step;                  /* the stage's step in this frame (0 for an ordinary stage) */
    bool ran;                  /* false: skipped, or nothing to do (hash 0) */
    uint64_t hash;
} ecs_hash_step;
/* Between frames; off by default (it costs a pass over what each system
   wrote). Turning it on or off empties the list. */
ECS_API void ecs_hash_trace_enable(ecs_world *w, bool on);
/* The latest ecs_progress's entries (count; *steps may be NULL), valid
   until the next ecs_progress. 0 when off or for NULL. */
ECS_API int  ecs_hash_trace(const ecs_world *w, const ecs_hash_step **steps);
/* Schedule shuffling, to find order dependence: with a seed other than 0,
   each frame takes a random order among systems the graph leaves
   unordered (on one thread too), hands a chunked system's chunks to threads
   in a random order, and delays workers at random before they take a task.
   A correct program's results (ecs_world_hash, the hash trace) do not
   change with the seed. Between frames (ECS_ERR_BUSY otherwise). */
ECS_API ecs_result ecs_world_set_shuffle_seed(ecs_world *w, uint64_t seed);
/* Deterministic randomness for a system's rows: a pure hash of the world's
   random_seed, the stage's turn count (the frame count outside systems),
   the system, the row's entity and salt; never of the shuffle seed or the
   thread. The same on any thread count, chunking and after a snapshot
   restore (the seed and the turn counts are in snapshots): chunked systems
   can jitter without a shared RNG (which would be a self race). row is in
   [0, it->count), or any value for an iterator without rows (entity 0);
   0 for a NULL it or a row outside. */
ECS_API uint64_t ecs_random(const ecs_iter *it, int row, uint32_t salt);

/* ---- >>sysapi: looking inside -------------------------------------------- */
/* Per-system and per-frame timings, from the latest timed frame. Reading the
   clock costs about as much as running a tiny system, so only some frames are
   timed: by default every 8th frame but at most one per ECS_TIMING_MS (50 ms),
   which keeps timing under 1% of a fast loop; ecs_timing_interval(w, n) times
   exactly every n-th frame (1 = every frame; 0 = back to the default). The
   first frame after systems or stages were added, and every frame while
   tracing, are timed too. */
ECS_API void ecs_timing_interval(ecs_world *w, int frames);
typedef struct ecs_system_stats {
    uint64_t runs;         /* turns in which it ran (frames; steps in a fixed-step stage):
                              not when skipped or when its query matches nothing */
    uint64_t timed;        /* of those, frames that timed it */
    double last_us;        /* work of one turn in the latest timed frame (all chunks
                              together; a fixed-step stage's: per step) */
    double avg_us;         /* moving average over the timed frames */
    uint32_t chunks;       /* chunks in the latest timed frame (1 if not chunked) */
    uint64_t events_dropped; /* events it never saw because more than ECS_EVENT_BACKLOG
                              of a type waited while it was skipped (run_if, interval) */
} ecs_system_stats;
typedef struct ecs_frame_stats {
    uint64_t frames;       /* frames run so far (a call that returned ECS_ERR_INVALID_GRAPH,
                              ECS_ERR_BUSY or ECS_ERR_ARG ran none; a snapshot restore sets
                              it back to the snapshot's) */
    uint64_t timed_frame;  /* the frame the numbers below come from */
    double wall_us;        /* that frame, start to end */
    double work_us;        /* the sum of every system's work in it (systems only) */
    double sync_us;        /* wall time in its sync points (applying commands, their hooks) */
    double sync_work_us;   /* thread time in its sync points, summed over threads (more
                              than sync_us when a sync point shared its work) */
    double critical_path_us; /* the longest dependency chain by average durations */
    double parallelism;    /* (work_us + sync_work_us) / wall_us: about 1.0 on one thread */
    int threads;
} ecs_frame_stats;
/* System s's figures, and the latest timed frame's; ECS_ERR_ARG for an
   unknown system or a NULL out. */
ECS_API ecs_result ecs_system_stats_get(const ecs_world *w, ecs_system s, ecs_system_stats *out);
ECS_API ecs_result ecs_frame_stats_get(const ecs_world *w, ecs_frame_stats *out);   /* see above */

/* Replays the scheduler's policy in a discrete-event simulation: the graph
   on `threads` threads, with durations[s - 1] for system s (any unit; NULL =
   the measured averages in microseconds, 1 for systems never timed). A
   chunked system is modelled as `threads` equal pieces. With measured
   durations it is the frame ecs_progress runs: each stage's measured
   sync-point time is added to it (thread 0's part as measured, the work it
   shared with the threads divided by `threads`), a
   stage whose measured work is below ECS_PARALLEL_MIN_NS runs on one thread,
   and each stage counts as many turns as it took in the latest timed frame
   (fixed steps; 0 if it was skipped). ECS_ERR_INVALID_GRAPH if the graph
   has problems. */
typedef struct ecs_sim_result {
    double makespan;       /* with ecs.h's policy: critical path first */
    double fifo_makespan;  /* with first-come-first-served, for comparison */
    double lower_bound;    /* per stage max(critical path, work / threads), summed */
    double critical_path;  /* summed over stages */
    double total_work;
    double sync;           /* the measured sync-point time included in each of the above
                              (0 when durations are given) */
} ecs_sim_result;
ECS_API ecs_result ecs_schedule_simulate(ecs_world *w, int threads, const double *durations,
                                         ecs_sim_result *out);   /* see above */

/* Records when each system and chunk ran, on which thread, plus frames,
   sync points and each thread's share of a sync point's work ("sync point
   work"; args: pieces) (args: frame, chunk, and step: the stage's turn
   within the frame, numbering fixed steps). A skipped system has no event.
   Turning it on starts a new recording. */
ECS_API void ecs_trace_enable(ecs_world *w, bool on);
#ifndef ECS_NO_STDIO   /* (ECS_NO_STDIO: without the two calls below) */
/* Writes the recording as Chrome trace-event JSON: open it in
   https://ui.perfetto.dev or chrome://tracing. */
ECS_API ecs_result ecs_write_trace(ecs_world *w, FILE *out);

/* The system graph for Graphviz (`dot -Tsvg`): stages as clusters, declared
   edges solid, inferred edges dashed, races red dotted, cycle edges bold red.
   Systems and stages that may be skipped (run_if, interval, disabled) have
   dashed borders and say why; fixed-step stages show their step and group;
   events go from emitter to reader, dotted green, labelled with the type.
   Works on an invalid graph too. */
ECS_API ecs_result ecs_write_dot(ecs_world *w, FILE *out);
#endif

#ifdef __cplusplus
}
#include <new>
#include <type_traits>
#include <utility>
/* A C++ type that is not plain data gets lifecycle hooks made of its own
   default constructor, copy assignment, move constructor and destructor, so
   a std::string member just works; plain data stays plain bytes. */
template <typename T> struct ecs__cxx_hooks {
    static void ctor(void *p, int n, void *) { for (int i = 0; i < n; i++) new (static_cast<T *>(p) + i) T(); }
    static void dtor(void *p, int n, void *) { for (int i = 0; i < n; i++) (static_cast<T *>(p) + i)->~T(); }
    static void copy(void *d, const void *s, int n, void *) {
        for (int i = 0; i < n; i++) static_cast<T *>(d)[i] = static_cast<const T *>(s)[i];
    }
    static void move(void *d, const void *s, int n, void *) {   /* d raw; s left raw */
        T *src = const_cast<T *>(static_cast<const T *>(s));
        for (int i = 0; i < n; i++) { new (static_cast<T *>(d) + i) T(std::move(src[i])); src[i].~T(); }
    }
};
template <typename T> static inline ecs_id ecs__component_cxx(ecs_world *w, const char *name) {
    if (std::is_trivially_copyable<T>::value && std::is_trivially_default_constructible<T>::value)
        return ecs_component(w, name, sizeof(T), alignof(T));
    ecs_component_desc d = ecs_component_desc();
    d.name = name;
    d.size = sizeof(T);
    d.align = alignof(T);
    d.ctor = ecs__cxx_hooks<T>::ctor;
    d.dtor = ecs__cxx_hooks<T>::dtor;
    d.copy = ecs__cxx_hooks<T>::copy;
    d.move = ecs__cxx_hooks<T>::move;
    return ecs_component_init(w, &d);
}
#endif
#endif /* ECS_H */

/* ========================================================================== */
/* ---- >>impl: implementation ----------------------------------------------- */
#ifdef ECS_IMPLEMENTATION
#ifndef ECS__IMPLEMENTED
#define ECS__IMPLEMENTED

#include <float.h>
#include <stdarg.h>
#include <stdio.h>    /* (vsnprintf: messages; FILE * only without ECS_NO_STDIO) */
#include <stdlib.h>
#include <string.h>

#ifndef ECS_ASSERT
#  include <assert.h>
#  define ECS_ASSERT(c) assert(c)
#endif
#if defined(ECS_REALLOC) != defined(ECS_FREE)
#  error "ecs.h: define both ECS_REALLOC and ECS_FREE, or neither"
#elif !defined(ECS_REALLOC)
#  define ECS_REALLOC(p, n) realloc((p), (n))
#  define ECS_FREE(p) free(p)
#endif

/* ---- >>platform: threads, atomics, time ---------------------------------- */
/* Threads: Win32 on Windows (MSVC, clang-cl, MinGW-w64); C11 <threads.h>
   where the C library has it; else pthreads (macOS, Emscripten with
   -pthread, C++ builds, or ECS_USE_PTHREADS, which ThreadSanitizer needs).
   Without threads (ECS_NO_THREADS; chosen by itself for compilers without
   atomics such as tcc, and for Emscripten without -pthread) the world runs
   every system on the calling thread. Atomics: GCC/Clang __atomic builtins
   (C and C++), MSVC's _Interlocked intrinsics (or ECS_USE_INTERLOCKED),
   else C11 <stdatomic.h>. ThreadSanitizer builds take pthreads by
   themselves: its runtime does not know C11 thrd_create. */
#if defined(__SANITIZE_THREAD__)
#  define ECS__TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define ECS__TSAN 1
#  endif
#endif
#if !defined(ECS_NO_THREADS)
#  define ECS__THREADS 1
#  if defined(_WIN32) && !defined(ECS_USE_PTHREADS)
#    include <process.h>
/* The few Win32 calls needed, declared as <windows.h> declares them, so the
   implementation does not pull <windows.h> (and its macros) into your file. */
#    ifdef __cplusplus
extern "C" {
#    endif
struct _RTL_SRWLOCK;
struct _RTL_CONDITION_VARIABLE;
__declspec(dllimport) void __stdcall InitializeSRWLock(struct _RTL_SRWLOCK *);
__declspec(dllimport) void __stdcall AcquireSRWLockExclusive(struct _RTL_SRWLOCK *);
__declspec(dllimport) void __stdcall ReleaseSRWLockExclusive(struct _RTL_SRWLOCK *);
__declspec(dllimport) void __stdcall InitializeConditionVariable(struct _RTL_CONDITION_VARIABLE *);
__declspec(dllimport) int __stdcall SleepConditionVariableSRW(struct _RTL_CONDITION_VARIABLE *,
                                                              struct _RTL_SRWLOCK *, unsigned long, unsigned long);
__declspec(dllimport) void __stdcall WakeAllConditionVariable(struct _RTL_CONDITION_VARIABLE *);
__declspec(dllimport) unsigned long __stdcall WaitForSingleObject(void *, unsigned long);
__declspec(dllimport) int __stdcall CloseHandle(void *);
__declspec(dllimport) unsigned long __stdcall GetCurrentThreadId(void);
__declspec(dllimport) int __stdcall SwitchToThread(void);
#    ifdef __cplusplus
}
#    endif
typedef struct ecs__thrd { void *handle; unsigned long id; } ecs__thrd;
typedef struct ecs__mtx { void *ptr; } ecs__mtx;   /* an SRWLOCK */
typedef struct ecs__cnd { void *ptr; } ecs__cnd;   /* a CONDITION_VARIABLE */
typedef struct ecs__start { int (*fn)(void *); void *arg; } ecs__start;
static unsigned __stdcall ecs__win_main(void *p) {
    ecs__start *st = (ecs__start *)p;
    st->fn(st->arg);
    return 0;
}

static bool ecs__thrd_create(ecs__thrd *t, ecs__start *st) {
    unsigned id = 0;
    t->handle = (void *)_beginthreadex(NULL, 0, ecs__win_main, st, 0, &id);
    t->id = id;
    return t->handle != NULL;
}

static void ecs__thrd_join(ecs__thrd t) { WaitForSingleObject(t.handle, 0xFFFFFFFFul); CloseHandle(t.handle); }
static ecs__thrd ecs__thrd_self(void) { ecs__thrd t = {NULL, GetCurrentThreadId()}; return t; }
static bool ecs__thrd_equal(ecs__thrd a, ecs__thrd b) { return a.id == b.id; }
#    define ECS__SRW(m) ((struct _RTL_SRWLOCK *)(void *)(m))
#    define ECS__CV(c)  ((struct _RTL_CONDITION_VARIABLE *)(void *)(c))
static bool ecs__mtx_init(ecs__mtx *m) { InitializeSRWLock(ECS__SRW(m)); return true; }
static void ecs__mtx_destroy(ecs__mtx *m) { (void)m; }
static void ecs__mtx_lock(ecs__mtx *m) { AcquireSRWLockExclusive(ECS__SRW(m)); }
static void ecs__mtx_unlock(ecs__mtx *m) { ReleaseSRWLockExclusive(ECS__SRW(m)); }
static void ecs__yield(void) { SwitchToThread(); }
static bool ecs__cnd_init(ecs__cnd *c) { InitializeConditionVariable(ECS__CV(c)); return true; }
static void ecs__cnd_destroy(ecs__cnd *c) { (void)c; }
static void ecs__cnd_wait(ecs__cnd *c, ecs__mtx *m) { SleepConditionVariableSRW(ECS__CV(c), ECS__SRW(m), 0xFFFFFFFFul, 0); }
static void ecs__cnd_broadcast(ecs__cnd *c) { WakeAllConditionVariable(ECS__CV(c)); }
#  elif defined(ECS_USE_PTHREADS) || defined(ECS__TSAN) || defined(__STDC_NO_THREADS__) || defined(__APPLE__) || \
        defined(__EMSCRIPTEN__) || defined(__cplusplus) || \
        (defined(__has_include) && !__has_include(<threads.h>))
#    include <pthread.h>
#    include <sched.h>
typedef pthread_t ecs__thrd;
typedef pthread_mutex_t ecs__mtx;
typedef pthread_cond_t ecs__cnd;
typedef struct ecs__start { int (*fn)(void *); void *arg; } ecs__start;
static void *ecs__pthread_main(void *p) {
    ecs__start *st = (ecs__start *)p;
    st->fn(st->arg);
    return NULL;
}

static bool ecs__thrd_create(ecs__thrd *t, ecs__start *st) { return pthread_create(t, NULL, ecs__pthread_main, st) == 0; }
static void ecs__thrd_join(ecs__thrd t) { pthread_join(t, NULL); }
static ecs__thrd ecs__thrd_self(void) { return pthread_self(); }
static bool ecs__thrd_equal(ecs__thrd a, ecs__thrd b) { return pthread_equal(a, b) != 0; }
static bool ecs__mtx_init(ecs__mtx *m) { return pthread_mutex_init(m, NULL) == 0; }
static void ecs__mtx_destroy(ecs__mtx *m) { pthread_mutex_destroy(m); }
static void ecs__mtx_lock(ecs__mtx *m) { pthread_mutex_lock(m); }
static void ecs__mtx_unlock(ecs__mtx *m) { pthread_mutex_unlock(m); }
static void ecs__yield(void) { sched_yield(); }
static bool ecs__cnd_init(ecs__cnd *c) { return pthread_cond_init(c, NULL) == 0; }
static void ecs__cnd_destroy(ecs__cnd *c) { pthread_cond_destroy(c); }
static void ecs__cnd_wait(ecs__cnd *c, ecs__mtx *m) { pthread_cond_wait(c, m); }
static void ecs__cnd_broadcast(ecs__cnd *c) { pthread_cond_broadcast(c); }
#  else
#    include <threads.h>
typedef thrd_t ecs__thrd;
typedef mtx_t ecs__mtx;
typedef cnd_t ecs__cnd;
typedef struct ecs__start { int (*fn)(void *); void *arg; } ecs__start;
static bool ecs__thrd_create(ecs__thrd *t, ecs__start *st) { return thrd_create(t, st->fn, st->arg) == thrd_success; }
static void ecs__thrd_join(ecs__thrd t) { thrd_join(t, NULL); }
static ecs__thrd ecs__thrd_self(void) { return thrd_current(); }
static bool ecs__thrd_equal(ecs__thrd a, ecs__thrd b) { return thrd_equal(a, b) != 0; }
static bool ecs__mtx_init(ecs__mtx *m) { return mtx_init(m, mtx_plain) == thrd_success; }
static void ecs__mtx_destroy(ecs__mtx *m) { mtx_destroy(m); }
static void ecs__mtx_lock(ecs__mtx *m) { mtx_lock(m); }
static void ecs__mtx_unlock(ecs__mtx *m) { mtx_unlock(m); }
static void ecs__yield(void) { thrd_yield(); }
static bool ecs__cnd_init(ecs__cnd *c) { return cnd_init(c) == thrd_success; }
static void ecs__cnd_destroy(ecs__cnd *c) { cnd_destroy(c); }
static void ecs__cnd_wait(ecs__cnd *c, ecs__mtx *m) { cnd_wait(c, m); }
static void ecs__cnd_broadcast(ecs__cnd *c) { cnd_broadcast(c); }
#  endif
/* The atomic operations, on 32- and 64-bit integer fields declared
   ECS__ATOMIC(T). _sc: sequentially consistent; others acquire/release. */
#  if (defined(_MSC_VER) && !defined(__clang__)) || defined(ECS_USE_INTERLOCKED)
#    include <intrin.h>
#    define ECS__ATOMIC(T) volatile T
#    define ECS__IL(p, op32, op64, ...) (sizeof *(p) == 8 \
        ? (long long)op64((volatile long long *)(void *)(p), __VA_ARGS__) \
        : (long long)op32((volatile long *)(void *)(p), __VA_ARGS__))
#    define ecs__load(p)            ECS__IL(p, _InterlockedOr, _InterlockedOr64, 0)
#    define ecs__load_relaxed(p)    ecs__load(p)
#    define ecs__load_sc(p)         ecs__load(p)
#    define ecs__store(p, v)        ((void)ECS__IL(p, _InterlockedExchange, _InterlockedExchange64, (v)))
#    define ecs__store_relaxed(p, v) ecs__store(p, v)
#    define ecs__store_sc(p, v)     ecs__store(p, v)
#    define ecs__add_fetch(p, v)    (ECS__IL(p, _InterlockedExchangeAdd, _InterlockedExchangeAdd64, (v)) + (v))
#    define ecs__sub_fetch(p, v)    (ECS__IL(p, _InterlockedExchangeAdd, _InterlockedExchangeAdd64, -(v)) - (v))
#    define ecs__add_fetch_sc(p, v) ecs__add_fetch(p, v)
#    define ecs__sub_fetch_sc(p, v) ecs__sub_fetch(p, v)
#    define ecs__xchg_acquire(p, v) ECS__IL(p, _InterlockedExchange, _InterlockedExchange64, (v))
static bool ecs__cas_sc(volatile int *p, int expected, int desired) {
    return _InterlockedCompareExchange((volatile long *)(void *)p, desired, expected) == expected;
}
#  elif (defined(__GNUC__) || defined(__clang__)) && !defined(ECS_USE_STDATOMIC)
#    define ECS__ATOMIC(T) T
#    define ecs__load(p)            __atomic_load_n((p), __ATOMIC_ACQUIRE)
#    define ecs__load_relaxed(p)    __atomic_load_n((p), __ATOMIC_RELAXED)
#    define ecs__load_sc(p)         __atomic_load_n((p), __ATOMIC_SEQ_CST)
#    define ecs__store(p, v)        __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#    define ecs__store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#    define ecs__store_sc(p, v)     __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#    define ecs__add_fetch(p, v)    __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#    define ecs__sub_fetch(p, v)    __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#    define ecs__add_fetch_sc(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#    define ecs__sub_fetch_sc(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_SEQ_CST)
#    define ecs__xchg_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
static bool ecs__cas_sc(int *p, int expected, int desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
#  else
#    include <stdatomic.h>
#    define ECS__ATOMIC(T) _Atomic T
#    define ecs__load(p)            atomic_load_explicit((p), memory_order_acquire)
#    define ecs__load_relaxed(p)    atomic_load_explicit((p), memory_order_relaxed)
#    define ecs__load_sc(p)         atomic_load((p))
#    define ecs__store(p, v)        atomic_store_explicit((p), (v), memory_order_release)
#    define ecs__store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#    define ecs__store_sc(p, v)     atomic_store((p), (v))
#    define ecs__add_fetch(p, v)    (atomic_fetch_add_explicit((p), (v), memory_order_acq_rel) + (v))
#    define ecs__sub_fetch(p, v)    (atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel) - (v))
#    define ecs__add_fetch_sc(p, v) (atomic_fetch_add((p), (v)) + (v))
#    define ecs__sub_fetch_sc(p, v) (atomic_fetch_sub((p), (v)) - (v))
#    define ecs__xchg_acquire(p, v) atomic_exchange_explicit((p), (v), memory_order_acquire)
static bool ecs__cas_sc(_Atomic int *p, int expected, int desired) {
    return atomic_compare_exchange_strong(p, &expected, desired);
}
#  endif
#else
#  define ECS__THREADS 0
#  define ECS__ATOMIC(T) T
#  define ecs__load(p)            (*(p))
#  define ecs__load_relaxed(p)    (*(p))
#  define ecs__load_sc(p)         (*(p))
#  define ecs__store(p, v)        (*(p) = (v))
#  define ecs__store_relaxed(p, v) (*(p) = (v))
#  define ecs__store_sc(p, v)     (*(p) = (v))
#  define ecs__add_fetch(p, v)    (*(p) += (v))
#  define ecs__sub_fetch(p, v)    (*(p) -= (v))
#  define ecs__add_fetch_sc(p, v) (*(p) += (v))
#  define ecs__sub_fetch_sc(p, v) (*(p) -= (v))
#endif

/* Forced inlining for the few hot helpers of add/remove/destroy. */
/* ...and error paths kept out of their way. */
#if defined(__GNUC__) || defined(__clang__)
#  define ECS__UNLIKELY(c) __builtin_expect(!!(c), 0)
#  define ECS__HOT static inline __attribute__((always_inline))
#  define ECS__COLD static __attribute__((cold, noinline))
#  define ECS__NOINLINE static __attribute__((noinline))
#  define ECS__LOOP static __attribute__((noinline, aligned(64)))
#else
#  define ECS__UNLIKELY(c) (c)
#  define ECS__HOT static inline
#  define ECS__COLD static
#  define ECS__NOINLINE static
#  define ECS__LOOP static
#endif

/* A hint that p will be read soon (sorted loops jump between rows). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__TINYC__)
#  define ECS__PREFETCH(p) __builtin_prefetch(p)
#else
#  define ECS__PREFETCH(p) ((void)(p))
#endif

/* SSE2 for the save file's checksum (every x86-64 has it). */
#if (defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)) && !defined(__TINYC__)
#  define ECS__SSE2 1
#  include <emmintrin.h>
#endif

/* CPU hint inside spin loops: lets the sibling hyperthread run. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#  define ECS__PAUSE() __builtin_ia32_pause()
#elif defined(__GNUC__) && defined(__aarch64__)
#  define ECS__PAUSE() __asm__ __volatile__("yield")
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#  include <intrin.h>
#  define ECS__PAUSE() _mm_pause()
#else
#  define ECS__PAUSE() ((void)0)
#endif

/* Clears the upper halves of the AVX registers before a stage's systems run
   on thread 0 (see ecs_progress). Only where it can matter: x86-64 code
   compiled without AVX, whose SSE instructions pay for a dirty upper state;
   AVX builds use VEX encodings, which do not. */
#if defined(__x86_64__) && !defined(__AVX__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(_MSC_VER)
#  define ECS__VZEROUPPER 1
#  define ecs__vzeroupper() __asm__ __volatile__("vzeroupper" ::: "xmm0", "xmm1", "xmm2", "xmm3", \
      "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15")
#else
#  define ECS__VZEROUPPER 0
#endif

/* Valgrind's helgrind sees mutexes but not the atomics that hand data from
   one system to the next; ECS_VALGRIND annotates those hand-offs. */
#ifdef ECS_VALGRIND
#  include <valgrind/helgrind.h>
#  define ECS__HAPPENS_BEFORE(a) ANNOTATE_HAPPENS_BEFORE(a)
#  define ECS__HAPPENS_AFTER(a)  ANNOTATE_HAPPENS_AFTER(a)
#  define ECS__ATOMIC_VAR(a)     VALGRIND_HG_DISABLE_CHECKING((a), sizeof *(a))   /* races by design */
#  define ECS__RACY_RANGE(p, n)  VALGRIND_HG_DISABLE_CHECKING((p), (n))   /* ...an array's, until */
#  define ECS__CHECKED_RANGE(p, n) VALGRIND_HG_ENABLE_CHECKING((p), (n))   /* it is freed */
#else
#  define ECS__HAPPENS_BEFORE(a) ((void)0)
#  define ECS__HAPPENS_AFTER(a)  ((void)0)
#  define ECS__ATOMIC_VAR(a)     ((void)0)
#  define ECS__RACY_RANGE(p, n)  ((void)0)
#  define ECS__CHECKED_RANGE(p, n) ((void)0)
#endif

/* Nanoseconds from a monotonic clock, in every mode: stats and the inline
   stage threshold must not jump when the wall clock is set. */
#if defined(_WIN32)
#  ifdef __cplusplus
extern "C" {
#  endif
union _LARGE_INTEGER;
__declspec(dllimport) int __stdcall QueryPerformanceCounter(union _LARGE_INTEGER *);
__declspec(dllimport) int __stdcall QueryPerformanceFrequency(union _LARGE_INTEGER *);
__declspec(dllimport) unsigned long __stdcall GetActiveProcessorCount(unsigned short);
#  ifdef __cplusplus
}
#  endif
static uint64_t ecs__now_ns(void) {
    long long c = 0, f = 1;
    QueryPerformanceCounter((union _LARGE_INTEGER *)(void *)&c);
    QueryPerformanceFrequency((union _LARGE_INTEGER *)(void *)&f);
    return (uint64_t)(c / f) * 1000000000u + (uint64_t)(c % f) * 1000000000u / (uint64_t)f;
}
#else
#  include <time.h>
#  if !defined(CLOCK_MONOTONIC) && (defined(__linux__) || defined(__EMSCRIPTEN__))
/* Strict -std=c11 hides the POSIX clock; the C library has it all the same. */
#    ifdef __cplusplus
extern "C"
#    endif
int clock_gettime(int, struct timespec *);
#    define ECS__MONOTONIC 1   /* CLOCK_MONOTONIC there */
#  elif defined(CLOCK_MONOTONIC)
#    define ECS__MONOTONIC CLOCK_MONOTONIC
#  endif
static uint64_t ecs__now_ns(void) {
    struct timespec ts;
#  ifdef ECS__MONOTONIC
    clock_gettime(ECS__MONOTONIC, &ts);
#  else
    timespec_get(&ts, TIME_UTC);   /* where nothing better is known */
#  endif
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

#if ECS__THREADS && (defined(__unix__) || defined(__APPLE__))
#  include <unistd.h>
#endif
static int ecs__hardware_threads(void) {
#if ECS__THREADS && defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#elif ECS__THREADS && defined(_WIN32)
    unsigned long n = GetActiveProcessorCount(0xFFFF);   /* all processor groups */
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

/* ---- >>platform: handles and small helpers -------------------------------- */
#define ECS__GEN_MAX     ((uint32_t)((1u << ECS_GENERATION_BITS) - 1u))
#define ECS__NONE        UINT32_MAX           /* no slot / no table */
#define ECS__RESERVED    (UINT32_MAX - 1)      /* a slot held by defer mode's ecs_create */
#define ECS__PREFAB      1u                    /* the prefab tag: the world's first id */
#define ECS__PENDING     (1ull << 63)          /* marks a command buffer's pending handle */
/* A pending handle: bit 63, the buffer's serial (ECS_PENDING_SERIAL_BITS),
   then its index among the buffer's creates (24 bits). Serials are never
   reused, so a stale pending handle can never name a newer buffer's entity. */
#define ECS__PENDING_INDEX_BITS 24
#define ECS__PENDING_INDEX_MAX  ((1u << ECS__PENDING_INDEX_BITS) - 1)
#define ECS__SERIAL_MAX         ((1ull << ECS_PENDING_SERIAL_BITS) - 1)
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

/* ---- >>alloc: the default allocator; the allocation path, declared -------- */
static void *ecs__libc_realloc(void *p, size_t n, void *user) {
    (void)user;
    if (n == 0) { ECS_FREE(p); return NULL; }
    return ECS_REALLOC(p, n);
}

struct ecs_world;
static void *ecs__alloc(struct ecs_world *w, size_t n);
static void *ecs__realloc(struct ecs_world *w, void *p, size_t n);
static void  ecs__free(struct ecs_world *w, void *p);

/* ---- >>containers: growable arrays, a hash map, bitsets, a byte hash ------ */

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

/* Bitsets: rows of 64-bit words, one bit per system (reach) or id. */
static uint32_t ecs__words(uint32_t bits) { return (bits + 63) / 64; }
static bool ecs__bit(const uint64_t *b, uint32_t i) { return (b[i >> 6] >> (i & 63)) & 1; }
static void ecs__bit_set(uint64_t *b, uint32_t i) { b[i >> 6] |= 1ull << (i & 63); }
static void ecs__bits_or(uint64_t *d, const uint64_t *s, uint32_t words) {
    for (uint32_t k = 0; k < words; k++) d[k] |= s[k];
}
#if defined(__GNUC__) || defined(__clang__)
static uint32_t ecs__lsb(uint64_t x) { return (uint32_t)__builtin_ctzll(x); }
static uint32_t ecs__msb(uint64_t x) { return 63u - (uint32_t)__builtin_clzll(x); }
#else
static uint32_t ecs__lsb(uint64_t x) { uint32_t n = 0; while (!(x & 1)) { x >>= 1; n++; } return n; }
static uint32_t ecs__msb(uint64_t x) { uint32_t n = 0; while (x >>= 1) n++; return n; }
#endif
static uint32_t ecs__popcount(uint64_t x) {   /* SWAR: no library call without -mpopcnt */
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* A heap of indices keyed by key[index]: higher key first, lower index on ties
   (the scheduler's ready queues, the run order of the graph build). */
static bool ecs__heap_above(const double *key, uint32_t a, uint32_t b) {
    return key[a] > key[b] || (key[a] == key[b] && a < b);
}

static void ecs__heap_push(uint32_t *h, uint32_t *n, uint32_t v, const double *key) {
    uint32_t i = (*n)++;
    for (; i > 0 && ecs__heap_above(key, v, h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = v;
}

static uint32_t ecs__heap_pop(uint32_t *h, uint32_t *n, const double *key) {
    uint32_t top = h[0], v = h[--(*n)], i = 0;
    for (uint32_t c; (c = 2 * i + 1) < *n; i = c) {
        if (c + 1 < *n && ecs__heap_above(key, h[c + 1], h[c])) c++;
        if (!ecs__heap_above(key, h[c], v)) break;
        h[i] = h[c];
    }
    if (*n) h[i] = v;
    return top;
}

/* In-place heapsort: no recursion, no allocation, O(n log n) worst case. */
static void ecs__sift(uint64_t *a, size_t root, size_t n) {
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && a[child + 1] > a[child]) child++;
        if (a[root] >= a[child]) return;
        uint64_t t = a[root]; a[root] = a[child]; a[child] = t;
    }
}

static void ecs__sort_u64(uint64_t *a, size_t n) {
    for (size_t i = n / 2; i-- > 0;) ecs__sift(a, i, n);
    for (size_t i = n; i-- > 1;) {
        uint64_t t = a[0]; a[0] = a[i]; a[i] = t;
        ecs__sift(a, 0, i);
    }
}

/* A 64-bit hash in four lanes (so it streams at memory speed), fed in
   pieces; every load is little-endian, so files checksum alike anywhere. */
typedef struct ecs__hasher {
    uint64_t lane[4], total;
    unsigned char tail[32];
    uint32_t n;
} ecs__hasher;
#define ECS__P1 0x9e3779b97f4a7c15ull
#define ECS__P2 0xc2b2ae3d27d4eb4full
static uint64_t ecs__rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }
static uint64_t ecs__le64(const unsigned char *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static void ecs__stripes(void *state, const unsigned char *p, size_t n) {   /* n: a multiple of 32 */
    uint64_t *lane = ((ecs__hasher *)state)->lane;
    for (; n >= 32; p += 32, n -= 32)
        for (int k = 0; k < 4; k++) lane[k] = ecs__rotl(lane[k] + ecs__le64(p + 8 * k) * ECS__P2, 31) * ECS__P1;
}

/* Feeds a hash made of `stripe`-byte stripes: the bytes short of a stripe
   wait in tail (*n of them) for the next call; whole stripes go to
   stripes() in one piece. */
static void ecs__feed(void *state, unsigned char *tail, uint32_t *n, uint32_t stripe, const unsigned char *p,
                      size_t len, void (*stripes)(void *, const unsigned char *, size_t)) {
    if (*n) {
        size_t take = stripe - *n < len ? stripe - *n : len;
        memcpy(tail + *n, p, take);
        *n += (uint32_t)take; p += take; len -= take;
        if (*n < stripe) return;
        stripes(state, tail, stripe);
        *n = 0;
    }
    size_t whole = len / stripe * stripe;
    if (whole) stripes(state, p, whole);
    if (len - whole) memcpy(tail, p + whole, len - whole);
    *n = (uint32_t)(len - whole);
}

static void ecs__hash_init(ecs__hasher *h) {
    memset(h, 0, sizeof *h);
    h->lane[0] = ECS__P1 + ECS__P2; h->lane[1] = ECS__P2; h->lane[3] = 0 - ECS__P1;
}

static void ecs__hash_feed(ecs__hasher *h, const void *data, size_t len) {
    h->total += len;
    ecs__feed(h, h->tail, &h->n, 32, (const unsigned char *)data, len, ecs__stripes);
}

static uint64_t ecs__hash_done(const ecs__hasher *h) {
    uint64_t x = ecs__rotl(h->lane[0], 1) + ecs__rotl(h->lane[1], 7) + ecs__rotl(h->lane[2], 12) +
                 ecs__rotl(h->lane[3], 18) + h->total * ECS__P2;
    unsigned char last[32] = {0};
    memcpy(last, h->tail, h->n);
    for (uint32_t i = 0; i < h->n; i += 8) x = ecs__hash64(x ^ ecs__le64(last + i)) * ECS__P1;
    return ecs__hash64(x);
}

/* The save file's checksum (version 7): for each 8-byte lane of 64-byte
   stripes, the sum of its words and the sum of those sums (Fletcher's,
   mod 2^64). A changed word changes the first; moved or swapped stripes
   the second. Additions only, so it costs a fraction of a copy (SSE2 where
   there is one: the same sums). Words little-endian, as every load here. */
typedef struct ecs__sum {
    uint64_t a[8], b[8], total;
    unsigned char tail[64];
    uint32_t n;
} ecs__sum;

static void ecs__sum_stripes(void *state, const unsigned char *p, size_t n) {
    ecs__sum *s = (ecs__sum *)state;
#ifdef ECS__SSE2
    __m128i a[4], b[4];
    for (int k = 0; k < 4; k++) { a[k] = _mm_loadu_si128((const __m128i *)s->a + k); b[k] = _mm_loadu_si128((const __m128i *)s->b + k); }
    for (; n >= 64; p += 64, n -= 64)
        for (int k = 0; k < 4; k++) {
            a[k] = _mm_add_epi64(a[k], _mm_loadu_si128((const __m128i *)p + k));
            b[k] = _mm_add_epi64(b[k], a[k]);
        }
    for (int k = 0; k < 4; k++) { _mm_storeu_si128((__m128i *)s->a + k, a[k]); _mm_storeu_si128((__m128i *)s->b + k, b[k]); }
#else
    for (; n >= 64; p += 64, n -= 64)
        for (int k = 0; k < 8; k++) { s->a[k] += ecs__le64(p + 8 * k); s->b[k] += s->a[k]; }
#endif
}

static void ecs__sum_feed(ecs__sum *s, const void *data, size_t len) {
    s->total += len;
    ecs__feed(s, s->tail, &s->n, 64, (const unsigned char *)data, len, ecs__sum_stripes);
}

static uint64_t ecs__sum_done(const ecs__sum *cs) {
    ecs__sum s = *cs;
    if (s.n) {   /* the tail as a stripe padded with zeros (the length tells it apart) */
        memset(s.tail + s.n, 0, 64 - s.n);
        ecs__sum_stripes(&s, s.tail, 64);
    }
    uint64_t x = ecs__hash64(s.total ^ ECS__P1);
    for (int k = 0; k < 8; k++) x = ecs__hash64(ecs__hash64(x ^ s.a[k]) ^ s.b[k]) * ECS__P2;
    return ecs__hash64(x);
}

/* Copies one cell; the common sizes become plain moves instead of a call. */
ECS__HOT void ecs__cell_copy(unsigned char *to, const unsigned char *from, uint32_t size) {
    switch (size) {
    case 4: memcpy(to, from, 4); break;
    case 8: memcpy(to, from, 8); break;
    case 12: memcpy(to, from, 12); break;
    case 16: memcpy(to, from, 16); break;
    case 24: memcpy(to, from, 24); break;
    case 32: memcpy(to, from, 32); break;
    default: memcpy(to, from, size); break;
    }
}

static void ecs__cell_zero(unsigned char *to, uint32_t size) {
    static const unsigned char zero[32] = {0};
    if (size <= 32) ecs__cell_copy(to, zero, size); else memset(to, 0, size);
}

/* ---- >>world: the world's state, its allocation path and its error line --- */
typedef struct ecs__idinfo {
    char *name;
    uint32_t size, align;
    bool resource;
    bool lifecycle, events;  /* has ctor/dtor/copy/move; has on_add/on_set/on_remove */
    uint32_t event;          /* an event type: its log in w->ev.logs + 1 (0: not one) */
    void *raw, *data;        /* a resource's storage (raw is the allocation) */
    ecs_ctor_fn ctor, dtor;
    ecs_copy_fn copy, move;
    ecs_hook_fn on_add, on_set, on_remove;
    void *ctx;
    ecs_serialize_fn serialize;
    ecs_deserialize_fn deserialize;
    uint32_t entity_fields[ECS_MAX_ENTITY_FIELDS];
    int entity_field_count;
} ecs__idinfo;

/* What a system declares about one id, in named bits: access through its
   query terms (T) or its reads/writes lists (L), reading or writing (a
   writes list entry reads too), and whether its query requires the id (AND)
   or excludes it (NOT). One home: ecs__term_how says what a term declares,
   ecs__system_declare merges a system's terms and lists, and the access
   checks and the stage build read only this. */
enum { ECS__TR = 1, ECS__TW = 2, ECS__LR = 4, ECS__LW = 8, ECS__FAND = 16, ECS__FNOT = 32 };
enum { ECS__ACCESSES = ECS__TR | ECS__LR, ECS__WRITES = ECS__TW | ECS__LW, ECS__FILTERS = ECS__FAND | ECS__FNOT };
typedef struct ecs__decl { uint32_t id, how; } ecs__decl;

/* An entity slot. Free slots chain through row; table == ECS__NONE means the
   slot holds no live entity (free, or retired when its generation ran out);
   ECS__RESERVED, that defer mode handed out its handle and will place it. */
typedef struct ecs__record { uint32_t table, row, gen; } ecs__record;

/* Parent and children of an entity slot (only once some entity has one). */
typedef struct ecs__rel {
    ecs_entity parent;       /* 0: none */
    uint32_t first, last;    /* children, slot + 1 (0: none), in attach order */
    uint32_t next, prev;     /* siblings, slot + 1 */
} ecs__rel;

typedef struct ecs__column {
    unsigned char *data;     /* 64-byte aligned, inside raw */
    void *raw;               /* the allocation; grown with realloc */
    uint32_t size;
    ecs_id id;
} ecs__column;

/* A cached transition (seed 004): where adding or removing an id leads from
   a table, the destination column of the added component, and for each
   source column the destination column it moves to (-1: dropped). A
   self-edge (dst is the source) means "already has it" / "already lacks it". */
struct ecs__table;
typedef struct ecs__edge_to {
    struct ecs__table *dst;
    int32_t added;           /* dst column of the id (add edges), or -1 */
    /* then, right after: int32_t to[src column count] (none for a self-edge) */
} ecs__edge_to;
#define ECS__TO(e) ((const int32_t *)(const void *)((e) + 1))   /* per src column */
#define ECS__EDGE_LO 32      /* ids below this index their edges directly, no hashing */

/* An archetype table: every entity with exactly this id set. Columns hold the
   sized components in id order; tags are in ids but have no column. */
typedef struct ecs__table {
    uint32_t index;          /* in world->tab.tables */
    uint32_t id_count, column_count;
    ecs_id *ids;             /* sorted */
    int32_t *column_of;      /* per ids[i]: its column, or -1 for a tag */
    ecs__column *columns;
    ecs_entity *entities;
    void *entities_raw;
    uint32_t count, cap;
    uint32_t lock;           /* iterators inside: structural changes are ECS_ERR_BUSY */
    bool hooked;             /* an id with lifecycle hooks or events: the hooked moves */
    bool evented;            /* an id with events (on_add, on_set, on_remove) */
    bool prefab;             /* has the prefab tag: seen only by terms naming it, no event hooks */
    const ecs_query *lock_query;   /* the query of the latest such iterator, for errors */
    ECS__ATOMIC(uint64_t) *stamps; /* >>change: per block of rows, rows entering or moving
                                      in, then per column its writes (blocks each) */
    uint32_t blocks;
    ecs__map edges;          /* (id << 1 | removing) -> ecs__edge_to *, for larger ids */
    ecs__edge_to *edge_lo[2 * ECS__EDGE_LO];   /* [removing * ECS__EDGE_LO + id] */
} ecs__table;

typedef struct ecs__match {  /* one table a query matches */
    ecs__table *table;
    uint64_t group;          /* its group_by value (0 without): matches ascend by group, then table index */
    int32_t column[ECS_MAX_TERMS];   /* per term, or -1: the field is NULL */
} ecs__match;

typedef struct ecs__gmark { uint64_t group, seen; } ecs__gmark;   /* a group's own mark */
struct ecs_query {
    ecs_world *world;
    ecs_term terms[ECS_MAX_TERMS];
    int term_count;
    ecs__match *matches;     /* in table creation order */
    uint32_t match_count, match_cap;
    uint32_t slot;           /* in world->qry.queries */
    uint32_t changed;        /* its ECS_CHANGED terms (bits) */
    bool writes;             /* has a WRITE term: its loops' batches stamp */
    uint64_t serial;         /* its place in the world's query creation order, from 1 */
    bool tracked;            /* ecs_query_changed asked: completions mark it too */
    ecs_group_fn group_by;   /* grouped iteration: matches kept in (group, table index) order */
    void *group_ctx;
    ecs_compare_fn compare;  /* sorted iteration: order_by is terms[order_term] */
    void *compare_ctx;
    int order_term;
    struct ecs__sort *sort;  /* >>order: its rows in order (NULL: not sorted) */
    uint64_t seen;           /* >>change: the tick of its latest complete iteration (0: none) */
    ecs__gmark *gmarks;      /* ...and of groups' loops (ecs_iter_set_group) since, by group */
    uint32_t gmark_count, gmark_cap;
};

enum { ECS__CMD_CREATE, ECS__CMD_DESTROY, ECS__CMD_ADD, ECS__CMD_REMOVE, ECS__CMD_SET, ECS__CMD_PARENT,
       ECS__CMD_INSTANTIATE };   /* INSTANTIATE: e the instance (pending or reserved), the prefab in data */
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
    uint32_t ev_count;       /* nonzero: it holds events (evb); beside count, which a
                                finished system reads with it */
    unsigned char *data;     /* values of set commands, each aligned for its type */
    void *data_raw;          /* the allocation (data is 64-byte aligned inside it) */
    uint32_t data_size, data_cap;
    ecs_entity *created;     /* per pending index: the live handle, once applied */
    uint32_t created_count, created_cap;
    uint32_t applied;        /* commands done; apply resumes here after a failure */
    struct ecs__evbuf *evb;  /* events emitted into it: per type, in emission order */
    uint32_t evb_count, evb_cap, evb_last;   /* evb_last: the type of the latest emit */
    bool owning;             /* holds values of a component with lifecycle hooks: the set
                                commands from applied on own constructed copies */
    bool applying;           /* being applied: its hooks may not record into it */
    uint64_t serial;         /* stamped into pending handles; renewed when cleared;
                                0 once the world's serials are used up */
    uint32_t slot;           /* in world->cmd.buffers, or ECS__NONE for the defer buffer */
};

typedef struct ecs__system {
    /* hot: what every frame reads, first (a frame walks every system) */
    ecs_system_fn fn;
    void *ctx;
    ecs_query *query;        /* NULL for a system without terms */
    uint32_t flags;
    int chunk_size;
    int term_count;
    ecs_stage stage;
    uint8_t plain;           /* has a query, unchunked, not exclusive: the lean inline run
                                (1; 2 when gated: it asks ecs__gate_open first) */
    uint8_t gate;            /* ECS__GATE_ bits: what may skip it in a turn (0: nothing) */
    bool cond_due;           /* its run_if waits for the thread that takes it (ecs__gate_open) */
    bool reads_events;       /* has windows (win): never plain, since every run takes them */
    int interval;            /* (in padding: at a size that is a multiple of 256 bytes, the
                                array's hot lines crowd a few L1 sets: +3% a frame for 64 tiny
                                systems at 1280; new fields go in holes or keep it off those) */

    /* running: written by the thread that readies, runs or completes it */
    ecs_commands *bufs;      /* one per chunk (one for an unchunked system) */
    uint32_t buf_count, buf_cap;
    uint32_t chunks;         /* this frame; 0 = nothing to do */
    uint32_t next_chunk;     /* under the queue lock */
    bool active;             /* under the queue lock: taken and not finished (only for
                                systems with an exclusion partner) */
    bool ran;                /* its buffers hold commands not yet applied (counted in w->sched.due) */
    ECS__ATOMIC(uint32_t) done_chunks;
    ECS__ATOMIC(int32_t) pending;    /* predecessors still running this frame */
    uint32_t timed_runs;     /* runs (low bits) when the timed frame started */
    ECS__ATOMIC(uint64_t) work_ns;   /* this frame, all chunks */
    uint64_t runs, timed, last_frame;   /* last_frame: the frame it last ran + 1 */
    double last_ns, avg_ns;
    uint32_t last_chunks;
    uint32_t ran_chunks;     /* a chunked system's chunks in its latest run (ecs_system_chunks) */
    uint32_t position;       /* in its stage's run order: its tick is the turn's base + this */
    uint32_t changed;        /* its ECS_CHANGED terms (bits) */
    bool stamps;             /* has a WRITE term: its batches stamp when stamps are kept */
    uint64_t seen, since;    /* >>change: the tick of its latest run (set when it is readied);
                                that of the one before, which the run hands out changes after */
    ecs_term terms[ECS_MAX_TERMS];   /* ECS_FIELD's size check reads these */

    /* cold: the declaration */
    char *name;              /* one allocation: the name, then the dependency names */
    ecs__decl decl[3 * ECS_MAX_TERMS];   /* what it declared, by ascending id */
    uint32_t decl_count;
    ecs_id reads[ECS_MAX_TERMS], writes[ECS_MAX_TERMS];
    const char *deps[3][ECS_MAX_DEPS];   /* after, before, independent_of */
    uint32_t disjoint;       /* validation let other systems skip it through disjoint queries:
                                the first of them in run order + 1, for its refusals (0: none) */
    ECS__ATOMIC(int) enabled;/* ecs_system_enable: into gate at its stage's next turn (atomic:
                                getters may ask from any thread) */
    ecs_condition_fn run_if; /* read when gated */
    void *run_if_ctx;
    ecs_id emits[ECS_MAX_TERMS];
    struct ecs__window *win; /* per event type it reads (in reads order) */
    uint32_t win_count;
} ecs__system;
enum { ECS__GATE_OFF = 1, ECS__GATE_INTERVAL = 2, ECS__GATE_COND = 4 };
static bool ecs__on_main(const ecs__system *s) {   /* runs on thread 0 */
    return (s->flags & (ECS_SYSTEM_MAIN_THREAD | ECS_SYSTEM_EXCLUSIVE)) != 0;
}

/* A stage: its name, its switches and its clock (turns: frames for an
   ordinary stage, steps for a fixed-step one). Thread 0 reads and writes
   them between turns; enabled and dirty may also be set by a MAIN_THREAD
   system during a turn (enabled is atomic: getters read it anywhere). */
typedef struct ecs__stage {
    char *name;
    float fixed_dt;          /* > 0: fixed-step (the group's first stage) */
    float max_lag;
    int max_steps;
    uint32_t leader;         /* the first stage of its step group; itself if none */
    bool unscaled;
    bool presentation;       /* no turn while resimulating */
    ECS__ATOMIC(int) enabled;
    bool dirty;              /* a system of it was added, enabled or disabled since its last turn */
    uint32_t off;            /* its disabled systems (all: the turn runs none) */
    uint32_t readers;        /* its systems that read events (their windows follow its turns) */
    ecs_condition_fn run_if;
    void *run_if_ctx;
    uint64_t turns;          /* the clock, which snapshots keep: */
    double acc, dropped;
    int steps_last;
} ecs__stage;

enum { ECS__EDGE_DECLARED, ECS__EDGE_INFERRED, ECS__EDGE_INDEPENDENT };
typedef struct ecs__edge {   /* between systems (0-based); kept unreduced for the DOT export */
    uint32_t from, to;
    uint8_t kind, list;      /* declared: the after/before list that made it */
    bool cycle;
} ecs__edge;

typedef struct ecs__stage_graph {
    uint32_t first, count;   /* its systems: graph.order[first .. first + count) */
    uint32_t words;          /* per reach row */
    uint64_t *desc;          /* a row per strongly connected component: the systems it reaches */
    uint32_t *row_of;        /* per system: its component's row */
    uint32_t *succ_at, *succ;/* the transitively reduced execution graph */
    uint32_t *preds;         /* in-degree in it */
    uint32_t *topo;          /* a topological order of it */
    double est_ns;           /* its systems' measured work per turn (ecs__ranks_update) */
    double sync_ns;          /* its sync points' time per frame, averaged over timed frames */
    uint64_t sync_now;       /* ...in this timed frame so far */
    uint64_t sync_timed;     /* timed frames averaged into sync_ns */
    double split_wall_ns, split_work_ns;   /* ...of which work shared by the threads: thread
                                0's wall time in it, and the threads' time summed */
    uint64_t split_wall_now, split_work_now;
    uint32_t turns;          /* its turns in the latest timed frame (fixed steps: several) */
    uint32_t *excl_at, *excl;/* conflicting independent_of partners, both ways (NULL: none):
                                never run at the same time */
    bool cyclic;
} ecs__stage_graph;

typedef struct ecs__graph {
    bool built;              /* matches the registered systems and stages */
    ecs_result result;
    ecs_problem *problems;
    uint32_t problem_count, problem_cap;
    uint32_t *fix;           /* per problem: its message's, loop's and members' offsets while building */
    uint32_t fix_cap;
    ecs_problem *notes;
    uint32_t note_count, note_cap, *note_fix, note_fix_cap;
    uint32_t omitted, notes_omitted;   /* beyond ECS__REPORT_CAP: counted, not listed */
    ecs_system *cycles;      /* every CYCLE's loop and members, back to back */
    uint32_t cycle_count, cycle_cap;
    char *text;              /* every message, back to back */
    uint32_t text_size, text_cap;
    ecs__edge *edges;
    uint32_t edge_count, edge_cap;
    uint32_t *order;         /* systems grouped by stage, run order inside (local indices) */
    uint32_t *reg;           /* systems grouped by stage, registration order inside */
    uint32_t *local;         /* per system: its index inside its stage */
    ecs__stage_graph *stages;
    uint32_t stage_count;
    uint32_t *run;           /* a valid graph's stages in topological order, as system
                                indices: stage st's at run + stages[st].first (the inline path) */
    uint64_t builds;         /* counts rebuilds: the scheduler's estimates follow them */
} ecs__graph;

#define ECS__EVENT_FRAME ECS__NONE          /* trace spans that are not a system */
#define ECS__EVENT_SYNC  (ECS__NONE - 1)
#define ECS__EVENT_OBSERVER (ECS__NONE - 2) /* chunk: the observer's index */
#define ECS__EVENT_SPLIT (ECS__NONE - 3)    /* a thread's share of a sync point (chunk: pieces) */
typedef struct ecs__event {  /* one trace span */
    uint32_t system, chunk;  /* system: its index, or ECS__EVENT_FRAME / ECS__EVENT_SYNC */
    uint64_t start, end, frame;
    uint32_t step;           /* its stage's turn within the frame */
} ecs__event;

/* An error line: short ones in place, longer ones on the heap (grown with
   the world's allocator; if that fails the line is cut, never lost). */
typedef struct ecs__msg {
    char *big;
    size_t cap;
    bool use_big;
    char small[256];
} ecs__msg;

/* Events (>>events). A command buffer's events of one type: their
   payloads back to back (the order of emission; types need no order
   between them, as each has its own log). */
typedef struct ecs__evbuf {
    ecs_id id;               /* the type (checked when this was made: ecs_emit's fast path) */
    uint32_t log, size, count, cap;
    unsigned char *data;     /* 64-byte aligned, inside raw */
    void *raw;
    ecs_emitter *em;         /* ecs_emitter_get's, made at its first call */
} ecs__evbuf;
/* A type's delivered events, numbered from 0 in delivery order: the array
   holds [base, base + count); readers see [.., end); [end, base + count) are
   staged at the sync point running now (observers see them first). */
typedef struct ecs__evlog {
    ecs_id id;
    unsigned char *data;     /* 64-byte aligned, inside raw */
    void *raw;
    uint32_t count, cap;     /* events held, and room */
    uint32_t need;           /* this sync point's events still to stage (ecs__events_reserve) */
    uint64_t base, end;
    uint32_t *readers;       /* systems with a window on it, ascending */
    uint32_t reader_count, reader_cap;
} ecs__evlog;
/* A reading system's window on one type: the next event it has not seen,
   and its current run's [lo, hi). */
typedef struct ecs__window {
    uint32_t log;
    uint64_t cursor, lo, hi, dropped;
} ecs__window;
enum { ECS__WIN_TURN, ECS__WIN_OFF, ECS__WIN_KEEP };   /* ecs__stage_windows */
typedef struct ecs__observer {
    ecs_id event;            /* 0: removed (ecs_unobserve; the slot is not reused) */
    ecs_observer_fn fn;
    void *ctx;
    bool skip_resim;
    ecs__decl decl[2 * ECS_MAX_TERMS];   /* its reads and writes, as a system's */
    uint32_t decl_count;
} ecs__observer;

typedef struct ecs__tctx {   /* a thread that runs systems; tctx[0] calls ecs_progress */
    struct ecs_world *w;
    int index;
#if ECS__THREADS
    ecs__thrd id;
    ecs__start start;
#endif
    uint32_t current;        /* the system it runs + 1, for the access checks */
    bool asking;             /* ...in its run_if, not its fn */
    const void *batch_table; /* the batch it runs: chunked systems may touch these rows */
    uint32_t batch_row, batch_count;
    uint32_t refused;        /* lowest system + 1 an access check refused this frame */
    ecs__msg refusal;        /* that refusal's line */
    uint32_t *work;          /* ecs__complete's worklist */
    ecs__event *events;
    uint32_t event_count, event_cap;
    ecs__msg error;          /* its ecs_last_error while systems run */
    uint64_t rng;            /* >>netcode: its shuffle delays */
} ecs__tctx;

/* A job's piece p, run by thread tc (>>sync: ecs__job_run). */
typedef void (*ecs__job_fn)(struct ecs_world *w, ecs__tctx *tc, uint32_t p);

enum { ECS__IDLE, ECS__SYSTEMS, ECS__SYNC };   /* world phase; structure is locked in SYSTEMS */

/* The world's state, a sub-struct per section (each freed by its section's
   ecs__<section>_fini, which ecs_world_free calls in reverse data-flow
   order). */
typedef struct ecs__ids_state {         /* >>ids */
    ecs__idinfo *ids;        /* indexed by id; ids[0] unused */
    uint32_t id_count, id_cap;
    ecs__map id_names;       /* name hash -> id */
} ecs__ids_state;

typedef struct ecs__entity_state {      /* >>entity */
    ecs__record *records;
    uint32_t record_count, record_cap;
    uint32_t free_head, free_count;
    uint32_t alive;
} ecs__entity_state;

typedef struct ecs__hierarchy_state {   /* >>hierarchy */
    ecs__rel *rels;          /* per slot, NULL until a parent is set */
    uint32_t rel_cap;
} ecs__hierarchy_state;

typedef struct ecs__table_state {       /* >>table */
    ecs__table **tables;     /* tables[0] is the empty set */
    uint32_t table_count, table_cap;
    uint32_t born;           /* tables[born..] were left empty by a snapshot restore that
                                predates them: made again (moved here) when next needed */
    ecs__map table_sets;     /* id set hash -> table index */
    ecs_id *scratch;         /* id set under construction */
    uint32_t scratch_cap;
    uint32_t prefab_tables;  /* tables with the prefab tag (ecs_count leaves their rows out) */
} ecs__table_state;

typedef struct ecs__change_state {      /* >>change */
    bool on;                 /* tables keep stamps (from the first ECS_CHANGED term or
                                ecs_query_changed on) */
    uint64_t tick;           /* the clock: outside a turn's systems, the stamp of writes */
    uint64_t base;           /* the current turn's first system tick (system: + its position) */
    uint64_t fixed;          /* nonzero: the tick of a sync point before an EXCLUSIVE system */
} ecs__change_state;

typedef struct ecs__query_state {       /* >>query */
    uint32_t iter_locks;     /* batches of plain query loops still open */
    ecs_query **queries;
    uint32_t query_count, query_cap;
    uint64_t serials;        /* queries made so far: each one's serial (snapshots name them by it) */
} ecs__query_state;

typedef struct ecs__commands_state {    /* >>commands */
    ecs_commands **buffers;  /* user command buffers, freed with the world */
    uint32_t buffer_count, buffer_cap;
    ecs_commands *defer;     /* defer mode's buffer (lazily made) */
    int defer_depth;
    ECS__ATOMIC(uint64_t) next_serial;
    size_t dropped;
    struct ecs__batch *batch;  /* a sync point's split apply (made at the first) */
} ecs__commands_state;

typedef struct ecs__hooks_state {       /* >>hooks */
    ecs_commands *hook_buf, *hook_drain;   /* structural calls made in hooks, and the ones
                                applying (made with the first component that has hooks) */
    int hook_depth;          /* inside an event hook: structural calls are recorded */
    bool flushing;
} ecs__hooks_state;

typedef struct ecs__events_state {      /* >>events */
    ecs__evlog *logs;        /* per event type, in registration order */
    uint32_t log_count, log_cap;
    ecs__observer *observers;
    uint32_t observer_count, observer_cap;
    ecs_commands *waiting;   /* ecs_world_emit's events, for the next sync point */
    uint32_t observing;      /* the observer running + 1 (thread 0, at a sync point) */
    bool hold;               /* waiting is not delivered (ecs_progress's leftover sync points) */
    bool staged;             /* events staged and not yet delivered (an EXCLUSIVE system's
                                sync point, or one that failed) */
    bool resimulating;
} ecs__events_state;

typedef struct ecs__systems_state {     /* >>systems */
    ecs__system *systems;
    uint32_t system_count, system_cap;
    ecs__map system_names;   /* name hash -> system index */
    ecs__stage *stages;
    uint32_t stage_count, stage_cap;
} ecs__systems_state;

typedef struct ecs__sched_state {       /* >>sched */
    int phase;
    ecs__tctx *tctx;         /* `threads` entries */
    int workers;             /* worker threads started */
    bool workers_tried;      /* they start at the first parallel stage */
#if ECS__THREADS
    ecs__mtx park_lock;      /* idle workers sleep on park, a waiting thread 0 on main_park */
    ecs__cnd park, main_park;
    bool quit;
    bool sync_made;
#  ifdef ECS_VALGRIND
    ecs__mtx qmtx;
#  endif
    ECS__ATOMIC(int) qlock;
    ECS__ATOMIC(int) sleepers;
    ECS__ATOMIC(int) main_sleeping;
    ECS__ATOMIC(uint32_t) queued;    /* tasks in the shared heap: what workers can take */
    ECS__ATOMIC(uint32_t) main_queued;   /* tasks only thread 0 can take */
#endif
    ECS__ATOMIC(int) hold;           /* an exclusive system waits: workers take nothing */
    ECS__ATOMIC(int) busy;           /* workers inside a task */
    ECS__ATOMIC(int32_t) remaining;  /* systems of the running stage not finished */
    ECS__ATOMIC(uint32_t) due;       /* systems whose commands wait for a sync point */
    ECS__ATOMIC(uint32_t) due_cmds;  /* ...their commands (until a sync point applies them all) */
    ecs__job_fn job_fn;              /* a job's pieces (ecs__job_run: thread 0 posts, any thread
                                        takes) */
    ECS__ATOMIC(int32_t) job_left;   /* pieces not taken (the next is job_left - 1) */
    ECS__ATOMIC(uint32_t) job_done;
    ECS__ATOMIC(int) job_on, job_users;   /* a job is posted; workers reading it */
    ECS__ATOMIC(uint64_t) job_work;  /* thread time in pieces, this timed frame */
    uint64_t job_wall;               /* thread 0's wall time in jobs, this timed frame */
    ECS__ATOMIC(int) failed;         /* the ecs_result that stopped this frame, or 0 */
    ecs__msg fail_msg;               /* its line, when not out of memory */
    uint32_t excl_table;             /* the table an EXCLUSIVE system's batch holds, or NONE */
    uint32_t excl_system;
    uint32_t *ready, ready_count, *main_ready, main_count;   /* heaps, under the queue lock */
    uint32_t *parked, parked_count;  /* ready, but an independent_of partner runs */
    double *ranks;           /* per system: the critical path's queue priority */
    const double *prio;      /* the heaps' key: ranks, or shuffled when shuffling (>>netcode) */
    double *shuffled;
    uint32_t shuffled_n;     /* ...its entries */
    uint64_t shuffle_seed;   /* 0: none */
    uint64_t shuffle_now;    /* this frame's (0 when not shuffling) */
    ECS__ATOMIC(int) jitter; /* workers delay at random before taking (shuffling) */
    uint64_t sched_builds;   /* the graph build the arrays above (and the stage estimates) are
                                for: adding a system or a stage rebuilds the graph */
    bool measure;            /* the next frame is timed and runs every stage in parallel:
                                new systems have no measured work yet */
    const ecs__stage_graph *stage_run;
    bool parallel;           /* stage_run runs on several threads */
    float dt, real_dt;       /* this turn's it->dt, and ecs_progress's dt */
    ECS__ATOMIC(uint32_t) time_scale;   /* a float's bits (ecs__scale): getters may read it while a
                                MAIN_THREAD system sets it */
    uint64_t turn;           /* the running stage's turn (intervals count these) */
    uint32_t step;           /* ...within this frame (the trace numbers steps) */
    uint64_t frame;
} ecs__sched_state;

static float ecs__scale(const ecs_world *w);
static void  ecs__scale_set(ecs_world *w, float scale);

typedef struct ecs__stats_state {       /* >>stats */
    int timing_interval;     /* 0: automatic (every 8th frame, ECS_TIMING_MS apart) */
    uint64_t timed_at;       /* the latest timed frame's start */
    uint64_t sync_ns;        /* this timed frame's sync points: wall time (thread 0 applies) */
    bool timing;
    ecs_frame_stats frame_stats;
} ecs__stats_state;

typedef struct ecs__netsys {   /* >>netcode: a system's, beside it (the system array stays as it was) */
    uint64_t hash;           /* what it wrote this turn (ran: it ran) */
    bool ran;
    uint32_t perm_mul, perm_add;   /* shuffled chunk order, this run */
    uint64_t *chunk_hash;    /* per chunk, hashed by the thread that ran it */
    uint32_t chunk_cap;
} ecs__netsys;

typedef struct ecs__htrace_state {      /* >>netcode */
    bool on;
    ecs_hash_step *steps;    /* the latest frame's */
    uint32_t count, cap;
    ecs__netsys *sys;        /* per system, while tracing or shuffling */
    uint32_t sys_count;
    bool in_turn;            /* ecs__stage_turn_traced runs the turn */
} ecs__htrace_state;

typedef struct ecs__trace_state {       /* >>trace */
    ECS__ATOMIC(uint32_t) trace_lost;
    bool tracing;
    uint64_t trace_origin;
} ecs__trace_state;

struct ecs_world {
    void *(*realloc_fn)(void *, size_t, void *);
    void *alloc_user;
    int threads;
    ecs_order order;
    bool check_reads;
    bool vzeroupper;         /* the CPU has AVX (ECS__VZEROUPPER builds) */
    uint64_t random_seed;    /* ecs_random's (>>netcode); part of snapshots */
    ecs__msg error;
    int deferring;           /* defer_depth + hook_depth: one test on the hot paths */
    ecs__ids_state reg;
    ecs__entity_state ent;
    ecs__hierarchy_state hier;
    ecs__table_state tab;
    ecs__change_state chg;
    ecs__query_state qry;
    ecs__commands_state cmd;
    ecs__events_state ev;
    ecs__hooks_state hk;
    ecs__systems_state sys;
    ecs__graph graph;
    ecs__sched_state sched;
    ecs__stats_state stats;
    ecs__trace_state trace;
    ecs__htrace_state htrace;
};


static void *ecs__alloc(ecs_world *w, size_t n) { return w->realloc_fn(NULL, n, w->alloc_user); }
static void *ecs__realloc(ecs_world *w, void *p, size_t n) { return w->realloc_fn(p, n, w->alloc_user); }
static void  ecs__free(ecs_world *w, void *p) { if (p) w->realloc_fn(p, 0, w->alloc_user); }

/* The time scale, kept as a float's bits in an atomic. */
static float ecs__scale(const ecs_world *w) {
    uint32_t bits = ecs__load(&w->sched.time_scale);
    float scale;
    memcpy(&scale, &bits, 4);
    return scale;
}

static void ecs__scale_set(ecs_world *w, float scale) {
    uint32_t bits;
    memcpy(&bits, &scale, 4);
    ecs__store(&w->sched.time_scale, bits);
}

/* The context of the calling thread while systems run (tctx[0] for the
   ecs_progress caller and any thread that is not a worker). */
static ecs__tctx *ecs__thread_ctx(const ecs_world *w) {
#if ECS__THREADS
    if (w->sched.workers) {
        ecs__thrd self = ecs__thrd_self();
        for (int i = 1; i <= w->sched.workers; i++)
            if (ecs__thrd_equal(w->sched.tctx[i].id, self)) return &w->sched.tctx[i];
    }
#endif
    return &w->sched.tctx[0];
}

/* Each worker has its own message buffer, so failing calls in parallel
   systems never write the same memory. */
static ecs__msg *ecs__error_buf(const ecs_world *cw) {
    ecs_world *w = (ecs_world *)cw;
    if (w->sched.phase != ECS__IDLE && w->sched.tctx) {
        ecs__tctx *tc = ecs__thread_ctx(w);
        if (tc->index) return &tc->error;
    }
    return &w->error;
}

static const char *ecs__msg_text(const ecs__msg *m) { return m->use_big ? m->big : m->small; }

static void ecs__msg_vset(ecs_world *w, ecs__msg *m, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(m->small, sizeof m->small, fmt, ap);
    m->use_big = false;
    if (n >= (int)sizeof m->small) {
        if ((size_t)n + 1 > m->cap) {
            char *p = (char *)ecs__realloc(w, m->big, (size_t)n + 1);
            if (p) { m->big = p; m->cap = (size_t)n + 1; }
        }
        if ((size_t)n + 1 <= m->cap) { vsnprintf(m->big, m->cap, fmt, again); m->use_big = true; }
    }
    va_end(again);
}

static void ecs__msg_set(ecs_world *w, ecs__msg *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ecs__msg_vset(w, m, fmt, ap);
    va_end(ap);
}

/* Records a failure: the result code plus one line for ecs_last_error. The
   message buffer is the only state a const call may change. */
ECS__COLD ecs_result ecs__fail(const ecs_world *cw, ecs_result r, const char *fmt, ...) {
    ecs_world *w = (ecs_world *)cw;
    va_list ap;
    va_start(ap, fmt);
    ecs__msg_vset(w, ecs__error_buf(w), fmt, ap);
    va_end(ap);
    return r;
}

#define ECS__OOM(w, fn) ecs__fail((w), ECS_ERR_NOMEM, "%s: out of memory", (fn))

ECS_API const char *ecs_last_error(const ecs_world *w) {
    return w ? ecs__msg_text(ecs__error_buf(w)) : "world is NULL";
}

/* While ordinary systems run (phase SYSTEMS) nothing that other threads
   read may change: no structural change (they go through it->commands), no
   new id, query or buffer. An EXCLUSIVE system runs with every other thread
   idle (phase SYNC) and may do all of that; the system graph itself changes
   only outside ecs_progress. */
static ecs_result ecs__check_running(const ecs_world *w, const char *fn) {
    if (w->sched.phase != ECS__SYSTEMS) return ECS_OK;
    return ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed while systems run; record structural "
                     "changes in it->commands, or make the system EXCLUSIVE", fn);
}

static ecs_result ecs__check_idle(const ecs_world *w, const char *fn) {
    if (w->sched.phase == ECS__IDLE) return ECS_OK;
    return ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed during ecs_progress", fn);
}

ECS_API const char *ecs_result_str(ecs_result r) {
    switch (r) {
    case ECS_OK: return "ECS_OK";
    case ECS_ERR_ARG: return "ECS_ERR_ARG";
    case ECS_ERR_STALE: return "ECS_ERR_STALE";
    case ECS_ERR_NOMEM: return "ECS_ERR_NOMEM";
    case ECS_ERR_INVALID_GRAPH: return "ECS_ERR_INVALID_GRAPH";
    case ECS_ERR_BUSY: return "ECS_ERR_BUSY";
    case ECS_ERR_ACCESS: return "ECS_ERR_ACCESS";
    }
    return "unknown ecs_result";
}

/* ---- >>terms: what a term matches, accesses and filters, and its name ---- */
/* The one home of term and operator semantics: queries, systems, the access
   checks, validation and messages ask these (a new operator is this section
   plus the enum). It comes before >>access, whose checks need it. */

/* Whether the term requires its id: AND, and CHANGED (an AND term that
   also filters batches by change, >>change). */
static bool ecs__term_requires(const ecs_term *t) { return t->oper == ECS_AND || t->oper == ECS_CHANGED; }

/* What a term declares about its id (ECS__ bits): an AND term requires it,
   a NOT term excludes it and touches nothing, an OPTIONAL term neither; AND
   and OPTIONAL terms read it, and write it with ECS_WRITE. */
static uint32_t ecs__term_how(const ecs_term *t) {
    if (t->oper == ECS_NOT) return ECS__FNOT;
    return ECS__TR | (t->access & ECS_WRITE ? ECS__TW : 0) | (ecs__term_requires(t) ? ECS__FAND : 0);
}

/* Whether a table that has (has) or lacks the term's id passes the term. */
static bool ecs__term_admits(const ecs_term *t, bool has) {
    return ecs__term_requires(t) ? has : t->oper == ECS_NOT ? !has : true;
}

/* Whether a term list may match a prefab's table: only one that names the
   prefab tag (with any operator); prefabs are invisible to the rest. */
static bool ecs__terms_see_prefabs(const ecs_term *terms, int n) {
    for (int i = 0; i < n; i++) if (terms[i].id == ECS__PREFAB) return true;
    return false;
}

/* Whether the term hands out a column (ECS_FIELD): every term but NOT. */
static bool ecs__term_field(const ecs_term *t) { return t->oper != ECS_NOT; }

/* The term's operator in messages: "!Frozen", "?Velocity", "~Health"
   (words: "NOT Frozen", "OPTIONAL Velocity", "CHANGED Health"); nothing
   for AND. */
static const char *ecs__term_mark(const ecs_term *t, bool words) {
    if (t->oper == ECS_NOT) return words ? "NOT " : "!";
    if (t->oper == ECS_OPTIONAL) return words ? "OPTIONAL " : "?";
    if (t->oper == ECS_CHANGED) return words ? "CHANGED " : "~";
    return "";
}

#if ECS_CHECK_ACCESS   /* (only the access checks ask) */
/* Whether two terms filter alike (both AND, or both NOT). */
static bool ecs__same_filter(const ecs_term *a, const ecs_term *b) {
    return (ecs__term_how(a) & ECS__FILTERS) == (ecs__term_how(b) & ECS__FILTERS);
}
#endif

/* Whether the term's operator is one ecs.h knows (a caller's term is
   checked with this before anything above is asked). */
static bool ecs__term_oper_known(const ecs_term *t) { return (unsigned)t->oper <= ECS_CHANGED; }

/* Whether filters on one id (ECS__ bits of two declarations) rule out a
   common table: one requires it, the other excludes it. */
static bool ecs__filters_exclude(uint32_t ha, uint32_t hc) {
    return ((ha & ECS__FAND) && (hc & ECS__FNOT)) || ((ha & ECS__FNOT) && (hc & ECS__FAND));
}

/* ---- >>access: the debug access checks ----------------------------------- */
/* What a system may touch while it runs is what it declared (terms, reads,
   writes); validation proves that nothing else touches the same data at the
   same time. These checks refuse whatever would fall outside that proof:
   they record the refusal per thread, and ecs_progress reports the one of
   the lowest-registered system once the frame is over. */

/* Refuses a call: the thread's error line, and, inside a system, the note
   ecs_progress turns into ECS_ERR_ACCESS. */
ECS__COLD ecs_result ecs__refuse(const ecs_world *cw, const char *fmt, ...) {
    ecs_world *w = (ecs_world *)cw;
    ecs__msg *m = ecs__error_buf(w);
    va_list ap;
    va_start(ap, fmt);
    ecs__msg_vset(w, m, fmt, ap);
    va_end(ap);
    if (w->sched.phase != ECS__IDLE && w->sched.tctx) {
        ecs__tctx *tc = ecs__thread_ctx(w);
        if (tc->current && (!tc->refused || tc->current < tc->refused)) {
            tc->refused = tc->current;
            ecs__msg_set(w, &tc->refusal, "%s%s", ecs__msg_text(m), tc->asking ? " (in its run_if)" : "");
        }
    }
    return ECS_ERR_ACCESS;
}

/* Merges (id, how) into a declaration kept by ascending id. */
static void ecs__decl_put(ecs__decl *decl, uint32_t *count, ecs_id id, uint32_t how) {
    uint32_t p = *count;
    while (p > 0 && decl[p - 1].id > id) p--;
    if (p > 0 && decl[p - 1].id == id) { decl[p - 1].how |= how; return; }
    memmove(decl + p + 1, decl + p, (*count - p) * sizeof *decl);
    decl[p].id = id;
    decl[p].how = how;
    (*count)++;
}

/* What system s declared about id (its ECS__ bits; 0: nothing). */
static uint32_t ecs__declared(const ecs__system *s, ecs_id id) {
    for (uint32_t i = 0; i < s->decl_count && s->decl[i].id <= id; i++)
        if (s->decl[i].id == id) return s->decl[i].how;
    return 0;
}

#if ECS_CHECK_ACCESS
/* The system the calling thread runs, if the checks apply to it: not
   outside systems, not in an EXCLUSIVE one (it runs alone). */
static const ecs__system *ecs__checked(const ecs_world *w, const ecs__tctx **tcp) {
    if (w->sched.phase == ECS__IDLE || !w->sched.tctx) return NULL;
    const ecs__tctx *tc = ecs__thread_ctx(w);
    if (!tc->current) return NULL;
    const ecs__system *s = &w->sys.systems[tc->current - 1];
    if (s->flags & ECS_SYSTEM_EXCLUSIVE) return NULL;
    *tcp = tc;
    return s;
}


static int32_t ecs__table_find_id(const ecs__table *t, ecs_id id);

/* Whether a system's query matches table t (its AND and NOT terms). */
static bool ecs__system_matches(const ecs__system *s, const ecs__table *t) {
    if (t->prefab && !ecs__terms_see_prefabs(s->terms, s->term_count)) return false;
    for (int k = 0; k < s->term_count; k++) {
        if (!ecs__term_admits(&s->terms[k], ecs__table_find_id(t, s->terms[k].id) >= 0)) return false;
    }
    return true;
}

/* ecs_get (write false), ecs_get_mut / ecs_set (write true) of entity e (0
   for a resource) inside a system: the id must be declared, for writing if
   write; a chunked system's other chunks write what it writes, so there it
   may only touch its own batch's rows. An id declared only by the terms of a
   system that validation let run beside a disjoint query covers only the
   tables its query matches. */
static bool ecs__observer_access_ok(const ecs_world *w, const char *fn, ecs_id id, bool write);
static bool ecs__access_ok(const ecs_world *w, const char *fn, ecs_id id, bool write, ecs_entity e) {
    if (ECS__UNLIKELY(w->ev.observing)) return ecs__observer_access_ok(w, fn, id, write);
    const ecs__tctx *tc = NULL;
    const ecs__system *s = ecs__checked(w, &tc);
    if (!s) return true;
    uint32_t how = ecs__declared(s, id);
    if (!(how & ECS__ACCESSES) || (write && !(how & ECS__WRITES))) {
        ecs__refuse(w, "%s: system \"%s\" did not declare %s access to \"%s\"; add it to its "
                    "terms, reads or writes", fn, s->name, write ? "write" : "read", w->reg.ids[id].name);
        return false;
    }
    if (s->disjoint && !(how & (write ? ECS__LW : ECS__LR)) && e &&
        !ecs__system_matches(s, w->tab.tables[w->ent.records[ecs__index(e)].table])) {
        ecs__refuse(w, "%s: system \"%s\" declares \"%s\" only through its query terms, and runs beside "
                    "\"%s\", whose query is disjoint from its own, so it may touch \"%s\" only on entities "
                    "its query matches; add \"%s\" to its %s", fn, s->name, w->reg.ids[id].name,
                    w->sys.systems[s->disjoint - 1].name, w->reg.ids[id].name, w->reg.ids[id].name,
                    write ? "writes" : "reads");
        return false;
    }
    if (s->chunk_size > 0 && (how & ECS__WRITES)) {
        if (e) {
            const ecs__record *r = &w->ent.records[ecs__index(e)];
            if ((const void *)w->tab.tables[r->table] == tc->batch_table &&
                r->row - tc->batch_row < tc->batch_count)
                return true;
        }
        ecs__refuse(w, "%s: system \"%s\" is chunked and writes \"%s\", so its other chunks "
                    "write it at the same time: it may touch only the rows of its own batch; "
                    "drop chunk_size, or do this in an unchunked system", fn, s->name, w->reg.ids[id].name);
        return false;
    }
    return true;
}

/* ecs_query_iter inside a system: every AND / OPTIONAL term must be declared
   (WRITE terms for writing); in a chunked system none may touch what it
   writes, nor may the query be one its loops mark. */
static bool ecs__query_access_ok(const ecs_world *w, const ecs_query *q) {
    const ecs__tctx *tc = NULL;
    const ecs__system *s = ecs__checked(w, &tc);
    if (!s) return true;
    if (s->chunk_size > 0 && (q->changed || q->tracked)) {   /* its loops mark it (>>change) */
        ecs__refuse(w, "ecs_query_iter: system \"%s\" is chunked, and its chunks would each mark this query "
                    "(it has ECS_CHANGED terms or was asked ecs_query_changed) at once; use it in an unchunked "
                    "system", s->name);
        return false;
    }
    for (int k = 0; k < q->term_count; k++) {
        const ecs_term *t = &q->terms[k];
        uint32_t th = ecs__term_how(t);
        if (!(th & ECS__TR)) continue;   /* touches nothing */
        uint32_t how = ecs__declared(s, t->id);
        bool write = (th & ECS__TW) != 0;
        if (!(how & ECS__ACCESSES) || (write && !(how & ECS__WRITES))) {
            ecs__refuse(w, "ecs_query_iter: system \"%s\" iterates a query with %s access to \"%s\" "
                        "but did not declare it; add \"%s\" to its %s", s->name,
                        write ? "write" : "read", w->reg.ids[t->id].name, w->reg.ids[t->id].name,
                        write ? "writes" : "reads");
            return false;
        }
        if (s->chunk_size > 0 && (how & ECS__WRITES)) {
            ecs__refuse(w, "ecs_query_iter: system \"%s\" is chunked and writes \"%s\", which this "
                        "query reads in every table while its other chunks write it; drop "
                        "chunk_size, or iterate in an unchunked system", s->name, w->reg.ids[t->id].name);
            return false;
        }
        if (s->disjoint && !(how & (write ? ECS__LW : ECS__LR))) {   /* the query must stay inside the
                                                                      system's tables */
            for (int f = 0; f < s->term_count; f++) {
                const ecs_term *st = &s->terms[f];
                if (!(ecs__term_how(st) & ECS__FILTERS)) continue;
                int g = 0;
                while (g < q->term_count && !(q->terms[g].id == st->id && ecs__same_filter(&q->terms[g], st))) g++;
                if (g < q->term_count) continue;
                ecs__refuse(w, "ecs_query_iter: system \"%s\" declares \"%s\" only through its query terms, "
                            "and runs beside \"%s\", whose query is disjoint from its own, so a nested query "
                            "over \"%s\" needs the term %s%s of its query (or \"%s\" in its %s)", s->name,
                            w->reg.ids[t->id].name, w->sys.systems[s->disjoint - 1].name, w->reg.ids[t->id].name,
                            ecs__term_mark(st, true),
                            w->reg.ids[st->id].name, w->reg.ids[t->id].name, write ? "writes" : "reads");
                return false;
            }
        }
    }
    return true;
}
#else
static bool ecs__access_ok(const ecs_world *w, const char *fn, ecs_id id, bool write, ecs_entity e) {
    (void)w; (void)fn; (void)id; (void)write; (void)e;
    return true;
}

static bool ecs__query_access_ok(const ecs_world *w, const ecs_query *q) {
    (void)w; (void)q;
    return true;
}
#endif

/* A checksum of n values of size bytes (check_reads): 8 bytes a step. */
static uint64_t ecs__hash_column(const unsigned char *p, size_t bytes) {
    uint64_t h = 0x9e3779b97f4a7c15ull, x;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) { memcpy(&x, p + i, 8); h = (h ^ x) * 0xff51afd7ed558ccdull; h ^= h >> 29; }
    for (; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* check_reads: the READ columns the batch was handed (and the system does
   not declare for writing anywhere) must come back unchanged. */
ECS__COLD void ecs__call_checked(ecs_world *w, const ecs__system *s, ecs_iter *it) {
    uint64_t before[ECS_MAX_TERMS];
    size_t bytes[ECS_MAX_TERMS];
    bool check[ECS_MAX_TERMS];
    for (int i = 0; i < s->term_count; i++) {
        const ecs_term *t = &s->terms[i];
        check[i] = it->priv.fields[i] && !(ecs__term_how(t) & ECS__TW);
        if (ecs__declared(s, t->id) & ECS__WRITES) check[i] = false;
        if (!check[i]) continue;
        bytes[i] = (size_t)it->count * w->reg.ids[t->id].size;
        before[i] = ecs__hash_column((const unsigned char *)it->priv.fields[i], bytes[i]);
    }
    s->fn(it);
    for (int i = 0; i < s->term_count; i++)
        if (check[i] && ecs__hash_column((const unsigned char *)it->priv.fields[i], bytes[i]) != before[i]) {
            ecs__refuse(w, "check_reads: system \"%s\" wrote to \"%s\" through a READ field (term %d); "
                        "declare the term ECS_WRITE", s->name, w->reg.ids[s->terms[i].id].name, i);
            break;
        }
}

/* ---- >>hooks: lifecycle and event hooks, and when they fire -------------- */
/* Tables that hold a component with hooks take the hooked paths: a value is
   constructed once, moved (dst raw, src left raw) and destroyed once. The
   event hooks fire through ecs__on_add/on_set/on_remove, the one home of
   their rules: on_add once the component is there (its value constructed),
   on_set after a value is copied in (never for a tag), on_remove while the
   entity still has the value; structural calls made inside them are
   recorded and applied right after (ecs__hooks_flush). This section comes
   before >>ids and >>table, which construct values and fire hooks. */
static void ecs__construct(const ecs__idinfo *in, unsigned char *p, uint32_t n) {
    if (in->ctor) in->ctor(p, (int)n, in->ctx);
    else if (n == 1) ecs__cell_zero(p, in->size);
    else memset(p, 0, (size_t)n * in->size);
}

static void ecs__relocate(const ecs__idinfo *in, unsigned char *dst, unsigned char *src) {
    if (in->move) in->move(dst, src, 1, in->ctx);
    else ecs__cell_copy(dst, src, in->size);
}

/* n constructed values at dst take src's (copy, else their bytes). */
static void ecs__copy_into(const ecs__idinfo *in, unsigned char *dst, const void *src, uint32_t n) {
    if (in->copy) in->copy(dst, src, (int)n, in->ctx);
    else memcpy(dst, src, (size_t)n * in->size);
}

/* n values at p die (dtor, if any). */
static void ecs__destruct(const ecs__idinfo *in, unsigned char *p, uint32_t n) {
    if (in->dtor && n) in->dtor(p, (int)n, in->ctx);
}

/* Runs an event hook; structural calls made in it are recorded (see
   ecs__hooks_flush). */
static void ecs__fire(ecs_world *w, ecs_hook_fn fn, ecs_entity e, ecs_id id, void *value) {
    w->hk.hook_depth++;
    w->deferring++;
    fn(w, e, id, value, w->reg.ids[id].ctx);
    w->deferring--;
    w->hk.hook_depth--;
}

/* A prefab (an entity of a table with the prefab tag) gets no event hooks;
   its values still get ctor, copy and dtor. */
static bool ecs__quiet(const ecs_world *w, ecs_entity e) {
    return w->tab.prefab_tables && w->tab.tables[w->ent.records[ecs__index(e)].table]->prefab;
}

/* The event hooks of id for entity e, whose value (NULL for a tag) is at
   cell. */
static void ecs__on_add(ecs_world *w, ecs_entity e, ecs_id id, void *cell) {
    if (w->reg.ids[id].on_add && !ecs__quiet(w, e)) ecs__fire(w, w->reg.ids[id].on_add, e, id, cell);
}

static void ecs__on_set(ecs_world *w, ecs_entity e, ecs_id id, void *cell) {
    if (w->reg.ids[id].on_set && cell && !ecs__quiet(w, e)) ecs__fire(w, w->reg.ids[id].on_set, e, id, cell);
}

static void ecs__on_remove(ecs_world *w, ecs_entity e, ecs_id id, void *cell) {
    if (w->reg.ids[id].on_remove && !ecs__quiet(w, e)) ecs__fire(w, w->reg.ids[id].on_remove, e, id, cell);
}

/* dtor of one value, and of every value in row (their entity goes away). */
static void ecs__destruct_cell(const ecs__idinfo *ids, const ecs__column *col, uint32_t row) {
    ecs__destruct(&ids[col->id], col->data + (size_t)row * col->size, 1);
}

static void ecs__destruct_row(ecs_world *w, ecs__table *t, uint32_t row) {
    for (uint32_t c = 0; c < t->column_count; c++) ecs__destruct_cell(w->reg.ids, &t->columns[c], row);
}

static void ecs__buffer_free(ecs_world *w, ecs_commands *c);

/* The buffers of structural calls made in hooks (what they still hold is
   dropped, never applied). */
static void ecs__hooks_fini(ecs_world *w) {
    if (!w->hk.hook_buf) return;
    ecs__buffer_free(w, w->hk.hook_buf);
    ecs__buffer_free(w, w->hk.hook_drain);
}

/* ---- >>ids: components, tags, resources ----------------------------------- */
static bool ecs__id_valid(const ecs_world *w, ecs_id id) { return id >= 1 && id <= w->reg.id_count; }

/* ECS_OK if id can sit on an entity (a component or tag), else ECS_ERR_ARG
   with a message naming the calling function. */
ECS__COLD ecs_result ecs__bad_component(const ecs_world *w, const char *fn, ecs_id id) {
    if (!ecs__id_valid(w, id))
        return ecs__fail(w, ECS_ERR_ARG, "%s: id %u is not registered", fn, (unsigned)id);
    return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is %s, not a component", fn, w->reg.ids[id].name,
                     w->reg.ids[id].event ? "an event type" : "a resource");
}

static inline ecs_result ecs__check_component(const ecs_world *w, const char *fn, ecs_id id) {
    return ecs__id_valid(w, id) && !w->reg.ids[id].resource && !w->reg.ids[id].event ? ECS_OK
                                                                                      : ecs__bad_component(w, fn, id);
}

/* As ecs__check_component, for an id an entity gains or loses (add, remove,
   set, create): the prefab tag only comes with ecs_prefab_new and stays. */
static ecs_result ecs__check_addable(const ecs_world *w, const char *fn, ecs_id id) {
    if (id == ECS__PREFAB)
        return ecs__fail(w, ECS_ERR_ARG, "%s: the prefab tag comes only with ecs_prefab_new, and "
                         "stays (instantiate a prefab to get a live entity)", fn);
    return ecs__check_component(w, fn, id);
}

static ecs_id ecs__id_find(const ecs_world *w, const char *name) {
    uint64_t h = ecs__hash_bytes(name, strlen(name)), *v;
    uint32_t step = 0;
    while ((v = ecs__map_next(&w->reg.id_names, h, &step)))
        if (!strcmp(w->reg.ids[*v].name, name)) return (ecs_id)*v;
    return 0;
}

enum { ECS__KIND_COMPONENT, ECS__KIND_RESOURCE, ECS__KIND_EVENT };
static const char *const ecs__kind_name[] = {"component", "resource", "event type"};
static int ecs__kind(const ecs__idinfo *in) {
    return in->resource ? ECS__KIND_RESOURCE : in->event ? ECS__KIND_EVENT : ECS__KIND_COMPONENT;
}

static bool ecs__log_add(ecs_world *w);

static ecs_id ecs__register(ecs_world *w, const char *fn, const char *name, size_t size,
                            size_t align, int kind, const void *init) {
    const bool resource = kind == ECS__KIND_RESOURCE;
    if (!w || ecs__check_running(w, fn)) return 0;
    if (w->hk.hook_depth) {   /* a hook's caller holds pointers into the id table */
        ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed inside a component hook", fn);
        return 0;
    }
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
        const ecs__idinfo *in = &w->reg.ids[id];
        if (ecs__kind(in) == kind && in->size == size) return id;   /* the first align stands */
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is already registered as a %s of size %u "
                  "(now asked for a %s of size %zu)", fn, name, ecs__kind_name[ecs__kind(in)],
                  (unsigned)in->size, ecs__kind_name[kind], size);
        return 0;
    }
    size_t len = strlen(name) + 1;
    char *copy = NULL;
    void *raw = NULL;
    if (!ECS__RESERVE(w, w->reg.ids, w->reg.id_cap, (size_t)w->reg.id_count + 2) ||
        !ecs__map_reserve(w, &w->reg.id_names, 1) ||
        !(copy = (char *)ecs__alloc(w, len)) ||
        (resource && !(raw = ecs__alloc(w, size + align - 1))) ||
        (kind == ECS__KIND_EVENT && !ecs__log_add(w))) {
        ecs__free(w, copy);
        ECS__OOM(w, fn);
        return 0;
    }
    memcpy(copy, name, len);
    id = ++w->reg.id_count;
    ecs__idinfo *in = &w->reg.ids[id];
    memset(in, 0, sizeof *in);
    in->name = copy; in->size = (uint32_t)size; in->align = (uint32_t)align;
    in->resource = resource;
    if (kind == ECS__KIND_EVENT) {   /* ecs__log_add made room */
        in->event = ++w->ev.log_count;
        memset(&w->ev.logs[in->event - 1], 0, sizeof w->ev.logs[0]);
        w->ev.logs[in->event - 1].id = id;
    }
    if (resource) {
        in->raw = raw;
        in->data = (void *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
        if (init) memcpy(in->data, init, size); else memset(in->data, 0, size);
    }
    ecs__map_put(&w->reg.id_names, ecs__hash_bytes(name, len - 1), id);
    return id;
}

ECS_API ecs_id ecs_component(ecs_world *w, const char *name, size_t size, size_t align) {
    return ecs__register(w, "ecs_component", name, size, align, ECS__KIND_COMPONENT, NULL);
}

ECS_API ecs_id ecs_resource(ecs_world *w, const char *name, size_t size, size_t align,
                            const void *init) {
    return ecs__register(w, "ecs_resource", name, size, align, ECS__KIND_RESOURCE, init);
}

static ecs_commands *ecs__commands_new(ecs_world *w);

/* The checks a component's and an event type's desc share: serialize and
   deserialize as a pair, entity fields inside the value. */
static bool ecs__value_desc_bad(const ecs_world *w, const char *fn, const char *name, size_t size, bool ser,
                                bool deser, const size_t *fields, int field_count) {
    if (ser != deser)
        return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": serialize and deserialize come as a pair", fn, name);
    if (field_count < 0 || field_count > ECS_MAX_ENTITY_FIELDS)
        return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": entity_field_count %d is not in 0..%d", fn, name,
                         field_count, ECS_MAX_ENTITY_FIELDS);
    for (int k = 0; k < field_count; k++)
        if (fields[k] > size || size - fields[k] < sizeof(ecs_entity))
            return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": entity_fields[%d] = %zu does not hold an ecs_entity "
                             "inside its %zu bytes", fn, name, k, fields[k], size);
    return false;
}

/* The buffers where structural calls made in hooks and observers wait. */
static bool ecs__hook_bufs(ecs_world *w) {
    if (w->hk.hook_buf) return true;
    ecs_commands *a = ecs__commands_new(w), *b = a ? ecs__commands_new(w) : NULL;
    if (!b) {
        if (a) ecs__buffer_free(w, a);
        return false;
    }
    w->hk.hook_buf = a;
    w->hk.hook_drain = b;
    return true;
}

/* Whether id's hooks are exactly desc's. */
static bool ecs__hooks_equal(const ecs__idinfo *in, const ecs_component_desc *d) {
    if (in->ctor != d->ctor || in->dtor != d->dtor || in->copy != d->copy || in->move != d->move ||
        in->on_add != d->on_add || in->on_set != d->on_set || in->on_remove != d->on_remove ||
        in->ctx != d->ctx || in->entity_field_count != d->entity_field_count ||
        in->serialize != d->serialize || in->deserialize != d->deserialize)
        return false;
    for (int k = 0; k < d->entity_field_count; k++)
        if (in->entity_fields[k] != d->entity_fields[k]) return false;
    return true;
}

/* ecs_component_init and ecs_resource_init: check desc, register, keep
   the hooks. A resource is constructed here and copied from init. */
static ecs_id ecs__init(ecs_world *w, const char *fn, const ecs_component_desc *d, bool resource,
                        const void *init) {
    if (!w) return 0;
    if (!d) { ecs__fail(w, ECS_ERR_ARG, "%s: desc is NULL", fn); return 0; }
    const char *name = d->name ? d->name : "";
    bool lifecycle = d->ctor || d->dtor || d->copy || d->move, events = d->on_add || d->on_set || d->on_remove;
    if (resource && (events || d->entity_field_count)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is a resource: it has no entity for on_add, on_set, "
                  "on_remove or entity_fields", fn, name);
        return 0;
    }
    if (d->size == 0 && (lifecycle || d->on_set || d->entity_field_count)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is a tag (size 0): it has no value for ctor, dtor, copy, "
                  "move, on_set or entity_fields", fn, name);
        return 0;
    }
    if (ecs__value_desc_bad(w, fn, name, d->size, d->serialize != NULL, d->deserialize != NULL,
                            d->entity_fields, d->entity_field_count))
        return 0;
    ecs_id known = d->name ? ecs__id_find(w, d->name) : 0;
    if (known && !ecs__hooks_equal(&w->reg.ids[known], d)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is already registered with other hooks", fn, name);
        return 0;
    }
    if ((lifecycle || events) && !resource && !ecs__hook_bufs(w)) {
        ECS__OOM(w, fn);
        return 0;
    }
    ecs_id id = ecs__register(w, fn, d->name, d->size, d->align, resource ? ECS__KIND_RESOURCE : ECS__KIND_COMPONENT, NULL);
    if (!id || known) return id;
    ecs__idinfo *in = &w->reg.ids[id];
    in->ctor = d->ctor; in->dtor = d->dtor; in->copy = d->copy; in->move = d->move;
    in->on_add = d->on_add; in->on_set = d->on_set; in->on_remove = d->on_remove;
    in->ctx = d->ctx;
    in->serialize = d->serialize; in->deserialize = d->deserialize;
    in->lifecycle = lifecycle;
    in->events = events;
    in->entity_field_count = d->entity_field_count;
    for (int k = 0; k < d->entity_field_count; k++) in->entity_fields[k] = (uint32_t)d->entity_fields[k];
    if (resource) {   /* the storage is zeroed: construct, then assign init */
        ecs__construct(in, (unsigned char *)in->data, 1);
        if (init) ecs__copy_into(in, (unsigned char *)in->data, init, 1);
    }
    return id;
}

ECS_API ecs_id ecs_component_init(ecs_world *w, const ecs_component_desc *d) {
    return ecs__init(w, "ecs_component_init", d, false, NULL);
}

ECS_API ecs_id ecs_resource_init(ecs_world *w, const ecs_component_desc *d, const void *init) {
    return ecs__init(w, "ecs_resource_init", d, true, init);
}

ECS_API ecs_id ecs_lookup(const ecs_world *w, const char *name) {
    return w && name ? ecs__id_find(w, name) : 0;
}

ECS_API const char *ecs_id_name(const ecs_world *w, ecs_id id) {
    return w && ecs__id_valid(w, id) ? w->reg.ids[id].name : NULL;
}

ECS_API size_t ecs_id_size(const ecs_world *w, ecs_id id) {
    return w && ecs__id_valid(w, id) ? w->reg.ids[id].size : 0;
}

ECS_API ecs_id ecs_id_count(const ecs_world *w) { return w ? w->reg.id_count : 0; }

ECS_API void *ecs_resource_get(ecs_world *w, ecs_id id) {
    if (!w) return NULL;
    if (!ecs__id_valid(w, id) || !w->reg.ids[id].resource) {
        ecs__fail(w, ECS_ERR_ARG, "ecs_resource_get: id %u is not a resource", (unsigned)id);
        return NULL;
    }
    return ecs__access_ok(w, "ecs_resource_get", id, false, 0) ? w->reg.ids[id].data : NULL;
}

static void ecs__ids_fini(ecs_world *w) {   /* resources die here: dtor */
    for (uint32_t i = 1; i <= w->reg.id_count; i++) {
        ecs__idinfo *in = &w->reg.ids[i];
        if (in->resource) ecs__destruct(in, (unsigned char *)in->data, 1);
        ecs__free(w, in->name);
        ecs__free(w, in->raw);
    }
    ecs__free(w, w->reg.ids);
    ecs__map_fini(w, &w->reg.id_names);
}

/* ---- >>entity: the entity index ------------------------------------------- */
/* A handle is live when its slot holds an entity of the same generation.
   Generations start at 1, so 0 and pending handles (bit 63) never match. */
static bool ecs__alive(const ecs_world *w, ecs_entity e) {
    uint32_t i = ecs__index(e);
    return i < w->ent.record_count && w->ent.records[i].table < ECS__RESERVED &&
           w->ent.records[i].gen == ecs__gen(e);
}

static bool ecs__reserved(const ecs_world *w, ecs_entity e) {
    uint32_t i = ecs__index(e);
    return i < w->ent.record_count && w->ent.records[i].table == ECS__RESERVED &&
           w->ent.records[i].gen == ecs__gen(e);
}

ECS__COLD ecs_result ecs__not_alive(const ecs_world *w, const char *fn, ecs_entity e) {
    if (ecs__reserved(w, e))
        return ecs__fail(w, ECS_ERR_STALE, "%s: entity %u was created in defer mode and is "
                         "live only after ecs_defer_end", fn, (unsigned)ecs__index(e));
    if (e == 0) return ecs__fail(w, ECS_ERR_STALE, "%s: entity 0 is never a live entity", fn);
    if (e & ECS__PENDING)
        return ecs__fail(w, ECS_ERR_STALE, "%s: entity %llx is a pending handle; it is "
                         "live only after its commands are applied", fn, (unsigned long long)e);
    return ecs__fail(w, ECS_ERR_STALE, "%s: entity %u (generation %u) is not alive", fn,
                     (unsigned)ecs__index(e), (unsigned)ecs__gen(e));
}

/* The check every entity call starts with: inline, the message out of line. */
static inline ecs_result ecs__check_alive(const ecs_world *w, const char *fn, ecs_entity e) {
    return ecs__alive(w, e) ? ECS_OK : ecs__not_alive(w, fn, e);
}

/* Slots needed beyond the free list must have been reserved in records. */
static uint32_t ecs__slot_take(ecs_world *w) {
    uint32_t i;
    if (w->ent.free_head != ECS__NONE) {
        i = w->ent.free_head;
        w->ent.free_head = w->ent.records[i].row;
        w->ent.free_count--;
    } else {
        i = w->ent.record_count++;
        w->ent.records[i].gen = 1;
    }
    return i;
}

static bool ecs__slots_reserve(ecs_world *w, size_t n) {
    if (n <= w->ent.free_count) return true;
    size_t need = (size_t)w->ent.record_count + (n - w->ent.free_count);
    return need < ECS__NONE && ECS__RESERVE(w, w->ent.records, w->ent.record_cap, need);
}

/* A slot whose generation is used up is retired: never reused, so no old
   handle can come back to life. */
static void ecs__slot_release(ecs_world *w, uint32_t i) {
    ecs__record *r = &w->ent.records[i];
    r->table = ECS__NONE;
    if (r->gen == ECS__GEN_MAX) return;
    r->gen++;
    r->row = w->ent.free_head;
    w->ent.free_head = i;
    w->ent.free_count++;
}

static void ecs__entity_fini(ecs_world *w) { ecs__free(w, w->ent.records); }

/* ---- >>hierarchy: parents and children, links between slots -------------- */
/* Each slot with a parent or children has an ecs__rel: its parent and its
   place in the parent's child list (attach order). Destruction walks a
   subtree in post-order (children first, siblings in attach order), the
   same order every time. */
static bool ecs__has_rel(const ecs_world *w, uint32_t i) { return i < w->hier.rel_cap; }
static ecs_entity ecs__parent_of(const ecs_world *w, uint32_t i) {
    return ecs__has_rel(w, i) ? w->hier.rels[i].parent : 0;
}

static bool ecs__rels_reserve(ecs_world *w, uint32_t slot) {
    if (slot < w->hier.rel_cap) return true;
    size_t cap = w->ent.record_cap > slot ? w->ent.record_cap : (size_t)slot + 1;
    ecs__rel *n = (ecs__rel *)ecs__realloc(w, w->hier.rels, cap * sizeof *n);
    if (!n) return false;
    memset(n + w->hier.rel_cap, 0, (cap - w->hier.rel_cap) * sizeof *n);
    w->hier.rels = n;
    w->hier.rel_cap = (uint32_t)cap;
    return true;
}

static void ecs__unlink(ecs_world *w, uint32_t c) {
    ecs__rel *r = &w->hier.rels[c];
    if (!r->parent) return;
    ecs__rel *p = &w->hier.rels[ecs__index(r->parent)];
    if (r->prev) w->hier.rels[r->prev - 1].next = r->next; else p->first = r->next;
    if (r->next) w->hier.rels[r->next - 1].prev = r->prev; else p->last = r->prev;
    r->parent = 0;
    r->next = r->prev = 0;
}

static void ecs__link(ecs_world *w, uint32_t c, ecs_entity parent) {   /* at the end: attach order */
    ecs__rel *r = &w->hier.rels[c], *p = &w->hier.rels[ecs__index(parent)];
    r->parent = parent;
    r->next = 0;
    r->prev = p->last;
    if (p->last) w->hier.rels[p->last - 1].next = c + 1; else p->first = c + 1;
    p->last = c + 1;
}

/* The first system of i's subtree in destruction order: its first child's
   first child ..., the deepest first. */
static uint32_t ecs__deepest(const ecs_world *w, uint32_t i) {
    while (w->hier.rels[i].first) i = w->hier.rels[i].first - 1;
    return i;
}

/* The slot after x in the post-order of root's subtree (children before
   their parent, siblings in attach order), or ECS__NONE after root. */
static uint32_t ecs__post_next(const ecs_world *w, uint32_t root, uint32_t x) {
    if (x == root) return ECS__NONE;
    if (w->hier.rels[x].next) return ecs__deepest(w, w->hier.rels[x].next - 1);
    return ecs__index(w->hier.rels[x].parent);
}

/* The slot after x in the pre-order of root's subtree (a parent before its
   children, siblings in attach order), or ECS__NONE after the last. */
static uint32_t ecs__pre_next(const ecs_world *w, uint32_t root, uint32_t x) {
    if (ecs__has_rel(w, x) && w->hier.rels[x].first) return w->hier.rels[x].first - 1;
    for (; x != root; x = ecs__index(w->hier.rels[x].parent))
        if (w->hier.rels[x].next) return w->hier.rels[x].next - 1;
    return ECS__NONE;
}

static void ecs__hierarchy_fini(ecs_world *w) { ecs__free(w, w->hier.rels); }

/* ---- >>change: change stamps, and what counts as a change ---------------- */
/* Change detection (ECS_CHANGED terms, ecs_query_changed). Once on, every
   table keeps, per block of 1024 rows, the tick of the latest row to enter
   or move into the block (stamps[b]) and, per column, of the latest write to
   it (stamps[(1 + column) * blocks + b]). Ticks come from the program, never
   from time or threads: a turn's systems get the turn's base + their
   position in the stage's run order (a topological order: of two systems
   that conflict, the one that runs first has the smaller tick), an EXCLUSIVE
   system's sync point its tick, and everything else (sync points, hooks,
   observers, calls between frames) the clock, which is past every tick of
   the turn. A reader is handed the blocks stamped after its previous run:
   its own writes carry its own tick and do not count. A column's stamps are
   written only by its writers (the chunks of one system store the same
   value, relaxed atomics), structure stamps only where structure changes. */
enum { ECS__BLOCK_SHIFT = 10 };

/* The tick of a write from the calling context. */
static uint64_t ecs__now(const ecs_world *w) {
    if (w->sched.phase == ECS__SYSTEMS) {
        const ecs__tctx *tc = ecs__thread_ctx(w);
        if (tc->current) return w->chg.base + w->sys.systems[tc->current - 1].position;
    }
    return w->chg.fixed ? w->chg.fixed : w->chg.tick;
}

static uint32_t ecs__blocks(size_t rows) {
    return (uint32_t)((rows + ((size_t)1 << ECS__BLOCK_SHIFT) - 1) >> ECS__BLOCK_SHIFT);
}

/* A table's stamps go (helgrind checks that memory again). */
static void ecs__stamps_free(ecs_world *w, ecs__table *t) {
    if (t->stamps) ECS__CHECKED_RANGE(t->stamps, ((size_t)t->column_count + 1) * t->blocks * sizeof *t->stamps);
    ecs__free(w, (void *)t->stamps);
    t->stamps = NULL;
    t->blocks = 0;
}

/* Stamps for cap rows of t (when on): grown, existing ones kept, new ones 0.
   Chunks of one system store the same tick into a block they share: atomic,
   and no race for helgrind either. */
static bool ecs__stamps_fit(ecs_world *w, ecs__table *t, size_t cap) {
    const uint32_t blocks = ecs__blocks(cap), old = t->blocks;
    if (!w->chg.on || blocks <= old) return true;
    const size_t rows = (size_t)t->column_count + 1;
    ECS__ATOMIC(uint64_t) *p = (ECS__ATOMIC(uint64_t) *)ecs__alloc(w, rows * blocks * sizeof *p);
    if (!p) return false;
    for (size_t r = 0; r < rows; r++)
        for (uint32_t b = 0; b < blocks; b++)
            ecs__store_relaxed(&p[r * blocks + b], b < old ? (uint64_t)ecs__load_relaxed(&t->stamps[r * old + b]) : 0);
    ecs__stamps_free(w, t);
    ECS__RACY_RANGE(p, rows * blocks * sizeof *p);
    t->stamps = p;
    t->blocks = blocks;
    return true;
}

static void ecs__stamp(ECS__ATOMIC(uint64_t) *row, uint32_t first, uint32_t n, uint64_t tick) {
    for (uint32_t b = first >> ECS__BLOCK_SHIFT, e = (first + n - 1) >> ECS__BLOCK_SHIFT; b <= e; b++)
        ecs__store_relaxed(&row[b], tick);
}

/* Rows [first, first + n) of t entered or moved in (thread 0: structure). */
ECS__NOINLINE void ecs__stamp_rows_on(const ecs_world *w, ecs__table *t, uint32_t first, uint32_t n) {
    ecs__stamp(t->stamps, first, n, ecs__now(w));
}

ECS__HOT void ecs__stamp_rows(const ecs_world *w, ecs__table *t, uint32_t first, uint32_t n) {
    if (ECS__UNLIKELY(w->chg.on) && n) ecs__stamp_rows_on(w, t, first, n);
}

/* Rows [first, first + n) of column c written at tick. */
static void ecs__stamp_column(ecs__table *t, int32_t c, uint32_t first, uint32_t n, uint64_t tick) {
    if (c >= 0 && n) ecs__stamp(t->stamps + (size_t)(c + 1) * t->blocks, first, n, tick);
}

/* A value in column c of t's row written from the calling context
   (ecs_set, ecs_get_mut, an applied set). */
ECS__NOINLINE void ecs__stamp_value_on(const ecs_world *w, ecs__table *t, int32_t c, uint32_t row) {
    ecs__stamp_column(t, c, row, 1, ecs__now(w));
}

ECS__HOT void ecs__stamp_value(const ecs_world *w, ecs__table *t, int32_t c, uint32_t row) {
    if (ECS__UNLIKELY(w->chg.on)) ecs__stamp_value_on(w, t, c, row);
}

/* A batch of rows [row, row + n) of m's table ended: its WRITE terms'
   columns were written at tick, but those it said it skipped. */
static void ecs__stamp_batch(const ecs_term *terms, int term_count, const ecs__match *m, uint32_t row, uint32_t n,
                             uint64_t tick, ecs_iter *it) {
    for (int i = 0; i < term_count; i++)
        if ((ecs__term_how(&terms[i]) & ECS__TW) && !(it->priv.skip >> i & 1))
            ecs__stamp_column(m->table, m->column[i], row, n, tick);
    it->priv.skip = 0;
}

/* Whether block b of m's table may have changed after tick since, in the
   rows or in a column of a term in mask (m's columns). */
static bool ecs__block_changed(const ecs__match *m, uint32_t mask, uint32_t b, uint64_t since) {
    const ecs__table *t = m->table;
    if ((uint64_t)ecs__load_relaxed(&t->stamps[b]) > since) return true;
    for (; mask; mask &= mask - 1) {
        int32_t c = m->column[ecs__lsb(mask)];
        if (c >= 0 && (uint64_t)ecs__load_relaxed(&t->stamps[(size_t)(c + 1) * t->blocks + b]) > since) return true;
    }
    return false;
}

/* Whether any block of n matches may have changed (ecs__block_changed),
   or a table was emptied (its first block's rows stamp). */
static bool ecs__matches_changed(const ecs__match *ms, uint32_t n, uint32_t mask, uint64_t since) {
    for (uint32_t k = 0; k < n; k++) {
        const ecs__table *t = ms[k].table;
        uint32_t blocks = ecs__blocks(t->count ? t->count : 1);
        for (uint32_t b = 0; b < blocks && b < t->blocks; b++)
            if (ecs__block_changed(&ms[k], mask, b, since)) return true;
    }
    return false;
}

/* The next run of changed blocks (ecs__block_changed) in rows [*row, end) of
   m's table: its first row in *row, its row count returned (0: none left). */
static uint32_t ecs__changed_run(const ecs__match *m, uint32_t mask, uint64_t since, uint32_t *row, uint32_t end) {
    uint32_t b = *row >> ECS__BLOCK_SHIFT;
    while (*row < end && !ecs__block_changed(m, mask, b, since)) *row = ++b << ECS__BLOCK_SHIFT;
    if (*row >= end) { *row = end; return 0; }
    uint32_t stop = *row;
    while (stop < end && ecs__block_changed(m, mask, stop >> ECS__BLOCK_SHIFT, since))
        stop = ((stop >> ECS__BLOCK_SHIFT) + 1) << ECS__BLOCK_SHIFT;
    return (stop < end ? stop : end) - *row;
}

/* The mark m's table was last completed at: q's latest complete loop, or
   a later loop of m's group alone. */
static uint64_t ecs__match_seen(const ecs_query *q, const ecs__match *m) {
    for (uint32_t k = 0; k < q->gmark_count; k++)
        if (q->gmarks[k].group == m->group) return q->gmarks[k].seen;   /* (later than q->seen) */
    return q->seen;
}

/* Every stamp of every table set to the clock: all counts as changed (a
   restore, or stamps turned on). */
static void ecs__stamps_all(ecs_world *w) {
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        ecs__table *t = w->tab.tables[i];
        for (size_t k = 0, n = ((size_t)t->column_count + 1) * t->blocks; k < n; k++)
            ecs__store_relaxed(&t->stamps[k], w->chg.tick);
    }
}

static void ecs__system_plain(const ecs_world *w, ecs__system *s);
/* Turns stamps on (between frames): every table gets them, everything
   counts as changed. ECS_ERR_NOMEM leaves them off. */
static ecs_result ecs__change_on(ecs_world *w, const char *fn) {
    if (w->chg.on) return ECS_OK;
    w->chg.on = true;
    for (uint32_t i = 0; i < w->tab.table_count; i++)
        if (!ecs__stamps_fit(w, w->tab.tables[i], w->tab.tables[i]->cap ? w->tab.tables[i]->cap : 1)) {
            for (uint32_t k = 0; k < w->tab.table_count; k++) ecs__stamps_free(w, w->tab.tables[k]);
            w->chg.on = false;
            return ECS__OOM(w, fn);
        }
    ecs__stamps_all(w);
    for (uint32_t i = 0; i < w->sys.system_count; i++) ecs__system_plain(w, &w->sys.systems[i]);   /* writers
                                                                              stamp now: not the lean run */
    return ECS_OK;
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

static void ecs__match_settle(ecs_query *q, uint32_t at);
static ecs__table *ecs__table_find(const ecs_world *w, const ecs_id *ids, uint32_t n) {
    uint32_t step = 0;
    uint64_t *v;
    while ((v = ecs__map_next(&w->tab.table_sets, ecs__set_hash(ids, n), &step))) {
        ecs__table *t = w->tab.tables[*v];
        if (t->id_count == n && !memcmp(t->ids, ids, n * sizeof *ids)) return t;
    }
    return NULL;
}

static bool ecs__query_match(const ecs_query *q, const ecs__table *t, ecs__match *m);

/* Tables are ordered by creation (queries visit them so). A table a restore
   left behind (the snapshot predates it) is created again when next needed:
   it moves to where a new table would go, and so does its place in every
   query, exactly as in a world that never made it. It is empty, as are the
   ones it passes. */
static void ecs__table_birth(ecs_world *w, ecs__table *t) {
    uint32_t from = t->index, to = w->tab.born++;
    if (from == to) return;
    for (uint32_t i = from; i > to; i--) { w->tab.tables[i] = w->tab.tables[i - 1]; w->tab.tables[i]->index = i; }
    w->tab.tables[to] = t;
    t->index = to;
    for (uint32_t i = 0; i < w->tab.table_sets.cap; i++) {
        uint64_t *v = &w->tab.table_sets.vals[i];
        if (w->tab.table_sets.keys[i]) *v = *v == from ? to : *v >= to && *v < from ? *v + 1 : *v;
    }
    for (uint32_t q = 0; q < w->qry.query_count; q++) {
        ecs_query *qq = w->qry.queries[q];
        uint32_t at = 0;
        while (at < qq->match_count && qq->matches[at].table != t) at++;
        if (at < qq->match_count) ecs__match_settle(qq, at);
    }
}

/* Makes the table for a sorted id set. Everything that can fail (the table,
   its place in the world, a slot in every query's match list) is reserved
   first, so a failure changes nothing. */
static ecs__table *ecs__table_new(ecs_world *w, const ecs_id *ids, uint32_t n) {
    uint32_t columns = 0;
    for (uint32_t i = 0; i < n; i++) columns += w->reg.ids[ids[i]].size > 0;
    size_t bytes = sizeof(ecs__table) + columns * sizeof(ecs__column) +
                   n * (sizeof(ecs_id) + sizeof(int32_t));
    if (!ECS__RESERVE(w, w->tab.tables, w->tab.table_cap, (size_t)w->tab.table_count + 1) ||
        !ecs__map_reserve(w, &w->tab.table_sets, 1))
        return NULL;
    for (uint32_t i = 0; i < w->qry.query_count; i++) {
        ecs_query *q = w->qry.queries[i];
        if (!ECS__RESERVE(w, q->matches, q->match_cap, (size_t)q->match_count + 1)) return NULL;
    }
    ecs__table *t = (ecs__table *)ecs__alloc(w, bytes);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->index = w->tab.table_count;
    t->id_count = n;
    t->column_count = columns;
    t->columns = (ecs__column *)(t + 1);
    t->ids = (ecs_id *)(t->columns + columns);
    t->column_of = (int32_t *)(t->ids + n);
    if (n) memcpy(t->ids, ids, n * sizeof *ids);
    for (uint32_t i = 0, c = 0; i < n; i++) {
        uint32_t size = w->reg.ids[ids[i]].size;
        t->column_of[i] = size ? (int32_t)c : -1;
        t->hooked |= w->reg.ids[ids[i]].lifecycle || w->reg.ids[ids[i]].events;
        t->evented |= w->reg.ids[ids[i]].events;
        t->prefab |= ids[i] == ECS__PREFAB;
        if (size) {
            t->columns[c].data = NULL; t->columns[c].raw = NULL;
            t->columns[c].size = size; t->columns[c].id = ids[i];
            c++;
        }
    }
    w->tab.tables[w->tab.table_count++] = t;
    w->tab.prefab_tables += t->prefab;
    ecs__map_put(&w->tab.table_sets, ecs__set_hash(ids, n), t->index);
    for (uint32_t i = 0; i < w->qry.query_count; i++) {
        ecs_query *q = w->qry.queries[i];
        if (ecs__query_match(q, t, &q->matches[q->match_count])) ecs__match_settle(q, q->match_count++);
    }
    ecs__table_birth(w, t);
    return t;
}

/* The table for a sorted id set: found, made again if a restore left it
   behind, or new; NULL on NOMEM. */
static ecs__table *ecs__table_get(ecs_world *w, const ecs_id *ids, uint32_t n) {
    ecs__table *t = ecs__table_find(w, ids, n);
    if (!t) return ecs__table_new(w, ids, n);
    if (ECS__UNLIKELY(t->index >= w->tab.born)) ecs__table_birth(w, t);
    return t;
}

static void ecs__table_free(ecs_world *w, ecs__table *t) {
    for (int i = 0; i < 2 * ECS__EDGE_LO; i++) ecs__free(w, t->edge_lo[i]);
    for (uint32_t i = 0; i < t->edges.cap; i++)
        if (t->edges.keys[i]) ecs__free(w, (void *)(uintptr_t)t->edges.vals[i]);
    ecs__map_fini(w, &t->edges);
    for (uint32_t c = 0; c < t->column_count; c++) ecs__free(w, t->columns[c].raw);
    ecs__free(w, t->entities_raw);
    ecs__stamps_free(w, t);
    ecs__free(w, t);
}

/* Grows one column to cap values, keeping its start on a 64-byte boundary
   (cache lines, aligned vector loads). realloc may extend a large block in
   place or remap it without copying; if the block moved to a differently
   aligned address, the values slide to the new boundary. On failure the
   column is untouched. */
static bool ecs__column_grow(ecs_world *w, void **raw, unsigned char **data, size_t count,
                             size_t size, size_t cap) {
    size_t old_off = *raw ? (size_t)(*data - (unsigned char *)*raw) : 0;
    unsigned char *p = (unsigned char *)ecs__realloc(w, *raw, cap * size + 64);
    if (!p) return false;
    unsigned char *aligned = (unsigned char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
    if (count && (size_t)(aligned - p) != old_off) memmove(aligned, p + old_off, count * size);
    *raw = p;
    *data = aligned;
    return true;
}

/* Makes room for need rows. Each column grows on its own; the table's cap
   changes only once all have, so a failure leaves a consistent table (some
   columns merely with spare room). */
static bool ecs__table_grow(ecs_world *w, ecs__table *t, size_t need) {
    if (need > ECS__MAX_ROWS) return false;
    size_t cap = t->cap ? (size_t)t->cap * 2 : 8;
    if (cap < need) cap = need;
    if (cap > ECS__MAX_ROWS) cap = ECS__MAX_ROWS;
    for (uint32_t c = 0; c < t->column_count; c++)
        if (cap > (SIZE_MAX - 64) / t->columns[c].size) return false;
    if (!ecs__stamps_fit(w, t, cap)) return false;
    unsigned char *ents = (unsigned char *)t->entities;
    if (!ecs__column_grow(w, &t->entities_raw, &ents, t->count, sizeof(ecs_entity), cap)) return false;
    t->entities = (ecs_entity *)(void *)ents;
    for (uint32_t c = 0; c < t->column_count; c++) {
        ecs__column *col = &t->columns[c];
        const ecs__idinfo *in = &w->reg.ids[col->id];
        if (in->move) {   /* values that must be moved, never copied as bytes */
            unsigned char *p = (unsigned char *)ecs__alloc(w, cap * col->size + 64);
            if (!p) return false;
            unsigned char *aligned = (unsigned char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
            if (t->count) in->move(aligned, col->data, (int)t->count, in->ctx);
            ecs__free(w, col->raw);
            col->raw = p;
            col->data = aligned;
        } else if (!ecs__column_grow(w, &col->raw, &col->data, t->count, col->size, cap)) {
            return false;
        }
    }
    t->cap = (uint32_t)cap;
    return true;
}

static bool ecs__table_reserve(ecs_world *w, ecs__table *t, size_t need) {
    return need <= t->cap || ecs__table_grow(w, t, need);
}

/* For each column of src, the column of dst holding the same id, or -1.
   Both column lists are sorted by id. */
static void ecs__column_plan(const ecs__table *dst, const ecs__table *src, int32_t *to) {
    uint32_t j = 0;
    for (uint32_t i = 0; i < src->column_count; i++) {
        while (j < dst->column_count && dst->columns[j].id < src->columns[i].id) j++;
        to[i] = j < dst->column_count && dst->columns[j].id == src->columns[i].id ? (int32_t)j : -1;
    }
}

/* A row of t left (row last of count last + 1 moved into its place, if it
   was another): the hole's block, or block 0 when t is left empty, changed. */
ECS__HOT void ecs__stamp_left(const ecs_world *w, ecs__table *t, uint32_t row, uint32_t last) {
    if (row != last || !last) ecs__stamp_rows(w, t, row, 1);
}

/* A swap-remove's last step: the entity of row last takes row's place, and
   its record follows. */
ECS__HOT void ecs__entity_fill(ecs_world *w, ecs_entity *ents, uint32_t row, uint32_t last) {
    const ecs_entity moved = ents[last];
    ents[row] = moved;
    w->ent.records[ecs__index(moved)].row = row;
}

static void ecs__row_delete_hooked(ecs_world *w, ecs__table *t, uint32_t row) {
    const uint32_t last = t->count - 1;
    if (row != last) {
        const ecs__idinfo *const ids = w->reg.ids;
        for (uint32_t c = 0; c < t->column_count; c++) {
            const ecs__column *col = &t->columns[c];
            ecs__relocate(&ids[col->id], col->data + (size_t)row * col->size,
                          col->data + (size_t)last * col->size);
        }
        ecs__entity_fill(w, t->entities, row, last);
    }
    ecs__stamp_left(w, t, row, last);
    t->count = last;
}

/* on_remove for every id of e's row with one (before the row goes away). */
static void ecs__removing_all(ecs_world *w, ecs_entity e) {
    const ecs__table *t = w->tab.tables[w->ent.records[ecs__index(e)].table];
    for (uint32_t i = 0; i < t->id_count; i++) {
        if (!w->reg.ids[t->ids[i]].on_remove) continue;
        t = w->tab.tables[w->ent.records[ecs__index(e)].table];   /* hooks change no structure, but stay safe */
        ecs__on_remove(w, e, t->ids[i], ecs__table_cell(t, (int32_t)i, w->ent.records[ecs__index(e)].row));
    }
}

/* Swap-remove: the last row moves into the hole, and its entity's record
   follows it. */
ECS__HOT void ecs__row_delete(ecs_world *w, ecs__table *t, uint32_t row) {   /* t not hooked */
    const uint32_t last = t->count - 1;
    if (row != last) {
        /* locals: byte stores may alias anything, which would force reloads */
        const ecs__column *const cols = t->columns;
        const uint32_t n = t->column_count;
        for (uint32_t c = 0; c < n; c++) {
            unsigned char *data = cols[c].data;
            const uint32_t size = cols[c].size;
            ecs__cell_copy(data + (size_t)row * size, data + (size_t)last * size, size);
        }
        ecs__entity_fill(w, t->entities, row, last);
    }
    ecs__stamp_left(w, t, row, last);
    t->count = last;
}

/* After a row's values moved: the entity joins dst at drow, src's last row
   fills the hole, and both records follow (last: src's count - 1, taken
   before the byte copies, which the compiler must assume alias it). */
ECS__HOT void ecs__row_moved(ecs_world *w, ecs__record *r, ecs__table *src, ecs__table *dst,
                             uint32_t srow, uint32_t last, uint32_t drow) {
    ecs_entity *const ents = src->entities;
    dst->entities[drow] = ents[srow];
    if (srow != last) ecs__entity_fill(w, ents, srow, last);
    ecs__stamp_rows(w, dst, drow, 1);
    ecs__stamp_left(w, src, srow, last);
    src->count = last;
    r->table = dst->index;
    r->row = drow;
}

/* Moves an entity's row from src to edge->dst (which has room), in one pass
   over src's columns: each cell goes to its dst column (if any) and src's
   last row fills the hole. The added id's column (an edge adds at most one)
   is filled first, as value may point into the row being vacated: value or
   zeros, or with hooked (either table has lifecycle hooks or events) the
   value constructed, shared values moved and dropped ones destroyed.
   Returns the entity's new row. */
ECS__HOT uint32_t ecs__row_move_as(ecs_world *w, ecs__record *r, ecs__table *src, const ecs__edge_to *edge,
                                   const void *value, bool hooked) {
    ecs__table *dst = edge->dst;
    const ecs__idinfo *const ids = w->reg.ids;
    const uint32_t srow = r->row, last = src->count - 1, drow = dst->count++, n = src->column_count;
    const ecs__column *const scols = src->columns, *const dcols = dst->columns;
    const int32_t *const to = ECS__TO(edge);   /* locals: byte stores may alias anything */
    if (edge->added >= 0) {
        const ecs__column *col = &dcols[edge->added];
        unsigned char *cell = col->data + (size_t)drow * col->size;
        if (hooked) ecs__construct(&ids[col->id], cell, 1);
        else if (value) ecs__cell_copy(cell, (const unsigned char *)value, col->size);
        else ecs__cell_zero(cell, col->size);
    }
    for (uint32_t c = 0; c < n; c++) {
        const uint32_t size = scols[c].size;
        unsigned char *data = scols[c].data, *cell = data + (size_t)srow * size;
        const int32_t t = to[c];
        if (hooked) {
            const ecs__idinfo *in = &ids[scols[c].id];
            if (t >= 0) ecs__relocate(in, dcols[t].data + (size_t)drow * size, cell);
            else ecs__destruct(in, cell, 1);   /* dropped */
            if (srow != last) ecs__relocate(in, cell, data + (size_t)last * size);
        } else {
            if (t >= 0) ecs__cell_copy(dcols[t].data + (size_t)drow * size, cell, size);
            if (srow != last) ecs__cell_copy(cell, data + (size_t)last * size, size);
        }
    }
    ecs__row_moved(w, r, src, dst, srow, last, drow);
    return drow;
}

ECS__HOT void ecs__row_move(ecs_world *w, ecs__record *r, ecs__table *src, const ecs__edge_to *edge,
                            const void *value) {
    (void)ecs__row_move_as(w, r, src, edge, value, false);
}

/* The value, if any, is the caller's to copy in after on_add. */
static uint32_t ecs__row_move_hooked(ecs_world *w, ecs__record *r, ecs__table *src, const ecs__edge_to *edge) {
    return ecs__row_move_as(w, r, src, edge, NULL, true);
}

static const ecs__edge_to *ecs__edge_get(const ecs__table *t, ecs_id id, bool removing) {
    if (id < ECS__EDGE_LO) return t->edge_lo[removing * ECS__EDGE_LO + id];
    uint64_t *v = ecs__map_get(&t->edges, (uint64_t)id << 1 | removing);
    return v ? (const ecs__edge_to *)(uintptr_t)*v : NULL;
}

/* Builds the edge src --(add/remove id)--> dst and stores it in src; NULL
   (nothing stored) if memory runs out. */
static const ecs__edge_to *ecs__edge_make(ecs_world *w, ecs__table *src, ecs__table *dst,
                                          ecs_id id, bool removing) {
    size_t n = dst == src ? 0 : src->column_count;
    ecs__edge_to *e = (ecs__edge_to *)ecs__alloc(w, sizeof *e + n * sizeof(int32_t));
    if (!e) return NULL;
    int32_t at = ecs__table_find_id(dst, id);
    e->dst = dst;
    e->added = removing || at < 0 ? -1 : dst->column_of[at];
    if (n) ecs__column_plan(dst, src, (int32_t *)(void *)(e + 1));
    if (id >= ECS__EDGE_LO) {
        uint64_t key = (uint64_t)id << 1 | removing, *old = ecs__map_get(&src->edges, key);
        if (old) { *old = (uint64_t)(uintptr_t)e; return e; }   /* a slot a restore emptied */
        if (!ecs__map_reserve(w, &src->edges, 1)) { ecs__free(w, e); return NULL; }
        ecs__map_put(&src->edges, key, (uint64_t)(uintptr_t)e);
    } else {
        src->edge_lo[removing * ECS__EDGE_LO + id] = e;
    }
    return e;
}

/* The transition from src by adding (or removing) id: the cached edge, or,
   the first time, the destination table (created if new) and a new edge in
   both directions, so a repeated transition is one lookup (seed 004). NULL
   only on NOMEM. */
static const ecs__edge_to *ecs__table_step(ecs_world *w, ecs__table *src, ecs_id id, bool removing) {
    const ecs__edge_to *hit = ecs__edge_get(src, id, removing);
    if (hit) return hit;
    if (!ECS__RESERVE(w, w->tab.scratch, w->tab.scratch_cap, (size_t)src->id_count + 1)) return NULL;
    uint32_t n = 0, i = 0;
    for (; i < src->id_count && src->ids[i] < id; i++) w->tab.scratch[n++] = src->ids[i];
    if (!removing) w->tab.scratch[n++] = id;
    for (; i < src->id_count; i++) if (src->ids[i] != id) w->tab.scratch[n++] = src->ids[i];
    ecs__table *dst = n == src->id_count && (removing || ecs__table_find_id(src, id) >= 0)
                          ? src : ecs__table_get(w, w->tab.scratch, n);
    if (!dst) return NULL;
    const ecs__edge_to *e = ecs__edge_make(w, src, dst, id, removing);
    if (e && dst != src && !ecs__edge_get(dst, id, !removing))
        (void)ecs__edge_make(w, dst, src, id, !removing);   /* the way back; a cache only */
    return e;
}

/* "(Position, !Frozen, ?Velocity)": a query as its errors name it. */
static void ecs__query_text(const ecs_world *w, const ecs_query *q, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    if (!q) { snprintf(buf, cap, "(a query freed since)"); return; }
    for (int i = 0; i < q->term_count && n < cap; i++) {
        const ecs_term *t = &q->terms[i];
        int k = snprintf(buf + n, cap - n, "%s%s%s", i ? ", " : "(",
                         ecs__term_mark(t, false), w->reg.ids[t->id].name);
        if (k > 0) n += (size_t)k;
    }
    if (n < cap) snprintf(buf + n, cap - n, q->term_count ? ")" : "(every entity)");
}

/* ECS_ERR_BUSY because a query loop holds table t: name the loop and the way out. */
ECS__COLD ecs_result ecs__busy_iter(ecs_world *w, const char *fn, const ecs__table *t) {
    char q[512];
    ecs__query_text(w, t->lock_query, q, sizeof q);
    return ecs__fail(w, ECS_ERR_BUSY, "%s: the query loop over %s is still iterating; a loop left "
                     "with break or return must call ecs_iter_fini(&it) to end it, and to change "
                     "structure while iterating, wrap the loop in ecs_defer_begin/ecs_defer_end", fn, q);
}

ECS__COLD ecs_result ecs__busy(ecs_world *w, const char *fn, const ecs__table *t) {
    if (w->sched.phase == ECS__SYSTEMS || !t->lock) return ecs__check_running(w, fn);
    if (t->index == w->sched.excl_table)
        return ecs__fail(w, ECS_ERR_BUSY, "%s: exclusive system \"%s\" is iterating this entity's table, "
                         "which must not change under it; record the change in it->commands (applied "
                         "at the stage's end), or make it from an exclusive system without terms",
                         fn, w->sys.systems[w->sched.excl_system].name);
    return ecs__busy_iter(w, fn, t);
}

/* A structural change is refused while systems run, or when it would touch
   a table a query is iterating. */
static bool ecs__locked(const ecs_world *w, const ecs__table *t) {
    return t->lock || w->sched.phase == ECS__SYSTEMS;
}

/* ---- immediate structural operations (arguments already checked) ---- */
/* Puts the entity of taken slot i into the empty-set table (a prefab: the
   table of the prefab tag alone). */
ECS__NOINLINE ecs__table *ecs__prefab_root(ecs_world *w) {
    static const ecs_id tag = ECS__PREFAB;
    return ecs__table_get(w, &tag, 1);
}

static ecs_result ecs__place(ecs_world *w, const char *fn, uint32_t i, bool prefab) {
    ecs__table *root = w->tab.tables[0];
    if (ECS__UNLIKELY(prefab) && !(root = ecs__prefab_root(w))) return ECS__OOM(w, fn);
    if (ecs__locked(w, root)) return ecs__busy(w, fn, root);
    if (!ecs__table_reserve(w, root, (size_t)root->count + 1)) return ECS__OOM(w, fn);
    ecs__record *r = &w->ent.records[i];
    r->table = root->index;
    r->row = root->count;
    ecs__stamp_rows(w, root, root->count, 1);
    root->entities[root->count++] = ecs__handle(i, r->gen);
    w->ent.alive++;
    return ECS_OK;
}

static ecs_entity ecs__create(ecs_world *w, const char *fn, bool prefab) {
    if (w->sched.phase == ECS__SYSTEMS) { ecs__check_running(w, fn); return 0; }   /* before touching shared slots */
    if (!ecs__slots_reserve(w, 1)) { ECS__OOM(w, fn); return 0; }
    uint32_t head = w->ent.free_head, count = w->ent.record_count, i = ecs__slot_take(w);
    if (ecs__place(w, fn, i, prefab)) {   /* give the slot back exactly as it was */
        if (i == count) w->ent.record_count = count;
        else { w->ent.free_head = head; w->ent.free_count++; }
        return 0;
    }
    return ecs__handle(i, w->ent.records[i].gen);
}

static ecs_result ecs__destroy_one(ecs_world *w, const char *fn, ecs_entity e) {
    ecs__record *r = &w->ent.records[ecs__index(e)];
    ecs__table *t = w->tab.tables[r->table];
    if (ecs__locked(w, t)) return ecs__busy(w, fn, t);
    if (t->hooked) {
        ecs__removing_all(w, e);
        r = &w->ent.records[ecs__index(e)];   /* a hook may have grown the records */
        ecs__destruct_row(w, t, r->row);
        ecs__row_delete_hooked(w, t, r->row);
    } else {
        ecs__row_delete(w, t, r->row);
    }
    uint32_t i = ecs__index(e);
    if (ecs__has_rel(w, i)) {   /* its parent and children are gone by now */
        ecs__unlink(w, i);
        memset(&w->hier.rels[i], 0, sizeof w->hier.rels[i]);
    }
    ecs__slot_release(w, i);
    w->ent.alive--;
    return ECS_OK;
}

/* Destroys e and its subtree, children first (depth first, attach order);
   all or nothing: every table involved is checked before anything changes. */
static ecs_result ecs__destroy(ecs_world *w, const char *fn, ecs_entity e) {
    uint32_t root = ecs__index(e);
    if (!ecs__has_rel(w, root) || !w->hier.rels[root].first) return ecs__destroy_one(w, fn, e);
    for (uint32_t x = ecs__deepest(w, root); x != ECS__NONE; x = ecs__post_next(w, root, x)) {
        ecs__table *t = w->tab.tables[w->ent.records[x].table];
        if (ecs__locked(w, t)) return ecs__busy(w, fn, t);
    }
    for (uint32_t x = ecs__deepest(w, root); x != ECS__NONE;) {
        uint32_t next = ecs__post_next(w, root, x);   /* before x's links go */
        ecs_result r = ecs__destroy_one(w, fn, ecs__handle(x, w->ent.records[x].gen));
        ECS_ASSERT(r == ECS_OK);
        (void)r;
        x = next;
    }
    return ECS_OK;
}

/* child gets parent (0: none); ECS_ERR_ARG for a loop. */
static ecs_result ecs__set_parent(ecs_world *w, const char *fn, ecs_entity child, ecs_entity parent) {
    if (parent && w->tab.tables[w->ent.records[ecs__index(parent)].table]->prefab &&
        !w->tab.tables[w->ent.records[ecs__index(child)].table]->prefab)
        return ecs__fail(w, ECS_ERR_ARG, "%s: entity %u is a prefab, so its child must be one too (entity %u "
                         "is not; make it with ecs_prefab_new)", fn, (unsigned)ecs__index(parent),
                         (unsigned)ecs__index(child));
    for (ecs_entity x = parent; x; x = ecs__parent_of(w, ecs__index(x)))
        if (x == child)
            return ecs__fail(w, ECS_ERR_ARG, "%s: entity %u is an ancestor of entity %u: a loop", fn,
                             (unsigned)ecs__index(child), (unsigned)ecs__index(parent));
    uint32_t c = ecs__index(child), top = parent && ecs__index(parent) > c ? ecs__index(parent) : c;
    if (!parent && !ecs__has_rel(w, c)) return ECS_OK;
    if (!ecs__rels_reserve(w, top)) return ECS__OOM(w, fn);
    ecs__unlink(w, c);
    if (parent) ecs__link(w, c, parent);
    return ECS_OK;
}

/* A value the caller passed from inside the world (ecs_get's pointer): the
   entity and component that own it, so it is found again after the move
   shifts rows or a column grows. */
typedef struct ecs__vref { ecs_entity e; ecs_id id; size_t off; } ecs__vref;
static bool ecs__value_ref(const ecs__table *t, const void *value, ecs__vref *ref) {
    const uintptr_t v = (uintptr_t)value;
    for (uint32_t c = 0; c < t->column_count; c++) {
        const ecs__column *col = &t->columns[c];
        const uintptr_t base = (uintptr_t)col->data;
        if (v < base || v - base >= (uintptr_t)t->count * col->size) continue;
        ref->e = t->entities[(v - base) / col->size];
        ref->id = col->id;
        ref->off = (size_t)((v - base) % col->size);
        return true;
    }
    return false;
}

static const void *ecs__value_find(const ecs_world *w, const ecs__vref *ref) {
    const ecs__record *r = &w->ent.records[ecs__index(ref->e)];
    const ecs__table *t = w->tab.tables[r->table];
    return ecs__table_cell(t, ecs__table_find_id(t, ref->id), r->row) + ref->off;
}

/* Adds id (copying value in, or zeroing it) or, if present, overwrites it.
   The edge answers both "has it?" (a self-edge) and "which column?". */
static ecs_result ecs__add(ecs_world *w, const char *fn, ecs_entity e, ecs_id id,
                           const void *value) {
    ecs__record *r = &w->ent.records[ecs__index(e)];
    ecs__table *src = w->tab.tables[r->table];
    const ecs__edge_to *edge = ecs__edge_get(src, id, false);
    if (!edge) {
        int32_t at = ecs__table_find_id(src, id);
        if (at >= 0) {   /* present. Outside systems a self-edge is cached for the next
                            ecs_set (the direct path's overwrite); a running system's
                            ecs_set never writes the table's cache (other threads read it) */
            if (id < ECS__EDGE_LO && w->sched.phase != ECS__SYSTEMS)
                (void)ecs__edge_make(w, src, src, id, false);   /* a cache only: NULL is fine */
            unsigned char *cell = ecs__table_cell(src, at, r->row);
            if (value && cell) ecs__copy_into(&w->reg.ids[id], cell, value, 1);
            if (value) ecs__stamp_value(w, src, src->column_of[at], r->row);
            if (value) ecs__on_set(w, e, id, cell);
            return ECS_OK;
        }
        if (ecs__locked(w, src)) return ecs__busy(w, fn, src);
        if (!(edge = ecs__table_step(w, src, id, false))) return ECS__OOM(w, fn);
    }
    ecs__table *dst = edge->dst;
    if (dst == src) {
        if (value && edge->added >= 0) {
            const ecs__column *col = &src->columns[edge->added];
            unsigned char *cell = col->data + (size_t)r->row * col->size;
            ecs__stamp_value(w, src, edge->added, r->row);
            if (src->hooked) {
                ecs__copy_into(&w->reg.ids[id], cell, value, 1);
                ecs__on_set(w, e, id, cell);
            } else {
                ecs__cell_copy(cell, (const unsigned char *)value, col->size);
            }
        }
        return ECS_OK;
    }
    if (src->lock | dst->lock | (w->sched.phase == ECS__SYSTEMS)) return ecs__busy(w, fn, src->lock ? src : dst);
    ecs__vref ref = {0, 0, 0};   /* only these two tables change here */
    const bool inside = value && (ecs__value_ref(src, value, &ref) || ecs__value_ref(dst, value, &ref));
    if (!ecs__table_reserve(w, dst, (size_t)dst->count + 1)) return ECS__OOM(w, fn);
    if (ECS__UNLIKELY(src->hooked | dst->hooked)) {   /* constructed; on_add, then the value and on_set */
        uint32_t row = ecs__row_move_hooked(w, r, src, edge);
        const ecs__idinfo *in = &w->reg.ids[id];
        const ecs__column *col = edge->added >= 0 ? &dst->columns[edge->added] : NULL;
        ecs__on_add(w, e, id, col ? col->data + (size_t)row * col->size : NULL);
        if (value && col) {
            row = w->ent.records[ecs__index(e)].row;
            if (inside) value = ecs__value_find(w, &ref);
            ecs__copy_into(in, col->data + (size_t)row * col->size, value, 1);
            ecs__on_set(w, e, id, col->data + (size_t)row * col->size);
        }
        return ECS_OK;
    }
    ecs__row_move(w, r, src, edge, inside ? ecs__value_find(w, &ref) : value);   /* value read first */
    return ECS_OK;
}

static ecs_result ecs__remove(ecs_world *w, const char *fn, ecs_entity e, ecs_id id) {
    ecs__record *r = &w->ent.records[ecs__index(e)];
    ecs__table *src = w->tab.tables[r->table];
    const ecs__edge_to *edge = ecs__edge_get(src, id, true);
    if (!edge) {
        if (ecs__table_find_id(src, id) < 0) return ECS_OK;
        if (ecs__locked(w, src)) return ecs__busy(w, fn, src);
        if (!(edge = ecs__table_step(w, src, id, true))) return ECS__OOM(w, fn);
    }
    ecs__table *dst = edge->dst;
    if (dst == src) return ECS_OK;
    if (src->lock | dst->lock | (w->sched.phase == ECS__SYSTEMS)) return ecs__busy(w, fn, src->lock ? src : dst);
    if (!ecs__table_reserve(w, dst, (size_t)dst->count + 1)) return ECS__OOM(w, fn);
    if (ECS__UNLIKELY(src->hooked | dst->hooked)) {
        if (w->reg.ids[id].on_remove) {   /* before the value goes: the entity still has it */
            ecs__on_remove(w, e, id, ecs__table_cell(src, ecs__table_find_id(src, id), r->row));
            r = &w->ent.records[ecs__index(e)];
        }
        ecs__row_move_hooked(w, r, w->tab.tables[r->table], edge);
        return ECS_OK;
    }
    ecs__row_move(w, r, src, edge, NULL);
    return ECS_OK;
}

/* The common change, decided in one pass: a live entity, a cached edge, no
   events on either table, outside defer mode and frames, no hook commands
   waiting; then either a move (to another table with room, neither table
   locked, and a value only where no lifecycle hooks run either) or an
   ecs_set's overwrite (a self-edge, no hooks). NULL for anything else, every
   error included: the checked path takes those. */
ECS__HOT const ecs__edge_to *ecs__fast_edge(const ecs_world *w, ecs_entity e, ecs_id id, uint32_t removing,
                                            const void *value) {
    if (ECS__UNLIKELY(!ecs__alive(w, e) || id >= ECS__EDGE_LO)) return NULL;
    const ecs__table *src = w->tab.tables[w->ent.records[ecs__index(e)].table];
    const ecs__edge_to *edge = src->edge_lo[removing * ECS__EDGE_LO + id];
    if (!edge || ((uint32_t)src->evented | (uint32_t)w->deferring | (uint32_t)w->sched.phase) ||
        (w->hk.hook_buf && w->hk.hook_buf->count))
        return NULL;
    const ecs__table *dst = edge->dst;
    if (dst == src) return value && !src->hooked && edge->added >= 0 ? edge : NULL;
    if (dst->count >= dst->cap || (src->lock | dst->lock | (uint32_t)dst->evented) ||
        (value && (src->hooked | dst->hooked)))
        return NULL;
    return edge;
}

/* Lifecycle hooks run here but cannot reach the world (they get no world). */
ECS__NOINLINE void ecs__move_fast(ecs_world *w, ecs_entity e, const ecs__edge_to *edge, const void *value) {
    ecs__record *r = &w->ent.records[ecs__index(e)];
    ecs__table *src = w->tab.tables[r->table];
    if (edge->dst == src) {   /* ecs_set of a component e has: no move */
        const ecs__column *col = &src->columns[edge->added];
        ecs__cell_copy(col->data + (size_t)r->row * col->size, (const unsigned char *)value, col->size);
        ecs__stamp_value(w, src, edge->added, r->row);
    } else if (ECS__UNLIKELY(src->hooked | edge->dst->hooked)) {
        ecs__row_move_hooked(w, r, src, edge);
    } else {
        ecs__row_move(w, r, src, edge, value);
    }
}

/* Every live value dies: on_remove, then dtor, table by table (the world
   is whole while the hooks run). Only worlds with hooks have work here. */
static void ecs__table_values_fini(ecs_world *w) {
    for (uint32_t i = 0; w->hk.hook_buf && i < w->tab.table_count; i++) {
        ecs__table *t = w->tab.tables[i];
        if (!t->hooked) continue;
        for (uint32_t row = 0; row < t->count; row++) ecs__removing_all(w, t->entities[row]);
        for (uint32_t c = 0; c < t->column_count; c++) {
            const ecs__idinfo *in = &w->reg.ids[t->columns[c].id];
            ecs__destruct(in, t->columns[c].data, t->count);
        }
    }
}

static void ecs__table_fini(ecs_world *w) {
    for (uint32_t i = 0; i < w->tab.table_count; i++) ecs__table_free(w, w->tab.tables[i]);
    ecs__free(w, w->tab.tables);
    ecs__map_fini(w, &w->tab.table_sets);
    ecs__free(w, w->tab.scratch);
}

/* ---- >>order: sorted iteration -------------------------------------------- */
/* A query with order_by keeps its rows in order between loops: the
   entities with a copy of their keys and places (table, row), the
   batches a loop hands out (runs of consecutive rows of one table, over a
   copy of the matches, which a loop may see grow), and per table a shadow
   of its entity and key columns at the sort. A loop start re-sorts only
   what changed: with nothing changed since the sort (the change stamps of
   the order column and of the tables' structure say so, and each table
   still has its shadow's row count: a last row leaving stamps nothing) the
   runs are reused; else each table is compared with its shadow (one pass over both,
   in row order), the rows that differ are sorted, their old entries
   dropped, and each binary-searched into the rest, which keep their order
   and places. compare calls grow with what changed (c log c + c log n),
   not with the query's rows. */
typedef struct ecs__span { uint32_t match, row, n; } ecs__span;
static void ecs__frame_fail(ecs_world *w, ecs_result r);
typedef struct ecs__sort_row { ecs_entity e; const unsigned char *key; uint64_t group; uint32_t table, row; } ecs__sort_row;
typedef struct ecs__shadow { ecs_entity *ents; unsigned char *keys; uint32_t count, cap; } ecs__shadow;
typedef struct ecs__sort {
    ecs_entity *ents;        /* the rows in order: entity, key, table index, row (the group is
                                the table's match's) */
    unsigned char *keys;
    uint32_t *tabs, *rows_at;
    uint32_t count, cap;
    ecs_entity *ents2;       /* the next order, built beside (cap each) */
    unsigned char *keys2;
    uint32_t *tabs2, *rows2;
    ecs__sort_row *rows, *tmp;   /* rows to place (cap each) */
    uint32_t *kept;          /* places of the rows that stay (cap) */
    uint64_t *drop;          /* per slot, a bit: its entity's old entry goes (a slot held one
                                entity at the sort, so the slot names it) */
    uint32_t drop_words;
    ecs__shadow *shadow;     /* per table index */
    uint32_t shadow_cap;
    uint32_t *map;           /* per table index: its match, while building runs */
    uint32_t map_cap;
    ecs__match *mat;         /* the matches the runs name */
    uint32_t mat_count, mat_cap;
    ecs__span *runs;
    uint32_t run_count, run_cap;
    uint64_t seen;           /* stamps after this are changes the order has not taken in */
    uint32_t born;           /* the world's table births at the sort (one renumbers the shadows) */
    bool valid;              /* false: sort everything again (new, or a restore) */
    bool open;               /* a loop over the runs is open */
} ecs__sort;

static int ecs__sort_cmp(const ecs_query *q, const ecs__sort_row *a, const ecs__sort_row *b) {
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    int c = q->compare(a->e, a->key, b->e, b->key, q->compare_ctx);
    if (c) return c < 0 ? -1 : 1;
    return a->e < b->e ? -1 : a->e > b->e;
}

/* a[0..n) sorted (stable, bottom-up merges; tmp holds n). */
static void ecs__sort_rows(const ecs_query *q, ecs__sort_row *a, ecs__sort_row *tmp, uint32_t n) {
    ecs__sort_row *from = a, *to = tmp;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) to[k++] = ecs__sort_cmp(q, &from[j], &from[i]) < 0 ? from[j++] : from[i++];
            while (i < mid) to[k++] = from[i++];
            while (j < hi) to[k++] = from[j++];
        }
        ecs__sort_row *x = from; from = to; to = x;
    }
    if (from != a) memcpy(a, from, (size_t)n * sizeof *a);
}

/* Whether anything the order depends on may have changed since the sort:
   a stamp after it, or a table whose row count differs from its shadow's
   (a last row leaving stamps nothing: the rows left did not change). */
static bool ecs__sort_stale(const ecs_query *q, const ecs__sort *S) {
    if (!S->valid) return true;
    for (uint32_t k = 0; k < q->match_count; k++) {   /* (new tables: no shadow yet, none counted) */
        const ecs__table *t = q->matches[k].table;
        if ((t->index < S->shadow_cap ? S->shadow[t->index].count : 0) != t->count) return true;
    }
    return ecs__matches_changed(q->matches, q->match_count, 1u << q->order_term, S->seen);
}

#define ECS__SORT_GROW(p, T, bytes) do { void *x_ = ecs__realloc(w, (p), (bytes)); if (!x_) return false; \
                                         (p) = (T *)x_; } while (0)
/* Room for n rows and every table; false on NOMEM, the order kept. */
static bool ecs__sort_fit(ecs_world *w, ecs__sort *S, size_t n, uint32_t size, const ecs_query *q) {
    if (n > S->cap) {
        size_t cap = n + n / 2 + 16;
        ECS__SORT_GROW(S->ents, ecs_entity, cap * sizeof *S->ents);
        ECS__SORT_GROW(S->ents2, ecs_entity, cap * sizeof *S->ents2);
        ECS__SORT_GROW(S->keys, unsigned char, cap * size + 1);
        ECS__SORT_GROW(S->keys2, unsigned char, cap * size + 1);
        ECS__SORT_GROW(S->tabs, uint32_t, cap * sizeof *S->tabs);
        ECS__SORT_GROW(S->tabs2, uint32_t, cap * sizeof *S->tabs2);
        ECS__SORT_GROW(S->rows_at, uint32_t, cap * sizeof *S->rows_at);
        ECS__SORT_GROW(S->rows2, uint32_t, cap * sizeof *S->rows2);
        ECS__SORT_GROW(S->rows, ecs__sort_row, cap * sizeof *S->rows);
        ECS__SORT_GROW(S->tmp, ecs__sort_row, cap * sizeof *S->tmp);
        ECS__SORT_GROW(S->kept, uint32_t, cap * sizeof *S->kept);
        ECS__SORT_GROW(S->runs, ecs__span, cap * sizeof *S->runs);
        S->cap = (uint32_t)cap;
        S->run_cap = (uint32_t)cap;
    }
    if (w->tab.table_count > S->shadow_cap) {
        ECS__SORT_GROW(S->shadow, ecs__shadow, (size_t)w->tab.table_count * sizeof *S->shadow);
        memset(S->shadow + S->shadow_cap, 0, (size_t)(w->tab.table_count - S->shadow_cap) * sizeof *S->shadow);
        S->shadow_cap = w->tab.table_count;
    }
    if (w->tab.table_count > S->map_cap) {
        ECS__SORT_GROW(S->map, uint32_t, (size_t)w->tab.table_count * sizeof *S->map);
        S->map_cap = w->tab.table_count;
    }
    if (q->match_count > S->mat_cap) {
        ECS__SORT_GROW(S->mat, ecs__match, (size_t)q->match_count * sizeof *S->mat);
        S->mat_cap = q->match_count;
    }
    for (uint32_t k = 0; k < q->match_count; k++) {   /* shadows as large as their tables */
        ecs__shadow *sh = &S->shadow[q->matches[k].table->index];
        uint32_t rows = q->matches[k].table->count;
        if (rows <= sh->cap) continue;
        ECS__SORT_GROW(sh->ents, ecs_entity, (size_t)rows * sizeof *sh->ents);
        ECS__SORT_GROW(sh->keys, unsigned char, (size_t)rows * size + 1);
        sh->cap = rows;
    }
    return true;
}

/* The drop bits of every slot, cleared. */
static bool ecs__sort_drops(ecs_world *w, ecs__sort *S) {
    uint32_t words = (w->ent.record_count + 63) / 64 + 1;
    if (words > S->drop_words) {
        ECS__SORT_GROW(S->drop, uint64_t, (size_t)words * sizeof *S->drop);
        S->drop_words = words;
    }
    memset(S->drop, 0, (size_t)S->drop_words * sizeof *S->drop);
    return true;
}
#undef ECS__SORT_GROW


/* Whether size bytes at a and b are alike (keys are small: no call). */
static bool ecs__same_bytes(const unsigned char *a, const unsigned char *b, uint32_t size) {
    uint32_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return false;
    }
    for (; i < size; i++) if (a[i] != b[i]) return false;
    return true;
}

/* Compares every matched table with its shadow: the rows that differ go to
   S->rows (their count returned; ECS__NONE on NOMEM) and to the shadow, the
   slots of the entities they replace (or whose key changed) to the drop
   bits. Nothing after it fails, so the shadows may change here. */
static uint32_t ecs__sort_scan(ecs_world *w, const ecs_query *q, ecs__sort *S, uint32_t size) {
    uint32_t c = 0;
    if (!ecs__sort_drops(w, S)) return ECS__NONE;
    for (uint32_t mi = 0; mi < q->match_count; mi++) {
        const ecs__match *m = &q->matches[mi];
        const ecs__table *t = m->table;
        ecs__shadow *sh = &S->shadow[t->index];
        const int32_t col = m->column[q->order_term];
        const unsigned char *base = col >= 0 && size ? t->columns[col].data : NULL;
        const uint32_t n = t->count, old = S->valid ? sh->count : 0;
        for (uint32_t row = 0; row < n || row < old; row++) {
            if (!(row & 15) && row + 16 <= n && row + 16 <= old &&   /* 16 rows alike: skipped at once */
                !memcmp(sh->ents + row, t->entities + row, 16 * sizeof *sh->ents) &&
                (!size || !memcmp(sh->keys + (size_t)row * size, base + (size_t)row * size, 16 * (size_t)size))) {
                row += 15;
                continue;
            }
            const unsigned char *key = base ? base + (size_t)row * size : NULL;
            if (row < n && row < old && sh->ents[row] == t->entities[row] &&
                ecs__same_bytes(key, sh->keys + (size_t)row * size, size))
                continue;
            if (row < old) ecs__bit_set(S->drop, ecs__index(sh->ents[row]));   /* its old entry goes */
            if (row >= n) continue;
            ecs__sort_row *r = &S->rows[c++];
            r->e = sh->ents[row] = t->entities[row]; r->key = key; r->group = m->group; r->table = t->index; r->row = row;
            if (key) memcpy(sh->keys + (size_t)row * size, key, size);
        }
        sh->count = n;
    }
    return c;
}

/* The runs of the order (S->map names each table's match). */
static void ecs__sort_runs(ecs__sort *S) {
    ecs__span *runs = S->runs, cur = {0, 0, 0};
    uint32_t rc = 0;
    for (uint32_t i = 0; i < S->count; i++) {
        const uint32_t mi = S->map[S->tabs[i]], row = S->rows_at[i];
        if (cur.n && cur.match == mi && cur.row + cur.n == row) { cur.n++; continue; }
        if (cur.n) runs[rc++] = cur;
        cur.match = mi; cur.row = row; cur.n = 1;
    }
    if (cur.n) runs[rc++] = cur;
    S->run_count = rc;
}

/* The group of entry p of the order (S->mat and S->map are the matches'). */
static uint64_t ecs__sort_group(const ecs__sort *S, uint32_t p) { return S->mat[S->map[S->tabs[p]]].group; }

/* The new order and its runs: the rows that stay in their order, each new
   one inserted where a search among them puts it. */
static void ecs__sort_merge(const ecs_query *q, ecs__sort *S, uint32_t size, uint32_t c) {
    uint32_t k = 0, out = 0, lo = 0;
    if (q->match_count) memcpy(S->mat, q->matches, (size_t)q->match_count * sizeof *S->mat);   /* what the runs name */
    S->mat_count = q->match_count;
    for (uint32_t x = 0; x < q->match_count; x++) S->map[q->matches[x].table->index] = x;
    for (uint32_t i = 0; i < S->count; i++) if (!ecs__bit(S->drop, ecs__index(S->ents[i]))) S->kept[k++] = i;
    ecs__sort_row kr;
    for (uint32_t j = 0; j <= c; j++) {
        uint32_t hi = k;   /* the first kept row after new row j (all of them after the last) */
        if (j < c) {   /* galloping from lo (the new rows ascend): the search stays near it in memory */
            uint32_t a = lo, b = lo, step = 1;
            for (;;) {
                if (b >= k) { b = k; break; }
                uint32_t p = S->kept[b];
                kr.e = S->ents[p]; kr.key = size ? S->keys + (size_t)p * size : NULL; kr.group = ecs__sort_group(S, p);
                if (ecs__sort_cmp(q, &kr, &S->rows[j]) >= 0) break;
                a = b + 1;
                b += step;
                step *= 2;
            }
            while (a < b) {
                uint32_t mid = a + (b - a) / 2, p = S->kept[mid];
                kr.e = S->ents[p]; kr.key = size ? S->keys + (size_t)p * size : NULL; kr.group = ecs__sort_group(S, p);
                if (ecs__sort_cmp(q, &kr, &S->rows[j]) < 0) a = mid + 1; else b = mid;
            }
            hi = a;
        }
        while (lo < hi) {   /* kept rows at consecutive old places: copied as blocks */
            uint32_t p = S->kept[lo], r = 1;
            while (lo + r < hi && S->kept[lo + r] == p + r) r++;
            memcpy(S->ents2 + out, S->ents + p, r * sizeof *S->ents);
            memcpy(S->tabs2 + out, S->tabs + p, r * sizeof *S->tabs);
            memcpy(S->rows2 + out, S->rows_at + p, r * sizeof *S->rows_at);
            if (size) memcpy(S->keys2 + (size_t)out * size, S->keys + (size_t)p * size, (size_t)r * size);
            out += r;
            lo += r;
        }
        if (j < c) {
            const ecs__sort_row *r = &S->rows[j];
            S->ents2[out] = r->e;
            S->tabs2[out] = r->table;
            S->rows2[out] = r->row;
            if (size) memcpy(S->keys2 + (size_t)out * size, r->key, size);
            out++;
        }
    }
#define ECS__SORT_SWAP(T, a, b) do { T *x_ = (a); (a) = (b); (b) = x_; } while (0)
    ECS__SORT_SWAP(ecs_entity, S->ents, S->ents2);
    ECS__SORT_SWAP(unsigned char, S->keys, S->keys2);
    ECS__SORT_SWAP(uint32_t, S->tabs, S->tabs2);
    ECS__SORT_SWAP(uint32_t, S->rows_at, S->rows2);
#undef ECS__SORT_SWAP
    S->count = out;
    ecs__sort_runs(S);
}

/* Whether a batch still open may have written id without stamps yet
   (a batch's come at its end): outside systems, any open loop's batch; in
   one, the system this thread runs, if it may write id (through a term or
   its writes list: nested loops can write no more). */
static bool ecs__unstamped(const ecs_world *w, ecs_id id) {
    if (w->sched.phase != ECS__SYSTEMS) return w->qry.iter_locks != 0;
    const ecs__tctx *tc = ecs__thread_ctx(w);
    if (!tc->current) return false;
    const ecs__system *s = &w->sys.systems[tc->current - 1];
    for (int i = 0; i < s->term_count; i++)
        if (s->terms[i].id == id && (ecs__term_how(&s->terms[i]) & ECS__TW)) return true;
    for (int i = 0; i < ECS_MAX_TERMS && s->writes[i]; i++)
        if (s->writes[i] == id) return true;
    return false;
}

/* Brings q's order up to date (seen: the stamp it then stands at); false on
   NOMEM (the next loop sorts everything again). nested: a loop opened where
   a batch may be out (ecs_query_iter): then the stamps are not trusted if
   that batch may have written the order column; the tables are compared
   with their shadows (a pass over the rows, instead of over the stamps). */
static bool ecs__sort_update(ecs_world *w, ecs_query *q, uint64_t seen, bool nested) {
    ecs__sort *S = q->sort;
    if (S->born != w->tab.born) S->valid = false;
    if (!(nested && ecs__unstamped(w, q->terms[q->order_term].id)) && !ecs__sort_stale(q, S)) {
        S->seen = seen;
        return true;
    }
    const uint32_t size = w->reg.ids[q->terms[q->order_term].id].size;
    size_t n = 0;
    for (uint32_t k = 0; k < q->match_count; k++) n += q->matches[k].table->count;
    uint32_t c;
    if (!ecs__sort_fit(w, S, n > S->count ? n : S->count, size, q) ||
        (c = ecs__sort_scan(w, q, S, size)) == ECS__NONE) {
        S->valid = false;
        return false;
    }
    if (!S->valid) S->count = 0;
    ecs__sort_rows(q, S->rows, S->tmp, c);
    ecs__sort_merge(q, S, size, c);
    S->seen = seen;
    S->born = w->tab.born;
    S->valid = true;
    return true;
}

/* Locks (by 1) or unlocks (by -1) every table of a sorted loop's matches. */
static void ecs__sort_lock(ecs_world *w, const ecs_query *q, int by) {
    const ecs__sort *S = q->sort;
    for (uint32_t k = 0; k < S->mat_count; k++) {
        S->mat[k].table->lock += (uint32_t)by;
        if (by > 0) S->mat[k].table->lock_query = q;
    }
    w->qry.iter_locks += (uint32_t)by;
}

/* A sorted system's run start: its own query sorted on the thread that runs
   it (its writes from here on count as changes for the next sort); an
   EXCLUSIVE one (lock) holds every table of the order until the caller
   unlocks. NULL when memory runs out, which fails the frame. */
static const ecs__sort *ecs__sort_system(ecs_world *w, ecs_query *q, bool lock) {
    if (!ecs__sort_update(w, q, ecs__now(w) - 1, false)) {
        ecs__frame_fail(w, ECS_ERR_NOMEM);
        ECS__OOM(w, "ecs_progress (a sorted system's order)");
        return NULL;
    }
    if (lock) ecs__sort_lock(w, q, 1);
    return q->sort;
}

static void ecs__sort_free(ecs_world *w, ecs__sort *S) {
    if (!S) return;
    void *blocks[] = {S->ents, S->keys, S->tabs, S->rows_at, S->ents2, S->keys2, S->tabs2,
                      S->rows2, S->rows, S->tmp, S->kept, S->drop, S->map, S->mat, S->runs};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) ecs__free(w, blocks[i]);
    for (uint32_t i = 0; i < S->shadow_cap; i++) { ecs__free(w, S->shadow[i].ents); ecs__free(w, S->shadow[i].keys); }
    ecs__free(w, S->shadow);
    ecs__free(w, S);
}

/* ---- >>query: cached queries and iteration -------------------------------- */
/* Tests t against q's terms and fills m with the column of each term. */
static bool ecs__query_match(const ecs_query *q, const ecs__table *t, ecs__match *m) {
    m->table = (ecs__table *)t;
    if (t->prefab && !ecs__terms_see_prefabs(q->terms, q->term_count)) return false;
    for (int i = 0; i < q->term_count; i++) {
        int32_t at = ecs__table_find_id(t, q->terms[i].id);
        if (!ecs__term_admits(&q->terms[i], at >= 0)) return false;
        m->column[i] = ecs__term_field(&q->terms[i]) && at >= 0 ? t->column_of[at] : -1;
    }
    m->group = q->group_by ? q->group_by(q->world, t->ids, (int)t->id_count, q->group_ctx) : 0;
    return true;
}

/* Moves q's match `at` to its place: ascending group, then table index (the
   iteration order; one home for it). */
static void ecs__match_settle(ecs_query *q, uint32_t at) {
    ecs__match m = q->matches[at];
    uint32_t k = at;
    while (k > 0 && (q->matches[k - 1].group > m.group ||
                     (q->matches[k - 1].group == m.group && q->matches[k - 1].table->index > m.table->index))) {
        q->matches[k] = q->matches[k - 1];
        k--;
    }
    while (k + 1 < q->match_count && (q->matches[k + 1].group < m.group ||
                                      (q->matches[k + 1].group == m.group && q->matches[k + 1].table->index < m.table->index))) {
        q->matches[k] = q->matches[k + 1];
        k++;
    }
    q->matches[k] = m;
}

/* Counts the terms of a term list (it ends at the first id 0) and checks
   each; shared by queries and systems. */
static ecs_result ecs__terms_check(const ecs_world *w, const char *fn, const ecs_term *terms,
                                   int *count) {
    int n = 0;
    for (; n < ECS_MAX_TERMS && terms[n].id; n++) {
        ecs_result r = ecs__check_component(w, fn, terms[n].id);
        if (r) return r;
        if (!ecs__term_oper_known(&terms[n]))
            return ecs__fail(w, ECS_ERR_ARG, "%s: term %d has an unknown oper %d", fn, n,
                             (int)terms[n].oper);
        if ((unsigned)terms[n].access > (ECS_READ | ECS_WRITE))
            return ecs__fail(w, ECS_ERR_ARG, "%s: term %d has an unknown access %d", fn, n,
                             (int)terms[n].access);
    }
    *count = n;
    return ECS_OK;
}

/* order_by / compare of a desc with n terms: the order term's index in
   *term (-1: unsorted), or ECS_ERR_ARG. */
static ecs_result ecs__order_check(const ecs_world *w, const char *fn, const ecs_query_desc *d, int n, int *term) {
    *term = -1;
    if (!d->order_by && !d->compare) return ECS_OK;
    if (!d->order_by || !d->compare)
        return ecs__fail(w, ECS_ERR_ARG, "%s: order_by and compare come as a pair", fn);
    for (int i = 0; i < n; i++) {
        if (d->terms[i].oper == ECS_CHANGED)
            return ecs__fail(w, ECS_ERR_ARG, "%s: a sorted query cannot have ECS_CHANGED terms (term %d): "
                             "sorted loops hand out every row", fn, i);
        if (d->terms[i].id == d->order_by && d->terms[i].oper == ECS_AND && *term < 0) *term = i;
    }
    if (*term < 0)
        return ecs__fail(w, ECS_ERR_ARG, "%s: order_by (id %u) is not one of the query's ECS_AND terms", fn,
                         (unsigned)d->order_by);
    return ECS_OK;
}

ECS_API ecs_query *ecs_query_new(ecs_world *w, const ecs_query_desc *desc) {
    if (!w || ecs__check_running(w, "ecs_query_new")) return NULL;
    if (!desc) { ecs__fail(w, ECS_ERR_ARG, "ecs_query_new: desc is NULL"); return NULL; }
    int n = 0, order = -1;
    if (ecs__terms_check(w, "ecs_query_new", desc->terms, &n) ||
        ecs__order_check(w, "ecs_query_new", desc, n, &order))
        return NULL;
    uint32_t changed = 0;
    for (int i = 0; i < n; i++) changed |= (uint32_t)(desc->terms[i].oper == ECS_CHANGED) << i;
    if ((changed || order >= 0) && ecs__change_on(w, "ecs_query_new")) return NULL;   /* (a sort reads stamps) */
    ecs_query *q = (ecs_query *)ecs__alloc(w, sizeof *q);
    ecs__sort *sort = order >= 0 ? (ecs__sort *)ecs__alloc(w, sizeof *sort) : NULL;
    if (!q || (order >= 0 && !sort) ||
        !ECS__RESERVE(w, w->qry.queries, w->qry.query_cap, (size_t)w->qry.query_count + 1)) {
        ecs__free(w, q);
        ecs__free(w, sort);
        ECS__OOM(w, "ecs_query_new");
        return NULL;
    }
    memset(q, 0, sizeof *q);
    if (sort) memset(sort, 0, sizeof *sort);
    q->world = w;
    q->term_count = n;
    q->changed = changed;
    q->serial = ++w->qry.serials;
    memcpy(q->terms, desc->terms, (size_t)n * sizeof *q->terms);
    q->group_by = desc->group_by;
    q->group_ctx = desc->group_ctx;
    for (int i = 0; i < n; i++) q->writes |= (ecs__term_how(&desc->terms[i]) & ECS__TW) != 0;
    q->order_term = order;
    q->compare = desc->compare;
    q->compare_ctx = desc->compare_ctx;
    q->sort = sort;
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        ecs__match m;
        if (!ecs__query_match(q, w->tab.tables[i], &m)) continue;
        if (!ECS__RESERVE(w, q->matches, q->match_cap, (size_t)q->match_count + 1)) {
            ecs__free(w, q->matches);
            ecs__free(w, q);
            ecs__free(w, sort);
            ECS__OOM(w, "ecs_query_new");
            return NULL;
        }
        q->matches[q->match_count] = m;
        ecs__match_settle(q, q->match_count++);
    }
    q->slot = w->qry.query_count;
    w->qry.queries[w->qry.query_count++] = q;
    return q;
}

ECS_API void ecs_query_free(ecs_query *q) {
    if (!q || ecs__check_running(q->world, "ecs_query_free")) return;
    ecs_world *w = q->world;
    for (uint32_t i = 0; i < w->tab.table_count; i++)   /* no error may name it any more */
        if (w->tab.tables[i]->lock_query == q) w->tab.tables[i]->lock_query = NULL;
    ecs_query *last = w->qry.queries[--w->qry.query_count];
    ecs__sort_free(w, q->sort);
    w->qry.queries[q->slot] = last;
    last->slot = q->slot;
    ecs__free(w, q->matches);
    ecs__free(w, q->gmarks);
    ecs__free(w, q);
}

/* A sorted loop's start: refused inside ordinary systems other than
   MAIN_THREAD ones (the order is the query's own state, rewritten here) and
   beside an open loop of the same query; else sorted, its tables locked. */
static bool ecs__sorted_start(ecs_world *w, ecs_query *q, ecs_iter *it) {
    static const char fn[] = "ecs_query_iter";
    ecs__sort *S = q->sort;
    if (w->sched.phase == ECS__SYSTEMS) {
        const ecs__tctx *tc = ecs__thread_ctx(w);
        if (!tc->current || !(w->sys.systems[tc->current - 1].flags & ECS_SYSTEM_MAIN_THREAD)) {
            ecs__fail(w, ECS_ERR_BUSY, "%s: a sorted query keeps its order in itself, so inside systems only "
                      "MAIN_THREAD ones may loop it", fn);
            return false;
        }
    }
    if (S->open) {
        ecs__fail(w, ECS_ERR_BUSY, "%s: a loop of this sorted query is open (end one left early with "
                  "ecs_iter_fini)", fn);
        return false;
    }
    const uint64_t now = ecs__now(w);   /* in a frame, the caller's own writes after this count */
    if (!ecs__sort_update(w, q, w->sched.phase == ECS__IDLE ? now : now - 1, true)) { ECS__OOM(w, fn); return false; }
    if (w->sched.phase == ECS__IDLE && now == w->chg.tick) w->chg.tick++;
    S->open = true;
    it->priv.sorted = true;
    if (it->priv.locks) ecs__sort_lock(w, q, 1);
    return true;
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
    it.priv.terms = q->terms;
    it.priv.term_count = q->term_count;
    it.batch = -1;   /* the first batch is 0 */
    it.commands = w->cmd.defer_depth ? w->cmd.defer : NULL;
    if (!ecs__query_access_ok(w, q)) return it;   /* refused: yields nothing */
    it.priv.locks = w->sched.phase != ECS__SYSTEMS;   /* nothing can change structure while systems run */
    if (q->sort && !ecs__sorted_start(w, q, &it)) return it;
    it.priv.query = q;
    return it;
}

/* Each batch locks its table until the next call, so a structural change
   cannot move rows out from under the caller's column pointers. */
static void ecs__iter_unlock(ecs_iter *it) {
    ((ecs__table *)it->priv.table)->lock--;
    it->world->qry.iter_locks--;
    it->priv.table = NULL;
}

/* The batch a query loop handed out last has ended: its WRITE terms'
   columns were written (>>change). */
/* A grouped loop's batch out: a table made since may have settled before
   its table, which the loop follows (cursor and held move with it). */
/* The match of a table-order loop's batch out: held - 1, or further on if
   tables made since settled before it (its table is locked: its rows stay
   put, so its entity column names it). */
static uint32_t ecs__held_match(const ecs_iter *it) {
    const ecs_query *q = it->priv.query;
    const ecs_entity *ents = it->entities - it->priv.held_row;
    uint32_t k = it->priv.held - 1;
    while (k < q->match_count && q->matches[k].table->entities != ents) k++;
    return k;
}

ECS__NOINLINE void ecs__iter_follow(ecs_iter *it) {
    const uint32_t at = it->priv.held - 1, k = ecs__held_match(it);
    it->priv.cursor += k - at;
    it->priv.held = k + 1;
}

ECS__HOT void ecs__iter_stamp(ecs_iter *it) {
    const ecs_query *q = it->priv.query;
    if (ECS__UNLIKELY(q->group_by != NULL) && it->priv.held && !it->priv.sorted) ecs__iter_follow(it);
    if (it->priv.held && it->world->chg.on && q->writes)
        ecs__stamp_batch(q->terms, q->term_count, &(it->priv.sorted ? q->sort->mat : q->matches)[it->priv.held - 1],
                         it->priv.held_row,
                         (uint32_t)it->count, ecs__now(it->world), it);
    it->priv.held = 0;
}

/* Hands out rows [row, row + n) of the table of m (match index mi). */
ECS__HOT void ecs__iter_batch(ecs_iter *it, const ecs_query *q, const ecs__match *m, uint32_t mi, uint32_t row,
                              uint32_t n) {
    const ecs__table *t = m->table;
    it->count = (int)n;
    it->entities = t->entities + row;
    it->batch++;
    it->priv.held = mi + 1;
    it->priv.held_row = row;
    for (int i = 0; i < q->term_count; i++)
        it->priv.fields[i] = m->column[i] < 0 ? NULL
                           : t->columns[m->column[i]].data + (size_t)row * t->columns[m->column[i]].size;
}

/* Ends a sorted loop: its tables unlocked, the order free for the next. */
static void ecs__sorted_end(ecs_iter *it) {
    ecs_query *q = it->priv.query;
    if (it->priv.locks) ecs__sort_lock(it->world, q, -1);
    q->sort->open = false;
    it->priv.sorted = false;
}

static void ecs__query_done(ecs_world *w, ecs_query *q, const ecs_iter *it);

/* The fields of run r, asked of memory ahead of their batch: in a sorted
   loop rows follow the keys, not memory, and a batch is often one row, so
   without it each batch would wait for its rows. (Inlined: a call to it
   alone is taken for one without effects and dropped.) */
ECS__HOT void ecs__sort_prefetch(const ecs_query *q, const ecs__sort *S, const ecs__span *r) {
    const ecs__match *m = &S->mat[r->match];
    const int32_t col = m->column[q->order_term];   /* (-1: a tag) */
    if (col >= 0) ECS__PREFETCH(m->table->columns[col].data + (size_t)r->row * m->table->columns[col].size);
}

/* ecs_query_next of a sorted loop: the order's runs (out of line: a batch
   is often one row, so this path is kept short). */
ECS__NOINLINE bool ecs__sorted_next(ecs_iter *it) {
    ecs_query *q = it->priv.query;
    const ecs__sort *S = q->sort;
    if (q->writes) ecs__iter_stamp(it);
    it->priv.held = 0;
    while (it->priv.cursor < S->run_count) {
        const ecs__span *r = &S->runs[it->priv.cursor++];
        const ecs__match *m = &S->mat[r->match];
        if (it->priv.restricted && m->group != it->priv.only) {   /* (groups ascend: past it, done) */
            if (m->group > it->priv.only) it->priv.cursor = S->run_count;
            continue;
        }
        if (it->priv.cursor + 7 < S->run_count) ecs__sort_prefetch(q, S, r + 8);
        ecs__iter_batch(it, q, m, r->match, r->row, r->n);
        return true;
    }
    ecs__query_done(it->world, q, it);
    ecs__sorted_end(it);
    it->priv.query = NULL;
    it->count = 0;
    return false;
}

/* A loop of q went through every batch (of one group, if restricted): the
   mark its next ECS_CHANGED loop (and ecs_query_changed) compares with for
   those tables. Outside systems the clock moves on, so what is written
   after this counts. (ecs_iter_set_group made room for the group's mark.) */
static void ecs__query_done(ecs_world *w, ecs_query *q, const ecs_iter *it) {
    if (!(q->changed | q->tracked)) return;
    const uint64_t now = ecs__now(w);
    if (it->priv.restricted) {
        uint32_t k = 0;
        while (k < q->gmark_count && q->gmarks[k].group != it->priv.only) k++;
        if (k == q->gmark_count && k < q->gmark_cap) q->gmark_count++;
        if (k < q->gmark_count) { q->gmarks[k].group = it->priv.only; q->gmarks[k].seen = now; }
    } else {
        q->seen = now;
        q->gmark_count = 0;   /* (every group's mark is now q->seen) */
    }
    if (now == w->chg.tick && w->sched.phase != ECS__SYSTEMS) w->chg.tick++;
}

/* ecs_query_next of a table-order loop: each matched table (or its runs of
   changed blocks) a batch. */
ECS__NOINLINE bool ecs__tables_next(ecs_iter *it) {
    ecs__table *held = (ecs__table *)it->priv.table;   /* the last batch's, still locked */
    ecs_query *q = it->priv.query;
    if (q) {
        ecs__iter_stamp(it);
        while (it->priv.cursor < q->match_count) {
            const uint32_t mi = it->priv.cursor;
            const ecs__match *m = &q->matches[mi];
            ecs__table *t = m->table;
            uint32_t row = 0, n = t->count;
            if (ECS__UNLIKELY(q->group_by != NULL) && it->priv.restricted && m->group != it->priv.only) {
                it->priv.cursor = m->group > it->priv.only ? q->match_count : it->priv.cursor + 1;
                continue;
            }
            if (q->changed) {   /* the table's runs of changed blocks, one batch each */
                row = it->priv.row;
                n = row < t->count ? ecs__changed_run(m, q->changed, ecs__match_seen(q, m), &row, t->count) : 0;
                it->priv.row = row + n;
            }
            if (!n || !q->changed) {
                it->priv.cursor++;
                it->priv.row = 0;
            }
            if (!n) continue;
            if (it->priv.locks) {   /* the lock passes from the last batch's table to this one */
                if (held) held->lock--;
                else it->world->qry.iter_locks++;
                t->lock++;
                t->lock_query = q;
                it->priv.table = t;
            }
            ecs__iter_batch(it, q, m, mi, row, n);
            return true;
        }
        ecs__query_done(it->world, q, it);
    }
    if (held) ecs__iter_unlock(it);
    it->priv.query = NULL;
    it->count = 0;
    return false;
}

/* (Both paths out of line, so neither pays for the other's registers.) */
ECS_API bool ecs_query_next(ecs_iter *it) {
    if (!it) return false;
    return it->priv.sorted ? ecs__sorted_next(it) : ecs__tables_next(it);
}

ECS_API ecs_result ecs_iter_set_group(ecs_iter *it, uint64_t group) {
    if (!it || !it->world) return ECS_ERR_ARG;
    const ecs_query *q = it->priv.query;
    if (!q || !q->group_by || it->batch != -1 || it->priv.cursor)
        return ecs__fail(it->world, ECS_ERR_ARG, "ecs_iter_set_group: %s", !q ? "not a query loop (or one refused)"
                         : !q->group_by ? "the query has no group_by" : "the loop has started");
    ecs_query *qm = it->priv.query;   /* room for the group's mark, so the loop's end cannot fail
                                         (only a marked query's: one loop of it at a time) */
    if ((qm->changed | qm->tracked) && qm->gmark_count == qm->gmark_cap) {
        uint32_t cap = qm->gmark_cap ? 2 * qm->gmark_cap : 4;
        ecs__gmark *g = (ecs__gmark *)ecs__realloc(it->world, qm->gmarks, (size_t)cap * sizeof *g);
        if (!g) return ECS__OOM(it->world, "ecs_iter_set_group");
        qm->gmarks = g;
        qm->gmark_cap = cap;
    }
    it->priv.only = group;
    it->priv.restricted = true;
    return ECS_OK;
}

ECS_API uint64_t ecs_iter_group(const ecs_iter *it) {
    if (!it || !it->world || !it->count) return 0;
    const ecs_query *q = it->priv.query;
    if (q && it->priv.held && it->priv.sorted) return q->sort->mat[it->priv.held - 1].group;
    if (q && it->priv.held) {
        const uint32_t k = q->group_by ? ecs__held_match(it) : it->priv.held - 1;
        return k < q->match_count ? q->matches[k].group : 0;
    }
    if (q || !it->system || !(q = it->world->sys.systems[it->system - 1].query) || !q->group_by) return 0;
    const uint32_t table = it->world->ent.records[ecs__index(it->entities[0])].table;   /* a system's batch */
    for (uint32_t k = 0; k < q->match_count; k++)
        if (q->matches[k].table->index == table) return q->matches[k].group;
    return 0;
}

ECS_API void ecs_iter_fini(ecs_iter *it) {
    if (!it) return;
    if (it->priv.query) ecs__iter_stamp(it);   /* (what it wrote counts; the loop completes nothing) */
    if (it->priv.sorted) ecs__sorted_end(it);
    if (it->priv.table) ecs__iter_unlock(it);
    it->priv.query = NULL;
}

ECS_API void ecs_iter_skip_changes(ecs_iter *it, int term) {
    if (it && term >= 0 && term < it->priv.term_count) it->priv.skip |= 1u << term;
}

ECS_API bool ecs_query_changed(ecs_world *w, ecs_query *q) {
    if (!w || !q || q->world != w) {
        if (w) ecs__fail(w, ECS_ERR_ARG, "ecs_query_changed: the query is NULL or of another world");
        return false;
    }
    if (w->sched.phase != ECS__IDLE) {   /* in a frame: a query marked already (a frame's threads
                                           never write the mark's switch) */
        if (!ecs__query_access_ok(w, q) || !w->chg.on || !q->tracked) return true;
    } else if (ecs__change_on(w, "ecs_query_changed")) {
        return true;
    }
    q->tracked = true;
    uint32_t mask = 0;   /* every term that reads: AND, OPTIONAL, CHANGED */
    for (int i = 0; i < q->term_count; i++) mask |= (uint32_t)ecs__term_field(&q->terms[i]) << i;
    if (!q->gmark_count) return !q->seen || ecs__matches_changed(q->matches, q->match_count, mask, q->seen);
    for (uint32_t k = 0; k < q->match_count; k++) {   /* groups looped alone since: each its own mark */
        const uint64_t seen = ecs__match_seen(q, &q->matches[k]);
        if (!seen || ecs__matches_changed(&q->matches[k], 1, mask, seen)) return true;
    }
    return false;
}

ECS_API void *ecs_field(const ecs_iter *it, int term) {
    return it && term >= 0 && term < it->priv.term_count ? it->priv.fields[term] : NULL;
}

ECS_API void *ecs_field_sized(const ecs_iter *it, int term, size_t size) {
    void *p = ecs_field(it, term);
#if ECS_CHECK_ACCESS
    if (p && it->priv.terms) {
        const ecs_world *w = it->world;
        const ecs__idinfo *in = &w->reg.ids[it->priv.terms[term].id];
        if (in->size != size) {
            const char *sys = it->system ? w->sys.systems[it->system - 1].name : NULL;
            ecs__refuse(w, "ECS_FIELD: term %d is \"%s\" of %u bytes, read as a type of %zu bytes%s%s%s; "
                        "use the component's own type", term, in->name, (unsigned)in->size, size,
                        sys ? " in system \"" : "", sys ? sys : "", sys ? "\"" : "");
            return NULL;
        }
    }
#else
    (void)size;
#endif
    return p;
}

ECS_API size_t ecs_query_count(ecs_world *w, ecs_query *q) {
    if (!w || !q) return 0;
    size_t n = 0;
    for (uint32_t i = 0; i < q->match_count; i++) n += q->matches[i].table->count;
    return n;
}

static void ecs__query_fini(ecs_world *w) {
    while (w->qry.query_count) ecs_query_free(w->qry.queries[w->qry.query_count - 1]);
    ecs__free(w, w->qry.queries);
}

/* ---- >>commands: deferred structural changes ------------------------------ */
/* 1 .. ECS__SERIAL_MAX, then 0 for good (any thread): a buffer with serial 0
   cannot hand out pending handles. At 6,000 applied buffers a second (100
   systems at 60 fps) the default 39 bits last 2.9 years. */
static uint64_t ecs__serial_next(ecs_world *w) {
    uint64_t n = ecs__add_fetch(&w->cmd.next_serial, 1);
    if (n > ECS__SERIAL_MAX) { ecs__store(&w->cmd.next_serial, ECS__SERIAL_MAX + 1); return 0; }
    return n;
}

#define ECS__CMD_DATA_MAX (1ull << 31)   /* value bytes per buffer: its growth doubles up to here */
static uint32_t ecs__pending_index(ecs_entity e) { return (uint32_t)e & ECS__PENDING_INDEX_MAX; }
static bool ecs__is_pending_of(const ecs_commands *c, ecs_entity e) {
    return (e & ECS__PENDING) && c->serial &&
           ((e >> ECS__PENDING_INDEX_BITS) & ECS__SERIAL_MAX) == c->serial &&
           !(e & ~(ECS__PENDING | (ECS__SERIAL_MAX << ECS__PENDING_INDEX_BITS) | ECS__PENDING_INDEX_MAX)) &&
           ecs__pending_index(e) < c->created_count;
}

static ecs_result ecs__hooks_flush(ecs_world *w);
static void ecs__events_stage(ecs_world *w, ecs_commands *c);
/* After an immediate change: what its hooks recorded, if anything (inline:
   worlds without hooks pay one load). */
static inline ecs_result ecs__hooks_after(ecs_world *w) {
    return w->hk.hook_buf && w->hk.hook_buf->count ? ecs__hooks_flush(w) : ECS_OK;
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

/* Whether command k holds a constructed value (a set of a component with
   lifecycle hooks, not applied yet). */
static bool ecs__cmd_owns(const ecs_world *w, const ecs_commands *c, uint32_t k) {
    return c->owning && k >= c->applied && c->cmds[k].op == ECS__CMD_SET && w->reg.ids[c->cmds[k].id].lifecycle;
}

/* Destroys the values held by commands [from, count) (they will not apply). */
static void ecs__commands_drop(ecs_world *w, ecs_commands *c, uint32_t from) {
    for (uint32_t k = from; c->owning && k < c->count; k++) {
        if (!ecs__cmd_owns(w, c, k)) continue;
        const ecs__idinfo *in = &w->reg.ids[c->cmds[k].id];
        ecs__destruct(in, c->data + c->cmds[k].value, 1);
    }
}

static void ecs__buffer_fini(ecs_world *w, ecs_commands *c) {
    ecs__commands_drop(w, c, c->applied);
    ecs__free(w, c->cmds);
    ecs__free(w, c->data_raw);
    ecs__free(w, c->created);
    for (uint32_t k = 0; k < c->evb_count; k++) {
        ecs__free(w, c->evb[k].raw);
        ecs__free(w, c->evb[k].em);
    }
    ecs__free(w, c->evb);
}

static void ecs__buffer_free(ecs_world *w, ecs_commands *c) {
    ecs__buffer_fini(w, c);
    ecs__free(w, c);
}

/* Empties a buffer. A new serial only if it handed out pending handles
   (those of the old one must not resolve against new creates): a buffer
   that only sets, destroys or emits uses none up. */
static void ecs__commands_clear(ecs_commands *c) {
    if (c->created_count) c->serial = ecs__serial_next(c->world);
    c->count = c->data_size = c->created_count = c->applied = 0;
    c->owning = false;
}

/* A command could not be recorded for lack of memory: the caller hears it,
   and a frame in which a system lost one reports it (ECS_ERR_NOMEM) and
   stops at its next sync point. */
ECS__COLD ecs_result ecs__cmd_oom(ecs_world *w, const char *fn) {
    if (w->sched.phase != ECS__IDLE) ecs__frame_fail(w, ECS_ERR_NOMEM);
    return ECS__OOM(w, fn);
}

/* Grows a buffer's values to cap bytes. Held values of a component with a
   move hook are relocated with it (a value may point into itself), the rest
   as bytes; on failure nothing changes. */
static bool ecs__cmd_data_grow(ecs_world *w, ecs_commands *c, size_t cap) {
    if (!c->owning) return ecs__column_grow(w, &c->data_raw, &c->data, c->data_size, 1, cap);
    unsigned char *p = (unsigned char *)ecs__alloc(w, cap + 64);
    if (!p) return false;
    unsigned char *data = (unsigned char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
    memcpy(data, c->data, c->data_size);
    for (uint32_t k = c->applied; k < c->count; k++) {
        const ecs__idinfo *in = &w->reg.ids[c->cmds[k].id];
        if (ecs__cmd_owns(w, c, k) && in->move) in->move(data + c->cmds[k].value, c->data + c->cmds[k].value, 1, in->ctx);
    }
    ecs__free(w, c->data_raw);
    c->data_raw = p;
    c->data = data;
    return true;
}

/* Room for a value of size bytes aligned to align (hooks read it as its
   type): its offset in c->data, or ECS__NONE when memory runs out. Inline:
   the buffer has room; the growth is out of line. */
static uint32_t ecs__cmd_value_grow(ecs_world *w, ecs_commands *c, uint32_t size, uint32_t at);
static inline uint32_t ecs__cmd_value(ecs_world *w, ecs_commands *c, uint32_t size, uint32_t align) {
    uint32_t at = (c->data_size + (align ? align - 1 : 0)) & ~(align ? align - 1 : 0);
    if (ECS__UNLIKELY((size_t)at + size > c->data_cap)) return ecs__cmd_value_grow(w, c, size, at);
    c->data_size = at + size;
    return at;
}

ECS__NOINLINE uint32_t ecs__cmd_value_grow(ecs_world *w, ecs_commands *c, uint32_t size, uint32_t at) {
    size_t cap = c->data_cap ? (size_t)c->data_cap * 2 : 256;
    while (cap < (size_t)at + size) cap *= 2;
    if (!ecs__cmd_data_grow(w, c, cap)) return ECS__NONE;
    c->data_cap = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
    c->data_size = at + size;
    return at;
}

/* A buffer being applied is not recorded into, applied again or freed
   from one of its hooks: that would move or free values under the apply. */
ECS__COLD ecs_result ecs__busy_applying(ecs_world *w, const char *fn) {
    return ecs__fail(w, ECS_ERR_BUSY, "%s: this command buffer is being applied, and the call comes from "
                     "a hook of one of its commands; record into another buffer, or make the change with "
                     "the immediate call (a hook's structural calls are deferred to right after its change)", fn);
}

/* A plain set command's value, as bytes (out of line: inlined into a
   caller's own code, the sizes it does not have would draw warnings). */
ECS__NOINLINE void ecs__cmd_bytes(unsigned char *cell, const void *value, uint32_t size) {
    ecs__cell_copy(cell, (const unsigned char *)value, size);
}

/* A set command's value of a component with lifecycle hooks: a
   constructed copy (ctor, then copy), so the caller's value may die right
   after the call. */
ECS__NOINLINE void ecs__cmd_hold(ecs_commands *c, const ecs__idinfo *in, unsigned char *cell, const void *value) {
    ecs__construct(in, cell, 1);
    ecs__copy_into(in, cell, value, 1);
    c->owning = true;
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
    if (c->applying) return ecs__busy_applying(w, fn);
    if (op != ECS__CMD_DESTROY && (r = ecs__check_addable(w, fn, id))) return r;
    uint32_t size = op == ECS__CMD_SET ? w->reg.ids[id].size : 0;
    if (op == ECS__CMD_SET && size && !value)
        return ecs__fail(w, ECS_ERR_ARG, "%s: value is NULL for component \"%s\"", fn,
                         w->reg.ids[id].name);
    if (op == ECS__CMD_SET && !size) op = ECS__CMD_ADD;   /* setting a tag adds it */
    if (size && (size_t)c->data_size + size + 64 > ECS__CMD_DATA_MAX)
        return ecs__fail(w, ECS_ERR_ARG, "%s: a command buffer holds at most 2 GiB of values (this "
                         "one has %u bytes, \"%s\" adds %u); apply it first", fn,
                         (unsigned)c->data_size, w->reg.ids[id].name, (unsigned)size);
    uint32_t at = 0;
    if ((ECS__UNLIKELY(c->count == c->cap) && !ECS__RESERVE(w, c->cmds, c->cap, (size_t)c->count + 1)) ||
        (size && (at = ecs__cmd_value(w, c, size, w->reg.ids[id].align)) == ECS__NONE))
        return ecs__cmd_oom(w, fn);
    ecs__cmd *cmd = &c->cmds[c->count++];
    cmd->op = op; cmd->id = id; cmd->e = e; cmd->value = at;
    if (size) {
        const ecs__idinfo *in = &w->reg.ids[id];
        if (ECS__UNLIKELY(in->lifecycle)) ecs__cmd_hold(c, in, c->data + at, value);
        else ecs__cmd_bytes(c->data + at, value, size);
    }
    return ECS_OK;
}

/* A command that makes an entity (op: CREATE, or INSTANTIATE of the prefab
   *of): its pending handle, or 0 on failure with nothing recorded. */
static ecs_entity ecs__cmd_make(ecs_commands *c, const char *fn, uint32_t op, const ecs_entity *of) {
    ecs_world *w = c->world;
    if (c->applying) { ecs__busy_applying(w, fn); return 0; }
    if (!c->serial) {
        if (w->sched.phase != ECS__IDLE) ecs__frame_fail(w, ECS_ERR_NOMEM);
        ecs__fail(w, ECS_ERR_NOMEM, "%s: this world has used up its 2^%d command-buffer serials, so no "
                  "new pending handle can be told apart from an old one", fn, ECS_PENDING_SERIAL_BITS);
        return 0;
    }
    if (c->created_count > ECS__PENDING_INDEX_MAX) {
        ecs__fail(w, ECS_ERR_ARG, "%s: a buffer holds at most %u pending creates; apply it first", fn,
                  (unsigned)ECS__PENDING_INDEX_MAX + 1);
        return 0;
    }
    if (of && (size_t)c->data_size + sizeof *of + 64 > ECS__CMD_DATA_MAX) {
        ecs__fail(w, ECS_ERR_ARG, "%s: a command buffer holds at most 2 GiB of values; apply it first", fn);
        return 0;
    }
    uint32_t at = 0;
    if (!ECS__RESERVE(w, c->created, c->created_cap, (size_t)c->created_count + 1) ||
        !ECS__RESERVE(w, c->cmds, c->cap, (size_t)c->count + 1) ||
        (of && (at = ecs__cmd_value(w, c, (uint32_t)sizeof *of, 8)) == ECS__NONE)) {
        ecs__cmd_oom(w, fn);
        return 0;
    }
    if (of) memcpy(c->data + at, of, sizeof *of);
    ecs_entity e = ECS__PENDING | (c->serial << ECS__PENDING_INDEX_BITS) | c->created_count;
    c->created[c->created_count++] = 0;
    ecs__cmd *cmd = &c->cmds[c->count++];
    cmd->op = op; cmd->id = 0; cmd->e = e; cmd->value = at;
    return e;
}

ECS_API ecs_entity ecs_cmd_create(ecs_commands *c) {
    return c ? ecs__cmd_make(c, "ecs_cmd_create", ECS__CMD_CREATE, NULL) : 0;
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

ECS_API ecs_result ecs_cmd_set_parent(ecs_commands *c, ecs_entity child, ecs_entity parent) {
    static const char fn[] = "ecs_cmd_set_parent";
    if (!c) return ECS_ERR_ARG;
    ecs_world *w = c->world;
    if (child == 0) return ecs__fail(w, ECS_ERR_STALE, "%s: entity 0 is never a live entity", fn);
    ecs_entity both[2] = {child, parent};
    for (int k = 0; k < 2; k++)
        if ((both[k] & ECS__PENDING) && !ecs__is_pending_of(c, both[k]))
            return ecs__fail(w, ECS_ERR_ARG, "%s: pending entity %llx was made by another command buffer "
                             "or an earlier apply", fn, (unsigned long long)both[k]);
    if (c->applying) return ecs__busy_applying(w, fn);
    if ((size_t)c->data_size + sizeof parent + 64 > ECS__CMD_DATA_MAX)
        return ecs__fail(w, ECS_ERR_ARG, "%s: a command buffer holds at most 2 GiB of values; apply it first", fn);
    uint32_t at = 0;
    if (!ECS__RESERVE(w, c->cmds, c->cap, (size_t)c->count + 1) ||
        (at = ecs__cmd_value(w, c, (uint32_t)sizeof parent, 8)) == ECS__NONE)
        return ecs__cmd_oom(w, fn);
    ecs__cmd *cmd = &c->cmds[c->count++];
    cmd->op = ECS__CMD_PARENT; cmd->id = 0; cmd->e = child; cmd->value = at;
    memcpy(c->data + at, &parent, sizeof parent);
    return ECS_OK;
}

/* Pending handles of c in value's entity fields become live (c's commands
   applied: its creates are made). */
static void ecs__fields_live(const ecs_commands *c, const ecs__idinfo *in, unsigned char *value) {
    for (int k = 0; k < in->entity_field_count; k++) {
        ecs_entity ref;
        memcpy(&ref, value + in->entity_fields[k], sizeof ref);
        if (!ecs__is_pending_of(c, ref)) continue;
        ref = c->created[ecs__pending_index(ref)];
        memcpy(value + in->entity_fields[k], &ref, sizeof ref);
    }
}

static ecs_result ecs__cmd_instantiate_apply(ecs_world *w, ecs_commands *c, const ecs__cmd *cmd);

/* ---- spawn runs: a new entity's commands applied as one placement ---- */
/* What a spawner records most: the create of a pending handle, then sets
   and adds of it. Applied one by one, that is a row in the empty table and
   a move per id; a spawn run places the entity in its last table at once,
   with the serial result: the same slot, the same tables made in the same
   order (each step's, with its edges), the same rows, values and stamps
   (each step's table had the row for a moment: its block is stamped), the
   same capacity growth. Only where no hook can see the steps: ids without
   lifecycle or event hooks, no hook commands waiting, no table locked. */
#define ECS__SPAWN_MAX 16   /* ids per run; a longer one goes on one by one */
typedef struct ecs__way {   /* where a run of ids goes */
    ecs_id ids[ECS__SPAWN_MAX];
    uint32_t n;                                /* its ids (0: none kept) */
    uint32_t runs;                             /* (a parallel apply's piece: its runs on it) */
    ecs__table *path[ECS__SPAWN_MAX + 1];      /* the empty table, then each step's */
    int32_t col[ECS__SPAWN_MAX];               /* per id, its column in the last (-1: a tag) */
    uint8_t at[ECS__SPAWN_MAX + 1];            /* (a parallel apply: each step's table's place
                                                  in its batch) */
} ecs__way;
typedef struct ecs__spawn {   /* the way of the latest run, kept while runs follow each other */
    ecs__way way;
    uint32_t next;                             /* the command after it: a run starting there
                                                  may use the way (no other command between) */
} ecs__spawn;

/* The length of the spawn run at command k (create + its ids' commands),
   ids[] its ids in order; 0 if there is none. (Inline: the serial and the
   split apply each have their copy.) */
ECS__HOT uint32_t ecs__spawn_run(const ecs_world *w, const ecs_commands *c, uint32_t k, ecs_id *ids) {
    const ecs__cmd *cmd = &c->cmds[k];
    if (cmd->op != ECS__CMD_CREATE || !(cmd->e & ECS__PENDING) || k + 1 >= c->count ||
        c->cmds[k + 1].e != cmd->e || (w->hk.hook_buf && w->hk.hook_buf->count))
        return 0;
    uint32_t n = 0;
    for (uint32_t j = k + 1; j < c->count && n < ECS__SPAWN_MAX; j++) {
        const ecs__cmd *x = &c->cmds[j];
        if (x->e != cmd->e || (x->op != ECS__CMD_SET && x->op != ECS__CMD_ADD)) break;
        const ecs__idinfo *in = &w->reg.ids[x->id];
        if (in->lifecycle || in->on_add || in->on_set || in->on_remove) break;
        uint32_t i = 0;
        while (i < n && ids[i] != x->id) i++;
        if (i < n) break;   /* its second set overwrites: one by one */
        ids[n++] = x->id;
    }
    return n ? n + 1 : 0;
}

/* The rest of a way whose path (n steps) is known: false if a table on it
   is locked or has hooks (one by one would fail or fire there); else its
   columns and ids, kept. */
ECS__HOT bool ecs__way_finish(const ecs_world *w, ecs__way *way, const ecs_id *ids, uint32_t n) {
    for (uint32_t i = 0; i <= n; i++) {
        const ecs__table *t = way->path[i];
        if (ecs__locked(w, t) || t->hooked || t->evented || t->prefab) return false;
    }
    for (uint32_t i = 0; i < n; i++) way->col[i] = way->path[n]->column_of[ecs__table_find_id(way->path[n], ids[i])];
    memcpy(way->ids, ids, n * sizeof *ids);
    way->n = n;
    way->runs = 0;
    return true;
}

/* The way of a run of ids (n), its tables made (if new) in the serial
   order; false (way empty) if one is locked or has hooks. NOMEM in *res. */
static bool ecs__spawn_way(ecs_world *w, ecs__way *way, const ecs_id *ids, uint32_t n, ecs_result *res) {
    ecs__table **path = way->path;
    way->n = 0;
    path[0] = w->tab.tables[0];
    for (uint32_t i = 0; i < n; i++) {
        if (ecs__locked(w, path[i])) return false;   /* one by one stops here: no later table made */
        const ecs__edge_to *edge = ecs__edge_get(path[i], ids[i], false);
        if (!edge && !(edge = ecs__table_step(w, path[i], ids[i], false))) {
            *res = ECS__OOM(w, "ecs_commands_apply");
            return true;
        }
        path[i + 1] = edge->dst;
    }
    return ecs__way_finish(w, way, ids, n);
}

struct ecs__fill;
static void ecs__fields_batch(const ecs_world *w, const ecs_commands *c, const ecs__idinfo *in, unsigned char *value,
                              const struct ecs__fill *f);

/* A run's values (x: its first set or add) into row of its way's last
   table. Pending handles in entity fields become live (its own too): from
   c's creates, or (f: a parallel apply) as its batch numbers them. */
ECS__HOT void ecs__spawn_values(const ecs_world *w, ecs_commands *c, const ecs__cmd *x, const ecs__way *way,
                               uint32_t row, const struct ecs__fill *f) {
    const ecs__table *dst = way->path[way->n];
    for (uint32_t i = 0; i < way->n; i++, x++) {
        if (way->col[i] < 0) continue;   /* a tag */
        const ecs__column *col = &dst->columns[way->col[i]];
        unsigned char *cell = col->data + (size_t)row * col->size;
        if (x->op == ECS__CMD_SET) {
            unsigned char *value = c->data + x->value;
            const ecs__idinfo *in = &w->reg.ids[x->id];
            if (in->entity_field_count && f) ecs__fields_batch(w, c, in, value, f);
            else if (in->entity_field_count) ecs__fields_live(c, in, value);
            ecs__cell_copy(cell, value, col->size);
        } else {
            ecs__cell_zero(cell, col->size);
        }
    }
}

/* Applies the spawn run of len commands at k (ids: its ids), on the way kept
   in sp when it is the same. False (nothing changed) if a table on its way
   is locked or has hooks: the caller goes one by one, which fails or fires
   exactly where it would. */
static bool ecs__spawn_apply(ecs_world *w, ecs_commands *c, uint32_t k, uint32_t len, const ecs_id *ids,
                             ecs__spawn *sp, ecs_result *res) {
    static const char fn[] = "ecs_commands_apply";
    const uint32_t n = len - 1;
    *res = ECS_OK;
    if ((sp->next != k || sp->way.n != n || memcmp(sp->way.ids, ids, n * sizeof *ids)) &&
        (!ecs__spawn_way(w, &sp->way, ids, n, res) || *res))
        return *res != ECS_OK;
    sp->next = k + len;
    ecs__table *const *path = sp->way.path;
    for (uint32_t i = 0; i <= n; i++)
        if (!ecs__table_reserve(w, path[i], (size_t)path[i]->count + 1)) { *res = ECS__OOM(w, fn); return true; }
    if (!ecs__slots_reserve(w, 1)) { *res = ECS__OOM(w, fn); return true; }
    ecs__table *dst = path[n];   /* nothing fails from here */
    const uint32_t slot = ecs__slot_take(w), row = dst->count++;
    ecs__record *r = &w->ent.records[slot];
    const ecs_entity made = ecs__handle(slot, r->gen);
    c->created[ecs__pending_index(c->cmds[k].e)] = made;
    r->table = dst->index;
    r->row = row;
    dst->entities[row] = made;
    w->ent.alive++;
    for (uint32_t i = 0; i <= n && w->chg.on; i++) ecs__stamp_rows_on(w, path[i], i < n ? path[i]->count : row, 1);
    ecs__spawn_values(w, c, c->cmds + k + 1, &sp->way, row, NULL);
    return true;
}

/* One command (its target and values resolved against c's creates). A
   dead target drops it. */
static ecs_result ecs__cmd_apply(ecs_world *w, ecs_commands *c, const ecs__cmd *cmd) {
    static const char fn[] = "ecs_commands_apply";
    ecs_entity e = cmd->e;
    if (cmd->op == ECS__CMD_CREATE && !(e & ECS__PENDING))   /* reserved in defer mode (id: a prefab's tag) */
        return ecs__place(w, fn, ecs__index(e), cmd->id == ECS__PREFAB);
    if (cmd->op == ECS__CMD_INSTANTIATE) return ecs__cmd_instantiate_apply(w, c, cmd);
    if (cmd->op == ECS__CMD_CREATE) {
        ecs_entity made = ecs__create(w, fn, false);
        if (!made) return ecs__locked(w, w->tab.tables[0]) ? ECS_ERR_BUSY : ECS_ERR_NOMEM;
        c->created[ecs__pending_index(e)] = made;
        return ECS_OK;
    }
    if (e & ECS__PENDING) e = c->created[ecs__pending_index(e)];
    if (!ecs__alive(w, e)) { w->cmd.dropped++; return ECS_OK; }
    switch (cmd->op) {
    case ECS__CMD_PARENT: {
        ecs_entity parent;
        memcpy(&parent, c->data + cmd->value, sizeof parent);
        if (parent & ECS__PENDING) parent = c->created[ecs__pending_index(parent)];
        if (parent && !ecs__alive(w, parent)) { w->cmd.dropped++; return ECS_OK; }   /* a dead parent */
        ecs_result r = ecs__set_parent(w, fn, e, parent);
        if (r == ECS_ERR_ARG) { w->cmd.dropped++; r = ECS_OK; }   /* a loop */
        return r;
    }
    case ECS__CMD_DESTROY: return ecs__destroy(w, fn, e);
    case ECS__CMD_ADD:     return ecs__add(w, fn, e, cmd->id, NULL);
    case ECS__CMD_REMOVE:  return ecs__remove(w, fn, e, cmd->id);
    case ECS__CMD_SET: {
        unsigned char *value = c->data + cmd->value;
        ecs__fields_live(c, &w->reg.ids[cmd->id], value);   /* pending -> live */
        return ecs__add(w, fn, e, cmd->id, value);
    }
    default:
        ECS_ASSERT(!"unknown command");
        return ECS_OK;
    }
}

/* The spawn run at command k applied, if there is one: its length (0: go
   one by one), or ECS__NONE with *r set if it failed (out of line: the
   other commands' loop stays lean). */
ECS__NOINLINE uint32_t ecs__spawn_try(ecs_world *w, ecs_commands *c, uint32_t k, ecs__spawn *sp, ecs_result *r) {
    ecs_id ids[ECS__SPAWN_MAX];
    const uint32_t run = ecs__spawn_run(w, c, k, ids);
    if (!run || !ecs__spawn_apply(w, c, k, run, ids, sp, r)) return 0;
    return *r ? ECS__NONE : run;
}

/* A buffer whose commands are all applied: its events staged, and empty. */
static void ecs__commands_done(ecs_world *w, ecs_commands *c) {
    if (c->ev_count) ecs__events_stage(w, c);
    ecs__commands_clear(c);
}

/* Applies from where the last call stopped. NOMEM or BUSY stops there with
   the rest kept for the next call. A held value is destroyed once its
   command is done (applied, or dropped). */
static ecs_result ecs__commands_apply(ecs_world *w, ecs_commands *c) {
    ecs_result r = ECS_OK;
    const bool owning = c->owning;   /* nothing records into c while it applies */
    c->applying = true;
    ecs__spawn sp;
    sp.way.n = 0;
    sp.next = ECS__NONE;
    for (; c->applied < c->count; c->applied++) {
        const ecs__cmd *cmd = &c->cmds[c->applied];
        if (cmd->op == ECS__CMD_CREATE) {
            const uint32_t run = ecs__spawn_try(w, c, c->applied, &sp, &r);
            if (run == ECS__NONE) break;
            if (run) { c->applied += run - 1; continue; }
        }
        if ((r = ecs__cmd_apply(w, c, cmd))) break;
        if (owning && ecs__cmd_owns(w, c, c->applied)) {
            const ecs__idinfo *in = &w->reg.ids[cmd->id];
            ecs__destruct(in, c->data + cmd->value, 1);
        }
        if (w->hk.hook_buf && w->hk.hook_buf->count && !w->hk.flushing) {   /* right after the change */
            c->applied++;
            r = ecs__hooks_flush(w);
            c->applied--;
            if (r) { c->applied++; break; }
        }
    }
    c->applying = false;
    if (!r) ecs__commands_done(w, c);
    return r;
}

/* Applies what hooks recorded, right after the change that ran them (the
   changes those make in turn come after the whole batch). A failure keeps
   the rest for the next call. */
static ecs_result ecs__hooks_flush(ecs_world *w) {
    if (!w->hk.hook_buf || w->hk.flushing || w->hk.hook_depth) return ECS_OK;
    ecs_result r = ECS_OK;
    w->hk.flushing = true;
    for (;;) {
        if (w->hk.hook_drain->applied < w->hk.hook_drain->count) {
            if ((r = ecs__commands_apply(w, w->hk.hook_drain))) break;
            continue;
        }
        if (!w->hk.hook_buf->count) break;
        ecs_commands *t = w->hk.hook_buf;
        w->hk.hook_buf = w->hk.hook_drain;
        w->hk.hook_drain = t;
    }
    w->hk.flushing = false;
    return r;
}

ECS_API ecs_commands *ecs_commands_new(ecs_world *w) {
    if (!w || ecs__check_running(w, "ecs_commands_new")) return NULL;
    ecs_commands *c = NULL;
    if (!ECS__RESERVE(w, w->cmd.buffers, w->cmd.buffer_cap, (size_t)w->cmd.buffer_count + 1) ||
        !(c = ecs__commands_new(w))) {
        ECS__OOM(w, "ecs_commands_new");
        return NULL;
    }
    c->slot = w->cmd.buffer_count;
    w->cmd.buffers[w->cmd.buffer_count++] = c;
    return c;
}

ECS_API void ecs_commands_free(ecs_commands *c) {
    if (!c || c->slot == ECS__NONE) return;   /* the world's own buffers */
    if (ecs__check_running(c->world, "ecs_commands_free")) return;
    if (c->applying) { ecs__busy_applying(c->world, "ecs_commands_free"); return; }
    ecs_world *w = c->world;
    ecs_commands *last = w->cmd.buffers[--w->cmd.buffer_count];
    w->cmd.buffers[c->slot] = last;
    last->slot = c->slot;
    ecs__buffer_free(w, c);
}

ECS_API ecs_result ecs_commands_apply(ecs_world *w, ecs_commands *c) {
    if (!w) return ECS_ERR_ARG;
    if (!c || c->world != w)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_commands_apply: the buffer is NULL or of another world");
    if (w->cmd.defer_depth)
        return ecs__fail(w, ECS_ERR_BUSY, "ecs_commands_apply: not allowed in defer mode");
    if (c->applying) return ecs__busy_applying(w, "ecs_commands_apply");
    if (ecs__check_running(w, "ecs_commands_apply")) return ECS_ERR_BUSY;
    return ecs__commands_apply(w, c);
}

ECS_API size_t ecs_commands_dropped(const ecs_world *w) { return w ? w->cmd.dropped : 0; }

ECS_API ecs_result ecs_defer_begin(ecs_world *w) {
    if (!w) return ECS_ERR_ARG;
    if (ecs__check_running(w, "ecs_defer_begin")) return ECS_ERR_BUSY;
    if (!w->cmd.defer && !(w->cmd.defer = ecs__commands_new(w))) return ECS__OOM(w, "ecs_defer_begin");
    w->cmd.defer_depth++;
    w->deferring++;
    return ECS_OK;
}

ECS_API ecs_result ecs_defer_end(ecs_world *w) {
    if (!w) return ECS_ERR_ARG;
    if (ecs__check_running(w, "ecs_defer_end")) return ECS_ERR_BUSY;
    if (w->cmd.defer_depth == 0) {
        if (w->cmd.defer && w->cmd.defer->applied < w->cmd.defer->count)   /* retry a failed apply */
            return ecs__commands_apply(w, w->cmd.defer);
        return ecs__fail(w, ECS_ERR_ARG, "ecs_defer_end: not in defer mode");
    }
    w->deferring--;
    if (--w->cmd.defer_depth) return ECS_OK;
    return ecs__commands_apply(w, w->cmd.defer);
}

static void ecs__batch_free(ecs_world *w);

/* The user's buffers (unapplied commands dropped), defer mode's, and the
   split apply's pieces (>>sync). */
static void ecs__commands_fini(ecs_world *w) {
    for (uint32_t i = w->cmd.buffer_count; i-- > 0;) ecs__buffer_free(w, w->cmd.buffers[i]);
    ecs__free(w, w->cmd.buffers);
    if (w->cmd.defer) ecs__buffer_free(w, w->cmd.defer);
    ecs__batch_free(w);
}

/* ---- >>events: events between systems ------------------------------------- */
/* A system emits into the command buffer of its chunk (it->commands), an
   array per event type: nothing is shared while systems run. At a sync
   point ecs__events_reserve first makes room in every log that will
   receive events (the only step that can fail, before anything applies);
   each buffer's events move to their logs right after its commands apply
   (its pending handles resolve then); ecs__events_deliver runs the
   observers on the staged events and makes them readable. Readers hold a
   window per type, as event numbers: the log keeps what its slowest reader
   has not seen, which is at most ECS_EVENT_BACKLOG for one that skips. */

static bool ecs__log_add(ecs_world *w) {   /* room for one more log (ecs__register) */
    return ECS__RESERVE(w, w->ev.logs, w->ev.log_cap, (size_t)w->ev.log_count + 1);
}

static bool ecs__is_event(const ecs_world *w, ecs_id id) { return ecs__id_valid(w, id) && w->reg.ids[id].event; }

ECS__COLD ecs_result ecs__bad_event(const ecs_world *w, const char *fn, ecs_id id) {
    if (!ecs__id_valid(w, id)) return ecs__fail(w, ECS_ERR_ARG, "%s: id %u is not registered", fn, (unsigned)id);
    return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is not an event type (ecs_event_init makes one)", fn,
                     w->reg.ids[id].name);
}

ECS_API ecs_id ecs_event_init(ecs_world *w, const ecs_event_desc *d) {
    static const char fn[] = "ecs_event_init";
    if (!w) return 0;
    if (!d) { ecs__fail(w, ECS_ERR_ARG, "%s: desc is NULL", fn); return 0; }
    const char *name = d->name ? d->name : "";
    if (ecs__value_desc_bad(w, fn, name, d->size, d->serialize != NULL, d->deserialize != NULL,
                            d->entity_fields, d->entity_field_count))
        return 0;
    ecs_id known = d->name ? ecs__id_find(w, d->name) : 0;
    if (known && w->reg.ids[known].event) {
        const ecs__idinfo *in = &w->reg.ids[known];
        bool same = in->serialize == d->serialize && in->deserialize == d->deserialize && in->ctx == d->ctx &&
                    in->entity_field_count == d->entity_field_count;
        for (int k = 0; same && k < d->entity_field_count; k++) same = in->entity_fields[k] == d->entity_fields[k];
        if (!same) {
            ecs__fail(w, ECS_ERR_ARG, "%s: event type \"%s\" is already registered with another desc", fn, name);
            return 0;
        }
    }
    ecs_id id = ecs__register(w, fn, d->name, d->size, d->align, ECS__KIND_EVENT, NULL);
    if (!id || known) return id;
    ecs__idinfo *in = &w->reg.ids[id];
    in->serialize = d->serialize;
    in->deserialize = d->deserialize;
    in->ctx = d->ctx;
    in->entity_field_count = d->entity_field_count;
    for (int k = 0; k < d->entity_field_count; k++) in->entity_fields[k] = (uint32_t)d->entity_fields[k];
    return id;
}

ECS_API ecs_id ecs_event(ecs_world *w, const char *name, size_t size, size_t align) {
    ecs_event_desc d;
    memset(&d, 0, sizeof d);
    d.name = name; d.size = size; d.align = align;
    return ecs_event_init(w, &d);
}

/* Room for one more event of in's type in c: its payload's place (NULL
   with *r set when it cannot grow; for a type of size 0, any non-NULL
   pointer). The common case, the type of the buffer's latest emit with
   room, is a few loads and a store; the rest is out of line. */
/* An emitter's room [next, end) counts once it is closed: by the sync
   point (which also ends the emitter's turn), or by another emit of its
   type in the batch, which goes after the events made so far. */
static void ecs__emitter_close(ecs__evbuf *b, bool turn_ends) {
    ecs_emitter *em = b->em;
    if (!em) return;
    if (em->next) b->count = (uint32_t)((size_t)(em->next - b->data) / b->size);
    em->next = em->end = NULL;
    if (turn_ends) em->live = false;
}

/* c's array of events of type log (closed), with room for n of them (made
   or grown to a power of two); NULL when memory runs out. */
static ecs__evbuf *ecs__evbuf_room(ecs_world *w, ecs_commands *c, uint32_t log, size_t n) {
    uint32_t k = 0, size = w->reg.ids[w->ev.logs[log].id].size;
    while (k < c->evb_count && c->evb[k].log != log) k++;
    if (k < c->evb_count) ecs__emitter_close(&c->evb[k], false);
    if (k == c->evb_count) {
        if (!ECS__RESERVE(w, c->evb, c->evb_cap, (size_t)c->evb_count + 1)) return NULL;
        memset(&c->evb[k], 0, sizeof c->evb[k]);
        c->evb[k].id = w->ev.logs[log].id;
        c->evb[k].log = log;
        c->evb[k].size = size;
        c->evb_count++;
    }
    ecs__evbuf *b = &c->evb[k];
    if (n > b->cap && size) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < n) cap *= 2;
        if (cap > UINT32_MAX || !ecs__column_grow(w, &b->raw, &b->data, b->count, size, cap)) return NULL;
        b->cap = (uint32_t)cap;
    }
    return b;
}

ECS__NOINLINE unsigned char *ecs__emit_grow(ecs_world *w, ecs_commands *c, const char *fn, const ecs__idinfo *in,
                                            ecs_result *r) {
    const uint32_t log = in->event - 1, size = in->size;
    ecs__evbuf *b = ecs__evbuf_room(w, c, log, 0);   /* (found, or made without room) */
    size_t n = (b ? (size_t)b->count : 0) + 1;
    if ((size && n * size + 64 > ECS__CMD_DATA_MAX) || n > UINT32_MAX) {
        *r = ecs__fail(w, ECS_ERR_ARG, "%s: a buffer holds at most 2 GiB (and 2^32 - 1) events of a type", fn);
        return NULL;
    }
    if (b) b = ecs__evbuf_room(w, c, log, n);
    if (!b) {
        *r = ecs__cmd_oom(w, fn);
        return NULL;
    }
    c->evb_last = (uint32_t)(b - c->evb);
    c->ev_count = 1;
    return size ? b->data + (size_t)size * b->count++ : (b->count++, (unsigned char *)b);
}

ECS__HOT unsigned char *ecs__emit_slot(ecs_world *w, ecs_commands *c, const char *fn, const ecs__idinfo *in,
                                      ecs_result *r) {
    if (ECS__UNLIKELY(c->evb_last >= c->evb_count)) return ecs__emit_grow(w, c, fn, in, r);
    ecs__evbuf *b = c->evb + c->evb_last;
    if (ECS__UNLIKELY(b->log != in->event - 1 || b->count == b->cap || !in->size))
        return ecs__emit_grow(w, c, fn, in, r);
    c->ev_count = 1;
    return b->data + (size_t)in->size * b->count++;
}

/* A payload the caller usually built field by field just before, copied
   in 4-byte words: one wide load over narrower stores cannot take their
   values from the store buffer and waits for them (measured: 10.4 ns an
   emit with a 16-byte copy, 5.7 with words). Common sizes unrolled. */
#define ECS__WORD(k) do { uint32_t x_; memcpy(&x_, from + (k), 4); memcpy(to + (k), &x_, 4); } while (0)
ECS__HOT void ecs__payload_copy(unsigned char *to, const unsigned char *from, uint32_t size) {
    switch (size) {
    case 4: ECS__WORD(0); return;
    case 8: ECS__WORD(0); ECS__WORD(4); return;
    case 12: ECS__WORD(0); ECS__WORD(4); ECS__WORD(8); return;
    case 16: ECS__WORD(0); ECS__WORD(4); ECS__WORD(8); ECS__WORD(12); return;
    default:
        if (size & 3) { memcpy(to, from, size); return; }
        for (uint32_t i = 0; i < size; i += 4) ECS__WORD(i);
    }
}
#undef ECS__WORD

/* ecs_emit and ecs_world_emit's full path. */
ECS__HOT ecs_result ecs__emit_into(ecs_world *w, ecs_commands *c, const char *fn, const ecs__idinfo *in,
                                   const void *payload) {
    ecs_result r = ECS_OK;
    unsigned char *to = ecs__emit_slot(w, c, fn, in, &r);
    if (ECS__UNLIKELY(!to)) return r;
    ecs__payload_copy(to, (const unsigned char *)payload, in->size);
    return ECS_OK;
}

static bool ecs__emits(const ecs__system *s, ecs_id event) {
    for (int k = 0; k < ECS_MAX_TERMS && s->emits[k]; k++)
        if (s->emits[k] == event) return true;
    return false;
}

/* ecs_emit's and ecs_emit_new's checks: the type, inside a system, declared. */
ECS__HOT ecs_result ecs__emit_check(const ecs_iter *it, ecs_id event, const char *fn) {
    if (!it || !it->world) return ECS_ERR_ARG;
    ecs_world *w = it->world;
    if (ECS__UNLIKELY(!ecs__is_event(w, event))) return ecs__bad_event(w, fn, event);
    if (ECS__UNLIKELY(!it->system || it->system > w->sys.system_count || !it->commands ||
                      w->sched.phase == ECS__IDLE))
        return ecs__fail(w, ECS_ERR_ARG, "%s: not inside a system (between frames and in observers, "
                         "ecs_world_emit)", fn);
#if ECS_CHECK_ACCESS
    const ecs__system *s = &w->sys.systems[it->system - 1];
    if (!ecs__emits(s, event))
        return ecs__refuse(w, "%s: system \"%s\" did not declare that it emits \"%s\"; add it to its emits",
                           fn, s->name, w->reg.ids[event].name);
#endif
    return ECS_OK;
}

/* The fast path of a run of emits: a system's batch, whose buffer's latest
   emit was of this type (checked then), with at least one event and room
   for another (the first of a frame takes the full path, which marks the
   buffer as holding events). */
ECS__HOT ecs__evbuf *ecs__emit_fast(const ecs_iter *it, ecs_id event) {
    ecs_commands *c = it ? it->commands : NULL;
    if (ECS__UNLIKELY(!c || !it->system || it->world->sched.phase == ECS__IDLE || c->evb_last >= c->evb_count))
        return NULL;
    ecs__evbuf *b = c->evb + c->evb_last;
    return b->id == event && b->size && b->count - 1u < b->cap - 1u ? b : NULL;   /* (size 0: the full path) */
}

ECS__NOINLINE ecs_result ecs__emit_slow(ecs_iter *it, ecs_id event, const void *payload) {
    static const char fn[] = "ecs_emit";
    ecs_result r = ecs__emit_check(it, event, fn);
    if (r) return r;
    const ecs__idinfo *in = &it->world->reg.ids[event];
    if (!payload && in->size)
        return ecs__fail(it->world, ECS_ERR_ARG, "%s: payload is NULL for event \"%s\"", fn, in->name);
    return ecs__emit_into(it->world, it->commands, fn, in, payload);
}

ECS_API ecs_result ecs_emit(ecs_iter *it, ecs_id event, const void *payload) {
    ecs__evbuf *b = ecs__emit_fast(it, event);
    if (ECS__UNLIKELY(!b || !payload)) return ecs__emit_slow(it, event, payload);
    const uint32_t size = b->size;
    ecs__payload_copy(b->data + (size_t)size * b->count++, (const unsigned char *)payload, size);
    return ECS_OK;
}

ECS_API void *ecs_emit_new(ecs_iter *it, ecs_id event, size_t size) {
    static const char fn[] = "ecs_emit_new";
    ecs__evbuf *b = ecs__emit_fast(it, event);
    if (b && size == b->size) {
        unsigned char *slot = b->data + (size_t)b->size * b->count++;
        memset(slot, 0, size);
        return slot;
    }
    if (ecs__emit_check(it, event, fn)) return NULL;
    ecs_world *w = it->world;
    const ecs__idinfo *in = &w->reg.ids[event];
    if (ECS__UNLIKELY(size != in->size)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: event \"%s\" has %u bytes, not %zu", fn, in->name, (unsigned)in->size, size);
        return NULL;
    }
    ecs_result r;
    unsigned char *slot = ecs__emit_slot(w, it->commands, fn, in, &r);
    if (slot && size) memset(slot, 0, size);
    return slot;   /* (size 0: a non-NULL place to write nothing) */
}

ECS_API ecs_emitter *ecs_emitter_get(ecs_iter *it, ecs_id event, size_t size) {
    static const char fn[] = "ecs_emitter_get";
    if (ecs__emit_check(it, event, fn)) return NULL;
    ecs_world *w = it->world;
    ecs_commands *c = it->commands;
    const ecs__idinfo *in = &w->reg.ids[event];
    if (size != in->size) {
        ecs__fail(w, ECS_ERR_ARG, "%s: event \"%s\" has %u bytes, not %zu", fn, in->name, (unsigned)in->size, size);
        return NULL;
    }
    ecs__evbuf *b = ecs__evbuf_room(w, c, in->event - 1, 0);
    if (b && !b->em && (b->em = (ecs_emitter *)ecs__alloc(w, sizeof *b->em)) != NULL) {
        memset(b->em, 0, sizeof *b->em);
        b->em->size = size;
        b->em->world = w;
        b->em->buf = (uint32_t)(b - c->evb);
    }
    if (!b || !b->em) {
        ecs__cmd_oom(w, fn);
        return NULL;
    }
    b->em->commands = c;
    b->em->live = true;
    c->ev_count = 1;   /* the sync point ends its turn even if it makes nothing */
    return b->em;
}

/* Closes the emitter's room, makes one event the full way (zeroed, as
   ecs_emit_new), and hands out the buffer's free room after it (zeroed a
   slot at a time by ecs_emitter_next: zeroing blocks ahead of it cost
   +1.3 ns an event at 1M, a second pass over memory). Another emit path
   must not use the buffer's count while room is out: the latest-emit
   shortcut is cleared, so they close it first (ecs__evbuf_room). */
ECS_API void *ecs_emitter_more(ecs_emitter *em, size_t size) {
    static const char fn[] = "ecs_emitter_next";
    if (!em) return NULL;
    ecs_world *w = em->world;
    if (!em->live || w->sched.phase == ECS__IDLE) {
        ecs__fail(w, ECS_ERR_ARG, "%s: the emitter is used after its batch (get it with ecs_emitter_get in "
                  "each batch)", fn);
        return NULL;
    }
    ecs_commands *c = em->commands;   /* (live: got this turn, since when its system's buffers stay put) */
    if (size != em->size) {
        ecs__fail(w, ECS_ERR_ARG, "%s: event \"%s\" has %zu bytes, not %zu", fn,
                  w->reg.ids[c->evb[em->buf].id].name, em->size, size);
        return NULL;
    }
    ecs__emitter_close(&c->evb[em->buf], false);
    c->evb_last = em->buf;   /* (closed: the shortcut may use its count) */
    ecs_result r;
    unsigned char *slot = ecs__emit_slot(w, c, fn, &w->reg.ids[c->evb[em->buf].id], &r);
    if (!slot || !size) return slot;   /* (size 0: every event the full way) */
    const ecs__evbuf *b = &c->evb[em->buf];
    memset(slot, 0, size);
    em->next = slot + size;
    em->end = em->next + (size_t)(b->cap - b->count) * size;
    c->evb_last = UINT32_MAX;
    return slot;
}

ECS_API ecs_result ecs_world_emit(ecs_world *w, ecs_id event, const void *payload) {
    static const char fn[] = "ecs_world_emit";
    if (!w) return ECS_ERR_ARG;
    if (!ecs__is_event(w, event)) return ecs__bad_event(w, fn, event);
    const ecs__idinfo *in = &w->reg.ids[event];
    if (w->sched.phase != ECS__IDLE && !w->ev.observing)
        return ecs__fail(w, ECS_ERR_BUSY, "%s: only between frames and in observers; a system emits with "
                         "ecs_emit(it, ...) and declares the type in its emits", fn);
    if (!payload && in->size) return ecs__fail(w, ECS_ERR_ARG, "%s: payload is NULL for event \"%s\"", fn, in->name);
    if (!w->ev.waiting && !(w->ev.waiting = ecs__commands_new(w))) return ECS__OOM(w, fn);
    return ecs__emit_into(w, w->ev.waiting, fn, in, payload);
}

/* s's window on log (one per type it reads), or NULL. */
static ecs__window *ecs__window_of(const ecs__system *s, uint32_t log) {
    for (uint32_t k = 0; k < s->win_count; k++)
        if (s->win[k].log == log) return &s->win[k];
    return NULL;
}

static const void *ecs__events_of(const ecs_iter *it, ecs_id event, size_t size, bool sized, int *count,
                                  const char *fn) {
    if (count) *count = 0;
    if (!it || !it->world) return NULL;
    ecs_world *w = it->world;
    if (!ecs__is_event(w, event)) { ecs__bad_event(w, fn, event); return NULL; }
    if (!it->system || it->system > w->sys.system_count || w->sched.phase == ECS__IDLE) {
        ecs__fail(w, ECS_ERR_ARG, "%s: not inside a system (observers are handed their events)", fn);
        return NULL;
    }
    const ecs__system *s = &w->sys.systems[it->system - 1];
    const ecs__idinfo *in = &w->reg.ids[event];
    const ecs__window *win = ecs__window_of(s, in->event - 1);
    if (!win) {
        ecs__refuse(w, "%s: system \"%s\" did not declare that it reads event \"%s\"; add it to its reads",
                    fn, s->name, in->name);
        return NULL;
    }
    if (sized && size != in->size) {
        ecs__refuse(w, "%s: system \"%s\" reads event \"%s\" (%u bytes) as a %zu-byte type", fn, s->name,
                    in->name, (unsigned)in->size, size);
        return NULL;
    }
    if (win->hi == win->lo) return NULL;
    const ecs__evlog *L = &w->ev.logs[win->log];
    if (count) *count = (int)(win->hi - win->lo);
    return L->data + (size_t)(win->lo - L->base) * in->size;
}

ECS_API const void *ecs_events(const ecs_iter *it, ecs_id event, int *count) {
    return ecs__events_of(it, event, 0, false, count, "ecs_events");
}

ECS_API const void *ecs_events_sized(const ecs_iter *it, ecs_id event, size_t size, int *count) {
    return ecs__events_of(it, event, size, true, count, "ecs_events_sized");
}

/* ---- windows: what each reading system sees ---- */

/* System si (just registered) reads the event types in its reads: a window
   on each, starting at what is delivered from now on. */
static bool ecs__windows_make(ecs_world *w, ecs__system *s, uint32_t si) {
    uint32_t n = 0;   /* (an event type listed twice: one window) */
    for (int k = 0; k < ECS_MAX_TERMS && s->reads[k]; k++) n += ecs__is_event(w, s->reads[k]);
    if (!n) return true;
    if (!(s->win = (ecs__window *)ecs__alloc(w, n * sizeof *s->win))) return false;
    for (int k = 0; k < ECS_MAX_TERMS && s->reads[k]; k++) {
        if (!ecs__is_event(w, s->reads[k])) continue;
        ecs__evlog *L = &w->ev.logs[w->reg.ids[s->reads[k]].event - 1];
        if (!ECS__RESERVE(w, L->readers, L->reader_cap, (size_t)L->reader_count + 1)) return false;
    }
    for (int k = 0; k < ECS_MAX_TERMS && s->reads[k]; k++) {
        if (!ecs__is_event(w, s->reads[k])) continue;
        uint32_t log = w->reg.ids[s->reads[k]].event - 1;
        if (ecs__window_of(s, log)) continue;   /* listed twice */
        ecs__evlog *L = &w->ev.logs[log];
        ecs__window *win = &s->win[s->win_count++];
        memset(win, 0, sizeof *win);
        win->log = log;
        win->cursor = win->lo = win->hi = L->end;
        L->readers[L->reader_count++] = si;
    }
    s->reads_events = true;
    w->sys.stages[s->stage].readers++;
    return true;
}

/* s runs this turn: each window becomes what was delivered since its last run. */
static void ecs__windows_take(ecs_world *w, ecs__system *s) {
    for (uint32_t k = 0; k < s->win_count; k++) {
        ecs__window *win = &s->win[k];
        win->lo = win->cursor;
        win->hi = win->cursor = w->ev.logs[win->log].end;
    }
}

/* s's run is over: its windows hold nothing the log must keep. */
static void ecs__windows_done(ecs__system *s) {
    for (uint32_t k = 0; k < s->win_count; k++) s->win[k].lo = s->win[k].hi = s->win[k].cursor;
}

/* s does not run this turn: disabled, it drops what it would have read;
   skipped, it keeps at most ECS_EVENT_BACKLOG of each type. */
static void ecs__windows_skip(ecs_world *w, ecs__system *s, bool discard) {
    for (uint32_t k = 0; k < s->win_count; k++) {
        ecs__window *win = &s->win[k];
        uint64_t end = w->ev.logs[win->log].end;
        if (discard) win->cursor = end;
        else if (end - win->cursor > ECS_EVENT_BACKLOG) {
            win->dropped += end - win->cursor - ECS_EVENT_BACKLOG;
            win->cursor = end - ECS_EVENT_BACKLOG;
        }
        win->lo = win->hi = win->cursor;
    }
}

/* Stage st takes a turn (disabled readers drop), or does not (off: every
   reader drops; else they keep). Thread 0, between turns. */
static void ecs__stage_windows(ecs_world *w, uint32_t st, int how) {
    const ecs__stage_graph *sg = &w->graph.stages[st];
    for (uint32_t k = 0; k < sg->count; k++) {
        ecs__system *s = &w->sys.systems[w->graph.reg[sg->first + k]];
        if (!s->reads_events || (how == ECS__WIN_TURN && !(s->gate & ECS__GATE_OFF))) continue;
        ecs__windows_skip(w, s, how != ECS__WIN_KEEP || (s->gate & ECS__GATE_OFF));
    }
}

/* ---- delivery: at sync points, on thread 0 ---- */
static void ecs__log_trim(ecs_world *w, ecs__evlog *L);
static void ecs__trace_add(ecs_world *w, ecs__tctx *tc, uint32_t system, uint32_t chunk,
                           uint64_t start, uint64_t end);
/* Room in every log for what this sync point stages: ecs_world_emit's
   events (waiting, or NULL) and those of the stage's systems that ran
   (their emitters closed: their turn ends). Nothing applies if this fails. */
static ecs_result ecs__events_reserve(ecs_world *w, const ecs__stage_graph *sg, ecs_commands *waiting) {
    const uint32_t *order = w->graph.reg + sg->first;
    ecs_result r = ECS_OK;
    bool any = false;
    for (uint32_t l = 0; l < w->ev.log_count; l++) w->ev.logs[l].need = 0;   /* (left by a failed one) */
    for (uint32_t k = 0; k <= sg->count; k++) {
        ecs_commands *c = k < sg->count ? NULL : waiting;
        const ecs__system *s = k < sg->count ? &w->sys.systems[order[k]] : NULL;
        for (uint32_t b = 0, n = s ? (s->ran ? s->buf_count : 0) : (c != NULL); b < n; b++) {
            ecs_commands *from = s ? &s->bufs[b] : c;
            for (uint32_t e = 0; from->ev_count && e < from->evb_count; e++) {
                ecs__emitter_close(&from->evb[e], true);
                w->ev.logs[from->evb[e].log].need += from->evb[e].count;
            }
            any |= from->ev_count > 0;
        }
    }
    for (uint32_t l = 0; any && l < w->ev.log_count; l++) {
        ecs__evlog *L = &w->ev.logs[l];
        if (L->need) ecs__log_trim(w, L);   /* what was read since the last sync point goes first */
        size_t need = (size_t)L->count + L->need, size = w->reg.ids[L->id].size;
        if (need <= L->cap && L->data) continue;
        size_t cap = L->cap ? L->cap : 64;
        while (cap < need) cap *= 2;
        if (r || cap > UINT32_MAX || !ecs__column_grow(w, &L->raw, &L->data, L->count, size ? size : 1, cap)) {
            r = ECS_ERR_NOMEM;
            continue;
        }
        L->cap = (uint32_t)cap;
    }
    return r ? ECS__OOM(w, "ecs_progress") : ECS_OK;
}

/* Right after c's commands applied: its events join their logs' staged
   ends, a copy per type, or the array itself when it holds all of its
   type's at this point (ecs__events_reserve made the room). */
static void ecs__events_stage(ecs_world *w, ecs_commands *c) {
    for (uint32_t k = 0; k < c->evb_count; k++) {
        ecs__evbuf *b = &c->evb[k];
        if (!b->count) continue;
        ecs__evlog *L = &w->ev.logs[b->log];
        const ecs__idinfo *in = &w->reg.ids[L->id];
        ECS_ASSERT((size_t)L->count + b->count <= L->cap && b->count <= L->need);
        if (!L->count && b->count == L->need && in->size) {   /* all of this point's: no copy, the */
            unsigned char *data = L->data;                     /* arrays change hands */
            void *raw = L->raw;
            uint32_t cap = L->cap;
            L->data = b->data; L->raw = b->raw; L->cap = b->cap;
            b->data = data; b->raw = raw; b->cap = cap;
        } else if (in->size) {
            memcpy(L->data + (size_t)L->count * in->size, b->data, (size_t)b->count * in->size);
        }
        unsigned char *to = L->data + (size_t)L->count * in->size;
        for (uint32_t e = 0; in->entity_field_count && e < b->count; e++) ecs__fields_live(c, in, to + (size_t)e * in->size);
        L->count += b->count;
        L->need -= b->count;
        b->count = 0;
    }
    c->ev_count = 0;
    w->ev.staged = true;
}

/* Drops what every reader of L has seen (moving the rest down only once
   it is at most half of the array: the cost stays linear). */
static void ecs__log_trim(ecs_world *w, ecs__evlog *L) {
    uint64_t keep = L->end;
    uint32_t log = (uint32_t)(L - w->ev.logs);
    for (uint32_t r = 0; r < L->reader_count; r++) {   /* lo: a run in progress still reads from there */
        const ecs__window *win = ecs__window_of(&w->sys.systems[L->readers[r]], log);
        if (win->lo < keep) keep = win->lo;
    }
    uint64_t dead = keep - L->base;
    size_t size = w->reg.ids[L->id].size;
    if (!dead || (dead < L->count && dead * 2 < L->count)) return;
    if (dead < L->count && size) memmove(L->data, L->data + dead * size, (size_t)(L->count - dead) * size);
    L->count -= (uint32_t)dead;
    L->base = keep;
}

/* The staged events: to the observers (thread 0, registration order, each
   once with all of its type; its structural calls applied right after it),
   then readable. Observers' failures to apply are reported; delivery goes
   on, so nothing is observed twice. */
static ecs_result ecs__events_deliver(ecs_world *w) {
    ecs_result r = ECS_OK;
    int phase = w->sched.phase;
    w->sched.phase = ECS__SYNC;   /* the leftover sync point of ecs_progress runs IDLE */
    w->ev.staged = false;
    for (uint32_t o = 0; o < w->ev.observer_count; o++) {
        const ecs__observer *ob = &w->ev.observers[o];
        if (!ob->event || (ob->skip_resim && w->ev.resimulating)) continue;
        const ecs__idinfo *in = &w->reg.ids[ob->event];
        const ecs__evlog *L = &w->ev.logs[in->event - 1];
        uint64_t n = L->base + L->count - L->end;
        if (!n) continue;
        uint64_t t0 = w->stats.timing ? ecs__now_ns() : 0;
        w->ev.observing = o + 1;
        w->hk.hook_depth++;   /* structural calls wait in the hooks' buffer */
        w->deferring++;
        ob->fn(w, ob->event, L->data + (size_t)(L->end - L->base) * in->size, (int)n, ob->ctx);
        w->deferring--;
        w->hk.hook_depth--;
        w->ev.observing = 0;
        ecs_result f = ecs__hooks_flush(w);
        if (f && !r) r = f;
        if (w->trace.tracing && t0) ecs__trace_add(w, &w->sched.tctx[0], ECS__EVENT_OBSERVER, o, t0, ecs__now_ns());
    }
    for (uint32_t l = 0; l < w->ev.log_count; l++) {   /* (the rest are trimmed before the next staging) */
        ecs__evlog *L = &w->ev.logs[l];
        L->end = L->base + L->count;
        if (!L->reader_count) L->base = L->end, L->count = 0;
    }
    w->sched.phase = phase;
    return r;
}

/* ---- observers ---- */
ECS_API ecs_observer ecs_observe(ecs_world *w, const ecs_observer_desc *d) {
    static const char fn[] = "ecs_observe";
    if (!w || ecs__check_idle(w, fn)) return 0;
    if (w->hk.hook_depth) { ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed inside a hook or observer", fn); return 0; }
    if (!d || !d->fn) { ecs__fail(w, ECS_ERR_ARG, "%s: %s", fn, d ? "fn is NULL" : "desc is NULL"); return 0; }
    if (!ecs__is_event(w, d->event)) { ecs__bad_event(w, fn, d->event); return 0; }
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < ECS_MAX_TERMS && (l ? d->writes : d->reads)[k]; k++) {
            ecs_id id = (l ? d->writes : d->reads)[k];
            if (!ecs__id_valid(w, id) || w->reg.ids[id].event) {
                ecs__fail(w, ECS_ERR_ARG, "%s: %s[%d] = %u is not a component or resource", fn,
                          l ? "writes" : "reads", k, (unsigned)id);
                return 0;
            }
        }
    uint32_t slot = w->ev.observer_count;   /* never reused: they run in registration order, and a
                                               stale handle names no other observer */
    if (slot == UINT32_MAX - 1) { ecs__fail(w, ECS_ERR_ARG, "%s: too many observers", fn); return 0; }
    if (!ECS__RESERVE(w, w->ev.observers, w->ev.observer_cap, (size_t)w->ev.observer_count + 1) ||
        !ecs__hook_bufs(w)) {
        ECS__OOM(w, fn);
        return 0;
    }
    w->ev.observer_count++;
    ecs__observer *ob = &w->ev.observers[slot];
    memset(ob, 0, sizeof *ob);
    ob->event = d->event;
    ob->fn = d->fn;
    ob->ctx = d->ctx;
    ob->skip_resim = d->skip_when_resimulating;
    for (int l = 0; l < 2; l++)   /* like a system's lists (ecs__system_declare), by ascending id */
        for (int k = 0; k < ECS_MAX_TERMS && (l ? d->writes : d->reads)[k]; k++)
            ecs__decl_put(ob->decl, &ob->decl_count, (l ? d->writes : d->reads)[k], l ? ECS__LR | ECS__LW : ECS__LR);
    return slot + 1;
}

ECS_API ecs_result ecs_unobserve(ecs_world *w, ecs_observer o) {
    if (!w) return ECS_ERR_ARG;
    if (ecs__check_idle(w, "ecs_unobserve")) return ECS_ERR_BUSY;
    if (w->hk.hook_depth) return ecs__fail(w, ECS_ERR_BUSY, "ecs_unobserve: not allowed inside a hook or observer");
    if (!o || o > w->ev.observer_count || !w->ev.observers[o - 1].event)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_unobserve: %u is not an observer", (unsigned)o);
    w->ev.observers[o - 1].event = 0;
    return ECS_OK;
}

ECS_API void ecs_world_set_resimulating(ecs_world *w, bool on) {
    if (w && !ecs__check_idle(w, "ecs_world_set_resimulating")) w->ev.resimulating = on;
}

ECS_API bool ecs_world_resimulating(const ecs_world *w) { return w && w->ev.resimulating; }

#if ECS_CHECK_ACCESS
/* Observer access: what it declared, as a system's. A refusal is the
   frame's too (thread 0's, after any system's). */
static bool ecs__observer_access_ok(const ecs_world *cw, const char *fn, ecs_id id, bool write) {
    ecs_world *w = (ecs_world *)cw;
    const ecs__observer *ob = &w->ev.observers[w->ev.observing - 1];
    uint32_t how = 0;
    for (uint32_t i = 0; i < ob->decl_count; i++)
        if (ob->decl[i].id == id) how = ob->decl[i].how;
    if ((how & ECS__ACCESSES) && (!write || (how & ECS__WRITES))) return true;
    ecs__fail(w, ECS_ERR_ACCESS, "%s: observer %u (of \"%s\") did not declare %s access to \"%s\"; add it to "
              "its %s", fn, (unsigned)w->ev.observing, w->reg.ids[ob->event].name, write ? "write" : "read",
              w->reg.ids[id].name, write ? "writes" : "reads");
    ecs__tctx *tc = &w->sched.tctx[0];
    if (!tc->refused) {
        tc->refused = UINT32_MAX;
        ecs__msg_set(w, &tc->refusal, "%s", ecs__msg_text(&w->error));
    }
    return false;
}
#endif

static void ecs__events_fini(ecs_world *w) {
    for (uint32_t l = 0; l < w->ev.log_count; l++) {
        ecs__free(w, w->ev.logs[l].raw);
        ecs__free(w, w->ev.logs[l].readers);
    }
    ecs__free(w, w->ev.logs);
    ecs__free(w, w->ev.observers);
    if (w->ev.waiting) ecs__buffer_free(w, w->ev.waiting);
}

/* ---- >>sync: sync points, and their work shared by the threads ---------- */
/* A sync point applies the command buffers of the systems that ran, in
   registration and chunk order, and delivers their events. Thread 0 owns
   it; when it has enough commands, the workers (idle at a sync point) take
   pieces of the work it shares (jobs), with the serial result. */

#ifndef ECS_SPLIT_MIN        /* a sync point with fewer commands applies them on thread 0
                                (a sixteenth of it when no worker sleeps) */
#  define ECS_SPLIT_MIN 4096
#endif

/* ---- jobs: a sync point's work shared by the threads ---- */
/* Takes pieces of the posted job until none is left; its thread time is
   counted in timed frames (and traced, per thread). */
static void ecs__job_take(ecs_world *w, ecs__tctx *tc) {
    const uint64_t t0 = w->stats.timing ? ecs__now_ns() : 0;
    uint32_t took = 0;
    while (ecs__load(&w->sched.job_left) > 0) {
        const int32_t p = ecs__sub_fetch(&w->sched.job_left, 1);
        if (p < 0) break;
        w->sched.job_fn(w, tc, (uint32_t)p);
        took++;
        ECS__HAPPENS_BEFORE(&w->sched.job_done);
        (void)ecs__add_fetch(&w->sched.job_done, 1);
    }
    if (!t0 || !took) return;
    const uint64_t t1 = ecs__now_ns();
    (void)ecs__add_fetch(&w->sched.job_work, t1 - t0);
    if (w->trace.tracing) ecs__trace_add(w, tc, ECS__EVENT_SPLIT, took, t0, t1);
}

#if ECS__THREADS
static void ecs__wake(ecs_world *w, bool shared);

/* A worker with nothing queued helps with the posted job, if any. */
static bool ecs__job_join(ecs_world *w, ecs__tctx *tc) {
    if (!ecs__load_relaxed(&w->sched.job_on) || ecs__load_relaxed(&w->sched.job_left) <= 0) return false;
    (void)ecs__add_fetch_sc(&w->sched.job_users, 1);   /* thread 0 ends the job only once none reads it */
    if (ecs__load_sc(&w->sched.job_on)) {
        ECS__HAPPENS_AFTER(&w->sched.job_on);
        ecs__job_take(w, tc);
    }
    ECS__HAPPENS_BEFORE(&w->sched.job_users);
    (void)ecs__sub_fetch_sc(&w->sched.job_users, 1);
    return true;
}
#endif

/* Runs pieces [0, n) of fn (they write disjoint memory), on thread 0 and
   every worker that is idle; returns once all are done. */
static void ecs__job_run(ecs_world *w, ecs__job_fn fn, uint32_t n) {
    const uint64_t t0 = w->stats.timing ? ecs__now_ns() : 0;
    w->sched.job_fn = fn;
    ecs__store(&w->sched.job_done, 0);
    ecs__store(&w->sched.job_left, (int32_t)n);
#if ECS__THREADS
    const bool shared = w->sched.workers > 0 && n > 1;
    if (shared) {
        ECS__HAPPENS_BEFORE(&w->sched.job_on);
        ecs__store_sc(&w->sched.job_on, 1);
        ecs__wake(w, true);
    }
#endif
    ecs__job_take(w, &w->sched.tctx[0]);
#if ECS__THREADS
    if (shared) {
        for (uint32_t i = 1; ecs__load(&w->sched.job_done) != n; i++) {
            if (!(i & 255)) ecs__yield();
            ECS__PAUSE();
        }
        ECS__HAPPENS_AFTER(&w->sched.job_done);
        ecs__store_sc(&w->sched.job_on, 0);
        for (uint32_t i = 1; ecs__load_sc(&w->sched.job_users); i++) {   /* (a worker between its checks) */
            if (!(i & 255)) ecs__yield();
            ECS__PAUSE();
        }
        ECS__HAPPENS_AFTER(&w->sched.job_users);
    }
#endif
    if (t0) w->sched.job_wall += ecs__now_ns() - t0;
}

/* ---- a sync point's spawn runs on every thread ---- */
/* A sync point with many commands applies the spawn runs of its buffers in
   three passes, with the serial result. (1) Every thread takes pieces
   (ECS__PIECE_CMDS commands of a buffer, cut at creates) and finds their
   runs and ways, on tables that exist; a buffer's runs end at its first
   other command. (2) Thread 0, in command order: each table's new rows and
   each create's slot (the free list's first, then new ones), the tables
   grown, the counts set. (3) Every thread takes pieces and fills their
   rows: records, entities, values, stamps (disjoint rows and slots). (1)
   changes nothing, and (2) only once all it needs is allocated: if that
   fails, or a batch needs more than ECS__BATCH_TABLES tables, its buffers go
   one by one, which meets any failure where it would. The other commands,
   hooks and events stay on thread 0, in order, between batches. */
#define ECS__PIECE_CMDS 4096
#define ECS__PIECE_WAYS 8       /* distinct ways in a piece; a ninth ends its buffer's runs */
#define ECS__BATCH_TABLES 32    /* distinct tables on a batch's ways */
typedef struct ecs__piece {
    ecs_commands *c;
    uint32_t from, to;       /* its share of c's commands */
    uint32_t start, end;     /* its runs (the scan's) */
    bool cut;                /* a command that is not a run ends c's runs at end */
    uint32_t creates;        /* its runs */
    uint32_t first;          /* its first create's number in its batch */
    uint32_t cpend, cnum;    /* c's first create in the batch: pending index, number */
    uint32_t way_count;
    ecs__way ways[ECS__PIECE_WAYS];
    uint32_t base[ECS__BATCH_TABLES];   /* per batch table: its count before this piece's runs */
} ecs__piece;

typedef struct ecs__batch {  /* the pieces a sync point splits (thread 0 owns it) */
    ecs__piece *pieces;
    uint32_t count, cap;
    uint32_t first, n;       /* the pieces of the pass running */
    ecs__table *tabs[ECS__BATCH_TABLES];
    uint32_t tab_count;
    uint32_t *slots, slot_cap;   /* the free-list slots of the batch's first creates */
    uint32_t free_n, fresh;  /* ...how many; the first new slot after them */
    uint32_t walked;         /* slots[0 .. walked) is the free list, read during pass 1 (0: read
                                it in pass 2; a change applied one by one makes it stale) */
    uint64_t tick;           /* the stamps' tick */
    bool stamp;              /* change detection is on: rows are stamped */
} ecs__batch;

typedef struct ecs__fill { const ecs__batch *b; const ecs__piece *pc; uint32_t own; } ecs__fill;

static void ecs__batch_free(ecs_world *w) {
    if (!w->cmd.batch) return;
    ecs__free(w, w->cmd.batch->pieces);
    ecs__free(w, w->cmd.batch->slots);
    ecs__free(w, w->cmd.batch);
}

/* Create number g of the batch's handle. */
static ecs_entity ecs__batch_made(const ecs_world *w, const ecs__batch *b, uint32_t g) {
    if (g < b->free_n) return ecs__handle(b->slots[g], w->ent.records[b->slots[g]].gen);
    return ecs__handle(b->fresh + (g - b->free_n), 1);
}

/* ecs__fields_live for a run of a batch: a handle of c's creates made
   before the batch from created, one of the batch's up to this run (f->own)
   from its number, a later one 0 (not made yet, as one by one finds it). */
static void ecs__fields_batch(const ecs_world *w, const ecs_commands *c, const ecs__idinfo *in, unsigned char *value,
                              const ecs__fill *f) {
    for (int k = 0; k < in->entity_field_count; k++) {
        ecs_entity ref;
        memcpy(&ref, value + in->entity_fields[k], sizeof ref);
        if (!ecs__is_pending_of(c, ref)) continue;
        const uint32_t j = ecs__pending_index(ref);
        ref = j < f->pc->cpend ? c->created[j] : j > f->own ? 0 : ecs__batch_made(w, f->b, f->pc->cnum + (j - f->pc->cpend));
        memcpy(value + in->entity_fields[k], &ref, sizeof ref);
    }
}

/* The piece's way for a run of ids (n), from its list, or added (existing
   tables only); NULL if it has none. */
static ecs__way *ecs__piece_way(const ecs_world *w, ecs__piece *pc, const ecs_id *ids, uint32_t n) {
    for (uint32_t i = 0; i < pc->way_count; i++)
        if (pc->ways[i].n == n && !memcmp(pc->ways[i].ids, ids, n * sizeof *ids)) return &pc->ways[i];
    if (pc->way_count == ECS__PIECE_WAYS) return NULL;
    ecs__way *way = &pc->ways[pc->way_count];
    way->path[0] = w->tab.tables[0];
    for (uint32_t i = 0; i < n; i++) {
        const ecs__edge_to *edge = ecs__edge_get(way->path[i], ids[i], false);
        if (!edge) return NULL;   /* a table to make: one by one */
        way->path[i + 1] = edge->dst;
    }
    if (!ecs__way_finish(w, way, ids, n)) return NULL;
    pc->way_count++;
    return way;
}

/* The length of the run at command k if it is one on way (already checked:
   its ids have no hooks, each once), else 0. */
static uint32_t ecs__run_like(const ecs_commands *c, uint32_t k, const ecs__way *way) {
    const ecs__cmd *x = c->cmds + k;
    const uint32_t n = way->n;
    if (x->op != ECS__CMD_CREATE || !(x->e & ECS__PENDING) || k + 1 + n > c->count ||
        (k + 1 + n < c->count && x[1 + n].e == x->e))
        return 0;
    for (uint32_t i = 1; i <= n; i++)
        if (x[i].e != x->e || x[i].id != way->ids[i - 1] || (x[i].op != ECS__CMD_SET && x[i].op != ECS__CMD_ADD))
            return 0;
    return n + 1;
}

/* Pass 1, piece p: its runs from its first create on (the first piece of a
   buffer from where it stands), through the first create at or past its
   share's end. */
static void ecs__piece_scan(ecs_world *w, ecs__tctx *tc, uint32_t p) {
    (void)tc;
    ecs__batch *b = w->cmd.batch;
    if (p == b->count) {   /* the extra piece (taken first): the free list read, beside the scans */
        for (uint32_t i = 0, at = w->ent.free_head; i < b->walked; i++, at = w->ent.records[at].row) b->slots[i] = at;
        return;
    }
    ecs__piece *pc = &b->pieces[b->first + p];
    const ecs_commands *c = pc->c;
    uint32_t k = pc->from;
    if (k != c->applied) while (k < c->count && c->cmds[k].op != ECS__CMD_CREATE) k++;
    pc->start = k;
    pc->creates = pc->way_count = 0;
    pc->cut = false;
    ecs__way *last = NULL;
    while (k < c->count && !(k >= pc->to && c->cmds[k].op == ECS__CMD_CREATE)) {
        uint32_t run = last ? ecs__run_like(c, k, last) : 0;
        ecs__way *way = last;
        if (!run) {
            ecs_id ids[ECS__SPAWN_MAX];
            run = ecs__spawn_run(w, c, k, ids);
            way = run ? ecs__piece_way(w, pc, ids, run - 1) : NULL;
            if (!way) { pc->cut = true; break; }
        }
        way->runs++;
        pc->creates++;
        last = way;
        k += run;
    }
    pc->end = k;
}

/* Pass 3, piece p: its rows filled. */
static void ecs__piece_fill(ecs_world *w, ecs__tctx *tc, uint32_t p) {
    (void)tc;
    const ecs__batch *b = w->cmd.batch;
    const ecs__piece *pc = &b->pieces[b->first + p];
    ecs_commands *c = pc->c;
    uint32_t cnt[ECS__BATCH_TABLES];
    memcpy(cnt, pc->base, b->tab_count * sizeof *cnt);
    const ecs__way *way = &pc->ways[0];
    ecs__fill f = {b, pc, 0};
    for (uint32_t k = pc->start, g = pc->first; k < pc->end; g++) {
        const ecs_entity e = c->cmds[k].e;
        const ecs__cmd *x = c->cmds + k + 1;
        uint32_t n = 0;
        while (k + 1 + n < pc->end && x[n].e == e) n++;
        for (uint32_t i = 0, same = 0; !same; i++) {   /* the scan found it: one of the piece's */
            same = way->n == n;
            for (uint32_t j = 0; same && j < n; j++) same = way->ids[j] == x[j].id;
            if (!same) way = &pc->ways[i];
        }
        const uint32_t slot = g < b->free_n ? b->slots[g] : b->fresh + (g - b->free_n);
        ecs__record *r = &w->ent.records[slot];
        if (g >= b->free_n) r->gen = 1;
        const ecs_entity made = ecs__handle(slot, r->gen);
        f.own = ecs__pending_index(e);
        c->created[f.own] = made;
        ecs__table *dst = way->path[n];
        const uint32_t row = cnt[way->at[n]]++;
        r->table = dst->index;
        r->row = row;
        dst->entities[row] = made;
        for (uint32_t i = 0; i <= n && b->stamp; i++)   /* each step's table had the row for a moment */
            ecs__stamp(way->path[i]->stamps, i < n ? cnt[way->at[i]] : row, 1, b->tick);
        ecs__spawn_values(w, c, x, way, row, &f);
        k += 1 + n;
    }
}

/* Grows t for need rows as one row at a time would (doubling). */
static bool ecs__table_reserve_doubling(ecs_world *w, ecs__table *t, size_t need) {
    if (need <= t->cap) return true;
    size_t cap = t->cap ? t->cap : 8;
    while (cap < need) cap *= 2;
    return ecs__table_grow(w, t, cap);
}

/* Pass 2 for pieces [first, first + n): false (the world unchanged, but
   for capacity) if a table is locked, there are too many, or memory runs
   out; else rows and slots are handed out. */
static bool ecs__batch_place(ecs_world *w, ecs__batch *b) {
    uint32_t in[ECS__BATCH_TABLES] = {0}, creates = 0;
    bool mid[ECS__BATCH_TABLES] = {false};
    b->tab_count = 0;
    for (uint32_t p = b->first; p < b->first + b->n; p++) {
        ecs__piece *pc = &b->pieces[p];
        for (uint32_t i = 0; i < pc->way_count; i++) {
            ecs__way *way = &pc->ways[i];
            for (uint32_t s = 0; s <= way->n; s++) {
                uint32_t t = 0;
                while (t < b->tab_count && b->tabs[t] != way->path[s]) t++;
                if (t == ECS__BATCH_TABLES || ecs__locked(w, way->path[s])) return false;
                if (t == b->tab_count) b->tabs[b->tab_count++] = way->path[s];
                way->at[s] = (uint8_t)t;
                mid[t] |= s < way->n;
            }
        }
        memcpy(pc->base, in, sizeof in);
        for (uint32_t i = 0; i < pc->way_count; i++) in[pc->ways[i].at[pc->ways[i].n]] += pc->ways[i].runs;
        const bool head = p == b->first || b->pieces[p - 1].c != pc->c;   /* (a head without runs is
                                                                              its buffer's last piece) */
        pc->cpend = !head ? b->pieces[p - 1].cpend : pc->creates ? ecs__pending_index(pc->c->cmds[pc->start].e) : 0;
        pc->cnum = head ? creates : b->pieces[p - 1].cnum;
        pc->first = creates;
        creates += pc->creates;
    }
    for (uint32_t t = 0; t < b->tab_count; t++)
        if (!ecs__table_reserve_doubling(w, b->tabs[t], (size_t)b->tabs[t]->count + in[t] + mid[t])) return false;
    const uint32_t free_n = creates < w->ent.free_count ? creates : w->ent.free_count;
    if (!ecs__slots_reserve(w, creates) || !ECS__RESERVE(w, b->slots, b->slot_cap, free_n)) return false;
    b->free_n = free_n;   /* nothing fails from here */
    if (free_n && free_n <= b->walked) {   /* ecs__slot_take free_n times */
        w->ent.free_head = w->ent.records[b->slots[free_n - 1]].row;
        w->ent.free_count -= free_n;
    } else {
        for (uint32_t i = 0; i < free_n; i++) b->slots[i] = ecs__slot_take(w);
    }
    b->walked = 0;   /* used up */
    b->fresh = w->ent.record_count;
    w->ent.record_count += creates - free_n;
    w->ent.alive += creates;
    for (uint32_t t = 0; t < b->tab_count; t++) {
        const uint32_t start = b->tabs[t]->count;
        b->tabs[t]->count += in[t];
        for (uint32_t p = b->first; p < b->first + b->n; p++) b->pieces[p].base[t] += start;
    }
    b->stamp = w->chg.on;
    b->tick = ecs__now(w);
    return true;
}

/* Applies pieces [first, first + n) (a batch: whole buffers but maybe the
   last, whose runs end at a cut), then each whole buffer's tail, in order.
   If the batch cannot be placed, its buffers go one by one. */
static ecs_result ecs__batch_apply(ecs_world *w, uint32_t first, uint32_t n) {
    ecs__batch *b = w->cmd.batch;
    if (!n) return ECS_OK;
    b->first = first;
    b->n = n;
    if (!ecs__batch_place(w, b)) {
        ecs_result r = ECS_OK;
        b->walked = 0;
        for (uint32_t p = first; p < first + n && !r; p++)
            if (p + 1 == first + n || b->pieces[p + 1].c != b->pieces[p].c) r = ecs__commands_apply(w, b->pieces[p].c);
        return r;
    }
    ecs__job_run(w, ecs__piece_fill, n);
    for (uint32_t p = first; p < first + n; p++) {
        ecs_commands *c = b->pieces[p].c;
        c->applied = b->pieces[p].end;
        if (c->applied == c->count && (p + 1 == first + n || b->pieces[p + 1].c != c)) ecs__commands_done(w, c);
    }
    return ECS_OK;
}

/* A sync point's buffers (its systems that ran, in order), their spawn
   runs split over the threads: batches of whole buffers, each up to a
   buffer whose runs end at another command, which then goes on one by one.
   A failure stops where one by one would, with the rest kept. (Out of
   memory for the pieces: nothing is applied, the caller goes one by one.) */
static ecs_result ecs__commands_split(ecs_world *w, const ecs__stage_graph *sg) {
    if (!w->cmd.batch && (w->cmd.batch = (ecs__batch *)ecs__alloc(w, sizeof *w->cmd.batch)) != NULL)
        memset(w->cmd.batch, 0, sizeof *w->cmd.batch);
    ecs__batch *b = w->cmd.batch;
    if (!b) return ECS_OK;
    const uint32_t *order = w->graph.reg + sg->first;
    b->count = 0;
    for (uint32_t k = 0; k < sg->count; k++) {   /* the pieces, at least one per buffer (its events) */
        const ecs__system *s = &w->sys.systems[order[k]];
        for (uint32_t i = 0; s->ran && i < s->buf_count; i++) {
            ecs_commands *c = &s->bufs[i];
            if (!(c->count | c->ev_count)) continue;
            uint32_t at = c->applied;
            do {
                if (b->count == b->cap && !ECS__RESERVE(w, b->pieces, b->cap, (size_t)b->count + 1)) {
                    b->count = 0;
                    return ECS_OK;
                }
                ecs__piece *pc = &b->pieces[b->count++];
                pc->c = c;
                pc->from = at;
                pc->to = at = c->count - at > ECS__PIECE_CMDS ? at + ECS__PIECE_CMDS : c->count;
            } while (at < c->count);
        }
    }
    size_t creates = 0;   /* at most: the free list is read that far beside the scans */
    for (uint32_t p = 0; p < b->count; p++)
        if (p == 0 || b->pieces[p - 1].c != b->pieces[p].c) creates += b->pieces[p].c->created_count;
    if (!creates) { b->count = 0; return ECS_OK; }   /* no spawn runs: nothing to share (one by one) */
    b->walked = (uint32_t)(creates < w->ent.free_count ? creates : w->ent.free_count);
    if (!ECS__RESERVE(w, b->slots, b->slot_cap, b->walked)) b->walked = 0;
    b->first = 0;
    ecs__job_run(w, ecs__piece_scan, b->count + 1);
    ecs_result r = ECS_OK;
    uint32_t from = 0;   /* the batch gathered: pieces [from, p) */
    for (uint32_t p = 0; p < b->count && !r;) {
        ecs_commands *c = b->pieces[p].c;
        uint32_t q = p, next = p;
        while (next < b->count && b->pieces[next].c == c) next++;
        while (q < next && !b->pieces[q].cut) q++;
        if (q < next) {   /* c's runs end in piece q (the pieces after it are unused) */
            r = ecs__batch_apply(w, from, q + 1 - from);
            b->walked = 0;   /* (the free list may change now) */
            if (!r) r = ecs__commands_apply(w, c);
            from = next;
        }
        p = next;
    }
    if (!r) r = ecs__batch_apply(w, from, b->count - from);
    b->count = 0;
    return r;
}

/* The commands from which a sync point shares its spawn runs: waking a
   sleeping worker costs tens of microseconds, a spinning one's hand-off a
   fraction of one. Measured, 2 threads, spawns of 3 components (4
   commands): split, 1,280 spawns took 45 us against 58 one by one with the
   worker asleep (1,024: 81 against 57); with it spinning, 64 took 2.6 us
   against 6.1. */
static uint32_t ecs__split_min(const ecs_world *w) {
#if ECS__THREADS
    if (!ecs__load_relaxed(&w->sched.sleepers)) return ECS_SPLIT_MIN / 16;
#else
    (void)w;   /* (no workers: never asked) */
#endif
    return ECS_SPLIT_MIN;
}

/* Applies the command buffers of the systems that ran, in registration and
   chunk order, and delivers their events (>>events): the sync point. The
   one before an EXCLUSIVE system stages their events without delivering
   them (the stage's end does): which events a system of the stage sees then
   never depends on when it was readied. Events ecs_world_emit queued are
   staged first at whichever comes first. A failure keeps the rest for the
   next one. */
static ecs_result ecs__sync(ecs_world *w, const ecs__stage_graph *sg, bool deliver) {
    ecs_commands *waiting = w->ev.waiting && w->ev.waiting->ev_count && !w->ev.hold ? w->ev.waiting : NULL;
    if (!ecs__load(&w->sched.due) && !waiting && !(deliver && w->ev.staged)) return ECS_OK;   /* nothing
                                                                             recorded: the common frame */
    uint64_t t0 = w->stats.timing ? ecs__now_ns() : 0, wall0 = w->sched.job_wall, work0 = ecs__load(&w->sched.job_work);
    const uint32_t *order = w->graph.reg + sg->first;
    ecs_result r = w->ev.log_count ? ecs__events_reserve(w, sg, waiting) : ECS_OK;
    bool applied = waiting != NULL;
    if (!r && waiting) ecs__events_stage(w, waiting);   /* ecs_world_emit's events come first */
    if (!r && w->sched.workers && ecs__load(&w->sched.due_cmds) >= ecs__split_min(w)) {   /* share them */
        r = ecs__commands_split(w, sg);
        applied = true;
    }
    for (uint32_t k = 0; k < sg->count && !r; k++) {
        ecs__system *s = &w->sys.systems[order[k]];
        if (!s->ran) continue;
        for (uint32_t b = 0; b < s->buf_count && !r; b++)
            if (s->bufs[b].count | s->bufs[b].ev_count) { r = ecs__commands_apply(w, &s->bufs[b]); applied = true; }
        if (!r) { s->ran = false; (void)ecs__sub_fetch(&w->sched.due, 1); }
    }
    if (!r) ecs__store(&w->sched.due_cmds, 0);
    if (!r && deliver && w->ev.log_count) r = ecs__events_deliver(w);
    if (w->stats.timing && applied) {   /* stats and the simulation count sync points as work */
        uint64_t t1 = ecs__now_ns();
        ecs__stage_graph *gs = &w->graph.stages[sg - w->graph.stages];
        w->stats.sync_ns += t1 - t0;
        gs->sync_now += t1 - t0;
        gs->split_wall_now += w->sched.job_wall - wall0;
        gs->split_work_now += ecs__load(&w->sched.job_work) - work0;
        if (w->trace.tracing) ecs__trace_add(w, &w->sched.tctx[0], ECS__EVENT_SYNC, ECS__NONE, t0, t1);
    }
    return r;
}

/* ---- >>calls: entity calls, immediate or recorded in defer mode ---------- */
/* Defer mode records structural calls, but never while ordinary systems run:
   the defer buffer is the world's, and they run on many threads. There the
   immediate path refuses them (ECS_ERR_BUSY) instead. */
static inline bool ecs__deferring(const ecs_world *w) {
    return w->deferring && w->sched.phase != ECS__SYSTEMS;
}

/* Where deferred calls go: a hook's, or the defer block's. */
static inline ecs_commands *ecs__defer_buf(const ecs_world *w) { return w->hk.hook_depth ? w->hk.hook_buf : w->cmd.defer; }

/* In defer mode a target may also be an entity reserved by this defer block. */
static inline ecs_result ecs__check_target(const ecs_world *w, const char *fn, ecs_entity e) {
    if (ecs__alive(w, e) || (ecs__deferring(w) && ecs__reserved(w, e))) return ECS_OK;
    return ecs__not_alive(w, fn, e);
}

/* Defer mode's create (a prefab with prefab; an instance of *of): the slot
   is taken now, so the handle the caller gets is the one that becomes live
   when the block ends. */
static ecs_entity ecs__defer_create(ecs_world *w, const char *fn, bool prefab, const ecs_entity *of) {
    ecs_commands *c = ecs__defer_buf(w);
    uint32_t at = 0;
    if (!ecs__slots_reserve(w, 1) || !ECS__RESERVE(w, c->cmds, c->cap, (size_t)c->count + 1) ||
        (of && (at = ecs__cmd_value(w, c, (uint32_t)sizeof *of, 8)) == ECS__NONE)) {
        ECS__OOM(w, fn);
        return 0;
    }
    if (of) memcpy(c->data + at, of, sizeof *of);
    uint32_t i = ecs__slot_take(w);
    w->ent.records[i].table = ECS__RESERVED;
    ecs__cmd *cmd = &c->cmds[c->count++];
    cmd->op = of ? ECS__CMD_INSTANTIATE : ECS__CMD_CREATE; cmd->id = prefab ? ECS__PREFAB : 0;
    cmd->e = ecs__handle(i, w->ent.records[i].gen); cmd->value = at;
    return cmd->e;
}

/* Cuts the defer buffer back to count commands, its reserved slots back in
   their old order (free list head and record count as they were). */
static void ecs__defer_undo(ecs_world *w, ecs_commands *c, uint32_t count, uint32_t head, uint32_t slots) {
    for (uint32_t k = count; k < c->count; k++) {
        if (c->cmds[k].op != ECS__CMD_CREATE && c->cmds[k].op != ECS__CMD_INSTANTIATE) continue;
        uint32_t s = ecs__index(c->cmds[k].e);
        w->ent.records[s].table = ECS__NONE;
        if (s < slots) w->ent.free_count++;
    }
    w->ent.free_head = head;
    w->ent.record_count = slots;
    ecs__commands_drop(w, c, count);
    c->count = count;
}

ECS_API ecs_entity ecs_create(ecs_world *w) {
    if (!w) return 0;
    if (ecs__deferring(w)) return ecs__defer_create(w, "ecs_create", false, NULL);
    return ecs__create(w, "ecs_create", false);
}

/* ecs_create_many(_values) in defer mode: the creates and sets recorded, all
   or nothing (on failure the buffer and the slots are cut back). */
ECS__NOINLINE ecs_result ecs__create_many_deferred(ecs_world *w, const char *fn, size_t n, const ecs_id *ids,
                                                   size_t id_count, const void *const *values, ecs_entity *out) {
    ecs_commands *c = ecs__defer_buf(w);
    uint32_t count = c->count, head = w->ent.free_head, slots = w->ent.record_count;
    for (size_t i = 0; i < n; i++) {
        ecs_entity e = ecs__defer_create(w, fn, false, NULL);
        bool ok = e != 0;
        for (size_t k = 0; ok && k < id_count; k++)
            ok = values && values[k] && w->reg.ids[ids[k]].size
               ? !ecs_cmd_set(c, e, ids[k], (const unsigned char *)values[k] + i * w->reg.ids[ids[k]].size)
               : !ecs_cmd_add(c, e, ids[k]);
        if (!ok) {
            ecs__defer_undo(w, c, count, head, slots);
            return ECS__OOM(w, fn);
        }
        if (out) out[i] = e;
    }
    return ECS_OK;
}

/* ecs_create_many and ecs_create_many_values (values may be NULL). */
static ecs_result ecs__create_many(ecs_world *w, const char *fn, size_t n, const ecs_id *ids, size_t id_count,
                                   const void *const *values, ecs_entity *out) {
    if (!w) return ECS_ERR_ARG;
    if (id_count && !ids) return ecs__fail(w, ECS_ERR_ARG, "%s: ids is NULL", fn);
    if (n > ECS__MAX_ROWS) return ecs__fail(w, ECS_ERR_ARG, "%s: n is too large", fn);
    for (size_t i = 0; i < id_count; i++) {
        ecs_result r = ecs__check_addable(w, fn, ids[i]);
        if (r) return r;
        for (size_t k = 0; values && k < i; k++)
            if (ids[k] == ids[i])
                return ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is listed twice", fn, w->reg.ids[ids[i]].name);
    }
    if (w->sched.phase == ECS__SYSTEMS) return ecs__check_running(w, fn);   /* before the shared scratch */
    if (ecs__deferring(w)) return ecs__create_many_deferred(w, fn, n, ids, id_count, values, out);
    if (!ECS__RESERVE(w, w->tab.scratch, w->tab.scratch_cap, id_count ? id_count : 1))
        return ECS__OOM(w, fn);
    uint32_t m = 0;   /* sorted, without duplicates */
    for (size_t i = 0; i < id_count; i++) {
        uint32_t j = m;
        while (j > 0 && w->tab.scratch[j - 1] > ids[i]) j--;
        if (j > 0 && w->tab.scratch[j - 1] == ids[i]) continue;
        memmove(w->tab.scratch + j + 1, w->tab.scratch + j, (m - j) * sizeof *w->tab.scratch);
        w->tab.scratch[j] = ids[i];
        m++;
    }
    ecs__table *t = ecs__table_get(w, w->tab.scratch, m);
    if (!t) return ECS__OOM(w, fn);
    if (n == 0) return ECS_OK;
    if (ecs__locked(w, t)) return ecs__busy(w, fn, t);
    if (!ecs__slots_reserve(w, n) || !ecs__table_reserve(w, t, (size_t)t->count + n))
        return ECS__OOM(w, fn);
    const uint32_t first = t->count, index = t->index;
    ecs_entity *const ents = t->entities + first;
    ecs__record *const recs = w->ent.records;   /* reserved above: it does not move */
    uint32_t made = 0, fresh = w->ent.record_count;
    for (; made < (uint32_t)n && w->ent.free_head != ECS__NONE; made++) {   /* free slots first */
        uint32_t s = ecs__slot_take(w);
        ecs_entity e = ecs__handle(s, recs[s].gen);
        recs[s].table = index;
        recs[s].row = first + made;
        ents[made] = e;
        if (out) out[made] = e;
    }
    for (; made < (uint32_t)n; made++, fresh++) {   /* then new ones; locals: the stores may alias anything */
        ecs_entity e = ecs__handle(fresh, 1);
        recs[fresh].gen = 1;
        recs[fresh].table = index;
        recs[fresh].row = first + made;
        ents[made] = e;
        if (out) out[made] = e;
    }
    w->ent.record_count = fresh;
    t->count = first + (uint32_t)n;
    ecs__stamp_rows(w, t, first, (uint32_t)n);
    for (uint32_t c = 0; c < t->column_count; c++) {   /* whole columns: constructed, or copied in */
        const ecs__idinfo *in = &w->reg.ids[t->columns[c].id];
        unsigned char *dst = t->columns[c].data + (size_t)first * t->columns[c].size;
        const void *src = NULL;
        for (size_t k = 0; values && k < id_count; k++) if (ids[k] == t->columns[c].id) src = values[k];
        if (src && !in->lifecycle) { memcpy(dst, src, n * t->columns[c].size); continue; }
        ecs__construct(in, dst, (uint32_t)n);
        if (src) ecs__copy_into(in, dst, src, (uint32_t)n);
    }
    w->ent.alive += (uint32_t)n;
    if (t->hooked)   /* on_add, entity by entity, id by id; then on_set for the values given */
        for (size_t i = 0; i < n; i++) {
            for (uint32_t k = 0; k < t->id_count; k++)
                ecs__on_add(w, t->entities[first + i], t->ids[k], ecs__table_cell(t, (int32_t)k, first + (uint32_t)i));
            for (size_t k = 0; values && k < id_count; k++)
                if (values[k])
                    ecs__on_set(w, t->entities[first + i], ids[k],
                                ecs__table_cell(t, ecs__table_find_id(t, ids[k]), first + (uint32_t)i));
        }
    ecs__hooks_after(w);
    return ECS_OK;
}

ECS_API ecs_result ecs_create_many(ecs_world *w, size_t n, const ecs_id *ids, size_t id_count,
                                   ecs_entity *out) {
    return ecs__create_many(w, "ecs_create_many", n, ids, id_count, NULL, out);
}

ECS_API ecs_result ecs_create_many_values(ecs_world *w, size_t n, const ecs_id *ids, size_t id_count,
                                          const void *const *values, ecs_entity *out) {
    return ecs__create_many(w, "ecs_create_many_values", n, ids, id_count, values, out);
}

ECS_API ecs_result ecs_destroy(ecs_world *w, ecs_entity e) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_target(w, "ecs_destroy", e);
    if (r) return r;
    if (ecs__deferring(w)) return ecs_cmd_destroy(ecs__defer_buf(w), e);
    if ((r = ecs__destroy(w, "ecs_destroy", e))) return r;
    return ecs__hooks_after(w);
}

/* BUSY if destroying e would touch a table a query loop holds. */
static ecs_result ecs__destroy_check(ecs_world *w, const char *fn, ecs_entity e) {
    uint32_t root = ecs__index(e);
    ecs__table *t = w->tab.tables[w->ent.records[root].table];
    if (ecs__locked(w, t)) return ecs__busy(w, fn, t);
    if (!ecs__has_rel(w, root) || !w->hier.rels[root].first) return ECS_OK;
    for (uint32_t x = ecs__deepest(w, root); x != ECS__NONE; x = ecs__post_next(w, root, x))
        if (ecs__locked(w, (t = w->tab.tables[w->ent.records[x].table]))) return ecs__busy(w, fn, t);
    return ECS_OK;
}

/* ecs_destroy_many's work, the handles checked. */
static ecs_result ecs__destroy_list(ecs_world *w, const char *fn, const ecs_entity *es, size_t n) {
    ecs_result r;
    if (ecs__deferring(w)) {   /* all recorded, or none */
        ecs_commands *c = ecs__defer_buf(w);
        uint32_t count = c->count;
        for (size_t i = 0; i < n; i++)
            if ((r = ecs_cmd_destroy(c, es[i]))) { c->count = count; return r; }
        return ECS_OK;
    }
    if ((r = ecs__check_running(w, fn))) return r;
    for (size_t i = 0; i < n; i++)
        if ((r = ecs__destroy_check(w, fn, es[i]))) return r;
    for (size_t i = 0; i < n; i++) {
        if (!ecs__alive(w, es[i])) continue;   /* went with one before it */
        if ((r = ecs__destroy(w, fn, es[i])) || (r = ecs__hooks_after(w))) return r;
    }
    return ECS_OK;
}

ECS_API ecs_result ecs_destroy_many(ecs_world *w, const ecs_entity *es, size_t n) {
    static const char fn[] = "ecs_destroy_many";
    if (!w) return ECS_ERR_ARG;
    if (n && !es) return ecs__fail(w, ECS_ERR_ARG, "%s: entities is NULL", fn);
    for (size_t i = 0; i < n; i++) {
        ecs_result r = ecs__check_target(w, fn, es[i]);
        if (r) return r;
    }
    return ecs__destroy_list(w, fn, es, n);
}

/* Whether ecs_destroy_with(id) takes t's rows (prefabs only for the prefab tag). */
static bool ecs__destroying_with(const ecs__table *t, ecs_id id) {
    return t->count && (!t->prefab || id == ECS__PREFAB) && ecs__table_find_id(t, id) >= 0;
}

ECS_API ecs_result ecs_destroy_with(ecs_world *w, ecs_id id) {
    static const char fn[] = "ecs_destroy_with";
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_component(w, fn, id);
    if (r || (r = ecs__check_running(w, fn))) return r;
    size_t n = 0, k = 0;
    for (uint32_t i = 0; i < w->tab.table_count; i++)
        if (ecs__destroying_with(w->tab.tables[i], id)) n += w->tab.tables[i]->count;
    if (!n) return ECS_OK;
    ecs_entity *list = (ecs_entity *)ecs__alloc(w, n * sizeof *list);   /* destroys move rows */
    if (!list) return ECS__OOM(w, fn);
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        const ecs__table *t = w->tab.tables[i];
        if (!ecs__destroying_with(t, id)) continue;
        for (uint32_t row = t->count; row-- > 0;) list[k++] = t->entities[row];   /* last rows first: no moves */
    }
    r = ecs__destroy_list(w, fn, list, n);
    ecs__free(w, list);
    return r;
}

ECS_API bool ecs_is_alive(const ecs_world *w, ecs_entity e) { return w && ecs__alive(w, e); }

ECS_API ecs_result ecs_set_parent(ecs_world *w, ecs_entity child, ecs_entity parent) {
    static const char fn[] = "ecs_set_parent";
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_target(w, fn, child);
    if (!r && parent) r = ecs__check_target(w, fn, parent);
    if (r) return r;
    if (parent == child) return ecs__fail(w, ECS_ERR_ARG, "%s: an entity cannot be its own parent", fn);
    if (ecs__deferring(w)) return ecs_cmd_set_parent(ecs__defer_buf(w), child, parent);
    if ((r = ecs__check_running(w, fn))) return r;
    return ecs__set_parent(w, fn, child, parent);
}

ECS_API ecs_entity ecs_get_parent(const ecs_world *w, ecs_entity e) {
    return w && ecs__alive(w, e) ? ecs__parent_of(w, ecs__index(e)) : 0;
}

ECS_API size_t ecs_children(const ecs_world *w, ecs_entity parent, ecs_entity *out, size_t cap) {
    if (!w || !ecs__alive(w, parent) || !ecs__has_rel(w, ecs__index(parent))) return 0;
    size_t n = 0;
    for (uint32_t x = w->hier.rels[ecs__index(parent)].first; x; x = w->hier.rels[x - 1].next, n++)
        if (out && n < cap) out[n] = ecs__handle(x - 1, w->ent.records[x - 1].gen);
    return n;
}

ECS_API ecs_result ecs_add(ecs_world *w, ecs_entity e, ecs_id id) {
    if (!w) return ECS_ERR_ARG;
    const ecs__edge_to *edge = ecs__fast_edge(w, e, id, 0, NULL);
    if (edge) { ecs__move_fast(w, e, edge, NULL); return ECS_OK; }
    ecs_result r = ecs__check_target(w, "ecs_add", e);
    if (!r) r = ecs__check_addable(w, "ecs_add", id);
    if (r) return r;
    if (ecs__deferring(w)) return ecs_cmd_add(ecs__defer_buf(w), e, id);
    if ((r = ecs__add(w, "ecs_add", e, id, NULL))) return r;
    return ecs__hooks_after(w);
}

ECS_API ecs_result ecs_remove(ecs_world *w, ecs_entity e, ecs_id id) {
    if (!w) return ECS_ERR_ARG;
    const ecs__edge_to *edge = ecs__fast_edge(w, e, id, 1, NULL);
    if (edge) { ecs__move_fast(w, e, edge, NULL); return ECS_OK; }
    ecs_result r = ecs__check_target(w, "ecs_remove", e);
    if (!r) r = ecs__check_addable(w, "ecs_remove", id);
    if (r) return r;
    if (ecs__deferring(w)) return ecs_cmd_remove(ecs__defer_buf(w), e, id);
    if ((r = ecs__remove(w, "ecs_remove", e, id))) return r;
    return ecs__hooks_after(w);
}

ECS_API ecs_result ecs_set(ecs_world *w, ecs_entity e, ecs_id id, const void *value) {
    if (!w) return ECS_ERR_ARG;
    const ecs__edge_to *edge = value ? ecs__fast_edge(w, e, id, 0, value) : NULL;
    if (edge) { ecs__move_fast(w, e, edge, value); return ECS_OK; }
    ecs_result r = ecs__check_target(w, "ecs_set", e);
    if (!r) r = ecs__check_addable(w, "ecs_set", id);
    if (r) return r;
    if (!value && w->reg.ids[id].size)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_set: value is NULL for component \"%s\"",
                         w->reg.ids[id].name);
#if ECS_CHECK_ACCESS   /* a value write inside a system (a missing one is structural: BUSY) */
    if (w->sched.phase != ECS__IDLE && ecs_has(w, e, id) && !ecs__access_ok(w, "ecs_set", id, true, e))
        return ECS_ERR_ACCESS;
#endif
    if (ecs__deferring(w)) return ecs_cmd_set(ecs__defer_buf(w), e, id, value);
    if (w->sched.phase == ECS__SYSTEMS && w->reg.ids[id].on_set)
        return ecs__fail(w, ECS_ERR_BUSY, "ecs_set: \"%s\" has an on_set hook, which runs only where "
                         "structure may change; inside a system use ecs_cmd_set(it->commands, ...)",
                         w->reg.ids[id].name);
    if ((r = ecs__add(w, "ecs_set", e, id, value))) return r;
    return ecs__hooks_after(w);
}

ECS_API bool ecs_has(const ecs_world *w, ecs_entity e, ecs_id id) {
    if (!w || !ecs__alive(w, e)) return false;
    const ecs__record *r = &w->ent.records[ecs__index(e)];
    return ecs__table_find_id(w->tab.tables[r->table], id) >= 0;
}


static void *ecs__get(const ecs_world *w, const char *fn, ecs_entity e, ecs_id id, bool write) {
    if (!w || ecs__check_alive(w, fn, e) || ecs__check_component(w, fn, id) ||
        !ecs__access_ok(w, fn, id, write, e))
        return NULL;

    const ecs__record *r = &w->ent.records[ecs__index(e)];
    ecs__table *t = w->tab.tables[r->table];
    int32_t at = ecs__table_find_id(t, id);
    if (at >= 0 && write) ecs__stamp_value(w, t, t->column_of[at], r->row);
    return at < 0 ? NULL : ecs__table_cell(t, at, r->row);
}

ECS_API const void *ecs_get(const ecs_world *w, ecs_entity e, ecs_id id) {
    return ecs__get(w, "ecs_get", e, id, false);
}

ECS_API void *ecs_get_mut(ecs_world *w, ecs_entity e, ecs_id id) {
    return ecs__get(w, "ecs_get_mut", e, id, true);
}

ECS_API size_t ecs_count(const ecs_world *w) {
    if (!w) return 0;
    size_t n = w->ent.alive;
    for (uint32_t i = 0; w->tab.prefab_tables && i < w->tab.table_count; i++)
        if (w->tab.tables[i]->prefab) n -= w->tab.tables[i]->count;
    return n;
}

ECS_API int ecs_entity_ids(const ecs_world *w, ecs_entity e, const ecs_id **out) {
    if (out) *out = NULL;
    if (!w || ecs__check_alive(w, "ecs_entity_ids", e)) return -1;
    const ecs__table *t = w->tab.tables[w->ent.records[ecs__index(e)].table];
    if (out) *out = t->ids;
    return (int)t->id_count;
}

/* ---- >>prefab: prefabs and their instances ------------------------------- */
/* A prefab is an entity with the prefab tag (ECS__PREFAB, the world's first
   id), which only ecs_prefab_new gives and nothing takes away. The rules
   that make it invisible live where they apply: table matching (>>terms),
   event hooks (ecs__quiet), ecs_count and ecs_destroy_with, parents
   (ecs__set_parent). Instantiating walks the prefab's subtree in pre-order
   and makes n copies of it: every fallible step (tables, slots, rows,
   links) is reserved first, so the bulk form is all or nothing. Instance
   i's entities are made in pre-order before instance i + 1's, so n
   instances get the handles, rows and hook calls of n single calls. */
typedef struct ecs__inst_node {
    ecs_entity e;            /* the prefab entity (entity fields naming it are rewritten) */
    int32_t up;              /* its parent's node (-1: the root) */
    uint32_t row;            /* its row in src */
    ecs__table *src, *dst;   /* its table; its instances' (the same ids but the tag) */
    uint32_t first, share, rank;   /* instance i's row in dst: first + i * share + rank */
} ecs__inst_node;

ECS_API ecs_entity ecs_prefab_new(ecs_world *w) {
    if (!w) return 0;
    if (ecs__deferring(w)) return ecs__defer_create(w, "ecs_prefab_new", true, NULL);
    return ecs__create(w, "ecs_prefab_new", true);
}

ECS_API ecs_id ecs_prefab_tag(const ecs_world *w) { return w ? ECS__PREFAB : 0; }

ECS_API bool ecs_is_prefab(const ecs_world *w, ecs_entity e) {
    return w && ecs__alive(w, e) && w->tab.tables[w->ent.records[ecs__index(e)].table]->prefab;
}

/* ECS_OK if prefab is a live prefab; the error otherwise. */
static ecs_result ecs__check_prefab(const ecs_world *w, const char *fn, ecs_entity prefab) {
    ecs_result r = ecs__check_alive(w, fn, prefab);
    if (r || ecs_is_prefab(w, prefab)) return r;
    return ecs__fail(w, ECS_ERR_ARG, "%s: entity %u is not a prefab (make one with ecs_prefab_new)", fn,
                     (unsigned)ecs__index(prefab));
}

/* The subtree's nodes, their tables and rows, and room for n instances
   (reserved: slots already holds the root of a single one). */
static ecs_result ecs__inst_plan(ecs_world *w, const char *fn, ecs_entity prefab, size_t n, bool reserved,
                                 ecs__inst_node **out, uint32_t *count) {
    const uint32_t root = ecs__index(prefab);
    uint32_t k = 0;
    for (uint32_t x = root; x != ECS__NONE; x = ecs__pre_next(w, root, x)) k++;
    if (n > ECS__MAX_ROWS / k)
        return ecs__fail(w, ECS_ERR_ARG, "%s: %zu instances of a prefab of %u entities are too many", fn, n,
                         (unsigned)k);
    ecs__inst_node *nodes = (ecs__inst_node *)ecs__alloc(w, k * sizeof *nodes);
    if (!nodes) return ECS__OOM(w, fn);
    memset(nodes, 0, k * sizeof *nodes);
    ecs_result r = ECS_OK;
    k = 0;
    for (uint32_t x = root; x != ECS__NONE; x = ecs__pre_next(w, root, x), k++) {
        ecs__inst_node *nd = &nodes[k];
        const ecs__record *rec = &w->ent.records[x];
        nd->e = ecs__handle(x, rec->gen);
        nd->src = w->tab.tables[rec->table];
        nd->row = rec->row;
        nd->up = -1;
        for (uint32_t j = k; k && j-- > 0;)   /* its parent: the nearest earlier node of that slot */
            if (ecs__index(nodes[j].e) == ecs__index(w->hier.rels[x].parent)) { nd->up = (int32_t)j; break; }
        ECS_ASSERT(nd->src->prefab && nd->src->ids[0] == ECS__PREFAB);
        if (!r && !(nd->dst = ecs__table_get(w, nd->src->ids + 1, nd->src->id_count - 1))) r = ECS__OOM(w, fn);
    }
    for (uint32_t a = 0; !r && a < k; a++) {
        for (uint32_t b = 0; b < k; b++)
            if (nodes[b].dst == nodes[a].dst) { nodes[a].share++; nodes[a].rank += b < a; }
        ecs__table *dst = nodes[a].dst;
        nodes[a].first = dst->count;
        if (nodes[a].rank) continue;
        if (ecs__locked(w, dst)) r = ecs__busy(w, fn, dst);
        else if (n * nodes[a].share > ECS__MAX_ROWS - dst->count)
            r = ecs__fail(w, ECS_ERR_ARG, "%s: %zu instances do not fit in one table", fn, n);
        else if (!ecs__table_reserve(w, dst, dst->count + n * nodes[a].share)) r = ECS__OOM(w, fn);
    }
    if (!r && (!ecs__slots_reserve(w, n * k - reserved) ||
               (k > 1 && n && !ecs__rels_reserve(w, (uint32_t)(w->ent.record_count + n * k - 1)))))
        r = ECS__OOM(w, fn);
    if (r) { ecs__free(w, nodes); return r; }
    *out = nodes;
    *count = k;
    return ECS_OK;
}

/* The entities of n instances: slots (the root of the first one's given,
   or ECS__NONE), rows, records, links to their parents. */
static void ecs__inst_place(ecs_world *w, const ecs__inst_node *nodes, uint32_t k, size_t n, uint32_t slot,
                            ecs_entity *made) {
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < k; j++) {
            const ecs__inst_node *nd = &nodes[j];
            uint32_t s = i == 0 && j == 0 && slot != ECS__NONE ? slot : ecs__slot_take(w), row;
            ecs__record *rec = &w->ent.records[s];
            row = nd->first + (uint32_t)i * nd->share + nd->rank;
            rec->table = nd->dst->index;
            rec->row = row;
            made[i * k + j] = nd->dst->entities[row] = ecs__handle(s, rec->gen);
            if (nd->up >= 0) ecs__link(w, s, made[i * k + (uint32_t)nd->up]);
        }
    for (uint32_t j = 0; j < k; j++) {
        ecs__table *dst = nodes[j].dst;
        if (nodes[j].rank) continue;
        dst->count = nodes[j].first + (uint32_t)n * nodes[j].share;
        ecs__stamp_rows(w, dst, nodes[j].first, (uint32_t)n * nodes[j].share);
    }
    w->ent.alive += (uint32_t)(n * k);
}

/* Copies node j's values into its n instances (whole columns where its rows
   are consecutive), then rewrites their entity fields that name an entity
   of the prefab's subtree to that entity's copy in the same instance. */
static void ecs__inst_values(ecs_world *w, const ecs__inst_node *nodes, uint32_t k, uint32_t j, size_t n,
                             const ecs_entity *made) {
    const ecs__inst_node *nd = &nodes[j];
    for (uint32_t c = 0; c < nd->dst->column_count; c++) {
        const ecs__column *col = &nd->dst->columns[c];
        const ecs__idinfo *in = &w->reg.ids[col->id];
        const unsigned char *from = ecs__table_cell(nd->src, ecs__table_find_id(nd->src, col->id), nd->row);
        const size_t size = col->size, stride = nd->share * size;
        unsigned char *to = col->data + (size_t)(nd->first + nd->rank) * size;
        if (!in->lifecycle && nd->share == 1 && n) {   /* one copy, then doubling */
            memcpy(to, from, size);
            for (size_t have = 1; have < n; have *= 2) memcpy(to + have * size, to, (have * 2 <= n ? have : n - have) * size);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (in->lifecycle) { ecs__construct(in, to + i * stride, 1); ecs__copy_into(in, to + i * stride, from, 1); }
                else memcpy(to + i * stride, from, size);
            }
        }
        for (size_t i = 0; i < n && in->entity_field_count; i++)
            for (int f = 0; f < in->entity_field_count; f++) {
                ecs_entity ref;
                memcpy(&ref, to + i * stride + in->entity_fields[f], sizeof ref);
                for (uint32_t x = 0; ref && x < k; x++)
                    if (nodes[x].e == ref) { memcpy(to + i * stride + in->entity_fields[f], &made[i * k + x], sizeof ref); break; }
            }
    }
}

/* n instances of a checked, live prefab (slot: the root of the single
   instance a defer block reserved, or ECS__NONE); their roots to out. The
   caller runs what the hooks recorded. */
static ecs_result ecs__instantiate(ecs_world *w, const char *fn, ecs_entity prefab, size_t n, ecs_entity *out,
                                   uint32_t slot) {
    ecs__inst_node *nodes = NULL;
    uint32_t k = 0;
    ecs_result r = ecs__inst_plan(w, fn, prefab, n, slot != ECS__NONE, &nodes, &k);
    if (r) return r;
    ecs_entity *made = n ? (ecs_entity *)ecs__alloc(w, n * k * sizeof *made) : NULL;
    if (n && !made) { ecs__free(w, nodes); return ECS__OOM(w, fn); }
    ecs__inst_place(w, nodes, k, n, slot, made);
    bool hooked = false;
    for (uint32_t j = 0; j < k; j++) {
        ecs__inst_values(w, nodes, k, j, n, made);
        hooked |= nodes[j].dst->hooked;
    }
    for (size_t i = 0; out && i < n; i++) out[i] = made[i * k];
    for (size_t i = 0; hooked && i < n; i++)   /* on_add for every id, then on_set for every value */
        for (uint32_t j = 0; j < k; j++) {
            const ecs__table *t = nodes[j].dst;
            const uint32_t row = nodes[j].first + (uint32_t)i * nodes[j].share + nodes[j].rank;
            for (uint32_t x = 0; t->hooked && x < t->id_count; x++)
                ecs__on_add(w, made[i * k + j], t->ids[x], ecs__table_cell(t, (int32_t)x, row));
            for (uint32_t x = 0; t->hooked && x < t->id_count; x++)
                ecs__on_set(w, made[i * k + j], t->ids[x], ecs__table_cell(t, (int32_t)x, row));
        }
    ecs__free(w, made);
    ecs__free(w, nodes);
    return ECS_OK;
}

/* ecs_instantiate(_many): checked; recorded in defer mode (all or nothing),
   else made now. */
static ecs_result ecs__instantiate_call(ecs_world *w, const char *fn, ecs_entity prefab, size_t n,
                                        ecs_entity *out) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_prefab(w, fn, prefab);
    if (r) return r;
    if (n > ECS__MAX_ROWS) return ecs__fail(w, ECS_ERR_ARG, "%s: n is too large", fn);
    if ((r = ecs__check_running(w, fn))) return r;
    if (!n) return ECS_OK;   /* nothing to make (no table either) */
    if (ecs__deferring(w)) {
        ecs_commands *c = ecs__defer_buf(w);
        uint32_t count = c->count, head = w->ent.free_head, slots = w->ent.record_count;
        for (size_t i = 0; i < n; i++) {
            ecs_entity e = ecs__defer_create(w, fn, false, &prefab);
            if (!e) { ecs__defer_undo(w, c, count, head, slots); return ECS_ERR_NOMEM; }
            if (out) out[i] = e;
        }
        return ECS_OK;
    }
    if ((r = ecs__instantiate(w, fn, prefab, n, out, ECS__NONE))) return r;
    return ecs__hooks_after(w);
}

ECS_API ecs_entity ecs_instantiate(ecs_world *w, ecs_entity prefab) {
    ecs_entity e = 0;
    return ecs__instantiate_call(w, "ecs_instantiate", prefab, 1, &e) ? 0 : e;
}

ECS_API ecs_result ecs_instantiate_many(ecs_world *w, ecs_entity prefab, size_t n, ecs_entity *out) {
    return ecs__instantiate_call(w, "ecs_instantiate_many", prefab, n, out);
}

ECS_API ecs_entity ecs_cmd_instantiate(ecs_commands *c, ecs_entity prefab) {
    static const char fn[] = "ecs_cmd_instantiate";
    if (!c || ecs__check_prefab(c->world, fn, prefab)) return 0;
    return ecs__cmd_make(c, fn, ECS__CMD_INSTANTIATE, &prefab);
}

/* An instantiate command (e: its pending or reserved handle): a prefab
   that died since drops it, and the slot a defer block reserved goes back. */
static ecs_result ecs__cmd_instantiate_apply(ecs_world *w, ecs_commands *c, const ecs__cmd *cmd) {
    ecs_entity prefab, made = 0;
    memcpy(&prefab, c->data + cmd->value, sizeof prefab);
    const bool reserved = !(cmd->e & ECS__PENDING);
    if (!ecs_is_prefab(w, prefab)) {
        w->cmd.dropped++;
        if (reserved) ecs__slot_release(w, ecs__index(cmd->e));
        return ECS_OK;
    }
    ecs_result r = ecs__instantiate(w, "ecs_commands_apply", prefab, 1, &made,
                                    reserved ? ecs__index(cmd->e) : ECS__NONE);
    if (!r && !reserved) c->created[ecs__pending_index(cmd->e)] = made;
    return r;
}

/* ---- >>snapshot: the world's state, taken and restored ------------------- */
/* The registrations a snapshot depends on: ids 1..n by name, size, kind. */
static uint64_t ecs__fingerprint(const ecs_world *w, uint32_t n) {
    ecs__hasher h;
    ecs__hash_init(&h);
    for (uint32_t i = 1; i <= n; i++) {
        const ecs__idinfo *in = &w->reg.ids[i];
        uint32_t v[2] = {in->size, (uint32_t)in->resource | (in->event != 0) << 1};
        ecs__hash_feed(&h, in->name, strlen(in->name) + 1);
        ecs__hash_feed(&h, v, sizeof v);
    }
    return ecs__hash_done(&h);
}

typedef struct ecs__snap_clock { uint64_t turns; double acc, dropped; } ecs__snap_clock;
/* Events not yet read by every reader: a type's [base, end), and where each
   reading system stands (by system index: snapshots are of one program). */
typedef struct ecs__snap_log { ecs_id id; uint64_t base, end; unsigned char *data; } ecs__snap_log;
typedef struct ecs__snap_cursor { uint32_t system; ecs_id id; uint64_t cursor; } ecs__snap_cursor;

/* A table as a snapshot holds it; values of an id with hooks are constructed
   (and destroyed when the snapshot is freed). */
typedef struct ecs__snap_table {
    ecs_id *ids;             /* sorted, in the world's numbering */
    uint32_t id_count, column_count, count;
    ecs_entity *entities;
    unsigned char **values;  /* per column (sized id, in ids order): count values */
    uint64_t *stamps;        /* >>change: (1 + column_count) rows of blocks, or NULL */
    uint32_t blocks;
} ecs__snap_table;
typedef struct ecs__snap_seen { uint64_t serial, seen; } ecs__snap_seen;   /* a query's mark */
typedef struct ecs__snap_gmark { uint64_t serial, group, seen; } ecs__snap_gmark;   /* ...a group's */
typedef struct ecs__snap_id {   /* per id, to copy, free and write values without the world */
    char *name;
    uint32_t size;
    bool resource, event, owning;   /* owning: ctor/dtor/copy/move */
    ecs_ctor_fn dtor;
    ecs_serialize_fn serialize;
    void *ctx;
    unsigned char *value;    /* a resource's value (constructed) */
} ecs__snap_id;
struct ecs_snapshot {
    ecs_world *world;        /* for errors and values' hooks */
    void *(*realloc_fn)(void *, size_t, void *);
    void *alloc_user;
    uint32_t id_count;       /* the registrations it needs */
    uint64_t fingerprint;
    ecs__snap_id *ids;       /* [1 .. id_count] */
    ecs__record *records;
    uint32_t record_count, free_head, free_count, alive;
    ecs__rel *rels;          /* per slot, or NULL */
    uint32_t rel_count;
    ecs__snap_table *tables; /* in the world's table order */
    uint32_t table_count;
    size_t dropped;
    bool has_clock;          /* false for a save file of version 1 */
    bool has_seed;           /* false for a save file before version 6 */
    uint64_t random_seed;
    uint64_t frame;
    float time_scale;
    ecs__snap_clock *clocks; /* per stage */
    uint32_t clock_count;
    ecs__snap_log *logs;     /* per event type with unread events */
    uint32_t log_count;
    ecs__snap_cursor *cursors;
    uint32_t cursor_count;
    ecs__snap_log *queued;   /* ecs_world_emit's events not yet delivered (base 0, end: their count) */
    uint32_t queued_count;
    bool has_stamps;         /* the world kept change stamps: the tables' stamps, the clock, */
    uint64_t tick;           /* each system's and marked query's latest run (>>change) */
    uint64_t *seen;
    uint32_t seen_count;
    ecs__snap_seen *marks;
    uint32_t mark_count;
    ecs__snap_gmark *gmarks;
    uint32_t gmark_count;
    unsigned char *blob;     /* a loaded one's file bytes: its plain columns point into them */
    size_t blob_size;
    bool blob_lent;          /* while loading: the bytes are the loader's, not freed with it */
};

static void *ecs__snap_alloc(ecs_snapshot *s, size_t n) { return s->realloc_fn(NULL, n ? n : 1, s->alloc_user); }
static void ecs__snap_mfree(const ecs_snapshot *s, void *p) { if (p) s->realloc_fn(p, 0, s->alloc_user); }
static bool ecs__snap_borrowed(const ecs_snapshot *s, const void *p) {   /* inside the blob */
    return s->blob && (uintptr_t)p >= (uintptr_t)s->blob && (uintptr_t)p < (uintptr_t)s->blob + s->blob_size;
}

static void ecs__snap_keep_blob(ecs_snapshot *s) {   /* only while a column points into it */
    for (uint32_t t = 0; t < s->table_count; t++)
        for (uint32_t c = 0; c < s->tables[t].column_count; c++)
            if (ecs__snap_borrowed(s, s->tables[t].values[c])) return;
    ecs__snap_mfree(s, s->blob);
    s->blob = NULL;
}

ECS_API void ecs_snapshot_free(ecs_snapshot *s) {
    if (!s) return;
    for (uint32_t i = 0; s->tables && i < s->table_count; i++) {
        ecs__snap_table *st = &s->tables[i];
        for (uint32_t c = 0, k = 0; st->values && c < st->id_count; c++) {
            const ecs__snap_id *in = &s->ids[st->ids[c]];
            if (!in->size) continue;
            if (in->dtor && st->values[k] && st->count) in->dtor(st->values[k], (int)st->count, in->ctx);
            if (!ecs__snap_borrowed(s, st->values[k])) ecs__snap_mfree(s, st->values[k]);
            k++;
        }
        ecs__snap_mfree(s, st->values);
        ecs__snap_mfree(s, st->ids);
        ecs__snap_mfree(s, st->entities);
        ecs__snap_mfree(s, st->stamps);
    }
    for (uint32_t i = 1; s->ids && i <= s->id_count; i++) {
        ecs__snap_id *in = &s->ids[i];
        if (in->value && in->dtor) in->dtor(in->value, 1, in->ctx);
        ecs__snap_mfree(s, in->value);
        ecs__snap_mfree(s, in->name);
    }
    ecs__snap_mfree(s, s->ids);
    ecs__snap_mfree(s, s->tables);
    ecs__snap_mfree(s, s->records);
    ecs__snap_mfree(s, s->rels);
    ecs__snap_mfree(s, s->clocks);
    for (uint32_t i = 0; s->logs && i < s->log_count; i++) ecs__snap_mfree(s, s->logs[i].data);
    for (uint32_t i = 0; s->queued && i < s->queued_count; i++) ecs__snap_mfree(s, s->queued[i].data);
    ecs__snap_mfree(s, s->logs);
    ecs__snap_mfree(s, s->queued);
    ecs__snap_mfree(s, s->cursors);
    ecs__snap_mfree(s, s->seen);
    ecs__snap_mfree(s, s->marks);
    ecs__snap_mfree(s, s->gmarks);
    if (!s->blob_lent) ecs__snap_mfree(s, s->blob);
    ecs__snap_mfree(s, s);
}

/* Copies n values of id into dst: raw storage, constructed first when the id
   has hooks (copy assigns into a constructed value). */
static void ecs__values_copy(const ecs__idinfo *in, unsigned char *dst, const unsigned char *src, uint32_t n) {
    if (!n) return;
    if (!in->lifecycle) { memcpy(dst, src, (size_t)n * in->size); return; }
    ecs__construct(in, dst, n);
    ecs__copy_into(in, dst, src, n);
}

/* Take, restore: only between frames, outside hooks, defer blocks and query loops. */
static ecs_result ecs__snap_busy(const ecs_world *w, const char *fn) {
    ecs_result r = ecs__check_idle(w, fn);
    if (r) return r;
    if (w->hk.hook_depth || w->cmd.defer_depth)
        return ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed inside %s", fn,
                         w->hk.hook_depth ? "a component hook" : "a defer block (ecs_defer_end first)");
    for (uint32_t i = 0; i < w->tab.table_count; i++)
        if (w->tab.tables[i]->lock)
            return ecs__fail(w, ECS_ERR_BUSY, "%s: a query loop is still open (ecs_iter_fini ends it)", fn);
    return ECS_OK;
}

/* An empty snapshot for w's registrations, with room for table_count tables. */
static ecs_snapshot *ecs__snap_new(ecs_world *w, uint32_t table_count) {
    ecs_snapshot *s = (ecs_snapshot *)ecs__alloc(w, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->world = w;
    s->realloc_fn = w->realloc_fn;
    s->alloc_user = w->alloc_user;
    s->id_count = w->reg.id_count;
    s->fingerprint = ecs__fingerprint(w, w->reg.id_count);
    if ((s->ids = (ecs__snap_id *)ecs__snap_alloc(s, ((size_t)w->reg.id_count + 1) * sizeof *s->ids)))
        memset(s->ids, 0, ((size_t)w->reg.id_count + 1) * sizeof *s->ids);
    if ((s->tables = (ecs__snap_table *)ecs__snap_alloc(s, (size_t)table_count * sizeof *s->tables)))
        memset(s->tables, 0, (size_t)table_count * sizeof *s->tables);
    if (!s->ids || !s->tables) { ecs_snapshot_free(s); return NULL; }
    for (uint32_t i = 1; i <= w->reg.id_count; i++) {
        const ecs__idinfo *in = &w->reg.ids[i];
        ecs__snap_id *si = &s->ids[i];
        size_t len = strlen(in->name) + 1;
        if (!(si->name = (char *)ecs__snap_alloc(s, len))) { ecs_snapshot_free(s); return NULL; }
        memcpy(si->name, in->name, len);
        si->size = in->size;
        si->resource = in->resource;
        si->event = in->event != 0;
        si->owning = in->lifecycle;
        si->dtor = in->dtor;
        si->serialize = in->serialize;
        si->ctx = in->ctx;
    }
    return s;
}

/* Room for a table of count rows over ids (values not yet constructed;
   with values false, the caller sets the columns). */
static bool ecs__snap_table_alloc(ecs_snapshot *s, ecs__snap_table *st, const ecs_id *ids, uint32_t n,
                                  uint32_t count, bool values) {
    uint32_t columns = 0;
    for (uint32_t i = 0; i < n; i++) columns += s->ids[ids[i]].size > 0;
    st->id_count = n;
    st->column_count = columns;
    if (!(st->ids = (ecs_id *)ecs__snap_alloc(s, (size_t)n * sizeof *ids)) ||
        !(st->entities = (ecs_entity *)ecs__snap_alloc(s, (size_t)count * sizeof(ecs_entity))) ||
        !(st->values = (unsigned char **)ecs__snap_alloc(s, (size_t)columns * sizeof(void *))))
        return false;
    memcpy(st->ids, ids, (size_t)n * sizeof *ids);
    memset(st->values, 0, (size_t)columns * sizeof(void *));
    for (uint32_t i = 0, k = 0; values && i < n; i++)
        if (s->ids[ids[i]].size &&
            !(st->values[k++] = (unsigned char *)ecs__snap_alloc(s, (size_t)count * s->ids[ids[i]].size)))
            return false;
    return true;
}

/* The events each type's readers have not all read, and where each reader
   stands. False when memory runs out. */
static bool ecs__events_take(ecs_world *w, ecs_snapshot *s) {
    uint32_t logs = 0, cursors = 0;
    for (uint32_t l = 0; l < w->ev.log_count; l++) {
        logs += w->ev.logs[l].reader_count > 0;
        cursors += w->ev.logs[l].reader_count;
    }
    if ((logs && !(s->logs = (ecs__snap_log *)ecs__snap_alloc(s, logs * sizeof *s->logs))) ||
        (cursors && !(s->cursors = (ecs__snap_cursor *)ecs__snap_alloc(s, cursors * sizeof *s->cursors))))
        return false;
    for (uint32_t l = 0; l < w->ev.log_count; l++) {
        const ecs__evlog *L = &w->ev.logs[l];
        if (!L->reader_count) continue;
        ecs__snap_log *sl = &s->logs[s->log_count++];
        size_t size = w->reg.ids[L->id].size;
        sl->id = L->id;
        sl->end = L->end;
        sl->base = L->end;
        sl->data = NULL;
        for (uint32_t r = 0; r < L->reader_count; r++) {
            ecs__snap_cursor *c = &s->cursors[s->cursor_count++];
            c->system = L->readers[r];
            c->id = L->id;
            c->cursor = ecs__window_of(&w->sys.systems[L->readers[r]], l)->cursor;
            if (c->cursor < sl->base) sl->base = c->cursor;
        }
        size_t bytes = (size_t)(sl->end - sl->base) * size;
        if (!(sl->data = (unsigned char *)ecs__snap_alloc(s, bytes))) return false;
        if (bytes) memcpy(sl->data, L->data + (size_t)(sl->base - L->base) * size, bytes);
    }
    const ecs_commands *q = w->ev.waiting;   /* queued by ecs_world_emit (an observer's, at the last
                                               sync point): the next frame delivers them */
    if (!q || !q->ev_count) return true;
    if (!(s->queued = (ecs__snap_log *)ecs__snap_alloc(s, q->evb_count * sizeof *s->queued))) return false;
    for (uint32_t k = 0; k < q->evb_count; k++) {
        const ecs__evbuf *b = &q->evb[k];
        if (!b->count) continue;
        ecs__snap_log *sq = &s->queued[s->queued_count++];
        sq->id = b->id;
        sq->base = 0;
        sq->end = b->count;
        if (!(sq->data = (unsigned char *)ecs__snap_alloc(s, (size_t)b->count * b->size))) return false;
        if (b->size) memcpy(sq->data, b->data, (size_t)b->count * b->size);
    }
    return true;
}

/* Room for a snapshot's events in the logs (before a restore changes anything). */
static bool ecs__events_room(ecs_world *w, const ecs_snapshot *s) {
    for (uint32_t i = 0; i < s->log_count; i++) {
        ecs__evlog *L = &w->ev.logs[w->reg.ids[s->logs[i].id].event - 1];
        size_t need = (size_t)(s->logs[i].end - s->logs[i].base), size = w->reg.ids[L->id].size, cap = 64;
        while (cap < need) cap *= 2;
        if ((need > L->cap || !L->data) &&
            !ecs__column_grow(w, &L->raw, &L->data, L->count, size ? size : 1, cap))
            return false;
        if (cap > L->cap) L->cap = (uint32_t)cap;
    }
    if (s->queued_count && !w->ev.waiting && !(w->ev.waiting = ecs__commands_new(w))) return false;
    for (uint32_t i = 0; i < s->queued_count; i++)
        if (!ecs__evbuf_room(w, w->ev.waiting, w->reg.ids[s->queued[i].id].event - 1, (size_t)s->queued[i].end))
            return false;
    return true;
}

/* The snapshot's unread events, readers' places and queued events (the
   world's queue is replaced); a type it has no events of starts empty, a
   reader it does not know sees what comes next. */
static void ecs__events_restore(ecs_world *w, const ecs_snapshot *s) {
    for (uint32_t l = 0; l < w->ev.log_count; l++) {
        ecs__evlog *L = &w->ev.logs[l];
        L->base = L->end = 0;
        L->count = 0;
    }
    for (uint32_t i = 0; i < s->log_count; i++) {
        const ecs__snap_log *sl = &s->logs[i];
        ecs__evlog *L = &w->ev.logs[w->reg.ids[sl->id].event - 1];
        size_t size = w->reg.ids[L->id].size;
        L->base = sl->base;
        L->end = sl->end;
        L->count = (uint32_t)(sl->end - sl->base);
        if (L->count && size) memcpy(L->data, sl->data, (size_t)L->count * size);
    }
    for (uint32_t si = 0; si < w->sys.system_count; si++) {
        ecs__system *sys = &w->sys.systems[si];
        for (uint32_t k = 0; k < sys->win_count; k++) {
            ecs__window *win = &sys->win[k];
            const ecs__evlog *L = &w->ev.logs[win->log];
            win->cursor = L->end;
            for (uint32_t c = 0; c < s->cursor_count; c++)
                if (s->cursors[c].system == si && s->cursors[c].id == L->id) win->cursor = s->cursors[c].cursor;
            if (win->cursor < L->base || win->cursor > L->end) win->cursor = L->end;
            win->lo = win->hi = win->cursor;
        }
    }
    ecs_commands *q = w->ev.waiting;
    if (!q) return;
    for (uint32_t k = 0; k < q->evb_count; k++) q->evb[k].count = 0;
    q->ev_count = 0;
    for (uint32_t i = 0; i < s->queued_count; i++) {   /* (ecs__events_room made them) */
        ecs__evbuf *b = ecs__evbuf_room(w, q, w->reg.ids[s->queued[i].id].event - 1, (size_t)s->queued[i].end);
        b->count = (uint32_t)s->queued[i].end;
        if (b->size) memcpy(b->data, s->queued[i].data, (size_t)b->count * b->size);
        q->ev_count = 1;
    }
}

/* Change stamps (>>change), when the world keeps them: the clock, each
   table's stamps (its rows' blocks; block 0 of an empty one), each system's
   latest run and each marked query's latest loop (by serial). */
static bool ecs__stamps_take(ecs_world *w, ecs_snapshot *s) {
    if (!w->chg.on) return true;
    s->has_stamps = true;
    s->tick = w->chg.tick;
    uint32_t marks = 0, gmarks = 0;
    for (uint32_t q = 0; q < w->qry.query_count; q++) {
        marks += (w->qry.queries[q]->changed | w->qry.queries[q]->tracked) != 0;
        gmarks += w->qry.queries[q]->gmark_count;
    }
    if (!(s->seen = (uint64_t *)ecs__snap_alloc(s, (size_t)w->sys.system_count * sizeof *s->seen)) ||
        !(s->marks = (ecs__snap_seen *)ecs__snap_alloc(s, (size_t)marks * sizeof *s->marks)) ||
        !(s->gmarks = (ecs__snap_gmark *)ecs__snap_alloc(s, (size_t)gmarks * sizeof *s->gmarks)))
        return false;
    s->seen_count = w->sys.system_count;
    for (uint32_t i = 0; i < w->sys.system_count; i++) s->seen[i] = w->sys.systems[i].seen;
    for (uint32_t q = 0; q < w->qry.query_count; q++) {
        const ecs_query *qq = w->qry.queries[q];
        if (!(qq->changed | qq->tracked)) continue;
        s->marks[s->mark_count].serial = qq->serial;
        s->marks[s->mark_count++].seen = qq->seen;
        for (uint32_t k = 0; k < qq->gmark_count; k++, s->gmark_count++) {
            s->gmarks[s->gmark_count].serial = qq->serial;
            s->gmarks[s->gmark_count].group = qq->gmarks[k].group;
            s->gmarks[s->gmark_count].seen = qq->gmarks[k].seen;
        }
    }
    for (uint32_t i = 0; i < s->table_count; i++) {
        const ecs__table *t = w->tab.tables[i];
        ecs__snap_table *st = &s->tables[i];
        uint32_t blocks = ecs__blocks(t->count ? t->count : 1), rows = t->column_count + 1;
        st->blocks = blocks < t->blocks ? blocks : t->blocks;
        if (!(st->stamps = (uint64_t *)ecs__snap_alloc(s, (size_t)rows * st->blocks * sizeof *st->stamps))) return false;
        for (uint32_t r = 0; r < rows; r++)
            for (uint32_t b = 0; b < st->blocks; b++)
                st->stamps[(size_t)r * st->blocks + b] = (uint64_t)ecs__load_relaxed(&t->stamps[(size_t)r * t->blocks + b]);
    }
    return true;
}

/* Room for the snapshot's stamps in its tables (map: the world's), before
   a restore changes anything. */
static bool ecs__stamps_room(ecs_world *w, const ecs_snapshot *s, ecs__table *const *map) {
    for (uint32_t i = 0; w->chg.on && s->has_stamps && i < s->table_count; i++)
        if (!ecs__stamps_fit(w, map[i], s->tables[i].blocks << ECS__BLOCK_SHIFT)) return false;
    for (uint32_t q = 0; w->chg.on && q < w->qry.query_count; q++) {   /* and the group marks */
        ecs_query *qq = w->qry.queries[q];
        uint32_t n = 0;
        for (uint32_t k = 0; k < s->gmark_count; k++) n += s->gmarks[k].serial == qq->serial;
        if (n <= qq->gmark_cap) continue;
        ecs__gmark *g = (ecs__gmark *)ecs__realloc(w, qq->gmarks, (size_t)n * sizeof *g);
        if (!g) return false;
        qq->gmarks = g;
        qq->gmark_cap = n;
    }
    return true;
}

/* The snapshot's stamps, clock and marks (a table it does not have: none,
   a system or query it does not know: everything counts); from a snapshot
   without stamps, everything counts as changed. */
static void ecs__stamps_restore(ecs_world *w, const ecs_snapshot *s, ecs__table *const *map) {
    if (!w->chg.on) return;
    if (!s->has_stamps) { ecs__stamps_all(w); return; }
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        ecs__table *t = w->tab.tables[i];
        for (size_t k = 0, n = ((size_t)t->column_count + 1) * t->blocks; k < n; k++) ecs__store_relaxed(&t->stamps[k], 0);
    }
    for (uint32_t i = 0; i < s->table_count; i++) {
        const ecs__snap_table *st = &s->tables[i];
        ecs__table *t = map[i];
        for (uint32_t r = 0; r <= t->column_count; r++)
            for (uint32_t b = 0; b < st->blocks; b++)
                ecs__store_relaxed(&t->stamps[(size_t)r * t->blocks + b], st->stamps[(size_t)r * st->blocks + b]);
    }
    w->chg.tick = s->tick;
    for (uint32_t i = 0; i < w->sys.system_count; i++) w->sys.systems[i].seen = i < s->seen_count ? s->seen[i] : 0;
    for (uint32_t q = 0; q < w->qry.query_count; q++) {
        ecs_query *qq = w->qry.queries[q];
        if (qq->sort) qq->sort->valid = false;   /* the stamps went back: sort everything again */
        qq->seen = 0;
        qq->gmark_count = 0;
        for (uint32_t k = 0; k < s->mark_count; k++)
            if (s->marks[k].serial == qq->serial) qq->seen = s->marks[k].seen;
        for (uint32_t k = 0; k < s->gmark_count; k++)   /* (room made by ecs__stamps_room) */
            if (s->gmarks[k].serial == qq->serial) {
                qq->gmarks[qq->gmark_count].group = s->gmarks[k].group;
                qq->gmarks[qq->gmark_count++].seen = s->gmarks[k].seen;
            }
    }
}

ECS_API ecs_snapshot *ecs_snapshot_take(ecs_world *w) {
    static const char fn[] = "ecs_snapshot_take";
    if (!w || ecs__snap_busy(w, fn)) return NULL;
    for (uint32_t i = 0; i < w->tab.born; i++)   /* values that cannot be copied */
        for (uint32_t c = 0; w->tab.tables[i]->count && c < w->tab.tables[i]->column_count; c++) {
            const ecs__idinfo *in = &w->reg.ids[w->tab.tables[i]->columns[c].id];
            if (in->dtor && !in->copy) {
                ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" has a dtor but no copy hook: its values cannot be "
                          "copied", fn, in->name);
                return NULL;
            }
        }
    for (uint32_t i = 1; i <= w->reg.id_count; i++)
        if (w->reg.ids[i].resource && w->reg.ids[i].dtor && !w->reg.ids[i].copy) {
            ecs__fail(w, ECS_ERR_ARG, "%s: resource \"%s\" has a dtor but no copy hook: it cannot be "
                      "copied", fn, w->reg.ids[i].name);
            return NULL;
        }
    ecs_snapshot *s = ecs__snap_new(w, w->tab.born);   /* the others are empty and "not yet made" */
    if (!s) { ECS__OOM(w, fn); return NULL; }
    s->record_count = w->ent.record_count;
    s->free_head = w->ent.free_head;
    s->free_count = w->ent.free_count;
    s->alive = w->ent.alive;
    s->dropped = w->cmd.dropped;
    s->rel_count = w->hier.rels ? (w->hier.rel_cap < w->ent.record_count ? w->hier.rel_cap : w->ent.record_count) : 0;
    if (!(s->records = (ecs__record *)ecs__snap_alloc(s, (size_t)w->ent.record_count * sizeof *s->records)) ||
        (s->rel_count && !(s->rels = (ecs__rel *)ecs__snap_alloc(s, (size_t)s->rel_count * sizeof *s->rels))) ||
        !(s->clocks = (ecs__snap_clock *)ecs__snap_alloc(s, (size_t)w->sys.stage_count * sizeof *s->clocks)))
        goto oom;
    s->has_clock = true;
    s->has_seed = true;
    s->random_seed = w->random_seed;
    s->frame = w->sched.frame;
    s->time_scale = ecs__scale(w);
    s->clock_count = w->sys.stage_count;
    for (uint32_t i = 0; i < w->sys.stage_count; i++) {
        const ecs__stage *sd = &w->sys.stages[i];
        s->clocks[i].turns = sd->turns;
        s->clocks[i].acc = sd->acc;
        s->clocks[i].dropped = sd->dropped;
    }
    if (w->ent.record_count) memcpy(s->records, w->ent.records, (size_t)w->ent.record_count * sizeof *s->records);
    if (s->rel_count) memcpy(s->rels, w->hier.rels, (size_t)s->rel_count * sizeof *s->rels);
    for (uint32_t i = 0; i < w->tab.born; i++, s->table_count++) {
        const ecs__table *t = w->tab.tables[i];
        ecs__snap_table *st = &s->tables[i];
        if (!ecs__snap_table_alloc(s, st, t->ids, t->id_count, t->count, true)) { s->table_count++; goto oom; }
        if (t->count) memcpy(st->entities, t->entities, (size_t)t->count * sizeof *t->entities);
        for (uint32_t c = 0; c < t->column_count; c++)
            ecs__values_copy(&w->reg.ids[t->columns[c].id], st->values[c], t->columns[c].data, t->count);
        st->count = t->count;
    }
    for (uint32_t i = 1; i <= w->reg.id_count; i++) {
        const ecs__idinfo *in = &w->reg.ids[i];
        if (!in->resource) continue;
        if (!(s->ids[i].value = (unsigned char *)ecs__snap_alloc(s, in->size))) goto oom;
        ecs__values_copy(in, s->ids[i].value, (const unsigned char *)in->data, 1);
    }
    if (!ecs__events_take(w, s) || !ecs__stamps_take(w, s)) goto oom;
    return s;
oom:
    ecs_snapshot_free(s);
    ECS__OOM(w, fn);
    return NULL;
}

/* Puts the tables in order first (in that order), the others after them as
   they were: query iteration then visits tables as the snapshot's world did. */
static void ecs__tables_reorder(ecs_world *w, ecs__table **order, uint32_t n, ecs__table **scratch) {
    bool same = true;
    for (uint32_t i = 0; i < n; i++) same &= order[i]->index == i;
    if (same) return;
    uint32_t k = 0, *old_to_new = (uint32_t *)(void *)(scratch + w->tab.table_count);
    for (uint32_t i = 0; i < n; i++) { scratch[k++] = order[i]; order[i]->lock = 1; }
    for (uint32_t i = 0; i < w->tab.table_count; i++)
        if (!w->tab.tables[i]->lock) scratch[k++] = w->tab.tables[i];
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        old_to_new[scratch[i]->index] = i;
        scratch[i]->lock = 0;
    }
    for (uint32_t i = 0; i < w->tab.table_count; i++) { w->tab.tables[i] = scratch[i]; scratch[i]->index = i; }
    for (uint32_t i = 0; i < w->tab.table_sets.cap; i++)
        if (w->tab.table_sets.keys[i]) w->tab.table_sets.vals[i] = old_to_new[w->tab.table_sets.vals[i]];
    for (uint32_t q = 0; q < w->qry.query_count; q++) {   /* same tables, now in the new order */
        ecs_query *qq = w->qry.queries[q];
        qq->match_count = 0;
        for (uint32_t i = 0; i < w->tab.table_count; i++)
            if (ecs__query_match(qq, w->tab.tables[i], &qq->matches[qq->match_count])) qq->match_count++;
    }
}

/* After a restore, the tables beyond the snapshot's first n did not exist
   yet: cached transitions into them go (an edge is only a cache), so the
   next step there makes them again, in order (ecs__table_birth). */
static void ecs__tables_unborn(ecs_world *w, uint32_t n) {
    w->tab.born = n;
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        ecs__table *t = w->tab.tables[i];
        for (int k = 0; k < 2 * ECS__EDGE_LO; k++)
            if (t->edge_lo[k] && t->edge_lo[k]->dst->index >= n) { ecs__free(w, t->edge_lo[k]); t->edge_lo[k] = NULL; }
        for (uint32_t k = 0; k < t->edges.cap; k++) {
            ecs__edge_to *e = (ecs__edge_to *)(uintptr_t)t->edges.vals[k];
            if (t->edges.keys[k] && e && e->dst->index >= n) { ecs__free(w, e); t->edges.vals[k] = 0; }
        }
    }
}

/* The simulation clock: stages beyond the snapshot's start from zero. A
   system's last run may lie in the frames that are now to come again: it
   counts as the frame before them (its stats then skip no frame). */
static void ecs__clock_restore(ecs_world *w, const ecs_snapshot *s) {
    w->sched.frame = s->frame;
    w->stats.frame_stats.frames = s->frame;
    ecs__scale_set(w, s->time_scale);
    for (uint32_t i = 0; i < w->sys.stage_count; i++) {
        ecs__stage *sd = &w->sys.stages[i];
        ecs__snap_clock c = {0, 0, 0};
        if (i < s->clock_count) c = s->clocks[i];
        sd->turns = c.turns;
        sd->acc = c.acc;
        sd->dropped = c.dropped;
    }
    for (uint32_t i = 0; i < w->sys.system_count; i++)
        if (w->sys.systems[i].last_frame > s->frame) w->sys.systems[i].last_frame = s->frame;
}

ECS_API ecs_result ecs_snapshot_restore(ecs_world *w, const ecs_snapshot *s) {
    static const char fn[] = "ecs_snapshot_restore";
    if (!w) return ECS_ERR_ARG;
    if (!s) return ecs__fail(w, ECS_ERR_ARG, "%s: snapshot is NULL", fn);
    ecs_result r = ecs__snap_busy(w, fn);
    if (r) return r;
    if (s->id_count > w->reg.id_count || ecs__fingerprint(w, s->id_count) != s->fingerprint)
        return ecs__fail(w, ECS_ERR_ARG, "%s: the snapshot was taken with other registered components "
                         "(its %u ids differ from this world's first ones)", fn, (unsigned)s->id_count);
    /* Everything that may fail first: tables, room in them, slots, links. */
    ecs__table **scratch = NULL, **map = (ecs__table **)ecs__alloc(w, (size_t)s->table_count * sizeof *map + 1);
    if (!map) return ECS__OOM(w, fn);
    for (uint32_t i = 0; i < s->table_count; i++) {
        const ecs__snap_table *st = &s->tables[i];
        if (!(map[i] = ecs__table_find(w, st->ids, st->id_count)) &&
            !(map[i] = ecs__table_new(w, st->ids, st->id_count))) goto oom;
        if (!ecs__table_reserve(w, map[i], st->count)) goto oom;
    }
    scratch = (ecs__table **)ecs__alloc(w, (size_t)w->tab.table_count * (sizeof(void *) + 4) + 1);
    if (!scratch || !ecs__events_room(w, s) || !ecs__stamps_room(w, s, map) ||
        !ECS__RESERVE(w, w->ent.records, w->ent.record_cap, s->record_count ? s->record_count : 1) ||
        (s->rel_count && !ecs__rels_reserve(w, s->rel_count - 1))) {
        ecs__free(w, scratch);
        goto oom;
    }
    /* From here on nothing fails. What the world holds goes (dtor, no events). */
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        ecs__table *t = w->tab.tables[i];
        for (uint32_t c = 0; t->hooked && t->count && c < t->column_count; c++) {
            const ecs__idinfo *in = &w->reg.ids[t->columns[c].id];
            ecs__destruct(in, t->columns[c].data, t->count);
        }
        t->count = 0;
    }
    if (s->record_count) memcpy(w->ent.records, s->records, (size_t)s->record_count * sizeof *s->records);
    w->ent.record_count = s->record_count;
    w->ent.free_head = s->free_head;
    w->ent.free_count = s->free_count;
    w->ent.alive = s->alive;
    w->cmd.dropped = s->dropped;
    if (w->hier.rels) {
        memset(w->hier.rels, 0, (size_t)w->hier.rel_cap * sizeof *w->hier.rels);
        if (s->rel_count) memcpy(w->hier.rels, s->rels, (size_t)s->rel_count * sizeof *s->rels);
    }
    for (uint32_t i = 0; i < s->table_count; i++) {
        const ecs__snap_table *st = &s->tables[i];
        ecs__table *t = map[i];
        if (st->count) memcpy(t->entities, st->entities, (size_t)st->count * sizeof *t->entities);
        for (uint32_t c = 0; c < t->column_count; c++)
            ecs__values_copy(&w->reg.ids[t->columns[c].id], t->columns[c].data, st->values[c], st->count);
        t->count = st->count;
    }
    ecs__tables_reorder(w, map, s->table_count, scratch);
    ecs__tables_unborn(w, s->table_count);
    for (uint32_t i = 0; i < s->table_count; i++) {   /* records name tables by index */
        const ecs__table *t = map[i];
        for (uint32_t row = 0; row < t->count; row++) {
            ecs__record *rec = &w->ent.records[ecs__index(t->entities[row])];
            rec->table = t->index;
            rec->row = row;
        }
    }
    for (uint32_t i = 1; i <= s->id_count; i++) {
        const ecs__idinfo *in = &w->reg.ids[i];
        if (!in->resource || !s->ids[i].value) continue;   /* a file may lack one */
        ecs__copy_into(in, (unsigned char *)in->data, s->ids[i].value, 1);
    }
    if (s->has_clock) ecs__clock_restore(w, s);
    if (s->has_seed) w->random_seed = s->random_seed;
    ecs__events_restore(w, s);
    ecs__stamps_restore(w, s, map);
    ecs__free(w, scratch);
    ecs__free(w, map);
    return ECS_OK;
oom:
    ecs__free(w, map);
    return ECS__OOM(w, fn);
}

/* ---- >>savefile: save files ---------------------------------------------- */
/* "ECSHSNAP", version, then little-endian fields (see ecs_snapshot_write),
   component bytes as they are, a checksum at the end. */
#define ECS__FILE_VERSION 7u   /* 2 added the clock, 3 unread events, 4 change stamps, 5 groups' marks,
                                  6 the length up front and the random seed, 7 the checksum of sums;
                                  older files still read */
/* Where the bytes go: a write callback, or nowhere (counting them, for
   the length up front and ecs_snapshot_size). Buffered: small fields cost
   a store, not a call. */
typedef struct ecs__out {
    ecs_write_fn write;      /* NULL: count only */
    void *ctx;
    ecs__sum h;
    ecs_result failed;       /* the first error write returned */
    uint64_t total;          /* bytes so far */
    uint32_t n;
    unsigned char buf[1 << 15];
} ecs__out;

/* Pieces of a big column are checksummed just before write reads them,
   so write finds them in the cache. */
#define ECS__PIECE ((size_t)1 << 16)

static void ecs__out_bytes(ecs__out *o, const void *p, size_t n) {
    o->total += n;
    if (!o->write) return;
    for (const unsigned char *b = (const unsigned char *)p; n && !o->failed;) {
        size_t k = n < ECS__PIECE ? n : ECS__PIECE;
        ecs__sum_feed(&o->h, b, k);
        o->failed = o->write(b, k, o->ctx);
        b += k;
        n -= k;
    }
}

static void ecs__out_flush(ecs__out *o) { ecs__out_bytes(o, o->buf, o->n); o->n = 0; }

static void ecs__put(ecs__out *o, const void *p, size_t n) {
    if (!o->write) { o->total += n; return; }   /* counting */
    if (n > sizeof o->buf - o->n) ecs__out_flush(o);
    if (n <= sizeof o->buf) { memcpy(o->buf + o->n, p, n); o->n += (uint32_t)n; return; }
    ecs__out_bytes(o, p, n);   /* a big column: straight through */
}

static void ecs__put_u32(ecs__out *o, uint32_t v) {
    if (!o->write) { o->total += 4; return; }
    if (sizeof o->buf - o->n < 4) ecs__out_flush(o);
    unsigned char *b = o->buf + o->n;
    b[0] = (unsigned char)v; b[1] = (unsigned char)(v >> 8); b[2] = (unsigned char)(v >> 16); b[3] = (unsigned char)(v >> 24);
    o->n += 4;
}

static void ecs__put_u64(ecs__out *o, uint64_t v) { ecs__put_u32(o, (uint32_t)v); ecs__put_u32(o, (uint32_t)(v >> 32)); }

static bool ecs__host_le(void) { const uint16_t one = 1; unsigned char b; memcpy(&b, &one, 1); return b == 1; }

/* n structs of `words` u32 fields (a u64 counts as two, low first): on a
   little-endian host their bytes as they are, in one piece. */
static void ecs__put_u32s(ecs__out *o, const void *p, size_t n, size_t words) {
    if (ecs__host_le()) { ecs__put(o, p, n * words * 4); return; }
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n * words; i++) { uint32_t v; memcpy(&v, b + 4 * i, 4); ecs__put_u32(o, v); }
}

static uint64_t ecs__bits_f64(double v) { uint64_t b; memcpy(&b, &v, 8); return b; }
static double   ecs__f64_bits(uint64_t b) { double v; memcpy(&v, &b, 8); return v; }

/* The clock: whether there is one (a snapshot read from a version 1 file
   has none, and a restore then keeps the world's), frame, time scale, per
   stage turns, accumulator, dropped time (floating point as IEEE bits). */
static void ecs__put_clock(ecs__out *o, const ecs_snapshot *s) {
    uint32_t scale;
    memcpy(&scale, &s->time_scale, 4);
    ecs__put_u32(o, s->has_clock);
    if (!s->has_clock) return;
    ecs__put_u64(o, s->frame);
    ecs__put_u32(o, scale);
    ecs__put_u32(o, s->clock_count);
    for (uint32_t i = 0; i < s->clock_count; i++) {
        ecs__put_u64(o, s->clocks[i].turns);
        ecs__put_u64(o, ecs__bits_f64(s->clocks[i].acc));
        ecs__put_u64(o, ecs__bits_f64(s->clocks[i].dropped));
    }
}

/* Values of an id, serialized (each as u32 length + bytes) or as raw bytes. */
static bool ecs__put_values(ecs__out *o, ecs_snapshot *s, const ecs__snap_id *in, const unsigned char *v,
                            uint32_t n, unsigned char **buf, size_t *cap) {
    if (!in->serialize) { ecs__put(o, v, (size_t)n * in->size); return true; }
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *value = v + (size_t)i * in->size;
        size_t need = in->serialize(value, *buf, *cap, in->ctx);
        if (need > UINT32_MAX) return false;
        if (need > *cap) {
            ecs__snap_mfree(s, *buf);
            *cap = 0;
            if (!(*buf = (unsigned char *)ecs__snap_alloc(s, need))) return false;
            *cap = need;
            need = in->serialize(value, *buf, *cap, in->ctx);
            if (need > *cap) return false;
        }
        ecs__put_u32(o, (uint32_t)need);
        ecs__put(o, *buf, need);
    }
    return true;
}

/* The change stamps (version 4): a flag; then the clock, each system's and
   marked query's mark, its groups' marks (version 5), and per table its
   blocks, its rows of stamps and those rows: its entities' rows', then each
   column's (after its file id). */
static void ecs__put_stamps(ecs__out *o, const ecs_snapshot *s) {
    ecs__put_u32(o, s->has_stamps);
    if (!s->has_stamps) return;
    ecs__put_u64(o, s->tick);
    ecs__put_u32(o, s->seen_count);
    for (uint32_t i = 0; i < s->seen_count; i++) ecs__put_u64(o, s->seen[i]);
    ecs__put_u32(o, s->mark_count);
    for (uint32_t i = 0; i < s->mark_count; i++) { ecs__put_u64(o, s->marks[i].serial); ecs__put_u64(o, s->marks[i].seen); }
    ecs__put_u32(o, s->gmark_count);   /* (version 5) */
    for (uint32_t i = 0; i < s->gmark_count; i++) {
        ecs__put_u64(o, s->gmarks[i].serial);
        ecs__put_u64(o, s->gmarks[i].group);
        ecs__put_u64(o, s->gmarks[i].seen);
    }
    for (uint32_t t = 0; t < s->table_count; t++) {
        const ecs__snap_table *st = &s->tables[t];
        ecs__put_u32(o, st->blocks);
        ecs__put_u32(o, st->column_count + 1);
        for (uint32_t k = 0, c = 0; k <= st->id_count; k++) {   /* k 0: the rows; then the sized ids */
            if (k && !s->ids[st->ids[k - 1]].size) continue;
            if (k) ecs__put_u32(o, st->ids[k - 1]);
            const uint64_t *row = st->stamps + (size_t)(k ? ++c : 0) * st->blocks;
            for (uint32_t b = 0; b < st->blocks; b++) ecs__put_u64(o, row[b]);
        }
    }
}

/* Everything after the length: ids, entities, tables, values, events,
   stamps, the seed. False when a serialize hook fails (or memory runs out). */
static bool ecs__save_body(ecs__out *o, ecs_snapshot *s, unsigned char **buf, size_t *cap) {
    bool ok = true;
    ecs__put_u32(o, s->id_count);
    for (uint32_t i = 1; i <= s->id_count; i++) {
        const ecs__snap_id *in = &s->ids[i];
        uint32_t len = (uint32_t)strlen(in->name);
        ecs__put_u32(o, len);
        ecs__put(o, in->name, len);
        ecs__put_u32(o, in->size);
        ecs__put_u32(o, (uint32_t)in->resource | (uint32_t)(in->serialize != NULL) << 1 | (uint32_t)in->event << 2);
    }
    ecs__put_u32(o, s->record_count);
    ecs__put_u32(o, s->free_head);
    ecs__put_u32(o, s->free_count);
    ecs__put_u32(o, s->alive);
    ecs__put_u64(o, (uint64_t)s->dropped);
    ecs__put_clock(o, s);
    ecs__put_u32s(o, s->records, s->record_count, 3);   /* table, row, gen */
    ecs__put_u32(o, s->rel_count);
    for (uint32_t i = 0; i < s->rel_count; i++) {
        const ecs__rel *r = &s->rels[i];
        ecs__put_u64(o, r->parent);
        ecs__put_u32(o, r->first); ecs__put_u32(o, r->last);
        ecs__put_u32(o, r->next); ecs__put_u32(o, r->prev);
    }
    ecs__put_u32(o, s->table_count);
    for (uint32_t t = 0; ok && t < s->table_count; t++) {
        const ecs__snap_table *st = &s->tables[t];
        ecs__put_u32(o, st->id_count);
        for (uint32_t k = 0; k < st->id_count; k++) ecs__put_u32(o, st->ids[k]);
        ecs__put_u32(o, st->count);
        if (ecs__host_le() || !o->write) ecs__put(o, st->entities, (size_t)st->count * 8);
        else for (uint32_t r = 0; r < st->count; r++) ecs__put_u64(o, st->entities[r]);
        for (uint32_t k = 0, c = 0; ok && k < st->id_count; k++)
            if (s->ids[st->ids[k]].size)
                ok = ecs__put_values(o, s, &s->ids[st->ids[k]], st->values[c++], st->count, buf, cap);
    }
    for (uint32_t i = 1; ok && i <= s->id_count; i++)
        if (s->ids[i].resource && s->ids[i].value)
            ok = ecs__put_values(o, s, &s->ids[i], s->ids[i].value, 1, buf, cap);
    ecs__put_u32(o, s->log_count);   /* unread events, then the readers' places */
    for (uint32_t i = 0; ok && i < s->log_count; i++) {
        const ecs__snap_log *sl = &s->logs[i];
        ecs__put_u32(o, sl->id);
        ecs__put_u64(o, sl->base);
        ecs__put_u64(o, sl->end);
        ok = ecs__put_values(o, s, &s->ids[sl->id], sl->data, (uint32_t)(sl->end - sl->base), buf, cap);
    }
    ecs__put_u32(o, s->cursor_count);
    for (uint32_t i = 0; i < s->cursor_count; i++) {
        ecs__put_u32(o, s->cursors[i].system);
        ecs__put_u32(o, s->cursors[i].id);
        ecs__put_u64(o, s->cursors[i].cursor);
    }
    ecs__put_u32(o, s->queued_count);
    for (uint32_t i = 0; ok && i < s->queued_count; i++) {
        ecs__put_u32(o, s->queued[i].id);
        ecs__put_u32(o, (uint32_t)s->queued[i].end);
        ok = ecs__put_values(o, s, &s->ids[s->queued[i].id], s->queued[i].data, (uint32_t)s->queued[i].end, buf, cap);
    }
    ecs__put_stamps(o, s);
    ecs__put_u64(o, s->has_seed ? s->random_seed : 0);   /* (version 6) */
    return ok;
}

/* The snapshot's bytes to o: counting (o->write NULL) or written. */
static bool ecs__save_pass(ecs__out *o, ecs_snapshot *s, uint64_t length) {
    unsigned char *buf = NULL;
    size_t cap = 0;
    o->failed = ECS_OK;
    o->total = 0;
    o->n = 0;
    memset(&o->h, 0, sizeof o->h);
    ecs__put(o, "ECSHSNAP", 8);
    ecs__put_u32(o, ECS__FILE_VERSION);
    ecs__put_u64(o, length);   /* (version 6) */
    bool ok = ecs__save_body(o, s, &buf, &cap);
    ecs__snap_mfree(s, buf);
    ecs__out_flush(o);
    ecs__put_u64(o, ecs__sum_done(&o->h));
    ecs__out_flush(o);
    return ok;
}

/* Whether every value s holds can be written (the error set if not). */
static ecs_result ecs__save_check(ecs_snapshot *s, const char *fn) {
    for (uint32_t i = 1; i <= s->id_count; i++) {
        const ecs__snap_id *in = &s->ids[i];
        bool used = in->value != NULL;
        for (uint32_t t = 0; !used && t < s->table_count; t++)
            for (uint32_t k = 0; s->tables[t].count && k < s->tables[t].id_count; k++) used |= s->tables[t].ids[k] == i;
        if (used && in->owning && !in->serialize)
            return ecs__fail(s->world, ECS_ERR_ARG, "%s: \"%s\" has lifecycle hooks but no serialize/deserialize "
                             "hooks, so its values cannot be written", fn, in->name);
    }
    return ECS_OK;
}

/* The length of s's bytes (a pass that only counts them); *po gets the
   buffer for the writing pass. */
static ecs_result ecs__save_length(ecs_snapshot *s, ecs__out **po, uint64_t *length, const char *fn) {
    *po = NULL;
    ecs_result r = ecs__save_check(s, fn);
    if (r) return r;
    ecs__out *o = (ecs__out *)ecs__snap_alloc(s, sizeof *o);
    if (!o) return ECS__OOM(s->world, fn);
    o->write = NULL;
    if (!ecs__save_pass(o, s, 0)) {
        ecs__snap_mfree(s, o);
        return ecs__fail(s->world, ECS_ERR_ARG, "%s: a serialize hook failed (or memory ran out)", fn);
    }
    *po = o;
    *length = o->total;
    return ECS_OK;
}

ECS_API size_t ecs_snapshot_size(const ecs_snapshot *cs) {
    if (!cs) return 0;
    ecs_snapshot *s = (ecs_snapshot *)cs;   /* only its allocator is used */
    ecs__out *o;
    uint64_t n = 0;
    if (ecs__save_length(s, &o, &n, "ecs_snapshot_size")) return 0;
    ecs__snap_mfree(s, o);
    return n <= SIZE_MAX ? (size_t)n : 0;
}

static ecs_result ecs__save(const ecs_snapshot *cs, ecs_write_fn write, void *ctx, const char *fn) {
    if (!cs) return ECS_ERR_ARG;
    ecs_snapshot *s = (ecs_snapshot *)cs;
    if (!write) return ecs__fail(s->world, ECS_ERR_ARG, "%s: no write callback", fn);
    ecs__out *o;
    uint64_t length = 0;
    ecs_result r = ecs__save_length(s, &o, &length, fn);   /* for the length up front */
    if (r) return r;
    o->write = write;
    o->ctx = ctx;
    bool ok = ecs__save_pass(o, s, length);
    ecs_result failed = o->failed;
    uint64_t total = o->total;
    ecs__snap_mfree(s, o);
    if (failed) return ecs__fail(s->world, failed, "%s: the write callback failed (%d)", fn, (int)failed);
    if (!ok || total != length)   /* a serialize hook that says something else the second time */
        return ecs__fail(s->world, ECS_ERR_ARG, "%s: a serialize hook failed, or gave other bytes the second time", fn);
    return ECS_OK;
}

ECS_API ecs_result ecs_snapshot_save(const ecs_snapshot *s, ecs_write_fn write, void *ctx) {
    return ecs__save(s, write, ctx, "ecs_snapshot_save");
}

#ifndef ECS_NO_STDIO
static ecs_result ecs__file_write(const void *bytes, size_t size, void *ctx) {
    return fwrite(bytes, 1, size, (FILE *)ctx) == size ? ECS_OK : ECS_ERR_ARG;
}

ECS_API ecs_result ecs_snapshot_write(const ecs_snapshot *s, FILE *out) {
    if (s && !out) return ecs__fail(s->world, ECS_ERR_ARG, "ecs_snapshot_write: out is NULL");
    ecs_result r = ecs__save(s, ecs__file_write, out, "ecs_snapshot_write");
    if (!r && fflush(out)) r = ecs__fail(s->world, ECS_ERR_ARG, "ecs_snapshot_write: writing the file failed");
    return r;
}
#endif

/* Reading: the whole file in memory, checked before anything is built. */
typedef struct ecs__in {
    const unsigned char *p, *end;
    bool bad;
    const char *fn;          /* for messages */
    uint8_t first;           /* a first layout: 1 version 2's (no clock flag), 2 version 3's (no
                                queued events) */
} ecs__in;
static const unsigned char *ecs__get_bytes(ecs__in *r, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) { r->bad = true; return NULL; }
    const unsigned char *p = r->p;
    r->p += n;
    return p;
}

static uint32_t ecs__get_u32(ecs__in *r) {
    const unsigned char *p = ecs__get_bytes(r, 4);
    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}

static uint64_t ecs__get_u64(ecs__in *r) { uint64_t lo = ecs__get_u32(r); return lo | (uint64_t)ecs__get_u32(r) << 32; }

/* n values of in from the file into raw storage v (constructed after). */
static bool ecs__get_values(ecs__in *r, const ecs__idinfo *in, bool serialized, unsigned char *v, uint32_t n) {
    if (!serialized) {
        const unsigned char *p = ecs__get_bytes(r, (size_t)n * in->size);
        if (p && n) memcpy(v, p, (size_t)n * in->size);
        return p != NULL;
    }
    ecs__construct(in, v, n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = ecs__get_u32(r);
        const unsigned char *p = ecs__get_bytes(r, len);
        if (!p || !in->deserialize(v + (size_t)i * in->size, p, len, in->ctx)) return r->bad = true, false;
    }
    return true;
}

/* A file's clock section (r at its start) into s, or only checked and
   skipped when s is NULL. ECS_ERR_ARG for a bad one, ECS_ERR_NOMEM. */
static ecs_result ecs__get_clock(ecs__in *r, ecs_snapshot *s) {
    uint32_t has = r->first == 1 ? 1 : ecs__get_u32(r);
    if (has > 1) return r->bad = true, ECS_ERR_ARG;
    if (!has) return ECS_OK;
    uint64_t frame = ecs__get_u64(r);
    uint32_t bits = ecs__get_u32(r), n = ecs__get_u32(r);
    float scale;
    memcpy(&scale, &bits, 4);
    if (r->bad || n > (size_t)(r->end - r->p) / 24 || !(scale >= 0 && scale <= FLT_MAX)) return r->bad = true, ECS_ERR_ARG;
    if (s && !(s->clocks = (ecs__snap_clock *)ecs__snap_alloc(s, (size_t)n * sizeof *s->clocks))) return ECS_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        ecs__snap_clock c;
        c.turns = ecs__get_u64(r);
        c.acc = ecs__f64_bits(ecs__get_u64(r));
        c.dropped = ecs__f64_bits(ecs__get_u64(r));
        if (!(c.acc >= 0 && c.acc <= DBL_MAX && c.dropped >= 0 && c.dropped <= DBL_MAX)) return r->bad = true, ECS_ERR_ARG;
        if (s) s->clocks[i] = c;
    }
    if (s) { s->has_clock = true; s->frame = frame; s->time_scale = scale; s->clock_count = n; }
    return ECS_OK;
}

/* The checks that make a read snapshot safe to restore: every live slot is
   one row of one table and back, the free list is a list, and parents form
   trees whose child lists agree with the parents. */
static bool ecs__snap_sane(const ecs_snapshot *s, uint32_t *mark) {
    uint32_t n = s->record_count, live = 0;
    memset(mark, 0, (size_t)n * sizeof *mark);
    for (uint32_t i = 0; i < n; i++) {
        const ecs__record *rc = &s->records[i];
        if (rc->gen < 1 || rc->gen > ECS__GEN_MAX || rc->table == ECS__RESERVED) return false;
        if (rc->table != ECS__NONE) {
            if (rc->table >= s->table_count || rc->row >= s->tables[rc->table].count) return false;
            live++;
        }
    }
    if (live != s->alive) return false;
    uint32_t rows = 0;
    for (uint32_t t = 0; t < s->table_count; t++)
        for (uint32_t row = 0; row < s->tables[t].count; row++, rows++) {
            ecs_entity e = s->tables[t].entities[row];
            uint32_t i = ecs__index(e);
            if (i >= n || s->records[i].table != t || s->records[i].row != row || s->records[i].gen != ecs__gen(e))
                return false;
        }
    if (rows != live) return false;
    uint32_t at = s->free_head;
    for (uint32_t k = 0; k < s->free_count; k++) {   /* a list through free slots, each once */
        if (at >= n || s->records[at].table != ECS__NONE || mark[at]) return false;
        mark[at] = 1;
        at = s->records[at].row;
    }
    if (at != ECS__NONE) return false;
    if (!s->rels) return true;
    uint32_t with_parent = 0, reached = 0, top = 0;
    for (uint32_t i = 0; i < s->rel_count; i++) {
        const ecs__rel *r = &s->rels[i];
        bool alive = s->records[i].table != ECS__NONE;
        if (!alive && (r->parent | r->first | r->last | r->next | r->prev)) return false;
        if (r->first > n || r->last > n || r->next > n || r->prev > n) return false;
        if (r->parent) {
            uint32_t p = ecs__index(r->parent);
            if (p >= s->rel_count || p == i || s->records[p].table == ECS__NONE ||
                s->records[p].gen != ecs__gen(r->parent))
                return false;
            with_parent++;
        } else if (r->next | r->prev) {
            return false;
        }
    }
    for (uint32_t p = 0; p < s->rel_count; p++) {   /* child lists agree with the parents */
        uint32_t prev = 0, steps = 0, x = s->rels[p].first;
        ecs_entity h = ecs__handle(p, s->records[p].gen);
        for (; x; prev = x, x = s->rels[x - 1].next) {
            if (x - 1 >= s->rel_count || s->rels[x - 1].parent != h || s->rels[x - 1].prev != prev ||
                ++steps > s->rel_count)
                return false;
        }
        if (s->rels[p].last != prev) return false;
    }
    memset(mark, 0, (size_t)n * sizeof *mark);   /* no loops: every child is reached from a root */
    for (uint32_t i = 0; i < s->rel_count; i++) {
        if (s->records[i].table == ECS__NONE || s->rels[i].parent) continue;
        mark[top++] = i;
        while (top) {
            uint32_t x = mark[--top];
            for (uint32_t c = s->rels[x].first; c; c = s->rels[c - 1].next) {
                if (top >= n) return false;
                mark[top++] = c - 1;
                reached++;
            }
        }
    }
    return reached == with_parent;
}

/* The file's ids matched to w's by name, size, kind and hooks (0: no match;
   an error for a resource, which always has a value). */
static bool ecs__read_ids(ecs_world *w, ecs__in *r, uint32_t nids, uint32_t *fmap, unsigned char *flags) {
    char name[256];
    for (uint32_t i = 1; i <= nids; i++) {
        uint32_t len = ecs__get_u32(r);
        const unsigned char *nm = ecs__get_bytes(r, len);
        uint32_t sz = ecs__get_u32(r), fl = ecs__get_u32(r);
        if (r->bad || len == 0 || len >= sizeof name || fl > 7 || (fl & 5) == 5 || memchr(nm, 0, len))
            return r->bad = true, false;
        memcpy(name, nm, len);
        name[len] = 0;
        ecs_id id = ecs__id_find(w, name);
        const ecs__idinfo *wi = id ? &w->reg.ids[id] : NULL;
        bool ser = fl & 2;
        fmap[i] = wi && wi->size == sz && wi->resource == (bool)(fl & 1) && (wi->event != 0) == (bool)(fl & 4) &&
                  (ser ? wi->deserialize != NULL : !wi->lifecycle) ? id : 0;
        flags[i] = (unsigned char)fl;
        if (!fmap[i] && (fl & 5)) {   /* kept whole or not at all: the file would not restore */
            ecs__fail(w, ECS_ERR_ARG, "%s: the file's %s \"%s\" (size %u) is not one "
                      "this world can take (%s)", r->fn, fl & 1 ? "resource" : "event type", name, (unsigned)sz,
                      !wi ? "not registered" : wi->size != sz ? "another size" : "another kind, or other hooks");
            return false;
        }
    }
    return true;
}

/* One table of the file into the snapshot (its ids in w's numbering, sorted;
   the columns follow). work: 5 arrays of nids + 1. ECS_OK, ECS_ERR_ARG with
   the error set, or ECS_ERR_NOMEM; r->bad for a bad file. */
static ecs_result ecs__read_table(ecs_world *w, ecs_snapshot *s, ecs__in *r, uint32_t t, uint32_t nids,
                                  const uint32_t *fmap, const unsigned char *flags, uint32_t *work,
                                  uint32_t *tmap, uint64_t *sets) {
    uint32_t *from = work, *ids = work + nids + 1, *order = ids + nids + 1, *colpos = order + nids + 1,
             *where = colpos + nids + 1;
    uint32_t n = ecs__get_u32(r), unknown = 0;
    tmap[t] = ECS__NONE;
    if (r->bad || n > nids || (t == 0 && n)) return r->bad = true, ECS_ERR_ARG;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t f = ecs__get_u32(r);
        if (f < 1 || f > nids || (k && f <= from[k - 1]) || (flags[f] & 5)) return r->bad = true, ECS_ERR_ARG;
        from[k] = f;
        unknown += !fmap[f];
    }
    uint32_t count = ecs__get_u32(r);
    if (r->bad || count > ECS__MAX_ROWS || count > (size_t)(r->end - r->p) / 8) return r->bad = true, ECS_ERR_ARG;
    if (unknown) {   /* a table with ids this world lacks must be empty */
        if (!count) return ECS_OK;
        return ecs__fail(w, ECS_ERR_ARG, "%s: entities in the file have a component this "
                         "world does not register with the same size, kind and hooks", r->fn);
    }
    for (uint32_t k = 0; k < n; k++) { ids[k] = fmap[from[k]]; order[k] = k; }
    for (uint32_t a = 1; a < n; a++)   /* sort, carrying the file position along */
        for (uint32_t b = a; b > 0 && ids[b - 1] > ids[b]; b--) {
            uint32_t x = ids[b]; ids[b] = ids[b - 1]; ids[b - 1] = x;
            x = order[b]; order[b] = order[b - 1]; order[b - 1] = x;
        }
    for (uint32_t k = 1; k < n; k++) if (ids[k] == ids[k - 1]) return r->bad = true, ECS_ERR_ARG;
    uint32_t index = s->table_count;
    ecs__snap_table *st = &s->tables[s->table_count++];
    if (!ecs__snap_table_alloc(s, st, ids, n, count, false)) return ECS_ERR_NOMEM;
    sets[index] = ecs__set_hash(ids, n);
    tmap[t] = index;
    const unsigned char *ents = ecs__get_bytes(r, (size_t)count * 8);
    if (!ents) return ECS_ERR_ARG;
    if (ecs__host_le()) memcpy(st->entities, ents, (size_t)count * 8);
    else for (uint32_t row = 0; row < count; row++) st->entities[row] = ecs__le64(ents + (size_t)row * 8);
    for (uint32_t k = 0, c = 0; k < n; k++) colpos[k] = w->reg.ids[ids[k]].size ? c++ : ECS__NONE;
    for (uint32_t k = 0; k < n; k++) where[order[k]] = k;
    for (uint32_t k = 0; k < n; k++) {   /* the columns in the file's order */
        uint32_t at = where[k];
        if (colpos[at] == ECS__NONE) continue;
        const ecs__idinfo *in = &w->reg.ids[ids[at]];
        unsigned char **v = &st->values[colpos[at]];
        bool ser = flags[from[k]] & 2;
        if (count > SIZE_MAX / in->size) return r->bad = true, ECS_ERR_ARG;
        if (!ser && !in->serialize) {   /* plain bytes nothing reads typed: they stay in the file's bytes */
            if (!(*v = (unsigned char *)(uintptr_t)ecs__get_bytes(r, (size_t)count * in->size))) return ECS_ERR_ARG;
            continue;
        }
        if (!(*v = (unsigned char *)ecs__snap_alloc(s, (size_t)count * in->size))) return ECS_ERR_NOMEM;
        if (!ecs__get_values(r, in, ser, *v, count)) {
            if (ser) st->count = count;   /* constructed: freed with dtor */
            return ECS_ERR_ARG;
        }
    }
    st->count = count;
    return ECS_OK;
}

/* Event numbers stay far below 2^64 (a world would take centuries to reach
   2^62): a file near the top is bad, not something to wrap around. */
#define ECS__EVENT_NUMBERS (1ull << 62)

/* One type's events in a file's events section: the file id f (an event
   type, not yet in list[0 .. n)), then count values into *e (its id and
   data set; count checked against what the file still holds). */
static ecs_result ecs__read_event_values(ecs__in *r, ecs_snapshot *s, uint32_t nids, const uint32_t *fmap,
                                         const unsigned char *flags, uint32_t f, uint32_t count,
                                         const ecs__snap_log *list, uint32_t n, ecs__snap_log *e) {
    if (r->bad || f < 1 || f > nids || !(flags[f] & 4)) return r->bad = true, ECS_ERR_ARG;
    const ecs__idinfo *in = &s->world->reg.ids[fmap[f]];
    for (uint32_t k = 0; k < n; k++) if (list[k].id == fmap[f]) return r->bad = true, ECS_ERR_ARG;
    size_t left = (size_t)(r->end - r->p), each = flags[f] & 2 ? 4 : (in->size ? in->size : 1);
    if (count > left / each || (in->size && count > SIZE_MAX / in->size)) return r->bad = true, ECS_ERR_ARG;
    e->id = fmap[f];
    if (!(e->data = (unsigned char *)ecs__snap_alloc(s, (size_t)count * in->size))) return ECS_ERR_NOMEM;
    return ecs__get_values(r, in, flags[f] & 2, e->data, count) ? ECS_OK : (r->bad = true, ECS_ERR_ARG);
}

/* A file's events section (version 3) into s: per type its unread events,
   the readers' places (each inside its type's events), then the events
   queued for the next frame. */
static ecs_result ecs__read_events(ecs__in *r, ecs_snapshot *s, uint32_t nids, const uint32_t *fmap,
                                   const unsigned char *flags) {
    ecs_result res;
    uint32_t n = ecs__get_u32(r);
    if (r->bad || n > nids || n > (size_t)(r->end - r->p) / 20) return r->bad = true, ECS_ERR_ARG;
    if (n && !(s->logs = (ecs__snap_log *)ecs__snap_alloc(s, n * sizeof *s->logs))) return ECS_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = ecs__get_u32(r);
        uint64_t base = ecs__get_u64(r), end = ecs__get_u64(r);
        if (r->bad || end < base || end > ECS__EVENT_NUMBERS || end - base > UINT32_MAX) return r->bad = true, ECS_ERR_ARG;
        ecs__snap_log *sl = &s->logs[s->log_count];
        memset(sl, 0, sizeof *sl);
        s->log_count++;   /* (its data, once made, is freed with s) */
        sl->base = base; sl->end = end;
        if ((res = ecs__read_event_values(r, s, nids, fmap, flags, f, (uint32_t)(end - base), s->logs, i, sl))) return res;
    }
    uint32_t c = ecs__get_u32(r);
    if (r->bad || c > (size_t)(r->end - r->p) / 16) return r->bad = true, ECS_ERR_ARG;
    if (c && !(s->cursors = (ecs__snap_cursor *)ecs__snap_alloc(s, c * sizeof *s->cursors))) return ECS_ERR_NOMEM;
    for (uint32_t i = 0; i < c; i++) {
        ecs__snap_cursor *x = &s->cursors[i];
        uint32_t f;
        x->system = ecs__get_u32(r);
        f = ecs__get_u32(r);
        x->cursor = ecs__get_u64(r);
        if (r->bad || f < 1 || f > nids || !(flags[f] & 4)) return r->bad = true, ECS_ERR_ARG;
        x->id = fmap[f];
        uint32_t k = 0;
        while (k < s->log_count && s->logs[k].id != x->id) k++;
        if (k == s->log_count || x->cursor < s->logs[k].base || x->cursor > s->logs[k].end) return r->bad = true, ECS_ERR_ARG;
        s->cursor_count++;
    }
    if (r->first == 2) return ECS_OK;   /* (version 3's first layout: no queued events) */
    uint32_t q = ecs__get_u32(r);
    if (r->bad || q > nids || q > (size_t)(r->end - r->p) / 8) return r->bad = true, ECS_ERR_ARG;
    if (q && !(s->queued = (ecs__snap_log *)ecs__snap_alloc(s, q * sizeof *s->queued))) return ECS_ERR_NOMEM;
    for (uint32_t i = 0; i < q; i++) {
        uint32_t f = ecs__get_u32(r), count = ecs__get_u32(r);
        ecs__snap_log *sq = &s->queued[s->queued_count];
        memset(sq, 0, sizeof *sq);
        s->queued_count++;
        sq->end = count;
        if ((res = ecs__read_event_values(r, s, nids, fmap, flags, f, count, s->queued, i, sq))) return res;
    }
    return ECS_OK;
}

/* A file's change stamps (version 4; groups' marks from 5) into s: ntab
   file tables, tmap their snapshot tables (ECS__NONE: dropped, its stamps
   skipped). */
static ecs_result ecs__read_stamps(ecs__in *r, ecs_snapshot *s, uint32_t nids, const uint32_t *fmap,
                                   uint32_t ntab, const uint32_t *tmap, uint32_t version) {
    uint32_t flag = ecs__get_u32(r);
    if (r->bad || flag > 1) return r->bad = true, ECS_ERR_ARG;
    if (!flag) return ECS_OK;
    s->has_stamps = true;
    s->tick = ecs__get_u64(r);
    uint32_t n = ecs__get_u32(r);
    if (r->bad || n > (size_t)(r->end - r->p) / 8) return r->bad = true, ECS_ERR_ARG;
    if (!(s->seen = (uint64_t *)ecs__snap_alloc(s, (size_t)n * 8))) return ECS_ERR_NOMEM;
    for (s->seen_count = n; n--;) s->seen[s->seen_count - 1 - n] = ecs__get_u64(r);
    uint32_t m = ecs__get_u32(r);
    if (r->bad || m > (size_t)(r->end - r->p) / 16) return r->bad = true, ECS_ERR_ARG;
    if (!(s->marks = (ecs__snap_seen *)ecs__snap_alloc(s, (size_t)m * sizeof *s->marks))) return ECS_ERR_NOMEM;
    for (s->mark_count = m; m--;) {
        s->marks[s->mark_count - 1 - m].serial = ecs__get_u64(r);
        s->marks[s->mark_count - 1 - m].seen = ecs__get_u64(r);
    }
    uint32_t g = version > 4 ? ecs__get_u32(r) : 0;
    if (r->bad || g > (size_t)(r->end - r->p) / 24) return r->bad = true, ECS_ERR_ARG;
    if (!(s->gmarks = (ecs__snap_gmark *)ecs__snap_alloc(s, (size_t)g * sizeof *s->gmarks))) return ECS_ERR_NOMEM;
    for (s->gmark_count = g; g--;) {
        ecs__snap_gmark *x = &s->gmarks[s->gmark_count - 1 - g];
        x->serial = ecs__get_u64(r);
        x->group = ecs__get_u64(r);
        x->seen = ecs__get_u64(r);
    }
    for (uint32_t t = 0; t < ntab; t++) {
        ecs__snap_table *st = tmap[t] == ECS__NONE ? NULL : &s->tables[tmap[t]];
        uint32_t blocks = ecs__get_u32(r), rows = ecs__get_u32(r);
        if (r->bad || !rows || (st && (rows != st->column_count + 1 || blocks > ecs__blocks(st->count ? st->count : 1))) ||
            blocks > (size_t)(r->end - r->p) / 8 / rows)
            return r->bad = true, ECS_ERR_ARG;
        if (st && !(st->stamps = (uint64_t *)ecs__snap_alloc(s, (size_t)rows * blocks * 8))) return ECS_ERR_NOMEM;
        if (st) memset(st->stamps, 0, (size_t)rows * blocks * 8);   /* (a column the file lacks: 0) */
        if (st) st->blocks = blocks;
        for (uint32_t k = 0; k < rows; k++) {
            uint32_t c = 0;
            if (k) {   /* a column, by file id: its place among the table's sized ids */
                uint32_t f = ecs__get_u32(r), id = f >= 1 && f <= nids ? fmap[f] : 0, x = 0;
                while (st && x < st->id_count && st->ids[x] != id) c += s->ids[st->ids[x++]].size > 0;
                if (r->bad || (st && (!id || x == st->id_count || !s->ids[id].size))) return r->bad = true, ECS_ERR_ARG;
                c++;
            }
            for (uint32_t b = 0; b < blocks; b++) {
                uint64_t v = ecs__get_u64(r);
                if (st) st->stamps[(size_t)c * blocks + b] = v;
            }
        }
    }
    return r->bad ? ECS_ERR_ARG : ECS_OK;
}

/* A snapshot's bytes from read: its length from the header (version 6),
   else (an older file) all read gives. NULL + error; *size the length.
   Version 7: *sum gets the checksum of all but the last 8 bytes, taken
   piece by piece as they arrive (from the cache). */
static unsigned char *ecs__load_bytes(ecs_world *w, ecs_read_fn read, void *ctx, size_t *size, ecs__sum *sum,
                                      const char *fn) {
    size_t cap = 1 << 12, have = 0, want = 20, summed = SIZE_MAX;   /* magic, version, length */
    unsigned char *data = (unsigned char *)ecs__alloc(w, cap);
    bool sized = false;
    memset(sum, 0, sizeof *sum);
    while (data) {
        if (have == want && !sized) {   /* the header is in */
            sized = true;
            uint32_t version = (uint32_t)ecs__le64(data + 8);
            uint64_t length = ecs__le64(data + 12);
            if (memcmp(data, "ECSHSNAP", 8)) break;
            if (version > 5 && (length < 28 || length > SIZE_MAX)) break;
            want = version > 5 ? (size_t)length : SIZE_MAX;   /* older: to the end */
            summed = version > 6 ? 0 : SIZE_MAX;
        }
        if (summed < have && summed < want - 8) {   /* (version 7) up to the checksum */
            size_t upto = have < want - 8 ? have : want - 8;
            ecs__sum_feed(sum, data + summed, upto - summed);
            summed = upto;
        }
        if (have == want) { *size = have; return data; }
        if (have == cap) {   /* a length up front: all of it at once (up to 64 MiB; a bad length
                                must run out of bytes before it runs out of memory) */
            size_t grow = want != SIZE_MAX && want <= (1u << 26) ? want : cap < SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
            unsigned char *bigger = (unsigned char *)ecs__realloc(w, data, grow < want ? grow : want);
            if (!bigger) { ecs__free(w, data); ECS__OOM(w, fn); return NULL; }
            data = bigger;
            cap = grow < want ? grow : want;
        }
        size_t ask = (want < cap ? want : cap) - have;
        if (sized && ask > ECS__PIECE) ask = ECS__PIECE;
        size_t got = read(data + have, ask, ctx);
        if (got > ask) break;
        have += got;
        if (got < ask) {   /* the end of read's data */
            if (want == SIZE_MAX && sized) { *size = have; return data; }
            break;
        }
    }
    if (data) {
        ecs__fail(w, ECS_ERR_ARG, "%s: %s", fn, have >= 8 && memcmp(data, "ECSHSNAP", 8) ? "not an ecs.h save file"
                  : sized ? "the snapshot is truncated (read came up short) or its length is bad"
                          : "not an ecs.h save file (too short)");
        ecs__free(w, data);
    } else {
        ECS__OOM(w, fn);
    }
    return NULL;
}

/* Why bytes are not a whole save file (its magic, its checksum), or NULL;
   sum: the version 7 checksum, taken while reading. */
static const char *ecs__file_unsealed(const unsigned char *data, size_t size, const ecs__sum *sum) {
    if (size < 28 || memcmp(data, "ECSHSNAP", 8)) return "not an ecs.h save file";
    uint64_t got;
    if ((uint32_t)ecs__le64(data + 8) > 6) {
        got = ecs__sum_done(sum);
    } else {   /* older files' checksum */
        ecs__hasher h;
        ecs__hash_init(&h);
        ecs__hash_feed(&h, data, size - 8);
        got = ecs__hash_done(&h);
    }
    return got == ecs__le64(data + size - 8) ? NULL : "the file is damaged or truncated (checksum)";
}

/* A save file's bytes into a snapshot (sum: the version 7 checksum, taken
   while reading; first: read the first layout of version 2 or 3). NULL +
   error (*res the result); data stays the caller's unless a snapshot comes
   back, which then owns it. */
static ecs_snapshot *ecs__snap_parse(ecs_world *w, unsigned char *data, size_t size, const ecs__sum *sum,
                                     bool first, ecs_result *res_out, const char *fn) {
    unsigned char *flags = NULL;
    ecs_snapshot *s = NULL;
    uint32_t *fmap = NULL, *tmap = NULL, *mark = NULL, *work = NULL;
    uint64_t *sets = NULL;
    const char *why = "the file is not consistent";
    ecs_result res = ECS_ERR_ARG;
    ecs__in r = {NULL, NULL, false, fn, 0}, rr = {NULL, NULL, false, fn, 0}, clock;
    uint32_t nids = 0, rc = 0, fh = 0, fc = 0, alive = 0, nrel = 0, ntab = 0, version;
    uint64_t dropped = 0;
    const unsigned char *recs = NULL, *rels = NULL;
    if ((why = ecs__file_unsealed(data, size, sum))) goto fail;
    why = "the file is not consistent";
    r.p = data + 8; r.end = data + size - 8;   /* (after the magic; before the checksum) */
    version = ecs__get_u32(&r);
    if (version < 1 || version > ECS__FILE_VERSION) { why = "the file has another version"; goto fail; }
    r.first = (uint8_t)(first && version < 4 ? version - 1 : 0);
    if (version > 5 && ecs__get_u64(&r) != size) goto fail;   /* (checked while reading) */
    nids = ecs__get_u32(&r);
    if (nids > (size_t)(r.end - r.p) / 12) goto fail;
    if (!(fmap = (uint32_t *)ecs__alloc(w, ((size_t)nids + 1) * sizeof *fmap)) ||
        !(flags = (unsigned char *)ecs__alloc(w, (size_t)nids + 1)) ||
        !(work = (uint32_t *)ecs__alloc(w, 5 * ((size_t)nids + 1) * sizeof *work)))
        goto oom;
    if (!ecs__read_ids(w, &r, nids, fmap, flags)) { if (!r.bad) why = NULL; goto fail; }
    rc = ecs__get_u32(&r); fh = ecs__get_u32(&r); fc = ecs__get_u32(&r); alive = ecs__get_u32(&r);
    dropped = ecs__get_u64(&r);
    clock = r;   /* read into the snapshot once it exists */
    if (version > 1 && ecs__get_clock(&r, NULL)) goto fail;
    recs = rc <= (size_t)(r.end - r.p) / 12 ? ecs__get_bytes(&r, (size_t)rc * 12) : NULL;
    nrel = ecs__get_u32(&r);
    rels = nrel <= rc ? ecs__get_bytes(&r, (size_t)nrel * 24) : NULL;
    ntab = ecs__get_u32(&r);
    if (r.bad || !recs || !rels || rc >= ECS__RESERVED || ntab == 0 || ntab > (size_t)(r.end - r.p) / 8 ||
        dropped > SIZE_MAX)
        goto fail;
    if (!(s = ecs__snap_new(w, ntab)) ||
        !(s->records = (ecs__record *)ecs__snap_alloc(s, (size_t)rc * sizeof *s->records)) ||
        (nrel && !(s->rels = (ecs__rel *)ecs__snap_alloc(s, (size_t)nrel * sizeof *s->rels))) ||
        !(tmap = (uint32_t *)ecs__alloc(w, (size_t)ntab * sizeof *tmap)) ||
        !(sets = (uint64_t *)ecs__alloc(w, (size_t)ntab * sizeof *sets)) ||
        !(mark = (uint32_t *)ecs__alloc(w, ((size_t)rc + 1) * sizeof *mark)) ||
        (version > 1 && ecs__get_clock(&clock, s)))
        goto oom;   /* (the clock was checked above) */
    s->blob = data;   /* lent until the end: plain columns point into it */
    s->blob_size = size;
    s->blob_lent = true;
    s->record_count = rc; s->free_head = fh; s->free_count = fc; s->alive = alive;
    s->dropped = (size_t)dropped;
    s->rel_count = nrel;
    rr.p = recs; rr.end = recs + (size_t)rc * 12;
    if (ecs__host_le() && sizeof *s->records == 12) memcpy(s->records, recs, (size_t)rc * 12);
    else for (uint32_t i = 0; i < rc; i++) {
        s->records[i].table = ecs__get_u32(&rr);
        s->records[i].row = ecs__get_u32(&rr);
        s->records[i].gen = ecs__get_u32(&rr);
    }
    rr.p = rels; rr.end = rels + (size_t)nrel * 24;
    for (uint32_t i = 0; i < nrel; i++) {
        ecs__rel *x = &s->rels[i];
        x->parent = ecs__get_u64(&rr);
        x->first = ecs__get_u32(&rr); x->last = ecs__get_u32(&rr);
        x->next = ecs__get_u32(&rr); x->prev = ecs__get_u32(&rr);
    }
    for (uint32_t t = 0; t < ntab; t++)
        if ((res = ecs__read_table(w, s, &r, t, nids, fmap, flags, work, tmap, sets))) {
            if (res == ECS_ERR_NOMEM) goto oom;
            if (!r.bad) why = NULL;   /* the error names the cause */
            goto fail;
        }
    for (uint32_t i = 1; i <= nids; i++) {
        if (!(flags[i] & 1)) continue;
        const ecs__idinfo *wi = &w->reg.ids[fmap[i]];
        unsigned char *v;
        if (s->ids[fmap[i]].value) goto fail;   /* twice in the file */
        if (!(v = (unsigned char *)ecs__snap_alloc(s, wi->size))) goto oom;
        s->ids[fmap[i]].value = v;   /* once constructed, freed with dtor */
        if (!ecs__get_values(&r, wi, flags[i] & 2, v, 1)) {
            if (!(flags[i] & 2)) { s->ids[fmap[i]].value = NULL; ecs__snap_mfree(s, v); }
            goto fail;
        }
    }
    if (version > 2 && (res = ecs__read_events(&r, s, nids, fmap, flags))) { if (res == ECS_ERR_NOMEM) goto oom; goto fail; }
    if (version > 3 && (res = ecs__read_stamps(&r, s, nids, fmap, ntab, tmap, version))) { if (res == ECS_ERR_NOMEM) goto oom; goto fail; }
    if (version > 5) { s->has_seed = true; s->random_seed = ecs__get_u64(&r); }
    if (r.bad || r.p != r.end) goto fail;
    for (uint32_t i = 0; i < rc; i++)   /* records name the snapshot's tables */
        if (s->records[i].table != ECS__NONE) {
            if (s->records[i].table >= ntab || tmap[s->records[i].table] == ECS__NONE) goto fail;
            s->records[i].table = tmap[s->records[i].table];
        }
    ecs__sort_u64(sets, s->table_count);   /* one table per id set */
    for (uint32_t i = 1; i < s->table_count; i++) if (sets[i] == sets[i - 1]) goto fail;
    if (!ecs__snap_sane(s, mark)) goto fail;
    s->blob_lent = false;   /* s owns the bytes now */
    ecs__snap_keep_blob(s);
    res = ECS_OK;
    why = NULL;
    goto done;
oom:
    why = NULL;
    ECS__OOM(w, fn);
    res = ECS_ERR_NOMEM;
fail:
    if (why) ecs__fail(w, ECS_ERR_ARG, "%s: %s", fn, why);
    if (res != ECS_ERR_NOMEM) res = ECS_ERR_ARG;
    ecs_snapshot_free(s);   /* (not the lent bytes) */
    s = NULL;
done:
    ecs__free(w, fmap); ecs__free(w, flags); ecs__free(w, work);
    ecs__free(w, tmap); ecs__free(w, sets); ecs__free(w, mark);
    *res_out = res;
    return s;
}

/* Versions 2 and 3 each had a first layout (a few hours long) without a
   field their later one has: a file that is not the later layout is read
   again as the first; if that fails too, the first reading's error stands. */
static ecs_snapshot *ecs__snap_load(ecs_world *w, ecs_read_fn read, void *ctx, const char *fn) {
    if (!w) return NULL;
    if (!read) { ecs__fail(w, ECS_ERR_ARG, "%s: no read callback", fn); return NULL; }
    size_t size = 0;
    ecs__sum sum;
    unsigned char *data = ecs__load_bytes(w, read, ctx, &size, &sum, fn);
    if (!data) return NULL;
    ecs_result res;
    uint32_t version = size >= 12 ? (uint32_t)ecs__le64(data + 8) : 0;   /* (before s may own data) */
    ecs_snapshot *s = ecs__snap_parse(w, data, size, &sum, false, &res, fn);
    if (!s && res == ECS_ERR_ARG && (version == 2 || version == 3)) {
        char why[256];
        snprintf(why, sizeof why, "%s", ecs_last_error(w));
        if (!(s = ecs__snap_parse(w, data, size, &sum, true, &res, fn)) && res == ECS_ERR_ARG)
            ecs__fail(w, ECS_ERR_ARG, "%s", why);
    }
    if (!s) ecs__free(w, data);   /* (else s has it) */
    return s;
}

ECS_API ecs_snapshot *ecs_snapshot_load(ecs_world *w, ecs_read_fn read, void *ctx) {
    return ecs__snap_load(w, read, ctx, "ecs_snapshot_load");
}

#ifndef ECS_NO_STDIO
static size_t ecs__file_read(void *bytes, size_t size, void *ctx) { return fread(bytes, 1, size, (FILE *)ctx); }

ECS_API ecs_snapshot *ecs_snapshot_read(ecs_world *w, FILE *in) {
    if (w && !in) { ecs__fail(w, ECS_ERR_ARG, "ecs_snapshot_read: in is NULL"); return NULL; }
    return ecs__snap_load(w, ecs__file_read, in, "ecs_snapshot_read");
}
#endif

/* ---- >>hash: the world hash ---------------------------------------------- */
/* The next of ids (n of them) by name after prev (NULL: the first), or -1:
   the hash walks components by name, so it does not depend on the order
   they were registered in. */
static int32_t ecs__next_by_name(const ecs_world *w, const ecs_id *ids, uint32_t n, const char *prev) {
    int32_t best = -1;
    for (uint32_t k = 0; k < n; k++) {
        const char *name = w->reg.ids[ids[k]].name;
        if ((!prev || strcmp(name, prev) > 0) && (best < 0 || strcmp(name, w->reg.ids[ids[best]].name) < 0))
            best = (int32_t)k;
    }
    return best;
}

/* A value's hash input: its bytes, or what serialize says it means (not
   where it keeps it). buf/cap: a scratch that grows in the world's
   allocator; if it cannot, the value's length still counts. */
typedef struct ecs__hash_buf { unsigned char small[256], *p; size_t cap; } ecs__hash_buf;
static void ecs__hash_value(ecs_world *w, ecs__hasher *h, const ecs__idinfo *in, const void *v, ecs__hash_buf *b) {
    if (!in->serialize) { ecs__hash_feed(h, v, in->size); return; }
    size_t n = in->serialize(v, b->p, b->cap, in->ctx);
    if (n > b->cap) {
        unsigned char *bigger = (unsigned char *)ecs__alloc(w, n);
        if (bigger) {
            if (b->p != b->small) ecs__free(w, b->p);
            b->p = bigger;
            b->cap = n;
            n = in->serialize(v, b->p, b->cap, in->ctx);
        } else {
            ECS__OOM(w, "ecs_world_hash");
        }
    }
    ecs__hash_feed(h, &n, sizeof n);
    if (n <= b->cap) ecs__hash_feed(h, b->p, n);
}

/* A value with lifecycle hooks and no serialize: its bytes may be pointers,
   which differ between worlds that hold the same state. */
ECS__COLD uint64_t ecs__hash_refused(ecs_world *w, const ecs__idinfo *in) {
    ecs__fail(w, ECS_ERR_ARG, "ecs_world_hash: %s \"%s\" has lifecycle hooks (ctor/dtor/copy/move) and no "
              "serialize hook, so its bytes may be pointers that differ between worlds in the same state; "
              "give it serialize and deserialize (what the value means, as bytes)",
              in->resource ? "resource" : "component", in->name);
    return 0;
}

/* Events not read by every reader yet (by type, in registration order), how
   far behind each reader is, and the events queued for the next frame. */
static void ecs__hash_events(ecs_world *w, ecs__hasher *h, ecs__hash_buf *buf) {
    for (uint32_t l = 0; l < w->ev.log_count; l++) {
        const ecs__evlog *L = &w->ev.logs[l];
        const ecs__idinfo *in = &w->reg.ids[L->id];
        uint64_t first = L->end;
        for (uint32_t r = 0; r < L->reader_count; r++) {
            uint64_t cursor = ecs__window_of(&w->sys.systems[L->readers[r]], l)->cursor, behind = L->end - cursor;
            ecs__hash_feed(h, &behind, sizeof behind);
            if (cursor < first) first = cursor;
        }
        if (first == L->end) continue;
        ecs__hash_feed(h, in->name, strlen(in->name) + 1);
        for (uint64_t e = first; e < L->end; e++) ecs__hash_value(w, h, in, L->data + (size_t)(e - L->base) * in->size, buf);
    }
    const ecs_commands *q = w->ev.waiting;   /* queued for the next frame */
    for (uint32_t k = 0; q && q->ev_count && k < q->evb_count; k++) {
        const ecs__evbuf *b = &q->evb[k];
        const ecs__idinfo *in = &w->reg.ids[b->id];
        if (!b->count) continue;
        ecs__hash_feed(h, &b->count, sizeof b->count);
        ecs__hash_feed(h, in->name, strlen(in->name) + 1);
        for (uint32_t e = 0; b->size && e < b->count; e++) ecs__hash_value(w, h, in, b->data + (size_t)e * b->size, buf);
    }
}

/* The entity index's counters (ecs_world_hash, the hash trace's sync points). */
static void ecs__hash_counters(const ecs_world *w, ecs__hasher *h) {
    uint32_t head[4] = {w->ent.record_count, w->ent.free_head, w->ent.free_count, w->ent.alive};
    ecs__hash_feed(h, head, sizeof head);
}

ECS_API uint64_t ecs_world_hash(ecs_world *w) {
    if (!w) return 0;
    if (ecs__check_running(w, "ecs_world_hash")) return 0;
    for (uint32_t i = 1; i <= w->reg.id_count; i++) {   /* refused before any work */
        const ecs__idinfo *in = &w->reg.ids[i];
        if (!in->lifecycle || in->serialize) continue;
        if (in->resource) return ecs__hash_refused(w, in);
        for (uint32_t t = 0; t < w->tab.table_count; t++)
            if (w->tab.tables[t]->count && ecs__table_find_id(w->tab.tables[t], i) >= 0) return ecs__hash_refused(w, in);
    }
    ecs__hash_buf buf;
    buf.p = buf.small;
    buf.cap = sizeof buf.small;
    ecs__hasher h;
    ecs__hash_init(&h);
    ecs__hash_counters(w, &h);
    for (uint32_t i = 0; i < w->tab.table_count; i++) {
        const ecs__table *t = w->tab.tables[i];
        if (!t->count) continue;
        ecs__hash_feed(&h, &t->count, sizeof t->count);
        ecs__hash_feed(&h, t->entities, t->count * sizeof *t->entities);
        for (int32_t k = ecs__next_by_name(w, t->ids, t->id_count, NULL); k >= 0;
             k = ecs__next_by_name(w, t->ids, t->id_count, w->reg.ids[t->ids[k]].name)) {
            const ecs__idinfo *in = &w->reg.ids[t->ids[k]];
            ecs__hash_feed(&h, in->name, strlen(in->name) + 1);
            if (t->column_of[k] < 0) continue;
            const ecs__column *col = &t->columns[t->column_of[k]];
            if (!in->serialize) { ecs__hash_feed(&h, col->data, (size_t)t->count * col->size); continue; }
            for (uint32_t row = 0; row < t->count; row++)
                ecs__hash_value(w, &h, in, col->data + (size_t)row * col->size, &buf);
        }
    }
    for (uint32_t i = 0; i < w->hier.rel_cap && i < w->ent.record_count; i++) {
        const ecs__rel *r = &w->hier.rels[i];
        if (w->ent.records[i].table >= ECS__RESERVED || !(r->parent | r->first)) continue;
        ecs__hash_feed(&h, &i, sizeof i);
        ecs__hash_feed(&h, r, sizeof *r);
    }
    const char *prev = NULL;   /* resources, by name */
    for (;;) {
        ecs_id best = 0;
        for (ecs_id i = 1; i <= w->reg.id_count; i++)
            if (w->reg.ids[i].resource && (!prev || strcmp(w->reg.ids[i].name, prev) > 0) &&
                (!best || strcmp(w->reg.ids[i].name, w->reg.ids[best].name) < 0))
                best = i;
        if (!best) break;
        prev = w->reg.ids[best].name;
        ecs__hash_feed(&h, prev, strlen(prev) + 1);
        ecs__hash_value(w, &h, &w->reg.ids[best], w->reg.ids[best].data, &buf);
    }
    ecs__hash_events(w, &h, &buf);
    if (buf.p != buf.small) ecs__free(w, buf.p);
    uint64_t x = ecs__hash_done(&h);
    return x ? x : 1;   /* 0 means refused */
}

/* ---- >>systems: the system registry --------------------------------------- */
enum { ECS__DEP_AFTER, ECS__DEP_BEFORE, ECS__DEP_INDEPENDENT, ECS__DEP_LISTS };
static const char *const ecs__dep_list_name[ECS__DEP_LISTS] = {"after", "before", "independent_of"};

static ecs_system ecs__system_find(const ecs_world *w, const char *name) {
    uint64_t *v;
    uint32_t step = 0, best = ECS__NONE;
    while ((v = ecs__map_next(&w->sys.system_names, ecs__hash_bytes(name, strlen(name)), &step)))
        if (*v < best && !strcmp(w->sys.systems[*v].name, name)) best = (uint32_t)*v;
    return best == ECS__NONE ? 0 : best + 1;
}

static ecs_result ecs__ids_check(const ecs_world *w, const ecs_id *ids, const char *what) {
    for (int i = 0; i < ECS_MAX_TERMS && ids[i]; i++)
        if (!ecs__id_valid(w, ids[i]))
            return ecs__fail(w, ECS_ERR_ARG, "ecs_system_add: %s[%d] = %u is not a registered id",
                             what, i, (unsigned)ids[i]);
    return ECS_OK;
}

/* s->decl from its terms, reads and writes: one entry per id, ascending.
   Event types it reads are no access (its windows cover them). */
static void ecs__system_declare(const ecs_world *w, ecs__system *s) {
    s->decl_count = 0;
    for (int part = 0; part < 3; part++)
        for (int at = 0; at < ECS_MAX_TERMS; at++) {
            ecs_id id = part == 0 ? (at < s->term_count ? s->terms[at].id : 0) : part == 1 ? s->reads[at] : s->writes[at];
            if (!id) break;
            if (w->reg.ids[id].event) continue;
            uint32_t how = part == 0 ? ecs__term_how(&s->terms[at]) : part == 1 ? ECS__LR : ECS__LR | ECS__LW;
            ecs__decl_put(s->decl, &s->decl_count, id, how);
        }
}

/* Whether s takes the lean inline run: a query, one thread, nothing per run
   besides its batches (no event windows, no change filter, no stamps). */
static void ecs__system_plain(const ecs_world *w, ecs__system *s) {
    s->plain = (uint8_t)(s->query && s->chunk_size <= 0 && !(s->flags & ECS_SYSTEM_EXCLUSIVE) && !s->reads_events &&
                         !s->changed && !(s->stamps && w->chg.on) && !s->query->sort ? 1 + !!s->gate : 0);
}

/* What may skip s in a turn, from its desc and its enabled flag, and
   whether it takes the lean inline run. */
static void ecs__system_gate(const ecs_world *w, ecs__system *s) {
    s->gate = (uint8_t)((ecs__load(&s->enabled) ? 0 : ECS__GATE_OFF) | (s->interval > 1 ? ECS__GATE_INTERVAL : 0) |
                        (s->run_if ? ECS__GATE_COND : 0));
    ecs__system_plain(w, s);
}

/* The query desc of a system's terms, order and groups. */
static void ecs__system_qdesc(const ecs_system_desc *d, ecs_query_desc *qd) {
    memset(qd, 0, sizeof *qd);
    memcpy(qd->terms, d->terms, sizeof qd->terms);
    qd->group_by = d->group_by;
    qd->group_ctx = d->group_ctx;
    qd->order_by = d->order_by;
    qd->compare = d->compare;
    qd->compare_ctx = d->compare_ctx;
}

/* Everything ecs_system_add checks in a desc besides its names: its terms
   (their count in *terms), lists, stage, flags and order (its query's desc
   in qd). */
static ecs_result ecs__system_check(ecs_world *w, const char *fn, const ecs_system_desc *d, int *terms,
                                    ecs_query_desc *qd) {
    if (ecs__terms_check(w, fn, d->terms, terms) || ecs__ids_check(w, d->reads, "reads") ||
        ecs__ids_check(w, d->writes, "writes") || ecs__ids_check(w, d->emits, "emits"))
        return ECS_ERR_ARG;
    for (int l = 0; l < 2; l++)   /* event types only in emits and reads */
        for (int i = 0; i < ECS_MAX_TERMS && (l ? d->emits : d->writes)[i]; i++) {
            ecs_id id = (l ? d->emits : d->writes)[i];
            if (!w->reg.ids[id].event == !l) continue;
            ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": \"%s\" %s", fn, d->name, w->reg.ids[id].name, l ?
                      "in emits is not an event type (ecs_event_init makes one)" : "is an event type: it goes in "
                      "emits (to emit it) or reads (to read it), not in writes");
            return ECS_ERR_ARG;
        }
    if (d->stage >= w->sys.stage_count) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" names stage %u, which does not exist", fn, d->name,
                  (unsigned)d->stage);
        return ECS_ERR_ARG;
    }
    if (d->flags & ~(uint32_t)(ECS_SYSTEM_MAIN_THREAD | ECS_SYSTEM_EXCLUSIVE)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" has unknown flags 0x%x", fn, d->name, (unsigned)d->flags);
        return ECS_ERR_ARG;
    }
    if (d->chunk_size < 0 || (d->chunk_size > 0 && d->flags)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": chunk_size must be >= 0, and 0 for MAIN_THREAD "
                  "and EXCLUSIVE systems (they run on one thread)", fn, d->name);
        return ECS_ERR_ARG;
    }
    if (d->interval < 0) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": interval %d is negative", fn, d->name, d->interval);
        return ECS_ERR_ARG;
    }
    if (d->chunk_size > 0 && (d->order_by || d->compare)) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" is chunked: its chunks cannot follow one sorted order "
                  "(group_by can split it; drop chunk_size to sort)", fn, d->name);
        return ECS_ERR_ARG;
    }
    ecs__system_qdesc(d, qd);   /* its query's order is checked here, under this call's name */
    int order_term = -1;
    if (ecs__order_check(w, fn, qd, *terms, &order_term)) return ECS_ERR_ARG;
    if (!*terms && d->group_by) {
        ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" has group_by but no terms: there is nothing to group", fn, d->name);
        return ECS_ERR_ARG;
    }
    return ECS_OK;
}

ECS_API ecs_system ecs_system_add(ecs_world *w, const ecs_system_desc *d) {
    static const char fn[] = "ecs_system_add";
    if (!w) return 0;
    if (ecs__check_idle(w, fn)) return 0;
    if (!d) { ecs__fail(w, ECS_ERR_ARG, "%s: desc is NULL", fn); return 0; }
    if (!d->name || !*d->name) { ecs__fail(w, ECS_ERR_ARG, "%s: name is NULL or empty", fn); return 0; }
    if (!d->fn) { ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\" has no callback (fn)", fn, d->name); return 0; }
    int terms = 0;
    ecs_query_desc qd;
    if (ecs__system_check(w, fn, d, &terms, &qd)) return 0;
    /* one block holds the name and every dependency name */
    const char *const *lists[ECS__DEP_LISTS] = {d->after, d->before, d->independent_of};
    size_t bytes = strlen(d->name) + 1;
    for (int l = 0; l < ECS__DEP_LISTS; l++)
        for (int i = 0; i < ECS_MAX_DEPS && lists[l][i]; i++) {
            if (!*lists[l][i]) {
                ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": %s[%d] is an empty name", fn, d->name,
                          ecs__dep_list_name[l], i);
                return 0;
            }
            bytes += strlen(lists[l][i]) + 1;
        }
    char *block = NULL;
    ecs_query *q = NULL;
    if (!ECS__RESERVE(w, w->sys.systems, w->sys.system_cap, (size_t)w->sys.system_count + 1) ||
        !ecs__map_reserve(w, &w->sys.system_names, 1) || !(block = (char *)ecs__alloc(w, bytes))) {
        ecs__free(w, block);
        ECS__OOM(w, fn);
        return 0;
    }
    if (terms && !(q = ecs_query_new(w, &qd))) {   /* its error stands (memory, or change stamps) */
        ecs__free(w, block);
        return 0;
    }
    ecs__system *s = &w->sys.systems[w->sys.system_count];
    memset(s, 0, sizeof *s);
    memcpy(s->reads, d->reads, sizeof s->reads);
    s->stage = d->stage;
    if (!ecs__windows_make(w, s, w->sys.system_count)) {   /* the last step that can fail */
        ecs__free(w, s->win);
        ecs__free(w, block);
        if (q) ecs_query_free(q);
        ECS__OOM(w, fn);
        return 0;
    }
    size_t len = strlen(d->name) + 1;
    memcpy(block, d->name, len);
    s->name = block;
    block += len;
    for (int l = 0; l < ECS__DEP_LISTS; l++)
        for (int i = 0; i < ECS_MAX_DEPS && lists[l][i]; i++) {
            len = strlen(lists[l][i]) + 1;
            memcpy(block, lists[l][i], len);
            s->deps[l][i] = block;
            block += len;
        }
    s->fn = d->fn;
    s->ctx = d->ctx;
    memcpy(s->terms, d->terms, sizeof s->terms);
    s->term_count = terms;
    memcpy(s->reads, d->reads, sizeof s->reads);
    memcpy(s->writes, d->writes, sizeof s->writes);
    s->stage = d->stage;
    s->flags = d->flags;
    s->chunk_size = d->chunk_size;
    s->query = q;
    s->run_if = d->run_if;
    s->run_if_ctx = d->run_if_ctx;
    s->interval = d->interval;
    s->changed = q ? q->changed : 0;
    for (int i = 0; i < terms; i++) s->stamps |= (ecs__term_how(&d->terms[i]) & ECS__TW) != 0;
    memcpy(s->emits, d->emits, sizeof s->emits);
    ecs__store(&s->enabled, 1);
    ecs__system_gate(w, s);
    ecs__system_declare(w, s);
    w->sys.stages[s->stage].dirty = true;
    ecs__map_put(&w->sys.system_names, ecs__hash_bytes(s->name, strlen(s->name)), w->sys.system_count);
    w->graph.built = false;
    return ++w->sys.system_count;
}

ECS_API ecs_system ecs_system_lookup(const ecs_world *w, const char *name) {
    return w && name ? ecs__system_find(w, name) : 0;
}

ECS_API const char *ecs_system_name(const ecs_world *w, ecs_system s) {
    return w && s >= 1 && s <= w->sys.system_count ? w->sys.systems[s - 1].name : NULL;
}

ECS_API uint32_t ecs_system_count(const ecs_world *w) { return w ? w->sys.system_count : 0; }
ECS_API ecs_stage ecs_system_stage(const ecs_world *w, ecs_system s) {
    return w && s >= 1 && s <= w->sys.system_count ? w->sys.systems[s - 1].stage : 0;
}

ECS_API uint32_t ecs_system_flags(const ecs_world *w, ecs_system s) {
    return w && s >= 1 && s <= w->sys.system_count ? w->sys.systems[s - 1].flags : 0;
}

ECS_API int ecs_system_chunk_size(const ecs_world *w, ecs_system s) {
    return w && s >= 1 && s <= w->sys.system_count && w->sys.systems[s - 1].chunk_size > 0 ? w->sys.systems[s - 1].chunk_size : 0;
}

ECS_API int ecs_system_chunks(const ecs_world *w, ecs_system s) {
    if (!w || s < 1 || s > w->sys.system_count) return 0;
    if (w->sched.phase == ECS__SYSTEMS && ecs__thread_ctx(w)->current != s) {
        ecs__fail(w, ECS_ERR_BUSY, "ecs_system_chunks: while systems run, a system may ask only for its own "
                  "chunks (\"%s\" may be starting on another thread)", w->sys.systems[s - 1].name);
        return 0;
    }
    const ecs__system *sys = &w->sys.systems[s - 1];
    if (!sys->last_frame) return 0;
    return sys->chunk_size > 0 ? (int)sys->ran_chunks : 1;
}

/* Enabling: between frames, in a sync point, or from an EXCLUSIVE or
   MAIN_THREAD system (thread 0, while no other thread reads a stage's flags). */
static ecs_result ecs__check_enable(const ecs_world *w, const char *fn) {
    if (w->sched.phase != ECS__SYSTEMS) return ECS_OK;
    const ecs__tctx *tc = ecs__thread_ctx(w);
    if (tc->index == 0 && tc->current && ecs__on_main(&w->sys.systems[tc->current - 1])) return ECS_OK;
    return ecs__fail(w, ECS_ERR_BUSY, "%s: only between frames or from an EXCLUSIVE or MAIN_THREAD "
                     "system (other systems run on other threads at the same time)", fn);
}

ECS_API ecs_result ecs_system_enable(ecs_world *w, ecs_system s, bool enabled) {
    if (!w) return ECS_ERR_ARG;
    if (s < 1 || s > w->sys.system_count)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_system_enable: system %u does not exist", (unsigned)s);
    ecs_result r = ecs__check_enable(w, "ecs_system_enable");
    if (r) return r;
    ecs__system *sys = &w->sys.systems[s - 1];
    w->sys.stages[sys->stage].dirty = true;   /* applied at its next turn */
    ecs__store(&sys->enabled, (int)enabled);
    return ECS_OK;
}

ECS_API bool ecs_system_enabled(const ecs_world *w, ecs_system s) {
    return w && s >= 1 && s <= w->sys.system_count && ecs__load(&w->sys.systems[s - 1].enabled);
}

/* A stage desc's problem, or NULL. A step group is a run of stages: its
   first has the clock, members name it and have none of their own. */
static const char *ecs__stage_bad(const ecs_world *w, const ecs_stage_desc *d) {
    if (!(d->fixed_dt >= 0 && d->fixed_dt <= FLT_MAX)) return "fixed_dt must be finite and >= 0";
    if (d->max_steps < 0) return "max_steps must be >= 0";
    if (!(d->max_lag >= 0 && d->max_lag <= FLT_MAX)) return "max_lag must be finite and >= 0";
    if (d->max_lag > 0 && d->max_lag < d->fixed_dt)
        return "max_lag must be at least fixed_dt (the accumulator could never hold a step)";
    if (!d->step_with) return NULL;
    if (d->step_with >= w->sys.stage_count || !(w->sys.stages[d->step_with].fixed_dt > 0))
        return "step_with must name a fixed-step stage";
    if (w->sys.stages[w->sys.stage_count - 1].leader != d->step_with)
        return "step_with's group must end with the last registered stage (a step group is a run of "
               "consecutive stages)";
    if (d->fixed_dt > 0 || d->max_steps || d->max_lag > 0 || d->unscaled)
        return "a step group's member takes its group's clock: leave fixed_dt, max_steps, max_lag and "
               "unscaled 0";
    return NULL;
}

ECS_API ecs_stage ecs_stage_init(ecs_world *w, const ecs_stage_desc *d) {
    static const char fn[] = "ecs_stage_init";
    if (!w) return 0;
    if (ecs__check_idle(w, fn)) return 0;
    if (!d) { ecs__fail(w, ECS_ERR_ARG, "%s: desc is NULL", fn); return 0; }
    const char *bad = w->sys.stage_count ? ecs__stage_bad(w, d) : NULL;
    if (bad) { ecs__fail(w, ECS_ERR_ARG, "%s: \"%s\": %s", fn, d->name ? d->name : "(unnamed)", bad); return 0; }
    char buf[32];
    const char *name = d->name;
    if (!name || !*name) { snprintf(buf, sizeof buf, "stage %u", (unsigned)w->sys.stage_count); name = buf; }
    size_t len = strlen(name) + 1;
    char *copy = NULL;
    if (!ECS__RESERVE(w, w->sys.stages, w->sys.stage_cap, (size_t)w->sys.stage_count + 1) ||
        !(copy = (char *)ecs__alloc(w, len))) {
        ECS__OOM(w, fn);
        return 0;
    }
    memcpy(copy, name, len);
    ecs__stage *st = &w->sys.stages[w->sys.stage_count];
    memset(st, 0, sizeof *st);
    st->name = copy;
    st->fixed_dt = d->fixed_dt;
    st->max_steps = d->max_steps ? d->max_steps : 8;
    st->max_lag = d->max_lag > 0 ? d->max_lag : d->fixed_dt > 0.25f ? d->fixed_dt : 0.25f;
    st->leader = d->step_with ? d->step_with : w->sys.stage_count;
    st->unscaled = d->unscaled;
    st->presentation = d->presentation;
    ecs__store(&st->enabled, 1);
    st->run_if = d->run_if;
    st->run_if_ctx = d->run_if_ctx;
    w->graph.built = false;
    return w->sys.stage_count++;
}

ECS_API ecs_stage ecs_stage_add(ecs_world *w, const char *name) {
    ecs_stage_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    return ecs_stage_init(w, &d);
}

ECS_API ecs_result ecs_stage_enable(ecs_world *w, ecs_stage st, bool enabled) {
    if (!w) return ECS_ERR_ARG;
    if (st >= w->sys.stage_count)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_stage_enable: stage %u does not exist", (unsigned)st);
    ecs_result r = ecs__check_enable(w, "ecs_stage_enable");
    if (r) return r;
    ecs__store(&w->sys.stages[st].enabled, (int)enabled);   /* read by thread 0 when a turn starts */
    return ECS_OK;
}

ECS_API bool ecs_stage_enabled(const ecs_world *w, ecs_stage st) {
    return w && st < w->sys.stage_count && ecs__load(&w->sys.stages[st].enabled);
}

ECS_API const char *ecs_stage_name(const ecs_world *w, ecs_stage stage) {
    return w && stage < w->sys.stage_count ? w->sys.stages[stage].name : NULL;
}

ECS_API uint32_t ecs_stage_count(const ecs_world *w) { return w ? w->sys.stage_count : 0; }
/* The systems, their per-chunk command buffers, their names, the stages. */
static void ecs__systems_fini(ecs_world *w) {
    for (uint32_t i = 0; i < w->sys.system_count; i++) {
        ecs__system *s = &w->sys.systems[i];
        for (uint32_t b = 0; b < s->buf_cap; b++) ecs__buffer_fini(w, &s->bufs[b]);
        ecs__free(w, s->bufs);
        ecs__free(w, s->name);
        ecs__free(w, s->win);
    }
    for (uint32_t i = 0; i < w->sys.stage_count; i++) ecs__free(w, w->sys.stages[i].name);
    ecs__free(w, w->sys.systems);
    ecs__map_fini(w, &w->sys.system_names);
    ecs__free(w, w->sys.stages);
}

/* ---- >>graph: graph algorithms on index arrays ---------------------------- */
/* A stage's systems are local indices 0..m-1 and its graphs compressed
   adjacency rows over them; every temporary of a stage's build lives in
   ecs__build and goes with it. The algorithms know nothing of access. */
typedef struct ecs__comps {       /* strongly connected components, sinks first */
    uint32_t *of, *emit, *start, count;
} ecs__comps;

typedef struct ecs__build {       /* one stage's temporaries */
    ecs_world *w;
    ecs__stage_graph *sg;
    ecs_stage st;
    uint32_t *compact;            /* id -> compact id; ECS__NONE between stages */
    uint32_t *sys;                /* global index of each local system */
    uint32_t m, words;
    uint64_t *dpairs, *ipairs;    /* declared edges, independent pairs (both ways): from << 32 | to */
    uint32_t *deid, dn, in;       /* each declared pair's edge in the graph */
    uint32_t *dout_at, *dout, *dout_eid, *din_at, *din;   /* declared edges */
    ecs__comps dc, fc;            /* components of the declared and of the final graph */
    uint32_t *fout_at, *fout, *fout_eid, *fin_at, *fin, fn;   /* the final graph */
    uint64_t *ddesc;              /* declared reachability, rows per declared component */
    uint32_t *ind_at, *ind;       /* independent_of partners, both ways */
    uint32_t *acc_at;
    ecs__decl *acc;               /* per system: its declaration over compact ids, ascending */
    ecs_id *id_of;                /* compact id -> id (compact 0: "the whole world") */
    uint32_t ids;
    uint64_t *rows;               /* ECS__ROWS rows per compact id */
    uint32_t *filtered;           /* per compact id: ECS__FAND / ECS__FNOT if some system's query has it */
    uint64_t *scratch;            /* 3 rows, for ecs__into_out */
    uint64_t *inferred;           /* from << 32 | to */
    uint32_t inferred_count, inferred_cap;
    void *tmp[64];
    int tmp_count;
} ecs__build;

static void *ecs__tmp(ecs__build *b, size_t count, size_t size) {
    /* a stage makes a fixed number of temporaries (about 40), whatever its size */
    ECS_ASSERT(b->tmp_count < (int)(sizeof b->tmp / sizeof b->tmp[0]));
    if (b->tmp_count == (int)(sizeof b->tmp / sizeof b->tmp[0]) || (count && SIZE_MAX / count < size))
        return NULL;
    size_t bytes = count * size;
    if (!bytes) bytes = 1;
    void *p = ecs__alloc(b->w, bytes);
    if (p) { memset(p, 0, bytes); b->tmp[b->tmp_count++] = p; }
    return p;
}

static void ecs__tmp_release(ecs__build *b, void *p) {   /* frees one early */
    for (int i = 0; i < b->tmp_count; i++)
        if (b->tmp[i] == p) { ecs__free(b->w, p); b->tmp[i] = b->tmp[--b->tmp_count]; return; }
}

static void ecs__build_free(ecs__build *b) {
    while (b->tmp_count) ecs__free(b->w, b->tmp[--b->tmp_count]);
    ecs__free(b->w, b->inferred);
}

/* Adjacency in compressed rows from (from << 32 | to) pairs; with eid, each
   adjacency entry's payload (eid_out[k] = eid[pair]). */
static bool ecs__csr(ecs__build *b, const uint64_t *pairs, uint32_t n, bool reverse,
                     uint32_t **at_out, uint32_t **adj_out, const uint32_t *eid, uint32_t **eid_out) {
    uint32_t *at = (uint32_t *)ecs__tmp(b, (size_t)b->m + 1, sizeof *at);
    uint32_t *adj = (uint32_t *)ecs__tmp(b, n, sizeof *adj);
    uint32_t *pay = eid ? (uint32_t *)ecs__tmp(b, n, sizeof *pay) : NULL;
    uint32_t *fill = (uint32_t *)ecs__tmp(b, b->m, sizeof *fill);
    if (!at || !adj || !fill || (eid && !pay)) return false;
    for (uint32_t i = 0; i < n; i++) at[(uint32_t)(reverse ? pairs[i] : pairs[i] >> 32) + 1]++;
    for (uint32_t v = 0; v < b->m; v++) at[v + 1] += at[v];
    memcpy(fill, at, b->m * sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t from = (uint32_t)(pairs[i] >> 32), to = (uint32_t)pairs[i];
        uint32_t k = reverse ? fill[to]++ : fill[from]++;
        adj[k] = reverse ? from : to;
        if (pay) pay[k] = eid[i];
    }
    ecs__tmp_release(b, fill);
    *at_out = at;
    *adj_out = adj;
    if (eid_out) *eid_out = pay;
    return true;
}

/* Tarjan's components, without recursion. Components come out sinks first:
   each is emitted after every component it reaches. */
static bool ecs__components(ecs__build *b, const uint32_t *at, const uint32_t *adj, ecs__comps *cp) {
    uint32_t m = b->m;
    uint32_t *index = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    uint32_t *low = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    uint32_t *stack = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    uint32_t *frame = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    uint32_t *cursor = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    unsigned char *on = (unsigned char *)ecs__tmp(b, m, 1);
    cp->of = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    cp->emit = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    cp->start = (uint32_t *)ecs__tmp(b, (size_t)m + 1, sizeof(uint32_t));
    if (!index || !low || !stack || !frame || !cursor || !on || !cp->of || !cp->emit || !cp->start)
        return false;
    for (uint32_t v = 0; v < m; v++) index[v] = ECS__NONE;
    uint32_t counter = 0, sp = 0, fp = 0, emitted = 0, cc = 0;
    for (uint32_t r = 0; r < m; r++) {
        if (index[r] != ECS__NONE) continue;
        index[r] = low[r] = counter++; stack[sp++] = r; on[r] = 1;
        frame[fp] = r; cursor[fp++] = at[r];
        while (fp) {
            uint32_t v = frame[fp - 1];
            if (cursor[fp - 1] < at[v + 1]) {
                uint32_t x = adj[cursor[fp - 1]++];
                if (index[x] == ECS__NONE) {
                    index[x] = low[x] = counter++; stack[sp++] = x; on[x] = 1;
                    frame[fp] = x; cursor[fp++] = at[x];
                } else if (on[x] && index[x] < low[v]) {
                    low[v] = index[x];
                }
                continue;
            }
            fp--;
            if (fp && low[v] < low[frame[fp - 1]]) low[frame[fp - 1]] = low[v];
            if (low[v] != index[v]) continue;
            cp->start[cc] = emitted;
            uint32_t x;
            do { x = stack[--sp]; on[x] = 0; cp->of[x] = cc; cp->emit[emitted++] = x; } while (x != v);
            cc++;
        }
    }
    cp->start[cc] = emitted;
    cp->count = cc;
    ecs__tmp_release(b, index); ecs__tmp_release(b, low); ecs__tmp_release(b, stack);
    ecs__tmp_release(b, frame); ecs__tmp_release(b, cursor); ecs__tmp_release(b, on);
    return true;
}

static bool ecs__comp_cyclic(const ecs__comps *cp, const uint32_t *at, const uint32_t *adj, uint32_t c) {
    uint32_t first = cp->emit[cp->start[c]];
    if (cp->start[c + 1] - cp->start[c] > 1) return true;
    for (uint32_t e = at[first]; e < at[first + 1]; e++)
        if (adj[e] == first) return true;
    return false;
}

/* desc[c] = every system component c reaches (its own members only on a
   cycle). Successors are merged in topological order, so a row skips every
   successor it already reaches: only the reduced edges cost a row. */
static bool ecs__closure(ecs__build *b, const uint32_t *at, const uint32_t *adj, const ecs__comps *cp,
                         uint64_t *desc) {
    uint32_t W = b->words;
    uint64_t *buf = (uint64_t *)ecs__tmp(b, at[b->m], sizeof *buf);
    if (!buf) return false;
    for (uint32_t c = 0; c < cp->count; c++) {
        const uint32_t *members = cp->emit + cp->start[c];
        uint32_t count = cp->start[c + 1] - cp->start[c], n = 0;
        uint64_t *row = desc + (size_t)c * W;
        for (uint32_t k = 0; k < count; k++)
            for (uint32_t e = at[members[k]]; e < at[members[k] + 1]; e++)
                if (cp->of[adj[e]] != c)   /* later components first: they are reached by earlier ones */
                    buf[n++] = (uint64_t)(cp->count - 1 - cp->of[adj[e]]) << 32 | adj[e];
        ecs__sort_u64(buf, n);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)buf[i];
            if (ecs__bit(row, v)) continue;
            ecs__bits_or(row, desc + (size_t)cp->of[v] * W, W);
            ecs__bit_set(row, v);
        }
        if (ecs__comp_cyclic(cp, at, adj, c))
            for (uint32_t k = 0; k < count; k++) ecs__bit_set(row, members[k]);
    }
    ecs__tmp_release(b, buf);
    return true;
}

/* The stage's run order from the declared components (cp, over registration
   indices): reverse Kahn over the component graph, always placing last the
   component with the highest key (its first-registered system) among those
   whose successors are all placed. That puts system 0 as early as declared
   order allows, then system 1, and so on. pos[v] = v's place. */
static bool ecs__run_order(ecs__build *b, const ecs__comps *cp, const uint32_t *out_at, const uint32_t *out_adj,
                           const uint32_t *in_at, const uint32_t *in_adj, uint32_t *pos) {
    uint32_t m = b->m, cc = cp->count;
    uint32_t *out = (uint32_t *)ecs__tmp(b, cc, sizeof(uint32_t));
    uint32_t *heap = (uint32_t *)ecs__tmp(b, cc, sizeof(uint32_t));
    double *key = (double *)ecs__tmp(b, cc, sizeof(double));
    uint64_t *members = (uint64_t *)ecs__tmp(b, m, sizeof(uint64_t));
    if (!out || !heap || !key || !members) return false;
    for (uint32_t c = 0; c < cc; c++) {
        uint32_t low = ECS__NONE;
        for (uint32_t k = cp->start[c]; k < cp->start[c + 1]; k++) {
            uint32_t v = cp->emit[k];
            if (v < low) low = v;
            for (uint32_t e = out_at[v]; e < out_at[v + 1]; e++) out[c] += cp->of[out_adj[e]] != c;
        }
        key[c] = low;
    }
    uint32_t hn = 0, place = m;
    for (uint32_t c = 0; c < cc; c++) if (!out[c]) ecs__heap_push(heap, &hn, c, key);
    while (hn) {
        uint32_t c = ecs__heap_pop(heap, &hn, key), count = cp->start[c + 1] - cp->start[c];
        for (uint32_t k = 0; k < count; k++) members[k] = cp->emit[cp->start[c] + k];
        ecs__sort_u64(members, count);   /* registration order inside a component */
        place -= count;
        for (uint32_t k = 0; k < count; k++) pos[members[k]] = place + k;
        for (uint32_t k = 0; k < count; k++) {
            uint32_t v = (uint32_t)members[k];
            for (uint32_t e = in_at[v]; e < in_at[v + 1]; e++) {
                uint32_t p = cp->of[in_adj[e]];
                if (p != c && --out[p] == 0) ecs__heap_push(heap, &hn, p, key);
            }
        }
    }
    ECS_ASSERT(place == 0);
    ecs__tmp_release(b, members); ecs__tmp_release(b, key);
    ecs__tmp_release(b, heap); ecs__tmp_release(b, out);
    return true;
}

/* The transitive reduction of an acyclic stage: v keeps an edge to s only if
   no other successor already reaches s. key orders systems topologically. */
static bool ecs__reduce(ecs__build *b, const uint32_t *at, const uint32_t *adj, const uint64_t *desc,
                        const uint32_t *row_of, const uint32_t *key) {
    ecs_world *w = b->w;
    ecs__stage_graph *sg = b->sg;
    uint32_t m = b->m, W = b->words, n = 0;
    uint64_t *buf = (uint64_t *)ecs__tmp(b, at[m], sizeof *buf);
    uint64_t *row = (uint64_t *)ecs__tmp(b, W, 8);
    sg->succ_at = (uint32_t *)ecs__alloc(w, ((size_t)m + 1) * sizeof(uint32_t));
    sg->succ = (uint32_t *)ecs__alloc(w, ((size_t)at[m] + 1) * sizeof(uint32_t));
    sg->preds = (uint32_t *)ecs__alloc(w, (size_t)m * sizeof(uint32_t));
    sg->topo = (uint32_t *)ecs__alloc(w, (size_t)m * sizeof(uint32_t));
    if (!buf || !row || !sg->succ_at || !sg->succ || !sg->preds || !sg->topo) return false;
    memset(sg->preds, 0, (size_t)m * sizeof(uint32_t));
    for (uint32_t v = 0; v < m; v++) {
        uint32_t count = 0;
        sg->succ_at[v] = n;
        for (uint32_t e = at[v]; e < at[v + 1]; e++) buf[count++] = (uint64_t)key[adj[e]] << 32 | adj[e];
        ecs__sort_u64(buf, count);
        memset(row, 0, W * 8);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t s = (uint32_t)buf[i];
            if (ecs__bit(row, s)) continue;
            ecs__bits_or(row, desc + (size_t)row_of[s] * W, W);
            ecs__bit_set(row, s);
            sg->succ[n++] = s;
            sg->preds[s]++;
        }
    }
    sg->succ_at[m] = n;
    /* a topological order: sorted by key, a system precedes all it reaches */
    uint64_t *keys = (uint64_t *)ecs__tmp(b, m, sizeof *keys);
    if (!keys) return false;
    for (uint32_t v = 0; v < m; v++) keys[v] = (uint64_t)key[v] << 32 | v;
    ecs__sort_u64(keys, m);
    for (uint32_t v = 0; v < m; v++) sg->topo[v] = (uint32_t)keys[v];
    return true;
}

static bool ecs__edge_add(ecs_world *w, uint32_t from, uint32_t to, uint32_t kind, uint32_t list) {
    ecs__graph *g = &w->graph;
    if (!ECS__RESERVE(w, g->edges, g->edge_cap, (size_t)g->edge_count + 1)) return false;
    ecs__edge *e = &g->edges[g->edge_count++];
    memset(e, 0, sizeof *e);
    e->from = from; e->to = to; e->kind = (uint8_t)kind; e->list = (uint8_t)list;
    return true;
}

/* ---- >>conflicts: access rows, disjointness, inference -------------------- */
/* The conflict rules, in one place: list accesses conflict with any access
   to the id, term accesses with list accesses and with the term accesses
   of a system whose query is not disjoint (AND x in one, NOT x in the
   other), as long as one side writes. Per compact id, bitset rows of
   systems answer "who conflicts with a" by OR-ing rows, never by a search
   per pair. */
/* Per compact id, rows of systems: term accessors and writers, list
   accessors and writers, all accessors and writers, AND and NOT filters. */
enum { ECS__ROW_TA, ECS__ROW_TW, ECS__ROW_LA, ECS__ROW_LW, ECS__ROW_AA, ECS__ROW_AW, ECS__ROW_AND,
       ECS__ROW_NOT, ECS__ROWS };

static uint64_t *ecs__row(const ecs__build *b, uint32_t x, int r) {
    return b->rows + ((size_t)x * ECS__ROWS + (size_t)r) * b->words;
}


/* Which sides write in the conflicting combinations of two systems' accesses
   to one id (bit 0: a, bit 1: c; 0: no conflict). Term against term is no
   conflict when the queries are disjoint. */
ECS__HOT int ecs__contested(uint32_t ha, uint32_t hc, bool disjoint) {
    int how = 0;
    bool at = ha & (ECS__TR | ECS__TW), al = ha & (ECS__LR | ECS__LW), atw = ha & ECS__TW, alw = ha & ECS__LW;
    bool ct = hc & (ECS__TR | ECS__TW), cl = hc & (ECS__LR | ECS__LW), ctw = hc & ECS__TW, clw = hc & ECS__LW;
    if (al && cl && (alw || clw)) how |= (alw ? 1 : 0) | (clw ? 2 : 0);
    if (al && ct && (alw || ctw)) how |= (alw ? 1 : 0) | (ctw ? 2 : 0);
    if (at && cl && (atw || clw)) how |= (atw ? 1 : 0) | (clw ? 2 : 0);
    if (at && ct && !disjoint && (atw || ctw)) how |= (atw ? 1 : 0) | (ctw ? 2 : 0);
    return how;
}

/* Whether a and c can never match the same table: one has AND x, the other NOT x. */
static bool ecs__disjoint(const ecs__build *b, uint32_t a, uint32_t c) {
    uint32_t i = b->acc_at[a], j = b->acc_at[c];
    while (i < b->acc_at[a + 1] && j < b->acc_at[c + 1]) {
        const ecs__decl *x = &b->acc[i], *y = &b->acc[j];
        if (x->id < y->id) i++;
        else if (x->id > y->id) j++;
        else { if (ecs__filters_exclude(x->how, y->how)) return true; i++; j++; }
    }
    return false;
}

/* The systems that write what a accesses (into) and that access what a
   writes (out), by the conflict rules: list accesses conflict with any
   access, term accesses with list accesses, and with the term accesses of a
   system whose query is not disjoint from a's. Never a itself or its
   independent_of partners. out may be NULL. Marks a as relying on
   disjointness when some term conflict was let go. */
static void ecs__into_out(const ecs__build *b, uint32_t a, uint64_t *into, uint64_t *out) {
    uint32_t W = b->words;
    uint64_t *ti = b->scratch, *to = b->scratch + W, *d = b->scratch + 2 * W;
    bool terms = false, apart = false;   /* apart: some query may be disjoint from a's */
    for (uint32_t k = b->acc_at[a]; k < b->acc_at[a + 1] && !apart; k++)
        apart = ecs__filters_exclude(b->acc[k].how, b->filtered[b->acc[k].id]);
    memset(into, 0, (size_t)W * 8);
    if (out) memset(out, 0, (size_t)W * 8);
    for (uint32_t k = b->acc_at[a]; k < b->acc_at[a + 1]; k++) {
        uint32_t x = b->acc[k].id, how = b->acc[k].how;
        if ((how & ECS__LR) || ((how & ECS__TR) && !apart))   /* conflicts with any writer */
            ecs__bits_or(into, ecs__row(b, x, ECS__ROW_AW), W);
        if (out && ((how & ECS__LW) || ((how & ECS__TW) && !apart)))   /* with any accessor */
            ecs__bits_or(out, ecs__row(b, x, ECS__ROW_AA), W);
        if (!(how & ECS__TR) || !apart) continue;
        if (!terms) { memset(ti, 0, (size_t)3 * W * 8); terms = true; }
        ecs__bits_or(into, ecs__row(b, x, ECS__ROW_LW), W);
        ecs__bits_or(ti, ecs__row(b, x, ECS__ROW_TW), W);
        if ((how & ECS__TW) && out) {
            ecs__bits_or(out, ecs__row(b, x, ECS__ROW_LA), W);
            ecs__bits_or(to, ecs__row(b, x, ECS__ROW_TA), W);
        }
    }
    if (terms) {
        for (uint32_t k = b->acc_at[a]; k < b->acc_at[a + 1]; k++) {   /* the queries disjoint from a's */
            if (b->acc[k].how & ECS__FAND) ecs__bits_or(d, ecs__row(b, b->acc[k].id, ECS__ROW_NOT), W);
            if (b->acc[k].how & ECS__FNOT) ecs__bits_or(d, ecs__row(b, b->acc[k].id, ECS__ROW_AND), W);
        }
        uint32_t *with = &b->w->sys.systems[b->sys[a]].disjoint;
        for (uint32_t k = 0; k < W; k++) {
            uint64_t skipped = (ti[k] | to[k]) & d[k] & ~(k == a >> 6 ? 1ull << (a & 63) : 0);
            if (skipped && !*with) *with = b->sys[k * 64 + ecs__lsb(skipped)] + 1;   /* the first in run order */
            into[k] |= ti[k] & ~d[k];
            if (out) out[k] |= to[k] & ~d[k];
        }
    }
    uint64_t *rows[2] = {into, out};
    for (int r = 0; r < 2 && rows[r]; r++) {
        rows[r][a >> 6] &= ~(1ull << (a & 63));
        for (uint32_t k = b->ind_at[a]; k < b->ind_at[a + 1]; k++)
            rows[r][b->ind[k] >> 6] &= ~(1ull << (b->ind[k] & 63));
    }
}

/* Every system that conflicts with a (row), with scratch for out. */
static void ecs__conflicts(const ecs__build *b, uint32_t a, uint64_t *row, uint64_t *out) {
    ecs__into_out(b, a, row, out);
    for (uint32_t k = 0; k < b->words; k++) row[k] |= out[k];
}

/* The lowest id a writes and c accesses, as the conflict rules count it
   (ECS__NONE: none). */
static uint32_t ecs__written_into(const ecs__build *b, uint32_t a, uint32_t c) {
    bool dis = ecs__disjoint(b, a, c);
    uint32_t i = b->acc_at[a], j = b->acc_at[c];
    while (i < b->acc_at[a + 1] && j < b->acc_at[c + 1]) {
        const ecs__decl *x = &b->acc[i], *y = &b->acc[j];
        if (x->id < y->id) { i++; continue; }
        if (x->id > y->id) { j++; continue; }
        if (ecs__contested(x->how, y->how, dis) & 1) return x->id;
        i++; j++;
    }
    return ECS__NONE;
}

static bool ecs__writes_into(const ecs__build *b, uint32_t a, uint32_t c) {
    return ecs__written_into(b, a, c) != ECS__NONE;
}

static bool ecs__infer_push(ecs__build *b, uint32_t from, uint32_t to) {
    if (!ECS__RESERVE(b->w, b->inferred, b->inferred_cap, (size_t)b->inferred_count + 1)) return false;
    b->inferred[b->inferred_count++] = (uint64_t)from << 32 | to;
    return true;
}

/* INSERTION: declared edges point forward in the run order (but inside a
   cycle, whose members are contiguous in it and share one ancestor row), so
   one pass in that order settles each component's ancestors before its
   pairs are looked at. Pairs are taken nearest first. */
static bool ecs__infer_insertion(ecs__build *b, const ecs__comps *dc) {
    uint32_t m = b->m, W = b->words;
    uint64_t *anc = (uint64_t *)ecs__tmp(b, (size_t)dc->count * W, 8);   /* a row per component */
    uint64_t *cand = (uint64_t *)ecs__tmp(b, 2 * (size_t)W, 8);
    uint32_t *first = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    uint32_t *last = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    if (!anc || !cand || !first || !last) return false;
    for (uint32_t c = 0; c < dc->count; c++) {
        uint32_t lo = ECS__NONE, hi = 0;
        for (uint32_t k = dc->start[c]; k < dc->start[c + 1]; k++) {
            uint32_t v = dc->emit[k];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        for (uint32_t k = dc->start[c]; k < dc->start[c + 1]; k++) { first[dc->emit[k]] = lo; last[dc->emit[k]] = hi; }
    }
#define ECS__ANC_ADD(row, i) do { ecs__bits_or((row), anc + (size_t)dc->of[i] * W, W); \
        for (uint32_t x_ = first[i]; x_ <= last[i]; x_++) ecs__bit_set((row), x_); } while (0)
    for (uint32_t j = 0; j < m; j++) {
        uint32_t f = first[j];
        uint64_t *row = anc + (size_t)dc->of[j] * W;
        if (j == f)   /* a component starts: its declared ancestors */
            for (uint32_t v = f; v <= last[f]; v++)
                for (uint32_t e = b->din_at[v]; e < b->din_at[v + 1]; e++) {
                    uint32_t p = b->din[e];
                    if (first[p] != f && !ecs__bit(row, p)) ECS__ANC_ADD(row, p);
                }
        ecs__conflicts(b, j, cand, cand + W);
        for (uint32_t k = (f >> 6) + 1; k-- > 0;) {
            uint64_t mask = k == (f >> 6) ? (1ull << (f & 63)) - 1 : ~0ull, bits;
            while ((bits = cand[k] & ~row[k] & mask)) {
                uint32_t bit = ecs__msb(bits), i = k * 64 + bit;
                if (!ecs__infer_push(b, i, j)) return false;
                ECS__ANC_ADD(row, i);
                mask = (1ull << bit) - 1;
            }
        }
    }
#undef ECS__ANC_ADD
    ecs__tmp_release(b, last);
    ecs__tmp_release(b, first);
    ecs__tmp_release(b, cand);
    ecs__tmp_release(b, anc);   /* the closure's rows need the room next */
    return true;
}

/* WRITERS_FIRST: w -> r for every conflicting pair where w writes what r
   accesses and r writes nothing w accesses, unless declared order already
   orders them (ddesc: the declared closure, rows per declared component). */
static bool ecs__infer_writers(ecs__build *b, const uint64_t *ddesc, const uint32_t *dcomp) {
    uint32_t m = b->m, W = b->words;
    uint64_t *into = (uint64_t *)ecs__tmp(b, 2 * (size_t)W, 8);
    if (!into) return false;
    uint64_t *out = into + W;
    for (uint32_t r = 0; r < m; r++) {
        ecs__into_out(b, r, into, out);
        const uint64_t *dr = ddesc + (size_t)dcomp[r] * W;
        for (uint32_t k = 0; k < W; k++)
            for (uint64_t bits = into[k] & ~out[k] & ~dr[k]; bits; bits &= bits - 1) {
                uint32_t w = k * 64 + ecs__lsb(bits);   /* declared w -> r: w comes first, or a cycle */
                if (((w > r && dcomp[w] != dcomp[r]) || !ecs__bit(ddesc + (size_t)dcomp[w] * W, r)) &&
                    !ecs__infer_push(b, w, r))
                    return false;
            }
    }
    ecs__tmp_release(b, into);
    return true;
}

/* Step 3: each system's declaration over compact ids, then the rows per
   id. Compact ids follow ids in ascending order, so a declaration (sorted
   by id) maps to a sorted list. Compact 0 is "the whole world": every
   system reads it and an EXCLUSIVE system writes it. */
static bool ecs__build_access(ecs__build *b) {
    ecs_world *w = b->w;
    uint32_t m = b->m, W = b->words, *compact = b->compact, ids = 1, total = 0, lo = ECS__NONE, hi = 0;
    for (uint32_t a = 0; a < m; a++) {   /* mark the ids the stage declares */
        const ecs__system *s = &w->sys.systems[b->sys[a]];
        for (uint32_t k = 0; k < s->decl_count; k++) {
            compact[s->decl[k].id] = 0;
            if (s->decl[k].id < lo) lo = s->decl[k].id;
            if (s->decl[k].id > hi) hi = s->decl[k].id;
        }
        total += s->decl_count;
    }
    b->acc_at = (uint32_t *)ecs__tmp(b, (size_t)m + 1, sizeof(uint32_t));
    b->acc = (ecs__decl *)ecs__tmp(b, (size_t)total + m, sizeof(ecs__decl));
    b->id_of = (ecs_id *)ecs__tmp(b, (size_t)total + 1, sizeof(ecs_id));
    if (!b->acc_at || !b->acc || !b->id_of) {
        for (ecs_id id = lo; total && id <= hi; id++) compact[id] = ECS__NONE;
        return false;
    }
    for (ecs_id id = lo; total && id <= hi; id++)   /* ascending: each id once */
        if (compact[id] == 0) { compact[id] = ids; b->id_of[ids++] = id; }
    total = 0;
    for (uint32_t a = 0; a < m; a++) {
        const ecs__system *s = &w->sys.systems[b->sys[a]];
        ecs__decl *list = b->acc + total;
        b->acc_at[a] = total;
        list[0].id = 0;
        list[0].how = ECS__LR | (s->flags & ECS_SYSTEM_EXCLUSIVE ? ECS__LW : 0);
        for (uint32_t k = 0; k < s->decl_count; k++) {
            list[k + 1].id = compact[s->decl[k].id];
            list[k + 1].how = s->decl[k].how;
        }
        total += s->decl_count + 1;
    }
    b->acc_at[m] = total;
    b->ids = ids;
    for (uint32_t x = 1; x < ids; x++) compact[b->id_of[x]] = ECS__NONE;   /* for the next stage */
    b->rows = (uint64_t *)ecs__tmp(b, (size_t)ids * ECS__ROWS * W, 8);
    b->scratch = (uint64_t *)ecs__tmp(b, (size_t)3 * W, 8);
    b->filtered = (uint32_t *)ecs__tmp(b, ids, sizeof(uint32_t));
    if (!b->rows || !b->scratch || !b->filtered) return false;
    for (uint32_t a = 0; a < m; a++) {
        for (uint32_t k = b->acc_at[a]; k < b->acc_at[a + 1]; k++) {
            uint32_t x = b->acc[k].id, how = b->acc[k].how;
            if (how & ECS__TR) ecs__bit_set(ecs__row(b, x, ECS__ROW_TA), a);
            if (how & ECS__TW) ecs__bit_set(ecs__row(b, x, ECS__ROW_TW), a);
            if (how & ECS__LR) ecs__bit_set(ecs__row(b, x, ECS__ROW_LA), a);
            if (how & ECS__LW) ecs__bit_set(ecs__row(b, x, ECS__ROW_LW), a);
            if (how & ECS__ACCESSES) ecs__bit_set(ecs__row(b, x, ECS__ROW_AA), a);
            if (how & ECS__WRITES) ecs__bit_set(ecs__row(b, x, ECS__ROW_AW), a);
            if (how & ECS__FAND) ecs__bit_set(ecs__row(b, x, ECS__ROW_AND), a);
            if (how & ECS__FNOT) ecs__bit_set(ecs__row(b, x, ECS__ROW_NOT), a);
            b->filtered[x] |= how & ECS__FILTERS;
        }
    }
    for (uint32_t a = 0; a < m; a++) w->sys.systems[b->sys[a]].disjoint = 0;   /* set by ecs__into_out */
    return true;
}

/* Step 4: independent_of partners that conflict run in any order, never at
   once: the stage's exclusion lists. */
static bool ecs__build_exclusion(ecs__build *b) {
    ecs__stage_graph *sg = b->sg;
    uint32_t m = b->m, xn = 0;
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t k = b->ind_at[a]; k < b->ind_at[a + 1]; k++)
            xn += ecs__writes_into(b, a, b->ind[k]) || ecs__writes_into(b, b->ind[k], a);
    if (!xn) return true;
    sg->excl_at = (uint32_t *)ecs__alloc(b->w, ((size_t)m + 1) * sizeof(uint32_t));
    sg->excl = (uint32_t *)ecs__alloc(b->w, (size_t)xn * sizeof(uint32_t));
    if (!sg->excl_at || !sg->excl) return false;
    xn = 0;
    for (uint32_t a = 0; a < m; a++) {
        sg->excl_at[a] = xn;
        for (uint32_t k = b->ind_at[a]; k < b->ind_at[a + 1]; k++) {
            uint32_t p = b->ind[k], e = sg->excl_at[a];
            if (!ecs__writes_into(b, a, p) && !ecs__writes_into(b, p, a)) continue;
            while (e < xn && sg->excl[e] != p) e++;   /* listed both ways: once */
            if (e == xn) sg->excl[xn++] = p;
        }
    }
    sg->excl_at[m] = xn;
    return true;
}

/* ---- >>report: problems, notes and their messages ------------------------- */
#define ECS__REPORT_CAP 10000   /* problems (and notes) listed; the rest are counted */
#define ECS__LOOP_TEXT 64        /* loop steps a CYCLE message spells out */

/* Problems, notes, their loop and member arrays and messages live in
   growing arrays; pointers into them are fixed up when the build is done.
   At most ECS__REPORT_CAP of each are listed. */
/* Appends n bytes to the report's text (kept 0-terminated). */
static bool ecs__text_put(ecs__graph *g, ecs_world *w, const char *p, size_t n) {
    if ((size_t)g->text_size + n + 2 > g->text_cap &&
        !ECS__RESERVE(w, g->text, g->text_cap, (size_t)g->text_size + n + 2))
        return false;
    memcpy(g->text + g->text_size, p, n);
    g->text_size += (uint32_t)n;
    return true;
}

/* Appends to the report's text. Its own printf, in one pass: only %s, %u
   and %d (a validation may format ten thousand messages). */
static bool ecs__text(ecs_world *w, const char *fmt, ...) {
    ecs__graph *g = &w->graph;
    va_list ap;
    va_start(ap, fmt);
    bool ok = true;
    for (const char *f = fmt; *f && ok;) {
        if (*f != '%') {
            size_t n = strcspn(f, "%");
            ok = ecs__text_put(g, w, f, n);
            f += n;
        } else if (f[1] == 's') {
            const char *str = va_arg(ap, const char *);
            ok = ecs__text_put(g, w, str, strlen(str));
            f += 2;
        } else if (f[1] == 'u' || f[1] == 'd') {
            char num[16], *e = num + sizeof num;
            long long v = f[1] == 'u' ? (long long)va_arg(ap, unsigned) : (long long)va_arg(ap, int);
            unsigned long long u = v < 0 ? (unsigned long long)-v : (unsigned long long)v;
            do { *--e = (char)('0' + u % 10); u /= 10; } while (u);
            if (v < 0) *--e = '-';
            ok = ecs__text_put(g, w, e, (size_t)(num + sizeof num - e));
            f += 2;
        } else {   /* %% */
            ok = ecs__text_put(g, w, "%", 1);
            f += 2;
        }
    }
    va_end(ap);
    if (ok) g->text[g->text_size] = 0;
    return ok;
}

/* Whether one more problem (note) is listed; if not it is only counted. */
static bool ecs__listed(ecs_world *w, bool note) {
    ecs__graph *g = &w->graph;
    if ((note ? g->note_count : g->problem_count) < ECS__REPORT_CAP) return true;
    if (note) g->notes_omitted++; else g->omitted++;
    return false;
}

static ecs_problem *ecs__problem_in(ecs_world *w, ecs_problem_kind kind, bool note) {
    ecs__graph *g = &w->graph;
    ecs_problem **list = note ? &g->notes : &g->problems;
    uint32_t *count = note ? &g->note_count : &g->problem_count, *cap = note ? &g->note_cap : &g->problem_cap;
    uint32_t **fix = note ? &g->note_fix : &g->fix, *fix_cap = note ? &g->note_fix_cap : &g->fix_cap;
    if (!ecs__reserve(w, list, cap, (size_t)*count + 1, sizeof **list) ||
        !ecs__reserve(w, fix, fix_cap, (size_t)*count * 3 + 3, sizeof **fix) ||
        !ECS__RESERVE(w, g->text, g->text_cap, (size_t)g->text_size + 1))
        return NULL;
    (*fix)[*count * 3] = g->text_size;   /* its message starts here */
    (*fix)[*count * 3 + 1] = g->cycle_count;   /* its loop, then its members */
    (*fix)[*count * 3 + 2] = ECS__NONE;
    g->text[g->text_size] = 0;
    ecs_problem *p = &(*list)[(*count)++];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    return p;
}

static ecs_problem *ecs__problem(ecs_world *w, ecs_problem_kind kind) { return ecs__problem_in(w, kind, false); }
static bool ecs__problem_end(ecs_world *w) {   /* keeps the message's terminator */
    ecs__graph *g = &w->graph;
    g->text_size++;
    return true;
}

static const char *ecs__sname(const ecs_world *w, uint32_t s) { return w->sys.systems[s].name; }

/* Starts the member list of the problem just made (after its loop). */
static void ecs__members_begin(ecs_world *w) {
    ecs__graph *g = &w->graph;
    g->fix[(g->problem_count - 1) * 3 + 2] = g->cycle_count;
}

/* How a declared edge came to be, e.g. `"Move" lists "Input" in after`. */
static bool ecs__text_edge(ecs_world *w, const ecs__edge *e) {
    if (e->list == ECS__DEP_AFTER)
        return ecs__text(w, "\"%s\" lists \"%s\" in after", ecs__sname(w, e->to), ecs__sname(w, e->from));
    return ecs__text(w, "\"%s\" lists \"%s\" in before", ecs__sname(w, e->from), ecs__sname(w, e->to));
}

/* A shortest loop through s inside component c: its length, and in *close
   the system whose edge returns to s (prev[] holds the path). */
static uint32_t ecs__loop_bfs(const ecs__comps *cp, uint32_t c, const uint32_t *at, const uint32_t *adj,
                              uint32_t s, uint32_t *dist, uint32_t *prev, uint32_t *queue, uint32_t *close) {
    for (uint32_t k = cp->start[c]; k < cp->start[c + 1]; k++) dist[cp->emit[k]] = ECS__NONE;
    uint32_t head = 0, tail = 0;
    dist[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t e = at[v]; e < at[v + 1]; e++) {
            uint32_t x = adj[e];
            if (cp->of[x] != c) continue;
            if (x == s) { *close = v; return dist[v] + 1; }
            if (dist[x] != ECS__NONE) continue;
            dist[x] = dist[v] + 1;
            prev[x] = v;
            queue[tail++] = x;
        }
    }
    return ECS__NONE;
}

/* One step u -> v of a loop, explained: the declaration that made it, or
   the writer-first inference. Inferred steps get a DOT edge of their own. */
static bool ecs__text_step(ecs__build *b, uint32_t u, uint32_t v, const uint32_t *at, const uint32_t *adj,
                           const uint32_t *eid, bool *inferred) {
    ecs_world *w = b->w;
    for (uint32_t e = at[u]; e < at[u + 1]; e++)
        if (adj[e] == v && eid[e] != ECS__NONE) { *inferred = false; return ecs__text_edge(w, &w->graph.edges[eid[e]]); }
    *inferred = true;
    uint32_t x = ecs__written_into(b, u, v);
    if (x == ECS__NONE || !b->id_of[x])   /* compact 0: u is exclusive, and counts as writing all */
        return ecs__text(w, "\"%s\" is exclusive, so it counts as writing everything \"%s\" reads",
                         ecs__sname(w, b->sys[u]), ecs__sname(w, b->sys[v]));
    return ecs__text(w, "\"%s\" writes %s, which \"%s\" reads", ecs__sname(w, b->sys[u]),
                     w->reg.ids[b->id_of[x]].name, ecs__sname(w, b->sys[v]));
}

/* One CYCLE problem for component c of the final graph: a shortest loop
   (the shortest of all for components of modest size, else the shortest
   through its first-registered system), each step explained, and its
   members. */
static bool ecs__cycle_problem(ecs__build *b, const ecs__comps *cp, uint32_t c, const uint32_t *at,
                               const uint32_t *adj, const uint32_t *eid, uint32_t *dist, uint32_t *prev,
                               uint32_t *queue, uint64_t *sorted) {
    ecs_world *w = b->w;
    ecs__graph *g = &w->graph;
    if (!ecs__listed(w, false)) return true;
    const uint32_t *members = cp->emit + cp->start[c];
    uint32_t count = cp->start[c + 1] - cp->start[c], first = members[0];
    uint64_t inner = 0;
    for (uint32_t k = 0; k < count; k++) {
        if (b->sys[members[k]] < b->sys[first]) first = members[k];
        for (uint32_t e = at[members[k]]; e < at[members[k] + 1]; e++) inner += cp->of[adj[e]] == c;
    }
    bool every = count <= 64 || (uint64_t)count * inner <= (1u << 20);
    uint32_t best = ECS__NONE, src = first, close = first;
    for (uint32_t k = 0; k < (every ? count : 1); k++) {
        uint32_t s = every ? members[k] : first, x = s, len = ecs__loop_bfs(cp, c, at, adj, s, dist, prev, queue, &x);
        if (len < best || (len == best && b->sys[s] < b->sys[src])) { best = len; src = s; }
    }
    (void)ecs__loop_bfs(cp, c, at, adj, src, dist, prev, queue, &close);
    ecs_problem *p = ecs__problem(w, ECS_PROBLEM_CYCLE);
    if (!p || !ECS__RESERVE(w, g->cycles, g->cycle_cap, (size_t)g->cycle_count + best + count)) return false;
    ecs_system *loop = g->cycles + g->cycle_count;
    for (uint32_t k = best, x = close; k-- > 0; x = prev[x]) loop[k] = b->sys[x] + 1;   /* src .. close */
    g->cycle_count += best;
    p->cycle_len = (int)best;
    ecs__members_begin(w);
    for (uint32_t k = 0; k < count; k++) sorted[k] = b->sys[members[k]];
    ecs__sort_u64(sorted, count);
    for (uint32_t k = 0; k < count; k++) g->cycles[g->cycle_count++] = (ecs_system)sorted[k] + 1;
    p->member_count = (int)count;
    uint32_t lu = src;
    if (best == 1) {
        bool inferred;
        if (!ecs__text(w, "cycle: \"%s\" must run after itself (", ecs__sname(w, b->sys[lu])) ||
            !ecs__text_step(b, lu, lu, at, adj, eid, &inferred) || !ecs__text(w, "); remove that declaration"))
            return false;
        return ecs__problem_end(w);
    }
    bool any_inferred = false;
    if (!ecs__text(w, "cycle: ")) return false;
    for (uint32_t i = 0; i < best; i++) {
        loop = g->cycles + g->fix[(g->problem_count - 1) * 3 + 1];   /* the text may have moved nothing, the loop may not */
        uint32_t u = w->graph.local[loop[i] - 1], v = w->graph.local[loop[(i + 1) % best] - 1];
        if (best > ECS__LOOP_TEXT && i == ECS__LOOP_TEXT - 1 && i + 1 < best) {   /* long loops: the start and the way back */
            if (!ecs__text(w, ", ... %u more steps ...", (unsigned)(best - ECS__LOOP_TEXT))) return false;
            i = best - 1;
            u = w->graph.local[loop[i] - 1]; v = w->graph.local[loop[0] - 1];
        }
        bool inferred;
        if (!ecs__text(w, i ? ", which runs before \"%s\" (" : "\"%s\" runs before \"%s\" (",
                       ecs__sname(w, b->sys[i ? v : u]), ecs__sname(w, b->sys[v])) ||
            !ecs__text_step(b, u, v, at, adj, eid, &inferred) || !ecs__text(w, ")"))
            return false;
        if (inferred && !ecs__edge_add(w, b->sys[u], b->sys[v], ECS__EDGE_INFERRED, 0)) return false;
        if (inferred) w->graph.edges[w->graph.edge_count - 1].cycle = true;
        any_inferred |= inferred;
    }
    if (!ecs__text(w, "; %u systems in the loop, %u tangled in all; %s", (unsigned)best, (unsigned)count,
                   any_inferred ? "declare the order you want with after/before (declared order wins over "
                                  "writer-first inference), or remove one of these declarations"
                                : "remove or reverse one of these declarations"))
        return false;
    return ecs__problem_end(w);
}

/* One contested id of a RACE: id 0 is exclusivity; how: 0 both write, 1 a
   writes (c reads), 2 c writes. */
typedef struct ecs__hit { ecs_id id; int how; } ecs__hit;
/* What a RACE says two systems contest: exclusivity first (it alone makes
   the race), then each id with who writes it. */
static bool ecs__race_text(ecs_world *w, const char *an, const char *cn, const ecs__hit *hit, uint32_t n) {
    bool ok = ecs__text(w, "race: "), excl = false, first = true;
    for (uint32_t k = 0; ok && k < n; k++) {
        if (hit[k].id) continue;
        ok = hit[k].how == 0 ? ecs__text(w, "\"%s\" and \"%s\" are both exclusive (each runs alone in its "
                                         "stage)", an, cn)
                             : ecs__text(w, "\"%s\" is exclusive (it runs alone in its stage) and \"%s\" "
                                         "shares that stage", hit[k].how == 2 ? cn : an, hit[k].how == 2 ? an : cn);
        excl = true;
    }
    for (uint32_t k = 0; ok && k < n; k++) {
        if (!hit[k].id) continue;
        const char *idn = w->reg.ids[hit[k].id].name, *wr = hit[k].how == 1 ? an : cn, *rd = hit[k].how == 1 ? cn : an;
        if (!excl && n == 1)
            ok = hit[k].how == 0 ? ecs__text(w, "\"%s\" and \"%s\" both write %s", an, cn, idn)
                                 : ecs__text(w, "\"%s\" writes %s, which \"%s\" reads,", wr, idn, rd);
        else {
            if (!first) ok = ecs__text(w, ", ");
            else if (excl) ok = ecs__text(w, "; they also conflict on ");
            else ok = ecs__text(w, "\"%s\" and \"%s\" conflict on ", an, cn);
            ok = ok && (hit[k].how == 0 ? ecs__text(w, "%s (both write)", idn)
                                        : ecs__text(w, "%s (\"%s\" writes, \"%s\" reads)", idn, wr, rd));
        }
        first = false;
    }
    return ok;
}

/* What may skip system s in a turn, for messages ("" if nothing): a system
   that might run is proven as if it always did, and the message says so. */
static const char *ecs__skip_reason(const ecs__system *s) {
    return s->run_if ? "a run_if" : s->interval > 1 ? "an interval" : !ecs__load(&s->enabled) ? "been disabled" : "";
}

/* One RACE problem for an unordered conflicting pair a < c (locals). */
static bool ecs__race_problem(ecs__build *b, uint32_t a, uint32_t c) {
    ecs_world *w = b->w;
    if (!ecs__listed(w, false)) return true;
    const char *an = ecs__sname(w, b->sys[a]), *cn = ecs__sname(w, b->sys[c]);
    ecs_problem *p = ecs__problem(w, ECS_PROBLEM_RACE);
    if (!p) return false;
    p->a = b->sys[a] + 1;
    p->b = b->sys[c] + 1;
    if (p->a > p->b) { ecs_system t = p->a; p->a = p->b; p->b = t; const char *tn = an; an = cn; cn = tn; uint32_t tl = a; a = c; c = tl; }
    ecs__hit hit[3 * ECS_MAX_TERMS + 1];
    uint32_t n = 0, i = b->acc_at[a], j = b->acc_at[c];
    bool dis = ecs__disjoint(b, a, c);
    while (i < b->acc_at[a + 1] && j < b->acc_at[c + 1]) {
        const ecs__decl *x = &b->acc[i], *y = &b->acc[j];
        if (x->id < y->id) { i++; continue; }
        if (x->id > y->id) { j++; continue; }
        int how = ecs__contested(x->how, y->how, dis);
        if (how) { hit[n].id = b->id_of[x->id]; hit[n++].how = how == 3 ? 0 : how; }
        i++; j++;
    }
    bool found = false;
    for (uint32_t k = 0; k < n; k++)   /* the lowest real id; 0 if only exclusivity conflicts */
        if (hit[k].id && (!found || hit[k].id < p->id)) {
            p->id = hit[k].id; p->write_write = hit[k].how == 0; found = true;
        }
    for (uint32_t k = 0; !found && k < n; k++)   /* only exclusivity: both exclusive? */
        if (!hit[k].id) p->write_write = hit[k].how == 0;
    const ecs__system *sa = &w->sys.systems[p->a - 1], *sc = &w->sys.systems[p->b - 1];
    const char *skip = *ecs__skip_reason(sa) ? ecs__skip_reason(sa) : ecs__skip_reason(sc);
    return ecs__race_text(w, an, cn, hit, n) &&
           ecs__text(w, " and nothing orders them; add .after = {\"%s\"} to \"%s\" (or .before = {\"%s\"} to "
                     "\"%s\"), or list one in the other's independent_of", an, cn, cn, an) &&
           (!*skip || ecs__text(w, " (\"%s\" has %s, but a system that may run is checked as if it always "
                                "did)", *ecs__skip_reason(sa) ? an : cn, skip)) &&
           ecs__problem_end(w);
}

/* One ECS_NOTE_READ_BEFORE_WRITE: a runs before c only through inferred
   order, c writes x, which a reads: a sees last frame's x. */
static bool ecs__read_note(ecs__build *b, uint32_t a, uint32_t c, uint32_t x) {
    ecs_world *w = b->w;
    if (!ecs__listed(w, true)) return true;
    ecs_problem *p = ecs__problem_in(w, ECS_NOTE_READ_BEFORE_WRITE, true);
    if (!p) return false;
    p->a = b->sys[a] + 1;
    p->b = b->sys[c] + 1;
    p->id = b->id_of[x];
    const char *an = ecs__sname(w, b->sys[a]), *cn = ecs__sname(w, b->sys[c]);
    ECS_ASSERT(p->id);   /* x is never compact 0: no EXCLUSIVE system here */
    const char *idn = w->reg.ids[p->id].name;
    return ecs__text(w, "read before write: \"%s\" runs before \"%s\" only by inferred order and reads "
                     "%s, which \"%s\" writes, so \"%s\" sees last frame's %s; if it should see this "
                     "frame's, add .after = {\"%s\"} to \"%s\"", an, cn, idn, cn, an, idn, cn, an) &&
           ecs__problem_end(w);
}

/* The problems of system s by itself: a name an earlier system has, and a
   chunked system with a writes list (its chunks run at once). */
static bool ecs__system_problems(ecs_world *w, uint32_t s) {
    const ecs__system *sys = &w->sys.systems[s];
    ecs_system first = ecs__system_find(w, sys->name);
    if (first != s + 1 && ecs__listed(w, false)) {
        ecs_problem *p = ecs__problem(w, ECS_PROBLEM_DUPLICATE_NAME);
        if (!p) return false;
        p->a = first; p->b = s + 1; p->name = sys->name;
        if (!ecs__text(w, "duplicate name: systems %u and %u are both called \"%s\"; rename "
                       "one (after/before/independent_of names mean the first)",
                       (unsigned)first, (unsigned)(s + 1), sys->name) || !ecs__problem_end(w))
            return false;
    }
    if (sys->chunk_size <= 0 || !sys->writes[0] || !ecs__listed(w, false)) return true;
    ecs_problem *p = ecs__problem(w, ECS_PROBLEM_SELF_RACE);
    if (!p) return false;
    p->a = p->b = s + 1;
    p->id = sys->writes[0];
    p->write_write = true;
    for (int i = 1; i < ECS_MAX_TERMS && sys->writes[i]; i++)
        if (sys->writes[i] < p->id) p->id = sys->writes[i];
    bool said = ecs__text(w, "self race: \"%s\" is chunked (chunk_size %d), so its chunks run "
                        "at the same time, and each writes ", sys->name, sys->chunk_size);
    for (int i = 0; said && i < ECS_MAX_TERMS && sys->writes[i]; i++)
        said = ecs__text(w, "%s%s", i ? ", " : "", w->reg.ids[sys->writes[i]].name);
    return said && ecs__text(w, " (its writes list); drop chunk_size, or move those writes to an "
                             "unchunked system that runs after \"%s\"", sys->name) &&
           ecs__problem_end(w);
}

/* System s names, in dependency list l, a system that does not exist. */
static bool ecs__unknown_problem(ecs_world *w, uint32_t s, const char *name, int l) {
    if (!ecs__listed(w, false)) return true;
    ecs_problem *p = ecs__problem(w, ECS_PROBLEM_UNKNOWN_SYSTEM);
    if (!p) return false;
    p->a = s + 1; p->name = name;
    return ecs__text(w, "unknown system: \"%s\" lists \"%s\" in %s, but no system has that name; "
                     "register it or fix the name", w->sys.systems[s].name, name, ecs__dep_list_name[l]) &&
           ecs__problem_end(w);
}

/* A declared edge against stage order closes a loop with it: a CYCLE. */
static bool ecs__stage_order_problems(ecs_world *w) {
    ecs__graph *g = &w->graph;
    for (uint32_t i = 0, count = g->edge_count; i < count; i++) {
        ecs__edge *e = &g->edges[i];
        ecs_stage sf = w->sys.systems[e->from].stage, stt = w->sys.systems[e->to].stage;
        if (e->kind != ECS__EDGE_DECLARED || sf <= stt) continue;
        e->cycle = true;
        if (!ecs__listed(w, false)) continue;
        ecs_problem *p = ecs__problem(w, ECS_PROBLEM_CYCLE);
        if (!p || !ECS__RESERVE(w, g->cycles, g->cycle_cap, (size_t)g->cycle_count + 4)) return false;
        e = &g->edges[i];
        g->cycles[g->cycle_count++] = e->from + 1;
        g->cycles[g->cycle_count++] = e->to + 1;
        p->cycle_len = 2;
        ecs__members_begin(w);
        g->cycles[g->cycle_count++] = (e->from < e->to ? e->from : e->to) + 1;
        g->cycles[g->cycle_count++] = (e->from < e->to ? e->to : e->from) + 1;
        p->member_count = 2;
        if (!ecs__text(w, "cycle: \"%s\" runs before \"%s\" (", ecs__sname(w, e->from), ecs__sname(w, e->to)) ||
            !ecs__text_edge(w, e) ||
            !ecs__text(w, "), which runs before \"%s\" (its stage \"%s\" runs before stage \"%s\"); put "
                       "them in one stage or drop the declaration", ecs__sname(w, e->from),
                       w->sys.stages[stt].name, w->sys.stages[sf].name) || !ecs__problem_end(w))
            return false;
    }
    return true;
}

#ifndef ECS_NO_STDIO
ECS_API void ecs_report_print(const ecs_report *r, FILE *out) {
    if (!r || !out) return;
    for (int i = 0; i < r->count; i++) fprintf(out, "%s\n", r->problems[i].message);
    for (int i = 0; i < r->note_count; i++) fprintf(out, "note: %s\n", r->notes[i].message);
    int problems = r->count + r->omitted, notes = r->note_count + r->notes_omitted;
    if (r->omitted) fprintf(out, "... and %d more problems not listed\n", r->omitted);
    if (r->notes_omitted) fprintf(out, "... and %d more notes not listed\n", r->notes_omitted);
    if (problems) fprintf(out, "%d problem%s in the system graph", problems, problems > 1 ? "s" : "");
    else fprintf(out, "the system graph is valid");
    if (notes) fprintf(out, " (%d note%s)", notes, notes > 1 ? "s" : "");
    fputc('\n', out);
}
#endif

/* ---- >>validate: the system graph, stage by stage ------------------------- */
/* Validation builds, per stage (seeds 000-003), in these steps, one
   function each (ecs__stage_build calls them in order):
    1. declared edges and independent pairs inside the stage;
    2. the run order: a topological order of the declared graph's strongly
       connected components (an iterative Tarjan: a chain of 100,000
       systems needs no deep stack) in which each system comes as early as
       declared order allows, in registration priority. Local indices are
       places in it, so declared edges point forward except inside a cycle;
    3. access: each system's declaration as bitset rows per id (>>conflicts);
    4. exclusion: independent_of partners that conflict;
    5. inferred order: INSERTION orders every conflicting pair nothing orders
       along the run order, nearest pairs first, so an edge made redundant by
       a nearer one is never inferred; WRITERS_FIRST adds writer -> reader
       wherever declared order does not say otherwise, never cutting a loop
       that closes: a loop is a CYCLE problem;
    6. the final graph, declared and inferred edges;
    7. cycles, one problem per strongly connected component with a loop;
    8. reachability as one bitset row per component of the final graph,
       sinks first, so a graph with a cycle still gets its races;
    9. races and 10. notes by bitset operations per system, never a search
       per pair;
   11. the transitive reduction the scheduler signals along (seed 002). */

/* ---- one stage, from declared edges to the reduced execution graph ---- */
/* Step 1: the declared edges and independent pairs inside the stage, as
   pairs of registration-order local indices. */
static bool ecs__build_declared(ecs__build *b) {
    ecs_world *w = b->w;
    const ecs__graph *g = &w->graph;
    for (uint32_t i = 0; i < g->edge_count; i++) {
        const ecs__edge *e = &g->edges[i];
        if (w->sys.systems[e->from].stage != b->st || w->sys.systems[e->to].stage != b->st) continue;
        if (e->kind == ECS__EDGE_DECLARED) b->dn++; else if (e->kind == ECS__EDGE_INDEPENDENT) b->in += 2;
    }
    b->dpairs = (uint64_t *)ecs__tmp(b, b->dn, 8);
    b->ipairs = (uint64_t *)ecs__tmp(b, b->in, 8);
    b->deid = (uint32_t *)ecs__tmp(b, b->dn, sizeof(uint32_t));
    if (!b->dpairs || !b->ipairs || !b->deid) return false;
    b->dn = b->in = 0;
    for (uint32_t i = 0; i < g->edge_count; i++) {
        const ecs__edge *e = &g->edges[i];
        if (w->sys.systems[e->from].stage != b->st || w->sys.systems[e->to].stage != b->st) continue;
        uint64_t from = g->local[e->from], to = g->local[e->to];
        if (e->kind == ECS__EDGE_DECLARED) { b->deid[b->dn] = i; b->dpairs[b->dn++] = from << 32 | to; }
        else if (e->kind == ECS__EDGE_INDEPENDENT) {
            b->ipairs[b->in++] = from << 32 | to;
            b->ipairs[b->in++] = to << 32 | from;
        }
    }
    return true;
}

/* Step 2: the run order; from here on local indices are places in it. Then
   the declared graph (and the independent pairs) over those places, and its
   components. */
static bool ecs__build_run_order(ecs__build *b) {
    ecs__graph *g = &b->w->graph;
    uint32_t m = b->m, dn = b->dn, in = b->in;
    ecs__comps dc;
    uint32_t *pos = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    if (!pos || !ecs__csr(b, b->dpairs, dn, false, &b->dout_at, &b->dout, NULL, NULL) ||
        !ecs__csr(b, b->dpairs, dn, true, &b->din_at, &b->din, NULL, NULL) ||
        !ecs__components(b, b->dout_at, b->dout, &dc) ||
        !ecs__run_order(b, &dc, b->dout_at, b->dout, b->din_at, b->din, pos))
        return false;
    uint32_t *reg = (uint32_t *)ecs__tmp(b, m, sizeof(uint32_t));
    if (!reg) return false;
    memcpy(reg, b->sys, m * sizeof *reg);
    for (uint32_t v = 0; v < m; v++) { b->sys[pos[v]] = reg[v]; g->local[reg[v]] = pos[v]; }
    for (uint32_t i = 0; i < dn; i++) b->dpairs[i] = (uint64_t)pos[b->dpairs[i] >> 32] << 32 | pos[(uint32_t)b->dpairs[i]];
    for (uint32_t i = 0; i < in; i++) b->ipairs[i] = (uint64_t)pos[b->ipairs[i] >> 32] << 32 | pos[(uint32_t)b->ipairs[i]];
    ecs__tmp_release(b, reg);
    ecs__tmp_release(b, dc.of); ecs__tmp_release(b, dc.emit); ecs__tmp_release(b, dc.start);
    ecs__tmp_release(b, b->dout_at); ecs__tmp_release(b, b->dout);
    ecs__tmp_release(b, b->din_at); ecs__tmp_release(b, b->din);
    ecs__tmp_release(b, pos);
    return ecs__csr(b, b->dpairs, dn, false, &b->dout_at, &b->dout, b->deid, &b->dout_eid) &&
           ecs__csr(b, b->dpairs, dn, true, &b->din_at, &b->din, NULL, NULL) &&
           ecs__csr(b, b->ipairs, in, false, &b->ind_at, &b->ind, NULL, NULL) &&
           ecs__components(b, b->dout_at, b->dout, &b->dc);
}

/* The declared graph's reachability (rows per declared component), made
   once, by the first step that needs it. */
static bool ecs__build_ddesc(ecs__build *b) {
    if (b->ddesc) return true;
    b->ddesc = (uint64_t *)ecs__tmp(b, (size_t)b->dc.count * b->words, 8);
    return b->ddesc && ecs__closure(b, b->dout_at, b->dout, &b->dc, b->ddesc);
}

/* Step 5: inferred order, by the world's policy. */
static bool ecs__build_inferred(ecs__build *b) {
    if (b->w->order == ECS_ORDER_INSERTION) return ecs__infer_insertion(b, &b->dc);
    if (b->w->order == ECS_ORDER_WRITERS_FIRST)
        return ecs__build_ddesc(b) && ecs__infer_writers(b, b->ddesc, b->dc.of);
    return true;
}

/* Step 6: the final graph, declared and inferred edges, and its components
   (the declared graph itself when nothing was inferred). */
static bool ecs__build_final(ecs__build *b) {
    ecs_world *w = b->w;
    ecs__graph *g = &w->graph;
    uint32_t dn = b->dn;
    b->fn = dn + b->inferred_count; b->fout_at = b->dout_at; b->fout = b->dout; b->fout_eid = b->dout_eid;
    b->fin_at = b->din_at; b->fin = b->din;
    if (b->inferred_count) {
        uint32_t fn = b->fn;
        uint64_t *all = (uint64_t *)ecs__tmp(b, fn, 8);
        uint32_t *eid = (uint32_t *)ecs__tmp(b, fn, sizeof(uint32_t));
        if (!all || !eid) return false;
        memcpy(all, b->dpairs, (size_t)dn * 8);
        memcpy(all + dn, b->inferred, (size_t)b->inferred_count * 8);
        memcpy(eid, b->deid, (size_t)dn * sizeof *eid);
        for (uint32_t i = dn; i < fn; i++) eid[i] = ECS__NONE;
        if (!ecs__csr(b, all, fn, false, &b->fout_at, &b->fout, eid, &b->fout_eid)) return false;
        ecs__tmp_release(b, all);
        ecs__tmp_release(b, eid);
        b->fin_at = b->fin = NULL;   /* made from fout when the reduction needs it */
        if (w->order == ECS_ORDER_INSERTION) {   /* for the DOT export */
            if (!ECS__RESERVE(w, g->edges, g->edge_cap, (size_t)g->edge_count + b->inferred_count)) return false;
            for (uint32_t i = 0; i < b->inferred_count; i++) {
                ecs__edge *e = &g->edges[g->edge_count++];
                memset(e, 0, sizeof *e);
                e->from = b->sys[b->inferred[i] >> 32];
                e->to = b->sys[(uint32_t)b->inferred[i]];
                e->kind = ECS__EDGE_INFERRED;
            }
        }
        ecs__free(w, b->inferred);   /* in fout now */
        b->inferred = NULL;
        b->inferred_cap = 0;
    }
    return ecs__components(b, b->fout_at, b->fout, &b->fc);
}

/* Step 7: cycles, one problem per component of the final graph with a loop;
   the declared edges inside one are marked for the DOT export. */
static bool ecs__build_cycles(ecs__build *b) {
    ecs_world *w = b->w;
    ecs__graph *g = &w->graph;
    ecs__stage_graph *sg = b->sg;
    uint32_t m = b->m, *dist = NULL, *prev = NULL, *queue = NULL;
    uint64_t *sorted = NULL;
    for (uint32_t c = 0; c < b->fc.count; c++) {
        if (!ecs__comp_cyclic(&b->fc, b->fout_at, b->fout, c)) continue;
        if (!sg->cyclic) {   /* the loop searches' scratch, once for the stage */
            dist = (uint32_t *)ecs__tmp(b, m, sizeof *dist);
            prev = (uint32_t *)ecs__tmp(b, m, sizeof *prev);
            queue = (uint32_t *)ecs__tmp(b, m, sizeof *queue);
            sorted = (uint64_t *)ecs__tmp(b, m, sizeof *sorted);
            if (!dist || !prev || !queue || !sorted) return false;
        }
        sg->cyclic = true;
        if (!ecs__cycle_problem(b, &b->fc, c, b->fout_at, b->fout, b->fout_eid, dist, prev, queue, sorted))
            return false;
    }
    if (sg->cyclic)
        for (uint32_t i = 0; i < g->edge_count; i++) {
            ecs__edge *e = &g->edges[i];
            if (e->kind == ECS__EDGE_DECLARED && w->sys.systems[e->from].stage == b->st &&
                w->sys.systems[e->to].stage == b->st && b->fc.of[g->local[e->from]] == b->fc.of[g->local[e->to]])
                e->cycle = true;
        }
    return true;
}

/* Step 8: reachability in the final graph, one row per component (kept by
   the stage: the scheduler and ecs_schedule_simulate use it). */
static bool ecs__build_reach(ecs__build *b) {
    ecs__stage_graph *sg = b->sg;
    size_t bytes = (size_t)b->fc.count * b->words * 8;
    sg->row_of = (uint32_t *)ecs__alloc(b->w, (size_t)b->m * sizeof(uint32_t));
    sg->desc = (uint64_t *)ecs__alloc(b->w, bytes);
    if (!sg->row_of || !sg->desc) return false;
    memcpy(sg->row_of, b->fc.of, (size_t)b->m * sizeof(uint32_t));
    memset(sg->desc, 0, bytes);
    return ecs__closure(b, b->fout_at, b->fout, &b->fc, sg->desc);
}

static bool ecs__reaches(const ecs__build *b, uint32_t a, uint32_t c) {
    return ecs__bit(b->sg->desc + (size_t)b->fc.of[a] * b->words, c);
}

/* Step 9: races, a conflicting pair that no path orders (never in INSERTION
   order, which orders every conflicting pair). */
static bool ecs__build_races(ecs__build *b) {
    uint32_t m = b->m, W = b->words;
    if (b->w->order == ECS_ORDER_INSERTION) return true;
    uint64_t *cand = (uint64_t *)ecs__tmp(b, 2 * (size_t)W, 8);
    if (!cand) return false;
    for (uint32_t a = 0; a < m; a++) {
        ecs__conflicts(b, a, cand, cand + W);
        const uint64_t *da = b->sg->desc + (size_t)b->fc.of[a] * W;
        for (uint32_t k = a >> 6; k < W; k++) {
            uint64_t bits = cand[k] & ~da[k];
            if (k == a >> 6) bits &= ~((2ull << (a & 63)) - 1);   /* only c > a */
            for (; bits; bits &= bits - 1) {
                uint32_t c = k * 64 + ecs__lsb(bits);
                if (!ecs__reaches(b, c, a) && !ecs__race_problem(b, a, c)) return false;
            }
        }
    }
    ecs__tmp_release(b, cand);
    return true;
}

/* Step 10: notes, a reader that runs before a writer only by inferred
   order; never about an EXCLUSIVE system (it accesses everything, so the
   note's own rule, "a writes nothing c accesses", excludes it). A loop's own
   pairs are a CYCLE already. */
static bool ecs__build_notes(ecs__build *b) {
    ecs__graph *g = &b->w->graph;
    uint32_t W = b->words;
    if (!b->inferred_count) return true;
    const uint64_t *excl = ecs__row(b, 0, ECS__ROW_LW);   /* compact 0 is written by exclusive ones */
    uint64_t *into = (uint64_t *)ecs__tmp(b, 3 * (size_t)W, 8);
    if (!ecs__build_ddesc(b) || !into) return false;
    uint64_t *out = into + W, *same = into + 2 * W;
    for (uint32_t comp = 0; comp < b->fc.count; comp++) {
        const uint32_t *members = b->fc.emit + b->fc.start[comp];
        uint32_t count = b->fc.start[comp + 1] - b->fc.start[comp];
        for (uint32_t i = 0; i < count; i++) ecs__bit_set(same, members[i]);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t a = members[i];
            if (ecs__bit(excl, a)) continue;
            ecs__into_out(b, a, into, out);
            const uint64_t *da = b->sg->desc + (size_t)comp * W, *dd = b->ddesc + (size_t)b->dc.of[a] * W;
            for (uint32_t k = 0; k < W; k++) {
                uint64_t bits = into[k] & ~out[k] & da[k] & ~dd[k] & ~same[k] & ~excl[k];
                if (bits && g->note_count >= ECS__REPORT_CAP) g->notes_omitted += ecs__popcount(bits);
                else
                    for (; bits; bits &= bits - 1) {
                        uint32_t c = k * 64 + ecs__lsb(bits);
                        if (!ecs__read_note(b, a, c, ecs__written_into(b, c, a))) return false;
                    }
            }
        }
        for (uint32_t i = 0; i < count; i++) same[members[i] >> 6] = 0;
    }
    return true;
}

/* ECS_NOTE_EVENT_NEXT_FRAME: a reads event type ev, which c emits in the
   same stage, so a sees them a turn late (events are delivered at the
   stage's end). */
static bool ecs__build_event_notes(ecs__build *b) {
    ecs_world *w = b->w;
    for (uint32_t a = 0; a < b->m; a++) {
        const ecs__system *ra = &w->sys.systems[b->sys[a]];
        for (uint32_t c = 0; ra->reads_events && c < b->m; c++) {
            const ecs__system *ec = &w->sys.systems[b->sys[c]];
            for (uint32_t k = 0; c != a && ec->emits[0] && k < ra->win_count; k++) {
                ecs_id ev = w->ev.logs[ra->win[k].log].id;
                if (!ecs__emits(ec, ev) || !ecs__listed(w, true)) continue;
                ecs_problem *p = ecs__problem_in(w, ECS_NOTE_EVENT_NEXT_FRAME, true);
                if (!p) return false;
                p->a = b->sys[a] + 1;
                p->b = b->sys[c] + 1;
                p->id = ev;
                bool fixed = w->sys.stages[w->sys.stages[b->st].leader].fixed_dt > 0;
                if (!ecs__text(w, "event a turn late: \"%s\" reads %s, which \"%s\" emits in the same stage, so "
                               "it sees those events one %s later; to see them in the same %s, move \"%s\" to a "
                               "later stage%s", ra->name, w->reg.ids[ev].name, ec->name, fixed ? "step" : "frame",
                               fixed ? "step" : "frame", ra->name, fixed ? " of the same step group" : "") ||
                    !ecs__problem_end(w))
                    return false;
            }
        }
    }
    return true;
}

/* The final graph's in-edges, from its out-edges (when inference replaced
   the declared graph's). */
static bool ecs__build_final_in(ecs__build *b) {
    uint32_t m = b->m;
    if (b->fin_at) return true;
    b->fin_at = (uint32_t *)ecs__tmp(b, (size_t)m + 1, sizeof *b->fin_at);
    b->fin = (uint32_t *)ecs__tmp(b, b->fn, sizeof *b->fin);
    uint32_t *fill = (uint32_t *)ecs__tmp(b, m, sizeof *fill);
    if (!b->fin_at || !b->fin || !fill) return false;
    for (uint32_t e = 0; e < b->fn; e++) b->fin_at[b->fout[e] + 1]++;
    for (uint32_t v = 0; v < m; v++) b->fin_at[v + 1] += b->fin_at[v];
    memcpy(fill, b->fin_at, m * sizeof *fill);
    for (uint32_t v = 0; v < m; v++)
        for (uint32_t e = b->fout_at[v]; e < b->fout_at[v + 1]; e++) b->fin[fill[b->fout[e]]++] = v;
    ecs__tmp_release(b, fill);
    return true;
}

/* Step 11: the execution graph, the transitive reduction, in a topological
   order that keeps the run order wherever the final graph allows (the
   inline order of a stage on one thread). A cyclic stage has none: it
   cannot run. */
static bool ecs__build_reduction(ecs__build *b) {
    ecs__stage_graph *sg = b->sg;
    uint32_t m = b->m;
    if (sg->cyclic) return true;
    uint32_t *key = (uint32_t *)ecs__tmp(b, m, sizeof *key);
    if (!key || !ecs__build_final_in(b) ||
        !ecs__run_order(b, &b->fc, b->fout_at, b->fout, b->fin_at, b->fin, key) ||
        !ecs__reduce(b, b->fout_at, b->fout, sg->desc, sg->row_of, key))
        return false;
    if (b->w->order == ECS_ORDER_WRITERS_FIRST)   /* the inferred edges that matter, for DOT */
        for (uint32_t v = 0; v < m; v++)
            for (uint32_t e = sg->succ_at[v]; e < sg->succ_at[v + 1]; e++) {
                uint32_t s = sg->succ[e], d = b->dout_at[v];
                while (d < b->dout_at[v + 1] && b->dout[d] != s) d++;
                if (d == b->dout_at[v + 1] && !ecs__edge_add(b->w, b->sys[v], b->sys[s], ECS__EDGE_INFERRED, 0))
                    return false;
            }
    return true;
}

/* One stage, the steps of the section's header comment in order. compact
   maps ids to compact ids (all ECS__NONE between stages). */
static bool ecs__stage_build(ecs_world *w, ecs_stage st, uint32_t *compact) {
    ecs__graph *g = &w->graph;
    ecs__stage_graph *sg = &g->stages[st];
    ecs__build b;
    memset(&b, 0, sizeof b);
    b.w = w;
    b.sg = sg;
    b.st = st;
    b.compact = compact;
    b.sys = g->order + sg->first;   /* registration order until the run order is known */
    b.m = sg->count;
    b.words = sg->words = ecs__words(sg->count);
    if (!b.m) return true;
    bool ok = ecs__build_declared(&b) && ecs__build_run_order(&b) && ecs__build_access(&b) &&
              ecs__build_exclusion(&b) && ecs__build_inferred(&b) && ecs__build_final(&b) &&
              ecs__build_cycles(&b) && ecs__build_reach(&b) && ecs__build_races(&b) &&
              ecs__build_notes(&b) && ecs__build_event_notes(&b) && ecs__build_reduction(&b);
    ecs__build_free(&b);
    return ok;
}

/* ---- the whole graph ---- */
static void ecs__graph_reset(ecs_world *w) {
    ecs__graph *g = &w->graph;
    for (uint32_t s = 0; s < g->stage_count; s++) {
        ecs__free(w, g->stages[s].desc);
        ecs__free(w, g->stages[s].succ_at);
        ecs__free(w, g->stages[s].succ);
        ecs__free(w, g->stages[s].preds);
        ecs__free(w, g->stages[s].topo);
        ecs__free(w, g->stages[s].excl_at);
        ecs__free(w, g->stages[s].excl);
        ecs__free(w, g->stages[s].row_of);
    }
    ecs__free(w, g->stages);
    ecs__free(w, g->run);
    ecs__free(w, g->order);
    ecs__free(w, g->reg);
    ecs__free(w, g->local);
    g->stages = NULL; g->order = g->reg = g->local = g->run = NULL;
    g->stage_count = g->problem_count = g->note_count = g->cycle_count = g->text_size = g->edge_count = 0;
    g->omitted = g->notes_omitted = 0;
    g->built = false;
}

static void ecs__graph_fini(ecs_world *w) {
    ecs__graph *g = &w->graph;
    ecs__graph_reset(w);
    ecs__free(w, g->problems);
    ecs__free(w, g->fix);
    ecs__free(w, g->notes);
    ecs__free(w, g->note_fix);
    ecs__free(w, g->cycles);
    ecs__free(w, g->text);
    ecs__free(w, g->edges);
}


/* The systems grouped by stage, registration order inside: count, place
   each stage, then count again to hand out the local indices. */
static bool ecs__graph_place(ecs_world *w) {
    ecs__graph *g = &w->graph;
    uint32_t n = w->sys.system_count;
    g->stage_count = w->sys.stage_count;
    g->stages = (ecs__stage_graph *)ecs__alloc(w, (size_t)w->sys.stage_count * sizeof *g->stages);
    if (g->stages) memset(g->stages, 0, (size_t)w->sys.stage_count * sizeof *g->stages);
    g->order = (uint32_t *)ecs__alloc(w, ((size_t)n + 1) * sizeof(uint32_t));
    g->reg = (uint32_t *)ecs__alloc(w, ((size_t)n + 1) * sizeof(uint32_t));
    g->local = (uint32_t *)ecs__alloc(w, ((size_t)n + 1) * sizeof(uint32_t));
    if (!g->stages || !g->order || !g->reg || !g->local) { if (!g->stages) g->stage_count = 0; return false; }
    for (uint32_t s = 0; s < n; s++) g->stages[w->sys.systems[s].stage].count++;
    for (uint32_t st = 1; st < w->sys.stage_count; st++)
        g->stages[st].first = g->stages[st - 1].first + g->stages[st - 1].count;
    for (uint32_t st = 0; st < w->sys.stage_count; st++) g->stages[st].count = 0;
    for (uint32_t s = 0; s < n; s++) {
        ecs__stage_graph *sg = &g->stages[w->sys.systems[s].stage];
        g->local[s] = sg->count++;
        g->order[sg->first + g->local[s]] = g->reg[sg->first + g->local[s]] = s;
    }
    return true;
}

/* System s's after/before/independent_of names as graph edges; a name no
   system has is an UNKNOWN_SYSTEM problem. */
static bool ecs__graph_declare(ecs_world *w, uint32_t s) {
    const ecs__system *sys = &w->sys.systems[s];
    for (int l = 0; l < ECS__DEP_LISTS; l++)
        for (int i = 0; i < ECS_MAX_DEPS && sys->deps[l][i]; i++) {
            ecs_system t = ecs__system_find(w, sys->deps[l][i]);
            if (!t) {
                if (!ecs__unknown_problem(w, s, sys->deps[l][i], l)) return false;
                continue;
            }
            uint32_t from = l == ECS__DEP_AFTER ? t - 1 : s, to = l == ECS__DEP_AFTER ? s : t - 1;
            if (!ecs__edge_add(w, from, to, l == ECS__DEP_INDEPENDENT ? ECS__EDGE_INDEPENDENT : ECS__EDGE_DECLARED,
                               (uint32_t)l))
                return false;
        }
    return true;
}

/* The whole graph: systems placed, per system its name problems and
   declared edges, declared edges against stage order, then each stage. */
static bool ecs__graph_make(ecs_world *w) {
    if (!ecs__graph_place(w)) return false;
    for (uint32_t s = 0; s < w->sys.system_count; s++)
        if (!ecs__system_problems(w, s) || !ecs__graph_declare(w, s)) return false;
    if (!ecs__stage_order_problems(w)) return false;
    uint32_t *compact = (uint32_t *)ecs__alloc(w, ((size_t)w->reg.id_count + 1) * sizeof(uint32_t));
    bool ok = compact != NULL;
    for (uint32_t i = 0; ok && i <= w->reg.id_count; i++) compact[i] = ECS__NONE;
    for (uint32_t st = 0; ok && st < w->sys.stage_count; st++) ok = ecs__stage_build(w, st, compact);
    ecs__free(w, compact);
    return ok;
}

/* Builds the graph if systems or stages changed since the last build. */
static ecs_result ecs__graph_build(ecs_world *w) {
    ecs__graph *g = &w->graph;
    if (g->built) return g->result;
    ecs__graph_reset(w);
    if (!ecs__graph_make(w)) {
        ecs__graph_reset(w);
        return ECS__OOM(w, "ecs_validate");
    }
    for (uint32_t i = 0; i < g->problem_count; i++) {
        ecs_problem *p = &g->problems[i];
        p->message = g->text + g->fix[3 * i];
        if (p->kind == ECS_PROBLEM_CYCLE) p->cycle = g->cycles + g->fix[3 * i + 1];
        if (g->fix[3 * i + 2] != ECS__NONE) p->members = g->cycles + g->fix[3 * i + 2];
    }
    for (uint32_t i = 0; i < g->note_count; i++) g->notes[i].message = g->text + g->note_fix[3 * i];
    uint32_t problems = g->problem_count + g->omitted;
    if (!problems) {   /* runnable: each stage's topological order as system indices */
        g->run = (uint32_t *)ecs__alloc(w, ((size_t)w->sys.system_count + 1) * sizeof(uint32_t));
        if (!g->run) {
            ecs__graph_reset(w);
            return ECS__OOM(w, "ecs_validate");
        }
        for (uint32_t st = 0; st < g->stage_count; st++) {
            const ecs__stage_graph *sg = &g->stages[st];
            for (uint32_t k = 0; k < sg->count; k++) {
                g->run[sg->first + k] = g->order[sg->first + sg->topo[k]];
                w->sys.systems[g->run[sg->first + k]].position = k;   /* its tick in a turn (>>change) */
            }
        }
    }
    g->built = true;
    g->builds++;
    g->result = problems ? ECS_ERR_INVALID_GRAPH : ECS_OK;
    if (problems)
        ecs__fail(w, ECS_ERR_INVALID_GRAPH, "ecs_validate: %u problem%s; first: %s",
                  (unsigned)problems, problems > 1 ? "s" : "", g->problems[0].message);
    return g->result;
}

ECS_API ecs_result ecs_validate(ecs_world *w, ecs_report *out) {
    if (out) memset(out, 0, sizeof *out);
    if (!w) return ECS_ERR_ARG;
    if (ecs__check_idle(w, "ecs_validate")) return ECS_ERR_BUSY;
    ecs_result r = ecs__graph_build(w);
    if (out && r != ECS_ERR_NOMEM) {
        const ecs__graph *g = &w->graph;
        out->count = (int)g->problem_count;
        out->problems = g->problems;
        out->note_count = (int)g->note_count;
        out->notes = g->notes;
        out->omitted = (int)g->omitted;
        out->notes_omitted = (int)g->notes_omitted;
    }
    return r;
}

ECS_API bool ecs_system_precedes(ecs_world *w, ecs_system a, ecs_system b) {
    if (!w || w->sched.phase != ECS__IDLE || a == b || !a || !b || a > w->sys.system_count || b > w->sys.system_count) return false;
    const ecs__system *sa = &w->sys.systems[a - 1], *sb = &w->sys.systems[b - 1];
    if (sa->stage != sb->stage) return sa->stage < sb->stage;
    if (ecs__graph_build(w) == ECS_ERR_NOMEM) return false;
    const ecs__graph *g = &w->graph;
    const ecs__stage_graph *sg = &g->stages[sa->stage];
    return ecs__bit(sg->desc + (size_t)sg->row_of[g->local[a - 1]] * sg->words, g->local[b - 1]);
}

/* ---- >>dot: the graph for Graphviz ---------------------------------------- */
#ifndef ECS_NO_STDIO
static void ecs__dot_html(FILE *out, const char *s) {   /* text inside an HTML-like label */
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", out);
        else if (*s == '>') fputs("&gt;", out);
        else if (*s == '&') fputs("&amp;", out);
        else if (*s == '"') fputs("&quot;", out);
        else fputc(*s, out);
    }
}

static void ecs__dot_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

ECS_API ecs_result ecs_write_dot(ecs_world *w, FILE *out) {
    if (!w) return ECS_ERR_ARG;
    if (!out) return ecs__fail(w, ECS_ERR_ARG, "ecs_write_dot: out is NULL");
    if (ecs__check_idle(w, "ecs_write_dot")) return ECS_ERR_BUSY;
    if (ecs__graph_build(w) == ECS_ERR_NOMEM) return ECS_ERR_NOMEM;
    const ecs__graph *g = &w->graph;
    fprintf(out, "digraph ecs {\n  rankdir=LR;\n  compound=true;\n"
                 "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n"
                 "  edge [fontname=\"Helvetica\", fontsize=10];\n");
    for (uint32_t st = 0; st < w->sys.stage_count; st++) {
        if (!g->stages[st].count) continue;   /* an empty stage would be an empty box */
        const ecs__stage *sd = &w->sys.stages[st];
        fprintf(out, "  subgraph cluster_stage%u {\n    label=<", (unsigned)st);
        ecs__dot_html(out, sd->name);
        if (sd->fixed_dt > 0) fprintf(out, "<BR/><FONT POINT-SIZE=\"9\">fixed step %g s</FONT>", (double)sd->fixed_dt);
        if (sd->leader != st) {
            fputs("<BR/><FONT POINT-SIZE=\"9\">steps with ", out);
            ecs__dot_html(out, w->sys.stages[sd->leader].name);
            fputs("</FONT>", out);
        }
        if (sd->run_if) fputs("<BR/><FONT POINT-SIZE=\"9\">run_if</FONT>", out);
        if (!ecs__load(&sd->enabled)) fputs("<BR/><FONT POINT-SIZE=\"9\">disabled</FONT>", out);
        fprintf(out, ">;\n    style=%s;\n    color=gray60;\n",
                sd->run_if || !ecs__load(&sd->enabled) ? "\"rounded,dashed\"" : "rounded");
        for (uint32_t k = 0; k < g->stages[st].count; k++) {
            uint32_t s = g->reg[g->stages[st].first + k];
            const ecs__system *sys = &w->sys.systems[s];
            fprintf(out, "    s%u [label=<", (unsigned)(s + 1));
            ecs__dot_html(out, sys->name);
            if (sys->flags & ECS_SYSTEM_EXCLUSIVE) fputs("<BR/><FONT POINT-SIZE=\"9\">exclusive</FONT>", out);
            if (sys->flags & ECS_SYSTEM_MAIN_THREAD) fputs("<BR/><FONT POINT-SIZE=\"9\">main thread</FONT>", out);
            if (sys->chunk_size > 0)
                fprintf(out, "<BR/><FONT POINT-SIZE=\"9\">chunks of %d</FONT>", sys->chunk_size);
            if (sys->run_if) fputs("<BR/><FONT POINT-SIZE=\"9\">run_if</FONT>", out);
            if (sys->interval > 1) fprintf(out, "<BR/><FONT POINT-SIZE=\"9\">every %d turns</FONT>", sys->interval);
            if (!ecs__load(&sys->enabled)) fputs("<BR/><FONT POINT-SIZE=\"9\">disabled</FONT>", out);
            fputc('>', out);
            if (sys->run_if || sys->interval > 1 || !ecs__load(&sys->enabled))   /* may be skipped */
                fputs(", style=\"rounded,filled,dashed\"", out);
            if (sys->flags & ECS_SYSTEM_EXCLUSIVE) fprintf(out, ", peripheries=2, fillcolor=\"#fde2c8\"");
            if (sys->flags & ECS_SYSTEM_MAIN_THREAD) fprintf(out, ", fillcolor=\"#d6e6ff\"");
            fprintf(out, "];\n");
        }
        fprintf(out, "  }\n");
    }
    /* stage order: one edge from each non-empty stage's box to the next's */
    for (uint32_t st = 0, prev = ECS__NONE; st < w->sys.stage_count; st++) {
        if (!g->stages[st].count) continue;
        if (prev != ECS__NONE)
            fprintf(out, "  s%u -> s%u [ltail=cluster_stage%u, lhead=cluster_stage%u, style=bold, "
                         "color=gray70, arrowhead=vee];\n",
                    (unsigned)(g->order[g->stages[prev].first] + 1), (unsigned)(g->order[g->stages[st].first] + 1),
                    (unsigned)prev, (unsigned)st);
        prev = st;
    }
    for (uint32_t i = 0; i < g->edge_count; i++) {
        const ecs__edge *e = &g->edges[i];
        if (e->kind == ECS__EDGE_INDEPENDENT) continue;
        fprintf(out, "  s%u -> s%u", (unsigned)(e->from + 1), (unsigned)(e->to + 1));
        if (e->cycle) fprintf(out, " [color=red, penwidth=2.5]");
        else if (e->kind == ECS__EDGE_INFERRED) fprintf(out, " [style=dashed, color=gray40]");
        fprintf(out, ";\n");
    }
    for (uint32_t i = 0; i < g->problem_count; i++) {
        const ecs_problem *p = &g->problems[i];
        if (p->kind != ECS_PROBLEM_RACE) continue;
        fprintf(out, "  s%u -> s%u [style=dotted, color=red, dir=none, constraint=false, label=",
                (unsigned)p->a, (unsigned)p->b);
        ecs__dot_string(out, p->id ? w->reg.ids[p->id].name : "exclusive");
        fprintf(out, ", fontcolor=red];\n");
    }
    for (uint32_t l = 0; l < w->ev.log_count; l++)   /* events: emitter -> reader, no order */
        for (uint32_t e = 0; w->ev.logs[l].reader_count && e < w->sys.system_count; e++) {
            if (!ecs__emits(&w->sys.systems[e], w->ev.logs[l].id)) continue;
            for (uint32_t r = 0; r < w->ev.logs[l].reader_count; r++) {
                fprintf(out, "  s%u -> s%u [style=dotted, color=\"#2a7f62\", constraint=false, label=",
                        (unsigned)(e + 1), (unsigned)(w->ev.logs[l].readers[r] + 1));
                ecs__dot_string(out, w->ev.logs[l].id ? w->reg.ids[w->ev.logs[l].id].name : "");
                fprintf(out, ", fontcolor=\"#2a7f62\"];\n");
            }
        }
    fprintf(out, "}\n");
    return ferror(out) ? ecs__fail(w, ECS_ERR_ARG, "ecs_write_dot: writing failed") : ECS_OK;
}
#endif   /* ECS_NO_STDIO */

/* ---- >>netcode: the hash trace, schedule shuffling, ecs_random ---------- */
/* The hash trace's entries are made where a system completes (ecs__complete,
   or the inline loop): nothing ordered after it has started, and nothing
   unordered with it may touch what it writes, so what is hashed is what the
   system left, on any thread count. Shuffling changes only choices the
   graph leaves open: the heaps' key, the inline order, chunk order. */

/* A pending handle by its index only: the buffer's serial depends on which
   thread readied the system. */
static ecs_entity ecs__htrace_handle(ecs_entity e) {
    return (e & ECS__PENDING) ? ECS__PENDING | ecs__pending_index(e) : e;
}

/* One recorded value (a command's or an event's): its bytes with handles
   normalized, or what serialize says; a value with hooks and no serialize
   only counts (its bytes may be pointers). */
static void ecs__htrace_value(ecs_world *w, ecs__hasher *h, const ecs__idinfo *in, const unsigned char *v,
                              ecs__hash_buf *b) {
    if (in->serialize || !in->entity_field_count || in->size > sizeof b->small) {
        if (!in->lifecycle || in->serialize) ecs__hash_value(w, h, in, v, b);
        return;
    }
    memcpy(b->small, v, in->size);
    for (int k = 0; k < in->entity_field_count; k++) {
        ecs_entity e;
        memcpy(&e, b->small + in->entity_fields[k], sizeof e);
        e = ecs__htrace_handle(e);
        memcpy(b->small + in->entity_fields[k], &e, sizeof e);
    }
    if (!in->lifecycle) ecs__hash_feed(h, b->small, in->size);
}

/* n values of a column or a resource (no pending handles there). */
static void ecs__htrace_column(ecs_world *w, ecs__hasher *h, const ecs__idinfo *in, const unsigned char *v,
                               uint32_t n, ecs__hash_buf *b) {
    ecs__hash_feed(h, &n, sizeof n);
    if (!in->serialize) { if (!in->lifecycle) ecs__hash_feed(h, v, (size_t)n * in->size); return; }
    for (uint32_t i = 0; i < n; i++) ecs__hash_value(w, h, in, v + (size_t)i * in->size, b);
}

/* A buffer's commands, then its events by type. */
static void ecs__htrace_commands(ecs_world *w, ecs__hasher *h, const ecs_commands *c, ecs__hash_buf *b) {
    for (uint32_t k = 0; k < c->count; k++) {
        const ecs__cmd *x = &c->cmds[k];
        uint64_t f[3] = {x->op, x->id, ecs__htrace_handle(x->e)};
        ecs__hash_feed(h, f, sizeof f);
        if (x->op == ECS__CMD_PARENT || x->op == ECS__CMD_INSTANTIATE) {
            ecs_entity e;
            memcpy(&e, c->data + x->value, sizeof e);
            e = ecs__htrace_handle(e);
            ecs__hash_feed(h, &e, sizeof e);
        } else if (x->op == ECS__CMD_SET && w->reg.ids[x->id].size) {
            ecs__htrace_value(w, h, &w->reg.ids[x->id], c->data + x->value, b);
        }
    }
    for (uint32_t k = 0; c->ev_count && k < c->evb_count; k++) {
        const ecs__evbuf *e = &c->evb[k];
        if (!e->count) continue;
        uint32_t f[2] = {e->id, e->count};
        ecs__hash_feed(h, f, sizeof f);
        for (uint32_t i = 0; e->size && i < e->count; i++)
            ecs__htrace_value(w, h, &w->reg.ids[e->id], e->data + (size_t)i * e->size, b);
    }
}

/* Rows [row, row + n) of m's table: s's WRITE columns there. */
static void ecs__htrace_rows(ecs_world *w, ecs__hasher *h, const ecs__system *s, const ecs__match *m, uint32_t row,
                             uint32_t n, ecs__hash_buf *b) {
    if (!n) return;
    for (int k = 0; k < s->term_count; k++)
        if ((ecs__term_how(&s->terms[k]) & ECS__TW) && m->column[k] >= 0) {
            const ecs__column *col = &m->table->columns[m->column[k]];
            ecs__htrace_column(w, h, &w->reg.ids[s->terms[k].id], col->data + (size_t)row * col->size, n, b);
        }
}

/* Chunk `chunk` of s ran on rows [row, row + n) of m's table: their hash,
   made on its thread while they are in its cache. */
static void ecs__htrace_chunk(ecs_world *w, ecs__system *s, uint32_t chunk, const ecs__match *m, uint32_t row,
                              uint32_t n) {
    ecs__hasher h;
    ecs__hash_init(&h);
    ecs__hash_buf b;
    b.p = b.small;
    b.cap = sizeof b.small;
    ecs__htrace_rows(w, &h, s, m, row, n, &b);
    if (b.p != b.small) ecs__free(w, b.p);
    w->htrace.sys[s - w->sys.systems].chunk_hash[chunk] = ecs__hash_done(&h);
}

/* System s completed this turn: what it was allowed to write (see
   ecs_hash_step). */
static void ecs__htrace_system(ecs_world *w, ecs__system *s) {
    ecs__netsys *ns = &w->htrace.sys[s - w->sys.systems];
    ns->ran = s->chunks != 0;
    ns->hash = 0;
    if (!ns->ran) return;
    ecs__hasher h;
    ecs__hash_init(&h);
    ecs__hash_buf b;
    b.p = b.small;
    b.cap = sizeof b.small;
    if (s->chunk_size > 0 && s->query) {   /* chunks, hashed where they ran, folded in order */
        ecs__hash_feed(&h, ns->chunk_hash, (size_t)s->chunks * sizeof *ns->chunk_hash);
    } else {
        for (uint32_t i = 0; s->query && i < s->query->match_count; i++)
            ecs__htrace_rows(w, &h, s, &s->query->matches[i], 0, s->query->matches[i].table->count, &b);
    }
    for (int k = 0; k < ECS_MAX_TERMS && s->writes[k]; k++) {
        const ecs__idinfo *in = &w->reg.ids[s->writes[k]];
        if (in->resource) { ecs__htrace_column(w, &h, in, (const unsigned char *)in->data, 1, &b); continue; }
        for (uint32_t t = 0; in->size && t < w->tab.table_count; t++) {
            const ecs__table *tb = w->tab.tables[t];
            int32_t x = tb->count ? ecs__table_find_id(tb, s->writes[k]) : -1;
            if (x >= 0 && tb->column_of[x] >= 0)
                ecs__htrace_column(w, &h, in, tb->columns[tb->column_of[x]].data, tb->count, &b);
        }
    }
    for (uint32_t c = 0; c < s->chunks && c < s->buf_count; c++) ecs__htrace_commands(w, &h, &s->bufs[c], &b);
    if (b.p != b.small) ecs__free(w, b.p);
    ns->hash = ecs__hash_done(&h);
}

/* Before stage st's turn: room for its entries (the turn does not start
   without it), and every system not run yet. */
static bool ecs__htrace_begin(ecs_world *w, const ecs__stage_graph *sg) {
    ecs__htrace_state *ht = &w->htrace;
    if (!ECS__RESERVE(w, ht->steps, ht->cap, (size_t)ht->count + sg->count + 1)) return false;
    for (uint32_t k = 0; k < sg->count; k++) {
        ecs__netsys *ns = &w->htrace.sys[w->graph.reg[sg->first + k]];
        ns->ran = false;
        ns->hash = 0;
    }
    return true;
}

/* After stage st's turn (its sync point applied): its entries. */
static void ecs__htrace_end(ecs_world *w, uint32_t st, const ecs__stage_graph *sg) {
    ecs__htrace_state *ht = &w->htrace;
    for (uint32_t k = 0; k <= sg->count; k++) {
        ecs_hash_step *e = &ht->steps[ht->count++];
        e->stage = st;
        e->step = (int)w->sched.step;
        if (k < sg->count) {
            uint32_t si = w->graph.reg[sg->first + k];
            e->system = si + 1;
            e->ran = w->htrace.sys[si].ran;
            e->hash = w->htrace.sys[si].hash;
            continue;
        }
        ecs__hasher h;   /* the sync point: the entity counters, the tables' sizes */
        ecs__hash_init(&h);
        ecs__hash_counters(w, &h);
        for (uint32_t t = 0; t < w->tab.table_count; t++) ecs__hash_feed(&h, &w->tab.tables[t]->count, 4);
        e->system = 0;
        e->ran = true;
        e->hash = ecs__hash_done(&h);
    }
}

ECS_API void ecs_hash_trace_enable(ecs_world *w, bool on) {
    if (!w || ecs__check_idle(w, "ecs_hash_trace_enable")) return;
    w->htrace.on = on;
    w->htrace.count = 0;
}

ECS_API int ecs_hash_trace(const ecs_world *w, const ecs_hash_step **steps) {
    if (steps) *steps = w && w->htrace.count ? w->htrace.steps : NULL;
    return w ? (int)w->htrace.count : 0;
}

/* Before a frame that traces or shuffles: the per-system netcode state,
   the trace emptied, and the frame's shuffle (its seed; the key array). */
static bool ecs__netcode_frame(ecs_world *w) {
    ecs__htrace_state *ht = &w->htrace;
    ht->count = 0;
    w->sched.prio = w->sched.ranks;
    w->sched.shuffle_now = 0;
    if (ht->sys_count < w->sys.system_count) {
        ecs__netsys *more = (ecs__netsys *)ecs__realloc(w, ht->sys, w->sys.system_count * sizeof *more);
        if (!more) return false;
        memset(more + ht->sys_count, 0, (w->sys.system_count - ht->sys_count) * sizeof *more);
        ht->sys = more;
        ht->sys_count = w->sys.system_count;
    }
    if (!w->sched.shuffle_seed) return true;
    uint32_t n = w->sys.system_count ? w->sys.system_count : 1;
    if (w->sched.shuffled_n < n) {
        double *p = (double *)ecs__realloc(w, w->sched.shuffled, n * sizeof *p);
        if (!p) return false;
        w->sched.shuffled = p;
        w->sched.shuffled_n = n;
    }
    ecs__store_relaxed(&w->sched.jitter, 1);   /* (0 again: ecs_world_set_shuffle_seed) */
    w->sched.prio = w->sched.shuffled;
    w->sched.shuffle_now = ecs__hash64(w->sched.shuffle_seed ^ ecs__hash64(w->sched.frame + 0x9e3779b97f4a7c15ull)) | 1;
    return true;
}

/* The k-th random number of this frame's turn for system (or stream) x. */
static uint64_t ecs__shuffle_rand(const ecs_world *w, uint64_t x, uint64_t k) {
    return ecs__hash64(w->sched.shuffle_now ^ ecs__hash64((w->sched.turn << 24 ^ x) * 0x9e3779b97f4a7c15ull + k));
}

/* Shuffling: a worker waits a random moment before it takes a task, so
   which thread takes which task (and who wakes first) varies. */
#if ECS__THREADS
static void ecs__shuffle_delay(ecs__tctx *tc) {
    tc->rng = ecs__hash64(tc->rng + 0x9e3779b97f4a7c15ull + (uint64_t)tc->index);
    for (uint32_t i = (uint32_t)(tc->rng & 255); i; i--) ECS__PAUSE();
}
#endif

/* A turn's heap keys: random, so ready systems come in a random order. */
static void ecs__shuffle_turn(ecs_world *w, const ecs__stage_graph *sg) {
    for (uint32_t k = 0; k < sg->count; k++) {
        uint32_t si = w->graph.order[sg->first + k];
        w->sched.shuffled[si] = (double)(ecs__shuffle_rand(w, si, 0) >> 11);
    }
}

static uint32_t ecs__gcd(uint32_t a, uint32_t b) { while (b) { uint32_t t = a % b; a = b; b = t; } return a; }

/* A readied chunked system's chunk order this run: c -> (c * mul + add) mod
   chunks, a permutation (mul coprime to chunks). */
static void ecs__shuffle_chunks(ecs_world *w, ecs__system *s) {
    uint32_t n = s->chunks;
    uint64_t r = ecs__shuffle_rand(w, (uint64_t)(s - w->sys.systems), 1);
    ecs__netsys *ns = &w->htrace.sys[s - w->sys.systems];
    ns->perm_mul = 1;
    ns->perm_add = 0;
    if (n < 2) return;
    ns->perm_mul = 1 + (uint32_t)(r % (n - 1));
    while (ecs__gcd(ns->perm_mul, n) != 1) ns->perm_mul = ns->perm_mul % (n - 1) + 1;
    ns->perm_add = (uint32_t)((r >> 32) % n);
}

/* The chunk the k-th claim of s runs. */
static uint32_t ecs__chunk_of(const ecs_world *w, const ecs__system *s, uint32_t k) {
    if (!w->sched.shuffle_now || s->chunks < 2) return k;
    const ecs__netsys *ns = &w->htrace.sys[s - w->sys.systems];
    return (uint32_t)(((uint64_t)k * ns->perm_mul + ns->perm_add) % s->chunks);
}

ECS_API ecs_result ecs_world_set_shuffle_seed(ecs_world *w, uint64_t seed) {
    if (!w) return ECS_ERR_ARG;
    ecs_result r = ecs__check_idle(w, "ecs_world_set_shuffle_seed");
    if (r) return r;
    w->sched.shuffle_seed = seed;
    if (!seed) {   /* (frames that neither trace nor shuffle do not look at these) */
        ecs__store_relaxed(&w->sched.jitter, 0);
        w->sched.prio = w->sched.ranks;
        w->sched.shuffle_now = 0;
    }
    return ECS_OK;
}

ECS_API uint64_t ecs_random(const ecs_iter *it, int row, uint32_t salt) {
    if (!it || !it->world) return 0;
    const ecs_world *w = it->world;
    ecs_entity e = 0;
    if (it->count > 0) {
        if (row < 0 || row >= it->count || !it->entities) return 0;
        e = it->entities[row];
    }
    uint64_t turn = it->system ? w->sched.turn : w->sched.frame;
    uint64_t x = ecs__hash64(w->random_seed + 0x9e3779b97f4a7c15ull);
    x = ecs__hash64(x ^ (turn + 0x632be59bd9b4e019ull));
    x = ecs__hash64(x ^ ((uint64_t)it->system << 32 | salt));
    return ecs__hash64(x ^ (e * 0xc2b2ae3d27d4eb4full + 1));
}

/* ---- >>sched: running the graph ------------------------------------------ */
/* Seeds 001-004. Each stage runs its transitively reduced graph: a system
   starts when its last predecessor finishes (a dependency counter per system,
   no barrier inside a stage); the ready queue is ordered by the longest path
   left to the end of the stage, weighted by measured durations (critical path
   first), ties by registration. A chunked system stays at the top of the queue
   until every chunk is claimed. MAIN_THREAD and EXCLUSIVE systems wait in a
   second queue only thread 0 reads. Commands go to one buffer per (system,
   chunk) and are applied at sync points in registration and chunk order, so
   the result never depends on the thread count. A stage whose measured work
   is too small to pay for waking a sleeping worker runs inline on thread 0. */

#ifndef ECS_SPIN_NS          /* how long an idle worker spins before it sleeps */
#  define ECS_SPIN_NS 50000
#endif
#ifndef ECS_TIMING_MS        /* automatic timing: at most one timed frame per this many ms */
#  define ECS_TIMING_MS 50
#endif
#ifndef ECS_PARALLEL_MIN_NS  /* a stage with less measured work runs on thread 0 */
#  define ECS_PARALLEL_MIN_NS 50000
#endif
#define ECS__MAX_THREADS 256

/* Stops the frame (any thread; the first failure wins): systems already
   started finish, nothing else starts, and the sync point applies what the
   finished ones recorded: the state of a frame stopped at that point. */
static void ecs__frame_fail(ecs_world *w, ecs_result r) {
#if ECS__THREADS
    ecs__cas_sc(&w->sched.failed, 0, (int)r);
#else
    if (!w->sched.failed) w->sched.failed = (int)r;
#endif
}

/* The index of q's first matched table with rows; match_count if none (its
   matches are NULL until a table matches). */
ECS__HOT uint32_t ecs__first_rows(const ecs_query *q) {
    uint32_t i = 0;
    while (i < q->match_count && !q->matches[i].table->count) i++;
    return i;
}

/* Counts what a ready system has to do this frame and gives it a command
   buffer per chunk. False when there is nothing to do: no matching rows
   (or no buffers: then the frame reports ECS_ERR_NOMEM). */
ECS__HOT bool ecs__prepare(ecs_world *w, ecs__system *s) {
    uint32_t chunks = 1;
    if (s->query) {
        const ecs__match *m = s->query->matches;
        const uint32_t count = s->query->match_count;
        if (s->chunk_size <= 0) {   /* one task: any row will do */
            chunks = ecs__first_rows(s->query) < count;
        } else {
            uint64_t n = 0;
            for (uint32_t i = 0; i < count; i++)
                n += (m[i].table->count + (uint64_t)s->chunk_size - 1) / (uint64_t)s->chunk_size;
            chunks = (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX - 1);
        }
    }
    s->chunks = chunks;
    if (!chunks) {
        if (s->reads_events) { ecs__windows_take(w, s); ecs__windows_done(s); }   /* it ran, on no rows */
        return false;
    }
    if (s->chunk_size > 0) {   /* an unchunked system never moves these off 0 */
        s->next_chunk = 0;
        s->ran_chunks = chunks;
        ecs__store(&s->done_chunks, 0);
        if (ECS__UNLIKELY(w->sched.shuffle_now)) ecs__shuffle_chunks(w, s);
        ecs__netsys *ns = w->htrace.on ? &w->htrace.sys[s - w->sys.systems] : NULL;
        if (ECS__UNLIKELY(ns != NULL) && !ECS__RESERVE(w, ns->chunk_hash, ns->chunk_cap, chunks)) {
            ecs__frame_fail(w, ECS_ERR_NOMEM);
            s->chunks = 0;
            return false;
        }
    }
    if (chunks > s->buf_count) {
        uint32_t old = s->buf_cap;
        if (!ECS__RESERVE(w, s->bufs, s->buf_cap, chunks)) {
            ecs__frame_fail(w, ECS_ERR_NOMEM);
            s->chunks = 0;
            return false;
        }
        memset(s->bufs + old, 0, (size_t)(s->buf_cap - old) * sizeof *s->bufs);
        for (uint32_t b = s->buf_count; b < chunks; b++) {
            s->bufs[b].world = w;
            s->bufs[b].slot = ECS__NONE;
            s->bufs[b].serial = ecs__serial_next(w);
        }
        s->buf_count = chunks;
    }
    s->runs++;
    s->last_frame = w->sched.frame + 1;   /* 0: never ran */
    if (s->reads_events) ecs__windows_take(w, s);   /* (not before: without buffers it does not run) */
    if (s->changed) { s->since = s->seen; s->seen = w->chg.base + s->position; }   /* (a readied system runs) */
    return true;
}

/* Asks s's run_if on thread tc, under s's declarations (the access checks
   see s running). */
/* s is skipped this turn (not disabled: that was settled at the turn's
   start): its windows keep what it has not seen, up to the backlog. */
static bool ecs__skipped(ecs_world *w, ecs__system *s) {
    if (s->reads_events) ecs__windows_skip(w, s, false);
    return false;
}

static bool ecs__ask(ecs_world *w, ecs__tctx *tc, ecs__system *s, uint32_t si) {
    uint32_t was = tc->current;
    tc->current = si + 1;
    tc->asking = true;
    bool run = s->run_if(w, s->run_if_ctx);
    tc->asking = false;
    tc->current = was;
    return run || ecs__skipped(w, s);
}

#if ECS__THREADS
static bool ecs__has_partners(const ecs_world *w, uint32_t si);
#endif

/* Whether a gated system runs this turn: enabled, its interval's turn, its
   run_if. The run_if waits (cond_due) for an EXCLUSIVE system's sync point
   (ecs__exclusive), and for the thread that takes the system (ecs__take_due)
   when that must be thread 0 and this is a worker, or when an
   independent_of partner that conflicts with it may be running now: it
   reads what the system reads, so only once the queue has made sure the
   partner is not. */
static bool ecs__gate_open(ecs_world *w, ecs__tctx *tc, ecs__system *s, uint32_t si) {
    if (s->gate & ECS__GATE_OFF) return false;
    if ((s->gate & ECS__GATE_INTERVAL) && w->sched.turn % (uint64_t)s->interval) return ecs__skipped(w, s);
    if (!(s->gate & ECS__GATE_COND)) return true;
    if (s->flags & ECS_SYSTEM_EXCLUSIVE) return s->cond_due = true;   /* after its sync point */
#if ECS__THREADS
    if (w->sched.parallel && ((tc->index && ecs__on_main(s)) || ecs__has_partners(w, si))) return s->cond_due = true;
#endif
    return ecs__ask(w, tc, s, si);
}

/* Whether s may start: false once the frame stopped, when it is skipped
   this turn, or when there is nothing to do. */
ECS__HOT bool ecs__may_start(ecs_world *w, ecs__tctx *tc, ecs__system *s, uint32_t si) {
    if (ecs__load(&w->sched.failed) || (s->gate && !ecs__gate_open(w, tc, s, si))) { s->chunks = 0; return false; }
    if (s->cond_due) { s->chunks = 1; s->next_chunk = 0; return true; }   /* one task: ecs__take_due */
    return ecs__prepare(w, s);
}

/* Calls s on rows [row, row + n) of the table m matches. */
ECS__HOT void ecs__call(ecs_world *w, ecs__tctx *tc, ecs__system *s, const ecs__match *m, uint32_t row,
                      uint32_t n, ecs_iter *it) {
    const ecs__table *t = m->table;
    it->count = (int)n;
    it->entities = t->entities + row;
    const ecs__column *const cols = t->columns;   /* locals: the stores below may alias */
    for (int i = 0, terms = s->term_count; i < terms; i++) {
        int c = m->column[i];
        it->priv.fields[i] = c < 0 ? NULL : cols[c].data + (size_t)row * cols[c].size;
    }
#if ECS_CHECK_ACCESS
    tc->batch_table = t; tc->batch_row = row; tc->batch_count = n;
#else
    (void)tc;
#endif
    if (s->flags & ECS_SYSTEM_EXCLUSIVE) {   /* its own immediate changes must not move these rows */
        ecs__table *held = m->table;
        held->lock++;
        w->sched.excl_table = held->index;
        w->sched.excl_system = (uint32_t)(s - w->sys.systems);
        s->fn(it);
        held->lock--;
        w->sched.excl_table = ECS__NONE;
        return;
    }
    if (w->check_reads) ecs__call_checked(w, s, it);
    else s->fn(it);
}

/* Rows [row, row + n) of m's table for s, as batches: all of them, or for
   a system with ECS_CHANGED terms the runs of blocks changed since its
   previous run (a chunk's batches keep its chunk index as it->batch); each
   stamps what it wrote when stamps are kept (the lean run's systems, which
   never come here, write nothing that is stamped: ecs__system_plain). */
ECS__HOT void ecs__call_rows(ecs_world *w, ecs__tctx *tc, ecs__system *s, const ecs__match *m, uint32_t row,
                             uint32_t n, ecs_iter *it) {
    const bool chunked = s->chunk_size > 0;
    for (uint32_t end = row + n, got = n; s->changed ? (got = ecs__changed_run(m, s->changed, s->since, &row, end)) != 0
                                                     : row < end; row += got) {
        ecs__call(w, tc, s, m, row, got, it);
        if (ECS__UNLIKELY(w->chg.on)) ecs__stamp_batch(s->terms, s->term_count, m, row, got, w->chg.base + s->position, it);
        it->batch += !chunked;
    }
}

static void ecs__trace_add(ecs_world *w, ecs__tctx *tc, uint32_t system, uint32_t chunk,
                           uint64_t start, uint64_t end) {
    if (tc->event_count == tc->event_cap &&
        !ECS__RESERVE(w, tc->events, tc->event_cap, (size_t)tc->event_count + 1)) {
        (void)ecs__add_fetch(&w->trace.trace_lost, 1);
        return;
    }
    ecs__event *e = &tc->events[tc->event_count++];
    e->system = system; e->chunk = chunk; e->start = start; e->end = end; e->frame = w->sched.frame;
    e->step = w->sched.step;
}

/* A system's iterator before its first batch: every field set (this runs
   per system per frame); count, entities and fields by ecs__call, or by
   ecs__run for a system without terms. */
ECS__HOT void ecs__iter_start(ecs_world *w, const ecs__tctx *tc, const ecs__system *s, uint32_t si,
                              uint32_t chunk, ecs_iter *it) {
    it->world = w;
    it->system = si + 1;
    it->dt = w->sched.dt;
    it->real_dt = w->sched.real_dt;
    it->ctx = s->ctx;
    it->commands = &s->bufs[chunk == ECS__NONE ? 0 : chunk];
    it->thread = tc->index;
    it->chunk = chunk == ECS__NONE ? 0 : (int)chunk;
    it->batch = it->chunk;
    it->priv.terms = s->terms;
    it->priv.term_count = s->term_count;
    it->priv.query = NULL;
    it->priv.table = NULL;
    it->priv.cursor = 0;
    it->priv.locks = 0;
    it->priv.skip = 0;
}

/* Runs one task: a whole system, or chunk `chunk` of a chunked one. When
   timing, t0 is its start (0: read the clock), and it returns its end: thread
   0 running a stage inline reads the clock once per system, not twice. */
ECS__HOT uint64_t ecs__run(ecs_world *w, ecs__tctx *tc, uint32_t si, uint32_t chunk, uint64_t t0) {
    ecs__system *s = &w->sys.systems[si];
    ecs_iter it;
    ecs__iter_start(w, tc, s, si, chunk, &it);
    if (w->stats.timing && !t0) t0 = ecs__now_ns();
    tc->current = si + 1;
    if (!s->query) {
        it.count = 0;
        it.entities = NULL;
        s->fn(&it);
    } else if (s->query->sort) {   /* its batches in order (>>order) */
        const ecs__sort *S = ecs__sort_system(w, s->query, (s->flags & ECS_SYSTEM_EXCLUSIVE) != 0);
        for (uint32_t i = 0; S && i < S->run_count; i++)
            ecs__call_rows(w, tc, s, &S->mat[S->runs[i].match], S->runs[i].row, S->runs[i].n, &it);
        if (S && (s->flags & ECS_SYSTEM_EXCLUSIVE)) ecs__sort_lock(w, s->query, -1);
    } else if (chunk == ECS__NONE) {   /* re-read each step: an exclusive system may add tables */
        const ecs_query *q = s->query;
        for (uint32_t i = 0; i < q->match_count; i++) {
            const ecs__table *t = q->matches[i].table;
            if (t->count) ecs__call_rows(w, tc, s, &q->matches[i], 0, t->count, &it);
            while (q->matches[i].table != t) i++;   /* (grouped: a table it made may have settled before) */
        }
    } else {   /* chunk k: tables in match order, each cut into chunk_size rows */
        const ecs_query *q = s->query;
        uint32_t k = chunk, size = (uint32_t)s->chunk_size;
        for (uint32_t i = 0; i < q->match_count; i++) {
            uint32_t rows = q->matches[i].table->count, n = (rows + size - 1) / size;
            if (k >= n) { k -= n; continue; }
            uint32_t row = k * size;
            ecs__call_rows(w, tc, s, &q->matches[i], row, rows - row < size ? rows - row : size, &it);
            if (ECS__UNLIKELY(w->htrace.on)) ecs__htrace_chunk(w, s, chunk, &q->matches[i], row, rows - row < size ? rows - row : size);
            break;
        }
    }
    tc->current = 0;
#if ECS_CHECK_ACCESS
    tc->batch_table = NULL;
#endif
    if (!w->stats.timing) return 0;
    uint64_t t1 = ecs__now_ns();
    (void)ecs__add_fetch(&s->work_ns, t1 - t0);
    if (w->trace.tracing) ecs__trace_add(w, tc, si, chunk, t0, t1);
    return t1;
}

/* A system finished its `chunks` chunks: if it recorded commands or
   events, they are due at the next sync point, which skips systems with
   nothing to apply, and their count tells it whether to share them. */
ECS__HOT void ecs__finished(ecs_world *w, ecs__system *s, uint32_t chunks) {
    uint32_t any = 0, cmds = 0;
    for (uint32_t b = 0; b < chunks; b++) {
        any |= s->bufs[b].count | s->bufs[b].ev_count;
        cmds += s->bufs[b].count;
    }
    if (!any) return;
    s->ran = true;
    (void)ecs__add_fetch(&w->sched.due, 1);
    if (cmds) (void)ecs__add_fetch(&w->sched.due_cmds, cmds);   /* (the size of the sync point: >>sync) */
}

/* ---- the queue lock: a spinlock (critical sections are a few heap
   operations), or a mutex under ECS_VALGRIND so helgrind can see it */
#if ECS__THREADS
static void ecs__qlock(ecs_world *w) {
#  ifdef ECS_VALGRIND
    ecs__mtx_lock(&w->sched.qmtx);
#  else
    /* short sections: spin, but yield if the holder seems to have lost its core */
    for (uint32_t i = 1; ecs__xchg_acquire(&w->sched.qlock, 1); i++)
        while (ecs__load_relaxed(&w->sched.qlock)) {
            if (!(i++ & 63)) ecs__yield();
            ECS__PAUSE();
        }
#  endif
}

static void ecs__qunlock(ecs_world *w) {
#  ifdef ECS_VALGRIND
    ecs__mtx_unlock(&w->sched.qmtx);
#  else
    ecs__store(&w->sched.qlock, 0);
#  endif
}

/* After pushing tasks: wake sleeping workers (if they can take what was
   pushed), and thread 0 if it sleeps waiting for a task. The seq_cst loads
   pair with the sleepers' checks. */
static void ecs__wake(ecs_world *w, bool shared) {
    bool workers = shared && ecs__load_sc(&w->sched.sleepers) != 0, main = ecs__load_sc(&w->sched.main_sleeping) != 0;
    if (!workers && !main) return;
    ecs__mtx_lock(&w->sched.park_lock);
    if (workers) ecs__cnd_broadcast(&w->sched.park);
    if (main) ecs__cnd_broadcast(&w->sched.main_park);
    ecs__mtx_unlock(&w->sched.park_lock);
}

static void ecs__heap_add(ecs_world *w, uint32_t si);

/* Queues a ready system; true if workers can take it (seq_cst counts pair
   with the checks of a thread about to sleep). */
static bool ecs__push_ready(ecs_world *w, uint32_t si) {
    ecs__qlock(w);
    ecs__heap_add(w, si);
    ecs__qunlock(w);
    return !ecs__on_main(&w->sys.systems[si]);
}

static bool ecs__unpark(ecs_world *w, uint32_t si);

/* A finished system releases its successors; those with nothing to do finish
   at once, through a worklist rather than recursion. */
static void ecs__complete(ecs_world *w, ecs__tctx *tc, uint32_t si) {
    const ecs__stage_graph *sg = w->sched.stage_run;
    const uint32_t *order = w->graph.order + sg->first;
    uint32_t n = 0;
    bool pushed = false, shared = false;
    tc->work[n++] = si;
    while (n) {
        uint32_t v = tc->work[--n], local = w->graph.local[v];
        ecs__finished(w, &w->sys.systems[v], w->sys.systems[v].chunks);
        if (w->sys.systems[v].reads_events) ecs__windows_done(&w->sys.systems[v]);   /* (never plain) */
        if (ECS__UNLIKELY(w->htrace.on)) ecs__htrace_system(w, &w->sys.systems[v]);   /* before partners
                                                                                        and successors */
        if (w->sys.systems[v].active && ecs__unpark(w, v)) { pushed = true; shared = true; }
        for (uint32_t e = sg->succ_at[local]; e < sg->succ_at[local + 1]; e++) {
            uint32_t u = order[sg->succ[e]];
            ecs__system *su = &w->sys.systems[u];
            ECS__HAPPENS_BEFORE(&su->pending);
            if (ecs__sub_fetch(&su->pending, 1)) continue;
            ECS__HAPPENS_AFTER(&su->pending);
            if (ecs__may_start(w, tc, su, u)) { shared |= ecs__push_ready(w, u); pushed = true; }
            else tc->work[n++] = u;
        }
        ECS__HAPPENS_BEFORE(&w->sched.remaining);
        if (ecs__sub_fetch_sc(&w->sched.remaining, 1) == 0 && ecs__load_sc(&w->sched.main_sleeping)) {
            ecs__mtx_lock(&w->sched.park_lock);   /* the stage's last system: thread 0 may sleep */
            ecs__cnd_broadcast(&w->sched.main_park);
            ecs__mtx_unlock(&w->sched.park_lock);
        }
    }
    if (pushed) ecs__wake(w, shared);
}

typedef struct ecs__task { uint32_t system, chunk; } ecs__task;

/* ---- independent_of partners that conflict: any order, never at once ---- */
static bool ecs__has_partners(const ecs_world *w, uint32_t si) {
    const ecs__stage_graph *sg = w->sched.stage_run;
    uint32_t local = w->graph.local[si];
    return sg->excl_at && sg->excl_at[local] != sg->excl_at[local + 1];
}

/* Under the queue lock: whether a partner of si has started and not finished. */
static bool ecs__blocked(const ecs_world *w, uint32_t si) {
    const ecs__stage_graph *sg = w->sched.stage_run;
    const uint32_t *order = w->graph.order + sg->first;
    uint32_t local = w->graph.local[si];
    for (uint32_t e = sg->excl_at[local]; e < sg->excl_at[local + 1]; e++)
        if (w->sys.systems[order[sg->excl[e]]].active) return true;
    return false;
}

/* Under the queue lock, for a system just taken off a heap: parks it if a
   partner runs (true), else marks it running. */
static bool ecs__park(ecs_world *w, uint32_t si) {
    if (!ecs__has_partners(w, si)) return false;
    if (ecs__blocked(w, si)) { w->sched.parked[w->sched.parked_count++] = si; return true; }
    w->sys.systems[si].active = true;
    return false;
}

static void ecs__heap_add(ecs_world *w, uint32_t si) {   /* under the queue lock */
    if (ecs__on_main(&w->sys.systems[si])) {
        ecs__heap_push(w->sched.main_ready, &w->sched.main_count, si, w->sched.prio);
        (void)ecs__add_fetch_sc(&w->sched.main_queued, 1);
    } else {
        ecs__heap_push(w->sched.ready, &w->sched.ready_count, si, w->sched.prio);
        (void)ecs__add_fetch_sc(&w->sched.queued, 1);
    }
}

/* A system with partners finished: parked partners that nothing blocks any
   more go back to the heaps. True if any did. */
static bool ecs__unpark(ecs_world *w, uint32_t si) {
    bool any = false;
    ecs__qlock(w);
    w->sys.systems[si].active = false;
    for (uint32_t i = 0; i < w->sched.parked_count;) {
        uint32_t p = w->sched.parked[i];
        if (ecs__blocked(w, p)) { i++; continue; }
        w->sched.parked[i] = w->sched.parked[--w->sched.parked_count];
        ecs__heap_add(w, p);
        any = true;
    }
    ecs__qunlock(w);
    return any;
}

/* Takes the best task this thread may run. A worker counts itself busy
   before it lets go of the lock, so an exclusive system that holds the
   queue can wait for the busy count to drain. */
static bool ecs__take(ecs_world *w, int thread, ecs__task *t) {
    if (!ecs__load_sc(&w->sched.queued) && (thread || !ecs__load_sc(&w->sched.main_queued))) return false;
    bool got = false;
    ecs__qlock(w);
    for (;;) {
        if (thread == 0 && w->sched.main_count) {
            t->system = ecs__heap_pop(w->sched.main_ready, &w->sched.main_count, w->sched.prio);
            t->chunk = ECS__NONE;
            (void)ecs__sub_fetch(&w->sched.main_queued, 1);
            if (ecs__park(w, t->system)) continue;
            got = true;
        } else if (w->sched.ready_count && !(thread && ecs__load_relaxed(&w->sched.hold))) {
            ecs__system *s = &w->sys.systems[w->sched.ready[0]];
            t->system = w->sched.ready[0];
            if (s->next_chunk == 0 && ecs__has_partners(w, t->system) && ecs__blocked(w, t->system)) {
                ecs__heap_pop(w->sched.ready, &w->sched.ready_count, w->sched.prio);
                (void)ecs__sub_fetch(&w->sched.queued, 1);   /* queued counts heap entries */
                w->sched.parked[w->sched.parked_count++] = t->system;
                continue;
            }
            if (s->next_chunk == 0 && ecs__has_partners(w, t->system)) s->active = true;
            t->chunk = s->chunk_size > 0 ? ecs__chunk_of(w, s, s->next_chunk++) : ECS__NONE;
            if (t->chunk == ECS__NONE || s->next_chunk == s->chunks) {   /* its last chunk */
                ecs__heap_pop(w->sched.ready, &w->sched.ready_count, w->sched.prio);
                (void)ecs__sub_fetch(&w->sched.queued, 1);
            }
            got = true;
        }
        break;
    }
    if (got && thread) (void)ecs__add_fetch(&w->sched.busy, 1);
    ecs__qunlock(w);
    return got;
}

/* A system whose run_if waited for its taker (cond_due) was taken as one
   task: asks it now, then prepares the run. True: run the task. False: the
   task is used up, the system skipped (complete at once) or, if chunked,
   queued again with its real chunks. */
static bool ecs__take_due(ecs_world *w, ecs__tctx *tc, uint32_t si) {
    ecs__system *s = &w->sys.systems[si];
    s->cond_due = false;
    if (ecs__load(&w->sched.failed) || !ecs__ask(w, tc, s, si) || !ecs__prepare(w, s)) {
        s->chunks = 0;
        ecs__complete(w, tc, si);
        return false;
    }
    if (s->chunk_size <= 0) return true;
    ecs__wake(w, ecs__push_ready(w, si));   /* its `active` stays set: partners stay out */
    return false;
}

static void ecs__task_done(ecs_world *w, ecs__tctx *tc, const ecs__task *t) {
    if (t->chunk != ECS__NONE) {
        ecs__system *s = &w->sys.systems[t->system];
        uint32_t chunks = s->chunks;   /* read first: once the last chunk is done, the next frame may reset it */
        ECS__HAPPENS_BEFORE(&s->done_chunks);
        if (ecs__add_fetch(&s->done_chunks, 1) != chunks) return;
        ECS__HAPPENS_AFTER(&s->done_chunks);
    }
    ecs__complete(w, tc, t->system);
}

#endif   /* ECS__THREADS */

static ecs_result ecs__sync(ecs_world *w, const ecs__stage_graph *sg, bool deliver);

/* An exclusive system runs alone on thread 0, after the commands recorded
   so far in the stage are applied; it may change structure directly. If
   those commands cannot be applied, the frame stops before it. A defer block
   it leaves open is ended for it (the defer buffer is the world's: ordinary
   systems must never see defer mode), and stops the frame. */
static void ecs__exclusive(ecs_world *w, uint32_t si) {
    ecs__system *s = &w->sys.systems[si];
    bool ask = s->cond_due;   /* its run_if sees what the sync point applied, as the system would */
    w->sched.phase = ECS__SYNC;
    w->chg.fixed = w->chg.base + s->position;   /* what applies now and what it does: its tick */
    ecs_result r = ecs__sync(w, w->sched.stage_run, false);   /* systems finished so far; their events
                                                                    are delivered at the stage's end */
    s->cond_due = false;
    if (r) {
        if (r != ECS_ERR_NOMEM) ecs__msg_set(w, &w->sched.fail_msg, "%s", ecs__msg_text(&w->error));
        ecs__frame_fail(w, r);
        s->chunks = 0;
        if (!ask && s->changed) s->seen = s->since;   /* readied, but it does not run (>>change) */
    } else if (ask && (!ecs__ask(w, &w->sched.tctx[0], s, si) || !ecs__prepare(w, s))) {
        s->chunks = 0;   /* skipped */
    } else {
        (void)ecs__run(w, &w->sched.tctx[0], si, ECS__NONE, 0);
        if (w->cmd.defer_depth) {
            w->deferring -= w->cmd.defer_depth;
            w->cmd.defer_depth = 0;
            ecs_result applied = ecs__commands_apply(w, w->cmd.defer);
            ecs__msg_set(w, &w->sched.fail_msg, "ecs_progress: exclusive system \"%s\" returned inside a "
                         "defer block (ecs_defer_begin without ecs_defer_end); it was ended for it%s",
                         w->sys.systems[si].name, applied ? ", but its commands could not all be applied "
                         "(ecs_defer_end applies the rest)" : "");
            ecs__frame_fail(w, ECS_ERR_BUSY);
        }
    }
    w->chg.fixed = 0;
    w->sched.phase = ECS__SYSTEMS;
}

#if ECS__THREADS
static int ecs__worker_main(void *arg) {
    ecs__tctx *tc = (ecs__tctx *)arg;
    ecs_world *w = tc->w;
    for (;;) {
        ecs__task t;
        if (ecs__job_join(w, tc)) continue;
        if (ECS__UNLIKELY(ecs__load_relaxed(&w->sched.jitter))) ecs__shuffle_delay(tc);
        if (ecs__take(w, tc->index, &t)) {
            if (!w->sys.systems[t.system].cond_due || ecs__take_due(w, tc, t.system)) {
                (void)ecs__run(w, tc, t.system, t.chunk, 0);
                ecs__task_done(w, tc, &t);
            }
            ECS__HAPPENS_BEFORE(&w->sched.busy);
            (void)ecs__sub_fetch(&w->sched.busy, 1);
            continue;
        }
        /* nothing to take: spin about as long as a wake-up costs, then sleep */
        uint64_t deadline = 0;
        bool again = false;
        for (uint32_t i = 1;; i++) {
            if ((ecs__load_relaxed(&w->sched.queued) && !ecs__load_relaxed(&w->sched.hold)) ||
                (ecs__load_relaxed(&w->sched.job_on) && ecs__load_relaxed(&w->sched.job_left) > 0)) {
                again = true;
                break;
            }
            if (!(i & 1023)) ecs__yield();   /* spinning is for hand-offs, not for hogging a core */
            if (!(i & 63)) {
                uint64_t now = ecs__now_ns();
                if (!deadline) deadline = now + ECS_SPIN_NS;
                else if (now > deadline) break;
            }
            ECS__PAUSE();
        }
        if (again) continue;
        ecs__mtx_lock(&w->sched.park_lock);
        (void)ecs__add_fetch_sc(&w->sched.sleepers, 1);
        while (!w->sched.quit && (!ecs__load_sc(&w->sched.queued) || ecs__load(&w->sched.hold)) &&
               !(ecs__load_sc(&w->sched.job_on) && ecs__load_sc(&w->sched.job_left) > 0))
            ecs__cnd_wait(&w->sched.park, &w->sched.park_lock);
        (void)ecs__sub_fetch_sc(&w->sched.sleepers, 1);
        bool quit = w->sched.quit;
        ecs__mtx_unlock(&w->sched.park_lock);
        if (quit) return 0;
    }
}
#endif

#if ECS__THREADS
/* Thread 0 with nothing to take: spin about a wake-up's cost, then sleep
   until a task is queued or the stage's last system finishes. */
static void ecs__main_wait(ecs_world *w) {
    uint64_t deadline = 0;
    for (uint32_t i = 1;; i++) {
        if (ecs__load_relaxed(&w->sched.queued) || ecs__load_relaxed(&w->sched.main_queued) ||
            !ecs__load_relaxed(&w->sched.remaining))
            return;
        if (!(i & 1023)) ecs__yield();
        if (!(i & 63)) {
            uint64_t now = ecs__now_ns();
            if (!deadline) deadline = now + ECS_SPIN_NS;
            else if (now > deadline) break;
        }
        ECS__PAUSE();
    }
    ecs__mtx_lock(&w->sched.park_lock);
    ecs__store_sc(&w->sched.main_sleeping, 1);
    while (!ecs__load_sc(&w->sched.queued) && !ecs__load_sc(&w->sched.main_queued) && ecs__load_sc(&w->sched.remaining))
        ecs__cnd_wait(&w->sched.main_park, &w->sched.park_lock);
    ecs__store_sc(&w->sched.main_sleeping, 0);
    ecs__mtx_unlock(&w->sched.park_lock);
}
#endif

/* ---- running one stage ---- */
/* A plain system on thread 0 in a frame that is not timed, from m, its first
   table with rows: what ecs__prepare and ecs__run do for it, without their
   cases for chunks, clocks and exclusive systems (a quarter of a tiny
   system's cost). A non-exclusive system cannot change structure, so
   its matches stay put while it runs. */
ECS__HOT void ecs__run_plain(ecs_world *w, ecs__tctx *tc, uint32_t si, const ecs__match *m) {
    ecs__system *s = &w->sys.systems[si];
    const ecs__match *end = s->query->matches + s->query->match_count;
    s->chunks = 1;
    s->runs++;
    s->last_frame = w->sched.frame + 1;
    ecs_iter it;
    ecs__iter_start(w, tc, s, si, ECS__NONE, &it);
    tc->current = si + 1;
    ecs__call(w, tc, s, m, 0, m->table->count, &it);   /* m has rows: batch 0 */
    for (m++; m < end; m++)
        if (m->table->count) { it.batch++; ecs__call(w, tc, s, m, 0, m->table->count, &it); }
    tc->current = 0;
#if ECS_CHECK_ACCESS
    tc->batch_table = NULL;
#endif
    ecs__finished(w, s, 1);
}

/* System si on thread 0 in an inline stage, the general way; false once
   the frame stopped. t: the previous system's end when timing. */
static bool ecs__inline_one(ecs_world *w, ecs__tctx *tc, uint32_t si, uint64_t *t) {
    ecs__system *s = &w->sys.systems[si];
    if (!ecs__may_start(w, tc, s, si)) return !ecs__load(&w->sched.failed);
    if (s->flags & ECS_SYSTEM_EXCLUSIVE) {
        ecs__exclusive(w, si);
        *t = 0;
    } else if (s->chunk_size > 0) {
        for (uint32_t c = 0; c < s->chunks; c++) *t = ecs__run(w, tc, si, ecs__chunk_of(w, s, c), *t);
    } else {
        *t = ecs__run(w, tc, si, ECS__NONE, *t);
    }
    ecs__finished(w, s, s->chunks);
    if (s->reads_events) ecs__windows_done(s);   /* (a reader is never plain) */
    if (ECS__UNLIKELY(w->htrace.on)) ecs__htrace_system(w, s);
    return true;
}

/* Aligned: a tiny frame's time is this loop's, and should not depend on
   where the rest of the program's code happens to land. */
ECS__LOOP void ecs__stage_inline(ecs_world *w, const ecs__stage_graph *sg) {
    ecs__tctx *tc = &w->sched.tctx[0];
    const uint32_t *run = w->graph.run + sg->first;
    uint64_t t = w->stats.timing ? ecs__now_ns() : 0;   /* timing: the previous system's end */
    const bool lean = !w->stats.timing && !w->htrace.on;   /* (the trace hashes after each system) */
    for (uint32_t k = 0; k < sg->count; k++) {
        uint32_t si = run[k];
        ecs__system *s = &w->sys.systems[si];
        if (s->plain & lean) {
            const ecs_query *q = s->query;
            const uint32_t i = ecs__first_rows(q);
            if (i == q->match_count) { s->chunks = 0; continue; }   /* nothing to do */
            if (ecs__load(&w->sched.failed)) { s->chunks = 0; break; }   /* the frame stopped */
            if (s->buf_count) { ecs__run_plain(w, tc, si, &q->matches[i]); continue; }
        } else if (s->plain & (lean << 1)) {   /* the same, asked first (as ecs__may_start does) */
            if (ecs__load(&w->sched.failed)) { s->chunks = 0; break; }
            if (!ecs__gate_open(w, tc, s, si)) { s->chunks = 0; continue; }
            const ecs_query *q = s->query;
            const uint32_t i = ecs__first_rows(q);
            if (i == q->match_count) { s->chunks = 0; continue; }
            if (s->buf_count) { ecs__run_plain(w, tc, si, &q->matches[i]); continue; }
            if (!ecs__prepare(w, s)) break;   /* (out of memory for its first buffer) */
            (void)ecs__run(w, tc, si, ECS__NONE, 0);
            ecs__finished(w, s, 1);
            continue;
        }   /* else its first run, which makes its buffer */
        if (!ecs__inline_one(w, tc, si, &t)) break;
    }
}

/* A stage on thread 0 in a random order the graph allows (shuffling): each
   step picks at random among the systems whose predecessors are done. */
static void ecs__stage_shuffled(ecs_world *w, const ecs__stage_graph *sg) {
    ecs__tctx *tc = &w->sched.tctx[0];
    const uint32_t *order = w->graph.order + sg->first;
    uint32_t *ready = w->sched.ready, n = 0;   /* (the heap is empty: the stage is inline) */
    uint64_t t = w->stats.timing ? ecs__now_ns() : 0;
    for (uint32_t k = 0; k < sg->count; k++) {
        ecs__store_relaxed(&w->sys.systems[order[k]].pending, (int32_t)sg->preds[k]);
        if (!sg->preds[k]) ready[n++] = k;
    }
    for (uint64_t pick = 0; n; pick++) {
        uint32_t x = (uint32_t)(ecs__shuffle_rand(w, ~0ull, pick) % n), local = ready[x];
        ready[x] = ready[--n];
        if (!ecs__inline_one(w, tc, order[local], &t)) break;
        for (uint32_t e = sg->succ_at[local]; e < sg->succ_at[local + 1]; e++) {
            ecs__system *su = &w->sys.systems[order[sg->succ[e]]];
            int32_t left = ecs__load_relaxed(&su->pending) - 1;
            ecs__store_relaxed(&su->pending, left);
            if (!left) ready[n++] = sg->succ[e];
        }
    }
}

#if ECS__THREADS
/* Workers start at the first stage that runs in parallel, not in
   ecs_world_new: a world that never needs them costs no threads. If the
   system refuses a thread, frames run on the threads that did start (the
   results are the same on any number). */
static void ecs__workers_start(ecs_world *w) {
    w->sched.workers_tried = true;
    for (int i = 1; i < w->threads; i++) {
        ecs__tctx *tc = &w->sched.tctx[i];
        tc->start.fn = ecs__worker_main;
        tc->start.arg = tc;
        if (!ecs__thrd_create(&tc->id, &tc->start)) break;
        w->sched.workers = i;
    }
}

static void ecs__stage_parallel(ecs_world *w, const ecs__stage_graph *sg) {
    const uint32_t *order = w->graph.order + sg->first;
    if (!w->sched.workers_tried) ecs__workers_start(w);
    ecs__tctx *tc = &w->sched.tctx[0];   /* both heaps are empty: every system of a stage is taken */
    ecs__store(&w->sched.hold, 0);
    ecs__store(&w->sched.remaining, (int32_t)sg->count);
    for (uint32_t k = 0; k < sg->count; k++) ecs__store(&w->sys.systems[order[k]].pending, (int32_t)sg->preds[k]);
    bool shared = false;
    for (uint32_t k = 0; k < sg->count; k++) {
        if (sg->preds[k]) continue;
        if (ecs__may_start(w, tc, &w->sys.systems[order[k]], order[k])) shared |= ecs__push_ready(w, order[k]);
        else ecs__complete(w, tc, order[k]);
    }
    if (shared) ecs__wake(w, true);
    for (;;) {
        ecs__task t;
        if (ecs__take(w, 0, &t)) {
            ecs__system *ts = &w->sys.systems[t.system];
            if (ts->cond_due && !(ts->flags & ECS_SYSTEM_EXCLUSIVE) && !ecs__take_due(w, tc, t.system)) {
                /* asked: skipped, or its chunks queued */
            } else if (w->sys.systems[t.system].flags & ECS_SYSTEM_EXCLUSIVE) {
                ecs__qlock(w);   /* hold the queue and let running tasks drain */
                ecs__store(&w->sched.hold, 1);
                ecs__qunlock(w);
                for (uint32_t i = 1; ecs__load(&w->sched.busy); i++) {
                    if (!(i & 255)) ecs__yield();
                    ECS__PAUSE();
                }
                ECS__HAPPENS_AFTER(&w->sched.busy);
                ecs__exclusive(w, t.system);
                ecs__store(&w->sched.hold, 0);
                ecs__complete(w, tc, t.system);
                ecs__wake(w, true);   /* released from the hold */
            } else {
                (void)ecs__run(w, tc, t.system, t.chunk, 0);
                ecs__task_done(w, tc, &t);
            }
            continue;
        }
        if (!ecs__load(&w->sched.remaining)) break;
        ecs__main_wait(w);
    }
    ECS__HAPPENS_AFTER(&w->sched.remaining);
}
#endif

/* Longest path to the end of each stage, weighted by the measured average
   duration (a chunked system's split over the threads): the queue priority. */
static void ecs__ranks_update(ecs_world *w) {
    ecs__graph *g = &w->graph;
    for (uint32_t st = 0; st < g->stage_count; st++) {
        ecs__stage_graph *sg = &g->stages[st];
        const uint32_t *order = g->order + sg->first;
        sg->est_ns = 0;
        for (uint32_t k = sg->count; k-- > 0;) {
            uint32_t local = sg->topo[k], si = order[local];
            const ecs__system *s = &w->sys.systems[si];
            double d = s->avg_ns > 0 ? s->avg_ns : 1000.0, best = 0;
            sg->est_ns += s->avg_ns;
            uint32_t split = s->last_chunks < (uint32_t)w->threads ? s->last_chunks : (uint32_t)w->threads;
            if (s->chunk_size > 0 && split > 1) d /= split;   /* its chunks run side by side */
            for (uint32_t e = sg->succ_at[local]; e < sg->succ_at[local + 1]; e++)
                if (w->sched.ranks[order[sg->succ[e]]] > best) best = w->sched.ranks[order[sg->succ[e]]];
            w->sched.ranks[si] = d + best;
        }
    }
}

/* Scheduler arrays sized to the registered systems (made on thread 0
   before any worker can look at them). */
static bool ecs__sched_prepare(ecs_world *w) {
    if (w->sched.sched_builds == w->graph.builds && w->sched.ranks) return true;
    size_t n = w->sys.system_count ? w->sys.system_count : 1;
    uint32_t *ready = (uint32_t *)ecs__realloc(w, w->sched.ready, n * sizeof(uint32_t));
    if (ready) w->sched.ready = ready;
    uint32_t *main_ready = (uint32_t *)ecs__realloc(w, w->sched.main_ready, n * sizeof(uint32_t));
    if (main_ready) w->sched.main_ready = main_ready;
    double *ranks = (double *)ecs__realloc(w, w->sched.ranks, n * sizeof(double));
    if (ranks) w->sched.ranks = ranks;
    if (ranks && !w->sched.shuffle_now) w->sched.prio = ranks;
    uint32_t *parked = (uint32_t *)ecs__realloc(w, w->sched.parked, n * sizeof(uint32_t));
    if (parked) w->sched.parked = parked;
    if (!ready || !main_ready || !ranks || !parked) return false;
    for (int t = 0; t < w->threads; t++) {
        uint32_t *work = (uint32_t *)ecs__realloc(w, w->sched.tctx[t].work, n * sizeof(uint32_t));
        if (!work) return false;
        w->sched.tctx[t].work = work;
    }
    w->sched.sched_builds = w->graph.builds;
    w->sched.measure = true;
    for (uint32_t i = 0; i < w->sys.system_count; i++) {
        ECS__ATOMIC_VAR(&w->sys.systems[i].done_chunks);
        ECS__ATOMIC_VAR(&w->sys.systems[i].pending);
        ECS__ATOMIC_VAR(&w->sys.systems[i].work_ns);
        ECS__ATOMIC_VAR(&w->sys.systems[i].enabled);   /* getters read it beside enabling */
    }
    for (uint32_t i = 0; i < w->sys.stage_count; i++) ECS__ATOMIC_VAR(&w->sys.stages[i].enabled);
    ecs__ranks_update(w);
    return true;
}

/* After a timed frame: per-system averages, ranks, and the frame's stats. */
static void ecs__stats_update(ecs_world *w, uint64_t wall) {
    const ecs__graph *g = &w->graph;
    double work = 0, critical = 0;
    for (uint32_t si = 0; si < w->sys.system_count; si++) {
        ecs__system *s = &w->sys.systems[si];
        uint64_t ns = ecs__load(&s->work_ns);
        ecs__store(&s->work_ns, 0);
        if (s->last_frame != w->sched.frame + 1) continue;   /* did not run this frame */
        uint32_t turns = (uint32_t)s->runs - s->timed_runs;  /* per run: fixed steps are runs */
        s->last_ns = (double)ns / (double)(turns > 1 ? turns : 1);
        s->avg_ns = s->timed ? s->avg_ns + (s->last_ns - s->avg_ns) / 8 : s->last_ns;
        s->timed++;
        s->last_chunks = s->chunks;
        work += (double)ns;
    }
    ecs__ranks_update(w);
    for (uint32_t st = 0; st < g->stage_count; st++) {   /* stages run one after another */
        ecs__stage_graph *sg = &g->stages[st];
        int turns = w->sys.stages[st].steps_last;   /* a skipped stage's figures stay */
        double best = 0, sync = (double)sg->sync_now / (turns > 1 ? turns : 1);
        sg->turns = (uint32_t)turns;
        double split_wall = (double)sg->split_wall_now / (turns > 1 ? turns : 1);
        double split_work = (double)sg->split_work_now / (turns > 1 ? turns : 1);
        if (turns && sg->sync_timed) {
            sg->split_wall_ns += (split_wall - sg->split_wall_ns) / 8;
            sg->split_work_ns += (split_work - sg->split_work_ns) / 8;
        } else if (turns) {
            sg->split_wall_ns = split_wall;
            sg->split_work_ns = split_work;
        }
        if (turns) sg->sync_ns = sg->sync_timed++ ? sg->sync_ns + (sync - sg->sync_ns) / 8 : sync;
        sg->sync_now = sg->split_wall_now = sg->split_work_now = 0;
        for (uint32_t k = 0; k < sg->count; k++) {
            double r = w->sched.ranks[g->order[sg->first + k]];
            if (r > best) best = r;
        }
        critical += best * turns;
    }
    w->stats.frame_stats.wall_us = (double)wall / 1000;
    w->stats.frame_stats.work_us = work / 1000;
    w->stats.frame_stats.sync_us = (double)w->stats.sync_ns / 1000;
    /* sync points run on thread 0, but for the work they share (ecs__job_run) */
    const double sync_work = (double)w->stats.sync_ns - (double)w->sched.job_wall + (double)ecs__load(&w->sched.job_work);
    w->stats.frame_stats.sync_work_us = sync_work / 1000;
    w->stats.frame_stats.critical_path_us = critical / 1000;
    w->stats.frame_stats.parallelism = wall ? (work + sync_work) / (double)wall : 0;
    w->stats.frame_stats.timed_frame = w->sched.frame;
    w->stats.sync_ns = 0;
    w->sched.job_wall = 0;
    ecs__store(&w->sched.job_work, 0);
}

/* The threads' state and the ready heaps (the workers stopped already). */
static void ecs__sched_fini(ecs_world *w) {
    for (int t = 0; w->sched.tctx && t < w->threads; t++) {
        ecs__free(w, w->sched.tctx[t].work);
        ecs__free(w, w->sched.tctx[t].events);
        ecs__free(w, w->sched.tctx[t].error.big);
        ecs__free(w, w->sched.tctx[t].refusal.big);
    }
    ecs__free(w, w->sched.tctx);
    ecs__free(w, w->sched.ready);
    ecs__free(w, w->sched.main_ready);
    ecs__free(w, w->sched.ranks);
    ecs__free(w, w->sched.shuffled);
    ecs__free(w, w->htrace.steps);
    for (uint32_t i = 0; i < w->htrace.sys_count; i++) ecs__free(w, w->htrace.sys[i].chunk_hash);
    ecs__free(w, w->htrace.sys);
    ecs__free(w, w->sched.parked);
    ecs__free(w, w->sched.fail_msg.big);
}

/* ---- >>loop: turns, steps and frames ------------------------------------- */
/* A frame runs the stages in order; each takes a turn, or a step group
   (fixed-step stages) takes the steps its clock gives, each step running
   every stage of the group with its own sync point. Only thread 0 touches
   the stages' clocks and switches, between turns. */
/* Applies the enables and disables of stage st's systems made since its
   last turn (thread 0, between turns: no worker reads a gate now). */
static void ecs__stage_switches(ecs_world *w, uint32_t st) {
    const ecs__stage_graph *sg = &w->graph.stages[st];
    ecs__stage *sd = &w->sys.stages[st];
    sd->dirty = false;
    sd->off = 0;
    for (uint32_t k = 0; k < sg->count; k++) {
        ecs__system *s = &w->sys.systems[w->graph.reg[sg->first + k]];
        ecs__system_gate(w, s);
        sd->off += (s->gate & ECS__GATE_OFF) != 0;
    }
}

/* A presentation stage while the world resimulates: no turn, as if disabled. */
static bool ecs__stage_resim_off(const ecs_world *w, const ecs__stage *sd) {
    return sd->presentation && w->ev.resimulating;
}

/* Whether stage st takes a turn now: enabled, and its run_if (asked on
   thread 0 with structural calls refused, as in a system). */
static bool ecs__stage_open(ecs_world *w, uint32_t st) {
    ecs__stage *sd = &w->sys.stages[st];
    if (!ecs__load(&sd->enabled) || ecs__stage_resim_off(w, sd)) return false;
    if (!sd->run_if) return true;
    int phase = w->sched.phase;
    w->sched.phase = ECS__SYSTEMS;
    bool open = sd->run_if(w, sd->run_if_ctx);
    w->sched.phase = phase;
    return open;
}

/* Stages [st, end) take no turn now (st's or its group's switch or
   run_if): readers in a disabled one drop what they would have read, the
   others keep it (up to the backlog). Returns end. */
static uint32_t ecs__stage_closed(ecs_world *w, uint32_t st, uint32_t end) {
    bool lead_on = ecs__load(&w->sys.stages[w->sys.stages[st].leader].enabled) != 0;
    for (uint32_t m = st; m < end; m++) {
        ecs__stage *sd = &w->sys.stages[m];
        if (!sd->readers) continue;
        if (sd->dirty) ecs__stage_switches(w, m);
        bool on = lead_on && ecs__load(&sd->enabled) && !ecs__stage_resim_off(w, sd);
        ecs__stage_windows(w, m, on ? ECS__WIN_KEEP : ECS__WIN_OFF);
    }
    return end;
}

static ecs_result ecs__stage_turn_traced(ecs_world *w, uint32_t st);

/* One turn of stage st: its systems, then its sync point. */
static ecs_result ecs__stage_turn(ecs_world *w, uint32_t st) {
    if (ECS__UNLIKELY(w->htrace.on) && !w->htrace.in_turn) return ecs__stage_turn_traced(w, st);
    ecs__stage *sd = &w->sys.stages[st];
    const ecs__stage_graph *sg = &w->graph.stages[st];
    if (sd->dirty) ecs__stage_switches(w, st);
    if (sd->readers) ecs__stage_windows(w, st, ECS__WIN_TURN);
    w->sched.turn = sd->turns++;
    w->sched.step = (uint32_t)sd->steps_last++;
    if (sd->off == sg->count) return ECS_OK;   /* no systems, or all disabled: no hand-off */
    if (ECS__UNLIKELY(w->sched.shuffle_now)) ecs__shuffle_turn(w, sg);
    w->chg.base = w->chg.tick + 1;   /* its systems' ticks; the sync point's is past them */
    w->chg.tick = w->chg.base + sg->count;
    w->sched.stage_run = sg;
    w->sched.phase = ECS__SYSTEMS;
#if ECS__VZEROUPPER
    /* Thread 0 comes from the caller's code (or a sync point's hooks),
       which may leave the upper halves of the AVX registers in use; while
       they are, SSE code (a non-AVX build's systems) runs slower. Measured:
       8 systems of SSE matrix code on one thread, 9.25 ms a frame with the
       state left as it was, 8.38 cleared, the same as on a worker thread. */
    if (w->vzeroupper) ecs__vzeroupper();
#endif
    w->sched.parallel = false;
#if ECS__THREADS
    if (w->threads > 1 && (sg->est_ns >= ECS_PARALLEL_MIN_NS || w->sched.measure)) {
        w->sched.parallel = true;
        ecs__stage_parallel(w, sg);
    } else
#endif
    if (ECS__UNLIKELY(w->sched.shuffle_now)) ecs__stage_shuffled(w, sg);
    else ecs__stage_inline(w, sg);
    w->sched.phase = ECS__SYNC;
    return ecs__sync(w, sg, true);
}

/* A turn with the hash trace on: its entries around it. */
ECS__COLD ecs_result ecs__stage_turn_traced(ecs_world *w, uint32_t st) {
    const ecs__stage_graph *sg = &w->graph.stages[st];
    if (!ecs__htrace_begin(w, sg)) return ECS__OOM(w, "ecs_progress");
    w->htrace.in_turn = true;
    ecs_result r = ecs__stage_turn(w, st);
    w->htrace.in_turn = false;
    ecs__htrace_end(w, st, sg);
    return r;
}

/* Stage st's part of the frame: one turn of an ordinary stage, or the steps
   of the step group st leads (steps < 0: as many as its clock gives).
   Returns the next stage to run. */
static uint32_t ecs__stage_frame(ecs_world *w, uint32_t st, int steps, ecs_result *r) {
    ecs__stage *sd = &w->sys.stages[st];
    uint32_t end = st + 1;
    while (end < w->sys.stage_count && w->sys.stages[end].leader == st) end++;
    if (!ecs__stage_open(w, st)) return ecs__stage_closed(w, st, end);
    double dt = sd->unscaled ? w->sched.real_dt : (double)w->sched.real_dt * ecs__scale(w);   /* finite */
    if (!(sd->fixed_dt > 0)) {
        w->sched.dt = dt < FLT_MAX ? (float)dt : FLT_MAX;
        *r = ecs__stage_turn(w, st);
        return end;
    }
    const double fixed = sd->fixed_dt;   /* whole steps by subtraction: k * fixed_dt gives k */
    int k = steps;
    if (steps < 0) {
        sd->acc += dt;
        for (k = 0; k < sd->max_steps && sd->acc >= fixed; k++) sd->acc -= fixed;
    }
    w->sched.dt = sd->fixed_dt;
    if (!k) (void)ecs__stage_closed(w, st, end);   /* no step this frame: readers keep (a pause at
                                                     time scale 0 must not grow their windows) */
    for (int i = 0; i < k; i++) {
        if (*r || ecs__load(&w->sched.failed) || !ecs__load(&sd->enabled)) {   /* stopped, or disabled by a step */
            if (steps < 0) sd->dropped += (double)(k - i) * fixed;   /* no burst of them later */
            break;
        }
        *r = ecs__stage_turn(w, st);
        for (uint32_t m = st + 1; m < end && !*r && !ecs__load(&w->sched.failed); m++)
            if (ecs__stage_open(w, m)) *r = ecs__stage_turn(w, m);
            else (void)ecs__stage_closed(w, m, m + 1);
    }
    if (steps < 0 && sd->acc > sd->max_lag) {
        sd->dropped += sd->acc - sd->max_lag;
        sd->acc = sd->max_lag;
    }
    return end;
}

/* Whether this frame is timed (and when it started, if it is). */
static uint64_t ecs__frame_timing(ecs_world *w) {
    uint64_t t0 = 0;
    if (w->trace.tracing || w->sched.measure) w->stats.timing = true;
    else if (w->stats.timing_interval) w->stats.timing = w->sched.frame % (uint64_t)w->stats.timing_interval == 0;
    else w->stats.timing = w->sched.frame % 8 == 0 && (t0 = ecs__now_ns()) - w->stats.timed_at >= ECS_TIMING_MS * 1000000ull;
    if (w->stats.timing) {
        w->stats.timed_at = t0 = t0 ? t0 : ecs__now_ns();
        for (uint32_t si = 0; si < w->sys.system_count; si++) w->sys.systems[si].timed_runs = (uint32_t)w->sys.systems[si].runs;
    }
    return t0;
}

/* After the frame: stats, the frame count, and what the call returns. */
static ecs_result ecs__frame_end(ecs_world *w, uint64_t t0, ecs_result r, const char *fn) {
    if (w->stats.timing) {
        uint64_t t1 = ecs__now_ns();
        if (w->trace.tracing) ecs__trace_add(w, &w->sched.tctx[0], ECS__EVENT_FRAME, ECS__NONE, t0, t1);
        ecs__stats_update(w, t1 - t0);
        w->sched.measure = false;
        w->stats.timing = false;   /* the next call's leftover sync point is not this frame's */
    }
    w->sched.frame++;
    w->stats.frame_stats.frames = w->sched.frame;
    int failed = ecs__load(&w->sched.failed);
    if (!r && failed == ECS_ERR_NOMEM) r = ECS__OOM(w, fn);
    else if (!r && failed) r = ecs__fail(w, (ecs_result)failed, "%s", ecs__msg_text(&w->sched.fail_msg));
    ecs__tctx *first = NULL;   /* access refusals: the lowest-registered system's */
    for (int t = 0; t < w->threads; t++) {
        ecs__tctx *tc = &w->sched.tctx[t];
        if (tc->refused && (!first || tc->refused < first->refused)) first = tc;
    }
    if (first) {
        if (!r) {
            ecs__msg_set(w, &w->error, "%s", ecs__msg_text(&first->refusal));
            r = ECS_ERR_ACCESS;
        }
        for (int t = 0; t < w->threads; t++) w->sched.tctx[t].refused = 0;
    }
    return r;
}

static ecs_result ecs__progress(ecs_world *w, float dt, int steps, const char *fn) {
    if (w->sched.phase != ECS__IDLE) return ecs__fail(w, ECS_ERR_BUSY, "%s: called while systems run", fn);
    if (w->cmd.defer_depth) return ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed in defer mode", fn);
    if (w->qry.iter_locks)   /* sync points change structure: no loop may hold a table */
        for (uint32_t i = 0; i < w->tab.table_count; i++)
            if (w->tab.tables[i]->lock) return ecs__busy_iter(w, fn, w->tab.tables[i]);
    if (!(dt >= 0 && dt <= FLT_MAX)) return ecs__fail(w, ECS_ERR_ARG, "%s: dt %g is negative or not finite", fn, (double)dt);
    ecs_result r = ecs__graph_build(w);
    if (r) return r;
    if (!ecs__sched_prepare(w)) return ECS__OOM(w, fn);
    if (ECS__UNLIKELY(w->htrace.on || w->sched.shuffle_seed) && !ecs__netcode_frame(w)) return ECS__OOM(w, fn);
    const ecs__graph *g = &w->graph;
    for (uint32_t st = 0; st < g->stage_count; st++) {   /* leftovers of a failed sync point */
        r = ecs__sync(w, &g->stages[st], true);
        w->ev.hold = r == ECS_OK;   /* the first delivers ecs_world_emit's events: what its
                                       observers emit waits for the first stage's turn */
        if (r) return r;
    }
    w->ev.hold = false;
#if ECS__THREADS
    w->sched.tctx[0].id = ecs__thrd_self();
#endif
    w->sched.real_dt = dt;
    for (uint32_t st = 0; st < g->stage_count; st++) w->sys.stages[st].steps_last = 0;
    uint64_t t0 = ecs__frame_timing(w);
    ecs__store(&w->sched.failed, 0);
    for (uint32_t st = 0; st < g->stage_count && !r && !ecs__load(&w->sched.failed);)
        st = ecs__stage_frame(w, st, steps, &r);
    w->sched.phase = ECS__IDLE;
    return ecs__frame_end(w, t0, r, fn);
}

ECS_API ecs_result ecs_progress(ecs_world *w, float dt) {
    return w ? ecs__progress(w, dt, -1, "ecs_progress") : ECS_ERR_ARG;
}

ECS_API ecs_result ecs_progress_steps(ecs_world *w, int steps, float dt) {
    if (!w) return ECS_ERR_ARG;
    if (steps < 0) return ecs__fail(w, ECS_ERR_ARG, "ecs_progress_steps: steps %d is negative", steps);
    return ecs__progress(w, dt, steps, "ecs_progress_steps");
}

ECS_API void ecs_world_set_time_scale(ecs_world *w, float scale) {
    if (!w) return;
    if (ecs__check_enable(w, "ecs_world_set_time_scale")) {   /* a void call: the frame reports it */
        const ecs__tctx *tc = ecs__thread_ctx(w);
        if (tc->current)
            ecs__refuse(w, "ecs_world_set_time_scale: system \"%s\" is neither EXCLUSIVE nor MAIN_THREAD; "
                        "the scale is set between frames or from those", w->sys.systems[tc->current - 1].name);
        return;
    }
    if (!(scale >= 0 && scale <= FLT_MAX)) {
        ecs__fail(w, ECS_ERR_ARG, "ecs_world_set_time_scale: %g is negative or not finite", (double)scale);
        return;
    }
    ecs__scale_set(w, scale);   /* read by thread 0 when a stage's turn starts */
}

ECS_API float ecs_world_time_scale(const ecs_world *w) { return w ? ecs__scale(w) : 0; }

/* ---- >>stats: what ran, how long ----------------------------------------- */
ECS_API float ecs_stage_alpha(const ecs_world *w, ecs_stage st) {
    if (!w || st >= w->sys.stage_count) return 0;
    const ecs__stage *lead = &w->sys.stages[w->sys.stages[st].leader];   /* a group shares one clock */
    return lead->fixed_dt > 0 ? (float)(lead->acc / lead->fixed_dt) : 0;
}

ECS_API ecs_result ecs_stage_stats_get(const ecs_world *w, ecs_stage st, ecs_stage_stats *out) {
    if (!w) return ECS_ERR_ARG;
    if (st >= w->sys.stage_count || !out)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_stage_stats_get: %s", out ? "no such stage" : "out is NULL");
    const ecs__stage *sd = &w->sys.stages[st];
    out->steps = sd->turns;
    out->steps_last = sd->steps_last;
    out->dropped_time = w->sys.stages[sd->leader].dropped;
    return ECS_OK;
}

ECS_API ecs_result ecs_system_stats_get(const ecs_world *w, ecs_system s, ecs_system_stats *out) {
    if (!w) return ECS_ERR_ARG;
    if (!out || !s || s > w->sys.system_count)
        return ecs__fail(w, ECS_ERR_ARG, "ecs_system_stats_get: unknown system %u or NULL out", (unsigned)s);
    const ecs__system *sys = &w->sys.systems[s - 1];
    out->runs = sys->runs;
    out->timed = sys->timed;
    out->last_us = sys->last_ns / 1000;
    out->avg_us = sys->avg_ns / 1000;
    out->chunks = sys->last_chunks;
    out->events_dropped = 0;
    for (uint32_t k = 0; k < sys->win_count; k++) out->events_dropped += sys->win[k].dropped;
    return ECS_OK;
}

ECS_API ecs_result ecs_frame_stats_get(const ecs_world *w, ecs_frame_stats *out) {
    if (!w) return ECS_ERR_ARG;
    if (!out) return ecs__fail(w, ECS_ERR_ARG, "ecs_frame_stats_get: out is NULL");
    *out = w->stats.frame_stats;
    out->threads = w->threads;
    return ECS_OK;
}

ECS_API int ecs_thread_count(const ecs_world *w) { return w ? w->threads : 0; }

ECS_API void ecs_timing_interval(ecs_world *w, int frames) {
    if (w) w->stats.timing_interval = frames > 0 ? frames : 0;
}

/* ---- >>simulate: the real policy, in a discrete-event simulation ---------- */
typedef struct ecs__simrun { double end; uint32_t local; bool piece, busy; } ecs__simrun;

/* Makespan of one stage on `threads` threads with durations d (per local
   system): thread 0 alone runs MAIN_THREAD and EXCLUSIVE systems (an
   exclusive one once every other thread is idle), a chunked system is
   `threads` equal pieces claimed while it tops the queue, and a system
   whose conflicting independent_of partner runs is parked until it ends.
   The queue is ordered by rank, or by arrival when fifo. */
static double ecs__sim_stage(const ecs_world *w, const ecs__stage_graph *sg, int threads,
                             const double *d, const double *rank, bool fifo, uint32_t *scratch,
                             double *key, ecs__simrun *run) {
    uint32_t n = sg->count, *pending = scratch, *heap = scratch + n, *mainq = scratch + 2 * n,
             *pieces = scratch + 3 * n, *out = scratch + 4 * n, *active = scratch + 5 * n,
             *parked = scratch + 6 * n, hn = 0, mn = 0, pn = 0, done = 0;
    const uint32_t *order = w->graph.order + sg->first;
    double now = 0, seq = 0;
    bool hold = false;
    for (int t = 0; t < threads; t++) run[t].busy = false;
    for (uint32_t k = 0; k < n; k++) {
        pending[k] = sg->preds[k];
        pieces[k] = w->sys.systems[order[k]].chunk_size > 0 ? (uint32_t)threads : 1;
        out[k] = pieces[k];
        active[k] = 0;
    }
#define ECS__SIM_PUSH(k) do { key[k] = fifo ? -(seq++) : rank[k]; \
        if (ecs__on_main(&w->sys.systems[order[k]])) ecs__heap_push(mainq, &mn, (k), key); \
        else ecs__heap_push(heap, &hn, (k), key); } while (0)
#define ECS__SIM_BLOCKED(k, b) do { b = false; if (sg->excl_at) \
        for (uint32_t x = sg->excl_at[k]; x < sg->excl_at[(k) + 1]; x++) b |= active[sg->excl[x]] != 0; } while (0)
    for (uint32_t k = 0; k < n; k++) if (!pending[k]) ECS__SIM_PUSH(k);
    while (done < n) {
        for (int t = 0; t < threads; t++) {   /* hand out work, thread 0 first */
            if (run[t].busy) continue;
            bool blocked;
            while (t == 0 && mn) {   /* park what a running partner blocks */
                ECS__SIM_BLOCKED(mainq[0], blocked);
                if (!blocked) break;
                parked[pn++] = ecs__heap_pop(mainq, &mn, key);
            }
            while (hn && pieces[heap[0]] == out[heap[0]] && !active[heap[0]]) {
                ECS__SIM_BLOCKED(heap[0], blocked);
                if (!blocked) break;
                parked[pn++] = ecs__heap_pop(heap, &hn, key);
            }
            if (t == 0 && mn) {
                uint32_t k = ecs__heap_pop(mainq, &mn, key);
                double start = now;
                active[k] = 1;
                if (w->sys.systems[order[k]].flags & ECS_SYSTEM_EXCLUSIVE) {
                    hold = true;
                    for (int o = 1; o < threads; o++) if (run[o].busy && run[o].end > start) start = run[o].end;
                }
                run[0].busy = true; run[0].local = k; run[0].piece = false; run[0].end = start + d[k];
            } else if (hn && !(t && hold)) {
                uint32_t k = heap[0];
                bool piece = w->sys.systems[order[k]].chunk_size > 0;
                active[k] = 1;
                if (--pieces[k] == 0) ecs__heap_pop(heap, &hn, key);
                run[t].busy = true; run[t].local = k; run[t].piece = piece;
                run[t].end = now + (piece ? d[k] / threads : d[k]);
            }
        }
        double next = -1;
        for (int t = 0; t < threads; t++) if (run[t].busy && (next < 0 || run[t].end < next)) next = run[t].end;
        if (next < 0) break;   /* nothing can run: only an invalid graph gets here */
        now = next;
        for (int t = 0; t < threads; t++) {
            if (!run[t].busy || run[t].end > now) continue;
            uint32_t k = run[t].local;
            run[t].busy = false;
            if (--out[k]) continue;
            done++;
            active[k] = 0;
            if (w->sys.systems[order[k]].flags & ECS_SYSTEM_EXCLUSIVE) hold = false;
            for (uint32_t e = sg->succ_at[k]; e < sg->succ_at[k + 1]; e++)
                if (!--pending[sg->succ[e]]) ECS__SIM_PUSH(sg->succ[e]);
            for (uint32_t i = 0; i < pn;) {   /* partners it blocked */
                bool blocked;
                ECS__SIM_BLOCKED(parked[i], blocked);
                if (blocked) { i++; continue; }
                uint32_t p = parked[i];
                parked[i] = parked[--pn];
                ECS__SIM_PUSH(p);
            }
        }
    }
#undef ECS__SIM_BLOCKED
#undef ECS__SIM_PUSH
    return now;
}

ECS_API ecs_result ecs_schedule_simulate(ecs_world *w, int threads, const double *durations,
                                         ecs_sim_result *out) {
    static const char fn[] = "ecs_schedule_simulate";
    if (!w) return ECS_ERR_ARG;
    if (out) memset(out, 0, sizeof *out);
    if (w->sched.phase != ECS__IDLE) return ecs__fail(w, ECS_ERR_BUSY, "%s: not allowed while systems run", fn);
    if (!out || threads < 1 || threads > 4096)
        return ecs__fail(w, ECS_ERR_ARG, "%s: out is NULL or threads (%d) is not in 1..4096", fn, threads);
    ecs_result r = ecs__graph_build(w);
    if (r) return r;
    const ecs__graph *g = &w->graph;
    size_t n = w->sys.system_count ? w->sys.system_count : 1;
    uint32_t *scratch = (uint32_t *)ecs__alloc(w, n * 7 * sizeof(uint32_t));
    double *d = (double *)ecs__alloc(w, n * 3 * sizeof(double));
    ecs__simrun *run = (ecs__simrun *)ecs__alloc(w, (size_t)threads * sizeof *run);
    if (!scratch || !d || !run) {
        ecs__free(w, scratch); ecs__free(w, d); ecs__free(w, run);
        return ECS__OOM(w, fn);
    }
    double *rank = d + n, *key = d + 2 * n;
    for (uint32_t st = 0; st < g->stage_count; st++) {
        const ecs__stage_graph *sg = &g->stages[st];
        const uint32_t *order = g->order + sg->first;
        if (!sg->count) continue;
        double work = 0, cp = 0;   /* sync points: their serial part, and the shared part split */
        double sync = durations ? 0 : (sg->sync_ns - sg->split_wall_ns + sg->split_work_ns / threads) / 1000;
        double turns = durations || !sg->sync_timed ? 1 : sg->turns;   /* measured: as that frame ran */
        /* measured: as ecs_progress runs it, inline when its work is too small to share */
        int th = !durations && sg->est_ns < ECS_PARALLEL_MIN_NS && sg->sync_timed ? 1 : threads;
        for (uint32_t k = 0; k < sg->count; k++) {
            const ecs__system *s = &w->sys.systems[order[k]];
            d[k] = durations ? durations[order[k]] : (s->timed ? s->avg_ns / 1000 : 1.0);
            if (d[k] < 0) d[k] = 0;
            work += d[k];
        }
        for (uint32_t i = sg->count; i-- > 0;) {   /* ranks: the longest path to the stage's end */
            uint32_t k = sg->topo[i];
            double best = 0;
            for (uint32_t e = sg->succ_at[k]; e < sg->succ_at[k + 1]; e++)
                if (rank[sg->succ[e]] > best) best = rank[sg->succ[e]];
            rank[k] = best + (w->sys.systems[order[k]].chunk_size > 0 ? d[k] / th : d[k]);
            if (rank[k] > cp) cp = rank[k];
        }
        out->makespan += (ecs__sim_stage(w, sg, th, d, rank, false, scratch, key, run) + sync) * turns;
        out->fifo_makespan += (ecs__sim_stage(w, sg, th, d, rank, true, scratch, key, run) + sync) * turns;
        out->critical_path += (cp + sync) * turns;
        out->total_work += (work + sync) * turns;
        out->lower_bound += ((cp > work / th ? cp : work / th) + sync) * turns;
        out->sync += sync * turns;
    }
    ecs__free(w, scratch); ecs__free(w, d); ecs__free(w, run);
    return ECS_OK;
}

/* ---- >>trace: Chrome trace-event JSON, for Perfetto ----------------------- */
ECS_API void ecs_trace_enable(ecs_world *w, bool on) {
    if (!w) return;
    if (w->sched.phase != ECS__IDLE) { ecs__fail(w, ECS_ERR_BUSY, "ecs_trace_enable: not allowed while systems run"); return; }
    if (on && !w->trace.tracing) {   /* a new recording */
        for (int t = 0; t < w->threads; t++) w->sched.tctx[t].event_count = 0;
        ecs__store(&w->trace.trace_lost, 0);
        w->trace.trace_origin = ecs__now_ns();
    }
    w->trace.tracing = on;
}

#ifndef ECS_NO_STDIO
static void ecs__json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

ECS_API ecs_result ecs_write_trace(ecs_world *w, FILE *out) {
    if (!w) return ECS_ERR_ARG;
    if (!out) return ecs__fail(w, ECS_ERR_ARG, "ecs_write_trace: out is NULL");
    if (w->sched.phase != ECS__IDLE) return ecs__fail(w, ECS_ERR_BUSY, "ecs_write_trace: not allowed while systems run");
    fprintf(out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"ecs.h\",\"threads\":%d,"
                 "\"lost_events\":%u},\n\"traceEvents\":[\n", w->threads, (unsigned)ecs__load(&w->trace.trace_lost));
    fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"ecs.h world\"}}");
    for (int t = 0; t < w->threads; t++)
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":"
                     "\"%s %d\"}}", t, t ? "worker" : "main (ecs_progress)", t);
    for (int t = 0; t < w->threads; t++) {
        const ecs__tctx *tc = &w->sched.tctx[t];
        for (uint32_t i = 0; i < tc->event_count; i++) {
            const ecs__event *e = &tc->events[i];
            double ts = e->start >= w->trace.trace_origin ? (double)(e->start - w->trace.trace_origin) / 1000 : 0;
            double dur = (double)(e->end - e->start) / 1000;
            fputs(",\n{\"name\":", out);
            if (e->system == ECS__EVENT_FRAME) fprintf(out, "\"frame %llu\",\"cat\":\"frame\"", (unsigned long long)e->frame);
            else if (e->system == ECS__EVENT_SYNC) fputs("\"sync point\",\"cat\":\"commands\"", out);
            else if (e->system == ECS__EVENT_SPLIT) {   /* chunk: the pieces it took */
                fprintf(out, "\"sync point work\",\"cat\":\"commands\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                        "\"dur\":%.3f,\"args\":{\"frame\":%llu,\"step\":%u,\"pieces\":%u}}", t, ts, dur,
                        (unsigned long long)e->frame, (unsigned)e->step, (unsigned)e->chunk);
                continue;
            }
            else if (e->system == ECS__EVENT_OBSERVER) {   /* chunk: its index; args: the event type */
                ecs_id ev = e->chunk < w->ev.observer_count ? w->ev.observers[e->chunk].event : 0;
                fprintf(out, "\"observer %u\",\"cat\":\"observer\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                        "\"dur\":%.3f,\"args\":{\"frame\":%llu,\"step\":%u,\"event\":", (unsigned)e->chunk + 1, t, ts,
                        dur, (unsigned long long)e->frame, (unsigned)e->step);
                ecs__json_string(out, ev ? w->reg.ids[ev].name : "(unobserved)");
                fputs("}}", out);
                continue;
            } else {
                ecs__json_string(out, w->sys.systems[e->system].name);
                fputs(e->chunk == ECS__NONE ? ",\"cat\":\"system\"" : ",\"cat\":\"chunk\"", out);
            }
            fprintf(out, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"frame\":%llu",
                    t, ts, dur, (unsigned long long)e->frame);
            if (e->chunk != ECS__NONE) fprintf(out, ",\"chunk\":%u", (unsigned)e->chunk);
            if (e->system != ECS__EVENT_FRAME) fprintf(out, ",\"step\":%u", (unsigned)e->step);
            fputs("}}", out);
        }
    }
    fputs("\n]}\n", out);
    return ferror(out) ? ecs__fail(w, ECS_ERR_ARG, "ecs_write_trace: writing failed") : ECS_OK;
}
#endif   /* ECS_NO_STDIO */

/* ---- >>lifetime: world new and free ---------------------------------------- */
/* Stops and joins the workers (they may be asleep or spinning). */
static void ecs__pool_stop(ecs_world *w) {
#if ECS__THREADS
    if (w->sched.workers) {
        ecs__mtx_lock(&w->sched.park_lock);
        w->sched.quit = true;
        ecs__cnd_broadcast(&w->sched.park);
        ecs__mtx_unlock(&w->sched.park_lock);
        for (int i = 1; i <= w->sched.workers; i++) ecs__thrd_join(w->sched.tctx[i].id);
        w->sched.workers = 0;
    }
    if (w->sched.sync_made) {
        ecs__mtx_destroy(&w->sched.park_lock);
        ecs__cnd_destroy(&w->sched.park);
        ecs__cnd_destroy(&w->sched.main_park);
#  ifdef ECS_VALGRIND
        ecs__mtx_destroy(&w->sched.qmtx);
#  endif
        w->sched.sync_made = false;
    }
#else
    (void)w;
#endif
}

static bool ecs__pool_start(ecs_world *w) {
    w->sched.tctx = (ecs__tctx *)ecs__alloc(w, (size_t)w->threads * sizeof *w->sched.tctx);
    if (!w->sched.tctx) return false;
    memset(w->sched.tctx, 0, (size_t)w->threads * sizeof *w->sched.tctx);
    for (int i = 0; i < w->threads; i++) { w->sched.tctx[i].w = w; w->sched.tctx[i].index = i; }
#if ECS__THREADS
    if (w->threads == 1) return true;
    ECS__ATOMIC_VAR(&w->sched.qlock); ECS__ATOMIC_VAR(&w->sched.sleepers); ECS__ATOMIC_VAR(&w->sched.queued);
    ECS__ATOMIC_VAR(&w->sched.main_sleeping); ECS__ATOMIC_VAR(&w->sched.main_queued);
    ECS__ATOMIC_VAR(&w->sched.hold); ECS__ATOMIC_VAR(&w->sched.busy); ECS__ATOMIC_VAR(&w->sched.remaining);
    ECS__ATOMIC_VAR(&w->sched.due); ECS__ATOMIC_VAR(&w->sched.due_cmds); ECS__ATOMIC_VAR(&w->sched.job_left);
    ECS__ATOMIC_VAR(&w->sched.job_done); ECS__ATOMIC_VAR(&w->sched.job_on); ECS__ATOMIC_VAR(&w->sched.job_users);
    ECS__ATOMIC_VAR(&w->sched.job_work); ECS__ATOMIC_VAR(&w->sched.jitter);
    ECS__ATOMIC_VAR(&w->sched.failed); ECS__ATOMIC_VAR(&w->trace.trace_lost); ECS__ATOMIC_VAR(&w->cmd.next_serial);
    if (!ecs__mtx_init(&w->sched.park_lock)) return false;
    if (!ecs__cnd_init(&w->sched.park)) { ecs__mtx_destroy(&w->sched.park_lock); return false; }
    if (!ecs__cnd_init(&w->sched.main_park)) {
        ecs__mtx_destroy(&w->sched.park_lock); ecs__cnd_destroy(&w->sched.park);
        return false;
    }
#  ifdef ECS_VALGRIND
    if (!ecs__mtx_init(&w->sched.qmtx)) {
        ecs__mtx_destroy(&w->sched.park_lock); ecs__cnd_destroy(&w->sched.park); ecs__cnd_destroy(&w->sched.main_park);
        return false;
    }
#  endif
    w->sched.sync_made = true;
#endif
    return true;
}

/* Every section frees its own state, in reverse data-flow order (but the
   hook buffers go before the ids their held values' dtors need), after the
   live values died with every section still there (their on_remove hooks
   may read any of the world). */
ECS_API void ecs_world_free(ecs_world *w) {
    if (!w) return;
    ecs__pool_stop(w);
    w->sched.phase = ECS__IDLE;
    ecs__table_values_fini(w);
    ecs__sched_fini(w);
    ecs__graph_fini(w);
    ecs__systems_fini(w);
    ecs__events_fini(w);
    ecs__commands_fini(w);
    ecs__query_fini(w);
    ecs__table_fini(w);
    ecs__hooks_fini(w);
    ecs__hierarchy_fini(w);
    ecs__entity_fini(w);
    ecs__ids_fini(w);
    ecs__free(w, w->error.big);
    w->realloc_fn(w, 0, w->alloc_user);
}

#if ECS_SHUFFLE_SEED
static ECS__ATOMIC(uint32_t) ecs__worlds_made;
#endif

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
    w->threads = d.threads ? d.threads : ecs__hardware_threads();
    if (w->threads > ECS__MAX_THREADS) w->threads = ECS__MAX_THREADS;
#if !ECS__THREADS
    w->threads = 1;
#endif
    w->order = d.order;
    w->chg.tick = 1;   /* (0: a query's "never looped") */
    w->check_reads = d.check_reads;
    w->random_seed = d.random_seed;
    w->sched.shuffle_seed = d.shuffle_seed;
#if ECS_SHUFFLE_SEED   /* each world its own order: worlds a test compares are shuffled differently */
    if (!d.shuffle_seed) w->sched.shuffle_seed = (uint64_t)(ECS_SHUFFLE_SEED) + ecs__add_fetch(&ecs__worlds_made, 1);
#endif
#if ECS__VZEROUPPER
    __builtin_cpu_init();   /* a world made by a static constructor may come first */
    w->vzeroupper = __builtin_cpu_supports("avx");
#endif
    w->sched.excl_table = ECS__NONE;
    ecs__scale_set(w, 1);
    ECS__ATOMIC_VAR(&w->sched.time_scale);
    w->ent.free_head = ECS__NONE;
    if (!ecs__table_new(w, NULL, 0) ||   /* tables[0]: entities with no components */
        ecs_component(w, "ecs.Prefab", 0, 0) != ECS__PREFAB ||
        (ecs_stage_add(w, "default"), w->sys.stage_count == 0) || !ecs__pool_start(w)) {
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
