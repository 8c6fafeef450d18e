// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the v2 CM trailer codec of kernel/core/cm.c
 * (mpip_cm2_peek/decode/encode/write, mpip_cm_peek_any/decode_any).
 *
 * One input is a run of records; each record's first byte chooses what
 * it is:
 *
 *   raw      bytes from the network, decoded from a heap buffer of
 *            exactly their length (ASan sees any read beyond).
 *   shaped   bytes given a v2 tail (magic, version 2, their own length,
 *            a count nibble) and a right check and adjustment, so that
 *            the decoder's N, E and field handling is reached.
 *   genuine  CM fields, an extension, a counter and a protocol: encoded
 *            with the sender's key, then decoded.
 *   invalid  fields the encoder must refuse (too many addresses, an
 *            extension too long or not a multiple of 4, extended flags
 *            beyond 4 bits, counter 0, too small a buffer).
 *
 * Checks, any failure aborts:
 *  - every result of the decoders equals that of a model written here
 *    from Documentation/wire-format.rst (its own CRC and sum), the sum
 *    being that of a TCP trailer or of a UDP one at a place the input
 *    chooses, 0x8000 more for a control CM (flag CTRL);
 *  - a decoded CM written back (mpip_cm2_write(), v1: mpip_cm_encode())
 *    gives exactly the bytes it was decoded from;
 *  - decode(encode(x)) == x, the auth block being the one
 *    mpip_auth_seal() makes, and the MAC verifies with the receiver's
 *    key; bytes that are not a genuine trailer never verify;
 *  - a refused encode writes nothing.
 *
 * Build and run: make -C tests/fuzz run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "cm.h"

#define RAW_MAX	160

struct input {
	const u8 *p;
	size_t n;
};

static const struct mpip_auth_key key_tx = {
	0x0123456789abcdefULL, 0x0f1e2d3c4b5a6978ULL,
};

static void fail(const char *what, int got, int want)
{
	fprintf(stderr, "fuzz_cm2: %s: got %d, want %d\n", what, got, want);
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

/* ---- the model -------------------------------------------------------- */

static u32 model_crc(const u8 *p, unsigned int n)
{
	u32 crc = 0xffffffff;
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (crc & 1 ? 0x82f63b78 : 0);
	}
	return ~crc;
}

