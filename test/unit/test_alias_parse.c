/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_alias_parse.c — the shell alias's argument grammar (box-alias/alias.c
 * alias_parse, alias_dialect): every form of docs/boxctl.1.md "The agent's view",
 * bash's corner cases, the dialect, python3, and every refusal.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "box-alias/alias.h"
#include "cleanup.h"
#include "proto/proto_shell.h"
#include "tap.h"

#define MAXV 32

/* Parse a NULL-terminated argument list (stdin no terminal, exe unknown). */
static struct alias_invocation inv;
static char *vec[MAXV];

static int
parse_tty(bool tty, const char *exe, const char *a0, ...)
{
	va_list ap;
	int n = 0;
	va_start(ap, a0);
	for (const char *a = a0; a && n < MAXV - 1; a = va_arg(ap, const char *))
		vec[n++] = (char *)a;
	va_end(ap);
	vec[n] = NULL;
	return alias_parse(n, vec, exe, tty, &inv);
}

#define P(...) parse_tty(false, NULL, __VA_ARGS__, (const char *)NULL)

static const Box__ShellMode M_COMMAND = BOX__SHELL_MODE__SHELL_MODE_COMMAND;
static const Box__ShellMode M_STDIN = BOX__SHELL_MODE__SHELL_MODE_STDIN;
static const Box__ShellMode M_SCRIPT = BOX__SHELL_MODE__SHELL_MODE_SCRIPT;
static const Box__ShellMode M_INTERACTIVE = BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE;

/* The positional parameters, joined by '|'. */
static const char *
args_joined(void)
{
	static char buf[1024];
	buf[0] = 0;
	for (size_t i = 0; i < inv.n_args; i++) {
		if (i)
			strcat(buf, "|");
		strcat(buf, inv.args[i]);
	}
	return buf;
}

static bool
flags(bool e, bool u, bool x, bool pf, bool l)
{
	return inv.errexit == e && inv.nounset == u && inv.xtrace == x && inv.pipefail == pf &&
	       inv.login == l;
}

