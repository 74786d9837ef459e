# SPDX-License-Identifier: Apache-2.0
# lib-harness.sh — a real coding-agent harness (pinned in test/harness/package-lock.json,
# installed by `make deps`) driven through one scripted session by a loopback mock of its
# model API (model-mock.py), in a box made by `boxctl init` and outside any box, as the
# caller and as the ordinary user boxtest. Sourced by t-harness-claude.sh, -codex.sh and
# -gemini.sh after they set:
#   AGENT          claude-code | codex | gemini (boxctl init --agent)
#   HARNESS_PKG    the npm package whose version the lock pins (@anthropic-ai/claude-code …)
#   MOCK_API       anthropic | openai | gemini (model-mock.py --api)
#   API_HOST       the model API's host; URL_PATH its base path ("" or /v1)
#   KEY_VAR        the variable the harness reads its key from; PLACEHOLDER_PREFIX box's
#   REFUSED_HOST   a host the init policy refuses (one of the harness's nonessential hosts)
#   SNAP_REL       the harness's shell-snapshot dir under its home ("" when it has none)
#   CA_VARS        the variables that make the harness trust the test CA outside the box
# and define harness_args WHERE MCP_COMMAND PROJECT (WHERE = in|out): print the harness's
# arguments for the session, one per line (the MCP server's command given), after writing
# any project file the harness reads its MCP servers from.
#
# For each user: a project (README, a .env, a git repository) under a directory no other
# user can write, as a user's project is (not below /tmp); `boxctl init --agent AGENT --api-url https://API_HOST:PORT/URL_PATH` with HOME at
# a scratch home (never the caller's own ~/.claude); the test's own additions (the test CA,
# a hosts file naming API_HOST 127.0.0.1, a resolver nothing answers, and an MCP server with
# a rule on its arguments) appended to box.ini and the policy; then `boxctl run` with the
# real key in KEY_VAR. The session (SESSION below): shell commands, one refused (recursive
# rm); a file read and one written; git as a tool (commit, log); a refused host (curl);
# the key variable (a placeholder inside); two MCP calls through box-mcpd, one refused on
# its arguments; a secret file refused. Checked: the mock saw only the real key and every
# step's result; the files and git history on disk; `boxctl log`'s decisions.
# Outside: the same session in a network namespace with only lo (`unshare -n`), /etc/hosts,
# bash and dash replaced in a private mount namespace: the shells by capture-shell.py, which
# records what the harness sends its shell; replay.py then runs each recording in that shell
# and in box-sh and compares (known-divergences lists what box-sh does not run alike yet). Both sessions are timed (`# time:` lines).
# Every packet stays on 127.0.0.0/8: the box's gateway refuses every host the policy does not
# permit before any DNS query, its resolver is a closed loopback port, and outside there is
# no network but lo.
# Trusts: nothing; test code.
. test/lib.sh
set -u
REPO=$(pwd)
H=$REPO/test/harness
HROOT=$("$H/where.sh")
HDIR=$HROOT/node_modules
REAL_KEY=box-test-real-key-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')

# The pinned harness must be installed: an absent or other version fails (never skips).
pinned=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["node_modules/"+sys.argv[2]]["version"])' \
	"$H/package-lock.json" "$HARNESS_PKG" 2>/dev/null)
have=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
	"$HDIR/$HARNESS_PKG/package.json" 2>/dev/null)
if [ -z "$pinned" ] || [ "$have" != "$pinned" ]; then
	not_ok "$AGENT: the pinned $HARNESS_PKG ${pinned:-?} is installed in $HROOT (found ${have:-none}): run 'make deps'"
	tap_done
	exit 1
fi
ok "$AGENT: the pinned $HARNESS_PKG $have is installed in $HROOT"

. test/integration/lib-run.sh
for p in box-mcpd box-shell box-sh; do
	if [ ! -x "$BOX_BIN/$p" ]; then
		not_ok "$p is built ($BOX_BIN/$p)"
		tap_done
		exit 1
	fi
	cp "$BOX_BIN/$p" "$RB/$p" && chmod 755 "$RB/$p"
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

users=$(id -un)
boxtest_or_skip "$AGENT as boxtest" && users="$users boxtest"

# The projects live where no other user can write, as a user's own do: root's under /var/lib,
# a user's under its own cache dir. Removed at exit with lib-run.sh's work dir.
if [ "$(id -u)" -eq 0 ]; then
	TB=$(mktemp -d /var/lib/box-test-harness.XXXXXX)
