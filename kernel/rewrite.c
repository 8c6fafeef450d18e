// SPDX-License-Identifier: GPL-2.0
/*
 * mpip address rewriting: a packet sent on a path other than its flow's
 * original one gets the path's addresses, and the receiver puts the
 * original ones back, so that transport, conntrack and NAT only ever see
 * the original 5-tuple.  The IP and transport checksums are updated
 * incrementally, which keeps a pending partial checksum (CHECKSUM_PARTIAL)
 * valid: only its pseudo-header seed changes.
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "mpip.h"

/*
 * The transport checksum of TCP or UDP packet @skb, made writable, or
 * NULL without memory.  *@live: whether it is one to update (a UDP
 * checksum of 0 means none, unless it is a partial one).
 */
static __sum16 *mpip_rewrite_check(struct sk_buff *skb, bool *live)
{
	bool udp = ip_hdr(skb)->protocol == IPPROTO_UDP;
	unsigned int off = ip_hdrlen(skb);
	__sum16 *check;

	off += udp ? offsetof(struct udphdr, check) :
		     offsetof(struct tcphdr, check);
	if (skb_ensure_writable(skb, off + sizeof(*check)))
		return NULL;
	check = (__sum16 *)(skb_network_header(skb) + off);
	*live = !udp || *check || skb->ip_summed == CHECKSUM_PARTIAL;
	return check;
}

/* A live UDP checksum that came out 0 is sent as all ones. */
static void mpip_rewrite_check_done(struct sk_buff *skb, __sum16 *check)
{
	if (!*check && skb->ip_summed != CHECKSUM_PARTIAL &&
	    ip_hdr(skb)->protocol == IPPROTO_UDP)
		*check = CSUM_MANGLED_0;
}

/* Give the TCP or UDP packet @skb the addresses @saddr and @daddr. */
int mpip_rewrite_addrs(struct sk_buff *skb, __be32 saddr, __be32 daddr)
{
	struct iphdr *iph;
	__sum16 *check;
	bool live;

	check = mpip_rewrite_check(skb, &live);
	if (!check)
		return -ENOMEM;
	iph = ip_hdr(skb);
	if (live) {
		inet_proto_csum_replace4(check, skb, iph->saddr, saddr, true);
		inet_proto_csum_replace4(check, skb, iph->daddr, daddr, true);
		mpip_rewrite_check_done(skb, check);
	}
	csum_replace4(&iph->check, iph->saddr, saddr);
	csum_replace4(&iph->check, iph->daddr, daddr);
	iph->saddr = saddr;
	iph->daddr = daddr;
	return 0;
}

/*
 * Give the TCP or UDP packet @skb the ports @sport and @dport: a flow
 * whose ports a NAT translated has other ones at each end, and a packet
 * that came over a path inside UDP (encap.c) carries the sender's.
 */
int mpip_rewrite_ports(struct sk_buff *skb, __be16 sport, __be16 dport)
{
	__sum16 *check;
	__be16 *ports;
	bool live;

	check = mpip_rewrite_check(skb, &live);
	if (!check)
		return -ENOMEM;
	ports = (__be16 *)(skb_network_header(skb) + ip_hdrlen(skb));
	if (live) {
		inet_proto_csum_replace2(check, skb, ports[0], sport, false);
		inet_proto_csum_replace2(check, skb, ports[1], dport, false);
		mpip_rewrite_check_done(skb, check);
	}
	ports[0] = sport;
	ports[1] = dport;
	return 0;
}

/*
 * Lower the MSS option of TCP SYN @skb, whose headers end at @end, by
 * @room, or, if @limit is not 0, to at most @limit; not to TCP_MIN_MSS or
 * below.  The checksum is updated; the sum over the segment does not
 * change, so a complete one (CHECKSUM_COMPLETE) stays valid.  True if it
 * was lowered.
 */
bool mpip_rewrite_mss(struct sk_buff *skb, unsigned int end,
		      unsigned int room, unsigned int limit)
{
	unsigned int off, thl = end - ip_hdrlen(skb);
	struct tcphdr *th;
	u16 mss, to;
	u8 *opt;

	if (skb_ensure_writable(skb, end))
		return false;
	th = (struct tcphdr *)(skb_network_header(skb) + ip_hdrlen(skb));
	opt = (u8 *)th;

	for (off = sizeof(*th); off < thl;) {
		if (opt[off] == TCPOPT_EOL)
			return false;
		if (opt[off] == TCPOPT_NOP) {
			off++;
			continue;
		}
		if (off + 1 >= thl || opt[off + 1] < 2 ||
		    off + opt[off + 1] > thl)
			return false;
		if (opt[off] == TCPOPT_MSS && opt[off + 1] == TCPOLEN_MSS) {
			mss = get_unaligned_be16(opt + off + 2);
			if (limit)
				to = min_t(unsigned int, mss, limit);
			else
				to = mss > room ? mss - room : 0;
			if (to <= TCP_MIN_MSS || to == mss)
				return false;
			put_unaligned_be16(to, opt + off + 2);
			inet_proto_csum_replace2(&th->check, skb, htons(mss),
						 htons(to), false);
			return true;
		}
		off += opt[off + 1];
	}
	return false;
}
