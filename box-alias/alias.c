/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alias.c — the shell alias (alias.h; box-alias/README.md): bash's argument
 * grammar, then one session with box-shell on /run/box/shell.sock.
 *
 * The session (proto/shell.proto): ShellOpen with the parsed invocation, the
 * environment as the alias got it, its cwd and its fds 0, 1 and 2
 * (SCM_RIGHTS); then ShellSignal for every SIGINT, SIGTERM, SIGHUP and
 * SIGWINCH the alias catches; ShellExit ends it with the status the alias
 * exits with. ShellDenied, a refused connection or a session that ends
 * without ShellExit: one line "box-shell: …" on stderr and 125. The alias
 * never touches the command's data (no relay): box-shell writes the output
 * straight to the caller's stdout, and a terminal stays the terminal.
 *
 * Static (no NSS, no dlopen): it runs in every sandbox that mounts it, as
 * /bin/sh too, so it depends on no library file of the view.
 * Trusts: argv and environ are the caller's own and are passed on as data
 * (entries box-shell cannot take are dropped or refused with a message, never
 * altered); box-shell's messages pass the session table's checks (senders,
 * states, sizes, validators) before the alias acts on them. Whatever listens
 * on /run/box/shell.sock is taken to be box-shell: in the agent's view that
 * directory is the trampoline's read-only mount; elsewhere /run is root's.
 * The alias has no privilege of its own, so a listener there gets only what
 * the caller already holds (its fds, environment and cwd).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "alias.h"
#include "cleanup.h"
#include "ipc.h"
#include "path.h"
#include "proto_mcp.h"
#include "proto_shell.h"
#include "text.h"

/* What a refusal lists (docs/boxctl.1.md); --help says the same at length. */
#define ACCEPTS                                                                              \
	"the box's shell alias accepts -c CMD [ARG0 [ARGS...]], -s [ARGS...], SCRIPT [ARGS...], " \
	"-e -u -x -l -i (combined: -lc, -ec), -o pipefail|errexit|nounset|xtrace, +e +u +x +o " \
	"NAME, --login --norc --noprofile --posix --version --help"

/* The names the alias answers to; the first five are dialects box-shell knows. */
static const char *const shell_names[] = { "sh", "bash", "zsh", "dash", "rbash" };

const char *
alias_dialect(const char *name)
{
	if (!name)
		return NULL;
	const char *slash = strrchr(name, '/');
	if (slash)
		name = slash + 1;
	/* A login shell's argv[0] is "-bash". */
	if (name[0] == '-')
		name++;
	for (size_t i = 0; i < ELEMENTSOF(shell_names); i++)
		if (strcmp(name, shell_names[i]) == 0)
			return shell_names[i];
	if (strcmp(name, "python3") == 0 || strcmp(name, "python") == 0)
		return "python3";
	return NULL;
}

static const char *
base_name(const char *s)
{
	const char *slash = strrchr(s, '/');
	return slash ? slash + 1 : s;
}

__attribute__((format(printf, 2, 3))) static int
refuse(struct alias_invocation *inv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(inv->error, sizeof inv->error, "box-shell: %s: ", inv->name);
	if (n < 0 || (size_t)n >= sizeof inv->error)
		n = 0;
	vsnprintf(inv->error + n, sizeof inv->error - (size_t)n, fmt, ap);
	va_end(ap);
	inv->action = ALIAS_REFUSE;
	return -EINVAL;
}

/* -o NAME / +o NAME: the options box-shell takes (ShellOpen's flags). */
static int
set_o_option(struct alias_invocation *inv, const char *name, bool on, char sign)
{
	if (strcmp(name, "pipefail") == 0)
		inv->pipefail = on;
	else if (strcmp(name, "errexit") == 0)
		inv->errexit = on;
	else if (strcmp(name, "nounset") == 0)
		inv->nounset = on;
	else if (strcmp(name, "xtrace") == 0)
		inv->xtrace = on;
	else
		return refuse(inv, "%co %s: invalid option name; " ACCEPTS, sign, name);
	return 0;
}

