#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-file.sh — box-shell's own file commands against GNU coreutils/findutils
#: each case runs the GNU tool and the own command
# (through filerun) in the same fresh fixture (fixed mtimes, so ls -t and
# find -newer are deterministic) and compares stdout, stderr, the status and
# the resulting tree (`find -printf '%p %y %m %s %l %T@'`). Then the exact
# decision sequences of mv, rm -r, ln, touch, cp, mkdir -p, find ... (from
# filerun's $FILERUN_LOG), the denials (a refused entry fails as the system
# call would, with the policy message), and the setuid/setgid refusals.
set -u
. "$(dirname "$0")/../../lib.sh"

FILERUN=$BOX_BUILD/test/shell/filerun
export LC_ALL=C TZ=UTC
unset TMPDIR
tmp=$(mktemp -d /tmp/shfile-t.XXXXXX)
trap 'cd /; rm -rf "$tmp"' EXIT
W=$tmp/w

if [ ! -x "$FILERUN" ]; then
	not_ok "filerun is built ($FILERUN)"
	tap_done
	exit 1
fi

# The fixture is made once, then copied (cp -a keeps the times and the hard link).
make_template() {
	mkdir -p "$tmp/tpl" && cd "$tmp/tpl" || exit 1
	mkdir -p d/s d/e empty bin1 bin2
	printf 'hello\n' >f
	head -c 5000 /dev/zero | tr '\0' x >big
	truncate -s 3M sparse
	: >zero
	printf 'bb\n' >d/s/g.txt
	printf 'c\n' >d/h.TXT
	printf 'name with space\n' >'sp ace'
	printf '#!/bin/sh\necho one\n' >bin1/prog
	printf '#!/bin/sh\necho two\n' >bin2/prog
	printf 'not executable\n' >bin1/plain
	chmod 755 bin1/prog bin2/prog
	ln -s f lf
	ln -s d ld
	ln -s nowhere dangling
	ln f hard
	chmod 640 f
	chmod 700 d/s
	touch -d '2020-01-02 03:04:05' f
	touch -d '2021-06-07 08:09:10' big
	touch -d '2019-03-04 05:06:07' zero sparse 'sp ace'
	touch -d '2022-02-02 02:02:02' d/s/g.txt
	touch -d '2023-03-03 03:03:03.5' d/h.TXT
	touch -d '-2 hours' bin1/prog bin2/prog bin1/plain
	touch -h -d '2018-01-01 00:00:00' lf ld dangling
	touch -d '2020-05-05 05:05:05' d/s d/e empty bin1 bin2
	touch -d '2020-06-06 06:06:06' d
}
make_template
fixture() {
	cd "$tmp" && rm -rf "$W" && cp -a "$tmp/tpl" "$W" && cd "$W" || exit 1
}

# The tree after a command: new files' times are "recent" (the two runs
# happen seconds apart), the fixture's are exact.
tree_state() {
	find . -printf '%p %y %m %s %l %T@\n' | sort |
		awk -v now="$(date +%s)" '{ if ($NF + 0 > now - 3600 * 24 * 3 + 3600 * 3) $NF = "recent"; print }'
}

run_side() {
	local p=$1
	shift
	fixture
	"$@" >"$p.out" 2>"$p.err"
	echo $? >"$p.rc"
	cd "$W" && tree_state >"$p.tree"
}

# dcmp NAME CMD ARGS...: GNU's CMD and filerun CMD agree on everything.
dcmp() {
	local name=$1
	shift
	run_side "$tmp/gnu" "$@"
	run_side "$tmp/box" "$FILERUN" "$@"
	local what=
	if [ -n "${DCMP_FILTER:-}" ]; then
		sed -i "$DCMP_FILTER" "$tmp/gnu.out" "$tmp/box.out"
	fi
	cmp -s "$tmp/gnu.out" "$tmp/box.out" || what="$what stdout"
	cmp -s "$tmp/gnu.err" "$tmp/box.err" || what="$what stderr"
	cmp -s "$tmp/gnu.rc" "$tmp/box.rc" || what="$what status"
	cmp -s "$tmp/gnu.tree" "$tmp/box.tree" || what="$what tree"
	if [ -z "$what" ]; then
		ok "$name: $*"
	else
		not_ok "$name: $* (differs:$what)"
		for k in out err rc tree; do
			cmp -s "$tmp/gnu.$k" "$tmp/box.$k" ||
				diff "$tmp/gnu.$k" "$tmp/box.$k" | head -8 | sed "s/^/#   $k: /"
		done
	fi
}

