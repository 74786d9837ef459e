/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-sh, the standalone shell:
 *
 *   box-sh --policy FILE [--home DIR] [--decisions OUT.jsonl]
 *          [--command-timeout DUR] [-euxC] [-o OPT]
 *          -c 'CMD' [ARG0 ARGS...] | -s [ARGS...] | SCRIPT [ARGS...]
 *
 * Every command and file operation is decided in process (decide_local.h:
 * libboxpolicy, temporal rules included), one decisions.jsonl line each with
 * --decisions. A permitted host program runs as a plain child process:
 * standalone mode has NO sandbox. --command-timeout bounds the whole run:
 * SIGTERM to the shell's process group, SIGKILL 2 s later, status 124.
 *
 * Trusts: the operator's command line and policy file; nothing in the
 * script (docs/box-sh.1.md lists the caps).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decide_local.h"
#include "host.h"
#include "sh.h"

/* box-sh's host (libshell/host.h): its own commands; every permitted host program runs. */
static const struct sh_host_ops box_sh_host = {
	.commands = sh_own_commands,
};

extern char **environ;
long sh_parse_duration(const char *s);
int sh_wait_timeout(pid_t pid, long ms, int *st);
int sh_wait_group(pid_t pgid, long ms);
int sh_set_options(struct sh_shell *sh, int argc, char **argv, int *consumed);
int read_script(struct sh_shell *sh, const char *path, char **out, size_t *len, int *err);

static void
usage(FILE *f)
{
	fputs("Usage: box-sh --policy FILE [--home DIR] [--decisions OUT.jsonl]\n"
	      "              [--command-timeout DUR] [-euxfC] [-o OPTION]\n"
	      "              -c 'CMD' [ARG0 ARGS...] | -s [ARGS...] | SCRIPT [ARGS...]\n"
	      "\n"
	      "box-shell's interpreter, standalone: POSIX sh (as dash) plus the bash features\n"
	      "agents use ([[ ]], arrays, $'...', <<<, pipefail, ...). Each simple command is\n"
	      "decided (shell:exec; shell:spawn for a host program) and each file operation\n"
	      "(fs:*) against the policy, in process; --decisions writes one decisions.jsonl\n"
	      "line per decision.\n"
	      "\n"
	      "Standalone mode has NO sandbox: a permitted host program runs as a plain child\n"
	      "process with your rights. Use it for tests and audits, not for containment.\n"
	      "\n"
	      "  --policy FILE           the policy (Cedar text) to decide against (required)\n"
	      "  --home DIR              the owner's home for ~ spellings (default $HOME)\n"
	      "  --decisions FILE        append each decision as a JSON line\n"
	      "  --command-timeout DUR   stop the run after DUR (N[smhd]): SIGTERM, then\n"
	      "                          SIGKILL 2 s later; status 124\n"
	      "  -c CMD                  run CMD; the next arguments are $0 $1 ...\n"
	      "  -s                      read the script from standard input\n"
	      "  -e -u -x -f -C -o OPT   shell options, as set(1)\n"
	      "\n"
	      "Exit status: the script's; 2 for a syntax error or bad usage; 124 timeout;\n"
	      "126 a refused command; 127 not found. See docs/box-sh.1.md.\n",
	      f);
}

static pid_t timed_child;

static void
forward_signal(int sig)
{
	if (timed_child > 0)
		kill(-timed_child, sig);
}

/*
 * The fds below SH_FD_SCRIPT_MAX the caller gave: the entries of /proc/self/fd (a few
 * system calls, O_PATH fds included), not a fcntl(2) for each of the hundred, which cost
 * `box-sh -c true` a tenth of its start; one by one where /proc is not there.
 */
static void
inherited_fds(struct sh_fdset *set)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		for (int fd = 0; fd < SH_FD_SCRIPT_MAX; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				sh_fdset_put(set, fd, true);
		return;
	}
	int own = dirfd(d);
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && !*end && fd != own &&
		    fd < SH_FD_SCRIPT_MAX)
			sh_fdset_put(set, (int)fd, true);
	}
	closedir(d);
}

