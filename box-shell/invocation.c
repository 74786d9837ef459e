/* SPDX-License-Identifier: Apache-2.0 */
/*
 * invocation.c — one invocation of the shell in the box-shell daemon: the
 * child the main process forked for a session (main.c), or the spare that
 * answered the door (shd_spare_run, daemon.h), in its own process group,
 * with the alias's fds as 0-2 and the session's control socket (daemon.h)
 * at a high fd. It runs one fresh interpreter (libshell.a) and exits with
 * the script's status, which the main process sends as ShellExit (the
 * spare's session: this process, on the connection it accepted).
 *
 * What it gets (docs/design.md): the caller's cwd (the fd main opened) and
 * environment, filtered: docs/box.ini.5.md's reserved names are removed (loader and
 * interpreter hooks LD_* PYTHON* NODE_OPTIONS BASH_ENV ENV PERL5LIB PERL5OPT
 * RUBYOPT JAVA_TOOL_OPTIONS _JAVA_OPTIONS GCONV_PATH LOCPATH; the proxy and
 * CA variables; PWD USER BOX_*), then box's own are set: PWD = the cwd,
 * USER = the owner, BOX_NAME, BOX_ID; /run/box/bin is taken out of PATH
 * (the aliases are not host programs; no PATH: ShellInit's). A host program
 * gets none of this anyway: boxd composes its environment and adds only what
 * this invocation assigned. Options -e -u -x -o pipefail as given; -l is
 * accepted and reads no profile. Modes: -c TEXT, -s (the script read from
 * fd 0), SCRIPT (read relative to the cwd), interactive (a terminal on fd
 * 0: prompt PS1 on fd 2, a line at a time; SIGINT, which the alias forwards
 * for Ctrl-C, abandons the line or stops the running command; COLUMNS and
 * LINES from TIOCGWINSZ on fd 0, again after each SIGWINCH; `exit N` or
 * end of input ends it).
 *
 * Decisions: box-policyd, over a channel of this process's own
 * (decide_policyd.c); host programs: boxd, through the main process
 * (host_boxd.c). Never execve (box-shell's seccomp forbids it).
 * Trusts: the ShellOpen the protocol table validated; nothing in the script;
 * an alias knocking at the door no more than main would (its connection is
 * read through the same session table, its cwd opened as main opens it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon.h"
#include "envnames.h"
#include "fdutil.h"
#include "lineedit.h"
#include "ipc.h"
#include "proto_shell.h"
#include "sh.h"

/* The script's fds (fsops.h) lie below this process's private ones (daemon.h). */
_Static_assert(SH_FD_SCRIPT_MAX <= SHD_FD_PRIVATE_MIN,
	       "a script's redirections must not reach the invocation's private fds");

int read_script(struct sh_shell *sh, const char *path, char **out, size_t *len, int *err);

static char *
cat2(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = xmalloc(la + lb + 1);
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	return s;
}

/* PATH without /run/box/bin (and without empty leftovers). */
static char *
path_without_aliases(const char *path)
{
	struct sbuf b = { 0 };
	const char *p = path;
	for (;;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		bool alias_dir = (l == 12 && memcmp(p, "/run/box/bin", 12) == 0) ||
				 (l == 13 && memcmp(p, "/run/box/bin/", 13) == 0);
		if (!alias_dir && l > 0) {
			if (b.len)
				sb_addc(&b, ':');
			sb_addn(&b, p, l);
		}
		if (!e)
			break;
		p = e + 1;
	}
	if (!b.len)
		sb_adds(&b, "");
	return sb_take(&b);
}

