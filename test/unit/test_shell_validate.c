/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_shell_validate.c — box-shell's two protocols (proto/shell_validate.c,
 * proto/proto_shell.c): every validator with good and hostile values, and
 * the tables' senders, states, fd counts and size caps on real socketpairs.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "ipc.h"
#include "proto/proto_shell.h"
#include "tap.h"

/* A string of n copies of c (freed by the caller). */
static char *
rep(char c, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* ---- ShellOpen ------------------------------------------------------------ */

struct open_fx {
	Box__ShellOpen m;
	char *args[2];
	char *env[2];
};

static void
open_fx_init(struct open_fx *f)
{
	box__shell_open__init(&f->m);
	f->m.mode = BOX__SHELL_MODE__SHELL_MODE_COMMAND;
	f->m.command = "echo hi";
	f->m.arg0 = "bash";
	f->args[0] = "one";
	f->args[1] = "";
	f->m.args = f->args;
	f->m.n_args = 2;
	f->m.invoked_as = "bash";
	f->env[0] = "PATH=/usr/bin:/bin";
	f->env[1] = "EMPTY=";
	f->m.env = f->env;
	f->m.n_env = 2;
	f->m.cwd = "/home/me/project";
}

static int
open_with_cwd(const char *cwd)
{
	struct open_fx f;
	open_fx_init(&f);
	f.m.cwd = (char *)cwd;
	return box_validate_shell_open(&f.m);
}

static int
open_with_env(const char *e)
{
	struct open_fx f;
	open_fx_init(&f);
	f.env[0] = (char *)e;
	return box_validate_shell_open(&f.m);
}

static int
open_with_invoked(const char *s)
{
	struct open_fx f;
	open_fx_init(&f);
	f.m.invoked_as = (char *)s;
	return box_validate_shell_open(&f.m);
}

static int
open_mode(Box__ShellMode mode, const char *command, const char *script)
{
	struct open_fx f;
	open_fx_init(&f);
	f.m.mode = mode;
	f.m.command = (char *)command;
	f.m.script = (char *)script;
	return box_validate_shell_open(&f.m);
}

static void
test_shell_open_modes(void)
{
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, "echo", NULL), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, "", NULL), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, NULL, NULL), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, "echo", "x.sh"), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, NULL, "x.sh"), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, NULL, "/abs/../odd path"), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, NULL, NULL), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, NULL, ""), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, "echo", "x.sh"), -EINVAL);
	_cleanup_free_ char *long_script = rep('s', 4096);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, NULL, long_script), -EINVAL);
	long_script[4095] = 0;
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_SCRIPT, NULL, long_script), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_STDIN, NULL, NULL), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_STDIN, "echo", NULL), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_STDIN, NULL, "x.sh"), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE, NULL, NULL), 0);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE, "echo", NULL), -EINVAL);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE, NULL, "x.sh"), -EINVAL);
	CHECK_INT(open_mode((Box__ShellMode)0, NULL, NULL), -EINVAL);
	CHECK_INT(open_mode((Box__ShellMode)5, NULL, NULL), -EINVAL);
	CHECK_INT(open_mode((Box__ShellMode)-1, "echo", NULL), -EINVAL);
}

static void
test_shell_open_command_cap(void)
{
	_cleanup_free_ char *big = rep('x', BOX_SHELL_COMMAND_MAX + 1);
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, big, NULL), -E2BIG);
	big[BOX_SHELL_COMMAND_MAX] = 0;
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, big, NULL), 0);
	/* Any bytes but NUL: newlines, controls, non-UTF-8 (box-shell reports those). */
	CHECK_INT(open_mode(BOX__SHELL_MODE__SHELL_MODE_COMMAND, "a\nb\x01\xff", NULL), 0);
}

static void
test_shell_open_args(void)
{
	struct open_fx f;
	open_fx_init(&f);
	CHECK_INT(box_validate_shell_open(&f.m), 0);

	/* $0 may be empty or any bytes; not longer than one argument. */
	f.m.arg0 = "";
	CHECK_INT(box_validate_shell_open(&f.m), 0);
	_cleanup_free_ char *huge = rep('a', BOX_SHELL_ARG_MAX + 1);
	f.m.arg0 = huge;
	CHECK_INT(box_validate_shell_open(&f.m), -EINVAL);
	f.m.arg0 = "bash";
	f.args[0] = huge;
	CHECK_INT(box_validate_shell_open(&f.m), -EINVAL);
	huge[BOX_SHELL_ARG_MAX] = 0;
	CHECK_INT(box_validate_shell_open(&f.m), 0);
	f.args[0] = "\n\t\x7f\xc3";
	CHECK_INT(box_validate_shell_open(&f.m), 0);

	/* At most BOX_SHELL_ARGS_MAX positional parameters. */
	_cleanup_free_ char **many = calloc(BOX_SHELL_ARGS_MAX + 1, sizeof *many);
	for (size_t i = 0; i <= BOX_SHELL_ARGS_MAX; i++)
		many[i] = "a";
	f.m.args = many;
	f.m.n_args = BOX_SHELL_ARGS_MAX;
	CHECK_INT(box_validate_shell_open(&f.m), 0);
	f.m.n_args = BOX_SHELL_ARGS_MAX + 1;
	CHECK_INT(box_validate_shell_open(&f.m), -E2BIG);
}

static void
test_shell_open_invoked_as(void)
{
	const char *good[] = { "sh", "bash", "zsh", "dash", "rbash" };
	for (size_t i = 0; i < ELEMENTSOF(good); i++)
		CHECK_INT(open_with_invoked(good[i]), 0);
	const char *bad[] = { "", "python3", "ksh", "/bin/bash", "-bash", "bash\n", "BASH", "bash ",
			      "box-alias" };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		CHECK_INT(open_with_invoked(bad[i]), -EINVAL);
}

