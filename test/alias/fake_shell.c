/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_shell.c — a fake box-shell for the alias's tests (test/alias/t-alias.sh):
 * the session protocol's box-shell side (box_proto_session, peer role alias),
 * nothing of a shell.
 *
 *   box-test-fakeshell SOCKET RECORD_DIR
 *
 * Binds SOCKET (mode 0666, so that an ordinary user's alias can connect) and
 * serves sessions one after another until killed. Each session: ShellOpen
 * (the table checks it carries exactly 3 fds) is written to
 * RECORD_DIR/<FAKE_RECORD> — one `key=value` line per field, values escaped
 * (\\ \n \t \xHH) — with the peer's uid and what the three fds are (device
 * and inode, access mode); then the actions of the session's FAKE_ACTION
 * variable (from the environment ShellOpen carried), separated by commas:
 *   out           write a line to the passed stdout and one to the passed stderr
 *   in            read the passed stdin to EOF (64 KiB at most), record it
 *   ready         write "ready" to the passed stdout (the test waits for it)
 *   wait-signal=N record every ShellSignal until signal N, then ShellExit 128+N
 *   hold          wait until the alias hangs up, record "hangup"
 *   exit=N        ShellExit N and close (the default at the end: exit=0)
 *   deny=MESSAGE  ShellDenied MESSAGE and close
 *   close         close without a word
 *   bad-reply     send a message the table does not let box-shell send (ShellSignal)
 * Trusts: nothing the alias sends (it is decoded by the session table); it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "ipc.h"
#include "proto_shell.h"

static const char *record_dir;

