// SPDX-License-Identifier: GPL-2.0
/*
 * mpip CM authentication for wire format v2: SipHash-2-4 and a replay
 * window.
 *
 * Portable C: in the module SipHash is the kernel's (lib/siphash.c); on
 * the host it is the implementation below, written from the SipHash
 * paper (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * INDOCRYPT 2012).  No allocation, no 64-bit division.  The window is
 * described in auth.h.
 */
#include "auth.h"

#ifdef __KERNEL__
u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1)
{
	const siphash_key_t key = { { k0, k1 } };

	return siphash(data, len, &key);
}
#else
/* The initial state: "somepseudorandomlygeneratedbytes" as four words. */
#define SIP_C0	0x736f6d6570736575ULL
#define SIP_C1	0x646f72616e646f6dULL
#define SIP_C2	0x6c7967656e657261ULL
#define SIP_C3	0x7465646279746573ULL

struct sip_state {
	u64 v0, v1, v2, v3;
};

static u64 sip_rotl(u64 x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = sip_rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = sip_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = sip_rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = sip_rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = sip_rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = sip_rotl(s->v2, 32);
}

/* One message word: 2 compression rounds (the "2" of SipHash-2-4). */
static void sip_word(struct sip_state *s, u64 m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* Up to 8 bytes at @p as a little-endian number. */
static u64 sip_le(const u8 *p, unsigned int n)
{
	unsigned int i;
	u64 m = 0;

	for (i = 0; i < n; i++)
		m |= (u64)p[i] << (8 * i);
	return m;
}

u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1)
{
	struct sip_state s = {
		k0 ^ SIP_C0, k1 ^ SIP_C1, k0 ^ SIP_C2, k1 ^ SIP_C3,
	};
	const u8 *p = data;
	unsigned int off, i;

	for (off = 0; off + 8 <= len; off += 8)
		sip_word(&s, sip_le(p + off, 8));
	/* The last word: the 0..7 bytes left, and the length mod 256 on top. */
	sip_word(&s, sip_le(p + off, len - off) | (u64)(len & 0xff) << 56);
	/* Finalisation: 4 rounds (the "4"). */
	s.v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
#endif

void mpip_replay_init(struct mpip_replay *win)
{
	memset(win, 0, sizeof(*win));
}

/**
 * mpip_replay_infer() - the full counter of a received low half
 * @win: the replay window
 * @lo: the counter's low 32 bits, as received
 * @ctr: set to the full counter
 *
 * The counter is taken as the one value with these low bits from the
 * window's bottom, @win->top - MPIP_REPLAY_WINDOW + 1, up to 2^32 - 1
 * above it (RFC 4303, appendix A2.2).  Anything older than the window
 * would be refused anyway; a guess that is wrong because the sender is
 * 2^32 - MPIP_REPLAY_WINDOW or more ahead fails the MAC.
 *
 * Return: 0, MPIP_AUTH_E_OLD if the value would be 0 or below (before the
 * first counter), MPIP_AUTH_E_WRAP if it would be 2^64 or above.
 */
int mpip_replay_infer(const struct mpip_replay *win, u32 lo, u64 *ctr)
{
	u32 th = (u32)(win->top >> 32), tl = (u32)win->top;
	u32 bottom = tl - (MPIP_REPLAY_WINDOW - 1);	/* mod 2^32 */
	u64 hi = th;

	if (tl >= MPIP_REPLAY_WINDOW - 1) {
		/* The window lies within one 2^32 block (high half th). */
		if (lo < bottom) {
			if (th == 0xffffffff)
				return MPIP_AUTH_E_WRAP;
			hi = (u64)th + 1;
		}
	} else if (lo >= bottom) {
		/* The window reaches back into the previous block. */
		if (!th)
			return MPIP_AUTH_E_OLD;
		hi = (u64)th - 1;
	}
	*ctr = hi << 32 | lo;
	return *ctr ? 0 : MPIP_AUTH_E_OLD;
}

static u64 replay_bit(u64 ctr)
{
	return (u64)1 << (ctr & 63);
}

static unsigned int replay_word(u64 ctr)
{
	return (unsigned int)(ctr >> 6) & (MPIP_REPLAY_WORDS - 1);
}

/**
 * mpip_replay_check() - may a counter be accepted?
 * @win: the replay window
 * @ctr: the counter
 *
 * Return: 0 if @ctr is new, MPIP_AUTH_E_OLD if it is 0 or
 * MPIP_REPLAY_WINDOW or more behind the newest, MPIP_AUTH_E_DUP if it was
 * accepted before.
 */
int mpip_replay_check(const struct mpip_replay *win, u64 ctr)
{
	if (!ctr)
		return MPIP_AUTH_E_OLD;
	if (ctr > win->top)
		return 0;
	if (win->top - ctr >= MPIP_REPLAY_WINDOW)
		return MPIP_AUTH_E_OLD;
	if (win->bits[replay_word(ctr)] & replay_bit(ctr))
		return MPIP_AUTH_E_DUP;
	return 0;
}

/* Move the newest counter up to @ctr, clearing the words it passes. */
static void replay_advance(struct mpip_replay *win, u64 ctr)
{
	u64 from = win->top >> 6, to = ctr >> 6, w;

	if (to - from >= MPIP_REPLAY_WORDS) {
		memset(win->bits, 0, sizeof(win->bits));
	} else {
		for (w = from + 1; w <= to; w++)
			win->bits[w & (MPIP_REPLAY_WORDS - 1)] = 0;
	}
	win->top = ctr;
}

/**
 * mpip_replay_commit() - accept a counter whose CM verified
 * @win: the replay window; the caller serialises commits
 * @ctr: the counter
 *
 * Checks @ctr again (mpip_replay_check()), so a copy that passed a check
 * while its twin was committed is refused here.
 *
 * Return: 0, or MPIP_AUTH_E_OLD or MPIP_AUTH_E_DUP and @win unchanged.
 */
int mpip_replay_commit(struct mpip_replay *win, u64 ctr)
{
	int ret = mpip_replay_check(win, ctr);

	if (ret)
		return ret;
	if (ctr > win->top)
		replay_advance(win, ctr);
	win->bits[replay_word(ctr)] |= replay_bit(ctr);
	return 0;
}
