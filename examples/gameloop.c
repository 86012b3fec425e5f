/* gameloop.c - a fixed 60 Hz simulation under a 144 Hz render loop, with
   pause, slow motion and systems that run only sometimes.

   The simulation is a step group: "physics" takes one step per 1/60 s of
   game time, and "damage" and "death" run after it within every step, each
   behind a sync point, so an enemy spawned in a step is there for damage and
   one that burns out is gone before the next step. The render loop passes
   jittery 144 Hz frame times to ecs_progress; the accumulator turns them into
   whole steps, and ecs_stage_alpha says how far the frame is between two
   steps (what a renderer interpolates with). Scripted keys pause the game
   (the group's first stage is disabled; the unscaled UI stage keeps running)
   and later slow it to a quarter. The spawner runs every 90 steps
   (.interval), the boss AI only while the Boss resource says the boss is
   there (.run_if). Each line sums up what ran in the last 40 frames. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>

typedef struct { float x; } Pos;
typedef struct { float x; } Vel;
typedef struct { int hp; } Hp;
typedef struct { int present, hp, waves; } Boss;
typedef struct { int escape, slow; } Input;   /* keys pressed this frame */
typedef struct { double real_time; } Hud;

enum { FRAMES = 880, WINDOW = 40 };
typedef struct game { ecs_id pos, vel, hp, boss, input, hud; ecs_stage physics; } game;

/* MAIN_THREAD, so it may enable stages and set the time scale; physics comes
   later in the frame, so both take effect this frame. Disabling physics, the
   group's first stage, stops the whole group; the UI stage runs on. */
static void input(ecs_iter *it) {
    const game *g = (const game *)it->ctx;
    const Input *in = (const Input *)ecs_resource_get(it->world, g->input);
    if (in->escape) ecs_stage_enable(it->world, g->physics, !ecs_stage_enabled(it->world, g->physics));
    if (in->slow) ecs_world_set_time_scale(it->world, ecs_world_time_scale(it->world) < 1 ? 1.0f : 0.25f);
}
static void spawn(ecs_iter *it) {   /* a wave of three; the second wave brings the boss */
    const game *g = (const game *)it->ctx;
    Boss *b = (Boss *)ecs_resource_get(it->world, g->boss);
    for (int i = 0; i < 3; i++) {
        ecs_entity e = ecs_cmd_create(it->commands);
        ecs_cmd_set(it->commands, e, g->pos, &(Pos){0});
        ecs_cmd_set(it->commands, e, g->vel, &(Vel){2.0f + (float)i});
        ecs_cmd_set(it->commands, e, g->hp, &(Hp){40});
    }
    if (++b->waves == 2) { b->present = 1; b->hp = 60; }
}
/* Runs under boss_ai's declarations (it writes Boss), after spawn: in the
   step that brings the boss, it already sees it. */
static bool boss_present(ecs_world *w, void *ctx) {
    const Boss *b = (const Boss *)ecs_resource_get(w, ((const game *)ctx)->boss);
    return b->present;
}
static void boss_ai(ecs_iter *it) {   /* the lava wears the boss down too */
    Boss *b = (Boss *)ecs_resource_get(it->world, ((const game *)it->ctx)->boss);
    if (--b->hp == 0) b->present = 0;
}
static void move(ecs_iter *it) {   /* it->dt is 1/60 in every step, whatever the frame took */
    Pos *p = ECS_FIELD(it, Pos, 0);
    const Vel *v = ECS_FIELD(it, Vel, 1);
    for (int i = 0; i < it->count; i++) p[i].x += v[i].x * it->dt;
}
static void burn(ecs_iter *it) {   /* past x = 5 is lava */
    const Pos *p = ECS_FIELD(it, Pos, 0);
    Hp *h = ECS_FIELD(it, Hp, 1);
    for (int i = 0; i < it->count; i++) if (p[i].x > 5) h[i].hp--;
}
static void die(ecs_iter *it) {   /* sees this step's damage: a sync point came between */
    const Hp *h = ECS_FIELD(it, Hp, 0);
    for (int i = 0; i < it->count; i++) if (h[i].hp <= 0) ecs_cmd_destroy(it->commands, it->entities[i]);
}
static void ui(ecs_iter *it) {   /* unscaled: it->dt is the real frame time, also in slow motion */
    Hud *h = (Hud *)ecs_resource_get(it->world, ((const game *)it->ctx)->hud);
    h->real_time += it->dt;
}

static float next_dt(void) {   /* 1/144 s +-25%, from a fixed-seed LCG: no real clock */
    static uint32_t seed = 12345;
    seed = seed * 1664525u + 1013904223u;
    return (1.0f / 144) * (0.75f + 0.5f * (float)(seed >> 8) / 16777216.0f);
}
static Input keys(int frame) {   /* Escape pauses at 200 and resumes at 320; S: slow motion 440-680 */
    return (Input){.escape = frame == 200 || frame == 320, .slow = frame == 440 || frame == 680};
}
static uint64_t runs(ecs_world *w, ecs_system s) {
    ecs_system_stats st = {0};
    ecs_system_stats_get(w, s, &st);
    return st.runs;
}
static uint64_t steps(ecs_world *w, ecs_stage st) {
    ecs_stage_stats s = {0};
    ecs_stage_stats_get(w, st, &s);
    return s.steps;
}

