/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sh.h — the interpreter's internals: the syntax tree
 * (parse.c), the shell state (vars.c), expansion (expand.c, arith.c,
 * pattern.c), execution (exec.c, redir.c) and the builtins (builtins.c).
 *
 * The script is the agent's text: nothing in it is trusted. Every size a
 * script controls is capped (SH_MAX_*; docs/box-sh.1.md names them): parse
 * nesting, function/eval/source nesting, a variable's value, one word's
 * expansion, the number of fields, a command substitution's output.
 */
#ifndef BOX_SHELL_SH_H
#define BOX_SHELL_SH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cmd.h"
#include "decide.h"
#include "fsops.h"

#define SH_MAX_SCRIPT      (16u << 20)  /* a script or -c string */
#define SH_MAX_PARSE_DEPTH 1000         /* nested compound commands / substitutions */
#define SH_MAX_CALL_DEPTH  1000         /* functions, eval, source, subshell parsing */
#define SH_MAX_VALUE       (16u << 20)  /* one variable's value */
#define SH_MAX_EXPANSION   (64u << 20)  /* one word's expansion, a $(...) output */
#define SH_MAX_FIELDS      (1u << 20)   /* words of one command after expansion */
#define SH_MAX_ARRAY       (1u << 20)   /* highest index of an indexed array */

/* ---- growable strings ---- */
struct sbuf {
	char *s;
	size_t len, cap;
};
void sb_addn(struct sbuf *b, const char *s, size_t n);
void sb_adds(struct sbuf *b, const char *s);
void sb_addc(struct sbuf *b, char c);
char *sb_take(struct sbuf *b);     /* NUL-terminated, resets b */
void sb_free(struct sbuf *b);
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* ---- syntax tree ---- */
enum redir_type {
	R_IN, R_OUT, R_CLOBBER, R_APPEND, R_RDWR, R_DUPIN, R_DUPOUT, R_HEREDOC, R_HERESTR,
	R_ALLOUT, R_ALLAPPEND,
};
struct redir {
	struct redir *next;
	enum redir_type type;
	int fd;                 /* -1: the default for the type */
	char *word;             /* raw word (target / delimiter) */
	char *body;             /* here-doc body */
	bool quoted;            /* here-doc delimiter was quoted: no expansion */
	bool strip_tabs;        /* <<- */
};

struct word {
	struct word *next;
	char *s;                /* raw text with quoting */
};

enum node_type {
	N_SIMPLE, N_PIPE, N_AND, N_OR, N_LIST, N_ASYNC, N_NOT, N_SUBSHELL, N_GROUP, N_IF,
	N_WHILE, N_UNTIL, N_FOR, N_AFOR, N_CASE, N_FUNC, N_DBRACK, N_ARITH,
};
struct case_item {
	struct case_item *next;
	struct word *pats;
	struct node *body;
	int term;               /* 0 ;;  1 ;&  2 ;;& */
};
struct node {
	enum node_type type;
	int line;
	int refs;               /* function bodies: shared by the tree and the table */
	struct redir *redirs;
	union {
		struct {
			struct word *assigns, *words;
		} s;
		struct {
			struct node **v;
			size_t n;
			bool bang;
			bool pipe_err; /* |& per stage: v[i] has 2>&1 */
			bool timed;    /* `time [-p]` before the pipeline (a keyword) */
			bool time_posix;
		} p;            /* N_PIPE, N_LIST */
		struct {
			struct node *a, *b, *c;
		} b;            /* AND OR NOT ASYNC SUBSHELL GROUP IF WHILE UNTIL */
		struct {
			char *var;
			struct word *words;
			bool has_in;
			struct node *body;
		} f;
		struct {
			char *init, *cond, *step;
			struct node *body;
		} af;
		struct {
			char *word;
			struct case_item *items;
		} c;
		struct {
			char *name;
			struct node *body;
		} fn;
		struct {
			struct word *toks; /* [[ ]] tokens: words and operators */
		} db;
		struct {
			char *expr;
		} ar;
	} u;
};

/* Parser over one text; parse_next gives one complete command at a time. */
struct parser;
struct sh_shell;
struct parser *parser_new(struct sh_shell *sh, const char *text, size_t len, int first_line);
void parser_free(struct parser *p);
/* 1: *out is a command (may be NULL for an empty line); 0: end of text; -1:
 * syntax error (printed). */
