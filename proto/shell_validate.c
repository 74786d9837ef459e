/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell_validate.c — validators for box-shell's two protocols
 * (proto_shell.h). Shape and ranges only: what a command means is
 * box-shell's business; which sandbox a SpawnRequest gets is boxd's (it
 * re-checks the named table against its own config).
 * Shell text and arguments may be any bytes but NUL (box-shell reports text
 * that is not UTF-8 itself); names, paths and messages are
 * checked here.
 * Trusts: nothing. Pure; never logs.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "path.h"
#include "proto_shell.h"
#include "text.h"
#include "validate_macros.h"

#define PATH_MAX_LEN 4095u

/* Absolute, clean (no "." or ".." component, no "//", no trailing "/"). */
static bool
abs_path_ok(const char *s)
{
	return box_text_len_ok(s, 1, PATH_MAX_LEN) && path_is_clean_absolute(s);
}

/* NAME=value with a valid NAME; the value any bytes. */
static bool
env_entry_ok(const char *s)
{
	if (!box_text_len_ok(s, 2, BOX_SHELL_ARG_MAX))
		return false;
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || (size_t)(eq - s) > 255)
		return false;
	char name[256];
	memcpy(name, s, (size_t)(eq - s));
	name[eq - s] = 0;
	return box_valid_env_name(name);
}

static int
strings_ok(char **v, size_t n, size_t max_n, size_t min_len)
{
	REQUIRE(n <= max_n, -E2BIG);
	for (size_t i = 0; i < n; i++)
		REQUIRE(box_text_len_ok(v[i], min_len, BOX_SHELL_ARG_MAX), -EINVAL);
	return 0;
}

static int
env_ok(char **v, size_t n)
{
	REQUIRE(n <= BOX_SHELL_ENV_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++)
		REQUIRE(env_entry_ok(v[i]), -EINVAL);
	return 0;
}

static bool
message_ok(const char *s)
{
	return box_text_utf8_ok(s, 1, BOX_SHELL_MESSAGE_MAX);
}

int
box_validate_shell_open(const Box__ShellOpen *m)
{
	switch (m->mode) {
	case BOX__SHELL_MODE__SHELL_MODE_COMMAND:
		REQUIRE(m->command && !m->script, -EINVAL);
		REQUIRE(strlen(m->command) <= BOX_SHELL_COMMAND_MAX, -E2BIG);
		break;
	case BOX__SHELL_MODE__SHELL_MODE_SCRIPT:
		REQUIRE(m->script && !m->command, -EINVAL);
		REQUIRE(box_text_len_ok(m->script, 1, PATH_MAX_LEN), -EINVAL);
		break;
	case BOX__SHELL_MODE__SHELL_MODE_STDIN:
	case BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE:
		REQUIRE(!m->command && !m->script, -EINVAL);
		break;
	default:
		return -EINVAL;
	}
	REQUIRE(box_text_len_ok(m->arg0, 0, BOX_SHELL_ARG_MAX), -EINVAL);
	TRY(strings_ok(m->args, m->n_args, BOX_SHELL_ARGS_MAX, 0));
	static const char *const shells[] = { "sh", "bash", "zsh", "dash", "rbash" };
	bool known = false;
	for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++)
		known = known || strcmp(m->invoked_as, shells[i]) == 0;
	REQUIRE(known, -EINVAL);
	TRY(env_ok(m->env, m->n_env));
	REQUIRE(abs_path_ok(m->cwd), -EINVAL);
	return 0;
}

int
box_validate_shell_signal(const Box__ShellSignal *m)
{
	int s = m->signal;
	REQUIRE(s == SIGINT || s == SIGTERM || s == SIGHUP || s == SIGWINCH, -EINVAL);
	return 0;
}

int
box_validate_shell_exit(const Box__ShellExit *m)
{
	REQUIRE(m->status >= 0 && m->status <= 255, -ERANGE);
	return 0;
}

int
box_validate_shell_denied(const Box__ShellDenied *m)
{
	REQUIRE(message_ok(m->message), -EINVAL);
	return 0;
}

