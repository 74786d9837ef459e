/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c — stderr logging with journald priority prefixes.
 *
 * Under systemd, JOURNAL_STREAM names the device:inode of the journal stream;
 * when it matches our stderr each line starts with "<N>" so journald records
 * the priority. Daemons prefix "title[pid]: function: ", user-facing tools
 * just "title: ".
 * Trusts: callers pass literal formats (checked by the format attribute).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "parse.h"

static const char *log_title = "box";
static int log_with_function;
static int log_to_journal;
static enum log_level log_max_level = LOG_LEVEL_INFO;

static int
stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	char buf[64];
	uint64_t dev, ino;
	struct stat st;

	/* "DEV:INO", both decimal (systemd.exec(5)). */
	if (!js || strlen(js) >= sizeof(buf))
		return 0;
	(void)snprintf(buf, sizeof(buf), "%s", js);
	char *colon = strchr(buf, ':');
	if (!colon)
		return 0;
	*colon = '\0';
	if (parse_u64(buf, UINT64_MAX, &dev) < 0 || parse_u64(colon + 1, UINT64_MAX, &ino) < 0)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

void
log_init(const char *title, int with_function)
{
	log_title = title;
	log_with_function = with_function;
	log_to_journal = stderr_is_journal();
	if (getenv("BOX_DEBUG"))
		log_max_level = LOG_LEVEL_DEBUG;
}

int
log_daemon_args(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "-q") == 0 || strcmp(argv[1], "-n") == 0)) {
		log_set_max_level(argv[1][1] == 'q' ? LOG_LEVEL_WARNING : LOG_LEVEL_NOTICE);
		return 0;
	}
	return argc == 1 ? 0 : -1;
}

void
log_set_max_level(enum log_level level)
{
	log_max_level = level;
}

enum log_level
log_get_max_level(void)
{
	return log_max_level;
}

/*
 * One line, one write(2): stderr is often a file other processes write too (boxd's, its
 * daemons', the agent's output relayed into `>out 2>&1`), and a line written in pieces
 * lets another writer's line land inside it.
 */
static void __attribute__((format(printf, 4, 0)))
log_emit(enum log_level level, int err, const char *func, const char *fmt, va_list ap)
{
	char msg[2048], line[2560];
	int saved = errno, n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	char prio[8] = "";
	if (log_to_journal)
		snprintf(prio, sizeof(prio), "<%d>", (int)level);
	char where[192];
	if (log_with_function)
		snprintf(where, sizeof(where), "%s[%ld]: %s: ", log_title, (long)getpid(), func);
	else
		snprintf(where, sizeof(where), "%s: %s", log_title,
			 level == LOG_LEVEL_ERR ? "error: " :
			 level == LOG_LEVEL_WARNING ? "warning: " : "");
	if (err)
		n = snprintf(line, sizeof(line), "%s%s%s: %s\n", prio, where, msg, strerror(abs(err)));
	else
		n = snprintf(line, sizeof(line), "%s%s%s\n", prio, where, msg);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n'; /* cut, but still a line */
	}
	for (size_t off = 0; off < (size_t)n;) {
		ssize_t k = write(STDERR_FILENO, line + off, (size_t)n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	errno = saved;
}

int
log_internal(enum log_level level, int err, const char *func, const char *fmt, ...)
{
	if (level <= log_max_level) {
		va_list ap;
		va_start(ap, fmt);
		log_emit(level, err, func, fmt, ap);
		va_end(ap);
	}
	return err ? -abs(err) : -EIO;
}

void
log_fatal_internal(int err, const char *func, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_emit(LOG_LEVEL_ERR, err, func, fmt, ap);
	va_end(ap);
	exit(1);
}
