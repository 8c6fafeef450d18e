// SPDX-License-Identifier: GPL-2.0
/*
 * mpip availability table (paper Table 2): does the remote (address, port)
 * run MPIP?  An RCU hash table (table.c) keyed by address and port.
 */
#include <linux/slab.h>

#include "mpip.h"

static bool mpip_avail_same(const struct mpip_tnode *a,
			    const struct mpip_tnode *b)
{
	const struct mpip_avail *x = container_of(a, struct mpip_avail, tn);
	const struct mpip_avail *y = container_of(b, struct mpip_avail, tn);

	return x->addr == y->addr && x->port == y->port;
}

/*
 * Table callback: an entry that only strangers' queries named goes as
 * soon as an unverified node does (a query flood from forged addresses
 * must not hold the table for avail_timeout_ms).
 */
unsigned long mpip_avail_ttl(const struct mpip_tnode *tn, unsigned long ttl)
{
	const struct mpip_avail *e = container_of(tn, struct mpip_avail, tn);

	if (!test_bit(MPIP_AVF_STRANGER, &e->flags))
		return ttl;
	return min_t(unsigned long, ttl, MPIP_NODE_UNVERIFIED_TTL);
}

/* Table callback: only strangers' queries named the entry so far. */
bool mpip_avail_evictable(const struct mpip_tnode *tn)
{
	const struct mpip_avail *e = container_of(tn, struct mpip_avail, tn);

	return test_bit(MPIP_AVF_STRANGER, &e->flags);
}

/*
 * Create the entry for (@addr, @port), or return the one another CPU
 * just added.  New entries start in the probing state; one that only an
 * unauthenticated CM asks for (@stranger) is marked so until an
 * authenticated CM names it (mpip_avail_ttl()).  Caller holds
 * rcu_read_lock(); returns NULL when the table is full or memory is short.
 */
struct mpip_avail *mpip_avail_create(struct mpip_net *mn, __be32 addr,
				     __be16 port, u8 proto, bool stranger)
{
	struct mpip_avail *e;
	struct mpip_tnode *in;

	BUILD_BUG_ON(offsetof(struct mpip_avail, tn));
	if (!mpip_table_has_room(mn, &mn->avail, stranger))
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
	if (stranger)
		__set_bit(MPIP_AVF_STRANGER, &e->flags);
	e->tn.stamp = jiffies;

	in = mpip_table_insert(&mn->avail, &e->tn, mpip_avail_hash(&mn->avail, addr, port),
			       mpip_avail_same);
	if (in != &e->tn) {
		kfree(e);
		return container_of(in, struct mpip_avail, tn);
	}
	mpip_gc_kick(mn);
	return e;
}
