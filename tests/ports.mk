# tests/ports.mk - the ports, included by the Makefile; `make test` runs test-ports.
#   test-cxx-impl  the implementation compiled as C++ (g++, clang++), running the unit tests
#   test-mingw     Windows: MinGW-w64 builds (Win32 threads backend), run under Wine
#   test-wasm      the web: Emscripten (no threads), run under node
#   test-m32       a 32-bit x86 build
#   test-tcc       tcc (no atomics: the single-threaded build is chosen by itself), the examples
# Uses BUILD, WARN, REL and TESTSRC from the main Makefile.

CXXWARN   := -std=c++11 -Wall -Wextra -Wpedantic -Werror
MINGW     := x86_64-w64-mingw32-gcc
# msvcrt's printf lacks %zu: MinGW's own stdio has it
MINGWFLAGS := $(WARN) -O2 -D__USE_MINGW_ANSI_STDIO=1
WINE      := WINEDEBUG=-all WINEPREFIX=$(abspath $(BUILD))/wine wine
EMCC      := NODE_PATH=/usr/share/nodejs emcc
EMFLAGS   := $(WARN) -O2 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1 -sWASM_ASYNC_COMPILATION=0 -sENVIRONMENT=node
PORT_EXAMPLES := quickstart hooks rollback showcase gameloop events prefabs desync

.PHONY: test-ports test-cxx-impl test-mingw test-wasm test-m32 test-tcc
PORTBINS := $(BUILD)/tests_cxximpl $(BUILD)/tests_mingw.exe $(BUILD)/tests_mingw_il.exe $(BUILD)/tests_wasm.js \
            $(BUILD)/tests_wasm_mt.js $(BUILD)/tests_m32 $(PORT_EXAMPLES:%=$(BUILD)/ex_%.exe) \
            $(PORT_EXAMPLES:%=$(BUILD)/ex_%.js) $(PORT_EXAMPLES:%=$(BUILD)/ex_%.tcc)

# The examples of each port (these patterns win over the native $(BUILD)/ex_%).
$(BUILD)/ex_%.exe: examples/%.c ecs.h | $(BUILD)
	$(MINGW) $(MINGWFLAGS) -I. -o $@ $<
$(BUILD)/ex_%.js: examples/%.c ecs.h | $(BUILD)
	$(EMCC) $(EMFLAGS) -I. -o $@ $<
$(BUILD)/ex_%.tcc: examples/%.c ecs.h | $(BUILD)
	tcc -std=c11 -Wall -Werror -I. -o $@ $< -lm

test-ports: test-cxx-impl test-mingw test-wasm test-m32 test-tcc

$(BUILD)/tests_cxximpl: $(TESTSRC) $(TESTHDR) tests/cxx/impl.cpp | $(BUILD)
	g++ $(CXXWARN) $(REL) -c tests/cxx/impl.cpp -o $(BUILD)/impl_cxx.o
	clang++ $(CXXWARN) $(REL) -fsyntax-only tests/cxx/impl.cpp
	gcc $(WARN) $(REL) -DTEST_IMPL_ELSEWHERE -o $@ $(TESTSRC) $(BUILD)/impl_cxx.o -lm -lpthread
test-cxx-impl: $(BUILD)/tests_cxximpl
	@echo "== the implementation compiled as C++ (g++ -std=c++11), C unit tests, C++ std::string components"
	$< | tee -a $(BUILD)/summary
	g++ $(CXXWARN) -O1 -g -fsanitize=address,undefined tests/cxx/impl.cpp tests/cxx/hooks.cpp -o $(BUILD)/cxx_hooks_impl -lm -lpthread
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 $(BUILD)/cxx_hooks_impl | tee -a $(BUILD)/summary
	@echo "== the README's program (C: designated initialisers) on the implementation compiled as C++"
	awk '/^```c/{f=1;next} /^```/{if(f){exit}} f' README.md | sed '/^#define ECS_IMPLEMENTATION$$/d' > $(BUILD)/readme_user.c
	gcc $(WARN) -I. -o $(BUILD)/readme_cxx $(BUILD)/readme_user.c $(BUILD)/impl_cxx.o -lm -lpthread && $(BUILD)/readme_cxx > /dev/null

