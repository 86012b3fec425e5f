/* validation tests for disjoint queries, WRITERS_FIRST loops, shortest
   cycles with members, read-before-write notes, the report cap, and the
   exact text of each message shape (the README's table copies these). */
#include "test.h"

typedef struct { float x, y; } vl_pos;
static void vl_nop(ecs_iter *it) { (void)it; }
static ecs_world *vl_world(ecs_order order) {
    return ecs_world_new(&(ecs_world_desc){.threads = 1, .order = order});
}
static const ecs_problem *vl_kind(const ecs_report *r, ecs_problem_kind k) {
    for (int i = 0; i < r->count; i++) if (r->problems[i].kind == k) return &r->problems[i];
    return NULL;
}

/* MoveLive (WRITE Position, NOT Frozen) and MoveFrozen (WRITE Position, AND
   Frozen) never touch the same row: no race, no order, in every mode. */
TEST(validation_disjoint_queries) {
    for (int o = 0; o < 3; o++) {
        ecs_world *w = vl_world((ecs_order)o);
        REQUIRE(w);
        ecs_id pos = ecs_component(w, "Position", sizeof(vl_pos), 0), frozen = ecs_component(w, "Frozen", 0, 0);
        ecs_system live = ecs_system_add(w, &(ecs_system_desc){.name = "MoveLive", .fn = vl_nop,
            .terms = {{pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_NOT}}});
        ecs_system cold = ecs_system_add(w, &(ecs_system_desc){.name = "MoveFrozen", .fn = vl_nop,
            .terms = {{pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_AND}}});
        ecs_system all = ecs_system_add(w, &(ecs_system_desc){.name = "DrawAll", .fn = vl_nop,
            .terms = {{pos, ECS_READ, ECS_AND}}, .after = {"MoveLive", "MoveFrozen"}});
        REQUIRE(live && cold && all);
        ecs_report r;
        CHECKF(ecs_validate(w, &r) == ECS_OK, "order %d: %s", o, r.count ? r.problems[0].message : "");
        CHECK(!ecs_system_precedes(w, live, cold) && !ecs_system_precedes(w, cold, live));
        ecs_world_free(w);
    }
    /* the lists still conflict as before */
    ecs_world *w = vl_world(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id pos = ecs_component(w, "Position", sizeof(vl_pos), 0), frozen = ecs_component(w, "Frozen", 0, 0);
    ecs_system a = ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = vl_nop,
        .terms = {{pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_NOT}}});
    ecs_system b = ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = vl_nop,
        .terms = {{frozen, ECS_READ, ECS_AND}}, .writes = {pos}});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK(r.count == 1 && r.problems[0].kind == ECS_PROBLEM_RACE && r.problems[0].id == pos);
    ecs_world_free(w);
}

/* At run time the disjoint pair runs side by side, so term-only access
   covers only the tables the system's query matches. */
#if ECS_CHECK_ACCESS
typedef struct vl_ctx { ecs_id pos; ecs_entity live, frozen; int ok, refused; } vl_ctx;
static void vl_live(ecs_iter *it) {
    vl_ctx *c = (vl_ctx *)it->ctx;
    c->ok += ecs_get_mut(it->world, c->live, c->pos) != NULL;
    c->refused += ecs_get_mut(it->world, c->frozen, c->pos) == NULL;
}
TEST(validation_disjoint_access_checked) {
    ecs_world *w = vl_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    vl_ctx c = {0, 0, 0, 0, 0};
    c.pos = ecs_component(w, "Position", sizeof(vl_pos), 0);
    ecs_id frozen = ecs_component(w, "Frozen", 0, 0);
    c.live = ecs_create(w);
    c.frozen = ecs_create(w);
    ecs_set(w, c.live, c.pos, &(vl_pos){1, 1});
    ecs_set(w, c.frozen, c.pos, &(vl_pos){2, 2});
    ecs_add(w, c.frozen, frozen);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MoveLive", .fn = vl_live, .ctx = &c,
        .terms = {{c.pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_NOT}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MoveFrozen", .fn = vl_nop,
        .terms = {{c.pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);
    CHECKF(strstr(ecs_last_error(w), "only through its query terms") != NULL, "%s", ecs_last_error(w));
    CHECK(c.ok == 1 && c.refused == 1);
    ecs_world_free(w);
    /* Position in reads covers reading anywhere, not writing: still refused */
    w = vl_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    memset(&c, 0, sizeof c);
    c.pos = ecs_component(w, "Position", sizeof(vl_pos), 0);
    frozen = ecs_component(w, "Frozen", 0, 0);
    c.live = ecs_create(w);
    c.frozen = ecs_create(w);
    ecs_set(w, c.live, c.pos, &(vl_pos){1, 1});
    ecs_set(w, c.frozen, c.pos, &(vl_pos){2, 2});
    ecs_add(w, c.frozen, frozen);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MoveLive", .fn = vl_live, .ctx = &c,
        .terms = {{c.pos, ECS_WRITE, ECS_AND}, {frozen, ECS_READ, ECS_NOT}}, .reads = {c.pos}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MoveFrozen", .fn = vl_nop,
        .terms = {{c.pos, ECS_READ, ECS_AND}, {frozen, ECS_READ, ECS_AND}}}));
    CHECK_EQ_INT(ecs_progress(w, 0), ECS_ERR_ACCESS);
    CHECK(c.ok == 1 && c.refused == 1);
    ecs_world_free(w);
}
#endif

