/* validate.c - every kind of problem ecs_validate reports, and the graph as DOT.

   One deliberately broken system graph holding one problem of each kind: a
   cycle of three systems (Steering runs before Avoidance, before Flocking,
   before Steering), a race (Gravity and Wind both write Velocity in
   ECS_ORDER_EXPLICIT mode and nothing orders them), an unknown system name
   (a typo in an `.after` list), a duplicate name (two systems called
   "Animate"), and a declaration against stage order (Integrate, in stage
   "simulate", asks to run after Render, in the later stage "present").
   ecs_validate finds them all in one pass, each message naming the systems,
   the data and a fix; ecs_progress refuses to run such a graph. The graph is
   also written as validate.dot, where Graphviz draws the cycle edges bold red
   and the race as a red dotted line. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>

typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;
typedef struct { int frame; } Sprite;

static void nothing(ecs_iter *it) { (void)it; }

int main(void) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.order = ECS_ORDER_EXPLICIT});
    ecs_id pos = ECS_COMPONENT(w, Position);
    ecs_id vel = ECS_COMPONENT(w, Velocity);
    ecs_id sprite = ECS_COMPONENT(w, Sprite);
    ecs_stage simulate = ecs_stage_add(w, "simulate");
    ecs_stage present = ecs_stage_add(w, "present");

    /* a cycle of three: each runs after the previous one, the first after the last */
    ecs_system_add(w, &(ecs_system_desc){.name = "Steering", .fn = nothing, .stage = simulate,
        .terms = {ECS_TERM_R(vel)}, .after = {"Flocking"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Avoidance", .fn = nothing, .stage = simulate,
        .terms = {ECS_TERM_R(vel)}, .after = {"Steering"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Flocking", .fn = nothing, .stage = simulate,
        .terms = {ECS_TERM_R(vel)}, .after = {"Avoidance"}});

    /* a race: two writers of Velocity, ordered against its readers but not
       against each other */
    ecs_system_add(w, &(ecs_system_desc){.name = "Gravity", .fn = nothing, .stage = simulate,
        .terms = {ECS_TERM_W(vel)}, .before = {"Steering", "Avoidance", "Flocking"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Wind", .fn = nothing, .stage = simulate,
        .terms = {ECS_TERM_W(vel)}, .before = {"Steering", "Avoidance", "Flocking"}});

    /* a declaration against stage order: "present" runs after "simulate" */
    ecs_system_add(w, &(ecs_system_desc){.name = "Integrate", .fn = nothing, .stage = simulate,
        .terms = {ECS_TERM_W(pos), ECS_TERM_R(vel)},
        .after = {"Gravity", "Wind", "Render"}});

    /* an unknown name: "Integrat" is a typo */
    ecs_system_add(w, &(ecs_system_desc){.name = "Render", .fn = nothing, .stage = present,
        .terms = {ECS_TERM_R(pos), ECS_TERM_R(sprite)}, .after = {"Integrat"},
        .flags = ECS_SYSTEM_MAIN_THREAD});

    /* a duplicate name: two systems called "Animate" */
    ecs_system_add(w, &(ecs_system_desc){.name = "Animate", .fn = nothing, .stage = present,
        .terms = {ECS_TERM_W(sprite)}, .before = {"Render"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "Animate", .fn = nothing, .stage = present,
        .terms = {ECS_TERM_R(pos)}});

    ecs_report report;
    ecs_result r = ecs_validate(w, &report);
    printf("ecs_validate: %s\n", ecs_result_str(r));
    ecs_report_print(&report, stdout);
    printf("ecs_progress: %s\n", ecs_result_str(ecs_progress(w, 1.0f / 60)));

    FILE *f = fopen("validate.dot", "w");
    if (!f) { perror("validate.dot"); ecs_world_free(w); return 1; }
    ecs_result written = ecs_write_dot(w, f);
    if (fclose(f) != 0 && !written) written = ECS_ERR_ARG;
    if (written) printf("ecs_write_dot: %s\n", ecs_last_error(w));
    else printf("\nwrote validate.dot; draw it with: dot -Tsvg validate.dot -o validate.svg\n");
    ecs_world_free(w);
    return r == ECS_ERR_INVALID_GRAPH && report.count == 5 && !written ? 0 : 1;
}
