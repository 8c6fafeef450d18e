// SPDX-License-Identifier: GPL-2.0
/*
 * mpip: the RCU hash table shared by the per-namespace tables.
 *
 * Readers walk buckets under rcu_read_lock(); insertion and removal take
 * the table lock.  Every entry starts with a struct mpip_tnode, whose
 * stamp (jiffies of last use) drives expiry, and is released once
 * unlinked: by default with kfree_rcu(), else by the table's callback.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "mpip.h"

void mpip_table_init(struct mpip_table *t, struct hlist_head *buckets,
		     unsigned int size, unsigned int max)
{
	unsigned int i;

	spin_lock_init(&t->lock);
	t->count = 0;
	t->max = max;
	t->size = size;
	/* Chosen keys must not fill one bucket (review M2). */
	t->seed = get_random_u32();
	t->buckets = buckets;
	t->release = mpip_table_release_kfree;
	for (i = 0; i < size; i++)
		INIT_HLIST_HEAD(&buckets[i]);
}

/* The default release: free the entry after a grace period. */
void mpip_table_release_kfree(struct mpip_tnode *n)
{
	kfree_rcu(n, rcu);
}

/*
 * May one more entry be added?  Counts a refusal.  Entries that only a
 * stranger's unauthenticated packet asks for (@stranger) get half of the
 * table: a flood of them leaves room for this host's own peers.
 */
bool mpip_table_has_room(struct mpip_net *mn, const struct mpip_table *t,
			 bool stranger)
{
	if (!mpip_table_full(t, stranger))
		return true;
	mpip_inc(mn, MPIP_STAT_TABLE_FULL);
	return false;
}

/*
 * Link @n into bucket @b unless an entry @same as it is there already.
 * Returns the entry now in the table: @n, or the one found, in which case
 * the caller still owns @n.
 */
struct mpip_tnode *mpip_table_insert(struct mpip_table *t,
				     struct mpip_tnode *n, u32 b,
				     mpip_same_t same)
{
	struct mpip_tnode *old;

	spin_lock_bh(&t->lock);
	hlist_for_each_entry(old, &t->buckets[b], hnode) {
		if (same(old, n)) {
			spin_unlock_bh(&t->lock);
			return old;
		}
	}
	hlist_add_head_rcu(&n->hnode, &t->buckets[b]);
	WRITE_ONCE(t->count, t->count + 1);
	spin_unlock_bh(&t->lock);
	return n;
}

/*
 * Remove the entries unused for @ttl jiffies, or all of them.  The lock
 * is taken per bucket, and the walk yields the CPU now and then: a table
 * has up to thousands of buckets.  Sleeps.
 */
void mpip_table_sweep(struct mpip_table *t, unsigned long ttl, bool all)
{
	struct hlist_node *tmp;
	struct mpip_tnode *n;
	unsigned int i;

	might_sleep();
	for (i = 0; i < t->size; i++) {
		if (hlist_empty(&t->buckets[i]))
			continue;
		spin_lock_bh(&t->lock);
		hlist_for_each_entry_safe(n, tmp, &t->buckets[i], hnode) {
			if (!all &&
			    !time_after(jiffies, READ_ONCE(n->stamp) +
					(t->ttl ? t->ttl(n, ttl) : ttl)))
				continue;
			hlist_del_rcu(&n->hnode);
			WRITE_ONCE(t->count, t->count - 1);
			t->release(n);
		}
		spin_unlock_bh(&t->lock);
		if ((i + 1) % 64 == 0)
			cond_resched();
	}
}
