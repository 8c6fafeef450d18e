// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/auth.c: SipHash-2-4 against the
 * reference vectors, key and token derivation, the CM MAC (fixed vectors,
 * every covered bit tampered, reflection), and the replay window with the
 * counter's high half inferred from it (duplicates, the window's edge, big
 * jumps, no wraparound, a model run with random arrivals).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "ktap.h"

#define W	MPIP_REPLAY_WINDOW

/* The key of the SipHash paper's test vectors: bytes 00 01 .. 0f. */
static const struct mpip_auth_key ref_key = {
	0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL,
};

/*
 * SipHash-2-4 of the messages (empty), 00, 00 01, ..., 00 .. 3e under
 * ref_key: vectors_sip64 of the reference implementation (vectors.h),
 * each output as its 8 little-endian bytes.
 */
static const u8 sip_ref[64][8] = {
	{ 0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72 },
	{ 0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74 },
	{ 0x5a, 0x4f, 0xa9, 0xd9, 0x09, 0x80, 0x6c, 0x0d },
	{ 0x2d, 0x7e, 0xfb, 0xd7, 0x96, 0x66, 0x67, 0x85 },
	{ 0xb7, 0x87, 0x71, 0x27, 0xe0, 0x94, 0x27, 0xcf },
	{ 0x8d, 0xa6, 0x99, 0xcd, 0x64, 0x55, 0x76, 0x18 },
	{ 0xce, 0xe3, 0xfe, 0x58, 0x6e, 0x46, 0xc9, 0xcb },
	{ 0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab },
	{ 0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93 },
	{ 0xb0, 0xe4, 0xa9, 0x0b, 0xdf, 0x82, 0x00, 0x9e },
	{ 0xf3, 0xb9, 0xdd, 0x94, 0xc5, 0xbb, 0x5d, 0x7a },
	{ 0xa7, 0xad, 0x6b, 0x22, 0x46, 0x2f, 0xb3, 0xf4 },
	{ 0xfb, 0xe5, 0x0e, 0x86, 0xbc, 0x8f, 0x1e, 0x75 },
	{ 0x90, 0x3d, 0x84, 0xc0, 0x27, 0x56, 0xea, 0x14 },
	{ 0xee, 0xf2, 0x7a, 0x8e, 0x90, 0xca, 0x23, 0xf7 },
	{ 0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1 },
	{ 0xdb, 0x9b, 0xc2, 0x57, 0x7f, 0xcc, 0x2a, 0x3f },
	{ 0x94, 0x47, 0xbe, 0x2c, 0xf5, 0xe9, 0x9a, 0x69 },
	{ 0x9c, 0xd3, 0x8d, 0x96, 0xf0, 0xb3, 0xc1, 0x4b },
	{ 0xbd, 0x61, 0x79, 0xa7, 0x1d, 0xc9, 0x6d, 0xbb },
	{ 0x98, 0xee, 0xa2, 0x1a, 0xf2, 0x5c, 0xd6, 0xbe },
	{ 0xc7, 0x67, 0x3b, 0x2e, 0xb0, 0xcb, 0xf2, 0xd0 },
	{ 0x88, 0x3e, 0xa3, 0xe3, 0x95, 0x67, 0x53, 0x93 },
	{ 0xc8, 0xce, 0x5c, 0xcd, 0x8c, 0x03, 0x0c, 0xa8 },
	{ 0x94, 0xaf, 0x49, 0xf6, 0xc6, 0x50, 0xad, 0xb8 },
	{ 0xea, 0xb8, 0x85, 0x8a, 0xde, 0x92, 0xe1, 0xbc },
	{ 0xf3, 0x15, 0xbb, 0x5b, 0xb8, 0x35, 0xd8, 0x17 },
	{ 0xad, 0xcf, 0x6b, 0x07, 0x63, 0x61, 0x2e, 0x2f },
	{ 0xa5, 0xc9, 0x1d, 0xa7, 0xac, 0xaa, 0x4d, 0xde },
	{ 0x71, 0x65, 0x95, 0x87, 0x66, 0x50, 0xa2, 0xa6 },
	{ 0x28, 0xef, 0x49, 0x5c, 0x53, 0xa3, 0x87, 0xad },
	{ 0x42, 0xc3, 0x41, 0xd8, 0xfa, 0x92, 0xd8, 0x32 },
	{ 0xce, 0x7c, 0xf2, 0x72, 0x2f, 0x51, 0x27, 0x71 },
	{ 0xe3, 0x78, 0x59, 0xf9, 0x46, 0x23, 0xf3, 0xa7 },
	{ 0x38, 0x12, 0x05, 0xbb, 0x1a, 0xb0, 0xe0, 0x12 },
	{ 0xae, 0x97, 0xa1, 0x0f, 0xd4, 0x34, 0xe0, 0x15 },
	{ 0xb4, 0xa3, 0x15, 0x08, 0xbe, 0xff, 0x4d, 0x31 },
	{ 0x81, 0x39, 0x62, 0x29, 0xf0, 0x90, 0x79, 0x02 },
	{ 0x4d, 0x0c, 0xf4, 0x9e, 0xe5, 0xd4, 0xdc, 0xca },
	{ 0x5c, 0x73, 0x33, 0x6a, 0x76, 0xd8, 0xbf, 0x9a },
	{ 0xd0, 0xa7, 0x04, 0x53, 0x6b, 0xa9, 0x3e, 0x0e },
	{ 0x92, 0x59, 0x58, 0xfc, 0xd6, 0x42, 0x0c, 0xad },
	{ 0xa9, 0x15, 0xc2, 0x9b, 0xc8, 0x06, 0x73, 0x18 },
	{ 0x95, 0x2b, 0x79, 0xf3, 0xbc, 0x0a, 0xa6, 0xd4 },
	{ 0xf2, 0x1d, 0xf2, 0xe4, 0x1d, 0x45, 0x35, 0xf9 },
	{ 0x87, 0x57, 0x75, 0x19, 0x04, 0x8f, 0x53, 0xa9 },
	{ 0x10, 0xa5, 0x6c, 0xf5, 0xdf, 0xcd, 0x9a, 0xdb },
	{ 0xeb, 0x75, 0x09, 0x5c, 0xcd, 0x98, 0x6c, 0xd0 },
	{ 0x51, 0xa9, 0xcb, 0x9e, 0xcb, 0xa3, 0x12, 0xe6 },
	{ 0x96, 0xaf, 0xad, 0xfc, 0x2c, 0xe6, 0x66, 0xc7 },
	{ 0x72, 0xfe, 0x52, 0x97, 0x5a, 0x43, 0x64, 0xee },
	{ 0x5a, 0x16, 0x45, 0xb2, 0x76, 0xd5, 0x92, 0xa1 },
	{ 0xb2, 0x74, 0xcb, 0x8e, 0xbf, 0x87, 0x87, 0x0a },
	{ 0x6f, 0x9b, 0xb4, 0x20, 0x3d, 0xe7, 0xb3, 0x81 },
	{ 0xea, 0xec, 0xb2, 0xa3, 0x0b, 0x22, 0xa8, 0x7f },
	{ 0x99, 0x24, 0xa4, 0x3c, 0xc1, 0x31, 0x57, 0x24 },
	{ 0xbd, 0x83, 0x8d, 0x3a, 0xaf, 0xbf, 0x8d, 0xb7 },
	{ 0x0b, 0x1a, 0x2a, 0x32, 0x65, 0xd5, 0x1a, 0xea },
	{ 0x13, 0x50, 0x79, 0xa3, 0x23, 0x1c, 0xe6, 0x60 },
	{ 0x93, 0x2b, 0x28, 0x46, 0xe4, 0xd7, 0x06, 0x66 },
	{ 0xe1, 0x91, 0x5f, 0x5c, 0xb1, 0xec, 0xa4, 0x6c },
	{ 0xf3, 0x25, 0x96, 0x5c, 0xa1, 0x6d, 0x62, 0x9f },
	{ 0x57, 0x5f, 0xf2, 0x8e, 0x60, 0x38, 0x1b, 0xe5 },
	{ 0x72, 0x45, 0x06, 0xeb, 0x4c, 0x32, 0x8a, 0x95 },
};

