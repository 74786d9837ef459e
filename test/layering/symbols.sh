#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# symbols.sh — each program links only the messages it speaks.
#
# The protocol tables of proto/ (proto_client.c, proto_policy.c,
# proto_plan.c, proto_recheck.c) reach common/'s framing as data, so a program that never
# names a protocol's table never links that protocol's descriptors and
# validators. This reads the symbol tables (nm) of the seven programs:
# each must hold its own protocols' tables and none of the others'
# descriptors, validators or tables. box-gateway, box-mcpd, box-shell and
# box-trampoline (a supervised program's PID 1) ask box-policyd through
# libpolicyclient.a and no other program links it. Then
# common/ must be a leaf: no symbol libboxcommon.a needs is defined by
# libboxproto.a or libboxpolicy.a, and neither of them uses libpolicyclient.a. None of the
# libraries the daemons link calls qsort (glibc's calls sysinfo(2)).
# Trusts: nothing; it is test code reading the build's binaries.
. "$(dirname "$0")/../lib.sh"

BIN=${BOX_BIN:-build/bin}
BUILD=${BOX_BUILD:-build}

client='box_proto_client box__box_spec__descriptor box__run_request__descriptor
	box__check_request__descriptor box__run_reply__descriptor box_validate_box_spec
	box_validate_run_request box_validate_run_reply'
policy='box_proto_policy box__policy_init__descriptor box__decide_request__descriptor
	box__decide_reply__descriptor box_validate_policy_init box_validate_decide_request
	box_validate_decide_reply'
plan='box_proto_plan box__plan__descriptor box__trampoline_status__descriptor
	box_plan_validate box_status_validate'
# The recheck request carries the spec's [box] and [agent] sections (boxd.proto's
# CfgBox, CfgAgent), so box-recheck links those; its table is its own.
recheck='box_proto_recheck box__recheck_request__descriptor box__recheck_reply__descriptor
	box_validate_recheck_request'

# box-gateway speaks the gateway protocol with boxd and the policy protocol as a peer.
gateway='box_proto_gateway box__gateway_init__descriptor box__gateway_ready__descriptor
	box__gateway_listener__descriptor box_validate_gateway_init box_validate_gateway_ready'
# The policy engine: the broker asks, it never evaluates.
engine='bp_policy_load bp_decide bp_request_new engine_decide'
# box-policyd's own deciding core (engine.c: the history, the monitor, the log): only its own.
policyd_core='engine_decide engine_record bp_monitor_new bp_monitor_decide'
# What a peer that decides in process links (docs/box-policy.5.md "Decisions without a round
# trip"): the engine's evaluator on the request bp_request_fill_proto builds.
local_engine='bp_decide bp_request_fill_proto'

# check PROGRAM "SPEAKS" "MUST NOT": every symbol of SPEAKS present, none of MUST NOT.
check() {
	local prog=$1 speaks=$2 foreign=$3 f=$BIN/$1 syms missing= extra= s
	if [ ! -x "$f" ]; then
		not_ok "$prog: no binary at $f (build first)"
		return
	fi
	syms=$(nm "$f" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TtDdRrBb]$/ { print $3 }' | sort -u)
	if [ -z "$syms" ]; then
		not_ok "$prog: nm found no symbols (stripped?)"
		return
	fi
	for s in $speaks; do
		grep -qx "$s" <<<"$syms" || missing="$missing $s"
	done
	for s in $foreign; do
		grep -qx "$s" <<<"$syms" && extra="$extra $s"
	done
	if [ -n "$missing" ]; then
		not_ok "$prog: lacks its own protocol's table or messages:$missing"
	else
		ok "$prog: links its protocols' tables and messages"
	fi
	if [ -n "$extra" ]; then
		not_ok "$prog: links messages of a protocol it does not speak:$extra"
	else
		ok "$prog: links no message of a protocol it does not speak"
	fi
}

check boxctl "$client" "$policy $plan box_proto_recheck box_proto_gateway"
check box-policyd "$policy" "$client $plan $recheck $gateway"
# box-trampoline's PID 1 supervises a program (supervise = fs): it asks box-policyd as a peer,
# and decides the fs:* actions that need no history in process as box-shell does (below), so it
# links the engine's evaluator and never box-policyd's deciding core.
check box-trampoline "$plan $policy $local_engine" "$client $recheck $gateway $policyd_core"
check box-clientd "$client" "$policy $plan box_proto_recheck $gateway"
check box-recheck "$recheck" "$policy $plan box_proto_client $gateway"
# box-gateway decides net:connect and http:request in process when they need no history, as
# box-shell does its actions (below), and never links box-policyd's deciding core.
check box-gateway "$gateway $policy $local_engine" "$client $plan $recheck $policyd_core box_proto_mcpsession box_proto_mcpctl"
# box-shell speaks the shell protocols and the policy protocol as a peer. It evaluates the
# actions box-policyd's PolicyLocal says need no history with the same engine (libboxpolicy:
# bp_decide on the request built by bp_request_fill_proto, docs/box-policy.5.md "Decisions
# without a round trip"), so it must link those; box-policyd's own deciding core (engine.c:
# the history, the monitor, the log) stays box-policyd's, and box-shell never builds a monitor.
shell='box_proto_shell box_proto_session box__shell_init__descriptor box__spawn_request__descriptor
	box_validate_shell_init box_validate_spawn_request '"$local_engine"
