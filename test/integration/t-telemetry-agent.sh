#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-telemetry-agent.sh — the agent's OTLP/HTTP receiver (docs/box.ini.5.md
# [telemetry.NAME]): with a file target whose include has `agent`, a real box's agent
# finds OTEL_EXPORTER_OTLP_ENDPOINT (and the per-signal variables) pointing at
# 127.0.0.1:4318 in its sandbox, POSTs a span in OTLP/JSON and one in binary protobuf
# (hand-encoded here: no OpenTelemetry SDK is installed on the test machines), a log
# record, a malformed body (400, and the connection and the box go on), an unknown path
# (404), a wrong Content-Type (415); the target then holds each accepted request as one
# OTLP-JSON line whose resource says box.source = agent with this box's name and id —
# the box.name the agent forged is gone — and ids as hex. Without `agent` in include
# the agent gets no receiver and no variables. [agent.env] may not set
# OTEL_EXPORTER_OTLP_* while a target takes the agent's records.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
B=$RB/boxctl
mkdir proj
chmod 755 proj
cat >proj/agent.py <<'EOF'
import http.client, json, os, sys

ep = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
print("endpoint", ep)
for k in ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
          "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"):
    print(k, os.environ.get(k))
if not ep:
    sys.exit(0)
host, port = ep[len("http://"):].split(":")
conn = http.client.HTTPConnection(host, int(port), timeout=60)

def post(path, body, ctype):
    conn.request("POST", path, body=body, headers={"Content-Type": ctype})
    r = conn.getresponse()
    data = r.read()
    return r.status, data

def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out

def ld(field, b):
    return varint(field << 3 | 2) + varint(len(b)) + b

tid = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
span_json = {"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "test-agent"}},
    {"key": "box.name", "value": {"stringValue": "forged"}}]},
    "scopeSpans": [{"scope": {"name": "t"}, "spans": [{
        "traceId": tid.hex(), "spanId": "b7ad6b7169203331", "name": "json-span",
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000500000000"}]}]}]}
print("json", *post("/v1/traces", json.dumps(span_json), "application/json"))
print("bad", post("/v1/traces", b"{not json", "application/json")[0])
kv = ld(1, b"box.source") + ld(2, ld(1, b"forged-too"))
span = ld(1, tid) + ld(2, bytes.fromhex("00f067aa0ba902b7")) + ld(5, b"pb-span")
req = ld(1, ld(1, ld(1, kv)) + ld(2, ld(2, span)))
st, body = post("/v1/traces", req, "application/x-protobuf")
print("pb", st, len(body))
print("unknown", post("/v1/spans", b"{}", "application/json")[0])
logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "agent log"},
         "severityNumber": 9}]}]}]}
print("logs", post("/v1/logs", json.dumps(logs), "application/json")[0])
print("type", post("/v1/metrics", b"x", "text/plain")[0])

import socket
def raw(data):
    s = socket.create_connection((host, int(port)), timeout=60)
    s.sendall(data)
    out = b""
    while b"\r\n\r\n" not in out:
        chunk = s.recv(4096)
        if not chunk:
            break
        out += chunk
    return s, out
# a chunked body, in two chunks
body = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "chunked log"}}]}]}]}).encode()
half = len(body) // 2
s, out = raw(b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n" +
             b"%x\r\n" % half + body[:half] + b"\r\n" +
             b"%x\r\n" % (len(body) - half) + body[half:] + b"\r\n0\r\n\r\n")
