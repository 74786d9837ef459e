/* SPDX-License-Identifier: Apache-2.0 */
/*
 * init.c — `boxctl init [--agent NAME] [--api-url URL] [--force] [DIR] [-- COMMAND [ARGS]]`:
 * write a box.ini and a policy for a coding agent working on the project in DIR.
 *
 * It finds the harness on the caller's PATH and resolves it to the file the box will run
 * (a symlink chain, or an npm launcher, to its native binary), then fills the templates of
 * boxctl/init/ (init.h) with what it found: the harness's install tree and state dir, its
 * model API and the variable its key is in, the project's secret files, the host programs
 * worth a [tool] sandbox. Nothing is written unless every file can be (existing files are
 * refused without --force), and each is written whole (a temporary file renamed).
 *
 * Runs as the calling user; reads directory entries of the project and of its PATH, never
 * a file's contents except the first bytes of the harness's program (to tell an ELF binary
 * from a script). Trusts: the caller's PATH only to find the harness (boxctl run never uses
 * it); nothing in the project.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boxpolicy.h"
#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "init.h"
#include "parse.h"
#include "path.h"
#include "spec.h"
#include "treewalk.h"

/* The secret-file scan of the project: bounded like the load checks' walks. */
#define INIT_SCAN_ENTRIES 50000
#define INIT_SCAN_MS 2000
#define INIT_DENY_MAX 100

/* What box knows of each harness. */
struct agent_kind {
	const char *name;        /* --agent NAME */
	const char *title;       /* in comments and messages */
	const char *program;     /* looked up on PATH */
	const char *flag;        /* the template's @@if variable */
	const char *state;       /* its state dir under the home, or NULL */
	const char *const *state_secrets; /* files in it that hold a login: hidden */
	const char *secret_var;  /* the variable its API key is in */
	const char *egress;      /* [egress.NAME] */
	const char *api_host, *api_path; /* default model API host, path prefix */
	const char *api_header;  /* where the key goes (NULL: Authorization: Bearer) */
	const char *placeholder_prefix;
	const char *base_url_var; /* the variable that moves its API (--api-url), or NULL */
	const char *nonessential; /* hosts it contacts on its own, space-separated */
	const char *nonessential_why;
	const char *run_hint;    /* how to start it with a task */
};

static const char *const claude_secrets[] = { ".credentials.json", NULL };
static const char *const codex_secrets[] = { "auth.json", NULL };
static const char *const gemini_secrets[] = { "oauth_creds.json", "google_accounts.json",
					       NULL };

static const struct agent_kind agents[] = {
	{ .name = "claude-code",
	  .title = "Claude Code",
	  .program = "claude",
	  .flag = "CLAUDE",
	  .state = ".claude",
	  .state_secrets = claude_secrets,
	  .secret_var = "ANTHROPIC_API_KEY",
	  .egress = "anthropic",
	  .api_host = "api.anthropic.com",
	  .api_path = "/v1/*",
	  .api_header = "x-api-key",
	  .placeholder_prefix = "sk-ant-api03-",
	  .base_url_var = "ANTHROPIC_BASE_URL",
	  .nonessential = "statsig.anthropic.com statsig.com sentry.io",
	  .nonessential_why = "Claude Code's telemetry and error reports are not sent from this box",
	  .run_hint = "boxctl run -- -p \"your task\" --dangerously-skip-permissions" },
	{ .name = "codex",
	  .title = "Codex",
	  .program = "codex",
	  .flag = "CODEX",
	  .state = ".codex",
	  .state_secrets = codex_secrets,
	  .secret_var = "OPENAI_API_KEY",
	  .egress = "openai",
	  .api_host = "api.openai.com",
	  .api_path = "/v1/*",
	  .placeholder_prefix = "sk-",
	  .nonessential = "github.com api.github.com chatgpt.com ab.chatgpt.com",
	  .nonessential_why = "Codex's update checks, plugin lists and ChatGPT services are not used from this box",
	  .run_hint = "boxctl run -- exec \"your task\"" },
	{ .name = "gemini",
	  .title = "Gemini CLI",
	  .program = "gemini",
	  .flag = "GEMINI",
	  .state = ".gemini",
	  .state_secrets = gemini_secrets,
	  .secret_var = "GEMINI_API_KEY",
	  .egress = "gemini",
	  .api_host = "generativelanguage.googleapis.com",
	  .api_path = "/v1beta/*",
	  .api_header = "x-goog-api-key",
	  .placeholder_prefix = "AIza",
	  .base_url_var = "GOOGLE_GEMINI_BASE_URL",
	  .nonessential = "play.googleapis.com cloudcode-pa.googleapis.com oauth2.googleapis.com "
			  "www.googleapis.com",
	  .nonessential_why = "Gemini CLI's usage statistics and Google-account services are not used from this box",
	  .run_hint = "boxctl run -- -p \"your task\" --yolo" },
	{ .name = "generic",
	  .title = "the agent",
	  .flag = "GENERIC",
	  .run_hint = "boxctl run" },
};

/* Host programs that get a [tool] sandbox when the box's PATH has them. */
static const char *const everyday_tools[] = { "git", "make", "python3", "node", "npm", "curl" };

