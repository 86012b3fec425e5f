/* fuzz_api.c - a libFuzzer harness for ecs.h: the input is a stream of API
   calls on one world, checked against a reference model after every call.

   The model mirrors what the API promises, down to handle values: entity
   slots (generation, a LIFO free list, reserved defer-mode slots), archetype
   tables by id set in creation order with swap-remove rows (so query batches,
   chunks and the handles of entities made by commands are predicted
   exactly), component and resource bytes, command lists with pending
   handles, the defer block, open query loops and the tables they lock,
   system registration, validation, and whole frames: stages, a linear
   extension of ecs_system_precedes, prepare/run/exclusive pre-syncs/stage
   syncs, commands applied in stage, registration, chunk and recording order.

   System callbacks are deterministic functions of their batch (handles,
   field bytes, dt); they write fields, record commands (also with pending
   handles), write resources, make immediate structural calls (EXCLUSIVE
   systems, also inside defer blocks, also left open), and misbehave in ways
   the debug access checks must refuse. Every call a callback makes is
   logged with its result; after the frame the model replays the frame and
   compares batch by batch, call by call, then compares the whole world.

   Events. Event types (ecs_event, ecs_event_init with entity fields) share
   the id and name space. Systems declare emits, event types in reads and
   an interval; per batch they emit 0..3 events and/or one per row, each
   through ecs_emit, ecs_emit_new or the batch's emitter (chosen from the
   batch: emitter runs interleave with the other paths), payloads made from
   the batch (entity fields: a row, a pending handle of the batch's buffer,
   one that resolves to nothing); readers log per type the count, a hash of
   the payloads and the array of each batch. The model keeps each type's
   log, every reader's window (a run takes what was delivered since its last
   run; disabled or in a disabled stage: dropped; skipped by its interval:
   kept, ECS_EVENT_BACKLOG (24 here) per skipped turn, the rest counted in
   events_dropped), and the buffers' events until a sync point stages them
   (ecs_world_emit's queue first, then the systems that ran, in
   registration, chunk and emission order; pending handles in entity fields
   resolved as the buffer's commands made them): the one before an
   EXCLUSIVE system and the stage's end (if the stage has an enabled
   system), which delivers what its turn staged in that order, calling the
   observers in registration order once per type (their log checked: count,
   payloads; their echoes, ecs_world_emit from inside, queue for the next
   sync point). The first leftover sync point of ecs_progress delivers the
   queue. Misuse: emit of a type not in emits and
   ecs_events of one not in reads or with the wrong size (ECS_ERR_ACCESS, the
   frame reports it), non-event ids, NULL payloads, wrong sizes, ecs_world_emit
   inside a system (ECS_ERR_BUSY), emits with an iterator that is no
   system's; event ids in terms, writes, queries, entities, observer lists.
   Validation's ECS_NOTE_EVENT_NEXT_FRAME notes are checked (all of them,
   for a valid graph). Between ops, white-box: each log's delivered events
   and payloads, the queue, every window and the stage turns; a snapshot
   round trip around a queued event, and ecs_world_hash moving with the
   queue. The first event type comes from op_register's escape byte (values
   no input committed before events used), and only then do the event ops
   exist and system descs read their event bytes: inputs without events
   decode as before.

   Prefabs, sorted and grouped loops (v2). op_register's first byte
   FZ_V2_ESC..+3 registers a component with ecs_component_init (0..2 entity
   fields, in bounds or not) and turns the v2 ops on (inputs without it
   decode as before): ecs_prefab_new (immediate: its table made first, BUSY
   when a loop holds it; in defer mode reserved), made a child of a prefab;
   ecs_instantiate and ecs_instantiate_many (0..5 instances; of a non-prefab,
   a dead handle; in defer mode reserved, dropped when the prefab died first,
   the slot given back): the model walks the subtree in pre-order, makes the
   nodes' tables (their ids but the tag) first, then BUSY if a loop holds
   one, else instance after instance slots, rows, links, values and entity
   fields that name a node remapped to its copy; ecs_cmd_instantiate into a
   user buffer (then a value on the pending root whose entity fields name
   pending handles, live when it applies; a parent), from systems (P_INST)
   and immediate instantiates from systems (P_IMMI: BUSY but in EXCLUSIVE
   ones). The tag is model id FZ_PF (bit 31 of a table mask): no query,
   system, ecs_count or ecs_destroy_with sees a prefab unless a term names
   the tag (user queries may, and may sort by it); adding, removing, setting
   it or creating with it is ECS_ERR_ARG; a prefab's child must be one;
   prefabs' tables are checked white-box, ecs_is_prefab / ecs_has /
   ecs_entity_ids per entity. Queries (op_query_new2) and systems may have
   order_by + compare (pure functions of the handle and value bytes, ctx
   packing their parameters: ties, descending, handles, generations) and
   group_by (of the table's ids: constant, by a component, 64-bit values).
   A sorted loop is every matched row in (group, compare, handle) order,
   split into runs of consecutive rows of one table, fixed at its start; it
   locks every table it matches (empty ones too) until it ends, and a second
   loop of the query while one is open yields nothing (ECS_ERR_BUSY), as
   does one that runs out of memory sorting. An unsorted loop goes on after
   its last batch's table in (group, table) order, tables made meanwhile
   included; ecs_iter_set_group restricts a loop (ECS_ERR_ARG after the
   first ecs_query_next, for a refused loop or a query without group_by);
   ecs_iter_group is checked after every batch and between operations (a
   table made meanwhile must not change it), and in system batches. Nested
   loops of sorted queries in systems: BUSY but in MAIN_THREAD and EXCLUSIVE
   ones. The library's order follows change stamps: a write it cannot see
   yet (through a READ field, or by a batch still out) is kept off the order
   key of a sorted query or system (op_iter_write, B_BAD, B_NESTED).

   Allocation failures are injected by the input (the Nth allocation from
   now, or every allocation from then on). A failed call must return
   ECS_ERR_NOMEM (or 0/NULL) and leave the world as the model has it. Where a
   failure stops an apply part way (ecs_commands_apply, ecs_defer_end, the
   sync points of a frame, leftovers applied by the next ecs_progress), the
   model applies as many commands as the library's buffers say were applied,
   then compares the whole world. Allocation failures are not injected
   inside frames of a 2-thread world (the order of allocations across
   threads is not deterministic) or of a shuffled one (inputs of odd
   length: ecs_world_desc.shuffle_seed; which systems a failure stops
   depends on the order), and only unshuffled 1-thread worlds with
   check_reads make a system write through a READ field (which a later
   system sees: an order dependence). Inputs whose length has bit 1 set run with the
   hash trace on; snapshot round trips go through memory every other time
   (ecs_snapshot_save / ecs_snapshot_load, checked against
   ecs_snapshot_size).

   An emit that fails for lack of memory (ECS_ERR_NOMEM or NULL) adds no
   event and stops the frame at its next sync point, which still delivers:
   the model checks the library delivered all of that point's events or
   none (never part), and follows it when it delivered all.

   White-box peeks (the implementation is compiled in here): the number and
   id sets of the tables (after a failed call that may have made one, and to
   check that the model made the same tables), the applied count of a
   command buffer whose apply stopped on ECS_ERR_NOMEM, the event logs,
   queue and windows (checked between ops; after a frame that stopped on a
   failed allocation the readers' places and stage turns are taken from the
   library, which systems it reached then not being modelled).

   Not modelled (the input ends early, "bail"): more entity slots, tables or
   batches than the model's fixed arrays hold; two EXCLUSIVE systems that
   are independent_of partners; an allocation failure inside a frame at a
   point the model cannot see afterwards (an apply inside an exclusive
   system's ecs_defer_end or open defer block; an immediate call that may
   have made a table); a sync point of such a frame that staged events
   without delivering them, or kept a stage's events for the next frame (the
   model does not carry events over frames); more unread events than
   FZ_EV_KEEP; an instantiate in a frame that ran out of memory where it may
   have made a table. Systems that are independent_of partners only look (no
   writes, no commands, no emits; they read events): conflicting partners
   run in either order. Lifecycle and event hooks are not used (ecs_component_init
   only for entity fields), so neither is their prefab rule;
   nor are run_if, fixed-step stages and step groups, save files, serialize
   hooks of event types, observers' reads/writes access (they only log and
   echo), restoring a snapshot other than the one just taken, ECS_CHANGED
   terms and ecs_query_changed (so no change marks of restricted loops),
   system terms that name the prefab tag, ecs_create_many_values and
   ecs_destroy_many.

   Any mismatch prints what differed and abort()s.
   Build: see tests/fuzz.mk. -DFUZZ_REPLAY_MAIN adds a main() that runs files
   or directories through LLVMFuzzerTestOneInput (ASan/UBSan without
   libFuzzer). In the environment: FUZZ_TRACE=1 prints each operation and
   every call a system made, FUZZ_STATS=1 prints counts of what the inputs
   reached at exit. */
#if defined(FUZZ_REPLAY_MAIN) || defined(FUZZ_LIBFUZZER) || defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
/* (Without one of those macros this file compiles to nothing, so a build of
   every file in tests/, such as the unit test binary, is not affected.) */
#define ECS_STATIC                /* a private copy: this file may be linked next to another */
#define ECS_IMPLEMENTATION
#define ECS_PARALLEL_MIN_NS 0     /* a 2-thread world always runs stages in parallel */
#define ECS_SPIN_NS 2000          /* idle workers sleep soon: fuzzing is single-core work */
#define ECS_EVENT_BACKLOG 24      /* small: skipped readers drop events (and count them) */
#define ECS_SPLIT_MIN 16          /* a 2-thread world's sync points share their spawn runs from 1 command
                                     (a sixteenth of this while the worker is awake) */
#include "../ecs.h"

#if !ECS_CHECK_ACCESS
#  error "fuzz_api.c models the debug access checks: build it without NDEBUG"
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- limits ------------------------------------------------------------- */
#define FZ_MAXI 16            /* registered ids (components, tags, resources) */
#define FZ_MAXSLOT 1024       /* entity slots */
#define FZ_MAXTAB 128         /* tables */
#define FZ_VSTRIDE 1600       /* value bytes per slot: FZ_MAXI * 100 */
#define FZ_MAXQ 6             /* user queries */
#define FZ_MAXIT 3            /* open query loops */
#define FZ_MAXBUF 3           /* user command buffers */
#define FZ_MAXSYS 8
#define FZ_MAXPEND 64         /* pending creates per command list */
#define FZ_MAXOPS 3000
#define FZ_SLOT_SOFT 700      /* user creates stop here */
#define FZ_LOG_ENTS 8192      /* batches logged per frame */
#define FZ_LOG_POOL (1 << 17) /* handles and results logged per frame */
#define FZ_MAXRES 4096        /* results of one batch */
#define FZ_MAXEV 4            /* event types (ids too: they count in FZ_MAXI) */
#define FZ_MAXOBS 6           /* observers registered */
#define FZ_OLOG 4096          /* observer calls logged per frame */
#define FZ_EV_KEEP (1 << 16)  /* delivered events of a type the model keeps */
#define FZ_EV_ESC 226         /* op_register's first byte 226..233: an event type instead (values
                                 no input committed before events used: those replay as before) */
#define FZ_V2_ESC 240         /* op_register's first byte 240..243: ecs_component_init with entity
                                 fields, and the v2 ops from then on (prefabs, sorted and grouped
                                 loops; values no committed input used there) */
#define FZ_PF 31              /* the prefab tag (builtin id 1) as a model id: its bit in table masks */
#define FZ_PFB (1u << FZ_PF)
#define FZ_IDS 32             /* G.ids: FZ_MAXI registrations, and [FZ_PF] */

static const uint32_t fz_sizes[7] = {0, 1, 3, 7, 12, 24, 100};
static const uint32_t fz_ev_sizes[8] = {0, 4, 8, 12, 16, 24, 3, 100};   /* (payload copies by word) */
static const uint32_t fz_aligns[7] = {0, 1, 2, 4, 8, 16, 64};
static const char *const fz_names[16] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7",
                                         "c8", "c9", "c10", "c11", "r0", "r1", "r2", "r3"};
static const char *const fz_snames[10] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "zz", ""};

/* ---- the allocator ------------------------------------------------------- */
typedef struct fz_alloc {
    atomic_long requests;      /* allocation requests while not paused */
    atomic_long injected;      /* failures injected */
    atomic_long live;          /* blocks outstanding */
    atomic_int paused;         /* > 0: neither counted nor failed (the harness's own calls) */
    long fail_at;              /* request number that fails (mode 1) or from which all fail (2) */
    int mode;                  /* 0 off, 1 once, 2 from then on */
} fz_alloc;

/* ---- the model ----------------------------------------------------------- */
enum { FZ_FREE = 0, FZ_LIVE = 1, FZ_RESERVED = 2 };
typedef struct fz_rec { uint32_t gen; uint8_t state; int32_t table; uint32_t row; } fz_rec;
typedef struct fz_tab { uint32_t mask; uint32_t n; uint16_t rows[FZ_MAXSLOT]; } fz_tab;
typedef struct fz_model {
    uint32_t nrec, nfree, alive;
    int ntab;
    size_t dropped;
    fz_rec rec[FZ_MAXSLOT];
    uint32_t freel[FZ_MAXSLOT];   /* the free list, top = the next slot taken */
    int32_t lock[FZ_MAXTAB];      /* open batches per table (and an exclusive system's batch) */
    int32_t par[FZ_MAXSLOT], first[FZ_MAXSLOT], last[FZ_MAXSLOT], next[FZ_MAXSLOT], prev[FZ_MAXSLOT];
                                  /* parents and children (slots, -1 none), children in attach order */
    fz_tab tab[FZ_MAXTAB];
    unsigned char val[FZ_MAXSLOT][FZ_VSTRIDE];
} fz_model;

typedef struct fz_idinfo {
    ecs_id lib;
    uint32_t size, align, voff;
    int res, name;
    int ev, nfield;           /* an event type; its entity fields (offsets) */
    uint32_t field[2];
} fz_idinfo;

enum { C_CREATE, C_DESTROY, C_ADD, C_REMOVE, C_SET, C_PARENT,
       C_PCREATE,             /* a prefab reserved in defer mode (h) */
       C_INST };              /* an instance of prefab `parent`: pending (pend), or reserved (h) */
typedef struct fz_cmd {
    uint8_t op;
    int8_t k;                 /* model id */
    int16_t pend;             /* pending index, or -1 */
    ecs_entity h;             /* target (or a reserved handle for a defer-mode create) */
    ecs_entity parent;        /* C_PARENT: the parent (a handle, a pending handle, or 0); C_INST: the prefab */
    unsigned char v[100];
} fz_cmd;
/* An event emitted and not yet delivered: its type (model id) and payload. */
typedef struct fz_ev { int k; unsigned char v[100]; } fz_ev;
typedef struct fz_list {
    fz_cmd *c;
    int n, cap, applied;
    int npend;
    ecs_entity created[FZ_MAXPEND];
    uint64_t serial;          /* of its pending handles since the last clear; 0 unknown */
    uint64_t old_serial;      /* the one before (its handles are stale now) */
    /* events emitted into the buffer (a system's chunk; ecs_world_emit's queue), in emission order */
    fz_ev *ev;
    int nev, evcap;
    int captured;             /* its commands were applied since they were emitted: */
    uint64_t cap_serial;      /*   the serial and the pending creates then, which */
    int cap_npend;            /*   resolve pending handles in entity fields */
} fz_list;

typedef struct fz_query {
    ecs_query *q;
    int nt, k[ECS_MAX_TERMS], oper[ECS_MAX_TERMS], acc[ECS_MAX_TERMS];
    int sees_pf;              /* a term names the prefab tag (model id FZ_PF) */
    int sorted, ok;           /* order_by: the order term's model id */
    unsigned cmode, gmode;    /* fz_cmp_of's and fz_group_of's */
    uint64_t cseed, gseed;
    int grp;                  /* group_by */
    int open;                 /* a sorted loop of it is open */
} fz_query;

typedef struct fz_iter {
    int active, q;
    int cur;                  /* the table of the batch out, or -1 */
    uint32_t brow, bn;        /* its rows */
    int lastt;                /* the table of the last batch, or -1: the loop goes on after it in
                                 (group, table) order (tables made since included) */
    int nexts, batches;       /* ecs_query_next calls; batches handed out */
    int refused;              /* the library refused the loop (a sorted one: busy, no memory): nothing */
    int restricted;           /* ecs_iter_set_group */
    uint64_t only;
    int sorted, nruns, run;   /* a sorted loop: its runs (g_runs), fixed at its start, and the next */
    ecs_iter it;
} fz_iter;

/* behaviour bits of a system callback */
enum { B_WRITE = 1, B_CMD = 2, B_SPAWN = 4, B_RES = 8, B_IMM = 16, B_IMM2 = 32, B_DEFER = 64,
       B_BAD = 128, B_DEFER_OPEN = 256, B_SLOW = 512, B_NESTED = 1024 };
/* v2 behaviour bits (a byte read only once v2 is on) */
enum { P_INST = 1, P_IMMI = 2, P_SORT = 4, P_GROUP = 8 };

typedef struct fz_sys {
    ecs_system lib;
    int name;                 /* index into fz_snames */
    int nt;
    ecs_term terms[4];        /* as registered (valid) */
    int nr, nw;
    ecs_id reads[4], writes[2];   /* reads: 2 of any id, then up to 2 event types (event inputs) */
    int ndep[3], dep[3][2];   /* after, before, independent_of: fz_snames indices */
    int stage;
    uint32_t flags;
    int chunk;
    uint32_t behave;
    uint64_t seed;
    ecs_entity target[2];
    uint32_t b2;              /* P_* bits */
    ecs_entity pf;            /* the prefab P_INST and P_IMMI instantiate */
    fz_query oq;              /* its query as the model has it (terms; order_by, group_by) */
    int acc_n, acc_k[12], acc_w[12], acc_l[12];   /* declared access (model ids); l: in reads 1, writes 2 */
    int inert;                /* an independent_of partner: it only looks */
    int off;                  /* disabled (ecs_system_enable) */
    int dj;                   /* validation let a disjoint query run beside it (access rule) */
    atomic_int seq;           /* batches this frame (unchunked) */
    /* model state */
    int ran;
    int nbuf;
    fz_list *buf;             /* per chunk */
    uint64_t runs;
    uint64_t *serial_seen;    /* per chunk: the last pending serial seen */
    /* events (read from the input only once an event type exists) */
    int nem;
    ecs_id emits[2];
    int interval;
    uint32_t evb;             /* E_* bits */
    uint32_t rdmask;          /* event types (model ids) it reads: a window on each */
    uint64_t cur[FZ_MAXI];    /* the model's windows: the next event not seen, */
    uint64_t lo[FZ_MAXI], hi[FZ_MAXI];   /* and this run's [lo, hi) */
    uint64_t dropped;         /* events_dropped */
    uint64_t runptr[FZ_MAXI]; /* the array this run's first batch saw, per type */
    uint32_t runptr_set;
    /* an unchunked system's emitters: kept from an earlier frame (the library's side), which
       types it has got one of (model: ever, and this frame; library: this frame) */
    ecs_emitter *kept[FZ_MAXI];
    uint32_t m_kept, m_got, lib_got;
} fz_sys;

typedef struct fz_res { uint64_t v; uint8_t inj; } fz_res;
/* event behaviour bits of a system callback */
enum { E_EMIT = 1, E_ROWS = 2, E_READ = 4, E_BAD = 8 };
typedef struct fz_evlog {     /* a type's delivered events: [base, end) kept */
    unsigned char *data;
    uint64_t base, end;
    uint64_t cap;
} fz_evlog;
typedef struct fz_obs {
    ecs_observer lib;
    int k, echo;              /* its type; the type it echoes with ecs_world_emit, or -1 */
    int skip_resim, removed;
    uint64_t seed;
} fz_obs;
typedef struct fz_ologent {   /* an observer call (thread 0, at a sync point) */
    int o, count;
    ecs_id ev;
    uint64_t hash;
    int echo, echo_inj;
    uint64_t echo_r;
} fz_ologent;
typedef struct fz_logent {
    int sys, chunk, thread, count, seq;
    uint64_t group;           /* ecs_iter_group */
    uint32_t ent_off, res_off, res_n;
    uint64_t fieldhash;
    const char *bad;          /* a broken iterator field, named */
} fz_logent;

typedef struct fz_state {
    /* input */
    const uint8_t *data;
    size_t size, pos;
    int eof;
    long op;
    const char *opname;
    int trace;
    int v2;                   /* FZ_V2_ESC seen: prefabs, sorted and grouped loops */
    jmp_buf bail;
    /* world */
    ecs_world *w;
    int threads, order, check_reads, shuffled;
    fz_alloc al;
    ecs_query *all;
    /* events (the model's): types, logs, ecs_world_emit's queue, observers,
       stage turns (interval); zeroed with the scalars */
    int nev;
    fz_evlog evl[FZ_MAXI];    /* per model id (event types only) */
    fz_list waiting;          /* ecs_world_emit's events, for the next sync point */
    fz_list staged;           /* events the sync points of this stage turn staged, in delivery order */
    int nobs, resim;
    fz_obs obs[FZ_MAXOBS];
    uint64_t turns[8];
    int olog_n, olog_i;       /* observer calls logged this frame; the model's place */
    /* model */
    fz_model m;
    int nids;
    fz_idinfo ids[FZ_IDS];
    uint32_t vsize;
    unsigned char resval[FZ_MAXI][100];
    int nq;
    fz_query qs[FZ_MAXQ];
    fz_iter its[FZ_MAXIT];
    int nbuf;
    ecs_commands *bufs[FZ_MAXBUF];
    fz_list lists[FZ_MAXBUF];
    fz_list defer;
    int defer_exists, defer_depth;
    int nstages;
    int stage_off[8];         /* disabled stages (ecs_stage_enable) */
    int nsys;
    fz_sys sys[FZ_MAXSYS];
    int sys_valid;            /* the library's verdict on the graph (updated per frame) */
    int prec[FZ_MAXSYS][FZ_MAXSYS];
    uint64_t frames;
    int ops_since_check;
    /* callback simulation */
    int phase_systems;        /* simulating a non-exclusive system: structure is locked */
    int refusals;
    /* the frame log (written by callbacks, any thread) */
    atomic_int log_n;
    atomic_uint log_pool_n, log_res_n;
    int log_overflow;
    fz_logent log[FZ_LOG_ENTS];
    ecs_entity log_ents[FZ_LOG_POOL];
    fz_res log_res[FZ_LOG_POOL];
    float dt;
    fz_ologent olog[FZ_OLOG];
} fz_state;

static fz_state G;

/* FUZZ_STATS=1: counts of what the inputs reached, printed at exit */
enum { ST_INPUTS, ST_OPS, ST_FRAMES, ST_FRAME_OK, ST_BATCHES, ST_EXCL_BATCHES, ST_CHUNK_BATCHES, ST_CALLS,
       ST_PREFIX, ST_PREFIX_FRAME, ST_NOMEM, ST_BAIL, ST_SYNC_CMDS, ST_DEFER_CMDS, ST_BUSY, ST_INVALID,
       ST_ACCESS, ST_PARALLEL, ST_ITER_BATCHES, ST_EV_INPUTS, ST_EV_EMITTED, ST_EV_DELIVERED, ST_EV_READS,
       ST_EV_DROPPED, ST_OBS_CALLS, ST_EV_WORLD, ST_EV_RESOLVED, ST_EV_OOM_DELIVERED, ST_V2_INPUTS, ST_PREFABS,
       ST_INSTANCES, ST_INST_CMDS, ST_INST_DROPPED, ST_REMAPPED, ST_SORTED_BATCHES, ST_GROUPED_BATCHES,
       ST_RESTRICTED, ST_SORT_BUSY, ST_NESTED_SORTED, ST_COUNT };
static const char *const fz_stat_names[ST_COUNT] = {"inputs", "ops", "frames", "frames ok", "batches",
    "exclusive batches", "chunk batches", "callback calls", "prefix searches", "prefix searches in frames",
    "NOMEM results", "bails", "commands applied at sync points", "defer commands applied", "BUSY results",
    "invalid graphs", "ACCESS frames", "2-thread frames with systems", "query batches", "inputs with events",
    "events emitted (model)", "events delivered", "event reads with events", "events dropped (backlog)",
    "observer calls", "ecs_world_emit events", "entity fields resolved", "deliveries in OOM frames",
    "inputs with v2 ops", "prefabs made", "instances made", "instantiate commands applied",
    "instantiate commands dropped", "entity fields remapped", "sorted loop batches", "grouped loop batches",
    "restricted loops", "sorted loops refused (busy)", "nested sorted loops"};
static long fz_stats[ST_COUNT];
static void fz_stats_print(void) {
    for (int i = 0; i < ST_COUNT; i++) fprintf(stderr, "  %-34s %ld\n", fz_stat_names[i], fz_stats[i]);
}
#define FZ_STAT(i) (fz_stats[i]++)

static const char *const fz_result_names[7] = {"ECS_OK", "ECS_ERR_ARG", "ECS_ERR_STALE", "ECS_ERR_NOMEM",
    "ECS_ERR_INVALID_GRAPH", "ECS_ERR_BUSY", "ECS_ERR_ACCESS"};

/* ---- failure ------------------------------------------------------------- */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static _Noreturn void fz_fail(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "\n==== fuzz_api: MISMATCH at op %ld (%s), threads %d, order %d ====\n  ", G.op,
            G.opname ? G.opname : "?", G.threads, G.order);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  last error: \"%s\"\n", G.w ? ecs_last_error(G.w) : "");
    fflush(stderr);
    abort();
}
#define FZ_CHECK(cond, ...) do { if (!(cond)) fz_fail(__VA_ARGS__); } while (0)
#define FZ_H(e) ((unsigned long long)(e))

/* The input cannot go on (the model would have to guess): stop it here. */
static _Noreturn void fz_bail(const char *why) {
    FZ_STAT(ST_BAIL);
    if (G.trace) fprintf(stderr, "  [bail: %s]\n", why);
    longjmp(G.bail, 1);
}

/* ---- allocator ----------------------------------------------------------- */
static void *fz_realloc(void *p, size_t n, void *user) {
    fz_alloc *a = (fz_alloc *)user;
    if (n == 0) {
        if (p) { free(p); atomic_fetch_sub(&a->live, 1); }
        return NULL;
    }
    if (!atomic_load(&a->paused) && a->mode) {
        long r = atomic_fetch_add(&a->requests, 1) + 1;
        if ((a->mode == 1 && r == a->fail_at) || (a->mode == 2 && r >= a->fail_at)) {
            atomic_fetch_add(&a->injected, 1);
            return NULL;
        }
    }
    void *q = realloc(p, n);
    if (q && !p) atomic_fetch_add(&a->live, 1);
    return q;
}
static void fz_pause(void) { atomic_fetch_add(&G.al.paused, 1); }
static void fz_resume(void) { atomic_fetch_sub(&G.al.paused, 1); }
static long fz_injected(void) { return atomic_load(&G.al.injected); }

/* ---- input --------------------------------------------------------------- */
static unsigned fz_u8(void) {
    if (G.pos >= G.size) { G.eof = 1; return 0; }
    return G.data[G.pos++];
}
static unsigned fz_below(unsigned n) { return n ? fz_u8() % n : 0; }
static uint64_t fz_u64(void) {
    uint64_t x = 0;
    for (int i = 0; i < 8; i++) x = x << 8 | fz_u8();
    return x;
}

/* ---- small helpers ------------------------------------------------------- */
static uint64_t fz_mix(uint64_t a, uint64_t b) {
    uint64_t z = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static void fz_fill(unsigned char *p, size_t n, uint64_t seed) {
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0) x = fz_mix(x, i);
        p[i] = (unsigned char)(x >> (i % 8 * 8));
    }
}
static uint64_t fz_fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}
#define FZ_FNV0 1469598103934665603ull
static uint64_t fz_fnv64(uint64_t h, uint64_t v) { return fz_fnv(h, &v, sizeof v); }

static ecs_entity fz_handle(uint32_t slot, uint32_t gen) { return (uint64_t)gen << 32 | slot; }
#define FZ_ID0 1   /* ids every world registers itself (the prefab tag): the model's id k is FZ_ID0 + 1 + k */
static int fz_kid(ecs_id id) {   /* model id (the prefab tag: FZ_PF) */
    return id == FZ_ID0 ? FZ_PF : id > FZ_ID0 && (int)id <= G.nids + FZ_ID0 ? (int)id - 1 - FZ_ID0 : -1;
}
static int fz_is_comp(ecs_id id) { int k = fz_kid(id); return k >= 0 && !G.ids[k].res && !G.ids[k].ev; }
static int fz_addable(ecs_id id) { return fz_is_comp(id) && id != FZ_ID0; }   /* add/remove/set take it */
static int fz_is_ev(ecs_id id) { int k = fz_kid(id); return k >= 0 && G.ids[k].ev; }
static uint32_t fz_size(int k) { return G.ids[k].size; }

/* ---- model: entities and tables ------------------------------------------ */
static ecs_entity m_h(const fz_model *m, uint32_t s) { return fz_handle(s, m->rec[s].gen); }
static int m_alive(const fz_model *m, ecs_entity e) {
    uint32_t i = (uint32_t)e;
    return i < m->nrec && m->rec[i].state == FZ_LIVE && m->rec[i].gen == (uint32_t)(e >> 32);
}
static int m_reserved(const fz_model *m, ecs_entity e) {
    uint32_t i = (uint32_t)e;
    return i < m->nrec && m->rec[i].state == FZ_RESERVED && m->rec[i].gen == (uint32_t)(e >> 32);
}
static uint32_t m_mask(const fz_model *m, uint32_t s) { return m->tab[m->rec[s].table].mask; }
static int m_has(const fz_model *m, uint32_t s, int k) { return (int)(m_mask(m, s) >> k & 1); }
static unsigned char *m_val(fz_model *m, uint32_t s, int k) { return m->val[s] + G.ids[k].voff; }
static int m_locked(const fz_model *m, int t) { return m->lock[t] > 0 || G.phase_systems; }
static int m_find_tab(const fz_model *m, uint32_t mask) {
    for (int t = 0; t < m->ntab; t++) if (m->tab[t].mask == mask) return t;
    return -1;
}
static int m_new_tab(fz_model *m, uint32_t mask) {
    if (m->ntab == FZ_MAXTAB) fz_bail("too many tables for the model");
    int t = m->ntab++;
    m->tab[t].mask = mask; m->tab[t].n = 0; m->lock[t] = 0;
    return t;
}
static int m_tab_for(fz_model *m, uint32_t mask) {
    int t = m_find_tab(m, mask);
    return t >= 0 ? t : m_new_tab(m, mask);
}
static uint32_t m_take_slot(fz_model *m) {
    if (m->nfree) return m->freel[--m->nfree];
    if (m->nrec == FZ_MAXSLOT) fz_bail("too many entity slots for the model");
    uint32_t s = m->nrec++;
    m->rec[s].gen = 1; m->rec[s].state = FZ_FREE;
    m->par[s] = m->first[s] = m->last[s] = m->next[s] = m->prev[s] = -1;
    return s;
}
static void m_unlink(fz_model *m, uint32_t c) {
    int32_t p = m->par[c];
    if (p < 0) return;
    if (m->prev[c] >= 0) m->next[m->prev[c]] = m->next[c]; else m->first[p] = m->next[c];
    if (m->next[c] >= 0) m->prev[m->next[c]] = m->prev[c]; else m->last[p] = m->prev[c];
    m->par[c] = m->next[c] = m->prev[c] = -1;
}
static void m_link(fz_model *m, uint32_t c, uint32_t p) {   /* at the end: attach order */
    m->par[c] = (int32_t)p;
    m->next[c] = -1;
    m->prev[c] = m->last[p];
    if (m->last[p] >= 0) m->next[m->last[p]] = (int32_t)c; else m->first[p] = (int32_t)c;
    m->last[p] = (int32_t)c;
}
static int m_is_ancestor(const fz_model *m, uint32_t a, uint32_t x) {   /* a is x or above it */
    for (int32_t y = (int32_t)x; y >= 0; y = m->par[y]) if ((uint32_t)y == a) return 1;
    return 0;
}
static void m_release(fz_model *m, uint32_t s) {
    m->rec[s].state = FZ_FREE;
    m->rec[s].table = -1;
    m->rec[s].gen++;
    m->freel[m->nfree++] = s;
}
static void m_row_delete(fz_model *m, int t, uint32_t row) {
    fz_tab *tb = &m->tab[t];
    uint32_t last = tb->n - 1;
    if (row != last) {
        tb->rows[row] = tb->rows[last];
        m->rec[tb->rows[row]].row = row;
    }
    tb->n = last;
}
static void m_row_append(fz_model *m, int t, uint32_t s) {
    fz_tab *tb = &m->tab[t];
    m->rec[s].table = t;
    m->rec[s].row = tb->n;
    tb->rows[tb->n++] = (uint16_t)s;
}
static void m_place(fz_model *m, uint32_t s) {   /* a taken slot into the root table */
    m->rec[s].state = FZ_LIVE;
    m_row_append(m, 0, s);
    m->alive++;
}
/* The structural operations (arguments checked): ECS_OK or ECS_ERR_BUSY. */
static int m_create(fz_model *m, ecs_entity *out) {
    if (m_locked(m, 0)) return ECS_ERR_BUSY;
    uint32_t s = m_take_slot(m);
    m_place(m, s);
    if (out) *out = m_h(m, s);
    return ECS_OK;
}
/* The subtree of s in destroy order: children before their parent,
   siblings in attach order. */
static int m_subtree(const fz_model *m, uint32_t s, uint32_t *out) {
    int n = 0;
    uint32_t x = s;
    while (m->first[x] >= 0) x = (uint32_t)m->first[x];
    for (;;) {
        out[n++] = x;
        if (x == s) return n;
        if (m->next[x] >= 0) {
            x = (uint32_t)m->next[x];
            while (m->first[x] >= 0) x = (uint32_t)m->first[x];
        } else {
            x = (uint32_t)m->par[x];
        }
    }
}
static int m_destroy_predict(const fz_model *m, uint32_t s) {
    static uint32_t order[FZ_MAXSLOT];
    int n = m_subtree(m, s, order);
    for (int i = 0; i < n; i++) if (m_locked(m, m->rec[order[i]].table)) return ECS_ERR_BUSY;
    return ECS_OK;
}
static int m_destroy(fz_model *m, uint32_t s) {   /* with its children, depth first */
    static uint32_t order[FZ_MAXSLOT];
    int n = m_subtree(m, s, order);
    for (int i = 0; i < n; i++) if (m_locked(m, m->rec[order[i]].table)) return ECS_ERR_BUSY;
    for (int i = 0; i < n; i++) {
        uint32_t x = order[i];
        int t = m->rec[x].table;
        m_row_delete(m, t, m->rec[x].row);
        m_unlink(m, x);
        m->first[x] = m->last[x] = -1;
        m_release(m, x);
        m->alive--;
    }
    return ECS_OK;
}
static int m_is_pf(const fz_model *m, uint32_t s) {   /* a live prefab's slot */
    return m->rec[s].state == FZ_LIVE && m->rec[s].table >= 0 && (m_mask(m, s) & FZ_PFB);
}
/* ecs__set_parent (checked): ECS_ERR_ARG for a loop, or a child of a prefab that is not one. */
static int m_set_parent_bad(const fz_model *m, uint32_t c, ecs_entity parent) {
    return parent && ((m_is_pf(m, (uint32_t)parent) && !m_is_pf(m, c)) || m_is_ancestor(m, c, (uint32_t)parent));
}
static int m_set_parent(fz_model *m, uint32_t c, ecs_entity parent) {
    if (m_set_parent_bad(m, c, parent)) return ECS_ERR_ARG;
    m_unlink(m, c);
    if (parent) m_link(m, c, (uint32_t)parent);
    return ECS_OK;
}
static void m_move(fz_model *m, uint32_t s, int dst) {
    int src = m->rec[s].table;
    uint32_t row = m->rec[s].row;
    m_row_append(m, dst, s);
    m_row_delete(m, src, row);
}
static int m_add_predict(const fz_model *m, uint32_t s, int k) {
    uint32_t mask = m_mask(m, s);
    if (mask >> k & 1) return ECS_OK;
    if (m_locked(m, m->rec[s].table)) return ECS_ERR_BUSY;
    int d = m_find_tab(m, mask | 1u << k);
    if (d >= 0 && m_locked(m, d)) return ECS_ERR_BUSY;
    return ECS_OK;
}
static int m_add(fz_model *m, uint32_t s, int k, const unsigned char *v) {
    uint32_t mask = m_mask(m, s), size = fz_size(k);
    if (mask >> k & 1) {
        if (v && size) memcpy(m_val(m, s, k), v, size);
        return ECS_OK;
    }
    if (m_locked(m, m->rec[s].table)) return ECS_ERR_BUSY;
    int d = m_tab_for(m, mask | 1u << k);
    if (m_locked(m, d)) return ECS_ERR_BUSY;
    m_move(m, s, d);
    if (size) {
        if (v) memcpy(m_val(m, s, k), v, size);
        else memset(m_val(m, s, k), 0, size);
    }
    return ECS_OK;
}
static int m_remove_predict(const fz_model *m, uint32_t s, int k) {
    uint32_t mask = m_mask(m, s);
    if (!(mask >> k & 1)) return ECS_OK;
    if (m_locked(m, m->rec[s].table)) return ECS_ERR_BUSY;
    int d = m_find_tab(m, mask & ~(1u << k));
    if (d >= 0 && m_locked(m, d)) return ECS_ERR_BUSY;
    return ECS_OK;
}
static int m_remove(fz_model *m, uint32_t s, int k) {
    uint32_t mask = m_mask(m, s);
    if (!(mask >> k & 1)) return ECS_OK;
    if (m_locked(m, m->rec[s].table)) return ECS_ERR_BUSY;
    int d = m_tab_for(m, mask & ~(1u << k));
    if (m_locked(m, d)) return ECS_ERR_BUSY;
    m_move(m, s, d);
    return ECS_OK;
}