/* A --long option (bash takes them before the short ones; the alias anywhere before the operand). */
static int
long_option(struct alias_invocation *inv, const char *opt)
{
	if (strcmp(opt, "--login") == 0)
		inv->login = true;
	else if (strcmp(opt, "--noprofile") == 0)
		inv->noprofile = true;
	else if (strcmp(opt, "--norc") == 0 || strcmp(opt, "--posix") == 0)
		; /* box-shell reads no rc file and is POSIX-minded already */
	else if (strcmp(opt, "--version") == 0)
		inv->action = ALIAS_VERSION;
	else if (strcmp(opt, "--help") == 0)
		inv->action = ALIAS_HELP;
	else
		return refuse(inv, "%s: invalid option; " ACCEPTS, opt);
	return 0;
}

/* python3 ARGS / python ARGS: the host command `python3 ARGS` in box-shell (README.md). */
static void
parse_python(int argc, char **argv, struct alias_invocation *inv)
{
	inv->python = true;
	inv->mode = BOX__SHELL_MODE__SHELL_MODE_COMMAND;
	inv->command = BOX_ALIAS_PYTHON_COMMAND;
	inv->arg0 = argc > 0 && argv[0] ? argv[0] : "python3";
	inv->args = argc > 1 ? argv + 1 : NULL;
	inv->n_args = argc > 1 ? (size_t)argc - 1 : 0;
	inv->invoked_as = "sh";
}

/* What box-shell's validator would refuse, said here with its reason. */
static int
check_sizes(struct alias_invocation *inv)
{
	if (inv->command && strlen(inv->command) > BOX_SHELL_COMMAND_MAX)
		return refuse(inv, "-c: the command is %zu bytes; box-shell takes at most %u",
			      strlen(inv->command), BOX_SHELL_COMMAND_MAX);
	if (inv->script && (inv->script[0] == 0 || strlen(inv->script) > PATH_MAX - 1))
		return refuse(inv, "the script name is %s", inv->script[0] ? "too long" : "empty");
	if (inv->n_args > BOX_SHELL_ARGS_MAX)
		return refuse(inv, "%zu arguments; box-shell takes at most %u", inv->n_args,
			      BOX_SHELL_ARGS_MAX);
	if (strlen(inv->arg0) > BOX_SHELL_ARG_MAX)
		return refuse(inv, "$0 is longer than %u bytes", BOX_SHELL_ARG_MAX);
	for (size_t i = 0; i < inv->n_args; i++)
		if (strlen(inv->args[i]) > BOX_SHELL_ARG_MAX)
			return refuse(inv, "argument %zu is longer than %u bytes", i + 1,
				      BOX_SHELL_ARG_MAX);
	return 0;
}

int
alias_parse(int argc, char **argv, const char *exe_name, bool stdin_tty,
	    struct alias_invocation *inv)
{
	memset(inv, 0, sizeof *inv);
	inv->action = ALIAS_RUN;
	const char *argv0 = argc > 0 && argv[0] ? argv[0] : NULL;

	/* The dialect: argv[0]'s name, else the file's own name, else POSIX sh. */
	const char *dialect = alias_dialect(argv0);
	if (!dialect)
		dialect = alias_dialect(exe_name);
	if (!dialect)
		dialect = "sh";
	inv->name = argv0 && argv0[0] ? base_name(argv0) : dialect;
	if (strcmp(dialect, "python3") == 0) {
		parse_python(argc, argv, inv);
		return check_sizes(inv);
	}
	inv->invoked_as = dialect;
	inv->login = argv0 && base_name(argv0)[0] == '-';

