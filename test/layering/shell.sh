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

# none WHAT FOUND: ok "WHAT" when FOUND (what the check turned up) is empty.
none() {
	if [ -z "$2" ]; then
		ok "$1"
	else
		not_ok "$1; found:"
		diag "$2"
	fi
}
# code lines of the tracked C files under the folders given matching REGEX
src_grep() {
	local re=$1
	shift
	git ls-files -- "$@" | grep -E '\.(c|h)$' | xargs grep -nE "$re" 2>/dev/null
}

# No weak reference anywhere in the shell: host.h's table instead.
none "no weak reference in libshell/, box-sh/ or box-shell/" \
	"$(src_grep '__attribute__ *\(\( *weak|#pragma +weak' libshell box-sh box-shell)"
# Only box-shell/ is the daemon: nothing else includes its headers.
none "libshell/ and box-sh/ include no daemon header" \
	"$(src_grep '#include "(daemon|daemon_start|daemon_fds|lineedit|policy_client)\.h"' libshell box-sh)"
# The commands see cmd.h (and fsops.h, decide.h, host.h), never the interpreter's sh.h.
none "libshell/cmd/ includes no sh.h (the commands' interface is cmd.h)" \
	"$(src_grep '#include "sh\.h"' libshell/cmd)"

if [ ! -f "$lib" ] || [ ! -x "$BIN/box-sh" ] || [ ! -x "$BIN/box-shell" ]; then
	not_ok "libshell.a, box-sh and box-shell built (build first)"
	tap_done
	exit
fi
# the objects of the sources that exist (a build tree may keep objects of moved files)
objs_of() { for c in "$1"/*.c; do [ -e "$BUILD/${c%.c}.o" ] && echo "$BUILD/${c%.c}.o"; done; }
daemon_objs=$(objs_of box-shell)
boxsh_objs=$(objs_of box-sh)
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
[ -n "$backend" ] || not_ok "decide.h declares no back-end function (grep failed?)"
needs=$(nm -u "$lib" 2>/dev/null | awk '{ print $NF }' | sort -u | comm -23 - <(echo "$lib_defs"))
none "libshell.a needs nothing of box-shell/ or box-sh/ but decide.h's back end" \
	"$(comm -12 <(echo "$needs") <(printf '%s\n' $daemon_defs $boxsh_defs | sort -u) |
		comm -23 - <(echo "$backend"))"
# Neither the engine nor box-policyd's client: each program brings its own back end.
none "libshell.a uses neither libboxpolicy nor libpolicyclient" \
	"$(grep -E '^(bp_|engine_|policy_client_)' <<<"$needs")"
none "libshell.a holds no weak undefined symbol" \
	"$(nm "$lib" 2>/dev/null | awk '$1 == "w" || $1 == "v" { print $2 }' | sort -u)"
none "libshell.a defines no daemon (shd_) symbol" "$(grep -E '^shd_' <<<"$lib_defs")"

# The programs: box-sh links no daemon object, box-shell no box-sh object.
prog_syms() { nm "$1" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TtDdRrBb]$/ { print $3 }' | sort -u; }
# main is every program's, decide.h's back end each program's own
only() { grep -vx main <<<"$1" | comm -23 - <(echo "$backend"); }
none "box-sh links no symbol of box-shell/ (no daemon code)" \
	"$(comm -12 <(prog_syms "$BIN/box-sh") <(only "$daemon_defs"))"
none "box-shell links no symbol of box-sh/ (no in-process back end, no decision log)" \
	"$(comm -12 <(prog_syms "$BIN/box-shell") <(only "$boxsh_defs"))"
# Each program installs its table; the own commands come through it.
for p in box-sh box-shell; do
	none "$p: installs a host table with the own commands (sh_host_set, sh_own_commands)" \
		"$(comm -13 <(prog_syms "$BIN/$p") <(printf '%s\n' sh_host_set sh_own_commands))"
done
tap_done