/* ---- model: prefabs and instances ---------------------------------------- */
static uint32_t m_count(const fz_model *m) {   /* ecs_count: live entities but prefabs */
    uint32_t n = m->alive;
    for (int t = 0; t < m->ntab; t++) if (m->tab[t].mask & FZ_PFB) n -= m->tab[t].n;
    return n;
}
/* ecs_prefab_new's table: the prefab tag alone (made if missing: also when refused as BUSY). */
static int m_pf_root(fz_model *m) { return m_tab_for(m, FZ_PFB); }
static void m_place_in(fz_model *m, uint32_t s, int t) {   /* a taken slot into table t */
    m->rec[s].state = FZ_LIVE;
    m_row_append(m, t, s);
    m->alive++;
}
/* The subtree of s in pre-order (a parent before its children, siblings in attach order). */
static int m_preorder(const fz_model *m, uint32_t s, uint32_t *out) {
    int n = 0;
    uint32_t x = s;
    for (;;) {
        out[n++] = x;
        if (m->first[x] >= 0) { x = (uint32_t)m->first[x]; continue; }
        while (x != s && m->next[x] < 0) x = (uint32_t)m->par[x];
        if (x == s) return n;
        x = (uint32_t)m->next[x];
    }
}
static int m_subtree_size(const fz_model *m, ecs_entity e) {
    static uint32_t nodes[FZ_MAXSLOT];
    return m_alive(m, e) ? m_preorder(m, (uint32_t)e, nodes) : 1;
}
/* ecs__check_prefab: ECS_OK for a live prefab, else ECS_ERR_STALE (not alive) or ECS_ERR_ARG. */
static int m_check_prefab(const fz_model *m, ecs_entity p) {
    if (!m_alive(m, p)) return ECS_ERR_STALE;
    return m_is_pf(m, (uint32_t)p) ? ECS_OK : ECS_ERR_ARG;
}
/* Whether instantiating prefab p would make a table (a failure then may leave one the model lacks). */
static int m_inst_new_tables(const fz_model *m, uint32_t p) {
    static uint32_t nodes[FZ_MAXSLOT];
    int k = m_preorder(m, p, nodes);
    for (int j = 0; j < k; j++) if (m_find_tab(m, m_mask(m, nodes[j]) & ~FZ_PFB) < 0) return 1;
    return 0;
}
/* Entity fields of the value of component kk that name an entity of the subtree (nodes, their
   handles when the plan was made) get that entity's copy in the same instance. */
static void m_remap(fz_model *m, int kk, unsigned char *v, const ecs_entity *was, const ecs_entity *made, int k) {
    for (int f = 0; f < G.ids[kk].nfield; f++) {
        ecs_entity ref;
        memcpy(&ref, v + G.ids[kk].field[f], sizeof ref);
        for (int x = 0; ref && x < k; x++)
            if (was[x] == ref) {
                memcpy(v + G.ids[kk].field[f], &made[x], sizeof ref);
                FZ_STAT(ST_REMAPPED);
                break;
            }
    }
    (void)m;
}
/* ecs__instantiate: n instances of live prefab p, the root of the first in slot `reserved` (a
   defer block's) or a new slot. The tables of the subtree's nodes (their ids but the tag) are
   made in pre-order, then ECS_ERR_BUSY if one is locked (nothing else changes); else instance
   i's entities are made in pre-order before instance i + 1's (slots, rows), linked to their
   parents' copies, their values copied and entity fields remapped; roots to roots. */
static int m_instantiate(fz_model *m, uint32_t p, uint32_t n, int64_t reserved, ecs_entity *roots) {
    static uint32_t node[FZ_MAXSLOT], made_s[FZ_MAXSLOT];
    static int up[FZ_MAXSLOT], dst[FZ_MAXSLOT];
    static ecs_entity was[FZ_MAXSLOT], made[FZ_MAXSLOT];
    int k = m_preorder(m, p, node);
    for (int j = 0; j < k; j++) {
        up[j] = -1;
        for (int i = j; j && i-- > 0;) if ((int32_t)node[i] == m->par[node[j]]) { up[j] = i; break; }
        was[j] = m_h(m, node[j]);
        dst[j] = m_tab_for(m, m_mask(m, node[j]) & ~FZ_PFB);
    }
    for (int j = 0; j < k; j++) if (m_locked(m, dst[j])) return ECS_ERR_BUSY;
    if ((uint64_t)n * (uint64_t)k > FZ_MAXSLOT) fz_bail("too many instances for the model");
    for (uint32_t i = 0; i < n; i++) {
        for (int j = 0; j < k; j++) {
            uint32_t s = i == 0 && j == 0 && reserved >= 0 ? (uint32_t)reserved : m_take_slot(m);
            m_place_in(m, s, dst[j]);
            made_s[j] = s;
            made[j] = m_h(m, s);
            if (up[j] >= 0) m_link(m, s, made_s[up[j]]);
        }
        for (int j = 0; j < k; j++) {
            uint32_t mask = m->tab[dst[j]].mask;
            for (int kk = 0; kk < G.nids; kk++) {
                if (!(mask >> kk & 1) || !fz_size(kk)) continue;
                memcpy(m_val(m, made_s[j], kk), m_val(m, node[j], kk), fz_size(kk));
                if (G.ids[kk].nfield) m_remap(m, kk, m_val(m, made_s[j], kk), was, made, k);
            }
        }
        if (roots) roots[i] = made[0];
        FZ_STAT(ST_INSTANCES);
    }
    return ECS_OK;
}

/* ---- model: command lists ------------------------------------------------ */
static void l_clear(fz_list *L) {
    L->n = L->applied = L->npend = 0;
    if (L->serial) L->old_serial = L->serial;
    L->serial = 0;
}
static fz_cmd *l_push(fz_list *L, int op, int k, int pend, ecs_entity h, const void *v) {
    if (L->n == L->cap) {
        L->cap = L->cap ? L->cap * 2 : 16;
        L->c = (fz_cmd *)realloc(L->c, (size_t)L->cap * sizeof *L->c);
        if (!L->c) { fprintf(stderr, "fuzz_api: out of memory\n"); abort(); }
    }
    fz_cmd *c = &L->c[L->n++];
    c->op = (uint8_t)op; c->k = (int8_t)k; c->pend = (int16_t)pend; c->h = h; c->parent = 0;
    if (v && k >= 0 && fz_size(k)) memcpy(c->v, v, fz_size(k));
    return c;
}
static void l_free(fz_list *L) { free(L->c); free(L->ev); memset(L, 0, sizeof *L); }

static int m_pending_of(const fz_list *L, ecs_entity e);
/* ecs__fields_live: pending handles of L in the entity fields of a value of component k become
   what L's creates made (0 for one not applied yet). */
static void m_fields_live(const fz_list *L, int k, unsigned char *v) {
    for (int f = 0; f < G.ids[k].nfield; f++) {
        ecs_entity h;
        memcpy(&h, v + G.ids[k].field[f], sizeof h);
        if (!m_pending_of(L, h)) continue;
        h = L->created[h & 0xFFFFFF];
        memcpy(v + G.ids[k].field[f], &h, sizeof h);
    }
}
/* Applies one command; ECS_OK (done or dropped) or ECS_ERR_BUSY (nothing done). */
static int m_apply_cmd(fz_model *m, fz_list *L, const fz_cmd *c) {
    if (c->op == C_PCREATE) {   /* a prefab a defer block reserved */
        int t = m_pf_root(m);
        if (m_locked(m, t)) return ECS_ERR_BUSY;
        m_place_in(m, (uint32_t)c->h, t);
        FZ_STAT(ST_PREFABS);
        return ECS_OK;
    }
    if (c->op == C_INST) {   /* a prefab that died since drops it (a reserved slot goes back) */
        ecs_entity root = 0;
        if (m_check_prefab(m, c->parent)) {
            m->dropped++;
            FZ_STAT(ST_INST_DROPPED);
            if (c->pend < 0) m_release(m, (uint32_t)c->h);
            else L->created[c->pend] = 0;
            return ECS_OK;
        }
        int r = m_instantiate(m, (uint32_t)c->parent, 1, c->pend < 0 ? (int64_t)(uint32_t)c->h : -1, &root);
        if (r) return r;
        if (c->pend >= 0) L->created[c->pend] = root;
        FZ_STAT(ST_INST_CMDS);
        return ECS_OK;
    }
    if (c->op == C_CREATE) {
        if (m_locked(m, 0)) return ECS_ERR_BUSY;
        if (c->pend < 0) {   /* a slot reserved in defer mode */
            m_place(m, (uint32_t)c->h);
        } else {
            ecs_entity e = 0;
            m_create(m, &e);
            L->created[c->pend] = e;
        }
        return ECS_OK;
    }
    ecs_entity e = c->pend >= 0 ? L->created[c->pend] : c->h;
    if (!m_alive(m, e)) { m->dropped++; return ECS_OK; }
    uint32_t s = (uint32_t)e;
    switch (c->op) {
    case C_PARENT: {
        ecs_entity p = c->parent >> 63 ? L->created[c->parent & 0xFFFFFF] : c->parent;
        if ((p && !m_alive(m, p)) || m_set_parent(m, s, p) == ECS_ERR_ARG) m->dropped++;   /* dead parent, loop */
        return ECS_OK;
    }
    case C_DESTROY: return m_destroy(m, s);
    case C_ADD: return m_add(m, s, c->k, NULL);
    case C_REMOVE: return m_remove(m, s, c->k);
    default: {
        unsigned char v[100];
        memcpy(v, c->v, fz_size(c->k));
        m_fields_live(L, c->k, v);
        return m_add(m, s, c->k, v);
    }
    }
}
/* Applies L from where it stopped, at most *budget commands (< 0: all).
   0 when the list is done (and cleared, if it had commands or clear_empty),
   ECS_ERR_BUSY when a command is refused, 1 when the budget ran out. */
static int m_apply_list(fz_model *m, fz_list *L, long *budget, int clear_empty) {
    if (L->applied >= L->n && !L->n && !clear_empty) return 0;
    while (L->applied < L->n) {
        if (*budget == 0) return 1;
        int r = m_apply_cmd(m, L, &L->c[L->applied]);
        if (r) return r;
        L->applied++;
        if (*budget > 0) (*budget)--;
    }
    l_clear(L);
    return 0;
}
static long l_left(const fz_list *L) { return L->n - L->applied; }

/* ---- the library's side -------------------------------------------------- */
static int lib_table_count(void) { return (int)G.w->tab.table_count; }
static uint32_t lib_table_mask(int t) {
    const ecs__table *tb = G.w->tab.tables[t];
    uint32_t mask = 0;
    for (uint32_t i = 0; i < tb->id_count; i++) {
        int k = fz_kid(tb->ids[i]);
        FZ_CHECK(k >= 0 && !G.ids[k].res && !G.ids[k].ev, "table %d holds id %u, which is no component", t, tb->ids[i]);
        mask |= 1u << k;
    }
    return mask;
}
static void fz_check_tables(void) {
    int n = lib_table_count();
    FZ_CHECK(n == G.m.ntab, "the library has %d tables, the model %d", n, G.m.ntab);
    for (int t = G.m.ntab - 1; t >= 0 && t >= G.m.ntab - 2; t--) {
        uint32_t mask = lib_table_mask(t);
        FZ_CHECK(mask == G.m.tab[t].mask, "table %d has mask %#x, the model %#x", t, mask, G.m.tab[t].mask);
    }
}

/* ---- checks -------------------------------------------------------------- */
static void fz_check_value(const void *p, uint32_t s, int k, const char *what) {
    uint32_t al = G.ids[k].align ? G.ids[k].align : 1;
    FZ_CHECK(p != NULL, "%s of id %d of %#llx is NULL", what, k, FZ_H(m_h(&G.m, s)));
    FZ_CHECK((uintptr_t)p % al == 0, "%s of id %d at %p is not %u-byte aligned", what, k, p, al);
    FZ_CHECK(!memcmp(p, m_val(&G.m, s, k), fz_size(k)), "%s of id %d (%u bytes) of %#llx differs from the model",
             what, k, fz_size(k), FZ_H(m_h(&G.m, s)));
}
static void fz_check_rels(uint32_t s) {
    ecs_entity e = m_h(&G.m, s), kids[8];
    ecs_entity want = G.m.par[s] >= 0 ? m_h(&G.m, (uint32_t)G.m.par[s]) : 0;
    FZ_CHECK(ecs_get_parent(G.w, e) == want, "ecs_get_parent(%#llx) = %#llx, model %#llx", FZ_H(e),
             FZ_H(ecs_get_parent(G.w, e)), FZ_H(want));
    size_t n = ecs_children(G.w, e, kids, 8), k = 0;
    for (int32_t c = G.m.first[s]; c >= 0; c = G.m.next[c], k++)
        if (k < 8) FZ_CHECK(kids[k] == m_h(&G.m, (uint32_t)c), "child %zu of %#llx is %#llx, model %#llx", k, FZ_H(e),
                            FZ_H(kids[k]), FZ_H(m_h(&G.m, (uint32_t)c)));
    FZ_CHECK(n == k, "ecs_children(%#llx) = %zu, model %zu", FZ_H(e), n, k);
}
static void fz_check_entity(uint32_t s) {
    ecs_entity e = m_h(&G.m, s);
    FZ_CHECK(ecs_is_alive(G.w, e), "live entity %#llx is not alive", FZ_H(e));
    fz_check_rels(s);
    uint32_t mask = m_mask(&G.m, s);
    int pf = (mask & FZ_PFB) != 0;
    FZ_CHECK(ecs_is_prefab(G.w, e) == pf && ecs_has(G.w, e, FZ_ID0) == pf, "ecs_is_prefab(%#llx) = %d, "
             "ecs_has(the prefab tag) = %d, the model says %d", FZ_H(e), ecs_is_prefab(G.w, e),
             ecs_has(G.w, e, FZ_ID0), pf);
    for (int k = 0; k < G.nids; k++) {
        bool has = ecs_has(G.w, e, G.ids[k].lib);
        int want = !G.ids[k].res && (mask >> k & 1);
        FZ_CHECK(has == (want != 0), "ecs_has(%#llx, id %d) = %d, the model says %d", FZ_H(e), k, has, want);
        const void *p = ecs_get(G.w, e, G.ids[k].lib);
        if (want && fz_size(k)) fz_check_value(p, s, k, "ecs_get");
        else FZ_CHECK(p == NULL, "ecs_get(%#llx, id %d) is not NULL", FZ_H(e), k);
    }
}
static void fz_check_dead(ecs_entity e) {
    FZ_CHECK(!ecs_is_alive(G.w, e), "dead handle %#llx is alive", FZ_H(e));
    FZ_CHECK(!ecs_get_parent(G.w, e) && !ecs_children(G.w, e, NULL, 0), "dead %#llx has relations", FZ_H(e));
    if (G.nids) FZ_CHECK(!ecs_has(G.w, e, G.ids[0].lib), "ecs_has on dead %#llx", FZ_H(e));
    FZ_CHECK(!ecs_is_prefab(G.w, e) && !ecs_has(G.w, e, FZ_ID0), "dead %#llx is a prefab", FZ_H(e));
}
static void fz_check_resources(void) {
    for (int k = 0; k < G.nids; k++) {
        if (!G.ids[k].res) continue;
        fz_pause();
        const void *p = ecs_resource_get(G.w, G.ids[k].lib);
        fz_resume();
        FZ_CHECK(p && (uintptr_t)p % G.ids[k].align == 0, "resource %d storage %p", k, p);
        FZ_CHECK(!memcmp(p, G.resval[k], fz_size(k)), "resource %d differs from the model", k);
    }
}
static void fz_check_counts(void) {
    size_t n = ecs_count(G.w), d = ecs_commands_dropped(G.w);
    FZ_CHECK(n == m_count(&G.m), "ecs_count = %zu, model %u (prefabs left out)", n, m_count(&G.m));
    FZ_CHECK(d == G.m.dropped, "ecs_commands_dropped = %zu, model %zu", d, G.m.dropped);
    fz_check_tables();
}
/* White-box, between frames: each event type's log (delivered, nothing
   staged, the payloads the model still holds), ecs_world_emit's queue, the
   readers' windows and events_dropped, the stage turns (intervals count
   them). */
static void fz_check_events(void) {
    if (!G.nev) return;
    ecs_world *w = G.w;
    for (int k = 0; k < G.nids; k++) {
        if (!G.ids[k].ev) continue;
        const ecs__idinfo *in = &w->reg.ids[G.ids[k].lib];
        FZ_CHECK(in->event >= 1 && in->event <= w->ev.log_count, "event type %d has no log", k);
        const ecs__evlog *L = &w->ev.logs[in->event - 1];
        const fz_evlog *E = &G.evl[k];
        uint32_t size = fz_size(k);
        FZ_CHECK(L->end == E->end, "event type %d: %llu delivered, the model %llu", k, (unsigned long long)L->end,
                 (unsigned long long)E->end);
        FZ_CHECK(L->base + L->count == L->end && L->base <= L->end, "event type %d: %llu events staged between frames",
                 k, (unsigned long long)(L->base + L->count - L->end));
        uint64_t from = L->base > E->base ? L->base : E->base;
        if (size && from < E->end)
            FZ_CHECK(!memcmp(L->data + (size_t)(from - L->base) * size, E->data + (size_t)(from - E->base) * size,
                             (size_t)(E->end - from) * size),
                     "event type %d: the delivered payloads (events %llu..%llu) differ from the model", k,
                     (unsigned long long)from, (unsigned long long)E->end);
        const ecs_commands *q = w->ev.waiting;
        uint32_t n = 0;
        const unsigned char *data = NULL;
        for (uint32_t b = 0; q && b < q->evb_count; b++)
            if (q->evb[b].id == G.ids[k].lib) { n = q->evb[b].count; data = q->evb[b].data; }
        uint32_t mn = 0;
        for (int i = 0; i < G.waiting.nev; i++) {
            if (G.waiting.ev[i].k != k) continue;
            if (size && mn < n)
                FZ_CHECK(!memcmp(data + (size_t)mn * size, G.waiting.ev[i].v, size), "ecs_world_emit's queue: event %u "
                         "of type %d differs from the model", mn, k);
            mn++;
        }
        FZ_CHECK(n == mn, "ecs_world_emit's queue holds %u events of type %d, the model %u", n, k, mn);
    }
    for (int s = 0; s < G.nsys; s++) {
        const fz_sys *S = &G.sys[s];
        const ecs__system *ls = &w->sys.systems[S->lib - 1];
        uint64_t dropped = 0;
        uint32_t types = 0;
        for (uint32_t i = 0; i < ls->win_count; i++) {
            const ecs__window *win = &ls->win[i];
            int k = fz_kid(w->ev.logs[win->log].id);
            FZ_CHECK(k >= 0 && (S->rdmask >> k & 1) && !(types >> k & 1), "system %d has a window on log %u", s + 1,
                     win->log);
            types |= 1u << k;
            FZ_CHECK(win->cursor == S->cur[k] && win->lo == win->cursor && win->hi == win->cursor,
                     "system %d, event type %d: the window is at %llu (run %llu..%llu), the model at %llu", s + 1, k,
                     (unsigned long long)win->cursor, (unsigned long long)win->lo, (unsigned long long)win->hi,
                     (unsigned long long)S->cur[k]);
            dropped += win->dropped;
        }
        FZ_CHECK(types == S->rdmask, "system %d reads event types %#x, the model %#x", s + 1, types, S->rdmask);
        ecs_system_stats ss;
        FZ_CHECK(ecs_system_stats_get(w, S->lib, &ss) == ECS_OK && ss.events_dropped == dropped &&
                 dropped == S->dropped, "system %d: %llu events dropped (windows %llu), the model %llu", s + 1,
                 (unsigned long long)ss.events_dropped, (unsigned long long)dropped, (unsigned long long)S->dropped);
    }
    for (int st = 0; st < G.nstages; st++)
        FZ_CHECK(w->sys.stages[st].turns == G.turns[st], "stage %d took %llu turns, the model %llu", st,
                 (unsigned long long)w->sys.stages[st].turns, (unsigned long long)G.turns[st]);
}
/* The whole world: every entity in iteration order, every id, every value. */
static int fz_world_tab(int t) {   /* the next table a query without terms visits: t or after */
    while (t < G.m.ntab && (!G.m.tab[t].n || (G.m.tab[t].mask & FZ_PFB))) t++;
    return t;
}
static void fz_check_world(void) {
    fz_check_counts();
    int t = -1;
    fz_pause();
    for (ecs_iter it = ecs_query_iter(G.w, G.all); ecs_query_next(&it);) {
        t = fz_world_tab(t + 1);
        FZ_CHECK(t < G.m.ntab, "a full query finds more entities than the model has");
        FZ_CHECK((uint32_t)it.count == G.m.tab[t].n, "a full query batch has %d rows, model table %d (mask %#x) %u",
                 it.count, t, G.m.tab[t].mask, G.m.tab[t].n);
        for (int i = 0; i < it.count; i++) {
            uint32_t s = G.m.tab[t].rows[i];
            FZ_CHECK(it.entities[i] == m_h(&G.m, s), "row %d of table %d (mask %#x) is %#llx, model %#llx",
                     i, t, G.m.tab[t].mask, FZ_H(it.entities[i]), FZ_H(m_h(&G.m, s)));
        }
        for (int i = 0; i < it.count; i++) fz_check_entity(G.m.tab[t].rows[i]);
    }
    t = fz_world_tab(t + 1);
    FZ_CHECK(t == G.m.ntab, "a full query finds fewer entities than the model has (table %d)", t);
    fz_resume();
    for (t = 0; t < G.m.ntab; t++) {   /* prefabs (no query without the tag sees them): white-box */
        const fz_tab *tb = &G.m.tab[t];
        if (!(tb->mask & FZ_PFB)) continue;
        const ecs__table *lt = G.w->tab.tables[t];
        FZ_CHECK(lib_table_mask(t) == tb->mask && lt->prefab, "prefab table %d has mask %#x, the model %#x", t,
                 lib_table_mask(t), tb->mask);
        FZ_CHECK(lt->count == tb->n, "prefab table %d (mask %#x) has %u rows, the model %u", t, tb->mask, lt->count,
                 tb->n);
        for (uint32_t i = 0; i < tb->n; i++) {
            FZ_CHECK(lt->entities[i] == m_h(&G.m, tb->rows[i]), "row %u of prefab table %d is %#llx, model %#llx", i, t,
                     FZ_H(lt->entities[i]), FZ_H(m_h(&G.m, tb->rows[i])));
            fz_check_entity(tb->rows[i]);
        }
    }
    for (uint32_t s = 0; s < G.m.nrec; s++) {
        const fz_rec *rc = &G.m.rec[s];
        if (rc->state != FZ_LIVE) fz_check_dead(fz_handle(s, rc->gen));
        if (rc->gen > 1) fz_check_dead(fz_handle(s, rc->gen - 1));
    }
    fz_check_resources();
    fz_check_events();
    G.ops_since_check = 0;
}

/* ---- picking arguments --------------------------------------------------- */
static uint32_t fz_live_at(unsigned k) {   /* the k-th live entity in iteration order */
    for (int t = 0; t < G.m.ntab; t++) {
        if (k < G.m.tab[t].n) return G.m.tab[t].rows[k];
        k -= G.m.tab[t].n;
    }
    return UINT32_MAX;
}
/* An entity handle: live, dead, reserved, 0, pending-looking or random. */
static ecs_entity fz_pick_handle(void) {
    unsigned c = fz_u8() % 16;
    if (c < 9 && G.m.alive) return m_h(&G.m, fz_live_at(fz_below(G.m.alive)));
    if (c < 11 && G.m.nrec) {   /* dead: an older generation, or a free slot */
        uint32_t s = fz_below(G.m.nrec);
        const fz_rec *r = &G.m.rec[s];
        if (r->state == FZ_FREE) return fz_handle(s, r->gen);
        if (r->gen > 1) return fz_handle(s, r->gen - 1 - fz_below(r->gen - 1));
        return fz_handle(s, r->gen + 1);
    }
    if (c == 11) {   /* reserved by defer mode */
        for (uint32_t s = 0; s < G.m.nrec; s++)
            if (G.m.rec[s].state == FZ_RESERVED) return m_h(&G.m, s);
    }
    if (c == 12) return 0;
    if (c == 13) {   /* pending: of some buffer, a stale one, or forged */
        unsigned b = fz_below(FZ_MAXBUF);
        const fz_list *L = &G.lists[b];
        if (L->serial && L->npend) return 1ull << 63 | L->serial << 24 | fz_below((unsigned)L->npend);
        if (L->old_serial) return 1ull << 63 | L->old_serial << 24;
        return 1ull << 63 | (uint64_t)fz_u8() << 24 | fz_u8();
    }
    if (c == 14) return fz_handle(fz_below(G.m.nrec + 3), fz_below(4));
    return fz_u64();
}
/* An id: any registered one (components, tags, resources), 0 or unknown. */
static ecs_id fz_pick_id(void) {
    unsigned c = fz_below((unsigned)G.nids + 2);
    if (c < (unsigned)G.nids) return G.ids[c].lib;
    return c == (unsigned)G.nids ? 0 : (ecs_id)G.nids + 1 + FZ_ID0 + fz_below(3);
}
/* A component or tag if there is one (else anything). */
static ecs_id fz_pick_comp(void) {
    unsigned start = fz_u8();
    for (int i = 0; i < G.nids; i++) {
        int k = (int)((start + (unsigned)i) % (unsigned)G.nids);
        if (!G.ids[k].res && !G.ids[k].ev) return G.ids[k].lib;
    }
    return fz_pick_id();
}

/* A prefab: mostly a live one (in iteration order), else any handle. */
static ecs_entity fz_pick_prefab(void) {
    unsigned c = fz_u8();
    uint32_t n = G.m.alive - m_count(&G.m);
    if (c % 8 < 6 && n) {
        uint32_t k = fz_below(n);
        for (int t = 0; t < G.m.ntab; t++) {
            if (!(G.m.tab[t].mask & FZ_PFB)) continue;
            if (k < G.m.tab[t].n) return m_h(&G.m, G.m.tab[t].rows[k]);
            k -= G.m.tab[t].n;
        }
    }
    return fz_pick_handle();
}

static void fz_sync_tables_all(fz_model *m);

/* ---- applying lists: the model's side of ecs_commands_apply, defer_end,
   and the sync points ------------------------------------------------------ */
typedef struct fz_seq { fz_list *l[FZ_MAXSYS * 64 + 4]; int n; } fz_seq;

/* Applies the lists in order, at most budget commands (< 0: all). */
static int seq_apply(fz_model *m, fz_list **ls, int n, long budget) {
    for (int i = 0; i < n; i++) {
        int r = m_apply_list(m, ls[i], &budget, 1);
        if (r) return r;   /* 1: budget out; BUSY */
    }
    return 0;
}
static long seq_left(fz_list **ls, int n) {
    long t = 0;
    for (int i = 0; i < n; i++) t += l_left(ls[i]);
    return t;
}

/* The library's buffer behind a model list (white-box: its applied count). */
static const ecs_commands *lib_list(const fz_list *L) {
    if (L == &G.defer) return G.w->cmd.defer;
    for (int b = 0; b < G.nbuf; b++) if (L == &G.lists[b]) return G.bufs[b];
    for (int s = 0; s < G.nsys; s++)
        if (G.sys[s].nbuf && L >= G.sys[s].buf && L < G.sys[s].buf + G.sys[s].nbuf)
            return &G.w->sys.systems[G.sys[s].lib - 1].bufs[L - G.sys[s].buf];
    fz_fail("a command list of no buffer");
}
/* The library stopped part way through the sequence (a failed allocation):
   how far it got is in its buffers (a finished buffer is cleared); the model
   applies as much, and the caller then compares the whole world. */
static void fz_apply_prefix(fz_list **ls, int n, const char *what) {
    long total = seq_left(ls, n), k = 0;
    int stop = -1;
    for (int i = 0; i < n; i++) {
        const ecs_commands *c = lib_list(ls[i]);
        long left = l_left(ls[i]);
        if (stop >= 0 || (c->count && c->applied < c->count)) {
            FZ_CHECK(c->count == (uint32_t)ls[i]->n && c->applied >= (uint32_t)ls[i]->applied,
                     "%s: command list %d has %u commands (%u applied), the model %d (%d applied)", what, i,
                     c->count, c->applied, ls[i]->n, ls[i]->applied);
            if (stop < 0) { stop = i; k += (long)c->applied - ls[i]->applied; }
            else FZ_CHECK(c->applied == (uint32_t)ls[i]->applied, "%s: list %d after the stop was applied", what, i);
            continue;
        }
        FZ_CHECK(c->count == 0, "%s: command list %d is done but not cleared (%u commands)", what, i, c->count);
        k += left;
    }
    FZ_STAT(ST_PREFIX);
    if (G.trace) fprintf(stderr, "  [%s: %ld of %ld commands applied]\n", what, k, total);
    int r = seq_apply(&G.m, ls, n, k);
    FZ_CHECK(r != ECS_ERR_BUSY, "%s: the model stops (BUSY) before the library's %ld commands", what, k);
    fz_sync_tables_all(&G.m);
}

/* After a call that applies a sequence: the library's result res. */
static void fz_after_apply(fz_list **ls, int n, int res, long inj0, const char *what) {
    if (res == ECS_ERR_NOMEM) {
        FZ_CHECK(fz_injected() > inj0, "%s returned ECS_ERR_NOMEM with no allocation failing", what);
        fz_apply_prefix(ls, n, what);
        fz_check_world();
        return;
    }
    if (G.trace)
        for (int i = 0; i < n; i++) {
            const ecs_commands *c = lib_list(ls[i]);
            for (int j = ls[i]->applied; j < ls[i]->n; j++)
                fprintf(stderr, "    model list %d cmd %d: op %d k %d pend %d h %#llx parent %#llx\n", i, j, ls[i]->c[j].op,
                        ls[i]->c[j].k, ls[i]->c[j].pend, FZ_H(ls[i]->c[j].h), FZ_H(ls[i]->c[j].parent));
            fprintf(stderr, "    library buffer: %u commands, %u applied; allocation failures in the call: %ld\n",
                    c->count, c->applied, fz_injected() - inj0);
        }
    int want = seq_apply(&G.m, ls, n, -1);
    FZ_CHECK(res == want, "%s = %s, the model says %s", what, ecs_result_str((ecs_result)res),
             ecs_result_str((ecs_result)want));
    fz_check_world();
}

/* ---- failures of immediate calls ----------------------------------------- */
/* The call failed for lack of memory: it must be the injected failure, say
   so, and change nothing the model can see (it may have made a table). */
static void fz_nomem(long inj0, const char *what) {
    FZ_STAT(ST_NOMEM);
    FZ_CHECK(fz_injected() > inj0, "%s failed (ECS_ERR_NOMEM / 0) with no allocation failing", what);
    FZ_CHECK(ecs_last_error(G.w)[0], "%s failed without an error line", what);
    fz_sync_tables_all(&G.m);
    fz_check_world();
}
static void fz_expect(int got, int want, const char *what) {
    FZ_CHECK(got == want, "%s = %s, expected %s", what, ecs_result_str((ecs_result)got),
             ecs_result_str((ecs_result)want));
    if (got == ECS_ERR_BUSY) FZ_STAT(ST_BUSY);
    if (got != ECS_OK) FZ_CHECK(ecs_last_error(G.w)[0], "%s = %s without an error line", what,
                                ecs_result_str((ecs_result)got));
}

static int fz_deferring(void) { return G.defer_depth && !G.phase_systems; }
/* ecs__check_target: live, or reserved by this defer mode. */
static int m_target(ecs_entity e) {
    return m_alive(&G.m, e) || (fz_deferring() && m_reserved(&G.m, e)) ? ECS_OK : ECS_ERR_STALE;
}

/* ---- registration -------------------------------------------------------- */
static void op_event(unsigned how);
static void op_component_init(unsigned how);
static void op_register(int resource) {
    unsigned nraw = fz_u8();
    if (nraw >= FZ_EV_ESC && nraw < FZ_EV_ESC + 8) { op_event(nraw - FZ_EV_ESC); return; }
    if (nraw >= FZ_V2_ESC && nraw < FZ_V2_ESC + 4) { op_component_init(nraw - FZ_V2_ESC); return; }
    unsigned nb = nraw % 18, sb = fz_u8(), ab = fz_u8();
    const char *name = nb < 16 ? fz_names[nb] : nb == 16 ? "" : NULL;
    size_t size = sb == 255 ? (size_t)1 << 31 : fz_sizes[sb % 7];
    size_t align = fz_aligns[ab % 7];
    unsigned char init[100];
    int use_init = fz_u8() & 1;
    fz_fill(init, sizeof init, (uint64_t)fz_u8() << 8 | 0x33);
    /* the model's answer: the id, or 0 */
    int want_new = 0;
    ecs_id want = 0;
    size_t a = align;
    int ok = name && *name && size <= INT32_MAX && !(resource && size == 0);
    if (ok && size == 0) a = 0;
    else if (ok && a == 0) for (a = 1; a < 16 && size % (a * 2) == 0; a *= 2) {}
    if (ok && size && ((a & (a - 1)) || a > 64 || size % a)) ok = 0;
    if (ok) {
        int found = -1;
        for (int k = 0; k < G.nids; k++) if (G.ids[k].name == (int)nb) found = k;
        if (found >= 0) {
            if (G.ids[found].res == resource && !G.ids[found].ev && G.ids[found].size == size) want = G.ids[found].lib;
        } else {
            if (G.nids == FZ_MAXI) return;   /* beyond the model */
            want_new = 1;
            want = (ecs_id)G.nids + 1 + FZ_ID0;
        }
    }
    long inj0 = fz_injected();
    ecs_id id = resource ? ecs_resource(G.w, name, size, align, use_init ? init : NULL)
                         : ecs_component(G.w, name, size, align);
    if (!id && want_new) { fz_nomem(inj0, resource ? "ecs_resource" : "ecs_component"); return; }
    FZ_CHECK(id == want, "%s(\"%s\", %zu, %zu) = %u, the model says %u", resource ? "ecs_resource" : "ecs_component",
             name ? name : "(null)", size, align, id, want);
    if (!id) { FZ_CHECK(ecs_last_error(G.w)[0], "a refused registration without an error line"); return; }
    if (!want_new) return;
    fz_idinfo *in = &G.ids[G.nids];
    memset(in, 0, sizeof *in);
    in->lib = id; in->size = (uint32_t)size; in->align = (uint32_t)a; in->res = resource; in->name = (int)nb;
    in->voff = G.vsize;
    if (!resource) G.vsize += (uint32_t)size;
    else {
        if (use_init) memcpy(G.resval[G.nids], init, size);
        else memset(G.resval[G.nids], 0, size);
    }
    G.nids++;
    FZ_CHECK(ecs_id_count(G.w) == (ecs_id)G.nids + FZ_ID0, "ecs_id_count = %u, model %d", ecs_id_count(G.w), G.nids);
    FZ_CHECK(ecs_lookup(G.w, name) == id, "ecs_lookup(\"%s\") = %u, want %u", name, ecs_lookup(G.w, name), id);
    FZ_CHECK(ecs_id_size(G.w, id) == size, "ecs_id_size");
    FZ_CHECK(ecs_id_name(G.w, id) && !strcmp(ecs_id_name(G.w, id), name), "ecs_id_name");
    fz_check_resources();
}

/* ---- entities ------------------------------------------------------------ */
static fz_cmd *m_defer_make(ecs_entity *out, int op) {   /* ecs__defer_create */
    uint32_t s = m_take_slot(&G.m);
    G.m.rec[s].state = FZ_RESERVED;
    G.m.rec[s].table = -1;
    *out = m_h(&G.m, s);
    return l_push(&G.defer, op, -1, -1, *out, NULL);
}
static void m_defer_reserve(ecs_entity *out) { m_defer_make(out, C_CREATE); }
static void m_defer_inst(ecs_entity *out, ecs_entity prefab) { m_defer_make(out, C_INST)->parent = prefab; }