int parse_next(struct parser *p, struct node **out);
size_t parser_consumed(const struct parser *p, int *line);
/* A script on standard input: sh_read_script_fd reads FD whole (at most
 * SH_MAX_SCRIPT bytes: -EFBIG; -errno). sh_stdin_note, called before the read,
 * notes fd 0's offset when it is a regular file; exec_stdin_script then runs
 * TEXT (owned: it may be replaced) as bash does such a script: fd 0's offset
 * kept just past the command running, and a command that reads on (a child's
 * `read`) takes those lines from the script. */
int sh_read_script_fd(int fd, char **out, size_t *len);
/* A shell's start: SHLVL (bash), and with PROFILE a login shell's profile (builtins.c). */
void sh_startup(struct sh_shell *sh, bool profile);
/* A host program bash would exec without forking sees SHLVL one lower, as after
 * `exec` (bash's dialect only): the level to restore afterwards, or NULL (builtins.c). */
char *sh_shlvl_nofork(struct sh_shell *sh);
void sh_shlvl_restore(struct sh_shell *sh, char *saved);
void sh_stdin_note(struct sh_shell *sh);
int exec_stdin_script(struct sh_shell *sh, char **text, size_t len);
void node_free(struct node *n);
void node_release(struct node *n); /* drop one reference of a function body */
/* Whole text, no execution (fuzz target, functions): -1 on error. */
int parse_all(struct sh_shell *sh, const char *text, size_t len, int line, struct node **out);
/*
 * Is TEXT a whole input? 1: yes (or nothing but complete commands); 0: it
 * ends too early (an open quote, compound command, here-doc, a trailing `|`
 * or `&&`, a backslash-newline): an interactive shell reads another line;
 * -1: a syntax error more input cannot mend. Prints nothing, runs nothing.
 */
int parse_complete(struct sh_shell *sh, const char *text, size_t len);
/* The end of a $(...) starting at s[0] after "$(": index of the ")" or -1. */
long parse_cmdsub_end(struct sh_shell *sh, const char *s, size_t len);
bool is_name(const char *s, size_t n);
/* bash's text of function NAME with BODY (declare -f, type): malloc'd, ends in a newline. */
char *func_text(const char *name, const struct node *body);

/* ---- variables ---- */
enum {
	V_EXPORT = 1, V_READONLY = 2, V_ARRAY = 4, V_INTEGER = 8, V_UNSET_PLACEHOLDER = 16,
	/* set by this invocation (not inherited): what a tool's environment may
	 * take (docs/design.md) */
	V_ASSIGNED = 32,
	V_ASSOC = 64, /* an associative array (declare -A): as, never arr/val */
	V_UPPER = 128, V_LOWER = 256, V_CAPCASE = 512, /* declare -u -l -c: a value assigned is cased */
	V_CASE = V_UPPER | V_LOWER | V_CAPCASE,
};
/* An associative array: bash's own hash table (FNV-1 keys, 1024 buckets to
 * start, a new key at the head of its bucket, four times the buckets once
 * there are twice as many keys as buckets), so that ${!a[@]} and declare -p
 * list the keys in bash's order. */
struct assoc_ent {
	struct assoc_ent *next;
	char *key, *val;
};
struct assoc {
	size_t nb, n;
	struct assoc_ent **b;
};
struct var {
	struct var *next;   /* hash chain */
	char *name;
	char *val;          /* scalar (NULL: declared without value) */
	char **arr;         /* V_ARRAY: elements, NULL = unset */
	size_t narr;
	struct assoc *as;   /* V_ASSOC: the elements (NULL: none yet) */
	int flags;
	unsigned long seq;  /* when it was made: dash's environment order (vars.c) */
};
struct func {
	struct func *next;
	char *name;
	struct node *body;
	char *text;
};
struct alias {
	struct alias *next;
	char *name, *val;
};
struct saved_var {
	struct saved_var *next;
	char *name;
	struct var *old; /* NULL: was unset */
};
struct frame {
	struct frame *up;
	struct saved_var *saved;
	/* getopts' state at the call, back at the return when the function
	 * made OPTIND local (bash): a recursive getopts loop resumes */
	int getopts_sub;
	long getopts_optind;
};

