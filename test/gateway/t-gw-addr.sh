#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-addr.sh — addresses refused before policy ([gateway] allow_host_loopback = false):
# loopback, unspecified, link-local and fd00:ec2::254, in every spelling a host can take
# (decimal 2130706433, octal 0177.0.0.1, hex 0x7f.1, IPv4-mapped ::ffff:127.0.0.1, the
# metadata address in IPv4 and IPv6) and as a name's resolved address (hosts file), with
# `host` spelled as docs/box-policy.5.md spells `ip` so a host rule cannot be bypassed numerically.
# Network safety: the whole test runs in its own network namespace with only lo up (it
# re-executes itself under unshare -n), so no packet can leave even if a refusal failed.
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
if [ -z "${GW_IN_NETNS:-}" ]; then
	if ! unshare -n true 2>/dev/null; then
		skip "addresses refused before policy" "cannot create a network namespace (unshare -n)"
		tap_done
		exit
	fi
	exec unshare -n env GW_IN_NETNS=1 bash "$0" "$@"
fi
ip link set lo up || { not_ok "lo up in the test's network namespace"; tap_done; exit; }
. test/gateway/lib-gw.sh
CL="python3 test/servers/client.py"

echo '{}' >"$SRV_DIR/zone.json"
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
cat >"$SRV_DIR/hosts" <<'EOF'
127.0.0.1 lo.box.test
fd00:ec2::254 meta6.box.test
169.254.169.254 meta4.box.test
0.0.0.0 zero.box.test
::ffff:127.0.0.1 mapped.box.test
EOF
cat >"$SRV_DIR/init.json" <<EOF
{"hosts_file_path": "$SRV_DIR/hosts", "resolver": "127.0.0.1:$DNSD_PORT",
 "allow_host_loopback": false}
EOF
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("all")
permit (principal, action == Box::Action::"net:connect", resource);
@id("no_numeric_loopback")
@description("host rule on the dotted spelling")
forbid (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "127.0.0.2" };
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts"; tap_done; exit; }

connect() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n' "$1" | $CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | tr -d '\r'
}
for t in "2130706433:443=127.0.0.1" "0177.0.0.1:443=127.0.0.1" "0x7f.1:443=127.0.0.1" \
	"127.1:443=127.0.0.1" "[::ffff:127.0.0.1]:443=127.0.0.1" "[::1]:443=::1" \
	"[fd00:ec2::254]:443=fd00:ec2::254" "169.254.169.254:80=169.254.169.254" \
	"2852039166:80=169.254.169.254" "0xa9.0xfe.0xa9.0xfe:80=169.254.169.254" \
	"0.0.0.0:80=0.0.0.0" "[fe80::1]:443=fe80::1" "lo.box.test:443=lo.box.test" \
	"meta6.box.test:443=meta6.box.test" "meta4.box.test:80=meta4.box.test" \
	"zero.box.test:80=zero.box.test" "mapped.box.test:80=mapped.box.test"; do
	target=${t%%=*} host=${t#*=}
	resp=$(connect "$target")
	if echo "$resp" | head -1 | grep -q ' 403 ' && echo "$resp" | grep -qi 'x-box-egress: refused' &&
		echo "$resp" | grep -q 'before policy'; then
		ok "CONNECT $target: refused before policy (403)"
	else
		not_ok "CONNECT $target: refused before policy"
		diag "$(echo "$resp" | head -3)"
	fi
	check "CONNECT $target: host spelled '$host' in net:connect" \
		test "$(gw_dec_count "d['kind']=='decide' and i=={'host':'$host','port':${target##*:}}")" -ge 1
done
check "no refused address was ever decided with an ip (refused before policy)" \
	test "$(gw_dec_count "d['kind']=='decide' and 'ip' in i")" -eq 0
resp=$(connect "2130706434:443")
check "a host rule on the dotted spelling holds against the decimal one (2130706434 = 127.0.0.2)" \
	sh -c "echo \"\$1\" | grep -q '\[policy: no_numeric_loopback\]'" _ "$resp"
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' --proxy "http://127.0.0.1:$GW_PORT" \
	"http://0x7f.0.0.1:8080/" 2>/dev/null)
check "a plain request to a hex loopback spelling: 403 ($code)" test "$code" = 403
gw_stop

# allow_host_loopback = true leaves them to policy: now decided with their ip.
cat >"$SRV_DIR/init2.json" <<EOF
{"hosts_file_path": "$SRV_DIR/hosts", "resolver": "127.0.0.1:$DNSD_PORT",
 "allow_host_loopback": true, "connect_timeout_ms": 500}
EOF
cat >"$SRV_DIR/policy2.dw" <<'EOF'
@id("names")
permit (principal, action == Box::Action::"net:connect", resource)
when { !(context.input has ip) };
EOF
gw_start "$SRV_DIR/init2.json" "$SRV_DIR/policy2.dw" || { not_ok "gateway starts (allow_host_loopback)"; tap_done; exit; }
resp=$(connect "meta6.box.test:443")
check "allow_host_loopback = true: the address goes to policy (denied by it here)" \
	sh -c "echo \"\$1\" | head -1 | grep -q ' 403 ' && ! echo \"\$1\" | grep -q 'before policy'" _ "$resp"
check "and it was decided with its ip" \
	test "$(gw_dec_count "d['kind']=='decide' and i.get('ip')=='fd00:ec2::254'")" -eq 1
gw_stop
tap_done
