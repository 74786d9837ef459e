/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prompt.c — `boxctl run` asks its person at its own terminal (docs/boxctl.1.md, "A
 * decision at the terminal"): when the box holds a decision for a person (a forbid
 * annotated @ask, docs/box-policy.5.md), boxctl stops relaying the box's terminal, shows
 * the request on a screen of its own and reads the answer from its own terminal.
 *
 * How it learns that something waits: every PROMPT_POLL_MS it sends, on its run
 * connection, the AskRequest listing `boxctl approve NAME` sends (one in flight at a time);
 * boxd answers it for the box's owner or root, as it answers approve (boxd/client.c). An
 * answer is the AskRequest `boxctl approve|deny NAME N [--box]` sends, on the same
 * connection: box-policyd logs it with source "person" and boxctl's uid. The answer
 * "always" is `boxctl approve NAME N --always` (boxctl/ask.c), run in a child as boxctl's
 * user while the loop waits; its words are shown escaped, until Enter.
 *
 * The screen: once a decision waits, the relay's streams are paused (prompt_poll: the
 * keys no longer read the terminal, the screen no longer reads the pty), what the screen
 * still holds goes out, then boxctl draws — on the alternate screen (or, when the agent is
 * on it already, over it), attributes, charset and margins reset — the request: the
 * action, its fields, the rules, the message with the rule's @description and who asked,
 * every string of the box's escaped (termsafe.c: the agent chose them). Then it discards
 * the terminal's input queue (tcflush TCIFLUSH: keys typed ahead, replies the terminal
 * owed to the agent's queries) and reads the person's answer from its own fd 0: a code of
 * PROMPT_CODE_LEN digits drawn from getrandom(2) for this screen alone, then one letter
 * (`choices`), then Enter. The box's pty never reaches this reader: its bytes are held
 * (below) while the prompt is up, so nothing the agent writes, draws or makes the terminal
 * answer can give the answer — it would need the code, which exists only on the screen
 * after the agent's output stopped. A wrong code answers nothing and draws a new code.
 * Escape sequences in the input (function keys, mouse reports, bracketed paste's marks,
 * terminal replies) are skipped whole. Ctrl-C leaves the prompt without answering ("not
 * now": every decision then listed waits on, for `boxctl approve|deny` or its timeout).
 *
 * While the prompt is up the box's terminal output is read into a buffer of at most
 * PROMPT_HOLD_MAX bytes; past it boxctl stops reading the pty, so the agent's next write
 * to its terminal waits — nothing is lost. When the prompt is done: the screen and the
 * cursor are put back as the agent left them (term_modes, relay.c), the input queue is
 * discarded again (keys meant for the prompt do not reach the agent), the held output is
 * written, and the pty is resized to the same size through another (relay_redraw): the
 * kernel's SIGWINCH makes a full-screen agent draw itself again.
 * Trusts: boxd's replies only after box_ipc_decode() validated them (no control
 * character in them; escaped again on output); nothing the box wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ask.h"
#include "client.h"
#include "prompt.h"
#include "termsafe.h"

#define PROMPT_POLL_MS 500          /* how often boxd is asked what waits */
#define PROMPT_REPLY_WAIT_MS 10000  /* a reply that never came is given up (asked again) */
#define PROMPT_NOTICE_MS 1000       /* how long a notice stays before the next screen */
#define PROMPT_HOLD_MAX (1u << 20)  /* the box's terminal output held while the prompt is up */
#define PROMPT_HOLD_CHUNK (64u << 10)
#define PROMPT_CODE_LEN 4
#define PROMPT_LINE_MAX 32          /* what the person types */
#define PROMPT_DONE_MAX 64          /* decisions not to ask again (answered here, not now) */
#define PROMPT_TTY_CHUNK 256u       /* as relay.c: what a terminal that says POLLOUT takes */
#define PROMPT_ALWAYS_OUT_MAX (64u << 10) /* what the answer "always" said, shown */
#define PROMPT_ALWAYS_WAIT_MS 120000      /* its every boxd call has its own 10 s bound */

/*
 * The answers a person gives here, one letter each: choice_request fills the AskRequest
 * from the row. "always" is not one request but `boxctl approve --always` (ask_always,
 * boxctl/ask.c: the policy file edited, checked, written, reloaded, then the decision
 * permitted), run in a child whose words are shown on the prompt's screen (answer_always).
 */
