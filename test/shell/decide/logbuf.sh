#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# logbuf.sh — box-sh's decisions.jsonl loses no line when its writes are
# batched: a pipeline stage buffers its lines as the main
# process does (one write per 64 KiB or 100 ms, not one per decision), and
# every way such a process ends still writes them: an ordinary exit, death by
# SIGPIPE (a closed pipe), the command timeout's SIGTERM (and the SIGKILL 2 s
# later when the script traps SIGTERM: the stage then writes each line at
# once; or SIGPIPE before the trap ran, when the reader died of the SIGTERM), `timeout -s KILL` (its tree writes each line at once) and `kill -9`
# of a background job (a background job never buffers).
#
# How loss would show: the stage decides `[ $i -gt 0 ]` and then prints $i;
# whatever it printed last, the log must hold the decision for that i (a
# lost buffer is the last few hundred decisions). Every line must be whole
# JSON. The pipelines finish with the counts a script of known length makes.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
boxsh=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/box-sh
# BOXSH_UNDER_TEST: another box-sh binary (to show the checks fail on a build that loses lines)
boxsh=${BOXSH_UNDER_TEST:-$boxsh}
if [ ! -x "$boxsh" ]; then
	not_ok "box-sh is built ($boxsh)"
	tap_done
	exit 1