/* J_TOP: bash's jump to the top level (a readonly variable assigned, outside
 * posix mode): the rest of the script's current top-level command is skipped,
 * the script goes on with the next one (exec_text at the outermost level). */
enum jump { J_NONE, J_BREAK, J_CONTINUE, J_RETURN, J_EXIT, J_TOP };

#define SH_NTRAP (65 + 2)
#define TRAP_EXIT 0
#define TRAP_ERR  65
#define TRAP_DEBUG 66

struct bgjob {
	struct bgjob *next;
	pid_t pid;
	int status;
	bool done;
};

/*
 * A permitted host program (after its fs:read exec and shell:spawn permits),
 * with its stdin, stdout and stderr already on fds 0-2. The back end runs it
 * and returns its status (exit code; 128+signal; 126 when it could not
 * start; 125 when the box could not serve). NULL sh->host_run: box-sh's
 * plain fork+execve with the whole environment (no sandbox); the box-shell
 * daemon asks boxd for a tool sandbox and passes only `assigned`.
 */
struct sh_host_request {
	const char *name;          /* the command word as typed */
	const char *path;          /* as found on PATH */
	const char *program_path;  /* canonical */
	int argc;
	char **argv;
	char **envp;               /* the whole exported environment */
	char **assigned;           /* NAME=value: exported and set by this invocation */
	const char *cwd;           /* canonical absolute */
	const char *argv0;         /* exec -a NAME / -l: the name the program sees; NULL: argv[0] */
	bool clear_env;            /* exec -c: no environment at all */
};
typedef int (*sh_host_run_fn)(struct sh_shell *sh, const struct sh_host_request *r);
/*
 * Before any decision on a host program: 0 when the back end can run it at
 * all, else its status (126) after the message saying why and what to add
 * (the daemon: no [tool.NAME] or exec entry selects it; no permit could).
 * PROGRAM_PATH canonical, ARGV as typed.
 */
typedef int (*sh_host_check_fn)(const char *name, const char *program_path, int argc,
				char *const *argv);

