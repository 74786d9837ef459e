#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-text.sh — box-shell's own text commands against GNU coreutils, grep, sed
# and diffutils: each case runs `cmdrun NAME ARGS...` and the GNU program with
# the same arguments and stdin on the same fixtures (tricky ones included: no
# trailing newline, empty, binary bytes, a long line, CRLF, UTF-8), and
# compares stdout, stderr and the exit status byte for byte (both print the
# same program name). SORT=1 compares sorted stdout (directory order).
# Trusts: nothing; test code.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
set -u
CMDRUN=$(cd "$BOX_BUILD" 2>/dev/null && pwd)/test/shell/cmdrun
[ -x "$CMDRUN" ] || { not_ok "cmdrun is built ($CMDRUN)"; tap_done; exit 1; }
boxsh=$(cd "$BOX_BIN" 2>/dev/null && pwd)/box-sh
export LC_ALL=C TZ=UTC
tmp=$(mktemp -d /tmp/shtext-t.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# ---- fixtures ----
printf 'hello world\nfoo bar\nHello again\nfoo_bar baz\n\nlast line no nl' >a.txt
printf 'alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\n' >greek
printf 'foo\r\nbar\r\n' >crlf
printf 'caf\xc3\xa9 foo\n\xff\xfe foo\n' >utf
printf 'foo\nbin\000ary foo\n' >bin
: >empty
printf '3\n1\n10\n2\n2\n-5\n1.5\n' >nums
printf 'b 2 x\na 10 y\nc 1 z\na 2 w\nB 3 v\n' >cols
printf 'apple:3:red\nbanana:1:yellow\ncherry:2:red\ndate::brown\n' >colon
printf '1K\n5M\n2G\n100\n3K\n' >human
printf 'v1.10\nv1.2\nv1.9\nv10.0\nv2.0\n' >versions
printf 'a\na\nb\nc\nc\nc\nd\n' >dups
printf 'a\nb\nd\ne\n' >c1
printf 'b\nc\nd\nf\n' >c2
printf '1 one\n2 two\n4 four\n' >j1
printf '1 uno\n3 tres\n4 cuatro\n' >j2
head -c 100000 /dev/zero | tr '\0' 'x' >long
printf '\nend\n' >>long
printf 'line1\nline2\nline3\n' >old
printf 'line1\nline2 changed\nline3\nline4\n' >new
seq 1 30 >s1
seq 1 30 | sed -e 5d -e '12s/.*/x/' -e '28a new' >s2
printf 'hello world\nfoo bar\nHello again\nfoo_bar baz\n\nlast line no nl\n' >a-nonl
tr a-z A-Z <cols >cols-upper
printf 'a  b\nc d\n  e\n' >spaces1
printf 'a b\nc    d\ne\n' >spaces2
seq 1 2000 | sed -e '100,110d' -e '500s/$/x/' -e '1500a inserted' >big2
mkdir -p tree/sub tree/.hid tree/skip dir1/s dir2/s
printf 'int main() { return foo; }\n' >tree/main.c
printf 'foo\n' >tree/sub/x.h
printf 'foo bar\n' >tree/.hid/h.c
printf 'foo\n' >tree/skip/s.c
printf 'same\n' >dir1/s/f; printf 'same\n' >dir2/s/f
printf 'one\n' >dir1/only1; printf 'two\n' >dir2/only2
printf 'x\n' >dir1/d; printf 'y\n' >dir2/d
seq 1 2000 >big
printf 's/a/A/g\n# a comment\n/eta/{\n  s/$/ <-/\n  p\n}\n$a\\\nthe end\n' >sedscript
printf '2p\n' >sedscript2
printf 'x' >'we\ird'
# line counts over more than one read and more than 255 16-byte blocks of '\n' (the
# counter's lanes), in a directory walked by grep -r
mkdir -p lines
head -c 10000 /dev/zero | tr '\0' '\n' >lines/nl
printf 'needle at 10001\n' >>lines/nl
{ seq 1 150000; echo needle; seq 1 70000; echo 'needle last'; } >lines/two-reads
printf 'needle\n%.0s' 1 2 3 >lines/small
# a regex's literal runs, each required and in order: lines with them all, in and out of order
printf 'foo_12x\nfor size_t next\nx_fo0_\nfo0_3x end\nabef\nabcdef\nefab\nab ef\naab\na.b*c\n' >runs
base64 greek >b64
base64 -w 7 a.txt >b64w
printf 'YQ=x' >badb
printf 'Y Q==\n' >gb
sha256sum a.txt greek 'we\ird' >sums
md5sum a.txt greek >msums
sha256sum --tag a.txt >tagsums
cp a.txt a-copy.txt
sha256sum a-copy.txt greek >badsums
md5sum a-copy.txt >badmsums
printf 'changed\n' >a-copy.txt
{ cat sums; echo 'not a checksum line'; } >mixsums

touch -d '2020-01-01 00:00:00' old new s1 s2 a.txt greek a-nonl empty big big2 dir1/d dir2/d

n_case=0
# run_case CMD ARGS...: the case passes when stdout, stderr and status agree.
run_case() {
	n_case=$((n_case + 1))
	local in=${STDIN:-/dev/null} desc="$*"
	desc=${desc//$'\n'/\\n}
	local ao ae as bo be bs
	ao=$("$CMDRUN" "$@" <"$in" 2>"$tmp/.ae" | od -An -c; exit "${PIPESTATUS[0]}")
	as=$?
	bo=$("$@" <"$in" 2>"$tmp/.be" | od -An -c; exit "${PIPESTATUS[0]}")
	bs=$?
	if [ "${SORT:-0}" = 1 ]; then
		ao=$("$CMDRUN" "$@" <"$in" 2>/dev/null | sort)
		bo=$("$@" <"$in" 2>/dev/null | sort)
	fi
	ae=$(cat "$tmp/.ae") be=$(cat "$tmp/.be")
	if [ "$ao" = "$bo" ] && [ "$ae" = "$be" ] && [ "$as" = "$bs" ]; then
		ok "$desc${STDIN:+ <$STDIN}"
	else
		not_ok "$desc${STDIN:+ <$STDIN}"
		diag "status: own $as, GNU $bs"
		[ "$ae" = "$be" ] || diag "stderr own: $ae" "stderr GNU: $be"
		[ "$ao" = "$bo" ] || diag "stdout differs:" "$(diff <(echo "$ao") <(echo "$bo") | head -8)"
	fi
}

# run_in_dirs CMD ARGS...: run both in fresh directories (commands that create
# files: split), then compare the status, the output and the files made.
run_in_dirs() {
	n_case=$((n_case + 1))
	local in=${STDIN:-/dev/null} desc="in dirs: $*" ao bo as bs
	case $in in /*) ;; *) in=$tmp/$in ;; esac
	rm -rf "$tmp/.own" "$tmp/.gnu"
	mkdir "$tmp/.own" "$tmp/.gnu"
	ao=$(cd "$tmp/.own" && "$CMDRUN" "$@" <"$in" 2>&1)
	as=$?
	bo=$(cd "$tmp/.gnu" && "$@" <"$in" 2>&1)
	bs=$?
	ao="$ao $as $(cd "$tmp/.own" && ls -A && cat -- * 2>/dev/null | cksum)"
	bo="$bo $bs $(cd "$tmp/.gnu" && ls -A && cat -- * 2>/dev/null | cksum)"
	if [ "$ao" = "$bo" ]; then ok "$desc${STDIN:+ <$STDIN}"; else
		not_ok "$desc${STDIN:+ <$STDIN}"
		diag "own: $ao" "GNU: $bo"
	fi
}

while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	eval "$line"
done <"$here/cases-text.txt"

# Not differential: what the issue asks where GNU differs.
out=$("$CMDRUN" grep -P x a.txt 2>&1)
[ $? = 2 ] && [ "$out" = "grep: -P is not supported" ] && ok "grep -P: not supported, status 2" ||
	not_ok "grep -P: not supported, status 2 ($out)"
out=$("$CMDRUN" grep --help)
case $out in *' -r '*'--exclude-dir'*) ok "grep --help names its flags" ;;
*) not_ok "grep --help names its flags" ;; esac

# Decisions (cmdrun's allow-all decider logs them to $CMDRUN_LOG).
cp greek sed-i-file
rm -f "$tmp/.log"
CMDRUN_LOG=$tmp/.log "$CMDRUN" sed -i s/a/A/ sed-i-file
want="fs read read_content $tmp/sed-i-file
fs write write_content $tmp/sed-i-file"
got=$(cat "$tmp/.log")
[ "$got" = "$want" ] && [ "$(sed s/a/A/ greek)" = "$(cat sed-i-file)" ] &&
	ok "sed -i: read_content then write_content on the file itself, no rename legs" ||
	{ not_ok "sed -i: read_content then write_content on the file itself"; diag "$got"; }
cp greek sed-i-bak
rm -f "$tmp/.log"
CMDRUN_LOG=$tmp/.log "$CMDRUN" sed -i.orig -e 1d sed-i-bak
[ "$(cat sed-i-bak.orig)" = "$(cat greek)" ] && [ "$(sed 1d greek)" = "$(cat sed-i-bak)" ] &&
	! grep -q -e move -e rename "$tmp/.log" && ok "sed -i.orig keeps a backup, no rename" ||
	not_ok "sed -i.orig keeps a backup, no rename"
rm -f "$tmp/.log"
CMDRUN_LOG=$tmp/.log "$CMDRUN" grep -rl foo tree >/dev/null
# Every file grep -r opened was decided in a batch (read_content) before, no
# file was decided twice, and each directory was enumerated.
awk '
	/^batch/ { inbatch = $2; next }
	/^fs read read_content/ { if (inbatch > 0) { inbatch--; batched[$4] = 1 } else loose[$4] = 1; seen[$4]++ }
	/^fs read enumerate/ { en++ }
	END {
		bad = 0
		for (p in loose) bad++
		for (p in seen) if (seen[p] > 1) bad++
		exit !(bad == 0 && en == 4 && length(batched) == 4)
	}' "$tmp/.log" && ok "grep -r: directory entries decided in batches before opening, once each" ||
	{ not_ok "grep -r: directory entries decided in batches"; diag "$(cat "$tmp/.log")"; }
rm -f "$tmp/.log"
CMDRUN_LOG=$tmp/.log "$CMDRUN" grep -rq foo tree
[ $? = 0 ] && ok "grep -rq stops at the first match (status 0)" || not_ok "grep -rq status"

# EPIPE: a closed pipe stops the command (no hang, no error message).
out=$( { "$CMDRUN" cat long long long long long long long long; echo "st=$?" >&2; } 2>&1 | head -c 10)
st=$( { "$CMDRUN" seq 100000000 2>&1; echo "$?" >"$tmp/.st"; } | head -1 >/dev/null; cat "$tmp/.st")
[ "$st" = 141 ] && ok "seq into a closed pipe ends with 141" || not_ok "seq into a closed pipe ($st)"
st=$( { "$CMDRUN" grep -r x . 2>/dev/null; echo "$?" >"$tmp/.st"; } | head -1 >/dev/null; cat "$tmp/.st")
[ "$st" = 141 ] && ok "grep -r into a closed pipe ends with 141" || not_ok "grep -r into a closed pipe ($st)"

# tail -f follows a growing file and stops when interrupted.
printf 'one\n' >follow
"$CMDRUN" tail -f -s 0.1 follow >"$tmp/.follow" 2>&1 &
tpid=$!
sleep 0.3
printf 'two\n' >>follow
sleep 0.5
kill -TERM "$tpid"
wait "$tpid"
tst=$?
[ "$(cat "$tmp/.follow")" = "$(printf 'one\ntwo')" ] && [ "$tst" = 130 ] &&
	ok "tail -f: follows appended lines, stops on SIGTERM (130)" ||
	{ not_ok "tail -f follows and stops"; diag "status $tst: $(cat "$tmp/.follow")"; }

# --help names the supported flags of every command.
for cmd in cat head tail wc grep sed sort uniq cut tr tee tac nl paste comm join split od base64 \
	sha256sum md5sum seq diff basename dirname; do
	out=$("$CMDRUN" "$cmd" --help 2>&1)
	st=$?
	case $out in *"Usage: $cmd"*) [ $st = 0 ] && ok "$cmd --help" || not_ok "$cmd --help status $st" ;;
	*) not_ok "$cmd --help: $out" ;; esac
done

# Through box-sh (allow-all policy): pipelines of own commands, as bash runs them.
if [ -x "$boxsh" ]; then
	printf 'permit (principal, action, resource);\n' >"$tmp/.allow.dw"
	while IFS= read -r script; do
		want=$(bash -c "$script" 2>&1; echo "st=$?")
		got=$("$boxsh" --policy "$tmp/.allow.dw" -c "$script" 2>&1; echo "st=$?")
		[ "$want" = "$got" ] && ok "box-sh: $script" ||
			{ not_ok "box-sh: $script"; diag "bash: $want" "box-sh: $got"; }
	done <<'SCRIPTS'
grep -n foo a.txt | sort -r | head -1
cat greek | sed -n '2,4p' | tr a-z A-Z | wc -l
seq 1 20 | paste -sd+ | tr -d '\n'; echo
sort -u nums | uniq -c | sort -k1,1n -k2 | tail -3
printf 'b\na\nb\n' | sort | uniq -d
grep -rl foo tree | sort | xargs -n1 basename
diff old new > d.out; echo "$?"; cat d.out | head -2
cut -d: -f1 colon | tac | nl
od -c bin | head -2; base64 a.txt | base64 -d | cmp - a.txt && echo same
sha256sum a.txt greek | sha256sum -c -
grep -c '' big && sed -n '$=' big && wc -l < big
echo hello | tee tee-bs | cat; cat tee-bs
split -l 700 big bsplit.; cat bsplit.* | cmp - big && ls bsplit.* | wc -l
head -c 20 long | od -An -c
grep -q nomatch a.txt || echo "no match: $?"
comm -12 c1 c2; join j1 j2 | cut -d' ' -f2-
SCRIPTS
	# Denials: a refused file fails as the system call would, next to the
	# policy message; the command goes on with the other files.
	home=$(cd "$tmp" && pwd -P)
	mkdir -p "$home/dn/sub"
	printf 'foo\n' >"$home/dn/a"
	printf 'foo secret\n' >"$home/dn/sub/secret.txt"
	printf 'foo\n' >"$home/dn/sub/b"
	cat >"$tmp/.deny.dw" <<'EOF2'
@id("all") permit (principal, action, resource);
@id("no_secret")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "~/dn/sub/secret*" };
EOF2
	got=$(cd "$home" && "$boxsh" --policy "$tmp/.deny.dw" --home "$home" -c \
		'grep -r foo dn | sort; echo "grep=${PIPESTATUS[0]}"; sed -i s/foo/bar/ dn/sub/secret.txt; echo "sed=$?"' 2>&1; cat "$home/dn/sub/secret.txt")
	want="dn/a:foo
dn/sub/b:foo
grep=2
box-shell: sed: policy denied this operation on '~/dn/sub/secret.txt' [policy: no_secret].
sed: can't read dn/sub/secret.txt: Permission denied
sed=2
foo secret"
	case $got in
	*"box-shell: grep: policy denied this operation on '~/dn/sub/secret.txt' [policy: no_secret]."*"grep: dn/sub/secret.txt: Permission denied"*)
		got=$(printf '%s\n' "$got" | grep -v '^box-shell: grep: \|^grep: dn/sub/secret.txt')
		[ "$got" = "$want" ] && ok "box-sh denials: grep -r goes on past a refused file, sed -i refused, file unchanged" ||
			{ not_ok "box-sh denials"; diag "$got"; } ;;
	*) not_ok "box-sh denials: grep -r names the refused file"; diag "$got" ;;
	esac
else
	skip "box-sh pipelines" "box-sh is not built ($boxsh)"
fi

[ "$n_case" -gt 300 ] && ok "ran $n_case cases" || not_ok "ran only $n_case cases"
tap_done
