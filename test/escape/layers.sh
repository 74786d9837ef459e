#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# layers.sh — a required layer that is missing refuses the start (docs/sandbox.md,
# docs/box.ini.5.md [box] require), simulated with BOX_TEST_ABSENT / BOX_TEST_LANDLOCK_ABI
# (read by box-trampoline from its own environment; they can only make a layer
# look absent). Also: a plan the trampoline must refuse (undecodable, unknown
# field, invalid field) never starts a box.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
BOX_BIN=$(cd "$BOX_BIN" && pwd) # the cases run in other directories
export BOX_BIN

run=$BOX_BIN/box-sandbox-run
T=$(mktemp -d /tmp/boxlayers.XXXXXX)
chmod 755 "$T"
export BOX_SANDBOX_RUN_BASE=$T
mkdir -p "$T/bin" "$T/ws"
cp "$BOX_BIN/box-escape-probe" "$T/bin/probe"
P=$T/bin/probe
base=(--exec "$T/bin" --write "$T/ws" --workspace "$T/ws")

# refused NAME EXPECTED-MESSAGE [env...] -- [options] -- ARGV: exit 1, message, no workload.
refused() {
	local name=$1 want=$2
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	local out rc
	out=$(cd "$T/ws" && env "${envs[@]}" timeout 30 "$run" "$@" </dev/null 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [[ $out == *"$want"* ]]; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		diag "$out"
	fi
}

# starts NAME [env...] -- [options] -- ARGV: the workload runs and exits 0.
starts() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	local out rc
	out=$(cd "$T/ws" && env "${envs[@]}" timeout 30 "$run" "$@" </dev/null 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then ok "$name"; else not_ok "$name (exit $rc)"; diag "$out"; fi
}

starts "all layers present: the box starts" X=1 -- "${base[@]}" -- "$P" caps
refused "landlock absent and required: refused" \
	"sandbox setup failed at landlock: Landlock is not available" \
	BOX_TEST_ABSENT=landlock -- "${base[@]}" -- "$P" true
starts "landlock absent, not required: starts" BOX_TEST_ABSENT=landlock -- \
	--no-require-landlock "${base[@]}" -- "$P" caps
refused "Landlock ABI 0 and required: refused" "sandbox setup failed at landlock" \
	BOX_TEST_LANDLOCK_ABI=0 -- "${base[@]}" -- "$P" true
starts "Landlock ABI 1: rename across directories is EXDEV" BOX_TEST_LANDLOCK_ABI=1 -- \
	"${base[@]}" -- "$P" rename-xdir "$T/ws" EXDEV
starts "Landlock ABI 2: rename across directories works (REFER)" BOX_TEST_LANDLOCK_ABI=2 -- \
	"${base[@]}" -- "$P" rename-xdir "$T/ws" ok
refused "BOX_TEST_LANDLOCK_ABI out of range: refused" "sandbox setup failed at plan" \
	BOX_TEST_LANDLOCK_ABI=8 -- "${base[@]}" -- "$P" true
refused "seccomp absent and required: refused" \
	"sandbox setup failed at seccomp: seccomp filters are not available" \
	BOX_TEST_ABSENT=seccomp -- "${base[@]}" -- "$P" true
starts "seccomp absent, not required: starts without a filter" BOX_TEST_ABSENT=seccomp -- \
	--no-require-seccomp "${base[@]}" -- "$P" caps no-seccomp
refused "both absent: refused" "sandbox setup failed at landlock" \
	BOX_TEST_ABSENT=seccomp,landlock -- "${base[@]}" -- "$P" true
refused "an unknown layer name is refused (a typo must not pass)" "unknown layer" \
	BOX_TEST_ABSENT=landlok -- "${base[@]}" -- "$P" true
if [ "$(id -u)" -eq 0 ] && [ -e /sys/fs/cgroup/pids/cgroup.procs ]; then
	refused "cgroup v1 absent with pids_max as root: refused" \
		"sandbox setup failed at limits: the cgroup v1 hierarchy is not available" \
		BOX_TEST_ABSENT=cgroup-v1 -- --pids-max 20 "${base[@]}" -- "$P" true
	starts "cgroup v1 present with pids_max as root: starts" X=1 -- \
		--pids-max 20 "${base[@]}" -- "$P" forkbomb 20
else
	skip "cgroup v1 absent with pids_max: refused" "needs root and a v1 pids hierarchy"
	skip "cgroup v1 present with pids_max: starts" "needs root and a v1 pids hierarchy"
fi

# Plans the trampoline must refuse before any step.
head -c 300 /dev/urandom >"$T/garbage"
refused "an undecodable plan: refused" "sandbox setup failed at plan" X=1 -- \
	--raw-plan "$T/garbage" "${base[@]}" -- "$P" true
# --dump-plan keeps the plan's runtime dir (printed) so the plan can be replayed.
rtdir=$("$run" --dump-plan "$T/plan" "${base[@]}" -- "$P" true)
cp "$T/plan" "$T/plan-unknown"
printf '\x98\x06\x01' >>"$T/plan-unknown" # field 99, varint 1
refused "a plan with an unknown field: refused" "sandbox setup failed at plan" X=1 -- \
	--raw-plan "$T/plan-unknown" "${base[@]}" -- "$P" true
starts "the dumped plan itself starts" X=1 -- --raw-plan "$T/plan" "${base[@]}" -- "$P" true
cp "$T/plan" "$T/plan-bad"
printf '\x3a\x03a/b' >>"$T/plan-bad" # workspace = "a/b" (relative)
refused "a plan with a relative workspace: refused" "sandbox setup failed at plan" X=1 -- \
	--raw-plan "$T/plan-bad" "${base[@]}" -- "$P" true

rm -rf "$T"
tap_done
