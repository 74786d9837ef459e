/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h — box.ini (docs/box.ini.5.md): load, validate, print.
 *
 * box_config_load() reads box.ini as the calling user, parses it with inih,
 * checks every rule of docs/box.ini.5.md (spelling, values, the file system as the
 * caller sees it, secrets) and either returns a struct box_config or the
 * complete list of refusals, each naming file, line, section and key.
 * Files box itself needs (the policy, upstream_ca, hosts_file, file://
 * secrets) are read here, so their contents travel in the request and no
 * daemon opens a user's file.
 *
 * The struct is plain data meant to be converted into the BoxSpec message:
 * every string is owned by the struct (freed by box_config_free), every
 * value remembers where it came from (struct box_src; line 0 = a default),
 * and every optional value says whether the file set it. Effective defaults
 * are filled in, except where the default depends on something this module
 * does not know (documented per field).
 *
 * Trusts: nothing in the file; the caller's identity from getuid(), the
 * passwd database, and boxctl's own environment (PATH, XDG_*, env:// secrets).
 */
#ifndef BOXCTL_CONFIG_H
#define BOXCTL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Caps on what boxctl reads on the box's behalf. */
#define BOX_CONFIG_FILE_MAX (1UL << 20)    /* box.ini */
#define BOX_POLICY_FILE_MAX (4UL << 20)    /* the policy */
#define BOX_AUX_FILE_MAX (4UL << 20)       /* upstream_ca, hosts_file */
#define BOX_SECRET_FILE_MAX (64UL << 10)   /* a file:// secret */
#define BOX_CONFIG_LINE_MAX 199            /* bytes of one line, newline excluded */
#define BOX_NAME_MAX 32                    /* box, tool, egress and mcp names */

/* Where a value came from: the file (box_config.path) and its 1-based line; 0 = default. */
struct box_src {
	const char *file;
	unsigned line;
};

/* An optional string: value NULL when unset (and no default applies). */
struct box_str {
	char *value;
	struct box_src src;
};

/* A number with its effective value; `set` when the file wrote it. */
struct box_u64 {
	uint64_t value;
	bool set;
	struct box_src src;
};

struct box_bool {
	bool value;
	bool set;
	struct box_src src;
};

/* An enumerated value (one of the enums below). */
/* [box] ask (docs/box.ini.5.md): what is held for a person besides @ask forbids. */
enum box_ask {
	BOX_ASK_NONE = 0,    /* only forbids annotated @ask */
	BOX_ASK_DEFAULT = 1, /* also the default deny: a request no permit matches */
};

struct box_enum {
	int value;
	bool set;
	struct box_src src;
};

/* A file boxctl read as the caller for box's own use. path NULL: none. */
struct box_file {
	char *path;   /* absolute, canonical */
	char *data;   /* contents, NUL-terminated (len excludes the NUL) */
	size_t len;
	struct box_src src;
};

/* ---- processes: [agent], [tool.NAME], stdio [mcp.NAME] ---- */

struct box_command {
	/*
	 * argv[0] is the program as resolved: the absolute path written, or the
	 * bare name found on PATH (not canonicalized). NULL-terminated.
	 */
	char **argv;
	size_t argc;
	char *written0;       /* element 0 as written */
	char *program;        /* canonical path of the program file (implicit exec grant) */
	/* The #! chain, canonical, outermost first (each one an implicit exec grant). */
	char **interpreters;
	size_t n_interpreters;
	struct box_src src;
};

enum box_fs_kind {
	BOX_FS_READ,
	BOX_FS_WRITE,
	BOX_FS_READ_FILE,
	BOX_FS_WRITE_FILE,
	BOX_FS_EXEC,          /* [agent.filesystem] only */
	BOX_FS_DENY,
	BOX_FS_KIND_COUNT,
};

struct box_grant {
	char *path;           /* absolute and canonical (~ expanded) */
	char *spelling;       /* as written, may start with ~ */
	bool is_dir;
	bool credential_store; /* names ~/.ssh, ~/.aws, ... exactly: disclosed at start */
	struct box_src src;
};

struct box_grant_list {
	struct box_grant *v;
	size_t n;
};

struct box_filesystem {
	struct box_grant_list lists[BOX_FS_KIND_COUNT];
	struct box_src src;   /* the section header */
};

