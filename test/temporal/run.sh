#!/usr/bin/env bash
# run.sh — temporal conformance (issue 5): decides every trace
# test/conformance/temporal/NAME.req under NAME.dw with box-temporal-trace
# (observe, then decide, through the incremental monitor) and compares each
# output line with NAME.out (one test per request line); checks every
# refuse/NAME.dw with `--check` against NAME.err (exit 2, stderr byte for byte).
# With BOX_TEMPORAL_BOXCTL=1 the traces also go through `boxctl policy eval`.
# `run.sh --regen` rewrites the expected files (review the diff).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
cases=$here/../conformance/temporal
build=$(cd "${BOX_BUILD:-build}" && pwd)
trace=$build/test/temporal/box-temporal-trace
regen=0
[ "${1:-}" = --regen ] && regen=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$trace" ]; then
	not_ok "box-temporal-trace is not built ($trace)"
	tap_done
	exit 1
fi

compare_lines() { # NAME EXPECTED GOT
	local name=$1 out=$2 got=$3 n got_n i want line
	n=$(wc -l <"$out")
	got_n=$(wc -l <"$got")
	[ "$n" -eq "$got_n" ] || not_ok "$name: $got_n output lines, expected $n"
	for i in $(seq 1 "$n"); do
		want=$(sed -n "${i}p" "$out")
		line=$(sed -n "${i}p" "$got")
		if [ "$want" = "$line" ]; then
			ok "$name:$i"
		else
			not_ok "$name:$i"
			diag "want: $want" "got:  $line"
		fi
	done
}

for dw in "$cases"/*.dw; do
	name=$(basename "$dw" .dw)
	(cd "$cases" && "$trace" --home /home/dev "$name.dw" "$name.req") >"$tmp/got" 2>"$tmp/err"
	rc=$?
	[ $regen = 1 ] && cp "$tmp/got" "$cases/$name.out"
	if [ $rc -ne 0 ]; then
		not_ok "$name: box-temporal-trace exited $rc"
		sed 's/^/#   /' "$tmp/err"
		continue
	fi
	compare_lines "$name" "$cases/$name.out" "$tmp/got"
	if [ "${BOX_TEMPORAL_BOXCTL:-0}" = 1 ]; then
		(cd "$cases" && "$BOX_BIN/boxctl" policy eval --home /home/dev "$name.dw" "$name.req") \
			>"$tmp/got2" 2>"$tmp/err2"
		compare_lines "boxctl:$name" "$cases/$name.out" "$tmp/got2"
	fi
done

for dw in "$cases"/refuse/*.dw; do
	[ -e "$dw" ] || continue
	name=$(basename "$dw" .dw)
	(cd "$cases/refuse" && "$trace" --home /home/dev --check "$name.dw") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $regen = 1 ] && cp "$tmp/err" "${dw%.dw}.err"
	if [ $rc -ne 2 ]; then
		not_ok "refuse/$name: exit $rc, expected 2"
		sed 's/^/#   /' "$tmp/err"
	elif ! cmp -s "$tmp/err" "${dw%.dw}.err"; then
		not_ok "refuse/$name: diagnostics differ"
		diff "${dw%.dw}.err" "$tmp/err" | sed 's/^/#   /'
	else
		ok "refuse/$name"
	fi
	# The same refusal through `boxctl policy check` (exit 2, same diagnostic).
	(cd "$cases/refuse" && "$BOX_BIN/boxctl" policy check --home /home/dev "$name.dw") \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && sed 's/^boxctl: //' "$tmp/err" | cmp -s - "${dw%.dw}.err"; then
		ok "refuse/$name: boxctl policy check"
	else
		not_ok "refuse/$name: boxctl policy check (exit $rc)"
		diff "${dw%.dw}.err" "$tmp/err" | sed 's/^/#   /'
	fi
done
tap_done
