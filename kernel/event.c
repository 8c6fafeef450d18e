// SPDX-License-Identifier: GPL-2.0
/*
 * mpip: events for the listeners of the "events" multicast group
 * (mpipctl monitor): a peer found or lost, a path up or down, a peer's
 * data failed over to backup links or back, a rule's packet count at a
 * multiple of rule_event_pkts.
 *
 * They are sent from where the state changes: the packet path, timers and
 * work items, sometimes under a node's lock.  So the message is built with
 * an atomic allocation and multicast without waiting; nothing is built
 * when no socket of the namespace listens; and since peers' packets make
 * paths and nodes change state, at most MPIP_EVENTS_PER_SEC events a
 * second leave a namespace, the others are counted (event_drop).  A
 * listener whose socket buffer is full misses events (netlink reports
 * ENOBUFS to it).
 */
#include <linux/ratelimit.h>
#include <net/genetlink.h>

#include "mpip.h"

/*
 * Room for the largest event: MPIP_A_EVENT and a path's nest with its
 * node ID, addresses and ifindex (u32) and its ID and state (u8), and for
 * path_nat the address (u32) and port (u16) the peer saw; or a rule's
 * with its preference (u32) and counters (u64, each maybe padded).
 */
#define MPIP_EVENT_PATH_SIZE	(5 * nla_total_size(4) + \
				 2 * nla_total_size(1) + nla_total_size(2))
#define MPIP_EVENT_RULE_SIZE	(nla_total_size(4) + \
				 2 * nla_total_size_64bit(8))
#define MPIP_EVENT_SIZE	(nla_total_size(1) + nla_total_size(0) + \
			 max(MPIP_EVENT_PATH_SIZE, MPIP_EVENT_RULE_SIZE))

/*
 * May an event be sent?  Someone listens and the budget is not spent.
 * From here to the multicast, RCU is held (netlink.c says why).
 */
static bool mpip_event_may(struct mpip_net *mn)
{
	if (!mpip_nl_event_listened(mn->net))
		return false;
	if (__ratelimit(&mn->event_rs))
		return true;
	mpip_inc(mn, MPIP_STAT_EVENT_DROP);
	return false;
}

/*
 * Begin an event of @type whose details go in nest @attr: the message, or
 * NULL if none is to be sent (nobody listens, over budget, no memory).
 * Caller holds RCU until mpip_event_end().
 */
static struct sk_buff *mpip_event_begin(struct mpip_net *mn, u8 type,
					int attr, void **hdr,
					struct nlattr **nest)
{
	struct sk_buff *skb;

	if (!mpip_event_may(mn))
		return NULL;
	skb = genlmsg_new(MPIP_EVENT_SIZE, GFP_ATOMIC);
	if (!skb)
		goto drop;
	*hdr = mpip_nl_event_start(skb);
	if (*hdr && !nla_put_u8(skb, MPIP_A_EVENT, type)) {
		*nest = nla_nest_start(skb, attr);
		if (*nest)
			return skb;
	}
	nlmsg_free(skb);
drop:
	mpip_inc(mn, MPIP_STAT_EVENT_DROP);
	return NULL;
}

