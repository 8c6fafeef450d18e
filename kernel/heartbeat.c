// SPDX-License-Identifier: GPL-2.0
/*
 * mpip periodic work and the control packets it sends (paper sections
 * 3.4.3 and 3.4.4).
 *
 * One delayed work per namespace ticks every min(weight_interval_ms,
 * heartbeat_ms).  On every tick, each node's paths are checked for
 * timeouts and their weights adjusted (paths.c).  For each node with
 * recent traffic:
 *  - every heartbeat_ms, every path not up is probed with a control packet
 *    of its own, so that the remote node reports its delay and the path
 *    comes (back) up (new paths are probed at once: mpip_node_learn());
 *  - on every tick, if delay samples from the node wait to be reported
 *    and nothing was sent to it for a tick period, heartbeats carry them
 *    back: a one-way flow's sender then gets a report per path at least
 *    once per weight interval, as Algorithm 1 needs.  These say
 *    MPIP_CM_X_QUIET: they want no report themselves, so two idle nodes
 *    stop once the reports they owe are sent; except on a path that had
 *    no report for path_timeout_ms, which only a report asked for can
 *    show to work (the peer answers quietly).  An idle node's are sent
 *    too: the report a peer's probe asked for brings the peer's path up.
 * Control packets are UDP datagrams between MPIP_CTRL_PORT on both sides
 * with the CM in the surplus area (handshake.c); the receiver consumes
 * them before conntrack.
 *
 * A change of local addresses or links re-evaluates every node's paths
 * and tells the nodes the new address list (IP_CHANGE), a few times over,
 * and tells nodes that were idle then when they are active again.
 */
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/netdevice.h>
#include <net/route.h>

#include "mpip.h"

/*
 * Send a control CM with extension @ext (or none) to @n, on path @p if
 * given, else from @saddr to @daddr; from our control port to port
 * @dport.  An answer goes to the port the CM it answers came from: a NAT
 * may have given that one another port than the control port.
 */
void mpip_ctrl_send_to(struct mpip_net *mn, struct mpip_node *n,
		       struct mpip_path *p, __be32 saddr, __be32 daddr,
		       __be16 dport, struct mpip_cm *cm,
		       const struct mpip_cm_ext *ext)
{
	struct flowi4 fl4 = {};
	struct dst_entry *dst;
	struct rtable *rt;

	if (p) {
		dst = mpip_path_dst(mn, p);
		if (!dst)
			return;
		rt = container_of(dst, struct rtable, dst);
		saddr = p->saddr;
		daddr = p->daddr;
		cm->path_id = p->id;
	} else {
		fl4.daddr = daddr;
		fl4.saddr = saddr;
		fl4.flowi4_proto = IPPROTO_UDP;
		rt = ip_route_output_key(mn->net, &fl4);
		if (IS_ERR(rt))
			return;
	}
	mpip_fb_pick(mn, n, p, cm);
	mpip_udp_ctrl_xmit(mn, rt, saddr, daddr, htons(MPIP_CTRL_PORT), dport,
			   n, cm, ext);
	if (p)
		mpip_path_tx(p, 0, cm->xflags & MPIP_CM_X_QUIET);
	mpip_touch(&n->last_tx);
}

/*
 * As mpip_ctrl_send_to(), to the peer's control port, or on a path
 * learned through its NAT, to the NAT's port (paths.c).
 */
void mpip_ctrl_send(struct mpip_net *mn, struct mpip_node *n,
		    struct mpip_path *p, __be32 saddr, __be32 daddr,
		    struct mpip_cm *cm, const struct mpip_cm_ext *ext)
{
	mpip_ctrl_send_to(mn, n, p, saddr, daddr,
			  p ? READ_ONCE(p->dport) : htons(MPIP_CTRL_PORT), cm,
			  ext);
}

/*
 * Tell the sender of a new session @s that we know it, so that it may
 * spread the session over all paths; at most once per heartbeat interval.
 */
