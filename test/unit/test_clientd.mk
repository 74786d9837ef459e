# SPDX-License-Identifier: Apache-2.0
# test_clientd — box-clientd's decode → validate → re-encode on the fuzz seeds.
UNIT_DEPS_clientd := $(BUILD)/box-clientd/forward.o
