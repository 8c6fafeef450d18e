// SPDX-License-Identifier: GPL-2.0
/*
 * mpip fake-TCP encapsulation (issue 21, nat_mode faketcp): the packets
 * of a path through a NAT travel as segments of a TCP connection of the
 * path's own, between the control ports, for NATs and firewalls that pass
 * TCP better than UDP.  The connection's states and headers are the
 * portable core's (core/ftcp.h); this file sends and receives them.
 *
 * The end behind the NAT (a path found translated while nat_mode is
 * faketcp: rr.c) opens the connection: a SYN from the heartbeat, at most
 * once a second, until the peer's SYN-ACK came.  Until then the path's
 * packets go inside UDP.  A SYN carries a counter and a MAC under the
 * pair's keys (core/ftcp.h, core/auth.h).  The peer answers a SYN that
 * verifies, with a counter it has not seen, from the address of a path
 * it learned through that NAT statelessly, with a cookie for its
 * sequence number (SipHash of the four-tuple under the
 * namespace's secret), and keeps no state until a packet inside the
 * connection carries an authenticated CM of a node whose path (learned
 * through the NAT) ends at the segment's source address, and
 * acknowledges the cookie: that path then sends inside the connection,
 * to the NAT's TCP port, and first an ACK, whose scaled window lets the
 * NAT pass more than the 64 KiB the SYN-ACK's gave.  Either end sends an
 * ACK of its own whenever it received a quarter of the window since it
 * last acknowledged anything (a bulk flow one way).  Everything the
 * connection carries is checked as a packet inside UDP is: the shim,
 * then the CM's MAC, replay window and return routability.
 *
 * TCP to the control port is mpip's while it is enabled in the namespace:
 * every such segment is taken in the input hook and never reaches the
 * stack (which would answer with a RST).
 */
#include <linux/ip.h>
#include <linux/netfilter_ipv4.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/tcp.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/route.h>

#include "mpip.h"

/* The MSS our SYNs and SYN-ACKs announce: nothing is ever sent that big. */
#define MPIP_FTCP_MSS		1400
/*
 * How long after a SYN the opener's connection may stay unanswered by the
 * peer before the opener sends another, and how long the peer stays out
 * of its open connection after a SYN for it came (mpip_ftcp_quiet()).
 */
#define MPIP_FTCP_RETRY		(2 * HZ)
#define MPIP_FTCP_QUIET		(3 * HZ)
/* Domain of the cookie under the namespace's secret ("ftcp") */
#define MPIP_FTCP_COOKIE_TAG	0x66746370

/* The SYN-ACK's sequence number for the connection from @raddr:@rport. */
static u32 mpip_ftcp_cookie(const struct mpip_net *mn, __be32 laddr,
			    __be32 raddr, __be16 rport)
{
	return (u32)siphash_4u32((__force u32)laddr, (__force u32)raddr,
				 (__force u32)rport, MPIP_FTCP_COOKIE_TAG,
				 &mn->secret);
}

/* Send fake segment @g, without payload, to @daddr:@dport. */
static void mpip_ftcp_xmit(struct mpip_net *mn, __be32 saddr, __be32 daddr,
			   __be16 dport, const struct mpip_ftcp_seg *g)
{
	unsigned int hlen = mpip_ftcp_hdr_len(g->flags), hh;
	struct flowi4 fl4 = {
		.daddr = daddr,
		.saddr = saddr,
		.flowi4_proto = IPPROTO_TCP,
	};
	struct sk_buff *skb;
	struct iphdr *iph;
	struct tcphdr *th;
	struct rtable *rt;

	if (!mpip_ctrl_may_send(mn))
		return;
	rt = ip_route_output_key(mn->net, &fl4);
	if (IS_ERR(rt))
		return;
	hh = LL_RESERVED_SPACE(rt->dst.dev);
	skb = alloc_skb(hh + sizeof(*iph) + hlen, GFP_ATOMIC);
	if (!skb) {
		ip_rt_put(rt);
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return;
	}
	skb_reserve(skb, hh);
	skb_reset_network_header(skb);
	skb->protocol = htons(ETH_P_IP);
	skb_dst_set(skb, &rt->dst);

	iph = mpip_ctrl_iph(skb, rt, IPPROTO_TCP, saddr, daddr);
	iph->tot_len = htons(sizeof(*iph) + hlen);

	skb_set_transport_header(skb, skb->len);
	th = skb_put(skb, hlen);
	mpip_ftcp_hdr_put((u8 *)th, MPIP_CTRL_PORT, ntohs(dport), g);
	th->check = csum_tcpudp_magic(saddr, daddr, hlen, IPPROTO_TCP,
				      csum_partial(th, hlen, 0));
	skb->ip_summed = CHECKSUM_NONE;
	mpip_ctrl_untrack(skb);
	ip_select_ident(mn->net, skb, NULL);
	ip_send_check(iph);
	ip_local_out(mn->net, NULL, skb);
	mpip_inc(mn, MPIP_STAT_FTCP_CTRL);
}

