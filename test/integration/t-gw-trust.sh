#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-trust.sh — the clients an agent's commands use trust the box CA and go through the
# proxy with no configuration of their own, even where the user's configuration points them
# elsewhere (embedded boxd, as root and as boxtest). The agent runs each client through box's
# shell, so each runs in its [tool] sandbox with the environment boxd gives every contained
# sandbox (boxd/plan.c, common/envnames.h):
#   - npm install from a loopback registry (httpd.py --root: a packument and a tarball) in a
#     project whose .npmrc names another CA (cafile) and a dead proxy (npm_config_* win);
#   - pip download of a wheel from a loopback PEP 503 index with a pip.conf (PIP_CONFIG_FILE
#     in [tool.python3.env]) that names another CA and a dead proxy (PIP_CERT, PIP_PROXY win);
#   - git clone over HTTPS (gitd.py; GIT_SSL_CAINFO, https_proxy);
#   - curl, and Python's urllib, requests and httpx: a GET each (SSL_CERT_FILE,
#     REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, https_proxy);
#   - node 20's fetch, which ignores the proxy variables: it reaches nothing, as the
#     disclosure says (node 22.21 and later use NODE_USE_ENV_PROXY=1; not on this host).
# The gateway decided each request (boxctl log). Go and cargo read SSL_CERT_FILE and
# CARGO_HTTP_CAINFO / the proxy variables (test_plan checks the variables; neither is here).
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT

REPO=$(pwd)
gitd=$REPO/test/integration/gitd.py
cd "$W"
make_ca pkgs.trust.test git.trust.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
cp "$SRV_CA" upstream-ca.pem
"$REPO/test/servers/mkca.sh" "$W/other-ca" other.trust.test >/dev/null # the user's "own" CA
chmod 755 "$W/other-ca"

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

# The package servers' files: an npm packument and tarball, a PEP 503 index and a wheel.
mkdir -p static
start_httpd --tls --root "$W/static" || { not_ok "httpd.py --tls --root starts"; tap_done; exit 1; }
hport=$HTTPD_PORT
hlog=$HTTPD_LOG
python3 - "$W/static" "https://pkgs.trust.test:$hport" <<'PY'
import base64, hashlib, io, json, os, sys, tarfile, zipfile
root, base = sys.argv[1:3]
# npm: boxdemo 1.0.0
pkg = {"name": "boxdemo", "version": "1.0.0", "main": "index.js"}
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as t:
    for name, data in (("package/package.json", json.dumps(pkg).encode()),
                       ("package/index.js", b"module.exports = 'boxdemo from the loopback registry';\n")):
        ti = tarfile.TarInfo(name)
        ti.size, ti.mode = len(data), 0o644
        t.addfile(ti, io.BytesIO(data))
tgz = buf.getvalue()
os.makedirs(root + "/npm/boxdemo/-")
open(root + "/npm/boxdemo/-/boxdemo-1.0.0.tgz", "wb").write(tgz)
dist = {"tarball": base + "/npm/boxdemo/-/boxdemo-1.0.0.tgz",
        "shasum": hashlib.sha1(tgz).hexdigest(),
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}
json.dump({"name": "boxdemo", "dist-tags": {"latest": "1.0.0"},
           "versions": {"1.0.0": dict(pkg, dist=dist)}},
          open(root + "/npm/boxdemo/index.json", "w"))
# pip: boxdemo 1.0, a pure wheel
files = {"boxdemo/__init__.py": b"WHERE = 'loopback index'\n",
         "boxdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: boxdemo\nVersion: 1.0\n",
         "boxdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: box\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = "".join("%s,sha256=%s,%d\n" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d))
                 for n, d in files.items()) + "boxdemo-1.0.dist-info/RECORD,,\n"
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr("boxdemo-1.0.dist-info/RECORD", record)
whl = buf.getvalue()
os.makedirs(root + "/files")
open(root + "/files/boxdemo-1.0-py3-none-any.whl", "wb").write(whl)
os.makedirs(root + "/simple/boxdemo")
open(root + "/simple/boxdemo/index.html", "w").write(
    '<!DOCTYPE html><html><body><a href="%s/files/boxdemo-1.0-py3-none-any.whl#sha256=%s">'
    'boxdemo-1.0-py3-none-any.whl</a></body></html>\n' % (base, hashlib.sha256(whl).hexdigest()))
PY
chmod -R a+rX static
printf '127.0.0.1 pkgs.trust.test\n127.0.0.1 git.trust.test\n' >hosts
cat >trust.cedar <<'EOF'
@id("hosts")
permit (principal, action in [Box::Action::"net:connect", Box::Action::"http:request"], resource)
when { ["pkgs.trust.test", "git.trust.test"].contains(context.input.host) };

@id("commands")
permit (principal, action in [Box::Action::"shell:exec", Box::Action::"shell:spawn",
                              Box::Action::"fs:read", Box::Action::"fs:write",
                              Box::Action::"fs:delete", Box::Action::"fs:move"], resource);
