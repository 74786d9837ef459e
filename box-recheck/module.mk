# SPDX-License-Identifier: Apache-2.0
# box-recheck/ — the owner's recheck of a box start: exec'd by boxd for each
# RunRequest, switches to the box owner, re-checks every path, opens the
# state files and hands their fds back (proto/recheck.proto). Links common/
# and proto/ (+ libprotobuf-c, libcap for the privilege drop, libseccomp for
# its allow-list), nothing else.
RECHECK_SRCS := $(wildcard box-recheck/*.c)
RECHECK_OBJS := $(RECHECK_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS     += $(RECHECK_OBJS)
LIBEXEC_PROGRAMS += $(BIN)/box-recheck

$(RECHECK_OBJS): private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,libprotobuf-c libseccomp)

# libboxcommon and libboxproto reference each other: list them twice.
$(BIN)/box-recheck: $(RECHECK_OBJS) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-recheck: private MODULE_LDLIBS := $(LIBPROTO) $(LIBCOMMON) \
	$(call pkg_libs,libprotobuf-c libcap libseccomp)
