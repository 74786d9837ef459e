/*
 * recheck.c — every path of a request, re-checked as the box owner.
 *
 * A user never grants what it cannot reach itself: boxd forks a child that
 * switches to the owner's uid, gid and supplementary groups (initgroups as
 * the passwd and group databases say) before it touches a single path. The
 * child checks each grant (exists, not a symlink, canonical, reachable with
 * the access its list needs), the workspace, the agent's program and its #!
 * chain, creates the state dir (0700, so it is the owner's), and opens the
 * run lock, STATE/policy/ (created 0700; an O_PATH fd, as a later run finds
 * it owned by box-policyd's uid), STATE/decisions.jsonl (O_APPEND) and —
 * for --detach — agent.log. It answers with one CheckReply
 * (problems = refusals naming box.ini:LINE [SECTION] KEY; disclosure = typed
 * records "KIND PATH") and then, in a second packet, the opened fds.
 * An unreachable grant is a load refusal (REPLY_REFUSED, exit 2), not a
 * setup failure. CONFIG.md's checks that need the file system are made here
 * too: which credential stores and box's own directories exist inside a grant
 * (records "maskdir|maskfile PATH"; plan_build masks them), a deny of a file
 * with another name (st_nlink > 1, walked under a denied directory), and a
 * scan of the grants for Unix sockets ("socket PATH", at most
 * RECHECK_SOCKETS_SHOWN, "sockets /TOTAL" beyond) refusing another name of
 * boxd's socket; both walks share one bound (BOX_WALK_*, "scancut /WHY").
 * Trusts: the parent trusts the child's reply only after box_ipc_decode()
 * validated it, and re-validates every record path; the child runs with
 * the owner's rights only, so whatever it reports it could reach itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "proto_client.h"
#include "treewalk.h"
#include "validate.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define SHEBANG_DEPTH_MAX 4
#define RECHECK_RECORDS_MAX 128
#define RECHECK_FDS_MAX 5

/* ------------------------------------------------------------------ */
/* problems                                                            */

