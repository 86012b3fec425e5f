/* bench.c - ecs.h against plain arrays, in one process.

   Each workload runs the same work twice: through ecs.h and through plain C
   arrays (the baseline), with samples interleaved (baseline, ecs, ecs,
   baseline, ...) so machine noise hits both sides alike. A row reports the
   median of each side in ns per op, their ratio, and the workload's target:
   a ratio to the baseline for iteration, an absolute ns/op for structural
   changes. Values come from a fixed seed, and both sides must end with the
   same checksum, else the run fails.

   Those samples reuse the process's memory: glibc keeps what one sample
   frees and hands it to the next, so they pay no page faults. On Linux the
   rows marked "fresh process" run each sample in a forked child instead
   (both sides, interleaved alike), as a harness that starts a new process per
   repetition does, so the faults of first touching memory are in their times;
   and a memory row gives a fresh process's resident-set growth for 1M
   entities. Elsewhere those rows are not printed.

   Then the scheduler and the validator, which have no baseline, in sections
   of their own: 1 thread vs 2 threads (two identically built worlds, frames
   alternating between them, their values compared at the end); absolute
   frame times of tiny frames, how far ecs_schedule_simulate's prediction of
   a sync-heavy frame is from the frame's measured time, and ecs_validate
   times on random graphs; and ecs_schedule_simulate's makespans against
   their lower bound. Last, the game loop: the 64-system frame of the tiny
   rows with run_if, disabled systems, a fixed-step stage and
   ecs_progress_steps, as ratios to the same frames without them; and events
   between systems: emitting, delivering + reading, and a death pipeline as
   events against the same as entities; change detection: an ECS_CHANGED
   reader against a full pass, and what keeping stamps costs a writer.
   Thread speedups need idle cores: the run ends with the load average.

   usage: build/bench [--quick] [--events] [--changes] [--prefabs] [--sync] [--snapshots]
          --quick takes 3 samples per workload; --events, --changes, --prefabs and --sync
          run only those rows (--sync: the command-apply rows)
   exit status: 0 when every result checks out (missed targets included),
   1 when ecs.h computed something wrong or a call failed. */
#define _POSIX_C_SOURCE 200809L
#define ECS_IMPLEMENTATION
#include "../ecs.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#  include <malloc.h>   /* mallopt: fixed thresholds for the validate rows */
#endif
#if !defined(__STDC_NO_THREADS__)
#  include <threads.h>   /* the plain-thread reference row */
#endif
#if defined(__linux__)
#  include <errno.h>
#  include <sys/wait.h>
#  include <unistd.h>    /* fork, pipe, sysconf: the fresh-process rows */
#endif

typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;
typedef struct { int thingy; double dingy; bool mingy; unsigned numgy; } Data;

/* ---- harness ------------------------------------------------------------- */
static bool g_quick;
static bool g_wrong;                       /* a checksum or a call failed */
static volatile double g_sink;             /* checksums land here: no work is dead */
static volatile float g_dt = 1.0f / 60.0f; /* read per sample: no constant folding */

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "bench: %s\n", what);
    exit(1);
}
#define NEED(cond, what) do { if (!(cond)) die(what); } while (0)

/* Flushes pending stores and keeps the compiler from merging or moving work
   across it (e.g. collapsing repeated passes over the same array). Both sides
   call it at the same points. */
static inline void clobber(void) {
#if defined(__GNUC__)
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* 64-byte aligned, as ecs.h aligns its columns. */
static void *alloc64(size_t bytes) {
    void *p = aligned_alloc(64, bytes ? (bytes + 63) & ~(size_t)63 : 64);
    NEED(p, "out of memory");
    return p;
}

static uint64_t g_rng;
static void rng_seed(uint64_t s) { g_rng = s; }
static float rng_float(float lo, float hi) {  /* splitmix64 */
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * (float)((double)(z >> 40) / (double)(1u << 24));
}

static int reps(int full) { return g_quick ? 3 : full; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One timed sample of one side; returns the timed ns (setup excluded). */
typedef double (*sample_fn)(void *ctx);

#define MAX_REPS 256
/* Runs n interleaved samples of both sides on ctx; medians in ns per op. */
static void run_pair(int n, sample_fn base, sample_fn ecs, void *ctx, double ops,
                     double *base_ns, double *ecs_ns) {
    double b[MAX_REPS], e[MAX_REPS];
    NEED(n > 0 && n <= MAX_REPS, "bad sample count");
    for (int r = 0; r < n; r++) {
        if (r & 1) { e[r] = ecs(ctx); b[r] = base(ctx); }
        else       { b[r] = base(ctx); e[r] = ecs(ctx); }
    }
    *base_ns = median(b, n) / ops;
    *ecs_ns = median(e, n) / ops;
}

/* Marks the run wrong when the two sides disagree. */
static void check(bool ok, const char *bench, const char *what) {
    if (!ok) {
        fprintf(stderr, "bench: %s: %s\n", bench, what);
        g_wrong = true;
    }
}
static bool same_sum(double a, double b) {
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-9;
}

#if defined(__linux__)
/* ---- fresh processes: one forked child per sample ----
   A child starts with its parent's heap, and would reuse memory the parent
   freed but kept (copy-on-write faults instead of fresh pages, and no growth
   of its resident set); freeing a large block also raises glibc's mmap
   threshold for the process and its later children. So main() runs every
   fresh-process measurement first, while the parent's heap is still small:
   run after the in-process rows, the create row's baseline took twice the
   faults and 21 ns per entity instead of 8. */
enum { CHILD_OUT_MAX = 4 };
typedef void (*child_fn)(void *ctx, double *out);   /* fills out[0 .. n) */

/* Runs fn(ctx, out) in a forked child, which sends its n doubles back
   through a pipe and exits: 0 if every check in it passed (a failed NEED
   exits 1). False, and the run marked wrong, if the child failed, crashed
   or sent fewer bytes: a bad sample is dropped, never a crash here. */
static bool in_child(const char *bench, child_fn fn, void *ctx, double *out, int n) {
    NEED(n > 0 && n <= CHILD_OUT_MAX, "bad child result count");
    int fd[2];
    NEED(pipe(fd) == 0, "pipe failed");
    fflush(stdout);   /* else a child's exit() (a failed NEED) prints the buffered lines again */
    fflush(stderr);
    pid_t pid = fork();
    NEED(pid >= 0, "fork failed");
    if (pid == 0) {
        close(fd[0]);
        g_wrong = false;   /* this child's checks only: the parent's earlier failures are not its own */
        double res[CHILD_OUT_MAX] = {0};
        fn(ctx, res);
        const char *p = (const char *)res;
        size_t left = (size_t)n * sizeof *res;
        while (left > 0) {
            ssize_t k = write(fd[1], p, left);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) _exit(3);
            p += k;
            left -= (size_t)k;
        }
        _exit(g_wrong ? 1 : 0);   /* _exit: no atexit handlers, no stdio flush of the parent's copy */
    }
    close(fd[1]);
    char *p = (char *)out;
    size_t got = 0, want = (size_t)n * sizeof *out;
    while (got < want) {
        ssize_t k = read(fd[0], p + got, want - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    bool ok = r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == want;
    check(ok, bench, "a fresh-process sample failed (see the child's message above, if any)");
    return ok;
}

typedef struct sample_call { sample_fn fn; void *ctx; } sample_call;
static void sample_in_child(void *call, double *out) {
    sample_call *c = call;
    out[0] = c->fn(c->ctx);
}

/* run_pair with each sample in a fresh child: the same interleaving; failed
   samples are left out of the medians (NAN if none is left). */
static void run_pair_fresh(const char *bench, int n, sample_fn base, sample_fn ecs, void *ctx,
                           double ops, double *base_ns, double *ecs_ns) {
    double b[MAX_REPS], e[MAX_REPS];
    int nb = 0, ne = 0;
    sample_call cb = {base, ctx}, ce = {ecs, ctx};
    NEED(n > 0 && n <= MAX_REPS, "bad sample count");
    for (int r = 0; r < n; r++)
        for (int k = 0; k < 2; k++) {
            bool ecs_side = (k == 0) == ((r & 1) != 0);   /* odd samples: ecs.h first */
            double t;
            if (!in_child(bench, sample_in_child, ecs_side ? &ce : &cb, &t, 1)) continue;
            if (ecs_side) e[ne++] = t;
            else b[nb++] = t;
        }
    *base_ns = nb ? median(b, nb) / ops : NAN;
    *ecs_ns = ne ? median(e, ne) / ops : NAN;
}
#endif

typedef struct bench_row {
    const char *name;
    double ecs_ns, base_ns;  /* median ns per op */
    double target;           /* max ecs/base ratio, or max ecs ns/op; < 0: informational */
    bool target_is_ratio;
} bench_row;

static bool row_ok(const bench_row *r) {
    return r->target_is_ratio ? r->ecs_ns <= r->target * r->base_ns : r->ecs_ns <= r->target;
}
static bool row_counts(const bench_row *r) { return r->target >= 0; }

/* Wide enough for the fresh-process rows' names. */
enum { ROW_NAME_W = 70 };
static void print_header(void) {
    printf("%-*s %12s %15s %8s %10s  %s\n", ROW_NAME_W, "workload", "ecs.h ns/op", "baseline ns/op",
           "ratio", "target", "ok/MISS");
    printf("%.*s\n", ROW_NAME_W + 54, "----------------------------------------------------------------"
                                      "----------------------------------------------------------------");
}
static void print_row(const bench_row *r) {
    char target[32];
    if (!row_counts(r))     snprintf(target, sizeof target, "-");
    else if (r->target_is_ratio) snprintf(target, sizeof target, "<= %.2fx", r->target);
    else                    snprintf(target, sizeof target, "<= %.0f ns", r->target);
    printf("%-*s %12.3f %15.3f %7.3fx %10s  %s\n", ROW_NAME_W, r->name, r->ecs_ns, r->base_ns,
           r->ecs_ns / r->base_ns, target, !row_counts(r) ? "info" : row_ok(r) ? "ok" : "MISS");
    fflush(stdout);
}

/* A new world with Position, Velocity and Data registered. */
typedef struct ids { ecs_id pos, vel, data; } ids;
static ecs_world *world_new(ids *id) {
    ecs_world *w = ecs_world_new(NULL);
    NEED(w, "ecs_world_new failed");
    id->pos = ECS_COMPONENT(w, Position);
    id->vel = ECS_COMPONENT(w, Velocity);
    id->data = ECS_COMPONENT(w, Data);
    NEED(id->pos && id->vel && id->data, "ECS_COMPONENT failed");
    return w;
}

/* ---- iteration: the same kernels on both sides --------------------------- */
/* Both sides call the very same machine code for the loop body: inlined, the
   compiler would generate (and align) a copy per call site, and copies of one
   loop were seen to differ by 10-25% here. Nor may gcc clone a kernel for a
   caller's constant row count (it did, for the baseline's fixed 520 rows,
   giving that side a specialised loop). Each starts a 64-byte line, so the
   size of the code before it does not move its loops: the baseline of the
   fragmented row measured 0.55 or 0.96 ns per entity in two builds that
   differed only in ecs.h. Columns of different components never alias, nor
   do the baseline arrays. */
#if defined(__clang__)
#  define KERNEL __attribute__((noinline, aligned(64))) static void
#elif defined(__GNUC__)
#  define KERNEL __attribute__((noinline, noclone, aligned(64))) static void
#else
#  define KERNEL static void
#endif
KERNEL kernel_pv(Position *restrict p, const Velocity *restrict v, int n, float dt) {
    for (int i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
    }
}
KERNEL kernel_pvd(Position *restrict p, Velocity *restrict v, Data *restrict d, int n,
                  float dt) {
    for (int i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
        v[i].y -= 9.81f * dt;
        d[i].thingy += 1;
        d[i].dingy += dt;
        d[i].mingy = !d[i].mingy;
        d[i].numgy += 1;
    }
}
KERNEL kernel_data(Data *restrict d, int n) {
    for (int i = 0; i < n; i++) {
        d[i].thingy += 1;
        d[i].dingy += (double)d[i].thingy * 0.5;
        d[i].mingy = !d[i].mingy;
        d[i].numgy += (unsigned)d[i].mingy;
    }
}

static double sum_pvd(const Position *p, const Velocity *v, const Data *d, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        s += (double)p[i].x + (double)p[i].y;
        if (v) s += (double)v[i].x + (double)v[i].y;
        if (d) s += d[i].thingy + d[i].dingy + d[i].mingy + d[i].numgy;
    }
    return s;
}
static double sum_data(const Data *d, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += d[i].thingy + d[i].dingy + d[i].mingy + d[i].numgy;
    return s;
}

static void random_values(Position *p, Velocity *v, Data *d, int n, uint64_t seed) {
    rng_seed(seed);
    for (int i = 0; i < n; i++) {
        if (p) p[i] = (Position){rng_float(-100, 100), rng_float(-100, 100)};
        if (v) v[i] = (Velocity){rng_float(-10, 10), rng_float(-10, 10)};
        if (d) d[i] = (Data){(int)rng_float(0, 1000), rng_float(-1, 1), rng_float(0, 1) < 0.5f,
                             (unsigned)rng_float(0, 1000)};
    }
}

enum { N_ITER = 1000000 };

typedef struct iter_ctx {
    int n;
    Position *p; Velocity *v; Data *d;  /* baseline; d NULL for Position+Velocity */
    ecs_world *w;
    ecs_query *q;                       /* terms: Position, Velocity[, Data] */
    ids id;
} iter_ctx;

/* n entities with the same random values on both sides, in one table. */
static void iter_setup(iter_ctx *c, int n, bool with_data) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->p = alloc64((size_t)n * sizeof *c->p);
    c->v = alloc64((size_t)n * sizeof *c->v);
    c->d = with_data ? alloc64((size_t)n * sizeof *c->d) : NULL;
    random_values(c->p, c->v, c->d, n, 0xEC5BE7C4u);

    c->w = world_new(&c->id);
    ecs_id cids[3] = {c->id.pos, c->id.vel, c->id.data};
    ecs_entity *h = alloc64((size_t)n * sizeof *h);
    NEED(ecs_create_many(c->w, (size_t)n, cids, with_data ? 3 : 2, h) == ECS_OK,
         "ecs_create_many failed");
    for (int i = 0; i < n; i++) {
        NEED(ecs_set(c->w, h[i], c->id.pos, &c->p[i]) == ECS_OK, "ecs_set failed");
        NEED(ecs_set(c->w, h[i], c->id.vel, &c->v[i]) == ECS_OK, "ecs_set failed");
        if (with_data) NEED(ecs_set(c->w, h[i], c->id.data, &c->d[i]) == ECS_OK, "ecs_set failed");
    }
    free(h);
    ecs_query_desc qd = {.terms = {{c->id.pos, ECS_WRITE, ECS_AND},
                                   {c->id.vel, with_data ? ECS_WRITE : ECS_READ, ECS_AND},
                                   {with_data ? c->id.data : 0, ECS_WRITE, ECS_AND}}};
    c->q = ecs_query_new(c->w, &qd);
    NEED(c->q, "ecs_query_new failed");
    NEED(ecs_query_count(c->w, c->q) == (size_t)n, "ecs_query_count is wrong");
}

/* Both sides ran the same passes: their data must match. */
static void iter_check(iter_ctx *c, const char *bench) {
    double base = sum_pvd(c->p, c->v, c->d, c->n), ecs = 0;
    long rows = 0;
    for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);) {
        ecs += sum_pvd(ECS_FIELD(&it, Position, 0), ECS_FIELD(&it, Velocity, 1),
                       c->d ? ECS_FIELD(&it, Data, 2) : NULL, it.count);
        rows += it.count;
    }
    check(rows == c->n, bench, "the query visited the wrong number of rows");
    check(same_sum(base, ecs), bench, "checksums differ");
    g_sink = base + ecs;
}

static void iter_teardown(iter_ctx *c) {
    ecs_query_free(c->q);
    ecs_world_free(c->w);
    free(c->p); free(c->v); free(c->d);
}

static double pv_base(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    kernel_pv(c->p, c->v, c->n, dt);
    clobber();
    return now_ns() - t0;
}
static double pv_ecs(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);)
        kernel_pv(ECS_FIELD(&it, Position, 0), ECS_FIELD(&it, const Velocity, 1), it.count, dt);
    clobber();
    return now_ns() - t0;
}

static bench_row bench_iter_pv(void) {
    bench_row r = {"iterate P+V, 1M entities (per entity)", 0, 0, 1.05, true};
    iter_ctx c;
    iter_setup(&c, N_ITER, false);
    run_pair(reps(251), pv_base, pv_ecs, &c, N_ITER, &r.base_ns, &r.ecs_ns);
    iter_check(&c, r.name);
    iter_teardown(&c);
    return r;
}

static double pvd_base(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    kernel_pvd(c->p, c->v, c->d, c->n, dt);
    clobber();
    return now_ns() - t0;
}
static double pvd_ecs(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);)
        kernel_pvd(ECS_FIELD(&it, Position, 0), ECS_FIELD(&it, Velocity, 1),
                   ECS_FIELD(&it, Data, 2), it.count, dt);
    clobber();
    return now_ns() - t0;
}

static bench_row bench_iter_pvd(void) {
    bench_row r = {"iterate P+V+Data, 1M entities (per entity)", 0, 0, 1.05, true};
    iter_ctx c;
    iter_setup(&c, N_ITER, true);
    run_pair(reps(201), pvd_base, pvd_ecs, &c, N_ITER, &r.base_ns, &r.ecs_ns);
    iter_check(&c, r.name);
    iter_teardown(&c);
    return r;
}

/* The same loops as systems run by ecs_progress on one thread (the peer
   harness's W2_iter2_sys and W3_iter3_sys): the query loop plus what a
   frame adds around it. */
