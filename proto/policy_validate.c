/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_validate.c — validators for box-policyd's messages (policy_validate.h).
 *
 * Shape only: the policy engine still refuses an action or a field that its
 * schema does not know (the decision is then a deny with cause `error`).
 * Every string is UTF-8 without control characters where a human reads it
 * (names, actions, messages); values may hold any UTF-8 (a command line may
 * contain a newline). Recursion over values is bounded by
 * BOX_POLICY_DEPTH_MAX.
 * Trusts: nothing. Pure; never logs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy_validate.h"
#include "text.h"
#include "validate.h" /* BOX_TELEMETRY_TARGETS_MAX */
#include "validate_macros.h"

#define text_ok box_text_utf8_ok
#define is_word box_text_is_word

/* A value string: UTF-8, at most BOX_POLICY_STR_MAX bytes, control characters allowed. */
static bool
value_str_ok(const char *s)
{
	if (!s)
		return false;
	size_t n = strnlen(s, BOX_POLICY_STR_MAX + 1);
	return n <= BOX_POLICY_STR_MAX && box_valid_utf8(s, n);
}

bool
box_valid_action(const char *s)
{
	if (!text_ok(s, 3, BOX_POLICY_ACTION_MAX))
		return false;
	const char *colon = strchr(s, ':');
	if (!colon)
		return false;
	/* fs:read, net:connect, mcp:call, shell:exec, ... */
	if (colon[1] != ':')
		return is_word(s, (size_t)(colon - s), true) &&
		       is_word(colon + 1, strlen(colon + 1), true);
	/* NS::Action::"tool": NS of [A-Za-z0-9_], the tool any text without '"' or '\'. */
	static const char mid[] = "::Action::\"";
	if (!is_word(s, (size_t)(colon - s), false) || strncmp(colon, mid, sizeof(mid) - 1) != 0)
		return false;
	const char *tool = colon + sizeof(mid) - 1;
	size_t tl = strlen(tool);
	if (tl < 2 || tool[tl - 1] != '"')
		return false;
	for (size_t i = 0; i + 1 < tl; i++)
		if (tool[i] == '"' || tool[i] == '\\')
			return false;
	return true;
}

static int v_value(const Box__PolicyValue *v, unsigned depth);

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/*
 * -EINVAL when two of the N tools share a name (-ENOMEM if the table cannot
 * be had). A hash table, not a quadratic scan over 4096 names, and not
 * qsort: glibc's calls sysinfo(2) for large arrays, which the receivers'
 * seccomp allow-lists refuse.
 */
static int
tool_names_unique(Box__PolicyTool *const *tools, size_t n)
{
	if (n < 2)
		return 0;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	const char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *name = tools[i]->name;
		size_t k = (size_t)name_hash(name) & (cap - 1);
		while (slots[k] && strcmp(slots[k], name) != 0)
			k = (k + 1) & (cap - 1);
		if (slots[k])
			r = -EINVAL;
		slots[k] = name;
	}
	free(slots);
	return r;
}

static int
v_set(const Box__PolicyValueSet *s, unsigned depth)
{
	REQUIRE(s, -EINVAL);
	REQUIRE(s->n_elems <= BOX_POLICY_SET_MAX, -E2BIG);
	for (size_t i = 0; i < s->n_elems; i++)
		TRY(v_value(s->elems[i], depth + 1));
	return 0;
}

static int
v_value(const Box__PolicyValue *v, unsigned depth)
{
	REQUIRE(v, -EINVAL);
	REQUIRE(depth <= BOX_POLICY_DEPTH_MAX, -E2BIG);
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR:
		REQUIRE(value_str_ok(v->str), -EINVAL);
		return 0;
	case BOX__POLICY_VALUE__KIND_INTEGER:
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		return 0;
	case BOX__POLICY_VALUE__KIND_SET:
		return v_set(v->set, depth);
	case BOX__POLICY_VALUE__KIND_RECORD:
		REQUIRE(v->record, -EINVAL);
		return box_validate_policy_fields(v->record->fields, v->record->n_fields,
						  depth + 1);
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default:
		return -EINVAL;
	}
}

