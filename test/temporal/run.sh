#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — temporal conformance: decides every trace
# test/conformance/temporal/NAME.req under NAME.dw with box-temporal-trace
# (observe, then decide, through the incremental monitor) and compares each
# output line with NAME.out (one test per request line); checks every
# refuse/NAME.dw with `--check` against NAME.err (exit 2, stderr byte for byte).
# Every trace also goes through `boxctl policy eval` (BOX_TEMPORAL_BOXCTL=0
# skips that), and through `policy eval --history`: each trace split at every
# line into a history file and the remaining input must give the same
# decisions for the remaining requests; then --history edge cases (time going
# backwards across history and input, schema lines in the history, a plain
# policy, refused and unreadable history files).
# `run.sh --regen` rewrites the expected files (review the diff).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
cases=$here/../conformance/temporal
build=$(cd "${BOX_BUILD:-build}" && pwd)
trace=$build/test/temporal/box-temporal-trace
boxctl=$(cd "${BOX_BIN:-$build/bin}" && pwd)/boxctl
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
	[ "${BOX_TEMPORAL_BOXCTL:-1}" = 1 ] || continue
	(cd "$cases" && "$boxctl" policy eval --home /home/dev "$name.dw" "$name.req") \
		>"$tmp/got2" 2>"$tmp/err2"
	rc=$?
	[ $rc -eq 0 ] || { not_ok "boxctl:$name: policy eval exited $rc"; sed 's/^/#   /' "$tmp/err2"; }
	compare_lines "boxctl:$name" "$cases/$name.out" "$tmp/got2"
	# --history: the trace split after line k; the rest decides as in the full trace.
	total=$(wc -l <"$cases/$name.req")
	bad=""
	for k in $(seq 1 $((total - 1))); do
		head -n "$k" "$cases/$name.req" >"$tmp/hist"
		tail -n +"$((k + 1))" "$cases/$name.req" >"$tmp/rest"
		m=$(grep -c -v -e '"record"' -e '"schema"' -e '^[[:space:]]*$' "$tmp/rest")
		tail -n "$m" "$cases/$name.out" >"$tmp/want3"
		(cd "$cases" && "$boxctl" policy eval --home /home/dev --history "$tmp/hist" \
			"$name.dw" "$tmp/rest") >"$tmp/got3" 2>"$tmp/err3"
		rc=$?
		if [ $rc -ne 0 ] || ! cmp -s "$tmp/want3" "$tmp/got3" || [ -s "$tmp/err3" ]; then
			bad=$k
			break
		fi
	done
	if [ -z "$bad" ]; then
		ok "boxctl:$name: --history split at each of $((total - 1)) lines decides as the full trace"
	else
		not_ok "boxctl:$name: --history split after line $bad (exit $rc)"
		diff "$tmp/want3" "$tmp/got3" | sed 's/^/#   /'
		sed 's/^/#   /' "$tmp/err3"
	fi
done

