/* systems tests: registration and bad descs, stages, conflicts, declared and
   inferred order (INSERTION, EXPLICIT, WRITERS_FIRST), races, cycles, unknown
   and duplicate names, the report's lifetime and printing, the DOT export,
   and a 100,000-system chain. */
#include "test.h"

static void noop(ecs_iter *it) { (void)it; }

/* A system with a no-op callback and the given desc fields. */
#define ADD(w, ...) ecs_system_add((w), &(ecs_system_desc){.fn = noop, __VA_ARGS__})

static ecs_world *world_of(ecs_order order) {
    ecs_world_desc d = {.threads = 1, .order = order};
    return ecs_world_new(&d);
}
static ecs_id comp(ecs_world *w, const char *name) { return ecs_component(w, name, sizeof(int), 0); }

static const ecs_order all_orders[3] = {ECS_ORDER_INSERTION, ECS_ORDER_EXPLICIT, ECS_ORDER_WRITERS_FIRST};

/* ---- report helpers --------------------------------------------------------- */
static int count_kind(const ecs_report *r, ecs_problem_kind k) {
    int n = 0;
    for (int i = 0; i < r->count; i++) n += r->problems[i].kind == k;
    return n;
}
static const ecs_problem *first_kind(const ecs_report *r, ecs_problem_kind k) {
    for (int i = 0; i < r->count; i++) if (r->problems[i].kind == k) return &r->problems[i];
    return NULL;
}
/* The RACE between systems x and y (either order), or NULL. */
static const ecs_problem *race_of(const ecs_report *r, ecs_system x, ecs_system y) {
    for (int i = 0; i < r->count; i++) {
        const ecs_problem *p = &r->problems[i];
        if (p->kind == ECS_PROBLEM_RACE && ((p->a == x && p->b == y) || (p->a == y && p->b == x)))
            return p;
    }
    return NULL;
}
/* Every RACE has a < b and a message; no pair is reported twice. */
static void check_races_well_formed(const ecs_report *r) {
    for (int i = 0; i < r->count; i++) {
        const ecs_problem *p = &r->problems[i];
        CHECKF(p->message && p->message[0], "problem %d has no message", i);
        if (p->kind != ECS_PROBLEM_RACE) continue;
        CHECKF(p->a < p->b, "race %d: a = %u, b = %u", i, (unsigned)p->a, (unsigned)p->b);
        for (int j = i + 1; j < r->count; j++)
            CHECKF(!(r->problems[j].kind == ECS_PROBLEM_RACE && r->problems[j].a == p->a &&
                     r->problems[j].b == p->b), "pair %u/%u reported twice", (unsigned)p->a, (unsigned)p->b);
    }
}
static void print_report(const ecs_report *r) {
    for (int i = 0; i < r->count; i++) fprintf(stderr, "    [%d] %s\n", i, r->problems[i].message);
}
/* Validates and checks the result matches the problem count. */
static ecs_result validate(ecs_world *w, ecs_report *r) {
    ecs_result res = ecs_validate(w, r);
    CHECKF((res == ECS_OK) == (r->count == 0), "result %s with %d problems", ecs_result_str(res), r->count);
    CHECKF(res == ECS_OK || res == ECS_ERR_INVALID_GRAPH, "result %s", ecs_result_str(res));
    check_races_well_formed(r);
    return res;
}
#define EXPECT_VALID(w) do { ecs_report r_; \
    if (validate((w), &r_) != ECS_OK) { CHECKF(0, "graph not valid:"); print_report(&r_); } } while (0)

static bool contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

/* ---- registration ------------------------------------------------------------ */
TEST(systems_add_lookup_name_count) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    CHECK_EQ_INT(ecs_system_count(w), 0);
    ecs_system a = ADD(w, .name = "Alpha");
    ecs_system b = ADD(w, .name = "Beta");
    CHECK(a != 0 && b != 0 && a != b);
    CHECK_EQ_INT(ecs_system_count(w), 2);
    CHECK_EQ_INT(ecs_system_lookup(w, "Alpha"), a);
    CHECK_EQ_INT(ecs_system_lookup(w, "Beta"), b);
    CHECK_EQ_INT(ecs_system_lookup(w, "Gamma"), 0);
    CHECK_EQ_INT(ecs_system_lookup(w, "Alph"), 0);
    CHECK(ecs_system_name(w, a) && !strcmp(ecs_system_name(w, a), "Alpha"));
    CHECK(ecs_system_name(w, b) && !strcmp(ecs_system_name(w, b), "Beta"));
    CHECK(ecs_system_name(w, 0) == NULL);
    CHECK(ecs_system_name(w, b + 1) == NULL);
    /* the name is copied */
    char name[8] = "Temp";
    ecs_system t = ADD(w, .name = name);
    REQUIRE(t);
    strcpy(name, "Xxxx");
    CHECK(!strcmp(ecs_system_name(w, t), "Temp"));
    CHECK_EQ_INT(ecs_system_lookup(w, "Temp"), t);
    ecs_world_free(w);
}

TEST(systems_stage_add_ids_and_names) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    CHECK(ecs_stage_name(w, 0) && !strcmp(ecs_stage_name(w, 0), "default"));
    CHECK(ecs_stage_name(w, 1) == NULL);
    ecs_stage s1 = ecs_stage_add(w, "update");
    ecs_stage s2 = ecs_stage_add(w, "render");
    CHECK_EQ_INT(s1, 1);
    CHECK_EQ_INT(s2, 2);
    CHECK(ecs_stage_name(w, s1) && !strcmp(ecs_stage_name(w, s1), "update"));
    CHECK(ecs_stage_name(w, s2) && !strcmp(ecs_stage_name(w, s2), "render"));
    CHECK(ecs_stage_name(w, 3) == NULL);
    CHECK(ADD(w, .name = "InRender", .stage = s2) != 0);
    ecs_world_free(w);
}

TEST(systems_add_accepts_flags_and_chunks) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    CHECK(ADD(w, .name = "Main", .flags = ECS_SYSTEM_MAIN_THREAD) != 0);
    CHECK(ADD(w, .name = "Excl", .flags = ECS_SYSTEM_EXCLUSIVE) != 0);
    CHECK(ADD(w, .name = "Both", .flags = ECS_SYSTEM_MAIN_THREAD | ECS_SYSTEM_EXCLUSIVE) != 0);
    CHECK(ADD(w, .name = "Chunked", .chunk_size = 64,
              .terms = {{x, ECS_WRITE, ECS_AND}}) != 0);
    CHECK(ADD(w, .name = "RW", .terms = {{x, ECS_READ | ECS_WRITE, ECS_OPTIONAL}}) != 0);
    /* lists end at the first 0: what follows is not looked at */
    CHECK(ADD(w, .name = "Ends", .reads = {0, 9999}, .writes = {0, 9999},
              .terms = {{0, ECS_READ, ECS_AND}, {9999, ECS_READ, ECS_AND}}) != 0);
    CHECK_EQ_INT(ecs_system_count(w), 6);
    ecs_world_free(w);
}

TEST(systems_add_bad_desc_fails) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_id res = ecs_resource(w, "Res", sizeof(int), 0, NULL);
    REQUIRE(x && res);
    REQUIRE(ADD(w, .name = "Good") != 0);
    ecs_id bad = 9999;
    const ecs_system_desc descs[] = {
        {.name = NULL, .fn = noop},
        {.name = "", .fn = noop},
        {.name = "NoFn", .fn = NULL},
        {.name = "BadTerm", .fn = noop, .terms = {{bad, ECS_READ, ECS_AND}}},
        {.name = "BadTerm2", .fn = noop, .terms = {{x, ECS_READ, ECS_AND}, {bad, ECS_WRITE, ECS_AND}}},
        {.name = "ResTerm", .fn = noop, .terms = {{res, ECS_READ, ECS_AND}}},
        {.name = "BadOper", .fn = noop, .terms = {{x, ECS_READ, (ecs_oper)4}}},
        {.name = "BadOper2", .fn = noop, .terms = {{x, ECS_READ, (ecs_oper)-1}}},
        {.name = "BadAccess", .fn = noop, .terms = {{x, (ecs_access)4, ECS_AND}}},
        {.name = "BadAccess2", .fn = noop, .terms = {{x, (ecs_access)-1, ECS_AND}}},
        {.name = "BadRead", .fn = noop, .reads = {x, bad}},
        {.name = "BadWrite", .fn = noop, .writes = {bad}},
        {.name = "BadStage", .fn = noop, .stage = 1},
        {.name = "BadStage2", .fn = noop, .stage = 12345},
        {.name = "BadFlags", .fn = noop, .flags = 1u << 2},
        {.name = "BadFlags2", .fn = noop, .flags = ECS_SYSTEM_MAIN_THREAD | 0x80000000u},
        {.name = "NegChunk", .fn = noop, .chunk_size = -1},
        {.name = "ChunkMain", .fn = noop, .chunk_size = 8, .flags = ECS_SYSTEM_MAIN_THREAD},
        {.name = "ChunkExcl", .fn = noop, .chunk_size = 8, .flags = ECS_SYSTEM_EXCLUSIVE},
        {.name = "EmptyAfter", .fn = noop, .after = {"Good", ""}},
        {.name = "EmptyBefore", .fn = noop, .before = {""}},
        {.name = "EmptyIndep", .fn = noop, .independent_of = {"Good", "Good", ""}},
    };
    for (size_t i = 0; i < sizeof descs / sizeof descs[0]; i++) {
        /* a known error text first, so the next one is seen to be new */
        CHECK(ecs_resource_get(w, 0) == NULL);
        char before[256];
        snprintf(before, sizeof before, "%s", ecs_last_error(w));
        ecs_system s = ecs_system_add(w, &descs[i]);
        const char *err = ecs_last_error(w);
        const char *nm = descs[i].name ? descs[i].name : "(NULL)";
        CHECKF(s == 0, "bad desc %zu (%s) was accepted", i, nm);
        CHECKF(err && err[0] && strcmp(err, before) != 0, "bad desc %zu (%s): no new error text", i, nm);
        CHECKF(!strchr(err ? err : "", '\n'), "bad desc %zu: error text is not one line", i);
        CHECK_EQ_INT(ecs_system_count(w), 1);
        if (descs[i].name && descs[i].name[0]) CHECK_EQ_INT(ecs_system_lookup(w, descs[i].name), 0);
    }
    CHECK(ecs_system_add(w, NULL) == 0);
    CHECK(ecs_last_error(w)[0] != 0);
    CHECK_EQ_INT(ecs_system_count(w), 1);
    /* still usable, and the rejected descs left no trace in the graph */
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_OK);
    CHECK(ADD(w, .name = "Later") != 0);
    CHECK_EQ_INT(ecs_system_count(w), 2);
    ecs_world_free(w);
}

