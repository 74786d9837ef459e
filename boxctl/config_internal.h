/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_internal.h — what boxctl's box.ini loader shares between its parts.
 *
 * config_parse.c: the bytes of the file — pre-scan, inih through the
 * line-counting reader, key taking, value syntax, duplicates, the order of
 * passes and the error list. config_rules.c: each section's rules and the
 * cross-section checks, on what the parse produced. config_host.c: every
 * check that looks at the host as the caller (files, symlinks, canonical
 * spellings, the passwd database, exec bits, hard links, secrets, cgroups,
 * Landlock), reached only through struct config_host, so that the first two
 * link (and are fuzzed) without it: box_config_parse_buffer() runs them
 * with config_host_none, which answers from a given passwd entry and never
 * touches the file system.
 * Trusts: see each file.
 */
#ifndef BOX_CONFIG_INTERNAL_H
#define BOX_CONFIG_INTERNAL_H

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "treewalk.h"

#define MAX_ERRORS 500
#define SHEBANG_MAX 256
#define SHEBANG_DEPTH 4
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* ------------------------------------------------------------------ */
/* the raw file: pre-scan + inih                                        */

enum line_kind {
	L_BLANK,      /* blank or comment */
	L_SECTION,
	L_KEY,
	L_CONT,
	L_BAD,        /* refused (reported) or skipped: fed to inih as blank */
};

struct line {
	const char *text;     /* not NUL-terminated */
	size_t len;
	enum line_kind kind;
	int section;          /* raw section index; -1 before any, -2 ignored */
};

struct raw_value {
	char *text;
	unsigned line;
};

struct raw_key {
	char *name;
	unsigned line;
	struct raw_value *values; /* values[0] from the key line, then continuations */
	size_t n;
	bool used;
};

struct raw_section {
	char *name;
	unsigned line;
	struct raw_key *keys;
	size_t n;
	char **long_keys;     /* keys on lines refused as over-long: not also "missing" */
	size_t n_long_keys;
};

enum sec_kind {
	SK_BOX,
	SK_AGENT,
	SK_AGENT_ENV,
	SK_AGENT_FS,
	SK_TOOL,
	SK_TOOL_ENV,
	SK_TOOL_FS,
	SK_TOOL_NET,
	SK_EGRESS,
	SK_MCP,
	SK_MCP_ENV,
	SK_MCP_FS,
	SK_MCP_NET,
	SK_GATEWAY,
	SK_UNKNOWN,
};

/* A named family: [tool.X] with its sub-sections, [egress.X], [mcp.X]. */
struct group {
	char *name;
	struct raw_section *main, *env, *fs, *net;
};

struct ctx {
	struct box_config *cfg;
	struct box_config_errors *errs;
	struct box_config_options opts;
	const struct config_host *host;
	const struct passwd *owner_fixture; /* config_host_none's one passwd entry */
	const char *file;
	size_t n_suppressed;
	size_t first_err;     /* errs->n when this load started */

	struct line *lines;
	size_t n_lines, next_line, cur_line;
	struct raw_section *secs;
	size_t n_secs;

	struct raw_section *box, *agent, *agent_env, *agent_fs, *gateway;
	struct group *tools, *egress, *mcp, *telemetry;
	size_t n_tools, n_egress, n_mcp, n_telemetry;

	uid_t caller;
	char *caller_home;
	const char *home;     /* the owner's home, for ~ */
	int landlock_abi;
	char **tmp;           /* strings made for messages */
	size_t n_tmp;
	struct box_walk_budget walk; /* the deny hard-link walk's bound, per load */
	/* box's own directories and the sockets' places (own_paths_init) */
	struct own_path {
		const char *path;
		const char *what;
	} own[6], sockets[6];
	size_t n_own, n_sockets;
	size_t n_file_secrets; /* file:// secrets so far: each is masked in every view */
};


#define GROW(arr, n) ((arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr))), &(arr)[(n)++])

