/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_config.c — box.ini loading through the API (boxctl/config_*.c).
 *
 * What the golden tests in test/config cannot reach: host probes fed with
 * fixture cgroup trees and a chosen Landlock ABI, the struct handed to the
 * BoxSpec builder, the error line format, and that no secret reaches an
 * error message, the host-free parser (box_config_parse_buffer) with its
 * passwd fixture. Most loads are `offline` (no file system access).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxctl/config.h"
#include "tap.h"

static char tmpdir[64];

static int
load(const char *text, const struct box_config_options *opts, struct box_config **cfg,
     struct box_config_errors *errs)
{
	return box_config_load_buffer("t.ini", text, strlen(text), opts, cfg, errs);
}

static char *
errors_text(const struct box_config_errors *errs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	box_config_errors_print(f, errs);
	fclose(f);
	return buf;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void
test_error_format(void)
{
	struct box_config_options o = { .offline = true };
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	int r = load("key = outside\n[box]\nname = ok\nnope = 1\n[agent]\n[weird]\n", &o, &cfg,
		     &errs);
	CHECK_INT(r, -EINVAL);
	CHECK(cfg == NULL);
	char *t = errors_text(&errs);
	CHECK_STR(t, "boxctl: t.ini:1: a key outside any section; start with a [section] header\n"
		     "boxctl: t.ini:4: [box] nope: unknown key; accepted: name policy state_dir require "
		     "timeout history_sync command_timeout show_policy ask_timeout ask snapshot snapshot_max\n"
		     "boxctl: t.ini:6: [weird]: unknown section; accepted: [box] [agent] [agent.env] "
		     "[agent.filesystem] [tool.NAME] [tool.NAME.env] [tool.NAME.filesystem] "
		     "[tool.NAME.network] [egress.NAME] [mcp.NAME] [mcp.NAME.env] "
		     "[mcp.NAME.filesystem] [mcp.NAME.network] [telemetry.NAME] [gateway]\n");
	free(t);
	box_config_errors_clear(&errs);
	CHECK_INT(errs.n, 0);
}

static void
test_struct(void)
{
	struct box_config_options o = { .offline = true };
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	int r = load("[box]\nname = s\ntimeout = 2m\n"
		     "[agent]\ncommand = prog \"a b\"\n  c\n"
		     "[agent.filesystem]\nread = /srv/a\n  /srv/b\nwrite = ~/w\n"
		     "[egress.e]\ndestinations = *.Example.com:8443/v1\nsecret = env://TOKEN\n"
		     "[gateway]\nport = 9000\n",
		     &o, &cfg, &errs);
	CHECK_INT(r, 0);
	if (!cfg) {
		char *t = errors_text(&errs);
		printf("# %s", t);
		free(t);
		box_config_errors_clear(&errs);
		return;
	}
	CHECK_STR(cfg->box.name.value, "s");
	CHECK_INT(cfg->box.name.src.line, 2);
	CHECK_INT(cfg->box.timeout_ms.value, 120000);
	CHECK(cfg->box.timeout_ms.set);
	CHECK_INT(cfg->box.require.value, BOX_LAYER_ALL);
	CHECK(!cfg->box.require.set);
	CHECK_INT(cfg->agent.proc.command.argc, 3);
	CHECK_STR(cfg->agent.proc.command.argv[1], "a b");
	CHECK_STR(cfg->agent.proc.command.argv[2], "c");
	CHECK_INT(cfg->agent.proc.fs.lists[BOX_FS_READ].n, 2);
	CHECK_STR(cfg->agent.proc.fs.lists[BOX_FS_READ].v[1].path, "/srv/b");
	CHECK_INT(cfg->agent.proc.fs.lists[BOX_FS_READ].v[1].src.line, 9);
	CHECK_STR(cfg->agent.proc.fs.lists[BOX_FS_READ].v[1].src.file, "t.ini");
	CHECK_INT(cfg->agent.proc.fs.lists[BOX_FS_WRITE].n, 1);
	CHECK(cfg->agent.proc.fs.lists[BOX_FS_WRITE].v[0].path[0] == '/');
	CHECK_STR(cfg->agent.proc.fs.lists[BOX_FS_WRITE].v[0].spelling, "~/w");
	CHECK_INT(cfg->n_egress, 1);
	CHECK(cfg->egress[0].dest[0].wildcard);
	CHECK_STR(cfg->egress[0].dest[0].host, "example.com");
	CHECK_INT(cfg->egress[0].dest[0].port, 8443);
	CHECK_STR(cfg->egress[0].dest[0].path_prefix, "/v1");
	CHECK_STR(cfg->egress[0].variable.value, "TOKEN");
	CHECK_STR(cfg->egress[0].header.value, "Authorization");
	CHECK_STR(cfg->egress[0].prefix.value, "Bearer ");
	CHECK_STR(cfg->egress[0].placeholder_prefix.value, "box_");
	CHECK_INT(cfg->gateway.port.value, 9000);
	CHECK_INT(cfg->gateway.idle_timeout_ms.value, 300000);
	CHECK_INT(cfg->gateway.max_request_body.value, 64 << 20);
	box_config_free(cfg);
}

static void
test_landlock_gate(void)
{
#define LANDLOCK_TEXT                                                                  \
	"[box]\nname = l\n%s\n[agent]\ncommand = /bin/true\n"                           \
	"[tool.t]\ncommand = /bin/true\n[tool.t.network]\ncontain_egress = false\n"
	char buf[512];
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };

	struct box_config_options o = { .offline = true, .landlock_abi = 5 };
	snprintf(buf, sizeof(buf), LANDLOCK_TEXT, "");
	CHECK_INT(load(buf, &o, &cfg, &errs), -EINVAL);
	char *t = errors_text(&errs);
	CHECK_STR(t, "boxctl: t.ini:9: [tool.t.network] contain_egress: false needs Landlock ABI 6 "
		     "(this kernel: 5), or [box] require without landlock\n");
	free(t);
	box_config_errors_clear(&errs);

	snprintf(buf, sizeof(buf), LANDLOCK_TEXT, "require = userns mountns netns seccomp");
	CHECK_INT(load(buf, &o, &cfg, &errs), 0);
	box_config_free(cfg);

	o.landlock_abi = 6;
	snprintf(buf, sizeof(buf), LANDLOCK_TEXT, "");
	CHECK_INT(load(buf, &o, &cfg, &errs), 0);
	box_config_free(cfg);
	CHECK_INT(errs.n, 0);
	box_config_errors_clear(&errs);
}

