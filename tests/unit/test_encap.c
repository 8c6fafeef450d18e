// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/encap.c: the shim of a UDP-encapsulated
 * packet, and the inner checksum that leaves the addresses out, checked
 * against a checksum computed from scratch under the new addresses.
 */
#include <stdio.h>
#include <string.h>

#include "encap.h"
#include "ktap.h"

static u32 rng_state = 0x2545f491;

static u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Ones' complement sum of @len bytes as big-endian words, unfolded. */
static u32 sum16(u32 sum, const u8 *b, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (u32)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (u32)b[len - 1] << 8;
	return sum;
}

static u16 fold(u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

/* The sum of the pseudo header and @seg, its checksum field included. */
static u16 seg_sum(const u8 s[4], const u8 d[4], u8 proto, const u8 *seg,
		   size_t len)
{
	u32 sum = sum16(0, s, 4);

	sum = sum16(sum, d, 4);
	sum += proto + (u32)len;
	return fold(sum16(sum, seg, len));
}

/* Fill in the checksum at @off of @seg for addresses @s, @d. */
static void seg_csum(const u8 s[4], const u8 d[4], u8 proto, u8 *seg,
		     size_t len, size_t off)
{
	u16 c;

	seg[off] = 0;
	seg[off + 1] = 0;
	c = (u16)~seg_sum(s, d, proto, seg, len);
	if (proto == 17 && !c)
		c = 0xffff;
	seg[off] = c >> 8;
	seg[off + 1] = c & 0xff;
}

static void rnd_addr(u8 a[4])
{
	u32 v = rnd();

	memcpy(a, &v, 4);
}

UNIT_TEST(encap_shim_round_trip_and_rejects)
{
	u8 b[MPIP_ENCAP_SHIM_LEN], bad[MPIP_ENCAP_SHIM_LEN];
	unsigned int i;

	mpip_encap_shim_put(b, 6);
	CHECK_EQ(b[0], 0x4d);
	CHECK_EQ(mpip_encap_shim_proto(b), 6);
	mpip_encap_shim_put(b, 17);
	CHECK_EQ(mpip_encap_shim_proto(b), 17);
	/* any other byte value in any field */
	for (i = 0; i < MPIP_ENCAP_SHIM_LEN; i++) {
		memcpy(bad, b, sizeof(b));
		bad[i] ^= 0x01;
		CHECK_EQ(mpip_encap_shim_proto(bad), 0);
		bad[i] ^= 0x81;
		CHECK_EQ(mpip_encap_shim_proto(bad), 0);
	}
	mpip_encap_shim_put(b, 1);
	CHECK_EQ(mpip_encap_shim_proto(b), 0);
}

/*
 * A TCP or UDP segment summed under the sender's path addresses, moved to
 * no addresses (the sender) and then to those the receiver saw (after
 * any NAT): its checksum is the one computed afresh for those, and the
 * segment verifies.  Odd lengths and every alignment of the data.
 */
UNIT_TEST(encap_csum_move_matches_recompute)
{
	static const u8 zero[4];
	u8 seg[1600], ref[1600], s1[4], d1[4], s2[4], d2[4];
	unsigned int i, len, off, moved = 0;
	u8 proto;

	for (i = 0; i < 20000; i++) {
		proto = i & 1 ? 17 : 6;
		off = proto == 6 ? 16 : 6;
		len = 20 + rnd() % 1500;
		for (unsigned int j = 0; j < len; j++)
			seg[j] = (u8)rnd();
		rnd_addr(s1);
		rnd_addr(d1);
		rnd_addr(s2);
		rnd_addr(d2);
		seg_csum(s1, d1, proto, seg, len, off);
		memcpy(ref, seg, len);
		seg_csum(s2, d2, proto, ref, len, off);

		mpip_encap_csum_move(seg + off, proto == 17, s1, d1, zero,
				     zero);
		mpip_encap_csum_move(seg + off, proto == 17, zero, zero, s2,
				     d2);
		CHECK_MSG(fold(seg_sum(s2, d2, proto, seg, len)) == 0xffff,
			  "case %u: proto %u len %u does not verify", i, proto,
			  len);
		/* equal but for the two encodings of zero (TCP only) */
		if (memcmp(seg + off, ref + off, 2)) {
			CHECK_EQ(proto, 6);
			CHECK_EQ((seg[off] | seg[off + 1]) == 0 ||
				 (ref[off] | ref[off + 1]) == 0, 1);
		}
		moved++;
	}
	CHECK_EQ(moved, 20000);
}

/* A UDP checksum of 0 means none: it stays none. */
UNIT_TEST(encap_csum_move_keeps_no_udp_checksum)
{
	u8 c[2] = { 0, 0 };
	u8 a[4] = { 10, 0, 0, 1 }, b[4] = { 198, 18, 1, 1 }, z[4] = { 0 };

	mpip_encap_csum_move(c, true, a, b, z, z);
	CHECK_EQ(c[0] | c[1], 0);
}

/*
 * A UDP checksum that comes out 0 after the move is written 0xffff, as a
 * sender must (0 would mean none): a datagram built to sum to it.
 */
UNIT_TEST(encap_csum_move_udp_zero_is_ffff)
{
	u8 seg[64] = { 0 }, s1[4] = { 10, 0, 1, 2 }, d1[4] = { 198, 18, 3, 2 };
	u8 s2[4] = { 198, 18, 1, 1 }, d2[4] = { 198, 18, 3, 2 };
	u16 need;
	unsigned int j;

	for (j = 8; j < sizeof(seg) - 2; j++)
		seg[j] = (u8)(j * 7);
	/* make the sum under s2, d2 all ones, so its checksum is 0 */
	need = (u16)~seg_sum(s2, d2, 17, seg, sizeof(seg));
	seg[sizeof(seg) - 2] = need >> 8;
	seg[sizeof(seg) - 1] = need & 0xff;
	CHECK_EQ(fold(seg_sum(s2, d2, 17, seg, sizeof(seg))), 0xffff);
	seg_csum(s1, d1, 17, seg, sizeof(seg), 6);
	mpip_encap_csum_move(seg + 6, true, s1, d1, s2, d2);
	CHECK_EQ(seg[6], 0xff);
	CHECK_EQ(seg[7], 0xff);
	CHECK_EQ(fold(seg_sum(s2, d2, 17, seg, sizeof(seg))), 0xffff);
}
