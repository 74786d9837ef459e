/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prompt.h — `boxctl run`'s own question at its terminal when the box holds a decision for
 * a person (a forbid annotated @ask; docs/boxctl.1.md, "A decision at the terminal").
 * See prompt.c. Driven by run.c's poll loop, like the relay's streams.
 */
#ifndef BOXCTL_PROMPT_H
#define BOXCTL_PROMPT_H

#include <poll.h>
#include <stdbool.h>

#include "ipc.h"
#include "relay.h"

struct prompt;

/*
 * A prompt for box BOX_ID (NAME) on boxd connection BOXD_FD: the caller's terminal is IN_FD
 * (read, raw mode) and OUT_FD (drawn on); the box's pty is MASTER, relayed by the streams
 * KEYS (IN_FD → MASTER) and SCREEN (MASTER → OUT_FD, its bytes watched into MODES); the
 * window size is WS_FD's. ASK_TIMEOUT_MS: [box] ask_timeout (0: box-policyd's default),
 * only said. NULL without memory.
 */
struct prompt *prompt_new(int boxd_fd, const char *box_id, const char *name, int in_fd,
			  int out_fd, int master, int ws_fd, struct stream *keys,
			  struct stream *screen, struct term_modes *modes, uint64_t ask_timeout_ms);
void prompt_free(struct prompt *p);

/* The pollfd entries it needs now (at most PROMPT_POLLFDS) into P; returns the count. */
#define PROMPT_POLLFDS 3
unsigned prompt_poll(struct prompt *p, struct pollfd *pfd);
/* The poll timeout it needs (ms; -1 none). */
int prompt_timeout(const struct prompt *p);
/* After poll: act on the entries prompt_poll gave (N of them), and on its timers. */
void prompt_ready(struct prompt *p, const struct pollfd *pfd, unsigned n);
/* A message from boxd: true when it was the prompt's (an AskReply, an ErrorReply to one). */
/* (A listing is kept: M->msg is taken.) */
bool prompt_msg(struct prompt *p, struct box_ipc_msg *m);
/* The window size changed: draw again. */
void prompt_winch(struct prompt *p);
/* The terminal went away (read EOF/EIO while the prompt read it). */
bool prompt_hung_up(const struct prompt *p);
/* The terminal is gone: stop, draw nothing more, let the streams go. */
void prompt_abandon(struct prompt *p);
/* The agent ended (RunExit): leave the prompt, put the terminal back and write out what
 * was held, before the streams are drained. */
void prompt_finish(struct prompt *p);

#endif