struct sh_shell {
	struct var *vars[256];
	struct func *funcs[64];
	struct alias *aliases;
	struct frame *frame;
	char *arg0;
	char **argv;            /* positional parameters, $1.. */
	int argc;
	int status;             /* $? */
	enum jump jump;
	int jump_n;
	int loop_depth;
	int func_depth;
	char **func_names;      /* the functions running, outermost first (FUNCNAME) */
	int nfunc_names, func_names_cap;
	bool extdebug;          /* shopt extdebug: a DEBUG trap's failure skips the command */
	bool in_debug_trap;
	int call_depth;
	int errexit_off;        /* in a condition: no -e, no ERR trap */
	bool opt_e, opt_u, opt_x, opt_f, opt_C, opt_n, opt_pipefail, opt_v, opt_a;
	bool opt_posix;         /* set -o posix: assignments before a special builtin stay */
	bool in_subshell;
	bool is_child;          /* a forked copy: exit with _exit */
	bool exit_quick;        /* exit with _exit after flushing stdio (box-shell's
				 * invocation child: main's atexit work is not its own) */
	/* exit_quick and not a forked copy: told the status just before _exit, the
	 * output flushed (the daemon: main answers the alias then) */
	void (*exiting)(struct sh_shell *sh, int status);
	int exiting_fd;         /* for exiting: the daemon's control socket */
	bool interactive;
	bool expand_aliases;    /* bash: off in scripts (shopt); sh/dash: on */
	bool extglob;           /* shopt extglob: ?(…) *(…) +(…) @(…) !(…) */
	bool nullglob, dotglob; /* shopt nullglob, dotglob */
	bool login_shell;       /* started as a login shell (-l, --login, argv[0] "-…") */
	uint64_t shopt_changed; /* shopt options without effect here set away from their start */
	const char *arith_who;  /* "let", "((", "[[": arith_eval's messages name it (bash) */
	bool lastpipe;          /* shopt lastpipe: a pipeline's last command runs in this shell */
	/* A script read from a seekable standard input (bash): before each command
	 * fd 0's offset is put just past it; a command that moved it (a child's
	 * `read`) makes main read on from there (stdin_moved, at stdin_line). */
	const char *stdin_text;
	long long stdin_off;
	unsigned long long stdin_dev, stdin_ino; /* fd 0 is still that file */
	bool stdin_moved;
	int stdin_line;
	char *bash_command;     /* BASH_COMMAND: the simple command running, its words' text */
	bool arith_readonly;    /* arith_eval failed assigning a readonly variable */
	bool inherit_errexit;   /* shopt inherit_errexit: $( ) keeps -e outside posix mode too */
	int in_dbrack;          /* evaluating [[ ]]: its patterns are extglob (bash) */
	struct strv *dirstack;  /* pushd/popd: the directories below the current one */
	char *traps[SH_NTRAP];
	bool in_trap;
	volatile sig_atomic_t pending[SH_NTRAP];
	pid_t rootpid;
	pid_t lastbg;
	struct bgjob *jobs;
	int lineno;
	char *cwd;              /* canonical absolute */
	/*
	 * The fds the script may name (fsops.h): 0-2, and those its own
	 * redirections opened (redir.c). A subshell is a forked copy and a
	 * nested shell (sh -c) starts with its parent's; functions share it.
	 */
	struct sh_fdset script_fds;
	/* process substitutions' fds (the shell's end of each pipe), open until
	 * the command that expanded them ends (exec_node) */
	int procsub_fds[SH_FD_SCRIPT_MAX];
	size_t nprocsub;
	struct sh_fs fs;
	struct sh_decider *decider;
	int root_fd;
	char **envp_cache;
	bool env_dirty;
	int *pipestatus;
	size_t npipestatus;
	const char *script_name; /* the file being read (messages); NULL: $0 */
	double start_time;
	unsigned random_state;
	volatile sig_atomic_t interrupted;
	int getopts_sub;        /* position inside a grouped option (0: none) */
	long getopts_optind;    /* the OPTIND getopts last wrote (0: none) */
	long cmd_timeout_ms;
	char *home;
	sh_host_run_fn host_run;  /* NULL: fork+execve (box-sh) */
	sh_host_check_fn host_check; /* NULL: every program can run (box-sh) */
	void *host_ctx;           /* the back end's */
	bool importing;           /* sh_new: the inherited environment */
	/* The personality of fatal errors (sh_fatal): dash_errors, the sh/dash
	 * dialect, exits 2 as dash; else bash's statuses, where command_string
	 * (a -c text) makes an unset parameter's error 127 in the top process. */
	bool dash_errors;
	bool command_string;
	/* exec -a/-l/-c for the command exec runs: taken (and cleared) by the
	 * next exec_argv, used only by a host program (the shell's own commands
	 * keep their names; -c unexports every variable before it). */
	const char *exec_argv0;
	bool exec_clear_env;
	/* A harness's budget of nodes run (the fuzz target, which must tell an
	 * endless loop in the script from a hang in the interpreter): past it
	 * the script ends with 124, as on a timeout. 0: none. */
	unsigned long step_limit;
	unsigned long steps;
	/* A forked copy's last simple command (exec.c mark_final): a host program
	 * it names replaces the copy. */
	const struct node *exec_final;
	bool exec_in_place;     /* for the builtin sh/bash/dash: run in this copy */
	/* The last simple command of a -c string, which bash runs without a fork
	 * (exec.c mark_oneshot), and whether this copy is a stage of a pipe: both
	 * decide the SHLVL a host program sees (sh_shlvl_nofork). */
	unsigned long var_seq;  /* the last struct var's seq */
	const struct node *exec_oneshot;
	int oneshot_depth;      /* $( ), <( ): exec_text's depth whose last command is one */
	bool pipe_stage;
	/* Signals ignored when this shell started: a non-interactive shell
	 * cannot trap or reset them (POSIX); bit N-1 for signal N. */
	uint64_t ignored_at_entry;
	int trap_status;        /* $? when the running trap began: `exit`, `return` there */
	int trap_func_depth;    /* func_depth when it began: its own `return` */
	bool parse_eval;        /* the next parser_new parses eval's text (messages) */
	bool parse_cmdsub;      /* the next parser_new parses a $( )'s text, run (parse.c) */
	/* The arguments of the declaration builtin running that were written
	 * NAME=(…) unquoted (exec.c expand_cmd_words): borrowed pointers into its
	 * argv, so a quoted 'NAME=(…)' (a string) is told from a compound one. */
	char **decl_raw;
	size_t ndecl_raw;
};