static void pv_system(ecs_iter *it) {
    kernel_pv(ECS_FIELD(it, Position, 0), ECS_FIELD(it, const Velocity, 1), it->count, it->dt);
}
static void pvd_system(ecs_iter *it) {
    kernel_pvd(ECS_FIELD(it, Position, 0), ECS_FIELD(it, Velocity, 1), ECS_FIELD(it, Data, 2), it->count, it->dt);
}
static double sys_ecs(void *ctx) {
    iter_ctx *c = ctx;
    float dt = g_dt;
    double t0 = now_ns();
    NEED(ecs_progress(c->w, dt) == ECS_OK, "ecs_progress failed");
    clobber();
    return now_ns() - t0;
}
static bench_row bench_iter_sys(bool with_data) {
    bench_row r = {with_data ? "iterate P+V+Data as a system, ecs_progress, 1M (per entity)"
                             : "iterate P+V as a system, ecs_progress, 1M (per entity)", 0, 0, 1.05, true};
    iter_ctx c;
    iter_setup(&c, N_ITER, with_data);
    ecs_system_desc sd = {.name = "move", .fn = with_data ? pvd_system : pv_system,
                          .terms = {{c.id.pos, ECS_WRITE, ECS_AND},
                                    {c.id.vel, with_data ? ECS_WRITE : ECS_READ, ECS_AND},
                                    {with_data ? c.id.data : 0, ECS_WRITE, ECS_AND}}};
    NEED(ecs_system_add(c.w, &sd) != 0, "ecs_system_add failed");
    run_pair(reps(with_data ? 201 : 251), with_data ? pvd_base : pv_base, sys_ecs, &c, N_ITER, &r.base_ns, &r.ecs_ns);
    iter_check(&c, r.name);
    iter_teardown(&c);
    return r;
}
static bench_row bench_iter_pv_sys(void) { return bench_iter_sys(false); }
static bench_row bench_iter_pvd_sys(void) { return bench_iter_sys(true); }

/* ---- fragmented: 26 tags x 20 entities with Data, 26 tables --------------- */
enum { FRAG_TAGS = 26, FRAG_PER_TAG = 20, FRAG_N = FRAG_TAGS * FRAG_PER_TAG,
       FRAG_PASSES = 2000 };  /* passes per sample: the workload is tiny */

typedef struct frag_ctx {
    Data *d;  /* baseline: FRAG_N in one array, in the tables' order */
    ecs_world *w;
    ecs_query *q;  /* terms: Data */
} frag_ctx;

static double frag_base(void *ctx) {
    frag_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < FRAG_PASSES; k++) {
        kernel_data(c->d, FRAG_N);
        clobber();
    }
    return now_ns() - t0;
}
static double frag_ecs(void *ctx) {
    frag_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < FRAG_PASSES; k++) {
        for (ecs_iter it = ecs_query_iter(c->w, c->q); ecs_query_next(&it);)
            kernel_data(ECS_FIELD(&it, Data, 0), it.count);
        clobber();
    }
    return now_ns() - t0;
}

static bench_row bench_fragmented(void) {
    static const char *const tag_names[FRAG_TAGS] = {
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M",
        "N", "O", "P", "Q", "R", "S", "T", "U", "V", "W", "X", "Y", "Z"};
    bench_row r = {"fragmented: Data in 26 tables x 20 (per entity)", 0, 0, 1.5, true};
    frag_ctx c;
    ids id;
    c.d = alloc64(FRAG_N * sizeof *c.d);
    random_values(NULL, NULL, c.d, FRAG_N, 0xF7A6u);
    c.w = world_new(&id);
    /* created straight into {Data, tag}, so no third table appears */
    for (int t = 0; t < FRAG_TAGS; t++) {
        ecs_id tag = ecs_component(c.w, tag_names[t], 0, 0);
        NEED(tag, "ecs_component (tag) failed");
        ecs_id cids[2] = {id.data, tag};
        ecs_entity h[FRAG_PER_TAG];
        NEED(ecs_create_many(c.w, FRAG_PER_TAG, cids, 2, h) == ECS_OK, "ecs_create_many failed");
        for (int i = 0; i < FRAG_PER_TAG; i++)
            NEED(ecs_set(c.w, h[i], id.data, &c.d[t * FRAG_PER_TAG + i]) == ECS_OK,
                 "ecs_set failed");
    }
    c.q = ecs_query_new(c.w, &(ecs_query_desc){.terms = {{id.data, ECS_WRITE, ECS_AND}}});
    NEED(c.q, "ecs_query_new failed");

    run_pair(reps(101), frag_base, frag_ecs, &c, (double)FRAG_N * FRAG_PASSES, &r.base_ns,
             &r.ecs_ns);

    double ecs = 0;
    int rows = 0, tables = 0;
    for (ecs_iter it = ecs_query_iter(c.w, c.q); ecs_query_next(&it);) {
        ecs += sum_data(ECS_FIELD(&it, Data, 0), it.count);
        rows += it.count;
        tables += it.count > 0;
    }
    check(rows == FRAG_N && tables == FRAG_TAGS, r.name, "the query visited the wrong rows");
    check(same_sum(ecs, sum_data(c.d, FRAG_N)), r.name, "checksums differ");
    g_sink = ecs;
    ecs_query_free(c.q);
    ecs_world_free(c.w);
    free(c.d);
    return r;
}

/* ---- structural changes --------------------------------------------------- */
enum { N_CREATE = 1000000, N_MOVE = 10000, MOVE_PASSES = 10 };

static Position pos_of(size_t i) { return (Position){(float)i, (float)(i & 15)}; }
static Velocity vel_of(size_t i) { return (Velocity){1.0f, (float)(i & 7)}; }

/* The plain-array store: an entity table as a struct of arrays (handles,
   Position, Velocity). Handles are index+1 with a generation above bit 32. */
typedef struct soa {
    uint64_t *ents;
    Position *p;
    Velocity *v;
    size_t n, cap;
} soa;

static void soa_grow(soa *s) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    uint64_t *e = realloc(s->ents, cap * sizeof *e);
    NEED(e, "out of memory");
    s->ents = e;
    Position *p = realloc(s->p, cap * sizeof *p);
    NEED(p, "out of memory");
    s->p = p;
    Velocity *v = realloc(s->v, cap * sizeof *v);
    NEED(v, "out of memory");
    s->v = v;
    s->cap = cap;
}
static void soa_free(soa *s) {
    free(s->ents); free(s->p); free(s->v);
    memset(s, 0, sizeof *s);
}

typedef struct create_ctx {
    ecs_entity *out;  /* N_CREATE handles, reused by every sample */
} create_ctx;

/* Baseline: append to a struct of arrays that starts empty and doubles
   (realloc) as it fills, as the ecs.h world starts empty too. */
static double create_base(void *ctx) {
    (void)ctx;
    soa s = {0};
    double t0 = now_ns();
    for (size_t i = 0; i < N_CREATE; i++) {
        if (s.n == s.cap) soa_grow(&s);
        s.ents[s.n] = ((uint64_t)1 << 32) | (i + 1);
        s.p[s.n] = pos_of(i);
        s.v[s.n] = vel_of(i);
        s.n++;
    }
    clobber();
    double t = now_ns() - t0;
    g_sink = s.p[N_CREATE - 1].x + (double)s.ents[N_CREATE / 2];
    soa_free(&s);
    return t;
}
/* N_CREATE entities, each made by ecs_create, ecs_set P, ecs_set V; false
   if a call failed. The last one's handle in *last. */
static bool create_one_by_one(ecs_world *w, const ids *id, ecs_entity *last) {
    bool bad = false;
    ecs_entity e = 0;
    for (size_t i = 0; i < N_CREATE; i++) {
        e = ecs_create(w);
        Position p = pos_of(i);
        Velocity v = vel_of(i);
        bad |= e == 0;
        bad |= ecs_set(w, e, id->pos, &p) != ECS_OK;
        bad |= ecs_set(w, e, id->vel, &v) != ECS_OK;
    }
    *last = e;
    return !bad;
}
static double create_ecs(void *ctx) {
    (void)ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_entity last;
    double t0 = now_ns();
    bool ok = create_one_by_one(w, &id, &last);
    double t = now_ns() - t0;
    check(ok && ecs_count(w) == N_CREATE, "create", "ecs_create/ecs_set failed");
    ecs_world_free(w);
    return t;
}

static bench_row bench_create(void) {
    bench_row r = {"create 1M one at a time + set P, V (per entity)", 0, 0, 25, false};
    run_pair(reps(41), create_base, create_ecs, NULL, N_CREATE, &r.base_ns, &r.ecs_ns);
    return r;
}

#if defined(__linux__)
/* The entities create_one_by_one made: all there, the last with its values. */
static void create_check(ecs_world *w, const ids *id, ecs_entity last, bool ok, const char *bench) {
    const Position *p = ecs_get(w, last, id->pos);
    const Velocity *v = ecs_get(w, last, id->vel);
    Position pe = pos_of(N_CREATE - 1);
    Velocity ve = vel_of(N_CREATE - 1);
    check(ok && ecs_count(w) == N_CREATE, bench, "ecs_create/ecs_set failed");
    check(p && v && p->x == pe.x && p->y == pe.y && v->x == ve.x && v->y == ve.y, bench,
          "the last entity's values are wrong");
}

/* The fresh-process row's ecs.h side, in a child: the world's creation is
   timed too (a level load makes one); its freeing is not, nor done (the
   child exits). The baseline is create_base, unchanged. */
static double create_fresh_ecs(void *ctx) {
    (void)ctx;
    ids id;
    ecs_entity last;
    double t0 = now_ns();
    ecs_world *w = world_new(&id);
    bool ok = create_one_by_one(w, &id, &last);
    double t = now_ns() - t0;
    create_check(w, &id, last, ok, "create, fresh process");
    return t;
}

static bench_row bench_create_fresh(void) {
    bench_row r = {"W1 create 1M one at a time + set P + set V, fresh process (per entity)", 0, 0, 30,
                   false};
    run_pair_fresh(r.name, reps(21), create_base, create_fresh_ecs, NULL, N_CREATE, &r.base_ns,
                   &r.ecs_ns);
    return r;
}
#endif

/* Baseline of both bulk rows: allocate the three arrays at their final size,
   fill the components (zeroed, or copied from p and v), write the handles
   and copy them out. The time in ns. (ecs.h allocates through a realloc-style
   hook, so it cannot lean on calloc's zero pages either.) */
static double bulk_arrays(ecs_entity *out, const Position *src_p, const Velocity *src_v) {
    double t0 = now_ns();
    uint64_t *ents = alloc64(N_CREATE * sizeof *ents);
    Position *p = alloc64(N_CREATE * sizeof *p);
    Velocity *v = alloc64(N_CREATE * sizeof *v);
    if (src_p) memcpy(p, src_p, N_CREATE * sizeof *p); else memset(p, 0, N_CREATE * sizeof *p);
    if (src_v) memcpy(v, src_v, N_CREATE * sizeof *v); else memset(v, 0, N_CREATE * sizeof *v);
    for (size_t i = 0; i < N_CREATE; i++) ents[i] = ((uint64_t)1 << 32) | (i + 1);
    memcpy(out, ents, N_CREATE * sizeof *ents);
    clobber();
    double t = now_ns() - t0;
    g_sink = p[N_CREATE - 1].x + v[7].y + (double)out[N_CREATE - 1];
    free(ents); free(p); free(v);
    return t;
}
static double bulk_base(void *ctx) { return bulk_arrays(((create_ctx *)ctx)->out, NULL, NULL); }
static double bulk_ecs(void *ctx) {
    create_ctx *c = ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    double t0 = now_ns();
    ecs_result res = ecs_create_many(w, N_CREATE, cids, 2, c->out);
    double t = now_ns() - t0;
    check(res == ECS_OK && ecs_count(w) == N_CREATE && ecs_has(w, c->out[N_CREATE - 1], id.vel),
          "bulk create", "ecs_create_many failed");
    ecs_world_free(w);
    return t;
}

static bench_row bench_bulk_create(void) {
    bench_row r = {"bulk create 1M with P+V (per entity)", 0, 0, 12, false};
    create_ctx c = {alloc64(N_CREATE * sizeof(ecs_entity))};
    memset(c.out, 0, N_CREATE * sizeof(ecs_entity));
    run_pair(reps(41), bulk_base, bulk_ecs, &c, N_CREATE, &r.base_ns, &r.ecs_ns);
    free(c.out);
    return r;
}

/* Bulk creation with the values given (a level load): the baseline copies
   them into fresh arrays; ecs.h copies whole columns into a fresh world. */
typedef struct bulkv_ctx { ecs_entity *out; Position *p; Velocity *v; } bulkv_ctx;
static double bulkv_base(void *ctx) {
    bulkv_ctx *c = ctx;
    return bulk_arrays(c->out, c->p, c->v);
}
static double bulkv_ecs(void *ctx) {
    bulkv_ctx *c = ctx;
    double t0 = now_ns();   /* the world's creation counts: a level load makes one */
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    const void *vals[2] = {c->p, c->v};
    ecs_result res = ecs_create_many_values(w, N_CREATE, cids, 2, vals, c->out);
    double t = now_ns() - t0;
    const Velocity *v = ecs_get(w, c->out[7], id.vel);
    check(res == ECS_OK && ecs_count(w) == N_CREATE && v && v->y == c->v[7].y, "bulk create with values",
          "ecs_create_many_values failed");
    ecs_world_free(w);
    return t;
}
/* The values to load, and room for the handles. */
static void bulkv_setup(bulkv_ctx *c) {
    *c = (bulkv_ctx){alloc64(N_CREATE * sizeof(ecs_entity)), alloc64(N_CREATE * sizeof(Position)),
                     alloc64(N_CREATE * sizeof(Velocity))};
    for (size_t i = 0; i < N_CREATE; i++) {
        c->p[i] = (Position){(float)i, 1};
        c->v[i] = (Velocity){1, (float)i};
    }
}
static bench_row bench_bulk_values(void) {
    bench_row r = {"bulk create 1M with P+V and values (per entity)", 0, 0, 4, false};
    bulkv_ctx c;
    bulkv_setup(&c);
    run_pair(reps(41), bulkv_base, bulkv_ecs, &c, N_CREATE, &r.base_ns, &r.ecs_ns);
    free(c.out); free(c.p); free(c.v);
    return r;
}

/* Prefab instances in bulk against the same entities made with their values:
   the baseline is ecs_create_many_values of 1M entities with P, V and Data
   (each value the same, as an instance's are), ecs.h ecs_instantiate_many of
   a prefab with those three; both into a fresh world, the call timed. */
typedef struct inst_ctx { ecs_entity *out; Position *p; Velocity *v; Data *d; } inst_ctx;
static double inst_base(void *ctx) {
    inst_ctx *c = ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[3] = {id.pos, id.vel, id.data};
    const void *vals[3] = {c->p, c->v, c->d};
    double t0 = now_ns();
    ecs_result res = ecs_create_many_values(w, N_CREATE, cids, 3, vals, c->out);
    double t = now_ns() - t0;
    check(res == ECS_OK && ecs_count(w) == N_CREATE, "instantiate", "ecs_create_many_values failed");
    ecs_world_free(w);
    return t;
}
static double inst_ecs(void *ctx) {
    inst_ctx *c = ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_entity prefab = ecs_prefab_new(w);
    NEED(prefab && !ecs_set(w, prefab, id.pos, &c->p[0]) && !ecs_set(w, prefab, id.vel, &c->v[0]) &&
         !ecs_set(w, prefab, id.data, &c->d[0]), "prefab setup failed");
    double t0 = now_ns();
    ecs_result res = ecs_instantiate_many(w, prefab, N_CREATE, c->out);
    double t = now_ns() - t0;
    const Velocity *v = ecs_get(w, c->out[7], id.vel);
    check(res == ECS_OK && ecs_count(w) == N_CREATE && v && v->y == c->v[0].y, "instantiate",
          "ecs_instantiate_many failed");
    ecs_world_free(w);
    return t;
}
static bench_row bench_instantiate(void) {
    bench_row r = {"ecs_instantiate_many 1M of a P+V+Data prefab vs create_many_values", 0, 0, 1.3, true};
    inst_ctx c = {alloc64(N_CREATE * sizeof(ecs_entity)), alloc64(N_CREATE * sizeof(Position)),
                  alloc64(N_CREATE * sizeof(Velocity)), alloc64(N_CREATE * sizeof(Data))};
    for (size_t i = 0; i < N_CREATE; i++) {
        c.p[i] = (Position){3, 1};
        c.v[i] = (Velocity){1, 5};
        memset(&c.d[i], 7, sizeof c.d[i]);
    }
    run_pair(reps(21), inst_base, inst_ecs, &c, N_CREATE, &r.base_ns, &r.ecs_ns);
    free(c.out); free(c.p); free(c.v); free(c.d);
    return r;
}

#if defined(__linux__)
/* Fresh-process samples of the same two sides. The child makes the values
   and touches the handles' array before the timed part: the caller's data
   exist before a level load, so only each side's own new memory faults in
   its time, as the in-process row's warm arrays leave it. */
static void bulkv_fresh_setup(bulkv_ctx *c) {
    bulkv_setup(c);
    memset(c->out, 0, N_CREATE * sizeof *c->out);
}
static double bulkv_fresh_base(void *ctx) {
    bulkv_ctx c;
    (void)ctx;
    bulkv_fresh_setup(&c);
    return bulkv_base(&c);
}
static double bulkv_fresh_ecs(void *ctx) {
    bulkv_ctx c;
    (void)ctx;
    bulkv_fresh_setup(&c);
    return bulkv_ecs(&c);
}
static bench_row bench_bulk_values_fresh(void) {
    bench_row r = {"W1 bulk create 1M with P+V and values, fresh process (per entity)", 0, 0, 4, false};
    run_pair_fresh(r.name, reps(21), bulkv_fresh_base, bulkv_fresh_ecs, NULL, N_CREATE, &r.base_ns,
                   &r.ecs_ns);
    return r;
}
#endif

/* Baseline for add/remove: two tables {Position} and {Position, Velocity} as
   arrays, an entity -> (table, row) map, and the archetype move: append to
   the other table, swap-remove from this one. */
typedef struct move_table {
    uint32_t *ents;
    Position *p;
    Velocity *v;  /* NULL in the {Position} table */
    uint32_t n;
} move_table;
typedef struct move_loc { uint32_t table, row; } move_loc;

typedef struct move_ctx {
    move_table t[2];
    move_loc *loc;
    ecs_world *w;
    ecs_entity *h;
    ids id;
} move_ctx;

