/* SPDX-License-Identifier: Apache-2.0 */
/*
 * view.c — the mount view's entry list (docs/sandbox.md), from the plan alone.
 *
 * The system runtime and /etc files, the box-managed /tmp /var/tmp HOME (or
 * private tmpfs for a tool), every grant with its flags, every mask, and the
 * directories between a grant and a mask bound onto themselves so a mask
 * cannot be renamed away; exec entries keep the read-only or read-write state
 * of their grant; box-shell's binary (workload_bin) is bound read-only and
 * exec-capable at its host path, on top of whatever else shows that path.
 * box-shell gets exactly the agent's view otherwise (docs/design.md).
 * mount.c mounts the list in order. No system call here.
 * Trusts: the validated plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>

#include "cleanup.h"
#include "path.h"
#include "view.h"

static const char *const etc_files[] = {
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "hosts",	"host.conf",
	"gai.conf",    "services",   "protocols",    "localtime",     "ssl",	"ca-certificates",
	"alternatives", "mime.types",
};

static unsigned
path_depth(const char *p)
{
	unsigned d = 0;
	for (; *p; p++)
		if (*p == '/')
			d++;
	return d;
}

static void
vent_add(struct view *vw, const char *path, const char *src, int kind, int rank, uint64_t attr)
{
	if (vw->n == vw->cap) {
		size_t cap = vw->cap ? vw->cap * 2 : 64;
		struct vent *nv = reallocarray(vw->v, cap, sizeof(*nv));
		if (!nv)
			tramp_fail(vw->t, STEP_MOUNT, ENOMEM, "out of memory");
		vw->v = nv;
		vw->cap = cap;
	}
	vw->v[vw->n++] = (struct vent){
		.path = path, .src = src, .kind = kind, .depth = path_depth(path), .rank = rank,
		.attr = attr,
	};
}

static int
vent_cmp(const void *a, const void *b)
{
	const struct vent *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

static bool
is_write_kind(int k)
{
	return k == BOX__VIEW_KIND__VIEW_WRITE || k == BOX__VIEW_KIND__VIEW_WRITE_FILE ||
	       k == VK_MANAGED || k == VK_TMPFS;
}

/* Does an entry of this kind show the host's own file at its path (so a
 * directory under it can be bound from the host onto itself)? */
static bool
shows_host(int k)
{
	switch (k) {
	case BOX__VIEW_KIND__VIEW_READ:
	case BOX__VIEW_KIND__VIEW_WRITE:
	case BOX__VIEW_KIND__VIEW_EXEC:
	case VK_SYSTEM:
	case VK_ETC:
		return true;
	default:
		return false; /* VK_MANAGED, VK_TMPFS: a different directory; files contain nothing */
	}
}

/* The innermost non-deny entry containing `path` (optionally not `path` itself). */
static const struct vent *
enclosing(const struct view *vw, const char *path, bool strict, bool grants_only)
{
	const struct vent *best = NULL;
	for (size_t i = 0; i < vw->n; i++) {
		const struct vent *e = &vw->v[i];
		if (e->kind == BOX__VIEW_KIND__VIEW_DENY || e->kind == VK_SELF ||
		    e->kind == VK_DROPPED || e->kind == VK_WORKLOAD)
			continue;
		if (grants_only && e->kind == BOX__VIEW_KIND__VIEW_EXEC)
			continue;
		if (!path_is_under(path, e->path) || (strict && strcmp(path, e->path) == 0))
			continue;
		if (!best || e->depth > best->depth ||
		    (e->depth == best->depth && e->rank > best->rank))
			best = e;
	}
	return best;
}