struct box_env_var {
	char *name;
	char *value;
	bool set;             /* false: a default box fills in (HOME, PATH) */
	struct box_src src;
};

/* One environment section, sorted by name; includes the HOME and PATH defaults. */
struct box_env {
	struct box_env_var *v;
	size_t n;
	struct box_src src;   /* the section header */
};

struct box_process {
	struct box_command command;
	/*
	 * Absolute and existing directory. [agent]: the caller's cwd when unset.
	 * [tool]: NULL when unset (decided per spawn). stdio [mcp]: always NULL.
	 */
	struct box_str workspace;
	struct box_u64 nofile, nproc;       /* set == false: none (not for mcp) */
	struct box_env env;
	struct box_filesystem fs;
	struct box_bool contain_egress;     /* tools and stdio mcp; default true */
	struct box_src network_src;         /* the [*.network] header, if any */
};

/* ---- [box] ---- */

enum box_layer {
	BOX_LAYER_USERNS = 1 << 0,
	BOX_LAYER_MOUNTNS = 1 << 1,
	BOX_LAYER_NETNS = 1 << 2,
	BOX_LAYER_LANDLOCK = 1 << 3,
	BOX_LAYER_SECCOMP = 1 << 4,
	BOX_LAYER_ALL = (1 << 5) - 1,
};

enum box_history_sync {
	BOX_HISTORY_SYNC_AUTO,   /* unset: `always` with a temporal rule, else `off` — the policy decides */
	BOX_HISTORY_SYNC_ALWAYS,
	BOX_HISTORY_SYNC_BATCH,
	BOX_HISTORY_SYNC_OFF,
};

struct box_box {
	struct box_str name;
	struct box_file policy;              /* path NULL: no policy */
	char *policy_written;                /* the `policy` value as written */
	struct box_str state_dir;            /* effective, absolute (may not exist yet) */
	struct box_u64 require;              /* enum box_layer mask; default BOX_LAYER_ALL */
	struct box_u64 timeout_ms;           /* set == false: none */
	struct box_u64 command_timeout_ms;   /* set == false: none */
	struct box_u64 ask_timeout_ms;       /* set == false: box-policyd's default (30 s) */
	struct box_enum history_sync;        /* enum box_history_sync; AUTO until the policy is loaded */
	struct box_bool show_policy;         /* the policy shown read-only instead of masked */
	struct box_enum ask;                 /* enum box_ask: what a person is asked about */
	struct box_enum snapshot;            /* 0 none, 1 workspace (docs/snapshot.md) */
	struct box_u64 snapshot_max;         /* set == false: no cap */
	struct box_src src;
};

/* ---- [agent] ---- */

struct box_owner {
	uid_t uid;
	gid_t gid;
	char *name;
	char *home;           /* from the passwd database, never $HOME */
	bool set;             /* [agent] user written */
	struct box_src src;
};

struct box_agent {
	struct box_process proc;
	struct box_owner user;
	struct box_u64 memory_max;           /* bytes; set == false: none */
	struct box_u64 pids_max;             /* set == false: none */
	struct box_bool exec_system;         /* every system program executable (Landlock) */
	bool person_shell;                   /* no command: a person's interactive box shell */
	struct box_enum supervise;           /* enum box_supervise */
	struct box_src src;
};

enum box_supervise {
	BOX_SUPERVISE_NONE,
	BOX_SUPERVISE_FS,
};

struct box_tool {
	char *name;
	struct box_process proc;
	struct box_enum supervise;           /* enum box_supervise */
	struct box_src src;
};

/* ---- credentials: [egress.NAME] and http [mcp.NAME] ---- */

enum box_secret_kind {
	BOX_SECRET_NONE,
	BOX_SECRET_ENV,
	BOX_SECRET_FILE,
};

struct box_secret {
	int kind;             /* enum box_secret_kind */
	char *ref;            /* as written: env://NAME or file:///path — printable */
	char *path;           /* file://: the canonical path (masked in every view) */
	char *value;          /* the secret: never log or print it */
	size_t len;
	struct box_src src;
};

enum box_placement {
	BOX_PLACEMENT_HEADER,
	BOX_PLACEMENT_BASIC_AUTH,
	BOX_PLACEMENT_QUERY_PARAM,
};

enum box_inject {
	BOX_INJECT_PLACEHOLDER,
	BOX_INJECT_ALWAYS,
};

