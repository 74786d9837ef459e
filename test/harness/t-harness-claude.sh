#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-harness-claude.sh — Claude Code (@anthropic-ai/claude-code, its native binary) in a box
# made by `boxctl init --agent claude-code`, against a loopback mock of the Anthropic Messages
# API (server-sent events), and outside the box; see lib-harness.sh.
AGENT=claude-code
HARNESS_PKG=@anthropic-ai/claude-code
MOCK_API=anthropic
API_HOST=api.anthropic.com
URL_PATH=
KEY_VAR=ANTHROPIC_API_KEY
PLACEHOLDER_PREFIX=sk-ant-api03-
REFUSED_HOST=statsig.anthropic.com
SNAP_REL=.claude/shell-snapshots
CA_VARS=NODE_EXTRA_CA_CERTS
# harness_args WHERE MCP_COMMAND PROJECT: print mode, no permission prompts (the box is the
# sandbox), the test's MCP server only.
harness_args() {
	local mcp
	mcp=$(python3 -c 'import json,sys; c=sys.argv[1].split(); print(json.dumps({"mcpServers": {"notes": {"type": "stdio", "command": c[0], "args": c[1:]}}}))' "$2")
	printf '%s\n' -p "run the scripted session" --dangerously-skip-permissions \
		--mcp-config "$mcp" --strict-mcp-config
}
. test/harness/lib-harness.sh
harness_main
