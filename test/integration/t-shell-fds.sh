#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-fds.sh — a script in a real box cannot write into its own box-policyd channel (as the
# caller and as boxtest). The invocation's private fds (box-shell/daemon.h: 100 the control
# socket, 101 its box-policyd channel, ...) are no script's: the agent writes forged policyd
# messages (box-test-forge: a Record of "make test" exiting 0, a DecideRequest for net:connect)
# through every spelling — /dev/fd/101, /proc/self/fd/101, >&101, exec 7>&101, printf of the
# bytes, /proc/$$/fd/101, /dev//fd/101, fds 100-106 — and each is refused with a message; the
# `formerly … output.status: 0` gate stays shut (the agent's deploy is still denied), no forged
# line is in decisions.jsonl, no channel was dropped, and the shell goes on deciding.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built
FORGE=$BOX_BIN/box-test-forge
if [ ! -x "$FORGE" ]; then
	not_ok "box-test-forge is built ($FORGE)"
	tap_done
	exit 1
fi
boxtest_or_skip "private fds as boxtest" || :

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-fd-$u
	mkdir -p "$P" "$D/steps"
	# What a script would write into its channel (request id 1, Decide ids 1-3 named).
	"$FORGE" decide net:connect host=s:forged.example port=i:443 >"$P/f-decide"
	"$FORGE" --printf decide net:connect host=s:forged.example port=i:443 >"$P/f-decide.fmt"
	for id in 1 2 3; do
		"$FORGE" record shell:spawn "$id" status=i:0 >"$P/f-record$id"
	done
	"$FORGE" --printf record shell:spawn 1 status=i:0 >"$P/f-record.fmt"
	cat >"$D/gate.cedar" <<'EOF'
@id("shell_all")
permit (principal, action, resource)
when { action != Box::Action::"net:connect" && action != Box::Action::"http:request" };

@id("deploy_after_tests")
@description("Run the tests first.")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "echo" && context.input has arg1 && context.input.arg1 == "DEPLOY" }
unless temporal {
  formerly within 1h (
    Box::Action::"shell:spawn"::response{ input.program: "make", input.arg1: "test", output.status: 0 }
  )
};
EOF
	cat >"$D/steps/fds.py" <<EOF
