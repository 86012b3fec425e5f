/* test.h - the ecs.h test runner: TEST, CHECK, RUN, and a closing
   "N passed, N failed" line. Each tests/test_*.c file defines its tests and one
   suite function (listed in tests/main.c). Every test makes its own world. */
#ifndef TEST_H
#define TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../ecs.h"

typedef struct test_state {
    int passed, failed;        /* tests */
    int checks_failed;         /* in the running test */
    const char *filter;        /* run only tests whose name contains this */
    unsigned long long seed;   /* for randomized tests; --seed N */
    int seed_given;
    long scale_pct;            /* randomized tests scale their size by this (default 100) */
    long timeout_s;            /* per test; --timeout N (default 600, 0 = none) */
} test_state;
extern test_state test_g;

/* The per-test time limit (tests/main.c): a test still running after
   test_g.timeout_s seconds ends the run, failed by name. */
void test_watch_start(const char *name);
void test_watch_stop(void);

#define TEST(name) static void name(void)

/* Records a failed check with its location; the test goes on. */
#define CHECK(cond) do { if (!(cond)) { test_g.checks_failed++; \
    fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)
/* Like CHECK, with a printf-style explanation. */
#define CHECKF(cond, ...) do { if (!(cond)) { test_g.checks_failed++; \
    fprintf(stderr, "  %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
/* A check the rest of the test depends on: stops the test when it fails. */
#define REQUIRE(cond) do { if (!(cond)) { test_g.checks_failed++; \
    fprintf(stderr, "  %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond); return; } } while (0)
#define CHECK_EQ_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
    CHECKF(a_ == b_, "%s = %lld, %s = %lld", #a, a_, #b, b_); } while (0)

#define RUN(name) test_run(#name, name)
static inline void test_run(const char *name, void (*fn)(void)) {
    if (test_g.filter && !strstr(name, test_g.filter)) return;
    test_g.checks_failed = 0;
    test_watch_start(name);
    fn();
    test_watch_stop();
    if (test_g.checks_failed) { test_g.failed++; fprintf(stderr, "FAIL %s\n", name); }
    else test_g.passed++;
}

/* splitmix64: the randomized tests' generator, seeded from test_g.seed. */
static inline unsigned long long test_rand(unsigned long long *s) {
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline unsigned test_below(unsigned long long *s, unsigned n) {
    return (unsigned)(test_rand(s) % n);
}

/* Sizes, frames and spins of the threaded tests shrink with --scale (for
   TSan and helgrind). */
#include <time.h>
static inline long test_scaled(long n, long min) {
    long v = (long)((double)n * (double)test_g.scale_pct / 100.0);
    return v < min ? min : v;
}
static inline double test_spin_len(double us) {   /* full at --scale >= 100, shorter below */
    return test_g.scale_pct >= 100 ? us : us * (double)test_g.scale_pct / 100.0;
}
#ifdef _WIN32   /* (msvcrt has no timespec_get; this also checks that ecs.h's own Win32
                   declarations agree with <windows.h> in one file) */
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
static inline double test_now_us(void) {
    LARGE_INTEGER c, f;
    QueryPerformanceCounter(&c);
    QueryPerformanceFrequency(&f);
    return (double)c.QuadPart * 1e6 / (double)f.QuadPart;
}
#else
#  include <time.h>
static inline double test_now_us(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}
#endif
/* Bit helpers without compiler builtins. */
static inline int test_ctz64(unsigned long long x) {
    int n = 0;
    if (!x) return 64;
    while (!(x & 1)) { x >>= 1; n++; }
    return n;
}
static inline int test_popcount64(unsigned long long x) {
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}
/* The save file's checksum (version 7), computed here independently of
   ecs.h (this also pins the format): per 8-byte lane of 64-byte stripes of
   little-endian words, a sum and a sum of sums; the tail zero-padded; the
   lanes and the length mixed at the end. Tests that damage a file on purpose
   reseal it with this, so the damage reaches the parser. */
static inline unsigned long long test_le64(const unsigned char *p) {
    unsigned long long v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static inline unsigned long long test_fmix64(unsigned long long x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}
static inline unsigned long long test_file_checksum(const unsigned char *p, size_t n) {
    unsigned long long a[8] = {0}, b[8] = {0}, x;
    unsigned char last[64] = {0};
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; k++) { a[k] += test_le64(p + i + 8 * k); b[k] += a[k]; }
    if (i < n) {
        memcpy(last, p + i, n - i);
        for (int k = 0; k < 8; k++) { a[k] += test_le64(last + 8 * k); b[k] += a[k]; }
    }
    x = test_fmix64((unsigned long long)n ^ 0x9e3779b97f4a7c15ull);
    for (int k = 0; k < 8; k++) x = test_fmix64(test_fmix64(x ^ a[k]) ^ b[k]) * 0xc2b2ae3d27d4eb4full;
    return test_fmix64(x);
}
static inline void test_file_reseal(unsigned char *p, size_t n) {   /* n: the whole file */
    unsigned long long sum = test_file_checksum(p, n - 8);
    for (int i = 0; i < 8; i++) p[n - 8 + i] = (unsigned char)(sum >> (8 * i));
}

/* Snapshots through memory: a read callback over fixed bytes (test_src),
   and a growable buffer's append for write callbacks (false: no memory). */
typedef struct test_src { const unsigned char *p; size_t n, pos; } test_src;
static inline size_t test_src_read(void *bytes, size_t size, void *ctx) {
    test_src *s = (test_src *)ctx;
    size_t left = s->n - s->pos, k = size < left ? size : left;
    if (k) memcpy(bytes, s->p + s->pos, k);
    s->pos += k;
    return k;
}
static inline bool test_append(unsigned char **p, size_t *n, size_t *cap, const void *bytes, size_t size) {
    if (*n + size > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *n + size) c *= 2;
        unsigned char *q = (unsigned char *)realloc(*p, c);
        if (!q) return false;
        *p = q;
        *cap = c;
    }
    if (size) memcpy(*p + *n, bytes, size);
    *n += size;
    return true;
}

/* An identity for the calling OS thread: the address of a thread-local. */
static inline const void *test_thread_id(void) {
    static _Thread_local char here;
    return &here;
}
#if defined(__MINGW32__)   /* MinGW's own printf (__USE_MINGW_ANSI_STDIO), not msvcrt's */
#  define TEST_PRINTF(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#  define TEST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define TEST_PRINTF(f, a)
#endif
static inline void test_spin_us(double us) {   /* a busy wait, to widen race windows */
    if (us <= 0) return;
    double end = test_now_us() + us;
    while (test_now_us() < end) {}
}
/* Helgrind does not understand C11 atomics: state shared only through them
   is hidden from it. */
#ifdef ECS_VALGRIND
#  include <valgrind/helgrind.h>
#  define TEST_HG_IGNORE(p, n) VALGRIND_HG_DISABLE_CHECKING((p), (n))
#else
#  define TEST_HG_IGNORE(p, n) ((void)0)
#endif

#endif

/* How often needle occurs in hay. */
static inline int test_count_str(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}
/* The whole content of f, from its start (for output written to a tmpfile());
   free() it. */
static inline char *test_read_all(FILE *f) {
    fflush(f);
    long n = ftell(f);
    if (n < 0) return NULL;
    char *buf = (char *)malloc((size_t)n + 1);
    if (!buf) return NULL;
    rewind(f);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    return buf;
}

/* A hash of the whole world as the public API sees it: every live entity's
   handle, in query order, with each component's presence and bytes. Used to
   prove that a failed call left the world unchanged. */
static inline unsigned long long test_world_hash(ecs_world *w) {
    unsigned long long h = 1469598103934665603ull;
#define TEST_MIX(v) (h = (h ^ (unsigned long long)(v)) * 1099511628211ull)
    ecs_query *all = ecs_query_new(w, &(ecs_query_desc){.terms = {{0}}});
    if (!all) return 0;
    ecs_id n = ecs_id_count(w);
    for (ecs_iter it = ecs_query_iter(w, all); ecs_query_next(&it);) {
        for (int i = 0; i < it.count; i++) {
            ecs_entity e = it.entities[i];
            TEST_MIX(e);
            for (ecs_id id = 1; id <= n; id++) {
                if (!ecs_has(w, e, id)) continue;
                TEST_MIX(id);
                const unsigned char *v = (const unsigned char *)ecs_get(w, e, id);
                for (size_t b = 0; v && b < ecs_id_size(w, id); b++) TEST_MIX(v[b]);
            }
        }
    }
    TEST_MIX(ecs_count(w));
#undef TEST_MIX
    ecs_query_free(all);
    return h;
}
