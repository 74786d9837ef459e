/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redir.c — redirections: < > >> >| <> <& >& &> &>> n>&-
 * here-docs and here-strings. A file is opened through sh_fs_open, so each
 * one is decided (read_content / write_content) before it is opened; a
 * here-doc is a sealed memfd (no file on disk, nothing to decide).
 *
 * The fds a script names (fsops.h, sh->script_fds): a redirection opens fds
 * 0-99 only (SH_FD_SCRIPT_MAX: above them are the shell's own, in box-shell
 * its box-policyd channel and control socket, daemon.h), and duplicates
 * (<&N, >&N, N<&M-) or names (/dev/fd/N) only fds the script has: 0-2 and
 * those its own redirections opened. Opening one adds it, closing one
 * forgets it; a command's temporary redirections are undone together with
 * what they added (redir_restore).
 *
 * Trusts: nothing in the words. The shell's own fds live at SH_FD_SCRIPT_MAX
 * and above with CLOEXEC; a saved fd is restored after a builtin's
 * redirection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sh.h"

static void
save_fd(struct sh_shell *sh, struct redir_state *st, int fd)
{
	if (!st)
		return;
	st->fds = &sh->script_fds;
	for (size_t i = 0; i < st->n; i++)
		if (st->v[i].fd == fd)
			return;
	if (st->n >= sizeof st->v / sizeof st->v[0])
		return;
	bi_flush();
	/* Above the fds a script may open: its own redirections cannot reach the copy. */
	int s = fcntl(fd, F_DUPFD_CLOEXEC, SH_FD_SCRIPT_MAX);
	st->v[st->n].fd = fd;
	st->v[st->n].saved = s;
	/* (no copy: the restore closes it, so it is the script's no more) */
	st->v[st->n].was_script = s >= 0 && sh_fdset_has(&sh->script_fds, fd);
	st->n++;
}

void
redir_restore(struct redir_state *st)
{
	bi_flush();
	for (size_t i = st->n; i-- > 0;) {
		if (st->v[i].saved >= 0) {
			dup2(st->v[i].saved, st->v[i].fd);
			close(st->v[i].saved);
		} else
			close(st->v[i].fd);
		if (st->fds)
			sh_fdset_put(st->fds, st->v[i].fd, st->v[i].was_script);
	}
	st->n = 0;
}

/* FD may be a redirection's target (0 .. SH_FD_SCRIPT_MAX-1); else the message. */
static bool
target_ok(struct sh_shell *sh, int fd)
{
	if (fd >= 0 && fd < SH_FD_SCRIPT_MAX)
		return true;
	sh_err(sh, "%d: file descriptor out of range: a script's redirections use fds 0-%d",
	       fd, SH_FD_SCRIPT_MAX - 1);
	return false;
}

/* SRC (spelled W) is an fd of the script's to duplicate; else the message. */
static bool
source_ok(struct sh_shell *sh, int src, const char *w)
{
	bool open = fcntl(src, F_GETFD) >= 0;
	if (open && sh_fdset_has(&sh->script_fds, src))
		return true;
	if (!open)
		sh_err(sh, "%s: Bad file descriptor", w);
	else /* the shell's own (its box-policyd channel, ...) */
		sh_err(sh, "%s: Bad file descriptor: not open in this script (a script reaches "
			   "fds 0-2 and those its own redirections opened)",
		       w);
	return false;
}

static int
move_to(int from, int to)
{
	if (from == to) {
		fcntl(to, F_SETFD, 0);
		return 0;
	}
	if (dup2(from, to) < 0) {
		int e = errno;
		close(from);
		return -e;
	}
	close(from);
	return 0;
}

