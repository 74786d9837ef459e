#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-harness-codex.sh — Codex (@openai/codex, its native binary) in a box made by
# `boxctl init --agent codex`, against a loopback mock of the OpenAI Responses API
# (server-sent events; Codex's code-mode `exec` tool drives exec_command, apply_patch and the
# MCP tools), and outside the box; see lib-harness.sh.
AGENT=codex
HARNESS_PKG=@openai/codex
MOCK_API=openai
API_HOST=api.openai.com
URL_PATH=/v1
KEY_VAR=OPENAI_API_KEY
PLACEHOLDER_PREFIX=sk-
REFUSED_HOST=chatgpt.com
SNAP_REL=.codex/shell_snapshots
CA_VARS=SSL_CERT_FILE
# harness_args WHERE MCP_COMMAND PROJECT: one non-interactive turn, the test's MCP server.
harness_args() {
	local c=($2) a q
	a=$(printf '"%s",' "${c[@]:1}")
	printf '%s\n' exec --skip-git-repo-check \
		-c "mcp_servers.notes.command=\"${c[0]}\"" -c "mcp_servers.notes.args=[${a%,}]" \
		"run the scripted session"
}
. test/harness/lib-harness.sh
harness_main
