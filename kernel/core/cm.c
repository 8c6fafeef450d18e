// SPDX-License-Identifier: GPL-2.0
/*
 * mpip control-message (CM) trailer, wire formats v1 and v2: encoders and
 * decoders.
 *
 * Portable C: no kernel API, only the types and memset/memcpy that
 * compat.h provides, and the kernel's crc32c() in the module.  The
 * layouts are described in cm.h and in Documentation/wire-format.rst.
 * v2's auth block comes from auth.c.
 */
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif
#include "cm.h"
#include "auth.h"

static_assert(MPIP_CM2_AUTH_LEN == MPIP_AUTH_BLOCK_LEN,
	      "the v2 auth block is auth.c's");
static_assert(MPIP_CM2_EXT_MAX == MPIP_AUTH_EXT_MAX,
	      "the MAC covers every extension byte");

/* Offsets inside the footer, from its first byte (trailer offset T-12). */
#define CM_FOOT_ADJUST	0
#define CM_FOOT_FLAGS	2
#define CM_FOOT_NADDRS	3
#define CM_FOOT_MAGIC	4
#define CM_FOOT_VERSION	5
#define CM_FOOT_LENGTH	6
#define CM_FOOT_CHECK	8

/* Offsets inside the tail, the last MPIP_CM_TAIL_LEN bytes. */
#define CM_TAIL_MAGIC	0
#define CM_TAIL_VERSION	1
#define CM_TAIL_LENGTH	2

static u16 cm_get16(const u8 *p)
{
	return (u16)((p[0] << 8) | p[1]);
}

static u32 cm_get32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) |
	       ((u32)p[2] << 8) | (u32)p[3];
}

static void cm_put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void cm_put32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

