// SPDX-License-Identifier: GPL-2.0
/*
 * mpip input: the PRE_ROUTING hook.  Finds a CM trailer at the tail of
 * TCP and UDP packets addressed to this host, learns from it (node, delay
 * sample, delay report, session), and either consumes the packet
 * (control) or restores the session's original addresses and strips the
 * trailer (data).  This runs before conntrack and the filter table, so
 * they only see the original packet.
 */
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/netfilter.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/tcp.h>

#include "mpip.h"

/* Transport header length and, for UDP, the UDP length. */
static bool mpip_in_l4(const struct sk_buff *skb, unsigned int ihl, u8 proto,
		       struct mpip_rx *rx, unsigned int *l4hl,
		       unsigned int *ulen)
{
	struct tcphdr _th, *th;
	struct udphdr _uh, *uh;

	if (proto == IPPROTO_TCP) {
		th = skb_header_pointer(skb, ihl, sizeof(_th), &_th);
		if (!th || th->doff < 5)
			return false;
		rx->sport = th->source;
		rx->dport = th->dest;
		*l4hl = th->doff * 4;
		*ulen = 0;
		return true;
	}
	uh = skb_header_pointer(skb, ihl, sizeof(_uh), &_uh);
	if (!uh)
		return false;
	rx->sport = uh->source;
	rx->dport = uh->dest;
	*l4hl = sizeof(*uh);
	*ulen = ntohs(uh->len);
	return true;
}

/*
 * A genuine trailer leaves the TCP checksum valid for the segment without
 * it and invalid with it, and mpip senders resolve checksums before they
 * append one.  So a segment whose checksum is still to be filled in by a
 * local sender (CHECKSUM_PARTIAL, e.g. over veth) carries no trailer; for
 * the others the checksum without the trailer must verify.  This keeps a
 * segment from a host without MPIP whose data happens to end like a
 * trailer intact, and spares TCP a second checksum pass.  The first test
 * comes before the tail is read: over veth it ends the search for most
 * segments.
 *
 * CHECKSUM_UNNECESSARY does not prove that the wire checksum was checked:
 * a tunnel that authenticates what it carries (WireGuard) marks every
 * packet so.  Such a segment is searched as well; if it carried a
 * trailer and were let through, TCP would take the trailer for data.
 */
static bool mpip_in_tcp_csum_state_ok(const struct sk_buff *skb)
{
	return skb->ip_summed != CHECKSUM_PARTIAL;
}

/*
 * Is @skb several segments that GRO merged?  Its checksum field is its
 * first segment's, so no checksum can tell whether its tail is a
 * trailer.  A receiver that checks checksums never merges a segment
 * with a trailer (its checksum fails); one that does not (WireGuard)
 * merges it with the segment before it when their sequence numbers
 * meet, and the merged packet ends in the trailer.  Then only the CM's
 * MAC can tell (mpip_in_open()).  A GSO packet mpip kept whole is no
 * merge (rx->gso is tested first).
 */
static bool mpip_in_gro_merged(const struct sk_buff *skb)
{
	return skb_is_gso(skb) && skb->ip_summed == CHECKSUM_UNNECESSARY;
}

/* The checksum of the segment without its last @len bytes verifies. */
static bool mpip_in_tcp_csum_ok(const struct sk_buff *skb, unsigned int ihl,
				unsigned int len)
{
	const struct iphdr *iph = ip_hdr(skb);
	unsigned int tcplen = skb->len - ihl - len;
	__wsum csum;

	csum = skb_checksum(skb, ihl, tcplen, 0);
	return !csum_tcpudp_magic(iph->saddr, iph->daddr, tcplen, IPPROTO_TCP,
				  csum);
}

/*
 * Is the CM of @rx one in a TCP carrier (handshake.c), a segment whose
 * checksum holds over all of it?
 */
static bool mpip_in_carrier(const struct mpip_rx *rx)
{
	return (rx->c2.cm.flags & MPIP_CM_F_CTRL) &&
	       (rx->c2.cm.xflags & MPIP_CM_X_CARRIER);
}

/*
 * The data CM of a GSO packet kept whole sits between its IP and TCP
 * headers (gso.c); it has no address list.
 */
static bool mpip_in_find_gso_cm(const struct sk_buff *skb, unsigned int ihl,
				struct mpip_rx *rx)
{
	unsigned int len = MPIP_DATA_CM_LEN, l4hl, ulen;
	u8 cmbuf[MPIP_DATA_CM_LEN];
	const u8 *cmp;

	/* The decoder checks that the CM's own length is exactly @len. */
	cmp = skb_header_pointer(skb, ihl, len, cmbuf);
	if (!cmp || mpip_cm2_decode(cmp, len, 0, &rx->c2) != len)
		return false;
	rx->proto = IPPROTO_TCP;
	rx->cm_len = len;
	return mpip_in_l4(skb, ihl + len, IPPROTO_TCP, rx, &l4hl, &ulen);
}

