// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/cm.c, the CM trailer v1 codec.
 *
 * Every decode runs on a heap buffer of exactly the bytes under test, so
 * AddressSanitizer reports any read outside them.  The reference encoder
 * below, with the checksums of cm_ref.c (bitwise CRC, modular
 * ones'-complement arithmetic), is written independently of cm.c so that
 * the two cross-check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "cm_ref.h"
#include "ktap.h"

#define FUZZ_ITERS	200000

/* ---- independent reference implementation ---------------------------- */

static unsigned int ref_encode(const struct mpip_cm *cm, u8 *b)
{
	unsigned int t = 28 + 4 * cm->naddrs, i;

	put32(b, cm->node_id);
	put16(b + 4, cm->session_id);
	b[6] = cm->path_id;
	b[7] = cm->fb_path_id;
	put32(b + 8, cm->timestamp_us);
	put32(b + 12, cm->path_delay_us);
	for (i = 0; i < cm->naddrs; i++)
		memcpy(b + 16 + 4 * i, &cm->addrs[i], 4);
	b[t - 10] = cm->flags;
	b[t - 9] = cm->naddrs | cm->xflags << 4;
	b[t - 8] = 0xd7;
	b[t - 7] = 1;
	put16(b + t - 6, t);
	ref_fix(b, t);
	return t;
}

/* ---- helpers ---------------------------------------------------------- */

/* Decode @n bytes from a heap buffer of exactly @n bytes. */
static int decode_exact(const u8 *src, unsigned int n, struct mpip_cm *cm)
{
	u8 *p = exact_copy(src, n);
	int ret = mpip_cm_decode(p, n, cm);

	free(p);
	return ret;
}

/* Peek at the last 8 bytes of @n bytes held in an exact heap buffer. */
static int peek_exact(const u8 *src, unsigned int n)
{
	u8 *p = exact_copy(src, n);
	int ret = mpip_cm_peek(p + n - MPIP_CM_TAIL_LEN, n);

	free(p);
	return ret;
}

static void random_cm(struct unit_ctx *ctx, struct mpip_cm *cm,
		      unsigned int naddrs)
{
	unsigned int i;

	memset(cm, 0, sizeof(*cm));
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
}

static int cm_same(const struct mpip_cm *a, const struct mpip_cm *b)
{
	return a->node_id == b->node_id && a->session_id == b->session_id &&
	       a->path_id == b->path_id && a->fb_path_id == b->fb_path_id &&
	       a->timestamp_us == b->timestamp_us &&
	       a->path_delay_us == b->path_delay_us &&
	       a->flags == b->flags && a->xflags == b->xflags &&
	       a->naddrs == b->naddrs &&
	       !memcmp(a->addrs, b->addrs, 4 * a->naddrs);
}

/*
 * Encode @cm into an exact heap buffer, compare with the reference
 * encoder, decode from an exact buffer, compare fields, re-encode and
 * compare bytes.  Returns 1 when all of it holds.
 */
static int round_trip(struct unit_ctx *ctx, const struct mpip_cm *cm)
{
	unsigned int t = mpip_cm_len(cm);
	u8 ref[MPIP_CM_MAX_LEN], again[MPIP_CM_MAX_LEN];
	struct mpip_cm out;
	u8 *buf = malloc(t);
	int ok = 1;

	if (!buf)
		exit(2);
	ok &= CHECK_EQ(mpip_cm_encode(cm, buf, t), t);
	ok &= CHECK_EQ(ref_encode(cm, ref), t);
	ok &= CHECK(!memcmp(buf, ref, t));
	ok &= CHECK_EQ(peek_exact(buf, t), t);
	ok &= CHECK_EQ(decode_exact(buf, t, &out), t);
	ok &= CHECK(cm_same(cm, &out));
	ok &= CHECK_EQ(mpip_cm_encode(&out, again, sizeof(again)), t);
	ok &= CHECK(!memcmp(buf, again, t));
	free(buf);
	return ok;
}

static unsigned int encode_random(struct unit_ctx *ctx, u8 *buf,
				  struct mpip_cm *cm, unsigned int naddrs)
{
	random_cm(ctx, cm, naddrs);
	return (unsigned int)mpip_cm_encode(cm, buf, MPIP_CM_MAX_LEN);
}

/* ---- CRC32C ----------------------------------------------------------- */

UNIT_TEST(crc32c_known_vectors)
{
	static const char fox[] = "The quick brown fox jumps over the lazy dog";
	u8 buf[32];
	int i;

	CHECK_EQ(mpip_crc32c(0, (const u8 *)"123456789", 9), 0xe3069283);
	CHECK_EQ(mpip_crc32c(0, (const u8 *)fox, sizeof(fox) - 1),
		 0x22620404);
	CHECK_EQ(mpip_crc32c(0, NULL, 0), 0);
	CHECK_EQ(mpip_crc32c(0x12345678, NULL, 0), 0x12345678);
	/* RFC 3720 B.4 (iSCSI) test vectors. */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(mpip_crc32c(0, buf, 32), 0x8a9136aa);
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(mpip_crc32c(0, buf, 32), 0x62a8ab43);
	for (i = 0; i < 32; i++)
		buf[i] = (u8)i;
	CHECK_EQ(mpip_crc32c(0, buf, 32), 0x46dd794e);
	for (i = 0; i < 32; i++)
		buf[i] = (u8)(31 - i);
	CHECK_EQ(mpip_crc32c(0, buf, 32), 0x113fdb5c);
}

UNIT_TEST(crc32c_matches_bitwise_and_chains)
{
	u8 buf[300];
	unsigned int len, split;
	u32 whole;
	int iter;

	for (iter = 0; iter < 200; iter++) {
		len = unit_below(ctx, sizeof(buf) + 1);
		unit_fill(ctx, buf, len);
		whole = mpip_crc32c(0, buf, len);

		CHECK_EQ_MSG(whole, ref_crc32c(buf, len), "len %u", len);
		for (split = 0; split <= len; split++) {
			u32 c = mpip_crc32c(0, buf, split);

			c = mpip_crc32c(c, buf + split, len - split);
			if (!CHECK_EQ_MSG(c, whole, "len %u split %u", len,
					  split))
				break;
		}
	}
}

/* ---- encoder ---------------------------------------------------------- */

UNIT_TEST(cm_lengths_and_constants)
{
	struct mpip_cm cm = { 0 };
	unsigned int n;

	CHECK_EQ(MPIP_CM_MIN_LEN, 28);
	CHECK_EQ(MPIP_CM_MAX_LEN, 60);
	CHECK_EQ(MPIP_CM_TAIL_LEN, 8);
	CHECK_EQ(MPIP_CM_MAX_ADDRS, 8);
	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		cm.naddrs = (u8)n;
		CHECK_EQ(mpip_cm_len(&cm), 28 + 4 * n);
	}
}

