# SPDX-License-Identifier: Apache-2.0
UNIT_DEPS_policy_index := $(LIBBOXPOLICY)