print("chunked", out.split(b" ")[1].decode())
s.close()
# a Content-Length over the cap: 413 before any body byte
s, out = raw(b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 5000000\r\n\r\n")
print("big", out.split(b" ")[1].decode())
s.close()
# Expect: 100-continue, then the body
s, out = raw(b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
print("continue", out.split(b" ")[1].decode())
s.sendall(body)
out = s.recv(4096)
print("after-continue", out.split(b" ")[1].decode())
s.close()
EOF
chmod 644 proj/agent.py

# ini NAME INCLUDE [MORE]: a box.ini with one file target taking INCLUDE.
ini() {
	printf '[box]\nname = %s\n\n[agent]\ncommand = /usr/bin/python3 agent.py\nworkspace = %s/proj\n\n[agent.filesystem]\nread = %s/proj\n\n[telemetry.t]\nkind = file\ndestination = %s/%s.jsonl\ninclude = %s\n%s' \
		"$1" "$W" "$W" "$W" "$1" "$2" "${3:-}" >"$W/$1.ini"
	chmod 644 "$W/$1.ini"
}

name=tel-agent-$$
ini "$name" "agent control"
"$B" run -c "$W/$name.ini" >run.out 2>run.err
rc=$?
check "the box runs to its end (rc $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || diag "$(tail -n 15 run.err)"
diag "$(cat run.out)"
check "the disclosure names the receiver" \
	grep -q "telemetry   the agent's OpenTelemetry: an OTLP/HTTP receiver on 127.0.0.1:4318" run.err
check "the agent gets OTEL_EXPORTER_OTLP_ENDPOINT" grep -qx 'endpoint http://127.0.0.1:4318' run.out
check "... and the protocol" grep -qx 'OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf' run.out
check "... and the per-signal endpoints" \
	grep -qx 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT http://127.0.0.1:4318/v1/traces' run.out
check "an OTLP/JSON span: 200 with an empty JSON response" grep -qx 'json 200 b.{}.' run.out
check "a malformed body: 400" grep -qx 'bad 400' run.out
check "a protobuf span on the same connection after the 400: 200, empty body" grep -qx 'pb 200 0' run.out
check "an unknown path: 404" grep -qx 'unknown 404' run.out
check "a log record: 200" grep -qx 'logs 200' run.out
check "a Content-Type OTLP does not use: 415" grep -qx 'type 415' run.out
check "a chunked body: 200" grep -qx 'chunked 200' run.out
check "a Content-Length over 4 MiB: 413" grep -qx 'big 413' run.out
check "Expect: 100-continue: 100, then 200 for the body" \
	sh -c "grep -qx 'continue 100' run.out && grep -qx 'after-continue 200' run.out"
id=$(sed -n 's/.*"box.id","value":{"stringValue":"\([0-9a-f]\{12\}\)".*/\1/p' "$name.jsonl" | head -n 1)
python3 - "$name.jsonl" "$name" "$id" >sum.txt 2>&1 <<'EOF'
import json, sys
path, name, bid = sys.argv[1:4]
for line in open(path):
    req = json.loads(line)
    for key, inner, items in (("resourceSpans", "scopeSpans", "spans"),
                              ("resourceLogs", "scopeLogs", "logRecords")):
        for r in req.get(key, []):
            a = {x["key"]: x["value"].get("stringValue") for x in r["resource"]["attributes"]}
            for s in r[inner]:
                for it in s[items]:
                    what = it.get("name") or it.get("eventName") or it.get("body", {}).get("stringValue")
                    print(key, what, a.get("box.source"), a.get("box.name") == name,
                          a.get("box.id") == bid, it.get("traceId", "-"))
EOF
diag "$(cat sum.txt)"
check "the JSON span: box.source = agent, this box's name and id (the forged name gone)" \
	grep -qx "resourceSpans json-span agent True True 0af7651916cd43dd8448eb211c80319c" sum.txt
check "the protobuf span: the same (the agent's box.source replaced)" \
	grep -qx "resourceSpans pb-span agent True True 0af7651916cd43dd8448eb211c80319c" sum.txt
check "the agent's log record" grep -qx "resourceLogs agent log agent True True -" sum.txt
check "box's own control records still reach the target" grep -q '"eventName":"box.control"' "$name.jsonl"
check "no box.name but box's" sh -c "! grep -q forged '$name.jsonl'"
check "the chunked log record" grep -qx "resourceLogs chunked log agent True True -" sum.txt
check "the 400, 404, 413 and 415 relayed nothing: 5 agent requests" \
	test "$(grep -c '"box.source","value":{"stringValue":"agent"}' "$name.jsonl")" -eq 5

# Without `agent` in include: no receiver, no variables.
ini "$name-no" "deny permit control"
"$B" run -q -c "$W/$name-no.ini" >run-no.out 2>run-no.err
check "without agent in include: no OTEL_EXPORTER_OTLP_ENDPOINT" grep -qx 'endpoint None' run-no.out

# The variables are box's while a target takes the agent's records.
ini "$name-env" "agent" "$(printf '\n[agent.env]\nOTEL_EXPORTER_OTLP_ENDPOINT = http://elsewhere:4318\n')"
"$B" check -c "$W/$name-env.ini" >env.out 2>&1
rc=$?
check "[agent.env] OTEL_EXPORTER_OTLP_ENDPOINT is reserved (rc $rc)" \
	grep -q '\[agent.env\] OTEL_EXPORTER_OTLP_ENDPOINT: OTEL_EXPORTER_OTLP_ENDPOINT is reserved: box sets it' env.out
tap_done
