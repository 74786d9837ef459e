#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-redact.sh — every spelling of a credential an echoing bound host sends back is redacted
# (docs/box-gateway.8.md, "Redaction"): for placement = basic_auth (curl -u), header (Bearer) and
# query_param, the loopback httpd reflects the credential it received in headers and in the
# body as the gateway sent it (the Basic token, the percent-encoded query), raw, base64 at
# offsets 0, 1, 2 in both alphabets, percent-encoded in both hex cases and JSON-escaped three
# ways; the body chunked and cut every 7 bytes, or with Content-Length and each piece its own
# TCP write. The agent's copy must equal the server's with exactly the parts that depend on the
# secret replaced by [REDACTED] (computed here in Python from the definition, not from the
# gateway's code). Also: the server got the real secret, identity encoding was asked, a
# compressed reply is refused.
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh

make_ca '*.box.test' >/dev/null || { not_ok "test CA"; tap_done; exit; }
start_httpd --tls || { not_ok "httpd --tls"; tap_done; exit; }
TP=$HTTPD_PORT TLOG=$HTTPD_LOG
echo '{}' >"$SRV_DIR/zone.json"
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
gw_hosts basic.box.test bear.box.test q.box.test
BPH=box_$(printf 'b%.0s' $(seq 64))
HPH=box_$(printf 'e%.0s' $(seq 64))
QPH=box_$(printf 'f%.0s' $(seq 64))
export BASIC_SECRET='alice:pa55/w0rd+s3cret&<y>' BEAR_SECRET='sk-E2E/b3arer+s3cret&<x>~0123' \
	Q_SECRET='q-s3cret/with+plus&amp=1 ~x'
python3 - "$SRV_DIR/init.json" "$SRV_CA" "$SRV_DIR/hosts" "$DNSD_PORT" "$TP" "$BPH" "$HPH" "$QPH" <<'EOF'
import json, os, sys
out, ca, hosts, dns, port, bph, hph, qph = sys.argv[1:]
port = int(port)
def binding(name, host, secret, ph, **kw):
    return dict(name=name, destinations=[{"host": host, "port": port}], secret=secret,
                placeholder=ph, **kw)
json.dump({"upstream_ca_pem_file": ca, "hosts_file_path": hosts, "resolver": "127.0.0.1:" + dns,
           "allow_host_loopback": True, "credentials": [
               binding("egress.basic", "basic.box.test", os.environ["BASIC_SECRET"], bph,
                       placement="basic_auth"),
               binding("egress.bear", "bear.box.test", os.environ["BEAR_SECRET"], hph,
                       placement="header"),
               binding("egress.q", "q.box.test", os.environ["Q_SECRET"], qph,
                       placement="query_param", param="key")]}, open(out, "w"))
EOF
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("all")
permit (principal, action == Box::Action::"net:connect", resource);
@id("req")
permit (principal, action == Box::Action::"http:request", resource);
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts"; tap_done; exit; }

AS=raw,b64-0,b64-1,b64-2,b64url-0,b64url-1,b64url-2,pct,pctlower,json,jsonslash,jsonhtml
SPLIT=$(seq -s, 3 7 1200)

# verify SECRET_VAR PLACEMENT HEADERS BODY: the reply the agent got against the server's last
# request (its log line): every line and reflected header as expected, no spelling left.
verify() {
	python3 - "$1" "$2" "$3" "$4" "$TLOG" "$AS" <<'EOF'
import base64, json, os, re, sys, urllib.parse
var, placement, hfile, bfile, tlog, as_list = sys.argv[1:]
secret = os.environ[var].encode()
RED = "[REDACTED]"
req = [json.loads(l) for l in open(tlog) if json.loads(l).get("event") == "request"][-1]
def pct(b, upper=True):
    q = urllib.parse.quote_from_bytes(b, safe="-._~")
    return q if upper else re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), q)
bad = []
# the server got the real secret where the placement puts it
auth = req["headers"].get("authorization", "")
if placement == "basic_auth":
    got = base64.b64decode(auth[6:]) if auth.startswith("Basic ") else b""
elif placement == "header":
    got = auth[7:].encode() if auth.startswith("Bearer ") else b""
else:
    got = secret if "key=" + pct(secret) in req["query"] else b""
if got != secret:
    bad.append("the server did not receive the secret (%r)" % req["headers"])