UNIT_TEST(encode_golden_vectors)
{
	static const u8 golden2[36] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
		0x0a, 0x00, 0x00, 0x01, 0xc0, 0xa8, 0x01, 0x02,
		0xc0, 0x3d, 0x05, 0x02, 0xd7, 0x01, 0x00, 0x24,
		0x77, 0xd3, 0x1f, 0xd3,
	};
	static const u8 golden0[28] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x0a, 0x1c, 0x00, 0x00, 0xd7, 0x01, 0x00, 0x1c,
		0x75, 0xc5, 0xe9, 0x00,
	};
	static const u8 a0[4] = { 10, 0, 0, 1 }, a1[4] = { 192, 168, 1, 2 };
	struct mpip_cm cm = {
		.node_id = 0x01020304, .session_id = 0x0506,
		.path_id = 7, .fb_path_id = 8,
		.timestamp_us = 0x090a0b0c, .path_delay_us = 0x0d0e0f10,
		.flags = MPIP_CM_F_ENABLE | MPIP_CM_F_CTRL, .naddrs = 2,
	};
	struct mpip_cm zero = { 0 };
	u8 buf[MPIP_CM_MAX_LEN];

	memcpy(&cm.addrs[0], a0, 4);
	memcpy(&cm.addrs[1], a1, 4);
	CHECK_EQ(mpip_cm_encode(&cm, buf, sizeof(buf)), 36);
	CHECK(!memcmp(buf, golden2, sizeof(golden2)));
	CHECK_EQ(mpip_cm_encode(&zero, buf, sizeof(buf)), 28);
	CHECK(!memcmp(buf, golden0, sizeof(golden0)));
}

UNIT_TEST(xflags_share_the_count_byte)
{
	struct mpip_cm cm = {
		.node_id = 7, .naddrs = 2, .xflags = MPIP_CM_X_SOLE,
		.flags = MPIP_CM_F_ORIG,
	}, out;
	u8 buf[MPIP_CM_MAX_LEN];

	cm.addrs[0] = 0x0100000a;
	cm.addrs[1] = 0x0200000a;
	CHECK_EQ(mpip_cm_encode(&cm, buf, sizeof(buf)), 36);
	CHECK_EQ(buf[36 - 9], 0x12);
	CHECK_EQ(buf[36 - 10], MPIP_CM_F_ORIG);
	CHECK_EQ(mpip_cm_decode(buf, 36, &out), 36);
	CHECK_EQ(out.naddrs, 2);
	CHECK_EQ(out.xflags, MPIP_CM_X_SOLE);
	CHECK(cm_same(&cm, &out));
	/* The same trailer without the flag differs only there and in the checks. */
	cm.xflags = 0;
	CHECK_EQ(mpip_cm_encode(&cm, buf, sizeof(buf)), 36);
	CHECK_EQ(buf[36 - 9], 0x02);
	CHECK_EQ(mpip_cm_decode(buf, 36, &out), 36);
	CHECK_EQ(out.xflags, 0);
}

