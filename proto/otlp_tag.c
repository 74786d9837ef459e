/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlp_tag.c — the agent's resources re-tagged as box's (otlp_json.h
 * otlp_tag_agent): what the receiver relays always says which box it came
 * from, and an agent cannot pass its records off as box's own (box.source,
 * box.name, box.id are box's to set; any box.* it sent is dropped).
 * Memory: works on a message from otlp_json_parse or protobuf_c_message_unpack
 * with the default allocator, so what it removes it frees and what it adds
 * protobuf_c_message_free_unpacked frees.
 * Trusts: nothing in the message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_json.h"

static Box__Otlp__KeyValue *
kv_new(const char *key, const char *value)
{
	Box__Otlp__KeyValue *kv = calloc(1, sizeof(*kv));
	Box__Otlp__AnyValue *v = calloc(1, sizeof(*v));

	if (!kv || !v)
		goto fail;
	box__otlp__key_value__init(kv);
	box__otlp__any_value__init(v);
	kv->value = v;
	if (!(kv->key = strdup(key)) || !(v->string_value = strdup(value))) {
		free(v->string_value);
		v->string_value = NULL;
		goto fail;
	}
	v->value_case = BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	return kv;
fail:
	if (kv && kv->key) {
		free(kv->key);
		kv->key = NULL;
	}
	free(v);
	free(kv);
	return NULL;
}

static int
tag(Box__Otlp__Resource **rp, const char *box, const char *id)
{
	const char *keys[3] = { "box.name", "box.id", "box.source" };
	const char *values[3] = { box, id, "agent" };
	Box__Otlp__KeyValue *add[3] = { NULL, NULL, NULL };
	Box__Otlp__Resource *r = *rp;

	for (int i = 0; i < 3; i++)
		if (!(add[i] = kv_new(keys[i], values[i])))
			goto fail;
	if (!r) {
		if (!(r = calloc(1, sizeof(*r))))
			goto fail;
		box__otlp__resource__init(r);
		*rp = r;
	}
	Box__Otlp__KeyValue **na = realloc(r->attributes, (r->n_attributes + 3) * sizeof(*na));
	if (!na)
		goto fail;
	r->attributes = na;
	size_t o = 0;
	for (size_t i = 0; i < r->n_attributes; i++) {
		Box__Otlp__KeyValue *kv = na[i];
		if (kv && kv->key && strncmp(kv->key, "box.", 4) == 0)
			protobuf_c_message_free_unpacked(&kv->base, NULL);
		else
			na[o++] = kv;
	}
	for (int i = 0; i < 3; i++)
		na[o++] = add[i];
	r->n_attributes = o;
	return 0;
fail:
	for (int i = 0; i < 3; i++)
		if (add[i])
			protobuf_c_message_free_unpacked(&add[i]->base, NULL);
	return -ENOMEM;
}

int
otlp_tag_agent(ProtobufCMessage *req, const char *box, const char *id)
{
	int r = 0;

	if (req->descriptor == &box__otlp__export_logs_service_request__descriptor) {
		Box__Otlp__ExportLogsServiceRequest *m = (Box__Otlp__ExportLogsServiceRequest *)req;
		for (size_t i = 0; i < m->n_resource_logs && r == 0; i++)
			r = tag(&m->resource_logs[i]->resource, box, id);
	} else if (req->descriptor == &box__otlp__export_trace_service_request__descriptor) {
		Box__Otlp__ExportTraceServiceRequest *m = (Box__Otlp__ExportTraceServiceRequest *)req;
		for (size_t i = 0; i < m->n_resource_spans && r == 0; i++)
			r = tag(&m->resource_spans[i]->resource, box, id);
	} else if (req->descriptor == &box__otlp__export_metrics_service_request__descriptor) {
		Box__Otlp__ExportMetricsServiceRequest *m =
			(Box__Otlp__ExportMetricsServiceRequest *)req;
		for (size_t i = 0; i < m->n_resource_metrics && r == 0; i++)
			r = tag(&m->resource_metrics[i]->resource, box, id);
	} else
		return -EINVAL;
	return r;
}