static void
test_shell_open_env(void)
{
	CHECK_INT(open_with_env("A=1"), 0);
	CHECK_INT(open_with_env("_=x"), 0);
	CHECK_INT(open_with_env("A="), 0);
	CHECK_INT(open_with_env("A==b"), 0);
	CHECK_INT(open_with_env("A=line\nbreak\x01\xff"), 0);
	CHECK_INT(open_with_env("NOEQUALS"), -EINVAL);
	CHECK_INT(open_with_env("=value"), -EINVAL);
	CHECK_INT(open_with_env(""), -EINVAL);
	CHECK_INT(open_with_env("1A=x"), -EINVAL);
	CHECK_INT(open_with_env("A-B=x"), -EINVAL);
	CHECK_INT(open_with_env("BASH_FUNC_f%%=() { :; }"), -EINVAL);
	CHECK_INT(open_with_env("A B=x"), -EINVAL);
	CHECK_INT(open_with_env("\xc3\xa9=x"), -EINVAL);
	/* A name of 255 bytes is a name; 256 is not. */
	_cleanup_free_ char *name = rep('N', 257);
	name[255] = '=';
	name[256] = 0;
	CHECK_INT(open_with_env(name), 0);
	name[255] = 'N';
	name[256] = '=';
	CHECK_INT(open_with_env(name), -EINVAL);
	_cleanup_free_ char *value = rep('v', BOX_SHELL_ARG_MAX + 1);
	value[0] = 'V';
	value[1] = '=';
	CHECK_INT(open_with_env(value), -EINVAL);
	value[BOX_SHELL_ARG_MAX] = 0;
	CHECK_INT(open_with_env(value), 0);

	struct open_fx f;
	open_fx_init(&f);
	_cleanup_free_ char **many = calloc(BOX_SHELL_ENV_MAX + 1, sizeof *many);
	for (size_t i = 0; i <= BOX_SHELL_ENV_MAX; i++)
		many[i] = "A=1";
	f.m.env = many;
	f.m.n_env = BOX_SHELL_ENV_MAX;
	CHECK_INT(box_validate_shell_open(&f.m), 0);
	f.m.n_env = BOX_SHELL_ENV_MAX + 1;
	CHECK_INT(box_validate_shell_open(&f.m), -E2BIG);
}

static void
test_shell_open_cwd(void)
{
	CHECK_INT(open_with_cwd("/"), 0);
	CHECK_INT(open_with_cwd("/home/me/a b"), 0);
	const char *bad[] = { "", "relative", "./x", "/a/../b", "/a/./b", "/a/", "//a", "/a//b",
			      "/a\nb", "/a\x7f", "/..", "~/x" };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		CHECK_INT(open_with_cwd(bad[i]), -EINVAL);
	_cleanup_free_ char *longp = rep('d', 4096);
	longp[0] = '/';
	CHECK_INT(open_with_cwd(longp), -EINVAL);
	longp[4095] = 0;
	CHECK_INT(open_with_cwd(longp), 0);
}

/* ---- ShellSignal, ShellExit, ShellDenied ----------------------------------- */

static void
test_shell_signal_exit_denied(void)
{
	Box__ShellSignal s = BOX__SHELL_SIGNAL__INIT;
	const int good[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		s.signal = good[i];
		CHECK_INT(box_validate_shell_signal(&s), 0);
	}
	const int bad[] = { 0, -1, SIGKILL, SIGSTOP, SIGQUIT, SIGSEGV, SIGUSR1, 64, 65, 1 << 30 };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		s.signal = bad[i];
		CHECK_INT(box_validate_shell_signal(&s), -EINVAL);
	}

	Box__ShellExit e = BOX__SHELL_EXIT__INIT;
	const int statuses[] = { 0, 1, 124, 125, 126, 127, 130, 255 };
	for (size_t i = 0; i < ELEMENTSOF(statuses); i++) {
		e.status = statuses[i];
		CHECK_INT(box_validate_shell_exit(&e), 0);
	}
	const int bad_status[] = { -1, 256, 1000, -2147483647 - 1 };
	for (size_t i = 0; i < ELEMENTSOF(bad_status); i++) {
		e.status = bad_status[i];
		CHECK_INT(box_validate_shell_exit(&e), -ERANGE);
	}

	Box__ShellDenied d = BOX__SHELL_DENIED__INIT;
	d.message = "box-shell is stopping";
	CHECK_INT(box_validate_shell_denied(&d), 0);
	d.message = "caf\xc3\xa9";
	CHECK_INT(box_validate_shell_denied(&d), 0);
	const char *bad_msg[] = { "", "two\nlines", "\x1b[31mred", "bad \xff utf-8", "\xc0\xaf",
				  "tab\there" };
	for (size_t i = 0; i < ELEMENTSOF(bad_msg); i++) {
		d.message = (char *)bad_msg[i];
		CHECK_INT(box_validate_shell_denied(&d), -EINVAL);
	}
	_cleanup_free_ char *m = rep('m', BOX_SHELL_MESSAGE_MAX + 1);
	d.message = m;
	CHECK_INT(box_validate_shell_denied(&d), -EINVAL);
	m[BOX_SHELL_MESSAGE_MAX] = 0;
	CHECK_INT(box_validate_shell_denied(&d), 0);
}

/* ---- ShellInit, ShellReady ------------------------------------------------- */

struct init_fx {
	Box__ShellInit m;
	Box__ShellTool t[2];
	Box__ShellTool *tools[2];
	char *fixed[1];
	char *exec[1];
};

static void
init_fx_init(struct init_fx *f)
{
	box__shell_init__init(&f->m);
	f->m.box_name = "demo";
	f->m.box_id = "0123456789ab";
	f->m.home = "/home/me";
	f->m.workspace = "/home/me/project";
	f->m.path = "/usr/local/bin:/usr/bin:/bin";
	for (int i = 0; i < 2; i++) {
		box__shell_tool__init(&f->t[i]);
		f->tools[i] = &f->t[i];
	}
	f->t[0].name = "git";
	f->t[0].program = "/usr/bin/git";
	f->t[1].name = "git-push";
	f->t[1].program = "/usr/bin/git";
	f->fixed[0] = "push";
	f->t[1].fixed_args = f->fixed;
	f->t[1].n_fixed_args = 1;
	f->m.tools = f->tools;
	f->m.n_tools = 2;
	f->exec[0] = "/home/me/project/node_modules/.bin";
	f->m.exec_entries = f->exec;
	f->m.n_exec_entries = 1;
}

