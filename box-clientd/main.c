/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-clientd: a root boxd's client child (docs/design.md).
 *
 *   box-clientd [-u UID] [-g GID] [-p CLIENT_PID]
 *
 * A service boxd runs as root and serves every user; since this program
 * exists it parses no byte a client wrote. It takes the client's
 * SO_PEERCRED and checks its PID namespace on the accepted socket itself,
 * then starts one box-clientd per connection (fork+exec, as sshd hands a
 * connection to sshd-session) with fd 4 = the client's connection and fd 3 =
 * its end of a SOCK_SEQPACKET socketpair with boxd (common/daemon_fds.h). main() is
 * the start-up, one named step a line: arguments → fds → privilege drop to
 * UID:GID (default, and what boxd starts it as: box-daemon's ids, else
 * nobody's; never 0) → buffers → seccomp
 * allow-list → (a spare, -w: the client handed over, client_take) → relay → exit.
 *
 * The relay: every packet from the client goes through clientd_forward()
 * (forward.c: decode, validate, pack again) and only the canonical
 * re-encoding reaches boxd; packets from boxd go to the client as they are
 * (boxd's own output), fds with them. A packet the decoder refuses is the
 * end of the connection, as it was when boxd decoded it: the reason is
 * logged (CLIENT_PID names the client) and box-clientd exits
 * CLIENTD_EXIT_REFUSED; boxd sees its channel close and drops the client
 * the same way. When either side closes, what is queued for the other side
 * is passed on (for at most CLIENTD_DRAIN_MS) and box-clientd exits. Each
 * direction's queue is bounded (CLIENTD_QUEUE_MAX): a side that does not
 * read stops being read from, and boxd's own bounded queue drops a client
 * that never reads, as before.
 * A crash here (or the seccomp filter killing us) ends only this
 * connection: the client's socket closes with this process, boxd logs the
 * death once and serves everyone else.
 * Trusts: boxd for the fds and the ids it gives; nothing from the client.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "clientd.h"
#include "daemon_start.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "privdrop.h"

struct packet {
	struct packet *next;
	size_t len;
	unsigned n_fds;
	int fds[BOX_IPC_MAX_FDS];
	uint8_t data[];
};

/* Packets waiting for one side, oldest first. */
struct queue {
	struct packet *head, **tail;
	size_t bytes;
};

static struct {
	struct box_ipc_chan *client_chan;
	struct queue to_boxd, to_client;
	bool client_open, boxd_open;
	long client_pid; /* for log lines only (boxd's SO_PEERCRED) */
	bool spare;      /* -w: fd 4 hands over the client's connection (client_take) */
	uint8_t *buf;    /* one packet: BOX_IPC_MAX + 1, so one byte too many is seen */
	int exit_code;
} S = { .client_open = true, .boxd_open = true, .client_pid = -1 };

/* ---- queues ------------------------------------------------------------ */

static void
packet_free(struct packet *p)
{
	for (unsigned i = 0; i < p->n_fds; i++)
		(void)safe_close(p->fds[i]);
	free(p);
}

static void
queue_drop(struct queue *q)
{
	while (q->head) {
		struct packet *p = q->head;
		q->head = p->next;
		packet_free(p);
	}
	q->tail = &q->head;
	q->bytes = 0;
}

static void
queue_push(struct queue *q, struct packet *p)
{
	p->next = NULL;
	*q->tail = p;
	q->tail = &p->next;
	q->bytes += p->len;
}

static struct packet *
packet_new(const uint8_t *data, size_t len)
{
	struct packet *p = malloc(sizeof(*p) + len);
	if (!p)
		return NULL;
	p->next = NULL;
	p->len = len;
	p->n_fds = 0;
	memcpy(p->data, data, len);
	return p;
}

/* box_ipc_emit_fn: one packet of the canonical re-encoding joins the queue to boxd. */
static int
emit_to_boxd(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct queue *q = userdata;
	struct packet *p = packet_new(pkt, len);
	if (!p)
		return -ENOMEM;
	for (unsigned i = 0; i < n_fds; i++) {
		int d = fd_dup_cloexec(fds[i], 3);
		if (d < 0) {
			packet_free(p);
			return d;
		}
		p->fds[p->n_fds++] = d;
	}
	queue_push(q, p);
	return 0;
}

/* Write what the socket takes now. 0 (done or full), or negative errno. */
static int
queue_flush(int fd, struct queue *q)
{
	while (q->head) {
		struct packet *p = q->head;
		int r = box_ipc_send_packet(fd, p->data, p->len, p->fds, p->n_fds, 0);
		if (r == -EAGAIN)
			return 0;
		if (r < 0)
			return r;
		q->head = p->next;
		if (!q->head)
			q->tail = &q->head;
		q->bytes -= p->len;
		packet_free(p);
	}
	return 0;
}

/* ---- one packet in ----------------------------------------------------- */

/*
 * recvmsg one packet into S.buf with the fds that came with it (owned from
 * here, CLOEXEC from birth). Returns its length, 0 at the peer's close,
 * -EAGAIN, or negative errno: -EMSGSIZE for a packet over BOX_IPC_MAX,
 * -EBADMSG for more fds than any message carries or another control message.
 */
static ssize_t
packet_recv(int fd, int fds[static BOX_IPC_MAX_FDS], unsigned *n_fds)
{
	struct iovec iov = { .iov_base = S.buf, .iov_len = BOX_IPC_MAX + 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * BOX_IPC_MAX_FDS)];
	} cm;
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cm.buf,
		.msg_controllen = sizeof(cm.buf),
	};
	bool bad_cmsg = false;

	*n_fds = 0;
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) {
			bad_cmsg = true;
			continue;
		}
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int got;
			memcpy(&got, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (*n_fds < BOX_IPC_MAX_FDS)
				fds[(*n_fds)++] = got;
			else {
				(void)safe_close(got);
				bad_cmsg = true;
			}
		}
	}
	int r = 0;
	if (mh.msg_flags & MSG_TRUNC)
		r = -EMSGSIZE;
	else if (mh.msg_flags & MSG_CTRUNC || bad_cmsg)
		r = -EBADMSG;
	else if (n == 0 && *n_fds > 0)
		r = -EBADMSG; /* SEQPACKET: 0 bytes is the close; no message is empty */
	if (r < 0) {
		for (unsigned i = 0; i < *n_fds; i++)
			(void)safe_close(fds[i]);
		*n_fds = 0;
		return r;
	}
	return n;
}

