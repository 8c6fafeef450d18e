// SPDX-License-Identifier: GPL-2.0
/*
 * mpip handshake control packets (paper §3.2).
 *
 * TCP: a query or confirmation travels in a carrier, a copy of the IP and
 * TCP headers of a segment the host is sending anyway, reduced to a bare
 * ACK, with the CM as its only payload, placed before the data the peer
 * acknowledged: a host without MPIP drops it as an old retransmission, a
 * NAT translates it as it does the flow, an MPIP host consumes it.
 *
 * UDP: a confirmation is a new datagram with UDP length 8 and the CM in
 * the surplus area behind it.  Its UDP checksum is valid over the whole IP
 * payload, as a NAT's conntrack checks it, and fails over the UDP length
 * (the CM's sum, mpip_cm2_target()), as a host checks it: a host without
 * MPIP drops it.  (A UDP query is the sender's own datagram with a trailer
 * in its surplus area: see output.c.)
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/netfilter/nf_conntrack.h>

#include "mpip.h"

static struct sk_buff *mpip_ctrl_alloc(const struct dst_entry *dst,
				       unsigned int hlen)
{
	unsigned int hh = LL_RESERVED_SPACE(dst->dev);
	struct sk_buff *skb;

	skb = alloc_skb(hh + hlen + MPIP_CM_ANY_MAX_LEN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, hh);
	skb_reset_network_header(skb);
	skb->protocol = htons(ETH_P_IP);
	skb->ip_summed = CHECKSUM_NONE;
	return skb;
}

/*
 * The IP header of a control packet of protocol @proto from @saddr to
 * @daddr on route @rt, put at the start of the empty @skb: DF set, the
 * route's TTL; its length and checksum are the caller's.
 */
struct iphdr *mpip_ctrl_iph(struct sk_buff *skb, const struct rtable *rt,
			    u8 proto, __be32 saddr, __be32 daddr)
{
	struct iphdr *iph = skb_put_zero(skb, sizeof(*iph));

	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->ttl = ip4_dst_hoplimit(&rt->dst);
	iph->protocol = proto;
	iph->saddr = saddr;
	iph->daddr = daddr;
	iph->frag_off = htons(IP_DF);
	return iph;
}

/* Seal @cm for node @n at the end of @skb; false if it cannot be sent. */
static bool mpip_ctrl_put_cm(struct sk_buff *skb, struct mpip_node *n,
			     const struct mpip_cm *cm,
			     const struct mpip_cm_ext *ext)
{
	unsigned int len = mpip_cm_wire_len(cm, ext);
	struct iphdr *iph = ip_hdr(skb);
	unsigned int off = skb->len - iph->ihl * 4;

	if (mpip_cm_seal(n, cm, ext, iph->protocol, off, skb_put(skb, len),
			 len, 0) != len)
		return false;
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
	return true;
}

/*
 * Not part of any flow: conntrack must neither track a control packet
 * nor check it against the window of the connection whose headers a TCP
 * one copies (its payload is the CM).
 */
void mpip_ctrl_untrack(struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	nf_ct_set(skb, NULL, IP_CT_UNTRACKED);
#endif
}

/*
 * Where a carrier copied from the outgoing segment @skb with a CM of @t
 * bytes starts: @t + 1 bytes before what the peer has acknowledged, so
 * all it carries is data the peer has had.  (Carriers go only next to
 * segments with ACK, never SYN or RST: mpip_out_tcp_done().)  It ends a
 * byte short of that: were it to end where the next segment starts, a
 * receiver's GRO could merge the two (behind WireGuard, which checks no
 * checksums, even a next segment with a trailer).  False if that cannot
 * be told (a segment of no full TCP socket).
 */
static bool mpip_carrier_seq(const struct sk_buff *skb, unsigned int t,
			     __be32 *seq)
{
	struct sock *sk = skb->sk;
	u32 una;

	if (!sk || !sk_fullsock(sk) || sk->sk_protocol != IPPROTO_TCP)
		return false;
	una = READ_ONCE(tcp_sk(sk)->snd_una);
	*seq = htonl(una - t - 1);
	return true;
}