static void op_create(void) {
    if (G.m.nrec > FZ_SLOT_SOFT) return;
    long inj0 = fz_injected();
    ecs_entity e = ecs_create(G.w);
    if (fz_deferring()) {
        if (!e) { fz_nomem(inj0, "deferred ecs_create"); return; }
        ecs_entity want;
        m_defer_reserve(&want);
        FZ_CHECK(e == want, "deferred ecs_create = %#llx, model %#llx", FZ_H(e), FZ_H(want));
        FZ_CHECK(!ecs_is_alive(G.w, e), "a reserved entity is alive before the block ends");
        return;
    }
    if (m_locked(&G.m, 0)) {
        FZ_CHECK(e == 0, "ecs_create while the root table is locked = %#llx", FZ_H(e));
        fz_expect(ECS_ERR_BUSY, ECS_ERR_BUSY, "ecs_create");
        return;
    }
    if (!e) { fz_nomem(inj0, "ecs_create"); return; }
    ecs_entity want = 0;
    m_create(&G.m, &want);
    FZ_CHECK(e == want, "ecs_create = %#llx, model %#llx", FZ_H(e), FZ_H(want));
    fz_check_entity((uint32_t)e);
}

static void op_create_many(void) {
    unsigned nb = fz_u8();
    size_t n = nb == 255 ? (size_t)1 << 31 : nb % 17;
    unsigned idn = fz_u8() % 5;
    ecs_id ids[4];
    for (unsigned i = 0; i < idn; i++) ids[i] = fz_u8() % 4 ? fz_pick_comp() : fz_pick_id();
    int use_out = fz_u8() % 4 != 0, null_ids = idn && fz_u8() == 7;
    if (n <= 16 && G.m.nrec + n > FZ_SLOT_SOFT) return;
    ecs_entity out[16] = {0};
    int want = ECS_OK;
    uint32_t mask = 0;
    if (null_ids || n > INT32_MAX) want = ECS_ERR_ARG;
    for (unsigned i = 0; i < idn && !want; i++) {
        if (!fz_addable(ids[i])) want = ECS_ERR_ARG;
        else mask |= 1u << fz_kid(ids[i]);
    }
    long inj0 = fz_injected();
    ecs_result r = ecs_create_many(G.w, n, null_ids ? NULL : ids, idn, use_out ? out : NULL);
    if (want) { fz_expect(r, want, "ecs_create_many"); return; }
    if (fz_deferring()) {
        if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, "deferred ecs_create_many"); return; }
        fz_expect(r, ECS_OK, "deferred ecs_create_many");
        for (size_t i = 0; i < n; i++) {
            ecs_entity e;
            m_defer_reserve(&e);
            for (unsigned j = 0; j < idn; j++) l_push(&G.defer, C_ADD, fz_kid(ids[j]), -1, e, NULL);
            if (use_out) FZ_CHECK(out[i] == e, "deferred ecs_create_many out[%zu] = %#llx, model %#llx", i,
                                  FZ_H(out[i]), FZ_H(e));
        }
        return;
    }
    if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_create_many"); return; }
    int t = m_tab_for(&G.m, mask);
    if (n == 0) { fz_expect(r, ECS_OK, "ecs_create_many(0)"); fz_check_tables(); return; }
    if (m_locked(&G.m, t)) { fz_expect(r, ECS_ERR_BUSY, "ecs_create_many into a locked table"); return; }
    fz_expect(r, ECS_OK, "ecs_create_many");
    for (size_t i = 0; i < n; i++) {
        uint32_t s = m_take_slot(&G.m);
        G.m.rec[s].state = FZ_LIVE;
        m_row_append(&G.m, t, s);
        G.m.alive++;
        for (int k = 0; k < G.nids; k++)
            if (mask >> k & 1 && fz_size(k)) memset(m_val(&G.m, s, k), 0, fz_size(k));
        if (use_out) FZ_CHECK(out[i] == m_h(&G.m, s), "ecs_create_many out[%zu] = %#llx, model %#llx", i,
                              FZ_H(out[i]), FZ_H(m_h(&G.m, s)));
    }
    fz_check_counts();
}

/* destroy / add / remove / set through the immediate API (kind 0..3) */
static void fz_struct_call(int kind, ecs_entity e, ecs_id id, unsigned char *value);
static void op_struct(int kind) {
    ecs_entity e = fz_pick_handle();
    ecs_id id = kind ? fz_u8() % 4 ? fz_pick_comp() : fz_pick_id() : 0;
    unsigned vb = kind == 3 ? fz_u8() : 1;
    unsigned char v[100];
    fz_fill(v, sizeof v, (uint64_t)vb * 77 + 5);
    fz_struct_call(kind, e, id, vb == 0 ? NULL : v);
}
/* One call of op_struct's (value: 100 bytes, or NULL). */
static void fz_struct_call(int kind, ecs_entity e, ecs_id id, unsigned char *value) {
    static const char *const names[4] = {"ecs_destroy", "ecs_add", "ecs_remove", "ecs_set"};
    unsigned char v[100] = {0};
    if (value) memcpy(v, value, sizeof v);
    int k = fz_kid(id);
    int want = m_target(e);
    if (!want && kind && !fz_addable(id)) want = ECS_ERR_ARG;
    if (!want && kind == 3 && !value && fz_size(k)) want = ECS_ERR_ARG;
    long inj0 = fz_injected();
    ecs_result r;
    switch (kind) {
    case 0: r = ecs_destroy(G.w, e); break;
    case 1: r = ecs_add(G.w, e, id); break;
    case 2: r = ecs_remove(G.w, e, id); break;
    default: r = ecs_set(G.w, e, id, value); break;
    }
    if (value) memset(value, 0xA5, sizeof v);   /* the value must have been copied */
    if (want) { fz_expect(r, want, names[kind]); return; }
    if (fz_deferring()) {
        if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, names[kind]); return; }
        fz_expect(r, ECS_OK, names[kind]);
        static const int ops[4] = {C_DESTROY, C_ADD, C_REMOVE, C_SET};
        int op = ops[kind];
        if (op == C_SET && !fz_size(k)) op = C_ADD;
        l_push(&G.defer, op, k, -1, e, v);
        return;
    }
    uint32_t s = (uint32_t)e;
    int pred = kind == 0 ? m_destroy_predict(&G.m, s)
             : kind == 2 ? m_remove_predict(&G.m, s, k) : m_add_predict(&G.m, s, k);
    if (r == ECS_ERR_NOMEM && pred != ECS_ERR_ARG) { fz_nomem(inj0, names[kind]); return; }
    fz_expect(r, pred, names[kind]);
    if (r) { fz_check_entity(s); return; }
    switch (kind) {
    case 0: m_destroy(&G.m, s); fz_check_dead(e); break;
    case 1: m_add(&G.m, s, k, NULL); break;
    case 2: m_remove(&G.m, s, k); break;
    default: m_add(&G.m, s, k, value ? v : NULL); break;
    }
    if (kind) fz_check_entity(s);
    fz_check_counts();
}

static void m_cmd_record_parent(fz_list *L, ecs_entity child, ecs_entity parent);
/* ecs_set_parent (immediate, or recorded in defer mode) */
static void fz_set_parent_call(ecs_entity child, ecs_entity parent);
static void op_parent(void) {
    ecs_entity child = fz_pick_handle();
    unsigned pb = fz_u8();
    ecs_entity parent = pb % 4 == 0 ? 0 : pb % 4 == 1 ? child : fz_pick_handle();
    fz_set_parent_call(child, parent);
}
static void fz_set_parent_call(ecs_entity child, ecs_entity parent) {
    int want = m_target(child);
    if (!want && parent) want = m_target(parent);
    if (!want && parent == child) want = ECS_ERR_ARG;
    long inj0 = fz_injected();
    ecs_result r = ecs_set_parent(G.w, child, parent);
    if (!want && fz_deferring()) {
        if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, "deferred ecs_set_parent"); return; }
        fz_expect(r, ECS_OK, "deferred ecs_set_parent");
        m_cmd_record_parent(&G.defer, child, parent);
        return;
    }
    if (!want && m_set_parent_bad(&G.m, (uint32_t)child, parent)) want = ECS_ERR_ARG;   /* a loop, a prefab's child */
    if (!want && r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_set_parent"); return; }
    fz_expect(r, want, "ecs_set_parent");
    if (!r) {
        m_set_parent(&G.m, (uint32_t)child, parent);
        fz_check_rels((uint32_t)child);
        if (parent) fz_check_rels((uint32_t)parent);
    }
}

/* has / get / get_mut (writing through it) / is_alive */
static void op_read(void) {
    ecs_entity e = fz_pick_handle();
    ecs_id id = fz_u8() % 4 ? fz_pick_comp() : fz_pick_id();
    unsigned how = fz_u8();
    int k = fz_kid(id), alive = m_alive(&G.m, e);
    FZ_CHECK(ecs_is_alive(G.w, e) == (alive != 0), "ecs_is_alive(%#llx) = %d, model %d", FZ_H(e),
             ecs_is_alive(G.w, e), alive);
    int has = alive && fz_is_comp(id) && m_has(&G.m, (uint32_t)e, k);
    FZ_CHECK(ecs_has(G.w, e, id) == (has != 0), "ecs_has(%#llx, %u) = %d, model %d", FZ_H(e), id,
             ecs_has(G.w, e, id), has);
    void *p = how & 1 ? ecs_get_mut(G.w, e, id) : (void *)(uintptr_t)ecs_get(G.w, e, id);
    if (has && fz_size(k)) {
        fz_check_value(p, (uint32_t)e, k, how & 1 ? "ecs_get_mut" : "ecs_get");
        if (how & 1 && how & 2) {
            fz_fill(p, fz_size(k), how * 13 + G.op);
            memcpy(m_val(&G.m, (uint32_t)e, k), p, fz_size(k));
        }
    } else {
        FZ_CHECK(p == NULL, "ecs_get(%#llx, %u) is not NULL", FZ_H(e), id);
        if (!alive || !fz_is_comp(id)) FZ_CHECK(ecs_last_error(G.w)[0], "ecs_get failed without an error line");
    }
}

static void op_resource(void) {
    ecs_id id = fz_pick_id();
    int k = fz_kid(id);
    unsigned how = fz_u8();
    void *p = ecs_resource_get(G.w, id);
    if (k < 0 || !G.ids[k].res) { FZ_CHECK(p == NULL, "ecs_resource_get of a non-resource %u", id); return; }
    FZ_CHECK(p && !memcmp(p, G.resval[k], fz_size(k)), "ecs_resource_get(%u) differs from the model", id);
    if (how & 1) {
        fz_fill(p, fz_size(k), how + 1000 * (uint64_t)G.op);
        memcpy(G.resval[k], p, fz_size(k));
    }
}

/* ---- events: the model's queues; registration, ecs_world_emit, observers - */
static void m_ev_push(fz_list *L, int k, const unsigned char *v) {   /* an event into a buffer */
    if (L->nev == L->evcap) {
        L->evcap = L->evcap ? L->evcap * 2 : 16;
        L->ev = (fz_ev *)realloc(L->ev, (size_t)L->evcap * sizeof *L->ev);
        if (!L->ev) { fprintf(stderr, "fuzz_api: out of memory\n"); abort(); }
    }
    fz_ev *e = &L->ev[L->nev++];
    e->k = k;
    if (fz_size(k)) memcpy(e->v, v, fz_size(k));
}
/* An event type if there is one (else any id). */
static ecs_id fz_pick_event(void) {
    unsigned x = fz_u8();
    if (!G.nev) return fz_pick_id();
    for (int k = 0, i = (int)(x % (unsigned)G.nev); k < G.nids; k++)
        if (G.ids[k].ev && i-- == 0) return G.ids[k].lib;
    return 0;
}
static int fz_emits(const fz_sys *S, int k) {   /* k (a model id) is in its emits */
    for (int i = 0; i < S->nem; i++) if (fz_kid(S->emits[i]) == k) return 1;
    return 0;
}
/* The payload of an event: bytes from seed, then h in each entity field. */
static void fz_ev_fill(unsigned char *v, int k, uint64_t seed, ecs_entity h) {
    fz_fill(v, fz_size(k), seed);
    for (int f = 0; f < G.ids[k].nfield; f++) memcpy(v + G.ids[k].field[f], &h, sizeof h);
}

/* The model of a desc's layout: 1 if its entity fields fit (each a whole
   ecs_entity inside the value) and its alignment is valid, with the one the
   library keeps in *out (the given one, or the natural one when 0; 0 for a
   tag). */
static int fz_layout(size_t size, size_t align, const size_t *fields, int nf, size_t *out) {
    for (int i = 0; i < nf; i++)
        if (fields[i] > size || size - fields[i] < sizeof(ecs_entity)) return 0;
    size_t a = align;
    if (size == 0) a = 0;
    else if (a == 0) for (a = 1; a < 16 && size % (a * 2) == 0; a *= 2) {}
    *out = a;
    return !size || !((a & (a - 1)) || a > 64 || size % a);
}
/* An event type: ecs_event, or ecs_event_init with entity fields (in bounds
   or not, a count out of range). Names are shared with components and
   resources. */
static void op_event(unsigned how) {
    unsigned nb = fz_u8() % 18, sb = fz_u8(), ab = fz_u8(), fb = fz_u8();
    const char *name = nb < 16 ? fz_names[nb] : nb == 16 ? "" : NULL;
    size_t size = sb == 255 ? (size_t)1 << 31 : fz_ev_sizes[sb % 8];
    size_t align = fz_aligns[ab % 7];
    ecs_event_desc d;
    memset(&d, 0, sizeof d);
    d.name = name; d.size = size; d.align = align;
    int nf = fb == 0xFF ? -1 : fb == 0xFE ? ECS_MAX_ENTITY_FIELDS + 1 : (int)(fb % 3);
    for (int i = 0; i < nf && i < 2; i++) {
        unsigned o = fb >> (2 + 2 * i) & 3;   /* 0, 4, 8, or the last 8 bytes */
        d.entity_fields[i] = o < 3 ? o * 4 : size >= 8 ? size - 8 : 0;
    }
    d.entity_field_count = nf;
    int use_short = !(how & 1) && nf == 0;
    /* the model's answer */
    int ok = name && *name && size <= INT32_MAX && nf >= 0 && nf <= ECS_MAX_ENTITY_FIELDS, want_new = 0;
    size_t a = 0;
    if (ok) ok = fz_layout(size, align, d.entity_fields, nf, &a);
    ecs_id want = 0;
    if (ok) {
        int found = -1;
        for (int k = 0; k < G.nids; k++) if (G.ids[k].name == (int)nb) found = k;
        if (found >= 0) {
            const fz_idinfo *in = &G.ids[found];
            int same = in->ev && in->size == size && in->nfield == nf;
            for (int i = 0; same && i < nf; i++) same = in->field[i] == d.entity_fields[i];
            if (same) want = in->lib;
        } else {
            if (G.nids == FZ_MAXI || G.nev == FZ_MAXEV) return;   /* beyond the model */
            want_new = 1;
            want = (ecs_id)G.nids + 1 + FZ_ID0;
        }
    }
    long inj0 = fz_injected();
    ecs_id id = use_short ? ecs_event(G.w, name, size, align) : ecs_event_init(G.w, &d);
    if (!id && want_new) { fz_nomem(inj0, "ecs_event_init"); return; }
    FZ_CHECK(id == want, "%s(\"%s\", %zu, %zu, %d entity fields) = %u, the model says %u", use_short ? "ecs_event" :
             "ecs_event_init", name ? name : "(null)", size, align, nf, id, want);
    if (!id) { FZ_CHECK(ecs_last_error(G.w)[0], "a refused event type without an error line"); return; }
    if (!want_new) return;
    fz_idinfo *in = &G.ids[G.nids];
    memset(in, 0, sizeof *in);
    in->lib = id; in->size = (uint32_t)size; in->align = (uint32_t)a; in->name = (int)nb; in->ev = 1;
    in->voff = 0;
    in->nfield = nf;
    for (int i = 0; i < nf; i++) in->field[i] = (uint32_t)d.entity_fields[i];
    G.nids++;
    if (G.nev++ == 0) FZ_STAT(ST_EV_INPUTS);
    FZ_CHECK(ecs_id_count(G.w) == (ecs_id)G.nids + FZ_ID0, "ecs_id_count = %u, model %d", ecs_id_count(G.w), G.nids);
    FZ_CHECK(ecs_lookup(G.w, name) == id, "ecs_lookup(\"%s\") = %u, want %u", name, ecs_lookup(G.w, name), id);
    FZ_CHECK(ecs_id_size(G.w, id) == size, "ecs_id_size of an event type");
    FZ_CHECK(ecs_id_name(G.w, id) && !strcmp(ecs_id_name(G.w, id), name), "ecs_id_name of an event type");
}

/* Snapshots through memory (ecs_snapshot_save / ecs_snapshot_load). */
typedef struct fz_mem { unsigned char *p; size_t n, cap, at; } fz_mem;
static ecs_result fz_mem_write(const void *bytes, size_t size, void *ctx) {
    fz_mem *m = (fz_mem *)ctx;
    if (size > m->cap - m->n) {
        size_t cap = (m->n + size) * 2;
        unsigned char *p = (unsigned char *)realloc(m->p, cap);
        if (!p) return ECS_ERR_NOMEM;
        m->p = p;
        m->cap = cap;
    }
    memcpy(m->p + m->n, bytes, size);
    m->n += size;
    return ECS_OK;
}
static size_t fz_mem_read(void *bytes, size_t size, void *ctx) {
    fz_mem *m = (fz_mem *)ctx;
    size_t k = size < m->n - m->at ? size : m->n - m->at;
    if (k) memcpy(bytes, m->p + m->at, k);
    m->at += k;
    return k;
}

/* snap saved to memory and loaded back (its bytes as ecs_snapshot_size
   says): the loaded one, or snap when an allocation failed. */
static ecs_snapshot *fz_through_memory(ecs_snapshot *snap) {
    fz_mem m = {NULL, 0, 0, 0};
    long inj0 = fz_injected();
    ecs_result r = ecs_snapshot_save(snap, fz_mem_write, &m);
    if (r == ECS_ERR_NOMEM) fz_nomem(inj0, "ecs_snapshot_save");
    else fz_expect(r, ECS_OK, "ecs_snapshot_save");
    if (!r) {
        size_t z = ecs_snapshot_size(snap);
        FZ_CHECK(z == m.n || (!z && fz_injected() > inj0), "ecs_snapshot_size %zu, ecs_snapshot_save wrote %zu",
                 z, m.n);
        inj0 = fz_injected();
        ecs_snapshot *loaded = ecs_snapshot_load(G.w, fz_mem_read, &m);
        if (!loaded) fz_nomem(inj0, "ecs_snapshot_load");   /* (it may stop reading anywhere) */
        else FZ_CHECK(m.at == m.n, "ecs_snapshot_load read %zu of %zu bytes", m.at, m.n);
        if (loaded) { ecs_snapshot_free(snap); snap = loaded; }
    }
    free(m.p);
    return snap;
}

/* A snapshot taken, one more event queued, the snapshot restored: the
   queue (and the rest: unread events, readers' places) as it was, hash
   included. Busy in defer mode or with a query loop open. Every other
   time the snapshot goes through memory first. */
static void fz_snapshot_round_trip(ecs_id id, const unsigned char *v) {
    int busy = G.defer_depth > 0;
    for (int t = 0; t < G.m.ntab; t++) busy |= G.m.lock[t] > 0;   /* a loop holds a table */
    if (l_left(&G.defer)) return;      /* leftover commands (a failed apply): not modelled */
    for (int s = 0; s < G.nsys; s++)
        for (int b = 0; b < G.sys[s].nbuf; b++) if (l_left(&G.sys[s].buf[b])) return;
    fz_pause();
    uint64_t h0 = busy ? 0 : ecs_world_hash(G.w);
    fz_resume();
    long inj0 = fz_injected();
    ecs_snapshot *snap = ecs_snapshot_take(G.w);
    if (busy) {
        FZ_CHECK(!snap, "ecs_snapshot_take in defer mode or with a query loop open");
        fz_expect(ECS_ERR_BUSY, ECS_ERR_BUSY, "ecs_snapshot_take");
        return;
    }
    if (!snap) { fz_nomem(inj0, "ecs_snapshot_take"); return; }
    if (v[0] & 1) snap = fz_through_memory(snap);
    int nw = G.waiting.nev;
    if (fz_is_ev(id)) {
        inj0 = fz_injected();
        ecs_result r = ecs_world_emit(G.w, id, v);
        if (r == ECS_ERR_NOMEM) fz_nomem(inj0, "ecs_world_emit");
        else { fz_expect(r, ECS_OK, "ecs_world_emit"); m_ev_push(&G.waiting, fz_kid(id), v); }
    }
    inj0 = fz_injected();
    ecs_result r = ecs_snapshot_restore(G.w, snap);
    ecs_snapshot_free(snap);
    if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_snapshot_restore"); return; }
    fz_expect(r, ECS_OK, "ecs_snapshot_restore");
    G.waiting.nev = nw;
    for (int k = 0; k < G.nids; k++) {   /* a type no system reads restarts its (internal) numbering */
        int read = 0;
        for (int s = 0; s < G.nsys; s++) read |= (int)(G.sys[s].rdmask >> k & 1);
        if (G.ids[k].ev && !read) G.evl[k].base = G.evl[k].end = 0;
    }
    fz_check_world();
    fz_pause();
    uint64_t h1 = ecs_world_hash(G.w);
    fz_resume();
    FZ_CHECK(h0 == h1, "ecs_world_hash %#llx after a snapshot round trip, %#llx before", (unsigned long long)h1,
             (unsigned long long)h0);
}

/* ecs_world_emit between frames (queued for the next ecs_progress, and
   part of ecs_world_hash); or the emit calls with an iterator that is no
   system's (ECS_ERR_ARG, NULL); or a snapshot round trip. */
static void op_world_emit(void) {
    unsigned x = fz_u8(), pb = fz_u8();
    ecs_id id = x % 8 ? fz_pick_event() : fz_pick_id();
    int k = fz_kid(id);
    uint32_t size = k >= 0 ? fz_size(k) : 0;
    unsigned char v[100];
    fz_fill(v, sizeof v, (uint64_t)pb * 131 + 7);
    if (x >= 0xE0 && x < 0xF0) { fz_snapshot_round_trip(id, v); return; }
    if (x >= 0xF0) {   /* a query loop's iterator: not inside a system */
        ecs_iter it = ecs_query_iter(G.w, G.all);
        FZ_CHECK(ecs_emit(&it, id, v) == ECS_ERR_ARG, "ecs_emit outside a system");
        FZ_CHECK(ecs_emit_new(&it, id, size) == NULL, "ecs_emit_new outside a system");
        FZ_CHECK(ecs_emitter_get(&it, id, size) == NULL, "ecs_emitter_get outside a system");
        int n = 7;
        FZ_CHECK(ecs_events(&it, id, &n) == NULL && n == 0, "ecs_events outside a system");
        FZ_CHECK(ecs_last_error(G.w)[0], "no error line for an emit outside a system");
        ecs_iter_fini(&it);
        return;
    }
    const void *payload = pb == 0 ? NULL : v;
    int want = ECS_OK;
    if (!fz_is_ev(id)) want = ECS_ERR_ARG;
    else if (!payload && size) want = ECS_ERR_ARG;
    fz_pause();
    uint64_t h0 = ecs_world_hash(G.w);
    fz_resume();
    long inj0 = fz_injected();
    ecs_result r = ecs_world_emit(G.w, id, payload);
    memset(v, 0xA5, sizeof v);   /* the payload must have been copied */
    if (want) { fz_expect(r, want, "ecs_world_emit"); return; }
    if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_world_emit"); return; }
    fz_expect(r, ECS_OK, "ecs_world_emit");
    fz_fill(v, sizeof v, (uint64_t)pb * 131 + 7);
    m_ev_push(&G.waiting, k, v);
    FZ_STAT(ST_EV_WORLD);
    fz_pause();
    uint64_t h1 = ecs_world_hash(G.w);
    fz_resume();
    FZ_CHECK(h0 && h1 && h0 != h1, "ecs_world_hash is %#llx before and %#llx after an event was queued",
             (unsigned long long)h0, (unsigned long long)h1);
}

/* The library's side of an observer: the call logged (thread 0, at a sync
   point), and an echo emitted with ecs_world_emit (for the next delivery),
   made from what it saw. */
static void fz_obs_fn(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    fz_obs *O = (fz_obs *)ctx;
    if (G.olog_n >= FZ_OLOG) { G.log_overflow = 1; return; }
    fz_ologent *L = &G.olog[G.olog_n++];
    int k = fz_kid(event);
    L->o = (int)(O - G.obs);
    L->ev = event;
    L->count = count;
    L->hash = k >= 0 && count > 0 && fz_size(k) ? fz_fnv(FZ_FNV0, payloads, (size_t)count * fz_size(k)) : FZ_FNV0;
    L->echo = 0;
    if (O->echo >= 0) {
        unsigned char v[100];
        fz_fill(v, sizeof v, fz_mix(O->seed, L->hash ^ (uint64_t)count));
        long i0 = fz_injected();
        L->echo_r = (uint64_t)ecs_world_emit(w, G.ids[O->echo].lib, v);
        L->echo_inj = fz_injected() != i0;
        L->echo = 1;
    }
}
/* ecs_observe (events of a type: a bad one, reads/writes lists, skipped
   when resimulating, echoing), ecs_unobserve, resimulating on and off. */
static void op_observe(void) {
    unsigned x = fz_u8(), y = fz_u8();
    switch (x % 4) {
    case 0: case 1: {
        if (G.nobs == FZ_MAXOBS) return;
        fz_obs *O = &G.obs[G.nobs];
        memset(O, 0, sizeof *O);
        ecs_observer_desc d;
        memset(&d, 0, sizeof d);
        d.event = y % 8 ? fz_pick_event() : fz_pick_id();
        d.fn = x >= 0xF8 ? NULL : fz_obs_fn;
        d.ctx = O;
        d.skip_when_resimulating = (x >> 2 & 1) != 0;
        unsigned z = fz_u8();
        if (z % 4 == 1) d.reads[0] = fz_pick_id();
        if (z % 4 == 2) d.writes[0] = fz_pick_id();
        ecs_id echo = x >> 3 & 1 ? fz_pick_event() : 0;
        O->echo = fz_is_ev(echo) ? fz_kid(echo) : -1;
        O->seed = fz_mix(z, 0x0B5 + (uint64_t)G.nobs);
        int ok = d.fn && fz_is_ev(d.event);
        ecs_id lists[2] = {d.reads[0], d.writes[0]};
        for (int l = 0; l < 2; l++)
            if (lists[l] && (fz_kid(lists[l]) < 0 || fz_is_ev(lists[l]))) ok = 0;
        long inj0 = fz_injected();
        ecs_observer o = ecs_observe(G.w, &d);
        if (!ok) {
            FZ_CHECK(o == 0, "ecs_observe accepted a bad desc (%u)", o);
            fz_expect(ECS_ERR_ARG, ECS_ERR_ARG, "ecs_observe");
            return;
        }
        if (!o) { fz_nomem(inj0, "ecs_observe"); return; }
        FZ_CHECK(o == (ecs_observer)G.nobs + 1, "ecs_observe = %u, model %d", o, G.nobs + 1);
        O->lib = o;
        O->k = fz_kid(d.event);
        O->skip_resim = d.skip_when_resimulating;
        G.nobs++;
        break;
    }
    case 2: {
        unsigned i = y % (unsigned)(G.nobs + 2);
        ecs_observer o = i < (unsigned)G.nobs ? G.obs[i].lib : i == (unsigned)G.nobs ? (ecs_observer)G.nobs + 1 : 0;
        int want = i < (unsigned)G.nobs && !G.obs[i].removed ? ECS_OK : ECS_ERR_ARG;
        fz_expect(ecs_unobserve(G.w, o), want, "ecs_unobserve");
        if (want == ECS_OK) G.obs[i].removed = 1;
        break;
    }
    default:
        ecs_world_set_resimulating(G.w, y & 1);
        G.resim = (int)(y & 1);
        FZ_CHECK(ecs_world_resimulating(G.w) == (G.resim != 0), "ecs_world_resimulating");
        break;
    }
}

/* ---- queries and iteration ----------------------------------------------- */
/* Sorted and grouped loops: compare and group_by are pure functions of what
   they are given (their ctx packs the parameters, so a query may move in
   G.qs); the model calls the same functions on its own values and masks. */
static int fz_cmp_of(unsigned mode, uint32_t size, uint64_t seed, ecs_entity a, const unsigned char *va,
                     ecs_entity b, const unsigned char *vb) {
    uint64_t x = 0, y = 0;
    int r;
    switch (mode) {
    case 0: if (size) { x = va[0]; y = vb[0]; } break;   /* the first byte: many ties */
    case 1: r = size ? memcmp(va, vb, size) : 0; return (r > 0) - (r < 0);
    case 2: return 0;                                   /* all ties: handle order */
    case 3: r = size ? memcmp(vb, va, size) : 0; return (r > 0) - (r < 0);   /* descending */
    case 4:                                             /* a hash of the first byte (or the handle) */
        x = fz_mix(seed, size ? va[0] : a) & 3;
        y = fz_mix(seed, size ? vb[0] : b) & 3;
        break;
    case 5: x = (uint32_t)b; y = (uint32_t)a; break;    /* slots, descending */
    case 6: if (size) { x = va[size - 1] ^ (seed & 0xFF); y = vb[size - 1] ^ (seed & 0xFF); } break;
    default: x = a >> 32; y = b >> 32; break;           /* generations */
    }
    return (x > y) - (x < y);
}
static uint64_t fz_group_of(unsigned mode, uint64_t seed, uint32_t mask) {
    static const uint64_t big[4] = {0, 1, 1ull << 63, UINT64_MAX};
    uint64_t n = 0;
    switch (mode) {
    case 0: for (uint32_t m = mask; m; m &= m - 1) n++; return n % 3;
    case 1: return big[fz_mix(seed, mask) & 3];
    case 2: return mask >> (seed % 16) & 1 ? 7 : 3;
    case 3: return 5;
    case 4: return mask & FZ_PFB ? 1 : 2;
    default: return fz_mix(seed, mask);
    }
}
static int fz_cmp_cb(ecs_entity a, const void *va, ecs_entity b, const void *vb, void *ctx) {
    uintptr_t c = (uintptr_t)ctx;
    uint32_t size = (uint32_t)(c >> 3 & 127);
    if ((va == NULL) != (size == 0) || (vb == NULL) != (size == 0))
        fz_fail("compare got the values %p and %p of a key of %u bytes", va, vb, size);
    return fz_cmp_of((unsigned)(c & 7), size, (uint64_t)(c >> 10), a, (const unsigned char *)va, b,
                     (const unsigned char *)vb);
}
static uint64_t fz_group_cb(const ecs_world *w, const ecs_id *ids, int n, void *ctx) {
    uintptr_t c = (uintptr_t)ctx;
    uint32_t mask = 0;
    FZ_CHECK(w == G.w && n >= 0 && (n == 0 || ids), "group_by called with world %p, %d ids at %p", (const void *)w, n,
             (const void *)ids);
    for (int i = 0; i < n; i++) {
        int k = fz_kid(ids[i]);
        FZ_CHECK(k >= 0 && !G.ids[k].res && !G.ids[k].ev && (i == 0 || ids[i] > ids[i - 1]),
                 "group_by got id %u at %d of %d (not a component, or not ascending)", ids[i], i, n);
        mask |= 1u << k;
    }
    return fz_group_of((unsigned)(c & 7), (uint64_t)(c >> 3), mask);
}
static uint64_t q_group(const fz_query *q, uint32_t mask) {   /* a table's group (0 without group_by) */
    return q->grp ? fz_group_of(q->gmode, q->gseed, mask) : 0;
}
static int q_match(const fz_query *q, uint32_t mask) {
    if ((mask & FZ_PFB) && !q->sees_pf) return 0;   /* prefabs: only for terms that name the tag */
    for (int i = 0; i < q->nt; i++) {
        int has = (int)(mask >> q->k[i] & 1);
        if (q->oper[i] == ECS_AND && !has) return 0;
        if (q->oper[i] == ECS_NOT && has) return 0;
    }
    return 1;
}
/* Whether model id k is the order key of a sorted query or system: writes the library does not see as
   changes (through a READ field, or a batch still out) are kept off it (see op_iter_write). */
static int fz_sorted_key(int k) {
    for (int i = 0; i < G.nq; i++) if (G.qs[i].sorted && G.qs[i].ok == k) return 1;
    for (int i = 0; i < G.nsys; i++) if (G.sys[i].oq.sorted && G.sys[i].oq.ok == k) return 1;
    return 0;
}

/* A batch: rows [row, row + n) of model table tab. */
typedef struct fz_batch { int tab; uint32_t row, n; } fz_batch;
typedef struct fz_srow { uint64_t g; ecs_entity e; uint32_t s, row; int tab; } fz_srow;
static const fz_query *g_sq;
static int fz_srow_cmp(const void *pa, const void *pb) {   /* (group, compare, handle) */
    const fz_srow *a = (const fz_srow *)pa, *b = (const fz_srow *)pb;
    if (a->g != b->g) return a->g < b->g ? -1 : 1;
    int k = g_sq->ok;
    uint32_t size = fz_size(k);
    int c = fz_cmp_of(g_sq->cmode, size, g_sq->cseed, a->e, size ? m_val(&G.m, a->s, k) : NULL, b->e,
                      size ? m_val(&G.m, b->s, k) : NULL);
    if (c) return c;
    return a->e < b->e ? -1 : a->e > b->e;
}
/* The batches a whole loop of q hands out now: the matched tables with rows in (group, table)
   order, or, sorted, every matched row in (group, compare, handle) order split into runs of
   consecutive rows of one table. */
static int m_query_batches(const fz_query *q, fz_batch *out, int max) {
    static fz_srow rows[FZ_MAXSLOT];
    int n = 0;
    if (!q->sorted) {
        for (int t = 0; t < G.m.ntab; t++) {
            if (!G.m.tab[t].n || !q_match(q, G.m.tab[t].mask)) continue;
            if (n == max) fz_bail("too many batches");
            uint64_t g = q_group(q, G.m.tab[t].mask);
            int at = n++;
            while (at > 0 && q_group(q, G.m.tab[out[at - 1].tab].mask) > g) { out[at] = out[at - 1]; at--; }
            out[at].tab = t; out[at].row = 0; out[at].n = G.m.tab[t].n;
        }
        return n;
    }
    int nr = 0;
    for (int t = 0; t < G.m.ntab; t++) {
        if (!G.m.tab[t].n || !q_match(q, G.m.tab[t].mask)) continue;
        uint64_t g = q_group(q, G.m.tab[t].mask);
        for (uint32_t r = 0; r < G.m.tab[t].n; r++) {
            fz_srow *x = &rows[nr++];
            x->g = g; x->s = G.m.tab[t].rows[r]; x->e = m_h(&G.m, x->s); x->tab = t; x->row = r;
        }
    }
    g_sq = q;
    if (nr > 1) qsort(rows, (size_t)nr, sizeof *rows, fz_srow_cmp);
    for (int i = 0; i < nr; i++) {
        if (n && out[n - 1].tab == rows[i].tab && out[n - 1].row + out[n - 1].n == rows[i].row) {
            out[n - 1].n++;
            continue;
        }
        if (n == max) fz_bail("too many batches");
        out[n].tab = rows[i].tab; out[n].row = rows[i].row; out[n].n = 1;
        n++;
    }
    return n;
}

/* The model's verdict on a desc's terms (and order_by): q filled; ECS_OK or ECS_ERR_ARG. */
static int fz_query_desc(const ecs_query_desc *d, fz_query *q) {
    for (int i = 0; i < ECS_MAX_TERMS && d->terms[i].id; i++) {
        if (!fz_is_comp(d->terms[i].id) || (unsigned)d->terms[i].oper > 2 || (unsigned)d->terms[i].access > 3)
            return ECS_ERR_ARG;
        q->k[i] = fz_kid(d->terms[i].id); q->oper[i] = (int)d->terms[i].oper; q->acc[i] = (int)d->terms[i].access;
        q->sees_pf |= q->k[i] == FZ_PF;
        q->nt = i + 1;
    }
    if (!d->order_by && !d->compare) return ECS_OK;
    if (!d->order_by || !d->compare) return ECS_ERR_ARG;   /* a pair */
    for (int i = 0; i < q->nt; i++)
        if (d->terms[i].id == d->order_by && q->oper[i] == ECS_AND) { q->sorted = 1; q->ok = q->k[i]; return ECS_OK; }
    return ECS_ERR_ARG;   /* not an ECS_AND term */
}
static void fz_query_made(fz_query *q, ecs_query *lq, int want, long inj0) {
    q->q = lq;
    if (want) {
        FZ_CHECK(!lq, "ecs_query_new accepted a bad desc");
        fz_expect(ECS_ERR_ARG, ECS_ERR_ARG, "ecs_query_new");
        return;
    }
    if (!lq) { fz_nomem(inj0, "ecs_query_new"); return; }
    q->open = 0;
    G.nq++;
}

