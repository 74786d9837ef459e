#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-vs-run.sh — `boxctl check` refuses exactly what `boxctl run` refuses (docs/boxctl.1.md):
# every test/config/*.ini case goes through both, in the same directory and environment (no
# boxd service: run starts an embedded boxd, which validates the spec, re-checks it as the
# owner through box-recheck and builds the plan). The verdicts must be the same: both refuse
# (exit 2) with the same refusal lines (`boxctl: FILE:LINE: …`), or neither does. A run that
# is not refused but fails later (exit 1: the sandbox, a daemon) is no verdict on box.ini, nor
# is the agent's own exit status; a failure is shown as a diagnostic line.
# Trusts: nothing; it is test code. Runs as root or as an ordinary user (user namespaces).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/lib-config.sh"

# refusal_lines FILE: a run's or a check's refusals, one per line, without run's own summary
# line (boxd refused the box) and the start-up noise (box: …).
refusal_lines() { grep '^boxctl: ' "$1" | grep -v '^boxctl: error: boxd refused the box$' || true; }

n=0
for ini in "$here"/*.ini; do
	case_prepare "$ini" || continue
	if [ $as_nobody = 1 ]; then
		for cmd in check run; do
			as_nobody_run "$case" timeout -k 5 60 "$boxctl" $cmd -c box.ini \
				</dev/null >"$case/$cmd.out" 2>"$case/$cmd.err"
			echo $? >"$case/$cmd.rc"
		done
	else
		run_check "$case" -c box.ini >"$case/check.out" 2>"$case/check.err"
		echo $? >"$case/check.rc"
		run_env "$case" timeout -k 5 60 "$boxctl" run -q -c box.ini \
			</dev/null >"$case/run.out" 2>"$case/run.err"
		echo $? >"$case/run.rc"
	fi
	n=$((n + 1))
	crc=$(cat "$case/check.rc") rrc=$(cat "$case/run.rc")
	refusal_lines "$case/check.err" >"$case/check.ref"
	refusal_lines "$case/run.err" >"$case/run.ref"
	# run refused it: exit 2 with refusal lines (an agent that exits 2 prints none of them)
	run_refused=0
	[ "$rrc" = 2 ] && [ -s "$case/run.ref" ] && run_refused=1
	if [ "$crc" = 2 ] || [ $run_refused = 1 ]; then
		if [ "$crc" = 2 ] && [ $run_refused = 1 ] && cmp -s "$case/check.ref" "$case/run.ref"; then
			ok "$name: check and run refuse it alike ($(wc -l <"$case/check.ref") lines)"
		else
			not_ok "$name: check (exit $crc) and run (exit $rrc) refuse it alike"
			diff -u "$case/check.ref" "$case/run.ref" | sed 's/^/#   /' | head -20
		fi
	elif [ "$crc" = 0 ]; then
		ok "$name: neither refuses it (run exit $rrc)"
		[ "$rrc" = 0 ] || grep '^boxctl: ' "$case/run.err" | head -3 | sed 's/^/#   run: /'
	else
		not_ok "$name: check failed (exit $crc), run exit $rrc"
		sed 's/^/#   /' "$case/check.err" | head -5
	fi
done
if [ "$n" -lt 40 ]; then not_ok "at least 40 cases ran ($n)"; else ok "at least 40 cases ran ($n)"; fi
tap_done