static int
heredoc_fd(struct sh_shell *sh, const char *text, size_t len)
{
	int fd = memfd_create("box-sh-heredoc", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return -e;
		}
		off += (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static bool
all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int
redir_apply(struct sh_shell *sh, struct redir *r, struct redir_state *save)
{
	for (; r; r = r->next) {
		int fd = r->fd;
		int flags = 0;
		switch (r->type) {
		case R_IN: flags = O_RDONLY; if (fd < 0) fd = 0; break;
		case R_OUT:
		case R_CLOBBER: flags = O_WRONLY | O_CREAT | O_TRUNC; if (fd < 0) fd = 1; break;
		case R_APPEND: flags = O_WRONLY | O_CREAT | O_APPEND; if (fd < 0) fd = 1; break;
		case R_RDWR: flags = O_RDWR | O_CREAT; if (fd < 0) fd = 0; break;
		case R_ALLOUT: flags = O_WRONLY | O_CREAT | O_TRUNC; fd = 1; break;
		case R_ALLAPPEND: flags = O_WRONLY | O_CREAT | O_APPEND; fd = 1; break;
		case R_DUPIN: if (fd < 0) fd = 0; break;
		case R_DUPOUT: if (fd < 0) fd = 1; break;
		case R_HEREDOC:
		case R_HERESTR: if (fd < 0) fd = 0; break;
		default: break;
		}
		if (!target_ok(sh, fd))
			return -1;
		if (r->type == R_HEREDOC || r->type == R_HERESTR) {
			char *text;
			if (r->type == R_HEREDOC)
				text = r->quoted ? xstrdup(r->body ? r->body : "")
						 : expand_heredoc(sh, r->body ? r->body : "");
			else {
				char *w = expand_str(sh, r->word, false);
				if (w) {
					size_t l = strlen(w);
					text = xmalloc(l + 2);
					memcpy(text, w, l);
					text[l] = '\n';
					text[l + 1] = 0;
					free(w);
				} else
					text = NULL;
			}
			if (!text)
				return -1;
			int hfd = heredoc_fd(sh, text, strlen(text));
			free(text);
			if (hfd < 0) {
				sh_err(sh, "cannot create temp file for here-document: %s", strerror(-hfd));
				return -1;
			}
			save_fd(sh, save, fd);
			move_to(hfd, fd);
			sh_fdset_put(&sh->script_fds, fd, true);
			continue;
		}
		char *w = expand_str(sh, r->word, false);
		if (!w)
			return -1;
		if (r->type == R_DUPIN || r->type == R_DUPOUT) {
			if (strcmp(w, "-") == 0) {
				save_fd(sh, save, fd);
				close(fd);
				sh_fdset_put(&sh->script_fds, fd, false);
				free(w);
				continue;
			}
			size_t wl = strlen(w);
			bool close_after = wl > 1 && w[wl - 1] == '-';
			if (close_after)
				w[wl - 1] = 0;
			if (all_digits(w)) {
				/* (more digits than any fd: out of the script's range, as any above it) */
				int src = strlen(w) > 6 ? SH_FD_SCRIPT_MAX : atoi(w);
				if (!source_ok(sh, src, w)) {
					free(w);
					return -1;
				}
				if (src != fd) {
					save_fd(sh, save, fd);
					bi_flush();
					if (dup2(src, fd) < 0) {
						sh_err(sh, "%s: %s", w, strerror(errno));
						free(w);
						return -1;
					}
					sh_fdset_put(&sh->script_fds, fd, true);
					if (close_after) {
						close(src);
						sh_fdset_put(&sh->script_fds, src, false);
					}
				}
				free(w);
				continue;
			}
			if (r->type == R_DUPOUT && r->fd < 0) {
				/* >&file is &>file */
				flags = O_WRONLY | O_CREAT | O_TRUNC;
				r->type = R_ALLOUT;
			} else {
				sh_err(sh, "%s: ambiguous redirect", w);
				free(w);
				return -1;
			}
		}
		if (!*w) {
			sh_err(sh, "%s: No such file or directory", w);
			free(w);
			return -1;
		}
		sh_update_fs(sh, w);
		int ofd;
		if (sh->opt_C && r->type == R_OUT) {
			ofd = sh_fs_open(&sh->fs, w, flags | O_EXCL, 0666);
			if (ofd == -EEXIST) {
				struct stat st;
				if (sh_fs_stat(&sh->fs, w, &st, true) == 0 && !S_ISREG(st.st_mode))
					ofd = sh_fs_open(&sh->fs, w, flags & ~O_TRUNC, 0666);
				else {
					sh_err(sh, "%s: cannot overwrite existing file", w);
					free(w);
					return -1;
				}
			}
		} else
			ofd = sh_fs_open(&sh->fs, w, flags, 0666);
		if (ofd < 0) {
			sh_err(sh, "%s: %s", w, strerror(-ofd));
			free(w);
			return -1;
		}
		free(w);
		if (r->type == R_ALLOUT || r->type == R_ALLAPPEND) {
			save_fd(sh, save, 1);
			save_fd(sh, save, 2);
			bi_flush();
			dup2(ofd, 2);
			move_to(ofd, 1);
			sh_fdset_put(&sh->script_fds, 1, true);
			sh_fdset_put(&sh->script_fds, 2, true);
			continue;
		}
		save_fd(sh, save, fd);
		bi_flush();
		int e = move_to(ofd, fd);
		if (e < 0) {
			sh_err(sh, "%d: %s", fd, strerror(-e));
			return -1;
		}
		sh_fdset_put(&sh->script_fds, fd, true);
	}
	return 0;
}
