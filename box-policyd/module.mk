# SPDX-License-Identifier: Apache-2.0
# box-policyd/ — the per-box policy daemon: policy + durable event history,
# answers Decide/Record from its peers (docs/design.md). Links libboxpolicy,
# common/, proto/ (+ libprotobuf-c), libevent, jansson and libseccomp; no
# network code, nothing privileged.
POLICYD_SRCS := $(wildcard box-policyd/*.c)
POLICYD_OBJS := $(POLICYD_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS     += $(POLICYD_OBJS)
LIBEXEC_PROGRAMS += $(BIN)/box-policyd

$(POLICYD_OBJS): private MODULE_CPPFLAGS := -Iproto \
	$(call pkg_cflags,libprotobuf-c libevent jansson libseccomp)

$(BIN)/box-policyd: $(POLICYD_OBJS) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-policyd: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson libseccomp libcap) \
	$(BORINGSSL_CRYPTO_LIBS)