/*
 * Should a path of ours that goes inside fake TCP send a SYN now?  When
 * it has no open connection, or is down (its connection may have died
 * with a NAT's mapping), at most once a second; and when the peer has
 * not answered in the connection MPIP_FTCP_RETRY after the SYN (a NAT
 * that still tracked the path's old connection may not have followed the
 * new one; on such a path we send nothing inside until the peer's
 * answer, core/ftcp.h).  Caller holds @p's lock.
 */
static bool mpip_ftcp_syn_due(const struct mpip_path *p)
{
	unsigned long since = p->ftcp_syn;

	if (p->ftcp.state == MPIP_FTCP_OPEN &&
	    READ_ONCE(p->state) != MPIP_PATH_DOWN)
		return !p->ftcp.wide &&
		       time_after_eq(jiffies, since + MPIP_FTCP_RETRY);
	return !since || time_after_eq(jiffies, since + HZ);
}

/*
 * A path of ours to node @n that goes inside fake TCP sends a SYN when
 * it is due, authenticated under the pair's keys (mpip_syn_seal()).  (A
 * path learned through the peer's NAT waits for the peer's.)  Caller
 * holds RCU.
 */
void mpip_ftcp_tick(struct mpip_net *mn, struct mpip_node *n,
		    struct mpip_path *p)
{
	struct mpip_ftcp_seg syn;
	bool send = false;

	if (READ_ONCE(p->encap) != MPIP_ENCAP_FTCP || p->learned)
		return;
	spin_lock_bh(&p->lock);
	if (mpip_ftcp_syn_due(p)) {
		p->ftcp_syn = jiffies | 1;
		WRITE_ONCE(p->ftcp_dport, READ_ONCE(p->dport));
		mpip_ftcp_connect(&p->ftcp, get_random_u32(), MPIP_FTCP_MSS,
				  &syn);
		send = true;
	}
	spin_unlock_bh(&p->lock);
	if (send && !mpip_syn_seal(n, &syn))
		mpip_ftcp_xmit(mn, p->saddr, p->daddr, READ_ONCE(p->ftcp_dport),
			       &syn);
}

/*
 * Does @p, learned through the peer's NAT, stay out of its open
 * connection: did a SYN for it come less than MPIP_FTCP_QUIET ago?  The
 * peer is opening a new one on the same four-tuple, and a NAT that still
 * tracks the old one follows the new one only if nothing passes between
 * the SYN and our SYN-ACK; so the path's packets go inside UDP until the
 * new connection opens here (mpip_ftcp_learn()).  Only a SYN the peer
 * sent, once, does this (mpip_ftcp_syn_path()): a forged one, or a copy,
 * changes nothing.  Caller holds @p's lock.
 */
static bool mpip_ftcp_quiet(const struct mpip_path *p)
{
	return p->ftcp_quiet &&
	       time_before(jiffies, p->ftcp_quiet + MPIP_FTCP_QUIET);
}

/*
 * The header of a packet of @len bytes (shim included) inside @p's fake
 * connection, and the port it goes to; false if the connection is not
 * open, or not yet for a segment that long (mpip_ftcp_data()), or if the
 * path stays out of it (mpip_ftcp_quiet()): the packet then goes inside
 * UDP.
 */