UNIT_TEST(encode_field_offsets)
{
	u8 buf[MPIP_CM_MAX_LEN];
	struct mpip_cm cm;
	unsigned int n, t, i;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, buf, &cm, n);
		CHECK_EQ(t, 28 + 4 * n);
		CHECK_EQ(get32(buf), cm.node_id);
		CHECK_EQ(get16(buf + 4), cm.session_id);
		CHECK_EQ(buf[6], cm.path_id);
		CHECK_EQ(buf[7], cm.fb_path_id);
		CHECK_EQ(get32(buf + 8), cm.timestamp_us);
		CHECK_EQ(get32(buf + 12), cm.path_delay_us);
		for (i = 0; i < n; i++)
			CHECK(!memcmp(buf + 16 + 4 * i, &cm.addrs[i], 4));
		CHECK(get16(buf + t - 12) != 0);
		CHECK_EQ(buf[t - 10], cm.flags);
		CHECK_EQ(buf[t - 9], n | cm.xflags << 4);
		CHECK_EQ(buf[t - 8], MPIP_CM_MAGIC);
		CHECK_EQ(buf[t - 7], MPIP_CM_VERSION);
		CHECK_EQ(get16(buf + t - 6), t);
	}
}

UNIT_TEST(encode_matches_reference)
{
	u8 buf[MPIP_CM_MAX_LEN], ref[MPIP_CM_MAX_LEN];
	struct mpip_cm cm;
	unsigned int t;
	int iter;

	for (iter = 0; iter < 20000; iter++) {
		t = encode_random(ctx, buf, &cm, unit_below(ctx, 9));
		CHECK_EQ(ref_encode(&cm, ref), t);
		if (!CHECK(!memcmp(buf, ref, t)))
			break;
	}
}

/* mpip_cm_encode() refuses @cm and leaves a large buffer untouched. */
static void encode_refused(struct unit_ctx *ctx, const struct mpip_cm *cm)
{
	u8 buf[300], guard[300];

	memset(buf, 0xa5, sizeof(buf));
	memset(guard, 0xa5, sizeof(guard));
	CHECK_EQ(mpip_cm_encode(cm, buf, sizeof(buf)), MPIP_CM_E_INVAL);
	CHECK(!memcmp(buf, guard, sizeof(guard)));
}

UNIT_TEST(encode_rejects_bad_arguments)
{
	u8 guard[MPIP_CM_MAX_LEN];
	struct mpip_cm cm;
	unsigned int n, len, t;
	u8 *p;

	random_cm(ctx, &cm, 0);
	for (n = MPIP_CM_MAX_ADDRS + 1; n <= 255; n++) {
		cm.naddrs = (u8)n;
		encode_refused(ctx, &cm);
	}
	/* Too small: exact heap buffers, untouched on failure. */
	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		random_cm(ctx, &cm, n);
		t = mpip_cm_len(&cm);
		for (len = 0; len < t; len++) {
			memset(guard, 0x5a, sizeof(guard));
			p = exact_copy(guard, len);
			CHECK_EQ_MSG(mpip_cm_encode(&cm, p, len),
				     MPIP_CM_E_INVAL, "n %u len %u", n, len);
			CHECK(!len || !memcmp(p, guard, len));
			free(p);
		}
	}
	/* Extended flags are 4 bits. */
	random_cm(ctx, &cm, 1);
	for (n = MPIP_CM_X_MASK + 1; n <= 255; n++) {
		cm.xflags = (u8)n;
		encode_refused(ctx, &cm);
	}
	CHECK_EQ(mpip_cm_encode(NULL, guard, sizeof(guard)), MPIP_CM_E_INVAL);
	CHECK_EQ(mpip_cm_encode(&cm, NULL, 100), MPIP_CM_E_INVAL);
}

UNIT_TEST(encode_writes_only_the_trailer)
{
	u8 buf[100], guard[100];
	struct mpip_cm cm;
	unsigned int n, t;

	memset(guard, 0x5a, sizeof(guard));
	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		random_cm(ctx, &cm, n);
		memset(buf, 0x5a, sizeof(buf));
		t = (unsigned int)mpip_cm_encode(&cm, buf, sizeof(buf));
		CHECK_EQ(t, 28 + 4 * n);
		CHECK(!memcmp(buf + t, guard + t, sizeof(buf) - t));
	}
}

/* ---- round trips ------------------------------------------------------ */

