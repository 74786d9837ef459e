/*
 * commands.h — boxctl's subcommands. Each returns boxctl's exit status
 * (CLI.md: 0 ok, 1 runtime failure, 2 usage or load refusal).
 */
#ifndef BOXCTL_COMMANDS_H
#define BOXCTL_COMMANDS_H

enum {
	BOXCTL_EXIT_OK = 0,
	BOXCTL_EXIT_FAILURE = 1,
	BOXCTL_EXIT_USAGE = 2,
};

struct box_config;
struct bp_diags;

int cmd_check(int argc, char **argv);
/* `boxctl init` (init.c): a box.ini and a policy for a coding agent. */
int cmd_init(int argc, char **argv);
/*
 * The policy step of `check` (check.c), which `run` runs too before it
 * contacts boxd: errors printed as `boxctl: FILE:LINE:COL: error: …`;
 * returns a BOXCTL_EXIT_* code, the warnings in *warnings.
 */
int check_policy(struct box_config *cfg, long *n_rules, struct bp_diags **warnings);
void check_print_policy_warnings(const struct box_config *cfg, const struct bp_diags *warnings);
int cmd_policy(int argc, char **argv);
/* `boxctl policy suggest` (policy_suggest.c), dispatched by cmd_policy. */
int cmd_policy_suggest(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_log(int argc, char **argv);
/* `boxctl mcp pins|accept` (mcp.c). */
int cmd_mcp(int argc, char **argv);

#endif
