// SPDX-License-Identifier: GPL-2.0
/*
 * mpip and the host's routing and security policy.
 *
 * mpip moves a packet to another path only where the host's own policy
 * would let the flow go.  Three checks, cheapest first:
 *
 * - A flow whose route leaves through another interface than the one
 *   that owns its source address is steered by a route mpip knows
 *   nothing of: it stays on it.  So does a flow routed through a VPN or
 *   tunnel device (WireGuard, tun, vti, xfrm, ipip, gre).
 * - With policy routing rules in the namespace (ip rule: a VPN's fwmark
 *   rule, uid or source rules, ...), a path is allowed for a flow only if
 *   the rules, given the flow's own key (mark, uid, protocol, ports, TOS)
 *   and the path's source address, send both the flow's destination and
 *   the path's through the path's interface, in the same table.  Hosts
 *   that route each uplink's source address through its own table keep
 *   all their paths; a full-tunnel VPN's rule sends the flow to the
 *   tunnel, so no path outside it is allowed.  Where rules exist, this
 *   is stricter than without: a flow moves only where the host would
 *   send it from that address anyway.
 * - With IPsec policies in the namespace, a path is allowed only if no
 *   policy transforms the flow's packets between the path's addresses:
 *   mpip's rerouted packets are past the point where IPsec applies.
 *   (Packets whose own route is an IPsec bundle are not touched at all:
 *   see mpip_out_own().)
 *
 * The last two cost route lookups per rerouted packet, and run only in
 * namespaces that have rules or policies.
 */
#include <linux/ip.h>
#include <linux/inetdevice.h>
#include <net/ip_fib.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/xfrm.h>

#include "mpip.h"

/*
 * Is @dev a VPN or tunnel device?  What is routed through it is meant to
 * stay in it: a server's route to its VPN clients' subnet is an ordinary
 * route, yet moving a flow from it to the client's public addresses
 * would take it out of the tunnel.
 */
static bool mpip_policy_dev_tunnel(const struct net_device *dev)
{
	static const char * const kinds[] = {
		"wireguard", "tun", "vti", "xfrm", "ipip", "gre",
	};
	const char *kind;
	unsigned int i;

	if (!dev->rtnl_link_ops)
		return false;
	kind = dev->rtnl_link_ops->kind;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(kind, kinds[i]))
			return true;
	}
	return false;
}

/*
 * Is the flow of @skb free to move: does its route leave through the
 * interface that owns its source address, and is that no tunnel?
 * Caller holds RCU.
 */
bool mpip_policy_flow_plain(struct net *net, const struct sk_buff *skb)
{
	const struct net_device *dev;

	dev = __ip_dev_find(net, ip_hdr(skb)->saddr, false);
	return dev && dev == skb_dst(skb)->dev && !mpip_policy_dev_tunnel(dev);
}

/* The routing key of @skb's flow, on path @p. */
static void mpip_policy_key(struct net *net, const struct sk_buff *skb,
			    __be16 sport, __be16 dport,
			    const struct mpip_path *p, struct flowi4 *fl4)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct sock *sk = skb->sk;

	memset(fl4, 0, sizeof(*fl4));
	fl4->daddr = p->daddr;
	fl4->saddr = p->saddr;
	fl4->flowi4_mark = skb->mark;
	fl4->flowi4_tos = RT_TOS(iph->tos);
	fl4->flowi4_scope = RT_SCOPE_UNIVERSE;
	fl4->flowi4_proto = iph->protocol;
	fl4->fl4_sport = sport;
	fl4->fl4_dport = dport;
	fl4->flowi4_uid = sock_net_uid(net, sk && sk_fullsock(sk) ? sk : NULL);
}

/* The table a route lookup of @fl4 ends in; 0 if there is no route. */
static u32 mpip_policy_table(struct net *net, struct flowi4 *fl4,
			     int *oif)
{
	struct fib_result res;

	if (fib_lookup(net, fl4, &res, 0) || res.type != RTN_UNICAST ||
	    !res.table || !res.nhc)
		return 0;
	*oif = res.nhc->nhc_oif;
	return res.table->tb_id;
}

/*
 * Would the rules send the flow, from the path's source address, through
 * the path's interface @ifindex anyway: both to its own destination
 * @daddr and to the path's (@fl4: the path's addresses, the flow's key),
 * in the same table?  Then mpip only does what the host's policy does
 * for that source.  Rules that pick a table by source address (one
 * table per uplink) agree; a VPN's rule that sends the flow to the
 * tunnel, or a route that reaches its destination through the tunnel
 * device, does not.  Caller holds RCU.
 */
static bool mpip_policy_rules_ok(struct net *net, struct flowi4 *fl4,
				 int ifindex, __be32 daddr)
{
	__be32 path_daddr = fl4->daddr;
	int flow_oif = 0, path_oif = 0;
	u32 flow_tb, path_tb;

	fl4->flowi4_oif = 0;
	fl4->daddr = daddr;
	flow_tb = mpip_policy_table(net, fl4, &flow_oif);
	fl4->daddr = path_daddr;
	if (!flow_tb || flow_oif != ifindex)
		return false;
	path_tb = mpip_policy_table(net, fl4, &path_oif);
	return path_tb == flow_tb && path_oif == ifindex;
}

/* Does no IPsec policy apply to the flow on route @dst?  */
static bool mpip_policy_xfrm_ok(struct net *net, struct flowi4 *fl4,
				struct dst_entry *dst)
{
#ifdef CONFIG_XFRM
	struct dst_entry *x;

	if (!READ_ONCE(net->xfrm.policy_count[XFRM_POLICY_OUT]))
		return true;
	/* xfrm_lookup() takes a reference of the route it is given. */
	dst_hold(dst);
	x = xfrm_lookup(net, dst, flowi4_to_flowi(fl4), NULL, 0);
	if (IS_ERR(x))
		return false;
	dst_release(x);
	return x == dst;
#else
	return true;
#endif
}

static bool mpip_policy_has_rules(const struct net *net)
{
#ifdef CONFIG_IP_MULTIPLE_TABLES
	return READ_ONCE(net->ipv4.fib_has_custom_rules);
#else
	return false;
#endif
}

/*
 * May the flow of @skb (ports @sport, @dport) take path @p, whose route
 * is @dst, under the host's policy?  Caller holds RCU.
 */
bool mpip_policy_path_ok(struct net *net, const struct sk_buff *skb,
			 __be16 sport, __be16 dport,
			 const struct mpip_path *p, struct dst_entry *dst)
{
	bool rules = mpip_policy_has_rules(net);
	struct flowi4 fl4;

#ifdef CONFIG_XFRM
	if (!rules && !READ_ONCE(net->xfrm.policy_count[XFRM_POLICY_OUT]))
		return true;
#else
	if (!rules)
		return true;
#endif
	mpip_policy_key(net, skb, sport, dport, p, &fl4);
	if (rules &&
	    !mpip_policy_rules_ok(net, &fl4, p->ifindex, ip_hdr(skb)->daddr))
		return false;
	fl4.flowi4_oif = p->ifindex;
	return mpip_policy_xfrm_ok(net, &fl4, dst);
}
