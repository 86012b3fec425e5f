/* quickstart.c - the smallest complete ecs.h program.

   Registers two components, creates three entities, and moves them with one
   query loop: each batch of the loop is one archetype table, and ECS_FIELD
   hands out its columns as plain arrays. (README.md opens with the same
   world run by systems.) */
#define ECS_IMPLEMENTATION
#include "ecs.h"
#include <stdio.h>

typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;

int main(void) {
    ecs_world *w = ecs_world_new(NULL);
    ecs_id pos = ECS_COMPONENT(w, Position);
    ecs_id vel = ECS_COMPONENT(w, Velocity);
    for (int i = 0; i < 3; i++) {
        ecs_entity e = ecs_create(w);
        ecs_set(w, e, pos, &(Position){0, 0});
        ecs_set(w, e, vel, &(Velocity){1, (float)i});
    }
    ecs_query *q = ecs_query_new(w, &(ecs_query_desc){
        .terms = {ECS_TERM_W(pos), ECS_TERM_R(vel)}});
    for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);) {
        Position *p = ECS_FIELD(&it, Position, 0);
        const Velocity *v = ECS_FIELD(&it, Velocity, 1);
        for (int i = 0; i < it.count; i++) {
            p[i].x += v[i].x; p[i].y += v[i].y;
            printf("%g %g\n", p[i].x, p[i].y);
        }
    }
    ecs_query_free(q);
    ecs_world_free(w);
}

