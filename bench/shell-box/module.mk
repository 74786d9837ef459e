# bench/shell-box/ — box's shell in a real box (issue 13 item 7): `bash -c true` through the
# alias vs outside any box, `bash -c 'git --version'` through a tool sandbox vs bwrap, and part
# 1's workloads (bench/shell) through box-policyd vs bash + GNU tools; one timer program
# (sbtime.c) measures both sides. make check runs its smoke mode (smoke.sh).
SBTIME_OBJS := $(BUILD)/bench/shell-box/sbtime.o
ALL_OBJS    += $(SBTIME_OBJS)

$(BUILD)/bench/shell-box/sbtime: $(SBTIME_OBJS)
	$(link_program)

bench: $(BUILD)/bench/shell-box/sbtime
BENCH_SCRIPTS += bench/shell-box/run.sh
CHECK_DEPS    += $(BUILD)/bench/shell-box/sbtime
CHECK_SCRIPTS += bench/shell-box/smoke.sh