struct box_destination {
	char *host;           /* lowercase; for a wildcard the domain after "*." */
	bool wildcard;        /* "*.domain": subdomains only */
	uint16_t port;        /* 443 when not written */
	char *path_prefix;    /* "/a/b" (whole segments) or NULL */
	char *spelling;       /* as written */
	struct box_src src;
};

struct box_egress {
	char *name;
	struct box_destination *dest;
	size_t n_dest;
	struct box_secret secret;
	struct box_str variable;             /* effective: NAME of env://NAME when unset */
	struct box_enum placement;           /* enum box_placement */
	struct box_str header;               /* effective: Authorization (header placement only) */
	struct box_str prefix;               /* effective: "Bearer " on Authorization, else "" */
	struct box_str param;                /* query_param only */
	struct box_enum inject;              /* enum box_inject */
	struct box_str placeholder_prefix;   /* effective: box_ */
	/*
	 * "agent", "tool.NAME", "mcp.NAME" (each names a section of this config,
	 * written order); n_sandboxes 0: every sandbox of the box.
	 */
	char **sandboxes;
	size_t n_sandboxes;
	struct box_src sandboxes_src;
	struct box_src src;
};

enum box_mcp_type {
	BOX_MCP_STDIO,
	BOX_MCP_HTTP,
};

struct box_mcp {
	char *name;
	char *ns;             /* the policy namespace: name with [^A-Za-z0-9_] -> '_' */
	struct box_enum type;                /* enum box_mcp_type */
	/* stdio */
	struct box_process proc;
	struct box_str alias;                /* effective: basename of command */
	struct box_enum supervise;           /* enum box_supervise */
	/* both */
	struct box_bool allow_tool_changes;
	struct box_u64 max_frame;            /* bytes; default 4M, at most 64M */
	struct box_u64 call_timeout_ms;      /* default 60s, at most 366 days */
	/* http */
	struct box_str url;
	struct box_destination url_dest;     /* host/port/path of url (path_prefix = the path) */
	struct box_secret secret;            /* kind NONE: no credential */
	struct box_enum placement;
	struct box_str header;
	struct box_str prefix;
	struct box_src src;
};

/* ---- [telemetry.NAME] ---- */

enum box_telemetry_kind {
	BOX_TELEMETRY_FILE,
	BOX_TELEMETRY_OTLP,
};

enum box_telemetry_protocol {
	BOX_TELEMETRY_PROTOBUF,  /* http/protobuf */
	BOX_TELEMETRY_JSON,      /* http/json */
};

/* include = ...: what a target receives (bits; default all). */
enum box_telemetry_include {
	BOX_TELEMETRY_DENY = 1 << 0,
	BOX_TELEMETRY_PERMIT = 1 << 1,
	BOX_TELEMETRY_CONTROL = 1 << 2,
	BOX_TELEMETRY_KERNEL = 1 << 3,
	BOX_TELEMETRY_AGENT = 1 << 4,
	BOX_TELEMETRY_ALL = (1 << 5) - 1,
};

/* The names of include's bits, in bit order (NULL-ended). */
extern const char *const box_telemetry_include_names[];

struct box_telemetry {
	char *name;
	struct box_enum kind;                /* enum box_telemetry_kind */
	/* file: the absolute path (~ expanded); otlp: the url as written */
	struct box_str destination;
	struct box_destination url_dest;     /* otlp: host, port, path (path_prefix) */
	bool url_https;                      /* otlp: https:// */
	struct box_u64 include;              /* enum box_telemetry_include mask */
	struct box_enum protocol;            /* enum box_telemetry_protocol (otlp only) */
	struct box_secret secret;            /* otlp only; kind NONE: no credential */
	struct box_enum placement;           /* header or basic_auth */
	struct box_str header;
	struct box_str prefix;
	struct box_src src;
};

/* ---- [gateway] ---- */

struct box_gateway {
	struct box_u64 port;                 /* default 3128 */
	struct box_u64 connect_timeout_ms;   /* default 10s */
	struct box_u64 idle_timeout_ms;      /* default 300s */
	struct box_u64 max_connections;      /* default 1024 */
	struct box_u64 max_request_body;     /* default 64M */
	struct box_file upstream_ca;         /* path NULL: system roots only */
	struct box_str resolver;             /* "IP:PORT" or "[IPv6]:PORT"; NULL: the host's */
	struct box_file hosts_file;
	struct box_bool allow_host_loopback;
	/* host:port entries relayed as plain TCP (port always written; no path) */
	struct box_destination *passthrough;
	size_t n_passthrough;
	struct box_src src;
};