static void move_swap_remove(move_table *t, move_loc *loc, uint32_t row) {
    uint32_t last = --t->n;
    if (row != last) {
        t->ents[row] = t->ents[last];
        t->p[row] = t->p[last];
        if (t->v) t->v[row] = t->v[last];
        loc[t->ents[row]].row = row;
    }
}
static void move_add_vel(move_ctx *c, uint32_t e) {
    move_loc l = c->loc[e];
    if (l.table == 1) return;
    move_table *from = &c->t[0], *to = &c->t[1];
    uint32_t row = to->n++;
    to->ents[row] = e;
    to->p[row] = from->p[l.row];
    to->v[row] = (Velocity){0, 0};
    c->loc[e] = (move_loc){1, row};
    move_swap_remove(from, c->loc, l.row);
}
static void move_remove_vel(move_ctx *c, uint32_t e) {
    move_loc l = c->loc[e];
    if (l.table == 0) return;
    move_table *from = &c->t[1], *to = &c->t[0];
    uint32_t row = to->n++;
    to->ents[row] = e;
    to->p[row] = from->p[l.row];
    c->loc[e] = (move_loc){0, row};
    move_swap_remove(from, c->loc, l.row);
}

static double move_base(void *ctx) {
    move_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (uint32_t e = 0; e < N_MOVE; e++) {
            move_add_vel(c, e);
            move_remove_vel(c, e);
        }
        clobber();
    }
    return now_ns() - t0;
}
static double move_ecs(void *ctx) {
    move_ctx *c = ctx;
    bool bad = false;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++) {
            bad |= ecs_add(c->w, c->h[i], c->id.vel) != ECS_OK;
            bad |= ecs_remove(c->w, c->h[i], c->id.vel) != ECS_OK;
        }
        clobber();
    }
    double t = now_ns() - t0;
    check(!bad, "add/remove", "ecs_add/ecs_remove failed");
    return t;
}

static bench_row bench_add_remove(void) {
    bench_row r = {"add+remove Velocity, 10k with P (per pair)", 0, 0, 10, false};
    move_ctx c;
    memset(&c, 0, sizeof c);
    for (int t = 0; t < 2; t++) {
        c.t[t].ents = alloc64(N_MOVE * sizeof(uint32_t));
        c.t[t].p = alloc64(N_MOVE * sizeof(Position));
    }
    c.t[1].v = alloc64(N_MOVE * sizeof(Velocity));
    c.loc = alloc64(N_MOVE * sizeof *c.loc);
    for (uint32_t e = 0; e < N_MOVE; e++) {
        c.t[0].ents[e] = e;
        c.t[0].p[e] = pos_of(e);
        c.loc[e] = (move_loc){0, e};
    }
    c.t[0].n = N_MOVE;

    c.w = world_new(&c.id);
    c.h = alloc64(N_MOVE * sizeof *c.h);
    NEED(ecs_create_many(c.w, N_MOVE, &c.id.pos, 1, c.h) == ECS_OK, "ecs_create_many failed");
    for (size_t i = 0; i < N_MOVE; i++) {
        Position p = pos_of(i);
        NEED(ecs_set(c.w, c.h[i], c.id.pos, &p) == ECS_OK, "ecs_set failed");
    }

    run_pair(reps(101), move_base, move_ecs, &c, (double)N_MOVE * MOVE_PASSES, &r.base_ns,
             &r.ecs_ns);

    double base = 0, ecs = 0;
    bool moved_back = c.t[0].n == N_MOVE;
    for (size_t i = 0; i < N_MOVE; i++) {
        const Position *p = ecs_get(c.w, c.h[i], c.id.pos);
        moved_back &= p && !ecs_has(c.w, c.h[i], c.id.vel);
        ecs += p ? (double)p->x + (double)p->y : 0;
        base += (double)c.t[0].p[i].x + (double)c.t[0].p[i].y;
    }
    check(moved_back && ecs_count(c.w) == N_MOVE, r.name, "entities did not keep Position only");
    check(same_sum(base, ecs), r.name, "Position values changed in the moves");
    g_sink = base + ecs;
    ecs_world_free(c.w);
    free(c.h);
    free(c.loc);
    for (int t = 0; t < 2; t++) { free(c.t[t].ents); free(c.t[t].p); free(c.t[t].v); }
    return r;
}

/* ---- ecs_set of a component the entity has: a value write, no move -------- */
/* The same rows with ecs_cmd_set into a user buffer, then ecs_commands_apply:
   the baseline writes the same values into an array. */
typedef struct overwrite_ctx { ecs_world *w; ids id; ecs_entity *h; Velocity *v; ecs_commands *c; } overwrite_ctx;
static double overwrite_base(void *ctx) {   /* the same writes into a plain array */
    overwrite_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++) c->v[i] = (Velocity){(float)i, (float)k};
        clobber();
    }
    return now_ns() - t0;
}
static double overwrite_ecs(void *ctx) {
    overwrite_ctx *c = ctx;
    bool bad = false;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++)
            bad |= ecs_set(c->w, c->h[i], c->id.vel, &(Velocity){(float)i, (float)k}) != ECS_OK;
        clobber();
    }
    double t = now_ns() - t0;
    check(!bad, "overwrite", "ecs_set failed");
    return t;
}
static double overwrite_cmd_ecs(void *ctx) {
    overwrite_ctx *c = ctx;
    bool bad = false;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++)
            bad |= ecs_cmd_set(c->c, c->h[i], c->id.vel, &(Velocity){(float)i, (float)k}) != ECS_OK;
        bad |= ecs_commands_apply(c->w, c->c) != ECS_OK;
        clobber();
    }
    double t = now_ns() - t0;
    check(!bad, "ecs_cmd_set", "ecs_cmd_set or ecs_commands_apply failed");
    return t;
}
static bench_row overwrite_row(bool commands) {
    bench_row r = {"ecs_set of a component it has, 10k with P+V (per set)", 0, 0, 6, false};
    if (commands) r = (bench_row){"ecs_cmd_set + apply, plain Velocity, 10k with P+V (per set)", 0, 0, 12, false};
    overwrite_ctx c;
    c.w = world_new(&c.id);
    c.h = alloc64(N_MOVE * sizeof *c.h);
    c.v = alloc64(N_MOVE * sizeof *c.v);
    c.c = commands ? ecs_commands_new(c.w) : NULL;
    NEED(!commands || c.c, "ecs_commands_new failed");
    ecs_id pv[2] = {c.id.pos, c.id.vel};
    NEED(ecs_create_many(c.w, N_MOVE, pv, 2, c.h) == ECS_OK, "ecs_create_many failed");
    run_pair(reps(101), overwrite_base, commands ? overwrite_cmd_ecs : overwrite_ecs, &c,
             (double)N_MOVE * MOVE_PASSES, &r.base_ns, &r.ecs_ns);
    double base = 0, ecs = 0;
    for (size_t i = 0; i < N_MOVE; i++) {
        const Velocity *v = ecs_get(c.w, c.h[i], c.id.vel);
        ecs += v ? (double)v->x + (double)v->y : 0;
        base += (double)c.v[i].x + (double)c.v[i].y;
    }
    check(same_sum(base, ecs), r.name, "values differ from the baseline's");
    g_sink = base + ecs;
    ecs_world_free(c.w);
    free(c.h);
    free(c.v);
    return r;
}
static bench_row bench_overwrite(void) { return overwrite_row(false); }
static bench_row bench_cmd_set(void) { return overwrite_row(true); }

/* ---- spawns applied at a sync point ----------------------------------------- */
/* 200k entities recorded as ecs_cmd_create + ecs_cmd_set of Position,
   Velocity and Data (what a spawner system records), then applied (timed),
   against the same calls made immediately (ecs_create + 3 ecs_set): each
   new entity's commands are placed at once instead of moving it through a
   table per id. */
enum { N_SPAWN = 200000 };
static double spawn_immediate(void *ctx) {
    (void)ctx;
    ids id;
    ecs_world *w = world_new(&id);
    double t0 = now_ns();
    for (int i = 0; i < N_SPAWN; i++) {
        ecs_entity e = ecs_create(w);
        NEED(e && !ecs_set(w, e, id.pos, &(Position){(float)i, 1}) && !ecs_set(w, e, id.vel, &(Velocity){1, 0}) &&
             !ecs_set(w, e, id.data, &(Data){i, 0, false, 0}), "immediate spawn");
    }
    double t = now_ns() - t0;
    g_sink += (double)ecs_count(w);
    ecs_world_free(w);
    return t;
}
static double spawn_applied(void *ctx) {
    (void)ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_commands *c = ecs_commands_new(w);
    NEED(c, "ecs_commands_new failed");
    for (int i = 0; i < N_SPAWN; i++) {
        ecs_entity e = ecs_cmd_create(c);
        NEED(e && !ecs_cmd_set(c, e, id.pos, &(Position){(float)i, 1}) && !ecs_cmd_set(c, e, id.vel, &(Velocity){1, 0}) &&
             !ecs_cmd_set(c, e, id.data, &(Data){i, 0, false, 0}), "recorded spawn");
    }
    double t0 = now_ns();
    NEED(ecs_commands_apply(w, c) == ECS_OK, "ecs_commands_apply failed");
    double t = now_ns() - t0;
    check(ecs_count(w) == N_SPAWN, "spawns applied", "wrong entity count");
    g_sink += (double)ecs_count(w);
    ecs_world_free(w);
    return t;
}
static bench_row bench_cmd_spawn(void) {
    bench_row r = {"200k spawns (create + 3 sets) applied from commands vs made immediately", 0, 0, 0.75, true};
    run_pair(reps(21), spawn_immediate, spawn_applied, NULL, N_SPAWN, &r.base_ns, &r.ecs_ns);
    return r;
}

/* ---- a sync point split over the threads --------------------------------- */
/* A frame whose chunked system records 200k spawns (create + 3 sets of plain
   components, one row of a spawner each): the sync point's time (frame
   stats, every frame timed) at 2 threads against 1, where it applies one by
   one. Each sample builds its world, runs a frame that makes the tables, destroys
   what it spawned (the next creates take freed slots, as in a game), and times
   the second frame's sync point. */
typedef struct split_ids { ids id; ecs_id spawner; } split_ids;
static void split_spawn(ecs_iter *it) {
    const split_ids *k = it->ctx;
    for (int i = 0; i < it->count; i++) {
        ecs_entity e = ecs_cmd_create(it->commands);
        NEED(e && !ecs_cmd_set(it->commands, e, k->id.pos, &(Position){(float)i, 1}) &&
             !ecs_cmd_set(it->commands, e, k->id.vel, &(Velocity){1, 0}) &&
             !ecs_cmd_set(it->commands, e, k->id.data, &(Data){i, 0, false, 0}), "recorded spawn");
    }
}
static double split_sample(int threads) {
    split_ids k;
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    NEED(w, "ecs_world_new failed");
    k.id.pos = ECS_COMPONENT(w, Position);
    k.id.vel = ECS_COMPONENT(w, Velocity);
    k.id.data = ECS_COMPONENT(w, Data);
    k.spawner = ecs_component(w, "Spawner", 0, 0);
    NEED(ecs_create_many(w, N_SPAWN, &k.spawner, 1, NULL) == ECS_OK, "spawners");
    NEED(ecs_system_add(w, &(ecs_system_desc){.name = "spawn", .fn = split_spawn, .ctx = &k, .chunk_size = 4096,
                                               .terms = {ECS_TERM_R(k.spawner)}}), "ecs_system_add");
    ecs_query *made = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(k.id.pos)}});
    NEED(made, "ecs_query_new");
    ecs_entity *list = malloc(N_SPAWN * sizeof *list);
    NEED(list, "out of memory");
    ecs_timing_interval(w, 1);
    double t = 0;
    for (int f = 0; f < 2; f++) {
        NEED(ecs_progress(w, 0.016f) == ECS_OK, "ecs_progress");
        ecs_frame_stats fs;
        NEED(ecs_frame_stats_get(w, &fs) == ECS_OK, "ecs_frame_stats_get");
        t = fs.sync_us * 1000;
        size_t n = 0;
        for (ecs_iter it = ecs_query_iter(w, made); ecs_query_next(&it);)
            for (int i = 0; i < it.count; i++) list[n++] = it.entities[i];
        check(n == N_SPAWN, "split apply", "wrong entity count");
        for (size_t i = 0; i < n; i++) ecs_destroy(w, list[i]);
    }
    free(list);
    ecs_world_free(w);
    return t;
}
static double split_one(void *ctx) { (void)ctx; return split_sample(1); }
static double split_two(void *ctx) { (void)ctx; return split_sample(2); }
static bench_row bench_cmd_split(void) {
    bench_row r = {"sync point of 200k spawns from a chunked system, 2 threads vs 1", 0, 0, 0.667, true};
    run_pair(reps(11), split_one, split_two, NULL, N_SPAWN, &r.base_ns, &r.ecs_ns);
    return r;
}

/* ---- ecs_cmd_set of a component that owns a string, then applied ---------- */
/* The buffer holds a constructed copy of each value (ctor + copy when
   recorded, copy into the entity and dtor when applied); the baseline copies
   each string into an array of owned strings, as a plain C program keeping
   the names would. */
typedef struct Label { char *s; } Label;
static void label_ctor(void *p, int n, void *ctx) { (void)ctx; memset(p, 0, (size_t)n * sizeof(Label)); }
static void label_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) free(((Label *)p)[i].s);
}
static char *label_dup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    NEED(d, "out of memory");
    return memcpy(d, s, n);
}
static void label_copy(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        Label *d = (Label *)dst + i;
        free(d->s);
        d->s = label_dup(((const Label *)src)[i].s);
    }
}
typedef struct label_ctx { ecs_world *w; ecs_id label; ecs_commands *c; ecs_entity *h; char **names; } label_ctx;
static const char *const g_labels[4] = {"archer-tower-01", "cannon-tower-17", "frost-tower-3x", "sniper-nest-9"};
static double label_base(void *ctx) {
    label_ctx *c = ctx;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++) {
            free(c->names[i]);
            c->names[i] = label_dup(g_labels[(i + (size_t)k) & 3]);
        }
        clobber();
    }
    return now_ns() - t0;
}
static double label_ecs(void *ctx) {
    label_ctx *c = ctx;
    bool bad = false;
    double t0 = now_ns();
    for (int k = 0; k < MOVE_PASSES; k++) {
        for (size_t i = 0; i < N_MOVE; i++) {
            Label l = {(char *)(uintptr_t)g_labels[(i + (size_t)k) & 3]};   /* the caller's, not owned */
            bad |= ecs_cmd_set(c->c, c->h[i], c->label, &l) != ECS_OK;
        }
        bad |= ecs_commands_apply(c->w, c->c) != ECS_OK;
        clobber();
    }
    double t = now_ns() - t0;
    check(!bad, "ecs_cmd_set", "ecs_cmd_set or ecs_commands_apply failed");
    return t;
}
static double label_sum(const char *s) { return s ? (double)strlen(s) + (double)(unsigned char)s[strlen(s) - 1] : 0; }
static bench_row bench_cmd_set_hooked(void) {
    bench_row r = {"ecs_cmd_set + apply, a component owning a string, 10k (per set)", 0, 0, 60, false};
    label_ctx c;
    ids id;
    c.w = world_new(&id);
    c.label = ecs_component_init(c.w, &(ecs_component_desc){.name = "Label", .size = sizeof(Label),
        .align = _Alignof(Label), .ctor = label_ctor, .dtor = label_dtor, .copy = label_copy});
    c.c = ecs_commands_new(c.w);
    c.h = alloc64(N_MOVE * sizeof *c.h);
    c.names = calloc(N_MOVE, sizeof *c.names);
    NEED(c.label && c.c && c.names, "setup failed");
    NEED(ecs_create_many(c.w, N_MOVE, &c.label, 1, c.h) == ECS_OK, "ecs_create_many failed");
    run_pair(reps(101), label_base, label_ecs, &c, (double)N_MOVE * MOVE_PASSES, &r.base_ns, &r.ecs_ns);
    double base = 0, ecs = 0;
    for (size_t i = 0; i < N_MOVE; i++) {
        const Label *l = ecs_get(c.w, c.h[i], c.label);
        ecs += l ? label_sum(l->s) : 0;
        base += label_sum(c.names[i]);
    }
    check(same_sum(base, ecs), r.name, "values differ from the baseline's");
    g_sink = base + ecs;
    ecs_world_free(c.w);
    for (size_t i = 0; i < N_MOVE; i++) free(c.names[i]);
    free(c.names);
    free(c.h);
    return r;
}

/* Baseline for destroy: the struct of arrays holding N entities, an index ->
   row map and a generation per index; destroying checks the generation,
   swap-removes the row, bumps the generation and pushes the index on a free
   list. */
typedef struct destroy_ctx {
    ecs_entity *h;  /* N_CREATE handles, reused by every sample */
    soa s;
    uint32_t *row, *gen, *free_list;
} destroy_ctx;

static double destroy_base(void *ctx) {
    destroy_ctx *c = ctx;
    soa *s = &c->s;
    if (s->cap < N_CREATE) {
        soa_free(s);
        s->ents = alloc64(N_CREATE * sizeof *s->ents);
        s->p = alloc64(N_CREATE * sizeof *s->p);
        s->v = alloc64(N_CREATE * sizeof *s->v);
        s->cap = N_CREATE;
    }
    for (uint32_t i = 0; i < N_CREATE; i++) {
        s->ents[i] = ((uint64_t)c->gen[i] << 32) | (i + 1);
        s->p[i] = pos_of(i);
        s->v[i] = vel_of(i);
        c->row[i] = i;
        c->h[i] = s->ents[i];
    }
    s->n = N_CREATE;
    uint32_t n_free = 0;
    size_t stale = 0;
    double t0 = now_ns();
    for (size_t i = 0; i < N_CREATE; i++) {
        uint64_t e = c->h[i];
        uint32_t idx = (uint32_t)e - 1;
        if (c->gen[idx] != (uint32_t)(e >> 32)) { stale++; continue; }
        uint32_t row = c->row[idx], last = (uint32_t)--s->n;
        if (row != last) {
            s->ents[row] = s->ents[last];
            s->p[row] = s->p[last];
            s->v[row] = s->v[last];
            c->row[(uint32_t)s->ents[row] - 1] = row;
        }
        c->gen[idx]++;
        c->free_list[n_free++] = idx;
    }
    clobber();
    double t = now_ns() - t0;
    check(stale == 0 && s->n == 0, "destroy", "baseline lost track");
    return t;
}
/* n entities with P+V made in a fresh world, then destroyed one at a time:
   the destroys' time. */