# --history edge cases through boxctl.
if [ "${BOX_TEMPORAL_BOXCTL:-1}" = 1 ]; then
	eval_h() { # HISTORY INPUT POLICY -> $tmp/out, $tmp/err, $rc
		"$boxctl" policy eval --home /home/dev --history "$1" "$3" "$2" \
			>"$tmp/out" 2>"$tmp/err"
		rc=$?
	}
	inline=$cases/11-inline-context.dw
	w='{"action":"fs:write","input":{"path":"/a","operation":"write_content"}'
	del='{"action":"fs:delete","input":{"path":"/a","operation":"remove_file"}'
	permit_a='{"verdict":"permit","cause":"permitted","rules":["policy_0"],"message":"policy permitted this operation on '"'"'/a'"'"'."}'
	forbid_a='{"verdict":"deny","cause":"forbidden","rules":["x"],"message":"policy denied this operation on '"'"'/a'"'"' [policy: x]."}'

	# A history event one hour and one second old is outside "within 1h"; exactly 1h is inside.
	printf '%s\n' "$del,\"at\":\"2024-05-01T10:00:00.5Z\"}" >"$tmp/h"
	printf '%s\n' "$w,\"at\":1714561200.5}" "$w,\"at\":1714561201}" >"$tmp/in"
	eval_h "$tmp/h" "$tmp/in" "$inline"
	printf '%s\n' "$forbid_a" "$permit_a" >"$tmp/want"
	if test $rc -eq 0 -a ! -s "$tmp/err" && cmp -s "$tmp/want" "$tmp/out"; then
		ok "--history: RFC 3339 history, decimal input, window edge to the ns"
	else
		not_ok "--history: RFC 3339 history, decimal input, window edge to the ns"
		diag "$(cat "$tmp/out" "$tmp/err")"
	fi

	# An input line older than the history's last event is an error line; evaluation goes on.
	printf '%s\n' "$del,\"at\":100}" >"$tmp/h"
	printf '%s\n' "$w,\"at\":99}" "$w,\"at\":100}" >"$tmp/in"
	eval_h "$tmp/h" "$tmp/in" "$inline"
	printf '%s\n' '{"error":"line 1: \"at\" goes backwards"}' "$forbid_a" >"$tmp/want"
	if test $rc -eq 0 && cmp -s "$tmp/want" "$tmp/out"; then
		ok "--history: input going backwards from the history is an error line"
	else
		not_ok "--history: input going backwards from the history is an error line"
		diag "$(cat "$tmp/out" "$tmp/err")"
	fi

	# A schema line in the history: the MCP namespace is known to the input (no rule
	# refines the tool call, so it stays permitted: not_refined) and the temporal state
	# survives the reload.
	schema='{"schema":"demo_mcp","actions":{"search":{"query":"String"}}}'
	printf '%s\n' "$del,\"at\":1}" "$schema" >"$tmp/h"
	printf '%s\n' "$w,\"at\":2}" '{"action":"demo_mcp::Action::\"search\"","input":{"query":"q"},"at":3}' \
		>"$tmp/in"
	eval_h "$tmp/h" "$tmp/in" "$inline"
	{ echo "$forbid_a"; sed -n 2p "$tmp/out"; } >"$tmp/want"
	if test $rc -eq 0 -a ! -s "$tmp/err" && cmp -s "$tmp/want" "$tmp/out" &&
		grep -q '"verdict":"permit","cause":"not_refined"' "$tmp/out"; then
		ok "--history: schema line in the history keeps the temporal state"
	else
		not_ok "--history: schema line in the history keeps the temporal state"
		diag "$(cat "$tmp/out" "$tmp/err")"
	fi

	# A schema line in the middle of the input of a temporal policy (monitor migrated).
	printf '%s\n' "$del,\"at\":1}" "$schema" "$w,\"at\":2}" >"$tmp/in"
	: >"$tmp/h"
	eval_h "$tmp/h" "$tmp/in" "$inline"
	printf '%s\n' '{"verdict":"deny","cause":"no_match","rules":[],"message":"policy denied this operation on '"'"'/a'"'"' [default-deny]: No permit policy matched this request."}' \
		"$forbid_a" >"$tmp/want"
	if test $rc -eq 0 && cmp -s "$tmp/want" "$tmp/out"; then
		ok "policy eval: schema line mid-input keeps the temporal state"
	else
		not_ok "policy eval: schema line mid-input keeps the temporal state"
		diag "$(cat "$tmp/out" "$tmp/err")"
	fi

	# A policy without temporal terms: the history is replayed harmlessly (its times still count).
	plain=$tmp/plain.dw
	echo 'permit (principal, action == Box::Action::"fs:write", resource);' >"$plain"
	printf '%s\n' "$del,\"at\":5}" \
		'{"record":"response","action":"fs:write","input":{"path":"/a","operation":"write_content"},"output":{"result":"completed"},"at":6}' \
		"$w,\"at\":7}" >"$tmp/h"
	printf '%s\n' "$w,\"at\":8}" "$w,\"at\":6}" >"$tmp/in"
	eval_h "$tmp/h" "$tmp/in" "$plain"
	printf '%s\n' "$permit_a" '{"error":"line 2: \"at\" goes backwards"}' >"$tmp/want"
	if test $rc -eq 0 -a ! -s "$tmp/err" && cmp -s "$tmp/want" "$tmp/out"; then
		ok "--history: a plain policy replays the history and decides as without it"
	else
		not_ok "--history: a plain policy replays the history and decides as without it"
		diag "$(cat "$tmp/out" "$tmp/err")"
	fi

	# A refused history line is a load refusal: every bad line named, nothing decided, exit 2.
	printf '%s\n' "$del,\"at\":5}" 'not json' "$del,\"at\":4}" '{"record":"maybe","action":"fs:write","input":{}}' >"$tmp/h"
	printf '%s\n' "$w,\"at\":8}" >"$tmp/in"
	eval_h "$tmp/h" "$tmp/in" "$inline"
	if test $rc -eq 2 -a ! -s "$tmp/out" && grep -q "^boxctl: $tmp/h:2: " "$tmp/err" &&
		grep -q "^boxctl: $tmp/h:3: \"at\" goes backwards\$" "$tmp/err" &&
		grep -q "^boxctl: $tmp/h:4: \"record\" must be" "$tmp/err"; then
		ok "--history: refused lines exit 2 and decide nothing"
	else
		not_ok "--history: refused lines exit 2 and decide nothing"
		diag "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
	fi

	# An unreadable history exits 1.
	eval_h "$tmp/nonexistent" "$tmp/in" "$inline"
	if test $rc -eq 1 -a ! -s "$tmp/out" && grep -q "nonexistent" "$tmp/err"; then
		ok "--history: a missing history file exits 1"
	else
		not_ok "--history: a missing history file exits 1"
		diag "exit $rc" "$(cat "$tmp/err")"
	fi
fi

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
	(cd "$cases/refuse" && "$boxctl" policy check --home /home/dev "$name.dw") \
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
