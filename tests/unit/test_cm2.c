// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for the v2 CM trailer in kernel/core/cm.c: the encoder
 * (MAC from auth.c), the decoder and its rejection classes, the version
 * dispatch of mpip_cm_peek_any() and mpip_cm_decode_any(), and v1's own
 * entry points refusing v2 (the module accepts v1 only).
 *
 * Every decode runs on a heap buffer of exactly the bytes under test, so
 * AddressSanitizer reports any read outside them.  The reference encoder
 * below (its own MAC input fed to SipHash, with the bitwise CRC32C and
 * modular ones'-complement sum of cm_ref.c) is written independently of
 * cm.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "cm.h"
#include "cm_ref.h"
#include "ktap.h"

#define FUZZ_ITERS	100000
#define V2_BUF		(MPIP_CM2_MAX_LEN + 16)

/* The SipHash paper's key, bytes 00 .. 0f. */
static const struct mpip_auth_key ref_key = {
	0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL,
};

static const struct mpip_auth_key other_key = {
	0x0706050403020100ULL, 0x0f0e0d0c0b0a0909ULL,
};

/* ---- independent reference implementation ---------------------------- */

/* The MAC input of security.rst, "MAC", built here from the fields. */
static u64 ref_mac(const struct mpip_auth_key *key,
		   const struct mpip_cm2 *cm2, u64 ctr, u8 proto)
{
	const struct mpip_cm *cm = &cm2->cm;
	u8 in[32 + 4 * MPIP_CM_MAX_ADDRS + MPIP_CM2_EXT_MAX];
	unsigned int i;

	in[0] = 0xd7;
	in[1] = 2;
	in[2] = 1;
	in[3] = proto;
	put64(in + 4, ctr);
	put32(in + 12, cm->node_id);
	put16(in + 16, cm->session_id);
	in[18] = cm->path_id;
	in[19] = cm->fb_path_id;
	put32(in + 20, cm->timestamp_us);
	put32(in + 24, cm->path_delay_us);
	in[28] = cm->flags;
	in[29] = (u8)(cm->xflags << 4 | cm->naddrs);
	in[30] = cm2->ext_len;
	in[31] = 0;
	for (i = 0; i < cm->naddrs; i++)
		memcpy(in + 32 + 4 * i, &cm->addrs[i], 4);
	memcpy(in + 32 + 4 * cm->naddrs, cm2->ext, cm2->ext_len);
	return mpip_siphash(in, 32 + 4 * cm->naddrs + cm2->ext_len, key->k0,
			    key->k1);
}

/* The trailer of @cm2 with auth block @blk, from the layout alone. */
static unsigned int ref_write(const struct mpip_cm2 *cm2, const u8 *blk,
			      u8 *b)
{
	const struct mpip_cm *cm = &cm2->cm;
	unsigned int n = cm->naddrs, e = cm2->ext_len;
	unsigned int t = 40 + 4 * n + e, i;

	put32(b, cm->node_id);
	put16(b + 4, cm->session_id);
	b[6] = cm->path_id;
	b[7] = cm->fb_path_id;
	put32(b + 8, cm->timestamp_us);
	put32(b + 12, cm->path_delay_us);
	for (i = 0; i < n; i++)
		memcpy(b + 16 + 4 * i, &cm->addrs[i], 4);
	memcpy(b + 16 + 4 * n, cm2->ext, e);
	memcpy(b + t - 24, blk, 12);
	b[t - 10] = cm->flags;
	b[t - 9] = (u8)(n | cm->xflags << 4);
	b[t - 8] = 0xd7;
	b[t - 7] = 2;
	put16(b + t - 6, t);
	ref_fix(b, t);
	return t;
}

static unsigned int ref_encode(const struct mpip_cm2 *cm2,
			       const struct mpip_auth_key *key, u64 ctr,
			       u8 proto, u8 *b)
{
	u8 blk[12];

	put32(blk, (u32)ctr);
	put64(blk + 4, ref_mac(key, cm2, ctr, proto));
	return ref_write(cm2, blk, b);
}

/* ---- helpers ---------------------------------------------------------- */

static int decode_exact(const u8 *src, unsigned int n, struct mpip_cm2 *cm2)
{
	u8 *p = exact_copy(src, n);
	int ret = mpip_cm2_decode(p, n, 0, cm2);

	free(p);
	return ret;
}

static int decode_any_exact(const u8 *src, unsigned int n,
			    struct mpip_cm2 *cm2)
{
	u8 *p = exact_copy(src, n);
	int ret = mpip_cm_decode_any(p, n, 0, cm2);

	free(p);
	return ret;
}

/* Peek at the last 8 of @n bytes held in an exact heap buffer. */
static int peek_exact(const u8 *src, unsigned int n,
		      int (*peek)(const u8 *, unsigned int))
{
	u8 *p = exact_copy(src, n);
	int ret = peek(p + n - MPIP_CM_TAIL_LEN, n);

	free(p);
	return ret;
}

static void random_cm2(struct unit_ctx *ctx, struct mpip_cm2 *cm2,
		       unsigned int naddrs, unsigned int ext_len)
{
	struct mpip_cm *cm = &cm2->cm;
	unsigned int i;

	memset(cm2, 0, sizeof(*cm2));
	cm->node_id = unit_rand32(ctx);
	cm->session_id = (u16)unit_rand32(ctx);
	cm->path_id = (u8)unit_rand32(ctx);
	cm->fb_path_id = (u8)unit_rand32(ctx);
	cm->timestamp_us = unit_rand32(ctx);
	cm->path_delay_us = unit_rand32(ctx);
	cm->flags = (u8)unit_rand32(ctx);
	cm->xflags = (u8)(unit_rand32(ctx) & MPIP_CM_X_MASK);
	cm->naddrs = (u8)naddrs;
	for (i = 0; i < naddrs; i++)
		cm->addrs[i] = unit_rand32(ctx);
	cm2->ext_len = (u8)ext_len;
	unit_fill(ctx, cm2->ext, ext_len);
}

/* A counter that is not 0, some of them above 2^32. */
static u64 random_ctr(struct unit_ctx *ctx)
{
	u64 c = unit_rand64(ctx) >> unit_below(ctx, 64);

	return c ? c : 1;
}

/* Same fields and extension; @b's unused address and extension bytes 0. */
static int cm2_same(const struct mpip_cm2 *a, const struct mpip_cm2 *b)
{
	static const u8 zero[MPIP_CM2_EXT_MAX + 4 * MPIP_CM_MAX_ADDRS];
	const struct mpip_cm *x = &a->cm, *y = &b->cm;

	return x->node_id == y->node_id && x->session_id == y->session_id &&
	       x->path_id == y->path_id && x->fb_path_id == y->fb_path_id &&
	       x->timestamp_us == y->timestamp_us &&
	       x->path_delay_us == y->path_delay_us &&
	       x->flags == y->flags && x->xflags == y->xflags &&
	       x->naddrs == y->naddrs &&
	       !memcmp(x->addrs, y->addrs, 4 * x->naddrs) &&
	       !memcmp(y->addrs + y->naddrs, zero,
		       4 * (MPIP_CM_MAX_ADDRS - y->naddrs)) &&
	       a->ext_len == b->ext_len &&
	       !memcmp(a->ext, b->ext, a->ext_len) &&
	       !memcmp(b->ext + b->ext_len, zero,
		       MPIP_CM2_EXT_MAX - b->ext_len);
}

static unsigned int encode_random(struct unit_ctx *ctx, u8 *buf,
				  struct mpip_cm2 *cm2, unsigned int naddrs,
				  unsigned int ext_len)
{
	random_cm2(ctx, cm2, naddrs, ext_len);
	return (unsigned int)mpip_cm2_encode(cm2, &ref_key, random_ctr(ctx),
					     17, buf, V2_BUF);
}

/*
 * Encode @cm2 into an exact heap buffer, compare with the reference
 * encoder, peek, decode from an exact buffer, compare fields and auth
 * block, verify the MAC, write again and compare bytes.
 */
static int round_trip(struct unit_ctx *ctx, const struct mpip_cm2 *cm2,
		      u64 ctr, u8 proto)
{
	unsigned int t = mpip_cm2_len(cm2);
	u8 ref[V2_BUF], again[V2_BUF];
	struct mpip_replay win;
	struct mpip_auth_ctx actx;
	struct mpip_cm2 out;
	u8 *buf = malloc(t);
	u64 got = 0;
	int ok = 1;

	if (!buf)
		exit(2);
	ok &= CHECK_EQ(mpip_cm2_encode(cm2, &ref_key, ctr, proto, buf, t), t);
	ok &= CHECK_EQ(ref_encode(cm2, &ref_key, ctr, proto, ref), t);
	ok &= CHECK(!memcmp(buf, ref, t));
	ok &= CHECK_EQ(peek_exact(buf, t, mpip_cm2_peek), t);
	ok &= CHECK_EQ(peek_exact(buf, t, mpip_cm_peek_any), t);
	memset(&out, 0xa5, sizeof(out));
	ok &= CHECK_EQ(decode_exact(buf, t, &out), t);
	ok &= CHECK(cm2_same(cm2, &out));
	ok &= CHECK_EQ(out.version, 2);
	ok &= CHECK(!memcmp(out.auth, buf + t - 24, 12));
	ok &= CHECK_EQ(get32(out.auth), (u32)ctr);
	memset(&out, 0x5a, sizeof(out));
	ok &= CHECK_EQ(decode_any_exact(buf, t, &out), t);
	ok &= CHECK(cm2_same(cm2, &out));
	ok &= CHECK_EQ(out.version, 2);
	ok &= CHECK_EQ(mpip_cm2_write(&out, again, sizeof(again)), t);
	ok &= CHECK(!memcmp(buf, again, t));

	/* What mpip_auth_check() needs comes out of the decoder. */
	mpip_replay_init(&win);
	if (ctr > MPIP_REPLAY_WINDOW)
		win.top = ctr - MPIP_REPLAY_WINDOW / 2;
	mpip_cm2_auth_ctx(&out, proto, &actx);
	ok &= CHECK_EQ(mpip_auth_check(&ref_key, &win, &out.cm, &actx,
				       out.auth, sizeof(out.auth), &got), 0);
	ok &= CHECK_EQ(got, ctr);
	mpip_cm2_auth_ctx(&out, proto ^ 1, &actx);
	ok &= CHECK_EQ(mpip_auth_check(&ref_key, &win, &out.cm, &actx,
				       out.auth, sizeof(out.auth), &got),
		       MPIP_AUTH_E_MAC);
	free(buf);
	return ok;
}

/* ---- layout ----------------------------------------------------------- */

/* The link policy of an IP_CHANGE (wire-format.rst, Extension contents). */
UNIT_TEST(cm2_lpol_of_ip_change)
{
	struct mpip_cm_lpol l;
	struct mpip_cm2 c;

	memset(&c, 0, sizeof(c));
	c.cm.naddrs = 3;
	/* not an IP_CHANGE: says nothing, whatever the extension */
	c.cm.flags = MPIP_CM_F_CTRL | MPIP_CM_F_HB;
	c.ext_len = 4;
	l.tiers = 0x5a5a;
	l.metered = 3;
	CHECK(!mpip_cm2_lpol(&c, &l));
	CHECK_EQ(l.tiers, 0x5a5aU);	/* untouched */
	CHECK_EQ(l.metered, 3U);
	/* a handshake CM with a list: says nothing either */
	c.cm.flags = MPIP_CM_F_CTRL | MPIP_CM_F_IP_CHANGE | MPIP_CM_F_ENABLED;
	CHECK(!mpip_cm2_lpol(&c, &l));
	c.cm.flags = MPIP_CM_F_CTRL | MPIP_CM_F_IP_CHANGE | MPIP_CM_F_ENABLE;
	CHECK(!mpip_cm2_lpol(&c, &l));
	/* IP_CHANGE without an extension: main tier, nothing metered */
	c.cm.flags = MPIP_CM_F_CTRL | MPIP_CM_F_IP_CHANGE;
	c.ext_len = 0;
	CHECK(mpip_cm2_lpol(&c, &l));
	CHECK_EQ(l.tiers, 0U);
	CHECK_EQ(l.metered, 0U);
	/* the mask alone: tier 1 per bit, big-endian, none past the list */
	c.ext_len = 4;
	c.ext[0] = 0x80;
	c.ext[1] = 0x00;
	c.ext[2] = 0x01;
	c.ext[3] = 0x06;
	CHECK(mpip_cm2_lpol(&c, &l));
	CHECK_EQ(l.tiers, 1U << 3 | 1U << 6);
	CHECK_EQ(l.metered, 0U);
	CHECK_EQ(mpip_cm_lpol_backups(&l), 0x6U);
	c.cm.naddrs = 8;
	CHECK(mpip_cm2_lpol(&c, &l));
	CHECK_EQ(mpip_cm_lpol_backups(&l), 0x6U);
	c.cm.naddrs = 0;
	CHECK(mpip_cm2_lpol(&c, &l));
	CHECK_EQ(l.tiers, 0U);
	/* an extension of another length (a nonce, an echo): says nothing */
	c.cm.naddrs = 3;
	c.ext_len = 8;
	CHECK(!mpip_cm2_lpol(&c, &l));
	c.ext_len = 16;
	CHECK(!mpip_cm2_lpol(&c, &l));
}

/* Mask, tiers and metered mask: 12 bytes; what is past the list goes. */
UNIT_TEST(cm2_lpol_full_extension)
{
	struct mpip_cm_lpol l;
	struct mpip_cm2 c;

	memset(&c, 0, sizeof(c));
	c.cm.flags = MPIP_CM_F_CTRL | MPIP_CM_F_IP_CHANGE;
	c.cm.naddrs = 3;
	c.ext_len = 12;
	/* mask: address 0; tiers: 1 -> 5, 2 -> 7, 3 -> 2 (past the list) */
	c.ext[3] = 0x01;
	c.ext[4] = 0xff;	/* bits 24-31: nobody's */
	c.ext[5] = 0x00;
	c.ext[6] = 0x05;	/* 0x5e8 = 2 << 9 | 7 << 6 | 5 << 3 */
	c.ext[7] = 0xe8;
	/* metered: addresses 2 and 7 */
	c.ext[11] = 0x84;
	CHECK(mpip_cm2_lpol(&c, &l));
	/* address 0: tier field 0, mask bit set: tier 1 */
	CHECK_EQ(mpip_cm_lpol_tier(&l, 0), 1U);
	CHECK_EQ(mpip_cm_lpol_tier(&l, 1), 5U);
	CHECK_EQ(mpip_cm_lpol_tier(&l, 2), 7U);
	CHECK_EQ(mpip_cm_lpol_tier(&l, 3), 0U);
	CHECK_EQ(l.tiers >> 9, 0U);
	CHECK_EQ(l.metered, 0x4U);
	CHECK_EQ(mpip_cm_lpol_backups(&l), 0x7U);
}

/* The shortest extension that says it all, and it reads back the same. */
UNIT_TEST(cm2_lpol_ext_round_trip)
{
	static const unsigned int tiers[][MPIP_CM_MAX_ADDRS] = {
		{ 0 }, { 0, 1, 0, 0, 0, 0, 0, 1 }, { 0, 1, 2 },
		{ 7, 7, 7, 7, 7, 7, 7, 7 }, { 3, 0, 1 },
	};
	static const u32 metered[] = { 0, 0, 0, 0xff, 0x2 };
	static const unsigned int len[] = { 0, 4, 12, 12, 12 };
	struct mpip_cm_lpol l, back;
	struct mpip_cm2 c;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(len); i++) {
		memset(&l, 0, sizeof(l));
		for (j = 0; j < MPIP_CM_MAX_ADDRS; j++)
			mpip_cm_lpol_set(&l, j, tiers[i][j],
					 metered[i] & 1U << j);
		memset(&c, 0, sizeof(c));
		c.cm.flags = MPIP_CM_F_CTRL | MPIP_CM_F_IP_CHANGE;
		c.cm.naddrs = MPIP_CM_MAX_ADDRS;
		c.ext_len = (u8)mpip_cm_lpol_ext(&l, c.ext);
		CHECK_EQ(c.ext_len, len[i]);
		CHECK(mpip_cm2_lpol(&c, &back));
		CHECK_EQ(back.tiers, l.tiers);
		CHECK_EQ(back.metered, l.metered);
	}
	/* a tier above the top is capped; a set overwrites */
	memset(&l, 0, sizeof(l));
	mpip_cm_lpol_set(&l, 2, 9, true);
	CHECK_EQ(mpip_cm_lpol_tier(&l, 2), 7U);
	mpip_cm_lpol_set(&l, 2, 1, false);
	CHECK_EQ(l.tiers, 1U << 6);
	CHECK_EQ(l.metered, 0U);
	/* an address past the last is not there */
	mpip_cm_lpol_set(&l, MPIP_CM_MAX_ADDRS, 3, true);
	CHECK_EQ(l.tiers, 1U << 6);
	CHECK_EQ(l.metered, 0U);
}

