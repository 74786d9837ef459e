/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_host.c — box.ini's checks on the host, as the caller (boxctl runs as
 * the calling user): reading box.ini, the policy, auxiliary files and
 * file:// secrets; paths that must exist, not be symbolic links, be spelled
 * canonically, be executable (not setuid), have one hard link (the bounded
 * tree walk of deny); commands found on PATH and their #! chains; the passwd
 * database; the cgroup controllers and the Landlock ABI (common/hostprobe).
 * config_rules.c reaches all of it through config_host_caller.
 * Race: what is checked here can change before boxd builds the box; boxd
 * and box-recheck check again as the owner (docs/box.ini.5.md).
 * Trusts: the caller's identity (getuid), the passwd database, the kernel's
 * answers; nothing in box.ini or in the files it names.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmdline.h"
#include "config_internal.h"
#include "hostprobe.h"
#include "log.h"
#include "parse.h"
#include "owner.h"
#include "path.h"
#include "recheck_shared.h"
#include "treewalk.h"

/* ------------------------------------------------------------------ */
/* files and paths as the caller                                       */

/*
 * Read a regular file as the caller: no FIFO can block us (O_NONBLOCK), no
 * device is read. `secret`: the last component must not be a symlink and
 * the file must be the caller's and 0600 or stricter. *why is a message.
 */
static int
read_user_file(struct ctx *c, const char *path, size_t max, bool secret, char **data, size_t *len,
	       const char **why)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (secret ? O_NOFOLLOW : 0);
	_cleanup_close_ int fd = open(path, flags);
	struct stat st;

	if (fd < 0) {
		int e = errno;
		*why = e == ELOOP && secret ? "is a symbolic link; name the file itself" :
					      keep(c, xasprintf("cannot be opened: %s", strerror(e)));
		return -e;
	}
	if (fstat(fd, &st) < 0) {
		*why = keep(c, xasprintf("cannot be checked: %s", strerror(errno)));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "is not a regular file";
		return -EINVAL;
	}
	if (secret && st.st_uid != c->caller) {
		*why = keep(c, xasprintf("is owned by uid %u; a secret file must be yours",
					 (unsigned)st.st_uid));
		return -EPERM;
	}
	if (secret && (st.st_mode & 077)) {
		*why = keep(c, xasprintf("has mode %04o; a secret file must be 0600 or stricter",
					 (unsigned)(st.st_mode & 07777)));
		return -EPERM;
	}
	if ((size_t)st.st_size > max) {
		*why = keep(c, xasprintf("is larger than %zu bytes", max));
		return -EFBIG;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				*why = keep(c, xasprintf("is larger than %zu bytes", max));
				return -EFBIG;
			}
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			*why = keep(c, xasprintf("cannot be read: %s", strerror(e)));
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		*why = keep(c, xasprintf("is larger than %zu bytes", max));
		return -EFBIG;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}


/*
 * docs/box.ini.5.md: a deny mask hides a path, not an inode, so a denied file with
 * another name (st_nlink > 1), or a denied directory holding one, is refused.
 * A directory is walked within the load's bound (BOX_WALK_*): what lies
 * beyond a cut walk is not checked here (box-recheck walks it again).
 */
struct link_find {
	char path[BOX_PATH_MAX];
	nlink_t nlink;
};

static int
link_visit(void *user, const char *path, const struct stat *st)
{
	struct link_find *f = user;
	if (st->st_nlink <= 1)
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->nlink = st->st_nlink;
	return -ECANCELED;
}

static bool
deny_links_ok(struct ctx *c, struct raw_section *s, struct raw_value *v, const char *abs,
	      const struct stat *st)
{
	if (!S_ISDIR(st->st_mode)) {
		if (st->st_nlink <= 1)
			return true;
		err_at(c, v->line, s->name, "deny",
		       "%s has %lu hard links: a deny mask hides one name, not the others",
		       q(c, v->text), (unsigned long)st->st_nlink);
		return false;
	}
	struct link_find f = { .nlink = 0 };
	if (box_walk_tree(abs, &c->walk, NULL, link_visit, &f) != -ECANCELED)
		return true;
	err_at(c, v->line, s->name, "deny",
	       "%s holds %s, which has %lu hard links: a deny mask hides one name, not the others",
	       q(c, v->text), shown(c, f.path, v->text), (unsigned long)f.nlink);
	return false;
}


/* Find an executable regular file: absolute, or a bare name on `path_env`. */
static bool
is_exec_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) &&
	       access(p, X_OK) == 0;
}