/* vars.c */
/* Whether a recursion must stop: this thread's stack is nearly used up
 * (SH_STACK_RESERVE left). Every recursive path checks one of them;
 * sh_stack_exhausted also ends the script with an error (once). */
bool sh_stack_low(void);
bool sh_stack_exhausted(struct sh_shell *sh);
struct sh_shell *sh_new(struct sh_decider *d, char *const *envp, const char *arg0, int argc,
			char **argv);
void sh_free(struct sh_shell *sh);
struct var *var_get(struct sh_shell *sh, const char *name);
struct var *var_getn(struct sh_shell *sh, const char *name, size_t n);
const char *var_value(struct sh_shell *sh, const char *name); /* NULL if unset */
/* 0, or -1 after printing an error (readonly, too long). */
int var_set(struct sh_shell *sh, const char *name, const char *val, int flags);
int var_set_elem(struct sh_shell *sh, const char *name, size_t idx, const char *val);
int var_unset(struct sh_shell *sh, const char *name);
void var_unbind(struct sh_shell *sh, const char *name); /* even a readonly one, quietly */
void var_local(struct sh_shell *sh, const char *name);
/* NAME becomes an indexed array without elements (declare -a x, x=()). */
int var_set_empty_array(struct sh_shell *sh, const char *name);
/*
 * declare -g inside a function: from var_global_begin until var_global_end
 * (called in pairs, in the same builtin) the table holds NAME's global
 * variable in place of the visible local one, which a frame keeps meanwhile;
 * whatever runs in between sees a consistent table. Returns the slot to give
 * var_global_end, NULL when the visible variable is already the global one.
 */
struct saved_var *var_global_begin(struct sh_shell *sh, const char *name);
void var_global_end(struct sh_shell *sh, struct saved_var *slot);
void frame_push(struct sh_shell *sh);
void frame_pop(struct sh_shell *sh);
char **sh_environ(struct sh_shell *sh);
/* NAME=value of every exported variable this invocation set (V_ASSIGNED), a
 * NULL-terminated malloc'd array of malloc'd strings (strv_free_array). */
char **sh_assigned_environ(struct sh_shell *sh);
void strv_free_array(char **v);
void set_positional(struct sh_shell *sh, int argc, char **argv);
struct func *func_get(struct sh_shell *sh, const char *name);
void func_set(struct sh_shell *sh, const char *name, struct node *body);
void func_unset(struct sh_shell *sh, const char *name);
const char *alias_get(struct sh_shell *sh, const char *name);
void alias_set(struct sh_shell *sh, const char *name, const char *val);
int alias_unset(struct sh_shell *sh, const char *name);
size_t var_array_count(const struct var *v);
struct strv;
/* NAME becomes an associative array without elements: declared without a
 * value (declare -A x) or, SET, the empty array (x=()). */
int var_set_empty_assoc(struct sh_shell *sh, const char *name, bool set);
/* The value of KEY in the associative array V, NULL when unset. */
const char *assoc_get(const struct var *v, const char *key);
/* NAME[KEY]=VAL in the associative array NAME (made one when unset):
 * 0, or -1 after printing an error (readonly, too long, too many). */
int assoc_set(struct sh_shell *sh, const char *name, const char *key, const char *val);
/* unset NAME[KEY]: whether there was one. */
bool assoc_unset(struct var *v, const char *key);
/* An array's (indexed or associative) subscripts and values in bash's order,
 * as malloc'd strings added to KEYS and VALS (either may be NULL); a scalar
 * is the element 0. */
void var_elems(const struct var *v, struct strv *keys, struct strv *vals);
void var_foreach(struct sh_shell *sh, void (*fn)(struct var *, void *), void *arg);
/*
 * A fatal shell error in a non-interactive shell: the shell exits (jump
 * J_EXIT) with the status of its personality. SH_FATAL_UNSET: an unset
 * parameter (set -u, ${x?}, ${x:?}): bash exits 127 for a -c text's top
 * process (its run_one_command's FORCE_EOF), 1 elsewhere. SH_FATAL_ERROR:
 * any other (bad substitution, readonly assignment, arithmetic): 1. The sh
 * and dash dialect: 2 for both, as dash.
 */
enum sh_fatal { SH_FATAL_UNSET, SH_FATAL_ERROR };
void sh_fatal(struct sh_shell *sh, enum sh_fatal kind);

