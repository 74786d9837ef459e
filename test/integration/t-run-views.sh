#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-views.sh — box.ini(5) "hidden in every view", the agent's execve list and git on a
# box's own config, in real boxes (boxctl run, embedded boxd), as the caller and as boxtest:
#
#   deny    the agent's `deny = .env` and `deny = secretdir` hold in a real [tool.git]
#           (`git diff --no-index /dev/null .env`, also through a symlink and into the
#           directory) and a real [tool.python3] that grant the whole project; a
#           [tool.md5] whose read_file names .env exactly is the exception (it reads it, the
#           disclosure says `exception to agent deny`); box.ini is readable and read-only
#           in a tool's view, the policy masked; `boxctl check` shows the mask and the
#           exception; a host bind mount of the project under another name, granted to a
#           tool, is refused (root makes the mount);
#   exec    the agent cannot execve /usr/bin/rm itself (a direct subprocess: EACCES, the
#           directory survives), while its command, its #! interpreter, an exec entry and
#           box's aliases (sh, /bin/bash, python3 -> [tool.python3]) work; `ld.so PROGRAM`
#           still runs (the documented limit); a memfd run through /proc/self/fd/N fails
#           in a root-owned box (vm.memfd_noexec = 2) and runs in boxtest's (documented);
#           `[agent] exec_system = true` gives the old runtime back (rm runs); a Node agent
#           (#!/usr/bin/env node) re-executes its interpreter but not /usr/bin/id;
#   git     with box.ini and the policy tracked in the workspace, [tool.git] as the agent
#           uses it: box.ini (shown read-only) never stops git — status, add -A and stash
#           work, a checkout to a branch where box.ini differs switches but leaves box.ini
#           as it was (EBUSY, shown modified); the hidden policy shows modified (git cannot
#           read it), add -A and stash fail on it and nothing is staged or stashed, a
#           checkout to a branch where it differs is refused; after `git update-index
#           --skip-worktree` on it git works; with [box] show_policy = true it behaves as
#           box.ini.
# Trusts: nothing; test code. Files it adds outside $W: none (the bind mount is under $W).
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
mounted=()
views_cleanup() {
	for m in "${mounted[@]}"; do umount "$m" 2>/dev/null; done
	run_cleanup
}
trap views_cleanup EXIT
cd "$W"

require_shell_built
boxtest_or_skip "views as boxtest" || :
git_author="GIT_AUTHOR_NAME = box
GIT_AUTHOR_EMAIL = box@example.test
GIT_COMMITTER_NAME = box
GIT_COMMITTER_EMAIL = box@example.test"

# failed OUT STEP: the step ran and exited with a status other than 0.
failed() { [[ "$(step_rc "$1" "$2")" =~ ^[0-9]+$ ]] && [ "$(step_rc "$1" "$2")" != 0 ]; }

# no_secret FILE...: the .env and key values appear in none of them.
no_secret() { ! grep -qE 'ENV-SECRET-VALUE|KEY-SECRET-VALUE' "$@"; }

# views_ini D NAME INI EXTRA_AGENT: the box of the deny and exec checks, written to INI.
views_ini() {
	local D=$1 name=$2 ini=$3 extra=$4 P=$1/proj
	cat >"$ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = $P/policy.cedar
timeout = 150s

[agent]
command = $W/agent.py $D/steps/$name.py
workspace = $P
$extra

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
exec = /usr/bin/id
deny = $P/.env
deny = $P/secretdir

[tool.git]
command = /usr/bin/git
[tool.git.env]
$git_author
[tool.git.filesystem]
write = $P

[tool.python3]
command = /usr/bin/python3
[tool.python3.filesystem]
read = $P

[tool.md5]
command = /usr/bin/md5sum
[tool.md5.filesystem]
read_file = $P/.env
EOF
	chmod 644 "$ini"
}

