/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_bin.c — box-shell's own byte-level commands: od
 * (-A -t -b -c -d -o -x -N -j -v -w), base64 (-d -i -w), sha256sum and
 * md5sum (-c --quiet --status --tag -b -t), GNU coreutils 9's output.
 * The hashes are cmd_hash.c's.
 * Trusts: nothing in the input or the arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_hash.h"
#include "cmd_text.h"
#include "cmdutil.h"

/* ---- od ---- */

struct od_fmt {
	char kind;      /* a c d o u x */
	int size;       /* bytes per item */
	int width;      /* field width without the separating space */
	bool z;         /* z suffix: the printable characters after the line */
};

static int
od_width(char kind, int size)
{
	switch (kind) {
	case 'a': case 'c': return 3;
	case 'o': return size == 1 ? 3 : size == 2 ? 6 : size == 4 ? 11 : 22;
	case 'x': return size * 2;
	case 'u': return size == 1 ? 3 : size == 2 ? 5 : size == 4 ? 10 : 20;
	case 'd': return size == 1 ? 4 : size == 2 ? 6 : size == 4 ? 11 : 20;
	default: return 3;
	}
}

static bool
od_parse_type(const char *t, struct od_fmt *out, int *n, int max)
{
	while (*t) {
		if (*n >= max)
			return false;
		struct od_fmt f = { .kind = *t, .size = 1 };
		t++;
		switch (f.kind) {
		case 'a': case 'c': break;
		case 'd': case 'o': case 'u': case 'x':
			f.size = 4;
			if (*t == 'C') f.size = 1, t++;
			else if (*t == 'S') f.size = 2, t++;
			else if (*t == 'I') f.size = 4, t++;
			else if (*t == 'L') f.size = 8, t++;
			else if (*t >= '0' && *t <= '9') {
				char *e;
				long v = strtol(t, &e, 10);
				if (v != 1 && v != 2 && v != 4 && v != 8)
					return false;
				f.size = (int)v;
				t = e;
			}
			break;
		default:
			return false;
		}
		if (*t == 'z') {
			f.z = true;
			t++;
		}
		f.width = od_width(f.kind, f.size);
		out[(*n)++] = f;
	}
	return true;
}

static void
od_char(char *buf, size_t cap, unsigned char ch, bool named)
{
	static const char *const names[33] = {
		"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt",
		"ff", "cr", "so", "si", "dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb",
		"can", "em", "sub", "esc", "fs", "gs", "rs", "us", "sp",
	};
	if (named) {
		unsigned char c7 = ch & 0x7f;
		if (c7 <= 32)
			snprintf(buf, cap, "%s", names[c7]);
		else if (c7 == 127)
			snprintf(buf, cap, "del");
		else
			snprintf(buf, cap, "%c", c7);
		return;
	}
	switch (ch) {
	case '\0': snprintf(buf, cap, "\\0"); return;
	case '\a': snprintf(buf, cap, "\\a"); return;
	case '\b': snprintf(buf, cap, "\\b"); return;
	case '\f': snprintf(buf, cap, "\\f"); return;
	case '\n': snprintf(buf, cap, "\\n"); return;
	case '\r': snprintf(buf, cap, "\\r"); return;
	case '\t': snprintf(buf, cap, "\\t"); return;
	case '\v': snprintf(buf, cap, "\\v"); return;
	default:
		if (ch >= 32 && ch < 127)
			snprintf(buf, cap, "%c", ch);
		else
			snprintf(buf, cap, "%03o", ch);
	}
}