/* Every value of every occurrence of a list key (index loops: keys may be NULL). */
#define for_each_value(s, keyname, k, v)                                                     \
	for (size_t k##_i = 0; k##_i < (s)->n; k##_i++)                                      \
		for (struct raw_key *k = &(s)->keys[k##_i]; k; k = NULL)                     \
			if (strcmp(k->name, (keyname)) == 0)                       \
				for (size_t v##_j = 0; v##_j < k->n; v##_j++)                 \
					for (struct raw_value *v = &k->values[v##_j]; v;      \
					     v = NULL)

enum num_kind { NUM_DURATION, NUM_SIZE, NUM_COUNT, NUM_PORT };

/* A file masked in every view (box.ini, the policy, secrets): what a grant must not hold. */
struct masked_file {
	const char *path;
	const char *what;
	const char *how; /* "masked in every sandbox view", "shown read-only in every sandbox view" */
};

/*
 * What the rules ask the host. The first four are asked on every load; the
 * rest only when the load is not offline (the rules check first).
 */
struct config_host {
	/* The passwd entry of UID / NAME, or NULL. */
	const struct passwd *(*user_by_uid)(struct ctx *c, uid_t uid);
	const struct passwd *(*user_by_name)(struct ctx *c, const char *name);
	/* The current directory (malloc'd), or NULL with errno. */
	char *(*cwd)(void);
	/* The kernel's Landlock ABI, 0 when none. */
	int (*landlock_abi)(void);

	/* path_canonicalize() as the caller. */
	int (*canonicalize)(const char *path, char **ret);
	/* A regular file as the caller, at most MAX bytes (see config_host.c). */
	int (*read_file)(struct ctx *c, const char *path, size_t max, bool secret, char **data,
			 size_t *len, const char **why);
	/* A grant's checks on the file system; false after reporting. *is_dir: what it names. */
	bool (*grant_check)(struct ctx *c, struct raw_section *s, const char *key, enum box_fs_kind kind,
			    struct raw_value *v, const char *abs, bool *is_dir);
	/* Resolve a command's element 0 (W0) on PATH and follow its #! chain. */
	void (*command_resolve)(struct ctx *c, struct raw_section *s, struct raw_key *k,
				struct box_process *p, bool agent, const char *w0);
	/* stat(): an existing directory. */
	bool (*is_dir)(const char *path);
	/* lstat(): something that exists and is not a directory. */
	bool (*exists_not_dir)(const char *path);
	/* The cgroup controllers the host offers (box_host_cgroups_probe). */
	int (*cgroups)(const char *mountinfo, const char *root_prefix, struct box_host_cgroups *ret);
	/* The state dir as the box owner O would use it: box-recheck's verdict (0, or an
	 * error reported at LINE), without creating anything. */
	void (*state_dir_check)(struct ctx *c, const char *path, unsigned line,
				const struct box_owner *o);
};

/* The host as the caller (config_host.c). */
extern const struct config_host config_host_caller;
/* No host: answers from ctx.owner_fixture and "/" (config_parse.c); offline only. */
extern const struct config_host config_host_none;

extern const char *const shell_msg;

/* config_parse.c */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_at(struct ctx *c, unsigned line, const char *section, const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
const char *q(struct ctx *c, const char *s);
const char *qs(struct ctx *c, const char *s);
const char *keep(struct ctx *c, char *s);
bool is_blank(char ch);
struct raw_key *take_scalar(struct ctx *c, struct raw_section *s, const char *name);
struct raw_key *take_command(struct ctx *c, struct raw_section *s);
bool take_list(struct raw_section *s, const char *name);
const char *val(struct raw_key *k);
unsigned vline(struct raw_key *k);
struct box_src src_at(struct ctx *c, unsigned line);
void get_bool(struct ctx *c, struct raw_section *s, const char *key, struct box_bool *dst, bool def);
void get_num(struct ctx *c, struct raw_section *s, const char *key, enum num_kind kind, uint64_t max,
	struct box_u64 *dst, uint64_t def);
bool get_enum(struct ctx *c, struct raw_section *s, const char *key, const char *const *names,
	 struct box_enum *dst, int def);
bool valid_name(const char *s, size_t max, const char *extra);
bool valid_env_name(const char *s);
int config_load(struct ctx *c, const char *data, size_t len, struct box_config **ret);
void config_ctx_init(struct ctx *c, const char *name, const struct box_config_options *opts,
		     const struct config_host *host, struct box_config_errors *errs);
/* config_rules.c */
bool in_list(const char *const *list, const char *s);
char *join_list(const char *const *list, const char *sep);
const char *shown(struct ctx *c, const char *canon, const char *spelling);
void own_paths_init(struct ctx *c);
bool is_shell_name(const char *base);
void add_interpreter(struct box_command *cmd, const char *canon);
void section_empty_check(struct ctx *c, struct raw_section *s);
void process_owner(struct ctx *c);
void process_box(struct ctx *c);
void process_gateway(struct ctx *c);
void process_egress(struct ctx *c, struct group *gr, struct box_egress *e);
void process_agent(struct ctx *c);
void process_tool(struct ctx *c, struct group *gr, struct box_tool *t);
void process_mcp(struct ctx *c, struct group *gr, struct box_mcp *m);
void process_telemetry(struct ctx *c, struct group *gr, struct box_telemetry *t);
void fs_cross_check(struct ctx *c, const char *secname, struct box_filesystem *fs,
	       const struct masked_file *files, size_t n_files);
void egress_cross_check(struct ctx *c);
void mcp_cross_check(struct ctx *c);
void landlock_check(struct ctx *c, struct box_process *p, const char *secname);
/* A tool's or server's grant inside an [agent.filesystem] deny entry: refused (path_reach). */
void agent_deny_check(struct ctx *c, const char *secname, const struct box_filesystem *fs);
/* The grant paths of fs (every list but deny), for path_reach; caller frees the array. */
const char **fs_grant_paths(const struct box_filesystem *fs, size_t *n);
void limits_check(struct ctx *c);

#endif
