#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# policy-examples.sh — every policy example in docs/ holds in a box: each fenced block marked
# `cedar` in docs/*.md (docs/box-policy.5.md "Examples": such a block is a whole policy) loads
# with `boxctl policy check` (no error), and `boxctl policy eval --home /home/dev` of its trace
# test/docs/policy-examples/DOC.ID.req — requests and recorded outcomes in the order a running
# box sends them (box-shell's fs:read exec before each shell:spawn, the response after a
# permitted one; the gateway's net:connect before its requests) — gives DOC.ID.out line by
# line (DOC: the file's name without .md; ID: the block's first @id). A block without a trace
# fails, and so does a trace whose block is gone. `policy-examples.sh --regen` rewrites the
# .out files from the current engine (review the diff before committing).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
boxctl=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/boxctl
traces=$here/policy-examples
regen=0
[ "${1:-}" = --regen ] && regen=1
tmp=$(mktemp -d /tmp/policy-examples.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Each cedar block to $tmp/DOC.ID.cedar (ID: its first @id; "block-N" when it has none).
for doc in "$root"/docs/*.md; do
	awk -v dir="$tmp" -v doc="$(basename "$doc" .md)" '
		/^```cedar[[:space:]]*$/ { inblock = 1; n++; text = ""; id = ""; next }
		inblock && /^```/ {
			inblock = 0
			if (id == "") id = "block-" n
			f = dir "/" doc "." id ".cedar"
			printf "%s", text > f
			close(f)
			next
		}
		inblock {
			text = text $0 "\n"
			if (id == "" && match($0, /@id\("[^"]*"\)/))
				id = substr($0, RSTART + 5, RLENGTH - 7)
		}' "$doc"
done

found=0
for cedar in "$tmp"/*.cedar; do
	[ -e "$cedar" ] || continue
	found=$((found + 1))
	name=$(basename "$cedar" .cedar)
	if "$boxctl" policy check --home /home/dev "$cedar" >"$tmp/check.out" 2>"$tmp/check.err"; then
		ok "$name: loads ($(cat "$tmp/check.out"))"
	else
		not_ok "$name: boxctl policy check refuses it"
		sed 's/^/#   /' "$tmp/check.err"
		continue
	fi
	req=$traces/$name.req out=$traces/$name.out
	if [ ! -f "$req" ]; then
		not_ok "$name: a trace $req (every cedar block of docs/ has one)"
		continue
	fi
	"$boxctl" policy eval --home /home/dev "$cedar" "$req" >"$tmp/got" 2>"$tmp/err"
	rc=$?
	if [ $regen = 1 ]; then cp "$tmp/got" "$out"; fi
	if [ $rc -ne 0 ] || grep -q '"error"' "$tmp/got"; then
		not_ok "$name: policy eval of the trace (exit $rc)"
		grep '"error"' "$tmp/got" | sed 's/^/#   /'
		sed 's/^/#   /' "$tmp/err"
		continue
	fi
	if [ ! -f "$out" ]; then
		not_ok "$name: the expected decisions $out"
		continue
	fi
	mapfile -t want <"$out"
	mapfile -t got <"$tmp/got"
	[ "${#want[@]}" -eq "${#got[@]}" ] ||
		not_ok "$name: ${#got[@]} decisions, expected ${#want[@]}"
	for ((i = 0; i < ${#want[@]}; i++)); do
		if [ "${want[i]}" = "${got[i]:-}" ]; then
			ok "$name: decision $((i + 1)): $(sed 's/.*"verdict":"\([a-z]*\)","cause":"\([a-z_]*\)".*/\1 (\2)/' <<<"${want[i]}")"
		else
			not_ok "$name: decision $((i + 1))"
			diag "want: ${want[i]}" "got:  ${got[i]:-}"
		fi
	done
done
check "docs/ has policy examples (cedar blocks: $found)" test "$found" -gt 0
for req in "$traces"/*.req; do
	[ -e "$req" ] || continue
	name=$(basename "$req" .req)
	check "$name.req: its block is still in docs/" test -e "$tmp/$name.cedar"
done
tap_done