/* ---- conflicts -------------------------------------------------------------- */
TEST(systems_two_readers_never_conflict) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_id res = ecs_resource(w, "Res", sizeof(int), 0, NULL);
    ecs_system a = ADD(w, .name = "A", .terms = {{x, ECS_READ, ECS_AND}}, .reads = {res});
    ecs_system b = ADD(w, .name = "B", .terms = {{x, 0, ECS_AND}}, .reads = {res, x});
    ecs_system c = ADD(w, .name = "C", .reads = {x, res});
    REQUIRE(a && b && c);
    EXPECT_VALID(w);
    CHECK(!ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a));
    CHECK(!ecs_system_precedes(w, b, c) && !ecs_system_precedes(w, a, c));
    ecs_world_free(w);

    /* INSERTION does not order readers either */
    w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    x = comp(w, "X");
    a = ADD(w, .name = "A", .terms = {{x, ECS_READ, ECS_AND}});
    b = ADD(w, .name = "B", .reads = {x});
    EXPECT_VALID(w);
    CHECK(!ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a));
    ecs_world_free(w);
}

/* Each way of accessing data that the contract counts, against a writer in
   EXPLICIT order: every pair must be a RACE. */
TEST(systems_every_access_kind_conflicts) {
    typedef struct { const char *what; ecs_system_desc d; bool ww; } variant;
    for (int v = 0; v < 8; v++) {
        ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
        REQUIRE(w);
        ecs_id other = comp(w, "Other");
        ecs_id x = comp(w, "X");
        ecs_id res = ecs_resource(w, "Res", sizeof(int), 0, NULL);
        REQUIRE(other && x && res);
        variant vs[8] = {
            {"term WRITE vs term READ", {.terms = {{x, ECS_READ, ECS_AND}}}, false},
            {"term WRITE vs term access 0", {.terms = {{other, ECS_READ, ECS_AND}, {x, 0, ECS_AND}}}, false},
            {"term WRITE vs OPTIONAL term", {.terms = {{x, ECS_READ, ECS_OPTIONAL}}}, false},
            {"term WRITE vs reads list", {.reads = {other, x}}, false},
            {"term WRITE vs term WRITE", {.terms = {{x, ECS_WRITE, ECS_AND}}}, true},
            {"term WRITE vs writes list", {.writes = {x}}, true},
            {"term WRITE vs READ|WRITE term", {.terms = {{x, ECS_READ | ECS_WRITE, ECS_AND}}}, true},
            {"term WRITE vs OPTIONAL WRITE term", {.terms = {{x, ECS_WRITE, ECS_OPTIONAL}}}, true},
        };
        ecs_system a = ADD(w, .name = "Writer", .terms = {{x, ECS_WRITE, ECS_AND}});
        ecs_system_desc d = vs[v].d;
        d.name = "Other";
        d.fn = noop;
        ecs_system b = ecs_system_add(w, &d);
        REQUIRE(a && b);
        ecs_report r;
        CHECKF(validate(w, &r) == ECS_ERR_INVALID_GRAPH, "%s: no race", vs[v].what);
        CHECKF(r.count == 1, "%s: %d problems", vs[v].what, r.count);
        const ecs_problem *p = race_of(&r, a, b);
        CHECKF(p != NULL, "%s: no race between the pair", vs[v].what);
        if (p) {
            CHECK_EQ_INT(p->a, a);
            CHECK_EQ_INT(p->b, b);
            CHECK_EQ_INT(p->id, x);
            CHECKF(p->write_write == vs[v].ww, "%s: write_write %d", vs[v].what, p->write_write);
        }
        ecs_world_free(w);
    }
}

TEST(systems_resources_conflict) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id res = ecs_resource(w, "Score", sizeof(int), 0, NULL);
    ecs_id res2 = ecs_resource(w, "Time", sizeof(int), 0, NULL);
    ecs_system a = ADD(w, .name = "A", .writes = {res});
    ecs_system b = ADD(w, .name = "B", .reads = {res});
    ecs_system c = ADD(w, .name = "C", .reads = {res2});
    ecs_system d = ADD(w, .name = "D", .writes = {res2});
    REQUIRE(a && b && c && d);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 2);
    const ecs_problem *p = race_of(&r, a, b);
    CHECK(p && p->id == res && !p->write_write);
    p = race_of(&r, c, d);
    CHECK(p && p->id == res2 && !p->write_write);
    CHECK(race_of(&r, a, d) == NULL);
    ecs_world_free(w);
}

TEST(systems_not_terms_access_nothing) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X"), y = comp(w, "Y");
    ecs_system a = ADD(w, .name = "A", .terms = {{y, ECS_READ, ECS_AND}, {x, ECS_WRITE, ECS_NOT}});
    ecs_system b = ADD(w, .name = "B", .writes = {x});
    ecs_system c = ADD(w, .name = "C", .terms = {{x, ECS_READ, ECS_NOT}});
    REQUIRE(a && b && c);
    EXPECT_VALID(w);
    ecs_world_free(w);

    /* the same with an AND term is a race (the control) */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    x = comp(w, "X"); y = comp(w, "Y");
    a = ADD(w, .name = "A", .terms = {{y, ECS_READ, ECS_AND}, {x, ECS_READ, ECS_AND}});
    b = ADD(w, .name = "B", .writes = {x});
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK(race_of(&r, a, b) != NULL);
    ecs_world_free(w);
}

TEST(systems_list_after_zero_is_ignored) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {0, x}, .reads = {0, x},
                       .terms = {{0, ECS_READ, ECS_AND}, {x, ECS_WRITE, ECS_AND}});
    ecs_system b = ADD(w, .name = "B", .writes = {x});
    REQUIRE(a && b);
    EXPECT_VALID(w);
    ecs_world_free(w);
}

TEST(systems_different_stages_never_conflict) {
    for (int o = 0; o < 3; o++) {
        ecs_world *w = world_of(all_orders[o]);
        REQUIRE(w);
        ecs_id x = comp(w, "X");
        ecs_stage s1 = ecs_stage_add(w, "one"), s2 = ecs_stage_add(w, "two");
        REQUIRE(s1 && s2);
        /* registered against stage order on purpose */
        ecs_system c = ADD(w, .name = "C", .writes = {x}, .stage = s2);
        ecs_system b = ADD(w, .name = "B", .writes = {x}, .stage = s1, .flags = ECS_SYSTEM_EXCLUSIVE);
        ecs_system a = ADD(w, .name = "A", .writes = {x});
        REQUIRE(a && b && c);
        EXPECT_VALID(w);
        CHECKF(ecs_system_precedes(w, a, b) && ecs_system_precedes(w, b, c) &&
               ecs_system_precedes(w, a, c), "order %d: stage order not followed", o);
        CHECK(!ecs_system_precedes(w, b, a) && !ecs_system_precedes(w, c, b) &&
              !ecs_system_precedes(w, c, a));
        ecs_world_free(w);
    }
}

/* ---- races ------------------------------------------------------------------ */
TEST(systems_race_lists_every_contested_id) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id c1 = comp(w, "Alpha"), c2 = comp(w, "Bravo"), c3 = comp(w, "Charlie");
    ecs_id c4 = comp(w, "Delta");
    REQUIRE(c1 < c2 && c2 < c3);
    /* c1: B writes, A reads; c2: both write; c3: A writes, B reads; c4: both read */
    ecs_system a = ADD(w, .name = "SysA", .writes = {c3, c2}, .reads = {c1, c4});
    ecs_system b = ADD(w, .name = "SysB", .terms = {{c4, ECS_READ, ECS_AND}, {c3, ECS_READ, ECS_AND}},
                       .writes = {c2, c1});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = race_of(&r, a, b);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, a);
    CHECK_EQ_INT(p->b, b);
    CHECK_EQ_INT(p->id, c1);
    CHECK(!p->write_write);
    CHECKF(contains(p->message, "SysA") && contains(p->message, "SysB"), "%s", p->message);
    CHECKF(contains(p->message, "Alpha") && contains(p->message, "Bravo") &&
           contains(p->message, "Charlie"), "not every contested id: %s", p->message);
    CHECKF(contains(p->message, "write"), "%s", p->message);
    CHECKF(contains(p->message, ".after = {") && contains(p->message, "independent_of"),
           "no fix hint: %s", p->message);
    ecs_world_free(w);
}

