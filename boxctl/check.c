/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c — `boxctl check [-c box.ini]`: load the config, print it normalized.
 *
 * Exit 0 and the normalized config on stdout when box.ini loads; every
 * refusal on stderr, one line each, and exit 2 when it does not (docs/boxctl.1.md).
 * Runs as the caller and reads only what the caller can read.
 * Trusts: nothing in box.ini; the caller's environment for XDG_* and env://
 * secrets (a secret is read to check it is set, never printed) — never its
 * PATH, which resolves nothing a box runs.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "config.h"
#include "recheck_shared.h"
#include "spec.h"
#include "spec_check.h"
#include "validate.h"

DEFINE_FREEP(struct bp_schema, bp_schema_free)

/* Does a service boxd answer on $BOX_SOCKET (else /run/box/boxd.sock)? (commands.h) */
bool
service_answers(void)
{
	const char *path = getenv("BOX_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!path || !*path)
		path = "/run/box/boxd.sock";
	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	strcpy(sa.sun_path, path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
}

/* Print every diagnostic of SEVERITY in the docs/boxctl.1.md policy format. */
static void
print_policy_diags(const char *file, const struct bp_diags *d, enum bp_severity want)
{
	for (size_t i = 0; d && i < bp_diags_count(d); i++) {
		enum bp_severity sev;
		unsigned line, col;
		const char *msg = bp_diag_message(d, i, &sev, &line, &col);
		if (sev != want)
			continue;
		fprintf(stderr, "boxctl: %s:%u:%u: %s: %s\n", file, line, col,
			sev == BP_ERROR ? "error" : "warning", msg);
	}
}

/*
 * The policy step of `check`, run before the config is printed: load the
 * policy text boxctl read as the caller (cfg->box.policy) with the owner's
 * home and every declared MCP server's namespace marked pending (its tool
 * schema arrives at run time), and resolve history_sync AUTO from it
 * (always with a temporal rule, else off). No policy: 0 rules, every
 * decided action is denied. Errors are printed and refuse (exit 2);
 * warnings are returned in *ret_diags for printing after the config.
 */
static int
check_policy(struct box_config *cfg, long *n_rules, struct bp_diags **ret_diags)
{
	_cleanup_(bp_schema_freep) struct bp_schema *schema = NULL;
	struct bp_policy *policy = NULL;
	struct bp_diags *diags = NULL;
	bool temporal = false;
	int r;

	*ret_diags = NULL;
	if (!cfg->box.policy.path) {
		*n_rules = 0;
	} else {
		r = bp_schema_new(&schema);
		for (size_t i = 0; r >= 0 && i < cfg->n_mcp; i++)
			r = bp_schema_add_pending(schema, cfg->mcp[i].ns);
		if (r < 0) {
			fprintf(stderr, "boxctl: error: %s: %s\n", cfg->box.policy.path,
				strerror(-r));
			return BOXCTL_EXIT_FAILURE;
		}
		struct bp_load_options opts = {
			.home = cfg->agent.user.home,
			.schema = schema,
		};
		r = bp_policy_load(cfg->box.policy.data, cfg->box.policy.len, &opts, &policy,
				   &diags);
		if (r == -EINVAL) {
			print_policy_diags(cfg->box.policy.path, diags, BP_ERROR);
			bp_diags_free(diags);
			bp_policy_free(policy);
			return BOXCTL_EXIT_USAGE;
		}
		if (r < 0) {
			fprintf(stderr, "boxctl: error: %s: %s\n", cfg->box.policy.path,
				strerror(-r));
			bp_diags_free(diags);
			bp_policy_free(policy);
			return BOXCTL_EXIT_FAILURE;
		}
		*n_rules = (long)bp_policy_rule_count(policy);
		temporal = bp_policy_has_temporal(policy);
		bp_policy_free(policy);
		*ret_diags = diags;
	}
	if (cfg->box.history_sync.value == BOX_HISTORY_SYNC_AUTO)
		cfg->box.history_sync.value =
			temporal ? BOX_HISTORY_SYNC_ALWAYS : BOX_HISTORY_SYNC_OFF;
	return BOXCTL_EXIT_OK;
}

void
check_print_policy_warnings(const struct box_config *cfg, const struct bp_diags *warnings)
{
	print_policy_diags(cfg->box.policy.path, warnings, BP_WARNING);
}

void
print_problems(const struct box_config *cfg, const Box__BoxSpec *spec, Box__Problem **p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const Box__Problem *x = p[i];
		const char *file = NULL;
		if (x->has_file && x->file == 0)
			file = cfg->path;
		else if (x->has_file && x->file < spec->n_files)
			file = spec->files[x->file];
		bool warning = x->severity == BOX__PROBLEM__SEVERITY__SEVERITY_WARNING;
		const char *sev = warning ? "warning" : "error";
		fputs("boxctl: ", stderr);
		if (file && x->has_line && x->has_column)
			fprintf(stderr, "%s:%u:%u: %s: ", file, x->line, x->column, sev);
		else if (file && x->has_line && x->line)
			fprintf(stderr, "%s:%u: ", file, x->line);
		else if (file)
			fprintf(stderr, "%s: ", file);
		if (x->section && x->key)
			fprintf(stderr, "[%s] %s: ", x->section, x->key);
		else if (x->section)
			fprintf(stderr, "[%s]: ", x->section);
		fprintf(stderr, "%s\n", x->message);
	}
}

struct problems {
	Box__Problem **v;
	size_t n;
	bool oom;
};

static void
problem_add(void *arg, Box__Problem *p)
{
	struct problems *ps = arg;
	Box__Problem **nv = realloc(ps->v, (ps->n + 1) * sizeof(*nv));
	if (!nv) {
		problem_free(p);
		ps->oom = true;
		return;
	}
	ps->v = nv;
	ps->v[ps->n++] = p;
}

int
box_load(const char *path, bool service, struct box_config **ret_cfg, Box__BoxSpec **ret_spec,
	 long *n_rules, struct bp_diags **warnings)
{
	struct box_config_options opts = { .service = service };
	struct box_config_errors errs = { 0 };
	struct box_config *cfg = NULL;
	Box__BoxSpec *spec = NULL;
	char cwd[4096];

	*ret_cfg = NULL;
	*ret_spec = NULL;
	*warnings = NULL;
	int r = box_config_load(path, &opts, &cfg, &errs);
	if (r == -EINVAL) {
		box_config_errors_print(stderr, &errs);
		box_config_errors_clear(&errs);
		return BOXCTL_EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	r = check_policy(cfg, n_rules, warnings);
	if (r == BOXCTL_EXIT_OK && !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "boxctl: error: getcwd: %s\n", strerror(errno));
		r = BOXCTL_EXIT_FAILURE;
	}
	if (r != BOXCTL_EXIT_OK) {
		box_config_free(cfg);
		return r;
	}
	box_spec_from_config(cfg, cwd, &spec);
	/* What boxd does with the spec before it looks at any file: the same functions. */
	struct problems ps = { 0 };
	int v = box_validate_box_spec(spec);
	if (v < 0)
		fprintf(stderr, "boxctl: error: %s: boxd would refuse the request made of it: %s\n",
			cfg->path, strerror(-v));
	else if (box_spec_problems(spec, problem_add, &ps) < 0 || ps.oom)
		v = -ENOMEM;
	print_problems(cfg, spec, ps.v, ps.n);
	for (size_t i = 0; i < ps.n; i++)
		problem_free(ps.v[i]);
	free(ps.v);
	if (v < 0 || ps.n) {
		bp_diags_free(*warnings);
		*warnings = NULL;
		box_spec_free(spec);
		box_config_free(cfg);
		return v == -ENOMEM ? BOXCTL_EXIT_FAILURE : BOXCTL_EXIT_USAGE;
	}
	*ret_cfg = cfg;
	*ret_spec = spec;
	return BOXCTL_EXIT_OK;
}

static int
usage(void)
{
	fprintf(stderr, "usage: boxctl check [-c box.ini]\n");
	return BOXCTL_EXIT_USAGE;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "box.ini";
	struct box_config *cfg = NULL;
	long rules = -1;
	struct bp_diags *warnings = NULL;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'h':
			printf("usage: boxctl check [-c box.ini]\n");
			return BOXCTL_EXIT_OK;
		default:
			return usage();
		}
	}
	if (optind != argc)
		return usage();

	Box__BoxSpec *spec = NULL;
	int r = box_load(path, service_answers(), &cfg, &spec, &rules, &warnings);
	if (r == BOXCTL_EXIT_OK) {
		if (box_config_print(stdout, cfg) < 0)
			r = BOXCTL_EXIT_FAILURE;
		else
			printf("; policy: %ld rule%s\n", rules, rules == 1 ? "" : "s");
		(void)fflush(stdout);
		print_policy_diags(cfg->box.policy.path, warnings, BP_WARNING);
	}
	box_spec_free(spec);
	bp_diags_free(warnings);
	box_config_free(cfg);
	if (fflush(stdout) != 0 && r == BOXCTL_EXIT_OK)
		r = BOXCTL_EXIT_FAILURE;
	return r;
}
