/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip UDP encapsulation of a path through a NAT (issue 21): the shim and
 * the inner checksum.  Portable: no kernel API.
 *
 * A packet on such a path travels as
 *
 *   IP (path addresses, protocol UDP) | UDP (control port -> the port the
 *   peer's end of the path has, maybe a NAT's) | shim, 4 bytes |
 *   inner TCP or UDP header, payload and CM trailer
 *
 * with a UDP checksum valid over the whole datagram, so a NAT translates
 * it like any other.  The shim:
 *
 *   off  size  field
 *   0    1     MPIP_ENCAP_MAGIC ('M')
 *   1    1     bits 4-7: version (MPIP_ENCAP_VERSION), bits 0-3: type
 *   2    1     inner protocol (6 TCP, 17 UDP)
 *   3    1     0
 *
 * A control datagram on the same port has a UDP length of 8 (its CM lies
 * behind the UDP length); an encapsulated one covers its shim: the two
 * never meet.
 *
 * The inner checksum leaves the addresses out: a NAT rewrites the outer
 * ones on the way, and the sender cannot know what the receiver will see.
 * The sender takes the path's addresses out of the pseudo header's sum,
 * the receiver puts in those it received the datagram under.  Nothing else
 * changes, so the inner segment's checksum still covers it end to end.
 */
#ifndef MPIP_CORE_ENCAP_H
#define MPIP_CORE_ENCAP_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_ENCAP_MAGIC	0x4d
#define MPIP_ENCAP_VERSION	1
#define MPIP_ENCAP_T_DATA	1
#define MPIP_ENCAP_SHIM_LEN	4
#define MPIP_ENCAP_UDP_LEN	8
/* What encapsulation adds to a packet: UDP header and shim */
#define MPIP_ENCAP_LEN		(MPIP_ENCAP_UDP_LEN + MPIP_ENCAP_SHIM_LEN)

/* Write the shim of a data packet of inner protocol @proto to @b. */
void mpip_encap_shim_put(u8 *b, u8 proto);

/*
 * The inner protocol of the shim at @b, if it is a data shim of this
 * version for TCP or UDP; else 0.
 */
u8 mpip_encap_shim_proto(const u8 *b);

/*
 * The inner checksum field @check (as on the wire, big-endian bytes read
 * as a host u16 by the caller: pass the two bytes), adjusted for the
 * pseudo header's addresses going from @from_s, @from_d to @to_s, @to_d
 * (each four bytes in network order).  A UDP checksum of 0 (none) stays
 * 0; a UDP checksum that comes out 0 is written 0xffff.
 */
void mpip_encap_csum_move(u8 check[2], bool udp, const u8 from_s[4],
			  const u8 from_d[4], const u8 to_s[4],
			  const u8 to_d[4]);

#endif /* MPIP_CORE_ENCAP_H */