TEST(systems_race_lowest_id_write_write) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id c1 = comp(w, "Low"), c2 = comp(w, "High");
    ecs_system a = ADD(w, .name = "A", .writes = {c2, c1});
    ecs_system b = ADD(w, .name = "B", .writes = {c1}, .reads = {c2});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = race_of(&r, a, b);
    REQUIRE(p);
    CHECK_EQ_INT(p->id, c1);
    CHECK(p->write_write);
    CHECKF(contains(p->message, "Low") && contains(p->message, "High"), "%s", p->message);
    ecs_world_free(w);

    /* single id, read/write: the message names the id and both systems */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    c1 = comp(w, "Only");
    a = ADD(w, .name = "Reader", .reads = {c1});
    b = ADD(w, .name = "Writer", .writes = {c1});
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    p = race_of(&r, a, b);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, a);
    CHECK(p->id == c1 && !p->write_write);
    CHECKF(contains(p->message, "Only") && contains(p->message, "\"Reader\"") &&
           contains(p->message, "\"Writer\"") && contains(p->message, ".after = {"), "%s", p->message);
    ecs_world_free(w);
}

/* ---- declared order ------------------------------------------------------------ */
TEST(systems_after_and_before_order_a_pair) {
    for (int o = 0; o < 3; o++) {
        ecs_world *w = world_of(all_orders[o]);
        REQUIRE(w);
        ecs_id x = comp(w, "X"), y = comp(w, "Y");
        ecs_system a = ADD(w, .name = "A", .writes = {x});
        ecs_system b = ADD(w, .name = "B", .writes = {x}, .after = {"A"});
        ecs_system c = ADD(w, .name = "C", .writes = {y}, .before = {"D"});
        ecs_system d = ADD(w, .name = "D", .writes = {y});
        REQUIRE(a && b && c && d);
        EXPECT_VALID(w);
        CHECK(ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a));
        CHECK(ecs_system_precedes(w, c, d) && !ecs_system_precedes(w, d, c));
        CHECK(!ecs_system_precedes(w, a, a) && !ecs_system_precedes(w, d, d));
        CHECK(!ecs_system_precedes(w, a, c) && !ecs_system_precedes(w, c, a));
        ecs_world_free(w);
    }
}

TEST(systems_forward_reference_in_after) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x}, .after = {"B"});
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);   /* B unknown so far */
    ecs_system b = ADD(w, .name = "B", .writes = {x});
    REQUIRE(a && b);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, b, a));
    CHECK(!ecs_system_precedes(w, a, b));
    ecs_world_free(w);
}

TEST(systems_declared_order_is_transitive) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x}, .before = {"M"});
    ecs_system b = ADD(w, .name = "B", .writes = {x});
    ecs_system m = ADD(w, .name = "M", .before = {"B"});
    REQUIRE(a && b && m);
    EXPECT_VALID(w);   /* A and B conflict, ordered through M */
    CHECK(ecs_system_precedes(w, a, m));
    CHECK(ecs_system_precedes(w, m, b));
    CHECK(ecs_system_precedes(w, a, b));
    CHECK(!ecs_system_precedes(w, b, a));
    CHECK(!ecs_system_precedes(w, 0, a) && !ecs_system_precedes(w, a, 0));
    CHECK(!ecs_system_precedes(w, a, 99) && !ecs_system_precedes(w, 99, a));
    ecs_world_free(w);
}

/* ---- unknown and duplicate names --------------------------------------------- */
TEST(systems_unknown_name_in_each_list) {
    const char *lists[3] = {"after", "before", "independent_of"};
    for (int l = 0; l < 3; l++) {
        for (int o = 0; o < 3; o++) {
            ecs_world *w = world_of(all_orders[o]);
            REQUIRE(w);
            ecs_system a = ADD(w, .name = "A");
            ecs_system_desc d = {.name = "Referrer", .fn = noop};
            if (l == 0) { d.after[0] = "A"; d.after[1] = "Ghost"; }
            if (l == 1) { d.before[0] = "Ghost"; }
            if (l == 2) { d.independent_of[0] = "A"; d.independent_of[1] = "Ghost"; }
            ecs_system s = ecs_system_add(w, &d);
            REQUIRE(a && s);
            ecs_report r;
            CHECKF(validate(w, &r) == ECS_ERR_INVALID_GRAPH, "%s: accepted", lists[l]);
            CHECKF(r.count == 1, "%s, order %d: %d problems", lists[l], o, r.count);
            const ecs_problem *p = first_kind(&r, ECS_PROBLEM_UNKNOWN_SYSTEM);
            CHECKF(p != NULL, "%s: no UNKNOWN_SYSTEM", lists[l]);
            if (p) {
                CHECK_EQ_INT(p->a, s);
                CHECK(p->name && !strcmp(p->name, "Ghost"));
                CHECKF(contains(p->message, "Ghost") && contains(p->message, "Referrer"), "%s", p->message);
                CHECKF(contains(p->message, lists[l]), "list not named: %s", p->message);
            }
            /* registering the name fixes it */
            CHECK(ADD(w, .name = "Ghost") != 0);
            EXPECT_VALID(w);
            ecs_world_free(w);
        }
    }
}

TEST(systems_unknown_names_one_problem_each) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_system a = ADD(w, .name = "A", .after = {"G1", "G2"}, .before = {"G3"});
    ecs_system b = ADD(w, .name = "B", .independent_of = {"G1"});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 4);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_UNKNOWN_SYSTEM), 4);
    int from_a = 0, from_b = 0;
    for (int i = 0; i < r.count; i++) {
        if (r.problems[i].a == a) from_a++;
        if (r.problems[i].a == b) { from_b++; CHECK(!strcmp(r.problems[i].name, "G1")); }
    }
    CHECK_EQ_INT(from_a, 3);
    CHECK_EQ_INT(from_b, 1);
    ecs_world_free(w);
}

TEST(systems_duplicate_name_resolves_to_first) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system first = ADD(w, .name = "Dup");
    ecs_system other = ADD(w, .name = "Other");
    ecs_system second = ADD(w, .name = "Dup", .writes = {x});
    ecs_system c = ADD(w, .name = "C", .after = {"Dup"});
    REQUIRE(first && other && second && c);
    CHECK(second != first);
    CHECK_EQ_INT(ecs_system_lookup(w, "Dup"), first);
    CHECK_EQ_INT(ecs_system_count(w), 4);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = first_kind(&r, ECS_PROBLEM_DUPLICATE_NAME);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, first);
    CHECK_EQ_INT(p->b, second);
    CHECK(p->name && !strcmp(p->name, "Dup"));
    CHECKF(contains(p->message, "Dup"), "%s", p->message);
    CHECK(ecs_system_precedes(w, first, c));
    CHECK(!ecs_system_precedes(w, second, c));
    ecs_world_free(w);

    /* three with one name: two problems, each against the first */
    w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_system s1 = ADD(w, .name = "Same"), s2 = ADD(w, .name = "Same"), s3 = ADD(w, .name = "Same");
    REQUIRE(s1 && s2 && s3);
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_DUPLICATE_NAME), 2);
    CHECK_EQ_INT(r.count, 2);
    for (int i = 0; i < r.count; i++) {
        CHECK_EQ_INT(r.problems[i].a, s1);
        CHECK(r.problems[i].b == s2 || r.problems[i].b == s3);
    }
    if (r.count == 2) CHECK(r.problems[0].b != r.problems[1].b);
    ecs_world_free(w);
}

/* ---- inferred order: seeds 003 and 001 ----------------------------------------- */
typedef struct seed003 {
    ecs_id counter, health, state, gui, input, position;
    ecs_system poison, game_over, health_bar, movement, bullet;
} seed003;

/* Seed 003's example; with_bullet adds BulletSystem (writes Health) last.
   declared: GameOver and HealthBar list Poison and Bullet in after. */
static bool seed003_make(ecs_world *w, seed003 *s, bool with_bullet, bool declared) {
    memset(s, 0, sizeof *s);
    s->counter = comp(w, "PoisonCounter");
    s->health = comp(w, "Health");
    s->state = ecs_resource(w, "GameState", sizeof(int), 0, NULL);
    s->gui = ecs_resource(w, "GUI", sizeof(int), 0, NULL);
    s->input = ecs_resource(w, "Input", sizeof(int), 0, NULL);
    s->position = comp(w, "Position");
    s->poison = ADD(w, .name = "PoisonSystem",
                    .terms = {{s->counter, ECS_READ, ECS_AND}, {s->health, ECS_WRITE, ECS_AND}});
    if (declared) {
        s->game_over = ADD(w, .name = "GameOverSystem", .terms = {{s->health, ECS_READ, ECS_AND}},
                           .writes = {s->state}, .after = {"PoisonSystem", "BulletSystem"});
        s->health_bar = ADD(w, .name = "HealthBarSystem", .terms = {{s->health, ECS_READ, ECS_AND}},
                            .writes = {s->gui}, .after = {"PoisonSystem", "BulletSystem"});
    } else {
        s->game_over = ADD(w, .name = "GameOverSystem", .terms = {{s->health, ECS_READ, ECS_AND}},
                           .writes = {s->state});
        s->health_bar = ADD(w, .name = "HealthBarSystem", .reads = {s->health}, .writes = {s->gui});
    }
    s->movement = ADD(w, .name = "MovementSystem", .reads = {s->input},
                      .terms = {{s->position, ECS_WRITE, ECS_AND}});
    if (with_bullet) s->bullet = ADD(w, .name = "BulletSystem", .writes = {s->health});
    return s->counter && s->health && s->state && s->gui && s->input && s->position && s->poison &&
           s->game_over && s->health_bar && s->movement && (!with_bullet || s->bullet);
}

static void check_movement_unordered(ecs_world *w, const seed003 *s) {
    ecs_system others[4] = {s->poison, s->game_over, s->health_bar, s->bullet};
    for (int i = 0; i < 4; i++) {
        if (!others[i]) continue;
        CHECKF(!ecs_system_precedes(w, s->movement, others[i]) &&
               !ecs_system_precedes(w, others[i], s->movement),
               "Movement ordered against %s", ecs_system_name(w, others[i]));
    }
}

