/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_view.c — box-trampoline's mount view computed from a plan, without
 * privileges (box-trampoline/view.c, the list mount.c then mounts).
 *
 * Checks: the order (outer entries first, so the innermost decides), the
 * flags of every kind (system read-only, grants noexec for an agent, exec
 * entries keeping their grant's read-only/read-write state, masks read-only
 * noexec), the self binds between a grant and its mask, managed /tmp and
 * HOME, and that a mask nothing contains needs no self bind.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <linux/mount.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box-trampoline/view.h"
#include "tap.h"
#include "tramp_fail_stub.h"

struct fixture {
	Box__Plan plan;
	Box__Owner owner;
	Box__RuntimeDirs rt;
	Box__ViewEntry e[5];
	Box__ViewEntry *view[5];
};

static void
fixture_init(struct fixture *f, Box__SandboxKind kind)
{
	box__plan__init(&f->plan);
	box__owner__init(&f->owner);
	box__runtime_dirs__init(&f->rt);
	f->owner.uid = 1000;
	f->owner.gid = 1000;
	f->owner.home = "/home/me";
	f->rt.dir = "/run/box/1000/abc";
	f->rt.tmp = "/run/box/1000/abc/tmp";
	f->rt.var_tmp = "/run/box/1000/abc/var_tmp";
	f->rt.home = "/run/box/1000/abc/home";
	for (int i = 0; i < 5; i++) {
		box__view_entry__init(&f->e[i]);
		f->view[i] = &f->e[i];
	}
	f->e[0].path = "/srv/project";
	f->e[0].kind = BOX__VIEW_KIND__VIEW_WRITE;
	f->e[1].path = "/srv/project/a/b/secret";
	f->e[1].kind = BOX__VIEW_KIND__VIEW_DENY;
	f->e[1].mask = "/run/box/1000/abc/masks/0";
	f->e[2].path = "/srv/project/bin/tool";
	f->e[2].kind = BOX__VIEW_KIND__VIEW_EXEC;
	f->e[3].path = "/opt/ro";
	f->e[3].kind = BOX__VIEW_KIND__VIEW_READ;
	f->e[4].path = "/opt/ro/run";
	f->e[4].kind = BOX__VIEW_KIND__VIEW_EXEC;
	f->plan.kind = kind;
	f->plan.owner = &f->owner;
	f->plan.view = f->view;
	f->plan.n_view = 5;
	f->plan.runtime = &f->rt;
}

static const struct vent *
find(const struct view *vw, const char *path, int kind)
{
	for (size_t i = 0; i < vw->n; i++)
		if (strcmp(vw->v[i].path, path) == 0 && (kind < 0 || vw->v[i].kind == kind))
			return &vw->v[i];
	return NULL;
}

static size_t
index_of(const struct view *vw, const struct vent *e)
{
	return (size_t)(e - vw->v);
}

static void
collect(struct fixture *f, struct tramp *t, struct view *vw)
{
	*t = (struct tramp){.plan = &f->plan};
	*vw = (struct view){.t = t, .oldroot = -1, .newroot = -1, .masks = -1,
			    .agent = f->plan.kind == BOX__SANDBOX_KIND__SANDBOX_AGENT};
	view_collect(vw);
}

static void
test_agent_view(void)
{
	struct fixture f;
	struct tramp t;
	struct view vw;
	const uint64_t base = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	fixture_init(&f, BOX__SANDBOX_KIND__SANDBOX_AGENT);
	collect(&f, &t, &vw);

	/* Order: by depth, so /srv/project comes before everything inside it. */
	for (size_t i = 1; i < vw.n; i++)
		CHECK(vw.v[i - 1].depth <= vw.v[i].depth);
	const struct vent *usr = find(&vw, "/usr", VK_SYSTEM);
	CHECK(usr && usr->attr == (base | MOUNT_ATTR_RDONLY));
	const struct vent *etc = find(&vw, "/etc/hosts", VK_ETC);
	CHECK(etc && etc->attr == (base | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC));
	/* An agent's grants are noexec; a write grant is not read-only. */
	const struct vent *g = find(&vw, "/srv/project", BOX__VIEW_KIND__VIEW_WRITE);
	CHECK(g && g->attr == (base | MOUNT_ATTR_NOEXEC));
	const struct vent *ro = find(&vw, "/opt/ro", BOX__VIEW_KIND__VIEW_READ);
	CHECK(ro && ro->attr == (base | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC));
	/* Exec entries: executable, read-write inside a write grant, read-only inside a read one. */
	const struct vent *x1 = find(&vw, "/srv/project/bin/tool", BOX__VIEW_KIND__VIEW_EXEC);
	CHECK(x1 && x1->attr == base);
	const struct vent *x2 = find(&vw, "/opt/ro/run", BOX__VIEW_KIND__VIEW_EXEC);
	CHECK(x2 && x2->attr == (base | MOUNT_ATTR_RDONLY));
	/* The mask: read-only noexec, from its mask source, after its grant. */
	const struct vent *m = find(&vw, "/srv/project/a/b/secret", BOX__VIEW_KIND__VIEW_DENY);
	CHECK(m && m->attr == (base | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC));
	CHECK(m && m->src && strcmp(m->src, "/run/box/1000/abc/masks/0") == 0);
	CHECK(g && m && index_of(&vw, g) < index_of(&vw, m));
	/* Every directory between the grant and the mask is bound onto itself, with the grant's flags. */
	const struct vent *s1 = find(&vw, "/srv/project/a", VK_SELF);
	const struct vent *s2 = find(&vw, "/srv/project/a/b", VK_SELF);
	CHECK(s1 && s2 && s1->attr == g->attr && s2->attr == g->attr);
	CHECK(s2 && m && index_of(&vw, s2) < index_of(&vw, m));
	CHECK(find(&vw, "/srv", -1) == NULL);
	/* Managed /tmp, /var/tmp and HOME (no grant covers HOME). */
	const struct vent *tmp = find(&vw, "/tmp", VK_MANAGED);
	CHECK(tmp && strcmp(tmp->src, "/run/box/1000/abc/tmp") == 0);
	const struct vent *home = find(&vw, "/home/me", VK_MANAGED);
	CHECK(home && strcmp(home->src, "/run/box/1000/abc/home") == 0);
	view_entries_free(&vw);
}