/* The project's secret files (box-policy's rule no_secret_files says the same). */
static bool
secret_name(const char *base)
{
	static const char *const exact[] = { ".npmrc", ".pypirc", ".netrc" };
	size_t n = strlen(base);

	for (size_t i = 0; i < ELEMENTSOF(exact); i++)
		if (strcmp(base, exact[i]) == 0)
			return true;
	return strncmp(base, ".env", 4) == 0 || strncmp(base, "id_", 3) == 0 ||
	       (n > 4 && strcmp(base + n - 4, ".pem") == 0) ||
	       (n > 4 && strcmp(base + n - 4, ".key") == 0);
}

struct scan {
	char **found;
	size_t n;
	char **linked; /* secret files with more than one name: a mask cannot hide them */
	size_t n_linked;
	bool too_many;
};

/* A secret file to hide: a deny entry, or a warning when a mask cannot hide it. */
static int
scan_add(struct scan *s, const char *path, const struct stat *st)
{
	char ***list = st->st_nlink > 1 ? &s->linked : &s->found;
	size_t *n = st->st_nlink > 1 ? &s->n_linked : &s->n;
	if (*n == INIT_DENY_MAX) {
		s->too_many = true;
		return 0;
	}
	char **grown = realloc(*list, (*n + 1) * sizeof(char *));
	if (!grown)
		return -ENOMEM;
	*list = grown;
	if (!(grown[*n] = strdup(path)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int
scan_visit(void *user, const char *path, const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || !secret_name(path_basename(path)))
		return 0;
	return scan_add(user, path, st);
}

/* Version control and dependency trees: not the project's own secrets, and large. */
static bool
scan_skip(void *user, const char *path, const struct stat *st)
{
	const char *b = path_basename(path);
	return strcmp(b, ".git") == 0 || strcmp(b, "node_modules") == 0 ||
	       strcmp(b, ".venv") == 0 || strcmp(b, "target") == 0;
}

static void
scan_free(struct scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->found[i]);
	for (size_t i = 0; i < s->n_linked; i++)
		free(s->linked[i]);
	free(s->found);
	free(s->linked);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is the file at PATH an ELF executable (by its first bytes)? */
static bool
is_elf(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	unsigned char m[4];
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	return read(fd, m, 4) == 4 && memcmp(m, "\177ELF", 4) == 0;
}

static bool
is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* NAME on the caller's PATH: the first executable match, as spelled there. */
static char *
find_on_path(const char *name)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");

	if (!copy)
		return NULL;
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '/')
			continue; /* a relative PATH entry names nothing stable */
		_cleanup_free_ char *cand = path_join(dir, name);
		if (cand && is_executable_file(cand))
			return TAKE_PTR(cand);
	}
	return NULL;
}

/* A directory's parent, as a new string. */
static char *
parent_of(const char *p)
{
	char *d = NULL;
	return path_dirname(p, &d) < 0 ? NULL : d;
}

/* The npm platform package's suffix for this machine: linux-x64, linux-arm64 (-musl). */
static int
npm_platform(char *buf, size_t size, bool *musl)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -errno;
	const char *arch = strcmp(u.machine, "x86_64") == 0    ? "x64"
			   : strcmp(u.machine, "aarch64") == 0 ? "arm64"
							       : NULL;
	if (!arch)
		return -ENOTSUP;
	*musl = access("/lib/ld-musl-x86_64.so.1", F_OK) == 0 ||
		access("/lib/ld-musl-aarch64.so.1", F_OK) == 0;
	snprintf(buf, size, "linux-%s", arch);
	return 0;
}

struct harness {
	char *found;    /* on PATH, as spelled there */
	char *real;     /* its canonical file */
	char *program;  /* what box.ini runs */
	char *install;  /* the install tree to grant (read + exec), or NULL */
	bool install_exec;
	char *how;      /* one line: how PROGRAM was reached from FOUND */
};

static void
harness_free(struct harness *h)
{
	free(h->found);
	free(h->real);
	free(h->program);
	free(h->install);
	free(h->how);
}

/*
 * Claude Code: its native binary. Installed by its own installer it is one ELF file
 * (~/.local/share/claude/versions/V); from npm, bin/claude.exe is a copy of the platform
 * package's binary — or, when npm ran no install scripts, a stub beside it.
 */
static int
resolve_claude(struct harness *h)
{
	char plat[32];
	bool musl = false;

	if (is_elf(h->real)) {
		h->program = strdup(h->real);
		return h->program ? 0 : -ENOMEM;
	}
	_cleanup_free_ char *bin = parent_of(h->real);
	_cleanup_free_ char *pkg = bin ? parent_of(bin) : NULL;
	_cleanup_free_ char *scope = pkg ? parent_of(pkg) : NULL;
	if (!scope || strcmp(path_basename(pkg), "claude-code") != 0 || npm_platform(plat, sizeof(plat), &musl) < 0)
		return -ENOENT;
	_cleanup_free_ char *cand = NULL;
	if (asprintf(&cand, "%s/claude-code-%s%s/claude", scope, plat, musl ? "-musl" : "") < 0)
		return -ENOMEM;
	if (!is_elf(cand))
		return -ENOENT;
	if (path_canonicalize(cand, &h->program) < 0)
		return -ENOENT;
	return asprintf(&h->how, "npm's launcher %s runs %s", h->real, h->program) < 0 ? -ENOMEM : 0;
}

/*
 * Codex: its native binary, in the npm platform package (@openai/codex-linux-x64 beside
 * @openai/codex: vendor/TRIPLE/bin/codex, rg in vendor/TRIPLE/codex-path) or, in older
 * releases, in the package's own vendor/TRIPLE/codex/codex. A native install is the ELF.
 */