UNIT_TEST(round_trip_field_limits)
{
	static const u32 v32[] = {
		0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	};
	static const u16 v16[] = { 0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff };
	static const u8 v8[] = { 0, 1, 0x7f, 0x80, 0xfe, 0xff };
	struct mpip_cm base, cm;
	unsigned int n, i;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		random_cm(ctx, &base, n);
		for (i = 0; i < 6; i++) {
			cm = base;
			cm.node_id = v32[i];
			round_trip(ctx, &cm);
			cm = base;
			cm.timestamp_us = v32[i];
			round_trip(ctx, &cm);
			cm = base;
			cm.path_delay_us = v32[i];
			round_trip(ctx, &cm);
			cm = base;
			cm.session_id = v16[i];
			round_trip(ctx, &cm);
			cm = base;
			cm.path_id = v8[i];
			round_trip(ctx, &cm);
			cm = base;
			cm.fb_path_id = v8[i];
			round_trip(ctx, &cm);
			cm = base;
			cm.flags = v8[i];
			round_trip(ctx, &cm);
		}
		/* Everything at 0 and everything at its maximum. */
		memset(&cm, 0, sizeof(cm));
		cm.naddrs = (u8)n;
		round_trip(ctx, &cm);
		memset(&cm, 0xff, sizeof(cm));
		cm.naddrs = (u8)n;
		cm.xflags = MPIP_CM_X_MASK;
		round_trip(ctx, &cm);
	}
}

UNIT_TEST(round_trip_all_flags_all_counts)
{
	struct mpip_cm cm;
	unsigned int n, f;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		for (f = 0; f <= 0xff; f++) {
			random_cm(ctx, &cm, n);
			cm.flags = (u8)f;
			if (!round_trip(ctx, &cm))
				return;
		}
	}
}

UNIT_TEST(round_trip_address_limits)
{
	static const u8 lo[4] = { 0, 0, 0, 0 }, hi[4] = { 255, 255, 255, 255 };
	static const u8 mix[4] = { 10, 1, 2, 254 };
	struct mpip_cm cm;
	unsigned int n, i;

	for (n = 1; n <= MPIP_CM_MAX_ADDRS; n++) {
		random_cm(ctx, &cm, n);
		for (i = 0; i < n; i++)
			memcpy(&cm.addrs[i], lo, 4);
		round_trip(ctx, &cm);
		for (i = 0; i < n; i++)
			memcpy(&cm.addrs[i], hi, 4);
		round_trip(ctx, &cm);
		for (i = 0; i < n; i++)
			memcpy(&cm.addrs[i], i & 1 ? mix : hi, 4);
		round_trip(ctx, &cm);
	}
}

