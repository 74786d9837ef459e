#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-harness-gemini.sh — Gemini CLI (@google/gemini-cli, a node bundle) in a box made by
# `boxctl init --agent gemini`, against a loopback mock of the Gemini API
# (streamGenerateContent with server-sent events), and outside the box; see lib-harness.sh.
AGENT=gemini
HARNESS_PKG=@google/gemini-cli
MOCK_API=gemini
API_HOST=generativelanguage.googleapis.com
URL_PATH=
KEY_VAR=GEMINI_API_KEY
PLACEHOLDER_PREFIX=AIza
REFUSED_HOST=play.googleapis.com
SNAP_REL=
CA_VARS=NODE_EXTRA_CA_CERTS
# harness_args WHERE MCP_COMMAND PROJECT: one non-interactive prompt, no approvals (the box is
# the sandbox); the MCP server added to the project's settings (boxctl init wrote them; the
# project is trusted: box.ini says so).
harness_args() {
	mkdir -p "$3/.gemini"
	python3 - "$2" "$3/.gemini/settings.json" <<'PY'
import json, os, sys
c, f = sys.argv[1].split(), sys.argv[2]
s = json.load(open(f)) if os.path.exists(f) else {}
s["mcpServers"] = {"notes": {"command": c[0], "args": c[1:], "trust": True}}
json.dump(s, open(f, "w"), indent=2)
PY
	printf '%s\n' -p "run the scripted session" --yolo
}
. test/harness/lib-harness.sh
harness_main