UNIT_TEST(cm2_lengths_and_constants)
{
	struct mpip_cm2 cm2;

	CHECK_EQ(MPIP_CM2_VERSION, 2);
	CHECK_EQ(MPIP_CM2_MIN_LEN, 40);
	CHECK_EQ(MPIP_CM2_MAX_LEN, 104);
	CHECK_EQ(MPIP_CM_ANY_MAX_LEN, 104);
	CHECK_EQ(MPIP_CM2_AUTH_LEN, MPIP_AUTH_BLOCK_LEN);
	CHECK_EQ(MPIP_CM2_EXT_MAX, MPIP_AUTH_EXT_MAX);
	CHECK_EQ(MPIP_CM_E_EXT, -8);
	memset(&cm2, 0, sizeof(cm2));
	CHECK_EQ(mpip_cm2_len(&cm2), 40);
	cm2.cm.naddrs = 3;
	cm2.ext_len = 12;
	CHECK_EQ(mpip_cm2_len(&cm2), 64);
}

/* The vectors of Documentation/wire-format.rst, "Version 2". */
UNIT_TEST(cm2_golden_vectors)
{
	static const u8 data_cm[40] = {
		0x3e, 0x2d, 0x80, 0xd3, 0x12, 0x35, 0x03, 0x02,
		0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x01, 0x67, 0x9c, 0xfa, 0x2c,
		0x90, 0x67, 0x19, 0x45, 0x1f, 0x39, 0x40, 0x00,
		0xd7, 0x02, 0x00, 0x28, 0x11, 0xff, 0x17, 0xee,
	};
	static const u8 hb_cm[52] = {
		0xca, 0xfe, 0xf0, 0x0d, 0x00, 0x2a, 0x01, 0x01,
		0x00, 0x0f, 0x42, 0x40, 0x00, 0x00, 0x00, 0xfa,
		0x0a, 0x04, 0x00, 0x01, 0xe0, 0xe1, 0xe2, 0xe3,
		0xe4, 0xe5, 0xe6, 0xe7, 0x00, 0x00, 0x30, 0x39,
		0xd4, 0x3e, 0x3a, 0x20, 0x25, 0x12, 0x2e, 0xdb,
		0x92, 0xb4, 0x14, 0x11, 0xd7, 0x02, 0x00, 0x34,
		0x33, 0x59, 0x63, 0x0b,
	};
	static const u8 zero_cm[40] = {
		[16] = 0x00, 0x00, 0x00, 0x01, 0x04, 0x8f, 0x1b, 0xfc,
		0x83, 0x86, 0xcb, 0x86, 0x3d, 0x1e, 0x00, 0x00,
		0xd7, 0x02, 0x00, 0x28, 0x3c, 0xfb, 0x7f, 0x22,
	};
	u8 buf[V2_BUF];
	struct mpip_auth_peer a, b;
	struct mpip_cm2 cm2, out;
	struct mpip_replay win;
	struct mpip_auth_ctx actx;
	unsigned int i;
	u64 ctr = 0;

	/* A data CM from A to B under A's derived tx key, counter 1. */
	if (!CHECK_EQ(mpip_auth_derive(&a, 0x0123456789abcdefULL,
				       0xfedcba9876543210ULL), 0) ||
	    !CHECK_EQ(mpip_auth_derive(&b, 0xfedcba9876543210ULL,
				       0x0123456789abcdefULL), 0))
		return;
	memset(&cm2, 0, sizeof(cm2));
	cm2.cm.node_id = a.tx_token;
	cm2.cm.session_id = 0x1235;
	cm2.cm.path_id = 3;
	cm2.cm.fb_path_id = 2;
	cm2.cm.timestamp_us = 0x80000000;
	cm2.cm.path_delay_us = 0x7fffffff;
	cm2.cm.flags = MPIP_CM_F_ORIG;
	CHECK_EQ(mpip_cm2_encode(&cm2, &a.tx, 1, 6, buf, sizeof(buf)), 40);
	CHECK(!memcmp(buf, data_cm, sizeof(data_cm)));
	/* B takes it: its token, its rx key, its window. */
	CHECK_EQ(decode_exact(data_cm, sizeof(data_cm), &out), 40);
	CHECK_EQ(out.cm.node_id, b.rx_token);
	mpip_replay_init(&win);
	mpip_cm2_auth_ctx(&out, 6, &actx);
	CHECK_EQ(mpip_auth_verify(&b.rx, &win, &out.cm, &actx, out.auth,
				  sizeof(out.auth), &ctr), 0);
	CHECK_EQ(ctr, 1);
	/* A copy of it is a replay; A's own rx key never takes it. */
	CHECK_EQ(mpip_auth_verify(&b.rx, &win, &out.cm, &actx, out.auth,
				  sizeof(out.auth), &ctr), MPIP_AUTH_E_DUP);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_auth_verify(&a.rx, &win, &out.cm, &actx, out.auth,
				  sizeof(out.auth), &ctr), MPIP_AUTH_E_MAC);

	/* A heartbeat with an address and 8 extension bytes. */
	memset(&cm2, 0, sizeof(cm2));
	cm2.cm.node_id = 0xcafef00d;
	cm2.cm.session_id = 42;
	cm2.cm.path_id = 1;
	cm2.cm.fb_path_id = 1;
	cm2.cm.timestamp_us = 1000000;
	cm2.cm.path_delay_us = 250;
	cm2.cm.flags = MPIP_CM_F_HB | MPIP_CM_F_CTRL;
	cm2.cm.xflags = MPIP_CM_X_SOLE;
	cm2.cm.naddrs = 1;
	memcpy(&cm2.cm.addrs[0], "\x0a\x04\x00\x01", 4);
	cm2.ext_len = 8;
	for (i = 0; i < 8; i++)
		cm2.ext[i] = (u8)(0xe0 + i);
	CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 12345, 6, buf, sizeof(buf)),
		 52);
	CHECK(!memcmp(buf, hb_cm, sizeof(hb_cm)));
	CHECK_EQ(decode_exact(hb_cm, sizeof(hb_cm), &out), 52);
	CHECK(cm2_same(&cm2, &out));

	/* The all-zero CM, counter 1, UDP. */
	memset(&cm2, 0, sizeof(cm2));
	CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 1, 17, buf, sizeof(buf)), 40);
	CHECK(!memcmp(buf, zero_cm, sizeof(zero_cm)));
}

