# SPDX-License-Identifier: Apache-2.0
# test/harness/ — real coding-agent harnesses (Claude Code, Codex, Gemini CLI; pinned in
# package-lock.json, installed by `make deps` in test/harness/where.sh's directory) in boxes
# made by `boxctl init`, each against a loopback mock of its model API (model-mock.py), and
# outside any box, as the caller and as boxtest (lib-harness.sh).
# Each starts a real harness several times (over 30 s): make check-slow.
SLOW_SCRIPTS  += test/harness/t-harness-claude.sh test/harness/t-harness-codex.sh \
	test/harness/t-harness-gemini.sh
CHECK_DEPS    += $(BIN)/box-mcpd $(BIN)/box-shell $(BIN)/box-sh