/* expand.c */
struct strv {
	char **v;
	size_t n, cap;
};
void strv_add(struct strv *a, char *s);
void strv_free(struct strv *a);
/* Full expansion of a word list into fields (brace, tilde, parameter,
 * command, arithmetic, splitting, globbing, quote removal). -1: error (the
 * shell's jump says whether to exit). */
int expand_words(struct sh_shell *sh, struct word *w, struct strv *out);
/* One word to one string: no splitting, no globbing (assignments, case
 * word, redirection targets, [[ ]] operands). */
char *expand_str(struct sh_shell *sh, const char *raw, bool assign);
/* As a pattern (case, [[ == ]]): quoted characters escaped with '\'. */
char *expand_pat(struct sh_shell *sh, const char *raw);
/* A here-doc body (as inside double quotes, '"' not special). */
char *expand_heredoc(struct sh_shell *sh, const char *body);
/* The right side of =~: quoted characters match literally. */
char *expand_re(struct sh_shell *sh, const char *raw);
bool sh_utf8_locale(struct sh_shell *sh);
char *cmdsub_run(struct sh_shell *sh, const char *text, size_t len);
/* <(TEXT) (OUT false) or >(TEXT): TEXT runs in a child writing to (reading
 * from) a pipe whose other end becomes one of the script's fds (below
 * SH_FD_SCRIPT_MAX, from 63 down, as bash): its number, or -1 after a
 * message. The fd closes when the command that expanded it ends. */
int procsub_open(struct sh_shell *sh, const char *text, size_t len, bool out);
char *shell_quote(const char *s);
/* bash's ${x@Q}: 'S' ('\\'' for a quote), $'S' with escapes when S holds a
 * control character; malloc'd. */
char *bash_quote(const char *s);
/* builtins.c: declare -p's text of V (no newline), malloc'd; SINGLE_QUOTED:
 * ${x@A}'s (a scalar's value in bash_quote, no declare without attributes). */
char *var_decl_text(const struct var *v, bool single_quoted);
void var_attr_letters(const struct var *v, char out[8]);
/*
 * Decode one backslash escape at S (after the '\\'): returns the bytes
 * consumed ((size_t)-1: echo's \\c, stop), the output in O, which holds
 * SH_ESCAPE_MAX bytes (a UTF-8 character, or an escape kept as text when the
 * locale is not UTF-8: "\\U0DDDDDDD"), *ON its length. echo_mode: \\0NNN, \\c.
 */
#define SH_ESCAPE_MAX 16
size_t ansi_escape(const char *s, size_t n, char *o, size_t *on, bool echo_mode);

/* arith.c: -1 on error (printed). */
int arith_eval(struct sh_shell *sh, const char *expr, intmax_t *out);

/* pattern.c */
/* The characters a quoted one of is escaped with '\\' in a pattern ('-' and '^': inside
 * […], "-" is no range and "^" no negation: [a"-"c], [\^]) */
#define PAT_SPECIAL "*?[]\\()|@+!-^"
/* Whether extglob's ?(…) *(…) +(…) @(…) !(…) are patterns now (shopt
 * extglob, or inside [[ ]]). */
bool pat_extglob(void);
bool pat_match(const char *pat, const char *s);  /* whole string */
/* Longest/shortest prefix/suffix match lengths: -1 none. */
long pat_prefix(const char *pat, const char *s, bool longest);
long pat_suffix(const char *pat, const char *s, bool longest);
/* S with the first (ALL: every) non-empty leftmost-longest match of PAT
 * replaced by REP (malloc'd). */
char *pat_replace(const char *pat, const char *s, const char *rep, bool all);
bool pat_has_meta(const char *pat);
void pat_unescape(char *s);
/* Glob one pattern through sh_fs_opendir; appends sorted matches (0 if none). */
int glob_expand(struct sh_shell *sh, const char *pat, struct strv *out);

