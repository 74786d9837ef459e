#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — outside shell conformance suites (`make check-conformance`): every file of bash's
# own tests/ (its 83 run-* scripts) and of busybox's shell/ash_test/ (its 333 *.tests), as
# test/shell/suites/fetch.sh installed them, runs against /bin/bash and against box-sh (the
# sanitizer build, allow-all policy) in one run.
#
# - bash's run-X: as bash's tests/run-all does — `sh run-X` in the tests directory with
#   THIS_SH set to the shell and recho/zecho/printenv/xcase (built from bash's support/) on
#   PATH; any output but bash's own "warning:" lines is a failure (run-all: "any output
#   indicates a possible anomaly"). run-all and run-minimal are not tests.
# - busybox's NAME.tests: as ash_test/run-all does — `$THIS_SH ./NAME.tests 2>&1` in its
#   directory, compared with NAME.right; a message's "WHO: line N:" prefix is mapped to
#   "SHELL: line N:" on both sides (the shell's name or the script's path is in it).
# A file /bin/bash itself fails here (no locale, no tty, root, ash-only behaviour) is
# excluded and listed with bash's result. Each shell's run of a file is bounded by
# BOX_SUITES_TIMEOUT seconds (default 120), box-sh's by BOX_SUITES_SLOWER (8) times what bash
# took if that is more: past it the file is a HANG (bash's own HANG excludes the file). A sanitizer report
# (ASan/UBSan, halt_on_error, logged into the scratch directory) or box-sh killed by SIGSEGV,
# SIGBUS, SIGFPE, SIGILL or SIGABRT is a CRASH.
#
# The ratchet: passing.txt lists the files box-sh passes; one of them failing (in every one
# of its runs: a difference is retried, see below) is a regression (not ok), as is any CRASH or HANG of box-sh where bash finishes. A pass not on the
# list is printed as newly passing; BOX_SUITES_WRITE_PASSING=1 rewrites the list from this run.
# The targets (box-sh agreeing with bash on BOX_SUITES_TARGET_BASH=40 bash files and
# BOX_SUITES_TARGET_BUSYBOX=250 busybox files) are reported, not enforced.
#
# Usage: run.sh [FILE...]  FILE: bash/run-NAME or busybox/ash-DIR/NAME (default: all).
# Env: BOX_SH (default build/san/bin/box-sh), BOX_SUITES_JOBS (2), BOX_SUITES_TIMEOUT (120),
# BOX_SUITES_SLOWER (8), BOX_SUITES_RETRIES (2: more runs of a listed file box-sh fails),
# BOX_SUITES_VERBOSE=1 (show the first lines of box-sh's diff for every failing file).
# Runs in a scratch directory it removes (/var/tmp/box-suites.*); as root each shell's run of
# a file has its own pid and mount namespaces with a private /tmp: nothing is left behind
# (so BOX_SH is copied into the scratch directory: a checkout under /tmp would be hidden).
# Trusts: the suites' files as fetch.sh verified them; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/where.sh"