static char **
environment(const Box__ShellOpen *so, const char *cwd)
{
	const Box__ShellInit *init = shd_box.init;
	size_t n = 0;
	char **env = xmalloc((so->n_env + 6) * sizeof(char *));
	bool have_path = false;
	for (size_t i = 0; i < so->n_env; i++) {
		const char *e = so->env[i];
		const char *eq = strchr(e, '=');
		if (!eq || box_env_reserved_n(e, (size_t)(eq - e)))
			continue;
		if (eq - e == 4 && memcmp(e, "PATH", 4) == 0) {
			if (have_path)
				continue;
			char *p = path_without_aliases(eq + 1);
			env[n++] = cat2("PATH=", p[0] ? p : init->path);
			free(p);
			have_path = true;
			continue;
		}
		env[n++] = xstrdup(e);
	}
	if (!have_path)
		env[n++] = cat2("PATH=", init->path);
	env[n++] = cat2("PWD=", cwd);
	if (shd_box.user)
		env[n++] = cat2("USER=", shd_box.user);
	env[n++] = cat2("BOX_NAME=", init->box_name);
	env[n++] = cat2("BOX_ID=", init->box_id);
	env[n] = NULL;
	return env;
}

/* ---- interactive ---------------------------------------------------------------- */

static volatile sig_atomic_t got_int, got_winch;
static struct sh_shell *interactive_sh;

static void
on_int(int sig)
{
	(void)sig;
	got_int = 1;
	if (interactive_sh)
		interactive_sh->interrupted = 1;
}

static void
on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

/* A forked stage of an interactive shell takes SIGINT as any command does: it dies. */
static void
interactive_child(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGWINCH, SIG_DFL);
}

