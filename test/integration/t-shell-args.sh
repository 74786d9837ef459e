#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-args.sh — every argument form of docs/boxctl.1.md through the real alias in a real box (as the
# caller and as boxtest): `-c CMD [ARG0 [ARGS…]]`, combined short options before and after
# -c (`bash -lc`, `sh -ec`, `bash -c -e`), `-s`, SCRIPT ARGS, no operand with a pipe on stdin
# (= -s), -e -u -x -l -i -o pipefail --login --norc --noprofile --posix, --version and
# --help (box-shell's, saying so), anything else 125 with what it accepts; every name
# (`sh bash dash rbash` in /bin and /usr/bin, `zsh` in /run/box/bin, `/run/box/bin` first on
# PATH); python3 and python without a [tool.python3] (the host python3, supervised); exit statuses (N, 127, 128+N); the
# caller's cwd and environment (a reserved name filtered); the agent cannot reach a shell
# other than box-shell; then 200 concurrent `bash -c` invocations all complete with the right
# output, in bounded time.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built
boxtest_or_skip "argument forms as boxtest" || :

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-ar-$u
	mkdir -p "$P/sub" "$D/steps"
	echo content-a >"$P/a.txt"
	printf 'echo "script0=$0 one=$1 two=$2 n=$#"\n' >"$P/script.sh"
	printf 'permit (principal, action, resource);\n' >"$D/allow.cedar"
	cat >"$D/steps/args.py" <<'EOF'
