#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise-agent.sh — a supervised agent ([agent] supervise = fs, box-trampoline/supervise.c)
# in real boxes, as the caller and as boxtest: a python agent (test/integration/
# supervise-agent.py) and a node agent (supervise-agent.js) whose grants hold the whole
# project read what the policy permits and not the `.env` a forbid names, write where it
# permits and not where it forbids (no file made), list a directory (enumerate), rename (both
# legs decided) and are refused a delete a forbid names; the python agent's command through
# box's shell alias still runs. The harness's own operations are lines of decisions.jsonl
# with source "supervisor", shown by `boxctl log`; the disclosure says the agent is supervised.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-supervise.sh
set -u
trap run_cleanup EXIT
SRC=$PWD
cd "$W"

require_shell_built
boxtest_or_skip "supervised agents as boxtest" || :
have_node=1
if ! command -v node >/dev/null 2>&1; then
	have_node=
	skip "a supervised node agent" "node is not installed"
fi

for u in $(shell_users); do
	D=$(user_dir "$u")
	cp "$SRC/test/integration/supervise-agent.py" "$SRC/test/integration/supervise-agent.js" "$D/"
	for kind in py js; do
		[ "$kind" = js ] && [ -z "$have_node" ] && continue
		P=$D/proj-$kind
		name=e2e-supagent-$kind-$u-$$
		sup_fixture "$P" "$D/sup.cedar"
		if [ "$kind" = py ]; then
			cmd="/usr/bin/python3 $D/supervise-agent.py"
		else
			cmd="$(command -v node) $D/supervise-agent.js"
		fi
		C=$D/cfg-$kind # boxctl log NAME reads ./box.ini's state_dir
		mkdir -p "$C"
		cp "$D/sup.cedar" "$C/"
		cat >"$C/box.ini" <<EOF2
[box]
name = $name
state_dir = $D/state/$name
policy = sup.cedar
timeout = 150s

[agent]
command = $cmd
workspace = $P
supervise = fs

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read_file = $D/supervise-agent.$kind
EOF2
		chown -R "$u:" "$D"
		chmod 644 "$C/box.ini" "$C/sup.cedar"
		out=$D/$kind.out err=$D/$kind.err
		box_run "$u" "$out" "$err" -c "$C/box.ini"
		rc=$?
		check "$u $kind: the supervised agent runs to its end (rc $rc)" test "$rc" = 0
		if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
		kv() { sed -n "s/^$1=//p" "$out" | head -1; }
		is() { # NAME KEY VALUE
			if [ "$(kv "$2")" = "$3" ]; then ok "$u $kind: $1"; else
				not_ok "$u $kind: $1 ($2=$(kv "$2"), expected $3)"
			fi
		}
		is "reads a permitted file" read_permitted ok:proj-content
		if [ "$kind" = py ]; then
			is "refused .env (a forbid names it)" read_env error-EACCES
			is "… its metadata (stat)" stat_env error-EACCES
			is "writes where the policy permits" write_permitted ok
			is "… and reads it back" read_back ok:written
			is "an Edit (read, change, write back)" edit ok:new-text
			is "a write the policy forbids: EACCES" write_refused error-EACCES
			is "… and no file is made" write_refused_exists ok:False
			is "os.listdir" listdir ok:a,b
			is "os.rename, both legs permitted" rename ok
			is "a delete a forbid names: EACCES" unlink_refused error-EACCES
			is "… the file stays" keep_still_there ok:keep
			is "a command through box's shell alias still runs" shell rc0:proj-content
		else
			is "refused .env (a forbid names it)" read_env error-EACCES
			is "writes where the policy permits" write_permitted ok
			is "… and reads it back" read_back ok:node-written
			is "a write the policy forbids: EACCES" write_refused error-EACCES
			is "fs.readdirSync" listdir ok:a,b
			is "an asynchronous read (libuv's thread pool) of .env is refused" \
				async_read_env error-EACCES
		fi
		check "$u $kind: the secret never reached the output" bash -c "! grep -q SECRET '$out'"
		check "$u $kind: the disclosure says the agent is supervised" \
			grep -qE "supervise +fs: each file system call of the agent itself" "$err"

		dec=$D/state/$name/decisions.jsonl
		check "$u $kind: decisions.jsonl: the agent's permitted read (source supervisor)" \
			sup_decision "$dec" fs:read permit "/proj-$kind/p.txt" read_content
		check "$u $kind: … the refused .env" sup_decision "$dec" fs:read deny "/proj-$kind/.env" read_content
		check "$u $kind: … the refused write" sup_decision "$dec" fs:write deny \
			"/proj-$kind/ro/$([ "$kind" = py ] && echo x.txt || echo node.txt)" write_content
		check "$u $kind: … the listing as enumerate" sup_decision "$dec" fs:read permit "/proj-$kind/ls" enumerate
		if [ "$kind" = py ]; then
			check "$u $kind: … the permitted write" \
				sup_decision "$dec" fs:write permit "/proj-$kind/w/agent-out.txt" write_content
			check "$u $kind: … rename: fs:move of the source" \
				sup_decision "$dec" fs:move permit "/proj-$kind/w/agent-out.txt" rename
			check "$u $kind: … fs:move of the target" \
				sup_decision "$dec" fs:move permit "/proj-$kind/w/agent-moved.txt" rename
			check "$u $kind: … the refused delete" \
				sup_decision "$dec" fs:delete deny "/proj-$kind/w/keep.txt" remove_file
		else
			check "$u $kind: … the permitted write" \
				sup_decision "$dec" fs:write permit "/proj-$kind/w/node-out.txt" write_content
		fi
		forget_default_state "$u" "$name"
		as_user "$u" "cd '$C' && '$RB/boxctl' log $name --source supervisor" >"$D/log-$kind" 2>&1
		check "$u $kind: boxctl log --source supervisor shows the agent's refused .env" \
			grep -qE "deny +fs:read +.*/proj-$kind/\.env" "$D/log-$kind"
		check "$u $kind: … and its permitted read" grep -qE "permit +fs:read +.*/proj-$kind/p\.txt" "$D/log-$kind"
	done
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
