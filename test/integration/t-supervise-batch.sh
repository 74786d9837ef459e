#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise-batch.sh — a supervised program's threads (docs/sandbox.md, Supervised programs:
# calls arriving together), in real boxes, as the caller and as boxtest: eight python3 threads
# opening and stat-ing permitted and forbidden files at once get every answer right (the
# forbidden ones EACCES), every decision is a line of decisions.jsonl with source supervisor
# (as many as box-policyd counted on the program's channel), the calls of history-free actions
# (fs:read here) were decided in PID 1's process and those arriving together shipped together
# (box-policyd's line at the channel's end, with BOXD_DEBUG: more decisions than PolicyShips),
# and a temporal write budget still holds against eight threads writing at
# once: fs:write is not history-free, so those go one by one and exactly three are written.
# Without box-policyd's generation page (BOX_TEST_POLICYD_NO_GEN_PAGE) nothing is decided in
# process, and the reads of threads arriving together go as DecideBatchRequests instead.
# A reload that makes fs:read no longer history-free (a read budget) is followed: eight
# threads reading at once after it get exactly three reads through.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-supervise.sh
set -u
trap run_cleanup EXIT
cd "$W"

require_shell_built
boxtest_or_skip "batched supervised threads as boxtest" || :

N=40 # each thread's rounds
# sup_count FILE ACTION VERDICT PATH_SUFFIX OPERATION: decision lines of source supervisor.
sup_count() {
	python3 - "$@" <<'PY'
import json, sys
path, action, verdict, suffix, op = sys.argv[1:6]
n = 0
for l in open(path).read().splitlines():
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("record") or d.get("source") != "supervisor" or d.get("action") != action:
        continue
    i = d.get("input", {})
    if d.get("verdict") == verdict and str(i.get("path", "")).endswith(suffix) and \
            i.get("operation") == op:
        n += 1
print(n)
PY
}
# sup_outcomes FILE: "PERMITS RECORDS": the permits of source supervisor, and the outcome lines
# (response or error) of that source.
sup_outcomes() {
	python3 - "$1" <<'PY'
import json, sys
permits = records = 0
for l in open(sys.argv[1]).read().splitlines():
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("source") != "supervisor":
        continue
    if d.get("record") in ("response", "error"):
        records += 1
    elif d.get("verdict") == "permit":
        permits += 1
print(permits, records)
PY
}
# sup_decisions FILE: every decision line of source supervisor.
sup_decisions() {
	python3 - "$1" <<'PY'
import json, sys
n = 0
for l in open(sys.argv[1]).read().splitlines():
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if not d.get("record") and d.get("source") == "supervisor" and "verdict" in d:
        n += 1
print(n)
PY
}

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-supbatch-$u-$$
	mkdir -p "$D/steps" "$P/budget"
	sup_fixture "$P" "$D/batch.cedar"
	cat >>"$D/batch.cedar" <<'EOF'

@id("write_budget") @description("at most 3 files written an hour")
forbid (principal, action == Box::Action::"fs:write", resource)
when { context.input.path like "*/budget/*" && temporal {
    (count for (t: Timepoint). where formerly within 1h
        (Box::Action::"fs:write"::response{ output.result: Box::FsResponseResult::"descriptor_issued" } && tp(t))) >= 3
} };
EOF
	cat >"$D/batch.py" <<EOF
import errno, os, sys, threading
N = $N
ONLY_READS = sys.argv[1:] == ["reads"]
def run_all(fn):
    res, lock = {}, threading.Lock()
    start = threading.Barrier(8)
    def run(k):
        start.wait()
        for key, val in fn(k):
            with lock:
                res[(key, val)] = res.get((key, val), 0) + 1
    ts = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return res