bool mpip_ftcp_open(struct mpip_path *p, u32 len, struct mpip_ftcp_seg *g,
		    __be16 *dport)
{
	bool open;

	spin_lock_bh(&p->lock);
	open = !mpip_ftcp_quiet(p) && mpip_ftcp_data(&p->ftcp, len, g);
	*dport = p->ftcp_dport;
	spin_unlock_bh(&p->lock);
	return open;
}

/* Is @skb a TCP segment to our control port? */
bool mpip_ftcp_is(const struct sk_buff *skb, unsigned int ihl)
{
	const struct tcphdr *th;
	struct tcphdr _th;

	th = skb_header_pointer(skb, ihl, sizeof(_th), &_th);
	return th && th->dest == htons(MPIP_CTRL_PORT);
}

/*
 * Is @p a path learned through the peer's NAT whose address echoed our
 * nonce (mpip_rr_verified())?  Only such a path's end may open a fake
 * connection with us.  Caller holds RCU.
 */
static bool mpip_ftcp_learned_ok(const struct mpip_path *p)
{
	return p->learned && READ_ONCE(p->rr_ok);
}

/*
 * Our path between local @laddr and @raddr that is one learned through a
 * NAT and verified (@learned), or one of a fake connection whose peer's
 * end is port @rport, under RCU; or NULL.  A walk over the nodes: for
 * handshakes and resets only, which the caller rate-limits.
 */
static struct mpip_path *mpip_ftcp_path(struct mpip_net *mn, __be32 laddr,
					__be32 raddr, __be16 rport,
					bool learned)
{
	struct mpip_path *p;
	struct mpip_node *n;
	unsigned int b;

	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			p = mpip_path_find(n, laddr, raddr);
			if (!p)
				continue;
			if (learned ? mpip_ftcp_learned_ok(p) :
			    (READ_ONCE(p->encap) == MPIP_ENCAP_FTCP &&
			     READ_ONCE(p->ftcp_dport) == rport))
				return p;
		}
	}
	return NULL;
}

/*
 * Our path learned through a NAT and verified that ends at @iph's source,
 * of a node whose peer sent SYN @g, new (mpip_syn_open()); else NULL,
 * counted if there was such a path (a SYN that comes before its path is
 * verified is not refused for its MAC).  Each such path's node is tried:
 * after the peer restarted, a node of its old keys may have one from the
 * same address.  A walk over the nodes, as mpip_ftcp_path(), within the
 * caller's budget.  Caller holds RCU.
 */
static struct mpip_path *mpip_ftcp_syn_path(struct mpip_net *mn,
					    const struct iphdr *iph,
					    const struct mpip_ftcp_seg *g)
{
	int err = 0, e;
	struct mpip_path *p;
	struct mpip_node *n;
	unsigned int b;

	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			p = mpip_path_find(n, iph->daddr, iph->saddr);
			if (!p || !mpip_ftcp_learned_ok(p))
				continue;
			e = mpip_syn_open(n, g);
			if (!e)
				return p;
			if (err != MPIP_AUTH_E_DUP && err != MPIP_AUTH_E_OLD)
				err = e;
		}
	}
	if (err == MPIP_AUTH_E_DUP || err == MPIP_AUTH_E_OLD)
		mpip_inc(mn, MPIP_STAT_RX_REPLAY);
	else if (err)
		mpip_inc(mn, MPIP_STAT_RX_AUTH_FAIL);
	return NULL;
}

/*
 * A SYN, SYN-ACK or RST @g from @sport: a SYN from the address of a path
 * we learned through a NAT and verified (a peer's authenticated CMs came
 * from there, and it echoed our nonce from there), authenticated by the
 * peer and new, is answered with the cookie; any other is not (a
 * stranger learns nothing of us from one, and changes nothing).  A
 * SYN-ACK or RST goes to our path's connection.  Nothing else is done
 * with it.
 */
