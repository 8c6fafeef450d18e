/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip control-message (CM) trailer, wire formats v1 and v2: encoders and
 * decoders.  The module sends v2 (authenticated CMs, below the v1
 * declarations) only; it decodes v1 too, so that a v1 trailer is known
 * for what it is, counted and left in place, as any other data.
 *
 * This file and cm.c are portable: they build inside the kernel module and,
 * unchanged, in host unit tests.  They use no kernel API.
 *
 * The trailer is appended at the very end of the IP payload.  All multi-byte
 * fields are big-endian.  Offsets are from the first trailer byte; T is the
 * total trailer length, N the number of addresses in the list.
 *
 *   off     size  field
 *   0       4     source node ID (random per network namespace, never 0)
 *   4       2     session ID (0: no session)
 *   6       1     path ID (0: no path)
 *   7       1     feedback path ID (0: no feedback in this CM)
 *   8       4     timestamp, microseconds of the sender's clock, mod 2^32
 *   12      4     path delay for the feedback path, microseconds, mod 2^32
 *   16      4*N   address list: N IPv4 addresses (network byte order)
 *   T-12    2     checksum adjustment (see below)
 *   T-10    1     flags (MPIP_CM_F_*)
 *   T-9     1     bits 0-3: N, number of addresses (0..MPIP_CM_MAX_ADDRS)
 *                 bits 4-7: extended flags (MPIP_CM_X_*)
 *   T-8     1     magic, MPIP_CM_MAGIC
 *   T-7     1     version, MPIP_CM_VERSION
 *   T-6     2     T, total trailer length in bytes (28 + 4*N)
 *   T-4     4     check: CRC32C (Castagnoli, reflected, init ~0, final ~0)
 *                 over bytes [0, T-4) with the checksum-adjustment bytes
 *                 taken as zero
 *
 * A receiver finds the trailer from the tail: the last 8 bytes give magic,
 * version, length and check; only then is the rest read.
 *
 * Checksum adjustment: chosen so that the 16-bit ones'-complement sum of
 * all T bytes (taken as big-endian 16-bit words) equals MPIP_CM_CSUM_SUM.
 * Of the two ones'-complement zeros the encoder writes 0xffff, and the
 * decoder rejects an adjustment of 0x0000, so every trailer has exactly
 * one valid encoding.
 * A TCP segment carrying a trailer has a TCP checksum that is valid for the
 * segment without its trailer; the adjustment guarantees that the checksum
 * of the whole segment is invalid at either byte alignment, so a host
 * without MPIP always drops such a segment instead of taking the trailer
 * for data.
 */
#ifndef MPIP_CORE_CM_H
#define MPIP_CORE_CM_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_CM_VERSION		1
#define MPIP_CM_MAGIC		0xd7
#define MPIP_CM_BODY_LEN	16	/* fields before the address list */
#define MPIP_CM_FOOTER_LEN	12	/* fields after the address list */
#define MPIP_CM_TAIL_LEN	8	/* what a receiver reads first */
#define MPIP_CM_MAX_ADDRS	8
#define MPIP_CM_MIN_LEN		(MPIP_CM_BODY_LEN + MPIP_CM_FOOTER_LEN)
#define MPIP_CM_MAX_LEN		(MPIP_CM_MIN_LEN + 4 * MPIP_CM_MAX_ADDRS)
#define MPIP_CM_CSUM_SUM	0x4000

/* CM flags */
#define MPIP_CM_F_ENABLE	0x01	/* availability query */
#define MPIP_CM_F_ENABLED	0x02	/* availability confirmation */
#define MPIP_CM_F_CTRL		0x04	/* control only: consumed by MPIP */
#define MPIP_CM_F_IP_CHANGE	0x08	/* sender's addresses changed */
#define MPIP_CM_F_HB		0x10	/* heartbeat */
#define MPIP_CM_F_HS		0x20	/* NAT fake handshake */
#define MPIP_CM_F_ORIG		0x40	/* original addresses, not rewritten */
#define MPIP_CM_F_NEW		0x80	/* session not confirmed by receiver */

/*
 * Extended flags, the high nibble of the address-count byte.
 *
 * MPIP_CM_X_SOLE: the sender has this one path to the receiver and sends
 * most packets of the session without a CM (only one every bare_cm_ms
 * carries one).  A receiver cannot see those packets, so it must not hold
 * a segment because of a gap they fill: it takes a TCP segment with this
 * flag as in order and starts its sequence tracking afresh with the next
 * segment that comes without it.
 */
