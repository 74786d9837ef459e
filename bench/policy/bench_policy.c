/*
 * bench_policy.c — libboxpolicy in-process: decisions per second and p50/p99
 * latency of bp_decide for one policy over a file of JSON-line requests
 * (the `boxctl policy eval` input format), on one thread.
 * Usage: bench_policy POLICY REQUESTS SECONDS
 * Prints one line: "decisions_per_s P50_NS P99_NS".
 * Trusts: nothing; it is benchmark code reading its own generated inputs.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boxpolicy.h"

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench_policy POLICY REQUESTS SECONDS\n");
		return 2;
	}
	double secs = atof(argv[3]);
	FILE *f = fopen(argv[1], "re");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof(text), f);
	fclose(f);
	struct bp_policy *p;
	struct bp_diags *d;
	struct bp_load_options o = { 0 };
	if (bp_policy_load(text, len, &o, &p, &d) < 0) {
		for (size_t i = 0; i < bp_diags_count(d); i++)
			fprintf(stderr, "%s\n", bp_diag_message(d, i, NULL, NULL, NULL));
		return 1;
	}
	bp_diags_free(d);

	f = fopen(argv[2], "re");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	size_t n = 0, cap = 1024;
	struct bp_request **reqs = malloc(cap * sizeof(*reqs));
	char *line = NULL;
	size_t lcap = 0;
	while (reqs && getline(&line, &lcap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		json_t *input = json_object_get(j, "input");
		struct bp_request *r;
		if (!j || bp_request_new(p, &r) < 0 ||
		    bp_request_set_action(r, json_string_value(json_object_get(j, "action"))) < 0)
			return 1;
		const char *k;
		json_t *v;
		json_object_foreach(input, k, v) {
			if (json_is_string(v))
				bp_request_set_string(r, k, json_string_value(v), json_string_length(v));
			else if (json_is_integer(v))
				bp_request_set_long(r, k, json_integer_value(v));
			else if (json_is_boolean(v))
				bp_request_set_bool(r, k, json_is_true(v));
		}
		if (bp_request_problem(r)) {
			fprintf(stderr, "request %zu: %s\n", n + 1, bp_request_problem(r));
			return 1;
		}
		json_decref(j);
		if (n == cap) {
			cap *= 2;
			reqs = realloc(reqs, cap * sizeof(*reqs));
			if (!reqs)
				return 1;
		}
		reqs[n++] = r;
	}
	free(line);
	fclose(f);
	if (n == 0)
		return 1;

	struct bp_decision *dec;
	if (bp_decision_new(&dec) < 0)
		return 1;
	/* warm up */
	for (size_t i = 0; i < 10000; i++)
		bp_decide(p, reqs[i % n], NULL, dec);

	/* throughput */
	uint64_t count = 0, permits = 0;
	double t0 = now(), t1;
	do {
		for (size_t i = 0; i < n; i++) {
			bp_decide(p, reqs[i], NULL, dec);
			permits += bp_decision_verdict(dec) == BP_PERMIT;
		}
		count += n;
		t1 = now();
	} while (t1 - t0 < secs);
	double dps = (double)count / (t1 - t0);

	/* latency, one decision at a time */
	size_t samples = 200000;
	uint64_t *lat = malloc(samples * sizeof(*lat));
	if (!lat)
		return 1;
	for (size_t i = 0; i < samples; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		bp_decide(p, reqs[i % n], NULL, dec);
		clock_gettime(CLOCK_MONOTONIC, &b);
		lat[i] = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	}
	qsort(lat, samples, sizeof(*lat), cmp_u64);
	printf("%.0f %llu %llu\n", dps, (unsigned long long)lat[samples / 2],
	       (unsigned long long)lat[samples * 99 / 100]);
	fprintf(stderr, "# %zu rules, %zu requests, %.1f%% permitted\n", bp_policy_rule_count(p), n,
		100.0 * (double)permits / (double)count);
	free(lat);
	for (size_t i = 0; i < n; i++)
		bp_request_free(reqs[i]);
	free(reqs);
	bp_decision_free(dec);
	bp_policy_free(p);
	return 0;
}
