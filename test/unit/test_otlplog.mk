# SPDX-License-Identifier: Apache-2.0
# test_otlplog: box-policyd's OTLP records (otlplog.c), checked against proto/otlp_json.c.
UNIT_DEPS_otlplog := $(BUILD)/box-policyd/otlplog.o
UNIT_CPPFLAGS_otlplog := -Iproto
UNIT_LIBS_otlplog := -lm
