#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — `make bench` entry for box-policyd: Decide round trips (1 and 4
# peers on any CPU, 1 peer with client and policyd on one CPU) against a bare
# seqpacket echo between two processes placed the same way, history_sync
# off/always/batch with 1 and 64 Decides in flight on one channel (10,000
# decisions each, the history on a disk file system: BENCH_POLICYD_DIR, else
# /var/tmp; the group commit's targets printed), and RSS across a million
# temporal events 1 ms apart. BENCH_QUICK=1 runs a tenth of it;
# BENCH_POLICYD_ROUND_TRIPS_ONLY=1 stops after the round trips;
# BENCH_POLICYD_EVENTS and BENCH_POLICYD_MAX_S bound the million-event run.
set -eu
BOX_BUILD=${BOX_BUILD:-build}
BOX_BIN=${BOX_BIN:-$BOX_BUILD/bin}
export BOX_BIN
exec "$BOX_BUILD/bench/policyd/policyd_bench" ${BENCH_QUICK:+quick}
