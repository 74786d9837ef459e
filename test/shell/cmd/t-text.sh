#!/usr/bin/env bash
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
mkdir -p tree/sub tree/.hid tree/skip dir1/s dir2/s
printf 'int main() { return foo; }\n' >tree/main.c
printf 'foo\n' >tree/sub/x.h
printf 'foo bar\n' >tree/.hid/h.c
printf 'foo\n' >tree/skip/s.c
printf 'same\n' >dir1/s/f; printf 'same\n' >dir2/s/f
printf 'one\n' >dir1/only1; printf 'two\n' >dir2/only2
printf 'x\n' >dir1/d; printf 'y\n' >dir2/d
seq 1 2000 >big
printf 'x' >'we\ird'
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

[ "$n_case" -gt 300 ] && ok "ran $n_case cases" || not_ok "ran only $n_case cases"
tap_done