static unsigned int be16(const u8 *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static u32 be32(const u8 *p)
{
	return (u32)be16(p) << 16 | be16(p + 2);
}

/* Ones'-complement sum of @n (even) bytes, folded; 0xffff for "zero". */
static unsigned int model_sum(const u8 *p, unsigned int n)
{
	unsigned long s = 0;
	unsigned int i;

	for (i = 0; i < n; i += 2)
		s += be16(p + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (unsigned int)s;
}

/*
 * What the @t bytes at @b must sum to where the place's sum is @sum (0:
 * a TCP trailer, 0x4000): "Checksum adjustment", "The sum of a UDP trailer
 * in version 2", "Control datagrams and NATs".
 */
static unsigned int model_target(unsigned int sum, const u8 *b,
				 unsigned int t)
{
	unsigned int s;

	if (!sum || sum == 0x4000)
		return 0x4000;
	if (!(b[t - 10] & 0x04))
		return sum;
	s = sum + 0x8000;
	return (s & 0xffff) + (s >> 16);
}

/* A UDP trailer's sum for @t bytes at offset @off: -t, swapped if odd. */
static unsigned int model_udp_sum(unsigned int t, unsigned int off)
{
	unsigned int s = (0xffff - t) & 0xffff;

	return off & 1 ? ((s << 8) | (s >> 8)) & 0xffff : s;
}

/* Check and adjustment for the @t bytes at @b as they stand, at @sum. */
static void model_fix(u8 *b, unsigned int t, unsigned int sum)
{
	unsigned int a;
	u32 crc;

	b[t - 12] = 0;
	b[t - 11] = 0;
	crc = model_crc(b, t - 4);
	b[t - 4] = (u8)(crc >> 24);
	b[t - 3] = (u8)(crc >> 16);
	b[t - 2] = (u8)(crc >> 8);
	b[t - 1] = (u8)crc;
	a = model_target(sum, b, t) + (~model_sum(b, t) & 0xffff);
	a = (a & 0xffff) + (a >> 16);
	b[t - 12] = (u8)(a >> 8);
	b[t - 11] = (u8)a;
}

static int model_integrity(const u8 *b, unsigned int t, unsigned int sum)
{
	u8 tmp[RAW_MAX];

	memcpy(tmp, b, t);
	tmp[t - 12] = 0;
	tmp[t - 11] = 0;
	if (be32(b + t - 4) != model_crc(tmp, t - 4) || !be16(b + t - 12) ||
	    model_sum(b, t) != model_target(sum, b, t))
		return MPIP_CM_E_CHECK;
	return (int)t;
}

/* What mpip_cm2_decode() must return for the @len bytes at @b, at @sum. */
static int model_v2(const u8 *b, unsigned int len, unsigned int sum)
{
	unsigned int t, n;

	if (len < 40)
		return MPIP_CM_E_SHORT;
	if (b[len - 8] != 0xd7)
		return MPIP_CM_E_MAGIC;
	if (b[len - 7] != 2)
		return MPIP_CM_E_VERSION;
	t = be16(b + len - 6);
	if (t < 40 || t > 104 || t % 4 || t != len)
		return MPIP_CM_E_LENGTH;
	n = b[t - 9] & 0x0f;
	if (n > 8 || 40 + 4 * n > t)
		return MPIP_CM_E_ADDRS;
	if (t - 40 - 4 * n > 32)
		return MPIP_CM_E_EXT;
	return model_integrity(b, t, sum);
}

/* What mpip_cm_decode_any() must return (a v1 trailer sums to 0x4000). */
static int model_any(const u8 *b, unsigned int len, unsigned int sum)
{
	unsigned int t, n;

	if (len < 28)
		return MPIP_CM_E_SHORT;
	if (b[len - 8] != 0xd7)
		return MPIP_CM_E_MAGIC;
	if (b[len - 7] == 2)
		return model_v2(b, len, sum);
	if (b[len - 7] != 1)
		return MPIP_CM_E_VERSION;
	t = be16(b + len - 6);
	if (t < 28 || t > 60 || t % 4 || t != len)
		return MPIP_CM_E_LENGTH;
	n = b[t - 9] & 0x0f;
	if (n > 8 || 28 + 4 * n != t)
		return MPIP_CM_E_ADDRS;
	return model_integrity(b, t, 0);
}

/* ---- checks ----------------------------------------------------------- */

static u8 *exact(const u8 *src, unsigned int n)
{
	u8 *p = malloc(n ? n : 1);

	if (!p)
		abort();
	memcpy(p, src, n);
	return p;
}

/* Does the MAC of a decoded v2 CM verify with the receiver's key? */
static int verifies(const struct mpip_cm2 *cm2, u8 proto, u64 top, u64 *ctr)
{
	struct mpip_auth_ctx ctx;
	struct mpip_replay win;

	mpip_replay_init(&win);
	win.top = top;
	mpip_cm2_auth_ctx(cm2, proto, &ctx);
	return !mpip_auth_check(&key_tx, &win, &cm2->cm, &ctx, cm2->auth,
				sizeof(cm2->auth), ctr);
}

/*
 * Bytes from the fuzzer verified (under @proto, counter @ctr): only if
 * they carry the MAC the key gives, which libFuzzer can copy into its
 * input from the comparison it traces in mpip_auth_mac_ok() (it did, in
 * seconds); a forgery would carry another.
 */
static void raw_verified(const struct mpip_cm2 *cm2, u8 proto, u64 ctr)
{
	struct mpip_auth_ctx ctx;
	u64 mac = 0, got = 0;
	unsigned int i;

	mpip_cm2_auth_ctx(cm2, proto, &ctx);
	if (mpip_auth_mac(&key_tx, &cm2->cm, ctr, &ctx, &mac))
		fail("raw bytes verified, no MAC of them", 0, MPIP_AUTH_E_MAC);
	for (i = 0; i < 8; i++)		/* big-endian on the wire */
		got = got << 8 | cm2->auth[4 + i];
	if (got != mac)
		fail("raw bytes verified with another MAC", 0, MPIP_AUTH_E_MAC);
}

/*
 * Decode the @len bytes at @src every way there is, at a place whose sum
 * is @sum, and check the results against the model; a CM that decodes
 * must write back to @src.  Returns the mpip_cm2_decode() result; fills
 * @out with what it decoded.
 */
static int decode_all(const u8 *src, unsigned int len, u16 sum,
		      struct mpip_cm2 *out)
{
	u8 again[MPIP_CM_ANY_MAX_LEN];
	struct mpip_cm2 any;
	struct mpip_cm v1;
	int r2, ra, r1, want;
	u8 *b = exact(src, len);

	r2 = mpip_cm2_decode(b, len, sum, out);
	want = model_v2(src, len, sum);
	if (r2 != want)
		fail("mpip_cm2_decode", r2, want);
	ra = mpip_cm_decode_any(b, len, sum, &any);
	want = model_any(src, len, sum);
	if (ra != want)
		fail("mpip_cm_decode_any", ra, want);
	r1 = mpip_cm_decode(b, len, &v1);
	if (len >= 8) {
		int p = mpip_cm_peek_any(b + len - 8, len);

		if (ra >= 0 && p != ra)
			fail("mpip_cm_peek_any", p, ra);
		p = mpip_cm2_peek(b + len - 8, len);
		if (r2 >= 0 && p != r2)
			fail("mpip_cm2_peek", p, r2);
	}
	free(b);

	/* the v1 entry points never take v2, the dispatch takes both */
	if (r2 >= 0 && r1 >= 0)
		fail("v1 decoder took a v2 trailer", r1, MPIP_CM_E_VERSION);
	if ((ra >= 0) != (r1 >= 0 || r2 >= 0))
		fail("dispatch disagrees", ra, r1 >= 0 ? r1 : r2);
	if (ra >= 0 && any.version != (r2 >= 0 ? 2 : 1))
		fail("dispatch version", any.version, r2 >= 0 ? 2 : 1);
	if (r1 >= 0 && (memcmp(&v1, &any.cm, sizeof(v1)) || any.ext_len))
		fail("dispatch v1 fields", 0, 1);
	if (r1 >= 0 && (mpip_cm_encode(&v1, again, sizeof(again)) != r1 ||
			memcmp(again, src, len)))
		fail("v1 written back", 0, 1);
	if (r2 < 0)
		return r2;
	if (memcmp(out, &any, sizeof(any)))
		fail("dispatch v2 fields", 0, 1);
	if (mpip_cm2_write(out, again, sizeof(again)) != r2 ||
	    memcmp(again, src, len))
		fail("v2 written back", 0, 1);
	return r2;
}

static void do_raw(struct input *in, int shape)
{
	u8 buf[RAW_MAX];
	struct mpip_cm2 out;
	unsigned int len, i, n;
	u16 sum = 0;
	u64 ctr;
	int r;

	len = take8(in) % (RAW_MAX + 1);
	if (shape) {	/* a v2 length, and the bytes to fill it */
		len = 40 + 4 * (len % 17);
		if (take8(in) & 1)
			len = 40 + 4 * (take8(in) % 9) + 4 * (take8(in) % 9);
	}
	for (i = 0; i < len; i++)
		buf[i] = take8(in);
	if (shape) {
		n = take8(in);
		buf[len - 9] = (u8)n;
		buf[len - 8] = MPIP_CM_MAGIC;
		buf[len - 7] = MPIP_CM2_VERSION;
		buf[len - 6] = (u8)(len >> 8);
		buf[len - 5] = (u8)len;
	}
	/* a UDP trailer's place: its offset from the UDP header */
	if (take8(in) & 1)
		sum = (u16)model_udp_sum(len, take8(in));
	if (shape)
		model_fix(buf, len, sum);
	r = decode_all(buf, len, sum, &out);
	if (r >= 0 && verifies(&out, 6, 0, &ctr))
		raw_verified(&out, 6, ctr);
	if (r >= 0 && verifies(&out, 17, 0, &ctr))
		raw_verified(&out, 17, ctr);
	if (r >= 0) {
		struct mpip_cm_lpol l;

		/* no tier or metered bit past the list, whatever the bytes */
		if (mpip_cm2_lpol(&out, &l) &&
		    ((l.tiers >> (MPIP_CM_TIER_BITS * out.cm.naddrs)) ||
		     (l.metered >> out.cm.naddrs)))
			fail("link policy past the list", r, (int)l.tiers);
	}
}

/* CM fields, counts as they come. */
static void take_cm2(struct input *in, struct mpip_cm2 *cm2)
{
	struct mpip_cm *cm = &cm2->cm;
	unsigned int i, n;

	memset(cm2, 0, sizeof(*cm2));
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
	cm2->ext_len = take8(in);
	n = cm2->ext_len < MPIP_CM2_EXT_MAX ? cm2->ext_len : MPIP_CM2_EXT_MAX;
	for (i = 0; i < n; i++)
		cm2->ext[i] = take8(in);
}

static void do_genuine(struct input *in)
{
	u8 buf[MPIP_CM_ANY_MAX_LEN], blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_cm2 cm2, out;
	struct mpip_auth_ctx ctx;
	u64 ctr, got = 0;
	u8 proto;
	int t, r;

	take_cm2(in, &cm2);
	if (cm2.cm.naddrs > MPIP_CM_MAX_ADDRS)
		cm2.cm.naddrs = MPIP_CM_MAX_ADDRS;
	cm2.ext_len = (u8)(4 * (cm2.ext_len % (MPIP_CM2_EXT_MAX / 4 + 1)));
	memset(cm2.ext + cm2.ext_len, 0, MPIP_CM2_EXT_MAX - cm2.ext_len);
	ctr = take(in, 8);
	if (!ctr)
		ctr = 1;
	proto = take8(in);
	/* a UDP trailer at an offset of the input's, or a TCP one */
	cm2.sum = proto == 17 ? (u16)model_udp_sum(mpip_cm2_len(&cm2),
						   take8(in)) : 0;
	/* what the decoder fills in must not matter to the encoder */
	cm2.version = take8(in);
	cm2.auth[take8(in) % MPIP_CM2_AUTH_LEN] = take8(in);

	t = mpip_cm2_encode(&cm2, &key_tx, ctr, proto, buf, sizeof(buf));
	if (t != (int)mpip_cm2_len(&cm2))
		fail("encode", t, (int)mpip_cm2_len(&cm2));
	mpip_cm2_auth_ctx(&cm2, proto, &ctx);
	if (mpip_auth_seal(&key_tx, &cm2.cm, ctr, &ctx, blk))
		fail("seal", -1, 0);
	r = decode_all(buf, (unsigned int)t, cm2.sum, &out);
	if (r != t)
		fail("decode(encode(x))", r, t);
	if (memcmp(&out.cm, &cm2.cm, sizeof(out.cm)) ||
	    out.ext_len != cm2.ext_len ||
	    memcmp(out.ext, cm2.ext, sizeof(out.ext)) ||
	    memcmp(out.auth, blk, sizeof(blk)) || out.version != 2)
		fail("decode(encode(x)) != x", 0, 1);
	if (!verifies(&out, proto, ctr - 1, &got) || got != ctr)
		fail("genuine CM does not verify", 0, 1);
	if (verifies(&out, proto ^ 0x80, ctr - 1, &got))
		fail("verified with another protocol", 0, 1);
}

static void do_invalid(struct input *in)
{
	u8 buf[MPIP_CM_ANY_MAX_LEN + 8], zero[sizeof(buf)];
	struct mpip_cm2 cm2;
	unsigned int len = sizeof(buf);
	u64 ctr;
	int valid, r;

	take_cm2(in, &cm2);
	ctr = take8(in) & 1 ? 0 : 1 + take8(in);
	if (take8(in) & 1)
		len = take8(in) % sizeof(buf);
	valid = cm2.cm.naddrs <= MPIP_CM_MAX_ADDRS &&
		cm2.cm.xflags <= MPIP_CM_X_MASK &&
		cm2.ext_len <= MPIP_CM2_EXT_MAX && !(cm2.ext_len % 4) &&
		len >= 40 + 4u * cm2.cm.naddrs + cm2.ext_len;
	memset(buf, 0, sizeof(buf));
	memset(zero, 0, sizeof(zero));
	r = mpip_cm2_encode(&cm2, &key_tx, ctr, 17, buf, len);
	if (valid && ctr) {
		if (r != (int)mpip_cm2_len(&cm2))
			fail("valid encode", r, (int)mpip_cm2_len(&cm2));
		return;
	}
	if (r != MPIP_CM_E_INVAL || memcmp(buf, zero, sizeof(buf)))
		fail("invalid encode", r, MPIP_CM_E_INVAL);
	r = mpip_cm2_write(&cm2, buf, len);
	if (valid != (r >= 0) || (!valid && memcmp(buf, zero, sizeof(buf))))
		fail("write", r, valid ? 0 : MPIP_CM_E_INVAL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };

	while (in.n) {
		switch (take8(&in) % 6) {
		case 0:
			do_raw(&in, 0);
			break;
		case 1:
		case 2:
			do_raw(&in, 1);
			break;
		case 3:
		case 4:
			do_genuine(&in);
			break;
		default:
			do_invalid(&in);
		}
	}
	return 0;
}
