/* rollback.c - rollback netcode and save games from snapshots.

   Two players steer dots around an arena; bullets spawn and die through
   commands, on two threads. Every frame the game takes a snapshot. At frame
   40 player 2's input for frame 32 arrives late: the game restores the
   snapshot of frame 32, applies the input and simulates the 8 frames again.
   Its world hash then matches a run that had the input on time. Finally it
   saves the world to a file, loads it into a second world that registered
   its components in another order, and both run on to the same hash. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>
#include <string.h>

typedef struct { float x, y; } Pos;
typedef struct { float x, y; } Vel;
typedef struct { int owner; int ttl; } Bullet;
typedef struct { int player; } Player;
typedef struct { int turn[2]; int fire[2]; } Input;   /* this frame's input, per player */
typedef struct { int hits[2]; } Score;

enum { FRAMES = 60, LATE_FRAME = 32, ARRIVES = 40, HISTORY = 64 };
typedef struct game { ecs_world *w; ecs_id pos, vel, bullet, player, input, score; } game;

static void steer(ecs_iter *it) {   /* players turn and fire by the frame's input */
    const game *g = (const game *)it->ctx;
    const Input *in = (const Input *)ecs_resource_get(it->world, g->input);
    Vel *v = ECS_FIELD(it, Vel, 0);
    const Player *pl = ECS_FIELD(it, Player, 1);
    const Pos *p = ECS_FIELD(it, Pos, 2);
    for (int i = 0; i < it->count; i++) {
        int k = pl[i].player;
        float t = 0.25f * (float)in->turn[k];
        Vel nv = {v[i].x - t * v[i].y, v[i].y + t * v[i].x};
        v[i] = nv;
        if (!in->fire[k]) continue;
        ecs_entity b = ecs_cmd_create(it->commands);
        ecs_cmd_set(it->commands, b, g->pos, &p[i]);
        ecs_cmd_set(it->commands, b, g->vel, &(Vel){v[i].x * 3, v[i].y * 3});
        ecs_cmd_set(it->commands, b, g->bullet, &(Bullet){k, 12});
    }
}
static void move(ecs_iter *it) {   /* chunked: the rows split across threads */
    Pos *p = ECS_FIELD(it, Pos, 0);
    const Vel *v = ECS_FIELD(it, Vel, 1);
    for (int i = 0; i < it->count; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
        if (p[i].x < -100 || p[i].x > 100) p[i].x = -p[i].x * 0.99f;
        if (p[i].y < -100 || p[i].y > 100) p[i].y = -p[i].y * 0.99f;
    }
}
static void age(ecs_iter *it) {   /* bullets expire; an expiring one scores for its owner */
    const game *g = (const game *)it->ctx;
    Bullet *b = ECS_FIELD(it, Bullet, 0);
    for (int i = 0; i < it->count; i++)
        if (--b[i].ttl == 0) ecs_cmd_destroy(it->commands, it->entities[i]);
    (void)g;
}
static void score(ecs_iter *it) {   /* on the main thread: reads bullets, writes Score */
    const game *g = (const game *)it->ctx;
    Score *s = (Score *)ecs_resource_get(it->world, g->score);
    const Bullet *b = ECS_FIELD(it, Bullet, 0);
    for (int i = 0; i < it->count; i++) if (b[i].ttl == 1) s->hits[b[i].owner]++;
}

static void game_init(game *g, bool other_order) {
    g->w = ecs_world_new(&(ecs_world_desc){.threads = 2});
    ecs_world *w = g->w;
    if (other_order) {   /* another build: the same components under other ids */
        g->score = ECS_RESOURCE(w, Score, NULL);
        g->input = ECS_RESOURCE(w, Input, NULL);
        g->player = ECS_COMPONENT(w, Player);
        g->bullet = ECS_COMPONENT(w, Bullet);
        g->vel = ECS_COMPONENT(w, Vel);
        g->pos = ECS_COMPONENT(w, Pos);
    } else {
        g->pos = ECS_COMPONENT(w, Pos);
        g->vel = ECS_COMPONENT(w, Vel);
        g->bullet = ECS_COMPONENT(w, Bullet);
        g->player = ECS_COMPONENT(w, Player);
        g->input = ECS_RESOURCE(w, Input, NULL);
        g->score = ECS_RESOURCE(w, Score, NULL);
    }
    ecs_system_add(w, &(ecs_system_desc){.name = "steer", .fn = steer, .ctx = g,
        .terms = {ECS_TERM_W(g->vel), ECS_TERM_R(g->player), ECS_TERM_R(g->pos)}, .reads = {g->input}});
    ecs_system_add(w, &(ecs_system_desc){.name = "move", .fn = move, .chunk_size = 64,
        .terms = {ECS_TERM_W(g->pos), ECS_TERM_R(g->vel)}, .after = {"steer"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "score", .fn = score, .ctx = g, .flags = ECS_SYSTEM_MAIN_THREAD,
        .terms = {ECS_TERM_R(g->bullet)}, .writes = {g->score}});
    ecs_system_add(w, &(ecs_system_desc){.name = "age", .fn = age, .ctx = g,
        .terms = {ECS_TERM_W(g->bullet)}, .after = {"score"}});
    for (int k = 0; k < 2; k++) {
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, g->pos, &(Pos){k ? 50.0f : -50.0f, 0});
        ecs_set(w, e, g->vel, &(Vel){0, k ? 1.0f : -1.0f});
        ecs_set(w, e, g->player, &(Player){k});
    }
}

