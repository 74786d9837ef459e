/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ask.c — `boxctl approve NAME|ID [ID] [--box]` and `boxctl deny NAME|ID [ID] [--box]`
 * (docs/boxctl.1.md): a person's answer to a decision the box holds for them (a forbid
 * annotated @ask, docs/box-policy.5.md). Without ID: list what waits (oldest first). With
 * ID: answer that one, once, or with --box for every equal request of this run. Asks the
 * boxd that runs the box (the service's, then this user's embedded ones); boxd checks that
 * the caller is the box's owner or root, box-policyd answers the held decision and logs it
 * with source "person" and the caller's uid.
 * Trusts: replies only after box_ipc_decode() validated them; what a box chose (paths,
 * messages) is printed through put_safe.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "parse.h"
#include "termsafe.h"

/* One boxd: 1 answered (*RES kept), 0 it runs no such box, negative errno. */
static int
ask_one(const char *path, const Box__AskRequest *q, struct box_ipc_msg *res, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_ASK_REQUEST, &q->base,
			    BOX__MSG_TYPE__MSG_ASK_REPLY, res, err, 10000);
	if (r < 0)
		return r == -EREMOTEIO ? r : 0;
	const Box__AskReply *rep = (const Box__AskReply *)res->msg;
	if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND && !rep->box_id) {
		box_ipc_msg_done(res);
		return 0; /* (NOT_FOUND with the box named: no such decision waits) */
	}
	return 1;
}

static void
print_list(const Box__AskReply *rep)
{
	if (rep->n_asks == 0) {
		printf("nothing of box %s waits for an answer\n", rep->name);
		return;
	}
	for (size_t i = 0; i < rep->n_asks; i++) {
		const Box__AskEntry *a = rep->asks[i];
		printf("%" PRIu64 "  waiting %" PRIu64 "s  ", a->ask_id, a->waited_ms / 1000);
		put_safe(stdout, a->source);
		fputs("  ", stdout);
		put_safe(stdout, a->action);
		fputc(' ', stdout);
		put_safe(stdout, a->resource[0] ? a->resource : "-");
		fputs("  ", stdout);
		for (size_t k = 0; k < a->n_rules; k++) {
			if (k)
				fputc(',', stdout);
			put_safe(stdout, a->rules[k]);
		}
		fputs("\n    ", stdout);
		put_safe(stdout, a->message);
		fputc('\n', stdout);
	}
}

static int
cmd_answer(int argc, char **argv, bool permit)
{
	const char *box = NULL, *id = NULL;
	bool for_box = false;
	const char *usage = permit ? "usage: boxctl approve NAME|ID [DECISION] [--box]\n"
				   : "usage: boxctl deny NAME|ID [DECISION] [--box]\n";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return BOXCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--box") == 0)
			for_box = true;
		else if (argv[i][0] == '-')
			goto usage;
		else if (!box)
			box = argv[i];
		else if (!id)
			id = argv[i];
		else
			goto usage;
	}
	if (!box || (for_box && !id))
		goto usage;
	Box__AskRequest q = BOX__ASK_REQUEST__INIT;
	q.box = (char *)box;
	if (id) {
		uint64_t v;
		if (parse_u64(id, UINT64_MAX, &v) < 0 || v == 0) {
			fprintf(stderr, "boxctl: error: %s is not a decision number (see `boxctl %s "
					"%s`)\n", id, permit ? "approve" : "deny", box);
			return BOXCTL_EXIT_USAGE;
		}
		q.has_ask_id = q.has_permit = q.has_for_box = true;
		q.ask_id = v;
		q.permit = permit;
		q.for_box = for_box;
	}
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	char *err = NULL;
	int r = ask_one(client_service_path(), &q, &m, &err);
	char **socks = NULL;
	if (r == 0 && client_embedded_sockets(&socks) == 0) {
		for (size_t i = 0; socks[i]; i++) {
			if (r == 0)
				r = ask_one(socks[i], &q, &m, &err);
			free(socks[i]);
		}
	}
	free(socks);
	if (r <= 0) {
		if (r == 0)
			fprintf(stderr, "boxctl: error: no box named %s\n", box);
		else
			fprintf(stderr, "boxctl: error: %s: %s\n", box, err ? err : strerror(-r));
		free(err);
		return BOXCTL_EXIT_FAILURE;
	}
	const Box__AskReply *rep = (const Box__AskReply *)m.msg;
	int code = BOXCTL_EXIT_OK;
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		fprintf(stderr, "boxctl: error: %s: %s\n", box, rep->error ? rep->error : "refused");
		code = BOXCTL_EXIT_FAILURE;
	} else if (!id) {
		print_list(rep);
	} else {
		printf("decision %s of box %s %s%s\n", id, rep->name,
		       permit ? "permitted" : "denied", for_box ? " (for this box)" : "");
	}
	box_ipc_msg_done(&m);
	return code;
usage:
	fputs(usage, stderr);
	return BOXCTL_EXIT_USAGE;
}

int
cmd_approve(int argc, char **argv)
{
	return cmd_answer(argc, argv, true);
}

int
cmd_deny(int argc, char **argv)
{
	return cmd_answer(argc, argv, false);
}
