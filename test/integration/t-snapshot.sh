#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-snapshot.sh — [box] snapshot = workspace (docs/snapshot.md), real boxes as
# root and as boxtest: the agent writes, edits and deletes in its workspace,
# the host tree stays as it was; `boxctl diff` lists and diffs; a partial
# `apply` carries one file; a file changed on the host since is refused (and
# applied with --force); a symlink planted on the host and a parent directory
# swapped for a symlink are refused and nothing reaches where they point;
# `discard` drops the rest (as root, boxtest, and boxtest through a root service boxd). A `git commit` by a [tool.git] (box-shell and the tool's sandbox
# write into the same overlay; the tool's grant is the workspace's parent, so its sandbox binds
# the workspace again from the overlay) is applied and shows in the host's `git log`. On a running
# (detached) box apply carries only files no process holds open for writing and leaves the
# mounted upper dir alone; discard refuses it. A snapshot outgrowing snapshot_max stops its box
# and refuses the next start.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u
cd "$W"

# make_tree DIR NAME: DIR/p (the workspace) with files, and DIR/box.ini.
make_tree() {
	local d=$1
	mkdir -p "$d/p/sub" "$d/outside"
	echo orig >"$d/p/a.txt"
	echo keep >"$d/p/b.txt"
	echo sub >"$d/p/sub/c.txt"
	echo untouched >"$d/outside/target"
	cat >"$d/p/agent.py" <<'EOF'
import os
open("a.txt", "a").write("edited in the box\n")
open("new.txt", "w").write("new file\n")
open("new3.txt", "w").write("third\n")
open("sub/new2.txt", "w").write("in sub\n")
os.unlink("b.txt")
os.symlink("a.txt", "link")
print("inside", sorted(os.listdir(".")))
print("a.txt", open("a.txt").read().replace("\n", "|"))
EOF
	cat >"$d/box.ini" <<EOF
[box]
name = $2
snapshot = workspace

[agent]
command = /usr/bin/python3 $d/p/agent.py
workspace = $d/p

[agent.filesystem]
write = $d/p
EOF
}

