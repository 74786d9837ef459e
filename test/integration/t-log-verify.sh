#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-log-verify.sh — the decision log's chain (docs/boxctl.1.md "The chain") in real boxes:
# as root through a service boxd of its own ($BOX_SOCKET; its kept head under
# /var/lib/box/chain, root's) and as boxtest in an embedded boxd (the head in the state dir,
# which --verify says proves nothing against the owner). Each line carries seq and prev
# (the SHA-256 of the line before), each run ends with a seal line, the next run goes on
# from the sealed head; rotation (BOX_TEST_DECISIONS_ROTATE_BYTES makes it small) keeps the
# chain, and once lines were rotated away --verify says so. `boxctl log --verify` passes an
# intact log and names the first line that fails for an edited line, a deleted line, a
# reordered pair, a truncated tail, a missing decisions.jsonl.1 and (against a root
# boxd's head) a chain written again after an edit; `boxctl log` and its filters never
# warn about the seal lines.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built
n=$$
ROT=32768 # runs 1 and 2 stay below it (about 12 KiB each), run 3 goes over it again and again
users=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
	export BOX_SOCKET="$W/boxd.sock"
	BOX_TEST_DECISIONS_ROTATE_BYTES=$ROT "$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
	_run_pids+=("$!")
	for _ in $(seq 100); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
	check "service: boxd listens on its socket" test -S "$BOX_SOCKET"
	chmod 666 "$BOX_SOCKET"
	if have_boxtest; then users="$users boxtest"; fi
else
	skip "the service boxd's kept head" "needs root"
fi
if ! have_boxtest; then skip "an embedded box of boxtest" "needs root to create boxtest"; fi

# chain.py FILES...: the lines' seq go up by one and each prev is the SHA-256 of the line
# before it (the first one is not checked); prints "ok LINES FIRST_SEQ LAST_SEQ SEALS".
cat >chain.py <<'EOF'
import hashlib, json, sys
prev_line, first, last, seals, n = None, None, None, 0, 0
for path in sys.argv[1:]:
    for raw in open(path, "rb").read().split(b"\n")[:-1]:
        o = json.loads(raw)
        if prev_line is not None:
            if o["seq"] != last + 1 or o["prev"] != hashlib.sha256(prev_line).hexdigest():
                print("broken at seq %s" % o["seq"]); sys.exit(1)
        first = o["seq"] if first is None else first
        last, prev_line, n = o["seq"], raw, n + 1
        seals += "seal" in o
print("ok %d %d %d %d" % (n, first, last, seals))
EOF
# rechain.py FILE K: edit line K and write every later prev again (what an owner who
# knows the format does); the last head no longer matches the one boxd kept.
cat >rechain.py <<'EOF'
import hashlib, json, sys
path, k = sys.argv[1], int(sys.argv[2])
lines = open(path, "rb").read().split(b"\n")[:-1]
lines[k - 1] = lines[k - 1].replace(b'"time":"2', b'"time":"1', 1)
for i in range(k, len(lines)):
    o = lines[i]
    j = o.rindex(b'"prev":"')
    lines[i] = o[:j] + b'"prev":"' + hashlib.sha256(lines[i - 1]).hexdigest().encode() + b'"}'
open(path, "wb").write(b"\n".join(lines) + b"\n")
EOF
chmod 644 chain.py rechain.py