/* Find and decode a trailer at the tail of @skb; false if there is none. */
static bool mpip_in_find_cm(const struct sk_buff *skb, struct mpip_rx *rx)
{
	const struct iphdr *iph = ip_hdr(skb);
	unsigned int ihl = iph->ihl * 4, l4hl, ulen, plen;
	u8 tailbuf[MPIP_CM_TAIL_LEN], cmbuf[MPIP_CM_ANY_MAX_LEN];
	const u8 *tail, *cmp;
	int len;

	/* Most TCP over veth: no trailer possible, no tail to read. */
	if (iph->protocol == IPPROTO_TCP && !mpip_in_tcp_csum_state_ok(skb))
		return false;
	if (ip_is_fragment(iph) || skb->len < ihl)
		return false;
	rx->saddr = iph->saddr;
	rx->daddr = iph->daddr;
	rx->unsummed = false;
	rx->gso = mpip_gso_is_kept(skb);
	if (rx->gso)
		return mpip_in_find_gso_cm(skb, ihl, rx);
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return false;
	rx->proto = iph->protocol;
	if (!mpip_in_l4(skb, ihl, rx->proto, rx, &l4hl, &ulen))
		return false;

	plen = skb->len - ihl;
	if (plen < l4hl + MPIP_CM_MIN_LEN)
		return false;
	/* A UDP trailer needs surplus bytes beyond the UDP length. */
	if (rx->proto == IPPROTO_UDP && ulen + MPIP_CM_MIN_LEN > plen)
		return false;
	tail = skb_header_pointer(skb, skb->len - MPIP_CM_TAIL_LEN,
				  MPIP_CM_TAIL_LEN, tailbuf);
	if (!tail)
		return false;
	len = mpip_cm_peek_any(tail, plen - l4hl);
	if (len < 0)
		return false;
	/* A UDP trailer lies exactly in the surplus area. */
	if (rx->proto == IPPROTO_UDP && ulen + len != plen)
		return false;

	cmp = skb_header_pointer(skb, skb->len - len, len, cmbuf);
	if (!cmp || mpip_cm_decode_any(cmp, len,
				       mpip_cm2_sum(rx->proto, plen - len, len),
				       &rx->c2) != len)
		return false;
	rx->unsummed = rx->proto == IPPROTO_TCP && mpip_in_gro_merged(skb);
	/* what came inside UDP or fake TCP: its outer checksum's, if any */
	if (rx->proto == IPPROTO_TCP && !rx->unsummed && !rx->esummed &&
	    !mpip_in_tcp_csum_ok(skb, ihl, mpip_in_carrier(rx) ? 0 : len))
		return false;
	rx->cm_len = len;
	return true;
}

/*
 * May an entry of @addr move from node @id to node @n on a CM from @addr?
 * Away from a node that never proved itself, or is gone, on any CM.  From
 * one that did, only once it went silent (a peer that restarted and
 * shakes hands anew): on a query, which anyone can send, and that node
 * gets nothing before it proves itself; on an authenticated CM, only if
 * @n also proved that it receives at @addr (mpip_node_proved()), as for a
 * flow's session (mpip_session_takes()).  Anyone who shook hands with us from an
 * address of its own seals CMs that authenticate, and may send them from
 * another peer's address: it must not become the node our flows to that
 * address go to, whose paths it chose (review C1).  Caller holds RCU.
 */
static bool mpip_in_avail_moves(struct mpip_net *mn, u32 id,
				struct mpip_node *n, __be32 addr, bool authed)
{
	struct mpip_node *cur = mpip_node_lookup(mn, id);

	if (!cur || !READ_ONCE(cur->verified))
		return true;
	if (!mpip_node_silent(mn, cur))
		return false;
	return !authed || mpip_node_proved(n, addr);
}

/*
 * Record node @n as the one flows from (@addr, @port) belong to, and as
 * the one our own queries to @addr go to (the entry of port 0,
 * mpip_node_for_query()), if the entry may move to it
 * (mpip_in_avail_moves()).  A packet of a known session counts for the
 * session's own remote address, the one our flows send to: one that
 * came over a path carries the path's address, which no flow uses.
 */
static struct mpip_avail *mpip_in_avail(struct mpip_net *mn,
					const struct mpip_rx *rx, __be16 port)
{
	__be32 addr = rx->sess ? rx->sess->t.raddr : rx->saddr;
	struct mpip_node *n = rx->node;
	struct mpip_avail *e;
	u32 id;

	e = mpip_avail_get(mn, addr, port, rx->proto, !rx->authed);
	if (!e)
		return NULL;
	if (rx->authed && test_bit(MPIP_AVF_STRANGER, &e->flags))
		clear_bit(MPIP_AVF_STRANGER, &e->flags);
	id = READ_ONCE(e->node_id);
	if (id != n->id) {
		if (!mpip_in_avail_moves(mn, id, n, addr, rx->authed))
			return NULL;
		WRITE_ONCE(e->node_id, n->id);
	}
	mpip_touch(&e->tn.stamp);
	return e;
}

/*
 * A TCP confirmation is owed to @e's peer, with our key if its query
 * showed its own (@keyed): the next segment to it carries it (output.c).
 */
static void mpip_in_confirm_owed(struct mpip_avail *e, bool keyed)
{
	if (keyed) {
		set_bit(MPIP_AVF_CONFIRM_KEY, &e->flags);
		/* before CONFIRM: output.c reads them in that order */
		smp_mb__before_atomic();
	}
	set_bit(MPIP_AVF_CONFIRM, &e->flags);
}

