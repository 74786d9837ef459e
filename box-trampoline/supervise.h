/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.h — a supervised program's seccomp listener (supervise.c): the
 * workload child installs the filter and hands the listener to PID 1, which
 * decides each call it receives.
 * Trusts: nothing the tracee says.
 */
#ifndef BOX_TRAMPOLINE_SUPERVISE_H
#define BOX_TRAMPOLINE_SUPERVISE_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

/* The supervised calls' program into F (SUPERVISE_INSNS_MAX); its length. */
#define SUPERVISE_INSNS_MAX 128
size_t supervise_program(struct sock_filter *f);
/* PID 1: serve LISTENER, asking box-policyd on POLICYD_FD (taken); HOME spells "~". */
int supervise_start(int listener, int policyd_fd, const char *home);
/*
 * PID 1's loop: the outcomes waiting for the next decision's PolicyShip leave when
 * they have waited 1 ms, or now (ALL: before PID 1 exits); supervise_timeout_ms is
 * how long until then (-1: nothing waits).
 */
void supervise_flush(bool all);
int supervise_timeout_ms(void);
/* Notifications PID 1 receives together and decides in one batch, at most. */
#define SUPERVISE_BATCH_MAX 16
/*
 * PID 1: answer the N (<= SUPERVISE_BATCH_MAX) notifications received together
 * (kernel.c), none a kernel refusal, each of SIZE bytes: the calls of history-free
 * actions decided in one DecideBatchRequest, the others one by one.
 */
void supervise_handle(const struct seccomp_notif *const *reqs, size_t n, size_t size);

#endif
