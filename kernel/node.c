// SPDX-License-Identifier: GPL-2.0
/*
 * mpip node table (paper Table 3): one entry per peer pair of keys
 * (keys.c), with the (address, port) endpoints its authenticated CMs came
 * from and the addresses it advertised.  An RCU hash table (table.c)
 * keyed by our token of the pair; each entry's arrays are guarded by the
 * entry's lock.
 */
#include <linux/slab.h>

#include "mpip.h"

static bool mpip_node_same(const struct mpip_tnode *a,
			   const struct mpip_tnode *b)
{
	return container_of(a, struct mpip_node, tn)->id ==
	       container_of(b, struct mpip_node, tn)->id;
}

/*
 * Make the node of our key @lkey, whose handshake goes to or came from
 * @addr, with the pair's keys @k if known (the node takes them over), or
 * return the one another CPU just added with the same ID.  A stranger's
 * query (@stranger) may fill only half of the table, and its node may
 * give way to a new one there (table.c).  Caller holds rcu_read_lock();
 * returns NULL when the table is full or memory is short.
 */
struct mpip_node *mpip_node_create(struct mpip_net *mn, u64 lkey,
				   __be32 addr, struct mpip_keys *k,
				   bool stranger)
{
	u32 id = mpip_auth_token(lkey);
	struct mpip_tnode *in;
	struct mpip_node *n;

	BUILD_BUG_ON(offsetof(struct mpip_node, tn));
	if (!id || !mpip_table_has_room(mn, &mn->nodes, stranger))
		goto err;
	n = kzalloc(sizeof(*n), GFP_ATOMIC);
	if (!n) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		goto err;
	}
	n->id = id;
	n->lkey = lkey;
	n->stranger = stranger;
	n->hs_addr = addr;
	RCU_INIT_POINTER(n->keys, k);
	/* Above every counter a former node of the same pair used. */
	atomic64_set(&n->tx_ctr, ktime_get_boottime_ns());
	spin_lock_init(&n->lock);
	mpip_rr_node_init(n);
	n->tn.stamp = jiffies;
	n->asked = n->tn.stamp;
	n->w_stamp = jiffies;
	n->ep_stamp = jiffies;
	n->sync_stamp = jiffies - MPIP_NODE_SYNC_GAP;
	/* the handshake's address exchange carries the current list */
	n->addr_told = READ_ONCE(mn->addr_digest_plain);
	n->addr_sends = MPIP_ADDR_ROUNDS;

	in = mpip_table_insert(&mn->nodes, &n->tn, mpip_node_hash(&mn->nodes, id),
			       mpip_node_same);
	if (in != &n->tn) {
		kfree(n);
		kfree(k);
		return container_of(in, struct mpip_node, tn);
	}
	mpip_gc_kick(mn);
	mpip_tick_kick(mn);
	return n;
err:
	kfree(k);
	return NULL;
}

/*
 * Has node @n sent no authenticated CM for peer_timeout_ms?  A peer that
 * restarted, or was disabled, lost the pair's keys and cannot tell.
 */
bool mpip_node_silent(const struct mpip_net *mn, const struct mpip_node *n)
{
	return !time_before(jiffies, READ_ONCE(n->tn.stamp) +
				     READ_ONCE(mn->peer_timeout_j));
}

/*
 * Is CM @cm to @n a question that @n owes an answer to, one that a peer
 * that kept the pair's keys answers (mpip_node_unanswered())?  All CMs
 * want an answer but heartbeats that only carry reports; and those on a
 * path that is not up may get none from a live peer: the probes of a
 * path whose link broke.  A stalled flow (TCP backing off) sends nothing
 * else for seconds, and its peer, with nothing to say, was taken for
 * lost while another path to it was up and worked (test_blackout).
 * Caller holds RCU.
 */
bool mpip_node_asks(struct mpip_node *n, const struct mpip_cm *cm)
{
	struct mpip_path *p;

	if (cm->xflags & MPIP_CM_X_QUIET)
		return false;
	if (!cm->path_id || cm->path_id > MPIP_MAX_PATHS)
		return true;
	p = rcu_dereference(n->paths[cm->path_id - 1]);
	return !p || READ_ONCE(p->state) == MPIP_PATH_UP;
}

/*
 * A CM that wants an answer (a delay report, a confirmation) goes to @n.
 * If @n answered everything asked before, this is the oldest question it
 * owes.  (One write per answer heard, not one per packet.)
 */
