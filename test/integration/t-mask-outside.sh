#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-mask-outside.sh — a mask (box.ini, the policy, a `deny` entry) that no
# grant contains must not bring its parent directories into the view. The
# trampoline binds the directories between a grant and a mask onto themselves
# so a mask cannot be renamed away; when the innermost entry around the mask
# is a box-managed directory (the box's /tmp, /var/tmp or ungranted HOME),
# those binds would come from the host: `read = /tmp/p/src` beside
# /tmp/p/box.ini put host /tmp/p into the box, writable with /tmp's rights.
# Checked under /tmp (root and boxtest) and under boxtest's ungranted HOME.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u
cd "$W"

# make_tree DIR: DIR/box.ini beside a granted DIR/src and a denied DIR/other/secret.
make_tree() {
	local d=$1
	mkdir -p "$d/src" "$d/other"
	echo secret >"$d/other/secret"
	echo hostfile >"$d/hostfile"
	cat >"$d/src/probe.py" <<'EOF'
import os, sys
d = sys.argv[1]
def tryit(what, fn):
    try:
        fn()
        print(what, "ok")
    except OSError as e:
        print(what, "errno", e.errno)
tryit("list-parent", lambda: print("entries", sorted(os.listdir(d))))
tryit("read-boxini", lambda: open(d + "/box.ini").read())
tryit("read-hostfile", lambda: open(d + "/hostfile").read())
tryit("read-other", lambda: os.listdir(d + "/other"))
tryit("write-parent", lambda: open(d + "/planted", "w").write("x"))
tryit("read-src", lambda: open(d + "/src/probe.py").read())
EOF
	cat >"$d/box.ini" <<EOF
[box]
name = mo-$2

[agent]
command = /usr/bin/python3 $d/src/probe.py $d
workspace = $d/src

[agent.filesystem]
read = $d/src
deny = $d/other/secret
EOF
	chmod -R a+rX "$d"
}

# judge LABEL DIR OUTFILE: the parent dir shows only what box made for the grant.
judge() {
	local l=$1 d=$2 out=$3
	check "$l: the box runs and reads its grant" grep -qx "read-src ok" "$out"
	check "$l: box.ini beside the grant is not in the view" grep -qx "read-boxini errno 2" "$out"
	check "$l: an ungranted host file beside the grant is not in the view" \
		grep -qx "read-hostfile errno 2" "$out"
	check "$l: the denied file's ungranted directory is not in the view" \
		grep -qx "read-other errno 2" "$out"
	check "$l: the parent lists only the grant's skeleton" grep -qx "entries \['src'\]" "$out"
	check "$l: nothing the agent wrote reached the host directory" test ! -e "$d/planted"
	grep -v " ok$\|errno 2$\|^entries \['src'\]$" "$out" | sed 's/^/#   /'
}

make_tree "$W/mo-root" root
"$RB/boxctl" run -q -c "$W/mo-root/box.ini" >"$W/mo-root.out" 2>"$W/mo-root.err"
judge "root, under /tmp" "$W/mo-root" "$W/mo-root.out"
sed 's/^/#   /' "$W/mo-root.err"

if have_boxtest; then
	make_tree "$W/mo-user" user
	chown -R boxtest "$W/mo-user"
	as_boxtest "'$RB/boxctl' run -q -c '$W/mo-user/box.ini'" >"$W/mo-user.out" 2>"$W/mo-user.err"
	judge "boxtest, under /tmp" "$W/mo-user" "$W/mo-user.out"
	sed 's/^/#   /' "$W/mo-user.err"

	# The same beside a grant inside boxtest's ungranted HOME (a box-managed dir in the box).
	home=$(getent passwd boxtest | cut -d: -f6)
	hp="$home/mo-proj.$$"
	rm -rf "$hp"
	make_tree "$hp" home
	chown -R boxtest "$hp"
	as_boxtest "'$RB/boxctl' run -q -c '$hp/box.ini'" >"$W/mo-home.out" 2>"$W/mo-home.err"
	judge "boxtest, under its ungranted HOME" "$hp" "$W/mo-home.out"
	sed 's/^/#   /' "$W/mo-home.err"
	rm -rf "$hp"
else
	skip "boxtest: masks outside grants" "cannot create the user boxtest (not root)"
fi
tap_done