static int
resolve_codex(struct harness *h)
{
	char plat[32];
	bool musl = false;
	struct utsname u;

	if (is_elf(h->real)) {
		h->program = strdup(h->real);
		return h->program ? 0 : -ENOMEM;
	}
	_cleanup_free_ char *bin = parent_of(h->real);
	_cleanup_free_ char *pkg = bin ? parent_of(bin) : NULL;
	_cleanup_free_ char *scope = pkg ? parent_of(pkg) : NULL;
	if (!scope || strcmp(path_basename(pkg), "codex") != 0 ||
	    npm_platform(plat, sizeof(plat), &musl) < 0 || uname(&u) < 0)
		return -ENOENT;
	const char *triple = strcmp(u.machine, "x86_64") == 0 ? "x86_64-unknown-linux-musl"
							      : "aarch64-unknown-linux-musl";
	_cleanup_free_ char *tree = NULL, *cand = NULL;
	if (asprintf(&tree, "%s/codex-%s/vendor/%s", scope, plat, triple) < 0 ||
	    asprintf(&cand, "%s/bin/codex", tree) < 0)
		return -ENOMEM;
	if (!is_elf(cand)) {
		free(tree);
		free(cand);
		tree = cand = NULL;
		if (asprintf(&tree, "%s/vendor/%s", pkg, triple) < 0 ||
		    asprintf(&cand, "%s/codex/codex", tree) < 0)
			return -ENOMEM;
		if (!is_elf(cand))
			return -ENOENT;
	}
	if (path_canonicalize(cand, &h->program) < 0 || path_canonicalize(tree, &h->install) < 0)
		return -ENOENT;
	h->install_exec = true;
	return asprintf(&h->how, "npm's launcher %s runs %s", h->real, h->program) < 0 ? -ENOMEM : 0;
}

/* Gemini CLI: its bundle, a node script (#!/usr/bin/env node), in its npm package. */
static int
resolve_gemini(struct harness *h)
{
	_cleanup_free_ char *dir = parent_of(h->real);
	_cleanup_free_ char *pkg = dir ? parent_of(dir) : NULL;
	_cleanup_free_ char *manifest = pkg ? path_join(pkg, "package.json") : NULL;

	if (!manifest || access(manifest, R_OK) != 0)
		return -ENOENT;
	h->program = strdup(h->real);
	h->install = TAKE_PTR(pkg);
	return h->program ? 0 : -ENOMEM;
}

static int
resolve_harness(const struct agent_kind *k, const char *given, struct harness *h)
{
	int r;

	h->found = given ? strdup(given) : find_on_path(k->program);
	if (!h->found) {
		fprintf(stderr, "boxctl: error: init: %s not found on PATH (%s): install %s, or name "
				"its program with --program PATH\n",
			k->program, getenv("PATH") ? getenv("PATH") : "", k->title);
		return -ENOENT;
	}
	r = path_canonicalize(h->found, &h->real);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: init: %s: %s\n", h->found, strerror(-r));
		return r;
	}
	if (strcmp(k->name, "claude-code") == 0)
		r = resolve_claude(h);
	else if (strcmp(k->name, "codex") == 0)
		r = resolve_codex(h);
	else if (strcmp(k->name, "gemini") == 0)
		r = resolve_gemini(h);
	else
		r = (h->program = strdup(h->real)) ? 0 : -ENOMEM;
	if (r == -ENOENT)
		fprintf(stderr,
			"boxctl: error: init: %s (%s) is not a %s install box knows: name its "
			"program with --program PATH, or use --agent generic\n",
			h->found, h->real, k->title);
	else if (r < 0)
		fprintf(stderr, "boxctl: error: init: %s: %s\n", h->found, strerror(-r));
	if (r == 0 && !h->how &&
	    asprintf(&h->how, strcmp(h->found, h->program) == 0 ? "%s" : "%s -> %s", h->found,
		     h->program) < 0)
		r = -ENOMEM;
	return r;
}

/* A word of a box.ini command: quoted when it holds a blank, a quote or a backslash. */
static int
append_word(FILE *f, const char *w)
{
	if (*w && !strpbrk(w, " \t\"'\\;#"))
		return fputs(w, f) < 0 ? -EIO : 0;
	fputc('"', f);
	for (const char *p = w; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc(*p, f);
	}
	return fputc('"', f) < 0 ? -EIO : 0;
}

/* The model API from --api-url (https://HOST[:PORT][/PATH]) or the agent's default. */
struct api {
	char host[256];
	unsigned port;
	char path[512]; /* without a trailing '/', may be "" */
};

static int
parse_api_url(const char *url, struct api *a)
{
	const char *p = url;

	if (strncmp(p, "https://", 8) != 0)
		return -EINVAL;
	p += 8;
	size_t hl = strcspn(p, ":/");
	if (hl == 0 || hl >= sizeof(a->host))
		return -EINVAL;
	for (size_t i = 0; i < hl; i++) {
		char c = p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return -EINVAL; /* lower-case DNS names only: the policy compares them */
	}
	memcpy(a->host, p, hl);
	a->host[hl] = '\0';
	p += hl;
	a->port = 443;
	if (*p == ':') {
		char digits[8];
		size_t dl = strcspn(p + 1, "/");
		uint16_t port;
		if (dl == 0 || dl >= sizeof(digits))
			return -EINVAL;
		memcpy(digits, p + 1, dl);
		digits[dl] = '\0';
		if (parse_port(digits, &port) < 0)
			return -EINVAL;
		a->port = port;
		p += 1 + dl;
	}
	size_t pl = strlen(p);
	while (pl > 0 && p[pl - 1] == '/')
		pl--;
	if (pl >= sizeof(a->path) || strpbrk(p, "?#*\"\\ \t"))
		return -EINVAL;
	memcpy(a->path, p, pl);
	a->path[pl] = '\0';
	return 0;
}

