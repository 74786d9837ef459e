/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tool_match.c — boxd/toolmatch.c, boxd's re-check of box-shell's
 * SpawnRequest against its own [tool.NAME] tables and the agent's exec
 * entries (docs/box.ini.5.md [tool.NAME]): the named table must exist, run the same
 * canonical program, have its fixed arguments as a prefix of the
 * invocation's, and be the longest match; with no table named, no table may
 * match and the program must lie under an exec entry; the host python3
 * (python_match) only without a [tool.python3], for a program no table
 * runs, and only the host's own file. Spec built by hand
 * (the shape box_validate_box_spec() admits); programs as box-recheck
 * reports them (canonical).
 * Trusts: nothing; test code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "boxd/boxd.h"
#include "tap.h"

static Box__CfgArgv cmds[4];
static Box__CfgTool tools[4];
static Box__CfgTool *tool_ptrs[4];
static Box__CfgPath exec_entries[2];
static Box__CfgPath *exec_ptrs[2];
static Box__CfgFilesystem fs;
static Box__CfgAgent agent;
static Box__BoxSpec spec;
static char *programs[4];

/* [tool.git] /usr/bin/git; [tool.gitlog] git log; [tool.gitlogp] git log -p; [tool.cc] /usr/bin/gcc-12 */
static void
setup(void)
{
	static char *argv_git[] = { "/usr/bin/git" };
	static char *argv_log[] = { "/usr/bin/git", "log" };
	static char *argv_logp[] = { "/usr/bin/git", "log", "-p" };
	static char *argv_cc[] = { "/usr/bin/cc" }; /* a symlink, resolved by box-recheck */
	char **argvs[] = { argv_git, argv_log, argv_logp, argv_cc };
	size_t ns[] = { 1, 2, 3, 1 };
	static const char *names[] = { "git", "gitlog", "gitlogp", "cc" };

	box__box_spec__init(&spec);
	box__cfg_agent__init(&agent);
	box__cfg_filesystem__init(&fs);
	for (size_t i = 0; i < 4; i++) {
		box__cfg_argv__init(&cmds[i]);
		cmds[i].argv = argvs[i];
		cmds[i].n_argv = ns[i];
		box__cfg_tool__init(&tools[i]);
		tools[i].name = (char *)names[i];
		tools[i].command = &cmds[i];
		tool_ptrs[i] = &tools[i];
	}
	programs[0] = programs[1] = programs[2] = "/usr/bin/git";
	programs[3] = "/usr/bin/x86_64-linux-gnu-gcc-12";
	static const char *ex[] = { "/opt/tools", "/usr/local/bin/fmt" };
	for (size_t i = 0; i < 2; i++) {
		box__cfg_path__init(&exec_entries[i]);
		exec_entries[i].path = (char *)ex[i];
		exec_ptrs[i] = &exec_entries[i];
	}
	fs.exec = exec_ptrs;
	fs.n_exec = 2;
	agent.filesystem = &fs;
	spec.agent = &agent;
	spec.tools = tool_ptrs;
	spec.n_tools = 4;
}

static int
match(const char *tool, const char *program, int *idx, char *msg, size_t n, ...)
{
	char *argv[16];
	size_t argc = 0;
	va_list ap;

	va_start(ap, n);
	for (const char *a; argc < 16 && (a = va_arg(ap, const char *));)
		argv[argc++] = (char *)a;
	va_end(ap);
	msg[0] = '\0';
	return tool_match(&spec, programs, tool, program, argv, argc, idx, msg, n);
}

static void
test_named_table_matches(void)
{
	char msg[512];
	int idx = -2;
	CHECK_INT(match("git", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "status", NULL), 0);
	CHECK_INT(idx, 0);
	/* argv[0] is as typed: only the arguments after it are compared */
	CHECK_INT(match("git", "/usr/bin/git", &idx, msg, sizeof(msg), "./g", NULL), 0);
	CHECK_INT(idx, 0);
	CHECK_INT(match("gitlog", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "log", "-3", NULL),
		  0);
	CHECK_INT(idx, 1);
	CHECK_INT(match("gitlogp", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "log", "-p",
			NULL),
		  0);
	CHECK_INT(idx, 2);
	/* the canonical program, whatever the table's command was spelled as */
	CHECK_INT(match("cc", "/usr/bin/x86_64-linux-gnu-gcc-12", &idx, msg, sizeof(msg), "cc",
			"-c", "a.c", NULL),
		  0);
	CHECK_INT(idx, 3);
}

