#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-init.sh — `boxctl init` on its own (the real harnesses run in boxes it made in
# test/harness/): it finds each harness as its installs lay it out (Claude Code's native
# install and npm's launcher or stub beside the platform package, Codex's npm launcher and
# platform package, Gemini CLI's bundle; fakes here, an ELF where a binary is), writes files
# that `boxctl check` loads for every agent, hides the project's secret files, refuses to
# write over its files without --force, refuses bad arguments with exit 2, and its policy
# decides as boxctl(1) says — a recursive rm, the secret names, the model API's paths, the
# push budget (`boxctl policy eval` with responses in the trace).
# Trusts: nothing; test code.
. test/lib.sh
set -u
BOXCTL=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/boxctl
W=$(mktemp -d /tmp/box-t-init.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
export HOME=$W/home
mkdir -p "$HOME"

# Fake installs: an ELF (a copy of true) where the harness has a binary.
NM=$W/npm/lib/node_modules
mkdir -p "$NM/@anthropic-ai/claude-code/bin" "$NM/@anthropic-ai/claude-code-linux-x64" \
	"$NM/@openai/codex/bin" "$NM/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin" \
	"$NM/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path" \
	"$NM/@google/gemini-cli/bundle" "$W/npm/bin" "$W/native/bin" "$W/native/versions"
printf 'echo "Error: claude native binary not installed." >&2\nexit 1\n' \
	>"$NM/@anthropic-ai/claude-code/bin/claude.exe"
cp /usr/bin/true "$NM/@anthropic-ai/claude-code-linux-x64/claude"
printf '#!/usr/bin/env node\n' >"$NM/@openai/codex/bin/codex.js"
cp /usr/bin/true "$NM/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
printf '#!/usr/bin/env node\n' >"$NM/@google/gemini-cli/bundle/gemini.js"
printf '{"name": "@google/gemini-cli"}\n' >"$NM/@google/gemini-cli/package.json"
chmod 755 "$NM/@anthropic-ai/claude-code/bin/claude.exe" "$NM/@openai/codex/bin/codex.js" \
	"$NM/@google/gemini-cli/bundle/gemini.js"
ln -s ../lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe "$W/npm/bin/claude"
ln -s ../lib/node_modules/@openai/codex/bin/codex.js "$W/npm/bin/codex"
ln -s ../lib/node_modules/@google/gemini-cli/bundle/gemini.js "$W/npm/bin/gemini"
cp /usr/bin/true "$W/native/versions/2.1.332"
ln -s ../versions/2.1.332 "$W/native/bin/claude"
CPLAT=$NM/@anthropic-ai/claude-code-linux-x64/claude
XTREE=$NM/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl

[ "$(uname -m)" = x86_64 ] || { skip "boxctl init's npm layouts" "the fakes are x86_64's"; tap_done; exit 0; }

# A project with secrets to hide, and some that are not the project's own.
P=$W/proj
mkdir -p "$P/src" "$P/node_modules/dep" "$P/.git" "$P/keys"
echo 'int main;' >"$P/src/a.c"
echo 'SECRET=1' >"$P/.env"
echo 'X=1' >"$P/.env.local"
echo k >"$P/keys/server.key"
echo p >"$P/keys/cert.pem"
echo 'registry=x' >"$P/.npmrc"
echo 'in a dependency' >"$P/node_modules/dep/.env"
echo 'in git' >"$P/.git/id_rsa"
echo linked >"$P/linked.pem"
ln "$P/linked.pem" "$W/linked-elsewhere.pem"

run_init() { PATH=$1 "$BOXCTL" init "${@:2}" >"$W/out" 2>"$W/err"; }

# ---- Claude Code: npm's stub (no install scripts) beside the platform package ----
run_init "$W/npm/bin:/usr/bin:/bin" --agent claude-code "$P"
check "claude-code: init through npm's stub writes box.ini and policy.cedar (rc $?)" \
	test -s "$P/box.ini" -a -s "$P/policy.cedar"
check "… the command is the platform package's native binary" \
	grep -qx "command = $CPLAT" "$P/box.ini"
check "… it is an exec entry too (grep, find, rg of its shell snapshot)" \
	grep -qx "exec = $CPLAT" "$P/box.ini"
check "… its state dir ~/.claude (under \$HOME) was made 0700 and granted, CLAUDE_CONFIG_DIR points there" \
	bash -c "[ \"\$(stat -c %a '$HOME/.claude')\" = 700 ] && grep -qx 'write = $HOME/.claude' '$P/box.ini' && grep -qx 'CLAUDE_CONFIG_DIR = $HOME/.claude' '$P/box.ini'"
check "… the model API: [egress.anthropic] from ANTHROPIC_API_KEY as x-api-key" \
	bash -c "grep -qx 'destinations = api.anthropic.com' '$P/box.ini' && grep -qx 'secret = env://ANTHROPIC_API_KEY' '$P/box.ini' && grep -qx 'header = x-api-key' '$P/box.ini'"
for f in .env .env.local keys/server.key keys/cert.pem .npmrc; do
	check "… $f is hidden (deny: in every sandbox of the box)" \
		test "$(grep -cx "deny = $P/$f" "$P/box.ini")" = 1
done
check "… a dependency's and git's files are not the project's secrets" \
	bash -c "! grep -q 'node_modules/dep/.env\|.git/id_rsa' '$P/box.ini'"
check "… a secret with two hard links is not masked (box.ini refuses that) and init says so" \
	bash -c "! grep -q 'linked.pem' '$P/box.ini' && grep -q 'warning     $P/linked.pem has several hard links' '$W/out'"
check "… git is a tool, named by its canonical program in the policy" \
	bash -c "grep -qx '\[tool.git\]' '$P/box.ini' && grep -q '\"$(readlink -f /usr/bin/git)\"' '$P/policy.cedar'"
check "… it said what it chose and what to do next" \
	bash -c "grep -q '^boxctl init: Claude Code: ' '$W/out' && grep -q '^  4. boxctl run -- -p' '$W/out'"
ANTHROPIC_API_KEY=k "$BOXCTL" check -c "$P/box.ini" >"$W/check" 2>&1
check "… boxctl check loads it (rc $?)" grep -q '^; policy: ' "$W/check"

run_init "$W/npm/bin:/usr/bin:/bin" --agent claude-code "$P"
rc=$?
check "claude-code: a second init refuses to write over box.ini and policy.cedar (exit 1)" \
	bash -c "[ $rc = 1 ] && grep -q 'box.ini exists (--force writes over it)' '$W/err' && grep -q 'policy.cedar exists' '$W/err'"
echo '; mine' >>"$P/box.ini"
run_init "$W/npm/bin:/usr/bin:/bin" --agent claude-code "$P"
check "… and leaves them as they were" grep -qx '; mine' "$P/box.ini"
run_init "$W/native/bin:/usr/bin:/bin" --agent claude-code --force "$P"
check "claude-code: --force writes over them; a native install's link resolves to its version's binary" \
	grep -qx "command = $W/native/versions/2.1.332" "$P/box.ini"
check "… and init shows the link it followed" \
	grep -q "^boxctl init: Claude Code: $W/native/bin/claude -> $W/native/versions/2.1.332" "$W/out"

# ---- Codex ----
rm -f "$P/box.ini" "$P/policy.cedar"
run_init "$W/npm/bin:/usr/bin:/bin" --agent codex "$P"
check "codex: the command is the native binary, never the node launcher" \
	grep -qx "command = $XTREE/bin/codex" "$P/box.ini"
check "… the provider and sandbox mode are -c overrides (never ~/.codex/config.toml)" \
	bash -c "grep -qx '    -c model_providers.box.base_url=https://api.openai.com/v1' '$P/box.ini' && grep -qx '    -c model_providers.box.wire_api=responses' '$P/box.ini' && grep -qx '    -c sandbox_mode=danger-full-access' '$P/box.ini' && [ ! -e '$HOME/.codex/config.toml' ]"
check "… its install tree is read and exec (its rg), its state ~/.codex, CODEX_HOME" \
	bash -c "grep -qx 'read = $XTREE' '$P/box.ini' && grep -qx 'exec = $XTREE' '$P/box.ini' && grep -qx 'CODEX_HOME = $HOME/.codex' '$P/box.ini'"
echo '{}' >"$HOME/.codex/auth.json"
rm -f "$P/box.ini" "$P/policy.cedar"
run_init "$W/npm/bin:/usr/bin:/bin" --agent codex --api-url https://api.openai.com:8443/v1 "$P"
check "codex: a ChatGPT login in ~/.codex/auth.json is hidden" \
	grep -qx "deny = $HOME/.codex/auth.json" "$P/box.ini"
check "codex: --api-url moves the provider, the [egress] destination and the policy" \
	bash -c "grep -qx '    -c model_providers.box.base_url=https://api.openai.com:8443/v1' '$P/box.ini' && grep -qx 'destinations = api.openai.com:8443' '$P/box.ini' && grep -q 'context.input.port == 8443' '$P/policy.cedar'"
OPENAI_API_KEY=k "$BOXCTL" check -c "$P/box.ini" >"$W/check" 2>&1
check "… boxctl check loads it (rc $?)" grep -q '^; policy: ' "$W/check"

# ---- Gemini CLI ----
rm -f "$P/box.ini" "$P/policy.cedar"
run_init "$W/npm/bin:/usr/bin:/bin" --agent gemini --api-url https://localhost.box.test:9443 "$P"
check "gemini: the command is the bundle, its package read, GEMINI_CLI_HOME and folder trust set" \
	bash -c "grep -qx 'command = $NM/@google/gemini-cli/bundle/gemini.js' '$P/box.ini' && grep -qx 'read = $NM/@google/gemini-cli' '$P/box.ini' && grep -qx 'GEMINI_CLI_HOME = $HOME' '$P/box.ini' && grep -qx 'GEMINI_CLI_TRUST_WORKSPACE = true' '$P/box.ini' && grep -qx 'GOOGLE_GEMINI_BASE_URL = https://localhost.box.test:9443' '$P/box.ini'"
check "… the project's .gemini/settings.json signs in with the API key" \
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["security"]["auth"]["selectedType"] != "gemini-api-key")' "$P/.gemini/settings.json"
echo '{"mine": true}' >"$P/.gemini/settings.json"
run_init "$W/npm/bin:/usr/bin:/bin" --agent gemini --force "$P"
check "… an existing .gemini/settings.json is never written over (--force or not), init says what to add" \
	bash -c "grep -qx '{\"mine\": true}' '$P/.gemini/settings.json' && grep -q 'selectedType' '$W/out'"