static char *
search_path(const char *name, const char *path_env)
{
	const char *p = path_env;
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > 0 && p[0] == '/') {
			char *cand = xasprintf("%.*s/%s", (int)n, p, name);
			if (is_exec_file(cand))
				return cand;
			free(cand);
		}
		if (!e)
			break;
		p = e + 1;
	}
	return NULL;
}

/*
 * Follow the #! chain of `file` (canonical): every interpreter becomes an
 * implicit exec grant; for the agent none may be a shell. Returns false
 * after reporting an error.
 */
static bool
follow_shebang(struct ctx *c, struct raw_section *s, unsigned line, const char *file,
	       struct box_command *cmd, const char *path_env, bool agent, int depth)
{
	char buf[SHEBANG_MAX + 1];
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return true; /* unreadable: the kernel decides at exec */
	ssize_t n = read(fd, buf, SHEBANG_MAX);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return true;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	char *p = buf + 2;
	while (is_blank(*p))
		p++;
	char *interp = p;
	while (*p && !is_blank(*p))
		p++;
	if (*p)
		*p++ = '\0';
	while (is_blank(*p))
		p++;
	char *arg = p; /* the rest, one argument for the kernel */
	size_t al = strlen(arg);
	while (al && isspace((unsigned char)arg[al - 1]))
		arg[--al] = '\0';

	if (depth >= SHEBANG_DEPTH) {
		err_at(c, line, s->name, "command", "the #! chain of %s is deeper than %d", q(c, file),
		       SHEBANG_DEPTH);
		return false;
	}
	if (!*interp || interp[0] != '/') {
		err_at(c, line, s->name, "command",
		       "the #! line of %s does not name an interpreter by absolute path", q(c, file));
		return false;
	}
	_cleanup_free_ char *canon = NULL;
	if (path_canonicalize(interp, &canon) < 0 || !is_exec_file(canon)) {
		err_at(c, line, s->name, "command",
		       "the #! interpreter %s of %s is not an executable file", q(c, interp),
		       q(c, file));
		return false;
	}
	if (agent && (is_shell_name(path_basename(interp)) || is_shell_name(path_basename(canon)))) {
		err_at(c, line, s->name, "command", "%s runs %s (#!), which %s", qs(c, file),
		       qs(c, interp), shell_msg);
		return false;
	}
	add_interpreter(cmd, canon);
	if (!follow_shebang(c, s, line, canon, cmd, path_env, agent, depth + 1))
		return false;

	if (strcmp(path_basename(canon), "env") != 0 || !*arg)
		return true;
	/* #!/usr/bin/env [-S] [-opts] [VAR=val...] NAME ... */
	char **words = NULL;
	size_t nw = 0;
	const char *e;
	const char *target = NULL;
	if (cmdline_split(arg, &words, &nw, &e) < 0) {
		cmdline_free(words);
		return true;
	}
	for (size_t i = 0; i < nw; i++) {
		if (words[i][0] == '-' || strchr(words[i], '='))
			continue;
		target = words[i];
		break;
	}
	bool ok = true;
	if (target) {
		_cleanup_free_ char *found =
			strchr(target, '/') ? xstrdup(target) : search_path(target, path_env);
		_cleanup_free_ char *tcanon = NULL;
		if (!found || path_canonicalize(found, &tcanon) < 0 || !is_exec_file(tcanon)) {
			err_at(c, line, s->name, "command",
			       "%s runs %s through env (#!), and it is not found on PATH %s",
			       q(c, file), q(c, target), q(c, path_env));
			ok = false;
		} else if (agent && (is_shell_name(path_basename(target)) ||
				     is_shell_name(path_basename(tcanon)))) {
			err_at(c, line, s->name, "command", "%s runs %s through env (#!), which %s",
			       qs(c, file), qs(c, target), shell_msg);
			ok = false;
		} else {
			add_interpreter(cmd, tcanon);
			ok = follow_shebang(c, s, line, tcanon, cmd, path_env, agent, depth + 1);
		}
	}
	cmdline_free(words);
	return ok;
}


/* The grant's checks on the file system (after config_rules.c's on its spelling). */
static bool
grant_check(struct ctx *c, struct raw_section *s, const char *key, enum box_fs_kind kind,
	    struct raw_value *v, const char *abs, bool *is_dir)
{
	_cleanup_free_ char *canon = NULL;
	struct stat st = { 0 };