void mpip_heartbeat_session(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_session *s)
{
	unsigned long hb = msecs_to_jiffies(READ_ONCE(mn->cfg.heartbeat_ms));
	unsigned long last = READ_ONCE(s->hb_stamp);
	struct mpip_cm cm;

	if (last && time_before(jiffies, last + hb))
		return;
	WRITE_ONCE(s->hb_stamp, jiffies | 1);
	mpip_cm_fill(mn, &cm, MPIP_CM_F_CTRL | MPIP_CM_F_HB, false);
	cm.session_id = READ_ONCE(s->id.sid);
	mpip_ctrl_send(mn, n, mpip_path_find(n, s->t.laddr, s->t.raddr),
		       s->t.laddr, s->t.raddr, &cm, NULL);
	mpip_inc(mn, MPIP_STAT_TX_HEARTBEAT);
}

/*
 * Is "no such session" @sid due to node @n: not told of that ID in the
 * last MPIP_UNKNOWN_GAP?  Then it is stamped now.  (Of two CPUs, one
 * stamps it.)
 */
static bool mpip_unknown_due(struct mpip_node *n, u16 sid)
{
	unsigned int i = sid % MPIP_UNKNOWN_SLOTS;
	unsigned long last = READ_ONCE(n->unknown[i].stamp);

	if (last && READ_ONCE(n->unknown[i].sid) == sid &&
	    time_before(jiffies, last + MPIP_UNKNOWN_GAP))
		return false;
	if (cmpxchg(&n->unknown[i].stamp, last, jiffies | 1) != last)
		return false;
	WRITE_ONCE(n->unknown[i].sid, sid);
	return true;
}

/*
 * Tell node @n that we know no session @sid: a packet of its under that
 * ID came over path @p and was dropped (drop_session).  The node had
 * seen it confirmed, and we lost it since (we restarted, or it expired
 * here first); the node takes the confirmation back and sends the flow
 * on its own addresses, where we make the session anew (input.c).  HB |
 * CTRL | NEW, sealed for @n, on @p; at most one per ID each
 * MPIP_UNKNOWN_GAP, within the node's budget (MPIP_UNKNOWN_PER_SEC).
 */
void mpip_heartbeat_unknown(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_path *p, u16 sid)
{
	struct mpip_cm cm;

	if (!mpip_unknown_due(n, sid))
		return;
	if (!mpip_budget_try(&n->unknown_tat, MPIP_UNKNOWN_PER_SEC,
			     MPIP_UNKNOWN_BURST)) {
		mpip_inc(mn, MPIP_STAT_CTRL_LIMITED);
		return;
	}
	mpip_cm_fill(mn, &cm, MPIP_CM_F_CTRL | MPIP_CM_F_HB | MPIP_CM_F_NEW,
		     false);
	cm.session_id = sid;
	cm.xflags |= MPIP_CM_X_QUIET;
	mpip_ctrl_send(mn, n, p, 0, 0, &cm, NULL);
	mpip_inc(mn, MPIP_STAT_TX_HEARTBEAT);
	mpip_inc(mn, MPIP_STAT_TX_UNKNOWN);
}

/*
 * A probe of @p, with its nonce while its check is not complete (as
 * mpip_rr_probe_due() says); @quiet if it only carries delay reports
 * back (MPIP_CM_X_QUIET).  Caller holds RCU.
 */
static void mpip_probe_send(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_path *p, bool quiet,
			    const struct mpip_cm_ext *ext)
{
	struct mpip_cm cm;

	mpip_cm_fill(mn, &cm, MPIP_CM_F_CTRL | MPIP_CM_F_HB, false);
	if (quiet)
		cm.xflags |= MPIP_CM_X_QUIET;
	mpip_ctrl_send(mn, n, p, 0, 0, &cm, ext);
	mpip_inc(mn, MPIP_STAT_TX_HEARTBEAT);
}

void mpip_probe_path(struct mpip_net *mn, struct mpip_node *n,
		     struct mpip_path *p, bool quiet)
{
	struct mpip_cm_ext ext;

