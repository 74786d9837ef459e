# SPDX-License-Identifier: Apache-2.0
# test_cgroup_end: boxd/cgroup.c's removal of a box's cgroups from the event loop (root).
UNIT_DEPS_cgroup_end := $(BUILD)/boxd/cgroup.o
