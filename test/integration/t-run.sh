#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run.sh — `boxctl run` with an embedded boxd, real boxes (docs/boxctl.1.md): exit
# statuses (incl. 128+N), `-- ARGS` appended, the start-up disclosure and
# -q, a deny mask, a sandbox setup failure (exit 1), the run lock, --detach
# with agent.log, ps and stop, boxctl SIGKILLed (nothing survives, not even
# a double-forked setsid daemon), [box] timeout (124), pids_max contained,
# memory_max contained, SIGINT forwarded, a pty at a terminal, and the runtime dir removed;
# the agent's output into a file another process writes too loses no line.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
mkdir proj
echo hello >proj/a.txt
echo top-secret >proj/secret.txt
cat >proj/argv.py <<'EOF'
import sys, os
print("argv=" + " ".join(sys.argv[1:]))
print("user=" + os.environ.get("USER", "") + " box=" + os.environ.get("BOX_NAME", "") +
      " id=" + os.environ.get("BOX_ID", "") + " proxy=" + os.environ.get("HTTPS_PROXY", "-"))
EOF

# mkini NAME COMMAND [EXTRA...]: a box.ini with proj readable and secret.txt denied.
mkini() {
	local name=$1 cmd=$2
	shift 2
	{
		printf '[box]\nname = %s\n' "$name"
		for l in "$@"; do case $l in box:*) printf '%s\n' "${l#box:}" ;; esac; done
		printf '\n[agent]\ncommand = %s\nworkspace = %s/proj\n' "$cmd" "$W"
		for l in "$@"; do case $l in agent:*) printf '%s\n' "${l#agent:}" ;; esac; done
		printf '\n[agent.filesystem]\nread = %s/proj\ndeny = %s/proj/secret.txt\n' "$W" "$W"
	} >"$name.ini"
}

cat >proj/flood.py <<'EOF'
import os, time
t0, i = time.time(), 0
while time.time() - t0 < 3 and i < 400000:
    os.write(1, b"A%08d line of the agent\n" % i)
    i += 1
os.write(1, b"END %d\n" % i)
EOF
cat >flood-writer.py <<'EOF'
import os, sys, time
t0, i = time.time(), 0
while time.time() - t0 < 3.5:
    os.write(1, b"W%08d line of another writer\n" % i)
    i += 1
open(sys.argv[1], "w").write(str(i))
EOF

# The agent's output into a file another process writes too (`>out 2>&1` shares one open
# file with boxd and its daemons): boxctl copies into it under the offset lock write(2)
# takes — a splice(2) there raced those writers, each overwriting the other's lines.
mkini flood "/usr/bin/python3 flood.py"
{
	python3 flood-writer.py "$W/flood.count" &
	"$RB/boxctl" run -q -c flood.ini
	wait
} >flood.out 2>&1
agent_lines=$(grep -cE '^A[0-9]{8} line of the agent$' flood.out)
agent_said=$(sed -n 's/^END \([0-9]*\)$/\1/p' flood.out)
writer_lines=$(grep -cE '^W[0-9]{8} line of another writer$' flood.out)
check "run: an output file shared with another writer keeps every agent line ($agent_lines of ${agent_said:-?})" \
	test -n "$agent_said" -a "$agent_lines" = "${agent_said:-x}"
check "run: … and every line of the other writer ($writer_lines of $(cat flood.count 2>/dev/null))" \
	test "$writer_lines" = "$(cat flood.count 2>/dev/null)"

# status and output
mkini st0 "/bin/cat a.txt"
out=$("$RB/boxctl" run -q -c st0.ini 2>err)
rc=$?
check "run: exit 0 and the agent's output" test "$rc" = 0 -a "$out" = hello
mkini st3 "/usr/bin/python3 -c 'import sys; sys.exit(3)'"
"$RB/boxctl" run -q -c st3.ini 2>/dev/null
check "run: the agent's exit status (3)" test $? = 3
mkini st9 "/usr/bin/python3 -c 'import os; os.kill(os.getpid(), 9)'"
"$RB/boxctl" run -q -c st9.ini 2>/dev/null
check "run: 128+N when the agent dies of signal N (137)" test $? = 137