for u in $users; do
	D=$(user_dir "$u")
	P=$D/proj
	name=lv-$u-$n
	mkdir -p "$P"
	echo content >"$P/a.txt"
	printf 'permit (principal, action, resource);\n' >"$D/allow.cedar"
	S=$D/state/$name
	# mkini ITER [SECTIONS]: the agent (lib-shell.sh's) runs `cat` ITER times through box's
	# shell, 0.1 s apart; SECTIONS are added to box.ini
	mkini() {
		cat >"$D/steps.py" <<EOF
[("loop", ["bash", "-c", "for i in \$(seq $1); do cat a.txt >/dev/null; sleep 0.1; done"])]
EOF
		cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $S
policy = allow.cedar
timeout = 200s

[agent]
command = $W/agent.py $D/steps.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps.py

${2:-}
EOF
		chown -R "$u:" "$D"
		chmod 644 "$D/box.ini" "$D/allow.cedar" "$D/steps.py"
	}
	if [ "$u" = root ]; then mode=service; emb=; else mode=embedded; emb=--embedded; fi
	run_box() {
		AS_USER_DIR=$D as_user "$u" "BOX_TEST_DECISIONS_ROTATE_BYTES=$ROT timeout -k 5 240 '$RB/boxctl' run $emb -q -c box.ini" >"$D/run.out" 2>"$D/run.err"
	}
	verify() { AS_USER_DIR=$D as_user "$u" "'$RB/boxctl' log --verify $name" >"$D/v.out" 2>"$D/v.err"; }
	showv() { sed 's/^/#   /' "$D/v.out" "$D/v.err"; }
	# vcheck NAME PATTERN: --verify's output has PATTERN (else it is shown)
	vcheck() {
		if grep -q -- "$2" "$D/v.out"; then ok "$1"; else not_ok "$1"; showv; fi
	}

	# Run 1 and run 2: a few decisions each, no rotation.
	mkini 3
	run_box
	if grep -qx "@@ agent done" "$D/run.out"; then ok "$u ($mode): run 1 ends (agent-done)"; else
		not_ok "$u ($mode): run 1 ends (agent-done)"
		sed 's/^/#   /' "$D/run.err"
	fi
	c1=$(python3 chain.py "$S/decisions.jsonl")
	check "$u: run 1's lines are chained from genesis and end with a seal ($c1)" \
		grep -qE '^ok [0-9]+ 1 [0-9]+ 1$' <<<"$c1"
	check "$u: the first line's prev is genesis (64 zeros)" \
		grep -q "\"seq\":1,\"prev\":\"$(printf '0%.0s' $(seq 64))\"}$" <(head -1 "$S/decisions.jsonl")
	check "$u: the seal line counts the run's lines" \
		test "$(tail -1 "$S/decisions.jsonl" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["lines"])')" = "$(($(wc -l <"$S/decisions.jsonl") - 1))"
	verify
	vcheck "$u: --verify passes run 1" "^ok: $name: "
	if [ "$mode" = service ]; then
		key=$(printf '%s' "$S" | sha256sum | cut -d' ' -f1)
		rec=/var/lib/box/chain/$(id -u "$u")/$key
		check "service: the head is kept in $rec, root's, 0640" \
			test "$(stat -c '%U %a' "$rec" 2>/dev/null)" = "root 640"
		vcheck "service: --verify says the head boxd kept" "ending at the head boxd kept"
	else
		rec=$S/decisions.chain
		check "embedded: the head is kept in the state dir" test -f "$rec"
		vcheck "embedded: --verify says the state dir's head proves nothing against the owner" "proves nothing without a telemetry export target"
	fi
	head1=$(sed -n 's/^head //p' "$rec")
	check "$u: the kept head is the SHA-256 of the seal line" \
		test "$head1" = "$(tail -1 "$S/decisions.jsonl" | tr -d '\n' | sha256sum | cut -d' ' -f1)"
	n1=$(wc -l <"$S/decisions.jsonl")

	run_box
	check "$u: run 2 ends" grep -qx "@@ agent done" "$D/run.out"
	c2=$(python3 chain.py "$S/decisions.jsonl")
	check "$u: run 2 goes on from run 1's sealed head, one chain, two seals ($c2)" \
		grep -qE '^ok [0-9]+ 1 [0-9]+ 2$' <<<"$c2"
	check "$u: run 2's first line follows run 1's seal" \
		grep -q "\"prev\":\"$head1\"}$" <(sed -n "$((n1 + 1))p" "$S/decisions.jsonl")
	AS_USER_DIR=$D as_user "$u" "'$RB/boxctl' log $name --verdict permit" >"$D/log.out" 2>"$D/log.err"
	check "$u: boxctl log shows the decisions without a warning about the seal lines" \
		test -s "$D/log.out" -a ! -s "$D/log.err"
	AS_USER_DIR=$D as_user "$u" "'$RB/boxctl' policy replay allow.cedar $name" >"$D/rp.out" 2>"$D/rp.err"
	check "$u: policy replay takes the chained log, seal lines and all" \
		test "$(grep -c 'not a decision' "$D/rp.out" "$D/rp.err" | awk -F: '{s+=$2} END {print s}')" = 0
	verify
	vcheck "$u: --verify passes an intact log of two runs" "^ok: $name: "

	# The tampering an owner can do to the file, each on a fresh copy.
	L=$S/decisions.jsonl
	cp -p "$L" "$D/pristine"
	nl=$(wc -l <"$L")
	tamper() { cp -p "$D/pristine" "$L"; python3 -c "$1" "$L"; verify; }
	tamper 'import sys; p=sys.argv[1]; l=open(p).read().split("\n"); l[2]=l[2].replace("\"time\":\"2","\"time\":\"1",1); open(p,"w").write("\n".join(l))'
	vcheck "$u: an edited line is named (decisions.jsonl:3 was changed)" "^FAILED: decisions.jsonl:3 (seq 3) was changed: the prev of decisions.jsonl:4"
	check "$u: ... and --verify exits 1" test "$(AS_USER_DIR=$D as_user "$u" "'$RB/boxctl' log --verify $name" >/dev/null 2>&1; echo $?)" = 1
	tamper 'import sys; p=sys.argv[1]; l=open(p).read().split("\n"); del l[2]; open(p,"w").write("\n".join(l))'
	vcheck "$u: a deleted line is named (seq 3 missing before the new line 3)" "^FAILED: decisions.jsonl:3 (seq 4): the line seq 3 before it is missing (deleted)"
	tamper 'import sys; p=sys.argv[1]; l=open(p).read().split("\n"); l[2],l[3]=l[3],l[2]; open(p,"w").write("\n".join(l))'
	vcheck "$u: a reordered pair is named" "^FAILED: decisions.jsonl:3 (seq 4) and the line after it (seq 3) are out of order"
	tamper 'import sys; p=sys.argv[1]; l=open(p).read().split("\n"); open(p,"w").write("\n".join(l[:-3] + [""]))'
	vcheck "$u: a truncated tail is named (the last 2 lines removed)" "^FAILED: the log ends at decisions.jsonl:$((nl - 2)) (seq $((nl - 2))), but boxd kept seq $nl: the last 2 lines were removed (truncated)"
	tamper 'import sys; p=sys.argv[1]; d=open(p,"rb").read(); open(p,"wb").write(d[:-40])'
	vcheck "$u: a line cut short is named" "^FAILED: decisions.jsonl:$nl: the last line is cut short"
	cp -p "$D/pristine" "$L"
	python3 rechain.py "$L" 2
	c3=$(python3 chain.py "$L")
	verify
	vcheck "$u: a chain written again after an edit fails against the kept head ($c3)" "^FAILED: decisions.jsonl:$nl (seq $nl) is not the line boxd kept the head of"
	if [ "$mode" = embedded ]; then
		# ... but the owner can write the state dir's record as well: then nothing shows
		cp -p "$rec" "$D/rec.pristine"
		sed -i "s/^head .*/head $(tail -1 "$L" | tr -d '\n' | sha256sum | cut -d' ' -f1)/" "$rec"
		verify
		vcheck "embedded: with the state dir's record rewritten too, the owner's edit passes (what the docs say)" "^ok: $name: "
		cp -p "$D/rec.pristine" "$rec"
	fi
	cp -p "$D/pristine" "$L"
	verify
	vcheck "$u: the pristine copy passes again" "^ok: $name: "

	# Run 3: enough lines to rotate at $ROT bytes more than once; a telemetry file target
	# gets each rotation point (box.log.rotated) and the sealed head (box.log.sealed).
	mkini 80 "$(printf '[telemetry.t]\nkind = file\ndestination = %s/tel.jsonl\ninclude = control\n' "$D")"
	run_box
	check "$u: run 3 ends" grep -qx "@@ agent done" "$D/run.out"
	check "$u: decisions.jsonl was rotated (decisions.jsonl.1)" test -f "$S/decisions.jsonl.1"
	rots=$(sed -n 's/^rotations //p' "$S/decisions.chain" "$rec" 2>/dev/null | head -1)
	check "$u: boxd counted the rotations ($rots)" test "${rots:-0}" -ge 2
	# the control records' heads: box.log.rotated at each rotation of run 3, the last one
	# with the head of the rotated file's last line; box.log.sealed with the seal line's
	python3 - "$D/tel.jsonl" "$S/decisions.jsonl.1" "$S/decisions.jsonl" >"$D/tel.sum" 2>&1 <<'EOF'
