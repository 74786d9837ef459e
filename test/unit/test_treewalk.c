/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_treewalk.c — common/treewalk.c: every entry once, no symlink followed,
 * skipped subtrees left out, and the entry bound stops the walk (budget->cut).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "path.h"
#include "tap.h"
#include "treewalk.h"

static char root[64];

struct seen {
	unsigned files, sockets, linked;
	bool saw_outside;
};

static int
count_visit(void *user, const char *path, const struct stat *st)
{
	struct seen *s = user;
	if (S_ISSOCK(st->st_mode))
		s->sockets++;
	else
		s->files++;
	if (st->st_nlink > 1)
		s->linked++;
	if (strstr(path, "/outside/"))
		s->saw_outside = true;
	return 0;
}

static bool
skip_masked(void *user, const char *path, const struct stat *st)
{
	(void)user;
	/* Every entry comes with its lstat: a directory here. */
	return S_ISDIR(st->st_mode) && strcmp(path_basename(path), "masked") == 0;
}

static void
mk(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

static void
setup(void)
{
	char p[256], q[256];
	snprintf(root, sizeof(root), "/tmp/box-test-walk.XXXXXX");
	if (!mkdtemp(root))
		abort();
	const char *dirs[] = { "t", "t/a", "t/a/b", "t/masked", "outside" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		mkdir(p, 0700);
	}
	mk("t/f1");
	mk("t/a/f2");
	mk("t/a/b/f3");
	mk("t/masked/hidden");
	mk("outside/secret");
	snprintf(p, sizeof(p), "%s/t/f1", root);
	snprintf(q, sizeof(q), "%s/t/a/f1-link", root);
	if (link(p, q) < 0)
		abort();
	snprintf(p, sizeof(p), "%s/outside", root);
	snprintf(q, sizeof(q), "%s/t/a/to-outside", root);
	if (symlink(p, q) < 0)
		abort();
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/t/a/b/s.sock", root);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();
	close(s);
}

static void
test_walk_all(void)
{
	char t[128];
	struct box_walk_budget b;
	struct seen s = { 0 };
	snprintf(t, sizeof(t), "%s/t", root);
	box_walk_budget_init(&b, BOX_WALK_ENTRIES_MAX, BOX_WALK_TIME_MS);
	CHECK_INT(box_walk_tree(t, &b, skip_masked, count_visit, &s), 0);
	/* f1 f2 f3 f1-link and the symlink itself (not followed); the socket */
	CHECK_INT(s.files, 5);
	CHECK_INT(s.sockets, 1);
	CHECK_INT(s.linked, 2);
	CHECK(!s.saw_outside);
	CHECK(!b.cut);
}

static void
test_walk_cut(void)
{
	char t[128];
	struct box_walk_budget b;
	struct seen s = { 0 };
	snprintf(t, sizeof(t), "%s/t", root);
	box_walk_budget_init(&b, 3, BOX_WALK_TIME_MS);
	CHECK_INT(box_walk_tree(t, &b, NULL, count_visit, &s), 0);
	CHECK(b.cut);
	CHECK(!b.cut_by_time);
	CHECK(s.files + s.sockets < 3);
	/* a spent budget stops the next walk at once */
	struct seen s2 = { 0 };
	CHECK_INT(box_walk_tree(t, &b, NULL, count_visit, &s2), 0);
	CHECK_INT(s2.files + s2.sockets, 0);
}

static int
stop_visit(void *user, const char *path, const struct stat *st)
{
	(void)user;
	(void)path;
	return S_ISSOCK(st->st_mode) ? -ECANCELED : 0;
}

static void
test_walk_stop_and_file_root(void)
{
	char t[128];
	struct box_walk_budget b;
	struct seen s = { 0 };
	snprintf(t, sizeof(t), "%s/t", root);
	box_walk_budget_init(&b, BOX_WALK_ENTRIES_MAX, BOX_WALK_TIME_MS);
	CHECK_INT(box_walk_tree(t, &b, NULL, stop_visit, NULL), -ECANCELED);
	snprintf(t, sizeof(t), "%s/t/f1", root);
	CHECK_INT(box_walk_tree(t, &b, NULL, count_visit, &s), 0);
	CHECK_INT(s.files, 1);
	CHECK_INT(s.linked, 1);
	CHECK_INT(box_walk_tree("", &b, NULL, count_visit, &s), -ENAMETOOLONG);
}

int
main(void)
{
	setup();
	RUN(test_walk_all);
	RUN(test_walk_cut);
	RUN(test_walk_stop_and_file_root);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