	if (mpip_rr_probe_due(mn, n, p, &ext))
		mpip_probe_send(mn, n, p, quiet, &ext);
}

/*
 * How long a loss probe awaits its answer before it counts as lost:
 * MPIP_LOSS_WAIT_MS, or two heartbeats if longer.  A path whose round
 * trip is longer than a heartbeat (a cellular link's queue, a loaded
 * peer) is slow, and not taken for lossy.
 */
static u32 mpip_loss_wait(struct mpip_net *mn)
{
	return max_t(u32, MPIP_LOSS_WAIT_MS,
		     2 * READ_ONCE(mn->cfg.heartbeat_ms));
}

/*
 * The loss oracle (loss_pct; core/loss.c): a probe of @p, which is up,
 * with the path's nonce, which the peer answers (rr.c calls
 * mpip_loss_answer()); those before it that waited too long for their
 * answer count as lost (mpip_loss_wait()).  Then the verdict: a lossy
 * path carries data only while no path that is not lossy is up (paths.c,
 * mpip_path_rank()).
 */
static void mpip_loss_probe(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_path *p, unsigned int pct)
{
	struct mpip_cm_ext ext = { .len = MPIP_RR_NONCE_LEN };
	u32 now = jiffies_to_msecs(jiffies), wait = mpip_loss_wait(mn);
	bool changed, lossy;

	spin_lock_bh(&p->lock);
	mpip_loss_sent(&p->loss, now, wait);
	changed = mpip_loss_judge(&p->loss, pct);
	lossy = p->loss.lossy;
	spin_unlock_bh(&p->lock);
	WRITE_ONCE(p->lossy, lossy);
	if (changed && lossy)
		mpip_inc(mn, MPIP_STAT_PATH_LOSSY);
	put_unaligned_be64(p->nonce, ext.b);
	mpip_probe_send(mn, n, p, false, &ext);
}

/* The peer answered a probe of @p with its nonce: a loss probe's, maybe. */
void mpip_loss_answer(struct mpip_net *mn, struct mpip_path *p)
{
	u32 now = jiffies_to_msecs(jiffies), wait = mpip_loss_wait(mn);

	spin_lock_bh(&p->lock);
	mpip_loss_answered(&p->loss, now, wait);
	spin_unlock_bh(&p->lock);
}

/*
 * Is a loss probe of @p due?  The caller asks once a heartbeat, and on
 * the odd rebuild of the node's paths: at most one per half heartbeat
 * (a tick a jiffy early must not skip one).
 */
static bool mpip_loss_due(struct mpip_net *mn, struct mpip_path *p)
{
	unsigned long hb = msecs_to_jiffies(READ_ONCE(mn->cfg.heartbeat_ms));
	unsigned long next = READ_ONCE(p->loss_next);

	if (next && time_before(jiffies, next))
		return false;
	WRITE_ONCE(p->loss_next, (jiffies + max(hb / 2, 1UL)) | 1);
	return true;
}

/*
 * Ask node @n, which proved that it holds the pair's keys, for its
 * addresses, and tell it ours: an authenticated query to its control
 * port at @daddr, answered with a confirmation that carries its list.
 * Only to an address the node proved it receives at (mpip_node_proved()):
 * one that shook hands from its own address and sent CMs from another
 * host's would have us send that host a query every MPIP_ADDR_QUERY_GAP
 * for as long as its node lives.  At most once per MPIP_ADDR_QUERY_GAP.
 * Caller holds RCU.
 */
void mpip_addr_query(struct mpip_net *mn, struct mpip_node *n, __be32 saddr,
		     __be32 daddr)
{
	unsigned long last = READ_ONCE(n->aq_stamp);
	struct mpip_cm cm;

	if (!mpip_node_keyed(n) || !READ_ONCE(n->verified) ||
	    !mpip_node_proved(n, daddr))
		return;
	if (last && time_before(jiffies, last + MPIP_ADDR_QUERY_GAP))
		return;
	if (cmpxchg(&n->aq_stamp, last, jiffies | 1) != last)
		return;
	mpip_cm_fill(mn, &cm, MPIP_CM_F_CTRL | MPIP_CM_F_ENABLE, true);
	mpip_ctrl_send(mn, n, NULL, saddr, daddr, &cm, NULL);
	mpip_inc(mn, MPIP_STAT_TX_QUERY);
}

