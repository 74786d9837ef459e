#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-masks.sh — docs/box.ini.5.md [agent.filesystem] masks and refusals in real boxes:
# `read = ~` loads, and inside the box the credential stores (~/.ssh ~/.aws
# ~/.netrc) and box's state dirs (~/.local/state/box) are masked (EACCES) and
# disclosed; a Unix socket inside a grant is disclosed as reachable; a hard
# link of boxd's socket inside a grant is refused; a deny of a hard-linked
# file is refused; a grant around the runtime base (read = /tmp) is refused; boxd
# refuses a grant holding its service socket by itself. As root (the box owned by boxtest
# through [agent] user) and as boxtest itself. Boxes are named E-*.
# Trusts: nothing; test code. Files it adds to boxtest's home are removed.
. test/lib.sh
. test/integration/lib-run.sh
set -u

if ! have_boxtest; then
	skip "ordinary user boxtest" "cannot create it (not root)"
	tap_done
	exit 0
fi
H=$(getent passwd boxtest | cut -d: -f6)
made=()
# mk_secret PATH: a secret file in boxtest's home (removed at exit when made here).
mk_secret() {
	local dir
	dir=$(dirname "$1")
	if [ ! -e "$dir" ]; then
		mkdir -p "$dir" && made+=("$dir")
	fi
	if [ ! -e "$1" ]; then
		echo "E-secret-value" >"$1" && made+=("$1")
	fi
	chown -R boxtest: "$dir"
	[ "$dir" = "$H" ] && chown boxtest: "$1"
	chmod 600 "$1"
}
masks_cleanup() {
	for ((i = ${#made[@]} - 1; i >= 0; i--)); do rm -rf "${made[$i]}"; done
	run_cleanup
}
trap masks_cleanup EXIT
mk_secret "$H/.ssh/id_rsa"
mk_secret "$H/.aws/credentials"
mk_secret "$H/.netrc"
# ~/.kube as a symlink: masked at its target
kube_link=0
if [ ! -e "$H/.kube" ] && [ ! -e "$H/E-kube-real" ]; then
	mkdir "$H/E-kube-real" && made+=("$H/E-kube-real")
	echo "E-secret-value" >"$H/E-kube-real/config"
	ln -s E-kube-real "$H/.kube" && made+=("$H/.kube")
	chown -R boxtest: "$H/E-kube-real"
	chown -h boxtest: "$H/.kube"
	kube_link=1
fi
mkdir -p "$H/.local/state/box"
chown boxtest: "$H/.local" "$H/.local/state" "$H/.local/state/box"

cd "$W"
mkdir -p "$W/m"
cat >"$W/m/probe.py" <<'EOF'
import os, sys
for p in open(os.path.join(os.path.dirname(sys.argv[0]), "paths")).read().split():
    try:
        if os.path.isdir(p) or p.endswith("/box"):
            os.listdir(p)
        else:
            open(p).read()
        print(p, "readable")
    except OSError as e:
        print(p, os.strerror(e.errno))
EOF
for f in .ssh/id_rsa .aws/credentials .netrc .local/state/box .profile .kube/config; do
	echo "$H/$f"
done >"$W/m/paths"
chmod -R a+rX "$W/m"
probe="/usr/bin/python3 $W/m/probe.py"

# One run of the masks box: $1 = root | user.
masks_run() {
	local who=$1 ini=$W/masks-$1.ini user_line=""
	[ "$who" = root ] && user_line="user = boxtest"
	cat >"$ini" <<EOF
[box]
name = E-masks-$who

[agent]
command = $probe
workspace = $W/m
$user_line

[agent.filesystem]
read = ~
read = $W/m
EOF
	chmod 644 "$ini"
	if [ "$who" = root ]; then
		out=$("$RB/boxctl" run -c "$ini" 2>"$W/err-$who")
	else
		out=$(as_boxtest "'$RB/boxctl' run -c '$ini'" 2>"$W/err-$who")
	fi
	rc=$?
	check "$who: read = ~ loads and runs (exit 0)" test "$rc" = 0
	for f in .ssh/id_rsa .aws/credentials .netrc .local/state/box; do
		check "$who: ~/$f is masked in the box (EACCES)" \
			grep -qx "$H/$f Permission denied" <<<"$out"
	done
	check "$who: the rest of ~ stays readable (~/.profile)" grep -qx "$H/.profile readable" <<<"$out"
	if [ $kube_link = 1 ]; then
		check "$who: ~/.kube, a symlink, is masked at its target (EACCES)" \
			grep -qx "$H/.kube/config Permission denied" <<<"$out"
		check "$who: the disclosure names the target and the link" \
			grep -q "masked (credential store): $H/E-kube-real (the target of $H/.kube)\$" "$W/err-$who"
	else
		skip "$who: ~/.kube as a symlink" "boxtest has a ~/.kube of its own"
	fi
	for f in .ssh .aws .netrc; do
		check "$who: the disclosure lists ~/$f as a masked credential store" \
			grep -q "masked (credential store): $H/$f\$" "$W/err-$who"
	done
	check "$who: the disclosure lists ~/.local/state/box as masked" \
		grep -q "masked (box's state dirs): $H/.local/state/box\$" "$W/err-$who"
	check "$who: the grant listing marks the mask" \
		grep -qE "deny +$H/.ssh  \(masked: credential store\)" "$W/err-$who"
	check "$who: no secret reaches the output" test "$(grep -c E-secret-value "$W/err-$who" <<<"$out")" = 0
	if [ "$rc" != 0 ] || ! grep -q "masked (credential" "$W/err-$who"; then
		sed 's/^/#   /' "$W/err-$who"
		sed 's/^/#   out: /' <<<"$out"
	fi
}
masks_run root
masks_run user

# A Unix socket inside a grant is disclosed as reachable; a hard link of boxd's socket is refused.
mkdir -p "$W/g/sub" "$W/svc"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$W/g/sub/app.sock"
chmod -R a+rX "$W/g"
cat >"$W/sock.ini" <<EOF
[box]
name = E-sock

[agent]
command = /usr/bin/true
workspace = $W

[agent.filesystem]
read = $W/g
EOF
chmod 644 "$W/sock.ini"
for who in root user; do
	if [ $who = root ]; then
		"$RB/boxctl" run -c "$W/sock.ini" >/dev/null 2>"$W/err"
	else
		as_boxtest "'$RB/boxctl' run -c '$W/sock.ini'" >/dev/null 2>"$W/err"
	fi
	rc=$?
	check "$who: a grant holding a socket runs (exit 0)" test "$rc" = 0
	check "$who: the socket is disclosed as reachable" \
		grep -q "warning: reachable unix socket in a grant: $W/g/sub/app.sock\$" "$W/err"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$W/err"
done

# The service socket: a bound socket nobody listens on (so `run` starts an embedded boxd),
# hard-linked into the grant.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$W/svc/boxd.sock"
# anyone may connect (and be refused: nobody listens); a mode refusing boxtest would end
# `run` with the box-clients message instead (docs/boxctl.1.md)
chmod 777 "$W/svc/boxd.sock"
chmod 755 "$W/svc"
ln "$W/svc/boxd.sock" "$W/g/sub/innocent"
for who in root user; do
	if [ $who = root ]; then
		BOX_SOCKET=$W/svc/boxd.sock "$RB/boxctl" run -c "$W/sock.ini" >/dev/null 2>"$W/err"
	else
		as_boxtest "BOX_SOCKET='$W/svc/boxd.sock' '$RB/boxctl' run -c '$W/sock.ini'" \
			>/dev/null 2>"$W/err"
	fi
	rc=$?
	check "$who: a hard link of boxd's socket in a grant is refused (exit 2)" test "$rc" = 2
	check "$who: the refusal names sock.ini:9 and the link" \
		grep -q "^boxctl: $W/sock.ini:9: \[agent.filesystem\] read: $W/g/sub/innocent is a hard link of boxd's socket $W/svc/boxd.sock" "$W/err"
	[ "$rc" = 2 ] || sed 's/^/#   /' "$W/err"
done
rm -f "$W/g/sub/innocent"

# A deny of a hard-linked file: boxctl refuses it at load, and so does boxd's recheck
# (root naming [agent] user: the link is made where only boxtest can see it).
mkdir -p "$W/d"
echo x >"$W/d/f"
chmod -R a+rX "$W/d"
cat >"$W/deny.ini" <<EOF
[box]
name = E-deny

[agent]
command = /usr/bin/true
workspace = $W

[agent.filesystem]
read = $W/d
deny = $W/d/f
EOF
chmod 644 "$W/deny.ini"
ln "$W/d/f" "$W/f-too"
"$RB/boxctl" run -c "$W/deny.ini" >/dev/null 2>"$W/err"
rc=$?
check "a deny of a file with 2 links is refused at load (exit 2)" test "$rc" = 2
check "the refusal names deny.ini:10, the file and the count" \
	grep -q "^boxctl: $W/deny.ini:10: \[agent.filesystem\] deny: \"$W/d/f\" has 2 hard links" "$W/err"
[ "$rc" = 2 ] || sed 's/^/#   /' "$W/err"

# A grant around the runtime base (/tmp/box-UID for boxtest without XDG_RUNTIME_DIR) is refused:
# every embedded boxd listens in BASE/ID.
cat >"$W/tmp.ini" <<EOF
[box]
name = E-tmp

[agent]
command = /usr/bin/true
workspace = $W

[agent.filesystem]
read = /tmp
EOF
chmod 644 "$W/tmp.ini"
buid=$(id -u boxtest)
su -s /bin/sh boxtest -c "cd '$W' && env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME \
	BOX_SOCKET=/var/tmp/E-no-service.sock '$RB/boxctl' run -c '$W/tmp.ini'" >/dev/null 2>"$W/err"
rc=$?
check "user: read = /tmp around the runtime base is refused (exit 2)" test "$rc" = 2
check "user: the refusal names tmp.ini:9 and /tmp/box-$buid" \
	grep -q "^boxctl: $W/tmp.ini:9: \[agent.filesystem\] read: \"/tmp\" contains /tmp/box-$buid (the box runtime base" "$W/err"
[ "$rc" = 2 ] || sed 's/^/#   /' "$W/err"

# The scan's bound: slowed by a test hook (BOX_TEST_SCAN_DELAY_MS, it only slows a step), a
# grant of 300 files takes over 2 s to scan: the box starts, and the disclosure says the scan
# was cut.
mkdir -p "$W/many"
for i in $(seq 300); do : >"$W/many/f$i"; done
chmod -R a+rX "$W/many"
cat >"$W/many.ini" <<EOF
[box]
name = E-many

[agent]
command = /usr/bin/true
workspace = $W

[agent.filesystem]
read = $W/many
EOF
chmod 644 "$W/many.ini"
BOX_TEST_SCAN_DELAY_MS=10 "$RB/boxctl" run -q -c "$W/many.ini" >/dev/null 2>"$W/err"
rc=$?
check "a cut socket scan does not stop the box (exit 0)" test "$rc" = 0
check "the disclosure says the socket scan stopped after 2 s" \
	grep -q "warning: the socket scan stopped after 2 s: sockets beyond it were not checked" "$W/err"
[ "$rc" = 0 ] || sed 's/^/#   /' "$W/err"
"$RB/boxctl" run -q -c "$W/many.ini" >/dev/null 2>"$W/err"
check "without the hook the scan of 300 files is not cut" test "$(grep -c 'socket scan stopped' "$W/err")" = 0

# More than 20 sockets: 20 named, then a count; one whose name the reply cannot carry (a glob
# character) is counted, and the box still starts.
mkdir -p "$W/socks"
python3 -c '
import socket, sys
for i in range(25):
    socket.socket(socket.AF_UNIX).bind("%s/s%02d.sock" % (sys.argv[1], i))
socket.socket(socket.AF_UNIX).bind("%s/odd[1].sock" % sys.argv[1])' "$W/socks"
chmod -R a+rX "$W/socks"
sed "s|read = $W/many|read = $W/socks|; s|E-many|E-socks|" "$W/many.ini" >"$W/socks.ini"
chmod 644 "$W/socks.ini"
"$RB/boxctl" run -q -c "$W/socks.ini" >/dev/null 2>"$W/err"
rc=$?
check "26 sockets: the box runs (exit 0)" test "$rc" = 0
check "26 sockets: 20 are named" test "$(grep -c 'warning: reachable unix socket in a grant: ' "$W/err")" = 20
check "26 sockets: and 6 more" grep -q "warning: and 6 more reachable unix sockets in the grants" "$W/err"

# boxd re-checks what boxctl checked: a service boxd reached through a symlink, so boxctl's
# BOX_SOCKET is not the socket boxd listens on; a grant holding the real one is refused by boxd.
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p "$W/svc2"
	chmod 755 "$W/svc2"
	"$RB/boxd" --listen "$W/svc2/boxd.sock" 2>"$W/boxd2.log" &
	sp=$!
	_run_pids+=("$sp")
	for _ in $(seq 50); do [ -S "$W/svc2/boxd.sock" ] && break; sleep 0.1; done
	ln -s "$W/svc2/boxd.sock" "$W/alias.sock"
	cat >"$W/svc.ini" <<EOF
[box]
name = E-svc

[agent]
command = /usr/bin/true
workspace = $W

[agent.filesystem]
read = $W/svc2
EOF
	chmod 644 "$W/svc.ini"
	BOX_SOCKET=$W/alias.sock "$RB/boxctl" run -c "$W/svc.ini" >/dev/null 2>"$W/err"
	rc=$?
	check "service: boxd refuses a grant holding its socket (exit 2)" test "$rc" = 2
	check "service: boxd's refusal names svc.ini:9 and the socket" \
		grep -q "^boxctl: $W/svc.ini:9: \[agent.filesystem\] read: $W/svc2 contains $W/svc2/boxd.sock (boxd's service socket)" "$W/err"
	[ "$rc" = 2 ] || sed 's/^/#   /' "$W/err"
	kill -TERM "$sp"
	wait "$sp"
	rm -rf /var/lib/box/0/E-svc
else
	skip "service: boxd's own refusal of a grant holding its socket" "needs root (a service boxd)"
fi
tap_done