TEST(systems_seed003_insertion_and_writers_first) {
    ecs_order orders[2] = {ECS_ORDER_INSERTION, ECS_ORDER_WRITERS_FIRST};
    for (int o = 0; o < 2; o++) {
        ecs_world *w = world_of(orders[o]);
        REQUIRE(w);
        seed003 s;
        REQUIRE(seed003_make(w, &s, false, false));
        EXPECT_VALID(w);
        CHECKF(ecs_system_precedes(w, s.poison, s.game_over), "order %d", (int)orders[o]);
        CHECKF(ecs_system_precedes(w, s.poison, s.health_bar), "order %d", (int)orders[o]);
        CHECK(!ecs_system_precedes(w, s.game_over, s.poison));
        CHECK(!ecs_system_precedes(w, s.health_bar, s.poison));
        CHECK(!ecs_system_precedes(w, s.game_over, s.health_bar));
        CHECK(!ecs_system_precedes(w, s.health_bar, s.game_over));
        check_movement_unordered(w, &s);
        ecs_world_free(w);
    }
}

TEST(systems_seed003_explicit_without_declarations_races) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    seed003 s;
    REQUIRE(seed003_make(w, &s, false, false));
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 2);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_RACE), 2);
    const ecs_problem *p = race_of(&r, s.poison, s.game_over);
    CHECK(p && p->id == s.health && !p->write_write);
    p = race_of(&r, s.poison, s.health_bar);
    CHECK(p && p->id == s.health && !p->write_write);
    ecs_world_free(w);
}

TEST(systems_seed003_bullet_insertion) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    seed003 s;
    REQUIRE(seed003_make(w, &s, true, false));
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s.poison, s.bullet));
    CHECK(!ecs_system_precedes(w, s.bullet, s.poison));
    /* Bullet writes what GameOver and HealthBar read: registered last, it runs after them */
    CHECK(ecs_system_precedes(w, s.game_over, s.bullet));
    CHECK(ecs_system_precedes(w, s.health_bar, s.bullet));
    CHECK(ecs_system_precedes(w, s.poison, s.game_over));
    CHECK(!ecs_system_precedes(w, s.game_over, s.health_bar));
    CHECK(!ecs_system_precedes(w, s.health_bar, s.game_over));
    check_movement_unordered(w, &s);
    ecs_world_free(w);
}

TEST(systems_seed003_bullet_writers_first) {
    ecs_world *w = world_of(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    seed003 s;
    REQUIRE(seed003_make(w, &s, true, false));
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = race_of(&r, s.poison, s.bullet);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, s.poison);
    CHECK_EQ_INT(p->b, s.bullet);
    CHECK_EQ_INT(p->id, s.health);
    CHECK(p->write_write);
    CHECKF(contains(p->message, "Health") && contains(p->message, "PoisonSystem") &&
           contains(p->message, "BulletSystem"), "%s", p->message);
    /* the writers run before the readers */
    CHECK(ecs_system_precedes(w, s.poison, s.game_over));
    CHECK(ecs_system_precedes(w, s.poison, s.health_bar));
    CHECK(ecs_system_precedes(w, s.bullet, s.game_over));
    CHECK(ecs_system_precedes(w, s.bullet, s.health_bar));
    CHECK(!ecs_system_precedes(w, s.poison, s.bullet) && !ecs_system_precedes(w, s.bullet, s.poison));
    check_movement_unordered(w, &s);
    ecs_world_free(w);
}

TEST(systems_seed003_bullet_explicit) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    seed003 s;
    REQUIRE(seed003_make(w, &s, true, true));
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = race_of(&r, s.poison, s.bullet);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, s.poison);
    CHECK_EQ_INT(p->b, s.bullet);
    CHECK_EQ_INT(p->id, s.health);
    CHECK(p->write_write);
    CHECK(ecs_system_precedes(w, s.bullet, s.game_over));
    CHECK(ecs_system_precedes(w, s.poison, s.health_bar));
    check_movement_unordered(w, &s);
    ecs_world_free(w);

    /* without Bullet the declared graph is valid */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    REQUIRE(seed003_make(w, &s, false, true));
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);   /* "BulletSystem" is unknown */
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_UNKNOWN_SYSTEM), 2);
    CHECK_EQ_INT(r.count, 2);
    ecs_world_free(w);
}

TEST(systems_seed001_disjointness_not_transitive) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id ca = comp(w, "A"), cb = comp(w, "B");
    ecs_system s0 = ADD(w, .name = "s0", .writes = {ca});
    ecs_system s1 = ADD(w, .name = "s1", .writes = {cb});
    ecs_system s2 = ADD(w, .name = "s2", .writes = {ca});
    REQUIRE(s0 && s1 && s2);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s0, s2));
    CHECK(!ecs_system_precedes(w, s2, s0));
    CHECK(!ecs_system_precedes(w, s0, s1) && !ecs_system_precedes(w, s1, s0));
    CHECK(!ecs_system_precedes(w, s1, s2) && !ecs_system_precedes(w, s2, s1));
    ecs_world_free(w);

    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ca = comp(w, "A"); cb = comp(w, "B");
    s0 = ADD(w, .name = "s0", .writes = {ca});
    s1 = ADD(w, .name = "s1", .writes = {cb});
    s2 = ADD(w, .name = "s2", .writes = {ca});
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    CHECK(race_of(&r, s0, s2) != NULL);
    ecs_world_free(w);
}

TEST(systems_seed001_intersection_not_transitive) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id ca = comp(w, "A"), cb = comp(w, "B");
    ecs_system s0 = ADD(w, .name = "s0", .writes = {ca});
    ecs_system s1 = ADD(w, .name = "s1", .writes = {ca, cb});
    ecs_system s2 = ADD(w, .name = "s2", .writes = {cb});
    REQUIRE(s0 && s1 && s2);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s0, s1));
    CHECK(ecs_system_precedes(w, s1, s2));
    CHECK(ecs_system_precedes(w, s0, s2));   /* by path */
    CHECK(!ecs_system_precedes(w, s2, s0) && !ecs_system_precedes(w, s1, s0) &&
          !ecs_system_precedes(w, s2, s1));
    ecs_world_free(w);

    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ca = comp(w, "A"); cb = comp(w, "B");
    s0 = ADD(w, .name = "s0", .writes = {ca});
    s1 = ADD(w, .name = "s1", .writes = {ca, cb});
    s2 = ADD(w, .name = "s2", .writes = {cb});
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 2);
    const ecs_problem *p01 = race_of(&r, s0, s1), *p12 = race_of(&r, s1, s2);
    CHECK(p01 && p01->id == ca && p01->write_write);
    CHECK(p12 && p12->id == cb && p12->write_write);
    CHECK(race_of(&r, s0, s2) == NULL);
    ecs_world_free(w);
}

TEST(systems_writers_first_puts_writer_before_readers) {
    ecs_world *w = world_of(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    ecs_id ca = comp(w, "A"), cb = comp(w, "B");
    ecs_system s0 = ADD(w, .name = "ReadsA", .reads = {ca});
    ecs_system s1 = ADD(w, .name = "WritesAB", .writes = {ca, cb});
    ecs_system s2 = ADD(w, .name = "ReadsB", .terms = {{cb, ECS_READ, ECS_AND}});
    REQUIRE(s0 && s1 && s2);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s1, s0));   /* against registration order */
    CHECK(ecs_system_precedes(w, s1, s2));
    CHECK(!ecs_system_precedes(w, s0, s1) && !ecs_system_precedes(w, s2, s1));
    CHECK(!ecs_system_precedes(w, s0, s2) && !ecs_system_precedes(w, s2, s0));
    ecs_world_free(w);

    /* the same in INSERTION follows registration order */
    w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ca = comp(w, "A"); cb = comp(w, "B");
    s0 = ADD(w, .name = "ReadsA", .reads = {ca});
    s1 = ADD(w, .name = "WritesAB", .writes = {ca, cb});
    s2 = ADD(w, .name = "ReadsB", .terms = {{cb, ECS_READ, ECS_AND}});
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s0, s1) && ecs_system_precedes(w, s1, s2));
    ecs_world_free(w);
}