else
	mkdir -p "${XDG_CACHE_HOME:-$HOME/.cache}"
	TB=$(mktemp -d "${XDG_CACHE_HOME:-$HOME/.cache}/box-test-harness.XXXXXX")
fi
chmod 755 "$TB"
_harness_pids=()
harness_cleanup() {
	for p in "${_harness_pids[@]}"; do kill "$p" 2>/dev/null; done
	# BOX_HARNESS_KEEP=DIR keeps the projects and the recordings, to work on a divergence.
	[ -z "${BOX_HARNESS_KEEP:-}" ] || cp -a "$TB" "$BOX_HARNESS_KEEP/" || true
	rm -rf "$TB"
	run_cleanup
}
trap harness_cleanup EXIT

# The test CA and the names the gateway (in the box) and the harness (outside) resolve.
"$REPO/test/servers/mkca.sh" "$W/ca" "$API_HOST" >/dev/null || { not_ok "mkca.sh"; tap_done; exit 1; }
chmod 755 "$W/ca"
chmod 644 "$W/ca/server.key" # the mock runs as root; boxtest reads only ca.pem
printf '127.0.0.1 %s\n' "$API_HOST" >"$W/hosts"
printf '127.0.0.1 localhost\n::1 localhost\n127.0.0.1 %s\n' "$API_HOST" >"$W/hosts-outside"
cp "$REPO/examples/notes_server.py" "$W/notes_server.py"
printf 'permit (principal, action, resource);\n' >"$W/all.cedar"
mkdir -p "$W/realbash" && cp /usr/bin/bash /usr/bin/dash "$W/realbash/"
chmod 644 "$W/hosts" "$W/hosts-outside" "$W/notes_server.py" "$W/all.cedar"
chmod 755 "$W/realbash" "$W/realbash/bash" "$W/realbash/dash"

# start_mock SCRIPT LOG PORTFILE [LISTEN]: the mock of the model API, in the background.
start_mock() {
	rm -f "$3"
	python3 "$H/model-mock.py" --api "$MOCK_API" --script "$1" --key "$REAL_KEY" \
		--tls "$W/ca/server.pem" "$W/ca/server.key" --listen "${4:-127.0.0.1:0}" \
		--port-file "$3" --log "$2" 2>>"$2.err" &
	_harness_pids+=($!)
	MOCK_PID=$!
	for _ in $(seq 100); do [ -s "$3" ] && break; sleep 0.1; done
	[ -s "$3" ]
}

# write_script FILE PROJECT: the scripted session, its paths in PROJECT.
write_script() {
	python3 - "$1" "$2" "$KEY_VAR" "$REFUSED_HOST" <<'PY'
import json, sys
f, p, var, host = sys.argv[1:5]
steps = [
    {"tool": "shell", "command": "echo hello from the agent > note.txt && cat note.txt"},
    {"tool": "shell", "command": "rm -r scratch; ls -d scratch"},
    {"tool": "read", "path": p + "/README.md"},
    {"tool": "write", "path": p + "/out.txt", "content": "written by the agent\n"},
    {"tool": "shell", "command": "git add out.txt note.txt && git -c user.name=agent "
                                 "-c user.email=agent@box.test commit -qm 'agent work' && "
                                 "git log --format=%s | head -5"},
    {"tool": "shell", "command": "curl -sS -o /dev/null https://%s/ 2>&1; echo curl=$?" % host},
    {"tool": "shell", "command": "echo \"key=${%s}\"" % var},
    {"tool": "mcp", "server": "notes", "name": "read_note", "args": {"name": "todo"}},
    {"tool": "mcp", "server": "notes", "name": "read_note", "args": {"name": "secret"}},
    {"tool": "shell", "command": "cat .env; echo cat=$?"},
]
json.dump({"steps": steps, "final": "the scripted session is done"}, open(f, "w"))
PY
}

# make_project DIR U: the project a session starts from.
make_project() {
	mkdir -p "$1/scratch"
	printf '# readme of the harness test\n' >"$1/README.md"
	printf 'SECRET=never-read-this\n' >"$1/.env"
	printf 'keep\n' >"$1/scratch/keep.txt"
	printf '.env\nbox.ini\npolicy.cedar\ngemini-settings.json\n.gemini/\n' >"$1/.gitignore"
	chown -R "$2:" "$1"
	as_user "$2" "cd '$1' && git init -q && git add -A && git -c user.name=t -c user.email=t@box.test commit -qm init"
}