GEMINI_API_KEY=k "$BOXCTL" check -c "$P/box.ini" >"$W/check" 2>&1
check "… boxctl check loads it (rc $?)" grep -q '^; policy: ' "$W/check"

# ---- any agent, and no --agent ----
rm -f "$P/box.ini" "$P/policy.cedar"
run_init "/usr/bin:/bin" --agent generic "$P" -- python3 agent.py --fast "two words"
check "generic: the command is resolved on PATH, its arguments kept (quoted where needed)" \
	grep -qx "command = $(readlink -f /usr/bin/python3) agent.py --fast \"two words\"" "$P/box.ini"
check "… no model API, no [egress]: the policy says how to permit one" \
	bash -c "! grep -q 'egress' '$P/box.ini' && grep -q 'No model API is permitted' '$P/policy.cedar'"
"$BOXCTL" check -c "$P/box.ini" >"$W/check" 2>&1
check "… boxctl check loads it (rc $?)" grep -q '^; policy: ' "$W/check"
rm -f "$P/box.ini" "$P/policy.cedar"
(cd "$P" && PATH="$W/npm/bin:/usr/bin:/bin" "$BOXCTL" init >"$W/out" 2>&1)
check "no --agent: the first harness on PATH (claude), in the current directory" \
	bash -c "grep -q '^boxctl init: Claude Code' '$W/out' && [ -s '$P/box.ini' ]"

