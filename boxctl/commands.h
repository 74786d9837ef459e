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

int cmd_check(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_log(int argc, char **argv);

#endif