/* A node whose addresses we do not know yet asks again. */
static void mpip_node_addrs_due(struct mpip_net *mn, struct mpip_node *n)
{
	__be32 daddr = READ_ONCE(n->ep[0].addr);

	if (!READ_ONCE(n->naddrs) && READ_ONCE(n->nep))
		mpip_addr_query(mn, n, 0, daddr);
}

/* Do flows wait for @n to be heard again (output.c, mpip_avail_revive())? */
static bool mpip_node_waited(struct mpip_node *n)
{
	return time_before(jiffies, READ_ONCE(n->waited) + MPIP_NODE_IDLE);
}

/*
 * Did anything go to @n, or data come from it, lately?  Or do flows wait
 * for it?
 */
static bool mpip_node_active(struct mpip_node *n)
{
	return time_before(jiffies, READ_ONCE(n->last_tx) + MPIP_NODE_IDLE) ||
	       time_before(jiffies,
			   READ_ONCE(n->last_data_rx) + MPIP_NODE_IDLE) ||
	       mpip_node_waited(n);
}

/* Did data go to or come from @n lately? */
static bool mpip_node_data_active(struct mpip_node *n)
{
	unsigned long t = READ_ONCE(n->last_data_tx);

	if (time_after(READ_ONCE(n->last_data_rx), t))
		t = READ_ONCE(n->last_data_rx);
	return time_before(jiffies, t + MPIP_NODE_IDLE);
}

/* Are all paths of @n probed, those up too (mpip_node_probe())? */
static bool mpip_node_probes_up(struct mpip_node *n)
{
	return mpip_node_waited(n) ||
	       time_before(jiffies, READ_ONCE(n->single_used) + MPIP_NODE_IDLE);
}

/*
 * Is a probe of @p, which is not up, due?  While data flows, at every
 * heartbeat; while the node is idle, at gaps that double up to
 * heartbeat_ms << MPIP_PROBE_IDLE_SHIFT: a path that stays down costs a
 * few probes, not one per heartbeat for as long as the node lives (each
 * probe keeps it alive).  Racing callers may both send one.
 */
static bool mpip_probe_due(struct mpip_net *mn, struct mpip_path *p,
			   bool busy)
{
	unsigned long hb = msecs_to_jiffies(READ_ONCE(mn->cfg.heartbeat_ms));
	u8 shift = READ_ONCE(p->probe_shift);

	if (busy) {
		if (shift)
			WRITE_ONCE(p->probe_shift, 0);
		return true;
	}
	if (shift && time_before(jiffies, READ_ONCE(p->probe_next)))
		return false;
	WRITE_ONCE(p->probe_next, jiffies + (max(hb, 1UL) << shift));
	if (shift < MPIP_PROBE_IDLE_SHIFT)
		WRITE_ONCE(p->probe_shift, shift + 1);
	return true;
}

/*
 * Probe the paths of node @n that are not up (spaced out while @n is
 * idle: mpip_probe_due()).  While a rule of mode single sends to @n, or
 * flows wait for it to be heard again, probe those up too, and while
 * data flows, those on backup links: the flows kept off a path leave it
 * without data, and so without fresh delays to compare and without the
 * timeout that would find it broken before it is needed.  With the loss
 * oracle on, while data flows, every path up gets a loss probe per
 * heartbeat instead (mpip_loss_probe()).  A cold standby (a metered
 * backup while a lower tier works: mpip_path_cold()) gets nothing.
 * Caller holds RCU.
 */
