/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference half of the CM codec tests (test_cm.c for v1, test_cm2.c
 * for v2): byte order, CRC32C and the ones'-complement sums written
 * independently of kernel/core/cm.c, so that the tests cross-check it
 * rather than repeat it, and the exact heap copies that let
 * AddressSanitizer see any read past the bytes under test.
 */
#ifndef MPIP_UNIT_CM_REF_H
#define MPIP_UNIT_CM_REF_H

#include <stddef.h>

#include "compat.h"

void put16(u8 *p, u32 v);
void put32(u8 *p, u32 v);
void put64(u8 *p, u64 v);
u32 get16(const u8 *p);
u32 get32(const u8 *p);

/* CRC32C, bit by bit (Castagnoli polynomial, reflected). */
u32 ref_crc32c(const u8 *buf, size_t len);

/*
 * The big-endian 16-bit words of @len bytes from an even offset, an odd
 * tail padded with a zero byte: their sum modulo 0xffff, and the same
 * sum folded to 16 bits as a receiver computes it.
 */
u32 ref_sum_mod(const u8 *buf, size_t len);
u16 ref_fold_sum(const u8 *buf, size_t len);

/*
 * Recompute check and adjustment of the @t trailer bytes at @b (v1 or
 * v2: their footers are laid out alike) from the bytes as they stand,
 * whatever N, length and version say.
 */
void ref_fix(u8 *b, unsigned int t);

/* The adjustment alone, the check left as it stands. */
void ref_fix_sum(u8 *b, unsigned int t);

/* A heap buffer of exactly @n bytes holding @src (exits if out of memory). */
u8 *exact_copy(const u8 *src, size_t n);

#endif
