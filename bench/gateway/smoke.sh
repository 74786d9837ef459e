#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/gateway (run.sh --smoke, TAP lines): loadgen
# downloads, GETs and times an SSE event directly, and GETs through mitmdump and box-gateway
# with CONNECT (each skipped when absent). A few seconds.
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
