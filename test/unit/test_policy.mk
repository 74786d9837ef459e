# SPDX-License-Identifier: Apache-2.0
UNIT_DEPS_policy := $(LIBBOXPOLICY)
UNIT_LIBS_policy := -lpthread
