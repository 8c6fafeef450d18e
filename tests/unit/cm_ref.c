// SPDX-License-Identifier: GPL-2.0
/* The reference half of the CM codec tests: see cm_ref.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "cm_ref.h"

void put16(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

void put32(u8 *p, u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

void put64(u8 *p, u64 v)
{
	put32(p, (u32)(v >> 32));
	put32(p + 4, (u32)v);
}

u32 get16(const u8 *p)
{
	return (u32)p[0] << 8 | p[1];
}

u32 get32(const u8 *p)
{
	return get16(p) << 16 | get16(p + 2);
}

u32 ref_crc32c(const u8 *buf, size_t len)
{
	u32 crc = 0xffffffff;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= buf[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78 : 0);
	}
	return ~crc;
}

static u64 ref_sum_words(const u8 *buf, size_t len)
{
	u64 sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get16(buf + i);
	if (len & 1)
		sum += (u32)buf[len - 1] << 8;
	return sum;
}

u32 ref_sum_mod(const u8 *buf, size_t len)
{
	return (u32)(ref_sum_words(buf, len) % 0xffff);
}

u16 ref_fold_sum(const u8 *buf, size_t len)
{
	u64 sum = ref_sum_words(buf, len);

	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

void ref_fix_sum(u8 *b, unsigned int t)
{
	u32 a;

	put16(b + t - 12, 0);
	a = (MPIP_CM_CSUM_SUM + 0xffff - ref_sum_mod(b, t)) % 0xffff;
	put16(b + t - 12, a ? a : 0xffff);
}

void ref_fix(u8 *b, unsigned int t)
{
	put16(b + t - 12, 0);
	put32(b + t - 4, ref_crc32c(b, t - 4));
	ref_fix_sum(b, t);
}

u8 *exact_copy(const u8 *src, size_t n)
{
	u8 *p = malloc(n ? n : 1);

	if (!p) {
		perror("malloc");
		exit(2);
	}
	if (n)
		memcpy(p, src, n);
	return p;
}
