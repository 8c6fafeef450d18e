// SPDX-License-Identifier: GPL-2.0
/*
 * mpip output: the POST_ROUTING hook for locally generated IPv4 packets.
 *
 * - TCP SYNs get their MSS option lowered so data segments leave room
 *   for a trailer.
 * - Packets to a destination whose MPIP availability is unknown trigger
 *   queries, up to the query threshold.
 * - Packets to MPIP peers carry a data trailer, belong to a session, and
 *   once the peer confirmed the session, each goes out on a path chosen by
 *   weight, with the path's addresses and route (paths.c, rewrite.c).
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/tcp.h>
#include <net/dst.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_extend.h>

#include "mpip.h"

struct mpip_pkt {
	struct iphdr *iph;
	unsigned int ihl;
	__be16 sport;
	__be16 dport;
	u8 tcp_flags;		/* TCP only */
	u32 seq;		/* TCP only: its sequence number */
	u32 seq_end;		/* TCP only: sequence number after it */
	unsigned int thl;	/* transport header length */
	struct mpip_node *node;	/* the peer, if known */
	struct mpip_session *sess;	/* the flow's session, if any */
	struct mpip_path *orig;	/* the path of its own addresses, if any */
	const struct mpip_rule *rule;	/* the routing rule it matches */
	bool sole;		/* on the peer's only path, bare_cm_ms on */
	bool translated;	/* TCP, own addresses cross a NAT */
};

/* Parse the transport header; false if mpip leaves the packet alone. */
static bool mpip_out_parse(struct sk_buff *skb, struct mpip_pkt *p)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct tcphdr _th, *th;
	struct udphdr _uh, *uh;

	if (ip_is_fragment(iph))
		return false;
	p->ihl = iph->ihl * 4;

	switch (iph->protocol) {
	case IPPROTO_TCP:
		th = skb_header_pointer(skb, p->ihl, sizeof(_th), &_th);
		if (!th || th->doff < 5)
			return false;
		p->sport = th->source;
		p->dport = th->dest;
		p->tcp_flags = ((u8 *)th)[13];
		p->thl = th->doff * 4;
		p->seq = ntohl(th->seq);
		p->seq_end = p->seq + !!th->syn + !!th->fin;
		if (skb->len > p->ihl + p->thl)
			p->seq_end += skb->len - p->ihl - p->thl;
		return true;
	case IPPROTO_UDP:
		uh = skb_header_pointer(skb, p->ihl, sizeof(_uh), &_uh);
		if (!uh)
			return false;
		/* A datagram with surplus data is not ours to touch. */
		if (ntohs(uh->len) != skb->len - p->ihl)
			return false;
		p->sport = uh->source;
		p->dport = uh->dest;
		p->tcp_flags = 0;
		p->thl = sizeof(*uh);
		return true;
	}
	return false;
}

/*
 * Is the SYN's destination known to run without MPIP (probing gave up)?
 * Its segments to us never carry trailers: they need no room for one.
 */
static bool mpip_out_syn_legacy(struct mpip_net *mn,
				const struct mpip_pkt *p)
{
	const struct mpip_avail *e;
	bool legacy;

	rcu_read_lock();
	e = mpip_avail_lookup(mn, p->iph->daddr, p->dport);
	legacy = e && READ_ONCE(e->state) == MPIP_AVAIL_NO;
	rcu_read_unlock();
	return legacy;
}

/*
 * Lower the MSS option of an outgoing SYN by the data trailer length, and
 * the encapsulation of paths through NATs (mpip_links_encap_room()),
 * unless its destination is known to run without MPIP.  The option comes
 * from the route's MTU, with its PMTU exception, which mpip may have
 * lowered by that room already (icmp.c): the MSS goes no higher than
 * the room leaves of the route's MTU without the exception
 * (mpip_route_mtu()), rather than lower by the room, where IP output
 * sizes mpip's packets by that MTU.
 */
static void mpip_clamp_mss(struct mpip_net *mn, struct sk_buff *skb,
			   const struct mpip_pkt *p)
{
	unsigned int room = MPIP_DATA_CM_LEN, mtu, limit = 0;

	if (mpip_out_syn_legacy(mn, p))
		return;
	room += mpip_links_encap_room(mn);
	mtu = mpip_route_mtu(skb_dst(skb));
	if (mtu > sizeof(struct iphdr) + sizeof(struct tcphdr) + room)
		limit = mtu - sizeof(struct iphdr) - sizeof(struct tcphdr) -
			room;
	if (mpip_rewrite_mss(skb, p->ihl + p->thl, room, limit))
		mpip_inc(mn, MPIP_STAT_MSS_CLAMPED);
}

/*
 * Resolve a pending partial checksum, then append @cm with extension
 * @ext (or none) and counter @ctr (0: the node's next).  (A GSO packet
 * kept whole keeps its partial checksum: its CM goes in front, gso.c.)
 */
static int mpip_out_add_cm(struct sk_buff *skb, struct mpip_node *n,
			   const struct mpip_cm *cm,
			   const struct mpip_cm_ext *ext, u64 ctr)
{
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb))
		return -EINVAL;
	return mpip_skb_add_cm(skb, n, cm, ext, ctr);
}

/*
 * An availability entry of node @n (if known) was downgraded here.  The
 * node's counter tells the input hook that the sessions from @n must
 * refresh their entries at their next packet (mpip_in_learn_due()).
 */
static void mpip_avail_lost(struct mpip_node *n)
{
	if (n)
		WRITE_ONCE(n->avail_lost, READ_ONCE(n->avail_lost) + 1);
}

/*
 * Destination @e did not answer its queries: ask again after
 * MPIP_AVAIL_RETRY, twice as long after each failure more.  Only the
 * caller that moved @e to NO gets here.
 */
static void mpip_avail_give_up(struct mpip_avail *e)
{
	u8 shift = READ_ONCE(e->retry_shift);

	WRITE_ONCE(e->retry_at, jiffies + (MPIP_AVAIL_RETRY << shift));
	if (shift < MPIP_AVAIL_RETRY_SHIFT)
		WRITE_ONCE(e->retry_shift, shift + 1);
}

/*
 * Is it time to ask given-up destination @e again?  Then @e is probing
 * anew, with no query sent yet.  One caller of those that race wins; the
 * others send their packet plain.
 */