# --job ID: one file against both shells (run by xargs below, with the scratch set up).
if [ "${1:-}" = --job ]; then
	id=$2
	suite=${id%%/*} rest=${id#*/}
	res=$SCR/res/${id//\//__}
	limit=$SUITES_TIMEOUT
	# SUITES_WHO=box (a retry, below): box-sh alone, against bash's verdict, exit status and
	# bound from the first run.
	whos="bash box"
	if [ "${SUITES_WHO:-}" = box ]; then
		whos=box
		bash_rc=$(cat "$res.bash.rc")
		limit=$(cat "$res.box.limit")
	fi
	# As root each run has its own pid and mount namespaces: a private /tmp (the suites
	# write fixed names there: /tmp/redir-test, …) and no process outliving the file.
	ISOLATE=() tmpdir=
	if [ "$SUITES_ISOLATE" = 1 ]; then
		ISOLATE=(unshare --mount --pid --fork --mount-proc --propagation private "$SCR/bin/private-tmp")
		tmpdir=/tmp
	fi
	for who in $whos; do
		if [ $who = bash ]; then sh=/bin/bash; else sh=$SCR/bin/box-sh; fi
		w=$SCR/w/${id//\//__}.$who
		mkdir -p "$w/tmp" "$w/home" "$w/san"
		[ -n "$tmpdir" ] || tmpdir=$w/tmp
		if [ "$suite" = bash ]; then
			cp -a "$SUITES_BASH/tests" "$w/t"
			dir=$w/t cmd=(sh "$rest") path=$SCR/helpers-bash
		else
			cp -a "$SUITES_BB/shell/ash_test/${rest%/*}" "$w/t"
			dir=$w/t cmd=("$sh" "./${rest#*/}.tests") path=$SCR/helpers-bb
		fi
		t0=$(date +%s)
		# (braces: bash's own "Killed" report of a file that SIGKILLs itself goes nowhere)
		{ (
			cd "$dir" || exit 99
			exec env -i PATH="$path:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
				HOME="$w/home" TMPDIR="$tmpdir" TERM=dumb USER=root LOGNAME=root \
				THIS_SH="$sh" BASH_TSTOUT="$w/tmp/bashtst" \
				ASAN_OPTIONS="log_path=$w/san/asan:halt_on_error=1:detect_leaks=0:handle_abort=1:handle_sigill=1:handle_segv=1:handle_sigbus=1:handle_sigfpe=1" \
				UBSAN_OPTIONS="log_path=$w/san/ubsan:halt_on_error=1:print_stacktrace=1" \
				setsid -w "${ISOLATE[@]}" timeout -k 5 "$limit" "${cmd[@]}"
		) </dev/null >"$w/out" 2>&1; } 2>/dev/null
		rc=$?
		took=$(($(date +%s) - t0))
		verdict=FAIL
		if [ "$suite" = bash ]; then
			grep -va '^warning: ' "$w/out" >"$w/diff"
			[ -s "$w/diff" ] || verdict=PASS
		else
			name=$w/t/${rest#*/}
			norm='s/^[^ :]*: line \([0-9]*\):/SHELL: line \1:/'
			grep -va '^ash: using fallback suid method$' "$w/out" | sed "$norm" >"$w/got"
			sed "$norm" "$name.right" >"$w/want"
			diff -u "$w/want" "$w/got" >"$w/diff" && verdict=PASS
		fi
		# timeout's 124 (or 137 after -k's SIGKILL) once the bound is reached; a script may
		# SIGKILL itself (ash-signals/reap1.tests: `kill -9 $$`), so the time decides.
		case $rc in 124 | 137) [ "$took" -ge "$limit" ] && verdict=HANG ;; esac
		if [ $who = box ]; then
			# SIGILL SIGABRT SIGBUS SIGFPE SIGSEGV, unless bash ended the same way.
			case $rc in 132 | 134 | 135 | 136 | 139) [ "$suite" = busybox ] && [ "$rc" != "$bash_rc" ] && verdict=CRASH ;; esac
			if [ -n "$(ls -A "$w/san")" ]; then
				verdict=CRASH
				cat "$w/san"/* | head -30 >"$w/diff"
			fi
		fi
		echo "$verdict" >"$res.$who"
		echo "$took" >"$res.$who.time"
		# box-sh's bound: the timeout, or SUITES_SLOWER times what bash took if more (a file
		# that is slow in bash on this machine, loaded or not, is no hang of box-sh's).
		if [ $who = bash ]; then
			bash_rc=$rc
			echo "$rc" >"$res.bash.rc"
			if [ $verdict != HANG ] && [ $((took * SUITES_SLOWER)) -gt "$limit" ]; then
				limit=$((took * SUITES_SLOWER))
			fi
			echo "$limit" >"$res.box.limit"
		fi
		head -40 "$w/diff" >"$res.$who.diff"
		rm -rf "$w"
	done
	exit 0
fi

. "$here/../../lib.sh"
root=$(cd "$here/../../.." && pwd)
BOX_SH=${BOX_SH:-$root/build/san/bin/box-sh}
case $BOX_SH in /*) ;; *) BOX_SH=$PWD/$BOX_SH ;; esac
SUITES_TIMEOUT=${BOX_SUITES_TIMEOUT:-120}
# 8: the suites run the sanitizer build, which takes 3.6 times what bash takes on busybox's
# ash-z_slow/many_ifs on an idle machine (117 s against 32 s): 4 was a bound a loaded machine
# tripped. An endless loop still ends as a HANG.
SUITES_SLOWER=${BOX_SUITES_SLOWER:-8}
jobs=${BOX_SUITES_JOBS:-2}
SUITES_RETRIES=${BOX_SUITES_RETRIES:-2}
passing=$here/passing.txt
fail_setup() {
	not_ok "conformance: $*"
	tap_done
	exit 1
}
[ -x "$BOX_SH" ] || fail_setup "box-sh is built ($BOX_SH; make SAN=address,undefined build/san/bin/box-sh)"
for d in "$SUITES_BASH/tests" "$SUITES_BB/shell/ash_test"; do
	[ -d "$d" ] || fail_setup "the suites are fetched ($d missing: run make deps, test/shell/suites/fetch.sh)"
done

# Not under /tmp: each file's run gets a private /tmp where it can (SUITES_ISOLATE).
SCR=$(mktemp -d /var/tmp/box-suites.XXXXXX)
trap 'rm -rf "$SCR"' EXIT
mkdir -p "$SCR/res" "$SCR/w" "$SCR/bin" "$SCR/helpers-bash" "$SCR/helpers-bb"
printf '#!/bin/sh\n# In new mount and pid namespaces: a private /tmp, then the command.\nmount -t tmpfs -o mode=1777,size=256m box-suites-tmp /tmp || exit 98\nexec "$@"\n' >"$SCR/bin/private-tmp"
chmod 0755 "$SCR/bin/private-tmp"
SUITES_ISOLATE=0
if [ "$(id -u)" -eq 0 ] &&
	unshare --mount --pid --fork --mount-proc --propagation private "$SCR/bin/private-tmp" true 2>/dev/null; then
	SUITES_ISOLATE=1
else
	echo "# not root or no namespaces: the files share /tmp and may leave processes behind"
fi
echo 'permit(principal, action, resource);' >"$SCR/allow.cedar"
# The binary itself is copied out of the checkout: one under /tmp (a fresh clone there) is
# hidden by each run's private /tmp.
cp "$BOX_SH" "$SCR/bin/box-sh.bin" || fail_setup "box-sh can be copied into $SCR"
printf '#!/bin/sh\nexec "%s" --policy "%s" "$@"\n' "$SCR/bin/box-sh.bin" "$SCR/allow.cedar" >"$SCR/bin/box-sh"
chmod 0755 "$SCR/bin/box-sh"
# The helper commands the suites' scripts call, each suite's own sources. bash's include
# "bashansi.h" (its top directory, not kept by fetch.sh): the ANSI headers it stands for.
mkdir -p "$SCR/inc"
printf '#include <string.h>\n#include <stdlib.h>\n' >"$SCR/inc/bashansi.h"
for h in recho zecho printenv xcase; do
	cc -O2 -w -DHAVE_UNISTD_H=1 -I"$SCR/inc" -o "$SCR/helpers-bash/$h" "$SUITES_BASH/support/$h.c" ||
		fail_setup "build bash's support/$h.c"
done
for h in recho zecho printenv; do
	cc -O2 -w -o "$SCR/helpers-bb/$h" "$SUITES_BB/shell/ash_test/$h.c" ||
		fail_setup "build busybox's ash_test/$h.c"
done

# The files, as IDs.
all=()
for f in "$SUITES_BASH"/tests/run-*; do
	case ${f##*/} in run-all | run-minimal | *.orig | *~) continue ;; esac
	all+=("bash/${f##*/}")