/*
 * Learn from a CM: the sender runs MPIP.  A datagram from the control port
 * (heartbeats, probes, address queries) belongs to no flow: only the
 * address's port-0 entry learns from it; a confirmation of a UDP query
 * comes from the flow's own port.  Caller holds RCU.
 */
static void mpip_in_learn(struct mpip_net *mn, const struct sk_buff *skb,
			  const struct mpip_rx *rx)
{
	const struct mpip_cm *cm = &rx->c2.cm;
	struct mpip_avail *e = NULL;

	if (!(cm->flags & MPIP_CM_F_CTRL) || rx->proto != IPPROTO_UDP ||
	    rx->sport != htons(MPIP_CTRL_PORT))
		e = mpip_in_avail(mn, rx, rx->sport);
	if (e && READ_ONCE(e->state) != MPIP_AVAIL_YES) {
		mpip_avail_yes_again(e);
		WRITE_ONCE(e->state, MPIP_AVAIL_YES);
	}
	mpip_in_avail(mn, rx, 0);

	if (cm->flags & MPIP_CM_F_ENABLE) {
		mpip_inc(mn, MPIP_STAT_RX_QUERY);
		/* Whoever sends a query without a MAC gets no more back. */
		if (rx->proto != IPPROTO_UDP) {
			if (e)
				mpip_in_confirm_owed(e, rx->keyed);
		} else if (rx->authed || mpip_ctrl_may_answer(mn, rx->saddr)) {
			mpip_udp_confirm_send(mn, skb, rx->node, rx->keyed);
		}
	}
	if (cm->flags & MPIP_CM_F_ENABLED)
		mpip_inc(mn, MPIP_STAT_RX_CONFIRM);
}

/* Delay sample, delay report and counters of a CM from node @n. */
static void mpip_in_paths(struct mpip_net *mn, struct mpip_node *n,
			  const struct sk_buff *skb, const struct mpip_rx *rx)
{
	const struct mpip_cm *cm = &rx->c2.cm;
	const struct iphdr *iph = ip_hdr(skb);
	u32 delay_us = mpip_now_us() - cm->timestamp_us;

	mpip_fb_record(n, iph, cm->path_id, cm->timestamp_us, delay_us,
		       cm->xflags & MPIP_CM_X_QUIET);
	mpip_path_rx(n, iph->saddr, iph->daddr, skb->len);
	if (cm->fb_path_id)
		mpip_path_feedback(mn, n, cm->fb_path_id, cm->path_delay_us,
				   delay_us);
	if (cm->flags & MPIP_CM_F_HB)
		mpip_inc(mn, MPIP_STAT_RX_HEARTBEAT);
	if (cm->flags & MPIP_CM_F_IP_CHANGE)
		mpip_inc(mn, MPIP_STAT_RX_IP_CHANGE);
	if (!(cm->flags & MPIP_CM_F_CTRL))
		mpip_touch(&n->last_data_rx);
}

/*
 * The peer's CM in @rx names session @s by its ID: the peer knows it.  A
 * CM that names another ID, one of ours that won over the peer's pick
 * (mpip_session_rx()), does not confirm it: until the peer takes our ID
 * from a CM of ours with the flow's own addresses, packets moved to other
 * paths (or inside UDP) under it would find no session there.
 */
static void mpip_in_confirm(struct mpip_session *s, const struct mpip_rx *rx)
{
	if (!READ_ONCE(s->confirmed) &&
	    READ_ONCE(s->id.sid) == rx->c2.cm.session_id)
		WRITE_ONCE(s->confirmed, true);
}

/*
 * The node of @rx says it knows no session of the ID its CM names, one
 * we sent it a packet under (mpip_heartbeat_unknown()): it lost it.  A
 * confirmed session of ours goes back to the flow's own addresses, where
 * the peer makes it anew and confirms it (session_resync).  Before, what
 * went over other paths was dropped there for as long as the flow ran,
 * and a TCP stream whose packets all went that way stood still
 * (test_restart).  Only the node's own authenticated CMs name its
 * sessions.
 */
static void mpip_in_unknown(struct mpip_net *mn, struct mpip_session *s,
			    const struct mpip_rx *rx)
{
	if (!rx->authed || !READ_ONCE(s->confirmed))
		return;
	WRITE_ONCE(s->confirmed, false);
	mpip_inc(mn, MPIP_STAT_SESSION_RESYNC);
}

/*
 * The peer's CM in @rx, with the flow's own addresses, names another ID
 * than ours for session @s of node @n, and ours won (mpip_session_rx()):
 * the peer does not know it.  If the peer had confirmed it, it lost it
 * since (its session went with a node it left: a restart, a handshake
 * that crossed ours), and drops what we move to other paths under it
 * (drop_session) while its own packets, unconfirmed, come here plain:
 * neither side would ever learn, so it is as if the peer had told us
 * (mpip_in_unknown()).  Only the node's own CMs count: a replay is no
 * packet of the peer now (mpip_in_session_get()).
 */