static void op_query_new(void) {
    if (G.nq == FZ_MAXQ) return;
    ecs_query_desc d;
    memset(&d, 0, sizeof d);
    unsigned nt = fz_u8() % 5;
    fz_query *q = &G.qs[G.nq];
    memset(q, 0, sizeof *q);
    for (unsigned i = 0; i < nt; i++) {
        d.terms[i].id = fz_u8() % 8 ? fz_pick_comp() : fz_pick_id();
        unsigned ob = fz_u8();
        unsigned o = ob % 8;
        d.terms[i].oper = o < 4 ? ECS_AND : o < 6 ? ECS_NOT : o == 6 || !(ob & 0x80) ? ECS_OPTIONAL : (ecs_oper)4;
        d.terms[i].access = (ecs_access)(ob >= 0xF8 ? 4 : (ob >> 3) % 4);
    }
    int want = fz_query_desc(&d, q);
    long inj0 = fz_injected();
    fz_query_made(q, ecs_query_new(G.w, &d), want, inj0);
}
/* A query (v2): terms that may name the prefab tag, order_by + compare (or a broken pair, an
   id that is no ECS_AND term), group_by. */
static void op_query_new2(void) {
    if (G.nq == FZ_MAXQ) return;
    ecs_query_desc d;
    memset(&d, 0, sizeof d);
    unsigned nt = fz_u8() % 5;
    fz_query *q = &G.qs[G.nq];
    memset(q, 0, sizeof *q);
    for (unsigned i = 0; i < nt; i++) {
        unsigned tb = fz_u8();
        d.terms[i].id = tb % 8 == 0 ? fz_pick_id() : tb % 8 < 3 ? FZ_ID0 : fz_pick_comp();
        unsigned ob = fz_u8();
        unsigned o = ob % 8;
        d.terms[i].oper = o < 4 ? ECS_AND : o < 6 ? ECS_NOT : o == 6 || !(ob & 0x80) ? ECS_OPTIONAL : (ecs_oper)4;
        d.terms[i].access = (ecs_access)(ob >= 0xF8 ? 4 : (ob >> 3) % 4);
    }
    unsigned ob = fz_u8(), cb = fz_u8(), gb = fz_u8();
    switch (ob % 6) {
    case 0: case 1: break;
    case 2: case 3: d.order_by = d.terms[nt ? (ob >> 3) % nt : 0].id; d.compare = fz_cmp_cb; break;
    case 4: if (ob & 8) d.order_by = d.terms[0].id ? d.terms[0].id : fz_pick_comp(); else d.compare = fz_cmp_cb; break;
    default: d.order_by = ob & 8 ? FZ_ID0 : fz_pick_comp(); d.compare = fz_cmp_cb; break;
    }
    if (gb % 3) { d.group_by = fz_group_cb; q->grp = 1; q->gmode = gb >> 2 & 7; q->gseed = gb >> 5; }
    q->cmode = cb & 7;
    q->cseed = cb >> 3;
    int want = fz_query_desc(&d, q);
    if (!want && q->sorted)
        d.compare_ctx = (void *)(uintptr_t)(q->cmode | fz_size(q->ok) << 3 | (uintptr_t)q->cseed << 10);
    d.group_ctx = (void *)(uintptr_t)(q->gmode | (uintptr_t)q->gseed << 3);
    long inj0 = fz_injected();
    fz_query_made(q, ecs_query_new(G.w, &d), want, inj0);
    if (!want && q->q && G.trace)
        fprintf(stderr, "  query %d: %d terms, sorted %d (key %d, mode %u), grouped %d (mode %u)\n", G.nq - 1, q->nt,
                q->sorted, q->ok, q->cmode, q->grp, q->gmode);
}

static int fz_query_busy(int qi) {
    for (int i = 0; i < FZ_MAXIT; i++) if (G.its[i].active && G.its[i].q == qi) return 1;
    return 0;
}
static void op_query_free(void) {
    if (!G.nq) return;
    int qi = (int)fz_below((unsigned)G.nq);
    if (fz_query_busy(qi)) return;
    ecs_query_free(G.qs[qi].q);
    G.qs[qi] = G.qs[--G.nq];
    for (int i = 0; i < FZ_MAXIT; i++) if (G.its[i].active && G.its[i].q == G.nq) G.its[i].q = qi;
}

static void op_query_count(void) {
    if (!G.nq) return;
    int qi = (int)fz_below((unsigned)G.nq);
    size_t n = 0;
    for (int t = 0; t < G.m.ntab; t++) if (q_match(&G.qs[qi], G.m.tab[t].mask)) n += G.m.tab[t].n;
    size_t got = ecs_query_count(G.w, G.qs[qi].q);
    FZ_CHECK(got == n, "ecs_query_count = %zu, model %zu", got, n);
}

/* Open loops: a sorted one's runs and the tables it locks (every table it matched at its start). */
static fz_batch g_runs[FZ_MAXIT][FZ_MAXSLOT];
static uint8_t g_itlock[FZ_MAXIT][FZ_MAXTAB];

/* The model's side of a loop's end (or ecs_iter_fini): its locks go. */
static void m_iter_end(fz_iter *I) {
    if (I->cur >= 0 && !I->sorted) G.m.lock[I->cur]--;
    if (I->sorted) {
        int i = (int)(I - G.its);
        for (int t = 0; t < G.m.ntab; t++)
            if (g_itlock[i][t]) { G.m.lock[t]--; g_itlock[i][t] = 0; }
        G.qs[I->q].open = 0;
        I->sorted = 0;
    }
    I->cur = -1;
    I->active = 0;
}
/* The model's next batch of an open loop (locks as the library does): a sorted loop's next run
   (of its group, if restricted); else the first matched table with rows after the last batch's
   in (group, table) order (of its group, if restricted). */
static int m_iter_next(fz_iter *I) {
    const fz_query *q = &G.qs[I->q];
    if (I->cur >= 0 && !I->sorted) G.m.lock[I->cur]--;
    I->cur = -1;
    I->nexts++;
    if (I->refused) { m_iter_end(I); return -1; }
    if (I->sorted) {
        while (I->run < I->nruns) {
            const fz_batch *b = &g_runs[I - G.its][I->run++];
            if (I->restricted && q_group(q, G.m.tab[b->tab].mask) != I->only) continue;
            I->cur = I->lastt = b->tab; I->brow = b->row; I->bn = b->n;
            I->batches++;
            return I->cur;
        }
        m_iter_end(I);
        return -1;
    }
    int best = -1;
    uint64_t bg = 0, lg = I->lastt >= 0 ? q_group(q, G.m.tab[I->lastt].mask) : 0;
    for (int t = 0; t < G.m.ntab; t++) {
        if (!G.m.tab[t].n || !q_match(q, G.m.tab[t].mask)) continue;
        uint64_t g = q_group(q, G.m.tab[t].mask);
        if (I->restricted && g != I->only) continue;
        if (I->lastt >= 0 && (g < lg || (g == lg && t <= I->lastt))) continue;
        if (best < 0 || g < bg) { best = t; bg = g; }
    }
    if (best < 0) { m_iter_end(I); return -1; }
    I->cur = I->lastt = best; I->brow = 0; I->bn = G.m.tab[best].n;
    I->batches++;
    G.m.lock[best]++;
    return best;
}
/* Compares the batch the library gave with rows [row, row + n) of model table t. */
static void fz_check_batch(const ecs_iter *it, const fz_query *q, int t, uint32_t row, uint32_t n) {
    const fz_tab *tb = &G.m.tab[t];
    FZ_CHECK((uint32_t)it->count == n, "batch of table %d (mask %#x, rows %u..) has %d rows, model %u", t, tb->mask,
             row, it->count, n);
    for (uint32_t i = 0; i < n; i++)
        FZ_CHECK(it->entities[i] == m_h(&G.m, tb->rows[row + i]), "batch row %u = %#llx, model %#llx (table %d, "
                 "row %u)", i, FZ_H(it->entities[i]), FZ_H(m_h(&G.m, tb->rows[row + i])), t, row + i);
    for (int i = 0; i < q->nt; i++) {
        const unsigned char *p = (const unsigned char *)ecs_field(it, i);
        int k = q->k[i], has = (int)(tb->mask >> k & 1);
        int want = q->oper[i] != ECS_NOT && has && fz_size(k);
        if (!want) { FZ_CHECK(p == NULL, "field %d (id %d, oper %d) is not NULL", i, k, q->oper[i]); continue; }
        FZ_CHECK(p != NULL, "field %d (id %d) is NULL", i, k);
        for (uint32_t r = 0; r < n; r++) fz_check_value(p + (size_t)r * fz_size(k), tb->rows[row + r], k, "a field");
    }
    if (q->nt < ECS_MAX_TERMS) FZ_CHECK(ecs_field(it, q->nt) == NULL, "the field past the last term is not NULL");
    FZ_CHECK(ecs_field(it, -1) == NULL && ecs_field(it, ECS_MAX_TERMS) == NULL, "ecs_field out of range");
}
/* An open loop's batch out: its group (checked between operations too: tables made since
   must not change it). */
static void fz_check_iter_group(const fz_iter *I, const char *when) {
    const fz_query *q = &G.qs[I->q];
    uint64_t want = I->cur >= 0 ? q_group(q, G.m.tab[I->cur].mask) : 0, got = ecs_iter_group(&I->it);
    FZ_CHECK(got == want, "ecs_iter_group = %#llx %s, the model %#llx (table %d, mask %#x)", (unsigned long long)got,
             when, (unsigned long long)want, I->cur, I->cur >= 0 ? G.m.tab[I->cur].mask : 0);
}
static void fz_check_iters(void) {
    for (int i = 0; i < FZ_MAXIT; i++)
        if (G.its[i].active && G.its[i].cur >= 0) fz_check_iter_group(&G.its[i], "between operations");
}
static void fz_iter_step(fz_iter *I) {
    bool got = ecs_query_next(&I->it);
    int t = m_iter_next(I);
    if (got) FZ_STAT(ST_ITER_BATCHES);
    FZ_CHECK(got == (t >= 0), "ecs_query_next = %d, the model %s", got, t >= 0 ? "has a batch" : "is done");
    if (!got) {
        FZ_CHECK(I->it.count == 0 && ecs_iter_group(&I->it) == 0, "a finished loop has %d rows, group %llu",
                 I->it.count, (unsigned long long)ecs_iter_group(&I->it));
        return;
    }
    const fz_query *q = &G.qs[I->q];
    fz_check_batch(&I->it, q, t, I->brow, I->bn);
    FZ_CHECK(I->it.batch == I->batches - 1, "it.batch = %d, the model %d", I->it.batch, I->batches - 1);
    fz_check_iter_group(I, "after ecs_query_next");
    if (I->sorted) FZ_STAT(ST_SORTED_BATCHES);
    if (q->grp) FZ_STAT(ST_GROUPED_BATCHES);
}
static fz_iter *fz_iter_begin(int qi) {
    for (int i = 0; i < FZ_MAXIT; i++) {
        fz_iter *I = &G.its[i];
        if (I->active) continue;
        fz_query *q = &G.qs[qi];
        memset(I, 0, sizeof *I);
        I->active = 1; I->q = qi; I->cur = I->lastt = -1;
        long inj0 = fz_injected();
        I->it = ecs_query_iter(G.w, q->q);
        FZ_CHECK(I->it.world == G.w && I->it.system == 0, "ecs_query_iter: world or system");
        FZ_CHECK((I->it.commands != NULL) == (G.defer_depth > 0), "it.commands is %p in defer depth %d",
                 (void *)I->it.commands, G.defer_depth);
        if (!q->sorted) return I;
        if (q->open || fz_injected() > inj0) {   /* refused: the loop yields nothing */
            I->refused = 1;
            FZ_CHECK(!I->it.priv.query && ecs_last_error(G.w)[0], "a loop of a sorted query %s was not refused",
                     q->open ? "beside an open one" : "that ran out of memory");
            if (q->open) { FZ_STAT(ST_SORT_BUSY); FZ_STAT(ST_BUSY); }
            else FZ_STAT(ST_NOMEM);
            return I;
        }
        FZ_CHECK(I->it.priv.query != NULL, "a loop of a sorted query was refused: %s", ecs_last_error(G.w));
        I->sorted = 1;
        I->nruns = m_query_batches(q, g_runs[i], FZ_MAXSLOT);
        memset(g_itlock[i], 0, sizeof g_itlock[i]);
        for (int t = 0; t < G.m.ntab; t++) {   /* every matched table, empty ones too */
            g_itlock[i][t] = (uint8_t)q_match(q, G.m.tab[t].mask);
            G.m.lock[t] += g_itlock[i][t];
        }
        q->open = 1;
        return I;
    }
    return NULL;
}
static void fz_iter_fini(fz_iter *I) {
    ecs_iter_fini(&I->it);
    m_iter_end(I);
}

static void op_iter_begin(void) {
    if (!G.nq) return;
    fz_iter *I = fz_iter_begin((int)fz_below((unsigned)G.nq));
    if (I) fz_iter_step(I);
}
static void op_iter_next(void) {
    fz_iter *I = &G.its[fz_below(FZ_MAXIT)];
    if (I->active) fz_iter_step(I);
}
static void op_iter_fini(void) {
    fz_iter *I = &G.its[fz_below(FZ_MAXIT)];
    if (I->active) fz_iter_fini(I);
}
/* Writes row r of term t of an open loop's batch, READ fields too (not the key of a sorted
   query: the library's order follows change stamps, and a batch's writes are stamped when it
   ends, a READ field's never). */
static void op_iter_write(void) {
    fz_iter *I = &G.its[fz_below(FZ_MAXIT)];
    unsigned t = fz_u8() % 4, r = fz_u8(), seed = fz_u8();
    if (!I->active || I->cur < 0) return;
    const fz_query *q = &G.qs[I->q];
    if ((int)t >= q->nt) {
        void *p = ecs_field_sized(&I->it, (int)t, 4);
        FZ_CHECK(p == NULL, "ecs_field_sized past the terms");
        return;
    }
    int k = q->k[t];
    unsigned char *p = (unsigned char *)ecs_field(&I->it, (int)t);
    if (!p || !fz_size(k)) return;
    if (seed == 0) {   /* the size check */
        FZ_CHECK(ecs_field_sized(&I->it, (int)t, fz_size(k) + 1) == NULL, "ECS_FIELD with a wrong size");
        FZ_CHECK(ecs_field_sized(&I->it, (int)t, fz_size(k)) == p, "ECS_FIELD with the right size");
        return;
    }
    if (fz_sorted_key(k)) return;
    r %= I->bn;
    fz_fill(p + (size_t)r * fz_size(k), fz_size(k), seed * 7919u + (uint64_t)G.op);
    memcpy(m_val(&G.m, G.m.tab[I->cur].rows[I->brow + r], k), p + (size_t)r * fz_size(k), fz_size(k));
}
/* A whole loop, writing WRITE fields on the way. */
static void op_iter_full(void) {
    if (!G.nq) return;
    int qi = (int)fz_below((unsigned)G.nq);
    unsigned write = fz_u8() & 1;
    fz_iter *I = fz_iter_begin(qi);
    if (!I) return;
    const fz_query *q = &G.qs[qi];
    for (;;) {
        fz_iter_step(I);
        if (!I->active) break;
        if (!write) continue;
        for (int i = 0; i < q->nt; i++) {
            if (!(q->acc[i] & ECS_WRITE) || q->oper[i] == ECS_NOT) continue;
            unsigned char *p = (unsigned char *)ecs_field(&I->it, i);
            int k = q->k[i];
            if (!p || !fz_size(k)) continue;
            for (int r = 0; r < I->it.count; r++) {
                unsigned char *cell = p + (size_t)r * fz_size(k);
                for (uint32_t b = 0; b < fz_size(k); b++) cell[b] = (unsigned char)(cell[b] * 3 + 1 + b);
                memcpy(m_val(&G.m, G.m.tab[I->cur].rows[I->brow + (uint32_t)r], k), cell, fz_size(k));
            }
        }
    }
}
/* A loop restricted to one group with ecs_iter_set_group (a group some matched table has, or
   another value), or refused: after the first ecs_query_next, for a query without group_by, for
   a loop refused; run to its end or left open. */
static void op_iter_group(void) {
    if (!G.nq) return;
    int qi = (int)fz_below((unsigned)G.nq);
    unsigned x = fz_u8(), gb = fz_u8();
    const fz_query *q = &G.qs[qi];
    uint64_t g = (uint64_t)gb * 0x0101010101010101ull;
    if (gb % 4 != 3) {   /* the group of a matched table */
        int n = 0;
        for (int t = 0; t < G.m.ntab; t++) n += q_match(q, G.m.tab[t].mask);
        for (int t = 0, i = n ? (int)(gb / 4 % (unsigned)n) : -1; t < G.m.ntab && i >= 0; t++)
            if (q_match(q, G.m.tab[t].mask) && i-- == 0) g = q_group(q, G.m.tab[t].mask);
    }
    fz_iter *I = fz_iter_begin(qi);
    if (!I) return;
    if (!(x & 1)) {
        ecs_result r = ecs_iter_set_group(&I->it, g);
        fz_expect(r, I->refused || !q->grp ? ECS_ERR_ARG : ECS_OK, "ecs_iter_set_group");
        if (r == ECS_OK) { I->restricted = 1; I->only = g; FZ_STAT(ST_RESTRICTED); }
    }
    fz_iter_step(I);
    if (x & 1) fz_expect(ecs_iter_set_group(&I->it, g), ECS_ERR_ARG, "ecs_iter_set_group after ecs_query_next");
    if (x & 2) while (I->active) fz_iter_step(I);
}

/* ---- defer mode ---------------------------------------------------------- */
static void op_defer_begin(void) {
    if (G.defer_depth >= 4) return;
    long inj0 = fz_injected();
    ecs_result r = ecs_defer_begin(G.w);
    if (r == ECS_ERR_NOMEM && !G.defer_exists) { fz_nomem(inj0, "ecs_defer_begin"); return; }
    fz_expect(r, ECS_OK, "ecs_defer_begin");
    G.defer_exists = 1;
    G.defer_depth++;
}
static void op_defer_end(void) {
    long inj0 = fz_injected();
    ecs_result r = ecs_defer_end(G.w);
    if (G.defer_depth == 0) {
        if (!l_left(&G.defer)) { fz_expect(r, ECS_ERR_ARG, "ecs_defer_end outside defer mode"); return; }
    } else if (G.defer_depth > 1) {
        fz_expect(r, ECS_OK, "a nested ecs_defer_end");
        G.defer_depth--;
        return;
    } else {
        G.defer_depth = 0;
    }
    fz_list *ls[1] = {&G.defer};
    fz_stats[ST_DEFER_CMDS] += l_left(&G.defer);
    fz_after_apply(ls, 1, r, inj0, "ecs_defer_end");
}

/* ---- command buffers ----------------------------------------------------- */
static void op_cmds_new(void) {
    if (G.nbuf == FZ_MAXBUF) return;
    long inj0 = fz_injected();
    ecs_commands *c = ecs_commands_new(G.w);
    if (!c) { fz_nomem(inj0, "ecs_commands_new"); return; }
    G.bufs[G.nbuf] = c;
    memset(&G.lists[G.nbuf], 0, sizeof G.lists[G.nbuf]);
    G.nbuf++;
}
static void op_cmds_free(void) {
    if (!G.nbuf) return;
    int b = (int)fz_below((unsigned)G.nbuf);
    ecs_commands_free(G.bufs[b]);
    l_free(&G.lists[b]);
    G.nbuf--;
    G.bufs[b] = G.bufs[G.nbuf];
    G.lists[b] = G.lists[G.nbuf];
    memset(&G.lists[G.nbuf], 0, sizeof G.lists[G.nbuf]);
}
/* A pending handle's serial: checks it against what the list saw. */
static void fz_check_pending(fz_list *L, ecs_entity p, const char *what) {
    FZ_CHECK(p >> 63, "%s = %#llx has no pending bit", what, FZ_H(p));
    uint64_t serial = p >> 24 & ((1ull << 39) - 1);
    FZ_CHECK((p & 0xFFFFFF) == (uint64_t)L->npend, "%s = %#llx: pending index %llu, model %d", what, FZ_H(p),
             (unsigned long long)(p & 0xFFFFFF), L->npend);
    FZ_CHECK(serial != 0, "%s: pending serial 0", what);
    if (L->serial) FZ_CHECK(serial == L->serial, "%s: serial %llu changed from %llu without an apply", what,
                            (unsigned long long)serial, (unsigned long long)L->serial);
    else FZ_CHECK(serial > L->old_serial, "%s: serial %llu after %llu: serials must never repeat", what,
                  (unsigned long long)serial, (unsigned long long)L->old_serial);
    L->serial = serial;
}
static int m_pending_of(const fz_list *L, ecs_entity e) {   /* ecs__is_pending_of */
    if (!L->serial) return 0;
    return (e & ~(uint64_t)0xFFFFFF) == (1ull << 63 | L->serial << 24) && (int)(e & 0xFFFFFF) < L->npend;
}
/* Records into a list: the result ecs_cmd_* must give (before memory). */
static int m_cmd_check_parent(const fz_list *L, ecs_entity child, ecs_entity parent) {
    if (child == 0) return ECS_ERR_STALE;
    if ((child >> 63 && !m_pending_of(L, child)) || (parent >> 63 && !m_pending_of(L, parent))) return ECS_ERR_ARG;
    return ECS_OK;
}
static void m_cmd_record_parent(fz_list *L, ecs_entity child, ecs_entity parent) {
    int pend = child >> 63 ? (int)(child & 0xFFFFFF) : -1;
    fz_cmd *c = l_push(L, C_PARENT, -1, pend, pend >= 0 ? 0 : child, NULL);
    c->parent = parent;
}
static int m_cmd_check(const fz_list *L, int op, ecs_entity e, ecs_id id, const void *v) {
    if (e == 0) return ECS_ERR_STALE;
    if (e >> 63 && !m_pending_of(L, e)) return ECS_ERR_ARG;
    if (op != C_DESTROY && !fz_addable(id)) return ECS_ERR_ARG;
    if (op == C_SET && !v && fz_size(fz_kid(id))) return ECS_ERR_ARG;
    return ECS_OK;
}
static void m_cmd_record(fz_list *L, int op, ecs_entity e, ecs_id id, const void *v) {
    int k = op == C_DESTROY ? -1 : fz_kid(id);
    if (op == C_SET && !fz_size(k)) op = C_ADD;
    int pend = e >> 63 ? (int)(e & 0xFFFFFF) : -1;
    l_push(L, op, k, pend, pend >= 0 ? 0 : e, v);
}