static double destroy_n(ecs_entity *h, size_t n) {
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    NEED(ecs_create_many(w, n, cids, 2, h) == ECS_OK, "ecs_create_many failed");
    bool bad = false;
    double t0 = now_ns();
    for (size_t i = 0; i < n; i++) bad |= ecs_destroy(w, h[i]) != ECS_OK;
    double t = now_ns() - t0;
    check(!bad && ecs_count(w) == 0, "destroy", "ecs_destroy failed");
    ecs_world_free(w);
    return t;
}
static double destroy_ecs(void *ctx) { return destroy_n(((destroy_ctx *)ctx)->h, N_CREATE); }
static double destroy_with_ecs(void *ctx) {   /* the same entities, all in one call */
    ecs_entity *h = ((destroy_ctx *)ctx)->h;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    NEED(ecs_create_many(w, N_CREATE, cids, 2, h) == ECS_OK, "ecs_create_many failed");
    double t0 = now_ns();
    ecs_result r = ecs_destroy_with(w, id.pos);
    double t = now_ns() - t0;
    check(r == ECS_OK && ecs_count(w) == 0, "destroy with", "ecs_destroy_with failed");
    ecs_world_free(w);
    return t;
}

/* The destroy baseline against one ecs.h way of destroying the same world. */
static bench_row destroy_row(const char *name, double (*ecs_fn)(void *)) {
    bench_row r = {name, 0, 0, 9, false};
    destroy_ctx c;
    memset(&c, 0, sizeof c);
    c.h = alloc64(N_CREATE * sizeof *c.h);
    c.row = alloc64(N_CREATE * sizeof *c.row);
    c.gen = alloc64(N_CREATE * sizeof *c.gen);
    c.free_list = alloc64(N_CREATE * sizeof *c.free_list);
    for (size_t i = 0; i < N_CREATE; i++) c.gen[i] = 1;
    memset(c.free_list, 0, N_CREATE * sizeof *c.free_list);
    run_pair(reps(41), destroy_base, ecs_fn, &c, N_CREATE, &r.base_ns, &r.ecs_ns);
    g_sink = (double)c.free_list[N_CREATE - 1];
    soa_free(&c.s);
    free(c.h); free(c.row); free(c.gen); free(c.free_list);
    return r;
}
static bench_row bench_destroy(void) { return destroy_row("destroy 1M one at a time (per entity)", destroy_ecs); }
static bench_row bench_destroy_with(void) {
    return destroy_row("destroy 1M with ecs_destroy_with (per entity)", destroy_with_ecs);
}

/* ==== the scheduler and the validator ====================================
   These rows have no plain-array baseline, so they print in sections of their
   own: 1 thread vs 2 threads (frame times of two identically built worlds,
   frames alternating between them), absolute times (tiny frames, ecs_validate),
   and simulated schedules (ecs_schedule_simulate against its lower bound). */

static uint64_t rng_u64(void) {   /* the same splitmix64 stream as rng_float */
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint32_t rng_below(uint32_t n) { return (uint32_t)(rng_u64() % n); }

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {   /* FNV-1a */
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001B3ull; }
    return h;
}
#define HASH_SEED 0xCBF29CE484222325ull

static void sys_noop(ecs_iter *it) { (void)it; }

static ecs_world *world_threads(int threads, ecs_order order) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads, .order = order});
    NEED(w, "ecs_world_new failed");
    NEED(ecs_thread_count(w) == threads, "ecs_world_new started the wrong number of threads");
    return w;
}

/* Registration helpers: a failed call stops the run. */
static ecs_id component_n(ecs_world *w, const char *prefix, int i, size_t size, size_t align) {
    char name[32];
    snprintf(name, sizeof name, "%s%d", prefix, i);
    ecs_id id = ecs_component(w, name, size, align);
    NEED(id, "ecs_component failed");
    return id;
}
static ecs_system system_add(ecs_world *w, const ecs_system_desc *d) {
    ecs_system s = ecs_system_add(w, d);
    NEED(s, "ecs_system_add failed");
    return s;
}

/* ---- timing frames ---- */
/* frames ecs_progress calls on w; ns per frame. */
static double progress_ns(ecs_world *w, int frames, const char *bench) {
    bool bad = false;
    float dt = g_dt;
    double t0 = now_ns();
    for (int f = 0; f < frames; f++) bad |= ecs_progress(w, dt) != ECS_OK;
    double t = now_ns() - t0;
    check(!bad, bench, "ecs_progress failed");
    return t / frames;
}
/* Warm-up: the scheduler times systems every 8th frame and runs a stage
   inline until it has measured enough work, so both worlds first run 16
   frames (two of them timed). Then n samples of `frames` frames per world, the world that
   goes first alternating; medians in ns per frame. */
static void progress_pair(int n, int frames, ecs_world *w1, ecs_world *w2, const char *bench,
                          double *ns1, double *ns2) {
    double a[MAX_REPS], b[MAX_REPS];
    NEED(n > 0 && n <= MAX_REPS, "bad sample count");
    for (int k = 0; k < 16; k++) { progress_ns(w1, 1, bench); progress_ns(w2, 1, bench); }
    for (int r = 0; r < n; r++) {
        if (r & 1) { b[r] = progress_ns(w2, frames, bench); a[r] = progress_ns(w1, frames, bench); }
        else       { a[r] = progress_ns(w1, frames, bench); b[r] = progress_ns(w2, frames, bench); }
    }
    *ns1 = median(a, n);
    *ns2 = median(b, n);
}

/* ---- thread scaling rows ---- */
typedef struct speed_row {
    const char *name;
    double ms1, ms2;   /* median ms per frame, 1 and 2 threads */
    double target;     /* min speedup ms1 / ms2 */
} speed_row;

static bool speed_ok(const speed_row *r) { return r->target < 0 || r->ms1 >= r->target * r->ms2; }
static void speed_header(void) {
    printf("\nscheduler: 1 thread vs 2 threads, ms per frame (medians of alternating frames)\n");
    printf("%-46s %12s %15s %8s %10s  %s\n", "workload", "1 thread ms", "2 threads ms", "speedup",
           "target", "ok/MISS");
    printf("%.*s\n", 100, "----------------------------------------------------------------"
                          "----------------------------------------------------------------");
}
static void speed_print(const speed_row *r) {
    char target[32];
    if (r->target < 0) snprintf(target, sizeof target, "-");
    else snprintf(target, sizeof target, ">= %.2fx", r->target);
    printf("%-46s %12.3f %15.3f %7.3fx %10s  %s\n", r->name, r->ms1, r->ms2, r->ms1 / r->ms2, target,
           r->target < 0 ? "info" : speed_ok(r) ? "ok" : "MISS");
    fflush(stdout);
}

/* A 4x4 matrix, inverted in place by Gauss-Jordan elimination with partial
   pivoting. Entities start diagonally dominant (well conditioned), and each
   frame inverts an even number of times, so values stay bounded. */
typedef struct Mat4 { float m[16]; } Mat4;

static void mat4_invert(float *restrict m) {
    float a[4][8];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) { a[r][c] = m[r * 4 + c]; a[r][c + 4] = r == c ? 1.0f : 0.0f; }
    for (int c = 0; c < 4; c++) {
        int p = c;
        for (int r = c + 1; r < 4; r++) if (fabsf(a[r][c]) > fabsf(a[p][c])) p = r;
        if (p != c)
            for (int k = 0; k < 8; k++) { float t = a[c][k]; a[c][k] = a[p][k]; a[p][k] = t; }
        float inv = 1.0f / a[c][c];
        for (int k = 0; k < 8; k++) a[c][k] *= inv;
        for (int r = 0; r < 4; r++) {
            if (r == c) continue;
            float f = a[r][c];
            for (int k = 0; k < 8; k++) a[r][k] -= f * a[c][k];
        }
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) m[r * 4 + c] = a[r][c + 4];
}
KERNEL kernel_invert(Mat4 *restrict m, int n, int times) {
    for (int i = 0; i < n; i++)
        for (int t = 0; t < times; t++) mat4_invert(m[i].m);
}
static void sys_invert(ecs_iter *it) {   /* ctx: inversions per entity */
    kernel_invert(ECS_FIELD(it, Mat4, 0), it->count, *(const int *)it->ctx);
}

static Mat4 mat4_random(void) {
    Mat4 m;
    for (int i = 0; i < 16; i++) m.m[i] = rng_float(-1, 1);
    for (int i = 0; i < 4; i++) m.m[i * 5] = (rng_float(0, 1) < 0.5f ? -1 : 1) * rng_float(4, 8);
    return m;
}

/* n entities holding only id (a Mat4 component), random values from seed. */
static void mat4_entities(ecs_world *w, ecs_id id, int n, uint64_t seed) {
    ecs_entity *h = alloc64((size_t)n * sizeof *h);
    NEED(ecs_create_many(w, (size_t)n, &id, 1, h) == ECS_OK, "ecs_create_many failed");
    rng_seed(seed);
    for (int i = 0; i < n; i++) {
        Mat4 m = mat4_random();
        NEED(ecs_set(w, h[i], id, &m) == ECS_OK, "ecs_set failed");
    }
    free(h);
}

/* Hash of every Mat4 of cids, in query order (creation order: one table per
   component, nothing ever moves). Each frame inverted every matrix an even
   number of times, so each must still be close to the value it started with
   (component k's values came from seeds[k]); *close turns false if not. */
static uint64_t mat4_hash(ecs_world *w, const ecs_id *cids, const uint64_t *seeds, int n_ids,
                          long *rows, bool *close) {
    uint64_t h = HASH_SEED;
    for (int k = 0; k < n_ids; k++) {
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{cids[k], ECS_READ, ECS_AND}}});
        NEED(q, "ecs_query_new failed");
        rng_seed(seeds[k]);
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
            const Mat4 *m = ECS_FIELD(&it, const Mat4, 0);
            for (int i = 0; i < it.count; i++) {
                Mat4 start = mat4_random();
                for (int j = 0; j < 16; j++) *close &= fabsf(m[i].m[j] - start.m[j]) <= 1e-2f;
            }
            h = hash_bytes(h, m, sizeof *m * (size_t)it.count);
            *rows += it.count;
        }
        ecs_query_free(q);
    }
    return h;
}

/* Both worlds ran the same frames: the same values, close to where they
   started, every entity there. */
static void mat4_check(ecs_world *w1, ecs_world *w2, const ecs_id *ids1, const ecs_id *ids2,
                       const uint64_t *seeds, int n_ids, long n, const char *bench) {
    long r1 = 0, r2 = 0;
    bool close = true;
    uint64_t h1 = mat4_hash(w1, ids1, seeds, n_ids, &r1, &close);
    uint64_t h2 = mat4_hash(w2, ids2, seeds, n_ids, &r2, &close);
    check(r1 == n && r2 == n && ecs_count(w1) == (size_t)n && ecs_count(w2) == (size_t)n, bench,
          "wrong entity count");
    check(h1 == h2, bench, "the 1-thread and 2-thread worlds computed different values");
    check(close, bench, "a matrix is not back to its start after an even number of inversions");
}

enum { HEAVY_N = 10000, HEAVY_TIMES = 100, HEAVY_CHUNK = 256 };   /* TIMES even */
static const uint64_t HEAVY_SEED = 0x4EA7Bull;
static int g_heavy_times = HEAVY_TIMES;

static ecs_world *heavy_world(int threads, ecs_id *id) {
    ecs_world *w = world_threads(threads, ECS_ORDER_INSERTION);
    *id = ECS_COMPONENT(w, Mat4);
    NEED(*id, "ECS_COMPONENT failed");
    mat4_entities(w, *id, HEAVY_N, HEAVY_SEED);
    system_add(w, &(ecs_system_desc){.name = "invert", .fn = sys_invert, .ctx = &g_heavy_times,
                                     .terms = {{*id, ECS_WRITE, ECS_AND}}, .chunk_size = HEAVY_CHUNK});
    NEED(ecs_validate(w, NULL) == ECS_OK, "ecs_validate failed");
    return w;
}

static speed_row bench_heavy(void) {
    speed_row r = {"heavy: 10k x 100 4x4 inverses, chunks of 256", 0, 0, 1.9};
    ecs_id id1, id2;
    ecs_world *w1 = heavy_world(1, &id1), *w2 = heavy_world(2, &id2);
    double ns1, ns2;
    progress_pair(reps(31), 1, w1, w2, r.name, &ns1, &ns2);
    r.ms1 = ns1 / 1e6;
    r.ms2 = ns2 / 1e6;
    ecs_system_stats st;
    NEED(ecs_system_stats_get(w2, 1, &st) == ECS_OK, "ecs_system_stats_get failed");
    check(st.chunks == (HEAVY_N + HEAVY_CHUNK - 1) / HEAVY_CHUNK, r.name, "wrong chunk count");
    mat4_check(w1, w2, &id1, &id2, &HEAVY_SEED, 1, HEAVY_N, r.name);
    ecs_world_free(w1);
    ecs_world_free(w2);
    return r;
}

/* Reference, no ecs.h: the heavy row's work on plain arrays, on the calling
   thread vs split in halves over it and one new C11 thread (created per
   frame, ~0.1 ms of 40+). What this machine gives two threads right now. */
#if !defined(__STDC_NO_THREADS__)
typedef struct ref_half { Mat4 *m; int n; } ref_half;
static int ref_thread(void *arg) {
    ref_half *h = arg;
    kernel_invert(h->m, h->n, g_heavy_times);
    return 0;
}
static double ref_one(void *ctx) {
    ref_half *all = ctx;
    double t0 = now_ns();
    kernel_invert(all->m, all->n, g_heavy_times);
    clobber();
    return now_ns() - t0;
}
static double ref_two(void *ctx) {
    ref_half *all = ctx, half = {all->m + all->n / 2, all->n - all->n / 2};
    thrd_t t;
    double t0 = now_ns();
    NEED(thrd_create(&t, ref_thread, &half) == thrd_success, "thrd_create failed");
    kernel_invert(all->m, all->n / 2, g_heavy_times);
    NEED(thrd_join(t, NULL) == thrd_success, "thrd_join failed");
    clobber();
    return now_ns() - t0;
}
static bool bench_heavy_reference(speed_row *r) {
    *r = (speed_row){"reference: same work, plain arrays + C11 thread", 0, 0, -1};
    ref_half all = {alloc64(HEAVY_N * sizeof(Mat4)), HEAVY_N};
    rng_seed(HEAVY_SEED);
    for (int i = 0; i < HEAVY_N; i++) all.m[i] = mat4_random();
    double ns2, ns1;
    ref_one(&all); ref_two(&all);
    run_pair(reps(15), ref_two, ref_one, &all, 1e6, &ns2, &ns1);
    r->ms1 = ns1;
    r->ms2 = ns2;
    bool close = true;
    rng_seed(HEAVY_SEED);
    for (int i = 0; i < HEAVY_N; i++) {
        Mat4 start = mat4_random();
        for (int j = 0; j < 16; j++) close &= fabsf(all.m[i].m[j] - start.m[j]) <= 1e-2f;
    }
    check(close, r->name, "a matrix is not back to its start after an even number of inversions");
    free(all.m);
    return true;
}
#else
static bool bench_heavy_reference(speed_row *r) { (void)r; return false; }
#endif

/* 8 systems, each inverting the matrices of its own component (its own
   table), so none conflicts with another; not chunked. */
enum { INDEP_SYSTEMS = 8, INDEP_N = 2000, INDEP_TIMES = 14 };   /* TIMES even */
static uint64_t indep_seed(int s) { return 0x1D0ull + (uint64_t)s; }
static int g_indep_times = INDEP_TIMES;

static ecs_world *indep_world(int threads, ecs_id *cids) {
    ecs_world *w = world_threads(threads, ECS_ORDER_INSERTION);
    for (int s = 0; s < INDEP_SYSTEMS; s++) {
        char name[32];
        cids[s] = component_n(w, "Work", s, sizeof(Mat4), _Alignof(Mat4));
        mat4_entities(w, cids[s], INDEP_N, indep_seed(s));
        snprintf(name, sizeof name, "work%d", s);
        system_add(w, &(ecs_system_desc){.name = name, .fn = sys_invert, .ctx = &g_indep_times,
                                         .terms = {{cids[s], ECS_WRITE, ECS_AND}}});
    }
    NEED(ecs_validate(w, NULL) == ECS_OK, "ecs_validate failed");
    return w;
}

static speed_row bench_indep(void) {
    speed_row r = {"8 independent systems, 2k x 14 inverses each", 0, 0, 1.8};
    ecs_id ids1[INDEP_SYSTEMS], ids2[INDEP_SYSTEMS];
    ecs_world *w1 = indep_world(1, ids1), *w2 = indep_world(2, ids2);
    for (int s = 1; s < INDEP_SYSTEMS; s++)
        check(!ecs_system_precedes(w1, 1, (ecs_system)s + 1), r.name, "the systems are ordered");
    double ns1, ns2;
    progress_pair(reps(61), 1, w1, w2, r.name, &ns1, &ns2);
    r.ms1 = ns1 / 1e6;
    r.ms2 = ns2 / 1e6;
    uint64_t seeds[INDEP_SYSTEMS];
    for (int s = 0; s < INDEP_SYSTEMS; s++) seeds[s] = indep_seed(s);
    mat4_check(w1, w2, ids1, ids2, seeds, INDEP_SYSTEMS, (long)INDEP_SYSTEMS * INDEP_N, r.name);
    ecs_world_free(w1);
    ecs_world_free(w2);
    return r;
}

/* ---- absolute rows: tiny frames, ecs_validate ---- */
typedef struct abs_row {
    char name[64];
    double value;      /* in unit */
    const char *unit;
    double target;     /* max value; < 0: informational */
    char note[64];
} abs_row;