UNIT_TEST(unknown_flags_pass_through)
{
	u8 buf[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	int t;

	random_cm(ctx, &cm, 1);
	cm.flags = 0xc0;
	t = mpip_cm_encode(&cm, buf, sizeof(buf));
	CHECK_EQ(decode_exact(buf, (unsigned int)t, &out), t);
	CHECK_EQ(out.flags, 0xc0);
	cm.flags = 0xff;
	t = mpip_cm_encode(&cm, buf, sizeof(buf));
	CHECK_EQ(decode_exact(buf, (unsigned int)t, &out), t);
	CHECK_EQ(out.flags, 0xff);
}

UNIT_TEST(decode_clears_unused_addresses)
{
	u8 buf[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int i;
	int t;

	random_cm(ctx, &cm, 3);
	t = mpip_cm_encode(&cm, buf, sizeof(buf));
	memset(&out, 0xee, sizeof(out));
	CHECK_EQ(decode_exact(buf, (unsigned int)t, &out), t);
	for (i = 3; i < MPIP_CM_MAX_ADDRS; i++)
		CHECK_EQ(out.addrs[i], 0);
}

/* ---- ones'-complement sum property ------------------------------------ */

UNIT_TEST(csum_sum_property)
{
	u8 buf[MPIP_CM_MAX_LEN], odd[MPIP_CM_MAX_LEN + 1];
	struct mpip_cm cm;
	unsigned int t;
	int iter;

	for (iter = 0; iter < 50000; iter++) {
		t = encode_random(ctx, buf, &cm, iter % 9);
		if (!CHECK_EQ(ref_fold_sum(buf, t), MPIP_CM_CSUM_SUM))
			break;
		CHECK(get16(buf + t - 12) != 0);
		/* At odd alignment every word is byte-swapped. */
		odd[0] = 0;
		memcpy(odd + 1, buf, t);
		CHECK_EQ(ref_sum_mod(odd, t + 1), 0x0040);
	}
	/* The all-zero CM as well. */
	memset(&cm, 0, sizeof(cm));
	t = (unsigned int)mpip_cm_encode(&cm, buf, sizeof(buf));
	CHECK_EQ(ref_fold_sum(buf, t), MPIP_CM_CSUM_SUM);
}

/*
 * Simulate TCP: pseudo header + 20-byte header + payload with a correct
 * checksum, then the trailer appended.  The payload length sets the
 * trailer's alignment.  The full segment must fail the checksum, and the
 * sum must change by exactly the trailer's contribution.
 */
static void tcp_like(struct unit_ctx *ctx, unsigned int t, unsigned int align)
{
	u8 seg[12 + 20 + 1501 + MPIP_CM_MAX_LEN];
	u8 tr[MPIP_CM_MAX_LEN];
	unsigned int plen, hlen = 12 + 20, len;
	struct mpip_cm cm;
	u32 before, after, diff;
	u16 csum;

	plen = unit_below(ctx, 750) * 2 + align;
	len = hlen + plen;
	unit_fill(ctx, seg, len);
	put16(seg + 12 + 16, 0);
	csum = (u16)~ref_fold_sum(seg, len);
	put16(seg + 12 + 16, csum);
	CHECK_EQ(ref_fold_sum(seg, len), 0xffff);	/* valid */

	encode_random(ctx, tr, &cm, (t - 28) / 4);
	memcpy(seg + len, tr, t);
	before = ref_sum_mod(seg, len);
	after = ref_sum_mod(seg, len + t);
	diff = (after + 0xffff - before) % 0xffff;
	CHECK_EQ_MSG(diff, align ? 0x0040 : 0x4000, "t %u plen %u", t, plen);
	CHECK(diff != 0);
	/* A receiver's check: folded sum must be 0xffff; it is not. */
	CHECK_EQ_MSG(ref_fold_sum(seg, len + t), align ? 0x0040 : 0x4000,
		     "t %u plen %u", t, plen);
}

UNIT_TEST(csum_tcp_like_both_alignments)
{
	unsigned int t, align;
	int iter;

	for (t = MPIP_CM_MIN_LEN; t <= MPIP_CM_MAX_LEN; t += 4)
		for (align = 0; align < 2; align++)
			for (iter = 0; iter < 500; iter++)
				tcp_like(ctx, t, align);
}

UNIT_TEST(csum_random_payload_difference)
{
	u8 buf[2000 + MPIP_CM_MAX_LEN], tr[MPIP_CM_MAX_LEN];
	unsigned int t, align, plen;
	struct mpip_cm cm;
	u32 diff;
	int iter;

	for (t = MPIP_CM_MIN_LEN; t <= MPIP_CM_MAX_LEN; t += 4) {
		for (align = 0; align < 2; align++) {
			for (iter = 0; iter < 500; iter++) {
				plen = unit_below(ctx, 1000) * 2 + align;
				unit_fill(ctx, buf, plen);
				encode_random(ctx, tr, &cm, (t - 28) / 4);
				memcpy(buf + plen, tr, t);
				diff = (ref_sum_mod(buf, plen + t) + 0xffff -
					ref_sum_mod(buf, plen)) % 0xffff;
				CHECK_EQ_MSG(diff != 0, 1, "t %u plen %u", t,
					     plen);
			}
		}
	}
}

/* ---- peek ------------------------------------------------------------- */

UNIT_TEST(peek_too_short)
{
	u8 tr[MPIP_CM_MAX_LEN], *p;
	struct mpip_cm cm;
	unsigned int avail, t;

	t = encode_random(ctx, tr, &cm, 0);
	for (avail = 0; avail < MPIP_CM_MIN_LEN; avail++) {
		/* A perfect tail, but too few bytes in the payload. */
		CHECK_EQ_MSG(mpip_cm_peek(tr + t - 8, avail), MPIP_CM_E_SHORT,
			     "avail %u", avail);
		/* Must not even read the tail: exact buffer of avail bytes. */
		p = exact_copy(tr, avail);
		CHECK_EQ(mpip_cm_peek(p, avail), MPIP_CM_E_SHORT);
		free(p);
	}
}

UNIT_TEST(peek_bad_magic_and_version)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm;
	unsigned int t, v;

	t = encode_random(ctx, tr, &cm, 2);
	CHECK_EQ(peek_exact(tr, t), t);
	for (v = 0; v <= 0xff; v++) {
		tr[t - 8] = (u8)v;
		CHECK_EQ_MSG(peek_exact(tr, t),
			     v == MPIP_CM_MAGIC ? (int)t : MPIP_CM_E_MAGIC,
			     "magic %#x", v);
	}
	tr[t - 8] = MPIP_CM_MAGIC;
	for (v = 0; v <= 0xff; v++) {
		tr[t - 7] = (u8)v;
		CHECK_EQ_MSG(peek_exact(tr, t),
			     v == MPIP_CM_VERSION ? (int)t : MPIP_CM_E_VERSION,
			     "version %u", v);
	}
	/* Magic is checked first. */
	tr[t - 8] = 0;
	tr[t - 7] = 0;
	CHECK_EQ(peek_exact(tr, t), MPIP_CM_E_MAGIC);
}

UNIT_TEST(peek_every_length_value)
{
	static const unsigned int avails[] = {
		28, 29, 31, 32, 44, 59, 60, 61, 64, 1500, 65535, 65536, 1u << 31,
	};
	u8 tail[8] = { MPIP_CM_MAGIC, MPIP_CM_VERSION, 0, 0, 1, 2, 3, 4 };
	unsigned int i, l, avail;
	int want;

	for (i = 0; i < sizeof(avails) / sizeof(avails[0]); i++) {
		avail = avails[i];
		for (l = 0; l <= 0xffff; l++) {
			put16(tail + 2, l);
			want = l >= 28 && l <= 60 && (l - 28) % 4 == 0 &&
			       l <= avail ? (int)l : MPIP_CM_E_LENGTH;
			if (!CHECK_EQ_MSG(mpip_cm_peek(tail, avail), want,
					  "avail %u length %u", avail, l))
				break;
		}
	}
}

/* ---- decode: every rejection class ------------------------------------ */

UNIT_TEST(decode_too_short)
{
	u8 tr[MPIP_CM_MAX_LEN], rnd[MPIP_CM_MIN_LEN];
	struct mpip_cm cm, out;
	unsigned int t, len;

	t = encode_random(ctx, tr, &cm, 0);
	unit_fill(ctx, rnd, sizeof(rnd));
	for (len = 0; len < MPIP_CM_MIN_LEN; len++) {
		CHECK_EQ_MSG(decode_exact(tr + t - len, len, &out),
			     MPIP_CM_E_SHORT, "suffix len %u", len);
		CHECK_EQ_MSG(decode_exact(tr, len, &out), MPIP_CM_E_SHORT,
			     "prefix len %u", len);
		CHECK_EQ_MSG(decode_exact(rnd, len, &out), MPIP_CM_E_SHORT,
			     "random len %u", len);
	}
	CHECK_EQ(mpip_cm_decode(NULL, 0, &out), MPIP_CM_E_SHORT);
}

/*
 * Every value but @good of the footer byte at @back bytes before the end
 * is rejected with @err, with and without a matching check.
 */
static void check_footer_byte(struct unit_ctx *ctx, unsigned int back,
			      unsigned int good, int err)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t, v;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm, n);
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

