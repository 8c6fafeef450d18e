// SPDX-License-Identifier: GPL-2.0
/*
 * mpip UDP encapsulation: the shim and the inner checksum (encap.h).
 */
#include "encap.h"

void mpip_encap_shim_put(u8 *b, u8 proto)
{
	b[0] = MPIP_ENCAP_MAGIC;
	b[1] = MPIP_ENCAP_VERSION << 4 | MPIP_ENCAP_T_DATA;
	b[2] = proto;
	b[3] = 0;
}

u8 mpip_encap_shim_proto(const u8 *b)
{
	if (b[0] != MPIP_ENCAP_MAGIC ||
	    b[1] != (MPIP_ENCAP_VERSION << 4 | MPIP_ENCAP_T_DATA) || b[3])
		return 0;
	return b[2] == 6 || b[2] == 17 ? b[2] : 0;
}

static u32 mpip_encap_add_words(u32 sum, const u8 a[4], bool sub)
{
	u16 hi = (u16)(a[0] << 8 | a[1]), lo = (u16)(a[2] << 8 | a[3]);

	if (sub) {
		hi = (u16)~hi;
		lo = (u16)~lo;
	}
	return sum + hi + lo;
}

/* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'), over each 16-bit word. */
void mpip_encap_csum_move(u8 check[2], bool udp, const u8 from_s[4],
			  const u8 from_d[4], const u8 to_s[4],
			  const u8 to_d[4])
{
	u16 c = (u16)(check[0] << 8 | check[1]);
	u32 sum;

	if (udp && !c)
		return;
	sum = (u16)~c;
	sum = mpip_encap_add_words(sum, from_s, true);
	sum = mpip_encap_add_words(sum, from_d, true);
	sum = mpip_encap_add_words(sum, to_s, false);
	sum = mpip_encap_add_words(sum, to_d, false);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	c = (u16)~sum;
	if (udp && !c)
		c = 0xffff;
	check[0] = c >> 8;
	check[1] = c & 0xff;
}
