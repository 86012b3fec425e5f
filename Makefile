# ecs.h - build, test, bench.
#   make run     the showcase
#   make test    every test configuration (gcc/clang, sanitizers, release, C++, and the
#                ports: MinGW under Wine, Emscripten under node, -m32, C++ implementation)
#   make lint    the shape of ecs.h: CONTENTS, prototypes, sizes, docs (part of test)
#   make bench   the benchmarks (-O3 -DNDEBUG), printed as ratios to plain arrays
#   make fuzz    the API fuzzer (libFuzzer) for FUZZ_SECONDS (default 300)

CC      ?= cc
WARN    := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Werror
SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
REL     := -O2 -DNDEBUG
BUILD   := build
TESTSRC := $(filter-out tests/fuzz_api.c,$(wildcard tests/*.c))
TESTHDR := tests/test.h tests/old_saves.h ecs.h
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/ex_%,$(wildcard examples/*.c))

SHELL   := /bin/bash
.SHELLFLAGS := -o pipefail -c   # a crashing test binary must fail its `| tee` line
.PHONY: all run test lint bench clean examples test-config test-asan test-release test-gen4 test-cxx test-readme \
        test-tsan test-helgrind test-nothreads test-shuffle test-examples

all: examples $(BUILD)/tests_asan

$(BUILD):
	@mkdir -p $(BUILD)

# ---- tests ---------------------------------------------------------------
$(BUILD)/tests_asan: $(TESTSRC) $(TESTHDR) | $(BUILD)
	gcc $(WARN) $(SAN) -o $@ $(TESTSRC) -lm
$(BUILD)/tests_release: $(TESTSRC) $(TESTHDR) | $(BUILD)
	clang $(WARN) $(REL) -DECS_USE_STDATOMIC -o $@ $(TESTSRC) -lm   # the C11 atomics path
$(BUILD)/tests_gen4: $(TESTSRC) $(TESTHDR) | $(BUILD)
	gcc $(WARN) $(REL) -DECS_GENERATION_BITS=4 -DECS_PENDING_SERIAL_BITS=16 -o $@ $(TESTSRC) -lm
# ThreadSanitizer needs the pthread backend (it crashes on C11 thrd_create
# with this glibc): ecs.h picks it by itself under -fsanitize=thread; the
# explicit ECS_USE_PTHREADS is compiled too. helgrind runs the C11 backend
# with annotated hand-offs.
$(BUILD)/tests_tsan: $(TESTSRC) $(TESTHDR) | $(BUILD)
	gcc $(WARN) -O1 -g -fsanitize=thread -o $@ $(TESTSRC) -lm -lpthread
	clang $(WARN) -O1 -fsanitize=thread -DECS_USE_PTHREADS -fsyntax-only $(TESTSRC)
$(BUILD)/tests_hg: $(TESTSRC) $(TESTHDR) | $(BUILD)
	gcc $(WARN) -O1 -g -DECS_VALGRIND -o $@ $(TESTSRC) -lm
$(BUILD)/tests_nothreads: $(TESTSRC) $(TESTHDR) | $(BUILD)
	clang $(WARN) $(REL) -DECS_NO_THREADS -o $@ $(TESTSRC) -lm
# Every world shuffled, each with its own seed (ECS_SHUFFLE_SEED): a correct
# program's results do not depend on the order the graph leaves open, so
# every test passes as it is, worlds it compares shuffled differently.
$(BUILD)/tests_shuffle: $(TESTSRC) $(TESTHDR) | $(BUILD)
	gcc $(WARN) $(REL) -DECS_SHUFFLE_SEED=0x5eed5eed -o $@ $(TESTSRC) -lm -lpthread

# Each configuration appends its closing line to $(BUILD)/summary; `test`
# prints the total as the last line.
test-asan: $(BUILD)/tests_asan
	@echo "== gcc, ASan+UBSan"; ASAN_OPTIONS=detect_leaks=1 $< | tee -a $(BUILD)/summary
test-release: $(BUILD)/tests_release
	@echo "== clang -O2 -DNDEBUG, C11 <stdatomic.h>"; $< | tee -a $(BUILD)/summary
test-gen4: $(BUILD)/tests_gen4
	@echo "== gcc -O2 -DNDEBUG, 4-bit generations, 16-bit command-buffer serials"; $< | tee -a $(BUILD)/summary
test-tsan: $(BUILD)/tests_tsan
	@echo "== gcc ThreadSanitizer (pthreads, chosen by ecs.h), scheduler tests, reduced scale"; TSAN_OPTIONS=halt_on_error=1 $< -f sched_ --scale 30 | tee -a $(BUILD)/summary
test-helgrind: $(BUILD)/tests_hg
	@echo "== valgrind helgrind (C11 threads), scheduler tests, reduced scale"
	valgrind --tool=helgrind -q --error-exitcode=3 $< -f sched_ --scale 20 | tee -a $(BUILD)/summary
test-nothreads: $(BUILD)/tests_nothreads
	@echo "== clang -O2 -DNDEBUG -DECS_NO_THREADS"; $< | tee -a $(BUILD)/summary
test-shuffle: $(BUILD)/tests_shuffle
	@echo "== gcc -O2 -DNDEBUG, every world shuffled (ECS_SHUFFLE_SEED)"; $< | tee -a $(BUILD)/summary

test-examples: examples
	@echo "== examples run (showcase: 20 frames)"
	cd $(BUILD) && ./ex_quickstart > /dev/null && ./ex_poison > /dev/null && ./ex_validate > /dev/null && ./ex_hooks > /dev/null && ./ex_rollback > /dev/null \
		&& ./ex_gameloop > /dev/null && ./ex_events > /dev/null && ./ex_prefabs > /dev/null && ./ex_desync > /dev/null \
		&& ./ex_showcase 20 > /dev/null && ./ex_showcase 12 --check-reads > /dev/null

test-config: | $(BUILD)
	@echo "== a half-set ECS_REALLOC / ECS_FREE stops the build with an #error"
	printf '#include <stdlib.h>\n#define ECS_REALLOC(p, n) realloc((p), (n))\n#define ECS_IMPLEMENTATION\n#include "../ecs.h"\nint main(void) { return 0; }\n' > $(BUILD)/halfalloc.c
	! gcc -std=c11 -fsyntax-only $(BUILD)/halfalloc.c 2> $(BUILD)/halfalloc.err
	grep -q "define both ECS_REALLOC and ECS_FREE" $(BUILD)/halfalloc.err
	@echo "== ECS_NO_STDIO: the public part without <stdio.h>, the implementation without FILE * calls"
	printf '#define ECS_NO_STDIO\n#include "../ecs.h"\n' > $(BUILD)/nostdio.c
	! gcc -std=c11 -E $(BUILD)/nostdio.c | grep -q 'stdio\.h'
	printf '#define ECS_NO_STDIO\n#define ECS_IMPLEMENTATION\n#include "../ecs.h"\n#ifdef ECS_H\nint main(void) { return 0; }\n#endif\n' > $(BUILD)/nostdio_impl.c
	gcc $(WARN) -c -o $(BUILD)/nostdio_impl.o $(BUILD)/nostdio_impl.c

test-cxx: | $(BUILD)
	@echo "== public header as C++"
	printf '#include "../ecs.h"\nint main() { return ecs_world_new(nullptr) == nullptr; }\n' > $(BUILD)/cxx.cpp
	g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $(BUILD)/cxx.cpp
	clang++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $(BUILD)/cxx.cpp
	@echo "== C++ components that own memory (std::string), implementation in a C file, ASan"
	gcc -std=c11 $(SAN) -c tests/cxx/impl.c -o $(BUILD)/cxx_impl.o
	g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror $(SAN) tests/cxx/hooks.cpp $(BUILD)/cxx_impl.o -o $(BUILD)/cxx_hooks -lm
	clang++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only tests/cxx/hooks.cpp
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 $(BUILD)/cxx_hooks | tee -a $(BUILD)/summary
test-readme: README.md ecs.h | $(BUILD)
	@echo "== README example"
	awk '/^```c/{f=1;next} /^```/{if(f){exit}} f' README.md > $(BUILD)/readme.c
	gcc $(WARN) -I. -o $(BUILD)/readme $(BUILD)/readme.c && $(BUILD)/readme > /dev/null
	clang $(WARN) -I. -o $(BUILD)/readme_clang $(BUILD)/readme.c

# The binaries are built first, as many at a time as there are cores (the
# compiles are most of the time); then the tests run one configuration at a
# time, so the threaded ones have the cores to themselves.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
TESTBINS  = $(BUILD)/tests_asan $(BUILD)/tests_release $(BUILD)/tests_gen4 $(BUILD)/tests_tsan \
            $(BUILD)/tests_hg $(BUILD)/tests_nothreads $(BUILD)/tests_shuffle $(FUZZBINS) $(PORTBINS)   # (the .mk files below)
test: | $(BUILD)
	@rm -f $(BUILD)/summary
	@$(MAKE) --no-print-directory -j$(JOBS) $(TESTBINS) examples
	@$(MAKE) --no-print-directory lint test-config test-cxx test-readme test-examples test-asan test-release test-gen4 \
		test-nothreads test-shuffle test-fuzz-corpus test-tsan test-helgrind test-ports
	@awk '/^[0-9]+ passed, [0-9]+ failed$$/{p+=$$1; f+=$$3} END{printf "total: %d passed, %d failed\n", p, f; exit f>0}' $(BUILD)/summary

# ---- lint: the shape of ecs.h (tests/lint.awk says what it checks) -------
# It must also fail on a header that breaks each rule: a second prototype, a
# function of 121 lines, a missing blank line, an undocumented public
# function, a banner CONTENTS does not list.
lint: | $(BUILD)
	@echo "== lint: CONTENTS, prototypes, function and section sizes, public docs"
	awk -f tests/lint.awk ecs.h
	@sed 's|^static bool ecs__query_match(const ecs_query \*q, const ecs__table \*t, ecs__match \*m);|&\n&|' ecs.h > $(BUILD)/lint1.h
	@awk '/^static bool ecs__stage_build\(/{print; for (i = 0; i < 120; i++) print "    (void)0;"; next} 1' ecs.h > $(BUILD)/lint2.h
	@awk '{print} /^static bool ecs__stage_build\(/{f=1} f && /^}$$/ {getline; f=0}' ecs.h > $(BUILD)/lint3.h
	@sed 's|^/\* Live entities (pending and reserved ones not included). \*/$$||' ecs.h > $(BUILD)/lint4.h
	@sed 's|>>hash: the world hash|>>hashes: the world hash|' ecs.h > $(BUILD)/lint5.h
	@for k in 1 2 3 4 5; do ! awk -f tests/lint.awk $(BUILD)/lint$$k.h > /dev/null || { echo "lint missed mutant $$k"; exit 1; }; done

# ---- examples ------------------------------------------------------------
examples: $(EXAMPLES)
$(BUILD)/ex_%: examples/%.c ecs.h | $(BUILD)
	gcc $(WARN) -O2 -I. -o $@ $< -lm
	clang $(WARN) -O2 -I. -o $@_clang $< -lm

run: $(BUILD)/ex_showcase
	$(BUILD)/ex_showcase

# ---- bench ---------------------------------------------------------------
$(BUILD)/bench: bench/*.c ecs.h | $(BUILD)
	gcc $(WARN) -O3 -DNDEBUG -I. -o $@ bench/*.c -lm
bench: $(BUILD)/bench $(BUILD)/ex_showcase
	$(BUILD)/bench
	$(BUILD)/ex_showcase 200 --hash-trace

clean:
	rm -rf $(BUILD)

include tests/fuzz.mk
include tests/ports.mk