void mpip_node_probe(struct mpip_net *mn, struct mpip_node *n)
{
	bool waited = mpip_node_waited(n);
	bool up_too = mpip_node_probes_up(n);
	bool busy = waited || mpip_node_data_active(n);
	unsigned int pct = READ_ONCE(mn->cfg.loss_pct);
	unsigned int low = MPIP_LINK_TIER_MAX + 1;	/* none is cold */
	struct mpip_path *p;
	unsigned int i;
	int state;

	if (READ_ONCE(mn->nbackup) || READ_ONCE(n->addr_lpol.tiers))
		low = mpip_paths_low_tier(mn, n);
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = rcu_dereference(n->paths[i]);
		if (!p || mpip_path_cold(mn, p, low))
			continue;
		mpip_ftcp_tick(mn, n, p);
		state = READ_ONCE(p->state);
		if (state == MPIP_PATH_PROBING || state == MPIP_PATH_DOWN) {
			if (mpip_probe_due(mn, p, busy))
				mpip_probe_path(mn, n, p, false);
		} else if (state == MPIP_PATH_UP && pct && busy &&
			   mpip_rr_done(p)) {
			if (mpip_loss_due(mn, p))
				mpip_loss_probe(mn, n, p, pct);
		} else if (state == MPIP_PATH_UP &&
			   (up_too || (busy && mpip_path_is_backup(mn, p)))) {
			mpip_probe_path(mn, n, p, false);
		}
	}
}

/*
 * The path for a heartbeat that carries delay reports back to @n: the
 * one @n was heard over last, if it is up and no backup (a packet from
 * @n just came over it: it works, that way at least); else one of those
 * up by weight; else, while none is, one a sample came over (feedback.c).
 * A path up at this end may have broken without a word: a receiver learns
 * it only from its own packets going unanswered.  Reports sent by weight
 * alone went there half the time, and a sender whose only working path
 * then had no report for path_timeout_ms took that path down too, and,
 * with its peer silent after an idle pause, the peer for lost
 * (test_blackout).  Caller holds RCU.
 */
static struct mpip_path *mpip_fb_path(struct mpip_net *mn,
				      struct mpip_node *n)
{
	struct mpip_path *p = mpip_fb_heard_over(mn, n);

	if (p && READ_ONCE(p->state) == MPIP_PATH_UP &&
	    !mpip_path_is_backup(mn, p))
		return p;
	p = mpip_path_pick(mn, n, NULL, false);
	return p ? p : mpip_fb_way_back(n);
}

/*
 * Carry pending delay reports back to node @n if nothing else went to it
 * for @quiet jiffies (mpip_fb_path()).  They want no report themselves,
 * unless their path had none for path_timeout_ms: then they are all that
 * would find it broken (mpip_path_unreported()).  Caller holds RCU.
 */
static void mpip_node_feedback(struct mpip_net *mn, struct mpip_node *n,
			       unsigned long quiet)
{
	struct mpip_path *p;
	unsigned int i;

	if (!time_after(jiffies, READ_ONCE(n->last_tx) + quiet))
		return;
	for (i = 0; i < MPIP_MAX_PATHS && mpip_fb_pending(n); i++) {
		p = mpip_fb_path(mn, n);
		if (!p)
			break;
		mpip_probe_path(mn, n, p, !mpip_path_unreported(mn, p));
	}
}

/*
 * While data flows to or from node @n, probe the paths up that had no
 * report for path_timeout_ms: the receiver of a one-way flow sends
 * nothing but its reports, over the path it heard the sender over last
 * (mpip_fb_path()), and would not find its other paths broken before
 * its own data needed them.  After the reports went (mpip_node_feedback()),
 * so that a probe of a path that may have broken takes none of them
 * along.  Caller holds RCU.
 */
static void mpip_node_probe_unreported(struct mpip_net *mn,
				       struct mpip_node *n)
{
	struct mpip_path *p;
	unsigned int i;

	/* (those probed already: all, or the backups) */
	if (!mpip_node_data_active(n) || mpip_node_probes_up(n))
		return;
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = rcu_dereference(n->paths[i]);
		if (p && READ_ONCE(p->state) == MPIP_PATH_UP &&
		    !mpip_path_is_backup(mn, p) && mpip_path_unreported(mn, p))
			mpip_probe_path(mn, n, p, false);
	}
}

