#!/usr/bin/env bash
# badinput.sh — box-sh on bad input and at its caps, its
# parse errors, its denials and the decisions it raises (items 3, 5, 6):
# each bad input gets an error or a timeout, never a crash or unbounded
# memory; a refused command prints "box-shell: <command>: <message>", has
# status 126 and the script goes on; --decisions lists the shell:exec
# requests in order (a command substitution's, a wrapper's and an xargs
# child's each its own; an assignment-only command none).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
BOX_SH=${BOX_BIN:-build/bin}/box-sh
case $BOX_SH in /*) ;; *) BOX_SH=$PWD/$BOX_SH ;; esac
tmp=$(mktemp -d /tmp/shcore-bad.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
echo 'permit(principal, action, resource);' >allow.cedar
bsh() { "$BOX_SH" --policy "$tmp/allow.cedar" "$@"; }

# expect NAME WANT_STATUS STDERR_PATTERN -- CMD...: runs CMD (stdin from
# $tmp/in if present), checks the status, that it was not a signal, and
# that stderr matches the extended regex.
expect() {
	local name=$1 want=$2 pat=$3
	shift 4
	"$@" >out 2>err
	local rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name: status $rc, want $want"
		head -c 400 err | sed 's/^/#   /'
	elif [ -n "$pat" ] && ! grep -Eq -- "$pat" err; then
		not_ok "$name: stderr does not match /$pat/"
		head -c 400 err | sed 's/^/#   /'
	else
		ok "$name"
	fi
}

# -- bad input --
printf 'echo a\necho b\0c\n' >nul.sh
expect "NUL byte refused, naming the line" 2 '^nul.sh: line 2: NUL byte in the script: refused$' -- bsh nul.sh
[ ! -s out ] && ok "NUL byte: nothing ran" || not_ok "NUL byte: nothing ran"

printf 'echo \377\376 ok\n' >latin.sh
expect "not UTF-8: bytes accepted as bash does" 0 '' -- bsh latin.sh
printf '\377\376 ok\n' | cmp -s - out && ok "not UTF-8: bytes passed through" ||
	not_ok "not UTF-8: bytes passed through"

python3 -c "print('echo ' + 'x' * (1 << 20))" >big.sh
expect "1 MiB command line runs" 0 '' -- bsh -s <big.sh
[ "$(wc -c <out)" -eq $(((1 << 20) + 1)) ] && ok "1 MiB command line: all of it echoed" ||
	not_ok "1 MiB command line: $(wc -c <out) bytes"

# an extglob pattern that backtracks exponentially (bash takes minutes): the
# step budget ends it as no match (pattern.c), under the command timeout
cat >extglob.sh <<'EOF2'
shopt -s extglob
v=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab
[[ $v == *(a|aa)*(a|aa)*(a|aa)c ]] && echo match || echo nomatch
echo "${v//*(a|aa)*(a|aa)c/X}"
EOF2
expect "extglob backtracking: ends within its step budget" 0 '' -- bsh --command-timeout 60s extglob.sh
[ "$(head -1 out)" = nomatch ] && ok "extglob backtracking: no match" ||
	not_ok "extglob backtracking: $(head -1 out)"

# a process substitution's fd is the script's only while its command runs:
# after it, /dev/fd/N is refused as any fd the script did not open
cat >procsub.sh <<'EOF2'
cat <(echo inside)
cat /dev/fd/63
EOF2
expect "process substitution: its fd closes with its command" 1 'fd 63 is not open in this script' -- bsh procsub.sh
[ "$(head -1 out)" = inside ] && ok "process substitution: read while open" ||
	not_ok "process substitution: $(head -1 out)"

python3 -c "print('( ' * 10000 + 'echo deep' + ' )' * 10000)" >deep.sh
expect "10,000 nested parentheses: a syntax error" 2 'nesting too deep' -- bsh deep.sh
python3 -c "print('{ ' * 10000 + 'echo deep; ' + '} ' * 10000)" >deepb.sh
expect "10,000 nested braces: a syntax error" 2 'nesting too deep' -- bsh deepb.sh
python3 -c "print('echo ' + '\$(' * 5000 + 'x' + ')' * 5000)" >deepc.sh
expect "5,000 nested command substitutions: a syntax error" 2 'nesting too deep' -- bsh deepc.sh
python3 -c "print('echo \$((' + '(' * 10000 + '1' + ')' * 10000 + '))')" >deepa.sh
expect "10,000 nested arithmetic parentheses: an error" 1 'nesting too deep' -- bsh deepa.sh

# chains the parser builds one level per link, and expressions evaluated
# by recursion: no stack overflow (each used to crash the shell)
python3 -c "print('true' + ' && true' * 100000 + ' || false; echo \$?')" >andor.sh
expect "100,000 && operators run" 0 '' -- bsh andor.sh
grep -qx 0 out && ok "100,000 && operators: status 0" || not_ok "100,000 && operators: $(head -c 80 out)"
python3 -c "print('if false; then :; ' + 'elif false; then :; ' * 100000 + 'else echo else; fi')" >elif.sh
expect "100,000 elif branches run" 0 '' -- bsh elif.sh
grep -qx else out && ok "100,000 elif branches: the else runs" || not_ok "100,000 elif branches: $(head -c 80 out)"
python3 -c "print('[[ ' + '! ' * 100001 + 'x ]]; echo \$?')" >dbnot.sh
expect "[[ with 100,001 ! runs" 0 '' -- bsh dbnot.sh
grep -qx 1 out && ok "[[ with 100,001 !: false" || not_ok "[[ with 100,001 !: $(head -c 80 out)"
python3 -c "print('[[ ' + '( ' * 10000 + 'x' + ' )' * 10000 + ' ]]')" >dbparen.sh
expect "[[ with 10,000 nested ( ): an error" 2 'nesting too deep' -- bsh dbparen.sh
expect "test with 200,001 ! arguments" 1 '' -- \
	bsh -c 'set -- $(printf "! %.0s" {1..200001}); [ "$@" x ]'
expect "test with 10,000 nested ( ): an error" 2 'nested too deeply' -- \
	bsh -c 'set -- $(printf "( %.0s" {1..10000}) x $(printf ") %.0s" {1..10000}); test "$@"'
python3 -c "print('echo \$((' + '1?' * 10000 + '1' + ':1' * 10000 + '))')" >ternary.sh
expect "10,000 nested ?: an error" 1 'nesting too deep' -- bsh ternary.sh
python3 -c "print('echo \$((' + 'x=' * 10000 + '1))')" >assigns.sh
expect "10,000 chained assignments in arithmetic: an error" 1 'nesting too deep' -- bsh assigns.sh

printf 'cat <<EOF\nno end\n' >hd.sh
expect "here-doc without its end: a warning" 0 \
	"^hd.sh: line 2: warning: here-document at line 1 delimited by end-of-file \(wanted \`EOF'\)$" -- bsh hd.sh
grep -qx 'no end' out && ok "here-doc without its end: body kept" || not_ok "here-doc without its end: body kept"
printf 'read foo <<EOF\n$(echo hi\nEOF\necho "st=$?"\ncat <<EOF\n${x:-$(echo a\nEOF\necho end\n' >hdcs.sh
expect "here-doc with an unclosed \$( ): no crash" 0 '' -- bsh hdcs.sh
grep -q 'end$' out && ok "here-doc with an unclosed \$( ): the script goes on" ||
	not_ok "here-doc with an unclosed \$( ): the script goes on"

start=$(date +%s)
expect "endless while under --command-timeout: 124" 124 'timed out' -- \
	bsh --command-timeout 1s -c 'while :; do :; done'
end=$(date +%s)
[ $((end - start)) -le 5 ] && ok "endless while stopped within 5 s" || not_ok "endless while took $((end - start)) s"
expect "SIGTERM ignored: SIGKILL 2 s later, still 124" 124 'timed out' -- \
	bsh --command-timeout 1s -c 'trap "" TERM; while :; do :; done'

# -- caps --
# (the stack runs out first in a sanitizer build: the same error, said so)
expect "function nesting cap" 1 'maximum (function nesting level exceeded \(1000\)|nesting level exceeded: the stack is used up)' -- \
	bsh -c 'f() { f; }; f'
# a level's stack depends on what it nests: checked against the stack itself
# (which cap comes first depends on the stack's size: 1 for the stack, 0
# for the call cap, whose failure the loop's break then clears)
deep='h() { case 1 in 1) if true; then while true; do { h; }; break; done; fi;; esac; }; h'
# nesting_refused WHAT CMD...: CMD ends 0 or 1 with one of the two nesting errors, not SIGSEGV
nesting_refused() {
	local what=$1 rc
	shift
	"$@" >out 2>err
	rc=$?
	if [ "$rc" -le 1 ] && grep -Eq 'maximum (function nesting level exceeded \(1000\)|nesting level exceeded: the stack is used up)' err; then
		ok "$what: an error, not SIGSEGV"
	else
		not_ok "$what: status $rc"
		head -c 400 err | sed 's/^/#   /'
	fi
}
nesting_refused "recursion through compound commands" bsh -c "$deep"
# the same on a small main-thread stack with a big environment above it (the floor was glibc's
# pthread_getattr_np's, which reads /proc/self/maps and let box-sh run past the stack's end:
# SIGSEGV with 240 KB of environment under a 1100 KiB stack)
small_stack() {
	local big
	big=$(head -c 60000 /dev/zero | tr '\0' x)
	(ulimit -s 1100 && A1=$big A2=$big A3=$big A4=$big "$@")
}
nesting_refused "recursion on a 1100 KiB stack under 240 KB of environment" small_stack bsh -c "$deep"
python3 -c "print('echo /' + 'a/' * 30000 + 'b*')" >globdeep.sh
expect "a glob of 30,000 components matches nothing" 0 '' -- bsh globdeep.sh
rm -f globdeep.sh
# a regex whose nested counts multiply past RE_DUP_MAX: refused at once (glibc
# took minutes and gigabytes building it, in bash too)
expect "=~ with nested counted repetitions: refused" 2 '' -- \
	bsh -c '[[ aaa =~ ((a{1,255}){1,255}){1,255} ]]'
expect "grep -E with nested counted repetitions: refused" 2 'grep: Memory exhausted' -- \
	bsh -c 'echo aaa | grep -E "((a{1,255}){1,255}){1,255}"'
expect "grep (BRE) with nested counted repetitions: refused" 2 'grep: Memory exhausted' -- \
	bsh -c 'echo aaa | grep "\(\(a\{1,255\}\)\{1,255\}\)\{1,255\}"'
expect "sed -E with nested counted repetitions: refused" 1 'Memory exhausted' -- \
	bsh -c 'echo aaa | sed -E "s/((a{1,255}){1,255}){1,255}/x/"'
expect "a counted regex under the bound still matches" 0 '' -- \
	bsh -c '[[ 1.2.3.4 =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] && echo 10.0.0.1 | grep -qE "^([0-9]{1,3}\.){3}[0-9]{1,3}$"'
expect "brace expansion cap" 1 'too many words \(max 1048576\)' -- bsh -c 'echo {1..100000000}'
expect "variable length cap (doubling loop ends)" 1 'value too long \(max 16777216 bytes\)' -- \
	bsh -c 'x=y; while :; do x=$x$x; done'
expect "array index cap" 1 'array index too large' -- bsh -c 'a[99999999]=x'
expect "eval nesting cap" 1 'maximum (function )?nesting level exceeded' -- \
	bsh -c 'e="eval \"\$e\""; eval "$e"'

# -- parse errors (exit 2, bash's messages) --
expect "syntax error near token" 2 "^box-sh: line 2: syntax error near unexpected token \`fi'$" -- \
	bsh -c 'echo a
fi'
grep -qx a out && ok "commands before a syntax error ran" || not_ok "commands before a syntax error ran"
expect "unexpected end of file" 2 '^box-sh: line 2: syntax error: unexpected end of file$' -- \
	bsh -c 'if true; then
echo x'
expect "unmatched quote" 2 "unexpected EOF while looking for matching \`''" -- bsh -c "echo 'abc"
expect "bad usage" 2 'policy FILE is required' -- "$BOX_SH" -c true
expect "bad policy" 2 'box-sh: ' -- "$BOX_SH" --policy /nonexistent-shcore -c true
"$BOX_SH" --help | grep -q 'NO sandbox' && ok "--help says standalone mode has no sandbox" ||
	not_ok "--help says standalone mode has no sandbox"

# -- invocation (bash's options) --
echo 'echo "$#:$1:$2"' >sargs.sh
bsh -s -- a b <sargs.sh >out 2>err
[ "$(cat out)" = "2:a:b" ] && ok "-s -- ARGS: the arguments after --" || not_ok "-s -- ARGS: got '$(cat out)'"
printf 'false\necho no\n' >se.sh
bsh -s -e x <se.sh >out 2>err
rc=$?
[ $rc -eq 1 ] && [ ! -s out ] && ok "-s -e ARG: -e is an option" || not_ok "-s -e ARG: status $rc, out '$(cat out)'"
expect "+i: accepted (not interactive)" 0 '' -- bsh +i -c 'echo ok'
grep -qx ok out && ok "+i: the command ran" || not_ok "+i: the command ran"
expect "a message's prefix is \$0 under -c" 127 '^zz: line 1: nosuch_posix: command not found$' -- \
	bsh -c 'nosuch_posix' zz

# -- denials --
cat >deny.cedar <<'POL'
permit (principal, action, resource);
@id("no_rm") forbid (principal, action == Box::Action::"shell:exec", resource)
  when { context.input.program == "rm" };
@id("no_spawn_rm") forbid (principal, action == Box::Action::"shell:spawn", resource)
  when { context.input.program == "rm" };
POL
dsh() { "$BOX_SH" --policy "$tmp/deny.cedar" "$@"; }
touch victim
expect "refused command: 126, message, script goes on" 0 '^box-shell: rm -f victim: ' -- \
	dsh -c 'rm -f victim; echo "after $?"'
grep -qx 'after 126' out && [ -e victim ] && ok "refused command: status 126, file kept" ||
	not_ok "refused command: status 126, file kept"
expect "refused in a pipeline stage" 0 '^box-shell: rm victim: ' -- \
	dsh -c 'echo x | rm victim; echo "st $?"'
grep -qx 'st 126' out && ok "pipeline stage refused on its own" || not_ok "pipeline stage refused on its own"
expect "refused in a command substitution" 0 '^box-shell: rm victim: ' -- \
	dsh -c 'x=$(rm victim); echo "st $?"'
expect "refused as a wrapper's child" 0 '^box-shell: rm victim: ' -- dsh -c 'env rm victim; echo "st $?"'
grep -qx 'st 126' out && ok "env child refused: 126" || not_ok "env child refused: 126"
expect "refused as an xargs child" 0 '^box-shell: rm victim: ' -- \
	dsh -c 'echo victim | xargs rm; echo "st $?"'
expect "refused inside a nested shell" 0 '^box-shell: rm victim: ' -- \
	dsh -c 'sh -c "rm victim; echo inner \$?"; echo "st $?"'
grep -qx 'inner 126' out && ok "nested shell judged per command" || not_ok "nested shell judged per command"
[ -e victim ] && ok "victim survived every attempt" || not_ok "victim survived every attempt"

# -- the decisions raised, in order --
printf 'in1\n' >items
bsh --decisions dec.jsonl -c 'x=$(echo b); y=1; env echo c; xargs echo <items; [ 1 = 1 ]' >/dev/null
got=$(grep -o '"action":"shell:exec","resource":"[^"]*"' dec.jsonl | sed 's/.*resource":"//; s/"$//' | tr '\n' ' ')
[ "$got" = "echo env echo xargs echo [ " ] && ok "decisions: one shell:exec per command, children on their own" ||
	not_ok "decisions: got '$got'"
grep -q '"command":"xargs echo"' dec.jsonl && grep -q '"command":"echo in1"' dec.jsonl &&
	ok "decisions: command = program and expanded args" || not_ok "decisions: command fields"
bsh --decisions dec2.jsonl -c 'cd /; ls -d / >/dev/null' >/dev/null
grep -q '"operation":"change_dir"' dec2.jsonl && ok "cd decides fs:read change_dir" ||
	not_ok "cd decides fs:read change_dir"
bsh --decisions dec3.jsonl -c 'touch g1 g2; echo g* > list' >/dev/null
grep -q '"operation":"enumerate"' dec3.jsonl && grep -q '"operation":"write_content"' dec3.jsonl &&
	ok "a glob enumerates, a redirection writes (both decided)" || not_ok "glob/redirection decisions"
[ "$(cat list)" = "g1 g2" ] && ok "glob result" || not_ok "glob result: $(cat list)"
bsh --decisions dec4.jsonl -c '/bin/true' >/dev/null
grep -q '"action":"shell:spawn"' dec4.jsonl && grep -q '"program_path":"/usr/bin/true"' dec4.jsonl &&
	ok "a host program: shell:spawn with program_path" || not_ok "host program decision"
tap_done