/* Write DIR/NAME whole: a temporary file, then renamed over the target. */
static int
write_whole(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *target = path_join(dir, name);
	_cleanup_free_ char *tmp = NULL;

	if (!target || asprintf(&tmp, "%s.boxctl-init.%d", target, (int)getpid()) < 0)
		return -ENOMEM;
	_cleanup_close_ int fd =
		open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0) {
			int e = errno;
			(void)unlink(tmp);
			return -e;
		}
		off += (size_t)n;
	}
	if (fsync(fd) < 0 || rename(tmp, target) < 0) {
		int e = errno;
		(void)unlink(tmp);
		return -e;
	}
	return 0;
}

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxctl init [--agent claude-code|codex|gemini|generic] [--api-url URL]\n"
		   "                   [--program PATH] [--force] [DIR] [-- COMMAND [ARGS...]]\n");
	return f == stdout ? BOXCTL_EXIT_OK : BOXCTL_EXIT_USAGE;
}

/* The box name: the project directory's name in box.ini's name syntax, then -AGENT. */
static void
box_name(const char *dir, const struct agent_kind *k, char *out, size_t size)
{
	bool generic = strcmp(k->name, "generic") == 0;
	const char *suffix = generic ? "" : strcmp(k->name, "claude-code") == 0 ? "-claude" : NULL;
	char tail[40];
	size_t n = 0;

	snprintf(tail, sizeof(tail), "%s", suffix ? suffix : "");
	if (!suffix)
		snprintf(tail, sizeof(tail), "-%s", k->name);
	size_t keep = size - 1 - strlen(tail);
	for (const char *p = path_basename(dir); *p && n < keep; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '-' || c == '_';
		out[n++] = ok ? c : '-';
	}
	if (n == 0) {
		memcpy(out, "box", 3);
		n = 3;
	}
	snprintf(out + n, size - n, "%s", tail);
}

/* The box.ini spelling of a path: "~/rel" under the home, else as it is. */
static char *
ini_spelling(const char *p, const char *home)
{
	char *s = NULL;
	return path_to_home_form(p, home, &s) < 0 ? NULL : s;
}

/* The Cedar list of the tools' programs and their [tool] blocks. */
struct tools {
	char *cedar; /* "\"/usr/bin/git\", …" */
	char *blocks;
	char *names; /* "git make …" */
};

static int
render_tools(struct init_vars *v, const char *home, struct tools *t, char **err)
{
	_cleanup_free_ char *cedar = NULL, *blocks = NULL, *names = NULL;
	size_t cl = 0, bl = 0, nl = 0;
	_cleanup_fclose_ FILE *fc = open_memstream(&cedar, &cl);
	_cleanup_fclose_ FILE *fb = open_memstream(&blocks, &bl);
	_cleanup_fclose_ FILE *fn = open_memstream(&names, &nl);
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	bool first = true;
	int r;

	if (!fc || !fb || !fn)
		return -ENOMEM;
	for (size_t i = 0; i < ELEMENTSOF(everyday_tools); i++) {
		_cleanup_free_ char *prog = NULL;
		/* box's default PATH, the one box.ini resolves a bare name on. */
		for (size_t d = 0; d < ELEMENTSOF(dirs) && !prog; d++) {
			_cleanup_free_ char *cand = path_join(dirs[d], everyday_tools[i]);
			if (cand && is_executable_file(cand))
				prog = TAKE_PTR(cand);
		}
		/* The policy sees the canonical program (python3 -> python3.11). */
		_cleanup_free_ char *canon = NULL;
		if (!prog || path_canonicalize(prog, &canon) < 0)
			continue;
		_cleanup_free_ char *gitconfig = NULL;
		if (strcmp(everyday_tools[i], "git") == 0) {
			gitconfig = path_join(home, ".gitconfig");
			struct stat st;
			if (!gitconfig || lstat(gitconfig, &st) < 0 || !S_ISREG(st.st_mode)) {
				free(gitconfig);
				gitconfig = NULL;
			}
		}
		_cleanup_free_ char *gitconfig_spelled = gitconfig ? ini_spelling(gitconfig, home) : NULL;
		if ((r = init_vars_set(v, "TOOL", everyday_tools[i])) < 0 ||
		    (r = init_vars_set(v, "TOOL_PATH", prog)) < 0 ||
		    (r = init_vars_set(v, "TOOL_READ", gitconfig_spelled)) < 0)
			return r;
		_cleanup_free_ char *block = NULL;
		r = init_render("tool.ini.in", v, &block, err);
		if (r < 0)
			return r;
		fputs(block, fb);
		fprintf(fc, "%s\"%s\"", first ? "" : ", ", canon);
		fprintf(fn, "%s%s", first ? "" : " ", everyday_tools[i]);
		first = false;
	}
	if (fclose(TAKE_PTR(fc)) || fclose(TAKE_PTR(fb)) || fclose(TAKE_PTR(fn)))
		return -ENOMEM;
	t->cedar = TAKE_PTR(cedar);
	t->blocks = TAKE_PTR(blocks);
	t->names = TAKE_PTR(names);
	return 0;
}


