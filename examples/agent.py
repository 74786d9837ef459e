#!/usr/bin/python3
# The demo agent: one allowed and one refused file access, then one HTTPS
# request per URL given (through box-gateway: HTTPS_PROXY, the box CA in
# SSL_CERT_FILE), printing what came back; then three commands through the
# box's shell, as coding agents run them (`bash -c …` is box's shell alias,
# served by box-shell): a shell command, one the policy refuses, and git,
# a host program box-shell starts in its [tool.git] sandbox.
import os
import subprocess
import sys
import urllib.error
import urllib.request

print("agent: reading README.txt:", open("README.txt").read().strip())
try:
    open(".env").read()
    print("agent: read .env (this must not happen)")
except OSError as e:
    print("agent: reading .env refused:", os.strerror(e.errno))

for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            print("agent: GET %s -> %d %s" % (url, r.status, r.read(200).decode().strip()))
    except urllib.error.HTTPError as e:
        # A refused request (inside the tunnel) comes back as 403 with the decision.
        print("agent: GET %s -> %d x-box-egress: %s, %s" % (
            url, e.code, e.headers.get("x-box-egress"), e.read(300).decode().strip()))
    except OSError as e:
        # A refused CONNECT: urllib reports the proxy's status line.
        print("agent: GET %s -> refused: %s" % (url, e))

for cmd in ("grep -c project README.txt | wc -l", "rm -rf out", "git --version"):
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    print("agent: bash -c %r -> exit %d" % (cmd, r.returncode))
    for line in (r.stdout + r.stderr).splitlines():
        print("agent:     " + line)
print("agent: out/ is still there after the refused rm -rf:", os.path.isdir("out"))