done
while IFS= read -r f; do
	f=${f#"$SUITES_BB"/shell/ash_test/}
	all+=("busybox/${f%.tests}")
done < <(find "$SUITES_BB/shell/ash_test" -mindepth 2 -maxdepth 2 -name '*.tests' | LC_ALL=C sort)
if [ $# -gt 0 ]; then
	want=("$@")
	all=()
	for f in "${want[@]}"; do all+=("${f%.tests}"); done
fi

export SCR SUITES_TIMEOUT SUITES_SLOWER SUITES_ROOT SUITES_ISOLATE
start=$SECONDS
printf '%s\n' "${all[@]}" | xargs -d '\n' -P "$jobs" -n 1 "$here/run.sh" --job
# A listed file box-sh fails (FAIL: a difference, not a CRASH or HANG) while bash passes runs
# again, box-sh alone, up to SUITES_RETRIES more times, one at a time: some files race
# their own background jobs against sleeps (busybox's ash-misc/exitcode_trap2: `kill $$ &`
# then `(sleep 1; exit 42)`; bash itself gives 42:1 there in about a third of its runs), and
# two jobs at once on a loaded machine lose that race. A real regression fails every time.
declare -A retried=()
for id in "${all[@]}"; do
	r=$SCR/res/${id//\//__}
	grep -qxF "$id" "$passing" 2>/dev/null || continue
	[ "$(cat "$r.bash" 2>/dev/null)" = PASS ] && [ "$(cat "$r.box" 2>/dev/null)" = FAIL ] || continue
	n=0
	while [ "$(cat "$r.box")" = FAIL ] && [ $n -lt "$SUITES_RETRIES" ]; do
		n=$((n + 1))
		cp "$r.box.diff" "$r.box.diff.$n"
		SUITES_WHO=box "$here/run.sh" --job "$id"
	done
	retried[$id]=$n
done
echo "# ran ${#all[@]} files against bash and box-sh in $((SECONDS - start)) s ($jobs jobs; bound per file and shell: ${SUITES_TIMEOUT} s, for box-sh ${SUITES_SLOWER} times bash's time if more)"
echo "# slowest (seconds: bash, box-sh):"
for id in "${all[@]}"; do
	r=$SCR/res/${id//\//__}
	echo "$(cat "$r.bash.time" 2>/dev/null || echo 0) $(cat "$r.box.time" 2>/dev/null || echo 0) $id"
done | sort -k2,2nr -k1,1nr | head -5 | sed 's/^/#   /'

declare -A listed=()
if [ -f "$passing" ]; then
	while IFS= read -r l; do
		case $l in '' | '#'*) continue ;; esac
		listed[$l]=1
	done <"$passing"
fi

declare -A n_files n_bash n_agree n_crash n_hang
for s in bash busybox; do n_files[$s]=0 n_bash[$s]=0 n_agree[$s]=0 n_crash[$s]=0 n_hang[$s]=0; done
excluded=() failing=() newly=() now_passing=()
show_diff() { sed 's/^/#     /' "$1"; }
for id in "${all[@]}"; do
	s=${id%%/*}
	r=$SCR/res/${id//\//__}
	if [ ! -f "$r.bash" ] || [ ! -f "$r.box" ]; then
		not_ok "conformance/$id: no result (unknown file?)"
		continue
	fi
	b=$(cat "$r.bash") x=$(cat "$r.box")
	n_files[$s]=$((n_files[$s] + 1))
	case $x in
	CRASH)
		n_crash[$s]=$((n_crash[$s] + 1))
		not_ok "conformance/$id: box-sh CRASH"
		show_diff "$r.box.diff"
		continue ;;
	HANG)
		if [ "$b" != HANG ]; then
			n_hang[$s]=$((n_hang[$s] + 1))
			not_ok "conformance/$id: box-sh HANG (no end in $(cat "$r.box.time") s; bash: $b in $(cat "$r.bash.time") s)"
			continue
		fi ;;
	*) ;;
	esac
	if [ "$b" != PASS ]; then
		excluded+=("$id (bash: $b)")
		continue
	fi
	n_bash[$s]=$((n_bash[$s] + 1))
	if [ "$x" = PASS ]; then
		n_agree[$s]=$((n_agree[$s] + 1))
		now_passing+=("$id")
		if [ -n "${retried[$id]:-}" ]; then
			ok "conformance/$id # passed on run $((retried[$id] + 1)); the first run's difference:"
			show_diff "$r.box.diff.1"
		elif [ -n "${listed[$id]:-}" ]; then
			ok "conformance/$id"
		else
			ok "conformance/$id # newly passing (not in test/shell/suites/passing.txt)"
			newly+=("$id")
		fi
	elif [ -n "${listed[$id]:-}" ]; then
		not_ok "conformance/$id: regression (in passing.txt; box-sh: $x${retried[$id]:+, in all $((retried[$id] + 1)) runs})"
		show_diff "$r.box.diff"
	else
		failing+=("$id")
		if [ "${BOX_SUITES_VERBOSE:-0}" = 1 ]; then
			echo "# $id: box-sh $x"
			show_diff "$r.box.diff"
		fi
	fi
done

echo "#"
echo "# excluded — /bin/bash itself fails them here (${#excluded[@]}):"
for e in "${excluded[@]}"; do echo "#   $e"; done
echo "# box-sh differs from bash, not yet in passing.txt (${#failing[@]}):"
for e in "${failing[@]}"; do echo "#   $e"; done
if [ ${#newly[@]} -gt 0 ]; then
	echo "# newly passing — add to test/shell/suites/passing.txt (BOX_SUITES_WRITE_PASSING=1) (${#newly[@]}):"
	for e in "${newly[@]}"; do echo "#   $e"; done
fi
echo "#"
printf '# %-8s %6s %12s %14s %8s %6s %s\n' suite files "bash passes" "box-sh agrees" crashes hangs target
for s in bash busybox; do
	if [ $s = bash ]; then t=${BOX_SUITES_TARGET_BASH:-40}; else t=${BOX_SUITES_TARGET_BUSYBOX:-250}; fi
	if [ "${n_agree[$s]}" -ge "$t" ]; then tm="$t (met)"; else tm="$t (target not yet met)"; fi
	printf '# %-8s %6s %12s %14s %8s %6s %s\n' $s "${n_files[$s]}" "${n_bash[$s]}" "${n_agree[$s]}" \
		"${n_crash[$s]}" "${n_hang[$s]}" "$tm"
done

if [ "${BOX_SUITES_WRITE_PASSING:-0}" = 1 ] && [ $# -gt 0 ]; then
	echo "# BOX_SUITES_WRITE_PASSING=1 rewrites the list from a run of every file only: not written"
elif [ "${BOX_SUITES_WRITE_PASSING:-0}" = 1 ]; then
	{
		echo "# test/shell/suites/passing.txt — the files of the outside suites box-sh passes"
		echo "# (test/shell/suites/run.sh): one failing is a regression of make check-conformance."
		echo "# Regenerate: BOX_SUITES_WRITE_PASSING=1 make check-conformance"
		printf '%s\n' "${now_passing[@]}" | LC_ALL=C sort
	} >"$passing"
	echo "# wrote $passing (${#now_passing[@]} files)"
fi
tap_done
