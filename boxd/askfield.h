/* SPDX-License-Identifier: Apache-2.0 */
/*
 * askfield.h — the input fields of a request box-policyd holds for a person (PolicyAsk.input,
 * typed values), as the text lines `boxctl run`'s prompt shows (AskEntry.fields,
 * proto/boxd.proto). See askfield.c.
 */
#ifndef BOXD_ASKFIELD_H
#define BOXD_ASKFIELD_H

#include <stddef.h>

#include "boxd.pb-c.h"
#include "policy.pb-c.h"
#include "validate.h" /* BOX_ASK_FIELDS_MAX, BOX_ASK_FIELD_TEXT_MAX */

/* The rendered fields of one held request: at most BOX_ASK_FIELDS_MAX, text kept here. */
struct ask_fields {
	Box__AskField f[BOX_ASK_FIELDS_MAX];
	Box__AskField *p[BOX_ASK_FIELDS_MAX];
	char text[BOX_ASK_FIELDS_MAX][BOX_ASK_FIELD_TEXT_MAX + 1];
	size_t n;
};

/*
 * The first BOX_ASK_FIELDS_MAX of the N fields IN into FS (names borrowed from IN: FS lives
 * no longer than it). Each value as text: a string as it is, an integer in decimal,
 * true/false, a set as [e1, e2], a record as {name: value} (strings inside either quoted),
 * nested at most 8 deep ("..." below); control characters and DEL as \n, \t, \xNN; cut at
 * BOX_ASK_FIELD_TEXT_MAX bytes on a whole UTF-8 character, ending in "...". A field whose
 * name is not text (a control character, too long) is left out.
 */
void ask_fields_render(struct ask_fields *fs, Box__PolicyField *const *in, size_t n);

#endif
