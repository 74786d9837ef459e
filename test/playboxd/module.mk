# SPDX-License-Identifier: Apache-2.0
# test/playboxd/ — the one harness that plays boxd for a per-box daemon under test
# (playboxd.h): linked by the tests of box-policyd, box-gateway, box-mcpd and box-shell.
PLAYBOXD_OBJ := $(BUILD)/test/playboxd/playboxd.o
ALL_OBJS     += $(PLAYBOXD_OBJ)
$(PLAYBOXD_OBJ): private MODULE_CPPFLAGS := $(call pkg_cflags,libprotobuf-c)
