#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-telemetry-otlp-bound.sh — an otlp [telemetry.NAME] target's bounds and its TLS
# (docs/box.ini.5.md): with the collector down, the agent relays four requests of about
# 3 MiB each: past 8 MiB queued the oldest are dropped; once the collector is up the
# newest arrive and then a control record telemetry.dropped whose box.dropped counts the
# ones that did not. An https:// target whose collector's certificate [gateway]
# upstream_ca holds gets box's records over TLS; one whose certificate it does not hold
# gets nothing (the gateway's upstream verification, never the agent's say).
# Collectors: test/otel/collector.py, 127.0.0.1 only.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
B=$RB/boxctl
SRC=$(cd "$OLDPWD" && pwd)
mkdir proj
chmod 755 proj "$W"
cat >proj/agent.py <<'EOF'
import http.client, json, os, sys, time
ep = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
host, port = ep[len("http://"):].split(":")
conn = http.client.HTTPConnection(host, int(port), timeout=120)
for i in range(4):
    body = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"body": {"stringValue": "big-%d-" % i + "x" * (3 << 20)}}]}]}]})
    conn.request("POST", "/v1/logs", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    print("big", i, r.status)
sys.stdout.flush()
for _ in range(600):
    if os.path.exists("go"):
        break
    time.sleep(0.5)
EOF
chmod 644 proj/agent.py

# Two certificates for 127.0.0.1: one the box trusts (upstream_ca), one it does not.
for c in good bad; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
		-keyout "$c.key" -out "$c.pem" >/dev/null 2>&1
done
check "test certificates made" test -s good.pem -a -s bad.pem

start_collector() { # NAME [--tls CERT KEY]: a collector on any port; its port in NAME.port
	local n=$1
	shift
	python3 "$SRC/test/otel/collector.py" 0 "$n.port" "$n.jsonl" "$@" 2>"$n.err" &
	echo $! >"$n.pid"
	for _ in $(seq 200); do [ -s "$n.port" ] && break; sleep 0.1; done
}
start_collector good --tls good.pem good.key
start_collector bad --tls bad.pem bad.key
trap 'for n in good bad down; do [ -f $n.pid ] && kill "$(cat $n.pid)" 2>/dev/null; done; wait' EXIT
down=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

name=tel-bound-$$
cat >"$name.ini" <<EOF
[box]
name = $name

[agent]
command = /usr/bin/python3 agent.py
workspace = $W/proj

[agent.filesystem]
read = $W/proj

[gateway]
upstream_ca = $W/good.pem

[telemetry.down]
kind = otlp
destination = http://127.0.0.1:$down
include = agent control
protocol = http/json

[telemetry.tls]
kind = otlp
destination = https://127.0.0.1:$(cat good.port)
include = control

[telemetry.untrusted]
kind = otlp
destination = https://127.0.0.1:$(cat bad.port)
include = control
EOF
chmod 644 "$name.ini" good.pem
"$B" run -c "$W/$name.ini" >run.out 2>run.err &
box=$!
# the four requests relayed while the collector is down, then it comes up
for _ in $(seq 600); do grep -q '^big 3 ' run.out 2>/dev/null && break; sleep 0.2; done
python3 "$SRC/test/otel/collector.py" "$down" down.port down.jsonl 2>down.err &
echo $! >down.pid
for _ in $(seq 240); do
	grep -q telemetry.dropped down.jsonl 2>/dev/null && break
	sleep 0.5
done
touch proj/go
wait $box
rc=$?
check "the box runs to its end (rc $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || diag "$(tail -n 15 run.err)"
check "the agent's four requests were taken (200)" test "$(grep -c '^big [0-3] 200$' run.out)" -eq 4
python3 - down.jsonl >sum.txt 2>&1 <<'EOF'
import json, sys
bigs, dropped = [], None
for line in open(sys.argv[1]):
    b = json.loads(line)["body"]
    for rl in b.get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            for lr in sl["logRecords"]:
                body = lr.get("body", {}).get("stringValue", "")
                if body.startswith("big-"):
                    bigs.append(int(body.split("-")[1]))
                a = {x["key"]: x["value"] for x in lr.get("attributes", [])}
                ev = a.get("box.control.event", {}).get("stringValue")
                if ev == "telemetry.dropped":
                    dropped = int(a["box.dropped"]["intValue"])
print("bigs", *bigs)
print("dropped", dropped)
print("consistent", dropped is not None and dropped == 4 - len(bigs) and
      bigs == list(range(4 - len(bigs), 4)))
EOF
diag "$(cat sum.txt)"
check "past 8 MiB the oldest were dropped, the newest arrived" grep -qx 'bigs 2 3' sum.txt
check "telemetry.dropped counts them (box.dropped = 2)" grep -qx 'dropped 2' sum.txt
check "... and the arrivals and the count agree" grep -qx 'consistent True' sum.txt
check "the gateway's log says records were dropped" \
	grep -q "telemetry.down: 2 records were dropped while the collector could not take them" run.err
check "the https target whose certificate upstream_ca holds got box's records over TLS" \
	grep -q 'policy.loaded' good.jsonl
grep -q 'policy.loaded' good.jsonl || diag "$(grep -i 'telemetry\|tls' run.err; cat good.err)"
check "the https target whose certificate is not trusted got nothing" \
	sh -c "! test -s bad.jsonl"
check "... and the gateway said why" \
	grep -q "telemetry.untrusted: the collector 127.0.0.1:$(cat bad.port) cannot take records" run.err
tap_done