static void
test_longest_match_wins(void)
{
	char msg[512];
	int idx;
	CHECK_INT(match("git", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "log", NULL), -EPERM);
	CHECK(strstr(msg, "[tool.gitlog] matches with more fixed arguments than [tool.git]"));
	CHECK_INT(match("gitlog", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "log", "-p", NULL),
		  -EPERM);
	CHECK(strstr(msg, "[tool.gitlogp]"));
	/* a prefix of the words, not of the characters: "log" is not "logs" */
	CHECK_INT(match("git", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "logs", NULL), 0);
	CHECK_INT(idx, 0);
}

static void
test_named_table_refused(void)
{
	char msg[512];
	int idx;
	CHECK_INT(match("nosuch", "/usr/bin/git", &idx, msg, sizeof(msg), "git", NULL), -EPERM);
	CHECK(strstr(msg, "[tool.nosuch], which the box's config has no table for"));
	CHECK_INT(match("git", "/usr/bin/touch", &idx, msg, sizeof(msg), "touch", "x", NULL),
		  -EPERM);
	CHECK(strstr(msg, "[tool.git] runs /usr/bin/git, not /usr/bin/touch"));
	/* fixed arguments that are not a prefix */
	CHECK_INT(match("gitlog", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "status", NULL),
		  -EPERM);
	CHECK(strstr(msg, "not a prefix"));
	CHECK_INT(match("gitlogp", "/usr/bin/git", &idx, msg, sizeof(msg), "git", "log", NULL),
		  -EPERM);
	/* the spelling of the table's command is not its program: the canonical file is */
	CHECK_INT(match("cc", "/usr/bin/cc", &idx, msg, sizeof(msg), "cc", NULL), -EPERM);
	CHECK_INT(match("git", "/usr/bin/git", &idx, msg, sizeof(msg), NULL), -EPERM);
}

static void
test_exec_entries(void)
{
	char msg[512];
	int idx = 5;
	CHECK_INT(match(NULL, "/opt/tools/bin/lint", &idx, msg, sizeof(msg), "lint", NULL), 0);
	CHECK_INT(idx, -1);
	CHECK_INT(match(NULL, "/usr/local/bin/fmt", &idx, msg, sizeof(msg), "fmt", NULL), 0);
	CHECK_INT(idx, -1);
	CHECK_INT(match(NULL, "/opt/toolsx/lint", &idx, msg, sizeof(msg), "lint", NULL), -EPERM);
	CHECK(strstr(msg, "lies under no [agent.filesystem] exec entry"));
	CHECK_INT(match(NULL, "/usr/local/bin/fmt2", &idx, msg, sizeof(msg), "fmt2", NULL), -EPERM);
	/* a table's program is that table's, never an exec entry's sandbox */
	CHECK_INT(match(NULL, "/usr/bin/git", &idx, msg, sizeof(msg), "git", NULL), -EPERM);
	CHECK(strstr(msg, "[tool.git]'s program"));
	programs[3] = "/opt/tools/cc";
	CHECK_INT(match(NULL, "/opt/tools/cc", &idx, msg, sizeof(msg), "cc", NULL), -EPERM);
	programs[3] = "/usr/bin/x86_64-linux-gnu-gcc-12";
	/* no exec entries at all */
	spec.agent->filesystem = NULL;
	CHECK_INT(match(NULL, "/opt/tools/bin/lint", &idx, msg, sizeof(msg), "lint", NULL), -EPERM);
	spec.agent->filesystem = &fs;
}

static void
test_host_python(void)
{
	char msg[512];
	const char *host = "/usr/bin/python3.11";
	CHECK_INT(python_match(&spec, programs, host, host, msg, sizeof(msg)), 0);
	/* another python (a copy, a build of one's own), or none on this host */
	CHECK_INT(python_match(&spec, programs, host, "/proj/bin/python3", msg, sizeof(msg)),
		  -EPERM);
	CHECK(strstr(msg, "is not the host python3 (/usr/bin/python3.11)"));
	CHECK_INT(python_match(&spec, programs, NULL, host, msg, sizeof(msg)), -EPERM);
	/* a table runs that file: its sandbox, never the supervised one */
	programs[3] = "/usr/bin/python3.11";
	CHECK_INT(python_match(&spec, programs, host, host, msg, sizeof(msg)), -EPERM);
	CHECK(strstr(msg, "[tool.cc]'s program"));
	programs[3] = "/usr/bin/x86_64-linux-gnu-gcc-12";
	/* a [tool.python3], whatever it runs */
	tools[3].name = "python3";
	CHECK_INT(python_match(&spec, programs, host, host, msg, sizeof(msg)), -EPERM);
	CHECK(strstr(msg, "has [tool.python3]"));
	tools[3].name = "cc";
}

int
main(void)
{
	setup();
	RUN(test_named_table_matches);
	RUN(test_longest_match_wins);
	RUN(test_named_table_refused);
	RUN(test_exec_entries);
	RUN(test_host_python);
	return tap_done();
}
