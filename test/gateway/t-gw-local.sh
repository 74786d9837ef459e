#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-local.sh — box-gateway's decisions without a round trip (docs/box-policy.5.md), under
# gw-harness --local: net:connect and http:request, when no temporal rule can read them, are
# decided in the gateway with the policy PolicyLocal carried and shipped (PolicyShip); the
# harness decides each shipped line again. The lines are the ones a gateway that asks makes
# (the same requests, both ways), permits are recorded, denials carry the policy's message; an
# action a temporal rule reads is still asked; a gateway whose decisions disagree with the
# policy ends (the harness shuts the channel down as box-policyd's protocol error would).
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh
CL="python3 test/servers/client.py"

gw_servers
cat >"$SRV_DIR/policy.dw" <<'EOF2'
@id("conn")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "api.box.test" || context.input.host == "plain.box.test" };

@id("get_echo")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.method == "GET" && context.input.path like "/echo*" };

@id("no_secret")
@description("no secrets here")
forbid (principal, action == Box::Action::"http:request", resource)
when { context.input.path like "/echo/secret*" };
EOF2

# The same requests, through a gateway that asks (no --local) and one that decides in process.
# requests TAG: the denials' bodies and x-box-reason headers go to $SRV_DIR/denied.TAG.
requests() {
	gw_curl -o /dev/null -w '%{http_code}\n' "https://api.box.test:$TP/echo?n=1"
	gw_curl -D "$SRV_DIR/denied.$1" -o "$SRV_DIR/denied.$1.body" -w '%{http_code}\n' \
		"https://api.box.test:$TP/echo/secret/b"
	grep -i '^x-box-reason:' "$SRV_DIR/denied.$1" >>"$SRV_DIR/denied.$1.body"
	gw_curl -o /dev/null -w '%{http_code}\n' "http://plain.box.test:$PP/echo?n=3"
	gw_curl -o /dev/null -w '%{http_code}\n' "http://plain.box.test:$PP/other"
	printf 'CONNECT other.box.test:%s HTTP/1.1\r\nHost: other.box.test\r\n\r\n' "$TP" |
		$CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | head -1 | tr -d '\r' | cut -d' ' -f2
}
# The decision and outcome lines, in order, without their ids: action, input, verdict, cause,
# message, and a record's event and output.
lines() {
	python3 - "$1" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["kind"] == "decide":
        print(json.dumps([d["action"], d["input"], d["verdict"], d["cause"], d["message"]], sort_keys=True))
    elif d["kind"] == "record":
        print(json.dumps([d["action"], d["input"], d["event"], d["output"]], sort_keys=True))
PY
}
# wait_lines N: the harness has logged N decision and record lines (5 s at most).
wait_lines() {
	for _ in $(seq 100); do
		[ "$(gw_dec_count "d['kind'] in ('decide', 'record')")" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

if ! gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw"; then
	not_ok "a gateway that asks starts"
	tap_done
	exit
fi
asked_codes=$(requests asked)
n_asked=$(gw_dec_count "d['kind'] in ('decide', 'record')")
gw_stop
lines "$GW_DEC" >"$SRV_DIR/asked.lines"
check "the gateway that asks: no line is shipped" test "$(gw_dec_count "d.get('shipped')")" -eq 0

if ! gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" --listen agent --local; then
	not_ok "a gateway that decides in process starts"
	tap_done
	exit
fi
local_codes=$(requests local)
check "the same answers to the same requests ($(echo $local_codes))" \
	test "$local_codes" = "$asked_codes"
check "the answers are the policy's (200, 403 by a forbid, 200, 403 unmatched, CONNECT 403)" \
	test "$(echo $local_codes)" = "200 403 200 403 403"
check "a denial's body and x-box-reason are the asking gateway's (the policy's message)" \
	sh -c 'grep -q "no secrets here" "$1" && cmp -s "$1" "$2"' _ "$SRV_DIR/denied.asked.body" \
	"$SRV_DIR/denied.local.body"
wait_lines "$n_asked"
check "every decision was made in the gateway and shipped" \
	test "$(gw_dec_count "d['kind'] == 'decide' and not d.get('shipped')")" -eq 0
check "decisions of both actions were shipped" \
	test "$(gw_dec_count "d.get('shipped') and d['action'] == 'net:connect'")" -ge 2 -a \
	"$(gw_dec_count "d.get('shipped') and d['action'] == 'http:request'")" -eq 4
check "no shipped line disagreed with the policy" test "$(gw_dec_count "d['kind'] == 'bad_ship'")" -eq 0
check "every record names a permitted decision not recorded before" \
	test "$(gw_dec_count "d['kind'] == 'bad_record'")" -eq 0
check "no permit is left without its outcome" test "$(gw_owed)" = 0
gw_stop
check "the gateway ends as asked (exit 0)" test "$GW_STATUS" -eq 0
lines "$GW_DEC" >"$SRV_DIR/local.lines"
check "the lines are the asking gateway's: action, input, verdict, cause, message, outcomes" \
	diff "$SRV_DIR/asked.lines" "$SRV_DIR/local.lines"

# --- http:request read by a temporal rule: asked; net:connect still decided in process
cat "$SRV_DIR/policy.dw" >"$SRV_DIR/budget.dw"
cat >>"$SRV_DIR/budget.dw" <<'EOF2'

@id("budget")
forbid (principal, action == Box::Action::"http:request", resource)
when temporal { (count for (t: Timepoint). where formerly within 1h
  (Box::Action::"http:request"::request{} && tp(t))) > 100 };
EOF2
if gw_start "$SRV_DIR/init.json" "$SRV_DIR/budget.dw" --listen agent --local; then
	code=$(gw_curl -o /dev/null -w '%{http_code}' "https://api.box.test:$TP/echo?n=5")
	check "with a request budget the request is still permitted ($code)" test "$code" = 200
	wait_lines 5 # (net:connect by name, then by address; the request; two outcomes)
	check "its http:request was asked" \
		test "$(gw_dec_count "d['kind'] == 'decide' and d['action'] == 'http:request' and not d.get('shipped')")" -eq 1
	check "its net:connect decisions were shipped" \
		test "$(gw_dec_count "d['kind'] == 'decide' and d['action'] == 'net:connect' and d.get('shipped')")" -ge 1
	gw_stop
else
	not_ok "a gateway under a request budget starts"
fi

# --- a gateway deciding with another policy: its first ship disagrees, the channel ends
cat >"$SRV_DIR/lax.dw" <<'EOF2'
permit (principal, action, resource);
EOF2
if gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" --listen agent --local-policy "$SRV_DIR/lax.dw"; then
	gw_curl -o /dev/null "http://plain.box.test:$PP/other" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.05; done
	check "the harness saw a shipped permit the policy does not give" \
		test "$(gw_dec_count "d['kind'] == 'bad_ship'")" -ge 1
	check "no line of it was logged" \
		test "$(gw_dec_count "d['kind'] == 'decide' and d['input'].get('path') == '/other'")" -eq 0
	gw_stop
	check "the gateway ended: box-policyd's channel is lost (exit 1, got $GW_STATUS)" test "$GW_STATUS" -eq 1
else
	not_ok "a gateway with another policy starts"
fi
tap_done