/*
 * Tell node @n our address list, on every path that may work: not those
 * without a route, nor those to an address that never answered a probe,
 * nor a cold standby (mpip_path_cold(): the data goes over a lower tier).
 * The list and its extension are made once; each CM gets its own
 * timestamp (and path ID, mpip_ctrl_send()).
 */
static void mpip_notify_node(struct mpip_net *mn, struct mpip_node *n)
{
	unsigned int i, low = mpip_paths_low_tier(mn, n);
	struct mpip_cm_ext ext;
	struct mpip_cm_lpol l;
	struct mpip_cm list, cm;
	struct mpip_path *p;

	mpip_cm_fill(mn, &list, MPIP_CM_F_CTRL | MPIP_CM_F_IP_CHANGE, true);
	/* their tiers and metered bits: an extension, if any is set */
	mpip_cm_lpol_fill(mn, &list, &l);
	ext.len = mpip_cm_lpol_ext(&l, ext.b);
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = rcu_dereference(n->paths[i]);
		if (!p || READ_ONCE(p->state) == MPIP_PATH_NOROUTE ||
		    mpip_rr_gave_up(p) || mpip_path_cold(mn, p, low))
			continue;
		cm = list;
		cm.timestamp_us = mpip_now_us();
		mpip_ctrl_send(mn, n, p, 0, 0, &cm, ext.len ? &ext : NULL);
		mpip_inc(mn, MPIP_STAT_TX_IP_CHANGE);
	}
}

/*
 * Tell active node @n our address list if it has not heard the current
 * one, in MPIP_ADDR_ROUNDS rounds 1, 2 and 4 s apart: nothing acknowledges
 * IP_CHANGE, and a lost one would leave the node with our old list for as
 * long as the pair lasts.  A node that is not verified yet (it gets no
 * list), or idle when the addresses change, is told when it is verified
 * and active.  The address work and the tick both call this: the
 * cmpxchg()s give each round to one of them.  Caller holds RCU.
 */
static void mpip_node_addrs_tell(struct mpip_net *mn, struct mpip_node *n)
{
	u32 gen = READ_ONCE(mn->addr_digest);
	u32 told = READ_ONCE(n->addr_told);
	unsigned int sends = READ_ONCE(n->addr_sends);

	if (!READ_ONCE(n->verified))
		return;
	if (told != gen) {
		if (cmpxchg(&n->addr_told, told, gen) != told)
			return;
		WRITE_ONCE(n->addr_sends, 1);
		sends = 0;
	} else if (sends >= MPIP_ADDR_ROUNDS ||
		   time_before(jiffies, READ_ONCE(n->addr_due)) ||
		   cmpxchg(&n->addr_sends, sends, sends + 1) != sends) {
		return;
	}
	WRITE_ONCE(n->addr_due, jiffies + (HZ << sends));
	mpip_notify_node(mn, n);
}

static unsigned long mpip_tick_period(const struct mpip_net *mn)
{
	u32 ms = min(READ_ONCE(mn->cfg.weight_interval_ms),
		     READ_ONCE(mn->cfg.heartbeat_ms));

	return max_t(unsigned long, msecs_to_jiffies(ms), 1);
}

/* Queue the tick @period jiffies from now, unless it is queued already. */
static void mpip_tick_queue(struct mpip_net *mn, unsigned long period)
{
	if (queue_delayed_work(system_power_efficient_wq, &mn->tick_work,
			       period))
		WRITE_ONCE(mn->tick_due, (jiffies + period) | 1);
}

/* How many jiffies after it was due the tick runs (0 if not known). */
static unsigned long mpip_tick_late(struct mpip_net *mn)
{
	unsigned long due = READ_ONCE(mn->tick_due);

	WRITE_ONCE(mn->tick_due, 0);
	if (!due || !time_after(jiffies, due))
		return 0;
	return jiffies - due;
}

