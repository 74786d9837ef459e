#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — `make bench` entry for box-mcpd: the tools/call round trip through
# the broker against the same client talking to the same server directly, in one run.
#   direct      mcpclient spawns mcpserver on two pipes (no box) and times N sequential
#               tools/call round trips
#   box         a real box (boxctl run, embedded boxd) whose agent is the same mcpclient; it
#               runs the alias /run/box/bin/calc, so every call goes harness -> box-mcpd ->
#               box-policyd (mcp:call and the per-tool refinement calc::Action::"add", a rule
#               on its argument a: one DecideBatch, until_deny) -> the server in its own
#               sandbox -> box-mcpd -> harness (and a Record of the outcome to box-policyd);
#               once with [box] history_sync = off (target: added p50 <= 100 us) and once, in
#               a second box, with history_sync = always (reported). The policy has a temporal
#               call budget (never reached), so box-policyd keeps a history and the setting
#               matters: `always` fsyncs it before each answer.
# Each box run is compared with a direct run just before it. Printed: p50/p90/p99 of both
# sides, the added p50 and p90 in microseconds and the ratio of the p50s, with MET or MISSED;
# exits 0 (it reports, it does not gate). Every reply is checked (the sum of a and b) and a
# call whose a the policy forbids must come back -32001 from the broker (the server itself
# answers it when direct); a wrong result is reported instead of a time.
#   --smoke   make check's short run (bench/mcp/smoke.sh): 200 calls, TAP lines; fails when a
#             box cannot run or a result, the denial or the decision log is wrong — never on
#             a ratio. As root it also runs the off box as the ordinary user boxtest.
# Env: BENCH_MCP_CALLS (timed calls, default 1000), BENCH_MCP_DIR (default /var/tmp; the
# boxes' state, hence the history that `always` fsyncs, lives there).
# Trusts: nothing; it is a benchmark.
set -u
BENCH_NAME=mcp
# shellcheck source=bench/lib-smoke.sh
. "$(dirname "$0")/../lib-smoke.sh"

if $smoke; then
	n=200 warm=20
else
	n=${BENCH_MCP_CALLS:-1000} warm=50
fi
deny_a=5000000

work=$(mktemp -d "${BENCH_MCP_DIR:-/var/tmp}/mcp-bench.XXXXXX") || exit 1
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
say "== bench/mcp: tools/call through box-mcpd vs the same client and server directly ($n calls)"
for p in mcpclient mcpserver; do
	if [ ! -x "$BOX_BUILD/bench/mcp/$p" ]; then
		bad "$p is built ($BOX_BUILD/bench/mcp/$p)"
		finish
	fi
	cp "$BOX_BUILD/bench/mcp/$p" "$work/$p" && chmod 755 "$work/$p"
done
# The box's programs, copied where an ordinary user can run them (boxctl finds its helpers
# next to itself).
mkdir -p "$work/bin"
for p in boxctl boxd box-trampoline box-policyd box-gateway box-clientd box-recheck box-alias \
	box-shell box-mcpd; do
	if [ ! -x "$BOX_BIN/$p" ]; then
		bad "$p is built ($BOX_BIN/$p)"
		finish
	fi
	cp "$BOX_BIN/$p" "$work/bin/$p"