/* A writes X read by B, B writes Y read by C, C writes Z read by A. */
TEST(validation_writers_first_loop) {
    ecs_world *w = vl_world(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    ecs_id x = ecs_component(w, "X", 4, 0), y = ecs_component(w, "Y", 4, 0), z = ecs_component(w, "Z", 4, 0);
    ecs_system a = ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = vl_nop, .writes = {x}, .reads = {z}});
    ecs_system b = ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = vl_nop, .writes = {y}, .reads = {x}});
    ecs_system c = ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = vl_nop, .writes = {z}, .reads = {y}});
    REQUIRE(a && b && c);
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    REQUIRE(r.count == 1);
    const ecs_problem *p = &r.problems[0];
    CHECK_EQ_INT(p->kind, ECS_PROBLEM_CYCLE);
    CHECK(p->cycle_len == 3 && p->member_count == 3 && p->cycle[0] == a && p->cycle[1] == b && p->cycle[2] == c);
    CHECK(p->members[0] == a && p->members[1] == b && p->members[2] == c);
    CHECKF(!strcmp(p->message, "cycle: \"A\" runs before \"B\" (\"A\" writes X, which \"B\" reads), which runs "
                   "before \"C\" (\"B\" writes Y, which \"C\" reads), which runs before \"A\" (\"C\" writes Z, "
                   "which \"A\" reads); 3 systems in the loop, 3 tangled in all; declare the order you want "
                   "with after/before (declared order wins over writer-first inference), or remove one of "
                   "these declarations"), "%s", p->message);
    ecs_world_free(w);
    /* declared order wins: B before A drops A -> B, and the loop is gone */
    w = vl_world(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    x = ecs_component(w, "X", 4, 0); y = ecs_component(w, "Y", 4, 0); z = ecs_component(w, "Z", 4, 0);
    a = ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = vl_nop, .writes = {x}, .reads = {z}});
    b = ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = vl_nop, .writes = {y}, .reads = {x}, .before = {"A"}});
    c = ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = vl_nop, .writes = {z}, .reads = {y}});
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_OK);
    CHECK(ecs_system_precedes(w, b, c) && ecs_system_precedes(w, c, a) && ecs_system_precedes(w, b, a));
    ecs_world_free(w);
}

TEST(validation_declared_cycle_message) {
    ecs_world *w = vl_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = vl_nop, .after = {"C"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = vl_nop, .after = {"A"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = vl_nop, .after = {"B"}, .before = {"D"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "D", .fn = vl_nop, .before = {"C"}}));
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    REQUIRE(r.count == 1);
    CHECKF(!strcmp(r.problems[0].message, "cycle: \"C\" runs before \"D\" (\"C\" lists \"D\" in before), which "
                   "runs before \"C\" (\"D\" lists \"C\" in before); 2 systems in the loop, 4 tangled in all; "
                   "remove or reverse one of these declarations"), "%s", r.problems[0].message);
    CHECK_EQ_INT(r.problems[0].member_count, 4);
    ecs_world_free(w);
}

