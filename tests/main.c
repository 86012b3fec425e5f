/* The test binary: runs every suite, then prints "N passed, N failed".
   usage: tests [-f filter] [--seed N] [--scale PCT] [--timeout SECONDS]
   A test still running after --timeout seconds (default 600, 0 = none) ends
   the run, failed by name: a deadlock fails instead of hanging. */
#ifndef TEST_IMPL_ELSEWHERE   /* the C++ port builds the implementation in tests/cxx/impl.cpp */
#  define ECS_IMPLEMENTATION
#endif
#include "../ecs.h"
#include "test.h"

test_state test_g = {0, 0, 0, NULL, 0, 0, 100, 600};

/* The watchdog. Its two lines are made when a test starts, so that when
   time is up it only writes them and exits (async-signal-safe calls only).
   POSIX: alarm() and SIGALRM, set with ISO C signal() (sigaction needs a
   POSIX feature macro, and this file compiles the implementation as strict
   C11); Windows: a timer-queue timer; Emscripten: none (its timers never
   run while main() does). */
#ifdef __EMSCRIPTEN__
void test_watch_start(const char *name) { (void)name; }
void test_watch_stop(void) {}
#else
static char watch_err[256], watch_out[64];
static int watch_err_n, watch_out_n;
static void watch_lines(const char *name) {
    watch_err_n = snprintf(watch_err, sizeof watch_err, "FAIL %s: timed out after %ld s\n", name, test_g.timeout_s);
    watch_out_n = snprintf(watch_out, sizeof watch_out, "%d passed, %d failed\n", test_g.passed, test_g.failed + 1);
    if (watch_err_n < 0 || watch_err_n >= (int)sizeof watch_err) watch_err_n = (int)sizeof watch_err - 1;
}
#  ifdef _WIN32
static HANDLE watch_timer;
static VOID CALLBACK watch_fire(PVOID arg, BOOLEAN fired) {
    DWORD n;
    (void)arg; (void)fired;
    WriteFile(GetStdHandle(STD_ERROR_HANDLE), watch_err, (DWORD)watch_err_n, &n, NULL);
    WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), watch_out, (DWORD)watch_out_n, &n, NULL);
    TerminateProcess(GetCurrentProcess(), 1);
}
void test_watch_start(const char *name) {
    if (test_g.timeout_s <= 0) return;
    watch_lines(name);
    if (!CreateTimerQueueTimer(&watch_timer, NULL, watch_fire, NULL, (DWORD)test_g.timeout_s * 1000, 0,
                               WT_EXECUTEONLYONCE))
        watch_timer = NULL;
}
void test_watch_stop(void) {
    if (watch_timer) DeleteTimerQueueTimer(NULL, watch_timer, INVALID_HANDLE_VALUE);
    watch_timer = NULL;
}
#  else
#    include <signal.h>
#    include <unistd.h>
static void watch_fire(int sig) {
    (void)sig;
    ssize_t r = write(2, watch_err, (size_t)watch_err_n);
    r = write(1, watch_out, (size_t)watch_out_n);
    (void)r;
    _exit(1);
}
void test_watch_start(const char *name) {
    if (test_g.timeout_s <= 0) return;
    watch_lines(name);
    signal(SIGALRM, watch_fire);
    alarm((unsigned)test_g.timeout_s);
}
void test_watch_stop(void) { alarm(0); }
#  endif
#endif

void suite_world(void);
void suite_entity(void);
void suite_query(void);
void suite_commands(void);
void suite_stale(void);
void suite_oom(void);
void suite_random(void);
void suite_systems(void);
void suite_graph_random(void);
void suite_sched(void);
void suite_soak(void);
void suite_safety(void);
void suite_hardening(void);
void suite_validation(void);
void suite_hooks(void);
void suite_stress(void);
void suite_snapshot(void);
void suite_rollback(void);
void suite_diag(void);
void suite_gameloop(void);
void suite_events(void);
void suite_change(void);
void suite_prefab(void);
void suite_order(void);
void suite_sync(void);
void suite_netcode(void);
void suite_oldsaves(void);

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc) test_g.filter = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            test_g.seed = strtoull(argv[++i], NULL, 0); test_g.seed_given = 1;
        } else if (!strcmp(argv[i], "--scale") && i + 1 < argc) test_g.scale_pct = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) test_g.timeout_s = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-f filter] [--seed N] [--scale PCT] [--timeout SECONDS]\n", argv[0]);
            return 2;
        }
    }
    if (test_g.timeout_s < 0 || test_g.timeout_s > 1000000) {
        fprintf(stderr, "--timeout: 0 (none) to 1000000 seconds\n");
        return 2;
    }
    /* whole lines leave at once, so a timeout's closing line comes after
       them (msvcrt has no line buffering: unbuffered there) */
#ifdef _WIN32
    setvbuf(stdout, NULL, _IONBF, 0);
#else
    setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
#endif
    suite_world();
    suite_entity();
    suite_query();
    suite_commands();
    suite_stale();
    suite_oom();
    suite_random();
    suite_systems();
    suite_graph_random();
    suite_sched();
    suite_soak();
    suite_safety();
    suite_hardening();
    suite_validation();
    suite_hooks();
    suite_stress();
    suite_snapshot();
    suite_rollback();
    suite_diag();
    suite_gameloop();
    suite_events();
    suite_change();
    suite_prefab();
    suite_order();
    suite_sync();
    suite_netcode();
    suite_oldsaves();
    printf("%d passed, %d failed\n", test_g.passed, test_g.failed);
    return test_g.failed ? 1 : 0;
}
