#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — `make bench` entry for the service under load: test/integration/t-load.sh for
# 2 minutes (10 boxes of two users, 20 concurrent workers each, shell commands and HTTPS
# requests through box-gateway), its daemons' fds and RSS compared between minute 1 and
# minute 2. Prints the test's lines; exits 0 (it reports, it does not gate), saying FAILED
# when a check failed. Env: LOAD_SECONDS (default 120), LOAD_BOXES, LOAD_WORKERS.
# Trusts: nothing; it is a benchmark.
set -u
cd "$(dirname "$0")/../.." || exit 1
echo "== load: ${LOAD_BOXES:-10} boxes x ${LOAD_WORKERS:-20} workers for ${LOAD_SECONDS:-120} s"
out=$(LOAD_SECONDS=${LOAD_SECONDS:-120} bash test/integration/t-load.sh 2>&1)
printf '%s\n' "$out" | grep -E '^(#|not ok)'
if printf '%s\n' "$out" | grep -q '^not ok'; then
	echo "load: FAILED (see the not ok lines above)"
else
	echo "load: every check held"
fi