# git_ini NAME STEPS POLICY EXTRA_BOX: the box of the git checks (the repo $R is the workspace).
git_ini() {
	cat <<EOF
[box]
name = $1
state_dir = $D/state/$1
policy = $3
timeout = 150s
$4

[agent]
command = $W/agent.py $2
workspace = $R

[agent.env]
$(agent_env)

[agent.filesystem]
write = $R
read = $G/steps

[tool.git]
command = /usr/bin/git
[tool.git.env]
$git_author
[tool.git.filesystem]
write = $R
EOF
}

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	uid=$(id -u "$u")
	mkdir -p "$P/secretdir" "$P/tests" "$P/tests2" "$D/steps"
	echo ENV-SECRET-VALUE >"$P/.env"
	echo KEY-SECRET-VALUE >"$P/secretdir/key"
	ln -s .env "$P/link-to-env"
	echo a >"$P/a.txt"
	echo keep >"$P/tests/keep"
	echo keep >"$P/tests2/keep"
	printf '@id("all")\npermit (principal, action, resource);\n' >"$P/policy.cedar"
	env_md5=$(md5sum <"$P/.env" | cut -d' ' -f1)
	cat >"$D/steps/memfd.py" <<'EOF'
import os, subprocess, sys
# A copy of /usr/bin/true in a memfd, run through /proc/self/fd/N: "memfd=created|create-error-E",
# then "run=0" when it ran, or "run=exec-error-E".
try:
    fd = os.memfd_create("x", 0)
except OSError as e:
    print("memfd=create-error-%d" % e.errno)
    sys.exit(0)
print("memfd=created")
os.write(fd, open("/usr/bin/true", "rb").read())
try:
    r = subprocess.run(["/proc/self/fd/%d" % fd], pass_fds=(fd,))
    print("run=%d" % r.returncode)
except OSError as e:
    print("run=exec-error-%d" % e.errno)
EOF
	cat >"$D/steps/views-$u.py" <<EOF
[
 ("agent_cat_env", ["bash", "-c", "cat .env"]),
 ("git_diff_env", ["bash", "-c", "git diff --no-index /dev/null .env"]),
 ("git_diff_key", ["bash", "-c", "git diff --no-index /dev/null secretdir/key"]),
 ("py_env", ["bash", "-c", "python3 -c 'print(open(\".env\").read())'"]),
 ("py_link", ["bash", "-c", "python3 -c 'print(open(\"link-to-env\").read())'"]),
 ("py_dir", ["bash", "-c", "python3 -c 'import os; print(os.listdir(\"secretdir\"))'"]),
 ("py_key", ["bash", "-c", "python3 -c 'print(open(\"secretdir/key\").read())'"]),
 ("md5_env", ["bash", "-c", "/usr/bin/md5sum .env"]),
 ("py_ini", ["bash", "-c", "python3 -c 'print(open(\"box.ini\").readline().strip())'"]),
 ("py_ini_write", ["bash", "-c", "python3 -c 'open(\"box.ini\", \"a\").write(\"x\")'"]),
 ("py_policy", ["bash", "-c", "python3 -c 'print(open(\"policy.cedar\").read())'"]),
 ("rm_direct", ["/usr/bin/rm", "-rf", "$P/tests"]),
 ("id_exec_entry", ["/usr/bin/id", "-u"]),
 ("interp", ["/usr/bin/python3", "-c", "print('interp-ok')"]),
 ("alias_sh", ["sh", "-c", "echo sh-ok"]),
 ("alias_bin_bash", ["/bin/bash", "-c", "echo bash-ok"]),
 ("alias_python3", ["python3", "-c", "print('py-alias-ok')"]),
 ("ldso", ["/lib64/ld-linux-x86-64.so.2", "/usr/bin/true"]),
 ("memfd", ["/usr/bin/python3", "$D/steps/memfd.py"]),
]
EOF
	cat >"$D/steps/views-sys-$u.py" <<EOF
