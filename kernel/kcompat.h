/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels mpip is built for (Debian's 6.1 and
 * 6.12): every version test of the module is here, nowhere else.
 */
#ifndef MPIP_KCOMPAT_H
#define MPIP_KCOMPAT_H

#include <linux/version.h>

/* skb_gso_segment() and skb_gso_validate_*() moved to <net/gso.h> in 6.4 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#include <net/gso.h>
#endif

/* get_unaligned_be32() and friends: <linux/unaligned.h> from 6.12 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif /* MPIP_KCOMPAT_H */
