// SPDX-License-Identifier: GPL-2.0
/*
 * mpip and "fragmentation needed" errors about packets it moved.
 *
 * A packet that mpip moved to another path carries the path's addresses.
 * An ICMP error about it quotes those, so no socket matches it and the
 * stack drops it.  "Fragmentation needed" is the one that matters: it
 * gives the path's MTU.  Without it, full-size packets on a path whose
 * MTU is smaller further on would be lost until the path timed out, come
 * back with the next (small) probe, and be lost again.
 *
 * Three things happen to such an error, in the input hook, before
 * conntrack sees it:
 *
 * - mpip records the MTU on the path (mpip_path_set_mtu()), which its
 *   packets are sized by (mpip_path_mtu()), and on the path's route, as
 *   IP tunnels do for their underlay (ipv4_update_pmtu());
 * - the error is translated back to the flow, as NAT does for errors
 *   about the packets it translated: the quoted header gets the session's
 *   addresses, the error the session's local address as destination.
 *   The stack then finds the socket: TCP checks the quoted sequence
 *   number and lowers its MSS; UDP records the MTU as for any route;
 *   conntrack sees an error related to the flow.  The quoted transport
 *   checksum is left as it was (nothing checks it);
 * - for a TCP flow, the MTU the error gives it is the path's less the
 *   room mpip takes on the path (trailer and encapsulation), so that its
 *   segments, with that room, fit the path.  Its route, which a path to
 *   the same address from the same link shares, then has an MTU smaller
 *   than the path's: mpip marks the packets it sizes by the path's MTU
 *   as forwarded, and IP output sizes them by the route's MTU without
 *   the exception (output.c, mpip_out_size()).  An error about a TCP
 *   segment on its own path is translated for the same reason, its
 *   addresses left as they are.
 *
 * A packet sent inside UDP (encap.c) is quoted as a datagram from the
 * control port to the port of the path it took.  Its error gives that
 * path's MTU, which mpip records; for a TCP flow it lowers the flow's
 * route to the MTU less mpip's room (mpip_icmp_flow_mtu()), which TCP
 * takes when it next sends.  A packet that does not fit the path inside
 * UDP is fragmented (output.c).  The quote must reach the packet inside,
 * whose ports name the session (routers quote up to 576 bytes: RFC
 * 1812): the outer header names only the path's addresses and ports, the
 * control port where no NAT is.  Every error about a datagram from the
 * control port goes no further than mpip: the kernel's UDP would lower
 * the route's MTU for it without asking anything (udp_err()).
 *
 * Other errors about a moved packet (unreachable, time exceeded) are not
 * translated: a path that fails is mpip's business (its path states and
 * failover), and the flow goes on over its other paths; the application
 * must not see the error as its own.
 *
 * Errors come from anywhere: only one that quotes a TCP or UDP packet
 * between the two addresses of an existing path, with the ports of a
 * session with that path's node, counts, and for TCP only with a
 * sequence number the flow's socket has sent and not seen acknowledged,
 * as tcp_v4_err() asks before it acts: a blind attacker must guess the
 * flow's ports, and for TCP its sequence numbers, before mpip records an
 * MTU that keeps full-size packets off a path (review 57, F3).  The MTU
 * is bounded below by the route code's floor (min_pmtu), for the path
 * too; and the search, a walk over the namespace's nodes, at most 192
 * session lookups and one socket lookup, runs at most MPIP_ICMP_PER_SEC
 * times a second.  An error that our own IP output sends us (from
 * loopback: a packet bigger than its route) is left to the stack.
 */
#include <linux/icmp.h>
#include <linux/ip.h>
#include <net/checksum.h>
#include <net/inet_hashtables.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/tcp.h>

#include "mpip.h"

/* The node with a path between these wire addresses, and that path. */
static struct mpip_node *mpip_icmp_node(struct mpip_net *mn, __be32 saddr,
					__be32 daddr, struct mpip_path **pp)
{
	struct mpip_node *n;
	unsigned int b;

	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			*pp = mpip_path_find(n, saddr, daddr);
			if (*pp)
				return n;
		}
	}
	return NULL;
}