static void le64(u64 v, u8 *out)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		out[i] = (u8)(v >> (8 * i));
}

UNIT_TEST(auth_siphash_reference_vectors)
{
	u8 msg[64], buf[64 + 8], key[16], out[8];
	unsigned int i, off;
	u64 k0 = 0, k1 = 0;

	/* the key as the paper writes it, bytes read little-endian */
	for (i = 0; i < 16; i++)
		key[i] = (u8)i;
	for (i = 0; i < 8; i++) {
		k0 |= (u64)key[i] << (8 * i);
		k1 |= (u64)key[8 + i] << (8 * i);
	}
	CHECK_EQ(k0, ref_key.k0);
	CHECK_EQ(k1, ref_key.k1);

	for (i = 0; i < 64; i++)
		msg[i] = (u8)i;
	for (i = 0; i < 64; i++) {
		le64(mpip_siphash(msg, i, k0, k1), out);
		CHECK_EQ_MSG(memcmp(out, sip_ref[i], 8), 0, "length %u", i);
		/* the same at every alignment */
		for (off = 1; off < 8; off++) {
			memcpy(buf + off, msg, i);
			le64(mpip_siphash(buf + off, i, k0, k1), out);
			CHECK_EQ_MSG(memcmp(out, sip_ref[i], 8), 0,
				     "length %u offset %u", i, off);
		}
	}
}

UNIT_TEST(auth_token_vectors)
{
	CHECK_EQ(mpip_auth_token(0x0123456789abcdefULL), 0x23ddaae7);
	CHECK_EQ(mpip_auth_token(0xfedcba9876543210ULL), 0x3e2d80d3);
	CHECK_EQ(mpip_auth_token(0), 0);
}

UNIT_TEST(auth_derive_vectors)
{
	struct mpip_auth_peer a;

	if (!CHECK_EQ(mpip_auth_derive(&a, 0x0123456789abcdefULL,
				       0xfedcba9876543210ULL), 0))
		return;
	CHECK_EQ(a.tx.k0, 0x23c0de22acfd24e4ULL);
	CHECK_EQ(a.tx.k1, 0x78867f4563b83683ULL);
	CHECK_EQ(a.rx.k0, 0x561227ca27249e72ULL);
	CHECK_EQ(a.rx.k1, 0x62404d0dc14fe802ULL);
	CHECK_EQ(a.rx_token, 0x23ddaae7);
	CHECK_EQ(a.tx_token, 0x3e2d80d3);
}

UNIT_TEST(auth_derive_both_ends_agree)
{
	struct mpip_auth_peer a, b;
	unsigned int i;

	for (i = 0; i < 500; i++) {
		u64 ka = unit_rand64(ctx), kb = unit_rand64(ctx);

		if (!ka || !kb || ka == kb)
			continue;
		if (!CHECK_EQ(mpip_auth_derive(&a, ka, kb), 0) ||
		    !CHECK_EQ(mpip_auth_derive(&b, kb, ka), 0))
			return;
		CHECK(!memcmp(&a.tx, &b.rx, sizeof(a.tx)));
		CHECK(!memcmp(&a.rx, &b.tx, sizeof(a.rx)));
		CHECK(memcmp(&a.tx, &a.rx, sizeof(a.tx)));
		CHECK_EQ(a.tx_token, b.rx_token);
		CHECK_EQ(a.rx_token, b.tx_token);
		CHECK_EQ(a.rx_token, mpip_auth_token(ka));
		CHECK_EQ(b.rx_token, mpip_auth_token(kb));
	}
}

UNIT_TEST(auth_derive_refuses_bad_keys)
{
	static const struct mpip_auth_peer zero;
	struct mpip_auth_peer a;

	memset(&a, 0xa5, sizeof(a));
	CHECK_EQ(mpip_auth_derive(&a, 0, 5), MPIP_AUTH_E_KEY);
	CHECK(!memcmp(&a, &zero, sizeof(a)));
	memset(&a, 0xa5, sizeof(a));
	CHECK_EQ(mpip_auth_derive(&a, 5, 0), MPIP_AUTH_E_KEY);
	CHECK(!memcmp(&a, &zero, sizeof(a)));
	/* a handshake reflected back to its sender carries its own key */
	memset(&a, 0xa5, sizeof(a));
	CHECK_EQ(mpip_auth_derive(&a, 0x1234, 0x1234), MPIP_AUTH_E_KEY);
	CHECK(!memcmp(&a, &zero, sizeof(a)));
}

/* A CM with every field used: 7 addresses, an extension. */
struct tcm {
	struct mpip_cm cm;
	u8 ext[MPIP_AUTH_EXT_MAX];
	struct mpip_auth_ctx ctx;
};

static void tcm_init(struct tcm *t, struct unit_ctx *ctx)
{
	memset(t, 0, sizeof(*t));
	t->cm.node_id = unit_rand32(ctx);
	t->cm.session_id = (u16)unit_rand32(ctx);
	t->cm.path_id = 3;
	t->cm.fb_path_id = 9;
	t->cm.timestamp_us = unit_rand32(ctx);
	t->cm.path_delay_us = unit_rand32(ctx);
	t->cm.flags = MPIP_CM_F_IP_CHANGE | MPIP_CM_F_CTRL;
	t->cm.xflags = MPIP_CM_X_SOLE;
	t->cm.naddrs = 7;
	unit_fill(ctx, t->cm.addrs, sizeof(t->cm.addrs[0]) * 7);
	unit_fill(ctx, t->ext, sizeof(t->ext));
	t->ctx.proto = 17;
	t->ctx.ext_len = 24;
	t->ctx.ext = t->ext;
}

