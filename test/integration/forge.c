/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forge.c — box-test-forge: the bytes of one box-policyd message, as a script
 * that reached a box-shell process's policyd channel would write them (for
 * t-shell-fds.sh, which shows that it cannot).
 *
 *   box-test-forge [--printf] decide ACTION [NAME=s:TEXT | NAME=i:NUMBER]...
 *   box-test-forge [--printf] record ACTION DECIDE_ID [NAME=i:NUMBER | NAME=s:TEXT]...
 *
 * decide: a DecideRequest with those input fields; record: a RecordRequest
 * (a response) naming DECIDE_ID, with those output fields. Writes the packed
 * envelope (request id 1) to stdout, or with --printf the same bytes as a
 * printf(1) format of \NNN escapes.
 * Trusts: its arguments; it is test code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "proto_policy.h"

#define FIELDS_MAX 16

static bool as_printf;

static int
emit(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	(void)userdata;
	(void)fds;
	(void)n_fds;
	for (size_t i = 0; i < len; i++)
		if (as_printf ? printf("\\%03o", pkt[i]) < 0 : putchar(pkt[i]) == EOF)
			return -EIO;
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: box-test-forge [--printf] decide ACTION [NAME=s:TEXT|NAME=i:N]...\n"
			"       box-test-forge [--printf] record ACTION DECIDE_ID [NAME=i:N|NAME=s:TEXT]...\n");
	exit(2);
}

/* ARGS as fields into F, V, P; their count. */
static size_t
fields(char **args, int n, Box__PolicyField *f, Box__PolicyValue *v, Box__PolicyField **p)
{
	if (n > FIELDS_MAX)
		usage();
	for (int i = 0; i < n; i++) {
		char *eq = strchr(args[i], '=');
		if (!eq || (strncmp(eq + 1, "s:", 2) != 0 && strncmp(eq + 1, "i:", 2) != 0))
			usage();
		*eq = '\0';
		box__policy_field__init(&f[i]);
		box__policy_value__init(&v[i]);
		f[i].name = args[i];
		f[i].value = &v[i];
		if (eq[1] == 's') {
			v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
			v[i].str = eq + 3;
		} else {
			v[i].kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
			v[i].integer = strtoll(eq + 3, NULL, 10);
		}
		p[i] = &f[i];
	}
	return (size_t)n;
}

int
main(int argc, char **argv)
{
	Box__PolicyField f[FIELDS_MAX], *p[FIELDS_MAX];
	Box__PolicyValue v[FIELDS_MAX];
	int i = 1, r;

	if (i < argc && strcmp(argv[i], "--printf") == 0) {
		as_printf = true;
		i++;
	}
	if (argc - i >= 2 && strcmp(argv[i], "decide") == 0) {
		Box__DecideRequest m = BOX__DECIDE_REQUEST__INIT;
		m.action = argv[i + 1];
		m.n_input = fields(argv + i + 2, argc - i - 2, f, v, p);
		m.input = p;
		r = box_ipc_pack(&box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, 1, &m.base,
				 NULL, 0, emit, NULL);
	} else if (argc - i >= 3 && strcmp(argv[i], "record") == 0) {
		Box__RecordRequest m = BOX__RECORD_REQUEST__INIT;
		m.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
		m.action = argv[i + 1];
		m.decide_id = strtoull(argv[i + 2], NULL, 10);
		m.n_output = fields(argv + i + 3, argc - i - 3, f, v, p);
		m.output = p;
		r = box_ipc_pack(&box_proto_policy, BOX__MSG_TYPE__MSG_RECORD_REQUEST, 1, &m.base,
				 NULL, 0, emit, NULL);
	} else {
		usage();
	}
	if (r < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "box-test-forge: %s\n", strerror(r < 0 ? -r : errno));
		return 1;
	}
	return 0;
}
