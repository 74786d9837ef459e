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
#include <stdio.h>

int seccomp_allow_new(const int *allowed, size_t n, scmp_filter_ctx *ret);
/* Loads the filter into this thread (and its later children); releases ctx either way. */
int seccomp_allow_load(scmp_filter_ctx ctx);
/*
 * A program seccomp_allow_new() built at build time and compiled in (its
 * generator printed it with seccomp_allow_print_c): loaded as seccomp_load()
 * loads it, no_new_privs set, SECCOMP_FILTER_FLAG_LOG where the kernel has it.
 */
struct sock_filter;
int seccomp_allow_load_prog(const struct sock_filter *prog, unsigned short n);
/* CTX's program written to OUT as `static const struct sock_filter NAME[]` (a build tool's). */
int seccomp_allow_print_c(FILE *out, scmp_filter_ctx ctx, const char *name, const char *origin);
/* True in a build with AddressSanitizer (whose runtime needs more calls). */
int seccomp_allow_sanitized(void);

#endif
