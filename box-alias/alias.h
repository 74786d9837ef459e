/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alias.h — the shell alias (docs/boxctl.1.md "The agent's view"): the program
 * behind /run/box/bin/{sh,bash,zsh,python3,python} and the files mounted
 * over sh bash zsh dash rbash in /bin and /usr/bin inside the agent's
 * sandbox. It parses its arguments as bash does, hands the invocation and
 * its fds 0-2 to box-shell over /run/box/shell.sock (proto/shell.proto, the
 * session protocol) and exits with the status box-shell reports. It never
 * reads or writes the command's data: box-shell runs the command on the
 * alias's own fds.
 *
 * Run under any other name (a link /run/box/bin/NAME for a stdio
 * [mcp.NAME]), it is an MCP alias: it hands its fds 0-2 to box-mcpd over
 * /run/box/mcp.sock (McpOpen: the alias name, its arguments, its cwd) and
 * exits with the status McpClose says, printing its message on stderr; it
 * never reads or writes the JSON-RPC frames (box-mcpd does, on those fds).
 *
 * alias_parse() is pure (unit-tested in test/unit/test_alias_parse.c);
 * alias_main() is the whole program (box-alias/main.c calls it, and so does
 * the in-process driver of test/alias/, which needs argument strings longer
 * than execve(2) allows).
 * Trusts: its arguments and environment are the caller's (the agent's) and
 * mean only what the caller asks for; box-shell's replies are checked by the
 * session table (proto/proto_shell.c) before they are used.
 */
#ifndef BOX_ALIAS_H
#define BOX_ALIAS_H

#include <stdbool.h>
#include <stddef.h>

#include "shell.pb-c.h"

/* The one place the alias connects to (docs/sandbox.md: the agent's view). */
#define BOX_ALIAS_SOCKET "/run/box/shell.sock"

/* The MCP aliases' socket: box-mcpd's (proto/mcp.proto, the session protocol). */
#define BOX_ALIAS_MCP_SOCKET "/run/box/mcp.sock"

/* Exit status of an MCP alias in a box with no MCP broker (no /run/box/mcp.sock). */
#define BOX_ALIAS_NO_BROKER 127

/* Exit status when box-shell cannot serve, or the arguments are refused (docs/boxctl.1.md). */
#define BOX_ALIAS_CANNOT_SERVE 125

/* The command text a python3/python invocation runs in box-shell (README.md). */
#define BOX_ALIAS_PYTHON_COMMAND "python3 \"$@\""

enum alias_action {
	ALIAS_RUN,     /* send the invocation to box-shell */
	ALIAS_VERSION, /* --version: print box-shell's version, exit 0 */
	ALIAS_HELP,    /* --help: print what the alias accepts, exit 0 */
	ALIAS_REFUSE,  /* an argument the alias does not accept: `error`, exit 125 */
};

/*
 * One parsed invocation. Strings point into argv (or are static); nothing is
 * allocated. `args` is argv's own tail.
 */
struct alias_invocation {
	enum alias_action action;
	Box__ShellMode mode;
	const char *command;    /* COMMAND: the -c text */
	const char *script;     /* SCRIPT: the operand as given */
	const char *arg0;       /* $0 */
	char **args;            /* $1 ... */
	size_t n_args;
	const char *invoked_as; /* sh bash zsh dash rbash */
	const char *name;       /* the name the alias answers to in messages (basename of argv[0]) */
	bool errexit, nounset, xtrace, pipefail, login, noprofile, interactive;
	bool python;            /* invoked as python3 or python (README.md) */
	char error[512];        /* ALIAS_REFUSE: one line, no trailing newline */
};

/*
 * Parse argv as bash does (docs/boxctl.1.md). `exe_name` is the basename of the file
 * the kernel ran (/proc/self/exe), used when argv[0] names no shell (NULL:
 * unknown); `stdin_tty` says whether fd 0 is a terminal (no operand then
 * means an interactive shell). Returns 0, or -EINVAL with action
 * ALIAS_REFUSE and `error` set.
 */
int alias_parse(int argc, char **argv, const char *exe_name, bool stdin_tty,
		struct alias_invocation *inv);

/* The dialect a program name stands for: "sh" "bash" "zsh" "dash" "rbash", "python3", or NULL. */
const char *alias_dialect(const char *name);

/*
 * The MCP alias name an invocation stands for, or NULL for a shell alias:
 * argv[0]'s basename when it names no shell (nor python), the file the kernel
 * ran (exe_name, NULL: unknown) is not mounted over a shell, and it is a
 * valid alias name other than "box-alias" (README.md).
 */
const char *alias_mcp_name(const char *argv0, const char *exe_name);

/* The whole alias: parse, connect, send, forward signals, wait. Returns the exit status. */
int alias_main(int argc, char **argv, char **envp);

#endif
