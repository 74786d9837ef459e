# SPDX-License-Identifier: Apache-2.0
# bench/supervise/ — a supervised python3 (supervise = fs, box-trampoline/supervise.c) against
# the same python3 unsupervised, in one real box (run.sh); make check runs its smoke mode.
BENCH_SCRIPTS += bench/supervise/run.sh
CHECK_SCRIPTS += bench/supervise/smoke.sh
# notif_floor: the kernel's own cost of a notification answered "continue" and of one answered
# with an injected fd (SECCOMP_ADDFD_FLAG_SEND), printed beside the supervisor's figures.
NOTIF_FLOOR_OBJS := $(BUILD)/bench/supervise/notif_floor.o
ALL_OBJS         += $(NOTIF_FLOOR_OBJS)
$(BUILD)/bench/supervise/notif_floor: $(NOTIF_FLOOR_OBJS)
	$(link_program)
bench: $(BUILD)/bench/supervise/notif_floor
CHECK_DEPS += $(BUILD)/bench/supervise/notif_floor
