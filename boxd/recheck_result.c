/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck_result.c — freeing a box-recheck result (boxd.h struct
 * recheck_result): its strings, its problems and the state fds box-recheck
 * opened as the owner. Apart from recheck.c so that plan building can be
 * linked and tested without the helper's spawn and event code.
 * Trusts: nothing; it only frees.
 */
#include <stdlib.h>
#include <string.h>

#include "boxd.h"
#include "cleanup.h"

void
recheck_result_clear(struct recheck_result *res)
{
	free(res->argv0);
	free(res->program);
	for (size_t i = 0; i < res->n_interpreters; i++)
		free(res->interpreters[i]);
	free(res->interpreters);
	for (size_t i = 0; i < res->n_loaders; i++)
		free(res->loaders[i]);
	free(res->loaders);
	for (size_t i = 0; i < res->n_deny_dirs; i++)
		free(res->deny_dirs[i]);
	free(res->deny_dirs);
	for (size_t i = 0; i < res->n_masks; i++) {
		free(res->masks[i]);
		free(res->mask_via[i]);
	}
	free(res->masks);
	free(res->mask_via);
	free(res->mask_is_dir);
	for (size_t i = 0; i < res->n_sockets; i++)
		free(res->sockets[i]);
	free(res->sockets);
	free(res->scan_cut);
	for (size_t i = 0; i < res->n_tools; i++) {
		free(res->tool_names[i]);
		free(res->tool_programs[i]);
	}
	free(res->tool_names);
	free(res->tool_programs);
	for (size_t i = 0; i < res->n_mcp; i++) {
		free(res->mcp_names[i]);
		free(res->mcp_programs[i]);
	}
	free(res->mcp_names);
	free(res->mcp_programs);
	free(res->workspace);
	free(res->state_dir);
	res->state_dirfd = safe_close(res->state_dirfd);
	res->lock_fd = safe_close(res->lock_fd);
	res->log_fd = safe_close(res->log_fd);
	res->policy_dirfd = safe_close(res->policy_dirfd);
	res->decisions_fd = safe_close(res->decisions_fd);
	res->ca_fd = safe_close(res->ca_fd);
	for (size_t i = 0; i < res->n_telemetry_fds && i < BOX_TELEMETRY_FILES_MAX; i++)
		safe_close(res->telemetry_fds[i]);
	for (size_t i = 0; i < res->n_problems; i++)
		problem_free(res->problems[i]);
	free(res->problems);
	memset(res, 0, sizeof(*res));
	res->state_dirfd = res->lock_fd = res->log_fd = res->policy_dirfd = res->decisions_fd = res->ca_fd = -1;
}