	bool want_command = false, read_stdin = false;
	int i = 1;
	while (i < argc) {
		const char *a = argv[i];
		/* "--" and "-" end the options and are not operands. */
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			i++;
			break;
		}
		if (a[0] == '-' && a[1] == '-') {
			if (long_option(inv, a) < 0)
				return -EINVAL;
			/* --version/--help answer at once, as bash does. */
			if (inv->action != ALIAS_RUN)
				return 0;
			i++;
			continue;
		}
		if ((a[0] != '-' && a[0] != '+') || a[1] == 0)
			break; /* the first operand ("+" alone is one too) */
		bool on = a[0] == '-';
		i++;
		for (const char *c = a + 1; *c; c++) {
			switch (*c) {
			case 'e':
				inv->errexit = on;
				break;
			case 'u':
				inv->nounset = on;
				break;
			case 'x':
				inv->xtrace = on;
				break;
			case 'o':
				/* Each o takes the next word, as in bash (-euo pipefail, -oe pipefail). */
				if (i >= argc)
					return refuse(inv, "%co: option requires an argument; " ACCEPTS,
						      a[0]);
				if (set_o_option(inv, argv[i], on, a[0]) < 0)
					return -EINVAL;
				i++;
				break;
			case 'c':
			case 's':
			case 'i':
			case 'l':
				if (!on)
					return refuse(inv, "+%c: invalid option; " ACCEPTS, *c);
				if (*c == 'c')
					want_command = true;
				else if (*c == 's')
					read_stdin = true;
				else if (*c == 'i')
					inv->interactive = true;
				else
					inv->login = true;
				break;
			default:
				return refuse(inv, "%c%c: invalid option; " ACCEPTS, a[0], *c);
			}
		}
	}

	/* -c wins over -s, as in bash; the operands after CMD are $0 and $1... */
	if (want_command) {
		if (i >= argc)
			return refuse(inv, "-c: option requires an argument; " ACCEPTS);
		inv->mode = BOX__SHELL_MODE__SHELL_MODE_COMMAND;
		inv->command = argv[i++];
		inv->arg0 = i < argc ? argv[i++] : argv0 ? argv0 : dialect;
	} else if (read_stdin || i >= argc) {
		/* No script operand: stdin is the script, or a terminal to prompt on. */
		inv->mode = inv->interactive || stdin_tty ? BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE
							  : BOX__SHELL_MODE__SHELL_MODE_STDIN;
		inv->arg0 = argv0 ? argv0 : dialect;
	} else {
		inv->mode = BOX__SHELL_MODE__SHELL_MODE_SCRIPT;
		inv->script = argv[i];
		inv->arg0 = argv[i++];
	}
	inv->args = i < argc ? argv + i : NULL;
	inv->n_args = i < argc ? (size_t)(argc - i) : 0;
	return check_sizes(inv);
}

/* ---- the session --------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) static int
cannot_serve(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "box-shell: cannot serve: %s\n", line);
	return BOX_ALIAS_CANNOT_SERVE;
}

/*
 * fds 0-2 are what box-shell runs the command on, and ShellOpen carries
 * exactly three: one the caller left closed becomes /dev/null (bash would run
 * the command with it closed; box-shell cannot be handed a closed fd). Done
 * first, so that no socket of the alias's lands on 0-2.
 */
static int
stdio_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (n != fd) {
			int e = n < 0 ? errno : EBADF;
			if (n >= 0)
				close(n);
			return -e;
		}
	}
	return 0;
}

/*
 * The environment as box-shell can take it: NAME=value entries with a shell
 * name (bash's exported functions, BASH_FUNC_f%%, and names no shell can
 * spell are dropped, as POSIX sh drops them), each within the cap. More
 * entries than box-shell takes is refused with a message (-E2BIG).
 */
static int
env_build(char **envp, char ***ret, size_t *n_ret)
{
	size_t n = 0, cap = 0;
	for (char **e = envp; e && *e; e++)
		cap++;
	_cleanup_free_ char **out = calloc(cap ? cap : 1, sizeof *out);
	if (!out)
		return -ENOMEM;
	for (char **e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e || (size_t)(eq - *e) > 255 ||
		    strlen(*e) > BOX_SHELL_ARG_MAX)
			continue;
		char name[256];
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = 0;
		if (!box_valid_env_name(name))
			continue;
		out[n++] = *e;
	}
	if (n > BOX_SHELL_ENV_MAX)
		return -E2BIG;
	*ret = TAKE_PTR(out);
	*n_ret = n;
	return 0;
}

static int
connect_shell(int *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_Static_assert(sizeof BOX_ALIAS_SOCKET <= sizeof sa.sun_path, "socket path fits");
	memcpy(sa.sun_path, BOX_ALIAS_SOCKET, sizeof BOX_ALIAS_SOCKET);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	while (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		if (errno != EINTR)
			return -errno;
	*ret = TAKE_FD(fd);
	return 0;
}

/*
 * One message from box-shell. Returns 1 and sets *status when the session
 * ended (ShellExit: its status; ShellDenied: 125 after printing it), 0 when
 * nothing (more) is to be read now, or the status for a broken session.
 */
static int
read_reply(struct box_ipc_chan *chan, int *status)
{
	for (;;) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = box_ipc_recv(chan, &m);
		if (r == -EAGAIN || r == -EINTR)
			return 0;
		if (r == 0)
			continue; /* a fragment */
		if (r == -ECONNRESET || r == -EPROTO) {
			*status = cannot_serve("box-shell closed the session before the command "
					       "ended");
			return 1;
		}
		if (r < 0) {
			*status = cannot_serve("a broken reply from box-shell (%s)", strerror(-r));
			return 1;
		}
		if (m.type == BOX__MSG_TYPE__MSG_SHELL_EXIT) {
			*status = ((const Box__ShellExit *)m.msg)->status;
		} else {
			/* The table lets nothing else through: ShellDenied. */
			fprintf(stderr, "box-shell: %s\n", ((const Box__ShellDenied *)m.msg)->message);
			*status = BOX_ALIAS_CANNOT_SERVE;
		}
		box_ipc_msg_done(&m);
		return 1;
	}
}

