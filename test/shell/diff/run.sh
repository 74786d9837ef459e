#!/usr/bin/env bash
# run.sh — the differential corpus: each script under
# test/shell/diff/sh-*/ runs in box-sh (allow-all policy) and in dash, each
# under bash-*/ in box-sh and in bash; stdout and the exit status must be the
# same, and stderr byte for byte (box-sh's messages are bash's, "$0: line N: …";
# dash's "SCRIPT: N: " prefix is mapped to that).
# A script NAME.sh may come with NAME.in (its standard input, else /dev/null).
# The groups c-bash/ and c-sh/ hold command texts, not scripts: each NAME.sh
# is given whole as `-c TEXT` (a non-interactive -c shell, as an agent's
# `bash -c`), $0 = bash and then the same two arguments. c-bash/: `bash -c`
# against `box-sh -c` (box-sh is bash; both print "bash: line N:").
# c-sh/: `dash -c` against box-sh's sh dialect (`box-sh -c 'sh -c "$1" …'`, the
# nested sh); stdout and the status must agree, and stderr only in being empty
# or not: box-shell's messages are bash's text (box-sh(1)).
# Each runs in a fresh empty directory with a fixed environment (LC_ALL=C).
# Usage: run.sh [SCRIPT...]   (default: the whole corpus)
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
BOX_SH=${BOX_BIN:-build/bin}/box-sh
case $BOX_SH in /*) ;; *) BOX_SH=$PWD/$BOX_SH ;; esac
if [ ! -x "$BOX_SH" ]; then
	not_ok "box-sh is built ($BOX_SH)"
	tap_done
	exit 1
fi
tmp=$(mktemp -d /tmp/shcore-diff.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo 'permit(principal, action, resource);' >"$tmp/allow.cedar"

if [ $# -eq 0 ]; then
	set -- "$here"/sh-*/*.sh "$here"/bash-*/*.sh "$here"/c-bash/*.sh "$here"/c-sh/*.sh
fi

# run_one SHELL SCRIPT WORKDIR [c|c-sh]: out err rc of one run, in WORKDIR.{out,err,rc}.
# SHELL: box, bash or dash; c: SCRIPT's text as -c TEXT; c-sh: for box, through its sh.
run_one() {
	local shell=$1 script=$2 w=$3 how=${4:-file} in=/dev/null
	[ -f "${script%.sh}.in" ] && in=${script%.sh}.in
	rm -rf "$w" && mkdir -p "$w/w" "$w/s" "$w/h"
	cp "$script" "$w/s/t.sh"
	local -a cmd
	if [ "$shell" = box ]; then
		cmd=("$BOX_SH" --policy "$tmp/allow.cedar")
	else
		cmd=("$shell")
	fi
	case $how/$shell in
	file/*) cmd+=(../s/t.sh a1 'a 2') ;;
	c-sh/box) cmd+=(-c 'sh -c "$1" bash a1 "a 2"' box-sh "$(cat "$script")") ;;
	*) cmd+=(-c "$(cat "$script")" bash a1 'a 2') ;;
	esac
	(
		cd "$w/w" || exit 99
		exec env -i PATH=/usr/bin:/bin HOME="$w/h" LC_ALL=C TZ=UTC \
			timeout -k 2 20 "${cmd[@]}"
	) <"$in" >"$w.out" 2>"$w.err"
	echo $? >"$w.rc"
}

for script in "$@"; do
	group=$(basename "$(dirname "$script")")
	name=$group/$(basename "$script" .sh)
	how=file
	case $group in
	sh-*) ref=dash ;;
	bash-*) ref=bash ;;
	c-bash) ref=bash how=c ;;
	c-sh) ref=dash how=c-sh ;;
	*) not_ok "diff/$name: unknown group (sh-*, bash-*, c-bash or c-sh)"; continue ;;
	esac
	run_one "$ref" "$script" "$tmp/ref" "$how"
	# A reference killed by its 20 s timeout is no oracle (host bash once missed the INT of
	# bash-misc/trap-exit-in-loop on a loaded CI machine and spun on): it runs again, at most
	# twice. box-sh's own run is never retried: a box-sh that hangs fails.
	for _ in 1 2; do
		case $(cat "$tmp/ref.rc") in 124 | 137) run_one "$ref" "$script" "$tmp/ref" "$how" ;; *) break ;; esac
	done
	run_one box "$script" "$tmp/box" "$how"
	case $how/$ref in
	file/bash | c/bash) ;; # the same prefix: "$0: line N:"
	file/dash) sed -i 's#^\.\./s/t\.sh: \([0-9]*\): #../s/t.sh: line \1: #' "$tmp/ref.err" ;;
	*) # c-sh: only whether there was a message
		[ -s "$tmp/ref.err" ] && echo message >"$tmp/ref.err"
		[ -s "$tmp/box.err" ] && echo message >"$tmp/box.err" ;;
	esac
	why=
	cmp -s "$tmp/ref.out" "$tmp/box.out" || why="stdout differs"
	cmp -s "$tmp/ref.err" "$tmp/box.err" || why="${why:+$why, }stderr differs"
	[ "$(cat "$tmp/ref.rc")" = "$(cat "$tmp/box.rc")" ] ||
		why="${why:+$why, }status $(cat "$tmp/box.rc") (against $ref $(cat "$tmp/ref.rc"))"
	if [ -z "$why" ]; then
		ok "diff/$name"
	else
		not_ok "diff/$name: $why"
		diff -u "$tmp/ref.out" "$tmp/box.out" | head -20 | sed 's/^/#   out /'
		diff -u "$tmp/ref.err" "$tmp/box.err" | head -10 | sed 's/^/#   err /'
	fi
done
tap_done
