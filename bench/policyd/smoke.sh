#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/policyd (run.sh --smoke, TAP lines): the quick
# run ends 0 and prints every row (the 4-peer pass and the pipelined history passes once
# failed under `make bench` alone, unseen). No figure is gated.
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