Box__Problem *
problem_new(uint32_t line, const char *section, const char *key, const char *fmt, ...)
{
	Box__Problem *p = calloc(1, sizeof(*p));
	va_list ap;

	if (!p)
		return NULL;
	box__problem__init(p);
	p->severity = BOX__PROBLEM__SEVERITY__SEVERITY_ERROR;
	p->has_file = 1;
	p->file = 0;
	if (line) {
		p->has_line = 1;
		p->line = line;
	}
	p->section = section ? strdup(section) : NULL;
	p->key = key ? strdup(key) : NULL;
	va_start(ap, fmt);
	if (vasprintf(&p->message, fmt, ap) < 0)
		p->message = NULL;
	va_end(ap);
	if (!p->message || (section && !p->section) || (key && !p->key)) {
		problem_free(p);
		return NULL;
	}
	/* One line: control characters in a user's path become '?'. */
	for (char *c = p->message; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (strlen(p->message) > 4000)
		p->message[4000] = '\0';
	return p;
}

void
problem_free(Box__Problem *p)
{
	if (!p)
		return;
	free(p->section);
	free(p->key);
	free(p->message);
	free(p);
}

void
recheck_result_clear(struct recheck_result *res)
{
	free(res->argv0);
	free(res->program);
	for (size_t i = 0; i < res->n_interpreters; i++)
		free(res->interpreters[i]);
	free(res->interpreters);
	for (size_t i = 0; i < res->n_deny_dirs; i++)
		free(res->deny_dirs[i]);
	free(res->deny_dirs);
	for (size_t i = 0; i < res->n_masks; i++) {
		free(res->masks[i]);
		free(res->mask_via[i]);
	}
	free(res->masks);
	free(res->mask_via);
	free(res->mask_is_dir);
	for (size_t i = 0; i < res->n_sockets; i++)
		free(res->sockets[i]);
	free(res->sockets);
	free(res->scan_cut);
	free(res->workspace);
	free(res->state_dir);
	res->state_dirfd = safe_close(res->state_dirfd);
	res->lock_fd = safe_close(res->lock_fd);
	res->log_fd = safe_close(res->log_fd);
	res->policy_dirfd = safe_close(res->policy_dirfd);
	res->decisions_fd = safe_close(res->decisions_fd);
	for (size_t i = 0; i < res->n_problems; i++)
		problem_free(res->problems[i]);
	free(res->problems);
	memset(res, 0, sizeof(*res));
	res->state_dirfd = res->lock_fd = res->log_fd = res->policy_dirfd = res->decisions_fd = -1;
}

/* ------------------------------------------------------------------ */
/* the child (runs as the owner; exits, never returns)                 */

struct socket_id {
	dev_t dev;
	ino_t ino;
	const char *path;
};

struct child {
	const char *owner;
	const Box__CfgFilesystem *fs;
	struct own_paths own;
	struct box_walk_budget walk;   /* the deny and socket walks, together (CONFIG.md) */
	struct socket_id boxd_sockets[8];
	size_t n_boxd_sockets;
	char *masks[RECHECK_MASKS_MAX]; /* what this child masks (mask records) */
	size_t n_masks;
	const Box__CfgPath *walking;   /* the grant or deny entry being walked */
	const char *walking_key;
	unsigned scan_delay_ms;        /* BOX_TEST_SCAN_DELAY_MS: slows the socket scan (tests) */
	size_t sockets_total;
	size_t sockets_named;          /* "socket" records sent, at most RECHECK_SOCKETS_SHOWN */
	Box__Problem *problems[BOX_LIST_REPLY_MAX];
	size_t n_problems;
	char *records[RECHECK_RECORDS_MAX + 2 * BOX_FS_LIST_MAX];
	size_t n_records;
};

static void
child_problem(struct child *c, uint32_t line, const char *section, const char *key,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void
child_problem(struct child *c, uint32_t line, const char *section, const char *key,
	      const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (c->n_problems >= BOX_LIST_REPLY_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	Box__Problem *p = problem_new(line, section, key, "%s", msg);
	if (p)
		c->problems[c->n_problems++] = p;
}

static void
child_record(struct child *c, const char *kind, const char *path)
{
	char *r;
	if (c->n_records >= ELEMENTSOF(c->records) || asprintf(&r, "%s %s", kind, path) < 0)
		_exit(3);
	c->records[c->n_records++] = r;
}

enum need {
	NEED_READ,      /* read: file or directory */
	NEED_WRITE,     /* write: file or directory */
	NEED_READ_FILE,
	NEED_WRITE_FILE,
	NEED_EXEC,
	NEED_DENY,
};

static const char *
kind_name(enum need n)
{
	static const char *const names[] = { "read", "write", "read_file", "write_file", "exec",
					     "deny" };
	return names[n];
}

/* Check one grant as the owner. Returns the lstat type in *is_dir. */
static void
check_grant(struct child *c, const char *section, enum need need, const Box__CfgPath *e,
	    bool *is_dir)
{
	const char *p = e->path;
	const char *key = kind_name(need);
	struct stat st;

	*is_dir = false;
	if (lstat(p, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			child_problem(c, e->line, section, key, "%s does not exist", p);
		else
			child_problem(c, e->line, section, key,
				      "the box owner (%s) cannot reach %s: %s", c->owner, p,
				      strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		child_problem(c, e->line, section, key, "%s is a symbolic link", p);
		return;
	}
	*is_dir = S_ISDIR(st.st_mode);
	_cleanup_free_ char *canon = NULL;
	int r = path_canonicalize(p, &canon);
	if (r < 0) {
		child_problem(c, e->line, section, key, "the box owner (%s) cannot reach %s: %s",
			      c->owner, p, strerror(-r));
		return;
	}
	if (strcmp(canon, p) != 0) {
		child_problem(c, e->line, section, key, "%s is not canonical (it is %s)", p, canon);
		return;
	}
	if (need == NEED_DENY)
		return;
	if ((need == NEED_READ_FILE || need == NEED_WRITE_FILE) && *is_dir) {
		child_problem(c, e->line, section, key, "%s is a directory", p);
		return;
	}
	if (!*is_dir && !S_ISREG(st.st_mode) && need == NEED_EXEC) {
		child_problem(c, e->line, section, key, "%s is not a regular file", p);
		return;
	}
	if (need == NEED_EXEC && !*is_dir && (st.st_mode & (S_ISUID | S_ISGID))) {
		child_problem(c, e->line, section, key, "%s is setuid or setgid", p);
		return;
	}
	int mode = R_OK;
	if (need == NEED_WRITE || need == NEED_WRITE_FILE)
		mode |= W_OK;
	if (need == NEED_EXEC || *is_dir)
		mode |= X_OK;
	if (access(p, mode) < 0) {
		child_problem(c, e->line, section, key, "the box owner (%s) cannot %s %s: %s",
			      c->owner,
			      need == NEED_WRITE || need == NEED_WRITE_FILE ? "write" :
			      need == NEED_EXEC			       ? "execute" :
									 "read",
			      p, strerror(errno));
		return;
	}
	if (*is_dir) {
		/* Listing it must work too (an ACL or LSM may say no where access() said yes). */
		int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			child_problem(c, e->line, section, key,
				      "the box owner (%s) cannot read %s: %s", c->owner, p,
				      strerror(errno));
		else
			close(fd);
	}
}

static void
check_list(struct child *c, const char *section, enum need need, Box__CfgPath **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool is_dir;
		check_grant(c, section, need, v[i], &is_dir);
		if (need == NEED_DENY && is_dir)
			child_record(c, "denydir", v[i]->path);
	}
}

static bool
is_exec_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* Find `name` on `path` (a PATH value) as the owner. */
static char *
path_search(const char *name, const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	char *save = NULL;

	if (!copy)
		return NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue;
		char *cand = path_join(dir, name);
		if (cand && is_exec_file(cand))
			return cand;
		free(cand);
	}
	return NULL;
}

/* The interpreter of a #! script (allocated), or NULL. *env_name for "#!/usr/bin/env NAME". */
static char *
shebang_of(const char *file, char **env_name)
{
	char buf[256];
	*env_name = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (!nl)
		return NULL;
	*nl = '\0';
	char *s = buf + 2;
	while (*s == ' ' || *s == '\t')
		s++;
	char *end = s + strcspn(s, " \t");
	char *arg = NULL;
	if (*end) {
		*end = '\0';
		arg = end + 1;
		while (*arg == ' ' || *arg == '\t')
			arg++;
		arg[strcspn(arg, " \t")] = '\0';
	}
	if (s[0] != '/')
		return NULL;
	if (arg && *arg && strcmp(path_basename(s), "env") == 0 && arg[0] != '-')
		*env_name = strdup(arg);
	return strdup(s);
}

static void
check_command(struct child *c, const Box__BoxSpec *s)
{
	const Box__CfgArgv *cmd = s->agent->command;
	const char *w0 = cmd->argv[0];
	const char *path = NULL;
	_cleanup_free_ char *argv0 = NULL;

	if (s->agent->env)
		for (size_t i = 0; i < s->agent->env->n_vars; i++)
			if (strcmp(s->agent->env->vars[i]->name, "PATH") == 0)
				path = s->agent->env->vars[i]->value;
	if (!path)
		path = DEFAULT_PATH; /* never the caller's PATH (CONFIG.md `command`) */

	if (w0[0] == '/') {
		if (!is_exec_file(w0)) {
			struct stat st;
			bool missing = lstat(w0, &st) < 0 && errno == ENOENT;
			child_problem(c, cmd->line, "agent", "command",
				      missing ? "%s does not exist for the box owner (%s)" :
						"%s is not an executable file for the box owner (%s)",
				      w0, c->owner);
			return;
		}
		argv0 = strdup(w0);
	} else {
		argv0 = path_search(w0, path);
		if (!argv0) {
			child_problem(c, cmd->line, "agent", "command",
				      "%s is not found on PATH as the box owner (%s)", w0, c->owner);
			return;
		}
	}
	if (!argv0)
		_exit(3);
	child_record(c, "argv0", argv0);

	_cleanup_free_ char *cur = NULL;
	if (path_canonicalize(argv0, &cur) < 0) {
		child_problem(c, cmd->line, "agent", "command", "%s cannot be resolved", argv0);
		return;
	}
	child_record(c, "program", cur);
	for (int depth = 0; depth < SHEBANG_DEPTH_MAX; depth++) {
		_cleanup_free_ char *env_name = NULL;
		_cleanup_free_ char *interp = shebang_of(cur, &env_name);
		if (!interp)
			return;
		_cleanup_free_ char *canon = NULL;
		if (!is_exec_file(interp) || path_canonicalize(interp, &canon) < 0) {
			child_problem(c, cmd->line, "agent", "command",
				      "%s: its interpreter %s is not executable", cur, interp);
			return;
		}
		child_record(c, "interp", canon);
		if (env_name) {
			free(canon);
			canon = NULL;
			_cleanup_free_ char *found = path_search(env_name, path);
			if (!found || path_canonicalize(found, &canon) < 0) {
				child_problem(c, cmd->line, "agent", "command",
					      "%s: %s is not found on PATH", cur, env_name);
				return;
			}
			child_record(c, "interp", canon);
		}
		free(cur);
		cur = TAKE_PTR(canon);
	}
}

static void
check_workspace(struct child *c, const Box__BoxSpec *s)
{
	const char *ws = s->agent->workspace ? s->agent->workspace->path : s->caller->cwd;
	uint32_t line = s->agent->workspace ? s->agent->workspace->line : s->agent->line;
	struct stat st;

	if (stat(ws, &st) < 0 || !S_ISDIR(st.st_mode)) {
		child_problem(c, line, "agent", "workspace", "%s is not a directory the box owner (%s) can reach",
			      ws, c->owner);
		return;
	}
	if (access(ws, X_OK) < 0) {
		child_problem(c, line, "agent", "workspace",
			      "the box owner (%s) cannot enter %s: %s", c->owner, ws,
			      strerror(errno));
		return;
	}
	child_record(c, "workspace", ws);
}

/* mkdir -p with 0700 for what is created. */
static int
mkdir_p(const char *p)
{
	struct stat st;
	if (stat(p, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	_cleanup_free_ char *parent = NULL;
	if (path_dirname(p, &parent) < 0)
		return -ENOMEM;
	if (strcmp(parent, p) != 0) {
		int r = mkdir_p(parent);
		if (r < 0)
			return r;
	}
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* masks, hard links under deny, sockets in grants (CONFIG.md)         */

/*
 * An own directory or credential store strictly inside a grant is masked if
 * it exists — at its canonical path: when it or a parent is a symlink
 * (~/.ssh -> ~/dotfiles/ssh), the trampoline binds nothing through a symlink,
 * and what the agent reaches is the target; a target outside every grant is
 * not in the view and needs no mask.
 */
static void
child_mask(struct child *c, const char *candidate)
{
	struct stat st;
	_cleanup_free_ char *canon = NULL;

	if (!own_paths_maskable(c->fs, candidate))
		return;
	if (path_canonicalize(candidate, &canon) < 0 || !own_paths_maskable(c->fs, canon) ||
	    lstat(canon, &st) < 0)
		return;
	const char *path = canon;
	/* Nothing inside a mask is mounted (its mode-0000 directory holds no mount point). */
	for (size_t i = 0; i < c->n_masks; i++)
		if (path_is_under(path, c->masks[i]))
			return;
	if (c->n_masks >= ELEMENTSOF(c->masks) || !box_valid_path(path)) {
		/* Not masked would mean readable: refuse the start instead. */
		child_problem(c, 0, "agent.filesystem", NULL,
			      "%s lies in a grant and must be masked, but box cannot mask it", path);
		return;
	}
	if (!(c->masks[c->n_masks] = strdup(path)))
		_exit(3);
	c->n_masks++;
	child_record(c, S_ISDIR(st.st_mode) ? "maskdir" : "maskfile", path);
	if (strcmp(path, candidate) != 0)
		child_record(c, "maskvia", candidate); /* the name it is masked for */
}

static bool
walk_skip(void *user, const char *path)
{
	struct child *c = user;
	for (size_t i = 0; i < c->n_masks; i++)
		if (path_is_under(path, c->masks[i]))
			return true;
	for (size_t i = 0; c->fs && i < c->fs->n_deny; i++)
		if (path_is_under(path, c->fs->deny[i]->path))
			return true;
	return false;
}

static int
deny_link_visit(void *user, const char *path, const struct stat *st)
{
	struct child *c = user;
	if (st->st_nlink <= 1)
		return 0;
	if (strcmp(path, c->walking->path) == 0)
		child_problem(c, c->walking->line, "agent.filesystem", "deny",
			      "%s has %lu hard links: a deny mask hides one name, not the others",
			      path, (unsigned long)st->st_nlink);
	else
		child_problem(c, c->walking->line, "agent.filesystem", "deny",
			      "%s holds %s, which has %lu hard links: a deny mask hides one name, not the others",
			      c->walking->path, path, (unsigned long)st->st_nlink);
	return -ECANCELED;
}

static int
socket_visit(void *user, const char *path, const struct stat *st)
{
	struct child *c = user;
	if (c->scan_delay_ms) {
		struct timespec ts = { .tv_sec = c->scan_delay_ms / 1000,
				       .tv_nsec = (long)(c->scan_delay_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (!S_ISSOCK(st->st_mode))
		return 0;
	/*
	 * boxd's socket under its own name is left to plan_recheck (a grant
	 * containing its place is refused there); another name of it is refused here.
	 */
	for (size_t i = 0; i < c->n_boxd_sockets; i++)
		if (strcmp(path, c->boxd_sockets[i].path) == 0)
			return 0;
	for (size_t i = 0; i < c->n_boxd_sockets; i++)
		if (st->st_dev == c->boxd_sockets[i].dev && st->st_ino == c->boxd_sockets[i].ino) {
			child_problem(c, c->walking->line, "agent.filesystem",
				      c->walking_key,
				      "%s is a hard link of boxd's socket %s: the box could drive boxd; remove it or name something beside it",
				      path, c->boxd_sockets[i].path);
			return 0;
		}
	/* A name the reply cannot carry (control or glob characters) is counted, not named. */
	c->sockets_total++;
	if (c->sockets_named < RECHECK_SOCKETS_SHOWN && box_valid_path(path)) {
		child_record(c, "socket", path);
		c->sockets_named++;
	}
	return 0;
}

/* Is the grant `e` inside another grant entry (then its tree is walked already)? */
static bool
walked_already(const Box__CfgFilesystem *fs, const Box__CfgPath *e)
{
	Box__CfgPath **lists[] = { fs->read, fs->write, fs->read_file, fs->write_file, fs->exec };
	size_t ns[] = { fs->n_read, fs->n_write, fs->n_read_file, fs->n_write_file, fs->n_exec };
	for (size_t l = 0; l < ELEMENTSOF(lists); l++)
		for (size_t i = 0; i < ns[l]; i++) {
			const Box__CfgPath *o = lists[l][i];
			if (o == e)
				return false; /* the first of equal entries walks */
			if (path_is_under(e->path, o->path))
				return true;
		}
	return false;
}

static void
child_scan(struct child *c)
{
	const Box__CfgFilesystem *fs = c->fs;
	char buf[32];

	if (!fs)
		return;
	for (size_t i = 0; i < fs->n_deny; i++) {
		c->walking = fs->deny[i];
		if (box_walk_tree(fs->deny[i]->path, &c->walk, NULL, deny_link_visit, c) == -ENOMEM)
			_exit(3);
	}
	Box__CfgPath **lists[] = { fs->read, fs->write, fs->read_file, fs->write_file, fs->exec };
	size_t ns[] = { fs->n_read, fs->n_write, fs->n_read_file, fs->n_write_file, fs->n_exec };
	for (size_t l = 0; l < ELEMENTSOF(lists); l++)
		for (size_t i = 0; i < ns[l]; i++) {
			if (walked_already(fs, lists[l][i]))
				continue;
			c->walking = lists[l][i];
			c->walking_key = kind_name((enum need)l);
			if (box_walk_tree(lists[l][i]->path, &c->walk, walk_skip, socket_visit, c) ==
			    -ENOMEM)
				_exit(3);
		}
	if (c->sockets_total > c->sockets_named) {
		snprintf(buf, sizeof(buf), "/%zu", c->sockets_total);
		child_record(c, "sockets", buf);
	}
	if (c->walk.cut)
		child_record(c, "scancut", c->walk.cut_by_time ? "/time" : "/entries");
}

/*
 * Before the privilege drop: the identities of boxd's sockets. These paths
 * are boxd's own (its --listen path, its environment, /run/box), so following
 * a symlink among them (BOX_SOCKET may name one) is safe here.
 */
static void
child_boxd_sockets(struct child *c, const struct box *b)
{
	const char *paths[ELEMENTSOF(c->own.sockets) + 1];
	size_t n = 0;
	struct stat st;

	for (size_t i = 0; i < c->own.n_sockets; i++)
		paths[n++] = c->own.sockets[i].path;
	if (b->sock_path)
		paths[n++] = b->sock_path;
	for (size_t i = 0; i < n && c->n_boxd_sockets < ELEMENTSOF(c->boxd_sockets); i++)
		if (stat(paths[i], &st) == 0 && S_ISSOCK(st.st_mode))
			c->boxd_sockets[c->n_boxd_sockets++] =
				(struct socket_id){ st.st_dev, st.st_ino, paths[i] };
}

static noreturn void
child_main(int sock, const struct box *b, const char *state_dir, bool detach)
{
	const Box__BoxSpec *s = b->spec;
	struct child c = { .owner = b->owner.name };
	/* state dir, lock, policy/, decisions.jsonl, agent.log (detach) */
	int fds[RECHECK_FDS_MAX] = { -1, -1, -1, -1, -1 };
	unsigned n_fds = 0;

	if (own_paths_build(b, state_dir, &c.own) < 0)
		_exit(3);
	box_walk_budget_init(&c.walk, BOX_WALK_ENTRIES_MAX, BOX_WALK_TIME_MS);
	c.fs = s->agent->filesystem;
	child_boxd_sockets(&c, b);
	/* A test hook that only slows a step (HACKING.md): the scan's time bound is then reached. */
	const char *delay = getenv("BOX_TEST_SCAN_DELAY_MS");
	uint64_t delay_ms;
	if (delay && parse_count(delay, 999, &delay_ms) == 0)
		c.scan_delay_ms = (unsigned)delay_ms;

	/* The owner's rights, nothing more. */
	if (geteuid() == 0) {
		if (setgroups(b->owner.n_groups, b->owner.groups) < 0 ||
		    setresgid(b->owner.gid, b->owner.gid, b->owner.gid) < 0 ||
		    setresuid(b->owner.uid, b->owner.uid, b->owner.uid) < 0)
			_exit(4);
		if (b->owner.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
			_exit(4);
	}
	if (getuid() != b->owner.uid || geteuid() != b->owner.uid)
		_exit(4);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(4);
	umask(077);

	const Box__CfgFilesystem *fs = s->agent->filesystem;
	if (fs) {
		const char *sec = "agent.filesystem";
		check_list(&c, sec, NEED_READ, fs->read, fs->n_read);
		check_list(&c, sec, NEED_WRITE, fs->write, fs->n_write);
		check_list(&c, sec, NEED_READ_FILE, fs->read_file, fs->n_read_file);
		check_list(&c, sec, NEED_WRITE_FILE, fs->write_file, fs->n_write_file);
		check_list(&c, sec, NEED_EXEC, fs->exec, fs->n_exec);
		check_list(&c, sec, NEED_DENY, fs->deny, fs->n_deny);
	}
	check_workspace(&c, s);
	check_command(&c, s);

	/* The state dir: the owner's, 0700 when created here. */
	uint32_t sline = s->box->state_dir ? s->box->state_dir->line : s->box->line;
	int r = mkdir_p(state_dir);
	if (r < 0)
		child_problem(&c, sline, "box", "state_dir",
			      "cannot create %s as the box owner (%s): %s", state_dir, c.owner,
			      strerror(-r));
	else {
		struct stat st;
		fds[0] = open(state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fds[0] < 0 || fstat(fds[0], &st) < 0)
			child_problem(&c, sline, "box", "state_dir", "cannot open %s: %s", state_dir,
				      strerror(errno));
		else if (st.st_uid != b->owner.uid)
			child_problem(&c, sline, "box", "state_dir",
				      "%s is owned by uid %u, not by the box owner (%s)", state_dir,
				      (unsigned)st.st_uid, c.owner);
		else if (st.st_mode & 022)
			child_problem(&c, sline, "box", "state_dir",
				      "%s is writable by others (mode %04o)", state_dir,
				      (unsigned)(st.st_mode & 07777));
		else {
			fds[1] = openat(fds[0], "lock",
					O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
			if (fds[1] < 0)
				child_problem(&c, sline, "box", "state_dir", "%s/lock: %s", state_dir,
					      strerror(errno));
			/*
			 * policy/ belongs to box-policyd's uid after its first run, so
			 * the owner may not read it: O_PATH, and boxd takes it from there.
			 */
			if (mkdirat(fds[0], "policy", 0700) < 0 && errno != EEXIST)
				child_problem(&c, sline, "box", "state_dir",
					      "cannot create %s/policy: %s", state_dir,
					      strerror(errno));
			else if ((fds[2] = openat(fds[0], "policy",
						  O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				child_problem(&c, sline, "box", "state_dir", "%s/policy: %s",
					      state_dir, strerror(errno));
			fds[3] = openat(fds[0], "decisions.jsonl",
					O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
						O_NOCTTY | O_NONBLOCK,
					0600);
			if (fds[3] < 0)
				child_problem(&c, sline, "box", "state_dir",
					      "%s/decisions.jsonl: %s", state_dir, strerror(errno));
			if (detach) {
				fds[4] = openat(fds[0], "agent.log",
						O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
							O_NONBLOCK,
						0600);
				if (fds[4] < 0)
					child_problem(&c, sline, "box", "state_dir",
						      "%s/agent.log: %s", state_dir, strerror(errno));
			}
			n_fds = detach ? 5 : 4;
			for (unsigned i = 0; i < n_fds; i++)
				if (fds[i] < 0)
					n_fds = 0;
		}
	}

	/* After the state dir exists: masks, then the walks (which skip what is masked). */
	{
		/* Outermost first, so a mask inside another is left out. */
		const char *cand[ELEMENTSOF(c.own.own) + ELEMENTSOF(c.own.stores)];
		size_t nc = 0;
		for (size_t i = 0; i < c.own.n_own; i++)
			cand[nc++] = c.own.own[i].path;
		for (size_t i = 0; i < c.own.n_stores; i++)
			cand[nc++] = c.own.stores[i].path;
		for (size_t i = 1; i < nc; i++)
			for (size_t k = i; k > 0 && strlen(cand[k]) < strlen(cand[k - 1]); k--) {
				const char *t = cand[k];
				cand[k] = cand[k - 1];
				cand[k - 1] = t;
			}
		for (size_t i = 0; i < nc; i++)
			child_mask(&c, cand[i]);
	}
	child_scan(&c);

	Box__CheckReply reply = BOX__CHECK_REPLY__INIT;
	reply.status = c.n_problems ? BOX__REPLY_STATUS__REPLY_REFUSED : BOX__REPLY_STATUS__REPLY_OK;
	reply.problems = c.problems;
	reply.n_problems = c.n_problems;
	reply.disclosure = c.records;
	reply.n_disclosure = c.n_records;
	if (box_ipc_send(sock, &box_proto_client, BOX__MSG_TYPE__MSG_CHECK_REPLY, 0, &reply.base,
			 NULL, 0) < 0)
		_exit(5);
	/* Second packet: the fds (a CheckReply carries none). */
	char one = n_fds ? 'F' : '-';
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * RECHECK_FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n_fds && !c.n_problems) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	} else
		one = '-';
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != 1)
		_exit(5);
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* the parent                                                          */

static int
add_string(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(char *));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Take one "KIND PATH" record of the child's reply. */
static int
take_record(struct recheck_result *res, const char *rec)
{
	const char *sp = strchr(rec, ' ');
	if (!sp || !box_valid_path(sp + 1))
		return -EBADMSG;
	size_t kl = (size_t)(sp - rec);
	const char *p = sp + 1;
#define IS(k) (kl == strlen(k) && strncmp(rec, k, kl) == 0)
	if (IS("argv0") && !res->argv0)
		return (res->argv0 = strdup(p)) ? 0 : -ENOMEM;
	if (IS("program") && !res->program)
		return (res->program = strdup(p)) ? 0 : -ENOMEM;
	if (IS("workspace") && !res->workspace)
		return (res->workspace = strdup(p)) ? 0 : -ENOMEM;
	if (IS("interp"))
		return add_string(&res->interpreters, &res->n_interpreters, p);
	if (IS("denydir"))
		return add_string(&res->deny_dirs, &res->n_deny_dirs, p);
	if (IS("maskdir") || IS("maskfile")) {
		if (res->n_masks >= RECHECK_MASKS_MAX)
			return -EBADMSG;
		bool *nd = realloc(res->mask_is_dir, (res->n_masks + 1) * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		res->mask_is_dir = nd;
		nd[res->n_masks] = IS("maskdir");
		char **nv = realloc(res->mask_via, (res->n_masks + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		res->mask_via = nv;
		nv[res->n_masks] = NULL;
		return add_string(&res->masks, &res->n_masks, p);
	}
	if (IS("maskvia")) {
		/* follows its mask record: the path (behind a symlink) that mask is for */
		if (!res->n_masks || res->mask_via[res->n_masks - 1])
			return -EBADMSG;
		return (res->mask_via[res->n_masks - 1] = strdup(p)) ? 0 : -ENOMEM;
	}
	if (IS("socket"))
		return res->n_sockets < RECHECK_SOCKETS_SHOWN ?
			       add_string(&res->sockets, &res->n_sockets, p) :
			       -EBADMSG;
	if (IS("sockets")) {
		/* "/N": the total, when more were found than named */
		uint64_t t;
		if (parse_count(p + 1, SIZE_MAX, &t) < 0)
			return -EBADMSG;
		res->sockets_total = (size_t)t;
		return 0;
	}
	if (IS("scancut") && !res->scan_cut) {
		if (strcmp(p, "/time") != 0 && strcmp(p, "/entries") != 0)
			return -EBADMSG;
		return (res->scan_cut = strdup(p + 1)) ? 0 : -ENOMEM;
	}
#undef IS
	return -EBADMSG;
}

/* Receive the fd packet: 'F' with 4 or 5 fds, or '-' with none. */
static int
recv_fds(int sock, int *fds, unsigned want, int timeout_ms)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	char one = 0;
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * (RECHECK_FDS_MAX + 1))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n != 1)
		return n < 0 ? -errno : -EPROTO;
	unsigned got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < want)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if ((mh.msg_flags & MSG_CTRUNC) || (one == 'F' && got != want) || (one != 'F' && got)) {
		for (unsigned i = 0; i < got; i++)
			fds[i] = safe_close(fds[i]);
		return -EBADMSG;
	}
	return one == 'F' ? (int)got : 0;
}

int
recheck_run(const struct boxd *d, const struct box *b, const char *state_dir, bool detach,
	    struct recheck_result *res)
{
	int sv[2];
	int r = box_ipc_socketpair(sv, false);
	if (r < 0)
		return r;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		close(sv[0]);
		child_main(sv[1], b, state_dir, detach);
	}
	close(sv[1]);
	_cleanup_close_ int sock = sv[0];
	(void)d;

	struct box_ipc_chan *chan = box_ipc_chan_new(sock, &box_proto_client, BOX_CLIENT_ROLE_BOXD);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (!chan) {
		r = -ENOMEM;
		goto out;
	}
	uint32_t allowed = BOX__MSG_TYPE__MSG_CHECK_REPLY;
	r = box_ipc_chan_allow(chan, &allowed, 1);
	if (r >= 0)
		r = box_ipc_recv_wait(chan, &m, BOXD_RECHECK_TIMEOUT_MS);
	if (r < 0)
		goto out;
	const Box__CheckReply *rep = (const Box__CheckReply *)m.msg;
	for (size_t i = 0; i < rep->n_disclosure && r >= 0; i++)
		r = take_record(res, rep->disclosure[i]);
	if (r < 0)
		goto out;
	if (rep->n_problems) {
		res->problems = calloc(rep->n_problems, sizeof(*res->problems));
		if (!res->problems) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < rep->n_problems; i++) {
			const Box__Problem *p = rep->problems[i];
			Box__Problem *q = problem_new(p->has_line ? p->line : 0, p->section, p->key,
						      "%s", p->message);
			if (!q) {
				r = -ENOMEM;
				goto out;
			}
			res->problems[res->n_problems++] = q;
		}
	}
	int fds[RECHECK_FDS_MAX] = { -1, -1, -1, -1, -1 };
	unsigned want = detach ? 5 : 4;
	r = recv_fds(sock, fds, want, BOXD_RECHECK_TIMEOUT_MS);
	if (r < 0)
		goto out;
	if (r == 0 && !res->n_problems) {
		r = -EPROTO;
		goto out;
	}
	if (r > 0) {
		res->state_dirfd = fds[0];
		res->lock_fd = fds[1];
		res->policy_dirfd = fds[2];
		res->decisions_fd = fds[3];
		res->log_fd = fds[4];
	}
	res->state_dir = strdup(state_dir);
	if (!res->state_dir)
		r = -ENOMEM;
	else if (!res->n_problems && (!res->argv0 || !res->program || !res->workspace))
		r = -EPROTO;
	else
		r = 0;
out:
	box_ipc_msg_done(&m);
	box_ipc_chan_free(chan);
	if (r < 0)
		kill(pid, SIGKILL);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (r >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		r = -EPROTO;
	return r;
}
