/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c — box-recheck's checks, run as the box owner: every grant
 * (exists, not a symlink, canonical, reachable with the access its list
 * needs), the workspace, the agent's program and its #! chain and the ELF
 * loaders ("loader PATH": of those, of each exec file, of box's own programs;
 * only in the system runtime), the state dir and its files, the masks of
 * box's own directories, credential stores and file:// secrets inside grants,
 * a deny of a file with another name (st_nlink > 1, walked under a denied
 * directory), the scan of the agent's grants for Unix sockets ("socket
 * PATH", at most RECHECK_SOCKETS_SHOWN, "sockets /TOTAL" beyond) refusing
 * another name of boxd's socket, and in every section's grants another name
 * (same device and inode: a bind mount on the host) of a denied or masked
 * path, refused; the walks share one bound (BOX_WALK_*, "scancut /WHY"). Results go into struct child:
 * problems (refusals naming box.ini:LINE [SECTION] KEY) and typed records
 * "KIND PATH" (recheck.h).
 * Trusts: the validated RecheckRequest; runs with the owner's rights only,
 * so whatever it reports the owner could reach itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "elfinterp.h"
#include "path.h"
#include "recheck.h"
#include "testhook.h"
#include "treewalk.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define SHEBANG_DEPTH_MAX 4

void
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

void
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

/*
 * box.ini(5) exec_system: the ELF loader `exe` names (PT_INTERP), canonical
 * as the owner resolves it, as a "loader" record — once, and only when it
 * lies in the system runtime (the view binds nothing else for it; a loader
 * anywhere else must be an exec entry itself). A static program, a script
 * or a file the owner cannot read names none.
 */
static void
record_loader(struct child *c, const char *exe)
{
	char interp[BOX_PATH_MAX];
	_cleanup_free_ char *canon = NULL;
	_cleanup_close_ int fd = open(exe, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0 || elf_interp_fd(fd, interp, sizeof(interp)) < 0 ||
	    path_canonicalize(interp, &canon) < 0 || !box_valid_path(canon) ||
	    !path_is_system_runtime(canon))
		return;
	for (size_t i = 0; i < c->n_loaders; i++)
		if (strcmp(c->loaders[i], canon) == 0)
			return;
	if (c->n_loaders >= ELEMENTSOF(c->loaders))
		return; /* more loaders than any host has: the rest stay unexecutable */
	child_record(c, "loader", canon);
	c->loaders[c->n_loaders++] = c->records[c->n_records - 1] + strlen("loader ");
}

/*
 * The loaders of every file the agent may execute: box's own programs' (this
 * one's: box-shell and the alias are built alike; it stands for the host's
 * standard loader, which an exec directory's programs use), the program's
 * and its #! chain's (check_command), each exec entry that is a file.
 */
void
check_loaders(struct child *c)
{
	record_loader(c, "/proc/self/exe");
	for (size_t i = 0; c->fs && i < c->fs->n_exec; i++) {
		struct stat st;
		if (lstat(c->fs->exec[i]->path, &st) == 0 && S_ISREG(st.st_mode))
			record_loader(c, c->fs->exec[i]->path);
	}
}

void
check_command(struct child *c, const Box__RecheckRequest *s)
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
		path = DEFAULT_PATH; /* never the caller's PATH (docs/box.ini.5.md `command`) */

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
	record_loader(c, cur);
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
		record_loader(c, canon);
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
			record_loader(c, canon);
		}
		free(cur);
		cur = TAKE_PTR(canon);
	}
}

/*
 * A [tool.NAME] or [mcp.NAME] command's program as the owner: element 0 as
 * written — an absolute path, or a bare name looked up on the section's own
 * env PATH, else box's default PATH (docs/box.ini.5.md `command`; as the agent's) —
 * to its canonical file, executable by the owner. NULL after a problem.
 */
static char *
section_program(struct child *c, const Box__CfgArgv *cmd, const Box__CfgEnv *env,
		const char *sec)
{
	const char *w0 = cmd->argv[0], *path = DEFAULT_PATH;
	for (size_t i = 0; env && i < env->n_vars; i++)
		if (strcmp(env->vars[i]->name, "PATH") == 0)
			path = env->vars[i]->value;
	_cleanup_free_ char *found = w0[0] == '/' ? strdup(w0) : path_search(w0, path);
	char *canon = NULL;
	if (!found || !is_exec_file(found) || path_canonicalize(found, &canon) < 0 ||
	    !is_exec_file(canon)) {
		free(canon);
		child_problem(c, cmd->line, sec, "command",
			      w0[0] == '/' ? "%s is not an executable file for the box owner (%s)" :
					     "%s is not found on PATH as the box owner (%s)",
			      w0, c->owner);
		return NULL;
	}
	return canon;
}

/*
 * Each [tool.NAME]: its grants as the owner (refusals name
 * [tool.NAME.filesystem]), and its command's program (section_program)
 * to its canonical file, executable by the owner:
 * the record "tool.NAME PATH" is what boxd matches a spawn's program_path
 * against (docs/box.ini.5.md: the same canonical file).
 */
