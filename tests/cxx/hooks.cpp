// C++ components that own memory: ECS_COMPONENT gives a type with a
// std::string its constructors and destructor (built under ASan: no leak, no
// double free). Ends with "N passed, N failed".
#include "../../ecs.h"
#include <cstdio>
#include <string>
#include <vector>

struct Name { std::string text; int uses = 7; };
struct Pos { float x, y; };
static int failed, passed;
#define EXPECT(c) do { if (c) passed++; else { failed++; std::printf("%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

// A system names what it spawns from a local that dies when the function
// returns: the buffer holds its own copy (short strings point into the
// local itself, which ASan's detect_stack_use_after_return poisons).
static ecs_id name_id;
static void record_name(ecs_commands *c, ecs_entity e, int i) {
    Name n;
    n.text = "unit" + std::to_string(i);   // short: kept inside n
    n.uses = i;
    ecs_cmd_set(c, e, name_id, &n);
}
static void spawn_named(ecs_iter *it) {
    for (int i = 0; i < it->count; i++) record_name(it->commands, ecs_cmd_create(it->commands), i);
}
static void defer_name(ecs_world *w, ecs_entity e, const char *text) {
    Name n;
    n.text = text;
    ecs_set(w, e, name_id, &n);
}

int main() {
    ecs_world *w = ecs_world_new(nullptr);
    ecs_id name = ECS_COMPONENT(w, Name), pos = ECS_COMPONENT(w, Pos);
    EXPECT(name != 0 && pos != 0);
    std::vector<ecs_entity> es;
    for (int i = 0; i < 500; i++) {   // table growth moves the strings
        ecs_entity e = ecs_create(w);
        Name n;
        n.text = std::string(40, static_cast<char>('a' + i % 26)) + std::to_string(i);
        ecs_set(w, e, name, &n);
        es.push_back(e);
    }
    for (size_t i = 0; i < es.size(); i += 2) ecs_add(w, es[i], pos);   // table moves
    for (size_t i = 1; i < es.size(); i += 7) ecs_destroy(w, es[i]);    // swap-removes
    const Name *n = static_cast<const Name *>(ecs_get(w, es[4], name));
    EXPECT(n && n->text == std::string(40, 'e') + "4" && n->uses == 7);
    ecs_entity fresh = ecs_create(w);
    ecs_add(w, fresh, name);   // default constructed
    n = static_cast<const Name *>(ecs_get(w, fresh, name));
    EXPECT(n && n->text.empty() && n->uses == 7);
    ecs_remove(w, es[10], name);
    EXPECT(!ecs_has(w, es[10], name));
    ecs_world_free(w);   // destroys what is left

    for (int threads = 1; threads <= 8; threads *= 2) {   // buffers hold constructed copies
        ecs_world_desc d = ecs_world_desc();
        d.threads = threads;
        w = ecs_world_new(&d);
        name_id = ECS_COMPONENT(w, Name);
        ecs_id spawner = ECS_COMPONENT(w, Pos);
        for (int i = 0; i < 40; i++) ecs_add(w, ecs_create(w), spawner);
        ecs_system_desc sd = ecs_system_desc();
        sd.name = "SpawnNamed";
        sd.fn = spawn_named;
        sd.terms[0].id = spawner;
        sd.chunk_size = 8;
        EXPECT(ecs_system_add(w, &sd) != 0);
        EXPECT(ecs_progress(w, 0) == ECS_OK);
        ecs_query_desc qd = ecs_query_desc();
        qd.terms[0].id = name_id;
        ecs_query *q = ecs_query_new(w, &qd);
        int seen = 0;
        for (ecs_iter it = ecs_query_iter(w, q); ecs_query_next(&it);)
            for (int i = 0; i < it.count; i++, seen++) {
                const Name *got = static_cast<const Name *>(ecs_field(&it, 0)) + i;
                EXPECT(got->text == "unit" + std::to_string(seen % 8) && got->uses == seen % 8);
            }
        EXPECT(seen == 40);
        ecs_query_free(q);
        ecs_entity e = ecs_create(w);   // a deferred ecs_set from a local that dies first
        ecs_defer_begin(w);
        defer_name(w, e, "short");
        defer_name(w, e, std::string(60, 'x').c_str());
        ecs_commands *unapplied = ecs_commands_new(w);
        record_name(unapplied, e, 3);
        EXPECT(ecs_defer_end(w) == ECS_OK);
        const Name *n2 = static_cast<const Name *>(ecs_get(w, e, name_id));
        EXPECT(n2 && n2->text == std::string(60, 'x'));
        ecs_world_free(w);   // the unapplied buffer's copy is destroyed too (no leak)
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