#define MPIP_CM_X_SOLE		0x01
/*
 * MPIP_CM_X_QUIET: the sender expects no delay report for this CM (a
 * heartbeat that only carries reports back).  The receiver keeps its
 * sample but owes no report for it: two idle peers do not answer each
 * other's reports for ever.
 */
#define MPIP_CM_X_QUIET		0x02
/*
 * MPIP_CM_X_DUP: the sender sent copies of this packet, on two paths or
 * more, with the same CM counter (a routing rule of mode protected).
 * The receiver delivers the copy that arrives first and drops the
 * others: a data CM with this flag whose counter was seen is dropped,
 * not delivered as plain IP.
 */
#define MPIP_CM_X_DUP		0x04
/*
 * MPIP_CM_X_CARRIER: a TCP control CM (MPIP_CM_F_CTRL) in a carrier: a
 * segment of old data whose TCP checksum is valid over all of it, the
 * trailer included (handshake.c); any other TCP trailer leaves the
 * checksum valid only without it.
 */
#define MPIP_CM_X_CARRIER	0x08
#define MPIP_CM_X_MASK		0x0f

/* Decoder results (negative); 0 or a positive length means success. */
enum mpip_cm_err {
	MPIP_CM_E_SHORT = -1,	/* fewer bytes than a trailer needs */
	MPIP_CM_E_MAGIC = -2,	/* magic byte does not match */
	MPIP_CM_E_VERSION = -3,	/* unknown version */
	MPIP_CM_E_LENGTH = -4,	/* length field inconsistent */
	MPIP_CM_E_ADDRS = -5,	/* address count does not fit the length */
	MPIP_CM_E_CHECK = -6,	/* CRC32C or checksum adjustment wrong */
	MPIP_CM_E_INVAL = -7,	/* encoder: bad argument or no room */
	MPIP_CM_E_EXT = -8,	/* v2: extension longer than allowed */
};

struct mpip_cm {
	u32 node_id;
	u16 session_id;
	u8 path_id;
	u8 fb_path_id;
	u32 timestamp_us;
	u32 path_delay_us;
	u8 flags;
	u8 xflags;			/* MPIP_CM_X_*, 4 bits */
	u8 naddrs;
	u32 addrs[MPIP_CM_MAX_ADDRS];	/* network byte order, as on the wire */
};

/* Bytes the trailer for @cm takes on the wire. */
static inline unsigned int mpip_cm_len(const struct mpip_cm *cm)
{
	return MPIP_CM_MIN_LEN + 4 * cm->naddrs;
}

/*
 * Write @cm into @buf (@len bytes available).  Returns the trailer length,
 * or MPIP_CM_E_INVAL if @cm has too many addresses, extended flags beyond
 * MPIP_CM_X_MASK, or @buf is too small.
 */
int mpip_cm_encode(const struct mpip_cm *cm, u8 *buf, unsigned int len);

/*
 * Look at the last MPIP_CM_TAIL_LEN bytes of a packet (@tail) whose IP
 * payload is @avail bytes long.  Returns the trailer length T, or a
 * negative enum mpip_cm_err if these bytes cannot end a trailer.  v1
 * only, as mpip_cm_decode(): any other version is MPIP_CM_E_VERSION
 * (mpip_cm_peek_any() and mpip_cm_decode_any() take v1 and v2).
 */
int mpip_cm_peek(const u8 *tail, unsigned int avail);

/*
 * Decode the trailer in @buf, which holds exactly @len bytes: the whole
 * trailer, as returned by mpip_cm_peek().  Returns @len on success and
 * fills @cm; on failure returns a negative enum mpip_cm_err and leaves
 * @cm in an unspecified state.  Never reads outside @buf.
 */
int mpip_cm_decode(const u8 *buf, unsigned int len, struct mpip_cm *cm);