	if (lstat(abs, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			err_at(c, v->line, s->name, key, "%s does not exist", q(c, v->text));
		else
			err_at(c, v->line, s->name, key, "%s cannot be checked: %s", q(c, v->text),
			       strerror(errno));
		return false;
	}
	int r = path_canonicalize(abs, &canon);
	if (S_ISLNK(st.st_mode)) {
		if (r == 0)
			err_at(c, v->line, s->name, key,
			       "%s is a symbolic link to %s; name what it points at", q(c, v->text),
			       shown(c, canon, v->text));
		else
			err_at(c, v->line, s->name, key, "%s is a symbolic link that resolves nowhere",
			       q(c, v->text));
		return false;
	}
	if (r < 0) {
		err_at(c, v->line, s->name, key, "%s cannot be resolved: %s", q(c, v->text),
		       strerror(-r));
		return false;
	}
	if (strcmp(canon, abs) != 0) {
		err_at(c, v->line, s->name, key,
		       "%s is not spelled canonically; the canonical spelling is %s", q(c, v->text),
		       shown(c, canon, v->text));
		return false;
	}
	if ((kind == BOX_FS_READ_FILE || kind == BOX_FS_WRITE_FILE) && S_ISDIR(st.st_mode)) {
		err_at(c, v->line, s->name, key,
		       "%s is a directory; %s names one file (a tree belongs in %s)", q(c, v->text),
		       key, kind == BOX_FS_READ_FILE ? "read" : "write");
		return false;
	}
	if (kind == BOX_FS_EXEC && !S_ISDIR(st.st_mode)) {
		if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
			err_at(c, v->line, s->name, key, "%s is not an executable file or a directory",
			       q(c, v->text));
			return false;
		}
		if (st.st_mode & (S_ISUID | S_ISGID)) {
			err_at(c, v->line, s->name, key,
			       "%s is set%s; a setuid or setgid program is never granted exec",
			       q(c, v->text), st.st_mode & S_ISUID ? "uid" : "gid");
			return false;
		}
	}
	if (kind == BOX_FS_DENY && !deny_links_ok(c, s, v, abs, &st))
		return false;
	*is_dir = S_ISDIR(st.st_mode);
	return true;
}

/* Resolve element 0 (W0, ~ already expanded) and follow its #! chain. */
static void
command_resolve(struct ctx *c, struct raw_section *s, struct raw_key *k, struct box_process *p,
		bool agent, const char *w0)
{
	struct box_command *cmd = &p->command;

	/*
	 * The section's own env PATH when it sets one, else the box's default PATH —
	 * never the caller's (a pyenv or asdf shim there is not what the box runs).
	 */
	const char *path_env = DEFAULT_PATH, *which = "the box's default PATH";
	for (size_t i = 0; i < p->env.n; i++)
		if (strcmp(p->env.v[i].name, "PATH") == 0 && p->env.v[i].set) {
			path_env = p->env.v[i].value;
			which = "the section's env PATH";
		}
	char *resolved;
	if (w0[0] == '/') {
		if (!is_exec_file(w0)) {
			struct stat st;
			if (lstat(w0, &st) < 0 && errno == ENOENT)
				err_at(c, k->line, s->name, "command", "%s does not exist", q(c, w0));
			else
				err_at(c, k->line, s->name, "command", "%s is not an executable file",
				       q(c, w0));
			return;
		}
		resolved = xstrdup(w0);
	} else {
		resolved = search_path(w0, path_env);
		if (!resolved) {
			err_at(c, k->line, s->name, "command", "%s is not found on %s %s", q(c, w0),
			       which, q(c, path_env));
			return;
		}
	}
	free(cmd->argv[0]);
	cmd->argv[0] = resolved;
	if (path_canonicalize(resolved, &cmd->program) < 0) {
		err_at(c, k->line, s->name, "command", "%s cannot be resolved: %s", q(c, resolved),
		       strerror(errno));
		return;
	}
	if (agent && (is_shell_name(path_basename(w0)) || is_shell_name(path_basename(resolved)) ||
		      is_shell_name(path_basename(cmd->program)))) {
		err_at(c, k->line, s->name, "command", "%s %s", resolved, shell_msg);
		return;
	}
	(void)follow_shebang(c, s, k->line, cmd->program, cmd, path_env, agent, 0);
}

static const struct passwd *
user_by_uid(struct ctx *c, uid_t uid)
{
	return getpwuid(uid);
}

static const struct passwd *
user_by_name(struct ctx *c, const char *name)
{
	return getpwnam(name);
}

static char *
current_dir(void)
{
	return getcwd(NULL, 0);
}