static void
put_escaped(FILE *f, const char *key, const char *s, size_t n)
{
	fprintf(f, "%s=", key);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\')
			fputs("\\\\", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('\n', f);
}

static void
put_str(FILE *f, const char *key, const char *s)
{
	if (s)
		put_escaped(f, key, s, strlen(s));
}

/* FNV-1a, so that a test can compare a long text without holding it twice. */
static unsigned long long
fnv1a(const char *s)
{
	unsigned long long h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static const char *
env_get(const Box__ShellOpen *o, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < o->n_env; i++)
		if (strncmp(o->env[i], name, n) == 0 && o->env[i][n] == '=')
			return o->env[i] + n + 1;
	return NULL;
}

static const char *
mode_name(Box__ShellMode m)
{
	switch (m) {
	case BOX__SHELL_MODE__SHELL_MODE_COMMAND:
		return "command";
	case BOX__SHELL_MODE__SHELL_MODE_STDIN:
		return "stdin";
	case BOX__SHELL_MODE__SHELL_MODE_SCRIPT:
		return "script";
	case BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE:
		return "interactive";
	default:
		return "?";
	}
}

/* The name comes from the alias's environment: letters, digits, '-' only. */
static const char *
record_name(const char *name)
{
	if (!name || !name[0] || strlen(name) > 64 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(name))
		return "unnamed";
	return name;
}

static FILE *
record_open(const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", record_dir, name);
	FILE *f = fopen(path, "we");
	if (f)
		setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

static void
record_open_msg(FILE *f, const char *name, int conn, const Box__ShellOpen *o, const int *fds)
{
	struct ucred cr;
	if (box_ipc_peercred(conn, &cr) == 0)
		fprintf(f, "uid=%u\n", (unsigned)cr.uid);
	fprintf(f, "mode=%s\n", mode_name(o->mode));
	if (o->command) {
		fprintf(f, "command_len=%zu\ncommand_fnv=%016llx\n", strlen(o->command),
			fnv1a(o->command));
		if (strlen(o->command) <= 4096)
			put_str(f, "command", o->command);
		/* The raw text beside the record, for cmp. */
		char path[4200];
		snprintf(path, sizeof path, "%s/%s.command", record_dir, name);
		_cleanup_fclose_ FILE *c = fopen(path, "we");
		if (c)
			fputs(o->command, c);
	}
	put_str(f, "script", o->script);
	put_str(f, "arg0", o->arg0);
	fprintf(f, "nargs=%zu\n", o->n_args);
	for (size_t i = 0; i < o->n_args; i++)
		put_str(f, "arg", o->args[i]);
	put_str(f, "invoked_as", o->invoked_as);
	fprintf(f, "errexit=%d\nnounset=%d\nxtrace=%d\npipefail=%d\nlogin=%d\n", o->errexit,
		o->nounset, o->xtrace, o->pipefail, o->login);
	put_str(f, "cwd", o->cwd);
	fprintf(f, "env_count=%zu\n", o->n_env);
	/* The test's own variables only: the rest is the host's. */
	for (size_t i = 0; i < o->n_env; i++)
		if (strncmp(o->env[i], "T_", 2) == 0)
			put_str(f, "env", o->env[i]);
	for (int k = 0; k < 3; k++) {
		struct stat st;
		int fl = fcntl(fds[k], F_GETFL);
		if (fstat(fds[k], &st) == 0 && fl >= 0)
			fprintf(f, "fd%d=%llu:%llu\nfd%d_acc=%s\n", k, (unsigned long long)st.st_dev,
				(unsigned long long)st.st_ino, k,
				(fl & O_ACCMODE) == O_RDONLY ? "r"
				: (fl & O_ACCMODE) == O_WRONLY ? "w" : "rw");
		else
			fprintf(f, "fd%d=bad\n", k);
	}
}

static int
send_exit(int conn, int status)
{
	Box__ShellExit m = BOX__SHELL_EXIT__INIT;
	m.status = status;
	return box_ipc_send(conn, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_EXIT, 1, &m.base,
			    NULL, 0);
}

/* Run one action; returns 1 when it ended the session. */
static int
act(FILE *rec, int conn, struct box_ipc_chan *chan, const char *a, const int *fds)
{
	if (strcmp(a, "out") == 0) {
		dprintf(fds[1], "fake-shell: to stdout\n");
		dprintf(fds[2], "fake-shell: to stderr\n");
	} else if (strcmp(a, "ready") == 0) {
		dprintf(fds[1], "ready\n");
	} else if (strcmp(a, "in") == 0) {
		char buf[65536];
		size_t n = 0;
		ssize_t r;
		while (n < sizeof buf && (r = read(fds[0], buf + n, sizeof buf - n)) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				break;
			n += (size_t)r;
		}
		put_escaped(rec, "stdin", buf, n);
	} else if (strncmp(a, "wait-signal=", 12) == 0 || strcmp(a, "hold") == 0) {
		int want = a[0] == 'w' ? atoi(a + 12) : 0;
		for (;;) {
			struct box_ipc_msg m = BOX_IPC_MSG_INIT;
			int r = box_ipc_recv_wait(chan, &m, 30000);
			if (r < 0) {
				fprintf(rec, "%s\n", r == -ECONNRESET ? "hangup" : strerror(-r));
				return 1;
			}
			int sig = ((const Box__ShellSignal *)m.msg)->signal;
			box_ipc_msg_done(&m);
			fprintf(rec, "signal=%d\n", sig);
			if (want && sig == want) {
				send_exit(conn, 128 + sig);
				return 1;
			}
		}
	} else if (strncmp(a, "exit=", 5) == 0) {
		int r = send_exit(conn, atoi(a + 5));
		if (r < 0)
			fprintf(rec, "send_exit=%s\n", strerror(-r));
		return 1;
	} else if (strncmp(a, "deny=", 5) == 0) {
		Box__ShellDenied m = BOX__SHELL_DENIED__INIT;
		m.message = (char *)a + 5;
		box_ipc_send(conn, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_DENIED, 1, &m.base,
			     NULL, 0);
		return 1;
	} else if (strcmp(a, "close") == 0) {
		return 1;
	} else if (strcmp(a, "bad-reply") == 0) {
		/* box_ipc_send checks sizes, not senders: the alias's table refuses it. */
		Box__ShellSignal m = BOX__SHELL_SIGNAL__INIT;
		m.signal = SIGINT;
		box_ipc_send(conn, &box_proto_session, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, 1, &m.base, NULL, 0);
		/* Stay until the alias has read it and hung up. */
		char c;
		if (read(conn, &c, 1) < 0)
			fprintf(rec, "read: %s\n", strerror(errno));
		return 1;
	} else {
		fprintf(rec, "unknown-action=%s\n", a);
	}
	return 0;
}

static void
serve(int conn)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan =
		box_ipc_chan_new(conn, &box_proto_session, BOX_SESSION_ROLE_ALIAS);
	if (!chan)
		return;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = box_ipc_recv_wait(chan, &m, 30000);
	if (r < 0) {
		_cleanup_fclose_ FILE *f = record_open("refused");
		if (f)
			fprintf(f, "error=%s\n", strerror(-r));
		return;
	}
	const Box__ShellOpen *o = (const Box__ShellOpen *)m.msg;
	const char *name = record_name(env_get(o, "FAKE_RECORD"));
	_cleanup_fclose_ FILE *rec = record_open(name);
	if (!rec) {
		box_ipc_msg_done(&m);
		return;
	}
	record_open_msg(rec, name, conn, o, m.fds);
	const char *spec = env_get(o, "FAKE_ACTION");
	_cleanup_free_ char *actions = strdup(spec ? spec : "");
	int ended = 0;
	for (char *save = NULL, *a = strtok_r(actions, ",", &save); a && !ended;
	     a = strtok_r(NULL, ",", &save))
		ended = act(rec, conn, chan, a, m.fds);
	if (!ended)
		send_exit(conn, 0);
	box_ipc_msg_done(&m);
	fprintf(rec, "done\n");
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s SOCKET RECORD_DIR\n", argv[0]);
		return 2;
	}
	record_dir = argv[2];
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(argv[1]) >= sizeof sa.sun_path) {
		fprintf(stderr, "socket path too long\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 16) < 0 ||
	    chmod(argv[1], 0666) < 0) {
		perror("fake-shell: socket");
		return 1;
	}
	for (;;) {
		int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			if (errno == EINTR)
				continue;
			perror("fake-shell: accept");
			return 1;
		}
		serve(conn);
		close(conn);
	}
}