fi
tmp=$(mktemp -d /tmp/shperf-logbuf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'permit (principal, action, resource);\n' > "$tmp/allow.dw"

# run [BOX-SH OPTIONS...] -c SCRIPT: in $tmp; stdout in $tmp/out, the log in $tmp/log.jsonl
run() {
	rm -f "$tmp/log.jsonl" "$tmp/out" "$tmp/n"
	(cd "$tmp" && "$boxsh" --policy "$tmp/allow.dw" --home "$tmp" --decisions "$tmp/log.jsonl" \
		"$@" > "$tmp/out" 2> "$tmp/err")
	echo $? > "$tmp/status"
}

# whole_json: every line of the log is one JSON object.
whole_json() {
	python3 - "$tmp/log.jsonl" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8", errors="strict"):
    json.loads(line)
    n += 1
sys.exit(0 if n > 0 else 1)
PY
}

# has_decision COMMAND: the log holds the shell:exec decision of COMMAND.
has_decision() {
	grep -aF '"action":"shell:exec","resource":"' "$tmp/log.jsonl" | grep -aF '"verdict":"permit"' |
		grep -aqF "\"command\":\"$1\""
}

# last_printed FILE: the last whole number line of FILE.
last_printed() {
	grep -E '^[0-9]+$' "$1" | tail -n 1
}

# count LITERAL: log lines holding LITERAL.
count() {
	grep -acF -- "$1" "$tmp/log.jsonl"
}

# 1. an ordinary pipeline: every decision and outcome of both stages
run -c 'i=0; { while [ $i -lt 2000 ]; do i=$((i+1)); done; echo $i; } | { read n; echo "got $n"; }'
if [ "$(cat "$tmp/out")" = "got 2000" ] && [ "$(count '"resource":"[",')" = 2001 ] &&
	[ "$(count '"record":"response","action":"shell:exec","input":{"command":"[ ')" = 2001 ] &&
	whole_json; then
	ok "a finished pipeline stage wrote all its 2001 [ decisions and their outcomes"
else
	not_ok "a finished pipeline stage wrote all its 2001 [ decisions and their outcomes"
	diag "out: $(cat "$tmp/out")" "[ decisions: $(count '"resource":"[",')"
fi

# 2. SIGPIPE: the stage dies writing into a pipe nobody reads any more
run -c '{ i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; sleep 0.3; echo done; echo after; } | true; echo "ps=${PIPESTATUS[0]}"'
if [ "$(cat "$tmp/out")" = "ps=141" ] && [ "$(count '"resource":"[",')" = 3001 ] &&
	has_decision "[ 3000 -lt 3000 ]" && has_decision "echo done" &&
	[ "$(count '"command":"echo after"')" = 0 ] && whole_json; then
	ok "a stage killed by SIGPIPE wrote every line up to the echo that died"
else
	not_ok "a stage killed by SIGPIPE wrote every line up to the echo that died"
	diag "out: $(cat "$tmp/out")" "[ decisions: $(count '"resource":"[",')" \
		"echo done: $(count '"command":"echo done"')"
fi

# 3. the command timeout: SIGTERM to the whole group while the stage decides
loop='i=0; while :; do i=$((i+1)); [ $i -gt 0 ]; echo $i; done'
run --command-timeout 1s -c "{ $loop; } | cat > n"
last=$(last_printed "$tmp/n")
if [ "$(cat "$tmp/status")" = 124 ] && [ -n "$last" ] && has_decision "[ $last -gt 0 ]" &&
	whole_json; then
	ok "a stage ended by the command timeout's SIGTERM wrote its lines (last printed $last)"
else
	not_ok "a stage ended by the command timeout's SIGTERM wrote its lines"
	diag "status $(cat "$tmp/status"), last printed '$last'" \
		"last [ in the log: $(grep -ao '"command":"\[ [0-9]* -gt 0 \]"' "$tmp/log.jsonl" | tail -n 1)" \
		"lines for it: $(grep -ac "\"command\":\"\[ $last -gt 0 \]\"" "$tmp/log.jsonl"), whole JSON: $(whole_json && echo yes || echo no)"
fi

# 4. SIGTERM trapped by the stage: it goes on until the SIGKILL 2 s later.
# Its reader ignores SIGTERM too (a `cat` left at the default would die of
# the SIGTERM at once and the stage of SIGPIPE at its next echo, maybe before
# its trap ran: case 4b), so the stage prints "term" into n and numbers after
# it until the SIGKILL: it died of that, writing each line at once.
run --command-timeout 1s -c "{ trap 'echo term' TERM; $loop; } | { trap '' TERM; cat > n; }"
last=$(last_printed "$tmp/n")
after_term=$(sed -n '/^term$/,$p' "$tmp/n" | grep -cE '^[0-9]+$')
if [ "$(cat "$tmp/status")" = 124 ] && [ -n "$last" ] && has_decision "[ $last -gt 0 ]" &&
	[ "$after_term" -gt 0 ] && whole_json; then
	ok "a stage that traps SIGTERM and dies of the SIGKILL lost no line (last printed $last, $after_term after the trap)"
else
	not_ok "a stage that traps SIGTERM and dies of the SIGKILL lost no line"
	diag "status $(cat "$tmp/status"), last printed '$last', numbers after the trap's line: $after_term" \
		"last [ in the log: $(grep -ao '"command":"\[ [0-9]* -gt 0 \]"' "$tmp/log.jsonl" | tail -n 1)" \
		"lines for it: $(grep -ac "\"command\":\"\[ $last -gt 0 \]\"" "$tmp/log.jsonl"), whole JSON: $(whole_json && echo yes || echo no)"
fi

# 4b. the same stage with a reader that dies of the SIGTERM: the SIGTERM lands
# between an echo's decision and its write (BOX_TEST_SLOW_EXEC holds every
# echo 300 ms after its decision), the reader is gone by the write, and the
# stage dies of SIGPIPE before its trap could run (a trap runs between
# commands). Its lines are written at once (SIGTERM is the script's): the
# decision of the echo that died is in the log, and the trap's is not.
BOX_TEST_SLOW_EXEC=echo:300 run --command-timeout 1s -c "{ trap 'echo term >&2' TERM; $loop; } | cat > n"
last=$(last_printed "$tmp/n")
if [ "$(cat "$tmp/status")" = 124 ] && [ -n "$last" ] && has_decision "[ $last -gt 0 ]" &&
	has_decision "echo $((last + 1))" && [ "$(count '"command":"echo term"')" = 0 ] &&
	! grep -q term "$tmp/err" && whole_json; then
	ok "a stage that traps SIGTERM and dies of SIGPIPE before its trap lost no line (last printed $last)"
else
	not_ok "a stage that traps SIGTERM and dies of SIGPIPE before its trap lost no line"
	diag "status $(cat "$tmp/status"), last printed '$last', err: $(cat "$tmp/err")" \
		"last echo in the log: $(grep -ao '"command":"echo [0-9a-z]*"' "$tmp/log.jsonl" | tail -n 1)" \
		"whole JSON: $(whole_json && echo yes || echo no)"
fi

# 4c. the hook's value is checked: box-sh refuses to start, naming it
BOX_TEST_SLOW_EXEC=echo run -c 'echo hi'
if [ "$(cat "$tmp/status")" != 0 ] && [ ! -s "$tmp/out" ] &&
	grep -q 'BOX_TEST_SLOW_EXEC: not PROGRAM:MS' "$tmp/err"; then
	ok "a malformed BOX_TEST_SLOW_EXEC makes box-sh refuse to start"
else
	not_ok "a malformed BOX_TEST_SLOW_EXEC makes box-sh refuse to start"
	diag "status $(cat "$tmp/status"), out: $(cat "$tmp/out"), err: $(cat "$tmp/err")"
fi

# 5. timeout -s KILL of a nested shell's pipeline
run -c "timeout -s KILL 1 sh -c '{ $loop; } | cat > n'; echo st=\$?"
last=$(last_printed "$tmp/n")
if grep -qx 'st=1[23][47]' "$tmp/out" && [ -n "$last" ] && has_decision "[ $last -gt 0 ]" &&
	whole_json; then
	ok "stages killed by timeout -s KILL lost no line (last printed $last)"
else
	not_ok "stages killed by timeout -s KILL lost no line"
	diag "out: $(cat "$tmp/out"), last printed '$last'" \
		"last [ in the log: $(grep -ao '"command":"\[ [0-9]* -gt 0 \]"' "$tmp/log.jsonl" | tail -n 1)" \
		"lines for it: $(grep -ac "\"command\":\"\[ $last -gt 0 \]\"" "$tmp/log.jsonl"), whole JSON: $(whole_json && echo yes || echo no)"
fi

# 6. kill -9 of a background job
run -c "{ $loop; } > n & sleep 1; kill -9 \$!; wait; echo waited"
last=$(last_printed "$tmp/n")
if [ "$(cat "$tmp/out")" = waited ] && [ -n "$last" ] && has_decision "[ $last -gt 0 ]" &&
	whole_json; then
	ok "a background job killed by kill -9 lost no line (last printed $last)"
else
	not_ok "a background job killed by kill -9 lost no line"
	diag "out: $(cat "$tmp/out"), last printed '$last'" \
		"last [ in the log: $(grep -ao '"command":"\[ [0-9]* -gt 0 \]"' "$tmp/log.jsonl" | tail -n 1)" \
		"lines for it: $(grep -ac "\"command\":\"\[ $last -gt 0 \]\"" "$tmp/log.jsonl"), whole JSON: $(whole_json && echo yes || echo no)"
fi

# 7. the batching itself: a stage's 2,000 decisions take a handful of writes, not one each
if command -v strace > /dev/null 2>&1; then
	rm -f "$tmp/log.jsonl"
	(cd "$tmp" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -e trace=write -o "$tmp/strace" "$boxsh" --policy "$tmp/allow.dw" \
		--home "$tmp" --decisions "$tmp/log.jsonl" \
		-c 'i=0; { while [ $i -lt 2000 ]; do i=$((i+1)); done; } | cat' > /dev/null 2>&1)
	writes=$(grep -c 'write(' "$tmp/strace")
	lines=$(wc -l < "$tmp/log.jsonl")
	if [ "$lines" -ge 4000 ] && [ "$writes" -lt 100 ]; then
		ok "a pipeline stage's $lines lines took $writes writes"
	else
		not_ok "a pipeline stage's lines are written in batches ($lines lines, $writes writes)"
	fi
else
	skip "a pipeline stage's lines are written in batches" "no strace on this host"
fi

tap_done