static bool mpip_avail_retry(struct mpip_avail *e)
{
	unsigned long at = READ_ONCE(e->retry_at);

	if (time_before(jiffies, at) ||
	    cmpxchg(&e->retry_at, at, jiffies + MPIP_AVAIL_RETRY) != at)
		return false;
	atomic_set(&e->queries, 0);
	return cmpxchg(&e->state, MPIP_AVAIL_NO, MPIP_AVAIL_PROBING) ==
	       MPIP_AVAIL_NO;
}

/*
 * Entry @e, in @state, went from "yes" to probing when its node fell
 * silent (mpip_peer_lost()), and maybe on to "no": was that node heard
 * since?  Its CMs open with the pair's keys, so it kept them, and the
 * sessions of @e's flows: @e is "yes" again, without a query.  A query
 * goes under the flow's own addresses, and those may be what broke (a
 * link that stopped carrying packets): the flow stayed plain on the
 * broken link, with another path up, until the link came back.  Until
 * the node is heard, the flow's packets keep all its paths probed
 * (heartbeat.c), those up included: nothing else goes there.
 */
static bool mpip_avail_revive(struct mpip_net *mn, struct mpip_avail *e,
			      int state)
{
	struct mpip_node *n;

	if (!test_bit(MPIP_AVF_LOST, &e->flags))
		return false;
	smp_rmb();	/* lost_at is that of the loss the flag says */
	n = mpip_node_lookup(mn, READ_ONCE(e->node_id));
	if (!n || !READ_ONCE(n->verified) || !mpip_node_keyed(n))
		return false;
	if (!time_after(READ_ONCE(n->tn.stamp), READ_ONCE(e->lost_at))) {
		mpip_touch(&n->waited);
		return false;
	}
	if (cmpxchg(&e->state, state, MPIP_AVAIL_YES) != state)
		return false;
	mpip_avail_yes_again(e);
	return true;
}

/*
 * Query a destination of unknown availability.  TCP: a separate control
 * packet.  UDP: a trailer on the datagram itself, which a host without
 * MPIP ignores since it lies beyond the UDP length.
 */
static void mpip_out_probe(struct mpip_net *mn, struct mpip_avail *e,
			   struct sk_buff *skb)
{
	u32 limit = READ_ONCE(mn->cfg.query_threshold);
	const struct mpip_cm_ext *ext;
	struct mpip_node *n;
	struct mpip_cm cm;

	if (atomic_read(&e->queries) >= limit) {
		if (cmpxchg(&e->state, MPIP_AVAIL_PROBING, MPIP_AVAIL_NO) ==
		    MPIP_AVAIL_PROBING) {
			mpip_avail_give_up(e);
			mpip_avail_lost(mpip_node_lookup(mn,
							 READ_ONCE(e->node_id)));
			mpip_inc(mn, MPIP_STAT_PROBE_GIVEUP);
		}
		return;
	}

	n = mpip_node_for_query(mn, e);
	if (!n)
		return;
	if (ip_hdr(skb)->protocol == IPPROTO_TCP) {
		if (atomic_inc_return(&e->queries) > limit)
			return;
		mpip_tcp_ctrl_send(mn, skb, n, MPIP_CM_F_ENABLE, NULL);
		mpip_inc(mn, MPIP_STAT_TX_QUERY);
		return;
	}

	if (skb_is_gso(skb))
		return;
	mpip_cm_fill(mn, &cm, MPIP_CM_F_ENABLE, READ_ONCE(n->verified));
	ext = mpip_cm_hs_ext(mn, n, &cm, NULL);
	if (mpip_skb_room(skb) < mpip_cm_wire_len(&cm, ext))
		return;
	if (atomic_inc_return(&e->queries) > limit)
		return;
	if (mpip_out_add_cm(skb, n, &cm, ext, 0))
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
	else
		mpip_inc(mn, MPIP_STAT_TX_QUERY);
}

/*
 * Does @skb, with a data trailer, fit path @p (NULL: an unknown one) by
 * route @dst (mpip_path_mtu())?  A GSO packet's segments must, each with
 * its own trailer, should it be split.
 */
static bool mpip_out_fits(const struct sk_buff *skb, const struct mpip_path *p,
			  const struct dst_entry *dst, unsigned int extra)
{
	unsigned int mtu = mpip_path_mtu(p, dst);
	unsigned int add = MPIP_DATA_CM_LEN + extra;

	if (mtu <= add)
		return false;
	if (skb_is_gso(skb))
		return skb_gso_validate_network_len(skb, mtu - add);
	return skb->len + add <= mtu;
}

/*
 * Does a packet sent on @p go inside UDP?  On a path through a NAT, once
 * the flow's session is confirmed: also on the flow's own addresses, so
 * that the NAT sees none of its segments but the first (a TCP one past
 * them would fall outside the window the NAT tracks).
 */
static bool mpip_out_encap(const struct mpip_path *p)
{
	return p && READ_ONCE(p->encap);
}

/*
 * Is @pk a segment of a TCP session whose own addresses cross a NAT, and
 * that goes inside UDP (mpip_out_nat_tcp() let it on)?  Such a segment
 * never goes bare for want of room: the NAT saw none of the session's
 * segments since its first, and drops one past the window it tracks.  It
 * goes inside UDP anyway, to be fragmented (mpip_out_frag()).
 */
static bool mpip_out_wrapped(const struct mpip_pkt *pk)
{
	return pk->translated;
}

/*
 * Move @skb to path @p: its addresses and its route.  The new route must
 * leave room for the trailer, unless the packet is wrapped anyway.
 * Returns false if the packet stays as it is.
 */
static bool mpip_out_reroute(struct mpip_net *mn, struct sk_buff *skb,
			     const struct mpip_pkt *pk, struct mpip_path *p)
{
	struct dst_entry *dst = mpip_path_dst(mn, p);

	if (!dst) {
		mpip_inc(mn, MPIP_STAT_DROP_NOROUTE);
		return false;
	}
	if (!mpip_policy_path_ok(mn->net, skb, pk->sport, pk->dport, p, dst)) {
		dst_release(dst);
		mpip_inc(mn, MPIP_STAT_TX_POLICY_KEPT);
		return false;
	}
	if ((!mpip_out_fits(skb, p, dst, mpip_encap_len(p)) &&
	     !mpip_out_wrapped(pk)) ||
	    mpip_rewrite_addrs(skb, p->saddr, p->daddr)) {
		dst_release(dst);
		return false;
	}
	skb_dst_drop(skb);
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	mpip_inc(mn, MPIP_STAT_TX_REWRITE);
	return true;
}

