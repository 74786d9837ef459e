#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# where.sh — the directory the harnesses of test/harness/package-lock.json are installed in
# (by scripts/deps.sh, `make deps`): /opt/box-test/harnesses-HASH, HASH the first 16 hex
# digits of the lock's sha256. One install per lock on the machine, outside any checkout,
# 0755 so the test user boxtest reads it too (Claude Code's and Codex's native binaries are
# some 400 MB each: installed once, never copied per test). BOX_TEST_HARNESS_ROOT moves the
# /opt/box-test part (for a machine where /opt is not root's to write).
# Trusts: nothing; prints a path.
set -eu
lock=$(dirname "$0")/package-lock.json
hash=$(sha256sum "$lock" | cut -c1-16)
echo "${BOX_TEST_HARNESS_ROOT:-/opt/box-test}/harnesses-$hash"
