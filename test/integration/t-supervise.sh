#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise.sh — a supervised program (supervise = fs, box-trampoline/supervise.c) in real
# boxes, as the caller and as boxtest: python3 as a [tool.python3] whose grants hold the whole
# project reads a permitted file but not the `.env` a forbid names (by a relative, an absolute,
# a symlinked, a /proc/self/cwd, a dirfd-relative path, after a chdir, by stat and O_PATH);
# writes where the policy permits and not where it forbids (no file made); os.listdir is an
# `enumerate`; a rename asks fs:read and fs:move of the source and fs:move of the target (a
# refused leg leaves both in place); mkdir, unlink, truncate, chmod, utime, link, symlink and
# mkfifo are decided and performed (a hard link or symlink to .env refused); opening a FIFO
# with no writer does not hang the supervisor; bind and connect of AF_UNIX paths are decided
# as fs:write (a refused connect is EACCES, not the kernel's ECONNREFUSED), an abstract
# address and a TCP connect are not; so are datagrams sent to a named socket (sendto, sendmsg,
# sendmmsg: received where permitted, EACCES where a forbid names the socket, and from a
# non-dumpable thread), a datagram to an abstract address is not; a directory swapped for a link to a forbidden
# directory (from outside the box) during decided opens never yields its content; eight
# threads opening at once are all answered; a child it starts is supervised too; the tracee's
# O_CLOEXEC is kept; the supervisor's own /proc/1 entries are refused; a tracee that makes itself non-dumpable is refused; killing the
# supervisor (the sandbox's PID 1) kills the program (fail closed). Each decision is a line of
# decisions.jsonl with source "supervisor", shown by `boxctl log`.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-supervise.sh
set -u
trap run_cleanup EXIT
probe_src=$PWD/test/integration/supervise-probe.py
cd "$W"

require_shell_built
boxtest_or_skip "supervised tools as boxtest" || :

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-sup-$u
	mkdir -p "$D/steps"
	sup_fixture "$P" "$D/sup.cedar"
	cp "$probe_src" "$D/probe.py"
	cat >"$D/steps/sup.py" <<EOF
