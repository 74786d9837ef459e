#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — policy conformance: decides every request of cases/NAME.req under
# cases/NAME.dw with `boxctl policy eval` and compares each output line with
# cases/NAME.out (one test per request line); loads refuse/*.dw and warn/*.dw
# with `boxctl policy check` and compares stderr with NAME.err byte for byte,
# stdout with warn/NAME.out ("N rules loaded"; empty for a refusal) and the
# exit status (2 for a refusal, 0 with warnings).
# `run.sh --regen` rewrites the expected files from the current engine (review
# the diff before committing). Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
boxctl=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/boxctl
regen=0
[ "${1:-}" = --regen ] && regen=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Decisions: one test per request line.
for dw in "$here"/cases/*.dw; do
	name=$(basename "$dw" .dw)
	req=${dw%.dw}.req out=${dw%.dw}.out
	(cd "$here/cases" && "$boxctl" policy eval --home /home/dev "$name.dw" "$name.req") \
		>"$tmp/got" 2>"$tmp/err"
	rc=$?
	if [ $regen = 1 ]; then cp "$tmp/got" "$out"; fi
	if [ $rc -ne 0 ]; then
		not_ok "$name: policy eval exited $rc"
		sed 's/^/#   /' "$tmp/err"
		continue
	fi
	if [ ! -f "$out" ]; then
		not_ok "$name: no expected output $name.out"
		continue
	fi
	mapfile -t want_lines <"$out"
	mapfile -t got_lines <"$tmp/got"
	n=${#want_lines[@]}
	[ "$n" -eq "${#got_lines[@]}" ] || not_ok "$name: ${#got_lines[@]} output lines, expected $n"
	for ((i = 0; i < n; i++)); do
		if [ "${want_lines[i]}" = "${got_lines[i]:-}" ]; then
			ok "$name:$((i + 1))"
		else
			not_ok "$name:$((i + 1))"
			diag "want: ${want_lines[i]}" "got:  ${got_lines[i]:-}"
		fi
	done
done

# Load refusals and warnings: one test per file. A policy that loads says
# "N rules loaded" on stdout (warn/NAME.out); a refused one prints nothing there.
for kind in refuse warn; do
	want_rc=2
	[ $kind = warn ] && want_rc=0
	for dw in "$here"/$kind/*.dw; do
		[ -e "$dw" ] || continue
		name=$(basename "$dw" .dw)
		home=/Users/dev
		(cd "$here/$kind" && "$boxctl" policy check --home "$home" "$name.dw") \
			>"$tmp/out" 2>"$tmp/err"
		rc=$?
		want_out=/dev/null
		[ $kind = warn ] && want_out=${dw%.dw}.out
		if [ $regen = 1 ]; then
			cp "$tmp/err" "${dw%.dw}.err"
			[ $kind = warn ] && cp "$tmp/out" "$want_out"
		fi
		if [ $rc -ne $want_rc ]; then
			not_ok "$kind/$name: exit $rc, expected $want_rc"
			sed 's/^/#   /' "$tmp/err"
		elif ! cmp -s "$tmp/err" "${dw%.dw}.err"; then
			not_ok "$kind/$name: diagnostics differ"
			diff "${dw%.dw}.err" "$tmp/err" | sed 's/^/#   /'
		elif ! cmp -s "$tmp/out" "$want_out"; then
			not_ok "$kind/$name: stdout differs"
			diff "$want_out" "$tmp/out" | sed 's/^/#   /'
		else
			ok "$kind/$name"
		fi
	done
done
tap_done
