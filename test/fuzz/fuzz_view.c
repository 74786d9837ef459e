/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_view.c — box-trampoline's plan path without privileges: the plan
 * decoder and validator (box_plan_decode), then the mount view computed from
 * every plan they accept (box-trampoline/view.c, the list mount.c mounts).
 *
 * For a valid plan the view must be computed without failing, sorted outer
 * first, every grant and mask of the plan in it, every mask read-only and
 * noexec, every self bind strictly inside a grant, nothing leaked.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <linux/mount.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "box-trampoline/view.h"
#include "path.h"
#include "proto/plan_validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A validated plan must never make the view fail. */
noreturn void
tramp_fail(struct tramp *t, const char *step, int err, const char *fmt, ...)
{
	(void)t;
	(void)step;
	(void)err;
	(void)fmt;
	__builtin_trap();
}

static bool
has(const struct view *vw, const char *path, int kind)
{
	for (size_t i = 0; i < vw->n; i++)
		if (strcmp(vw->v[i].path, path) == 0 && vw->v[i].kind == kind)
			return true;
	return false;
}

static void
check_view(const Box__Plan *p, const struct view *vw)
{
	const uint64_t mask_attr =
		MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC;

	for (size_t i = 0; i < vw->n; i++) {
		const struct vent *e = &vw->v[i];
		if (e->path[0] != '/' || (i > 0 && vw->v[i - 1].depth > e->depth))
			__builtin_trap();
		if (!(e->attr & MOUNT_ATTR_NOSUID) || !(e->attr & MOUNT_ATTR_NODEV))
			__builtin_trap();
		if (e->kind == BOX__VIEW_KIND__VIEW_DENY && (e->attr != mask_attr || !e->src))
			__builtin_trap();
		if (e->kind == VK_SELF) {
			/* A self bind copies the host at its own path: only strictly inside an
			 * entry that shows the host there (a grant, the system runtime, /etc). */
			bool inside = false;
			for (size_t k = 0; k < vw->n && !inside; k++) {
				const struct vent *g = &vw->v[k];
				bool host = g->kind == BOX__VIEW_KIND__VIEW_READ ||
					    g->kind == BOX__VIEW_KIND__VIEW_WRITE ||
					    g->kind == BOX__VIEW_KIND__VIEW_EXEC || g->kind == VK_SYSTEM ||
					    g->kind == VK_ETC;
				inside = host && path_is_under(e->path, g->path) &&
					 strcmp(e->path, g->path) != 0;
			}
			if (!inside)
				__builtin_trap();
		}
	}
	for (size_t k = 0; k < p->n_view; k++) {
		const Box__ViewEntry *pe = p->view[k];
		if (has(vw, pe->path, (int)pe->kind))
			continue;
		/* Only a mask may be left out, and only when what contains it in the view
		 * does not show the host there (a box-managed dir, a tmpfs, nothing). Ties in
		 * depth are not broken here: the innermost by depth decides. */
		if (pe->kind != BOX__VIEW_KIND__VIEW_DENY)
			__builtin_trap();
		const struct vent *in = NULL;
		for (size_t i = 0; i < vw->n; i++) {
			const struct vent *e = &vw->v[i];
			if (e->kind == BOX__VIEW_KIND__VIEW_DENY || e->kind == VK_SELF ||
			    !path_is_under(pe->path, e->path) || strcmp(pe->path, e->path) == 0)
				continue;
			if (!in || e->depth > in->depth)
				in = e;
		}
		/* (A file grant "containing" it is a plan no boxd builds: nothing to hide either.) */
		if (in && (in->kind == BOX__VIEW_KIND__VIEW_READ || in->kind == BOX__VIEW_KIND__VIEW_WRITE ||
			   in->kind == BOX__VIEW_KIND__VIEW_EXEC || in->kind == VK_SYSTEM ||
			   in->kind == VK_ETC))
			__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	Box__Plan *p = NULL;

	if (box_plan_decode(data, size, &p, why, sizeof(why)) != 0)
		return 0;
	struct tramp t = {.plan = p, .status_fd = -1, .parent_pipe = -1, .pty_slave = -1};
	struct view vw = {.t = &t, .oldroot = -1, .newroot = -1, .masks = -1,
			  .agent = p->kind == BOX__SANDBOX_KIND__SANDBOX_AGENT};
	view_collect(&vw);
	check_view(p, &vw);
	view_entries_free(&vw);
	box__plan__free_unpacked(p, NULL);
	return 0;
}
