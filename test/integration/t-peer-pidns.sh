#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-peer-pidns.sh — boxd refuses every client whose PID namespace is not its
# own (a process inside a sandbox that reached a boxd socket through a grant):
# a service boxd (root) and an embedded boxd's BASE/ID/boxd.sock, a client in
# a new PID namespace (root: unshare -p; boxtest: unshare -U -p) gets the
# refusal and exits 1, a client in boxd's namespace is served. Both ways of
# telling: SO_PEERPIDFD + PIDFD_GET_PID_NAMESPACE, and the /proc fallback
# (BOX_TEST_NO_PEERPIDFD).
. test/lib.sh
. test/integration/lib-run.sh
set -u

refusal="boxd refuses clients from another PID namespace"
cd "$W"
if ! unshare -p -f true 2>/dev/null && ! unshare -U -p -f -r true 2>/dev/null; then
	skip "PID namespace clients" "unshare cannot make a PID namespace here"
	tap_done
	exit 0
fi

# foreign_ps SOCKET [as_boxtest]: boxctl ps from a new PID namespace; sets rc, out, err.
foreign_ps() {
	if [ "${2:-}" = boxtest ]; then
		out=$(as_boxtest "BOX_SOCKET='$1' unshare -U -p -f -r '$RB/boxctl' ps" 2>ferr)
	elif [ "$(id -u)" -eq 0 ]; then
		out=$(BOX_SOCKET="$1" unshare -p -f --mount-proc "$RB/boxctl" ps 2>ferr)
	else
		out=$(BOX_SOCKET="$1" unshare -U -p -f -r "$RB/boxctl" ps 2>ferr)
	fi
	rc=$?
}

if [ "$(id -u)" -eq 0 ]; then
	for mode in pidfd proc; do
		sock="$W/c-svc-$mode.sock"
		if [ $mode = proc ]; then
			BOX_TEST_NO_PEERPIDFD=1 "$RB/boxd" --listen "$sock" 2>"svc-$mode.log" &
		else
			"$RB/boxd" --listen "$sock" 2>"svc-$mode.log" &
		fi
		sp=$!
		_run_pids+=("$sp")
		for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
		chmod 666 "$sock"
		BOX_SOCKET="$sock" "$RB/boxctl" ps >ps.out 2>ps.err
		check "service ($mode): a client of boxd's PID namespace is served" \
			test $? = 0 -a "$(head -1 ps.out | cut -f1)" = NAME
		foreign_ps "$sock"
		check "service ($mode): root in a new PID namespace is refused (exit 1)" test "$rc" = 1
		check "service ($mode): the refusal says why" grep -q "$refusal" ferr
		if have_boxtest; then
			foreign_ps "$sock" boxtest
			check "service ($mode): boxtest in new user+PID namespaces is refused (exit 1)" \
				test "$rc" = 1
			check "service ($mode): boxtest is told why" grep -q "$refusal" ferr
			if [ "$rc" != 1 ] || ! grep -q "$refusal" ferr; then
				diag "boxtest's boxctl ps in new namespaces: exit $rc, stderr: $(tr '\n' ' ' <ferr)"
			fi
			as_boxtest "BOX_SOCKET='$sock' '$RB/boxctl' ps" >ps.out 2>&1
			check "service ($mode): boxtest in boxd's namespace is served" test $? = 0
		else
			skip "service ($mode): boxtest" "no boxtest user"
		fi
		check "service ($mode): boxd logs the refusal" grep -q "another PID namespace" \
			"svc-$mode.log"
		kill -TERM "$sp"
		wait "$sp"
	done
else
	skip "service boxd" "needs root"
fi

# An embedded boxd: its box's BASE/ID/boxd.sock, from a new PID namespace.
cat >emb.ini <<EOF
[box]
name = c-peer-emb-$$

[agent]
command = /bin/sleep 60
workspace = $W
EOF
chmod 644 emb.ini
# emb_case WHO: run a detached embedded box as WHO (me or boxtest), then ps from outside.
emb_case() {
	local who=$1 base id sock
	if [ "$who" = boxtest ]; then
		id=$(as_boxtest "'$RB/boxctl' run -q -c emb.ini --detach" 2>emb.err)
		base=/tmp/box-$(id -u boxtest)
	else
		id=$("$RB/boxctl" run -q -c emb.ini --detach 2>emb.err)
		if [ -n "${XDG_RUNTIME_DIR:-}" ]; then base=$XDG_RUNTIME_DIR/box
		elif [ "$(id -u)" -eq 0 ]; then base=/run/box
		else base=/tmp/box-$(id -u); fi
	fi
	sock="$base/$id/boxd.sock"
	if ! grep -qxE "[0-9a-f]{12}" <<<"$id" || [ ! -S "$sock" ]; then
		not_ok "embedded ($who): a detached box listens on BASE/ID/boxd.sock"
		sed 's/^/#   /' emb.err
		return
	fi
	ok "embedded ($who): a detached box listens on BASE/ID/boxd.sock"
	foreign_ps "$sock" "$([ "$who" = boxtest ] && echo boxtest)"
	check "embedded ($who): a client in a new PID namespace is refused (exit 1)" test "$rc" = 1
	check "embedded ($who): the refusal says why" grep -q "$refusal" ferr
	check "embedded ($who): the refused client saw no box" test "$(grep -c "$id" <<<"$out")" = 0
	if [ "$who" = boxtest ]; then
		as_boxtest "'$RB/boxctl' ps" >ps.out 2>&1
		check "embedded ($who): boxd's namespace sees its box" grep -q "$id" ps.out
		as_boxtest "'$RB/boxctl' stop $id" >/dev/null 2>&1
	else
		"$RB/boxctl" ps >ps.out 2>&1
		check "embedded ($who): boxd's namespace sees its box" grep -q "$id" ps.out
		"$RB/boxctl" stop "$id" >/dev/null 2>&1
	fi
	check "embedded ($who): stopped" test $? = 0
	for _ in $(seq 100); do [ -e "$base/$id" ] || break; sleep 0.1; done
}
emb_case me
if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	emb_case boxtest
	rm -rf "$(getent passwd boxtest | cut -d: -f6)/.local/state/box/c-peer-emb-$$"
fi
tap_done