# judge WHERE U LOG RESULTS: the mock's log of one session; prints TAP lines, counted here.
judge_session() {
	local res
	res=$(python3 - "$@" "$REAL_KEY" "$PLACEHOLDER_PREFIX" "$AGENT" <<'PY'
import json, sys
where, u, logf, key, prefix, agent = sys.argv[1:7]
try:
    lines = [json.loads(l) for l in open(logf)]
except OSError:
    lines = []
def check(desc, cond):
    print(("ok - " if cond else "not ok - ") + "%s %s %s: %s" % (agent, where, u, desc))
main = [d for d in lines if d.get("main")]
check("every request to the model API carried the real key (%d requests)" % len(lines),
      lines and all(d.get("key_ok") for d in lines))
check("the harness took every step of the script (%d main-loop requests)" % len(main),
      len(main) == 11 and main[-1]["step"] == 10)
r = main[-1]["tool_results"] if main else []
r += [""] * (10 - len(r))
step = lambda i, desc, cond: check("step %d, %s (got %r)" % (i + 1, desc, r[i][:300]), cond)
step(0, "a shell command ran", "hello from the agent" in r[0])
if where == "in":
    step(1, "rm -r refused by the policy's rule no_recursive_rm", "no_recursive_rm" in r[1]
         and "scratch" in r[1])
else:
    step(1, "rm -r ran (no policy outside)", "No such file" in r[1] or "cannot access" in r[1])
step(2, "the harness read README.md", "readme of the harness test" in r[2])
step(4, "git ran as a tool: the commit is in the log", "agent work" in r[4] and "init" in r[4])
if where == "in":
    step(5, "the refused host: the gateway's 403 to curl", "403" in r[5] and "curl=" in r[5]
         and "curl=0" not in r[5])
    step(6, "the agent holds the placeholder, never the key",
         ("key=" + prefix) in r[6] and key not in r[6])
    step(8, "the MCP call refused on its arguments (read_note name=secret)",
         "test_no_secret_note" in r[8] and "the launch date" not in r[8])
    step(9, "the secret file refused by no_secret_files", "no_secret_files" in r[9]
         and "never-read-this" not in r[9])
else:
    step(5, "curl reached nothing (no network but lo)", "curl=0" not in r[5])
    step(6, "the harness has the key outside", ("key=" + key) in r[6])
    step(8, "the MCP call (no policy outside)", "the launch date" in r[8])
    step(9, "the secret file (no policy outside)", "never-read-this" in r[9])
step(7, "an MCP call through the notes server", "ship the MCP demo" in r[7])
PY
)
	echo "$res"
	_tap_pass=$((_tap_pass + $(grep -c '^ok' <<<"$res")))
	_tap_fail=$((_tap_fail + $(grep -c '^not ok' <<<"$res")))
}

# judge_log U JSONLOG: the box's decisions.
judge_log() {
	local res
	res=$(python3 - "$@" "$AGENT" "$REFUSED_HOST" "$API_HOST" <<'PY'
import json, sys
u, logf, agent, refused, api = sys.argv[1:6]
dec = [json.loads(l) for l in open(logf)]
dec = [d for d in dec if "verdict" in d]
def check(desc, cond):
    print(("ok - " if cond else "not ok - ") + "%s in %s: boxctl log: %s" % (agent, u, desc))
def has(**kw):
    return any(all(d.get(k) == v for k, v in kw.items()) for d in dec)
rules = lambda d: d.get("rules") or []
check("the recursive rm: deny shell:exec by no_recursive_rm (box-shell)",
      any(d["action"] == "shell:exec" and d["verdict"] == "deny" and "no_recursive_rm" in rules(d)
          and d.get("source") == "box-shell" for d in dec))
check("git ran as a tool: permit shell:spawn of git (box-shell)",
      any(d["action"] == "shell:spawn" and d["verdict"] == "permit" and
          d.get("input", {}).get("program") == "git" for d in dec))
check("the refused host: deny net:connect %s by nonessential_hosts (box-gateway)" % refused,
      any(d["action"] == "net:connect" and d["verdict"] == "deny" and
          d.get("input", {}).get("host") == refused and "nonessential_hosts" in rules(d) and
          d.get("source") == "box-gateway" for d in dec))
check("the model API: permit http:request to %s by model_api" % api,
      any(d["action"] == "http:request" and d["verdict"] == "permit" and
          d.get("input", {}).get("host") == api and "model_api" in rules(d) for d in dec))
check("the MCP server's start: permit shell:spawn (box-mcpd)",
      any(d["action"] == "shell:spawn" and d["verdict"] == "permit" and
          d.get("source") == "box-mcpd" for d in dec))
check("read_note(todo): permit, not refined", any(d["action"] == 'notes::Action::"read_note"'
      and d["verdict"] == "permit" and d.get("input") == {"name": "todo"} for d in dec))
check("read_note(secret): deny by test_no_secret_note (box-mcpd)",
      any(d["action"] == 'notes::Action::"read_note"' and d["verdict"] == "deny" and
          "test_no_secret_note" in rules(d) and d.get("source") == "box-mcpd" for d in dec))
check("the secret file: deny fs:read by no_secret_files",
      any(d["action"] == "fs:read" and d["verdict"] == "deny" and "no_secret_files" in rules(d)
          and d.get("input", {}).get("path", "").endswith("/.env") for d in dec))
PY
)
	echo "$res"
	_tap_pass=$((_tap_pass + $(grep -c '^ok' <<<"$res")))
	_tap_fail=$((_tap_fail + $(grep -c '^not ok' <<<"$res")))
}

