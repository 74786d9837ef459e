/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.h — path spelling: canonical checks and the `~/` form of docs/box-policy.5.md.
 *
 * Pure string functions except path_canonicalize (realpath). Negative errno.
 * Trusts: nothing; paths come from users and peers.
 */
#ifndef BOX_PATH_H
#define BOX_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define BOX_PATH_MAX 4096

/*
 * Is `p` a clean absolute spelling: starts with '/', no empty, '.' or '..'
 * component, no trailing '/' (except "/" itself), no control characters?
 */
bool path_is_clean_absolute(const char *p);
/* Does `p` contain glob characters (* ? [ ])? */
bool path_has_glob(const char *p);
/* Is `child` equal to `parent` or below it (component-wise)? */
bool path_is_under(const char *child, const char *parent);
/* The system runtime every sandbox sees read-only: /usr /lib /lib64 /bin /sbin. */
extern const char *const path_system_runtime[5];
/* Does the clean absolute `p` lie in the system runtime (lexically)? */
bool path_is_system_runtime(const char *p);
/* Join two spellings with exactly one '/'. Caller frees. */
char *path_join(const char *a, const char *b);
/*
 * Expand "~" and "~/rel" against `home`; other spellings are copied.
 * "~user" is refused with -EINVAL. Caller frees *ret.
 */
int path_expand_home(const char *p, const char *home, char **ret);
/*
 * The policy spelling: an absolute path under `home` becomes "~" or "~/rel";
 * anything else is copied. Caller frees *ret.
 */
int path_to_home_form(const char *p, const char *home, char **ret);
/*
 * How a sandbox whose grants are `grants` (n paths) reaches `denied`, a path
 * the agent's `deny` list hides (box.ini(5): "hidden in every view"); *which
 * (may be NULL) is the grant that decided (the inner one for INSIDE):
 *   PATH_REACH_NONE       no grant holds it or lies inside it: not in the view
 *   PATH_REACH_MASK       a grant holds it strictly: the view gets a mask over it
 *   PATH_REACH_EXCEPTION  a grant names it exactly: the entry's deliberate exception
 *   PATH_REACH_INSIDE     a grant lies strictly inside it (and none names it):
 *                         refused, as a grant inside a credential store is — a
 *                         denied path is reached only by naming it exactly
 */
enum path_reach {
	PATH_REACH_NONE,
	PATH_REACH_MASK,
	PATH_REACH_EXCEPTION,
	PATH_REACH_INSIDE,
};
enum path_reach path_reach(const char *denied, const char *const *grants, size_t n,
			   size_t *which);
/* realpath(3) with negative errno; caller frees *ret. */
int path_canonicalize(const char *p, char **ret);
/* Last component (points into p) and parent (allocated). */
const char *path_basename(const char *p);
int path_dirname(const char *p, char **ret);

#endif