/* Close the nest and send the event, or drop it if filling it @failed. */
static void mpip_event_end(struct mpip_net *mn, struct sk_buff *skb,
			   void *hdr, struct nlattr *nest, bool failed)
{
	if (failed) {
		nlmsg_free(skb);
		mpip_inc(mn, MPIP_STAT_EVENT_DROP);
		return;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	mpip_nl_event_send(mn->net, skb);
}

/* An event of node @n: its IDs, and @tier if it is not negative. */
static void mpip_event_node(struct mpip_net *mn, const struct mpip_node *n,
			    u8 type, int tier)
{
	struct sk_buff *skb;
	struct nlattr *nest;
	void *hdr;

	rcu_read_lock();
	skb = mpip_event_begin(mn, type, MPIP_A_NODE, &hdr, &nest);
	if (skb)
		mpip_event_end(mn, skb, hdr, nest,
			       nla_put_u32(skb, MPIP_NODE_A_ID, n->id) ||
			       nla_put_u32(skb, MPIP_NODE_A_PEER_ID,
					   mpip_node_peer_id(n)) ||
			       (tier >= 0 &&
				nla_put_u8(skb, MPIP_NODE_A_TIER, tier)));
	rcu_read_unlock();
}

/* Node @n was found (MPIP_EVENT_PEER_FOUND) or lost. */
void mpip_event_peer(struct mpip_net *mn, const struct mpip_node *n, u8 type)
{
	mpip_event_node(mn, n, type, -1);
}

/*
 * Data to node @n went over to tier @tier: a failover
 * (MPIP_EVENT_FAILOVER) to a higher one or a failback to a lower one.
 */
void mpip_event_tier(struct mpip_net *mn, const struct mpip_node *n, u8 type,
		     unsigned int tier)
{
	mpip_event_node(mn, n, type, tier);
}

/* A path event's details; true if they did not fit. */
static bool mpip_event_fill_path(struct sk_buff *skb,
				 const struct mpip_node *n,
				 const struct mpip_path *p, int state)
{
	return nla_put_u32(skb, MPIP_PATH_A_NODE_ID, n->id) ||
	       nla_put_u8(skb, MPIP_PATH_A_ID, p->id) ||
	       nla_put_in_addr(skb, MPIP_PATH_A_SADDR, p->saddr) ||
	       nla_put_in_addr(skb, MPIP_PATH_A_DADDR, p->daddr) ||
	       nla_put_u32(skb, MPIP_PATH_A_IFINDEX, p->ifindex) ||
	       nla_put_u8(skb, MPIP_PATH_A_STATE, state);
}

/* Path @p of node @n went to @state: up, or down from up. */
void mpip_event_path(struct mpip_net *mn, const struct mpip_node *n,
		     const struct mpip_path *p, int state)
{
	u8 type = state == MPIP_PATH_UP ? MPIP_EVENT_PATH_UP :
		  MPIP_EVENT_PATH_DOWN;
	struct sk_buff *skb;
	struct nlattr *nest;
	void *hdr;

	rcu_read_lock();
	skb = mpip_event_begin(mn, type, MPIP_A_PATH, &hdr, &nest);
	if (skb)
		mpip_event_end(mn, skb, hdr, nest,
			       mpip_event_fill_path(skb, n, p, state));
	rcu_read_unlock();
}

/*
 * Path @p of node @n was found translated: the peer saw its probe come
 * from (@addr, @port).
 */
void mpip_event_path_nat(struct mpip_net *mn, const struct mpip_node *n,
			 const struct mpip_path *p, __be32 addr, __be16 port)
{
	struct sk_buff *skb;
	struct nlattr *nest;
	void *hdr;

	rcu_read_lock();
	skb = mpip_event_begin(mn, MPIP_EVENT_PATH_NAT, MPIP_A_PATH, &hdr,
			       &nest);
	if (skb)
		mpip_event_end(mn, skb, hdr, nest,
			       mpip_event_fill_path(skb, n, p,
						    READ_ONCE(p->state)) ||
			       nla_put_in_addr(skb, MPIP_PATH_A_SEEN_ADDR,
					       addr) ||
			       nla_put_u16(skb, MPIP_PATH_A_SEEN_PORT,
					   ntohs(port)));
	rcu_read_unlock();
}

/* Rule @r (its counters summed) reached a multiple of rule_event_pkts. */
void mpip_event_rule(struct mpip_net *mn, const struct mpip_rule *r)
{
	struct sk_buff *skb;
	struct nlattr *nest;
	void *hdr;

	rcu_read_lock();
	skb = mpip_event_begin(mn, MPIP_EVENT_RULE_HITS, MPIP_A_RULE, &hdr,
			       &nest);
	if (skb)
		mpip_event_end(mn, skb, hdr, nest,
			       nla_put_u32(skb, MPIP_RULE_A_PREF, r->pref) ||
			       nla_put_u64_64bit(skb, MPIP_RULE_A_PKTS, r->pkts,
						 MPIP_RULE_A_PAD) ||
			       nla_put_u64_64bit(skb, MPIP_RULE_A_BYTES,
						 r->bytes, MPIP_RULE_A_PAD));
	rcu_read_unlock();
}

void mpip_event_init(struct mpip_net *mn)
{
	ratelimit_state_init(&mn->event_rs, HZ, MPIP_EVENTS_PER_SEC);
	/* no "callbacks suppressed" lines: the drops are counted */
	ratelimit_set_flags(&mn->event_rs, RATELIMIT_MSG_ON_RELEASE);
}