static void mpip_ftcp_rx_ctrl(struct mpip_net *mn, const struct iphdr *iph,
			      __be16 sport, const struct mpip_ftcp_seg *g)
{
	enum mpip_ftcp_verdict v;
	struct mpip_ftcp_seg out;
	struct mpip_path *p;

	if (!mpip_ctrl_may_answer(mn, iph->saddr))
		return;
	if (g->flags == MPIP_FTCP_SYN) {
		p = mpip_ftcp_syn_path(mn, iph, g);
		if (!p)
			return;
		/* before the SYN-ACK: nothing of ours on the old connection */
		spin_lock_bh(&p->lock);
		if (p->ftcp.state == MPIP_FTCP_OPEN && p->ftcp_dport == sport)
			p->ftcp_quiet = jiffies | 1;
		spin_unlock_bh(&p->lock);
		mpip_ftcp_synack(g, mpip_ftcp_cookie(mn, iph->daddr, iph->saddr,
						     sport),
				 MPIP_FTCP_MSS, &out);
		mpip_ftcp_xmit(mn, iph->daddr, iph->saddr, sport, &out);
		return;
	}
	p = mpip_ftcp_path(mn, iph->daddr, iph->saddr, sport, false);
	if (!p)
		return;
	spin_lock_bh(&p->lock);
	v = mpip_ftcp_rx(&p->ftcp, g, 0, &out);
	spin_unlock_bh(&p->lock);
	if (v == MPIP_FTCP_REPLY)
		mpip_ftcp_xmit(mn, iph->daddr, iph->saddr, sport, &out);
}

/*
 * On the peer's side, a segment @g (@len bytes of payload, from port
 * @sport) that acknowledges the @cookie opens @p's connection, or opens
 * it again: after a RST, from another port, or after a SYN for it came
 * (mpip_ftcp_quiet(); the new connection's cookie is the old one's, and
 * only the SYN tells a copy of the old one's first segment from the new
 * one's).  It is what that side sent first.  Returns whether it did;
 * then @ack is the window update to send.  Caller holds @p's lock.
 */
static bool mpip_ftcp_try_accept(struct mpip_path *p,
				 const struct mpip_ftcp_seg *g, u32 len,
				 u32 cookie, __be16 sport,
				 struct mpip_ftcp_seg *ack)
{
	bool again = p->ftcp_dport != sport || mpip_ftcp_quiet(p);

	if (!p->learned ||
	    !mpip_ftcp_accept(&p->ftcp, g, len, cookie, again, ack))
		return false;
	WRITE_ONCE(p->ftcp_dport, sport);
	WRITE_ONCE(p->encap, MPIP_ENCAP_FTCP);
	p->ftcp_quiet = 0;
	return true;
}

/*
 * A bare ACK @g from @sport: the opener's first segment after our
 * SYN-ACK, which opens our end of a path learned through its NAT (the
 * cookie it acknowledges came only in our SYN-ACK, to that NAT's
 * address and port), or the peer's window update, which tells our end
 * that the peer answered in the connection (core/ftcp.h).  Other bare
 * ACKs change nothing.  They are rare (one a quarter window), and each
 * costs a walk over the nodes, within the budget of answers to strangers.
 */
static void mpip_ftcp_rx_bare(struct mpip_net *mn, const struct iphdr *iph,
			      __be16 sport, const struct mpip_ftcp_seg *g)
{
	struct mpip_ftcp_seg reply;
	bool peer, opened = false;
	struct mpip_path *p;
	u32 cookie;

	if (g->flags != MPIP_FTCP_ACK || !mpip_ctrl_may_answer(mn, iph->saddr))
		return;
	cookie = mpip_ftcp_cookie(mn, iph->daddr, iph->saddr, sport);
	peer = g->ack == cookie + 1;
	p = mpip_ftcp_path(mn, iph->daddr, iph->saddr, sport, peer);
	if (!p)
		return;
	spin_lock_bh(&p->lock);
	if (peer)
		opened = mpip_ftcp_try_accept(p, g, 0, cookie, sport, &reply);
	else if (p->ftcp.state == MPIP_FTCP_OPEN && !p->ftcp.wide)
		mpip_ftcp_rx(&p->ftcp, g, 0, &reply);
	spin_unlock_bh(&p->lock);
	if (!opened)
		return;
	mpip_inc(mn, MPIP_STAT_FTCP_OPEN);
	mpip_ftcp_xmit(mn, iph->daddr, iph->saddr, sport, &reply);
}

