#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-tool.sh — what a tool sandbox reaches, in real boxes (as the caller and as boxtest):
# a [tool.python3] whose table grants only its own directory reads that and the shell's cwd
# it was given, but not a directory only the agent's grants hold (box-shell itself reads it,
# so the grant is real); it has no shell socket and no alias (its /bin/sh is not box-shell's);
# its environment is its [tool.python3.env] + proxy variables, not the agent's; it has no
# network but the gateway: a direct connection to a host loopback server and to an outside
# address fail, an HTTPS request through HTTPS_PROXY (the box CA) reaches the loopback
# server, decided by policy (permitted and denied requests in `boxctl log`).
# Trusts: nothing; test code. Packets only to 127.0.0.1 (and one connect attempt to
# 192.0.2.1, TEST-NET-1, from inside the tool's own network namespace, which has no route).
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT
cd "$W"

require_shell_built
boxtest_or_skip "tool sandboxes as boxtest" || :
make_ca ok.e2e.test no.e2e.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
start_httpd --tls || { not_ok "httpd.py --tls starts"; tap_done; exit 1; }
port=$HTTPD_PORT
printf '127.0.0.1 ok.e2e.test no.e2e.test\n' >"$W/hosts"
cp "$SRV_CA" "$W/upstream-ca.pem"
chmod 644 "$W/hosts" "$W/upstream-ca.pem"

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-tl-$u
	mkdir -p "$P" "$D/tools" "$D/agent-only" "$D/steps"
	echo tool-own-content >"$D/tools/own.txt"
	echo agent-only-content >"$D/agent-only/secret.txt"
	echo proj-content >"$P/p.txt"
	cat >"$D/tools/probe.py" <<'EOF'
import errno, os, socket, ssl, subprocess, sys, urllib.error, urllib.request
port = int(sys.argv[1])
here = os.path.dirname(os.path.abspath(__file__))
def read(p):
    try:
        return open(p).read().strip()
    except OSError as e:
        return "error-" + errno.errorcode.get(e.errno, str(e.errno))
print("own=" + read(os.path.join(here, "own.txt")))
print("cwd=" + os.getcwd())
print("proj=" + read("p.txt"))
print("agent_only=" + read(sys.argv[2]))
print("shell_sock=" + ("present" if os.path.exists("/run/box/shell.sock") else "absent"))
print("run_box_bin=" + ("present" if os.path.exists("/run/box/bin") else "absent"))
try:
    r = subprocess.run(["/bin/sh", "-c", "echo real-sh-$((1+1))"], capture_output=True, timeout=10)
    print("bin_sh=%d:%s" % (r.returncode, r.stdout.decode().strip()))
except Exception as e:
    print("bin_sh=error-%s" % e)
print("env_agent=" + os.environ.get("E2E_AGENT_ENV", "absent"))
print("env_tool=" + os.environ.get("E2E_TOOL_ENV", "absent"))
print("proxy=" + os.environ.get("HTTPS_PROXY", "absent"))
print("ca=" + os.environ.get("SSL_CERT_FILE", "absent") + ":" +
      ("readable" if os.access(os.environ.get("SSL_CERT_FILE", "/nonexistent"), os.R_OK) else "unreadable"))
for host in ("127.0.0.1", "192.0.2.1"):
    try:
        s = socket.create_connection((host, port), timeout=3)
        s.close()
        print("direct_%s=connected" % host)
    except OSError as e:
        print("direct_%s=error-%s" % (host, errno.errorcode.get(e.errno, str(e.errno)) if e.errno else "timeout"))
for what in ("ok", "no"):
    url = "https://%s.e2e.test:%d/echo?from=tool-%s-%s" % (what, port, what, sys.argv[3])
    try:
        with urllib.request.urlopen(url, timeout=20) as f:
            print("proxied_%s=%d" % (what, f.status))
    except urllib.error.HTTPError as e:
        print("proxied_%s=%d" % (what, e.code))
    except Exception as e:
        print("proxied_%s=error-%s" % (what, type(e).__name__))
        print("# proxied_%s: %s" % (what, e))
EOF
	cat >"$D/tl.cedar" <<'EOF'
@id("shell_all")
permit (principal, action, resource)
when { action != Box::Action::"net:connect" && action != Box::Action::"http:request" };

@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.e2e.test" };

@id("ok_get")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.e2e.test" && context.input.method == "GET" };
EOF
	cat >"$D/steps/tool.py" <<EOF