static bool abs_ok(const abs_row *r) { return r->target < 0 || r->value <= r->target; }
static void abs_header(const char *title) {
    printf("\n%s\n", title);
    printf("%-54s %12s %12s  %-7s  %s\n", "workload", "measured", "target", "ok/MISS", "note");
    printf("%.*s\n", 100, "----------------------------------------------------------------"
                          "----------------------------------------------------------------");
}
static void abs_print(const abs_row *r) {
    char value[32], target[32];
    snprintf(value, sizeof value, "%.3f %s", r->value, r->unit);
    if (r->target < 0) snprintf(target, sizeof target, "-");
    else snprintf(target, sizeof target, "<= %g %s", r->target, r->unit);
    printf("%-54s %12s %12s  %-7s  %s\n", r->name, value, target,
           r->target < 0 ? "info" : abs_ok(r) ? "ok" : "MISS", r->note);
    fflush(stdout);
}

/* 64 systems, each writing its own component. With `entities`, entity i
   holds component i only, so each system matches one row; without, no
   entity holds any of them and no system has anything to do. */
enum { TINY_SYSTEMS = 64, TINY_FRAMES = 1000 };
static long g_tiny_calls[2];   /* calls of sys_tiny, per thread */

static void sys_tiny(ecs_iter *it) {
    float *v = ECS_FIELD(it, float, 0);
    for (int i = 0; i < it->count; i++) v[i] += 1.0f;
    g_tiny_calls[it->thread]++;
}

/* How tiny_world builds its world: the plain one is {threads, entities}. */
typedef struct tiny_opts {
    int threads;
    bool entities;
    const ecs_stage_desc *stage;   /* the systems go in a new stage made from it; NULL: stage 0 */
    ecs_condition_fn run_if;       /* given to every system, with run_if_ctx */
    void *run_if_ctx;
    bool disabled;                 /* every system disabled (ecs_system_enable) */
} tiny_opts;

static ecs_world *tiny_world(const tiny_opts *o, ecs_id *cids) {
    ecs_world *w = world_threads(o->threads, ECS_ORDER_INSERTION);
    ecs_stage st = 0;
    if (o->stage) NEED(st = ecs_stage_init(w, o->stage), "ecs_stage_init failed");
    for (int s = 0; s < TINY_SYSTEMS; s++) {
        char name[32];
        cids[s] = component_n(w, "Tiny", s, sizeof(float), _Alignof(float));
        if (o->entities) NEED(ecs_create_many(w, 1, &cids[s], 1, NULL) == ECS_OK, "ecs_create_many failed");
        snprintf(name, sizeof name, "tiny%d", s);
        ecs_system sys = system_add(w, &(ecs_system_desc){.name = name, .fn = sys_tiny, .stage = st,
                                         .terms = {{cids[s], ECS_WRITE, ECS_AND}},
                                         .run_if = o->run_if, .run_if_ctx = o->run_if_ctx});
        if (o->disabled) NEED(ecs_system_enable(w, sys, false) == ECS_OK, "ecs_system_enable failed");
    }
    NEED(ecs_validate(w, NULL) == ECS_OK, "ecs_validate failed");
    return w;
}

/* Each system ran `turns` times: every entity's value is turns. */
static void tiny_check(ecs_world *w, const ecs_id *cids, bool entities, uint64_t turns, const char *bench) {
    bool ok = ecs_count(w) == (entities ? TINY_SYSTEMS : 0);
    for (int s = 0; s < TINY_SYSTEMS && entities; s++) {
        long rows = 0;
        ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{cids[s], ECS_READ, ECS_AND}}});
        NEED(q, "ecs_query_new failed");
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
            ok &= (double)ECS_FIELD(&it, float, 0)[0] == (double)turns;
            rows += it.count;
        }
        ok &= rows == 1;
        ecs_query_free(q);
    }
    check(ok, bench, "a system did not run once per turn on its entity");
}

static int tiny_rows(abs_row *out, bool entities) {
    ecs_id ids1[TINY_SYSTEMS], ids2[TINY_SYSTEMS];
    ecs_world *w1 = tiny_world(&(tiny_opts){.threads = 1, .entities = entities}, ids1),
              *w2 = tiny_world(&(tiny_opts){.threads = 2, .entities = entities}, ids2);
    const char *what = entities ? "64 systems x 1 entity" : "64 systems matching nothing";
    double ns1, ns2;
    g_tiny_calls[0] = g_tiny_calls[1] = 0;
    progress_pair(reps(101), TINY_FRAMES, w1, w2, what, &ns1, &ns2);
    ecs_frame_stats f1, f2;
    NEED(ecs_frame_stats_get(w1, &f1) == ECS_OK && ecs_frame_stats_get(w2, &f2) == ECS_OK,
         "ecs_frame_stats_get failed");
    check(g_tiny_calls[0] + g_tiny_calls[1] ==
          (entities ? (long)(f1.frames + f2.frames) * TINY_SYSTEMS : 0), what,
          entities ? "systems did not run once per frame" : "a system with nothing to do ran");
    tiny_check(w1, ids1, entities, f1.frames, what);   /* every frame added 1 to each value */
    tiny_check(w2, ids2, entities, f2.frames, what);
    for (int t = 0; t < 2; t++) {
        abs_row *r = &out[t];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s: one frame, %d thread%s", what, t + 1, t ? "s" : "");
        r->value = (t ? ns2 : ns1) / 1e3;
        r->unit = "us";
        r->target = entities ? (t ? 5 : 0.5) : (t ? 1 : 0.2);
        snprintf(r->note, sizeof r->note, "batches of %d frames", TINY_FRAMES);
    }
    ecs_world_free(w1);
    ecs_world_free(w2);
    return 2;
}

/* ---- the game loop: the 64-system frame with and without a feature ----
   Ratio rows (ns per op against a baseline op, both built by tiny_world, 1
   thread): run_if on every system, every system disabled, a fixed-step stage,
   ecs_progress_steps. An op is `calls` calls of ecs_progress(w, dt), or of
   ecs_progress_steps(w, steps, dt) when steps >= 0. Each side checks after
   the row that its systems ran once per turn of their stage, and no more. */
enum { LOOP_OPS = 1000 };   /* ops per sample */

typedef struct loop_side {
    tiny_opts opts;
    float dt;
    int calls, steps;
    int turns_per_call;        /* turns of the systems' stage per call */
    ecs_world *w;
    ecs_id cids[TINY_SYSTEMS];
    long made;                 /* calls made so far */
    long conds;                /* cond_true calls on this side */
} loop_side;
typedef struct loop_ctx { const char *name; loop_side side[2]; } loop_ctx;   /* 0: the baseline */

/* The condition of the run_if row: counts its calls (1 thread: no race). */
static bool cond_true(ecs_world *w, void *ctx) {
    (void)w;
    ++*(long *)ctx;
    return true;
}

static double loop_ops(loop_side *s, int ops, const char *bench) {
    bool bad = false;
    float dt = s->dt;
    double t0 = now_ns();
    for (int k = 0; k < ops; k++)
        for (int c = 0; c < s->calls; c++)
            bad |= (s->steps < 0 ? ecs_progress(s->w, dt) : ecs_progress_steps(s->w, s->steps, dt)) != ECS_OK;
    double t = now_ns() - t0;
    s->made += (long)ops * s->calls;
    check(!bad, bench, s->steps < 0 ? "ecs_progress failed" : "ecs_progress_steps failed");
    return t;
}
static double loop_base(void *ctx) { loop_ctx *c = ctx; return loop_ops(&c->side[0], LOOP_OPS, c->name); }
static double loop_ecs(void *ctx) { loop_ctx *c = ctx; return loop_ops(&c->side[1], LOOP_OPS, c->name); }

/* Both sides built, warmed up as progress_pair does (16 ops each), timed by
   run_pair, checked and freed. */
static bench_row loop_row(loop_ctx *c, double target) {
    bench_row r = {c->name, 0, 0, target, true};
    for (int k = 0; k < 2; k++) {
        loop_side *s = &c->side[k];
        if (s->opts.run_if) s->opts.run_if_ctx = &s->conds;
        s->w = tiny_world(&s->opts, s->cids);
    }
    for (int k = 0; k < 16; k++) { loop_ops(&c->side[0], 1, c->name); loop_ops(&c->side[1], 1, c->name); }
    run_pair(reps(151), loop_base, loop_ecs, c, LOOP_OPS, &r.base_ns, &r.ecs_ns);
    for (int k = 0; k < 2; k++) {
        loop_side *s = &c->side[k];
        uint64_t turns = (uint64_t)s->made * (uint64_t)s->turns_per_call;
        ecs_stage_stats st = {0};
        ecs_stage stage = (ecs_stage)(ecs_stage_count(s->w) - 1);   /* the systems' stage */
        NEED(ecs_stage_stats_get(s->w, stage, &st) == ECS_OK, "ecs_stage_stats_get failed");
        check(st.steps == turns && st.steps_last == s->turns_per_call, c->name, "the stage took the wrong turns");
        tiny_check(s->w, s->cids, true, s->opts.disabled ? 0 : turns, c->name);
        check(s->conds == (s->opts.run_if ? (long)turns * TINY_SYSTEMS : 0), c->name,
              "run_if was not asked once per system and turn");
        ecs_world_free(s->w);
    }
    return r;
}

static bench_row bench_loop_run_if(void) {
    loop_ctx c = {"64 systems x 1 entity, 1 thread, all run_if true (vs none)", {
        {.opts = {.threads = 1, .entities = true}, .dt = g_dt, .calls = 1, .steps = -1, .turns_per_call = 1},
        {.opts = {.threads = 1, .entities = true, .run_if = cond_true}, .dt = g_dt, .calls = 1, .steps = -1,
         .turns_per_call = 1}}};
    return loop_row(&c, 1.15);
}
static bench_row bench_loop_disabled(void) {
    loop_ctx c = {"64 systems x 1 entity, 1 thread, all disabled (vs enabled)", {
        {.opts = {.threads = 1, .entities = true}, .dt = g_dt, .calls = 1, .steps = -1, .turns_per_call = 1},
        {.opts = {.threads = 1, .entities = true, .disabled = true}, .dt = g_dt, .calls = 1, .steps = -1,
         .turns_per_call = 1}}};
    return loop_row(&c, 0.15);
}
/* One ecs_progress(w, 1.0) of a fixed-step stage (fixed_dt 0.25: 4 steps)
   against 4 ecs_progress(w, 0.25) of an ordinary stage; both stages are
   stage 1, after an empty stage 0. */
static bench_row bench_loop_fixed4(void) {
    loop_ctx c = {"64 systems, fixed-step stage, 4 steps/ecs_progress (vs 4 frames)", {
        {.opts = {.threads = 1, .entities = true, .stage = &(ecs_stage_desc){.name = "frame"}},
         .dt = 0.25f, .calls = 4, .steps = -1, .turns_per_call = 1},
        {.opts = {.threads = 1, .entities = true, .stage = &(ecs_stage_desc){.name = "fixed", .fixed_dt = 0.25f}},
         .dt = 1.0f, .calls = 1, .steps = -1, .turns_per_call = 4}}};
    return loop_row(&c, 1.05);
}
/* ecs_progress_steps(w, 1, dt) against ecs_progress(w, dt) of a one-step
   frame (fixed_dt == dt, exact in binary: every frame takes exactly 1 step). */
static bench_row bench_loop_steps1(void) {
    const ecs_stage_desc fixed = {.name = "fixed", .fixed_dt = 1.0f / 64};
    loop_ctx c = {"64 systems, fixed-step stage, ecs_progress_steps(w, 1, dt) (vs 1 step)", {
        {.opts = {.threads = 1, .entities = true, .stage = &fixed}, .dt = 1.0f / 64, .calls = 1, .steps = -1,
         .turns_per_call = 1},
        {.opts = {.threads = 1, .entities = true, .stage = &fixed}, .dt = 1.0f / 64, .calls = 1, .steps = 1,
         .turns_per_call = 1}}};
    return loop_row(&c, 1.02);
}

/* ---- events: emitting, delivering + reading, and the death pipeline ----
   One thread, so a row's time is ecs.h's work, not the spread over cores.
   The emit and read rows time the same frames of one world: a system over
   EV_N entities emits one 16-byte event per entity, and EV_READERS systems
   of a later stage read them all (a sum of one field each). The emitting
   system times its own loop (the emit row: with an ecs_emitter, the way to
   emit many; ecs_emit's and ECS_EMIT's rows are shown for information);
   the rest of
   the frame is the sync point that delivers them and the readers' runs
   (the read row: that rest / (EV_N * EV_READERS), so the delivery is shared
   among the readers, as it is in a game). The baselines do the same work
   on plain arrays: append to a reused buffer; copy it out once, then read
   it EV_READERS times. The death pipeline row compares two whole frames of
   EV_DEATHS deaths: events (emit, read in a later stage) against entities
   (ecs_cmd_create + ecs_cmd_set of a component in the emitter, a query over
   it in a later stage, an EXCLUSIVE system after it doing ecs_destroy_with),
   the emitter's iteration included on both sides; its target, a ratio of at
   most 0.10, says events (with an ecs_emitter) are at least 10x faster. 1M events are 16 MB, more
   than most caches: the read baseline is memory-bound. */
enum { EV_N = 1 << 20, EV_READERS = 4, EV_DEATHS = 1 << 16, EV_DEATH_FRAMES = 4 };
enum { EV_EMIT, EV_IN_PLACE, EV_EMITTER };
typedef struct EvHit { ecs_entity e; float amount; uint32_t n; } EvHit;   /* 16 bytes, no padding */
typedef struct ev_reader { ecs_id event; uint64_t sum, seen; } ev_reader;
typedef struct ev_ctx {
    ecs_world *w;
    ecs_id event, dead;        /* dead: the pipeline's component (entity side) */
    bool entities;             /* the pipeline's entity side */
    int how;                   /* EV_EMIT (ecs_emit), EV_IN_PLACE (ECS_EMIT) or EV_EMITTER */
    double emit_ns;            /* the emitting loop's time this frame */
    uint64_t emitted, frames;
    bool bad;
    ev_reader readers[EV_READERS];
} ev_ctx;

static void sys_ev_emit(ecs_iter *it) {   /* ctx: ev_ctx; term 0: a uint32_t per entity */
    ev_ctx *c = it->ctx;
    const uint32_t *v = ECS_FIELD(it, uint32_t, 0);
    bool bad = false;
    double t0 = now_ns();
    if (c->entities)
        for (int i = 0; i < it->count; i++) {
            ecs_entity d = ecs_cmd_create(it->commands);
            bad |= !d || ecs_cmd_set(it->commands, d, c->dead, &(EvHit){it->entities[i], 1.0f, v[i]}) != ECS_OK;
        }
    else if (c->how == EV_EMITTER) {
        ecs_emitter *em = ECS_EMITTER(it, EvHit, c->event);
        for (int i = 0; i < it->count; i++) {
            EvHit *h = ecs_emitter_next(em, sizeof *h);
            if (!h) { bad = true; break; }
            h->e = it->entities[i]; h->amount = 1.0f; h->n = v[i];
        }
    } else if (c->how == EV_IN_PLACE)
        for (int i = 0; i < it->count; i++) ECS_EMIT(it, EvHit, c->event, {it->entities[i], 1.0f, v[i]});
    else
        for (int i = 0; i < it->count; i++)
            bad |= ecs_emit(it, c->event, &(EvHit){it->entities[i], 1.0f, v[i]}) != ECS_OK;
    c->emit_ns += now_ns() - t0;
    c->emitted += (uint64_t)it->count;
    c->bad |= bad;
}
static void sys_ev_read(ecs_iter *it) {   /* ctx: ev_reader */
    ev_reader *r = it->ctx;
    int n;
    const EvHit *ev = ECS_EVENTS(it, EvHit, r->event, &n);
    uint64_t s = 0;
    for (int i = 0; i < n; i++) s += ev[i].n;
    r->sum += s;
    r->seen += (uint64_t)n;
}
static void sys_ev_read_entities(ecs_iter *it) {   /* the same, over the pipeline's death entities */
    ev_reader *r = it->ctx;
    const EvHit *ev = ECS_FIELD(it, EvHit, 0);
    uint64_t s = 0;
    for (int i = 0; i < it->count; i++) s += ev[i].n;
    r->sum += s;
    r->seen += (uint64_t)it->count;
}
static void sys_ev_cleanup(ecs_iter *it) {   /* EXCLUSIVE */
    ev_ctx *c = it->ctx;
    c->bad |= ecs_destroy_with(it->world, c->dead) != ECS_OK;
}

/* A 1-thread world: n entities with a uint32_t 0 .. n-1, the emitter, and
   `readers` readers in a later stage (the entity side: a query reader and
   the cleanup). */
static void ev_world(ev_ctx *c, int n, int readers, bool entities) {
    memset(c, 0, sizeof *c);
    c->entities = entities;
    c->w = world_threads(1, ECS_ORDER_INSERTION);
    ecs_id v = component_n(c->w, "EvValue", 0, sizeof(uint32_t), _Alignof(uint32_t));
    uint32_t *vals = alloc64((size_t)n * sizeof *vals);
    for (int i = 0; i < n; i++) vals[i] = (uint32_t)i;
    NEED(ecs_create_many_values(c->w, (size_t)n, &v, 1, (const void *const[]){vals}, NULL) == ECS_OK,
         "ecs_create_many_values failed");
    free(vals);
    if (entities) NEED(c->dead = ECS_COMPONENT(c->w, EvHit), "ecs_component failed");
    else NEED(c->event = ECS_EVENT(c->w, EvHit), "ecs_event failed");
    ecs_stage later = ecs_stage_add(c->w, "later");
    NEED(later, "ecs_stage_add failed");
    system_add(c->w, &(ecs_system_desc){.name = "emit", .fn = sys_ev_emit, .ctx = c,
                                        .terms = {{v, ECS_READ, ECS_AND}}, .emits = {c->event}});
    for (int r = 0; r < readers; r++) {
        char name[32];
        snprintf(name, sizeof name, "read%d", r);
        c->readers[r].event = c->event;
        if (entities)
            system_add(c->w, &(ecs_system_desc){.name = name, .fn = sys_ev_read_entities, .ctx = &c->readers[r],
                                                .stage = later, .terms = {{c->dead, ECS_READ, ECS_AND}}});
        else
            system_add(c->w, &(ecs_system_desc){.name = name, .fn = sys_ev_read, .ctx = &c->readers[r],
                                                .stage = later, .reads = {c->event}});
    }
    if (entities)
        system_add(c->w, &(ecs_system_desc){.name = "cleanup", .fn = sys_ev_cleanup, .ctx = c, .stage = later,
                                            .flags = ECS_SYSTEM_EXCLUSIVE, .after = {"read0"}});
    NEED(ecs_validate(c->w, NULL) == ECS_OK, "ecs_validate failed");
}
static double ev_frames(ev_ctx *c, int frames, const char *bench) {
    c->emit_ns = 0;
    double t = progress_ns(c->w, frames, bench) * frames;
    c->frames += (uint64_t)frames;
    return t;
}
/* Every reader saw every event once; the entity side ends with its deaths destroyed. */
static void ev_check(ev_ctx *c, int n, int readers, const char *bench) {
    uint64_t per_frame = (uint64_t)n * (uint64_t)(n - 1) / 2;
    check(!c->bad && c->emitted == c->frames * (uint64_t)n, bench, "an emit or a cleanup failed");
    for (int r = 0; r < readers; r++)
        check(c->readers[r].seen == c->emitted && c->readers[r].sum == c->frames * per_frame, bench,
              "a reader did not see every event exactly once");
    check(ecs_count(c->w) == (size_t)n, bench, "the pipeline's death entities were not all destroyed");
    ecs_world_free(c->w);
}

