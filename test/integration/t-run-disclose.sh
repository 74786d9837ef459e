#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-disclose.sh — what `boxctl run` resolves, refuses and says (docs/box.ini.5.md
# `command`, docs/boxctl.1.md exit codes and start-up disclosure), as root and as the
# ordinary user boxtest where it applies:
#  - a bare `command` name and `#!/usr/bin/env NAME` resolve on the box's PATH,
#    never the caller's (a shim first on the caller's PATH is not what runs),
#    and the disclosure says which file was chosen; `command = ~/…` works;
#  - a policy that does not load refuses `run` as `check` does (exit 2, before
#    any boxd); a program that does not exist says so; an OOM kill is named
#    with the limit (exit 137); a service socket that refuses us is named;
#    help exits 0; `log` of a box without decisions says so; the RLIMIT_NPROC
#    warning is what this kernel does (the box's processes only);
#  - the disclosure names the policy and its rule count, what decides
#    (box-gateway's and box-shell's actions), each [tool] with its program and
#    grants (box-shell serves it), a stdio [mcp] as box-mcpd's, [egress] as served, and each
#    grant's flags.
# In the box, python3 on PATH is box's alias (/run/box/bin first): the #! script
# runs through box-shell's [tool.python3].
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
mkdir proj shim
chmod 755 proj shim
echo hello >proj/a.txt
chmod 644 proj/a.txt
# A pyenv-like shim first on the caller's PATH: never what the box runs.
printf '#!/bin/sh\necho SHIM-RAN\n' >shim/python3
chmod 755 shim/python3
printf '#!/usr/bin/env python3\nimport sys\nprint("exe=" + sys.executable)\n' >proj/envpy
chmod 755 proj/envpy
box_python=$(env -i PATH=/usr/local/bin:/usr/bin:/bin sh -c 'command -v python3')

# t EXPR: check's command for a compound condition (evaluated here).
t() { eval "$1"; }

# mkini FILE NAME COMMAND [LINE...]: a box.ini with proj readable; LINEs go after [agent]'s keys
# ("box:KEY = V" into [box], "raw:TEXT" at the end).
mkini() {
	local file=$1 name=$2 cmd=$3
	shift 3
	{
		printf '[box]\nname = %s\n' "$name"
		for l in "$@"; do case $l in box:*) printf '%s\n' "${l#box:}" ;; esac; done
		printf '\n[agent]\ncommand = %s\nworkspace = %s/proj\n' "$cmd" "$W"
		for l in "$@"; do case $l in agent:*) printf '%s\n' "${l#agent:}" ;; esac; done
		printf '\n[agent.filesystem]\nread = %s/proj\n' "$W"
		for l in "$@"; do case $l in raw:*) printf '%b\n' "${l#raw:}" ;; esac; done
	} >"$file"
	chmod 644 "$file"
}

# runas WHO CMD...: run a boxctl command line as root (here) or as boxtest.
have_user=0
have_boxtest && have_user=1
runas() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		(eval "$*")
	else
		as_boxtest "$*"
	fi
}
users=(root)
[ "$(id -u)" -eq 0 ] || users=()
[ $have_user = 1 ] && users+=(boxtest)
if [ $have_user = 0 ]; then
	skip "as the ordinary user boxtest" "cannot create it (not root)"
fi

