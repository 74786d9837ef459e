#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-boxsh.sh — box-shell's own file commands run by box-sh:
# scripts of file commands give the same stdout, stderr, status
# and resulting tree as bash with GNU coreutils/findutils; --decisions shows
# one shell:exec per command (a find -exec child its own) and the fs:*
# decisions docs/box-policy.5.md names; a policy's forbid on one entry of `rm -r`
# keeps that entry, fails as unlink(2) would and the script goes on.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
BOX_SH=${BOX_BIN:-build/bin}/box-sh
case $BOX_SH in /*) ;; *) BOX_SH=$PWD/$BOX_SH ;; esac
if [ ! -x "$BOX_SH" ]; then
	not_ok "box-sh is built ($BOX_SH)"
	tap_done
	exit 1
fi
export LC_ALL=C TZ=UTC
tmp=$(mktemp -d /tmp/shfile-bsh.XXXXXX)
trap 'cd /; rm -rf "$tmp"' EXIT
home=$(cd "$tmp" && pwd -P)
W=$home/w
echo 'permit(principal, action, resource);' >"$home/allow.cedar"
cat >"$home/deny.cedar" <<'POL'
@id("all") permit (principal, action, resource);
@id("keep_g") forbid (principal, action == Box::Action::"fs:delete", resource)
  when { context.input.path == "~/w/d/s/g.txt" };
POL

fixture() {
	cd "$home" && rm -rf "$W" && mkdir -p "$W/d/s" "$W/d/e" && cd "$W" || exit 1
	printf 'hello\n' >f
	printf 'bb\n' >d/s/g.txt
	printf 'c\n' >d/h.TXT
	ln -s f lf
	touch -d '2020-01-02 03:04:05' f d/h.TXT d/s/g.txt
	touch -h -d '2018-01-01' lf
	touch -d '2020-05-05' d/s d/e d
}
tree_state() {
	find . -printf '%p %y %m %s %l\n' | sort
}

# same NAME SCRIPT: bash (GNU tools) and box-sh agree on the script.
same() {
	local name=$1 script=$2
	fixture
	bash -c "$script" >"$tmp/g.out" 2>"$tmp/g.err"
	echo $? >>"$tmp/g.out"
	tree_state >"$tmp/g.tree"
	fixture
	"$BOX_SH" --policy "$home/allow.cedar" --home "$home" -c "$script" >"$tmp/b.out" 2>"$tmp/b.err"
	echo $? >>"$tmp/b.out"
	tree_state >"$tmp/b.tree"
	if cmp -s "$tmp/g.out" "$tmp/b.out" && cmp -s "$tmp/g.err" "$tmp/b.err" &&
		cmp -s "$tmp/g.tree" "$tmp/b.tree"; then
		ok "box-sh = bash: $name"
	else
		not_ok "box-sh = bash: $name"
		for k in out err tree; do
			diff "$tmp/g.$k" "$tmp/b.$k" | head -6 | sed "s/^/#   $k: /"
		done
	fi
}

same "ls, mkdir -p, touch, ls -l" 'ls; mkdir -p x/y; touch x/y/z; ls -lR x | sed "s/ [A-Z][a-z][a-z] .*:[0-9][0-9] / T /"'
same "cp -r, mv, find" 'cp -r d c && mv c/h.TXT c/H && find c | sort && ls -a c'
same "rm -r and its errors" 'rm -r d nope; echo "rm $?"; ls; rmdir x 2>&1; echo end'
same "find -exec with own commands" 'find d -type f -exec cat {} + | sort; find d -name "*.txt" -exec ls -l {} \; | cut -c1-10'
same "find | xargs" 'find . -name "*.TXT" -o -name "*.txt" | sort | xargs wc -c'
same "ln, readlink, realpath, stat" 'ln -s d/h.TXT l2 && readlink l2 && realpath --relative-to=. l2 2>&1 | head -1; stat -c "%n %s %F" l2 lf f; ln f hard; stat -c %h f'
same "chmod, install, truncate" 'chmod -R go-rwx d && install -m 640 f d/i && truncate -s 3 d/i && stat -c "%a %s %n" d d/s d/i d/h.TXT'
same "du, globs, date -d" 'du -s d | cut -f2; echo d/*; date -u -d @0 +%F; t=$(mktemp -d -p .) && ls -d tmp.* | wc -l && rmdir "$t"'
same "date in the command's TZ" 'TZ=Asia/Tokyo date -d @0; date -d @0 +%H%Z; export TZ=America/New_York; date -d @86400 "+%F %T %Z"'
same "a refused-by-the-system operation goes on" 'touch d/e; mkdir d 2>&1; rm d 2>&1; echo "$?"; cp d f2 2>&1; echo done'

# --- decisions through box-sh ---
decisions() { # decisions POLICY SCRIPT: action resource operation verdict, one a line
	fixture
	rm -f "$tmp/d.jsonl"
	"$BOX_SH" --policy "$home/$1" --home "$home" --decisions "$tmp/d.jsonl" -c "$2" \
		>"$tmp/d.out" 2>"$tmp/d.err"
	echo $? >"$tmp/d.rc"
	python3 - "$tmp/d.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "verdict" not in j:
        continue
    i = j.get("input") or {}
    print(j["action"], i.get("command", j.get("resource")), i.get("operation", "-"), j["verdict"])
PY
}
got=$(decisions allow.cedar 'mv f g')
want="shell:exec mv f g - permit
fs:read ~/w/g read_metadata permit
fs:read ~/w/f read_content permit
fs:move ~/w/f rename permit
fs:move ~/w/g rename permit"
if [ "$got" = "$want" ]; then ok "box-sh decisions of mv: the rename's legs"; else
	not_ok "box-sh decisions of mv"; diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'; fi
got=$(decisions allow.cedar 'rm -r d/s')
want="shell:exec rm -r d/s - permit
fs:read ~/w/d/s read_metadata permit
fs:read ~/w/d/s enumerate permit
fs:delete ~/w/d/s/g.txt remove_file permit
fs:delete ~/w/d/s remove_dir permit"
if [ "$got" = "$want" ]; then ok "box-sh decisions of rm -r: one per entry"; else
	not_ok "box-sh decisions of rm -r"; diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'; fi
got=$(decisions allow.cedar 'find d/s -type f -exec cat {} +')
want="shell:exec find d/s -type f -exec cat {} + - permit
fs:read ~/w/d/s read_metadata permit
fs:read ~/w/d/s enumerate permit
fs:read ~/w/d/s/g.txt read_metadata permit
shell:exec cat d/s/g.txt - permit
fs:read ~/w/d/s/g.txt read_content permit"
if [ "$got" = "$want" ]; then ok "box-sh decisions of find -exec: the child decided on its own"; else
	not_ok "box-sh decisions of find -exec"; diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'; fi
got=$(decisions allow.cedar 'touch f new; ln f h2; ln -s f s2')
want="shell:exec touch f new - permit
fs:write ~/w/f write_content permit
fs:write ~/w/new write_content permit
shell:exec ln f h2 - permit
fs:read ~/w/h2 read_metadata permit
fs:read ~/w/f read_metadata permit
fs:read ~/w/f read_content permit
fs:write ~/w/h2 write_content permit
shell:exec ln -s f s2 - permit
fs:read ~/w/s2 read_metadata permit
fs:read ~/w/f read_content permit
fs:write ~/w/s2 symlink permit"
if [ "$got" = "$want" ]; then ok "box-sh decisions of touch, ln, ln -s"; else
	not_ok "box-sh decisions of touch, ln"; diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'; fi

# --- a forbidden entry of rm -r ---
got=$(decisions deny.cedar 'rm -r d; echo "rm $?"; ls -R d')
out=$(cat "$tmp/d.out")
err=$(cat "$tmp/d.err")
want_out="rm 1
d:
s

d/s:
g.txt"
case $err in
"box-shell: rm: "*"
rm: cannot remove 'd/s/g.txt': Permission denied") e_ok=1 ;;
*) e_ok= ;;
esac
if [ "$out" = "$want_out" ] && [ -n "$e_ok" ] && [ -e "$W/d/s/g.txt" ] && [ ! -e "$W/d/h.TXT" ]; then
	ok "box-sh: rm -r with one entry forbidden keeps it, fails as unlink would, goes on"
else
	not_ok "box-sh: rm -r with one entry forbidden"
	diag "$out" "$err"
fi
case $got in
*"fs:delete ~/w/d/s/g.txt remove_file deny"*) ok "box-sh: the forbidden entry's decision is a deny" ;;
*) not_ok "box-sh: the forbidden entry's decision is a deny"; diag "$got" ;;
esac

tap_done