/* ---- the two sides ----------------------------------------------------- */

/* The client is gone (error 0 or -ECONNRESET) or refused (any other error). */
static void
client_end(int error)
{
	S.client_open = false;
	queue_drop(&S.to_client);
	if (error == 0 || error == -ECONNRESET)
		return;
	/* Logged as boxd logged it when it decoded the client itself. */
	log_info("client pid %ld: %s", S.client_pid, strerror(-error));
	S.exit_code = CLIENTD_EXIT_REFUSED;
}

static void
boxd_end(int error)
{
	S.boxd_open = false;
	queue_drop(&S.to_boxd);
	if (error != 0 && error != -ECONNRESET && error != -EPIPE)
		log_warn_errno(error, "boxd's channel for client pid %ld", S.client_pid);
}

/* One packet from the client: judged, and its canonical re-encoding queued for boxd. */
static void
client_read(void)
{
	int fds[BOX_IPC_MAX_FDS];
	unsigned n_fds;
	ssize_t n = packet_recv(DAEMON_FD_CLIENT, fds, &n_fds);
	if (n == -EAGAIN || n == -EINTR)
		return;
	if (n == 0) {
		/* A close in the middle of a fragmented message is a protocol error, as in ipc.c. */
		client_end(box_ipc_chan_open_streams(S.client_chan) > 0 ? -EPROTO : 0);
		return;
	}
	if (n < 0) {
		client_end(n == -ECONNRESET ? 0 : (int)n);
		return;
	}
	int r = clientd_forward(S.client_chan, S.buf, (size_t)n, fds, n_fds, emit_to_boxd,
				&S.to_boxd);
	if (r < 0)
		client_end(r);
}

/* One packet from boxd: to the client as it is. */
static void
boxd_read(void)
{
	int fds[BOX_IPC_MAX_FDS];
	unsigned n_fds;
	ssize_t n = packet_recv(DAEMON_FD_BOXD, fds, &n_fds);
	if (n == -EAGAIN || n == -EINTR)
		return;
	if (n <= 0) {
		boxd_end((int)n);
		return;
	}
	struct packet *p = packet_new(S.buf, (size_t)n);
	if (!p) {
		for (unsigned i = 0; i < n_fds; i++)
			(void)safe_close(fds[i]);
		boxd_end(-ENOMEM);
		return;
	}
	memcpy(p->fds, fds, n_fds * sizeof(int));
	p->n_fds = n_fds;
	queue_push(&S.to_client, p);
}

/*
 * Step 6: until one side is gone and what was queued for the other has left
 * (or CLIENTD_DRAIN_MS passed).
 */
