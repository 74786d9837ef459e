# SPDX-License-Identifier: Apache-2.0
# test_explain — the explain API of libboxpolicy (bp_explain, the monitor's explain hook).
UNIT_DEPS_explain := $(LIBBOXPOLICY)
UNIT_LIBS_explain :=