/*
 * Wire format v2: the v1 trailer with the receiver's token where v1 has
 * the sender's node ID, and two parts added between the address list and
 * the footer: an extension of E bytes and the 12-byte auth block of
 * auth.h.  T = 40 + 4*N + E.
 *
 *   off       size  field
 *   0         4     token: the receiver's (auth.h), in cm.node_id
 *   4         2     session ID        \
 *   6         1     path ID            |
 *   7         1     feedback path ID   | as v1
 *   8         4     timestamp          |
 *   12        4     path delay        /
 *   16        4*N   address list, as v1
 *   16+4*N    E     extension: 0..MPIP_CM2_EXT_MAX bytes, a multiple of 4
 *   T-24      4     counter, low 32 bits  \ auth block (mpip_auth_seal())
 *   T-20      8     MAC                   /
 *   T-12      2     checksum adjustment \
 *   T-10      1     flags                |
 *   T-9       1     xflags << 4 | N      | footer, as v1
 *   T-8       1     magic                |
 *   T-7       1     version, 2           |
 *   T-6       2     T: 40..104           |
 *   T-4       4     check (CRC32C)      /
 *
 * E is not on the wire: a receiver takes E = T - 40 - 4*N, with N from the
 * footer.  Check and adjustment are computed as in v1, over all T bytes,
 * the auth block included, but the adjustment's target depends on where
 * the trailer is (mpip_cm2_sum(): a UDP trailer's keeps the datagram's
 * checksum valid for a NAT).  The decoder verifies them, not the MAC: that
 * needs the key of the peer the token names (mpip_cm2_auth_ctx(), then
 * mpip_auth_check()).  Documentation/wire-format.rst, "Version 2".
 */
#define MPIP_CM2_VERSION	2
#define MPIP_CM2_AUTH_LEN	12	/* auth block, MPIP_AUTH_BLOCK_LEN */
#define MPIP_CM2_EXT_MAX	32	/* extension bytes, MPIP_AUTH_EXT_MAX */
#define MPIP_CM2_MIN_LEN	(MPIP_CM_MIN_LEN + MPIP_CM2_AUTH_LEN)
#define MPIP_CM2_MAX_LEN	(MPIP_CM2_MIN_LEN + 4 * MPIP_CM_MAX_ADDRS + \
				 MPIP_CM2_EXT_MAX)
/* The longest trailer of any version. */
#define MPIP_CM_ANY_MAX_LEN	MPIP_CM2_MAX_LEN

struct mpip_auth_key;
struct mpip_auth_ctx;

/**
 * struct mpip_cm2 - a v2 CM
 * @cm: the fields v1 has as well; @cm.node_id holds the receiver's token
 * @ext_len: extension bytes, 0..MPIP_CM2_EXT_MAX, a multiple of 4
 * @ext: the extension, as on the wire; 0 from @ext_len on after a decode
 * @auth: the auth block as on the wire: the counter's low 32 bits and the
 *        MAC, big-endian.  Filled in by the decoders; mpip_cm2_write()
 *        writes it as it is, mpip_cm2_encode() computes it instead
 * @version: set by the decoders, 1 or 2; the encoders write 2 whatever
 *           it holds
 * @sum: what the ones'-complement sum of the trailer's 16-bit words is
 *       (the checksum adjustment's target): 0 for MPIP_CM_CSUM_SUM, or
 *       mpip_cm2_sum() of the trailer's place.  The encoders write it,
 *       the decoders set it to the sum they checked
 */
struct mpip_cm2 {
	struct mpip_cm cm;
	u8 ext_len;
	u8 ext[MPIP_CM2_EXT_MAX];
	u8 auth[MPIP_CM2_AUTH_LEN];
	u8 version;
	u16 sum;
};

/*
 * The sum of a v2 trailer of @t bytes at offset @off from its transport
 * header, in a packet of IP protocol @proto.  TCP (and the CM of a kept
 * GSO packet): MPIP_CM_CSUM_SUM, which makes the checksum of the whole
 * segment fail.  UDP: the trailer lies beyond the UDP length, and a NAT's
 * conntrack verifies the UDP checksum over the whole IP payload (with
 * the pseudo-header length T bytes longer): the trailer's words then add
 * up to -T, byte-swapped when @off is odd, so that the checksum is valid
 * both over the UDP length and over the whole payload.
 */
static inline u16 mpip_cm2_sum(u8 proto, unsigned int off, unsigned int t)
{
	u16 s = (u16)(0xffff - t);

	if (proto != 17)	/* IPPROTO_UDP */
		return MPIP_CM_CSUM_SUM;
	return off & 1 ? (u16)(s << 8 | s >> 8) : s;
}

