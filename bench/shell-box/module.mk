# SPDX-License-Identifier: Apache-2.0
# bench/shell-box/ — box's shell in a real box: `bash -c true` through the
# alias vs outside any box, `bash -c 'git --version'` through a tool sandbox vs bwrap, and part
# 1's workloads (bench/shell) through box-policyd vs bash + GNU tools; one timer program
# (sbtime.c) measures both sides. make check runs its smoke mode (smoke.sh).
# sbtime also runs the alias's own code in-process (its "@alias" workloads: the round trip without
# a process launch), so it links box-alias/alias.o. sbnop is the empty program whose launch is the
# machine's floor: x86-64 only, built without libc, the sanitizers or the project's flags.
# sbship measures box-policyd's CPU per shipped line without a box (sbship.c).
SBTIME_OBJS := $(BUILD)/bench/shell-box/sbtime.o
ALL_OBJS    += $(SBTIME_OBJS)

$(SBTIME_OBJS): private MODULE_CPPFLAGS := -Ibox-alias -Iproto $(call pkg_cflags,libprotobuf-c)
$(BUILD)/bench/shell-box/sbtime: $(SBTIME_OBJS) $(BUILD)/box-alias/alias.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/bench/shell-box/sbtime: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)

# sbship: box-policyd alone (test/policyd/harness.c plays boxd and box-shell), its CPU per
# line box-shell ships.
SBSHIP_OBJS := $(BUILD)/bench/shell-box/sbship.o
ALL_OBJS    += $(SBSHIP_OBJS)
$(SBSHIP_OBJS): private MODULE_CPPFLAGS := -Itest/policyd -Itest/playboxd -Iproto \
	$(call pkg_cflags,libprotobuf-c jansson)
$(BUILD)/bench/shell-box/sbship: $(SBSHIP_OBJS) $(BUILD)/test/policyd/harness.o \
		$(BUILD)/test/playboxd/playboxd.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/bench/shell-box/sbship: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) \
	$(BORINGSSL_CRYPTO_LIBS)

$(BUILD)/bench/shell-box/sbnop: bench/shell-box/sbnop.c
	@mkdir -p $(@D)
	$(CC) -O2 -static -nostdlib -fno-pie -no-pie -fno-stack-protector -fcf-protection=none -o $@ $<

bench: $(BUILD)/bench/shell-box/sbtime $(BUILD)/bench/shell-box/sbnop $(BUILD)/bench/shell-box/sbship
BENCH_SCRIPTS += bench/shell-box/run.sh
CHECK_DEPS    += $(BUILD)/bench/shell-box/sbtime $(BUILD)/bench/shell-box/sbnop \
	$(BUILD)/bench/shell-box/sbship
CHECK_SCRIPTS += bench/shell-box/smoke.sh