static void
test_shell_init(void)
{
	struct init_fx f;
	init_fx_init(&f);
	CHECK_INT(box_validate_shell_init(&f.m), 0);

#define INIT_BAD(stmt, err)                                   \
	do {                                                  \
		init_fx_init(&f);                             \
		stmt;                                         \
		CHECK_INT(box_validate_shell_init(&f.m), err); \
	} while (0)
#define INIT_OK(stmt) INIT_BAD(stmt, 0)
	INIT_BAD(f.m.box_name = "", -EINVAL);
	INIT_BAD(f.m.box_name = "a\nb", -EINVAL);
	INIT_BAD(f.m.box_name = "\xff", -EINVAL);
	INIT_BAD(f.m.box_name = "my box", -EINVAL); /* docs/box.ini.5.md: A-Za-z0-9_- */
	INIT_BAD(f.m.box_name = "d\xc3\xa9mo", -EINVAL);
	INIT_BAD(f.m.box_name = "a.b", -EINVAL);
	INIT_OK(f.m.box_name = "My_box-2");
	INIT_BAD(f.m.box_name = "0123456789012345678901234567890123", -EINVAL);
	INIT_BAD(f.m.box_id = "0123456789AB", -EINVAL);
	INIT_BAD(f.m.box_id = "0123456789a", -EINVAL);
	INIT_BAD(f.m.box_id = "0123456789abc", -EINVAL);
	INIT_BAD(f.m.home = "home/me", -EINVAL);
	INIT_BAD(f.m.home = "/home/me/", -EINVAL);
	INIT_BAD(f.m.workspace = "/home/me/../x", -EINVAL);
	INIT_BAD(f.m.workspace = "", -EINVAL);
	INIT_OK(f.m.path = "");
	INIT_BAD(f.m.path = "/bin\n/usr/bin", -EINVAL);
	_cleanup_free_ char *longpath = rep('p', 65537);
	INIT_BAD(f.m.path = longpath, -EINVAL);
	INIT_OK(longpath[65536] = 0; f.m.path = longpath);

	INIT_OK((f.m.has_command_timeout_ms = true, f.m.command_timeout_ms = 1));
	INIT_OK((f.m.has_command_timeout_ms = true, f.m.command_timeout_ms = 7ull * 24 * 3600 * 1000));
	/* What a config may say ([box] command_timeout = 30d passes BoxSpec's validator). */
	INIT_OK((f.m.has_command_timeout_ms = true, f.m.command_timeout_ms = 30ull * 24 * 3600 * 1000));
	INIT_OK((f.m.has_command_timeout_ms = true, f.m.command_timeout_ms = BOX_SHELL_TIMEOUT_MAX_MS));
	INIT_BAD((f.m.has_command_timeout_ms = true, f.m.command_timeout_ms = 0), -ERANGE);
	INIT_BAD((f.m.has_command_timeout_ms = true,
		  f.m.command_timeout_ms = BOX_SHELL_TIMEOUT_MAX_MS + 1),
		 -ERANGE);
	INIT_BAD((f.m.has_command_timeout_ms = true, f.m.command_timeout_ms = UINT64_MAX), -ERANGE);

	INIT_BAD(f.t[0].name = "", -EINVAL);
	INIT_BAD(f.t[0].name = "a b", -EINVAL);
	INIT_BAD(f.t[0].name = "tool.git", -EINVAL);
	INIT_BAD(f.t[0].name = "../git", -EINVAL);
	INIT_BAD(f.t[0].name = "0123456789012345678901234567890123", -EINVAL);
	INIT_BAD(f.t[0].program = "git", -EINVAL);
	INIT_BAD(f.t[0].program = "/usr/bin/../bin/git", -EINVAL);
	INIT_BAD(f.t[1].name = "git", -EINVAL); /* the same table twice */
	_cleanup_free_ char *bigarg = rep('a', BOX_SHELL_ARG_MAX + 1);
	INIT_BAD(f.fixed[0] = bigarg, -EINVAL);
	INIT_OK(f.fixed[0] = "");

	_cleanup_free_ char **many = calloc(1025, sizeof *many);
	for (size_t i = 0; i < 1025; i++)
		many[i] = "x";
	INIT_OK((f.t[1].fixed_args = many, f.t[1].n_fixed_args = 256));
	INIT_BAD((f.t[1].fixed_args = many, f.t[1].n_fixed_args = 257), -E2BIG);

	INIT_BAD(f.exec[0] = "relative/bin", -EINVAL);
	INIT_BAD(f.exec[0] = "/a/./b", -EINVAL);
	_cleanup_free_ char **execs = calloc(BOX_SHELL_EXEC_MAX + 1, sizeof *execs);
	for (size_t i = 0; i <= BOX_SHELL_EXEC_MAX; i++)
		execs[i] = "/opt/bin";
	INIT_OK((f.m.exec_entries = execs, f.m.n_exec_entries = BOX_SHELL_EXEC_MAX));
	INIT_BAD((f.m.exec_entries = execs, f.m.n_exec_entries = BOX_SHELL_EXEC_MAX + 1), -E2BIG);

	/* 256 distinct tables pass; 257 is over the cap. */
	Box__ShellTool *tt = calloc(BOX_SHELL_TOOLS_MAX + 1, sizeof *tt);
	Box__ShellTool **tp = calloc(BOX_SHELL_TOOLS_MAX + 1, sizeof *tp);
	char (*names)[8] = calloc(BOX_SHELL_TOOLS_MAX + 1, sizeof *names);
	for (size_t i = 0; i <= BOX_SHELL_TOOLS_MAX; i++) {
		box__shell_tool__init(&tt[i]);
		snprintf(names[i], sizeof names[i], "t%zu", i);
		tt[i].name = names[i];
		tt[i].program = "/usr/bin/true";
		tp[i] = &tt[i];
	}
	INIT_OK((f.m.tools = tp, f.m.n_tools = BOX_SHELL_TOOLS_MAX));
	INIT_BAD((f.m.tools = tp, f.m.n_tools = BOX_SHELL_TOOLS_MAX + 1), -E2BIG);
	free(tt);
	free(tp);
	free(names);
#undef INIT_OK
#undef INIT_BAD
}

static void
test_shell_ready(void)
{
	Box__ShellReady r = BOX__SHELL_READY__INIT;
	r.ok = true;
	CHECK_INT(box_validate_shell_ready(&r), 0);
	r.error = "x";
	CHECK_INT(box_validate_shell_ready(&r), -EINVAL);
	r.ok = false;
	CHECK_INT(box_validate_shell_ready(&r), 0);
	r.error = NULL;
	CHECK_INT(box_validate_shell_ready(&r), -EINVAL);
	r.error = "";
	CHECK_INT(box_validate_shell_ready(&r), -EINVAL);
	r.error = "seccomp:\nfailed";
	CHECK_INT(box_validate_shell_ready(&r), -EINVAL);
}

/* ---- SpawnRequest, SpawnReply, SpawnExit, SpawnSignal --------------------------- */

struct spawn_fx {
	Box__SpawnRequest m;
	char *argv[2];
	char *env[1];
};

