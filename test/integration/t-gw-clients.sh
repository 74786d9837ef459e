#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-clients.sh — real clients inside real boxes through box-gateway (embedded
# boxd, as root and as boxtest): `git clone` over HTTPS from a loopback smart-HTTP
# server (git and its helpers in /usr/lib/git-core are the agent's exec grants: nothing
# else of /usr is executable for it; GIT_SSL_CAINFO and https_proxy are the
# box's), node 20 with an explicit CONNECT agent (and a plain node 20 fetch, which
# ignores the proxy variables, gets no network), and a client that dials an
# address itself (no route: the box's network namespace has only lo).
# Trusts: nothing; test code. Packets only to 127.0.0.1 (the dial to 192.0.2.1
# fails inside the box's own network namespace, which has no route).
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT

gitd=$(pwd)/test/integration/gitd.py
cd "$W"
make_ca ok.gwb.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
cp "$SRV_CA" upstream-ca.pem

# A bare repository with one commit, served over HTTPS by git http-backend.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
mkdir -p git/src
git -C git/src init -q -b main
echo "hello from git" >git/src/README
git -C git/src add README
git -C git/src -c user.name=t -c user.email=t@t commit -q -m one
git clone -q --bare git/src git/repo.git
chmod -R a+rX git
_srv_start gitd python3 "$gitd" --root "$W/git" --tls "$SRV_CERT" "$SRV_KEY" ||
	{ not_ok "gitd.py starts"; tap_done; exit 1; }
gport=$_srv_port
glog=$_srv_log
start_httpd --tls || { not_ok "httpd.py --tls starts"; tap_done; exit 1; }
hport=$HTTPD_PORT
printf '127.0.0.1 ok.gwb.test\n' >hosts
cat >gw.cedar <<'EOF'
@id("connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.gwb.test" };

@id("requests")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.gwb.test" };
EOF
cat >agent.py <<'EOF'
#!/usr/bin/python3
import subprocess, sys
what, args = sys.argv[1], sys.argv[2:]
if what == "git":
    r = subprocess.run(["/usr/bin/git", "clone", "-q", args[0], args[1]], capture_output=True,
                       text=True)
    print("git-rc=%d" % r.returncode)
    print("git-err=" + r.stderr.strip().replace("\n", " | "))
    if r.returncode == 0:
        print("readme=" + open(args[1] + "/README").read().strip())
elif what == "node":
    r = subprocess.run(["/usr/bin/node", "-e", args[0]], capture_output=True, text=True,
                       timeout=60)
    sys.stdout.write(r.stdout)
    sys.stdout.write("node-err=" + r.stderr[-500:])
elif what == "curl":
    r = subprocess.run(["/usr/bin/curl", "-sS", "--max-time", "10"] + args, capture_output=True,
                       text=True)
    print("curl-rc=%d" % r.returncode)
    sys.stdout.write("curl-err=" + r.stderr)
EOF
# node 20: an explicit CONNECT to the proxy, then TLS to the host (the box CA comes from
# NODE_EXTRA_CA_CERTS), one GET.
cat >connect.js <<EOF
const http = require('http'), tls = require('tls');
const proxy = new URL(process.env.HTTPS_PROXY);
const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT',
                           path: 'ok.gwb.test:$hport' });
req.on('connect', (res, socket) => {
  console.log('connect=' + res.statusCode);
  const t = tls.connect({ socket, servername: 'ok.gwb.test' }, () => {
    t.write('GET /echo HTTP/1.1\r\nHost: ok.gwb.test:$hport\r\nConnection: close\r\n\r\n');
  });
  let data = '';
  t.on('data', (d) => { data += d; });
  t.on('end', () => { console.log('status=' + data.split('\r\n')[0]); });
  t.on('error', (e) => { console.log('tls-error=' + e.message); });
});
req.on('error', (e) => { console.log('proxy-error=' + e.message); });
req.end();
EOF
chmod 755 agent.py
chmod 644 hosts upstream-ca.pem gw.cedar connect.js

# mkini FILE NAME CLONE-DIR
mkini() {
	cat >"$1" <<EOF
[box]
name = $2
policy = gw.cedar

[agent]
command = $W/agent.py
workspace = $W

[agent.filesystem]
read = $W/connect.js
write = $3
exec = /usr/bin/git
exec = /usr/lib/git-core
exec = /usr/bin/node
exec = /usr/bin/curl

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
EOF
	chmod 644 "$1"
}

runas() {
	if [ "$1" = root ]; then
		(cd "$W" && sh -c "$2")
	else
		as_boxtest "$2"
	fi
}

users=root
boxtest_or_skip "clients as boxtest" && users="root boxtest"
for u in $users; do
	p=gwc-$u
	mkdir -p "$W/clone-$u"
	[ "$u" = root ] || chown boxtest "$W/clone-$u"
	mkini "$p.ini" "$p" "$W/clone-$u"

	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- git https://ok.gwb.test:$gport/repo.git $W/clone-$u/repo" \
		>"$p.git" 2>&1
	check "$u: git clone over https through the gateway (exit 0)" grep -qx 'git-rc=0' "$p.git"
	check "$u: … the clone has the repository's file" grep -qx 'readme=hello from git' "$p.git"
	check "$u: … git's requests reached the server (info/refs, git-upload-pack)" \
		bash -c "grep -q '/repo.git/info/refs' '$glog' && grep -q 'git-upload-pack' '$glog'"
	[ "$_tap_fail" -gt 0 ] && sed 's/^/#   /' "$p.git" | head -5

	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- node \"\$(cat $W/connect.js)\"" >"$p.node" 2>&1
	check "$u: node 20 with an explicit CONNECT: 200 from the proxy" grep -qx 'connect=200' "$p.node"
	check "$u: … and 200 from the upstream through TLS (box CA via NODE_EXTRA_CA_CERTS)" \
		grep -qx 'status=HTTP/1.1 200 OK' "$p.node"
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- node \"fetch('https://ok.gwb.test:$hport/echo').then(r => console.log('fetch=' + r.status), e => console.log('fetch-error=' + (e.cause ? e.cause.code : e.message)))\"" \
		>"$p.fetch" 2>&1
	check "$u: node 20 plain fetch (ignores HTTPS_PROXY): no network" \
		grep -q '^fetch-error=' "$p.fetch"
	check "$u: … it never got an answer" test "$(grep -c '^fetch=' "$p.fetch")" = 0

	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- curl --noproxy '*' https://192.0.2.1/" \
		>"$p.dial" 2>&1
	check "$u: a client dialing an address itself: no route (curl exit 7)" \
		grep -qx 'curl-rc=7' "$p.dial"
done
tap_done
