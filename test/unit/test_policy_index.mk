UNIT_DEPS_policy_index := $(LIBBOXPOLICY)
