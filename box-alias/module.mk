# SPDX-License-Identifier: Apache-2.0
# box-alias/ — the shell alias (README.md): one small static program that boxd
# copies into RUNTIME/bin as box-alias (sh bash zsh python3 python are links
# to it) and the trampoline mounts over the shells of /bin and /usr/bin in the
# agent's sandbox. Static (static-pie, static glibc and libprotobuf-c.a): it
# runs in every view that mounts it and resolves nothing (no NSS, no dlopen).
# The sanitizer runtimes cannot be linked statically: SAN= builds link it
# dynamically (the tests do not care; a box always gets the plain build's).
ALIAS_OBJS := $(BUILD)/box-alias/alias.o $(BUILD)/box-alias/main.o
ALL_OBJS   += $(ALIAS_OBJS)

$(ALIAS_OBJS): private MODULE_CPPFLAGS := -Iproto -Ibox-alias $(call pkg_cflags,libprotobuf-c)

LIBEXEC_PROGRAMS += $(BIN)/box-alias
$(BIN)/box-alias: $(ALIAS_OBJS) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
ifeq ($(SAN),)
$(BIN)/box-alias: private MODULE_LDLIBS := -static-pie -lprotobuf-c
else
$(BIN)/box-alias: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)
endif