/*
 * Send the CM @cm (CTRL is added) to node @n in a TCP carrier next to the
 * outgoing segment @skb, from the POST_ROUTING hook: a copy of its IP and
 * TCP headers reduced to a bare ACK whose payload is the CM, placed in
 * sequence space before what the peer has acknowledged
 * (mpip_carrier_seq()), with a TCP checksum valid over the whole segment.
 * To a host without MPIP it is an old retransmission, which its TCP drops
 * without taking a byte; a NAT's conntrack finds it in the window and
 * translates it as it does the flow; an MPIP host consumes it.  It is a
 * packet of its own: it goes out through LOCAL_OUT on a reference to the
 * segment's route, never through the segment's okfn, whose contract
 * belongs to whoever runs this hook.  It is marked as already past
 * POST_ROUTING (IPSKB_REROUTED, as IPsec marks what it has transformed),
 * since it is built from headers that have been there.
 */
void mpip_tcp_carrier_send(struct mpip_net *mn, const struct sk_buff *skb,
			   struct mpip_node *n, struct mpip_cm *cm,
			   const struct mpip_cm_ext *ext)
{
	const struct iphdr *iph = ip_hdr(skb);
	unsigned int ihl = iph->ihl * 4, thl, hlen, len;
	struct sk_buff *nskb;
	struct tcphdr *th;
	u8 buf[60];

	th = skb_header_pointer(skb, ihl, sizeof(*th), buf);
	if (!th)
		return;
	thl = th->doff * 4;
	hlen = ihl + thl;
	if (!mpip_ctrl_may_send(mn))
		return;

	nskb = mpip_ctrl_alloc(skb_dst(skb), hlen);
	if (!nskb) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return;
	}
	if (skb_copy_bits(skb, 0, skb_put(nskb, hlen), hlen))
		goto drop;
	skb_set_transport_header(nskb, ihl);
	th = tcp_hdr(nskb);
	cm->flags |= MPIP_CM_F_CTRL;
	cm->xflags |= MPIP_CM_X_CARRIER;
	ext = mpip_cm_hs_ext(mn, n, cm, ext);
	if (!mpip_carrier_seq(skb, mpip_cm_wire_len(cm, ext), &th->seq))
		goto drop;
	tcp_flag_word(th) &= ~(TCP_FLAG_CWR | TCP_FLAG_ECE | TCP_FLAG_URG |
			       TCP_FLAG_PSH | TCP_FLAG_RST | TCP_FLAG_SYN |
			       TCP_FLAG_FIN);
	if (!mpip_ctrl_put_cm(nskb, n, cm, ext))
		goto drop;
	iph = ip_hdr(nskb);
	len = nskb->len - ihl;
	th->check = 0;
	th->check = csum_tcpudp_magic(iph->saddr, iph->daddr, len, IPPROTO_TCP,
				      csum_partial(th, len, 0));

	skb_dst_set(nskb, dst_clone(skb_dst(skb)));
	nskb->mark = skb->mark;
	nskb->priority = skb->priority;
	IPCB(nskb)->flags = IPSKB_REROUTED;
	mpip_ctrl_untrack(nskb);
	ip_local_out(mn->net, NULL, nskb);
	return;
drop:
	kfree_skb(nskb);
}

/*
 * A carrier (mpip_tcp_carrier_send()) with CM flags @flags next to
 * outgoing segment @skb: a query, or a confirmation with extension @ext.
 */
void mpip_tcp_ctrl_send(struct mpip_net *mn, const struct sk_buff *skb,
			struct mpip_node *n, u8 flags,
			const struct mpip_cm_ext *ext)
{
	struct mpip_cm cm;

	mpip_cm_fill(mn, &cm, flags, READ_ONCE(n->verified));
	mpip_tcp_carrier_send(mn, skb, n, &cm, ext);
}