static void op_cmd_create(void) {
    if (!G.nbuf) return;
    int b = (int)fz_below((unsigned)G.nbuf);
    fz_list *L = &G.lists[b];
    if (L->npend >= FZ_MAXPEND || G.m.nrec + (uint32_t)L->npend > FZ_SLOT_SOFT) return;
    long inj0 = fz_injected();
    ecs_entity p = ecs_cmd_create(G.bufs[b]);
    if (!p) { fz_nomem(inj0, "ecs_cmd_create"); return; }
    fz_check_pending(L, p, "ecs_cmd_create");
    l_push(L, C_CREATE, -1, L->npend++, 0, NULL);
}
static void op_cmd(void) {
    if (!G.nbuf) return;
    int b = (int)fz_below((unsigned)G.nbuf);
    fz_list *L = &G.lists[b];
    unsigned kind = fz_u8() % 5, hb = fz_u8();
    ecs_entity e;
    if (hb % 4 == 0 && L->serial && L->npend) e = 1ull << 63 | L->serial << 24 | (hb >> 2) % (unsigned)L->npend;
    else if (hb % 4 == 1 && G.nbuf > 1) {   /* another buffer's pending handle */
        const fz_list *O = &G.lists[(b + 1) % G.nbuf];
        e = O->serial && O->npend ? 1ull << 63 | O->serial << 24 : 1ull << 63 | 5ull << 24;
    } else if (hb % 4 == 2 && L->serial) e = 1ull << 63 | L->serial << 24 | (unsigned)L->npend;   /* index too high */
    else e = fz_pick_handle();
    if (kind == 4) {   /* ecs_cmd_set_parent: a parent that may be pending too, or 0 */
        unsigned pb = fz_u8();
        ecs_entity parent = pb % 4 == 0 ? 0 : pb % 4 == 1 && L->serial && L->npend ?
                            1ull << 63 | L->serial << 24 | (pb >> 2) % (unsigned)L->npend : fz_pick_handle();
        int want = m_cmd_check_parent(L, e, parent);
        long inj0 = fz_injected();
        ecs_result r = ecs_cmd_set_parent(G.bufs[b], e, parent);
        if (!want && r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_cmd_set_parent"); return; }
        fz_expect(r, want, "ecs_cmd_set_parent");
        if (!r) m_cmd_record_parent(L, e, parent);
        return;
    }
    ecs_id id = kind ? fz_u8() % 4 ? fz_pick_comp() : fz_pick_id() : 0;
    unsigned vb = kind == 3 ? fz_u8() : 1;
    unsigned char v[100];
    fz_fill(v, sizeof v, (uint64_t)vb * 31 + 9);
    const void *value = vb ? v : NULL;
    static const int ops[4] = {C_DESTROY, C_ADD, C_REMOVE, C_SET};
    int op = ops[kind];
    int want = m_cmd_check(L, op, e, id, value);
    long inj0 = fz_injected();
    ecs_result r;
    switch (kind) {
    case 0: r = ecs_cmd_destroy(G.bufs[b], e); break;
    case 1: r = ecs_cmd_add(G.bufs[b], e, id); break;
    case 2: r = ecs_cmd_remove(G.bufs[b], e, id); break;
    default: r = ecs_cmd_set(G.bufs[b], e, id, value); break;
    }
    memset(v, 0xA5, sizeof v);
    if (!want && r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_cmd_*"); return; }
    fz_expect(r, want, "ecs_cmd_*");
    if (r) return;
    fz_fill(v, sizeof v, (uint64_t)vb * 31 + 9);
    m_cmd_record(L, op, e, id, value ? v : NULL);
}
static void op_cmds_apply(void) {
    unsigned x = fz_u8();
    if (!G.nbuf || x == 255) {
        FZ_CHECK(ecs_commands_apply(G.w, NULL) == ECS_ERR_ARG, "ecs_commands_apply(NULL)");
        return;
    }
    int b = (int)(x % (unsigned)G.nbuf);
    long inj0 = fz_injected();
    ecs_result r = ecs_commands_apply(G.w, G.bufs[b]);
    if (G.defer_depth) { fz_expect(r, ECS_ERR_BUSY, "ecs_commands_apply in defer mode"); return; }
    fz_list *ls[1] = {&G.lists[b]};
    fz_after_apply(ls, 1, r, inj0, "ecs_commands_apply");
}

/* ---- prefabs and instances (v2) ------------------------------------------ */
/* ecs_component_init with entity fields (0..2, in bounds or not, a count out of range), no
   hooks: what instantiate remaps and applied ecs_cmd_set resolves. Its escape turns v2 on. */
static void op_component_init(unsigned how) {
    static const size_t sizes[8] = {8, 12, 16, 24, 100, 0, 8, 24};
    if (!G.v2) { G.v2 = 1; FZ_STAT(ST_V2_INPUTS); }
    unsigned nb = fz_u8() % 18, sb = fz_u8(), ab = fz_u8(), fb = fz_u8();
    const char *name = nb < 16 ? fz_names[nb] : nb == 16 ? "" : NULL;
    size_t size = sizes[(sb + how) % 8], align = fz_aligns[ab % 7];
    ecs_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name; d.size = size; d.align = align;
    int nf = fb == 0xFF ? -1 : fb == 0xFE ? ECS_MAX_ENTITY_FIELDS + 1 : (int)(fb % 3);
    for (int i = 0; i < nf && i < 2; i++) {
        unsigned o = fb >> (2 + 2 * i) & 3;   /* 0, 4, the last 8 bytes, the last 4 (too few) */
        d.entity_fields[i] = o == 0 ? 0 : o == 1 ? 4 : o == 2 ? (size >= 8 ? size - 8 : 0) : size >= 4 ? size - 4 : 0;
    }
    d.entity_field_count = nf;
    /* the model's answer */
    int ok = name && *name && nf >= 0 && nf <= ECS_MAX_ENTITY_FIELDS && !(size == 0 && nf), want_new = 0;
    size_t a = 0;
    if (ok) ok = fz_layout(size, align, d.entity_fields, nf, &a);
    ecs_id want = 0;
    if (ok) {
        int found = -1;
        for (int k = 0; k < G.nids; k++) if (G.ids[k].name == (int)nb) found = k;
        if (found >= 0) {   /* the same desc (a plain component: no fields) */
            const fz_idinfo *in = &G.ids[found];
            int same = !in->res && !in->ev && in->size == size && in->nfield == nf;
            for (int i = 0; same && i < nf; i++) same = in->field[i] == d.entity_fields[i];
            if (same) want = in->lib;
        } else {
            if (G.nids == FZ_MAXI) return;   /* beyond the model */
            want_new = 1;
            want = (ecs_id)G.nids + 1 + FZ_ID0;
        }
    }
    long inj0 = fz_injected();
    ecs_id id = ecs_component_init(G.w, &d);
    if (!id && want_new) { fz_nomem(inj0, "ecs_component_init"); return; }
    FZ_CHECK(id == want, "ecs_component_init(\"%s\", %zu, %zu, %d entity fields) = %u, the model says %u",
             name ? name : "(null)", size, align, nf, id, want);
    if (!id) { FZ_CHECK(ecs_last_error(G.w)[0], "a refused component without an error line"); return; }
    if (!want_new) return;
    fz_idinfo *in = &G.ids[G.nids];
    memset(in, 0, sizeof *in);
    in->lib = id; in->size = (uint32_t)size; in->align = (uint32_t)a; in->name = (int)nb;
    in->voff = G.vsize;
    in->nfield = nf;
    for (int i = 0; i < nf; i++) in->field[i] = (uint32_t)d.entity_fields[i];
    G.vsize += (uint32_t)size;
    G.nids++;
    FZ_CHECK(ecs_id_count(G.w) == (ecs_id)G.nids + FZ_ID0, "ecs_id_count = %u, model %d", ecs_id_count(G.w), G.nids);
    FZ_CHECK(ecs_lookup(G.w, name) == id && ecs_id_size(G.w, id) == size, "ecs_lookup / ecs_id_size of \"%s\"", name);
}

/* ecs_prefab_new (immediate: BUSY while a loop holds the prefab tag's table; in defer mode
   reserved), then maybe made a child of a prefab and given a value. */
static void fz_prefab_new(unsigned x, unsigned y) {
    if (G.m.nrec > FZ_SLOT_SOFT) return;
    ecs_entity parent = x & 0x10 ? fz_pick_prefab() : 0;
    long inj0 = fz_injected();
    ecs_entity e = ecs_prefab_new(G.w);
    if (fz_deferring()) {
        if (!e) { fz_nomem(inj0, "deferred ecs_prefab_new"); return; }
        ecs_entity want;
        m_defer_make(&want, C_PCREATE);
        FZ_CHECK(e == want, "deferred ecs_prefab_new = %#llx, model %#llx", FZ_H(e), FZ_H(want));
        FZ_CHECK(!ecs_is_alive(G.w, e) && !ecs_is_prefab(G.w, e), "a reserved prefab is alive before the block ends");
    } else {
        if (!e && fz_injected() > inj0) { fz_nomem(inj0, "ecs_prefab_new"); return; }
        int t = m_pf_root(&G.m);
        if (m_locked(&G.m, t)) {
            FZ_CHECK(e == 0, "ecs_prefab_new while a loop holds the prefab table = %#llx", FZ_H(e));
            fz_expect(ECS_ERR_BUSY, ECS_ERR_BUSY, "ecs_prefab_new");
            fz_check_tables();
            return;
        }
        uint32_t s = m_take_slot(&G.m);
        m_place_in(&G.m, s, t);
        FZ_CHECK(e == m_h(&G.m, s), "ecs_prefab_new = %#llx, model %#llx", FZ_H(e), FZ_H(m_h(&G.m, s)));
        fz_check_entity(s);
        FZ_STAT(ST_PREFABS);
    }
    if (parent) fz_set_parent_call(e, parent);
    if (y & 1) {
        unsigned char v[100];
        fz_fill(v, sizeof v, (uint64_t)y * 29 + 3);
        fz_struct_call(3, e, fz_pick_comp(), v);
    }
}
/* The prefab tag and ecs_is_prefab, ecs_has, ecs_get and ecs_entity_ids of an entity. */
static void fz_prefab_look(void) {
    FZ_CHECK(ecs_prefab_tag(G.w) == FZ_ID0 && ecs_prefab_tag(NULL) == 0, "ecs_prefab_tag = %u", ecs_prefab_tag(G.w));
    FZ_CHECK(ecs_id_name(G.w, FZ_ID0) && !strcmp(ecs_id_name(G.w, FZ_ID0), "ecs.Prefab") &&
             ecs_lookup(G.w, "ecs.Prefab") == FZ_ID0 && ecs_id_size(G.w, FZ_ID0) == 0, "the prefab tag's name or size");
    ecs_entity e = fz_pick_prefab();
    int alive = m_alive(&G.m, e), pf = alive && m_is_pf(&G.m, (uint32_t)e);
    FZ_CHECK(ecs_is_prefab(G.w, e) == pf && ecs_has(G.w, e, FZ_ID0) == pf, "ecs_is_prefab(%#llx) = %d, model %d",
             FZ_H(e), ecs_is_prefab(G.w, e), pf);
    FZ_CHECK(ecs_get(G.w, e, FZ_ID0) == NULL && ecs_get_mut(G.w, e, FZ_ID0) == NULL, "ecs_get of the prefab tag");
    const ecs_id *ids = NULL;
    int n = ecs_entity_ids(G.w, e, &ids);
    if (!alive) { FZ_CHECK(n == -1, "ecs_entity_ids of dead %#llx = %d", FZ_H(e), n); return; }
    uint32_t mask = m_mask(&G.m, (uint32_t)e);
    int i = 0;
    if (pf) {
        FZ_CHECK(n > 0 && ids[0] == FZ_ID0, "ecs_entity_ids of prefab %#llx: the tag is not first", FZ_H(e));
        i = 1;
    }
    for (int k = 0; k < G.nids; k++) {
        if (!(mask >> k & 1)) continue;
        FZ_CHECK(i < n && ids[i] == G.ids[k].lib, "ecs_entity_ids(%#llx)[%d] = %u, model %u", FZ_H(e), i,
                 i < n ? ids[i] : 0, G.ids[k].lib);
        i++;
    }
    FZ_CHECK(i == n, "ecs_entity_ids(%#llx) = %d ids, model %d", FZ_H(e), n, i);
}
/* The prefab tag is no id to add, remove, set or create with (ECS_ERR_ARG). */
static void fz_prefab_refuse(unsigned y) {
    ecs_entity e = y & 0x80 ? fz_pick_handle() : fz_pick_prefab();
    unsigned char v[100];
    fz_fill(v, sizeof v, (uint64_t)y * 5 + 1);
    switch (y % 5) {
    case 0: case 1: case 2: fz_struct_call(1 + (int)(y % 3), e, FZ_ID0, y & 8 ? v : NULL); break;
    case 3: {
        ecs_id ids[2] = {fz_pick_comp(), FZ_ID0};
        if (y & 16) { ids[0] = FZ_ID0; ids[1] = fz_pick_comp(); }
        ecs_entity out[2];
        fz_expect(ecs_create_many(G.w, 1 + (y >> 5 & 1), ids, 2, out), ECS_ERR_ARG,
                  "ecs_create_many with the prefab tag");
        break;
    }
    default: {
        if (!G.nbuf) break;
        int b = (int)(y >> 3 & 1) % G.nbuf, op = y & 32 ? C_SET : y & 64 ? C_REMOVE : C_ADD;
        int want = m_cmd_check(&G.lists[b], op, e, FZ_ID0, v);
        ecs_result r = op == C_SET ? ecs_cmd_set(G.bufs[b], e, FZ_ID0, v)
                     : op == C_REMOVE ? ecs_cmd_remove(G.bufs[b], e, FZ_ID0) : ecs_cmd_add(G.bufs[b], e, FZ_ID0);
        FZ_CHECK(want != ECS_OK, "the model takes the prefab tag in a command");
        fz_expect(r, want, "ecs_cmd_* with the prefab tag");
        break;
    }
    }
}
/* ecs_destroy_with: every entity with id (prefabs only for the prefab tag), each table's rows
   from the last, in table order, with their subtrees; all or nothing; recorded in defer mode. */
static void fz_destroy_with(unsigned y) {
    static ecs_entity list[FZ_MAXSLOT];
    ecs_id id = y % 4 == 0 ? FZ_ID0 : y % 4 == 3 ? fz_pick_id() : fz_pick_comp();
    int k = fz_kid(id), want = fz_is_comp(id) ? ECS_OK : ECS_ERR_ARG, n = 0;
    for (int t = 0; t < G.m.ntab && !want; t++) {
        const fz_tab *tb = &G.m.tab[t];
        if (!(tb->mask >> k & 1) || ((tb->mask & FZ_PFB) && k != FZ_PF)) continue;
        for (uint32_t r = tb->n; r-- > 0;) list[n++] = m_h(&G.m, tb->rows[r]);
    }
    long inj0 = fz_injected();
    ecs_result r = ecs_destroy_with(G.w, id);
    if (want) { fz_expect(r, want, "ecs_destroy_with"); return; }
    if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_destroy_with"); return; }
    if (fz_deferring()) {
        fz_expect(r, ECS_OK, "deferred ecs_destroy_with");
        for (int i = 0; i < n; i++) l_push(&G.defer, C_DESTROY, -1, -1, list[i], NULL);
        return;
    }
    int pred = ECS_OK;
    for (int i = 0; i < n && !pred; i++) pred = m_destroy_predict(&G.m, (uint32_t)list[i]);
    fz_expect(r, pred, "ecs_destroy_with");
    for (int i = 0; i < n && !pred; i++)
        if (m_alive(&G.m, list[i])) m_destroy(&G.m, (uint32_t)list[i]);   /* (gone with one before it) */
    fz_check_counts();
}
/* An entity-field component set on an entity (mostly a prefab), its fields naming the entity,
   its parent, its first child, its root, another prefab, any handle, 0 or a pending handle:
   what instantiate remaps. */
static ecs_entity fz_related(ecs_entity e, unsigned c) {
    int live = m_alive(&G.m, e);
    uint32_t s = (uint32_t)e;
    switch (c & 7) {
    case 0: return e;
    case 1: return live && G.m.par[s] >= 0 ? m_h(&G.m, (uint32_t)G.m.par[s]) : e;
    case 2: return live && G.m.first[s] >= 0 ? m_h(&G.m, (uint32_t)G.m.first[s]) : e;
    case 3: return fz_pick_prefab();
    case 4: return fz_pick_handle();
    case 5: return 0;
    case 6:
        while (live && G.m.par[s] >= 0) s = (uint32_t)G.m.par[s];
        return live ? m_h(&G.m, s) : e;
    default: return G.nbuf && G.lists[0].serial ? 1ull << 63 | G.lists[0].serial << 24 : e;
    }
}
static int fz_pick_fielded(unsigned x) {   /* a component with entity fields, or -1 */
    int n = 0;
    for (int k = 0; k < G.nids; k++) n += !G.ids[k].res && !G.ids[k].ev && G.ids[k].nfield > 0;
    for (int k = 0, i = n ? (int)(x % (unsigned)n) : -1; k < G.nids && i >= 0; k++)
        if (!G.ids[k].res && !G.ids[k].ev && G.ids[k].nfield > 0 && i-- == 0) return k;
    return -1;
}
static void fz_set_fields(unsigned y) {
    int kf = fz_pick_fielded(y >> 4);
    if (kf < 0) return;
    ecs_entity e = y & 1 ? fz_pick_handle() : fz_pick_prefab();
    unsigned rb = fz_u8();
    unsigned char v[100];
    fz_fill(v, sizeof v, (uint64_t)y * 131 + (uint64_t)G.op);
    for (int f = 0; f < G.ids[kf].nfield; f++) {
        ecs_entity ref = fz_related(e, rb >> (3 * f));
        memcpy(v + G.ids[kf].field[f], &ref, sizeof ref);
    }
    fz_struct_call(3, e, G.ids[kf].lib, v);
}
static void op_prefab(void) {
    unsigned x = fz_u8(), y = fz_u8();
    switch (x % 8) {
    case 0: case 1: case 2: case 3: fz_prefab_new(x, y); break;
    case 4: fz_prefab_look(); break;
    case 5: fz_prefab_refuse(y); break;
    case 6: fz_destroy_with(y); break;
    default: fz_set_fields(y); break;
    }
}

/* ecs_instantiate / ecs_instantiate_many (0..5 instances, or too many; roots to out or not) of
   a prefab, or of a handle that is none (ECS_ERR_ARG / ECS_ERR_STALE); BUSY when a loop holds a
   table it fills; reserved in defer mode. */
static void op_instantiate(void) {
    static ecs_entity roots[FZ_MAXSLOT];
    unsigned x = fz_u8(), nb = fz_u8();
    ecs_entity p = x & 0x80 ? fz_pick_handle() : fz_pick_prefab();
    int many = x & 1, use_out = !(x & 2);
    size_t n = many ? (nb == 255 ? (size_t)1 << 31 : nb % 6) : 1;
    int k = m_subtree_size(&G.m, p);
    if (n <= 16 && G.m.nrec + n * (size_t)k > FZ_SLOT_SOFT) return;
    int want = m_check_prefab(&G.m, p);
    if (!want && n > INT32_MAX) want = ECS_ERR_ARG;
    ecs_entity out[8] = {0};
    long inj0 = fz_injected();
    ecs_result r = ECS_OK;
    if (many) r = ecs_instantiate_many(G.w, p, n, use_out ? out : NULL);
    else {
        out[0] = ecs_instantiate(G.w, p);
        if (!out[0]) r = want ? (ecs_result)want : fz_injected() > inj0 ? ECS_ERR_NOMEM : ECS_ERR_BUSY;
        if (!out[0]) FZ_CHECK(ecs_last_error(G.w)[0], "ecs_instantiate failed without an error line");
    }
    const char *what = many ? "ecs_instantiate_many" : "ecs_instantiate";
    if (want) { fz_expect(r, want, what); return; }
    if (r == ECS_ERR_NOMEM) { fz_nomem(inj0, what); return; }
    if (fz_deferring()) {
        fz_expect(r, ECS_OK, what);
        for (size_t i = 0; i < n; i++) {
            ecs_entity e;
            m_defer_inst(&e, p);
            if (use_out || !many)
                FZ_CHECK(out[i] == e, "deferred %s: instance %zu = %#llx, model %#llx", what, i, FZ_H(out[i]), FZ_H(e));
            FZ_CHECK(!ecs_is_alive(G.w, e), "a reserved instance is alive before the block ends");
        }
        return;
    }
    int pred = n ? m_instantiate(&G.m, (uint32_t)p, (uint32_t)n, -1, roots) : ECS_OK;   /* 0: nothing made */
    fz_expect(r, pred, what);
    if (pred) { fz_check_tables(); return; }
    for (size_t i = 0; i < n; i++) {
        if (use_out || !many)
            FZ_CHECK(out[i] == roots[i], "%s: instance %zu = %#llx, model %#llx", what, i, FZ_H(out[i]),
                     FZ_H(roots[i]));
        if (i < 4) {
            uint32_t sub[FZ_MAXSLOT < 64 ? FZ_MAXSLOT : 64];
            static uint32_t nodes[FZ_MAXSLOT];
            int kk = m_preorder(&G.m, (uint32_t)roots[i], nodes);
            for (int j = 0; j < kk && j < 64; j++) { sub[j] = nodes[j]; fz_check_entity(sub[j]); }
        }
    }
    fz_check_counts();
}

/* ecs_cmd_instantiate into a user buffer (of a prefab, or a handle that is none, a pending
   one), then commands on its pending root: a value (entity fields naming the root or another
   pending handle: live when it applies), a parent. */
static void op_cmd_instantiate(void) {
    if (!G.nbuf) return;
    int b = (int)fz_below((unsigned)G.nbuf);
    fz_list *L = &G.lists[b];
    unsigned x = fz_u8();
    ecs_entity p = !(x & 0x80) ? fz_pick_prefab() : x & 0x40 && L->serial && L->npend ?
                   1ull << 63 | L->serial << 24 | (x & 0x3F) % (unsigned)L->npend : fz_pick_handle();
    int k = m_subtree_size(&G.m, p);
    if (L->npend >= FZ_MAXPEND || G.m.nrec + (uint32_t)(L->npend + 1) * (uint32_t)k > FZ_SLOT_SOFT) return;
    int want = m_check_prefab(&G.m, p);
    long inj0 = fz_injected();
    ecs_entity e = ecs_cmd_instantiate(G.bufs[b], p);
    if (want) {
        FZ_CHECK(e == 0 && ecs_last_error(G.w)[0], "ecs_cmd_instantiate of %#llx, no live prefab, = %#llx", FZ_H(p),
                 FZ_H(e));
        return;
    }
    if (!e) { fz_nomem(inj0, "ecs_cmd_instantiate"); return; }
    fz_check_pending(L, e, "ecs_cmd_instantiate");
    fz_cmd *c = l_push(L, C_INST, -1, L->npend, 0, NULL);
    c->parent = p;
    L->created[L->npend++] = 0;
    if (x & 1) {   /* a value for the root */
        int kf = fz_pick_fielded(x >> 2);
        ecs_id id = x & 2 && kf >= 0 ? G.ids[kf].lib : fz_pick_comp();
        unsigned char v[100];
        fz_fill(v, sizeof v, (uint64_t)x * 7 + (uint64_t)G.op);
        int kk = fz_kid(id);
        for (int f = 0; kk >= 0 && f < G.ids[kk].nfield; f++) {
            ecs_entity ref = x & 4 ? e : 1ull << 63 | L->serial << 24 | (unsigned)f % (unsigned)L->npend;
            memcpy(v + G.ids[kk].field[f], &ref, sizeof ref);
        }
        int w2 = m_cmd_check(L, C_SET, e, id, v);
        inj0 = fz_injected();
        ecs_result r = ecs_cmd_set(G.bufs[b], e, id, v);
        if (!w2 && r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_cmd_set"); return; }
        fz_expect(r, w2, "ecs_cmd_set on a pending instance");
        if (!r) m_cmd_record(L, C_SET, e, id, v);
    }
    if (x & 8) {   /* a parent: another pending handle of the buffer, a prefab, 0 */
        ecs_entity parent = x & 16 ? 1ull << 63 | L->serial << 24 : x & 32 ? fz_pick_prefab() : 0;
        int w2 = m_cmd_check_parent(L, e, parent);
        inj0 = fz_injected();
        ecs_result r = ecs_cmd_set_parent(G.bufs[b], e, parent);
        if (!w2 && r == ECS_ERR_NOMEM) { fz_nomem(inj0, "ecs_cmd_set_parent"); return; }
        fz_expect(r, w2, "ecs_cmd_set_parent of a pending instance");
        if (!r) m_cmd_record_parent(L, e, parent);
    }
}

/* ---- systems: registration ----------------------------------------------- */
static void fz_sys_fn(ecs_iter *it);

static int fz_declared(const fz_sys *S, int k) {
    for (int i = 0; i < S->acc_n; i++) if (S->acc_k[i] == k) return i;
    return -1;
}
static void fz_sys_access(fz_sys *S) {   /* what it declared, merged (NOT terms access nothing) */
    S->acc_n = 0;
    for (int part = 0; part < 3; part++) {
        int n = part == 0 ? S->nt : part == 1 ? S->nr : S->nw;
        for (int i = 0; i < n; i++) {
            ecs_id id = part == 0 ? S->terms[i].id : part == 1 ? S->reads[i] : S->writes[i];
            if (part == 0 && S->terms[i].oper == ECS_NOT) continue;
            int write = part == 2 || (part == 0 && (S->terms[i].access & ECS_WRITE));
            int k = fz_kid(id), j;
            if (G.ids[k].ev) continue;   /* an event type in reads is no access */
            j = fz_declared(S, k);
            if (j < 0) { j = S->acc_n++; S->acc_k[j] = k; S->acc_w[j] = 0; S->acc_l[j] = 0; }
            S->acc_w[j] |= write;
            S->acc_l[j] |= part == 1 ? 1 : part == 2 ? 2 : 0;
        }
    }
}
static int fz_sys_by_name(int name) {   /* the first system with that name, or -1 */
    for (int i = 0; i < G.nsys; i++) if (G.sys[i].name == name) return i;
    return -1;
}

static void op_stage_add(void) {
    unsigned b = fz_u8();
    if (G.nstages >= 4) return;
    long inj0 = fz_injected();
    ecs_stage st = ecs_stage_add(G.w, b & 1 ? NULL : "late");
    if (!st) { fz_nomem(inj0, "ecs_stage_add"); return; }
    FZ_CHECK(st == (ecs_stage)G.nstages, "ecs_stage_add = %u, model %d", st, G.nstages);
    G.nstages++;
    FZ_CHECK(ecs_stage_count(G.w) == (uint32_t)G.nstages, "ecs_stage_count");
}

static void op_system_add(void) {
    if (G.nsys == FZ_MAXSYS) return;
    fz_sys *S = &G.sys[G.nsys];
    memset(S, 0, sizeof *S);
    ecs_system_desc d;
    memset(&d, 0, sizeof d);
    unsigned nb = fz_u8(), fb = fz_u8(), cb = fz_u8(), tb = fz_u8();
    S->name = (int)(nb % 10);
    d.name = nb >= 0xF8 ? NULL : fz_snames[S->name];
    d.fn = fb == 0xFF ? NULL : fz_sys_fn;
    d.ctx = S;
    d.flags = fb % 4 | (fb >= 0xF8 ? 4u : 0u);
    d.chunk_size = cb == 0xFF ? -1 : cb % 8 < 5 ? 0 : (int)(cb % 8) - 4;
    unsigned nt = tb % 4;
    for (unsigned i = 0; i < nt; i++) {
        d.terms[i].id = fz_u8() % 8 ? fz_pick_comp() : fz_pick_id();
        unsigned ob = fz_u8(), o = ob % 8;
        d.terms[i].oper = o < 4 ? ECS_AND : o < 6 ? ECS_NOT : o == 6 || !(ob & 0x80) ? ECS_OPTIONAL : (ecs_oper)4;
        d.terms[i].access = (ecs_access)(ob >= 0xF8 ? 4 : (ob >> 3) % 4);
    }
    unsigned rw = fz_u8();
    S->nr = (int)(rw % 3); S->nw = (int)(rw / 3 % 3);
    for (int i = 0; i < S->nr; i++) d.reads[i] = S->reads[i] = fz_pick_id();
    for (int i = 0; i < S->nw; i++) d.writes[i] = S->writes[i] = fz_pick_id();
    unsigned db = fz_u8();
    S->ndep[0] = (int)(db % 3); S->ndep[1] = (int)(db / 3 % 3); S->ndep[2] = (int)(db / 9 % 2);
    const char **lists[3] = {d.after, d.before, d.independent_of};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < S->ndep[l]; i++) {
            S->dep[l][i] = (int)(fz_u8() % 10);
            lists[l][i] = fz_snames[S->dep[l][i]];
        }
    unsigned sb = fz_u8();
    d.stage = sb % ((unsigned)G.nstages + 1);
    if (sb == 0xFF) d.stage = 1000;
    S->behave = fz_u8() | (fz_u8() & 7u) << 8;
    S->seed = fz_mix(fz_u8(), 0xC0FFEE + (uint64_t)G.nsys);
    if (d.flags & ECS_SYSTEM_EXCLUSIVE || S->behave & B_BAD) {
        S->target[0] = fz_pick_handle();
        S->target[1] = fz_pick_handle();
    }
    if (G.nev) {   /* once an event type exists: emits, event reads, an interval, what it does with events */
        unsigned eb = fz_u8(), ib = fz_u8();
        S->evb = fz_u8();
        S->nem = (int)(eb % 3);
        int nre = (int)(eb / 3 % 3);
        for (int i = 0; i < S->nem; i++) d.emits[i] = S->emits[i] = fz_u8() % 8 ? fz_pick_event() : fz_pick_id();
        for (int i = 0; i < nre; i++) d.reads[S->nr + i] = S->reads[S->nr + i] = fz_pick_event();
        S->nr += nre;
        S->interval = d.interval = ib == 0xFF ? -1 : (int)(ib % 4);
    }
    if (G.v2) {   /* v2: instances from inside (P_*), of a prefab picked now; order_by, group_by */
        S->b2 = fz_u8();
        if (S->b2 & (P_INST | P_IMMI)) S->pf = fz_pick_prefab();
        if (S->b2 & P_SORT) {   /* a term's id (or any), compare (or not: a broken pair) */
            unsigned ob = fz_u8();
            d.order_by = ob % 8 == 7 || !nt ? fz_pick_comp() : d.terms[ob % nt].id;
            d.compare = ob % 16 == 15 ? NULL : fz_cmp_cb;
            S->oq.cmode = ob >> 4 & 7;
            S->oq.cseed = ob >> 7;
        }
        if (S->b2 & P_GROUP) {
            unsigned gb = fz_u8();
            d.group_by = fz_group_cb;
            d.group_ctx = (void *)(uintptr_t)((gb & 7) | (uintptr_t)(gb >> 3) << 3);
            S->oq.grp = 1; S->oq.gmode = gb & 7; S->oq.gseed = gb >> 3;
        }
    }
    /* the model's verdict */
    int ok = d.name && *d.name && d.fn;
    int n = 0;
    for (; ok && n < ECS_MAX_TERMS && d.terms[n].id; n++)
        if (!fz_is_comp(d.terms[n].id) || (unsigned)d.terms[n].oper > 2 || (unsigned)d.terms[n].access > 3) ok = 0;
    for (int i = 0; ok && i < S->nr && S->reads[i]; i++) if (fz_kid(S->reads[i]) < 0) ok = 0;
    for (int i = 0; ok && i < S->nw && S->writes[i]; i++) if (fz_kid(S->writes[i]) < 0 || fz_is_ev(S->writes[i])) ok = 0;
    for (int i = 0; ok && i < S->nem && S->emits[i]; i++) if (!fz_is_ev(S->emits[i])) ok = 0;
    if (S->interval < 0) ok = 0;
    if (d.stage >= (ecs_stage)G.nstages || (d.flags & ~3u) || d.chunk_size < 0 || (d.chunk_size > 0 && d.flags)) ok = 0;
    if (d.chunk_size > 0 && (d.order_by || d.compare)) ok = 0;   /* a chunked system cannot sort */
    {
        ecs_query_desc qd;
        memset(&qd, 0, sizeof qd);
        memcpy(qd.terms, d.terms, sizeof qd.terms);
        qd.order_by = d.order_by; qd.compare = d.compare;
        if (fz_query_desc(&qd, &S->oq)) ok = 0;   /* its query's terms and order (the order term's size: ctx) */
        else if (S->oq.sorted)
            d.compare_ctx = (void *)(uintptr_t)(S->oq.cmode | fz_size(S->oq.ok) << 3 | (uintptr_t)S->oq.cseed << 10);
    }
    if (!n && d.group_by) ok = 0;   /* nothing to group */
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < S->ndep[l]; i++) if (!*fz_snames[S->dep[l][i]]) ok = 0;
    long inj0 = fz_injected();
    ecs_system s = ecs_system_add(G.w, &d);
    if (!ok) {
        FZ_CHECK(s == 0, "ecs_system_add accepted a bad desc (system %u)", s);
        fz_expect(ECS_ERR_ARG, ECS_ERR_ARG, "ecs_system_add");
        FZ_CHECK(fz_injected() > inj0 || !strstr(ecs_last_error(G.w), "out of memory"), "ecs_system_add refused a bad "
                 "desc as out of memory, with no allocation failing: \"%s\"", ecs_last_error(G.w));
        return;
    }
    if (!s) { fz_nomem(inj0, "ecs_system_add"); return; }
    FZ_CHECK(s == (ecs_system)G.nsys + 1, "ecs_system_add = %u, model %d", s, G.nsys + 1);
    S->lib = s;
    S->nt = n;
    memcpy(S->terms, d.terms, sizeof S->terms);
    while (S->nr && !S->reads[S->nr - 1]) S->nr--;   /* lists end at the first 0 */
    for (int i = 0; i < S->nr; i++) if (!S->reads[i]) S->nr = i;
    for (int i = 0; i < S->nw; i++) if (!S->writes[i]) S->nw = i;
    for (int i = 0; i < S->nem; i++) if (!S->emits[i]) S->nem = i;
    for (int i = 0; i < S->nr; i++)   /* a window on each event type it reads, from what is delivered next */
        if (fz_is_ev(S->reads[i])) {
            int k = fz_kid(S->reads[i]);
            S->rdmask |= 1u << k;
            S->cur[k] = S->lo[k] = S->hi[k] = G.evl[k].end;
        }
    S->stage = (int)d.stage;
    S->flags = d.flags;
    S->chunk = d.chunk_size;
    fz_sys_access(S);
    G.nsys++;
    if (G.trace) {
        fprintf(stderr, "  system %d \"%s\": stage %d flags %u chunk %d behave %#x terms", G.nsys, d.name, S->stage,
                S->flags, S->chunk, S->behave);
        for (int i = 0; i < S->nt; i++) fprintf(stderr, " %s%u%s", S->terms[i].oper == ECS_NOT ? "!" :
                S->terms[i].oper == ECS_OPTIONAL ? "?" : "", S->terms[i].id, S->terms[i].access & ECS_WRITE ? "w" : "");
        fprintf(stderr, " reads");
        for (int i = 0; i < S->nr; i++) fprintf(stderr, " %u", S->reads[i]);
        fprintf(stderr, " writes");
        for (int i = 0; i < S->nw; i++) fprintf(stderr, " %u", S->writes[i]);
        for (int l = 0; l < 3; l++) {
            fprintf(stderr, " %s", l == 0 ? "after" : l == 1 ? "before" : "indep");
            for (int i = 0; i < S->ndep[l]; i++) fprintf(stderr, " %s", fz_snames[S->dep[l][i]]);
        }
        if (G.nev) {
            fprintf(stderr, " emits");
            for (int i = 0; i < S->nem; i++) fprintf(stderr, " %u", S->emits[i]);
            fprintf(stderr, " interval %d events %#x", S->interval, S->evb);
        }
        fputc('\n', stderr);
    }
    FZ_CHECK(ecs_system_count(G.w) == (uint32_t)G.nsys, "ecs_system_count");
    FZ_CHECK(ecs_system_stage(G.w, s) == d.stage, "ecs_system_stage");
    FZ_CHECK(ecs_system_lookup(G.w, d.name) == G.sys[fz_sys_by_name(S->name)].lib, "ecs_system_lookup");
}

/* ---- the system graph ---------------------------------------------------- */
/* How a system touches model id k: through query terms (T) or its reads /
   writes lists (L), reading or writing; and its AND / NOT filters. */
enum { A_TR = 1, A_TW = 2, A_LR = 4, A_LW = 8 };
static unsigned fz_how(const fz_sys *S, int k) {
    unsigned how = 0;
    if (G.ids[k].ev) return 0;   /* events are never a conflict */
    for (int i = 0; i < S->nt; i++)
        if (fz_kid(S->terms[i].id) == k && S->terms[i].oper != ECS_NOT)
            how |= A_TR | (S->terms[i].access & ECS_WRITE ? A_TW : 0u);
    for (int i = 0; i < S->nr; i++) if (fz_kid(S->reads[i]) == k) how |= A_LR;
    for (int i = 0; i < S->nw; i++) if (fz_kid(S->writes[i]) == k) how |= A_LR | A_LW;
    return how;
}
static unsigned fz_filter(const fz_sys *S, int k) {   /* 1: AND k, 2: NOT k */
    unsigned f = 0;
    for (int i = 0; i < S->nt; i++)
        if (fz_kid(S->terms[i].id) == k) f |= S->terms[i].oper == ECS_AND ? 1u : S->terms[i].oper == ECS_NOT ? 2u : 0u;
    return f;
}
/* Two queries that can never match the same table (AND x in one, NOT x in
   the other) do not conflict through their terms. */
static int fz_disjoint(const fz_sys *a, const fz_sys *b) {
    for (int k = 0; k < G.nids; k++) {
        unsigned fa = fz_filter(a, k), fb = fz_filter(b, k);
        if (((fa & 1) && (fb & 2)) || ((fa & 2) && (fb & 1))) return 1;
    }
    return 0;
}
/* The conflict rules: list accesses conflict with any access to the id,
   term accesses with term accesses unless the queries are disjoint; one
   side must write; an EXCLUSIVE system conflicts with every system. */
static int fz_conflict(const fz_sys *a, const fz_sys *b) {
    if ((a->flags | b->flags) & ECS_SYSTEM_EXCLUSIVE) return 1;
    int dis = fz_disjoint(a, b);
    for (int k = 0; k < G.nids; k++) {
        unsigned ha = fz_how(a, k), hb = fz_how(b, k);
        int at = (ha & (A_TR | A_TW)) != 0, al = (ha & (A_LR | A_LW)) != 0, atw = (ha & A_TW) != 0, alw = (ha & A_LW) != 0;
        int bt = (hb & (A_TR | A_TW)) != 0, bl = (hb & (A_LR | A_LW)) != 0, btw = (hb & A_TW) != 0, blw = (hb & A_LW) != 0;
        if (al && bl && (alw || blw)) return 1;
        if (al && bt && (alw || btw)) return 1;
        if (at && bl && (atw || blw)) return 1;
        if (at && bt && !dis && (atw || btw)) return 1;
    }
    return 0;
}
/* The library's "disjoint" mark: some system of the stage (itself and
   independent_of partners included) has a term conflict with a that
   validation let go because their queries are disjoint. */
static int fz_sys_dj(int a) {
    const fz_sys *A = &G.sys[a];
    for (int c = 0; c < G.nsys; c++) {
        const fz_sys *C = &G.sys[c];
        if (C->stage != A->stage || !fz_disjoint(A, C)) continue;
        for (int k = 0; k < G.nids; k++) {
            unsigned ha = fz_how(A, k), hc = fz_how(C, k);
            if (((ha & A_TR) && (hc & A_TW)) || ((ha & A_TW) && (hc & A_TR))) return 1;
        }
    }
    return 0;
}
static int fz_independent(int a, int b) {
    for (int i = 0; i < G.sys[a].ndep[2]; i++) if (fz_sys_by_name(G.sys[a].dep[2][i]) == b) return 1;
    for (int i = 0; i < G.sys[b].ndep[2]; i++) if (fz_sys_by_name(G.sys[b].dep[2][i]) == a) return 1;
    return 0;
}
/* decl[a][b]: a declared edge a before b (resolved names), closed transitively */
static void fz_declared_reach(int reach[FZ_MAXSYS][FZ_MAXSYS]) {
    memset(reach, 0, sizeof(int) * FZ_MAXSYS * FZ_MAXSYS);
    for (int s = 0; s < G.nsys; s++)
        for (int l = 0; l < 2; l++)
            for (int i = 0; i < G.sys[s].ndep[l]; i++) {
                int t = fz_sys_by_name(G.sys[s].dep[l][i]);
                if (t < 0 || G.sys[t].stage != G.sys[s].stage) continue;   /* within a stage */
                if (l == 0) reach[t][s] = 1; else reach[s][t] = 1;
            }
    for (int k = 0; k < G.nsys; k++)
        for (int i = 0; i < G.nsys; i++)
            for (int j = 0; j < G.nsys; j++)
                if (reach[i][k] && reach[k][j]) reach[i][j] = 1;
}
static int fz_report_has(const ecs_report *rep, ecs_problem_kind kind, ecs_system a, ecs_system b) {
    for (int i = 0; i < rep->count; i++) {
        const ecs_problem *p = &rep->problems[i];
        if (p->kind == kind && (!a || p->a == a) && (!b || p->b == b)) return 1;
    }
    return 0;
}
/* ECS_NOTE_EVENT_NEXT_FRAME: a reader of a type another system of its
   stage emits, once per such pair and type (all of them when the graph is
   valid); every other note reads before a write. */
static void fz_check_notes(ecs_result r, const ecs_report *rep) {
    int got = 0, want = 0;
    for (int i = 0; i < rep->note_count; i++) {
        const ecs_problem *p = &rep->notes[i];
        FZ_CHECK(p->message && *p->message, "note %d has no message", i);
        if (p->kind == ECS_NOTE_READ_BEFORE_WRITE) continue;
        FZ_CHECK(p->kind == ECS_NOTE_EVENT_NEXT_FRAME, "a note of kind %d", (int)p->kind);
        int a = (int)p->a - 1, b = (int)p->b - 1, k = fz_kid(p->id);
        FZ_CHECK(a >= 0 && a < G.nsys && b >= 0 && b < G.nsys && a != b && k >= 0 && G.ids[k].ev &&
                 G.sys[a].stage == G.sys[b].stage && (G.sys[a].rdmask >> k & 1) && fz_emits(&G.sys[b], k),
                 "EVENT_NEXT_FRAME note about systems %u and %u, id %u: %s", p->a, p->b, p->id, p->message);
        got++;
    }
    if (r != ECS_OK || rep->notes_omitted) return;
    for (int a = 0; a < G.nsys; a++)
        for (int b = 0; b < G.nsys; b++)
            for (int k = 0; k < G.nids && a != b; k++)
                want += G.sys[a].stage == G.sys[b].stage && (G.sys[a].rdmask >> k & 1) && fz_emits(&G.sys[b], k);
    FZ_CHECK(got == want, "%d EVENT_NEXT_FRAME notes, the model has %d", got, want);
}
/* Validates (paused) and checks the verdict against what the model knows;
   for a valid graph, fills G.prec and checks it. Returns 1 if valid. */
static int fz_graph(ecs_result r, const ecs_report *rep) {
    int reach[FZ_MAXSYS][FZ_MAXSYS];
    if (G.nev) fz_check_notes(r, rep);
    fz_declared_reach(reach);
    int must = 0;
    for (int s = 0; s < G.nsys; s++) {
        const fz_sys *S = &G.sys[s];
        int first = fz_sys_by_name(S->name);
        if (first != s) {
            must = 1;
            FZ_CHECK(r != ECS_OK, "systems %d and %d share a name and the graph is valid", first + 1, s + 1);
            FZ_CHECK(fz_report_has(rep, ECS_PROBLEM_DUPLICATE_NAME, G.sys[first].lib, S->lib),
                     "no DUPLICATE_NAME for systems %d and %d", first + 1, s + 1);
        }
        if (S->chunk > 0 && S->nw) {
            must = 1;
            FZ_CHECK(r != ECS_OK && fz_report_has(rep, ECS_PROBLEM_SELF_RACE, S->lib, S->lib),
                     "no SELF_RACE for chunked system %d with a writes list", s + 1);
        }
        for (int l = 0; l < 3; l++)
            for (int i = 0; i < S->ndep[l]; i++) {
                int t = fz_sys_by_name(S->dep[l][i]);
                if (t < 0) {
                    must = 1;
                    FZ_CHECK(r != ECS_OK && fz_report_has(rep, ECS_PROBLEM_UNKNOWN_SYSTEM, S->lib, 0),
                             "no UNKNOWN_SYSTEM for system %d naming \"%s\"", s + 1, fz_snames[S->dep[l][i]]);
                } else if (l < 2) {
                    int from = l == 0 ? t : s, to = l == 0 ? s : t;
                    if (G.sys[from].stage > G.sys[to].stage || from == to) {
                        must = 1;
                        FZ_CHECK(r != ECS_OK, "a declared edge %d -> %d against stage order (or to itself) and the "
                                 "graph is valid", from + 1, to + 1);
                    }
                }
            }
    }
    for (int a = 0; a < G.nsys; a++) {
        if (reach[a][a]) {
            must = 1;
            FZ_CHECK(r != ECS_OK && fz_report_has(rep, ECS_PROBLEM_CYCLE, 0, 0), "declared cycle through system %d "
                     "and no CYCLE reported", a + 1);
        }
        for (int b = a + 1; b < G.nsys && G.order == ECS_ORDER_EXPLICIT; b++)
            if (G.sys[a].stage == G.sys[b].stage && fz_conflict(&G.sys[a], &G.sys[b]) && !fz_independent(a, b) &&
                !reach[a][b] && !reach[b][a]) {
                must = 1;
                FZ_CHECK(r != ECS_OK, "EXPLICIT order: systems %d and %d conflict, nothing orders them, and the "
                         "graph is valid", a + 1, b + 1);
            }
    }
    for (int i = 0; i < rep->count; i++) {   /* every problem reported is real */
        const ecs_problem *p = &rep->problems[i];
        FZ_CHECK(p->message && *p->message, "problem %d has no message", i);
        if (p->kind == ECS_PROBLEM_RACE) {
            FZ_CHECK(G.order != ECS_ORDER_INSERTION, "a RACE in INSERTION order: %s", p->message);
            FZ_CHECK(p->a >= 1 && p->a < p->b && (int)p->b <= G.nsys, "RACE systems %u, %u", p->a, p->b);
            const fz_sys *A = &G.sys[p->a - 1], *B = &G.sys[p->b - 1];
            FZ_CHECK(A->stage == B->stage && fz_conflict(A, B) && !fz_independent((int)p->a - 1, (int)p->b - 1),
                     "RACE between systems %u and %u, which do not conflict: %s", p->a, p->b, p->message);
            FZ_CHECK(!reach[p->a - 1][p->b - 1] && !reach[p->b - 1][p->a - 1],
                     "RACE between systems %u and %u, which a declared order orders: %s", p->a, p->b, p->message);
        } else if (p->kind == ECS_PROBLEM_DUPLICATE_NAME) {
            FZ_CHECK(p->a >= 1 && p->b > p->a && (int)p->b <= G.nsys &&
                     G.sys[p->a - 1].name == G.sys[p->b - 1].name, "DUPLICATE_NAME %u %u", p->a, p->b);
        } else if (p->kind == ECS_PROBLEM_SELF_RACE) {
            FZ_CHECK(p->a >= 1 && (int)p->a <= G.nsys && G.sys[p->a - 1].chunk > 0 && G.sys[p->a - 1].nw,
                     "SELF_RACE of system %u", p->a);
        } else if (p->kind == ECS_PROBLEM_UNKNOWN_SYSTEM) {
            FZ_CHECK(p->name && !ecs_system_lookup(G.w, p->name), "UNKNOWN_SYSTEM \"%s\" exists", p->name);
        } else {
            FZ_CHECK(p->kind == ECS_PROBLEM_CYCLE && p->cycle_len >= 1 && p->cycle, "problem kind %d", (int)p->kind);
        }
    }
    if (r != ECS_OK) {
        FZ_CHECK(r == ECS_ERR_INVALID_GRAPH && rep->count > 0, "ecs_validate = %s with %d problems",
                 ecs_result_str(r), rep->count);
        (void)must;
        return 0;
    }
    FZ_CHECK(rep->count == 0, "a valid graph with %d problems", rep->count);
    /* valid: the run order (declared order, then registration: sinks are
       placed last, the latest registered first) */
    int runpos[FZ_MAXSYS], placed[FZ_MAXSYS] = {0};
    for (int st = 0; st < G.nstages; st++) {
        int place = 0, cnt = 0;
        for (int x = 0; x < G.nsys; x++) cnt += G.sys[x].stage == st;
        place = cnt;
        while (place > 0) {
            int pick = -1;
            for (int x = G.nsys - 1; x >= 0 && pick < 0; x--) {
                if (G.sys[x].stage != st || placed[x]) continue;
                int sink = 1;
                for (int y = 0; y < G.nsys; y++)
                    if (y != x && G.sys[y].stage == st && !placed[y] && reach[x][y]) sink = 0;
                if (sink) pick = x;
            }
            FZ_CHECK(pick >= 0, "no run order in stage %d of a valid graph", st);
            placed[pick] = 1;
            runpos[pick] = --place;
        }
    }
    /* the order ecs_system_precedes tells */
    fz_pause();
    for (int a = 0; a < G.nsys; a++)
        for (int b = 0; b < G.nsys; b++)
            G.prec[a][b] = ecs_system_precedes(G.w, G.sys[a].lib, G.sys[b].lib);
    fz_resume();
    for (int a = 0; a < G.nsys; a++) {
        FZ_CHECK(!G.prec[a][a], "system %d precedes itself", a + 1);
        for (int b = 0; b < G.nsys; b++) {
            if (a == b) continue;
            const fz_sys *A = &G.sys[a], *B = &G.sys[b];
            if (A->stage != B->stage) {
                FZ_CHECK(G.prec[a][b] == (A->stage < B->stage), "precedes(%d, %d) across stages", a + 1, b + 1);
                continue;
            }
            FZ_CHECK(!(G.prec[a][b] && G.prec[b][a]), "systems %d and %d precede each other", a + 1, b + 1);
            if (reach[a][b]) FZ_CHECK(G.prec[a][b], "declared %d before %d, but it does not precede", a + 1, b + 1);
            for (int c = 0; c < G.nsys; c++)
                if (G.prec[a][b] && G.prec[b][c]) FZ_CHECK(G.prec[a][c], "precedes is not transitive");
            if (b > a && fz_conflict(A, B) && !fz_independent(a, b)) {
                FZ_CHECK(G.prec[a][b] || G.prec[b][a], "systems %d and %d conflict and nothing orders them",
                         a + 1, b + 1);
                if (G.order == ECS_ORDER_INSERTION) {
                    int x = runpos[a] < runpos[b] ? a : b, y = x == a ? b : a;
                    FZ_CHECK(G.prec[x][y], "INSERTION order: %d and %d conflict and %d, first in the run order, "
                             "does not run first", x + 1, y + 1, x + 1);
                }
            }
        }
    }
    return 1;
}
static void op_validate(void) {
    ecs_report rep;
    long inj0 = fz_injected();
    ecs_result r = ecs_validate(G.w, &rep);
    if (r == ECS_ERR_NOMEM) {
        FZ_CHECK(fz_injected() > inj0, "ecs_validate = ECS_ERR_NOMEM with no allocation failing");
        return;
    }
    G.sys_valid = fz_graph(r, &rep);
}

/* ---- system callbacks ---------------------------------------------------- */
/* Shared choices: which id a callback touches, and the bytes it writes. */
static ecs_id fz_cb_id(uint64_t x) { return (ecs_id)(x % ((uint64_t)G.nids + 1)) + 1 + FZ_ID0; }   /* the last: unknown */
static void fz_mutate(unsigned char *v, uint32_t size, uint64_t h, int t) {
    for (uint32_t b = 0; b < size; b++)
        v[b] = (unsigned char)(v[b] * 5u + (unsigned)(h >> (b % 8 * 8)) + (unsigned)t + b);
}
static int fz_field_ok(const fz_sys *S, int t) {   /* may hold a field: a sized AND / OPTIONAL term */
    return S->terms[t].oper != ECS_NOT && fz_size(fz_kid(S->terms[t].id)) > 0;
}

typedef struct fz_cbctx { fz_res *res; int n; } fz_cbctx;
static void fz_push(fz_cbctx *c, uint64_t v, long inj0) {
    if (c->n < FZ_MAXRES) { c->res[c->n].v = v; c->res[c->n].inj = fz_injected() != inj0; }
    c->n++;
}
#define FZ_LOG(c, expr) do { long i0_ = fz_injected(); uint64_t v_ = (uint64_t)(expr); fz_push((c), v_, i0_); } while (0)

static void fz_spin(void) {
    volatile uint64_t x = 0;
    for (int i = 0; i < 20000; i++) x = x + (uint64_t)i;
}

/* ---- events in system callbacks (the library's side) --------------------- */
/* A batch's event choices: a function of its system, chunk or batch number and dt. */
static uint64_t fz_ev_hash(const fz_sys *S, int chunk, int seq) {
    uint32_t dtb = (uint32_t)(G.dt * 4.0f);
    return fz_mix(S->seed ^ 0xE7E7, (uint64_t)(uint32_t)chunk << 16 | (uint64_t)(uint32_t)seq << 8 | dtb);
}
/* Its first event type (model id) that it emits (in 1) or not (in 0), or -1. */
static int fz_ev_first(const fz_sys *S, int emits, int in) {
    for (int k = 0; k < G.nids; k++)
        if (G.ids[k].ev && (emits ? fz_emits(S, k) : (int)(S->rdmask >> k & 1)) == in) return k;
    return -1;
}
/* The entity a batch-level event carries: a pending handle the batch made
   (if it made one, else none), a row, or a pending handle that resolves to
   nothing. */
static ecs_entity fz_ev_handle(unsigned sel, ecs_entity spawned, ecs_entity first) {
    switch (sel & 3) {
    case 0: case 1: return spawned;
    case 2: return first;
    default: return spawned ? spawned + 5 : 1ull << 63 | 0x7FFFull << 24 | 3;
    }
}
/* A pointer an emit handed out: 0 NULL, 1 aligned for the type, 2 not. */
static uint64_t fz_slot(const void *p, int k) {
    uint32_t al = G.ids[k].align ? G.ids[k].align : 1;
    return !p ? 0 : (uintptr_t)p % al ? 2 : 1;
}
/* Each event type it reads: the count, the payloads' hash and the array. */
static void fz_ev_reads(ecs_iter *it, const fz_sys *S, int seq, fz_cbctx *c) {
    if (!(S->evb & E_READ) || !S->rdmask) return;
    uint64_t he = fz_ev_hash(S, it->chunk, seq);
    for (int k = 0; k < G.nids; k++) {
        if (!(S->rdmask >> k & 1)) continue;
        int n = -1;
        long i0 = fz_injected();
        const void *p = he >> k & 1 ? ecs_events_sized(it, G.ids[k].lib, fz_size(k), &n)
                                    : ecs_events(it, G.ids[k].lib, &n);
        fz_push(c, (uint64_t)(int64_t)n, i0);
        fz_push(c, n > 0 && p && fz_size(k) ? fz_fnv(FZ_FNV0, p, (size_t)n * fz_size(k)) : FZ_FNV0, i0);
        fz_push(c, (uint64_t)(uintptr_t)p, i0);
    }
}
/* One event of type k, made the way path says (ecs_emit, ecs_emit_new, the
   batch's emitter: em/emst per type, 0 not got, 1 got, 2 failed). */
static void fz_ev_emit1(ecs_iter *it, fz_sys *S, int k, int path, const unsigned char *v, ecs_emitter **em,
                        uint8_t *emst, fz_cbctx *c) {
    ecs_id id = G.ids[k].lib;
    uint32_t size = fz_size(k);
    long i0 = fz_injected();
    switch (path) {
    case 0: fz_push(c, (uint64_t)ecs_emit(it, id, size ? v : NULL), i0); break;
    case 1: {
        unsigned char *p = (unsigned char *)ecs_emit_new(it, id, size);
        fz_push(c, fz_slot(p, k), i0);
        if (p && size) memcpy(p, v, size);
        break;
    }
    default: {
        if (!emst[k]) {
            em[k] = ecs_emitter_get(it, id, size);
            emst[k] = em[k] ? 1 : 2;
            fz_push(c, em[k] != NULL, i0);
            i0 = fz_injected();
            if (em[k] && S->chunk <= 0) { S->kept[k] = em[k]; S->lib_got |= 1u << k; }
        }
        if (emst[k] == 2) break;
        unsigned char *p = (unsigned char *)ecs_emitter_next(em[k], size);
        fz_push(c, fz_slot(p, k), i0);
        if (p && size) memcpy(p, v, size);
        break;
    }
    }
}
/* A batch's events: 0..3 of its emits types (E_EMIT), one per row (E_ROWS,
   one path for the batch: long runs of an emitter), and one misuse (E_BAD). */
static void fz_ev_emits(ecs_iter *it, fz_sys *S, int seq, ecs_entity spawned, fz_cbctx *c) {
    uint64_t he = fz_ev_hash(S, it->chunk, seq);
    ecs_emitter *em[FZ_MAXI];
    uint8_t emst[FZ_MAXI] = {0};
    unsigned char v[100];
    if (S->nem && (S->evb & E_EMIT))
        for (int j = 0; j < (int)(he >> 40 & 3); j++) {
            int k = fz_kid(S->emits[j % S->nem]);
            fz_ev_fill(v, k, fz_mix(he ^ 0xE0, (uint64_t)j),
                       fz_ev_handle((unsigned)(he >> (52 + 2 * j)), spawned, it->count ? it->entities[0] : 0));
            fz_ev_emit1(it, S, k, (int)((he >> (44 + 2 * j) & 3) % 3), v, em, emst, c);
        }
    if (S->nem && (S->evb & E_ROWS))
        for (int i = 0; i < it->count; i++) {
            int k = fz_kid(S->emits[i % S->nem]);
            fz_ev_fill(v, k, fz_mix(he, it->entities[i]), it->entities[i]);
            fz_ev_emit1(it, S, k, (int)((he >> 2 & 3) % 3), v, em, emst, c);
        }
    if (!(S->evb & E_BAD)) return;
    fz_fill(v, sizeof v, he >> 5);
    int kout = fz_ev_first(S, 1, 0), rout = fz_ev_first(S, 0, 0), rin = fz_ev_first(S, 0, 1);
    int n = -1;
    const void *p;
    switch ((he >> 8) % 9) {
    case 0: if (kout >= 0) FZ_LOG(c, ecs_emit(it, G.ids[kout].lib, v)); break;   /* not in its emits */
    case 1:   /* not in its reads */
        if (rout < 0) break;
        p = ecs_events(it, G.ids[rout].lib, &n);
        FZ_LOG(c, (uint64_t)(int64_t)n);
        FZ_LOG(c, p != NULL);
        break;
    case 2:   /* the wrong size */
        if (rin < 0) break;
        p = ecs_events_sized(it, G.ids[rin].lib, fz_size(rin) + 1, &n);
        FZ_LOG(c, (uint64_t)(int64_t)n);
        FZ_LOG(c, p != NULL);
        break;
    case 3: FZ_LOG(c, ecs_emit(it, fz_cb_id(he >> 16), v)); break;   /* any id */
    case 4: if (S->nem) FZ_LOG(c, ecs_emit(it, S->emits[0], NULL)); break;
    case 5: if (S->nem) FZ_LOG(c, ecs_emit_new(it, S->emits[0], fz_size(fz_kid(S->emits[0])) + 1) != NULL); break;
    case 6:   /* the wrong size: to ecs_emitter_get, to ecs_emitter_next */
        if (!S->nem) break;
        FZ_LOG(c, ecs_emitter_get(it, S->emits[0], fz_size(fz_kid(S->emits[0])) + 1) != NULL);
        if (!emst[fz_kid(S->emits[0])]) break;
        FZ_LOG(c, emst[fz_kid(S->emits[0])] == 1 &&
                  ecs_emitter_next(em[fz_kid(S->emits[0])], fz_size(fz_kid(S->emits[0])) + 1) != NULL);
        break;
    case 7: FZ_LOG(c, ecs_world_emit(it->world, S->nem && (he >> 20 & 1) ? S->emits[0] : fz_cb_id(he >> 24), v)); break;
    default: {   /* an emitter kept from an earlier frame, not got again this frame: refused */
        int k = S->nem ? fz_kid(S->emits[0]) : -1;
        if (k < 0 || !S->kept[k] || (S->lib_got >> k & 1)) break;
        FZ_LOG(c, ecs_emitter_next(S->kept[k], fz_size(k)) != NULL);
        break;
    }
    }
}

/* The library's side: one batch, every call logged. */
static void fz_behave(ecs_iter *it, fz_sys *S, int seq, fz_cbctx *c) {
    ecs_world *w = it->world;
    ecs_commands *cm = it->commands;
    uint32_t dtb = (uint32_t)(G.dt * 4.0f);
    int excl = (S->flags & ECS_SYSTEM_EXCLUSIVE) != 0;
    unsigned char val[100];
    unsigned rb = 0;
    ecs_entity spawned = 0;
    fz_ev_reads(it, S, seq, c);
    if (S->behave & B_RES) {
        for (int part = 0; part < 2; part++)
            for (int i = 0; i < (part ? S->nw : S->nr); i++) {
                ecs_id id = part ? S->writes[i] : S->reads[i];
                int k = fz_kid(id);
                if (!G.ids[k].res) continue;
                long i0 = fz_injected();
                unsigned char *p = (unsigned char *)ecs_resource_get(w, id);
                fz_push(c, p != NULL, i0);
                if (!p) continue;
                if (!part) rb ^= p[0];
                else for (uint32_t b = 0; b < fz_size(k); b++) p[b] = (unsigned char)(p[b] + it->count + b + 1);
            }
        if (S->behave & B_BAD)
            for (int k = 0; k < G.nids; k++)
                if (G.ids[k].res && fz_declared(S, k) < 0) { FZ_LOG(c, ecs_resource_get(w, G.ids[k].lib) != NULL); break; }
    }
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = it->entities[i];
        unsigned rv = rb;
        for (int t = 0; t < S->nt; t++) {
            unsigned char *f = (unsigned char *)ecs_field(it, t);
            if (f) { rv ^= f[(size_t)i * fz_size(fz_kid(S->terms[t].id))]; break; }
        }
        uint64_t h = fz_mix(fz_mix(S->seed, e), (uint64_t)dtb << 8 | rv);
        if (G.trace) fprintf(stderr, "    [library: system %d row %d %#llx h %#llx rv %u]\n", (int)(S - G.sys) + 1, i,
                             FZ_H(e), (unsigned long long)h, rv);
        if (S->behave & B_WRITE)
            for (int t = 0; t < S->nt; t++) {
                unsigned char *f = (unsigned char *)ecs_field(it, t);
                int k = fz_kid(S->terms[t].id);
                if (!f || !(S->terms[t].access & ECS_WRITE) || S->terms[t].oper == ECS_NOT || !fz_size(k)) continue;
                unsigned char *cell = f + (size_t)i * fz_size(k), tmp[100];
                memcpy(tmp, cell, fz_size(k));
                fz_mutate(tmp, fz_size(k), h, t);
                if (h >> (t + 1) & 1) FZ_LOG(c, ecs_set(w, e, S->terms[t].id, tmp));
                else memcpy(cell, tmp, fz_size(k));
            }
        fz_fill(val, sizeof val, h >> 24);
        if (S->behave & B_CMD) {
            ecs_id id = fz_cb_id(h >> 16);
            switch ((h >> 8) % 10) {
            case 0: FZ_LOG(c, ecs_cmd_destroy(cm, e)); break;
            case 1: FZ_LOG(c, ecs_cmd_add(cm, e, id)); break;
            case 2: FZ_LOG(c, ecs_cmd_remove(cm, e, id)); break;
            case 3: FZ_LOG(c, ecs_cmd_set(cm, e, id, (h >> 40 & 7) ? val : NULL)); break;
            case 4: FZ_LOG(c, ecs_cmd_destroy(cm, e)); FZ_LOG(c, ecs_cmd_set(cm, e, id, val)); break;
            default: break;
            }
        }
        if (S->behave & B_IMM && excl) {
            ecs_id id = fz_cb_id(h >> 44);
            switch ((h >> 32) % 6) {
            case 0: FZ_LOG(c, ecs_destroy(w, e)); break;
            case 1: FZ_LOG(c, ecs_add(w, e, id)); break;
            case 2: FZ_LOG(c, ecs_remove(w, e, id)); break;
            case 3: FZ_LOG(c, ecs_set(w, e, id, val)); break;
            default: break;
            }
        }
        if (S->behave & B_BAD && !excl) {
            ecs_id id = fz_cb_id(h >> 52);
            int k = fz_kid(id);
            switch ((h >> 48) % 11) {
            case 0: {
                long i0 = fz_injected();
                unsigned char *p = (unsigned char *)ecs_get_mut(w, e, id);
                fz_push(c, p != NULL, i0);
                if (p) fz_mutate(p, fz_size(k), h, 9);
                break;
            }
            case 1: {
                const void *p = ecs_get(w, e, id);
                if (G.trace) fprintf(stderr, "    [library ecs_get(%#llx, id %u) = %p: %s]\n", FZ_H(e), id, p, ecs_last_error(w));
                FZ_LOG(c, p != NULL);
                break;
            }
            case 2: FZ_LOG(c, ecs_destroy(w, e)); break;
            case 3: FZ_LOG(c, ecs_add(w, e, id)); break;
            case 4: FZ_LOG(c, ecs_set(w, e, id, val)); break;
            case 5: FZ_LOG(c, ecs_create(w)); break;
            case 6:
                if (S->nt) {
                    int t = (int)(h >> 56) % S->nt;
                    FZ_LOG(c, ecs_field_sized(it, t, fz_size(fz_kid(S->terms[t].id)) + 1) != NULL);
                }
                break;
            case 7:
                if (G.check_reads && G.threads == 1 && !G.shuffled)
                    for (int t = 0; t < S->nt; t++) {
                        unsigned char *f = (unsigned char *)ecs_field(it, t);
                        int j = fz_declared(S, fz_kid(S->terms[t].id));
                        if (!f || (S->terms[t].access & ECS_WRITE) || j < 0 || S->acc_w[j] ||
                            fz_sorted_key(fz_kid(S->terms[t].id)))
                            continue;
                        f[(size_t)i * fz_size(fz_kid(S->terms[t].id))] ^= 0x5A;
                        FZ_LOG(c, t);
                        break;
                    }
                break;
            case 8: FZ_LOG(c, ecs_remove(w, e, id)); break;
            case 9: FZ_LOG(c, ecs_cmd_add(cm, 1ull << 63 | 0xFFFFFF, id)); break;
            default: FZ_LOG(c, ecs_set_parent(w, e, 0)); break;
            }
        }
    }
    uint64_t hb = fz_mix(S->seed ^ 0x5B, (uint64_t)it->chunk << 16 | (uint64_t)seq << 8 | dtb);
    fz_fill(val, sizeof val, hb);
    if (S->behave & B_NESTED && G.nq) {   /* a query loop inside the system */
        const fz_query *q = &G.qs[(hb >> 4) % (unsigned)G.nq];
        uint64_t qh = FZ_FNV0;
        long i0 = fz_injected();   /* (a sorted loop's sort may run out of memory: an empty loop) */
        for (ecs_iter qi = ecs_query_iter(w, q->q); ecs_query_next(&qi);) {
            qh = fz_fnv64(qh, (uint64_t)qi.count);
            for (int r = 0; r < qi.count; r++) qh = fz_fnv64(qh, qi.entities[r]);
            for (int t = 0; t < q->nt; t++) {
                const void *f = ecs_field(&qi, t);
                if (f) qh = fz_fnv(qh, f, (size_t)qi.count * fz_size(q->k[t]));
            }
        }
        fz_push(c, qh, i0);
    }
    if (S->behave & B_SPAWN && ecs_count(w) < 200 && (S->chunk > 0 ? it->chunk < 4 : seq < 2)) {
        long i0 = fz_injected();
        ecs_entity p = ecs_cmd_create(cm);
        fz_push(c, p, i0);
        if (!p && G.trace) fprintf(stderr, "    [ecs_cmd_create in system %d: %s; injected %ld -> %ld, slot %d]\n", (int)(S - G.sys) + 1, ecs_last_error(w), i0, fz_injected(), c->n - 1);
        if (p) {
            ecs_id id1 = fz_cb_id(hb), id2 = fz_cb_id(hb >> 8);
            FZ_LOG(c, ecs_cmd_set(cm, p, id1, val));
            FZ_LOG(c, ecs_cmd_add(cm, p, id2));
            if (hb >> 16 & 1) FZ_LOG(c, ecs_cmd_remove(cm, p, id1));
            if (hb >> 17 & 1) FZ_LOG(c, ecs_cmd_destroy(cm, p));
        }
        spawned = p;
    }
    if (S->b2 & P_INST && ecs_count(w) < 200 && (S->chunk > 0 ? it->chunk < 4 : seq < 2)) {
        long i0 = fz_injected();
        ecs_entity p = ecs_cmd_instantiate(cm, S->pf);
        fz_push(c, p, i0);
        if (p) FZ_LOG(c, ecs_cmd_set(cm, p, fz_cb_id(hb >> 40), val));
    }
    fz_ev_emits(it, S, seq, spawned, c);
    if (S->behave & B_IMM2 && excl && seq < 4) {
        if (S->behave & B_DEFER) FZ_LOG(c, ecs_defer_begin(w));
        ecs_id id1 = fz_cb_id(hb >> 20), id2 = fz_cb_id(hb >> 28);
        if (ecs_count(w) < 200) {
            long i0 = fz_injected();
            ecs_entity e2 = ecs_create(w);
            fz_push(c, e2, i0);
            if (e2) { FZ_LOG(c, ecs_set(w, e2, id1, val)); FZ_LOG(c, ecs_add(w, e2, id2)); }
        }
        for (int ti = 0; ti < 2; ti++) {
            ecs_entity tg = S->target[ti];
            ecs_id id = fz_cb_id(hb >> (36 + ti * 8));
            switch ((hb >> (52 + ti * 4)) % 6) {
            case 0: FZ_LOG(c, ecs_destroy(w, tg)); break;
            case 1: FZ_LOG(c, ecs_add(w, tg, id)); break;
            case 2: FZ_LOG(c, ecs_remove(w, tg, id)); break;
            case 3: FZ_LOG(c, ecs_set(w, tg, id, val)); break;
            case 4: break;
            default: FZ_LOG(c, ecs_set_parent(w, tg, ti ? S->target[0] : 0)); break;
            }
        }
        if (S->behave & B_DEFER && !(S->behave & B_DEFER_OPEN)) FZ_LOG(c, ecs_defer_end(w));
    }
    if (S->b2 & P_IMMI && seq < 4 && ecs_count(w) < 200) {   /* BUSY but in an exclusive system */
        ecs_entity out = 0;
        long i0 = fz_injected();
        ecs_result r = ecs_instantiate_many(w, S->pf, 1, &out);
        fz_push(c, (uint64_t)r, i0);
        fz_push(c, out, i0);
    }
    if (S->behave & B_SLOW) fz_spin();
}