static void
spawn_fx_init(struct spawn_fx *f)
{
	box__spawn_request__init(&f->m);
	f->m.spawn_id = 1;
	f->m.tool = "git";
	f->m.program_path = "/usr/bin/git";
	f->argv[0] = "git";
	f->argv[1] = "status";
	f->m.argv = f->argv;
	f->m.n_argv = 2;
	f->env[0] = "GIT_PAGER=cat";
	f->m.env = f->env;
	f->m.n_env = 1;
	f->m.cwd = "/home/me/project";
}

static void
test_spawn_request(void)
{
	struct spawn_fx f;
#define SPAWN(stmt, err)                                         \
	do {                                                     \
		spawn_fx_init(&f);                               \
		stmt;                                            \
		CHECK_INT(box_validate_spawn_request(&f.m), err); \
	} while (0)
	SPAWN((void)0, 0);
	SPAWN(f.m.tool = NULL, 0); /* an agent exec entry */
	SPAWN(f.m.spawn_id = UINT64_MAX, 0);
	SPAWN(f.m.spawn_id = 0, -EINVAL);
	SPAWN(f.m.tool = "", -EINVAL);
	SPAWN(f.m.tool = "tool.git", -EINVAL);
	SPAWN(f.m.tool = "a/b", -EINVAL);
	SPAWN(f.m.program_path = "git", -EINVAL);
	SPAWN(f.m.program_path = "/usr/bin/../bin/git", -EINVAL);
	SPAWN(f.m.program_path = "", -EINVAL);
	SPAWN(f.m.n_argv = 0, -EINVAL);
	SPAWN(f.argv[0] = "", 0);            /* exec -a '' NAME: a name, as bash passes it */
	SPAWN(f.argv[0] = "ugrep", 0);       /* exec -a ugrep: boxd matches program_path */
	SPAWN(f.m.clear_env = true, -EINVAL); /* exec -c with variables */
	SPAWN((f.m.clear_env = true, f.m.n_env = 0), 0);
	SPAWN(f.argv[1] = "", 0);
	SPAWN(f.argv[1] = "any\nbytes\xff", 0);
	SPAWN(f.env[0] = "NOEQ", -EINVAL);
	SPAWN(f.env[0] = "A-B=1", -EINVAL);
	SPAWN(f.m.n_env = 0, 0);
	SPAWN(f.m.cwd = "relative", -EINVAL);
	SPAWN(f.m.cwd = "/a/..", -EINVAL);
	_cleanup_free_ char *big = rep('a', BOX_SHELL_ARG_MAX + 1);
	SPAWN(f.argv[1] = big, -EINVAL);
	_cleanup_free_ char **many = calloc(BOX_SHELL_ARGS_MAX + 1, sizeof *many);
	for (size_t i = 0; i <= BOX_SHELL_ARGS_MAX; i++)
		many[i] = "a";
	SPAWN((f.m.argv = many, f.m.n_argv = BOX_SHELL_ARGS_MAX), 0);
	SPAWN((f.m.argv = many, f.m.n_argv = BOX_SHELL_ARGS_MAX + 1), -E2BIG);
	_cleanup_free_ char **envs = calloc(BOX_SHELL_ENV_MAX + 1, sizeof *envs);
	for (size_t i = 0; i <= BOX_SHELL_ENV_MAX; i++)
		envs[i] = "A=1";
	SPAWN((f.m.env = envs, f.m.n_env = BOX_SHELL_ENV_MAX + 1), -E2BIG);
#undef SPAWN
}

static void
test_spawn_reply_exit_signal(void)
{
	Box__SpawnReply r = BOX__SPAWN_REPLY__INIT;
	r.spawn_id = 7;
	r.ok = true;
	r.sandbox = "tool.git";
	CHECK_INT(box_validate_spawn_reply(&r), 0);
	r.sandbox = "exec";
	CHECK_INT(box_validate_spawn_reply(&r), 0);
	const char *bad_sandbox[] = { "", "tool.", "tool", "tool.a b", "tool.../x", "agent",
				      "exec ", "mcp.x", "tool.0123456789012345678901234567890123" };
	for (size_t i = 0; i < ELEMENTSOF(bad_sandbox); i++) {
		r.sandbox = (char *)bad_sandbox[i];
		CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);
	}
	r.sandbox = NULL;
	CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);
	r.sandbox = "exec";
	r.error = "x";
	CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);
	r.ok = false;
	r.sandbox = NULL;
	r.error = "git: no [tool.git] in the box's config";
	CHECK_INT(box_validate_spawn_reply(&r), 0);
	r.sandbox = "exec";
	CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);
	r.sandbox = NULL;
	r.error = NULL;
	CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);
	r.error = "two\nlines";
	CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);
	r.error = "x";
	r.spawn_id = 0;
	CHECK_INT(box_validate_spawn_reply(&r), -EINVAL);

	Box__SpawnExit e = BOX__SPAWN_EXIT__INIT;
	e.spawn_id = 1;
	e.status = 0;
	CHECK_INT(box_validate_spawn_exit(&e), 0);
	e.status = 255;
	CHECK_INT(box_validate_spawn_exit(&e), 0);
	e.status = 256;
	CHECK_INT(box_validate_spawn_exit(&e), -ERANGE);
	e.status = -1;
	CHECK_INT(box_validate_spawn_exit(&e), -ERANGE);
	e.status = 0;
	e.spawn_id = 0;
	CHECK_INT(box_validate_spawn_exit(&e), -EINVAL);

	Box__SpawnSignal s = BOX__SPAWN_SIGNAL__INIT;
	s.spawn_id = 3;
	const int good[] = { SIGINT, SIGTERM, SIGHUP, SIGKILL, SIGQUIT, SIGCONT, SIGSTOP,
			     SIGTSTP, SIGPIPE, SIGUSR1, SIGUSR2, SIGWINCH };
	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		s.signal = good[i];
		CHECK_INT(box_validate_spawn_signal(&s), 0);
	}
	const int bad[] = { 0, -9, SIGSEGV, SIGSYS, SIGABRT, SIGALRM, SIGCHLD, 34, 64, 1000 };
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		s.signal = bad[i];
		CHECK_INT(box_validate_spawn_signal(&s), -EINVAL);
	}
	s.signal = SIGINT;
	s.spawn_id = 0;
	CHECK_INT(box_validate_spawn_signal(&s), -EINVAL);
}

/* ---- the tables on real channels -------------------------------------------- */

/* A pair: [0] the alias's (or boxd's) end, [1] box-shell's. */
struct pair {
	int sv[2];
	struct box_ipc_chan *c[2];
};