if req["headers"].get("accept-encoding") != "identity":
    bad.append("Accept-Encoding was %r" % req["headers"].get("accept-encoding"))
# expected lines: the server's text with the secret-dependent parts replaced
want_auth = {"basic_auth": "Basic " + RED, "header": "Bearer " + RED}.get(placement, "")
want_query = req["query"].replace(pct(secret), RED)
def stable(k, alphabet):
    text = b"x" * k + secret + b"!!"
    e = (base64.b64encode(text) if alphabet == "b64" else
         base64.urlsafe_b64encode(text).rstrip(b"=")).decode()
    first, end = (8 * k + 5) // 6, 8 * (k + len(secret)) // 6
    return e[:first] + RED + e[end:]
want = [want_auth, want_query]
for how in as_list.split(","):
    m = re.fullmatch(r"(b64|b64url)-(\d)", how)
    want.append(stable(int(m.group(2)), m.group(1)) if m else RED)
body = open(bfile, encoding="latin-1").read().split("\n")
if body[-1] == "":
    body.pop()
if body != want:
    for i in range(max(len(body), len(want))):
        b = body[i] if i < len(body) else None
        w = want[i] if i < len(want) else None
        if b != w:
            bad.append("line %d: %r, want %r" % (i, b, w))
heads = {}
for line in open(hfile, encoding="latin-1").read().replace("\r", "").split("\n"):
    k, sep, v = line.partition(":")
    if sep:
        heads[k.strip().lower()] = v.strip()
for name, w in (("x-reflect", want_auth), ("x-reflect-query", want_query), ("x-reflect-as", RED)):
    if heads.get(name, "") != w:
        bad.append("header %s: %r, want %r" % (name, heads.get(name), w))
# nothing that spells the secret anywhere: raw, percent-encoded, JSON, base64 stable parts
everything = open(hfile, encoding="latin-1").read() + open(bfile, encoding="latin-1").read()
leaks = [secret.decode(), pct(secret), pct(secret, False), json.dumps(secret.decode())[1:-1]]
for al in (base64.b64encode, base64.urlsafe_b64encode):
    for k in range(3):
        e = al(b"\0" * k + secret).decode().rstrip("=")
        leaks.append(e[(8 * k + 5) // 6: 8 * (k + len(secret)) // 6])
for l in leaks:
    if l in everything:
        bad.append("leaked: %r" % l)
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
EOF
}

run() { # run NAME PLACEMENT SECRET_VAR URL CURL_ARGS...
	local name=$1 placement=$2 var=$3 url=$4
	shift 4
	rm -f "$SRV_DIR/h" "$SRV_DIR/b"
	gw_curl -D "$SRV_DIR/h" -o "$SRV_DIR/b" "$@" "$url"
	check "$name: echoed spellings redacted in headers and body" \
		verify "$var" "$placement" "$SRV_DIR/h" "$SRV_DIR/b"
}

for framing in chunked length; do
	Q="as=$AS&split=$SPLIT&delay_ms=3&framing=$framing"
	what="$framing body cut every 7 bytes"
	[ "$framing" = length ] && what="Content-Length body, a TCP write every 7 bytes"
	run "basic_auth, $what" basic_auth BASIC_SECRET "https://basic.box.test:$TP/reflect-auth?$Q" \
		-u "alice:$BPH"
	run "header (Bearer), $what" header BEAR_SECRET "https://bear.box.test:$TP/reflect-auth?$Q" \
		-H "Authorization: Bearer $HPH"
	run "query_param, $what" query_param Q_SECRET \
		"https://q.box.test:$TP/reflect-auth?key=$QPH&param=key&$Q"
done
check "the Content-Length replies were requested (server log)" grep -q 'framing=length' "$TLOG"

# identity encoding asked, compressed replies refused, for the two new placements too
code=$(gw_curl -o /dev/null -w '%{http_code}' -u "alice:$BPH" "https://basic.box.test:$TP/gzip")
check "basic_auth: a compressed reply is refused ($code)" test "$code" = 502
code=$(gw_curl -o /dev/null -w '%{http_code}' "https://q.box.test:$TP/gzip?key=$QPH")
check "query_param: a compressed reply is refused ($code)" test "$code" = 502

gw_stop
check "the gateway exits 0" test "$GW_STATUS" -eq 0
check "no secret in a decision record or the gateway's log" \
	sh -c "! grep -qF -e 's3cret' '$GW_DEC' '$GW_ERR'"
tap_done
