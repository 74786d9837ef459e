/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxctl.c — the client: dispatches `boxctl COMMAND ...` to its handler.
 *
 * boxctl runs as the calling user and reads that user's files (box.ini, the
 * policy) with the user's rights. It trusts nothing it reads; boxd re-checks
 * everything boxctl sends.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "log.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static int cmd_version(int argc, char **argv);

static const struct command commands[] = {
	{ "init", cmd_init,
	  "init [--agent claude-code|codex|gemini|generic] [--api-url URL] [--program PATH] "
	  "[--force] [DIR] [-- COMMAND [ARGS...]]" },
	{ "check", cmd_check, "check [-c box.ini]" },
	{ "policy", cmd_policy, "policy check|eval|replay|suggest|reload ..." },
	{ "run", cmd_run, "run [-c box.ini] [-q] [--timings] [--embedded] [--detach | --dry-run] [-- ARGS...]" },
	{ "ps", cmd_ps, "ps" },
	{ "stop", cmd_stop, "stop NAME|ID" },
	{ "approve", cmd_approve, "approve NAME|ID [DECISION] [--box | --always]" },
	{ "deny", cmd_deny, "deny NAME|ID [DECISION] [--box]" },
	{ "shell", cmd_shell, "shell NAME|ID" },
	{ "log", cmd_log,
	  "log NAME|ID [-f] [--json] [--verdict V] [--action A] [--since T] [--source D] | "
	  "log --kernel NAME|ID" },
	{ "mcp", cmd_mcp, "mcp pins BOX | mcp accept BOX SERVER [TOOL]" },
	{ "diff", cmd_diff, "diff NAME" },
	{ "apply", cmd_apply, "apply NAME [--force] [PATH...]" },
	{ "discard", cmd_discard, "discard NAME" },
	{ "doctor", cmd_doctor, "doctor" },
	{ "version", cmd_version, "version | --version" },
	{ "help", NULL, "help" },
};

static int
cmd_version(int argc, char **argv)
{
	printf("boxctl %s\n", BOX_VERSION);
	return BOXCTL_EXIT_OK;
}

static int
usage(FILE *f)
{
	fprintf(f, "usage:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  boxctl %s\n", commands[i].usage);
	return BOXCTL_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	log_init("boxctl", 0);
	if (argc < 2)
		return usage(stderr);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		return cmd_version(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		(void)usage(stdout);
		return BOXCTL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "boxctl: error: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
