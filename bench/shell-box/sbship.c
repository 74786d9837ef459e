/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbship.c — box-policyd's CPU per line box-shell ships (docs/box-policy.5.md, decisions
 * without a round trip), without a box: box-policyd alone under the test harness
 * (test/policyd/harness.c, playing boxd and box-shell), an allow-all policy, and the
 * PolicyShips box-shell sends for bench/shell-box's two workloads:
 *   loop   the 100,000-iteration `[` loop: ships of 128 shell:exec decisions, each followed
 *          by its outcome (the built-in's status), as box-shell's ship queue holds them
 *   walk   grep -rn over a tree: ships of 128 fs:read decisions (a directory's entries,
 *          decided together), their outcomes in the next ship (they are recorded after the
 *          files were read, and the decisions leave before)
 * Each line is re-decided, logged and chained by box-policyd as in a box. Prints, per
 * workload, box-policyd's CPU (/proc/PID/schedstat around the ships and the Decide that
 * follows them, whose answer says every ship was taken) per shipped line and lines per
 * CPU-second: on a shared machine CPU time is steadier than the wall clock. Then it checks
 * that decisions.jsonl holds every line; exit 1 when it does not or a step fails.
 *   sbship loop|walk LINES
 * Trusts: nothing; it is benchmark code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdutil.h"
#include "harness.h"

#define PER_SHIP 128 /* decisions per ship (box-shell's own ships hold up to 256 items) */

static unsigned long long
cpu_ns(pid_t pid)
{
	char path[64], buf[128] = "";
	(void)snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strtoull(buf, NULL, 10);
}

/* One decision's request, its outcome, and the ship items naming them. */
struct one {
	char s0[80], s1[24];
	Box__DecideRequest d;
	Box__PolicyField f[6], *fp[6];
	Box__PolicyValue v[6];
	Box__RecordRequest rec;
	Box__PolicyField of, *ofp[1];
	Box__PolicyValue ov;
	Box__PolicyShipItem dec, out;
};

static char *rules[] = { (char *)"policy_0" };

static void
make_one(struct one *o, bool walk, long n, uint64_t id)
{
	static const char *const exec_names[6] = { "command", "program", "arg1",
						   "arg2",    "arg_count", "cwd" };
	static const char *const walk_names[2] = { "path", "operation" };
	size_t nf = walk ? 2 : 6;
	const char *vals[6];
	if (walk) {
		(void)snprintf(o->s0, sizeof(o->s0), "/var/tmp/sbship/d%02ld/s%02ld/f%03ld.c",
			       n / 1000 % 10, n / 100 % 100, n % 100);
		vals[0] = o->s0;
		vals[1] = "read_content";
	} else {
		(void)snprintf(o->s0, sizeof(o->s0), "[ %ld -lt 100000 ]", n);
		(void)snprintf(o->s1, sizeof(o->s1), "%ld", n);
		vals[0] = o->s0;
		vals[1] = "[";
		vals[2] = o->s1;
		vals[3] = "-lt";
		vals[4] = NULL;
		vals[5] = "/var/tmp/sbship";
	}
	box__decide_request__init(&o->d);
	for (size_t j = 0; j < nf; j++) {
		box__policy_field__init(&o->f[j]);
		box__policy_value__init(&o->v[j]);
		o->f[j].name = (char *)(walk ? walk_names[j] : exec_names[j]);
		o->f[j].value = &o->v[j];
		o->fp[j] = &o->f[j];
		if (vals[j]) {
			o->v[j].kind_case = BOX__POLICY_VALUE__KIND_STR;
			o->v[j].str = (char *)vals[j];
		} else {
			o->v[j].kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
			o->v[j].integer = 4;
		}
	}
	o->d.action = (char *)(walk ? "fs:read" : "shell:exec");
	o->d.input = o->fp;
	o->d.n_input = nf;
	box__policy_ship_item__init(&o->dec);
	o->dec.decide = &o->d;
	o->dec.has_verdict = o->dec.has_cause = true;
	o->dec.verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
	o->dec.cause = BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	o->dec.rules = rules;
	o->dec.n_rules = 1;
	/* the outcome: a built-in's status, or a read file's result */
	box__policy_field__init(&o->of);
	box__policy_value__init(&o->ov);
	o->of.name = (char *)(walk ? "result" : "status");
	o->of.value = &o->ov;
	if (walk) {
		o->ov.kind_case = BOX__POLICY_VALUE__KIND_STR;
		o->ov.str = (char *)"completed";
	} else {
		o->ov.kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
		o->ov.integer = 0;
	}
	o->ofp[0] = &o->of;
	box__record_request__init(&o->rec);
	o->rec.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
	o->rec.action = o->d.action;
	o->rec.decide_id = id;
	o->rec.output = o->ofp;
	o->rec.n_output = 1;
	box__policy_ship_item__init(&o->out);
	o->out.record = &o->rec;
}

