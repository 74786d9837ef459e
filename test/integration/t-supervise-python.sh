#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise-python.sh — the python3/python aliases without a [tool.python3] run the host
# python3 supervised with the agent's grants (docs/sandbox.md, Supervised programs), in real
# boxes, as the caller and as boxtest: test/integration/supervise-probe.py through box's shell
# alias reads a permitted file but not the `.env` a forbid names, writes where the policy
# permits and not where it forbids (no file made), lists a directory (enumerate), renames with
# both legs decided (a refused leg leaves the file); `python` and `python3` run as aliases
# too; a python3 that is not the host's (a copy in the project) is still 126 with a message
# naming both; the disclosure says what the python aliases run. Each decision is a line of
# decisions.jsonl with source "supervisor". With exec entries holding the host python3 and
# /usr/bin/env, python3 (by name or path) still runs supervised and `env python3` (an exec
# entry's program starting it) is refused; with a [tool.python3] of another python, the host
# python3 under an exec entry is refused (126, boxd's message) and the table's runs.
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
boxtest_or_skip "the supervised python aliases as boxtest" || :
host_python=$(realpath /usr/bin/python3)

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-suppy-$u-$$
	mkdir -p "$D/steps" "$P/bin"
	sup_fixture "$P" "$D/sup.cedar"
	cp "$probe_src" "$D/probe.py"
	cp "$host_python" "$P/bin/python3" # a python3, but not the host's
	cat >"$D/steps/py.py" <<EOF
[
 ("probe", ["bash", "-c", "python3 $D/probe.py"]),
 ("alias_python", ["python", "-c", "print(open('p.txt').read().strip())"]),
 ("alias_python3_env", ["python3", "-c", "open('.env').read()"]),
 ("not_host", ["bash", "-c", "$P/bin/python3 -c 'print(1)'"]),
]
EOF
	sup_box_ini "$name" sup.cedar py.py "read = $D/probe.py"
	chown -R "$u:" "$D"
	chown -h "$u:" "$P/alias" "$P/w/link"
	chmod 644 "$D/box.ini" "$D/sup.cedar"
	out=$D/py.out err=$D/py.err
	box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	kv() { step_kv "$out" probe "$1"; }
	is() { # NAME KEY VALUE
		check_step "$u: $1 ($2=$(kv "$2"))" "$out" probe test "$(kv "$2")" = "$3"
	}
	check_step "$u: python3 without a [tool.python3] runs (exit 0)" "$out" probe rc_is "$out" probe 0
	is "reads a permitted file" read_permitted ok:proj-content
	is "refused .env (a forbid names it)" read_env error-EACCES
	is "… by its absolute path" read_env_abs error-EACCES
	is "… through a symlink" read_env_symlink error-EACCES
	is "… its metadata (stat)" stat_env error-EACCES
	is "writes where the policy permits" write_permitted ok
	is "… and reads it back" read_back ok:written
	is "a write the policy forbids: EACCES" write_refused error-EACCES
	is "… and no file is made" write_refused_exists ok:False
	is "os.listdir" listdir ok:a,b
	is "os.rename, both legs permitted" rename ok
	is "a rename whose source a forbid names: EACCES" rename_refused error-EACCES
	is "… the source stays" keep_still_there ok:keep
	is "a child it starts is supervised (refused .env)" child ok:rc1:True
	is "a tracee that made itself non-dumpable is refused" nondumpable error-EACCES
	check_step "$u: the python alias runs the host python3 too" "$out" alias_python \
		out_is "$out" alias_python proj-content
	check_step "$u: the python3 alias: .env refused (PermissionError, exit 1)" "$out" \
		alias_python3_env bash -c "[ '$(step_rc "$out" alias_python3_env)' = 1 ] && grep -q PermissionError <<<\"\$1\"" _ "$(step_err "$out" alias_python3_env)"
	check_step "$u: a python3 that is not the host's: 126" "$out" not_host rc_is "$out" not_host 126
	check_step "$u: … the message names it and the host python3" "$out" not_host \
		bash -c "grep -q 'is not the host python3 ($host_python)' <<<\"\$1\"" _ "$(step_err "$out" not_host)"
	check "$u: the secret never reached the output" bash -c "! grep -q SECRET '$out'"
	check "$u: the disclosure says what the python aliases run" \
		grep -qE "python +python3 and python \(no \[tool.python3\]\): the host python3" "$err"

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
	check "$u: nothing of the box is left (box-shell)" no_shell_left

	# An exec entry holding the host python3 (and /usr/bin/env): python3 still runs supervised,
	# typed by name or by path, and an exec entry's program cannot start it unsupervised.
	name=e2e-suppy-ex-$u-$$
	cat >"$D/steps/ex.py" <<EOF