#ifdef __KERNEL__
/* The kernel's CRC32C: hardware-accelerated where the CPU has it. */
u32 mpip_crc32c(u32 crc, const u8 *buf, unsigned int len)
{
	return ~crc32c(~crc, buf, len);
}
#else
/* CRC32C of one nibble: reflected polynomial 0x82F63B78. */
static const u32 cm_crc32c_nibble[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1,
	0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
	0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

u32 mpip_crc32c(u32 crc, const u8 *buf, unsigned int len)
{
	unsigned int i;

	crc = ~crc;
	for (i = 0; i < len; i++) {
		crc ^= buf[i];
		crc = (crc >> 4) ^ cm_crc32c_nibble[crc & 0xf];
		crc = (crc >> 4) ^ cm_crc32c_nibble[crc & 0xf];
	}
	return ~crc;
}
#endif

/* The check field: CRC32C of [0, T-4) with the adjustment taken as zero. */
static u32 cm_check(const u8 *buf, unsigned int t)
{
	static const u8 zero[2];
	const u8 *foot = buf + t - MPIP_CM_FOOTER_LEN;
	u32 crc;

	crc = mpip_crc32c(0, buf, t - MPIP_CM_FOOTER_LEN);
	crc = mpip_crc32c(crc, zero, sizeof(zero));
	return mpip_crc32c(crc, foot + CM_FOOT_FLAGS,
			   CM_FOOT_CHECK - CM_FOOT_FLAGS);
}

/* Fold a 32-bit sum of 16-bit words to a 16-bit ones'-complement sum. */
static u16 cm_fold(u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

/* Ones'-complement sum of @len (even) bytes as big-endian 16-bit words. */
static u16 cm_sum(const u8 *buf, unsigned int len)
{
	unsigned int i;
	u32 sum = 0;

	for (i = 0; i + 1 < len; i += 2)
		sum += cm_get16(buf + i);
	return cm_fold(sum);
}

/*
 * Adjustment that makes the sum of the whole trailer @target (not 0),
 * given the sum @s of the trailer with a zero adjustment.  Never 0:
 * target + ~s is at least 1, and folds to 1..0xffff.
 */
static u16 cm_adjust_to(u16 target, u16 s)
{
	return cm_fold((u32)target + (u16)~s);
}

static u16 cm_adjust(u16 s)
{
	return cm_adjust_to(MPIP_CM_CSUM_SUM, s);
}

static void cm_put_body(const struct mpip_cm *cm, u8 *buf)
{
	unsigned int i;

	cm_put32(buf, cm->node_id);
	cm_put16(buf + 4, cm->session_id);
	buf[6] = cm->path_id;
	buf[7] = cm->fb_path_id;
	cm_put32(buf + 8, cm->timestamp_us);
	cm_put32(buf + 12, cm->path_delay_us);
	for (i = 0; i < cm->naddrs; i++)
		memcpy(buf + MPIP_CM_BODY_LEN + 4 * i, &cm->addrs[i], 4);
}

static void cm_put_footer(const struct mpip_cm *cm, u8 *foot, unsigned int t,
			  u8 version)
{
	cm_put16(foot + CM_FOOT_ADJUST, 0);
	foot[CM_FOOT_FLAGS] = cm->flags;
	foot[CM_FOOT_NADDRS] = cm->naddrs | cm->xflags << 4;
	foot[CM_FOOT_MAGIC] = MPIP_CM_MAGIC;
	foot[CM_FOOT_VERSION] = version;
	cm_put16(foot + CM_FOOT_LENGTH, (u16)t);
	cm_put32(foot + CM_FOOT_CHECK, 0);
}

int mpip_cm_encode(const struct mpip_cm *cm, u8 *buf, unsigned int len)
{
	unsigned int t;
	u8 *foot;

	if (!cm || !buf || cm->naddrs > MPIP_CM_MAX_ADDRS ||
	    cm->xflags > MPIP_CM_X_MASK)
		return MPIP_CM_E_INVAL;
	t = mpip_cm_len(cm);
	if (len < t)
		return MPIP_CM_E_INVAL;

	foot = buf + t - MPIP_CM_FOOTER_LEN;
	cm_put_body(cm, buf);
	cm_put_footer(cm, foot, t, MPIP_CM_VERSION);
	cm_put32(foot + CM_FOOT_CHECK, cm_check(buf, t));
	cm_put16(foot + CM_FOOT_ADJUST, cm_adjust(cm_sum(buf, t)));
	return (int)t;
}

int mpip_cm_peek(const u8 *tail, unsigned int avail)
{
	unsigned int t;

	if (avail < MPIP_CM_TAIL_LEN || avail < MPIP_CM_MIN_LEN)
		return MPIP_CM_E_SHORT;
	if (tail[CM_TAIL_MAGIC] != MPIP_CM_MAGIC)
		return MPIP_CM_E_MAGIC;
	if (tail[CM_TAIL_VERSION] != MPIP_CM_VERSION)
		return MPIP_CM_E_VERSION;
	t = cm_get16(tail + CM_TAIL_LENGTH);
	if (t < MPIP_CM_MIN_LEN || t > MPIP_CM_MAX_LEN ||
	    (t - MPIP_CM_MIN_LEN) % 4 || t > avail)
		return MPIP_CM_E_LENGTH;
	return (int)t;
}

/*
 * Both integrity checks, the words summing to @sum; @t is a length that
 * passed mpip_cm_peek().
 */
static int cm_verify_sum(const u8 *buf, unsigned int t, u16 sum)
{
	const u8 *foot = buf + t - MPIP_CM_FOOTER_LEN;

	if (cm_get32(foot + CM_FOOT_CHECK) != cm_check(buf, t))
		return MPIP_CM_E_CHECK;
	/* An encoder never sends 0, the second zero of ones' complement. */
	if (!cm_get16(foot + CM_FOOT_ADJUST))
		return MPIP_CM_E_CHECK;
	if (cm_sum(buf, t) != sum)
		return MPIP_CM_E_CHECK;
	return 0;
}

static int cm_verify(const u8 *buf, unsigned int t)
{
	return cm_verify_sum(buf, t, MPIP_CM_CSUM_SUM);
}

static void cm_get_fields(const u8 *buf, unsigned int t, struct mpip_cm *cm)
{
	const u8 *foot = buf + t - MPIP_CM_FOOTER_LEN;
	unsigned int i;

	memset(cm, 0, sizeof(*cm));
	cm->node_id = cm_get32(buf);
	cm->session_id = cm_get16(buf + 4);
	cm->path_id = buf[6];
	cm->fb_path_id = buf[7];
	cm->timestamp_us = cm_get32(buf + 8);
	cm->path_delay_us = cm_get32(buf + 12);
	cm->flags = foot[CM_FOOT_FLAGS];
	cm->naddrs = foot[CM_FOOT_NADDRS] & 0x0f;
	cm->xflags = foot[CM_FOOT_NADDRS] >> 4;
	for (i = 0; i < cm->naddrs; i++)
		memcpy(&cm->addrs[i], buf + MPIP_CM_BODY_LEN + 4 * i, 4);
}

int mpip_cm_decode(const u8 *buf, unsigned int len, struct mpip_cm *cm)
{
	unsigned int n;
	int ret;

	if (len < MPIP_CM_MIN_LEN)
		return MPIP_CM_E_SHORT;
	ret = mpip_cm_peek(buf + len - MPIP_CM_TAIL_LEN, len);
	if (ret < 0)
		return ret;
	if ((unsigned int)ret != len)
		return MPIP_CM_E_LENGTH;

	n = buf[len - MPIP_CM_FOOTER_LEN + CM_FOOT_NADDRS] & 0x0f;
	if (n > MPIP_CM_MAX_ADDRS || MPIP_CM_MIN_LEN + 4 * n != len)
		return MPIP_CM_E_ADDRS;

	ret = cm_verify(buf, len);
	if (ret < 0)
		return ret;

	cm_get_fields(buf, len, cm);
	return (int)len;
}

/* ---- wire format v2 ---------------------------------------------------- */

/* Fields an encoder can write: counts within bounds, 4 bits of xflags. */
static int cm2_valid(const struct mpip_cm2 *cm2)
{
	return cm2->cm.naddrs <= MPIP_CM_MAX_ADDRS &&
	       cm2->cm.xflags <= MPIP_CM_X_MASK &&
	       cm2->ext_len <= MPIP_CM2_EXT_MAX && !(cm2->ext_len % 4);
}

/* Write the trailer of @cm2, valid, with auth block @blk; returns T. */
static int cm2_put(const struct mpip_cm2 *cm2, const u8 *blk, u8 *buf)
{
	unsigned int t = mpip_cm2_len(cm2);
	u8 *ext = buf + MPIP_CM_BODY_LEN + 4 * cm2->cm.naddrs;
	u8 *foot = buf + t - MPIP_CM_FOOTER_LEN;

	cm_put_body(&cm2->cm, buf);
	memcpy(ext, cm2->ext, cm2->ext_len);
	memcpy(ext + cm2->ext_len, blk, MPIP_CM2_AUTH_LEN);
	cm_put_footer(&cm2->cm, foot, t, MPIP_CM2_VERSION);
	cm_put32(foot + CM_FOOT_CHECK, cm_check(buf, t));
	cm_put16(foot + CM_FOOT_ADJUST,
		 cm_adjust_to(mpip_cm2_target(cm2->sum, cm2->cm.flags),
			      cm_sum(buf, t)));
	return (int)t;
}

/**
 * mpip_cm2_auth_ctx() - what a v2 CM's MAC covers besides its fields
 * @cm2: the CM
 * @proto: IP protocol of the flow the CM belongs to
 * @ctx: filled in; its extension points into @cm2
 *
 * For mpip_auth_check() on a decoded CM (mpip_cm2_encode() uses it too).
 */
void mpip_cm2_auth_ctx(const struct mpip_cm2 *cm2, u8 proto,
		       struct mpip_auth_ctx *ctx)
{
	ctx->proto = proto;
	ctx->ext_len = cm2->ext_len;
	ctx->ext = cm2->ext;
}

/*
 * Give address @i (below MPIP_CM_MAX_ADDRS) tier @tier (capped at
 * MPIP_CM_TIER_MAX) and say whether it is @metered.
 */
void mpip_cm_lpol_set(struct mpip_cm_lpol *l, unsigned int i,
		      unsigned int tier, bool metered)
{
	unsigned int sh = MPIP_CM_TIER_BITS * i;

	if (i >= MPIP_CM_MAX_ADDRS)
		return;
	if (tier > MPIP_CM_TIER_MAX)
		tier = MPIP_CM_TIER_MAX;
	l->tiers = (l->tiers & ~((u32)MPIP_CM_TIER_MAX << sh)) |
		   (u32)tier << sh;
	l->metered = metered ? l->metered | 1U << i : l->metered & ~(1U << i);
}

/* The backup mask of @l: bit i set if address i's tier is 1 or more. */
u32 mpip_cm_lpol_backups(const struct mpip_cm_lpol *l)
{
	unsigned int i;
	u32 m = 0;

	for (i = 0; i < MPIP_CM_MAX_ADDRS; i++)
		if (mpip_cm_lpol_tier(l, i))
			m |= 1U << i;
	return m;
}

/**
 * mpip_cm_lpol_ext() - the IP_CHANGE extension that carries a link policy
 * @l: the policy of the list the CM carries
 * @ext: MPIP_CM_LPOL_LEN bytes to write it to
 *
 * The shortest form that says it all: nothing if every address is of the
 * main tier and none is metered; the 4-byte backup mask if no tier is
 * above 1 and none is metered (what builds before tiers read); else the
 * 12 bytes of mask, tiers and metered mask.
 *
 * Return: the extension's length, 0, MPIP_CM_LPOL_MASK_LEN or
 * MPIP_CM_LPOL_LEN.
 */
unsigned int mpip_cm_lpol_ext(const struct mpip_cm_lpol *l, u8 *ext)
{
	unsigned int i, top = 0;

	if (!l->tiers && !l->metered)
		return 0;
	cm_put32(ext, mpip_cm_lpol_backups(l));
	for (i = 0; i < MPIP_CM_MAX_ADDRS; i++)
		if (mpip_cm_lpol_tier(l, i) > top)
			top = mpip_cm_lpol_tier(l, i);
	if (top <= 1 && !l->metered)
		return MPIP_CM_LPOL_MASK_LEN;
	cm_put32(ext + 4, l->tiers);
	cm_put32(ext + 8, l->metered);
	return MPIP_CM_LPOL_LEN;
}

/**
 * mpip_cm2_lpol() - the link policy an IP_CHANGE gives its addresses
 * @cm2: a decoded (and authenticated) CM
 * @l: set to the policy, nothing said about addresses at or past the
 *	address count, when the CM says
 *
 * An IP_CHANGE (neither ENABLE nor ENABLED) says: without an extension
 * every address is of the main tier and none is metered; a 4-byte one is
 * the backup mask (tier 1 for each bit set); a 12-byte one is the mask,
 * the tiers and the metered mask, an address's tier the higher of its
 * field and its bit in the mask.  Other CMs, and extensions of other
 * lengths (a nonce, an echo), say nothing.
 * Documentation/wire-format.rst, "Extension contents".
 *
 * Return: true if @cm2 says what its addresses' policy is.
 */
bool mpip_cm2_lpol(const struct mpip_cm2 *cm2, struct mpip_cm_lpol *l)
{
	const struct mpip_cm *cm = &cm2->cm;
	u32 mask = 0, tiers = 0, metered = 0;
	unsigned int i, n = cm->naddrs;

	if (!(cm->flags & MPIP_CM_F_IP_CHANGE) ||
	    (cm->flags & (MPIP_CM_F_ENABLE | MPIP_CM_F_ENABLED)))
		return false;
	if (cm2->ext_len != 0 && cm2->ext_len != MPIP_CM_LPOL_MASK_LEN &&
	    cm2->ext_len != MPIP_CM_LPOL_LEN)
		return false;
	if (cm2->ext_len)
		mask = cm_get32(cm2->ext);
	if (cm2->ext_len == MPIP_CM_LPOL_LEN) {
		tiers = cm_get32(cm2->ext + 4);
		metered = cm_get32(cm2->ext + 8);
	}
	if (n > MPIP_CM_MAX_ADDRS)
		n = MPIP_CM_MAX_ADDRS;
	memset(l, 0, sizeof(*l));
	for (i = 0; i < n; i++) {
		unsigned int t = mpip_cm_tier_field(tiers, i);

		if (!t && (mask & 1U << i))
			t = 1;
		mpip_cm_lpol_set(l, i, t, metered & 1U << i);
	}
	return true;
}

/**
 * mpip_cm2_encode() - write a v2 trailer, its MAC computed
 * @cm2: the CM: fields (the peer's token in @cm2->cm.node_id) and
 *       extension; @cm2->auth and @cm2->version are not read
 * @key: the sender's tx MAC key for the peer
 * @ctr: the CM's counter, not 0 (see mpip_auth_seal())
 * @proto: IP protocol of the flow the CM belongs to
 * @buf: where the trailer goes
 * @len: bytes available at @buf
 *
 * The MAC is computed first, over the canonical MAC input of the fields
 * (auth.c), then the trailer is written and the check and the checksum
 * adjustment are computed over it, MAC included.  Nothing is written on
 * failure.
 *
 * Return: the trailer length, or MPIP_CM_E_INVAL if an argument is NULL,
 * @cm2 has too many addresses or extension bytes, an extension length
 * that is not a multiple of 4 or extended flags beyond MPIP_CM_X_MASK,
 * @ctr is 0 or @buf is too small.
 */
int mpip_cm2_encode(const struct mpip_cm2 *cm2,
		    const struct mpip_auth_key *key, u64 ctr, u8 proto,
		    u8 *buf, unsigned int len)
{
	u8 blk[MPIP_CM2_AUTH_LEN];
	struct mpip_auth_ctx ctx;

	if (!cm2 || !key || !buf || !cm2_valid(cm2) ||
	    len < mpip_cm2_len(cm2))
		return MPIP_CM_E_INVAL;
	mpip_cm2_auth_ctx(cm2, proto, &ctx);
	if (mpip_auth_seal(key, &cm2->cm, ctr, &ctx, blk))
		return MPIP_CM_E_INVAL;
	return cm2_put(cm2, blk, buf);
}

/**
 * mpip_cm2_write() - write a v2 trailer with the auth block it has
 * @cm2: the CM, with @cm2->auth as it is to be sent
 * @buf: where the trailer goes
 * @len: bytes available at @buf
 *
 * A decoded CM written again gives the bytes it was decoded from.  To
 * send a CM, use mpip_cm2_encode(), which computes the auth block.
 *
 * Return: the trailer length, or MPIP_CM_E_INVAL as mpip_cm2_encode().
 */
int mpip_cm2_write(const struct mpip_cm2 *cm2, u8 *buf, unsigned int len)
{
	if (!cm2 || !buf || !cm2_valid(cm2) || len < mpip_cm2_len(cm2))
		return MPIP_CM_E_INVAL;
	return cm2_put(cm2, cm2->auth, buf);
}

/**
 * mpip_cm2_peek() - the length of a v2 trailer, from its tail
 * @tail: the last MPIP_CM_TAIL_LEN bytes of the IP payload
 * @avail: the IP payload's length
 *
 * Return: T, or MPIP_CM_E_SHORT if @avail is below MPIP_CM2_MIN_LEN (then
 * @tail is not read), MPIP_CM_E_MAGIC, MPIP_CM_E_VERSION if the version is
 * not 2, MPIP_CM_E_LENGTH if T is not 40..104 and a multiple of 4, or
 * more than @avail.
 */
int mpip_cm2_peek(const u8 *tail, unsigned int avail)
{
	unsigned int t;

	if (avail < MPIP_CM2_MIN_LEN)
		return MPIP_CM_E_SHORT;
	if (tail[CM_TAIL_MAGIC] != MPIP_CM_MAGIC)
		return MPIP_CM_E_MAGIC;
	if (tail[CM_TAIL_VERSION] != MPIP_CM2_VERSION)
		return MPIP_CM_E_VERSION;
	t = cm_get16(tail + CM_TAIL_LENGTH);
	if (t < MPIP_CM2_MIN_LEN || t > MPIP_CM2_MAX_LEN || t % 4 || t > avail)
		return MPIP_CM_E_LENGTH;
	return (int)t;
}

/**
 * mpip_cm2_decode() - decode a v2 trailer
 * @buf: the trailer
 * @len: its length: exactly the T that mpip_cm2_peek() returned
 * @sum: mpip_cm2_sum() of its place (0 is taken as MPIP_CM_CSUM_SUM);
 *       its words must add up to mpip_cm2_target() of that and its flags
 * @cm2: filled in on success (version 2)
 *
 * Checks, in this order: @len, the tail (as mpip_cm2_peek()), T equal to
 * @len, N (at most 8, and its list within T - 40), E = T - 40 - 4*N (at
 * most MPIP_CM2_EXT_MAX), the check and the checksum adjustment.  The MAC
 * is not verified here: the caller finds the peer by the token in
 * @cm2->cm.node_id, then calls mpip_auth_check() with @cm2->cm,
 * mpip_cm2_auth_ctx() and @cm2->auth.  Never reads outside @buf.
 *
 * Return: @len, or the first failing check's negative enum mpip_cm_err
 * (@cm2 is then in an unspecified state).
 */
int mpip_cm2_decode(const u8 *buf, unsigned int len, u16 sum,
		    struct mpip_cm2 *cm2)
{
	unsigned int n, e;
	const u8 *ext;
	int ret;

	if (len < MPIP_CM2_MIN_LEN)
		return MPIP_CM_E_SHORT;
	ret = mpip_cm2_peek(buf + len - MPIP_CM_TAIL_LEN, len);
	if (ret < 0)
		return ret;
	if ((unsigned int)ret != len)
		return MPIP_CM_E_LENGTH;

	n = buf[len - MPIP_CM_FOOTER_LEN + CM_FOOT_NADDRS] & 0x0f;
	if (n > MPIP_CM_MAX_ADDRS || 4 * n > len - MPIP_CM2_MIN_LEN)
		return MPIP_CM_E_ADDRS;
	e = len - MPIP_CM2_MIN_LEN - 4 * n;
	if (e > MPIP_CM2_EXT_MAX)
		return MPIP_CM_E_EXT;

	if (!sum)
		sum = MPIP_CM_CSUM_SUM;
	ret = cm_verify_sum(buf, len,
			    mpip_cm2_target(sum, buf[len - MPIP_CM_FOOTER_LEN +
						     CM_FOOT_FLAGS]));
	if (ret < 0)
		return ret;

	memset(cm2, 0, sizeof(*cm2));
	cm_get_fields(buf, len, &cm2->cm);
	ext = buf + MPIP_CM_BODY_LEN + 4 * n;
	cm2->ext_len = (u8)e;
	memcpy(cm2->ext, ext, e);
	memcpy(cm2->auth, ext + e, MPIP_CM2_AUTH_LEN);
	cm2->version = MPIP_CM2_VERSION;
	cm2->sum = sum == MPIP_CM_CSUM_SUM ? 0 : sum;
	return (int)len;
}

/**
 * mpip_cm_peek_any() - the length of a v1 or v2 trailer, from its tail
 * @tail: the last MPIP_CM_TAIL_LEN bytes of the IP payload
 * @avail: the IP payload's length
 *
 * Return: T, or MPIP_CM_E_SHORT if @avail is below MPIP_CM_MIN_LEN (then
 * @tail is not read), MPIP_CM_E_MAGIC, MPIP_CM_E_VERSION for a version
 * other than 1 and 2, or what mpip_cm_peek() or mpip_cm2_peek() returns
 * for the version.
 */
int mpip_cm_peek_any(const u8 *tail, unsigned int avail)
{
	if (avail < MPIP_CM_MIN_LEN)
		return MPIP_CM_E_SHORT;
	if (tail[CM_TAIL_MAGIC] != MPIP_CM_MAGIC)
		return MPIP_CM_E_MAGIC;
	switch (tail[CM_TAIL_VERSION]) {
	case MPIP_CM_VERSION:
		return mpip_cm_peek(tail, avail);
	case MPIP_CM2_VERSION:
		return mpip_cm2_peek(tail, avail);
	default:
		return MPIP_CM_E_VERSION;
	}
}

/**
 * mpip_cm_decode_any() - decode a v1 or v2 trailer
 * @buf: the trailer
 * @len: its length: exactly the T that mpip_cm_peek_any() returned
 * @sum: for a v2 trailer, as mpip_cm2_decode() (a v1 trailer always sums
 *       to MPIP_CM_CSUM_SUM)
 * @cm2: filled in on success; @cm2->version says which version it was.
 *       A v1 CM has no extension and an all-zero auth block, and
 *       @cm2->cm.node_id is the sender's node ID, not a token
 *
 * Return: @len, or a negative enum mpip_cm_err: MPIP_CM_E_SHORT,
 * MPIP_CM_E_MAGIC or MPIP_CM_E_VERSION as mpip_cm_peek_any(), otherwise
 * what mpip_cm_decode() or mpip_cm2_decode() returns.
 */
int mpip_cm_decode_any(const u8 *buf, unsigned int len, u16 sum,
		       struct mpip_cm2 *cm2)
{
	int ret;

	if (len < MPIP_CM_MIN_LEN)
		return MPIP_CM_E_SHORT;
	ret = mpip_cm_peek_any(buf + len - MPIP_CM_TAIL_LEN, len);
	if (ret < 0)
		return ret;
	if (buf[len - MPIP_CM_TAIL_LEN + CM_TAIL_VERSION] == MPIP_CM2_VERSION)
		return mpip_cm2_decode(buf, len, sum, cm2);
	memset(cm2, 0, sizeof(*cm2));
	ret = mpip_cm_decode(buf, len, &cm2->cm);
	if (ret >= 0)
		cm2->version = MPIP_CM_VERSION;
	return ret;
}
