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

/*
 * Put @skb, an IPv4 TCP or UDP packet with its trailer and a complete
 * checksum, inside UDP to port @dport of its destination.
 */
int mpip_encap_push(struct sk_buff *skb, __be16 dport)
{
	unsigned int ihl = ip_hdrlen(skb), len, off;
	struct iphdr *iph = ip_hdr(skb);
	u8 proto = iph->protocol;
	struct udphdr *uh;
	__sum16 check;

	if (WARN_ON_ONCE(skb_is_gso(skb) ||
			 skb->ip_summed == CHECKSUM_PARTIAL))
		return -EINVAL;
	off = ihl + mpip_encap_check_off(proto);
	if (skb_ensure_writable(skb, off + sizeof(check)) ||
	    skb_cow_head(skb, MPIP_ENCAP_LEN))
		return -ENOMEM;
	iph = ip_hdr(skb);
	mpip_encap_csum_move(skb_network_header(skb) + off,
			     proto == IPPROTO_UDP, (u8 *)&iph->saddr,
			     (u8 *)&iph->daddr, mpip_encap_noaddr,
			     mpip_encap_noaddr);

	skb_push(skb, MPIP_ENCAP_LEN);
	memmove(skb->data, skb->data + MPIP_ENCAP_LEN, ihl);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, ihl);
	iph = ip_hdr(skb);
	len = skb->len - ihl;
	uh = udp_hdr(skb);
	uh->source = htons(MPIP_CTRL_PORT);
	uh->dest = dport;
	uh->len = htons(len);
	uh->check = 0;
	mpip_encap_shim_put((u8 *)(uh + 1), proto);
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);

	check = csum_tcpudp_magic(iph->saddr, iph->daddr, len, IPPROTO_UDP,
				  skb_checksum(skb, ihl, len, 0));
	uh->check = check ? check : CSUM_MANGLED_0;
	skb->ip_summed = CHECKSUM_NONE;
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
	unsigned int ihl = ip_hdrlen(skb), len, off;
	u8 _shim[MPIP_ENCAP_SHIM_LEN], proto;
	const struct udphdr *uh;
	const u8 *shim;
	struct iphdr *iph;

	if (!mpip_encap_is(skb, ihl))
		return 0;
	len = skb->len - ihl;
	shim = skb_header_pointer(skb, ihl + sizeof(*uh), sizeof(_shim),
				  _shim);
	proto = shim ? mpip_encap_shim_proto(shim) : 0;
	if (!proto || len < MPIP_ENCAP_LEN + sizeof(struct udphdr))
		return -EINVAL;
	off = ihl + MPIP_ENCAP_LEN + mpip_encap_check_off(proto);
	if (!pskb_may_pull(skb, off + sizeof(__sum16)) ||
	    skb_ensure_writable(skb, off + sizeof(__sum16)))
		return -ENOMEM;
	uh = (const struct udphdr *)(skb_network_header(skb) + ihl);
	/* the whole datagram, and no surplus behind it */
	if (ntohs(uh->len) != len)
		return -EINVAL;
	rx->esport = uh->source;

	memmove(skb->data + MPIP_ENCAP_LEN, skb->data, ihl);
	__skb_pull(skb, MPIP_ENCAP_LEN);
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
	/* Whatever was checked was the outer datagram. */
	skb->ip_summed = CHECKSUM_NONE;
	rx->encap = true;
	return 1;
}
