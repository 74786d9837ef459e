/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcpclient.c — the MCP client of bench/mcp: plays an agent's harness over the stdio transport
 * and times tools/call round trips. It spawns CMD on two pipes (outside a box: the bench's
 * mcpserver itself; inside one, where it is the box's agent: the alias /run/box/bin/calc, which
 * hands the pipes to box-mcpd), then sends, one request at a time,
 *
 *   initialize, notifications/initialized, tools/list (the tool "add" must be listed),
 *   W untimed warm-up calls, then N timed tools/call add {a: i, b: 3i+1}, each checked
 *   (structuredContent.sum and the text both equal a+b), and with -d A one more call with
 *   a = A, which the bench's policy denies (its error code and message are printed).
 *
 *   mcpclient [-n N] [-w W] [-d A] [-t SECONDS] -- CMD [ARG...]
 *
 * Output, one line each, for run.sh:
 *   mcpclient: initialize server=NAME protocol=VERSION
 *   mcpclient: tools/list tools=NAME,...
 *   mcpclient: first add(1,4) -> TEXT
 *   mcpclient: calls n=N wrong=K min_us=… p50_us=… p90_us=… p99_us=… max_us=…
 *   mcpclient: denied a=A code=C message=M        (with -d; "code=none result=…" if it passed)
 *   mcpclient: exit status=S                      (CMD's, after its stdin was closed)
 * Each round trip is timed with CLOCK_MONOTONIC from before the request's write to after its
 * reply was read and parsed. Every wait has a deadline (-t, default 30 s per reply). Exit 0
 * when every step worked and every result was right, 1 otherwise, 2 on usage.
 * Trusts: nothing it reads; it is benchmark code.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLI_LINE_MAX (1u << 20)
#define CLI_CALLS_MAX 1000000L
/* Lines that are not the awaited reply (notifications, requests) skipped per request. */
#define CLI_SKIP_MAX 64

extern char **environ;

static int to_srv = -1, from_srv = -1;
static char *rbuf;
static size_t rhave;
static int timeout_ms = 30000;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
send_line(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(to_srv, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "mcpclient: write to the server: %s\n",
				w < 0 ? strerror(errno) : "short write");
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * read_line: the next line from the server into *line (NUL-terminated, valid until the next
 * call), its length returned; -1 on EOF, error, an over-long line or the deadline.
 */
static ssize_t
read_line(char **line)
{
	static size_t consumed;
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;

	/* Drop the line handed out last time. */
	memmove(rbuf, rbuf + consumed, rhave - consumed);
	rhave -= consumed;
	consumed = 0;
	for (;;) {
		char *nl = memchr(rbuf, '\n', rhave);
		struct pollfd pfd = {.fd = from_srv, .events = POLLIN};
		uint64_t now;
		ssize_t r;
		int pr;

		if (nl) {
			*nl = '\0';
			*line = rbuf;
			consumed = (size_t)(nl - rbuf) + 1;
			return nl - rbuf;
		}
		if (rhave == CLI_LINE_MAX - 1) {
			fprintf(stderr, "mcpclient: a line from the server is over %u bytes\n",
				CLI_LINE_MAX);
			return -1;
		}
		now = now_ns();
		if (now >= deadline) {
			fprintf(stderr, "mcpclient: no reply within %d ms\n", timeout_ms);
			return -1;
		}
		pr = poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1);
		if (pr < 0 && errno != EINTR)
			return -1;
		if (pr <= 0)
			continue;
		r = read(from_srv, rbuf + rhave, CLI_LINE_MAX - 1 - rhave);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			fprintf(stderr, "mcpclient: the server closed its stdout%s%s\n",
				r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
			return -1;
		}
		rhave += (size_t)r;
	}
}

/* request: send one request with integer id ID, return its reply (a new reference) or NULL. */
static json_t *
request(long id, const char *method, const char *params)
{
	char out[4096];
	int n =
	    snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\"%s%s}\n",
		     id, method, params ? ",\"params\":" : "", params ? params : "");

	if (n < 0 || (size_t)n >= sizeof(out) || send_line(out, (size_t)n) < 0)
		return NULL;
	for (int skipped = 0; skipped <= CLI_SKIP_MAX; skipped++) {
		char *line;
		ssize_t len = read_line(&line);
		json_error_t err;
		json_t *msg, *rid;

		if (len < 0)
			return NULL;
		msg = json_loadb(line, (size_t)len, 0, &err);
		if (!json_is_object(msg)) {
			fprintf(stderr, "mcpclient: %s: not a JSON object: %.200s\n", method, line);
			json_decref(msg);
			return NULL;
		}
		rid = json_object_get(msg, "id");
		if (json_is_integer(rid) && json_integer_value(rid) == id &&
		    !json_object_get(msg, "method"))
			return msg;
		json_decref(msg); /* a notification or a request of the server's: not ours */
	}
	fprintf(stderr, "mcpclient: %s: no reply among %d lines\n", method, CLI_SKIP_MAX);
	return NULL;
}

