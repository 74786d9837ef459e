# SPDX-License-Identifier: Apache-2.0
# test/escape/ — the escape suite (docs/sandbox.md "Expected outcomes").
#
# box-sandbox-run plays boxd: it builds a plan from flags and runs
# box-trampoline. probe is the agent: a static program (dynamic when this
# host has no static libc) that tries one escape per run beside a positive
# control. escape.sh runs every case as root and as the user `boxtest`;
# layers.sh checks that a required layer that is missing refuses the start.
ESCAPE_RUN_OBJS := $(BUILD)/test/escape/box-sandbox-run.o
ALL_OBJS        += $(ESCAPE_RUN_OBJS)

$(ESCAPE_RUN_OBJS): private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,libprotobuf-c)

$(BIN)/box-sandbox-run: $(ESCAPE_RUN_OBJS) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-sandbox-run: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)

# The probe: static, no PIE (a static-pie needs nothing from the host either,
# but plain -static is what Debian's libc.a supports everywhere).
ESCAPE_STATIC := $(shell test -e /usr/lib/$(MULTIARCH)/libc.a && echo -static)
$(BIN)/box-escape-probe: test/escape/probe.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-format-truncation \
		$(ESCAPE_STATIC) -o $@ $<

# Build them with `make check`; the scripts find them in $(BIN).
CHECK_DEPS += $(BIN)/box-sandbox-run $(BIN)/box-escape-probe $(BIN)/box-trampoline
CHECK_SCRIPTS += test/escape/escape.sh test/escape/layers.sh
