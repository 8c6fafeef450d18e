// SPDX-License-Identifier: GPL-2.0
/*
 * mpip node table (paper Table 3): remote node ID -> the (address, port)
 * endpoints its MPIP packets came from and the addresses it advertised.
 * An RCU hash table (table.c) keyed by node ID; each entry's arrays are
 * guarded by the entry's lock.
 */
#include <linux/slab.h>

#include "mpip.h"

static bool mpip_node_same(const struct mpip_tnode *a,
			   const struct mpip_tnode *b)
{
	return container_of(a, struct mpip_node, tn)->id ==
	       container_of(b, struct mpip_node, tn)->id;
}

static struct mpip_node *mpip_node_get(struct mpip_net *mn, u32 id)
{
	struct mpip_node *n = mpip_node_lookup(mn, id);
	struct mpip_tnode *in;

	BUILD_BUG_ON(offsetof(struct mpip_node, tn));
	if (n)
		return n;
	if (!mpip_table_has_room(mn, &mn->nodes))
		return NULL;
	n = kzalloc(sizeof(*n), GFP_ATOMIC);
	if (!n) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NULL;
	}
	n->id = id;
	spin_lock_init(&n->lock);
	n->tn.stamp = jiffies;
	n->w_stamp = jiffies;
	n->ep_stamp = jiffies;

	in = mpip_table_insert(&mn->nodes, &n->tn, mpip_node_hash(&mn->nodes, id),
			       mpip_node_same);
	if (in != &n->tn) {
		kfree(n);
		return container_of(in, struct mpip_node, tn);
	}
	mpip_gc_kick(mn);
	mpip_tick_kick(mn);
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

/* Store the advertised address list; true if it changed. */
static bool mpip_node_set_addrs(struct mpip_node *n, const struct mpip_cm *cm)
{
	size_t len = cm->naddrs * sizeof(cm->addrs[0]);
	bool changed;

	spin_lock_bh(&n->lock);
	changed = n->naddrs != cm->naddrs || memcmp(n->addrs, cm->addrs, len);
	if (changed) {
		memcpy(n->addrs, cm->addrs, len);
		n->naddrs = cm->naddrs;
	}
	spin_unlock_bh(&n->lock);
	return changed;
}

/* Table release callback: free the node and its paths after RCU. */
void mpip_node_release(struct mpip_tnode *tn)
{
	struct mpip_node *n = container_of(tn, struct mpip_node, tn);

	mpip_paths_release(n);
	kfree_rcu(n, tn.rcu);
}

/*
 * Record that a valid CM from node @id arrived from (@addr, @port), and
 * the address list it carried, if any: a new list rebuilds the node's
 * paths, and paths it adds are probed at once rather than at the next
 * heartbeat, so that a new peer's paths come up within a round trip.
 * Caller holds rcu_read_lock().  Returns the node, or NULL if it is not
 * in the table (table full, no memory).
 */
struct mpip_node *mpip_node_learn(struct mpip_net *mn, u32 id, __be32 addr,
				  __be16 port, const struct mpip_cm *cm)
{
	struct mpip_node *n = mpip_node_get(mn, id);

	if (!n)
		return NULL;
	mpip_touch(&n->tn.stamp);
	if (!mpip_node_has_ep(n, addr, port))
		mpip_node_add_ep(n, addr, port);
	if (cm->naddrs && mpip_node_set_addrs(n, cm) && mpip_paths_sync(mn, n))
		mpip_node_probe(mn, n);
	return n;
}
