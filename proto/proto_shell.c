/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_shell.c — the tables of box-shell's two protocols (proto_shell.h).
 * Every row: type, descriptor, validator (shell_validate.c), size caps,
 * fds, who sends it, the channel states in which it may pass and the state
 * it leads to. Linked only into the programs that speak them (the alias and
 * box-shell: the session; boxd and box-shell: the control channel).
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <errno.h>

#include "proto_shell.h"
#include "walk.h"

#define VALIDATOR(fn, Type)                            \
	static int fn##_row(const ProtobufCMessage *m) \
	{                                              \
		return fn((const Type *)m);            \
	}
VALIDATOR(box_validate_shell_open, Box__ShellOpen)
VALIDATOR(box_validate_shell_signal, Box__ShellSignal)
VALIDATOR(box_validate_shell_exit, Box__ShellExit)
VALIDATOR(box_validate_shell_denied, Box__ShellDenied)
VALIDATOR(box_validate_shell_init, Box__ShellInit)
VALIDATOR(box_validate_shell_ready, Box__ShellReady)
VALIDATOR(box_validate_spawn_request, Box__SpawnRequest)
VALIDATOR(box_validate_spawn_reply, Box__SpawnReply)
VALIDATOR(box_validate_spawn_exit, Box__SpawnExit)
VALIDATOR(box_validate_spawn_signal, Box__SpawnSignal)
VALIDATOR(box_validate_shell_attach, Box__ShellAttach)
VALIDATOR(box_validate_shell_attached, Box__ShellAttached)

/* ShellOpen and SpawnRequest carry exactly stdin, stdout and stderr. */
static int
three_fds(const ProtobufCMessage *m, unsigned n_fds)
{
	(void)m;
	return n_fds == 3 ? 0 : -EBADMSG;
}

int
box_validate_shell_attached_fds(const ProtobufCMessage *m, unsigned n_fds)
{
	return n_fds == (((const Box__ShellAttached *)m)->ok ? 2u : 0u) ? 0 : -EBADMSG;
}

#define SS(x) BOX_IPC_BIT(BOX_SESSION_##x)
#define SFROM(x) BOX_IPC_BIT(BOX_SESSION_ROLE_##x)

static const struct box_ipc_type session_types[] = {
	/* A 1 MiB command line (docs/boxctl.1.md) is fragmented. */
	{ BOX__MSG_TYPE__MSG_SHELL_OPEN, "ShellOpen", &box__shell_open__descriptor,
	  box_validate_shell_open_row, three_fds, BOX_IPC_PAYLOAD_MAX, 3, BOX_SHELL_OPEN_MAX,
	  SFROM(ALIAS), SS(OPEN), BOX_SESSION_RUNNING, NULL },
	{ BOX__MSG_TYPE__MSG_SHELL_SIGNAL, "ShellSignal", &box__shell_signal__descriptor,
	  box_validate_shell_signal_row, NULL, 64, 0, 0, SFROM(ALIAS), SS(RUNNING),
	  BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_SHELL_EXIT, "ShellExit", &box__shell_exit__descriptor,
	  box_validate_shell_exit_row, NULL, 64, 0, 0, SFROM(SHELL), SS(OPEN) | SS(RUNNING),
	  BOX_SESSION_ENDED, NULL },
	{ BOX__MSG_TYPE__MSG_SHELL_DENIED, "ShellDenied", &box__shell_denied__descriptor,
	  box_validate_shell_denied_row, NULL, 8192, 0, 0, SFROM(SHELL), SS(OPEN) | SS(RUNNING),
	  BOX_SESSION_ENDED, NULL },
};

static const char *const session_roles[BOX_SESSION_N_ROLES] = { "alias", "box-shell" };
static const char *const session_states[BOX_SESSION_N_STATES] = { "open", "running", "ended" };

const struct box_ipc_protocol box_proto_session = {
	.name = "session",
	.types = session_types,
	.n_types = sizeof(session_types) / sizeof(session_types[0]),
	.role_names = session_roles,
	.n_roles = BOX_SESSION_N_ROLES,
	.state_names = session_states,
	.n_states = BOX_SESSION_N_STATES,
	.decode = box_proto_decode,
};

#define CS(x) BOX_IPC_BIT(BOX_SHELL_##x)
#define CFROM(x) BOX_IPC_BIT(BOX_SHELL_ROLE_##x)

/* A refusal (ok = false) leaves the channel starting: box-shell exits next. */
static bool
shell_ready_ok(const ProtobufCMessage *m)
{
	return ((const Box__ShellReady *)m)->ok;
}

static const struct box_ipc_type shell_types[] = {
	{ BOX__MSG_TYPE__MSG_SHELL_INIT, "ShellInit", &box__shell_init__descriptor,
	  box_validate_shell_init_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 4u << 20, CFROM(BOXD),
	  CS(INIT), BOX_SHELL_STARTING, NULL },
	{ BOX__MSG_TYPE__MSG_SHELL_READY, "ShellReady", &box__shell_ready__descriptor,
	  box_validate_shell_ready_row, NULL, 8192, 0, 0, CFROM(SHELL), CS(STARTING),
	  BOX_SHELL_SERVING, shell_ready_ok },
	{ BOX__MSG_TYPE__MSG_SPAWN_REQUEST, "SpawnRequest", &box__spawn_request__descriptor,
	  box_validate_spawn_request_row, three_fds, BOX_IPC_PAYLOAD_MAX, 3, BOX_SHELL_OPEN_MAX,
	  CFROM(SHELL), CS(SERVING), BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_SPAWN_REPLY, "SpawnReply", &box__spawn_reply__descriptor,
	  box_validate_spawn_reply_row, NULL, 8192, 0, 0, CFROM(BOXD), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_SPAWN_EXIT, "SpawnExit", &box__spawn_exit__descriptor,
	  box_validate_spawn_exit_row, NULL, 64, 0, 0, CFROM(BOXD), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_SPAWN_SIGNAL, "SpawnSignal", &box__spawn_signal__descriptor,
	  box_validate_spawn_signal_row, NULL, 64, 0, 0, CFROM(SHELL), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
	/* `boxctl shell`: a person's session on a pty of box-shell's devpts. */
	{ BOX__MSG_TYPE__MSG_SHELL_ATTACH, "ShellAttach", &box__shell_attach__descriptor,
	  box_validate_shell_attach_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 0, CFROM(BOXD), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_SHELL_ATTACHED, "ShellAttached", &box__shell_attached__descriptor,
	  box_validate_shell_attached_row, box_validate_shell_attached_fds, 8192, 2, 0,
	  CFROM(SHELL), CS(SERVING), BOX_IPC_STATE_SAME, NULL },
};

static const char *const shell_roles[BOX_SHELL_N_ROLES] = { "boxd", "box-shell" };
static const char *const shell_states[BOX_SHELL_N_STATES] = { "init", "starting", "serving" };

const struct box_ipc_protocol box_proto_shell = {
	.name = "shell",
	.types = shell_types,
	.n_types = sizeof(shell_types) / sizeof(shell_types[0]),
	.role_names = shell_roles,
	.n_roles = BOX_SHELL_N_ROLES,
	.state_names = shell_states,
	.n_states = BOX_SHELL_N_STATES,
	.decode = box_proto_decode,
};
