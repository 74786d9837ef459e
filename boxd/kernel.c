/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernel.c — a sandbox's kernel refusal reports (docs/sandbox.md, "Kernel
 * refusals"): boxd keeps its end of the trampoline's plan socket (fd 3), on
 * which PID 1 sends one struct box_kernel_report a packet
 * (common/kernel_report.h), and appends each to STATE/kernel.jsonl, the file
 * `boxctl log --kernel` reads (docs/boxctl.1.md), and, when a telemetry
 * target includes `kernel`, hands it to box-policyd for export
 * (policyd_kernel_refusal). The watch lives until PID 1's end closes (the
 * sandbox ended), apart from the box: it keeps its own copy of the state
 * dir's fd and the names it writes.
 *
 * The file: opened for each line relative to the state dir's fd (opened as
 * the owner) with O_NOFOLLOW|O_NONBLOCK, a regular file with one link only,
 * the owner's (a file boxd made as root is given to the owner), and written
 * with one write(); past KERNEL_FILE_MAX bytes lines are dropped and counted
 * in boxd's log.
 * At most BOX_KERNEL_KINDS_MAX kinds (sandbox, syscall, errno) per box
 * (kind_admit), besides each PID 1's own cap.
 * Trusts: nothing PID 1 sends (it is the box's, run as the owner): a packet
 * of any other size, or one box_kernel_report_check refuses, ends the watch;
 * at most KERNEL_READS_MAX packets a wakeup.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "boxd.h"
#include "cleanup.h"
#include "jsonl.h"
#include "kernel_report.h"
#include "log.h"

#define KERNEL_FILE "kernel.jsonl"
#define KERNEL_FILE_MAX (16u << 20)
#define KERNEL_READS_MAX 64

struct kernel_watch {
	struct boxd *d;
	int fd;
	struct event *ev;
	int dirfd; /* the box's state dir (a copy), or -1 */
	uid_t uid;
	gid_t gid;
	char id[BOXD_ID_LEN + 1];
	char *box, *sandbox;
	unsigned long dropped;
	bool agent; /* the agent's PID 1 (its end: box_agent_pid1_gone) */
};

static void
watch_free(struct kernel_watch *w)
{
	if (!w)
		return;
	if (w->ev)
		event_free(w->ev);
	safe_close(w->fd);
	safe_close(w->dirfd);
	if (w->dropped)
		log_warn("box %s: %lu kernel refusal lines dropped (%s is over %u bytes)", w->box,
			 w->dropped, KERNEL_FILE, KERNEL_FILE_MAX);
	free(w->box);
	free(w->sandbox);
	free(w);
}

static const char *
errno_name(uint32_t e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	default: return NULL;
	}
}

static void
line_write(struct kernel_watch *w, const struct box_kernel_report *r)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	struct jsonl j = { 0 };
	jsonl_head(&j, now, w->box, w->id, JSONL_UTF8_REPLACE);
	JSONL_LIT(&j, ",\"kernel\":\"refusal\",\"sandbox\":");
	jsonl_cstr(&j, w->sandbox, JSONL_UTF8_REPLACE);
	JSONL_LIT(&j, ",\"syscall\":");
	jsonl_cstr(&j, r->name, JSONL_UTF8_REPLACE);
	JSONL_LIT(&j, ",\"nr\":");
	jsonl_long(&j, r->nr);
	const char *en = errno_name(r->err);
	char ebuf[16];
	if (!en) {
		snprintf(ebuf, sizeof(ebuf), "E%u", r->err);
		en = ebuf;
	}
	JSONL_LIT(&j, ",\"errno\":");
	jsonl_cstr(&j, en, JSONL_UTF8_REPLACE);
	JSONL_LIT(&j, ",\"count\":");
	jsonl_long(&j, r->count);
	if (r->first)
		JSONL_LIT(&j, ",\"first\":true");
	JSONL_LIT(&j, "}\n");
	if (jsonl_end(&j, 0) < 0 || !j.len) {
		jsonl_free(&j);
		return;
	}
	_cleanup_close_ int fd = openat(w->dirfd, KERNEL_FILE,
					O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
						O_NOCTTY | O_CLOEXEC,
					0600);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (st.st_uid != w->uid && st.st_uid != geteuid())) {
		log_warn("box %s: cannot append to %s (not a regular file of the owner's)", w->box,
			 KERNEL_FILE);
		jsonl_free(&j);
		return;
	}
	if (st.st_uid != w->uid && fchown(fd, w->uid, w->gid) < 0) {
		jsonl_free(&j);
		return;
	}
	if ((uint64_t)st.st_size + j.len > KERNEL_FILE_MAX) {
		w->dropped++;
		jsonl_free(&j);
		return;
	}
	if (write(fd, j.buf, j.len) != (ssize_t)j.len)
		log_warn_errno(errno, "box %s: writing %s", w->box, KERNEL_FILE);
	jsonl_free(&j);
}