static void mpip_in_resync(struct mpip_net *mn, struct mpip_node *n,
			   struct mpip_session *s, const struct mpip_rx *rx)
{
	if (READ_ONCE(s->id.node_id) == n->id &&
	    READ_ONCE(s->id.sid) != rx->c2.cm.session_id)
		mpip_in_unknown(mn, s, rx);
}

/*
 * A packet of node @n under an ID we know no session of, @rx's, was
 * dropped: tell the node (mpip_heartbeat_unknown()), if the packet came
 * over one of its paths; one that came from anywhere else gets no
 * answer.
 */
static void mpip_in_tell_unknown(struct mpip_net *mn, struct mpip_node *n,
				 const struct sk_buff *skb,
				 const struct mpip_rx *rx)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct mpip_path *p;

	if (!rx->authed || rx->replayed || !rx->c2.cm.session_id)
		return;
	p = mpip_path_find(n, iph->daddr, iph->saddr);
	if (p && READ_ONCE(p->state) == MPIP_PATH_UP)
		mpip_heartbeat_unknown(mn, n, p, rx->c2.cm.session_id);
}

/*
 * The session of a data packet with a session ID: found, or created from
 * a packet that carries the flow's original addresses.  NULL if the
 * packet cannot be mapped to its flow.
 */
static struct mpip_session *mpip_in_session_get(struct mpip_net *mn,
						struct mpip_node *n,
						const struct sk_buff *skb,
						const struct mpip_rx *rx)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct mpip_session *s;

	s = mpip_session_by_id(mn, n->id, rx->c2.cm.session_id);
	if (s && s->t.proto == rx->proto && s->t.rport == rx->sport &&
	    s->t.lport == rx->dport)
		return s;
	if (!(rx->c2.cm.flags & MPIP_CM_F_ORIG)) {
		/*
		 * Inside UDP, over a path: under the ports the flow has at
		 * the sender, which a NAT may have changed on its way here.
		 */
		if (s && s->t.proto == rx->proto && rx->encap)
			return s;
		return NULL;
	}
	/*
	 * A session is created, or one holding its ID replaced, only by a
	 * CM of the node seen for the first time: its MAC proves the
	 * sender, and a copy replayed from elsewhere must not unlink the
	 * node's sessions (review C3).  The packet itself carries its own
	 * addresses and goes on.
	 */
	if (rx->replayed)
		return NULL;
	s = mpip_session_rx(mn, n, rx->c2.cm.session_id, rx->proto, iph->daddr,
			    rx->dport, iph->saddr, rx->sport);
	if (s) {
		mpip_in_resync(mn, n, s, rx);
		mpip_in_confirm(s, rx);
	}
	return s;
}

/*
 * Map a data packet to its session and give it back the session's
 * original addresses.  Returns false if the packet must be dropped.
 */
static bool mpip_in_session(struct mpip_net *mn, struct mpip_node *n,
			    struct sk_buff *skb, struct mpip_rx *rx)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct mpip_session *s;
	bool moved;

	if ((rx->c2.cm.flags & MPIP_CM_F_CTRL) && rx->proto == IPPROTO_TCP &&
	    mpip_in_carrier(rx)) {
		/*
		 * A carrier with a session's CM, under the flow's addresses
		 * as we see them (through the peer's NAT): the session, as a
		 * data packet of it would give it; the peer waits for it.
		 */
		s = mpip_in_session_get(mn, n, skb, rx);
		if (s && (rx->c2.cm.flags & MPIP_CM_F_NEW))
			mpip_heartbeat_session(mn, n, s);
		return true;
	}
	if (rx->c2.cm.flags & MPIP_CM_F_CTRL) {
		/*
		 * A heartbeat naming a session confirms it; with NEW, the
		 * peer says it does not know it.
		 */
		s = mpip_session_by_id(mn, n->id, rx->c2.cm.session_id);
		if (s && (rx->c2.cm.flags & MPIP_CM_F_NEW))
			mpip_in_unknown(mn, s, rx);
		else if (s && !READ_ONCE(s->confirmed))
			WRITE_ONCE(s->confirmed, true);
		return true;
	}
	s = mpip_in_session_get(mn, n, skb, rx);
	if (!s) {
		if ((rx->c2.cm.flags & MPIP_CM_F_ORIG) && !rx->encap)
			return true;
		mpip_inc(mn, MPIP_STAT_DROP_SESSION);
		mpip_in_tell_unknown(mn, n, skb, rx);
		return false;
	}
	/*
	 * Under other addresses than the session's own, only one of the
	 * node's addresses, one whose path answered from it (rr.c), may
	 * send its packets: a copy of the node's CM from anywhere else must
	 * neither be delivered as if from the peer nor keep the session
	 * alive (review C3).  Any path to it will do: which of our addresses
	 * the peer may use is its routing's business.
	 */
	moved = iph->saddr != s->t.raddr || iph->daddr != s->t.laddr;
	if (moved && !mpip_path_to(n, iph->saddr)) {
		mpip_inc(mn, MPIP_STAT_RX_SPOOFED);
		return false;
	}
	mpip_in_confirm(s, rx);
	rx->sess = s;
	mpip_touch(&s->stamp);
	atomic64_inc(&s->rx_pkts);
	/* The sender waits for us: tell it we know the session. */
	if ((rx->c2.cm.flags & MPIP_CM_F_NEW) && rx->proto == IPPROTO_UDP)
		mpip_heartbeat_session(mn, n, s);

	if ((rx->sport != s->t.rport || rx->dport != s->t.lport) &&
	    mpip_rewrite_ports(skb, s->t.rport, s->t.lport)) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return false;
	}
	if (!moved)
		return true;
	if (mpip_rewrite_addrs(skb, s->t.raddr, s->t.laddr)) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return false;
	}
	mpip_inc(mn, MPIP_STAT_RX_RESTORE);
	return true;
}

