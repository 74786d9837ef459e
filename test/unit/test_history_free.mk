# SPDX-License-Identifier: Apache-2.0
# test_history_free — bp_history_free: the actions that need no history (libboxpolicy).
UNIT_DEPS_history_free := $(LIBBOXPOLICY)
UNIT_LIBS_history_free :=