[
 ("rm_direct", ["/usr/bin/rm", "-rf", "$P/tests2"]),
]
EOF
	views_ini "$D" "views-$u" "$P/box.ini" ""
	views_ini "$D" "views-sys-$u" "$D/views-sys.ini" "exec_system = true"
	chown -R "$u:" "$D"
	chmod 600 "$P/.env"

	# --- the agent's deny in every view; the agent's execve list ---
	out=$D/views.out err=$D/views.err
	box_run "$u" "$out" "$err" -c "$P/box.ini"
	rc=$?
	check "$u: the views box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	[ "$rc" != 0 ] && grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'
	check_step "$u: the agent itself cannot read .env (box-shell's view)" "$out" agent_cat_env \
		failed "$out" agent_cat_env
	check_step "$u: [tool.git]: git diff --no-index /dev/null .env cannot read it" "$out" git_diff_env \
		err_has "$out" git_diff_env "Permission denied"
	check_step "$u: [tool.git]: nor a file of the denied directory" "$out" git_diff_key \
		err_has "$out" git_diff_key "Could not access .secretdir/key.|Permission denied"
	for s in py_env py_link py_dir py_key; do
		check_step "$u: [tool.python3]: $s: PermissionError" "$out" $s err_has "$out" $s "PermissionError"
	done
	check "$u: no secret in anything the agent saw" no_secret "$out"
	check_step "$u: [tool.md5] names .env exactly: its exception reads it" "$out" md5_env \
		out_has "$out" md5_env "^$env_md5 "
	check "$u: the disclosure names the exception" \
		grep -q "box: warning: exception to agent deny: $P/.env is visible to tool.md5 (its read_file entry names it)" "$err"
	check "$u: the disclosure lists the agent's deny in [tool.git]'s view" \
		grep -qE "^box:   deny +$P/.env  \\(masked: the agent's deny\\)" "$err"
	check_step "$u: box.ini is readable in a tool's view" "$out" py_ini out_is "$out" py_ini "[box]"
	check_step "$u: … and read-only there (EROFS)" "$out" py_ini_write \
		err_has "$out" py_ini_write "Read-only file system"
	check_step "$u: the policy is masked in a tool's view" "$out" py_policy \
		err_has "$out" py_policy "PermissionError"
	check "$u: the disclosure shows box.ini read-only and warns about the hidden policy" \
		bash -c "grep -qE '^box:   read_file +$P/box.ini  \\(read-only, noexec\\)  \\(box.ini: shown read-only\\)' '$err' && grep -q 'box: warning: the policy $P/policy.cedar is hidden (masked) inside a grant' '$err'"
	check_step "$u: the agent cannot execve /usr/bin/rm itself (EACCES)" "$out" rm_direct \
		bash -c "[ '$(step_rc "$out" rm_direct)' = exec-error ] && grep -q 'Permission denied' <<<\"\$1\"" _ "$(step_err "$out" rm_direct)"
	check "$u: … and the directory it named is still there" test -f "$P/tests/keep"
	check_step "$u: an exec entry runs (/usr/bin/id)" "$out" id_exec_entry out_is "$out" id_exec_entry "$uid"
	check_step "$u: the command's #! interpreter runs again" "$out" interp out_is "$out" interp interp-ok
	check_step "$u: sh (the alias, first on PATH)" "$out" alias_sh out_is "$out" alias_sh sh-ok
	check_step "$u: /bin/bash (the alias over it)" "$out" alias_bin_bash out_is "$out" alias_bin_bash bash-ok
	check_step "$u: python3 (the alias -> box-shell -> [tool.python3])" "$out" alias_python3 \
		out_is "$out" alias_python3 py-alias-ok
	check_step "$u: ld.so PROGRAM still runs PROGRAM (documented: EXECUTE is checked on execve)" \
		"$out" ldso rc_is "$out" ldso 0
	m_run=$(step_kv "$out" memfd run)
	m_make=$(step_kv "$out" memfd memfd)
	if [ "$uid" = 0 ]; then
		check_step "$u: a memfd run through /proc/self/fd/N fails (vm.memfd_noexec = 2; $m_make $m_run)" \
			"$out" memfd bash -c "[ '$m_run' != 0 ]"
	else
		check_step "$u: a memfd run through /proc/self/fd/N runs: no vm.memfd_noexec for a box not owned by root (documented, disclosed)" \
			"$out" memfd bash -c "[ '$m_run' = 0 ] && grep -q 'memfd_noexec cannot be set' '$err'"
	fi
	check "$u: the disclosure lists the ELF loader and the execve rule" \
		bash -c "grep -qE '^box:   exec .*\\(implicit: ELF loader\\)' '$err' && grep -qE '^box:   execute +only the exec entries above' '$err'"

	out=$D/views-sys.out err=$D/views-sys.err
	box_run "$u" "$out" "$err" -c "$D/views-sys.ini"
	check_step "$u: exec_system = true: the agent runs /usr/bin/rm itself again" "$out" rm_direct \
		bash -c "[ '$(step_rc "$out" rm_direct)' = 0 ] && [ ! -e '$P/tests2' ]"
	check "$u: exec_system = true: no execute line in the disclosure" \
		bash -c "! grep -qE '^box:   execute ' '$err' && grep -qE '^box:   system +/usr /lib /lib64 /bin /sbin \\(read-only, exec\\)' '$err'"

	# `boxctl check`: the mask and the exception in the tool sections.
	as_user "$u" "'$RB/boxctl' check -c '$P/box.ini'" >"$D/check.out" 2>&1
	check "$u: boxctl check: the agent's deny in [tool.git.filesystem], the exception in [tool.md5.filesystem]" \
		bash -c "grep -qx '; deny (implicit: the agent'\"'\"'s deny): $P/.env' '$D/check.out' && grep -qx '; exception to agent deny: $P/.env (named here)' '$D/check.out'"

	# --- a Node agent: its #! interpreter runs, /usr/bin/id does not ---
	cat >"$D/node-agent.js" <<'EOF'