UNIT_TEST(cm2_field_offsets)
{
	struct mpip_cm2 cm2;
	u8 buf[V2_BUF];
	unsigned int n, e, t, i;
	u64 ctr = 0x1122334455667788ULL;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		for (e = 0; e <= MPIP_CM2_EXT_MAX; e += 4) {
			memset(&cm2, 0, sizeof(cm2));
			cm2.cm.node_id = 0x01020304;
			cm2.cm.session_id = 0x0506;
			cm2.cm.path_id = 0x07;
			cm2.cm.fb_path_id = 0x08;
			cm2.cm.timestamp_us = 0x090a0b0c;
			cm2.cm.path_delay_us = 0x0d0e0f10;
			cm2.cm.flags = 0xa5;
			cm2.cm.xflags = 0x9;
			cm2.cm.naddrs = (u8)n;
			for (i = 0; i < 4 * n; i++)
				((u8 *)cm2.cm.addrs)[i] = (u8)(0x40 + i);
			cm2.ext_len = (u8)e;
			for (i = 0; i < e; i++)
				cm2.ext[i] = (u8)(0x80 + i);
			memset(buf, 0xcc, sizeof(buf));
			t = (unsigned int)mpip_cm2_encode(&cm2, &ref_key, ctr,
							  17, buf,
							  sizeof(buf));
			if (!CHECK_EQ_MSG(t, 40 + 4 * n + e, "n %u e %u", n,
					  e))
				return;
			CHECK_EQ(get32(buf), 0x01020304);
			CHECK_EQ(get16(buf + 4), 0x0506);
			CHECK_EQ(buf[6], 7);
			CHECK_EQ(buf[7], 8);
			CHECK_EQ(get32(buf + 8), 0x090a0b0c);
			CHECK_EQ(get32(buf + 12), 0x0d0e0f10);
			for (i = 0; i < 4 * n; i++)
				CHECK_EQ(buf[16 + i], 0x40 + i);
			for (i = 0; i < e; i++)
				CHECK_EQ(buf[16 + 4 * n + i], 0x80 + i);
			CHECK_EQ(get32(buf + t - 24), 0x55667788);
			CHECK_EQ((u64)get32(buf + t - 20) << 32 |
				 get32(buf + t - 16),
				 ref_mac(&ref_key, &cm2, ctr, 17));
			CHECK_EQ(buf[t - 10], 0xa5);
			CHECK_EQ(buf[t - 9], 0x90 | n);
			CHECK_EQ(buf[t - 8], 0xd7);
			CHECK_EQ(buf[t - 7], 2);
			CHECK_EQ(get16(buf + t - 6), t);
			CHECK_EQ(get32(buf + t - 4),
				 mpip_crc32c(mpip_crc32c(mpip_crc32c(0, buf,
					t - 12), (const u8 *)"\0", 2),
					buf + t - 10, 6));
			CHECK_EQ(ref_fold_sum(buf, t), MPIP_CM_CSUM_SUM);
			CHECK_EQ(buf[t], 0xcc);
		}
	}
}

