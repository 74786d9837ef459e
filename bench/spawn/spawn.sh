#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spawn.sh — spawn cost: box-trampoline building a minimal agent sandbox and
# running /bin/true (through box-sandbox-run, which does boxd's part: runtime
# dir, plan, fd 3/4) against bwrap with an equivalent view (tmpfs root, the
# system runtime and /etc files read-only, new /proc and /dev, tmpfs /tmp,
# all namespaces), measured alternately in the same run; prints the medians
# and their ratio (target: within 3x bwrap). When `boxctl run` exists, the
# full embedded `boxctl run -- /bin/true` is timed beside it, and its start's
# timeline (`boxctl run --timings`) printed step by step, each step's median. As root the
# same box also goes through a service boxd of the bench's own (target within 2x bwrap),
# whose spare box-policyd and box-gateway are waited for between runs, outside the timing.
# Then, with the same config (the shell alias and box-gateway in every box):
#   start to the first shell command   the agent runs `sh -c true` (`/usr/bin/env sh
#                                      -c true`: env finds the alias in /run/box/bin,
#                                      box-shell runs `true`; a permit-all policy)
#                                      against bwrap running /bin/sh -c true
#   start to the first proxied request the agent's curl GETs a loopback HTTP server
#                                      through box-gateway ([gateway] hosts_file,
#                                      allow_host_loopback, a permit-all policy)
#                                      against bwrap --share-net running the same curl
# each whole run timed (the start, the command, the end), alternately in one run,
# medians (a loaded machine moves single runs; the median of many does not much).
# Trusts: nothing; it is a benchmark.
set -eu
BOX_BIN=${BOX_BIN:-build/bin}
N=${SPAWN_RUNS:-40}
run=$BOX_BIN/box-sandbox-run
if ! command -v bwrap >/dev/null; then
	echo "spawn: bwrap is not installed (apt-get install bubblewrap); skipped"
	exit 0
fi
ws=$(mktemp -d /tmp/box-bench.XXXXXX)
trap 'rm -rf "$ws"' EXIT

bw=(bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
	--tmpfs / --ro-bind /usr /usr)
for l in bin lib lib64 sbin; do
	if [ -L /$l ]; then bw+=(--symlink "$(readlink /$l)" /$l); elif [ -d /$l ]; then bw+=(--ro-bind /$l /$l); fi
done
for f in ld.so.cache ld.so.conf ld.so.conf.d nsswitch.conf hosts host.conf gai.conf services \
	protocols localtime ssl ca-certificates alternatives mime.types passwd group; do
	[ -e /etc/$f ] && bw+=(--ro-bind /etc/$f /etc/$f)
done
bw+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs /var/tmp --tmpfs /dev/shm
	--dir "$ws" --chdir "$ws" --remount-ro / -- /bin/true)
box=("$run" --workspace "$ws" -- /bin/true)

"${box[@]}" || { echo "spawn: the box does not start"; exit 1; }
"${bw[@]}" || { echo "spawn: bwrap does not start"; exit 1; }

/usr/bin/python3 - "$N" "$BOX_BIN" "$ws" <<'PY' "${box[@]}" --- "${bw[@]}"
import os, re, statistics, subprocess, sys, time
n = int(sys.argv[1]); bin_dir = sys.argv[2]; ws = sys.argv[3]
rest = sys.argv[4:]
i = rest.index("---")
box, bw = rest[:i], rest[i + 1:]
cmds = {"box-trampoline": box, "bwrap": bw}
boxctl = os.path.join(bin_dir, "boxctl")
ini = os.path.join(ws, "box.ini")
if os.access(boxctl, os.X_OK) and subprocess.run([boxctl, "run", "--help"],
        capture_output=True).returncode == 0:
    with open(ini, "w") as f:
        f.write("[box]\nname = bench\nrequire = userns mountns netns landlock seccomp\n"
                "[agent]\ncommand = /bin/true\nworkspace = %s\n" % ws)
    cmds["boxctl run (embedded)"] = [boxctl, "run", "-q", "-c", ini]
    with open(os.path.join(ws, "permit.cedar"), "w") as f:
        f.write("permit (principal, action, resource);\n")
    # start to the first shell command: the agent's `sh` is the alias, box-shell runs `true`
    shini = os.path.join(ws, "sh.ini")
    with open(shini, "w") as f:
        f.write("[box]\nname = benchsh\npolicy = %s/permit.cedar\n"
                "[agent]\ncommand = /usr/bin/env sh -c true\nworkspace = %s\n" % (ws, ws))
    cmds["sh -c true: boxctl run"] = [boxctl, "run", "-q", "-c", shini]
    cmds["sh -c true: bwrap"] = bw[:-1] + ["/bin/sh", "-c", "true"]
    # start to the first proxied request: a loopback HTTP server, named in a hosts file
    import http.server, threading
    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
            self.wfile.write(b"ok")
        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    with open(os.path.join(ws, "hosts"), "w") as f:
        f.write("127.0.0.1 spawn-bench.test\n")
    netini = os.path.join(ws, "net.ini")
    with open(netini, "w") as f:
        f.write("[box]\nname = benchnet\npolicy = %s/permit.cedar\n"
                "[agent]\ncommand = /usr/bin/curl -sf -o /dev/null http://spawn-bench.test:%d/\n"
                "workspace = %s\n[gateway]\nhosts_file = %s/hosts\nallow_host_loopback = true\n"
                % (ws, port, ws, ws))
    if os.access("/usr/bin/curl", os.X_OK):
        cmds["proxied GET: boxctl run"] = [boxctl, "run", "-q", "-c", netini]
        bwnet = [a for a in bw[:-1] if a != "--unshare-all"]
        bwnet[1:1] = ["--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
                      "--unshare-cgroup-try"]
        cmds["proxied GET: bwrap"] = bwnet + ["/usr/bin/curl", "-sf", "-o", "/dev/null",
                                              "http://127.0.0.1:%d/" % port]
