/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h — plays boxd for box-policyd: makes the socketpairs, starts the
 * daemon at fixed fds (test/playboxd/playboxd.h, as every daemon's test does),
 * sends PolicyInit with the state fds, and talks Decide/Record over the peers'
 * channels. Requests are written as the JSON lines of `boxctl policy eval`
 * (docs/box-policy.5.md) and converted to
 * DecideRequest / RecordRequest. Like every peer it keeps each channel's
 * permits (proto/policy_permits.h), so that a record line names the oldest
 * permit of its action and input (RecordRequest.decide_id).
 * Used by test/policyd/test_policyd.c and bench/policyd/policyd_bench.c.
 * Trusts: nothing; it is test code.
 */
#ifndef BOX_TEST_POLICYD_HARNESS_H
#define BOX_TEST_POLICYD_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc.h"
#include "policy.pb-c.h"
#include "proto/proto_policy.h"

enum { PD_BOXD = 0, PD_GATEWAY = 1, PD_MCPD = 2, PD_SHELL = 3, PD_N = 4 };

struct pd_asked;

struct pd {
	pid_t pid;
	int fd[PD_N];
	struct box_ipc_chan *chan[PD_N];
	uint64_t next_id;
	struct policy_permits *permits[PD_N]; /* each channel's permits without an outcome */
	struct pd_asked *asked;               /* Decides sent, not answered yet */
	size_t n_asked, cap_asked;
	uint64_t last_decide_id;              /* of the last Decide (a batch: its first) sent */
	int tel_fd;                           /* box-gateway's end of the telemetry channel, or -1 */
	/* PolicyLogHead read on boxd's channel: the last seq, how many, rotated, sealed */
	uint64_t log_head_seq;
	unsigned log_heads, log_heads_rotated, log_heads_sealed;
};

struct pd_opts {
	const char *binary;       /* box-policyd */
	const char *state_dir;    /* holds policy/ and decisions.jsonl (created) */
	const char *policy;       /* text; NULL: no policy */
	const char *history_sync; /* NULL, "always", "batch", "off" */
	const char *test_clock;   /* BOX_TEST_CLOCK, or NULL */
	const char *sync_delay_ms; /* BOX_TEST_POLICYD_SYNC_DELAY_MS, or NULL */
	const char *stderr_path;  /* policyd's stderr goes here (NULL: inherited) */
	bool no_peers;            /* only the boxd channel */
	const char *const *mcp_namespaces; /* PolicyInit's pending namespaces */
	size_t n_mcp_namespaces;
	const char *box_name, *box_id, *home;
	/* One [telemetry.NAME] kind = otlp target taking deny permit control: PolicyInit
	 * carries the telemetry channel, whose other end is pd->tel_fd (the caller reads it). */
	bool otlp_target;
	uint32_t ask_timeout_ms;  /* PolicyInit.ask_timeout_ms (0: absent) */
	bool ask_default;         /* PolicyInit.ask_default ([box] ask = default) */
	const char *policy_file;  /* PolicyInit.policy_file (NULL: absent) */
	/* PolicyInit.log_head: the chain goes on after seq log_head_seq (0: genesis) */
	uint64_t log_head_seq;
	uint8_t log_head[32];
};

/* Where box-policyd is: $BOX_BIN/box-policyd, else next to this program's ../../bin. */
const char *pd_binary(void);

/*
 * Start policyd and send PolicyInit; *ready (may be NULL) receives the
 * PolicyReady (free with box_msg_free). Returns 0, or negative errno when it
 * could not be started or did not answer.
 */
int pd_start(const struct pd_opts *o, struct pd *pd, Box__PolicyReady **ready);
/* Close the boxd channel (and the others) and wait: the exit status (0..255, 128+sig). */
int pd_stop(struct pd *pd);
/*
 * End it as boxd does: half-close the boxd channel (shutdown SHUT_WR) and close the
 * peers' (box-policyd ends once every peer's channel has closed), read what it
 * still sends (the sealed PolicyLogHead: pd->log_head*), then close and wait.
 */
int pd_stop_sealed(struct pd *pd);
/* Kill it (SIGKILL) and reap. */
void pd_kill(struct pd *pd);
/* Its exit status (0..255, 128+sig) if it exits within MS (reaped), else -1. */
int pd_exited_within(struct pd *pd, int ms);

/* Convert a JSON object {"a":1,...} into a field list (free with pd_fields_free). */
int pd_fields_from_json(const char *json_obj, Box__PolicyField ***ret, size_t *n);
void pd_fields_free(Box__PolicyField **f, size_t n);

/*
 * Send one eval-format JSON line as PEER: a request line
 * {"action":…,"input":{…}} is a DecideRequest and *reply (may be NULL)
 * gets the DecideReply; a {"record":"response"|"error",…} line is a
 * RecordRequest (no reply) naming the oldest permit of PEER's channel with that
 * action and input (-ENOENT: none). Negative errno on failure.
 */
int pd_send_line(struct pd *pd, int peer, const char *line, Box__DecideReply **reply);
/*
 * A RecordRequest as it is (no permit looked up): DECIDE_ID, ACTION, ERROR
 * (an error event) or a response with OUTPUT_JSON (a JSON object, or NULL).
 * For tests of what policyd refuses.
 */
int pd_send_record(struct pd *pd, int peer, uint64_t decide_id, const char *action, bool error,
		   const char *output_json);
/* Send a DecideRequest without waiting (bench); then pd_wait_reply. */
int pd_send_decide(struct pd *pd, int peer, const Box__DecideRequest *req, uint64_t *ret_id);
/*
 * The next message on PEER's channel (box_ipc_recv_wait's result); on boxd's, the chain
 * heads box-policyd sends after its writes (PolicyLogHead) are kept and read past.
 */
int pd_recv(struct pd *pd, int peer, struct box_ipc_msg *m, int timeout_ms);
int pd_wait_reply(struct pd *pd, int peer, Box__DecideReply **reply, uint64_t *ret_id,
		  int timeout_ms);

/*
 * Send N eval-format request lines as one DecideBatchRequest from PEER and
 * wait for its DecideBatchReply (*reply, may be NULL; free with
 * box_msg_free). Negative errno on failure (-EBADMSG: another reply came).
 */
int pd_send_batch(struct pd *pd, int peer, const char *const *lines, size_t n,
		  Box__DecideBatchReply **reply);
/* The same with until_deny set: the batch ends at its first denial. */
int pd_send_batch_until_deny(struct pd *pd, int peer, const char *const *lines, size_t n,
			     Box__DecideBatchReply **reply);
/*
 * Send the tool schema of SERVER (namespace NS) from PEER and wait for its
 * PolicyToolSchemaReply (*reply, may be NULL). TOOLS_JSON is the `actions`
 * object of an eval schema line: {"add":{"a":"Long","opt?":"String"}} (a
 * `?` marks an optional field). Negative errno on failure.
 */
int pd_send_tool_schema(struct pd *pd, int peer, const char *server, const char *ns,
			const char *tools_json, Box__PolicyToolSchemaReply **reply);
/* Build that PolicyToolSchema only (free with pd_tool_schema_free). */
int pd_tool_schema(const char *server, const char *ns, const char *tools_json,
		   Box__PolicyToolSchema **ret);
void pd_tool_schema_free(Box__PolicyToolSchema *m);
/* N eval-format request lines as one PolicyProbeRequest; *reply gets the PolicyProbeReply. */
int pd_send_probe(struct pd *pd, int peer, const char *const *lines, size_t n,
		  Box__PolicyProbeReply **reply);

/*
 * Send an envelope of TYPE around PAYLOAD as it is (no sender-side checks):
 * for tests of what policyd refuses. Negative errno on failure.
 */
int pd_send_raw(struct pd *pd, int peer, uint32_t type, const void *payload, size_t len);

/* A temporary directory (mkdtemp under $TMPDIR or /tmp); rm -rf with pd_rmtree. */
char *pd_tmpdir(const char *tag);
/*
 * A new channel attached over OVER (PolicyChannelAttach on that peer's channel: box-shell's
 * for its processes, boxd's for a supervised program; PERSON: a person's session): our end,
 * or -1.
 */
int pd_attach_new(int over, bool person);
/*
 * TEXT (decisions.jsonl lines) with each line's chain suffix ,"seq":N,"prev":"HEX"
 * taken off and the seal lines left out (malloc'd), after checking the chain in
 * it: each seq one more than the line before, each prev that line's SHA-256 (the
 * first line's prev is not known here). NULL with *WHY when the chain is broken
 * or a line has no suffix.
 */
char *pd_unchain(const char *text, const char **why);
/* *LOG (malloc'd) replaced by pd_unchain's text; false (said on stdout, *LOG kept) when broken. */
bool pd_unchain_log(char **log);
void pd_rmtree(const char *path);

#endif