# box-mcpd speaks the MCP session and control protocols and the policy protocol as a peer;
# it never evaluates, and it never links the shell's, the gateway's or the client's messages.
mcp='box_proto_mcpsession box_proto_mcpctl box__mcp_init__descriptor box__mcp_open__descriptor
	box__mcp_server_start__descriptor box_validate_mcp_init box_validate_mcp_open'
check box-mcpd "$mcp $policy" "$client $plan $recheck $gateway $shell $engine"
check box-shell "$shell $policy" "$client $plan $recheck $gateway $policyd_core $mcp"
check boxd "$client $policy $plan $recheck $mcp box_proto_shell" ""

# box-policyd's askers share one client (libpolicyclient/); nobody else links it (boxd speaks
# the policy protocol as its starter, box-policyd is the other end).
pclient='policy_client_ask policy_client_call policy_client_record'
for prog in box-gateway box-mcpd box-shell box-trampoline; do
	f=$BIN/$prog
	if nm "$f" 2>/dev/null | awk '$2 ~ /^[Tt]$/ { print $3 }' | grep -qx policy_client_record; then
		ok "$prog: asks box-policyd through libpolicyclient"
	else
		not_ok "$prog: lacks libpolicyclient's policy_client_record (a copy of the client?)"
	fi
done
for prog in boxctl boxd box-policyd box-clientd box-recheck box-sh; do
	f=$BIN/$prog
	extra=$(nm "$f" 2>/dev/null | awk '$2 ~ /^[Tt]$/ { print $3 }' | grep -x -F "$(printf '%s\n' $pclient)" | tr '\n' ' ')
	if [ -x "$f" ] && [ -z "$extra" ]; then
		ok "$prog: links no box-policyd client"
	else
		not_ok "$prog: links the box-policyd peers' client (or is not built): $extra"
	fi
done

# common/ is a leaf: what its objects need comes from libc and libraries, never from proto/.
lib_common=$BUILD/common/libboxcommon.a
if [ ! -f "$lib_common" ] || [ ! -f "$BUILD/proto/libboxproto.a" ]; then
	not_ok "libboxcommon.a is a leaf: libraries not built"
else
	needs=$(nm -u "$lib_common" 2>/dev/null | awk '{ print $NF }' | sort -u)
	defs=$(nm --defined-only "$BUILD/proto/libboxproto.a" "$BUILD/libboxpolicy/libboxpolicy.a" \
		2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDRBV]$/ { print $3 }' | sort -u)
	up=$(comm -12 <(printf '%s\n' "$needs") <(printf '%s\n' "$defs") | tr '\n' ' ')
	if [ -z "$up" ]; then
		ok "libboxcommon.a is a leaf: it uses nothing of libboxproto.a or libboxpolicy.a"
	else
		not_ok "libboxcommon.a uses symbols of proto/ or libboxpolicy/: $up"
	fi
fi
# libpolicyclient/ sits above proto/ and common/: neither uses anything of it.
lib_pc=$BUILD/libpolicyclient/libpolicyclient.a
if [ ! -f "$lib_pc" ] || [ ! -f "$lib_common" ] || [ ! -f "$BUILD/proto/libboxproto.a" ]; then
	not_ok "libpolicyclient.a is above proto/ and common/: libraries not built"
else
	needs=$(nm -u "$lib_common" "$BUILD/proto/libboxproto.a" 2>/dev/null | awk '{ print $NF }' | sort -u)
	defs=$(nm --defined-only "$lib_pc" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDRBV]$/ { print $3 }' | sort -u)
	up=$(comm -12 <(printf '%s\n' "$needs") <(printf '%s\n' "$defs") | tr '\n' ' ')
	if [ -n "$defs" ] && [ -z "$up" ]; then
		ok "libboxproto.a and libboxcommon.a use nothing of libpolicyclient.a"
	else
		not_ok "proto/ or common/ uses libpolicyclient/ (or it defines nothing): $up"
	fi
fi
# glibc's qsort asks sysinfo(2) how much memory there is before sorting over 1 KiB, and the
# daemons' seccomp allow-lists kill that (a policy with enough indexed rules killed
# box-policyd): the libraries the daemons link sort with their own merge sorts.
for lib in "$BUILD/libboxpolicy/libboxpolicy.a" "$BUILD/proto/libboxproto.a" "$lib_common" "$lib_pc"; do
	if [ ! -f "$lib" ]; then
		not_ok "$(basename "$lib") calls no qsort: not built"
	elif nm -u "$lib" 2>/dev/null | awk '{ print $NF }' | grep -qE '^qsort(_r)?$'; then
		not_ok "$(basename "$lib") calls no qsort (glibc's calls sysinfo(2), which the daemons' filters kill)"
	else
		ok "$(basename "$lib") calls no qsort"
	fi
done
tap_done