static const struct choice {
	char key;
	const char *label; /* on the screen */
	const char *done;  /* said once boxd took it */
	bool permit, for_box, always;
} choices[] = {
	{ 'o', "permit it once", "permitted once", true, false, false },
	{ 'b', "permit it for the rest of this box", "permitted for the rest of this box", true,
	  true, false },
	{ 'a', "permit it always: add it to the policy file (the change is shown, checked and "
	       "reloaded)", "permitted always", true, false, true },
	{ 'd', "deny it", "denied", false, false, false },
};

static void
choice_request(const struct choice *c, Box__AskRequest *q)
{
	q->has_permit = q->has_for_box = true;
	q->permit = c->permit;
	q->for_box = c->for_box;
}

enum pstate {
	P_IDLE,   /* nothing waits: the streams flow */
	P_WANT,   /* something waits: the streams paused, the screen's last bytes going out */
	P_ACTIVE, /* the prompt is on the screen */
	P_NOTICE, /* a line said on the prompt's screen, until notice_until */
	P_REPLAY, /* the screen put back; the held output going out */
};

struct prompt {
	int boxd_fd, in_fd, out_fd, master, ws_fd;
	char box_id[16];
	char *name;
	struct stream *keys, *screen;
	struct term_modes *modes;
	struct term_modes at_start; /* the modes when the prompt took the screen */
	uint64_t timeout_ms;

	enum pstate st;
	bool polling;     /* false once boxd refused to list (not the owner, too old) */
	bool hangup;
	bool gone;        /* abandoned: the terminal is gone */
	uint64_t rid_next;
	uint64_t list_rid, answer_rid; /* requests in flight (0: none) */
	int64_t list_sent, answer_sent, next_list;
	Box__AskReply *list;           /* the last listing */
	uint64_t done[PROMPT_DONE_MAX];
	size_t n_done, done_next;

	uint64_t shown;                /* the decision on the screen */
	size_t drawn_n;                /* how many waited when it was drawn */
	const struct choice *answering;
	char code[PROMPT_CODE_LEN + 1];
	char line[PROMPT_LINE_MAX + 1];
	size_t line_len;
	unsigned char esc;             /* the input's escape-sequence state */
	unsigned esc_skip;
	const char *note;              /* said above the code on the next drawing */
	char notice[512];
	int64_t notice_until;
	bool notice_key;               /* the notice stays until Enter (the answer "always") */
	bool master_eof;

	char *hold;
	size_t hold_len, hold_off, hold_cap;
};

static int64_t
now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct prompt *
prompt_new(int boxd_fd, const char *box_id, const char *name, int in_fd, int out_fd, int master,
	   int ws_fd, struct stream *keys, struct stream *screen, struct term_modes *modes,
	   uint64_t ask_timeout_ms)
{
	struct prompt *p = calloc(1, sizeof(*p));
	if (!p || !(p->name = strdup(name))) {
		free(p);
		return NULL;
	}
	p->boxd_fd = boxd_fd;
	snprintf(p->box_id, sizeof(p->box_id), "%s", box_id);
	p->in_fd = in_fd;
	p->out_fd = out_fd;
	p->master = master;
	p->ws_fd = ws_fd;
	p->keys = keys;
	p->screen = screen;
	p->modes = modes;
	p->timeout_ms = ask_timeout_ms;
	p->polling = true;
	p->rid_next = 1000; /* the run's own requests use small ids */
	p->next_list = now_ms();
	return p;
}

void
prompt_free(struct prompt *p)
{
	if (!p)
		return;
	box_msg_free(p->list ? &p->list->base : NULL);
	free(p->hold);
	free(p->name);
	free(p);
}

/* ---- the terminal --------------------------------------------------------------------- */

/* All of BUF to the terminal (it may take it slowly); false when it is gone. */
static bool
term_write(struct prompt *p, const char *buf, size_t n)
{
	while (n > 0 && !p->hangup) {
		ssize_t k = write(p->out_fd, buf, n);
		if (k > 0) {
			buf += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			struct pollfd w = { .fd = p->out_fd, .events = POLLOUT };
			(void)poll(&w, 1, 1000);
			continue;
		}
		p->hangup = true;
	}
	return !p->hangup;
}

static void
term_puts(struct prompt *p, const char *s)
{
	(void)term_write(p, s, strlen(s));
}

/* Keys typed ahead and replies the terminal still owes: dropped, not read as an answer. */
static void
flush_input(struct prompt *p)
{
	(void)tcflush(p->in_fd, TCIFLUSH);
	p->esc = 0;
	p->esc_skip = 0;
}