# scenario LABEL USER DIR NAME: run the box as USER, then diff, apply, discard.
scenario() {
	local l=$1 u=$2 d=$3 n=$4
	local bc="'$RB/boxctl'"
	AS_USER_DIR=$d as_user "$u" "$bc run -c '$d/box.ini'" >"$d/run.out" 2>"$d/run.err"
	check "$l: the box ran and saw its own writes" grep -q "^inside .*'new.txt'" "$d/run.out"
	check "$l: the disclosure names the snapshot" \
		grep -q "^box: snapshot: every sandbox writes $d/p into .*/snapshot/upper" "$d/run.err"
	grep -v "^box:  " "$d/run.err" | sed 's/^/#   /'
	check "$l: the box saw its edit" grep -qx "a.txt orig|edited in the box|" "$d/run.out"
	check "$l: the host file is unchanged" test "$(cat "$d/p/a.txt")" = orig
	check "$l: the host file the box deleted is still there" test -e "$d/p/b.txt"
	check "$l: nothing the box added is on the host" test ! -e "$d/p/new.txt" -a ! -e "$d/p/link"

	AS_USER_DIR=$d as_user "$u" "$bc diff $n" >"$d/diff.out" 2>&1
	check "$l: diff lists the edit" grep -q "^changed  a.txt" "$d/diff.out"
	check "$l: diff lists the deletion" grep -q "^deleted  b.txt" "$d/diff.out"
	check "$l: diff lists the new file" grep -q "^added    new.txt" "$d/diff.out"
	check "$l: diff lists the new symbolic link" grep -q "^added    link  (symbolic link)" "$d/diff.out"
	check "$l: diff shows a unified diff of the text" grep -qx "+edited in the box" "$d/diff.out"
	sed 's/^/#   /' "$d/diff.out"

	# A partial apply: one file.
	AS_USER_DIR=$d as_user "$u" "$bc apply $n new.txt" >"$d/apply1.out" 2>&1
	check "$l: apply NAME PATH carries that file" test "$(cat "$d/p/new.txt" 2>/dev/null)" = "new file"
	check "$l: ... and nothing else" test "$(cat "$d/p/a.txt")" = orig -a -e "$d/p/b.txt"
	check "$l: the applied file is owned by the owner" test "$(stat -c %U "$d/p/new.txt")" = "$u"
	AS_USER_DIR=$d as_user "$u" "$bc diff $n" >"$d/diff2.out" 2>&1
	check "$l: diff no longer lists the applied file" sh -c "! grep -q new.txt '$d/diff2.out'"

	# A conflict: the host changed a.txt since the snapshot began.
	echo "host edit" >>"$d/p/a.txt"
	AS_USER_DIR=$d as_user "$u" "$bc apply $n a.txt" >"$d/apply2.out" 2>&1
	check "$l: a file changed on the host is refused (exit 1)" test $? -eq 1
	check "$l: ... saying so" grep -q "^refused  a.txt" "$d/apply2.out"
	check "$l: ... and the host file keeps the host's edit" grep -qx "host edit" "$d/p/a.txt"

	# A symbolic link planted on the host where the box added a file.
	ln -s ../outside/target "$d/p/new3.txt"
	[ "$u" = root ] || chown -h "$u" "$d/p/new3.txt"
	AS_USER_DIR=$d as_user "$u" "$bc apply $n new3.txt" >"$d/apply3.out" 2>&1
	check "$l: a planted symlink is refused" grep -q "^refused  new3.txt" "$d/apply3.out"
	AS_USER_DIR=$d as_user "$u" "$bc apply $n --force new3.txt" >"$d/apply3f.out" 2>&1
	check "$l: --force replaces the link itself, never what it points at" \
		test "$(cat "$d/outside/target")" = untouched -a ! -L "$d/p/new3.txt"
	check "$l: ... with the box's file" test "$(cat "$d/p/new3.txt")" = third

	# A parent directory swapped for a symlink to elsewhere.
	mv "$d/p/sub" "$d/p/sub.moved"
	ln -s ../outside "$d/p/sub"
	[ "$u" = root ] || chown -h "$u" "$d/p/sub"
	AS_USER_DIR=$d as_user "$u" "$bc apply $n --force sub" >"$d/apply4.out" 2>&1
	check "$l: a swapped parent directory is refused, even with --force" \
		grep -q "^refused  sub" "$d/apply4.out"
	check "$l: ... and nothing reached where it points" test ! -e "$d/outside/new2.txt"
	sed 's/^/#   /' "$d/apply4.out"
	rm "$d/p/sub"
	mv "$d/p/sub.moved" "$d/p/sub"

	# --force carries a conflicting file.
	AS_USER_DIR=$d as_user "$u" "$bc apply $n --force a.txt" >"$d/apply5.out" 2>&1
	check "$l: --force applies a file changed on the host" \
		grep -qx "edited in the box" "$d/p/a.txt"

	# discard drops the rest: the deletion never happens, the link is never made.
	AS_USER_DIR=$d as_user "$u" "$bc discard $n" >"$d/discard.out" 2>&1
	check "$l: discard succeeds" grep -q "discarded" "$d/discard.out"
	AS_USER_DIR=$d as_user "$u" "$bc diff $n" >"$d/diff3.out" 2>&1
	check "$l: after discard diff lists nothing" test ! -s "$d/diff3.out"
	check "$l: the discarded deletion never reached the host" test -e "$d/p/b.txt" -a ! -e "$d/p/link"
}

# git_scenario LABEL USER DIR NAME: the agent commits through box's shell and [tool.git].
git_scenario() {
	local l=$1 u=$2 d=$3 n=$4
	local bc="'$RB/boxctl'"
	mkdir -p "$d/g"
	echo one >"$d/g/f.txt"
	git -C "$d/g" init -q
	git -C "$d/g" -c user.name=t -c user.email=t@e add f.txt
	git -C "$d/g" -c user.name=t -c user.email=t@e commit -qm first
	printf '@id("all")\npermit (principal, action, resource);\n' >"$d/policy.cedar"
	cat >"$d/agent-git.py" <<'EOF'
import subprocess
open("f.txt", "a").write("two\n")
r = subprocess.run(["bash", "-c", "git -c user.name=agent -c user.email=a@e commit -qam 'by the agent' && git log --oneline | wc -l"],
                   capture_output=True, text=True)
print("git rc", r.returncode, "commits", r.stdout.strip(), r.stderr.strip().replace("\n", "|"))
EOF
	cat >"$d/git.ini" <<EOF
[box]
name = $n
snapshot = workspace
policy = $d/policy.cedar

[agent]
command = /usr/bin/python3 $d/agent-git.py
workspace = $d/g

[agent.filesystem]
write = $d/g
read_file = $d/agent-git.py

[tool.git]
command = /usr/bin/git
[tool.git.filesystem]
write = $d
EOF
	[ "$u" = root ] || chown -R "$u:$u" "$d/g" "$d/git.ini" "$d/agent-git.py" "$d/policy.cedar"
	AS_USER_DIR=$d as_user "$u" "$bc run -q -c '$d/git.ini'" >"$d/git.out" 2>"$d/git.err"
	check "$l: git committed in the box (two commits there)" grep -q "^git rc 0 commits 2" "$d/git.out"
	sed 's/^/#   /' "$d/git.out" "$d/git.err"
	check "$l: the host repository still has one commit" \
		test "$(git -c safe.directory='*' -C "$d/g" log --oneline | wc -l)" = 1
	AS_USER_DIR=$d as_user "$u" "$bc apply $n" >"$d/git-apply.out" 2>&1
	check "$l: apply of the commit succeeds" test $? -eq 0
	grep -v "^added\|^changed" "$d/git-apply.out" | sed 's/^/#   /'
	check "$l: the host's git log shows the agent's commit" \
		sh -c "git -c safe.directory='*' -C '$d/g' log --format=%s | head -1 | grep -qx 'by the agent'"
	check "$l: the host's work tree has the change, committed" \
		sh -c "grep -qx two '$d/g/f.txt' && test -z \"\$(git -c safe.directory='*' -C '$d/g' status --porcelain)\""
}