void
check_tools(struct child *c, const Box__RecheckRequest *s)
{
	for (size_t i = 0; i < s->n_tools; i++) {
		const Box__CfgTool *t = s->tools[i];
		const Box__CfgFilesystem *fs = t->filesystem;
		char sec[64], kind[48];
		snprintf(sec, sizeof(sec), "tool.%s.filesystem", t->name);
		if (fs) {
			check_list(c, sec, NEED_READ, fs->read, fs->n_read);
			check_list(c, sec, NEED_WRITE, fs->write, fs->n_write);
			check_list(c, sec, NEED_READ_FILE, fs->read_file, fs->n_read_file);
			check_list(c, sec, NEED_WRITE_FILE, fs->write_file, fs->n_write_file);
			check_list(c, sec, NEED_DENY, fs->deny, fs->n_deny);
		}
		snprintf(sec, sizeof(sec), "tool.%s", t->name);
		_cleanup_free_ char *canon = section_program(c, t->command, t->env, sec);
		if (!canon)
			continue;
		snprintf(kind, sizeof(kind), "tool.%s", t->name);
		child_record(c, kind, canon);
	}
}

/*
 * Each stdio [mcp.NAME], as a [tool.NAME]: its grants as the owner (refusals
 * name [mcp.NAME.filesystem]) and its command's program to its canonical
 * file, executable by the owner: the record "mcp.NAME PATH" is the program
 * box-mcpd decides shell:spawn on and the server's sandbox execs.
 */
void
check_mcp(struct child *c, const Box__RecheckRequest *s)
{
	for (size_t i = 0; i < s->n_mcp; i++) {
		const Box__CfgMcp *m = s->mcp[i];
		const Box__CfgFilesystem *fs = m->filesystem;
		char sec[64], kind[48];
		snprintf(sec, sizeof(sec), "mcp.%s.filesystem", m->name);
		if (fs) {
			check_list(c, sec, NEED_READ, fs->read, fs->n_read);
			check_list(c, sec, NEED_WRITE, fs->write, fs->n_write);
			check_list(c, sec, NEED_READ_FILE, fs->read_file, fs->n_read_file);
			check_list(c, sec, NEED_WRITE_FILE, fs->write_file, fs->n_write_file);
			check_list(c, sec, NEED_DENY, fs->deny, fs->n_deny);
		}
		snprintf(sec, sizeof(sec), "mcp.%s", m->name);
		_cleanup_free_ char *canon = section_program(c, m->command, m->env, sec);
		if (!canon)
			continue;
		snprintf(kind, sizeof(kind), "mcp.%s", m->name);
		child_record(c, kind, canon);
	}
}

void
check_workspace(struct child *c, const Box__RecheckRequest *s)
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
int
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
/* masks, hard links under deny, sockets in grants (docs/box.ini.5.md)         */

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

/*
 * Is `path`, of identity st, another name of a path every view hides (a
 * bind mount of it, or of a directory above it, somewhere in a grant)? Then
 * the start is refused: the mask covers one name only. A hard link is the
 * deny walk's (st_nlink); a directory has none.
 */
static bool
hidden_alias(struct child *c, const char *path, const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1)
		return false; /* a hard link: the deny walk refused it already, by the file's links */
	for (size_t i = 0; i < c->n_hidden; i++) {
		const struct hidden_id *h = &c->hidden[i];
		if (st->st_dev != h->dev || st->st_ino != h->ino || strcmp(path, h->path) == 0)
			continue;
		child_problem(c, c->walking->line, c->walking_section, c->walking_key,
			      "%s is another name of %s, which every view hides (a bind mount on the host): a mask hides one name, not the others; grant something that does not reach it",
			      path, h->path);
		return true;
	}
	return false;
}

/* Skip what the section being walked hides (its masks, its own and the agent's denies). */
static bool
walk_skip(void *user, const char *path, const struct stat *st)
{
	struct child *c = user;
	for (size_t i = 0; i < c->n_masks; i++)
		if (path_is_under(path, c->masks[i]))
			return true;
	for (size_t i = 0; c->fs && i < c->fs->n_deny; i++)
		if (path_is_under(path, c->fs->deny[i]->path))
			return true;
	for (size_t i = 0; c->walking_fs && i < c->walking_fs->n_deny; i++)
		if (path_is_under(path, c->walking_fs->deny[i]->path))
			return true;
	return hidden_alias(c, path, st);
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
	if (hidden_alias(c, path, st))
		return 0;
	if (c->scan_delay_ms)
		box_sleep_ms(c->scan_delay_ms);
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

/* The identities of what every view hides: the agent's deny entries and the masks. */
static void
hidden_collect(struct child *c)
{
	const Box__CfgFilesystem *fs = c->fs;
	const char *paths[BOX_FS_LIST_MAX + RECHECK_MASKS_MAX];
	size_t n = 0;

	for (size_t i = 0; fs && i < fs->n_deny && n < ELEMENTSOF(paths); i++)
		paths[n++] = fs->deny[i]->path;
	for (size_t i = 0; i < c->n_masks && n < ELEMENTSOF(paths); i++)
		paths[n++] = c->masks[i];
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (lstat(paths[i], &st) < 0)
			continue;
		c->hidden[c->n_hidden++] = (struct hidden_id){ st.st_dev, st.st_ino, paths[i] };
	}
}