TEST(systems_writers_first_both_writing_is_race) {
    ecs_world *w = world_of(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    ecs_id x = comp(w, "X"), y = comp(w, "Y");
    /* each writes something the other reads: no direction */
    ecs_system a = ADD(w, .name = "A", .writes = {x}, .reads = {y});
    ecs_system b = ADD(w, .name = "B", .writes = {y}, .reads = {x});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = race_of(&r, a, b);
    CHECK(p && p->id == x && !p->write_write);
    ecs_world_free(w);
}

TEST(systems_writers_first_path_orders_two_writers) {
    ecs_world *w = world_of(ECS_ORDER_WRITERS_FIRST);
    REQUIRE(w);
    ecs_id x = comp(w, "X"), y = comp(w, "Y"), z = comp(w, "Z");
    ecs_system p = ADD(w, .name = "P", .writes = {x, y});
    ecs_system q = ADD(w, .name = "R", .reads = {y}, .writes = {z});
    ecs_system s = ADD(w, .name = "S", .reads = {z}, .writes = {x});
    REQUIRE(p && q && s);
    EXPECT_VALID(w);   /* P and S both write X, but P -> R -> S orders them */
    CHECK(ecs_system_precedes(w, p, q));
    CHECK(ecs_system_precedes(w, q, s));
    CHECK(ecs_system_precedes(w, p, s));
    ecs_world_free(w);
}

TEST(systems_inference_follows_existing_path) {
    for (int o = 0; o < 3; o++) {
        ecs_world *w = world_of(all_orders[o]);
        REQUIRE(w);
        ecs_id x = comp(w, "X");
        ecs_system a = ADD(w, .name = "a", .writes = {x});
        ecs_system b = ADD(w, .name = "b", .writes = {x}, .before = {"a"});
        REQUIRE(a && b);
        ecs_report r;
        CHECKF(validate(w, &r) == ECS_OK, "order %d", o);
        CHECK_EQ_INT(r.count, 0);
        CHECK(ecs_system_precedes(w, b, a));
        CHECK(!ecs_system_precedes(w, a, b));
        ecs_world_free(w);
    }
    /* the path goes through a system registered after both */
    for (int o = 0; o < 3; o++) {
        ecs_world *w = world_of(all_orders[o]);
        REQUIRE(w);
        ecs_id x = comp(w, "X");
        ecs_system a = ADD(w, .name = "a", .writes = {x}, .after = {"c"});
        ecs_system b = ADD(w, .name = "b", .reads = {x}, .before = {"c"});
        ecs_system c = ADD(w, .name = "c");
        REQUIRE(a && b && c);
        ecs_report r;
        CHECKF(validate(w, &r) == ECS_OK, "order %d", o);
        if (r.count) print_report(&r);
        CHECK(ecs_system_precedes(w, b, c) && ecs_system_precedes(w, c, a));
        CHECK(ecs_system_precedes(w, b, a));
        CHECK(!ecs_system_precedes(w, a, b));
        ecs_world_free(w);
    }
}

TEST(systems_backward_edge_and_inference) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X"), y = comp(w, "Y");
    ecs_system a = ADD(w, .name = "a", .writes = {x});
    ecs_system b = ADD(w, .name = "b", .reads = {x}, .writes = {y});
    ecs_system c = ADD(w, .name = "c", .reads = {y}, .before = {"a"});
    REQUIRE(a && b && c);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, c, a));
    CHECK(ecs_system_precedes(w, a, b));
    CHECK(ecs_system_precedes(w, c, b));
    CHECK(!ecs_system_precedes(w, a, c) && !ecs_system_precedes(w, b, a) && !ecs_system_precedes(w, b, c));
    ecs_world_free(w);
}

TEST(systems_insertion_orders_nearest_first) {
    /* 0 writes X; 1 and 2 read X; 3 writes X: 3 runs after 1 and 2, which
       both run after 0; 1 and 2 stay unordered */
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system s0 = ADD(w, .name = "W0", .writes = {x});
    ecs_system s1 = ADD(w, .name = "R1", .reads = {x});
    ecs_system s2 = ADD(w, .name = "R2", .reads = {x});
    ecs_system s3 = ADD(w, .name = "W3", .writes = {x});
    REQUIRE(s0 && s1 && s2 && s3);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s0, s1) && ecs_system_precedes(w, s0, s2));
    CHECK(ecs_system_precedes(w, s1, s3) && ecs_system_precedes(w, s2, s3));
    CHECK(ecs_system_precedes(w, s0, s3));
    CHECK(!ecs_system_precedes(w, s1, s2) && !ecs_system_precedes(w, s2, s1));
    ecs_world_free(w);
}

/* ---- independent_of --------------------------------------------------------------- */
TEST(systems_independent_of_removes_inference_and_races) {
    for (int side = 0; side < 2; side++) {
        for (int o = 0; o < 3; o++) {
            ecs_world *w = world_of(all_orders[o]);
            REQUIRE(w);
            ecs_id x = comp(w, "X");
            ecs_system a, b;
            if (side == 0) {
                a = ADD(w, .name = "A", .writes = {x}, .independent_of = {"B"});
                b = ADD(w, .name = "B", .writes = {x});
            } else {
                a = ADD(w, .name = "A", .writes = {x});
                b = ADD(w, .name = "B", .reads = {x}, .independent_of = {"A"});
            }
            REQUIRE(a && b);
            ecs_report r;
            CHECKF(validate(w, &r) == ECS_OK, "side %d order %d", side, o);
            if (r.count) print_report(&r);
            CHECKF(!ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a),
                   "side %d order %d: an edge was inferred", side, o);
            ecs_world_free(w);
        }
    }
}

TEST(systems_independent_of_is_per_pair) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x});
    ecs_system b = ADD(w, .name = "B", .writes = {x}, .independent_of = {"A"});
    ecs_system c = ADD(w, .name = "C", .reads = {x});
    REQUIRE(a && b && c);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 2);
    CHECK(race_of(&r, a, b) == NULL);
    CHECK(race_of(&r, a, c) != NULL);
    CHECK(race_of(&r, b, c) != NULL);
    ecs_world_free(w);

    /* in INSERTION the other pairs are still ordered */
    w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    x = comp(w, "X");
    a = ADD(w, .name = "A", .writes = {x});
    b = ADD(w, .name = "B", .writes = {x}, .independent_of = {"A"});
    c = ADD(w, .name = "C", .reads = {x});
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, a, c) && ecs_system_precedes(w, b, c));
    CHECK(!ecs_system_precedes(w, a, b) && !ecs_system_precedes(w, b, a));
    ecs_world_free(w);
}

TEST(systems_independent_of_keeps_declared_order) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x});
    ecs_system b = ADD(w, .name = "B", .writes = {x}, .after = {"A"}, .independent_of = {"A"});
    REQUIRE(a && b);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, a, b));
    ecs_world_free(w);
}

/* ---- EXCLUSIVE ----------------------------------------------------------------------- */
TEST(systems_exclusive_ordered_in_insertion) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X"), y = comp(w, "Y");
    ecs_stage late = ecs_stage_add(w, "late");
    ecs_system s0 = ADD(w, .name = "S0", .reads = {x});
    ecs_system s1 = ADD(w, .name = "S1");
    ecs_system e = ADD(w, .name = "E", .flags = ECS_SYSTEM_EXCLUSIVE);
    ecs_system s3 = ADD(w, .name = "S3", .writes = {y});
    ecs_system s4 = ADD(w, .name = "S4", .reads = {x}, .stage = late);
    REQUIRE(s0 && s1 && e && s3 && s4);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, s0, e));
    CHECK(ecs_system_precedes(w, s1, e));
    CHECK(ecs_system_precedes(w, e, s3));
    CHECK(ecs_system_precedes(w, s0, s3));   /* through E */
    CHECK(ecs_system_precedes(w, e, s4));    /* stage order */
    CHECK(!ecs_system_precedes(w, s0, s1) && !ecs_system_precedes(w, s1, s0));
    ecs_world_free(w);
}

TEST(systems_exclusive_race_in_explicit) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_stage late = ecs_stage_add(w, "late");
    ecs_system e = ADD(w, .name = "Excl", .flags = ECS_SYSTEM_EXCLUSIVE);
    ecs_system s = ADD(w, .name = "Plain", .reads = {x});
    ecs_system t = ADD(w, .name = "Ordered", .after = {"Excl"});
    ecs_system u = ADD(w, .name = "OtherStage", .writes = {x}, .stage = late);
    REQUIRE(e && s && t && u);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = race_of(&r, e, s);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, e);
    CHECK_EQ_INT(p->b, s);
    CHECK_EQ_INT(p->id, 0);
    CHECKF(contains(p->message, "Excl") && contains(p->message, "Plain"), "%s", p->message);
    CHECK(race_of(&r, e, t) == NULL);
    CHECK(race_of(&r, e, u) == NULL);
    ecs_world_free(w);

    /* with a real contested id too, id is that id */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    x = comp(w, "X");
    s = ADD(w, .name = "Plain", .reads = {x});
    e = ADD(w, .name = "Excl", .flags = ECS_SYSTEM_EXCLUSIVE | ECS_SYSTEM_MAIN_THREAD, .writes = {x});
    REQUIRE(e && s);
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    p = race_of(&r, s, e);
    REQUIRE(p);
    CHECK_EQ_INT(p->a, s);
    CHECK_EQ_INT(p->id, x);
    CHECK(!p->write_write);
    ecs_world_free(w);

    /* two exclusive systems race with each other */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_system e1 = ADD(w, .name = "E1", .flags = ECS_SYSTEM_EXCLUSIVE);
    ecs_system e2 = ADD(w, .name = "E2", .flags = ECS_SYSTEM_EXCLUSIVE);
    REQUIRE(e1 && e2);
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    p = race_of(&r, e1, e2);
    CHECK(p && p->id == 0);
    ecs_world_free(w);
}

/* ---- stages ----------------------------------------------------------------------------- */
TEST(systems_declared_edge_against_stage_order_is_cycle) {
    for (int how = 0; how < 2; how++) {
        ecs_world *w = world_of(ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_stage late = ecs_stage_add(w, "late");
        ecs_system a, b;
        if (how == 0) {   /* an early system waits for a late one */
            a = ADD(w, .name = "Early", .after = {"Late"});
            b = ADD(w, .name = "Late", .stage = late);
        } else {          /* a late system claims to run before an early one */
            b = ADD(w, .name = "Late", .stage = late, .before = {"Early"});
            a = ADD(w, .name = "Early");
        }
        REQUIRE(a && b);
        ecs_report r;
        CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
        CHECK_EQ_INT(r.count, 1);
        const ecs_problem *p = first_kind(&r, ECS_PROBLEM_CYCLE);
        REQUIRE(p);
        CHECK_EQ_INT(p->cycle_len, 2);
        REQUIRE(p->cycle && p->cycle_len == 2);
        CHECKF((p->cycle[0] == a && p->cycle[1] == b) || (p->cycle[0] == b && p->cycle[1] == a),
               "cycle %u, %u", (unsigned)p->cycle[0], (unsigned)p->cycle[1]);
        CHECKF(contains(p->message, "Early") && contains(p->message, "Late") &&
               contains(p->message, "runs before"), "%s", p->message);
        /* stage order still decides precedes */
        CHECK(ecs_system_precedes(w, a, b));
        CHECK(!ecs_system_precedes(w, b, a));
        ecs_world_free(w);
    }
}

TEST(systems_declared_edge_along_stage_order_is_fine) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_stage late = ecs_stage_add(w, "late");
    ecs_system b = ADD(w, .name = "Late", .stage = late, .after = {"Early"});
    ecs_system a = ADD(w, .name = "Early", .before = {"Late"});
    REQUIRE(a && b);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, a, b));
    ecs_world_free(w);
}

