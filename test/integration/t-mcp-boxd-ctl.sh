#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-mcp-boxd-ctl.sh — boxd's side of box-mcpd's control channel alone, against a stand-in
# (box-test-mcpdfake installed as box-mcpd in the test's helper dir; real boxes through
# boxctl run, embedded boxd, as the caller and as boxtest):
#   - McpInit comes from boxd's own config: the stdio servers sorted by name, each with its
#     namespace, alias, canonical program (box-recheck's), configured argv, cwd (the agent's
#     workspace when the server's grants hold it, else the owner's home), max_frame and
#     call_timeout (defaults 4 MiB, 60 s, or as set), allow_tool_changes; an http server is
#     not in it; one fd, the pins file: a regular 0600 file of box-mcpd's uid, O_RDWR|O_APPEND;
#   - McpReady ok = false refuses the box with box-mcpd's message (exit 1);
#   - McpServerStart is re-checked: a server name that is no stdio [mcp] of the box is refused
#     (McpServerStarted ok = false naming it); a real one starts its configured program in its
#     own sandbox on the three fds box-mcpd passed (a line in, the same line out: /usr/bin/cat),
#     McpServerExit carries its status (0); McpServerStop kills it (status 137).
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u
cd "$W"

if [ ! -x "$BOX_BIN/box-test-mcpdfake" ] || [ ! -x "$BOX_BIN/box-shell" ]; then
	not_ok "box-test-mcpdfake and box-shell are built"
	tap_done
	exit 1
fi
cp "$BOX_BIN/box-test-mcpdfake" "$RB/box-mcpd"
cp "$BOX_BIN/box-shell" "$RB/box-shell"
chmod 755 "$RB/box-mcpd" "$RB/box-shell"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

users=$(id -un)
boxtest_or_skip "the control channel as boxtest" && users="$users boxtest"

# The agent waits (at most 30 s) until the stand-in has played its part.
cat >"$W/agent.py" <<'EOF'
import os, sys, time
for _ in range(300):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.1)
print("agent-done", os.path.exists(sys.argv[1]))
EOF
chmod 644 "$W/agent.py"

for u in $users; do
	D=$W/$u
	mkdir -p "$D/proj" "$D/rec" "$D/state"
	printf '@id("all")\npermit (principal, action, resource);\n' >"$D/pol.cedar"
	chown -R "$u:" "$D"
	chmod 755 "$D"
	chmod 777 "$D/rec"
	uid=$(id -u "$u")
	home=$(getent passwd "$u" | cut -d: -f6)
	cat >"$D/box.ini" <<EOF
[box]
name = c-mcpctl-$u-$$
policy = $D/pol.cedar
state_dir = $D/state/c-mcpctl-$u-$$

[agent]
command = /usr/bin/python3 $W/agent.py $D/rec/done
workspace = $D/proj

[agent.filesystem]
read_file = $W/agent.py
read = $D/rec
write = $D/proj

[mcp.zeta]
type = stdio
command = /usr/bin/cat
max_frame = 8K
call_timeout = 2s
allow_tool_changes = true

[mcp.alpha-1]
type = stdio
command = /usr/bin/python3 -u srv.py --flag
alias = al

[mcp.alpha-1.filesystem]
read = $D/proj

[mcp.web]
type = http
url = https://mcp.example.com/mcp
EOF
	chown "$u:" "$D/box.ini"

	# --- serve: McpInit, the re-check, a server on box-mcpd's fds, its exit, a stop ---
	# The stand-in says what it saw on its stderr (boxctl's): "done" when it played its part,
	# and then the agent is let go.
	as_user "$u" "BOX_TEST_MCPD_FAKE_MODE='serve zeta' timeout -k 5 120 '$RB/boxctl' run -q -c '$D/box.ini'" >"$D/out" 2>"$D/err" &
	bp=$!
	_run_pids+=("$bp")
	wait_for "$D/err" '^mcpdfake: done$'
	touch "$D/rec/done"
	wait "$bp"
	rc=$?
	sed -n 's/^mcpdfake: //p' "$D/err" >"$D/rec/init"
	cp "$D/rec/init" "$D/rec/log"
	check "$u: the box runs with the stand-in box-mcpd (rc $rc)" \
		test "$rc" = 0 -a "$(cat "$D/out")" = "agent-done True"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$D/err" | tail -8
	init=$D/rec/init log=$D/rec/log
	check "$u: McpInit: the box, the owner's home, two stdio servers (not the http one)" \
		bash -c "grep -qx 'box=c-mcpctl-$u-$$' '$init' && grep -qx 'home=$home' '$init' && grep -qx 'servers=2' '$init'"
	check "$u: … sorted by name, namespace and alias, the canonical program, cwd the workspace its grants hold" \
		bash -c "sed -n 4p '$init' | grep -qx 'server=alpha-1 ns=alpha_1 alias=al program=$(readlink -f /usr/bin/python3) cwd=$D/proj max_frame=4194304 call_timeout_ms=60000 allow=0'"
	check "$u: … the configured argv, argv[0] as written" \
		bash -c "grep -qx 'argv alpha-1 0=/usr/bin/python3' '$init' && grep -qx 'argv alpha-1 1=-u' '$init' && grep -qx 'argv alpha-1 2=srv.py' '$init' && grep -qx 'argv alpha-1 3=--flag' '$init'"
	check "$u: … zeta: alias its basename, cwd the home (no grant holds the workspace), max_frame, call_timeout, allow_tool_changes as set" \
		grep -qx "server=zeta ns=zeta alias=cat program=/usr/bin/cat cwd=$home max_frame=8192 call_timeout_ms=2000 allow=1" "$init"
	check "$u: … the pins fd: a regular 0600 file of box-mcpd's uid, O_RDWR|O_APPEND" \
		grep -qx "pins regular=1 uid=$uid mode=600 rdwr=1 append=1 me=$uid" "$init"
	check "$u: McpServerStart of a server the box does not have: refused by boxd's re-check" \
		grep -qx "started 1 ok=0 error=boxd refuses the start: this box has no stdio \[mcp.nosuch\]" "$log"
	check "$u: McpServerStart of zeta: started" grep -qx "started 2 ok=1 error=" "$log"
	check "$u: … its configured program ran on box-mcpd's fds (a line in, the same line out)" \
		grep -qx "output=through-the-server 19" "$log"
	check "$u: … McpServerExit with its status 0" grep -qx "exit 2 status=0" "$log"
	check "$u: McpServerStop kills the server: McpServerExit 137" \
		bash -c "grep -qx 'started 3 ok=1 error=' '$log' && grep -qx 'exit 3 status=137' '$log'"
	check "$u: … nothing unexpected on the channel" bash -c "! grep -q '^unexpected=' '$log'"

	# --- refuse: McpReady ok = false ---
	rm -f "$D/rec/"*
	as_user "$u" "BOX_TEST_MCPD_FAKE_MODE='refuse the pins file is unreadable (test)' timeout -k 5 120 '$RB/boxctl' run -q -c '$D/box.ini'" >"$D/out" 2>"$D/err"
	rc=$?
	check "$u: McpReady ok = false refuses the box: exit 1 (rc $rc)" test "$rc" = 1
	check "$u: … with box-mcpd's message" \
		grep -q "box-mcpd cannot serve the box: the pins file is unreadable (test)" "$D/err"
	check "$u: … and the agent never ran" test ! -s "$D/out"
done
tap_done