# ---- refusals ----
refuse() {
	local want=$1 msg=$2 desc=$3
	shift 3
	PATH="$W/npm/bin:/usr/bin:/bin" "$BOXCTL" init "$@" >"$W/out" 2>"$W/err"
	local rc=$?
	check "refused: $desc (exit $rc)" bash -c "[ $rc = $want ] && grep -qF -- \"$msg\" '$W/err'"
}
refuse 2 "unknown agent 'aider'" "an unknown agent" --agent aider "$P"
refuse 2 "needs the agent's command" "generic without a command" --agent generic "$P"
refuse 2 "a command after -- is for --agent generic" "a command for a harness" --agent codex "$P" -- x
refuse 2 "expected https://HOST[:PORT][/PATH]" "an http:// API URL" --agent codex --api-url http://x "$P"
refuse 2 "expected https://HOST[:PORT][/PATH]" "an upper-case API host" --agent codex --api-url https://API.x "$P"
refuse 1 "is your home" "the home as the project" --agent generic "$HOME" -- /usr/bin/true
refuse 1 "not a directory" "a file as the project" --agent generic "$P/src/a.c" -- /usr/bin/true
# What init writes passes `boxctl check`, or nothing is kept: a shell as the agent (which
# box's shell alias replaces inside the box) is refused with check's own message.
S=$W/shell-agent
mkdir -p "$S"
PATH=/usr/bin:/bin "$BOXCTL" init --agent generic "$S" -- /bin/sh -c 'echo hi' >"$W/out" 2>"$W/err"
rc=$?
check "refused: a shell as the agent (exit $rc): check's message, nothing kept" \
	bash -c "[ $rc = 1 ] && grep -q 'replaced by box.s shell alias' '$W/err' && grep -q 'would not pass .boxctl check.' '$W/err' && [ ! -e '$S/box.ini' ] && [ ! -e '$S/policy.cedar' ]"