static void tcm_copy(struct tcm *dst, const struct tcm *src)
{
	*dst = *src;
	dst->ctx.ext = dst->ext;
}

/* A fixed CM of the vectors: like auth_vectors.c's third. */
static void vec_cm(struct mpip_cm *cm)
{
	static const u8 a0[4] = { 10, 2, 0, 1 }, a1[4] = { 10, 2, 1, 31 };

	memset(cm, 0, sizeof(*cm));
	cm->node_id = 0x01020304;
	cm->session_id = 0x0506;
	cm->path_id = 7;
	cm->fb_path_id = 8;
	cm->timestamp_us = 0x090a0b0c;
	cm->path_delay_us = 0x0d0e0f10;
	cm->flags = MPIP_CM_F_IP_CHANGE | MPIP_CM_F_CTRL;
	cm->naddrs = 2;
	memcpy(&cm->addrs[0], a0, 4);
	memcpy(&cm->addrs[1], a1, 4);
}

UNIT_TEST(auth_mac_input_layout)
{
	static const u8 want[] = {
		0xd7, 0x02, 0x01, 0x11,	/* magic, version, domain, UDP */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* counter */
		0x01, 0x02, 0x03, 0x04,	/* token */
		0x05, 0x06, 0x07, 0x08,	/* session, path, feedback path */
		0x09, 0x0a, 0x0b, 0x0c,	/* timestamp */
		0x0d, 0x0e, 0x0f, 0x10,	/* path delay */
		0x0c, 0x02, 0x00, 0x00,	/* flags, xflags|N, E, 0 */
		0x0a, 0x02, 0x00, 0x01,	/* addresses */
		0x0a, 0x02, 0x01, 0x1f,
	};
	const struct mpip_auth_ctx actx = { 17, 0, NULL };
	u8 in[MPIP_AUTH_INPUT_MAX];
	struct mpip_cm cm;
	int n;

	vec_cm(&cm);
	n = mpip_auth_input(&cm, 0x100000000ULL, &actx, in);
	if (!CHECK_EQ(n, sizeof(want)))
		return;
	CHECK(!memcmp(in, want, sizeof(want)));
}

UNIT_TEST(auth_mac_vectors)
{
	const struct mpip_auth_ctx udp = { 17, 0, NULL }, tcp = { 6, 0, NULL };
	u8 ext[8], blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_auth_ctx hb = { 6, 8, ext };
	struct mpip_auth_peer a;
	struct mpip_cm cm;
	unsigned int i;
	u64 mac = 0;

	/* the all-zero CM, counter 1 */
	memset(&cm, 0, sizeof(cm));
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &udp, &mac), 0);
	CHECK_EQ(mac, 0x048f1bfc8386cb86ULL);

	/* a data CM with ORIG */
	cm.node_id = 0x89abcdef;
	cm.session_id = 0x1235;
	cm.path_id = 3;
	cm.fb_path_id = 2;
	cm.timestamp_us = 0x80000000;
	cm.path_delay_us = 0x7fffffff;
	cm.flags = MPIP_CM_F_ORIG;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &tcp, &mac), 0);
	CHECK_EQ(mac, 0x04deb66f7f0b4e55ULL);

	/* an address change, counter 2^32: the block carries its low half */
	vec_cm(&cm);
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 0x100000000ULL, &udp, &mac), 0);
	CHECK_EQ(mac, 0x3835481aeefbd44dULL);
	CHECK_EQ(mpip_auth_seal(&ref_key, &cm, 0x100000000ULL, &udp, blk), 0);
	CHECK(!memcmp(blk, "\x00\x00\x00\x00\x38\x35\x48\x1a\xee\xfb\xd4\x4d",
		      sizeof(blk)));

	/* a heartbeat with an extension */
	memset(&cm, 0, sizeof(cm));
	cm.node_id = 0xcafef00d;
	cm.session_id = 42;
	cm.path_id = 1;
	cm.fb_path_id = 1;
	cm.timestamp_us = 1000000;
	cm.path_delay_us = 250;
	cm.flags = MPIP_CM_F_HB | MPIP_CM_F_CTRL;
	cm.xflags = MPIP_CM_X_SOLE;
	cm.naddrs = 1;
	memcpy(&cm.addrs[0], "\x0a\x04\x00\x01", 4);
	for (i = 0; i < sizeof(ext); i++)
		ext[i] = (u8)(0xe0 + i);
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 12345, &hb, &mac), 0);
	CHECK_EQ(mac, 0xd43e3a2025122edbULL);

	/* the same under a derived key */
	if (!CHECK_EQ(mpip_auth_derive(&a, 0x0123456789abcdefULL,
				       0xfedcba9876543210ULL), 0))
		return;
	CHECK_EQ(mpip_auth_mac(&a.tx, &cm, 12345, &hb, &mac), 0);
	CHECK_EQ(mac, 0xc45206425feda127ULL);
}

UNIT_TEST(auth_mac_invalid_args)
{
	u8 ext[MPIP_AUTH_EXT_MAX + 4] = { 0 }, blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_auth_ctx actx = { 17, 0, ext };
	struct mpip_cm cm;
	u64 mac;

	memset(&cm, 0, sizeof(cm));
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 0, &actx, &mac),
		 MPIP_AUTH_E_INVAL);
	CHECK_EQ(mpip_auth_seal(&ref_key, &cm, 0, &actx, blk),
		 MPIP_AUTH_E_INVAL);
	cm.naddrs = MPIP_CM_MAX_ADDRS + 1;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &actx, &mac),
		 MPIP_AUTH_E_INVAL);
	cm.naddrs = MPIP_CM_MAX_ADDRS;
	cm.xflags = MPIP_CM_X_MASK + 1;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &actx, &mac),
		 MPIP_AUTH_E_INVAL);
	cm.xflags = MPIP_CM_X_MASK;
	actx.ext_len = MPIP_AUTH_EXT_MAX + 4;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &actx, &mac),
		 MPIP_AUTH_E_INVAL);
	actx.ext_len = 2;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &actx, &mac),
		 MPIP_AUTH_E_INVAL);
	actx.ext_len = 4;
	actx.ext = NULL;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &actx, &mac),
		 MPIP_AUTH_E_INVAL);
	/* the largest input */
	actx.ext = ext;
	actx.ext_len = MPIP_AUTH_EXT_MAX;
	CHECK_EQ(mpip_auth_mac(&ref_key, &cm, 1, &actx, &mac), 0);
}

