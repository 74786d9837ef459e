#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shell.sh — the shell's four parts stay apart (docs/design.md §2): libshell/ (the
# interpreter) and libshell/cmd/ (its own commands) form libshell.a, which holds no
# daemon code and no decision back end; box-sh/ (the standalone shell) links no daemon
# code; only box-shell/ holds the daemon. The interpreter reaches its program through
# the host-operations table (libshell/host.h) and decide.h's back end, never through a
# weak reference. Reads the sources and the build's objects and binaries (nm).
# Trusts: nothing; it is test code.
. "$(dirname "$0")/../lib.sh"

BIN=${BOX_BIN:-build/bin}
BUILD=${BOX_BUILD:-build}
lib=$BUILD/libshell/libshell.a

# globals DEFINED by the objects or archives given
defs() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }

# No weak reference anywhere in the shell (code lines; a comment may name the word).
weak=$(git ls-files -- libshell box-sh box-shell | grep -E '\.(c|h)$' |
	xargs grep -nE '__attribute__ *\(\( *weak|#pragma +weak' 2>/dev/null)
if [ -z "$weak" ]; then
	ok "no weak reference in libshell/, box-sh/ or box-shell/ (host.h's table instead)"
else
	not_ok "weak references in the shell's sources"
	diag "$weak"
fi

# Only box-shell/ is the daemon: nothing else includes its headers.
dinc=$(git ls-files -- libshell box-sh | grep -E '\.(c|h)$' |
	xargs grep -nE '#include "(daemon|daemon_start|daemon_fds|lineedit|policy_client)\.h"' 2>/dev/null)
if [ -z "$dinc" ]; then
	ok "libshell/ and box-sh/ include no daemon header"
else
	not_ok "libshell/ or box-sh/ includes a daemon header"
	diag "$dinc"
fi
# The commands see cmd.h (and fsops.h, decide.h, host.h), never the interpreter's sh.h.
cinc=$(git ls-files -- libshell/cmd | grep -E '\.(c|h)$' | xargs grep -nE '#include "sh\.h"' 2>/dev/null)
if [ -z "$cinc" ]; then
	ok "libshell/cmd/ includes no sh.h (the commands' interface is cmd.h)"
else
	not_ok "libshell/cmd/ includes the interpreter's sh.h"
	diag "$cinc"
fi

if [ ! -f "$lib" ] || [ ! -x "$BIN/box-sh" ] || [ ! -x "$BIN/box-shell" ]; then
	not_ok "libshell.a, box-sh and box-shell built (build first)"
	tap_done
	exit
fi
daemon_objs=$(ls "$BUILD"/box-shell/*.o 2>/dev/null)
boxsh_objs=$(ls "$BUILD"/box-sh/*.o 2>/dev/null)
if [ -z "$daemon_objs" ] || [ -z "$boxsh_objs" ]; then
	not_ok "the objects of box-shell/ and box-sh/ built (build first)"
	tap_done
	exit
fi
daemon_defs=$(defs $daemon_objs)
boxsh_defs=$(defs $boxsh_objs)
lib_defs=$(defs "$lib")

# libshell.a: what it needs of a program is decide.h's back end only.
backend=$(grep -oE '\bsh_[a-z_]+ *\(' libshell/decide.h | tr -d ' (' | sort -u)
needs=$(nm -u "$lib" 2>/dev/null | awk '{ print $NF }' | sort -u | comm -23 - <(echo "$lib_defs"))
from_prog=$(comm -12 <(echo "$needs") <(printf '%s\n' $daemon_defs $boxsh_defs | sort -u) |
	comm -23 - <(echo "$backend") | tr '\n' ' ')
if [ -n "$backend" ] && [ -z "$from_prog" ]; then
	ok "libshell.a needs nothing of box-shell/ or box-sh/ but decide.h's back end"
else
	not_ok "libshell.a uses a program's symbols beyond decide.h: $from_prog"
fi
# Neither the engine nor box-policyd's client: each program brings its own back end.
eng=$(grep -E '^(bp_|engine_|policy_client_)' <<<"$needs" | tr '\n' ' ')
if [ -z "$eng" ]; then
	ok "libshell.a uses neither libboxpolicy nor libpolicyclient"
else
	not_ok "libshell.a uses the engine or the client: $eng"
fi
wk=$(nm "$lib" 2>/dev/null | awk '$1 == "w" || $1 == "v" { print $2 }' | sort -u | tr '\n' ' ')
if [ -z "$wk" ]; then
	ok "libshell.a holds no weak undefined symbol"
else
	not_ok "libshell.a has weak undefined symbols: $wk"
fi
shd=$(grep -E '^shd_' <<<"$lib_defs" | tr '\n' ' ')
if [ -z "$shd" ]; then
	ok "libshell.a defines no daemon (shd_) symbol"
else
	not_ok "libshell.a defines daemon symbols: $shd"
fi

# The programs: box-sh links no daemon object, box-shell no box-sh object.
prog_syms() { nm "$1" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TtDdRrBb]$/ { print $3 }' | sort -u; }
# main is every program's, decide.h's back end each program's own
only() { grep -vx main <<<"$1" | comm -23 - <(echo "$backend"); }
in_boxsh=$(comm -12 <(prog_syms "$BIN/box-sh") <(only "$daemon_defs") | tr '\n' ' ')
if [ -z "$in_boxsh" ]; then
	ok "box-sh links no symbol of box-shell/ (no daemon code)"
else
	not_ok "box-sh links daemon symbols: $in_boxsh"
fi
in_daemon=$(comm -12 <(prog_syms "$BIN/box-shell") <(only "$boxsh_defs") | tr '\n' ' ')
if [ -z "$in_daemon" ]; then
	ok "box-shell links no symbol of box-sh/ (no in-process back end, no decision log)"
else
	not_ok "box-shell links box-sh's symbols: $in_daemon"
fi
# Each program installs its table; the own commands come through it.
for p in box-sh box-shell; do
	if prog_syms "$BIN/$p" | grep -qx sh_own_commands && prog_syms "$BIN/$p" | grep -qx sh_host_set; then
		ok "$p: installs a host table with the own commands (sh_host_set, sh_own_commands)"
	else
		not_ok "$p: no host table or no own commands"
	fi
done
tap_done
