# SPDX-License-Identifier: Apache-2.0
# test_suggest — "did you mean" and the permit-everything warning (libboxpolicy).
UNIT_DEPS_suggest := $(LIBBOXPOLICY)
UNIT_LIBS_suggest :=
