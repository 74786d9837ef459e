/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_plan.c — boxd/plan.c, the root part that turns a request into the
 * agent's sandbox plan, on input shaped as boxd has it: a box.ini loaded by
 * boxctl (box_config_load, box_spec_from_config), packed into a RunRequest
 * and decoded and validated by box_ipc_decode(); a struct box with the
 * owner's passwd entry and a recheck result as the owner's recheck child
 * would report it (synthetic: a credential store and a symlinked one found
 * inside a grant, a deny directory, reachable sockets, a cut scan); a real
 * runtime dir (runtime_dir_create) where plan_build makes its mask objects.
 *
 * Checked: the view entries in order with their masks (mode-0000 objects in
 * BASE/ID/masks; a deny inside a credential-store mask is left out), the
 * implicit exec entries, box.ini and the policy masked inside a grant, the
 * environment composition (the section's variables, HOME and PATH defaults,
 * no /run/box path or proxy variable while nothing serves them, TERM from
 * the caller, USER PWD BOX_NAME BOX_ID), limits (nofile floor, pids_max by
 * RLIMIT_NPROC), the runtime HOME of an ungranted home, the disclosure
 * lines (warnings, masks, mount flags, [tool] sections as box-shell serves them,
 * stdio [mcp] sections served by box-mcpd, limits), and the
 * re-checks of what a client could forge past boxctl (a reserved variable,
 * grants inside box's own state dir, reaching the runtime dir, around the
 * owner's session runtime dir).
 * Links plan.o, ownpaths.o, runtime.o and recheck.o (problem_new); nothing
 * is stubbed.
 * Trusts: nothing; test code (works in a fresh temporary directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxctl/config.h"
#include "boxctl/spec.h"
#include "boxd/boxd.h"
#include "cleanup.h"
#include "ipc.h"
#include "proto/proto_client.h"
#include "tap.h"

static char dir[64];

static void
write_file(const char *name, const char *text, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0)
		perror(p);
	close(fd);
}

static void
make_dir(const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		perror(p);
}

static char *
at(const char *name)
{
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

/* BOX_PLAN_WRITE_CORPUS=DIR: each packed request becomes a seed of test/fuzz/fuzz_request.c. */
static void
write_seed(const uint8_t *buf, size_t len)
{
	const char *corpus = getenv("BOX_PLAN_WRITE_CORPUS");
	static unsigned n_written;
	if (!corpus)
		return;
	char name[256];
	snprintf(name, sizeof(name), "%s/plan-%u", corpus, ++n_written);
	FILE *out = fopen(name, "we");
	if (!out || fwrite(buf, 1, len, out) != len)
		printf("not ok - write %s\n", name);
	if (out)
		fclose(out);
}

static void
write_request_seed(const Box__RunRequest *req)
{
	size_t len = box__run_request__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	box__run_request__pack(req, buf);
	write_seed(buf, len);
	free(buf);
}

/* box.ini (written at home/proj/box.ini) → config → spec → RunRequest, as boxd decodes it. */
static Box__RunRequest *
request_of(const char *ini)
{
	struct box_config_errors errs = { 0 };
	struct box_config *cfg = NULL;
	Box__BoxSpec *spec = NULL;
	_cleanup_free_ char *path = at("home/proj/box.ini");

	write_file("home/proj/box.ini", ini, 0644);
	if (box_config_load(path, NULL, &cfg, &errs) < 0) {
		box_config_errors_print(stdout, &errs);
		box_config_errors_clear(&errs);
		return NULL;
	}
	CHECK_INT(box_spec_from_config(cfg, dir, &spec), 0);
	box_config_free(cfg);
	Box__RunRequest req = BOX__RUN_REQUEST__INIT;
	req.spec = spec;
	size_t len = box__run_request__get_packed_size(&req);
	uint8_t *buf = malloc(len);
	if (!buf)
		abort();
	box__run_request__pack(&req, buf);
	box_spec_free(spec);
	write_seed(buf, len);
	ProtobufCMessage *m = NULL;
	int r = box_ipc_decode(&box_proto_client, BOX__MSG_TYPE__MSG_RUN_REQUEST, buf, len, &m);
	free(buf);
	CHECK_INT(r, 0);
	return r < 0 ? NULL : (Box__RunRequest *)m;
}

static char **
strv(size_t n, ...)
{
	va_list ap;
	char **v = calloc(n ? n : 1, sizeof(char *));
	if (!v)
		abort();
	va_start(ap, n);
	for (size_t i = 0; i < n; i++) {
		const char *s = va_arg(ap, const char *);
		v[i] = s ? strdup(s) : NULL;
	}
	va_end(ap);
	return v;
}

struct fixture {
	struct boxd d;
	struct box b;
	char *base;
};

/* The struct box boxd has when box.c calls plan_build: owner, recheck result, runtime dir. */
static bool
fixture_init(struct fixture *f, Box__RunRequest *req, const char *id)
{
	memset(f, 0, sizeof(*f));
	f->base = at("base");
	f->d.runtime_base = f->base;
	f->d.root = false; /* no chown to the synthetic owner */
	f->d.listen_fd = -1;
	struct box *b = &f->b;
	b->d = &f->d;
	snprintf(b->id, sizeof(b->id), "%s", id);
	b->req_msg = &req->base;
	b->req = req;
	b->spec = req->spec;
	b->name = strdup(req->spec->box->name->value);
	b->extra_args = req->extra_args;
	b->n_extra_args = req->n_extra_args;
	b->owner.uid = 4242;
	b->owner.gid = 4343;
	b->owner.groups[0] = 4343;
	b->owner.n_groups = 1;
	b->owner.name = strdup("i3owner");
	b->owner.home = at("home");
	b->owner.shell = strdup("/bin/bash");
	b->rc.state_dirfd = b->rc.lock_fd = b->rc.log_fd = -1;
	b->rc.policy_dirfd = b->rc.decisions_fd = b->rc.ca_fd = -1;
	b->ca_runtime_fd = b->shell_listen_fd = b->mcp_listen_fd = -1;
	b->rc.state_dir = at("state");
	b->rc.workspace = at("home/proj");
	return runtime_dir_create(&f->d, b) == 0;
}

static void
fixture_clear(struct fixture *f)
{
	runtime_dir_remove(&f->d, &f->b);
	recheck_result_clear(&f->b.rc);
	safe_close(f->b.ca_runtime_fd);
	for (size_t i = 0; i < f->b.n_placeholders; i++) {
		free(f->b.placeholders[i].variable);
		free(f->b.placeholders[i].value);
	}
	free(f->b.placeholders);
	free(f->b.runtime_dir);
	free(f->b.name);
	free(f->b.owner.name);
	free(f->b.owner.home);
	free(f->b.owner.shell);
	for (size_t i = 0; i < f->b.n_disclosure; i++)
		free(f->b.disclosure[i]);
	free(f->b.disclosure);
	box_msg_free(f->b.req_msg);
	free(f->base);
}

static bool
has_line(char **v, size_t n, const char *want)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], want) == 0)
			return true;
	printf("#   missing line: %s\n", want);
	return false;
}