TEST(systems_stage_added_later_invalidates) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x});
    REQUIRE(a);
    EXPECT_VALID(w);
    ecs_stage s1 = ecs_stage_add(w, "one");
    REQUIRE(s1);
    ecs_system b = ADD(w, .name = "B", .writes = {x}, .stage = s1);
    REQUIRE(b);
    EXPECT_VALID(w);
    CHECK(ecs_system_precedes(w, a, b));
    ecs_world_free(w);
}

/* ---- cycles -------------------------------------------------------------------------------- */
/* Whether from -> to is one of the n declared edges in e (pairs). */
static bool declared(const ecs_system (*e)[2], int n, ecs_system from, ecs_system to) {
    for (int i = 0; i < n; i++) if (e[i][0] == from && e[i][1] == to) return true;
    return false;
}
/* The loop is closed and simple, each step is a declared edge, it stays in
   the component, and members lists exactly the component, ascending. */
static void check_walk(const ecs_problem *p, const ecs_system (*e)[2], int n,
                       const ecs_system *members, int member_count) {
    REQUIRE(p->cycle && p->cycle_len > 0);
    CHECK(p->cycle_len <= p->member_count);
    for (int i = 0; i < p->cycle_len; i++) {
        ecs_system u = p->cycle[i], v = p->cycle[(i + 1) % p->cycle_len];
        CHECKF(declared(e, n, u, v), "step %d: %u -> %u is not a declared edge", i, (unsigned)u, (unsigned)v);
        for (int k = 0; k < i; k++) CHECKF(p->cycle[k] != u, "system %u repeats in the loop", (unsigned)u);
    }
    for (int i = 0; i < p->cycle_len; i++) {
        bool member = false;
        for (int k = 0; k < member_count; k++) member |= p->cycle[i] == members[k];
        CHECKF(member, "system %u is not in the component", (unsigned)p->cycle[i]);
    }
    REQUIRE(p->members);
    CHECK_EQ_INT(p->member_count, member_count);
    for (int k = 0; k < member_count && k < p->member_count; k++) {
        bool listed = false;
        for (int i = 0; i < p->member_count; i++) listed |= p->members[i] == members[k];
        CHECKF(listed, "system %u missing from members", (unsigned)members[k]);
        if (k) CHECK(p->members[k - 1] < p->members[k]);
    }
}

TEST(systems_cycle_of_three) {
    for (int o = 0; o < 3; o++) {
        ecs_world *w = world_of(all_orders[o]);
        REQUIRE(w);
        ecs_system a = ADD(w, .name = "A", .after = {"C"});
        ecs_system b = ADD(w, .name = "B", .after = {"A"});
        ecs_system c = ADD(w, .name = "C", .after = {"B"});
        ecs_system d = ADD(w, .name = "D", .after = {"C"});   /* reached from the cycle, not in it */
        REQUIRE(a && b && c && d);
        ecs_report r;
        CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
        CHECKF(r.count == 1, "order %d: %d problems", o, r.count);
        const ecs_problem *p = first_kind(&r, ECS_PROBLEM_CYCLE);
        REQUIRE(p);
        CHECK_EQ_INT(p->cycle_len, 3);
        REQUIRE(p->cycle && p->cycle_len == 3);
        /* A -> B -> C -> A, from whichever system the walk starts at */
        int k = p->cycle[0] == a ? 0 : p->cycle[1] == a ? 1 : p->cycle[2] == a ? 2 : -1;
        REQUIRE(k >= 0);
        CHECK_EQ_INT(p->cycle[(k + 1) % 3], b);
        CHECK_EQ_INT(p->cycle[(k + 2) % 3], c);
        const char *m = p->message;
        CHECKF(contains(m, "runs before \"B\"") && contains(m, "runs before \"C\"") &&
               contains(m, "runs before \"A\""), "%s", m);
        CHECKF(contains(m, "\"B\" lists \"A\" in after") && contains(m, "\"C\" lists \"B\" in after") &&
               contains(m, "\"A\" lists \"C\" in after"), "edges not explained: %s", m);
        CHECKF(!contains(m, "\"D\""), "D is not in the cycle: %s", m);
        ecs_world_free(w);
    }
}

TEST(systems_cycle_message_names_before_lists) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_system a = ADD(w, .name = "First", .before = {"Second"});
    ecs_system b = ADD(w, .name = "Second", .before = {"First"});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = first_kind(&r, ECS_PROBLEM_CYCLE);
    REQUIRE(p);
    CHECK_EQ_INT(p->cycle_len, 2);
    CHECKF(contains(p->message, "\"First\" lists \"Second\" in before") &&
           contains(p->message, "\"Second\" lists \"First\" in before"), "%s", p->message);
    ecs_world_free(w);
}

TEST(systems_self_edge_is_cycle) {
    for (int l = 0; l < 2; l++) {
        ecs_world *w = world_of(ECS_ORDER_INSERTION);
        REQUIRE(w);
        ecs_system o = ADD(w, .name = "Other");
        ecs_system a = l ? ADD(w, .name = "Self", .before = {"Self"}) : ADD(w, .name = "Self", .after = {"Self"});
        REQUIRE(o && a);
        ecs_report r;
        CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
        CHECK_EQ_INT(r.count, 1);
        const ecs_problem *p = first_kind(&r, ECS_PROBLEM_CYCLE);
        REQUIRE(p);
        CHECK_EQ_INT(p->cycle_len, 1);
        if (p->cycle && p->cycle_len == 1) CHECK_EQ_INT(p->cycle[0], a);
        CHECKF(contains(p->message, "Self"), "%s", p->message);
        CHECK(!ecs_system_precedes(w, a, a));
        ecs_world_free(w);
    }
}

TEST(systems_two_cycles_two_problems) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_system a = ADD(w, .name = "A", .after = {"B"});
    ecs_system c = ADD(w, .name = "C", .after = {"D"});
    ecs_system b = ADD(w, .name = "B", .after = {"A"});
    ecs_system d = ADD(w, .name = "D", .before = {"C"}, .after = {"C"});
    REQUIRE(a && b && c && d);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 2);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_CYCLE), 2);
    const ecs_system edges[][2] = {{b, a}, {a, b}, {d, c}, {d, c}, {c, d}};
    bool ab = false, cd = false;
    for (int i = 0; i < r.count; i++) {
        const ecs_problem *p = &r.problems[i];
        if (p->kind != ECS_PROBLEM_CYCLE || !p->cycle || p->cycle_len < 1) continue;
        if (p->cycle[0] == a || p->cycle[0] == b) {
            ab = true;
            check_walk(p, edges, 5, (ecs_system[]){a, b}, 2);
        } else {
            cd = true;
            check_walk(p, edges, 5, (ecs_system[]){c, d}, 2);
        }
    }
    CHECK(ab && cd);
    ecs_world_free(w);
}

TEST(systems_component_with_two_loops_is_one_cycle) {
    for (int o = 0; o < 3; o++) {
        ecs_world *w = world_of(all_orders[o]);
        REQUIRE(w);
        ecs_system a = ADD(w, .name = "A", .before = {"B"});
        ecs_system b = ADD(w, .name = "B", .before = {"A", "C"});
        ecs_system c = ADD(w, .name = "C", .before = {"B"});
        REQUIRE(a && b && c);
        ecs_report r;
        CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
        CHECKF(r.count == 1, "order %d: %d problems", o, r.count);
        const ecs_problem *p = first_kind(&r, ECS_PROBLEM_CYCLE);
        REQUIRE(p);
        CHECK_EQ_INT(p->cycle_len, 2);   /* the shortest loop, A B; members A B C */
        CHECK(p->cycle[0] == a && p->cycle[1] == b);
        const ecs_system edges[][2] = {{a, b}, {b, a}, {b, c}, {c, b}};
        check_walk(p, edges, 4, (ecs_system[]){a, b, c}, 3);
        CHECKF(strstr(p->message, "2 systems in the loop, 3 tangled in all") != NULL, "%s", p->message);
        ecs_world_free(w);
    }
}

TEST(systems_bigger_component_walk) {
    /* a ring of 6 with chords, all one component */
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_system s[6];
    s[0] = ADD(w, .name = "n0", .before = {"n1", "n3"});
    s[1] = ADD(w, .name = "n1", .before = {"n2"});
    s[2] = ADD(w, .name = "n2", .before = {"n3", "n0"});
    s[3] = ADD(w, .name = "n3", .before = {"n4"});
    s[4] = ADD(w, .name = "n4", .before = {"n5", "n2"});
    s[5] = ADD(w, .name = "n5", .before = {"n0"});
    for (int i = 0; i < 6; i++) REQUIRE(s[i]);
    const ecs_system edges[][2] = {{s[0], s[1]}, {s[0], s[3]}, {s[1], s[2]}, {s[2], s[3]}, {s[2], s[0]},
                                   {s[3], s[4]}, {s[4], s[5]}, {s[4], s[2]}, {s[5], s[0]}};
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    const ecs_problem *p = first_kind(&r, ECS_PROBLEM_CYCLE);
    REQUIRE(p);
    check_walk(p, edges, 9, s, 6);
    CHECK_EQ_INT(p->cycle_len, 3);   /* n0 n1 n2, the shortest through the first-registered */
    CHECK(p->cycle[0] == s[0] && p->cycle[1] == s[1] && p->cycle[2] == s[2]);
    ecs_world_free(w);
}

