/* events.c - systems that talk through events: one creep dies, four
   listeners hear it.

   "damage" is chunked (256 creeps per chunk, on every thread): a creep whose
   health drops to 0 emits a CreepDied event (through the chunk's emitter)
   and records its own destroy.
   At the end of its stage, the sync point, the destroys apply, then the
   observer sees all of the frame's deaths at once (it spawns particles with
   plain ecs_create/ecs_set, applied right after it), then the events become
   readable: in the next stage "gold", "score" and "sound" (MAIN_THREAD) each
   read every death exactly once. Emitters and readers never conflict, so
   nothing orders them but the stages, and the order of the events is the
   same on any number of threads. The game runs on argv[1] threads (default
   4), then again on 1 thread: the world hashes and totals must agree. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct { int hp, armor; } Health;
typedef struct { float x, vx; int life; } Particle;
typedef struct { long long coins; } Gold;
typedef struct { long long points, kills; } Score;
/* 16 bytes, no padding: payloads are hashed and saved as bytes (a padded
   struct would need a memset first). The creep is dead by the time anyone
   reads this, so it carries what they need: the bounty and where it fell. */
typedef struct { ecs_entity creep; int gold; float x; } CreepDied;

enum { CREEPS = 5000, FRAMES = 40 };
typedef struct game { ecs_id health, particle, gold, score, died; long sounds[2]; } game;

/* One chunk of creeps: 9 damage a frame, less armor. Its deaths go into
   the chunk's own buffer through an emitter, filled in place (the one-call
   form is ecs_emit(it, g->died, &(CreepDied){...})). */
static void damage(ecs_iter *it) {
    const game *g = (const game *)it->ctx;
    Health *h = ECS_FIELD(it, Health, 0);
    ecs_emitter *deaths = ECS_EMITTER(it, CreepDied, g->died);
    for (int i = 0; i < it->count; i++) {
        if ((h[i].hp -= 9 - h[i].armor) > 0) continue;
        CreepDied *ev = (CreepDied *)ecs_emitter_next(deaths, sizeof *ev);   /* zeroed */
        if (!ev) return;   /* out of memory: ecs_progress reports it */
        ev->creep = it->entities[i];
        ev->gold = 5 + 5 * h[i].armor;
        ev->x = (float)(it->entities[i] % 100);
        ecs_cmd_destroy(it->commands, it->entities[i]);
    }
}
static void fade(ecs_iter *it) {   /* particles drift and burn out */
    Particle *p = ECS_FIELD(it, Particle, 0);
    for (int i = 0; i < it->count; i++) {
        p[i].x += p[i].vx;
        if (--p[i].life == 0) ecs_cmd_destroy(it->commands, it->entities[i]);
    }
}
static void gold(ecs_iter *it) {   /* the readers: each gets this frame's deaths, in order */
    const game *g = (const game *)it->ctx;
    int n;
    const CreepDied *ev = ECS_EVENTS(it, CreepDied, g->died, &n);
    Gold *gd = (Gold *)ecs_resource_get(it->world, g->gold);
    for (int i = 0; i < n; i++) gd->coins += ev[i].gold;
}
static void score(ecs_iter *it) {   /* a streak bonus: order matters, and is the same on any threads */
    const game *g = (const game *)it->ctx;
    int n;
    const CreepDied *ev = ECS_EVENTS(it, CreepDied, g->died, &n);
    Score *s = (Score *)ecs_resource_get(it->world, g->score);
    for (int i = 0; i < n; i++) s->points += 100 + (++s->kills % 10 == 0 ? ev[i].gold * 10 : 0);
}
static void sound(ecs_iter *it) {   /* MAIN_THREAD: where an audio API wants to be called */
    game *g = (game *)it->ctx;
    int n;
    const CreepDied *ev = ECS_EVENTS(it, CreepDied, g->died, &n);
    for (int i = 0; i < n; i++) g->sounds[ev[i].gold >= 20]++;   /* "squish", or "CRUNCH" for armored */
}
/* Thread 0, once per sync point with all of its deaths. */
static void burst(ecs_world *w, ecs_id event, const void *payloads, int count, void *ctx) {
    const game *g = (const game *)ctx;
    const CreepDied *ev = (const CreepDied *)payloads;
    (void)event;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 3; k++) {
            ecs_entity e = ecs_create(w);
            ecs_set(w, e, g->particle, &(Particle){ev[i].x, (float)(k - 1) * 0.5f, 2 + k});
        }
}