# -- ARGS and the environment
mkini args "/usr/bin/python3 argv.py fixed"
out=$("$RB/boxctl" run -q -c args.ini -- one "two words" 2>/dev/null)
check "run: -- ARGS are appended to [agent] command" grep -qx "argv=fixed one two words" <<<"$out"
check "run: USER, BOX_NAME, BOX_ID set; HTTPS_PROXY points at box-gateway's listener" \
	grep -qE "^user=root box=args id=[0-9a-f]{12} proxy=http://127.0.0.1:3128$" <<<"$out"

# disclosure
"$RB/boxctl" run -c st0.ini >/dev/null 2>err
did=$(sed -n 's/^box: box st0, id \([0-9a-f]*\),.*/\1/p' err)
check "disclosure: says an embedded boxd was started" grep -q "^box: .*embedded boxd" err
check "disclosure: box name and id" grep -qE "^box: box st0, id [0-9a-f]{12}" err
check "disclosure: each grant on its own line, with its mount flags" \
	grep -qE "^box:   read +$W/proj  \(read-only, noexec\)$" err
check "disclosure: the deny mask" grep -qE "^box:   deny +$W/proj/secret.txt" err
check "disclosure: the implicit exec of the program" grep -qE "^box:   exec +/usr/bin/cat .*implicit" err
check "disclosure: what box adds" grep -q "^box: box adds:" err
"$RB/boxctl" run -q -c st0.ini >/dev/null 2>err
check "-q: no grant lines, no name line" test "$(grep -c '^box: ' err)" = 0

# deny: masked inside a readable tree
mkini deny "/bin/cat secret.txt"
"$RB/boxctl" run -q -c deny.ini >out 2>err
rc=$?
check "deny: the masked file is refused (exit 1)" test "$rc" = 1
check "deny: EACCES, and nothing of its content" grep -q "Permission denied" err
check "deny: the content never shows" test "$(cat out err | grep -c top-secret)" = 0

# a sandbox setup failure: exit 1 with the step
BOX_TEST_ABSENT=landlock "$RB/boxctl" run -q -c st0.ini >/dev/null 2>err
rc=$?
check "setup failure: exit 1" test "$rc" = 1
check "setup failure: 'sandbox setup failed at landlock: …'" \
	grep -q "^boxctl: error: sandbox setup failed at landlock: " err
# the same when box-shell's sandbox failed and went before boxd sent its ShellInit (boxd waits
# 300 ms before each init): the send's EPIPE is not the reason, the setup step is
BOX_TEST_DAEMON_INIT_DELAY_MS=300 BOX_TEST_ABSENT=landlock "$RB/boxctl" run -q -c st0.ini >/dev/null 2>err
rc=$?
check "setup failure, the daemons gone before their init: exit 1" test "$rc" = 1
check "... still 'sandbox setup failed at landlock: …', not a send's broken pipe" \
	grep -q "^boxctl: error: sandbox setup failed at landlock: " err
grep "^boxctl: error" err | head -2 | while read -r l; do diag "$l"; done
mkini noll "/bin/cat a.txt" "box:require = userns mountns netns seccomp"
out=$(BOX_TEST_ABSENT=landlock "$RB/boxctl" run -c noll.ini 2>err)
check "require without landlock: runs, with a warning" \
	test "$out" = hello -a "$(grep -c '^box: warning: .*landlock' err)" = 1

# --detach, agent.log, ps, the run lock, stop
mkini det "/usr/bin/python3 -c 'import time; print(\"detached-out\", flush=True); time.sleep(60)'" \
	"box:state_dir = $W/state-det"
