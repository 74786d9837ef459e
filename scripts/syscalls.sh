#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# syscalls.sh FILE.c — the system calls a daemon's seccomp allow-list names, read from its
# source (common/seccomp_allow.c builds the filter: everything not listed kills the
# process): one Markdown paragraph of the calls allowed outright (`static const int
# allowed[]`), then one line per call allowed only under a condition (a
# seccomp_rule_add*() naming SCMP_SYS(call) with argument checks). Used by scripts/man.sh;
# fails when the file names no call, so a page never shows an empty list.
# Trusts: the tree's own files.
set -euo pipefail
f=$1
[ -r "$f" ] || { echo "syscalls.sh: cannot read $f" >&2; exit 2; }
# NAME... -> `a`, `b`, ... (code spans: a man page would read the underscores as emphasis).
list() { sed 's/.*/`&`/' | paste -sd, - | sed 's/,/, /g'; }
# The block of the unconditional list, comments dropped.
plain=$(sed -n '/^static const int allowed\[\] = {/,/^};/p' "$f" | sed 's#/\*.*\*/##g' |
	grep -oE 'SCMP_SYS\([a-z0-9_]+\)' | sed -E 's/SCMP_SYS\((.*)\)/\1/' | sort -u)
# The other rules: "ACTION call" for each seccomp_rule_add*(ctx, ACTION, SCMP_SYS(call), ...).
rules=$(grep -oE 'seccomp_rule_add(_array)?\(ctx, *SCMP_ACT_[A-Z_]+(\([A-Z0-9]+\))?, *SCMP_SYS\([a-z0-9_]+\)' "$f" |
	sed -E 's/.*(SCMP_ACT_[A-Z_]+(\([A-Z0-9]+\))?), *SCMP_SYS\(([a-z0-9_]+)\)/\1 \3/' | sort -u || true)
cond=$(printf '%s\n' "$rules" | awk '$1 == "SCMP_ACT_ALLOW" { print $2 " (" $1 ")" }')
errs=$(printf '%s\n' "$rules" | awk '$1 ~ /^SCMP_ACT_ERRNO/ { sub(/SCMP_ACT_ERRNO\(/, "", $1); sub(/\)/, "", $1); print $2 " (" $1 ")" }')
n=$(printf '%s\n' "$plain" | grep -c . || true)
[ "$n" -gt 0 ] || { echo "syscalls.sh: $f: no 'static const int allowed[]' list" >&2; exit 2; }
printf 'Allowed (%d calls, from `%s`): ' "$n" "${f#"$(cd "$(dirname "$0")/.." && pwd)/"}"
printf '%s\n' "$plain" | list
[ -z "$cond" ] || printf '\nAllowed only with the arguments the source checks: %s.\n' \
	"$(printf '%s\n' "$cond" | list)"
[ -z "$errs" ] || printf '\nRefused with an error instead: %s.\n' "$(printf '%s\n' "$errs" | list)"
printf '\nAny other call kills the process (`SECCOMP_RET_KILL_PROCESS`).\n'
