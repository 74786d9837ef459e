/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_plan_validate.c — box_plan_validate / box_plan_decode / box_status_decode.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto/plan_validate.h"
#include "tap.h"

struct fixture {
	Box__Plan plan;
	Box__Owner owner;
	Box__RuntimeDirs rt;
	Box__Limits lim;
	Box__ViewEntry e[3];
	Box__ViewEntry *view[3];
	char *argv[2];
	char *env[2];
	uint32_t groups[1];
};

static void
fixture_init(struct fixture *f)
{
	box__plan__init(&f->plan);
	box__owner__init(&f->owner);
	box__runtime_dirs__init(&f->rt);
	box__limits__init(&f->lim);
	f->owner.uid = 1000;
	f->owner.gid = 1000;
	f->groups[0] = 27;
	f->owner.groups = f->groups;
	f->owner.n_groups = 1;
	f->owner.name = "me";
	f->owner.home = "/home/me";
	f->owner.shell = "/bin/sh";
	f->rt.dir = "/run/box/1000/abc";
	f->rt.tmp = "/run/box/1000/abc/tmp";
	f->rt.var_tmp = "/run/box/1000/abc/var_tmp";
	f->rt.dev_shm = "/run/box/1000/abc/dev_shm";
	f->rt.home = "/run/box/1000/abc/home";
	for (int i = 0; i < 3; i++) {
		box__view_entry__init(&f->e[i]);
		f->view[i] = &f->e[i];
	}
	f->e[0].path = "/home/me/project";
	f->e[0].kind = BOX__VIEW_KIND__VIEW_WRITE;
	f->e[1].path = "/home/me/project/box.ini";
	f->e[1].kind = BOX__VIEW_KIND__VIEW_DENY;
	f->e[1].mask = "/run/box/1000/abc/masks/0";
	f->e[2].path = "/opt/tool/bin/tool";
	f->e[2].kind = BOX__VIEW_KIND__VIEW_EXEC;
	f->argv[0] = "/opt/tool/bin/tool";
	f->argv[1] = "--flag";
	f->env[0] = "PATH=/usr/bin:/bin";
	f->env[1] = "HOME=/home/me";
	f->plan.kind = BOX__SANDBOX_KIND__SANDBOX_AGENT;
	f->plan.owner = &f->owner;
	f->plan.contain_egress = 1;
	f->plan.view = f->view;
	f->plan.n_view = 3;
	f->plan.runtime = &f->rt;
	f->plan.workspace = "/home/me/project";
	f->plan.argv = f->argv;
	f->plan.n_argv = 2;
	f->plan.env = f->env;
	f->plan.n_env = 2;
	f->plan.require_landlock = 1;
	f->plan.require_seccomp = 1;
}

static int
validate(struct fixture *f)
{
	char why[256];
	return box_plan_validate(&f->plan, why, sizeof(why));
}

static void
test_valid_plan(void)
{
	struct fixture f;
	fixture_init(&f);
	CHECK_INT(validate(&f), 0);
	/* Round trip through the wire format. */
	size_t len = box__plan__get_packed_size(&f.plan);
	uint8_t *buf = malloc(len);
	box__plan__pack(&f.plan, buf);
	Box__Plan *p = NULL;
	char why[256];
	CHECK_INT(box_plan_decode(buf, len, &p, why, sizeof(why)), 0);
	CHECK(p && p->n_view == 3);
	if (p)
		box__plan__free_unpacked(p, NULL);
	free(buf);
}

static void
test_paths(void)
{
	struct fixture f;
	static const char *const bad[] = {"relative", "/a/../b", "/a/", "/a//b", "/a/./b", "/",
					  "/proc/1", "/dev/sda", "/run/box/1000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fixture_init(&f);
		f.e[0].path = (char *)bad[i];
		CHECK_INT(validate(&f), -EINVAL);
	}
	fixture_init(&f);
	f.plan.workspace = "a/b";
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.argv[0] = "tool";
	CHECK_INT(validate(&f), -EINVAL);
	/* A grant that contains the runtime dir, or the owner's managed home. */
	fixture_init(&f);
	f.e[0].path = "/run/box";
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.e[0].path = "/home/me";
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.e[0].path = "/tmp";
	CHECK_INT(validate(&f), -EINVAL);
}

static void
test_masks(void)
{
	struct fixture f;
	fixture_init(&f);
	f.e[1].mask = NULL;
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.e[1].mask = "/tmp/elsewhere";
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.e[0].mask = "/run/box/1000/abc/masks/1";
	CHECK_INT(validate(&f), -EINVAL);
	/* The same path twice: only a grant plus its exec entry. */
	fixture_init(&f);
	f.e[2].path = "/home/me/project";
	CHECK_INT(validate(&f), 0);
	f.e[2].kind = BOX__VIEW_KIND__VIEW_READ;
	CHECK_INT(validate(&f), -EINVAL);
}

