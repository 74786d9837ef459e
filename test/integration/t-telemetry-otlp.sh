#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-telemetry-otlp.sh — [telemetry.NAME] kind = otlp (docs/box.ini.5.md): a real box
# exports to a loopback collector (test/otel/collector.py, 127.0.0.1 only) through
# box-gateway. Two targets on one collector: `json` (http/json, every include) and `pb`
# (http/protobuf, include = deny, a header credential). The collector is down when the
# box starts and comes up 10 s later on the same port: nothing is lost (every decision
# of decisions.jsonl arrives, in order, once). The agent runs a permitted and a denied
# command (box-shell's decisions), POSTs a malformed body to its receiver (400, and it
# goes on), a span in OTLP/JSON, and one span through the real OpenTelemetry JS SDK
# (test/otel, pinned, installed by make deps) — all relayed to the json target with
# box.source = agent; the control record policy.loaded arrives; the agent's kernel
# refusals of a mount and an unshare arrive as box.kernel.refusal records (docs/sandbox.md
# "Kernel refusals"); the pb target gets protobuf with the credential header and only
# the deny.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
B=$RB/boxctl
SRC=$(cd "$OLDPWD" && pwd)
mkdir proj
chmod 755 proj "$W"
cat >policy.cedar <<'EOF'
@id("builtins")
permit (principal, action == Box::Action::"shell:exec", resource)
when { ["echo", "true"].contains(context.input.program) };
@id("no_rm")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
EOF
cat >proj/agent.py <<'EOF'
import http.client, json, os, subprocess, sys, time
subprocess.run(["sh", "-c", "echo otlp-agent-ran; rm -f nothing-here; true"])
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
ep = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
host, port = ep[len("http://"):].split(":")
conn = http.client.HTTPConnection(host, int(port), timeout=60)
def post(path, body):
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    return r.status
print("bad", post("/v1/traces", b"{not json"))
span = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"},
        "spans": [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
                   "name": "json-span", "startTimeUnixNano": "1", "endTimeUnixNano": "2"}]}]}]}
print("good", post("/v1/traces", json.dumps(span)))
node, sdk = sys.argv[1], sys.argv[2]
r = subprocess.run([node, sdk + "/span.mjs"], capture_output=True, text=True)
print(r.stdout.strip(), r.stderr.strip()[-300:])
sys.stdout.flush()
# the test says when the collector has everything (it was down for the first 10 s)
for _ in range(600):
    if os.path.exists("go"):
        break
    time.sleep(0.5)
EOF
chmod 644 policy.cedar proj/agent.py
# node and the pinned SDK (make deps: npm ci in test/otel)
if ! command -v node >/dev/null 2>&1; then
	skip "the OpenTelemetry JS SDK through box-gateway" "no node on this host (make deps installs nodejs)"
	tap_done
	exit 0
fi
NODE=$(readlink -f "$(command -v node)")
if [ ! -f "$SRC/test/otel/node_modules/@opentelemetry/sdk-trace/package.json" ]; then
	not_ok "the OpenTelemetry JS SDK is installed in $SRC/test/otel/node_modules: run 'make deps'"
	tap_done
	exit 1
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
name=tel-otlp-$$
cat >"$name.ini" <<EOF
[box]
name = $name
policy = $W/policy.cedar

[agent]
command = /usr/bin/python3 agent.py $NODE $SRC/test/otel
workspace = $W/proj

[agent.filesystem]
read = $W/proj
read = $SRC/test/otel
write = $W/proj
exec = $NODE

[telemetry.json]
kind = otlp
destination = http://127.0.0.1:$port
protocol = http/json

[telemetry.pb]
kind = otlp
destination = http://127.0.0.1:$port/pb/
include = deny
secret = env://BOX_TEST_OTLP_TOKEN
header = X-Token
EOF
chmod 644 "$name.ini"
# boxd acts on the agent's reap 300 ms late: box-shell's early end (boxd/box.c) is done
# before the teardown, as on a loaded machine; box-policyd's box.stopped must still go out.
BOX_TEST_AGENT_REAP_DELAY_MS=300 BOX_TEST_OTLP_TOKEN=tok-$$ "$B" run -c "$W/$name.ini" >run.out 2>run.err &
box=$!
sleep 10
python3 "$SRC/test/otel/collector.py" "$port" port.txt got.jsonl 2>collector.err &
col=$!
trap 'kill $col 2>/dev/null; wait $col 2>/dev/null' EXIT
# wait (a cap only a hang reaches) for the deny on both targets and the node span
for _ in $(seq 240); do
	if [ -f got.jsonl ] && grep -q node-sdk-span got.jsonl &&
		[ "$(grep -c 'no_rm' got.jsonl)" -ge 2 ]; then
		break
	fi
	sleep 0.5
