/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_config.c — box.ini parsing on arbitrary bytes (boxctl/config_parse.c,
 * config_rules.c, config_print.c, cmdline.c).
 *
 * Parses the input with box_config_parse_buffer(): the pure parser and the
 * section rules, linked without config_host.c (no file system, passwd
 * database, secrets or host probes; a fixed passwd entry stands in), prints
 * the normalized config when it loads, and frees everything. Also checks a
 * property of the command syntax on every input line: the words of
 * cmdline_split(), re-quoted with cmdline_quote() and split again, are the
 * same words (abort otherwise).
 * Trusts: nothing; input is arbitrary bytes.
 */
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxctl/cmdline.h"
#include "boxctl/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_requote(const char *line)
{
	char **a = NULL, **b = NULL;
	size_t na = 0, nb = 0;
	const char *err;

	if (cmdline_split(line, &a, &na, &err) == 0) {
		size_t cap = 3;
		for (size_t i = 0; i < na; i++)
			cap += 2 * strlen(a[i]) + 4;
		char *joined = malloc(cap);
		if (!joined)
			abort();
		joined[0] = '\0';
		for (size_t i = 0; i < na; i++) {
			char *q = cmdline_quote(a[i]);
			if (!q)
				abort();
			if (i)
				strcat(joined, " ");
			strcat(joined, q);
			free(q);
		}
		if (cmdline_split(joined, &b, &nb, &err) != 0 || nb != na)
			abort();
		for (size_t i = 0; i < na; i++)
			if (strcmp(a[i], b[i]) != 0)
				abort();
		free(joined);
	}
	cmdline_free(a);
	cmdline_free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct passwd owner = {
		.pw_name = (char *)"fuzz", .pw_uid = 1000, .pw_gid = 1000,
		.pw_dir = (char *)"/home/fuzz",
	};
	struct box_config_options opts = { .offline = true };
	struct box_config_errors errs = { 0 };
	struct box_config *cfg = NULL;

	if (box_config_parse_buffer("fuzz.ini", (const char *)data, size, &opts, &owner, &cfg,
				    &errs) == 0) {
		FILE *f = fopen("/dev/null", "we");
		if (f) {
			(void)box_config_print(f, cfg);
			fclose(f);
		}
		box_config_free(cfg);
	} else {
		FILE *f = fopen("/dev/null", "we");
		if (f) {
			box_config_errors_print(f, &errs);
			fclose(f);
		}
	}
	box_config_errors_clear(&errs);

	/* Line by line, up to 4 KiB of input. */
	size_t n = size < 4096 ? size : 4096;
	char *copy = malloc(n + 1);
	if (!copy)
		abort();
	memcpy(copy, data, n);
	copy[n] = '\0';
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		check_requote(line);
	free(copy);
	return 0;
}