static int
landlock_abi(void)
{
	int r = hostprobe_landlock_abi();
	return r < 0 ? 0 : r;
}

static bool
is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Could the owner create PATH (mkdir -p): 0, or the errno its nearest existing ancestor gives. */
static int
owner_can_create(const char *path, const struct box_owner *o)
{
	_cleanup_free_ char *anc = xstrdup(path);
	struct stat st;
	while (lstat(anc, &st) < 0) {
		if (errno != ENOENT)
			return errno;
		char *slash = strrchr(anc, '/');
		if (!slash)
			return ENOENT;
		if (slash == anc)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return owner_access(anc, W_OK | X_OK, o->uid, o->gid, o->name);
}

static void
state_dir_check(struct ctx *c, const char *path, unsigned line, const struct box_owner *o)
{
	struct stat st;
	bool exists = stat(path, &st) == 0;
	int create_err = exists ? 0 : owner_can_create(path, o);
	Box__Problem *p = state_dir_problem(line, path, exists ? &st : NULL, create_err,
					    (unsigned)o->uid, o->name);
	if (p)
		err_at(c, line, "box", "state_dir", "%s", p->message);
	problem_free(p);
}

static bool
exists_not_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

const struct config_host config_host_caller = {
	.user_by_uid = user_by_uid,
	.user_by_name = user_by_name,
	.cwd = current_dir,
	.landlock_abi = landlock_abi,
	.canonicalize = path_canonicalize,
	.read_file = read_user_file,
	.grant_check = grant_check,
	.command_resolve = command_resolve,
	.is_dir = is_dir,
	.exists_not_dir = exists_not_dir,
	.cgroups = box_host_cgroups_probe,
	.state_dir_check = state_dir_check,
};

/* ------------------------------------------------------------------ */
/* loading as the caller                                               */

int
box_config_load(const char *path, const struct box_config_options *opts, struct box_config **ret,
		struct box_config_errors *errs)
{
	struct ctx c;
	const char *why = NULL;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	config_ctx_init(&c, path, opts, &config_host_caller, errs);
	if (path_canonicalize(path, &c.cfg->abs_path) < 0)
		err_at(&c, 0, NULL, NULL, "cannot be opened: %s", strerror(errno));
	else if (read_user_file(&c, c.cfg->abs_path, BOX_CONFIG_FILE_MAX, false, &data, &len, &why) < 0)
		err_at(&c, 0, NULL, NULL, "%s", why);
	return config_load(&c, data, len, ret);
}

int
box_config_load_buffer(const char *name, const char *data, size_t len,
		       const struct box_config_options *opts, struct box_config **ret,
		       struct box_config_errors *errs)
{
	struct ctx c;
	config_ctx_init(&c, name, opts, &config_host_caller, errs);
	if (len > BOX_CONFIG_FILE_MAX) {
		err_at(&c, 0, NULL, NULL, "is larger than %lu bytes", BOX_CONFIG_FILE_MAX);
		return config_load(&c, NULL, 0, ret);
	}
	return config_load(&c, data ? data : "", len, ret);
}

/* ------------------------------------------------------------------ */
/* cgroups                                                             */

struct cgroups_scan {
	const char *root_prefix;
	struct box_host_cgroups *ret;
};

static int
cgroup_mount_seen(void *user, const struct mountinfo_entry *e)
{
	struct cgroups_scan *scan = user;

	if (strcmp(e->fstype, "cgroup") == 0) {
		scan->ret->v1_memory |= list_has_word(e->super_options, "memory");
		scan->ret->v1_pids |= list_has_word(e->super_options, "pids");
		return 0;
	}
	/* cgroup2: what its root directory offers. */
	_cleanup_free_ char *mp = xstrdup(e->mountpoint);
	mountinfo_unescape(mp);
	_cleanup_free_ char *dir = xasprintf("%s%s", scan->root_prefix ? scan->root_prefix : "", mp);
	struct hostprobe_controllers ctl;
	if (hostprobe_cgroup2_controllers(dir, &ctl) == 0) {
		scan->ret->v2_memory |= ctl.memory;
		scan->ret->v2_pids |= ctl.pids;
	}
	return 0;
}

int
box_host_cgroups_probe(const char *mountinfo, const char *root_prefix, struct box_host_cgroups *ret)
{
	struct cgroups_scan scan = { root_prefix, ret };

	memset(ret, 0, sizeof(*ret));
	return hostprobe_cgroup_mounts(mountinfo, cgroup_mount_seen, &scan);
}
