/*
 * path.h — path spelling: canonical checks and the `~/` form of POLICY.md §2.
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
/* realpath(3) with negative errno; caller frees *ret. */
int path_canonicalize(const char *p, char **ret);
/* Last component (points into p) and parent (allocated). */
const char *path_basename(const char *p);
int path_dirname(const char *p, char **ret);

#endif