UNIT_TEST(decode_bad_magic)
{
	check_footer_byte(ctx, 8, MPIP_CM_MAGIC, MPIP_CM_E_MAGIC);
}

UNIT_TEST(decode_bad_version)
{
	check_footer_byte(ctx, 7, MPIP_CM_VERSION, MPIP_CM_E_VERSION);
}

UNIT_TEST(decode_bad_length_every_value)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t, l;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm, n);
		for (l = 0; l <= 0xffff; l++) {
			if (l == t)
				continue;
			put16(tr + t - 6, l);
			ref_fix(tr, t);	/* only the length is wrong */
			if (!CHECK_EQ_MSG(mpip_cm_decode(tr, t, &out),
					  MPIP_CM_E_LENGTH, "t %u length %u",
					  t, l))
				break;
		}
		/* A few again from exact heap buffers. */
		put16(tr + t - 6, t + 4);	/* larger than avail */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, t + 1);	/* not a multiple of 4 */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, 27);		/* below the minimum */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, 64);		/* above the maximum */
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		put16(tr + t - 6, 0xffff);
		ref_fix(tr, t);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
	}
}

UNIT_TEST(decode_length_differs_from_len)
{
	u8 buf[MPIP_CM_MAX_LEN + 8], tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t, extra;

	for (n = 0; n < MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm, n);
		/* A valid trailer at the end of a longer buffer. */
		for (extra = 1; extra <= 8; extra++) {
			unit_fill(ctx, buf, extra);
			memcpy(buf + extra, tr, t);
			CHECK_EQ_MSG(decode_exact(buf, t + extra, &out),
				     MPIP_CM_E_LENGTH, "t %u extra %u", t,
				     extra);
		}
		/* Its own length field says 4 bytes less than it has. */
		if (t >= 32) {
			put16(tr + t - 6, t - 4);
			ref_fix(tr, t);
			CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_LENGTH);
		}
	}
}

/*
 * Expected result of flipping bit @bit in byte @i of a @t-byte trailer.
 * The high nibble of the count byte holds the extended flags, which only
 * the checks protect.
 */
static int flip_expect(unsigned int i, unsigned int bit, unsigned int t)
{
	if (i == t - 9 && bit < 4)
		return MPIP_CM_E_ADDRS;
	if (i == t - 8)
		return MPIP_CM_E_MAGIC;
	if (i == t - 7)
		return MPIP_CM_E_VERSION;
	if (i == t - 6 || i == t - 5)
		return MPIP_CM_E_LENGTH;
	return MPIP_CM_E_CHECK;
}

