UNIT_DEPS_policy := $(LIBBOXPOLICY)
UNIT_LIBS_policy := -lpthread