static void
test_ranges(void)
{
	struct fixture f;
	fixture_init(&f);
	f.plan.has_gateway_port = 1;
	f.plan.gateway_port = 70000;
	CHECK_INT(validate(&f), -ERANGE);
	f.plan.gateway_port = 8080;
	CHECK_INT(validate(&f), 0);
	f.plan.contain_egress = 0;
	CHECK_INT(validate(&f), -EINVAL); /* agent, and a port without egress */
	fixture_init(&f);
	f.owner.uid = (uint32_t)-1;
	CHECK_INT(validate(&f), -ERANGE);
	fixture_init(&f);
	f.plan.limits = &f.lim;
	f.lim.has_nofile = 1;
	f.lim.nofile = 1u << 30;
	CHECK_INT(validate(&f), -ERANGE);
	fixture_init(&f);
	f.plan.limits = &f.lim;
	f.lim.has_pids_max = 1;
	f.lim.pids_max = 50;
	CHECK_INT(validate(&f), -EINVAL); /* no cgroup, no nproc */
	f.lim.has_nproc = 1;
	f.lim.nproc = 50;
	CHECK_INT(validate(&f), 0);
	char *cg[] = {"/etc/evil"};
	f.lim.cgroups = cg;
	f.lim.n_cgroups = 1;
	CHECK_INT(validate(&f), -EINVAL);
	cg[0] = "/sys/fs/cgroup/pids/box/abc";
	CHECK_INT(validate(&f), 0);

	/* The pty: fds 0-2 only, a window size only with it and only in range. */
	fixture_init(&f);
	f.plan.has_pty_fds = 1;
	f.plan.pty_fds = 2;
	CHECK_INT(validate(&f), 0);
	f.plan.pty_fds = 8;
	CHECK_INT(validate(&f), -EINVAL);
	f.plan.pty_fds = 7;
	f.plan.has_pty_rows = 1;
	f.plan.pty_rows = 24;
	CHECK_INT(validate(&f), -EINVAL); /* rows without cols */
	f.plan.has_pty_cols = 1;
	f.plan.pty_cols = 80;
	CHECK_INT(validate(&f), 0);
	f.plan.pty_cols = 70000;
	CHECK_INT(validate(&f), -ERANGE);
	f.plan.pty_cols = 80;
	f.plan.pty_fds = 0;
	CHECK_INT(validate(&f), -EINVAL); /* a window size without a pty */
}

static void
test_env(void)
{
	struct fixture f;
	fixture_init(&f);
	f.env[1] = "PATH=/evil";
	CHECK_INT(validate(&f), -EINVAL);
	f.env[1] = "1BAD=x";
	CHECK_INT(validate(&f), -EINVAL);
	f.env[1] = "NOEQUALS";
	CHECK_INT(validate(&f), -EINVAL);
	f.env[1] = "=x";
	CHECK_INT(validate(&f), -EINVAL);
	f.env[1] = "EMPTY=";
	CHECK_INT(validate(&f), 0);
}

static void
test_owner_and_kind(void)
{
	struct fixture f;
	fixture_init(&f);
	f.owner.name = "bad:name";
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.plan.kind = BOX__SANDBOX_KIND__SANDBOX_TOOL;
	f.rt.shell_alias = "/usr/libexec/box/alias";
	CHECK_INT(validate(&f), -EINVAL); /* aliases are the agent's */
	fixture_init(&f);
	f.rt.tmp = NULL;
	CHECK_INT(validate(&f), -EINVAL); /* the agent needs its managed /tmp */
	fixture_init(&f);
	f.plan.kind = (Box__SandboxKind)7;
	CHECK(validate(&f) < 0);
	/* argv0, the name a tool sees (exec -a NAME): a tool's only; any name, '' too */
	fixture_init(&f);
	f.plan.argv0 = "ugrep";
	CHECK_INT(validate(&f), -EINVAL);
	fixture_init(&f);
	f.plan.kind = BOX__SANDBOX_KIND__SANDBOX_TOOL;
	f.rt.tmp = NULL;
	f.plan.argv0 = "ugrep";
	CHECK_INT(validate(&f), 0);
	f.plan.argv0 = "";
	CHECK_INT(validate(&f), 0);
}

/* A valid box-shell plan: the agent's view and dirs, its binary, three channels. */
static void
shell_init(struct fixture *f)
{
	fixture_init(f);
	f->plan.kind = BOX__SANDBOX_KIND__SANDBOX_SHELL;
	f->plan.workload_bin = "/usr/lib/box/box-shell";
	f->argv[0] = "/usr/lib/box/box-shell";
	f->plan.n_argv = 1;
	f->plan.has_pass_fds = 1;
	f->plan.pass_fds = 3;
}

