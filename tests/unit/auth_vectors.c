// SPDX-License-Identifier: GPL-2.0
/*
 * Print test vectors of kernel/core/auth.c, one JSON object per line, for
 * other implementations of the v2 CM authentication (a python/scapy layer):
 *
 *   {"kind": "derive", ...}  two keys -> MAC keys and tokens of both ends
 *   {"kind": "mac", ...}     MAC key, counter, protocol, CM fields and
 *                            extension -> MAC input, MAC, auth block
 *
 * 64-bit values are hex strings ("0x..."), byte strings plain hex.  The
 * unit tests (test_auth.c) pin some of the same values.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct key_pair {
	u64 a, b;
};

static const struct key_pair pairs[] = {
	{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL },
	{ 0x0000000000000001ULL, 0xffffffffffffffffULL },
	{ 0x5555555555555555ULL, 0x5555555555555556ULL },
};

struct mac_vec {
	u64 ctr;
	u8 proto;
	u32 token;
	u16 session_id;
	u8 path_id, fb_path_id;
	u32 timestamp_us, path_delay_us;
	u8 flags, xflags, naddrs, ext_len;
};

static const struct mac_vec macs[] = {
	{ 1, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 1, 6, 0x89abcdef, 0x1235, 3, 2, 0x80000000, 0x7fffffff,
	  MPIP_CM_F_ORIG, 0, 0, 0 },
	{ 0x100000000ULL, 17, 0x01020304, 0x0506, 7, 8, 0x090a0b0c, 0x0d0e0f10,
	  MPIP_CM_F_IP_CHANGE | MPIP_CM_F_CTRL, 0, 2, 0 },
	{ 0xfffffffffffffffeULL, 17, 0xffffffff, 0xffff, 0xff, 0xff,
	  0xffffffff, 0xffffffff, 0xff, MPIP_CM_X_MASK, 8, MPIP_AUTH_EXT_MAX },
	{ 12345, 6, 0xcafef00d, 42, 1, 1, 1000000, 250,
	  MPIP_CM_F_HB | MPIP_CM_F_CTRL, MPIP_CM_X_SOLE, 1, 8 },
};

static void hex(const char *name, const u8 *p, unsigned int n)
{
	unsigned int i;

	printf("\"%s\": \"", name);
	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\"");
}

static void print_pair(const struct key_pair *kp)
{
	struct mpip_auth_peer a, b;

	if (mpip_auth_derive(&a, kp->a, kp->b) ||
	    mpip_auth_derive(&b, kp->b, kp->a))
		return;
	printf("{\"kind\": \"derive\", \"key_a\": \"0x%016llx\", "
	       "\"key_b\": \"0x%016llx\", "
	       "\"a_tx\": [\"0x%016llx\", \"0x%016llx\"], "
	       "\"a_rx\": [\"0x%016llx\", \"0x%016llx\"], "
	       "\"token_a\": %u, \"token_b\": %u}\n",
	       (unsigned long long)kp->a, (unsigned long long)kp->b,
	       (unsigned long long)a.tx.k0, (unsigned long long)a.tx.k1,
	       (unsigned long long)a.rx.k0, (unsigned long long)a.rx.k1,
	       a.rx_token, b.rx_token);
}

static void fill_cm(const struct mac_vec *v, unsigned int k,
		    struct mpip_cm *cm, u8 *ext)
{
	unsigned int i;

	memset(cm, 0, sizeof(*cm));
	cm->node_id = v->token;
	cm->session_id = v->session_id;
	cm->path_id = v->path_id;
	cm->fb_path_id = v->fb_path_id;
	cm->timestamp_us = v->timestamp_us;
	cm->path_delay_us = v->path_delay_us;
	cm->flags = v->flags;
	cm->xflags = v->xflags;
	cm->naddrs = v->naddrs;
	for (i = 0; i < v->naddrs; i++) {
		u8 a[4] = { 10, (u8)k, (u8)i, (u8)(1 + 30 * i) };

		memcpy(&cm->addrs[i], a, 4);
	}
	for (i = 0; i < v->ext_len; i++)
		ext[i] = (u8)(0xe0 + i);
}

static void print_mac(const struct mpip_auth_key *key, const struct mac_vec *v,
		      unsigned int k)
{
	u8 ext[MPIP_AUTH_EXT_MAX], in[MPIP_AUTH_INPUT_MAX];
	u8 blk[MPIP_AUTH_BLOCK_LEN];
	struct mpip_auth_ctx ctx = { v->proto, v->ext_len, ext };
	struct mpip_cm cm;
	unsigned int i;
	u64 mac;
	int n;

	fill_cm(v, k, &cm, ext);
	n = mpip_auth_input(&cm, v->ctr, &ctx, in);
	if (n < 0 || mpip_auth_mac(key, &cm, v->ctr, &ctx, &mac) ||
	    mpip_auth_seal(key, &cm, v->ctr, &ctx, blk))
		return;

	printf("{\"kind\": \"mac\", \"key\": [\"0x%016llx\", \"0x%016llx\"], "
	       "\"counter\": \"0x%016llx\", \"proto\": %u, ",
	       (unsigned long long)key->k0, (unsigned long long)key->k1,
	       (unsigned long long)v->ctr, v->proto);
	printf("\"token\": %u, \"session_id\": %u, \"path_id\": %u, "
	       "\"fb_path_id\": %u, \"timestamp_us\": %u, "
	       "\"path_delay_us\": %u, \"flags\": %u, \"xflags\": %u, "
	       "\"addrs\": [", cm.node_id, cm.session_id, cm.path_id,
	       cm.fb_path_id, cm.timestamp_us, cm.path_delay_us, cm.flags,
	       cm.xflags);
	for (i = 0; i < cm.naddrs; i++) {
		const u8 *a = (const u8 *)&cm.addrs[i];

		printf("%s\"%u.%u.%u.%u\"", i ? ", " : "", a[0], a[1], a[2],
		       a[3]);
	}
	printf("], ");
	hex("ext", ext, v->ext_len);
	printf(", ");
	hex("input", in, (unsigned int)n);
	printf(", \"mac\": \"0x%016llx\", ", (unsigned long long)mac);
	hex("block", blk, sizeof(blk));
	printf("}\n");
}

int main(void)
{
	const struct mpip_auth_key ref = { 0x0706050403020100ULL,
					   0x0f0e0d0c0b0a0908ULL };
	struct mpip_auth_peer a;
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(pairs); k++)
		print_pair(&pairs[k]);
	/* MACs under the key of the SipHash paper, then a derived one. */
	for (k = 0; k < ARRAY_SIZE(macs); k++)
		print_mac(&ref, &macs[k], k);
	if (mpip_auth_derive(&a, pairs[0].a, pairs[0].b))
		return 1;
	for (k = 0; k < ARRAY_SIZE(macs); k++)
		print_mac(&a.tx, &macs[k], k);
	return 0;
}
