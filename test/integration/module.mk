# test/integration/ — shell tests against the built binaries (t-*.sh, TAP-like).
CHECK_SCRIPTS += $(sort $(wildcard test/integration/t-*.sh))
