# SPDX-License-Identifier: Apache-2.0
# test/components.mk — which tests belong to which program or library, for
# `make check-COMPONENT` (e.g. check-boxd, check-box-shell, check-libboxpolicy).
#
# TESTS_c lists make patterns (one % each) over the tests `make check` runs
# ($(CHECK_PROGRAMS) $(CHECK_SCRIPTS), programs without the $(BUILD)/ prefix). A test
# may belong to several components (an end-to-end test belongs to each part it
# drives); every test belongs to at least one: test/layering/components.sh fails on a
# test no component names (make print-test-components lists them). check-COMPONENT
# builds what make check builds for the programs it runs, then runs only its tests,
# in parallel like make check, with the same summary line.

COMPONENTS := common proto libboxpolicy libpolicyclient boxctl boxd box-trampoline box-policyd box-gateway \
	box-clientd box-recheck box-alias libshell box-sh box-shell box-mcpd harness docs layering

TESTS_common := $(addprefix test/unit/test_,fdutil parse path peer privdrop spawn treewalk \
		hostprobe elfinterp logchain pbarena) \
	test/fuzz/replay_elfinterp
TESTS_proto := $(addprefix test/unit/test_,ipc plan_validate policy_proto policy_fields \
		policy_permits shell_validate proto_mcp proto_telemetry otlp_json) \
	$(addprefix test/fuzz/replay_,ipc plan shell otlp_json)
TESTS_libboxpolicy := $(addprefix test/unit/test_,policy explain suggest temporal temporal_incr \
		policy_history policy_index history_free) \
	test/fuzz/replay_policy bench/policy/smoke.sh test/differential/% test/temporal/% test/conformance/% \
	test/docs/policy-examples.sh test/integration/t-policy-%
# box-policyd's peers' client: its own test, and the askers' (each component below names it).
TESTS_libpolicyclient := test/unit/test_policy_client test/layering/symbols.sh
TESTS_boxctl := $(addprefix test/unit/test_,cmdline config init_template spec policy_history) \
	test/fuzz/replay_config test/config/% test/conformance/policy-cli.sh \
	test/integration/t-policy-% test/integration/t-init.sh test/integration/t-completion.sh \
	test/integration/t-install.sh test/integration/t-first-box.sh test/deb/% \
	test/integration/t-doctor.sh \
	test/integration/t-log-filters.sh test/integration/t-run% bench/replay/% \
	test/integration/t-kernel-refusals.sh \
	test/integration/t-shell-attach.sh test/integration/t-log-verify.sh
TESTS_boxd := $(addprefix test/unit/test_,plan cgroup_end tool_match recheck status_watch child \
	askfield) \
	$(addprefix test/fuzz/replay_,request recheck_reply) \
	test/config/check-vs-run.sh test/integration/t-run% test/integration/t-teardown-race.sh \
	test/integration/t-faults.sh test/integration/t-daemon-confine.sh \
	test/integration/t-mask-outside.sh test/integration/t-peer-pidns.sh \
	test/integration/t-tty.sh test/integration/t-first-box.sh test/integration/t-clientd.sh \
	test/integration/t-policyd.sh test/integration/t-gw-boxd.sh test/integration/t-gw-run.sh \
	test/integration/t-mcp-boxd% test/integration/t-shell-boxd.sh \
	test/integration/t-shell-attach.sh test/integration/t-telemetry-% \
	test/integration/t-supervise% test/integration/t-log-verify.sh test/integration/t-load.sh \
	test/integration/t-policy-prompt.sh test/integration/t-kernel-refusals.sh \
	test/integration/t-snapshot.sh
TESTS_box-trampoline := test/unit/test_view test/unit/test_kfilter test/unit/test_landlock test/integration/t-kernel-refusals.sh $(addprefix test/fuzz/replay_,view plan) \
	test/escape/% test/integration/t-tramp-shell.sh test/integration/t-run-views.sh \
	test/integration/t-run-masks.sh test/integration/t-mask-outside.sh \
	test/integration/t-supervise% bench/supervise/% test/integration/t-snapshot.sh