static void
window_size(struct sh_shell *sh)
{
	struct winsize ws;
	if (ioctl(0, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
		return;
	char b[16];
	(void)snprintf(b, sizeof(b), "%u", (unsigned)ws.ws_col);
	var_set(sh, "COLUMNS", b, 0);
	(void)snprintf(b, sizeof(b), "%u", (unsigned)ws.ws_row);
	var_set(sh, "LINES", b, 0);
}

/* PS1's backslash escapes (\u \h \w \W \$ \s \n \\), then its parameters. */
static char *
prompt(struct sh_shell *sh)
{
	const char *ps1 = var_value(sh, "PS1");
	if (!ps1)
		ps1 = getuid() == 0 ? "# " : "$ ";
	struct sbuf b = { 0 };
	for (const char *p = ps1; *p; p++) {
		if (*p != '\\' || !p[1]) {
			sb_addc(&b, *p);
			continue;
		}
		const char *home = sh->home;
		size_t hl = home ? strlen(home) : 0;
		switch (*++p) {
		case 'u': sb_adds(&b, shd_box.user ? shd_box.user : "?"); break;
		case 'h':
		case 'H': sb_adds(&b, shd_box.init->box_name); break;
		case 'w':
			if (hl > 1 && strncmp(sh->cwd, home, hl) == 0 &&
			    (sh->cwd[hl] == '/' || sh->cwd[hl] == '\0')) {
				sb_addc(&b, '~');
				sb_adds(&b, sh->cwd + hl);
			} else
				sb_adds(&b, sh->cwd);
			break;
		case 'W': {
			const char *s = strrchr(sh->cwd, '/');
			sb_adds(&b, s && s[1] ? s + 1 : sh->cwd);
			break;
		}
		case '$': sb_addc(&b, getuid() == 0 ? '#' : '$'); break;
		case 's': sb_adds(&b, sh->arg0); break;
		case 'n': sb_addc(&b, '\n'); break;
		case '\\': sb_addc(&b, '\\'); break;
		case '[':
		case ']': break;
		default:
			sb_addc(&b, '\\');
			sb_addc(&b, *p);
		}
	}
	char *raw = sb_take(&b);
	char *s = expand_str(sh, raw, false);
	if (s) {
		free(raw);
		return s;
	}
	sh->jump = J_NONE;
	return raw;
}

/* One line from fd 0: 1 a line, 0 end of input, -1 interrupted (Ctrl-C). */
static int
read_line(struct sh_shell *sh, struct sbuf *line)
{
	line->len = 0;
	for (;;) {
		char c;
		ssize_t n = read(0, &c, 1);
		if (n < 0 && errno == EINTR) {
			if (got_int)
				return -1;
			if (got_winch) {
				got_winch = 0;
				window_size(sh);
			}
			continue;
		}
		if (n <= 0)
			return line->len ? 1 : 0;
		if (line->len >= SH_MAX_SCRIPT)
			return 1;
		sb_addc(line, c);
		if (c == '\n')
			return 1;
	}
}

/*
 * The line editor (lineedit.c) when fd 0 and fd 2 are a terminal, else fd 0
 * a byte at a time with the prompt written to fd 2. A script may redirect fd
 * 0 or 2 (`exec 0<file`): the editor is used only while both are still a
 * terminal.
 */
static struct sh_lineedit *editor;

static int
prompt_read(struct sh_shell *sh, const char *p, struct sbuf *line)
{
	bi_flush();
	if (editor && isatty(0) && isatty(2))
		return lineedit_read(editor, p, line);
	(void)!write(2, p, strlen(p));
	return read_line(sh, line);
}

static _Noreturn void
interactive(struct sh_shell *sh)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = on_int; /* no SA_RESTART: a read at the prompt returns EINTR */
	sigemptyset(&sa.sa_mask);
	interactive_sh = sh;
	sh->interactive = true;
	(void)sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_winch; /* no SA_RESTART either: the size is taken at once */
	(void)sigaction(SIGWINCH, &sa, NULL);
	(void)pthread_atfork(NULL, NULL, interactive_child);
	window_size(sh);
	editor = lineedit_open(sh, &got_int, &got_winch, window_size);
	struct sbuf line = { 0 };
	for (;;) {
		if (got_winch) {
			got_winch = 0;
			window_size(sh);
		}
		got_int = 0;
		sh->interrupted = 0;
		char *p = prompt(sh);
		int r = prompt_read(sh, p, &line);
		free(p);
		if (r < 0) {
			(void)!write(2, "\n", 1);
			sh->status = 130;
			continue;
		}
		if (r == 0) {
			(void)!write(2, "exit\n", 5);
			sh_exit(sh, sh->status);
		}
		/*
		 * A command that goes on (an open quote, `if … then`, a here-doc,
		 * a trailing `|`): read more lines at PS2, as bash does, and run
		 * the whole. Ctrl-C there drops it; end of input runs what came
		 * (the parser then says what was missing).
		 */
		bool dropped = false;
		while (line.len < SH_MAX_SCRIPT && parse_complete(sh, line.s, line.len) == 0) {
			const char *ps2 = var_value(sh, "PS2");
			if (!ps2)
				ps2 = "> ";
			struct sbuf more = { 0 };
			int rm = prompt_read(sh, ps2, &more);
			if (rm < 0) {
				(void)!write(2, "\n", 1);
				sh->status = 130;
				dropped = true;
			} else if (rm > 0) {
				sb_addn(&line, more.s, more.len);
			}
			free(more.s);
			if (rm <= 0)
				break;
		}
		if (dropped)
			continue;
		if (editor)
			lineedit_remember(editor, line.s, line.len);
		jobs_line(sh, line.s, line.len);
		if (got_winch) { /* it came between the check above and the read */
			got_winch = 0;
			window_size(sh);
		}
		int st = exec_text(sh, line.s, line.len, sh->lineno + 1, NULL);
		if (st == -2)
			st = 2;
		sh->status = st;
		if (got_int && st == 0)
			sh->status = 130;
		/* Ctrl-C (the terminal echoed ^C): the prompt comes back on a line of its own. */
		if (got_int && isatty(2))
			(void)!write(2, "\n", 1);
		jobs_line(sh, NULL, 0); /* the jobs this line started get their numbers */
		if (sh->jump == J_EXIT)
			sh_exit(sh, sh->jump_n);
		sh->jump = J_NONE;
	}
}

/* ---- the invocation --------------------------------------------------------------- */

static _Noreturn void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void
fail(int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	_exit(status);
}

/*
 * A session taken at the door (door_answer): the alias's connection, which
 * the invocation child keeps to send ShellExit itself; -1 otherwise. Never
 * in a process the child forks (closed there at once).
 */
static int alias_conn = -1;

static void
alias_conn_forked(void)
{
	alias_conn = safe_close(alias_conn);
}

/*
 * The invocation's last act before _exit (its output flushed): main hears
 * it at once, not after the kernel has torn this process down and SIGCHLD
 * came (the reaped status is the same; a process that dies of a signal
 * never gets here, and main answers when it reaps it). A session taken at
 * the door tells the alias itself, then main (which lets go of the
 * connection, and does not take the alias's hang-up that may come first for
 * one while the command ran: main.c), unless main timed it out (its
 * SHD_CTL_TIMED_OUT waits on the control socket): then main says 124.
 * Otherwise main says the status, and gets the CPU first.
 */
static void
tell_main_exiting(struct sh_shell *sh, int status)
{
	char mark;
	bool said = false;
	if (alias_conn >= 0 && recv(sh->exiting_fd, &mark, 1, MSG_PEEK | MSG_DONTWAIT) != 1) {
		/* The alias first: main, woken first, would take the CPU before it is told. */
		Box__ShellExit ex = BOX__SHELL_EXIT__INIT;
		ex.status = status & 255;
		said = box_ipc_send(alias_conn, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_EXIT, 0,
				    &ex.base, NULL, 0) == 0;
	}
	(void)shd_ctl_send_exit(sh->exiting_fd, status, said);
	/*
	 * The process just woken (the alias, or main to tell it) runs before
	 * this process's teardown (its page tables, its files: a millisecond on
	 * a virtual machine), which would otherwise hold the CPU it was woken
	 * on: the teardown at the lowest priority, and the CPU given up now.
	 */
	(void)setpriority(PRIO_PROCESS, 0, 19);
	(void)sched_yield();
}

/* "/" (O_PATH), at SHD_FD_PRIVATE_MIN or above when it can be: the shell's root_fd. */
static int
root_open(void)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && fd < SHD_FD_PRIVATE_MIN) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, SHD_FD_PRIVATE_MIN);
		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
	}
	return fd;
}

