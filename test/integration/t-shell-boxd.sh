#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-boxd.sh — boxd's side of box-shell, seen by a stand-in box-shell
# (box-test-shellfake, installed as box-shell in a private helper dir) that
# the real shell alias (/run/box/bin/sh in the agent's box) reaches at
# /run/box/shell.sock: boxd starts box-shell per box through the trampoline
# with fd 3 = its channel, fd 4 = its box-policyd channel, fd 5 =
# RUNTIME/shell.sock listening and nothing else, as the owner; ShellInit carries the
# box, home, workspace, the agent's PATH without /run/box/bin, command_timeout,
# each [tool.NAME] with its canonical program and fixed arguments, the exec
# entries and python_tool; the agent's PATH starts with /run/box/bin; a
# SpawnRequest is re-checked by boxd against its own config (an unknown
# table, another program, fixed arguments that do not match, a longer match,
# a program under no exec entry: refused, and the program never runs — a
# marker file proves it) and otherwise runs in its tool sandbox: the table's
# grants only, the workspace rule, the environment ([tool.NAME.env], the
# request's assignments minus reserved names, the box's proxy variables when
# contained, none with contain_egress = false), stdio = the alias's fds,
# SpawnExit with the status; SpawnSignal reaches the program (forwarded and
# not forwarded signals); at most 256 tools run at once; a box stop kills a
# running tool; a [tool] with
# supervise = fs is accepted (t-supervise.sh runs one); ShellReady ok =
# false refuses the box with box-shell's message; box-shell exiting before
# ready fails the start (the agent may have started meanwhile — box-shell
# does not gate it, boxd/daemon.c — but box-shell answered nothing it asked:
# its lines are only the directive and a failing rc); box-shell dying while the box runs stops the box
# with "box-shell exited (...)". As root and as the ordinary user boxtest.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
cp "$BOX_BIN/box-test-shellfake" "$RB/box-shell" || { not_ok "box-test-shellfake is built"; tap_done; exit 1; }
chmod 755 "$RB/box-shell"
mkdir -p ws/sub ws/other mark
echo inside >ws/sub/f
echo secret >ws/secret
chmod -R a+rX ws
chmod 777 ws mark

# The agent: runs each line of $W/ws/directives through the alias, as `sh -c LINE`.
cat >ws/agent.py <<'EOF'
import subprocess, sys, time
for line in open(sys.argv[1]).read().splitlines():
    print("== " + line, flush=True)
    rc = subprocess.call(["/run/box/bin/sh", "-c", line])
    print("rc %d" % rc, flush=True)
if len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))
EOF

write_ini() { # NAME DIRECTIVES [SLEEP]
	cat >"$1.ini" <<EOF
[box]
name = d-$1
command_timeout = 5s

[agent]
command = /usr/bin/python3 $W/ws/agent.py $W/ws/$1.dirs ${3:-}
workspace = $W/ws

[agent.env]
PATH = /usr/bin:/bin

[agent.filesystem]
read = $W/ws
write = $W/mark
exec = /usr/bin/id

[tool.git]
command = /usr/bin/git
[tool.git.filesystem]
write = $W/mark

[tool.gitlog]
command = /usr/bin/git log

[tool.envt]
command = /usr/bin/env
[tool.envt.env]
FOO = from-config
KEEP = config

[tool.hostenv]
command = /usr/bin/env
[tool.hostenv.network]
contain_egress = false

[tool.pwd]
command = /usr/bin/pwd
[tool.pwd.filesystem]
read = $W/ws/sub

[tool.cat]
command = /usr/bin/cat
[tool.cat.filesystem]
read = $W/ws/sub

[tool.sleeper]
command = /usr/bin/sleep

[tool.python3]
command = /usr/bin/python3
EOF
	printf '%s\n' "$2" >"ws/$1.dirs"
	chmod 644 "$1.ini" "ws/$1.dirs"
}

# as root (or the caller), and as boxtest: RUNAS OUT NAME [VAR=VALUE...]
run_box() {
	local who=$1 out=$2 name=$3
	shift 3
	if [ "$who" = root ]; then
		env "$@" timeout 60 "$RB/boxctl" run -q -c "$name.ini" >"$out" 2>"$out.err"
	else
		as_boxtest "$* timeout 60 '$RB/boxctl' run -q -c '$W/$name.ini'" >"$out" 2>"$out.err"
	fi
}
# The lines after "== DIRECTIVE" up to its "rc N" (the tool's output and box-shell's
# "reply" line race: no order is assumed between them).
section() { awk -v d="== $2" '$0 == d {on = 1; next} on && /^== / {exit} on {print}' "$1"; }
# sec_has FILE DIRECTIVE LINE / sec_grep FILE DIRECTIVE PATTERN
sec_has() { section "$1" "$2" | grep -qxF -- "$3" || { diag "$2: no line $3"; return 1; }; }
sec_grep() { section "$1" "$2" | grep -q -- "$3" || { diag "$2: nothing like $3"; return 1; }; }

