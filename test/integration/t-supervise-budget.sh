#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise-budget.sh — a temporal write budget (docs/box-policy.5.md, Temporal conditions)
# enforced against a supervised python3's writes, in real boxes, as the caller and as boxtest:
# the budget counts fs:write responses (the outcomes the supervisor records: an open's fd
# issued), so of five files python writes under budget/ the first three are written and the
# fourth and fifth refused (EACCES, no file); a write the policy refuses outright (ro/)
# records no outcome, a permitted one that fails (a directory) an error event, and neither
# spends anything; decisions.jsonl holds the responses with source
# "supervisor" and result descriptor_issued, and an error record for a permitted open that
# failed. python3 is the host python3 of the python alias (no [tool.python3]).
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-supervise.sh
set -u
trap run_cleanup EXIT
cd "$W"

require_shell_built
boxtest_or_skip "a write budget against supervised python as boxtest" || :

# sup_record FILE KIND ACTION PATH_SUFFIX [RESULT]: an outcome line of source supervisor.
sup_record() {
	python3 - "$@" <<'PY'
import json, sys
path, kind, action, suffix = sys.argv[1:5]
result = sys.argv[5] if len(sys.argv) > 5 else None
for l in open(path).read().splitlines():
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("record") != kind or d.get("source") != "supervisor" or d.get("action") != action:
        continue
    if not str(d.get("input", {}).get("path", "")).endswith(suffix):
        continue
    if result is None or d.get("output", {}).get("result") == result:
        sys.exit(0)
sys.exit(1)
PY
}

# no_record FILE PATH_SUFFIX: no fs:write outcome of that path.
no_record() { ! sup_record "$1" response fs:write "$2" && ! sup_record "$1" error fs:write "$2"; }

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-supbudget-$u-$$
	mkdir -p "$D/steps" "$P/budget" "$P/ro" "$P/adir"
	cat >"$D/budget.cedar" <<'EOF'
@id("all")
permit (principal, action, resource);

@id("ro_dir")
forbid (principal, action == Box::Action::"fs:write", resource)
when { context.input.path like "*/ro/*" };

@id("write_budget") @description("at most 3 files written an hour")
forbid (principal, action == Box::Action::"fs:write", resource)
when { context.input.path like "*/budget/*" && temporal {
    (count for (t: Timepoint). where formerly within 1h
        (Box::Action::"fs:write"::response{ output.result: Box::FsResponseResult::"descriptor_issued" } && tp(t))) >= 3
} };
EOF
	cat >"$D/budget.py" <<'EOF'
import errno, os
def attempt(key, fn):
    try:
        fn()
        print("%s=ok" % key, flush=True)
    except OSError as e:
        print("%s=error-%s" % (key, errno.errorcode.get(e.errno, e.errno)), flush=True)
def write(p):
    with open(p, "w") as f:
        f.write("x")
attempt("refused", lambda: write("ro/x"))
attempt("isdir", lambda: write("adir"))
for i in range(5):
    attempt("w%d" % i, lambda: write("budget/f%d" % i))
print("files=" + ",".join(sorted(os.listdir("budget"))), flush=True)
EOF
	cat >"$D/steps/b.py" <<EOF
[
 ("budget", ["python3", "$D/budget.py"]),
]
EOF
	sup_box_ini "$name" budget.cedar b.py "read_file = $D/budget.py"
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/budget.cedar"
	out=$D/b.out err=$D/b.err
	box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	kv() { step_kv "$out" budget "$1"; }
	is() { # NAME KEY VALUE
		check_step "$u: $1 ($2=$(kv "$2"))" "$out" budget test "$(kv "$2")" = "$3"
	}
	is "a write the policy refuses outright" refused error-EACCES
	is "a permitted open that fails (a directory)" isdir error-EISDIR
	is "write 1 of the budget" w0 ok
	is "write 2" w1 ok
	is "write 3" w2 ok
	is "write 4: over the budget, refused" w3 error-EACCES
	is "write 5: still refused" w4 error-EACCES
	is "… only the three budgeted files exist" files f0,f1,f2

	forget_default_state "$u" "$name"
	dec=$D/state/$name/decisions.jsonl
	check "$u: decisions.jsonl: the budget's denial (source supervisor)" \
		sup_decision "$dec" fs:write deny /proj/budget/f3 write_content
	check "$u: … the outcome of a budgeted write: response, descriptor_issued" \
		sup_record "$dec" response fs:write /proj/budget/f2 descriptor_issued
	check "$u: … a permitted open that failed: an error record" \
		sup_record "$dec" error fs:write /proj/adir
	check "$u: … a refused write has no outcome" no_record "$dec" /proj/ro/x
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
