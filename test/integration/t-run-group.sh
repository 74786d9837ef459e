#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-group.sh — a service socket whose mode refuses the caller: a private service boxd
# (`boxd --listen`, which makes its socket 0660 root:box-clients when that group exists)
# and boxtest, who is not in box-clients. `boxctl run` tells boxtest to join box-clients
# (naming the user and the socket) and exits 1 without starting an embedded boxd;
# `boxctl run --embedded` starts one without asking the service and runs the box.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

if [ "$(id -u)" -ne 0 ] || ! have_boxtest || ! getent group box-clients >/dev/null; then
	skip "a socket that refuses the caller" "needs root, the user boxtest and the group box-clients"
	tap_done
	exit 0
fi
if id -nG boxtest | tr ' ' '\n' | grep -qx box-clients; then
	skip "a socket that refuses the caller" "boxtest is in box-clients on this host"
	tap_done
	exit 0
fi
cd "$W"
chmod 755 "$W"
n=$$
export BOX_SOCKET="$W/boxd.sock"
"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
sp=$!
_run_pids+=("$sp")
for _ in $(seq 100); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
check "service: boxd listens on its socket" test -S "$BOX_SOCKET"
check "the socket is 0660 root:box-clients" \
	test "$(stat -c '%a %U:%G' "$BOX_SOCKET")" = "660 root:box-clients"

mkdir -p "$W/b"
cat >"$W/b/box.ini" <<EOF
[box]
name = grp-$n

[agent]
command = /bin/echo hello from the embedded box
workspace = $W/b
EOF
chown -R boxtest: "$W/b"
AS_USER_DIR=$W/b as_user boxtest "'$RB/boxctl' run" >out 2>err
rc=$?
check "run as boxtest (not in box-clients): exit 1 (got $rc)" test "$rc" -eq 1
check "… told to join box-clients, with the command and the user" \
	grep -qF "Join it (as root: usermod -aG box-clients boxtest; then log in again)" err
check "… naming the socket and the reason" \
	grep -qF "the boxd service at $BOX_SOCKET refuses you (Permission denied)" err
check "… and pointed at --embedded" grep -qF 'boxctl run --embedded' err
check "… and no embedded boxd was started" sh -c "! grep -q 'starting an embedded boxd' err"
[ "$rc" -eq 1 ] || diag "$(cat err)"

AS_USER_DIR=$W/b as_user boxtest "'$RB/boxctl' run --embedded" >out 2>err
rc=$?
check "run --embedded as boxtest: the box runs (exit 0, got $rc)" test "$rc" -eq 0
check "… its agent's output" grep -qx 'hello from the embedded box' out
check "… it says it started an embedded boxd" \
	grep -qxF 'box: --embedded: starting an embedded boxd for this box' err
check "… without a word about the service" sh -c "! grep -q 'refuses you' err"
[ "$rc" -eq 0 ] || diag "$(tail -n 5 err)"
tap_done