/* An invocation's shell: fresh state from SO, in CWD (taken), with D deciding. */
static struct sh_shell *
shell_new(const Box__ShellOpen *so, struct sh_decider *d, char *cwd, int root_fd)
{
	char **env = environment(so, cwd);
	struct sh_shell *sh = sh_new(d, env, so->arg0, (int)so->n_args, so->args);
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	sh_current = sh;
	sh->root_fd = root_fd;
	sh->cwd = cwd;
	sh->home = xstrdup(shd_box.init->home);
	sh->cmd_timeout_ms = -1; /* the main process times the invocation */
	sh->exit_quick = true;   /* no destructors of main's libraries (page faults, no use) */
	const char *as = so->invoked_as;
	sh->expand_aliases = strcmp(as, "sh") == 0 || strcmp(as, "dash") == 0;
	sh->dash_errors = sh->expand_aliases; /* the sh/dash dialect: dash's exit statuses */
	sh->command_string = so->mode == BOX__SHELL_MODE__SHELL_MODE_COMMAND;
	sh->opt_e = so->errexit;
	sh->opt_u = so->nounset;
	sh->opt_x = so->xtrace;
	sh->opt_pipefail = so->pipefail;
	sh->login_shell = so->login;
	sh_update_fs(sh, "box-shell");
	return sh;
}