static void
check_view(const Box__ViewEntry *e, Box__ViewKind kind, const char *path, bool masked)
{
	CHECK_INT(e->kind, kind);
	CHECK_STR(e->path, path);
	CHECK(masked == (e->mask != NULL));
}

/* A mask object is BASE/ID/masks/mN, mode 0000, a directory exactly when its target is. */
static void
check_mask(const struct box *b, const Box__ViewEntry *e, bool is_dir)
{
	struct stat st;
	_cleanup_free_ char *masks = NULL;
	if (asprintf(&masks, "%s/masks/", b->runtime_dir) < 0)
		abort();
	CHECK(e->mask && strncmp(e->mask, masks, strlen(masks)) == 0);
	CHECK(e->mask && lstat(e->mask, &st) == 0);
	if (e->mask && lstat(e->mask, &st) == 0) {
		CHECK_INT(st.st_mode & 07777, 0);
		CHECK(is_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
	}
}

static void
test_plan_and_disclosure(void)
{
	char ini[2048];
	snprintf(ini, sizeof(ini),
		 "[box]\nname = i3plan\npolicy = policy.dw\nstate_dir = %s/state\n"
		 "require = userns mountns netns seccomp\n\n"
		 "[agent]\ncommand = /bin/cat -n \"a b\"\nworkspace = %s/home/proj\nnofile = 8\n"
		 "nproc = 50\n\n"
		 "[agent.env]\nFOO = bar\n\n"
		 "[agent.filesystem]\nread = %s/home\nwrite = %s/home/proj\nexec = %s/bin\n"
		 "exec = %s/home/proj/tools\ndeny = %s/home/proj/secret\n"
		 "deny = %s/home/.ssh/id_rsa\n\n"
		 "[tool.t1]\ncommand = /bin/cat\n\n[tool.t1.network]\ncontain_egress = false\n\n"
		 "[egress.e1]\ndestinations = api.example.com\nsecret = env://I3_PLAN_TOKEN\n"
		 "variable = I3_PLAN_KEY\n\n"
		 "[mcp.m1]\ntype = stdio\ncommand = /bin/cat\n",
		 dir, dir, dir, dir, dir, dir, dir, dir);
	Box__RunRequest *req = request_of(ini);
	CHECK(req != NULL);
	if (!req)
		return;
	struct fixture f;
	CHECK(fixture_init(&f, req, "0123456789ab"));
	struct box *b = &f.b;
	_cleanup_free_ char *cat = realpath("/bin/cat", NULL);
	_cleanup_free_ char *home = at("home"), *proj = at("home/proj"), *bin = at("bin");
	_cleanup_free_ char *tools = at("home/proj/tools"), *secret = at("home/proj/secret");
	_cleanup_free_ char *ssh = at("home/.ssh"), *aws = at("home/.aws"), *awsr = at("home/aws");
	_cleanup_free_ char *ini_path = at("home/proj/box.ini"), *pol = at("home/proj/policy.dw");
	_cleanup_free_ char *sock = at("home/proj/agent.sock");
	b->rc.argv0 = strdup("/bin/cat");
	b->rc.program = strdup(cat);
	b->rc.interpreters = strv(1, "/usr/bin/env");
	b->rc.n_interpreters = 1;
	b->rc.loaders = strv(1, "/usr/lib/ld-test.so.2");
	b->rc.n_loaders = 1;
	b->rc.deny_dirs = strv(1, secret);
	b->rc.n_deny_dirs = 1;
	/* The recheck found ~/.ssh and ~/.aws (a symlink to ~/aws) inside `read = ~`. */
	b->rc.masks = strv(2, ssh, awsr);
	b->rc.mask_via = strv(2, NULL, aws);
	b->rc.mask_is_dir = calloc(2, sizeof(bool));
	b->rc.mask_is_dir[0] = b->rc.mask_is_dir[1] = true;
	b->rc.n_masks = 2;
	b->rc.sockets = strv(1, sock);
	b->rc.n_sockets = 1;
	b->rc.sockets_total = 3;
	b->rc.scan_cut = strdup("time");
	b->policy_rules = 3;

	Box__Plan *p = NULL;
	char *err = NULL;
	CHECK_INT(plan_build(&f.d, b, &p, &err), 0);
	CHECK(err == NULL);
	CHECK_INT(b->rc.n_problems, 0);
	if (!p) {
		printf("#   %s\n", err ? err : "?");
		free(err);
		fixture_clear(&f);
		return;
	}
	CHECK_INT(p->kind, BOX__SANDBOX_KIND__SANDBOX_AGENT);
	CHECK_INT(p->owner->uid, 4242);
	CHECK_STR(p->owner->home, home);
	CHECK_STR(p->owner->shell, "/bin/bash");

	/*
	 * Grants as listed, then the found masks, the deny list, box.ini (shown read-only) and
	 * the policy (masked), implicit exec entries: the program, its #! interpreter, the loader.
	 */
	CHECK_INT(p->n_view, 12);
	if (p->n_view == 12) {
		check_view(p->view[0], BOX__VIEW_KIND__VIEW_READ, home, false);
		check_view(p->view[1], BOX__VIEW_KIND__VIEW_WRITE, proj, false);
		check_view(p->view[2], BOX__VIEW_KIND__VIEW_EXEC, bin, false);
		check_view(p->view[3], BOX__VIEW_KIND__VIEW_EXEC, tools, false);
		check_view(p->view[4], BOX__VIEW_KIND__VIEW_DENY, ssh, true);
		check_mask(b, p->view[4], true);
		check_view(p->view[5], BOX__VIEW_KIND__VIEW_DENY, awsr, true);
		/* deny ~/.ssh/id_rsa lies inside the ~/.ssh mask: no entry of its own. */
		check_view(p->view[6], BOX__VIEW_KIND__VIEW_DENY, secret, true);
		check_mask(b, p->view[6], true);
		check_view(p->view[7], BOX__VIEW_KIND__VIEW_READ_FILE, ini_path, false);
		check_view(p->view[8], BOX__VIEW_KIND__VIEW_DENY, pol, true);
		check_mask(b, p->view[8], false);
		check_view(p->view[9], BOX__VIEW_KIND__VIEW_EXEC, cat, false);
		check_view(p->view[10], BOX__VIEW_KIND__VIEW_EXEC, "/usr/bin/env", false);
		check_view(p->view[11], BOX__VIEW_KIND__VIEW_EXEC, "/usr/lib/ld-test.so.2", false);
	}
	/* [agent] exec_system unset: Landlock EXECUTE only on the exec entries and aliases. */
	CHECK(p->has_exec_system && !p->exec_system);
	CHECK_INT(p->n_argv, 3);
	if (p->n_argv == 3) {
		CHECK_STR(p->argv[0], "/bin/cat");
		CHECK_STR(p->argv[2], "a b");
	}
	CHECK_STR(p->workspace, proj);
	CHECK(p->runtime->home == NULL); /* the home is granted: not box-managed */

	/* Environment: FOO, HOME, PATH defaults, TERM from the caller, then box's own. */
	char want_env[8][256];
	snprintf(want_env[0], 256, "FOO=bar");
	snprintf(want_env[1], 256, "HOME=%s", home);
	snprintf(want_env[2], 256, "PATH=/usr/local/bin:/usr/bin:/bin");
	snprintf(want_env[3], 256, "TERM=xterm-i3plan");
	snprintf(want_env[4], 256, "USER=i3owner");
	snprintf(want_env[5], 256, "PWD=%s", proj);
	snprintf(want_env[6], 256, "BOX_NAME=i3plan");
	snprintf(want_env[7], 256, "BOX_ID=0123456789ab");
	CHECK_INT(p->n_env, 8);
	for (size_t i = 0; i < 8 && i < p->n_env; i++)
		CHECK_STR(p->env[i], want_env[i]);
	/* Nothing serves the tool, egress or MCP server: no variable points at box's services. */
	for (size_t i = 0; i < p->n_env; i++) {
		CHECK(strstr(p->env[i], "/run/box") == NULL);
		CHECK(strncasecmp(p->env[i], "https_proxy=", 12) != 0);
		CHECK(strncmp(p->env[i], "I3_PLAN_KEY=", 12) != 0);
	}

	CHECK(p->limits != NULL);
	if (p->limits) {
		CHECK(p->limits->has_nofile && p->limits->nofile == 16); /* the floor */
		CHECK(p->limits->has_nproc && p->limits->nproc == 50);
		CHECK(!p->limits->has_pids_max && !p->limits->has_memory_max);
	}
	CHECK(!p->require_landlock);
	CHECK(p->require_seccomp);

	char **lines = NULL;
	size_t n = 0;
	CHECK_INT(plan_disclosure(b, p, &lines, &n), 0);
	char want[40][512];
	size_t nw = 0;
#define WANT(...) snprintf(want[nw++], sizeof(want[0]), __VA_ARGS__)
	WANT("box i3plan, id 0123456789ab, owner i3owner");
	WANT("warning: [box] require leaves out landlock: no Landlock layer is enforced when this "
	     "kernel lacks it");
	WANT("warning: tool t1 shares the host network (contain_egress = false): no gateway, no "
	     "decision, no credential injection");
	WANT("warning: the policy %s is hidden (masked) inside a grant: git cannot read it there, "
	     "so `git add -A`, `git diff` and `git stash` fail on it; keep it outside the grants, "
	     "have git skip it (.gitignore, git update-index --skip-worktree), or set [box] "
	     "show_policy = true", pol);
	if (access("/proc/sys/vm/memfd_noexec", F_OK) == 0)
		WANT("warning: vm.memfd_noexec cannot be set for a box not owned by root by a boxd "
		     "that is not root: a memfd the agent writes can be run through "
		     "/proc/self/fd/N (Landlock does not restrict memfds)");
	else
		WANT("warning: this kernel has no vm.memfd_noexec (Linux 6.3): a memfd the agent "
		     "writes can be run through /proc/self/fd/N (Landlock does not restrict "
		     "memfds)");
	WANT("warning: reachable unix socket in a grant: %s", sock);
	WANT("warning: and 2 more reachable unix sockets in the grants");
	WANT("warning: the socket scan stopped after 2 s: sockets beyond it were not checked "
	     "(boxd refuses clients from inside a sandbox either way)");
	WANT("masked (credential store): %s", ssh);
	WANT("masked (credential store): %s (the target of %s)", awsr, aws);
	WANT("policy: %s (3 rules)", pol);
	WANT("agent: /bin/cat -n 'a b'");
	WANT("  read        %s  (read-only, noexec)", home);
	WANT("  write       %s  (read-write, noexec)", proj);
	WANT("  exec        %s  (read-only, exec)", bin);
	WANT("  exec        %s  (read-write, exec)", tools);
	WANT("  deny        %s  (masked: credential store)", ssh);
	WANT("  deny        %s  (masked: credential store)", awsr);
	WANT("  deny        %s  (masked)", secret);
	WANT("  read_file   %s  (read-only, noexec)  (box.ini: shown read-only)", ini_path);
	WANT("  deny        %s  (policy file: masked)", pol);
	WANT("  exec        %s  (read-only, exec)  (implicit: the agent's program)", cat);
	WANT("  exec        /usr/bin/env  (read-only, exec)  (implicit: #! interpreter)");
	WANT("  exec        /usr/lib/ld-test.so.2  (read-only, exec)  (implicit: ELF loader)");
	WANT("  workspace   %s", proj);
	WANT("  execute     only the exec entries above and box's aliases may be started with "
	     "execve (Landlock; [agent] exec_system = false); not a boundary: the ELF loader runs "
	     "any readable program, and an interpreter does what it likes itself");
	WANT("tool t1: /bin/cat (after a shell:spawn permit, in its own sandbox)");
	WANT("  exec        /bin/cat  (implicit: the tool's program)");
	WANT("  network     the host network (contain_egress = false: no gateway, no decision, "
	     "no credential injection)");
	/* A stdio [mcp]: served by box-mcpd, its grants and network as a tool's. */
	WANT("mcp m1: /run/box/bin/cat runs /bin/cat (box-mcpd: after a shell:spawn permit, in "
	     "its own sandbox; every request decided)");
	WANT("  exec        /bin/cat  (implicit: the server's program)");
	WANT("  write       /tmp /var/tmp /dev/shm -> %s/{tmp,var_tmp,dev_shm} (read-write, "
	     "noexec)", b->runtime_dir);
	WANT("  network     none (no gateway: no route out, loopback only)");
	WANT("  limits      nofile=16 nproc=50");
	WANT("  state       %s/state", dir);
#undef WANT
	for (size_t i = 0; i < nw; i++)
		CHECK(has_line(lines, n, want[i]));
	/* In order: the first line first, the state last; no line about a runtime HOME. */
	CHECK(n > 0 && strcmp(lines[0], want[0]) == 0);
	CHECK(n > 0 && strcmp(lines[n - 1], want[nw - 1]) == 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(strstr(lines[i], "ungranted HOME") == NULL);
		CHECK(strstr(lines[i], "inactive: [egress") == NULL); /* box-gateway serves it */
	}
	b->disclosure = lines;
	b->n_disclosure = n;

	/* Quiet: the warnings only. */
	b->quiet = true;
	CHECK_INT(plan_disclosure(b, p, &lines, &n), 0);
	CHECK_INT(n, 7);
	for (size_t i = 0; i < n; i++) {
		CHECK(strncmp(lines[i], "warning: ", 9) == 0);
		free(lines[i]);
	}
	free(lines);
	plan_free(p);
	fixture_clear(&f);
}

/*
 * Once box-gateway serves the box (GatewayReady): the proxy, CA and
 * placeholder variables (docs/boxctl.1.md "The agent's view"), the CA mount and the
 * listener in the plan, and the network lines of the disclosure — never the
 * placeholder there.
 */
static void
test_gateway_view(void)
{
	static const char ph[] = "box_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	Box__Plan *p = NULL;
	_cleanup_free_ char *err = NULL;
	char **lines = NULL;
	size_t n = 0;
	char ini[1024];

	snprintf(ini, sizeof(ini),
		 "[box]\nname = i3plan3\nstate_dir = %s/state\n\n"
		 "[agent]\ncommand = /bin/cat\nworkspace = %s/home/proj\n\n"
		 "[egress.e1]\ndestinations = api.example.com\nsecret = env://I3_PLAN_TOKEN\n"
		 "variable = I3_PLAN_KEY\nsandboxes = agent\n\n"
		 "[egress.q]\ndestinations = q.example.com:8443\nsecret = env://I3_PLAN_TOKEN\n"
		 "variable = I3_Q\nplacement = query_param\nparam = key\n\n"
		 "[gateway]\nport = 8123\npassthrough = github.com:22\n",
		 dir, dir);
	Box__RunRequest *req = request_of(ini);
	CHECK(req != NULL);
	if (!req)
		return;
	struct fixture f;
	CHECK(fixture_init(&f, req, "0123456789ad"));
	struct box *b = &f.b;
	_cleanup_free_ char *cat = realpath("/bin/cat", NULL);
	b->rc.argv0 = strdup("/bin/cat");
	b->rc.program = strdup(cat);
	b->gateway_serving = true;
	b->placeholders = calloc(1, sizeof(*b->placeholders));
	b->placeholders[0].variable = strdup("I3_PLAN_KEY");
	b->placeholders[0].value = strdup(ph);
	b->n_placeholders = 1;
	CHECK_INT(plan_build(&f.d, b, &p, &err), 0);
	if (!p) {
		printf("#   %s\n", err ? err : "?");
		fixture_clear(&f);
		return;
	}
	static const char *const want_env[] = {
		"HTTP_PROXY=http://127.0.0.1:8123", "HTTPS_PROXY=http://127.0.0.1:8123",
		"http_proxy=http://127.0.0.1:8123", "https_proxy=http://127.0.0.1:8123",
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
		"NODE_USE_ENV_PROXY=1",		    "SSL_CERT_FILE=/run/box/ca.pem",
		"REQUESTS_CA_BUNDLE=/run/box/ca.pem", "CURL_CA_BUNDLE=/run/box/ca.pem",
		"NODE_EXTRA_CA_CERTS=/run/box/ca.pem", "AWS_CA_BUNDLE=/run/box/ca.pem",
		"GIT_SSL_CAINFO=/run/box/ca.pem", "npm_config_cafile=/run/box/ca.pem",
		"PIP_CERT=/run/box/ca.pem", "CARGO_HTTP_CAINFO=/run/box/ca.pem",
		"npm_config_proxy=http://127.0.0.1:8123", "npm_config_https_proxy=http://127.0.0.1:8123",
		"PIP_PROXY=http://127.0.0.1:8123", "CARGO_HTTP_PROXY=http://127.0.0.1:8123",
		"npm_config_noproxy=localhost,127.0.0.1,::1",
	};
	for (size_t i = 0; i < ELEMENTSOF(want_env); i++)
		CHECK(has_line(p->env, p->n_env, want_env[i]));
	char phv[128];
	snprintf(phv, sizeof(phv), "I3_PLAN_KEY=%s", ph);
	CHECK(has_line(p->env, p->n_env, phv));
	for (size_t i = 0; i < p->n_env; i++)
		CHECK(strncmp(p->env[i], "SSL_CERT_DIR=", 13) != 0);
	CHECK(p->has_gateway_port && p->gateway_port == 8123);
	_cleanup_free_ char *ca = NULL;
	if (asprintf(&ca, "%s/ca.pem", b->runtime_dir) < 0)
		abort();
	CHECK_STR(p->runtime->ca_pem, ca);
	b->quiet = false;
	CHECK_INT(plan_disclosure(b, p, &lines, &n), 0);
	CHECK(has_line(lines, n, "  network     proxy 127.0.0.1:8123 (box-gateway; HTTP/1.1 only "
				 "— HTTP/2 and gRPC clients fall back through the proxy); no other "
				 "route out"));
	CHECK(has_line(lines, n, "  network     npm, pip, cargo, git, curl, Go, Python and node "
				 "22.21+ use the proxy and the box CA as they are; node 18 and 20 do "
				 "not use the proxy (fetch, https): a node program there needs an "
				 "agent of its own"));
	CHECK(has_line(lines, n, "  egress      api.example.com: header Authorization, for agent "
				 "([egress.e1], in $I3_PLAN_KEY)"));
	CHECK(has_line(lines, n, "  egress      q.example.com:8443: query param key, for every "
				 "sandbox ([egress.q], in $I3_Q)"));
	CHECK(has_line(lines, n, "  passthrough github.com:22 (plain TCP after net:connect: no "
				 "interception, no http:request, no credentials)"));
	CHECK(has_line(lines, n, "  egress      WebSocket (Upgrade) frames to a credentialed "
				 "destination are relayed unredacted"));
	for (size_t i = 0; i < n; i++) {
		CHECK(strstr(lines[i], ph) == NULL);
		CHECK(strstr(lines[i], "none (no gateway") == NULL);
		free(lines[i]);
	}
	free(lines);
	plan_free(p);
	fixture_clear(&f);
}

/* An ungranted home gets a runtime HOME; pids_max falls back to RLIMIT_NPROC; extra args. */
static void
test_runtime_home_and_limits(void)
{
	char ini[1024];
	snprintf(ini, sizeof(ini),
		 "[box]\nname = i3plan2\nstate_dir = %s/state\n\n"
		 "[agent]\ncommand = /bin/cat\nworkspace = %s/home/proj\nnproc = 500\n\n"
		 "[agent.env]\nPATH = %s/bin:/usr/bin\nHOME = %s/home/proj\n\n"
		 "[agent.filesystem]\nwrite = %s/home/proj\n",
		 dir, dir, dir, dir, dir);
	Box__RunRequest *req = request_of(ini);
	CHECK(req != NULL);
	if (!req)
		return;
	/* pids_max as a request could carry it (boxctl checks the host's mechanism first). */
	Box__CfgU64 *pm = calloc(1, sizeof(*pm));
	box__cfg_u64__init(pm);
	pm->value = 64;
	pm->line = 7;
	req->spec->agent->pids_max = pm;
	char *extra[] = { strdup("--x"), strdup("") };
	req->extra_args = malloc(sizeof(extra));
	memcpy(req->extra_args, extra, sizeof(extra));
	req->n_extra_args = 2;

	struct fixture f;
	CHECK(fixture_init(&f, req, "0123456789ac"));
	struct box *b = &f.b;
	_cleanup_free_ char *cat = realpath("/bin/cat", NULL);
	_cleanup_free_ char *proj = at("home/proj");
	b->rc.argv0 = strdup("/bin/cat");
	b->rc.program = strdup(cat);
	b->nproc_fallback = true;
	/* A home outside /tmp (boxd manages none there) that no grant holds. */
	free(b->owner.home);
	b->owner.home = strdup("/home/i3plan-owner");
	const char *home = b->owner.home;

	Box__Plan *p = NULL;
	char *err = NULL;
	CHECK_INT(plan_build(&f.d, b, &p, &err), 0);
	if (!p) {
		printf("#   %s\n", err ? err : "?");
		free(err);
		fixture_clear(&f);
		return;
	}
	_cleanup_free_ char *rt_home = NULL;
	if (asprintf(&rt_home, "%s/home", b->runtime_dir) < 0)
		abort();
	CHECK(p->runtime->home && strcmp(p->runtime->home, rt_home) == 0);
	/* box.ini lies in the write grant: masked. */
	CHECK_INT(p->n_view, 3);
	CHECK_INT(p->n_argv, 3);
	if (p->n_argv == 3) {
		CHECK_STR(p->argv[1], "--x");
		CHECK_STR(p->argv[2], "");
	}
	/* The section's PATH and HOME win over the defaults; USER, PWD, BOX_* follow. */
	char path[256], home_var[256];
	snprintf(home_var, sizeof(home_var), "HOME=%s", proj);
	snprintf(path, sizeof(path), "PATH=%s/bin:/usr/bin", dir);
	CHECK(p->n_env >= 2);
	if (p->n_env >= 2) {
		CHECK_STR(p->env[0], home_var);
		CHECK_STR(p->env[1], path);
	}
	for (size_t i = 0; i < p->n_env; i++)
		CHECK(strncmp(p->env[i], "PATH=/usr/local", 15) != 0);
	CHECK(p->limits != NULL);
	if (p->limits) {
		CHECK(p->limits->has_pids_max && p->limits->pids_max == 64);
		/* RLIMIT_NPROC stands in for pids_max: nproc no higher than it. */
		CHECK(p->limits->has_nproc && p->limits->nproc == 64);
		CHECK(!p->limits->has_nofile);
	}
	CHECK(p->require_landlock && p->require_seccomp);

	char **lines = NULL;
	size_t n = 0;
	CHECK_INT(plan_disclosure(b, p, &lines, &n), 0);
	char want[4][512];
	snprintf(want[0], 512, "agent: /bin/cat --x ''");
	snprintf(want[1], 512, "  write       %s -> %s (ungranted HOME: empty, removed at exit)",
		 home, rt_home);
	snprintf(want[2], 512, "  limits      pids_max=64 (RLIMIT_NPROC)");
	snprintf(want[3], 512, "policy: none (every decided action is denied)");
	for (size_t i = 0; i < 4; i++)
		CHECK(has_line(lines, n, want[i]));
	bool fallback_warning = false;
	for (size_t i = 0; i < n; i++)
		fallback_warning |= strncmp(lines[i], "warning: pids_max is enforced with "
						      "RLIMIT_NPROC", 46) == 0;
	CHECK(fallback_warning);
	b->disclosure = lines;
	b->n_disclosure = n;
	plan_free(p);
	fixture_clear(&f);
}

/* What a client could send past boxctl: boxd refuses it, naming line, section and key. */
/* shell:spawn's credential_reads: the store a grant is or lies inside, nothing else. */
static void
test_credential_store_of(void)
{
	struct box b;
	memset(&b, 0, sizeof(b));
	b.owner.home = (char *)"/home/cred-owner";
	CHECK_STR(plan_credential_store_of(&b, "/home/cred-owner/.aws"), ".aws");
	CHECK_STR(plan_credential_store_of(&b, "/home/cred-owner/.aws/credentials"), ".aws");
	CHECK_STR(plan_credential_store_of(&b, "/home/cred-owner/.config/gcloud/x"),
		  ".config/gcloud");
	CHECK(plan_credential_store_of(&b, "/home/cred-owner/.awsx") == NULL);
	CHECK(plan_credential_store_of(&b, "/home/cred-owner") == NULL);
	CHECK(plan_credential_store_of(&b, "/home/other/.aws") == NULL);
	CHECK(plan_credential_store_of(&b, "/home/cred-ownerx/.aws") == NULL);
	CHECK(plan_credential_store_of(&b, "/home/cred-owner/p/.ssh") == NULL);
}

static void
test_forged_request_refused(void)
{
	char ini[1024];
	snprintf(ini, sizeof(ini),
		 "[box]\nname = i3plan3\nstate_dir = %s/state\n\n"
		 "[agent]\ncommand = /bin/cat\nworkspace = %s/home/proj\n\n"
		 "[agent.env]\nFOO = bar\n\n"
		 "[agent.filesystem]\nread = %s/home/proj\nwrite = %s/bin\nread_file = %s/home/f\n",
		 dir, dir, dir, dir, dir);
	Box__RunRequest *req = request_of(ini);
	CHECK(req != NULL);
	if (!req)
		return;
	struct fixture f;
	CHECK(fixture_init(&f, req, "0123456789ad"));
	struct box *b = &f.b;
	b->rc.argv0 = strdup("/bin/cat");
	b->rc.program = realpath("/bin/cat", NULL);
	Box__BoxSpec *s = req->spec;
	Box__CfgFilesystem *fs = s->agent->filesystem;
	/* The forgeries: a reserved name, a grant in the state dir, one reaching BASE/ID, and
	 * one around the owner's session runtime dir. */
	free(s->agent->env->vars[0]->name);
	s->agent->env->vars[0]->name = strdup("LD_PRELOAD");
	free(fs->read[0]->path);
	fs->read[0]->path = at("state/inner");
	free(fs->write[0]->path);
	if (asprintf(&fs->write[0]->path, "%s/tmp", b->runtime_dir) < 0)
		abort();
	free(fs->read_file[0]->path);
	fs->read_file[0]->path = strdup("/run/user");
	write_request_seed(req);

	Box__Plan *p = NULL;
	char *err = NULL;
	CHECK_INT(plan_build(&f.d, b, &p, &err), -EINVAL);
	CHECK(p == NULL);
	CHECK(err == NULL);
	CHECK_INT(b->rc.n_problems, 4);
	_cleanup_free_ char *inner = at("state/inner"), *state = at("state");
	char want[4][512];
	snprintf(want[0], 512, "10 agent.env LD_PRELOAD: LD_PRELOAD is reserved: box sets it");
	snprintf(want[1], 512,
		 "13 agent.filesystem read: %s lies inside this box's state dir %s; a box's state "
		 "and runtime dirs are never granted (inside a broader grant they are masked)",
		 inner, state);
	snprintf(want[2], 512, "14 agent.filesystem write: %s/tmp reaches the box runtime dir %s",
		 b->runtime_dir, b->runtime_dir);
	snprintf(want[3], 512,
		 "15 agent.filesystem read_file: /run/user contains /run/user/4242 (the user's "
		 "runtime dir: session bus, ssh-agent, systemd): the box could connect to its "
		 "sockets and act outside its sandbox; name something beside it");
	for (size_t i = 0; i < b->rc.n_problems && i < 4; i++) {
		const Box__Problem *pr = b->rc.problems[i];
		char got[512];
		snprintf(got, sizeof(got), "%u %s %s: %s", pr->line, pr->section ? pr->section : "-",
			 pr->key ? pr->key : "-", pr->message);
		CHECK_STR(got, want[i]);
	}
	fixture_clear(&f);
}

/* A plan's DENY entry at `path`, or NULL. */
static const Box__ViewEntry *
deny_at(const Box__Plan *p, const char *path)
{
	for (size_t i = 0; p && i < p->n_view; i++)
		if (p->view[i]->kind == BOX__VIEW_KIND__VIEW_DENY && strcmp(p->view[i]->path, path) == 0)
			return p->view[i];
	return NULL;
}

static const Box__ViewEntry *
entry_at(const Box__Plan *p, const char *path)
{
	for (size_t i = 0; p && i < p->n_view; i++)
		if (strcmp(p->view[i]->path, path) == 0)
			return p->view[i];
	return NULL;
}

/*
 * box.ini(5) "hidden in every view": the agent's deny entries in the views of
 * a tool, an MCP server and the agent's exec entries (each masked where a
 * grant holds it, the exception where one names it exactly), box.ini and a
 * shown policy read-only in each view, [agent] exec_system in the plans
 * (box-shell's never executes the system runtime, a tool's always may), the
 * disclosure of masks and exceptions; and boxd's own refusal of a tool grant
 * inside a deny entry (boxctl refuses it at load, boxd trusts nothing it sends).
 */
static void
test_tool_views(void)
{
	char ini[2048];
	snprintf(ini, sizeof(ini),
		 "[box]\nname = i3views\npolicy = policy.dw\nshow_policy = true\nstate_dir = %s/state\n\n"
		 "[agent]\ncommand = /bin/cat\nworkspace = %s/home/proj\nexec_system = true\n\n"
		 "[agent.filesystem]\nread = %s/home/proj\nexec = %s/bin\n"
		 "deny = %s/home/proj/.env\ndeny = %s/home/proj/secret\n\n"
		 "[tool.git]\ncommand = /bin/cat\n[tool.git.filesystem]\nread = %s/home\n\n"
		 "[tool.dotenv]\ncommand = /bin/cat\n[tool.dotenv.filesystem]\nread_file = %s/home/proj/.env\n\n"
		 "[mcp.files]\ntype = stdio\ncommand = /bin/cat\n[mcp.files.filesystem]\nread = %s/home/proj\n",
		 dir, dir, dir, dir, dir, dir, dir, dir, dir);
	Box__RunRequest *req = request_of(ini);
	CHECK(req != NULL);
	if (!req)
		return;
	struct fixture f;
	CHECK(fixture_init(&f, req, "0123456789ae"));
	struct box *b = &f.b;
	_cleanup_free_ char *cat = realpath("/bin/cat", NULL);
	_cleanup_free_ char *env = at("home/proj/.env"), *secret = at("home/proj/secret");
	_cleanup_free_ char *ini_path = at("home/proj/box.ini"), *pol = at("home/proj/policy.dw");
	_cleanup_free_ char *proj = at("home/proj");
	b->rc.argv0 = strdup("/bin/cat");
	b->rc.program = strdup(cat);
	b->rc.deny_dirs = strv(1, secret);
	b->rc.n_deny_dirs = 1;
	b->rc.mcp_names = strv(1, "files");
	b->rc.mcp_programs = strv(1, cat);
	b->rc.n_mcp = 1;
	char *progs[2] = { cat, cat };
	b->tool_prog = progs;
	b->tool_plans = calloc(2, sizeof(*b->tool_plans));

	Box__Plan *p = NULL, *sh = NULL, *git = NULL, *dotenv = NULL, *exec = NULL, *mcp = NULL;
	char *err = NULL;
	CHECK_INT(plan_build(&f.d, b, &p, &err), 0);
	CHECK(p && p->has_exec_system && p->exec_system);
	/* box.ini and the shown policy: read-only binds in the agent's view. */
	CHECK(entry_at(p, ini_path) && entry_at(p, ini_path)->kind == BOX__VIEW_KIND__VIEW_READ_FILE);
	CHECK(entry_at(p, pol) && entry_at(p, pol)->kind == BOX__VIEW_KIND__VIEW_READ_FILE);
	CHECK(deny_at(p, env) && deny_at(p, secret));
	CHECK_INT(plan_shell(b, p, "/usr/local/libexec/box/box-shell", "-n", &sh, &err), 0);
	CHECK(sh && sh->has_exec_system && !sh->exec_system);
	CHECK(deny_at(sh, env) && deny_at(sh, secret));

	char *argv[] = { cat };
	Box__SpawnRequest rq = BOX__SPAWN_REQUEST__INIT;
	rq.program_path = cat;
	rq.argv = argv;
	rq.n_argv = 1;
	rq.cwd = proj;
	int git_idx = strcmp(req->spec->tools[0]->name, "git") == 0 ? 0 : 1;
	CHECK_INT(plan_tool(&f.d, b, git_idx, &rq, &git, &err), 0);
	CHECK_INT(plan_tool(&f.d, b, 1 - git_idx, &rq, &dotenv, &err), 0);
	CHECK_INT(plan_tool(&f.d, b, -1, &rq, &exec, &err), 0);
	CHECK_INT(plan_mcp_server(&f.d, b, 0, &mcp, &err), 0);
	/* [tool.git] read = ~ holds both deny entries: masked there, with fresh mask objects. */
	CHECK(git && git->exec_system);
	CHECK(deny_at(git, env) != NULL);
	if (deny_at(git, env))
		check_mask(b, deny_at(git, env), false);
	CHECK(deny_at(git, secret) != NULL);
	if (deny_at(git, secret))
		check_mask(b, deny_at(git, secret), true);
	CHECK(entry_at(git, ini_path) && entry_at(git, ini_path)->kind == BOX__VIEW_KIND__VIEW_READ_FILE);
	/* [tool.dotenv] names .env exactly: its exception, nothing masked over its one grant. */
	CHECK(dotenv && deny_at(dotenv, env) == NULL);
	CHECK(dotenv && entry_at(dotenv, env) &&
	      entry_at(dotenv, env)->kind == BOX__VIEW_KIND__VIEW_READ_FILE);
	/* The exec entries' sandbox has the agent's grants: its deny entries once each. */
	size_t n_env = 0;
	for (size_t i = 0; exec && i < exec->n_view; i++)
		n_env += exec->view[i]->kind == BOX__VIEW_KIND__VIEW_DENY &&
			 strcmp(exec->view[i]->path, env) == 0;
	CHECK_INT(n_env, 1);
	/* The MCP server's grant holds both: masked. */
	CHECK(mcp && deny_at(mcp, env) && deny_at(mcp, secret));

	char **lines = NULL;
	size_t n = 0;
	b->policy_rules = 1;
	CHECK_INT(plan_disclosure(b, p, &lines, &n), 0);
	char want[8][512];
	size_t nw = 0;
#define WANT(...) snprintf(want[nw++], sizeof(want[0]), __VA_ARGS__)
	WANT("warning: exception to agent deny: %s is visible to tool.dotenv (its read_file entry "
	     "names it)", env);
	WANT("  read_file   %s  (read-only, noexec)  (policy file: shown read-only, [box] show_policy = "
	     "true)",
	     pol);
	WANT("  deny        %s  (masked: the agent's deny)", env);
	WANT("  deny        %s  (masked: the agent's deny)", secret);
	WANT("  exception   %s  (exception to agent deny: named here)", env);
	WANT("  system      /usr /lib /lib64 /bin /sbin (read-only, exec)");
#undef WANT
	for (size_t i = 0; i < nw; i++)
		CHECK(has_line(lines, n, want[i]));
	for (size_t i = 0; i < n; i++) {
		CHECK(strstr(lines[i], "hidden (masked) inside a grant") == NULL); /* shown */
		CHECK(strstr(lines[i], "  execute  ") == NULL); /* exec_system = true */
		free(lines[i]);
	}
	free(lines);
	plan_free(p);
	plan_free(sh);
	plan_free(git);
	plan_free(dotenv);
	plan_free(exec);
	plan_free(mcp);
	for (size_t i = 0; i < 2; i++)
		plan_free(b->tool_plans[i]);
	free(b->tool_plans);
	plan_free(b->exec_plan);
	for (size_t i = 0; b->mcp_plans && i < 1; i++)
		plan_free(b->mcp_plans[i]);
	free(b->mcp_plans);
	b->tool_prog = NULL;

	/* Forged past boxctl: a tool grant inside the agent's deny entry is refused by boxd too. */
	Box__CfgFilesystem *tfs = req->spec->tools[1 - git_idx]->filesystem;
	free(tfs->read_file[0]->path);
	tfs->read_file[0]->path = at("home/proj/secret/key");
	p = NULL;
	CHECK_INT(plan_build(&f.d, b, &p, &err), -EINVAL);
	CHECK_INT(b->rc.n_problems, 1);
	if (b->rc.n_problems == 1) {
		const Box__Problem *pr = b->rc.problems[0];
		char got[512], exp[512];
		snprintf(got, sizeof(got), "%s %s: %s", pr->section, pr->key, pr->message);
		snprintf(exp, sizeof(exp),
			 "tool.dotenv.filesystem read_file: %s/key lies inside the agent's deny entry "
			 "%s (line 16), which holds in every sandbox; name %s itself to make it this "
			 "section's exception",
			 secret, secret, secret);
		CHECK_STR(got, exp);
	}
	fixture_clear(&f);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/box-test-plan-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("not ok - mkdtemp\n");
		return 1;
	}
	_cleanup_free_ char *base = at("base");
	if (mkdir(base, 0700) < 0)
		perror(base);
	make_dir("home");
	make_dir("home/.ssh");
	make_dir("home/aws");
	make_dir("home/proj");
	make_dir("home/proj/secret");
	make_dir("home/proj/tools");
	make_dir("bin");
	make_dir("state");
	write_file("home/.ssh/id_rsa", "key\n", 0600);
	write_file("home/f", "f\n", 0644);
	write_file("home/proj/policy.dw", "// empty\n", 0644);
	write_file("home/proj/.env", "SECRET=1\n", 0600);
	setenv("TERM", "xterm-i3plan", 1);
	unsetenv("LANG");
	unsetenv("TZ");
	unsetenv("BOX_SOCKET");
	setenv("I3_PLAN_TOKEN", "t0ken", 1);

	RUN(test_plan_and_disclosure);
	RUN(test_runtime_home_and_limits);
	RUN(test_gateway_view);
	RUN(test_forged_request_refused);
	RUN(test_tool_views);
	RUN(test_credential_store_of);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("not ok - cleanup %s\n", dir);
	return tap_done();
}