static void
relay(void)
{
	int64_t deadline = -1;

	for (;;) {
		if (!S.client_open && (!S.boxd_open || !S.to_boxd.head))
			return;
		if (!S.boxd_open && (!S.client_open || !S.to_client.head))
			return;
		if ((!S.client_open || !S.boxd_open) && deadline < 0)
			deadline = box_now_ms() + CLIENTD_DRAIN_MS;

		/* A side with nothing to wait for is left out (fd -1), so a hangup cannot spin us. */
		short cev = 0, bev = 0;
		if (S.client_open && S.boxd_open && S.to_boxd.bytes < CLIENTD_QUEUE_MAX)
			cev |= POLLIN;
		if (S.client_open && S.to_client.head)
			cev |= POLLOUT;
		if (S.boxd_open && S.client_open && S.to_client.bytes < CLIENTD_QUEUE_MAX)
			bev |= POLLIN;
		if (S.boxd_open && S.to_boxd.head)
			bev |= POLLOUT;
		struct pollfd p[2] = {
			{ .fd = cev ? DAEMON_FD_CLIENT : -1, .events = cev },
			{ .fd = bev ? DAEMON_FD_BOXD : -1, .events = bev },
		};
		int wait = -1;
		if (deadline >= 0) {
			int64_t left = deadline - box_now_ms();
			if (left <= 0)
				return;
			wait = (int)left;
		}
		int pr = poll(p, 2, wait);
		if (pr < 0 && errno != EINTR)
			fatal(-errno, "poll");
		if (pr <= 0)
			continue;

		if (p[0].revents & POLLOUT) {
			int r = queue_flush(DAEMON_FD_CLIENT, &S.to_client);
			if (r < 0)
				client_end(0); /* the client went away while we wrote */
		}
		if (p[1].revents & POLLOUT) {
			int r = queue_flush(DAEMON_FD_BOXD, &S.to_boxd);
			if (r < 0)
				boxd_end(r);
		}
		if (S.client_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) && (cev & POLLIN))
			client_read();
		else if (S.client_open && (p[0].revents & (POLLHUP | POLLERR)) && !S.to_client.head)
			client_end(0);
		if (S.boxd_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && (bev & POLLIN))
			boxd_read();
		else if (S.boxd_open && (p[1].revents & (POLLHUP | POLLERR)) && !S.to_boxd.head)
			boxd_end(0);
		/* What was just queued goes out at once when the socket has room. */
		if (S.client_open && S.to_client.head && queue_flush(DAEMON_FD_CLIENT, &S.to_client) < 0)
			client_end(0);
		if (S.boxd_open && S.to_boxd.head) {
			int r = queue_flush(DAEMON_FD_BOXD, &S.to_boxd);
			if (r < 0)
				boxd_end(r);
		}
	}
}

/* ---- start-up ---------------------------------------------------------- */

static noreturn void
usage(void)
{
	fprintf(stderr, "usage: box-clientd [-u UID] [-g GID] [-p CLIENT_PID | -w]  (started by boxd, "
			"fds 3-4)\n");
	exit(2);
}

/*
 * Step 1: -u UID and -g GID (default: the ids it runs as; boxd switches to
 * the unprivileged user before the exec), -p CLIENT_PID, or -w: a spare (fd 4
 * is then the handover socket, client_take below).
 */