/* A fresh code from the kernel's random source, digits without modulo bias; false when
 * there is none (then nothing can be answered here). */
static bool
new_code(struct prompt *p)
{
	size_t i = 0;
	while (i < PROMPT_CODE_LEN) {
		unsigned char b[16];
		ssize_t n = getrandom(b, sizeof(b), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		for (ssize_t k = 0; k < n && i < PROMPT_CODE_LEN; k++)
			if (b[k] < 250)
				p->code[i++] = (char)('0' + b[k] % 10);
	}
	p->code[PROMPT_CODE_LEN] = '\0';
	return true;
}

/* ---- what waits ----------------------------------------------------------------------- */

static bool
is_done(const struct prompt *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_done; i++)
		if (p->done[i] == id)
			return true;
	return false;
}

static void
mark_done(struct prompt *p, uint64_t id)
{
	if (is_done(p, id))
		return;
	if (p->n_done < PROMPT_DONE_MAX)
		p->done[p->n_done++] = id;
	else {
		p->done[p->done_next] = id; /* the oldest goes: it was listed 64 answers ago */
		p->done_next = (p->done_next + 1) % PROMPT_DONE_MAX;
	}
}

static const Box__AskEntry *
find_ask(const struct prompt *p, uint64_t id)
{
	for (size_t i = 0; p->list && i < p->list->n_asks; i++)
		if (p->list->asks[i]->ask_id == id)
			return p->list->asks[i];
	return NULL;
}

/* The oldest decision listed that was neither answered here nor put off. */
static const Box__AskEntry *
next_ask(const struct prompt *p)
{
	for (size_t i = 0; p->list && i < p->list->n_asks; i++)
		if (!is_done(p, p->list->asks[i]->ask_id))
			return p->list->asks[i];
	return NULL;
}

static size_t
n_waiting(const struct prompt *p)
{
	size_t n = 0;
	for (size_t i = 0; p->list && i < p->list->n_asks; i++)
		n += !is_done(p, p->list->asks[i]->ask_id);
	return n;
}

static int
send_ask(struct prompt *p, const Box__AskRequest *q, uint64_t *rid)
{
	*rid = p->rid_next++;
	return box_ipc_send(p->boxd_fd, &box_proto_client, BOX__MSG_TYPE__MSG_ASK_REQUEST, *rid,
			    &q->base, NULL, 0);
}

static void
send_list(struct prompt *p)
{
	Box__AskRequest q = BOX__ASK_REQUEST__INIT;
	q.box = p->box_id;
	if (send_ask(p, &q, &p->list_rid) < 0) {
		p->list_rid = 0;
		p->next_list = now_ms() + PROMPT_POLL_MS;
		return;
	}
	p->list_sent = now_ms();
}

/* ---- the screen ----------------------------------------------------------------------- */

static void
put_dur(FILE *f, uint64_t ms)
{
	if (ms % 1000 == 0)
		fprintf(f, "%" PRIu64 " s", ms / 1000);
	else
		fprintf(f, "%" PRIu64 " ms", ms);
}