/*
 * Node @n's remote addresses into @ra (MPIP_CM_MAX_ADDRS +
 * MPIP_MAX_PATHS room): those it advertised, and the far end of each of
 * its paths, where a NAT's address is (a flow through one NAT has that
 * address as its own, whichever path its packet took).  Returns how many.
 * Caller holds RCU.
 */
static unsigned int mpip_icmp_raddrs(struct mpip_node *n, __be32 *ra)
{
	const struct mpip_path *p;
	unsigned int nra, slot;

	spin_lock_bh(&n->lock);
	nra = n->naddrs;
	memcpy(ra, n->addrs, nra * sizeof(ra[0]));
	spin_unlock_bh(&n->lock);
	for (slot = 0; slot < MPIP_MAX_PATHS; slot++) {
		p = rcu_dereference(n->paths[slot]);
		if (p && !mpip_addr_listed(p->daddr, ra, nra))
			ra[nra++] = p->daddr;
	}
	return nra;
}

/*
 * The session with node @n whose packet the error quotes (protocol
 * @proto, ports @lport and @rport): its addresses are one of this host's
 * and one of @n's (mpip_icmp_raddrs()).  Caller holds RCU.
 */
static struct mpip_session *mpip_icmp_session(struct mpip_net *mn,
					      struct mpip_node *n,
					      u8 proto, __be16 lport,
					      __be16 rport)
{
	__be32 ra[MPIP_CM_MAX_ADDRS + MPIP_MAX_PATHS];
	struct mpip_laddr la[MPIP_CM_MAX_ADDRS];
	unsigned int nla, nra, i, j;
	struct mpip_session *s;

	nra = mpip_icmp_raddrs(n, ra);
	nla = mpip_local_addrs(mn, la, ARRAY_SIZE(la), true);
	for (i = 0; i < nla; i++) {
		for (j = 0; j < nra; j++) {
			s = mpip_session_lookup(mn, proto, la[i].addr, lport,
						ra[j], rport);
			if (s && READ_ONCE(s->id.node_id) == n->id)
				return s;
		}
	}
	return NULL;
}

/* The ICMP message from @off to the end has a valid checksum. */
static bool mpip_icmp_csum_ok(struct sk_buff *skb, unsigned int off)
{
	return !csum_fold(skb_checksum(skb, off, skb->len - off, 0));
}

/*
 * Give the error @skb, whose quoted header starts at @qoff, the addresses
 * of session @s (the quoted source and destination, and the error's own
 * destination, the quoted source) and the MTU @mtu.  Checksums are
 * computed again.
 */
static int mpip_icmp_translate(struct sk_buff *skb, unsigned int qoff,
			       const struct mpip_session *s, u32 mtu)
{
	unsigned int ihl = ip_hdrlen(skb);
	struct iphdr *iph, *quoted;
	struct icmphdr *ih;

	/* The quoted header's first 20 bytes are linear (mpip_icmp_rx()). */
	quoted = (struct iphdr *)(skb->data + qoff);
	if (skb_ensure_writable(skb, qoff + quoted->ihl * 4))
		return -ENOMEM;
	iph = ip_hdr(skb);
	quoted = (struct iphdr *)(skb_network_header(skb) + qoff);
	if (iph->daddr == quoted->saddr) {
		iph->daddr = s->t.laddr;
		ip_send_check(iph);
	}
	quoted->saddr = s->t.laddr;
	quoted->daddr = s->t.raddr;
	ip_send_check(quoted);
	ih = (struct icmphdr *)(skb_network_header(skb) + ihl);
	ih->un.frag.mtu = htons(mtu);
	ih->checksum = 0;
	ih->checksum = csum_fold(skb_checksum(skb, ihl, skb->len - ihl, 0));
	skb->ip_summed = CHECKSUM_NONE;
	return 0;
}

/* The MTU that "fragmentation needed" @skb gives. */
static u32 mpip_icmp_mtu(const struct sk_buff *skb)
{
	const struct icmphdr *ih = (const struct icmphdr *)
		(skb_network_header(skb) + ip_hdrlen(skb));

	return ntohs(ih->un.frag.mtu);
}

