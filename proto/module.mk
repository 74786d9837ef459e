# SPDX-License-Identifier: Apache-2.0
# proto/ — protobuf-c messages (generated into $(BUILD)/proto), one table per
# protocol, the walker and the validators (proto/README.md). Depends only on
# common/ (path.c); listed before libboxcommon, once.
PROTO_FILES := $(wildcard proto/*.proto)
PROTO_GEN_C := $(PROTO_FILES:proto/%.proto=$(BUILD)/proto/%.pb-c.c)
PROTO_GEN_H := $(PROTO_FILES:proto/%.proto=$(BUILD)/proto/%.pb-c.h)
PROTO_OBJS  := $(PROTO_GEN_C:.c=.o) $(patsubst %.c,$(BUILD)/%.o,$(wildcard proto/*.c))
ALL_OBJS    += $(PROTO_OBJS)

$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(@D)
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD)/proto $<

# Generated code with oneof needs -Wno-missing-braces.
$(PROTO_OBJS): private MODULE_CPPFLAGS := $(call pkg_cflags,libprotobuf-c)
$(PROTO_OBJS): private MODULE_CFLAGS := -Wno-missing-braces -Wno-missing-field-initializers

$(BUILD)/proto/%.pb-c.o: $(BUILD)/proto/%.pb-c.c
	$(compile_c)

$(LIBPROTO): $(PROTO_OBJS)
	$(archive)

# Generated sources are not intermediates: keep them between runs.
.SECONDARY: $(PROTO_GEN_C) $(PROTO_GEN_H)
