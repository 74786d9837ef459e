#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-attach.sh — `boxctl shell NAME`: a person's interactive box shell in a running box,
# at a real terminal (tmux, lib-tmux.sh), as the caller and as boxtest. The box runs detached
# (its agent a python loop); boxctl shell opens a session served by the box's box-shell. Checked: the
# session runs commands and prints, at the caller's terminal size, and follows a resize; its pty
# is in box-shell's devpts, not the agent's (the agent finds none to open); a
# command the policy refuses is refused (126) with
# box-shell's message; Ctrl-C stops a running command and the prompt comes back; a second and
# a third session work at the same time, each with its own status; `exit 4` is boxctl's status
# and the box keeps running; `boxctl log` shows the session's decisions as a person's; the box
# stopping ends an open session (boxctl exits 1 and says so); a name no box has is an error;
# no terminal is a usage error. As root with a service boxd: another user's `boxctl shell` on
# root's box is refused, root's own works.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-tmux.sh
set -u
trap 'tmux_stop; run_cleanup' EXIT
cd "$W"

require_shell_built
require_tmux
boxtest_or_skip "boxctl shell as boxtest, and refused for another user" || :

# on SESSION CMD...: a lib-tmux.sh call for another tmux session of the same server.
on() {
	local s=$1
	shift
	TMUX_SESSION=$s TMUX_RC=$W/tmux-$s.rc "$@"
}
# wait_line SESSION LINE [SECS]: until a whole screen line of SESSION is LINE.
wait_line() {
	local i
	for i in $(seq $((${3:-15} * 10))); do
		on "$1" tmux_screen | grep -qx -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
# as_cmd U DIR CMD: CMD (a command line) as user U in DIR, for a tmux pane (whose environment
# is the tmux server's: BOX_SOCKET is passed as it is now).
as_cmd() {
	local u=$1 d=$2 cmd=$3
	if [ "$u" = "$(id -un)" ]; then
		echo "cd '$d' && BOX_SOCKET='$BOX_SOCKET' exec $cmd"
	else
		echo "cd '$d' && exec setpriv --reuid '$u' --regid '$(id -g "$u")' --init-groups env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME HOME='$(getent passwd "$u" | cut -d: -f6)' BOX_SOCKET='$BOX_SOCKET' ASAN_OPTIONS='$ASAN_OPTIONS' $cmd"
	fi
}
# shell_in SESSION U DIR NAME: `boxctl shell NAME` as U in a new tmux session; its prompt set.
shell_in() {
	local s=$1 u=$2 d=$3 name=$4
	on "$s" tmux_start 24 100 "timeout --foreground -k 5 300 sh -c \"$(as_cmd "$u" "$d" "'$RB/boxctl' shell '$name'")\""
	on "$s" tmux_wait "a shell in box $name" 30 || return 1
	on "$s" tmux_type "PS1='$s> '"
	on "$s" tmux_wait "$s> " 15
}

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-at-$u-$$
	mkdir -p "$P/subdir-zq"
	echo data >"$P/unique-file-qx.txt"
	cat >"$D/allow.cedar" <<'EOF'
permit (principal, action, resource);
@id("no_rmdir")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rmdir" };
EOF
	# The agent: when asked (go-zq), what its own /dev/pts holds and whether the person's pty
	# (box-shell's devpts: 0) can be opened there.
	cat >"$P/watch-zq.py" <<'EOF'
import os, subprocess, time
subprocess.run(['sh', '-c', 'echo agent-cmd-zq >agent-out-zq'])
end = time.time() + 280
while time.time() < end:
    if os.path.exists('go-zq'):
        names = sorted(os.listdir('/dev/pts'))
        try:
            os.close(os.open('/dev/pts/0', os.O_RDWR | os.O_NOCTTY))
            opened = 'opened'
        except OSError as e:
            opened = 'refused-%d' % e.errno
        with open('pts-seen-zq.tmp', 'w') as f:
            f.write('agent-pts: %s %s\n' % (','.join(names), opened))
        os.rename('pts-seen-zq.tmp', 'pts-seen-zq')
        os.unlink('go-zq')
    time.sleep(0.1)
EOF
	cat >"$D/at.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = allow.cedar
timeout = 300s

[agent]
command = /usr/bin/python3 $P/watch-zq.py
workspace = $P

[agent.env]
$(agent_env)
ZQ_AGENT_VAR = set-in-agent-env

[agent.filesystem]
write = $P
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/at.ini" "$D/allow.cedar"
	id=$(AS_USER_DIR=$P as_user "$u" "'$RB/boxctl' run --detach -q -c '$D/at.ini'" 2>"$W/detach-$u.err")
	check "$u: the box runs detached" grep -qxE '[0-9a-f]{12}' <<<"$id"
	[ -n "$id" ] || sed 's/^/#   /' "$W/detach-$u.err"

	s1=at1-$u
	alive=true
	shell_in "$s1" "$u" "$P" "$name" || alive=false
	check "$u: boxctl shell NAME opens a shell in the running box (its banner, a prompt)" $alive
	$alive || on "$s1" tmux_screen | tail -15 | sed 's/^/#   screen: /'
	on "$s1" tmux_type 'echo first-$((20+3)); pwd'
	check "$u: a command runs and prints" wait_line "$s1" "first-23"
	check "$u: … in the agent's workspace" wait_line "$s1" "$P" 5
	on "$s1" tmux_type 'echo "agentvar-$ZQ_AGENT_VAR"'
	check "$u: the session has the agent's [agent.env]" wait_line "$s1" "agentvar-set-in-agent-env" 5
	on "$s1" tmux_type 'echo size-$COLUMNS-$LINES'
	check "$u: the session's terminal has the caller's size" wait_line "$s1" "size-100-24" 5
	on "$s1" tmux_resize 30 120
	# (the SIGWINCH travels through the holder and box-shell: asked again until it is there)
	resized=false
	for _ in 1 2 3 4 5 6; do
		on "$s1" tmux_type 'echo resized-$COLUMNS-$LINES'
		wait_line "$s1" "resized-120-30" 3 && { resized=true; break; }
	done
	check "$u: a resize reaches the session (SIGWINCH)" $resized
	on "$s1" tmux_type 'cat unique-file-qx.txt'
	check "$u: … it reads the workspace" wait_line "$s1" "data" 5
	on "$s1" tmux_type 'rmdir subdir-zq; echo rmdir-rc-$?'
	check "$u: a command the policy refuses is refused (126)" wait_line "$s1" "rmdir-rc-126" 10
	check "$u: … with box-shell's message" on "$s1" tmux_wait "box-shell: rmdir subdir-zq: policy denied" 2
	on "$s1" tmux_type 'mkdir made-by-person-zq && echo mkdir-rc-$?'
	check "$u: a permitted change is made" wait_line "$s1" "mkdir-rc-0" 10

	# The agent cannot reach the person's terminal: its /dev/pts is another devpts.
	on "$s1" tmux_type "printf 'pts-%s\\n' /dev/pts/*"
	check "$u: the session's pty is in box-shell's devpts (/dev/pts/0)" \
		wait_line "$s1" "pts-/dev/pts/0" 5
	on "$s1" tmux_type 'touch go-zq; while [ ! -e pts-seen-zq ]; do sleep 0.2; done; cat pts-seen-zq'
	check "$u: the agent's /dev/pts has no pty of the session, it cannot open one (ENOENT)" \
		wait_line "$s1" "agent-pts: ptmx refused-2" 20
	on "$s1" tmux_screen | grep '^agent-pts:' | sed 's/^/#   /'

	# Ctrl-C: the running command stops, the prompt comes back, the shell goes on.
	on "$s1" tmux_type 'sleep 100; echo not-after-sleep'
	sleep 1
	on "$s1" tmux_keys C-c
	on "$s1" tmux_type 'echo after-$((40+4))-int'
	check "$u: Ctrl-C stops sleep 100 and the shell goes on" wait_line "$s1" "after-44-int" 15
	check "$u: … the rest of that line did not run" \
		test "$(on "$s1" tmux_count 'not-after-sleep')" -le 1

	# A second and a third session at once.
	s2=at2-$u s3=at3-$u
	ok2=true ok3=true
	shell_in "$s2" "$u" "$P" "$name" || ok2=false
	shell_in "$s3" "$u" "$P" "$name" || ok3=false
	check "$u: a second and a third session open while the first is open" sh -c "$ok2 && $ok3"
	on "$s2" tmux_type 'echo second-$((1+1))'
	on "$s3" tmux_type 'echo third-$((1+2))'
	check "$u: … the second runs its commands" wait_line "$s2" "second-2"
	check "$u: … the third its own" wait_line "$s3" "third-3"
	check "$u: … and neither saw the other's" \
		test "$(on "$s2" tmux_count 'third-3')" = 0
	on "$s1" tmux_type 'echo still-first-$((2*4))'
	check "$u: … and the first still works" wait_line "$s1" "still-first-8"
	on "$s3" tmux_type 'exit 7'
	rc=$(on "$s3" tmux_wait_exit 20)
	check "$u: exit 7 in the third ends it, boxctl shell returns 7 (rc $rc)" test "$rc" = 7
	on "$s1" tmux_type 'exit 4'
	rc=$(on "$s1" tmux_wait_exit 20)
	check "$u: exit 4 ends the first session, boxctl shell returns 4 (rc $rc)" test "$rc" = 4
	[ "$rc" = 4 ] || on "$s1" tmux_screen | tail -20 | sed 's/^/#   screen: /'
	as_user "$u" "'$RB/boxctl' ps" >"$W/ps-$u" 2>&1
	check "$u: … and the box keeps running" grep -qP "^$name\t$id\trunning\t" "$W/ps-$u"

	# The log: the session's decisions are a person's.
	cp "$D/at.ini" "$D/box.ini"
	chown "$u:" "$D/box.ini"
	log=$W/log-$u
	as_user "$u" "cd '$D' && '$RB/boxctl' log $name --json" >"$log" 2>&1 || true
	check "$u: boxctl log: the refused rmdir, from a person's session" \
		grep -q '"verdict":"deny".*"session":"person"' "$log"
	check "$u: … the permitted mkdir too" \
		grep -q 'made-by-person-zq.*"session":"person"\|"session":"person".*made-by-person-zq' "$log"
	check "$u: … while the agent's own shell command is logged as no person's" \
		test "$(grep '"source":"box-shell"' "$log" | grep 'agent-cmd-zq' | grep -vc '"session":"person"')" -ge 1
	check "$u: … and no person's line is the agent's" \
		test "$(grep '"session":"person"' "$log" | grep -c 'agent-cmd-zq')" = 0

	# The box stopping ends the session that is still open.
	as_user "$u" "'$RB/boxctl' stop $name" >/dev/null 2>&1
	rc=$(on "$s2" tmux_wait_exit 30)
	check "$u: the box stopping ends an open session: boxctl shell exits 1 (rc $rc)" test "$rc" = 1
	check "$u: … and says the session ended without a status" \
		on "$s2" tmux_wait "ended without a status" 2
	on "$s2" tmux_stop

	# Errors: no such box; no terminal.
	as_user "$u" "'$RB/boxctl' shell no-such-box-$$ </dev/null" >/dev/null 2>"$W/nobox-$u.err"
	rc=$?
	check "$u: no terminal is a usage error (2) (rc $rc)" test "$rc" = 2
	check "$u: … which says a terminal is needed" grep -q "needs a terminal" "$W/nobox-$u.err"
	on nobox-$u tmux_start 24 100 "sh -c \"$(as_cmd "$u" "$P" "'$RB/boxctl' shell no-such-box-$$")\""
	rc=$(on nobox-$u tmux_wait_exit 20)
	check "$u: a box no one runs: boxctl shell exits 1 (rc $rc)" test "$rc" = 1
	check "$u: … saying no box of that name runs" \
		on nobox-$u tmux_wait "no box named no-such-box-$$ is running" 2
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done

# Another user's `boxctl shell` on root's box: refused (a service boxd, so both reach it).
if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	export BOX_SOCKET="$W/svc.sock"
	"$RB/boxd" --listen "$BOX_SOCKET" 2>"$W/svc.log" &
	_run_pids+=("$!")
	for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
	chmod 666 "$BOX_SOCKET" # the test's stand-in for group box-clients
	D=$W/svc
	mkdir -p "$D/proj"
	name=e2e-at-svc-$$
	echo 'permit (principal, action, resource);' >"$D/allow.cedar"
	cat >"$D/svc.ini" <<EOF
[box]
name = $name
policy = allow.cedar
timeout = 300s

[agent]
command = /bin/sleep 290
workspace = $D/proj
EOF
	chmod 755 "$D" "$D/proj"
	chmod 644 "$D/svc.ini" "$D/allow.cedar"
	id=$("$RB/boxctl" run --detach -q -c "$D/svc.ini" 2>"$W/svc-run.err")
	check "service: root's box runs detached through the service" grep -qxE '[0-9a-f]{12}' <<<"$id"
	on svcu tmux_start 24 100 "sh -c \"$(as_cmd boxtest "$W" "'$RB/boxctl' shell '$name'")\""
	rc=$(on svcu tmux_wait_exit 30)
	check "service: boxtest's boxctl shell on root's box is refused (rc $rc)" test "$rc" = 1
	check "service: … as no box of boxtest's" on svcu tmux_wait "no box named $name is running" 2
	check "service: … and no session was opened for it" \
		test "$(on svcu tmux_count 'a shell in box')" = 0
	on svcu2 tmux_start 24 100 "sh -c \"$(as_cmd boxtest "$W" "'$RB/boxctl' shell '$id'")\""
	rc=$(on svcu2 tmux_wait_exit 30)
	check "service: … by its id too (rc $rc)" test "$rc" = 1
	ok=true
	shell_in svcr root "$D/proj" "$name" || ok=false
	check "service: root's own boxctl shell through the service works" $ok
	$ok || on svcr tmux_screen | tail -15 | sed 's/^/#   screen: /'
	on svcr tmux_type 'echo svc-$((3*3))'
	check "service: … and runs commands" wait_line svcr "svc-9"
	on svcr tmux_type 'exit'
	rc=$(on svcr tmux_wait_exit 20)
	check "service: exit ends it with the last status (rc $rc)" test "$rc" = 0
	"$RB/boxctl" stop "$name" >/dev/null 2>&1
fi
tap_done
