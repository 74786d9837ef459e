#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh — make check's short run of bench/mcp (run.sh --smoke, TAP lines): 200 tools/call
# through box-mcpd in real boxes (history_sync off and always; as root also a box of the user
# boxtest) and directly, every sum checked, a call the policy's per-tool rule forbids answered
# -32001 by the broker, both Decides of every call in the decision log; the ratios are printed,
# not gated (this machine is shared). A few seconds.
# Trusts: nothing; it is test code.
exec "$(dirname "$0")/run.sh" --smoke
