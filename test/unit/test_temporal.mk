# SPDX-License-Identifier: Apache-2.0
# test_temporal — the incremental temporal monitor (libboxpolicy).
UNIT_DEPS_temporal := $(LIBBOXPOLICY)
UNIT_LIBS_temporal :=
