# SPDX-License-Identifier: Apache-2.0
# lib-shell.sh — shared setup of the t-shell-*.sh tests: real boxes whose
# agent (test/integration/shell-agent.py, python3) drives box's shell alias, as the caller
# and, when the caller is root, as the ordinary user boxtest. Source after test/lib.sh and
# test/integration/lib-run.sh.
#
# Adds box-shell and box-alias to lib-run.sh's binary dir ($RB: boxd finds its helpers beside
# itself) and the agent as $W/agent.py, and provides:
#   agent_env               the lines of each box's [agent.env]
#   shell_users             the users to test as: the caller, then boxtest (root only)
#   user_dir U              $W/U, owned by U, mode 0755 (printed), with U's state/ in it
#                           (each box's state_dir is $W/U/state/NAME: nothing of an
#                           earlier run is read back)
#   box_run U OUT ERR ARGS  `boxctl run ARGS` as U in $W, under a timeout (exit status kept)
#   as_user U CMD           a shell command line as U in $W (lib-run.sh's)
#   step_rc OUT NAME        a step's exit status from the agent's output
#   step_out OUT NAME       its stdout; step_err OUT NAME its stderr
#   step_kv OUT NAME KEY    the value of KEY=… among its extra lines
#   state_of U BOX          the box's state dir (decisions.jsonl) for an embedded box of U
#   forget_default_state U BOX   remove an earlier run's state in BOX's default state dir
#   has_decision FILE ACTION VERDICT RESOURCE_SUFFIX [RULE]
#                           a decision line of source box-shell with that action and
#                           verdict whose resource ends in RESOURCE_SUFFIX (and RULE in rules)
#   has_command FILE TEXT   a box-shell shell:exec decision of the command line TEXT
#   shell_main_pids         the box-shell processes of $RB whose parent is no box-shell
# Trusts: nothing; test code.

SHELL_MISSING=
for p in box-shell box-alias; do
	if [ -x "$BOX_BIN/$p" ]; then
		cp "$BOX_BIN/$p" "$RB/$p" && chmod 755 "$RB/$p"
	else
		SHELL_MISSING="$SHELL_MISSING $p"
	fi
done
cp test/integration/shell-agent.py "$W/agent.py"
chmod 755 "$W/agent.py"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# shell_built: fail (one not ok line per missing binary) when box-shell or box-alias is absent.
shell_built() {
	[ -z "$SHELL_MISSING" ] && return 0
	for p in $SHELL_MISSING; do not_ok "$p is built ($BOX_BIN/$p)"; done
	return 1
}

# require_shell_built: shell_built, or the script ends there (its failures said).
require_shell_built() {
	shell_built && return 0
	tap_done
	exit 1
}

# agent_env: the [agent.env] lines every box here has. (In a sanitizer build boxd itself
# gives the agent ASAN_OPTIONS=detect_leaks=0: the ASan alias runs under the box's seccomp
# filter, where LeakSanitizer cannot work; setting it here too would be refused as twice.)
agent_env() {
	echo "E2E_BOX = 1"
}

