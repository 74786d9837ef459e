/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_request.c — boxd's request checks on arbitrary bytes: a RunRequest
 * decoded and validated as boxd does (box_ipc_decode: common/ipc.c,
 * proto/validate.c) and, when it passes, boxd's plan building on it
 * (boxd/plan.c plan_build, plan_disclosure): the re-checks of the request,
 * the view, masks, environment and limits, and the plan validator.
 *
 * The struct box around the request is what boxd would have after the
 * owner's recheck, derived from the request alone: a fixed owner
 * (/home/fuzz), the program as written (or /usr/bin/true for a bare name),
 * every deny entry a directory, the owner's ~/.ssh and the state dir found
 * inside the grants. Mask objects are really made, in a runtime dir under a
 * private temporary base that is emptied after every input. Properties: a
 * built plan has a mask under BASE/ID/masks for every deny entry, and its
 * disclosure is made; a refusal leaves problems and no plan.
 * Seeds (test/fuzz/corpus/request) are the packed RunRequests of
 * test/unit/test_plan.c (BOX_PLAN_WRITE_CORPUS=DIR build/test/unit/test_plan).
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxd/boxd.h"
#include "ipc.h"
#include "proto/proto_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[64];

static void
cleanup_base(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_request: cannot remove %s\n", base);
}

static bool
base_ready(void)
{
	if (base[0])
		return true;
	snprintf(base, sizeof(base), "/tmp/box-fuzz-request-XXXXXX");
	if (!mkdtemp(base)) {
		base[0] = '\0';
		return false;
	}
	atexit(cleanup_base);
	return true;
}

static char *
dup_or_abort(const char *s)
{
	char *r = strdup(s);
	if (!r)
		abort();
	return r;
}

static void
plan_of(Box__RunRequest *req)
{
	const Box__BoxSpec *s = req->spec;
	const Box__CfgFilesystem *fs = s->agent->filesystem;
	struct boxd d = { .runtime_base = base, .root = false, .listen_fd = -1 };
	struct box b = { .d = &d };
	static unsigned seq;

	snprintf(b.id, sizeof(b.id), "%012x", seq++);
	b.req_msg = &req->base;
	b.req = req;
	b.spec = req->spec;
	b.name = s->box->name->value;
	b.extra_args = req->extra_args;
	b.n_extra_args = req->n_extra_args;
	b.quiet = req->quiet;
	b.owner = (struct box_owner_id){ .uid = 4242, .gid = 4242, .n_groups = 0,
					 .name = (char *)"fuzz", .home = (char *)"/home/fuzz",
					 .shell = (char *)"/bin/sh" };
	b.rc.state_dirfd = b.rc.lock_fd = b.rc.log_fd = b.rc.policy_dirfd = -1;
	b.rc.decisions_fd = b.rc.ca_fd = -1;
	b.ca_runtime_fd = b.shell_listen_fd = b.mcp_listen_fd = -1;
	const char *w0 = s->agent->command->argv[0];
	b.rc.argv0 = dup_or_abort(w0[0] == '/' ? w0 : "/usr/bin/true");
	b.rc.program = dup_or_abort(b.rc.argv0);
	b.rc.workspace = dup_or_abort(s->agent->workspace ? s->agent->workspace->path :
							     s->caller->cwd);
	b.rc.state_dir = dup_or_abort(s->box->state_dir ? s->box->state_dir->path :
							  "/home/fuzz/.local/state/box/fuzz");
	size_t nd = fs ? fs->n_deny : 0;
	b.rc.deny_dirs = calloc(nd ? nd : 1, sizeof(char *));
	b.rc.masks = calloc(2, sizeof(char *));
	b.rc.mask_via = calloc(2, sizeof(char *));
	b.rc.mask_is_dir = calloc(2, sizeof(bool));
	if (!b.rc.deny_dirs || !b.rc.masks || !b.rc.mask_via || !b.rc.mask_is_dir)
		abort();
	for (size_t i = 0; i < nd; i++)
		b.rc.deny_dirs[b.rc.n_deny_dirs++] = dup_or_abort(fs->deny[i]->path);
	b.rc.masks[b.rc.n_masks] = dup_or_abort("/home/fuzz/.ssh");
	b.rc.mask_is_dir[b.rc.n_masks++] = true;
	b.rc.masks[b.rc.n_masks] = dup_or_abort(b.rc.state_dir);
	b.rc.mask_is_dir[b.rc.n_masks++] = true;

	if (runtime_dir_create(&d, &b) < 0) {
		recheck_result_clear(&b.rc);
		return;
	}
	Box__Plan *p = NULL;
	char *err = NULL;
	int r = plan_build(&d, &b, &p, &err);
	if (r == 0) {
		char masks[256];
		snprintf(masks, sizeof(masks), "%s/masks/", b.runtime_dir);
		for (size_t i = 0; i < p->n_view; i++)
			if (p->view[i]->kind == BOX__VIEW_KIND__VIEW_DENY &&
			    (!p->view[i]->mask ||
			     strncmp(p->view[i]->mask, masks, strlen(masks)) != 0))
				__builtin_trap();
		char **lines = NULL;
		size_t n = 0;
		if (plan_disclosure(&b, p, &lines, &n) != 0)
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			free(lines[i]);
		free(lines);
		plan_free(p);
	} else if (r == -EINVAL) {
		/* A refusal names problems, or (a request no boxctl would build, e.g. a policy
		 * path equal to a grant) the plan validator caught the plan: fail closed, said. */
		if (p || (b.rc.n_problems == 0 && !err))
			__builtin_trap();
	}
	free(err);
	runtime_dir_remove(&d, &b);
	free(b.runtime_dir);
	recheck_result_clear(&b.rc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ProtobufCMessage *m = NULL;
	if (box_ipc_decode(&box_proto_client, BOX__MSG_TYPE__MSG_RUN_REQUEST, data, size, &m) < 0)
		return 0;
	if (base_ready())
		plan_of((Box__RunRequest *)m);
	box_msg_free(m);
	return 0;
}
