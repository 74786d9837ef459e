#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts.sh — the decisions whole scripts raise in box-sh:
# `box-sh --policy P --home H --decisions OUT -c SCRIPT`, then the
# exact sequence of decision and outcome lines of OUT (seq.py: action,
# resource, operation, verdict / result) compared with the expected one; and
# denials: a refused command prints "box-shell: <command>: <message>" and
# exits 126, a refused read fails as the system call would
# ("cat: x: Permission denied" next to the policy message) and the script
# goes on.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
boxsh=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/box-sh
if [ ! -x "$boxsh" ]; then
	not_ok "box-sh is built ($boxsh)"
	tap_done
	exit 1
fi
tmp=$(mktemp -d /tmp/shdecide-scripts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
home=$(cd "$tmp" && pwd -P)
mkdir -p "$home/w/sub" "$home/w/tree/d"
printf 'x1\n' > "$home/w/a.txt"
printf 'hello\n' > "$home/w/f.txt"
printf 'no\n' > "$home/w/secret.txt"
printf '2\n' > "$home/w/tree/d/t2"
mkdir -p "$home/w/g"
printf 'xyz\n' > "$home/w/g/only.txt"
printf 'm\n' > "$home/w/mv-src"
cat > "$home/allow.dw" <<'EOF'
permit (principal, action, resource);
EOF
cat > "$home/deny.dw" <<'EOF'
@id("all") permit (principal, action, resource);
@id("no_rm") @description("rm is not for agents")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
@id("no_secret")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "~/w/secret*" };
EOF

# run POLICY SCRIPT: box-sh in ~/w; stdout, stderr, status and the sequence in $tmp/run.*
run() {
	rm -f "$tmp/run.jsonl"
	(cd "$home/w" && "$boxsh" --policy "$home/$1" --home "$home" --decisions "$tmp/run.jsonl" \
		-c "$2" > "$tmp/run.out" 2> "$tmp/run.err")
	echo $? > "$tmp/run.status"
	if [ -f "$tmp/run.jsonl" ]; then
		python3 "$here/seq.py" "$tmp/run.jsonl" > "$tmp/run.seq"
	else
		: > "$tmp/run.seq"
	fi
}

# expect_seq NAME SCRIPT < EXPECTED: the exact sequence under the allow-all policy.
expect_seq() {
	local name=$1 script=$2
	cat > "$tmp/want.seq"
	run allow.dw "$script"
	if cmp -s "$tmp/want.seq" "$tmp/run.seq"; then
		ok "$name"
	else
		not_ok "$name"
		diag "script: $script" "status $(cat "$tmp/run.status"), stderr: $(head -c 300 "$tmp/run.err")"
		diff "$tmp/want.seq" "$tmp/run.seq" | sed 's/^/#   /'
	fi
}

expect_seq "a builtin: one shell:exec and its status" 'echo hi' <<'EOF'
D shell:exec echo permit
R shell:exec echo status=0
EOF

# In a box /bin/sh and /usr/bin/bash are box's shell alias: by its path, a shell is the
# interpreter itself, decided as the shell it is (another spelling of `sh` is no bypass).
expect_seq "a shell named by its path is decided as that shell" \
	"/bin/sh -c 'echo hi'; /usr/bin/bash -c true" <<'EOF'
D shell:exec sh permit
D shell:exec echo permit
R shell:exec echo status=0
R shell:exec sh status=0
D shell:exec bash permit
D shell:exec true permit
R shell:exec true status=0
R shell:exec bash status=0
EOF

expect_seq "an assignment-only command is not decided" 'x=1; y=$x; echo "$y"' <<'EOF'
D shell:exec echo permit
R shell:exec echo status=0
EOF

expect_seq "a redirection and a read, each decided on its canonical path" \
	'cat ./sub/../a.txt > out.txt' <<'EOF'
D shell:exec cat permit
D fs:write ~/w/out.txt write_content permit
R fs:write ~/w/out.txt descriptor_issued
D fs:read ~/w/a.txt read_content permit
R fs:read ~/w/a.txt descriptor_issued
R shell:exec cat status=0
EOF

expect_seq "cd decides change_dir" 'cd sub' <<'EOF'
D shell:exec cd permit
D fs:read ~/w/sub change_dir permit
R fs:read ~/w/sub completed
R shell:exec cd status=0
EOF

expect_seq "a command substitution's command is decided on its own, first" \
	'echo "$(cat f.txt)"' <<'EOF'
D shell:exec cat permit
D fs:read ~/w/f.txt read_content permit
R fs:read ~/w/f.txt descriptor_issued
R shell:exec cat status=0
D shell:exec echo permit
R shell:exec echo status=0
EOF

