// SPDX-License-Identifier: GPL-2.0
/*
 * mpip return routability (issue 20, review C2).
 *
 * The addresses a peer advertises are its word only: a peer, or anyone
 * who shook hands with us, could name a third party's address and make
 * us send probes and data there.  So a path carries data only after a
 * probe sent on it was answered *from its remote address*: the probe
 * carries a random nonce of the path (8 extension bytes), and the answer,
 * sent back from the address the probe reached to the address it came
 * from, echoes it (24 bytes: the answerer's own nonce for that reverse
 * path, or 0 if it is verified already, then the echo, then the address
 * and port the probe came from, which tell a NAT on the way).  Only a host that
 * receives at the address can echo; the MAC of the CM keeps others from
 * forging one.
 *
 * Each end accepts data under another address than the flow's own only
 * from a remote address it verified itself (input.c).  So a path carries
 * data only once the peer verified the way back too: its answer said so
 * with a nonce field of 0.  An answer that carried the peer's nonce
 * instead, or MPIP_RR_NO_PATH (it has no path back yet), leaves the path
 * probing; the peer, once our echo of its nonce came back, echoes ours
 * again with its field 0 (a confirmation), and our next probe would get
 * that answer too.  Else data sent on a path the moment our own check
 * passed met a peer whose check lagged behind (our echo late under load,
 * or lost; no path back yet, the peer's address list still on its way)
 * and was dropped there (rx_spoofed).
 *
 * Probes of a path not verified yet back off exponentially, from one
 * heartbeat interval, and stop after MPIP_RR_TRIES; a new address list
 * makes new paths, which start over.  All probes of a node's unverified
 * paths also draw on one credit per node: a few to start with, one more
 * for each authenticated packet from the node.  So a peer that names
 * third parties' addresses gets at most one probe sent to them per
 * packet of its own (beyond MPIP_RR_CREDIT_INIT).  Nonces come only in
 * authenticated CMs that are not replays; answers to them are sent
 * within the node's own budget (MPIP_RR_NODE_PER_SEC, budget.c), apart
 * from the one confirmations of queries nobody authenticated draw on:
 * a stranger's packets never make us send more packets than it sent, to
 * anyone, and a flood of them leaves the peer's probes answered.
 */
#include <linux/random.h>

#include "mpip.h"

void mpip_rr_init(struct mpip_path *p)
{
	do {
		p->nonce = get_random_u64();
	} while (!p->nonce || p->nonce == MPIP_RR_NO_PATH);
}

void mpip_rr_node_init(struct mpip_node *n)
{
	atomic_set(&n->rr_credit, MPIP_RR_CREDIT_INIT);
}

/*
 * An authenticated packet came from @n: one more probe of its unverified
 * paths may go.  (No write once the credit is full: this runs for every
 * packet with a CM.)
 */
void mpip_rr_earn(struct mpip_node *n)
{
	if (atomic_read(&n->rr_credit) < MPIP_RR_CREDIT_MAX)
		atomic_inc(&n->rr_credit);
}

/*
 * May a probe with the nonce of @p, whose remote address has not answered
 * yet, go now?  One of MPIP_RR_TRIES, after its backoff, and it spends
 * one of @n's credits.
 */
static bool mpip_rr_try(struct mpip_net *mn, struct mpip_node *n,
			struct mpip_path *p)
{
	unsigned long hb = msecs_to_jiffies(READ_ONCE(mn->cfg.heartbeat_ms));
	bool due = false, held = false;

	spin_lock_bh(&p->lock);
	if (p->rr_tries < MPIP_RR_TRIES &&
	    (!p->rr_tries || !time_before(jiffies, p->rr_next))) {
		if (atomic_add_unless(&n->rr_credit, -1, 0)) {
			p->rr_next = jiffies + (max(hb, 1UL) << p->rr_tries);
			WRITE_ONCE(p->rr_tries, p->rr_tries + 1);
			due = true;
		} else {
			held = true;
		}
	}
	spin_unlock_bh(&p->lock);
	if (held)
		mpip_inc(mn, MPIP_STAT_RR_HELD);
	return due;
}

/*
 * Is a probe of @p, a path of @n, due now?  Fills @ext with the nonce of
 * a path whose check is not complete, or leaves it empty.  While the
 * remote address has not answered, such probes are limited
 * (mpip_rr_try()); once it has, the address is the peer's, and the probes
 * that wait for the peer to say it verified the way back go at the
 * caller's pace (heartbeat.c), as those of a path that is down.  Caller
 * holds RCU.
 */
bool mpip_rr_probe_due(struct mpip_net *mn, struct mpip_node *n,
		       struct mpip_path *p, struct mpip_cm_ext *ext)
{
	ext->len = 0;
	if (mpip_rr_done(p))
		return true;
	if (!READ_ONCE(p->rr_ok) && !mpip_rr_try(mn, n, p))
		return false;
	put_unaligned_be64(p->nonce, ext->b);
	ext->len = MPIP_RR_NONCE_LEN;
	return true;
}