# --- ls ---
for a in "" "-l" "-a" "-A" "-1" "-R" "-d d" "-t" "-S" "-r" "-lh" "-F" "-la" "-lA" "-lR d" \
	"-lt" "-ltr" "-lS" "-lSr" "-lF" "-d" "-ld d ld lf" "-l d" "-R d" "-tr" "-Sr" "-1F" \
	"-lh big sparse zero" "-l /dev/null" "d f" "f d empty" "nope" "nope f" "-l dangling" \
	"ld" "ld/" "-l ld" "-F ld" "-aF d" "--all --reverse" "--almost-all" "--human-readable -l" \
	"--classify" "--directory d" "--recursive d" "--bogus" "-lhS ." "-d ."; do
	set -f
	set -- $a
	set +f
	dcmp ls ls "$@"
done

dcmp "ls a name with a space" ls -l 'sp ace'

# --- find ---
for a in "" "." "d" "d/" ". -name *.txt" ". -iname *.txt" ". -path ./d/*" ". -ipath ./D/S*" \
	". -type f" ". -type d" ". -type l" ". -type f,l" ". -maxdepth 1" ". -mindepth 2" \
	". -maxdepth 1 -mindepth 1" ". -newer f" ". ! -newer f" ". -size -1" ". -size +1" ". -size 5000c" \
	". -size -2k" ". -size +2M" ". -size 3M" ". -size 1" ". -mtime +100" ". -mtime -1" ". -mtime 0" \
	". -mmin -600" ". -mmin +6000" ". -empty" ". -empty -type d" ". -name d -prune -o -print" \
	". -path ./d -prune -o -type f -print" ". -not -name *.txt" ". ! -type d" \
	". -type f -a -name f*" ". -type f -o -type l" ". ( -name s -o -name e ) -print" \
	". -name *.txt -print0" ". -type f -name *.TXT -quit" ". -name f -print -quit" \
	". -type f -name *.txt -exec cat {} ;" ". -type f -name *.txt -exec echo X{}Y {} ;" \
	". -type f -exec echo {} +" ". -name g* -exec ls -l {} +" ". -name h* -exec false {} ;" \
	". -true" ". -false" ". -depth -name s" ". -name x , -name f" ". -foo" ". -name" ". -type z" \
	"nope" "nope d" ". -maxdepth x" ". ( -name x" ". -name x )" ". -size 3x" ". -newer nope" \
	"-P ." ". -name f -o -name zero" ". -name sp*" \
	". -printf [%p|%P|%f|%h|%s|%k|%b|%m|%M|%y|%Y|%l|%d|%n|%u|%g|%U|%G]\n" \
	"d lf dangling f -printf %t|%T@|%T+|%TY-%Tm-%Td|%TH:%TM:%TS|%Tk|%TT|%-6m|%8s|%.2f\n" \
	". -maxdepth 1 -printf %p\0" "d/ -printf %P|%h|%f\n" ". -maxdepth 0 -printf x\cy\n" \
	". -maxdepth 0 -printf %" ". -maxdepth 0 -printf \q\n" ". -maxdepth 0 -printf %Q\n" \
	". -type f -printf %s\t%p\n -o -type d -printf %p/\n"; do
	set -f
	set -- $a
	set +f
	dcmp find find "$@"
done
dcmp "find -delete" find d -name '*.txt' -delete
dcmp "find -delete dirs" find d -depth -delete
dcmp "find -exec rm" find d -type f -exec rm {} +

# --- mkdir, rmdir, rm ---
for a in "x" "d" "-p d" "-p x/y/z" "x/y" "-m 700 x" "-m u=rwx,go= x" "-m 1777 x" "-pv x/y" "-v x" \
	"-p f" "-m zz x" "" "-p -m 711 a/b" "--parents x/y" "--mode=750 x" "-X"; do
	set -f
	set -- $a
	set +f
	dcmp mkdir mkdir "$@"
done
for a in "d/e" "d" "-p d/s" "nope" "-v d/e" "--ignore-fail-on-non-empty d" "f" "" "-p d/e empty"; do
	set -f
	set -- $a
	set +f
	dcmp rmdir rmdir "$@"
