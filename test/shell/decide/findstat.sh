#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# findstat.sh — box-sh's find reads an entry's type from readdir when its
# expression needs nothing more (`find . -name '*.c'`): every
# entry is still decided read_metadata and recorded, as before, but no stat
# call is made per entry; an expression that reads sizes or times (-size,
# -newer, -mtime, -empty, -printf) still stats each entry. Symlinks and
# directories are told apart as lstat would (no link is followed).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
boxsh=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/box-sh
if [ ! -x "$boxsh" ]; then
	not_ok "box-sh is built ($boxsh)"
	tap_done
	exit 1
fi
tmp=$(mktemp -d /tmp/shperf-findstat.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'permit (principal, action, resource);\n' > "$tmp/allow.dw"
mkdir -p "$tmp/t/a" "$tmp/t/b"
for i in $(seq 1 100); do printf 'x\n' > "$tmp/t/a/f$i.c"; printf 'y\n' > "$tmp/t/b/g$i.h"; done
ln -s a "$tmp/t/link"

# run SCRIPT: box-sh in $tmp/t; stdout in $tmp/out, decisions in $tmp/log.jsonl, strace in $tmp/st
run() {
	rm -f "$tmp/log.jsonl"
	# LeakSanitizer cannot run under ptrace (the sanitizer build)
	(cd "$tmp/t" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -e trace=newfstatat,fstatat64,stat,lstat,statx -o "$tmp/st" \
		"$boxsh" --policy "$tmp/allow.dw" --home "$tmp" --decisions "$tmp/log.jsonl" \
		-c "$1" > "$tmp/out" 2>&1)
}
metadata() { grep -c '"record":"response","action":"fs:read","input":{"path":"[^"]*","operation":"read_metadata"}' "$tmp/log.jsonl"; }
# (one line per call: strace -f splits a call another process interrupts into an
# "<unfinished ...>" line and a "<... resumed>" one, which is not counted again)
stats() { grep 'stat' "$tmp/st" | grep -vc 'resumed>'; }

if ! command -v strace > /dev/null 2>&1; then
	skip "find -name stats no entry" "no strace on this host"
	tap_done
	exit 0
fi
run "find . -name '*.c' | wc -l; find . -type l; find link -name 'f1.c'"
want=$(printf '100\n./link\n') # the starting point link is not followed (-P)
# 203 entries under . (a, b, link and 200 files) plus the starting points, each recorded
if [ "$(cat "$tmp/out")" = "$want" ] && [ "$(metadata)" -ge 406 ] && [ "$(stats)" -lt 40 ]; then
	ok "find -name / -type: $(metadata) read_metadata outcomes, $(stats) stat calls"
else
	not_ok "find -name / -type decides every entry without a stat each"
	diag "out: $(cat "$tmp/out" | tr '\n' ' ')" "read_metadata outcomes $(metadata), stat calls $(stats)"
fi
run "find . -size -2k -name '*.h' | wc -l"
if [ "$(cat "$tmp/out")" = 100 ] && [ "$(stats)" -ge 200 ]; then
	ok "find -size still stats every entry ($(stats) stat calls)"
else
	not_ok "find -size still stats every entry"
	diag "out: $(cat "$tmp/out")" "stat calls $(stats)"
fi
tap_done
