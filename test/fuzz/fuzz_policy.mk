# SPDX-License-Identifier: Apache-2.0
FUZZ_DEPS_policy := $(LIBBOXPOLICY)
FUZZ_LIBS_policy :=