now() { date +%s.%N; }
elapsed() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$2"; }
TIMES=""

# session_in U: the session in a box made by boxctl init.
session_in() {
	local u=$1 D=$TB/$1 P=$TB/$1/proj port name fails=$_tap_fail
	P=$D/proj
	mkdir -p "$D/home" "$D/capture"
	chown "$u:" "$D" "$D/home" "$D/capture"
	cp -a "$D/template" "$P"
	write_script "$D/script-in.json" "$P"
	start_mock "$D/script-in.json" "$D/mock-in.log" "$D/port" ||
		{ not_ok "$AGENT in $u: the mock of the model API started"; return; }
	port=$(cat "$D/port")
	local url="https://$API_HOST:$port$URL_PATH"
	AS_USER_DIR=$P
	as_user "$u" "HOME='$D/home' PATH='$HDIR/.bin:/usr/bin:/bin' '$RB/boxctl' init --agent $AGENT --api-url '$url'" \
		>"$D/init.out" 2>"$D/init.err"
	local rc=$?
	check "$AGENT in $u: boxctl init --agent $AGENT --api-url $url wrote box.ini and policy.cedar (rc $rc)" \
		test "$rc" = 0 -a -s "$P/box.ini" -a -s "$P/policy.cedar"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$D/init.err"
	check "$AGENT in $u: … it said what it chose: the harness, the hidden .env, the model API, what next" \
		bash -c "grep -q '^  hidden      $P/.env (secret)' '$D/init.out' && grep -q 'model API   $API_HOST:$port: your \\\$$KEY_VAR' '$D/init.out' && grep -q '^next:' '$D/init.out'"
	as_user "$u" "HOME='$D/home' PATH='$HDIR/.bin:/usr/bin:/bin' '$RB/boxctl' init --agent $AGENT" >"$D/init2.out" 2>&1
	rc=$?
	check "$AGENT in $u: … a second init refuses to write over them (rc $rc)" \
		bash -c "[ $rc = 1 ] && grep -q 'box.ini exists (--force writes over it)' '$D/init2.out'"
	as_user "$u" "$KEY_VAR='$REAL_KEY' '$RB/boxctl' check" >"$D/check.out" 2>&1
	rc=$?
	check "$AGENT in $u: … boxctl check passes on what init wrote (rc $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || sed 's/^/#   /' "$D/check.out" | tail -20

	# The test's additions: its CA, names and resolver; the MCP server and its rules.
	cat >>"$P/box.ini" <<EOF

; added by the harness test: the loopback mock of the model API and an MCP server
[gateway]
upstream_ca = $W/ca/ca.pem
hosts_file = $W/hosts
allow_host_loopback = true
resolver = 127.0.0.1:9

[mcp.notes]
type = stdio
command = /usr/bin/python3 $W/notes_server.py
alias = notes
[mcp.notes.filesystem]
read_file = $W/notes_server.py
EOF
	cat >>"$P/policy.cedar" <<'EOF'

// added by the harness test: its MCP server
@id("test_notes_server")
permit (principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "python3" && context.input has arg1 &&
       context.input.arg1 like "*/notes_server.py" };

@id("test_notes_calls")
permit (principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "notes" };

@id("test_no_secret_note")
@description("the secret note stays secret")
forbid (principal, action == notes::Action::"read_note", resource)
when { context.input.name == "secret" };
EOF
	name=$(sed -n 's/^name = //p' "$P/box.ini")
	{
		printf 'export %s=%q\n' "$KEY_VAR" "$REAL_KEY"
		printf 'exec timeout -k 5 300 %q run -q -c %q --' "$RB/boxctl" "$P/box.ini"
		harness_args in /run/box/bin/notes "$P" | while IFS= read -r a; do printf ' %q' "$a"; done
		printf '\n'
	} >"$D/run-in.sh"
	chown -R "$u:" "$P"
	local t0 t1
	t0=$(now)
	as_user "$u" "bash '$D/run-in.sh'" >"$D/out-in" 2>"$D/err-in"
	rc=$?
	t1=$(now)
	kill "$MOCK_PID" 2>/dev/null
	check "$AGENT in $u: the session ran in the box (rc $rc, $(elapsed "$t0" "$t1") s)" test "$rc" = 0
	check "$AGENT in $u: … no sanitizer report on the box's stderr" \
		bash -c "! grep -qE 'ERROR: AddressSanitizer|runtime error:' '$D/err-in'"
	if [ "$rc" != 0 ]; then
		sed 's/^/#   err: /' "$D/err-in" | tail -30
		sed 's/^/#   out: /' "$D/out-in" | tail -10
	fi
	judge_session in "$u" "$D/mock-in.log"
	check "$AGENT in $u: the files: note.txt and out.txt written, scratch kept, .env untouched" \
		bash -c "grep -qx 'hello from the agent' '$P/note.txt' && grep -qx 'written by the agent' '$P/out.txt' && [ -f '$P/scratch/keep.txt' ] && grep -qx 'SECRET=never-read-this' '$P/.env'"
	check "$AGENT in $u: git's history has the agent's commit" \
		test "$(as_user "$u" "git -C '$P' log --format=%s" | tr '\n' ,)" = "agent work,init,"
	as_user "$u" "'$RB/boxctl' log $name --json" >"$D/log.json" 2>"$D/log.err"
	rc=$?
	check "$AGENT in $u: boxctl log $name --json (rc $rc)" test "$rc" = 0 -a -s "$D/log.json"
	judge_log "$u" "$D/log.json"
	if [ "$_tap_fail" -gt "$fails" ]; then
		diag "the mock's last request:" && tail -1 "$D/mock-in.log" | cut -c1-3000 | sed 's/^/#   /'
		"$RB/boxctl" log "$name" 2>/dev/null | grep ' deny ' | head -30 | sed 's/^/#   log: /'
	fi
	TIMES="$TIMES $u:in=$(elapsed "$t0" "$t1")"
}

