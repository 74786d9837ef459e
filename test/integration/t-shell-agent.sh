#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-agent.sh — a coding agent's day through box's shell, in real boxes (boxctl run,
# embedded boxd), as the caller and as boxtest: the agent (python3, not a
# shell) runs `bash -c …` = the alias -> box-shell: cat, grep -rn, sed -i, find, a git repo
# (init, status, diff, commit) with git as [tool.git], a build with make and cc as tools and
# the built program under an agent exec entry; `type`/`command -v`/`which` on a tool; stdin
# streamed both ways (`printf 'a\nb\n' | bash -c 'sort -r'`, a reply read while stdin is
# still open, through a tool too); a long-running tool's first line arrives before it ends
# (alone and through a pipe); `head` closing a pipe ends a tool; a spawn the policy denies
# never starts (a marker file proves it, and the same program permitted writes it); a
# refused own command (rm -rf) and a program no [tool]/exec entry covers (126, naming the
# line to add); 127; FOO=1 and `export` in the command line reach a tool, inherited
# variables do not; a tool's exit status is its status and is recorded (a temporal rule on
# it then denies); everyday file operations through box-shell's own commands (mkdir cp
# cp -p mv ln chmod touch ls -l tee redirections heredoc find -exec xargs rm), none of them
# leaving a setuid/setgid bit; system() from a C program and a #!/bin/sh script reach
# box-shell; the decisions in decisions.jsonl (source box-shell) and `boxctl log`; the
# disclosure lists the tools (no "inactive [tool" line).
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built
boxtest_or_skip "the agent's day as boxtest" || :
cc_path=$(readlink -f /usr/bin/cc)
make_path=$(readlink -f /usr/bin/make)

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-ag-$u
	mkdir -p "$P/src" "$P/docs" "$P/bin" "$D/steps"
	printf '#include <stdio.h>\nint\nmain(void)\n{\n\tprintf("hello-from-build\\n");\n\treturn 0;\n}\n' >"$P/src/main.c"
	printf '/* util */\nint needle_e2e = 42;\n' >"$P/src/util.c"
	echo old-text >"$P/docs/readme.txt"
	echo sysfile-content >"$P/docs/sysfile.txt"
	echo script-input-content >"$P/docs/script-input.txt"
	printf 'bin/hello: src/main.c\n\tcc -o bin/hello src/main.c\n' >"$P/Makefile"
	printf 'bin/\n' >"$P/.gitignore"
	printf '#!/bin/sh\n# mark ARG FILE: proves it ran by creating FILE; exits 3 for ARG fail3\n: > "$2"\necho "marked $1"\n[ "$1" = fail3 ] && exit 3\nexit 0\n' >"$P/bin/mark"
	printf '#!/bin/sh\necho "script-ran $1 $2"\ncat docs/script-input.txt\n' >"$P/bin/script.sh"
	cat >"$P/slow.py" <<'EOF'
import time
print("first-line", flush=True)
time.sleep(3)
print("last-line", flush=True)
EOF
	cat >"$D/sysprog.c" <<'EOF'
/* sysprog CMD: system(CMD), exit with its status — a C program whose shell is /bin/sh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
int
main(int argc, char **argv)
{
	int r;

	if (argc != 2)
		return 2;
	fflush(stdout);
	r = system(argv[1]);
	if (r == -1 || !WIFEXITED(r))
		return 99;
	return WEXITSTATUS(r);
}
EOF
	cc -O1 -o "$P/bin/sysprog" "$D/sysprog.c" || not_ok "$u: sysprog.c compiles on the host"
	chmod 755 "$P/bin/mark" "$P/bin/script.sh" "$P/bin/sysprog"
	cat >"$D/shell.cedar" <<'EOF'
@id("allow_all")
permit (principal, action, resource);

@id("no_marker_deny")
@description("mark may not run with deny")
forbid (principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program_path like "*/bin/mark" && context.input has arg1 &&
       context.input.arg1 == "deny" };

@id("after_failed_mark")
@description("no mark after a mark that exited 3")
forbid (principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program_path like "*/bin/mark" && context.input has arg1 &&
       context.input.arg1 == "after" &&
       temporal { formerly within 10m Box::Action::"shell:spawn"::response{ output.status: 3 } } };

@id("no_rm_rf")
@description("recursive deletes are not allowed")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" && context.input has arg1 && context.input.arg1 == "-rf" };
EOF
	gitenv="GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@box.test GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@box.test"
	cat >"$D/steps/agent.py" <<EOF