#!/usr/bin/env node
const { execFileSync } = require("child_process");
const again = execFileSync(process.execPath, ["-e", "console.log('node-again')"]).toString().trim();
console.log("interp=" + again);
try {
  execFileSync("/usr/bin/id", ["-u"]);
  console.log("id=ran");
} catch (e) {
  console.log("id=" + e.code);
}
EOF
	chmod 755 "$D/node-agent.js"
	cat >"$D/node-$u.ini" <<EOF
[box]
name = views-node-$u
state_dir = $D/state/views-node-$u

[agent]
command = $D/node-agent.js
workspace = $D

[agent.filesystem]
read_file = $D/node-agent.js
EOF
	chown "$u:" "$D/node-agent.js" "$D/node-$u.ini"
	as_user "$u" "timeout 60 '$RB/boxctl' run -c '$D/node-$u.ini'" >"$D/node.out" 2>"$D/node.err"
	check "$u: a Node agent re-executes its #! interpreter (node)" grep -qx "interp=node-again" "$D/node.out"
	check "$u: … but cannot execve /usr/bin/id (EACCES)" grep -qx "id=EACCES" "$D/node.out"
	check "$u: … the disclosure lists env and node as #! interpreters" \
		bash -c "[ \$(grep -c '(implicit: #! interpreter)' '$D/node.err') -ge 2 ]"

	# --- git on box.ini and the policy in the workspace ---
	G=$D/gitbox
	mkdir -p "$G/steps" "$G/repo"
	R=$G/repo
	(
		cd "$R" || exit 1
		git init -q -b main .
		git config user.email box@example.test
		git config user.name box
		echo a >a.txt
		git_ini "views-git-$u" "$G/steps/git.py" policy.cedar "" >box.ini
[box]
name = views-git-$u
state_dir = $D/state/views-git-$u
policy = policy.cedar
timeout = 150s

[agent]
command = $W/agent.py $G/steps/git.py
workspace = $R

[agent.env]
$(agent_env)

[agent.filesystem]
write = $R
read = $G/steps

[tool.git]
command = /usr/bin/git
[tool.git.env]
$git_author
[tool.git.filesystem]
write = $R
EOF
		printf '@id("all")\npermit (principal, action, resource);\n' >policy.cedar
		git add -A && git commit -qm init
		git checkout -qb other-policy
		printf '// other\n@id("all")\npermit (principal, action, resource);\n' >policy.cedar
		git commit -qam other-policy
		git checkout -q main
		git checkout -qb other-ini
		echo "; other" >>box.ini
		git commit -qam other-ini
		git checkout -q main
	)
	git_ini "views-gitshow-$u" "$G/steps/gitshow.py" "$R/policy.cedar" "show_policy = true" \
		>"$G/shown.ini"
	cat >"$G/steps/git.py" <<'EOF'