/* Verify @t's block at a fresh window; 0 if it verified. */
static int tcm_verify(const struct mpip_auth_key *key, const struct tcm *t,
		      const u8 *blk)
{
	struct mpip_replay win;
	u64 ctr;

	mpip_replay_init(&win);
	return mpip_auth_verify(key, &win, &t->cm, &t->ctx, blk,
				MPIP_AUTH_BLOCK_LEN, &ctr);
}

static void flip(void *p, unsigned int bit)
{
	((u8 *)p)[bit / 8] ^= (u8)(1 << (bit % 8));
}

struct field {
	const char *name;
	size_t off, size;
	int structural;	/* changes the input's shape: may be E_INVAL */
};

#define CM_FIELD(f, s)	{ #f, offsetof(struct tcm, cm.f), \
			  sizeof(((struct mpip_cm *)0)->f), s }

static const struct field fields[] = {
	CM_FIELD(node_id, 0),
	CM_FIELD(session_id, 0),
	CM_FIELD(path_id, 0),
	CM_FIELD(fb_path_id, 0),
	CM_FIELD(timestamp_us, 0),
	CM_FIELD(path_delay_us, 0),
	CM_FIELD(flags, 0),
	CM_FIELD(xflags, 1),
	CM_FIELD(naddrs, 1),
	{ "addrs", offsetof(struct tcm, cm.addrs), 7 * 4, 0 },
	{ "ext", offsetof(struct tcm, ext), 24, 0 },
	{ "proto", offsetof(struct tcm, ctx.proto), 1, 0 },
	{ "ext_len", offsetof(struct tcm, ctx.ext_len), 1, 1 },
};

/*
 * Every bit of everything the MAC covers, flipped one at a time between
 * sender and receiver: the CM's fields, its addresses, the extension, the
 * protocol; then the auth block itself and the key.  None verifies.
 */
UNIT_TEST(auth_tamper_every_covered_bit)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN], bad[MPIP_AUTH_BLOCK_LEN];
	const u64 ctr = 0x2468ace;
	struct mpip_auth_key key;
	struct tcm t, u;
	unsigned int f, b, n = 0;
	int ret;

	key.k0 = unit_rand64(ctx);
	key.k1 = unit_rand64(ctx);
	tcm_init(&t, ctx);
	if (!CHECK_EQ(mpip_auth_seal(&key, &t.cm, ctr, &t.ctx, blk), 0) ||
	    !CHECK_EQ(tcm_verify(&key, &t, blk), 0))
		return;

	for (f = 0; f < ARRAY_SIZE(fields); f++) {
		for (b = 0; b < 8 * fields[f].size; b++, n++) {
			tcm_copy(&u, &t);
			flip((u8 *)&u + fields[f].off, b);
			ret = tcm_verify(&key, &u, blk);
			if (fields[f].structural)
				CHECK_MSG(ret == MPIP_AUTH_E_MAC ||
					  ret == MPIP_AUTH_E_INVAL,
					  "%s bit %u: %d", fields[f].name, b,
					  ret);
			else
				CHECK_EQ_MSG(ret, MPIP_AUTH_E_MAC,
					     "%s bit %u", fields[f].name, b);
		}
	}
	/* the block: the counter's low half, then the MAC */
	for (b = 0; b < 8 * MPIP_AUTH_BLOCK_LEN; b++, n++) {
		memcpy(bad, blk, sizeof(bad));
		flip(bad, b);
		CHECK_EQ_MSG(tcm_verify(&key, &t, bad), MPIP_AUTH_E_MAC,
			     "block bit %u", b);
	}
	/* the key */
	for (b = 0; b < 128; b++, n++) {
		struct mpip_auth_key k2 = key;

		flip(&k2, b);
		CHECK_EQ_MSG(tcm_verify(&k2, &t, blk), MPIP_AUTH_E_MAC,
			     "key bit %u", b);
	}
	unit_diag("auth_tamper_every_covered_bit: %u single-bit changes", n);
	CHECK_EQ(tcm_verify(&key, &t, blk), 0);
}

/* The counter's high half is not on the wire, yet the MAC covers it. */
UNIT_TEST(auth_mac_covers_whole_counter)
{
	const u64 ctr = 0x0123456789abcdefULL;
	struct tcm t;
	unsigned int b;
	u64 mac, mac2;

	tcm_init(&t, ctx);
	if (!CHECK_EQ(mpip_auth_mac(&ref_key, &t.cm, ctr, &t.ctx, &mac), 0))
		return;
	for (b = 0; b < 64; b++) {
		CHECK_EQ(mpip_auth_mac(&ref_key, &t.cm, ctr ^ ((u64)1 << b),
				       &t.ctx, &mac2), 0);
		CHECK_MSG(mac != mac2, "counter bit %u", b);
	}
}

/* A CM sent back to its sender, or to a third pair, does not verify. */
UNIT_TEST(auth_reflected_cm_fails)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_auth_peer a, b, c;
	struct tcm t;

	if (!CHECK_EQ(mpip_auth_derive(&a, 1111, 2222), 0) ||
	    !CHECK_EQ(mpip_auth_derive(&b, 2222, 1111), 0) ||
	    !CHECK_EQ(mpip_auth_derive(&c, 2222, 3333), 0))
		return;
	tcm_init(&t, ctx);
	t.cm.node_id = a.tx_token;
	CHECK_EQ(t.cm.node_id, b.rx_token);
	CHECK_EQ(mpip_auth_seal(&a.tx, &t.cm, 7, &t.ctx, blk), 0);
	CHECK_EQ(tcm_verify(&b.rx, &t, blk), 0);
	CHECK_EQ(tcm_verify(&a.rx, &t, blk), MPIP_AUTH_E_MAC);
	CHECK_EQ(tcm_verify(&c.rx, &t, blk), MPIP_AUTH_E_MAC);
	CHECK_EQ(tcm_verify(&b.tx, &t, blk), MPIP_AUTH_E_MAC);
}

UNIT_TEST(auth_short_block)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win;
	struct tcm t;
	u64 ctr = 0;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, 1, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  MPIP_AUTH_BLOCK_LEN - 1, &ctr),
		 MPIP_AUTH_E_SHORT);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk, 0, &ctr),
		 MPIP_AUTH_E_SHORT);
	CHECK_EQ(win.top, 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  MPIP_AUTH_BLOCK_LEN, &ctr), 0);
	CHECK_EQ(ctr, 1);
}

static int window_is_initial(const struct mpip_replay *win)
{
	struct mpip_replay zero;

	mpip_replay_init(&zero);
	return !memcmp(win, &zero, sizeof(zero));
}

/*
 * Forged CMs with counters far ahead must not move the window: otherwise
 * one forged packet would make every genuine CM "old".
 */