TESTS_box-policyd := $(addprefix test/unit/test_,declog otlplog policyd_history logchain) test/fuzz/replay_history \
	test/policyd/% bench/policyd/% test/integration/t-policyd.sh test/integration/t-policy-reload.sh \
	test/integration/t-policy-ask% \
	test/integration/t-run-noblock-end.sh test/integration/t-daemon-confine.sh \
	test/integration/t-shell-attach.sh test/integration/t-telemetry-% \
	test/integration/t-supervise% test/integration/t-log-verify.sh test/integration/t-load.sh \
	test/integration/t-kernel-refusals.sh
TESTS_box-gateway := test/unit/test_gw_% test/unit/test_policy_client test/fuzz/replay_gw_% test/gateway/% test/servers/% \
	test/integration/t-gw-% bench/gateway/% test/integration/t-load.sh \
	test/integration/t-daemon-confine.sh
TESTS_box-clientd := test/unit/test_clientd test/fuzz/replay_clientd test/integration/t-clientd.sh
TESTS_box-recheck := test/unit/test_recheck test/fuzz/replay_recheck_reply \
	test/integration/t-run-noblock.sh
TESTS_box-alias := test/unit/test_alias_parse test/alias/%
# The shell: the interpreter and its own commands (libshell/, libshell/cmd/), the standalone
# box-sh (box-sh/: the interpreter's differential and whole-script tests drive it too), the
# daemon (box-shell/). test/layering/shell.sh keeps the four apart.
TESTS_libshell := test/unit/test_sh_parse $(addprefix test/fuzz/replay_,sh_parse sh_interp) \
	test/shell/cmd/% test/shell/cmdfile/% test/shell/decide/test_fsops test/shell/diff/% \
	test/layering/shell.sh
TESTS_box-sh := test/shell/cmdfile/t-boxsh.sh test/shell/decide/% test/shell/diff/% \
	test/layering/shell.sh
TESTS_box-shell := test/unit/test_policy_client test/unit/test_shell_validate test/fuzz/replay_shell \
	test/shell/daemon/% test/integration/t-shell-% test/integration/t-tramp-shell.sh \
	bench/shell-box/% test/layering/shell.sh test/integration/t-load.sh
TESTS_box-mcpd := test/unit/test_mcp_% test/unit/test_policy_client test/unit/test_proto_mcp test/fuzz/replay_mcp test/mcp/% \
	test/policyd/test_mcp test/alias/t-alias-mcp.sh test/integration/t-mcp-% \
	test/gateway/t-gw-mcp% bench/mcp/% test/integration/t-supervise-mcp.sh \
	test/integration/t-daemon-confine.sh
# Real coding-agent harnesses in boxes: the whole product at once.
TESTS_harness := test/harness/%
# The documentation and the code's own structure.
TESTS_docs := test/docs/%
# each daemon's own seccomp allow-list, installed and crossed (test/unit/test_daemon_filters.c)
TESTS_layering := test/layering/% test/unit/test_daemon_filters

# Every test make check and make check-slow run, each spelled as TESTS_c spells it.
CHECK_TESTS = $(patsubst $(BUILD)/%,%,$(CHECK_PROGRAMS)) $(CHECK_SCRIPTS) $(SLOW_SCRIPTS)
# component_tests C: the tests of component C, as run-tests.sh takes them.
component_tests = $(foreach t,$(filter $(TESTS_$(1)),$(CHECK_TESTS)), \
	$(if $(filter $(t),$(CHECK_SCRIPTS) $(SLOW_SCRIPTS)),$(t),$(BUILD)/$(t)))

define component_rule
check-$(1):
	@scripts/deps.sh
	@$$(MAKE) --no-print-directory -j$$(JOBS) all \
		$$(filter $$(call component_tests,$(1)),$$(CHECK_PROGRAMS)) $$(CHECK_DEPS)
	@BOX_BUILD=$$(BUILD) BOX_BIN=$$(BIN) SAN=$$(SAN) test/run-tests.sh $$(call component_tests,$(1))
.PHONY: check-$(1)
endef
$(foreach c,$(COMPONENTS),$(eval $(call component_rule,$(c))))

# One line per test: the test, then the components it belongs to (none: a line with
# the test alone, which test/layering/components.sh refuses).
print-test-components:
	@$(foreach t,$(CHECK_TESTS),echo "$(strip $(t) $(foreach c,$(COMPONENTS),$(if $(filter $(TESTS_$(c)),$(t)),$(c))))";)
.PHONY: print-test-components

print-components:
	@echo $(COMPONENTS)
.PHONY: print-components
