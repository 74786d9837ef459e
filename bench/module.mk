# SPDX-License-Identifier: Apache-2.0
# bench/ — benchmarks (`make bench`): each bench/NAME/ has a module.mk (or
# bench.mk) that adds its programs as prerequisites of `bench` and its
# scripts to BENCH_SCRIPTS.
include $(sort $(wildcard bench/*/module.mk bench/*/bench.mk))
