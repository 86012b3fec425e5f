/* poison.c - order inferred from reads and writes, and a race caught by validation.

   The four systems of seed 003 ("Multithreading Systems by Leveraging Graph
   Theory"): PoisonSystem reads PoisonCounter and writes Health; GameOverSystem
   and HealthBarSystem read Health and write GameState and GUI (resources);
   MovementSystem reads Input and writes Position. In ECS_ORDER_INSERTION mode
   ecs.h infers the order from those declarations (a conflicting pair runs in
   registration order) and shows which pairs it leaves unordered: those may
   run in parallel. Then the blog's BulletSystem, which also writes Health, is
   added in ECS_ORDER_EXPLICIT mode, where only declared order counts: two
   unordered writers of Health are a RACE, reported before anything runs. One
   `.after` fixes it, and a few frames run. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>
#include <string.h>

typedef struct { int stacks; } PoisonCounter;   /* 5 damage per stack per frame */
typedef struct { float hp; } Health;
typedef struct { float dx, dy; } Input;
typedef struct { float x, y; } Position;
typedef struct { bool over; } GameState;    /* resource */
typedef struct { char text[96]; } GUI;      /* resource */

typedef struct {   /* handed to every system as ctx */
    ecs_id poison, health, input, position, game_state, gui;
} Ids;

static void poison_system(ecs_iter *it) {
    Health *h = ECS_FIELD(it, Health, 0);
    const PoisonCounter *p = ECS_FIELD(it, PoisonCounter, 1);
    for (int i = 0; i < it->count; i++) h[i].hp -= 5.0f * (float)p[i].stacks;
}

static void bullet_system(ecs_iter *it) {
    Health *h = ECS_FIELD(it, Health, 0);
    for (int i = 0; i < it->count; i++) h[i].hp -= 10;
}

static void game_over_system(ecs_iter *it) {
    const Ids *ids = (const Ids *)it->ctx;
    const Health *h = ECS_FIELD(it, Health, 0);
    GameState *gs = (GameState *)ecs_resource_get(it->world, ids->game_state);
    for (int i = 0; i < it->count; i++)
        if (h[i].hp <= 0) gs->over = true;
}

static void health_bar_system(ecs_iter *it) {
    const Ids *ids = (const Ids *)it->ctx;
    const Health *h = ECS_FIELD(it, Health, 0);
    GUI *gui = (GUI *)ecs_resource_get(it->world, ids->gui);
    for (int i = 0; i < it->count; i++) {
        char bar[11];
        int full = h[i].hp > 0 ? (int)(h[i].hp + 5) / 10 : 0;
        for (int k = 0; k < 10; k++) bar[k] = k < full ? '#' : '.';
        bar[10] = '\0';
        size_t len = strlen(gui->text);
        snprintf(gui->text + len, sizeof gui->text - len, " [%s]%4.0f", bar, h[i].hp);
    }
}

static void movement_system(ecs_iter *it) {
    Position *p = ECS_FIELD(it, Position, 0);
    const Input *in = ECS_FIELD(it, Input, 1);
    for (int i = 0; i < it->count; i++) { p[i].x += in[i].dx; p[i].y += in[i].dy; }
}

/* The world of the blog post: the four systems, registered in its order. */
static ecs_world *seed_world(ecs_order order, Ids *ids) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.order = order});
    ids->poison = ECS_COMPONENT(w, PoisonCounter);
    ids->health = ECS_COMPONENT(w, Health);
    ids->input = ECS_COMPONENT(w, Input);
    ids->position = ECS_COMPONENT(w, Position);
    ids->game_state = ecs_resource(w, "GameState", sizeof(GameState), 0, NULL);
    ids->gui = ecs_resource(w, "GUI", sizeof(GUI), 0, NULL);

    ecs_system_add(w, &(ecs_system_desc){
        .name = "PoisonSystem", .fn = poison_system, .ctx = ids,
        .terms = {ECS_TERM_W(ids->health), ECS_TERM_R(ids->poison)}});
    ecs_system_desc over = {
        .name = "GameOverSystem", .fn = game_over_system, .ctx = ids,
        .terms = {ECS_TERM_R(ids->health)}, .writes = {ids->game_state}};
    ecs_system_desc bar = {
        .name = "HealthBarSystem", .fn = health_bar_system, .ctx = ids,
        .terms = {ECS_TERM_R(ids->health)}, .writes = {ids->gui}};
    if (order == ECS_ORDER_EXPLICIT) {   /* only declared order counts: the readers of
                                            Health wait for both of its writers */
        over.after[0] = bar.after[0] = "PoisonSystem";
        over.after[1] = bar.after[1] = "BulletSystem";
    }
    ecs_system_add(w, &over);
    ecs_system_add(w, &bar);
    ecs_system_add(w, &(ecs_system_desc){
        .name = "MovementSystem", .fn = movement_system, .ctx = ids,
        .terms = {ECS_TERM_W(ids->position), ECS_TERM_R(ids->input)}});
    return w;
}

