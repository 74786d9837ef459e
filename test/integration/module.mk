# test/integration/ — shell tests against the built binaries (t-*.sh, TAP-like).
CHECK_SCRIPTS += $(sort $(wildcard test/integration/t-*.sh))

# The racing owner of t-teardown-race.sh.
$(BIN)/box-test-swap: test/integration/swap-race.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -o $@ $<
CHECK_DEPS += $(BIN)/box-test-swap
