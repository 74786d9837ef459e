/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h — the one logging macro family for every box program.
 *
 * Lines go to stderr as "TITLE[PID]: function: message" (or "TITLE: message"
 * for user-facing tools), with an sd-daemon priority prefix "<N>" when stderr
 * is the journal (JOURNAL_STREAM matches stderr). *_errno variants append
 * strerror of the given negative-or-positive errno and return the negative
 * errno, so handlers can `return log_err_errno(r, "...")`.
 * Library code (common/ except this file, libboxpolicy/) never logs.
 * Trusts: format strings are literals; user data goes in '%s' arguments.
 */
#ifndef BOX_LOG_H
#define BOX_LOG_H

#include <stdarg.h>
#include <stdnoreturn.h>

enum log_level {
	LOG_LEVEL_ERR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/* Set once per process: the title and whether to prefix function names. */
void log_init(const char *title, int with_function);
/*
 * A box daemon's arguments (boxd starts each with fds): none (info and up),
 * "-n" (notices and up: what the user of an embedded box should see) or
 * "-q" (warnings and errors only: `boxctl run -q`). 0, or -1 for anything
 * else.
 */
int log_daemon_args(int argc, char **argv);
void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);

/* Returns -abs(err) (or -EIO when err is 0). */
int log_internal(enum log_level level, int err, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
noreturn void log_fatal_internal(int err, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(...) log_internal(LOG_LEVEL_DEBUG, 0, __func__, __VA_ARGS__)
#define log_info(...) log_internal(LOG_LEVEL_INFO, 0, __func__, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_LEVEL_NOTICE, 0, __func__, __VA_ARGS__)
#define log_warn(...) log_internal(LOG_LEVEL_WARNING, 0, __func__, __VA_ARGS__)
#define log_err(...) log_internal(LOG_LEVEL_ERR, 0, __func__, __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __func__, __VA_ARGS__)
#define log_warn_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __func__, __VA_ARGS__)
#define log_err_errno(e, ...) log_internal(LOG_LEVEL_ERR, (e), __func__, __VA_ARGS__)
/* fatal: log and exit(1). fatalx takes no errno. */
#define fatal(e, ...) log_fatal_internal((e), __func__, __VA_ARGS__)
#define fatalx(...) log_fatal_internal(0, __func__, __VA_ARGS__)

#endif