/* "a b c" as the Cedar list items "\"a\", \"b\", \"c\"" (names without quotes). */
static char *
cedar_list(const char *words)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	bool first = true;

	if (!f)
		return NULL;
	for (const char *p = words; p && *p;) {
		size_t n = strcspn(p, " ");
		if (n)
			fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)n, p);
		first = first && !n;
		p += n + (p[n] == ' ');
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * box.ini takes lines of at most 199 bytes: a comment line longer than that (a long path
 * in it) is wrapped at blanks, or cut where it has none, each piece a comment of its own.
 * A longer key line is left as it is: boxctl check then names it.
 */
static char *
wrap_comments(const char *text)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		const char *next = p + n + (p[n] == '\n');
		if (n <= BOX_CONFIG_LINE_MAX || *p != ';') {
			fprintf(f, "%.*s%s", (int)n, p, p[n] ? "\n" : "");
			p = next;
			continue;
		}
		const char *q = p + 1, *end = p + n;
		while (*q == ' ' && q < end)
			q++;
		while (q < end) {
			size_t room = BOX_CONFIG_LINE_MAX - 2, take = (size_t)(end - q);
			if (take > room) {
				take = room;
				for (size_t i = room; i > room / 2; i--)
					if (q[i] == ' ') {
						take = i;
						break;
					}
			}
			fprintf(f, "; %.*s\n", (int)take, q);
			q += take;
			while (q < end && *q == ' ')
				q++;
		}
		p = next;
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * What init wrote must pass `boxctl check` (the same box_load run uses): a
 * config that check or run would refuse is removed again and the refusal
 * printed. The key variable of the model API need not be set yet (the user
 * exports it before `boxctl run`): a stand-in value is set for the check only.
 */
static int
init_verify(const char *dir, const char *const *outputs, size_t n_out, const char *secret_var)
{
	_cleanup_free_ char *ini = path_join(dir, "box.ini");
	struct box_config *cfg = NULL;
	Box__BoxSpec *spec = NULL;
	struct bp_diags *warnings = NULL;
	long n_rules = 0;
	bool stand_in = secret_var && !(getenv(secret_var) && *getenv(secret_var));

	if (!ini)
		return -ENOMEM;
	if (stand_in && setenv(secret_var, "box-init-check", 1) < 0)
		return -errno;
	int code = box_load(ini, service_answers(), &cfg, &spec, &n_rules, &warnings);
	if (stand_in)
		unsetenv(secret_var);
	box_spec_free(spec);
	box_config_free(cfg);
	bp_diags_free(warnings);
	if (code == BOXCTL_EXIT_OK)
		return 0;
	for (size_t i = 0; i < n_out; i++) {
		_cleanup_free_ char *p = path_join(dir, outputs[i]);
		if (p)
			(void)unlink(p);
	}
	fprintf(stderr, "boxctl: error: init: the config written would not pass `boxctl check` "
			"(above), so nothing was kept; name another program\n");
	return -EINVAL;
}