static pid_t
spawn(char **argv)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(125);
		execve(argv[0], argv, environ);
		fprintf(stderr, "mcpclient: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_srv = in[1];
	from_srv = out[0];
	return pid;
}

/* check_add: 0 when REPLY is add's result for a + b (both its text and structuredContent). */
static int
check_add(json_t *reply, long long a, long long b, char *text, size_t textsz)
{
	json_t *res = json_object_get(reply, "result");
	json_t *c0 = json_array_get(json_object_get(res, "content"), 0);
	const char *t = json_string_value(json_object_get(c0, "text"));
	json_t *sum = json_object_get(json_object_get(res, "structuredContent"), "sum");
	char want[32];

	snprintf(want, sizeof(want), "%lld", a + b);
	if (text)
		snprintf(text, textsz, "%s", t ? t : "(no text)");
	return (t && strcmp(t, want) == 0 && json_is_integer(sum) &&
		json_integer_value(sum) == a + b && json_is_false(json_object_get(res, "isError")))
		   ? 0
		   : -1;
}

/* wait_child: CMD's exit status (128+signal), or -1 after the deadline (it is then killed). */
static int
wait_child(pid_t pid)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_ns() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, "mcpclient: the server did not exit within %d ms\n",
				timeout_ms);
			return -1;
		}
		usleep(2000);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: mcpclient [-n N] [-w W] [-d A] [-t SECONDS] -- CMD [ARG...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	long n = 1000, warm = 50, id = 0, wrong = 0;
	long long deny_a = 0;
	bool deny = false;
	uint64_t *t;
	json_t *r;
	pid_t pid;
	int opt, status, rc = 0;
	char text[256];

	while ((opt = getopt(argc, argv, "+n:w:d:t:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtol(optarg, NULL, 10);
			break;
		case 'w':
			warm = strtol(optarg, NULL, 10);
			break;
		case 'd':
			deny = true;
			deny_a = strtoll(optarg, NULL, 10);
			break;
		case 't':
			timeout_ms = (int)strtol(optarg, NULL, 10) * 1000;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || n < 1 || n > CLI_CALLS_MAX || warm < 0 || warm > CLI_CALLS_MAX ||
	    timeout_ms < 1000 || timeout_ms > 3600000)
		usage();
	signal(SIGPIPE, SIG_IGN);
	rbuf = malloc(CLI_LINE_MAX);
	t = calloc((size_t)n, sizeof(*t));
	if (!rbuf || !t)
		return 1;
	pid = spawn(argv + optind);
	if (pid < 0) {
		fprintf(stderr, "mcpclient: cannot start %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}

	r = request(++id, "initialize",
		    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		    "\"clientInfo\":{\"name\":\"bench-mcp-client\",\"version\":\"1\"}}");
	if (!r || !json_object_get(r, "result")) {
		fprintf(stderr, "mcpclient: initialize failed\n");
		rc = 1;
		goto out;
	}
	{
		json_t *res = json_object_get(r, "result");
		const char *sn =
		    json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name"));
		const char *pv = json_string_value(json_object_get(res, "protocolVersion"));

		printf("mcpclient: initialize server=%s protocol=%s\n", sn ? sn : "?",
		       pv ? pv : "?");
	}
	json_decref(r);
	{
		static const char note[] =
		    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

		if (send_line(note, sizeof(note) - 1) < 0) {
			rc = 1;
			goto out;
		}
	}

	r = request(++id, "tools/list", NULL);
	{
		json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
		bool has_add = false;
		size_t i;
		json_t *tool;

		if (!json_is_array(tools)) {
			fprintf(stderr, "mcpclient: tools/list failed\n");
			json_decref(r);
			rc = 1;
			goto out;
		}
		printf("mcpclient: tools/list tools=");
		json_array_foreach(tools, i, tool)
		{
			const char *nm = json_string_value(json_object_get(tool, "name"));

			printf("%s%s", i ? "," : "", nm ? nm : "?");
			if (nm && strcmp(nm, "add") == 0)
				has_add = true;
		}
		printf("\n");
		json_decref(r);
		if (!has_add) {
			fprintf(stderr, "mcpclient: tools/list has no tool add\n");
			rc = 1;
			goto out;
		}
	}
	fflush(stdout);

	for (long i = -warm; i < n; i++) {
		long long a = i < 0 ? -i : i + 1, b = 3 * a + 1;
		char params[128];
		uint64_t t0;

		snprintf(params, sizeof(params),
			 "{\"name\":\"add\",\"arguments\":{\"a\":%lld,\"b\":%lld}}", a, b);
		t0 = now_ns();
		r = request(++id, "tools/call", params);
		if (i >= 0)
			t[i] = now_ns() - t0;
		if (!r) {
			fprintf(stderr, "mcpclient: tools/call %ld failed\n", i);
			rc = 1;
			goto out;
		}
		if (check_add(r, a, b, text, sizeof(text)) < 0) {
			char *s = json_dumps(r, JSON_COMPACT);

			if (wrong++ < 3)
				fprintf(stderr, "mcpclient: add(%lld,%lld): wrong reply %.300s\n",
					a, b, s ? s : "?");
			free(s);
		}
		if (i == 0)
			printf("mcpclient: first add(%lld,%lld) -> %s\n", a, b, text);
		json_decref(r);
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	printf("mcpclient: calls n=%ld wrong=%ld min_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "max_us=%.1f\n",
	       n, wrong, t[0] / 1e3, t[n / 2] / 1e3, t[(n * 9) / 10] / 1e3, t[(n * 99) / 100] / 1e3,
	       t[n - 1] / 1e3);
	if (wrong)
		rc = 1;

	if (deny) {
		char params[128];
		json_t *e;

		snprintf(params, sizeof(params),
			 "{\"name\":\"add\",\"arguments\":{\"a\":%lld,\"b\":1}}", deny_a);
		r = request(++id, "tools/call", params);
		if (!r) {
			rc = 1;
			goto out;
		}
		e = json_object_get(r, "error");
		if (e) {
			const char *m = json_string_value(json_object_get(e, "message"));

			printf("mcpclient: denied a=%lld code=%lld message=%s\n", deny_a,
			       (long long)json_integer_value(json_object_get(e, "code")),
			       m ? m : "");
		} else {
			check_add(r, deny_a, 1, text, sizeof(text));
			printf("mcpclient: denied a=%lld code=none result=%s\n", deny_a, text);
		}
		json_decref(r);
	}

out:
	fflush(stdout);
	close(to_srv); /* the server sees EOF and exits */
	status = wait_child(pid);
	printf("mcpclient: exit status=%d\n", status);
	if (status != 0)
		rc = 1;
	free(t);
	free(rbuf);
	return rc;
}