/*
 * A TCP session that just left its sole path stays on its own addresses
 * for reorder_max_hold_ms more.  Its last bare segments are still on the
 * way there, and the peer's reorder buffer, which never saw them, can
 * only pick up the sequence again from a segment behind them on the same
 * path; once it has, segments that overtake on other paths wait in it.
 */
static bool mpip_out_draining(const struct mpip_net *mn,
			      const struct mpip_pkt *pk)
{
	unsigned long t = READ_ONCE(pk->sess->sole_stamp);
	u32 ms = READ_ONCE(mn->cfg.reorder_max_hold_ms);

	return t && pk->iph->protocol == IPPROTO_TCP &&
	       time_before(jiffies, t + msecs_to_jiffies(ms));
}

/*
 * The first data segments of a TCP session keep to its own path until
 * the peer acknowledges the first one sent with a CM (input.c:
 * mpip_in_acked()), for at most reorder_max_hold_ms.  The peer's reorder
 * buffer starts from the first segment it sees: one sent second that
 * overtook the first on a faster path would pass, and the first reach
 * TCP behind it (three such, and TCP sends the first again).  On one
 * path they arrive in order, behind any the session sent bare before
 * (through a NAT, until the peer confirmed it).  A rule that keeps the
 * flow off its own path, or picks one path itself, is followed instead;
 * so are the links' tiers and the loss oracle when the path is down, on
 * a backup link or lossy: then the session starts as it goes on.
 */
static bool mpip_out_starting(struct mpip_net *mn, const struct mpip_pkt *pk)
{
	struct mpip_session *s = pk->sess;
	const struct mpip_rule *r = pk->rule;
	unsigned long t;
	u32 ms;

	if (READ_ONCE(s->started) || pk->iph->protocol != IPPROTO_TCP ||
	    pk->seq_end == pk->seq)
		return false;
	if (!pk->orig || !mpip_path_first_rank(mn, pk->orig) ||
	    (r && ((r->mode != MPIP_MODE_ALL && r->mode != MPIP_MODE_SELECTED) ||
		   !mpip_rule_allows(mn, r, pk->orig)))) {
		WRITE_ONCE(s->started, true);
		return false;
	}
	/* a sender of the session on another CPU set it: see its start_end */
	t = smp_load_acquire(&s->start_stamp);
	if (!t) {
		WRITE_ONCE(s->start_end, pk->seq_end);
		/* pairs with the acquire in mpip_in_acked(): start_end first */
		smp_store_release(&s->start_stamp, jiffies | 1);
		return true;
	}
	ms = READ_ONCE(mn->cfg.reorder_max_hold_ms);
	if (time_before(jiffies, t + msecs_to_jiffies(ms)))
		return true;
	WRITE_ONCE(s->started, true);
	return false;
}

/*
 * Is @pk a TCP segment of its session sent again, with data that lies
 * before the highest the session sent?  Notes what it sent otherwise.
 * TCP takes a segment for lost once one sent after it is acknowledged
 * and it is not, by more than its reordering window (RACK: none in loss
 * recovery while it has seen no reordering, which mpip's reorder buffer
 * hides).  A segment sent again on a fast path is acknowledged before
 * the ones sent before it on slower paths, and TCP then takes all of
 * those for lost at once; so it goes on the path of highest delay
 * (Documentation/design.rst, "Segments sent again").  One CPU at a time
 * sends a socket's segments in order; a race of two only takes one
 * segment for new.
 */
static bool mpip_out_resend(const struct mpip_pkt *pk)
{
	struct mpip_session *s = pk->sess;
	u32 len = pk->seq_end - pk->seq;

	if (pk->iph->protocol != IPPROTO_TCP ||
	    len <= !!(pk->tcp_flags & TCPHDR_SYN) + !!(pk->tcp_flags & TCPHDR_FIN))
		return false;
	if (READ_ONCE(s->snd_valid) && before(pk->seq, READ_ONCE(s->snd_end)))
		return true;
	WRITE_ONCE(s->snd_end, pk->seq_end);
	if (!READ_ONCE(s->snd_valid))
		WRITE_ONCE(s->snd_valid, true);
	return false;
}

/*
 * A path by weight among those up that @pk's rule allows, or the one of
 * highest delay for a TCP segment sent again (@resend); NULL if none is
 * up.
 */
static struct mpip_path *mpip_out_weighted(struct mpip_net *mn,
					   const struct mpip_pkt *pk,
					   bool resend)
{
	struct mpip_path *p;

	if (resend) {
		p = mpip_path_slowest(mn, pk->node, pk->rule);
		if (p) {
			mpip_inc(mn, MPIP_STAT_TX_RESEND);
			return p;
		}
	}
	return mpip_path_pick(mn, pk->node, pk->rule, true);
}

/*
 * The path for a packet of a confirmed session, as its rule says: its own
 * (mode original), else among the paths up that the rule allows (its dev
 * or nodev list, nometered: mpip_rule_allows(); all of them without a
 * rule), the one of lowest delay (mode single), of highest delay (a TCP
 * segment sent again: mpip_out_resend()) or one by weight.  When a
 * rule that restricts the links allows none that is up, its fallback:
 * any path, its own, or ERR_PTR(-ENETUNREACH) to drop the packet
 * (counted here).  With no
 * path up, the one the peer was heard over last
 * (mpip_fb_heard_over()); NULL if there is none either.
 */
static struct mpip_path *mpip_out_rule_pick(struct mpip_net *mn,
					    const struct mpip_pkt *pk,
					    bool resend)
{
	const struct mpip_rule *r = pk->rule;
	struct mpip_path *p;

	if (r && r->mode == MPIP_MODE_ORIGINAL)
		return pk->orig;
	if (r && r->mode == MPIP_MODE_SINGLE)
		p = mpip_path_single(mn, pk->node, r, pk->sess);
	else
		p = mpip_out_weighted(mn, pk, resend);
	if (!p && r && mpip_rule_restricts(r)) {
		switch (r->fallback) {
		case MPIP_FALLBACK_ORIGINAL:
			return pk->orig;
		case MPIP_FALLBACK_DROP:
			mpip_inc(mn, MPIP_STAT_RULE_DROPPED);
			return ERR_PTR(-ENETUNREACH);
		default:
			p = mpip_path_pick(mn, pk->node, NULL, true);
		}
	}
	return p ? p : mpip_fb_heard_over(mn, pk->node);
}