int
box_validate_shell_init(const Box__ShellInit *m)
{
	/* The same rules as BoxSpec (validate.c): a box that loads must get its shell. */
	REQUIRE(box_valid_name(m->box_name), -EINVAL);
	REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	REQUIRE(abs_path_ok(m->home) && abs_path_ok(m->workspace), -EINVAL);
	REQUIRE(box_text_len_ok(m->path, 0, 65536) && box_text_no_ctl(m->path), -EINVAL);
	if (m->has_command_timeout_ms)
		REQUIRE(m->command_timeout_ms >= 1 &&
				m->command_timeout_ms <= BOX_SHELL_TIMEOUT_MAX_MS,
			-ERANGE);
	REQUIRE(m->n_tools <= BOX_SHELL_TOOLS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_tools; i++) {
		const Box__ShellTool *t = m->tools[i];
		REQUIRE(box_valid_name(t->name) && abs_path_ok(t->program), -EINVAL);
		TRY(strings_ok(t->fixed_args, t->n_fixed_args, 256, 0));
		REQUIRE(t->n_credential_reads <= BOX_SHELL_CREDENTIALS_MAX, -E2BIG);
		for (size_t j = 0; j < t->n_credential_reads; j++) {
			const char *c = t->credential_reads[j];
			/* "~/REL" (a store under the owner's home) or an absolute path */
			REQUIRE(box_text_utf8_ok(c, 2, PATH_MAX_LEN), -EINVAL);
			REQUIRE((c[0] == '~' && c[1] == '/' && path_is_clean_absolute(c + 1)) ||
					abs_path_ok(c),
				-EINVAL);
		}
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(m->tools[j]->name, t->name) != 0, -EINVAL);
	}
	REQUIRE(m->n_exec_entries <= BOX_SHELL_EXEC_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_exec_entries; i++)
		REQUIRE(abs_path_ok(m->exec_entries[i]), -EINVAL);
	if (m->host_python)
		REQUIRE(abs_path_ok(m->host_python) && !m->python_tool, -EINVAL);
	return 0;
}

int
box_validate_shell_ready(const Box__ShellReady *m)
{
	if (m->ok)
		REQUIRE(!m->error, -EINVAL);
	else
		REQUIRE(message_ok(m->error), -EINVAL);
	return 0;
}

int
box_validate_spawn_request(const Box__SpawnRequest *m)
{
	REQUIRE(m->spawn_id != 0, -EINVAL);
	if (m->tool)
		REQUIRE(box_valid_name(m->tool), -EINVAL);
	REQUIRE(abs_path_ok(m->program_path), -EINVAL);
	REQUIRE(m->n_argv >= 1, -EINVAL);
	/* argv[0] is only the name the program sees (exec -a NAME, '' too) */
	TRY(strings_ok(m->argv, m->n_argv, BOX_SHELL_ARGS_MAX, 0));
	TRY(env_ok(m->env, m->n_env));
	REQUIRE(!m->clear_env || m->n_env == 0, -EINVAL); /* exec -c passes nothing */
	REQUIRE(abs_path_ok(m->cwd), -EINVAL);
	REQUIRE(!m->python || !m->tool, -EINVAL); /* the host python3 has no table */
	return 0;
}

int
box_validate_spawn_reply(const Box__SpawnReply *m)
{
	REQUIRE(m->spawn_id != 0, -EINVAL);
	if (m->ok) {
		REQUIRE(!m->error && m->sandbox, -EINVAL);
		REQUIRE(strcmp(m->sandbox, "exec") == 0 || strcmp(m->sandbox, "python") == 0 ||
				(strncmp(m->sandbox, "tool.", 5) == 0 && box_valid_name(m->sandbox + 5)),
			-EINVAL);
	} else {
		REQUIRE(message_ok(m->error) && !m->sandbox, -EINVAL);
	}
	return 0;
}

int
box_validate_spawn_exit(const Box__SpawnExit *m)
{
	REQUIRE(m->spawn_id != 0, -EINVAL);
	REQUIRE(m->status >= 0 && m->status <= 255, -ERANGE);
	return 0;
}

int
box_validate_spawn_signal(const Box__SpawnSignal *m)
{
	static const int ok[] = { SIGINT, SIGTERM, SIGHUP, SIGKILL, SIGQUIT, SIGCONT,
				  SIGSTOP, SIGTSTP, SIGPIPE, SIGUSR1, SIGUSR2, SIGWINCH };
	REQUIRE(m->spawn_id != 0, -EINVAL);
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (m->signal == ok[i])
			return 0;
	return -EINVAL;
}

/* Both or neither; each 1-65535 (a struct winsize field). */
static int
size_ok(bool has_rows, uint32_t rows, bool has_cols, uint32_t cols)
{
	REQUIRE(has_rows == has_cols, -EINVAL);
	if (has_rows)
		REQUIRE(rows >= 1 && rows <= 65535 && cols >= 1 && cols <= 65535, -ERANGE);
	return 0;
}

int
box_validate_shell_attach(const Box__ShellAttach *m)
{
	REQUIRE(m->attach_id != 0, -EINVAL);
	TRY(size_ok(m->has_rows, m->rows, m->has_cols, m->cols));
	if (m->term)
		REQUIRE(box_valid_term(m->term), -EINVAL);
	TRY(env_ok(m->env, m->n_env));
	return 0;
}

int
box_validate_shell_attached(const Box__ShellAttached *m)
{
	REQUIRE(m->attach_id != 0, -EINVAL);
	if (m->ok)
		REQUIRE(!m->error, -EINVAL);
	else
		REQUIRE(message_ok(m->error), -EINVAL);
	return 0;
}