_Noreturn void
shd_invocation_run(const struct shd_invocation *inv)
{
	const Box__ShellOpen *so = inv->open;
	const Box__ShellInit *init = shd_box.init;

	/* Signals: main's handlers and mask were reset when this process began (main.c). */
	if (inv->cwd_fd >= 0 ? fchdir(inv->cwd_fd) < 0 : chdir(so->cwd) < 0)
		fail(125, "box-shell: cannot enter %s: %s\n", so->cwd, strerror(errno));
	if (inv->cwd_fd >= 0)
		close(inv->cwd_fd);
	/* The kernel's name of the cwd holds no link, no "." or "..": canonical as it is. */
	char buf[PATH_MAX];
	char *cwd = getcwd(buf, sizeof buf) && buf[0] == '/' ? xstrdup(buf) : NULL;
	if (!cwd)
		cwd = xstrdup(so->cwd);

	struct sh_decider *d = inv->decider;
	int r = inv->decider_err;
	if (!d && r == 0)
		r = sh_decider_policyd_new(-1, inv->ctl_fd, init->home, &d);
	if (r < 0)
		fail(125, "box-shell: cannot reach box-policyd: %s\n", strerror(-r));

	struct sh_shell *sh = shell_new(so, d, cwd, inv->root_fd >= 0 ? inv->root_fd : root_open());
	sh->exiting_fd = inv->ctl_fd;
	sh->exiting = tell_main_exiting;
	sh->host_run = shd_host_run;
	sh->host_check = shd_host_check;
	sh->host_ctx = shd_host_new(inv->ctl_fd);
	/* SHLVL, and a login shell's profile: read in the box's view and decided like a `.` */
	sh_startup(sh, so->login && !so->noprofile);
	if (sh->jump == J_EXIT) /* the profile's own `exit` */
		sh_exit(sh, sh->jump_n);

	char *text = NULL;
	size_t len = 0;
	const char *script = NULL;
	switch (so->mode) {
	case BOX__SHELL_MODE__SHELL_MODE_COMMAND:
		text = xstrdup(so->command ? so->command : "");
		len = strlen(text);
		break;
	case BOX__SHELL_MODE__SHELL_MODE_SCRIPT: {
		int err = 0;
		script = so->script;
		if (!script || read_script(sh, script, &text, &len, &err) < 0) {
			char msg[PATH_MAX + 64];
			(void)snprintf(msg, sizeof(msg), "%s: %s", script ? script : "?",
				       strerror(err ? err : EINVAL));
			fail(err == ENOENT ? 127 : 126, "box-shell: %s\n", msg);
		}
		break;
	}
	case BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE:
		interactive(sh);
	case BOX__SHELL_MODE__SHELL_MODE_STDIN:
	case _BOX__SHELL_MODE_IS_INT_SIZE:
	default:
		r = sh_read_script_fd(0, &text, &len);
		if (r == -EFBIG)
			fail(2, "box-shell: script too large\n");
		if (r < 0)
			fail(2, "box-shell: standard input: %s\n", strerror(-r));
		break;
	}
	int st = exec_text(sh, text, len, 1, script);
	free(text);
	if (st == -2)
		st = 2;
	if (sh->jump == J_EXIT)
		st = sh->jump_n;
	sh_exit(sh, st);
}

/*
 * What a spare maps ahead (shd_prefault_scan, in main at start-up; the
 * mappings do not move): the code and read-only data of box-shell, libc and
 * libprotobuf-c, and their small writable data. A forked process has none of
 * its parent's file pages in its page tables: each page of code it runs
 * first is a fault, and a write to a page it shares with its parent is a
 * copy-on-write fault. MADV_POPULATE_READ/WRITE take them in one call each,
 * while the spare waits for a session, not while an alias does.
 */
#define PREFAULT_MAX 16
#define PREFAULT_WRITE_MAX (64 * 1024) /* a writable mapping larger than this: left alone */
static struct {
	uintptr_t lo, hi;
	int advice;
} prefault[PREFAULT_MAX];
static size_t n_prefault;

void
shd_prefault_scan(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[PATH_MAX + 128];
	while (n_prefault < PREFAULT_MAX && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[8];
		int path_at = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perm, &path_at) != 3 ||
		    path_at == 0)
			continue;
		const char *path = line + path_at;
		bool ours = strstr(path, "/box-shell\n") || strstr(path, "/libc.so") ||
			    strstr(path, "/libprotobuf-c.so");
		if (!ours || perm[3] != 'p')
			continue;
		int advice = -1;
		if (perm[0] == 'r' && perm[1] == '-')
			advice = MADV_POPULATE_READ;
		else if (perm[0] == 'r' && perm[1] == 'w' && hi - lo <= PREFAULT_WRITE_MAX)
			advice = MADV_POPULATE_WRITE;
		if (advice >= 0)
			prefault[n_prefault++] = (typeof(prefault[0])){ lo, hi, advice };
	}
	fclose(f);
}

/* The spare's pages, ahead: the mappings above and the stack a session's frames reach. */
static __attribute__((noinline)) void
prefault_now(void)
{
	for (size_t i = 0; i < n_prefault; i++)
		(void)madvise((void *)prefault[i].lo, prefault[i].hi - prefault[i].lo,
			      prefault[i].advice);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)4095;
	(void)madvise((void *)(sp - 32 * 1024), 32 * 1024 + 4096, MADV_POPULATE_WRITE);
	/* What every session touches first otherwise: the vDSO's clock page, stdio's list. */
	(void)time(NULL);
	(void)fflush(NULL);
}

