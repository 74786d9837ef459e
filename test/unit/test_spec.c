/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_spec.c — boxctl/spec.c: a box.ini loaded as the caller becomes a
 * BoxSpec that the IPC layer packs, decodes and validates (what boxd will
 * see), with every value at its line, defaults that depend on where the box
 * runs left out, and secrets wiped by box_spec_free.
 * Trusts: nothing; test code (works in a fresh temporary directory).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxctl/config.h"
#include "boxctl/spec.h"
#include "ipc.h"
#include "proto/proto_client.h"
#include "proto/validate.h"
#include "tap.h"

static char dir[64];

static void
write_file(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Load `ini` (written to dir/box.ini) and build its spec. */
static Box__BoxSpec *
spec_of(const char *ini, struct box_config **cfgp)
{
	char p[256];
	struct box_config_errors errs = { 0 };
	struct box_config *cfg = NULL;
	Box__BoxSpec *spec = NULL;

	write_file("box.ini", ini);
	snprintf(p, sizeof(p), "%s/box.ini", dir);
	int r = box_config_load(p, NULL, &cfg, &errs);
	if (r < 0) {
		box_config_errors_print(stdout, &errs);
		box_config_errors_clear(&errs);
		return NULL;
	}
	CHECK_INT(box_spec_from_config(cfg, dir, &spec), 0);
	*cfgp = cfg;
	return spec;
}

/* Pack a RunRequest around the spec and decode it as boxd does. */
static Box__RunRequest *
roundtrip(Box__BoxSpec *spec)
{
	Box__RunRequest req = BOX__RUN_REQUEST__INIT;
	req.spec = spec;
	size_t len = box__run_request__get_packed_size(&req);
	uint8_t *buf = malloc(len);
	if (!buf)
		return NULL;
	box__run_request__pack(&req, buf);
	ProtobufCMessage *m = NULL;
	int r = box_ipc_decode(&box_proto_client, BOX__MSG_TYPE__MSG_RUN_REQUEST, buf, len, &m);
	free(buf);
	CHECK_INT(r, 0);
	return r < 0 ? NULL : (Box__RunRequest *)m;
}

static void
test_minimal(void)
{
	struct box_config *cfg = NULL;
	char ini[1024];
	snprintf(ini, sizeof(ini),
		 "[box]\nname = mini\n\n[agent]\ncommand = /bin/cat a b\nworkspace = %s\n", dir);
	Box__BoxSpec *spec = spec_of(ini, &cfg);
	CHECK(spec != NULL);
	if (!spec)
		return;
	CHECK_INT(box_validate_box_spec(spec), 0);
	Box__RunRequest *req = roundtrip(spec);
	CHECK(req != NULL);
	if (req) {
		const Box__BoxSpec *s = req->spec;
		CHECK_STR(s->box->name->value, "mini");
		CHECK_INT(s->box->name->line, 2);
		CHECK_INT(s->agent->command->n_argv, 3);
		CHECK_STR(s->agent->command->argv[0], "/bin/cat");
		CHECK_STR(s->agent->command->argv[2], "b");
		CHECK_INT(s->agent->command->line, 5);
		CHECK(s->box->state_dir == NULL); /* the default is boxd's to choose */
		CHECK(s->box->timeout_ms == NULL);
		CHECK(s->agent->user == NULL);
		CHECK(s->agent->env == NULL);     /* HOME/PATH defaults are not sent */
		CHECK_STR(s->caller->cwd, dir);
		CHECK_INT(s->n_files, 1);
		CHECK(!s->has_policy_text);
		box_msg_free(&req->base);
	}
	box_spec_free(spec);
	box_config_free(cfg);
}

static void
test_full(void)
{
	struct box_config *cfg = NULL;
	char ini[2048];
	mkdir(strcat(strcpy(ini, dir), "/p"), 0755);
	mkdir(strcat(strcpy(ini, dir), "/p/out"), 0755);
	write_file("p/.env", "x");
	write_file("policy.dw", "// empty\n");
	snprintf(ini, sizeof(ini),
		 "[box]\nname = full\npolicy = policy.dw\ntimeout = 2s\n"
		 "require = userns mountns netns seccomp\nstate_dir = %s/state\n\n"
		 "[agent]\ncommand = cat\nworkspace = %s/p\npids_max = 7\nnofile = 64\n\n"
		 "[agent.env]\nFOO = bar\n\n"
		 "[agent.filesystem]\nread = %s/p\nwrite = %s/p/out\ndeny = %s/p/.env\n",
		 dir, dir, dir, dir, dir);
	Box__BoxSpec *spec = spec_of(ini, &cfg);
	CHECK(spec != NULL);
	if (!spec)
		return;
	Box__RunRequest *req = roundtrip(spec);
	CHECK(req != NULL);
	if (req) {
		const Box__BoxSpec *s = req->spec;
		CHECK_INT(s->n_files, 2);
		CHECK(s->has_policy_text && s->policy_text.len == strlen("// empty\n"));
		CHECK(s->box->policy && s->box->policy->line == 3);
		CHECK(s->box->timeout_ms && s->box->timeout_ms->value == 2000);
		CHECK_INT(s->box->n_require, 4);
		CHECK(s->box->state_dir && s->box->state_dir->line == 6);
		CHECK_STR(s->agent->command->argv[0], "cat"); /* as written: boxd resolves it */
		CHECK(s->agent->pids_max && s->agent->pids_max->value == 7);
		CHECK(s->agent->nofile && s->agent->nofile->value == 64);
		CHECK(s->agent->env && s->agent->env->n_vars == 1);
		if (s->agent->env && s->agent->env->n_vars == 1) {
			CHECK_STR(s->agent->env->vars[0]->name, "FOO");
			CHECK_INT(s->agent->env->vars[0]->line, 15);
		}
		const Box__CfgFilesystem *fs = s->agent->filesystem;
		CHECK(fs && fs->n_read == 1 && fs->n_write == 1 && fs->n_deny == 1);
		if (fs && fs->n_deny == 1) {
			CHECK_INT(fs->read[0]->line, 18);
			CHECK_INT(fs->deny[0]->line, 20);
		}
		box_msg_free(&req->base);
	}
	box_spec_free(spec);
	box_config_free(cfg);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_spec.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_minimal);
	RUN(test_full);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", dir);
	return tap_done();
}
