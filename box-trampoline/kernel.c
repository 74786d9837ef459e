/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernel.c — PID 1 serves the workload's seccomp listener (docs/sandbox.md,
 * "Kernel refusals"). Every sandbox's workload runs under one notifying
 * filter: box's refusing program (seccomp.c) whose refusals return
 * USER_NOTIF, followed, for a supervised program, by the supervised calls'
 * program (supervise.c). For each notification PID 1 runs the refusing
 * program as built (kfilter_run) over the call's seccomp_data: a refusal is
 * answered with exactly its errno — what the workload got before the listener
 * existed — and reported to boxd; anything else is a supervised call
 * (supervise_handle), or, with no supervision, refused with EPERM (it cannot
 * happen: fail closed). Supervised calls that wait together (the listener still
 * readable after one is received) are received together, up to
 * SUPERVISE_BATCH_MAX, and handed over as one lot (supervise.c batches them).
 *
 * Reports (common/kernel_report.h) go on the plan socket, fd 3, which PID 1
 * keeps: the first of a kind (system call, errno, and the rule: the program's
 * returning instruction) at once, its repeats counted and sent every
 * BOX_KERNEL_WINDOW_S seconds; past BOX_KERNEL_KINDS_MAX kinds, one kind
 * "other" counts the rest. libseccomp's probe of SECCOMP_FILTER_FLAG_NEW_LISTENER
 * (no program) is answered but not reported. A report that cannot be sent (boxd's end full) is
 * counted again; a closed end ends reporting, never answering.
 * Trusts: nothing the workload says; its seccomp_data comes from the kernel.
 */
#include <errno.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "kernel.h"
#include "kernel_report.h"
#include "supervise.h"

struct kind {
	int32_t nr;
	int32_t err;
	size_t pc;
	uint32_t pending; /* refused since its last report */
};

static struct {
	int listener, report_fd;
	const struct kprog *refuse;
	bool supervised;
	struct seccomp_notif *req; /* the one being received: one of reqs */
	struct seccomp_notif *reqs[SUPERVISE_BATCH_MAX];
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct kind kinds[BOX_KERNEL_KINDS_MAX + 1]; /* the last: "other" */
	unsigned n_kinds;
	bool other_seen;
	int64_t flush_at; /* monotonic ns of the next window's end; 0: nothing pending */
} K = { .listener = -1, .report_fd = -1 };

int
kernel_start(int listener, int report_fd, const struct kprog *refuse, bool supervised)
{
	struct seccomp_notif_sizes sz;

	K.listener = listener;
	K.report_fd = report_fd;
	K.refuse = refuse;
	K.supervised = supervised;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -errno;
	K.req_size = sz.seccomp_notif > sizeof(*K.req) ? sz.seccomp_notif : sizeof(*K.req);
	K.resp_size = sz.seccomp_notif_resp > sizeof(*K.resp) ? sz.seccomp_notif_resp :
								  sizeof(*K.resp);
	for (size_t i = 0; i < SUPERVISE_BATCH_MAX; i++)
		if (!(K.reqs[i] = calloc(1, K.req_size)))
			return -ENOMEM;
	K.req = K.reqs[0];
	K.resp = calloc(1, K.resp_size);
	return K.resp ? 0 : -ENOMEM;
}

/* Send one report; false when boxd's end is full (the count stays pending). */
static bool
report(const struct kind *k, uint32_t count, bool first)
{
	if (K.report_fd < 0)
		return true;
	struct box_kernel_report r = { .version = BOX_KERNEL_REPORT_VERSION, .nr = k->nr,
				       .err = (uint32_t)k->err, .count = count, .first = first };
	const char *name = k->nr < 0 ? NULL : seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64,
										 k->nr);
	if (k->nr < 0)
		snprintf(r.name, sizeof(r.name), "other");
	else if (name && strlen(name) < sizeof(r.name))
		snprintf(r.name, sizeof(r.name), "%s", name);
	else
		snprintf(r.name, sizeof(r.name), "syscall_%d", k->nr);
	free((void *)name);
	ssize_t n;
	do
		n = send(K.report_fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == ENOBUFS))
		return false;
	if (n < 0)
		K.report_fd = -1; /* boxd is gone: the answers go on, the reports end */
	return true;
}