int
cmd_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "api-url", required_argument, NULL, 'u' },
		{ "program", required_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct agent_kind *k = NULL;
	const char *api_url = NULL, *program = NULL, *dir_arg = ".";
	bool force = false;
	int ch, r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+a:u:p:fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			for (size_t i = 0; i < ELEMENTSOF(agents); i++)
				if (strcmp(optarg, agents[i].name) == 0)
					k = &agents[i];
			if (!k) {
				fprintf(stderr, "boxctl: error: init: unknown agent '%s' (claude-code, "
						"codex, gemini or generic)\n",
					optarg);
				return BOXCTL_EXIT_USAGE;
			}
			break;
		case 'u':
			api_url = optarg;
			break;
		case 'p':
			program = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	/* [DIR] [-- COMMAND ARGS]: getopt stops at "--" (skipped) or the first operand. */
	char **cmd = NULL;
	int n_cmd = 0;
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		dir_arg = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind < argc && (optind == 1 || strcmp(argv[optind - 1], "--") == 0)) {
		cmd = argv + optind;
		n_cmd = argc - optind;
	} else if (optind < argc) {
		return usage(stderr);
	}

	if (!k) {
		/* No --agent: the first harness on PATH, else generic. */
		for (size_t i = 0; i + 1 < ELEMENTSOF(agents) && !k && !n_cmd; i++) {
			_cleanup_free_ char *f = find_on_path(agents[i].program);
			if (f)
				k = &agents[i];
		}
		if (!k)
			k = &agents[ELEMENTSOF(agents) - 1];
	}
	bool generic = strcmp(k->name, "generic") == 0;
	if (generic && !n_cmd && !program) {
		fprintf(stderr, "boxctl: error: init: --agent generic needs the agent's command: "
				"boxctl init --agent generic [DIR] -- COMMAND [ARGS...]\n");
		return BOXCTL_EXIT_USAGE;
	}
	if (!generic && n_cmd) {
		fprintf(stderr, "boxctl: error: init: a command after -- is for --agent generic; "
				"%s's arguments go to boxctl run -- ARGS\n",
			k->title);
		return BOXCTL_EXIT_USAGE;
	}
	if (generic && api_url) {
		fprintf(stderr, "boxctl: error: init: --api-url is for claude-code, codex and "
				"gemini (a generic agent's hosts are yours to permit)\n");
		return BOXCTL_EXIT_USAGE;
	}

	struct api api = { 0 };
	if (api_url && parse_api_url(api_url, &api) < 0) {
		fprintf(stderr, "boxctl: error: init: --api-url '%s': expected "
				"https://HOST[:PORT][/PATH] with a lower-case host\n",
			api_url);
		return BOXCTL_EXIT_USAGE;
	}
	if (!api_url && !generic) {
		snprintf(api.host, sizeof(api.host), "%s", k->api_host);
		api.port = 443;
		snprintf(api.path, sizeof(api.path), "%s", strcmp(k->name, "codex") == 0 ? "/v1" : "");
	}

	_cleanup_free_ char *dir = NULL;
	struct stat st;
	if ((r = path_canonicalize(dir_arg, &dir)) < 0 || stat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "boxctl: error: init: %s: %s\n", dir_arg,
			r < 0 ? strerror(-r) : "not a directory");
		return BOXCTL_EXIT_FAILURE;
	}
	if (strcmp(dir, "/") == 0) {
		fprintf(stderr, "boxctl: error: init: the project cannot be / (box.ini(5) refuses "
				"granting it)\n");
		return BOXCTL_EXIT_FAILURE;
	}
	struct passwd *pw = getpwuid(getuid());
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/') {
		fprintf(stderr, "boxctl: error: init: no home directory for uid %u in the passwd "
				"database\n",
			(unsigned)getuid());
		return BOXCTL_EXIT_FAILURE;
	}
	_cleanup_free_ char *home = NULL;
	if (path_canonicalize(pw->pw_dir, &home) < 0 && !(home = strdup(pw->pw_dir)))
		return BOXCTL_EXIT_FAILURE;
	if (strcmp(dir, home) == 0) {
		fprintf(stderr, "boxctl: error: init: %s is your home: give the agent a project "
				"directory, not the whole home\n",
			dir);
		return BOXCTL_EXIT_FAILURE;
	}

	/*
	 * The files: all refused, or all written. Gemini CLI's project settings (the API-key
	 * sign-in it needs when its API is moved) are the project's own file: written only
	 * when there is none, never over one.
	 */
	static const char *const outputs[] = { "box.ini", "policy.cedar", ".gemini/settings.json" };
	size_t n_out = 2;
	bool gemini_settings_kept = false;
	if (strcmp(k->name, "gemini") == 0) {
		_cleanup_free_ char *p = path_join(dir, outputs[2]);
		if (p && lstat(p, &st) == 0)
			gemini_settings_kept = true;
		else
			n_out = 3;
	}
	bool refuse = false;
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *p = path_join(dir, outputs[i]);
		if (p && lstat(p, &st) == 0 && !force) {
			fprintf(stderr, "boxctl: error: init: %s exists (--force writes over it)\n", p);
			refuse = true;
		}
	}
	if (refuse)
		return BOXCTL_EXIT_FAILURE;

	/* The harness. */
	struct harness h = { 0 };
	if (generic) {
		const char *first = program ? program : cmd[0];
		if (strchr(first, '/'))
			r = resolve_harness(k, first, &h);
		else {
			_cleanup_free_ char *f = find_on_path(first);
			if (!f) {
				fprintf(stderr, "boxctl: error: init: %s not found on PATH\n", first);
				return BOXCTL_EXIT_FAILURE;
			}
			r = resolve_harness(k, f, &h);
		}
	} else {
		r = resolve_harness(k, program, &h);
	}
	if (r < 0) {
		harness_free(&h);
		return BOXCTL_EXIT_FAILURE;
	}

	/*
	 * The harness's state dir: where the harness itself keeps it, under $HOME (box.ini's
	 * `~` is the passwd home, which the agent's environment points the harness away from);
	 * made (0700) when missing, so that it can be granted.
	 */
	_cleanup_free_ char *state = NULL, *state_spelled = NULL, *harness_home = NULL;
	bool state_made = false;
	const char *env_home = getenv("HOME");
	if (env_home && env_home[0] == '/' && stat(env_home, &st) == 0 && S_ISDIR(st.st_mode))
		(void)path_canonicalize(env_home, &harness_home);
	if (!harness_home && !(harness_home = strdup(home))) {
		harness_free(&h);
		return BOXCTL_EXIT_FAILURE;
	}
	if (strcmp(dir, harness_home) == 0) {
		fprintf(stderr, "boxctl: error: init: %s is your home ($HOME): give the agent a "
				"project directory, not the whole home\n",
			dir);
		harness_free(&h);
		return BOXCTL_EXIT_FAILURE;
	}
	if (k->state) {
		state = path_join(harness_home, k->state);
		if (!state) {
			harness_free(&h);
			return BOXCTL_EXIT_FAILURE;
		}
		if (lstat(state, &st) < 0) {
			if (mkdir(state, 0700) < 0) {
				fprintf(stderr, "boxctl: error: init: cannot make %s: %m\n", state);
				harness_free(&h);
				return BOXCTL_EXIT_FAILURE;
			}
			state_made = true;
		} else if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "boxctl: error: init: %s is not a directory (a symlink? "
					"box.ini grants canonical directories only)\n",
				state);
			harness_free(&h);
			return BOXCTL_EXIT_FAILURE;
		}
		state_spelled = ini_spelling(state, home);
	}

	/* The project's secret files, and the harness's own logins. */
	struct scan sc = { 0 };
	struct box_walk_budget budget;
	box_walk_budget_init(&budget, INIT_SCAN_ENTRIES, INIT_SCAN_MS);
	r = box_walk_tree(dir, &budget, scan_skip, scan_visit, &sc);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: init: scanning %s: %s\n", dir, strerror(-r));
		scan_free(&sc);
		harness_free(&h);
		return BOXCTL_EXIT_FAILURE;
	}
	if (sc.n > 1)
		qsort(sc.found, sc.n, sizeof(char *), cmp_str);
	for (size_t i = 0; k->state_secrets && k->state_secrets[i]; i++) {
		_cleanup_free_ char *p = path_join(state, k->state_secrets[i]);
		if (p && lstat(p, &st) == 0 && S_ISREG(st.st_mode) && scan_add(&sc, p, &st) < 0) {
			fprintf(stderr, "boxctl: error: init: out of memory\n");
			scan_free(&sc);
			harness_free(&h);
			return BOXCTL_EXIT_FAILURE;
		}
	}

	/* The variables. */
	struct init_vars v = { 0 };
	_cleanup_free_ char *deny_all = NULL, *command = NULL;
	size_t dl = 0, cl = 0;
	FILE *fd_all = open_memstream(&deny_all, &dl);
	FILE *fcmd = open_memstream(&command, &cl);
	if (!fd_all || !fcmd) {
		fprintf(stderr, "boxctl: error: init: out of memory\n");
		return BOXCTL_EXIT_FAILURE;
	}
	if (sc.n)
		fprintf(fd_all, "; hidden: secret files (a mask over each, in every sandbox of the box)\n");
	for (size_t i = 0; i < sc.n; i++) {
		_cleanup_free_ char *s = ini_spelling(sc.found[i], home);
		fprintf(fd_all, "deny = %s\n", s ? s : sc.found[i]);
	}
	fclose(fd_all);
	/* Trailing newline off: the template puts the line break. */
	if (dl && deny_all[dl - 1] == '\n')
		deny_all[dl - 1] = '\0';
	append_word(fcmd, h.program);
	for (int i = program ? 0 : 1; generic && i < n_cmd; i++) {
		fputc(' ', fcmd);
		append_word(fcmd, cmd[i]);
	}
	fclose(fcmd);

	char name[BOX_NAME_MAX + 1];
	box_name(dir, k, name, sizeof(name));
	char port[16], dest[300], api_path[600], api_base[900], url[900];
	snprintf(port, sizeof(port), "%u", api.port);
	snprintf(dest, sizeof(dest), api.port == 443 ? "%s" : "%s:%u", api.host, api.port);
	snprintf(api_path, sizeof(api_path), "%s%s", api.path,
		 generic ? "" : strcmp(k->name, "codex") == 0 ? "/*" : k->api_path);
	snprintf(api_base, sizeof(api_base), "https://%s%s", dest, api.path);
	snprintf(url, sizeof(url), "%s", api_url ? api_base : "");
	_cleanup_free_ char *dir_policy = ini_spelling(dir, home);
	_cleanup_free_ char *prog_policy = ini_spelling(h.program, home);
	char why[300];
	snprintf(why, sizeof(why), "%s's other endpoints (telemetry, metrics, feature flags) are "
				   "not needed",
		 k->title);

	_cleanup_free_ char *nonessential = cedar_list(k->nonessential);
	_cleanup_free_ char *how = NULL;
	if (strcmp(h.real, h.program) != 0 &&
	    asprintf(&how, ",\n; whose launcher %s runs this binary", h.real) < 0)
		how = NULL;
	struct tools tools = { 0 };
	_cleanup_free_ char *err = NULL;
	r = 0;
