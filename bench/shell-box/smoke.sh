#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/shell-box (run.sh --smoke, TAP lines): a real box
# runs `bash -c true` through the alias, `git --version` through [tool.git] and grep -rn, find |
# xargs wc -l over a 1,000-file tree through box-policyd, each output compared with the same
# command outside the box; the ratios are printed, not gated (this machine is shared). A few
# seconds.
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