[
 ("change", ["bash", "-c", "echo changed >> a.txt"]),
 ("status", ["bash", "-c", "git status --porcelain"]),
 ("diff", ["bash", "-c", "git diff --stat"]),
 ("add", ["bash", "-c", "git add -A"]),
 ("staged", ["bash", "-c", "git diff --cached --name-only"]),
 ("stash", ["bash", "-c", "git stash"]),
 ("stash_list", ["bash", "-c", "git stash list | wc -l"]),
 ("co_policy", ["bash", "-c", "git checkout other-policy"]),
 ("branch_after_policy", ["bash", "-c", "git branch --show-current"]),
 ("skip", ["bash", "-c", "git update-index --skip-worktree policy.cedar && git status --porcelain"]),
 ("add_skip", ["bash", "-c", "git add -A && git diff --cached --name-only"]),
 ("stash_skip", ["bash", "-c", "git stash && git stash list | wc -l"]),
 ("co_ini", ["bash", "-c", "git checkout other-ini"]),
 ("branch_after_ini", ["bash", "-c", "git branch --show-current"]),
 ("status_after_ini", ["bash", "-c", "git status --porcelain"]),
 ("ini_after", ["bash", "-c", "tail -n 1 box.ini"]),
]
EOF
	cat >"$G/steps/gitshow.py" <<'EOF'
