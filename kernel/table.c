// SPDX-License-Identifier: GPL-2.0
/*
 * mpip: the RCU hash table shared by the per-namespace tables.
 *
 * Readers walk buckets under rcu_read_lock(); insertion and removal take
 * the table lock.  Every entry starts with a struct mpip_tnode, whose
 * stamp (jiffies of last use) drives expiry and eviction, and is released
 * once unlinked: by default with kfree_rcu(), else by the table's
 * callback.
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
	t->cursor = 0;
	t->chain_max = 0;
	t->chain_new = 0;
	t->evictable = NULL;
	t->ttl = NULL;
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

/* Unlink entry @n of @t and hand it to the release.  Caller holds the lock. */
static void mpip_table_unlink(struct mpip_table *t, struct mpip_tnode *n)
{
	hlist_del_rcu(&n->hnode);
	WRITE_ONCE(t->count, t->count - 1);
	t->release(n);
}

/*
 * Make room in full table @t: unlink the least recently used of the
 * strangers' entries (@t->evictable) among the first MPIP_EVICT_SAMPLE
 * found in the next MPIP_EVICT_BUCKETS buckets from a cursor that moves
 * on at each call.  An approximation of LRU at a bounded cost per call,
 * for the call may come from a stranger's packet.  Returns whether an
 * entry went.
 */
static bool mpip_table_evict(struct mpip_table *t)
{
	struct mpip_tnode *n, *old = NULL;
	unsigned int i, seen = 0, walked = 0;

	spin_lock_bh(&t->lock);
	for (i = 0; i < MPIP_EVICT_BUCKETS; i++) {
		t->cursor = (t->cursor + 1) & (t->size - 1);
		hlist_for_each_entry(n, &t->buckets[t->cursor], hnode) {
			if (++walked > MPIP_EVICT_WALK)
				goto out;
			if (!t->evictable(n))
				continue;
			if (!old || time_before(READ_ONCE(n->stamp),
						READ_ONCE(old->stamp)))
				old = n;
			if (++seen == MPIP_EVICT_SAMPLE)
				goto out;
		}
	}
out:
	if (old)
		mpip_table_unlink(t, old);
	spin_unlock_bh(&t->lock);
	return old;
}

/*
 * May one more entry be added?  Entries that only a stranger's
 * unauthenticated packet asks for (@stranger) get half of the table: a
 * flood of them leaves room for this host's own peers.  At its limit, a
 * new entry takes the place of a stranger's that was not used for the
 * longest time (if the table says which are: @t->evictable), so that a
 * flood that keeps the strangers' half full does not keep a new peer
 * out: its entry stays until the flood made as many new ones as there
 * are in that half, by when its handshake is long done.  Counts what it
 * evicts and what it refuses.
 */
bool mpip_table_has_room(struct mpip_net *mn, struct mpip_table *t,
			 bool stranger)
{
	if (!mpip_table_full(t, stranger))
		return true;
	if (t->evictable && mpip_table_evict(t)) {
		mpip_inc(mn, MPIP_STAT_TABLE_EVICT);
		return true;
	}
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
	unsigned int len = 1;

	spin_lock_bh(&t->lock);
	hlist_for_each_entry(old, &t->buckets[b], hnode) {
		if (same(old, n)) {
			spin_unlock_bh(&t->lock);
			return old;
		}
		len++;
	}
	hlist_add_head_rcu(&n->hnode, &t->buckets[b]);
	WRITE_ONCE(t->count, t->count + 1);
	t->chain_new = max(t->chain_new, len);
	if (len > t->chain_max)
		WRITE_ONCE(t->chain_max, len);
	spin_unlock_bh(&t->lock);
	return n;
}

/*
 * Remove the entries unused for @ttl jiffies, or all of them.  The lock
 * is taken per bucket, and the walk yields the CPU now and then: a table
 * has up to thousands of buckets.  On the way, the walk measures the
 * chains that stay; a chain that grew behind it counts too.  Sleeps.
 */
void mpip_table_sweep(struct mpip_table *t, unsigned long ttl, bool all)
{
	unsigned int i, len, longest = 0;
	struct hlist_node *tmp;
	struct mpip_tnode *n;

	might_sleep();
	spin_lock_bh(&t->lock);
	t->chain_new = 0;
	spin_unlock_bh(&t->lock);
	for (i = 0; i < t->size; i++) {
		if (hlist_empty(&t->buckets[i]))
			continue;
		len = 0;
		spin_lock_bh(&t->lock);
		hlist_for_each_entry_safe(n, tmp, &t->buckets[i], hnode) {
			if (!all &&
			    !time_after(jiffies, READ_ONCE(n->stamp) +
					(t->ttl ? t->ttl(n, ttl) : ttl))) {
				len++;
				continue;
			}
			mpip_table_unlink(t, n);
		}
		spin_unlock_bh(&t->lock);
		longest = max(longest, len);
		if ((i + 1) % 64 == 0)
			cond_resched();
	}
	spin_lock_bh(&t->lock);
	WRITE_ONCE(t->chain_max, max(longest, t->chain_new));
	spin_unlock_bh(&t->lock);
}