/*
 * Must this CM refresh the availability entry of its sender?  A packet
 * of a known session needs to only now and then: the session's earlier
 * packets refreshed it, and it only has to stay well within
 * avail_timeout_ms, or be set back to "yes" after this host downgraded
 * an entry of the node (the node's avail_lost moved; the peer's liveness
 * itself is the node's stamp, output.c).  Looking it up for every packet
 * would cost a receiver of many flows a second table walk per packet.
 * Queries and confirmations always refresh it.
 */
static bool mpip_in_learn_due(const struct mpip_net *mn,
			      const struct mpip_rx *rx)
{
	struct mpip_session *s = rx->sess;	/* then rx->node is set */
	unsigned long now = jiffies;
	unsigned int lost;
	u32 ms;

	if (!s || (rx->c2.cm.flags & (MPIP_CM_F_ENABLE | MPIP_CM_F_ENABLED)))
		return true;
	lost = READ_ONCE(rx->node->avail_lost);
	if (time_before(now, READ_ONCE(s->learn_due)) &&
	    READ_ONCE(s->learn_lost) == lost)
		return false;
	ms = READ_ONCE(mn->cfg.avail_timeout_ms) / 4;
	WRITE_ONCE(s->learn_lost, lost);
	WRITE_ONCE(s->learn_due, now + msecs_to_jiffies(ms));
	return true;
}

/*
 * A data packet whose CM did not open goes on as plain IP would, trailer
 * stripped and nothing learned from it, if it was sent with its flow's
 * own addresses (ORIG, or a query: queries are never moved to a path).
 * Its sender lost our keys (this host flushed its tables or reloaded
 * mpip: the peer goes on with the old ones until it finds us lost), or
 * its query found no room here: dropping it cost the flow its packets
 * for seconds.  Anyone may send plain IP; a packet moved to a path would
 * reach no socket under its path's addresses.
 */
static bool mpip_in_plain(struct mpip_net *mn, struct mpip_rx *rx)
{
	u8 flags = rx->c2.cm.flags;

	/* inside UDP, it came over a path */
	if (rx->encap || (flags & MPIP_CM_F_CTRL) ||
	    !(flags & (MPIP_CM_F_ORIG | MPIP_CM_F_ENABLE)))
		return false;
	rx->node = NULL;
	rx->plain = true;
	mpip_inc(mn, MPIP_STAT_RX_PLAIN);
	return true;
}

/*
 * Authenticate the CM of @rx; false (counted) if the packet goes, true
 * if it goes on, as plain IP if rx->plain.  A data packet seen before
 * goes on, as plain IP would deliver it, unless its sender sent copies of
 * it (MPIP_CM_X_DUP): then it is a later copy.
 */
static bool mpip_in_open(struct mpip_net *mn, struct mpip_rx *rx)
{
	int err = mpip_cm_open(mn, rx);

	rx->plain = false;
	/*
	 * What no checksum confirmed is a trailer only if its MAC says so
	 * (mpip_in_gro_merged()).  Else it is dropped, not delivered: it is
	 * more likely a trailer of a peer that lost our keys than data of a
	 * host without MPIP that ends like one, and TCP sends it again.
	 */
	if (rx->unsummed && !rx->authed) {
		mpip_inc(mn, MPIP_STAT_RX_GRO_UNOPENED);
		return false;
	}
	if (!err && rx->replayed && (rx->c2.cm.xflags & MPIP_CM_X_DUP)) {
		mpip_inc(mn, MPIP_STAT_RX_DUP);
		return false;
	}
	if (!err) {
		if (rx->replayed)
			mpip_inc(mn, MPIP_STAT_RX_REPLAY);
		return true;
	}
	if (err == MPIP_AUTH_E_DUP || err == MPIP_AUTH_E_OLD)
		mpip_inc(mn, MPIP_STAT_RX_REPLAY);
	else if (err == -ENOMEM)
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
	else if (err != -ENOSPC)	/* no room: table_full counted it */
		mpip_inc(mn, MPIP_STAT_RX_AUTH_FAIL);
	return mpip_in_plain(mn, rx);
}

/*
 * A CM that came inside UDP or in a control datagram came from the
 * peer's end of one of its paths, or from a NAT's: paths.c learns a path
 * to the latter.
 */
static void mpip_in_endpoint(struct mpip_net *mn, struct mpip_node *n,
			     const struct mpip_rx *rx)
{
	if (rx->ftcp)
		mpip_ftcp_learn(mn, n, rx);
	else if (rx->encap)
		mpip_path_learn(mn, n, rx->daddr, rx->saddr, rx->esport);
	else if ((rx->c2.cm.flags & MPIP_CM_F_CTRL) &&
		 rx->proto == IPPROTO_UDP &&
		 rx->dport == htons(MPIP_CTRL_PORT))
		mpip_path_learn(mn, n, rx->daddr, rx->saddr, rx->sport);
}

