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
 * Two things happen to such an error, in the input hook, before
 * conntrack sees it:
 *
 * - mpip records the MTU on the path's route, as IP tunnels do for their
 *   underlay (ipv4_update_pmtu()): mpip_out_fits() then keeps packets
 *   that no longer fit the path on their flow's own path;
 * - the error is translated back to the flow, as NAT does for errors
 *   about the packets it translated: the quoted header gets the session's
 *   addresses, the error the session's local address as destination.
 *   The stack then finds the socket: TCP checks the quoted sequence
 *   number and lowers its MSS, so that its segments fit every path;
 *   UDP records the MTU as for any route; conntrack sees an error
 *   related to the flow.  The quoted transport checksum is left as it
 *   was (nothing checks it).
 *
 * A packet sent inside UDP (encap.c) is quoted as a datagram from the
 * control port to the port of the path it took.  Its error gives that
 * path's MTU, which mpip records on the path's route; it is not passed
 * on to the flow: the quote may end before the packet inside, and the
 * flow's own route, where it shares it, already has the MTU.  A packet
 * that does not fit the path inside UDP is then fragmented (output.c).
 *
 * Other errors about a moved packet (unreachable, time exceeded) are not
 * translated: a path that fails is mpip's business (its path states and
 * failover), and the flow goes on over its other paths; the application
 * must not see the error as its own.
 *
 * Errors come from anywhere: only one that quotes a TCP or UDP packet
 * between the two addresses of an existing path, with the ports of a
 * session with that path's node, counts (a blind attacker must guess the
 * flow's ports, and for TCP its sequence numbers before the socket acts
 * on it); the MTU is bounded by the route code (min_pmtu); and the
 * search, a walk over the namespace's nodes and at most 72 session
 * lookups, runs at most MPIP_ICMP_PER_SEC times a second.
 */
#include <linux/icmp.h>
#include <linux/ip.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/route.h>

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
 * The session with node @n whose packet the error quotes (protocol
 * @proto, ports @lport and @rport): its addresses are one of this host's
 * and one of @n's (or the path's own).  Caller holds RCU.
 */
static struct mpip_session *mpip_icmp_session(struct mpip_net *mn,
					      struct mpip_node *n,
					      const struct mpip_path *p,
					      u8 proto, __be16 lport,
					      __be16 rport)
{
	struct mpip_laddr la[MPIP_CM_MAX_ADDRS];
	__be32 ra[MPIP_CM_MAX_ADDRS + 1];
	unsigned int nla, nra, i, j;
	struct mpip_session *s;

	spin_lock_bh(&n->lock);
	nra = n->naddrs;
	memcpy(ra, n->addrs, nra * sizeof(ra[0]));
	spin_unlock_bh(&n->lock);
	ra[nra++] = p->daddr;
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
 * of session @s: the quoted source and destination, and the error's own
 * destination (the quoted source).  Checksums are computed again.
 */
static int mpip_icmp_translate(struct sk_buff *skb, unsigned int qoff,
			       const struct mpip_session *s)
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
	ih->checksum = 0;
	ih->checksum = csum_fold(skb_checksum(skb, ihl, skb->len - ihl, 0));
	skb->ip_summed = CHECKSUM_NONE;
	return 0;
}

/*
 * Record the MTU of "fragmentation needed" @skb, which quotes at @qoff a
 * packet sent on path @p, on the path's route.  The route code reads the
 * quoted header at skb->data, as for tunnels.
 */
static void mpip_icmp_path_mtu(struct mpip_net *mn, struct sk_buff *skb,
			       unsigned int qoff, const struct mpip_path *p)
{
	const struct icmphdr *ih = (const struct icmphdr *)
		(skb_network_header(skb) + ip_hdrlen(skb));
	u8 proto = ((const struct iphdr *)(skb->data + qoff))->protocol;
	u32 mtu = ntohs(ih->un.frag.mtu);

	__skb_pull(skb, qoff);
	ipv4_update_pmtu(skb, mn->net, mtu, p->ifindex, proto);
	__skb_push(skb, qoff);
}

