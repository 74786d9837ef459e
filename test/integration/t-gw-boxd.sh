#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-boxd.sh — boxd's side of the gateway protocol, seen by a stand-in gateway
# (box-test-gwfake, installed as box-gateway in a private helper dir; the other
# t-gw-*.sh run the real one): GatewayInit carries [gateway] with docs/box.ini.5.md's
# defaults (port 3128, 10 s / 300 s, 1024 connections, 64M), the upstream CA and
# hosts file boxctl read, the resolver, allow_host_loopback, each passthrough
# entry parsed (host, port), and every [egress] binding and credentialed http
# [mcp] server as "egress.NAME" / "mcp.NAME" with its destinations parsed
# (lowercase host, 443 by default, wildcard, path prefix), its secret (its
# length here; never written), effective header/prefix/param/inject, its
# sandboxes, and a placeholder = placeholder_prefix + 64 lowercase hex, fresh and
# distinct per binding and per start, the one the agent finds in its variable;
# the gateway's fd 4 is a SOCK_SEQPACKET socket (policyd's); the agent's listener
# arrives tagged "agent", GatewayListenerClosed follows when the agent ends, then
# the channel closes; ok = false refuses the box with the gateway's message.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
cp "$BOX_BIN/box-test-gwfake" "$RB/box-gateway" || { not_ok "box-test-gwfake is built"; tap_done; exit 1; }
chmod 755 "$RB/box-gateway"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
	-days 1 -subj /CN=gwb-fake 2>/dev/null
printf '127.0.0.1 api.gwb.test\n' >hosts
cp ca.pem upstream.pem
cat >box.ini <<EOF
[box]
name = gwb-fake-$$

[agent]
command = /usr/bin/env
workspace = $W

[tool.git]
command = /usr/bin/git

[egress.anthropic]
destinations = API.Anthropic.com
secret = env://GWB_K1
header = x-api-key
placeholder_prefix = sk-ant-
sandboxes = agent tool.git

[egress.files]
destinations = *.example.com:8443
destinations = example.org/v1/api
secret = env://GWB_K2
variable = GWB_FILES
inject = always

[egress.query]
destinations = q.example.net
secret = env://GWB_K3
placement = query_param
param = api_key

[mcp.remote]
type = http
url = https://mcp.example.net:8443/mcp
secret = env://GWB_K4
prefix = "Token "

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream.pem
resolver = 127.0.0.1:5353
passthrough = github.com:22
passthrough = *.Pinned.example:443
EOF
export GWB_K1=k1-secret GWB_K2=k2-secret-longer GWB_K3=k3 GWB_K4=k4-mcp-secret

# run_fake OUT ENV-OUT [VAR=VALUE...]: a box; OUT gets what the stand-in said on its stderr
# (its lines in boxctl's, "gwfake: " taken off: a confined daemon has no file of ours to write).
run_fake() {
	local o=$1 e=$2 rc
	shift 2
	rm -f "$o"
	env "$@" "$RB/boxctl" run -q -c box.ini >"$e" 2>"$e.err"
	rc=$?
	sed -n 's/^gwfake: //p' "$e.err" >"$o"
	return $rc
}

run_fake g1 env1
rc=$?
check "a box with the stand-in gateway runs (rc $rc)" test "$rc" = 0
has() { grep -qxF -- "$1" g1 || { diag "missing: $1"; return 1; }; }
check "the gateway's fd 4 is a SOCK_SEQPACKET socket (policyd's channel)" has "fd4_seqpacket 1"
check "RLIMIT_NOFILE soft = hard = 2 x 1024 + 256" bash -c "grep -qx 'nofile 2304' g1 && grep -qx 'nofile_max 2304' g1"
check "defaults: port 3128" has "port 3128"
check "defaults: max_connections 1024" has "max_connections 1024"
check "defaults: connect 10 s, idle 300 s" has "timeouts $((10000 * 1000000 + 300000))"
check "defaults: max_request_body 64M" has "max_request_body $((64 << 20))"
check "allow_host_loopback false unless set" has "allow_host_loopback 0"
check "the hosts file's bytes" has "hosts_file_bytes $(stat -c %s hosts)"
check "the upstream CA's bytes" has "upstream_ca_bytes $(stat -c %s upstream.pem)"
check "the resolver" has "resolver 127.0.0.1:5353 0"
check "passthrough: github.com port 22" has "passthrough github.com 22"
check "passthrough: a wildcard, lowercased" has "passthrough pinned.example 443"
check "[egress.anthropic] as egress.anthropic, one destination" has "credential egress.anthropic 1"
check "… its host lowercased, port 443" has "dest api.anthropic.com 443"
check "… its secret (length only here)" has "secret_bytes ${#GWB_K1}"
check "… header x-api-key, no prefix (not Authorization)" \
	bash -c "grep -A5 '^credential egress.anthropic' g1 | grep -qx 'header x-api-key 0' && grep -A6 '^credential egress.anthropic' g1 | grep -qx 'prefix \[\] 0'"
