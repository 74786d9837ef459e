# SPDX-License-Identifier: Apache-2.0
# fuzz_history — box-policyd's history recovery: history.c alone, then through
# the engine's recovery passes (engine.c + libboxpolicy).
FUZZ_DEPS_history := $(BUILD)/box-policyd/history.o $(BUILD)/box-policyd/engine.o \
	$(LIBBOXPOLICY) $(LIBPROTO)
FUZZ_LIBS_history := $(call pkg_libs,libprotobuf-c jansson)

# The seed corpus's generator (not in `make check`; see its header).
ALL_OBJS += $(BUILD)/test/fuzz/tools/gen_history_corpus.o
$(BUILD)/test/fuzz/gen_history_corpus: $(BUILD)/test/fuzz/tools/gen_history_corpus.o \
	$(FUZZ_DEPS_history) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/fuzz/gen_history_corpus: private MODULE_LDLIBS := $(FUZZ_LIBS_history)
