/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — connecting to boxd, starting an embedded one, and one
 * request/reply exchange (see client.h).
 * Trusts: nothing boxd sends before box_ipc_decode() validated it; its own
 * executable's directory and the SBINDIR it was built for (box_paths.h) for finding boxd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "box_paths.h"
#include "cleanup.h"
#include "client.h"
#include "fdutil.h"
#include "path.h"
#include "spawn.h"
#include "proto/validate.h"

const char *
client_service_path(void)
{
	const char *p = getenv("BOX_SOCKET");
	return p && *p ? p : "/run/box/boxd.sock";
}

int
client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/*
 * boxd next to boxctl (a build tree), then ../sbin (an install's layout), then the
 * SBINDIR this boxctl was built for (box_paths.h). NULL: none, and `where` says
 * what was tried.
 */
static char *
find_boxd(char *where, size_t size)
{
	char self[PATH_MAX];
	char *cands[3] = { NULL, NULL, path_join(BOX_SBINDIR, "boxd") };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *dir = NULL, *parent = NULL;
		if (path_dirname(self, &dir) == 0) {
			cands[0] = path_join(dir, "boxd");
			if (path_dirname(dir, &parent) == 0) {
				char *sbin = path_join(parent, "sbin");
				cands[1] = sbin ? path_join(sbin, "boxd") : NULL;
				free(sbin);
				free(parent);
			}
			free(dir);
		}
	}
	char *found = NULL;
	size_t len = 0;
	where[0] = '\0';
	for (int i = 0; i < 3; i++) {
		if (!cands[i])
			continue;
		if (!found && access(cands[i], X_OK) == 0) {
			found = TAKE_PTR(cands[i]);
			continue;
		}
		if (len < size)
			len += (size_t)snprintf(where + len, size - len, "%s%s", len ? ", " : "",
						cands[i]);
		free(cands[i]);
	}
	return found;
}

/* In the child before exec: its own session, so terminal signals reach boxctl, which forwards them. */
static int
embedded_setup(void *userdata)
{
	return setsid() < 0 ? -errno : 0;
}

int
client_start_embedded(int *fdp, pid_t *pidp, char *where, size_t size)
{
	_cleanup_free_ char *boxd = find_boxd(where, size);
	_cleanup_close_ int null = -1;
	int sv[2];

	if (!boxd)
		return -ENOENT;
	snprintf(where, size, "%s", boxd);
	null = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (null < 0)
		return -errno;
	int r = box_ipc_socketpair(sv, false);
	if (r < 0)
		return r;
	int fds[4] = { null, null, STDERR_FILENO, sv[1] };
	char *argv[] = { (char *)"boxd", (char *)"--embedded", NULL };
	struct spawn_req req = { .path = boxd, .argv = argv, .envp = environ, .fds = fds,
				 .n_fds = 4, .setup = embedded_setup };
	r = spawn_process(&req, pidp);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	*fdp = sv[0];
	return 0;
}

int
client_runtime_base(char **ret)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	char *p = NULL;
	struct stat st;

	if (x && x[0] == '/' && path_is_clean_absolute(x) && strlen(x) < 200)
		p = path_join(x, "box");
	else if (geteuid() == 0)
		p = strdup("/run/box");
	else if (asprintf(&p, "/tmp/box-%u", (unsigned)geteuid()) < 0)
		p = NULL;
	if (!p)
		return -ENOMEM;
	if (lstat(p, &st) < 0) {
		int r = -errno;
		free(p);
		return r;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		free(p);
		return -EPERM;
	}
	*ret = p;
	return 0;
}

int
client_embedded_sockets(char ***ret)
{
	_cleanup_free_ char *base = NULL;
	char **v = calloc(1, sizeof(char *));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	*ret = v;
	if (client_runtime_base(&base) < 0)
		return 0;
	DIR *d = opendir(base);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 4096) {
		if (!box_valid_box_id(de->d_name))
			continue;
		char *p = NULL;
		if (asprintf(&p, "%s/%s/boxd.sock", base, de->d_name) < 0)
			break;
		struct stat st;
		if (lstat(p, &st) < 0 || !S_ISSOCK(st.st_mode)) {
			free(p);
			continue;
		}
		char **nv = realloc(v, (n + 2) * sizeof(char *));
		if (!nv) {
			free(p);
			break;
		}
		v = nv;
		v[n++] = p;
		v[n] = NULL;
	}
	closedir(d);
	*ret = v;
	return 0;
}

int
client_call(int fd, uint32_t type, const ProtobufCMessage *msg, uint32_t reply_type,
	    struct box_ipc_msg *reply, char **err_msg, int timeout_ms)
{
	static uint64_t next_id = 1;
	uint64_t rid = next_id++;
	int r = box_ipc_send(fd, &box_proto_client, type, rid, msg, NULL, 0);
	if (r < 0)
		return r;
	struct box_ipc_chan *c = box_ipc_chan_new(fd, &box_proto_client, BOX_CLIENT_ROLE_BOXD);
	if (!c)
		return -ENOMEM;
	uint32_t allowed[2] = { reply_type, BOX__MSG_TYPE__MSG_ERROR_REPLY };
	r = box_ipc_chan_allow(c, allowed, 2);
	if (r >= 0)
		r = box_ipc_recv_wait(c, reply, timeout_ms);
	box_ipc_chan_free(c);
	if (r < 0)
		return r;
	if (reply->type == BOX__MSG_TYPE__MSG_ERROR_REPLY) {
		const Box__ErrorReply *e = (const Box__ErrorReply *)reply->msg;
		if (err_msg)
			*err_msg = strdup(e->message);
		box_ipc_msg_done(reply);
		return -EREMOTEIO;
	}
	return 0;
}

const char *
client_box_operand(int argc, char **argv, const char *cmd)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: boxctl %s NAME|ID\n", cmd);
		return NULL;
	}
	if (!box_valid_name(argv[1]) && !box_valid_box_id(argv[1])) {
		fprintf(stderr, "boxctl: error: '%s' is not a box name or id\n", argv[1]);
		return NULL;
	}
	return argv[1];
}