static void
test_tool_view(void)
{
	struct fixture f;
	struct tramp t;
	struct view vw;
	const uint64_t base = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	fixture_init(&f, BOX__SANDBOX_KIND__SANDBOX_TOOL);
	f.rt.tmp = NULL;
	f.rt.home = NULL;
	/* A mask outside every grant needs no self bind. */
	f.e[1].path = "/elsewhere/x/secret";
	collect(&f, &t, &vw);
	/* A tool's grants may execute; without managed dirs it gets private tmpfs. */
	const struct vent *g = find(&vw, "/srv/project", BOX__VIEW_KIND__VIEW_WRITE);
	CHECK(g && g->attr == base);
	CHECK(find(&vw, "/tmp", VK_TMPFS) != NULL);
	CHECK(find(&vw, "/home/me", VK_TMPFS) != NULL);
	CHECK(find(&vw, "/var/tmp", VK_MANAGED) != NULL);
	size_t selfs = 0;
	for (size_t i = 0; i < vw.n; i++)
		selfs += vw.v[i].kind == VK_SELF;
	CHECK_INT(selfs, 0);
	view_entries_free(&vw);
}

/* box-shell: the agent's view (grants noexec, managed dirs) plus its binary, exec-capable. */
static void
test_shell_view(void)
{
	struct fixture f;
	struct tramp t;
	struct view vw;
	const uint64_t base = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	fixture_init(&f, BOX__SANDBOX_KIND__SANDBOX_SHELL);
	f.plan.workload_bin = "/opt/box/libexec/box-shell";
	collect(&f, &t, &vw);
	CHECK(vw.agent);
	const struct vent *g = find(&vw, "/srv/project", BOX__VIEW_KIND__VIEW_WRITE);
	CHECK(g && g->attr == (base | MOUNT_ATTR_NOEXEC));
	const struct vent *tmp = find(&vw, "/tmp", VK_MANAGED);
	CHECK(tmp && tmp->attr == (base | MOUNT_ATTR_NOEXEC) &&
	      strcmp(tmp->src, "/run/box/1000/abc/tmp") == 0);
	CHECK(find(&vw, "/home/me", VK_MANAGED) != NULL);
	const struct vent *bin = find(&vw, "/opt/box/libexec/box-shell", VK_WORKLOAD);
	CHECK(bin && bin->attr == (base | MOUNT_ATTR_RDONLY) && !bin->src);
	/* Only the file: its directory is not in the view. */
	CHECK(find(&vw, "/opt/box/libexec", -1) == NULL && find(&vw, "/opt/box", -1) == NULL);
	/* Inside a read grant it goes on top of it (mounted after). */
	view_entries_free(&vw);
	f.plan.workload_bin = "/opt/ro/box-shell";
	collect(&f, &t, &vw);
	const struct vent *ro = find(&vw, "/opt/ro", BOX__VIEW_KIND__VIEW_READ);
	bin = find(&vw, "/opt/ro/box-shell", VK_WORKLOAD);
	CHECK(ro && bin && index_of(&vw, ro) < index_of(&vw, bin));
	view_entries_free(&vw);
	/* An agent or tool plan has no such entry. */
	fixture_init(&f, BOX__SANDBOX_KIND__SANDBOX_AGENT);
	collect(&f, &t, &vw);
	for (size_t i = 0; i < vw.n; i++)
		CHECK(vw.v[i].kind != VK_WORKLOAD);
	view_entries_free(&vw);
}

int
main(void)
{
	RUN(test_agent_view);
	RUN(test_tool_view);
	RUN(test_shell_view);
	return tap_done();
}