static void mpip_tick_work(struct work_struct *work)
{
	struct mpip_net *mn = container_of(to_delayed_work(work),
					   struct mpip_net, tick_work);
	unsigned long hb = msecs_to_jiffies(READ_ONCE(mn->cfg.heartbeat_ms));
	unsigned long period = mpip_tick_period(mn);
	unsigned long late = mpip_tick_late(mn);
	struct mpip_node *n;
	unsigned int b;
	bool hb_due;

	hb_due = !time_before(jiffies, mn->hb_stamp + hb);
	if (hb_due)
		mn->hb_stamp = jiffies;

	rcu_read_lock();
	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			mpip_node_sync_due(mn, n);
			mpip_paths_tick(mn, n, late);
			if (!mpip_node_active(n)) {
				/* a probe of an idle node's is answered */
				mpip_node_feedback(mn, n, period);
				continue;
			}
			mpip_node_addrs_tell(mn, n);
			if (hb_due) {
				mpip_node_addrs_due(mn, n);
				mpip_node_probe(mn, n);
			}
			mpip_node_feedback(mn, n, period);
			if (hb_due)
				mpip_node_probe_unreported(mn, n);
		}
		mpip_rcu_breather(b);
	}
	rcu_read_unlock();

	/* Without nodes there is nothing to do: kicked again by a new one. */
	if (READ_ONCE(mn->enabled) && READ_ONCE(mn->nodes.count))
		mpip_tick_queue(mn, period);
}

/* A node was added: make sure the tick runs (see mpip_gc_kick()). */
void mpip_tick_kick(struct mpip_net *mn)
{
	if (!delayed_work_pending(&mn->tick_work))
		mpip_tick_queue(mn, mpip_tick_period(mn));
}

/*
 * Note what our address list is now: a digest of the list mpip_cm_fill()
 * puts in CMs, with the tiers and metered bits IP_CHANGE adds, and one
 * without them (what a node learns from the handshake: node.c); the
 * same if every address is of the main tier and none is metered.  Link
 * events that leave both as they were tell nobody anything.
 */
void mpip_addrs_note(struct mpip_net *mn)
{
	struct mpip_cm_lpol l;
	struct mpip_cm cm;
	u32 plain;

	mpip_cm_fill(mn, &cm, 0, true);
	mpip_cm_lpol_fill(mn, &cm, &l);
	plain = jhash2(cm.addrs, cm.naddrs, cm.naddrs);
	WRITE_ONCE(mn->addr_digest_plain, plain);
	WRITE_ONCE(mn->addr_digest, l.tiers || l.metered ?
		   jhash_3words(l.tiers, l.metered, plain, 1) : plain);
}

static void mpip_addr_work(struct work_struct *work)
{
	struct mpip_net *mn = container_of(work, struct mpip_net, addr_work);
	struct mpip_node *n;
	unsigned int b;

	mpip_addrs_note(mn);
	rcu_read_lock();
	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			mpip_paths_sync(mn, n);
			if (mpip_node_active(n))
				mpip_node_addrs_tell(mn, n);
		}
		mpip_rcu_breather(b);
	}
	rcu_read_unlock();
}

/* Local addresses or links of @net changed. */
void mpip_addrs_changed(struct net *net)
{
	struct mpip_net *mn = mpip_pernet(net);

	if (READ_ONCE(mn->enabled))
		queue_work(system_power_efficient_wq, &mn->addr_work);
}

/* The tick runs only while the namespace has nodes (mpip_tick_kick()). */
void mpip_tick_init(struct mpip_net *mn)
{
	INIT_DELAYED_WORK(&mn->tick_work, mpip_tick_work);
	INIT_WORK(&mn->addr_work, mpip_addr_work);
	mn->hb_stamp = jiffies;
}

void mpip_tick_stop(struct mpip_net *mn)
{
	cancel_delayed_work_sync(&mn->tick_work);
	cancel_work_sync(&mn->addr_work);
}