TEST(systems_races_reported_in_cyclic_graph) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X"), y = comp(w, "Y");
    ecs_system a = ADD(w, .name = "A", .after = {"B"}, .writes = {y});
    ecs_system b = ADD(w, .name = "B", .after = {"A"}, .writes = {y});   /* in the cycle: ordered */
    ecs_system c = ADD(w, .name = "C", .writes = {x});
    ecs_system d = ADD(w, .name = "D", .reads = {x});
    ecs_system e = ADD(w, .name = "E", .reads = {y});
    ecs_system f = ADD(w, .name = "F", .reads = {y}, .after = {"A"});   /* after the cycle */
    REQUIRE(a && b && c && d && e && f);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_CYCLE), 1);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_RACE), 3);
    CHECK_EQ_INT(r.count, 4);
    CHECK(race_of(&r, c, d) != NULL);
    CHECK(race_of(&r, a, e) != NULL);
    CHECK(race_of(&r, b, e) != NULL);
    CHECK(race_of(&r, a, b) == NULL);
    CHECK(race_of(&r, a, f) == NULL && race_of(&r, b, f) == NULL);
    ecs_world_free(w);
}

TEST(systems_cycle_in_insertion_has_no_races) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .after = {"B"}, .writes = {x});
    ecs_system b = ADD(w, .name = "B", .after = {"A"});
    ecs_system c = ADD(w, .name = "C", .writes = {x});
    ecs_system d = ADD(w, .name = "D", .reads = {x});
    REQUIRE(a && b && c && d);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_CYCLE), 1);
    CHECK(ecs_system_precedes(w, c, d));
    CHECK(ecs_system_precedes(w, a, c));
    ecs_world_free(w);
}

TEST(systems_all_problem_kinds_together) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x}, .after = {"Nobody"});
    ecs_system b = ADD(w, .name = "B", .writes = {x});
    ecs_system c = ADD(w, .name = "C", .after = {"C"});
    ecs_system d = ADD(w, .name = "A");
    REQUIRE(a && b && c && d);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 4);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_CYCLE), 1);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_RACE), 1);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_UNKNOWN_SYSTEM), 1);
    CHECK_EQ_INT(count_kind(&r, ECS_PROBLEM_DUPLICATE_NAME), 1);
    const char *err = ecs_last_error(w);
    CHECKF(err && err[0], "no error text after an invalid validation");
    ecs_world_free(w);
}

/* ---- the report ----------------------------------------------------------------------------- */
TEST(systems_validate_twice_same_report) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x}, .after = {"Ghost"});
    ecs_system b = ADD(w, .name = "B", .reads = {x});
    ecs_system c = ADD(w, .name = "C", .before = {"C"});
    REQUIRE(a && b && c);
    ecs_report r;
    CHECK_EQ_INT(ecs_validate(w, &r), ECS_ERR_INVALID_GRAPH);
    REQUIRE(r.count == 3);
    struct { ecs_problem_kind kind; ecs_system a, b; ecs_id id; char msg[512]; } copy[3];
    for (int i = 0; i < 3; i++) {
        copy[i].kind = r.problems[i].kind; copy[i].a = r.problems[i].a;
        copy[i].b = r.problems[i].b; copy[i].id = r.problems[i].id;
        snprintf(copy[i].msg, sizeof copy[i].msg, "%s", r.problems[i].message);
    }
    ecs_report r2;
    CHECK_EQ_INT(ecs_validate(w, &r2), ECS_ERR_INVALID_GRAPH);
    REQUIRE(r2.count == 3);
    for (int i = 0; i < 3; i++) {
        CHECK(r2.problems[i].kind == copy[i].kind);
        CHECK(r2.problems[i].a == copy[i].a && r2.problems[i].b == copy[i].b);
        CHECK(r2.problems[i].id == copy[i].id);
        CHECKF(!strcmp(r2.problems[i].message, copy[i].msg), "\"%s\" vs \"%s\"",
               r2.problems[i].message, copy[i].msg);
    }
    /* precedes does not disturb the report */
    (void)ecs_system_precedes(w, a, b);
    CHECK_EQ_INT(ecs_validate(w, NULL), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(ecs_validate(w, &r2), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r2.count, 3);
    ecs_world_free(w);
}

TEST(systems_adding_a_system_invalidates_report) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x});
    REQUIRE(a);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_OK);
    CHECK_EQ_INT(r.count, 0);
    ecs_system b = ADD(w, .name = "B", .reads = {x});
    REQUIRE(b);
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 1);
    CHECK(race_of(&r, a, b) != NULL);
    ecs_system c = ADD(w, .name = "C", .after = {"A"}, .before = {"B"});
    REQUIRE(c);
    CHECK_EQ_INT(validate(w, &r), ECS_OK);   /* A -> C -> B orders the pair */
    CHECK_EQ_INT(r.count, 0);
    CHECK(ecs_system_precedes(w, a, b));
    ecs_world_free(w);

    /* a forward reference resolved by a later registration */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    x = comp(w, "X");
    a = ADD(w, .name = "A", .writes = {x});
    b = ADD(w, .name = "B", .reads = {x}, .after = {"C"});
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);   /* C unknown */
    CHECK_EQ_INT(r.count, 2);
    c = ADD(w, .name = "C", .after = {"A"});
    REQUIRE(a && b && c);
    CHECK_EQ_INT(validate(w, &r), ECS_OK);
    CHECK_EQ_INT(r.count, 0);
    ecs_world_free(w);
}

TEST(systems_precedes_revalidates) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x});
    ecs_system b = ADD(w, .name = "B", .reads = {x});
    REQUIRE(a && b);
    CHECK(ecs_system_precedes(w, a, b));   /* no ecs_validate called */
    ecs_system c = ADD(w, .name = "C", .writes = {x});
    REQUIRE(c);
    CHECK(ecs_system_precedes(w, b, c));
    CHECK(ecs_system_precedes(w, a, c));
    ecs_world_free(w);
}

TEST(systems_report_print_lines) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .writes = {x}, .after = {"Ghost"});
    ecs_system b = ADD(w, .name = "B", .writes = {x});
    REQUIRE(a && b);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    REQUIRE(r.count == 2);
    FILE *f = tmpfile();
    REQUIRE(f);
    ecs_report_print(&r, f);
    char *text = test_read_all(f);
    fclose(f);
    REQUIRE(text);
    CHECKF(test_count_str(text, "\n") == 3, "expected 3 lines:\n%s", text);
    size_t len = strlen(text);
    CHECK(len > 0 && text[len - 1] == '\n');
    for (int i = 0; i < r.count; i++) CHECKF(contains(text, r.problems[i].message), "%s missing", r.problems[i].message);
    free(text);
    ecs_world_free(w);

    /* a valid graph: only the summary line */
    w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    REQUIRE(ADD(w, .name = "A"));
    CHECK_EQ_INT(validate(w, &r), ECS_OK);
    f = tmpfile();
    REQUIRE(f);
    ecs_report_print(&r, f);
    text = test_read_all(f);
    fclose(f);
    REQUIRE(text);
    CHECKF(test_count_str(text, "\n") == 1 && strlen(text) > 1, "expected one line: \"%s\"", text);
    free(text);
    ecs_world_free(w);
}

/* ---- DOT ----------------------------------------------------------------------------------- */
static char *dot_of(ecs_world *w, ecs_result *res) {
    FILE *f = tmpfile();
    if (!f) return NULL;
    *res = ecs_write_dot(w, f);
    char *text = test_read_all(f);
    fclose(f);
    return text;
}
/* The number of lines holding an edge (" -> "). */
static int dot_edges(const char *text, const char *with) {
    int n = 0;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        if (strstr(buf, "->") && (!with || strstr(buf, with))) n++;
        line = end ? end + 1 : NULL;
    }
    return n;
}

TEST(systems_dot_valid_graph) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_stage s1 = ecs_stage_add(w, "update"), s2 = ecs_stage_add(w, "render");
    REQUIRE(s1 && s2);
    ecs_system a = ADD(w, .name = "Writer", .writes = {x}, .stage = s1);
    ecs_system b = ADD(w, .name = "Reader", .reads = {x}, .stage = s1);   /* inferred after Writer */
    ecs_system c = ADD(w, .name = "Drawer", .stage = s2, .flags = ECS_SYSTEM_MAIN_THREAD);
    ecs_system d = ADD(w, .name = "Declared", .stage = s2, .after = {"Drawer"});
    REQUIRE(a && b && c && d);
    ecs_result res = ECS_ERR_ARG;
    char *text = dot_of(w, &res);
    REQUIRE(text);
    CHECK_EQ_INT(res, ECS_OK);
    CHECK(contains(text, "digraph"));
    CHECKF(test_count_str(text, "subgraph cluster") == 2, "one cluster per non-empty stage:\n%s", text);
    CHECK(contains(text, "update") && contains(text, "render") && !contains(text, "default"));
    CHECKF(dot_edges(text, "lhead=cluster") == 1, "one stage-order edge:\n%s", text);
    CHECK(contains(text, "Writer") && contains(text, "Reader") && contains(text, "Drawer"));
    CHECKF(dot_edges(text, "style=dashed") == 1, "one inferred edge:\n%s", text);
    CHECKF(dot_edges(text, NULL) == 3, "two system edges and the stage-order edge:\n%s", text);
    CHECK(!contains(text, "dotted"));
    CHECK(!contains(text, "penwidth"));
    /* the declared edge is plain */
    CHECKF(dot_edges(text, "dashed") + dot_edges(text, "dotted") + dot_edges(text, "red") +
           dot_edges(text, "lhead=") == 2, "declared edge styled:\n%s", text);
    size_t len = strlen(text);
    CHECK(len > 2 && text[len - 2] == '}');
    free(text);
    ecs_world_free(w);
}