[
 ("c_args", ["bash", "-c", "echo \"$0|$1|$2|$#\"", "zero", "one", "two"]),
 ("c_arg0_default", ["bash", "-c", "echo \"$0\""]),
 ("lc", ["bash", "-lc", "echo lc-ok"]),
 ("ec", ["sh", "-ec", "false; echo not-reached"]),
 ("c_e", ["bash", "-c", "-e", "false; echo not-reached"]),
 ("no_e", ["bash", "-c", "false; echo reached"]),
 ("s_args", ["bash", "-s", "p1", "p2"], {"stdin": "echo \"s:$1:$2:$#\"\n"}),
 ("stdin_script", ["bash"], {"stdin": "echo from-stdin; cat a.txt\n"}),
 ("script", ["bash", "script.sh", "x", "y z"]),
 ("u", ["bash", "-u", "-c", "echo $e2e_undefined_var; echo not-reached"]),
 ("x", ["bash", "-x", "-c", "echo traced"]),
 ("pipefail", ["bash", "-o", "pipefail", "-c", "false | true"]),
 ("no_pipefail", ["bash", "-c", "false | true"]),
 ("login", ["bash", "--login", "-c", "echo login-ok"]),
 ("norc", ["bash", "--norc", "--noprofile", "-c", "echo norc-ok"]),
 ("posix", ["bash", "--posix", "-c", "echo posix-ok"]),
 ("i", ["bash", "-i", "-c", "echo i-ok"]),
 ("combined", ["bash", "-eu", "-o", "pipefail", "-c", "echo combined-ok"]),
 ("version", ["bash", "--version"]),
 ("help", ["bash", "--help"]),
 ("bad_long", ["bash", "--rcfile", "/dev/null", "-c", "echo no"]),
 ("bad_short", ["bash", "-k", "-c", "echo no"]),
 ("bad_c", ["bash", "-c"]),
 ("bin_sh", ["/bin/sh", "-c", "echo \"$0 ok\""]),
 ("bin_bash", ["/bin/bash", "-c", "echo bin-bash-ok"]),
 ("usr_bin_bash", ["/usr/bin/bash", "-c", "echo usr-bin-bash-ok"]),
 ("bin_dash", ["/bin/dash", "-c", "echo bin-dash-ok"]),
 ("usr_bin_dash", ["/usr/bin/dash", "-c", "echo usr-bin-dash-ok"]),
 ("bin_rbash", ["/bin/rbash", "-c", "echo bin-rbash-ok"]),
 ("usr_bin_sh", ["/usr/bin/sh", "-c", "echo usr-bin-sh-ok"]),
 ("zsh", ["zsh", "-c", "echo zsh-ok"]),
 ("run_box_bin", ["/run/box/bin/bash", "-c", "echo run-box-bin-ok"]),
 ("path", ["/usr/bin/python3", "-c", "import os; print('PATH=' + os.environ['PATH'])"]),
 ("python3", ["python3", "-c", "print(1)"]),
 ("python3_in_shell", ["bash", "-c", "python3 -c 'print(1)'"]),
 ("python", ["python", "-c", "print(1)"]),
 ("exit7", ["bash", "-c", "exit 7"]),
 ("notfound", ["bash", "-c", "e2e-no-such-command"]),
 ("killed", ["bash", "-c", "kill -TERM $$; sleep 5"]),
 ("cwd", ["bash", "-c", "pwd; cat ../a.txt"], {"cwd": "sub"}),
 ("env", ["bash", "-c", "echo \"$E2E_VAR|${LD_PRELOAD-unset}|${BASH_ENV-unset}\""],
  {"env": {"E2E_VAR": "passed", "LD_PRELOAD": "/nonexistent.so", "BASH_ENV": "/nonexistent"}}),
 ("box_env", ["bash", "-c", "echo \"$BOX_NAME|$USER\""]),
 ("concurrent", ["bash", "-c", "echo \"n=$1\"; cat a.txt", "arg0"],
  {"kind": "concurrent", "n": 200, "expect": "n=%d\ncontent-a\n", "timeout": 120}),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = allow.cedar
timeout = 200s

[agent]
command = $W/agent.py $D/steps/args.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/allow.cedar"
	out=$D/args.out err=$D/args.err
	box_run "$u" "$out" "$err" -q -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	if [ "$rc" != 0 ]; then head -20 "$err" | sed 's/^/#   /'; fi

	cs() { check_step "$u: $1" "$out" "$2" "${@:3}"; }
	cs "-c CMD ARG0 ARGS: \$0 \$1 \$2 \$#" c_args out_is "$out" c_args "zero|one|two|2"
	cs "-c CMD: \$0 is the name invoked (bash)" c_arg0_default out_is "$out" c_arg0_default bash
	cs "bash -lc CMD" lc out_is "$out" lc lc-ok
	cs "sh -ec CMD: -e stops at false (status 1, nothing after)" ec \
		bash -c "[ '$(step_rc "$out" ec)' = 1 ] && [ -z '$(step_out "$out" ec)' ]"
	cs "bash -c -e CMD: an option after -c" c_e \
		bash -c "[ '$(step_rc "$out" c_e)' = 1 ] && [ -z '$(step_out "$out" c_e)' ]"
	cs "without -e the command goes on" no_e out_is "$out" no_e reached
	cs "-s ARGS: the script on stdin, ARGS as \$1 \$2" s_args out_is "$out" s_args "s:p1:p2:2"
	cs "no operand, stdin a pipe: read as -s" stdin_script out_is "$out" stdin_script \
		"$(printf 'from-stdin\ncontent-a')"
	cs "SCRIPT ARGS" script out_is "$out" script "script0=script.sh one=x two=y z n=2"
	cs "-u: an unset variable is an error" u \
		bash -c "[ '$(step_rc "$out" u)' != 0 ] && [ -z '$(step_out "$out" u)' ]"
	e=$(step_err "$out" u)
	cs "… saying 'unbound variable'" u grep -q "unbound variable" <<<"$e"
	cs "-x: the trace on stderr" x bash -c "[ '$(step_out "$out" x)' = traced ] && grep -q '^+ echo traced' <<<\"\$1\"" _ "$(step_err "$out" x)"
	cs "-o pipefail: false | true is 1" pipefail rc_is "$out" pipefail 1
	cs "without pipefail: 0" no_pipefail rc_is "$out" no_pipefail 0
	cs "--login" login out_is "$out" login login-ok
	cs "--norc --noprofile" norc out_is "$out" norc norc-ok
	cs "--posix" posix out_is "$out" posix posix-ok
	cs "-i with -c" i out_is "$out" i i-ok
	cs "-eu -o pipefail combined" combined out_is "$out" combined combined-ok
	cs "--version: exit 0, box-shell's" version \
		bash -c "[ '$(step_rc "$out" version)' = 0 ] && grep -qi 'box-shell' <<<\"\$1\"" _ "$(step_out "$out" version)"
	cs "--help: exit 0, box-shell's" help \
		bash -c "[ '$(step_rc "$out" help)' = 0 ] && grep -qi 'box-shell' <<<\"\$1\"" _ "$(step_out "$out" help)"
	for s in bad_long bad_short bad_c; do
		cs "$s: refused with 125" "$s" rc_is "$out" "$s" 125
		e=$(step_err "$out" "$s")
		cs "$s: … the message says what it accepts" "$s" grep -qE -- "-c|accept" <<<"$e"
		cs "$s: … and nothing ran" "$s" test -z "$(step_out "$out" "$s")"
	done
	cs "/bin/sh -c: \$0 is the name invoked" bin_sh out_has "$out" bin_sh "^(/bin/)?sh ok$"
	dj=$D/state/$name/decisions.jsonl
	for s in bin_bash usr_bin_bash bin_dash usr_bin_dash bin_rbash usr_bin_sh zsh run_box_bin; do
		w=$(echo "$s" | tr _ -)-ok
		cs "$s: runs (exit 0, '$w')" "$s" out_is "$out" "$s" "$w"
		check "$u: $s: … through box-shell (its decision 'echo $w')" has_command "$dj" "echo $w"
	done
	cs "PATH: /run/box/bin first" path out_has "$out" path "^PATH=/run/box/bin:"
	for s in python3 python3_in_shell python; do
		cs "$s without a [tool.python3]: the host python3 runs (supervised)" "$s" \
			rc_is "$out" "$s" 0
		cs "$s: … its output" "$s" out_is "$out" "$s" 1
	done
	cs "exit 7: status 7" exit7 rc_is "$out" exit7 7
	cs "command not found: 127" notfound rc_is "$out" notfound 127
	e=$(step_err "$out" notfound)
	cs "… 'e2e-no-such-command: command not found'" notfound grep -q "e2e-no-such-command: command not found" <<<"$e"
	cs "killed by SIGTERM: 143" killed rc_is "$out" killed 143
	cs "the caller's cwd" cwd out_is "$out" cwd "$(printf '%s\ncontent-a' "$P/sub")"
	cs "the caller's environment passes; LD_PRELOAD and BASH_ENV are filtered" env \
		out_is "$out" env "passed|unset|unset"
	cs "BOX_NAME and USER" box_env out_is "$out" box_env "$name|$u"
	n=$(step_kv "$out" concurrent concurrent_ok)
	t=$(step_kv "$out" concurrent concurrent_elapsed)
	cs "200 concurrent bash -c: every one right (${n:-?}, ${t:-?} s)" concurrent \
		test "${n:-}" = "200 of 200"
	cs "… in bounded time (< 60 s)" concurrent awk -v t="${t:-999}" 'BEGIN { exit !(t < 60) }'
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