UNIT_TEST(auth_window_changes_only_after_mac)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN], forged[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win, before;
	struct tcm t;
	u64 ctr = 0;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	unit_fill(ctx, forged, sizeof(forged));
	memcpy(forged, "\x00\x10\x00\x00", 4);	/* counter 0x100000 */
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, forged,
				  sizeof(forged), &ctr), MPIP_AUTH_E_MAC);
	CHECK(window_is_initial(&win));

	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, 1, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  sizeof(blk), &ctr), 0);
	CHECK_EQ(win.top, 1);
	before = win;
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, forged,
				  sizeof(forged), &ctr), MPIP_AUTH_E_MAC);
	CHECK(!memcmp(&win, &before, sizeof(win)));
	/* the replayed genuine one */
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  sizeof(blk), &ctr), MPIP_AUTH_E_DUP);
	CHECK(!memcmp(&win, &before, sizeof(win)));
	/* the genuine next one still gets through */
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, 2, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  sizeof(blk), &ctr), 0);
	CHECK_EQ(ctr, 2);
}

/*
 * A CM that claims a counter the window has seen is a copy only if its
 * MAC says so: an observer of one path learns live counters from any CM
 * and must not pass a forgery off as a replay, which goes on as plain
 * IP would deliver it (review 57, F1).
 */
UNIT_TEST(auth_seen_counter_needs_mac)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN], forged[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win, before;
	struct tcm t;
	u64 ctr = 0;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, 5, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  sizeof(blk), &ctr), 0);
	before = win;
	/* counter 5, seen; MAC not of this CM */
	memcpy(forged, blk, 4);
	unit_fill(ctx, forged + 4, sizeof(forged) - 4);
	CHECK_EQ(mpip_auth_check(&ref_key, &win, &t.cm, &t.ctx, forged,
				 sizeof(forged), &ctr), MPIP_AUTH_E_MAC);
	/* the genuine CM with another session ID: not covered by its MAC */
	t.cm.session_id ^= 0x0100;
	CHECK_EQ(mpip_auth_check(&ref_key, &win, &t.cm, &t.ctx, blk,
				 sizeof(blk), &ctr), MPIP_AUTH_E_MAC);
	t.cm.session_id ^= 0x0100;
	/* the genuine copy: a replay */
	CHECK_EQ(mpip_auth_check(&ref_key, &win, &t.cm, &t.ctx, blk,
				 sizeof(blk), &ctr), MPIP_AUTH_E_DUP);
	CHECK(!memcmp(&win, &before, sizeof(win)));
}

/*
 * While the window is young, low halves just below 2^32 would be
 * counters before the first: no CM of the pair has one, so whatever
 * carries one is forged (or corrupt), not old.
 */
UNIT_TEST(auth_counter_before_first_is_forged)
{
	u8 forged[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win;
	struct tcm t;
	u64 ctr = 0;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	unit_fill(ctx, forged, sizeof(forged));
	memcpy(forged, "\xff\xff\xff\xff", 4);
	CHECK_EQ(mpip_replay_infer(&win, 0xffffffff, &ctr), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_auth_check(&ref_key, &win, &t.cm, &t.ctx, forged,
				 sizeof(forged), &ctr), MPIP_AUTH_E_MAC);
	CHECK(window_is_initial(&win));
}

/* Two copies checked at once (two CPUs): only one commit succeeds. */
UNIT_TEST(auth_check_then_commit_once)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win;
	struct tcm t;
	u64 c1 = 0, c2 = 0;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, 77, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_check(&ref_key, &win, &t.cm, &t.ctx, blk,
				 sizeof(blk), &c1), 0);
	CHECK_EQ(mpip_auth_check(&ref_key, &win, &t.cm, &t.ctx, blk,
				 sizeof(blk), &c2), 0);
	CHECK(window_is_initial(&win));
	CHECK_EQ(c1, 77);
	CHECK_EQ(mpip_replay_commit(&win, c1), 0);
	CHECK_EQ(mpip_replay_commit(&win, c2), MPIP_AUTH_E_DUP);
}

/*
 * A handshake CM carries its full counter: the MAC is checked under it,
 * and a counter with the same low half but another high half fails.
 */
UNIT_TEST(auth_mac_ok_explicit_counter)
{
	const u64 c = 0x500000123ULL;
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct tcm t;

	tcm_init(&t, ctx);
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, c, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_mac_ok(&ref_key, &t.cm, c, &t.ctx, blk,
				  sizeof(blk)), 0);
	CHECK_EQ(mpip_auth_mac_ok(&ref_key, &t.cm, c + 1, &t.ctx, blk,
				  sizeof(blk)), MPIP_AUTH_E_MAC);
	CHECK_EQ(mpip_auth_mac_ok(&ref_key, &t.cm, c - 0x100000000ULL, &t.ctx,
				  blk, sizeof(blk)), MPIP_AUTH_E_MAC);
	CHECK_EQ(mpip_auth_mac_ok(&ref_key, &t.cm, c, &t.ctx, blk,
				  sizeof(blk) - 1), MPIP_AUTH_E_SHORT);
	blk[sizeof(blk) - 1] ^= 1;
	CHECK_EQ(mpip_auth_mac_ok(&ref_key, &t.cm, c, &t.ctx, blk,
				  sizeof(blk)), MPIP_AUTH_E_MAC);
}

/* End to end across 2^32: the wire carries only the low half. */
UNIT_TEST(auth_counter_crosses_2_32)
{
	const u64 start = 0xffffff00ULL, n = 512;
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win;
	u64 order[512], i, ctr;
	struct tcm t;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	/*
	 * The receiver has taken the handshake's full counter (a fresh
	 * window reads a low half of 2^31 or more as one before counter 1).
	 */
	CHECK_EQ(mpip_replay_commit(&win, start - 2 * W), 0);
	/* in order, with each pair swapped: a little reordering */
	for (i = 0; i < n; i++)
		order[i] = start + (i ^ 1);
	for (i = 0; i < n; i++) {
		ctr = 0;
		CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, order[i], &t.ctx, blk),
			 0);
		CHECK_EQ_MSG(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx,
					      blk, sizeof(blk), &ctr), 0,
			     "counter 0x%llx", (unsigned long long)order[i]);
		CHECK_EQ(ctr, order[i]);
	}
	CHECK_EQ(win.top, start + n - 1);
	CHECK(win.top > 0xffffffffULL);
}

/*
 * Two paths, one of them 5000 CMs behind the other (at 60 Mbit/s, 0.8 s
 * of queue more on the slower path; the lab's NATs showed over 960): a
 * third of the CMs take the slow path and arrive that late, and every one
 * verifies, with its full counter inferred from the low half on the wire.
 * With a window of 960 the slow path's CMs all failed.
 */