EOF
# The agent: each client through box's shell (the alias), its output prefixed.
cat >agent.py <<'EOF'
#!/usr/bin/python3
import subprocess, sys
for tag, cmd in zip(sys.argv[1::2], sys.argv[2::2]):
    r = subprocess.run(["/bin/bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    for l in (r.stdout + r.stderr).splitlines():
        print("%s: %s" % (tag, l))
    print("%s-rc=%d" % (tag, r.returncode), flush=True)
EOF
cat >get.py <<'EOF'
import sys
url, how = sys.argv[1], sys.argv[2]
if how == "urllib":
    import urllib.request
    print(urllib.request.urlopen(url, timeout=20).status)
elif how == "requests":
    import requests
    print(requests.get(url, timeout=20).status_code)
else:
    import httpx
    print(httpx.get(url, timeout=20).status_code)
EOF
chmod 755 agent.py
chmod 644 hosts upstream-ca.pem trust.cedar get.py

users=root
boxtest_or_skip "clients as boxtest" && users="root boxtest"
for u in $users; do
	P=$W/proj-$u
	mkdir -p "$P"
	# The user's own configuration, pointing the clients elsewhere.
	cat >"$P/.npmrc" <<EOF
registry=https://pkgs.trust.test:$hport/npm/
cafile=$W/other-ca/ca.pem
proxy=http://127.0.0.1:9/
https-proxy=http://127.0.0.1:9/
EOF
	printf '[global]\ncert = %s\nproxy = http://127.0.0.1:9\n' "$W/other-ca/ca.pem" >"$P/pip.conf"
	printf '{"name": "trust-test", "version": "1.0.0", "private": true, "dependencies": {"boxdemo": "1.0.0"}}\n' \
		>"$P/package.json"
	chown -R "$u:" "$P"
	name=gwt-$u-$$
	cat >"$P/box.ini" <<EOF
[box]
name = $name
policy = $W/trust.cedar

[agent]
command = $W/agent.py
workspace = $P

[agent.filesystem]
write = $P

[tool.npm]
command = /usr/bin/npm
[tool.npm.filesystem]
write = $P

[tool.python3]
command = /usr/bin/python3
[tool.python3.env]
PIP_CONFIG_FILE = $P/pip.conf
[tool.python3.filesystem]
write = $P
read_file = $W/get.py

[tool.git]
command = /usr/bin/git
[tool.git.filesystem]
write = $P

[tool.curl]
command = /usr/bin/curl
[tool.curl.filesystem]
write = $P

[tool.node]
command = /usr/bin/node
[tool.node.filesystem]
write = $P

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
resolver = 127.0.0.1:9
EOF
	chmod 644 "$P/box.ini"
	url=https://pkgs.trust.test:$hport
	AS_USER_DIR=$P
	as_user "$u" "timeout -k 5 300 '$RB/boxctl' run -c box.ini -- \
		npm 'npm install --no-audit --no-fund --loglevel=error && cat node_modules/boxdemo/index.js' \
		pip 'python3 -m pip download --no-deps --disable-pip-version-check -q -d dl --index-url $url/simple boxdemo && ls dl' \
		git 'git clone -q https://git.trust.test:$gport/repo.git clone && cat clone/README' \
		curl 'curl -sS -o /dev/null -w %{http_code} $url/echo' \
		urllib 'python3 $W/get.py $url/echo urllib' \
		requests 'python3 $W/get.py $url/echo requests' \
		httpx 'python3 $W/get.py $url/echo httpx' \
		node 'node -e \"fetch(\\\"$url/echo\\\").then(r => console.log(r.status), e => console.log(\\\"fetch failed: \\\" + (e.cause ? e.cause.code : e.message)))\"'" \
		>"$W/out-$u" 2>"$W/err-$u"
	rc=$?
	check "$u: the box ran every client (rc $rc)" test "$rc" = 0
	line() { check "$u: $1" grep -qxF -- "$2" "$W/out-$u"; }
	line "npm install from the loopback registry, the project's .npmrc cafile and proxy overridden" \
		"npm: module.exports = 'boxdemo from the loopback registry';"
	line "pip download from the loopback index, pip.conf's cert and proxy overridden" \
		"pip: boxdemo-1.0-py3-none-any.whl"
	line "git clone over https through the gateway" "git: hello from git"
	line "curl: 200 through the gateway" "curl: 200"
	line "Python urllib: 200" "urllib: 200"
	line "Python requests: 200" "requests: 200"
	line "Python httpx: 200" "httpx: 200"
	check "$u: node 20's fetch reaches nothing (it does not use the proxy)" \
		grep -q '^node: fetch failed' "$W/out-$u"
	check "$u: the disclosure says which clients use the proxy and that node 18/20 do not" \
		grep -q 'node 18 and 20 do not use the proxy (fetch, https)' "$W/err-$u"
	as_user "$u" "'$RB/boxctl' log $name --json" >"$W/log-$u" 2>/dev/null
	check "$u: the gateway decided the package requests (npm's tarball, pip's wheel, git's)" \
		python3 - "$W/log-$u" <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
paths = {x["input"].get("path") for x in d if x.get("action") == "http:request"
         and x.get("verdict") == "permit"}
sys.exit(0 if {"/npm/boxdemo/-/boxdemo-1.0.0.tgz", "/files/boxdemo-1.0-py3-none-any.whl",
               "/repo.git/info/refs"} <= paths else 1)
PY
	if [ "$_tap_fail" -gt 0 ]; then
		sed 's/^/#   out: /' "$W/out-$u" | head -60
		grep -v '^box:' "$W/err-$u" | sed 's/^/#   err: /' | head -20
	fi
done
tap_done