/* The whole screen for the decision shown: the request, then the question, then the line. */
static void
draw(struct prompt *p)
{
	const Box__AskEntry *a = find_ask(p, p->shown);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f || !a) {
		if (f)
			fclose(f);
		free(text);
		return;
	}
	/* Attributes, charset (G0 ASCII, shifted in), insert mode, origin mode, wrap, margins,
	 * a visible cursor: whatever the agent left set, the question is drawn plainly. */
	fputs("\033[0m\033(B\017\033[4l\033[?6l\033[?7h\033[r\033[?25h\033[H\033[2J", f);
	fputs("\033[1mbox: a decision waits for you\033[0m (boxctl run, box ", f);
	put_safe(f, p->name);
	fputs(")\r\n\r\n", f);
	size_t n = n_waiting(p);
	p->drawn_n = n;
	fprintf(f, "  decision  %" PRIu64, a->ask_id);
	if (n > 1)
		fprintf(f, "  (1 of %zu waiting)", n);
	fputs("\r\n  asked by  ", f);
	put_safe(f, a->source);
	fprintf(f, ", waiting %" PRIu64 " s; no answer within ", a->waited_ms / 1000);
	put_dur(f, p->timeout_ms ? p->timeout_ms : 30000);
	fputs(" denies it\r\n  action    ", f);
	put_safe(f, a->action);
	fputs("\r\n  resource  ", f);
	put_safe(f, a->resource[0] ? a->resource : "-");
	for (size_t i = 0; i < a->n_fields; i++) {
		fputs("\r\n  field     ", f);
		put_safe(f, a->fields[i]->name);
		fputs(" = ", f);
		put_safe(f, a->fields[i]->value);
	}
	fputs("\r\n  rule      ", f);
	for (size_t k = 0; k < a->n_rules; k++) {
		if (k)
			fputs(", ", f);
		put_safe(f, a->rules[k]);
	}
	fputs("\r\n  message   ", f);
	put_safe(f, a->message);
	fputs("\r\n\r\n", f);
	if (p->note)
		fprintf(f, "  \033[1m%s\033[0m\r\n", p->note);
	fprintf(f, "  To answer, type the code \033[1m%s\033[0m, then one letter, then Enter:\r\n",
		p->code);
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++)
		fprintf(f, "    %c  %s\r\n", choices[i].key, choices[i].label);
	fputs("  Ctrl-C: not now (back to the agent; it waits on: boxctl approve|deny, or its "
	      "time runs out)\r\n\r\n", f);
	fprintf(f, "answer> %.*s", (int)p->line_len, p->line);
	if (fclose(f) == 0)
		(void)term_write(p, text, len);
	free(text);
}

static void
draw_line(struct prompt *p)
{
	char buf[PROMPT_LINE_MAX + 16];
	int k = snprintf(buf, sizeof(buf), "\r\033[Kanswer> %.*s", (int)p->line_len, p->line);
	(void)term_write(p, buf, (size_t)k);
}

static void leave(struct prompt *p);

/* Decision A on the screen with a fresh code; the input queue emptied after drawing it. */
static void
show(struct prompt *p, const Box__AskEntry *a)
{
	if (!a || !new_code(p)) {
		if (a)
			p->polling = false; /* no random code: this terminal asks nothing */
		leave(p);
		return;
	}
	p->shown = a->ask_id;
	p->line_len = 0;
	draw(p);
	p->note = NULL;
	flush_input(p);
	p->st = P_ACTIVE;
}

/* Take the terminal: the streams are paused and the screen's bytes are out. */
static void
take_screen(struct prompt *p)
{
	p->at_start = *p->modes;
	if (!p->at_start.alt)
		term_puts(p, "\033[?1049h"); /* save the cursor, the alternate screen */
	p->master_eof = false;
}

/* Put the terminal back as the agent had it: its screen, its cursor. */
static void
give_back_screen(struct prompt *p)
{
	if (p->at_start.alt)
		term_puts(p, "\033[0m\033[H\033[2J"); /* the agent redraws it (relay_redraw) */
	else
		term_puts(p, "\033[?1049l"); /* its screen and cursor as they were */
	if (p->at_start.cursor_hidden)
		term_puts(p, "\033[?25l");
	flush_input(p);
}

static void
resume(struct prompt *p)
{
	p->keys->paused = p->screen->paused = false;
	p->st = P_IDLE;
	p->shown = 0;
	relay_redraw(p->ws_fd, p->master);
}

/* Done with the screen: give it back, then the held output, then the streams. */
static void
leave(struct prompt *p)
{
	give_back_screen(p);
	p->shown = 0;
	if (p->hold_len > p->hold_off)
		p->st = P_REPLAY;
	else
		resume(p);
}

/* After an answer or a notice: the next decision that waits, else back to the agent. */
static void
next_or_leave(struct prompt *p)
{
	const Box__AskEntry *a = next_ask(p);
	if (a)
		show(p, a);
	else
		leave(p);
}

static void
notice(struct prompt *p, const char *what)
{
	snprintf(p->notice, sizeof(p->notice), "\r\n\r\n  \033[1m%s\033[0m\r\n", what);
	term_puts(p, p->notice);
	p->notice_until = now_ms() + PROMPT_NOTICE_MS;
	p->st = P_NOTICE;
}

/* ---- the answer ------------------------------------------------------------------------ */

/*
 * `boxctl approve BOX ID --always` in a child, its stdout and stderr into *OUT (at most
 * PROMPT_ALWAYS_OUT_MAX bytes kept, the rest read and dropped). The loop waits for it: the
 * box's output is held meanwhile as while the prompt is up. Returns its exit code, or -1.
 */