/*
 * Everything an authenticated CM tells us.  Returns false if the packet
 * must be dropped.  Caller holds RCU.
 */
static bool mpip_in_authed(struct mpip_net *mn, struct sk_buff *skb,
			   struct mpip_rx *rx)
{
	const struct mpip_cm *cm = &rx->c2.cm;
	struct mpip_node *n = rx->node;

	if (!rx->replayed) {
		mpip_in_endpoint(mn, n, rx);
		mpip_node_learn(mn, n, rx->saddr, rx->sport, &rx->c2);
		mpip_in_paths(mn, n, skb, rx);
		mpip_rr_rx(mn, n, rx);
		/* A new peer: tell it our addresses, ask for its. */
		if (!READ_ONCE(n->naddrs))
			mpip_addr_query(mn, n, rx->daddr, rx->saddr);
	}
	if (cm->session_id && !mpip_in_session(mn, n, skb, rx))
		return false;
	if (!rx->replayed && mpip_in_learn_due(mn, rx))
		mpip_in_learn(mn, skb, rx);
	return true;
}

/*
 * Everything a CM tells us, once it is authenticated; a query that is
 * not (a first query) is only answered.  Returns false if the packet
 * must be dropped.  Caller holds RCU.
 */
static bool mpip_in_process(struct mpip_net *mn, struct sk_buff *skb,
			    struct mpip_rx *rx)
{
	rx->sess = NULL;
	if (!mpip_in_open(mn, rx))
		return false;
	if (rx->plain)
		return true;
	if (rx->authed || rx->replayed)
		return mpip_in_authed(mn, skb, rx);
	mpip_in_learn(mn, skb, rx);
	return true;
}

/* Remove the trailer; the transport checksum is valid without it. */
static int mpip_in_strip(struct sk_buff *skb, const struct mpip_rx *rx)
{
	struct iphdr *iph;

	if (skb_ensure_writable(skb, ip_hdrlen(skb)))
		return -ENOMEM;
	if (pskb_trim_rcsum(skb, skb->len - rx->cm_len))
		return -ENOMEM;
	iph = ip_hdr(skb);
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
	return 0;
}

/*
 * A segment of session @s that acknowledges the first data segment the
 * session sent with a CM: the peer's reorder buffer started from it, and
 * holds what overtakes from now on, so the other paths may take the
 * session's data (output.c, mpip_out_starting()).
 */
static void mpip_in_acked(struct mpip_session *s, const struct sk_buff *skb)
{
	struct tcphdr _th;
	const struct tcphdr *th;

	/* pairs with the release in mpip_out_starting(): start_end is set */
	if (READ_ONCE(s->started) || !smp_load_acquire(&s->start_stamp))
		return;
	th = skb_header_pointer(skb, ip_hdrlen(skb), sizeof(_th), &_th);
	if (th && th->ack &&
	    !before(ntohl(th->ack_seq), READ_ONCE(s->start_end)))
		WRITE_ONCE(s->started, true);
}

/*
 * A data packet with a valid CM: restore, strip, maybe hold.  A kept GSO
 * packet loses its CM first, so that restoring its addresses finds the
 * TCP header where it belongs.  RCU held.
 */
static unsigned int mpip_in_data(struct mpip_net *mn, struct sk_buff *skb,
				 struct mpip_rx *rx, mpip_okfn_t okfn)
{
	if (rx->gso && mpip_gso_decap(skb, rx->cm_len)) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NF_DROP;
	}
	if (!mpip_in_process(mn, skb, rx))
		return NF_DROP;
	if (rx->c2.cm.flags & MPIP_CM_F_CTRL) {
		mpip_inc(mn, MPIP_STAT_RX_CTRL);
		consume_skb(skb);
		return NF_STOLEN;
	}
	if (!rx->gso && mpip_in_strip(skb, rx)) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NF_DROP;
	}
	if (!rx->plain)
		mpip_inc(mn, MPIP_STAT_RX_CM);
	if (rx->gso) {
		mpip_inc(mn, MPIP_STAT_RX_GSO_KEPT);
	} else if (rx->proto == IPPROTO_TCP) {
		/* Verified in mpip_in_tcp_csum_ok(). */
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		skb->csum_level = 0;
	}
	if (rx->proto == IPPROTO_TCP && rx->sess)
		mpip_in_acked(rx->sess, skb);
	/*
	 * A frame in the middle of br_netfilter's pass is never held: it
	 * could not be re-injected where it was taken (mpip_skb_bridged()).
	 */
	if (rx->proto == IPPROTO_TCP && rx->sess && rx->node &&
	    !mpip_skb_bridged(skb))
		return mpip_reorder_rx(mn, rx->sess, rx->node, skb, &rx->c2.cm,
				       okfn);
	return NF_ACCEPT;
}

/*
 * Only a packet for one of this host's addresses is ours to strip; one
 * that is routed on keeps its trailer.  The address hash is cheaper than
 * a FIB lookup, and routes of type local are not mpip's concern.
 */