static void
test_command_forms(void)
{
	CHECK_INT(P("bash", "-c", "echo hi"), 0);
	CHECK_INT(inv.action, ALIAS_RUN);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_STR(inv.command, "echo hi");
	CHECK_STR(inv.arg0, "bash");
	CHECK_INT(inv.n_args, 0);
	CHECK(inv.script == NULL);
	CHECK_STR(inv.invoked_as, "bash");
	CHECK(flags(false, false, false, false, false));

	CHECK_INT(P("bash", "-lc", "make"), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_STR(inv.command, "make");
	CHECK(flags(false, false, false, false, true));

	CHECK_INT(P("sh", "-ec", "false"), 0);
	CHECK_STR(inv.command, "false");
	CHECK_STR(inv.invoked_as, "sh");
	CHECK(flags(true, false, false, false, false));

	CHECK_INT(P("bash", "-c", "-e", "echo $-"), 0);
	CHECK_STR(inv.command, "echo $-");
	CHECK(flags(true, false, false, false, false));

	CHECK_INT(P("bash", "-c", "-l", "-x", "cmd", "a0", "a1", "a2"), 0);
	CHECK_STR(inv.command, "cmd");
	CHECK_STR(inv.arg0, "a0");
	CHECK_STR(args_joined(), "a1|a2");
	CHECK(flags(false, false, true, false, true));

	/* -c CMD ARG0: no ARGS. */
	CHECK_INT(P("bash", "-c", "cmd", "zero"), 0);
	CHECK_STR(inv.arg0, "zero");
	CHECK_INT(inv.n_args, 0);
	CHECK(inv.args == NULL);

	/* Options end at CMD: what follows is $0 and $1..., options or not. */
	CHECK_INT(P("bash", "-c", "cmd", "--login", "-x", "--", "-z"), 0);
	CHECK_STR(inv.arg0, "--login");
	CHECK_STR(args_joined(), "-x|--|-z");
	CHECK(flags(false, false, false, false, false));

	/* -- and - end the options before CMD too. */
	CHECK_INT(P("bash", "-c", "--", "-cmd-", "x"), 0);
	CHECK_STR(inv.command, "-cmd-");
	CHECK_STR(inv.arg0, "x");
	CHECK_INT(P("bash", "-c", "-", "+x"), 0);
	CHECK_STR(inv.command, "+x");

	/* An empty command is a command. */
	CHECK_INT(P("bash", "-c", ""), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_STR(inv.command, "");

	/* -c given twice, and -c with -s: -c wins (bash). */
	CHECK_INT(P("bash", "-cc", "x"), 0);
	CHECK_STR(inv.command, "x");
	CHECK_INT(P("bash", "-s", "-c", "x", "a"), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_STR(inv.arg0, "a");
	CHECK_INT(P("bash", "-sc", "x"), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	/* -i with -c: still a command. */
	CHECK_INT(P("bash", "-ic", "x"), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK(inv.interactive);
}

static void
test_o_options(void)
{
	CHECK_INT(P("bash", "-o", "pipefail", "-c", "x"), 0);
	CHECK(flags(false, false, false, true, false));
	CHECK_INT(P("bash", "-euo", "pipefail", "-c", "x"), 0);
	CHECK(flags(true, true, false, true, false));
	/* Each o takes the next word, wherever it is in the cluster. */
	CHECK_INT(P("bash", "-oe", "pipefail", "-c", "x"), 0);
	CHECK(flags(true, false, false, true, false));
	CHECK_INT(P("bash", "-oo", "pipefail", "errexit", "-c", "x"), 0);
	CHECK(flags(true, false, false, true, false));
	CHECK_INT(P("bash", "-co", "pipefail", "x"), 0);
	CHECK_STR(inv.command, "x");
	CHECK(inv.pipefail);
	CHECK_INT(P("bash", "-o", "errexit", "-o", "nounset", "-o", "xtrace", "-c", "x"), 0);
	CHECK(flags(true, true, true, false, false));
	/* + turns off again. */
	CHECK_INT(P("bash", "-eux", "+ux", "-c", "x"), 0);
	CHECK(flags(true, false, false, false, false));
	CHECK_INT(P("bash", "-o", "pipefail", "+o", "pipefail", "-c", "x"), 0);
	CHECK(flags(false, false, false, false, false));
	CHECK_INT(P("bash", "-e", "+e", "-e", "-c", "x"), 0);
	CHECK(inv.errexit);
}

static void
test_long_options(void)
{
	CHECK_INT(P("bash", "--login", "-c", "x"), 0);
	CHECK(inv.login);
	CHECK_INT(P("bash", "--norc", "--noprofile", "--posix", "-c", "x"), 0);
	CHECK_INT(inv.action, ALIAS_RUN);
	CHECK(flags(false, false, false, false, false));
	/* Accepted among the short ones too (bash wants them first). */
	CHECK_INT(P("bash", "-e", "--login", "-c", "x"), 0);
	CHECK(flags(true, false, false, false, true));
	CHECK_INT(P("bash", "-c", "--noprofile", "x"), 0);
	CHECK_STR(inv.command, "x");

	CHECK_INT(P("bash", "--version"), 0);
	CHECK_INT(inv.action, ALIAS_VERSION);
	CHECK_INT(P("bash", "-e", "--version", "-z"), 0); /* answers at once, as bash */
	CHECK_INT(inv.action, ALIAS_VERSION);
	CHECK_INT(P("sh", "--help", "-c"), 0);
	CHECK_INT(inv.action, ALIAS_HELP);
	CHECK_STR(inv.name, "sh");
	/* After the operand, --version is an argument. */
	CHECK_INT(P("bash", "-c", "x", "--version"), 0);
	CHECK_INT(inv.action, ALIAS_RUN);
	CHECK_STR(inv.arg0, "--version");
	CHECK_INT(P("bash", "script", "--help"), 0);
	CHECK_INT(inv.action, ALIAS_RUN);
	CHECK_STR(args_joined(), "--help");
}

static void
test_stdin_and_interactive(void)
{
	CHECK_INT(P("bash"), 0);
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_STR(inv.arg0, "bash");
	CHECK_INT(inv.n_args, 0);
	CHECK(!inv.command && !inv.script);

	CHECK_INT(P("bash", "-s"), 0);
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_INT(P("bash", "-s", "a", "-x", "b"), 0);
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_STR(args_joined(), "a|-x|b"); /* options end at the first argument */
	CHECK(!inv.xtrace);
	CHECK_INT(P("bash", "-es", "--", "-a"), 0);
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_STR(args_joined(), "-a");
	CHECK(inv.errexit);
	CHECK_INT(P("/usr/bin/bash", "-x"), 0);
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_STR(inv.arg0, "/usr/bin/bash"); /* $0 is argv[0] as given */
	CHECK_STR(inv.name, "bash");

	/* A terminal: interactive, with or without -s; -i forces it. */
	CHECK_INT(parse_tty(true, NULL, "bash", (const char *)NULL), 0);
	CHECK_INT(inv.mode, M_INTERACTIVE);
	CHECK_INT(parse_tty(true, NULL, "bash", "-s", "a", (const char *)NULL), 0);
	CHECK_INT(inv.mode, M_INTERACTIVE);
	CHECK_STR(args_joined(), "a");
	CHECK_INT(P("bash", "-i"), 0);
	CHECK_INT(inv.mode, M_INTERACTIVE);
	/* A terminal does not make a command or a script interactive. */
	CHECK_INT(parse_tty(true, NULL, "bash", "-c", "x", (const char *)NULL), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_INT(parse_tty(true, NULL, "bash", "s.sh", (const char *)NULL), 0);
	CHECK_INT(inv.mode, M_SCRIPT);
	CHECK_INT(P("bash", "-i", "s.sh"), 0);
	CHECK_INT(inv.mode, M_SCRIPT);
}

static void
test_script(void)
{
	CHECK_INT(P("bash", "./build.sh", "a", "b c"), 0);
	CHECK_INT(inv.mode, M_SCRIPT);
	CHECK_STR(inv.script, "./build.sh");
	CHECK_STR(inv.arg0, "./build.sh");
	CHECK_STR(args_joined(), "a|b c");
	CHECK(!inv.command);

	CHECK_INT(P("sh", "-eux", "s.sh", "-e"), 0);
	CHECK_STR(inv.script, "s.sh");
	CHECK_STR(args_joined(), "-e");
	CHECK(flags(true, true, true, false, false));

	/* "-" and "--" end the options: what follows is the script, dashes or not. */
	CHECK_INT(P("bash", "-", "-c"), 0);
	CHECK_INT(inv.mode, M_SCRIPT);
	CHECK_STR(inv.script, "-c");
	CHECK_INT(P("bash", "--", "--login"), 0);
	CHECK_STR(inv.script, "--login");
	CHECK(!inv.login);
	/* A lone "+" is an operand. */
	CHECK_INT(P("bash", "+"), 0);
	CHECK_INT(inv.mode, M_SCRIPT);
	CHECK_STR(inv.script, "+");
}

static void
test_dialects(void)
{
	const char *names[] = { "sh", "bash", "zsh", "dash", "rbash" };
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		char path[64];
		snprintf(path, sizeof path, "/usr/bin/%s", names[i]);
		CHECK_INT(P(path, "-c", "x"), 0);
		CHECK_STR(inv.invoked_as, names[i]);
		CHECK_STR(inv.name, names[i]);
		CHECK_STR(alias_dialect(names[i]), names[i]);
	}
	/* A login shell's argv[0]. */
	CHECK_INT(P("-bash"), 0);
	CHECK_STR(inv.invoked_as, "bash");
	CHECK(inv.login);
	CHECK_STR(inv.arg0, "-bash");
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_INT(P("-sh", "-c", "x"), 0);
	CHECK_STR(inv.invoked_as, "sh");
	CHECK(inv.login);

	/* argv[0] names no shell: the file's own name decides, else sh. */
	CHECK_INT(parse_tty(false, "bash", "weird", "-c", "x", (const char *)NULL), 0);
	CHECK_STR(inv.invoked_as, "bash");
	CHECK_STR(inv.name, "weird");
	CHECK_INT(parse_tty(false, "box-alias", "box-alias", "-c", "x", (const char *)NULL), 0);
	CHECK_STR(inv.invoked_as, "sh");
	CHECK_INT(parse_tty(false, NULL, "ksh", "-c", "x", (const char *)NULL), 0);
	CHECK_STR(inv.invoked_as, "sh");
	/* argv[0] wins over the file when it names a shell. */
	CHECK_INT(parse_tty(false, "bash", "zsh", "-c", "x", (const char *)NULL), 0);
	CHECK_STR(inv.invoked_as, "zsh");
	CHECK(alias_dialect("bash5") == NULL);
	CHECK(alias_dialect("") == NULL);
	CHECK(alias_dialect(NULL) == NULL);
	CHECK(alias_dialect("/bin/") == NULL);

	/* No argv at all (execve with an empty argv). */
	CHECK_INT(alias_parse(0, vec, "dash", false, &inv), 0);
	CHECK_STR(inv.invoked_as, "dash");
	CHECK_INT(inv.mode, M_STDIN);
	CHECK_STR(inv.arg0, "dash");
	CHECK(!inv.login);
}

static void
test_python(void)
{
	CHECK_INT(P("python3", "-c", "print(1)", "x"), 0);
	CHECK(inv.python);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_STR(inv.command, BOX_ALIAS_PYTHON_COMMAND);
	CHECK_STR(inv.command, "python3 \"$@\"");
	CHECK_STR(inv.arg0, "python3");
	CHECK_STR(args_joined(), "-c|print(1)|x");
	CHECK_STR(inv.invoked_as, "sh");
	CHECK(flags(false, false, false, false, false));
	/* Python's options are python's: none is parsed or refused. */
	CHECK_INT(P("/run/box/bin/python", "-z", "--version", "-e"), 0);
	CHECK_INT(inv.action, ALIAS_RUN);
	CHECK_STR(inv.arg0, "/run/box/bin/python");
	CHECK_STR(args_joined(), "-z|--version|-e");
	CHECK(!inv.errexit);
	CHECK_INT(P("python3"), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	CHECK_INT(inv.n_args, 0);
	/* The file's name counts too (python3 mounted under another argv[0]). */
	CHECK_INT(parse_tty(false, "python3", "py", "-V", (const char *)NULL), 0);
	CHECK(inv.python);
}

static void
refused(const char *what)
{
	if (inv.action != ALIAS_REFUSE || !strstr(inv.error, what)) {
		printf("#   refusal '%s' lacks '%s'\n", inv.error, what);
		tap_failed_checks++;
	}
}

static void
test_refusals(void)
{
	/* Each names the argument and lists what the alias accepts. */
	CHECK_INT(P("bash", "-z", "-c", "x"), -EINVAL);
	refused("box-shell: bash: -z: invalid option; ");
	refused("accepts -c CMD [ARG0 [ARGS...]], -s [ARGS...], SCRIPT [ARGS...]");
	refused("-o pipefail");
	refused("--version --help");
	const char *bad_short[] = { "-v", "-n", "-f", "-a", "-h", "-m", "-r", "-p", "-B", "-C",
				    "-D", "-E", "-H", "-P", "-T", "-O", "-k", "-t", "-b" };
	for (size_t i = 0; i < ELEMENTSOF(bad_short); i++) {
		CHECK_INT(P("bash", bad_short[i], "x"), -EINVAL);
		char want[32];
		snprintf(want, sizeof want, ": %s: invalid option", bad_short[i]);
		refused(want);
	}
	/* In a cluster the bad letter is named. */
	CHECK_INT(P("sh", "-evx", "x"), -EINVAL);
	refused(": -v: invalid option");
	CHECK_INT(P("bash", "-lc", "--", "x"), 0); /* fine */
	CHECK_INT(P("bash", "+c", "x"), -EINVAL);
	refused("+c: invalid option");
	CHECK_INT(P("bash", "+s"), -EINVAL);
	CHECK_INT(P("bash", "+l", "-c", "x"), -EINVAL);
	CHECK_INT(P("bash", "+i"), -EINVAL);
	CHECK_INT(P("bash", "+v"), -EINVAL);

	CHECK_INT(P("bash", "-c"), -EINVAL);
	refused("-c: option requires an argument");
	CHECK_INT(P("bash", "-ce"), -EINVAL);
	refused("-c: option requires an argument");
	CHECK_INT(P("bash", "-c", "--"), -EINVAL);
	CHECK_INT(P("bash", "-o"), -EINVAL);
	refused("-o: option requires an argument");
	CHECK_INT(P("bash", "-euo"), -EINVAL);
	CHECK_INT(P("bash", "+o"), -EINVAL);
	refused("+o: option requires an argument");
	CHECK_INT(P("bash", "-o", "emacs", "-c", "x"), -EINVAL);
	refused("-o emacs: invalid option name");
	CHECK_INT(P("bash", "-o", "posix"), -EINVAL);
	CHECK_INT(P("bash", "-o", "", "-c", "x"), -EINVAL);
	CHECK_INT(P("bash", "+o", "vi"), -EINVAL);
	refused("+o vi: invalid option name");

	const char *bad_long[] = { "--rcfile", "--init-file", "--verbose", "--debugger",
				   "--restricted", "--noediting", "--dump-strings", "--",
				   "--LOGIN", "--login=1", "--versio" };
	for (size_t i = 0; i < ELEMENTSOF(bad_long); i++) {
		int r = P("bash", bad_long[i], "-c", "x");
		if (strcmp(bad_long[i], "--") == 0) {
			/* "--" ends the options: "-c" is the script. */
			CHECK_INT(r, 0);
			CHECK_STR(inv.script, "-c");
			continue;
		}
		CHECK_INT(r, -EINVAL);
		char want[48];
		snprintf(want, sizeof want, ": %s: invalid option", bad_long[i]);
		refused(want);
	}
	CHECK_INT(P("bash", ""), -EINVAL);
	refused("the script name is empty");
	/* The name in the message is the one the alias was invoked as. */
	CHECK_INT(P("/bin/dash", "-q"), -EINVAL);
	refused("box-shell: dash: -q: invalid option");
}

static void
test_sizes(void)
{
	char *big = malloc(BOX_SHELL_COMMAND_MAX + 2);
	memset(big, 'x', BOX_SHELL_COMMAND_MAX + 1);
	big[BOX_SHELL_COMMAND_MAX + 1] = 0;
	CHECK_INT(P("bash", "-c", big), -EINVAL);
	refused("-c: the command is 1048577 bytes; box-shell takes at most 1048576");
	big[BOX_SHELL_COMMAND_MAX] = 0;
	CHECK_INT(P("bash", "-c", big), 0);
	CHECK_INT(inv.mode, M_COMMAND);
	free(big);

	char *arg = malloc(BOX_SHELL_ARG_MAX + 2);
	memset(arg, 'a', BOX_SHELL_ARG_MAX + 1);
	arg[BOX_SHELL_ARG_MAX + 1] = 0;
	CHECK_INT(P("bash", "-c", "x", "a0", "ok", arg), -EINVAL);
	refused("argument 2 is longer than");
	CHECK_INT(P("bash", "-c", "x", arg), -EINVAL);
	refused("$0 is longer than");
	CHECK_INT(P("python3", arg), -EINVAL);
	refused("argument 1 is longer than");
	arg[BOX_SHELL_ARG_MAX] = 0;
	CHECK_INT(P("bash", "-c", "x", "a0", arg), 0);
	free(arg);

	char script[4200];
	memset(script, 's', sizeof script - 1);
	script[sizeof script - 1] = 0;
	CHECK_INT(P("bash", script), -EINVAL);
	refused("the script name is too long");

	/* More positional parameters than box-shell takes. */
	int n = (int)BOX_SHELL_ARGS_MAX + 5; /* bash -c x ARG0, then 4097 */
	char **many = calloc((size_t)n + 1, sizeof *many);
	many[0] = "bash";
	many[1] = "-c";
	many[2] = "x";
	for (int i = 3; i < n; i++)
		many[i] = "a";
	CHECK_INT(alias_parse(n, many, NULL, false, &inv), -EINVAL);
	refused("4097 arguments; box-shell takes at most 4096");
	CHECK_INT(alias_parse(n - 1, many, NULL, false, &inv), 0);
	CHECK_INT(inv.n_args, BOX_SHELL_ARGS_MAX);
	free(many);
}

int
main(void)
{
	RUN(test_command_forms);
	RUN(test_o_options);
	RUN(test_long_options);
	RUN(test_stdin_and_interactive);
	RUN(test_script);
	RUN(test_dialects);
	RUN(test_python);
	RUN(test_refusals);
	RUN(test_sizes);
	return tap_done();
}