# python_agent_ini FILE NAME STATE_DIR POLICY [KEY = VALUE ...]: a box.ini whose agent is
# `python3 $D/agent.py` in the workspace $P, reading $D and writing $P (the caller's D and
# P), with $(agent_env); each further argument is one more line of [box].
python_agent_ini() {
	local f=$1 name=$2 state=$3 policy=$4
	shift 4
	{
		printf '[box]\nname = %s\nstate_dir = %s\npolicy = %s\n' "$name" "$state" "$policy"
		[ $# -eq 0 ] || printf '%s\n' "$@"
		printf '\n[agent]\ncommand = /usr/bin/python3 %s/agent.py\nworkspace = %s\n' "$D" "$P"
		printf '\n[agent.env]\n%s\n' "$(agent_env)"
		printf '\n[agent.filesystem]\nread = %s\nwrite = %s\n' "$D" "$P"
	} >"$f"
}

shell_users() {
	id -un
	if [ "$(id -u)" -eq 0 ] && have_boxtest; then echo boxtest; fi
}

user_dir() {
	local d=$W/$1
	mkdir -p "$d/state"
	chown "$1:" "$d" "$d/state"
	chmod 755 "$d"
	echo "$d"
}

# box_run U OUT ERR ARGS...: every box of these tests ends in SHELL_BOX_TIMEOUT seconds (a
# hang is a failure, never a hung suite).
box_run() {
	local u=$1 out=$2 err=$3
	shift 3
	local q="" a
	for a in "$@"; do q="$q '${a//\'/\'\\\'\'}'"; done
	as_user "$u" "timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run $q" >"$out" 2>"$err"
}

step_rc() { sed -n "s/^@@ $2 rc=\\(.*\\)$/\\1/p" "$1" | head -1; }
step_out() { awk -v n="$2" '$0 == "@@ " n " stderr" {p = 0} p {print} index($0, "@@ " n " rc=") == 1 {p = 1}' "$1"; }
step_err() { awk -v n="$2" '$0 == "@@ " n " end" {p = 0} p {print} $0 == "@@ " n " stderr" {p = 1}' "$1"; }
step_kv() { step_out "$1" "$2" | sed -n "s/^$3=//p" | head -1; }

# show_step OUT NAME: the step as diagnostics (after a failed check).
show_step() {
	diag "step $2: rc=$(step_rc "$1" "$2")"
	step_out "$1" "$2" | head -20 | sed 's/^/#     out: /'
	step_err "$1" "$2" | head -20 | sed 's/^/#     err: /'
}

# check_step NAME OUT STEP CMD...: check, and show the step when it fails.
check_step() {
	local name=$1 out=$2 st=$3
	shift 3
	if "$@"; then ok "$name"; else not_ok "$name"; show_step "$out" "$st"; fi
}

state_of() {
	if [ "$1" = "$(id -un)" ]; then
		echo "$XDG_STATE_HOME/box/$2"
	else
		echo "$(getent passwd "$1" | cut -d: -f6)/.local/state/box/$2"
	fi
}

# forget_default_state U NAME: remove what an earlier run left in the box's default state
# dir (boxctl log looks there before ./box.ini's state_dir).
forget_default_state() { rm -rf "$(state_of "$1" "$2")"; }

has_decision() {
	python3 - "$@" <<'PY'
import json, sys
path, action, verdict, suffix = sys.argv[1:5]
rule = sys.argv[5] if len(sys.argv) > 5 else None
try:
    lines = open(path).read().splitlines()
except OSError:
    sys.exit(1)
for l in lines:
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("record") or d.get("source") != "box-shell":
        continue
    if d.get("action") != action or d.get("verdict") != verdict:
        continue
    if not str(d.get("resource", "")).endswith(suffix):
        continue
    if rule and rule not in d.get("rules", []):
        continue
    sys.exit(0)
sys.exit(1)
PY
}

# has_command FILE TEXT: a box-shell shell:exec decision whose input.command is TEXT.
has_command() {
	python3 - "$@" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    sys.exit(1)
for l in lines:
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if (not d.get("record") and d.get("source") == "box-shell" and
            d.get("action") == "shell:exec" and d.get("input", {}).get("command") == sys.argv[2]):
        sys.exit(0)
sys.exit(1)
PY
}

shell_main_pids() {
	local p pp
	for p in $(pgrep -x box-shell); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$RB/box-shell" ] || continue
		pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
		[ "$(ps -o comm= -p "${pp:-0}" 2>/dev/null)" = box-shell ] && continue
		echo "$p"
	done
}

# no_shell_left: no box-shell of this test's binaries runs (after a grace of up to 30 s, which
# only one that stays reaches; other tests' box-shells are other binaries).
no_shell_left() {
	local p
	for _ in $(seq 300); do
		p=
		for q in $(pgrep -x box-shell); do
			[ "$(readlink "/proc/$q/exe" 2>/dev/null)" = "$RB/box-shell" ] && p=$q
		done
		[ -z "$p" ] && return 0
		sleep 0.1
	done
	return 1
}

# out_is OUT STEP TEXT: the step's stdout is exactly TEXT. out_has OUT STEP ERE: a line matches.
# err_has OUT STEP ERE: a line of its stderr matches. rc_is OUT STEP N: its status is N.
out_is() { [ "$(step_out "$1" "$2")" = "$3" ]; }
out_has() { step_out "$1" "$2" | grep -qE -- "$3"; }
err_has() { step_err "$1" "$2" | grep -qE -- "$3"; }
rc_is() { [ "$(step_rc "$1" "$2")" = "$3" ]; }