[
 ("ex_python3", ["python3", "-c", "print(open('.env').read())"]),
 ("ex_path", ["bash", "-c", "$host_python -c 'print(open(\".env\").read())'"]),
 ("ex_permitted", ["python3", "-c", "print(open('p.txt').read().strip())"]),
 ("ex_env_python", ["bash", "-c", "/usr/bin/env python3 -c 'print(open(\".env\").read())'"]),
 ("ex_env_true", ["bash", "-c", "/usr/bin/env true && echo env-ran"]),
 ("ex_type", ["bash", "-c", "type python3"]),
]
EOF
	cat >"$D/box-ex.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = sup.cedar
timeout = 150s

[agent]
command = $W/agent.py $D/steps/ex.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
exec = $host_python
exec = /usr/bin/env
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box-ex.ini"
	out=$D/ex.out err=$D/ex.err
	box_run "$u" "$out" "$err" -c "$D/box-ex.ini"
	rc=$?
	check "$u: exec entries: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	refused() { # STEP: exit 1 with a PermissionError (the supervisor's EACCES)
		[ "$(step_rc "$out" "$1")" = 1 ] && step_err "$out" "$1" | grep -q PermissionError
	}
	check_step "$u: python3 under an exec entry runs supervised: .env refused (rc $(step_rc "$out" ex_python3))" \
		"$out" ex_python3 refused ex_python3
	check_step "$u: … run by its path too (rc $(step_rc "$out" ex_path))" "$out" ex_path refused ex_path
	check_step "$u: … and reads what the policy permits" "$out" ex_permitted \
		out_is "$out" ex_permitted proj-content
	check_step "$u: an exec entry's program (env) cannot start the host python3 (rc $(step_rc "$out" ex_env_python))" \
		"$out" ex_env_python test "$(step_rc "$out" ex_env_python)" = 126
	check_step "$u: … while env itself runs" "$out" ex_env_true out_is "$out" ex_env_true env-ran
	check_step "$u: type python3 says it runs supervised" "$out" ex_type \
		bash -c "grep -q 'the host python3, supervised' <<<\"\$1\"" _ "$(step_out "$out" ex_type)"
	check "$u: the secret never reached the output" bash -c "! grep -q SECRET '$out'"
	forget_default_state "$u" "$name"
	check "$u: decisions.jsonl: the refused .env (source supervisor)" \
		sup_decision "$D/state/$name/decisions.jsonl" fs:read deny /proj/.env read_content
	check "$u: nothing of the box is left (box-shell)" no_shell_left

	# A [tool.python3] of another python (the copy): the host python3 under an exec entry
	# is refused (boxd: it would run with the agent's grants unsupervised), the table runs.
	name=e2e-suppy-tb-$u-$$
	cat >"$D/steps/tb.py" <<EOF
[
 ("tb_host", ["bash", "-c", "$host_python -c 'print(open(\".env\").read())'"]),
 ("tb_table", ["bash", "-c", "$P/bin/python3 -c 'print(6*7)'"]),
]
EOF
	sed -e "s/^name = .*/name = $name/" -e "s|^state_dir = .*|state_dir = $D/state/$name|" \
		-e "s|steps/ex.py|steps/tb.py|" "$D/box-ex.ini" >"$D/box-tb.ini"
	printf '\n[tool.python3]\ncommand = %s\n[tool.python3.filesystem]\nread = %s\n' \
		"$P/bin/python3" "$P" >>"$D/box-tb.ini"
	chown -R "$u:" "$D"
	out=$D/tb.out err=$D/tb.err
	box_run "$u" "$out" "$err" -c "$D/box-tb.ini"
	rc=$?
	check "$u: [tool.python3] of another python: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	check_step "$u: … the host python3 under an exec entry is refused (126)" "$out" tb_host \
		rc_is "$out" tb_host 126
	check_step "$u: … boxd's message says why" "$out" tb_host \
		bash -c "grep -q 'is the host python3, which runs with the agent.s grants only supervised' <<<\"\$1\"" _ "$(step_err "$out" tb_host)"
	check_step "$u: … the table's python runs" "$out" tb_table out_is "$out" tb_table 42
	check "$u: the secret never reached the output" bash -c "! grep -q SECRET '$out'"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