static void
pair_open(struct pair *p, const struct box_ipc_protocol *proto, unsigned role0_peer,
	  unsigned role1_peer)
{
	if (box_ipc_socketpair(p->sv, true) < 0)
		abort();
	p->c[0] = box_ipc_chan_new(p->sv[0], proto, role0_peer);
	p->c[1] = box_ipc_chan_new(p->sv[1], proto, role1_peer);
	if (!p->c[0] || !p->c[1])
		abort();
}

static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		box_ipc_chan_free(p->c[i]);
		close(p->sv[i]);
	}
}

/* Receive one message on end i: 1, or the error. */
static int
recv_on(struct pair *p, int i, struct box_ipc_msg *m)
{
	return box_ipc_recv_wait(p->c[i], m, 2000);
}

/* The packets of one message, as box_ipc_pack makes them (one, for these tests). */
struct captured {
	uint8_t pkt[BOX_IPC_MAX];
	size_t len;
	unsigned n;
};

static int
capture(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct captured *c = userdata;
	(void)fds;
	(void)n_fds;
	if (len > sizeof c->pkt)
		return -EMSGSIZE;
	memcpy(c->pkt, pkt, len);
	c->len = len;
	c->n++;
	return 0;
}

/*
 * What a hostile peer can do that box_ipc_send refuses: a well-formed packet
 * of `type` sent with `n_fds` of `fds` (packed as if it had `n_pack` fds).
 */
static int
send_with_fds(int sock, const struct box_ipc_protocol *proto, uint32_t type,
	      const ProtobufCMessage *msg, const int *fds, unsigned n_pack, unsigned n_fds)
{
	struct captured c = { .n = 0 };
	int r = box_ipc_pack(proto, type, 1, msg, fds, n_pack, capture, &c);
	if (r < 0)
		return r;
	if (c.n != 1)
		return -E2BIG;
	return box_ipc_send_packet(sock, c.pkt, c.len, fds, n_fds, 1000);
}

/* What the sender's own checks say: box_ipc_pack without a socket. */
static int
pack_only(const struct box_ipc_protocol *proto, uint32_t type, const ProtobufCMessage *msg,
	  const int *fds, unsigned n_fds)
{
	struct captured *c = calloc(1, sizeof *c);
	int r = box_ipc_pack(proto, type, 1, msg, fds, n_fds, capture, c);
	free(c);
	return r;
}

static void
session_pair(struct pair *p)
{
	pair_open(p, &box_proto_session, BOX_SESSION_ROLE_SHELL, BOX_SESSION_ROLE_ALIAS);
}

static void
test_session_table(void)
{
	int devnull[3];
	for (int i = 0; i < 3; i++)
		devnull[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct open_fx f;
	open_fx_init(&f);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	struct pair p;

	/* The conversation: ShellOpen (3 fds), ShellSignal, ShellExit; then nothing. */
	session_pair(&p);
	Box__ShellSignal sig = BOX__SHELL_SIGNAL__INIT;
	sig.signal = SIGINT;
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_SIGNAL), -EPERM);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_OPEN, 1, &f.m.base, devnull, 3),
		  0);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_SESSION_RUNNING);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_SHELL_OPEN);
	CHECK_INT(m.n_fds, 3);
	CHECK_STR(((Box__ShellOpen *)m.msg)->args[0], "one");
	CHECK_STR(((Box__ShellOpen *)m.msg)->args[1], "");
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[1]), BOX_SESSION_RUNNING);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_SIGNAL, 0, &sig.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	CHECK_INT(((Box__ShellSignal *)m.msg)->signal, SIGINT);
	box_ipc_msg_done(&m);
	/* A second ShellOpen is refused by the sender's channel and by the receiver's. */
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_OPEN), -EPERM);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, 2,
			       &f.m.base, devnull, 3),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);

	session_pair(&p);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_OPEN, 1, &f.m.base, devnull, 3),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	box_ipc_msg_done(&m);
	Box__ShellExit ex = BOX__SHELL_EXIT__INIT;
	ex.status = 3;
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_SHELL_EXIT, 1, &ex.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	CHECK_INT(((Box__ShellExit *)m.msg)->status, 3);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_SESSION_ENDED);
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_SIGNAL), -EPERM);
	CHECK_INT(box_ipc_chan_may_send(p.c[1], BOX__MSG_TYPE__MSG_SHELL_EXIT), -EPERM);
	/* A ShellSignal after the end reaches a channel that takes nothing. */
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, 0,
			       &sig.base, NULL, 0),
		  0);
	CHECK_INT(box_ipc_chan_state(p.c[1]), BOX_SESSION_ENDED);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);

	/* ShellSignal before ShellOpen; ShellOpen with 0, 2 or 4 fds; the roles swapped. */
	session_pair(&p);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, 0,
			       &sig.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);
	const unsigned bad_counts[] = { 0, 1, 2, 4 };
	int four[4] = { devnull[0], devnull[1], devnull[2], devnull[0] };
	for (size_t i = 0; i < ELEMENTSOF(bad_counts); i++) {
		/* The sender refuses it; a hostile peer's packet is refused on arrival. */
		CHECK_INT(pack_only(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, &f.m.base, four,
				    bad_counts[i]),
			  -EBADMSG);
		session_pair(&p);
		CHECK_INT(send_with_fds(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN,
					&f.m.base, four, 3, bad_counts[i]),
			  0);
		CHECK_INT(recv_on(&p, 1, &m), -EBADMSG);
		pair_close(&p);
	}
	/* An fd on a type that carries none. */
	session_pair(&p);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_OPEN, 1, &f.m.base, devnull, 3),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(send_with_fds(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL,
				&sig.base, NULL, 0, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(send_with_fds(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL,
				&sig.base, devnull, 0, 1),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EBADMSG);
	pair_close(&p);
	session_pair(&p);
	/* box-shell's end sends ShellOpen: the alias's end refuses it (senders). */
	CHECK_INT(box_ipc_send(p.sv[1], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, 1,
			       &f.m.base, devnull, 3),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EPERM);
	pair_close(&p);
	session_pair(&p);
	/* The alias sends ShellExit: box-shell's end refuses it. */
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_EXIT, 1,
			       &ex.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);

	/* ShellDenied may come first (box-shell refuses before reading anything). */
	session_pair(&p);
	Box__ShellDenied den = BOX__SHELL_DENIED__INIT;
	den.message = "too many sessions";
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_SHELL_DENIED, 1, &den.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	CHECK_STR(((Box__ShellDenied *)m.msg)->message, "too many sessions");
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_SESSION_ENDED);
	pair_close(&p);

	/* The sender validates: a bad ShellOpen or ShellExit never leaves. */
	f.m.cwd = "relative";
	CHECK_INT(pack_only(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, &f.m.base, devnull, 3),
		  -EINVAL);
	ex.status = 256;
	CHECK_INT(pack_only(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_EXIT, &ex.base, NULL, 0),
		  -ERANGE);
	for (int i = 0; i < 3; i++)
		close(devnull[i]);
}