int
box_validate_policy_fields(Box__PolicyField *const *f, size_t n, unsigned depth)
{
	REQUIRE(n <= BOX_POLICY_FIELDS_MAX, -E2BIG);
	REQUIRE(depth <= BOX_POLICY_DEPTH_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++) {
		REQUIRE(f[i] && text_ok(f[i]->name, 1, BOX_POLICY_FIELD_NAME_MAX), -EINVAL);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(f[i]->name, f[j]->name) != 0, -EINVAL);
		TRY(v_value(f[i]->value, depth));
	}
	return 0;
}

bool
box_valid_policy_namespace(const char *ns)
{
	return ns && is_word(ns, strnlen(ns, BOX_NAME_MAX + 1), false) &&
	       strlen(ns) <= BOX_NAME_MAX && strcmp(ns, "Box") != 0;
}

int
box_validate_policy_init(const Box__PolicyInit *m)
{
	REQUIRE(box_valid_name(m->box_name), -EINVAL);
	REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	REQUIRE(box_valid_path(m->home), -EINVAL);
	if (m->has_policy_text)
		REQUIRE(m->policy_text.len <= BOX_POLICY_TEXT_MAX, -E2BIG);
	if (m->policy_file)
		REQUIRE(box_valid_path(m->policy_file), -EINVAL);
	if (m->has_history_sync)
		REQUIRE(m->history_sync >= BOX__HISTORY_SYNC__HISTORY_SYNC_ALWAYS &&
				m->history_sync <= BOX__HISTORY_SYNC__HISTORY_SYNC_OFF,
			-EINVAL);
	REQUIRE(m->n_mcp_namespaces <= BOX_POLICY_NAMESPACES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_mcp_namespaces; i++)
		REQUIRE(box_valid_policy_namespace(m->mcp_namespaces[i]), -EINVAL);
	REQUIRE(m->n_telemetry_include <= BOX_TELEMETRY_FILES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_telemetry_include; i++)
		REQUIRE(m->telemetry_include[i] <= 31, -EINVAL);
	REQUIRE(m->n_otlp_include <= BOX_TELEMETRY_TARGETS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_otlp_include; i++)
		REQUIRE(m->otlp_include[i] <= 31, -EINVAL);
	if (m->log_head)
		REQUIRE(box_validate_policy_log_head(m->log_head) == 0 && !m->log_head->rotated &&
				!m->log_head->sealed,
			-EINVAL);
	return 0;
}

int
box_validate_policy_ready(const Box__PolicyReady *m)
{
	if (m->message)
		REQUIRE(text_ok(m->message, 1, BOX_STR_MAX), -EINVAL);
	/* A refusal says why. */
	if (!m->ok)
		REQUIRE(m->message != NULL, -EINVAL);
	REQUIRE(m->temporal_rules <= m->rules && m->rules_kept <= m->temporal_rules, -ERANGE);
	return 0;
}

int
box_validate_decide_request(const Box__DecideRequest *m)
{
	REQUIRE(box_valid_action(m->action), -EINVAL);
	return box_validate_policy_fields(m->input, m->n_input, 0);
}

int
box_validate_decide_reply(const Box__DecideReply *m)
{
	REQUIRE(m->n_rules <= BOX_POLICY_RULES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_rules; i++)
		REQUIRE(m->rules[i] && value_str_ok(m->rules[i]) &&
				strlen(m->rules[i]) <= BOX_POLICY_RULE_NAME_MAX &&
				m->rules[i][0] != '\0',
			-EINVAL);
	REQUIRE(value_str_ok(m->message) && strlen(m->message) <= BOX_POLICY_MESSAGE_MAX,
		-EINVAL);
	/* A permit is permitted, or a per-tool refinement no rule matched (docs/box-policy.5.md). */
	REQUIRE((m->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) ==
			(m->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED ||
			 m->cause == BOX__DECISION_CAUSE__CAUSE_NOT_REFINED),
		-EINVAL);
	return 0;
}

int
box_validate_decide_batch_request(const Box__DecideBatchRequest *m)
{
	REQUIRE(m->n_requests >= 1, -EINVAL);
	REQUIRE(m->n_requests <= BOX_POLICY_BATCH_MAX, -E2BIG);
	REQUIRE(!m->has_history_free || m->history_free >= 1, -EINVAL);
	for (size_t i = 0; i < m->n_requests; i++) {
		REQUIRE(m->requests[i], -EINVAL);
		TRY(box_validate_decide_request(m->requests[i]));
	}
	return 0;
}