users=(root)
have_boxtest && users+=(boxtest)
for u in "${users[@]}"; do
	p="$W/$u"
	[ "$u" = root ] && uid=$(id -u) || uid=$(id -u boxtest)
	write_ini "s$u" "info
spawn git /usr/bin/git $W/ws -- git --version
spawn gitlog /usr/bin/git $W/ws -- git log --oneline
spawn git /usr/bin/git $W/ws -- git log -1
spawn nosuch /usr/bin/git $W/ws -- git --version
spawn git /usr/bin/touch $W/ws -- touch $W/mark/marker-git
spawn git /usr/bin/git $W/ws -- git
spawn - /usr/bin/git $W/ws -- git --version
spawn - /usr/bin/touch $W/ws -- touch $W/mark/marker-exec
spawn - /usr/bin/id $W/ws -- id -u
spawn envt /usr/bin/env $W/ws BAR=1 FOO=override LD_PRELOAD=/x.so HTTP_PROXY=http://evil:1 BOX_ID=forged PYTHONPATH=/y -- env
spawn hostenv /usr/bin/env $W/ws -- env
spawn pwd /usr/bin/pwd $W/ws/sub -- pwd
spawn pwd /usr/bin/pwd $W/ws/other -- pwd
spawn cat /usr/bin/cat $W/ws/sub -- cat $W/ws/sub/f
spawn cat /usr/bin/cat $W/ws/sub -- cat $W/ws/secret
signal 15 sleeper /usr/bin/sleep $W/ws -- sleep 30
signal 10 sleeper /usr/bin/sleep $W/ws -- sleep 30
exit 7"
	t0=$(date +%s)
	run_box "$u" "$p.out" "s$u"
	rc=$?
	check "$u: a box with the stand-in box-shell runs (rc $rc)" test "$rc" = 0
	check "$u: ShellInit: the box and its id" bash -c "grep -qE '^box d-s$u [0-9a-f]{12}$' '$p.out'"
	check "$u: ShellInit: the owner's home, the agent's workspace" \
		bash -c "grep -qx 'home $(getent passwd "$u" | cut -d: -f6)' '$p.out' && grep -qx 'workspace $W/ws' '$p.out'"
	check "$u: ShellInit: the agent's PATH without /run/box/bin" grep -qx 'path /usr/bin:/bin' "$p.out"
	check "$u: ShellInit: command_timeout 5s" grep -qx 'command_timeout_ms 5000' "$p.out"
	check "$u: ShellInit: [tool.python3] exists" grep -qx 'python_tool 1' "$p.out"
	check "$u: ShellInit: tools with canonical program and fixed arguments" \
		bash -c "grep -qx 'tool git /usr/bin/git' '$p.out' && grep -qx 'tool gitlog /usr/bin/git log' '$p.out' && grep -qx 'tool pwd /usr/bin/pwd' '$p.out'"
	check "$u: ShellInit: the agent's exec entries" grep -qx 'exec /usr/bin/id' "$p.out"
	check "$u: box-shell: fd 3 and fd 4 SOCK_SEQPACKET, fd 5 a listening SOCK_SEQPACKET" \
		bash -c "grep -qx 'fd3 1' '$p.out' && grep -qx 'fd4 1' '$p.out' && grep -qx 'fd5 1 1' '$p.out'"
	check "$u: box-shell holds fds 0-5, and its session's socket and the alias's 3 fds: nothing else" \
		grep -qx 'fds 0 1 2 3 4 5 6 7 8 9' "$p.out"
	check "$u: box-shell runs as the owner (uid $uid)" grep -qx "uid $uid" "$p.out"
	check "$u: a matching tool runs in its sandbox: reply tool.git, its output, exit 0" \
		bash -c "$(declare -f section sec_has sec_grep diag); d='spawn git /usr/bin/git $W/ws -- git --version'; sec_has '$p.out' \"\$d\" 'reply ok tool.git' && sec_grep '$p.out' \"\$d\" '^git version' && sec_has '$p.out' \"\$d\" 'exit 0'"
	check "$u: fixed arguments: git log matches [tool.gitlog]" \
		sec_has "$p.out" "spawn gitlog /usr/bin/git $W/ws -- git log --oneline" "reply ok tool.gitlog"
	check "$u: refused: [tool.git] named where [tool.gitlog] matches longer" \
		sec_grep "$p.out" "spawn git /usr/bin/git $W/ws -- git log -1" "^reply refused: boxd refuses the spawn: \[tool.gitlog\] matches with more fixed arguments than \[tool.git\]"
	check "$u: refused: a table the config lacks" \
		sec_grep "$p.out" "spawn nosuch /usr/bin/git $W/ws -- git --version" "has no table for"
	check "$u: refused: another program under a table's name (the program never runs)" \
		sec_grep "$p.out" "spawn git /usr/bin/touch $W/ws -- touch $W/mark/marker-git" "refused: boxd refuses the spawn: \[tool.git\] runs /usr/bin/git, not /usr/bin/touch"
	check "$u: refused: fixed arguments that are no prefix ([tool.gitlog] for bare git is fine: [tool.git])" \
		sec_has "$p.out" "spawn git /usr/bin/git $W/ws -- git" "reply ok tool.git"
	check "$u: refused: a table's program asked for as an exec entry" \
		sec_grep "$p.out" "spawn - /usr/bin/git $W/ws -- git --version" "it runs in that table.s sandbox"
	check "$u: refused: a program under no exec entry (the program never runs)" \
		sec_grep "$p.out" "spawn - /usr/bin/touch $W/ws -- touch $W/mark/marker-exec" "lies under no \[agent.filesystem\] exec entry"
	check "$u: … the refused programs never ran (no marker in a dir both sandboxes could write)" \
		bash -c "test ! -e '$W/mark/marker-git' && test ! -e '$W/mark/marker-exec'"
	check "$u: refusals exit 126" \
		test "$(grep -c -x 'rc 126' "$p.out")" = 5
	check "$u: an exec entry runs with the agent's grants: reply exec, its output" \
		test "$(section "$p.out" "spawn - /usr/bin/id $W/ws -- id -u" | sort | tr '\n' ' ')" = "$(printf '%s\n' "reply ok exec" "$uid" "exit 0" "rc 0" | sort | tr '\n' ' ')"
	env_out=$(awk -v d="== spawn envt /usr/bin/env $W/ws BAR=1 FOO=override LD_PRELOAD=/x.so HTTP_PROXY=http://evil:1 BOX_ID=forged PYTHONPATH=/y -- env" '$0 == d {on = 1; next} on && /^== / {exit} on {print}' "$p.out")
	ehas() { grep -qx -- "$1" <<<"$env_out" || { diag "env lacks $1"; return 1; }; }
	enot() { ! grep -q -- "$1" <<<"$env_out" || { diag "env has $1"; return 1; }; }
	check "$u: tool env: [tool.NAME.env], then the invocation's assignments over it" \
		bash -c "$(declare -f ehas); env_out=\$(cat); ehas KEEP=config && ehas FOO=override && ehas BAR=1" <<<"$env_out"
	check "$u: tool env: reserved names the request sets are dropped (LD_*, PYTHON*, BOX_*, proxies)" \
		bash -c "$(declare -f enot ehas); env_out=\$(cat); enot LD_PRELOAD && enot PYTHONPATH && enot forged && enot evil && ehas 'HTTP_PROXY=http://127.0.0.1:3128'" <<<"$env_out"
	check "$u: tool env: box's USER, PWD, BOX_NAME, the CA; PATH without /run/box/bin" \
		bash -c "$(declare -f enot ehas); env_out=\$(cat); ehas USER=$u && ehas PWD=$W/ws && ehas BOX_NAME=d-s$u && ehas SSL_CERT_FILE=/run/box/ca.pem && ehas PATH=/usr/local/bin:/usr/bin:/bin && enot /run/box/bin" <<<"$env_out"
	host_env=$(section "$p.out" "spawn hostenv /usr/bin/env $W/ws -- env")
	check "$u: contain_egress = false: no proxy, CA or placeholder variables" \
		bash -c "grep -qx 'reply ok tool.hostenv' && ! grep -q -e PROXY -e SSL_CERT -e CA_BUNDLE" <<<"$host_env"
	check "$u: workspace: the shell's cwd when the tool's grants hold it" \
		sec_has "$p.out" "spawn pwd /usr/bin/pwd $W/ws/sub -- pwd" "$W/ws/sub"
	check "$u: workspace: else the agent's workspace" \
		sec_has "$p.out" "spawn pwd /usr/bin/pwd $W/ws/other -- pwd" "$W/ws"
	check "$u: grants: a tool reads its table's grant" \
		sec_has "$p.out" "spawn cat /usr/bin/cat $W/ws/sub -- cat $W/ws/sub/f" inside
	check "$u: grants: not what only the agent's grants hold (cat fails, exit 1)" \
		bash -c "$(declare -f section sec_has diag); sec_has '$p.out' 'spawn cat /usr/bin/cat $W/ws/sub -- cat $W/ws/secret' 'reply ok tool.cat' && sec_has '$p.out' 'spawn cat /usr/bin/cat $W/ws/sub -- cat $W/ws/secret' 'exit 1' && ! grep -qx secret '$p.out'"
	check "$u: SpawnSignal SIGTERM (forwarded by the trampolines): exit 143" \
		sec_has "$p.out" "signal 15 sleeper /usr/bin/sleep $W/ws -- sleep 30" "exit 143"
	check "$u: SpawnSignal SIGUSR1 (to the program itself): exit 138" \
		sec_has "$p.out" "signal 10 sleeper /usr/bin/sleep $W/ws -- sleep 30" "exit 138"
	check "$u: … neither waited for sleep 30 ($(($(date +%s) - t0)) s)" test $(($(date +%s) - t0)) -lt 25
	check "$u: the session's status reaches the agent (exit 7)" \
		sec_has "$p.out" "exit 7" "rc 7"
