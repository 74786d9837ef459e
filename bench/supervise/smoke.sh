#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/supervise (run.sh --smoke, TAP lines): a real box
# runs bench.py in a supervised and an unsupervised [tool], 300 operations each; both must
# report every figure. The ratios are printed, not gated (this machine is shared).
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
