# SPDX-License-Identifier: Apache-2.0
# box-clientd/ — a root boxd's client child: one per client connection,
# decodes and validates each request, passes boxd a canonical re-encoding
# (docs/design.md). Links common/, proto/ (+ libprotobuf-c) and libseccomp; no
# libevent, nothing privileged.
CLIENTD_SRCS := $(wildcard box-clientd/*.c)
CLIENTD_OBJS := $(CLIENTD_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS     += $(CLIENTD_OBJS)
LIBEXEC_PROGRAMS += $(BIN)/box-clientd

$(CLIENTD_OBJS): private MODULE_CPPFLAGS := -Iproto \
	$(call pkg_cflags,libprotobuf-c libseccomp)

$(BIN)/box-clientd: $(CLIENTD_OBJS) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-clientd: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c libseccomp libcap)
