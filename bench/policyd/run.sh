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
# --smoke (make check, through smoke.sh): the quick run with 20,000 events (the
# RSS window never fills: nothing is gated on memory, which a sanitizer build
# grows), as TAP lines: it ends 0 and prints each of its rows; no figure is gated.
# Trusts: nothing; it is benchmark code.
set -eu
BENCH_NAME=policyd
# shellcheck source=bench/lib-smoke.sh
. "$(dirname "$0")/../lib-smoke.sh"
export BOX_BIN
bench=$BOX_BUILD/bench/policyd/policyd_bench
if ! $smoke; then
	exec "$bench" ${BENCH_QUICK:+quick}
fi

[ -x "$bench" ] || { not_ok "policyd_bench is built ($bench)"; finish; }
out=$(BENCH_POLICYD_EVENTS=20000 "$bench" quick 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | grep '^policyd:' | sed 's/^/# /'
if [ "$rc" = 0 ]; then
	ok "policyd_bench quick ends 0"
else
	not_ok "policyd_bench quick ends 0 (exit $rc)"
	printf '%s\n' "$out" | grep -v '^policyd:' | tail -5 | sed 's/^/# /'
fi
# Each row of the run, by the words that start it.
for row in "Decide, 1 peer, any CPU" "Decide, 4 peers, any CPU" \
	"Decide, temporal, history_sync=off, 1 in flight" \
	"Decide, temporal, history_sync=batch, 64 in flight" "group commit: batch at 64" \
	"20000 of 20000 events"; do
	if printf '%s\n' "$out" | grep -q "^policyd: $row"; then
		ok "prints \"$row\""
	else
		not_ok "prints \"$row\""
	fi
done
# The pinned pass: its row, or the line that says this host cannot pin.
if printf '%s\n' "$out" | grep -q '^policyd: \(Decide, 1 peer, one CPU\|cannot pin to one CPU\)'; then
	ok "prints the one-CPU pass (or why it could not pin)"
else
	not_ok "prints the one-CPU pass (or why it could not pin)"
fi
finish
