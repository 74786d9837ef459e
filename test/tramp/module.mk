# SPDX-License-Identifier: Apache-2.0
# test/tramp/ — the workload probe of test/integration/t-tramp-shell.sh (box-shell's
# sandbox, pass_fds, workload_bin, a tool's stdio). Static like the escape probe.
$(BIN)/box-test-tramp-probe: test/tramp/probe.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-format-truncation \
		$(ESCAPE_STATIC) -o $@ $<
CHECK_DEPS += $(BIN)/box-test-tramp-probe $(BIN)/box-sandbox-run $(BIN)/box-trampoline