done
for a in "f" "d" "-r d" "-R d" "-rf d nope" "nope" "-f nope" "" "-f" "-r ." "-r d/.." "-d d/e" \
	"-d d" "-v f zero" "-rv d" "lf ld" "-r ld" "dangling" "-r empty d/e" "--recursive --force d" \
	"--verbose f"; do
	set -f
	set -- $a
	set +f
	dcmp rm rm "$@"
done

# --- cp, mv ---
# (several entries of a directory: GNU's cp reads them in inode order, and
# each side's fresh copy of the fixture may number them differently)
for a in "f g" "f d" "f d/h.TXT" "f f" "d x" "-r d x" "-r d empty" "-R d x" "-p f g" "-a d x" \
	"-a lf x" "lf x" "-r ld x" "-d lf x" "-P lf x" "f zero d" "f zero nope" "f zero big" "" "f" \
	"-n f zero" "-v f g" "-rv d/s x" "-t d f zero" "-T d empty" "nope x" "-f f zero" "-pr d x" \
	"--archive d x" "--recursive d x" "--preserve=mode,timestamps f g" "--preserve f g" \
	"big sparse" "dangling x" "-a dangling x"; do
	set -f
	set -- $a
	set +f
	dcmp cp cp "$@"
done
for a in "f g" "f d" "d empty" "d empty/x" "nope x" "d d/s" "f d/h.TXT" "-v f g" "-n f zero" \
	"empty f" "f d/" "lf ld empty" "-t d f lf" "f" "" "-T d empty" "-f f zero" "dangling x" \
	"ld x" "big sparse"; do
	set -f
	set -- $a
	set +f
	dcmp mv mv "$@"
done

# mv across file systems: a copy keeping modes and times, then the removal
X=$(mktemp -d /dev/shm/shfile-mv.XXXXXX 2>/dev/null)
if [ -n "$X" ] && [ "$(stat -c %d "$X")" != "$(stat -c %d "$tmp")" ]; then
	for k in gnu box; do
		fixture
		rm -rf "${X:?}"/*
		if [ $k = gnu ]; then mv d f lf "$X/" 2>"$tmp/$k.err"; else "$FILERUN" mv d f lf "$X/" 2>"$tmp/$k.err"; fi
		echo "rc=$?" >>"$tmp/$k.err"
		(cd "$X" && find . -mindepth 1 -printf '%p %y %m %s %l %T@\n' | sort) >"$tmp/$k.tree"
		tree_state >>"$tmp/$k.tree"
	done
	if cmp -s "$tmp/gnu.tree" "$tmp/box.tree" && cmp -s "$tmp/gnu.err" "$tmp/box.err"; then
		ok "mv across file systems (to $X's tmpfs): same trees as GNU"
	else
		not_ok "mv across file systems"
		diff "$tmp/gnu.tree" "$tmp/box.tree" | head -10 | sed 's/^/#   /'
	fi
	rm -rf "$X"
else
	[ -n "$X" ] && rm -rf "$X"
	skip "mv across file systems" "no tmpfs /dev/shm on another file system than $tmp"
fi

# --- touch, ln, chmod, install ---
for a in "f" "new" "-c new" "-d 2021-05-05 f new" "-d @1600000000 f" "-t 202101020304 f" \
	"-t 202101020304.05 new" "-t 2101020304 f" "-r big new" "-a f" "-m -d 2021-01-01 f" \
	"-a -d 2021-01-01 f" "d" "nope/x" "-d junk f" "-h lf" "-h -d 2011-11-11 lf" "" \
	"-d 2024-02-29T10:11:12 f" "-d 2024-02-29 10:11:12.25 f" "--date=@0 f" "--no-create new f" \
	"--reference=zero f" "dangling"; do
	set -f
	set -- $a
	set +f
	dcmp touch touch "$@"
done
for a in "f" "f g" "-s f g" "f d" "-s f d/h.TXT" "-sf f d/h.TXT" "-f f zero" "d x" "nope x" \
	"-s nope x" "-sv f g" "-v f g" "f zero d" "-s ../f d/" "-sfn empty ld" "-sf empty ld" \
	"-T f d" "-t d f lf" "" "-s f f" "f zero nope" "--symbolic --force f zero"; do
	set -f
	set -- $a
	set +f
	dcmp ln ln "$@"
done
for a in "755 f" "u+x f" "-w f" "-x,g+w f" "go-rwx f" "a=r f" "+x f" "u=rw,g=r,o= f" "-R 700 d" \
	"-R go+rX d" "-v 644 f zero" "-c 640 f zero" "755 nope" "zz f" "755" "" "+t d/e" "1777 d/e" \
	"o=u f" "g=u,o-r f" "755 lf" "-f 755 nope" "-R u-w,a+X d" "0 f" "a-x big" "u+s,u-s f" \
	"--recursive 750 d" "--verbose 600 f" "--changes 640 f" "-Rv 755 d" "-Z 755 f" "=rw f" "u=,g=,o= f"; do
	set -f
	set -- $a
	set +f
	dcmp chmod chmod "$@"
done
for a in "-d x/y" "f x" "-m 644 f x" "-m u=rw,go=r f x" "-D f a/b/c" "f zero d" "-v f x" \
	"-d -m 700 x" "-p f x" "nope x" "d x" "-t d f zero" "" "f" "-T f d" "-d d" "-Dv f a/b" \
	"-m zz f x" "-c f x"; do
	set -f
	set -- $a
	set +f
	dcmp install install "$@"
done

# --- realpath, readlink, stat ---
for a in "f" "lf ld d/s" "nope" "nope/x" "-e nope" "-e f" "-m nope/x/../y" "-m a/../../x" \
	"-s ld/../f" "-q nope/x" "" "-z f lf" "." "/" "ld/" "dangling" "-e dangling" "/usr/../etc" \
	"--relative-to=d f" "--relative-to=d/s d" "--relative-to=/ f" "--relative-to=. d/s/g.txt" \
	"--relative-to=nope/x f" "-m --relative-to=d/zz d/s"; do
	set -f
	set -- $a
	set +f
	dcmp realpath realpath "$@"
done
for a in "lf" "f" "-v f" "-f ld/s" "-e nope" "-e f" "-m nope/a" "-n lf" "-f lf ld" "" "dangling" \
	"-f dangling" "-e dangling" "-z lf" "-q f" "-s f" "ld"; do
	set -f
	set -- $a
	set +f
	dcmp readlink readlink "$@"
done
# (a fresh copy of the fixture has new change and birth times: those lines are
# compared on /etc/passwd)
for a in "f" "lf" "d" "-L lf" "-L ld" "zero" "/dev/null" "dangling" "f d"; do
	set -f
	set -- $a
	set +f
	DCMP_FILTER='/^Change: /d; /^ Birth: /d; s/Inode: [0-9]*/Inode: N/' dcmp stat stat "$@"