static uint64_t fz_fieldhash_lib(const ecs_iter *it, const fz_sys *S) {
    uint64_t h = FZ_FNV0;
    for (int t = 0; t < S->nt; t++) {
        const void *f = ecs_field(it, t);
        h = fz_fnv64(h, f ? 1 : 0);
        if (f) h = fz_fnv(h, f, (size_t)it->count * fz_size(fz_kid(S->terms[t].id)));
    }
    return h;
}

static void fz_sys_fn(ecs_iter *it) {
    fz_sys *S = (fz_sys *)it->ctx;
    fz_res res[FZ_MAXRES];
    fz_cbctx c = {res, 0};
    const char *bad = NULL;
    int main_only = (S->flags & (ECS_SYSTEM_MAIN_THREAD | ECS_SYSTEM_EXCLUSIVE)) != 0;
    if (it->system != S->lib) bad = "it->system";
    else if (it->world != G.w) bad = "it->world";
    else if (it->dt != G.dt) bad = "it->dt";
    else if (!it->commands) bad = "it->commands";
    else if (it->thread < 0 || it->thread >= G.threads || (main_only && it->thread != 0)) bad = "it->thread";
    else if (S->chunk == 0 && it->chunk != 0) bad = "it->chunk";
    else if (it->count < 0 || (S->nt == 0 && it->count != 0) || (it->count && !it->entities)) bad = "it->count";
    int seq = S->chunk > 0 ? 0 : atomic_fetch_add(&S->seq, 1);
    uint64_t fh = bad ? 0 : fz_fieldhash_lib(it, S), group = bad ? 0 : ecs_iter_group(it);
    if (!bad && !S->inert) fz_behave(it, S, seq, &c);
    else if (!bad) fz_ev_reads(it, S, seq, &c);   /* inert systems only look (events too) */
    int li = atomic_fetch_add(&G.log_n, 1);
    unsigned eo = atomic_fetch_add(&G.log_pool_n, (unsigned)(it->count > 0 ? it->count : 0));
    unsigned ro = atomic_fetch_add(&G.log_res_n, (unsigned)c.n);
    if (li >= FZ_LOG_ENTS || eo + (unsigned)(it->count > 0 ? it->count : 0) > FZ_LOG_POOL ||
        ro + (unsigned)c.n > FZ_LOG_POOL || c.n > FZ_MAXRES) {
        G.log_overflow = 1;   /* read only after the frame */
        return;
    }
    fz_logent *L = &G.log[li];
    L->sys = (int)(S - G.sys); L->chunk = it->chunk; L->thread = it->thread; L->count = it->count; L->seq = seq;
    L->ent_off = eo; L->res_off = ro; L->res_n = (uint32_t)c.n; L->fieldhash = fh; L->bad = bad; L->group = group;
    for (int i = 0; i < it->count && !bad; i++) G.log_ents[eo + (unsigned)i] = it->entities[i];
    memcpy(&G.log_res[ro], res, (size_t)c.n * sizeof *res);
}

/* ---- the model of a frame ------------------------------------------------ */
static int fz_sys_match(const fz_sys *S, uint32_t mask) {
    if (mask & FZ_PFB) return 0;   /* system terms never name the prefab tag here */
    for (int i = 0; i < S->nt; i++) {
        int has = (int)(mask >> fz_kid(S->terms[i].id) & 1);
        if (S->terms[i].oper == ECS_AND && !has) return 0;
        if (S->terms[i].oper == ECS_NOT && has) return 0;
    }
    return 1;
}
/* The batches a (non-exclusive) system gets now: tables in creation order,
   chunks in row order. */
static int fz_predict(const fz_sys *S, fz_batch *out, int max) {
    int n = 0;
    if (!S->nt) { out[0].tab = -1; out[0].row = out[0].n = 0; return 1; }
    if (S->oq.sorted) return m_query_batches(&S->oq, out, max);   /* its runs */
    static fz_batch tabs[FZ_MAXTAB];
    int ntabs = m_query_batches(&S->oq, tabs, FZ_MAXTAB);   /* (group, table) order */
    for (int i = 0; i < ntabs; i++) {
        int t = tabs[i].tab;
        uint32_t rows = G.m.tab[t].n;
        uint32_t step = S->chunk > 0 ? (uint32_t)S->chunk : rows;
        for (uint32_t r = 0; r < rows; r += step) {
            if (n == max) fz_bail("too many batches");
            out[n].tab = t; out[n].row = r; out[n].n = rows - r < step ? rows - r : step;
            n++;
        }
    }
    return n;
}
static int fz_has_work(const fz_sys *S) {
    if (!S->nt) return 1;
    for (int t = 0; t < G.m.ntab; t++)
        if (G.m.tab[t].n && fz_sys_match(S, G.m.tab[t].mask)) return 1;
    return 0;
}
static fz_list *fz_sysbuf(fz_sys *S, int chunk) {
    if (chunk >= S->nbuf) {
        int n = chunk + 1;
        S->buf = (fz_list *)realloc(S->buf, (size_t)n * sizeof *S->buf);
        S->serial_seen = (uint64_t *)realloc(S->serial_seen, (size_t)n * sizeof *S->serial_seen);
        if (!S->buf || !S->serial_seen) { fprintf(stderr, "fuzz_api: out of memory\n"); abort(); }
        for (int i = S->nbuf; i < n; i++) { memset(&S->buf[i], 0, sizeof S->buf[i]); S->serial_seen[i] = 0; }
        S->nbuf = n;
    }
    return &S->buf[chunk];
}

/* After a failure in a frame the library may hold tables the model has not
   made yet (empty ones): insert them where the library has them. */
static void m_insert_tab(fz_model *m, int at, uint32_t mask) {
    if (m->ntab == FZ_MAXTAB) fz_bail("too many tables for the model");
    for (int t = m->ntab; t > at; t--) { m->tab[t].mask = m->tab[t - 1].mask; m->tab[t].n = m->tab[t - 1].n;
        memcpy(m->tab[t].rows, m->tab[t - 1].rows, m->tab[t].n * sizeof(uint16_t)); m->lock[t] = m->lock[t - 1]; }
    m->tab[at].mask = mask; m->tab[at].n = 0; m->lock[at] = 0;
    m->ntab++;
    for (uint32_t s = 0; s < m->nrec; s++)
        if (m->rec[s].state == FZ_LIVE && m->rec[s].table >= at) m->rec[s].table++;
    for (int i = 0; i < FZ_MAXIT; i++) {
        fz_iter *I = &G.its[i];
        if (!I->active) continue;
        if (I->cur >= at) I->cur++;
        if (I->lastt >= at) I->lastt++;
        if (!I->sorted) continue;
        for (int r = 0; r < I->nruns; r++) if (g_runs[i][r].tab >= at) g_runs[i][r].tab++;
        memmove(&g_itlock[i][at + 1], &g_itlock[i][at], (size_t)(m->ntab - 1 - at));
        g_itlock[i][at] = 0;
    }
}
static void fz_sync_tables_all(fz_model *m) {
    int n = lib_table_count(), j = 0;
    for (int i = 0; i < n; i++, j++) {
        uint32_t mask = lib_table_mask(i);
        if (j < m->ntab && m->tab[j].mask == mask) continue;
        FZ_CHECK(m_find_tab(m, mask) < 0 && G.w->tab.tables[i]->count == 0,
                 "library table %d (mask %#x) is out of the model's order", i, mask);
        m_insert_tab(m, j, mask);
    }
    FZ_CHECK(j == m->ntab, "the model has %d tables, the library %d", m->ntab, n);
}

static int fz_sys_match(const fz_sys *S, uint32_t mask);
/* ecs__query_access_ok: may system S iterate query q inside? */
static int mc_query_access(const fz_sys *S, int excl, const fz_query *q) {
    if (excl) return 1;
    for (int t = 0; t < q->nt; t++) {
        if (q->oper[t] == ECS_NOT) continue;
        int j = fz_declared(S, q->k[t]), write = (q->acc[t] & ECS_WRITE) != 0;
        if (j < 0 || (write && !S->acc_w[j])) return 0;
        if (S->chunk > 0 && S->acc_w[j]) return 0;
        if (S->dj && !(S->acc_l[j] & (write ? 2 : 3)))
            for (int f = 0; f < S->nt; f++) {
                if (S->terms[f].oper == ECS_OPTIONAL) continue;
                int g = 0;
                while (g < q->nt && !(q->k[g] == fz_kid(S->terms[f].id) && q->oper[g] == (int)S->terms[f].oper)) g++;
                if (g == q->nt) return 0;
            }
    }
    return 1;
}

/* the model of one callback batch */
typedef struct fz_mctx {
    fz_sys *S;
    const fz_logent *L;
    uint32_t ri;
    int excl, btab;
    uint32_t brow, bn;
    fz_list *cl;
    int chunk;
} fz_mctx;
static int g_nomem_rec, g_nomem_imm;

static const fz_res *mc_next(fz_mctx *mc, const char *what) {
    FZ_CHECK(mc->ri < mc->L->res_n, "system %d made fewer calls than the model (%s)", (int)(mc->S - G.sys) + 1, what);
    const fz_res *r = &G.log_res[mc->L->res_off + mc->ri++];
    if (G.trace) fprintf(stderr, "    system %d call %u: %s -> %#llx%s\n", (int)(mc->S - G.sys) + 1, mc->ri - 1, what,
                         (unsigned long long)r->v, r->inj ? " (allocation failed)" : "");
    return r;
}
/* 1: the call did what the model says (want); 0: it failed for lack of
   memory (fail is its failure value). */
static int mc_take(fz_mctx *mc, uint64_t want, uint64_t fail, const char *what) {
    const fz_res *r = mc_next(mc, what);
    if (r->v == want) return 1;
    FZ_CHECK(r->v == fail && r->inj && want != fail, "system %d, %s: the call gave %#llx, the model says %#llx",
             (int)(mc->S - G.sys) + 1, what, (unsigned long long)r->v, (unsigned long long)want);
    return 0;
}
static void mc_refuse(void) { G.refusals++; }
/* ecs__access_ok inside the system (k a model id, e 0 for a resource) */
static int mc_access(const fz_mctx *mc, int k, int write, ecs_entity e) {
    if (mc->excl) return 1;
    const fz_sys *S = mc->S;
    int j = fz_declared(S, k);
    if (j < 0 || (write && !S->acc_w[j])) return 0;
    if (S->dj && !(S->acc_l[j] & (write ? 2 : 3)) && e &&
        !fz_sys_match(S, G.m.tab[G.m.rec[(uint32_t)e].table].mask))
        return 0;
    if (S->chunk > 0 && S->acc_w[j]) {
        if (!e) return 0;
        const fz_rec *r = &G.m.rec[(uint32_t)e];
        return r->table == mc->btab && r->row >= mc->brow && r->row < mc->brow + mc->bn;
    }
    return 1;
}
static int mc_field(const fz_mctx *mc, int t) {   /* the batch has a field for term t */
    return mc->btab >= 0 && fz_field_ok(mc->S, t) &&
           (G.m.tab[mc->btab].mask >> fz_kid(mc->S->terms[t].id) & 1);
}
/* recording into the batch's own buffer */
static void mc_cmd(fz_mctx *mc, fz_list *L, int op, ecs_entity e, ecs_id id, const void *v, const char *what) {
    int want = m_cmd_check(L, op, e, id, v);
    if (mc_take(mc, (uint64_t)want, ECS_ERR_NOMEM, what)) { if (!want) m_cmd_record(L, op, e, id, v); }
    else g_nomem_rec = 1;
}
/* immediate destroy / add / remove / set (kind 0..3) from a system */
static void mc_struct(fz_mctx *mc, int kind, ecs_entity e, ecs_id id, const unsigned char *v, const char *what) {
    int k = fz_kid(id);
    int want = m_target(e);
    if (!want && kind && !fz_addable(id)) want = ECS_ERR_ARG;
    if (!want && kind == 3 && m_alive(&G.m, e) && m_has(&G.m, (uint32_t)e, k) && !mc_access(mc, k, 1, e)) {
        FZ_CHECK(mc_take(mc, ECS_ERR_ACCESS, ECS_ERR_NOMEM, what), "refused");
        mc_refuse();
        return;
    }
    if (!want && fz_deferring()) {
        static const int ops[4] = {C_DESTROY, C_ADD, C_REMOVE, C_SET};
        int op = ops[kind];
        if (op == C_SET && !fz_size(k)) op = C_ADD;
        if (mc_take(mc, ECS_OK, ECS_ERR_NOMEM, what)) l_push(&G.defer, op, kind ? k : -1, -1, e, v);
        else g_nomem_imm = 1;
        return;
    }
    if (want) { mc_take(mc, (uint64_t)want, ECS_ERR_NOMEM, what); return; }
    uint32_t s = (uint32_t)e;
    int dst = -2;
    if (kind == 0) want = m_destroy_predict(&G.m, s);
    else if (kind == 2) { want = m_remove_predict(&G.m, s, k); dst = m_find_tab(&G.m, m_mask(&G.m, s) & ~(1u << k)); }
    else { want = m_add_predict(&G.m, s, k); dst = m_find_tab(&G.m, m_mask(&G.m, s) | 1u << k); }
    if (!mc_take(mc, (uint64_t)want, ECS_ERR_NOMEM, what)) {
        g_nomem_imm = 1;
        if (dst == -1) fz_bail("an immediate call in a frame failed and may have made a table");
        return;
    }
    if (want) return;
    switch (kind) {
    case 0: m_destroy(&G.m, s); break;
    case 1: m_add(&G.m, s, k, NULL); break;
    case 2: m_remove(&G.m, s, k); break;
    default: m_add(&G.m, s, k, v); break;
    }
}
/* ecs_set_parent from a system */
static void mc_set_parent(fz_mctx *mc, ecs_entity child, ecs_entity parent, const char *what) {
    int want = m_target(child);
    if (!want && parent) want = m_target(parent);
    if (!want && parent == child) want = ECS_ERR_ARG;
    if (!want && fz_deferring()) {
        if (mc_take(mc, ECS_OK, ECS_ERR_NOMEM, what)) m_cmd_record_parent(&G.defer, child, parent);
        else g_nomem_imm = 1;
        return;
    }
    if (!want && G.phase_systems) want = ECS_ERR_BUSY;
    if (!want && m_set_parent_bad(&G.m, (uint32_t)child, parent)) want = ECS_ERR_ARG;
    if (!mc_take(mc, (uint64_t)want, ECS_ERR_NOMEM, what)) { g_nomem_imm = 1; return; }
    if (!want) m_set_parent(&G.m, (uint32_t)child, parent);
}
static ecs_entity m_next_handle(void) {
    if (G.m.nfree) return m_h(&G.m, G.m.freel[G.m.nfree - 1]);
    return fz_handle(G.m.nrec, 1);
}
static void mc_defer_end(fz_mctx *mc) {
    int want;
    if (G.defer_depth == 0) {
        if (!l_left(&G.defer)) { mc_take(mc, ECS_ERR_ARG, ECS_ERR_NOMEM, "ecs_defer_end"); return; }
    } else if (G.defer_depth > 1) {
        G.defer_depth--;
        mc_take(mc, ECS_OK, ECS_ERR_NOMEM, "a nested ecs_defer_end");
        return;
    } else {
        G.defer_depth = 0;
    }
    const fz_res *r = mc_next(mc, "ecs_defer_end");
    if (r->v == ECS_ERR_NOMEM && r->inj) fz_bail("ecs_defer_end in a system ran out of memory part way");
    fz_list *ls[1] = {&G.defer};
    want = seq_apply(&G.m, ls, 1, -1);
    FZ_CHECK(r->v == (uint64_t)want, "ecs_defer_end in exclusive system %d = %s, the model says %s",
             (int)(mc->S - G.sys) + 1, ecs_result_str((ecs_result)r->v), ecs_result_str((ecs_result)want));
}

static uint64_t m_fieldhash(const fz_mctx *mc) {
    uint64_t h = FZ_FNV0;
    for (int t = 0; t < mc->S->nt; t++) {
        int has = mc_field(mc, t);
        h = fz_fnv64(h, has ? 1 : 0);
        if (!has) continue;
        int k = fz_kid(mc->S->terms[t].id);
        for (uint32_t r = 0; r < mc->bn; r++) h = fz_fnv(h, m_val(&G.m, G.m.tab[mc->btab].rows[mc->brow + r], k), fz_size(k));
    }
    return h;
}

/* ---- events in system callbacks (the model's side) ----------------------- */
static unsigned char *m_log_at(int k, uint64_t i) { return G.evl[k].data + (size_t)(i - G.evl[k].base) * fz_size(k); }
static void mc_exact(fz_mctx *mc, uint64_t want, const char *what) {   /* a call that cannot fail */
    const fz_res *r = mc_next(mc, what);
    FZ_CHECK(r->v == want, "system %d, %s: the call gave %#llx, the model says %#llx", (int)(mc->S - G.sys) + 1, what,
             (unsigned long long)r->v, (unsigned long long)want);
}
/* What fz_ev_reads logged: per type it reads, this run's window [lo, hi),
   the same array in every batch of the run. */