static int
run_always(const struct prompt *p, uint64_t id, char **out, size_t *len)
{
	int fds[2];
	*out = NULL;
	*len = 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* The child: never back into the loop; its exit runs no handler of boxctl run's. */
		if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		int code = ask_always(p->box_id, id, stdout);
		fflush(stdout);
		fflush(stderr);
		_exit(code);
	}
	close(fds[1]);
	char *buf = malloc(PROMPT_ALWAYS_OUT_MAX);
	size_t n = 0;
	int64_t end = now_ms() + PROMPT_ALWAYS_WAIT_MS;
	for (;;) {
		struct pollfd r = { .fd = fds[0], .events = POLLIN };
		int64_t left = end - now_ms();
		if (left <= 0 || (poll(&r, 1, (int)left) < 0 && errno != EINTR)) {
			kill(pid, SIGKILL);
			break;
		}
		char tmp[4096];
		ssize_t k = read(fds[0], tmp, sizeof(tmp));
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			break;
		size_t take = buf && n < PROMPT_ALWAYS_OUT_MAX ? PROMPT_ALWAYS_OUT_MAX - n : 0;
		if (take > (size_t)k)
			take = (size_t)k;
		memcpy(buf + n, tmp, take);
		n += take;
	}
	close(fds[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*out = buf;
	*len = buf ? n : 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * The answer "always" to the decision shown: its words (the diff, the reload, the answer,
 * or why nothing changed) on the prompt's screen, escaped line by line — they hold the
 * request's values — until Enter. Done, it is not asked again; else it is shown again,
 * to be answered otherwise.
 */
static void
answer_always(struct prompt *p)
{
	uint64_t id = p->shown;
	char *out = NULL, *text = NULL;
	size_t len = 0, tlen = 0;
	term_puts(p, "\r\n  editing the policy file ...");
	int code = run_always(p, id, &out, &len);
	if (code == 0)
		mark_done(p, id);
	FILE *f = open_memstream(&text, &tlen);
	if (f) {
		fputs("\033[0m\033[H\033[2J\033[1mbox: the answer \"always\"\033[0m (boxctl run, box ",
		      f);
		put_safe(f, p->name);
		fputs(")\r\n\r\n", f);
		for (size_t i = 0; i < len;) {
			const char *nl = memchr(out + i, '\n', len - i);
			size_t k = nl ? (size_t)(nl - (out + i)) : len - i;
			char *line = strndup(out + i, k);
			if (line) {
				fputs("  ", f);
				put_safe(f, line);
				fputs("\r\n", f);
				free(line);
			}
			i += k + 1;
		}
		if (code == 0)
			fprintf(f, "\r\n  \033[1mDecision %" PRIu64 ": permitted always.\033[0m", id);
		else
			fprintf(f, "\r\n  \033[1mDecision %" PRIu64 ": nothing was answered (above); "
				   "it still waits.\033[0m", id);
		fputs("\r\n  Press Enter to go on.", f);
		if (fclose(f) == 0)
			term_puts(p, text);
	}
	free(text);
	free(out);
	flush_input(p);
	p->st = P_NOTICE;
	p->notice_key = true;
}

static void
submit(struct prompt *p)
{
	char in[PROMPT_LINE_MAX + 1];
	size_t n = 0;
	for (size_t i = 0; i < p->line_len; i++)
		if (p->line[i] != ' ')
			in[n++] = p->line[i] >= 'A' && p->line[i] <= 'Z' ? (char)(p->line[i] + 32)
									  : p->line[i];
	in[n] = '\0';
	if (n == 0)
		return;
	const struct choice *c = NULL;
	if (n == PROMPT_CODE_LEN + 1 && memcmp(in, p->code, PROMPT_CODE_LEN) == 0)
		for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++)
			if (in[PROMPT_CODE_LEN] == choices[i].key)
				c = &choices[i];
	if (!c) {
		/* Nothing answered; a new code, so that guessing gains nothing. */
		p->note = "That was not the code and a letter: nothing was answered. A new code:";
		show(p, find_ask(p, p->shown));
		return;
	}
	if (c->always) {
		answer_always(p);
		return;
	}
	Box__AskRequest q = BOX__ASK_REQUEST__INIT;
	q.box = p->box_id;
	q.has_ask_id = true;
	q.ask_id = p->shown;
	choice_request(c, &q);
	if (send_ask(p, &q, &p->answer_rid) < 0) {
		p->answer_rid = 0;
		notice(p, "boxctl could not send the answer to boxd: nothing was answered");
		return;
	}
	p->answer_sent = now_ms();
	p->answering = c;
	term_puts(p, "\r\n  sending the answer ...");
}

/* Bytes the person typed (N at BUF): the answer's line, escape sequences skipped whole. */
static void
keys_in(struct prompt *p, const unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < n && p->st == P_ACTIVE && !p->answer_rid; i++) {
		unsigned c = buf[i];
		switch (p->esc) {
		case 1: /* after ESC */
			p->esc = c == '[' ? 2 : (c == ']' || c == 'P' || c == '_' || c == '^' ||
						 c == 'X') ? 3 : c == 'O' ? 5 : c == 0x1b ? 1 : 0;
			continue;
		case 2: /* CSI: to its final byte; X10 mouse reports carry 3 raw bytes after it */
			if (c >= 0x40 && c <= 0x7e) {
				p->esc = 0;
				if (c == 'M' && p->esc_skip == 0) {
					p->esc = 6;
					p->esc_skip = 3;
				}
			} else if (c == 0x1b) {
				p->esc = 1;
			} else {
				p->esc_skip++;
			}
			continue;
		case 3: /* a string: to BEL or ST */
			p->esc = c == 0x07 ? 0 : c == 0x1b ? 4 : 3;
			continue;
		case 4:
			p->esc = c == '\\' ? 0 : c == 0x1b ? 4 : 3;
			continue;
		case 5: /* SS3: one byte */
			p->esc = 0;
			continue;
		case 6:
			if (--p->esc_skip == 0)
				p->esc = 0;
			continue;
		default:
			break;
		}
		if (c == 0x1b) {
			p->esc = 1;
			p->esc_skip = 0;
		} else if (c == 0x03) { /* Ctrl-C: not now */
			for (size_t k = 0; p->list && k < p->list->n_asks; k++)
				mark_done(p, p->list->asks[k]->ask_id);
			leave(p);
			return;
		} else if (c == 0x0c) { /* Ctrl-L */
			draw(p);
		} else if (c == 0x15) { /* Ctrl-U */
			p->line_len = 0;
			draw_line(p);
		} else if (c == 0x7f || c == 0x08) {
			if (p->line_len)
				p->line_len--;
			draw_line(p);
		} else if (c == '\r' || c == '\n') {
			submit(p);
			return; /* the rest of what came with the Enter is dropped */
		} else if (c >= 0x20 && c < 0x7f && p->line_len < PROMPT_LINE_MAX) {
			p->line[p->line_len++] = (char)c;
			draw_line(p);
		}
	}
}

