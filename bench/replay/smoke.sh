#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/replay (run.sh --smoke, TAP lines): replay
# against eval on a 20,000-line generated log, the counts cross-checked, memory flat.
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