static void
args_parse(int argc, char **argv, struct privdrop *pd)
{
	int opt;

	while ((opt = getopt(argc, argv, "u:g:p:w")) >= 0) {
		uint64_t v;
		switch (opt) {
		case 'u':
			if (parse_u64(optarg, (uid_t)-2, &v) < 0)
				usage();
			pd->uid = (uid_t)v;
			break;
		case 'g':
			if (parse_u64(optarg, (gid_t)-2, &v) < 0)
				usage();
			pd->gid = (gid_t)v;
			break;
		case 'p':
			if (parse_u64(optarg, INT32_MAX, &v) < 0)
				usage();
			S.client_pid = (long)v;
			break;
		case 'w':
			S.spare = true;
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	/* The whole point is to parse as someone who owns nothing: never as root. */
	if (pd->uid == 0 || pd->gid == 0)
		fatalx("refusing to run as uid or gid 0 (boxd starts it as box-daemon or nobody)");
}

/* Step 2: fd 3 boxd, fd 4 the client; both SOCK_SEQPACKET, CLOEXEC, non-blocking. */
static void
fds_take(void)
{
	static const struct daemon_fd_want want[] = {
		{ DAEMON_FD_BOXD, DAEMON_FD_CHANNEL, "boxd's channel, a SOCK_SEQPACKET socket" },
		{ DAEMON_FD_CLIENT, DAEMON_FD_CHANNEL,
		  "the client's connection, a SOCK_SEQPACKET socket" },
	};
	/* Writes to a closed peer are -EPIPE (MSG_NOSIGNAL everywhere; SIGPIPE ignored too). */
	size_t bad = 0;
	int r = daemon_fds_take(want, 2, NULL, &bad);
	if (r < 0)
		fatal(r, "fd %d is not %s (started by boxd)", want[bad].fd, want[bad].what);
	for (size_t i = 0; i < 2; i++)
		if ((r = fd_set_nonblock(want[i].fd, true)) < 0)
			fatal(r, "fd %d", want[i].fd);
}

/* Step 3: ids, then capabilities and no_new_privs (common/privdrop.c). */
static void
privileges_drop(const struct privdrop *pd)
{
	const char *failed = NULL;
	int r = daemon_lock_down(pd->uid, pd->gid, &failed);
	if (r < 0)
		fatal(r, "Cannot drop privileges to %u:%u (%s)", (unsigned)pd->uid,
		      (unsigned)pd->gid, failed ? failed : "?");
}

/* Step 4: what needs memory or a system call the allow-list refuses, done before it. */
static void
buffers_prepare(void)
{
	S.buf = malloc(BOX_IPC_MAX + 1);
	S.client_chan = clientd_chan_new(DAEMON_FD_CLIENT);
	if (!S.buf || !S.client_chan)
		fatal(-ENOMEM, "Cannot allocate the client channel");
	S.to_boxd.tail = &S.to_boxd.head;
	S.to_client.tail = &S.to_client.head;
	(void)box_now_ms(); /* the vDSO clock is mapped now, not under the filter */
}

/*
 * Step 6 of a spare (-w, spawned ahead by a service boxd: boxd/clientd.c): fd 4
 * is a SOCK_SEQPACKET socket on which boxd hands over one client's connection
 * when it comes: one packet of 4 bytes, the client's pid (for log lines), with
 * its fd. That fd becomes fd 4 in place of the handover socket, and the relay
 * starts as for a box-clientd spawned with it. Under the filter already (recvmsg,
 * close, fcntl, fstat): the spare did everything else before a client came.
 * Anything else on fd 4 ends the spare (exit 1); its close (boxd's end) exits 0.
 */
static void
client_take(void)
{
	struct pollfd p = { .fd = DAEMON_FD_CLIENT, .events = POLLIN };
	int fds[BOX_IPC_MAX_FDS];
	unsigned n_fds = 0;
	int32_t pid;
	struct stat st;
	ssize_t n;

	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			fatal(-errno, "Cannot wait for a client on fd %d", DAEMON_FD_CLIENT);
		n = packet_recv(DAEMON_FD_CLIENT, fds, &n_fds);
		if (n != -EAGAIN && n != -EINTR)
			break;
	}
	if (n == 0)
		exit(0); /* boxd ended before a client came */
	if (n < 0)
		fatal((int)n, "No client handed over on fd %d", DAEMON_FD_CLIENT);
	if (n != (ssize_t)sizeof(pid) || n_fds != 1 || fstat(fds[0], &st) < 0 ||
	    !S_ISSOCK(st.st_mode))
		fatalx("fd %d: a handover of %zd bytes and %u fds, not a client's pid and socket",
		       DAEMON_FD_CLIENT, n, n_fds);
	memcpy(&pid, S.buf, sizeof(pid));
	S.client_pid = pid;
	/* The connection takes fd 4's number: the lowest free from 4 once the handover is closed. */
	close(DAEMON_FD_CLIENT);
	int fd = fcntl(fds[0], F_DUPFD_CLOEXEC, DAEMON_FD_CLIENT);
	if (fd != DAEMON_FD_CLIENT)
		fatal(fd < 0 ? -errno : -EBADF, "Cannot put the client's connection at fd %d",
		      DAEMON_FD_CLIENT);
	close(fds[0]);
	int r = fd_set_nonblock(DAEMON_FD_CLIENT, true);
	if (r < 0)
		fatal(r, "fd %d", DAEMON_FD_CLIENT);
}

/* Step 5: from here on nothing but the allow-list. */
static void
seccomp_enter(void)
{
	int r = clientd_seccomp();
	if (r < 0)
		fatal(r, "Cannot install the seccomp filter");
}

int
main(int argc, char **argv)
{
	struct privdrop pd = { .uid = getuid(), .gid = getgid() };

	log_init("box-clientd", 1);
	args_parse(argc, argv, &pd);
	fds_take();
	privileges_drop(&pd);
	buffers_prepare();
	seccomp_enter();
	if (S.spare) {
		client_take();
		daemon_spare_taken(argc, argv);
	}
	relay();
	/* Step 7: exit; the kernel closes both sockets. */
	queue_drop(&S.to_boxd);
	queue_drop(&S.to_client);
	box_ipc_chan_free(S.client_chan);
	free(S.buf);
	return S.exit_code;
}
