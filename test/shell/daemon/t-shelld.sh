#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t-shelld.sh — the box-shell daemon end to end (test_shelld.c), as root and
# as the ordinary user boxtest (its binaries copied to a 0755 temp dir, as
# test/integration/lib-run.sh does).
# Trusts: nothing; it is test code.
. "$(dirname "$0")/../../lib.sh"

T=$BOX_BUILD/test/shell/daemon/test_shelld
case $BOX_BIN in /*) BIN=$BOX_BIN ;; *) BIN=$PWD/$BOX_BIN ;; esac
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

run_as() { # label cmd...: prefix every result line with the label
	"$@" 2>&1 | sed -e "s/^ok - /ok - $label: /" -e "s/^not ok - /not ok - $label: /" \
		-e '/^# [0-9]* passed/d'
}

label=root run_as env BOX_BIN="$BIN" "$T" | tee /tmp/shd-root.$$ | grep -v '^#   pty' || true
_tap_pass=$((_tap_pass + $(grep -c '^ok' /tmp/shd-root.$$)))
_tap_fail=$((_tap_fail + $(grep -c '^not ok' /tmp/shd-root.$$)))
rm -f /tmp/shd-root.$$

if [ "$(id -u)" -ne 0 ]; then
	skip "boxtest: the daemon as an ordinary user" "not root (cannot switch to boxtest)"
elif ! id boxtest >/dev/null 2>&1 && ! useradd -m -s /bin/sh boxtest >/dev/null 2>&1; then
	skip "boxtest: the daemon as an ordinary user" "no user boxtest and useradd failed"
else
	RB=$(mktemp -d /tmp/shd-bin.XXXXXX)
	chmod 0755 "$RB"
	cp "$T" "$BIN/box-shell" "$BIN/box-policyd" "$RB/"
	chmod 0755 "$RB"/*
	out=$(mktemp /tmp/shd-user.XXXXXX)
	chmod 0666 "$out"
	su -s /bin/sh boxtest -c "cd /tmp && ulimit -n 4096 2>/dev/null; ASAN_OPTIONS='$ASAN_OPTIONS' BOX_BIN='$RB' '$RB/test_shelld'" >"$out" 2>&1
	sed -e 's/^ok - /ok - boxtest: /' -e 's/^not ok - /not ok - boxtest: /' \
		-e '/^# [0-9]* passed/d' "$out" | grep -v '^#   pty'
	_tap_pass=$((_tap_pass + $(grep -c '^ok' "$out")))
	_tap_fail=$((_tap_fail + $(grep -c '^not ok' "$out")))
	rm -rf "$RB" "$out"
fi
echo "# $_tap_pass passed, $_tap_fail failed, $_tap_skip skipped"
[ "$_tap_fail" -eq 0 ]