static void
test_cgroup_probe(void)
{
	char mi[128], unified[128], ctl[160];
	struct box_host_cgroups cg;

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	snprintf(unified, sizeof(unified), "%s/sys/fs/cgroup/unified", tmpdir);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", unified);
	CHECK_INT(system(cmd), 0);
	snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", unified);

	write_file(mi, "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		       "31 25 0:27 / /sys/fs/cgroup/pids rw,nosuid shared:9 - cgroup cgroup rw,pids\n"
		       "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
	write_file(ctl, "cpu io\n");
	CHECK_INT(box_host_cgroups_probe(mi, tmpdir, &cg), 0);
	CHECK(cg.v1_memory && cg.v1_pids && !cg.v2_memory && !cg.v2_pids);

	write_file(mi, "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
		       "33 25 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n");
	write_file(ctl, "cpuset cpu io memory hugetlb pids rdma misc\n");
	CHECK_INT(box_host_cgroups_probe(mi, tmpdir, &cg), 0);
	CHECK(!cg.v1_memory && !cg.v1_pids && cg.v2_memory && cg.v2_pids);

	write_file(ctl, "memoryx pidsy\n");
	CHECK_INT(box_host_cgroups_probe(mi, tmpdir, &cg), 0);
	CHECK(!cg.v2_memory && !cg.v2_pids);
	CHECK(box_host_cgroups_probe("/nonexistent/mountinfo", NULL, &cg) < 0);
}

/* memory_max / pids_max: an error at load when the host offers no mechanism. */
static void
test_limits_mechanism(void)
{
	char mi[128], ctl[160];
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	snprintf(ctl, sizeof(ctl), "%s/sys/fs/cgroup/unified/cgroup.controllers", tmpdir);
	struct box_config_options o = { .mountinfo = mi, .cgroup_root_prefix = tmpdir };
	const char *text = "[box]\nname = m\n[agent]\ncommand = /bin/true\n"
			   "memory_max = 1G\npids_max = 50\n";
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	bool root = geteuid() == 0;

	/* Nothing at all. */
	write_file(mi, "1 0 0:1 / / rw - ext4 /dev/root rw\n");
	CHECK_INT(load(text, &o, &cfg, &errs), -EINVAL);
	char *t = errors_text(&errs);
	CHECK(strstr(t, "[agent] memory_max: this host offers no mechanism for it") != NULL);
	/* pids_max: RLIMIT_NPROC binds an ordinary owner, never root. */
	CHECK((strstr(t, "[agent] pids_max:") != NULL) == root);
	free(t);
	box_config_errors_clear(&errs);

	/* cgroup v2 with both controllers: always fine. */
	write_file(mi, "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
	write_file(ctl, "memory pids\n");
	CHECK_INT(load(text, &o, &cfg, &errs), 0);
	box_config_free(cfg);
	box_config_errors_clear(&errs);

	/* v1 hierarchies only: fine for a root boxd, memory refused otherwise. */
	write_file(mi, "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		       "31 25 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n");
	int r = load(text, &o, &cfg, &errs);
	CHECK_INT(r, root ? 0 : -EINVAL);
	box_config_free(cfg);
	box_config_errors_clear(&errs);
}

static void
test_secret_never_in_errors(void)
{
	struct box_config_options o = { 0 };
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	setenv("UNIT_TEST_SECRET", "very-s3cret-value", 1);
	int r = load("[box]\nname = s\n[agent]\ncommand = /bin/true\n"
		     "[egress.e]\ndestinations = e.example.com\nsecret = env://UNIT_TEST_SECRET\n"
		     "placement = basic_auth\n",
		     &o, &cfg, &errs);
	CHECK_INT(r, -EINVAL);
	char *t = errors_text(&errs);
	CHECK(strstr(t, "basic_auth needs user:password") != NULL);
	CHECK(strstr(t, "s3cret") == NULL);
	free(t);
	box_config_errors_clear(&errs);

	/* A valid secret is held but never printed. */
	setenv("UNIT_TEST_SECRET", "alice:s3cret", 1);
	r = load("[box]\nname = s\n[agent]\ncommand = /bin/true\n"
		 "[egress.e]\ndestinations = e.example.com\nsecret = env://UNIT_TEST_SECRET\n"
		 "placement = basic_auth\n",
		 &o, &cfg, &errs);
	CHECK_INT(r, 0);
	if (!cfg) {
		char *e = errors_text(&errs);
		printf("# %s", e);
		free(e);
		box_config_errors_clear(&errs);
	}
	if (cfg) {
		CHECK_STR(cfg->egress[0].secret.value, "alice:s3cret");
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		CHECK_INT(box_config_print(f, cfg), 0);
		fclose(f);
		CHECK(strstr(buf, "s3cret") == NULL);
		CHECK(strstr(buf, "secret = env://UNIT_TEST_SECRET\n") != NULL);
		free(buf);
	}
	box_config_free(cfg);
	unsetenv("UNIT_TEST_SECRET");
}

static void
test_many_errors_capped(void)
{
	struct box_config_options o = { .offline = true };
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	size_t n = 2000;
	char *text = malloc(n * 4 + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(text + 4 * i, "a:b\n", 4);
	text[n * 4] = '\0';
	CHECK_INT(load(text, &o, &cfg, &errs), -EINVAL);
	CHECK(errs.n <= 502);
	CHECK(strstr(errs.v[errs.n - 1].message, "more errors not shown") != NULL);
	box_config_errors_clear(&errs);
	free(text);
}

/*
 * box_config_parse_buffer: the same rules with no host — the given passwd
 * entry is the caller and the only user, ~ is its home; what only the host
 * can answer is not checked (the command is not resolved).
 */
static void
test_parse_without_host(void)
{
	const struct passwd owner = {
		.pw_name = (char *)"fixture", .pw_uid = 4242, .pw_gid = 4343,
		.pw_dir = (char *)"/home/fixture",
	};
	struct box_config *cfg = NULL;
	struct box_config_errors errs = { 0 };
	const char *ok = "[box]\nname = p\n[agent]\ncommand = no-such-program-anywhere\n"
			 "user = fixture\nworkspace = ~/w\n[agent.filesystem]\nread = ~/src\n";
	CHECK_INT(box_config_parse_buffer("p.ini", ok, strlen(ok), NULL, &owner, &cfg, &errs), 0);
	if (cfg) {
		CHECK_INT(cfg->caller_uid, 4242);
		CHECK_INT(cfg->agent.user.uid, 4242);
		CHECK_INT(cfg->agent.user.gid, 4343);
		CHECK(cfg->agent.user.set);
		CHECK_STR(cfg->agent.user.home, "/home/fixture");
		CHECK_STR(cfg->agent.proc.workspace.value, "/home/fixture/w");
		CHECK_INT(cfg->agent.proc.fs.lists[BOX_FS_READ].n, 1);
		CHECK_STR(cfg->agent.proc.fs.lists[BOX_FS_READ].v[0].path, "/home/fixture/src");
		CHECK(cfg->agent.proc.command.program == NULL);
		CHECK_STR(cfg->box.state_dir.value, "/home/fixture/.local/state/box/p");
	}
	box_config_free(cfg);
	box_config_errors_clear(&errs);

	/* Any other user is unknown; the syntax rules still all apply. */
	const char *bad = "[box]\nname = p\n[agent]\ncommand = x\nuser = root\n"
			  "[agent.filesystem]\nread = ~/.ssh/keys\n";
	CHECK_INT(box_config_parse_buffer("p.ini", bad, strlen(bad), NULL, &owner, &cfg, &errs),
		  -EINVAL);
	char *t = errors_text(&errs);
	CHECK_STR(t, "boxctl: p.ini:5: [agent] user: \"root\": no such user\n"
		     "boxctl: p.ini:7: [agent.filesystem] read: \"~/.ssh/keys\" lies inside the "
		     "credential store ~/.ssh, which may be granted only by naming it exactly\n");
	free(t);
	box_config_errors_clear(&errs);
}

int
main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/box-test-config.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_error_format);
	RUN(test_struct);
	RUN(test_landlock_gate);
	RUN(test_cgroup_probe);
	RUN(test_limits_mechanism);
	RUN(test_secret_never_in_errors);
	RUN(test_many_errors_capped);
	RUN(test_parse_without_host);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