# session_out U: the same session outside any box, in a network namespace with only lo.
session_out() {
	local u=$1 D=$TB/$1 P=$TB/$1/outproj rc fails=$_tap_fail
	cp -a "$D/template" "$P"
	# what boxctl init wrote for the harness itself (Gemini CLI's project settings)
	[ -d "$D/proj/.gemini" ] && cp -a "$D/proj/.gemini" "$P/"
	write_script "$D/script-out.json" "$P"
	local port
	port=$(cat "$D/port")
	local sh
	for sh in bash dash; do
		sed -e "s|@CAPTURE@|$D/capture|" -e "s|@REAL@|$W/realbash/$sh|" \
			-e "s|@SNAP@|${SNAP_REL:+$D/home/$SNAP_REL}|" "$H/capture-shell.py" >"$D/capture-$sh.py"
		chmod 755 "$D/capture-$sh.py"
	done
	# The agent's environment and command as box.ini gives them, plus what box adds.
	local envs=() cmd=()
	mapfile -d '' envs < <(python3 "$H/boxini.py" "$D/proj/box.ini" env)
	mapfile -d '' cmd < <(python3 "$H/boxini.py" "$D/proj/box.ini" command)
	envs+=("PATH=/usr/bin:/bin" "HOME=$D/home" "USER=$u" "$KEY_VAR=$REAL_KEY")
	for v in $CA_VARS; do envs+=("$v=$W/ca/ca.pem"); done
	mapfile -t args < <(harness_args out "/usr/bin/python3 $W/notes_server.py" "$P")
	chown -R "$u:" "$P"
	local become=""
	[ "$u" != "$(id -un)" ] && become="setpriv --reuid=$u --regid=$u --init-groups --"
	{
		echo 'set -u'
		echo 'ip link set lo up || exit 1'
		printf 'mount --bind %q /etc/hosts || exit 1\n' "$W/hosts-outside"
		printf 'mount --bind %q /usr/bin/bash || exit 1\n' "$D/capture-bash.py"
		printf 'mount --bind %q /usr/bin/dash || exit 1\n' "$D/capture-dash.py"
		printf '/usr/bin/python3 %q --api %q --script %q --key %q --tls %q %q --listen 127.0.0.1:%s --port-file %q --log %q 2>%q &\n' \
			"$H/model-mock.py" "$MOCK_API" "$D/script-out.json" "$REAL_KEY" "$W/ca/server.pem" \
			"$W/ca/server.key" "$port" "$D/port-out" "$D/mock-out.log" "$D/mock-out.err"
		echo 'mock=$!'
		printf 'for _ in $(seq 100); do [ -s %q ] && break; sleep 0.1; done\n' "$D/port-out"
		echo 't0=$(date +%s.%N)'
		printf 'cd %q && %s timeout -k 5 300 env -i' "$P" "$become"
		for e in "${envs[@]}"; do printf ' %q' "$e"; done
		for a in "${cmd[@]}" "${args[@]}"; do printf ' %q' "$a"; done
		printf ' </dev/null >%q 2>%q\n' "$D/out-out" "$D/err-out"
		echo 'rc=$?'
		echo 't1=$(date +%s.%N)'
		printf 'echo "$rc $t0 $t1" >%q\n' "$D/out-rc"
		echo 'kill $mock'
		# The recordings, replayed in bash and box-sh (no network here either).
		printf 'umount /usr/bin/bash /usr/bin/dash\n'
		printf '%s env REPLAY_SNAP_DIR=%q /usr/bin/python3 %q %q %q %q %q %q %q %q\n' "$become" \
			"${SNAP_REL:+$D/home/$SNAP_REL}" "$H/replay.py" "$D/capture" "$W/realbash" \
			"$RB/box-sh" "$W/all.cedar" "$D/replay" "$D/template" "$AGENT $u"
	} >"$D/run-out.sh"
	mkdir -p "$D/replay" && chown "$u:" "$D/replay" "$D/capture"
	if [ "$(id -u)" -eq 0 ]; then
		unshare -n -m --propagation private bash "$D/run-out.sh" >"$D/replay.out" 2>"$D/replay.err"
	else
		unshare -r -n -m --propagation private bash "$D/run-out.sh" >"$D/replay.out" 2>"$D/replay.err"
	fi
	local t0 t1
	read -r rc t0 t1 <"$D/out-rc" 2>/dev/null || rc="none"
	check "$AGENT out $u: the session ran outside the box, network namespace with only lo (rc $rc, $(elapsed "${t0:-0}" "${t1:-0}") s)" \
		test "$rc" = 0
	if [ "$rc" != 0 ]; then
		sed 's/^/#   err: /' "$D/err-out" | tail -20
		sed 's/^/#   run: /' "$D/replay.err" | tail -10
	fi
	judge_session out "$u" "$D/mock-out.log"
	# replay.py's own TAP lines
	cat "$D/replay.out"
	_tap_pass=$((_tap_pass + $(grep -c '^ok' "$D/replay.out")))
	_tap_fail=$((_tap_fail + $(grep -c '^not ok' "$D/replay.out")))
	grep -q '^ok\|^not ok' "$D/replay.out" || { not_ok "$AGENT out $u: replay.py ran"; sed 's/^/#   /' "$D/replay.err" | tail -10; }
	[ "$_tap_fail" -gt "$fails" ] && tail -1 "$D/mock-out.log" | cut -c1-2000 | sed 's/^/#   mock: /'
	TIMES="$TIMES $u:out=$(elapsed "${t0:-0}" "${t1:-0}")"
}

harness_main() {
	for u in $users; do
		mkdir -p "$TB/$u"
		chown "$u:" "$TB/$u"
		make_project "$TB/$u/template" "$u"
		session_in "$u"
		session_out "$u"
	done
	diag "time: $AGENT session (s):$TIMES"
	tap_done
}
