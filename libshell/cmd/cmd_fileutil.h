/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_fileutil.h — what box-shell's own file commands (cmd_file.c, cmd_ls.c,
 * cmd_find.c, cmd_cp.c, cmd_stat.c) share: a reentrant GNU-style option
 * parser (no getopt globals: a pipeline stage may run in the shell's own
 * process), path joining, GNU's mode strings and human sizes, and directory
 * walking whose entries are decided in batches (sh_fs_decide_entries) before
 * anything is done with them.
 * Trusts: nothing in argv or in the file system.
 */
#ifndef BOX_SHELL_CMD_FILEUTIL_H
#define BOX_SHELL_CMD_FILEUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cmd.h"

/* Option table entry: id = the short letter, or >= 256 for long-only. */
enum { FU_NOARG, FU_ARG, FU_OPTARG };
struct fu_opt {
	int id;
	const char *long_name;      /* NULL: short only */
	int arg;                    /* FU_NOARG, FU_ARG (short and long), FU_OPTARG (long; short only when attached) */
};

/* Returned by fu_parse after printing --help: the command returns 0. */
#define FU_HELP (-1000)

struct fu_parse {
	const char *name;           /* for messages */
	const struct fu_opt *opts;  /* ends with id 0 */
	bool permute;               /* GNU: options anywhere before "--" */
	int fail_status;            /* status on a bad option */
	const char *usage;          /* --help text (names the supported flags) */
	int (*on)(void *ctx, int id, const char *arg); /* 0, or a status (printed) */
	void *ctx;
};

/* Parses argv[1..]; fills *operands (malloc'd array, free it) and *n.
 * Returns 0, FU_HELP, or a status (the message already printed). */
int fu_getopt(struct sh_cmd *c, const struct fu_parse *p, int argc, char **argv,
	      char ***operands, int *n);

/* "NAME: invalid option -- 'x'" style helpers printing "Try 'NAME --help'". */
int fu_usage_error(struct sh_cmd *c, const char *name, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "NAME: message" on stderr; returns status. */
int fu_err(struct sh_cmd *c, int status, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* GNU's quoting of a file name in messages: 'x' (shell-quoted as GNU's locale C style). */
const char *fu_q(char *buf, size_t cap, const char *s);
#define FU_QBUF 4200
/* GNU's quote() ("locale" style, C locale): 'x' with \' and \\ escaped — used
 * for arguments that are not file names (dates, sizes). */
const char *fu_ql(char *buf, size_t cap, const char *s);

/* dir + "/" + name (no doubled slash); malloc'd, NULL on ENOMEM. */
char *fu_join(const char *dir, const char *name);
/* The last component of p (after trailing slashes are ignored), malloc'd. */
char *fu_basename(const char *p);

void fu_mode_string(mode_t m, char out[11]);
/* GNU human_readable with ceiling, base 1024, no "B": "512", "1.5K", "12M". */
void fu_human(uint64_t bytes, char *out, size_t cap);

/* A directory's entries (without . and ..), read through sh_fs_opendir. */
struct fu_dirent {
	char *name;
	unsigned char d_type;
	ino_t ino;
	bool permitted;             /* after fu_dir_stat_all */
	struct stat st;             /* after fu_dir_stat_all: its lstat, */
	int st_err;                 /* or -errno */
};
struct fu_dir {
	struct fu_dirent *e;
	size_t n;
	DIR *dir;                   /* still open: its fd is the decided directory */
};
/* Opens (decided as enumerate) and reads path; returns 0 or -errno. */
int fu_dir_read(struct sh_fs *fs, const char *path, struct fu_dir *d);
/* Each batch of up to 256 entries decided read_metadata, then those entries'
 * lstat through fsops at once, in order (each uses its verdict; a walk that
 * recursed, or decided a huge directory whole, before taking the verdicts
 * would leave them pending in fsops' bounded table). */
int fu_dir_stat_all(struct sh_fs *fs, const char *path, struct fu_dir *d);
/* Names (single components) in dir_path decided as (action, op) in batches;
 * fsops keeps each verdict for the next such operation on "dir_path/name"
 * (call it for a denied entry too: it fails with EACCES and prints why). */
int fu_decide_names(struct sh_fs *fs, const char *dir_path, char **names, size_t n,
		    enum sh_fs_action action, enum sh_fs_op op);
void fu_dir_free(struct fu_dir *d);
/* Sort entries by strcmp of the name (LC_ALL=C order). */
void fu_dir_sort(struct fu_dir *d);
/* Sort entries by inode number (GNU cp's reading order). */
void fu_dir_sort_ino(struct fu_dir *d);

/* true when the command should stop (SIGINT/timeout, or stdout failed) */
bool fu_interrupted(const struct sh_cmd *c);

/* Parses "N[suffix]" with suffixes K M G T P E (1024) and KB MB … (1000), b (512).
 * Returns 0 or -EINVAL / -ERANGE. */
int fu_parse_size(const char *s, int64_t *out);

/* Parse a time given to touch -d / date -d: "@N", "YYYY-MM-DD[ HH:MM[:SS][.frac]]",
 * "YYYY-MM-DDTHH:MM:SS", "now", "today", "yesterday", "tomorrow", optional
 * trailing "UTC"/"Z"/"+HHMM". Returns 0 or -EINVAL. */
int fu_parse_date(const char *s, bool utc, struct timespec *out);

/* The process's umask, read without changing it (/proc/self/status). */
mode_t fu_umask(void);

/* chmod-style mode: octal or symbolic ([ugoa]*[-+=]([rwxXst]*|[ugo]))[,...],
 * applied to old (is_dir for X); umask_v spares bits of who-less clauses.
 * Returns 0 and *out, or -EINVAL (the caller refuses setuid/setgid bits). */
int fu_mode_apply(const char *spec, mode_t old, bool is_dir, mode_t umask_v, mode_t *out);

/* Recursive removal as `rm -r` does it (one decision per entry: enumerate
 * each directory, remove_file / remove_dir each entry). verbose: GNU's
 * "removed 'x'" lines. Returns 0 or 1 (errors printed as NAME: ...). */
int fu_remove_tree(struct sh_cmd *c, const char *name, const char *path, bool is_dir,
		   bool verbose, int depth);

/* cp's copy, used by mv across file systems (see cmd_cp.c); known: src's
 * lstat when the caller has it (from a decided batch), else NULL. */
struct fu_copy_opts {
	bool recursive, preserve, no_deref, force, no_clobber, verbose, mv;
	const char *name;           /* "cp", "mv" or "install" */
};
int fu_copy(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src, const char *dst,
	    const struct stat *known, int depth);

#endif
