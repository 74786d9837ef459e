#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — `make bench` entry for bench/telemetry: box-policyd's Decide throughput
# without and with an otlp [telemetry.NAME] target (its records read by a sink that
# discards), alternating pairs of runs (7 by default), their medians and ratio
# (target: export costs <= 10%), and box-policyd's CPU per decision with and without.
# BENCH_QUICK=1 runs a tenth of it; arguments go to telemetry_bench (runs=N, only=plain|otlp).
set -eu
BOX_BUILD=${BOX_BUILD:-build}
BOX_BIN=${BOX_BIN:-$BOX_BUILD/bin}
export BOX_BIN
exec "$BOX_BUILD/bench/telemetry/telemetry_bench" ${BENCH_QUICK:+quick} "$@"
