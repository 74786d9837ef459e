/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_allow.h — the daemons' own seccomp allow-lists (HACKING.md
 * convention 3: the last step before the event loop).
 *
 * seccomp_allow_new() makes a kill-by-default filter context allowing the
 * caller's list and, in a sanitizer build, the calls the sanitizer runtime
 * itself makes (its one list lives here, for every daemon); the caller adds
 * its argument-checked rules, then seccomp_allow_load() loads and releases.
 * Library code: negative errno, never logs.
 * Trusts: its caller's lists.
 */
#ifndef BOX_SECCOMP_ALLOW_H
#define BOX_SECCOMP_ALLOW_H

#include <stddef.h>

#include <seccomp.h>

int seccomp_allow_new(const int *allowed, size_t n, scmp_filter_ctx *ret);
/* Loads the filter into this thread (and its later children); releases ctx either way. */
int seccomp_allow_load(scmp_filter_ctx ctx);
/* True in a build with AddressSanitizer (whose runtime needs more calls). */
int seccomp_allow_sanitized(void);

#endif