UNIT_TEST(auth_paths_of_different_delay)
{
	const u64 base = 0x7ffff000ULL, n = 3 * 5000, lag = 5000;
	u64 slow[5000], sent, ctr, ok = 0;
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	unsigned int head = 0, tail = 0;
	struct mpip_replay win;
	struct tcm t;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, base, &t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  sizeof(blk), &ctr), 0);
	for (sent = 1; sent <= n + lag; sent++) {
		/* the slow path's CM sent lag CMs ago arrives now */
		if (head != tail && slow[tail % ARRAY_SIZE(slow)] + lag <=
				    base + sent) {
			ctr = slow[tail++ % ARRAY_SIZE(slow)];
			CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, ctr, &t.ctx,
						blk), 0);
			ok += mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx,
					       blk, sizeof(blk), &ctr) == 0;
		}
		if (sent > n)
			continue;
		if (sent % 3 == 0) {
			slow[head++ % ARRAY_SIZE(slow)] = base + sent;
			continue;
		}
		CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, base + sent, &t.ctx,
					blk), 0);
		ok += mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				       sizeof(blk), &ctr) == 0;
	}
	CHECK_EQ(head, tail);
	CHECK_EQ(ok, n);
	CHECK_EQ(win.top, base + n);
}

/*
 * A CM from further behind than the window (a path lagging by more), up
 * to 2^31 counters, is old, not a forgery: its low half is read as
 * behind, and its genuine MAC verifies.  With a wrong MAC it fails as
 * one.  The window stays as it was.
 */
UNIT_TEST(auth_behind_window_is_old)
{
	const u64 top = 0x500000000ULL;
	const u64 behind[] = { top - W, top - W - 1, top - 3 * W, top - 0x80000000ULL };
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win, before;
	unsigned int i;
	struct tcm t;
	u64 ctr;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, top), 0);
	before = win;
	for (i = 0; i < ARRAY_SIZE(behind); i++) {
		CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, behind[i], &t.ctx, blk),
			 0);
		CHECK_EQ_MSG(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx,
					      blk, sizeof(blk), &ctr),
			     MPIP_AUTH_E_OLD, "counter 0x%llx",
			     (unsigned long long)behind[i]);
		flip(blk + 4, i);
		CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
					  sizeof(blk), &ctr), MPIP_AUTH_E_MAC);
	}
	CHECK(!memcmp(&win, &before, sizeof(win)));
}

/*
 * A sender 2^31 or more ahead (the receiver missed 2^31 CMs in a row)
 * cannot be followed: the inferred counter is wrong and the MAC fails,
 * the window stays as it was.  Peers then time out and shake hands
 * again.
 */
UNIT_TEST(auth_sender_too_far_ahead)
{
	const u64 top = 0x500000000ULL;
	const u64 ahead[] = { 1ULL << 31, (1ULL << 32) + 5, 3ULL << 31 };
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_replay win, before;
	unsigned int i;
	struct tcm t;
	u64 ctr;

	tcm_init(&t, ctx);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, top), 0);
	before = win;
	for (i = 0; i < ARRAY_SIZE(ahead); i++) {
		CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, top + ahead[i],
					&t.ctx, blk), 0);
		CHECK_EQ_MSG(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx,
					      blk, sizeof(blk), &ctr),
			     MPIP_AUTH_E_MAC, "ahead 0x%llx",
			     (unsigned long long)ahead[i]);
	}
	CHECK(!memcmp(&win, &before, sizeof(win)));
	/* just under 2^31 ahead still works */
	CHECK_EQ(mpip_auth_seal(&ref_key, &t.cm, top + (1ULL << 31) - 1,
				&t.ctx, blk), 0);
	CHECK_EQ(mpip_auth_verify(&ref_key, &win, &t.cm, &t.ctx, blk,
				  sizeof(blk), &ctr), 0);
	CHECK_EQ(ctr, top + (1ULL << 31) - 1);
}

UNIT_TEST(replay_fresh_and_duplicates)
{
	struct mpip_replay win;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_check(&win, 1), 0);
	CHECK_EQ(mpip_replay_commit(&win, 1), 0);
	CHECK_EQ(mpip_replay_check(&win, 1), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, 1), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, 3), 0);
	CHECK_EQ(mpip_replay_commit(&win, 2), 0);
	CHECK_EQ(mpip_replay_commit(&win, 2), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, 3), MPIP_AUTH_E_DUP);
	CHECK_EQ(win.top, 3);
	/* a check alone changes nothing */
	CHECK_EQ(mpip_replay_check(&win, 4), 0);
	CHECK_EQ(mpip_replay_check(&win, 4), 0);
	CHECK_EQ(win.top, 3);
}

UNIT_TEST(replay_zero_never_accepted)
{
	struct mpip_replay win;
	u64 ctr = 12345;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_check(&win, 0), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_commit(&win, 0), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_infer(&win, 0, &ctr), MPIP_AUTH_E_OLD);
	CHECK(window_is_initial(&win));
}

UNIT_TEST(replay_window_edge)
{
	struct mpip_replay win;
	const u64 top = 100000;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, top), 0);
	CHECK_EQ(mpip_replay_check(&win, top - (W - 1)), 0);
	CHECK_EQ(mpip_replay_check(&win, top - W), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_commit(&win, top - W), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_commit(&win, top - (W - 1)), 0);
	CHECK_EQ(mpip_replay_commit(&win, top - (W - 1)), MPIP_AUTH_E_DUP);
	/* one step up pushes the oldest out */
	CHECK_EQ(mpip_replay_commit(&win, top + 1), 0);
	CHECK_EQ(mpip_replay_check(&win, top - (W - 1)), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_check(&win, top - (W - 2)), 0);
	/* a window that has not filled up yet: everything from 1 on */
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, W / 2), 0);
	CHECK_EQ(mpip_replay_commit(&win, 1), 0);
	CHECK_EQ(mpip_replay_commit(&win, 1), MPIP_AUTH_E_DUP);
}

/* Every counter of the window arrives, in a random order, then again. */
UNIT_TEST(replay_reorder_within_window)
{
	static u64 order[W];
	struct mpip_replay win;
	const u64 top = 2 * W;
	unsigned int i, j;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, top), 0);
	for (i = 0; i < W - 1; i++)
		order[i] = top - 1 - i;
	for (i = W - 2; i > 0; i--) {
		u64 x;

		j = unit_below(ctx, i + 1);
		x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (i = 0; i < W - 1; i++)
		CHECK_EQ_MSG(mpip_replay_commit(&win, order[i]), 0, "%llu",
			     (unsigned long long)order[i]);
	for (i = 0; i < W - 1; i++)
		CHECK_EQ_MSG(mpip_replay_commit(&win, order[i]),
			     MPIP_AUTH_E_DUP, "%llu",
			     (unsigned long long)order[i]);
	CHECK_EQ(win.top, top);
}