/*
 * The MTU that error @skb about a TCP packet on path @p gives the flow:
 * the path's, less the room mpip takes there (its data trailer and the
 * path's encapsulation), so that the flow's segments leave that room.
 * The route code's floor (at least 68, more than the room) applies to
 * the path's MTU first, as it would.  (A UDP flow's datagrams are the
 * size its application makes them; one without room goes bare, or is
 * fragmented inside UDP: its flow gets the path's MTU, or nothing.)
 */
static u32 mpip_icmp_tcp_mtu(const struct mpip_net *mn,
			     const struct sk_buff *skb,
			     const struct mpip_path *p)
{
	u32 mtu = max(mpip_icmp_mtu(skb),
		      READ_ONCE(mn->net->ipv4.ip_rt_min_pmtu));

	return mtu - MPIP_DATA_CM_LEN - mpip_encap_len(p);
}

/*
 * Give the route of the packet quoted at @qoff in @skb, of protocol
 * @proto, the MTU @mtu (@oif 0: any interface).  The route code reads
 * the quoted header at skb->data, as for tunnels.
 */
static void mpip_icmp_route_mtu(struct mpip_net *mn, struct sk_buff *skb,
				unsigned int qoff, u32 mtu, int oif, u8 proto)
{
	__skb_pull(skb, qoff);
	ipv4_update_pmtu(skb, mn->net, mtu, oif, proto);
	__skb_push(skb, qoff);
}

/*
 * Record the MTU of "fragmentation needed" @skb, which quotes at @qoff a
 * packet sent on path @p: on the path (mpip_path_set_mtu()), and on the
 * path's route.
 */
static void mpip_icmp_path_mtu(struct mpip_net *mn, struct sk_buff *skb,
			       unsigned int qoff, struct mpip_path *p)
{
	u8 proto = ((const struct iphdr *)(skb->data + qoff))->protocol;
	u32 mtu = mpip_icmp_mtu(skb);

	mpip_path_set_mtu(p, mn->net, mtu);
	mpip_icmp_route_mtu(mn, skb, qoff, mtu, p->ifindex, proto);
}

/*
 * Give the route of session @s, a flow of protocol @proto, the MTU @mtu,
 * as an error about one of its own packets would: the quoted header at
 * @qoff gets the session's addresses for the route code.  The flow's
 * socket takes the MTU when it next sends (TCP by tcp_current_mss(), UDP
 * from its route).
 */
static void mpip_icmp_flow_mtu(struct mpip_net *mn, struct sk_buff *skb,
			       unsigned int qoff, const struct mpip_session *s,
			       u8 proto, u32 mtu)
{
	struct iphdr *quoted;

	/* The quoted header's first 20 bytes are linear (mpip_icmp_rx()). */
	if (skb_ensure_writable(skb, qoff + sizeof(*quoted)))
		return;
	quoted = (struct iphdr *)(skb->data + qoff);
	quoted->saddr = s->t.laddr;
	quoted->daddr = s->t.raddr;
	mpip_icmp_route_mtu(mn, skb, qoff, mtu, 0, proto);
}

/*
 * The ports of the quoted TCP or UDP header at @l4 in @skb; false if the
 * quote does not reach them.
 */
static bool mpip_icmp_ports(struct sk_buff *skb, unsigned int l4,
			    __be16 *sport, __be16 *dport)
{
	if (!pskb_may_pull(skb, l4 + 2 * sizeof(__be16)))
		return false;
	*sport = *(__be16 *)(skb->data + l4);
	*dport = *(__be16 *)(skb->data + l4 + sizeof(__be16));
	return true;
}

/*
 * Has the socket of TCP session @s sent the sequence number that the
 * quoted TCP header at @l4 holds, and not seen it acknowledged?  A socket
 * bound to a device is not found: its error is not acted on.
 */
static bool mpip_icmp_tcp_seq_ok(struct mpip_net *mn, struct sk_buff *skb,
				 unsigned int l4,
				 const struct mpip_session *s)
{
	const struct tcp_sock *tp;
	struct sock *sk;
	bool ok = false;
	u32 seq;

	if (!pskb_may_pull(skb, l4 + 2 * sizeof(__be32)))
		return false;
	seq = get_unaligned_be32(skb->data + l4 + sizeof(__be32));
	sk = inet_lookup_established(mn->net,
				     mn->net->ipv4.tcp_death_row.hashinfo,
				     s->t.raddr, s->t.rport, s->t.laddr,
				     s->t.lport, 0);
	if (!sk)
		return false;
	if (sk_fullsock(sk)) {
		tp = tcp_sk(sk);
		ok = between(seq, READ_ONCE(tp->snd_una),
			     READ_ONCE(tp->snd_nxt));
	}
	sock_gen_put(sk);
	return ok;
}

