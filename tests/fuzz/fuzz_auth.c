// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the parts of kernel/core that take CMs off the
 * network: the v1 trailer decoder and the v2 authentication (auth block,
 * counter inference, replay window, MAC).
 *
 * One input is a run of records against one receiver (a fixed key, one
 * replay window).  Each record's first byte chooses what it is:
 *
 *   raw      bytes from the network: a trailer for mpip_cm_decode() (or,
 *            if it does not decode, CM fields taken as they come, invalid
 *            counts included), an auth block, its length, the protocol and
 *            the extension.  Checked with the receiver's key: must never
 *            verify, since only the sender's key can make a MAC.
 *   genuine  a CM sealed with the sender's key at a counter near the
 *            newest accepted one, near the window's bottom, far behind it
 *            or far ahead.  Must verify exactly when a model says so, and
 *            fail as it says: a model window that remembers every
 *            accepted counter, and the inference from its definition.
 *   direct   a full counter for the window alone (check, then commit),
 *            against the same model.
 *   tamper   a genuine CM with one bit of its block or fields flipped on
 *            the way: must not verify and must not change the window.
 *
 * Any disagreement aborts.  Build and run: make -C tests/fuzz run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "cm.h"

#define MODEL_MAX	8192	/* accepted counters one input can make */

struct input {
	const u8 *p;
	size_t n;
};

struct model {
	u64 max;
	unsigned int nseen;
	u64 seen[MODEL_MAX];
};

static const struct mpip_auth_key key_tx = {
	0x0123456789abcdefULL, 0x0f1e2d3c4b5a6978ULL,
};

static const struct mpip_auth_key key_wrong = {
	0x0123456789abcdefULL, 0x0f1e2d3c4b5a6979ULL,
};

static void fail(const char *what, u64 ctr, int got, int want)
{
	fprintf(stderr, "fuzz_auth: %s: counter 0x%llx: got %d, want %d\n",
		what, (unsigned long long)ctr, got, want);
	abort();
}