TEST(systems_dot_invalid_graph) {
    ecs_world *w = world_of(ECS_ORDER_EXPLICIT);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    ecs_system a = ADD(w, .name = "A", .after = {"B"});
    ecs_system b = ADD(w, .name = "B", .after = {"A"});
    ecs_system c = ADD(w, .name = "C", .writes = {x});
    ecs_system d = ADD(w, .name = "D", .writes = {x}, .after = {"Ghost"});
    REQUIRE(a && b && c && d);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    ecs_result res = ECS_ERR_ARG;
    char *text = dot_of(w, &res);
    REQUIRE(text);
    CHECK_EQ_INT(res, ECS_OK);
    CHECK(contains(text, "digraph"));
    CHECKF(dot_edges(text, "dotted") == 1, "one race edge:\n%s", text);
    CHECKF(dot_edges(text, "penwidth") == 2, "two cycle edges:\n%s", text);
    CHECK(dot_edges(text, "style=dashed") == 0);
    free(text);
    /* also without validating first, and after a change */
    CHECK(ADD(w, .name = "E", .reads = {x}) != 0);
    text = dot_of(w, &res);
    REQUIRE(text);
    CHECK_EQ_INT(res, ECS_OK);
    CHECKF(dot_edges(text, "dotted") == 3, "three race edges:\n%s", text);
    free(text);
    ecs_world_free(w);
}

TEST(systems_dot_stage_cycle_edge) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_stage late = ecs_stage_add(w, "late");
    REQUIRE(ADD(w, .name = "Early", .after = {"Late"}));
    REQUIRE(ADD(w, .name = "Late", .stage = late));
    ecs_result res = ECS_ERR_ARG;
    char *text = dot_of(w, &res);
    REQUIRE(text);
    CHECK_EQ_INT(res, ECS_OK);
    CHECKF(dot_edges(text, "penwidth") == 1, "%s", text);
    free(text);
    ecs_world_free(w);
}

TEST(systems_dot_escapes_names) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_stage st = ecs_stage_add(w, "st\"age");
    REQUIRE(st);
    REQUIRE(ADD(w, .name = "say \"hi\""));
    REQUIRE(ADD(w, .name = "back\\slash", .stage = st));
    ecs_result res = ECS_ERR_ARG;
    char *text = dot_of(w, &res);
    REQUIRE(text);
    CHECK_EQ_INT(res, ECS_OK);
    /* system and stage names sit in HTML-like labels */
    CHECKF(contains(text, "say &quot;hi&quot;"), "quotes not escaped:\n%s", text);
    CHECKF(!contains(text, "say \"hi\""), "raw quotes:\n%s", text);
    CHECKF(contains(text, "<st&quot;age"), "stage name not escaped:\n%s", text);
    CHECKF(contains(text, "<back\\slash"), "backslash name:\n%s", text);
    free(text);
    REQUIRE(ADD(w, .name = "a<b&c>"));
    text = dot_of(w, &res);
    REQUIRE(text);
    CHECKF(contains(text, "a&lt;b&amp;c&gt;"), "HTML characters not escaped:\n%s", text);
    free(text);
    CHECK_EQ_INT(ecs_write_dot(w, NULL), ECS_ERR_ARG);
    ecs_world_free(w);
}

TEST(systems_stage_and_system_getters) {
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    CHECK_EQ_INT(ecs_stage_count(w), 1);
    ecs_stage late = ecs_stage_add(w, "late");
    CHECK_EQ_INT(ecs_stage_count(w), 2);
    ecs_system a = ADD(w, .name = "A"), b = ADD(w, .name = "B", .stage = late);
    REQUIRE(a && b);
    CHECK_EQ_INT(ecs_system_stage(w, a), 0);
    CHECK_EQ_INT(ecs_system_stage(w, b), late);
    CHECK_EQ_INT(ecs_system_stage(w, 0), 0);
    CHECK_EQ_INT(ecs_system_stage(w, 99), 0);
    CHECK_EQ_INT(ecs_stage_count(NULL), 0);
    ecs_world_free(w);
}

TEST(systems_many_separate_cycles) {
    /* 40 two-system loops in one stage: 40 CYCLE problems, never a false out-of-memory */
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    char names[80][16];
    for (int i = 0; i < 80; i++) snprintf(names[i], sizeof names[i], "L%d", i);
    for (int i = 0; i < 80; i++)
        REQUIRE(ADD(w, .name = names[i], .after = {names[i ^ 1]}));
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_ERR_INVALID_GRAPH);
    CHECK_EQ_INT(r.count, 40);
    for (int i = 0; i < r.count; i++) {
        CHECK_EQ_INT(r.problems[i].kind, ECS_PROBLEM_CYCLE);
        CHECK_EQ_INT(r.problems[i].cycle_len, 2);
    }
    ecs_world_free(w);
}

/* ---- scale ----------------------------------------------------------------------------------- */
TEST(systems_deep_chain_validates) {
    enum { N = 100000 };
    ecs_world *w = world_of(ECS_ORDER_INSERTION);
    REQUIRE(w);
    ecs_id x = comp(w, "X");
    char name[32], prev[32];
    ecs_system first = 0, last = 0;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "chain%d", i);
        ecs_system s = i ? ADD(w, .name = name, .reads = {x}, .after = {prev})
                         : ADD(w, .name = name, .reads = {x});
        if (!s) { CHECKF(0, "system %d: %s", i, ecs_last_error(w)); ecs_world_free(w); return; }
        if (!first) first = s;
        last = s;
        memcpy(prev, name, sizeof prev);
    }
    CHECK_EQ_INT(ecs_system_count(w), N);
    ecs_report r;
    CHECK_EQ_INT(validate(w, &r), ECS_OK);
    CHECK(ecs_system_precedes(w, first, last));
    CHECK(!ecs_system_precedes(w, last, first));
    CHECK(ecs_system_precedes(w, first + N / 2, last));
    CHECK(ecs_system_precedes(w, first, first + 1));
    CHECK(!ecs_system_precedes(w, first + 1, first));
    ecs_world_free(w);
}

void suite_systems(void) {
    RUN(systems_add_lookup_name_count);
    RUN(systems_stage_add_ids_and_names);
    RUN(systems_add_accepts_flags_and_chunks);
    RUN(systems_add_bad_desc_fails);
    RUN(systems_two_readers_never_conflict);
    RUN(systems_every_access_kind_conflicts);
    RUN(systems_resources_conflict);
    RUN(systems_not_terms_access_nothing);
    RUN(systems_list_after_zero_is_ignored);
    RUN(systems_different_stages_never_conflict);
    RUN(systems_race_lists_every_contested_id);
    RUN(systems_race_lowest_id_write_write);
    RUN(systems_after_and_before_order_a_pair);
    RUN(systems_forward_reference_in_after);
    RUN(systems_declared_order_is_transitive);
    RUN(systems_unknown_name_in_each_list);
    RUN(systems_unknown_names_one_problem_each);
    RUN(systems_duplicate_name_resolves_to_first);
    RUN(systems_seed003_insertion_and_writers_first);
    RUN(systems_seed003_explicit_without_declarations_races);
    RUN(systems_seed003_bullet_insertion);
    RUN(systems_seed003_bullet_writers_first);
    RUN(systems_seed003_bullet_explicit);
    RUN(systems_seed001_disjointness_not_transitive);
    RUN(systems_seed001_intersection_not_transitive);
    RUN(systems_writers_first_puts_writer_before_readers);
    RUN(systems_writers_first_both_writing_is_race);
    RUN(systems_writers_first_path_orders_two_writers);
    RUN(systems_inference_follows_existing_path);
    RUN(systems_backward_edge_and_inference);
    RUN(systems_insertion_orders_nearest_first);
    RUN(systems_independent_of_removes_inference_and_races);
    RUN(systems_independent_of_is_per_pair);
    RUN(systems_independent_of_keeps_declared_order);
    RUN(systems_exclusive_ordered_in_insertion);
    RUN(systems_exclusive_race_in_explicit);
    RUN(systems_declared_edge_against_stage_order_is_cycle);
    RUN(systems_declared_edge_along_stage_order_is_fine);
    RUN(systems_stage_added_later_invalidates);
    RUN(systems_cycle_of_three);
    RUN(systems_cycle_message_names_before_lists);
    RUN(systems_self_edge_is_cycle);
    RUN(systems_two_cycles_two_problems);
    RUN(systems_component_with_two_loops_is_one_cycle);
    RUN(systems_bigger_component_walk);
    RUN(systems_races_reported_in_cyclic_graph);
    RUN(systems_cycle_in_insertion_has_no_races);
    RUN(systems_all_problem_kinds_together);
    RUN(systems_validate_twice_same_report);
    RUN(systems_adding_a_system_invalidates_report);
    RUN(systems_precedes_revalidates);
    RUN(systems_report_print_lines);
    RUN(systems_dot_valid_graph);
    RUN(systems_dot_invalid_graph);
    RUN(systems_dot_stage_cycle_edge);
    RUN(systems_dot_escapes_names);
    RUN(systems_stage_and_system_getters);
    RUN(systems_many_separate_cycles);
    RUN(systems_deep_chain_validates);
}
