# SPDX-License-Identifier: Apache-2.0
# fuzz_otlp_json — OTLP/JSON and binary OTLP bodies (proto/otlp_json.c, proto/otlp_tag.c).
FUZZ_DEPS_otlp_json := $(LIBPROTO)
FUZZ_LIBS_otlp_json := $(call pkg_libs,libprotobuf-c) -lm
$(BUILD)/test/fuzz/fuzz_otlp_json.o: private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,libprotobuf-c)