struct box_config {
	char *path;           /* as given to box_config_load (what errors name) */
	char *abs_path;       /* canonical path of box.ini (masked in every view) */
	uid_t caller_uid;
	bool service;         /* state_dir resolved for the service boxd */
	char *runtime_base;   /* BASE of docs/boxctl.1.md (runtime dirs live in BASE/ID) */

	struct box_box box;
	struct box_agent agent;
	struct box_tool *tools;    /* sorted by name */
	size_t n_tools;
	struct box_egress *egress; /* sorted by name */
	size_t n_egress;
	struct box_mcp *mcp;       /* sorted by name */
	size_t n_mcp;
	struct box_telemetry *telemetry; /* sorted by name */
	size_t n_telemetry;
	struct box_gateway gateway;
};

/* ---- errors ---- */

struct box_config_error {
	char *file;           /* NULL: not about a file */
	unsigned line;        /* 0: file-level */
	char *section;        /* NULL: file-level */
	char *key;            /* NULL: section-level */
	char *message;
};

struct box_config_errors {
	struct box_config_error *v;
	size_t n;
};

void box_config_errors_clear(struct box_config_errors *errs);
/* One line each: "boxctl: FILE:LINE: [SECTION] KEY: MESSAGE" (docs/boxctl.1.md). */
void box_config_errors_print(FILE *f, const struct box_config_errors *errs);

/* ---- loading ---- */

struct box_config_options {
	/* Resolve state_dir for the service boxd (/var/lib/box/UID/NAME). */
	bool service;
	/*
	 * Skip everything that looks at the host: the file system, the passwd
	 * database beyond the caller, secrets, cgroups, Landlock. For fuzzing and
	 * syntax-only checks; the result must not be used to start a box.
	 */
	bool offline;
	/* Landlock ABI to assume; 0 = probe the kernel (-1 = none). */
	int landlock_abi;
	/* /proc/self/mountinfo to read for cgroup controllers; NULL = the real one. */
	const char *mountinfo;
	/* Prefix for cgroup2 mount points found there (tests); NULL = none. */
	const char *cgroup_root_prefix;
};

/*
 * Load and validate `path` as the calling user. Returns 0 and *ret, or
 * -EINVAL with every refusal appended to *errs (and *ret NULL), or -ENOMEM.
 * `opts` may be NULL.
 */
int box_config_load(const char *path, const struct box_config_options *opts,
		    struct box_config **ret, struct box_config_errors *errs);
/* Same, from memory; `name` is what errors call the file (fuzzing, tests). */
int box_config_load_buffer(const char *name, const char *data, size_t len,
			   const struct box_config_options *opts, struct box_config **ret,
			   struct box_config_errors *errs);
/*
 * The same rules on the bytes alone (config_parse.c, config_rules.c; no
 * config_host.c): always offline, and OWNER stands for the passwd database
 * (the caller is OWNER's uid; `user =` finds only OWNER). For fuzzing.
 */
struct passwd;
int box_config_parse_buffer(const char *name, const char *data, size_t len,
			    const struct box_config_options *opts, const struct passwd *owner,
			    struct box_config **ret, struct box_config_errors *errs);
void box_config_free(struct box_config *cfg);

/*
 * The normalized config as canonical INI (docs/boxctl.1.md `check`): fixed section
 * order, effective values, ~ expanded, sizes in bytes, durations in ms,
 * command re-quoted, secrets by reference only. Ends before the policy line.
 */
int box_config_print(FILE *f, const struct box_config *cfg);

/* ---- host probes (exposed for tests) ---- */

struct box_host_cgroups {
	bool v2_memory, v2_pids;   /* in the unified root's cgroup.controllers */
	bool v1_memory, v1_pids;   /* a mounted v1 hierarchy */
};

/* The cgroup mounts in MOUNTINFO (NULL: /proc/self/mountinfo) and what they offer. */
int box_host_cgroups_probe(const char *mountinfo, const char *root_prefix,
			   struct box_host_cgroups *ret);

#endif