static void fz_sim_reads(fz_mctx *mc) {
    fz_sys *S = mc->S;
    if (!(S->evb & E_READ) || !S->rdmask) return;
    int si = (int)(S - G.sys) + 1;
    for (int k = 0; k < G.nids; k++) {
        if (!(S->rdmask >> k & 1)) continue;
        uint64_t n = S->hi[k] - S->lo[k];
        uint32_t size = fz_size(k), al = G.ids[k].align ? G.ids[k].align : 1;
        const fz_res *rn = mc_next(mc, "ecs_events (count)");
        const fz_res *rh = mc_next(mc, "ecs_events (payloads)");
        const fz_res *rp = mc_next(mc, "ecs_events (array)");
        FZ_CHECK(rn->v == n, "system %d (chunk %d, batch %d): %lld events of type %d, the model has %llu (events %llu..%llu)",
                 si, mc->L->chunk, mc->L->seq, (long long)rn->v, k, (unsigned long long)n,
                 (unsigned long long)S->lo[k], (unsigned long long)S->hi[k]);
        uint64_t h = n && size ? fz_fnv(FZ_FNV0, m_log_at(k, S->lo[k]), (size_t)n * size) : FZ_FNV0;
        FZ_CHECK(rh->v == h, "system %d (chunk %d, batch %d): the payloads of type %d (events %llu..%llu) differ from the model",
                 si, mc->L->chunk, mc->L->seq, k, (unsigned long long)S->lo[k], (unsigned long long)S->hi[k]);
        if (!n) { FZ_CHECK(rp->v == 0, "system %d: ecs_events of type %d without events is not NULL", si, k); continue; }
        FZ_CHECK(rp->v && rp->v % al == 0, "system %d: ecs_events of type %d = %#llx (alignment %u)", si, k,
                 (unsigned long long)rp->v, al);
        if (S->runptr_set >> k & 1)
            FZ_CHECK(rp->v == S->runptr[k], "system %d: batches of one run got different arrays of type %d (%#llx, then "
                     "%#llx in chunk %d, batch %d)", si, k, (unsigned long long)S->runptr[k], (unsigned long long)rp->v,
                     mc->L->chunk, mc->L->seq);
        else { S->runptr[k] = rp->v; S->runptr_set |= 1u << k; }
        FZ_STAT(ST_EV_READS);
    }
}
static void mc_ev_push(fz_mctx *mc, int k, const unsigned char *v) { m_ev_push(mc->cl, k, v); FZ_STAT(ST_EV_EMITTED); }
static void mc_ev_emit1(fz_mctx *mc, int k, int path, const unsigned char *v, uint8_t *emst) {
    fz_sys *S = mc->S;
    switch (path) {
    case 0: if (mc_take(mc, ECS_OK, ECS_ERR_NOMEM, "ecs_emit")) mc_ev_push(mc, k, v); else g_nomem_rec = 1; break;
    case 1: if (mc_take(mc, 1, 0, "ecs_emit_new")) mc_ev_push(mc, k, v); else g_nomem_rec = 1; break;
    default:
        if (!emst[k]) {
            emst[k] = mc_take(mc, 1, 0, "ecs_emitter_get") ? 1 : 2;
            if (emst[k] == 2) g_nomem_rec = 1;
            else if (S->chunk <= 0) { S->m_kept |= 1u << k; S->m_got |= 1u << k; }
        }
        if (emst[k] == 2) break;
        if (mc_take(mc, 1, 0, "ecs_emitter_next")) mc_ev_push(mc, k, v); else g_nomem_rec = 1;
        break;
    }
}
/* ecs_emit(it, id, v) from the batch's system: the checks in their order. */
static void mc_ev_emit_any(fz_mctx *mc, ecs_id id, const unsigned char *v, const char *what) {
    int k = fz_kid(id);
    if (!fz_is_ev(id)) { mc_exact(mc, ECS_ERR_ARG, what); return; }
    if (!fz_emits(mc->S, k)) { mc_exact(mc, ECS_ERR_ACCESS, what); mc_refuse(); return; }
    if (!v && fz_size(k)) { mc_exact(mc, ECS_ERR_ARG, what); return; }
    if (mc_take(mc, ECS_OK, ECS_ERR_NOMEM, what)) mc_ev_push(mc, k, v); else g_nomem_rec = 1;
}
/* The model's side of fz_ev_emits. */
static void fz_sim_events(fz_mctx *mc, ecs_entity spawned) {
    fz_sys *S = mc->S;
    uint64_t he = fz_ev_hash(S, mc->L->chunk, mc->L->seq);
    uint8_t emst[FZ_MAXI] = {0};
    unsigned char v[100];
    ecs_entity first = mc->bn ? m_h(&G.m, G.m.tab[mc->btab].rows[mc->brow]) : 0;
    if (S->nem && (S->evb & E_EMIT))
        for (int j = 0; j < (int)(he >> 40 & 3); j++) {
            int k = fz_kid(S->emits[j % S->nem]);
            fz_ev_fill(v, k, fz_mix(he ^ 0xE0, (uint64_t)j), fz_ev_handle((unsigned)(he >> (52 + 2 * j)), spawned, first));
            mc_ev_emit1(mc, k, (int)((he >> (44 + 2 * j) & 3) % 3), v, emst);
        }
    if (S->nem && (S->evb & E_ROWS))
        for (uint32_t i = 0; i < mc->bn; i++) {
            ecs_entity e = m_h(&G.m, G.m.tab[mc->btab].rows[mc->brow + i]);
            int k = fz_kid(S->emits[i % (uint32_t)S->nem]);
            fz_ev_fill(v, k, fz_mix(he, e), e);
            mc_ev_emit1(mc, k, (int)((he >> 2 & 3) % 3), v, emst);
        }
    if (!(S->evb & E_BAD)) return;
    fz_fill(v, sizeof v, he >> 5);
    int kout = fz_ev_first(S, 1, 0), rout = fz_ev_first(S, 0, 0), rin = fz_ev_first(S, 0, 1);
    switch ((he >> 8) % 9) {
    case 0:
        if (kout < 0) break;
        mc_exact(mc, ECS_ERR_ACCESS, "ecs_emit of a type not in its emits");
        mc_refuse();
        break;
    case 1: case 2:
        if ((he >> 8) % 9 == 1 ? rout < 0 : rin < 0) break;
        mc_exact(mc, 0, "ecs_events refused: the count");
        mc_exact(mc, 0, "ecs_events refused: NULL");
        mc_refuse();
        break;
    case 3: mc_ev_emit_any(mc, fz_cb_id(he >> 16), v, "ecs_emit of any id"); break;
    case 4: if (S->nem) mc_ev_emit_any(mc, S->emits[0], NULL, "ecs_emit with a NULL payload"); break;
    case 5: if (S->nem) mc_exact(mc, 0, "ecs_emit_new with the wrong size"); break;
    case 6:
        if (!S->nem) break;
        mc_exact(mc, 0, "ecs_emitter_get with the wrong size");
        if (emst[fz_kid(S->emits[0])]) mc_exact(mc, 0, "ecs_emitter_next with the wrong size");
        break;
    case 7: {
        ecs_id id = S->nem && (he >> 20 & 1) ? S->emits[0] : fz_cb_id(he >> 24);
        mc_exact(mc, fz_is_ev(id) ? ECS_ERR_BUSY : ECS_ERR_ARG, "ecs_world_emit in a system");
        break;
    }
    default: {
        int k = S->nem ? fz_kid(S->emits[0]) : -1;
        if (k < 0 || S->chunk > 0 || !(S->m_kept >> k & 1) || (S->m_got >> k & 1)) break;
        mc_exact(mc, 0, "ecs_emitter_next with an emitter of an earlier frame");
        break;
    }
    }
}

/* A pending handle a system's buffer handed out (ecs_cmd_create, ecs_cmd_instantiate): its
   serial new after an apply, no other buffer's, and the next index. */
static void mc_new_pending(fz_mctx *mc, ecs_entity p, const char *call) {
    fz_sys *S = mc->S;
    fz_list *cl = mc->cl;
    int si = (int)(S - G.sys) + 1;
    char what[96];
    snprintf(what, sizeof what, "%s in system %d", call, si);
    uint64_t serial = p >> 24 & ((1ull << 39) - 1);
    if (!cl->serial) {
        FZ_CHECK(serial != S->serial_seen[mc->chunk] || !serial, "system %d: a pending serial repeats after an apply",
                 si);
        for (int o = 0; o < G.nsys; o++)
            for (int b = 0; b < G.sys[o].nbuf; b++)
                FZ_CHECK(&G.sys[o].buf[b] == cl || G.sys[o].buf[b].serial != serial,
                         "two command buffers share pending serial %llu", (unsigned long long)serial);
    }
    fz_check_pending(cl, p, what);
    S->serial_seen[mc->chunk] = serial;
}
/* ecs_instantiate_many(w, S->pf, 1, &out) from a system: ECS_ERR_BUSY but in an exclusive
   one, where it is made now (or reserved in an open defer block). */
static void mc_instantiate(fz_mctx *mc) {
    ecs_entity pf = mc->S->pf, out = 0;
    int want = m_check_prefab(&G.m, pf);
    if (!want && G.phase_systems) want = ECS_ERR_BUSY;
    if (want) {
        mc_exact(mc, (uint64_t)want, "ecs_instantiate_many in a system");
    } else if (fz_deferring()) {
        if (mc_take(mc, ECS_OK, ECS_ERR_NOMEM, "ecs_instantiate_many in a defer block")) m_defer_inst(&out, pf);
        else g_nomem_imm = 1;
    } else {
        const fz_res *r = mc_next(mc, "ecs_instantiate_many in an exclusive system");
        if (r->v == ECS_ERR_NOMEM && r->inj) {
            g_nomem_imm = 1;
            if (m_inst_new_tables(&G.m, (uint32_t)pf))
                fz_bail("an instantiate in a frame failed and may have made a table");
        } else {
            int got = m_instantiate(&G.m, (uint32_t)pf, 1, -1, &out);
            FZ_CHECK(r->v == (uint64_t)got, "system %d: ecs_instantiate_many = %s, the model says %s",
                     (int)(mc->S - G.sys) + 1, ecs_result_str((ecs_result)r->v), ecs_result_str((ecs_result)got));
            if (got) out = 0;
        }
    }
    mc_exact(mc, out, "the instance ecs_instantiate_many made");
}

/* The model's side of fz_behave: the same choices, checked call by call. */
static void fz_sim_batch(fz_mctx *mc) {
    fz_sys *S = mc->S;
    const fz_logent *L = mc->L;
    int si = (int)(S - G.sys) + 1;
    FZ_CHECK(!L->bad, "system %d got a wrong %s", si, L->bad);
    FZ_CHECK((uint32_t)L->count == mc->bn, "system %d: a batch of %d rows, model %u", si, L->count, mc->bn);
    for (uint32_t i = 0; i < mc->bn; i++) {
        ecs_entity want = m_h(&G.m, G.m.tab[mc->btab].rows[mc->brow + i]);
        FZ_CHECK(G.log_ents[L->ent_off + i] == want, "system %d: batch row %u is %#llx, model %#llx (table %d, "
                 "row %u)", si, i, FZ_H(G.log_ents[L->ent_off + i]), FZ_H(want), mc->btab, mc->brow + i);
    }
    FZ_CHECK(L->fieldhash == m_fieldhash(mc), "system %d: the field values differ from the model", si);
    uint64_t wg = mc->btab >= 0 ? q_group(&S->oq, G.m.tab[mc->btab].mask) : 0;
    FZ_CHECK(L->group == wg, "system %d: ecs_iter_group = %#llx, the model %#llx (table %d)", si,
             (unsigned long long)L->group, (unsigned long long)wg, mc->btab);
    fz_sim_reads(mc);
    if (S->inert) { FZ_CHECK(mc->ri == L->res_n, "an inert system made calls"); return; }
    uint32_t dtb = (uint32_t)(G.dt * 4.0f);
    int excl = mc->excl, seq = L->seq, read_write = 0;
    unsigned char val[100];
    unsigned rb = 0;
    ecs_entity spawned = 0;
    if (S->behave & B_RES) {
        for (int part = 0; part < 2; part++)
            for (int i = 0; i < (part ? S->nw : S->nr); i++) {
                int k = fz_kid(part ? S->writes[i] : S->reads[i]);
                if (!G.ids[k].res) continue;
                int ok = mc_access(mc, k, 0, 0);
                mc_take(mc, (uint64_t)ok, 2, "ecs_resource_get");
                if (!ok) { mc_refuse(); continue; }
                if (!part) rb ^= G.resval[k][0];
                else for (uint32_t b = 0; b < fz_size(k); b++)
                    G.resval[k][b] = (unsigned char)(G.resval[k][b] + mc->bn + b + 1);
            }
        if (S->behave & B_BAD)
            for (int k = 0; k < G.nids; k++)
                if (G.ids[k].res && fz_declared(S, k) < 0) {
                    mc_take(mc, (uint64_t)excl, 2, "ecs_resource_get (undeclared)");
                    if (!excl) mc_refuse();
                    break;
                }
    }
    for (uint32_t i = 0; i < mc->bn; i++) {
        uint32_t s = G.m.tab[mc->btab].rows[mc->brow + i];
        ecs_entity e = m_h(&G.m, s);
        unsigned rv = rb;
        for (int t = 0; t < S->nt; t++)
            if (mc_field(mc, t)) { rv ^= m_val(&G.m, s, fz_kid(S->terms[t].id))[0]; break; }
        uint64_t h = fz_mix(fz_mix(S->seed, e), (uint64_t)dtb << 8 | rv);
        if (G.trace) fprintf(stderr, "    [model: system %d row %u %#llx h %#llx rv %u]\n", si, i, FZ_H(e),
                             (unsigned long long)h, rv);
        if (S->behave & B_WRITE)
            for (int t = 0; t < S->nt; t++) {
                int k = fz_kid(S->terms[t].id);
                if (!mc_field(mc, t) || !(S->terms[t].access & ECS_WRITE)) continue;
                unsigned char tmp[100];
                memcpy(tmp, m_val(&G.m, s, k), fz_size(k));
                fz_mutate(tmp, fz_size(k), h, t);
                if (h >> (t + 1) & 1) mc_struct(mc, 3, e, S->terms[t].id, tmp, "ecs_set (B_WRITE)");
                else memcpy(m_val(&G.m, s, k), tmp, fz_size(k));
            }
        fz_fill(val, sizeof val, h >> 24);
        if (S->behave & B_CMD) {
            ecs_id id = fz_cb_id(h >> 16);
            switch ((h >> 8) % 10) {
            case 0: mc_cmd(mc, mc->cl, C_DESTROY, e, 0, NULL, "ecs_cmd_destroy"); break;
            case 1: mc_cmd(mc, mc->cl, C_ADD, e, id, NULL, "ecs_cmd_add"); break;
            case 2: mc_cmd(mc, mc->cl, C_REMOVE, e, id, NULL, "ecs_cmd_remove"); break;
            case 3: mc_cmd(mc, mc->cl, C_SET, e, id, (h >> 40 & 7) ? val : NULL, "ecs_cmd_set"); break;
            case 4:
                mc_cmd(mc, mc->cl, C_DESTROY, e, 0, NULL, "ecs_cmd_destroy");
                mc_cmd(mc, mc->cl, C_SET, e, id, val, "ecs_cmd_set");
                break;
            default: break;
            }
        }
        if (S->behave & B_IMM && excl) {
            ecs_id id = fz_cb_id(h >> 44);
            unsigned a = (unsigned)((h >> 32) % 6);
            if (a < 4) mc_struct(mc, (int)a, e, a ? id : 0, val, "an immediate call on a row");
        }
        if (S->behave & B_BAD && !excl) {
            ecs_id id = fz_cb_id(h >> 52);
            int k = fz_kid(id), comp = fz_is_comp(id);
            switch ((h >> 48) % 11) {
            case 0: case 1: {
                int write = (h >> 48) % 11 == 0;
                int ok = comp ? mc_access(mc, k, write, e) : 1;
                int want = comp && ok && m_has(&G.m, s, k) && fz_size(k);
                if (G.trace) fprintf(stderr, "    [%s(%#llx, id %u): comp %d, access %d, has %d]\n", write ? "ecs_get_mut" :
                                     "ecs_get", FZ_H(e), id, comp, ok, comp ? m_has(&G.m, s, k) : 0);
                mc_take(mc, (uint64_t)want, 2, write ? "ecs_get_mut" : "ecs_get");
                if (!ok) mc_refuse();
                if (want && write) fz_mutate(m_val(&G.m, s, k), fz_size(k), h, 9);
                break;
            }
            case 2: mc_struct(mc, 0, e, 0, NULL, "ecs_destroy in a system"); break;
            case 3: mc_struct(mc, 1, e, id, NULL, "ecs_add in a system"); break;
            case 4: mc_struct(mc, 3, e, id, val, "ecs_set in a system"); break;
            case 5: mc_take(mc, 0, 1, "ecs_create in a system"); break;
            case 6:
                if (S->nt) {
                    int t = (int)(h >> 56) % S->nt;
                    mc_take(mc, 0, 1, "ECS_FIELD with a wrong size");
                    if (mc_field(mc, t)) mc_refuse();
                }
                break;
            case 7:
                if (G.check_reads && G.threads == 1 && !G.shuffled)
                    for (int t = 0; t < S->nt; t++) {
                        int kk = fz_kid(S->terms[t].id), j = fz_declared(S, kk);
                        if (!mc_field(mc, t) || (S->terms[t].access & ECS_WRITE) || j < 0 || S->acc_w[j] ||
                            fz_sorted_key(kk))
                            continue;
                        m_val(&G.m, s, kk)[0] ^= 0x5A;
                        mc_take(mc, (uint64_t)t, 999, "a write through a READ field");
                        read_write = 1;
                        break;
                    }
                break;
            case 8: mc_struct(mc, 2, e, id, NULL, "ecs_remove in a system"); break;
            case 9: mc_cmd(mc, mc->cl, C_ADD, 1ull << 63 | 0xFFFFFF, id, NULL, "ecs_cmd_add (bad pending)"); break;
            default: mc_set_parent(mc, e, 0, "ecs_set_parent in a system"); break;
            }
        }
    }
    uint64_t hb = fz_mix(S->seed ^ 0x5B, (uint64_t)L->chunk << 16 | (uint64_t)seq << 8 | dtb);
    fz_fill(val, sizeof val, hb);
    if (S->behave & B_NESTED && G.nq) {
        const fz_query *q = &G.qs[(hb >> 4) % (unsigned)G.nq];
        uint64_t qh = FZ_FNV0, fail = qh + 1;
        if (!mc_query_access(S, excl, q)) mc_refuse();
        else if (q->sorted && (q->open || (!excl && !(S->flags & ECS_SYSTEM_MAIN_THREAD)))) {
            /* ECS_ERR_BUSY: the order is the query's own state (a loop is open; or a worker could run it) */
        } else {
            static fz_batch qb[FZ_MAXSLOT];
            int nb = m_query_batches(q, qb, FZ_MAXSLOT);
            if (q->sorted) { fail = FZ_FNV0; FZ_STAT(ST_NESTED_SORTED); }   /* (the sort may run out of memory) */
            for (int b = 0; b < nb; b++) {
                const fz_tab *tb = &G.m.tab[qb[b].tab];
                uint32_t row = qb[b].row, n = qb[b].n;
                qh = fz_fnv64(qh, (uint64_t)n);
                for (uint32_t r = 0; r < n; r++) qh = fz_fnv64(qh, m_h(&G.m, tb->rows[row + r]));
                for (int i = 0; i < q->nt; i++) {
                    int k = q->k[i];
                    if (q->oper[i] == ECS_NOT || !(tb->mask >> k & 1) || !fz_size(k)) continue;
                    for (uint32_t r = 0; r < n; r++) qh = fz_fnv(qh, m_val(&G.m, tb->rows[row + r], k), fz_size(k));
                }
            }
        }
        mc_take(mc, qh, fail, "a query loop inside a system");
    }
    if (S->behave & B_SPAWN && m_count(&G.m) < 200 && (S->chunk > 0 ? L->chunk < 4 : seq < 2)) {
        fz_list *cl = mc->cl;
        const fz_res *r = mc_next(mc, "ecs_cmd_create");
        ecs_entity p = (ecs_entity)r->v;
        if (!p) {
            FZ_CHECK(r->inj, "system %d: ecs_cmd_create failed with no allocation failing", si);
            g_nomem_rec = 1;
        } else {
            mc_new_pending(mc, p, "ecs_cmd_create");
            cl->created[cl->npend] = 0;
            l_push(cl, C_CREATE, -1, cl->npend++, 0, NULL);
            ecs_id id1 = fz_cb_id(hb), id2 = fz_cb_id(hb >> 8);
            mc_cmd(mc, cl, C_SET, p, id1, val, "ecs_cmd_set (pending)");
            mc_cmd(mc, cl, C_ADD, p, id2, NULL, "ecs_cmd_add (pending)");
            if (hb >> 16 & 1) mc_cmd(mc, cl, C_REMOVE, p, id1, NULL, "ecs_cmd_remove (pending)");
            if (hb >> 17 & 1) mc_cmd(mc, cl, C_DESTROY, p, 0, NULL, "ecs_cmd_destroy (pending)");
        }
        spawned = p;
    }
    if (S->b2 & P_INST && m_count(&G.m) < 200 && (S->chunk > 0 ? L->chunk < 4 : seq < 2)) {
        fz_list *cl = mc->cl;
        const fz_res *r = mc_next(mc, "ecs_cmd_instantiate");
        ecs_entity p = (ecs_entity)r->v;
        if (m_check_prefab(&G.m, S->pf)) {
            FZ_CHECK(!p, "system %d: ecs_cmd_instantiate of %#llx, no live prefab, = %#llx", si, FZ_H(S->pf), FZ_H(p));
        } else if (!p) {
            FZ_CHECK(r->inj, "system %d: ecs_cmd_instantiate failed with no allocation failing", si);
            g_nomem_rec = 1;
        } else {
            mc_new_pending(mc, p, "ecs_cmd_instantiate");
            fz_cmd *ic = l_push(cl, C_INST, -1, cl->npend, 0, NULL);
            ic->parent = S->pf;
            cl->created[cl->npend++] = 0;
            mc_cmd(mc, cl, C_SET, p, fz_cb_id(hb >> 40), val, "ecs_cmd_set (an instance)");
        }
    }
    fz_sim_events(mc, spawned);
    if (S->behave & B_IMM2 && excl && seq < 4) {
        if (S->behave & B_DEFER) {
            if (mc_take(mc, ECS_OK, ECS_ERR_NOMEM, "ecs_defer_begin in a system")) { G.defer_exists = 1; G.defer_depth++; }
            else { FZ_CHECK(!G.defer_exists, "ecs_defer_begin failed"); g_nomem_imm = 1; }
        }
        ecs_id id1 = fz_cb_id(hb >> 20), id2 = fz_cb_id(hb >> 28);
        if (m_count(&G.m) < 200) {
            ecs_entity want = fz_deferring() || !m_locked(&G.m, 0) ? m_next_handle() : 0;
            ecs_entity e2 = 0;
            if (mc_take(mc, want, 0, "ecs_create in an exclusive system")) {
                if (want && fz_deferring()) m_defer_reserve(&e2);
                else if (want) m_create(&G.m, &e2);
            } else g_nomem_imm = 1;
            if (e2) {
                mc_struct(mc, 3, e2, id1, val, "ecs_set on a new entity");
                mc_struct(mc, 1, e2, id2, NULL, "ecs_add on a new entity");
            }
        }
        for (int ti = 0; ti < 2; ti++) {
            ecs_id id = fz_cb_id(hb >> (36 + ti * 8));
            unsigned a = (unsigned)((hb >> (52 + ti * 4)) % 6);
            if (a < 4) mc_struct(mc, (int)a, S->target[ti], a ? id : 0, a == 3 ? val : NULL, "an immediate call on a target");
            if (a == 5) mc_set_parent(mc, S->target[ti], ti ? S->target[0] : 0, "ecs_set_parent on a target");
        }
        if (S->behave & B_DEFER && !(S->behave & B_DEFER_OPEN)) mc_defer_end(mc);
    }
    if (S->b2 & P_IMMI && seq < 4 && m_count(&G.m) < 200) mc_instantiate(mc);
    FZ_CHECK(mc->ri == L->res_n, "system %d made %u calls, the model %u", si, L->res_n, mc->ri);
    FZ_STAT(ST_BATCHES);
    if (excl) FZ_STAT(ST_EXCL_BATCHES);
    if (S->chunk > 0) FZ_STAT(ST_CHUNK_BATCHES);
    fz_stats[ST_CALLS] += mc->ri;
    if (read_write) mc_refuse();
}

/* ---- the model of events in a frame -------------------------------------- */
/* Reader windows at a stage's turn: a disabled reader (or one in a disabled
   stage) drops what it would have read; one skipped by its interval keeps it,
   at most ECS_EVENT_BACKLOG per type; one that runs (or matches no rows)
   takes everything delivered since its last run. */
static void m_win_discard(fz_sys *S) {
    for (int k = 0; k < G.nids; k++) if (S->rdmask >> k & 1) S->cur[k] = G.evl[k].end;
}
static void m_win_keep(fz_sys *S) {
    for (int k = 0; k < G.nids; k++) {
        if (!(S->rdmask >> k & 1)) continue;
        uint64_t end = G.evl[k].end;
        if (end - S->cur[k] <= ECS_EVENT_BACKLOG) continue;
        S->dropped += end - S->cur[k] - ECS_EVENT_BACKLOG;
        fz_stats[ST_EV_DROPPED] += (long)(end - S->cur[k] - ECS_EVENT_BACKLOG);
        S->cur[k] = end - ECS_EVENT_BACKLOG;
    }
}
static void m_win_take(fz_sys *S) {
    for (int k = 0; k < G.nids; k++) {
        if (!(S->rdmask >> k & 1)) continue;
        S->lo[k] = S->cur[k];
        S->hi[k] = S->cur[k] = G.evl[k].end;
    }
    S->runptr_set = 0;
}
static void m_stage_windows_off(int st) {   /* a stage that takes no turn */
    for (int s = 0; s < G.nsys; s++) if (G.sys[s].stage == st) m_win_discard(&G.sys[s]);
}
/* Room for n more events of type k past the end of its log (what every
   reader has seen is dropped first). */
static void m_log_room(int k, uint64_t n) {
    fz_evlog *E = &G.evl[k];
    uint32_t size = fz_size(k) ? fz_size(k) : 1;
    if (E->end - E->base + n <= E->cap) return;
    uint64_t keep = E->end;
    for (int s = 0; s < G.nsys; s++)
        if (G.sys[s].rdmask >> k & 1 && G.sys[s].cur[k] < keep) keep = G.sys[s].cur[k];
    if (keep > E->base) {
        memmove(E->data, E->data + (size_t)(keep - E->base) * size, (size_t)(E->end - keep) * size);
        E->base = keep;
    }
    uint64_t need = E->end - E->base + n;
    if (need <= E->cap) return;
    if (need > FZ_EV_KEEP) fz_bail("more unread events than the model keeps");
    uint64_t cap = E->cap ? E->cap : 256;
    while (cap < need) cap *= 2;
    E->data = (unsigned char *)realloc(E->data, (size_t)cap * size);
    if (!E->data) { fprintf(stderr, "fuzz_api: out of memory\n"); abort(); }
    E->cap = cap;
}
/* Pending handles of L in an event's entity fields become the entities its
   commands made (as they were when its commands were applied). */
static void m_resolve(const fz_list *L, int k, unsigned char *v) {
    for (int f = 0; f < G.ids[k].nfield; f++) {
        ecs_entity h;
        memcpy(&h, v + G.ids[k].field[f], sizeof h);
        if (!(h >> 63) || !L->captured || !L->cap_serial || (h & ~(uint64_t)0xFFFFFF) != (1ull << 63 | L->cap_serial << 24) ||
            (int)(h & 0xFFFFFF) >= L->cap_npend)
            continue;
        h = L->created[h & 0xFFFFFF];
        memcpy(v + G.ids[k].field[f], &h, sizeof h);
        FZ_STAT(ST_EV_RESOLVED);
    }
}
/* The lists a sync point applies are about to be applied: what resolves
   their events' pending handles is what they hold now. */
static void fz_ev_capture(int stage) {
    for (int s = 0; s < G.nsys; s++) {
        fz_sys *S = &G.sys[s];
        if ((stage >= 0 && S->stage != stage) || !S->ran) continue;
        for (int b = 0; b < S->nbuf; b++) {
            fz_list *L = &S->buf[b];
            if (!L->nev || L->captured) continue;
            L->captured = 1;
            L->cap_serial = L->serial;
            L->cap_npend = L->npend;
        }
    }
}
/* A sync point staged events (its commands applied): ecs_world_emit's
   queue first (take_waiting: a sync point of a turn, or the first leftover
   one), then the buffers of the systems of stage (-1: all) that ran, in
   registration and chunk order, their pending handles resolved. */
static void m_stage_take(fz_list *L) {
    for (int i = 0; i < L->nev; i++) {
        m_ev_push(&G.staged, L->ev[i].k, L->ev[i].v);
        m_resolve(L, L->ev[i].k, G.staged.ev[G.staged.nev - 1].v);
    }
    L->nev = 0;
    L->captured = 0;
}
static void m_stage_sync(int stage, int take_waiting) {
    if (take_waiting) m_stage_take(&G.waiting);
    for (int s = 0; s < G.nsys && stage != -2; s++) {
        fz_sys *S = &G.sys[s];
        if ((stage >= 0 && S->stage != stage) || !S->ran) continue;
        for (int b = 0; b < S->nbuf; b++) if (S->buf[b].nev) m_stage_take(&S->buf[b]);
    }
}
/* The end of a stage's turn (or the first leftover sync point): what its
   sync points staged is delivered, in the order they staged it; the
   observers in registration order, each once with all of its type's
   (checked against the calls the library logged; their echoes queue for
   the next sync point); then readable. */
static void m_deliver(void) {
    uint64_t cnt[FZ_MAXI] = {0}, at[FZ_MAXI];
    fz_list *L = &G.staged;
    if (!L->nev) return;
    for (int i = 0; i < L->nev; i++) cnt[L->ev[i].k]++;
    for (int k = 0; k < G.nids; k++) {
        if (cnt[k]) m_log_room(k, cnt[k]);
        at[k] = G.evl[k].end;
    }
    for (int i = 0; i < L->nev; i++) {
        int k = L->ev[i].k;
        if (fz_size(k)) memcpy(m_log_at(k, at[k]++), L->ev[i].v, fz_size(k));
    }
    L->nev = 0;
    for (int o = 0; o < G.nobs; o++) {
        const fz_obs *O = &G.obs[o];
        if (O->removed || (O->skip_resim && G.resim) || !cnt[O->k]) continue;
        int k = O->k;
        FZ_CHECK(G.olog_i < G.olog_n, "observer %d was not called with %llu events of type %d", o + 1,
                 (unsigned long long)cnt[k], k);
        const fz_ologent *C = &G.olog[G.olog_i++];
        FZ_CHECK(C->o == o && C->ev == G.ids[k].lib && C->count == (int)cnt[k], "observer call %d: observer %d, "
                 "event %u, %d events; the model: observer %d, event %u, %llu events", G.olog_i - 1, C->o + 1, C->ev,
                 C->count, o + 1, G.ids[k].lib, (unsigned long long)cnt[k]);
        uint64_t h = fz_size(k) ? fz_fnv(FZ_FNV0, m_log_at(k, G.evl[k].end), (size_t)cnt[k] * fz_size(k)) : FZ_FNV0;
        FZ_CHECK(C->hash == h, "observer %d: the payloads of type %d differ from the model", o + 1, k);
        FZ_STAT(ST_OBS_CALLS);
        if (O->echo < 0) continue;
        FZ_CHECK(C->echo, "observer %d did not echo", o + 1);
        if (C->echo_r == ECS_ERR_NOMEM && C->echo_inj) { g_nomem_imm = 1; continue; }
        FZ_CHECK(C->echo_r == ECS_OK, "observer %d: ecs_world_emit = %s", o + 1, ecs_result_str((ecs_result)C->echo_r));
        unsigned char v[100];
        fz_fill(v, sizeof v, fz_mix(O->seed, h ^ cnt[k]));
        m_ev_push(&G.waiting, O->echo, v);
    }
    for (int k = 0; k < G.nids; k++) {
        G.evl[k].end += cnt[k];
        fz_stats[ST_EV_DELIVERED] += (long)cnt[k];
    }
}
/* The end of a stage's turn in a frame that ran out of memory (stage -2:
   a later sync point that only the queue may have reached): 1 if the
   library delivered everything the model has staged there (the turn's
   staged events, the queue if take_waiting, the buffers of the stage's
   systems that ran), 0 if it delivered nothing and there was only the
   queue (it waits); else the model cannot follow (bail), or the library
   delivered part (a mismatch). later: more sync points may have followed
   (the queue's, each delivering what the one before echoed), so the library
   may have delivered more than this one: the caller checks the sum. */
static int fz_ev_peek(int stage, int take_waiting, int later) {
    uint64_t cnt[FZ_MAXI] = {0};
    int listed = G.staged.nev > 0, moved = 0, still = 0;
    for (int i = 0; i < G.staged.nev; i++) cnt[G.staged.ev[i].k]++;
    if (take_waiting) for (int i = 0; i < G.waiting.nev; i++) cnt[G.waiting.ev[i].k]++;
    for (int s = 0; s < G.nsys && stage >= 0; s++) {
        const fz_sys *S = &G.sys[s];
        if (S->stage != stage || !S->ran) continue;
        for (int b = 0; b < S->nbuf; b++)
            for (int i = 0; i < S->buf[b].nev; i++) cnt[S->buf[b].ev[i].k]++, listed = 1;
    }
    for (int k = 0; k < G.nids; k++) {
        if (!G.ids[k].ev) continue;
        const ecs__evlog *L = &G.w->ev.logs[G.w->reg.ids[G.ids[k].lib].event - 1];
        if (L->base + L->count != L->end) fz_bail("events staged by a sync point that ran out of memory");
        uint64_t d = L->end - G.evl[k].end;
        FZ_CHECK(d == 0 || d == cnt[k] || (later && d > cnt[k]), "a sync point that ran out of memory delivered %llu events of type %d, the "
                 "model has %llu to deliver there: part of a delivery", (unsigned long long)d, k,
                 (unsigned long long)cnt[k]);
        if (cnt[k]) { if (d) moved = 1; else still = 1; }
    }
    if (moved && still) fz_fail("a sync point that ran out of memory delivered some event types and not others");
    if (moved) { FZ_STAT(ST_EV_OOM_DELIVERED); return 1; }
    if (still && listed) fz_bail("a sync point that ran out of memory kept its events for the next frame");
    return !still;
}
/* After a frame that stopped on a failed allocation: ecs_world_emit's
   queue delivered by sync points the model did not follow (a later stage's
   turn that ran no system), the readers' places and the stage turns as the
   library has them (which systems it reached then is not modelled). */
static void fz_ev_settle(void) {
    while (G.waiting.nev && fz_ev_peek(-2, 1, 1)) { m_stage_sync(-2, 1); m_deliver(); }
    for (int k = 0; k < G.nids; k++) {   /* the queue's deliveries, summed, are the library's */
        if (!G.ids[k].ev) continue;
        const ecs__evlog *L = &G.w->ev.logs[G.w->reg.ids[G.ids[k].lib].event - 1];
        FZ_CHECK(L->end == G.evl[k].end, "sync points after one that ran out of memory delivered %llu events of "
                 "type %d, the model %llu", (unsigned long long)(L->end - G.evl[k].base),
                 k, (unsigned long long)(G.evl[k].end - G.evl[k].base));
    }
    for (int s = 0; s < G.nsys; s++) {
        fz_sys *S = &G.sys[s];
        const ecs__system *ls = &G.w->sys.systems[S->lib - 1];
        uint64_t dropped = 0;
        for (uint32_t i = 0; i < ls->win_count; i++) {
            const ecs__window *win = &ls->win[i];
            int k = fz_kid(G.w->ev.logs[win->log].id);
            FZ_CHECK(k >= 0 && (S->rdmask >> k & 1) && win->cursor <= G.evl[k].end,
                     "system %d: a window at %llu after a frame that ran out of memory", s + 1,
                     (unsigned long long)win->cursor);
            if (win->cursor < G.evl[k].base) fz_bail("the model dropped events a reader has not seen (a frame that ran out of memory)");
            S->cur[k] = win->cursor;
            dropped += win->dropped;
        }
        S->dropped = dropped;
    }
    for (int st = 0; st < G.nstages; st++) G.turns[st] = G.w->sys.stages[st].turns;
}

/* ---- running a frame ----------------------------------------------------- */
static int g_sysent[FZ_MAXSYS][FZ_LOG_ENTS];
static int g_nsysent[FZ_MAXSYS];
static fz_batch g_batches[FZ_LOG_ENTS];

/* The lists a sync point applies: the stage's systems that ran, in
   registration order, their non-empty buffers in chunk order. */