/*
 * A UDP control datagram (MPIP_CM_F_CTRL) has UDP length 8, its CM lies
 * beyond it, and its UDP checksum is valid over the whole IP payload, so
 * that a NAT's conntrack translates it.  Its trailer's words add up to
 * MPIP_CM2_CTRL_DELTA more than a data trailer's in the same place: the
 * checksum over the UDP length then fails by that much, and a host
 * without MPIP drops the datagram instead of delivering it empty.
 */
#define MPIP_CM2_CTRL_DELTA	0x8000

/*
 * What the words of a v2 trailer with flags @flags add up to, where
 * mpip_cm2_sum() of its place is @sum (0: MPIP_CM_CSUM_SUM).
 */
static inline u16 mpip_cm2_target(u16 sum, u8 flags)
{
	u32 s;

	if (!sum || sum == MPIP_CM_CSUM_SUM)
		return MPIP_CM_CSUM_SUM;
	if (!(flags & MPIP_CM_F_CTRL))
		return sum;
	s = (u32)sum + MPIP_CM2_CTRL_DELTA;
	return (u16)((s & 0xffff) + (s >> 16));
}

/* Bytes the v2 trailer for @cm2 takes on the wire. */
static inline unsigned int mpip_cm2_len(const struct mpip_cm2 *cm2)
{
	return MPIP_CM2_MIN_LEN + 4 * cm2->cm.naddrs + cm2->ext_len;
}

int mpip_cm2_encode(const struct mpip_cm2 *cm2,
		    const struct mpip_auth_key *key, u64 ctr, u8 proto,
		    u8 *buf, unsigned int len);
int mpip_cm2_write(const struct mpip_cm2 *cm2, u8 *buf, unsigned int len);
int mpip_cm2_peek(const u8 *tail, unsigned int avail);
int mpip_cm2_decode(const u8 *buf, unsigned int len, u16 sum,
		    struct mpip_cm2 *cm2);
int mpip_cm_peek_any(const u8 *tail, unsigned int avail);
int mpip_cm_decode_any(const u8 *buf, unsigned int len, u16 sum,
		       struct mpip_cm2 *cm2);
void mpip_cm2_auth_ctx(const struct mpip_cm2 *cm2, u8 proto,
		       struct mpip_auth_ctx *ctx);

/*
 * The link policy of an advertised address list, as an IP_CHANGE carries
 * it (Documentation/wire-format.rst, "Extension contents"): address i's
 * tier, 0..MPIP_CM_TIER_MAX (0 the main tier, 1 and up backup links), in
 * bits MPIP_CM_TIER_BITS*i and up of @tiers, and whether it is on a
 * metered link in bit i of @metered.
 */
struct mpip_cm_lpol {
	u32 tiers;
	u32 metered;
};

#define MPIP_CM_TIER_BITS	3
#define MPIP_CM_TIER_MAX	7
#define MPIP_CM_LPOL_MASK_LEN	4	/* the backup mask only */
#define MPIP_CM_LPOL_LEN	12	/* mask, tiers, metered mask */

/* Address @i's field in a word of tiers (struct mpip_cm_lpol's @tiers). */
static inline unsigned int mpip_cm_tier_field(u32 tiers, unsigned int i)
{
	return tiers >> (MPIP_CM_TIER_BITS * i) & MPIP_CM_TIER_MAX;
}

static inline unsigned int mpip_cm_lpol_tier(const struct mpip_cm_lpol *l,
					     unsigned int i)
{
	return mpip_cm_tier_field(l->tiers, i);
}

void mpip_cm_lpol_set(struct mpip_cm_lpol *l, unsigned int i,
		      unsigned int tier, bool metered);
u32 mpip_cm_lpol_backups(const struct mpip_cm_lpol *l);
unsigned int mpip_cm_lpol_ext(const struct mpip_cm_lpol *l, u8 *ext);
bool mpip_cm2_lpol(const struct mpip_cm2 *cm2, struct mpip_cm_lpol *l);

/* CRC32C of @len bytes, continuing from @crc (start with 0). */
u32 mpip_crc32c(u32 crc, const u8 *buf, unsigned int len);

/* Wrap-safe comparison of two microsecond timestamps: @a - @b. */
static inline s32 mpip_ts_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

#endif /* MPIP_CORE_CM_H */