done
for a in "nope" "-L nope" "" "/etc/passwd" "-c %x|%X|%y|%Y|%z|%Z|%w|%W /etc/passwd /" \
	"-c %n|%N|%s|%b|%B|%o|%f|%F|%a|%A|%u|%U|%g|%G|%h|%d|%D|%t|%T|%x|%y|%X|%Y|%%| f lf d" \
	"-c %10s|%-6n|%04a|%.3n|%5h| f big" "--printf=%n\t%s\n f d" "--printf=%n\\0%s\\101\\n f" \
	"-L -c %F lf dangling" "--format=%s f" "-c %Hd|%Ld f" "-c %F zero sparse bin1"; do
	set -f
	set -- $a
	set +f
	dcmp stat stat "$@"
done

# --- du, df ---
for a in "" "-s" "-sh d" "-a" "-c d empty" "-h" "-d 1 ." "--max-depth=0 d" "-b d" "nope" "f" "-sk d" \
	"-ah d" "-s d f" "--apparent-size -s d" "-hs sparse big" "-ab" "--summarize --human-readable ." \
	"-d x"; do
	set -f
	set -- $a
	set +f
	dcmp du du "$@"
done
dfcmp() {
	local name="df${*:+ $*}" g b
	fixture
	g=$(df "$@" 2>&1 | awk 'NR == 1 { print; next } { print $1, $NF }'; echo "rc=${PIPESTATUS[0]}")
	b=$("$FILERUN" df "$@" 2>&1 | awk 'NR == 1 { print; next } { print $1, $NF }'; echo "rc=${PIPESTATUS[0]}")
	if [ "$g" = "$b" ]; then ok "$name (header, file system, mount point)"; else not_ok "$name"; diag "$g" "$b"; fi
}
dfcmp
dfcmp -h
dfcmp .
dfcmp -h .
dfcmp -P . /
dfcmp -k /dev/null
dfcmp nope
# the numbers of a quiet file system (a tmpfs) agree exactly
if [ -d /dev/shm ] && df /dev/shm >/dev/null 2>&1; then
	dcmp "df numbers" df /dev/shm
	dcmp "df -h numbers" df -h /dev/shm
