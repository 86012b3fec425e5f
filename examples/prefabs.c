/* prefabs.c - templates instantiated in bulk and from systems, then drawn
   back to front, layer by layer.

   A Tank prefab has a Turret child prefab whose Owner field points at the
   tank. ecs_instantiate_many makes 10,000 tanks, each with its own turret
   whose Owner names its own tank (entity fields into the prefab's tree are
   rewritten). A chunked "factory" system spawns a few more with
   ecs_cmd_instantiate: they appear at the sync point, in the same order on
   any number of threads. Prefabs themselves never show up in the game's
   queries or in ecs_count.
   "draw" is a MAIN_THREAD system with order_by on the y of Position and
   group_by on the render layer (a tag): ground units first, then air, each
   layer back to front. Between frames only the rows that moved are
   re-sorted. The program checks the order it drew and prints a summary;
   argv[1] threads (default 4). */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct { float x, y; } Position;
typedef struct { float vy; } Speed;
typedef struct { ecs_entity tank; } Owner;

enum { TANKS = 10000, FRAMES = 10 };
typedef struct game { ecs_id pos, speed, owner, ground, air; ecs_entity tank; } game;
typedef struct drawn { long rows, layers_seen, out_of_order; uint64_t layer; float last_y; } drawn;

/* Chunked: every tank drives; one in 2,000 orders a new tank for next frame. */
static void factory(ecs_iter *it) {
    const game *g = (const game *)it->ctx;
    Position *p = ECS_FIELD(it, Position, 0);
    const Speed *s = ECS_FIELD(it, Speed, 1);
    for (int i = 0; i < it->count; i++) {
        p[i].y += s[i].vy * it->dt;
        if ((ecs_entity)(it->entities[i] >> 3) % 2000 != 0) continue;
        ecs_entity t = ecs_cmd_instantiate(it->commands, g->tank);
        if (t) ecs_cmd_set(it->commands, t, g->pos, &(Position){p[i].x, p[i].y - 1.f});
    }
}

/* The render layer of a table: 1 for air units, else 0 (pure: no calls). */
static uint64_t layer_of(const ecs_world *w, const ecs_id *ids, int n, void *ctx) {
    const game *g = (const game *)ctx;
    (void)w;
    for (int i = 0; i < n; i++) if (ids[i] == g->air) return 1;
    return 0;
}

static int by_y(ecs_entity a, const void *va, ecs_entity b, const void *vb, void *ctx) {
    float ya = ((const Position *)va)->y, yb = ((const Position *)vb)->y;
    (void)a; (void)b; (void)ctx;
    return (ya > yb) - (ya < yb);
}

/* "Draws" in the order it is handed: checks that y ascends within a layer. */
static void draw(ecs_iter *it) {
    drawn *d = (drawn *)it->ctx;
    const Position *p = ECS_FIELD(it, Position, 0);
    if (it->batch == 0 || ecs_iter_group(it) != d->layer) {
        d->layer = ecs_iter_group(it);
        d->layers_seen++;
        d->last_y = -1e30f;
    }
    for (int i = 0; i < it->count; i++, d->rows++) {
        if (p[i].y < d->last_y) d->out_of_order++;
        d->last_y = p[i].y;
    }
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = threads});
    if (!w) return 1;
    static game g;
    g.pos = ECS_COMPONENT(w, Position);
    g.speed = ECS_COMPONENT(w, Speed);
    g.owner = ecs_component_init(w, &(ecs_component_desc){.name = "Owner", .size = sizeof(Owner),
        .align = _Alignof(Owner), .entity_fields = {offsetof(Owner, tank)}, .entity_field_count = 1});
    g.ground = ECS_TAG(w, Ground);
    g.air = ECS_TAG(w, Air);

    /* The templates: a tank with a turret child whose owner is the tank. */
    g.tank = ecs_prefab_new(w);
    ecs_entity turret = ecs_prefab_new(w);
    ecs_set(w, g.tank, g.pos, &(Position){0, 0});
    ecs_set(w, g.tank, g.speed, &(Speed){1});
    ecs_add(w, g.tank, g.ground);
    ecs_set(w, turret, g.owner, &(Owner){g.tank});
    ecs_set_parent(w, turret, g.tank);

    static ecs_entity army[TANKS];
    if (ecs_instantiate_many(w, g.tank, TANKS, army)) return 1;
    for (int i = 0; i < TANKS; i++) {   /* spread them out; every fourth one flies */
        ecs_set(w, army[i], g.pos, &(Position){(float)(i % 100), (float)((i * 7919) % TANKS)});
        ecs_set(w, army[i], g.speed, &(Speed){(float)(i % 13) - 6.f});
        if (i % 4 == 0) { ecs_remove(w, army[i], g.ground); ecs_add(w, army[i], g.air); }
    }
    ecs_entity kids[1];
    const Owner *o = ecs_children(w, army[42], kids, 1) == 1 ? ecs_get(w, kids[0], g.owner) : NULL;
    if (!o || o->tank != army[42]) { fprintf(stderr, "turret owner not remapped\n"); return 1; }

    static drawn d;
    ecs_system_add(w, &(ecs_system_desc){.name = "factory", .fn = factory, .ctx = &g, .chunk_size = 1024,
                                         .terms = {ECS_TERM_W(g.pos), ECS_TERM_R(g.speed)}});
    ecs_system_add(w, &(ecs_system_desc){.name = "draw", .fn = draw, .ctx = &d, .after = {"factory"},
                                         .flags = ECS_SYSTEM_MAIN_THREAD, .terms = {ECS_TERM_R(g.pos)},
                                         .order_by = g.pos, .compare = by_y,
                                         .group_by = layer_of, .group_ctx = &g});
    for (int f = 0; f < FRAMES; f++) {
        d.rows = 0;
        d.layers_seen = 0;
        if (ecs_progress(w, 1.f / 60)) { fprintf(stderr, "frame %d: %s\n", f, ecs_last_error(w)); return 1; }
        if (d.out_of_order || d.layers_seen != 2) { fprintf(stderr, "frame %d drawn out of order\n", f); return 1; }
    }
    printf("%zu entities (tanks and turrets; the 2 prefabs not counted), last frame drew %ld rows "
           "in %ld layers back to front; world hash %016llx\n", ecs_count(w), d.rows, d.layers_seen,
           (unsigned long long)ecs_world_hash(w));
    ecs_world_free(w);
    return 0;
}
