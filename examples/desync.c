/* desync.c - finding where two peers diverged, and proving the order of
   systems does not matter.

   Two peers run the same asteroid field in lockstep: peer A on one thread,
   peer B on two. From frame 120 peer B's renderer shakes the screen, and its
   "collide" system has a bug: it reads the shake, a value it never declared,
   so B's simulation drifts. The world hashes only say *that* the peers
   differ; the hash trace (an entry per system per turn, the same on any
   thread count) says *where*: the first entry that differs names the frame
   and the system. Then the correct game runs under five shuffle seeds
   (random order among unordered systems, random chunk order): the world
   hash does not move. ecs_random gives each asteroid its jitter without a
   shared random-number generator. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>
#include <stdlib.h>   /* malloc */
#include <string.h>

typedef struct { float x, y; } Pos;
typedef struct { float x, y; } Vel;
typedef struct { int hp; } Health;

enum { FRAMES = 200, BUG_FRAME = 120, ROCKS = 3000 };
typedef struct peer {
    ecs_world *w;
    ecs_id pos, vel, health;
    bool buggy;
    float shake;             /* the renderer's: presentation, not simulation */
    int drawn;               /* frames drawn */
    ecs_hash_step *trace;    /* every frame's entries, one after another */
    int *frame_at, total;    /* where each frame's entries start */
} peer;

static void thrust(ecs_iter *it) {   /* chunked: a little random push per rock */
    Vel *v = ECS_FIELD(it, Vel, 0);
    for (int i = 0; i < it->count; i++) {
        uint64_t r = ecs_random(it, i, 1);
        v[i].x += (float)((int)(r & 255) - 128) / 4096.0f;
        v[i].y += (float)((int)(r >> 8 & 255) - 128) / 4096.0f;
    }
}
static void move(ecs_iter *it) {
    Pos *p = ECS_FIELD(it, Pos, 0);
    const Vel *v = ECS_FIELD(it, Vel, 1);
    for (int i = 0; i < it->count; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
        if (p[i].x < -500 || p[i].x > 500) p[i].x = -p[i].x;
        if (p[i].y < -500 || p[i].y > 500) p[i].y = -p[i].y;
    }
}
static void collide(ecs_iter *it) {   /* rocks near the centre lose health */
    const peer *pe = (const peer *)it->ctx;
    const Pos *p = ECS_FIELD(it, Pos, 0);
    Health *h = ECS_FIELD(it, Health, 1);
    int damage = 1;
    if (pe->buggy) damage += (int)pe->shake;   /* THE BUG: reads the renderer's value */
    for (int i = 0; i < it->count; i++)
        if (p[i].x * p[i].x + p[i].y * p[i].y < 40 * 40) h[i].hp -= damage;
}
static void reap(ecs_iter *it) {
    const Health *h = ECS_FIELD(it, Health, 0);
    for (int i = 0; i < it->count; i++)
        if (h[i].hp <= 0) ecs_cmd_destroy(it->commands, it->entities[i]);
}
static void draw(ecs_iter *it) {   /* presentation: the screen shakes from frame 120 */
    peer *pe = (peer *)it->ctx;
    if (++pe->drawn >= BUG_FRAME) pe->shake = 3.5f;   /* (drawn after frame 119: read from 120) */
}