static void
read_keys(struct prompt *p)
{
	unsigned char buf[256];
	ssize_t n = read(p->in_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		p->hangup = true; /* raw mode: no ^D; EOF or EIO is the terminal gone */
		return;
	}
	keys_in(p, buf, (size_t)n);
}

/* A notice that stays until Enter: the keys are read for it alone, then dropped. */
static void
read_enter(struct prompt *p)
{
	unsigned char buf[256];
	ssize_t n = read(p->in_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		p->hangup = true;
		return;
	}
	if (!memchr(buf, '\r', (size_t)n) && !memchr(buf, '\n', (size_t)n))
		return;
	p->notice_key = false;
	flush_input(p);
	next_or_leave(p);
}

/* The box's terminal output while the prompt is up, into the hold buffer (capped). */
static void
read_master(struct prompt *p)
{
	if (p->hold_off == p->hold_len)
		p->hold_off = p->hold_len = 0;
	if (p->hold_len == p->hold_cap) {
		size_t cap = p->hold_cap + PROMPT_HOLD_CHUNK;
		char *b = cap <= PROMPT_HOLD_MAX ? realloc(p->hold, cap) : NULL;
		if (!b)
			return;
		p->hold = b;
		p->hold_cap = cap;
	}
	ssize_t n = read(p->master, p->hold + p->hold_len, p->hold_cap - p->hold_len);
	if (n > 0) {
		term_modes_feed(p->modes, p->hold + p->hold_len, (size_t)n);
		p->hold_len += (size_t)n;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		p->master_eof = true; /* the screen stream sees it again once it reads */
	}
}

static void
write_hold(struct prompt *p)
{
	size_t want = p->hold_len - p->hold_off;
	if (want > PROMPT_TTY_CHUNK)
		want = PROMPT_TTY_CHUNK;
	ssize_t n = write(p->out_fd, p->hold + p->hold_off, want);
	if (n > 0)
		p->hold_off += (size_t)n;
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		p->hangup = true;
	if (p->hold_off == p->hold_len) {
		p->hold_off = p->hold_len = 0;
		resume(p);
	}
}