/*
 * Move @skb to path @p, unless that is the flow's own or the packet
 * cannot go there, and clear @cm's ORIG flag if it moved.  Returns the
 * path the packet takes (pk->orig if it stays).
 */
static struct mpip_path *mpip_out_move(struct mpip_net *mn,
				       struct sk_buff *skb,
				       const struct mpip_pkt *pk,
				       struct mpip_path *p, struct mpip_cm *cm)
{
	if ((p == pk->orig && !mpip_out_encap(p)) ||
	    !mpip_out_reroute(mn, skb, pk, p))
		return pk->orig;
	cm->flags &= ~MPIP_CM_F_ORIG;
	return p;
}

/*
 * May @pk's session move to other paths of its node?  Only once the node
 * proved that it receives at the flow's remote address (mpip_node_proved();
 * its own path answered, as a rule): a host that shook hands with us and
 * sent CMs from another host's address must not get our flows to that
 * address over its own paths.  Once proved, it stays so for the node, also
 * when that address is gone, which is when its flows need other paths.
 */
static bool mpip_out_proved(const struct mpip_pkt *pk)
{
	struct mpip_session *s = pk->sess;
	struct mpip_node *n = pk->node;

	if (READ_ONCE(s->proved) == n->id)
		return true;
	if (!(pk->orig && READ_ONCE(pk->orig->rr_ok)) &&
	    !mpip_node_proved(n, s->t.raddr))
		return false;
	WRITE_ONCE(s->proved, n->id);
	return true;
}

/*
 * Choose the path of one packet (a GSO packet goes whole) and set the
 * CM fields that depend on it.  A session the peer has not confirmed, or
 * whose remote address its node has not proved, keeps its original
 * addresses.  Returns the path the packet takes, if
 * it is a known one, or ERR_PTR(-ENETUNREACH) if its rule drops it.
 */
static struct mpip_path *mpip_out_route(struct mpip_net *mn,
					struct sk_buff *skb,
					const struct mpip_pkt *pk,
					struct mpip_cm *cm)
{
	struct mpip_path *orig = pk->orig, *p;
	bool resend;

	cm->flags |= MPIP_CM_F_ORIG;
	if (!pk->sess)
		return orig;
	if (!READ_ONCE(pk->sess->confirmed)) {
		cm->flags |= MPIP_CM_F_NEW;
		return orig;
	}
	if (!mpip_out_proved(pk) ||
	    (mpip_out_draining(mn, pk) && !mpip_out_encap(orig)))
		return orig;
	resend = mpip_out_resend(pk);
	if (mpip_out_starting(mn, pk)) {
		p = orig;
	} else {
		p = mpip_out_rule_pick(mn, pk, resend);
		if (IS_ERR(p))
			return p;
	}
	if (!p || (p == orig && !mpip_out_encap(p)))
		return p ? p : orig;
	if (!mpip_policy_flow_plain(mn->net, skb)) {
		mpip_inc(mn, MPIP_STAT_TX_POLICY_KEPT);
		return orig;
	}
	return mpip_out_move(mn, skb, pk, p, cm);
}

/*
 * The CM of a data packet, and its route: filled in and chosen once per
 * packet, or once per GSO packet whose segments then share them.
 */
static struct mpip_path *mpip_out_prepare(struct mpip_net *mn,
					  struct sk_buff *skb,
					  const struct mpip_pkt *pk,
					  struct mpip_cm *cm)
{
	struct mpip_path *path = NULL;

	mpip_cm_fill(mn, cm, 0, false);
	if (pk->sole)
		cm->xflags = MPIP_CM_X_SOLE;
	if (pk->sess) {
		cm->session_id = READ_ONCE(pk->sess->id.sid);
		mpip_touch(&pk->sess->stamp);
	}
	if (pk->node) {
		path = mpip_out_route(mn, skb, pk, cm);
		if (IS_ERR(path))
			return path;
		if (path)
			cm->path_id = path->id;
		mpip_touch(&pk->node->last_tx);
		mpip_touch(&pk->node->last_data_tx);
	}
	return path;
}

/*
 * Does @skb, on path @p by route @dst, go whole, with the don't-fragment
 * bit?  If it fits the path's MTU (mpip_path_mtu()); and if a router on
 * the path said it does not, but it fits the route's MTU without the
 * exception: that router answered its like before and will again, so
 * that its flow's segments leave mpip's room (icmp.c) and stop being too
 * big.
 */
static bool mpip_out_whole(const struct sk_buff *skb,
			   const struct mpip_path *p,
			   const struct dst_entry *dst)
{
	if (skb->len <= mpip_path_mtu(p, dst))
		return true;
	return p && mpip_path_err_mtu(p) && skb->len <= mpip_route_mtu(dst);
}

/*
 * Size @skb, with its trailer (inside UDP if @encap), for path @p.  One
 * that goes whole (mpip_out_whole()) past its route's MTU, which may
 * hold an exception that mpip lowered for its flow, is marked forwarded,
 * so that IP output sizes it by the route's MTU without the exception
 * and sends it whole (tx_path_mtu).  One inside UDP that does not go
 * whole goes without the don't-fragment bit: IP output or a router on
 * the way fragments it (and a NAT reassembles it), where the bit would
 * have it dropped.
 */
static void mpip_out_size(struct mpip_net *mn, struct sk_buff *skb,
			  const struct mpip_path *p, bool encap)
{
	const struct dst_entry *dst = skb_dst(skb);
	struct iphdr *iph = ip_hdr(skb);

	/* it fits its route, exception and all: whole, and unmarked */
	if (skb->len <= dst_mtu(dst))
		return;
	if (mpip_out_whole(skb, p, dst)) {
		IPCB(skb)->flags |= IPSKB_FORWARDED;
		mpip_inc(mn, MPIP_STAT_TX_PATH_MTU);
		return;
	}
	if (!encap || !(iph->frag_off & htons(IP_DF)))
		return;
	iph->frag_off &= ~htons(IP_DF);
	ip_send_check(iph);
	mpip_inc(mn, MPIP_STAT_TX_ENCAP_FRAG);
}