/* ---- encoder ---------------------------------------------------------- */

UNIT_TEST(cm2_encode_matches_reference)
{
	u8 buf[V2_BUF], ref[V2_BUF];
	struct mpip_cm2 cm2;
	unsigned int n, e, t;
	int iter;
	u64 ctr;

	for (iter = 0; iter < 30; iter++) {
		for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
			for (e = 0; e <= MPIP_CM2_EXT_MAX; e += 4) {
				u8 proto = iter & 1 ? 6 : 17;

				random_cm2(ctx, &cm2, n, e);
				ctr = random_ctr(ctx);
				t = (unsigned int)mpip_cm2_encode(&cm2,
						&ref_key, ctr, proto, buf,
						sizeof(buf));
				CHECK_EQ(ref_encode(&cm2, &ref_key, ctr, proto,
						    ref), t);
				CHECK_EQ_MSG(memcmp(buf, ref, t), 0,
					     "n %u e %u", n, e);
			}
		}
	}
}

UNIT_TEST(cm2_round_trip_every_n_and_e)
{
	struct mpip_cm2 cm2;
	unsigned int n, e;
	int iter;

	for (iter = 0; iter < 10; iter++)
		for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++)
			for (e = 0; e <= MPIP_CM2_EXT_MAX; e += 4) {
				random_cm2(ctx, &cm2, n, e);
				if (!round_trip(ctx, &cm2, random_ctr(ctx),
						iter & 1 ? 6 : 17))
					return;
			}
}

UNIT_TEST(cm2_round_trip_field_limits)
{
	static const u64 ctrs[] = {
		1, 2, 0xffffffffULL, 0x100000000ULL, 0x100000001ULL,
		0x7fffffffffffffffULL, 0xfffffffffffffffeULL,
		0xffffffffffffffffULL,
	};
	struct mpip_cm2 cm2;
	unsigned int k, v;

	for (v = 0; v < 2; v++) {
		for (k = 0; k < ARRAY_SIZE(ctrs); k++) {
			memset(&cm2, v ? 0xff : 0, sizeof(cm2));
			cm2.cm.xflags &= MPIP_CM_X_MASK;
			cm2.sum = 0;	/* where it goes: a TCP trailer */
			cm2.cm.naddrs = v ? MPIP_CM_MAX_ADDRS : 0;
			cm2.ext_len = v ? MPIP_CM2_EXT_MAX : 0;
			round_trip(ctx, &cm2, ctrs[k], v ? 0xff : 0);
		}
	}
}

/* mpip_cm2_encode() refuses and leaves a large buffer untouched. */
static void refused(struct unit_ctx *ctx, const struct mpip_cm2 *cm2,
		    u64 ctr, const char *what)
{
	u8 buf[V2_BUF], zero[V2_BUF];

	memset(buf, 0, sizeof(buf));
	memset(zero, 0, sizeof(zero));
	CHECK_EQ_MSG(mpip_cm2_encode(cm2, &ref_key, ctr, 17, buf,
				     sizeof(buf)), MPIP_CM_E_INVAL, "%s",
		     what);
	CHECK_EQ_MSG(memcmp(buf, zero, sizeof(buf)), 0, "%s", what);
	if (ctr)
		CHECK_EQ_MSG(mpip_cm2_write(cm2, buf, sizeof(buf)),
			     MPIP_CM_E_INVAL, "%s", what);
	CHECK_EQ_MSG(memcmp(buf, zero, sizeof(buf)), 0, "%s", what);
}

UNIT_TEST(cm2_encode_rejects_bad_arguments)
{
	u8 buf[V2_BUF], *p;
	struct mpip_cm2 cm2;
	unsigned int v, len, t;

	random_cm2(ctx, &cm2, 2, 8);
	for (v = MPIP_CM_MAX_ADDRS + 1; v <= 0xff; v++) {
		cm2.cm.naddrs = (u8)v;
		refused(ctx, &cm2, 1, "naddrs");
	}
	cm2.cm.naddrs = 2;
	for (v = MPIP_CM_X_MASK + 1; v <= 0xff; v++) {
		cm2.cm.xflags = (u8)v;
		refused(ctx, &cm2, 1, "xflags");
	}
	cm2.cm.xflags = 0;
	for (v = 0; v <= 0xff; v++) {
		if (v <= MPIP_CM2_EXT_MAX && !(v % 4))
			continue;
		cm2.ext_len = (u8)v;
		refused(ctx, &cm2, 1, "ext_len");
	}
	cm2.ext_len = 8;
	refused(ctx, &cm2, 0, "counter 0");

	/* Too little room, in an exact heap buffer; then just enough. */
	memset(buf, 0, sizeof(buf));
	t = mpip_cm2_len(&cm2);
	for (len = 0; len < t; len++) {
		p = exact_copy(buf, len);
		CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 1, 17, p, len),
			 MPIP_CM_E_INVAL);
		CHECK_EQ(mpip_cm2_write(&cm2, p, len), MPIP_CM_E_INVAL);
		free(p);
	}
	p = exact_copy(buf, t);
	CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 1, 17, p, t), t);
	CHECK_EQ(mpip_cm2_write(&cm2, p, t), t);
	free(p);

	CHECK_EQ(mpip_cm2_encode(NULL, &ref_key, 1, 17, buf, sizeof(buf)),
		 MPIP_CM_E_INVAL);
	CHECK_EQ(mpip_cm2_encode(&cm2, NULL, 1, 17, buf, sizeof(buf)),
		 MPIP_CM_E_INVAL);
	CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 1, 17, NULL, 200),
		 MPIP_CM_E_INVAL);
	CHECK_EQ(mpip_cm2_write(NULL, buf, sizeof(buf)), MPIP_CM_E_INVAL);
	CHECK_EQ(mpip_cm2_write(&cm2, NULL, 200), MPIP_CM_E_INVAL);
}

/* The encoder ignores what only a decoder fills in. */
UNIT_TEST(cm2_encode_ignores_auth_and_version)
{
	u8 a[V2_BUF], b[V2_BUF];
	struct mpip_cm2 cm2;
	int t;

	random_cm2(ctx, &cm2, 3, 12);
	t = mpip_cm2_encode(&cm2, &ref_key, 77, 6, a, sizeof(a));
	unit_fill(ctx, cm2.auth, sizeof(cm2.auth));
	cm2.version = 1;
	CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 77, 6, b, sizeof(b)), t);
	CHECK(!memcmp(a, b, (size_t)t));
	/* mpip_cm2_write() takes the auth block as given, version 2 all the same. */
	CHECK_EQ(mpip_cm2_write(&cm2, b, sizeof(b)), t);
	CHECK(!memcmp(b + t - 24, cm2.auth, 12));
	CHECK_EQ(b[t - 7], 2);
	/* Extension bytes beyond ext_len are not sent, nor covered. */
	memset(cm2.ext + cm2.ext_len, 0x5a, MPIP_CM2_EXT_MAX - cm2.ext_len);
	CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, 77, 6, b, sizeof(b)), t);
	CHECK(!memcmp(a, b, (size_t)t));
}

UNIT_TEST(cm2_csum_sum_property)
{
	u8 tr[V2_BUF], seg[2 * V2_BUF];
	struct mpip_cm2 cm2;
	unsigned int t;
	int iter;

	for (iter = 0; iter < 20000; iter++) {
		t = encode_random(ctx, tr, &cm2, unit_below(ctx, 9),
				  4 * unit_below(ctx, 9));
		if (!CHECK_EQ(ref_fold_sum(tr, t), MPIP_CM_CSUM_SUM))
			break;
		CHECK(get16(tr + t - 12) != 0);
		/* At an odd offset the sum is byte-swapped: 0x0040. */
		seg[0] = 0;
		memcpy(seg + 1, tr, t);
		CHECK_EQ(ref_fold_sum(seg, t + 1), 0x0040);
	}
}