int
main(int argc, char **argv)
{
	const char *policy = NULL, *home = NULL, *decisions = NULL, *timeout = NULL;
	const char *cmd = NULL;
	sh_host_set(&box_sh_host);
	bool from_stdin = false, want_cmd = false, login = false, noprofile = false;
	char *optv[64];
	bool optown[64] = {false};
	int optn = 0;
	int i = 1;
	/* The fds the caller gave, before box-sh opens any: the script's as well (fsops.h). */
	struct sh_fdset inherited = {{0}};
	inherited_fds(&inherited);
	for (; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
#define LONGOPT(name)                                                                     \
	(strcmp(a, name) == 0 ? (i + 1 < argc ? (val = argv[++i], 1) : -1)                \
			      : (strncmp(a, name "=", sizeof(name)) == 0 ? (val = a + sizeof(name), 1) : 0))
		int r;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			printf("box-sh %s\n", "0.1.0");
			return 0;
		}
		if ((r = LONGOPT("--policy"))) {
			if (r < 0)
				goto missing;
			policy = val;
			continue;
		}
		if ((r = LONGOPT("--home"))) {
			if (r < 0)
				goto missing;
			home = val;
			continue;
		}
		if ((r = LONGOPT("--decisions"))) {
			if (r < 0)
				goto missing;
			decisions = val;
			continue;
		}
		if ((r = LONGOPT("--command-timeout"))) {
			if (r < 0)
				goto missing;
			timeout = val;
			continue;
		}
#undef LONGOPT
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		/* bash's: a login shell reads a profile (sh_startup), unless --noprofile */
		if (strcmp(a, "--login") == 0) {
			login = true;
			continue;
		}
		if (strcmp(a, "--noprofile") == 0) {
			noprofile = true;
			continue;
		}
		if (strcmp(a, "--norc") == 0) /* box-sh is never interactive: no rc file to skip */
			continue;
		if (strcmp(a, "--posix") == 0) { /* bash's: set -o posix */
			if (optn < 60) {
				optown[optn] = false;
				optv[optn++] = (char *)"-o";
				optown[optn] = false;
				optv[optn++] = (char *)"posix";
			}
			continue;
		}
		if (a[0] == '-' && a[1] == '-') {
			fprintf(stderr, "box-sh: unknown option %s (see --help)\n", a);
			return 2;
		}
		if ((a[0] == '-' || a[0] == '+') && a[1]) {
			/* -c, -s and set(1) letters, possibly grouped (-ec) */
			char letters[64];
			size_t k = 0;
			letters[k++] = a[0];
			bool want_c = false, want_o = false;
			for (const char *p = a + 1; *p && k < 60; p++) {
				if (*p == 'c')
					want_c = true;
				else if (*p == 'l')
					login = true;
				else if (*p == 's')
					from_stdin = true;
				else if (*p == 'i' && a[0] == '+')
					continue; /* not interactive: what box-sh always is */
				else {
					if (*p == 'o')
						want_o = true;
					letters[k++] = *p;
				}
			}
			letters[k] = 0;
			if (k > 1 && optn < 60) {
				optown[optn] = true;
				optv[optn++] = strdup(letters);
				if (want_o) {
					if (i + 1 >= argc)
						goto missing;
					optv[optn++] = argv[++i];
				}
			}
			/* As bash: options may follow -c (`-c -l CMD`); CMD is the first operand. */
			/* -s too: `-s -e ARG` takes -e as an option, as bash */
			if (want_c)
				want_cmd = true;
			continue;
		}
		break;
	}
	if (want_cmd) {
		if (i >= argc) {
			fprintf(stderr, "box-sh: -c: option requires an argument\n");
			return 2;
		}
		cmd = argv[i++];
	}
	if (!policy) {
		fprintf(stderr, "box-sh: --policy FILE is required (see --help)\n");
		return 2;
	}
	long timeout_ms = -1;
	if (timeout) {
		timeout_ms = sh_parse_duration(timeout);
		if (timeout_ms <= 0) {
			fprintf(stderr, "box-sh: --command-timeout: invalid duration '%s'\n", timeout);
			return 2;
		}
	}
	int pfd = open(policy, O_RDONLY | O_CLOEXEC);
	if (pfd < 0) {
		fprintf(stderr, "box-sh: %s: %s\n", policy, strerror(errno));
		return 2;
	}
	char *ptext;
	size_t plen;
	int r = sh_read_script_fd(pfd, &ptext, &plen);
	close(pfd);
	if (r < 0) {
		fprintf(stderr, "box-sh: %s: %s\n", policy, strerror(-r));
		return 2;
	}
	int dfd = -1;
	if (decisions) {
		dfd = open(decisions, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (dfd < 0) {
			fprintf(stderr, "box-sh: %s: %s\n", decisions, strerror(errno));
			return 2;
		}
		int hi = fcntl(dfd, F_DUPFD_CLOEXEC, 100);
		if (hi >= 0) {
			close(dfd);
			dfd = hi;
		}
	}
	struct sh_decider *d = NULL;
	char why[512] = "";
	r = sh_decider_local_new(ptext, plen, policy, home, dfd, &d, why, sizeof why);
	free(ptext);
	if (r < 0) {
		fprintf(stderr, "box-sh: %s: %s\n", policy, why[0] ? why : strerror(-r));
		return 2;
	}

	/* The script: -c, -s (stdin) or a file. */
	char *text = NULL;
	size_t len = 0;
	const char *arg0 = "box-sh";
	const char *script = NULL;
	if (cmd) {
		text = strdup(cmd);
		len = strlen(cmd);
		if (i < argc)
			arg0 = argv[i++];
	} else if (!from_stdin && i < argc) {
		script = argv[i++];
		arg0 = script;
	} else {
		from_stdin = true;
	}
	if (timeout_ms > 0) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "box-sh: fork: %s\n", strerror(errno));
			return 125;
		}
		if (pid > 0) {
			/* the parent only waits: what the child runs is the child's */
			free(text);
			for (int k = 0; k < optn; k++)
				if (optown[k])
					free(optv[k]);
			sh_decider_local_free(d);
			timed_child = pid;
			setpgid(pid, pid);
			signal(SIGTERM, forward_signal);
			signal(SIGINT, forward_signal);
			signal(SIGHUP, forward_signal);
			int st;
			if (sh_wait_timeout(pid, timeout_ms, &st))
				return st;
			kill(-pid, SIGTERM);
			if (!sh_wait_timeout(pid, 2000, &st)) {
				kill(-pid, SIGKILL);
				sh_wait_timeout(pid, -1, &st);
			} else {
				/* the rest of the group gets the SIGTERM's 2 s too (a pipeline
				 * stage writes its buffered decision lines as it dies) */
				sh_wait_group(pid, 2000);
			}
			/* stragglers of the group */
			kill(-pid, SIGKILL);
			fprintf(stderr, "box-shell: command timed out after %s\n", timeout);
			return 124;
		}
		setpgid(0, 0);
	}
	struct sh_shell *sh = sh_new(d, environ, arg0, argc - i, argv + i);
	sh->login_shell = login || argv[0][0] == '-';
	/* Run as sh or dash (a link, or argv[0] set): dash's dialect, as the alias invoked so. */
	const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	self += *self == '-';
	sh->expand_aliases = sh->dash_errors = strcmp(self, "sh") == 0 || strcmp(self, "dash") == 0;
	for (int fd = 3; fd < SH_FD_SCRIPT_MAX; fd++)
		if (sh_fdset_has(&inherited, fd))
			sh_fdset_put(&sh->script_fds, fd, true);
	sh_current = sh;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		int hi = fcntl(root, F_DUPFD_CLOEXEC, 100);
		if (hi >= 0) {
			close(root);
			root = hi;
		}
	}
	sh->root_fd = root;
	sh->command_string = cmd != NULL; /* box-sh is bash: 127 for -c's fatal unset */
	char cwdbuf[PATH_MAX];
	if (getcwd(cwdbuf, sizeof cwdbuf))
		sh->cwd = realpath(cwdbuf, NULL);
	if (!sh->cwd)
		sh->cwd = strdup("/");
	sh->home = home ? strdup(home) : NULL;
	if (!var_value(sh, "PWD") || strcmp(var_value(sh, "PWD"), sh->cwd) != 0)
		var_set(sh, "PWD", sh->cwd, V_EXPORT);
	sh_update_fs(sh, "box-sh");
	if (optn > 0) {
		int used;
		if (sh_set_options(sh, optn, optv, &used) < 0)
			return 2;
	}
	sh_startup(sh, sh->login_shell && !noprofile);
	if (sh->jump == J_EXIT) /* the profile's own `exit` */
		sh_exit(sh, sh->jump_n);
	if (script) {
		int err;
		if (read_script(sh, script, &text, &len, &err) < 0) {
			fprintf(stderr, "box-shell: %s: %s\n", script, strerror(err));
			return err == ENOENT ? 127 : 126;
		}
	} else if (from_stdin) {
		sh_stdin_note(sh);
		r = sh_read_script_fd(0, &text, &len);
		if (r < 0) {
			if (r == -EFBIG)
				fprintf(stderr, "box-shell: script too large (max %u bytes)\n",
					SH_MAX_SCRIPT);
			else
				fprintf(stderr, "box-shell: standard input: %s\n", strerror(-r));
			return 2;
		}
	}
	if (len > SH_MAX_SCRIPT) {
		fprintf(stderr, "box-shell: script too large (max %u bytes)\n", SH_MAX_SCRIPT);
		return 2;
	}
	int st = from_stdin ? exec_stdin_script(sh, &text, len)
			    : exec_text(sh, text, len, 1, script);
	free(text);
	if (st == -2)
		st = 2;
	if (sh->jump == J_EXIT)
		st = sh->jump_n;
	sh_exit(sh, st);
missing:
	fprintf(stderr, "box-sh: %s: option requires an argument\n", argv[i]);
	return 2;
}
