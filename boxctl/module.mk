# SPDX-License-Identifier: Apache-2.0
# boxctl/ — the client binary. Links common/, proto/, libboxpolicy (offline
# policy tools) and libmcpd's pins module, nothing privileged.
BOXCTL_SRCS := $(wildcard boxctl/*.c)
BOXCTL_OBJS := $(BOXCTL_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/boxctl/init_templates.o
ALL_OBJS    += $(BOXCTL_OBJS)
PROGRAMS    += $(BIN)/boxctl

$(BOXCTL_OBJS): private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,inih jansson libprotobuf-c)

# libmcpd (box-mcpd/lib.mk): the pins file's pure module, for `boxctl mcp` (mcp.c).
$(BIN)/boxctl: $(BOXCTL_OBJS) $(LIBBOXPOLICY) $(LIBMCPD) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
# libcap: common/privdrop.c, for owner.c's child that asks the kernel as the box owner.
$(BIN)/boxctl: private MODULE_LDLIBS := $(call pkg_libs,inih jansson libprotobuf-c libcap) -lm \
	$(BORINGSSL_CRYPTO_LIBS)

# `boxctl init`'s templates (boxctl/init/*.in) compiled in as strings (init.h).
BOXCTL_INIT_TEMPLATES := $(sort $(wildcard boxctl/init/*.in))
$(BUILD)/boxctl/init_templates.c: $(BOXCTL_INIT_TEMPLATES) boxctl/init/embed.sh
	@mkdir -p $(@D)
	boxctl/init/embed.sh $@ $(BOXCTL_INIT_TEMPLATES)
$(BUILD)/boxctl/init_templates.o: $(BUILD)/boxctl/init_templates.c
	$(compile_c)
$(BUILD)/boxctl/init_templates.o: private MODULE_CPPFLAGS := -Iboxctl
.SECONDARY: $(BUILD)/boxctl/init_templates.c