static u8 take8(struct input *in)
{
	u8 v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static u64 take(struct input *in, unsigned int bytes)
{
	u64 v = 0;

	while (bytes--)
		v = v << 8 | take8(in);
	return v;
}

/* CM fields as they come, counts unchecked; the auth code must cope. */
static void take_cm(struct input *in, struct mpip_cm *cm)
{
	unsigned int i, n;

	memset(cm, 0, sizeof(*cm));
	cm->node_id = (u32)take(in, 4);
	cm->session_id = (u16)take(in, 2);
	cm->path_id = take8(in);
	cm->fb_path_id = take8(in);
	cm->timestamp_us = (u32)take(in, 4);
	cm->path_delay_us = (u32)take(in, 4);
	cm->flags = take8(in);
	n = take8(in);
	cm->xflags = (u8)(n >> 4);
	cm->naddrs = (u8)(n & 0x0f);
	n = cm->naddrs < MPIP_CM_MAX_ADDRS ? cm->naddrs : MPIP_CM_MAX_ADDRS;
	for (i = 0; i < n; i++)
		cm->addrs[i] = (u32)take(in, 4);
}

static int model_seen(const struct model *m, u64 c)
{
	unsigned int i;

	for (i = 0; i < m->nseen; i++)
		if (m->seen[i] == c)
			return 1;
	return 0;
}

/* The inference by its definition (auth.c does it with cases). */
static int model_infer(const struct model *m, u32 lo, u64 *ctr)
{
	__int128 c = (__int128)m->max + (s32)(lo - (u32)m->max);

	if (c < 1)
		return MPIP_AUTH_E_OLD;
	if (c > (__int128)~0ULL)
		return MPIP_AUTH_E_WRAP;
	*ctr = (u64)c;
	return 0;
}

/* What the window must answer to a full counter @c. */
static int model_window(const struct model *m, u64 c)
{
	if (!c)
		return MPIP_AUTH_E_OLD;
	if (c > m->max)
		return 0;
	if (m->max - c >= MPIP_REPLAY_WINDOW)
		return MPIP_AUTH_E_OLD;
	return model_seen(m, c) ? MPIP_AUTH_E_DUP : 0;
}

/* What the receiver must answer to a genuine CM with counter @c. */
static int model_want(const struct model *m, u64 c)
{
	u64 inferred = 0;
	int ret = model_infer(m, (u32)c, &inferred);

	/* no counter before the first: the MAC of none verifies (auth.c) */
	if (ret)
		return ret == MPIP_AUTH_E_OLD ? MPIP_AUTH_E_MAC : ret;
	if (inferred != c)
		return MPIP_AUTH_E_MAC;
	return model_window(m, c);
}

static void model_accept(struct model *m, u64 c)
{
	if (m->nseen < MODEL_MAX)
		m->seen[m->nseen++] = c;
	if (c > m->max)
		m->max = c;
}

static void do_raw(struct input *in, struct mpip_replay *win)
{
	u8 trailer[MPIP_CM_MAX_LEN], blk[MPIP_AUTH_BLOCK_LEN];
	u8 ext[MPIP_AUTH_EXT_MAX + 8];
	struct mpip_replay before = *win;
	struct mpip_auth_ctx ctx;
	struct mpip_cm cm;
	unsigned int t, i;
	u64 ctr;
	int ret;

	t = take8(in) % (MPIP_CM_MAX_LEN + 1);
	for (i = 0; i < t; i++)
		trailer[i] = take8(in);
	if (mpip_cm_decode(trailer, t, &cm) < 0) {
		struct input fields = { trailer, t };

		take_cm(&fields, &cm);
	}
	for (i = 0; i < sizeof(blk); i++)
		blk[i] = take8(in);
	ctx.proto = take8(in);
	ctx.ext_len = take8(in) % (sizeof(ext) + 1);
	for (i = 0; i < ctx.ext_len; i++)
		ext[i] = take8(in);
	ctx.ext = take8(in) & 1 ? ext : NULL;
	ret = mpip_auth_verify(&key_tx, win, &cm, &ctx, blk,
			       take8(in) % (sizeof(blk) + 1), &ctr);
	if (!ret)
		fail("raw bytes verified", ctr, ret, MPIP_AUTH_E_MAC);
	if (memcmp(win, &before, sizeof(before)))
		fail("raw bytes changed the window", 0, ret, 0);
}

enum ctr_kind {
	CTR_NEAR,	/* within 2^15 of the newest */
	CTR_EDGE,	/* within 2^7 of the window's bottom */
	CTR_BEHIND,	/* up to 2^40 behind the newest */
	CTR_JUMP,	/* anything ahead, wrapping past 2^64 included */
};

/* The counter of a genuine CM, chosen by the input. */
static u64 genuine_ctr(struct input *in, const struct model *m,
		       enum ctr_kind kind)
{
	s64 d;

	switch (kind) {
	case CTR_JUMP:
		return m->max + take(in, 8);
	case CTR_EDGE:
		d = (s64)(s8)take8(in) - (MPIP_REPLAY_WINDOW - 1);
		break;
	case CTR_BEHIND:
		d = -(s64)take(in, 5);
		break;
	default:
		d = (s64)(s16)take(in, 2);
	}
	if (d < 0 && (u64)-d >= m->max)
		return 1 + take8(in);
	return m->max + d;
}

static void seal(struct input *in, u64 c, struct mpip_cm *cm,
		 struct mpip_auth_ctx *ctx, u8 *ext, u8 *blk)
{
	unsigned int i;

	memset(ext, 0, MPIP_AUTH_EXT_MAX);
	take_cm(in, cm);
	if (cm->naddrs > MPIP_CM_MAX_ADDRS)
		cm->naddrs = MPIP_CM_MAX_ADDRS;
	ctx->proto = take8(in);
	ctx->ext_len = 4 * (take8(in) % (MPIP_AUTH_EXT_MAX / 4 + 1));
	for (i = 0; i < ctx->ext_len; i++)
		ext[i] = take8(in);
	ctx->ext = ext;
	if (mpip_auth_seal(&key_tx, cm, c, ctx, blk))
		fail("seal", c, -1, 0);
}

static void do_genuine(struct input *in, struct mpip_replay *win,
		       struct model *m, enum ctr_kind kind)
{
	u8 ext[MPIP_AUTH_EXT_MAX], blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_auth_ctx ctx;
	struct mpip_cm cm;
	u64 c = genuine_ctr(in, m, kind), got = 0;
	int want, ret;

	if (!c)
		return;
	seal(in, c, &cm, &ctx, ext, blk);
	want = model_want(m, c);
	/* the wrong key first: never, and no change */
	if (!mpip_auth_check(&key_wrong, win, &cm, &ctx, blk, sizeof(blk),
			     &got))
		fail("wrong key verified", c, 0, MPIP_AUTH_E_MAC);
	ret = mpip_auth_verify(&key_tx, win, &cm, &ctx, blk, sizeof(blk),
			       &got);
	if (ret != want)
		fail("genuine", c, ret, want);
	if (!ret) {
		if (got != c)
			fail("genuine counter", c, (int)(got - c), 0);
		model_accept(m, c);
	}
	if (win->top != m->max)
		fail("window top", win->top, 0, 0);
}

/*
 * The window alone, with full counters (as a caller that has them would
 * use it): check, then commit, against the model.
 */
static void do_direct(struct input *in, struct mpip_replay *win,
		      struct model *m)
{
	u64 c = genuine_ctr(in, m, (enum ctr_kind)(take8(in) % 4));
	int want = model_window(m, c), ret;

	ret = mpip_replay_check(win, c);
	if (ret != want)
		fail("window check", c, ret, want);
	ret = mpip_replay_commit(win, c);
	if (ret != want)
		fail("window commit", c, ret, want);
	if (!ret)
		model_accept(m, c);
	if (win->top != m->max)
		fail("window top", win->top, 0, 0);
}

/* Flip bit @bit of the @n bytes at @p; return @bit less what was there. */
static unsigned int flip_in(void *p, unsigned int n, unsigned int bit,
			    int *done)
{
	if (*done || bit >= 8 * n)
		return *done ? 0 : bit - 8 * n;
	((u8 *)p)[bit / 8] ^= (u8)(1u << (bit % 8));
	*done = 1;
	return 0;
}

/*
 * One bit of what the MAC covers, changed on the way: the block, a field
 * of the CM, one of its addresses, the protocol, the extension or its
 * length.
 */
static void tamper(struct mpip_cm *cm, struct mpip_auth_ctx *ctx, u8 *ext,
		   u8 *blk, unsigned int bit)
{
	int done = 0;

	/* node ID .. delay, flags, xflags, naddrs, proto, ext_len: 21 bytes */
	bit %= 8 * (MPIP_AUTH_BLOCK_LEN + 21 + 4 * cm->naddrs +
		    ctx->ext_len);
	bit = flip_in(blk, MPIP_AUTH_BLOCK_LEN, bit, &done);
	bit = flip_in(&cm->node_id, 4, bit, &done);
	bit = flip_in(&cm->session_id, 2, bit, &done);
	bit = flip_in(&cm->path_id, 1, bit, &done);
	bit = flip_in(&cm->fb_path_id, 1, bit, &done);
	bit = flip_in(&cm->timestamp_us, 4, bit, &done);
	bit = flip_in(&cm->path_delay_us, 4, bit, &done);
	bit = flip_in(&cm->flags, 1, bit, &done);
	bit = flip_in(&cm->xflags, 1, bit, &done);
	bit = flip_in(&cm->naddrs, 1, bit, &done);
	bit = flip_in(&ctx->proto, 1, bit, &done);
	bit = flip_in(&ctx->ext_len, 1, bit, &done);
	bit = flip_in(cm->addrs, 4 * cm->naddrs, bit, &done);
	flip_in(ext, ctx->ext_len, bit, &done);
	if (!done)
		fail("no bit flipped", bit, 0, 1);
}

static void do_tamper(struct input *in, struct mpip_replay *win,
		      struct model *m)
{
	u8 ext[MPIP_AUTH_EXT_MAX], blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay before = *win;
	unsigned int bit = (unsigned int)take(in, 2);
	struct mpip_auth_ctx ctx;
	struct mpip_cm cm;
	u64 c = genuine_ctr(in, m, CTR_NEAR), got;
	int ret;

	if (!c)
		return;
	seal(in, c, &cm, &ctx, ext, blk);
	tamper(&cm, &ctx, ext, blk, bit);
	ret = mpip_auth_verify(&key_tx, win, &cm, &ctx, blk, sizeof(blk),
			       &got);
	if (!ret)
		fail("tampered CM verified", c, ret, MPIP_AUTH_E_MAC);
	if (memcmp(win, &before, sizeof(before)))
		fail("tampered CM changed the window", c, ret, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct input in = { data, size };
	struct mpip_replay win;

	mpip_replay_init(&win);
	memset(&m, 0, sizeof(m));
	while (in.n) {
		switch (take8(&in) % 8) {
		case 0:
			do_raw(&in, &win);
			break;
		case 1:
		case 2:
			do_genuine(&in, &win, &m, CTR_NEAR);
			break;
		case 3:
			do_genuine(&in, &win, &m, CTR_EDGE);
			break;
		case 4:
			do_genuine(&in, &win, &m, CTR_BEHIND);
			break;
		case 5:
			do_genuine(&in, &win, &m, CTR_JUMP);
			break;
		case 6:
			do_direct(&in, &win, &m);
			break;
		default:
			do_tamper(&in, &win, &m);
		}
	}
	return 0;
}
