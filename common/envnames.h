/*
 * envnames.h — the environment variable names box reserves (docs/box.ini.5.md
 * [agent.env]): what box sets itself (proxy, CA, PWD, USER, BOX_*), and the
 * interpreter hooks that would run code before a program's own (LD_*,
 * PYTHON*, NODE_OPTIONS, BASH_ENV …). One list for boxctl (a config naming
 * one is refused), boxd (re-checked before a plan; a tool's assigned
 * variables filtered) and box-shell (the alias's environment filtered).
 * Library code: pure, never logs.
 */
#ifndef BOX_ENVNAMES_H
#define BOX_ENVNAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Is the variable NAME (its first LEN bytes) reserved? */
bool box_env_reserved_n(const char *name, size_t len);
/* The same for a NUL-terminated name. */
bool box_env_reserved(const char *name);

#endif
