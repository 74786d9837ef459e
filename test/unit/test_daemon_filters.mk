# SPDX-License-Identifier: Apache-2.0
# test_daemon_filters: each daemon's own allow-list function, linked from its object.
UNIT_DEPS_daemon_filters := $(BUILD)/box-policyd/seccomp.o $(BUILD)/box-recheck/seccomp.o \
	$(BUILD)/box-gateway/seccomp.o $(BUILD)/box-shell/daemon_seccomp.o \
	$(BUILD)/box-shell/daemon_seccomp_baked.o \
	$(BUILD)/box-clientd/seccomp.o $(BUILD)/box-mcpd/seccomp.o
UNIT_LIBS_daemon_filters := $(call pkg_libs,libseccomp)
