#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fetch.sh — fetch the outside shell conformance suites run.sh runs (bash's tests/ and
# busybox's shell/ash_test/) from Debian's source packages, once per machine, into the
# directory where.sh names. Called by scripts/deps.sh (`make deps`, `make check`).
#
# apt-get source with a private deb-src list, lists and cache under $SUITES_ROOT/apt: the
# machine's apt sources are neither read for this nor changed. What it got is verified three
# ways: apt checks the .dsc against the signed Release file of the mirror (signed-by the Debian
# archive keyring), the .dsc's sha256 must be the one where.sh pins, and dpkg-source -x checks
# the tarballs against the .dsc's checksums. Only bash's tests/ and support/ and busybox's
# shell/ash_test/ are kept. A stamp written last makes a second run return at once without
# the network. An unreachable mirror, a missing version or a wrong checksum fail loudly (exit
# 1); nothing is ever skipped in silence.
# Trusts: the Debian archive keyring and the pins of where.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/where.sh"

stamp_ok() { # DIR VER SHA
	[ "$(cat "$1/.box-suite" 2>/dev/null)" = "$2 $3" ]
}
if stamp_ok "$SUITES_BASH" "$SUITES_BASH_VER" "$SUITES_BASH_DSC_SHA256" &&
	stamp_ok "$SUITES_BB" "$SUITES_BB_VER" "$SUITES_BB_DSC_SHA256"; then
	exit 0
fi

die() {
	echo "suites: $*" >&2
	exit 1
}
for t in apt-get dpkg-source sha256sum; do
	command -v "$t" >/dev/null 2>&1 || die "$t is missing (package dpkg-dev / apt); run make deps as root"
done
if ! mkdir -p "$SUITES_DIR" "$SUITES_APT/lists/partial" "$SUITES_APT/archives/partial" 2>/dev/null ||
	[ ! -w "$SUITES_DIR" ]; then
	echo "suites: the shell conformance suites are not in $SUITES_DIR; as root run:" >&2
	echo "  make deps   (or BOX_TEST_SUITES_ROOT=DIR make deps for a directory of yours)" >&2
	exit 1
fi
umask 022

apt_opts=(
	-o "Dir::Etc::SourceList=$SUITES_APT/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$SUITES_APT/lists"
	-o "Dir::Cache=$SUITES_APT"
	-o Acquire::Retries=2
)
updated=0
apt_update() {
	[ "$updated" -eq 1 ] && return 0
	printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		"$SUITES_MIRROR" "$SUITES_DIST" >"$SUITES_APT/sources.list"
	echo "suites: apt-get update (private list: $SUITES_APT/sources.list)"
	# apt-get update exits 0 on some fetch failures; -o APT::Update::Error-Mode=any is not in
	# bookworm's apt, so a warning line ("W:" / "E:") counts as failure too.
	local log
	log=$(apt-get "${apt_opts[@]}" -q update 2>&1) || { echo "$log" >&2; die "apt-get update failed (is $SUITES_MIRROR reachable?)"; }
	if grep -qE '^(W|E|Err):' <<<"$log"; then
		echo "$log" >&2
		die "apt-get update could not fetch the $SUITES_DIST source index from $SUITES_MIRROR"
	fi
	updated=1
}

# fetch_one PKG VER DSC-SHA256 DEST KEEP...: DEST holds the KEEP paths of the source tree.
fetch_one() {
	local pkg=$1 ver=$2 sha=$3 dest=$4
	shift 4
	stamp_ok "$dest" "$ver" "$sha" && return 0
	local dsc=$SUITES_DIR/${pkg}_${ver#*:}.dsc got
	got=$(sha256sum "$dsc" 2>/dev/null | cut -d' ' -f1 || true)
	if [ "$got" != "$sha" ]; then
		apt_update
		echo "suites: apt-get source --download-only $pkg=$ver"
		(cd "$SUITES_DIR" && apt-get "${apt_opts[@]}" -q source --download-only "$pkg=$ver") ||
			die "apt-get source $pkg=$ver failed (mirror $SUITES_MIRROR, $SUITES_DIST)"
		got=$(sha256sum "$dsc" 2>/dev/null | cut -d' ' -f1 || true)
		[ "$got" = "$sha" ] || die "$dsc: sha256 ${got:-(none)}, want $sha (pinned in test/shell/suites/where.sh)"
	fi
	local tmp
	tmp=$(mktemp -d "$SUITES_DIR/.extract.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	# -x checks every tarball against the .dsc's checksums and applies Debian's patches (the
	# /bin/bash of a Debian machine is the patched one).
	dpkg-source -q -x "$dsc" "$tmp/src" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; die "dpkg-source -x $dsc failed"; }
	mkdir "$tmp/keep"
	local p
	for p in "$@"; do
		[ -d "$tmp/src/$p" ] || die "$dsc has no $p/"
		mkdir -p "$tmp/keep/$(dirname "$p")"
		mv "$tmp/src/$p" "$tmp/keep/$p"
	done
	chmod -R go+rX,go-w "$tmp/keep"
	rm -rf "$dest"
	mv "$tmp/keep" "$dest"
	echo "$ver $sha" >"$dest/.box-suite"
	rm -rf "$tmp"
	trap - EXIT
	echo "suites: $pkg $ver in $dest"
}

fetch_one "$SUITES_BASH_PKG" "$SUITES_BASH_VER" "$SUITES_BASH_DSC_SHA256" "$SUITES_BASH" tests support
fetch_one "$SUITES_BB_PKG" "$SUITES_BB_VER" "$SUITES_BB_DSC_SHA256" "$SUITES_BB" shell/ash_test