/*
 * Jumps ahead: of less than the window, of exactly the ring (the same bit
 * in the same word), of more than the ring.  Counters the jump skipped
 * that are still in the window are accepted, older ones are old, and no
 * stale bit of an earlier lap of the ring reads as a duplicate.
 */
UNIT_TEST(replay_big_jumps)
{
	static const u64 jumps[] = {
		1, 63, 64, 65, W - 1, W, W + 1, 64 * MPIP_REPLAY_WORDS,
		64 * MPIP_REPLAY_WORDS + 1, 2 * 64 * MPIP_REPLAY_WORDS,
		1000000, 1ULL << 31,
	};
	struct mpip_replay win;
	unsigned int i;
	u64 top, c;

	for (i = 0; i < ARRAY_SIZE(jumps); i++) {
		mpip_replay_init(&win);
		/* a full window: every counter 1000..1000+W-1 seen */
		for (c = 1000; c < 1000 + W; c++)
			mpip_replay_commit(&win, c);
		top = win.top + jumps[i];
		if (!CHECK_EQ(mpip_replay_commit(&win, top), 0))
			continue;
		CHECK_EQ(mpip_replay_check(&win, top), MPIP_AUTH_E_DUP);
		for (c = top - (W - 1); c < top; c++) {
			int want = c < 1000 + W ? MPIP_AUTH_E_DUP : 0;

			CHECK_EQ_MSG(mpip_replay_check(&win, c), want,
				     "jump %llu counter %llu",
				     (unsigned long long)jumps[i],
				     (unsigned long long)c);
		}
		CHECK_EQ_MSG(mpip_replay_check(&win, top - W),
			     MPIP_AUTH_E_OLD, "jump %llu",
			     (unsigned long long)jumps[i]);
	}
}

/* The counter never wraps: nothing after 2^64 - 1, nothing at 0 again. */
UNIT_TEST(replay_no_wraparound)
{
	const u64 max = ~0ULL;
	struct mpip_replay win;
	u64 ctr = 0;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, max - 5), 0);
	CHECK_EQ(mpip_replay_infer(&win, (u32)max, &ctr), 0);
	CHECK_EQ(ctr, max);
	CHECK_EQ(mpip_replay_commit(&win, max), 0);
	CHECK_EQ(mpip_replay_commit(&win, max), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, max - 3), 0);
	/* low halves that would follow 2^64 - 1 */
	CHECK_EQ(mpip_replay_infer(&win, 0, &ctr), MPIP_AUTH_E_WRAP);
	CHECK_EQ(mpip_replay_infer(&win, 1, &ctr), MPIP_AUTH_E_WRAP);
	CHECK_EQ(mpip_replay_infer(&win, 0x7ffffffe, &ctr), MPIP_AUTH_E_WRAP);
	/* 2^31 behind is old, not past the last */
	CHECK_EQ(mpip_replay_infer(&win, 0x7fffffff, &ctr), 0);
	CHECK_EQ(ctr, max - 0x80000000ULL);
	/* still inside the window */
	CHECK_EQ(mpip_replay_infer(&win, (u32)(max - 10), &ctr), 0);
	CHECK_EQ(ctr, max - 10);
	CHECK_EQ(mpip_replay_check(&win, 0), MPIP_AUTH_E_OLD);
	CHECK_EQ(win.top, max);
}

UNIT_TEST(replay_infer_cases)
{
	struct mpip_replay win;
	u64 ctr = 0;

	/* fresh: low halves up to 2^31 - 1 are taken as they are */
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_infer(&win, 1, &ctr), 0);
	CHECK_EQ(ctr, 1);
	CHECK_EQ(mpip_replay_infer(&win, 0x7fffffff, &ctr), 0);
	CHECK_EQ(ctr, 0x7fffffff);
	/* from 2^31 on they would be before counter 1 */
	CHECK_EQ(mpip_replay_infer(&win, 0x80000000, &ctr), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_infer(&win, 0xffffffff, &ctr), MPIP_AUTH_E_OLD);

	/* newest just past a 2^32 boundary: behind reaches the block before */
	CHECK_EQ(mpip_replay_commit(&win, 0x100000005ULL), 0);
	CHECK_EQ(mpip_replay_infer(&win, 0xfffffff0, &ctr), 0);
	CHECK_EQ(ctr, 0xfffffff0ULL);
	CHECK_EQ(mpip_replay_infer(&win, 10, &ctr), 0);
	CHECK_EQ(ctr, 0x10000000aULL);
	CHECK_EQ(mpip_replay_infer(&win, 5 - W, &ctr), 0);
	CHECK_EQ(ctr, 0x100000005ULL - W);
	CHECK_EQ(mpip_replay_infer(&win, 0x80000004, &ctr), 0);
	CHECK_EQ(ctr, 0x180000004ULL);
	CHECK_EQ(mpip_replay_infer(&win, 0x80000005, &ctr), 0);
	CHECK_EQ(ctr, 0x80000005ULL);

	/* newest in the middle of a block: ahead reaches the next one */
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, 0x280000000ULL), 0);
	CHECK_EQ(mpip_replay_infer(&win, 0x80000000 - W, &ctr), 0);
	CHECK_EQ(ctr, 0x280000000ULL - W);
	CHECK_EQ(mpip_replay_infer(&win, 0xffffffff, &ctr), 0);
	CHECK_EQ(ctr, 0x2ffffffffULL);
	CHECK_EQ(mpip_replay_infer(&win, 0, &ctr), 0);
	CHECK_EQ(ctr, 0x200000000ULL);
	CHECK_EQ(mpip_replay_infer(&win, 0x7fffffff, &ctr), 0);
	CHECK_EQ(ctr, 0x27fffffffULL);
}

/*
 * The inference against its definition: the one value with the given low
 * half from 2^31 below the window's newest to 2^31 - 1 above it, or an
 * error when that value is not in 1 .. 2^64 - 1.
 */