for u in "${users[@]}"; do
	p=f-$u # box names of this test, distinct from other tests'
	# --- item 11: the box's PATH, not the caller's ---
	mkini "$p-py.ini" "$p-py" "python3 -c 'import sys; print(\"exe=\" + sys.executable)'"
	out=$(runas "$u" "PATH='$W/shim:/usr/local/bin:/usr/bin:/bin' '$RB/boxctl' run -c $p-py.ini" 2>"$p.err")
	rc=$?
	check "$u: a bare name runs the box PATH's python3, not the caller's shim (rc $rc, $out)" \
		test "$rc" = 0 -a "$out" = "exe=$box_python"
	check "$u: disclosure: which file the bare name resolved to, on which PATH" \
		grep -qxF "box: agent: $box_python -c 'import sys; print(\"exe=\" + sys.executable)' (python3 resolved on PATH=/usr/local/bin:/usr/bin:/bin)" "$p.err"
	# box-shell decides the spawn (shell:spawn, fs:read of the program): a policy that permits.
	printf 'permit (principal, action, resource);\n' >"$p-py.cedar"
	chmod 644 "$p-py.cedar"
	mkini "$p-env.ini" "$p-env" "$W/proj/envpy" "box:policy = $p-py.cedar" \
		"raw:\n[tool.python3]\ncommand = /usr/bin/python3\n\n[tool.python3.filesystem]\nread = $W/proj"
	out=$(runas "$u" "PATH='$W/shim:/usr/local/bin:/usr/bin:/bin' '$RB/boxctl' run -q -c $p-env.ini" 2>"$p.err")
	rc=$?
	check "$u: #!/usr/bin/env python3 resolves on the box's PATH (rc $rc, $out)" \
		t '[ "$rc" = 0 ] && [ "${out#exe=/}" != "$out" ] && ! grep -q SHIM <<<"$out"'
	sed 's/^/#   /' "$p.err" | head -5
	mkini "$p-envpath.ini" "$p-envpath" "python3 -c 'print(1)'" "raw:\n[agent.env]\nPATH = $W/shim:/usr/bin:/bin"
	runas "$u" "'$RB/boxctl' check -c $p-envpath.ini" >/dev/null 2>"$p.err"
	check "$u: [agent.env] PATH resolves the bare name (here: the shim, a /bin/sh script, refused)" \
		grep -q "\[agent\] command: .*$W/shim/python3.* runs .*/bin/sh" "$p.err"
	home=$(getent passwd "$u" | cut -d: -f6)
	tool=$home/.box-test-F-tool-$$
	cp /bin/echo "$tool"
	chown "$u" "$tool"
	chmod 755 "$tool"
	mkini "$p-tilde.ini" "$p-tilde" "~/.box-test-F-tool-$$ tilde-ran"
	out=$(runas "$u" "'$RB/boxctl' run -c $p-tilde.ini" 2>"$p.err")
	rc=$?
	check "$u: command = ~/… runs the owner's file (rc $rc, $out)" test "$rc" = 0 -a "$out" = tilde-ran
	check "$u: disclosure: ~ expanded to the owner's passwd home" \
		grep -qE "^box: agent: $tool tilde-ran$" "$p.err"
	sed 's/^/#   /' "$p.err" | grep -v '^#   box:' | head -5
	rm -f "$tool"

	# --- item 12: exit codes and messages ---
	printf 'permit (principal, action, resource)\n' >"$p-bad.cedar" # no ';'
	chmod 644 "$p-bad.cedar"
	mkini "$p-badpol.ini" "$p-badpol" "/bin/true" "box:policy = $p-bad.cedar"
	runas "$u" "'$RB/boxctl' check -c $p-badpol.ini" >/dev/null 2>"$p.check"
	runas "$u" "'$RB/boxctl' run -c $p-badpol.ini" >/dev/null 2>"$p.err"
	rc=$?
	check "$u: run with a policy that does not load: exit 2 (rc $rc)" test "$rc" = 2
	check "$u: … with check's errors, FILE:LINE:COL: error: …" \
		grep -qE "^boxctl: .*$p-bad.cedar:[0-9]+:[0-9]+: error: " "$p.err"
	check "$u: … exactly as boxctl check prints them" cmp -s "$p.check" "$p.err"
	check "$u: … before any boxd is contacted or started" test "$(grep -c 'boxd' "$p.err")" = 0
	mkini "$p-missing.ini" "$p-missing" "$W/proj/no-such-agent --x"
	runas "$u" "'$RB/boxctl' run -c $p-missing.ini" >/dev/null 2>"$p.err"
	rc=$?
	sed 's/^/#   /' "$p.err" | head -3
	check "$u: a program that does not exist: exit 2, 'does not exist' (rc $rc)" \
		grep -qx "boxctl: $p-missing.ini:5: \[agent\] command: \"$W/proj/no-such-agent\" does not exist" "$p.err"
	check "$u: … exit 2" test "$rc" = 2
	# log of a box that decided nothing
	mkini "$p-nolog.ini" "$p-nolog" "/bin/true"
	runas "$u" "'$RB/boxctl' run -q -c $p-nolog.ini" >/dev/null 2>&1
	out=$(runas "$u" "'$RB/boxctl' log $p-nolog" 2>"$p.err")
	rc=$?
	check "$u: log of a box with no decisions: exit 0, nothing on stdout (rc $rc)" test "$rc" = 0 -a -z "$out"
	check "$u: … and a line saying so" \
		grep -qE "^boxctl: box $p-nolog has no decisions yet \(/.*/$p-nolog/decisions.jsonl is empty\)$" "$p.err"

	# --- item 13: what is decided, what is inactive, each grant's flags ---
	printf '@id("a")\npermit (principal, action, resource);\n@id("b")\nforbid (principal, action, resource);\n' \
		>"$p-two.cedar"
	chmod 644 "$p-two.cedar"
	mkdir -p "$W/proj/bin"
	cp /bin/true "$W/proj/bin/tool"
	chmod 755 "$W/proj/bin" "$W/proj/bin/tool"
	mkini "$p-dis.ini" "$p-dis" "/bin/cat a.txt" "box:policy = $p-two.cedar" \
		"raw:exec = $W/proj/bin/tool" \
		"raw:\n[tool.git]\ncommand = /bin/true\n\n[tool.git.filesystem]\nread = $W/proj" \
		"raw:\n[egress.gh]\ndestinations = api.github.com\nsecret = env://F_TEST_TOKEN" \
		"raw:\n[mcp.files]\ntype = stdio\ncommand = /bin/true"
	out=$(runas "$u" "F_TEST_TOKEN=x '$RB/boxctl' run -c $p-dis.ini" 2>"$p.err")
	rc=$?
	check "$u: disclosure box runs (rc $rc)" test "$rc" = 0 -a "$out" = hello
	check "$u: disclosure: the policy file and its rule count (box-policyd's)" \
		grep -qx "box: policy: $W/$p-two.cedar (2 rules)" "$p.err"
	check "$u: disclosure: what is decided by policy (box-gateway's and box-shell's actions)" \
		grep -qx "box: decided by policy: every connection and HTTP request (net:connect, http:request by box-gateway); every command run through the shell aliases (shell:exec, fs:\*, shell:spawn by box-shell); every start of and request to a stdio MCP server (shell:spawn, mcp:call by box-mcpd)" "$p.err"
	check "$u: disclosure: [tool.git] served by box-shell: its canonical program" \
		grep -qx "box: tool git: /usr/bin/true (after a shell:spawn permit, in its own sandbox)" "$p.err"
	check "$u: disclosure: [egress.gh] served by box-gateway (not inactive)" \
		bash -c "grep -qx 'box:   egress      api.github.com: header Authorization, for every sandbox (\[egress.gh\], in \\\$F_TEST_TOKEN)' '$p.err' && ! grep -q 'inactive: \[egress' '$p.err'"
	check "$u: disclosure: [mcp.files] served by box-mcpd (not inactive)" \
		bash -c "grep -qx 'box: mcp files: /run/box/bin/true runs /usr/bin/true (box-mcpd: after a shell:spawn permit, in its own sandbox; every request decided)' '$p.err' && ! grep -q 'inactive: \[mcp' '$p.err'"
	check "$u: disclosure: the tool's grant (exec-capable), its network, no inactive tool" \
		bash -c "grep -A1 -x 'box: tool git: .*' '$p.err' | grep -qx 'box:   read        $W/proj  (read-only, exec)' && grep -q '^box:   network     proxy 127.0.0.1:3128 (box-gateway, as tool.git)' '$p.err' && ! grep -q 'inactive: \[tool' '$p.err'"
	check "$u: disclosure: a read grant is read-only, noexec" \
		grep -qx "box:   read        $W/proj  (read-only, noexec)" "$p.err"
	check "$u: disclosure: an exec entry in a read grant is read-only, exec" \
		grep -qx "box:   exec        $W/proj/bin/tool  (read-only, exec)" "$p.err"
	check "$u: disclosure: the implicit exec of the program shows its flags" \
		grep -qE "^box:   exec        /usr/bin/cat  \(read-only, exec\)  \(implicit: the agent's program\)$" "$p.err"
	sed 's/^/#   /' "$p.err" | head -40
	mkini "$p-wr.ini" "$p-wr" "/bin/true" "raw:write = $W/proj/out"
	mkdir -p "$W/proj/out"
	chmod 777 "$W/proj/out"
	runas "$u" "'$RB/boxctl' run -c $p-wr.ini" >/dev/null 2>"$p.err"
	check "$u: disclosure: a write grant is read-write, noexec" \
		grep -qx "box:   write       $W/proj/out  (read-write, noexec)" "$p.err"
	check "$u: disclosure without a policy: 'policy: none (every decided action is denied)'" \
		grep -qx "box: policy: none (every decided action is denied)" "$p.err"
	runas "$u" "F_TEST_TOKEN=x '$RB/boxctl' run -q -c $p-dis.ini" >/dev/null 2>"$p.err"
	check "$u: -q: no policy, decided or inactive line (warnings only)" \
		test "$(grep -c '^box: ' "$p.err")" = "$(grep -c '^box: warning: ' "$p.err")"