check "… sandboxes agent, tool.git" \
	bash -c "grep -A9 '^credential egress.anthropic' g1 | grep -qx 'sandbox agent 0' && grep -A9 '^credential egress.anthropic' g1 | grep -qx 'sandbox tool.git 0'"
check "… inject = placeholder (1)" bash -c "grep -A5 '^credential egress.anthropic' g1 | grep -qx 'inject 1'"
check "[egress.files]: two destinations (a wildcard on 8443, a path prefix on 443)" \
	bash -c "grep -qx 'credential egress.files 2' g1 && grep -qx 'dest example.com 108443' g1 && grep -qx 'dest example.org 443' g1 && grep -qx 'path /v1/api 0' g1"
check "… Authorization with 'Bearer ' by default; inject = always (2)" \
	bash -c "grep -A9 '^credential egress.files' g1 | grep -qx 'header Authorization 0' && grep -A9 '^credential egress.files' g1 | grep -qx 'prefix \[Bearer \] 0' && grep -A9 '^credential egress.files' g1 | grep -qx 'inject 2'"
check "[egress.query]: query_param (3) with param api_key" \
	bash -c "grep -A6 '^credential egress.query' g1 | grep -qE '^placeholder box_[0-9a-f]{64} 3$' && grep -qx 'param api_key 0' g1"
check "[mcp.remote] with a secret: mcp.remote, its url's host, port and path" \
	bash -c "grep -qx 'credential mcp.remote 1' g1 && grep -qx 'dest mcp.example.net 8443' g1 && grep -qx 'path /mcp 0' g1"
check "… prefix 'Token '" bash -c "grep -A8 '^credential mcp.remote' g1 | grep -qx 'prefix \[Token \] 0'"
check "placeholders: prefix + 64 lowercase hex" \
	bash -c "grep -qE '^placeholder sk-ant-[0-9a-f]{64} 1$' g1 && test \$(grep -cE '^placeholder box_[0-9a-f]{64} [0-9]$' g1) = 3"
check "placeholders: one per binding, all distinct" \
	test "$(awk '/^placeholder / {print $2}' g1 | sort -u | wc -l)" = 4
ph1=$(awk '/^placeholder sk-ant-/ {print $2}' g1)
check "the agent holds the placeholder in the binding's variable" grep -qx "GWB_K1=$ph1" env1
check "… and each binding's own (variable names GWB_FILES, GWB_K3)" \
	bash -c "grep -qE '^GWB_FILES=box_[0-9a-f]{64}$' env1 && grep -qE '^GWB_K3=box_[0-9a-f]{64}$' env1"
check "… an http [mcp] binding puts nothing in the environment" test "$(grep -c '^GWB_K4=' env1)" = 0
check "… never a secret" test "$(grep -c 'secret' env1)" = 0
check "the agent's listener arrives tagged agent, then closes, then the channel" \
	bash -c "grep -E '^(listener|listener_closed|eof) ' g1 | tr '\n' ' ' | grep -qx 'listener agent 1 listener_closed 1 eof 0 '"
run_fake g2 env2
check "a fresh placeholder at every start" \
	bash -c "test -n '$ph1' && ! grep -q '$ph1' g2"
run_fake g3 env3 BOX_TEST_GATEWAY_FAKE_REFUSE="cannot load upstream_ca: no certificate"
rc=$?
check "ok = false: the box does not start (exit 1, rc $rc)" test "$rc" = 1
check "… boxctl: error: box-gateway cannot serve the box: MESSAGE" \
	grep -qx "boxctl: error: box-gateway cannot serve the box: cannot load upstream_ca: no certificate" env3.err
check "… the agent never ran" test ! -s env3

run_fake g4 env4 BOX_TEST_GATEWAY_FAKE_EXIT=1
rc=$?
check "the gateway exits before GatewayReady: the box does not start (exit 1, rc $rc)" \
	test "$rc" = 1
check "… boxctl: error: box-gateway exited before it was ready" \
	grep -q "^boxctl: error: box-gateway exited before it was ready" env4.err
check "… the agent never ran" test ! -s env4

# box-policyd lost while boxd waits for GatewayReady: the start fails with policyd's error.
policyd_of_box() { daemon_pids box-policyd; }
run_fake g5 env5 BOX_TEST_GATEWAY_FAKE_DELAY_MS=3000 &
bp=$!
for _ in $(seq 100); do grep -q '^gwfake: delaying' env5.err 2>/dev/null && break; sleep 0.05; done
pd=$(policyd_of_box | head -1)
check "while boxd waits for GatewayReady, box-policyd runs" test -n "$pd"
[ -n "$pd" ] && kill -KILL "$pd"
wait "$bp"
rc=$?
check "policyd killed while the gateway starts: the box does not start (exit 1, rc $rc)" \
	test "$rc" = 1
check "… boxctl: error: box-policyd … (no policy, no box)" \
	grep -q "^boxctl: error: box-policyd .*no policy, no box" env5.err
check "… the agent never ran" test ! -s env5
gone=1
for _ in $(seq 50); do
	[ -z "$(daemon_pids box-gateway)" ] && { gone=0; break; }
	sleep 0.1
done
check "… and the gateway is gone" test "$gone" = 0
tap_done