else
	skip "df numbers" "no /dev/shm"
fi

# --- date, sleep, truncate, mktemp, which ---
for a in "-d @0" "-u -d @86400 +%Y-%m-%d_%H:%M:%S_%Z" \
	"-d @1700000000.123456789 +%s.%N|%3N|%:z|%::z|%j|%U|%a|%A|%b|%B|%e|%-d|%_m|%F|%T|%D|%R|%y|%C|%p|%I|%u|%w|%%|%h|%c|%x|%X|%G|%V|%10N" \
	"-d 2024-02-29 +%F" "-d 2024-02-29T10:11:12 +%FT%T" "-u -d 2024-02-29T10:11:12Z" "-d @0 -R" \
	"-d @0 -I" "-d @0 -Iseconds" "-d @0 -Ins" "-d @0 -Ihours" "-d @0 -Iminutes" \
	"-d @0 --rfc-3339=seconds" "-d @0 --rfc-3339=ns" "-d @0 +%s extra" "-r f +%s.%N" "-r nope" \
	"-d garbage" "foo" "-x" "--date=@5 --utc" "-d 2020-01-01T12:00:00Z +%s" "-d @-1 +%F"; do
	set -f
	set -- $a
	set +f
	dcmp date date "$@"
done
for a in "" "x" "0.1" "0" "1x" "-1" "0.05s" "0 0.01" "--help"; do
	set -f
	set -- $a
	set +f
	case $a in --help) continue ;; esac
	dcmp sleep sleep "$@"
done
for a in "-s 10 f" "-s +5 f" "-s -1 f" "-s 1K new" "-c -s 3 new" "f" "-s 0 d" "-s <1 f" "-s >9 f" \
	"-s %4 f" "-s /2 d/h.TXT" "-r big zero" "-s 5 nope/x" "-s x f" "" "-s 2M zero" "-s 1KB zero" \
	"--size=7 f" "-s -10 f" "-s %0 f"; do
	set -f
	set -- $a
	set +f
	dcmp truncate truncate "$@"
done
for a in "-x" "-p" "fooXX" "-t foo/XXX" "-p /nonexist" "-d -p /nonexist" "-u -q -p /nonexist XX" "a b"; do
	set -f
	set -- $a
	set +f
	dcmp mktemp mktemp "$@"
done
mkt() {
	local name=$1 want=$2
	shift 2
	fixture
	local out
	out=$("$FILERUN" mktemp "$@")
	local rc=$?
	case $out in
	/tmp/tmp.*) trap 'cd /; rm -rf "$tmp" "'"$out"'"' EXIT ;;
	esac
	case $out in
	$want) ;;
	*) not_ok "mktemp $*: name $out"; return ;;
	esac
	if [ "$rc" -eq 0 ] && [ -e "$out" ] && [ "$(stat -c %a "$out")" = "$name" ]; then
		ok "mktemp $*: $out made, mode $name"
	else
		not_ok "mktemp $*: $out (rc $rc, $(stat -c %a "$out" 2>&1))"
	fi
}
mkt 600 "./tmp.??????????" -p .
mkt 700 "/tmp/tmp.??????????" -d
mkt 600 "./fooXXXbar.??????" ./fooXXXbar.XXXXXX
mkt 700 "$W/d/t.???" -d -p "$W/d" t.XXX
mkt 600 "$W/d/x.????.txt" --tmpdir="$W/d" --suffix=.txt x.XXXX
TMPDIR=$W/empty mkt 600 "$W/empty/y.???" -t y.XXX
PATH=$W/bin1:$W/bin2:/usr/bin:/bin
for a in "prog" "-a prog" "nope prog" "plain" "" "-a nope" "bin1/prog" "./bin2/prog" "d"; do
	set -f
	set -- $a
	set +f
	dcmp which which "$@"