[
 ("probe", ["bash", "-c", "python3 $D/probe.py"]),
 ("killed", ["bash", "-c", "python3 -c 'import time; open(\\"w/started\\", \\"w\\").close(); time.sleep(60); print(\\"survived\\")' sup-kill-$name"], {"timeout": 90}),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = sup.cedar
timeout = 150s

[agent]
command = $W/agent.py $D/steps/sup.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
read = $D/probe.py

[tool.python3]
command = /usr/bin/python3
supervise = fs
[tool.python3.filesystem]
write = $P
read = $D/probe.py
EOF
	chown -R "$u:" "$D"
	chown -h "$u:" "$P/alias"
	chmod 644 "$D/box.ini" "$D/sup.cedar"
	out=$D/sup.out err=$D/sup.err
	# From outside the box, w/dd keeps changing between a directory and a link to secretdir.
	python3 - "$P/w" "$D/stop" <<'PY' &
import os, sys, time
w, stop = sys.argv[1:3]
while not os.path.exists(stop):
    for a in ("real", "link"):
        try:
            os.rename(os.path.join(w, a), os.path.join(w, "dd"))
            os.rename(os.path.join(w, "dd"), os.path.join(w, a))
        except OSError:
            pass
    time.sleep(0.001)  # a busy loop would slow every other test on the machine
PY
	swapper=$!
	# Once the "killed" step's program runs, SIGKILL its supervisor (the sandbox's PID 1).
	(
		for _ in $(seq 1200); do [ -e "$P/w/started" ] && break; sleep 0.1; done
		for pid in $(pgrep -f "sup-kill-$name"); do
			sup=$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ')
			if [ -n "$sup" ] && [ "$(ps -o comm= -p "$sup")" = box-trampoline ]; then
				kill -KILL "$sup" && echo killed >"$D/killed-supervisor"
			fi
		done
	) &
	killer=$!
	box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	touch "$D/stop"
	wait "$swapper" "$killer"
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	kv() { step_kv "$out" probe "$1"; }
	is() { # NAME KEY VALUE
		check_step "$u: $1 ($2=$(kv "$2"))" "$out" probe test "$(kv "$2")" = "$3"
	}
	check_step "$u: the supervised python3 ran (exit 0)" "$out" probe rc_is "$out" probe 0
	is "reads a permitted file" read_permitted ok:proj-content
	is "refused .env (a forbid names it)" read_env error-EACCES
	is "… by its absolute path" read_env_abs error-EACCES
	is "… through a symlink in the view" read_env_symlink error-EACCES
	is "… through /proc/self/cwd" read_env_proc_cwd error-EACCES
	is "… spelled from the system runtime (/usr/lib/../..)" read_env_via_usr error-EACCES
	is "… its metadata, spelled so" stat_env_via_usr error-EACCES
	is "the system runtime reads (undecided)" read_runtime ok:True
	is "… through /lib" read_runtime_lib_link ok:True
	is "… a missing runtime file: ENOENT" stat_runtime_missing error-ENOENT
	is "… relative to a directory fd" read_env_dirfd error-EACCES
	is "… relative after a chdir" read_env_after_chdir error-EACCES
	is "… its metadata (stat)" stat_env error-EACCES
	is "… an O_PATH open" opath_env error-EACCES
	is "the supervisor's own /proc/1/mem is refused (PID 1 would open it as itself)" pid1_mem error-EACCES
	is "… and its /proc/1/environ" pid1_environ error-EACCES
	is "the program's own /proc/self/status reads" own_status ok:True
	is "a relative read after a chdir, permitted" read_permitted_after_chdir ok:proj-content
	is "writes where the policy permits" write_permitted ok
	is "… and reads it back" read_back ok:written
	is "a write the policy forbids: EACCES" write_refused error-EACCES
	is "… and no file is made" write_refused_exists ok:False
	is "os.listdir" listdir ok:a,b
	is "os.rename, both legs permitted" rename ok
	is "a rename whose source a forbid names: EACCES" rename_refused error-EACCES
	is "… the source stays" keep_still_there ok:keep
	is "mkdir, permitted" mkdir ok
	is "mkdir the policy forbids" mkdir_refused error-EACCES
	is "unlink, permitted" unlink ok
	is "unlink the policy forbids" unlink_refused error-EACCES
	is "eight threads opening at once: every open answered" threads ok:320
	is "a child it starts is supervised (refused .env)" child ok:rc1:True
	is "O_CLOEXEC kept on the injected fd" cloexec ok:False
	is "no O_CLOEXEC: the injected fd is inheritable" inheritable ok:True
	is "truncate, permitted (performed by the supervisor)" truncate ok:tw
	is "truncate the policy forbids" truncate_refused error-EACCES
	is "chmod, permitted" chmod ok:0o600
	is "chmod the policy forbids" chmod_refused error-EACCES
	is "utime the policy forbids" utime_refused error-EACCES
	is "utime, permitted" utime ok:1
	is "link, permitted" link ok:2
	is "a hard link to .env: refused (fs:read of the source)" link_env_refused error-EACCES
	is "symlink, permitted" symlink ok:tw
	is "a symlink to .env: refused (fs:read of its target)" symlink_env_refused error-EACCES
	is "bind and connect of an AF_UNIX path the policy permits" unix_bind_connect ok
	is "bind of an AF_UNIX path the policy forbids: EACCES" unix_bind_refused error-EACCES
	is "… and no socket file is made" unix_bind_refused_exists ok:False
	is "connect to an AF_UNIX path the policy forbids: EACCES (not the kernel's ECONNREFUSED)" \
		unix_connect_refused error-EACCES
	is "an abstract address is not decided (the kernel's ECONNREFUSED)" unix_connect_abstract \
		error-ECONNREFUSED
	is "a TCP connect is not decided (the kernel's ECONNREFUSED)" tcp_connect error-ECONNREFUSED
	is "sendto a named datagram socket the policy permits: received" dgram_sendto ok:hello
	is "… sendmsg with the address: received" dgram_sendmsg ok:viamsg
	is "… sendmmsg of two datagrams: both received" dgram_sendmmsg ok:2:m1m2
	is "sendto a named socket the policy forbids: EACCES (not the kernel's ECONNREFUSED)" \
		dgram_sendto_refused error-EACCES
	is "… sendmsg: EACCES" dgram_sendmsg_refused error-EACCES
	is "… sendmmsg: EACCES" dgram_sendmmsg_refused error-EACCES
	is "a datagram to an abstract address is not decided (the kernel's ECONNREFUSED)" \
		dgram_abstract error-ECONNREFUSED
	is "mkfifo, permitted" mkfifo ok
	is "opening a FIFO with no writer does not hang the supervisor" fifo_open_no_hang ok
	check_step "$u: a directory swapped for a link during decided opens never yields the secret ($(kv swapped))" \
		"$out" probe bash -c "case '$(kv swapped)' in ok:*SECRET*|'') exit 1;; ok:*) exit 0;; *) exit 1;; esac"
	is "a tracee that made itself non-dumpable is refused" nondumpable error-EACCES
	is "… and so is its datagram to a permitted socket (its address unreadable)" \
		nondumpable_sendto error-EACCES
	check "$u: the supervisor (PID 1) of a running program was killed" test -s "$D/killed-supervisor"
	check_step "$u: … and the program died with it (fail closed: rc $(step_rc "$out" killed))" \
		"$out" killed bash -c "[ '$(step_rc "$out" killed)' != 0 ] && [ '$(step_rc "$out" killed)' != timeout ] && ! grep -q survived <<<\"\$1\"" _ "$(step_out "$out" killed)"
	check "$u: the secrets never reached the output" bash -c "! grep -q SECRET '$out'"

	forget_default_state "$u" "$name"
	dec=$D/state/$name/decisions.jsonl
	check "$u: decisions.jsonl: the permitted read (source supervisor)" \
		sup_decision "$dec" fs:read permit /proj/p.txt read_content
	check "$u: … the refused .env" sup_decision "$dec" fs:read deny /proj/.env read_content
	check "$u: … the refused write" sup_decision "$dec" fs:write deny /proj/ro/x.txt write_content
	check "$u: … listdir as enumerate" sup_decision "$dec" fs:read permit /proj/ls enumerate
	check "$u: … rename: fs:read of the source" sup_decision "$dec" fs:read permit /proj/w/new.txt read_content
	check "$u: … fs:move of the source" sup_decision "$dec" fs:move permit /proj/w/new.txt rename
	check "$u: … fs:move of the target" sup_decision "$dec" fs:move permit /proj/w/renamed.txt rename
	check "$u: … the refused rename's source leg" sup_decision "$dec" fs:move deny /proj/w/keep.txt rename
	check "$u: … mkdir as create_dir" sup_decision "$dec" fs:write permit /proj/w/d create_dir
	check "$u: … unlink as remove_file" sup_decision "$dec" fs:delete permit /proj/w/renamed.txt remove_file
	check "$u: … bind of an AF_UNIX path as fs:write" sup_decision "$dec" fs:write permit /proj/w/p.sock write_content
	check "$u: … the refused connect" sup_decision "$dec" fs:write deny /proj/ro/s.sock write_content
	check "$u: … the permitted datagram's socket file as fs:write" \
		sup_decision "$dec" fs:write permit /proj/w/dg.sock write_content
	check "$u: … the refused datagram" sup_decision "$dec" fs:write deny /proj/ro/d.sock write_content
	as_user "$u" "cd '$D' && '$RB/boxctl' log $name" >"$D/log" 2>&1
	check "$u: boxctl log shows the supervisor's refusal" grep -qE "deny +fs:read +.*/proj/\.env" "$D/log"
	as_user "$u" "cd '$D' && '$RB/boxctl' log $name --source supervisor --verdict deny" \
		>"$D/log-sup" 2>&1
	check "$u: … and the refused datagram's (--source supervisor)" \
		grep -qE "deny +fs:write +.*/proj/ro/d\.sock" "$D/log-sup"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