# running_scenario LABEL USER DIR NAME STATE: apply on a running box carries only files no
# process holds open for writing, and leaves the upper dir alone; after the stop, the rest.
running_scenario() {
	local l=$1 u=$2 d=$3 n=$4 st=$5
	local bc="'$RB/boxctl'"
	mkdir -p "$d/r"
	echo base >"$d/r/base.txt"
	cat >"$d/agent-run.py" <<'EOF'
import time
open("done.txt", "w").write("done\n")
f = open("busy.txt", "w")
f.write("busy\n")
f.flush()
open("ready.txt", "w").write("ready\n")
time.sleep(120)
EOF
	cat >"$d/run.ini" <<EOF
[box]
name = $n
snapshot = workspace

[agent]
command = /usr/bin/python3 $d/agent-run.py
workspace = $d/r

[agent.filesystem]
write = $d/r
read_file = $d/agent-run.py
EOF
	[ "$u" = root ] || chown -R "$u:$u" "$d/r" "$d/run.ini" "$d/agent-run.py"
	AS_USER_DIR=$d as_user "$u" "$bc run -q --detach -c '$d/run.ini'" >"$d/detach.out" 2>&1
	local ok=0
	for _ in $(seq 600); do
		AS_USER_DIR=$d as_user "$u" "$bc diff $n" 2>/dev/null | grep -q "^added    ready.txt" && {
			ok=1
			break
		}
		sleep 0.1
	done
	check "$l: the detached box wrote its files" test $ok = 1
	AS_USER_DIR=$d as_user "$u" "$bc apply $n" >"$d/run-apply.out" 2>&1
	check "$l: apply on a running box carries a closed file" grep -qx done "$d/r/done.txt"
	check "$l: ... refuses one open for writing in the box" \
		grep -q "^refused  busy.txt  open for writing" "$d/run-apply.out"
	check "$l: ... which stays off the host" test ! -e "$d/r/busy.txt"
	check "$l: ... and the mounted upper dir is left as it was" test -e "$st/snapshot/upper/done.txt"
	sed 's/^/#   /' "$d/run-apply.out"
	AS_USER_DIR=$d as_user "$u" "$bc discard $n" >"$d/run-discard.out" 2>&1
	check "$l: discard refuses a running box" grep -q "is running" "$d/run-discard.out"
	AS_USER_DIR=$d as_user "$u" "$bc stop $n" >/dev/null 2>&1
	for _ in $(seq 600); do
		flock -n "$st/lock" true 2>/dev/null && break
		sleep 0.1
	done
	AS_USER_DIR=$d as_user "$u" "$bc apply $n" >"$d/run-apply2.out" 2>&1
	check "$l: after the stop apply carries the rest, without a conflict on its own apply" \
		test $? -eq 0 -a "$(cat "$d/r/busy.txt" 2>/dev/null)" = busy
	sed 's/^/#   /' "$d/run-apply2.out"
	check "$l: ... and empties the upper dir" test -z "$(ls -A "$st/snapshot/upper")"
}

