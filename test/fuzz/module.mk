# SPDX-License-Identifier: Apache-2.0
# test/fuzz/ — one target per decoder: test/fuzz/fuzz_NAME.c defines
# LLVMFuzzerTestOneInput; its committed corpus is test/fuzz/corpus/NAME/; a
# sidecar test/fuzz/fuzz_NAME.mk sets FUZZ_DEPS_NAME (objects and static libs
# to link), FUZZ_LIBS_NAME (linker flags) and optionally, for `make fuzz`,
# FUZZ_ARGS_NAME (libFuzzer flags) and FUZZ_SEEDS_NAME (more seed directories,
# only read).
#
# Every build links each target with fuzz-main.c into a replay program that
# runs in `make check` over the corpus. `make fuzz` (clang + libFuzzer) builds
# real fuzzers into build/fuzz and runs each for FUZZ_SECONDS.
include $(wildcard test/fuzz/fuzz_*.mk)

FUZZ_NAMES   := $(patsubst test/fuzz/fuzz_%.c,%,$(wildcard test/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
ALL_OBJS     += $(FUZZ_NAMES:%=$(BUILD)/test/fuzz/fuzz_%.o) $(BUILD)/test/fuzz/fuzz-main.o

define fuzz_replay_rule
$(BUILD)/test/fuzz/replay_$(1): $(BUILD)/test/fuzz/fuzz_$(1).o $(BUILD)/test/fuzz/fuzz-main.o $(FUZZ_DEPS_$(1)) $(LIBCOMMON)
	$$(link_program)
$(BUILD)/test/fuzz/replay_$(1): private MODULE_LDLIBS := $(FUZZ_LIBS_$(1))
$(BUILD)/test/fuzz/fuzz-main.o: private MODULE_CPPFLAGS := -DFUZZ_CORPUS_ROOT='"test/fuzz/corpus"'
CHECK_PROGRAMS += $(BUILD)/test/fuzz/replay_$(1)
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call fuzz_replay_rule,$(n))))

# libFuzzer builds: a separate tree compiled by clang with -fsanitize=fuzzer.
fuzz:
	@command -v clang >/dev/null || { echo "fuzz: clang is required (make deps)"; exit 1; }
	$(MAKE) CC=clang BUILD=build/fuzz SAN=address,undefined FUZZ=1 \
		$(FUZZ_NAMES:%=build/fuzz/test/fuzz/libfuzzer_%)
	@set -e; $(foreach n,$(FUZZ_NAMES), \
		mkdir -p build/fuzz/corpus/$(n); \
		echo "fuzz: $(n) for $(FUZZ_SECONDS)s"; \
		build/fuzz/test/fuzz/libfuzzer_$(n) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_ARGS_$(n)) \
			build/fuzz/corpus/$(n) test/fuzz/corpus/$(n) $(FUZZ_SEEDS_$(n));)

ifeq ($(FUZZ),1)
define fuzz_libfuzzer_rule
$(BUILD)/test/fuzz/libfuzzer_$(1): $(BUILD)/test/fuzz/fuzz_$(1).o $(FUZZ_DEPS_$(1)) $(LIBCOMMON)
	@mkdir -p $$(@D)
	$$(CC) $$(BOX_CFLAGS) -fsanitize=fuzzer $$(BOX_LDFLAGS) -o $$@ $$(filter %.o,$$^) \
		$$(filter %.a,$$^) $(FUZZ_LIBS_$(1))
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call fuzz_libfuzzer_rule,$(n))))
endif