/*
 * Did @p's remote address leave all its probes unanswered?  Then nothing
 * more goes there (a new address list makes new paths).
 */
bool mpip_rr_gave_up(const struct mpip_path *p)
{
	return !READ_ONCE(p->rr_ok) && READ_ONCE(p->rr_tries) >= MPIP_RR_TRIES;
}

/*
 * An answer (MPIP_RR_SEEN_LEN): our nonce field @own, the peer's nonce
 * @echo, and where the CM that carried it came from, @daddr:@dport, which
 * is also where the answer goes (on @p if we have that path).
 */
static void mpip_rr_send(struct mpip_net *mn, struct mpip_node *n,
			 struct mpip_path *p, __be32 saddr, __be32 daddr,
			 __be16 dport, u64 own, u64 echo)
{
	struct mpip_cm_ext ext = { .len = MPIP_RR_SEEN_LEN };
	struct mpip_cm cm;

	put_unaligned_be64(own, ext.b);
	put_unaligned_be64(echo, ext.b + MPIP_RR_NONCE_LEN);
	memcpy(ext.b + MPIP_RR_ECHO_LEN, &daddr, sizeof(daddr));
	memcpy(ext.b + MPIP_RR_ECHO_LEN + 4, &dport, sizeof(dport));
	mpip_cm_fill(mn, &cm, MPIP_CM_F_CTRL | MPIP_CM_F_HB, false);
	mpip_ctrl_send_to(mn, n, p, saddr, daddr, dport, &cm, &ext);
	mpip_inc(mn, MPIP_STAT_TX_HEARTBEAT);
}

/*
 * Send the confirmation owed on @p, if one is: the peer's nonce, which we
 * answered while we had not verified @p, echoed again now that we have,
 * with our nonce field 0.  At most one per answer we sent.
 */
static void mpip_rr_confirm(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_path *p)
{
	__be32 addr;
	__be16 port;
	u64 nonce;

	spin_lock_bh(&p->lock);
	nonce = p->peer_nonce;
	addr = p->peer_seen_addr;
	port = p->peer_seen_port;
	p->peer_nonce = 0;
	spin_unlock_bh(&p->lock);
	if (nonce && mpip_node_may_answer(mn, n))
		mpip_rr_send(mn, n, p, 0, addr, port, 0, nonce);
}

/*
 * @p answered from its remote address, and the answer said whether the
 * peer verified the way back (@peer_ok).  Once both hold, it may carry
 * data.  Returns whether @p was not verified before.
 */
static bool mpip_rr_verified(struct mpip_net *mn, struct mpip_node *n,
			     struct mpip_path *p, bool peer_ok)
{
	bool first = false;
	int state;

	if (peer_ok && !READ_ONCE(p->rr_peer))
		WRITE_ONCE(p->rr_peer, true);
	if (!READ_ONCE(p->rr_ok)) {
		WRITE_ONCE(p->rr_ok, true);
		mpip_inc(mn, MPIP_STAT_RR_VERIFIED);
		first = true;
	}
	if (!mpip_rr_done(p))
		return first;
	state = READ_ONCE(p->state);
	if ((state == MPIP_PATH_PROBING || state == MPIP_PATH_DOWN) &&
	    READ_ONCE(p->feedback) && mpip_path_dev_up(mn->net, p->ifindex))
		mpip_path_set_state(mn, n, p, MPIP_PATH_UP);
	return first;
}

/*
 * We answer the peer's @nonce on @p with our own, not verified yet: keep
 * it, and where it came from, for the confirmation (mpip_rr_confirm()).
 */
static void mpip_rr_owe(struct mpip_path *p, const struct mpip_rx *rx,
			u64 nonce)
{
	spin_lock_bh(&p->lock);
	p->peer_nonce = nonce;
	p->peer_seen_addr = rx->saddr;
	p->peer_seen_port = rx->sport;
	spin_unlock_bh(&p->lock);
}

/*
 * Answer the nonce @nonce, which came from @rx's source address, on our
 * path @p back to it if we have one (its ID tells the delay report), and
 * say where it came from.
 */
static void mpip_rr_answer(struct mpip_net *mn, struct mpip_node *n,
			   const struct mpip_rx *rx, struct mpip_path *p,
			   u64 nonce)
{
	bool owe = p && !READ_ONCE(p->rr_ok);
	u64 own = 0;

	if (!mpip_node_may_answer(mn, n))
		return;
	if (owe) {
		mpip_rr_owe(p, rx, nonce);
		own = p->nonce;
	} else if (!p) {
		/*
		 * No way back (the peer's address list, or the NAT's end,
		 * not known yet): data from there would be dropped here.
		 */
		own = MPIP_RR_NO_PATH;
	}
	mpip_rr_send(mn, n, p, rx->daddr, rx->saddr, rx->sport, own, nonce);
}

