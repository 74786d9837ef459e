#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/policy (run.sh --smoke, TAP lines): the frozen
# inputs' sums, every request of the three bench policies decided alike with and without the
# rule index, and a short libboxpolicy run of each (figures printed, not gated). No node.
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