int main(void) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    game g;
    g.pos = ECS_COMPONENT(w, Pos);
    g.vel = ECS_COMPONENT(w, Vel);
    g.hp = ECS_COMPONENT(w, Hp);
    g.boss = ECS_RESOURCE(w, Boss, NULL);
    g.input = ECS_RESOURCE(w, Input, NULL);
    g.hud = ECS_RESOURCE(w, Hud, NULL);
    g.physics = ecs_stage_init(w, &(ecs_stage_desc){.name = "physics", .fixed_dt = 1.0f / 60});
    ecs_stage damage = ecs_stage_init(w, &(ecs_stage_desc){.name = "damage", .step_with = g.physics});
    ecs_stage death = ecs_stage_init(w, &(ecs_stage_desc){.name = "death", .step_with = g.physics});
    ecs_stage menu = ecs_stage_init(w, &(ecs_stage_desc){.name = "ui", .unscaled = true});

    ecs_system_add(w, &(ecs_system_desc){.name = "input", .fn = input, .ctx = &g,
        .flags = ECS_SYSTEM_MAIN_THREAD, .reads = {g.input}});
    ecs_system s_spawn = ecs_system_add(w, &(ecs_system_desc){.name = "spawn", .fn = spawn, .ctx = &g,
        .stage = g.physics, .writes = {g.boss}, .interval = 90});
    ecs_system s_boss = ecs_system_add(w, &(ecs_system_desc){.name = "boss_ai", .fn = boss_ai, .ctx = &g,
        .stage = g.physics, .writes = {g.boss}, .run_if = boss_present, .run_if_ctx = &g});
    ecs_system_add(w, &(ecs_system_desc){.name = "move", .fn = move, .stage = g.physics,
        .terms = {ECS_TERM_W(g.pos), ECS_TERM_R(g.vel)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "burn", .fn = burn, .stage = damage,
        .terms = {ECS_TERM_R(g.pos), ECS_TERM_W(g.hp)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "die", .fn = die, .stage = death,
        .terms = {ECS_TERM_R(g.hp)}});
    ecs_system s_ui = ecs_system_add(w, &(ecs_system_desc){.name = "ui", .fn = ui, .ctx = &g,
        .stage = menu, .writes = {g.hud}});
    if (!death || !s_ui || ecs_validate(w, NULL) != ECS_OK) { printf("%s\n", ecs_last_error(w)); return 1; }

    printf("frames   real s  steps  game s  spawn  boss  ui  enemies  alpha\n");
    uint64_t last_steps = 0, last_spawn = 0, last_boss = 0, last_ui = 0;
    for (int f = 0; f < FRAMES; f++) {   /* the render loop */
        Input in = keys(f);
        *(Input *)ecs_resource_get(w, g.input) = in;
        if (ecs_progress(w, next_dt()) != ECS_OK) { printf("%s\n", ecs_last_error(w)); return 1; }
        if (in.escape)
            printf("-- frame %d: Escape, %s\n", f, ecs_stage_enabled(w, g.physics) ? "resumed" : "paused");
        if (in.slow) printf("-- frame %d: S, time scale %.2f\n", f, (double)ecs_world_time_scale(w));
        if ((f + 1) % WINDOW) continue;
        /* a renderer would draw each enemy at prev + (pos - prev) * alpha */
        uint64_t n = steps(w, g.physics), sp = runs(w, s_spawn), bo = runs(w, s_boss), u = runs(w, s_ui);
        printf("%3d-%3d  %6.2f  %5d  %6.2f  %5d  %4d  %2d  %7zu  %5.2f\n", f + 1 - WINDOW, f,
               ((const Hud *)ecs_resource_get(w, g.hud))->real_time, (int)(n - last_steps), (double)n / 60,
               (int)(sp - last_spawn), (int)(bo - last_boss), (int)(u - last_ui), ecs_count(w),
               (double)ecs_stage_alpha(w, g.physics));
        last_steps = n, last_spawn = sp, last_boss = bo, last_ui = u;
    }
    ecs_stage_stats ps = {0};
    ecs_stage_stats_get(w, g.physics, &ps);
    printf("%d frames: %llu steps of physics, %llu of damage, %llu of death; spawn ran %llu times, "
           "boss_ai %llu; %.3f s dropped\n", FRAMES, (unsigned long long)ps.steps,
           (unsigned long long)steps(w, damage), (unsigned long long)steps(w, death),
           (unsigned long long)runs(w, s_spawn), (unsigned long long)runs(w, s_boss), ps.dropped_time);
    ecs_world_free(w);
    return 0;
}
