/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_policy.c — libboxpolicy in-process: decisions per second and p50/p99
 * latency of bp_decide for one policy over a file of JSON-line requests
 * (the `boxctl policy eval` input format), on one thread.
 * Usage: bench_policy POLICY REQUESTS SECONDS
 * Prints one line: "decisions_per_s P50_NS P99_NS decisions_per_cpu_s" — the
 * last over the process's CPU time, which other programs on a shared core do
 * not take from (on an idle core it equals the first).
 * Or: bench_policy --compare POLICY REQUESTS — decides every request with
 * the rule index and without it (bp_load_options.no_rule_index) and checks
 * verdict, cause, rules and message agree; prints one line, exits 1 if not.
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

static double
cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static struct bp_policy *
load_policy(const char *path, bool no_index)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		perror(path);
		return NULL;
	}
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof(text), f);
	fclose(f);
	struct bp_policy *p;
	struct bp_diags *d;
	struct bp_load_options o = { .no_rule_index = no_index };
	if (bp_policy_load(text, len, &o, &p, &d) < 0) {
		for (size_t i = 0; i < bp_diags_count(d); i++)
			fprintf(stderr, "%s\n", bp_diag_message(d, i, NULL, NULL, NULL));
		return NULL;
	}
	bp_diags_free(d);
	return p;
}

/* The requests of PATH (JSON lines) built against P; *N of them. */
static struct bp_request **
load_requests(const struct bp_policy *p, const char *path, size_t *ret_n)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		perror(path);
		return NULL;
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
			return NULL;
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
			return NULL;
		}
		json_decref(j);
		if (n == cap) {
			cap *= 2;
			reqs = realloc(reqs, cap * sizeof(*reqs));
			if (!reqs)
				return NULL;
		}
		reqs[n++] = r;
	}
	free(line);
	fclose(f);
	*ret_n = n;
	return n ? reqs : NULL;
}

static int
compare(const char *policy, const char *requests)
{
	struct bp_policy *p = load_policy(policy, false), *q = load_policy(policy, true);
	size_t n = 0, m = 0;
	struct bp_request **rp = p ? load_requests(p, requests, &n) : NULL;
	struct bp_request **rq = q ? load_requests(q, requests, &m) : NULL;
	struct bp_decision *dp, *dq;
	if (!rp || !rq || n != m || bp_decision_new(&dp) < 0 || bp_decision_new(&dq) < 0)
		return 1;
	size_t bad = 0, permits = 0, ev_p = 0, ev_q = 0;
	for (size_t i = 0; i < n; i++) {
		if (bp_decide(p, rp[i], NULL, dp) < 0 || bp_decide(q, rq[i], NULL, dq) < 0)
			return 1;
		ev_p += bp_decision_rules_evaluated(dp);
		ev_q += bp_decision_rules_evaluated(dq);
		permits += bp_decision_verdict(dp) == BP_PERMIT;
		bool same = bp_decision_verdict(dp) == bp_decision_verdict(dq) &&
			    bp_decision_cause(dp) == bp_decision_cause(dq) &&
			    bp_decision_rule_count(dp) == bp_decision_rule_count(dq) &&
			    strcmp(bp_decision_message(dp), bp_decision_message(dq)) == 0;
		for (size_t k = 0; same && k < bp_decision_rule_count(dp); k++)
			same = bp_decision_rule_index(dp, k) == bp_decision_rule_index(dq, k);
		if (!same && bad++ < 3)
			fprintf(stderr, "request %zu: indexed \"%s\", every rule \"%s\"\n", i + 1,
				bp_decision_message(dp), bp_decision_message(dq));
	}
	printf("%zu of %zu requests decided alike with and without the rule index (%zu permitted); "
	       "%.1f vs %.1f rules evaluated per request\n",
	       n - bad, n, permits, (double)ev_p / (double)n, (double)ev_q / (double)n);
	for (size_t i = 0; i < n; i++) {
		bp_request_free(rp[i]);
		bp_request_free(rq[i]);
	}
	free(rp);
	free(rq);
	bp_decision_free(dp);
	bp_decision_free(dq);
	bp_policy_free(p);
	bp_policy_free(q);
	return bad ? 1 : 0;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--compare") == 0)
		return compare(argv[2], argv[3]);
	if (argc != 4) {
		fprintf(stderr, "usage: bench_policy POLICY REQUESTS SECONDS\n"
				"       bench_policy --compare POLICY REQUESTS\n");
		return 2;
	}
	double secs = atof(argv[3]);
	struct bp_policy *p = load_policy(argv[1], false);
	if (!p)
		return 1;
	size_t n = 0;
	struct bp_request **reqs = load_requests(p, argv[2], &n);
	if (!reqs)
		return 1;

	struct bp_decision *dec;
	if (bp_decision_new(&dec) < 0)
		return 1;
	/* warm up */
	for (size_t i = 0; i < 10000; i++)
		bp_decide(p, reqs[i % n], NULL, dec);

	/* throughput */
	uint64_t count = 0, permits = 0;
	double c0 = cpu_now();
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
	double cps = (double)count / (cpu_now() - c0);

	/* latency, one decision at a time (no more samples than the throughput run made) */
	size_t samples = count < 200000 ? (size_t)count : 200000;
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
	printf("%.0f %llu %llu %.0f\n", dps, (unsigned long long)lat[samples / 2],
	       (unsigned long long)lat[samples * 99 / 100], cps);
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