/* A 1 MiB command crosses in fragments; past the 4 MiB reassembly cap nothing is sent. */
static void
test_session_big_open(void)
{
	int devnull[3];
	for (int i = 0; i < 3; i++)
		devnull[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct open_fx f;
	open_fx_init(&f);
	_cleanup_free_ char *big = rep('c', BOX_SHELL_COMMAND_MAX);
	f.m.command = big;
	struct pair p;
	session_pair(&p);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	/* The socket buffer holds less than 1 MiB: the receiver drains it from a child. */
	pid_t pid = fork();
	if (pid == 0) {
		int r = box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_OPEN, 1, &f.m.base,
					  devnull, 3);
		_exit(r == 0 ? 0 : 1);
	}
	CHECK_INT(box_ipc_recv_wait(p.c[1], &m, 10000), 1);
	CHECK_INT(m.n_fds, 3);
	CHECK(m.msg && strlen(((Box__ShellOpen *)m.msg)->command) == BOX_SHELL_COMMAND_MAX);
	CHECK(m.msg && strcmp(((Box__ShellOpen *)m.msg)->command, big) == 0);
	box_ipc_msg_done(&m);
	int st = -1;
	waitpid(pid, &st, 0);
	CHECK_INT(st, 0);
	pair_close(&p);

	/* 4 MiB of arguments: over the reassembly cap. */
	_cleanup_free_ char *arg = rep('a', BOX_SHELL_ARG_MAX);
	_cleanup_free_ char **args = calloc(17, sizeof *args);
	for (int i = 0; i < 17; i++)
		args[i] = arg;
	f.m.command = "x";
	f.m.args = args;
	f.m.n_args = 17;
	CHECK_INT(pack_only(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, &f.m.base, devnull, 3),
		  -EMSGSIZE);
	for (int i = 0; i < 3; i++)
		close(devnull[i]);
}

static void
test_control_table(void)
{
	struct pair p;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	/* [0] boxd's end (peer box-shell), [1] box-shell's end (peer boxd). */
	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	struct init_fx fi;
	init_fx_init(&fi);
	struct spawn_fx fs;
	spawn_fx_init(&fs);
	int devnull[3];
	for (int i = 0; i < 3; i++)
		devnull[i] = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* Nothing but ShellInit first: box-shell's early request is refused. */
	CHECK_INT(box_ipc_chan_may_send(p.c[1], BOX__MSG_TYPE__MSG_SPAWN_REQUEST), -EPERM);
	CHECK_INT(box_ipc_send(p.sv[1], &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_REQUEST, 1,
			       &fs.m.base, devnull, 3),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EPERM);
	pair_close(&p);

	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_INIT, 1, &fi.m.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	CHECK_INT(((Box__ShellInit *)m.msg)->n_tools, 2);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[1]), BOX_SHELL_STARTING);
	/* A second ShellInit is refused. */
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_INIT), -EPERM);
	/* A refusal does not move the channel to serving. */
	Box__ShellReady rd = BOX__SHELL_READY__INIT;
	rd.ok = false;
	rd.error = "seccomp: not available";
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_SHELL_READY, 1, &rd.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_SHELL_STARTING);
	CHECK_INT(box_ipc_chan_may_send(p.c[1], BOX__MSG_TYPE__MSG_SPAWN_REQUEST), -EPERM);
	pair_close(&p);

	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_INIT, 1, &fi.m.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	box_ipc_msg_done(&m);
	rd.ok = true;
	rd.error = NULL;
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_SHELL_READY, 1, &rd.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_SHELL_SERVING);
	/* Serving: a request with its 3 fds, the reply, the exit, a signal. */
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_SPAWN_REQUEST, 5, &fs.m.base, devnull,
				    3),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	CHECK_INT(m.n_fds, 3);
	CHECK_STR(((Box__SpawnRequest *)m.msg)->tool, "git");
	box_ipc_msg_done(&m);
	/* A request with 2 fds is refused. */
	CHECK_INT(send_with_fds(p.sv[1], &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_REQUEST,
				&fs.m.base, devnull, 3, 2),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EBADMSG);
	pair_close(&p);

	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	box_ipc_chan_set_state(p.c[0], BOX_SHELL_SERVING);
	box_ipc_chan_set_state(p.c[1], BOX_SHELL_SERVING);
	Box__SpawnReply rep_ = BOX__SPAWN_REPLY__INIT;
	rep_.spawn_id = 5;
	rep_.ok = true;
	rep_.sandbox = "tool.git";
	/* box-shell may not send a reply; boxd may not send a request or a signal. */
	CHECK_INT(box_ipc_send(p.sv[1], &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_REPLY, 5,
			       &rep_.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EPERM);
	pair_close(&p);
	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	box_ipc_chan_set_state(p.c[1], BOX_SHELL_SERVING);
	Box__SpawnSignal ss = BOX__SPAWN_SIGNAL__INIT;
	ss.spawn_id = 5;
	ss.signal = SIGTERM;
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_SIGNAL, 0,
			       &ss.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);
	/* The session's types are not the control channel's: no row (ipc.h: -EBADMSG). */
	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	Box__ShellExit ex = BOX__SHELL_EXIT__INIT;
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_EXIT, 0,
			       &ex.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EBADMSG);
	pair_close(&p);
	for (int i = 0; i < 3; i++)
		close(devnull[i]);
}

