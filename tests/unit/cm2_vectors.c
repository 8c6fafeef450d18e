// SPDX-License-Identifier: GPL-2.0
/*
 * Print v2 CM trailers made by the C encoder (kernel/core/cm.c with the
 * MAC of auth.c), one JSON object per line, for other implementations
 * (the python/scapy layer, tests/scapy/test_mpip_cm.py):
 *
 *   {"kind": "encode", ...}  MAC key, counter, protocol, CM fields and
 *                            extension -> auth block and trailer bytes
 *   {"kind": "reject", ...}  trailer bytes that mpip_cm2_decode() refuses,
 *                            with its code (enum mpip_cm_err) and why
 *
 * 64-bit values are hex strings ("0x..."), byte strings plain hex.  The
 * first vectors are pinned in Documentation/wire-format.rst and in
 * tests/unit/test_cm2.c.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "cm.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The handshake keys of the derived-key vectors (auth_vectors' first). */
#define KEY_A	0x0123456789abcdefULL
#define KEY_B	0xfedcba9876543210ULL

enum vec_key {
	KEY_REF,	/* the SipHash paper's key, bytes 00 .. 0f */
	KEY_A_TX,	/* A's tx MAC key, derived from KEY_A and KEY_B */
};

struct vec {
	enum vec_key key;
	u64 ctr;
	u8 proto;
	u32 token;		/* 1: B's token, as A writes it */
	u16 session_id;
	u8 path_id, fb_path_id;
	u32 timestamp_us, path_delay_us;
	u8 flags, xflags, naddrs, ext_len;
	u8 addrs[MPIP_CM_MAX_ADDRS][4];
};

#define TOKEN_B	1

static const struct vec vecs[] = {
	/* 0: a data CM from A to B, as the kernel will send one */
	{ KEY_A_TX, 1, 6, TOKEN_B, 0x1235, 3, 2, 0x80000000, 0x7fffffff,
	  MPIP_CM_F_ORIG, 0, 0, 0, { { 0 } } },
	/* 1: a heartbeat with an address and an extension */
	{ KEY_REF, 12345, 6, 0xcafef00d, 42, 1, 1, 1000000, 250,
	  MPIP_CM_F_HB | MPIP_CM_F_CTRL, MPIP_CM_X_SOLE, 1, 8,
	  { { 10, 4, 0, 1 } } },
	/* 2: the all-zero CM, counter 1 */
	{ KEY_REF, 1, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, { { 0 } } },
	/* 3: an address change at counter 2^32 (auth_vectors' third MAC) */
	{ KEY_REF, 0x100000000ULL, 17, 0x01020304, 0x0506, 7, 8, 0x090a0b0c,
	  0x0d0e0f10, MPIP_CM_F_IP_CHANGE | MPIP_CM_F_CTRL, 0, 2, 0,
	  { { 10, 2, 0, 1 }, { 10, 2, 1, 31 } } },
	/* 4: every field at its maximum: T = 104 */
	{ KEY_REF, 0xfffffffffffffffeULL, 17, 0xffffffff, 0xffff, 0xff, 0xff,
	  0xffffffff, 0xffffffff, 0xff, MPIP_CM_X_MASK, 8, MPIP_CM2_EXT_MAX,
	  { { 10, 5, 0, 1 }, { 10, 5, 1, 31 }, { 10, 5, 2, 61 },
	    { 10, 5, 3, 91 }, { 10, 5, 4, 121 }, { 10, 5, 5, 151 },
	    { 10, 5, 6, 181 }, { 255, 255, 255, 255 } } },
	/* 5: the longest extension without addresses */
	{ KEY_A_TX, 0x1234567890ULL, 17, TOKEN_B, 7, 2, 1, 0x00c0ffee, 4242,
	  MPIP_CM_F_HB | MPIP_CM_F_CTRL, 0, 0, MPIP_CM2_EXT_MAX, { { 0 } } },
	/* 6: token 0 (the decoder takes any), an extension of 8 */
	{ KEY_A_TX, 1, 17, 0, 0, 0, 0, 0x11223344, 0,
	  MPIP_CM_F_ENABLE | MPIP_CM_F_CTRL, 0, 0, 8, { { 0 } } },
	/* 7..: every N with every E, fields from the index */
	{ KEY_REF, 2, 17, 0x9e3779b9, 1, 1, 0, 5, 0, MPIP_CM_F_ORIG, 0, 3, 4,
	  { { 192, 168, 1, 2 }, { 172, 16, 0, 1 }, { 10, 0, 0, 1 } } },
	{ KEY_REF, 3, 6, 0x9e3779b9, 2, 2, 1, 6, 7, MPIP_CM_F_NEW, 0, 4, 28,
	  { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 },
	    { 13, 14, 15, 16 } } },
	{ KEY_REF, 4, 17, 0x9e3779b9, 3, 3, 2, 7, 8, MPIP_CM_F_HS, 0, 5, 12,
	  { { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 3, 3, 3, 3 }, { 4, 4, 4, 4 },
	    { 5, 5, 5, 5 } } },
	{ KEY_REF, 5, 6, 0x9e3779b9, 4, 4, 3, 8, 9, MPIP_CM_F_ENABLED, 0, 6,
	  16, { { 10, 0, 0, 1 }, { 10, 0, 0, 2 }, { 10, 0, 0, 3 },
		{ 10, 0, 0, 4 }, { 10, 0, 0, 5 }, { 10, 0, 0, 6 } } },
	{ KEY_REF, 6, 17, 0x9e3779b9, 5, 5, 4, 9, 10, 0, MPIP_CM_X_SOLE, 7, 20,
	  { { 10, 1, 0, 1 }, { 10, 1, 0, 2 }, { 10, 1, 0, 3 },
	    { 10, 1, 0, 4 }, { 10, 1, 0, 5 }, { 10, 1, 0, 6 },
	    { 10, 1, 0, 7 } } },
	{ KEY_REF, 7, 6, 0x9e3779b9, 6, 6, 5, 10, 11, 0x3f, 0, 8, 24,
	  { { 10, 2, 0, 1 }, { 10, 2, 0, 2 }, { 10, 2, 0, 3 },
	    { 10, 2, 0, 4 }, { 10, 2, 0, 5 }, { 10, 2, 0, 6 },
	    { 10, 2, 0, 7 }, { 10, 2, 0, 8 } } },
};

