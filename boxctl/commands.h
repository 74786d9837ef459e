/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.h — boxctl's subcommands. Each returns boxctl's exit status
 * (docs/boxctl.1.md: 0 ok, 1 runtime failure, 2 usage or load refusal).
 */
#ifndef BOXCTL_COMMANDS_H
#define BOXCTL_COMMANDS_H

enum {
	BOXCTL_EXIT_OK = 0,
	BOXCTL_EXIT_FAILURE = 1,
	BOXCTL_EXIT_USAGE = 2,
};

#include <stdbool.h>
#include <stddef.h>

#include "boxd.pb-c.h"

struct box_config;
struct bp_diags;

int cmd_check(int argc, char **argv);
/* `boxctl init` (init.c): a box.ini and a policy for a coding agent. */
int cmd_init(int argc, char **argv);
/*
 * box.ini as a box start takes it (check.c): the config as the caller sees it
 * (SERVICE: a boxd service answers), its policy, the BoxSpec boxd is sent,
 * boxd's own validation of that spec and the spec's own refusals
 * (proto/spec_check.c, which boxd applies again). `check` and `run` both
 * load through here, so check refuses whatever run would refuse before a
 * box is built. Refusals are printed (box.ini:LINE, policy FILE:LINE:COL);
 * returns a BOXCTL_EXIT_* code, and with OK *cfg, *spec, the rule count and
 * the policy's warnings (to print after what the command prints).
 */
/* Does a service boxd answer on $BOX_SOCKET (else /run/box/boxd.sock)? */
bool service_answers(void);
int box_load(const char *path, bool service, struct box_config **cfg, Box__BoxSpec **spec,
	     long *n_rules, struct bp_diags **warnings);
void check_print_policy_warnings(const struct box_config *cfg, const struct bp_diags *warnings);
/* Refusals from boxd or box_load: `boxctl: FILE:LINE: [SECTION] KEY: MESSAGE` on stderr. */
void print_problems(const struct box_config *cfg, const Box__BoxSpec *spec, Box__Problem **p,
		    size_t n);
int cmd_policy(int argc, char **argv);
/* `boxctl policy suggest` (policy_suggest.c), dispatched by cmd_policy. */
int cmd_policy_suggest(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_stop(int argc, char **argv);
/* `boxctl approve|deny` (ask.c): a person's answer to a decision held for them. */
int cmd_approve(int argc, char **argv);
int cmd_deny(int argc, char **argv);
/* `boxctl shell NAME|ID` (shell.c): a person's interactive box shell in a running box. */
int cmd_shell(int argc, char **argv);
int cmd_log(int argc, char **argv);
/* `boxctl mcp pins|accept` (mcp.c). */
int cmd_mcp(int argc, char **argv);
/* snapshot.c: [box] snapshot = workspace (docs/snapshot.md) */
int cmd_diff(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_discard(int argc, char **argv);
/* boxctl doctor: each layer box uses on this host (doctor.c). */
int cmd_doctor(int argc, char **argv);

#endif