/* `boxctl shell`: ShellAttach (boxd -> box-shell) and ShellAttached (2 fds when ok). */
static void
test_shell_attach(void)
{
	Box__ShellAttach a = BOX__SHELL_ATTACH__INIT;
	CHECK_INT(box_validate_shell_attach(&a), -EINVAL); /* attach_id 0 */
	a.attach_id = 3;
	CHECK_INT(box_validate_shell_attach(&a), 0); /* no size, no TERM: fine */
	a.has_rows = 1;
	a.rows = 24;
	CHECK_INT(box_validate_shell_attach(&a), -EINVAL); /* rows without cols */
	a.has_cols = 1;
	a.cols = 80;
	CHECK_INT(box_validate_shell_attach(&a), 0);
	a.cols = 0;
	CHECK_INT(box_validate_shell_attach(&a), -ERANGE);
	a.cols = 65536; /* no struct winsize field */
	CHECK_INT(box_validate_shell_attach(&a), -ERANGE);
	a.cols = 80;
	a.term = "xterm-256color";
	CHECK_INT(box_validate_shell_attach(&a), 0);
	a.term = "screen.xterm+x";
	CHECK_INT(box_validate_shell_attach(&a), 0);
	const char *bad_terms[] = { "", "xterm\n", "../../x", "x y", "xterm;rm",
				    "$(id)", "\x1b[2J",
				    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	for (size_t i = 0; i < ELEMENTSOF(bad_terms); i++) {
		a.term = (char *)bad_terms[i];
		CHECK_INT(box_validate_shell_attach(&a), -EINVAL);
	}

	Box__ShellAttached r = BOX__SHELL_ATTACHED__INIT;
	r.ok = true;
	CHECK_INT(box_validate_shell_attached(&r), -EINVAL); /* attach_id 0 */
	r.attach_id = 3;
	CHECK_INT(box_validate_shell_attached(&r), 0);
	CHECK_INT(box_validate_shell_attached_fds(&r.base, 2), 0);
	CHECK_INT(box_validate_shell_attached_fds(&r.base, 1), -EBADMSG);
	CHECK_INT(box_validate_shell_attached_fds(&r.base, 0), -EBADMSG);
	r.error = "x";
	CHECK_INT(box_validate_shell_attached(&r), -EINVAL); /* ok with an error */
	r.ok = false;
	CHECK_INT(box_validate_shell_attached(&r), 0);
	CHECK_INT(box_validate_shell_attached_fds(&r.base, 0), 0);
	CHECK_INT(box_validate_shell_attached_fds(&r.base, 2), -EBADMSG); /* a refusal carries none */
	r.error = NULL;
	CHECK_INT(box_validate_shell_attached(&r), -EINVAL);
	r.error = "cannot\nopen";
	CHECK_INT(box_validate_shell_attached(&r), -EINVAL);

	/* The table: ShellAttach from boxd only, while serving; ShellAttached from box-shell. */
	struct pair p;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	a.term = "xterm";
	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_ATTACH), -EPERM); /* init */
	box_ipc_chan_set_state(p.c[0], BOX_SHELL_SERVING);
	box_ipc_chan_set_state(p.c[1], BOX_SHELL_SERVING);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_SHELL_ATTACH, 0, &a.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	CHECK_STR(((Box__ShellAttach *)m.msg)->term, "xterm");
	box_ipc_msg_done(&m);
	int pp[2];
	CHECK_INT(pipe2(pp, O_CLOEXEC), 0);
	r.ok = true;
	r.error = NULL;
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_SHELL_ATTACHED, 0, &r.base, pp, 2),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	CHECK_INT(m.n_fds, 2);
	box_ipc_msg_done(&m);
	/* ok with one fd: refused. */
	CHECK_INT(send_with_fds(p.sv[1], &box_proto_shell, BOX__MSG_TYPE__MSG_SHELL_ATTACHED,
				&r.base, pp, 2, 1),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EBADMSG);
	pair_close(&p);
	/* box-shell may not ask for a session; boxd may not answer one. */
	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	box_ipc_chan_set_state(p.c[0], BOX_SHELL_SERVING);
	box_ipc_chan_set_state(p.c[1], BOX_SHELL_SERVING);
	CHECK_INT(box_ipc_send(p.sv[1], &box_proto_shell, BOX__MSG_TYPE__MSG_SHELL_ATTACH, 0, &a.base,
			       NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EPERM);
	pair_close(&p);
	pair_open(&p, &box_proto_shell, BOX_SHELL_ROLE_SHELL, BOX_SHELL_ROLE_BOXD);
	box_ipc_chan_set_state(p.c[1], BOX_SHELL_SERVING);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_shell, BOX__MSG_TYPE__MSG_SHELL_ATTACHED, 0,
			       &r.base, pp, 2),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);
	close(pp[0]);
	close(pp[1]);
}

/* Hostile bytes: every row decodes garbage, truncations and unknown fields without harm. */
static void
test_decode_hostile(void)
{
	struct open_fx f;
	open_fx_init(&f);
	uint8_t buf[4096];
	size_t n = protobuf_c_message_pack(&f.m.base, buf);
	ProtobufCMessage *out = NULL;
	CHECK_INT(box_ipc_decode(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, buf, n, &out),
		  0);
	box_msg_freep(&out);
	/* Every truncation is refused, never accepted as something else. */
	int accepted = 0;
	for (size_t k = 0; k < n; k++) {
		if (box_ipc_decode(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, buf, k, &out) ==
		    0) {
			accepted++;
			box_msg_freep(&out);
		}
	}
	CHECK_INT(accepted, 0);
	/* An unknown field (number 99, varint) appended. */
	uint8_t more[4200];
	memcpy(more, buf, n);
	more[n] = 0x98; /* key (99 << 3) | varint, as a two-byte varint */
	more[n + 1] = 0x06;
	more[n + 2] = 0x01;
	CHECK_INT(box_ipc_decode(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, more, n + 3, &out),
		  -EBADMSG);
	/* An undeclared mode (field 1 = 9). */
	memcpy(more, buf, n);
	more[n] = (1 << 3) | 0;
	more[n + 1] = 9;
	CHECK_INT(box_ipc_decode(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, more, n + 2, &out),
		  -EBADMSG);
	/*
	 * Pseudo-random bytes into every row of both tables (its point is the
	 * sanitizer build): whatever decodes has passed the row's validator.
	 */
	const struct box_ipc_protocol *protos[] = { &box_proto_session, &box_proto_shell };
	unsigned seed = 12345;
	for (size_t pi = 0; pi < 2; pi++) {
		for (unsigned ti = 0; ti < protos[pi]->n_types; ti++) {
			for (int round = 0; round < 200; round++) {
				size_t len = (size_t)(rand_r(&seed) % 64);
				for (size_t k = 0; k < len; k++)
					buf[k] = (uint8_t)rand_r(&seed);
				int r = box_ipc_decode(protos[pi], protos[pi]->types[ti].type, buf,
						       len, &out);
				if (r == 0) {
					const struct box_ipc_type *row = &protos[pi]->types[ti];
					CHECK(!row->validate || row->validate(out) == 0);
					box_msg_freep(&out);
				}
			}
		}
	}
	/* A row's single-packet cap: ShellSignal is 64 bytes at most. */
	uint8_t sig[80];
	memset(sig, 0, sizeof sig);
	CHECK_INT(box_ipc_decode(&box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, sig, 65, &out),
		  -EMSGSIZE);
}