import hashlib, json, sys
ev = []
for line in open(sys.argv[1]):
    for rl in json.loads(line)["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                a = {x["key"]: x["value"].get("stringValue") for x in r["attributes"]}
                if a.get("box.control.event", "").startswith("box.log."):
                    ev.append((a["box.control.event"], a["box.log.seq"], a["box.log.head"]))
old = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
cur = open(sys.argv[3], "rb").read().split(b"\n")[:-1]
h = lambda l: hashlib.sha256(l).hexdigest()
rot = [e for e in ev if e[0] == "box.log.rotated"]
assert ev[-1] == ("box.log.sealed", str(json.loads(cur[-1])["seq"]), h(cur[-1])), ev[-1]
assert rot[-1] == ("box.log.rotated", str(json.loads(old[-1])["seq"]), h(old[-1])), rot[-1]
print("rotated", len(rot))
EOF
	check "$u: telemetry: box.log.rotated with the rotated file's head, box.log.sealed with the seal's ($(tail -1 "$D/tel.sum"))" \
		grep -qx "rotated [1-9][0-9]*" "$D/tel.sum"
	c4=$(python3 chain.py "$S/decisions.jsonl.1" "$S/decisions.jsonl")
	check "$u: the chain runs across the rotation ($c4)" grep -qE '^ok ' <<<"$c4"
	verify
	vcheck "$u: --verify passes the rotated log" "^ok: $name: "
	vcheck "$u: --verify says which lines were rotated away" "^note: lines seq 1 to [0-9]* were rotated away (boxd rotated the log $rots times"
	mv "$S/decisions.jsonl.1" "$D/old"
	verify
	vcheck "$u: a missing decisions.jsonl.1 fails, saying the lines are gone" "^FAILED: decisions.jsonl.1 is missing: boxd rotated the log $rots times"
	mv "$D/old" "$S/decisions.jsonl.1"
	[ "$mode" = service ] && rm -f "$rec"
done

# boxtest's box through the root service: its head is root's, boxtest may read it (and
# verify), never write or replace it.
if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	D=$W/svc-boxtest
	mkdir -p "$D/proj" "$D/state"
	echo content >"$D/proj/a.txt"
	printf 'permit (principal, action, resource);\n' >"$D/allow.cedar"
	name=lv-svc-$n
	S=$D/state/$name
	cat >"$D/steps.py" <<EOF
[("one", ["bash", "-c", "cat a.txt"])]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $S
policy = allow.cedar

[agent]
command = $W/agent.py $D/steps.py
workspace = $D/proj

[agent.env]
$(agent_env)

[agent.filesystem]
read = $D/steps.py
EOF
	chown -R boxtest: "$D"
	chmod 755 "$D"
	chmod 644 "$D/box.ini" "$D/allow.cedar" "$D/steps.py"
	AS_USER_DIR=$D as_user boxtest "timeout -k 5 240 '$RB/boxctl' run -q -c box.ini" >"$D/run.out" 2>"$D/run.err"
	check "service, boxtest: the box runs" grep -qx "@@ agent done" "$D/run.out"
	rec=/var/lib/box/chain/$(id -u boxtest)/$(printf '%s' "$S" | sha256sum | cut -d' ' -f1)
	check "service, boxtest: the head is root's, boxtest's group may read it (0640)" \
		test "$(stat -c '%U %G %a' "$rec" 2>/dev/null)" = "root $(id -gn boxtest) 640"
	check "service, boxtest: its directory is root's, boxtest may not write it (0750)" \
		test "$(stat -c '%U %a' "$(dirname "$rec")")" = "root 750"
	AS_USER_DIR=$D as_user boxtest "echo 'seq 1' >>'$rec'; mv '$rec' '$rec.x'; rm -f '$rec'" 2>/dev/null
	check "service, boxtest: boxtest can neither write nor replace it" \
		test -f "$rec" -a "$(grep -c '^seq' "$rec")" = 1
	AS_USER_DIR=$D as_user boxtest "'$RB/boxctl' log --verify $name" >"$D/v.out" 2>&1
	check "service, boxtest: boxtest verifies its log against root's head" \
		grep -q "^ok: $name: .*ending at the head boxd kept" "$D/v.out"
	rm -f "$rec"
fi
tap_done