[
 ("cat", ["bash", "-c", "cat docs/readme.txt"]),
 ("grep", ["bash", "-c", "grep -rn needle_e2e ."]),
 ("sed", ["bash", "-c", "sed -i 's/old-text/new-text/' docs/readme.txt && cat docs/readme.txt"]),
 ("find", ["bash", "-c", "find . -name '*.c' | sort"]),
 ("git_init", ["bash", "-c", "git init -q && git add -A && $gitenv git commit -qm initial && git log --oneline | wc -l"]),
 ("git_status", ["bash", "-c", "echo '/* changed */' >> src/util.c && git status --short"]),
 ("git_diff", ["bash", "-c", "git diff --stat"]),
 ("git_commit", ["bash", "-c", "export $gitenv; git commit -qam second-commit && git log --format=%s | head -1"]),
 ("git_pipe", ["bash", "-c", "git log --format=c:%s | grep -c ^c:"]),
 ("make", ["bash", "-c", "make && ./bin/hello"]),
 ("cc", ["bash", "-c", "cc -O0 -o bin/hello2 src/main.c && ./bin/hello2"]),
 ("type_git", ["bash", "-c", "type git"]),
 ("cmdv_git", ["bash", "-c", "command -v git"]),
 ("which_git", ["bash", "-c", "which git"]),
 ("type_cd", ["bash", "-c", "type cd"]),
 ("sort_stdin", ["bash", "-c", "sort -r"], {"stdin": "a\nb\n"}),
 ("echo_stream", ["bash", "-c", "while read l; do echo got-\$l; done"],
  {"kind": "echo", "lines": ["x", "y", "z"], "answer": "got-%s"}),
 ("tool_stream", ["bash", "-c", "python3 -u -c 'import sys\nfor l in sys.stdin: print(\"t-\" + l.strip(), flush=True)'"],
  {"kind": "echo", "lines": ["p", "q"], "answer": "t-%s"}),
 ("slow", ["bash", "-c", "python3 -u slow.py"], {"kind": "stream"}),
 ("slow_pipe", ["bash", "-c", "python3 -u slow.py | cat"], {"kind": "stream"}),
 ("sigpipe", ["bash", "-c", "python3 -c 'while True: print(\"y\")' | head -3"], {"timeout": 30}),
 ("mark_deny", ["bash", "-c", "bin/mark deny denied.marker"]),
 ("mark_ok", ["bash", "-c", "bin/mark ok allowed.marker"]),
 ("mark_after1", ["bash", "-c", "bin/mark after after1.marker"]),
 ("mark_fail3", ["bash", "-c", "bin/mark fail3 fail3.marker"]),
 ("mark_after2", ["bash", "-c", "bin/mark after after2.marker"]),
 ("rm_rf", ["bash", "-c", "rm -rf src"]),
 ("no_tool", ["bash", "-c", "whoami"]),
 ("not_found", ["bash", "-c", "no-such-command-e2e"]),
 ("env_assigned", ["bash", "-c", "E2E_ASSIGNED=yes python3 -c 'import os; print(os.environ.get(\"E2E_ASSIGNED\"), os.environ.get(\"E2E_INHERITED\"))'"],
  {"env": {"E2E_INHERITED": "leaked"}}),
 ("env_export", ["bash", "-c", "export E2E_EXPORTED=also; python3 -c 'import os; print(os.environ.get(\"E2E_EXPORTED\"))'"]),
 ("fo_mkdir", ["bash", "-c", "mkdir -p w/a/b && echo ok"]),
 ("fo_cp", ["bash", "-c", "cp src/main.c w/a/c1 && cp -r w/a w/a2 && echo ok"]),
 ("fo_cp_p", ["bash", "-c", "cp -p src/main.c w/a/c2 && echo ok"]),
 ("fo_mv", ["bash", "-c", "mv w/a/c1 w/a/m1 && echo ok"]),
 ("fo_ln", ["bash", "-c", "ln -s m1 w/a/l1 && ln w/a/m1 w/a/h1 && readlink w/a/l1"]),
 ("fo_chmod", ["bash", "-c", "chmod 600 w/a/m1 && chmod u+x w/a/m1 && stat -c %a w/a/m1"]),
 ("fo_touch", ["bash", "-c", "touch w/t && touch -d 2020-01-02 w/t && date -r w/t +%Y"]),
 ("fo_ls_l", ["bash", "-c", "ls -l w/a | grep -c m1"]),
 ("fo_tee", ["bash", "-c", "echo x | tee w/tee >/dev/null && cat w/tee"]),
 ("fo_redirect", ["bash", "-c", "echo a > w/r && echo b >> w/r && wc -l < w/r"]),
 ("fo_heredoc", ["bash", "-c", "cat > w/h <<X\nline\nX\ncat w/h"]),
 ("fo_find_exec", ["bash", "-c", "find w -name r -exec cat {} \\;"]),
 ("fo_xargs", ["bash", "-c", "echo w/r | xargs cat | head -1"]),
 ("fo_rm", ["bash", "-c", "rm w/a/h1 && rm -r w/a2 && rmdir w/a/b && echo ok"]),
 ("setuid", ["bash", "-c", "cp -p /usr/bin/passwd bin/passwd-copy; cp --preserve=mode /usr/bin/passwd bin/passwd-mode; install -m 4755 src/main.c bin/inst-suid; install -m 2755 src/main.c bin/inst-sgid; chmod 4755 bin/hello; chmod g+s bin/hello2; mkdir -m 2775 bin/sgid-dir; echo done"]),
 ("system", ["bin/sysprog", "echo sys-\$((6*7)); cat docs/sysfile.txt"]),
 ("script", ["bin/script.sh", "x", "y"]),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
policy = shell.cedar
timeout = 200s
state_dir = $D/state/$name

[agent]
command = $W/agent.py $D/steps/agent.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
exec = $P/bin
read = $D/steps

[tool.git]
command = /usr/bin/git
[tool.git.filesystem]
write = $P

[tool.make]
command = /usr/bin/make
[tool.make.filesystem]
write = $P

[tool.cc]
command = /usr/bin/cc
[tool.cc.filesystem]
write = $P

[tool.python3]
command = /usr/bin/python3
[tool.python3.filesystem]
read = $P
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/shell.cedar"
	out=$D/agent.out err=$D/agent.err
	box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	check "$u: the agent's box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi

	# the disclosure: the tools are served now
	check "$u: disclosure: [tool.git] and its grant" grep -qE "^box: .*tool\.git" "$err"
	check "$u: disclosure: no 'inactive: [tool' line (box-shell serves them)" \
		test "$(grep -c 'inactive: \[tool' "$err")" = 0

	# reading and editing
	check_step "$u: cat through the alias" "$out" cat out_is "$out" cat old-text
	check_step "$u: grep -rn finds the needle with file and line" "$out" grep \
		out_is "$out" grep "./src/util.c:2:int needle_e2e = 42;"
	check_step "$u: sed -i edits in place" "$out" sed out_is "$out" sed new-text
	check "$u: … the file on the host changed" grep -qx new-text "$P/docs/readme.txt"
	check_step "$u: find | sort" "$out" find out_is "$out" find "$(printf './src/main.c\n./src/util.c')"

	# git as a tool
	check_step "$u: git init + add + commit (FOO=1 git commit) as [tool.git]" "$out" git_init \
		out_is "$out" git_init 1
	check_step "$u: git status --short sees the change" "$out" git_status \
		out_is "$out" git_status " M src/util.c"
	check_step "$u: git diff --stat" "$out" git_diff out_has "$out" git_diff "src/util.c \| +1 \+"
	check_step "$u: export in the command line reaches git commit" "$out" git_commit \
		out_is "$out" git_commit second-commit
	check_step "$u: git log | grep -c streams through a pipe" "$out" git_pipe \
		out_is "$out" git_pipe 2
	check "$u: … the host repository has both commits" \
		test "$(git -c safe.directory='*' -C "$P" log --format=%s 2>/dev/null | tr '\n' ' ')" = "second-commit initial "

	# a build with make and cc as tools, the result run under the agent's exec entry
	check_step "$u: make (tool) runs cc, then ./bin/hello runs (exec entry)" "$out" make \
		out_has "$out" make "^hello-from-build$"
	check "$u: … make printed its recipe" bash -c "grep -q '^cc -o bin/hello src/main.c$' '$out'"
	check_step "$u: cc (tool) builds bin/hello2, which runs" "$out" cc out_is "$out" cc hello-from-build
	check "$u: … both binaries exist on the host" test -x "$P/bin/hello" -a -x "$P/bin/hello2"

	# type / command -v / which
	check_step "$u: type git: a box tool (tool.git)" "$out" type_git out_has "$out" type_git "tool\.git"
	check_step "$u: command -v git: /usr/bin/git" "$out" cmdv_git out_is "$out" cmdv_git /usr/bin/git
	check_step "$u: which git: /usr/bin/git" "$out" which_git out_has "$out" which_git "/usr/bin/git"
	check_step "$u: type cd: a shell builtin" "$out" type_cd out_is "$out" type_cd "cd is a shell builtin"

	# stdin, streaming
	check_step "$u: printf 'a\\nb\\n' | bash -c 'sort -r'" "$out" sort_stdin \
		out_is "$out" sort_stdin "$(printf 'b\na')"
	check_step "$u: stdin streams: each line answered before stdin closes (3/3)" "$out" echo_stream \
		test "$(step_kv "$out" echo_stream echo_ok)" = 3
	check_step "$u: … through a tool (python3) too (2/2)" "$out" tool_stream \
		test "$(step_kv "$out" tool_stream echo_ok)" = 2
	for s in slow slow_pipe; do
		t=$(step_kv "$out" "$s" first_before_end)
		check_step "$u: $s: a long-running tool's first line arrives ${t:-?} s before its end" \
			"$out" "$s" awk -v t="${t:-0}" 'BEGIN { exit !(t >= 2) }'
		check_step "$u: $s: … and all of it, exit 0" "$out" "$s" \
			bash -c "[ '$(step_rc "$out" "$s")' = 0 ] && grep -qx last-line <<<'$(step_out "$out" "$s")'"
	done
	check_step "$u: head -3 closing the pipe ends an endless tool (status 0)" "$out" sigpipe \
		bash -c "[ '$(step_rc "$out" sigpipe)' = 0 ] && [ '$(step_out "$out" sigpipe | tr '\n' ' ')' = 'y y y ' ]"

	# refusals
	check_step "$u: a denied spawn exits 126" "$out" mark_deny rc_is "$out" mark_deny 126
	check "$u: … and never started the program (no marker)" test ! -e "$P/denied.marker"
	check_step "$u: the same program permitted runs (its marker exists)" "$out" mark_ok \
		bash -c "[ '$(step_rc "$out" mark_ok)' = 0 ] && [ -e '$P/allowed.marker' ]"
	check_step "$u: rm -rf refused by policy: 126, nothing deleted" "$out" rm_rf \
		bash -c "[ '$(step_rc "$out" rm_rf)' = 126 ] && [ -f '$P/src/main.c' ]"
	check_step "$u: a program no [tool]/exec entry covers: 126" "$out" no_tool rc_is "$out" no_tool 126
	e=$(step_err "$out" no_tool)
	check_step "$u: … the message names the program and the line to add" "$out" no_tool \
		bash -c "grep -q 'whoami' <<<\"\$1\" && grep -qE '\[tool\.|exec' <<<\"\$1\"" _ "$e"
	check_step "$u: command not found: 127" "$out" not_found rc_is "$out" not_found 127

	# the environment a tool gets
	check_step "$u: FOO=1 cmd reaches the tool, an inherited variable does not" "$out" env_assigned \
		out_is "$out" env_assigned "yes None"
	check_step "$u: export in the command line reaches the tool" "$out" env_export \
		out_is "$out" env_export also

	# The file operations an agent does every day, each through box-shell's own commands.
	for st in "fo_mkdir ok" "fo_cp ok" "fo_cp_p ok" "fo_mv ok" "fo_ln m1" "fo_chmod 700" \
		"fo_touch 2020" "fo_ls_l 2" "fo_tee x" "fo_redirect 2" "fo_heredoc line" \
		"fo_find_exec b" "fo_xargs a" "fo_rm ok"; do
		set -- $st
		check_step "$u: $1: $(sed -n "s/^ (\"$1\", \[\"bash\", \"-c\", \"\(.*\)\"\]),\$/\1/p" "$D/steps/agent.py" | cut -c1-60)" \
			"$out" "$1" bash -c "[ '$(step_rc "$out" "$1")' = 0 ] && [ \"\$(tail -1 <<<\"\$1\")\" = '$2' ]" _ "$(step_out "$out" "$1")"
	done
	check "$u: … the results on the host" \
		bash -c "[ -L '$P/w/a/l1' ] && [ \"\$(stat -c %a '$P/w/a/m1')\" = 700 ] && [ ! -e '$P/w/a2' ]"

	# No setuid/setgid file or directory from anything box-shell does in a write grant (the box
	# filter's rule; box-shell's own opens must keep it): cp -p and --preserve of a setuid
	# program, install -m 4755 / 2755, chmod u+s / g+s, mkdir -m 2775.
	check_step "$u: setuid/setgid attempts ran" "$out" setuid out_has "$out" setuid "^done$"
	suid=$(find "$P" -perm /6000 2>/dev/null | head -5 | tr '\n' ' ')
	check_step "$u: … and left no setuid or setgid bit in the grant (${suid:-none})" "$out" setuid \
		test -z "$suid"
	e=$(step_err "$out" setuid)
	check_step "$u: … each attempt refused, saying why (cp, install, chmod, mkdir: $(grep -c 'never sets setuid or setgid' <<<"$e"))" \
		"$out" setuid test "$(grep -c 'never sets setuid or setgid' <<<"$e")" -ge 7
	# cp -p of a file the owner cannot give away (root's /usr/bin/passwd) stays silent about
	# ownership, as GNU cp without privileges does (EPERM, or EINVAL for an unmapped id).
	check_step "$u: … and cp -p did not complain about ownership it cannot preserve" "$out" setuid \
		bash -c '! grep -q "preserve ownership" <<<"$1"' _ "$e"

	# system() and #!/bin/sh
	check_step "$u: system() from a C program reaches box-shell" "$out" system \
		out_is "$out" system "$(printf 'sys-42\nsysfile-content')"
	check_step "$u: a #!/bin/sh script runs through box-shell" "$out" script \
		out_is "$out" script "$(printf 'script-ran x y\nscript-input-content')"

	# the decisions
	dj=$D/state/$name/decisions.jsonl
	check "$u: decisions.jsonl: fs:read of docs/readme.txt permitted (box-shell)" \
		has_decision "$dj" fs:read permit /docs/readme.txt allow_all
	check "$u: decisions.jsonl: shell:exec of grep" has_decision "$dj" shell:exec permit grep
	check "$u: decisions.jsonl: shell:spawn /usr/bin/git permitted" \
		has_decision "$dj" shell:spawn permit /usr/bin/git
	check "$u: decisions.jsonl: shell:spawn of make" has_decision "$dj" shell:spawn permit "$make_path"
	check "$u: decisions.jsonl: shell:spawn of cc ($cc_path)" has_decision "$dj" shell:spawn permit "$cc_path"
	check "$u: decisions.jsonl: the denied spawn of bin/mark (no_marker_deny)" \
		has_decision "$dj" shell:spawn deny /bin/mark no_marker_deny
	check "$u: decisions.jsonl: rm -rf denied (no_rm_rf)" has_decision "$dj" shell:exec deny rm no_rm_rf
	check "$u: decisions.jsonl: system()'s command read docs/sysfile.txt" \
		has_decision "$dj" fs:read permit /docs/sysfile.txt
	check "$u: decisions.jsonl: the #!/bin/sh script read docs/script-input.txt" \
		has_decision "$dj" fs:read permit /docs/script-input.txt
	check "$u: decisions.jsonl: the script itself was read through box-shell" \
		has_decision "$dj" fs:read permit /bin/script.sh
	# A tool's status is recorded: a temporal rule sees it (the history holds box-shell's
	# Record of the spawn's response).
	check_step "$u: before any mark exited 3, 'mark after' runs" "$out" mark_after1 rc_is "$out" mark_after1 0
	check_step "$u: a tool's exit status is its status (3)" "$out" mark_fail3 rc_is "$out" mark_fail3 3
	check_step "$u: … and it is recorded: a rule on that response now denies 'mark after' (126)" \
		"$out" mark_after2 bash -c "[ '$(step_rc "$out" mark_after2)' = 126 ] && [ ! -e '$P/after2.marker' ]"
	check "$u: decisions.jsonl: that denial names the temporal rule" \
		has_decision "$dj" shell:spawn deny /bin/mark after_failed_mark
	# The box has ended: boxctl log finds its state_dir through ./box.ini.
	forget_default_state "$u" "$name"
	as_user "$u" "cd '$D' && '$RB/boxctl' log $name" >"$D/log" 2>&1
	check "$u: boxctl log: the permitted git spawn" grep -qE "permit +shell:spawn +/usr/bin/git +allow_all" "$D/log"
	check "$u: boxctl log: the denied spawn with its rule" \
		grep -qE "deny +shell:spawn +$P/bin/mark +no_marker_deny" "$D/log"
	check "$u: boxctl log: the refused rm" grep -qE "deny +shell:exec +rm +no_rm_rf" "$D/log"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
