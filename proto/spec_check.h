/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec_check.h — the refusals a BoxSpec earns by itself, before any file is
 * looked at (docs/box.ini.5.md): reserved environment names,
 * grants of / and of what the sandbox builds itself (/proc /dev /run/box).
 * One function for every side: boxd re-checks each client's spec with it
 * before it plans (boxd/plan.c), and boxctl's check and run call it on the
 * spec they build, so `boxctl check` refuses what a box start would.
 * Library code: negative errno, never logs.
 * Trusts: a spec box_validate_box_spec() accepted.
 */
#ifndef BOX_SPEC_CHECK_H
#define BOX_SPEC_CHECK_H

#include <stdbool.h>

#include "boxd.pb-c.h"

/* Each refusal as a problem (box.ini:LINE [SECTION] KEY): ADD takes it. */
typedef void (*box_spec_problem_fn)(void *arg, Box__Problem *p);
/* 0, or -ENOMEM (the problems added so far stand). */
int box_spec_problems(const Box__BoxSpec *s, box_spec_problem_fn add, void *arg);
/* Does an [egress] binding of S name the variable NAME (its `variable`, or env://NAME)? */
bool box_spec_egress_variable(const Box__BoxSpec *s, const char *name);
/*
 * Does S relay the agent's OpenTelemetry (a [telemetry.NAME] target whose
 * include has `agent`)? Then the agent gets an OTLP receiver
 * and the OTEL_EXPORTER_OTLP_* variables are box's (reserved).
 */
bool box_spec_agent_telemetry(const Box__BoxSpec *s);
/* How many [telemetry.NAME] kind = otlp targets S has (box-gateway exports to each). */
size_t box_spec_otlp_targets(const Box__BoxSpec *s);
/* Is an [agent.filesystem] entry PATH refused by box_spec_problems? */
bool box_spec_grant_refused(const char *path);
/* The path lists of a [*.filesystem] section, with their keys, in box.ini(5)'s order. */
struct box_spec_fs_list {
	Box__CfgPath **v;
	size_t n;
	const char *key;
};
#define BOX_SPEC_FS_LISTS 6
void box_spec_fs_lists(const Box__CfgFilesystem *fs,
		       struct box_spec_fs_list out[BOX_SPEC_FS_LISTS]);

#endif
