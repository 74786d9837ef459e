/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.c — plays boxd for box-policyd (harness.h).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cleanup.h"
#include "envelope.pb-c.h"
#include "fdutil.h"
#include "harness.h"
#include "logchain.h"
#include "playboxd.h"
#include "proto/policy_permits.h"

/* A Decide sent and not answered yet (packed: kept as a permit if permitted). */
struct pd_asked {
	int peer;
	uint64_t id;
	uint8_t *data;
	size_t len;
};

static int
asked_keep(struct pd *pd, int peer, uint64_t id, const Box__DecideRequest *req)
{
	if (pd->n_asked == pd->cap_asked) {
		size_t cap = pd->cap_asked ? pd->cap_asked * 2 : 64;
		struct pd_asked *a = realloc(pd->asked, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		pd->asked = a;
		pd->cap_asked = cap;
	}
	struct pd_asked *a = &pd->asked[pd->n_asked];
	a->data = policy_permits_pack(req, &a->len);
	if (!a->data)
		return -ENOMEM;
	a->peer = peer;
	a->id = id;
	pd->n_asked++;
	return 0;
}

/* Decide ID of PEER was answered: a permit is kept (what a Record of it names). */
static void
asked_answer(struct pd *pd, int peer, uint64_t id, bool permit)
{
	for (size_t i = 0; i < pd->n_asked; i++) {
		struct pd_asked *a = &pd->asked[i];
		if (a->peer != peer || a->id != id)
			continue;
		if (permit && pd->permits[peer])
			(void)policy_permits_add_packed(pd->permits[peer], id, a->data, a->len);
		free(a->data);
		*a = pd->asked[--pd->n_asked];
		return;
	}
}

const char *
pd_binary(void)
{
	static char path[PATH_MAX];
	const char *bin = getenv("BOX_BIN");

	if (bin && *bin) {
		(void)snprintf(path, sizeof(path), "%s/box-policyd", bin);
		return path;
	}
	char self[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return "box-policyd";
	self[n] = 0;
	/* BUILD/test/policyd/x or BUILD/bench/policyd/x -> BUILD/bin/box-policyd */
	char *s = strrchr(self, '/');
	for (int i = 0; s && i < 2; i++) {
		*s = 0;
		s = strrchr(self, '/');
	}
	if (s)
		*s = 0;
	(void)snprintf(path, sizeof(path), "%s/bin/box-policyd", self);
	return path;
}

char *
pd_unchain(const char *text, const char **why)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	uint8_t head[LOGCHAIN_HASH_LEN];
	uint64_t seq = 0;
	bool first = true;

	*why = NULL;
	if (!m) {
		*why = "out of memory";
		return NULL;
	}
	for (const char *p = text; *p && !*why;) {
		const char *nl = strchr(p, '\n');
		if (!nl) {
			*why = "a line without its newline";
			break;
		}
		size_t n = (size_t)(nl - p);
		/* ,"seq":N,"prev":"<64 hex>"} */
		const char *pv = n > 80 ? p + n - 75 : NULL;
		const char *sq = NULL;
		for (const char *q = pv ? pv - 1 : NULL; q && q > p; q--)
			if (strncmp(q, ",\"seq\":", 7) == 0) {
				sq = q;
				break;
			}
		if (!pv || strncmp(pv, ",\"prev\":\"", 9) != 0 || !sq) {
			*why = "a line without its ,\"seq\":N,\"prev\":\"…\" suffix";
			break;
		}
		uint8_t prev[LOGCHAIN_HASH_LEN];
		uint64_t s = strtoull(sq + 7, NULL, 10);
		if (logchain_unhex(pv + 9, LOGCHAIN_HEX_LEN, prev) < 0)
			*why = "a prev that is not 64 hex digits";
		else if (!first && (s != seq + 1 || memcmp(prev, head, sizeof(head)) != 0))
			*why = "a line whose seq or prev does not follow the line before";
		logchain_sha256(p, n, head);
		seq = s;
		first = false;
		if (!memmem(p, n, ",\"seal\":\"end\",", 14)) {
			fwrite(p, 1, (size_t)(sq - p), m);
			fputs("}\n", m);
		}
		p = nl + 1;
	}
	fclose(m);
	if (*why) {
		free(out);
		return NULL;
	}
	return out;
}

bool
pd_unchain_log(char **log)
{
	const char *why = NULL;
	char *u = *log ? pd_unchain(*log, &why) : NULL;
	if (!u) {
		printf("#   the log's chain: %s in:\n%s", why ? why : "no log", *log ? *log : "");
		return false;
	}
	free(*log);
	*log = u;
	return true;
}

char *
pd_tmpdir(const char *tag)
{
	const char *t = getenv("TMPDIR");
	char *p = NULL;
	if (asprintf(&p, "%s/box-%s-XXXXXX", t && *t ? t : "/tmp", tag) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

void
pd_rmtree(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		(void)waitpid(pid, NULL, 0);
}

/* ---- JSON -> fields --------------------------------------------------------- */

static Box__PolicyValue *value_from_json(json_t *j);
static int fields_from(json_t *o, Box__PolicyField ***ret, size_t *n);

static Box__PolicyField *
field_new(const char *name, json_t *j)
{
	Box__PolicyField *f = malloc(sizeof(*f));
	if (!f)
		return NULL;
	box__policy_field__init(f);
	f->name = strdup(name);
	f->value = value_from_json(j);
	if (!f->name || !f->value) {
		box__policy_field__free_unpacked(f, NULL);
		return NULL;
	}
	return f;
}

static Box__PolicyValue *
value_from_json(json_t *j)
{
	Box__PolicyValue *v = malloc(sizeof(*v));
	if (!v)
		return NULL;
	box__policy_value__init(v);
	switch (json_typeof(j)) {
	case JSON_STRING:
		v->kind_case = BOX__POLICY_VALUE__KIND_STR;
		v->str = strdup(json_string_value(j));
		if (!v->str)
			goto fail;
		break;
	case JSON_INTEGER:
		v->kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
		v->integer = json_integer_value(j);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		v->kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
		v->boolean = json_is_true(j);
		break;
	case JSON_ARRAY: {
		Box__PolicyValueSet *s = malloc(sizeof(*s));
		if (!s)
			goto fail;
		box__policy_value_set__init(s);
		v->kind_case = BOX__POLICY_VALUE__KIND_SET;
		v->set = s;
		size_t n = json_array_size(j);
		s->elems = calloc(n ? n : 1, sizeof(*s->elems));
		if (!s->elems)
			goto fail;
		for (size_t i = 0; i < n; i++) {
			s->elems[i] = value_from_json(json_array_get(j, i));
			if (!s->elems[i])
				goto fail;
			s->n_elems = i + 1;
		}
		break;
	}
	case JSON_OBJECT: {
		Box__PolicyValueRecord *r = malloc(sizeof(*r));
		if (!r)
			goto fail;
		box__policy_value_record__init(r);
		v->kind_case = BOX__POLICY_VALUE__KIND_RECORD;
		v->record = r;
		if (fields_from(j, &r->fields, &r->n_fields) < 0)
			goto fail;
		break;
	}
	case JSON_REAL:
	case JSON_NULL:
	default: goto fail;
	}
	return v;
fail:
	box__policy_value__free_unpacked(v, NULL);
	return NULL;
}

static int
fields_from(json_t *o, Box__PolicyField ***ret, size_t *n)
{
	const char *k;
	json_t *v;
	size_t i = 0;

	*ret = NULL;
	*n = 0;
	if (!o)
		return 0;
	if (!json_is_object(o))
		return -EINVAL;
	Box__PolicyField **f = calloc(json_object_size(o) + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	json_object_foreach(o, k, v)
	{
		f[i] = field_new(k, v);
		if (!f[i]) {
			pd_fields_free(f, i);
			return -EINVAL;
		}
		i++;
	}
	*ret = f;
	*n = i;
	return 0;
}

int
pd_fields_from_json(const char *json_obj, Box__PolicyField ***ret, size_t *n)
{
	json_t *o = json_loads(json_obj, 0, NULL);
	if (!o)
		return -EINVAL;
	int r = fields_from(o, ret, n);
	json_decref(o);
	return r;
}

void
pd_fields_free(Box__PolicyField **f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		box__policy_field__free_unpacked(f[i], NULL);
	free(f);
}

/* ---- process ---------------------------------------------------------------- */

int
pd_start(const struct pd_opts *o, struct pd *pd, Box__PolicyReady **ready)
{
	int theirs[PD_N];
	char path[PATH_MAX];
	int r;

	memset(pd, 0, sizeof(*pd));
	pd->pid = -1;
	pd->next_id = 1;
	pd->tel_fd = -1;
	for (int i = 0; i < PD_N; i++) {
		int sv[2];
		pd->fd[i] = theirs[i] = -1;
		if (!(pd->permits[i] = policy_permits_new()))
			return -ENOMEM;
		if (i > 0 && o->no_peers)
			continue;
		if (box_ipc_socketpair(sv, false) < 0)
			return -errno;
		pd->fd[i] = sv[0];
		theirs[i] = sv[1];
	}
	(void)snprintf(path, sizeof(path), "%s/policy", o->state_dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int dirfd = open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", o->state_dir);
	_cleanup_close_ int logfd =
		open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (dirfd < 0 || logfd < 0)
		return -errno;

	int src[PD_N];
	unsigned n = 0;
	for (int i = 0; i < PD_N; i++)
		if (theirs[i] >= 0)
			src[n++] = theirs[i]; /* at 3 + i: only the boxd channel may stand alone */
	char clock_env[300], delay_env[300];
	(void)snprintf(clock_env, sizeof(clock_env), "BOX_TEST_CLOCK%s%s", o->test_clock ? "=" : "",
		       o->test_clock ? o->test_clock : "");
	(void)snprintf(delay_env, sizeof(delay_env), "BOX_TEST_POLICYD_SYNC_DELAY_MS%s%s",
		       o->sync_delay_ms ? "=" : "", o->sync_delay_ms ? o->sync_delay_ms : "");
	const char *env[] = { clock_env, delay_env, NULL };
	struct pb_spawn sp = { .binary = o->binary, .argv0 = "box-policyd", .fds = src, .n_fds = n,
			       .stderr_path = o->stderr_path, .env = env };
	pid_t pid = pb_spawn(&sp);
	if (pid < 0)
		return (int)pid;
	pd->pid = pid;
	for (int i = 0; i < PD_N; i++)
		safe_close(theirs[i]);
	for (int i = 0; i < PD_N; i++)
		if (pd->fd[i] >= 0) {
			/* boxd's channel starts at `init`; a peer's opens `ready`. */
			pd->chan[i] = box_ipc_chan_new(pd->fd[i], &box_proto_policy,
						       BOX_POLICY_ROLE_POLICYD);
			if (!pd->chan[i])
				return -ENOMEM;
			if (i != PD_BOXD)
				(void)box_ipc_chan_set_state(pd->chan[i], BOX_POLICY_READY);
		}

	Box__PolicyInit init = BOX__POLICY_INIT__INIT;
	init.mcp_namespaces = (char **)o->mcp_namespaces;
	init.n_mcp_namespaces = o->n_mcp_namespaces;
	init.box_name = (char *)(o->box_name ? o->box_name : "demo");
	init.box_id = (char *)(o->box_id ? o->box_id : "0123456789ab");
	init.home = (char *)(o->home ? o->home : "/home/user");
	if (o->policy) {
		init.has_policy_text = true;
		init.policy_text.data = (uint8_t *)o->policy;
		init.policy_text.len = strlen(o->policy);
	}
	if (o->history_sync) {
		init.has_history_sync = true;
		init.history_sync = strcmp(o->history_sync, "always") == 0
					    ? BOX__HISTORY_SYNC__HISTORY_SYNC_ALWAYS
				    : strcmp(o->history_sync, "batch") == 0
					    ? BOX__HISTORY_SYNC__HISTORY_SYNC_BATCH
					    : BOX__HISTORY_SYNC__HISTORY_SYNC_OFF;
	}
	Box__PolicyLogHead head = BOX__POLICY_LOG_HEAD__INIT;
	if (o->log_head_seq) {
		head.seq = o->log_head_seq;
		head.head.data = (uint8_t *)o->log_head;
		head.head.len = sizeof(o->log_head);
		init.log_head = &head;
	}
	if (o->ask_timeout_ms) {
		init.has_ask_timeout_ms = true;
		init.ask_timeout_ms = o->ask_timeout_ms;
	}
	init.has_ask_default = o->ask_default;
	init.ask_default = o->ask_default;
	init.policy_file = (char *)o->policy_file;
	int fds[3] = { dirfd, logfd, -1 };
	unsigned n_fds = 2;
	uint32_t otlp_include[1] = { 7 };
	_cleanup_close_ int tel_theirs = -1;
	if (o->otlp_target) {
		int sv[2];
		if (box_ipc_socketpair(sv, false) < 0)
			return -errno;
		pd->tel_fd = sv[0];
		tel_theirs = sv[1];
		init.otlp_include = otlp_include;
		init.n_otlp_include = 1;
		fds[n_fds++] = tel_theirs;
	}
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	pd->next_id++; /* PolicyInit is request 1 */
	r = pb_init(pd->chan[PD_BOXD], BOX__MSG_TYPE__MSG_POLICY_INIT, &init.base, fds, n_fds,
		    BOX__MSG_TYPE__MSG_POLICY_READY, 20000, &m);
	if (r < 0) {
		box_ipc_msg_done(&m);
		return r;
	}
	if (ready) {
		*ready = (Box__PolicyReady *)m.msg;
		m.msg = NULL;
	}
	box_ipc_msg_done(&m);
	return 0;
}

static void
close_all(struct pd *pd)
{
	for (int i = 0; i < PD_N; i++) {
		box_ipc_chan_freep(&pd->chan[i]);
		pd->fd[i] = safe_close(pd->fd[i]);
		policy_permits_free(pd->permits[i]);
		pd->permits[i] = NULL;
	}
	pd->tel_fd = safe_close(pd->tel_fd);
	for (size_t i = 0; i < pd->n_asked; i++)
		free(pd->asked[i].data);
	free(pd->asked);
	pd->asked = NULL;
	pd->n_asked = pd->cap_asked = 0;
}

int
pd_stop(struct pd *pd)
{
	int status;
	close_all(pd);
	if (pd->pid <= 0)
		return -1;
	if (waitpid(pd->pid, &status, 0) < 0)
		return -1;
	pd->pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int
pd_stop_sealed(struct pd *pd)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;

	if (pd->fd[PD_BOXD] >= 0 && shutdown(pd->fd[PD_BOXD], SHUT_WR) == 0) {
		/* The peers end beside it (boxd/box.c): box-policyd ends once they have. */
		for (int i = PD_BOXD + 1; i < PD_N; i++) {
			box_ipc_chan_freep(&pd->chan[i]);
			pd->fd[i] = safe_close(pd->fd[i]);
		}
		while (pd_recv(pd, PD_BOXD, &m, 20000) == 0)
			box_ipc_msg_done(&m); /* nothing else is expected: the close ends it */
	}
	return pd_stop(pd);
}

void
pd_kill(struct pd *pd)
{
	if (pd->pid > 0) {
		kill(pd->pid, SIGKILL);
		(void)waitpid(pd->pid, NULL, 0);
		pd->pid = -1;
	}
	close_all(pd);
}

int
pd_exited_within(struct pd *pd, int ms)
{
	for (int t = 0; pd->pid > 0 && t < ms; t += 10) {
		int st;
		if (waitpid(pd->pid, &st, WNOHANG) == pd->pid) {
			pd->pid = -1;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* ---- messages ----------------------------------------------------------------- */

int
pd_send_decide(struct pd *pd, int peer, const Box__DecideRequest *req, uint64_t *ret_id)
{
	uint64_t id = pd->next_id++;
	int r = box_ipc_send(pd->fd[peer], &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, id,
			     &req->base, NULL, 0);
	if (r == 0)
		r = asked_keep(pd, peer, id, req);
	if (r == 0)
		pd->last_decide_id = id;
	if (r == 0 && ret_id)
		*ret_id = id;
	return r;
}

/*
 * The next message on PEER's channel; on boxd's, the chain heads policyd sends
 * (PolicyLogHead) are kept in pd->log_head* and read past.
 */
int
pd_recv(struct pd *pd, int peer, struct box_ipc_msg *m, int timeout_ms)
{
	for (;;) {
		int r = box_ipc_recv_wait(pd->chan[peer], m, timeout_ms);
		if (r < 0 || peer != PD_BOXD || m->type != BOX__MSG_TYPE__MSG_POLICY_LOG_HEAD)
			return r;
		const Box__PolicyLogHead *h = (const Box__PolicyLogHead *)m->msg;
		pd->log_head_seq = h->seq;
		pd->log_heads++;
		pd->log_heads_rotated += h->rotated;
		pd->log_heads_sealed += h->sealed;
		box_ipc_msg_done(m);
	}
}

int
pd_wait_reply(struct pd *pd, int peer, Box__DecideReply **reply, uint64_t *ret_id,
	      int timeout_ms)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = pd_recv(pd, peer, &m, timeout_ms);
	if (r < 0)
		return r;
	if (m.type != BOX__MSG_TYPE__MSG_DECIDE_REPLY) {
		box_ipc_msg_done(&m);
		return -EBADMSG;
	}
	asked_answer(pd, peer, m.request_id,
		     ((const Box__DecideReply *)m.msg)->verdict ==
			     BOX__DECISION_VERDICT__VERDICT_PERMIT);
	if (ret_id)
		*ret_id = m.request_id;
	if (reply) {
		*reply = (Box__DecideReply *)m.msg;
		m.msg = NULL;
	}
	box_ipc_msg_done(&m);
	return 0;
}

int
pd_send_line(struct pd *pd, int peer, const char *line, Box__DecideReply **reply)
{
	json_error_t err;
	json_t *j = json_loads(line, 0, &err);
	int r;

	if (!j || !json_is_object(j) || !json_is_string(json_object_get(j, "action"))) {
		json_decref(j);
		return -EINVAL;
	}
	const char *action = json_string_value(json_object_get(j, "action"));
	json_t *rec = json_object_get(j, "record");
	if (rec) {
		Box__RecordRequest m = BOX__RECORD_REQUEST__INIT;
		m.kind = strcmp(json_string_value(rec) ?: "", "error") == 0
				 ? BOX__EVENT_KIND__EVENT_ERROR
				 : BOX__EVENT_KIND__EVENT_RESPONSE;
		m.action = (char *)action;
		r = fields_from(json_object_get(j, "input"), &m.input, &m.n_input);
		/* The permit it is the outcome of; the input stays here (policyd has its own). */
		if (r == 0)
			r = policy_permits_take_match(pd->permits[peer], action, m.input, m.n_input,
						      &m.decide_id);
		Box__PolicyField **in = m.input;
		size_t n_in = m.n_input;
		m.input = NULL;
		m.n_input = 0;
		if (r == 0)
			r = fields_from(json_object_get(j, "output"), &m.output, &m.n_output);
		if (r == 0)
			r = box_ipc_send(pd->fd[peer], &box_proto_policy,
					 BOX__MSG_TYPE__MSG_RECORD_REQUEST, pd->next_id++, &m.base,
					 NULL, 0);
		pd_fields_free(in, n_in);
		pd_fields_free(m.output, m.n_output);
		json_decref(j);
		return r;
	}
	Box__DecideRequest m = BOX__DECIDE_REQUEST__INIT;
	uint64_t id = 0, got = 0;
	m.action = (char *)action;
	r = fields_from(json_object_get(j, "input"), &m.input, &m.n_input);
	if (r == 0)
		r = pd_send_decide(pd, peer, &m, &id);
	pd_fields_free(m.input, m.n_input);
	json_decref(j);
	if (r < 0)
		return r;
	Box__DecideReply *rep = NULL;
	r = pd_wait_reply(pd, peer, &rep, &got, 20000);
	if (r < 0)
		return r;
	if (got != id) {
		box_msg_free(&rep->base);
		return -EBADMSG;
	}
	if (reply)
		*reply = rep;
	else
		box_msg_free(&rep->base);
	return 0;
}

static int
send_batch(struct pd *pd, int peer, const char *const *lines, size_t n, bool until_deny,
	   Box__DecideBatchReply **reply)
{
	Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
	b.has_until_deny = until_deny;
	b.until_deny = until_deny;
	Box__DecideRequest *reqs = calloc(n ? n : 1, sizeof(*reqs));
	Box__DecideRequest **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	json_t **js = calloc(n ? n : 1, sizeof(*js));
	int r = reqs && ptrs && js ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < n; i++) {
		box__decide_request__init(&reqs[i]);
		ptrs[i] = &reqs[i];
		js[i] = json_loads(lines[i], 0, NULL);
		json_t *a = json_object_get(js[i], "action");
		if (!json_is_string(a)) {
			r = -EINVAL;
			break;
		}
		reqs[i].action = (char *)json_string_value(a);
		r = fields_from(json_object_get(js[i], "input"), &reqs[i].input, &reqs[i].n_input);
	}
	/* Its i-th request is named by its id + i (policy.proto): n ids. */
	uint64_t id = pd->next_id;
	pd->next_id += n ? n : 1;
	if (r == 0) {
		b.requests = ptrs;
		b.n_requests = n;
		r = box_ipc_send(pd->fd[peer], &box_proto_policy,
				 BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, id, &b.base, NULL, 0);
	}
	for (size_t i = 0; r == 0 && i < n; i++)
		r = asked_keep(pd, peer, id + i, &reqs[i]);
	if (r == 0)
		pd->last_decide_id = id;
	for (size_t i = 0; reqs && js && i < n; i++) {
		pd_fields_free(reqs[i].input, reqs[i].n_input);
		json_decref(js[i]);
	}
	free(reqs);
	free(ptrs);
	free(js);
	if (r < 0)
		return r;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	r = pd_recv(pd, peer, &m, 20000);
	if (r < 0)
		return r;
	if (m.type != BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY || m.request_id != id) {
		box_ipc_msg_done(&m);
		return -EBADMSG;
	}
	const Box__DecideBatchReply *br = (const Box__DecideBatchReply *)m.msg;
	for (size_t i = 0; i < n; i++)
		asked_answer(pd, peer, id + i,
			     i < br->n_replies &&
				     br->replies[i]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT);
	if (reply) {
		*reply = (Box__DecideBatchReply *)m.msg;
		m.msg = NULL;
	}
	box_ipc_msg_done(&m);
	return 0;
}

int
pd_send_batch(struct pd *pd, int peer, const char *const *lines, size_t n,
	      Box__DecideBatchReply **reply)
{
	return send_batch(pd, peer, lines, n, false, reply);
}

int
pd_send_batch_until_deny(struct pd *pd, int peer, const char *const *lines, size_t n,
			 Box__DecideBatchReply **reply)
{
	return send_batch(pd, peer, lines, n, true, reply);
}

void
pd_tool_schema_free(Box__PolicyToolSchema *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_tools; i++) {
		Box__PolicyTool *t = m->tools[i];
		for (size_t k = 0; k < t->n_fields; k++) {
			free(t->fields[k]->name);
			free(t->fields[k]->type);
			free(t->fields[k]);
		}
		free(t->fields);
		free(t->name);
		free(t);
	}
	free(m->tools);
	free(m->server);
	free(m->ns);
	free(m);
}

int
pd_tool_schema(const char *server, const char *ns, const char *tools_json,
	       Box__PolicyToolSchema **ret)
{
	json_t *j = json_loads(tools_json, 0, NULL);
	Box__PolicyToolSchema *m = calloc(1, sizeof(*m));
	int r = j && json_is_object(j) && m ? 0 : -EINVAL;

	if (m) {
		box__policy_tool_schema__init(m);
		m->server = strdup(server);
		m->ns = strdup(ns);
	}
	size_t nt = r == 0 ? json_object_size(j) : 0;
	if (r == 0)
		m->tools = calloc(nt ? nt : 1, sizeof(*m->tools));
	if (r == 0 && (!m->tools || !m->server || !m->ns))
		r = -ENOMEM;
	const char *tname;
	json_t *tv;
	if (r == 0)
		json_object_foreach(j, tname, tv)
		{
			Box__PolicyTool *t = calloc(1, sizeof(*t));
			if (!t || !json_is_object(tv)) {
				free(t);
				r = -EINVAL;
				break;
			}
			box__policy_tool__init(t);
			t->name = strdup(tname);
			m->tools[m->n_tools++] = t;
			size_t nf = json_object_size(tv);
			t->fields = calloc(nf ? nf : 1, sizeof(*t->fields));
			const char *fname;
			json_t *fv;
			json_object_foreach(tv, fname, fv)
			{
				Box__PolicyToolField *f = calloc(1, sizeof(*f));
				if (!f || !json_is_string(fv)) {
					free(f);
					r = -EINVAL;
					break;
				}
				box__policy_tool_field__init(f);
				size_t fl = strlen(fname);
				f->optional = fl > 0 && fname[fl - 1] == '?';
				f->name = strndup(fname, f->optional ? fl - 1 : fl);
				f->type = strdup(json_string_value(fv));
				t->fields[t->n_fields++] = f;
			}
			if (r < 0)
				break;
		}
	json_decref(j);
	if (r < 0) {
		pd_tool_schema_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

/* Wait for the reply of TYPE to request ID on PEER's channel into *msg. */
static int
wait_for(struct pd *pd, int peer, uint32_t type, uint64_t id, ProtobufCMessage **msg)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = pd_recv(pd, peer, &m, 20000);
	if (r < 0)
		return r;
	if (m.type != type || m.request_id != id) {
		box_ipc_msg_done(&m);
		return -EBADMSG;
	}
	if (msg) {
		*msg = m.msg;
		m.msg = NULL;
	}
	box_ipc_msg_done(&m);
	return 0;
}

int
pd_send_tool_schema(struct pd *pd, int peer, const char *server, const char *ns,
		    const char *tools_json, Box__PolicyToolSchemaReply **reply)
{
	Box__PolicyToolSchema *m = NULL;
	int r = pd_tool_schema(server, ns, tools_json, &m);
	if (r < 0)
		return r;
	uint64_t id = pd->next_id++;
	r = box_ipc_send(pd->fd[peer], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, id,
			 &m->base, NULL, 0);
	pd_tool_schema_free(m);
	if (r < 0)
		return r;
	return wait_for(pd, peer, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, id,
			(ProtobufCMessage **)reply);
}

int
pd_send_probe(struct pd *pd, int peer, const char *const *lines, size_t n,
	      Box__PolicyProbeReply **reply)
{
	Box__PolicyProbeRequest b = BOX__POLICY_PROBE_REQUEST__INIT;
	Box__DecideRequest *reqs = calloc(n ? n : 1, sizeof(*reqs));
	Box__DecideRequest **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	json_t **js = calloc(n ? n : 1, sizeof(*js));
	int r = reqs && ptrs && js ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < n; i++) {
		box__decide_request__init(&reqs[i]);
		ptrs[i] = &reqs[i];
		js[i] = json_loads(lines[i], 0, NULL);
		json_t *a = json_object_get(js[i], "action");
		if (!json_is_string(a)) {
			r = -EINVAL;
			break;
		}
		reqs[i].action = (char *)json_string_value(a);
		r = fields_from(json_object_get(js[i], "input"), &reqs[i].input, &reqs[i].n_input);
	}
	uint64_t id = pd->next_id++;
	if (r == 0) {
		b.requests = ptrs;
		b.n_requests = n;
		r = box_ipc_send(pd->fd[peer], &box_proto_policy,
				 BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, id, &b.base, NULL, 0);
	}
	for (size_t i = 0; reqs && js && i < n; i++) {
		pd_fields_free(reqs[i].input, reqs[i].n_input);
		json_decref(js[i]);
	}
	free(reqs);
	free(ptrs);
	free(js);
	if (r < 0)
		return r;
	return wait_for(pd, peer, BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, id,
			(ProtobufCMessage **)reply);
}

int
pd_send_record(struct pd *pd, int peer, uint64_t decide_id, const char *action, bool error,
	       const char *output_json)
{
	Box__RecordRequest m = BOX__RECORD_REQUEST__INIT;
	int r = 0;

	m.kind = error ? BOX__EVENT_KIND__EVENT_ERROR : BOX__EVENT_KIND__EVENT_RESPONSE;
	m.action = (char *)action;
	m.decide_id = decide_id;
	json_t *j = output_json ? json_loads(output_json, 0, NULL) : NULL;
	if (output_json && !j)
		return -EINVAL;
	if (j)
		r = fields_from(j, &m.output, &m.n_output);
	if (r == 0)
		r = box_ipc_send(pd->fd[peer], &box_proto_policy, BOX__MSG_TYPE__MSG_RECORD_REQUEST,
				 pd->next_id++, &m.base, NULL, 0);
	pd_fields_free(m.output, m.n_output);
	json_decref(j);
	return r;
}

int
pd_send_raw(struct pd *pd, int peer, uint32_t type, const void *payload, size_t len)
{
	Box__Envelope env;
	box__envelope__init(&env);
	env.version = BOX_IPC_VERSION;
	env.type = (Box__MsgType)type;
	env.request_id = pd->next_id++;
	env.body_case = BOX__ENVELOPE__BODY_PAYLOAD;
	env.payload.data = (uint8_t *)payload;
	env.payload.len = len;
	size_t n = protobuf_c_message_get_packed_size(&env.base);
	if (n > BOX_IPC_MAX)
		return -EMSGSIZE;
	uint8_t *pkt = malloc(n);
	if (!pkt)
		return -ENOMEM;
	protobuf_c_message_pack(&env.base, pkt);
	ssize_t k = send(pd->fd[peer], pkt, n, MSG_NOSIGNAL);
	free(pkt);
	return k == (ssize_t)n ? 0 : k < 0 ? -errno : -EIO;
}

int
pd_attach_new(int over, bool person)
{
	int sv[2];
	if (box_ipc_socketpair(sv, false) < 0)
		return -1;
	Box__PolicyChannelAttach a = BOX__POLICY_CHANNEL_ATTACH__INIT;
	a.has_person = person;
	a.person = person;
	int r = box_ipc_send(over, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_CHANNEL_ATTACH, 0,
			     &a.base, &sv[1], 1);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return -1;
	}
	return sv[0];
}