/* INSERTION puts a reader registered first before a writer: a note. */
TEST(validation_read_before_write_note) {
    ecs_world *w = vl_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id player = ecs_component(w, "PlayerPos", sizeof(vl_pos), 0);
    ecs_system chase = ecs_system_add(w, &(ecs_system_desc){.name = "Chase", .fn = vl_nop, .reads = {player}});
    ecs_system move = ecs_system_add(w, &(ecs_system_desc){.name = "MovePlayer", .fn = vl_nop, .writes = {player}});
    REQUIRE(chase && move);
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_OK);
    CHECK_EQ_INT(r.count, 0);
    REQUIRE(r.note_count == 1);
    const ecs_problem *n = &r.notes[0];
    CHECK(n->kind == ECS_NOTE_READ_BEFORE_WRITE && n->a == chase && n->b == move && n->id == player);
    CHECKF(!strcmp(n->message, "read before write: \"Chase\" runs before \"MovePlayer\" only by inferred order "
                   "and reads PlayerPos, which \"MovePlayer\" writes, so \"Chase\" sees last frame's PlayerPos; "
                   "if it should see this frame's, add .after = {\"MovePlayer\"} to \"Chase\""), "%s", n->message);
    FILE *f = tmpfile();
    REQUIRE(f);
    ecs_report_print(&r, f);
    char *text = test_read_all(f);
    CHECKF(text && strstr(text, "note: read before write") && strstr(text, "the system graph is valid (1 note)"),
           "%s", text ? text : "");
    free(text);
    fclose(f);
    ecs_world_free(w);
    /* declared, the order is the user's: no note */
    w = vl_world(ECS_ORDER_INSERTION);
    REQUIRE(w);
    player = ecs_component(w, "PlayerPos", sizeof(vl_pos), 0);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "Chase", .fn = vl_nop, .reads = {player}, .before = {"MovePlayer"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "MovePlayer", .fn = vl_nop, .writes = {player}}));
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_OK);
    CHECK_EQ_INT(r.note_count, 0);
    ecs_world_free(w);
}

/* 200 systems writing one component: 19,900 races, 10,000 listed. */
TEST(validation_report_cap) {
    ecs_world *w = vl_world(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = ecs_component(w, "X", 4, 0);
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "W%d", i);
        REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = name, .fn = vl_nop, .writes = {x}}));
    }
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 10000);
    CHECK_EQ_INT(r.omitted, 19900 - 10000);
    CHECK(vl_kind(&r, ECS_PROBLEM_RACE) != NULL);
    FILE *f = tmpfile();
    REQUIRE(f);
    ecs_report_print(&r, f);
    char *text = test_read_all(f);
    CHECK(text && strstr(text, "... and 9900 more problems not listed\n19900 problems in the system graph\n"));
    free(text);
    fclose(f);
    ecs_world_free(w);
}

/* Every other message shape, word for word (the README shows them). */
TEST(validation_message_shapes) {
    ecs_world *w = vl_world(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id health = ecs_component(w, "Health", 4, 0), score = ecs_resource(w, "Score", 4, 0, NULL);
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "PoisonSystem", .fn = vl_nop,
        .terms = {{health, ECS_WRITE, ECS_AND}}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "BulletSystem", .fn = vl_nop,
        .terms = {{health, ECS_WRITE, ECS_AND}}, .after = {"Nope"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "CountRows", .fn = vl_nop, .chunk_size = 1024,
        .terms = {{health, ECS_READ, ECS_AND}}, .writes = {score}, .after = {"PoisonSystem", "BulletSystem"}}));
    REQUIRE(ecs_system_add(w, &(ecs_system_desc){.name = "PoisonSystem", .fn = vl_nop}));
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    static const char *const want[] = {
        "race: \"PoisonSystem\" and \"BulletSystem\" both write Health and nothing orders them; add .after = "
        "{\"PoisonSystem\"} to \"BulletSystem\" (or .before = {\"BulletSystem\"} to \"PoisonSystem\"), or list "
        "one in the other's independent_of",
        "unknown system: \"BulletSystem\" lists \"Nope\" in after, but no system has that name; register it or "
        "fix the name",
        "self race: \"CountRows\" is chunked (chunk_size 1024), so its chunks run at the same time, and each "
        "writes Score (its writes list); drop chunk_size, or move those writes to an unchunked system that "
        "runs after \"CountRows\"",
        "duplicate name: systems 1 and 4 are both called \"PoisonSystem\"; rename one "
        "(after/before/independent_of names mean the first)",
    };
    for (int k = 0; k < 4; k++) {
        bool found = false;
        for (int i = 0; i < r.count; i++) found |= !strcmp(r.problems[i].message, want[k]);
        CHECKF(found, "missing: %s", want[k]);
    }
    CHECK_EQ_INT(r.count, 4);
    ecs_world_free(w);
}