/*
 * The session whose packet, of protocol @proto from port @sport to port
 * @dport, its transport header at @l4 in @skb, was quoted, sent to node
 * @n, if the quote shows it is that session's (mpip_icmp_tcp_seq_ok());
 * else NULL.
 */
static struct mpip_session *mpip_icmp_flow(struct mpip_net *mn,
					   struct sk_buff *skb,
					   struct mpip_node *n, u8 proto,
					   unsigned int l4, __be16 sport,
					   __be16 dport)
{
	struct mpip_session *s;

	s = mpip_icmp_session(mn, n, proto, sport, dport);
	if (s && proto == IPPROTO_TCP && !mpip_icmp_tcp_seq_ok(mn, skb, l4, s))
		return NULL;
	return s;
}

/*
 * The protocol of the packet inside UDP that the quote at @qoff shows,
 * its transport header at *@l4; 0 if the quote does not reach it.
 */
static u8 mpip_icmp_inner(struct sk_buff *skb, unsigned int qoff,
			  unsigned int *l4)
{
	unsigned int shim = qoff + ((const struct iphdr *)
				    (skb->data + qoff))->ihl * 4 +
			    sizeof(struct udphdr);

	if (!pskb_may_pull(skb, shim + MPIP_ENCAP_SHIM_LEN))
		return 0;
	*l4 = shim + MPIP_ENCAP_SHIM_LEN;
	return mpip_encap_shim_proto(skb->data + shim);
}

/*
 * Path @p, between the quoted packet's addresses, carries packets inside
 * UDP to port @dport: the quoted datagram, from the control port, was one
 * of them.
 */
static bool mpip_icmp_encap(const struct mpip_path *p, __be16 dport)
{
	return READ_ONCE(p->encap) && dport == READ_ONCE(p->dport);
}

/*
 * "Fragmentation needed" @skb about a datagram from our control port,
 * quoted at @qoff to port @dport: a packet mpip sent inside UDP on a path,
 * or a control datagram.  No socket sends from that port, and the
 * kernel's UDP would take the MTU of any such error for the route, asking
 * nothing (udp_err()): mpip decides, and the error goes no further.  Its
 * MTU is recorded on the path and its route, and for a TCP flow, less
 * mpip's room, on the flow's route, only if the quote reaches the packet
 * inside and names its session (for TCP, with a sequence number its
 * socket sent); else it is counted (rx_icmp_refused).
 */
static void mpip_icmp_own(struct mpip_net *mn, struct sk_buff *skb,
			  unsigned int qoff, __be16 dport)
{
	const struct iphdr *quoted = (const struct iphdr *)(skb->data + qoff);
	struct mpip_session *s;
	__be16 isport, idport;
	struct mpip_path *p;
	struct mpip_node *n;
	unsigned int l4;
	u8 inner;

	n = mpip_icmp_node(mn, quoted->saddr, quoted->daddr, &p);
	if (!n || !mpip_icmp_encap(p, dport))
		return;
	inner = mpip_icmp_inner(skb, qoff, &l4);
	s = NULL;
	if (inner && mpip_icmp_ports(skb, l4, &isport, &idport))
		s = mpip_icmp_flow(mn, skb, n, inner, l4, isport, idport);
	if (!s) {
		mpip_inc(mn, MPIP_STAT_RX_ICMP_REFUSED);
		return;
	}
	if (!mpip_icmp_csum_ok(skb, ip_hdrlen(skb)))
		return;
	mpip_icmp_path_mtu(mn, skb, qoff, p);
	if (inner == IPPROTO_TCP)
		mpip_icmp_flow_mtu(mn, skb, qoff, s, inner,
				   mpip_icmp_tcp_mtu(mn, skb, p));
	mpip_inc(mn, MPIP_STAT_RX_ICMP_PMTU);
}