def outcome(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def reads(k):
    for _ in range(N):
        yield "read", outcome(lambda: open("p.txt").read())
        yield "env", outcome(lambda: open(".env").read())
        yield "stat", outcome(lambda: os.stat("w/keep.txt"))
        yield "secret", outcome(lambda: os.stat("secretdir/x"))
def writes(k):
    def w():
        with open("budget/f%d" % k, "w") as f:
            f.write("x")
    yield "write", outcome(w)
got = sorted(run_all(reads).items())
if not ONLY_READS:
    got += sorted(run_all(writes).items())
for (key, val), n in got:
    print("%s=%s:%d" % (key, val, n), flush=True)
if not ONLY_READS:
    print("files=%d" % len(os.listdir("budget")), flush=True)
EOF
	cat >"$D/steps/b.py" <<EOF
[
 ("batch", ["python3", "$D/batch.py"]),
]
EOF
	sup_box_ini "$name" batch.cedar b.py "read_file = $D/batch.py"
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/batch.cedar"
	out=$D/b.out err=$D/b.err
	# BOXD_DEBUG: the daemons log their info lines (box-policyd's at the channel's end).
	as_user "$u" "BOXD_DEBUG=1 timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run \
		-c '$D/box.ini'" >"$out" 2>"$err"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	all=$((8 * N))
	is() { # NAME KEY VALUE
		check_step "$u: $1 ($2=$(step_kv "$out" batch "$2"))" "$out" batch \
			test "$(step_kv "$out" batch "$2")" = "$3"
	}
	is "eight threads read a permitted file, every time" read "ok:$all"
	is "… a forbidden .env, refused every time" env "EACCES:$all"
	is "… stat a permitted file, every time" stat "ok:$all"
	is "… stat a file in a forbidden directory, refused every time" secret "EACCES:$all"
	is "eight threads writing at once: the budget lets three through" write "EACCES:5"
	check_step "$u: … and three are written" "$out" batch \
		test "$(step_kv "$out" batch files)" = 3

	forget_default_state "$u" "$name"
	dec=$D/state/$name/decisions.jsonl
	c() { sup_count "$dec" "$@"; }
	check "$u: decisions.jsonl: each permitted read a line ($(c fs:read permit /proj/p.txt \
		read_content))" test "$(c fs:read permit /proj/p.txt read_content)" = "$all"
	check "$u: … each refused .env a deny ($(c fs:read deny /proj/.env read_content))" \
		test "$(c fs:read deny /proj/.env read_content)" = "$all"
	check "$u: … each stat a permit ($(c fs:read permit /proj/w/keep.txt read_metadata))" \
		test "$(c fs:read permit /proj/w/keep.txt read_metadata)" = "$all"
	check "$u: … each refused stat a deny ($(c fs:read deny /proj/secretdir/x \
		read_metadata))" test "$(c fs:read deny /proj/secretdir/x read_metadata)" = "$all"
	wp=0 wd=0
	for k in 0 1 2 3 4 5 6 7; do
		wp=$((wp + $(c fs:write permit "/proj/budget/f$k" write_content)))
		wd=$((wd + $(c fs:write deny "/proj/budget/f$k" write_content)))
	done
	check "$u: … the budget: three permits, five denials ($wp, $wd)" \
		test "$wp:$wd" = 3:5
	# box-policyd's line as the program's channel ended: how many it decided, how many of
	# them in history-free batches, how many PID 1 decided in process and shipped.
	line=$(grep -o "A supervised program's channel closed: [0-9]* decisions, [0-9]* of them in \
[0-9]* history-free batches ([0-9]* stale), [0-9]* made in process and shipped in [0-9]* \
PolicyShips" "$err" | tail -1)
	read -r decided batched batches stale shipped ships <<<"$(echo "$line" | tr -cs '0-9' ' ')"
	check "$u: box-policyd counted the program's decisions ($line)" test -n "$line"
	check "$u: … every one of them is a line of decisions.jsonl (${decided:-?})" \
		test "${decided:-x}" = "$(sup_decisions "$dec")"
	# every permit's outcome is in the log (those of decisions made in process wait for the
	# next PolicyShip, at most 1 ms idle, and PID 1 sends what waits before it exits)
	read -r permits records <<<"$(sup_outcomes "$dec")"
	check "$u: … every permit has its outcome line ($permits permits, $records outcomes)" \
		test "${permits:-0}" -gt "$((2 * all))" -a "${permits:-x}" = "${records:-y}"
	# fs:read qualifies: every read and stat (4 per round and thread) was decided in process
	check "$u: … the reads were decided in process (${shipped:-?} of ${decided:-?})" \
		test "${shipped:-0}" -ge "$((4 * all))"
	check "$u: … calls arriving together were shipped together (${shipped:-?} in \
${ships:-?} PolicyShips)" test "${ships:-0}" -gt 0 -a "${shipped:-0}" -gt "${ships:-0}"
	check "$u: nothing of the box is left (box-shell)" no_shell_left

	# Without box-policyd's generation page (a kernel without the seal, made to look so by
	# BOX_TEST_POLICYD_NO_GEN_PAGE) PID 1 decides nothing in process: the reads of threads
	# arriving together go as DecideBatchRequests naming the generation, with the same answers.
	name3=e2e-supbatch-np-$u-$$
	cat >"$D/steps/n.py" <<EOF
[
 ("batch", ["python3", "$D/batch.py", "reads"]),
]
EOF
	sed -e "s/^name = .*/name = $name3/" -e "s|^state_dir = .*|state_dir = $D/state/$name3|" \
		-e "s|steps/b.py|steps/n.py|" "$D/box.ini" >"$D/box3.ini"
	chown -R "$u:" "$D"
	chmod 644 "$D/box3.ini"
	out3=$D/n.out err3=$D/n.err
	as_user "$u" "BOXD_DEBUG=1 BOX_TEST_POLICYD_NO_GEN_PAGE=1 timeout -k 5 \
		${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -c '$D/box3.ini'" >"$out3" 2>"$err3"
	rc=$?
	check "$u: no generation page: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err3" | head -20 | sed 's/^/#   /'; fi
	for kv in "read ok:$all" "env EACCES:$all" "stat ok:$all" "secret EACCES:$all"; do
		set -- $kv
		check_step "$u: … the same answers ($1=$(step_kv "$out3" batch "$1"))" "$out3" batch \
			test "$(step_kv "$out3" batch "$1")" = "$2"
	done
	line=$(grep -o "A supervised program's channel closed: [0-9]* decisions, [0-9]* of them in \
[0-9]* history-free batches ([0-9]* stale), [0-9]* made in process and shipped in [0-9]* \
PolicyShips" "$err3" | tail -1)
	read -r decided batched batches stale shipped ships <<<"$(echo "$line" | tr -cs '0-9' ' ')"
	check "$u: … nothing decided in process, calls arriving together decided in batches \
(${batched:-?} in ${batches:-?}; ${shipped:-?} shipped)" \
		test "${batches:-0}" -gt 0 -a "${batched:-0}" -gt "${batches:-0}" -a "${shipped:-x}" = 0
	check "$u: … every decision is a line of decisions.jsonl (${decided:-?})" \
		test "${decided:-x}" = "$(sup_decisions "$D/state/$name3/decisions.jsonl")"

	# A reload while the program runs: generation 1 makes fs:read history-free (its reads
	# batched); generation 2 adds a budget on reads under rbudget/, so fs:read is not any
	# more: eight threads reading at once after the reload get exactly three reads through
	# (a batch naming generation 1 is stale; PID 1 asks again and decides them one by one).
	name2=e2e-supbatch-rl-$u-$$
	mkdir -p "$P/rbudget"
	echo r >"$P/rbudget/f"
	rm -f "$P/ready" "$P/go"
	cp "$D/batch.cedar" "$D/g2.cedar"
	cat >>"$D/g2.cedar" <<'EOF'

@id("read_budget") @description("at most 3 reads under rbudget/ an hour")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*/rbudget/*" && temporal {
    (count for (t: Timepoint). where formerly within 1h
        (Box::Action::"fs:read"::response{ output.result: Box::FsResponseResult::"descriptor_issued" } && tp(t))) >= 3
} };
EOF
	cat >"$D/reload.py" <<EOF
import errno, os, threading, time
def at_once(path, rounds):
    res, lock, start = [], threading.Lock(), threading.Barrier(8)
    def run():
        start.wait()
        for _ in range(rounds):
            try:
                open(path).read()
                r = "ok"
            except OSError as e:
                r = errno.errorcode.get(e.errno, str(e.errno))
            with lock:
                res.append(r)
    ts = [threading.Thread(target=run) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return "ok:%d,EACCES:%d" % (res.count("ok"), res.count("EACCES"))
print("g1=" + at_once("p.txt", $N), flush=True)
open("ready", "w").close()
while not os.path.exists("go"):
    time.sleep(0.1)
print("g2=" + at_once("rbudget/f", 1), flush=True)
EOF
	cat >"$D/steps/r.py" <<EOF
[
 ("reload", ["python3", "$D/reload.py"]),
]
EOF
	sed -e "s/^name = .*/name = $name2/" -e "s|^state_dir = .*|state_dir = $D/state/$name2|" \
		-e "s|steps/b.py|steps/r.py|" -e "s|read_file = .*|read_file = $D/reload.py|" \
		"$D/box.ini" >"$D/box2.ini"
	chown -R "$u:" "$D"
	chmod 644 "$D/box2.ini" "$D/g2.cedar"
	out2=$D/r.out err2=$D/r.err
	as_user "$u" "BOXD_DEBUG=1 timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run \
		-c '$D/box2.ini'" >"$out2" 2>"$err2" &
	runpid=$!
	for _ in $(seq 1 1200); do
		[ -e "$P/ready" ] && break
		kill -0 "$runpid" 2>/dev/null || break
		sleep 0.1
	done
	check "$u: the program read under generation 1" test -e "$P/ready"
	as_user "$u" "'$RB/boxctl' policy reload '$name2' '$D/g2.cedar'" >"$D/g2.out" 2>"$D/g2.err"
	rc=$?
	check "$u: the reload put generation 2 in force (rc $rc)" \
		grep -q "policy generation 2 in force" "$D/g2.out"
	touch "$P/go"
	wait "$runpid"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err2" | head -20 | sed 's/^/#   /'; fi
	g1=$(step_kv "$out2" reload g1) g2=$(step_kv "$out2" reload g2)
	check_step "$u: generation 1: every read of eight threads permitted ($g1)" "$out2" reload \
		test "$g1" = "ok:$all,EACCES:0"
	check_step "$u: generation 2: eight threads reading at once, the new budget lets three through ($g2)" \
		"$out2" reload test "$g2" = "ok:3,EACCES:5"
	echo "# $u: $(grep -o "A supervised program's channel closed: .*" "$err2" | tail -1)"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