#define SET(n, val)                                          \
	do {                                                 \
		if (r >= 0)                                  \
			r = init_vars_set(&v, (n), (val));   \
	} while (0)
	for (size_t i = 0; i < ELEMENTSOF(agents); i++)
		SET(agents[i].flag, agents[i].flag == k->flag ? "1" : "");
	SET("AGENT", k->name);
	SET("TITLE", k->title);
	SET("NAME", name);
	SET("DIR", dir);
	SET("DIR_POLICY", dir_policy);
	SET("FOUND", h.found);
	SET("HOW", how);
	SET("PROGRAM", command);
	SET("PROGRAM_POLICY", prog_policy);
	SET("STATE", state_spelled);
	SET("STATE_POLICY", state_spelled);
	SET("STATE_ABS", state);
	SET("HARNESS_HOME", harness_home);
	SET("INSTALL", h.install);
	SET("INSTALL_EXEC", h.install_exec ? "1" : "");
	SET("DENY", deny_all);
	SET("SECRET_VAR", generic ? "" : k->secret_var);
	SET("EGRESS", k->egress);
	SET("API_HOST", generic ? "" : api.host);
	SET("API_PORT", port);
	SET("API_DEST", dest);
	SET("API_PATH", api_path);
	SET("API_BASE", api_base);
	SET("API_URL", url);
	SET("API_HEADER", k->api_header);
	SET("PLACEHOLDER_PREFIX", k->placeholder_prefix);
	SET("ANTHROPIC_BASE_URL",
	    api_url && k->base_url_var && strcmp(k->base_url_var, "ANTHROPIC_BASE_URL") == 0 ? "1" : "");
	SET("GOOGLE_GEMINI_BASE_URL",
	    api_url && k->base_url_var && strcmp(k->base_url_var, "GOOGLE_GEMINI_BASE_URL") == 0 ? "1"
												    : "");
	SET("NONESSENTIAL_HOSTS", nonessential);
	SET("NONESSENTIAL_WHY", k->nonessential_why);
	SET("NONESSENTIAL_PATHS_WHY", why);
	SET("TOOLS", "");
	SET("TOOL_PATHS", "");
	if (r >= 0)
		r = render_tools(&v, home, &tools, &err);
	SET("TOOLS", tools.blocks);
	SET("TOOL_PATHS", tools.cedar);