done

# --- OOM (root: the cgroup v1/v2 memory controller) ---
if [ "$(id -u)" -eq 0 ]; then
	cat >proj/mem.py <<'EOF'
import sys
blocks = []
for i in range(int(sys.argv[1])):
    blocks.append(bytearray(8 << 20))
print("allocated", len(blocks) * 8, "MiB")
EOF
	mkini f-oom.ini f-oom "/usr/bin/python3 mem.py" "agent:memory_max = 100M"
	out=$("$RB/boxctl" run -q -c f-oom.ini -- 4 2>err)
	rc=$?
	check "oom: under the limit: exit 0, no OOM message (rc $rc)" \
		test "$rc" = 0 -a "$(grep -c 'out of memory' err)" = 0
	out=$("$RB/boxctl" run -q -c f-oom.ini -- 64 2>err)
	rc=$?
	check "oom: past memory_max: exit 137 (rc $rc)" test "$rc" = 137
	check "oom: 'box: the agent was killed: out of memory (memory_max = 100M)'" \
		grep -qx "box: the agent was killed: out of memory (memory_max = 100M)" err
	sed 's/^/#   /' err | head -5
else
	skip "oom: the agent killed by memory_max is named" "memory_max needs a root boxd on this host"
fi

# --- a service socket that refuses the caller (EACCES): say why it is not used ---
if [ $have_user = 1 ] && [ "$(id -u)" -eq 0 ]; then
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])' "$W/svc.sock"
	chmod 600 "$W/svc.sock"
	mkini f-eacces.ini f-eacces "/bin/true"
	su -s /bin/sh boxtest -c "cd '$W' && env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME BOX_SOCKET='$W/svc.sock' '$RB/boxctl' run -q -c f-eacces.ini" \
		>/dev/null 2>err
	rc=$?
	check "EACCES service socket: boxctl refuses to fall back silently: exit 1 (rc $rc)" test "$rc" = 1
	check "EACCES service socket: it says why and how (box-clients, --embedded), even with -q" \
		grep -qF "boxctl: error: the boxd service at $W/svc.sock refuses you (Permission denied): its socket is for the group box-clients. Join it (as root: usermod -aG box-clients boxtest; then log in again), or run a private boxd for this box with \`boxctl run --embedded\`" err
	su -s /bin/sh boxtest -c "cd '$W' && env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME BOX_SOCKET='$W/svc.sock' '$RB/boxctl' run --embedded -q -c f-eacces.ini" \
		>/dev/null 2>err
	rc=$?
	check "EACCES service socket: --embedded runs the box with a private boxd (rc $rc)" test "$rc" = 0