/*
 * Walk every grant of fs (section `sec`) once; `visit` sees its files. A
 * grant inside another of the same section, or inside a tree an earlier
 * section walked (`done`), is not walked again.
 */
static void
walk_grants(struct child *c, const Box__CfgFilesystem *fs, const char *sec,
	    int (*visit)(void *, const char *, const struct stat *), const char **done,
	    size_t *n_done, size_t done_max)
{
	Box__CfgPath **lists[] = { fs->read, fs->write, fs->read_file, fs->write_file, fs->exec };
	size_t ns[] = { fs->n_read, fs->n_write, fs->n_read_file, fs->n_write_file, fs->n_exec };

	c->walking_section = sec;
	c->walking_fs = fs;
	for (size_t l = 0; l < ELEMENTSOF(lists); l++)
		for (size_t i = 0; i < ns[l]; i++) {
			const char *root = lists[l][i]->path;
			bool seen = walked_already(fs, lists[l][i]);
			for (size_t k = 0; k < *n_done && !seen; k++)
				seen = path_is_under(root, done[k]);
			if (seen)
				continue;
			c->walking = lists[l][i];
			c->walking_key = kind_name((enum need)l);
			if (box_walk_tree(root, &c->walk, walk_skip, visit, c) == -ENOMEM)
				_exit(3);
			if (*n_done < done_max)
				done[(*n_done)++] = root;
		}
	c->walking_fs = NULL;
}

/* A tool's or server's walk looks for other names of hidden paths only (no socket records). */
static int
alias_visit(void *user, const char *path, const struct stat *st)
{
	(void)hidden_alias(user, path, st);
	return 0;
}

void
child_scan(struct child *c, const Box__RecheckRequest *q)
{
	const Box__CfgFilesystem *fs = c->fs;
	const char *done[2 * BOX_FS_LIST_MAX];
	size_t n_done = 0;
	char buf[32];

	for (size_t i = 0; fs && i < fs->n_deny; i++) {
		c->walking = fs->deny[i];
		if (box_walk_tree(fs->deny[i]->path, &c->walk, NULL, deny_link_visit, c) == -ENOMEM)
			_exit(3);
	}
	hidden_collect(c);
	if (fs)
		walk_grants(c, fs, "agent.filesystem", socket_visit, done, &n_done,
			    ELEMENTSOF(done));
	for (size_t i = 0; i < q->n_tools; i++) {
		char sec[64];
		if (!q->tools[i]->filesystem)
			continue;
		snprintf(sec, sizeof(sec), "tool.%s.filesystem", q->tools[i]->name);
		walk_grants(c, q->tools[i]->filesystem, sec, alias_visit, done, &n_done,
			    ELEMENTSOF(done));
	}
	for (size_t i = 0; i < q->n_mcp; i++) {
		char sec[64];
		if (!q->mcp[i]->filesystem)
			continue;
		snprintf(sec, sizeof(sec), "mcp.%s.filesystem", q->mcp[i]->name);
		walk_grants(c, q->mcp[i]->filesystem, sec, alias_visit, done, &n_done,
			    ELEMENTSOF(done));
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

void
check_grants(struct child *c)
{
	const Box__CfgFilesystem *fs = c->fs;
	const char *sec = "agent.filesystem";

	if (!fs)
		return;
	check_list(c, sec, NEED_READ, fs->read, fs->n_read);
	check_list(c, sec, NEED_WRITE, fs->write, fs->n_write);
	check_list(c, sec, NEED_READ_FILE, fs->read_file, fs->n_read_file);
	check_list(c, sec, NEED_WRITE_FILE, fs->write_file, fs->n_write_file);
	check_list(c, sec, NEED_EXEC, fs->exec, fs->n_exec);
	check_list(c, sec, NEED_DENY, fs->deny, fs->n_deny);
}

/* box's own directories and the credential stores inside grants, outermost first. */
void
child_masks(struct child *c, char *const *cand_in, size_t n, const Box__CfgFilesystem *fs)
{
	const char *cand[RECHECK_CANDIDATES_MAX];
	size_t nc = 0;

	for (size_t i = 0; i < n && nc < ELEMENTSOF(cand); i++)
		cand[nc++] = cand_in[i];
	/* Outermost first (stable), so a mask inside another is left out. */
	for (size_t i = 1; i < nc; i++)
		for (size_t k = i; k > 0 && strlen(cand[k]) < strlen(cand[k - 1]); k--) {
			const char *t = cand[k];
			cand[k] = cand[k - 1];
			cand[k - 1] = t;
		}
	const Box__CfgFilesystem *agent_fs = c->fs;
	c->fs = fs;
	for (size_t i = 0; i < nc; i++)
		child_mask(c, cand[i]);
	c->fs = agent_fs;
}
