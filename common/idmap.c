/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmap.c — a process writes its own user namespace maps (idmap.h): uid ->
 * same uid, gid -> same gid, setgroups = deny. box-trampoline's step 1 (the
 * owner's ids) and boxd's confined daemons (boxd/confine.c: boxd's ids).
 * Library code: negative errno, never logs.
 *
 * The process must be dumpable (a uid change made it non-dumpable, and then
 * /proc/self/{uid_map,gid_map,setgroups} refuse the writes — measured).
 * Trusts: its caller (the ids).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "idmap.h"

static int
write_proc_self(const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/%s", name);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	return (size_t)n == len ? 0 : -EIO;
}

int
idmap_write_self(uid_t uid, gid_t gid)
{
	char line[64];
	int r;

	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	r = write_proc_self("uid_map", line);
	if (r < 0)
		return r;
	r = write_proc_self("setgroups", "deny");
	if (r < 0)
		return r;
	snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return write_proc_self("gid_map", line);
}