void mpip_node_asked(struct mpip_node *n)
{
	unsigned long asked = READ_ONCE(n->asked), now = jiffies;

	if (asked != now && !time_after(asked, READ_ONCE(n->tn.stamp)))
		WRITE_ONCE(n->asked, now);
}

/*
 * Has @n left a question unanswered for peer_timeout_ms?  Silence alone
 * says nothing about a peer we asked nothing: an idle pair sends nothing.
 */
bool mpip_node_unanswered(const struct mpip_net *mn,
			  const struct mpip_node *n)
{
	unsigned long asked = READ_ONCE(n->asked);

	return time_after(asked, READ_ONCE(n->tn.stamp)) &&
	       !time_before(jiffies, asked + READ_ONCE(mn->peer_timeout_j));
}

/*
 * The node a query to @e's (address, port) goes to: @e's own while it is
 * not silent; else the one the address's entry of port 0 (which no flow
 * has) names, if that one is not: the node of an earlier query to the
 * address, or of the last authenticated CM from it (a peer that
 * restarted and shook hands anew, whose other flows moved there); else
 * @e's own all the same (the query carries our key: a peer that lost the
 * pair's keys answers it with a new one); else the one of port 0; else a
 * new one with a fresh key of ours.  So all flows to one address share
 * one pair of keys.  Caller holds RCU.
 */
struct mpip_node *mpip_node_for_query(struct mpip_net *mn,
				      struct mpip_avail *e)
{
	struct mpip_node *n, *m;
	struct mpip_avail *a;
	u64 key;

	n = mpip_node_lookup(mn, READ_ONCE(e->node_id));
	if (n && !mpip_node_silent(mn, n))
		return n;
	a = mpip_avail_get(mn, e->addr, 0, 0, false);
	if (!a)
		return n;
	mpip_touch(&a->tn.stamp);
	m = mpip_node_lookup(mn, READ_ONCE(a->node_id));
	if (!n || (m && m != n && !mpip_node_silent(mn, m)))
		n = m;
	if (!n) {
		if (mpip_key_new(mn, &key))
			return NULL;
		n = mpip_node_create(mn, key, e->addr, NULL, false);
		if (!n)
			return NULL;
		WRITE_ONCE(a->node_id, n->id);
	}
	if (READ_ONCE(e->node_id) != n->id) {
		/* only the node it was lost from may revive it (output.c) */
		clear_bit(MPIP_AVF_LOST, &e->flags);
		WRITE_ONCE(e->node_id, n->id);
	}
	return n;
}

static bool mpip_node_has_ep(const struct mpip_node *n, __be32 addr,
			     __be16 port)
{
	unsigned int i, nep = READ_ONCE(n->nep);

	for (i = 0; i < nep && i < MPIP_NODE_MAX_EP; i++) {
		if (READ_ONCE(n->ep[i].addr) == addr &&
		    READ_ONCE(n->ep[i].port) == port)
			return true;
	}
	return false;
}

/*
 * Record endpoint (@addr, @port) of node @n.  Once the list is full, a
 * new endpoint replaces the oldest at most every MPIP_NODE_EP_REPLACE:
 * with more flows from the node than the list holds, nearly every packet
 * comes from an endpoint not in it, and replacing one each time would
 * take the node's lock for every packet, on every CPU its flows arrive
 * on.
 */
static void mpip_node_add_ep(struct mpip_node *n, __be32 addr, __be16 port)
{
	unsigned int slot;

	if (READ_ONCE(n->nep) >= MPIP_NODE_MAX_EP &&
	    time_before(jiffies, READ_ONCE(n->ep_stamp) + MPIP_NODE_EP_REPLACE))
		return;
	spin_lock_bh(&n->lock);
	if (!mpip_node_has_ep(n, addr, port)) {
		if (n->nep < MPIP_NODE_MAX_EP) {
			slot = n->nep;
			WRITE_ONCE(n->nep, n->nep + 1);
		} else {
			slot = n->nep_next;
			n->nep_next = (slot + 1) % MPIP_NODE_MAX_EP;
			WRITE_ONCE(n->ep_stamp, jiffies);
		}
		WRITE_ONCE(n->ep[slot].addr, addr);
		WRITE_ONCE(n->ep[slot].port, port);
	}
	spin_unlock_bh(&n->lock);
}

/*
 * Store the advertised address list and their tiers and metered bits (an
 * IP_CHANGE says: core/cm.c mpip_cm2_lpol(); a list from another CM
 * keeps the policy it had if it did not change, else has none); true if
 * either changed.
 */
