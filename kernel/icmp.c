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
 * So mpip records the MTU on the path's route, as IP tunnels do for
 * their underlay (ipv4_update_pmtu()): the path's cached route then has
 * the smaller MTU, and mpip_out_fits() keeps the packets that no longer
 * fit it on their flow's own path.  The error itself goes on to the
 * stack, which finds no socket for it.
 *
 * Errors come from anywhere: only one about a TCP or UDP packet between
 * the two addresses of an existing path counts, the MTU is bounded by
 * the route code (min_pmtu), and the search for the path, a walk over
 * the namespace's nodes, runs at most MPIP_ICMP_PER_SEC times a second.
 */
#include <linux/icmp.h>
#include <linux/ip.h>
#include <linux/ratelimit.h>
#include <net/ip.h>
#include <net/route.h>

#include "mpip.h"

/* The path of any node with these wire addresses.  Caller holds RCU. */
static struct mpip_path *mpip_icmp_path(struct mpip_net *mn, __be32 saddr,
					__be32 daddr)
{
	struct mpip_path *p;
	struct mpip_node *n;
	unsigned int b;

	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			p = mpip_path_find(n, saddr, daddr);
			if (p)
				return p;
		}
	}
	return NULL;
}

/*
 * An ICMP error @skb for this host, in the input hook (RCU held): if it
 * says that a packet sent on a path needs fragmentation, record the MTU
 * on the path's route.
 */
void mpip_icmp_rx(struct mpip_net *mn, struct sk_buff *skb)
{
	unsigned int off = ip_hdrlen(skb) + sizeof(struct icmphdr);
	const struct icmphdr *ih;
	const struct iphdr *inner;
	struct mpip_path *p;
	u32 mtu;

	if (!pskb_may_pull(skb, off + sizeof(struct iphdr)))
		return;
	ih = (const struct icmphdr *)(skb_network_header(skb) +
				      ip_hdrlen(skb));
	if (ih->type != ICMP_DEST_UNREACH || ih->code != ICMP_FRAG_NEEDED)
		return;
	inner = (const struct iphdr *)(skb_network_header(skb) + off);
	if (inner->version != 4 || inner->ihl < 5 ||
	    (inner->protocol != IPPROTO_TCP && inner->protocol != IPPROTO_UDP))
		return;
	if (!__ratelimit(&mn->icmp_rs))
		return;
	p = mpip_icmp_path(mn, inner->saddr, inner->daddr);
	if (!p)
		return;
	mtu = ntohs(ih->un.frag.mtu);
	/* The update reads the quoted header at skb->data, as for tunnels. */
	__skb_pull(skb, off);
	ipv4_update_pmtu(skb, mn->net, mtu, p->ifindex, inner->protocol);
	__skb_push(skb, off);
	mpip_inc(mn, MPIP_STAT_RX_ICMP_PMTU);
}

void mpip_icmp_init(struct mpip_net *mn)
{
	ratelimit_state_init(&mn->icmp_rs, HZ, MPIP_ICMP_PER_SEC);
	ratelimit_set_flags(&mn->icmp_rs, RATELIMIT_MSG_ON_RELEASE);
}