static void
test_shell(void)
{
	struct fixture f;
	char why[256];

	shell_init(&f);
	CHECK_INT(validate(&f), 0);
	/* Round trip: the new fields survive the wire. */
	size_t len = box__plan__get_packed_size(&f.plan);
	uint8_t *buf = malloc(len);
	box__plan__pack(&f.plan, buf);
	Box__Plan *p = NULL;
	CHECK_INT(box_plan_decode(buf, len, &p, why, sizeof(why)), 0);
	CHECK(p && p->kind == BOX__SANDBOX_KIND__SANDBOX_SHELL && p->pass_fds == 3 &&
	      p->workload_bin && strcmp(p->workload_bin, "/usr/lib/box/box-shell") == 0);
	if (p)
		box__plan__free_unpacked(p, NULL);
	free(buf);
	/* The binary may lie outside every grant, e.g. under the managed /tmp. */
	f.plan.workload_bin = f.argv[0] = "/tmp/build/bin/box-shell";
	CHECK_INT(validate(&f), 0);
	shell_init(&f);
	f.plan.pass_fds = 0;
	CHECK_INT(validate(&f), 0);

	/* pass_fds: at most three. */
	shell_init(&f);
	f.plan.pass_fds = 4;
	CHECK_INT(validate(&f), -ERANGE);
	box_plan_validate(&f.plan, why, sizeof(why));
	CHECK(strstr(why, "pass_fds") != NULL);

	/* workload_bin: required, clean, argv[0], not masked, not built by the sandbox. */
	shell_init(&f);
	f.plan.workload_bin = NULL;
	CHECK_INT(validate(&f), -EINVAL);
	shell_init(&f);
	f.argv[0] = "/usr/bin/other";
	CHECK_INT(validate(&f), -EINVAL);
	box_plan_validate(&f.plan, why, sizeof(why));
	CHECK(strstr(why, "argv[0]") != NULL);
	static const char *const bad_bin[] = {"usr/bin/x", "/usr/../bin/x", "/", "/proc/self/exe",
					      "/dev/null", "/run/box/bin/sh", "/run/box/1000/abc/x",
					      "/run/box/1000"};
	for (size_t i = 0; i < sizeof(bad_bin) / sizeof(bad_bin[0]); i++) {
		shell_init(&f);
		f.plan.workload_bin = f.argv[0] = (char *)bad_bin[i];
		CHECK_INT(validate(&f), -EINVAL);
	}
	shell_init(&f);
	f.plan.workload_bin = f.argv[0] = "/home/me/project/box.ini";
	CHECK_INT(validate(&f), -EINVAL); /* under a deny entry */
	f.plan.workload_bin = f.argv[0] = "/home/me/project/box.ini/x";
	CHECK_INT(validate(&f), -EINVAL);

	/* No /run/box, no aliases, no gateway, no terminal; the agent's dirs. */
	static const size_t rt_field[] = {
		offsetof(Box__RuntimeDirs, run_box_bin), offsetof(Box__RuntimeDirs, shell_sock),
		offsetof(Box__RuntimeDirs, mcp_sock),	 offsetof(Box__RuntimeDirs, ca_pem),
		offsetof(Box__RuntimeDirs, shell_alias),
	};
	for (size_t i = 0; i < sizeof(rt_field) / sizeof(rt_field[0]); i++) {
		shell_init(&f);
		*(char **)((char *)&f.rt + rt_field[i]) = "/run/box/1000/abc/thing";
		CHECK_INT(validate(&f), -EINVAL);
	}
	shell_init(&f);
	f.plan.has_gateway_port = 1;
	f.plan.gateway_port = 8080;
	CHECK_INT(validate(&f), -EINVAL);
	shell_init(&f);
	f.plan.contain_egress = 0;
	CHECK_INT(validate(&f), -EINVAL);
	shell_init(&f);
	f.plan.has_pty_fds = 1;
	f.plan.pty_fds = 1;
	CHECK_INT(validate(&f), -EINVAL);
	static const size_t dir_field[] = {
		offsetof(Box__RuntimeDirs, tmp), offsetof(Box__RuntimeDirs, var_tmp),
		offsetof(Box__RuntimeDirs, dev_shm),
	};
	for (size_t i = 0; i < sizeof(dir_field) / sizeof(dir_field[0]); i++) {
		shell_init(&f);
		*(char **)((char *)&f.rt + dir_field[i]) = NULL;
		CHECK_INT(validate(&f), -EINVAL);
	}
	/* An ungranted HOME that is not managed is fine (as for the agent). */
	shell_init(&f);
	f.rt.home = NULL;
	CHECK_INT(validate(&f), 0);

	/* pass_fds and workload_bin are box-shell's alone. */
	static const Box__SandboxKind others[] = {BOX__SANDBOX_KIND__SANDBOX_AGENT,
						   BOX__SANDBOX_KIND__SANDBOX_TOOL};
	for (size_t i = 0; i < 2; i++) {
		fixture_init(&f);
		f.plan.kind = others[i];
		f.plan.has_pass_fds = 1;
		f.plan.pass_fds = 1;
		CHECK_INT(validate(&f), -EINVAL);
		fixture_init(&f);
		f.plan.kind = others[i];
		f.plan.workload_bin = "/opt/tool/bin/tool";
		CHECK_INT(validate(&f), -EINVAL);
		box_plan_validate(&f.plan, why, sizeof(why));
		CHECK(strstr(why, "workload_bin") != NULL);
	}

	/* start_gate is the agent's alone (a shell's fd 3 is its passed channel). */
	fixture_init(&f);
	f.plan.kind = BOX__SANDBOX_KIND__SANDBOX_AGENT;
	f.plan.has_start_gate = 1;
	f.plan.start_gate = 1;
	CHECK_INT(validate(&f), 0);
	fixture_init(&f);
	f.plan.kind = BOX__SANDBOX_KIND__SANDBOX_TOOL;
	f.plan.has_start_gate = 1;
	f.plan.start_gate = 1;
	CHECK_INT(validate(&f), -EINVAL);
	box_plan_validate(&f.plan, why, sizeof(why));
	CHECK(strstr(why, "start_gate") != NULL);
	shell_init(&f);
	f.plan.has_start_gate = 1;
	f.plan.start_gate = 1;
	CHECK_INT(validate(&f), -EINVAL);
}