static bool mpip_in_is_local(struct net *net, const struct sk_buff *skb)
{
	return __ip_dev_find(net, ip_hdr(skb)->daddr, false);
}

/*
 * A fragment for this host: reassemble the datagram here, since its CM
 * is at the tail of the last fragment.  The IP layer reassembles
 * datagrams for local delivery anyway, after this hook; this is the same
 * reassembly, earlier, in the same queue (IP_DEFRAG_LOCAL_DELIVER).
 * Returns true if the fragment was taken (kept for the rest of its
 * datagram, or freed); false if @skb now holds the whole datagram.
 * Bottom halves are off, as ip_defrag() needs.
 */
static bool mpip_in_reassemble(struct mpip_net *mn, struct sk_buff *skb,
			       struct net *net)
{
	int err;

	err = ip_defrag(net, skb, IP_DEFRAG_LOCAL_DELIVER);
	if (err)
		return true;
	mpip_inc(mn, MPIP_STAT_RX_REASSEMBLED);
	return false;
}

/*
 * A datagram to our control port with a packet inside (encap.c), or a
 * segment of a fake TCP connection to it (ftcp.c), which mpip_encap_pull()
 * or mpip_ftcp_pull() took out (@err: 1) or not: taken out, it must
 * carry an authenticated CM, of our version; else it goes.
 */
static unsigned int mpip_in_encap(struct mpip_net *mn, struct sk_buff *skb,
				  struct mpip_rx *rx, mpip_okfn_t okfn,
				  int err)
{
	if (!err)
		return NF_DROP;
	if (err == -ENOMEM)
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
	if (err < 0 || !mpip_in_find_cm(skb, rx) ||
	    rx->c2.version != MPIP_CM2_VERSION) {
		if (err != -ENOMEM)
			mpip_inc(mn, MPIP_STAT_RX_ENCAP_BAD);
		return NF_DROP;
	}
	mpip_inc(mn, MPIP_STAT_RX_ENCAP);
	return mpip_in_data(mn, skb, rx, okfn);
}

static unsigned int mpip_in_packet(struct mpip_net *mn, struct sk_buff *skb,
				   const struct nf_hook_state *state);

/*
 * A SYN or SYN-ACK to us while we open fake TCP connections of our own
 * (mn->ftcp_opener: we are behind a NAT, in faketcp): its MSS is lowered
 * by what fake TCP adds beyond UDP.  A peer in nat_mode auto or udp left
 * room in it for UDP only (mpip_links_encap_room() on its side, when it
 * sent the SYN), and takes up our fake TCP connections all the same:
 * our segments to it would be too big for the path and go fragmented
 * (tx_encap_frag).  A host that opens none sends inside fake TCP only in
 * connections its peers opened, and a peer that opens one is in faketcp
 * and left fake TCP's room already: lowering the MSS again would cost 12
 * bytes of every segment.  (A peer in faketcp that we answer left the
 * room too: then our segments are 12 bytes shorter than they could be.)
 */
static void mpip_in_syn_room(struct mpip_net *mn, struct sk_buff *skb,
			     struct net *net)
{
	unsigned int ihl = ip_hdrlen(skb);
	const struct tcphdr *th;
	struct tcphdr _th;

	if (!READ_ONCE(mn->ftcp_opener) ||
	    mpip_links_encap_room(mn) != MPIP_FTCP_ENCAP_LEN)
		return;
	th = skb_header_pointer(skb, ihl, sizeof(_th), &_th);
	if (!th || !th->syn || th->rst || th->doff * 4 <= sizeof(*th) ||
	    !mpip_in_is_local(net, skb))
		return;
	if (mpip_rewrite_mss(skb, ihl + th->doff * 4,
			     MPIP_FTCP_ENCAP_LEN - MPIP_ENCAP_LEN, 0))
		mpip_inc(mn, MPIP_STAT_MSS_CLAMPED);
}

/*
 * Datagrams to our control port that GRO merged into one (a receiver
 * with rx-udp-gro-forwarding or rx-gro-list on takes them for forwarded
 * ones, since no socket is bound to the port), or that a sender on this
 * host sent as one GSO packet (encap_gso.c), as it sends segments of a
 * fake TCP connection to it: each carries a packet of its own.  (GRO
 * does not merge those segments: each has PSH set.)  Split them again; each goes through the
 * hook, and on, as if it had come alone.  Returns NF_STOLEN, or NF_DROP
 * if they cannot be split.
 */
static unsigned int mpip_in_encap_split(struct mpip_net *mn,
					struct sk_buff *skb,
					const struct nf_hook_state *state)
{
	struct sk_buff *segs, *seg, *next;
	unsigned int verdict;

	/*
	 * One a sender on this host made (encap_gso.c), over a veth, keeps
	 * its checksums partial: trusted, as for a datagram that came alone.
	 */
	segs = skb_gso_segment(skb, skb->ip_summed == CHECKSUM_PARTIAL ?
				    NETIF_F_SG | NETIF_F_HW_CSUM : 0);
	if (IS_ERR_OR_NULL(segs)) {
		mpip_inc(mn, MPIP_STAT_RX_ENCAP_BAD);
		return NF_DROP;
	}
	mpip_inc(mn, MPIP_STAT_RX_ENCAP_GRO);
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		verdict = mpip_in_packet(mn, seg, state);
		if (verdict == NF_ACCEPT)
			mpip_in_reinject(mn, seg, state->okfn);
		else if (verdict != NF_STOLEN)
			kfree_skb(seg);
	}
	return NF_STOLEN;
}

