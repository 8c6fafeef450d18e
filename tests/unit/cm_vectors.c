// SPDX-License-Identifier: GPL-2.0
/*
 * Print CM trailers made by the C encoder, one JSON object per line:
 * the field values and the encoded bytes as hex.  The scapy tests decode
 * the hex with the python layer and compare the fields.
 */
#include <stdio.h>
#include <string.h>

#include "cm.h"

struct vec {
	u32 node_id;
	u16 session_id;
	u8 path_id, fb_path_id;
	u32 timestamp_us, path_delay_us;
	u8 flags, xflags, naddrs;
};

static const struct vec vecs[] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 0xffffffff, 0xffff, 0xff, 0xff, 0xffffffff, 0xffffffff, 0xff,
	  MPIP_CM_X_MASK, 8 },
	{ 0x01020304, 0x0506, 7, 8, 0x090a0b0c, 0x0d0e0f10,
	  MPIP_CM_F_ENABLE | MPIP_CM_F_CTRL, 0, 2 },
	{ 0x9e3779b9, 1, 1, 0, 123456789, 0, MPIP_CM_F_ENABLE, 0, 0 },
	{ 0x9e3779b9, 1, 0, 0, 123456789, 0, MPIP_CM_F_ENABLED |
	  MPIP_CM_F_CTRL, 0, 1 },
	{ 0xdeadbeef, 0x1234, 3, 2, 0x80000000, 0x7fffffff, 0, 0, 0 },
	{ 0x00000001, 0x8000, 2, 3, 0xfffffff0, 0x00001000,
	  MPIP_CM_F_IP_CHANGE | MPIP_CM_F_CTRL, 0, 3 },
	{ 0x7fffffff, 42, 4, 4, 1, 2, MPIP_CM_F_HB, 0, 0 },
	{ 0xcafef00d, 7, 5, 6, 1000000, 250, MPIP_CM_F_HS, 0, 4 },
	{ 0x11223344, 9, 9, 9, 99, 999, 0xc0, 0, 5 },
	{ 0x55667788, 0xfffe, 0xfe, 0xfe, 0x12345678, 0x87654321, 0x3f, 0, 6 },
	{ 0xa5a5a5a5, 3, 1, 1, 7, 77, MPIP_CM_F_ENABLED, 0, 7 },
	{ 0x0badcafe, 11, 2, 1, 5000, 40, MPIP_CM_F_ORIG, MPIP_CM_X_SOLE, 0 },
	{ 0x0badcafe, 12, 1, 2, 6000, 30, MPIP_CM_F_ORIG | MPIP_CM_F_NEW,
	  MPIP_CM_X_SOLE, 2 },
};

static void print_vec(const struct vec *v, unsigned int k)
{
	u8 buf[MPIP_CM_MAX_LEN];
	struct mpip_cm cm;
	unsigned int i;
	int t;

	memset(&cm, 0, sizeof(cm));
	cm.node_id = v->node_id;
	cm.session_id = v->session_id;
	cm.path_id = v->path_id;
	cm.fb_path_id = v->fb_path_id;
	cm.timestamp_us = v->timestamp_us;
	cm.path_delay_us = v->path_delay_us;
	cm.flags = v->flags;
	cm.xflags = v->xflags;
	cm.naddrs = v->naddrs;
	for (i = 0; i < v->naddrs; i++) {
		u8 a[4] = { 10, (u8)k, (u8)i, (u8)(1 + 30 * i) };

		if (v->naddrs == MPIP_CM_MAX_ADDRS && i == 7)
			memset(a, 0xff, 4);
		memcpy(&cm.addrs[i], a, 4);
	}
	t = mpip_cm_encode(&cm, buf, sizeof(buf));
	if (t < 0)
		return;

	printf("{\"node_id\": %u, \"session_id\": %u, \"path_id\": %u, "
	       "\"fb_path_id\": %u, \"timestamp_us\": %u, "
	       "\"path_delay_us\": %u, \"flags\": %u, \"xflags\": %u, "
	       "\"naddrs\": %u, \"addrs\": [",
	       cm.node_id, cm.session_id, cm.path_id, cm.fb_path_id,
	       cm.timestamp_us, cm.path_delay_us, cm.flags, cm.xflags,
	       cm.naddrs);
	for (i = 0; i < cm.naddrs; i++) {
		const u8 *a = (const u8 *)&cm.addrs[i];

		printf("%s\"%u.%u.%u.%u\"", i ? ", " : "", a[0], a[1], a[2],
		       a[3]);
	}
	printf("], \"length\": %d, \"csum_adjust\": %u, \"check\": %u, "
	       "\"hex\": \"", t, (buf[t - 12] << 8) | buf[t - 11],
	       ((u32)buf[t - 4] << 24) | ((u32)buf[t - 3] << 16) |
	       ((u32)buf[t - 2] << 8) | buf[t - 1]);
	for (i = 0; i < (unsigned int)t; i++)
		printf("%02x", buf[i]);
	printf("\"}\n");
}

int main(void)
{
	unsigned int k;

	for (k = 0; k < sizeof(vecs) / sizeof(vecs[0]); k++)
		print_vec(&vecs[k], k);
	return 0;
}