/* The quoted packet's ports, its header at @qoff; false if not there. */
static bool mpip_icmp_ports(struct sk_buff *skb, unsigned int qoff,
			    __be16 *sport, __be16 *dport)
{
	const struct iphdr *quoted;
	unsigned int l4;

	quoted = (const struct iphdr *)(skb->data + qoff);
	l4 = qoff + quoted->ihl * 4;
	if (!pskb_may_pull(skb, l4 + 2 * sizeof(__be16)))
		return false;
	*sport = *(__be16 *)(skb->data + l4);
	*dport = *(__be16 *)(skb->data + l4 + sizeof(__be16));
	return true;
}

/*
 * Path @p, between the quoted packet's addresses, carries packets inside
 * UDP to port @dport, from the control port @sport: the quoted packet
 * was one of them.
 */
static bool mpip_icmp_encap(const struct mpip_path *p, __be16 sport,
			    __be16 dport)
{
	return READ_ONCE(p->encap) && sport == htons(MPIP_CTRL_PORT) &&
	       dport == READ_ONCE(p->dport);
}

/*
 * An ICMP error @skb for this host, in the input hook (RCU held): if it
 * says that a packet moved to a path, or sent inside UDP on one, needs
 * fragmentation, record the MTU on the path's route, and translate the
 * error about a moved packet back to the flow.
 */
void mpip_icmp_rx(struct mpip_net *mn, struct sk_buff *skb)
{
	unsigned int qoff = ip_hdrlen(skb) + sizeof(struct icmphdr);
	const struct icmphdr *ih;
	const struct iphdr *quoted;
	struct mpip_session *s;
	__be16 sport, dport;
	struct mpip_path *p;
	struct mpip_node *n;

	if (!pskb_may_pull(skb, qoff + sizeof(struct iphdr)))
		return;
	ih = (const struct icmphdr *)(skb->data + ip_hdrlen(skb));
	if (ih->type != ICMP_DEST_UNREACH || ih->code != ICMP_FRAG_NEEDED)
		return;
	quoted = (const struct iphdr *)(skb->data + qoff);
	if (quoted->version != 4 || quoted->ihl < 5 ||
	    (quoted->protocol != IPPROTO_TCP &&
	     quoted->protocol != IPPROTO_UDP))
		return;
	if (!mpip_budget_try(&mn->icmp_tat, MPIP_ICMP_PER_SEC,
			     MPIP_ICMP_PER_SEC))
		return;
	if (!mpip_icmp_ports(skb, qoff, &sport, &dport))
		return;
	quoted = (const struct iphdr *)(skb->data + qoff);
	n = mpip_icmp_node(mn, quoted->saddr, quoted->daddr, &p);
	if (!n)
		return;
	if (quoted->protocol == IPPROTO_UDP && mpip_icmp_encap(p, sport, dport)) {
		if (!mpip_icmp_csum_ok(skb, ip_hdrlen(skb)))
			return;
		mpip_icmp_path_mtu(mn, skb, qoff, p);
		mpip_inc(mn, MPIP_STAT_RX_ICMP_PMTU);
		return;
	}
	s = mpip_icmp_session(mn, n, p, quoted->protocol, sport, dport);
	/* Not a session's packet, or one that was not moved. */
	if (!s || (s->t.laddr == quoted->saddr && s->t.raddr == quoted->daddr))
		return;
	if (!mpip_icmp_csum_ok(skb, ip_hdrlen(skb)))
		return;
	mpip_icmp_path_mtu(mn, skb, qoff, p);
	if (mpip_icmp_translate(skb, qoff, s))
		return;
	mpip_inc(mn, MPIP_STAT_RX_ICMP_PMTU);
}

void mpip_icmp_init(struct mpip_net *mn)
{
	atomic64_set(&mn->icmp_tat, 0);
}