UNIT_TEST(decode_every_single_bit_flip)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t, i, bit;
	int iter;

	for (iter = 0; iter < 20; iter++) {
		for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
			t = encode_random(ctx, tr, &cm, n);
			for (i = 0; i < t; i++) {
				for (bit = 0; bit < 8; bit++) {
					tr[i] ^= (u8)(1 << bit);
					CHECK_EQ_MSG(decode_exact(tr, t, &out),
						     flip_expect(i, bit, t),
						     "t %u byte %u bit %u",
						     t, i, bit);
					tr[i] ^= (u8)(1 << bit);
				}
			}
			CHECK_EQ(decode_exact(tr, t, &out), t);
		}
	}
}

UNIT_TEST(decode_bad_check_and_adjust)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t;
	u32 a;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm, n);
		/* CRC off by one, sum made right again. */
		put32(tr + t - 4, get32(tr + t - 4) + 1);
		ref_fix_sum(tr, t);
		CHECK_EQ(ref_fold_sum(tr, t), MPIP_CM_CSUM_SUM);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);

		/* Body changed, CRC recomputed, adjustment stale. */
		t = encode_random(ctx, tr, &cm, n);
		a = get16(tr + t - 12);
		tr[5] ^= 0x10;
		ref_fix(tr, t);
		put16(tr + t - 12, a);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);

		/* Adjustment alone wrong (the CRC does not cover it). */
		t = encode_random(ctx, tr, &cm, n);
		a = get16(tr + t - 12);
		put16(tr + t - 12, a + 1);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);
		put16(tr + t - 12, 0);
		CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);
	}
}

/*
 * 0x0000 and 0xffff are both zero in ones' complement.  The encoder only
 * ever sends 0xffff; the decoder rejects 0x0000 so that every accepted
 * trailer is exactly what the encoder would write.
 */
UNIT_TEST(decode_rejects_noncanonical_zero_adjust)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int t = 0;
	u32 ts;
	int found = 0;

	random_cm(ctx, &cm, 1);
	for (ts = 0; ts < (1u << 22) && !found; ts++) {
		cm.timestamp_us = ts;
		t = (unsigned int)mpip_cm_encode(&cm, tr, sizeof(tr));
		found = get16(tr + t - 12) == 0xffff;
	}
	if (!CHECK(found))
		return;
	CHECK_EQ(decode_exact(tr, t, &out), t);
	put16(tr + t - 12, 0);
	CHECK_EQ(ref_fold_sum(tr, t), MPIP_CM_CSUM_SUM);	/* sum still ok */
	CHECK_EQ(decode_exact(tr, t, &out), MPIP_CM_E_CHECK);
}

UNIT_TEST(decode_address_count_mismatch)
{
	u8 tr[MPIP_CM_MAX_LEN], cut[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t, v;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm, n);
		for (v = 0; v <= 0xff; v++) {
			/* The high nibble holds flags, not the count. */
			if ((v & 0x0f) == n)
				continue;
			tr[t - 9] = (u8)v;
			ref_fix(tr, t);	/* only the count is wrong */
			CHECK_EQ_MSG(decode_exact(tr, t, &out),
				     MPIP_CM_E_ADDRS, "n %u count %u", n, v);
		}
		if (!n)
			continue;
		/*
		 * Truncated list: the last address is cut out and the length
		 * field follows, but N still counts it.
		 */
		t = encode_random(ctx, tr, &cm, n);
		memcpy(cut, tr, t - 16);
		memcpy(cut + t - 16, tr + t - 12, 12);
		put16(cut + t - 4 - 6, t - 4);
		ref_fix(cut, t - 4);
		CHECK_EQ_MSG(decode_exact(cut, t - 4, &out), MPIP_CM_E_ADDRS,
			     "n %u", n);
	}
}

UNIT_TEST(decode_every_part_of_a_trailer)
{
	u8 tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int n, t, k;
	int r;

	for (n = 0; n <= MPIP_CM_MAX_ADDRS; n++) {
		t = encode_random(ctx, tr, &cm, n);
		for (k = 0; k <= t; k++) {
			/* The last k bytes, and the first k bytes. */
			r = decode_exact(tr + t - k, k, &out);
			CHECK_EQ_MSG(r, k == t ? (int)t :
				     k < 28 ? MPIP_CM_E_SHORT :
				     MPIP_CM_E_LENGTH, "n %u suffix %u", n, k);
			r = decode_exact(tr, k, &out);
			CHECK_EQ_MSG(r < 0, k != t, "n %u prefix %u", n, k);
		}
	}
}

