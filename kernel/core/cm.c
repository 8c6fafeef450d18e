// SPDX-License-Identifier: GPL-2.0
/*
 * mpip control-message (CM) trailer, wire format v1: encoder and decoder.
 *
 * Portable C: no kernel API, only the types and memset/memcpy that
 * compat.h provides, and the kernel's crc32c() in the module.  The
 * layout is described in cm.h and in Documentation/wire-format.rst.
 */
#include "cm.h"

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
 * Adjustment that makes the sum of the whole trailer MPIP_CM_CSUM_SUM,
 * given the sum @s of the trailer with a zero adjustment.  Never 0: the
 * trailer always has a non-zero sum, so 0x4000 + ~s folds to 1..0xffff.
 */
static u16 cm_adjust(u16 s)
{
	return cm_fold((u32)MPIP_CM_CSUM_SUM + (u16)~s);
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

static void cm_put_footer(const struct mpip_cm *cm, u8 *foot, unsigned int t)
{
	cm_put16(foot + CM_FOOT_ADJUST, 0);
	foot[CM_FOOT_FLAGS] = cm->flags;
	foot[CM_FOOT_NADDRS] = cm->naddrs | cm->xflags << 4;
	foot[CM_FOOT_MAGIC] = MPIP_CM_MAGIC;
	foot[CM_FOOT_VERSION] = MPIP_CM_VERSION;
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
	cm_put_footer(cm, foot, t);
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

/* Both integrity checks; @t is a length that passed mpip_cm_peek(). */
static int cm_verify(const u8 *buf, unsigned int t)
{
	const u8 *foot = buf + t - MPIP_CM_FOOTER_LEN;

	if (cm_get32(foot + CM_FOOT_CHECK) != cm_check(buf, t))
		return MPIP_CM_E_CHECK;
	/* An encoder never sends 0, the second zero of ones' complement. */
	if (!cm_get16(foot + CM_FOOT_ADJUST))
		return MPIP_CM_E_CHECK;
	if (cm_sum(buf, t) != MPIP_CM_CSUM_SUM)
		return MPIP_CM_E_CHECK;
	return 0;
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