int
box_validate_decide_batch_reply(const Box__DecideBatchReply *m)
{
	REQUIRE(m->n_replies <= BOX_POLICY_BATCH_MAX, -E2BIG);
	REQUIRE(!(m->has_stale && m->stale) || m->n_replies == 0, -EINVAL); /* stale: none decided */
	for (size_t i = 0; i < m->n_replies; i++) {
		REQUIRE(m->replies[i], -EINVAL);
		TRY(box_validate_decide_reply(m->replies[i]));
	}
	return 0;
}

/* A tool's argument: an identifier, unique in its tool, with a type expression. */
static int
v_tool_fields(Box__PolicyToolField *const *f, size_t n)
{
	REQUIRE(n <= BOX_POLICY_TOOL_FIELDS_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++) {
		REQUIRE(f[i] && box_text_len_ok(f[i]->name, 1, BOX_POLICY_FIELD_NAME_MAX) &&
				box_valid_env_name(f[i]->name),
			-EINVAL);
		REQUIRE(box_text_len_ok(f[i]->type, 1, BOX_POLICY_TYPE_MAX), -E2BIG);
		REQUIRE(text_ok(f[i]->type, 1, BOX_POLICY_TYPE_MAX), -EINVAL);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(f[i]->name, f[j]->name) != 0, -EINVAL);
	}
	return 0;
}

/* 1..256 bytes of UTF-8 without NUL (the server chose it; policyd says if it is usable). */
static bool
tool_name_ok(const char *s)
{
	if (!s)
		return false;
	size_t n = strnlen(s, BOX_POLICY_TOOL_NAME_MAX + 1);
	return n >= 1 && n <= BOX_POLICY_TOOL_NAME_MAX && box_valid_utf8(s, n);
}

int
box_validate_policy_tool_schema(const Box__PolicyToolSchema *m)
{
	REQUIRE(box_valid_name(m->server), -EINVAL);
	REQUIRE(box_valid_policy_namespace(m->ns), -EINVAL);
	REQUIRE(m->n_tools <= BOX_POLICY_TOOLS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_tools; i++) {
		const Box__PolicyTool *t = m->tools[i];
		REQUIRE(t && tool_name_ok(t->name), -EINVAL);
		TRY(v_tool_fields(t->fields, t->n_fields));
	}
	/* Unique names: sorted, not a quadratic scan over 4096 of them. */
	return tool_names_unique(m->tools, m->n_tools);
}

int
box_validate_policy_tool_schema_reply(const Box__PolicyToolSchemaReply *m)
{
	if (m->error)
		REQUIRE(text_ok(m->error, 1, BOX_STR_MAX), -EINVAL);
	/* A refusal says which rule failed; an acceptance carries no error. */
	REQUIRE(m->ok == (m->error == NULL), -EINVAL);
	REQUIRE(m->n_warnings <= BOX_POLICY_WARNINGS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_warnings; i++)
		REQUIRE(text_ok(m->warnings[i], 1, BOX_STR_MAX), -EINVAL);
	return 0;
}

int
box_validate_policy_probe_request(const Box__PolicyProbeRequest *m)
{
	REQUIRE(m->n_requests >= 1, -EINVAL);
	REQUIRE(m->n_requests <= BOX_POLICY_BATCH_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_requests; i++) {
		REQUIRE(m->requests[i], -EINVAL);
		TRY(box_validate_decide_request(m->requests[i]));
	}
	return 0;
}

int
box_validate_policy_probe_reply(const Box__PolicyProbeReply *m)
{
	REQUIRE(m->n_replies <= BOX_POLICY_BATCH_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_replies; i++) {
		REQUIRE(m->replies[i], -EINVAL);
		TRY(box_validate_decide_reply(m->replies[i]));
	}
	return 0;
}

