/* The test binary: runs every suite, then prints "N passed, N failed".
   usage: tests [-f filter] [--seed N] [--scale PCT] */
#ifndef TEST_IMPL_ELSEWHERE   /* the C++ port builds the implementation in tests/cxx/impl.cpp */
#  define ECS_IMPLEMENTATION
#endif
#include "../ecs.h"
#include "test.h"

test_state test_g = {0, 0, 0, NULL, 0, 0, 100};

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

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc) test_g.filter = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            test_g.seed = strtoull(argv[++i], NULL, 0); test_g.seed_given = 1;
        } else if (!strcmp(argv[i], "--scale") && i + 1 < argc) test_g.scale_pct = strtol(argv[++i], NULL, 10);
        else { fprintf(stderr, "usage: %s [-f filter] [--seed N] [--scale PCT]\n", argv[0]); return 2; }
    }
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
    printf("%d passed, %d failed\n", test_g.passed, test_g.failed);
    return test_g.failed ? 1 : 0;
}
