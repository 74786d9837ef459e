/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_shell.h — box-shell's protocols (shell.proto):
 *   box_proto_session  the shell alias <-> box-shell, one connection to
 *                      RUNTIME/shell.sock per invocation
 *   box_proto_shell    boxd <-> box-shell on box-shell's fd 3
 *
 * The tables (proto_shell.c) are the receiver's rules; proto/README.md is the
 * human version.
 * Session roles: alias, box-shell. States:
 *   open     nothing exchanged: only ShellOpen (the alias, once, 3 fds)
 *   running  ShellSignal (alias), any number; ShellExit or ShellDenied
 *            (box-shell, once) ends it
 *   ended    nothing more may pass
 * Control roles: boxd, box-shell. States:
 *   init     only ShellInit (boxd, once)
 *   starting only ShellReady (box-shell, once)
 *   serving  SpawnRequest / SpawnSignal (box-shell), SpawnReply / SpawnExit
 *            (boxd), any number
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_SHELL_H
#define BOX_PROTO_SHELL_H

#include "ipc.h"
#include "shell.pb-c.h"

enum box_session_role {
	BOX_SESSION_ROLE_ALIAS,
	BOX_SESSION_ROLE_SHELL,
	BOX_SESSION_N_ROLES,
};

enum box_session_state {
	BOX_SESSION_OPEN,
	BOX_SESSION_RUNNING,
	BOX_SESSION_ENDED,
	BOX_SESSION_N_STATES,
};

enum box_shell_role {
	BOX_SHELL_ROLE_BOXD,
	BOX_SHELL_ROLE_SHELL,
	BOX_SHELL_N_ROLES,
};

enum box_shell_state {
	BOX_SHELL_INIT,
	BOX_SHELL_STARTING,
	BOX_SHELL_SERVING,
	BOX_SHELL_N_STATES,
};

/* Caps the validators enforce (docs/box-shell.8.md names them). */
#define BOX_SHELL_COMMAND_MAX   (1u << 20)  /* a -c text: 1 MiB (reassembled) */
#define BOX_SHELL_ARG_MAX       (256u << 10) /* one argument, one NAME=value */
#define BOX_SHELL_ARGS_MAX      4096u       /* positional parameters, argv entries */
#define BOX_SHELL_ENV_MAX       4096u       /* environment entries */
#define BOX_SHELL_OPEN_MAX      (4u << 20)  /* a whole ShellOpen (reassembled) */
#define BOX_SHELL_TOOLS_MAX     256u        /* [tool.NAME] tables */
#define BOX_SHELL_EXEC_MAX      1024u       /* agent exec entries */
#define BOX_SHELL_CREDENTIALS_MAX 16u      /* credential stores a tool's grants name */
#define BOX_SHELL_MESSAGE_MAX   4096u       /* ShellDenied, SpawnReply.error, ShellReady.error */
/* ShellInit.command_timeout_ms: as long as [box] command_timeout may be (validate.c: 366 days). */
#define BOX_SHELL_TIMEOUT_MAX_MS (366ull * 24 * 3600 * 1000)

extern const struct box_ipc_protocol box_proto_session;
extern const struct box_ipc_protocol box_proto_shell;

int box_validate_shell_open(const Box__ShellOpen *m);
int box_validate_shell_signal(const Box__ShellSignal *m);
int box_validate_shell_exit(const Box__ShellExit *m);
int box_validate_shell_denied(const Box__ShellDenied *m);
int box_validate_shell_init(const Box__ShellInit *m);
int box_validate_shell_ready(const Box__ShellReady *m);
int box_validate_spawn_request(const Box__SpawnRequest *m);
int box_validate_spawn_reply(const Box__SpawnReply *m);
int box_validate_spawn_exit(const Box__SpawnExit *m);
int box_validate_spawn_signal(const Box__SpawnSignal *m);
int box_validate_shell_attach(const Box__ShellAttach *m);
int box_validate_shell_attached(const Box__ShellAttached *m);
/* ShellAttached carries 2 fds when ok (the pty master, the end pipe), none otherwise. */
int box_validate_shell_attached_fds(const ProtobufCMessage *m, unsigned n_fds);

#endif