/*
 * Add the CM @cm to one packet, as its trailer or, for a GSO packet kept
 * whole (@kept), behind its IP header, and count it on @path.  Its
 * counter is @ctr, if not 0, else the node's next.
 */
static int mpip_out_finish(struct mpip_net *mn, struct sk_buff *skb,
			   const struct mpip_pkt *pk, struct mpip_path *path,
			   struct mpip_cm *cm, bool kept, u64 ctr)
{
	bool encap = !kept && !(cm->flags & MPIP_CM_F_ORIG) &&
		     mpip_out_encap(path);
	int err;

	cm->fb_path_id = 0;
	cm->path_delay_us = 0;
	if (pk->node)
		mpip_fb_pick(mn, pk->node, path, cm);
	err = kept ? mpip_gso_encap(skb, pk->node, cm) :
		     mpip_out_add_cm(skb, pk->node, cm, NULL, ctr);
	if (!err && encap) {
		err = mpip_encap_push(skb, path);
		if (!err)
			mpip_inc(mn, MPIP_STAT_TX_ENCAP);
	}
	if (!err && !kept)
		mpip_out_size(mn, skb, path, encap);
	if (err) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return -ENOMEM;
	}
	if (pk->sess) {
		atomic64_inc(&pk->sess->tx_pkts);
		mpip_touch(&pk->sess->cm_stamp);
	}
	mpip_inc(mn, MPIP_STAT_TX_CM);
	if (path)
		mpip_path_tx(path, skb->len, false);
	return 0;
}

/*
 * A TCP packet of a flow whose own addresses cross a NAT, that stays on
 * them (no path was up to move it to): without a trailer, which the NAT
 * would take for INVALID.
 */
static bool mpip_out_bare_there(struct mpip_net *mn, const struct mpip_pkt *pk,
				const struct mpip_cm *cm)
{
	if (!pk->translated || !(cm->flags & MPIP_CM_F_ORIG))
		return false;
	mpip_inc(mn, MPIP_STAT_TX_BARE);
	return true;
}

/*
 * Add a data trailer to one non-GSO packet, if it fits.  A packet that
 * cannot get one after all is dropped: its addresses may be rewritten.
 */
static unsigned int mpip_out_data_one(struct mpip_net *mn,
				      struct sk_buff *skb,
				      const struct mpip_pkt *pk)
{
	struct mpip_path *path;
	struct mpip_cm cm;

	if (mpip_skb_room(skb) < MPIP_DATA_CM_LEN && !mpip_out_wrapped(pk)) {
		mpip_inc(mn, MPIP_STAT_TX_NO_ROOM);
		return NF_ACCEPT;
	}
	path = mpip_out_prepare(mn, skb, pk, &cm);
	if (IS_ERR(path))
		return NF_DROP;
	if (mpip_out_bare_there(mn, pk, &cm))
		return NF_ACCEPT;
	if (mpip_out_finish(mn, skb, pk, path, &cm, false, 0))
		return NF_DROP;
	return NF_ACCEPT;
}

/*
 * Split GSO packet @skb here, in software, keeping the data in place and
 * the checksums partial (cheaper), and free it.  Its segments, or NULL
 * (then @skb is still the caller's).
 */
static struct sk_buff *mpip_out_split(struct mpip_net *mn,
				      struct sk_buff *skb)
{
	struct sk_buff *segs = skb_gso_segment(skb, NETIF_F_SG |
						    NETIF_F_HW_CSUM);

	if (IS_ERR_OR_NULL(segs))
		return NULL;
	mpip_inc(mn, MPIP_STAT_TX_GSO_SPLIT);
	consume_skb(skb);
	return segs;
}

/*
 * One copy of a packet of mode protected: on path @p (or, if it cannot
 * be moved there, on its own), with counter @ctr and MPIP_CM_X_DUP.
 * False if it must be dropped.
 */
static bool mpip_out_copy(struct mpip_net *mn, struct sk_buff *skb,
			  const struct mpip_pkt *pk, struct mpip_path *p,
			  u64 ctr)
{
	struct mpip_cm cm;

	mpip_cm_fill(mn, &cm, MPIP_CM_F_ORIG, false);
	cm.xflags = MPIP_CM_X_DUP;
	cm.session_id = READ_ONCE(pk->sess->id.sid);
	p = mpip_out_move(mn, skb, pk, p, &cm);
	if (p)
		cm.path_id = p->id;
	return !mpip_out_finish(mn, skb, pk, p, &cm, false, ctr);
}

/*
 * Send @skb, a packet the output hook made (a segment of a packet it split,
 * a copy), on through the POST_ROUTING hooks after mpip's, as the packet
 * it came from would have gone, then to the rest of the output path.
 * The hook after mpip's is conntrack's confirmation: a flow whose first
 * packet was split must have its entry confirmed by a segment, or replies
 * look new to a stateful firewall and miss its NAT.  RCU held.
 */
static void mpip_out_next(const struct mpip_net *mn, struct sk_buff *skb,
			  const struct nf_hook_state *st)
{
	const struct nf_hook_entries *e;
	struct nf_hook_state state = *st;

	e = rcu_dereference(st->net->nf.hooks_ipv4[NF_INET_POST_ROUTING]);
	if (e && nf_hook_slow(skb, &state, e,
			      mpip_hook_next(mn, MPIP_NF_OUT, e)) != 1)
		return;
	st->okfn(st->net, st->sk, skb);
}

/*
 * Mode protected: @skb (not GSO) goes on as many paths as its rule has
 * copies, if that many are up (mpip_path_copies()), as copies with one
 * CM counter, of which the peer delivers the first to arrive.  The
 * extra copies go on at once (mpip_out_next(), as the segments of a GSO
 * packet split here do); @skb goes on if the return is NF_ACCEPT.
 * With one path up, or a flow the host's policy keeps on its route, one
 * packet as in the other modes.
 */
