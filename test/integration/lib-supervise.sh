# SPDX-License-Identifier: Apache-2.0
# lib-supervise.sh — shared parts of the supervised-program tests (t-supervise*.sh); source
# after test/lib.sh:
#   sup_fixture P POLICY    the project P the probes expect (test/integration/supervise-probe.py,
#                           supervise-agent.py/.js): p.txt, .env, w/keep.txt, ro/ (with a
#                           socket file ro/s.sock no one listens on and a datagram socket
#                           file ro/d.sock no one reads), ls/{a,b}, …
#                           and POLICY: permit all, but forbid fs:read of *.env and
#                           */secretdir/*, fs:write under */ro/, fs:move and fs:delete of
#                           */keep.txt
#   sup_box_ini NAME POLICY STEP [LINE...]
#                           $D/box.ini of box NAME (state under $D/state/NAME, 150 s): the
#                           agent (the caller's $W/agent.py) runs the steps of
#                           $D/steps/STEP in the workspace $P, which it may write, with
#                           $D/steps readable; each LINE one more [agent.filesystem] line
#   sup_decision FILE ACTION VERDICT PATH_SUFFIX [OPERATION]
#                           a decision line of source "supervisor" in FILE (decisions.jsonl)
# Trusts: nothing; test code.

sup_fixture() {
	local P=$1 pol=$2
	mkdir -p "$P/w" "$P/ro" "$P/sub" "$P/ls/a" "$P/secretdir" "$P/w/real"
	touch "$P/ls/b"
	echo proj-content >"$P/p.txt"
	echo SECRET-TOKEN >"$P/.env"
	echo keep >"$P/w/keep.txt"
	echo old-text >"$P/w/edit.txt"
	ln -s .env "$P/alias"
	echo fine >"$P/ro/f.txt"
	echo twelve-bytes >"$P/w/t.txt"
	echo SECRET-IN-DIR >"$P/secretdir/x"
	echo fine >"$P/w/real/x"
	ln -s ../secretdir "$P/w/link"
	# a socket file no one listens on (a connect the policy permits: ECONNREFUSED)
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$P/ro/s.sock"
	# and a datagram socket file no one reads (a datagram the policy permits: ECONNREFUSED)
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' \
		"$P/ro/d.sock"
	cat >"$pol" <<'EOF'
@id("all")
permit (principal, action, resource);

@id("no_env")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*.env" || context.input.path like "*/secretdir/*" };

@id("ro_dir")
forbid (principal, action == Box::Action::"fs:write", resource)
when { context.input.path like "*/ro/*" };

@id("keep_file")
forbid (principal, action in [Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
when { context.input.path like "*/keep.txt" };
EOF
}

sup_box_ini() {
	local name=$1 policy=$2 step=$3
	shift 3
	{
		printf '[box]\nname = %s\nstate_dir = %s/state/%s\npolicy = %s\ntimeout = 150s\n' \
			"$name" "$D" "$name" "$policy"
		printf '\n[agent]\ncommand = %s/agent.py %s/steps/%s\nworkspace = %s\n' "$W" "$D" "$step" "$P"
		printf '\n[agent.env]\n%s\n' "$(agent_env)"
		printf '\n[agent.filesystem]\nwrite = %s\nread = %s/steps\n' "$P" "$D"
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} >"$D/box.ini"
}

sup_decision() {
	python3 - "$@" <<'PY'
import json, sys
path, action, verdict, suffix = sys.argv[1:5]
op = sys.argv[5] if len(sys.argv) > 5 else None
for l in open(path).read().splitlines():
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("record") or d.get("source") != "supervisor":
        continue
    i = d.get("input", {})
    if d.get("action") == action and d.get("verdict") == verdict and \
            str(i.get("path", "")).endswith(suffix) and (op is None or i.get("operation") == op):
        sys.exit(0)
sys.exit(1)
PY
}
