/* SPDX-License-Identifier: Apache-2.0 */
/*
 * swap-race.c — the racing owner of t-teardown-race.sh: swaps a directory
 * entry for a symlink while boxd's teardown walk is at it.
 *
 *   box-test-swap DIR TARGET DELAY_MS
 *
 * In DIR it makes regular files, symlinks to TARGET, and a directory, and
 * reads the order readdir gives (the order boxd's walk will see). It picks a
 * directory D with a non-directory P just before it and a symlink L after
 * it, prints "ready", and waits (inotify) for P to be deleted: boxd's walk
 * then reaches D, whose unlinkat fails, and (BOX_TEST_TEARDOWN_DELAY_MS =
 * DELAY_MS in boxd) pauses. At DELAY_MS/3 it exchanges D and L
 * (renameat2 RENAME_EXCHANGE), so D is now a symlink to TARGET while boxd
 * decides what to do with "the directory" D; prints "swapped". Exit 0 when
 * swapped, 1 otherwise (with the reason on stderr).
 * Trusts: nothing; test code.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define N_NAMES 24

static int
fail(const char *what)
{
	fprintf(stderr, "box-test-swap: %s: %s\n", what, strerror(errno));
	return 1;
}

/* The readdir order of dfd, names only (at most 256). */
static int
order(int dfd, char names[][32], int max)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(names[n++], 32, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: box-test-swap DIR TARGET DELAY_MS\n");
		return 2;
	}
	long delay = strtol(argv[3], NULL, 10);
	int dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return fail(argv[1]);
	char n[64];
	for (int i = 0; i < N_NAMES; i++) {
		snprintf(n, sizeof(n), "f%d", i);
		int fd = openat(dfd, n, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return fail(n);
		close(fd);
		snprintf(n, sizeof(n), "l%d", i);
		if (symlinkat(argv[2], dfd, n) < 0)
			return fail(n);
	}
	static char names[256][32];
	char pred[32] = "", link[32] = "", dir[32] = "";
	for (int k = 0; k < 200 && !link[0]; k++) {
		snprintf(dir, sizeof(dir), "d%d", k);
		if (mkdirat(dfd, dir, 0700) < 0)
			return fail(dir);
		int cnt = order(dfd, names, 256), at = -1;
		for (int i = 0; i < cnt; i++)
			if (strcmp(names[i], dir) == 0)
				at = i;
		/* Every other entry is a file or symlink: whatever precedes D will be unlinked. */
		if (at > 0)
			for (int i = at + 1; i < cnt && !link[0]; i++)
				if (names[i][0] == 'l')
					snprintf(link, sizeof(link), "%s", names[i]);
		if (link[0])
			snprintf(pred, sizeof(pred), "%s", names[at - 1]);
		else if (unlinkat(dfd, dir, AT_REMOVEDIR) < 0)
			return fail(dir);
	}
	if (!link[0]) {
		fprintf(stderr, "box-test-swap: no usable readdir order\n");
		return 1;
	}
	int in = inotify_init1(IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, argv[1], IN_DELETE) < 0)
		return fail("inotify");
	printf("ready %s %s %s\n", pred, dir, link);
	fflush(stdout);

	for (;;) {
		struct pollfd p = { .fd = in, .events = POLLIN };
		if (poll(&p, 1, 120 * 1000) <= 0) {
			fprintf(stderr, "box-test-swap: %s was never deleted\n", pred);
			return 1;
		}
		char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t len = read(in, buf, sizeof(buf));
		if (len <= 0)
			return fail("read inotify");
		for (char *q = buf; q < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)q;
			if (ev->len && strcmp(ev->name, pred) == 0)
				goto go;
			if (ev->len && strcmp(ev->name, dir) == 0) {
				fprintf(stderr, "box-test-swap: %s went first\n", dir);
				return 1;
			}
			q += sizeof(*ev) + ev->len;
		}
	}
go:;
	struct timespec ts = { delay / 3 / 1000, (delay / 3 % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	if (syscall(SYS_renameat2, dfd, dir, dfd, link, RENAME_EXCHANGE) < 0)
		return fail("renameat2");
	printf("swapped\n");
	return 0;
}
