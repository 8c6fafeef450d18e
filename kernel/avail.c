// SPDX-License-Identifier: GPL-2.0
/*
 * mpip availability table (paper Table 2): does the remote (address, port)
 * run MPIP?  Lookups are RCU on the packet path; insertion and removal
 * take the table lock; entries are freed after a grace period.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "mpip.h"

static u32 mpip_avail_hash(__be32 addr, __be16 port)
{
	return jhash_2words((__force u32)addr, (__force u32)port, 0) &
	       ((1 << MPIP_AVAIL_BITS) - 1);
}

void mpip_avail_init(struct mpip_avail_table *t)
{
	unsigned int i;

	spin_lock_init(&t->lock);
	t->count = 0;
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++)
		INIT_HLIST_HEAD(&t->buckets[i]);
}

static struct mpip_avail *__mpip_avail_find(struct mpip_avail_table *t,
					    u32 h, __be32 addr, __be16 port)
{
	struct mpip_avail *e;

	hlist_for_each_entry_rcu(e, &t->buckets[h], hnode,
				 lockdep_is_held(&t->lock)) {
		if (e->addr == addr && e->port == port)
			return e;
	}
	return NULL;
}

/* Caller holds rcu_read_lock(). */
struct mpip_avail *mpip_avail_lookup(struct mpip_net *mn, __be32 addr,
				     __be16 port)
{
	u32 h = mpip_avail_hash(addr, port);

	return __mpip_avail_find(&mn->avail, h, addr, port);
}

/*
 * Find or create the entry for (@addr, @port).  New entries start in
 * the probing state.  Caller holds rcu_read_lock(); returns NULL when the
 * table is full or memory is short.
 */
struct mpip_avail *mpip_avail_get(struct mpip_net *mn, __be32 addr,
				  __be16 port, u8 proto)
{
	struct mpip_avail_table *t = &mn->avail;
	u32 h = mpip_avail_hash(addr, port);
	struct mpip_avail *e, *found;

	e = __mpip_avail_find(t, h, addr, port);
	if (e)
		return e;

	if (READ_ONCE(t->count) >= MPIP_AVAIL_MAX) {
		mpip_inc(mn, MPIP_STAT_TABLE_FULL);
		return NULL;
	}

	e = kzalloc(sizeof(*e), GFP_ATOMIC);
	if (!e) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NULL;
	}
	e->addr = addr;
	e->port = port;
	e->proto = proto;
	e->state = MPIP_AVAIL_PROBING;
	atomic_set(&e->queries, 0);
	e->last_used = jiffies;
	e->last_rx = jiffies;

	spin_lock_bh(&t->lock);
	found = __mpip_avail_find(t, h, addr, port);
	if (found) {
		spin_unlock_bh(&t->lock);
		kfree(e);
		return found;
	}
	hlist_add_head_rcu(&e->hnode, &t->buckets[h]);
	WRITE_ONCE(t->count, t->count + 1);
	spin_unlock_bh(&t->lock);
	return e;
}

static void mpip_avail_unlink(struct mpip_avail_table *t,
			      struct mpip_avail *e)
{
	hlist_del_rcu(&e->hnode);
	WRITE_ONCE(t->count, t->count - 1);
	kfree_rcu(e, rcu);
}

static void mpip_avail_sweep(struct mpip_net *mn, bool all)
{
	unsigned long ttl = mpip_ms_to_jiffies(READ_ONCE(mn->cfg.avail_timeout_ms));
	struct mpip_avail_table *t = &mn->avail;
	struct hlist_node *tmp;
	struct mpip_avail *e;
	unsigned int i;

	spin_lock_bh(&t->lock);
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++) {
		hlist_for_each_entry_safe(e, tmp, &t->buckets[i], hnode) {
			if (all ||
			    time_after(jiffies, READ_ONCE(e->last_used) + ttl))
				mpip_avail_unlink(t, e);
		}
	}
	spin_unlock_bh(&t->lock);
}

void mpip_avail_flush(struct mpip_net *mn)
{
	mpip_avail_sweep(mn, true);
}

void mpip_avail_gc(struct mpip_net *mn)
{
	mpip_avail_sweep(mn, false);
}