id=$("$RB/boxctl" run -q --detach -c det.ini 2>err)
rc=$?
check "--detach: exit 0 and the box id on stdout" grep -qxE "[0-9a-f]{12}" <<<"$id"
check "--detach: exit status 0" test "$rc" = 0
check "--detach: the agent's output goes to STATE_DIR/agent.log" wait_for "$W/state-det/agent.log" detached-out
"$RB/boxctl" ps >ps.out
check "ps: a header line" grep -qxP "NAME\tID\tSTATE\tPID\tUPTIME" ps.out
check "ps: the detached box, running" grep -qP "^det\t$id\trunning\t[0-9]+\t[0-9]+$" ps.out
"$RB/boxctl" run -q -c det.ini >/dev/null 2>err
rc=$?
check "run lock: a second run exits 1" test "$rc" = 1
check "run lock: 'box NAME is already running (id ID)'" \
	grep -qx "boxctl: error: box det is already running (id $id)" err
"$RB/boxctl" stop det
check "stop NAME: exit 0" test $? = 0
"$RB/boxctl" ps >ps.out
check "stop: the box is gone from ps" test "$(grep -cP "^det\t$id\t" ps.out)" = 0
check "stop: the agent is gone" no_process "detached-out"
# A boxd that is not there is no error; one that is there and does not answer is.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET); s.bind(sys.argv[1]); s.listen(4); s.close()' "$W/stale.sock"
BOX_SOCKET=$W/stale.sock "$RB/boxctl" ps >ps.out 2>ps.err
check "ps: a service socket nobody listens on is no error (exit 0, nothing said)" \
	test $? = 0 -a ! -s ps.err
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET); s.bind(sys.argv[1]); s.listen(4); c=s.accept(); time.sleep(30)' "$W/silent.sock" &
silent=$!
wait_for_socket() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.05; done; return 1; }
wait_for_socket "$W/silent.sock"
BOX_SOCKET=$W/silent.sock "$RB/boxctl" ps >ps.out 2>ps.err
rc=$?
check "ps: a boxd that does not answer: exit 1 (rc $rc)" test "$rc" = 1
check "… says which, and why" \
	grep -qx "boxctl: error: boxd at $W/silent.sock did not answer: Connection timed out" ps.err
check "… and still prints the header" grep -qxP "NAME\tID\tSTATE\tPID\tUPTIME" ps.out
kill "$silent" 2>/dev/null
wait "$silent" 2>/dev/null
"$RB/boxctl" stop det 2>err
check "stop: an unknown box exits 1" test $? = 1
id2=$("$RB/boxctl" run -q --detach -c det.ini 2>/dev/null)
check "run lock: released after stop (a new run starts)" grep -qxE "[0-9a-f]{12}" <<<"$id2"
"$RB/boxctl" stop "$id2"
check "stop ID: exit 0" test $? = 0
out=$(timeout 10 "$RB/boxctl" run -q --detach -c det.ini 2>&1)
check "--detach: returns even when stderr is captured too" grep -qxE "[0-9a-f]{12}" <<<"$out"
"$RB/boxctl" stop det >/dev/null 2>&1

# boxctl SIGKILLed: the whole box dies, a double-forked setsid daemon too
cat >proj/daemon.py <<'EOF'
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        # The agent's own interpreter: the only system program it may execve.
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(4242.5)", "sleep-4242.5"])
    os._exit(0)
print("daemonized", flush=True)
time.sleep(600)
EOF
mkini kill "/usr/bin/python3 daemon.py"
"$RB/boxctl" run -q -c kill.ini >kill.out 2>&1 &
bp=$!
_run_pids+=("$bp")
wait_for kill.out daemonized && pgrep -f "sleep-4242.5" >/dev/null
check "kill: the daemon runs inside the box" test $? = 0
kill -9 "$bp"
wait "$bp" 2>/dev/null
check "kill: boxctl SIGKILLed -> the double-forked daemon is gone" no_process "sleep-4242.5"
check "kill: boxctl SIGKILLed -> the agent is gone" no_process "python3 daemon.py"

