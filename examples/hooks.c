/* hooks.c - components that own memory, and parents with children.

   A Trail owns a malloc'd buffer of points: ecs_component_init gives it a
   constructor, a destructor, a copy and a move, and ecs.h calls each exactly
   once wherever a value is made, assigned, moved between tables or goes away.
   A ship and the shield orbs that point at it are spawned together from a
   system through it->commands: the orbs store the ship's *pending* handle in
   an entity field, and it becomes the live handle when the commands apply.
   The ship's first trail point comes from a local Trail the system frees
   right after ecs_cmd_set: the buffer keeps a copy of its own (made with the
   ctor and copy hooks, destroyed once applied). Destroying the ship destroys
   its orbs first (depth first, in the order they were attached), and every
   hook says what it saw. */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { float *xy; int n, cap; } Trail;        /* owns xy */
typedef struct { float angle; ecs_entity ship; } Orb;   /* ship: an entity field */
typedef struct { int hp; } Hull;

static long made, freed;
static void trail_ctor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        Trail *t = (Trail *)p + i;
        t->cap = 8; t->n = 0;
        t->xy = (float *)malloc(sizeof(float) * 2 * (size_t)t->cap);
        made++;
    }
}
static void trail_dtor(void *p, int n, void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) { free(((Trail *)p)[i].xy); freed++; }
}
static void trail_copy(void *dst, const void *src, int n, void *ctx) {   /* dst constructed */
    (void)ctx;
    for (int i = 0; i < n; i++) {
        Trail *d = (Trail *)dst + i;
        const Trail *s = (const Trail *)src + i;
        int keep = s->n < d->cap ? s->n : d->cap;
        memcpy(d->xy, s->xy, sizeof(float) * 2 * (size_t)keep);
        d->n = keep;
    }
}
static void trail_move(void *dst, const void *src, int n, void *ctx) {   /* dst raw, src left raw */
    (void)ctx;
    memcpy(dst, src, sizeof(Trail) * (size_t)n);
}
static void hull_gone(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx) {
    (void)w; (void)id; (void)ctx;
    printf("  on_remove: hull of #%u (hp %d)\n", (unsigned)e, ((Hull *)value)->hp);
}
static void orb_gone(ecs_world *w, ecs_entity e, ecs_id id, void *value, void *ctx) {
    (void)id; (void)ctx;
    const Orb *o = (const Orb *)value;
    printf("  on_remove: orb #%u of ship #%u (alive: %s)\n", (unsigned)e, (unsigned)o->ship,
           ecs_is_alive(w, o->ship) ? "yes" : "no");
}

typedef struct { ecs_id hull, orb, trail; } Ids;
static void spawn_fleet(ecs_iter *it) {   /* one ship with three orbs, once */
    const Ids *ids = (const Ids *)it->ctx;
    ecs_entity ship = ecs_cmd_create(it->commands);
    ecs_cmd_set(it->commands, ship, ids->hull, &(Hull){100});
    Trail start = {(float *)malloc(2 * sizeof(float)), 1, 1};   /* the system's own value */
    start.xy[0] = 0; start.xy[1] = 0;
    ecs_cmd_set(it->commands, ship, ids->trail, &start);   /* the buffer copies it now... */
    free(start.xy);                                         /* ...so it may go at once */
    for (int i = 0; i < 3; i++) {
        ecs_entity orb = ecs_cmd_create(it->commands);
        ecs_cmd_set(it->commands, orb, ids->orb, &(Orb){120.0f * (float)i, ship});
        ecs_cmd_set_parent(it->commands, orb, ship);
    }
}

int main(void) {
    ecs_world *w = ecs_world_new(NULL);
    Ids ids;
    ids.trail = ecs_component_init(w, &(ecs_component_desc){.name = "Trail", .size = sizeof(Trail),
        .align = _Alignof(Trail), .ctor = trail_ctor, .dtor = trail_dtor, .copy = trail_copy,
        .move = trail_move});
    ids.hull = ecs_component_init(w, &(ecs_component_desc){.name = "Hull", .size = sizeof(Hull),
        .align = _Alignof(Hull), .on_remove = hull_gone});
    ids.orb = ecs_component_init(w, &(ecs_component_desc){.name = "Orb", .size = sizeof(Orb),
        .align = _Alignof(Orb), .on_remove = orb_gone, .entity_fields = {offsetof(Orb, ship)},
        .entity_field_count = 1});
    ecs_system spawn = ecs_system_add(w, &(ecs_system_desc){.name = "spawn_fleet", .fn = spawn_fleet,
                                                            .ctx = &ids});
    if (!ids.trail || !ids.hull || !ids.orb || !spawn) { printf("%s\n", ecs_last_error(w)); return 1; }

    ecs_progress(w, 0);   /* the commands apply at the end of the stage */
    ecs_entity ship = 0;
    ecs_query *orbs = ecs_query_new(w, &(ecs_query_desc){.terms = {ECS_TERM_R(ids.orb)}});
    printf("after one frame: %zu entities; trails made %ld, freed %ld (the buffer's copy)\n", ecs_count(w),
           made, freed);
    for (ecs_iter it = ecs_query_iter(w, orbs); ecs_query_next(&it);) {
        const Orb *o = ECS_FIELD(&it, Orb, 0);
        for (int i = 0; i < it.count; i++) {
            printf("  orb #%u at %.0f degrees points at ship #%u; its parent is #%u\n", (unsigned)it.entities[i],
                   o[i].angle, (unsigned)o[i].ship, (unsigned)ecs_get_parent(w, it.entities[i]));
            ship = o[i].ship;
        }
    }
    ecs_entity kids[8];
    size_t n = ecs_children(w, ship, kids, 8);
    printf("ship #%u has %zu children\n", (unsigned)ship, n);

    Trail *t = (Trail *)ecs_get_mut(w, ship, ids.trail);
    t->xy[0] = 1; t->xy[1] = 2; t->n = 1;
    ecs_entity copy = ecs_create(w);
    ecs_set(w, copy, ids.trail, t);   /* constructed, then copied into */
    printf("a copy of the trail: %d point(s), its own buffer: %s\n",
           ((const Trail *)ecs_get(w, copy, ids.trail))->n,
           ((const Trail *)ecs_get(w, copy, ids.trail))->xy != t->xy ? "yes" : "no");

    printf("destroying ship #%u:\n", (unsigned)ship);
    ecs_destroy(w, ship);
    printf("left: %zu entities; trails made %ld, freed %ld\n", ecs_count(w), made, freed);
    ecs_query_free(orbs);
    ecs_world_free(w);
    printf("after ecs_world_free: trails made %ld, freed %ld\n", made, freed);
    return made == freed ? 0 : 1;
}