/* The input both players sent for frame f (player 2's for LATE_FRAME is
   what arrives late). */
static Input input_for(int f, bool with_late) {
    Input in = {{(f / 5) % 3 - 1, (f / 7) % 3 - 1}, {f % 4 == 0, f % 6 == 3}};
    if (f == LATE_FRAME) { in.turn[1] = with_late ? 1 : 0; in.fire[1] = with_late; }
    return in;
}
static void step(game *g, int f, bool with_late) {
    *(Input *)ecs_resource_get(g->w, g->input) = input_for(f, with_late);
    ecs_result r = ecs_progress(g->w, 1.0f / 60);
    if (r != ECS_OK) printf("frame %d: %s\n", f, ecs_last_error(g->w));
}

int main(void) {
    game on_time, live, never;
    game_init(&on_time, false);
    game_init(&live, false);
    game_init(&never, false);
    if (ecs_validate(live.w, NULL) != ECS_OK) { puts("the systems do not validate"); return 1; }

    /* the reference: the late input was there all along */
    for (int f = 0; f < FRAMES; f++) step(&on_time, f, true);
    for (int f = 0; f < FRAMES; f++) step(&never, f, false);   /* and one that never got it */

    /* the live game: snapshot before every frame; the input shows up at ARRIVES */
    ecs_snapshot *history[HISTORY] = {0};
    for (int f = 0; f < FRAMES; f++) {
        ecs_snapshot_free(history[f % HISTORY]);
        history[f % HISTORY] = ecs_snapshot_take(live.w);
        step(&live, f, f > ARRIVES);
        if (f == ARRIVES) {
            printf("frame %d: player 2's input for frame %d arrives; rolling back %d frames\n", f,
                   LATE_FRAME, f + 1 - LATE_FRAME);
            ecs_snapshot_restore(live.w, history[LATE_FRAME % HISTORY]);
            for (int r = LATE_FRAME; r <= f; r++) {   /* the history is rewritten as it goes */
                if (r > LATE_FRAME) {
                    ecs_snapshot_free(history[r % HISTORY]);
                    history[r % HISTORY] = ecs_snapshot_take(live.w);
                }
                step(&live, r, true);
            }
        }
    }
    uint64_t a = ecs_world_hash(on_time.w), b = ecs_world_hash(live.w);
    const Score *sa = (const Score *)ecs_resource_get(on_time.w, on_time.score);
    const Score *sb = (const Score *)ecs_resource_get(live.w, live.score);
    printf("after %d frames: on time %016llx (%zu entities, score %d:%d)\n", FRAMES, (unsigned long long)a,
           ecs_count(on_time.w), sa->hits[0], sa->hits[1]);
    printf("               never got it %016llx\n", (unsigned long long)ecs_world_hash(never.w));
    printf("               rolled back %016llx (%zu entities, score %d:%d) -> %s\n", (unsigned long long)b,
           ecs_count(live.w), sb->hits[0], sb->hits[1], a == b ? "identical" : "DIFFERENT");

    /* a save file, loaded by a build that registers the components in another order */
    FILE *f = tmpfile();
    ecs_snapshot *now = ecs_snapshot_take(live.w);
    game loaded;
    game_init(&loaded, true);
    ecs_snapshot *read = NULL;
    if (f && now && ecs_snapshot_write(now, f) == ECS_OK) {
        printf("saved %ld bytes\n", ftell(f));
        rewind(f);
        read = ecs_snapshot_read(loaded.w, f);
    }
    if (!read || ecs_snapshot_restore(loaded.w, read) != ECS_OK) {
        printf("loading failed: %s\n", ecs_last_error(loaded.w));
        return 1;
    }
    for (int k = FRAMES; k < FRAMES + 30; k++) { step(&live, k, true); step(&loaded, k, true); }
    uint64_t c = ecs_world_hash(live.w), d = ecs_world_hash(loaded.w);
    printf("30 frames after loading: saved world %016llx, loaded world %016llx -> %s\n",
           (unsigned long long)c, (unsigned long long)d, c == d ? "identical" : "DIFFERENT");

    if (f) fclose(f);
    ecs_snapshot_free(read);
    ecs_snapshot_free(now);
    for (int i = 0; i < HISTORY; i++) ecs_snapshot_free(history[i]);
    ecs_world_free(loaded.w);
    ecs_world_free(live.w);
    ecs_world_free(on_time.w);
    ecs_world_free(never.w);
    return a == b && c == d ? 0 : 1;
}