# [box] timeout
mkini tmo "/bin/sleep 90" "box:timeout = 1s"
start=$(date +%s)
"$RB/boxctl" run -q -c tmo.ini 2>err
rc=$?
check "timeout: exit 124" test "$rc" = 124
check "timeout: 'box NAME timed out after T'" grep -qx "boxctl: error: box tmo timed out after 1s" err
check "timeout: the timeout ended it, not the agent's 90 s ($(($(date +%s) - start)) s)" \
	test $(($(date +%s) - start)) -lt 60

# pids_max (root: the cgroup pids controller)
cat >proj/forkbomb.py <<'EOF'
import os, time
n = 0
try:
    for i in range(300):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
    print("forks", n, "no limit")
except OSError as e:
    print("forks", n, "errno", e.errno)
EOF
mkini pids "/usr/bin/python3 forkbomb.py" "agent:pids_max = 20"
out=$("$RB/boxctl" run -q -c pids.ini 2>err)
n=$(sed -n 's/^forks \([0-9]*\) errno 11$/\1/p' <<<"$out")
check "pids_max: fork fails with EAGAIN past the limit ($out)" test -n "$n" && test "$n" -lt 20

# memory_max (root: the cgroup v1 memory controller on this host): a box
# that allocates past the limit is killed, a box that stays under it is not.
cat >proj/mem.py <<'EOF'
import sys
blocks = []
for i in range(int(sys.argv[1])):
    blocks.append(bytearray(8 << 20))  # touched: bytearray zero-fills
print("allocated", len(blocks) * 8, "MiB")
EOF
mkini mem "/usr/bin/python3 mem.py" "agent:memory_max = 64M"
out=$("$RB/boxctl" run -q -c mem.ini -- 4 2>err)
rc=$?
check "memory_max: 32 MiB under a 64M limit runs (exit $rc, $out)" test "$rc" = 0
out=$("$RB/boxctl" run -q -c mem.ini -- 32 2>err)
rc=$?
check "memory_max: 256 MiB past a 64M limit is stopped (exit $rc)" test "$rc" = 137 -o "$rc" = 1
check "memory_max: never reached 256 MiB ($out)" test "$out" != "allocated 256 MiB"

# SIGINT given to boxctl reaches the agent
cat >proj/sig.py <<'EOF'
import signal, sys, time
signal.signal(signal.SIGINT, lambda *a: sys.exit(42))
print("ready", flush=True)
time.sleep(60)
EOF
mkini sig "/usr/bin/python3 sig.py"
"$RB/boxctl" run -q -c sig.ini >sig.out 2>&1 &
bp=$!
_run_pids+=("$bp")
wait_for sig.out ready
kill -INT "$bp"
wait "$bp"
check "SIGINT: forwarded to the agent (its handler exits 42)" test $? = 42

# a pty when boxctl runs at a terminal
if command -v script >/dev/null; then
	mkini tty "/usr/bin/python3 -c 'import os; print(\"tty=\" + os.ttyname(0))'"
	out=$(timeout 20 script -qec "$RB/boxctl run -q -c tty.ini" /dev/null </dev/null 2>&1)
	check "pty: the agent's stdin is a terminal of the box's devpts" grep -q "tty=/dev/pts/0" <<<"$out"
else
	skip "pty: the agent's stdin is a terminal" "no script(1)"
fi

# nothing left behind
base=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/box}
base=${base:-/run/box}
left=0
for i in "$did" "$id" "$id2"; do [ -n "$i" ] && [ -e "$base/$i" ] && left=$((left + 1)); done
check "runtime dirs BASE/ID are removed at exit ($left left)" test "$left" = 0 -a -n "$did"
tap_done