done
chmod 755 "$work/bin" "$work"/bin/*

users=$(id -un)
if $smoke && [ "$(id -u)" -eq 0 ] && id boxtest >/dev/null 2>&1; then
	users="$users boxtest"
elif $smoke && [ "$(id -u)" -eq 0 ]; then
	echo "ok - mcp: a box as boxtest # skip the user boxtest does not exist (make deps creates it)"
fi

# The policy: the server may start, calc's requests are permitted, the per-tool rule refines
# every tools/call of add (no match: permitted, cause not_refined; a >= 1000000: denied), and a
# temporal budget on mcp:call keeps a history for history_sync to act on.
cat >"$work/policy.cedar" <<'EOF'
@id("spawn_calc")
permit (principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "mcpserver" };

@id("calc_calls")
permit (principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "calc" };

@id("add_limit")
@description("add takes a below 1000000")
forbid (principal, action == calc::Action::"add", resource)
when { context.input.a >= 1000000 };

@id("call_budget")
@description("at most 1000000 MCP calls an hour")
forbid (principal, action == Box::Action::"mcp:call", resource)
when temporal {
  (count for (t: Timepoint). where formerly within 1h
    (Box::Action::"mcp:call"::request{ input.server: "calc" } && tp(t))) > 1000000
};
EOF
chmod 644 "$work/policy.cedar"

# mkbox USER NAME SYNC: $work/NAME.ini, its workspace and state dir the user's.
mkbox() {
	local u=$1 name=$2 sync=$3
	mkdir -p "$work/$name.ws" "$work/$name.state"
	chown "$u:" "$work/$name.ws" "$work/$name.state"
	cat >"$work/$name.ini" <<EOF
[box]
name = $name
policy = policy.cedar
history_sync = $sync
state_dir = $work/$name.state/box
timeout = 600s

[agent]
command = $work/mcpclient -n $n -w $warm -d $deny_a -- /run/box/bin/calc
workspace = $work/$name.ws

[mcp.calc]
type = stdio
alias = calc
command = $work/mcpserver

; a sanitizer build's server runs under the box's seccomp filter, where LeakSanitizer cannot
[mcp.calc.env]
ASAN_OPTIONS = detect_leaks=0
EOF
	chmod 644 "$work/$name.ini"
}

# run_box USER NAME: boxctl run as USER; stdout in NAME.out, stderr in NAME.err; its status.
run_box() {
	local u=$1 name=$2 cmd
	cmd="cd '$work' && BOX_SOCKET='$work/no-service.sock' ASAN_OPTIONS='$ASAN_OPTIONS'"
	cmd="$cmd timeout -k 5 900 '$work/bin/boxctl' run -q -c '$work/$name.ini'"
	if [ "$u" = "$(id -un)" ]; then
		(unset XDG_STATE_HOME && sh -c "$cmd") >"$work/$name.out" 2>"$work/$name.err"
	else
		su -s /bin/sh "$u" -c "unset XDG_RUNTIME_DIR XDG_STATE_HOME && $cmd" \
			>"$work/$name.out" 2>"$work/$name.err"
	fi
}

# run_direct NAME: the same client and server, no box.
run_direct() {
	(cd "$work" && timeout -k 5 900 "$work/mcpclient" -n "$n" -w "$warm" -d "$deny_a" -- \
		"$work/mcpserver") >"$work/$1.out" 2>"$work/$1.err"
}

# field FILE KEY: KEY=value of the client's "calls" line.
field() {
	awk -v k="$2" '$1 == "mcpclient:" && $2 == "calls" {
		for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
	}' "$1"
}
# line FILE WHAT: the rest of the client's "WHAT" line.
line() {
	awk -v w="$2" '$1 == "mcpclient:" && $2 == w { sub(/^mcpclient: [^ ]+ /, ""); print; exit }' "$1"
}

# check_client LABEL FILE BOXED: the client's own report is right; 0 when it is.
check_client() {
	local label=$1 f=$2 boxed=$3 rc=0 want_deny
	if [ "$(line "$f" initialize)" = "server=bench-mcp protocol=2025-06-18" ]; then
		$smoke && ok "$label: initialize answered by the server (bench-mcp, 2025-06-18)"
	else
		bad "$label: initialize answered by the server: got '$(line "$f" initialize)'"
		rc=1
	fi
	if [ "$(line "$f" tools/list)" = "tools=add" ]; then
		$smoke && ok "$label: tools/list lists the typed tool add"
	else
		bad "$label: tools/list lists add: got '$(line "$f" tools/list)'"
		rc=1
	fi
	if [ "$(line "$f" first)" = "add(1,4) -> 5" ] && [ "$(field "$f" n)" = "$n" ] &&
		[ "$(field "$f" wrong)" = 0 ]; then
		$smoke && ok "$label: $((n + warm)) tools/call add, every sum right (add(1,4) -> 5 first)"
	else
		bad "$label: tools/call results: first '$(line "$f" first)', calls '$(line "$f" calls)'"
		rc=1
	fi
	if $boxed; then
		want_deny="a=$deny_a code=-32001 message=policy denied this operation on 'calc/add'"
		want_deny="$want_deny [policy: add_limit]: add takes a below 1000000."
	else
		want_deny="a=$deny_a code=none result=$((deny_a + 1))"
	fi
	if [ "$(line "$f" denied)" = "$want_deny" ]; then
		if $boxed; then
			$smoke && ok "$label: add with a = $deny_a is denied by the broker:" \
				"-32001 with add_limit's message"
		else
			$smoke && ok "$label: … which the server itself answers ($((deny_a + 1)))"
		fi
	else
		bad "$label: the call with a = $deny_a: got '$(line "$f" denied)', want '$want_deny'"
		rc=1
	fi
	if [ "$(line "$f" exit)" = "status=0" ]; then
		$smoke && ok "$label: the server exits 0 when the client closes its stdin"
	else
		bad "$label: the server's exit: '$(line "$f" exit)'"
		rc=1
	fi
	return $rc
}

# check_log LABEL NAME: decisions.jsonl has both Decides for every call (source box-mcpd).
check_log() {
	local label=$1 name=$2 got want
	got=$(python3 - "$work/$name.state/box/decisions.jsonl" <<'PY'
import json, sys
c = {"call": 0, "refined": 0, "denied": 0, "other": 0}
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for l in lines:
    d = json.loads(l)
    if "record" in d or d.get("source") != "box-mcpd":
        continue
    a, v, cause = d.get("action"), d.get("verdict"), d.get("cause")
    if a == "mcp:call" and d["input"].get("method") == "tools/call" and v == "permit":
        c["call"] += 1
    elif a == 'calc::Action::"add"' and v == "permit" and cause == "not_refined":
        c["refined"] += 1
    elif a == 'calc::Action::"add"' and v == "deny" and d.get("rules") == ["add_limit"]:
        c["denied"] += 1
    elif a != "shell:spawn" and not (a == "mcp:call" and d["input"].get("method") == "tools/list"):
        c["other"] += 1
print("call=%(call)d refined=%(refined)d denied=%(denied)d other=%(other)d" % c)
PY
)
	want="call=$((n + warm + 1)) refined=$((n + warm)) denied=1 other=0"
	if [ "$got" = "$want" ]; then
		$smoke && ok "$label: boxctl's decision log: mcp:call and the refinement" \
			"calc::Action::\"add\" (not_refined) for each call, the denial by add_limit"
	else
		bad "$label: decisions.jsonl: got '$got', want '$want'"
		return 1
	fi
	return 0
}

declare -A good
# direct NAME LABEL: a direct run, checked.
direct() {
	run_direct "$1"
	if check_client "$2" "$work/$1.out" false; then good[$1]=true; else
		good[$1]=false
		sed 's/^/#   /' "$work/$1.err" | head -5
	fi
}
# boxed USER NAME SYNC: a box run, checked.
boxed() {
	local u=$1 name=$2 sync=$3 rc label
	label="box ($u, history_sync = $sync)"
	mkbox "$u" "$name" "$sync"
	run_box "$u" "$name"
	rc=$?
	good[$name]=false
	if [ "$rc" != 0 ]; then
		bad "$label: the box ran (boxctl exit $rc)"
		grep -v '^box: ' "$work/$name.err" | head -10 | sed 's/^/#   /'
		return
	fi
	$smoke && ok "$label: the box ran (boxctl exit 0)"
	if check_client "$label" "$work/$name.out" true && check_log "$label" "$name"; then
		good[$name]=true
	else
		grep -v '^box: ' "$work/$name.err" | head -10 | sed 's/^/#   /'
	fi
}

me=$(id -un)
direct direct1 "direct (before the off box)"
boxed "$me" "bmcp-off-$$" off
direct direct2 "direct (before the always box)"
boxed "$me" "bmcp-always-$$" always
for u in $users; do
	[ "$u" = "$me" ] && continue
	boxed "$u" "bmcp-$u-$$" off
done

# The report.
us() { awk -v a="$1" 'BEGIN { printf "%.1f", a }'; }
sub_us() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
sides() {
	printf 'p50 %7s us  p90 %7s us  p99 %7s us' "$(us "$(field "$1" p50_us)")" \
		"$(us "$(field "$1" p90_us)")" "$(us "$(field "$1" p99_us)")"
}
report() {
	local d=$1 b=$2 label=$3 target=$4 df bf added v
	df=$work/$d.out bf=$work/$b.out
	if [ "${good[$d]}" != true ] || [ "${good[$b]}" != true ]; then
		say "$label: no ratio (a run failed or a result was wrong; see above)"
		return
	fi
	added=$(sub_us "$(field "$bf" p50_us)" "$(field "$df" p50_us)")
	say "$(printf '  %-30s %s' "direct (same run)" "$(sides "$df")")"
	if [ "$target" = yes ]; then
		v=$(awk -v a="$added" 'BEGIN { print a <= 100 ? "MET" : "MISSED" }')
		v="(target added p50 <= 100 us: $v)"
	else
		v="(reported)"
	fi
	say "$(printf '  %-30s %s' "$label" "$(sides "$bf")")"
	say "$(printf '  %-30s added p50 %s us  added p90 %s us  ratio p50 %sx  %s' "" "$added" \
		"$(sub_us "$(field "$bf" p90_us)" "$(field "$df" p90_us)")" \
		"$(ratio "$(field "$bf" p50_us)" "$(field "$df" p50_us)")" "$v")"
}
report direct1 "bmcp-off-$$" "box-mcpd, history_sync = off" yes
report direct2 "bmcp-always-$$" "box-mcpd, history_sync = always" no
finish