static int
v_outcome(Box__EventKind kind, const char *action, Box__PolicyField *const *in, size_t n_in,
	  Box__PolicyField *const *out, size_t n_out)
{
	REQUIRE(box_valid_action(action), -EINVAL);
	TRY(box_validate_policy_fields(in, n_in, 0));
	TRY(box_validate_policy_fields(out, n_out, 0));
	/* An error event has inputs only (reference §2.3). */
	if (kind == BOX__EVENT_KIND__EVENT_ERROR || kind == BOX__EVENT_KIND__EVENT_REQUEST)
		REQUIRE(n_out == 0, -EINVAL);
	return 0;
}

int
box_validate_record_request(const Box__RecordRequest *m)
{
	REQUIRE(m->kind == BOX__EVENT_KIND__EVENT_RESPONSE ||
			m->kind == BOX__EVENT_KIND__EVENT_ERROR,
		-EINVAL);
	/* The input is box-policyd's copy of the Decide the Record names, never the peer's. */
	REQUIRE(m->n_input == 0, -EINVAL);
	return v_outcome(m->kind, m->action, m->input, m->n_input, m->output, m->n_output);
}

int
box_validate_record_batch(const Box__RecordBatch *m)
{
	REQUIRE(m->n_records >= 1, -EINVAL);
	REQUIRE(m->n_records <= BOX_POLICY_BATCH_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_records; i++) {
		REQUIRE(m->records[i], -EINVAL);
		TRY(box_validate_record_request(m->records[i]));
	}
	return 0;
}

int
box_validate_policy_local(const Box__PolicyLocal *m)
{
	REQUIRE(m->generation >= 1, -EINVAL);
	if (m->has_policy_text)
		REQUIRE(m->policy_text.len <= BOX_POLICY_TEXT_MAX, -E2BIG);
	REQUIRE(box_valid_path(m->home), -EINVAL);
	REQUIRE(m->n_mcp_namespaces <= BOX_POLICY_NAMESPACES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_mcp_namespaces; i++)
		REQUIRE(box_valid_policy_namespace(m->mcp_namespaces[i]), -EINVAL);
	REQUIRE(m->n_actions <= BOX_POLICY_LOCAL_ACTIONS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_actions; i++)
		REQUIRE(m->actions[i] && text_ok(m->actions[i], 1, BOX_POLICY_ACTION_MAX), -EINVAL);
	return 0;
}

/* A decision made in process, or an outcome: exactly one, each whole. */
static int
v_ship_item(const Box__PolicyShipItem *it)
{
	REQUIRE(it && (it->decide != NULL) != (it->record != NULL), -EINVAL);
	if (it->record) {
		REQUIRE(!it->has_verdict && !it->has_cause && it->n_rules == 0, -EINVAL);
		return box_validate_record_request(it->record);
	}
	REQUIRE(it->has_verdict && it->has_cause, -EINVAL);
	TRY(box_validate_decide_request(it->decide));
	/* The claim has a reply's shape (the message is policyd's own: not shipped). */
	Box__DecideReply claim = BOX__DECIDE_REPLY__INIT;
	claim.verdict = it->verdict;
	claim.cause = it->cause;
	claim.rules = it->rules;
	claim.n_rules = it->n_rules;
	claim.message = (char *)"";
	return box_validate_decide_reply(&claim);
}

int
box_validate_policy_ship(const Box__PolicyShip *m)
{
	REQUIRE(m->generation >= 1, -EINVAL);
	REQUIRE(m->n_items >= 1, -EINVAL);
	REQUIRE(m->n_items <= BOX_POLICY_BATCH_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_items; i++)
		TRY(v_ship_item(m->items[i]));
	return 0;
}

int
box_validate_policy_reload(const Box__PolicyReload *m)
{
	if (m->has_policy_text)
		REQUIRE(m->policy_text.len <= BOX_POLICY_TEXT_MAX, -E2BIG);
	if (m->policy_file)
		REQUIRE(box_valid_path(m->policy_file), -EINVAL);
	if (m->has_expect_sha256)
		REQUIRE(m->expect_sha256.len == 32, -EINVAL);
	return 0;
}