static void
refused(int32_t nr, int err, size_t pc)
{
	struct kind *k = NULL;
	for (unsigned i = 0; i < K.n_kinds; i++)
		if (K.kinds[i].nr == nr && K.kinds[i].err == err && K.kinds[i].pc == pc) {
			k = &K.kinds[i];
			break;
		}
	bool first = false;
	if (!k && K.n_kinds < BOX_KERNEL_KINDS_MAX) {
		k = &K.kinds[K.n_kinds++];
		*k = (struct kind){ .nr = nr, .err = err, .pc = pc };
		first = true;
	} else if (!k) {
		k = &K.kinds[BOX_KERNEL_KINDS_MAX];
		k->nr = -1;
		k->err = EPERM;
		first = !K.other_seen;
		K.other_seen = true;
	}
	if (first && report(k, 1, true))
		return;
	k->pending++;
	if (!K.flush_at)
		K.flush_at = box_now_ns() + (int64_t)BOX_KERNEL_WINDOW_S * 1000000000;
}

void
kernel_flush(bool all)
{
	if (!K.flush_at || (!all && box_now_ns() < K.flush_at))
		return;
	K.flush_at = 0;
	bool left = false;
	for (unsigned i = 0; i <= BOX_KERNEL_KINDS_MAX; i++) {
		struct kind *k = &K.kinds[i];
		if (i >= K.n_kinds && i < BOX_KERNEL_KINDS_MAX)
			continue;
		if (!k->pending)
			continue;
		if (report(k, k->pending, false))
			k->pending = 0;
		else
			left = true;
	}
	if (left)
		K.flush_at = box_now_ns() + (int64_t)BOX_KERNEL_WINDOW_S * 1000000000;
}

int
kernel_timeout_ms(void)
{
	if (!K.flush_at)
		return -1;
	int64_t d = K.flush_at - box_now_ns();
	return d <= 0 ? 0 : (int)(d / 1000000) + 1;
}

/*
 * One received notification in K.req: a refusal answered (and counted), or, supervised,
 * true (the caller hands it to the supervisor).
 */
static bool
kernel_take(void)
{
	uint32_t action = 0;
	size_t pc = 0;
	int err = 0;
	int r = kfilter_run(K.refuse->f, K.refuse->n, &K.req->data, &action, &pc);
	bool refusal = r == 0 && kfilter_refusal(action, &err);
	if (!refusal && K.supervised)
		return true;
	memset(K.resp, 0, K.resp_size);
	K.resp->id = K.req->id;
	K.resp->error = refusal ? -err : -EPERM; /* no refusal and no supervision: cannot be */
	(void)ioctl(K.listener, SECCOMP_IOCTL_NOTIF_SEND, K.resp);
	/*
	 * seccomp(SET_MODE_FILTER, NEW_LISTENER, NULL): libseccomp's probe of the flag
	 * (it expects EFAULT) in every program that links it — answered, not reported.
	 */
	bool probe = K.req->data.nr == __NR_seccomp && K.req->data.args[2] == 0;
	if (refusal && !probe)
		refused(K.req->data.nr, err, pc);
	return false;
}

/* Another notification is waiting now (poll, no wait). */
static bool
more_waiting(void)
{
	struct pollfd p = { .fd = K.listener, .events = POLLIN };
	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int
kernel_one(void)
{
	struct seccomp_notif *got[SUPERVISE_BATCH_MAX];
	size_t n = 0, seen = 0;
	/*
	 * Supervised calls of threads that wait together are received together (at most
	 * SUPERVISE_BATCH_MAX) and answered as one batch (supervise_handle); refusals are
	 * answered as they come.
	 */
	do {
		K.req = K.reqs[n];
		memset(K.req, 0, K.req_size);
		if (ioctl(K.listener, SECCOMP_IOCTL_NOTIF_RECV, K.req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				break;
			if (n)
				break; /* those received are answered first */
			return -errno;
		}
		if (kernel_take())
			got[n++] = K.req;
		/* refusals are answered at once; a stream of them still ends the lot */
	} while (K.supervised && n < SUPERVISE_BATCH_MAX && ++seen < 2 * SUPERVISE_BATCH_MAX &&
		 more_waiting());
	if (n)
		supervise_handle((const struct seccomp_notif *const *)got, n, K.req_size);
	return 0;
}
