# tests/fuzz.mk - the API fuzzer (tests/fuzz_api.c), included by the Makefile.
#   make test-fuzz-corpus   replay tests/corpus/ under ASan+UBSan, gcc and clang (seconds)
#   make fuzz               libFuzzer for $(FUZZ_SECONDS) seconds on a copy of the corpus
# Uses BUILD, WARN and SAN from the main Makefile.

FUZZ_SECONDS ?= 300
FUZZ_SRC     := tests/fuzz_api.c
FUZZ_CORPUS  := tests/corpus
FUZZ_FLAGS   ?= -max_len=4096 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1

.PHONY: test-fuzz-corpus fuzz
FUZZBINS := $(BUILD)/fuzz_replay $(BUILD)/fuzz_replay_clang

# The corpus replayed without libFuzzer: a plain main() runs every file.
$(BUILD)/fuzz_replay: $(FUZZ_SRC) ecs.h | $(BUILD)
	gcc $(WARN) $(SAN) -DFUZZ_REPLAY_MAIN -o $@ $(FUZZ_SRC) -lm

# clang's UBSan also refuses arithmetic on a null pointer (NULL + 0), as libFuzzer builds do.
$(BUILD)/fuzz_replay_clang: $(FUZZ_SRC) ecs.h | $(BUILD)
	clang $(WARN) $(SAN) -DFUZZ_REPLAY_MAIN -o $@ $(FUZZ_SRC) -lm

test-fuzz-corpus: $(BUILD)/fuzz_replay $(BUILD)/fuzz_replay_clang
	@echo "== fuzz corpus replay (gcc, ASan+UBSan, $(words $(wildcard $(FUZZ_CORPUS)/*)) inputs)"
	ASAN_OPTIONS=detect_leaks=1 $< $(FUZZ_CORPUS) | tee -a $(BUILD)/summary
	@echo "== fuzz corpus replay (clang, ASan+UBSan)"
	ASAN_OPTIONS=detect_leaks=1 $(BUILD)/fuzz_replay_clang $(FUZZ_CORPUS) | tee -a $(BUILD)/summary

# libFuzzer: fuzzes a copy of the corpus, so tests/corpus/ stays as committed.
# Crashes land in $(BUILD)/fuzz-crash-*; minimize one with
#   $(BUILD)/fuzz_api -minimize_crash=1 -runs=10000 <file>
$(BUILD)/fuzz_api: $(FUZZ_SRC) ecs.h | $(BUILD)
	clang $(WARN) -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -DFUZZ_LIBFUZZER -o $@ $(FUZZ_SRC) -lm

fuzz: $(BUILD)/fuzz_api
	@mkdir -p $(BUILD)/fuzz_corpus
	cp -n $(FUZZ_CORPUS)/* $(BUILD)/fuzz_corpus/ 2>/dev/null || true
	$< $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz- $(BUILD)/fuzz_corpus
