# SPDX-License-Identifier: Apache-2.0
# fuzz_recheck_reply — a RecheckReply packet through boxd's channel (the recheck table and
# its validator), then boxd's record parser (recheck_parse.c) into a struct recheck_result.
FUZZ_DEPS_recheck_reply := $(BUILD)/boxd/recheck_parse.o $(BUILD)/boxd/recheck_result.o \
	$(LIBPROTO)
FUZZ_LIBS_recheck_reply := $(call pkg_libs,libprotobuf-c libevent)
