# SPDX-License-Identifier: Apache-2.0
# common/ — libboxcommon.a: log, cleanup, parsers, fds, paths, privdrop, and
# the IPC framing (envelope, fragments, fds; common/envelope.proto). A leaf:
# it links against nothing of proto/ or libboxpolicy/ (the message tables
# reach it as data, proto/README.md), so it is listed once, last.
COMMON_SRCS  := $(wildcard common/*.c)
COMMON_GEN_C := $(BUILD)/common/envelope.pb-c.c
COMMON_GEN_H := $(BUILD)/common/envelope.pb-c.h
COMMON_OBJS  := $(COMMON_SRCS:%.c=$(BUILD)/%.o) $(COMMON_GEN_C:.c=.o)
ALL_OBJS     += $(COMMON_OBJS)

$(BUILD)/common/%.pb-c.c $(BUILD)/common/%.pb-c.h: common/%.proto
	@mkdir -p $(@D)
	$(PROTOC_C) --proto_path=common --c_out=$(BUILD)/common $<

$(COMMON_OBJS): private MODULE_CPPFLAGS := $(call pkg_cflags,libprotobuf-c libevent)
# BoringSSL's SHA-256 (a program that links logchain.o adds $(BORINGSSL_CRYPTO_LIBS)).
$(BUILD)/common/logchain.o: private MODULE_CPPFLAGS := $(BORINGSSL_CFLAGS)
$(COMMON_GEN_C:.c=.o): private MODULE_CFLAGS := -Wno-missing-braces -Wno-missing-field-initializers

$(BUILD)/common/%.pb-c.o: $(BUILD)/common/%.pb-c.c
	$(compile_c)

$(LIBCOMMON): $(COMMON_OBJS)
	$(archive)

.SECONDARY: $(COMMON_GEN_C) $(COMMON_GEN_H)