[
 ("change", ["bash", "-c", "echo changed-again >> a.txt"]),
 ("status", ["bash", "-c", "git status --porcelain"]),
 ("add", ["bash", "-c", "git add -A && git diff --cached --name-only"]),
 ("stash", ["bash", "-c", "git stash && git stash list | wc -l"]),
 ("co_policy", ["bash", "-c", "git checkout other-policy; git branch --show-current; git status --porcelain"]),
]
EOF
	chown -R "$u:" "$G"
	chmod 644 "$R/box.ini" "$G/shown.ini"
	out=$G/git.out err=$G/git.err
	box_run "$u" "$out" "$err" -c "$R/box.ini"
	rc=$?
	check "$u: git box runs to its end (rc $rc)" test "$rc" = 0
	[ "$rc" != 0 ] && grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'
	check_step "$u: git status: the hidden policy shows modified (git cannot read it), box.ini does not" \
		"$out" status bash -c "grep -qx ' M policy.cedar' <<<\"\$1\" && grep -qx ' M a.txt' <<<\"\$1\" && ! grep -q box.ini <<<\"\$1\"" _ "$(step_out "$out" status)"
	check_step "$u: git diff fails on it (cannot hash)" "$out" diff \
		bash -c "[ '$(step_rc "$out" diff)' = 128 ] && grep -q 'cannot hash policy.cedar' <<<\"\$1\"" _ "$(step_err "$out" diff)"
	check_step "$u: git add -A fails on the hidden policy (Permission denied)" "$out" add \
		bash -c "failed() { [[ \"\$1\" =~ ^[0-9]+\$ ]] && [ \"\$1\" != 0 ]; }; failed '$(step_rc "$out" add)' && grep -q 'open(\"policy.cedar\"): Permission denied' <<<\"\$1\"" _ "$(step_err "$out" add)"
	check_step "$u: … and stages nothing" "$out" staged out_is "$out" staged ""
	check_step "$u: git stash fails on it and stashes nothing" "$out" stash \
		bash -c "[ '$(step_rc "$out" stash)' = 1 ] && [ '$(step_out "$out" stash_list | tr -d ' ')' = 0 ]"
	check_step "$u: a checkout to a branch where the policy differs is refused" "$out" co_policy \
		bash -c "[ '$(step_rc "$out" co_policy)' = 1 ] && [ '$(step_out "$out" branch_after_policy)' = main ]"
	check_step "$u: after update-index --skip-worktree git does not look at it" "$out" skip \
		bash -c "[ '$(step_rc "$out" skip)' = 0 ] && ! grep -q policy.cedar <<<\"\$1\"" _ "$(step_out "$out" skip)"
	check_step "$u: … add -A works (a.txt staged)" "$out" add_skip out_is "$out" add_skip a.txt
	check_step "$u: … stash works" "$out" stash_skip out_has "$out" stash_skip "^ *1\$"
	check_step "$u: a checkout to a branch where box.ini differs switches (box.ini read-only: EBUSY)" \
		"$out" co_ini bash -c "[ '$(step_out "$out" branch_after_ini)' = other-ini ] && grep -q 'box.ini' <<<\"\$1\"" _ "$(step_err "$out" co_ini)"
	check_step "$u: … box.ini keeps its text and shows modified" "$out" status_after_ini \
		bash -c "grep -qx ' M box.ini' <<<\"\$1\" && [ '$(step_out "$out" ini_after)' != '; other' ]" _ "$(step_out "$out" status_after_ini)"
	check "$u: the host's box.ini is untouched by the box" bash -c "! grep -q '^; other' '$R/box.ini'"
	# Back to main, clean, as the repo's owner (git refuses a repo another user owns).
	as_user "$u" "cd '$R' && git checkout -q -f main && git update-index --no-skip-worktree policy.cedar && git stash clear && git checkout -q -- ." >/dev/null 2>&1

	out=$G/gitshow.out err=$G/gitshow.err
	box_run "$u" "$out" "$err" -c "$G/shown.ini"
	check "$u: show_policy = true: the policy is shown read-only" \
		grep -qE "^box:   read_file +$R/policy.cedar  \\(read-only, noexec\\)  \\(policy file: shown read-only" "$err"
	check_step "$u: show_policy = true: git status lists neither config file" "$out" status \
		bash -c "grep -qx ' M a.txt' <<<\"\$1\" && ! grep -qE 'policy.cedar|box.ini' <<<\"\$1\"" _ "$(step_out "$out" status)"
	check_step "$u: … add -A works" "$out" add out_is "$out" add a.txt
	check_step "$u: … stash works" "$out" stash out_has "$out" stash "^ *1\$"
	check_step "$u: … a checkout to a branch where the policy differs switches, the policy read-only" \
		"$out" co_policy bash -c "grep -qx other-policy <<<\"\$1\" && grep -qx ' M policy.cedar' <<<\"\$1\"" _ "$(step_out "$out" co_policy)"
done

# --- a host bind mount of the project granted to a tool: another name of the deny entries ---
u=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
	D=$W/$u
	mkdir -p "$D/alias"
	if mount --bind "$D/proj" "$D/alias"; then
		mounted+=("$D/alias")
		sed "s|^name = views-$u\$|name = views-alias-$u|; s|views-$u\$|views-alias-$u|; /^\\[tool.python3.filesystem\\]/,/^\$/ s|^read = .*\$|read = $D/alias|" \
			"$D/proj/box.ini" >"$D/alias.ini"
		"$RB/boxctl" run -c "$D/alias.ini" >"$D/alias.out" 2>"$D/alias.err"
		rc=$?
		check "a tool grant that is a bind mount of the project is refused (exit $rc)" test "$rc" != 0
		check "… naming the other name of the denied .env" \
			grep -q "$D/alias/.env is another name of $D/proj/.env, which every view hides (a bind mount on the host)" "$D/alias.err"
		[ "$rc" = 0 ] && sed 's/^/#   /' "$D/alias.err" | head -10
	else
		not_ok "mount --bind for the alias check"
	fi
else
	skip "a bind mount of a denied path under another name" "needs root to make the mount"
fi
tap_done
