/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck_shared.c — refusal records and the mask rule shared by boxd and
 * box-recheck (recheck_shared.h).
 * Trusts: its arguments; pure functions (malloc aside). Never logs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "path.h"
#include "recheck_shared.h"

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

bool
own_paths_maskable(const Box__CfgFilesystem *fs, const char *p)
{
	bool inside = false;

	if (!fs)
		return false;
	Box__CfgPath **lists[] = { fs->read, fs->write, fs->read_file, fs->write_file, fs->exec };
	size_t ns[] = { fs->n_read, fs->n_write, fs->n_read_file, fs->n_write_file, fs->n_exec };
	for (size_t l = 0; l < ELEMENTSOF(lists); l++)
		for (size_t i = 0; i < ns[l]; i++) {
			if (strcmp(p, lists[l][i]->path) == 0)
				return false; /* granted by name: the user's explicit choice */
			if (path_is_under(p, lists[l][i]->path))
				inside = true;
		}
	for (size_t i = 0; i < fs->n_deny; i++)
		if (path_is_under(p, fs->deny[i]->path))
			return false; /* masked already */
	return inside;
}

Box__Problem *
state_dir_problem(uint32_t line, const char *path, const struct stat *st, int create_err,
		  unsigned owner_uid, const char *owner)
{
	if (!st && create_err)
		return problem_new(line, "box", "state_dir",
				   "cannot create %s as the box owner (%s): %s", path, owner,
				   strerror(create_err));
	if (!st)
		return NULL;
	if (!S_ISDIR(st->st_mode))
		return problem_new(line, "box", "state_dir", "%s is not a directory", path);
	if (st->st_uid != owner_uid)
		return problem_new(line, "box", "state_dir",
				   "%s is owned by uid %u, not by the box owner (%s)", path,
				   (unsigned)st->st_uid, owner);
	if (st->st_mode & 022)
		return problem_new(line, "box", "state_dir", "%s is writable by others (mode %04o)",
				   path, (unsigned)(st->st_mode & 07777));
	return NULL;
}
