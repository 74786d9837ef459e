# boxctl/ — the client binary. Links common/, proto/, libboxpolicy (offline
# policy tools) and libmcpd's pins module, nothing privileged.
BOXCTL_SRCS := $(wildcard boxctl/*.c)
BOXCTL_OBJS := $(BOXCTL_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS    += $(BOXCTL_OBJS)
PROGRAMS    += $(BIN)/boxctl

$(BOXCTL_OBJS): private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,inih jansson libprotobuf-c)

# libmcpd (box-mcpd/lib.mk): the pins file's pure module, for `boxctl mcp` (mcp.c).
$(BIN)/boxctl: $(BOXCTL_OBJS) $(LIBBOXPOLICY) $(LIBMCPD) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
# libcap: common/privdrop.c, for owner.c's child that asks the kernel as the box owner.
$(BIN)/boxctl: private MODULE_LDLIBS := $(call pkg_libs,inih jansson libprotobuf-c libcap) -lm