int
box_validate_policy_reload_reply(const Box__PolicyReloadReply *m)
{
	REQUIRE(m->generation >= 1, -EINVAL);
	REQUIRE(m->ok == (m->message == NULL), -EINVAL);
	if (m->message)
		REQUIRE(text_ok(m->message, 1, BOX_STR_MAX), -EINVAL);
	REQUIRE(m->temporal_rules <= m->rules && m->rules_kept <= m->temporal_rules, -EINVAL);
	return 0;
}

int
box_validate_policy_ask_list_reply(const Box__PolicyAskListReply *m)
{
	REQUIRE(m->n_asks <= BOX_POLICY_ASKS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_asks; i++) {
		const Box__PolicyAsk *a = m->asks[i];
		REQUIRE(a && a->ask_id >= 1, -EINVAL);
		Box__DecideRequest d = BOX__DECIDE_REQUEST__INIT;
		d.action = a->action;
		d.input = a->input;
		d.n_input = a->n_input;
		TRY(box_validate_decide_request(&d));
		REQUIRE(value_str_ok(a->resource) && strlen(a->resource) <= BOX_STR_MAX, -EINVAL);
		REQUIRE(value_str_ok(a->message) && strlen(a->message) <= BOX_POLICY_MESSAGE_MAX,
			-EINVAL);
		REQUIRE(text_ok(a->source, 1, 32), -EINVAL);
		/* held by [box] ask = default: no rule forbade it; else the @ask rules */
		if (a->by_default)
			REQUIRE(a->n_rules == 0, -EINVAL);
		else
			REQUIRE(a->n_rules >= 1 && a->n_rules <= BOX_POLICY_RULES_MAX, -EINVAL);
		if (a->input_json) {
			size_t n = strnlen(a->input_json, BOX_ASK_INPUT_MAX + 1);
			REQUIRE(n >= 2 && n <= BOX_ASK_INPUT_MAX, -E2BIG);
			REQUIRE(box_valid_utf8(a->input_json, n), -EINVAL);
			for (size_t k = 0; k < n; k++)
				REQUIRE((unsigned char)a->input_json[k] >= 0x20, -EINVAL);
		}
		for (size_t k = 0; k < a->n_rules; k++)
			REQUIRE(a->rules[k] && value_str_ok(a->rules[k]) &&
					strlen(a->rules[k]) <= BOX_POLICY_RULE_NAME_MAX,
				-EINVAL);
	}
	if (m->has_policy_sha256)
		REQUIRE(m->policy_sha256.len == 32, -EINVAL);
	if (m->policy_file)
		REQUIRE(box_valid_path(m->policy_file), -EINVAL);
	return 0;
}

int
box_validate_policy_ask_answer(const Box__PolicyAskAnswer *m)
{
	REQUIRE(m->ask_id >= 1, -EINVAL);
	return 0;
}

int
box_validate_policy_kernel_refusal(const Box__PolicyKernelRefusal *m)
{
	REQUIRE(text_ok(m->sandbox, 1, 256), -EINVAL);
	size_t n = strlen(m->syscall);
	REQUIRE(n >= 1 && n <= 31, -EINVAL);
	for (size_t i = 0; i < n; i++) {
		char c = m->syscall[i];
		REQUIRE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_', -EINVAL);
	}
	REQUIRE(m->errno_value >= 1 && m->errno_value <= 4095, -EINVAL);
	REQUIRE(m->count >= 1, -EINVAL);
	return 0;
}

int
box_validate_policy_ask_answer_reply(const Box__PolicyAskAnswerReply *m)
{
	REQUIRE(m->ok == (m->message == NULL), -EINVAL);
	if (m->message)
		REQUIRE(text_ok(m->message, 1, BOX_STR_MAX), -EINVAL);
	return 0;
}

int
box_validate_policy_log_fd(const Box__PolicyLogFd *m)
{
	REQUIRE(m->generation > 0, -ERANGE);
	return 0;
}

int
box_validate_policy_log_head(const Box__PolicyLogHead *m)
{
	REQUIRE(m->head.len == 32, -EINVAL);
	/* genesis (seq 0) is the only head a rotation or seal can never name */
	REQUIRE(m->seq > 0 || !(m->rotated || m->sealed), -EINVAL);
	return 0;
}