expect_seq "a failed read is an error outcome" 'cat missing.txt; true' <<'EOF'
D shell:exec cat permit
D fs:read ~/w/missing.txt read_content permit
R fs:read ~/w/missing.txt error
R shell:exec cat status=1
D shell:exec true permit
R shell:exec true status=0
EOF

expect_seq "a rename is its legs: fs:read source, fs:move source, fs:move destination" \
	'mv mv-src mv-dst' <<'EOF'
D shell:exec mv permit
D fs:read ~/w/mv-dst read_metadata permit
R fs:read ~/w/mv-dst error
D fs:read ~/w/mv-src read_content permit
D fs:move ~/w/mv-src rename permit
D fs:move ~/w/mv-dst rename permit
R fs:read ~/w/mv-src completed
R fs:move ~/w/mv-src completed
R fs:move ~/w/mv-dst completed
R shell:exec mv status=0
EOF

expect_seq "a recursive delete is one decision per entry" 'rm -r tree' <<'EOF'
D shell:exec rm permit
D fs:read ~/w/tree read_metadata permit
R fs:read ~/w/tree completed
D fs:read ~/w/tree enumerate permit
R fs:read ~/w/tree descriptor_issued
D fs:read ~/w/tree/d enumerate permit
R fs:read ~/w/tree/d descriptor_issued
D fs:delete ~/w/tree/d/t2 remove_file permit
R fs:delete ~/w/tree/d/t2 completed
D fs:delete ~/w/tree/d remove_dir permit
R fs:delete ~/w/tree/d completed
D fs:delete ~/w/tree remove_dir permit
R fs:delete ~/w/tree completed
R shell:exec rm status=0
EOF

expect_seq "globbing a directory is enumerate, before the command" 'echo g/*.txt' <<'EOF'
D fs:read ~/w/g enumerate permit
R fs:read ~/w/g descriptor_issued
D shell:exec echo permit
R shell:exec echo status=0
EOF

expect_seq "grep -r decides a directory's files in a batch before opening them" 'grep -r xyz g' <<'EOF'
D shell:exec grep permit
D fs:read ~/w/g read_metadata permit
R fs:read ~/w/g completed
D fs:read ~/w/g enumerate permit
R fs:read ~/w/g descriptor_issued
D fs:read ~/w/g/only.txt read_content permit
R fs:read ~/w/g/only.txt descriptor_issued
R shell:exec grep status=0
EOF

# ---- denials ------------------------------------------------------------------------

run deny.dw 'rm a.txt'
if [ "$(cat "$tmp/run.status")" = 126 ] &&
	grep -qF "box-shell: rm a.txt: policy denied this operation on 'rm' [policy: no_rm]: rm is not for agents." "$tmp/run.err" &&
	[ -f "$home/w/a.txt" ]; then
	ok "a refused command prints box-shell: <command>: <message> and exits 126"
else
	not_ok "a refused command prints box-shell: <command>: <message> and exits 126"
	diag "status $(cat "$tmp/run.status")" "stderr: $(cat "$tmp/run.err")"
fi
if grep -q '^D shell:exec rm deny$' "$tmp/run.seq" && ! grep -q '^R shell:exec rm' "$tmp/run.seq"; then
	ok "a refused command is a deny line without an outcome"
else
	not_ok "a refused command is a deny line without an outcome"
	sed 's/^/#   /' "$tmp/run.seq"
fi

run deny.dw 'cat secret.txt; echo "after $?"'
if [ "$(cat "$tmp/run.status")" = 0 ] && [ "$(cat "$tmp/run.out")" = "after 1" ] &&
	grep -qF "box-shell: cat: policy denied this operation on '~/w/secret.txt' [policy: no_secret]." "$tmp/run.err" &&
	grep -qF "cat: secret.txt: Permission denied" "$tmp/run.err"; then
	ok "a refused read fails as EACCES with the policy message, the script goes on"
else
	not_ok "a refused read fails as EACCES with the policy message, the script goes on"
	diag "status $(cat "$tmp/run.status"), stdout: $(cat "$tmp/run.out")" "stderr: $(cat "$tmp/run.err")"
fi
if grep -q "^D fs:read ~/w/secret.txt read_content deny$" "$tmp/run.seq" &&
	! grep -q "^R fs:read ~/w/secret.txt" "$tmp/run.seq"; then
	ok "a refused read is a deny line without an outcome"
else
	not_ok "a refused read is a deny line without an outcome"
	sed 's/^/#   /' "$tmp/run.seq"
fi

tap_done