static void fz_sync_seq(int stage, fz_seq *q) {
    for (int st = stage < 0 ? 0 : stage; st < (stage < 0 ? G.nstages : stage + 1); st++)   /* stage order */
        for (int s = 0; s < G.nsys; s++) {
            fz_sys *S = &G.sys[s];
            if (S->stage != st || !S->ran) continue;
            for (int b = 0; b < S->nbuf; b++)
                if (S->buf[b].n) {
                    if (q->n == (int)(sizeof q->l / sizeof q->l[0])) fz_bail("too many command lists");
                    q->l[q->n++] = &S->buf[b];
                }
        }
}
/* After a sync: systems whose buffers are all applied are done. */
static void fz_sync_done(int stage) {
    for (int st = stage < 0 ? 0 : stage; st < (stage < 0 ? G.nstages : stage + 1); st++)
        for (int s = 0; s < G.nsys; s++) {
            fz_sys *S = &G.sys[s];
            if (S->stage != st || !S->ran) continue;
            int left = 0;
            for (int b = 0; b < S->nbuf; b++) left |= S->buf[b].n > 0;
            if (left) return;
            S->ran = 0;
        }
}
static void fz_sync_full(int stage, const char *what, int take_waiting) {
    fz_seq q;
    q.n = 0;
    fz_ev_capture(stage);
    fz_sync_seq(stage, &q);
    int r = seq_apply(&G.m, q.l, q.n, -1);
    FZ_CHECK(r == 0, "%s: the model's sync point stopped (%s)", what, ecs_result_str((ecs_result)r));
    m_stage_sync(stage, take_waiting);
    fz_sync_done(stage);
}
/* The systems of a stage in an order that respects ecs_system_precedes. */
static int fz_stage_order(int stage, int *out) {
    int n = 0, placed[FZ_MAXSYS] = {0}, want = 0;
    for (int s = 0; s < G.nsys; s++) want += G.sys[s].stage == stage;
    while (n < want) {
        int pick = -1;
        for (int s = 0; s < G.nsys && pick < 0; s++) {
            if (G.sys[s].stage != stage || placed[s]) continue;
            int ready = 1;
            for (int p = 0; p < G.nsys; p++)
                if (p != s && G.sys[p].stage == stage && !placed[p] && G.prec[p][s]) ready = 0;
            if (ready) pick = s;
        }
        FZ_CHECK(pick >= 0, "ecs_system_precedes has a cycle in stage %d", stage);
        placed[pick] = 1;
        out[n++] = pick;
    }
    return n;
}
/* loose: a system that is not exclusive but an independent_of partner of an
   exclusive system in its stage: whether it is prepared before or after that
   system's changes, and so what it sees, depends on timing. (It is inert:
   it changes nothing.) */
static int fz_loose(int s) {
    if (G.sys[s].flags & ECS_SYSTEM_EXCLUSIVE) return 0;
    for (int o = 0; o < G.nsys; o++)
        if (o != s && G.sys[o].stage == G.sys[s].stage && fz_independent(s, o) &&
            (G.sys[o].flags & ECS_SYSTEM_EXCLUSIVE))
            return 1;
    return 0;
}
/* Two exclusive independent_of partners in one stage: which one syncs and
   prepares first depends on timing; the model does not follow that. */
static int fz_exclusive_partners(void) {
    for (int a = 0; a < G.nsys; a++)
        for (int b = a + 1; b < G.nsys; b++)
            if (G.sys[a].stage == G.sys[b].stage && (G.sys[a].flags & G.sys[b].flags & ECS_SYSTEM_EXCLUSIVE) &&
                fz_independent(a, b))
                return 1;
    return 0;
}
static int fz_later_logs(int stage, const int *order, int from, int n) {
    for (int i = from; i < n; i++) if (g_nsysent[order[i]] && !fz_loose(order[i])) return 1;
    for (int s = 0; s < G.nsys; s++) if (G.sys[s].stage > stage && g_nsysent[s] && !fz_loose(s)) return 1;
    return 0;
}

static void fz_run_exclusive(int s) {
    fz_sys *S = &G.sys[s];
    int nent = g_nsysent[s], b = 0;
    fz_mctx mc;
    memset(&mc, 0, sizeof mc);
    mc.S = S; mc.excl = 1; mc.cl = fz_sysbuf(S, 0);
    if (!S->nt) {
        FZ_CHECK(nent == 1, "exclusive system %d without terms ran %d times", s + 1, nent);
        mc.L = &G.log[g_sysent[s][0]]; mc.btab = -1; mc.brow = mc.bn = 0;
        FZ_CHECK(mc.L->seq == 0, "seq");
        fz_sim_batch(&mc);
        return;
    }
    /* Sorted: the runs of its order at its start, every matched table locked until it ends; else
       the next matched table with rows after the last batch's in (group, table) order (tables its
       own changes make included). */
    static fz_batch runs[FZ_MAXSLOT];
    static uint8_t held[FZ_MAXTAB];
    const fz_query *q = &S->oq;
    int nr = 0, r = 0, last = -1, ntab0 = G.m.ntab;
    if (q->sorted) {
        nr = m_query_batches(q, runs, FZ_MAXSLOT);
        for (int t = 0; t < G.m.ntab; t++) { held[t] = (uint8_t)q_match(q, G.m.tab[t].mask); G.m.lock[t] += held[t]; }
    }
    for (;;) {
        int t = -1;
        uint32_t row = 0, n = 0;
        if (q->sorted) {
            if (r == nr) break;
            t = runs[r].tab; row = runs[r].row; n = runs[r].n;
            r++;
        } else {
            uint64_t bg = 0, lg = last >= 0 ? q_group(q, G.m.tab[last].mask) : 0;
            for (int u = 0; u < G.m.ntab; u++) {
                if (!G.m.tab[u].n || !q_match(q, G.m.tab[u].mask)) continue;
                uint64_t g = q_group(q, G.m.tab[u].mask);
                if (last >= 0 && (g < lg || (g == lg && u <= last))) continue;
                if (t < 0 || g < bg) { t = u; bg = g; }
            }
            if (t < 0) break;
            n = G.m.tab[t].n;
            last = t;
        }
        FZ_CHECK(b < nent, "exclusive system %d ran %d batches, the model has more (table %d)", s + 1, nent, t);
        mc.L = &G.log[g_sysent[s][b]];
        FZ_CHECK(mc.L->seq == b && mc.L->chunk == 0, "exclusive system %d: batch %d has seq %d", s + 1, b, mc.L->seq);
        mc.ri = 0; mc.btab = t; mc.brow = row; mc.bn = n;
        G.m.lock[t]++;
        fz_sim_batch(&mc);
        G.m.lock[t]--;
        b++;
    }
    for (int t = 0; q->sorted && t < ntab0; t++) G.m.lock[t] -= held[t];
    FZ_CHECK(b == nent, "exclusive system %d ran %d batches, the model %d", s + 1, nent, b);
}
static void fz_run_system(int s) {
    fz_sys *S = &G.sys[s];
    int nb = fz_predict(S, g_batches, FZ_LOG_ENTS), nent = g_nsysent[s];
    FZ_CHECK(nb == nent, "system %d ran %d batches, the model has %d", s + 1, nent, nb);
    G.phase_systems = 1;
    for (int b = 0; b < nb; b++) {
        fz_mctx mc;
        memset(&mc, 0, sizeof mc);
        mc.S = S; mc.L = &G.log[g_sysent[s][b]];
        mc.btab = g_batches[b].tab; mc.brow = g_batches[b].row; mc.bn = g_batches[b].n;
        mc.chunk = S->chunk > 0 ? b : 0;
        mc.cl = fz_sysbuf(S, mc.chunk);
        if (S->chunk > 0) FZ_CHECK(mc.L->chunk == b, "system %d: chunk %d where the model has %d", s + 1, mc.L->chunk, b);
        else FZ_CHECK(mc.L->chunk == 0 && mc.L->seq == b, "system %d: batch %d has seq %d", s + 1, b, mc.L->seq);
        fz_sim_batch(&mc);
    }
    G.phase_systems = 0;
}

static void op_progress(void) {
    unsigned db = fz_u8();
    if (G.m.alive > 200 || G.m.nrec > 800) return;
    G.dt = (float)db / 4.0f;
    for (int s = 0; s < G.nsys; s++) G.sys[s].inert = 0;
    for (int s = 0; s < G.nsys; s++)
        for (int i = 0; i < G.sys[s].ndep[2]; i++) {
            int t = fz_sys_by_name(G.sys[s].dep[2][i]);
            if (t >= 0) G.sys[s].inert = G.sys[t].inert = 1;
        }
    atomic_store(&G.log_n, 0);
    atomic_store(&G.log_pool_n, 0);
    atomic_store(&G.log_res_n, 0);
    G.log_overflow = 0;
    G.olog_n = G.olog_i = 0;
    for (int s = 0; s < G.nsys; s++) { atomic_store(&G.sys[s].seq, 0); G.sys[s].m_got = G.sys[s].lib_got = 0; }
    int paused = G.threads > 1 || G.shuffled;   /* (which systems a failure stops depends on the order) */
    if (paused) fz_pause();
    long inj0 = fz_injected();
    ecs_result r = ecs_progress(G.w, G.dt);
    if (paused) fz_resume();
    FZ_STAT(ST_FRAMES);
    if (r == ECS_OK) FZ_STAT(ST_FRAME_OK);
    if (r == ECS_ERR_INVALID_GRAPH) FZ_STAT(ST_INVALID);
    if (r == ECS_ERR_ACCESS) FZ_STAT(ST_ACCESS);
    int inj = fz_injected() > inj0;
    int nlog = atomic_load(&G.log_n);
    if (G.log_overflow) fz_bail("the frame log overflowed");
    FZ_CHECK(r != ECS_ERR_NOMEM || inj, "ecs_progress = ECS_ERR_NOMEM with no allocation failing");
    if (r != ECS_OK) FZ_CHECK(ecs_last_error(G.w)[0], "ecs_progress = %s without an error line", ecs_result_str(r));
    /* refused at once */
    int locked = 0;
    for (int t = 0; t < G.m.ntab; t++) locked |= G.m.lock[t] > 0;
    if (locked || G.defer_depth) {
        fz_expect(r, ECS_ERR_BUSY, locked ? "ecs_progress with an open query loop" : "ecs_progress in defer mode");
        FZ_CHECK(nlog == 0 && G.olog_n == 0, "systems or observers ran although ecs_progress was refused");
        fz_check_counts();
        return;
    }
    ecs_report rep;
    fz_pause();
    ecs_result vr = ecs_validate(G.w, &rep);
    fz_resume();
    G.sys_valid = fz_graph(vr, &rep);
    ecs_frame_stats fs;
    if (!G.sys_valid) {
        if (r != ECS_ERR_NOMEM) fz_expect(r, ECS_ERR_INVALID_GRAPH, "ecs_progress with an invalid graph");
        FZ_CHECK(nlog == 0 && G.olog_n == 0, "systems or observers ran although the graph is invalid");
        fz_check_world();
        return;
    }
    FZ_CHECK(r != ECS_ERR_INVALID_GRAPH, "ecs_progress = ECS_ERR_INVALID_GRAPH for a valid graph");
    if (fz_exclusive_partners()) fz_bail("two exclusive systems are independent_of partners");
    /* the log, per system: unchunked in call order, chunked by chunk */
    memset(g_nsysent, 0, sizeof g_nsysent);
    for (int i = 0; i < nlog; i++) {
        int s = G.log[i].sys;
        g_sysent[s][g_nsysent[s]++] = i;
    }
    for (int s = 0; s < G.nsys; s++) {
        if (G.sys[s].chunk <= 0) continue;
        int *a = g_sysent[s];
        for (int i = 1; i < g_nsysent[s]; i++)
            for (int j = i; j > 0 && G.log[a[j - 1]].chunk > G.log[a[j]].chunk; j--) { int x = a[j]; a[j] = a[j - 1]; a[j - 1] = x; }
    }
    G.refusals = 0;
    g_nomem_rec = g_nomem_imm = 0;
    for (int x = 0; x < G.nsys; x++) G.sys[x].dj = fz_sys_dj(x);
    int uncertain = 0, stop_busy = 0;
    /* leftovers of a failed sync point come first */
    if (nlog == 0 && r == ECS_ERR_NOMEM) {
        fz_seq q;
        q.n = 0;
        fz_sync_seq(-1, &q);
        fz_apply_prefix(q.l, q.n, "ecs_progress (leftover commands)");
        fz_sync_done(-1);
        uncertain = 1;
    } else {
        fz_sync_full(-1, "ecs_progress (leftover commands)", 1);   /* the first one takes ecs_world_emit's queue */
        m_deliver();
    }
    for (int st = 0; st < G.nstages && !uncertain && !stop_busy; st++) {
        int order[FZ_MAXSYS], n = fz_stage_order(st, order), stopped = 0, has_sync = 0;
        uint64_t turn = 0;
        if (G.stage_off[st]) m_stage_windows_off(st);   /* no turn: its readers drop */
        else {
            turn = G.turns[st]++;
            for (int s = 0; s < G.nsys; s++) {
                if (G.sys[s].stage != st) continue;
                if (G.sys[s].off) m_win_discard(&G.sys[s]);
                else has_sync = 1;   /* a stage whose systems are all disabled has no sync point */
            }
        }
        for (int i = 0; i < n && !stopped && !stop_busy; i++) {
            int s = order[i];
            fz_sys *S = &G.sys[s];
            if (S->off || G.stage_off[st]) {   /* switched between frames: skipped at once */
                FZ_CHECK(g_nsysent[s] == 0, "system %d ran while it or its stage was disabled", s + 1);
                continue;
            }
            if (S->interval > 1 && turn % (uint64_t)S->interval) {   /* not its turn: as if it ran instantly */
                FZ_CHECK(g_nsysent[s] == 0, "system %d ran on turn %llu with interval %d", s + 1,
                         (unsigned long long)turn, S->interval);
                m_win_keep(S);
                continue;
            }
            m_win_take(S);   /* it runs, or matches no rows: either way it has seen what was delivered */
            if (fz_loose(s)) {
                for (int j = 0; j < g_nsysent[s]; j++) {
                    fz_mctx mc;
                    memset(&mc, 0, sizeof mc);
                    mc.S = S; mc.L = &G.log[g_sysent[s][j]];
                    FZ_CHECK(!mc.L->bad, "system %d got a wrong %s", s + 1, mc.L->bad);
                    fz_sim_reads(&mc);   /* its batches differ with timing; what it reads does not */
                    FZ_CHECK(mc.ri == mc.L->res_n, "loose system %d made calls", s + 1);
                }
                continue;
            }
            if (!fz_has_work(S)) {
                FZ_CHECK(g_nsysent[s] == 0, "system %d ran with nothing to do", s + 1);
                continue;
            }
            if (S->flags & ECS_SYSTEM_EXCLUSIVE) {
                if (!g_nsysent[s] && r == ECS_ERR_NOMEM && !fz_later_logs(st, order, i + 1, n)) { stopped = 1; break; }
                fz_sync_full(st, "the sync point before an exclusive system", 1);   /* stages, delivers not */
                fz_run_exclusive(s);
            } else {
                if (!g_nsysent[s]) {
                    FZ_CHECK(r == ECS_ERR_NOMEM, "system %d had work but did not run (ecs_progress = %s)", s + 1,
                             ecs_result_str(r));
                    stopped = 1;
                    break;
                }
                fz_run_system(s);
            }
            S->runs++;
            S->ran = 1;
            if (G.defer_depth) {   /* an exclusive system left its defer block open: ended for it */
                G.defer_depth = 0;
                if (inj) fz_bail("an open defer block applied in a frame that ran out of memory");
                fz_list *ls[1] = {&G.defer};
                int ar = seq_apply(&G.m, ls, 1, -1);
                FZ_CHECK(ar == 0, "the model could not apply an exclusive system's open defer block");
                stop_busy = 1;
            }
        }
        fz_seq q;
        q.n = 0;
        fz_sync_seq(st, &q);
        if (stopped || (r == ECS_ERR_NOMEM && !fz_later_logs(st, order, n, n))) {
            FZ_CHECK(r == ECS_ERR_NOMEM, "the frame stopped in stage %d but ecs_progress = %s", st, ecs_result_str(r));
            fz_ev_capture(st);
            fz_apply_prefix(q.l, q.n, "ecs_progress (a sync point)");
            FZ_STAT(ST_PREFIX_FRAME);
            if (fz_ev_peek(st, has_sync, 0)) { m_stage_sync(st, has_sync); m_deliver(); }
            fz_sync_done(st);
            uncertain = 1;
            break;
        }
        fz_stats[ST_SYNC_CMDS] += seq_left(q.l, q.n);
        fz_sync_full(st, "ecs_progress (the end of a stage)", has_sync);   /* (all disabled: none) */
        m_deliver();
    }
    if (G.threads > 1 && nlog) FZ_STAT(ST_PARALLEL);
    fz_sync_tables_all(&G.m);
    if (uncertain) fz_ev_settle();
    FZ_CHECK(G.olog_i == G.olog_n, "observers were called %d times, the model says %d", G.olog_n, G.olog_i);
    for (int s = 0; s < G.nsys; s++)
        for (int b = 0; b < G.sys[s].nbuf; b++)
            FZ_CHECK(!G.sys[s].buf[b].nev, "system %d: the model did not deliver its events", s + 1);
    if (!uncertain) {
        int want = stop_busy ? ECS_ERR_BUSY : G.refusals ? ECS_ERR_ACCESS : ECS_OK;
        if (g_nomem_rec) {   /* "ECS_ERR_NOMEM if memory ran out while commands were recorded" */
            fz_expect(r, ECS_ERR_NOMEM, "ecs_progress after a command could not be recorded");
        } else if (r == ECS_ERR_NOMEM) {
            FZ_CHECK(g_nomem_imm || g_nomem_rec, "ecs_progress = ECS_ERR_NOMEM, the model sees no failure");
        } else {
            fz_expect(r, want, "ecs_progress");
        }
    }
    /* stats: runs and frames, unless allocations failed in the frame */
    FZ_CHECK(ecs_frame_stats_get(G.w, &fs) == ECS_OK, "ecs_frame_stats_get");
    if (inj || uncertain) {
        for (int s = 0; s < G.nsys; s++) {
            ecs_system_stats ss;
            ecs_system_stats_get(G.w, G.sys[s].lib, &ss);
            G.sys[s].runs = ss.runs;
        }
        G.frames = fs.frames;
    } else {
        G.frames++;
        FZ_CHECK(fs.frames == G.frames, "frames = %llu, model %llu", (unsigned long long)fs.frames,
                 (unsigned long long)G.frames);
        for (int s = 0; s < G.nsys; s++) {
            ecs_system_stats ss;
            FZ_CHECK(ecs_system_stats_get(G.w, G.sys[s].lib, &ss) == ECS_OK, "ecs_system_stats_get");
            if (fz_loose(s)) G.sys[s].runs = ss.runs;
            FZ_CHECK(ss.runs == G.sys[s].runs, "system %d ran %llu frames, the model counts %llu", s + 1,
                     (unsigned long long)ss.runs, (unsigned long long)G.sys[s].runs);
        }
    }
    fz_check_world();
}

/* ---- allocation failures, checks, odds and ends -------------------------- */
static void op_oom(void) {
    unsigned m = fz_u8() % 3, n = fz_u8();
    G.al.mode = (int)m;
    G.al.fail_at = atomic_load(&G.al.requests) + 1 + (long)n;
}
static FILE *fz_devnull(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    if (!f) { fprintf(stderr, "fuzz_api: cannot open /dev/null\n"); abort(); }
    return f;
}
/* The looking-inside calls: DOT, report, simulation, trace, names. */
static void op_inspect(unsigned x) {
    long inj0 = fz_injected();
    switch (x % 6) {
    case 0: {
        ecs_result r = ecs_write_dot(G.w, fz_devnull());
        if (r == ECS_ERR_NOMEM) FZ_CHECK(fz_injected() > inj0, "ecs_write_dot = ECS_ERR_NOMEM with no failure");
        else fz_expect(r, ECS_OK, "ecs_write_dot");
        break;
    }
    case 1: {
        ecs_report rep;
        fz_pause();
        ecs_result r = ecs_validate(G.w, &rep);
        fz_resume();
        ecs_report_print(&rep, fz_devnull());
        FZ_CHECK((r == ECS_OK) == (rep.count == 0), "ecs_validate = %s with %d problems", ecs_result_str(r), rep.count);
        for (int i = 0; i < rep.note_count; i++)
            FZ_CHECK((rep.notes[i].kind == ECS_NOTE_READ_BEFORE_WRITE || (G.nev && rep.notes[i].kind ==
                     ECS_NOTE_EVENT_NEXT_FRAME)) && rep.notes[i].message, "a note of kind %d", (int)rep.notes[i].kind);
        break;
    }
    case 2: {
        ecs_sim_result sr;
        double dur[FZ_MAXSYS];
        for (int i = 0; i < FZ_MAXSYS; i++) dur[i] = 1 + (double)((x >> 3) * (unsigned)(i + 1) % 7);
        int th = 1 + (int)(x >> 3) % 4;
        ecs_result r = ecs_schedule_simulate(G.w, th, x & 8 ? dur : NULL, &sr);
        if (r == ECS_ERR_NOMEM) { FZ_CHECK(fz_injected() > inj0, "ecs_schedule_simulate: NOMEM"); break; }
        fz_pause();
        ecs_result vr = ecs_validate(G.w, NULL);
        fz_resume();
        if (vr != ECS_OK) { fz_expect(r, ECS_ERR_INVALID_GRAPH, "ecs_schedule_simulate of an invalid graph"); break; }
        fz_expect(r, ECS_OK, "ecs_schedule_simulate");
        double eps = 1e-9 * (1 + sr.total_work);
        FZ_CHECK(sr.makespan + eps >= sr.lower_bound && sr.fifo_makespan + eps >= sr.lower_bound &&
                 sr.lower_bound + eps >= sr.critical_path && sr.makespan <= sr.total_work + eps &&
                 sr.total_work >= 0, "ecs_schedule_simulate: makespan %g, fifo %g, bound %g, critical %g, work %g",
                 sr.makespan, sr.fifo_makespan, sr.lower_bound, sr.critical_path, sr.total_work);
        if (th == 1) FZ_CHECK(sr.makespan <= sr.total_work + eps && sr.makespan + eps >= sr.total_work,
                              "one thread: makespan %g, work %g", sr.makespan, sr.total_work);
        break;
    }
    case 3: ecs_trace_enable(G.w, (x >> 3) & 1); break;
    case 4: {
        ecs_result r = ecs_write_trace(G.w, fz_devnull());
        FZ_CHECK(r == ECS_OK || (r == ECS_ERR_NOMEM && fz_injected() > inj0), "ecs_write_trace = %s", ecs_result_str(r));
        break;
    }
    default:
        for (int i = 0; i < G.nsys; i++)
            FZ_CHECK(ecs_system_name(G.w, G.sys[i].lib) && !strcmp(ecs_system_name(G.w, G.sys[i].lib),
                     fz_snames[G.sys[i].name]), "ecs_system_name(%d)", i + 1);
        FZ_CHECK(!ecs_system_name(G.w, (ecs_system)G.nsys + 1) && !ecs_system_name(G.w, 0), "ecs_system_name");
        FZ_CHECK(ecs_stage_name(G.w, 0) && !ecs_stage_name(G.w, (ecs_stage)G.nstages), "ecs_stage_name");
        FZ_CHECK(!strcmp(ecs_result_str((ecs_result)(x % 7)), fz_result_names[x % 7]), "ecs_result_str");
        break;
    }
}
static void op_misc(void) {
    unsigned x = fz_u8();
    if (x >= 160) { op_inspect(x); return; }
    switch (x % 7) {
    case 0: fz_check_world(); break;
    case 5: {   /* a system or a stage switched off or on: between frames, at once */
        unsigned y = fz_u8();
        bool on = (y & 3) != 0;   /* mostly on: most frames keep their systems */
        if (y & 4) {
            int st = (int)(y >> 3) % (G.nstages + 1);
            ecs_result r = ecs_stage_enable(G.w, (ecs_stage)st, on);
            if (st == G.nstages) { fz_expect(r, ECS_ERR_ARG, "ecs_stage_enable of an unknown stage"); break; }
            FZ_CHECK(r == ECS_OK, "ecs_stage_enable = %s", ecs_result_str(r));
            G.stage_off[st] = !on;
            FZ_CHECK(ecs_stage_enabled(G.w, (ecs_stage)st) == on, "ecs_stage_enabled");
        } else {
            int k = (int)(y >> 3) % (G.nsys + 1);
            ecs_system id = k < G.nsys ? G.sys[k].lib : (ecs_system)G.nsys + 1;
            ecs_result r = ecs_system_enable(G.w, id, on);
            if (k == G.nsys) { fz_expect(r, ECS_ERR_ARG, "ecs_system_enable of an unknown system"); break; }
            FZ_CHECK(r == ECS_OK, "ecs_system_enable = %s", ecs_result_str(r));
            G.sys[k].off = !on;
            FZ_CHECK(ecs_system_enabled(G.w, id) == on, "ecs_system_enabled");
        }
        break;
    }
    case 1: ecs_timing_interval(G.w, (int)(x / 6 % 4)); break;
    case 2: {
        ecs_id id = fz_pick_id();
        int k = fz_kid(id);
        const char *n = ecs_id_name(G.w, id);
        FZ_CHECK((k >= 0) == (n != NULL), "ecs_id_name(%u)", id);
        if (k >= 0) FZ_CHECK(!strcmp(n, fz_names[G.ids[k].name]) && ecs_id_size(G.w, id) == fz_size(k), "id %u", id);
        break;
    }
    case 3: {
        ecs_iter it = ecs_query_iter(G.w, NULL);
        FZ_CHECK(!ecs_query_next(&it), "iterating a NULL query");
        FZ_CHECK(ecs_last_error(G.w)[0], "no error line for a NULL query");
        break;
    }
    case 4:
        if (G.nsys) {
            int a = (int)fz_below((unsigned)G.nsys), b = (int)fz_below((unsigned)G.nsys);
            fz_pause();
            bool p = ecs_system_precedes(G.w, G.sys[a].lib, G.sys[b].lib);
            fz_resume();
            if (G.sys_valid && a != b && G.sys[a].stage != G.sys[b].stage)
                FZ_CHECK(p == (G.sys[a].stage < G.sys[b].stage), "ecs_system_precedes across stages");
        }
        break;
    default: {
        fz_check_counts();
        for (int i = 0; i < FZ_MAXIT; i++)
            if (G.its[i].active && G.its[i].cur >= 0) FZ_CHECK(G.m.lock[G.its[i].cur] > 0, "model lock");
        break;
    }
    }
}

/* ---- the entry point ----------------------------------------------------- */
enum { OP_COMP, OP_RES, OP_CREATE, OP_CREATE_MANY, OP_DESTROY, OP_ADD, OP_REMOVE, OP_SET, OP_READ, OP_RESGET,
       OP_QNEW, OP_QFREE, OP_QCOUNT, OP_ITBEGIN, OP_ITNEXT, OP_ITWRITE, OP_ITFINI, OP_ITFULL, OP_DBEGIN, OP_DEND,
       OP_CNEW, OP_CFREE, OP_CCREATE, OP_CMD, OP_CAPPLY, OP_STAGE, OP_SYSTEM, OP_VALIDATE, OP_PROGRESS, OP_OOM,
       OP_MISC, OP_PARENT, OP_COUNT_V1,
       /* reached only once an event type exists (op_register's escape makes the first): inputs without
          events decode as before */
       OP_EVENT = OP_COUNT_V1, OP_WEMIT, OP_OBSERVE, OP_COUNT,
       /* reached only once v2 is on (op_register's FZ_V2_ESC): prefabs, sorted and grouped loops */
       OP_PREFAB = OP_COUNT, OP_INST, OP_CMDINST, OP_QNEW2, OP_ITGROUP, OP_COUNT2 };
static const char *const fz_opnames[OP_COUNT2] = {
    "component", "resource", "create", "create_many", "destroy", "add", "remove", "set", "read", "resource_get",
    "query_new", "query_free", "query_count", "iter_begin", "iter_next", "iter_write", "iter_fini", "iter_full",
    "defer_begin", "defer_end", "commands_new", "commands_free", "cmd_create", "cmd", "commands_apply", "stage_add",
    "system_add", "validate", "progress", "oom", "misc", "set_parent", "event", "world_emit", "observe",
    "prefab", "instantiate", "cmd_instantiate", "query_new2", "iter_group"};

static void fz_reset(void) {
    for (int i = 0; i < FZ_MAXBUF; i++) l_free(&G.lists[i]);
    l_free(&G.defer);
    l_free(&G.waiting);
    l_free(&G.staged);
    for (int k = 0; k < FZ_MAXI; k++) { free(G.evl[k].data); memset(&G.evl[k], 0, sizeof G.evl[k]); }
    for (int s = 0; s < FZ_MAXSYS; s++) {
        for (int b = 0; b < G.sys[s].nbuf; b++) l_free(&G.sys[s].buf[b]);
        free(G.sys[s].buf);
        free(G.sys[s].serial_seen);
        G.sys[s].buf = NULL; G.sys[s].serial_seen = NULL; G.sys[s].nbuf = 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int trace = -1;
    if (trace < 0) {
        trace = getenv("FUZZ_TRACE") != NULL;
        if (getenv("FUZZ_STATS")) atexit(fz_stats_print);
    }
    FZ_STAT(ST_INPUTS);
    /* the scalar state, reset (the big arrays are reset as they are used) */
    memset(&G, 0, offsetof(fz_state, m));
    G.nids = 0; G.vsize = 0; G.nq = 0; G.nbuf = 0; G.defer_exists = G.defer_depth = 0; G.nstages = 1;
    G.nsys = 0; G.sys_valid = 1; G.frames = 0; G.phase_systems = 0; G.refusals = 0; G.ops_since_check = 0;
    memset(G.its, 0, sizeof G.its);
    memset(G.stage_off, 0, sizeof G.stage_off);
    memset(G.lists, 0, sizeof G.lists);
    memset(&G.defer, 0, sizeof G.defer);
    for (int s = 0; s < FZ_MAXSYS; s++) { G.sys[s].buf = NULL; G.sys[s].serial_seen = NULL; G.sys[s].nbuf = 0; }
    G.m.nrec = G.m.nfree = G.m.alive = 0;
    G.m.dropped = 0;
    G.m.ntab = 1;
    G.m.tab[0].mask = 0; G.m.tab[0].n = 0; G.m.lock[0] = 0;
    memset(&G.ids[FZ_PF], 0, sizeof G.ids[FZ_PF]);
    G.ids[FZ_PF].lib = FZ_ID0;   /* the prefab tag: a tag */
    G.data = data; G.size = size; G.trace = trace;
    unsigned cfg = fz_u8();
    G.threads = 1 + (int)(cfg & 1);
    G.order = (int)(cfg >> 1 & 3) % 3;
    G.check_reads = cfg >> 3 & 1;
    ecs_world_desc d;
    memset(&d, 0, sizeof d);
    d.threads = G.threads;
    d.order = (ecs_order)G.order;
    d.realloc_fn = fz_realloc;
    d.alloc_user = &G.al;
    d.check_reads = G.check_reads != 0;
    G.shuffled = size & 1;
    d.shuffle_seed = G.shuffled ? 0x5eed + size : 0;   /* the model's results stand in any order */
    if (cfg >> 4 & 1) {   /* world creation under a failing allocation */
        G.al.mode = 1;
        G.al.fail_at = 1 + (long)(cfg >> 5);
        ecs_world *w = ecs_world_new(&d);
        if (w) ecs_world_free(w);
        else FZ_CHECK(atomic_load(&G.al.injected) == 1, "ecs_world_new failed with no allocation failing");
        FZ_CHECK(atomic_load(&G.al.live) == 0, "ecs_world_new left %ld blocks", atomic_load(&G.al.live));
        G.al.mode = 0;
    }
    G.w = ecs_world_new(&d);
    FZ_CHECK(G.w != NULL, "ecs_world_new failed");
    FZ_CHECK(ecs_thread_count(G.w) == G.threads, "ecs_thread_count");
    if (size & 2) ecs_hash_trace_enable(G.w, true);   /* (crashes and sanitizer findings in it) */
    G.all = ecs_query_new(G.w, &(ecs_query_desc){.terms = {{0}}});
    FZ_CHECK(G.all != NULL, "the full query");
    if (!setjmp(G.bail)) {
        while (!G.eof && G.op < FZ_MAXOPS) {
            unsigned op = fz_u8() % (G.v2 ? OP_COUNT2 : G.nev ? OP_COUNT : OP_COUNT_V1);
            if (G.eof) break;
            G.op++;
            FZ_STAT(ST_OPS);
            G.opname = fz_opnames[op];
            if (G.trace) fprintf(stderr, "op %ld: %s (alive %u, tables %d, defer %d)\n", G.op, G.opname, G.m.alive,
                                 G.m.ntab, G.defer_depth);
            switch (op) {
            case OP_COMP: op_register(0); break;
            case OP_RES: op_register(1); break;
            case OP_CREATE: op_create(); break;
            case OP_CREATE_MANY: op_create_many(); break;
            case OP_DESTROY: op_struct(0); break;
            case OP_ADD: op_struct(1); break;
            case OP_REMOVE: op_struct(2); break;
            case OP_SET: op_struct(3); break;
            case OP_READ: op_read(); break;
            case OP_RESGET: op_resource(); break;
            case OP_QNEW: op_query_new(); break;
            case OP_QFREE: op_query_free(); break;
            case OP_QCOUNT: op_query_count(); break;
            case OP_ITBEGIN: op_iter_begin(); break;
            case OP_ITNEXT: op_iter_next(); break;
            case OP_ITWRITE: op_iter_write(); break;
            case OP_ITFINI: op_iter_fini(); break;
            case OP_ITFULL: op_iter_full(); break;
            case OP_DBEGIN: op_defer_begin(); break;
            case OP_DEND: op_defer_end(); break;
            case OP_CNEW: op_cmds_new(); break;
            case OP_CFREE: op_cmds_free(); break;
            case OP_CCREATE: op_cmd_create(); break;
            case OP_CMD: op_cmd(); break;
            case OP_CAPPLY: op_cmds_apply(); break;
            case OP_STAGE: op_stage_add(); break;
            case OP_SYSTEM: op_system_add(); break;
            case OP_VALIDATE: op_validate(); break;
            case OP_PROGRESS: op_progress(); break;
            case OP_OOM: op_oom(); break;
            case OP_PARENT: op_parent(); break;
            case OP_EVENT: op_event(fz_u8()); break;
            case OP_WEMIT: op_world_emit(); break;
            case OP_OBSERVE: op_observe(); break;
            case OP_PREFAB: op_prefab(); break;
            case OP_INST: op_instantiate(); break;
            case OP_CMDINST: op_cmd_instantiate(); break;
            case OP_QNEW2: op_query_new2(); break;
            case OP_ITGROUP: op_iter_group(); break;
            default: op_misc(); break;
            }
            fz_check_iters();
            if (++G.ops_since_check >= 16 || G.m.alive <= 24 || G.trace) fz_check_world();
            else fz_check_counts();
        }
        G.opname = "end";
        G.al.mode = 0;
        fz_check_world();
    }
    /* the end (or a bail): close loops, free everything, count blocks */
    G.al.mode = 0;
    for (int i = 0; i < FZ_MAXIT; i++) if (G.its[i].active) ecs_iter_fini(&G.its[i].it);
    ecs_world_free(G.w);
    G.w = NULL;
    fz_reset();
    FZ_CHECK(atomic_load(&G.al.live) == 0, "ecs_world_free left %ld blocks allocated", atomic_load(&G.al.live));
    return 0;
}

/* ---- replaying a corpus without libFuzzer -------------------------------- */
#ifdef FUZZ_REPLAY_MAIN
#include <dirent.h>
#include <sys/stat.h>

static int fz_replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "fuzz_replay: cannot open %s\n", path); return 0; }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *nb = (uint8_t *)realloc(buf, cap);
            if (!nb) { fprintf(stderr, "fuzz_replay: out of memory\n"); abort(); }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (!got) break;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}
static int fz_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    int passed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) { fprintf(stderr, "fuzz_replay: no such file %s\n", argv[i]); return 2; }
        if (!S_ISDIR(st.st_mode)) { passed += fz_replay_file(argv[i]); continue; }
        DIR *dir = opendir(argv[i]);
        if (!dir) { fprintf(stderr, "fuzz_replay: cannot open %s\n", argv[i]); return 2; }
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *de; (de = readdir(dir));) {
            if (de->d_name[0] == '.') continue;
            size_t len = strlen(argv[i]) + strlen(de->d_name) + 2;
            char *p = (char *)malloc(len);
            char **nn = (char **)realloc(names, (n + 1) * sizeof *names);
            if (!p || !nn) { fprintf(stderr, "fuzz_replay: out of memory\n"); abort(); }
            names = nn;
            snprintf(p, len, "%s/%s", argv[i], de->d_name);
            names[n++] = p;
        }
        closedir(dir);
        if (n) qsort(names, n, sizeof *names, fz_cmp);   /* a fixed order, for reproducible runs */
        for (size_t j = 0; j < n; j++) { passed += fz_replay_file(names[j]); free(names[j]); }
        free(names);
    }
    printf("%d passed, 0 failed\n", passed);
    return 0;
}
#endif
#else   /* not a fuzzer build */
typedef int fuzz_api_compiled_out;
#endif