PATH=/usr/bin:/bin "$BOXCTL" init --agent gemini --force "$P" >"$W/out" 2>"$W/err"
check "refused: a harness not on PATH (exit $?), naming --program" grep -q 'gemini not found on PATH.*--program PATH' "$W/err"

# ---- long paths: comment lines wrap; a key line too long is refused, nothing written ----
LW=$W/$(printf 'l%.0s' $(seq 90))
mkdir -p "$LW" "$LW/p"
cp -a "$W/npm" "$LW/npm"
PATH="$LW/npm/bin:/usr/bin:/bin" "$BOXCTL" init --agent claude-code "$LW/p" >/dev/null 2>&1
check "a long path: the launcher's comment wraps, no line over 199 bytes, and it loads" \
	bash -c "grep -q '^; whose launcher' '$LW/p/box.ini' && ! awk 'length > 199' '$LW/p/box.ini' | grep -q . && ANTHROPIC_API_KEY=k '$BOXCTL' check -c '$LW/p/box.ini' >/dev/null 2>&1"
L=$LW/$(printf 'b%.0s' $(seq 90))
mkdir -p "$L"
PATH="$W/npm/bin:/usr/bin:/bin" "$BOXCTL" init --agent claude-code "$L" >/dev/null 2>"$W/err"
rc=$?
check "a path too long for a box.ini line: refused (exit $rc), nothing written" \
	bash -c "[ $rc = 1 ] && grep -q 'box.ini would have a line of' '$W/err' && [ ! -e '$L/box.ini' ] && [ ! -e '$L/policy.cedar' ]"