done

# Run as root from here: the start's failures, a lost box-shell, stop.
write_ini r1 "info"
run_box root "$W/r1" r1 BOX_TEST_SHELL_FAKE_REFUSE="no seccomp filter here"
rc=$?
check "ShellReady ok = false: the box does not start (exit 1, rc $rc)" test "$rc" = 1
check "… boxctl: error: box-shell cannot serve the box: MESSAGE" \
	grep -qx "boxctl: error: box-shell cannot serve the box: no seccomp filter here" "$W/r1.err"
grep -qx "boxctl: error: box-shell cannot serve the box: no seccomp filter here" "$W/r1.err" ||
	sed 's/^/#   boxctl said: /' "$W/r1.err"
# agent_unanswered OUT: the agent's output holds nothing box-shell answered.
agent_unanswered() {
	! grep -vxE '== info|rc [1-9][0-9]*' "$1"
}
check "… nothing the agent asked of box-shell ran" agent_unanswered "$W/r1"

run_box root "$W/r2" r1 BOX_TEST_SHELL_FAKE_EXIT=1
rc=$?
check "box-shell exits before ShellReady: the box does not start (exit 1, rc $rc)" test "$rc" = 1
check "… boxctl: error: box-shell exited before it was ready" \
	grep -q "^boxctl: error: box-shell exited before it was ready" "$W/r2.err"