/*
 * A TCP segment @skb to our control port: a handshake segment or a reset
 * (handled here), a bare ACK, or a packet inside the connection, which
 * is taken out as from UDP (encap.c), with the segment's header in @rx
 * for mpip_ftcp_learn().  Returns 1 if @skb is now the packet inside, 0
 * if it is to be dropped without more, or an error as
 * mpip_encap_pull_at() (a segment of no use: a bad checksum or header).
 */
int mpip_ftcp_pull(struct mpip_net *mn, struct sk_buff *skb,
		   struct mpip_rx *rx)
{
	unsigned int ihl = ip_hdrlen(skb), len = skb->len - ihl, doff;
	u8 buf[MPIP_FTCP_MAX_HDR_LEN];
	const struct iphdr *iph = ip_hdr(skb);
	const u8 *b;
	__be16 sport;

	b = skb_header_pointer(skb, ihl, min_t(unsigned int, len, sizeof(buf)),
			       buf);
	if (!b)
		return -EINVAL;
	doff = mpip_ftcp_hdr_get(b, min_t(unsigned int, len, sizeof(buf)),
				 &rx->fseg);
	/* checked by the device, left to it by a local sender, or here */
	if (!doff || nf_ip_checksum(skb, NF_INET_PRE_ROUTING, ihl, IPPROTO_TCP))
		return -EINVAL;
	memcpy(&sport, b, sizeof(sport));
	if (rx->fseg.flags & (MPIP_FTCP_SYN | MPIP_FTCP_RST)) {
		mpip_ftcp_rx_ctrl(mn, iph, sport, &rx->fseg);
		return 0;
	}
	if (len == doff) {
		mpip_ftcp_rx_bare(mn, iph, sport, &rx->fseg);
		return 0;
	}
	rx->ftcp = true;
	rx->esummed = true;
	rx->flen = len - doff;
	return mpip_encap_pull_at(skb, rx, doff, sport);
}

/*
 * The packet that came inside fake TCP (@rx) carried an authenticated CM
 * of node @n: the connection of our path back to where it came from
 * acknowledges it, or, on a path learned through the peer's NAT that has
 * none open yet, opens if the segment acknowledged our cookie.  Caller
 * holds RCU.
 */
void mpip_ftcp_learn(struct mpip_net *mn, struct mpip_node *n,
		     const struct mpip_rx *rx)
{
	struct mpip_path *p = mpip_path_find(n, rx->daddr, rx->saddr);
	enum mpip_ftcp_verdict v = MPIP_FTCP_DROP;
	struct mpip_ftcp_seg reply;
	bool opened;
	u32 cookie;

	if (!p || (!p->learned && READ_ONCE(p->encap) != MPIP_ENCAP_FTCP))
		return;
	cookie = mpip_ftcp_cookie(mn, rx->daddr, rx->saddr, rx->esport);
	spin_lock_bh(&p->lock);
	opened = mpip_ftcp_try_accept(p, &rx->fseg, rx->flen, cookie,
				      rx->esport, &reply);
	if (!opened && p->ftcp.state == MPIP_FTCP_OPEN &&
	    p->ftcp_dport == rx->esport) {
		v = mpip_ftcp_rx(&p->ftcp, &rx->fseg, rx->flen, &reply);
		/* no ACK on the old connection while the new one opens */
		if (mpip_ftcp_quiet(p))
			v = MPIP_FTCP_TAKE;
	}
	spin_unlock_bh(&p->lock);
	if (opened)
		mpip_inc(mn, MPIP_STAT_FTCP_OPEN);
	/* the window the NAT takes from the SYN-ACK is not scaled yet */
	if (opened || v == MPIP_FTCP_TAKE_REPLY)
		mpip_ftcp_xmit(mn, rx->daddr, rx->saddr, rx->esport, &reply);
}