/*
 * The peer sent its nonce over the reverse of @p, which we verified but
 * the peer has not said it did (it had no path back when it answered us,
 * say): our answer lets it finish its check, and a probe with our nonce
 * right behind it asks it to say so, rather than our next probe, a
 * heartbeat away: the probe of a path we verified carries our nonce
 * (mpip_rr_probe_due()).  Within the node's answer budget, as the
 * answer.
 */
static void mpip_rr_ask(struct mpip_net *mn, struct mpip_node *n,
			struct mpip_path *p)
{
	if (mpip_node_may_answer(mn, n))
		mpip_probe_path(mn, n, p, false);
}

/*
 * The peer answered a probe of @p, which it saw come from the address and
 * port at @seen (in the answer's extension, MPIP_RR_SEEN_LEN).  If that is
 * not our end of the path (its local address and the control port), a
 * NAT translates the path.  The path then carries its packets inside UDP
 * (encap.c), which the NAT translates as it did the probe, to the peer's
 * path back to the NAT's end, learned from the probe (paths.c); the
 * answer that came back through the NAT verifies it.  With nat_mode none
 * (its interface's, or the namespace's) it stays unverified and is probed
 * no more; with faketcp this host is one that opens fake TCP connections
 * (mn->ftcp_opener, input.c).  Returns whether it stays unverified.
 */
static bool mpip_rr_seen(struct mpip_net *mn, const struct mpip_node *n,
			 struct mpip_path *p, const u8 *seen)
{
	bool nat, first = false, off;
	__be32 addr;
	__be16 port;
	u32 mode;

	memcpy(&addr, seen, sizeof(addr));
	memcpy(&port, seen + sizeof(addr), sizeof(port));
	nat = addr != p->saddr || port != htons(MPIP_CTRL_PORT);
	mode = mpip_link_nat_mode(mn, p->ifindex);
	off = mode == MPIP_NAT_MODE_NONE;

	spin_lock_bh(&p->lock);
	p->seen_addr = addr;
	p->seen_port = port;
	if (nat) {
		first = !p->nat;
		WRITE_ONCE(p->nat, true);
		if (off)
			WRITE_ONCE(p->rr_tries, MPIP_RR_TRIES);
		else
			WRITE_ONCE(p->encap, mode == MPIP_NAT_MODE_FAKETCP ?
					       MPIP_ENCAP_FTCP : MPIP_ENCAP_UDP);
	}
	spin_unlock_bh(&p->lock);
	if (nat && mode == MPIP_NAT_MODE_FAKETCP && !p->learned)
		WRITE_ONCE(mn->ftcp_opener, true);
	if (first) {
		mpip_inc(mn, MPIP_STAT_RR_NAT);
		mpip_event_path_nat(mn, n, p, addr, port);
	}
	return nat && off;
}

/*
 * The return-routability part of an authenticated CM from node @n: an
 * echo of one of our nonces verifies our path between the CM's
 * addresses, unless it says that a NAT is in between (and nat_mode is
 * none), and its nonce field tells whether the peer verified the way
 * back; a nonce of the peer is answered.  Caller holds RCU.
 */
void mpip_rr_rx(struct mpip_net *mn, struct mpip_node *n,
		const struct mpip_rx *rx)
{
	const struct mpip_cm2 *c2 = &rx->c2;
	struct mpip_path *p;
	u64 nonce, echo = 0;
	bool first = false;

	if (c2->ext_len != MPIP_RR_NONCE_LEN &&
	    c2->ext_len != MPIP_RR_ECHO_LEN && c2->ext_len != MPIP_RR_SEEN_LEN)
		return;
	if (c2->cm.flags & (MPIP_CM_F_ENABLE | MPIP_CM_F_ENABLED))
		return;
	nonce = get_unaligned_be64(c2->ext);
	if (c2->ext_len > MPIP_RR_NONCE_LEN)
		echo = get_unaligned_be64(c2->ext + MPIP_RR_NONCE_LEN);
	p = mpip_path_find(n, rx->daddr, rx->saddr);
	if (echo && p && echo == p->nonce &&
	    !(c2->ext_len == MPIP_RR_SEEN_LEN &&
	      mpip_rr_seen(mn, n, p, c2->ext + MPIP_RR_ECHO_LEN))) {
		first = mpip_rr_verified(mn, n, p, !nonce);
		mpip_loss_answer(mn, p);
	}
	/* An answer now tells the peer as well as a confirmation. */
	if (nonce && nonce != MPIP_RR_NO_PATH) {
		mpip_rr_answer(mn, n, rx, p, nonce);
		if (p && READ_ONCE(p->rr_ok) && !READ_ONCE(p->rr_peer))
			mpip_rr_ask(mn, n, p);
	} else if (first) {
		mpip_rr_confirm(mn, n, p);
	}
}
