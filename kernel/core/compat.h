/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types for the portable mpip core, so that the same files build in the
 * kernel module and in host unit tests.  In the kernel, the core also
 * uses its CRC32C (libcrc32c) and SipHash (lib/siphash.c); on the host,
 * implementations of its own (cm.c, auth.c).
 */
#ifndef MPIP_CORE_COMPAT_H
#define MPIP_CORE_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/crc32c.h>
#include <linux/siphash.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#endif

#endif /* MPIP_CORE_COMPAT_H */