static void
od_line(struct sh_cmd *c, const unsigned char *p, size_t n, size_t per_line,
	const struct od_fmt *fmts, int nf, int max_block, int indent)
{
	for (int k = 0; k < nf; k++) {
		const struct od_fmt *f = &fmts[k];
		if (k > 0)
			sh_out_printf(c->out_buf, "%*s", indent, "");
		size_t fields = per_line / (size_t)f->size;
		int pad = max_block - (int)fields * (f->width + 1);
		int pad_left = pad;
		size_t have = (n + (size_t)f->size - 1) / (size_t)f->size;
		for (size_t i = 0; i < fields && i < have; i++) {
			int next = (int)((size_t)pad * (fields - i - 1) / fields);
			int w = f->width + (pad_left - next);
			pad_left = next;
			char buf[64];
			uint64_t v = 0;
			for (int b = f->size - 1; b >= 0; b--) {
				size_t idx = i * (size_t)f->size + (size_t)b;
				v = v << 8 | (idx < n ? p[idx] : 0);
			}
			switch (f->kind) {
			case 'c': od_char(buf, sizeof(buf), p[i], false); break;
			case 'a': od_char(buf, sizeof(buf), p[i], true); break;
			case 'o': snprintf(buf, sizeof(buf), "%0*" PRIo64, f->width, v); break;
			case 'x': snprintf(buf, sizeof(buf), "%0*" PRIx64, f->width, v); break;
			case 'u': snprintf(buf, sizeof(buf), "%" PRIu64, v); break;
			case 'd': {
				int64_t sv = (int64_t)v;
				if (f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
					sv = (int64_t)(v | (~UINT64_C(0) << (f->size * 8)));
				snprintf(buf, sizeof(buf), "%" PRId64, sv);
				break;
			}
			default: buf[0] = 0;
			}
			sh_out_printf(c->out_buf, " %*s", w, buf);
		}
		if (f->z) {
			/* pad the missing fields, then >chars< */
			for (size_t i = have; i < fields; i++) {
				int next = (int)((size_t)pad * (fields - i - 1) / fields);
				int w = f->width + (pad_left - next);
				pad_left = next;
				sh_out_printf(c->out_buf, " %*s", w, "");
			}
			sh_out_write(c->out_buf, "  >", 3);
			for (size_t i = 0; i < n; i++) {
				char ch = p[i] >= 32 && p[i] < 127 ? (char)p[i] : '.';
				sh_out_write(c->out_buf, &ch, 1);
			}
			sh_out_write(c->out_buf, "<", 1);
		}
		sh_out_write(c->out_buf, "\n", 1);
	}
}

static void
od_addr(struct sh_cmd *c, char radix, uint64_t addr)
{
	if (radix == 'd')
		sh_out_printf(c->out_buf, "%07" PRIu64, addr);
	else if (radix == 'x')
		sh_out_printf(c->out_buf, "%06" PRIx64, addr);
	else if (radix == 'o')
		sh_out_printf(c->out_buf, "%07" PRIo64, addr);
}

int
sh_cmd_od(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "address-radix", SH_REQ_ARG, 'A' }, { "skip-bytes", SH_REQ_ARG, 'j' },
		{ "read-bytes", SH_REQ_ARG, 'N' }, { "format", SH_REQ_ARG, 't' },
		{ "output-duplicates", SH_NO_ARG, 'v' }, { "width", SH_OPT_ARG, 'w' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	char radix = 'o';
	uint64_t skip = 0, limit = UINT64_MAX;
	bool verbose = false;
	size_t per_line = 16;
	struct od_fmt fmts[16];
	int nf = 0;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "A:j:N:t:vw::bcdiloxsS", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'A':
			if (strlen(g.arg) != 1 || !strchr("doxn", g.arg[0])) {
				sh_cmd_error(c, 1, "invalid output address radix '%c'; it must be one "
					     "character from [doxn]", g.arg[0]);
				sh_opt_done(&g);
				return 1;
			}
			radix = g.arg[0];
			break;
		case 'j':
		case 'N': {
			uint64_t v;
			if (sh_parse_count(g.arg, &v) < 0) {
				sh_cmd_error(c, 1, "invalid %s argument %s",
					     o == 'j' ? "--skip-bytes" : "--read-bytes",
					     sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			if (o == 'j')
				skip = v;
			else
				limit = v;
			break;
		}
		case 't':
			if (!od_parse_type(g.arg, fmts, &nf, 16)) {
				size_t bad = strspn(g.arg, "acdoux0123456789CSILz");
				if (g.arg[bad] && !strchr("acdoux", g.arg[0]))
					sh_cmd_error(c, 1, "invalid character '%c' in type string %s",
						     g.arg[bad ? 0 : 0], sh_qname(g.arg, true));
				else
					sh_cmd_error(c, 1, "invalid type string %s", sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			break;
		case 'v': verbose = true; break;
		case 'w':
			per_line = g.arg ? (size_t)strtoul(g.arg, NULL, 10) : 32;
			if (per_line == 0)
				per_line = 16;
			break;
		case 'b': od_parse_type("o1", fmts, &nf, 16); break;
		case 'c': od_parse_type("c", fmts, &nf, 16); break;
		case 'd': od_parse_type("u2", fmts, &nf, 16); break;
		case 'o': od_parse_type("o2", fmts, &nf, 16); break;
		case 'x': od_parse_type("x2", fmts, &nf, 16); break;
		case 's': od_parse_type("d2", fmts, &nf, 16); break;
		case 'i': od_parse_type("dI", fmts, &nf, 16); break;
		case 'l': od_parse_type("dL", fmts, &nf, 16); break;
		case 'S':
			sh_cmd_error(c, 1, "-S is not supported");
			sh_opt_done(&g);
			return 1;
		case 'H':
			sh_out_printf(c->out_buf, "Usage: od [OPTION]... [FILE]...\nbox-shell's own od; "
				      "supported options: -A RADIX -j BYTES -N BYTES -t TYPE (a c d o u "
				      "x with sizes, z) -v -w[N] -b -c -d -o -x -s -i -l\n");
			sh_opt_done(&g);
			return sh_cmd_finish(c, 0);
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (nf == 0)
		od_parse_type("o2", fmts, &nf, 16);
	int max_block = 0;
	for (int k = 0; k < nf; k++) {
		int b = (int)(per_line / (size_t)fmts[k].size) * (fmts[k].width + 1);
		if (b > max_block)
			max_block = b;
	}
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	unsigned char *line = malloc(per_line), *prev = malloc(per_line);
	if (!line || !prev) {
		free(line);
		free(prev);
		sh_opt_done(&g);
		return 1;
	}
	size_t fill = 0;
	uint64_t addr = 0, seen = 0;
	bool have_prev = false, starred = false;
	int indent = radix == 'n' ? 0 : radix == 'x' ? 6 : 7;
	bool opened = false;
	for (int fi = 0; fi < nfiles && !sh_cmd_stopped(c); fi++) {
		int fd;
		int r = sh_cmd_open_input(c, files[fi], &fd);
		if (r < 0) {
			status = sh_text_file_error(c, files[fi], -r);
			continue;
		}
		opened = true;
		struct sh_in in;
		sh_in_init(&in, fd, c->interrupted);
		char *d;
		ssize_t n = 0;
		while (seen < limit && (n = sh_in_read(&in, &d)) > 0 && !sh_cmd_stopped(c)) {
			size_t off = 0;
			while (off < (size_t)n && skip > 0) {
				size_t k = (size_t)n - off < skip ? (size_t)n - off : (size_t)skip;
				off += k;
				skip -= k;
				addr += k;
			}
			while (off < (size_t)n && seen < limit) {
				size_t take = per_line - fill;
				if (take > (size_t)n - off)
					take = (size_t)n - off;
				if (take > limit - seen)
					take = (size_t)(limit - seen);
				memcpy(line + fill, d + off, take);
				fill += take;
				off += take;
				seen += take;
				if (fill == per_line) {
					if (!verbose && have_prev && !memcmp(line, prev, per_line)) {
						if (!starred)
							sh_out_write(c->out_buf, "*\n", 2);
						starred = true;
					} else {
						od_addr(c, radix, addr);
						od_line(c, line, fill, per_line, fmts, nf, max_block, indent);
						starred = false;
					}
					memcpy(prev, line, per_line);
					have_prev = true;
					addr += fill;
					fill = 0;
				}
			}
		}
		if (n < 0 && n != -EINTR)
			status = sh_text_file_error(c, files[fi], (int)-n);
		sh_in_release(&in);
		if (r)
			close(fd);
	}
	if (fill) {
		od_addr(c, radix, addr);
		od_line(c, line, fill, per_line, fmts, nf, max_block, indent);
		addr += fill;
	}
	if (radix != 'n' && opened) {
		od_addr(c, radix, addr);
		sh_out_write(c->out_buf, "\n", 1);
	}
	free(line);
	free(prev);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- base64 ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
b64_val(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z') return ch - 'A';
	if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9') return ch - '0' + 52;
	if (ch == '+') return 62;
	if (ch == '/') return 63;
	return -1;
}

int
sh_cmd_base64(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "decode", SH_NO_ARG, 'd' }, { "ignore-garbage", SH_NO_ARG, 'i' },
		{ "wrap", SH_REQ_ARG, 'w' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool decode = false, garbage = false;
	unsigned long wrap = 76;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "diw:", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'd': decode = true; break;
		case 'i': garbage = true; break;
		case 'w': {
			char *e;
			wrap = strtoul(g.arg, &e, 10);
			if (*e || g.arg[0] == '-') {
				sh_cmd_error(c, 1, "invalid wrap size: %s", sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			break;
		}
		case 'H':
			sh_opt_done(&g);
			sh_out_printf(c->out_buf, "Usage: base64 [OPTION]... [FILE]\nbox-shell's own "
				      "base64; supported options: -d -i -w COLS\n");
			return sh_cmd_finish(c, 0);
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (g.n_operands > 1) {
		sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[1], true));
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	const char *name = g.n_operands ? g.operands[0] : "-";
	int fd;
	int r = sh_cmd_open_input(c, name, &fd);
	if (r < 0) {
		status = sh_text_file_error(c, name, -r);
		sh_opt_done(&g);
		return status;
	}
	struct sh_in in;
	sh_in_init(&in, fd, c->interrupted);
	char *d;
	ssize_t n;
	unsigned char q[4];
	int nq = 0;
	unsigned long col = 0;
	bool pad_seen = false;
	while ((n = sh_in_read(&in, &d)) > 0 && !sh_cmd_stopped(c)) {
		for (ssize_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)d[i];
			if (!decode) {
				q[nq++] = ch;
				if (nq < 3)
					continue;
				char out[4] = { b64[q[0] >> 2], b64[(q[0] & 3) << 4 | q[1] >> 4],
						b64[(q[1] & 15) << 2 | q[2] >> 6], b64[q[2] & 63] };
				for (int k = 0; k < 4; k++) {
					sh_out_write(c->out_buf, &out[k], 1);
					if (wrap && ++col == wrap) {
						sh_out_write(c->out_buf, "\n", 1);
						col = 0;
					}
				}
				nq = 0;
				continue;
			}
			if (ch == '\n')
				continue;
			if (ch == '=') {
				pad_seen = true;
				continue;
			}
			int v = b64_val(ch);
			if (v < 0 || pad_seen) {
				if (garbage && v < 0)
					continue;
				if (nq >= 2) {
					unsigned char out[2] = { (unsigned char)(q[0] << 2 | q[1] >> 4),
								 (unsigned char)(q[1] << 4 | q[2] >> 2) };
					sh_out_write(c->out_buf, out, nq == 2 ? 1 : 2);
				}
				sh_out_flush(c->out_buf);
				status = sh_cmd_error(c, 1, "invalid input");
				goto end;
			}
			q[nq++] = (unsigned char)v;
			if (nq == 4) {
				unsigned char out[3] = { (unsigned char)(q[0] << 2 | q[1] >> 4),
							 (unsigned char)(q[1] << 4 | q[2] >> 2),
							 (unsigned char)(q[2] << 6 | q[3]) };
				sh_out_write(c->out_buf, out, 3);
				nq = 0;
			}
		}
	}
	if (n < 0 && n != -EINTR) {
		status = sh_cmd_error(c, 1, "read error: %s", strerror((int)-n));
		goto end;
	}
	if (!decode) {
		if (nq) {
			if (nq == 1)
				q[1] = 0;
			q[2] = 0;
			char out[4] = { b64[q[0] >> 2], b64[(q[0] & 3) << 4 | q[1] >> 4],
					nq == 2 ? b64[(q[1] & 15) << 2] : '=', '=' };
			for (int k = 0; k < 4; k++) {
				sh_out_write(c->out_buf, &out[k], 1);
				if (wrap && ++col == wrap) {
					sh_out_write(c->out_buf, "\n", 1);
					col = 0;
				}
			}
		}
		if (col > 0)
			sh_out_write(c->out_buf, "\n", 1);
	} else if (nq) {
		if (nq >= 2) {
			unsigned char out[2] = { (unsigned char)(q[0] << 2 | q[1] >> 4),
						 (unsigned char)(q[1] << 4 | q[2] >> 2) };
			sh_out_write(c->out_buf, out, nq == 2 ? 1 : 2);
		}
		if (nq == 1 || !pad_seen)
			status = sh_cmd_error(c, 1, "invalid input");
	}
end:
	sh_in_release(&in);
	if (r)
		close(fd);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- sha256sum / md5sum ---- */

struct hasher {
	const char *tag;   /* SHA256 / MD5 */
	size_t len;        /* digest bytes */
};

static int
hash_fd(struct sh_cmd *c, int fd, const struct hasher *h, unsigned char *out)
{
	struct sh_sha256 s;
	struct sh_md5 m;
	if (h->len == 32)
		sh_sha256_init(&s);
	else
		sh_md5_init(&m);
	struct sh_in in;
	sh_in_init(&in, fd, c->interrupted);
	char *d;
	ssize_t n;
	while ((n = sh_in_read(&in, &d)) > 0) {
		if (h->len == 32)
			sh_sha256_update(&s, d, (size_t)n);
		else
			sh_md5_update(&m, d, (size_t)n);
	}
	sh_in_release(&in);
	if (n < 0)
		return (int)n;
	if (h->len == 32)
		sh_sha256_final(&s, out);
	else
		sh_md5_final(&m, out);
	return 0;
}

static void
hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* GNU escapes a name with '\\' or '\n' and marks the line with a leading '\\'. */
static void
put_name(struct sh_out *o, const char *name, bool escaped)
{
	if (!escaped) {
		sh_out_write(o, name, strlen(name));
		return;
	}
	for (const char *p = name; *p; p++) {
		if (*p == '\\')
			sh_out_write(o, "\\\\", 2);
		else if (*p == '\n')
			sh_out_write(o, "\\n", 2);
		else
			sh_out_write(o, p, 1);
	}
}

static int
hash_check(struct sh_cmd *c, const struct hasher *h, const char *list, bool quiet, bool silent,
	   bool warn, bool strict)
{
	int fd;
	int r = sh_cmd_open_input(c, list, &fd);
	if (r < 0)
		return sh_text_file_error(c, list, -r);
	char *data;
	size_t len;
	int e = sh_read_fd_all(fd, c->interrupted, &data, &len);
	if (r)
		close(fd);
	if (e < 0)
		return sh_text_file_error(c, list, -e);
	uint64_t bad_lines = 0, failed = 0, unreadable = 0, good = 0, lineno = 0;
	char *p = data, *end = data + len;
	while (p < end && !sh_cmd_stopped(c)) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *le = nl ? nl : end;
		lineno++;
		char *line = p;
		p = nl ? nl + 1 : end;
		*le = '\0';
		if (le > line && le[-1] == '\r')
			le[-1] = '\0';
		bool escaped = *line == '\\';
		if (escaped)
			line++;
		char *hexs = NULL, *name = NULL;
		size_t hl = h->len * 2;
		char tagp[16];
		snprintf(tagp, sizeof(tagp), "%s (", h->tag);
		if (!strncmp(line, tagp, strlen(tagp))) {
			char *close = strstr(line, ") = ");
			if (close) {
				*close = '\0';
				name = line + strlen(tagp);
				hexs = close + 4;
			}
		} else if (strlen(line) > hl + 1 && line[hl] == ' ' &&
			   (line[hl + 1] == ' ' || line[hl + 1] == '*')) {
			line[hl] = '\0';
			hexs = line;
			name = line + hl + 2;
		}
		bool ok_fmt = hexs && strlen(hexs) == hl && strspn(hexs, "0123456789abcdefABCDEF") == hl;
		if (!ok_fmt || !*name) {
			bad_lines++;
			if (warn)
				sh_cmd_error(c, 1, "%s: %" PRIu64 ": improperly formatted %s checksum line",
					     list, lineno, h->tag);
			continue;
		}
		if (escaped) {
			char *w = name;
			for (char *q = name; *q; q++) {
				if (*q == '\\' && q[1] == 'n')
					*w++ = '\n', q++;
				else if (*q == '\\' && q[1] == '\\')
					*w++ = '\\', q++;
				else
					*w++ = *q;
			}
			*w = '\0';
		}
		int ffd;
		int fr = sh_cmd_open_input(c, name, &ffd);
		unsigned char dig[32];
		if (fr >= 0) {
			int he = hash_fd(c, ffd, h, dig);
			if (fr)
				close(ffd);
			if (he < 0)
				fr = he;
		}
		if (fr < 0) {
			unreadable++;
			sh_cmd_error(c, 1, "%s: %s", name, strerror(-fr));
			if (!silent)
				sh_out_printf(c->out_buf, "%s: FAILED open or read\n", name);
			continue;
		}
		char hx[65];
		hex(dig, h->len, hx);
		bool match = strcasecmp(hx, hexs) == 0;
		if (match)
			good++;
		else
			failed++;
		if (!silent && (!match || !quiet)) {
			put_name(c->out_buf, name, false);
			sh_out_printf(c->out_buf, ": %s\n", match ? "OK" : "FAILED");
		}
	}
	free(data);
	int status = 0;
	if (good == 0 && failed == 0 && unreadable == 0) {
		sh_cmd_error(c, 1, "%s: no properly formatted checksum lines found", list);
		return 1;
	}
	if (!silent) {
		if (bad_lines)
			sh_cmd_error(c, 1, "WARNING: %" PRIu64 " line%s improperly formatted", bad_lines,
				     bad_lines == 1 ? " is" : "s are");
		if (unreadable)
			sh_cmd_error(c, 1, "WARNING: %" PRIu64 " listed file%s could not be read",
				     unreadable, unreadable == 1 ? "" : "s");
		if (failed)
			sh_cmd_error(c, 1, "WARNING: %" PRIu64 " computed checksum%s did NOT match",
				     failed, failed == 1 ? "" : "s");
	}
	if (failed || unreadable || (strict && bad_lines))
		status = 1;
	return status;
}

static int
hashsum(struct sh_cmd *c, int argc, char **argv, const struct hasher *h)
{
	enum { OPT_TAG = 256, OPT_QUIET, OPT_STATUS, OPT_STRICT, OPT_IGNORE_MISSING };
	static const struct sh_longopt lo[] = {
		{ "binary", SH_NO_ARG, 'b' }, { "check", SH_NO_ARG, 'c' },
		{ "tag", SH_NO_ARG, OPT_TAG }, { "text", SH_NO_ARG, 't' },
		{ "zero", SH_NO_ARG, 'z' }, { "quiet", SH_NO_ARG, OPT_QUIET },
		{ "status", SH_NO_ARG, OPT_STATUS }, { "strict", SH_NO_ARG, OPT_STRICT },
		{ "warn", SH_NO_ARG, 'w' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool binary = false, check = false, tag = false, quiet = false, silent = false;
	bool strict = false, warn = false;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "bctwz", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'b': binary = true; break;
		case 't': binary = false; break;
		case 'c': check = true; break;
		case 'w': warn = true; break;
		case 'z':
			sh_cmd_error(c, 1, "-z is not supported");
			sh_opt_done(&g);
			return 1;
		case OPT_TAG: tag = true; break;
		case OPT_QUIET: quiet = true; break;
		case OPT_STATUS: silent = true; break;
		case OPT_STRICT: strict = true; break;
		case 'H':
			sh_out_printf(c->out_buf, "Usage: %s [OPTION]... [FILE]...\nbox-shell's own %s; "
				      "supported options: -b -t -c --tag --quiet --status --strict -w\n",
				      sh_cmd_name(c), sh_cmd_name(c));
			sh_opt_done(&g);
			return sh_cmd_finish(c, 0);
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	if (check) {
		if (tag) {
			sh_cmd_error(c, 1, "the --tag option is meaningless when verifying checksums");
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
		for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++)
			if (hash_check(c, h, files[i], quiet, silent, warn, strict))
				status = 1;
		sh_opt_done(&g);
		return sh_cmd_finish(c, status);
	}
	if (quiet || silent || strict || warn) {
		sh_cmd_error(c, 1, "the --%s option is meaningful only when verifying checksums",
			     quiet ? "quiet" : silent ? "status" : strict ? "strict" : "warn");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_text_file_error(c, files[i], -r);
			continue;
		}
		unsigned char dig[32];
		int e = hash_fd(c, fd, h, dig);
		if (r)
			close(fd);
		if (e < 0) {
			if (e != -EINTR)
				status = sh_text_file_error(c, files[i], -e);
			continue;
		}
		char hx[65];
		hex(dig, h->len, hx);
		bool escaped = strpbrk(files[i], "\\\n") != NULL;
		if (escaped)
			sh_out_write(c->out_buf, "\\", 1);
		if (tag) {
			sh_out_printf(c->out_buf, "%s (", h->tag);
			put_name(c->out_buf, files[i], escaped);
			sh_out_printf(c->out_buf, ") = %s\n", hx);
		} else {
			sh_out_printf(c->out_buf, "%s %c", hx, binary ? '*' : ' ');
			put_name(c->out_buf, files[i], escaped);
			sh_out_write(c->out_buf, "\n", 1);
		}
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

int
sh_cmd_sha256sum(struct sh_cmd *c, int argc, char **argv)
{
	static const struct hasher h = { "SHA256", 32 };
	return hashsum(c, argc, argv, &h);
}

int
sh_cmd_md5sum(struct sh_cmd *c, int argc, char **argv)
{
	static const struct hasher h = { "MD5", 16 };
	return hashsum(c, argc, argv, &h);
}