static unsigned int mpip_out_copies(struct mpip_net *mn, struct sk_buff *skb,
				    const struct nf_hook_state *st,
				    const struct mpip_pkt *pk)
{
	struct mpip_path *paths[MPIP_RULE_MAX_COPIES];
	unsigned int i, got;
	struct sk_buff *copy;
	u64 ctr;

	if (mpip_skb_room(skb) < MPIP_DATA_CM_LEN) {
		mpip_inc(mn, MPIP_STAT_TX_NO_ROOM);
		return NF_ACCEPT;
	}
	got = mpip_path_copies(mn, pk->node, pk->rule, paths);
	if (got < 2 || !mpip_policy_flow_plain(mn->net, skb))
		return mpip_out_data_one(mn, skb, pk);
	mpip_touch(&pk->sess->stamp);
	mpip_touch(&pk->node->last_tx);
	mpip_touch(&pk->node->last_data_tx);
	ctr = mpip_cm_next_ctr(pk->node);
	for (i = 1; i < got; i++) {
		copy = skb_copy(skb, GFP_ATOMIC);
		if (!copy) {
			mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
			break;
		}
		if (mpip_out_copy(mn, copy, pk, paths[i], ctr))
			mpip_out_next(mn, copy, st);
		else
			kfree_skb(copy);
	}
	return mpip_out_copy(mn, skb, pk, paths[0], ctr) ? NF_ACCEPT : NF_DROP;
}

/*
 * Mode protected for a GSO packet: split here, in software, and each
 * segment's copies sent (mpip_out_copies()).  The segments go straight
 * on to the rest of the output path; each is a packet of its own (@pk's
 * header pointer would point into @skb, which is gone).
 */
static unsigned int mpip_out_protected(struct mpip_net *mn,
				       struct sk_buff *skb,
				       const struct nf_hook_state *st,
				       const struct mpip_pkt *pk)
{
	struct sk_buff *segs, *seg, *next;
	struct mpip_pkt sp = *pk;

	if (!skb_is_gso(skb))
		return mpip_out_copies(mn, skb, st, pk);
	segs = mpip_out_split(mn, skb);
	if (!segs)
		return NF_DROP;

	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		sp.iph = ip_hdr(seg);
		if (mpip_out_copies(mn, seg, st, &sp) == NF_ACCEPT)
			mpip_out_next(mn, seg, st);
		else
			kfree_skb(seg);
	}
	return NF_STOLEN;
}

/* Does mode protected send copies of this packet (mpip_out_protected())? */
static bool mpip_out_is_protected(const struct mpip_net *mn,
				  const struct mpip_pkt *pk)
{
	return pk->rule && pk->rule->mode == MPIP_MODE_PROTECTED &&
	       pk->sess && READ_ONCE(pk->sess->confirmed) &&
	       mpip_out_proved(pk) && !mpip_out_draining(mn, pk);
}

/*
 * May this packet go without a CM?  Only on its flow's own addresses
 * while they are the peer's only path that is up (then pk->sole is set):
 * there is no path to choose, no address to restore and nothing to put
 * back in order.  A session's first packets, one every bare_cm_ms, and
 * TCP segments with SYN, FIN, RST or URG still carry one; those CMs say
 * MPIP_CM_X_SOLE, so the peer's reorder buffer knows it missed segments.
 * The peer's input hook sees a plain packet and leaves it alone.
 */
static bool mpip_out_bare(struct mpip_net *mn, const struct sk_buff *skb,
			  struct mpip_pkt *pk)
{
	const u8 other = TCPHDR_SYN | TCPHDR_FIN | TCPHDR_RST | TCPHDR_URG;
	struct mpip_session *s = pk->sess;
	struct mpip_path *orig = pk->orig;
	unsigned long gap;

	if (!s || !pk->node)
		return false;
	gap = READ_ONCE(mn->bare_cm_gap_j);
	if (!gap)
		return false;
	/* inside UDP, a packet needs its CM */
	if (!orig || mpip_out_encap(orig) || !mpip_path_sole(pk->node, orig))
		return false;
	/* a rule that keeps the flow off this path decides where it goes */
	if (pk->rule && !mpip_rule_allows(mn, pk->rule, orig))
		return false;
	pk->sole = true;
	mpip_touch(&s->sole_stamp);
	if ((pk->tcp_flags & other) ||
	    atomic64_read(&s->tx_pkts) < MPIP_BARE_CM_FIRST ||
	    !time_before(jiffies, READ_ONCE(s->cm_stamp) + gap))
		return false;
	mpip_touch(&s->stamp);
	atomic64_inc(&s->tx_pkts);
	/* no sample for the peer to report: the CMs between arm the timeout */
	mpip_path_tx(orig, skb->len, true);
	mpip_inc(mn, MPIP_STAT_TX_BARE);
	return true;
}

/*
 * Does @pk's flow cross a NAT on its own addresses?  Ours, if the path of
 * those addresses was found translated; the peer's, if the path is one
 * learned from where its CMs came from, or, with no path there, if the
 * flow's remote address is none the node lists.  So does a path whose
 * probe has not been answered yet: only the answer tells whether a NAT,
 * which takes a TCP segment with a trailer for INVALID, is on it.  One
 * never answered (something there drops UDP: test_natedge's NAT that
 * forwards no UDP) keeps its flows bare for good.
 */
static bool mpip_out_translated(const struct mpip_pkt *pk)
{
	struct mpip_node *n = pk->node;
	bool listed;

	if (pk->orig)
		return READ_ONCE(pk->orig->nat) || pk->orig->learned ||
		       !READ_ONCE(pk->orig->rr_ok);
	spin_lock_bh(&n->lock);
	listed = mpip_addr_listed(pk->iph->daddr, n->addrs, n->naddrs);
	spin_unlock_bh(&n->lock);
	return !listed;
}

/*
 * A segment of a TCP session whose own addresses cross a NAT (a strict
 * one takes a segment with a trailer for INVALID) goes bare on them.
 * Until the peer confirms the session, if the path of those addresses
 * carries packets inside UDP, the session's CM goes in a carrier next to
 * the segment (no more often than every 10 ms): the peer takes the
 * session from it, under the addresses and ports the NAT gave the flow,
 * and confirms it with a heartbeat; from then on the session's segments
 * go inside UDP (mpip_out_route()).  Without UDP there (nat_mode none),
 * they go bare for good.  Returns whether @skb goes bare now; sets
 * pk->translated for the segments that go on.
 */
static bool mpip_out_nat_tcp(struct mpip_net *mn, const struct sk_buff *skb,
			     struct mpip_pkt *pk)
{
	struct mpip_session *s = pk->sess;
	struct mpip_path *orig = pk->orig;
	unsigned long last;
	struct mpip_cm cm;