void
view_collect(struct view *vw)
{
	struct tramp *t = vw->t;
	const Box__Plan *p = t->plan;
	const Box__RuntimeDirs *rt = p->runtime;
	const uint64_t ro = MOUNT_ATTR_RDONLY, base = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	vw->agent = p->kind == BOX__SANDBOX_KIND__SANDBOX_AGENT ||
		    p->kind == BOX__SANDBOX_KIND__SANDBOX_SHELL;
	const uint64_t grant_noexec = vw->agent ? MOUNT_ATTR_NOEXEC : 0;

	for (size_t i = 0; i < ELEMENTSOF(path_system_runtime); i++)
		vent_add(vw, path_system_runtime[i], NULL, VK_SYSTEM, 0, base | ro);
	for (size_t i = 0; i < ELEMENTSOF(etc_files); i++) {
		char *path = path_join("/etc", etc_files[i]);
		if (!path)
			tramp_fail(t, STEP_MOUNT, ENOMEM, "out of memory");
		vent_add(vw, path, NULL, VK_ETC, 0, base | ro | MOUNT_ATTR_NOEXEC);
	}

	/* Box-managed directories, or private tmpfs for a tool. */
	const uint64_t tmp_attr = base | grant_noexec;
	if (rt->tmp)
		vent_add(vw, "/tmp", rt->tmp, VK_MANAGED, 0, tmp_attr);
	else
		vent_add(vw, "/tmp", NULL, VK_TMPFS, 0, tmp_attr);
	if (rt->var_tmp)
		vent_add(vw, "/var/tmp", rt->var_tmp, VK_MANAGED, 0, tmp_attr);
	else
		vent_add(vw, "/var/tmp", NULL, VK_TMPFS, 0, tmp_attr);

	bool home_granted = false;
	for (size_t i = 0; i < p->n_view; i++) {
		const Box__ViewEntry *e = p->view[i];
		if (e->kind != BOX__VIEW_KIND__VIEW_DENY && path_is_under(p->owner->home, e->path))
			home_granted = true;
	}
	if (!home_granted && strcmp(p->owner->home, "/") != 0 &&
	    !path_is_under(p->owner->home, "/tmp") && !path_is_under(p->owner->home, "/var/tmp")) {
		if (rt->home)
			vent_add(vw, p->owner->home, rt->home, VK_MANAGED, 0, tmp_attr);
		else if (!vw->agent)
			vent_add(vw, p->owner->home, NULL, VK_TMPFS, 0, tmp_attr);
	}

	for (size_t i = 0; i < p->n_view; i++) {
		const Box__ViewEntry *e = p->view[i];
		switch (e->kind) {
		case BOX__VIEW_KIND__VIEW_READ:
		case BOX__VIEW_KIND__VIEW_READ_FILE:
			vent_add(vw, e->path, NULL, (int)e->kind, 0, base | ro | grant_noexec);
			break;
		case BOX__VIEW_KIND__VIEW_WRITE:
		case BOX__VIEW_KIND__VIEW_WRITE_FILE:
			vent_add(vw, e->path, NULL, (int)e->kind, 0, base | grant_noexec);
			break;
		case BOX__VIEW_KIND__VIEW_EXEC:
			vent_add(vw, e->path, NULL, (int)e->kind, 1, 0); /* attr below */
			break;
		case BOX__VIEW_KIND__VIEW_DENY:
			vent_add(vw, e->path, e->mask, (int)e->kind, 3,
				 base | ro | MOUNT_ATTR_NOEXEC);
			break;
		case BOX__VIEW_KIND__VIEW_INVALID:
		case _BOX__VIEW_KIND_IS_INT_SIZE:
		default:
			tramp_fail(t, STEP_MOUNT, EINVAL, "view entry %s: bad kind", e->path);
		}
	}

	/* box-shell's binary: the validator refused it anywhere a mask covers. */
	if (p->workload_bin)
		vent_add(vw, p->workload_bin, NULL, VK_WORKLOAD, 2, base | ro);

	/* exec entries keep the read-only or read-write state of their grant. */
	size_t n_plan = vw->n;
	for (size_t i = 0; i < n_plan; i++) {
		struct vent *e = &vw->v[i];
		if (e->kind != BOX__VIEW_KIND__VIEW_EXEC)
			continue;
		const struct vent *g = enclosing(vw, e->path, false, true);
		e->attr = base | ((g && is_write_kind(g->kind)) ? 0 : ro);
	}

	/*
	 * The snapshot (docs/snapshot.md): a grant that strictly contains its
	 * root (a tool's `write = ~` around the agent's workspace) would show the
	 * host's workspace; the root is bound again, from the box's overlay
	 * (mount.c's open_host), with that grant's flags.
	 */
	if (p->snapshot_root) {
		bool have = false;
		for (size_t k = 0; k < vw->n; k++)
			if (strcmp(vw->v[k].path, p->snapshot_root) == 0 &&
			    vw->v[k].kind != BOX__VIEW_KIND__VIEW_DENY)
				have = true;
		const struct vent *g = have ? NULL : enclosing(vw, p->snapshot_root, true, false);
		if (g && shows_host(g->kind) && g->kind != VK_SYSTEM && g->kind != VK_ETC) {
			char *keep = strdup(p->snapshot_root);
			if (!keep)
				tramp_fail(t, STEP_MOUNT, ENOMEM, "out of memory");
			vent_add(vw, keep, NULL, VK_SELF, 2, g->attr);
			n_plan = vw->n;
		}
	}

	/*
	 * Masks: every directory between the innermost entry containing the
	 * mask and the mask itself is bound onto itself (with that entry's
	 * flags) so it cannot be renamed. The binds come from the host path,
	 * so that entry must show the host at the same path: a grant, the
	 * system runtime or an /etc entry. A mask whose innermost container
	 * is a box-managed directory or a private tmpfs (an ungranted /tmp,
	 * /var/tmp or HOME), or that nothing contains, hides nothing that is
	 * in the view: it is dropped, never bound — binding its parents from
	 * the host would put ungranted host directories into the view, with
	 * the managed directory's write rights (box.ini in ~/p beside a grant
	 * of ~/p/src must not make ~/p writable).
	 */
	size_t n_drop = 0;
	for (size_t i = 0; i < n_plan; i++) {
		struct vent *d = &vw->v[i];
		if (d->kind != BOX__VIEW_KIND__VIEW_DENY)
			continue;
		const struct vent *g = enclosing(vw, d->path, true, false);
		if (!g || !shows_host(g->kind)) {
			d->kind = VK_DROPPED;
			n_drop++;
			continue;
		}
		const char *gpath = g->path;
		uint64_t gattr = g->attr;
		_cleanup_free_ char *dir = NULL;
		if (path_dirname(d->path, &dir) < 0)
			tramp_fail(t, STEP_MOUNT, ENOMEM, "out of memory");
		while (strcmp(dir, gpath) != 0 && path_is_under(dir, gpath)) {
			bool have = false;
			for (size_t k = 0; k < vw->n; k++)
				if (strcmp(vw->v[k].path, dir) == 0 && vw->v[k].kind != BOX__VIEW_KIND__VIEW_DENY)
					have = true;
			if (!have) {
				char *keep = strdup(dir);
				if (!keep)
					tramp_fail(t, STEP_MOUNT, ENOMEM, "out of memory");
				vent_add(vw, keep, NULL, VK_SELF, 2, gattr);
			}
			char *parent = NULL;
			if (path_dirname(dir, &parent) < 0)
				tramp_fail(t, STEP_MOUNT, ENOMEM, "out of memory");
			free(dir);
			dir = parent;
		}
	}
	if (n_drop) {
		size_t o = 0;
		for (size_t i = 0; i < vw->n; i++)
			if (vw->v[i].kind != VK_DROPPED)
				vw->v[o++] = vw->v[i];
		vw->n = o;
	}
	qsort(vw->v, vw->n, sizeof(*vw->v), vent_cmp);
}

void
view_entries_free(struct view *vw)
{
	for (size_t i = 0; i < vw->n; i++)
		if (vw->v[i].kind == VK_ETC || vw->v[i].kind == VK_SELF)
			free((char *)vw->v[i].path);
	free(vw->v);
	vw->v = NULL;
	vw->n = vw->cap = 0;
}