# ---- the policy decides as boxctl(1) says ----
rm -f "$P/box.ini" "$P/policy.cedar"
run_init "$W/npm/bin:/usr/bin:/bin" --agent claude-code "$P"
rp=${P#"$HOME"}
cat >"$W/trace" <<EOF
{"action":"shell:exec","input":{"command":"rm -rf build","program":"rm","arg1":"-rf","arg2":"build","arg_count":2,"cwd":"$P"},"at":1000}
{"action":"shell:exec","input":{"command":"rm -f -R build","program":"rm","arg1":"-f","arg2":"-R","arg_count":3,"cwd":"$P"},"at":1001}
{"action":"shell:exec","input":{"command":"rm x --recursive","program":"rm","arg1":"x","arg2":"--recursive","arg_count":2,"cwd":"$P"},"at":1002}
{"action":"shell:exec","input":{"command":"rm --force my-report.txt","program":"rm","arg1":"--force","arg2":"my-report.txt","arg_count":2,"cwd":"$P"},"at":1003}
{"action":"shell:exec","input":{"command":"ls -la","program":"ls","arg1":"-la","arg_count":1,"cwd":"$P"},"at":1004}
{"action":"fs:read","input":{"path":"$P/.env.local","operation":"read_content"},"at":1005}
{"action":"fs:read","input":{"path":"$P/src/a.c","operation":"read_content"},"at":1006}
{"action":"fs:write","input":{"path":"$P/src/a.c","operation":"write_content"},"at":1007}
{"action":"fs:write","input":{"path":"/etc/passwd","operation":"write_content"},"at":1008}
{"action":"http:request","input":{"host":"api.anthropic.com","port":443,"method":"POST","path":"/v1/messages","body_bytes":10,"intercepted":true},"at":1009}
{"action":"http:request","input":{"host":"api.anthropic.com","port":443,"method":"POST","path":"/api/event_logging/batch","body_bytes":10,"intercepted":true},"at":1010}
{"action":"net:connect","input":{"host":"statsig.anthropic.com","port":443},"at":1011}
{"action":"shell:spawn","input":{"command":"git push","program":"git","arg1":"push","arg_count":1,"cwd":"$P","program_path":"$(readlink -f /usr/bin/git)"},"at":1100}
{"record":"response","action":"shell:spawn","input":{"command":"git push","program":"git","arg1":"push","arg_count":1,"cwd":"$P","program_path":"$(readlink -f /usr/bin/git)"},"output":{"status":0},"at":1101}
{"action":"shell:spawn","input":{"command":"git push","program":"git","arg1":"push","arg_count":1,"cwd":"$P","program_path":"$(readlink -f /usr/bin/git)"},"at":1200}
{"action":"shell:spawn","input":{"command":"git push","program":"git","arg1":"push","arg_count":1,"cwd":"$P","program_path":"$(readlink -f /usr/bin/git)"},"at":1800}
EOF
"$BOXCTL" policy eval "$P/policy.cedar" "$W/trace" >"$W/decided" 2>"$W/eval.err"
mapfile -t got < <(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d.get("verdict", "error") + " " + ",".join(d.get("rules", [])))' "$W/decided")
want=("deny no_recursive_rm" "deny no_recursive_rm" "deny no_recursive_rm" "permit everyday_commands"
	"permit everyday_commands" "deny no_secret_files" "permit read_files" "permit write_files"
	"deny " "permit model_api" "deny model_api_calls_only" "deny nonessential_hosts"
	"permit host_tools" "deny one_push_per_10m" "permit host_tools")
what=("rm -rf" "rm -f -R" "rm x --recursive" "rm --force (not recursive)" "ls" "reading .env.local"
	"reading a source file" "writing in the project" "writing /etc/passwd" "the model call"
	"the API host's telemetry path" "a nonessential host" "a first git push"
	"a push 100 s after one that ran" "a push 11 minutes later")
for i in "${!want[@]}"; do
	check "policy: ${what[$i]}: ${want[$i]:-deny (no rule)}" test "${got[$i]:-}" = "${want[$i]}"
done
[ "$_tap_fail" -gt 0 ] && sed 's/^/#   /' "$W/decided" "$W/eval.err" | head -40
tap_done