# max_scenario LABEL USER DIR NAME: snapshot_max stops a box whose upper dir outgrows it,
# and refuses the next start while the snapshot is that large.
max_scenario() {
	local l=$1 u=$2 d=$3 n=$4
	local bc="'$RB/boxctl'"
	mkdir -p "$d/m"
	cat >"$d/agent-max.py" <<'EOF'
import time
open("big.bin", "wb").write(b"x" * (3 << 20))
print("written", flush=True)
time.sleep(120)
EOF
	cat >"$d/max.ini" <<EOF
[box]
name = $n
snapshot = workspace
snapshot_max = 1M

[agent]
command = /usr/bin/python3 $d/agent-max.py
workspace = $d/m

[agent.filesystem]
write = $d/m
read_file = $d/agent-max.py
EOF
	[ "$u" = root ] || chown -R "$u:$u" "$d/m" "$d/max.ini" "$d/agent-max.py"
	AS_USER_DIR=$d as_user "$u" "$bc run -q -c '$d/max.ini'" >"$d/max.out" 2>"$d/max.err"
	check "$l: a box whose snapshot outgrows snapshot_max is stopped" \
		grep -q "was stopped: its snapshot outgrew \[box\] snapshot_max" "$d/max.err"
	sed 's/^/#   /' "$d/max.err"
	AS_USER_DIR=$d as_user "$u" "$bc run -q -c '$d/max.ini'" >"$d/max2.out" 2>"$d/max2.err"
	check "$l: ... and its next start is refused until apply or discard" \
		grep -q "holds more than snapshot_max" "$d/max2.err"
	check "$l: ... the agent never ran again" test ! -s "$d/max2.out"
	AS_USER_DIR=$d as_user "$u" "$bc discard $n" >/dev/null 2>&1
	check "$l: the host never saw the big file" test ! -e "$d/m/big.bin"
}

make_tree "$W/sr" "snap-root-$$"
chmod -R a+rX "$W/sr"
scenario "root" root "$W/sr" "snap-root-$$"
"$RB/boxctl" apply "snap-root-$$" /etc/passwd >"$W/bad1.out" 2>&1
check "apply PATH outside the workspace: exit 2, named" \
	sh -c "test $? = 2 && grep -q 'is not inside the snapshot' '$W/bad1.out'"
"$RB/boxctl" apply "snap-root-$$" ../x >"$W/bad2.out" 2>&1
check "apply PATH with ..: exit 2" sh -c "test $? = 2 && grep -q 'a path with' '$W/bad2.out'"
"$RB/boxctl" diff "snap-none-$$" >"$W/bad3.out" 2>&1
check "diff of an unknown box: exit 1, named" \
	sh -c "test $? = 1 && grep -q 'snap-none-$$' '$W/bad3.out'"
git_scenario "root" root "$W/sr" "snap-rgit-$$"
running_scenario "root" root "$W/sr" "snap-rrun-$$" "$XDG_STATE_HOME/box/snap-rrun-$$"
max_scenario "root" root "$W/sr" "snap-rmax-$$"

if have_boxtest; then
	make_tree "$W/su" "snap-user-$$"
	chown -R boxtest:boxtest "$W/su"
	scenario "boxtest" boxtest "$W/su" "snap-user-$$"
	git_scenario "boxtest" boxtest "$W/su" "snap-ugit-$$"
	running_scenario "boxtest" boxtest "$W/su" "snap-urun-$$" \
		"$(getent passwd boxtest | cut -d: -f6)/.local/state/box/snap-urun-$$"
	max_scenario "boxtest" boxtest "$W/su" "snap-umax-$$"
	rm -rf "$(getent passwd boxtest | cut -d: -f6)/.local/state/box/snap-user-$$" \
		"$(getent passwd boxtest | cut -d: -f6)/.local/state/box/snap-ugit-$$" \
		"$(getent passwd boxtest | cut -d: -f6)/.local/state/box/snap-urun-$$" \
		"$(getent passwd boxtest | cut -d: -f6)/.local/state/box/snap-umax-$$"
	# The same through a root service boxd: the overlay is root's, the layers given as fds.
	svc_sock="$W/boxd.sock"
	"$RB/boxd" --listen "$svc_sock" 2>"$W/svc-boxd.log" &
	_run_pids+=("$!")
	for _ in $(seq 100); do [ -S "$svc_sock" ] && break; sleep 0.1; done
	chmod 666 "$svc_sock" # the test's stand-in for group box-clients
	make_tree "$W/sv" "snap-svc-$$"
	chown -R boxtest:boxtest "$W/sv"
	BOX_SOCKET=$svc_sock scenario "boxtest, service boxd" boxtest "$W/sv" "snap-svc-$$"
	svc_state="/var/lib/box/$(id -u boxtest)/snap-svc-$$"
	check "boxtest, service boxd: the snapshot is in the service's state dir, the owner's" \
		test "$(stat -c %U "$svc_state/snapshot/upper" 2>/dev/null)" = boxtest
	rm -rf "$svc_state"
else
	skip "boxtest: snapshot" "cannot create the user boxtest (not root)"
fi
tap_done