/* The baseline of the emit and read rows: ns of the append, and of the copy + reads. */
static void ev_base(EvHit *buf, EvHit *log, const uint32_t *v, double *emit_ns, double *read_ns) {
    double t0 = now_ns();
    size_t count = 0;
    for (int i = 0; i < EV_N; i++) buf[count++] = (EvHit){(ecs_entity)i + 1, 1.0f, v[i]};
    clobber();
    double t1 = now_ns();
    memcpy(log, buf, count * sizeof *log);
    clobber();
    uint64_t sums = 0;
    for (int r = 0; r < EV_READERS; r++) {
        uint64_t s = 0;
        for (size_t i = 0; i < count; i++) s += log[i].n;
        sums += s;
        clobber();
    }
    double t2 = now_ns();
    check(sums == (uint64_t)EV_READERS * ((uint64_t)EV_N * (EV_N - 1) / 2), "events baseline", "wrong sum");
    g_sink = (double)sums;
    *emit_ns = t1 - t0;
    *read_ns = t2 - t1;
}

static void bench_events_emit_read(bench_row *emit, bench_row *read, int how) {
    static const char *const name_emit[] = {
        "events: the same with ecs_emit (per event)",
        "events: the same with ECS_EMIT, filled in place (per event)",
        "events: emit 1M 16-byte events in a system, ecs_emitter (per event)"};
    static const char name_read[] = "events: deliver + read 1M, 4 readers (per event per reader)";
    ev_ctx c;
    ev_world(&c, EV_N, EV_READERS, false);
    c.how = how;
    uint32_t *v = alloc64((size_t)EV_N * sizeof *v);   /* the baseline's values and arrays */
    for (int i = 0; i < EV_N; i++) v[i] = (uint32_t)i;
    EvHit *buf = alloc64((size_t)EV_N * sizeof *buf), *log = alloc64((size_t)EV_N * sizeof *log);
    double be[MAX_REPS], br[MAX_REPS], ee[MAX_REPS], er[MAX_REPS], x, y;
    for (int k = 0; k < 8; k++) { ev_frames(&c, 1, name_read); ev_base(buf, log, v, &x, &y); }   /* warm-up */
    int n = reps(21);
    for (int r = 0; r < n; r++) {   /* the side that goes first alternates */
        if (r & 1) ev_base(buf, log, v, &be[r], &br[r]);
        double t = ev_frames(&c, 1, name_read);
        ee[r] = c.emit_ns;
        er[r] = t - c.emit_ns;
        if (!(r & 1)) ev_base(buf, log, v, &be[r], &br[r]);
    }
    *emit = (bench_row){name_emit[how], median(ee, n) / EV_N, median(be, n) / EV_N, how == EV_EMITTER ? 5 : -1, false};
    *read = (bench_row){name_read, median(er, n) / ((double)EV_N * EV_READERS),
                        median(br, n) / ((double)EV_N * EV_READERS), 2, false};
    ev_check(&c, EV_N, EV_READERS, name_emit[how]);
    free(v);
    free(buf);
    free(log);
}

typedef struct ev_pair { ev_ctx events, entities; } ev_pair;
static double ev_pipe_entities(void *ctx) {
    return ev_frames(&((ev_pair *)ctx)->entities, EV_DEATH_FRAMES, "death pipeline");
}
static double ev_pipe_events(void *ctx) { return ev_frames(&((ev_pair *)ctx)->events, EV_DEATH_FRAMES, "death pipeline"); }
static bench_row bench_events_pipeline(int how) {
    bench_row r = {how == EV_EMITTER ? "events: death pipeline, emitter, per death (vs entities)"
                                     : "events: the same with ecs_emit, per death (vs entities)",
                   0, 0, how == EV_EMITTER ? 0.1 : -1, true};
    ev_pair *p = malloc(sizeof *p);
    NEED(p, "out of memory");
    ev_world(&p->events, EV_DEATHS, 1, false);
    p->events.how = how;
    ev_world(&p->entities, EV_DEATHS, 1, true);
    for (int k = 0; k < 4; k++) { ev_pipe_entities(p); ev_pipe_events(p); }   /* warm-up */
    run_pair(reps(21), ev_pipe_entities, ev_pipe_events, p, (double)EV_DEATHS * EV_DEATH_FRAMES, &r.base_ns,
             &r.ecs_ns);
    ev_check(&p->events, EV_DEATHS, 1, r.name);
    ev_check(&p->entities, EV_DEATHS, 1, r.name);
    free(p);
    return r;
}

/* ---- change detection: an ECS_CHANGED reader, and the stamps' cost ----
   One thread. The reader row: CH_N entities, and between frames (untimed)
   one entity written with ecs_get_mut in each of 1% of the 1024-row blocks,
   spread over the table; each frame a system sums a column. With
   {id, ECS_READ, ECS_CHANGED} it is handed the written blocks; the baseline
   is the same frame with the plain term, a full pass (target: at most 5%
   of it). The stamping row: a chunked system adding 1 to every value
   (WRITE term), in a world that keeps stamps (an ECS_CHANGED query exists)
   against the same world without: the cost of a batch's stamps (target: at
   most 1% over). */
enum { CH_N = 1 << 20, CH_FRAMES = 8 };
typedef struct ch_bench { ecs_world *w; ecs_id v; ecs_entity *ents; uint64_t sum; int64_t handed; } ch_bench;
static void sys_ch_sum(ecs_iter *it) {
    ch_bench *c = it->ctx;
    const uint32_t *v = ECS_FIELD(it, uint32_t, 0);
    uint64_t s = 0;
    for (int i = 0; i < it->count; i++) s += v[i];
    c->sum += s;
    c->handed += it->count;
}
static void sys_ch_add(ecs_iter *it) {
    uint32_t *v = ECS_FIELD(it, uint32_t, 0);
    for (int i = 0; i < it->count; i++) v[i] += 1;
}
/* A 1-thread world with CH_N entities; fn over them (oper: the term's; write: WRITE). */
static void ch_world(ch_bench *c, ecs_system_fn fn, ecs_oper oper, bool write, bool stamps) {
    memset(c, 0, sizeof *c);
    c->w = world_threads(1, ECS_ORDER_INSERTION);
    c->v = component_n(c->w, "ChValue", 0, sizeof(uint32_t), _Alignof(uint32_t));
    uint32_t *vals = alloc64((size_t)CH_N * sizeof *vals);
    c->ents = alloc64((size_t)CH_N * sizeof *c->ents);
    for (int i = 0; i < CH_N; i++) vals[i] = (uint32_t)i;
    NEED(ecs_create_many_values(c->w, CH_N, &c->v, 1, (const void *const[]){vals}, c->ents) == ECS_OK,
         "ecs_create_many_values failed");
    free(vals);
    if (stamps) NEED(ecs_query_new(c->w, &(ecs_query_desc){.terms = {{c->v, ECS_READ, ECS_CHANGED}}}), "query failed");
    system_add(c->w, &(ecs_system_desc){.name = "ch", .fn = fn, .ctx = c, .chunk_size = write ? 16384 : 0,
                                        .terms = {{c->v, write ? ECS_WRITE : ECS_READ, oper}}});
    NEED(ecs_validate(c->w, NULL) == ECS_OK, "ecs_validate failed");
}
static void ch_free(ch_bench *c) { free(c->ents); ecs_world_free(c->w); }
/* Frames of c, each after writing one entity in every 100th block (untimed). */
static double ch_frames(ch_bench *c) {
    double t = 0;
    for (int f = 0; f < CH_FRAMES; f++) {
        for (uint32_t b = (uint32_t)f % 100; b < CH_N >> 10; b += 100) {
            uint32_t *v = ecs_get_mut(c->w, c->ents[(b << 10) + 7], c->v);
            if (v) *v += 1;
        }
        t += progress_ns(c->w, 1, "changes");
    }
    return t;
}
typedef struct ch_pair { ch_bench a, b; } ch_pair;
static double ch_side_a(void *ctx) { return ch_frames(&((ch_pair *)ctx)->a); }
static double ch_side_b(void *ctx) { return ch_frames(&((ch_pair *)ctx)->b); }
static bench_row bench_changes_reader(void) {
    bench_row r = {"changes: ECS_CHANGED reader, 1M rows, 1% of blocks written (vs a full pass)", 0, 0, 0.05, true};
    ch_pair *p = malloc(sizeof *p);
    NEED(p, "out of memory");
    ch_world(&p->a, sys_ch_sum, ECS_AND, false, false);
    ch_world(&p->b, sys_ch_sum, ECS_CHANGED, false, false);
    for (int k = 0; k < 3; k++) { ch_side_a(p); ch_side_b(p); }   /* warm-up (the first: everything) */
    p->b.handed = 0;
    int n = reps(21);
    run_pair(n, ch_side_a, ch_side_b, p, (double)CH_FRAMES, &r.base_ns, &r.ecs_ns);
    /* each frame writes 10 or 11 blocks: at most that many blocks handed out */
    check(p->b.handed > 0 && p->b.handed <= (int64_t)n * CH_FRAMES * 11 * 1024, r.name,
          "the reader was handed more than the written blocks");
    check(p->a.sum != 0, r.name, "no sum");
    ch_free(&p->a);
    ch_free(&p->b);
    free(p);
    return r;
}
static double ch_plain_frames(void *ctx) { return progress_ns(((ch_pair *)ctx)->a.w, CH_FRAMES, "changes"); }
static double ch_stamped_frames(void *ctx) { return progress_ns(((ch_pair *)ctx)->b.w, CH_FRAMES, "changes"); }
static bench_row bench_changes_stamping(void) {
    bench_row r = {"changes: a WRITE-term system over 1M rows, stamps kept (vs not)", 0, 0, 1.01, true};
    ch_pair *p = malloc(sizeof *p);
    NEED(p, "out of memory");
    ch_world(&p->a, sys_ch_add, ECS_AND, true, false);
    ch_world(&p->b, sys_ch_add, ECS_AND, true, true);
    for (int k = 0; k < 3; k++) { ch_plain_frames(p); ch_stamped_frames(p); }
    run_pair(reps(41), ch_plain_frames, ch_stamped_frames, p, (double)CH_FRAMES * CH_N, &r.base_ns, &r.ecs_ns);
    ch_free(&p->a);
    ch_free(&p->b);
    free(p);
    return r;
}
/* ---- sorted iteration ------------------------------------------------------ */
/* 100k rows with Position over 4 tables (a tag each), sorted by y (random
   keys: the tables interleave, so batches are short runs): a loop with
   nothing changed since the last sort against the same loop unsorted; and a
   loop after 1% of the keys changed against qsort of the entity list (what a
   hand-written back-to-front draw does every frame). The body reads both
   fields into a running sum. */
enum { N_SORT = 100000 };
typedef struct sort_ctx {
    ecs_world *w;
    ecs_query *sorted, *plain;
    ecs_entity *ents;
    ids id;
    uint32_t rng;
    struct sort_item { float y; ecs_entity e; } *list;
} sort_ctx;
static int sort_cmp_y(ecs_entity a, const void *va, ecs_entity b, const void *vb, void *ctx) {
    (void)a; (void)b; (void)ctx;
    float x = ((const Position *)va)->y, y = ((const Position *)vb)->y;
    return (x > y) - (x < y);
}
static int sort_item_cmp(const void *pa, const void *pb) {
    const struct sort_item *a = pa, *b = pb;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return (a->e > b->e) - (a->e < b->e);
}
static float sort_rand(sort_ctx *c) { c->rng = c->rng * 1664525u + 1013904223u; return (float)(c->rng >> 8) / 16777216.f; }
static void sort_setup(sort_ctx *c) {
    memset(c, 0, sizeof *c);
    c->rng = 12345;
    c->w = world_new(&c->id);
    ecs_id tags[4] = {ecs_component(c->w, "S0", 0, 0), ecs_component(c->w, "S1", 0, 0),
                      ecs_component(c->w, "S2", 0, 0), ecs_component(c->w, "S3", 0, 0)};
    c->ents = alloc64(N_SORT * sizeof *c->ents);
    c->list = alloc64(N_SORT * sizeof *c->list);
    for (int i = 0; i < N_SORT; i++) {
        c->ents[i] = ecs_create(c->w);
        NEED(!ecs_add(c->w, c->ents[i], tags[i % 4]) &&
             !ecs_set(c->w, c->ents[i], c->id.pos, &(Position){(float)i, sort_rand(c)}), "sort setup");
    }
    c->sorted = ecs_query_new(c->w, &(ecs_query_desc){.terms = {ECS_TERM_R(c->id.pos)}, .order_by = c->id.pos,
                                                      .compare = sort_cmp_y});
    c->plain = ecs_query_new(c->w, &(ecs_query_desc){.terms = {ECS_TERM_R(c->id.pos)}});
    NEED(c->sorted && c->plain, "sort queries");
}
static double sort_loop(sort_ctx *c, ecs_query *q) {
    double t0 = now_ns();
    float sum = 0, last = -1;
    bool ordered = true;
    for (ecs_iter it = ecs_query_iter(c->w, q); ecs_query_next(&it);) {
        const Position *p = ECS_FIELD(&it, Position, 0);
        for (int i = 0; i < it.count; i++) {
            sum += p[i].x * p[i].y;
            ordered &= p[i].y >= last;
            last = p[i].y;
        }
    }
    double t = now_ns() - t0;
    g_sink += sum;
    if (q == c->sorted) check(ordered, "sorted iteration", "rows out of order");
    return t;
}
static double sort_plain_loop(void *ctx) { sort_ctx *c = ctx; return sort_loop(c, c->plain); }
static double sort_sorted_loop(void *ctx) { sort_ctx *c = ctx; return sort_loop(c, c->sorted); }
static bench_row bench_sort_unchanged(void) {
    bench_row r = {"sorted loop, 100k rows in 4 tables, nothing changed (vs unsorted)", 0, 0, 1.5, true};
    sort_ctx c;
    sort_setup(&c);
    (void)sort_sorted_loop(&c);
    run_pair(reps(41), sort_plain_loop, sort_sorted_loop, &c, N_SORT, &r.base_ns, &r.ecs_ns);
    ecs_world_free(c.w);
    free(c.ents); free(c.list);
    return r;
}
/* 1% of the keys changed, then the loop (its re-sort included); the
   baseline changes the same keys and sorts the (y, entity) list with qsort. */
static void sort_touch(sort_ctx *c) {
    for (int i = 0; i < N_SORT / 100; i++) {
        ecs_entity e = c->ents[(c->rng = c->rng * 1664525u + 1013904223u) % N_SORT];
        Position *p = ecs_get_mut(c->w, e, c->id.pos);
        p->y = sort_rand(c);
    }
}
static double sort_changed_ecs(void *ctx) {
    sort_ctx *c = ctx;
    sort_touch(c);
    return sort_loop(c, c->sorted);
}
static double sort_changed_qsort(void *ctx) {
    sort_ctx *c = ctx;
    sort_touch(c);
    double t0 = now_ns();
    size_t n = 0;
    for (ecs_iter it = ecs_query_iter(c->w, c->plain); ecs_query_next(&it);) {
        const Position *p = ECS_FIELD(&it, Position, 0);
        for (int i = 0; i < it.count; i++) { c->list[n].y = p[i].y; c->list[n].e = it.entities[i]; n++; }
    }
    qsort(c->list, n, sizeof *c->list, sort_item_cmp);
    float sum = 0;
    for (size_t i = 0; i < n; i++) {
        const Position *p = ecs_get(c->w, c->list[i].e, c->id.pos);
        sum += p->x * p->y;
    }
    g_sink += sum;
    return now_ns() - t0;
}
static bench_row bench_sort_changed(void) {
    bench_row r = {"sorted loop after 1% of 100k keys changed (vs qsort of the list)", 0, 0, 0.2, true};
    sort_ctx c;
    sort_setup(&c);
    (void)sort_sorted_loop(&c);
    run_pair(reps(41), sort_changed_qsort, sort_changed_ecs, &c, 1, &r.base_ns, &r.ecs_ns);
    ecs_world_free(c.w);
    free(c.ents); free(c.list);
    return r;
}

static int prefab_rows(int *met) {
    printf("\nprefabs and sorted iteration: 1 thread, medians of interleaved samples\n");
    print_header();
    bench_row rows[3] = {bench_instantiate(), bench_sort_unchanged(), bench_sort_changed()};
    for (int i = 0; i < 3; i++) {
        print_row(&rows[i]);
        *met += row_ok(&rows[i]);
    }
    return 3;
}

static int changes_rows(int *met) {
    printf("\nchange detection: 1 thread, medians of interleaved samples (%d, %d)\n", reps(21), reps(41));
    print_header();
    bench_row rows[2] = {bench_changes_reader(), bench_changes_stamping()};
    for (int i = 0; i < 2; i++) {
        print_row(&rows[i]);
        *met += row_ok(&rows[i]);
    }
    return 2;
}

/* ---- a sync-heavy frame: ecs_schedule_simulate against the measured frame ---- */
/* Two independent systems, each busy for as long as the frame's sync point
   takes and recording 4,000 ecs_cmd_set: a third to a half of the frame is
   applying commands. The simulation (measured durations) must come within
   15% of the frame's wall time; without the sync time in it, it would be
   off by a third (1 thread) to a half (2 threads). */