static int
send_ship(struct pd *pd, uint64_t id, Box__PolicyShipItem **items, size_t n)
{
	Box__PolicyShip m = BOX__POLICY_SHIP__INIT;
	m.generation = 1;
	m.items = items;
	m.n_items = n;
	return box_ipc_send(pd->fd[PD_SHELL], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_SHIP,
			    id, &m.base, NULL, 0);
}

/* PolicyLocal asked and read (a ship is refused on a channel that has not asked). */
static int
ask_local(struct pd *pd)
{
	Box__PolicyLocalRequest q = BOX__POLICY_LOCAL_REQUEST__INIT;
	uint64_t id = pd->next_id++;
	if (box_ipc_send(pd->fd[PD_SHELL], &box_proto_policy,
			 BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, id, &q.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_chan *c =
		box_ipc_chan_new(pd->fd[PD_SHELL], &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	(void)box_ipc_chan_set_state(c, BOX_POLICY_READY);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = box_ipc_recv_wait(c, &m, 10000) > 0 && m.type == BOX__MSG_TYPE__MSG_POLICY_LOCAL &&
			m.request_id == id
		? 0
		: -1;
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
	return r;
}

static long
count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	long n = 0;
	int ch;
	if (!f)
		return -1;
	while ((ch = getc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

int
main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "loop") != 0 && strcmp(argv[1], "walk") != 0) ||
	    atol(argv[2]) < 2 * PER_SHIP) {
		fprintf(stderr, "usage: sbship loop|walk LINES (LINES >= %d)\n", 2 * PER_SHIP);
		return 2;
	}
	bool walk = strcmp(argv[1], "walk") == 0;
	long decisions = atol(argv[2]) / 2 / PER_SHIP * PER_SHIP;
	char *dir = pd_tmpdir("sbship");
	char err[600], log[600];
	(void)snprintf(err, sizeof(err), "%s/policyd.err", dir);
	(void)snprintf(log, sizeof(log), "%s/decisions.jsonl", dir);
	struct pd pd;
	struct pd_opts o = { .binary = pd_binary(), .state_dir = dir,
			     .policy = "@id(\"policy_0\") permit (principal, action, resource);\n",
			     .stderr_path = err, .box_name = "sbship", .box_id = "00000000005b" };
	if (pd_start(&o, &pd, NULL) < 0 || ask_local(&pd) < 0) {
		fprintf(stderr, "sbship: box-policyd did not start (%s)\n", err);
		return 1;
	}
	struct one *ones = calloc(PER_SHIP, sizeof(*ones));
	Box__PolicyShipItem *items[2 * PER_SHIP];
	unsigned long long c0 = cpu_ns(pd.pid);
	long shipped = 0;
	bool ok = true;
	for (long k = 0; ok && k < decisions / PER_SHIP; k++) {
		uint64_t first = pd.next_id;
		pd.next_id += PER_SHIP;
		size_t n = 0;
		for (size_t i = 0; i < PER_SHIP; i++) {
			make_one(&ones[i], walk, k * PER_SHIP + (long)i, first + i);
			items[n++] = &ones[i].dec;
			if (!walk)
				items[n++] = &ones[i].out;
		}
		ok = send_ship(&pd, first, items, n) == 0;
		if (ok && walk) {
			for (size_t i = 0; i < PER_SHIP; i++)
				items[i] = &ones[i].out;
			ok = send_ship(&pd, 0, items, PER_SHIP) == 0;
		}
		shipped += 2 * PER_SHIP;
	}
	/* A Decide after the ships: its answer comes once every ship was taken. */
	Box__DecideReply *rep = NULL;
	ok = ok && pd_send_line(&pd, PD_SHELL,
				"{\"action\":\"fs:read\",\"input\":{\"path\":\"/sbship\","
				"\"operation\":\"read_content\"}}",
				&rep) == 0;
	unsigned long long c1 = cpu_ns(pd.pid);
	box_msg_free(rep ? &rep->base : NULL);
	ok = pd_stop(&pd) == 0 && ok;
	long lines = count_lines(log);
	/* every shipped line, the Decide's, the seal */
	bool all = lines == shipped + 2;
	double ns = (double)(c1 - c0);
	if (ok && c1 > c0)
		printf("%s lines=%ld cpu_ms=%.1f ns_per_line=%.0f lines_per_cpu_s=%.0f logged=%s\n",
		       argv[1], shipped, ns / 1e6, ns / (double)shipped,
		       (double)shipped / (ns / 1e9), all ? "all" : "MISSING");
	else
		fprintf(stderr, "sbship: box-policyd failed (%s)\n", err);
	if (!all)
		fprintf(stderr, "sbship: decisions.jsonl holds %ld lines, not %ld\n", lines,
			shipped + 2);
	free(ones);
	pd_rmtree(dir);
	free(dir);
	return ok && all ? 0 : 1;
}
