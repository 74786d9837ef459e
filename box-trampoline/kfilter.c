/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kfilter.c — the workload's seccomp program as data (kfilter.h). The refusing
 * program (libseccomp's, then the personality filter) is kept by PID 1 as it
 * is; the listener's copy returns USER_NOTIF where it returned a refusal, so
 * PID 1 learns of each refused call, runs the kept program over the call's
 * seccomp_data with kfilter_run, and answers exactly the errno it gives
 * (docs/sandbox.md, "Kernel refusals").
 * Trusts: nothing. kfilter_run checks every instruction as it goes (jumps and
 * loads in range, known opcodes), and classic BPF jumps only forward, so a run
 * takes at most N steps.
 */
#include <stdbool.h>
#include <string.h>

#include "kfilter.h"

int
kfilter_append(struct kprog *out, const struct sock_filter *p, size_t n)
{
	if (n > KFILTER_INSNS_MAX - out->n)
		return -E2BIG;
	for (size_t i = 0; i < out->n; i++) {
		struct sock_filter *x = &out->f[i];
		if (x->code == (BPF_RET | BPF_K) && x->k == SECCOMP_RET_ALLOW)
			*x = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
							  (uint32_t)(out->n - i - 1), 0, 0);
	}
	memcpy(out->f + out->n, p, n * sizeof(*p));
	out->n += n;
	return 0;
}

size_t
kfilter_notify(struct kprog *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++) {
		int e;
		if (p->f[i].code == (BPF_RET | BPF_K) && kfilter_refusal(p->f[i].k, &e)) {
			p->f[i].k = SECCOMP_RET_USER_NOTIF;
			n++;
		}
	}
	return n;
}

static uint32_t
data_word(const struct seccomp_data *d, uint32_t off)
{
	uint32_t w;
	memcpy(&w, (const char *)d + off, sizeof(w));
	return w;
}

int
kfilter_run(const struct sock_filter *p, size_t n, const struct seccomp_data *d, uint32_t *ret,
	    size_t *ret_pc)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &p[pc];
		uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k > sizeof(*d) - 4 || (k & 3))
					return -EINVAL;
				a = data_word(d, k);
			} else if (i->code == (BPF_LD | BPF_IMM)) {
				a = k;
			} else if (i->code == (BPF_LD | BPF_MEM) && k < BPF_MEMWORDS) {
				a = mem[k];
			} else if (i->code == (BPF_LD | BPF_W | BPF_LEN)) {
				a = sizeof(*d);
			} else {
				return -EINVAL;
			}
			break;
		case BPF_LDX:
			if (i->code == (BPF_LDX | BPF_IMM))
				x = k;
			else if (i->code == (BPF_LDX | BPF_MEM) && k < BPF_MEMWORDS)
				x = mem[k];
			else if (i->code == (BPF_LDX | BPF_W | BPF_LEN))
				x = sizeof(*d);
			else
				return -EINVAL;
			break;
		case BPF_ST:
		case BPF_STX:
			if (i->code != BPF_CLASS(i->code) || k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV:
				if (!src)
					return -EINVAL;
				a /= src;
				break;
			case BPF_MOD:
				if (!src)
					return -EINVAL;
				a %= src;
				break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src >= 32 ? 0 : a << src; break;
			case BPF_RSH: a = src >= 32 ? 0 : a >> src; break;
			case BPF_NEG: a = -a; break;
			default: return -EINVAL;
			}
			break;
		case BPF_JMP: {
			size_t skip;
			if (BPF_OP(i->code) == BPF_JA) {
				skip = k;
			} else {
				bool t;
				switch (BPF_OP(i->code)) {
				case BPF_JEQ: t = a == src; break;
				case BPF_JGT: t = a > src; break;
				case BPF_JGE: t = a >= src; break;
				case BPF_JSET: t = (a & src) != 0; break;
				default: return -EINVAL;
				}
				/* both branches in range, as the kernel's check */
				if (i->jt >= n - pc - 1 || i->jf >= n - pc - 1)
					return -EINVAL;
				skip = t ? i->jt : i->jf;
			}
			if (skip >= n - pc - 1)
				return -EINVAL;
			pc += skip;
			break;
		}
		case BPF_RET:
			if (i->code == (BPF_RET | BPF_K))
				*ret = k;
			else if (i->code == (BPF_RET | BPF_A))
				*ret = a;
			else
				return -EINVAL;
			*ret_pc = pc;
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else if (BPF_MISCOP(i->code) == BPF_TXA)
				a = x;
			else
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL; /* ran off the end */
}
