#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t-mcpd.sh — box-mcpd alone under test_mcpd.c (it plays boxd, box-policyd,
# the alias and the harness), as root and as the ordinary user boxtest (its
# binaries copied to a 0755 temp dir, as test/integration/lib-run.sh does).
# Trusts: nothing; it is test code.
. "$(dirname "$0")/../../lib.sh"

T=$BOX_BUILD/test/mcp/daemon/test_mcpd
SRV=$(cd "$(dirname "$0")" && pwd)/fake_server.py
case $BOX_BIN in /*) BIN=$BOX_BIN ;; *) BIN=$PWD/$BOX_BIN ;; esac
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

if [ ! -x /usr/bin/python3 ]; then
	skip "box-mcpd under its harness" "no /usr/bin/python3 (the fake MCP server)"
	echo "# $_tap_pass passed, $_tap_fail failed, $_tap_skip skipped"
	exit 0
fi

count() { # file: add its results to the totals
	_tap_pass=$((_tap_pass + $(grep -c '^ok' "$1")))
	_tap_fail=$((_tap_fail + $(grep -c '^not ok' "$1")))
}

out=$(mktemp /tmp/b-mcpd-out.XXXXXX)
chmod 0666 "$out"
env BOX_BIN="$BIN" MCPD_FAKE_SERVER="$SRV" "$T" >"$out" 2>&1
sed -e 's/^ok - /ok - root: /' -e 's/^not ok - /not ok - root: /' -e '/^# [0-9]* passed/d' "$out"
count "$out"

if [ "$(id -u)" -ne 0 ]; then
	skip "boxtest: box-mcpd as an ordinary user" "not root (cannot switch to boxtest)"
elif ! id boxtest >/dev/null 2>&1 && ! useradd -m -s /bin/sh boxtest >/dev/null 2>&1; then
	skip "boxtest: box-mcpd as an ordinary user" "no user boxtest and useradd failed"
else
	RB=$(mktemp -d /tmp/b-mcpd-bin.XXXXXX)
	chmod 0755 "$RB"
	cp "$T" "$BIN/box-mcpd" "$SRV" "$RB/"
	chmod 0755 "$RB"/*
	su -s /bin/sh boxtest -c "cd /tmp && ulimit -n 4096 2>/dev/null; ASAN_OPTIONS='$ASAN_OPTIONS' BOX_BIN='$RB' MCPD_FAKE_SERVER='$RB/fake_server.py' '$RB/test_mcpd'" >"$out" 2>&1
	sed -e 's/^ok - /ok - boxtest: /' -e 's/^not ok - /not ok - boxtest: /' \
		-e '/^# [0-9]* passed/d' "$out"
	count "$out"
	rm -rf "$RB"
fi
rm -f "$out"
echo "# $_tap_pass passed, $_tap_fail failed, $_tap_skip skipped"
[ "$_tap_fail" -eq 0 ]