typedef struct syncsim_ctx { ecs_id hp; double busy_ns; } syncsim_ctx;
static void sys_syncsim(ecs_iter *it) {
    const syncsim_ctx *c = it->ctx;
    double end = now_ns() + c->busy_ns;
    while (now_ns() < end) {}
    for (int k = 0; k < 20; k++)
        for (int i = 0; i < it->count; i++) ecs_cmd_set(it->commands, it->entities[i], c->hp, &k);
}
static int syncsim_rows(abs_row *out) {
    for (int t = 0; t < 2; t++) {
        syncsim_ctx c = {0, 0};
        ecs_world *w = world_threads(t + 1, ECS_ORDER_INSERTION);
        ecs_id a = component_n(w, "SyncA", 0, 4, 0), b = component_n(w, "SyncB", 0, 4, 0);
        c.hp = component_n(w, "SyncHp", 0, 4, 0);
        NEED(ecs_create_many(w, 200, &a, 1, NULL) == ECS_OK && ecs_create_many(w, 200, &b, 1, NULL) == ECS_OK,
             "ecs_create_many failed");
        system_add(w, &(ecs_system_desc){.name = "SyncA", .fn = sys_syncsim, .ctx = &c, .terms = {{a, ECS_READ, ECS_AND}}});
        system_add(w, &(ecs_system_desc){.name = "SyncB", .fn = sys_syncsim, .ctx = &c, .terms = {{b, ECS_READ, ECS_AND}}});
        ecs_timing_interval(w, 1);
        ecs_frame_stats fs;
        progress_ns(w, 5, "sync-heavy frame");
        NEED(ecs_frame_stats_get(w, &fs) == ECS_OK, "ecs_frame_stats_get failed");
        c.busy_ns = fs.sync_us * 1e3;
        progress_ns(w, 40, "sync-heavy frame");   /* the averages settle */
        int n = reps(31);
        double err[MAX_REPS], sync = 0;
        for (int r = 0; r < n; r++) {   /* each sample: 8 frames' median wall against the simulation */
            double wall[8];
            for (int f = 0; f < 8; f++) {
                progress_ns(w, 1, "sync-heavy frame");
                NEED(ecs_frame_stats_get(w, &fs) == ECS_OK, "ecs_frame_stats_get failed");
                wall[f] = fs.wall_us;
            }
            ecs_sim_result sim;
            check(ecs_schedule_simulate(w, t + 1, NULL, &sim) == ECS_OK, "sync-heavy frame", "ecs_schedule_simulate failed");
            err[r] = fabs(sim.makespan / median(wall, 8) - 1) * 100;
            sync = sim.sync / sim.makespan;
        }
        abs_row *r = &out[t];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "sync-heavy frame: |simulated / measured - 1|, %d thread%s", t + 1, t ? "s" : "");
        r->value = median(err, n);
        r->unit = "%";
        r->target = 15;
        snprintf(r->note, sizeof r->note, "sync %.0f%% of the simulated frame", sync * 100);
        ecs_world_free(w);
    }
    return 2;
}

/* ---- ecs_validate on random graphs ---- */
enum { VAL_IDS = 256, VAL_EDGES = 4, VAL_ACCESS = 4 };
enum { VAL_FORWARD, VAL_RANDOM_DIR, VAL_CYCLES, VAL_RING };   /* edge shapes */
static const char *const val_shape_name[] = {"fwd edges", "random-dir edges", "declared cycles", "one big cycle"};

typedef struct val_graph {
    int m;
    char (*names)[12];
    int (*after)[VAL_EDGES];   /* -1 ends a list */
    ecs_term (*terms)[VAL_ACCESS];   /* ids: 1-based indexes of the world's 256 */
} val_graph;

/* VAL_FORWARD: after names random earlier-registered systems. VAL_RANDOM_DIR:
   the edges follow a random permutation of registration order (after names
   systems earlier in the permutation, registered earlier or later).
   VAL_CYCLES: as VAL_RANDOM_DIR, plus one backward edge in 1 of 50 systems
   (loops of every size). VAL_RING: each system after the one registered
   before it, the first after the last: one cycle through all. */
static void val_graph_make(val_graph *g, int m, int shape, uint64_t seed) {
    g->m = m;
    g->names = malloc((size_t)m * sizeof *g->names);
    g->after = malloc((size_t)m * sizeof *g->after);
    g->terms = malloc((size_t)m * sizeof *g->terms);
    int *perm = malloc((size_t)m * sizeof *perm), *pos = malloc((size_t)m * sizeof *pos);
    NEED(g->names && g->after && g->terms && perm && pos, "out of memory");
    rng_seed(seed);
    for (int i = 0; i < m; i++) perm[i] = i;
    if (shape == VAL_RANDOM_DIR || shape == VAL_CYCLES)
        for (int i = m - 1; i > 0; i--) {
            int j = (int)rng_below((uint32_t)i + 1), t = perm[i];
            perm[i] = perm[j]; perm[j] = t;
        }
    for (int i = 0; i < m; i++) pos[perm[i]] = i;
    for (int s = 0; s < m; s++) {
        snprintf(g->names[s], sizeof g->names[s], "sys%d", s);
        int p = pos[s], n = p < VAL_EDGES ? p : VAL_EDGES;
        if (shape == VAL_RING) n = 0;
        for (int k = 0; k < VAL_EDGES; k++) {
            int pick = -1;
            if (k < n)
                for (bool dup = true; dup;) {
                    pick = perm[rng_below((uint32_t)p)];
                    dup = false;
                    for (int q = 0; q < k; q++) dup |= g->after[s][q] == pick;
                }
            g->after[s][k] = pick;
        }
        if (shape == VAL_RING) g->after[s][0] = (s + m - 1) % m;
        if (shape == VAL_CYCLES && p + 1 < m && rng_below(50) == 0)   /* backward */
            g->after[s][n < VAL_EDGES ? n : VAL_EDGES - 1] = perm[p + 1 + (int)rng_below((uint32_t)(m - p - 1))];
        for (int k = 0; k < VAL_ACCESS; k++) {
            ecs_id id = 0;
            for (bool dup = true; dup;) {
                id = 1 + rng_below(VAL_IDS);
                dup = false;
                for (int q = 0; q < k; q++) dup |= g->terms[s][q].id == id;
            }
            g->terms[s][k] = (ecs_term){id, rng_below(2) ? ECS_WRITE : ECS_READ, ECS_AND};
        }
    }
    free(perm);
    free(pos);
}
static void val_graph_free(val_graph *g) { free(g->names); free(g->after); free(g->terms); }

/* An allocator that knows its peak: blocks carry their size. */
typedef struct val_mem { size_t now, peak; } val_mem;
static void *val_realloc(void *p, size_t n, void *user) {
    val_mem *m = user;
    size_t *old = p ? (size_t *)p - 2 : NULL, was = old ? old[0] : 0;
    if (n == 0) { if (old) { m->now -= was; free(old); } return NULL; }
    size_t *q = realloc(old, n + 2 * sizeof(size_t));
    if (!q) return NULL;
    q[0] = n;
    m->now += n - was;
    if (m->now > m->peak) m->peak = m->now;
    return q + 2;
}

static ecs_world *val_world(const val_graph *g, ecs_order order, val_mem *mem) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .order = order, .realloc_fn = val_realloc,
                                                    .alloc_user = mem});
    NEED(w, "ecs_world_new failed");
    ecs_id cids[VAL_IDS + 1];
    for (int i = 1; i <= VAL_IDS; i++) cids[i] = component_n(w, "C", i, sizeof(float), _Alignof(float));
    for (int s = 0; s < g->m; s++) {
        ecs_system_desc d = {.name = g->names[s], .fn = sys_noop};
        for (int k = 0; k < VAL_EDGES && g->after[s][k] >= 0; k++) d.after[k] = g->names[g->after[s][k]];
        for (int k = 0; k < VAL_ACCESS; k++) {
            d.terms[k] = g->terms[s][k];
            d.terms[k].id = cids[g->terms[s][k].id];
        }
        system_add(w, &d);
    }
    return w;
}

/* Median ms of ecs_validate, each sample on a fresh world (building it is
   not timed: ecs_validate caches its result until the systems change); the
   peak memory it allocated, in *peak_mb. */
static abs_row bench_validate(int m, int shape, ecs_order order, double target, int samples, double *peak_mb) {
    static const char *const order_name[] = {"INSERTION", "EXPLICIT", "WRITERS_FIRST"};
    abs_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "ecs_validate %dk systems, %s, %s", m / 1000, val_shape_name[shape],
             order_name[order]);
    r.unit = "ms";
    r.target = target;
    val_graph g;
    val_graph_make(&g, m, shape, 0x7A11Dull + (uint64_t)m);
    double t[MAX_REPS];
    int races = -1, cycles = 0, notes = 0;
    bool ok = true;
    *peak_mb = 0;
    for (int k = 0; k < samples; k++) {
        val_mem mem = {0, 0};
        ecs_world *w = val_world(&g, order, &mem);
        ecs_report rep;
        size_t before = mem.now;
        mem.peak = mem.now;
        double t0 = now_ns();
        ecs_result res = ecs_validate(w, &rep);
        t[k] = (now_ns() - t0) / 1e6;
        double mb = (double)(mem.peak - before) / (1 << 20);
        if (mb > *peak_mb) *peak_mb = mb;
        int n_races = rep.omitted, n_cycles = 0;
        for (int i = 0; i < rep.count; i++) {
            n_races += rep.problems[i].kind == ECS_PROBLEM_RACE;
            n_cycles += rep.problems[i].kind == ECS_PROBLEM_CYCLE;
            ok &= rep.problems[i].kind == ECS_PROBLEM_RACE || rep.problems[i].kind == ECS_PROBLEM_CYCLE;
        }
        /* declared loops only where the shape has them; writer-first ones in that mode */
        ok &= shape >= VAL_CYCLES || order == ECS_ORDER_WRITERS_FIRST || n_cycles == 0;
        ok &= shape < VAL_CYCLES || n_cycles > 0;
        ok &= res == (rep.count ? ECS_ERR_INVALID_GRAPH : ECS_OK);
        if (order == ECS_ORDER_INSERTION && shape < VAL_CYCLES) ok &= res == ECS_OK;
        ok &= races < 0 || races == n_races;
        races = n_races;
        cycles = n_cycles;
        notes = rep.note_count + rep.notes_omitted;
        /* declared edges hold, whatever the mode */
        for (int s = m - 8; s < m; s++)
            for (int e = 0; e < VAL_EDGES && g.after[s][e] >= 0; e++)
                ok &= ecs_system_precedes(w, (ecs_system)g.after[s][e] + 1, (ecs_system)s + 1);
        ecs_world_free(w);
    }
    check(ok, r.name, "ecs_validate returned a wrong result");
    r.value = median(t, samples);
    if (cycles || races) snprintf(r.note, sizeof r.note, "%d CYCLE, %d RACE", cycles, races);
    else snprintf(r.note, sizeof r.note, "ECS_OK, %d notes", notes);
    val_graph_free(&g);
    return r;
}

static int validate_rows(abs_row *out) {
    int n = 0;
    double peak = 0, mb;
    for (int shape = VAL_FORWARD; shape <= VAL_CYCLES; shape++)
        for (int o = 0; o < 3; o++) {
            out[n++] = bench_validate(1000, shape, (ecs_order)o, shape == VAL_CYCLES ? -1 : 2, reps(21), &mb);
            out[n++] = bench_validate(10000, shape, (ecs_order)o, 50, reps(7), &mb);
            if (mb > peak) peak = mb;
        }
    abs_row *r = &out[n++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "peak memory of ecs_validate, 10k systems, any row");
    r->value = peak; r->unit = "MB"; r->target = 64;
    if (!g_quick)
        for (int o = 0; o < 3; o++) {
            out[n] = bench_validate(100000, VAL_RING, (ecs_order)o, 5000, 1, &mb);
            snprintf(out[n].note, sizeof out[n].note, "%.0f MB (n^2/8 = %.0f MB)", mb,
                     1e10 / 8 / (1 << 20));
            n++;
        }
    return n;
}

#if defined(__linux__)
/* ---- memory: a fresh process's resident set ---- */
/* Resident bytes of this process: /proc/self/statm's second field, in pages. */
static double rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    bool ok = f && fscanf(f, "%lu %lu", &size, &resident) == 2;
    if (f) fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    NEED(ok && page > 0, "cannot read /proc/self/statm");
    return (double)resident * (double)page;
}

/* In a child: the resident set before the world's creation and after 1M
   entities with P+V in it, made one at a time or (*ctx true) by one
   ecs_create_many_values, whose values are made before the first reading:
   they are the caller's data. out: {before, after} in bytes. */
static void rss_child(void *ctx, double *out) {
    bool many = *(const bool *)ctx;
    bulkv_ctx c = {0};
    if (many) bulkv_setup(&c);
    ids id;
    out[0] = rss_bytes();
    ecs_world *w = world_new(&id);
    if (many) {
        ecs_id cids[2] = {id.pos, id.vel};
        const void *vals[2] = {c.p, c.v};
        check(ecs_create_many_values(w, N_CREATE, cids, 2, vals, NULL) == ECS_OK &&
              ecs_count(w) == N_CREATE, "RSS, ecs_create_many_values", "ecs_create_many_values failed");
    } else {
        ecs_entity last;
        bool ok = create_one_by_one(w, &id, &last);
        create_check(w, &id, last, ok, "RSS, one at a time");
    }
    out[1] = rss_bytes();
}

/* Median MiB the resident set grew by, over n children. */
static double rss_growth_mib(int n, bool many) {
    double mib[MAX_REPS];
    int k = 0;
    NEED(n > 0 && n <= MAX_REPS, "bad sample count");
    for (int r = 0; r < n; r++) {
        double out[2];
        if (in_child("RSS of 1M entities", rss_child, &many, out, 2))
            mib[k++] = (out[1] - out[0]) / (1 << 20);
    }
    return k ? median(mib, k) : NAN;
}

/* W10: the one-at-a-time figure against its target; ecs_create_many_values
   and the bare payload (P+V as plain arrays, 16 B x 1M) in the note. */
static abs_row rss_row(void) {
    abs_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "W10 RSS of 1M entities with P+V, fresh process");
    r.unit = "MiB";
    r.target = 28;
    r.value = rss_growth_mib(reps(5), false);
    double many = rss_growth_mib(reps(5), true);
    snprintf(r.note, sizeof r.note, "create_many_values %.2f MiB; arrays %.2f MiB", many,
             (double)N_CREATE * (sizeof(Position) + sizeof(Velocity)) / (1 << 20));
    return r;
}
#endif

/* ---- simulated schedules ---- */
enum { SIM_DAGS = 100, SIM_MIN = 50, SIM_MAX = 500, SIM_MAX_EDGES = 4 };
static const int g_sim_threads[] = {4, 16, 64};
#define SIM_COUNTS ((int)(sizeof g_sim_threads / sizeof g_sim_threads[0]))

typedef struct sim_row {
    int threads;
    double median, worst;   /* makespan / lower bound */
    int worse_than_fifo;    /* DAGs with makespan > fifo_makespan */
    double target;          /* max worst ratio */
} sim_row;

static bool sim_ok(const sim_row *r) { return r->worst <= r->target && r->worse_than_fifo == 0; }

/* 100 random DAGs: 50-500 systems with no data access (only declared edges
   order them), each after 0-4 random earlier systems, durations uniform in
   [1, 100). Each is simulated at 4, 16 and 64 threads. */
static void bench_sim(sim_row *rows) {
    double ratio[SIM_COUNTS][SIM_DAGS];
    int worse[SIM_COUNTS] = {0};
    char (*names)[12] = malloc((size_t)SIM_MAX * sizeof *names);
    double *dur = malloc((size_t)SIM_MAX * sizeof *dur);
    NEED(names && dur, "out of memory");
    for (int s = 0; s < SIM_MAX; s++) snprintf(names[s], sizeof names[s], "s%d", s);
    rng_seed(0x5C4EDull);
    for (int dag = 0; dag < SIM_DAGS; dag++) {
        int m = SIM_MIN + (int)rng_below(SIM_MAX - SIM_MIN + 1);
        ecs_world *w = world_threads(1, ECS_ORDER_INSERTION);
        double work = 0;
        for (int s = 0; s < m; s++) {
            ecs_system_desc d = {.name = names[s], .fn = sys_noop};
            int edges = s ? (int)rng_below(SIM_MAX_EDGES + 1) : 0, n = 0;
            for (int k = 0; k < edges; k++) {
                const char *p = names[rng_below((uint32_t)s)];
                bool dup = false;
                for (int q = 0; q < n; q++) dup |= d.after[q] == p;
                if (!dup) d.after[n++] = p;
            }
            system_add(w, &d);
            dur[s] = 1 + 99 * (double)(rng_u64() >> 11) / 9007199254740992.0;
            work += dur[s];
        }
        check(ecs_validate(w, NULL) == ECS_OK, "simulate", "ecs_validate failed on a DAG");
        for (int t = 0; t < SIM_COUNTS; t++) {
            ecs_sim_result res;
            check(ecs_schedule_simulate(w, g_sim_threads[t], dur, &res) == ECS_OK, "simulate",
                  "ecs_schedule_simulate failed");
            double eps = 1e-9 * res.lower_bound;
            check(same_sum(res.total_work, work) && res.lower_bound >= work / g_sim_threads[t] - eps &&
                  res.lower_bound >= res.critical_path - eps && res.makespan >= res.lower_bound - eps &&
                  res.fifo_makespan >= res.lower_bound - eps, "simulate",
                  "a simulated schedule beats its lower bound, or the totals are wrong");
            ratio[t][dag] = res.makespan / res.lower_bound;
            worse[t] += res.makespan > res.fifo_makespan + eps;
        }
        ecs_world_free(w);
    }
    for (int t = 0; t < SIM_COUNTS; t++) {
        sim_row *r = &rows[t];
        r->threads = g_sim_threads[t];
        r->worst = 0;
        for (int d = 0; d < SIM_DAGS; d++) if (ratio[t][d] > r->worst) r->worst = ratio[t][d];
        r->median = median(ratio[t], SIM_DAGS);
        r->worse_than_fifo = worse[t];
        r->target = 1.10;
    }
    free(names);
    free(dur);
}

