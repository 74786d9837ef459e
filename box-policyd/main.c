/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-policyd: the per-box policy daemon (docs/design.md).
 *
 *   box-policyd [-u UID] [-g GID] [-q]
 *
 * Started by boxd with fork+exec: fd 3 = boxd, 4 = gateway, 5 = mcpd,
 * 6 = shell (SOCK_SEQPACKET socketpair ends; 4-6 may be closed), nothing
 * else open. main() is the start-up, one named step a line: arguments →
 * channels → privilege drop to UID:GID (default: the ids it runs as) →
 * PolicyInit from boxd (policy text, owner's home, box name/id,
 * history_sync, the STATE/policy/ dir fd and the decisions.jsonl fd) →
 * loop preparation → seccomp allow-list → load the policy and recover the
 * history → PolicyReady (or a refusal with the reason, then exit 1) → peers
 * watched → event loop → flush and free.
 *
 * Decide: the request event is appended to the history (temporal policies
 * only) and, per [box] history_sync, fsynced before it is evaluated and
 * answered. `batch` is a group commit with no timer: decisions are appended
 * and their replies held while any channel has input ready; the group
 * fsync is an event of the lowest priority, so libevent runs it only in a
 * loop pass where no channel was readable. It covers every event appended
 * since the previous one, then the held replies go out in order (per
 * channel, a peer's replies never overtake each other). While it runs, new
 * requests wait in the socket buffers and make up the next group; with one
 * request in flight it is `always`. A decision whose history write or fsync
 * failed is a deny. DecideBatch: up to 256 Decides decided in order exactly
 * as one by one, answered with one reply; in `always` one fsync covers the
 * batch, in `batch` it joins the group commit. Every decision is one line of
 * decisions.jsonl. Record:
 * an outcome event, no reply; it is fsynced by the next group commit.
 * RecordBatch: up to 256 Records, recorded in order as one by one.
 * boxd closing its channel ends policyd (exit 0) once every peer's channel has
 * closed as well (at most POLICYD_PEERS_END_WAIT_MS): boxd closes it as it tells
 * the peers to end, and their last records come first; a protocol error from any
 * peer is fatal (exit 1): they are internal peers. The exit logs how many
 * decisions and history fsyncs there were.
 *
 * Who may say what (peer_actions, one table): each kind of peer asks about
 * (Decide, DecideBatch, probe) and records only the actions it raises itself:
 * box-shell shell:* and fs:*, box-gateway net:connect, http:request, mcp:call
 * and per-tool actions, box-mcpd mcp:call, per-tool actions and shell:spawn,
 * boxd (for the programs it will supervise) fs:*; per-tool actions are never
 * recorded. Anything else is a protocol error, logged (peer_refuse; a batch
 * is checked whole before any of it is decided). A Record names the Decide it
 * is the outcome of (decide_id): a permit of its own channel without an
 * outcome yet, of the same action; the event takes the action and input from
 * policyd's copy of that Decide and only the kind and output from the Record
 * (an unknown, denied or recorded id, another action, or an input in the
 * Record is a protocol error). Each channel keeps its permits without an
 * outcome (proto/policy_permits.h): at most BOX_POLICY_PERMITS_MAX and
 * BOX_POLICY_PERMIT_BYTES_MAX of packed Decides, the oldest forgotten beyond
 * (a shell whose walks stop early leaves permits it never records, and must
 * go on); a Record of a forgotten one is dropped with a warning. Decide ids
 * increase per channel (the i-th request of a batch is its id + i), which is
 * how a forgotten id is told from one that never was a permit.
 *
 * MCP tool schemas (PolicyToolSchema, from box-mcpd or the gateway): the
 * namespace must be one of PolicyInit's (else a protocol error); the
 * policy is re-validated with the tools and the temporal state carried
 * over (engine.c); the answer says ok, or which rule failed. One stderr line
 * per registration. A probe (PolicyProbeRequest) decides up to 256 requests
 * as if observed, writing no history event and no decision line. Both are
 * answered in order with the channel's decisions: held replies go first.
 *
 * Attached channels (PolicyChannelAttach, proto/policy.proto): box-shell
 * forks per invocation and per pipeline stage, and each process hands
 * policyd one end of a socketpair of its own over the shell channel (fd 6)
 * or over a channel it attached before; nobody else may (fatal, like any
 * message a peer has no business sending). Each one is one more box-shell
 * channel, state ready, logged with source "box-shell", at most
 * BOX_POLICY_ATTACHED_MAX at a time (one more is refused: its fd is closed,
 * so that process's decisions fail, i.e. deny). An attached channel closing
 * is the normal end of a process. A protocol error on an attached channel
 * (garbage, or a message the table refuses) drops that channel only: such a
 * channel serves a process that runs the agent's script (box-shell keeps the
 * script from its fds, libshell/redir.c; should that ever fail), so it must
 * cost that process its decisions (denied), not the box its policy.
 * The shell channel (fd 6) closing is as before: logged, the rest goes on.
 * A person's channel (PolicyChannelAttach.person: a process of a `boxctl
 * shell` session) is logged with "session": "person"; box-shell's main
 * process asks for it on fd 6, and a channel attached from a person's
 * channel is one too. An agent's attached channel asking for one is such a
 * protocol error: it must not pass its process's decisions off as a person's.
 * boxd attaches one channel per supervised program (plan.supervise) on fd 3:
 * of boxd's kind (fs:* only), logged with source "supervisor", one of the
 * same BOX_POLICY_ATTACHED_MAX, dropped alone on a protocol error (its
 * program's file system calls are then refused), never a person's.
 *
 * A supervised program's channel may ask PolicyLocal too (its fs:* actions, with the
 * text and the page) and ship what its PID 1 decides in process, as box-shell does.
 * Without the page it sends DecideBatchRequests naming that generation (history_free):
 * decided only while the generation is in force and each action qualifies, else a
 * stale reply and nothing decided (history_free_batch). Its counts are logged at its end.
 *
 * Live reload (PolicyReload, boxd only, on fd 3): held replies go first, then the
 * engine loads the text as the next generation or refuses it (engine_reload); either
 * way one control line and one reply. box-shell follows through the generation page
 * (a sealed memfd it maps read-only, sent with PolicyLocal) and asks for PolicyLocal
 * again; a PolicyShip of a kept earlier generation is checked against that
 * generation's policy (handle_ship).
 *
 * The decision log's chain (docs/boxctl.1.md "The chain", common/logchain.h):
 * each line gets its seq and prev when it enters the write buffer, in the order
 * lines are written (log_chain), starting after PolicyInit.log_head (else
 * genesis); after each write the head goes to boxd (PolicyLogHead), after a
 * rotated fd is taken as a rotation point, and at the end after the seal line,
 * on a copy of fd 3 kept for that (boxd has half-closed fd 3 by then).
 *
 * BOX_TEST_CLOCK=START_NS[,STEP_NS] (tests and benchmarks only) replaces the
 * wall clock by one that starts at START_NS and advances STEP_NS (default
 * 1 ms) at every event; it is read from policyd's own environment, which
 * boxd never fills from a user. BOX_TEST_POLICYD_EXIT_DELAY_MS=N (tests
 * only, same source, N up to 60000) delays the exit by N ms after the final
 * flush: it slows the end of a box, it changes nothing that is written.
 * BOX_TEST_POLICYD_SYNC_DELAY_MS=N (tests only, same source, N up to 10000)
 * sleeps N ms before each group commit's fsync: it slows that step (the
 * replies it covers wait longer), it skips nothing. BOX_TEST_POLICYD_NO_GEN_PAGE
 * (tests only, same source) makes no generation page, as a kernel without
 * F_SEAL_FUTURE_WRITE: no peer decides in process, every decision is asked.
 * Trusts: nothing from its peers; boxd for the fds and ids it gives.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "cleanup.h"
#include "declog.h"
#include "otlplog.h"
#include "engine.h"
#include "daemon_start.h"
#include "fdutil.h"
#include "ipc.h"
#include "ipc_event.h"
#include "log.h"
#include "logchain.h"
#include "parse.h"
#include "policy.pb-c.h"
#include "policy_permits.h"
#include "policyd.h"
#include "privdrop.h"
#include "policy_validate.h"
#include "proto_policy.h"
#include "proto_telemetry.h"
#include "testhook.h"
#include "validate.h" /* BOX_TELEMETRY_TARGETS_MAX */
#include "text.h"

/*
 * What each kind of peer may ask about (Decide, DecideBatch, PolicyProbeRequest)
 * and record (Record, RecordBatch): the actions it raises itself
 * (docs/box-policy.5.md, "Actions and their fields"). Anything else is a
 * protocol error (peer_refuse). A Record names a permit of its own channel
 * (policy_permits.h), so only the actions a kind records are kept.
 */
enum {
	ACT_FS = 1u << 0,          /* fs:read fs:write fs:delete fs:move fs:other */
	ACT_SHELL_EXEC = 1u << 1,
	ACT_SHELL_SPAWN = 1u << 2,
	ACT_NET_CONNECT = 1u << 3,
	ACT_HTTP_REQUEST = 1u << 4,
	ACT_MCP_CALL = 1u << 5,
	ACT_TOOL = 1u << 6,        /* NS::Action::"TOOL", a per-tool refinement */
};

/* The actions decided in process by some peer, at most (local_capable). */
#define LOCAL_NAMES_MAX 8

enum peer_kind { PEER_SUPERVISOR, PEER_GATEWAY, PEER_MCPD, PEER_SHELL };

static const struct {
	const char *raises; /* for messages */
	unsigned decide, record;
} peer_actions[] = {
	/* supervised programs: channels boxd attaches (box-trampoline/supervise.c) */
	[PEER_SUPERVISOR] = { "fs:*", ACT_FS, ACT_FS },
	/* the agent's connections and requests, remote (type = http) MCP servers */
	[PEER_GATEWAY] = { "net:connect, http:request, mcp:call and per-tool actions",
			   ACT_NET_CONNECT | ACT_HTTP_REQUEST | ACT_MCP_CALL | ACT_TOOL,
			   ACT_NET_CONNECT | ACT_HTTP_REQUEST | ACT_MCP_CALL },
	/* stdio MCP servers: their start and their calls */
	[PEER_MCPD] = { "mcp:call, per-tool actions and shell:spawn",
			ACT_MCP_CALL | ACT_TOOL | ACT_SHELL_SPAWN, ACT_MCP_CALL | ACT_SHELL_SPAWN },
	/* the agent's shell: its commands, host programs and file operations */
	[PEER_SHELL] = { "shell:* and fs:*", ACT_FS | ACT_SHELL_EXEC | ACT_SHELL_SPAWN,
			 ACT_FS | ACT_SHELL_EXEC | ACT_SHELL_SPAWN },
};

/* The ACT_ bit of ACTION (a validated spelling), 0 for one no peer raises. */
static unsigned
action_kind(const char *action)
{
	static const struct {
		const char *name;
		unsigned bit;
	} fixed[] = {
		{ "fs:read", ACT_FS },
		{ "fs:write", ACT_FS },
		{ "fs:delete", ACT_FS },
		{ "fs:move", ACT_FS },
		{ "fs:other", ACT_FS },
		{ "shell:exec", ACT_SHELL_EXEC },
		{ "shell:spawn", ACT_SHELL_SPAWN },
		{ "net:connect", ACT_NET_CONNECT },
		{ "http:request", ACT_HTTP_REQUEST },
		{ "mcp:call", ACT_MCP_CALL },
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strcmp(action, fixed[i].name) == 0)
			return fixed[i].bit;
	/* box_valid_action: NS::Action::"TOOL" is the one spelling with "::" */
	return strstr(action, "::Action::\"") ? ACT_TOOL : 0;
}

struct peer {
	const char *name;   /* for messages */
	const char *source; /* for the decision log */
	int fd;
	enum peer_kind kind;
	struct box_ipc_event *ev;
	size_t n_held; /* its replies held in the current group (keeps them in order) */
	/* Its permits without an outcome yet (the Decides its Records may name). */
	struct policy_permits *permits;
	/* An attached box-shell channel (malloc'd; on S.attached until it closes). */
	bool attached;
	/* A process of a person's session (`boxctl shell`): PolicyChannelAttach.person. */
	bool person;
	/* box-shell: the generation its last PolicyLocal gave (0: it asked none on this channel) */
	uint64_t local_gen;
	/*
	 * a supervised program's channel: its decisions, those in history-free batches, stale
	 * ones, and those it made in process and shipped (in how many PolicyShips)
	 */
	unsigned long long n_decided, n_batched, n_batches, n_stale, n_shipped, n_ships;
	struct peer *next;
};

/*
 * A Decide held for a person (docs/box-policy.5.md, "Asking a person"): every rule that
 * forbade it is annotated @ask, or ([box] ask = default) no rule matched it. Not answered until `boxctl approve|deny` (PolicyAskAnswer
 * from boxd) or its timer (a deny); its channel's other requests go on meanwhile.
 */
struct ask {
	struct ask *next;
	uint64_t ask_id;
	struct peer *peer;
	uint64_t request_id;
	Box__DecideRequest *req; /* owned (the decoded message) */
	char **rules;
	size_t n_rules;
	char *message, *resource;
	int64_t time_ns;        /* its event's time */
	struct timespec since;  /* CLOCK_MONOTONIC when it was held */
	struct event *timer;
	bool by_default;        /* no permit matched ([box] ask = default): no rules */
};

/* A person's answer `for this box`: a later request equal to KEY is answered the same. */
struct approval {
	uint8_t *key; /* the packed DecideRequest (action and input, in the peer's order) */
	size_t len;
	bool permit;
	uint32_t uid;
};

/*
 * A decision held for the group commit. WAITS: its event was appended and
 * the verdict stands only once the fsync succeeds; otherwise (nothing was
 * written) it is held only to stay behind its channel's earlier replies.
 */
struct pending {
	struct peer *peer;
	uint64_t request_id;
	Box__DecideRequest *req;
	ProtobufCMessage *owned; /* freed with it: req, or a batch's message (its last member) */
	size_t batch_n;          /* the first member of a DecideBatch: how many it has */
	bool waits;
	bool permit;
	int cause;
	char **rules;
	size_t n_rules;
	char *message;
	char *resource;
	int64_t time_ns;
	char *line; /* a log line that waits behind held decisions (nothing to answer) */
	size_t line_len;
};

static struct {
	struct event_base *base;
	struct engine *engine;
	struct peer peers[POLICYD_N_PEERS];
	int decisions_fd;
	char box_name[64];
	char box_id[16];
	bool person_session; /* PolicyInit: box-shell's sessions are a person's */
	struct event *group_sync; /* lowest priority: runs once no channel has input */
	bool group_sync_active;
	unsigned sync_delay_ms; /* BOX_TEST_POLICYD_SYNC_DELAY_MS */
	uint64_t n_decisions;
	struct pending *pending;
	size_t n_pending, cap_pending;
	bool flushing; /* pending_flush runs: its lines go out in order, nothing is held */
	bool test_clock;
	int64_t clock_next, clock_step;
	unsigned log_failures;
	char *logbuf; /* decision lines waiting for one write at the end of the loop pass */
	size_t log_len, log_cap;
	/* The chain (common/logchain.h): the last line put in logbuf; what boxd was told last. */
	struct declog_chain chain;
	uint64_t chain_reported;
	uint64_t run_lines; /* lines of this run (the seal line says how many) */
	int report_fd;      /* a copy of fd 3: the sealed head goes out after boxd half-closed it */
	struct event *log_flush;
	bool log_flush_armed;
	struct event *stop_signals[2];
	int exit_code;
	/* Attached box-shell channels; closed ones wait on `dead` while replies are held. */
	struct peer *attached, *dead;
	size_t n_attached;
	/*
	 * What box-shell and box-gateway may decide in process (PolicyLocal, built at start
	 * and at each reload): the policy as loaded, and the actions of local_capable that
	 * bp_history_free says need no history. Each peer is sent its own of them.
	 */
	Box__PolicyLocal local;
	char *local_names[LOCAL_NAMES_MAX];
	bool local_probe; /* the engine keeps a history: shipped items are probed first */
	/* The qualifying actions (bits of local_capable) of the generations engine.c keeps. */
	struct {
		uint64_t generation;
		unsigned mask;
	} local_old[ENGINE_GENERATIONS_KEPT];
	size_t n_local_old;
	unsigned local_mask; /* this generation's */
	/*
	 * The generation page (proto/policy.proto PolicyLocal): a sealed memfd box-shell
	 * maps read-only; it holds the generation in force, stored here after a reload.
	 */
	int gen_fd;
	uint64_t *gen_page;
	/* Decisions held for a person (@ask), oldest first, and the answers kept for the box. */
	struct ask *asks;
	size_t n_asks;
	uint64_t next_ask_id;
	uint32_t ask_timeout_ms;
	bool ask_default; /* [box] ask = default: a no_match is held too */
	char *policy_file; /* the file the policy in force was read from (NULL: none named) */
	struct approval *approvals;
	size_t n_approvals;
	/*
	 * [telemetry.NAME] targets (PolicyInit), one batch each: a file target's
	 * OTLP-JSON lines written to its fd, an otlp target's requests in the binary
	 * encoding sent to box-gateway on the telemetry channel
	 * (proto/telemetry.proto) as TelemetryRecords.
	 */
	struct tel_target {
		int fd;           /* a file target's; -1 for an otlp target */
		int otlp;         /* an otlp target's index in GatewayInit's list; -1 for a file */
		uint32_t include; /* proto/policy.proto PolicyInit.telemetry_include bits */
		struct otlplog_batch batch;
		unsigned failures;
	} tel[BOX_TELEMETRY_FILES_MAX + BOX_TELEMETRY_TARGETS_MAX];
	size_t n_tel;
	struct box_ipc_event *tel_chan; /* to box-gateway, with an otlp target */
	bool ending;                    /* boxd closed: waiting for the peers' channels to close */
	bool spare;                     /* -w: spawned ahead, PolicyInit may come at any time */
	uint64_t tel_dropped;           /* records the channel could not take */
} S = {
	.peers = {
		{ "boxd", "supervisor", DAEMON_FD_BOXD, PEER_SUPERVISOR },
		{ "gateway", "box-gateway", POLICYD_FD_GATEWAY, PEER_GATEWAY },
		{ "mcpd", "box-mcpd", POLICYD_FD_MCPD, PEER_MCPD },
		{ "shell", "box-shell", POLICYD_FD_SHELL, PEER_SHELL },
	},
	.decisions_fd = -1,
	.gen_fd = -1,
	.report_fd = -1,
};

/* Box__DecisionCause order. */
static const char *const cause_names[] = { "permitted", "forbidden", "no_match", "error",
					   "not_refined" };

/* ---- clocks ---------------------------------------------------------------- */

/* The engine's clock: wall time in ns, or the test clock. */
static int64_t
engine_now(void)
{
	if (S.test_clock) {
		int64_t t = S.clock_next;
		S.clock_next += S.clock_step;
		return t;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
test_clock_init(void)
{
	const char *v = getenv("BOX_TEST_CLOCK");
	char buf[64];
	uint64_t start, step = 1000000;

	if (!v || !*v)
		return;
	if (strlen(v) >= sizeof(buf))
		fatalx("BOX_TEST_CLOCK: expected START_NS[,STEP_NS], got '%s'", v);
	(void)snprintf(buf, sizeof(buf), "%s", v);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = '\0';
	if (parse_u64(buf, INT64_MAX, &start) < 0 ||
	    (comma && parse_u64(comma + 1, INT64_MAX, &step) < 0))
		fatalx("BOX_TEST_CLOCK: expected START_NS[,STEP_NS], got '%s'", v);
	S.test_clock = true;
	S.clock_next = start;
	S.clock_step = step;
	log_warn("using the test clock (BOX_TEST_CLOCK=%s)", v);
}

/* BOX_TEST_POLICYD_SYNC_DELAY_MS: a slower group fsync, for tests of what waits for it. */
static void
test_sync_delay_init(void)
{
	uint64_t ms;

	if (box_test_ms("BOX_TEST_POLICYD_SYNC_DELAY_MS", 10000, &ms) < 0)
		fatalx("BOX_TEST_POLICYD_SYNC_DELAY_MS: expected 0 to 10000 ms, got '%s'",
		       getenv("BOX_TEST_POLICYD_SYNC_DELAY_MS"));
	S.sync_delay_ms = (unsigned)ms;
	if (ms)
		log_warn("every group fsync is delayed by %u ms (BOX_TEST_POLICYD_SYNC_DELAY_MS)",
			 S.sync_delay_ms);
}


/* ---- replies and the decision log ---------------------------------------- */

static void drop_peer(struct peer *p, int error);
static void attached_reap(void);

/*
 * Tell boxd the chain's head (PolicyLogHead): after lines were written, ROTATED
 * after taking a rotated fd. Queued behind the channel's other messages; a
 * failure costs boxd a fresher head, never a decision.
 */
static void
chain_report(bool rotated)
{
	Box__PolicyLogHead h = BOX__POLICY_LOG_HEAD__INIT;

	if (!S.peers[0].ev || (!rotated && S.chain_reported == S.chain.seq) || S.chain.seq == 0)
		return;
	h.seq = S.chain.seq;
	h.head.data = S.chain.head;
	h.head.len = sizeof(S.chain.head);
	h.has_rotated = rotated;
	h.rotated = rotated;
	int r = box_ipc_event_send(S.peers[0].ev, BOX__MSG_TYPE__MSG_POLICY_LOG_HEAD, 0, &h.base,
				   NULL, 0);
	if (r < 0)
		log_warn_errno(r, "Cannot tell boxd the decision log's head");
	else
		S.chain_reported = S.chain.seq;
}

/*
 * The line that begins at START of logbuf (made there, or a held one copied
 * there) takes its place in the chain: seq and prev, in the order lines are
 * written. Negative: it was dropped.
 */
static int
log_chain(size_t start)
{
	int r = declog_chain(&S.chain, &S.logbuf, &S.log_len, &S.log_cap, start);
	if (r < 0)
		S.log_len = start;
	else
		S.run_lines++;
	return r;
}

/* Write the buffered decision lines with one write (whole lines only). */
static void
log_flush(void)
{
	size_t off = 0;
	bool wrote = S.log_len > 0;

	while (off < S.log_len && S.decisions_fd >= 0) {
		ssize_t n = write(S.decisions_fd, S.logbuf + off, S.log_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The log is diagnostic: a failure is reported, never a change of verdict. */
			if (S.log_failures++ % 1000 == 0)
				log_warn_errno(n < 0 ? -errno : -EIO,
					       "Cannot write decisions.jsonl (%u failures)",
					       S.log_failures);
			break;
		}
		off += (size_t)n;
	}
	S.log_len = 0;
	if (wrote)
		chain_report(false);
}

/*
 * SIGTERM/SIGINT (systemd stops boxd.service's whole cgroup at once): leave
 * the loop the way a closed boxd channel does, so the group fsync and the
 * buffered decision lines are written before exiting.
 */
static void
on_stop_signal(evutil_socket_t sig, short what, void *userdata)
{
	log_info("Signal %d: exiting", (int)sig);
	event_base_loopexit(S.base, NULL);
}

/* ---- telemetry file targets (docs/box.ini.5.md [telemetry.NAME]) ---------- */

#define TEL_DENY 1u
#define TEL_PERMIT 2u
#define TEL_CONTROL 4u
#define TEL_KERNEL 8u
/* A batch is written once it holds this many records (or at the next flush). */
#define TEL_BATCH_MAX 512u
/*
 * ... or this many bytes; an otlp target's: one IPC packet, a TelemetryRecords
 * that leaves in one sendmsg from the packed message, never fragmented and
 * copied again (a record of over 16 KiB, rare, makes a fragmented one).
 */
#define TEL_BATCH_BYTES (4u << 20)
#define TEL_OTLP_BATCH_BYTES (48u << 10)
/* The end: box.stopped (and what else is queued) goes out to box-gateway within this. */
#define TEL_END_WAIT_MS 2000

/* An otlp target's batch (REQ, LEN bytes: otlplog_request's) to box-gateway; 0 or negative errno. */
static int
tel_send(struct tel_target *t, uint8_t *req, size_t len, size_t n_records)
{
	Box__TelemetryRecords m = BOX__TELEMETRY_RECORDS__INIT;

	if (!S.tel_chan)
		return -EPIPE;
	m.target = (uint32_t)t->otlp;
	m.records = (uint32_t)n_records;
	m.logs.data = req;
	m.logs.len = len;
	int r = box_ipc_event_send(S.tel_chan, BOX__MSG_TYPE__MSG_TELEMETRY_RECORDS, 0, &m.base,
				   NULL, 0);
	if (r < 0)
		S.tel_dropped += n_records;
	return r;
}

/* Each target's batch as one ExportLogsServiceRequest: a line, one write; or one message. */
static void
tel_flush(void)
{
	for (size_t i = 0; i < S.n_tel; i++) {
		struct tel_target *t = &S.tel[i];
		char *line = NULL;
		size_t len = 0, off = 0, n_records = t->batch.n;
		int r;
		if (t->otlp >= 0) {
			uint8_t *req = NULL;
			r = otlplog_request(&t->batch, S.box_name, S.box_id, &req, &len);
			if (r == -ENODATA)
				continue;
			if (r == 0)
				r = tel_send(t, req, len, n_records);
		} else {
			r = otlplog_line(&t->batch, S.box_name, S.box_id, &line, &len);
			if (r == -ENODATA)
				continue;
		}
		while (r == 0 && t->otlp < 0 && off < len) {
			ssize_t n = write(t->fd, line + off, len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				r = n < 0 ? -errno : -EIO;
			else
				off += (size_t)n;
		}
		/* (line is the batch's buffer, kept for the next) */
		/* Like the decision log: a failure is reported, never a change of verdict. */
		if (r < 0 && t->failures++ % 1000 == 0)
			log_warn_errno(r, "Cannot write telemetry target %zu (%u failures)", i,
				       t->failures);
	}
}

static void log_flush_soon(void);

/* A record went into target T's batch: written within the flush delay, or now when full. */
static void
tel_added(struct tel_target *t, int r)
{
	if (r < 0) {
		if (t->failures++ % 1000 == 0)
			log_warn_errno(r, "Cannot format a telemetry record");
		return;
	}
	if (t->batch.n >= TEL_BATCH_MAX ||
	    otlplog_batch_bytes(&t->batch) >= (t->otlp >= 0 ? TEL_OTLP_BATCH_BYTES : TEL_BATCH_BYTES))
		tel_flush();
	else
		log_flush_soon();
}

static void
tel_decision(const struct declog_entry *e)
{
	uint32_t bit = e->permit ? TEL_PERMIT : TEL_DENY;

	for (size_t i = 0; i < S.n_tel; i++)
		if (S.tel[i].include & bit)
			tel_added(&S.tel[i], otlplog_decision(&S.tel[i].batch, e, S.n_decisions));
}

static void
tel_control(const char *event, const char *message, const char *const *keys,
	    const char *const *values, size_t n)
{
	struct timespec ts;

	if (!S.n_tel)
		return;
	/* wall time, never engine_now(): a control record must not move the test clock */
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	for (size_t i = 0; i < S.n_tel; i++)
		if (S.tel[i].include & TEL_CONTROL)
			tel_added(&S.tel[i], otlplog_control(&S.tel[i].batch, now, event, message,
							     keys, values, n));
}

/* A sandbox's kernel refusals (boxd's PolicyKernelRefusal) to the targets that include kernel. */
static void
tel_kernel(const Box__PolicyKernelRefusal *k)
{
	struct timespec ts;
	char err[16], count[16];

	if (!S.n_tel)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	const char *en = k->errno_value == EPERM ? "EPERM" : k->errno_value == EACCES ? "EACCES" : NULL;
	if (!en) {
		(void)snprintf(err, sizeof(err), "E%u", k->errno_value);
		en = err;
	}
	(void)snprintf(count, sizeof(count), "%u", k->count);
	const char *keys[] = { "box.kernel.syscall", "box.kernel.errno", "box.kernel.sandbox",
			       "box.kernel.count", "box.kernel.first" };
	const char *values[] = { k->syscall, en, k->sandbox, count, k->first ? "true" : "false" };
	for (size_t i = 0; i < S.n_tel; i++)
		if (S.tel[i].include & TEL_KERNEL)
			tel_added(&S.tel[i], otlplog_kernel(&S.tel[i].batch, now, keys, values, 5));
}

static void
on_log_flush(evutil_socket_t fd, short what, void *userdata)
{
	S.log_flush_armed = false;
	log_flush();
	tel_flush();
}

static int pending_reserve(size_t n);
static void log_flush_soon(void);

/*
 * Decisions held for a group commit are logged when they are answered: a
 * line made meanwhile (a decision answered at once, an outcome) waits in the
 * queue behind them, so the log stays in the order of the events' times,
 * which is the order `boxctl policy replay` re-decides them in.
 */
static bool
log_held(void)
{
	return S.n_pending > 0 && !S.flushing;
}

/* Queue LINE (LEN bytes, ownership taken) behind the held decisions; R < 0: it failed. */
static void
log_hold(int r, char *line, size_t len, const char *what)
{
	if (r == 0)
		r = pending_reserve(1);
	if (r < 0) {
		free(line);
		if (S.log_failures++ % 1000 == 0)
			log_warn_errno(r, "%s", what);
		return;
	}
	S.pending[S.n_pending++] = (struct pending){ .line = line, .line_len = len };
}

/*
 * "person" for box-shell's channels in a person's box shell (PolicyInit) and
 * for those of a person's session in any box (PolicyChannelAttach.person), else NULL.
 */
static const char *
session_of(const struct peer *p)
{
	return (S.person_session || p->person) && p->source && strcmp(p->source, "box-shell") == 0
		       ? "person"
		       : NULL;
}

static void log_entry(const struct declog_entry *e);

/* A person answered decision REQ of P (UID; held for them, @ask), or a kept answer did. */
static void
log_person(struct peer *p, const Box__DecideRequest *req, bool permit, int cause,
	   const char *const *rules, size_t n_rules, const char *message, const char *resource,
	   int64_t time_ns, uint32_t uid)
{
	struct declog_entry e = {
		.time_ns = time_ns, .box = S.box_name, .id = S.box_id, .action = req->action,
		.resource = resource, .permit = permit, .cause = cause_names[cause], .rules = rules,
		.n_rules = n_rules, .message = message, .source = "person",
		.session = session_of(p), .input = req->input, .n_input = req->n_input,
		.asker = p->source, .uid = uid,
	};
	log_entry(&e);
}

static void
log_decision(struct peer *p, const Box__DecideRequest *req, bool permit, int cause,
	     const char *const *rules, size_t n_rules, const char *message, const char *resource,
	     int64_t time_ns)
{
	struct declog_entry e = {
		.time_ns = time_ns,
		.box = S.box_name,
		.id = S.box_id,
		.action = req->action,
		.resource = resource,
		.permit = permit,
		.cause = cause_names[cause],
		.rules = rules,
		.n_rules = n_rules,
		.message = message,
		.source = p->source,
		.session = session_of(p),
		.input = req->input,
		.n_input = req->n_input,
	};
	log_entry(&e);
}

/*
 * The "input" object of the last decision line written while handle_ship handles a
 * ship (on), for the outcome line of that decision in the same ship: the same fields
 * of the same message make the same bytes, so they are not formatted again. Keyed by
 * the message's field array, which lives as long as the ship; the key goes with it.
 */
#define SHIP_INPUT_MAX (64u << 10)
static struct {
	bool on;
	Box__PolicyField *const *key;
	size_t n;
	char *buf;
	size_t len, cap;
} ship_input;

static void
ship_input_keep(Box__PolicyField *const *key, size_t n, const char *json, size_t len)
{
	ship_input.key = NULL;
	if (len > SHIP_INPUT_MAX)
		return;
	if (len > ship_input.cap) {
		char *b = realloc(ship_input.buf, len);
		if (!b)
			return;
		ship_input.buf = b;
		ship_input.cap = len;
	}
	memcpy(ship_input.buf, json, len);
	ship_input.len = len;
	ship_input.key = key;
	ship_input.n = n;
}

static void
log_entry(const struct declog_entry *ep)
{
	struct declog_entry e = *ep;
	size_t span[2];
	tel_decision(&e);
	if (S.decisions_fd < 0)
		return;
	e.input_span = ship_input.on ? span : NULL;
	if (log_held()) {
		char *line = NULL;
		size_t len = 0, cap = 0;
		int r = declog_append(&e, &line, &len, &cap);
		if (r < 0)
			free(line);
		else if (e.input_span)
			ship_input_keep(e.input, e.n_input, line + span[0], span[1]);
		log_hold(r, line, len, "Cannot format a decision line");
		return;
	}
	/* Straight into the buffer of lines waiting for their write. */
	size_t start = S.log_len;
	int r = declog_append(&e, &S.logbuf, &S.log_len, &S.log_cap);
	if (r == 0)
		r = log_chain(start);
	if (r < 0) {
		if (S.log_failures++ % 1000 == 0)
			log_warn_errno(r, "Cannot format a decision line");
		return;
	}
	if (e.input_span)
		ship_input_keep(e.input, e.n_input, S.logbuf + start + span[0], span[1]);
	log_flush_soon();
}

/*
 * A recorded outcome's line (docs/boxctl.1.md: "record", its input and output), so
 * that `boxctl policy replay` can rebuild the history; TIME_NS is the time
 * the engine stamped it with.
 */
static void
log_outcome(struct peer *p, const Box__RecordRequest *rec, int64_t time_ns)
{
	struct declog_outcome o = {
		.time_ns = time_ns,
		.box = S.box_name,
		.id = S.box_id,
		.error = rec->kind == BOX__EVENT_KIND__EVENT_ERROR,
		.action = rec->action,
		.source = p->source,
		.session = session_of(p),
		.input = rec->input,
		.n_input = rec->n_input,
		.output = rec->output,
		.n_output = rec->n_output,
	};
	if (S.decisions_fd < 0)
		return;
	if (ship_input.on && ship_input.key && ship_input.key == rec->input &&
	    ship_input.n == rec->n_input) {
		o.input_json = ship_input.buf;
		o.input_json_len = ship_input.len;
	}
	if (log_held()) {
		char *line = NULL;
		size_t len = 0, cap = 0;
		int r = declog_append_outcome(&o, &line, &len, &cap);
		if (r < 0)
			free(line);
		log_hold(r, line, len, "Cannot format an outcome line");
		return;
	}
	size_t start = S.log_len;
	int r = declog_append_outcome(&o, &S.logbuf, &S.log_len, &S.log_cap);
	if (r == 0)
		r = log_chain(start);
	if (r < 0) {
		if (S.log_failures++ % 1000 == 0)
			log_warn_errno(r, "Cannot format an outcome line");
		return;
	}
	log_flush_soon();
}

/* The reply is out already; the line follows within POLICYD_LOG_FLUSH_MS. */
static void
log_flush_soon(void)
{
	if (S.log_len >= (256u << 10))
		log_flush();
	else if (!S.log_flush_armed && S.log_flush) {
		struct timeval tv = { 0, POLICYD_LOG_FLUSH_MS * 1000 };
		if (evtimer_add(S.log_flush, &tv) < 0)
			log_flush();
		else
			S.log_flush_armed = true;
	}
}

static void
send_reply(struct peer *p, uint64_t request_id, bool permit, int cause, const char *const *rules,
	   size_t n_rules, const char *message)
{
	Box__DecideReply rep = BOX__DECIDE_REPLY__INIT;

	if (!p->ev)
		return; /* the peer went away while its decision waited */
	rep.verdict = permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT
			     : BOX__DECISION_VERDICT__VERDICT_DENY;
	rep.cause = (Box__DecisionCause)cause;
	rep.rules = (char **)rules;
	rep.n_rules = n_rules;
	rep.message = (char *)message;
	int r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_DECIDE_REPLY, request_id, &rep.base,
				   NULL, 0);
	if (r < 0) {
		log_err_errno(r, "Cannot answer %s", p->name);
		drop_peer(p, r);
	}
}

/*
 * Decide ID of P (REQ) was answered PERMIT: kept for the Record that may name it,
 * when P's kind records that action (the peer may be gone: nothing to keep).
 */
static bool
permit_kept(const struct peer *p, const Box__DecideRequest *req, bool permit)
{
	return permit && p->ev && p->permits &&
	       (action_kind(req->action) & peer_actions[p->kind].record) &&
	       policy_permits_outcome_owed(req);
}

static void
permit_keep(struct peer *p, uint64_t id, const Box__DecideRequest *req, bool permit)
{
	if (!permit_kept(p, req, permit))
		return;
	int r = policy_permits_add(p->permits, id, req);
	if (r < 0)
		fatal(r, "Cannot keep a permit of %s", p->name);
}

static void
pending_clear(struct pending *q)
{
	box_msg_free(q->owned);
	for (size_t i = 0; i < q->n_rules; i++)
		free(q->rules[i]);
	free(q->rules);
	free(q->message);
	free(q->resource);
	free(q->line);
	*q = (struct pending){ 0 };
}

/*
 * A DecideBatch's reply (the verdicts in order) and its log lines, one per
 * request in order, exactly as its requests would have been answered one by
 * one. FAILED: the fsync they waited for failed: each one that waited is a
 * deny with cause error.
 */
static void
answer_batch(struct pending *qs, size_t n, bool failed)
{
	static char msgs[BOX_POLICY_BATCH_MAX][BOX_POLICY_MESSAGE_MAX + 64];
	Box__DecideReply items[BOX_POLICY_BATCH_MAX];
	Box__DecideReply *ptrs[BOX_POLICY_BATCH_MAX];
	struct peer *p = qs[0].peer;

	for (size_t i = 0; i < n && i < BOX_POLICY_BATCH_MAX; i++) {
		struct pending *q = &qs[i];
		bool error = failed && q->waits;
		const char *message = q->message;
		if (error) {
			if (engine_error_message(q->message, msgs[i], sizeof(msgs[i])) < 0)
				(void)snprintf(msgs[i], sizeof(msgs[i]), "%s",
					       "policy denied this operation because the request "
					       "could not be evaluated.");
			message = msgs[i];
		}
		box__decide_reply__init(&items[i]);
		bool permit = !error && q->permit;
		items[i].verdict = permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT
					  : BOX__DECISION_VERDICT__VERDICT_DENY;
		items[i].cause = error ? BOX__DECISION_CAUSE__CAUSE_ERROR : (Box__DecisionCause)q->cause;
		items[i].rules = error ? NULL : q->rules;
		items[i].n_rules = error ? 0 : q->n_rules;
		items[i].message = (char *)message;
		ptrs[i] = &items[i];
	}
	if (p->ev) {
		Box__DecideBatchReply rep = BOX__DECIDE_BATCH_REPLY__INIT;
		rep.replies = ptrs;
		rep.n_replies = n;
		int r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
					   qs[0].request_id, &rep.base, NULL, 0);
		if (r < 0) {
			log_err_errno(r, "Cannot answer %s", p->name);
			drop_peer(p, r);
		}
	}
	for (size_t i = 0; i < n; i++) {
		bool permit = items[i].verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
		/* The i-th request of a batch is named by the batch's id + i (policy.proto). */
		permit_keep(p, qs[0].request_id + i, qs[i].req, permit);
		log_decision(p, qs[i].req, permit, (int)items[i].cause,
			     (const char *const *)items[i].rules, items[i].n_rules,
			     items[i].message, qs[i].resource, qs[i].time_ns);
	}
}

/*
 * Answer every held decision, in the order they arrived (so in order per
 * channel); FAILED: the fsync failed, so each one that waited becomes a deny.
 */
static void
pending_flush(bool failed)
{
	char msg[BOX_IPC_MAX];

	S.flushing = true;
	for (size_t i = 0; i < S.n_pending; i++) {
		struct pending *q = &S.pending[i];
		if (q->line) {
			/* A line that waited behind the decisions before it. */
			char *lb = q->line;
			size_t n = q->line_len;
			if (S.log_len + n + 1 > S.log_cap) {
				size_t cap = S.log_cap ? S.log_cap : 4096;
				while (S.log_len + n + 1 > cap)
					cap *= 2;
				char *nb = realloc(S.logbuf, cap);
				if (!nb)
					fatal(-ENOMEM, "Cannot queue a log line");
				S.logbuf = nb;
				S.log_cap = cap;
			}
			size_t start = S.log_len;
			memcpy(S.logbuf + S.log_len, lb, n);
			S.log_len += n;
			S.logbuf[S.log_len] = '\0';
			if (log_chain(start) < 0 && S.log_failures++ % 1000 == 0)
				log_warn("Cannot chain a decision line");
			pending_clear(q);
			log_flush_soon();
			continue;
		}
		q->peer->n_held = 0;
		if (q->batch_n > 0) {
			size_t n = q->batch_n;
			answer_batch(q, n, failed);
			for (size_t k = 0; k < n; k++)
				pending_clear(&S.pending[i + k]);
			i += n - 1;
			continue;
		}
		if (failed && q->waits) {
			if (engine_error_message(q->message, msg, sizeof(msg)) < 0)
				(void)snprintf(msg, sizeof(msg), "%s",
					       "policy denied this operation because the request "
					       "could not be evaluated.");
			send_reply(q->peer, q->request_id, false, BOX__DECISION_CAUSE__CAUSE_ERROR,
				   NULL, 0, msg);
			log_decision(q->peer, q->req, false, BOX__DECISION_CAUSE__CAUSE_ERROR, NULL,
				     0, msg, q->resource, q->time_ns);
		} else {
			send_reply(q->peer, q->request_id, q->permit, q->cause,
				   (const char *const *)q->rules, q->n_rules, q->message);
			permit_keep(q->peer, q->request_id, q->req, q->permit);
			log_decision(q->peer, q->req, q->permit, q->cause,
				     (const char *const *)q->rules, q->n_rules, q->message,
				     q->resource, q->time_ns);
		}
		pending_clear(q);
	}
	S.n_pending = 0;
	S.flushing = false;
	attached_reap();
}

/*
 * The group commit: one fsync for every event appended since the last one,
 * then the replies that waited for it.
 */
static void
group_commit(void)
{
	static bool said;

	if (S.sync_delay_ms && (S.n_pending || engine_needs_sync(S.engine)))
		box_sleep_ms(S.sync_delay_ms);
	int r = engine_sync(S.engine);
	if (r < 0 && !said) {
		said = true;
		log_err_errno(r, "Cannot sync the history; every decision is denied from now on");
	}
	pending_flush(r < 0);
}

/*
 * Lowest priority: libevent runs it only in a loop pass with no readable
 * channel (it polls them, without waiting, before every pass while this is
 * active), so everything that arrived during the last fsync joins this group.
 */
static void
on_group_sync(evutil_socket_t fd, short what, void *userdata)
{
	S.group_sync_active = false;
	group_commit();
}

static void
group_sync_schedule(void)
{
	if (S.group_sync_active)
		return;
	event_active(S.group_sync, EV_TIMEOUT, 1);
	S.group_sync_active = true;
}

static int
pending_reserve(size_t n)
{
	while (S.n_pending + n > S.cap_pending) {
		size_t cap = S.cap_pending ? S.cap_pending * 2 : 16;
		struct pending *v = realloc(S.pending, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		S.pending = v;
		S.cap_pending = cap;
	}
	return 0;
}

/* Copy RES into Q (the engine's result lives only until its next decision). */
static int
pending_fill(struct pending *q, struct peer *p, uint64_t request_id, Box__DecideRequest *req,
	     const struct engine_result *res, bool waits)
{
	*q = (struct pending){ .peer = p, .request_id = request_id, .req = req, .waits = waits,
			       .permit = res->permit, .cause = res->cause,
			       .time_ns = res->time_ns };
	q->rules = calloc(res->n_rules ? res->n_rules : 1, sizeof(char *));
	q->message = strdup(res->message);
	q->resource = strdup(res->resource);
	bool ok = q->rules && q->message && q->resource;
	for (size_t i = 0; ok && i < res->n_rules; i++) {
		q->rules[i] = strdup(res->rules[i]);
		ok = q->rules[i] != NULL;
		q->n_rules = i + 1;
	}
	if (!ok) {
		q->req = NULL;
		for (size_t i = 0; i < q->n_rules; i++)
			free(q->rules[i]);
		free(q->rules);
		free(q->message);
		free(q->resource);
		return -ENOMEM;
	}
	return 0;
}

static int
pending_push(struct peer *p, uint64_t request_id, Box__DecideRequest *req,
	     const struct engine_result *res, bool waits)
{
	int r = pending_reserve(1);
	if (r < 0)
		return r;
	struct pending *q = &S.pending[S.n_pending];
	r = pending_fill(q, p, request_id, req, res, waits);
	if (r < 0)
		return r;
	q->owned = &req->base;
	S.n_pending++;
	p->n_held++;
	return 0;
}

/* ---- what a peer may send --------------------------------------------------- */

/*
 * P sent what it has no business sending (WHY: "sent …"): a protocol error,
 * logged. An internal peer's channel ends policyd (exit 1, after the usual
 * flush: fail closed, and what others asked still gets its answer); an
 * attached box-shell channel serves a process that runs the agent's script,
 * so only that channel is dropped (its process's decisions then fail, i.e.
 * deny). Returns false: P may be freed, its message is not served.
 */
static bool __attribute__((format(printf, 2, 3)))
peer_refuse(struct peer *p, const char *why, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, why);
	(void)vsnprintf(msg, sizeof(msg), why, ap);
	va_end(ap);
	if (p->attached) {
		log_warn("An attached %s channel %s; dropped it",
			 p->kind == PEER_SUPERVISOR ? "supervised program's" : "box-shell", msg);
		drop_peer(p, -EPROTO);
		attached_reap();
		return false;
	}
	log_err("Protocol error from %s: it %s", p->name, msg);
	S.exit_code = 1;
	p->ev = box_ipc_event_free(p->ev);
	event_base_loopexit(S.base, NULL);
	return false;
}

/* P may ask about ACTION (peer_actions); else it is refused. */
static bool
decide_ok(struct peer *p, const char *what, const char *action)
{
	if (action_kind(action) & peer_actions[p->kind].decide)
		return true;
	return peer_refuse(p, "sent %s for %s, which %s does not raise (it raises %s)", what,
			   action, p->source, peer_actions[p->kind].raises);
}

/* Decide ids of one channel increase (policy.proto): FIRST .. FIRST+N-1 come next. */
static bool
decide_ids_ok(struct peer *p, uint64_t first, size_t n)
{
	if (policy_permits_next(p->permits, first, n) == 0)
		return true;
	return peer_refuse(p, "sent Decide %llu, which is not above the ids of its earlier Decides",
			   (unsigned long long)first);
}

/* ---- handlers -------------------------------------------------------------- */


/* ---- asking a person (@ask; docs/box-policy.5.md) ------------------------------ */

#define POLICYD_ASK_TIMEOUT_MS 30000

static struct ask *
ask_free(struct ask *a)
{
	if (!a)
		return NULL;
	if (a->timer)
		event_free(a->timer);
	if (a->req)
		protobuf_c_message_free_unpacked(&a->req->base, NULL);
	for (size_t i = 0; i < a->n_rules; i++)
		free(a->rules[i]);
	free(a->rules);
	free(a->message);
	free(a->resource);
	free(a);
	return NULL;
}

/* A off the list (not freed). */
static void
ask_unlink(struct ask *a)
{
	for (struct ask **pp = &S.asks; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			S.n_asks--;
			return;
		}
}

/* REQ packed: the key of a kept answer (equal action and fields, in the same order). */
static uint8_t *
ask_key(const Box__DecideRequest *req, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(&req->base);
	uint8_t *k = malloc(*len ? *len : 1);
	if (k)
		(void)protobuf_c_message_pack(&req->base, k);
	return k;
}

/* The answer kept for the box for a request equal to REQ, or NULL. */
static const struct approval *
approval_find(const Box__DecideRequest *req)
{
	size_t len;
	_cleanup_free_ uint8_t *k = ask_key(req, &len);
	for (size_t i = 0; k && i < S.n_approvals; i++)
		if (S.approvals[i].len == len && memcmp(S.approvals[i].key, k, len) == 0)
			return &S.approvals[i];
	return NULL;
}

/*
 * Answer held decision A: PERMIT from a person (UID, PERSON true), or a deny (a person's,
 * or its timeout). Its line: a person's answer has source "person", the asker and the uid;
 * a timeout is the asker's own deny, saying so.
 */
/* Cut S at its last whole UTF-8 character (snprintf may have split one at the cap). */
static void
utf8_cut(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && !box_valid_utf8(s, n))
		s[--n] = '\0';
}

static void
ask_answer(struct ask *a, bool permit, bool person, uint32_t uid)
{
	char msg[BOX_STR_MAX];
	struct peer *p = a->peer;
	int cause = permit ? BOX__DECISION_CAUSE__CAUSE_PERMITTED
			   : BOX__DECISION_CAUSE__CAUSE_FORBIDDEN;

	ask_unlink(a);
	/* Its request event must be on disk before a permit goes out (batch mode). */
	if (permit && engine_needs_sync(S.engine) && engine_sync(S.engine) < 0) {
		permit = false;
		cause = BOX__DECISION_CAUSE__CAUSE_ERROR;
	}
	if (!person && S.ask_timeout_ms % 1000 == 0)
		(void)snprintf(msg, sizeof(msg), "%s (no one answered within %u s)", a->message,
			       S.ask_timeout_ms / 1000);
	else if (!person)
		(void)snprintf(msg, sizeof(msg), "%s (no one answered within %u ms)", a->message,
			       S.ask_timeout_ms);
	else if (permit)
		(void)snprintf(msg, sizeof(msg), "a person (uid %u) permitted it: %s", uid,
			       a->message);
	else
		(void)snprintf(msg, sizeof(msg), "a person (uid %u) denied it: %s", uid, a->message);
	utf8_cut(msg);
	if (p) {
		send_reply(p, a->request_id, permit, cause, (const char *const *)a->rules,
			   a->n_rules, msg);
		permit_keep(p, a->request_id, a->req, permit);
		if (person)
			log_person(p, a->req, permit, cause, (const char *const *)a->rules,
				   a->n_rules, msg, a->resource, a->time_ns, uid);
		else
			log_decision(p, a->req, permit, cause, (const char *const *)a->rules,
				     a->n_rules, msg, a->resource, a->time_ns);
	}
	ask_free(a);
}

static void
on_ask_timeout(evutil_socket_t fd, short what, void *userdata)
{
	ask_answer(userdata, false, false, 0);
}

/*
 * RES (a deny of REQ of P's Decide REQUEST_ID by @ask forbids alone, or with [box] ask =
 * default one no rule matched: then by_default, no rules): held (true; the
 * message is the queue's now), or false when it cannot be (too many wait already, no
 * memory): the caller answers the deny at once.
 */
static bool
ask_hold(struct peer *p, uint64_t request_id, struct box_ipc_msg *m,
	 const struct engine_result *res)
{
	if (S.n_asks >= BOX_POLICY_ASKS_MAX || !p->ev)
		return false;
	struct ask *a = calloc(1, sizeof(*a));
	if (!a)
		return false;
	a->peer = p;
	a->request_id = request_id;
	a->time_ns = res->time_ns;
	a->by_default = !res->ask;
	a->rules = calloc(res->n_rules ? res->n_rules : 1, sizeof(char *));
	a->message = strdup(res->message);
	a->resource = strdup(res->resource ? res->resource : "");
	bool ok = a->rules && a->message && a->resource;
	for (size_t i = 0; ok && i < res->n_rules; i++) {
		a->rules[i] = strdup(res->rules[i]);
		ok = a->rules[i] != NULL;
		a->n_rules = i + 1;
	}
	struct timeval tv = { S.ask_timeout_ms / 1000, (S.ask_timeout_ms % 1000) * 1000 };
	a->timer = ok ? evtimer_new(S.base, on_ask_timeout, a) : NULL;
	if (!a->timer || evtimer_add(a->timer, &tv) < 0) {
		ask_free(a);
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &a->since);
	a->ask_id = ++S.next_ask_id;
	a->req = (Box__DecideRequest *)m->msg;
	m->msg = NULL; /* the ask owns it */
	struct ask **tail = &S.asks;
	while (*tail)
		tail = &(*tail)->next;
	*tail = a;
	S.n_asks++;
	log_info("Decision %llu (%s %s, from %s) waits for a person (boxctl approve|deny)",
		 (unsigned long long)a->ask_id, a->req->action, a->resource, p->name);
	return true;
}

/* P's channel is gone: what it asked is answered to no one (nothing logged: never decided). */
static void
ask_peer_gone(struct peer *p)
{
	for (struct ask *a = S.asks, *next; a; a = next) {
		next = a->next;
		if (a->peer == p) {
			ask_unlink(a);
			ask_free(a);
		}
	}
}

/* PolicyAskList (boxd): what waits, oldest first. */
static void
handle_ask_list(struct peer *p, struct box_ipc_msg *m)
{
	Box__PolicyAskListReply rep = BOX__POLICY_ASK_LIST_REPLY__INIT;
	Box__PolicyAsk items[BOX_POLICY_ASKS_MAX], *ptrs[BOX_POLICY_ASKS_MAX];
	char *json[BOX_POLICY_ASKS_MAX] = { NULL };
	struct timespec now;

	if (p->kind != PEER_SUPERVISOR || p->attached) {
		(void)peer_refuse(p, "sent a PolicyAskList, which only boxd sends");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct ask *a = S.asks; a && rep.n_asks < BOX_POLICY_ASKS_MAX; a = a->next) {
		Box__PolicyAsk *it = &items[rep.n_asks];
		box__policy_ask__init(it);
		it->ask_id = a->ask_id;
		it->action = a->req->action;
		it->resource = a->resource;
		it->rules = a->rules;
		it->n_rules = a->n_rules;
		it->message = a->message;
		it->source = (char *)(a->peer ? a->peer->source : "gone");
		int64_t ms = (int64_t)(now.tv_sec - a->since.tv_sec) * 1000 +
			     (now.tv_nsec - a->since.tv_nsec) / 1000000;
		it->waited_ms = ms > 0 ? (uint64_t)ms : 0;
		it->input = a->req->input;
		it->n_input = a->req->n_input;
		it->has_by_default = a->by_default;
		it->by_default = a->by_default;
		/* boxd hands the fields to boxctl as JSON (boxctl speaks no policy protocol) */
		json[rep.n_asks] = declog_input_json(a->req->input, a->req->n_input);
		if (json[rep.n_asks] && strlen(json[rep.n_asks]) <= BOX_ASK_INPUT_MAX)
			it->input_json = json[rep.n_asks];
		ptrs[rep.n_asks++] = it;
	}
	rep.asks = ptrs;
	/* What `boxctl approve --always` edits must be the text in force (docs/boxctl.1.md). */
	uint8_t sha[LOGCHAIN_HASH_LEN];
	if (S.local.has_policy_text) {
		logchain_sha256(S.local.policy_text.data, S.local.policy_text.len, sha);
		rep.has_policy_sha256 = true;
		rep.policy_sha256.data = sha;
		rep.policy_sha256.len = sizeof(sha);
	}
	rep.policy_file = S.policy_file;
	int r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_POLICY_ASK_LIST_REPLY, m->request_id,
				   &rep.base, NULL, 0);
	for (size_t i = 0; i < BOX_POLICY_ASKS_MAX; i++)
		free(json[i]);
	if (r < 0)
		fatal(r, "Cannot answer boxd's PolicyAskList");
}

/* PolicyKernelRefusal (boxd): a sandbox's kernel refusals, for telemetry alone. */
static void
handle_kernel_refusal(struct peer *p, struct box_ipc_msg *m)
{
	if (p->kind != PEER_SUPERVISOR || p->attached) {
		(void)peer_refuse(p, "sent a PolicyKernelRefusal, which only boxd sends");
		return;
	}
	tel_kernel((const Box__PolicyKernelRefusal *)m->msg);
}

/* PolicyAskAnswer (boxd): a person's answer to one held decision. */
static void
handle_ask_answer(struct peer *p, struct box_ipc_msg *m)
{
	const Box__PolicyAskAnswer *an = (const Box__PolicyAskAnswer *)m->msg;
	Box__PolicyAskAnswerReply rep = BOX__POLICY_ASK_ANSWER_REPLY__INIT;
	char msg[128];

	if (p->kind != PEER_SUPERVISOR || p->attached) {
		(void)peer_refuse(p, "sent a PolicyAskAnswer, which only boxd sends");
		return;
	}
	struct ask *a = S.asks;
	while (a && a->ask_id != an->ask_id)
		a = a->next;
	if (!a) {
		(void)snprintf(msg, sizeof(msg), "no decision %llu waits (answered, timed out, or "
			       "its asker is gone)", (unsigned long long)an->ask_id);
		rep.message = msg;
	} else {
		rep.ok = true;
		if (an->for_box) {
			/* Kept for the run: a later equal request is answered the same at once. */
			struct approval *v = realloc(S.approvals,
						     (S.n_approvals + 1) * sizeof(*v));
			if (v) {
				S.approvals = v;
				v[S.n_approvals].key = ask_key(a->req, &v[S.n_approvals].len);
				v[S.n_approvals].permit = an->permit;
				v[S.n_approvals].uid = an->uid;
				if (v[S.n_approvals].key)
					S.n_approvals++;
			}
		}
		log_info("Decision %llu %s by uid %u%s", (unsigned long long)a->ask_id,
			 an->permit ? "permitted" : "denied", an->uid,
			 an->for_box ? " (for this box)" : "");
		ask_answer(a, an->permit, true, an->uid);
	}
	int r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER_REPLY,
				   m->request_id, &rep.base, NULL, 0);
	if (r < 0)
		fatal(r, "Cannot answer boxd's PolicyAskAnswer");
}

static void
handle_decide(struct peer *p, struct box_ipc_msg *m)
{
	Box__DecideRequest *req = (Box__DecideRequest *)m->msg;
	struct engine_result res;
	int64_t now = engine_now();

	if (!decide_ok(p, "a DecideRequest", req->action) ||
	    !decide_ids_ok(p, m->request_id, 1))
		return;
	int r = engine_decide(S.engine, req, now, &res);
	if (r < 0)
		fatal(r, "Cannot decide");
	/* Said once: from the first failure on, every decision is a deny. */
	static bool said;
	if (res.history_error < 0 && !said) {
		said = true;
		log_err_errno(res.history_error,
			      "Cannot write the history; every decision is denied from now on");
	}
	S.n_decisions++;
	p->n_decided++;
	/* [box] ask = default: no permit matched, no forbid either — asked as an @ask forbid is. */
	if (res.ask || (S.ask_default && !res.permit &&
			res.cause == BOX__DECISION_CAUSE__CAUSE_NO_MATCH && res.history_error >= 0)) {
		/* Forbidden by @ask rules alone: a person's answer kept for the box, or ask. */
		const struct approval *ap = approval_find(req);
		if (ap) {
			char msg[BOX_STR_MAX];
			int cause = ap->permit ? BOX__DECISION_CAUSE__CAUSE_PERMITTED
					       : BOX__DECISION_CAUSE__CAUSE_FORBIDDEN;
			if (ap->permit && res.wait_sync && engine_sync(S.engine) < 0)
				cause = BOX__DECISION_CAUSE__CAUSE_ERROR;
			bool permit = cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
			(void)snprintf(msg, sizeof(msg), "a person (uid %u) %s it for this box: %s",
				       ap->uid, permit ? "permitted" : "denied", res.message);
			utf8_cut(msg);
			send_reply(p, m->request_id, permit, cause, res.rules, res.n_rules, msg);
			permit_keep(p, m->request_id, req, permit);
			log_person(p, req, permit, cause, res.rules, res.n_rules, msg, res.resource,
				   res.time_ns, ap->uid);
			(void)engine_maybe_compact(S.engine, now, false);
			return;
		}
		if (ask_hold(p, m->request_id, m, &res)) {
			if (res.wait_sync)
				group_sync_schedule();
			return;
		}
	}
	if (res.wait_sync || p->n_held > 0) {
		/*
		 * Batch: the reply waits for the group fsync that covers its event.
		 * One that wrote nothing waits too when its channel has replies held:
		 * a peer matches replies by id, but gets them in request order.
		 */
		r = pending_push(p, m->request_id, req, &res, res.wait_sync);
		if (r < 0)
			fatal(r, "Cannot queue a decision");
		m->msg = NULL; /* the queue owns it */
		/* A peer that never stops sending cannot grow the group without bound. */
		if (S.n_pending >= POLICYD_GROUP_MAX)
			group_commit();
		else
			group_sync_schedule();
	} else {
		send_reply(p, m->request_id, res.permit, res.cause, res.rules, res.n_rules,
			   res.message);
		permit_keep(p, m->request_id, req, res.permit);
		log_decision(p, req, res.permit, res.cause, res.rules, res.n_rules, res.message,
			     res.resource, res.time_ns);
	}
	(void)engine_maybe_compact(S.engine, now, false);
}

/*
 * DecideBatch: each request observed, then decided, in order, exactly as if
 * it came alone (the same engine_decide at its own clock reading, the same
 * history event, the same log line); the verdicts go out together in one
 * reply. With history_sync = always the engine defers each event's fsync
 * and one fsync (a group commit right here) covers the batch; with batch
 * the whole reply waits for the next group commit. A batch that wrote
 * nothing is answered at once unless replies of its channel are held.
 * until_deny: the batch ends at its first denial (the reply is that much
 * shorter), as a sender that stops there would have it. (A permit that
 * waits for a group commit counts as a permit here; should that fsync fail,
 * it and every later reply of the batch become denials, cause error.)
 */
static bool history_free_batch(const Box__DecideBatchRequest *b);
static void release_held(struct peer *p);
static void drop_peer(struct peer *p, int error);

static void
handle_decide_batch(struct peer *p, struct box_ipc_msg *m)
{
	Box__DecideBatchRequest *b = (Box__DecideBatchRequest *)m->msg;
	size_t n = b->n_requests;
	struct pending local[BOX_POLICY_BATCH_MAX];
	bool any_wait = false;
	static bool said;

	if (n == 0 || n > BOX_POLICY_BATCH_MAX) /* the validator refused it already */
		fatalx("%s sent a DecideBatch of %zu requests", p->name, n);
	/* Each request is checked before any is decided: a refused batch decides nothing. */
	for (size_t i = 0; i < n; i++)
		if (!decide_ok(p, "a DecideBatchRequest", b->requests[i]->action))
			return;
	if (!decide_ids_ok(p, m->request_id, n))
		return;
	if (b->has_history_free && !history_free_batch(b)) {
		/* a reload came between: nothing decided; the sender asks PolicyLocal again */
		Box__DecideBatchReply rep = BOX__DECIDE_BATCH_REPLY__INIT;
		rep.has_stale = rep.stale = true;
		release_held(p);
		p->n_stale++;
		int r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
					   m->request_id, &rep.base, NULL, 0);
		if (r < 0) {
			log_err_errno(r, "Cannot answer %s", p->name);
			drop_peer(p, r);
		}
		return;
	}
	if (b->has_history_free) {
		p->n_batches++;
		p->n_batched += n;
	}
	engine_defer_sync(S.engine, true);
	for (size_t i = 0; i < n; i++) {
		struct engine_result res;
		int64_t now = engine_now();
		int r = engine_decide(S.engine, b->requests[i], now, &res);
		if (r < 0)
			fatal(r, "Cannot decide");
		if (res.history_error < 0 && !said) {
			said = true;
			log_err_errno(res.history_error,
				      "Cannot write the history; every decision is denied from now on");
		}
		S.n_decisions++;
		p->n_decided++;
		r = pending_fill(&local[i], p, m->request_id, b->requests[i], &res, res.wait_sync);
		if (r < 0)
			fatal(r, "Cannot queue a decision");
		any_wait = any_wait || res.wait_sync;
		(void)engine_maybe_compact(S.engine, now, false);
		/* The sender stops at the first denial: what follows it never happened. */
		if (b->has_until_deny && b->until_deny && !res.permit) {
			n = i + 1;
			break;
		}
	}
	engine_defer_sync(S.engine, false);
	local[0].batch_n = n;
	local[n - 1].owned = m->msg; /* the batch goes with its last member */
	m->msg = NULL;
	if (!any_wait && p->n_held == 0) {
		answer_batch(local, n, false);
		for (size_t i = 0; i < n; i++)
			pending_clear(&local[i]);
		return;
	}
	if (pending_reserve(n) < 0)
		fatal(-ENOMEM, "Cannot queue a decision");
	memcpy(&S.pending[S.n_pending], local, n * sizeof(local[0]));
	S.n_pending += n;
	p->n_held += n;
	/* always: one fsync for the batch, now; batch: the next group commit. */
	if (engine_sync_mode(S.engine) == ENGINE_SYNC_ALWAYS || S.n_pending >= POLICYD_GROUP_MAX)
		group_commit();
	else
		group_sync_schedule();
}

/*
 * Whether P may record REC: 0 yes (its permit is kept), 1 stale (the bound on
 * unrecorded permits forgot it), -1 no (WHY says what it sent). KEPT_ACTION: the
 * action of REC's permit, kept by handle_ship outside the channel's set (NULL: look
 * in the set).
 */
static int
record_check_kept(struct peer *p, const Box__RecordRequest *rec, const char *kept_action,
		  char *why, size_t size)
{
	const char *decided;
	unsigned long long id = (unsigned long long)rec->decide_id;

	if (!(action_kind(rec->action) & peer_actions[p->kind].record)) {
		(void)snprintf(why, size, "recorded an outcome of %s, which %s does not record",
			       rec->action, p->source);
		return -1;
	}
	if (kept_action) {
		decided = kept_action;
	} else {
		int r = policy_permits_find(p->permits, rec->decide_id, &decided);
		if (r == -ESTALE)
			return 1;
		if (r < 0) {
			(void)snprintf(why, size,
				       "recorded an outcome of Decide %llu, which is no permit of its "
				       "channel still without an outcome (unknown, denied or recorded "
				       "already)",
				       id);
			return -1;
		}
	}
	if (strcmp(decided, rec->action) != 0) {
		(void)snprintf(why, size,
			       "recorded an outcome of %s for Decide %llu, which asked about %s",
			       rec->action, id, decided);
		return -1;
	}
	return 0;
}

static int
record_check(struct peer *p, const Box__RecordRequest *rec, char *why, size_t size)
{
	return record_check_kept(p, rec, NULL, why, size);
}

static void
record_stale(struct peer *p, const Box__RecordRequest *rec)
{
	static unsigned said;
	if (said++ % 1000 == 0)
		log_warn("%s recorded the outcome of Decide %llu (%s), which the bound of %u "
			 "permits without an outcome per channel had forgotten; dropped",
			 p->name, (unsigned long long)rec->decide_id, rec->action,
			 BOX_POLICY_PERMITS_MAX);
}

/*
 * The outcome REC of a permit record_check found kept: the event is that
 * Decide's action and input (policyd's own copy) with REC's kind and output.
 * KEPT: the DecideRequest that permit was packed from, when policyd still holds
 * it (a decision of the same PolicyShip, decided here): the same bytes, not
 * unpacked again; NULL: the permit's own copy. IN_SET false: KEPT's permit was
 * never put in the channel's set (handle_ship: its outcome came in the same ship),
 * so there is nothing to take out.
 */
static void
record_one(struct peer *p, const Box__RecordRequest *rec, const Box__DecideRequest *kept,
	   bool in_set)
{
	int64_t now = engine_now(), t = now;
	Box__DecideRequest *dec = NULL;
	const Box__DecideRequest *d = kept;

	int r = !in_set ? 0
		: kept	? policy_permits_drop(p->permits, rec->decide_id)
			: policy_permits_take(p->permits, rec->decide_id, &dec);
	if (r < 0)
		fatal(r, "Cannot take the permit a Record of %s names", p->name);
	if (!kept)
		d = dec;
	Box__RecordRequest ev = *rec;
	ev.action = d->action;
	ev.input = d->input;
	ev.n_input = d->n_input;
	r = engine_record(S.engine, &ev, now, &t);
	if (r == 0)
		log_outcome(p, &ev, t);
	if (dec)
		box__decide_request__free_unpacked(dec, NULL);
	if (r == -EINVAL)
		log_warn("%s recorded an outcome of '%s' that does not fit the schema; dropped",
			 p->name, rec->action);
	else if (r == -ENOMEM)
		fatal(r, "Cannot record");
	else if (r < 0 && r != -EIO)
		log_err_errno(r, "Cannot write the history; every decision is denied from now on");
	/* The outcome joins the next group commit (always and batch alike). */
	if (engine_needs_sync(S.engine))
		group_sync_schedule();
	(void)engine_maybe_compact(S.engine, now, false);
}

static void
handle_record(struct peer *p, struct box_ipc_msg *m)
{
	const Box__RecordRequest *rec = (const Box__RecordRequest *)m->msg;
	char why[512];

	int r = record_check(p, rec, why, sizeof(why));
	if (r < 0)
		(void)peer_refuse(p, "%s", why);
	else if (r > 0)
		record_stale(p, rec);
	else
		record_one(p, rec, NULL, true);
}

/*
 * RecordBatch: each recorded in order exactly as if it had come alone. All are
 * checked first (one naming a permit an earlier one of the batch records is
 * recorded already): a refused batch records nothing.
 */
static void
handle_record_batch(struct peer *p, struct box_ipc_msg *m)
{
	const Box__RecordBatch *b = (const Box__RecordBatch *)m->msg;
	int state[BOX_POLICY_BATCH_MAX];
	char why[512];

	if (b->n_records == 0 || b->n_records > BOX_POLICY_BATCH_MAX) /* the validator's */
		fatalx("%s sent a RecordBatch of %zu records", p->name, b->n_records);
	for (size_t i = 0; i < b->n_records; i++) {
		state[i] = record_check(p, b->records[i], why, sizeof(why));
		for (size_t k = 0; state[i] == 0 && k < i; k++)
			if (state[k] == 0 && b->records[k]->decide_id == b->records[i]->decide_id) {
				(void)snprintf(why, sizeof(why),
					       "recorded two outcomes of Decide %llu in one RecordBatch",
					       (unsigned long long)b->records[i]->decide_id);
				state[i] = -1;
			}
		if (state[i] < 0) {
			(void)peer_refuse(p, "%s", why);
			return;
		}
	}
	for (size_t i = 0; i < b->n_records; i++) {
		if (state[i] > 0)
			record_stale(p, b->records[i]);
		else
			record_one(p, b->records[i], NULL, true);
	}
}

/* ---- decisions without a round trip (docs/box-policy.5.md) ------------------ */

/* ACTION is one of PolicyLocal's: its peer may decide it in process. */
static bool
local_action(const char *action)
{
	for (size_t i = 0; i < S.local.n_actions; i++)
		if (strcmp(S.local.actions[i], action) == 0)
			return true;
	return false;
}

/*
 * The actions a peer may decide in process when they qualify: box-shell's, and
 * box-gateway's connections and requests (its mcp:call and per-tool actions are
 * refined by tool schemas it registers: always asked). Which peer raises which is
 * peer_actions' (decide_ok checks every shipped decision against it).
 */
static const char *const local_capable[] = { "fs:read",    "fs:write",    "fs:delete",
					     "fs:move",    "shell:exec",  "shell:spawn",
					     "net:connect", "http:request" };
_Static_assert(sizeof(local_capable) / sizeof(local_capable[0]) <= LOCAL_NAMES_MAX &&
		       sizeof(local_capable) / sizeof(local_capable[0]) <= sizeof(unsigned) * 8,
	       "local_names and a generation's mask have room for every action of local_capable");

/* PolicyLocal's policy text: TEXT (LEN bytes), or none. */
static void
local_text_set(bool has, const uint8_t *text, size_t len)
{
	free(S.local.policy_text.data);
	S.local.policy_text.data = NULL;
	S.local.policy_text.len = 0;
	S.local.has_policy_text = has;
	if (!has)
		return;
	S.local.policy_text.data = malloc(len ? len : 1);
	if (!S.local.policy_text.data)
		fatal(-ENOMEM, "Cannot keep the policy text");
	memcpy(S.local.policy_text.data, text, len);
	S.local.policy_text.len = len;
}

/* The generation in force, what its peers decide in process, and the page. */
static void
local_actions(void)
{
	struct engine_stats es;
	engine_stats(S.engine, &es);
	S.local.generation = engine_generation(S.engine);
	S.local_probe = es.temporal;
	S.local.actions = S.local_names;
	S.local.n_actions = 0;
	S.local_mask = 0;
	/*
	 * A decision held for a person is box-policyd's to hold: with an @ask rule, or with
	 * [box] ask = default, no peer decides anything in process.
	 */
	bool ask = engine_has_ask(S.engine) || S.ask_default;
	for (size_t i = 0; !ask && i < sizeof(local_capable) / sizeof(local_capable[0]); i++) {
		int r = engine_history_free(S.engine, local_capable[i]);
		if (r < 0)
			fatal(r, "Cannot tell whether %s needs the history", local_capable[i]);
		if (r > 0) {
			S.local_names[S.local.n_actions++] = (char *)local_capable[i];
			S.local_mask |= 1u << i;
		}
	}
	if (S.gen_page)
		__atomic_store_n(S.gen_page, S.local.generation, __ATOMIC_RELEASE);
	size_t shell_n = 0, shell_of = 0, gw_n = 0, gw_of = 0, sup_n = 0, sup_of = 0;
	for (size_t i = 0; i < sizeof(local_capable) / sizeof(local_capable[0]); i++) {
		bool shell = action_kind(local_capable[i]) & peer_actions[PEER_SHELL].decide;
		bool sup = action_kind(local_capable[i]) & peer_actions[PEER_SUPERVISOR].decide;
		bool in = S.local_mask & (1u << i);
		shell_of += shell;
		shell_n += shell && in;
		gw_of += !shell;
		gw_n += !shell && in;
		sup_of += sup;
		sup_n += sup && in;
	}
	log_info("box-shell decides in process: %zu of its %zu actions; box-gateway: %zu of its "
		 "%zu; a supervised program: %zu of its %zu (policy generation %llu)",
		 shell_n, shell_of, gw_n, gw_of, sup_n, sup_of,
		 (unsigned long long)S.local.generation);
}

/* Step 7b: which of the peers' actions qualify, and the policy to send with them. */
static void
local_prepare(const Box__PolicyInit *init)
{
	box__policy_local__init(&S.local);
	local_text_set(init->has_policy_text, init->policy_text.data, init->policy_text.len);
	S.local.home = strdup(init->home);
	S.local.mcp_namespaces = calloc(init->n_mcp_namespaces + 1, sizeof(char *));
	if (!S.local.home || !S.local.mcp_namespaces)
		fatal(-ENOMEM, "Cannot keep the policy text");
	for (size_t i = 0; i < init->n_mcp_namespaces; i++) {
		S.local.mcp_namespaces[i] = strdup(init->mcp_namespaces[i]);
		if (!S.local.mcp_namespaces[i])
			fatal(-ENOMEM, "Cannot keep the policy text");
		S.local.n_mcp_namespaces = i + 1;
	}
	local_actions();
}

/* ACTION qualified in generation GEN (kept): its peer decided it in process then. */
static bool
local_action_of(uint64_t gen, const char *action)
{
	for (size_t i = 0; i < S.n_local_old; i++) {
		if (S.local_old[i].generation != gen)
			continue;
		for (size_t k = 0; k < sizeof(local_capable) / sizeof(local_capable[0]); k++)
			if (strcmp(local_capable[k], action) == 0)
				return S.local_old[i].mask & (1u << k);
	}
	return false;
}

/*
 * A DecideBatchRequest with history_free: its generation is the one in force and each
 * of its actions qualifies in it (PolicyLocal's), so deciding one before another's
 * outcome is recorded changes no verdict.
 */
static bool
history_free_batch(const Box__DecideBatchRequest *b)
{
	if (b->history_free != S.local.generation)
		return false;
	for (size_t i = 0; i < b->n_requests; i++)
		if (!local_action(b->requests[i]->action))
			return false;
	return true;
}

/*
 * PolicyLocalRequest: box-shell's channels, box-gateway's and a supervised program's
 * (each told only the qualifying actions it raises, with the text and the page).
 */
static void
handle_local_request(struct peer *p, struct box_ipc_msg *m)
{
	bool supervisor = p->kind == PEER_SUPERVISOR && p->attached;
	if (p->kind != PEER_SHELL && p->kind != PEER_GATEWAY && !supervisor) {
		(void)peer_refuse(p, "sent a PolicyLocalRequest, which only box-shell, "
				     "box-gateway and a supervised program's channel send");
		return;
	}
	Box__PolicyLocal l = S.local;
	char *acts[LOCAL_NAMES_MAX];
	l.actions = acts;
	l.n_actions = 0;
	for (size_t i = 0; i < S.local.n_actions; i++)
		if (action_kind(S.local.actions[i]) & peer_actions[p->kind].decide)
			acts[l.n_actions++] = S.local.actions[i];
	int r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_POLICY_LOCAL, m->request_id, &l.base,
				   &S.gen_fd, S.gen_fd >= 0 ? 1 : 0);
	p->local_gen = S.local.generation;
	if (r < 0) {
		log_err_errno(r, "Cannot answer %s", p->name);
		drop_peer(p, r);
	}
}

/* The claim IT makes is RES: the same verdict, cause and rules, in order. */
static bool
ship_matches(const Box__PolicyShipItem *it, const struct engine_result *res, char *why,
	     size_t size)
{
	bool permit = it->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
	if (permit != res->permit || (int)it->cause != res->cause) {
		(void)snprintf(why, size, "shipped a %s (cause %s) of %s where the policy says %s "
			       "(cause %s)",
			       permit ? "permit" : "deny", cause_names[it->cause % 5],
			       it->decide->action, res->permit ? "permit" : "deny",
			       cause_names[res->cause % 5]);
		return false;
	}
	bool same = it->n_rules == res->n_rules;
	for (size_t i = 0; same && i < it->n_rules; i++)
		same = strcmp(it->rules[i], res->rules[i]) == 0;
	if (!same)
		(void)snprintf(why, size, "shipped a decision of %s naming other rules than the "
			       "policy's", it->decide->action);
	return same;
}

/* What handle_ship does with the permit of a decide item (by id - the ship's first). */
enum {
	SHIP_PERMIT_SET,   /* kept in the channel's set, as a Decide's (permit_keep) */
	SHIP_PERMIT_OWED,  /* a later record item of the ship names it */
	SHIP_PERMIT_HERE,  /* permitted, owed: kept by the ship alone until that record */
	SHIP_PERMIT_TAKEN, /* its record came */
};

/*
 * The permits B's own record items take (a built-in's status right after its
 * permit: the usual case) are kept by the ship itself, not packed into the channel's
 * set only to be taken out a few items later: HERE[k] says SHIP_PERMIT_OWED for
 * each. Only when the set cannot reach a bound within this ship (every decision
 * added, none taken), so that nothing the set would have forgotten is kept: what it
 * holds after the ship, and what each record finds, are what they would have been.
 */
static void
ship_permits_plan(const struct peer *p, uint64_t first, const Box__PolicyShip *b, bool stale,
		  size_t n_dec, uint8_t *here)
{
	size_t k = 0, bytes = 0;
	bool any = false;

	memset(here, SHIP_PERMIT_SET, n_dec);
	if (stale || !p->permits ||
	    policy_permits_count(p->permits) + n_dec > BOX_POLICY_PERMITS_MAX)
		return;
	for (size_t i = 0; i < b->n_items; i++) {
		const Box__PolicyShipItem *it = b->items[i];
		if (it->decide) {
			k++;
			continue;
		}
		uint64_t did = it->record->decide_id;
		if (did >= first && did - first < k && here[did - first] == SHIP_PERMIT_SET) {
			here[did - first] = SHIP_PERMIT_OWED;
			any = true;
		}
	}
	if (!any)
		return;
	for (size_t i = 0; i < b->n_items; i++)
		if (b->items[i]->decide)
			bytes += protobuf_c_message_get_packed_size(&b->items[i]->decide->base);
	if (policy_permits_bytes(p->permits) + bytes > BOX_POLICY_PERMIT_BYTES_MAX)
		memset(here, SHIP_PERMIT_SET, n_dec);
}

/*
 * PolicyShip: box-shell's decisions made in process and their outcomes, in the
 * order it made them. Each decision is checked before it counts: its action must
 * be one PolicyLocal named, the generation this one, and a probe of the request
 * (nothing observed; without temporal rules nothing is observed anyway, and the
 * decision itself is compared) must give the same verdict, cause and rules; then it is
 * decided exactly as a Decide (observed, its permit kept, its line logged). A
 * mismatch is a protocol error at that item: what came before it stands (it was
 * checked), nothing after it counts, so no shipped line makes a permit, a line or
 * an event a Decide would not have made. No reply.
 */
static void handle_ship_items(struct peer *p, struct box_ipc_msg *m);

static void
handle_ship(struct peer *p, struct box_ipc_msg *m)
{
	ship_input.on = true;
	ship_input.key = NULL;
	handle_ship_items(p, m);
	ship_input.on = false;
	ship_input.key = NULL; /* (the message's arena goes: its address may come again) */
}

static void
handle_ship_items(struct peer *p, struct box_ipc_msg *m)
{
	const Box__PolicyShip *b = (const Box__PolicyShip *)m->msg;
	char why[768];
	size_t n_dec = 0;

	if (p->kind != PEER_SHELL && p->kind != PEER_GATEWAY &&
	    !(p->kind == PEER_SUPERVISOR && p->attached)) {
		(void)peer_refuse(p, "sent a PolicyShip, which only box-shell, box-gateway and a "
				     "supervised program's channel send");
		return;
	}
	uint64_t cur = engine_generation(S.engine);
	/*
	 * An earlier generation: decided by a process that had not yet seen the page move
	 * (it reads it before each decision). Accepted while engine.c keeps that policy and
	 * this channel has not asked for a newer one since; checked against that policy.
	 */
	bool stale = b->generation != cur;
	if (stale && (b->generation > cur || b->generation < p->local_gen ||
		      cur - b->generation > ENGINE_GENERATIONS_KEPT)) {
		(void)peer_refuse(p, "shipped decisions of policy generation %llu (this is %llu)",
				  (unsigned long long)b->generation, (unsigned long long)cur);
		return;
	}
	for (size_t i = 0; i < b->n_items; i++) {
		const Box__DecideRequest *req = b->items[i]->decide;
		if (!req)
			continue;
		if (!decide_ok(p, "a shipped decision", req->action))
			return;
		if (stale ? !local_action_of(b->generation, req->action) : !local_action(req->action)) {
			(void)peer_refuse(p, "shipped a decision of %s, which needs box-policyd "
					  "(its rules or its events are temporal)", req->action);
			return;
		}
		n_dec++;
	}
	if (n_dec && !decide_ids_ok(p, m->request_id, n_dec))
		return;
	uint64_t id = m->request_id;
	/* this ship's decide items by id - request_id (n_dec <= n_items <= BOX_POLICY_BATCH_MAX) */
	const Box__DecideRequest *decided[BOX_POLICY_BATCH_MAX];
	if (b->n_items > BOX_POLICY_BATCH_MAX) /* the validator's */
		fatalx("%s sent a PolicyShip of %zu items", p->name, b->n_items);
	uint8_t here[BOX_POLICY_BATCH_MAX];
	ship_permits_plan(p, m->request_id, b, stale, n_dec, here);
	engine_defer_sync(S.engine, true);
	for (size_t i = 0; i < b->n_items; i++) {
		const Box__PolicyShipItem *it = b->items[i];
		if (it->record) {
			/*
			 * The permit of a decision this ship made (its id in [first, id)) was
			 * packed from that item's request, which this message still holds.
			 */
			uint64_t did = it->record->decide_id;
			bool ours = did >= m->request_id && did < id;
			const Box__DecideRequest *kept = ours ? decided[did - m->request_id] : NULL;
			bool in_set = !ours || here[did - m->request_id] != SHIP_PERMIT_HERE;
			int r = record_check_kept(p, it->record, in_set ? NULL : kept->action, why,
						  sizeof(why));
			if (r < 0) {
				engine_defer_sync(S.engine, false);
				(void)peer_refuse(p, "%s", why);
				return;
			}
			if (!in_set)
				here[did - m->request_id] = SHIP_PERMIT_TAKEN;
			if (r > 0)
				record_stale(p, it->record);
			else
				record_one(p, it->record, kept, in_set);
			continue;
		}
		struct engine_result res;
		int64_t now = engine_now();
		int r;
		if (stale) {
			r = engine_decide_generation(S.engine, b->generation, it->decide, &res);
			if (r == -ENOENT) {
				engine_defer_sync(S.engine, false);
				(void)peer_refuse(p, "shipped decisions of policy generation %llu, "
						  "no longer kept", (unsigned long long)b->generation);
				return;
			}
			if (r < 0)
				fatal(r, "Cannot decide");
			if (!ship_matches(it, &res, why, sizeof(why))) {
				engine_defer_sync(S.engine, false);
				(void)peer_refuse(p, "%s (policy generation %llu)", why,
						  (unsigned long long)b->generation);
				return;
			}
			bool permit = res.permit;
			int cause = res.cause;
			const char *msg = res.message; /* engine_decide_generation's own, kept */
			/* Observed now, as it happened; its line says what it was decided with. */
			r = engine_decide(S.engine, it->decide, now, &res);
			if (r < 0)
				fatal(r, "Cannot decide");
			S.n_decisions++;
			p->n_decided++;
			permit_keep(p, id, it->decide, permit);
			log_decision(p, it->decide, permit, cause, (const char *const *)it->rules,
				     it->n_rules, msg, res.resource, res.time_ns);
			decided[id - m->request_id] = it->decide;
			id++;
			continue;
		}
		/* With a history, a probe first: a forged item must not leave its event. */
		if (S.local_probe) {
			r = engine_probe(S.engine, it->decide, now, &res);
			if (r < 0)
				fatal(r, "Cannot decide");
			if (!ship_matches(it, &res, why, sizeof(why))) {
				engine_defer_sync(S.engine, false);
				(void)peer_refuse(p, "%s", why);
				return;
			}
		}
		r = engine_decide(S.engine, it->decide, now, &res);
		if (r < 0)
			fatal(r, "Cannot decide");
		if (!ship_matches(it, &res, why, sizeof(why))) {
			/* Only a history that stopped taking events denies now (cause error). */
			engine_defer_sync(S.engine, false);
			(void)peer_refuse(p, "%s", why);
			return;
		}
		S.n_decisions++;
		p->n_decided++;
		if (here[id - m->request_id] == SHIP_PERMIT_OWED &&
		    permit_kept(p, it->decide, res.permit))
			here[id - m->request_id] = SHIP_PERMIT_HERE; /* (its record, below, takes it) */
		else
			permit_keep(p, id, it->decide, res.permit);
		log_decision(p, it->decide, res.permit, res.cause, res.rules, res.n_rules,
			     res.message, res.resource, res.time_ns);
		decided[id - m->request_id] = it->decide;
		id++;
		(void)engine_maybe_compact(S.engine, now, false);
	}
	engine_defer_sync(S.engine, false);
	if (n_dec && p->kind == PEER_SUPERVISOR) {
		p->n_shipped += n_dec;
		p->n_ships++;
	}
	/* The events join the next group commit: nothing waits for them (they are read by no rule). */
	if (engine_needs_sync(S.engine))
		group_sync_schedule();
}

static void printable(char *s);

/* One control line in decisions.jsonl (behind held decisions, as any line). */
static void
log_reload(const struct declog_reload *c)
{
	if (S.decisions_fd < 0)
		return;
	if (log_held()) {
		char *line = NULL;
		size_t len = 0, cap = 0;
		int r = declog_append_reload(c, &line, &len, &cap);
		if (r < 0)
			free(line);
		log_hold(r, line, len, "Cannot format a control line");
		return;
	}
	size_t start = S.log_len;
	int r = declog_append_reload(c, &S.logbuf, &S.log_len, &S.log_cap);
	if (r == 0)
		r = log_chain(start);
	if (r < 0) {
		if (S.log_failures++ % 1000 == 0)
			log_warn_errno(r, "Cannot format a control line");
		return;
	}
	log_flush_soon();
}

/* The policy text in force hashes to SHA (32 bytes; no policy: never). */
static bool
policy_in_force_is(const uint8_t *sha)
{
	uint8_t h[LOGCHAIN_HASH_LEN];
	if (!S.local.has_policy_text)
		return false;
	logchain_sha256(S.local.policy_text.data, S.local.policy_text.len, h);
	return memcmp(h, sha, sizeof(h)) == 0;
}

/*
 * PolicyReload (boxd only, `boxctl policy reload`): the held decisions are answered
 * first (they were decided with the policy in force), then the text is loaded as the
 * next generation or refused (engine_reload); box-shell's in-process decisions follow
 * through the generation page. One control line, one telemetry record, one reply.
 */
static void
handle_reload(struct peer *p, struct box_ipc_msg *m)
{
	const Box__PolicyReload *rl = (const Box__PolicyReload *)m->msg;
	struct engine_reload_result res;
	char err[BOX_STR_MAX + 1] = "";

	if (p->kind != PEER_SUPERVISOR || p->attached) {
		(void)peer_refuse(p, "sent a PolicyReload, which only boxd sends");
		return;
	}
	if (S.n_pending > 0)
		group_commit();
	uint64_t before = engine_generation(S.engine);
	unsigned mask = S.local_mask;
	int64_t now = engine_now();
	int r = 0;
	if (rl->has_expect_sha256 && !policy_in_force_is(rl->expect_sha256.data)) {
		/* `boxctl approve --always` edited a text that is no longer in force. */
		struct engine_stats es;
		engine_stats(S.engine, &es);
		res = (struct engine_reload_result){
			.ok = false, .generation = before, .rules = es.rules,
			.temporal_rules = es.temporal_rules,
			.error = "the policy in force is no longer the text this edit was made from "
				 "(another reload came first)",
		};
	} else {
		r = engine_reload(S.engine,
				  rl->has_policy_text ? (const char *)rl->policy_text.data : NULL,
				  rl->has_policy_text ? rl->policy_text.len : 0, now, &res);
	}
	if (r < 0)
		fatal(r, "Cannot reload the policy");
	if (res.ok) {
		free(S.policy_file);
		S.policy_file = NULL;
		if (rl->policy_file && !(S.policy_file = strdup(rl->policy_file)))
			fatal(-ENOMEM, "Cannot keep the policy file's name");
		if (S.n_local_old == ENGINE_GENERATIONS_KEPT) {
			memmove(S.local_old, S.local_old + 1,
				(S.n_local_old - 1) * sizeof(S.local_old[0]));
			S.n_local_old--;
		}
		S.local_old[S.n_local_old].generation = before;
		S.local_old[S.n_local_old].mask = mask;
		S.n_local_old++;
		local_text_set(rl->has_policy_text, rl->policy_text.data, rl->policy_text.len);
		local_actions();
		log_info("Policy generation %llu in force (%s, asked by uid %u): %zu rules, %zu "
			 "temporal, %zu kept their events",
			 (unsigned long long)res.generation, rl->policy_file ? rl->policy_file : "-",
			 rl->uid, res.rules, res.temporal_rules, res.rules_kept);
	} else {
		(void)snprintf(err, sizeof(err), "%s%s%s", rl->policy_file ? rl->policy_file : "",
			       rl->policy_file ? ": " : "", res.error ? res.error : "refused");
		printable(err);
		log_warn("Policy reload refused (asked by uid %u): %s; generation %llu stays in "
			 "force", rl->uid, err, (unsigned long long)res.generation);
	}
	struct declog_reload c = {
		.time_ns = now, .box = S.box_name, .id = S.box_id, .ok = res.ok,
		.generation = res.generation, .file = rl->policy_file, .uid = rl->uid,
		.rules = res.rules, .temporal_rules = res.temporal_rules,
		.rules_kept = res.rules_kept, .error = res.ok ? NULL : err,
	};
	log_reload(&c);
	{
		char gen[32];
		(void)snprintf(gen, sizeof(gen), "%llu", (unsigned long long)res.generation);
		const char *keys[] = { "box.policy.generation", "box.policy.file", "box.error" };
		const char *values[] = { gen, rl->policy_file ? rl->policy_file : "", err };
		tel_control(res.ok ? "policy.reloaded" : "policy.reload.refused",
			    res.ok ? "a new policy generation is in force"
				   : "a policy reload was refused; the policy in force stays",
			    keys, values, res.ok ? 2 : 3);
	}
	Box__PolicyReloadReply rep = BOX__POLICY_RELOAD_REPLY__INIT;
	rep.ok = res.ok;
	rep.message = res.ok ? NULL : err;
	rep.generation = res.generation;
	rep.rules = (uint32_t)res.rules;
	rep.temporal_rules = (uint32_t)res.temporal_rules;
	rep.rules_kept = (uint32_t)res.rules_kept;
	r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_POLICY_RELOAD_REPLY, m->request_id,
			       &rep.base, NULL, 0);
	if (r < 0)
		fatal(r, "Cannot answer boxd's PolicyReload");
}

/* The chain's head as a control record (docs/box.ini.5.md): box.log.seq, box.log.head. */
static void
chain_control(const char *event, const char *message)
{
	char seq[32], hex[LOGCHAIN_HEX_LEN + 1];

	(void)snprintf(seq, sizeof(seq), "%llu", (unsigned long long)S.chain.seq);
	logchain_hex(S.chain.head, hex);
	const char *keys[] = { "box.log.seq", "box.log.head" };
	const char *values[] = { seq, hex };
	tel_control(event, message, keys, values, 2);
}

static void
handle_log_fd(struct box_ipc_msg *m)
{
	int fd = m->n_fds == 1 ? m->fds[0] : -1;
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	if (fl < 0 || !(fl & O_APPEND) || (fl & O_ACCMODE) == O_RDONLY)
		fatalx("boxd sent a decisions.jsonl fd that is not open for appending");
	log_flush();
	safe_close(S.decisions_fd);
	S.decisions_fd = TAKE_FD(m->fds[0]);
	/* The head now is the last line of the file boxd renamed: a rotation point. */
	chain_report(true);
	if (S.chain.seq > 0)
		chain_control("box.log.rotated", "decisions.jsonl was rotated");
}

/*
 * Only box-mcpd and the gateway speak MCP; anyone else sending it is refused
 * (peer_refuse). True when P may go on.
 */
static bool
mcp_peer_ok(struct peer *p, const char *what)
{
	if (p->kind == PEER_GATEWAY || p->kind == PEER_MCPD)
		return true;
	return peer_refuse(p, "sent %s (only box-mcpd and the gateway do)", what);
}

/* A reply that is not a decision must not overtake the channel's held ones. */
static void
release_held(struct peer *p)
{
	if (p->n_held > 0)
		group_commit();
}

static void
handle_tool_schema(struct peer *p, struct box_ipc_msg *m)
{
	const Box__PolicyToolSchema *ts = (const Box__PolicyToolSchema *)m->msg;
	struct engine_schema_result res;

	if (!mcp_peer_ok(p, "PolicyToolSchema"))
		return;
	release_held(p);
	int r = engine_register_tools(S.engine, ts, &res);
	if (r == -ENOENT)
		fatalx("%s sent the tool schema of namespace '%s' ([mcp.%s]), which is not one "
		       "of the box's MCP namespaces",
		       p->name, ts->ns, ts->server);
	if (r < 0)
		fatal(r, "Cannot register the tool schema of [mcp.%s]", ts->server);
	const char *first = res.n_warnings ? res.warnings[0] : "";
	const char *s_ = res.n_warnings == 1 ? "" : "s";
	if (res.ok)
		log_info("[mcp.%s] (namespace %s): %zu of %zu tools registered; the policy checks "
			 "against them (%zu warning%s)%s%s",
			 ts->server, ts->ns, res.tools, ts->n_tools, res.n_warnings, s_,
			 res.n_warnings ? ": " : "", first);
	else
		log_warn("[mcp.%s] (namespace %s): the tool schema failed the policy check: %s; "
			 "its tool calls are denied until a tools/list that checks (%zu warning%s)"
			 "%s%s",
			 ts->server, ts->ns, res.error, res.n_warnings, s_,
			 res.n_warnings ? ": " : "", first);
	{
		char tools[32];
		(void)snprintf(tools, sizeof(tools), "%zu", res.tools);
		const char *keys[] = { "box.mcp.server", "box.mcp.tools", "box.error" };
		const char *values[] = { ts->server, tools, res.error };
		tel_control(res.ok ? "mcp.schema.registered" : "mcp.schema.refused",
			    res.ok ? "an MCP server's tool schema was registered" :
				     "an MCP server's tool schema failed the policy check",
			    keys, values, res.ok || !res.error ? 2 : 3);
	}
	Box__PolicyToolSchemaReply rep = BOX__POLICY_TOOL_SCHEMA_REPLY__INIT;
	rep.ok = res.ok;
	rep.error = (char *)res.error;
	rep.warnings = (char **)res.warnings;
	rep.n_warnings = res.n_warnings;
	if (!p->ev)
		return;
	r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, m->request_id,
			       &rep.base, NULL, 0);
	if (r < 0) {
		log_err_errno(r, "Cannot answer %s", p->name);
		drop_peer(p, r);
	}
}

/*
 * Probe: each request decided in order as if observed (engine_probe), no
 * history event, no decision line, no decision counted.
 */
static void
handle_probe(struct peer *p, struct box_ipc_msg *m)
{
	const Box__PolicyProbeRequest *b = (const Box__PolicyProbeRequest *)m->msg;
	size_t n = b->n_requests;
	static Box__DecideReply items[BOX_POLICY_BATCH_MAX];
	static Box__DecideReply *ptrs[BOX_POLICY_BATCH_MAX];
	static char *msgs[BOX_POLICY_BATCH_MAX];
	static char **rules[BOX_POLICY_BATCH_MAX];
	int r = 0;

	if (!mcp_peer_ok(p, "PolicyProbeRequest"))
		return;
	if (n == 0 || n > BOX_POLICY_BATCH_MAX) /* the validator refused it already */
		fatalx("%s sent a PolicyProbeRequest of %zu requests", p->name, n);
	for (size_t i = 0; i < n; i++)
		if (!decide_ok(p, "a PolicyProbeRequest", b->requests[i]->action))
			return;
	release_held(p);
	for (size_t i = 0; i < n; i++) {
		struct engine_result res;
		r = engine_probe(S.engine, b->requests[i], engine_now(), &res);
		if (r < 0)
			fatal(r, "Cannot probe");
		box__decide_reply__init(&items[i]);
		items[i].verdict = res.permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT
					      : BOX__DECISION_VERDICT__VERDICT_DENY;
		items[i].cause = (Box__DecisionCause)res.cause;
		/* The engine's result lives until its next call: copy it. */
		msgs[i] = strdup(res.message);
		rules[i] = calloc(res.n_rules ? res.n_rules : 1, sizeof(char *));
		if (!msgs[i] || !rules[i])
			fatal(-ENOMEM, "Cannot probe");
		for (size_t k = 0; k < res.n_rules; k++)
			if (!(rules[i][k] = strdup(res.rules[k])))
				fatal(-ENOMEM, "Cannot probe");
		items[i].message = msgs[i];
		items[i].rules = rules[i];
		items[i].n_rules = res.n_rules;
		ptrs[i] = &items[i];
	}
	Box__PolicyProbeReply rep = BOX__POLICY_PROBE_REPLY__INIT;
	rep.replies = ptrs;
	rep.n_replies = n;
	if (p->ev) {
		r = box_ipc_event_send(p->ev, BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, m->request_id,
				       &rep.base, NULL, 0);
		if (r < 0) {
			log_err_errno(r, "Cannot answer %s", p->name);
			drop_peer(p, r);
		}
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < items[i].n_rules; k++)
			free(rules[i][k]);
		free(rules[i]);
		free(msgs[i]);
	}
}

static void on_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata);
static void on_close(struct box_ipc_event *e, int error, void *userdata);

/* Closed attached channels whose held replies went out (or never were): freed. */
static void
attached_reap(void)
{
	struct peer **pp = &S.dead;
	while (*pp) {
		struct peer *p = *pp;
		if (p->n_held == 0) {
			*pp = p->next;
			free(p);
		} else
			pp = &p->next;
	}
}

/*
 * PolicyChannelAttach: only box-shell (the fd-6 channel or one attached from
 * it) may add a channel; the fd must be a SOCK_SEQPACKET socket.
 */
static void
handle_attach(struct peer *p, struct box_ipc_msg *m)
{
	int type = 0;
	socklen_t len = sizeof(type);

	/* boxd attaches a supervised program's channel: its own kind, source "supervisor". */
	bool supervisor = p == &S.peers[0];
	if (p->kind != PEER_SHELL && !supervisor) {
		(void)peer_refuse(p, "sent PolicyChannelAttach (only box-shell and boxd attach "
				     "channels)");
		return;
	}
	/*
	 * A person's channel: asked for by box-shell's main process (fd 6), or
	 * inherited from a person's channel. An agent's process never makes one.
	 */
	bool want_person = ((const Box__PolicyChannelAttach *)m->msg)->person;
	if (want_person && supervisor) {
		(void)peer_refuse(p, "asked for a person's channel for a supervised program");
		return;
	}
	if (want_person && p->attached && !p->person) {
		(void)peer_refuse(p, "asked for a person's channel from an agent's channel");
		return;
	}
	if (m->n_fds != 1 || getsockopt(m->fds[0], SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET) {
		log_err("box-shell attached an fd that is not a SOCK_SEQPACKET socket; refused");
		return; /* closed by box_ipc_msg_done: that process gets no decisions */
	}
	if (S.n_attached >= BOX_POLICY_ATTACHED_MAX) {
		static unsigned said;
		if (said++ % 1000 == 0)
			log_warn("box-shell has %u attached channels already; one more refused",
				 BOX_POLICY_ATTACHED_MAX);
		return;
	}
	struct peer *n = calloc(1, sizeof(*n));
	if (!n)
		fatal(-ENOMEM, "Cannot attach a box-shell channel");
	if (supervisor)
		*n = (struct peer){ .name = "supervisor (attached)", .source = "supervisor",
				    .fd = m->fds[0], .kind = PEER_SUPERVISOR, .attached = true };
	else
		*n = (struct peer){ .name = "shell (attached)", .source = "box-shell",
				    .fd = m->fds[0], .kind = PEER_SHELL, .attached = true,
				    .person = p->person || want_person };
	n->permits = policy_permits_new();
	n->ev = n->permits ? box_ipc_event_new(S.base, n->fd, &box_proto_policy,
						BOX_POLICY_ROLE_PEER, on_msg, on_close, n)
			   : NULL;
	if (!n->ev) {
		log_err_errno(-errno, "Cannot watch an attached box-shell channel; refused");
		policy_permits_free(n->permits);
		free(n); /* the fd is still the message's: closed with it */
		return;
	}
	m->fds[0] = -1; /* the event owns it from here */
	if (box_ipc_chan_set_state(box_ipc_event_chan(n->ev), BOX_POLICY_READY) < 0) {
		log_err("Cannot set up an attached box-shell channel; refused");
		box_ipc_event_free(n->ev);
		policy_permits_free(n->permits);
		free(n);
		return;
	}
	n->next = S.attached;
	S.attached = n;
	S.n_attached++;
}

static void
on_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct peer *p = userdata;

	switch (m->type) {
	case BOX__MSG_TYPE__MSG_POLICY_CHANNEL_ATTACH: handle_attach(p, m); break;
	case BOX__MSG_TYPE__MSG_DECIDE_REQUEST: handle_decide(p, m); break;
	case BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST: handle_decide_batch(p, m); break;
	case BOX__MSG_TYPE__MSG_RECORD_REQUEST: handle_record(p, m); break;
	case BOX__MSG_TYPE__MSG_RECORD_BATCH: handle_record_batch(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA: handle_tool_schema(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST: handle_probe(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST: handle_local_request(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_SHIP: handle_ship(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_RELOAD: handle_reload(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_ASK_LIST: handle_ask_list(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER: handle_ask_answer(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_KERNEL_REFUSAL: handle_kernel_refusal(p, m); break;
	case BOX__MSG_TYPE__MSG_POLICY_LOG_FD:
		if (p != &S.peers[0]) {
			(void)peer_refuse(p, "sent PolicyLogFd (only boxd does)");
			break;
		}
		handle_log_fd(m);
		break;
	default:
		/* The policy protocol's table already refused every other type. */
		fatalx("%s sent an unexpected %s", p->name,
		       box_ipc_type_name(&box_proto_policy, m->type));
	}
}

/* A peer whose channel is still open: box-gateway, box-mcpd, box-shell, an attached one. */
static bool
peers_open(void)
{
	for (int i = 1; i < POLICYD_N_PEERS; i++)
		if (S.peers[i].ev)
			return true;
	return S.attached != NULL;
}

static void
drop_peer(struct peer *p, int error)
{
	ask_peer_gone(p);
	p->ev = box_ipc_event_free(p->ev);
	policy_permits_free(p->permits); /* (what it decided can no longer be recorded) */
	p->permits = NULL;
	if (p->attached) {
		/* Off the live list; freed once no reply of its is held. */
		for (struct peer **pp = &S.attached; *pp; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				S.n_attached--;
				p->next = S.dead;
				S.dead = p;
				break;
			}
		if (S.ending && !peers_open())
			event_base_loopexit(S.base, NULL);
		return; /* freed by attached_reap, once no held reply points to it */
	}
	if (p == &S.peers[0]) {
		/*
		 * boxd went away: the box is over once every peer has said its last
		 * (boxd/box.c tells them to end as it closes us; a peer's channel closes
		 * after what it sent, and data a dead peer left is still read). With an
		 * otlp target our last records go out through box-gateway after that.
		 */
		if (peers_open()) {
			struct timeval tv = { POLICYD_PEERS_END_WAIT_MS / 1000,
					      (POLICYD_PEERS_END_WAIT_MS % 1000) * 1000 };
			S.ending = true;
			event_base_loopexit(S.base, &tv);
			return;
		}
		event_base_loopexit(S.base, NULL);
		return;
	}
	if (S.ending && !peers_open())
		event_base_loopexit(S.base, NULL);
	(void)error;
}

static void
on_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct peer *p = userdata;

	if (p->attached && p->kind == PEER_SUPERVISOR)
		log_info("A supervised program's channel closed: %llu decisions, %llu of them in "
			 "%llu history-free batches (%llu stale), %llu made in process and shipped in "
			 "%llu PolicyShips",
			 p->n_decided, p->n_batched, p->n_batches, p->n_stale, p->n_shipped,
			 p->n_ships);
	if (p->attached) {
		/* The end of a box-shell process; garbage costs that process only. */
		if (error != -ECONNRESET && error != -EPROTO)
			log_warn_errno(error, "Protocol error from an attached box-shell channel; "
				       "dropped it");
		drop_peer(p, error);
		attached_reap();
		return;
	}
	if (error != -ECONNRESET) {
		/* Internal peers that send garbage are fatal (fail closed). */
		log_err_errno(error, "Protocol error from %s", p->name);
		S.exit_code = 1;
		p->ev = box_ipc_event_free(p->ev);
		event_base_loopexit(S.base, NULL);
		return;
	}
	if (p == &S.peers[0])
		log_info("boxd closed its channel; exiting");
	else
		log_info("%s closed its channel", p->name);
	drop_peer(p, error);
}

/* ---- start-up --------------------------------------------------------------- */

static void
send_ready(int fd, uint64_t request_id, bool ok, const char *message,
	   const struct engine_stats *st)
{
	Box__PolicyReady rep = BOX__POLICY_READY__INIT;

	rep.ok = ok;
	rep.message = (char *)message;
	if (st) {
		rep.rules = (uint32_t)st->rules;
		rep.temporal_rules = (uint32_t)st->temporal_rules;
		rep.history_events = st->history_events;
		rep.rules_kept = (uint32_t)st->rules_kept;
	}
	int r = box_ipc_send(fd, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_READY, request_id,
			     &rep.base, NULL, 0);
	if (r < 0)
		log_err_errno(r, "Cannot send PolicyReady");
}

/* Sanitize a refusal for PolicyReady.message: printable, non-empty. */
static void
printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

static void
usage(void)
{
	fprintf(stderr, "usage: box-policyd [-u UID] [-g GID] [-q] [-w]  (started by boxd, fds 3-6)\n");
	exit(2);
}

/*
 * Step 1: the command line: -u UID, -g GID (default: the ids we run as), -q,
 * -w (a service boxd's spare, boxd/spares.c: PolicyInit may come at any time).
 */
static void
args_parse(int argc, char **argv, struct privdrop *pd)
{
	int opt;

	while ((opt = getopt(argc, argv, "u:g:nqw")) >= 0) {
		uint64_t v;
		switch (opt) {
		case 'u':
			if (parse_u64(optarg, (uid_t)-2, &v) < 0)
				usage();
			pd->uid = (uid_t)v;
			break;
		case 'g':
			if (parse_u64(optarg, (gid_t)-2, &v) < 0)
				usage();
			pd->gid = (gid_t)v;
			break;
		case 'w':
			S.spare = true;
			break;
		case 'n':
		case 'q':
			/* Embedded boxes: the user's terminal (boxd/daemon.c daemon_stderr). */
			log_set_max_level(opt == 'q' ? LOG_LEVEL_WARNING : LOG_LEVEL_NOTICE);
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
}

/* Step 2: fd 3 must be boxd's channel; fds 4-6 are peers or closed. */
static void
channels_take(void)
{
	static const struct daemon_fd_want want[POLICYD_N_PEERS] = {
		{ DAEMON_FD_BOXD, DAEMON_FD_CHANNEL, "boxd's SOCK_SEQPACKET channel" },
		{ POLICYD_FD_GATEWAY, DAEMON_FD_CHANNEL_OPTIONAL, "box-gateway's SOCK_SEQPACKET channel" },
		{ POLICYD_FD_MCPD, DAEMON_FD_CHANNEL_OPTIONAL, "box-mcpd's SOCK_SEQPACKET channel" },
		{ POLICYD_FD_SHELL, DAEMON_FD_CHANNEL_OPTIONAL, "box-shell's SOCK_SEQPACKET channel" },
	};
	bool present[POLICYD_N_PEERS];
	size_t bad = 0;
	int r = daemon_fds_take(want, POLICYD_N_PEERS, present, &bad);
	if (r < 0)
		fatal(r, "fd %d is not %s (started by boxd)", want[bad].fd, want[bad].what);
	for (int i = 1; i < POLICYD_N_PEERS; i++)
		if (!present[i])
			S.peers[i].fd = -1;
	/*
	 * Up to BOX_POLICY_ATTACHED_MAX attached channels, one fd each: the soft
	 * limit goes up to the hard one (boxd sets the hard one).
	 */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* A file size limit makes a history write fail (and the decision deny), not kill us. */
	signal(SIGXFSZ, SIG_IGN);
	test_clock_init();
	test_sync_delay_init();
}

/* Step 3: ids, then capabilities and no_new_privs (common/privdrop.c). */
static void
privileges_drop(const struct privdrop *pd)
{
	const char *failed = NULL;
	int r = daemon_lock_down(pd->uid, pd->gid, &failed);
	if (r < 0)
		fatal(r, "Cannot drop privileges to %u:%u (%s)", (unsigned)pd->uid,
		      (unsigned)pd->gid, failed ? failed : "?");
}

/*
 * Step 4: PolicyInit, the first and only message before the loop, with its two
 * fds checked. Returns 0 if boxd gave up before we started (m is then empty).
 */
static int
policy_init_receive(struct box_ipc_msg *m, int *ret_dirfd, int *ret_tel_fd)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan = NULL;

	/* A fresh channel (state `init`) accepts PolicyInit from boxd and nothing else. */
	chan = box_ipc_chan_new(DAEMON_FD_BOXD, &box_proto_policy, BOX_POLICY_ROLE_BOXD);
	if (!chan)
		fatal(-ENOMEM, "Cannot allocate the boxd channel");
	int r = box_ipc_recv_wait(chan, m, S.spare ? -1 : POLICYD_INIT_TIMEOUT_MS);
	if (r == -ECONNRESET)
		return 0; /* boxd gave up before we started */
	if (r < 0)
		fatal(r, "No valid PolicyInit from boxd");
	Box__PolicyInit *init = (Box__PolicyInit *)m->msg;
	size_t want_fds = 2 + init->n_telemetry_include + (init->n_otlp_include ? 1 : 0);
	if (m->n_fds != want_fds)
		fatalx("PolicyInit carries %u fds, expected %zu", m->n_fds, want_fds);
	struct stat st;
	if (fstat(m->fds[0], &st) < 0 || !S_ISDIR(st.st_mode))
		fatalx("PolicyInit: the first fd is not the STATE/policy/ directory");
	int fl = fcntl(m->fds[1], F_GETFL);
	if (fl < 0 || !(fl & O_APPEND) || (fl & O_ACCMODE) == O_RDONLY)
		fatalx("PolicyInit: the second fd is not decisions.jsonl open for appending");
	*ret_dirfd = TAKE_FD(m->fds[0]);
	S.decisions_fd = TAKE_FD(m->fds[1]);
	for (size_t i = 0; i < init->n_telemetry_include && i < BOX_TELEMETRY_FILES_MAX; i++) {
		int tfd = m->fds[2 + i];
		fl = fcntl(tfd, F_GETFL);
		if (fl < 0 || !(fl & O_APPEND) || (fl & O_ACCMODE) == O_RDONLY)
			fatalx("PolicyInit: fd %zu is not a telemetry file open for appending",
			       3 + i);
		S.tel[i] = (struct tel_target){ .fd = TAKE_FD(m->fds[2 + i]),
						.otlp = -1,
						.include = init->telemetry_include[i] };
		S.n_tel++;
	}
	/* The otlp targets: their records go to box-gateway on the telemetry channel. */
	for (size_t i = 0; i < init->n_otlp_include && i < BOX_TELEMETRY_TARGETS_MAX; i++)
		S.tel[S.n_tel++] = (struct tel_target){ .fd = -1,
							.otlp = (int)i,
							.include = init->otlp_include[i],
							.batch.pb = true };
	if (init->n_otlp_include) {
		int cfd = m->fds[2 + init->n_telemetry_include];
		int type = 0;
		socklen_t tl = sizeof(type);
		if (getsockopt(cfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
			fatalx("PolicyInit: the last fd is not the telemetry channel");
		*ret_tel_fd = TAKE_FD(m->fds[2 + init->n_telemetry_include]);
	}
	/* The chain goes on from the head boxd kept of the last run (else genesis). */
	if (init->log_head) {
		S.chain.seq = init->log_head->seq;
		memcpy(S.chain.head, init->log_head->head.data, sizeof(S.chain.head));
	}
	S.chain_reported = S.chain.seq;
	S.report_fd = fcntl(DAEMON_FD_BOXD, F_DUPFD_CLOEXEC, 3);
	if (S.report_fd < 0)
		fatal(-errno, "Cannot keep a copy of boxd's channel");
	(void)snprintf(S.box_name, sizeof(S.box_name), "%s", init->box_name);
	S.person_session = init->has_person_session && init->person_session;
	S.ask_timeout_ms = init->has_ask_timeout_ms && init->ask_timeout_ms > 0
				   ? init->ask_timeout_ms
				   : POLICYD_ASK_TIMEOUT_MS;
	S.ask_default = init->has_ask_default && init->ask_default;
	if (init->policy_file && !(S.policy_file = strdup(init->policy_file)))
		fatal(-ENOMEM, "Cannot keep the policy file's name");
	(void)snprintf(S.box_id, sizeof(S.box_id), "%s", init->box_id);
	return 1;
}

/*
 * The generation page box-shell reads before each decision it makes in process: a
 * memfd of one page, mapped here read-write, then sealed (no write, no new writable
 * mapping, no resize, no more seals) before its fd goes to anyone, so box-shell's
 * mapping can only read it. A kernel without F_SEAL_FUTURE_WRITE: no page, and
 * no peer decides anything in process (each asks every time).
 */
static void
gen_page_make(void)
{
	if (getenv("BOX_TEST_POLICYD_NO_GEN_PAGE")) {
		log_warn("No generation page (BOX_TEST_POLICYD_NO_GEN_PAGE): nothing is decided "
			 "in process");
		return;
	}
	_cleanup_close_ int fd = memfd_create("box-policy-generation",
					      MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		log_warn_errno(-errno, "No generation page (nothing is decided in process)");
		return;
	}
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		log_warn_errno(-errno, "No generation page (nothing is decided in process)");
		return;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
					  F_SEAL_SEAL) < 0) {
		log_warn_errno(-errno, "No generation page (nothing is decided in process)");
		munmap(p, 4096);
		return;
	}
	S.gen_page = p;
	__atomic_store_n(S.gen_page, 0, __ATOMIC_RELEASE);
	S.gen_fd = TAKE_FD(fd);
}

/* Step 5: what needs a syscall the allow-list refuses, done before it. */
static void
loop_prepare(void)
{
	/*
	 * An otlp target's batches (up to TEL_OTLP_BATCH_BYTES, and their IPC
	 * packets) are made and freed every flush: without this glibc gives the top of
	 * the heap back and faults it in again each time (brk), which cost more than
	 * the records themselves (bench/telemetry).
	 */
	(void)mallopt(M_TRIM_THRESHOLD, 16 << 20);
	(void)mallopt(M_MMAP_THRESHOLD, 8 << 20);
	S.base = event_base_new();
	/*
	 * Before any event exists: new events get the middle priority (the
	 * channels, timers, signals); the group fsync gets the lowest.
	 */
	if (!S.base || event_base_priority_init(S.base, POLICYD_PRIORITIES) < 0)
		fatalx("Cannot create the event loop");
	declog_init();
	gen_page_make();
	tzset(); /* the log's timestamps read /etc/localtime once, now */
	/* Before the filter: adding a signal event calls rt_sigaction. */
	static const int stop_sigs[2] = { SIGTERM, SIGINT };
	for (int i = 0; i < 2; i++) {
		S.stop_signals[i] = evsignal_new(S.base, stop_sigs[i], on_stop_signal, NULL);
		if (!S.stop_signals[i] || evsignal_add(S.stop_signals[i], NULL) < 0)
			fatalx("Cannot watch signal %d", stop_sigs[i]);
	}
}

/* Step 6: from here on nothing but the allow-list; the history is read under it. */
static void
seccomp_enter(int dirfd)
{
	int r = policyd_seccomp(dirfd);
	if (r < 0)
		fatal(r, "Cannot install the seccomp filter");
}

static int
history_sync_mode(const Box__PolicyInit *init)
{
	if (!init->has_history_sync)
		return -1;
	switch (init->history_sync) {
	case BOX__HISTORY_SYNC__HISTORY_SYNC_ALWAYS: return ENGINE_SYNC_ALWAYS;
	case BOX__HISTORY_SYNC__HISTORY_SYNC_BATCH: return ENGINE_SYNC_BATCH;
	case BOX__HISTORY_SYNC__HISTORY_SYNC_OFF: return ENGINE_SYNC_OFF;
	case _BOX__HISTORY_SYNC_IS_INT_SIZE:
	default: return -1;
	}
}

/*
 * Step 7: load the policy, recover the history, answer PolicyReady. A refusal
 * is sent to boxd with its reason; returns false then.
 */
static bool
engine_start(const struct box_ipc_msg *m, int dirfd)
{
	const Box__PolicyInit *init = (const Box__PolicyInit *)m->msg;
	char why[1024] = "";

	struct engine_opts eo = {
		.text = init->has_policy_text ? (const char *)init->policy_text.data : NULL,
		.len = init->has_policy_text ? init->policy_text.len : 0,
		.home = init->home,
		.mcp_namespaces = init->mcp_namespaces,
		.n_mcp_namespaces = init->n_mcp_namespaces,
		.sync = history_sync_mode(init),
		.dirfd = dirfd,
		.now_ns = engine_now(),
	};
	int r = engine_new(&eo, &S.engine, why, sizeof(why));
	if (r < 0) {
		if (!why[0])
			(void)snprintf(why, sizeof(why), "%s", strerror(-r));
		printable(why);
		log_err("Refusing to start box '%s': %s", S.box_name, why);
		send_ready(DAEMON_FD_BOXD, m->request_id, false, why, NULL);
		return false;
	}
	struct engine_stats es;
	engine_stats(S.engine, &es);
	if (es.dropped_bytes)
		log_warn("The history ended in a torn record (%llu bytes, a crash mid-append); "
			 "dropped it",
			 (unsigned long long)es.dropped_bytes);
	if (es.skipped_events)
		log_warn("%llu history events no longer fit the schema; skipped",
			 (unsigned long long)es.skipped_events);
	log_info("box '%s' (%s): %zu rules, %zu temporal, %llu history events, %zu rules kept",
		 S.box_name, S.box_id, es.rules, es.temporal_rules,
		 (unsigned long long)es.history_events, es.rules_kept);
	local_prepare(init);
	send_ready(DAEMON_FD_BOXD, m->request_id, true, NULL, &es);
	char rules[32], temporal[32];
	(void)snprintf(rules, sizeof(rules), "%zu", es.rules);
	(void)snprintf(temporal, sizeof(temporal), "%zu", es.temporal_rules);
	const char *keys[] = { "box.rules", "box.rules.temporal", "box.policy.file" };
	const char *values[] = { rules, temporal, init->policy_file };
	tel_control("policy.loaded", "the policy was loaded", keys, values,
		    init->policy_file ? 3 : 2);
	return true;
}

/* Step 8: the group commit, the log timer and one watched channel per open peer. */
static void
peers_watch(void)
{
	S.group_sync = event_new(S.base, -1, 0, on_group_sync, NULL);
	S.log_flush = evtimer_new(S.base, on_log_flush, NULL);
	if (!S.group_sync || !S.log_flush ||
	    event_priority_set(S.group_sync, POLICYD_PRIO_GROUP_SYNC) < 0)
		fatalx("Cannot create the timers");
	for (int i = 0; i < POLICYD_N_PEERS; i++) {
		struct peer *p = &S.peers[i];
		if (p->fd < 0)
			continue;
		/*
		 * PolicyReady went out: every channel is `ready`. boxd may send
		 * Decide, Record and PolicyLogFd; the other peers Decide and
		 * Record (the table's senders); a second PolicyInit is fatal.
		 */
		p->permits = policy_permits_new();
		if (!p->permits)
			fatal(-ENOMEM, "Cannot watch the %s channel", p->name);
		p->ev = box_ipc_event_new(S.base, p->fd, &box_proto_policy,
					  i == 0 ? BOX_POLICY_ROLE_BOXD : BOX_POLICY_ROLE_PEER,
					  on_msg, on_close, p);
		if (!p->ev)
			fatal(-errno, "Cannot watch the %s channel", p->name);
		if (box_ipc_chan_set_state(box_ipc_event_chan(p->ev), BOX_POLICY_READY) < 0)
			fatalx("Cannot set up the %s channel", p->name);
	}
}

/*
 * The telemetry channel to box-gateway (an otlp target): written, never read
 * (the table lets the gateway send nothing). Its end stops the export only:
 * the records of the otlp targets are dropped from then on, counted.
 */
static void
on_tel_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)m;
	(void)userdata;
}

static void
on_tel_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	/* the event stays until shutdown_flush: sends on it fail with -EPIPE, counted */
	if (error != -ECONNRESET)
		log_warn_errno(error, "The telemetry channel to box-gateway failed");
}

/*
 * At the end, with no peer left: what the telemetry channel still queues
 * (box.stopped among it) is written, for at most TEL_END_WAIT_MS — box-gateway
 * reads it while it exports (boxd/box.c ends us beside it).
 */
static void
tel_chan_drain(void)
{
	for (int i = 0; S.tel_chan && box_ipc_event_queued(S.tel_chan) && i < TEL_END_WAIT_MS / 10;
	     i++) {
		struct pollfd pfd = { box_ipc_event_fd(S.tel_chan), POLLOUT, 0 };
		(void)poll(&pfd, 1, 10);
		(void)event_base_loop(S.base, EVLOOP_NONBLOCK);
	}
}

static void
tel_watch(int fd)
{
	if (fd < 0)
		return;
	S.tel_chan = box_ipc_event_new(S.base, fd, &box_proto_telemetry, BOX_TELEMETRY_ROLE_GATEWAY,
				       on_tel_msg, on_tel_close, NULL);
	if (!S.tel_chan)
		fatal(-errno, "Cannot watch the telemetry channel");
}

/*
 * The seal line (docs/boxctl.1.md "The chain"): how many lines this run wrote,
 * chained like the others; then its head goes to boxd (sealed) on the copy of
 * fd 3 — boxd half-closed the channel to end us and reads it before our exit —
 * and out as a control record. A box without a log, or a run that wrote no
 * line, writes none.
 */
static void
chain_seal(void)
{
	struct timespec ts;

	/* a run that wrote no line leaves the log (and the head boxd keeps) as it was */
	if (S.decisions_fd < 0 || S.run_lines == 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	size_t start = S.log_len;
	int r = declog_append_seal((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, S.box_name,
				   S.box_id, S.run_lines, &S.logbuf, &S.log_len, &S.log_cap);
	if (r == 0)
		r = log_chain(start);
	if (r < 0) {
		log_warn_errno(r, "Cannot write the decision log's seal line");
		return;
	}
	S.chain_reported = S.chain.seq; /* the flush reports nothing: the sealed head follows */
	log_flush();
	Box__PolicyLogHead h = BOX__POLICY_LOG_HEAD__INIT;
	h.seq = S.chain.seq;
	h.head.data = S.chain.head;
	h.head.len = sizeof(S.chain.head);
	h.has_sealed = h.sealed = true;
	r = box_ipc_send(S.report_fd, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_LOG_HEAD, 0,
			 &h.base, NULL, 0);
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		log_warn_errno(r, "Cannot tell boxd the sealed head of the decision log");
	S.report_fd = safe_close(S.report_fd);
	chain_control("box.log.sealed", "the decision log was sealed");
}

/* Step 10: whatever waits for the group fsync gets it (or a deny); then free all. */
static void
shutdown_flush(int dirfd)
{
	/* Decisions still held for a person: the box ends, no one is left to answer them. */
	while (S.asks) {
		struct ask *a = S.asks;
		ask_unlink(a);
		ask_free(a);
	}
	for (size_t i = 0; i < S.n_approvals; i++)
		free(S.approvals[i].key);
	free(S.approvals);
	S.approvals = NULL;
	S.n_approvals = 0;
	if (S.n_pending || engine_needs_sync(S.engine))
		group_commit();
	log_flush();
	chain_seal();
	char count[32];
	(void)snprintf(count, sizeof(count), "%llu", (unsigned long long)S.n_decisions);
	const char *keys[] = { "box.decisions" };
	const char *values[] = { count };
	tel_control("box.stopped", "the box ended", keys, values, 1);
	tel_flush();
	for (size_t i = 0; i < S.n_tel; i++) {
		otlplog_batch_free(&S.tel[i].batch);
		S.tel[i].fd = safe_close(S.tel[i].fd);
	}
	if (S.tel_dropped)
		log_warn("%llu telemetry records box-gateway's channel could not take",
			 (unsigned long long)S.tel_dropped);

	log_info("%llu decisions, %llu history fsyncs", (unsigned long long)S.n_decisions,
		 (unsigned long long)engine_history_syncs(S.engine));
	for (int i = 0; i < POLICYD_N_PEERS; i++) {
		S.peers[i].ev = box_ipc_event_free(S.peers[i].ev);
		policy_permits_free(S.peers[i].permits);
		S.peers[i].permits = NULL;
	}
	while (S.attached)
		drop_peer(S.attached, 0);
	tel_chan_drain();
	S.tel_chan = box_ipc_event_free(S.tel_chan);
	for (struct peer *p = S.dead, *n; p; p = n) {
		n = p->next;
		free(p);
	}
	S.dead = NULL;
	event_free(S.group_sync);
	event_free(S.log_flush);
	for (int i = 0; i < 2; i++)
		event_free(S.stop_signals[i]);
	free(S.logbuf);
	engine_free(S.engine);
	free(S.pending);
	safe_close(S.decisions_fd);
	safe_close(dirfd);
	event_base_free(S.base);
}

/*
 * The BOX_TEST_POLICYD_EXIT_DELAY_MS hook: after the flush, policyd is done
 * with every file; only its exit (which boxd waits for) comes later.
 */
static void
test_exit_delay(void)
{
	uint64_t ms;

	if (box_test_ms("BOX_TEST_POLICYD_EXIT_DELAY_MS", 60000, &ms) < 0 || ms == 0)
		return;
	log_warn("flushed; exiting in %llu ms (BOX_TEST_POLICYD_EXIT_DELAY_MS)",
		 (unsigned long long)ms);
	box_sleep_ms(ms);
}

int
main(int argc, char **argv)
{
	struct privdrop pd = { .uid = getuid(), .gid = getgid() };
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int dirfd = -1, tel_fd = -1;

	log_init("box-policyd", 1);
	args_parse(argc, argv, &pd);
	channels_take();
	privileges_drop(&pd);
	if (policy_init_receive(&m, &dirfd, &tel_fd) == 0)
		return 0;
	if (S.spare)
		daemon_spare_taken(argc, argv);
	loop_prepare();
	seccomp_enter(dirfd);
	if (!engine_start(&m, dirfd))
		return 1;
	box_ipc_msg_done(&m);
	peers_watch();
	tel_watch(tel_fd);
	if (event_base_dispatch(S.base) < 0) /* step 9 */
		fatalx("The event loop failed");
	shutdown_flush(dirfd);
	test_exit_delay();
	return S.exit_code;
}