static void hex(const char *name, const u8 *p, unsigned int n)
{
	unsigned int i;

	printf("\"%s\": \"", name);
	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\"");
}

static void fill(const struct vec *v, u32 token_b, struct mpip_cm2 *cm2)
{
	unsigned int i;

	memset(cm2, 0, sizeof(*cm2));
	cm2->cm.node_id = v->token == TOKEN_B ? token_b : v->token;
	cm2->cm.session_id = v->session_id;
	cm2->cm.path_id = v->path_id;
	cm2->cm.fb_path_id = v->fb_path_id;
	cm2->cm.timestamp_us = v->timestamp_us;
	cm2->cm.path_delay_us = v->path_delay_us;
	cm2->cm.flags = v->flags;
	cm2->cm.xflags = v->xflags;
	cm2->cm.naddrs = v->naddrs;
	for (i = 0; i < v->naddrs; i++)
		memcpy(&cm2->cm.addrs[i], v->addrs[i], 4);
	cm2->ext_len = v->ext_len;
	for (i = 0; i < v->ext_len; i++)
		cm2->ext[i] = (u8)(0xe0 + i);
}

static int print_vec(const struct vec *v, const struct mpip_auth_key *key,
		     u32 token_b)
{
	u8 buf[MPIP_CM2_MAX_LEN];
	struct mpip_cm2 cm2;
	const struct mpip_cm *cm = &cm2.cm;
	unsigned int i, t;
	int ret;

	fill(v, token_b, &cm2);
	ret = mpip_cm2_encode(&cm2, key, v->ctr, v->proto, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	t = (unsigned int)ret;

	printf("{\"kind\": \"encode\", \"key\": [\"0x%016llx\", "
	       "\"0x%016llx\"], \"counter\": \"0x%016llx\", \"proto\": %u, ",
	       (unsigned long long)key->k0, (unsigned long long)key->k1,
	       (unsigned long long)v->ctr, v->proto);
	printf("\"token\": %u, \"session_id\": %u, \"path_id\": %u, "
	       "\"fb_path_id\": %u, \"timestamp_us\": %u, "
	       "\"path_delay_us\": %u, \"flags\": %u, \"xflags\": %u, "
	       "\"naddrs\": %u, \"addrs\": [", cm->node_id, cm->session_id,
	       cm->path_id, cm->fb_path_id, cm->timestamp_us,
	       cm->path_delay_us, cm->flags, cm->xflags, cm->naddrs);
	for (i = 0; i < cm->naddrs; i++) {
		const u8 *a = (const u8 *)&cm->addrs[i];

		printf("%s\"%u.%u.%u.%u\"", i ? ", " : "", a[0], a[1], a[2],
		       a[3]);
	}
	printf("], ");
	hex("ext", cm2.ext, cm2.ext_len);
	printf(", \"length\": %u, ", t);
	hex("auth", buf + t - 24, MPIP_CM2_AUTH_LEN);
	printf(", \"csum_adjust\": %u, \"check\": %u, ",
	       (buf[t - 12] << 8) | buf[t - 11],
	       ((u32)buf[t - 4] << 24) | ((u32)buf[t - 3] << 16) |
	       ((u32)buf[t - 2] << 8) | buf[t - 1]);
	hex("hex", buf, t);
	printf("}\n");
	return (int)t;
}

/* ---- rejected trailers ------------------------------------------------ */

static void put16(u8 *p, unsigned int v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static unsigned int sum16(const u8 *p, unsigned int n)
{
	unsigned int i, s = 0;

	for (i = 0; i + 1 < n; i += 2)
		s += (unsigned int)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* Make check and adjustment right for the @t bytes at @b as they are. */
static void fix(u8 *b, unsigned int t)
{
	unsigned int a;

	put16(b + t - 12, 0);
	put32(b + t - 4, mpip_crc32c(0, b, t - 4));
	a = 0x4000 + (~sum16(b, t) & 0xffff);
	a = (a & 0xffff) + (a >> 16);
	put16(b + t - 12, a);
}

static void reject(const u8 *b, unsigned int t, const char *why)
{
	struct mpip_cm2 out;

	printf("{\"kind\": \"reject\", \"error\": %d, \"why\": \"%s\", ",
	       mpip_cm2_decode(b, t, 0, &out), why);
	hex("hex", b, t);
	printf("}\n");
}

/* One trailer of each rejection class, made from vector 3 (T = 48). */
static void print_rejects(const u8 *good, unsigned int t)
{
	u8 b[MPIP_CM2_MAX_LEN + 8];

	reject(good + 9, t - 9, "39 bytes");
	memcpy(b, good, t);
	b[t - 8] = 0xd6;
	fix(b, t);
	reject(b, t, "magic 0xd6");
	memcpy(b, good, t);
	b[t - 7] = 3;
	fix(b, t);
	reject(b, t, "version 3");
	memcpy(b, good, t);
	b[t - 7] = MPIP_CM_VERSION;
	fix(b, t);
	reject(b, t, "version 1");
	memcpy(b, good, t);
	put16(b + t - 6, t + 4);
	fix(b, t);
	reject(b, t, "length 52, 48 bytes");
	memcpy(b, good, t);
	put16(b + t - 6, t - 4);
	fix(b, t);
	reject(b, t, "length 44, 48 bytes");
	memcpy(b, good, t);
	put16(b + t - 6, t + 1);
	fix(b, t);
	reject(b, t, "length 49");
	memcpy(b, good, t);
	put16(b + t - 6, 36);
	fix(b, t);
	reject(b, t, "length 36");
	memset(b, 0, 4);
	memcpy(b + 4, good, t);
	put16(b + 4 + t - 6, 108);
	fix(b, t + 4);
	reject(b, t + 4, "length 108");
	memcpy(b, good, t);
	b[t - 9] = 9;
	fix(b, t);
	reject(b, t, "N 9");
	memcpy(b, good, t);
	b[t - 9] = 3;
	fix(b, t);
	reject(b, t, "N 3, T 48: list longer than T - 40");
	memset(b, 0, 56);
	memcpy(b + 56, good + t - 24, 24);
	put16(b + 80 - 6, 80);
	b[80 - 9] = 1;
	fix(b, 80);
	reject(b, 80, "N 1, T 80: extension 36 bytes");
	memcpy(b, good, t);
	b[t - 1] ^= 1;
	reject(b, t, "check off by one bit");
	memcpy(b, good, t);
	b[t - 20] ^= 0x80;
	reject(b, t, "MAC changed, check stale");
	memcpy(b, good, t);
	put16(b + t - 12, 0);
	reject(b, t, "adjustment 0x0000");
	memcpy(b, good, t);
	b[t - 11] ^= 1;
	reject(b, t, "adjustment off by one");
}

int main(void)
{
	const struct mpip_auth_key ref = { 0x0706050403020100ULL,
					   0x0f0e0d0c0b0a0908ULL };
	u8 good[MPIP_CM2_MAX_LEN];
	struct mpip_auth_peer a;
	struct mpip_cm2 cm2;
	unsigned int k;
	int t = 0;

	if (mpip_auth_derive(&a, KEY_A, KEY_B))
		return 1;
	printf("{\"kind\": \"keys\", \"key_a\": \"0x%016llx\", "
	       "\"key_b\": \"0x%016llx\", \"a_tx\": [\"0x%016llx\", "
	       "\"0x%016llx\"], \"token_b\": %u}\n",
	       KEY_A, KEY_B, (unsigned long long)a.tx.k0,
	       (unsigned long long)a.tx.k1, a.tx_token);
	for (k = 0; k < ARRAY_SIZE(vecs); k++) {
		const struct vec *v = &vecs[k];

		t = print_vec(v, v->key == KEY_REF ? &ref : &a.tx, a.tx_token);
		if (t < 0)
			return 1;
	}
	fill(&vecs[3], 0, &cm2);
	t = mpip_cm2_encode(&cm2, &ref, vecs[3].ctr, vecs[3].proto, good,
			    sizeof(good));
	if (t != 48)
		return 1;
	print_rejects(good, (unsigned int)t);
	return 0;
}
