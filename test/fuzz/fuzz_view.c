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
			bool inside = false;
			for (size_t k = 0; k < p->n_view && !inside; k++)
				inside = p->view[k]->kind != BOX__VIEW_KIND__VIEW_DENY &&
					 path_is_under(e->path, p->view[k]->path) &&
					 strcmp(e->path, p->view[k]->path) != 0;
			if (!inside)
				__builtin_trap();
		}
	}
	for (size_t k = 0; k < p->n_view; k++) {
		const Box__ViewEntry *pe = p->view[k];
		if (has(vw, pe->path, (int)pe->kind))
			continue;
		/* Only a mask may be left out, and only when what contains it in the view
		 * does not show the host there (a box-managed dir, a tmpfs, nothing). */
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
		if (in && in->kind != VK_MANAGED && in->kind != VK_TMPFS)
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