[
 ("agent_reads", ["bash", "-c", "cat $D/agent-only/secret.txt"]),
 ("probe", ["bash", "-c", "python3 $D/tools/probe.py $port $D/agent-only/secret.txt $u"],
  {"env": {"E2E_AGENT_ENV": "leaked"}}),
 ("probe_cat", ["bash", "-c", "python3 -c 'print(open(\"$D/agent-only/secret.txt\").read())'"]),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = tl.cedar
timeout = 150s

[agent]
command = $W/agent.py $D/steps/tool.py
workspace = $P

[agent.env]
$(agent_env)
E2E_AGENT_ENV = agent-value

[agent.filesystem]
write = $P
read = $D/agent-only
read = $D/steps

[tool.python3]
command = /usr/bin/python3
[tool.python3.env]
E2E_TOOL_ENV = tool-value
[tool.python3.filesystem]
read = $D/tools
read = $P

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/tl.cedar"
	out=$D/tool.out err=$D/tool.err
	box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	check "$u: disclosure: [tool.python3] with its grants" grep -qE "^box: .*tool\.python3" "$err"

	check_step "$u: the agent (through box-shell) reads its agent-only grant" "$out" agent_reads \
		out_is "$out" agent_reads agent-only-content
	kv() { step_kv "$out" probe "$1"; }
	check_step "$u: the tool ran (exit 0)" "$out" probe rc_is "$out" probe 0
	check_step "$u: the tool reads its own grant" "$out" probe test "$(kv own)" = tool-own-content
	check_step "$u: … runs in the shell's cwd, which its grants contain ($P)" "$out" probe test "$(kv cwd)" = "$P"
	check_step "$u: … reads the project it was granted" "$out" probe test "$(kv proj)" = proj-content
	check_step "$u: … cannot read the agent's grant its table lacks ($(kv agent_only))" "$out" probe \
		bash -c "case '$(kv agent_only)' in error-ENOENT|error-EACCES|error-EPERM) exit 0;; *) exit 1;; esac"
	check_step "$u: … nor through another program (python3 -c open())" "$out" probe_cat \
		bash -c "[ '$(step_rc "$out" probe_cat)' != 0 ] && ! grep -q agent-only-content <<<\"\$1\"" _ "$(step_out "$out" probe_cat)"
	check_step "$u: … has no shell socket" "$out" probe test "$(kv shell_sock)" = absent
	check_step "$u: … has no /run/box/bin" "$out" probe test "$(kv run_box_bin)" = absent
	check_step "$u: … its /bin/sh is the system's, not the alias" "$out" probe test "$(kv bin_sh)" = "0:real-sh-2"
	check_step "$u: … gets [tool.python3.env]" "$out" probe test "$(kv env_tool)" = tool-value
	check_step "$u: … not the agent's environment (inherited or [agent.env])" "$out" probe \
		test "$(kv env_agent)" = absent
	check_step "$u: … its proxy is the gateway's listener" "$out" probe \
		test "$(kv proxy)" = "http://127.0.0.1:3128"
	check_step "$u: … a direct connection to the host's loopback server fails ($(kv direct_127.0.0.1))" "$out" probe \
		bash -c "case '$(kv direct_127.0.0.1)' in error-*) exit 0;; *) exit 1;; esac"
	check_step "$u: … an outside address is unreachable ($(kv direct_192.0.2.1))" "$out" probe \
		bash -c "case '$(kv direct_192.0.2.1)' in error-*) exit 0;; *) exit 1;; esac"
	check_step "$u: … the box CA in SSL_CERT_FILE, readable" "$out" probe test "$(kv ca)" = "/run/box/ca.pem:readable"
	check_step "$u: … HTTPS through the gateway to a permitted host: 200" "$out" probe \
		test "$(kv proxied_ok)" = 200
	check_step "$u: … to a denied host: refused ($(kv proxied_no))" "$out" probe \
		bash -c "[ '$(kv proxied_ok)' = 200 ] && [ '$(kv proxied_no)' != 200 ]"
	check "$u: the upstream saw the tool's permitted request" grep -q "from=tool-ok-$u" "$HTTPD_LOG"
	check "$u: … and not the denied one" test "$(grep -c "from=tool-no-$u" "$HTTPD_LOG")" = 0
	# The box has ended: boxctl log finds its state_dir through ./box.ini.
	forget_default_state "$u" "$name"
	as_user "$u" "cd '$D' && '$RB/boxctl' log $name" >"$D/log" 2>&1
	check "$u: boxctl log: the tool's request, permitted" \
		grep -qE "permit +http:request +ok.e2e.test:$port/echo +ok_get" "$D/log"
	check "$u: boxctl log: the denied connection" grep -qE "deny +net:connect +no.e2e.test:$port" "$D/log"
	check "$u: boxctl log: the tool's spawn" grep -qE "permit +shell:spawn +/usr/bin/python3" "$D/log"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