else
	skip "EACCES service socket" "needs root to make a socket boxtest cannot connect to"
fi

# --- RLIMIT_NPROC (boxtest): counts the box's processes, not the user's host processes ---
if [ $have_user = 1 ]; then
	cat >proj/fork.py <<'EOF'
import os, time
n = 0
try:
    for i in range(100):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
    print("forks", n)
except OSError as e:
    print("forks", n, "errno", e.errno)
EOF
	chmod 644 proj/fork.py
	mkini f-nproc.ini f-nproc "/usr/bin/python3 fork.py" "agent:pids_max = 20"
	# 30 processes of boxtest on the host, more than pids_max: the box still forks.
	cat >nproc.sh <<EOF
for i in \$(seq 30); do sleep 20 & done
'$RB/boxctl' run -c f-nproc.ini
kill \$(jobs -p) 2>/dev/null
EOF
	chmod 644 nproc.sh
	out=$(as_boxtest "sh $W/nproc.sh" 2>err)
	sed 's/^/#   /' err | grep -v '^#   box:  ' | head -8
	n=$(sed -n 's/^forks \([0-9]*\) errno 11$/\1/p' <<<"$out")
	check "RLIMIT_NPROC: 30 host processes of boxtest do not count; the box forks up to its limit ($out)" \
		t '[ -n "$n" ] && [ "$n" -ge 5 ] && [ "$n" -lt 20 ]'
	check "RLIMIT_NPROC: the warning says it counts the box's processes, not the host's" \
		grep -qx "box: warning: pids_max is enforced with RLIMIT_NPROC (no cgroup pids controller for this boxd), set in the box's user namespace: it counts the processes of boxtest inside the box, not those on the host" err
else
	skip "RLIMIT_NPROC warning" "no ordinary user boxtest"
fi

# --- help ---
out=$("$RB/boxctl" help 2>/dev/null)
rc=$?
check "boxctl help: exit 0 and the command list on stdout (rc $rc)" \
	t '[ "$rc" = 0 ] && grep -q "boxctl run" <<<"$out" && grep -q "boxctl policy" <<<"$out"'
"$RB/boxctl" --help >/dev/null 2>&1
check "boxctl --help: exit 0" test $? = 0
out=$("$RB/boxctl" policy --help 2>/dev/null)
rc=$?
check "boxctl policy --help: exit 0 and the usage on stdout (rc $rc)" \
	t '[ "$rc" = 0 ] && grep -q "^usage: boxctl policy check" <<<"$out"'
"$RB/boxctl" policy check --help >/dev/null 2>&1
check "boxctl policy check --help: exit 0" test $? = 0
"$RB/boxctl" policy bogus >/dev/null 2>&1
check "boxctl policy bogus: still a usage error (exit 2)" test $? = 2
tap_done
