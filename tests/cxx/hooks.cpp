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
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