/* Every caught signal (signalfd) as a ShellSignal, in the order the kernel reports them. */
static int
forward_signals(int sfd, struct box_ipc_chan *chan)
{
	struct signalfd_siginfo si[8];
	for (;;) {
		ssize_t n = read(sfd, si, sizeof si);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		for (size_t k = 0; k < (size_t)n / sizeof si[0]; k++) {
			Box__ShellSignal msg = BOX__SHELL_SIGNAL__INIT;
			msg.signal = (int32_t)si[k].ssi_signo;
			int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, 0, &msg.base,
						  NULL, 0);
			if (r < 0)
				return r;
		}
	}
}

static int
run_session(const struct alias_invocation *inv, char **envp)
{
	int r = stdio_open();
	if (r < 0)
		return cannot_serve("fds 0-2: /dev/null: %s", strerror(-r));

	/*
	 * The signals box-shell gets are held from here on: one that comes
	 * before the session is open waits in the signalfd and follows
	 * ShellOpen. One the caller made the alias ignore (nohup's SIGHUP, a
	 * background job's SIGINT) stays ignored and is not forwarded, as a shell
	 * keeps the signals ignored at its entry. SIGPIPE: a gone box-shell is
	 * an error return, not a death.
	 */
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
	sigset_t fwd;
	sigemptyset(&fwd);
	for (size_t k = 0; k < ELEMENTSOF(forwarded); k++) {
		struct sigaction old;
		if (sigaction(forwarded[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaddset(&fwd, forwarded[k]);
	}
	if (sigprocmask(SIG_BLOCK, &fwd, NULL) < 0)
		return cannot_serve("sigprocmask: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	/*
	 * An interactive session's commands run in box-shell, not in the
	 * terminal's foreground group: Ctrl-Z would stop only the alias, which
	 * could then never pass on the session's end. The terminal's job-control
	 * stops are ignored (docs/box-sh.1.md "Interactive": no Ctrl-Z).
	 */
	if (inv->mode == BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE) {
		signal(SIGTSTP, SIG_IGN);
		signal(SIGTTIN, SIG_IGN);
		signal(SIGTTOU, SIG_IGN);
	}
	_cleanup_close_ int sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return cannot_serve("signalfd: %s", strerror(errno));

	_cleanup_free_ char **env = NULL;
	size_t n_env = 0;
	r = env_build(envp, &env, &n_env);
	if (r == -E2BIG)
		return cannot_serve("the environment has more than %u variables", BOX_SHELL_ENV_MAX);
	if (r < 0)
		return cannot_serve("environment: %s", strerror(-r));
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return cannot_serve("the current directory: %s", strerror(errno));
	if (!path_is_clean_absolute(cwd))
		return cannot_serve("the current directory's name has a control character or is "
				    "too long");

	Box__ShellOpen open_msg = BOX__SHELL_OPEN__INIT;
	open_msg.mode = inv->mode;
	open_msg.command = (char *)inv->command;
	open_msg.script = (char *)inv->script;
	open_msg.arg0 = (char *)inv->arg0;
	open_msg.args = inv->args;
	open_msg.n_args = inv->n_args;
	open_msg.invoked_as = (char *)inv->invoked_as;
	open_msg.has_errexit = open_msg.errexit = inv->errexit;
	open_msg.has_nounset = open_msg.nounset = inv->nounset;
	open_msg.has_xtrace = open_msg.xtrace = inv->xtrace;
	open_msg.has_pipefail = open_msg.pipefail = inv->pipefail;
	open_msg.has_login = open_msg.login = inv->login;
	open_msg.has_noprofile = open_msg.noprofile = inv->noprofile;
	open_msg.env = env;
	open_msg.n_env = n_env;
	open_msg.cwd = cwd;

	_cleanup_close_ int sock = -1;
	r = connect_shell(&sock);
	if (r < 0)
		return cannot_serve("connect %s: %s", BOX_ALIAS_SOCKET, strerror(-r));
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan =
		box_ipc_chan_new(sock, &box_proto_session, BOX_SESSION_ROLE_SHELL);
	if (!chan)
		return cannot_serve("%s", strerror(errno));

	int status = BOX_ALIAS_CANNOT_SERVE;
	const int stdio[3] = { 0, 1, 2 };
	r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_SHELL_OPEN, 1, &open_msg.base, stdio, 3);
	if (r < 0) {
		/* box-shell may have said why before it hung up (ShellDenied). */
		if ((r == -EPIPE || r == -ECONNRESET) && read_reply(chan, &status) == 1)
			return status;
		return cannot_serve("sending the command to box-shell: %s", strerror(-r));
	}

	struct pollfd pf[2] = { { .fd = sock, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return cannot_serve("poll: %s", strerror(errno));
		}
		if (pf[0].revents && read_reply(chan, &status) == 1)
			return status;
		if (pf[1].revents) {
			r = forward_signals(sfd, chan);
			/* A gone peer: its ShellExit or EOF is what the next read says. */
			if (r < 0 && r != -EPIPE && r != -ECONNRESET)
				return cannot_serve("forwarding a signal: %s", strerror(-r));
			if (r < 0)
				pf[1].fd = -1;
		}
	}
}

/* ---- the MCP alias ------------------------------------------------- */

const char *
alias_mcp_name(const char *argv0, const char *exe_name)
{
	if (!argv0 || !argv0[0] || alias_dialect(argv0) || (exe_name && alias_dialect(exe_name)))
		return NULL;
	const char *name = base_name(argv0);
	if (strcmp(name, "box-alias") == 0 || !box_valid_mcp_alias(name))
		return NULL;
	return name;
}

static int mcp_fail(int status, const char *alias, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int
mcp_fail(int status, const char *alias, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "box-mcpd: %s: %s\n", alias, line);
	return status;
}

/*
 * One MCP session: McpOpen with fds 0-2, then nothing but McpClose (the
 * session table lets nothing else through). Signals keep their default
 * action: an alias that dies hangs up, and box-mcpd stops the server.
 */
static int
run_mcp(const char *alias, int argc, char **argv)
{
	int r = stdio_open();
	if (r < 0)
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "fds 0-2: /dev/null: %s",
				strerror(-r));
	signal(SIGPIPE, SIG_IGN);
	size_t n_args = argc > 1 ? (size_t)argc - 1 : 0;
	if (n_args > BOX_MCP_ARGS_MAX)
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "more than %u arguments",
				BOX_MCP_ARGS_MAX);
	for (size_t i = 0; i < n_args; i++)
		if (strlen(argv[i + 1]) > BOX_MCP_ARG_MAX || !box_valid_utf8(argv[i + 1], strlen(argv[i + 1])))
			return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias,
					"argument %zu is longer than %u bytes or not UTF-8", i + 1,
					BOX_MCP_ARG_MAX);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "the current directory: %s",
				strerror(errno));
	if (!path_is_clean_absolute(cwd))
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias,
				"the current directory's name has a control character or is too "
				"long");

	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_Static_assert(sizeof BOX_ALIAS_MCP_SOCKET <= sizeof sa.sun_path, "socket path fits");
	memcpy(sa.sun_path, BOX_ALIAS_MCP_SOCKET, sizeof BOX_ALIAS_MCP_SOCKET);
	_cleanup_close_ int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "socket: %s", strerror(errno));
	while (connect(sock, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == ENOENT)
			return mcp_fail(BOX_ALIAS_NO_BROKER, alias,
					"no MCP broker in this box (%s does not exist: the box has "
					"no stdio [mcp] server)", BOX_ALIAS_MCP_SOCKET);
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "connect %s: %s",
				BOX_ALIAS_MCP_SOCKET, strerror(errno));
	}
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan =
		box_ipc_chan_new(sock, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD);
	if (!chan)
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "%s", strerror(errno));

	Box__McpOpen open_msg = BOX__MCP_OPEN__INIT;
	open_msg.alias = (char *)alias;
	open_msg.args = argv + 1;
	open_msg.n_args = n_args;
	open_msg.cwd = cwd;
	const int stdio[3] = { 0, 1, 2 };
	r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_MCP_OPEN, 1, &open_msg.base, stdio, 3);
	bool sent = r >= 0;
	if (!sent && r != -EPIPE && r != -ECONNRESET)
		return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "sending McpOpen to box-mcpd: %s",
				strerror(-r));
	/*
	 * box_ipc_recv never blocks (MSG_DONTWAIT): sleep in poll until box-mcpd
	 * writes or hangs up, so a session that lasts hours costs no CPU.
	 */
	struct pollfd pf = { .fd = sock, .events = POLLIN };
	for (;;) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		r = box_ipc_recv(chan, &m);
		if (r == -EINTR || r == -EAGAIN) {
			if (poll(&pf, 1, -1) < 0 && errno != EINTR)
				return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias, "poll: %s",
						strerror(errno));
			continue;
		}
		if (r == 0)
			continue; /* a fragment */
		if (r == -ECONNRESET || r == -EPROTO)
			return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias,
					"box-mcpd closed the session without saying why (it may "
					"have exited)");
		if (r < 0)
			return mcp_fail(BOX_ALIAS_CANNOT_SERVE, alias,
					"a broken reply from box-mcpd (%s)", strerror(-r));
		/* The table lets nothing but McpClose through. */
		const Box__McpClose *c = (const Box__McpClose *)m.msg;
		int status = c->status & 0xff;
		if (c->message && *c->message)
			fprintf(stderr, "%s\n", c->message);
		box_ipc_msg_done(&m);
		(void)sent;
		return status;
	}
}

