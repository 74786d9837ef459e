#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — golden tests of box.ini loading: `boxctl check` on every test/config/*.ini.
#
# NAME.ini is checked from its own directory (@CASE@) with `-c box.ini`;
# NAME.out is the expected stdout (exit 0), NAME.err the expected stderr
# (exit 2). Placeholders, in the .ini and the expectations: @TMP@ (a fresh
# fixture tree), @CASE@ (the case directory, the cwd), @HOME@ (the caller's
# passwd home), @USER@ (its name), @UID@. A line "; requires: root" or "; requires: nonroot"
# gates a case. Every valid case is also checked to be a fixed point: its
# normalized output, loaded again, prints the same. No output may contain
# a secret value. NAME.dw, when present, is the case's policy.dw.
# `run.sh --update` rewrites the expectations (review them).
# Trusts: nothing; it is test code. Runs as root or as an ordinary user.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

update=0
[ "${1:-}" = --update ] && update=1
. "$here/lib-config.sh"

n=0
for ini in "$here"/*.ini; do
	case_prepare "$ini" || continue
	if [ $as_nobody = 1 ]; then
		as_nobody_run "$case" "$boxctl" check -c box.ini >"$case/stdout" 2>"$case/stderr"
	else
		run_check "$case" -c box.ini >"$case/stdout" 2>"$case/stderr"
	fi
	rc=$?
	n=$((n + 1))
	if grep -rq 's3cr3t\|filesecret' "$case/stdout" "$case/stderr"; then
		not_ok "$name: a secret value was printed"
		continue
	fi
	if [ $update = 1 ]; then
		rm -f "$here/$name.out" "$here/$name.err"
		if [ $rc -eq 0 ]; then
			unsubst <"$case/stdout" "$case" >"$here/$name.out"
		else
			unsubst <"$case/stderr" "$case" >"$here/$name.err"
		fi
		ok "$name (updated, rc $rc)"
		continue
	fi
	if [ -f "$here/$name.out" ]; then
		subst "$here/$name.out" "$case" >"$case/expected"
		if [ $rc -ne 0 ] || ! diff -u "$case/expected" "$case/stdout" >"$case/diff" ||
			[ -s "$case/stderr" ]; then
			not_ok "$name: loads and prints the expected config (rc $rc)"
			[ -f "$case/diff" ] && sed 's/^/#   /' "$case/diff" | head -40
			sed 's/^/#   /' "$case/stderr" | head -40
			continue
		fi
		ok "$name: loads and prints the expected config"
		# Fixed point: the normalized config loads to itself.
		cp "$case/stdout" "$case/normalized.ini"
		run_check "$case" -c normalized.ini >"$case/stdout2" 2>"$case/stderr2"
		if [ $? -eq 0 ] && cmp -s "$case/stdout" "$case/stdout2"; then
			ok "$name: normalized output loads to itself"
		else
			not_ok "$name: normalized output loads to itself"
			diff -u "$case/stdout" "$case/stdout2" | sed 's/^/#   /' | head -20
			sed 's/^/#   /' "$case/stderr2" | head -10
		fi
	elif [ -f "$here/$name.err" ]; then
		subst "$here/$name.err" "$case" >"$case/expected"
		if [ $rc -ne 2 ] || ! diff -u "$case/expected" "$case/stderr" >"$case/diff" ||
			[ -s "$case/stdout" ]; then
			not_ok "$name: refused with the expected errors (rc $rc)"
			[ -f "$case/diff" ] && sed 's/^/#   /' "$case/diff" | head -40
			sed 's/^/#   /' "$case/stderr" | head -40
			continue
		fi
		ok "$name: refused with the expected errors"
	else
		not_ok "$name: has an expectation (.out or .err)"
	fi
done

# Cases that are not a box.ini file.
out=$(run_check "$tmp" -c "$tmp/missing.ini" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [ "$out" = "boxctl: $tmp/missing.ini: cannot be opened: No such file or directory" ]; then
	ok "a missing box.ini is refused with exit 2"
else
	not_ok "a missing box.ini is refused with exit 2 (rc $rc: $out)"
fi
out=$(run_check "$tmp" -c "$fx/proj" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [ "$out" = "boxctl: $fx/proj: is not a regular file" ]; then
	ok "a directory as box.ini is refused"
else
	not_ok "a directory as box.ini is refused (rc $rc: $out)"
fi
mkfifo "$tmp/fifo.ini"
out=$(timeout 5 "$boxctl" check -c "$tmp/fifo.ini" 2>&1)
rc=$?
if [ $rc -eq 2 ]; then
	ok "a FIFO as box.ini is refused without blocking"
else
	not_ok "a FIFO as box.ini is refused without blocking (rc $rc: $out)"
fi
out=$(run_check "$tmp" -x 2>&1)
rc=$?
if [ $rc -eq 2 ]; then ok "an unknown option is a usage error"; else not_ok "an unknown option is a usage error (rc $rc)"; fi
out=$(run_check "$tmp/cases/valid-minimal" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^name = minimal$' <<<"$out"; then
	ok "-c defaults to ./box.ini"
else
	not_ok "-c defaults to ./box.ini (rc $rc)"
fi
if [ "$n" -lt 40 ]; then
	not_ok "at least 40 golden cases ran ($n)"
else
	ok "at least 40 golden cases ran ($n)"
fi
tap_done
