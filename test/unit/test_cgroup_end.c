/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cgroup_end.c — the removal of a box's cgroups at its end
 * (boxd/cgroup.c: cgroup_cleanup) is driven by boxd's event loop: a cgroup
 * still busy is SIGKILLed and tried again on a timer, never in a sleep, so
 * a ticker on the same loop keeps running; box_cgroups_removed() comes once
 * at the end — when the cgroup is gone, or after the 1 s of tries with it
 * left behind (a cgroup that can never be removed: one with a child group).
 * As root, on a host with a cgroup pids controller boxd can use (skipped
 * otherwise); each group is MOUNT/box/j2u<pid> and removed at the end.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxd/boxd.h"
#include "tap.h"

static unsigned removed_calls, ticks;
static pid_t child_pid;
static int child_status;

/* The box.c event cgroup.c reports (box.c itself is not linked). */
void
box_cgroups_removed(struct box *b)
{
	removed_calls++;
	event_base_loopbreak(b->d->base);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Every 5 ms: counts (the loop is not blocked) and reaps the member once it is dead. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	ticks++;
	if (child_pid > 0 && waitpid(child_pid, &child_status, WNOHANG) == child_pid)
		child_pid = 0;
}

/* A box with its pids cgroup made by cgroup_setup, or false (skip) when there is none. */
static bool
box_with_cgroup(struct boxd *d, struct box *b)
{
	const char *why = NULL;

	memset(d, 0, sizeof(*d));
	memset(b, 0, sizeof(*b));
	d->root = true;
	d->base = event_base_new();
	b->d = d;
	b->owner.uid = 65534;
	snprintf(b->id, sizeof(b->id), "j2u%09d", (int)getpid());
	int r = cgroup_setup(d, b, true, 64, false, 0, &why);
	if (r < 0 || b->n_cgroups != 1) {
		for (size_t i = 0; i < b->n_cgroups; i++) {
			(void)rmdir(b->cgroups[i]);
			free(b->cgroups[i]);
		}
		event_base_free(d->base);
		return false;
	}
	return true;
}

/* Run the loop (a 5 ms ticker on it) until box_cgroups_removed(), at most 5 s. */
static uint64_t
run_until_removed(struct boxd *d)
{
	struct timeval tick = { 0, 5000 }, cap = { 5, 0 };
	struct event *t = event_new(d->base, -1, EV_PERSIST, on_tick, NULL);
	uint64_t t0 = now_ms();

	event_add(t, &tick);
	event_base_loopexit(d->base, &cap);
	event_base_dispatch(d->base);
	event_free(t);
	return now_ms() - t0;
}

/* A member that dies when SIGKILLed: the group goes at a later round, from the loop. */
static void
test_busy_group_removed_from_the_loop(void)
{
	struct boxd d;
	struct box b;
	int p[2];
	char c;

	if (geteuid() != 0)
		return (void)SKIP("needs root");
	if (!box_with_cgroup(&d, &b))
		return (void)SKIP("no cgroup pids controller boxd can use");
	char *dir = strdup(b.cgroups[0]);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	child_pid = fork();
	if (child_pid == 0) {
		char path[512], pid[32];
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1); /* the member is in the group */
	close(p[0]);

	removed_calls = ticks = 0;
	uint64_t t0 = now_ms();
	bool waits = cgroup_cleanup(&b);
	uint64_t took = now_ms() - t0;
	CHECK(waits);                   /* busy: the end waits for an event */
	CHECK(took < 50);               /* ... and the call did not sleep */
	CHECK_INT(removed_calls, 0);
	CHECK(access(dir, F_OK) == 0);
	run_until_removed(&d);
	CHECK_INT(removed_calls, 1);
	CHECK(access(dir, F_OK) < 0 && errno == ENOENT);
	CHECK_INT(b.n_cgroups, 0);
	if (child_pid > 0) {
		kill(child_pid, SIGKILL);
		waitpid(child_pid, &child_status, 0);
		child_pid = 0;
	}
	CHECK(WIFSIGNALED(child_status) && WTERMSIG(child_status) == SIGKILL);
	(void)rmdir(dir);
	free(dir);
	event_base_free(d.base);
}

/* A group that never empties (it has a child group): left after 1 s, the loop ran all along. */
static void
test_stuck_group_left_after_the_tries(void)
{
	struct boxd d;
	struct box b;

	if (geteuid() != 0)
		return (void)SKIP("needs root");
	if (!box_with_cgroup(&d, &b))
		return (void)SKIP("no cgroup pids controller boxd can use");
	char *dir = strdup(b.cgroups[0]);
	char sub[600];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	CHECK(mkdir(sub, 0755) == 0);

	removed_calls = ticks = 0;
	CHECK(cgroup_cleanup(&b));
	uint64_t took = run_until_removed(&d);
	CHECK_INT(removed_calls, 1);
	CHECK(took >= BOXD_CGROUP_RMDIR_EVERY_MS * BOXD_CGROUP_RMDIR_TRIES - 100);
	CHECK(took < 4000);
	CHECK(ticks >= 20); /* 5 ms ticks all through the second of tries */
	CHECK_INT(b.n_cgroups, 0);
	CHECK(access(dir, F_OK) == 0); /* left behind, with a warning */
	CHECK(rmdir(sub) == 0);
	CHECK(rmdir(dir) == 0);
	free(dir);
	event_base_free(d.base);
}

int
main(void)
{
	RUN(test_busy_group_removed_from_the_loop);
	RUN(test_stuck_group_left_after_the_tries);
	return tap_done();
}