/* exec.c */
int exec_node(struct sh_shell *sh, struct node *n);
int exec_text(struct sh_shell *sh, const char *text, size_t len, int line, const char *name);
int exec_argv(struct sh_shell *sh, int argc, char **argv, bool nofunc, int in, int out, int err);
_Noreturn void sh_exit(struct sh_shell *sh, int status);
_Noreturn void sh_child_exit(struct sh_shell *sh, int st); /* flush, _exit */
void sh_run_exit_trap(struct sh_shell *sh);
void sh_jobs_reap(struct sh_shell *sh);
void sh_err(struct sh_shell *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sh_errline(struct sh_shell *sh, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* IN: what is being read, between the name and the line ("eval"), or NULL */
void sh_errline_in(struct sh_shell *sh, const char *in, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
pid_t sh_fork(struct sh_shell *sh);

int sh_wait_pid(struct sh_shell *sh, pid_t pid);
void sh_check_traps(struct sh_shell *sh);
int sh_decide_cmd(struct sh_shell *sh, const char *program, int argc, char **argv,
		  const char *path);
void sh_record_cmd(struct sh_shell *sh, const char *program, int argc, char **argv, int st);
char *find_in_path(struct sh_shell *sh, const char *name);
char *find_source_in_path(struct sh_shell *sh, const char *name);
/* PATH (ST its stat) is a program to run: access(X_OK), or on a noexec mount
 * its mode bits (find_in_path's and test -x's rule). */
struct stat;
bool sh_runnable_file(const char *path, const struct stat *st);
void sh_update_fs(struct sh_shell *sh, const char *cmdname);
int run_nested_shell(struct sh_shell *sh, int argc, char **argv);
int sh_assign_word(struct sh_shell *sh, const char *w, int flags);
/* A is an argument of the running declaration builtin written NAME=(…) unquoted. */
bool sh_decl_raw(struct sh_shell *sh, const char *a);

/* exec.c: FUNCNAME (the running functions, innermost first, then "main") made anew as a
 * global array before it is read (expand.c) */
void funcname_sync(struct sh_shell *sh);

/* wrappers.c: the `time` report (bash's format) on fd 2 */
struct time_mark {
	struct timespec wall;
	double user, sys;
};
void time_start(struct time_mark *m);
void time_report(struct sh_shell *sh, const struct time_mark *m, bool posix);

/* redir.c: apply redirections; saved fds go to *save (restore with
 * redir_restore) unless save is NULL (permanent / in a child). An fd a
 * redirection names is one of the script's (sh->script_fds): 0-2 or one its
 * redirections opened, below SH_FD_SCRIPT_MAX; anything else is refused
 * with a message (it may be the shell's own, e.g. its box-policyd channel). */
struct redir_save {
	int fd, saved;   /* saved = -1: fd was closed */
	bool was_script; /* fd was one of the script's */
};
struct redir_state {
	struct redir_save v[32];
	size_t n;
	struct sh_fdset *fds; /* the shell's script_fds, restored with the fds */
};
int redir_apply(struct sh_shell *sh, struct redir *r, struct redir_state *save);
void redir_restore(struct redir_state *save);

/* builtins.c */
typedef int (*sh_builtin_fn)(struct sh_shell *sh, int argc, char **argv);
struct sh_builtin {
	const char *name;
	sh_builtin_fn fn;
	bool special;
};
const struct sh_builtin *builtin_find(const char *name);
const char *builtin_name(size_t i); /* NULL past the last */
/* jobs.c: the shell's jobs by number (jobs, fg, bg; %N for kill and wait). */
int b_jobs(struct sh_shell *sh, int argc, char **argv);
int b_disown(struct sh_shell *sh, int argc, char **argv);
int b_fg(struct sh_shell *sh, int argc, char **argv);
int b_bg(struct sh_shell *sh, int argc, char **argv);
pid_t jobs_pid(struct sh_shell *sh, const char *who, const char *spec); /* -1: said why */
/* TEXT: the line the next jobs start from; NULL: number the jobs started since. */
void jobs_line(struct sh_shell *sh, const char *text, size_t len);
/* exec's options: the index of its command in argv (argc: none), or -1 after
 * a usage error (printed when sh is given). */
struct sh_exec_opts {
	const char *name; /* -a NAME */
	bool login;       /* -l */
	bool clear_env;   /* -c */
};
#define SH_EXEC_USAGE "exec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]"
int sh_exec_parse(struct sh_shell *sh, int argc, char **argv, struct sh_exec_opts *o);
sh_cmd_fn own_command_find(const char *name);
/* Buffered output of builtins on an fd. */
void bi_out(int fd, const char *s, size_t n);
void bi_outs(int fd, const char *s);
void bi_flush(void);
int bi_take_error(void); /* flush; the first write error (errno) since the last call */

extern struct sh_shell *sh_current;

#endif
