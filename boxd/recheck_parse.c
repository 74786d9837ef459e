/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck_parse.c — box-recheck's RecheckReply into boxd's struct
 * recheck_result (recheck_parse.h): the typed records "KIND PATH" (argv0,
 * program, workspace: one each; interp, denydir; loader (an ELF loader under
 * the system runtime, at most RECHECK_LOADERS_MAX, each once); maskdir/maskfile with an
 * optional maskvia after each, at most RECHECK_MASKS_MAX; socket, at most
 * RECHECK_SOCKETS_SHOWN, and sockets /TOTAL; scancut /time or /entries),
 * "tool.NAME PATH" (the canonical program of each [tool.NAME], once each),
 * "mcp.NAME PATH" (likewise for each stdio [mcp.NAME]),
 * the problems, and the state fds in the order of recheck.proto. Apart from
 * recheck.c (the helper's spawn and events) so that it can be fuzzed and
 * tested alone.
 * Trusts: the reply only after box_ipc_decode() validated it, and
 * re-validates every record path; the helper runs with the owner's rights
 * only, so whatever it reports the owner could reach itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "parse.h"
#include "path.h"
#include "recheck_parse.h"
#include "validate.h"

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
	if (kl > 5 && strncmp(rec, "tool.", 5) == 0) {
		/* "tool.NAME PATH": the canonical program of [tool.NAME], once per table */
		_cleanup_free_ char *name = strndup(rec + 5, kl - 5);
		if (!name)
			return -ENOMEM;
		if (!box_valid_name(name) || res->n_tools >= BOX_SECTIONS_MAX)
			return -EBADMSG;
		for (size_t i = 0; i < res->n_tools; i++)
			if (strcmp(res->tool_names[i], name) == 0)
				return -EBADMSG;
		size_t n = res->n_tools;
		int r = add_string(&res->tool_programs, &n, p);
		if (r < 0)
			return r;
		return add_string(&res->tool_names, &res->n_tools, name);
	}
	if (kl > 4 && strncmp(rec, "mcp.", 4) == 0) {
		/* "mcp.NAME PATH": the canonical program of a stdio [mcp.NAME], once each */
		_cleanup_free_ char *name = strndup(rec + 4, kl - 4);
		if (!name)
			return -ENOMEM;
		if (!box_valid_name(name) || res->n_mcp >= BOX_SECTIONS_MAX)
			return -EBADMSG;
		for (size_t i = 0; i < res->n_mcp; i++)
			if (strcmp(res->mcp_names[i], name) == 0)
				return -EBADMSG;
		size_t n = res->n_mcp;
		int r = add_string(&res->mcp_programs, &n, p);
		if (r < 0)
			return r;
		return add_string(&res->mcp_names, &res->n_mcp, name);
	}
	if (IS("interp"))
		return add_string(&res->interpreters, &res->n_interpreters, p);
	if (IS("loader")) {
		/* an ELF loader in the system runtime, once each (box-recheck's elf_loaders) */
		if (res->n_loaders >= RECHECK_LOADERS_MAX || !path_is_system_runtime(p))
			return -EBADMSG;
		for (size_t i = 0; i < res->n_loaders; i++)
			if (strcmp(res->loaders[i], p) == 0)
				return -EBADMSG;
		return add_string(&res->loaders, &res->n_loaders, p);
	}
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
		if (parse_u64(p + 1, SIZE_MAX, &t) < 0 || t == 0)
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

static int
take_problems(struct recheck_result *res, const Box__RecheckReply *rep)
{
	if (!rep->n_problems)
		return 0;
	res->problems = calloc(rep->n_problems, sizeof(*res->problems));
	if (!res->problems)
		return -ENOMEM;
	for (size_t i = 0; i < rep->n_problems; i++) {
		const Box__Problem *p = rep->problems[i];
		Box__Problem *q = problem_new(p->has_line ? p->line : 0, p->section, p->key, "%s",
					      p->message);
		if (!q)
			return -ENOMEM;
		res->problems[res->n_problems++] = q;
	}
	return 0;
}

/* The state files, in the order of recheck.proto; all of them or none (problems). */
static int
take_fds(struct recheck_result *res, const Box__RecheckReply *rep, struct box_ipc_msg *m,
	 bool detach)
{
	unsigned base = detach ? 6 : 5;
	unsigned want = base + res->telemetry_want;

	if (res->telemetry_want > BOX_TELEMETRY_FILES_MAX)
		return -EPROTO;
	if (rep->n_fds == 0)
		return res->n_problems ? 0 : -EPROTO;
	if (rep->n_fds != want || m->n_fds != want)
		return -EPROTO;
	/* The telemetry files: regular files open for appending, else the reply lies. */
	for (unsigned i = base; i < want; i++) {
		struct stat st;
		int fl = fcntl(m->fds[i], F_GETFL);
		if (fstat(m->fds[i], &st) < 0 || !S_ISREG(st.st_mode) || fl < 0 ||
		    !(fl & O_APPEND) || (fl & O_ACCMODE) == O_RDONLY)
			return -EPROTO;
	}
	for (unsigned i = base; i < want; i++)
		res->telemetry_fds[res->n_telemetry_fds++] = TAKE_FD(m->fds[i]);
	res->state_dirfd = TAKE_FD(m->fds[0]);
	res->lock_fd = TAKE_FD(m->fds[1]);
	res->policy_dirfd = TAKE_FD(m->fds[2]);
	res->decisions_fd = TAKE_FD(m->fds[3]);
	res->ca_fd = TAKE_FD(m->fds[4]);
	if (base == 6)
		res->log_fd = TAKE_FD(m->fds[5]);
	return 0;
}

int
recheck_parse_reply(struct recheck_result *res, const Box__RecheckReply *rep,
		    struct box_ipc_msg *m, bool detach)
{
	int r = 0;

	for (size_t i = 0; i < rep->n_disclosure && r >= 0; i++)
		r = take_record(res, rep->disclosure[i]);
	if (r >= 0)
		r = take_problems(res, rep);
	if (r >= 0)
		r = take_fds(res, rep, m, detach);
	if (r < 0)
		return r;
	if (!res->n_problems && (!res->argv0 || !res->program || !res->workspace))
		return -EPROTO;
	return 0;
}
