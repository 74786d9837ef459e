# SPDX-License-Identifier: Apache-2.0
# bench/supervise/ — a supervised python3 (supervise = fs, box-trampoline/supervise.c) against
# the same python3 unsupervised, in one real box (run.sh); make check runs its smoke mode.
BENCH_SCRIPTS += bench/supervise/run.sh
CHECK_SCRIPTS += bench/supervise/smoke.sh