int
box_validate_history_epoch(const Box__HistoryEpoch *m)
{
	REQUIRE(m->n_rule_hashes <= BOX_POLICY_HASHES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_rule_hashes; i++)
		REQUIRE(m->rule_hashes[i].len >= 1 &&
				m->rule_hashes[i].len <= BOX_POLICY_HASH_MAX,
			-EINVAL);
	return 0;
}

int
box_validate_history_event(const Box__HistoryEvent *m)
{
	REQUIRE(m->kind == BOX__EVENT_KIND__EVENT_REQUEST ||
			m->kind == BOX__EVENT_KIND__EVENT_RESPONSE ||
			m->kind == BOX__EVENT_KIND__EVENT_ERROR,
		-EINVAL);
	return v_outcome(m->kind, m->action, m->input, m->n_input, m->output, m->n_output);
}

int
box_validate_policy_msg(const ProtobufCMessage *m)
{
	if (!m)
		return -EINVAL;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	if (d == &box__policy_init__descriptor)
		return box_validate_policy_init((const Box__PolicyInit *)m);
	if (d == &box__policy_ready__descriptor)
		return box_validate_policy_ready((const Box__PolicyReady *)m);
	if (d == &box__decide_request__descriptor)
		return box_validate_decide_request((const Box__DecideRequest *)m);
	if (d == &box__decide_reply__descriptor)
		return box_validate_decide_reply((const Box__DecideReply *)m);
	if (d == &box__decide_batch_request__descriptor)
		return box_validate_decide_batch_request((const Box__DecideBatchRequest *)m);
	if (d == &box__decide_batch_reply__descriptor)
		return box_validate_decide_batch_reply((const Box__DecideBatchReply *)m);
	if (d == &box__record_request__descriptor)
		return box_validate_record_request((const Box__RecordRequest *)m);
	if (d == &box__record_batch__descriptor)
		return box_validate_record_batch((const Box__RecordBatch *)m);
	if (d == &box__policy_log_fd__descriptor)
		return box_validate_policy_log_fd((const Box__PolicyLogFd *)m);
	if (d == &box__policy_log_head__descriptor)
		return box_validate_policy_log_head((const Box__PolicyLogHead *)m);
	if (d == &box__policy_tool_schema__descriptor)
		return box_validate_policy_tool_schema((const Box__PolicyToolSchema *)m);
	if (d == &box__policy_tool_schema_reply__descriptor)
		return box_validate_policy_tool_schema_reply(
			(const Box__PolicyToolSchemaReply *)m);
	if (d == &box__policy_probe_request__descriptor)
		return box_validate_policy_probe_request((const Box__PolicyProbeRequest *)m);
	if (d == &box__policy_probe_reply__descriptor)
		return box_validate_policy_probe_reply((const Box__PolicyProbeReply *)m);
	if (d == &box__policy_local_request__descriptor)
		return 0;
	if (d == &box__policy_local__descriptor)
		return box_validate_policy_local((const Box__PolicyLocal *)m);
	if (d == &box__policy_ship__descriptor)
		return box_validate_policy_ship((const Box__PolicyShip *)m);
	if (d == &box__policy_ask_list__descriptor)
		return 0;
	if (d == &box__policy_ask_list_reply__descriptor)
		return box_validate_policy_ask_list_reply((const Box__PolicyAskListReply *)m);
	if (d == &box__policy_ask_answer__descriptor)
		return box_validate_policy_ask_answer((const Box__PolicyAskAnswer *)m);
	if (d == &box__policy_kernel_refusal__descriptor)
		return box_validate_policy_kernel_refusal((const Box__PolicyKernelRefusal *)m);
	if (d == &box__policy_ask_answer_reply__descriptor)
		return box_validate_policy_ask_answer_reply((const Box__PolicyAskAnswerReply *)m);
	if (d == &box__policy_reload__descriptor)
		return box_validate_policy_reload((const Box__PolicyReload *)m);
	if (d == &box__policy_reload_reply__descriptor)
		return box_validate_policy_reload_reply((const Box__PolicyReloadReply *)m);
	if (d == &box__history_epoch__descriptor)
		return box_validate_history_epoch((const Box__HistoryEpoch *)m);
	if (d == &box__history_event__descriptor)
		return box_validate_history_event((const Box__HistoryEvent *)m);
	return -EINVAL;
}