/*
 * Ones'-complement sum of an IPv4 UDP pseudo-header (addresses, protocol
 * 17, length @len) and the @n bytes at @b: 0xffff when a checksum over
 * them verifies.
 */
static u16 udp_csum_sum(u32 saddr, u32 daddr, unsigned int len,
			const u8 *b, size_t n)
{
	u32 sum = ref_fold_sum(b, n);

	sum += (saddr >> 16) + (saddr & 0xffff) + (daddr >> 16) +
	       (daddr & 0xffff) + 17 + len;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

/*
 * A UDP datagram of random length (odd and even) with a valid checksum
 * and a trailer in its surplus area, sealed with mpip_cm2_sum(): the
 * checksum verifies over the UDP length, as a receiver checks it, and
 * over the whole IP payload with the pseudo-header length of the whole
 * payload, as conntrack checks it.  Sealed with the TCP sum instead, the
 * second check fails (the trailer a NAT dropped as INVALID).  The
 * decoder accepts the trailer with its place's sum only.
 */
UNIT_TEST(cm2_udp_sum_keeps_checksum_valid_for_nat)
{
	u8 pkt[8 + 1500 + V2_BUF];
	unsigned int ulen, t, i;
	struct mpip_cm2 cm2, out;
	u32 saddr, daddr;
	u16 c;
	int iter;

	for (iter = 0; iter < 4000; iter++) {
		saddr = unit_rand32(ctx);
		daddr = unit_rand32(ctx);
		ulen = 8 + unit_below(ctx, 1400);
		memset(pkt, 0, 8);
		pkt[4] = (u8)(ulen >> 8);
		pkt[5] = (u8)ulen;
		for (i = 8; i < ulen; i++)
			pkt[i] = (u8)unit_rand32(ctx);
		c = (u16)~udp_csum_sum(saddr, daddr, ulen, pkt, ulen);
		pkt[6] = (u8)(c >> 8);
		pkt[7] = (u8)c;
		if (!CHECK_EQ(udp_csum_sum(saddr, daddr, ulen, pkt, ulen), 0xffff))
			break;

		random_cm2(ctx, &cm2, unit_below(ctx, 9), 4 * unit_below(ctx, 9));
		cm2.cm.flags &= ~MPIP_CM_F_CTRL;	/* a data datagram's */
		t = mpip_cm2_len(&cm2);
		cm2.sum = mpip_cm2_sum(17, ulen, t);
		CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, random_ctr(ctx), 17,
					 pkt + ulen, t), (int)t);
		CHECK_EQ_MSG(udp_csum_sum(saddr, daddr, ulen + t, pkt, ulen + t),
			     0xffff, "ulen %u t %u", ulen, t);
		CHECK_EQ(udp_csum_sum(saddr, daddr, ulen, pkt, ulen), 0xffff);
		CHECK_EQ(decode_exact(pkt + ulen, t, &out), MPIP_CM_E_CHECK);
		CHECK_EQ(mpip_cm2_decode(pkt + ulen, t, cm2.sum, &out), (int)t);
		CHECK_EQ(out.sum, cm2.sum);

		cm2.sum = 0;
		CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, random_ctr(ctx), 17,
					 pkt + ulen, t), (int)t);
		CHECK(udp_csum_sum(saddr, daddr, ulen + t, pkt, ulen + t) != 0xffff);
	}
	CHECK_EQ(mpip_cm2_sum(6, 1, 40), MPIP_CM_CSUM_SUM);
	CHECK_EQ(mpip_cm2_sum(17, 0, 40), 0xffd7);
	CHECK_EQ(mpip_cm2_sum(17, 1, 40), 0xd7ff);
}

/*
 * A UDP control datagram as handshake.c builds it: UDP length 8, the CM
 * (flag CTRL) behind it, the UDP checksum computed over the whole IP
 * payload.  Conntrack's check (whole payload) passes, a receiver's check
 * over the UDP length fails, and the decoder accepts the trailer at its
 * place.  The same trailer without CTRL fails the decoder's sum check
 * (the flag is part of what the sum depends on), as does one with CTRL
 * checked as TCP's.
 */
UNIT_TEST(cm2_udp_ctrl_valid_for_nat_invalid_for_legacy)
{
	u8 pkt[8 + V2_BUF];
	struct mpip_cm2 cm2, out;
	u32 saddr, daddr;
	unsigned int t;
	u16 c;
	int iter;

	for (iter = 0; iter < 4000; iter++) {
		saddr = unit_rand32(ctx);
		daddr = unit_rand32(ctx);
		random_cm2(ctx, &cm2, unit_below(ctx, 9), 4 * unit_below(ctx, 9));
		cm2.cm.flags |= MPIP_CM_F_CTRL;
		t = mpip_cm2_len(&cm2);
		cm2.sum = mpip_cm2_sum(17, 8, t);
		memset(pkt, 0, 8);
		pkt[0] = (u8)unit_rand32(ctx);
		pkt[2] = (u8)unit_rand32(ctx);
		pkt[5] = 8;
		CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, random_ctr(ctx), 17,
					 pkt + 8, t), (int)t);
		c = (u16)~udp_csum_sum(saddr, daddr, 8 + t, pkt, 8 + t);
		if (!c)
			c = 0xffff;
		pkt[6] = (u8)(c >> 8);
		pkt[7] = (u8)c;
		CHECK_EQ_MSG(udp_csum_sum(saddr, daddr, 8 + t, pkt, 8 + t),
			     0xffff, "t %u", t);
		CHECK_EQ(udp_csum_sum(saddr, daddr, 8, pkt, 8),
			 (u16)(0xffff - MPIP_CM2_CTRL_DELTA));
		CHECK_EQ(mpip_cm2_decode(pkt + 8, t, cm2.sum, &out), (int)t);
		CHECK_EQ(out.cm.flags, cm2.cm.flags);
		CHECK_EQ(decode_exact(pkt + 8, t, &out), MPIP_CM_E_CHECK);

		cm2.cm.flags &= ~MPIP_CM_F_CTRL;
		CHECK_EQ(mpip_cm2_encode(&cm2, &ref_key, random_ctr(ctx), 17,
					 pkt + 8, t), (int)t);
		pkt[8 + t - MPIP_CM_FOOTER_LEN + 2] |= MPIP_CM_F_CTRL;
		CHECK(mpip_cm2_decode(pkt + 8, t, cm2.sum, &out) < 0);
	}
	CHECK_EQ(mpip_cm2_target(0xffd7, MPIP_CM_F_CTRL), 0x7fd8);
	CHECK_EQ(mpip_cm2_target(0xffd7, 0), 0xffd7);
	CHECK_EQ(mpip_cm2_target(MPIP_CM_CSUM_SUM, MPIP_CM_F_CTRL),
		 MPIP_CM_CSUM_SUM);
	CHECK_EQ(mpip_cm2_target(0, MPIP_CM_F_CTRL), MPIP_CM_CSUM_SUM);
}

/* ---- peek ------------------------------------------------------------- */

UNIT_TEST(cm2_peek_too_short)
{
	u8 tr[V2_BUF], *p;
	struct mpip_cm2 cm2;
	unsigned int avail, t;

	t = encode_random(ctx, tr, &cm2, 0, 0);
	for (avail = 0; avail < MPIP_CM2_MIN_LEN; avail++) {
		CHECK_EQ_MSG(mpip_cm2_peek(tr + t - 8, avail), MPIP_CM_E_SHORT,
			     "avail %u", avail);
		if (avail >= MPIP_CM_MIN_LEN)	/* a v2 tail: v2's minimum */
			CHECK_EQ_MSG(mpip_cm_peek_any(tr + t - 8, avail),
				     MPIP_CM_E_SHORT, "avail %u", avail);
		/* Must not read the tail: exact buffer of avail bytes. */
		p = exact_copy(tr, avail);
		CHECK_EQ(mpip_cm2_peek(p, avail), MPIP_CM_E_SHORT);
		if (avail < MPIP_CM_MIN_LEN)
			CHECK_EQ(mpip_cm_peek_any(p, avail), MPIP_CM_E_SHORT);
		free(p);
	}
}

