#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-teardown-race.sh — boxd's teardown of BASE/ID never follows a symlink
# the owner swaps in. While the walk is inside BASE/ID/tmp (the agent's
# /tmp), the owner's box-test-swap exchanges a directory entry for a
# symlink to a file the walk must not touch (renameat2 RENAME_EXCHANGE), in
# the window BOX_TEST_TEARDOWN_DELAY_MS holds open after unlinkat found a
# directory. After teardown the file's mode is unchanged (a chmod through
# the name would have made it 0700). A root service boxd with a box owned by
# boxtest (the target is root's), and an ordinary user's embedded boxd (the
# target is another file of that user's).
. test/lib.sh
. test/integration/lib-run.sh
set -u

# boxd's pause at the directory; the swapper acts at a third of it. Long enough that a
# loaded machine (other tests beside this one) still wakes the swapper inside the window.
delay=3000
cp "$BOX_BIN/box-test-swap" "$RB/" && chmod 755 "$RB/box-test-swap"
cd "$W"
cat >race.ini <<EOF
[box]
name = c-race-$$

[agent]
command = /bin/sleep 60
workspace = $W
EOF
chmod 644 race.ini

# race LABEL RUN_PREFIX BASE TARGET: a detached box, the swapper in its tmp, stop, check.
# RUN_PREFIX runs a shell command as the owner ("as_boxtest" or "sh -c").
race() {
	local label=$1 as=$2 base=$3 target=$4 id dir
	id=$($as "BOX_TEST_TEARDOWN_DELAY_MS=$delay '$RB/boxctl' run -q -c race.ini --detach" 2>race.err)
	dir="$base/$id"
	if ! grep -qxE "[0-9a-f]{12}" <<<"$id" || [ ! -d "$dir/tmp" ]; then
		not_ok "$label: a detached box has BASE/ID/tmp"
		sed 's/^/#   /' race.err
		return
	fi
	ok "$label: a detached box has BASE/ID/tmp"
	rm -f swap.out
	$as "'$RB/box-test-swap' '$dir/tmp' '$target' $delay" >swap.out 2>swap.err &
	local swp=$!
	_run_pids+=("$swp")
	wait_for swap.out '^ready' || diag "the swapper is not ready: $(cat swap.err)"
	$as "'$RB/boxctl' stop $id" >/dev/null 2>&1
	check "$label: stopped" test $? = 0
	wait "$swp"
	check "$label: the owner swapped a directory for a symlink mid-walk" grep -qx swapped swap.out
	[ -s swap.err ] && sed 's/^/#   /' swap.err
	for _ in $(seq 300); do [ -e "$dir" ] || break; sleep 0.1; done
	check "$label: teardown removed BASE/ID" test ! -e "$dir"
	check "$label: the symlink's target keeps its mode (0600)" \
		test "$(stat -c %a "$target")" = 600
}

if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	export BOX_SOCKET="$W/c-race-$$.sock"
	BOX_TEST_TEARDOWN_DELAY_MS=$delay "$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
	sp=$!
	_run_pids+=("$sp")
	for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
	chmod 666 "$BOX_SOCKET"
	mkdir -m 700 rootonly
	install -m 600 /dev/null rootonly/target
	race "service boxd, box of boxtest" as_boxtest /run/box "$W/rootonly/target"
	kill -TERM "$sp"
	wait "$sp"
	rm -rf "/var/lib/box/$(id -u boxtest)/c-race-$$"

	export BOX_SOCKET="$W/no-service.sock"
	mkdir -m 755 u
	chown boxtest u
	as_boxtest "install -m 600 /dev/null u/target"
	race "embedded boxd of boxtest" as_boxtest "/tmp/box-$(id -u boxtest)" "$W/u/target"
	rm -rf "$(getent passwd boxtest | cut -d: -f6)/.local/state/box/c-race-$$"
elif [ "$(id -u)" -ne 0 ]; then
	mkdir -m 700 u
	install -m 600 /dev/null u/target
	base=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/box}
	race "embedded boxd of $(id -un)" "sh -c" "${base:-/tmp/box-$(id -u)}" "$W/u/target"
else
	skip "teardown race" "no boxtest user"
fi
tap_done