/* ---- seeds for test/fuzz/fuzz_shell.c ------------------------------------ */

/* A seed being built: the state byte, then [2-byte length][packet]... */
struct seed {
	uint8_t *buf;
	size_t len, cap;
};

static void
seed_add(struct seed *sd, const void *p, size_t n)
{
	if (sd->len + n > sd->cap) {
		sd->cap = (sd->len + n) * 2;
		sd->buf = realloc(sd->buf, sd->cap);
		if (!sd->buf)
			abort();
	}
	memcpy(sd->buf + sd->len, p, n);
	sd->len += n;
}

static int
seed_packet(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	(void)fds;
	(void)n_fds;
	uint8_t l[2] = { (uint8_t)(len & 0xff), (uint8_t)(len >> 8) };
	seed_add(userdata, l, 2);
	seed_add(userdata, pkt, len);
	return 0;
}

static void
seed_msg(struct seed *sd, const struct box_ipc_protocol *p, uint32_t type,
	 const ProtobufCMessage *m, unsigned n_fds)
{
	static const int fds[3] = { 0, 1, 2 };
	if (box_ipc_pack(p, type, 1, m, fds, n_fds, seed_packet, sd) < 0)
		abort();
}

static void
seed_write(const char *dir, const char *name, struct seed *sd)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	if (!f || fwrite(sd->buf, 1, sd->len, f) != sd->len || fclose(f) != 0)
		abort();
	free(sd->buf);
	*sd = (struct seed){ NULL, 0, 0 };
}

/* One raw payload after a state byte of 0 (the direct-decode half of the target). */
static void
seed_raw(const char *dir, const char *name, const ProtobufCMessage *m)
{
	struct seed sd = { NULL, 0, 0 };
	uint8_t zero = 0;
	seed_add(&sd, &zero, 1);
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(n ? n : 1);
	protobuf_c_message_pack(m, b);
	seed_add(&sd, b, n);
	free(b);
	seed_write(dir, name, &sd);
}

static void
write_corpus(const char *dir)
{
	struct open_fx fo;
	open_fx_init(&fo);
	struct init_fx fi;
	init_fx_init(&fi);
	struct spawn_fx fs;
	spawn_fx_init(&fs);
	Box__ShellSignal sig = BOX__SHELL_SIGNAL__INIT;
	sig.signal = SIGINT;
	Box__ShellExit ex = BOX__SHELL_EXIT__INIT;
	ex.status = 130;
	Box__ShellDenied den = BOX__SHELL_DENIED__INIT;
	den.message = "box-shell is stopping";
	Box__ShellReady rd = BOX__SHELL_READY__INIT;
	rd.ok = true;
	Box__SpawnReply sr = BOX__SPAWN_REPLY__INIT;
	sr.spawn_id = 1;
	sr.ok = true;
	sr.sandbox = "tool.git";
	Box__SpawnExit se = BOX__SPAWN_EXIT__INIT;
	se.spawn_id = 1;
	Box__SpawnSignal ss = BOX__SPAWN_SIGNAL__INIT;
	ss.spawn_id = 1;
	ss.signal = SIGTERM;
	struct seed sd = { NULL, 0, 0 };
	uint8_t st;

	st = BOX_SESSION_OPEN; /* open / init: ShellOpen (no fds: refused), ShellInit */
	seed_add(&sd, &st, 1);
	seed_msg(&sd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, &fo.m.base, 3);
	seed_write(dir, "ok-open", &sd);
	seed_add(&sd, &st, 1);
	seed_msg(&sd, &box_proto_shell, BOX__MSG_TYPE__MSG_SHELL_INIT, &fi.m.base, 0);
	seed_msg(&sd, &box_proto_shell, BOX__MSG_TYPE__MSG_SHELL_READY, &rd.base, 0);
	seed_write(dir, "ok-init-ready", &sd);
	seed_add(&sd, &st, 1);
	seed_msg(&sd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_DENIED, &den.base, 0);
	seed_write(dir, "ok-denied", &sd);
	/* A 70 KiB command: two fragments. */
	char *big = malloc(70 * 1024 + 1);
	memset(big, 'c', 70 * 1024);
	big[70 * 1024] = 0;
	fo.m.command = big;
	seed_add(&sd, &st, 1);
	seed_msg(&sd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, &fo.m.base, 3);
	seed_write(dir, "ok-open-fragmented", &sd);
	free(big);
	fo.m.command = "echo hi";

	st = BOX_SESSION_RUNNING; /* running / starting */
	seed_add(&sd, &st, 1);
	seed_msg(&sd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, &sig.base, 0);
	seed_msg(&sd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, &sig.base, 0);
	seed_msg(&sd, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_EXIT, &ex.base, 0);
	seed_write(dir, "ok-signals-exit", &sd);

	st = BOX_SHELL_SERVING; /* ended / serving */
	seed_add(&sd, &st, 1);
	seed_msg(&sd, &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_REQUEST, &fs.m.base, 3);
	seed_msg(&sd, &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_REPLY, &sr.base, 0);
	seed_msg(&sd, &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_SIGNAL, &ss.base, 0);
	seed_msg(&sd, &box_proto_shell, BOX__MSG_TYPE__MSG_SPAWN_EXIT, &se.base, 0);
	seed_write(dir, "ok-spawn", &sd);

	seed_raw(dir, "raw-open", &fo.m.base);
	seed_raw(dir, "raw-init", &fi.m.base);
	seed_raw(dir, "raw-spawn-request", &fs.m.base);
}

int
main(void)
{
	const char *corpus = getenv("BOX_SHELL_WRITE_CORPUS");
	if (corpus && corpus[0]) {
		write_corpus(corpus);
		printf("ok - seeds written to %s\n", corpus);
		return 0;
	}

	RUN(test_shell_open_modes);
	RUN(test_shell_open_command_cap);
	RUN(test_shell_open_args);
	RUN(test_shell_open_invoked_as);
	RUN(test_shell_open_env);
	RUN(test_shell_open_cwd);
	RUN(test_shell_signal_exit_denied);
	RUN(test_shell_init);
	RUN(test_shell_ready);
	RUN(test_spawn_request);
	RUN(test_spawn_reply_exit_signal);
	RUN(test_session_table);
	RUN(test_session_big_open);
	RUN(test_control_table);
	RUN(test_shell_attach);
	RUN(test_decode_hostile);
	return tap_done();
}