UNIT_TEST(cm2_peek_magic_and_version)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2;
	unsigned int t, v;

	t = encode_random(ctx, tr, &cm2, 2, 4);
	for (v = 0; v <= 0xff; v++) {
		tr[t - 8] = (u8)v;
		CHECK_EQ_MSG(peek_exact(tr, t, mpip_cm2_peek),
			     v == MPIP_CM_MAGIC ? (int)t : MPIP_CM_E_MAGIC,
			     "magic %#x", v);
		CHECK_EQ_MSG(peek_exact(tr, t, mpip_cm_peek_any),
			     v == MPIP_CM_MAGIC ? (int)t : MPIP_CM_E_MAGIC,
			     "magic %#x", v);
	}
	tr[t - 8] = MPIP_CM_MAGIC;
	for (v = 0; v <= 0xff; v++) {
		tr[t - 7] = (u8)v;
		CHECK_EQ_MSG(peek_exact(tr, t, mpip_cm2_peek),
			     v == 2 ? (int)t : MPIP_CM_E_VERSION,
			     "version %u", v);
		/* t = 52 is a v1 length too (N = 6) */
		CHECK_EQ_MSG(peek_exact(tr, t, mpip_cm_peek_any),
			     v == 1 || v == 2 ? (int)t : MPIP_CM_E_VERSION,
			     "version %u", v);
	}
	tr[t - 8] = 0;
	tr[t - 7] = 0;
	CHECK_EQ(peek_exact(tr, t, mpip_cm2_peek), MPIP_CM_E_MAGIC);
	CHECK_EQ(peek_exact(tr, t, mpip_cm_peek_any), MPIP_CM_E_MAGIC);
}

UNIT_TEST(cm2_peek_every_length_value)
{
	static const unsigned int avails[] = {
		40, 41, 43, 44, 63, 64, 100, 103, 104, 105, 108, 1500, 65535,
		65536, 1u << 31,
	};
	u8 tail[8] = { MPIP_CM_MAGIC, 2, 0, 0, 1, 2, 3, 4 };
	u8 tail1[8] = { MPIP_CM_MAGIC, 1, 0, 0, 1, 2, 3, 4 };
	unsigned int i, l, avail;
	int want, want1;

	for (i = 0; i < ARRAY_SIZE(avails); i++) {
		avail = avails[i];
		for (l = 0; l <= 0xffff; l++) {
			put16(tail + 2, l);
			put16(tail1 + 2, l);
			want = l >= 40 && l <= 104 && l % 4 == 0 &&
			       l <= avail ? (int)l : MPIP_CM_E_LENGTH;
			want1 = l >= 28 && l <= 60 && l % 4 == 0 &&
				l <= avail ? (int)l : MPIP_CM_E_LENGTH;
			if (!CHECK_EQ_MSG(mpip_cm2_peek(tail, avail), want,
					  "avail %u length %u", avail, l) ||
			    !CHECK_EQ_MSG(mpip_cm_peek_any(tail, avail), want,
					  "avail %u length %u", avail, l) ||
			    !CHECK_EQ_MSG(mpip_cm_peek_any(tail1, avail),
					  want1, "v1 avail %u length %u",
					  avail, l))
				break;
		}
	}
}

/* ---- decode: every rejection class ------------------------------------ */

UNIT_TEST(cm2_decode_too_short)
{
	u8 tr[V2_BUF], rnd[MPIP_CM2_MIN_LEN];
	struct mpip_cm2 cm2, out;
	unsigned int t, len;

	t = encode_random(ctx, tr, &cm2, 0, 0);
	unit_fill(ctx, rnd, sizeof(rnd));
	for (len = 0; len < MPIP_CM2_MIN_LEN; len++) {
		CHECK_EQ_MSG(decode_exact(tr + t - len, len, &out),
			     MPIP_CM_E_SHORT, "suffix len %u", len);
		CHECK_EQ_MSG(decode_exact(tr, len, &out), MPIP_CM_E_SHORT,
			     "prefix len %u", len);
		CHECK_EQ_MSG(decode_exact(rnd, len, &out), MPIP_CM_E_SHORT,
			     "random len %u", len);
		/* the dispatch: below 28 for any tail, below 40 for v2's */
		CHECK_EQ_MSG(decode_any_exact(tr + t - len, len, &out),
			     MPIP_CM_E_SHORT, "any len %u", len);
	}
	CHECK_EQ(mpip_cm2_decode(NULL, 0, 0, &out), MPIP_CM_E_SHORT);
	CHECK_EQ(mpip_cm_decode_any(NULL, 0, 0, &out), MPIP_CM_E_SHORT);
}

/*
 * Every value but @good of the footer byte at @back bytes before the end
 * is rejected with @err, with and without a matching check.
 */
static void check_footer_byte(struct unit_ctx *ctx, unsigned int back,
			      unsigned int good, int err)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, t, v;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		for (v = 0; v <= 0xff; v++) {
			if (v == good)
				continue;
			tr[t - back] = (u8)v;
			CHECK_EQ(decode_exact(tr, t, &out), err);
			ref_fix(tr, t);	/* even with a matching check */
			CHECK_EQ(decode_exact(tr, t, &out), err);
		}
	}
}

UNIT_TEST(cm2_decode_bad_magic)
{
	check_footer_byte(ctx, 8, MPIP_CM_MAGIC, MPIP_CM_E_MAGIC);
}

UNIT_TEST(cm2_decode_bad_version)
{
	check_footer_byte(ctx, 7, MPIP_CM2_VERSION, MPIP_CM_E_VERSION);
}

UNIT_TEST(cm2_decode_bad_length_every_value)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, t, l;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		for (l = 0; l <= 0xffff; l++) {
			if (l == t)
				continue;
			put16(tr + t - 6, l);
			ref_fix(tr, t);	/* only the length is wrong */
			if (!CHECK_EQ_MSG(mpip_cm2_decode(tr, t, 0, &out),
					  MPIP_CM_E_LENGTH, "t %u length %u",
					  t, l))
				break;
		}
		put16(tr + t - 6, t + 4);	/* larger than the bytes */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, t + 2);	/* not a multiple of 4 */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, 36);		/* below the minimum */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, 108);		/* above the maximum */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
	}
}

UNIT_TEST(cm2_decode_length_differs_from_len)
{
	u8 buf[V2_BUF + 8], tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, t, extra;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		/* A valid trailer at the end of a longer buffer. */
		for (extra = 1; extra <= 8; extra++) {
			unit_fill(ctx, buf, extra);
			memcpy(buf + extra, tr, t);
			CHECK_EQ_MSG(decode_exact(buf, t + extra, &out),
				     MPIP_CM_E_LENGTH, "t %u extra %u", t,
				     extra);
		}
		/* Its own length field says 4 bytes less than it has. */
		put16(tr + t - 6, t - 4);
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
	}
}

/*
 * N and E, exhaustively: every length T and every count byte, the rest
 * random and the check made right.  N must fit T - 40 (else ADDRS), the
 * extension left over must be at most 32 bytes (else EXT); any other
 * combination is a valid trailer with E = T - 40 - 4*N.
 */
UNIT_TEST(cm2_decode_every_n_and_e)
{
	u8 tr[V2_BUF], again[V2_BUF];
	struct mpip_cm2 out;
	unsigned int t, v, n, room, valid = 0;
	int want, r;

	for (t = MPIP_CM2_MIN_LEN; t <= MPIP_CM2_MAX_LEN; t += 4) {
		for (v = 0; v <= 0xff; v++) {
			unit_fill(ctx, tr, t);
			tr[t - 9] = (u8)v;
			tr[t - 8] = MPIP_CM_MAGIC;
			tr[t - 7] = 2;
			put16(tr + t - 6, t);
			ref_fix(tr, t);
			n = v & 0x0f;
			room = t - 40;
			if (n > 8 || 4 * n > room)
				want = MPIP_CM_E_ADDRS;
			else if (room - 4 * n > 32)
				want = MPIP_CM_E_EXT;
			else
				want = (int)t;
			r = decode_exact(tr, t, &out);
			if (!CHECK_EQ_MSG(r, want, "t %u count byte %#x", t, v))
				return;
			if (r < 0)
				continue;
			valid++;
			CHECK_EQ(out.cm.naddrs, n);
			CHECK_EQ(out.cm.xflags, v >> 4);
			CHECK_EQ(out.ext_len, room - 4 * n);
			CHECK(!memcmp(out.cm.addrs, tr + 16, 4 * n));
			CHECK(!memcmp(out.ext, tr + 16 + 4 * n, out.ext_len));
			CHECK(!memcmp(out.auth, tr + t - 24, 12));
			CHECK_EQ(mpip_cm2_write(&out, again, sizeof(again)),
				 t);
			CHECK(!memcmp(again, tr, t));
		}
	}
	/* (N, E) pairs: 9 N times 9 E, each with 16 xflags values */
	CHECK_EQ(valid, 81 * 16);
}

