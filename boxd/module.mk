# SPDX-License-Identifier: Apache-2.0
# boxd/ — the box daemon (service and embedded mode). Links common/ (IPC,
# libevent glue) and proto/ (messages, validators), nothing else.
BOXD_SRCS := $(wildcard boxd/*.c)
BOXD_OBJS := $(BOXD_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS  += $(BOXD_OBJS)
PROGRAMS  += $(BIN)/boxd

$(BOXD_OBJS): private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,libprotobuf-c libevent)

$(BIN)/boxd: $(BOXD_OBJS) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/boxd: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c libevent) \
	$(BORINGSSL_CRYPTO_LIBS)