/*
 * Send a UDP control datagram carrying @cm to node @n from (@saddr,
 * @sport) to (@daddr, @dport) over the route @rt, whose reference it
 * takes.  The UDP length covers the header only; the CM lies in the
 * surplus area.  The UDP checksum covers the whole IP payload, so a NAT
 * passes the datagram; over the UDP length it fails, so hosts without
 * MPIP drop it (the header comment).
 */
void mpip_udp_ctrl_xmit(struct mpip_net *mn, struct rtable *rt,
			__be32 saddr, __be32 daddr, __be16 sport,
			__be16 dport, struct mpip_node *n,
			const struct mpip_cm *cm, const struct mpip_cm_ext *ext)
{
	struct sk_buff *nskb;
	struct udphdr *uh;
	struct iphdr *iph;
	unsigned int len;
	__sum16 check;

	/* without CTRL, the checksum would hold over the UDP length too */
	if (WARN_ON_ONCE(!(cm->flags & MPIP_CM_F_CTRL)) ||
	    !mpip_ctrl_may_send(mn)) {
		ip_rt_put(rt);
		return;
	}
	nskb = mpip_ctrl_alloc(&rt->dst, sizeof(*iph) + sizeof(*uh));
	if (!nskb) {
		ip_rt_put(rt);
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return;
	}
	skb_dst_set(nskb, &rt->dst);

	iph = mpip_ctrl_iph(nskb, rt, IPPROTO_UDP, saddr, daddr);

	skb_set_transport_header(nskb, nskb->len);
	uh = skb_put_zero(nskb, sizeof(*uh));
	uh->source = sport;
	uh->dest = dport;
	uh->len = htons(sizeof(*uh));
	if (!mpip_ctrl_put_cm(nskb, n, cm, mpip_cm_hs_ext(mn, n, cm, ext))) {
		kfree_skb(nskb);
		return;
	}
	len = nskb->len - sizeof(*iph);
	check = csum_tcpudp_magic(saddr, daddr, len, IPPROTO_UDP,
				  csum_partial(uh, len, 0));
	uh->check = check ? check : CSUM_MANGLED_0;
	mpip_ctrl_untrack(nskb);
	ip_select_ident(mn->net, nskb, NULL);
	ip_send_check(iph);
	ip_local_out(mn->net, NULL, nskb);
}

/*
 * Answer the UDP query @skb (received, not yet stripped) from node @n with
 * ENABLED; with our addresses only if @n proved that it holds the keys,
 * with our key if the query showed @n's (@keyed).
 */
void mpip_udp_confirm_send(struct mpip_net *mn, const struct sk_buff *skb,
			   struct mpip_node *n, bool keyed)
{
	const struct iphdr *qiph = ip_hdr(skb);
	struct udphdr _quh, *quh;
	struct flowi4 fl4 = {};
	struct rtable *rt;
	struct mpip_cm cm;

	quh = skb_header_pointer(skb, qiph->ihl * 4, sizeof(_quh), &_quh);
	if (!quh)
		return;

	fl4.daddr = qiph->saddr;
	fl4.saddr = qiph->daddr;
	fl4.flowi4_proto = IPPROTO_UDP;
	fl4.fl4_sport = quh->dest;
	fl4.fl4_dport = quh->source;
	fl4.flowi4_mark = skb->mark;
	rt = ip_route_output_key(mn->net, &fl4);
	if (IS_ERR(rt))
		return;

	mpip_cm_fill(mn, &cm, MPIP_CM_F_ENABLED | MPIP_CM_F_CTRL,
		     READ_ONCE(n->verified));
	mpip_inc(mn, MPIP_STAT_TX_CONFIRM);
	mpip_touch(&n->last_tx);
	mpip_udp_ctrl_xmit(mn, rt, fl4.saddr, fl4.daddr, fl4.fl4_sport,
			   fl4.fl4_dport, n, &cm, keyed ? &mpip_cm_key_ext : NULL);
}