/* Every allocation of a validation fails in turn, in every mode, on a graph
   with inference, notes, a disjoint pair, races and a loop: ECS_ERR_NOMEM,
   then the same report as without failures. */
typedef struct vl_fail { long requests, fail_at; } vl_fail;
static void *vl_realloc(void *p, size_t n, void *user) {
    vl_fail *f = (vl_fail *)user;
    if (n == 0) { free(p); return NULL; }
    if (++f->requests == f->fail_at) return NULL;
    return realloc(p, n);
}
static ecs_world *vl_graph(ecs_order order, vl_fail *f) {
    ecs_world *w = ecs_world_new(&(ecs_world_desc){.threads = 1, .order = order, .realloc_fn = vl_realloc,
                                                    .alloc_user = f});
    if (!w) return NULL;
    ecs_id x = ecs_component(w, "X", 4, 0), y = ecs_component(w, "Y", 4, 0), z = ecs_component(w, "Z", 0, 0);
    ecs_system_add(w, &(ecs_system_desc){.name = "R", .fn = vl_nop, .reads = {x}});
    ecs_system_add(w, &(ecs_system_desc){.name = "A", .fn = vl_nop, .writes = {x}, .reads = {y}});
    ecs_system_add(w, &(ecs_system_desc){.name = "B", .fn = vl_nop, .terms = {{y, ECS_WRITE, ECS_AND}, {z, 0, ECS_NOT}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "C", .fn = vl_nop, .terms = {{y, ECS_WRITE, ECS_AND}, {z, 0, ECS_AND}}});
    ecs_system_add(w, &(ecs_system_desc){.name = "D", .fn = vl_nop, .reads = {x}, .writes = {y}, .after = {"E"}});
    ecs_system_add(w, &(ecs_system_desc){.name = "E", .fn = vl_nop, .after = {"D"}});
    return w;
}
TEST(validation_out_of_memory_sweep) {
    for (int o = 0; o < 3; o++) {
        vl_fail f = {0, 0};
        ecs_world *w = vl_graph((ecs_order)o, &f);
        REQUIRE(w);
        ecs_report ref;
        long before = f.requests;
        ecs_result want = ecs_validate(w, &ref);
        long total = f.requests - before;
        int count = ref.count, notes = ref.note_count;
        char first[512];
        snprintf(first, sizeof first, "%s", count ? ref.problems[0].message : "");
        ecs_world_free(w);
        CHECK(want == ECS_ERR_INVALID_GRAPH);
        for (long i = 1; i <= total; i++) {
            vl_fail g = {0, 0};
            w = vl_graph((ecs_order)o, &g);
            REQUIRE(w);
            g.fail_at = g.requests + i;
            ecs_report r;
            CHECKF(ecs_validate(w, &r) == ECS_ERR_NOMEM, "order %d, allocation %ld", o, i);
            CHECK(ecs_validate(w, &r) == want && r.count == count && r.note_count == notes &&
                  (!count || !strcmp(r.problems[0].message, first)));
            ecs_world_free(w);
        }
    }
}

void suite_validation(void) {
    RUN(validation_out_of_memory_sweep);
    RUN(validation_disjoint_queries);
#if ECS_CHECK_ACCESS
    RUN(validation_disjoint_access_checked);
#endif
    RUN(validation_writers_first_loop);
    RUN(validation_declared_cycle_message);
    RUN(validation_read_before_write_note);
    RUN(validation_report_cap);
    RUN(validation_message_shapes);
}