[
 ("gate_before", ["bash", "-c", "echo DEPLOY"]),
 ("devfd", ["bash", "-c", "for i in 1 2 3; do cat $P/f-record\$i >/dev/fd/101; done"]),
 ("devfd_decide", ["bash", "-c", "cat $P/f-decide >/dev/fd/101"]),
 ("printf", ["bash", "-c", "printf \"\$(cat $P/f-record.fmt)\" >/dev/fd/101"]),
 ("printf_decide", ["bash", "-c", "printf \"\$(cat $P/f-decide.fmt)\" >&101"]),
 ("procself", ["bash", "-c", "cat $P/f-record1 >/proc/self/fd/101"]),
 ("dup", ["bash", "-c", "cat $P/f-record1 >&101"]),
 ("exec7", ["bash", "-c", "exec 7>&101; cat $P/f-record1 >&7"]),
 ("rdwr", ["bash", "-c", "cat $P/f-decide 1<>/dev/fd/101"]),
 ("nested", ["bash", "-c", "sh -c 'cat $P/f-decide >&101'; (cat $P/f-record1 >&101)"]),
 ("every", ["bash", "-c", "for n in 100 101 102 103 104 105 106; do cat $P/f-decide >/dev/fd/\$n; cat $P/f-record1 >&\$n; done; exit 9"]),
 ("procpid", ["bash", "-c", "cat $P/f-decide >/proc/\$\$/fd/101"]),
 ("slashes", ["bash", "-c", "cat $P/f-decide >/dev//fd/101"]),
 ("target", ["bash", "-c", "exec 101>&-"]),
 ("read_u", ["bash", "-c", "read -u 101 line"]),
 ("gate_after", ["bash", "-c", "echo DEPLOY"]),
 ("alive", ["bash", "-c", "exec 5>&1; echo still-decided >&5"]),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = gate.cedar
timeout = 200s

[agent]
command = $W/agent.py $D/steps/fds.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/gate.cedar"
	out=$D/fds.out err=$D/fds.err
	box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi

	cs() { check_step "$u: $1" "$out" "$2" "${@:3}"; }
	refused() { # STEP ERE: not 0, and its stderr says why
		[ "$(step_rc "$out" "$1")" != 0 ] && err_has "$out" "$1" "$2"
	}
	cs "the gate is shut before: echo DEPLOY is denied" gate_before \
		bash -c "[ '$(step_rc "$out" gate_before)' = 126 ] && grep -q 'Run the tests first' <<<\"\$1\"" \
		_ "$(step_err "$out" gate_before)"
	notopen='fd 101 is not open in this script'
	badfd='101: Bad file descriptor: not open in this script'
	cs "cat F >/dev/fd/101 (three forged Records): refused" devfd refused devfd "$notopen"
	cs "… a forged DecideRequest the same way: refused" devfd_decide refused devfd_decide "$notopen"
	cs "printf of the bytes >/dev/fd/101: refused" printf refused printf "$notopen"
	cs "printf of the bytes >&101: refused" printf_decide refused printf_decide "$badfd"
	cs "/proc/self/fd/101: refused" procself refused procself "$notopen"
	cs ">&101: refused" dup refused dup "$badfd"
	cs "exec 7>&101: refused" exec7 refused exec7 "$badfd"
	cs "1<>/dev/fd/101: refused" rdwr refused rdwr "$notopen"
	cs "sh -c and a subshell: refused" nested refused nested "$badfd"
	# (the closed ones among 100-106 are a plain "Bad file descriptor", as any closed fd)
	cs "fds 100-106, both spellings: refused" every \
		bash -c "[ '$(step_rc "$out" every)' = 9 ] &&
			[ \"\$(grep -cE 'fd 10[0-6] is not open in this script' <<<\"\$1\")\" = 7 ] &&
			[ \"\$(grep -cE 'line 1: 10[0-6]: Bad file descriptor' <<<\"\$1\")\" = 7 ]" \
		_ "$(step_err "$out" every)"
	cs "/proc/\$\$/fd/101: no file there (a socket)" procpid refused procpid "/proc/[0-9]+/fd"
	cs "/dev//fd/101: no file there" slashes refused slashes "/dev//fd/101"
	cs "exec 101>&-: out of a script's range" target refused target "101: file descriptor out of range"
	cs "read -u 101: refused" read_u refused read_u "read: 101: invalid file descriptor"
	cs "the gate is still shut: echo DEPLOY is denied" gate_after \
		bash -c "[ '$(step_rc "$out" gate_after)' = 126 ] && grep -q 'Run the tests first' <<<\"\$1\"" \
		_ "$(step_err "$out" gate_after)"
	cs "the shell decides on (the script's own fd 5 works)" alive out_is "$out" alive still-decided

	S=$D/state/$name
	check "$u: decisions.jsonl: no forged net:connect" bash -c "! grep -q 'forged.example' '$S/decisions.jsonl'"
	check "$u: decisions.jsonl: no shell:spawn outcome" \
		bash -c "! grep -q '\"record\":\"response\",\"action\":\"shell:spawn\"' '$S/decisions.jsonl'"
	check "$u: decisions.jsonl: both denials of the deploy, by the gate" \
		test "$(grep -c '"rules":\["deploy_after_tests"\]' "$S/decisions.jsonl")" = 2
	check "$u: decisions.jsonl: the last command decided (permit)" has_decision "$S/decisions.jsonl" shell:exec permit echo
	check "$u: box-policyd dropped no channel and saw no protocol error" \
		bash -c "! grep -qE 'attached box-shell channel|Protocol error' '$err'"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
