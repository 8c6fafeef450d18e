// SPDX-License-Identifier: GPL-2.0
/*
 * mpip CM authentication for wire format v2: SipHash-2-4.
 *
 * Portable C: in the module SipHash is the kernel's (lib/siphash.c); on
 * the host it is the implementation below, written from the SipHash
 * paper (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * INDOCRYPT 2012).  No allocation.
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