/*
 * Netfilter runs hooks inside an RCU read-side critical section (nf_hook()),
 * which covers every table lookup below; bottom halves are off
 * (mpip_in_hook()).
 */
static unsigned int mpip_in_packet(struct mpip_net *mn, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	struct mpip_rx rx;

	/* A VRF device runs the hook again for what its slaves received. */
	if (netif_is_l3_master(state->in))
		return NF_ACCEPT;
	/* Fragments that are routed on pass untouched. */
	if (unlikely(ip_is_fragment(ip_hdr(skb)))) {
		if (!mpip_in_is_local(state->net, skb))
			return NF_ACCEPT;
		if (mpip_in_reassemble(mn, skb, state->net))
			return NF_STOLEN;
	}
	if (unlikely(ip_hdr(skb)->protocol == IPPROTO_ICMP)) {
		if (mpip_in_is_local(state->net, skb) && mpip_icmp_rx(mn, skb))
			return NF_DROP;
		return NF_ACCEPT;
	}
	rx.encap = false;
	rx.esummed = false;
	rx.ftcp = false;
	if (unlikely(ip_hdr(skb)->protocol == IPPROTO_UDP &&
		     mpip_encap_is(skb, ip_hdrlen(skb)) &&
		     mpip_in_is_local(state->net, skb))) {
		if (skb_is_gso(skb))
			return mpip_in_encap_split(mn, skb, state);
		return mpip_in_encap(mn, skb, &rx, state->okfn,
				     mpip_encap_pull(skb, &rx));
	}
	if (unlikely(ip_hdr(skb)->protocol == IPPROTO_TCP &&
		     mpip_ftcp_is(skb, ip_hdrlen(skb)) &&
		     mpip_in_is_local(state->net, skb))) {
		if (skb_is_gso(skb))
			return mpip_in_encap_split(mn, skb, state);
		return mpip_in_encap(mn, skb, &rx, state->okfn,
				     mpip_ftcp_pull(mn, skb, &rx));
	}
	if (ip_hdr(skb)->protocol == IPPROTO_TCP)
		mpip_in_syn_room(mn, skb, state->net);
	if (!mpip_in_find_cm(skb, &rx))
		return NF_ACCEPT;
	/* A peer that does not authenticate its CMs is not one. */
	if (rx.c2.version != MPIP_CM2_VERSION) {
		mpip_inc(mn, MPIP_STAT_RX_V1);
		return NF_ACCEPT;
	}
	if (!mpip_in_is_local(state->net, skb)) {
		mpip_inc(mn, MPIP_STAT_RX_NOT_LOCAL);
		return NF_ACCEPT;
	}
	return mpip_in_data(mn, skb, &rx, state->okfn);
}

/*
 * The PRE_ROUTING hook.  It runs in the receiving soft IRQ, but also in
 * process context with bottom halves on, when a queue before it
 * (NFQUEUE at a priority below mpip's) has its verdict: nf_reinject()
 * runs the remaining hooks from the sendmsg() of the process that gave
 * it.  The reorder buffer's lock is shared with its soft-IRQ timer, and
 * the segments it releases go up the stack: bottom halves off for all of
 * it, as they are when the packet comes from a device.
 */
unsigned int mpip_in_hook(void *priv, struct sk_buff *skb,
			  const struct nf_hook_state *state)
{
	struct mpip_net *mn = priv;
	unsigned int verdict;

	if (!READ_ONCE(mn->enabled))
		return NF_ACCEPT;
	local_bh_disable();
	verdict = mpip_in_packet(mn, skb, state);
	local_bh_enable();
	return verdict;
}

/*
 * Hand back a packet the input hook stole (a held TCP segment, or one
 * queued behind held ones): it goes through the PRE_ROUTING hooks after
 * mpip's and then to @okfn, the IP layer, exactly once.  Taps, tc
 * ingress, XDP and the hooks before mpip's saw it when it arrived and do
 * not see it again.  RCU held, bottom halves off.
 */
void mpip_in_reinject(const struct mpip_net *mn, struct sk_buff *skb,
		      mpip_okfn_t okfn)
{
	struct net *net = dev_net(skb->dev);
	const struct nf_hook_entries *e;
	struct nf_hook_state state;

	mpip_ipcb_reset(skb);
	skb_set_transport_header(skb, ip_hdrlen(skb));
	nf_hook_state_init(&state, NF_INET_PRE_ROUTING, NFPROTO_IPV4,
			   skb->dev, NULL, NULL, net, okfn);
	e = rcu_dereference(net->nf.hooks_ipv4[NF_INET_PRE_ROUTING]);
	if (e && nf_hook_slow(skb, &state, e,
			      mpip_hook_next(mn, MPIP_NF_IN, e)) != 1)
		return;
	okfn(net, NULL, skb);
}