done
fixture
out=$("$FILERUN" which -z prog 2>"$tmp/e"; echo "rc=$?")
check "which -z: Illegal option, status 2" \
	[ "$out" = "Usage: which [-a] args
rc=2" ] && [ "$(cat "$tmp/e")" = "Illegal option -z" ]

# --- never setuid/setgid (an error says why) ---
setid() {
	local name=$1 want=$2
	shift 2
	fixture
	chmod 4755 big 2>/dev/null
	local err rc
	err=$("$FILERUN" "$@" 2>&1 >/dev/null)
	rc=$?
	local modes
	modes=$(find . -perm /6000 -printf '%p\n' | sort | tr '\n' ' ')
	if [ "$rc" -eq 1 ] && [ "$err" = "$want" ] && [ "$modes" = "./big " ]; then
		ok "$name refuses setuid/setgid: $*"
	else
		not_ok "$name: $* (rc $rc, setid files: $modes)"
		diag "$err"
	fi
}
setid chmod "chmod: cannot set the setuid/setgid bits of 'f': box-shell never sets setuid or setgid bits" chmod u+s f
setid chmod "chmod: cannot set the setuid/setgid bits of 'f': box-shell never sets setuid or setgid bits" chmod 2755 f
setid chmod "chmod: cannot set the setuid/setgid bits of 'd': box-shell never sets setuid or setgid bits" chmod g+s d
setid chmod "chmod: cannot set the setuid/setgid bits of 'd/s': box-shell never sets setuid or setgid bits
chmod: cannot set the setuid/setgid bits of 'd/s/g.txt': box-shell never sets setuid or setgid bits" chmod -R g+s d/s
setid mkdir "mkdir: cannot set the setuid/setgid bits of mode '2755': box-shell never sets setuid or setgid bits" mkdir -m 2755 x
setid install "install: cannot set the setuid/setgid bits of mode '4755': box-shell never sets setuid or setgid bits" install -m 4755 f x
setid install "install: cannot set the setuid/setgid bits of mode 'u+s': box-shell never sets setuid or setgid bits" install -m u+s f x
setid "cp -p" "cp: not preserving the setuid/setgid bits of 'big': box-shell never sets setuid or setgid bits" cp -p big x
setid "cp -a" "cp: not preserving the setuid/setgid bits of 'big': box-shell never sets setuid or setgid bits" cp -a big x
fixture
chmod 4755 big
"$FILERUN" cp -p big x 2>/dev/null
check "cp -p copies the file without setuid (mode 755, times kept)" \
	[ "$(stat -c '%a %Y' x)" = "755 $(stat -c %Y big)" ]
fixture
"$FILERUN" chmod -R 700 d 2>/dev/null
check "chmod -R on a setgid-free tree works" [ "$(stat -c %a d/s)" = 700 ]

# --- decision sequences (docs/box-policy.5.md) ---
# dseq NAME EXPECTED CMD ARGS...: the decisions filerun logged, with $W as T.
# DSEQ_SORT=1: compared sorted (several entries of a directory come in
# readdir order, which depends on the file system).
dseq() {
	local name=$1 want=$2
	shift 2
	fixture
	rm -f "$tmp/log"
	FILERUN_LOG=$tmp/log "$FILERUN" "$@" >/dev/null 2>&1
	local got
	got=$(sed "s#$W#T#g" "$tmp/log" 2>/dev/null)
	if [ -n "${DSEQ_SORT:-}" ]; then
		got=$(echo "$got" | sort)
		want=$(echo "$want" | sort)
	fi
	if [ "$got" = "$want" ]; then
		ok "decisions of $name"
	else
		not_ok "decisions of $name"
		diff <(echo "$want") <(echo "$got") | sed 's/^/#   /' | head -20
	fi
}
dseq "mv f g (rename legs)" "fs:read read_metadata T/g
fs:read read_content T/f
fs:move rename T/f
fs:move rename T/g" mv f g
dseq "mv f zero (onto an existing file: its delete)" "fs:read read_metadata T/zero
fs:read read_content T/f
fs:move rename T/f
fs:move rename T/zero
fs:delete remove_file T/zero" mv f zero
dseq "mv f d (into a directory: also f's lstat, for its file system)" "fs:read read_metadata T/d
fs:read read_metadata T/f
fs:read read_content T/f
fs:move rename T/f
fs:move rename T/d/f" mv f d
dseq "mv lf x (a symlink moves as an entry)" "fs:read read_metadata T/x
fs:read read_content T/lf
fs:move rename T/lf
fs:move rename T/x" mv lf x
dseq "ln f g (hard link)" "fs:read read_metadata T/g
fs:read read_metadata T/f
fs:read read_content T/f
fs:write write_content T/g" ln f g
dseq "ln -s f g (symlink: target read_content, link symlink)" "fs:read read_metadata T/g
fs:read read_content T/f
fs:write symlink T/g" ln -s f g
dseq "ln -sf f zero" "fs:read read_metadata T/zero
fs:read read_content T/f
fs:write symlink T/zero
fs:read read_metadata T/zero
fs:delete remove_file T/zero
fs:read read_content T/f
fs:write symlink T/zero" ln -sf f zero
dseq "touch f (existing: write_content)" "fs:write write_content T/f" touch f
dseq "touch new (created: write_content)" "fs:write write_content T/new" touch new
dseq "touch -c new" "fs:write write_content T/new" touch -c new
dseq "rm f" "fs:delete remove_file T/f" rm f
DSEQ_SORT=1 dseq "rm -r d (one decision per entry)" "fs:read read_metadata T/d
fs:read enumerate T/d
fs:delete remove_file T/d/h.TXT
fs:read enumerate T/d/e
fs:delete remove_dir T/d/e
fs:read enumerate T/d/s
fs:delete remove_file T/d/s/g.txt
fs:delete remove_dir T/d/s
fs:delete remove_dir T/d" rm -r d
dseq "rm -r ld (the link itself)" "fs:read read_metadata T/ld
fs:delete remove_file T/ld" rm -r ld
dseq "rmdir d/e" "fs:delete remove_dir T/d/e" rmdir d/e
dseq "mkdir -p x/y (only the missing ones)" "fs:write create_dir T/x
fs:write create_dir T/x/y" mkdir -p x/y
dseq "mkdir -p d/s (existing)" "fs:write create_dir T/d/s
fs:read read_metadata T/d/s" mkdir -p d/s
dseq "cp f g" "fs:read read_metadata T/g
fs:read read_metadata T/f
fs:read read_content T/f
fs:write write_content T/g" cp f g
dseq "cp -p f g" "fs:read read_metadata T/g
fs:read read_metadata T/f
fs:read read_content T/f
fs:write write_content T/g
fs:write set_permissions T/g
fs:write write_content T/g" cp -p f g
dseq "cp -r d/s x (nothing asked about what it just made)" "fs:read read_metadata T/x
fs:read read_metadata T/d/s
fs:write create_dir T/x
fs:read enumerate T/d/s
fs:read read_metadata T/d/s/g.txt
fs:read read_content T/d/s/g.txt
fs:write write_content T/x/g.txt" cp -r d/s x
dseq "rm -r d/s (strict order: entries, then the directory)" "fs:read read_metadata T/d/s
fs:read enumerate T/d/s
fs:delete remove_file T/d/s/g.txt
fs:delete remove_dir T/d/s" rm -r d/s
dseq "cp -a lf x (a link and its times)" "fs:read read_metadata T/x
fs:read read_metadata T/lf
fs:read read_link T/lf
fs:read read_content T/f
fs:write symlink T/x
fs:write write_content T/x" cp -a lf x
dseq "chmod 600 f" "fs:read read_metadata T/f
fs:write set_permissions T/f" chmod 600 f
dseq "ls d (names only: enumerate)" "fs:read read_metadata T/d
fs:read enumerate T/d" ls d
DSEQ_SORT=1 dseq "ls -l d (entries read_metadata in a batch)" "fs:read read_metadata T/d
fs:read enumerate T/d
fs:read read_metadata T/d/h.TXT
fs:read read_metadata T/d/e
fs:read read_metadata T/d/s" ls -l d
dseq "ls -l lf (read_link)" "fs:read read_metadata T/lf
fs:read read_link T/lf" ls -l lf
DSEQ_SORT=1 dseq "find d" "fs:read read_metadata T/d
fs:read enumerate T/d
fs:read read_metadata T/d/h.TXT
fs:read read_metadata T/d/e
fs:read read_metadata T/d/s
fs:read enumerate T/d/e
fs:read enumerate T/d/s
fs:read read_metadata T/d/s/g.txt" find d
dseq "find -exec +: its child decided on its own" "fs:read read_metadata T/d/s
fs:read enumerate T/d/s
fs:read read_metadata T/d/s/g.txt
shell:exec cat d/s/g.txt" find d/s -type f -exec cat {} +
dseq "find -delete" "fs:read read_metadata T/d/s
fs:read enumerate T/d/s
fs:read read_metadata T/d/s/g.txt
fs:delete remove_file T/d/s/g.txt
fs:delete remove_dir T/d/s" find d/s -delete
dseq "stat lf (read_metadata of the link itself)" "fs:read read_metadata T/lf" stat -c %s lf
dseq "readlink lf" "fs:read read_link T/lf" readlink lf
dseq "truncate -s 0 f" "fs:write write_content T/f" truncate -s 0 f
DSEQ_SORT=1 dseq "du -s d" "fs:read read_metadata T/d
fs:read enumerate T/d
fs:read read_metadata T/d/h.TXT
fs:read read_metadata T/d/e
fs:read read_metadata T/d/s
fs:read enumerate T/d/e
fs:read enumerate T/d/s
fs:read read_metadata T/d/s/g.txt" du -s d
dseq "install -m 644 f x" "fs:read read_metadata T/x
fs:read read_metadata T/f
fs:read read_metadata T/x
fs:read read_content T/f
fs:write write_content T/x
fs:write set_permissions T/x" install -m 644 f x

# --- denials: fail as the system call would, with the policy message ---
deny() {
	local name=$1 rule=$2 want_err=$3 want_rc=$4 check_cmd=$5
	shift 5
	fixture
	local err rc
	err=$(FILERUN_DENY=${rule//T/$W} "$FILERUN" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" = "$want_rc" ] && [ "$err" = "$want_err" ] && (cd "$W" && eval "$check_cmd"); then
		ok "denial: $name"
	else
		not_ok "denial: $name (rc $rc)"
		diag "$err"
	fi
}
msg="filerun denies this request (FILERUN_DENY)"
deny "rm -r d with one entry refused" "fs:delete remove_file T/d/s/g.txt" \
	"box-shell: rm: $msg
rm: cannot remove 'd/s/g.txt': Permission denied" 1 "[ -e d/s/g.txt ] && [ ! -e d/h.TXT ] && [ ! -e d/e ]" rm -r d
deny "cat-like read refused: cp" "fs:read read_content T/f" "box-shell: cp: $msg
cp: cannot open 'f' for reading: Permission denied" 1 "[ ! -e g ]" cp f g
deny "mv: the destination leg refused" "fs:move rename T/g" "box-shell: mv: $msg
mv: cannot move 'f' to 'g': Permission denied" 1 "[ -e f ] && [ ! -e g ]" mv f g
deny "ls -l: one entry's metadata refused" "fs:read read_metadata T/d/e" "box-shell: ls: $msg
ls: cannot access 'd/e': Permission denied" 1 "true" ls -l d
deny "find: a directory's enumerate refused" "fs:read enumerate T/d/s" "box-shell: find: $msg
find: 'd/s': Permission denied" 1 "true" find d
deny "touch refused" "fs:write write_content T/new" "box-shell: touch: $msg
touch: cannot touch 'new': Permission denied" 1 "[ ! -e new ]" touch new
deny "mkdir refused" "fs:write create_dir T/x" "box-shell: mkdir: $msg
mkdir: cannot create directory 'x': Permission denied" 1 "[ ! -e x ]" mkdir x
deny "chmod refused" "fs:write set_permissions T/f" "box-shell: chmod: $msg
chmod: changing permissions of 'f': Permission denied" 1 "[ \"\$(stat -c %a f)\" = 640 ]" chmod 600 f
deny "ln -s: reading the target refused" "fs:read read_content T/f" "box-shell: ln: $msg
ln: failed to create symbolic link 'g': Permission denied" 1 "[ ! -L g ]" ln -s f g

# --- --help names the supported flags ---
for c in ls find mkdir rm rmdir cp mv touch ln chmod install realpath readlink stat du df mktemp \
	date sleep truncate which; do
	out=$("$FILERUN" "$c" --help 2>&1)
	rc=$?
	case $c in
	ls) want=-R ;; find) want=-exec ;; cp) want=--archive ;; rm) want=--recursive ;;
	chmod) want=--recursive ;; which) want=-a ;; *) want=Usage ;;
	esac
	case $out in
	*"$want"*) check "$c --help names its flags" [ "$rc" -eq 0 ] ;;
	*) not_ok "$c --help"; diag "$out" ;;
	esac
done

# --- sleep is interruptible and takes its time ---
start=$(date +%s%N)
"$FILERUN" sleep 0.3
el=$((($(date +%s%N) - start) / 1000000))
check "sleep 0.3 sleeps about 300 ms ($el ms)" [ "$el" -ge 290 ] && [ "$el" -lt 2000 ]
"$FILERUN" sleep 30 &
pid=$!
sleep 0.2
kill -INT "$pid"
wait "$pid"
check "sleep stops on SIGINT with 130" [ "$?" -eq 130 ]

tap_done
