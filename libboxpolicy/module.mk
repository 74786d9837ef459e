# SPDX-License-Identifier: Apache-2.0
# libboxpolicy/ — the Cedar-compatible policy engine (pure: no I/O, no logging).
LIBBOXPOLICY_SRCS := $(wildcard libboxpolicy/*.c)
LIBBOXPOLICY_OBJS := $(LIBBOXPOLICY_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS          += $(LIBBOXPOLICY_OBJS)

$(LIBBOXPOLICY): $(LIBBOXPOLICY_OBJS)
	$(archive)