static bool mpip_node_set_addrs(struct mpip_node *n, const struct mpip_cm2 *c2)
{
	const struct mpip_cm *cm = &c2->cm;
	size_t len = cm->naddrs * sizeof(cm->addrs[0]);
	struct mpip_cm_lpol l = {};
	bool says, changed;

	says = mpip_cm2_lpol(c2, &l);
	spin_lock_bh(&n->lock);
	changed = n->naddrs != cm->naddrs || memcmp(n->addrs, cm->addrs, len);
	if (changed) {
		memcpy(n->addrs, cm->addrs, len);
		n->naddrs = cm->naddrs;
	}
	if (!says && !changed)
		l = n->addr_lpol;
	if (l.tiers != n->addr_lpol.tiers ||
	    l.metered != n->addr_lpol.metered) {
		WRITE_ONCE(n->addr_lpol.tiers, l.tiers);
		WRITE_ONCE(n->addr_lpol.metered, l.metered);
		changed = true;
	}
	spin_unlock_bh(&n->lock);
	return changed;
}

/* Table callback: an unverified node goes sooner than the others. */
unsigned long mpip_node_ttl(const struct mpip_tnode *tn, unsigned long ttl)
{
	const struct mpip_node *n = container_of(tn, struct mpip_node, tn);

	if (READ_ONCE(n->verified))
		return ttl;
	return min_t(unsigned long, ttl, MPIP_NODE_UNVERIFIED_TTL);
}

/*
 * Table callback: a node made for a stranger's query that has not proved
 * since that the stranger holds the pair's keys.  (One this host made for
 * its own query is not: its flows wait for the answer.)
 */
bool mpip_node_evictable(const struct mpip_tnode *tn)
{
	const struct mpip_node *n = container_of(tn, struct mpip_node, tn);

	return n->stranger && !READ_ONCE(n->verified);
}

/* Table release callback: free the node and its paths after RCU. */
void mpip_node_release(struct mpip_tnode *tn)
{
	struct mpip_node *n = container_of(tn, struct mpip_node, tn);
	struct mpip_keys *k;

	mpip_paths_release(n);
	/* Dead (mpip_paths_release()): nobody installs keys any more. */
	k = rcu_dereference_protected(n->keys, READ_ONCE(n->dead));
	if (k)
		kfree_rcu(k, rcu);
	kfree_rcu(n, tn.rcu);
}

/*
 * Rebuild @n's paths for its new address list, and probe those it adds
 * at once, rather than at the next heartbeat, so that a new peer's paths
 * come up within a round trip.  A rebuild looks up a route for every
 * pair of addresses; a peer that changes its list more often than
 * MPIP_NODE_SYNC_GAP (only the peer can) gets the later ones done by the
 * tick (mpip_node_sync_due()), one per gap.  Caller holds RCU.
 */
static void mpip_node_sync(struct mpip_net *mn, struct mpip_node *n)
{
	unsigned long at = READ_ONCE(n->sync_stamp);

	if (time_before(jiffies, at + MPIP_NODE_SYNC_GAP) ||
	    cmpxchg(&n->sync_stamp, at, jiffies) != at) {
		WRITE_ONCE(n->sync_due, true);
		return;
	}
	if (mpip_paths_sync(mn, n))
		mpip_node_probe(mn, n);
}

/* From the tick: a rebuild held back by the gap, now that it is over. */
void mpip_node_sync_due(struct mpip_net *mn, struct mpip_node *n)
{
	if (!READ_ONCE(n->sync_due) ||
	    time_before(jiffies, READ_ONCE(n->sync_stamp) + MPIP_NODE_SYNC_GAP))
		return;
	WRITE_ONCE(n->sync_due, false);
	mpip_node_sync(mn, n);
}

/*
 * Record that an authenticated CM from node @n arrived from (@addr,
 * @port), and the address list it carried, if any: a new list rebuilds
 * the node's paths (mpip_node_sync()).  Caller holds rcu_read_lock().
 */
void mpip_node_learn(struct mpip_net *mn, struct mpip_node *n, __be32 addr,
		     __be16 port, const struct mpip_cm2 *c2)
{
	const struct mpip_cm *cm = &c2->cm;

	mpip_touch(&n->tn.stamp);
	if (!READ_ONCE(n->verified) && !xchg(&n->verified, true))
		mpip_event_peer(mn, n, MPIP_EVENT_PEER_FOUND);
	if (!mpip_node_has_ep(n, addr, port))
		mpip_node_add_ep(n, addr, port);
	if (cm->naddrs && mpip_node_set_addrs(n, c2))
		mpip_node_sync(mn, n);
}