static void
print_version(const struct alias_invocation *inv)
{
	printf("box-shell %s\n"
	       "This \"%s\" is box's shell alias; it answers --version itself. Commands run in\n"
	       "box-shell, the box's own shell, not in GNU bash or another shell.\n",
	       BOX_VERSION, inv->name);
}

static void
print_help(const struct alias_invocation *inv)
{
	printf("Usage: %s [OPTIONS] -c COMMAND [ARG0 [ARGS...]]\n"
	       "       %s [OPTIONS] [-s] [ARGS...]\n"
	       "       %s [OPTIONS] SCRIPT [ARGS...]\n"
	       "box's shell alias (this help comes from the alias itself): it hands the command\n"
	       "and its stdin, stdout and stderr to box-shell, the box's shell.\n"
	       "Options (short ones combine and may follow -c: -lc, -ec, -euo pipefail):\n"
	       "  -c            the first operand is the command text\n"
	       "  -s            read the script from stdin (also: no operand at all)\n"
	       "  -e -u -x      errexit, nounset, xtrace\n"
	       "  -o NAME       pipefail, errexit, nounset or xtrace (+o NAME, +e... turn one off)\n"
	       "  -l, --login   a login shell: /etc/profile and ~/.bash_profile (or ~/.profile) are read\n"
	       "  -i            interactive (also: no operand and stdin a terminal)\n"
	       "  --noprofile   a login shell that reads no profile\n"
	       "  --norc --posix   accepted (box-shell reads no rc file)\n"
	       "  --version --help\n"
	       "Exit status: the command's; 124 timed out, 125 box-shell could not serve,\n"
	       "126 refused by policy or not startable as a tool, 127 not found.\n",
	       inv->name, inv->name, inv->name);
}

int
alias_main(int argc, char **argv, char **envp)
{
	/* The file's own name only matters when argv[0] names no shell. */
	char exe[PATH_MAX];
	ssize_t n = 0;
	if (!alias_dialect(argc > 0 ? argv[0] : NULL))
		n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;

	/* Not a shell's name: an MCP alias (a link for a stdio [mcp.NAME]). */
	const char *mcp = alias_mcp_name(argc > 0 ? argv[0] : NULL, n > 0 ? base_name(exe) : NULL);
	if (mcp)
		return run_mcp(mcp, argc, argv);

	struct alias_invocation inv;
	alias_parse(argc, argv, n > 0 ? base_name(exe) : NULL, isatty(0) == 1, &inv);
	switch (inv.action) {
	case ALIAS_VERSION:
		print_version(&inv);
		return fflush(stdout) == 0 ? 0 : 1;
	case ALIAS_HELP:
		print_help(&inv);
		return fflush(stdout) == 0 ? 0 : 1;
	case ALIAS_REFUSE:
		fprintf(stderr, "%s\n", inv.error);
		return BOX_ALIAS_CANNOT_SERVE;
	case ALIAS_RUN:
	default:
		return run_session(&inv, envp);
	}
}
