/* SPDX-License-Identifier: Apache-2.0 */
/*
 * toolmatch.c — boxd's re-check of a SpawnRequest (proto/shell.proto)
 * against the box's own config, before any tool sandbox is built
 * (docs/box.ini.5.md [tool.NAME]; docs/design.md). box-shell names a table; it never
 * defines what the sandbox gets: boxd starts a tool only when its own
 * tables say the same program with the same fixed arguments selects that
 * table — the longest match, as box-shell must have found it — or, with no
 * table named, when no table matches and the program lies under one of the
 * agent's exec entries (then the sandbox has the agent's grants). A request
 * for the host python3 (SpawnRequest.python: the python aliases without a
 * [tool.python3]) is python_match's: no such table, no table for the
 * program, and the program is the host python3 boxd resolved itself.
 * Pure (no I/O, no logging): test/unit/test_tool_match.c links it alone.
 * Trusts: the spec after box_validate_box_spec(); the programs as box-recheck
 * resolved them as the owner (canonical); the request only after
 * box_validate_spawn_request() (canonical absolute program_path, argv >= 1).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "boxd.h"
#include "path.h"

static void
say(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void
say(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* Does table t match: same canonical program, its fixed arguments a prefix of argv[1..]? */
static bool
table_matches(const Box__CfgTool *t, const char *program, const char *program_path,
	      char *const *argv, size_t argc)
{
	const Box__CfgArgv *cmd = t->command;

	if (!program || strcmp(program, program_path) != 0)
		return false;
	if (cmd->n_argv - 1 > argc - 1)
		return false;
	for (size_t k = 1; k < cmd->n_argv; k++)
		if (strcmp(cmd->argv[k], argv[k]) != 0)
			return false;
	return true;
}

int
tool_match(const Box__BoxSpec *s, char *const *programs, const char *tool,
	   const char *program_path, char *const *argv, size_t argc, int *tool_idx, char *msg,
	   size_t msg_len)
{
	int best = -1;

	*tool_idx = -1;
	if (argc < 1) {
		say(msg, msg_len, "a spawn needs argv[0]");
		return -EPERM;
	}
	/* The longest match among all tables (ties: the first in the config). */
	for (size_t i = 0; i < s->n_tools; i++)
		if (table_matches(s->tools[i], programs[i], program_path, argv, argc) &&
		    (best < 0 || s->tools[i]->command->n_argv > s->tools[best]->command->n_argv))
			best = (int)i;
	if (tool) {
		int named = -1;
		for (size_t i = 0; i < s->n_tools; i++)
			if (strcmp(s->tools[i]->name, tool) == 0)
				named = (int)i;
		if (named < 0) {
			say(msg, msg_len, "box-shell asked for [tool.%s], which the box's config has no "
					  "table for", tool);
			return -EPERM;
		}
		if (!programs[named] || strcmp(programs[named], program_path) != 0) {
			say(msg, msg_len, "[tool.%s] runs %s, not %s", tool,
			    programs[named] ? programs[named] : "(unresolved)", program_path);
			return -EPERM;
		}
		if (!table_matches(s->tools[named], programs[named], program_path, argv, argc)) {
			say(msg, msg_len, "[tool.%s]'s fixed arguments are not a prefix of the "
					  "invocation's", tool);
			return -EPERM;
		}
		if (best != named &&
		    s->tools[best]->command->n_argv > s->tools[named]->command->n_argv) {
			say(msg, msg_len, "[tool.%s] matches with more fixed arguments than [tool.%s]",
			    s->tools[best]->name, tool);
			return -EPERM;
		}
		*tool_idx = named;
		return 0;
	}
	if (best >= 0) {
		say(msg, msg_len, "%s is [tool.%s]'s program: it runs in that table's sandbox, not as "
				  "an exec entry", program_path, s->tools[best]->name);
		return -EPERM;
	}
	const Box__CfgFilesystem *fs = s->agent->filesystem;
	for (size_t i = 0; fs && i < fs->n_exec; i++)
		if (path_is_under(program_path, fs->exec[i]->path))
			return 0;
	say(msg, msg_len, "%s lies under no [agent.filesystem] exec entry and no [tool.NAME] runs "
			  "it", program_path);
	return -EPERM;
}

int
python_match(const Box__BoxSpec *s, char *const *programs, const char *host_python,
	     const char *program_path, char *msg, size_t msg_len)
{
	for (size_t i = 0; i < s->n_tools; i++) {
		if (strcmp(s->tools[i]->name, "python3") == 0) {
			say(msg, msg_len, "the box's config has [tool.python3]: python runs there");
			return -EPERM;
		}
		if (programs[i] && strcmp(programs[i], program_path) == 0) {
			say(msg, msg_len, "%s is [tool.%s]'s program: it runs in that table's sandbox",
			    program_path, s->tools[i]->name);
			return -EPERM;
		}
	}
	if (!host_python) {
		say(msg, msg_len, "this host has no python3 (/usr/bin/python3) to supervise");
		return -EPERM;
	}
	if (strcmp(program_path, host_python) != 0) {
		say(msg, msg_len, "%s is not the host python3 (%s)", program_path, host_python);
		return -EPERM;
	}
	return 0;
}