UNIT_TEST(replay_infer_model)
{
	struct mpip_replay win;
	unsigned int i;

	for (i = 0; i < 200000; i++) {
		__int128 want;
		u64 top, ctr = 0;
		u32 lo;
		int ret;

		switch (unit_below(ctx, 4)) {
		case 0:
			top = unit_below(ctx, 4 * W);
			break;
		case 1:
			top = ~0ULL - unit_below(ctx, 4 * W);
			break;
		case 2:
			top = ((u64)unit_rand32(ctx) << 32) +
			      unit_below(ctx, 2 * W) - W;
			break;
		default:
			top = unit_rand64(ctx);
		}
		lo = unit_below(ctx, 2) ? unit_rand32(ctx) :
		     (u32)top + unit_below(ctx, 4 * W) - 2 * W;
		mpip_replay_init(&win);
		win.top = top;
		want = (__int128)top + (s32)(lo - (u32)top);
		ret = mpip_replay_infer(&win, lo, &ctr);
		if (want < 1)
			CHECK_EQ_MSG(ret, MPIP_AUTH_E_OLD, "top 0x%llx lo 0x%x",
				     (unsigned long long)top, lo);
		else if (want > (__int128)~0ULL)
			CHECK_EQ_MSG(ret, MPIP_AUTH_E_WRAP, "top 0x%llx lo 0x%x",
				     (unsigned long long)top, lo);
		else if (CHECK_EQ_MSG(ret, 0, "top 0x%llx lo 0x%x",
				      (unsigned long long)top, lo))
			CHECK_EQ_MSG(ctr, (u64)want, "top 0x%llx lo 0x%x",
				     (unsigned long long)top, lo);
	}
}

/*
 * Random arrivals against a model that remembers every accepted counter:
 * mostly near the newest (reordering, duplicates), sometimes behind the
 * window, sometimes far ahead.  After some steps every counter of the
 * window is checked against the model too.
 */
#define MODEL_MAX	(1u << 24)

static int model_seen(const u8 *seen, u64 c)
{
	return seen[c / 8] >> (c % 8) & 1;
}

UNIT_TEST(replay_model_random)
{
	static u8 seen[MODEL_MAX / 8];
	struct mpip_replay win;
	u64 max = 0, c;
	unsigned int i;

	memset(seen, 0, sizeof(seen));
	mpip_replay_init(&win);
	for (i = 0; i < 100000 && max < MODEL_MAX - 10000; i++) {
		int want, ret;
		s64 d;

		switch (unit_below(ctx, 32)) {
		case 0:
			d = (s64)unit_below(ctx, 3000);	/* a jump ahead */
			break;
		case 1:
			d = -(s64)unit_below(ctx, 3 * W);	/* far behind */
			break;
		default:
			d = (s64)unit_below(ctx, 2 * W) - (s64)(W + W / 2);
		}
		c = (s64)max + d < 0 ? 0 : max + d;
		if (!c)
			want = MPIP_AUTH_E_OLD;
		else if (c > max)
			want = 0;
		else if (max - c >= W)
			want = MPIP_AUTH_E_OLD;
		else if (model_seen(seen, c))
			want = MPIP_AUTH_E_DUP;
		else
			want = 0;
		CHECK_EQ_MSG(mpip_replay_check(&win, c), want, "step %u c %llu",
			     i, (unsigned long long)c);
		ret = mpip_replay_commit(&win, c);
		if (!CHECK_EQ_MSG(ret, want, "step %u c %llu", i,
				  (unsigned long long)c))
			return;
		if (!ret) {
			seen[c / 8] |= (u8)(1u << (c % 8));
			if (c > max)
				max = c;
		}
		CHECK_EQ(win.top, max);
		if (i % 997)
			continue;
		for (c = max > W ? max - W + 1 : 1; c <= max; c++) {
			want = model_seen(seen, c) ? MPIP_AUTH_E_DUP : 0;
			CHECK_EQ_MSG(mpip_replay_check(&win, c), want,
				     "step %u window c %llu", i,
				     (unsigned long long)c);
		}
	}
	unit_diag("replay_model_random: %u arrivals, newest %llu", i,
		  (unsigned long long)max);
}

/*
 * A fake-TCP SYN's auth block (auth.h): it verifies under the receiver's
 * rx key with its token and the SYN's sequence number, and fails with
 * any of them, its counter or any bit of the block changed; once its
 * counter is committed, a copy is a replay; a CM's block with the same
 * counter is no SYN's (the MAC domains differ).
 */
UNIT_TEST(auth_syn_mac_round_trip_and_every_mismatch)
{
	u8 blk[MPIP_AUTH_BLOCK_LEN], bad[MPIP_AUTH_BLOCK_LEN];
	struct mpip_auth_peer a, b;
	struct mpip_replay win;
	u32 tok, seq = 0x8badf00d;
	unsigned int bit;
	struct tcm t;
	u64 ctr = 0;

	if (!CHECK_EQ(mpip_auth_derive(&a, 4444, 5555), 0) ||
	    !CHECK_EQ(mpip_auth_derive(&b, 5555, 4444), 0))
		return;
	tok = a.tx_token;
	CHECK_EQ(tok, b.rx_token);
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, 100), 0);
	CHECK_EQ(mpip_auth_syn_seal(&a.tx, 0, tok, seq, blk),
		 MPIP_AUTH_E_INVAL);
	CHECK_EQ(mpip_auth_syn_seal(&a.tx, 101, tok, seq, blk), 0);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq, blk, &ctr), 0);
	CHECK_EQ(ctr, 101);
	/* another key, token, sequence number */
	CHECK_EQ(mpip_auth_syn_check(&b.tx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_MAC);
	CHECK_EQ(mpip_auth_syn_check(&a.rx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_MAC);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok ^ 1, seq, blk, &ctr),
		 MPIP_AUTH_E_MAC);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq + 1, blk, &ctr),
		 MPIP_AUTH_E_MAC);
	/* every bit of the block: counter or MAC */
	for (bit = 0; bit < 8 * sizeof(blk); bit++) {
		memcpy(bad, blk, sizeof(blk));
		flip(bad, bit);
		CHECK_EQ_MSG(mpip_auth_syn_check(&b.rx, &win, tok, seq, bad,
						 &ctr), MPIP_AUTH_E_MAC,
			     "bit %u", bit);
	}
	/* committed: its copy is a replay */
	CHECK_EQ(mpip_replay_commit(&win, 101), 0);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_DUP);
	/* a CM's block under the same key and counter */
	tcm_init(&t, ctx);
	t.cm.node_id = tok;
	CHECK_EQ(mpip_auth_seal(&a.tx, &t.cm, 102, &t.ctx, blk), 0);
	CHECK_EQ(tcm_verify(&b.rx, &t, blk), 0);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_MAC);
	/*
	 * Far behind the window, its low half read as 2^32 ahead: still a
	 * replay (old), not a forgery; with a bit of its MAC changed, one.
	 */
	CHECK_EQ(mpip_replay_commit(&win, 0x300000000ULL), 0);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_MAC);
	CHECK_EQ(mpip_auth_syn_seal(&a.tx, 0x300000000ULL - 3 * W, tok, seq,
				    blk), 0);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_OLD);
	flip(blk, 40);
	CHECK_EQ(mpip_auth_syn_check(&b.rx, &win, tok, seq, blk, &ctr),
		 MPIP_AUTH_E_MAC);
}