/*
 * The spare's rehearsal, while it waits: a ShellOpen of `bash -c true`
 * with a typical agent environment goes the way main's will (packed, sent
 * with three fds on a socketpair, received and validated by the session
 * table), and its shell runs the command with a rehearsal decider of its
 * own (daemon.h: the same code as the real one's, permits from a channel of
 * its own, nothing reaches box-policyd; the real decider is not touched),
 * then both are freed. On this kind of machine (measured: a
 * virtual machine where a new process's first touch of each page costs
 * microseconds even when the page is mapped) a session's first command
 * otherwise takes those faults (the parser, the expander, the builtins, the
 * request's fields, the packing and unpacking, the heap they grow) while
 * an alias waits: about 0.2 ms of bench/shell-box's round trip. Nothing of
 * the rehearsal's shell is left when the session's shell is made.
 */
static void
rehearse(struct sh_decider *d, int root_fd)
{
	static char *env[] = {
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/agent", "USER=agent",
		"LOGNAME=agent", "SHELL=/bin/bash", "TERM=xterm-256color", "LANG=C.UTF-8",
		"PWD=/home/agent", "SHLVL=1", "COLUMNS=120", "LINES=40", "EDITOR=vi",
		"PAGER=cat", "GIT_PAGER=cat", "TMPDIR=/tmp", "NO_COLOR=1",
	};
	Box__ShellOpen so = BOX__SHELL_OPEN__INIT;
	so.mode = BOX__SHELL_MODE__SHELL_MODE_COMMAND;
	so.command = "true";
	so.arg0 = "bash";
	so.invoked_as = "bash";
	so.env = env;
	so.n_env = sizeof(env) / sizeof(env[0]);
	so.cwd = "/";

	int sv[2];
	struct sh_decider *rd = NULL;
	if (!d || box_ipc_socketpair(sv, false) < 0)
		return;
	int fds[3] = { 0, 1, 2 };
	struct box_ipc_chan *chan =
	    box_ipc_chan_new(sv[1], &box_proto_session, BOX_SESSION_ROLE_ALIAS);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (chan &&
	    box_ipc_send(sv[0], &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_OPEN, 0, &so.base,
			 fds, 3) == 0 &&
	    box_ipc_recv_wait(chan, &m, 100) == 1 && m.type == BOX__MSG_TYPE__MSG_SHELL_OPEN &&
	    sh_decider_rehearsal_new(d, &rd) == 0) {
		const Box__ShellOpen *got = (const Box__ShellOpen *)m.msg;
		struct sh_shell *sh = shell_new(got, rd, xstrdup("/"), root_fd);
		(void)exec_text(sh, got->command, strlen(got->command), 1, NULL);
		sh->root_fd = -1; /* the spare's, for the session */
		sh_free(sh);
		sh_current = NULL;
	}
	sh_decider_policyd_free(rd);
	box_ipc_msg_done(&m);
	box_ipc_chan_free(chan);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A knock at the door: accept the connection (non-blocking: main, or
 * nobody, may have taken it first). Its ShellOpen comes at once (the
 * alias's next system call after connect): read and validated by the
 * session table, its cwd opened (*cwd; one it cannot enter is denied, as
 * main would), then the connection and the alias's stderr go to main
 * (SHD_CTL_TAKEN), and 0 with *m the ShellOpen and its fds: this process
 * is that session's from now on. Nothing within SHD_KNOCK_MS: the
 * connection goes to main as it is (SHD_CTL_KNOCK), which waits for it,
 * so a stalled alias does not hold the door (one stalled in the middle of
 * its ShellOpen: SHD_DOOR_READ_MS at most, then closed). Garbage, or a
 * hang-up: the connection is closed, as main would close it. -1: wait on.
 */
static int
door_answer(int door, int ctl_fd, struct box_ipc_msg *m, int *cwd)
{
	int c = accept4(door, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return -1;
	struct pollfd pf = { c, POLLIN, 0 };
	int n;
	while ((n = poll(&pf, 1, SHD_KNOCK_MS)) < 0 && errno == EINTR)
		;
	if (n == 0) {
		if (shd_ctl_send_fd(ctl_fd, SHD_CTL_KNOCK, c) < 0)
			_exit(125); /* main is gone */
		close(c);
		return -1;
	}
	struct box_ipc_chan *chan = box_ipc_chan_new(c, &box_proto_session, BOX_SESSION_ROLE_ALIAS);
	int r = chan ? box_ipc_recv_wait(chan, m, SHD_DOOR_READ_MS) : -ENOMEM;
	box_ipc_chan_free(chan);
	if (r != 1 || m->type != BOX__MSG_TYPE__MSG_SHELL_OPEN || m->n_fds != 3) {
		box_ipc_msg_done(m);
		close(c);
		return -1;
	}
	/* A cwd it cannot enter: ShellDenied, as main says it; the spare stays at the door. */
	const Box__ShellOpen *so = (const Box__ShellOpen *)m->msg;
	int cwd_fd = open(so->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0) {
		char why[512];
		(void)snprintf(why, sizeof(why), "box-shell: cannot enter %s: %s", so->cwd,
			       strerror(errno));
		shd_conn_deny(c, why);
		box_ipc_msg_done(m);
		close(c);
		return -1;
	}
	*cwd = fd_dup_cloexec(cwd_fd, SHD_FD_PRIVATE_MIN);
	close(cwd_fd);
	if (shd_ctl_send_fds(ctl_fd, SHD_CTL_TAKEN, c, m->fds[2]) < 0)
		_exit(125); /* main is gone: the alias sees the connection close */
	/* Kept for ShellExit (tell_main_exiting), away from the fds scripts redirect. */
	alias_conn = fd_dup_cloexec(c, SHD_FD_PRIVATE_MIN);
	close(c);
	if (alias_conn >= 0 && pthread_atfork(NULL, NULL, alias_conn_forked) != 0)
		alias_conn = safe_close(alias_conn); /* main says it, as for its own sessions */
	return 0;
}

_Noreturn void
shd_spare_run(int ctl_fd)
{
	struct shd_invocation inv = { .ctl_fd = ctl_fd, .cwd_fd = -1 };
	/* The channel now, while nobody waits: policyd has it before the first request. */
	inv.decider_err = sh_decider_policyd_new(-1, ctl_fd, shd_box.init->home, &inv.decider);
	inv.root_fd = root_open();
	/* The door, away from the fds scripts redirect (daemon.h). */
	int door = fd_dup_cloexec(DAEMON_FD_LISTEN, SHD_FD_PRIVATE_MIN);
	close(DAEMON_FD_LISTEN);
	if (door < 0)
		_exit(125); /* main sees it exit, and answers the door itself */
	prefault_now();
	rehearse(inv.decider, inv.root_fd);

	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	for (;;) {
		/* main never writes to a spare: its socket readable means main is gone. */
		struct pollfd pf[2] = { { door, POLLIN, 0 }, { ctl_fd, POLLIN, 0 } };
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(125);
		}
		if (pf[1].revents)
			_exit(0);
		if ((pf[0].revents & POLLIN) && door_answer(door, ctl_fd, &m, &inv.cwd_fd) == 0)
			break;
	}
	close(door);
	/*
	 * The alias's fds become 0-2 (straight, when none of them landed on
	 * 0-2; else through fd_move_to); its cwd (opened at the door) is
	 * entered in shd_invocation_run.
	 */
	if (m.fds[0] > 2 && m.fds[1] > 2 && m.fds[2] > 2) {
		for (int i = 0; i < 3; i++)
			if (dup2(m.fds[i], i) < 0)
				_exit(125);
	} else {
		int dst[3] = { 0, 1, 2 };
		if (fd_move_to(m.fds, dst, 3) < 0)
			_exit(125);
	}
	for (int i = 0; i < 3; i++)
		if (m.fds[i] > 2)
			close(m.fds[i]);
	m.n_fds = 0;
	inv.open = (const Box__ShellOpen *)m.msg;
	shd_invocation_run(&inv);
}