/* ---- the loop's side ----------------------------------------------------------------- */

static bool
holding(const struct prompt *p)
{
	return p->st == P_ACTIVE || p->st == P_NOTICE;
}

unsigned
prompt_poll(struct prompt *p, struct pollfd *pfd)
{
	unsigned n = 0;
	if (p->gone)
		return 0;
	if (p->st == P_ACTIVE || p->st == P_NOTICE)
		pfd[n++] = (struct pollfd){ .fd = p->in_fd, .events = POLLIN };
	if (holding(p) && !p->master_eof && p->hold_len < PROMPT_HOLD_MAX)
		pfd[n++] = (struct pollfd){ .fd = p->master, .events = POLLIN };
	if (p->st == P_REPLAY)
		pfd[n++] = (struct pollfd){ .fd = p->out_fd, .events = POLLOUT };
	return n;
}

int
prompt_timeout(const struct prompt *p)
{
	if (p->gone)
		return -1;
	int64_t now = now_ms(), at = INT64_MAX;
	if (p->st == P_WANT)
		return stream_holds(p->screen) ? -1 : 0; /* its POLLOUT wakes the loop */
	if (p->polling && !p->list_rid)
		at = p->next_list;
	if (p->list_rid && p->list_sent + PROMPT_REPLY_WAIT_MS < at)
		at = p->list_sent + PROMPT_REPLY_WAIT_MS;
	if (p->answer_rid && p->answer_sent + PROMPT_REPLY_WAIT_MS < at)
		at = p->answer_sent + PROMPT_REPLY_WAIT_MS;
	if (p->st == P_NOTICE && !p->notice_key && p->notice_until < at)
		at = p->notice_until;
	if (at == INT64_MAX)
		return -1;
	return at <= now ? 0 : at - now > 60000 ? 60000 : (int)(at - now);
}

static void
timers(struct prompt *p)
{
	int64_t now = now_ms();
	if (p->list_rid && now >= p->list_sent + PROMPT_REPLY_WAIT_MS) {
		p->list_rid = 0; /* lost: its reply, if it comes, is dropped */
		p->next_list = now;
	}
	if (p->answer_rid && now >= p->answer_sent + PROMPT_REPLY_WAIT_MS) {
		p->answer_rid = 0;
		p->answering = NULL;
		notice(p, "boxd did not confirm the answer; see `boxctl log`");
	}
	if (p->polling && !p->list_rid && now >= p->next_list)
		send_list(p);
	if (p->st == P_NOTICE && !p->notice_key && now >= p->notice_until && !p->answer_rid) {
		flush_input(p);
		next_or_leave(p);
	}
	if (p->st == P_WANT && !stream_holds(p->screen)) {
		const Box__AskEntry *a = next_ask(p);
		if (!a) {
			resume(p);
			return;
		}
		take_screen(p);
		show(p, a);
	}
}

void
prompt_ready(struct prompt *p, const struct pollfd *pfd, unsigned n)
{
	if (p->gone)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		if (pfd[i].fd == p->in_fd && (pfd[i].events & POLLIN)) {
			if (p->st == P_NOTICE && p->notice_key) {
				if (pfd[i].revents & POLLIN)
					read_enter(p);
				else
					p->hangup = true;
			} else if (p->st == P_NOTICE || p->answer_rid) {
				/* not read as an answer: dropped when the next screen comes */
				if (pfd[i].revents & (POLLHUP | POLLERR))
					p->hangup = true;
				else if (pfd[i].revents & POLLIN)
					flush_input(p);
			} else if (p->st == P_ACTIVE) {
				read_keys(p);
			}
		} else if (pfd[i].fd == p->master) {
			if (pfd[i].revents & POLLIN)
				read_master(p);
			else
				p->master_eof = true;
		} else if (pfd[i].fd == p->out_fd && p->st == P_REPLAY) {
			if (pfd[i].revents & (POLLERR | POLLHUP) && !(pfd[i].revents & POLLOUT))
				p->hangup = true;
			else
				write_hold(p);
		}
	}
	if (!p->hangup)
		timers(p);
}

