/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmdutil.h — helpers the own commands share beyond cmd.h (cmdutil.c):
 * sh_out set-up and release, the command's name for messages, a reentrant
 * GNU-style option parser (sh_opt), a line reader (sh_in), input opening.
 * Trusts: nothing.
 */
#ifndef BOX_SHELL_CMDUTIL_H
#define BOX_SHELL_CMDUTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmd.h"

/* An empty output on fd; the 64 KiB buffer is malloc'd on first write. */
void sh_out_init(struct sh_out *o, int fd);
/* Flush, then free the buffer (malloc'd by sh_out or by the caller). Returns
 * the flush's result (the sticky error, if any). */
int sh_out_release(struct sh_out *o);
int sh_out_vprintf(struct sh_out *o, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * regcomp(3), first refusing a regex whose nested counted repetitions
 * multiply past RE_DUP_MAX ((a{1,255}){1,255}){1,255}: glibc would build
 * an automaton of 255^3 copies, taking minutes and gigabytes). Returns
 * REG_ESPACE for those (regerror: "Memory exhausted"), else regcomp's code.
 */
struct re_pattern_buffer;
int sh_regcomp(struct re_pattern_buffer *re, const char *src, int cflags);

/* The name messages start with: c->fs->cmd_name, else "box-shell". */
const char *sh_cmd_name(const struct sh_cmd *c);


/* GNU getopt_long without globals. Options may follow operands (GNU's
 * permutation) unless shortopts starts with '+'; "--" ends options; a lone
 * "-" is an operand. Errors are printed as glibc prints them and return '?'. */
enum { SH_NO_ARG, SH_REQ_ARG, SH_OPT_ARG };
struct sh_longopt {
	const char *name;
	int has_arg;
	int val;
};
struct sh_opt {
	struct sh_cmd *c;
	int argc;
	char **argv;
	const char *shortopts;
	const struct sh_longopt *longopts;
	int ind, sub;
	bool posix, dashdash;
	int opt;               /* the short option character just seen */
	char *arg;             /* its argument, or NULL */
	const char *longname;  /* the long option's full name, or NULL */
	char **operands;       /* the non-option words, in order (after -1) */
	int n_operands;
};
void sh_opt_init(struct sh_opt *g, struct sh_cmd *c, int argc, char **argv,
		 const char *shortopts, const struct sh_longopt *longopts);
/* The next option's val (short: its character), '?' on error, -1 at the end. */
int sh_opt_next(struct sh_opt *g);
void sh_opt_done(struct sh_opt *g);
/* "Usage: NAME USAGE" (when usage) + "Try 'NAME --help' ..." on stderr. */
int sh_cmd_usage_error(struct sh_cmd *c, int status, const char *usage);

/* A buffered reader of an fd (a file, a pipe), growing for long lines. */
struct sh_in {
	int fd;
	char *buf;
	size_t start, end, cap;
	size_t total;
	bool eof;
	int error;
	volatile sig_atomic_t *interrupted;
};
void sh_in_init(struct sh_in *in, int fd, volatile sig_atomic_t *interrupted);
void sh_in_release(struct sh_in *in);
/* The next line with its '\n' (the last may lack it): its length, 0 at EOF,
 * -errno. *line points into the buffer until the next call. */
ssize_t sh_in_getline(struct sh_in *in, char **line);
/* Whatever is buffered or one read's worth: length, 0 at EOF, -errno. */
ssize_t sh_in_read(struct sh_in *in, char **data);
/* All of fd into a malloc'd NUL-terminated buffer. */
int sh_read_fd_all(int fd, volatile sig_atomic_t *interrupted, char **data, size_t *len);
/* How many '\n' bytes buf[0..n) holds (16 bytes a step where SSE2 is there). */
uint64_t sh_count_newlines(const char *buf, size_t n);
/*
 * A read of FD that returns fewer bytes than asked has reached the end of the
 * file: FD's file system is a local disk or memory one (ext4, xfs, btrfs, f2fs,
 * tmpfs, overlayfs), whose reads of a regular file come short only at its end
 * (as it is at that moment), unlike /proc, sysfs, FUSE or NFS. One fstatfs.
 * For a caller that opened FD from a directory entry of a regular file and would
 * otherwise read again only to be told 0.
 */
bool sh_fd_short_read_is_eof(int fd);

/* "-" = c->in (returns 0: do not close), else sh_fs_open O_RDONLY (returns
 * 1: close it); -errno on failure. */
int sh_cmd_open_input(struct sh_cmd *c, const char *name, int *fd);
/* Interrupted, or stdout failed (EPIPE): stop producing. */
bool sh_cmd_stopped(const struct sh_cmd *c);
/* Flush stdout; 141 after EPIPE, "NAME: write error: ..." + 1 after another
 * write error, 130 when interrupted, else status. */
int sh_cmd_finish(struct sh_cmd *c, int status);

/* A file name as GNU's messages spell it (C locale): as is when it needs no
 * quoting and !always, else in '...' ('\'' for a quote). The result lives
 * until the 8th later call in this thread. */
const char *sh_qname(const char *name, bool always);

/* Parse a count with GNU's suffixes (b 512, kB 1000, K KiB 1024, MB M ...).
 * Returns 0, -EINVAL (not a number), -ERANGE (too big: *v = UINT64_MAX). */
int sh_parse_count(const char *s, uint64_t *v);

#endif