/* A trailer at the end of a payload, found the way a receiver does it. */
UNIT_TEST(find_trailer_in_payload)
{
	u8 pkt[1500 + MPIP_CM_MAX_LEN], tr[MPIP_CM_MAX_LEN];
	struct mpip_cm cm, out;
	unsigned int plen, t, avail;
	int iter, r;

	for (iter = 0; iter < 5000; iter++) {
		plen = unit_below(ctx, 1501);
		unit_fill(ctx, pkt, plen);
		t = encode_random(ctx, tr, &cm, unit_below(ctx, 9));
		memcpy(pkt + plen, tr, t);
		avail = plen + t;
		r = peek_exact(pkt, avail);
		if (!CHECK_EQ(r, t))
			break;
		CHECK_EQ(decode_exact(pkt + avail - r, (unsigned int)r, &out),
			 t);
		CHECK(cm_same(&cm, &out));
		/* The payload proper carries no trailer (or a bogus one). */
		if (plen >= 8)
			CHECK(peek_exact(pkt, plen) < 0 ||
			      decode_exact(pkt + plen - peek_exact(pkt, plen),
					   peek_exact(pkt, plen), &out) < 0);
	}
	/* Trailer longer than what the payload holds. */
	t = encode_random(ctx, tr, &cm, 8);
	CHECK_EQ(mpip_cm_peek(tr + t - 8, t - 4), MPIP_CM_E_LENGTH);
}

/* ---- fuzzing ---------------------------------------------------------- */

/* An accepted input must be exactly what the encoder writes for it. */
static void check_accepted(struct unit_ctx *ctx, const u8 *buf,
			   unsigned int len, int r, const struct mpip_cm *cm)
{
	u8 again[MPIP_CM_MAX_LEN];

	if (r < 0)
		return;
	CHECK_EQ(r, len);
	CHECK_EQ(mpip_cm_encode(cm, again, sizeof(again)), len);
	CHECK(!memcmp(again, buf, len));
	CHECK_EQ(peek_exact(buf, len), len);
}

UNIT_TEST(fuzz_random_bytes)
{
	u8 buf[96];
	struct mpip_cm out;
	unsigned int len;
	int iter, r, accepted = 0;

	for (iter = 0; iter < FUZZ_ITERS; iter++) {
		len = unit_below(ctx, sizeof(buf) + 1);
		unit_fill(ctx, buf, len);
		/* Half the time, give it a plausible tail to get further. */
		if (len >= 8 && (iter & 1)) {
			buf[len - 8] = MPIP_CM_MAGIC;
			buf[len - 7] = MPIP_CM_VERSION;
			if (iter & 2)
				put16(buf + len - 6, len);
			if ((iter & 4) && len >= 12 && len <= 60 && len >= 28)
				buf[len - 9] = (u8)((len - 28) / 4);
			if ((iter & 8) && len >= 28)
				ref_fix(buf, len);
		}
		r = decode_exact(buf, len, &out);
		if (r >= 0)
			accepted++;
		check_accepted(ctx, buf, len, r, &out);
		if (len >= 8)
			(void)peek_exact(buf, len);
	}
	unit_diag("fuzz_random_bytes: %d of %d accepted", accepted, FUZZ_ITERS);
	CHECK(accepted > 0);	/* the fixed-up ones must get through */
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
		if (l + i <= 96) {
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
			put16(buf + l - 6, 24 + 4 * unit_below(ctx, 12) +
			      unit_below(ctx, 2));
		break;
	default:	/* change a body byte */
		if (l > 16)
			buf[unit_below(ctx, 16)] ^= (u8)(unit_rand32(ctx) | 1);
		break;
	}
}

UNIT_TEST(fuzz_mutated_trailers)
{
	u8 buf[96];
	struct mpip_cm cm, out;
	unsigned int len, k, nmut;
	int iter, r, accepted = 0, fixed = 0;

	for (iter = 0; iter < FUZZ_ITERS; iter++) {
		len = encode_random(ctx, buf, &cm, unit_below(ctx, 9));
		nmut = 1 + unit_below(ctx, 4);
		for (k = 0; k < nmut; k++)
			mutate(ctx, buf, &len);
		/* Sometimes make the check fields right for the new bytes. */
		if (unit_below(ctx, 2) && len >= 28) {
			ref_fix(buf, len);
			fixed++;
		}
		r = decode_exact(buf, len, &out);
		if (r >= 0)
			accepted++;
		check_accepted(ctx, buf, len, r, &out);
		if (len >= 8)
			(void)peek_exact(buf, len);
	}
	unit_diag("fuzz_mutated_trailers: %d of %d accepted (%d fixed up)",
		  accepted, FUZZ_ITERS, fixed);
	CHECK(accepted > 1000);
}

/* ---- timestamps ------------------------------------------------------- */

UNIT_TEST(ts_diff_wraps)
{
	CHECK_EQ(mpip_ts_diff(5, 0xfffffffb), 10);
	CHECK_EQ(mpip_ts_diff(0xfffffffb, 5), -10);
	CHECK_EQ(mpip_ts_diff(1000, 1000), 0);
	CHECK_EQ(mpip_ts_diff(0x7fffffff, 0), 0x7fffffff);
	CHECK_EQ(mpip_ts_diff(0x80000000, 0), -0x7fffffffLL - 1);
	CHECK_EQ(mpip_ts_diff(0, 0x80000001), 0x7fffffff);
}