/* Every pair of systems: which runs first, or that nothing orders them. */
static void print_order(ecs_world *w) {
    uint32_t n = ecs_system_count(w);
    for (ecs_system a = 1; a <= n; a++)
        for (ecs_system b = 1; b <= n; b++)
            if (ecs_system_precedes(w, a, b))
                printf("  %-15s runs before %s\n", ecs_system_name(w, a), ecs_system_name(w, b));
    for (ecs_system a = 1; a <= n; a++)
        for (ecs_system b = a + 1; b <= n; b++)
            if (!ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a))
                printf("  %-15s || %-15s (unordered: may run in parallel)\n", ecs_system_name(w, a),
                       ecs_system_name(w, b));
}

int main(void) {
    ecs_report report;

    printf("== seed 003's four systems, ECS_ORDER_INSERTION (order inferred from access)\n");
    Ids ids;
    ecs_world *w = seed_world(ECS_ORDER_INSERTION, &ids);
    ecs_validate(w, &report);
    ecs_report_print(&report, stdout);
    print_order(w);
    ecs_world_free(w);

    printf("\n== plus BulletSystem (writes Health), ECS_ORDER_EXPLICIT (declared order only)\n");
    w = seed_world(ECS_ORDER_EXPLICIT, &ids);
    ecs_system_desc bullet = {
        .name = "BulletSystem", .fn = bullet_system,
        .terms = {ECS_TERM_W(ids.health)}};
    ecs_system_add(w, &bullet);
    ecs_validate(w, &report);
    ecs_report_print(&report, stdout);
    printf("ecs_progress now returns %s: nothing runs\n", ecs_result_str(ecs_progress(w, 1)));
    ecs_world_free(w);

    printf("\n== the fix: BulletSystem declares .after = {\"PoisonSystem\"}\n");
    w = seed_world(ECS_ORDER_EXPLICIT, &ids);
    bullet.after[0] = "PoisonSystem";
    ecs_system_add(w, &bullet);
    ecs_result r = ecs_validate(w, &report);
    ecs_report_print(&report, stdout);
    print_order(w);

    ecs_entity hero = ecs_create(w), squire = ecs_create(w);
    ecs_set(w, hero, ids.health, &(Health){100});
    ecs_set(w, hero, ids.poison, &(PoisonCounter){3});
    ecs_set(w, hero, ids.position, &(Position){0, 0});
    ecs_set(w, hero, ids.input, &(Input){1, 0});
    ecs_set(w, squire, ids.health, &(Health){60});
    ecs_set(w, squire, ids.poison, &(PoisonCounter){0});
    ecs_set(w, squire, ids.position, &(Position){-1, 0});
    ecs_set(w, squire, ids.input, &(Input){1, 0});
    GUI *gui = (GUI *)ecs_resource_get(w, ids.gui);
    const GameState *gs = (const GameState *)ecs_resource_get(w, ids.game_state);
    printf("\n%d threads; poison (3 stacks) hits the hero for 15, bullets hit everyone for 10:\n",
           ecs_thread_count(w));
    for (int frame = 1; frame <= 6 && !gs->over && r == ECS_OK; frame++) {
        gui->text[0] = '\0';
        r = ecs_progress(w, 1);
        const Position *p = (const Position *)ecs_get(w, hero, ids.position);
        printf("  frame %d: hero, squire%s  hero at x=%g%s\n", frame, gui->text, p->x, gs->over ? "  GAME OVER" : "");
    }
    if (r) printf("ecs_progress: %s\n", ecs_last_error(w));
    ecs_world_free(w);
    return r == ECS_OK ? 0 : 1;
}
