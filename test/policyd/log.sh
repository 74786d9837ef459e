#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# log.sh — `boxctl log NAME|ID [-f] [--json]` against state dirs written by
# hand (docs/boxctl.1.md "Decision log"): the line format, .1 before the current file,
# ID filtering, escaping of control characters, --json, -f across a rotation,
# and the errors.
set -u
. "$(dirname "$0")/../lib.sh"

BOXCTL=$BOX_BIN/boxctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME=$tmp/state
dir=$XDG_STATE_HOME/box/demo
mkdir -p "$dir"

l1='{"time":"2026-01-02T03:04:05.006Z","box":"demo","id":"aaaaaaaaaaaa","action":"fs:read","resource":"~/p/a.txt","verdict":"permit","cause":"permitted","rules":["fs_ok"],"message":"policy permitted this operation on '"'"'~/p/a.txt'"'"'.","source":"box-shell","input":{"path":"~/p/a.txt","operation":"read_content"}}'
l2='{"time":"2026-01-02T03:04:06.007Z","box":"demo","id":"bbbbbbbbbbbb","action":"fs:write","resource":"~/x\u001b[31m\nred","verdict":"deny","cause":"forbidden","rules":["a","b","c"],"message":"m","source":"box-shell","input":{}}'
l3='{"time":"2026-01-02T03:04:07.008Z","box":"demo","id":"bbbbbbbbbbbb","action":"net:connect","resource":"example.com:443","verdict":"deny","cause":"no_match","rules":[],"message":"m","source":"box-gateway","input":{"host":"example.com","port":443}}'
printf '%s\n' "$l1" >"$dir/decisions.jsonl.1"
printf '%s\n%s\n' "$l2" "$l3" >"$dir/decisions.jsonl"

out=$("$BOXCTL" log demo)
want='2026-01-02T03:04:05.006Z permit fs:read ~/p/a.txt fs_ok
2026-01-02T03:04:06.007Z deny fs:write ~/x\x1b[31m\nred a+2
2026-01-02T03:04:07.008Z deny net:connect example.com:443 -'
if [ "$out" = "$want" ]; then ok "log NAME: lines, .1 first, escapes, RULE+N"; else not_ok "log NAME"; diag "$out"; fi

out=$("$BOXCTL" log bbbbbbbbbbbb | wc -l)
check "log ID shows that run only" [ "$out" -eq 2 ]

out=$("$BOXCTL" log demo --json)
want=$(printf '%s\n%s\n%s' "$l1" "$l2" "$l3")
check "log --json prints the raw lines" [ "$out" = "$want" ]

"$BOXCTL" log nosuchbox >/dev/null 2>"$tmp/err"; rc=$?
check "log of an unknown box exits 1" [ "$rc" -eq 1 ]
check "log of an unknown box says so" grep -q "boxctl: error: no decisions of a box 'nosuchbox'" "$tmp/err"
"$BOXCTL" log 'bad/name' >/dev/null 2>&1; rc=$?
check "log of a bad name is a usage error" [ "$rc" -eq 2 ]
"$BOXCTL" log >/dev/null 2>&1; rc=$?
check "log without NAME is a usage error" [ "$rc" -eq 2 ]

# Not a decision: skipped with a warning.
printf 'garbage\n' >>"$dir/decisions.jsonl"
out=$("$BOXCTL" log demo 2>"$tmp/err" | wc -l)
check "log skips lines that are not decisions" [ "$out" -eq 3 ]
check "log warns about them" grep -q "warning: skipping lines" "$tmp/err"

# -f: prints what is there, then what comes, across a rotation.
"$BOXCTL" log -f demo >"$tmp/follow" 2>/dev/null &
pid=$!
sleep 0.5
printf '%s\n' "${l3/07.008/08.000}" >>"$dir/decisions.jsonl"
sleep 0.5
mv "$dir/decisions.jsonl" "$dir/decisions.jsonl.1"
printf '%s\n' "${l3/07.008/09.000}" >"$dir/decisions.jsonl"
sleep 0.8
kill -INT $pid 2>/dev/null
wait $pid
check "log -f follows appends" grep -q '03:04:08.000Z' "$tmp/follow"
check "log -f follows a rotation" grep -q '03:04:09.000Z' "$tmp/follow"
n=$(grep -c 'net:connect' "$tmp/follow")
check "log -f prints each line once" [ "$n" -eq 3 ]

# A per-tool MCP refinement no rule matched (cause not_refined) is a permit.
dir2=$XDG_STATE_HOME/box/mcpdemo
mkdir -p "$dir2"
l4='{"time":"2026-01-02T03:04:10.000Z","box":"mcpdemo","id":"cccccccccccc","action":"docs::Action::\"add\"","resource":"docs/add","verdict":"permit","cause":"not_refined","rules":[],"message":"policy permitted this operation on '"'"'docs/add'"'"'.","source":"box-mcpd","input":{"a":5}}'
printf '%s\n' "$l4" >"$dir2/decisions.jsonl"
out=$("$BOXCTL" log mcpdemo --verdict permit)
want='2026-01-02T03:04:10.000Z permit docs::Action::"add" docs/add -'
if [ "$out" = "$want" ]; then ok "log shows a not_refined refinement as a permit"; else not_ok "log not_refined"; diag "$out"; fi
out=$("$BOXCTL" log mcpdemo --verdict deny | wc -l)
check "log --verdict deny leaves a not_refined permit out" [ "$out" -eq 0 ]

tap_done
