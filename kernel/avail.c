// SPDX-License-Identifier: GPL-2.0
/*
 * mpip availability table (paper Table 2): does the remote (address, port)
 * run MPIP?  An RCU hash table (table.c) keyed by address and port.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "mpip.h"

static u32 mpip_avail_hash(__be32 addr, __be16 port)
{
	return jhash_2words((__force u32)addr, (__force u32)port, 0) &
	       ((1 << MPIP_AVAIL_BITS) - 1);
}

static bool mpip_avail_same(const struct mpip_tnode *a,
			    const struct mpip_tnode *b)
{
	const struct mpip_avail *x = container_of(a, struct mpip_avail, tn);
	const struct mpip_avail *y = container_of(b, struct mpip_avail, tn);

	return x->addr == y->addr && x->port == y->port;
}

/* Caller holds rcu_read_lock(). */
struct mpip_avail *mpip_avail_lookup(struct mpip_net *mn, __be32 addr,
				     __be16 port)
{
	u32 h = mpip_avail_hash(addr, port);
	struct mpip_avail *e;

	hlist_for_each_entry_rcu(e, &mn->avail.buckets[h], tn.hnode) {
		if (e->addr == addr && e->port == port)
			return e;
	}
	return NULL;
}

/*
 * Find or create the entry for (@addr, @port).  New entries start in
 * the probing state.  Caller holds rcu_read_lock(); returns NULL when the
 * table is full or memory is short.
 */
struct mpip_avail *mpip_avail_get(struct mpip_net *mn, __be32 addr,
				  __be16 port, u8 proto)
{
	struct mpip_avail *e = mpip_avail_lookup(mn, addr, port);
	struct mpip_tnode *in;

	BUILD_BUG_ON(offsetof(struct mpip_avail, tn));
	if (e)
		return e;
	if (!mpip_table_has_room(mn, &mn->avail))
		return NULL;
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
	e->tn.stamp = jiffies;

	in = mpip_table_insert(&mn->avail, &e->tn, mpip_avail_hash(addr, port),
			       mpip_avail_same);
	if (in != &e->tn) {
		kfree(e);
		return container_of(in, struct mpip_avail, tn);
	}
	return e;
}
