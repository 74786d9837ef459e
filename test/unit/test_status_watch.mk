# SPDX-License-Identifier: Apache-2.0
# test_status_watch — boxd/status.c, the one reader of a sandbox's status fd.
UNIT_DEPS_status_watch := $(BUILD)/boxd/status.o
UNIT_LIBS_status_watch :=