#undef SET

	_cleanup_free_ char *ini = NULL, *pol = NULL, *gem = NULL;
	if (r >= 0)
		r = init_render("box.ini.in", &v, &ini, &err);
	if (r >= 0) {
		char *wrapped = wrap_comments(ini);
		free(ini);
		ini = wrapped;
		if (!ini)
			r = -ENOMEM;
	}
	/* A key line too long for box.ini (a long path): refused, nothing written. */
	for (const char *p = ini; r >= 0 && p && *p;) {
		size_t n = strcspn(p, "\n");
		if (n > BOX_CONFIG_LINE_MAX) {
			fprintf(stderr, "boxctl: error: init: box.ini would have a line of %zu bytes "
					"(box.ini(5) takes %d): %.60s…; use shorter paths\n",
				n, BOX_CONFIG_LINE_MAX, p);
			r = -ENAMETOOLONG;
			break;
		}
		p += n + (p[n] == '\n');
	}
	if (r == -ENAMETOOLONG)
		goto out;
	if (r >= 0)
		r = init_render("policy.cedar.in", &v, &pol, &err);
	if (r >= 0 && n_out == 3)
		r = init_render("gemini-settings.json.in", &v, &gem, &err);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: init: %s\n", err ? err : strerror(-r));
		goto out;
	}
	const char *texts[] = { ini, pol, gem };
	if (n_out == 3) {
		_cleanup_free_ char *gdir = path_join(dir, ".gemini");
		if (!gdir || (mkdir(gdir, 0755) < 0 && errno != EEXIST))
			r = gdir ? -errno : -ENOMEM;
		if (r < 0)
			fprintf(stderr, "boxctl: error: init: cannot make %s/.gemini: %s\n", dir,
				strerror(-r));
	}
	for (size_t i = 0; i < n_out && r >= 0; i++) {
		r = write_whole(dir, outputs[i], texts[i]);
		if (r < 0)
			fprintf(stderr, "boxctl: error: init: writing %s/%s: %s\n", dir, outputs[i],
				strerror(-r));
	}
	if (r < 0)
		goto out;
	if ((r = init_verify(dir, outputs, n_out, generic ? NULL : k->secret_var)) < 0)
		goto out;

	/* What it chose, and what to do next. */
	printf("boxctl init: %s: %s\n", k->title, h.how);
	printf("wrote %s/box.ini and %s/policy.cedar%s (box %s)\n", dir, dir,
	       n_out == 3 ? " and .gemini/settings.json" : "", name);
	if (gemini_settings_kept)
		printf("  note        %s/.gemini/settings.json exists and was left as it is: with "
		       "--api-url, Gemini CLI needs \"security\": {\"auth\": {\"selectedType\": "
		       "\"gemini-api-key\"}} in it\n",
		       dir);
	printf("  workspace   %s (read-write)\n", dir);
	for (size_t i = 0; i < sc.n; i++)
		printf("  hidden      %s (secret)\n", sc.found[i]);
	for (size_t i = 0; i < sc.n_linked; i++)
		printf("  warning     %s has several hard links: box.ini cannot hide it (box.ini(5)); "
		       "the policy still refuses it through box's shell\n",
		       sc.linked[i]);
	if (sc.too_many || budget.cut)
		printf("  warning     the scan for secret files stopped early (more than %d, or a "
		       "large tree): add deny entries for the rest\n",
		       INIT_DENY_MAX);
	if (state)
		printf("  state       %s (read-write%s)\n", state, state_made ? "; created" : "");
	if (h.install)
		printf("  install     %s (read-only%s)\n", h.install, h.install_exec ? ", exec" : "");
	if (!generic) {
		printf("  model API   %s: your $%s, put in by box-gateway; the agent holds a "
		       "placeholder\n",
		       dest, k->secret_var);
		printf("  refused     %s and %s's other paths (with a reason in the log), and "
		       "every host the policy does not permit\n",
		       k->nonessential, api.host);
	}
	printf("  tools       %s (each in its own sandbox)\n", tools.names && *tools.names ? tools.names : "none");
	printf("  policy      everyday commands and files in the project; recursive rm refused; "
	       "one git push per 10 minutes\n");
	printf("next:\n");
	printf("  1. read box.ini and policy.cedar and change what does not fit this project\n");
	if (!generic)
		printf("  2. export %s=...   (boxctl reads it when the box starts)\n", k->secret_var);
	printf("  %d. boxctl check     (in %s: the config as box reads it)\n", generic ? 2 : 3, dir);
	printf("  %d. %s\n", generic ? 3 : 4, k->run_hint);
out:
	free(tools.cedar);
	free(tools.blocks);
	free(tools.names);
	init_vars_clear(&v);
	scan_free(&sc);
	harness_free(&h);
	return r < 0 ? BOXCTL_EXIT_FAILURE : BOXCTL_EXIT_OK;
}