	pk->translated = s && mpip_out_translated(pk);
	if (!pk->translated)
		return false;
	if (mpip_out_encap(orig) && READ_ONCE(s->confirmed))
		return false;
	last = READ_ONCE(s->cm_stamp);
	if (mpip_out_encap(orig) &&
	    (!last || !time_before(jiffies, last + MPIP_CARRIER_GAP))) {
		WRITE_ONCE(s->cm_stamp, jiffies | 1);
		mpip_cm_fill(mn, &cm, MPIP_CM_F_ORIG | MPIP_CM_F_NEW, false);
		cm.session_id = READ_ONCE(s->id.sid);
		cm.path_id = orig->id;
		mpip_tcp_carrier_send(mn, skb, pk->node, &cm, NULL);
		mpip_touch(&pk->node->last_tx);
	}
	mpip_inc(mn, MPIP_STAT_TX_BARE);
	return true;
}

/*
 * The flow's session and the path of its own addresses, for a packet to
 * MPIP peer p->node, if it is known.
 */
static void mpip_out_session(struct mpip_net *mn, struct sk_buff *skb,
			     struct mpip_pkt *p)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (!p->node)
		return;
	p->sess = mpip_session_tx(mn, p->node, iph->protocol, iph->saddr,
				  p->sport, iph->daddr, p->dport);
	p->orig = mpip_path_find(p->node, iph->saddr, iph->daddr);
}

/* Send @skb (if any), a datagram or a batch of them (encap_gso.c). */
static void mpip_out_batch_send(struct mpip_net *mn, struct sk_buff *skb,
				const struct nf_hook_state *st)
{
	if (!skb)
		return;
	if (skb_is_gso(skb))
		mpip_inc(mn, MPIP_STAT_TX_ENCAP_GSO);
	mpip_out_next(mn, skb, st);
}

/*
 * Segment @seg of a GSO packet, now a datagram inside UDP or fake TCP,
 * goes in batch @b, or sends the batch it does not fit and heads the
 * next, or goes on its own.
 */
static void mpip_out_batch(struct mpip_net *mn, struct mpip_ebatch *b,
			   struct sk_buff *seg, const struct nf_hook_state *st)
{
	if (mpip_ebatch_add(b, seg))
		return;
	mpip_out_batch_send(mn, mpip_ebatch_take(b), st);
	if (!mpip_ebatch_add(b, seg))
		mpip_out_next(mn, seg, st);
}

/*
 * A GSO packet takes one path.  It stays whole with one CM where no
 * wire follows (gso.c); otherwise it is split here, in software, so that
 * every segment on the wire carries its own trailer, and the segments go
 * straight on to the rest of the output path.
 */
static unsigned int mpip_out_data_gso(struct mpip_net *mn,
				      struct sk_buff *skb,
				      const struct nf_hook_state *st,
				      const struct mpip_pkt *pk)
{
	struct mpip_ebatch b = {};
	struct sk_buff *segs, *seg, *next;
	struct mpip_path *path;
	struct mpip_cm cm;
	bool batch;

	if (!mpip_out_fits(skb, pk->orig, skb_dst(skb), 0) &&
	    !mpip_out_wrapped(pk)) {
		mpip_inc(mn, MPIP_STAT_TX_NO_ROOM);
		return NF_ACCEPT;
	}
	path = mpip_out_prepare(mn, skb, pk, &cm);
	if (IS_ERR(path))
		return NF_DROP;
	if (mpip_out_bare_there(mn, pk, &cm))
		return NF_ACCEPT;
	/* one inside UDP is split: the UDP checksum covers each segment */
	if (((cm.flags & MPIP_CM_F_ORIG) || !mpip_out_encap(path)) &&
	    mpip_gso_keep(mn, skb, skb_dst(skb), mpip_cm_wire_len(&cm, NULL))) {
		if (mpip_out_finish(mn, skb, pk, path, &cm, true, 0))
			return NF_DROP;
		mpip_inc(mn, MPIP_STAT_TX_GSO_KEPT);
		return NF_ACCEPT;
	}

	segs = mpip_out_split(mn, skb);
	if (!segs)
		return NF_DROP;

	batch = READ_ONCE(mn->cfg.tx_gso) && mpip_out_encap(path) &&
		!(cm.flags & MPIP_CM_F_ORIG);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		cm.timestamp_us = mpip_now_us();
		if (mpip_out_finish(mn, seg, pk, path, &cm, false, 0))
			kfree_skb(seg);
		else if (batch)
			mpip_out_batch(mn, &b, seg, st);
		else
			mpip_out_next(mn, seg, st);
	}
	if (batch) {
		mpip_out_batch_send(mn, mpip_ebatch_take(&b), st);
		mpip_ebatch_release(&b);
	}
	return NF_STOLEN;
}

/*
 * Has peer @n (@e's node) gone silent?  Every authenticated CM from it
 * refreshes its stamp, so a peer that unloaded mpip, or went away, stops
 * doing so.  But so does a peer we had nothing to say to: an idle pair
 * sends nothing, and a flow that resumes after a pause (a TCP
 * retransmission after a long back-off) must not take that for a loss
 * and go plain on its own addresses, which may be what broke.  So a peer
 * is lost when it left a question unanswered for peer_timeout_ms, or
 * when it is silent and no path to it is up (those paths timed out
 * waiting for reports: paths.c).  A node no longer in the table is lost.
 */
static bool mpip_peer_lost(struct mpip_net *mn, struct mpip_avail *e,
			   struct mpip_node *n)
{
	if (n && !mpip_node_unanswered(mn, n) &&
	    (!mpip_node_silent(mn, n) || mpip_paths_up_but(n, NULL)))
		return false;
	if (n) {
		mpip_event_peer(mn, n, MPIP_EVENT_PEER_LOST);
		WRITE_ONCE(e->lost_at, jiffies);
		/* pairs with the smp_rmb() in mpip_avail_revive() */
		smp_mb__before_atomic();
		set_bit(MPIP_AVF_LOST, &e->flags);
	}
	atomic_set(&e->queries, 0);
	WRITE_ONCE(e->state, MPIP_AVAIL_PROBING);
	mpip_avail_lost(n);
	mpip_inc(mn, MPIP_STAT_PEER_LOST);
	return true;
}