static void sim_header(void) {
    printf("\nsimulated makespan / lower bound: %d random DAGs, %d-%d systems (ecs_schedule_simulate)\n",
           SIM_DAGS, SIM_MIN, SIM_MAX);
    printf("%-46s %12s %15s %8s %10s  %s\n", "workload", "median", "worst", ">FIFO", "target",
           "ok/MISS");
    printf("%.*s\n", 100, "----------------------------------------------------------------"
                          "----------------------------------------------------------------");
}
static void sim_print(const sim_row *r) {
    char name[64], target[32];
    snprintf(name, sizeof name, "makespan / lower bound, %d threads", r->threads);
    snprintf(target, sizeof target, "<= %.2fx", r->target);
    printf("%-46s %11.4fx %14.4fx %8d %10s  %s\n", name, r->median, r->worst, r->worse_than_fifo,
           target, sim_ok(r) ? "ok" : "MISS");
    fflush(stdout);
}

/* The load average as /proc/loadavg has it ("?" where there is none). */
static void load_avg(char *buf, size_t size) {
    FILE *f = fopen("/proc/loadavg", "r");
    double a = 0, b = 0, c = 0;
    if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, size, "%.2f %.2f %.2f", a, b, c);
    else snprintf(buf, size, "?");
    if (f) fclose(f);
}

/* ---- hooks and parents: ratios to the same ecs.h work without them ---- */
static void triv_move(void *dst, const void *src, int n, void *ctx) {
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(Velocity));
}
static void triv_dtor(void *p, int n, void *ctx) { (void)p; (void)n; (void)ctx; }

typedef struct hookpair_ctx { move_ctx plain, hooked; } hookpair_ctx;
static void hookpair_world(move_ctx *c, bool hooks) {
    memset(c, 0, sizeof *c);
    c->w = ecs_world_new(NULL);
    NEED(c->w, "ecs_world_new failed");
    c->id.pos = ECS_COMPONENT(c->w, Position);
    c->id.vel = hooks ? ecs_component_init(c->w, &(ecs_component_desc){.name = "Velocity",
                            .size = sizeof(Velocity), .align = _Alignof(Velocity), .move = triv_move,
                            .dtor = triv_dtor})
                      : ECS_COMPONENT(c->w, Velocity);
    NEED(c->id.pos && c->id.vel, "registration failed");
    c->h = alloc64(N_MOVE * sizeof *c->h);
    NEED(ecs_create_many(c->w, N_MOVE, &c->id.pos, 1, c->h) == ECS_OK, "ecs_create_many failed");
}
static double hookpair_base(void *ctx) { return move_ecs(&((hookpair_ctx *)ctx)->plain); }
static double hookpair_ecs(void *ctx) { return move_ecs(&((hookpair_ctx *)ctx)->hooked); }
static bench_row bench_add_remove_hooks(void) {
    bench_row r = {"add+remove with move/dtor hooks (vs no hooks)", 0, 0, 1.5, true};
    hookpair_ctx c;
    hookpair_world(&c.plain, false);
    hookpair_world(&c.hooked, true);
    run_pair(reps(61), hookpair_base, hookpair_ecs, &c, (double)N_MOVE * MOVE_PASSES, &r.base_ns, &r.ecs_ns);
    check(ecs_count(c.hooked.w) == N_MOVE, r.name, "entities lost");
    for (int k = 0; k < 2; k++) {
        move_ctx *m = k ? &c.hooked : &c.plain;
        ecs_world_free(m->w);
        free(m->h);
    }
    return r;
}

enum { FAMILIES = 10000, KIDS = 10 };
typedef struct family_ctx { ecs_entity *h; } family_ctx;
static double family_plain(void *ctx) {   /* the same entities, destroyed one by one, no parents */
    return destroy_n(((family_ctx *)ctx)->h, (size_t)FAMILIES * (KIDS + 1));
}
static double family_cascade(void *ctx) {   /* 10k parents with 10 children each: destroy the parents */
    family_ctx *c = ctx;
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id cids[2] = {id.pos, id.vel};
    size_t n = (size_t)FAMILIES * (KIDS + 1);
    NEED(ecs_create_many(w, n, cids, 2, c->h) == ECS_OK, "ecs_create_many failed");
    for (size_t f = 0; f < FAMILIES; f++)
        for (size_t k = 1; k <= KIDS; k++)
            NEED(ecs_set_parent(w, c->h[f * (KIDS + 1) + k], c->h[f * (KIDS + 1)]) == ECS_OK, "ecs_set_parent");
    bool bad = false;
    double t0 = now_ns();
    for (size_t f = 0; f < FAMILIES; f++) bad |= ecs_destroy(w, c->h[f * (KIDS + 1)]) != ECS_OK;
    double t = now_ns() - t0;
    check(!bad && ecs_count(w) == 0, "family destroy", "cascade left entities");
    ecs_world_free(w);
    return t;
}
static bench_row bench_destroy_families(void) {
    bench_row r = {"destroy parent + 10 children (vs plain destroy)", 0, 0, 2, true};
    family_ctx c = {alloc64((size_t)FAMILIES * (KIDS + 1) * sizeof(ecs_entity))};
    run_pair(reps(21), family_plain, family_cascade, &c, (double)FAMILIES * (KIDS + 1), &r.base_ns, &r.ecs_ns);
    free(c.h);
    return r;
}


/* ---- snapshots: GB/s of component data (100k entities, P + V + 24 bytes) ---- */
typedef struct snap_row { const char *name; double gbs, ref_gbs, target; } snap_row;
typedef struct mem_io { unsigned char *p; size_t size, at; } mem_io;   /* save/load through memory */
static ecs_result mem_write(const void *bytes, size_t size, void *ctx) {
    mem_io *m = (mem_io *)ctx;
    if (size > m->size - m->at) return ECS_ERR_NOMEM;
    memcpy(m->p + m->at, bytes, size);
    m->at += size;
    return ECS_OK;
}
static size_t mem_read(void *bytes, size_t size, void *ctx) {
    mem_io *m = (mem_io *)ctx;
    size_t n = size < m->size - m->at ? size : m->size - m->at;
    memcpy(bytes, m->p + m->at, n);
    m->at += n;
    return n;
}
typedef struct Blob24 { float v[6]; } Blob24;
enum { SNAP_N = 100000 };
static void snap_rows(snap_row *out) {
    ids id;
    ecs_world *w = world_new(&id);
    ecs_id blob = ECS_COMPONENT(w, Blob24), cids[3] = {id.pos, id.vel, blob};
    NEED(blob && ecs_create_many(w, SNAP_N, cids, 3, NULL) == ECS_OK, "snapshot world");
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){.terms = {{id.pos, ECS_WRITE, ECS_AND}, {blob, ECS_WRITE, ECS_AND}}});
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)   /* not all zero pages */
        for (int i = 0; i < it.count; i++) {
            ECS_FIELD(&it, Position, 0)[i].x = (float)i;
            ECS_FIELD(&it, Blob24, 1)[i].v[3] = (float)i * 0.5f;
        }
    ecs_query_free(q);
    double bytes = (double)SNAP_N * (sizeof(Position) + sizeof(Velocity) + sizeof(Blob24));
    int n = reps(21);
    double *t_tr = alloc64(sizeof(double) * (size_t)n * 5), *t_mc = t_tr + n, *t_h = t_mc + n, *t_io = t_h + n,
           *t_mem = t_io + n;
    mem_io m = {NULL, 0, 0};
    unsigned char *a = alloc64((size_t)bytes), *b = alloc64((size_t)bytes);
    memset(a, 1, (size_t)bytes);
    uint64_t h0 = ecs_world_hash(w), sink = 0;
    for (int k = 0; k < n; k++) {
        double t0 = now_ns();
        ecs_snapshot *s = ecs_snapshot_take(w);
        bool ok = s && ecs_snapshot_restore(w, s) == ECS_OK;
        t_tr[k] = now_ns() - t0;
        check(ok && ecs_world_hash(w) == h0, "snapshot take + restore", "the world changed");
        t0 = now_ns();   /* the reference: the same bytes copied there and back */
        memcpy(b, a, (size_t)bytes);
        memcpy(a, b, (size_t)bytes);
        clobber();
        t_mc[k] = now_ns() - t0;
        t0 = now_ns();
        sink += ecs_world_hash(w);
        t_h[k] = now_ns() - t0;
        FILE *f = fopen("/dev/shm/ecs_bench.snap", "w+b");
        if (!f) f = tmpfile();
        NEED(f && s, "a file for the save-file bench");
        t0 = now_ns();
        ok = ecs_snapshot_write(s, f) == ECS_OK;
        rewind(f);
        ecs_snapshot *r = ecs_snapshot_read(w, f);
        t_io[k] = now_ns() - t0;
        check(ok && r, "save file write + read", ecs_last_error(w));
        fclose(f);
        ecs_snapshot_free(r);
        if (!m.p) {   /* a buffer of the snapshot's size, as a ring of them would be */
            m.size = ecs_snapshot_size(s);
            m.p = alloc64(m.size);
            memset(m.p, 0, m.size);
        }
        t0 = now_ns();
        m.at = 0;
        ok = ecs_snapshot_save(s, mem_write, &m) == ECS_OK && m.at == m.size;
        m.at = 0;
        r = ecs_snapshot_load(w, mem_read, &m);
        t_mem[k] = now_ns() - t0;
        check(ok && r, "save + load through memory", ecs_last_error(w));
        ecs_snapshot_free(r);
        ecs_snapshot_free(s);
    }
    free(m.p);
    remove("/dev/shm/ecs_bench.snap");
    check(sink != 0, "world hash", "zero");
    double mc = bytes / median(t_mc, n);
    out[0] = (snap_row){"take + restore, 100k entities (P, V, 24 B)", bytes / median(t_tr, n), mc, 2};
    out[1] = (snap_row){"ecs_world_hash, same world", bytes / median(t_h, n), mc, 2};
    out[2] = (snap_row){"save file write + read (/dev/shm)", bytes / median(t_io, n), mc, 0.5};
    out[3] = (snap_row){"save + load via memory (>= 0.8x take+restore)", bytes / median(t_mem, n), mc, 0.8 * out[0].gbs};
    free(t_tr);
    free(a);
    free(b);
    ecs_world_free(w);
}

static int snap_table(int *met) {
    printf("\nsnapshots: GB/s of component data (medians; memcpy: the same bytes copied there and back)\n");
    printf("%-46s %12s %15s %10s  %s\n", "workload", "GB/s", "memcpy GB/s", "target", "ok/MISS");
    printf("%.*s\n", 100, "----------------------------------------------------------------"
                          "----------------------------------------------------------------");
    snap_row snaps[4];
    snap_rows(snaps);
    for (int i = 0; i < 4; i++) {
        bool ok = snaps[i].gbs >= snaps[i].target;
        char target[32];
        snprintf(target, sizeof target, ">= %.3g", snaps[i].target);
        printf("%-46s %12.2f %15.2f %10s  %s\n", snaps[i].name, snaps[i].gbs, snaps[i].ref_gbs, target, ok ? "ok" : "MISS");
        *met += ok;
    }
    return 4;
}

/* ---- the list ------------------------------------------------------------- */
typedef bench_row (*bench_fn)(void);
static const bench_fn g_benches[] = {
#if defined(__linux__)
    bench_create_fresh,        /* first: see "fresh processes" */
    bench_bulk_values_fresh,
#endif
    bench_iter_pv,
    bench_iter_pvd,
    bench_iter_pv_sys,
    bench_iter_pvd_sys,
    bench_fragmented,
    bench_create,
    bench_bulk_create,
    bench_bulk_values,
    bench_add_remove,
    bench_overwrite,
    bench_cmd_set,
    bench_cmd_spawn,
    bench_cmd_split,
    bench_cmd_set_hooked,
    bench_destroy,
    bench_destroy_with,
    bench_add_remove_hooks,
    bench_destroy_families,
};

/* The events rows (see "events" above); their count toward the targets. */
static int events_rows(int *met) {
    printf("\nevents: 1 thread, medians of interleaved samples (%d each); baseline: the same data through plain "
           "arrays\n", reps(21));
    print_header();
    bench_row rows[6], unused;
    bench_events_emit_read(&rows[0], &rows[1], EV_EMITTER);
    bench_events_emit_read(&rows[2], &unused, EV_EMIT);
    bench_events_emit_read(&rows[3], &unused, EV_IN_PLACE);
    rows[4] = bench_events_pipeline(EV_EMITTER);
    rows[5] = bench_events_pipeline(EV_EMIT);
    static const int shown[6] = {0, 2, 3, 1, 4, 5};
    int counted = 0;
    for (int i = 0; i < 6; i++) {
        print_row(&rows[shown[i]]);
        counted += row_counts(&rows[i]);
        *met += row_counts(&rows[i]) && row_ok(&rows[i]);
    }
    return counted;
}

/* Whether large temporaries (ecs_validate's, a loaded snapshot's) come from
   the heap or from fresh mmaps (page faults on every sample) depends on
   glibc's dynamic mmap threshold, which follows the sizes of blocks freed
   earlier: one build measured 31 or 45 ms (19k or 81k page faults) with
   nothing but the size of a struct changed. Fixed thresholds make these rows
   measure ecs.h, not that history. */
static void fixed_malloc_thresholds(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}

int main(int argc, char **argv) {
    bool only_events = false, only_changes = false, only_prefabs = false, only_sync = false, only_snaps = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) g_quick = true;
        else if (!strcmp(argv[i], "--events")) only_events = true;
        else if (!strcmp(argv[i], "--changes")) only_changes = true;
        else if (!strcmp(argv[i], "--prefabs")) only_prefabs = true;
        else if (!strcmp(argv[i], "--sync")) only_sync = true;
        else if (!strcmp(argv[i], "--snapshots")) only_snaps = true;
        else { fprintf(stderr, "usage: %s [--quick] [--events] [--changes] [--prefabs] [--sync] [--snapshots]\n", argv[0]); return 2; }
    }
    if (only_snaps) {
        fixed_malloc_thresholds();
        int met = 0, total = snap_table(&met);
        printf("%d/%d targets met%s\n", met, total, g_wrong ? "; RESULTS WRONG, see stderr" : "");
        return g_wrong ? 1 : 0;
    }
    if (only_sync) {   /* the command-apply rows of the main table */
        print_header();
        bench_row rows[3] = {bench_cmd_set(), bench_cmd_spawn(), bench_cmd_split()};
        int met = 0;
        for (int i = 0; i < 3; i++) { print_row(&rows[i]); met += row_ok(&rows[i]); }
        printf("%d/3 targets met%s\n", met, g_wrong ? "; RESULTS WRONG, see stderr" : "");
        return g_wrong ? 1 : 0;
    }
    if (only_events || only_changes || only_prefabs) {
        int met = 0, total = only_events ? events_rows(&met) : only_changes ? changes_rows(&met) : prefab_rows(&met);
        printf("%d/%d targets met%s\n", met, total, g_wrong ? "; RESULTS WRONG, see stderr" : "");
        return g_wrong ? 1 : 0;
    }
    int n = (int)(sizeof g_benches / sizeof g_benches[0]), met = 0, total = 0;
    char load0[64], load1[64];
    load_avg(load0, sizeof load0);
    double t0 = now_ns();
#if defined(__linux__)
    abs_row rss = rss_row();   /* before any other row grows this process's heap */
#endif
    printf("ecs.h bench: medians of interleaved samples (%s), ratio = ecs.h / baseline\n",
           g_quick ? "--quick: 3 each" : "21-251 each");
    print_header();
    for (int i = 0; i < n; i++) {
        bench_row r = g_benches[i]();
        print_row(&r);
        met += row_ok(&r);
        total++;
    }

    speed_header();
    speed_row sr[3];
    sr[0] = bench_heavy();
    speed_print(&sr[0]);
    if (bench_heavy_reference(&sr[2])) speed_print(&sr[2]);
    sr[1] = bench_indep();
    speed_print(&sr[1]);
    for (int i = 0; i < 2; i++) { met += speed_ok(&sr[i]); total++; }

    abs_header("scheduler frames and ecs_validate, absolute (medians; validate: a fresh world per "
               "sample, building it not timed)");
    abs_row ar[48];
    int an = 0;
    an += tiny_rows(ar + an, true);
    for (int i = 0; i < an; i++) abs_print(&ar[i]);
    int k = an;
    an += tiny_rows(ar + an, false);
    an += syncsim_rows(ar + an);
    for (; k < an; k++) abs_print(&ar[k]);
    fixed_malloc_thresholds();
    an += validate_rows(ar + an);
    for (; k < an; k++) abs_print(&ar[k]);
#if defined(__linux__)
    char title[96];
    snprintf(title, sizeof title, "memory: resident-set growth of a fresh process (medians of %d children)",
             reps(5));
    abs_header(title);
    ar[an++] = rss;
    abs_print(&rss);
#endif
    for (int i = 0; i < an; i++)
        if (ar[i].target >= 0) { met += abs_ok(&ar[i]); total++; }

    total += snap_table(&met);

    sim_header();
    sim_row sim[SIM_COUNTS];
    bench_sim(sim);
    for (int i = 0; i < SIM_COUNTS; i++) { sim_print(&sim[i]); met += sim_ok(&sim[i]); total++; }

    printf("\ngame loop: 64 systems x 1 entity, 1 thread, against the same frames without the feature\n"
           "(medians of interleaved samples of %d ops; an op is one frame, or what the row names)\n", LOOP_OPS);
    print_header();
    static const bench_fn loop_rows[] = {bench_loop_run_if, bench_loop_disabled, bench_loop_fixed4, bench_loop_steps1};
    for (int i = 0; i < (int)(sizeof loop_rows / sizeof loop_rows[0]); i++) {
        bench_row r = loop_rows[i]();
        print_row(&r);
        met += row_ok(&r);
        total++;
    }
    total += events_rows(&met);
    total += changes_rows(&met);
    total += prefab_rows(&met);

    load_avg(load1, sizeof load1);
    printf("\nload average (1, 5, 15 min): %s at the start, %s at the end\n", load0, load1);
    printf("%d/%d targets met (%.1f s)%s\n", met, total, (now_ns() - t0) / 1e9,
           g_wrong ? "; RESULTS WRONG, see stderr" : "");
    return g_wrong ? 1 : 0;
}
