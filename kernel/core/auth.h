/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip CM authentication, portable building blocks for wire format v2.
 *
 * This file and auth.c build in the kernel module (where SipHash is the
 * kernel's own, <linux/siphash.h>) and, unchanged, in host unit tests
 * (where auth.c has a SipHash of its own).
 */
#ifndef MPIP_CORE_AUTH_H
#define MPIP_CORE_AUTH_H

#include "compat.h"

/* A SipHash-2-4 key: k0 is key bytes 0..7 read little-endian, k1 8..15. */
struct mpip_auth_key {
	u64 k0;
	u64 k1;
};

/* SipHash-2-4 of @len bytes at @data under (@k0, @k1): 64-bit output. */
u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1);

#endif /* MPIP_CORE_AUTH_H */
