#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-demo.sh — `make demo`'s script (examples/demo.sh) does what it says: the
# agent's allowed HTTPS GET through box-gateway gets the loopback server's answer,
# a request the policy denies inside the tunnel gets 403 with x-box-egress and
# the decision's message, a denied host is refused at CONNECT, `boxctl log`
# shows those decisions, and the demo stops its server and removes its files.
# Trusts: nothing; test code. Packets only to 127.0.0.1.
# Serial: both demo tests run examples/demo.sh, whose box is named "demo"; `boxctl log demo`
# asks a running box of that name first, so the other demo's box, running beside it, would
# answer (its lines, not this run's).
# box-test: serial
. test/lib.sh
set -u

out=$(mktemp /tmp/box-t-gwdemo.XXXXXX)
trap 'rm -f "$out"' EXIT
BOX_BIN=$BOX_BIN examples/demo.sh >"$out" 2>&1
rc=$?
check "demo.sh exits 0 (rc $rc)" test "$rc" = 0
check "demo: the agent's allowed GET is answered by the server (200, its echo)" \
	grep -qE '^agent: GET https://api.demo.test:[0-9]+/echo -> 200 .*"path": "/echo"' "$out"
check "demo: a request the policy denies inside the tunnel: 403, x-box-egress, the message" \
	grep -qE "^agent: GET https://api.demo.test:[0-9]+/admin -> 403 x-box-egress: refused, policy denied this operation on 'api.demo.test:[0-9]+/admin'" "$out"
check "demo: a denied host is refused at CONNECT (403)" \
	grep -qE '^agent: GET https://other.demo.test:[0-9]+/echo -> refused: .*403' "$out"
check "demo: boxctl log shows the permitted request" \
	grep -qE '^[0-9T:.-]+Z permit http:request api.demo.test:[0-9]+/echo api_get$' "$out"
check "demo: boxctl log shows the denied request" \
	grep -qE '^[0-9T:.-]+Z deny http:request api.demo.test:[0-9]+/admin -$' "$out"
check "demo: boxctl log shows the denied connection" \
	grep -qE '^[0-9T:.-]+Z deny net:connect other.demo.test:[0-9]+ -$' "$out"
check "demo: the disclosure has the gateway's network line" \
	grep -q '^box:   network     proxy 127.0.0.1:3128 (box-gateway; HTTP/1.1 only' "$out"
# Its own work dir (its disclosure names it): other demos may run beside this one.
work=$(grep -o '/tmp/box-demo-[A-Za-z0-9]*' "$out" | head -1)
check "demo: its work dir ($work) is named and removed" test -n "$work" -a ! -e "$work"
check "demo: its HTTPS server is stopped" bash -c "! pgrep -f '[h]ttpd.py --tls $work' >/dev/null"
[ "$_tap_fail" -gt 0 ] && sed 's/^/#   /' "$out"
tap_done