$(BUILD)/tests_mingw.exe: $(TESTSRC) $(TESTHDR) | $(BUILD)
	$(MINGW) $(MINGWFLAGS) -o $@ $(TESTSRC)
$(BUILD)/tests_mingw_il.exe: $(TESTSRC) $(TESTHDR) | $(BUILD)
	$(MINGW) $(MINGWFLAGS) -DECS_USE_INTERLOCKED -o $@ $(TESTSRC)
test-mingw: $(BUILD)/tests_mingw.exe $(BUILD)/tests_mingw_il.exe $(PORT_EXAMPLES:%=$(BUILD)/ex_%.exe)
	@echo "== MinGW-w64 (Win32 threads, __atomic), every test, under Wine"
	$(WINE) $(BUILD)/tests_mingw.exe | tee -a $(BUILD)/summary
	@echo "== MinGW-w64 with MSVC's _Interlocked atomics, scheduler tests, under Wine"
	$(WINE) $(BUILD)/tests_mingw_il.exe -f sched_ | tee -a $(BUILD)/summary
	@echo "== MinGW-w64 examples under Wine"
	cd $(BUILD) && $(WINE) ./ex_quickstart.exe > /dev/null && $(WINE) ./ex_hooks.exe > /dev/null \
		&& $(WINE) ./ex_rollback.exe > /dev/null && $(WINE) ./ex_gameloop.exe > /dev/null \
		&& $(WINE) ./ex_events.exe > /dev/null && $(WINE) ./ex_prefabs.exe > /dev/null && $(WINE) ./ex_desync.exe > /dev/null \
		&& $(WINE) ./ex_showcase.exe 10 > /dev/null

$(BUILD)/tests_wasm.js: $(TESTSRC) $(TESTHDR) | $(BUILD)
	$(EMCC) $(EMFLAGS) -o $@ $(TESTSRC)
$(BUILD)/tests_wasm_mt.js: $(TESTSRC) $(TESTHDR) | $(BUILD)
	$(EMCC) $(EMFLAGS) -pthread -sPTHREAD_POOL_SIZE=8 -sENVIRONMENT=node,worker -Wno-pthreads-mem-growth -o $@ $(TESTSRC)
test-wasm: $(BUILD)/tests_wasm.js $(BUILD)/tests_wasm_mt.js $(PORT_EXAMPLES:%=$(BUILD)/ex_%.js)
	@echo "== Emscripten (wasm32, no threads), every test at reduced scale, under node"
	timeout 1800 node $< --scale 20 | tee -a $(BUILD)/summary   # (no per-test limit under node)
	@echo "== Emscripten with -pthread (pool of 8), scheduler tests at reduced scale, under node"
	timeout 1800 node $(BUILD)/tests_wasm_mt.js -f sched_ --scale 20 | tee -a $(BUILD)/summary
	@echo "== Emscripten examples under node"
	cd $(BUILD) && node ex_quickstart.js > /dev/null && node ex_hooks.js > /dev/null \
		&& node ex_rollback.js > /dev/null && node ex_gameloop.js > /dev/null && node ex_events.js > /dev/null && node ex_prefabs.js > /dev/null \
		&& node ex_desync.js > /dev/null \
		&& node ex_showcase.js 10 > /dev/null

$(BUILD)/tests_m32: $(TESTSRC) $(TESTHDR) | $(BUILD)
	gcc $(WARN) $(REL) -m32 -Wno-clobbered -o $@ $(TESTSRC) -lm   # (a longjmp on failure only)
test-m32: $(BUILD)/tests_m32
	@echo "== gcc -m32 -O2 -DNDEBUG (i386)"
	$< | tee -a $(BUILD)/summary

test-tcc: $(PORT_EXAMPLES:%=$(BUILD)/ex_%.tcc)
	@echo "== tcc (no atomics: one thread, chosen by ecs.h), the examples"
	cd $(BUILD) && ./ex_quickstart.tcc > /dev/null && ./ex_hooks.tcc > /dev/null \
		&& ./ex_rollback.tcc > /dev/null && ./ex_gameloop.tcc > /dev/null && ./ex_events.tcc > /dev/null && ./ex_prefabs.tcc > /dev/null \
		&& ./ex_desync.tcc > /dev/null \
		&& ./ex_showcase.tcc 10 > /dev/null
