#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# calls.sh — no call cycle between the files of a library: for each
# object of libboxpolicy, common/, proto/ and box-gateway/, the other objects whose symbols it uses
# (nm), then a search for a cycle in that graph. A cycle means two files
# cannot be understood, tested or replaced apart; the fix is to move the
# shared piece into a leaf file (libboxpolicy/value.c, request_field.c,
# proto/text.c and proto/walk.c).
# Trusts: nothing; it is test code reading the build's objects.
. "$(dirname "$0")/../lib.sh"

# graph DIR: lines "from to" for every cross-file call between DIR's objects.
graph() {
	local o
	for o in "$1"/*.o; do
		case $o in *.pb-c.o) continue ;; esac
		nm "$o" | awk -v f="$(basename "$o" .o)" '
			$2 ~ /^[TDBRV]$/ { print "D", f, $3 }
			$1 == "U" { print "U", f, $2 }'
	done | awk '
		$1 == "D" { def[$3] = $2 }
		$1 == "U" { use[NR] = $2 " " $3 }
		END {
			for (i in use) {
				split(use[i], a, " ")
				if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]]
			}
		}' | sort -u
}

# cycle: reads "from to" lines; prints one cycle ("a -> b -> a") or nothing.
cycle() {
	awk '
		{ adj[$1] = adj[$1] " " $2; nodes[$1]; nodes[$2] }
		function dfs(v, path,    n, i, w, ws) {
			state[v] = 1
			n = split(adj[v], ws, " ")
			for (i = 1; i <= n; i++) {
				w = ws[i]
				if (state[w] == 1) { found = path " -> " w; return 1 }
				if (state[w] == 0 && dfs(w, path " -> " w)) return 1
			}
			state[v] = 2
			return 0
		}
		END {
			for (v in nodes) if (state[v] == 0 && dfs(v, v)) { print found; exit }
		}'
}

for lib in libboxpolicy common proto box-gateway; do
	dir=$BOX_BUILD/$lib
	if ! ls "$dir"/*.o >/dev/null 2>&1; then
		not_ok "$lib: no objects in $dir (build first)"
		continue
	fi
	edges=$(graph "$dir")
	if [ -z "$edges" ] && [ "$lib" != common ]; then
		not_ok "$lib: no cross-file call found (nm failed?)"
		continue
	fi
	c=$(printf '%s\n' "$edges" | cycle)
	if [ -z "$c" ]; then
		ok "$lib: no call cycle between its files ($(printf '%s\n' "$edges" | grep -c .) edges)"
	else
		not_ok "$lib: call cycle between files: $c"
	fi
done
# The leaves the cycle-breaking moved: nothing else in the library is called from them.
for leaf in value request_field; do
	out=$(graph "$BOX_BUILD/libboxpolicy" | awk -v l="$leaf" '$1 == l')
	if [ -f "$BOX_BUILD/libboxpolicy/$leaf.o" ] && [ -z "$out" ]; then
		ok "libboxpolicy/$leaf.c is a leaf (calls nothing else in the library)"
	else
		not_ok "libboxpolicy/$leaf.c is a leaf: ${out:-no object}"
	fi
done
# proto/'s leaves: the text checks and the walker call nothing else of proto/.
for leaf in text walk; do
	out=$(graph "$BOX_BUILD/proto" | awk -v l="$leaf" '$1 == l')
	if [ -f "$BOX_BUILD/proto/$leaf.o" ] && [ -z "$out" ]; then
		ok "proto/$leaf.c is a leaf (calls nothing else in proto/)"
	else
		not_ok "proto/$leaf.c is a leaf: ${out:-no object}"
	fi
done
tap_done
