/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_mcpd.c — a fake box-mcpd for the MCP alias's tests
 * (test/alias/t-alias-mcp.sh): the MCP session protocol's box-mcpd side
 * (box_proto_mcpsession, peer role alias), nothing of a broker.
 *
 *   box-test-fakemcpd SOCKET RECORD_DIR
 *
 * Binds SOCKET (mode 0666, so that an ordinary user's alias can connect) and
 * serves sessions one after another until killed. Before each session the
 * test writes RECORD_DIR/next: one line "RECORD ACTION". The session's
 * McpOpen (the table checks its 3 fds) is written to RECORD_DIR/RECORD — one
 * `key=value` line per field (alias, nargs, arg, cwd, uid, and what fds 0-2
 * are: device:inode and access mode) — then ACTION runs:
 *   echo=N:MESSAGE  read one line from the passed stdin, write "fake-mcpd:
 *                   LINE" to the passed stdout (the frames are the broker's
 *                   to read and write: the alias relays nothing), then
 *                   McpClose{N, MESSAGE} (MESSAGE may be empty)
 *   idle=MS:N       keep the session open MS milliseconds (the alias waits,
 *                   and must sleep while it does), then McpClose{N}
 *   hangup          close without McpClose
 *   bad-reply       send a message the table does not let box-mcpd send (McpOpen)
 * Trusts: nothing the alias sends (decoded by the session table); it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ipc.h"
#include "proto_mcp.h"

static const char *record_dir;

static void
put_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "%s=", key);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\')
			fputs("\\\\", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('\n', f);
}

static void
serve(int conn)
{
	char next[512] = "", path[4200], rec_name[128] = "unnamed", action[384] = "";

	snprintf(path, sizeof path, "%s/next", record_dir);
	_cleanup_fclose_ FILE *nf = fopen(path, "re");
	if (nf && fgets(next, sizeof next, nf))
		(void)sscanf(next, "%127s %383[^\n]", rec_name, action);
	snprintf(path, sizeof path, "%s/%s", record_dir, rec_name);
	_cleanup_fclose_ FILE *rec = fopen(path, "we");
	if (!rec)
		return;
	setvbuf(rec, NULL, _IOLBF, 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan =
		box_ipc_chan_new(conn, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_ALIAS);
	if (!chan)
		return;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = box_ipc_recv_wait(chan, &m, 30000);
	if (r < 0) {
		fprintf(rec, "error=%s\n", strerror(-r));
		return;
	}
	const Box__McpOpen *o = (const Box__McpOpen *)m.msg;
	struct ucred cr;
	if (box_ipc_peercred(conn, &cr) == 0)
		fprintf(rec, "uid=%u\n", (unsigned)cr.uid);
	put_str(rec, "alias", o->alias);
	fprintf(rec, "nargs=%zu\n", o->n_args);
	for (size_t i = 0; i < o->n_args; i++)
		put_str(rec, "arg", o->args[i]);
	put_str(rec, "cwd", o->cwd);
	for (int k = 0; k < 3; k++) {
		struct stat st;
		int fl = fcntl(m.fds[k], F_GETFL);
		if (fstat(m.fds[k], &st) == 0 && fl >= 0)
			fprintf(rec, "fd%d=%llu:%llu\nfd%d_acc=%s\n", k,
				(unsigned long long)st.st_dev, (unsigned long long)st.st_ino, k,
				(fl & O_ACCMODE) == O_RDONLY ? "r"
				: (fl & O_ACCMODE) == O_WRONLY ? "w" : "rw");
		else
			fprintf(rec, "fd%d=bad\n", k);
	}
	if (strncmp(action, "echo=", 5) == 0) {
		char line[1024];
		size_t n = 0;
		while (n + 1 < sizeof line) {
			ssize_t k = read(m.fds[0], line + n, 1);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0 || line[n] == '\n')
				break;
			n++;
		}
		line[n] = '\0';
		dprintf(m.fds[1], "fake-mcpd: %s\n", line);
		Box__McpClose c = BOX__MCP_CLOSE__INIT;
		char *colon = strchr(action + 5, ':');
		c.status = atoi(action + 5);
		c.message = colon && colon[1] ? colon + 1 : NULL;
		r = box_ipc_send(conn, &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_CLOSE, 0,
				 &c.base, NULL, 0);
		if (r < 0)
			fprintf(rec, "send=%s\n", strerror(-r));
	} else if (strncmp(action, "idle=", 5) == 0) {
		long ms = atol(action + 5);
		const char *colon = strchr(action + 5, ':');
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		Box__McpClose c = BOX__MCP_CLOSE__INIT;
		c.status = colon ? atoi(colon + 1) : 0;
		r = box_ipc_send(conn, &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_CLOSE, 0,
				 &c.base, NULL, 0);
		if (r < 0)
			fprintf(rec, "send=%s\n", strerror(-r));
	} else if (strcmp(action, "bad-reply") == 0) {
		Box__McpOpen b = BOX__MCP_OPEN__INIT;
		b.alias = (char *)"x";
		b.cwd = (char *)"/";
		box_ipc_send(conn, &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_OPEN, 0, &b.base,
			     m.fds, 3);
		char c;
		if (read(conn, &c, 1) < 0)
			fprintf(rec, "read=%s\n", strerror(errno));
	} else if (strcmp(action, "hangup") != 0) {
		fprintf(rec, "unknown-action=%s\n", action);
	}
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
		perror("fake-mcpd: socket");
		return 1;
	}
	for (;;) {
		int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			if (errno == EINTR)
				continue;
			perror("fake-mcpd: accept");
			return 1;
		}
		serve(conn);
		close(conn);
	}
}
