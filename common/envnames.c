/* SPDX-License-Identifier: Apache-2.0 */
/*
 * envnames.c — the reserved environment variable names (envnames.h).
 * Trusts: its arguments. Pure, never logs.
 */
#include <string.h>

#include "envnames.h"

static const char *const reserved_exact[] = { BOX_ENV_RESERVED_NAMES };
static const char *const reserved_prefix[] = { "LD_", "PYTHON", "BOX_" };

bool
box_env_reserved_n(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(reserved_exact) / sizeof(*reserved_exact); i++)
		if (strlen(reserved_exact[i]) == len && memcmp(reserved_exact[i], name, len) == 0)
			return true;
	for (size_t i = 0; i < sizeof(reserved_prefix) / sizeof(*reserved_prefix); i++) {
		size_t l = strlen(reserved_prefix[i]);
		if (len >= l && memcmp(reserved_prefix[i], name, l) == 0)
			return true;
	}
	return false;
}

bool
box_env_reserved(const char *name)
{
	return box_env_reserved_n(name, strlen(name));
}
