// SPDX-License-Identifier: GPL-2.0
/*
 * mpip UDP encapsulation (issue 21): the packets of a path through a NAT
 * travel inside UDP, from our control port to the port the peer's end of
 * the path has (a NAT's, on a path learned from where the peer's CMs came
 * from), so that they share the NAT mapping of the path's heartbeats and
 * cross it as any datagram does.  Layout and the inner checksum:
 * core/encap.h.
 *
 * The sender encapsulates in the POST_ROUTING hook, after the trailer is
 * on and the inner checksum complete; the receiver takes the packet out
 * in PRE_ROUTING, before conntrack and before the trailer is looked for,
 * and from then on it is a packet that came over the path's addresses as
 * the receiver saw them.
 */
#include <linux/ip.h>
#include <linux/netfilter_ipv4.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip.h>

#include "mpip.h"

static const u8 mpip_encap_noaddr[4];

/* Offset of the inner TCP or UDP checksum from the transport header. */
static unsigned int mpip_encap_check_off(u8 proto)
{
	return proto == IPPROTO_TCP ? offsetof(struct tcphdr, check) :
				      offsetof(struct udphdr, check);
}

/* What encapsulation adds to a packet sent on path @p (0: none). */
unsigned int mpip_encap_len(const struct mpip_path *p)
{
	switch (READ_ONCE(p->encap)) {
	case MPIP_ENCAP_UDP:
		return MPIP_ENCAP_LEN;
	case MPIP_ENCAP_FTCP:
		return MPIP_FTCP_ENCAP_LEN;
	default:
		return 0;
	}
}

/*
 * Make room for an outer header of @outer bytes and the shim in front of
 * the transport header of @skb (a TCP or UDP packet with its trailer and
 * a complete checksum, which then leaves the addresses out), and give
 * the IP header protocol @outer_proto.  Returns the inner protocol, or 0
 * without memory.
 */
static u8 mpip_encap_room(struct sk_buff *skb, unsigned int outer,
			  u8 outer_proto)
{
	unsigned int ihl = ip_hdrlen(skb), add = outer + MPIP_ENCAP_SHIM_LEN;
	struct iphdr *iph = ip_hdr(skb);
	u8 proto = iph->protocol;
	unsigned int off;

	off = ihl + mpip_encap_check_off(proto);
	if (skb_ensure_writable(skb, off + sizeof(__sum16)) ||
	    skb_cow_head(skb, add))
		return 0;
	iph = ip_hdr(skb);
	mpip_encap_csum_move(skb_network_header(skb) + off,
			     proto == IPPROTO_UDP, (u8 *)&iph->saddr,
			     (u8 *)&iph->daddr, mpip_encap_noaddr,
			     mpip_encap_noaddr);
	skb_push(skb, add);
	memmove(skb->data, skb->data + add, ihl);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, ihl);
	mpip_encap_shim_put(skb_transport_header(skb) + outer, proto);
	iph = ip_hdr(skb);
	iph->protocol = outer_proto;
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
	return proto;
}

/*
 * The outer checksum of @skb, at @off in its transport header, left for
 * the device to fill in (or for the stack, on the way to a device that
 * cannot): only the pseudo header's sum goes in now.  A device with
 * checksum offload, a veth, costs no pass over the packet; where the
 * stack fills it in (skb_checksum_help(), or fragmentation), it is the
 * pass this would have made.
 */
static void mpip_encap_csum(struct sk_buff *skb, unsigned int off, u8 proto)
{
	const struct iphdr *iph = ip_hdr(skb);
	unsigned int len = skb->len - ip_hdrlen(skb);
	__sum16 *check;

	check = (__sum16 *)(skb_transport_header(skb) + off);
	*check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, len, proto, 0);
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = off;
}

/*
 * Put @skb, an IPv4 TCP or UDP packet with its trailer and a complete
 * checksum, inside path @p's fake TCP connection if it is open
 * (ftcp.c), else inside UDP to the path's port.
 */
int mpip_encap_push(struct sk_buff *skb, struct mpip_path *p)
{
	unsigned int ihl = ip_hdrlen(skb);
	struct mpip_ftcp_seg g;
	struct udphdr *uh;
	__be16 dport;

	if (WARN_ON_ONCE(skb_is_gso(skb) ||
			 skb->ip_summed == CHECKSUM_PARTIAL))
		return -EINVAL;
	if (READ_ONCE(p->encap) == MPIP_ENCAP_FTCP &&
	    mpip_ftcp_open(p, skb->len - ihl + MPIP_ENCAP_SHIM_LEN, &g,
			   &dport)) {
		if (!mpip_encap_room(skb, MPIP_FTCP_HDR_LEN, IPPROTO_TCP))
			return -ENOMEM;
		mpip_ftcp_hdr_put(skb_transport_header(skb), MPIP_CTRL_PORT,
				  ntohs(dport), &g);
		mpip_encap_csum(skb, offsetof(struct tcphdr, check),
				IPPROTO_TCP);
		return 0;
	}
	if (!mpip_encap_room(skb, sizeof(*uh), IPPROTO_UDP))
		return -ENOMEM;
	uh = udp_hdr(skb);
	uh->source = htons(MPIP_CTRL_PORT);
	uh->dest = READ_ONCE(p->dport);
	uh->len = htons(skb->len - ihl);
	mpip_encap_csum(skb, offsetof(struct udphdr, check), IPPROTO_UDP);
	return 0;
}