/* The listing came: start, go on with or end the prompt. */
static void
listed(struct prompt *p, Box__AskReply *rep)
{
	box_msg_free(p->list ? &p->list->base : NULL);
	p->list = rep;
	p->next_list = now_ms() + PROMPT_POLL_MS;
	switch (p->st) {
	case P_IDLE:
		if (next_ask(p)) {
			p->st = P_WANT;
			p->keys->paused = p->screen->paused = true;
			timers(p);
		}
		return;
	case P_ACTIVE:
		if (p->answer_rid)
			return;
		if (!find_ask(p, p->shown)) {
			char msg[160];
			snprintf(msg, sizeof(msg), "Decision %" PRIu64 " no longer waits: answered "
				 "elsewhere, or its time ran out (a deny).", p->shown);
			mark_done(p, p->shown);
			notice(p, msg);
		} else if (n_waiting(p) != p->drawn_n) {
			draw(p); /* "1 of N waiting" */
		}
		return;
	case P_WANT:
	case P_NOTICE:
	case P_REPLAY:
	default:
		return;
	}
}

static void
answered(struct prompt *p, const Box__AskReply *rep)
{
	char msg[512];
	const struct choice *c = p->answering;
	uint64_t id = p->shown;
	p->answer_rid = 0;
	p->answering = NULL;
	mark_done(p, id);
	if (rep->status == BOX__REPLY_STATUS__REPLY_OK) {
		snprintf(msg, sizeof(msg), "Decision %" PRIu64 ": %s.", id, c ? c->done : "answered");
	} else if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND) {
		snprintf(msg, sizeof(msg), "Decision %" PRIu64 " no longer waits: answered "
			 "elsewhere, or its time ran out (a deny).", id);
	} else {
		/* boxd's text (validated: no control character); C1 and bidi still escaped */
		char *t = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&t, &len);
		if (f) {
			fprintf(f, "boxd refused the answer: ");
			put_safe(f, rep->error ? rep->error : "?");
			fclose(f);
		}
		snprintf(msg, sizeof(msg), "%s", t ? t : "boxd refused the answer");
		free(t);
	}
	notice(p, msg);
}

bool
prompt_msg(struct prompt *p, struct box_ipc_msg *m)
{
	bool list = m->request_id && m->request_id == p->list_rid;
	bool answer = m->request_id && m->request_id == p->answer_rid;
	if (m->type != BOX__MSG_TYPE__MSG_ASK_REPLY &&
	    !(m->type == BOX__MSG_TYPE__MSG_ERROR_REPLY && (list || answer)))
		return false;
	if (p->gone || (!list && !answer))
		return true; /* a reply given up on */
	if (m->type == BOX__MSG_TYPE__MSG_ERROR_REPLY) {
		/* A boxd that does not list: the terminal asks nothing (approve|deny still work). */
		p->polling = false;
		p->list_rid = 0;
		if (answer) {
			p->answer_rid = 0;
			p->answering = NULL;
			notice(p, "boxd refused the answer");
		}
		return true;
	}
	Box__AskReply *rep = (Box__AskReply *)m->msg;
	if (answer) {
		answered(p, rep);
		return true;
	}
	p->list_rid = 0;
	if (rep->status == BOX__REPLY_STATUS__REPLY_DENIED) {
		p->polling = false; /* not the box's owner nor root: not ours to answer */
		return true;
	}
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		p->next_list = now_ms() + PROMPT_POLL_MS;
		return true;
	}
	m->msg = NULL; /* kept as the listing */
	listed(p, rep);
	return true;
}

void
prompt_winch(struct prompt *p)
{
	if (!p->gone && p->st == P_ACTIVE && !p->answer_rid)
		draw(p);
}

bool
prompt_hung_up(const struct prompt *p)
{
	return p->hangup;
}

void
prompt_abandon(struct prompt *p)
{
	p->gone = true;
	p->hangup = true;
	p->keys->paused = p->screen->paused = false;
	p->st = P_IDLE;
	p->hold_len = p->hold_off = 0;
}

void
prompt_finish(struct prompt *p)
{
	if (p->gone)
		return;
	if (holding(p))
		give_back_screen(p);
	if (holding(p) || p->st == P_REPLAY) {
		/* What the pty still holds comes after it: the screen stream's drain reads it. */
		(void)term_write(p, p->hold + p->hold_off, p->hold_len - p->hold_off);
		p->hold_len = p->hold_off = 0;
	}
	p->gone = true;
	p->keys->paused = p->screen->paused = false;
	p->st = P_IDLE;
}