/*
 * SYNs only get their MSS lowered; neither they nor RSTs carry trailers
 * or trigger queries.  Returns true when mpip is done with the segment.
 */
static bool mpip_out_tcp_done(struct mpip_net *mn, struct sk_buff *skb,
			      const struct mpip_pkt *p)
{
	if (p->tcp_flags & TCPHDR_SYN) {
		mpip_clamp_mss(mn, skb, p);
		return true;
	}
	return (p->tcp_flags & TCPHDR_RST) || !(p->tcp_flags & TCPHDR_ACK);
}

/*
 * Does a conntrack helper or sequence adjustment work on @skb's
 * connection?  Those run in conntrack's confirmation, after this hook: a
 * NAT helper that rewrites the payload (FTP, IRC, SIP over TCP) would
 * sum the trailer into the TCP checksum and make it data, and any helper
 * would parse it as payload.  Such connections carry no trailer.
 */
static bool mpip_out_ct_helped(const struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	enum ip_conntrack_info ctinfo;
	const struct nf_conn *ct = nf_ct_get(skb, &ctinfo);

	/*
	 * The helper extension exists once a helper may work on the
	 * connection; asking for it (nfct_help()) would tie mpip.ko to the
	 * nf_conntrack module.
	 */
	return ct && (test_bit(IPS_SEQ_ADJUST_BIT, &ct->status) ||
		      nf_ct_ext_exist(ct, NF_CT_EXT_HELPER));
#else
	return false;
#endif
}

/*
 * Is @skb a packet this host sends on its own behalf, over a plain route,
 * that mpip may change?  Not one it forwards, nor a frame its bridge
 * forwards (br_netfilter runs POST_ROUTING for those: their dst is the
 * bridge's fake route and their okfn is br_netfilter's), nor traffic to
 * its own addresses (a single path), nor a broadcast or multicast.  Nor a
 * packet whose route is an IPsec bundle (the next step encrypts it, on
 * this route only) or goes through a VRF, whose device runs these hooks
 * a second time, nor one of a connection a conntrack helper works on:
 * those keep their route and carry no trailer.
 */
static bool mpip_out_own(const struct sk_buff *skb,
			 const struct nf_hook_state *st)
{
	const struct dst_entry *dst = skb_dst(skb);

	if (IPCB(skb)->flags & IPSKB_FORWARDED)
		return false;
	if (mpip_skb_bridged(skb) || (dst->flags & DST_FAKE_RTABLE))
		return false;
	if (dst->dev->flags & IFF_LOOPBACK)
		return false;
	if (dst_xfrm(dst))
		return false;
	if (netif_is_l3_master(st->out) || netif_is_l3_slave(dst->dev))
		return false;
	if (mpip_out_ct_helped(skb))
		return false;
	return skb_rtable(skb)->rt_type == RTN_UNICAST;
}

/*
 * Netfilter runs hooks inside an RCU read-side critical section (nf_hook()),
 * which covers every table lookup below.
 */
unsigned int mpip_out_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *st)
{
	struct mpip_net *mn = priv;
	struct mpip_pkt p;
	struct mpip_avail *e;
	bool tcp, revived;
	int state;

	if (!READ_ONCE(mn->enabled) || !mpip_out_own(skb, st))
		return NF_ACCEPT;
	if (!mpip_out_parse(skb, &p))
		return NF_ACCEPT;
	p.node = NULL;
	p.sess = NULL;
	p.orig = NULL;
	p.sole = false;
	p.translated = false;
	p.rule = mpip_rule_for(mn, skb);
	if (p.rule && p.rule->mode == MPIP_MODE_OFF)
		return NF_ACCEPT;

	p.iph = ip_hdr(skb);
	tcp = p.iph->protocol == IPPROTO_TCP;
	if (tcp && mpip_out_tcp_done(mn, skb, &p))
		return NF_ACCEPT;

	e = mpip_avail_get(mn, p.iph->daddr, p.dport, p.iph->protocol, false);
	if (!e)
		return NF_ACCEPT;
	mpip_touch(&e->tn.stamp);

	state = READ_ONCE(e->state);
	revived = state != MPIP_AVAIL_YES && mpip_avail_revive(mn, e, state);
	switch (revived ? MPIP_AVAIL_YES : state) {
	case MPIP_AVAIL_PROBING:
		goto out_probe;
	case MPIP_AVAIL_YES:
		p.node = mpip_node_lookup(mn, READ_ONCE(e->node_id));
		/*
		 * A silent peer may have lost our keys (it restarted): its
		 * flows, UDP too, go plain and ask again.  A node without
		 * the pair's keys can be sent no CM at all.
		 */
		if (!revived && mpip_peer_lost(mn, e, p.node))
			goto out_probe;
		if (!mpip_node_keyed(p.node) && mpip_peer_lost(mn, e, NULL))
			goto out_probe;
		/* A plain read first: no locked operation per packet. */
		if (tcp && test_bit(MPIP_AVF_CONFIRM, &e->flags) &&
		    test_and_clear_bit(MPIP_AVF_CONFIRM, &e->flags)) {
			bool keyed = test_and_clear_bit(MPIP_AVF_CONFIRM_KEY,
							&e->flags);

			mpip_tcp_ctrl_send(mn, skb, p.node, MPIP_CM_F_ENABLED,
					   keyed ? &mpip_cm_key_ext : NULL);
			mpip_inc(mn, MPIP_STAT_TX_CONFIRM);
		}
		mpip_out_session(mn, skb, &p);
		if (tcp && mpip_out_nat_tcp(mn, skb, &p))
			return NF_ACCEPT;
		if (mpip_out_bare(mn, skb, &p))
			return NF_ACCEPT;
		if (mpip_out_is_protected(mn, &p))
			return mpip_out_protected(mn, skb, st, &p);
		if (skb_is_gso(skb))
			return mpip_out_data_gso(mn, skb, st, &p);
		return mpip_out_data_one(mn, skb, &p);
	case MPIP_AVAIL_NO:
		if (mpip_avail_retry(e))
			goto out_probe;
		return NF_ACCEPT;
	default:
		return NF_ACCEPT;
	}

out_probe:
	mpip_out_probe(mn, e, skb);
	return NF_ACCEPT;
}