check "… nothing the agent asked of box-shell ran" agent_unanswered "$W/r2"

write_ini r3 "die" 90
t0=$(date +%s)
run_box root "$W/r3" r3
rc=$?
check "box-shell dies while the box runs: boxctl exits 1 (rc $rc)" test "$rc" = 1
check "… boxctl: error: box-shell exited (...): the box was stopped" \
	grep -q "^boxctl: error: box-shell exited (.*): the box was stopped" "$W/r3.err"
check "… at once, not after the agent's 90 s ($(($(date +%s) - t0)) s)" test $(($(date +%s) - t0)) -lt 60

write_ini r5 "info"
printf '\n[tool.sup]\ncommand = /usr/bin/true\nsupervise = fs\n' >>r5.ini
run_box root "$W/r5" r5
rc=$?
check "a tool with supervise = fs: the box is accepted and runs (rc $rc)" test "$rc" = 0
check "… the agent ran" test -s "$W/r5"

# The cap: 256 live tool sandboxes per box; the 257th and 258th are refused.
write_ini r6 "many 258 sleeper /usr/bin/sleep $W/ws -- sleep 999.$$"
run_box root "$W/r6" r6
check "258 spawns at once: 256 started, 2 refused" grep -qx 'started 256 refused 2' "$W/r6"
check "… refused: too many tools running in this box (at most 256)" \
	grep -qx 'refusal: too many tools running in this box (at most 256)' "$W/r6"
check "… each started one killed through SpawnSignal SIGKILL, each SpawnExit came" \
	grep -qx 'exits 256' "$W/r6"
check "… none left" no_process "sleep 999.$$"

write_ini r4 "spawn sleeper /usr/bin/sleep $W/ws -- sleep 987654"
run_box root "$W/r4" r4 &
bp=$!
wait_for "$W/r4" 'reply ok tool.sleeper'
check "a tool runs while the box runs" pgrep -f 'sleep 987654'
"$RB/boxctl" stop d-r4 >/dev/null 2>&1
wait "$bp"
check "box stop: the running tool is killed with the box" no_process 'sleep 987654'
tap_done
