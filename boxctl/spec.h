/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec.h — struct box_config (boxctl/config.h) → Box__BoxSpec (proto/boxd.proto).
 *
 * What boxctl loaded as the caller becomes the request boxd re-checks: every
 * value keeps its line (file 0 is box.ini, file 1 the policy when there is
 * one), defaults that depend on where the box runs (state_dir, workspace)
 * travel only when box.ini wrote them, and the contents of the files box
 * needs (policy, upstream_ca, hosts_file) and secret values travel inline.
 * Trusts: the loaded config (validated by box_config_load); boxd trusts none
 * of what this builds.
 */
#ifndef BOXCTL_SPEC_H
#define BOXCTL_SPEC_H

#include "boxd.pb-c.h"
#include "config.h"

/*
 * Build the spec. `cwd` is the caller's working directory (the default
 * workspace). Returns 0 and *ret (free with box_spec_free); exits on ENOMEM.
 */
int box_spec_from_config(const struct box_config *cfg, const char *cwd, Box__BoxSpec **ret);
/* Free a spec built here (wipes secret values first). NULL-tolerant. */
void box_spec_free(Box__BoxSpec *spec);

#endif
