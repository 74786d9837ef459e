# SPDX-License-Identifier: Apache-2.0
# libpolicyclient/ — libpolicyclient.a: a peer's side of its box-policyd channel
# (policy_client.h), shared by box-gateway, box-mcpd and box-shell, and the decisions
# box-gateway and box-shell make in process (policy_local.h, over libboxpolicy). Library
# code (negative errno, never logs) beside proto/: it speaks the policy protocol's
# messages (proto/policy.proto, proto/policy_permits.c) over common/'s framing, so it
# is listed before libboxpolicy, libboxproto and libboxcommon; none of them links it.
LIBPOLICYCLIENT_SRCS := $(wildcard libpolicyclient/*.c)
LIBPOLICYCLIENT_OBJS := $(LIBPOLICYCLIENT_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS             += $(LIBPOLICYCLIENT_OBJS)

$(LIBPOLICYCLIENT_OBJS): private MODULE_CPPFLAGS := -Iproto -Ilibpolicyclient \
	$(call pkg_cflags,libprotobuf-c libevent)

$(LIBPOLICYCLIENT): $(LIBPOLICYCLIENT_OBJS)
	$(archive)
