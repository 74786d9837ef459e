# common/ — libboxcommon.a: log, cleanup, parsers, fds, paths, privdrop, IPC.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS    += $(COMMON_OBJS)

$(COMMON_OBJS): private MODULE_CPPFLAGS := $(call pkg_cflags,libprotobuf-c libevent)

$(LIBCOMMON): $(COMMON_OBJS)
	$(archive)