/*
 * At most BOX_KERNEL_KINDS_MAX kinds (sandbox, syscall, errno) per box: each
 * sandbox's PID 1 caps its own, boxd the box's. A report of a new kind past the cap
 * is dropped (counted; boxd's log says so once).
 */
_Static_assert(sizeof(((struct box *)0)->kernel_kinds) / sizeof(uint64_t) == BOX_KERNEL_KINDS_MAX,
	       "struct box holds BOX_KERNEL_KINDS_MAX kinds");

static bool
kind_admit(struct box *b, const char *sandbox, const struct box_kernel_report *r)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (const char *p = sandbox; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const char *p = r->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ r->err) * 1099511628211ULL;
	for (unsigned i = 0; i < b->n_kernel_kinds; i++)
		if (b->kernel_kinds[i] == h)
			return true;
	if (b->n_kernel_kinds < BOX_KERNEL_KINDS_MAX) {
		b->kernel_kinds[b->n_kernel_kinds++] = h;
		return true;
	}
	if (!b->kernel_over++)
		log_warn("box %s: more than %u kinds of kernel refusal; the reports of further "
			 "kinds are dropped", b->name, BOX_KERNEL_KINDS_MAX);
	return false;
}

static void
on_read(evutil_socket_t fd, short what, void *arg)
{
	struct kernel_watch *w = arg;
	(void)what;
	for (int i = 0; i < KERNEL_READS_MAX; i++) {
		struct box_kernel_report r;
		ssize_t n = recv(fd, &r, sizeof(r), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n == 0 || n < 0) {
			/* PID 1 exited: for the agent's sandbox, its box may end some daemons now. */
			struct box *b = w->agent ? box_find_id(w->d, w->id) : NULL;
			watch_free(w); /* the sandbox ended */
			if (b)
				box_agent_pid1_gone(b);
			return;
		}
		if (n != (ssize_t)sizeof(r) || !box_kernel_report_check(&r)) {
			log_warn("box %s: a malformed kernel refusal report from %s's PID 1 (%zd bytes); "
				 "no more are read", w->box, w->sandbox, n);
			watch_free(w);
			return;
		}
		struct box *b = box_find_id(w->d, w->id);
		if (b && !kind_admit(b, w->sandbox, &r))
			continue;
		if (w->dirfd >= 0)
			line_write(w, &r);
		if (b)
			policyd_kernel_refusal(b, w->sandbox, r.name, r.err, r.count, r.first);
	}
}

struct box *
box_find_id(struct boxd *d, const char *id)
{
	for (struct box *b = d->boxes; b; b = b->next)
		if (b->state != BOX_GONE && strcmp(b->id, id) == 0)
			return b;
	return NULL;
}

static int watch_start(const struct box *b, int fd, const char *sandbox, bool agent);

int
kernel_watch_start(const struct box *b, int fd, const char *sandbox)
{
	return watch_start(b, fd, sandbox, false);
}

int
kernel_watch_agent(const struct box *b, int fd)
{
	return watch_start(b, fd, "agent", true);
}

static int
watch_start(const struct box *b, int fd, const char *sandbox, bool agent)
{
	struct kernel_watch *w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->d = b->d;
	w->fd = fd;
	w->agent = agent;
	w->dirfd = b->rc.state_dirfd >= 0 ? fcntl(b->rc.state_dirfd, F_DUPFD_CLOEXEC, 3) : -1;
	w->uid = b->owner.uid;
	w->gid = b->owner.gid;
	snprintf(w->id, sizeof(w->id), "%s", b->id);
	w->box = strdup(b->name ? b->name : "");
	w->sandbox = strdup(sandbox && *sandbox ? sandbox : "sandbox");
	w->ev = event_new(b->d->base, fd, EV_READ | EV_PERSIST, on_read, w);
	if (!w->box || !w->sandbox || !w->ev || event_add(w->ev, NULL) < 0) {
		watch_free(w);
		return -ENOMEM;
	}
	return 0;
}
