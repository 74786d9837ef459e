# SPDX-License-Identifier: Apache-2.0
# where.sh — sourced by fetch.sh and run.sh of test/shell/suites/: which Debian source
# packages hold the outside shell conformance suites and where they live on this machine.
# The versions and the sha256 of their .dsc files are pinned: the .dsc lists the checksums of
# the tarballs (dpkg-source -x checks them), so a pinned .dsc pins every byte of the suites.
# BOX_TEST_SUITES_ROOT moves /var/cache/box-test (for a machine where it is not root's to
# write); the suites are installed once per machine, outside any checkout.
# Trusts: nothing; sets variables.

SUITES_ROOT=${BOX_TEST_SUITES_ROOT:-/var/cache/box-test}
# The private apt state: a deb-src list of its own, its lists and its cache. The machine's
# apt sources are never read for this nor changed.
SUITES_APT=$SUITES_ROOT/apt
# Downloaded .dsc files and tarballs, and the extracted suites beside them.
SUITES_DIR=$SUITES_ROOT/suites
SUITES_MIRROR=${BOX_TEST_SUITES_MIRROR:-http://deb.debian.org/debian}
SUITES_DIST=bookworm

# NAME VERSION (with its epoch, as apt names it) DSC-SHA256 (the Debian source package bash's and busybox's tests come from).
SUITES_BASH_PKG=bash
SUITES_BASH_VER=5.2.15-2
SUITES_BASH_DSC_SHA256=f51753e946af43eb58549c81e03b35a47af9fe6c6364179ccd4ef862b7c3b2d3
SUITES_BB_PKG=busybox
SUITES_BB_VER=1:1.35.0-4+deb12u1
SUITES_BB_DSC_SHA256=9c01fe128b0eeded371c70e37d474fdb5055f71b5d0a778db44c6b0c62d3a7fa

# What run.sh reads: bash's tests/ and support/ (recho.c zecho.c printenv.c xcase.c), and
# busybox's shell/ash_test/ (with its own recho.c zecho.c printenv.c).
SUITES_BASH=$SUITES_DIR/bash-$SUITES_BASH_VER
SUITES_BB=$SUITES_DIR/busybox-${SUITES_BB_VER#*:}