# No service socket: `boxctl run` starts its embedded boxd every time.
env = dict(os.environ, BOX_SOCKET=os.path.join(ws, "no-service.sock"))
envs = {}
# As root, the same box through a service boxd of the bench's own (its own socket): the
# start a host running boxd under systemd sees (target <= 2x bwrap).
service = None
if "boxctl run (embedded)" in cmds and os.geteuid() == 0:
    sock = os.path.join(ws, "service.sock")
    service = subprocess.Popen([os.path.join(bin_dir, "boxd"), "--listen", sock],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=open(os.path.join(ws, "service.log"), "w"))
    for _ in range(500):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    if os.path.exists(sock):
        cmds["boxctl run (service)"] = cmds["boxctl run (embedded)"]
        envs["boxctl run (service)"] = dict(os.environ, BOX_SOCKET=sock)
    else:
        print("spawn: the service boxd did not listen on %s; no service row" % sock)
def spares_wait():
    # A service boxd spawns its next spare box-policyd, box-gateway and box-clientd 50 ms
    # after a box (a client) took them (docs/boxd.8.md): wait for them (at most 1 s), outside
    # any timing, so that their start never lands on the next command measured, box or peer.
    for _ in range(100):
        try:
            kids = open("/proc/%d/task/%d/children" % (service.pid, service.pid)).read().split()
        except OSError:
            return
        waiting = set()
        for pid in kids:
            try:
                waiting.add(open("/proc/%s/cmdline" % pid).read().replace("\0", " ").strip())
            except OSError:
                pass
        if {"box-policyd -w", "box-gateway -w", "box-clientd -w"} <= waiting:
            return
        time.sleep(0.01)
times = {k: [] for k in cmds}
for _ in range(n):
    for k, c in cmds.items():
        if k == "boxctl run (service)":
            spares_wait()
        t = time.perf_counter()
        r = subprocess.run(c, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=envs.get(k, env))
        times[k].append(time.perf_counter() - t)
        if r.returncode != 0:
            print("spawn: %s exited %d" % (k, r.returncode)); sys.exit(1)
        if k == "boxctl run (service)":
            spares_wait()
med = {k: statistics.median(v) * 1000 for k, v in times.items()}
for k, v in med.items():
    print("spawn: %-24s median %7.2f ms over %d runs" % (k, v, n))
if service:
    service.terminate()
    service.wait()
def target(name, ratio, limit):
    print("spawn: %s / bwrap = %.2fx (target <= %gx: %s)" %
          (name, ratio, limit, "met" if ratio <= limit else "MISSED"))
if "boxctl run (service)" in med:
    target("boxctl run (service)", med["boxctl run (service)"] / med["bwrap"], 2)
if "boxctl run (embedded)" in med:
    target("boxctl run (embedded)", med["boxctl run (embedded)"] / med["bwrap"], 3)
    print("spawn: start to the first shell command: boxctl run %.2f ms, bwrap %.2f ms (%.2fx)" %
          (med["sh -c true: boxctl run"], med["sh -c true: bwrap"],
           med["sh -c true: boxctl run"] / med["sh -c true: bwrap"]))
    if "proxied GET: boxctl run" in med:
        print("spawn: start to the first proxied request: boxctl run %.2f ms, bwrap %.2f ms (%.2fx)" %
              (med["proxied GET: boxctl run"], med["proxied GET: bwrap"],
               med["proxied GET: boxctl run"] / med["proxied GET: bwrap"]))
    # Where the start's time goes: `boxctl run --timings`, each step's median.
    steps = {}
    k = max(5, n // 4)
    for _ in range(k):
        r = subprocess.run([boxctl, "run", "-q", "--timings", "-c", ini], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        for line in r.stderr.splitlines():
            m = re.match(r"box: +([0-9.]+)  \+ *([0-9.]+)  (\S+) +(.*)$", line)
            if m:
                steps.setdefault((m.group(3), m.group(4)), []).append(
                    (float(m.group(1)), float(m.group(2))))
    print("spawn: boxctl run --timings, median of %d runs (ms since boxctl started, +ms the step took):" % k)
    for (who, step), v in sorted(steps.items(), key=lambda kv: statistics.median(a for a, _ in kv[1])):
        print("spawn:   %7.2f  +%6.2f  %-6s %s" % (statistics.median(a for a, _ in v),
                                                   statistics.median(d for _, d in v), who, step))
    # boxd's peak RSS: run a box whose agent sleeps, read the embedded boxd's
    # VmHWM (a child of boxctl) until the box ends.
    with open(ini, "w") as f:
        f.write("[box]\nname = benchrss\n[agent]\ncommand = /bin/sleep 1\nworkspace = %s\n" % ws)
    p = subprocess.Popen([boxctl, "run", "-q", "-c", ini], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    hwm = 0
    while p.poll() is None:
        try:
            kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
        except OSError:
            kids = []
        for k in kids:
            try:
                st = open("/proc/%s/status" % k).read()
                if "\nName:\tboxd\n" in "\n" + st:
                    for line in st.splitlines():
                        if line.startswith("VmHWM:"):
                            hwm = max(hwm, int(line.split()[1]))
            except OSError:
                pass
        time.sleep(0.02)
    print("spawn: embedded boxd peak RSS %.1f MiB" % (hwm / 1024.0) if hwm else
          "spawn: embedded boxd peak RSS not observed")
ratio = med["box-trampoline"] / med["bwrap"]
print("spawn: box-trampoline / bwrap = %.2fx (target <= 3x)%s" %
      (ratio, "" if ratio <= 3 else "  ** over target **"))
PY