/*
 * "Fragmentation needed" @skb about a TCP or UDP packet that mpip may have
 * moved to a path, or sent on its flow's own, quoted at @qoff with ports
 * @sport and @dport: if it is a session's, record the MTU on the path and
 * its route, and translate the error back to the flow, with the MTU less
 * mpip's room on the path for TCP (mpip_icmp_tcp_mtu()).
 */
static void mpip_icmp_moved(struct mpip_net *mn, struct sk_buff *skb,
			    unsigned int qoff, __be16 sport, __be16 dport)
{
	const struct iphdr *quoted = (const struct iphdr *)(skb->data + qoff);
	bool tcp = quoted->protocol == IPPROTO_TCP;
	struct mpip_session *s;
	struct mpip_path *p;
	struct mpip_node *n;
	bool moved;

	n = mpip_icmp_node(mn, quoted->saddr, quoted->daddr, &p);
	if (!n)
		return;
	s = mpip_icmp_flow(mn, skb, n, quoted->protocol,
			   qoff + quoted->ihl * 4, sport, dport);
	/* Not a session's packet; or a UDP one that was not moved. */
	quoted = (const struct iphdr *)(skb->data + qoff);
	moved = s && (s->t.laddr != quoted->saddr ||
		      s->t.raddr != quoted->daddr);
	if (!s || (!moved && !tcp) ||
	    !mpip_icmp_csum_ok(skb, ip_hdrlen(skb)))
		return;
	mpip_icmp_path_mtu(mn, skb, qoff, p);
	if (mpip_icmp_translate(skb, qoff, s, tcp ?
				mpip_icmp_tcp_mtu(mn, skb, p) :
				mpip_icmp_mtu(skb)))
		return;
	mpip_inc(mn, MPIP_STAT_RX_ICMP_PMTU);
}

/*
 * An ICMP error @skb for this host, in the input hook (RCU held): if it
 * says that a session's packet on a path, or inside UDP on one, needs
 * fragmentation, record the MTU on the path and its route, and translate
 * the error back to the flow (mpip_icmp_moved(), mpip_icmp_own()).
 * Returns true if the error must go no further: one about a datagram
 * from our control port.
 */
bool mpip_icmp_rx(struct mpip_net *mn, struct sk_buff *skb)
{
	unsigned int qoff = ip_hdrlen(skb) + sizeof(struct icmphdr);
	const struct icmphdr *ih;
	const struct iphdr *quoted;
	__be16 sport, dport;
	bool own;

	if (!pskb_may_pull(skb, qoff + sizeof(struct iphdr)))
		return false;
	ih = (const struct icmphdr *)(skb->data + ip_hdrlen(skb));
	if (ih->type != ICMP_DEST_UNREACH || ih->code != ICMP_FRAG_NEEDED)
		return false;
	/*
	 * Our own IP output's (a packet bigger than its route): it tells
	 * the route's MTU, which mpip sized the packet by, not a path's.
	 * Taken, it would lower the flow's by mpip's room again and again.
	 */
	if (skb->dev && (skb->dev->flags & IFF_LOOPBACK))
		return false;
	quoted = (const struct iphdr *)(skb->data + qoff);
	if (quoted->version != 4 || quoted->ihl < 5 ||
	    (quoted->protocol != IPPROTO_TCP &&
	     quoted->protocol != IPPROTO_UDP))
		return false;
	if (!mpip_icmp_ports(skb, qoff + quoted->ihl * 4, &sport, &dport))
		return false;
	quoted = (const struct iphdr *)(skb->data + qoff);
	own = quoted->protocol == IPPROTO_UDP &&
	      sport == htons(MPIP_CTRL_PORT);
	/* Over the budget, ours is not looked at, nor taken by anyone. */
	if (!mpip_budget_try(&mn->icmp_tat, MPIP_ICMP_PER_SEC,
			     MPIP_ICMP_PER_SEC))
		return own;
	if (own)
		mpip_icmp_own(mn, skb, qoff, dport);
	else
		mpip_icmp_moved(mn, skb, qoff, sport, dport);
	return own;
}

void mpip_icmp_init(struct mpip_net *mn)
{
	atomic64_set(&mn->icmp_tat, 0);
}