/*
 * The expected result of flipping bit @bit in byte @i of a @t-byte
 * trailer with @n addresses: the count may become another valid count,
 * with another E, and then only the check catches it.
 */
static int flip_expect(unsigned int i, unsigned int bit, unsigned int t,
		       unsigned int n)
{
	unsigned int n2 = n ^ (1u << bit);

	if (i == t - 9 && bit < 4) {
		if (n2 > 8 || 4 * n2 > t - 40)
			return MPIP_CM_E_ADDRS;
		if (t - 40 - 4 * n2 > 32)
			return MPIP_CM_E_EXT;
		return MPIP_CM_E_CHECK;
	}
	if (i == t - 8)
		return MPIP_CM_E_MAGIC;
	if (i == t - 7)
		return MPIP_CM_E_VERSION;
	if (i == t - 6 || i == t - 5)
		return MPIP_CM_E_LENGTH;
	return MPIP_CM_E_CHECK;
}

UNIT_TEST(cm2_decode_every_single_bit_flip)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, e, t, i, bit;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		for (e = 0; e <= MPIP_CM2_EXT_MAX; e += 4) {
			t = encode_random(ctx, tr, &cm2, n, e);
			for (i = 0; i < t; i++) {
				for (bit = 0; bit < 8; bit++) {
					tr[i] ^= (u8)(1 << bit);
					CHECK_EQ_MSG(decode_exact(tr, t, &out),
						     flip_expect(i, bit, t, n),
						     "t %u byte %u bit %u",
						     t, i, bit);
					tr[i] ^= (u8)(1 << bit);
				}
			}
			CHECK_EQ(decode_exact(tr, t, &out), t);
		}
	}
}

UNIT_TEST(cm2_decode_bad_check_and_adjust)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, t;
	u32 a;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		/* CRC off by one, sum made right again. */
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		put32(tr + t - 4, get32(tr + t - 4) + 1);
		ref_fix_sum(tr, t);
		CHECK_EQ(ref_fold_sum(tr, t), MPIP_CM_CSUM_SUM);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);

		/* The MAC changed, CRC recomputed, adjustment stale. */
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		a = get16(tr + t - 12);
		tr[t - 15] ^= 0x10;
		ref_fix(tr, t);
		put16(tr + t - 12, a);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);

		/* The adjustment alone wrong (the CRC does not cover it). */
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		a = get16(tr + t - 12);
		put16(tr + t - 12, a + 1);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);
		put16(tr + t - 12, 0);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);
	}
}

/* 0x0000 is the second zero of ones' complement: never sent, refused. */
UNIT_TEST(cm2_decode_rejects_noncanonical_zero_adjust)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int t = 0;
	u32 lo;
	int found = 0;

	random_cm2(ctx, &cm2, 1, 4);
	for (lo = 0; lo < (1u << 22) && !found; lo++) {
		put32(cm2.auth, lo);
		t = (unsigned int)mpip_cm2_write(&cm2, tr, sizeof(tr));
		found = get16(tr + t - 12) == 0xffff;
	}
	if (!CHECK(found))
		return;
	CHECK_EQ(decode_exact(tr, t, &out), t);
	put16(tr + t - 12, 0);
	CHECK_EQ(ref_fold_sum(tr, t), MPIP_CM_CSUM_SUM);	/* sum still ok */
	CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);
}

/* A truncated address list or extension is caught by N, E or the check. */
UNIT_TEST(cm2_decode_truncated_parts)
{
	u8 tr[V2_BUF], cut[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, e, t;
	int r;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		for (e = 0; e <= MPIP_CM2_EXT_MAX; e += 4) {
			t = encode_random(ctx, tr, &cm2, n, e);
			if (t == MPIP_CM2_MIN_LEN)
				continue;
			/* 4 bytes cut before the auth block, length fixed */
			memcpy(cut, tr, t - 28);
			memcpy(cut + t - 28, tr + t - 24, 24);
			put16(cut + t - 4 - 6, t - 4);
			ref_fix(cut, t - 4);
			r = decode_exact(cut, t - 4, &out);
			/* N still counts what was there: a shorter E */
			if (e)
				CHECK_EQ_MSG(r, (int)t - 4, "n %u e %u", n, e);
			else
				CHECK_EQ_MSG(r, MPIP_CM_E_ADDRS, "n %u", n);
			/* but the MAC does not verify */
			if (r > 0) {
				struct mpip_replay win;
				struct mpip_auth_ctx actx;
				u64 c;

				mpip_replay_init(&win);
				mpip_cm2_auth_ctx(&out, 17, &actx);
				CHECK(mpip_auth_check(&ref_key, &win, &out.cm,
						      &actx, out.auth, 12,
						      &c) != 0);
			}
		}
	}
}

UNIT_TEST(cm2_decode_every_part_of_a_trailer)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int n, t, k;
	int r;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		for (k = 0; k <= t; k++) {
			r = decode_exact(tr + t - k, k, &out);
			CHECK_EQ_MSG(r, k == t ? (int)t :
				     k < 40 ? MPIP_CM_E_SHORT :
				     MPIP_CM_E_LENGTH, "n %u suffix %u", n, k);
			r = decode_exact(tr, k, &out);
			CHECK_EQ_MSG(r < 0, k != t, "n %u prefix %u", n, k);
		}
	}
}

UNIT_TEST(cm2_decode_clears_unused)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int t;

	random_cm2(ctx, &cm2, 2, 8);
	t = (unsigned int)mpip_cm2_encode(&cm2, &other_key, 5, 6, tr,
					  sizeof(tr));
	memset(&out, 0xff, sizeof(out));
	CHECK_EQ(decode_exact(tr, t, &out), t);
	CHECK(cm2_same(&cm2, &out));	/* zeros beyond N and E */
}

/* ---- versions --------------------------------------------------------- */

/* The module's v1 entry points never take a v2 trailer, and vice versa. */
UNIT_TEST(cm2_versions_do_not_mix)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	struct mpip_cm cm, v1out;
	unsigned int n, e, t;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		for (e = 0; e <= MPIP_CM2_EXT_MAX; e += 4) {
			t = encode_random(ctx, tr, &cm2, n, e);
			CHECK_EQ(peek_exact(tr, t, mpip_cm_peek),
				 MPIP_CM_E_VERSION);
			CHECK_EQ(mpip_cm_decode(tr, t, &v1out),
				 MPIP_CM_E_VERSION);
		}
		memset(&cm, 0, sizeof(cm));
		cm.naddrs = (u8)n;
		cm.node_id = unit_rand32(ctx);
		t = (unsigned int)mpip_cm_encode(&cm, tr, sizeof(tr));
		CHECK_EQ(peek_exact(tr, t, mpip_cm2_peek),
			 t < 40 ? MPIP_CM_E_SHORT : MPIP_CM_E_VERSION);
		CHECK_EQ(decode_exact(tr, t, &out),
			 t < 40 ? MPIP_CM_E_SHORT : MPIP_CM_E_VERSION);
	}
}