static void
test_decode_refusals(void)
{
	struct fixture f;
	fixture_init(&f);
	size_t len = box__plan__get_packed_size(&f.plan);
	uint8_t *buf = malloc(len + 3);
	box__plan__pack(&f.plan, buf);
	Box__Plan *p = NULL;
	char why[256];
	/* An unknown field. */
	memcpy(buf + len, "\x98\x06\x01", 3);
	CHECK_INT(box_plan_decode(buf, len + 3, &p, why, sizeof(why)), -EBADMSG);
	CHECK(p == NULL);
	/* Truncated. */
	CHECK(box_plan_decode(buf, len / 2, &p, why, sizeof(why)) < 0);
	/* Too big. */
	CHECK_INT(box_plan_decode(buf, BOX_PLAN_BYTES_MAX + 1, &p, why, sizeof(why)), -E2BIG);
	CHECK_INT(box_plan_decode(buf, 0, &p, why, sizeof(why)), -E2BIG);
	free(buf);
}

static void
test_status(void)
{
	Box__SetupError e = BOX__SETUP_ERROR__INIT;
	e.step = "mount view";
	e.reason = "x";
	Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_ERROR;
	s.error = &e;
	uint8_t buf[256];
	size_t len = box__trampoline_status__pack(&s, buf);
	Box__TrampolineStatus *out = NULL;
	char why[128];
	CHECK_INT(box_status_decode(buf, len, &out, why, sizeof(why)), 0);
	if (out)
		box__trampoline_status__free_unpacked(out, NULL);
	e.step = "not a step";
	len = box__trampoline_status__pack(&s, buf);
	CHECK_INT(box_status_decode(buf, len, &out, why, sizeof(why)), -EINVAL);
	Box__ListenerFd l = BOX__LISTENER_FD__INIT;
	l.port = 0;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_LISTENER;
	s.listener = &l;
	len = box__trampoline_status__pack(&s, buf);
	CHECK_INT(box_status_decode(buf, len, &out, why, sizeof(why)), -ERANGE);
	CHECK(box_plan_step_is_known("seccomp"));
	CHECK(!box_plan_step_is_known("mount"));
}

/* snapshot_root (docs/snapshot.md): an absolute, clean path, never `/`, in any plan's kind. */
static void
test_snapshot_root(void)
{
	struct fixture f;
	char why[256];
	fixture_init(&f);
	f.plan.snapshot_root = "/home/me/project";
	CHECK_INT(validate(&f), 0);
	static const char *const bad[] = {"relative", "/a/../b", "/a/", "/", "/a//b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fixture_init(&f);
		f.plan.snapshot_root = (char *)bad[i];
		CHECK_INT(validate(&f), -EINVAL);
		box_plan_validate(&f.plan, why, sizeof(why));
		CHECK(strstr(why, "snapshot_root") != NULL);
	}
}

int
main(void)
{
	RUN(test_valid_plan);
	RUN(test_paths);
	RUN(test_masks);
	RUN(test_ranges);
	RUN(test_env);
	RUN(test_owner_and_kind);
	RUN(test_shell);
	RUN(test_decode_refusals);
	RUN(test_status);
	RUN(test_snapshot_root);
	return tap_done();
}