/*
 * Is @skb, a UDP datagram, one inside which a packet came to us?  To our
 * control port, its UDP length covering a shim (a control datagram's
 * covers the header only).
 */
bool mpip_encap_is(const struct sk_buff *skb, unsigned int ihl)
{
	struct udphdr _uh;
	const struct udphdr *uh;

	uh = skb_header_pointer(skb, ihl, sizeof(_uh), &_uh);
	return uh && uh->dest == htons(MPIP_CTRL_PORT) &&
	       ntohs(uh->len) > sizeof(*uh);
}

/*
 * Take the packet inside UDP datagram @skb out, into @skb: IP header with
 * the inner protocol, inner checksum under the addresses it came with.
 * Sets rx->encap and rx->esport (the outer source port).  Returns 0 if
 * @skb was no such datagram (mpip_encap_is()), 1 if it was and is now
 * the inner packet, or -EINVAL (not one we can take out: drop it) or
 * -ENOMEM.
 */
int mpip_encap_pull(struct sk_buff *skb, struct mpip_rx *rx)
{
	unsigned int ihl = ip_hdrlen(skb);
	const struct udphdr *uh;
	struct udphdr _uh;

	if (!mpip_encap_is(skb, ihl))
		return 0;
	uh = skb_header_pointer(skb, ihl, sizeof(_uh), &_uh);
	/* the whole datagram, and no surplus behind it */
	if (!uh || ntohs(uh->len) != skb->len - ihl)
		return -EINVAL;
	/*
	 * Its checksum, where it has one (ours do): it covers the outer
	 * header and the shim, which nothing else checks.  Checked by the
	 * device, left to it by a local sender (over a veth), or here.
	 */
	if (uh->check &&
	    nf_ip_checksum(skb, NF_INET_PRE_ROUTING, ihl, IPPROTO_UDP))
		return -EINVAL;
	rx->esummed = !!uh->check;
	return mpip_encap_pull_at(skb, rx, sizeof(*uh), uh->source);
}

/*
 * Take the packet behind an outer header of @outer bytes (UDP, or fake
 * TCP: ftcp.c) and the shim out of @skb, which came from port @sport.
 * Returns 1, -EINVAL (no shim, or nothing behind it: drop it) or -ENOMEM.
 */
int mpip_encap_pull_at(struct sk_buff *skb, struct mpip_rx *rx,
		       unsigned int outer, __be16 sport)
{
	unsigned int ihl = ip_hdrlen(skb), add = outer + MPIP_ENCAP_SHIM_LEN;
	u8 _shim[MPIP_ENCAP_SHIM_LEN], proto;
	struct iphdr *iph;
	const u8 *shim;
	unsigned int off;

	shim = skb_header_pointer(skb, ihl + outer, sizeof(_shim), _shim);
	proto = shim ? mpip_encap_shim_proto(shim) : 0;
	if (!proto || skb->len < ihl + add + sizeof(struct udphdr))
		return -EINVAL;
	off = ihl + add + mpip_encap_check_off(proto);
	if (!pskb_may_pull(skb, off + sizeof(__sum16)) ||
	    skb_ensure_writable(skb, off + sizeof(__sum16)))
		return -ENOMEM;
	rx->esport = sport;

	memmove(skb->data + add, skb->data, ihl);
	__skb_pull(skb, add);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, ihl);
	skb_mac_header_rebuild(skb);
	iph = ip_hdr(skb);
	iph->protocol = proto;
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
	mpip_encap_csum_move(skb_network_header(skb) + ihl +
			     mpip_encap_check_off(proto),
			     proto == IPPROTO_UDP, mpip_encap_noaddr,
			     mpip_encap_noaddr, (u8 *)&iph->saddr,
			     (u8 *)&iph->daddr);
	/*
	 * The outer checksum, checked (@rx->esummed), covered the packet
	 * inside: its own is not checked again, here or by the stack (what
	 * it would tell besides, a trailer from data, the shim tells).
	 * Else the packet's own checksum is checked in full (csum_valid,
	 * once set, would spare it that).
	 */
	if (rx->esummed) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		skb->csum_level = 0;
	} else {
		skb->ip_summed = CHECKSUM_NONE;
		skb->csum_valid = 0;
	}
	rx->encap = true;
	return 1;
}