done
touch proj/go
wait $box
rc=$?
check "the box runs to its end (rc $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || diag "$(tail -n 15 run.err)"
diag "$(cat run.out)"
check "the gateway said the collector could not take records" \
	grep -q "telemetry.json: the collector 127.0.0.1:$port cannot take records" run.err
check "... and that it takes them again" grep -q "telemetry.json: the collector takes records again" run.err
check "the disclosure names the otlp target" \
	grep -q "telemetry   json: OTLP http/json to http://127.0.0.1:$port" run.err
check "the agent's malformed body: 400" grep -qx 'bad 400' run.out
check "the box went on: the next span 200" grep -qx 'good 200' run.out
check "the OpenTelemetry JS SDK exported its span" grep -q '^node-sdk exported' run.out
python3 - got.jsonl "$W/state/box/$name/decisions.jsonl" "$name" tok-$$ >sum.txt 2>&1 <<'EOF'
import json, sys
got, declog, name, tok = sys.argv[1:5]
want = [d for d in map(json.loads, open(declog)) if d.get("verdict")]  # outcomes have none
seqs, controls, spans, pb, kernel = [], [], [], [], []
for line in open(got):
    rec = json.loads(line)
    if rec["path"].startswith("/pb/"):
        pb.append(rec)
        continue
    b = rec["body"]
    for rl in b.get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            for lr in sl["logRecords"]:
                a = {x["key"]: x["value"] for x in lr["attributes"]}
                if lr.get("eventName") == "box.policy.decision":
                    seqs.append((int(a["box.decision.seq"]["intValue"]), a["box.verdict"]["stringValue"]))
                elif lr.get("eventName") == "box.kernel.refusal":
                    kernel.append(" ".join(a[k]["stringValue"] for k in ("box.kernel.sandbox",
                                  "box.kernel.syscall", "box.kernel.errno", "box.kernel.first")))
                else:
                    controls.append(a["box.control.event"]["stringValue"])
    for rs in b.get("resourceSpans", []):
        ra = {x["key"]: x["value"].get("stringValue") for x in rs["resource"]["attributes"]}
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                spans.append((sp["name"], ra.get("box.source"), ra.get("box.name") == name))
print("decisions", len(want), "exported", len(seqs))
print("in order, once", [s for s, _ in seqs] == list(range(1, len(want) + 1)) and
      [v for _, v in seqs] == [w["verdict"] for w in want])
print("verdicts", " ".join(sorted(set(v for _, v in seqs))))
print("controls", " ".join(sorted(set(controls))))
for k in kernel:
    print("kernel", k)
for s in spans:
    print("span", *s)
print("pb requests", len(pb), "paths", " ".join(sorted(set(r["path"] for r in pb))))
print("pb protobuf", all(r["type"] == "application/x-protobuf" for r in pb))
print("pb credential", all(r["headers"].get("X-Token") == tok for r in pb))
print("pb deny only", any("no_rm" in r["body"] for r in pb) and not any("builtins" in r["body"] for r in pb)
      and not any("box.kernel.refusal" in r["body"] for r in pb))
EOF
diag "$(cat sum.txt)"
check "every decision arrived, in order, once, though the collector was down 10 s" \
	grep -qx 'in order, once True' sum.txt
check "... at least a permit and a deny" grep -qx 'verdicts deny permit' sum.txt
check "the control record policy.loaded" grep -q '^controls.*policy.loaded' sum.txt
check "the control record box.stopped, sent as the box ended" grep -q '^controls.*box.stopped' sum.txt
check "the agent's mount and unshare got EPERM" \
	sh -c "grep -qx 'mount -1 1' run.out && grep -qx 'unshare -1 1' run.out"
check "the kernel refusal of a mount: box.kernel.refusal" grep -qx 'kernel agent mount EPERM true' sum.txt
check "the kernel refusal of an unshare: box.kernel.refusal" grep -qx 'kernel agent unshare EPERM true' sum.txt
check "the agent's JSON span, box.source = agent, this box's name" grep -qx 'span json-span agent True' sum.txt
check "the SDK's span, re-tagged the same (its forged box.name gone)" \
	grep -qx 'span node-sdk-span agent True' sum.txt
check "the pb target: the base url's path, /v1/logs" grep -qx 'pb requests [1-9][0-9]* paths /pb/v1/logs' sum.txt
check "the pb target: application/x-protobuf" grep -qx 'pb protobuf True' sum.txt
check "the pb target: the credential in its header" grep -qx 'pb credential True' sum.txt
check "the pb target: include = deny takes the deny only" grep -qx 'pb deny only True' sum.txt
tap_done