typedef struct totals { long long coins, points, kills; long sounds[2]; size_t alive; uint64_t hash; } totals;

static int run(int threads, bool print, totals *out) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    game g = {0};
    g.health = ECS_COMPONENT(w, Health);
    g.particle = ECS_COMPONENT(w, Particle);
    g.gold = ECS_RESOURCE(w, Gold, NULL);
    g.score = ECS_RESOURCE(w, Score, NULL);
    g.died = ECS_EVENT(w, CreepDied);
    ecs_stage rewards = ecs_stage_add(w, "rewards");
    ecs_system_add(w, &(ecs_system_desc){.name = "damage", .fn = damage, .ctx = &g, .chunk_size = 256,
        .terms = {ECS_TERM_W(g.health)}, .emits = {g.died}});
    ecs_system_add(w, &(ecs_system_desc){.name = "fade", .fn = fade, .terms = {ECS_TERM_W(g.particle)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "gold", .fn = gold, .ctx = &g, .stage = rewards,
        .reads = {g.died}, .writes = {g.gold}});
    ecs_system_add(w, &(ecs_system_desc){.name = "score", .fn = score, .ctx = &g, .stage = rewards,
        .reads = {g.died}, .writes = {g.score}});
    ecs_system sfx = ecs_system_add(w, &(ecs_system_desc){.name = "sound", .fn = sound, .ctx = &g,
        .stage = rewards, .flags = ECS_SYSTEM_MAIN_THREAD, .reads = {g.died}});
    ecs_observer ob = ecs_observe(w, &(ecs_observer_desc){.event = g.died, .fn = burst, .ctx = &g,
        .writes = {g.particle}, .skip_when_resimulating = true});
    if (!sfx || !ob || ecs_validate(w, NULL) != ECS_OK) { printf("%s\n", ecs_last_error(w)); return 1; }

    uint32_t seed = 7;   /* a fixed-seed LCG: the same creeps every run */
    for (int i = 0; i < CREEPS; i++) {
        seed = seed * 1664525u + 1013904223u;
        ecs_set(w, ecs_create(w), g.health, &(Health){20 + (int)(seed >> 24) % 200, (int)(seed >> 8) % 4});
    }
    if (print) printf("frame  creeps  particles   gold   score  squish  CRUNCH\n");
    for (int f = 1; f <= FRAMES; f++) {
        if (ecs_progress(w, 1.0f / 60) != ECS_OK) { printf("%s\n", ecs_last_error(w)); return 1; }
        const Gold *gd = (const Gold *)ecs_resource_get(w, g.gold);
        const Score *sc = (const Score *)ecs_resource_get(w, g.score);
        if (print && f % 8 == 0)
            printf("%5d  %6lld  %9lld  %5lld  %6lld  %6ld  %6ld\n", f, CREEPS - sc->kills,
                   (long long)ecs_count(w) - (CREEPS - sc->kills), gd->coins, sc->points, g.sounds[0], g.sounds[1]);
        *out = (totals){gd->coins, sc->points, sc->kills, {g.sounds[0], g.sounds[1]}, ecs_count(w), 0};
    }
    out->hash = ecs_world_hash(w);
    ecs_world_free(w);
    return 0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    totals a, b;
    if (threads < 1 || run(threads, true, &a) || run(1, false, &b)) return 1;
    printf("%lld creeps died: %lld gold, %lld points, %ld + %ld sounds\n", a.kills, a.coins, a.points,
           a.sounds[0], a.sounds[1]);
    bool same = a.hash == b.hash && a.coins == b.coins && a.points == b.points && a.kills == b.kills &&
                a.sounds[0] == b.sounds[0] && a.sounds[1] == b.sounds[1] && a.alive == b.alive;
    printf("the same world hash and totals on 1 thread: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
}
