FUZZ_DEPS_policy := $(LIBBOXPOLICY)
FUZZ_LIBS_policy :=