UNIT_TEST(cm2_decode_any_takes_both)
{
	u8 tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	struct mpip_cm cm;
	unsigned int n, t, v;
	static const u8 zero[MPIP_CM2_AUTH_LEN];

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		/* v1: the same fields as mpip_cm_decode(), nothing else */
		memset(&cm, 0, sizeof(cm));
		cm.node_id = unit_rand32(ctx);
		cm.session_id = (u16)unit_rand32(ctx);
		cm.flags = (u8)unit_rand32(ctx);
		cm.xflags = MPIP_CM_X_SOLE;
		cm.naddrs = (u8)n;
		unit_fill(ctx, cm.addrs, 4 * n);
		t = (unsigned int)mpip_cm_encode(&cm, tr, sizeof(tr));
		memset(&out, 0xff, sizeof(out));
		CHECK_EQ(peek_exact(tr, t, mpip_cm_peek_any), t);
		CHECK_EQ(decode_any_exact(tr, t, &out), t);
		CHECK_EQ(out.version, 1);
		CHECK(!memcmp(&out.cm, &cm, sizeof(cm)));
		CHECK_EQ(out.ext_len, 0);
		CHECK(!memcmp(out.auth, zero, sizeof(zero)));
		/* v1's own codes through the dispatch */
		tr[t - 9] ^= 0x01;
		ref_fix(tr, t);
		CHECK_EQ(decode_any_exact(tr, t, &out), MPIP_CM_E_ADDRS);
		tr[t - 9] ^= 0x01;
		ref_fix(tr, t);
		CHECK_EQ(decode_any_exact(tr, t, &out), t);
		tr[3] ^= 0x01;
		CHECK_EQ(decode_any_exact(tr, t, &out), MPIP_CM_E_CHECK);
		/* other versions */
		for (v = 0; v <= 0xff; v++) {
			if (v == 1 || v == 2)
				continue;
			tr[t - 7] = (u8)v;
			ref_fix(tr, t);
			CHECK_EQ(decode_any_exact(tr, t, &out),
				 MPIP_CM_E_VERSION);
		}
		tr[t - 8] = 0;
		CHECK_EQ(decode_any_exact(tr, t, &out), MPIP_CM_E_MAGIC);
		/* v2 */
		t = encode_random(ctx, tr, &cm2, n, 4 * unit_below(ctx, 9));
		memset(&out, 0xff, sizeof(out));
		CHECK_EQ(decode_any_exact(tr, t, &out), t);
		CHECK_EQ(out.version, 2);
		CHECK(cm2_same(&cm2, &out));
		tr[t - 9] = 9;
		ref_fix(tr, t);
		CHECK_EQ(decode_any_exact(tr, t, &out), MPIP_CM_E_ADDRS);
	}
}

/* Trailers of both versions at the end of payloads, found from the end. */
UNIT_TEST(cm2_find_trailer_in_payload)
{
	u8 pkt[1500 + V2_BUF], tr[V2_BUF];
	struct mpip_cm2 cm2, out;
	struct mpip_cm cm;
	unsigned int plen, t, avail;
	int iter, r;

	for (iter = 0; iter < 5000; iter++) {
		plen = unit_below(ctx, 1501);
		unit_fill(ctx, pkt, plen);
		if (iter & 1) {
			t = encode_random(ctx, tr, &cm2, unit_below(ctx, 9),
					  4 * unit_below(ctx, 9));
		} else {
			random_cm2(ctx, &cm2, unit_below(ctx, 9), 0);
			cm = cm2.cm;
			t = (unsigned int)mpip_cm_encode(&cm, tr, sizeof(tr));
		}
		memcpy(pkt + plen, tr, t);
		avail = plen + t;
		r = peek_exact(pkt, avail, mpip_cm_peek_any);
		if (!CHECK_EQ(r, t))
			break;
		CHECK_EQ(decode_any_exact(pkt + avail - r, (unsigned int)r,
					  &out), t);
		CHECK_EQ(out.version, iter & 1 ? 2 : 1);
		CHECK(cm2_same(&cm2, &out));
	}
}

/* ---- fuzzing ---------------------------------------------------------- */

/*
 * An accepted input must be exactly what the encoder writes for what was
 * decoded, and bytes other than a genuine trailer's (@orig, @olen) never
 * carry a MAC that verifies.
 */
static void check_accepted(struct unit_ctx *ctx, const u8 *buf,
			   unsigned int len, int r, const struct mpip_cm2 *cm2,
			   const u8 *orig, unsigned int olen)
{
	u8 again[V2_BUF];
	struct mpip_replay win;
	struct mpip_auth_ctx actx;
	u64 c;

	if (r < 0)
		return;
	CHECK_EQ(r, len);
	if (cm2->version == 1) {
		CHECK_EQ(mpip_cm_encode(&cm2->cm, again, sizeof(again)), len);
		CHECK(!memcmp(again, buf, len));
		return;
	}
	CHECK_EQ(cm2->version, 2);
	CHECK_EQ(mpip_cm2_write(cm2, again, sizeof(again)), len);
	CHECK(!memcmp(again, buf, len));
	CHECK_EQ(peek_exact(buf, len, mpip_cm2_peek), len);
	if (len == olen && !memcmp(buf, orig, len))
		return;
	mpip_replay_init(&win);
	mpip_cm2_auth_ctx(cm2, 17, &actx);
	CHECK(mpip_auth_check(&ref_key, &win, &cm2->cm, &actx, cm2->auth,
			      sizeof(cm2->auth), &c) != 0);
}

UNIT_TEST(cm2_fuzz_random_bytes)
{
	u8 buf[128];
	struct mpip_cm2 out;
	unsigned int len;
	int iter, r, accepted = 0;

	for (iter = 0; iter < FUZZ_ITERS; iter++) {
		len = unit_below(ctx, sizeof(buf) + 1);
		unit_fill(ctx, buf, len);
		/* Most of the time, a plausible tail to get further. */
		if (len >= 8 && (iter & 3)) {
			buf[len - 8] = MPIP_CM_MAGIC;
			buf[len - 7] = iter & 16 ? 1 : 2;
			if (iter & 2)
				put16(buf + len - 6, len);
			if ((iter & 4) && len >= 12)
				buf[len - 9] &= 0xf7;
			if ((iter & 8) && len >= 28)
				ref_fix(buf, len);
		}
		r = decode_any_exact(buf, len, &out);
		if (r >= 0)
			accepted++;
		check_accepted(ctx, buf, len, r, &out, NULL, 0);
		if (len >= 8) {
			(void)peek_exact(buf, len, mpip_cm_peek_any);
			(void)peek_exact(buf, len, mpip_cm2_peek);
		}
		if (r >= 0 && out.version == 2)
			CHECK_EQ(decode_exact(buf, len, &out), len);
		else
			CHECK(decode_exact(buf, len, &out) < 0);
	}
	unit_diag("cm2_fuzz_random_bytes: %d of %d accepted", accepted,
		  FUZZ_ITERS);
	CHECK(accepted > 100);
}

static void mutate(struct unit_ctx *ctx, u8 *buf, unsigned int *len)
{
	unsigned int i, l = *len;

	switch (unit_below(ctx, 8)) {
	case 0:	/* flip a bit */
		if (l)
			buf[unit_below(ctx, l)] ^= (u8)(1 << unit_below(ctx, 8));
		break;
	case 1:	/* set a byte */
		if (l)
			buf[unit_below(ctx, l)] = (u8)unit_rand32(ctx);
		break;
	case 2:	/* cut bytes off the front */
		i = unit_below(ctx, l + 1);
		memmove(buf, buf + i, l - i);
		*len = l - i;
		break;
	case 3:	/* cut bytes off the end */
		*len = unit_below(ctx, l + 1);
		break;
	case 4:	/* prepend random bytes */
		i = unit_below(ctx, 9);
		if (l + i <= V2_BUF) {
			memmove(buf + i, buf, l);
			unit_fill(ctx, buf, i);
			*len = l + i;
		}
		break;
	case 5:	/* rewrite N */
		if (l >= 9)
			buf[l - 9] = (u8)unit_below(ctx, 12);
		break;
	case 6:	/* rewrite the length field */
		if (l >= 6)
			put16(buf + l - 6, 36 + 4 * unit_below(ctx, 20) +
			      unit_below(ctx, 2));
		break;
	default:	/* the version */
		if (l >= 7)
			buf[l - 7] = (u8)unit_below(ctx, 4);
		break;
	}
}

UNIT_TEST(cm2_fuzz_mutated_trailers)
{
	u8 buf[V2_BUF], orig[V2_BUF];
	struct mpip_cm2 cm2, out;
	unsigned int len, olen, k, nmut;
	int iter, r, accepted = 0, fixed = 0;

	for (iter = 0; iter < FUZZ_ITERS; iter++) {
		len = encode_random(ctx, buf, &cm2, unit_below(ctx, 9),
				    4 * unit_below(ctx, 9));
		memcpy(orig, buf, len);
		olen = len;
		nmut = 1 + unit_below(ctx, 4);
		for (k = 0; k < nmut; k++)
			mutate(ctx, buf, &len);
		if (unit_below(ctx, 2) && len >= 28) {
			ref_fix(buf, len);
			fixed++;
		}
		r = decode_any_exact(buf, len, &out);
		if (r >= 0)
			accepted++;
		check_accepted(ctx, buf, len, r, &out, orig, olen);
		if (len >= 8)
			(void)peek_exact(buf, len, mpip_cm_peek_any);
	}
	unit_diag("cm2_fuzz_mutated_trailers: %d of %d accepted (%d fixed up)",
		  accepted, FUZZ_ITERS, fixed);
	CHECK(accepted > 1000);
}