static void peer_init(peer *pe, int threads, bool buggy, uint64_t shuffle) {
    memset(pe, 0, sizeof *pe);
    pe->w = ecs_world_new(&(ecs_world_desc){.threads = threads, .shuffle_seed = shuffle, .random_seed = 2026});
    pe->buggy = buggy;
    ecs_world *w = pe->w;
    pe->pos = ECS_COMPONENT(w, Pos);
    pe->vel = ECS_COMPONENT(w, Vel);
    pe->health = ECS_COMPONENT(w, Health);
    ecs_stage sim = ecs_stage_add(w, "simulate");
    ecs_stage show = ecs_stage_init(w, &(ecs_stage_desc){.name = "draw", .presentation = true});
    ecs_system_add(w, &(ecs_system_desc){.name = "thrust", .fn = thrust, .stage = sim, .chunk_size = 256,
        .terms = {ECS_TERM_W(pe->vel)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "move", .fn = move, .stage = sim, .chunk_size = 256,
        .terms = {ECS_TERM_W(pe->pos), ECS_TERM_R(pe->vel)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "collide", .fn = collide, .ctx = pe, .stage = sim,
        .chunk_size = 256, .terms = {ECS_TERM_R(pe->pos), ECS_TERM_W(pe->health)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "reap", .fn = reap, .stage = sim,
        .terms = {ECS_TERM_R(pe->health)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "draw", .fn = draw, .ctx = pe, .stage = show,
        .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {ECS_TERM_R(pe->pos)}});
    uint32_t r = 7;   /* the same field on every peer (and every libc: not rand()) */
    for (int i = 0; i < ROCKS; i++) {
        int v[5];
        for (int k = 0; k < 5; k++) v[k] = (int)((r = r * 1664525u + 1013904223u) >> 8);
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, pe->pos, &(Pos){(float)(v[0] % 1000 - 500), (float)(v[1] % 1000 - 500)});
        ecs_set(w, e, pe->vel, &(Vel){(float)(v[2] % 9 - 4) / 4, (float)(v[3] % 9 - 4) / 4});
        ecs_set(w, e, pe->health, &(Health){20 + v[4] % 20});
    }
    ecs_hash_trace_enable(w, true);
}

/* One frame; the peer keeps the frame's trace entries. */
static void peer_step(peer *pe, int f) {
    if (ecs_progress(pe->w, 1.0f / 60) != ECS_OK) printf("frame %d: %s\n", f, ecs_last_error(pe->w));
    const ecs_hash_step *steps;
    int n = ecs_hash_trace(pe->w, &steps);
    if (!pe->trace) {
        pe->trace = (ecs_hash_step *)malloc((size_t)n * FRAMES * sizeof *steps);
        pe->frame_at = (int *)malloc((FRAMES + 1) * sizeof *pe->frame_at);
        if (!pe->trace || !pe->frame_at) exit(1);
    }
    pe->frame_at[f] = pe->total;
    memcpy(pe->trace + pe->total, steps, (size_t)n * sizeof *steps);
    pe->total += n;
    pe->frame_at[f + 1] = pe->total;
}

static void peer_free(peer *pe) {
    free(pe->trace);
    free(pe->frame_at);
    ecs_world_free(pe->w);
}

int main(void) {
    peer a, b;
    peer_init(&a, 1, false, 0);
    peer_init(&b, 2, true, 0);
    for (int f = 0; f < FRAMES; f++) { peer_step(&a, f); peer_step(&b, f); }
    uint64_t ha = ecs_world_hash(a.w), hb = ecs_world_hash(b.w);
    printf("after %d frames: peer A (1 thread) %016llx, peer B (2 threads) %016llx -> %s\n", FRAMES,
           (unsigned long long)ha, (unsigned long long)hb, ha == hb ? "in sync" : "DESYNC");

    int found = -1, frame = -1;   /* the first entry that differs */
    for (int f = 0; f < FRAMES && found < 0; f++)
        for (int k = a.frame_at[f]; k < a.frame_at[f + 1]; k++)
            if (a.trace[k].hash != b.trace[k].hash || a.trace[k].ran != b.trace[k].ran) { found = k; frame = f; break; }
    if (found >= 0) {
        const ecs_hash_step *e = &a.trace[found];
        printf("first difference: frame %d, stage \"%s\", %s%s%s\n", frame, ecs_stage_name(a.w, e->stage),
               e->system ? "system \"" : "the sync point", e->system ? ecs_system_name(a.w, e->system) : "",
               e->system ? "\"" : "");
        printf("  (%d entries agreed before it: every frame before %d, then this frame's", found, frame);
        for (int k = a.frame_at[frame]; k < found; k++)
            if (a.trace[k].system) printf(" %s,", ecs_system_name(a.w, a.trace[k].system));
            else printf(" \"%s\" sync point,", ecs_stage_name(a.w, a.trace[k].stage));
        printf(" and no more)\n");
    }

    printf("the correct game under 5 shuffle seeds, 2 threads:\n");
    uint64_t first = 0;
    bool stable = true;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        peer s;
        peer_init(&s, 2, false, seed * 0x9e3779b97f4a7c15ull);
        for (int f = 0; f < FRAMES; f++) peer_step(&s, f);
        uint64_t h = ecs_world_hash(s.w);
        if (seed == 1) first = h;
        stable &= h == first && h == ha;
        printf("  seed %llu: %016llx (%zu rocks left)\n", (unsigned long long)seed, (unsigned long long)h, ecs_count(s.w));
        peer_free(&s);
    }
    printf("%s\n", stable ? "stable: the same as peer A under every seed" : "UNSTABLE: the result depends on the order");

    bool named = found >= 0 && frame == BUG_FRAME && a.trace[found].system &&
                 !strcmp(ecs_system_name(a.w, a.trace[found].system), "collide");
    peer_free(&a);
    peer_free(&b);
    return ha != hb && named && stable ? 0 : 1;
}
