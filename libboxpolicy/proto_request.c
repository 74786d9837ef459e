/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_request.c — box-policyd's PolicyField lists as libboxpolicy requests
 * (boxpolicy_proto.h). No I/O, no logging.
 * Trusts: fields validated by proto/policy_validate.c; the schema checks the rest.
 */
#include <errno.h>
#include <string.h>

#include "boxpolicy_proto.h"


static struct bp_value *
to_value(struct bp_request *r, const Box__PolicyValue *v)
{
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR: return bp_value_string(r, v->str, strlen(v->str));
	case BOX__POLICY_VALUE__KIND_INTEGER: return bp_value_long(r, v->integer);
	case BOX__POLICY_VALUE__KIND_BOOLEAN: return bp_value_bool(r, v->boolean);
	case BOX__POLICY_VALUE__KIND_SET: {
		struct bp_value *s = bp_value_set(r);
		for (size_t i = 0; s && i < v->set->n_elems; i++) {
			struct bp_value *e = to_value(r, v->set->elems[i]);
			if (!e || bp_value_set_add(r, s, e) < 0)
				return NULL;
		}
		return s;
	}
	case BOX__POLICY_VALUE__KIND_RECORD: {
		struct bp_value *rec = bp_value_record(r);
		for (size_t i = 0; rec && i < v->record->n_fields; i++) {
			const Box__PolicyField *f = v->record->fields[i];
			struct bp_value *e = to_value(r, f->value);
			if (!e || bp_value_record_put(r, rec, f->name, e) < 0)
				return NULL;
		}
		return rec;
	}
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default: return NULL;
	}
}

/*
 * Fill R. A field the schema refuses leaves its reason in
 * bp_request_problem(), which makes the decision a deny with cause error;
 * only -ENOMEM is returned.
 */
int
bp_request_fill_proto(struct bp_request *r, const char *action, Box__PolicyField *const *f, size_t n)
{
	int k = bp_request_set_action(r, action);
	if (k == -ENOMEM)
		return k;
	for (size_t i = 0; i < n; i++) {
		const Box__PolicyValue *v = f[i]->value;
		switch (v->kind_case) {
		case BOX__POLICY_VALUE__KIND_STR:
			k = bp_request_set_string(r, f[i]->name, v->str, strlen(v->str));
			break;
		case BOX__POLICY_VALUE__KIND_INTEGER:
			k = bp_request_set_long(r, f[i]->name, v->integer);
			break;
		case BOX__POLICY_VALUE__KIND_BOOLEAN:
			k = bp_request_set_bool(r, f[i]->name, v->boolean);
			break;
		case BOX__POLICY_VALUE__KIND_SET:
		case BOX__POLICY_VALUE__KIND_RECORD: {
			struct bp_value *bv = to_value(r, v);
			k = bv ? bp_request_set_value(r, f[i]->name, bv) : -ENOMEM;
			break;
		}
		case BOX__POLICY_VALUE__KIND__NOT_SET:
		default: k = -EINVAL; break;
		}
		if (k == -ENOMEM)
			return k;
	}
	return 0;
}

