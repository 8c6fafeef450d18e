// SPDX-License-Identifier: GPL-2.0
/*
 * mpip node table (paper Table 3): remote node ID -> the (address, port)
 * endpoints its MPIP packets came from and the addresses it advertised.
 * Lookups are RCU; each entry's arrays are guarded by the entry's lock.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "mpip.h"

static u32 mpip_node_hash(u32 id)
{
	return jhash_1word(id, 0) & ((1 << MPIP_NODE_BITS) - 1);
}

void mpip_node_init(struct mpip_node_table *t)
{
	unsigned int i;

	spin_lock_init(&t->lock);
	t->count = 0;
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++)
		INIT_HLIST_HEAD(&t->buckets[i]);
}

static struct mpip_node *__mpip_node_find(struct mpip_node_table *t, u32 h,
					  u32 id)
{
	struct mpip_node *n;

	hlist_for_each_entry_rcu(n, &t->buckets[h], hnode,
				 lockdep_is_held(&t->lock)) {
		if (n->id == id)
			return n;
	}
	return NULL;
}

static struct mpip_node *mpip_node_get(struct mpip_net *mn, u32 id)
{
	struct mpip_node_table *t = &mn->nodes;
	u32 h = mpip_node_hash(id);
	struct mpip_node *n, *found;

	n = __mpip_node_find(t, h, id);
	if (n)
		return n;

	if (READ_ONCE(t->count) >= MPIP_NODE_MAX) {
		mpip_inc(mn, MPIP_STAT_TABLE_FULL);
		return NULL;
	}
	n = kzalloc(sizeof(*n), GFP_ATOMIC);
	if (!n) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NULL;
	}
	n->id = id;
	spin_lock_init(&n->lock);
	n->last_seen = jiffies;

	spin_lock_bh(&t->lock);
	found = __mpip_node_find(t, h, id);
	if (found) {
		spin_unlock_bh(&t->lock);
		kfree(n);
		return found;
	}
	hlist_add_head_rcu(&n->hnode, &t->buckets[h]);
	WRITE_ONCE(t->count, t->count + 1);
	spin_unlock_bh(&t->lock);
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

static void mpip_node_add_ep(struct mpip_node *n, __be32 addr, __be16 port)
{
	unsigned int slot;

	spin_lock_bh(&n->lock);
	if (!mpip_node_has_ep(n, addr, port)) {
		if (n->nep < MPIP_NODE_MAX_EP) {
			slot = n->nep;
			WRITE_ONCE(n->nep, n->nep + 1);
		} else {
			slot = n->nep_next;
			n->nep_next = (slot + 1) % MPIP_NODE_MAX_EP;
		}
		WRITE_ONCE(n->ep[slot].addr, addr);
		WRITE_ONCE(n->ep[slot].port, port);
	}
	spin_unlock_bh(&n->lock);
}

static void mpip_node_set_addrs(struct mpip_node *n, const struct mpip_cm *cm)
{
	spin_lock_bh(&n->lock);
	memcpy(n->addrs, cm->addrs, cm->naddrs * sizeof(cm->addrs[0]));
	n->naddrs = cm->naddrs;
	spin_unlock_bh(&n->lock);
}

/*
 * Record that a valid CM from node @id arrived from (@addr, @port), and
 * the address list it carried, if any.  Caller holds rcu_read_lock().
 */
void mpip_node_learn(struct mpip_net *mn, u32 id, __be32 addr, __be16 port,
		     const struct mpip_cm *cm)
{
	struct mpip_node *n = mpip_node_get(mn, id);

	if (!n)
		return;
	mpip_touch(&n->last_seen);
	if (!mpip_node_has_ep(n, addr, port))
		mpip_node_add_ep(n, addr, port);
	if (cm->naddrs)
		mpip_node_set_addrs(n, cm);
}

static void mpip_node_sweep(struct mpip_net *mn, bool all)
{
	unsigned long ttl = mpip_ms_to_jiffies(READ_ONCE(mn->cfg.node_timeout_ms));
	struct mpip_node_table *t = &mn->nodes;
	struct hlist_node *tmp;
	struct mpip_node *n;
	unsigned int i;

	spin_lock_bh(&t->lock);
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++) {
		hlist_for_each_entry_safe(n, tmp, &t->buckets[i], hnode) {
			if (!all &&
			    !time_after(jiffies, READ_ONCE(n->last_seen) + ttl))
				continue;
			hlist_del_rcu(&n->hnode);
			WRITE_ONCE(t->count, t->count - 1);
			kfree_rcu(n, rcu);
		}
	}
	spin_unlock_bh(&t->lock);
}

void mpip_node_flush(struct mpip_net *mn)
{
	mpip_node_sweep(mn, true);
}

void mpip_node_gc(struct mpip_net *mn)
{
	mpip_node_sweep(mn, false);
}
