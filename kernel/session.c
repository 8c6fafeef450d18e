// SPDX-License-Identifier: GPL-2.0
/*
 * mpip session table (paper Table 4): one entry per TCP or UDP flow with a
 * remote MPIP node, holding the flow's original addresses and ports so
 * that packets sent over other paths can be restored on receipt.
 *
 * Both ends use the same session ID.  The node that sends the first data
 * trailer of a flow picks it; to keep the two nodes' choices apart, the
 * holder of the pair's lower handshake key picks odd IDs and the other
 * even ones (mpip_sid_parity(), keys.c).  If both ends pick an ID for the
 * same flow at once, the odd one wins.
 *
 * Entries sit in two resizable RCU hash tables (rhashtable), by 5-tuple
 * and by (node ID, session ID), so that a lookup stays one or two entries
 * long however many flows there are, and the tables take little memory
 * in a namespace with few.  Readers use RCU; insertion, re-keying and
 * removal take the session lock, which keeps the two tables in step.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "mpip.h"

/*
 * Key comparisons: field by field, where the default would call the
 * out-of-line, byte-wise memcmp() for every entry a lookup passes.
 */
static bool mpip_tuple_eq(const struct mpip_session_tuple *a,
			  const struct mpip_session_tuple *b)
{
	return a->laddr == b->laddr && a->raddr == b->raddr &&
	       a->lport == b->lport && a->rport == b->rport &&
	       a->proto == b->proto;
}

static int mpip_tuple_cmp(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct mpip_session *s = obj;

	return !mpip_tuple_eq(&s->t, arg->key);
}

static int mpip_id_cmp(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct mpip_session_key *k = arg->key;
	const struct mpip_session *s = obj;

	return READ_ONCE(s->id.node_id) != k->node_id ||
	       READ_ONCE(s->id.sid) != k->sid;
}

static const struct rhashtable_params mpip_tuple_params = {
	.head_offset = offsetof(struct mpip_session, tuple_node),
	.key_offset = offsetof(struct mpip_session, t),
	.key_len = sizeof(struct mpip_session_tuple),
	.obj_cmpfn = mpip_tuple_cmp,
	.automatic_shrinking = true,
};

static const struct rhashtable_params mpip_id_params = {
	.head_offset = offsetof(struct mpip_session, id_node),
	.key_offset = offsetof(struct mpip_session, id),
	.key_len = sizeof(struct mpip_session_key),
	.obj_cmpfn = mpip_id_cmp,
	.automatic_shrinking = true,
};

int mpip_sessions_init(struct mpip_sessions *st)
{
	int err;

	spin_lock_init(&st->lock);
	st->count = 0;
	err = rhashtable_init(&st->by_tuple, &mpip_tuple_params);
	if (err)
		return err;
	err = rhashtable_init(&st->by_id, &mpip_id_params);
	if (err)
		rhashtable_destroy(&st->by_tuple);
	return err;
}

/* A session left in the tables at their end: a bug. */
static void mpip_session_orphan_free(void *ptr, void *arg)
{
	struct mpip_session *s = ptr;

	WARN_ONCE(1, "mpip: a session outlived the flush of its namespace\n");
	mpip_reorder_release(s);
	kfree(s);
}

/*
 * The tables should be empty, and no reader left.  Whatever they still
 * hold is freed, with a warning: every linked session is in both tables,
 * so the walk of one meets each once.  The ID table goes first: its
 * destruction waits for its resize worker, which could otherwise still be
 * moving a session that the walk of the other frees.
 */
void mpip_sessions_destroy(struct mpip_sessions *st)
{
	rhashtable_destroy(&st->by_id);
	rhashtable_free_and_destroy(&st->by_tuple, mpip_session_orphan_free,
				    NULL);
}

/*
 * Take @s out of both tables.  Caller holds the lock, and frees @s with
 * mpip_session_free() once it has released the lock.
 */
static void mpip_session_unlink(struct mpip_sessions *st,
				struct mpip_session *s)
{
	lockdep_assert_held(&st->lock);
	rhashtable_remove_fast(&st->by_tuple, &s->tuple_node,
			       mpip_tuple_params);
	rhashtable_remove_fast(&st->by_id, &s->id_node, mpip_id_params);
	s->dead = true;
	WRITE_ONCE(st->count, st->count - 1);
}

/*
 * Free an unlinked session: its reorder buffer now, the session after a
 * grace period.  Never under the table lock: releasing the buffer waits
 * for its timer, whose callback delivers segments to TCP, whose ACKs
 * come back through the output hook to the table lock.
 */
static void mpip_session_free(struct mpip_session *s)
{
	if (!s)
		return;
	mpip_reorder_release(s);
	kfree_rcu(s, rcu);
}

/* Sessions looked at between two breaks of a walk. */
#define MPIP_SWEEP_BATCH	256
/* Walks of a flush at most: in practice two, the second removing none. */
#define MPIP_SWEEP_WALKS	8

/*
 * One walk over the sessions, removing those idle for @ttl jiffies and
 * the orphans (mpip_session_of()), or all of them; returns how many it
 * removed.  The walk may meet an entry twice (after a resize) or one
 * that is being removed; the dead mark, read under the lock, keeps it
 * from being freed twice.  It may also miss some: after a break,
 * rhashtable_walk_start() cannot find the entry the walk stood on if
 * that one was removed meanwhile (by this walk, as a rule), and then
 * goes as far into the bucket as it had gone: past one entry it has not
 * seen for each one up to there that is gone.  (rhashtable_walk_peek()
 * would go one less, not enough when those before it in the bucket were
 * removed too.)
 * Sleeps.
 */
static unsigned int mpip_sessions_walk_sweep(struct mpip_net *mn,
					     unsigned long ttl, bool all)
{
	struct mpip_sessions *st = &mn->sessions;
	struct mpip_session *s, *gone;
	struct rhashtable_iter it;
	unsigned int seen = 0, removed = 0;

	rhashtable_walk_enter(&st->by_tuple, &it);
	rhashtable_walk_start(&it);
	while ((s = rhashtable_walk_next(&it))) {
		if (IS_ERR(s))
			continue;	/* resized: the walk goes on in the new table */
		if (all || READ_ONCE(s->orphan) ||
		    time_after(jiffies, READ_ONCE(s->stamp) + ttl)) {
			gone = NULL;
			spin_lock_bh(&st->lock);
			if (!s->dead) {
				mpip_session_unlink(st, s);
				gone = s;
				removed++;
				if (!all)
					mpip_inc(mn, MPIP_STAT_SESSION_EXPIRED);
			}
			spin_unlock_bh(&st->lock);
			mpip_session_free(gone);
		}
		if (++seen % MPIP_SWEEP_BATCH == 0) {
			rhashtable_walk_stop(&it);
			cond_resched();
			rhashtable_walk_start(&it);
		}
	}
	rhashtable_walk_stop(&it);
	rhashtable_walk_exit(&it);
	return removed;
}

/*
 * Remove the sessions idle for @ttl jiffies and the orphans, or all of
 * them.  An expiry sweep leaves what its walk missed to the next one; a
 * flush walks again while its last walk removed some, so that it leaves
 * none behind unless packets add sessions as fast as it removes them.
 * Sleeps.
 */
void mpip_sessions_sweep(struct mpip_net *mn, unsigned long ttl, bool all)
{
	unsigned int walks = 0;

	while (mpip_sessions_walk_sweep(mn, ttl, all) && all &&
	       ++walks < MPIP_SWEEP_WALKS)
		;
}

/* Start a walk over all sessions, for a dump (netlink.c). */
void mpip_sessions_walk_enter(struct mpip_net *mn, struct rhashtable_iter *it)
{
	rhashtable_walk_enter(&mn->sessions.by_tuple, it);
}

/* A 5-tuple key, its padding zero. */
static struct mpip_session_tuple mpip_session_tuple(u8 proto, __be32 laddr,
						    __be16 lport, __be32 raddr,
						    __be16 rport)
{
	return (struct mpip_session_tuple){
		.laddr = laddr,
		.raddr = raddr,
		.lport = lport,
		.rport = rport,
		.proto = proto,
	};
}

/* Find a session by its original 5-tuple.  Caller holds RCU. */
static struct mpip_session *
mpip_session_find(struct mpip_net *mn, const struct mpip_session_tuple *t)
{
	return rhashtable_lookup(&mn->sessions.by_tuple, t, mpip_tuple_params);
}

/* Find a session by its original 5-tuple, for icmp.c.  Caller holds RCU. */
struct mpip_session *mpip_session_lookup(struct mpip_net *mn, u8 proto,
					 __be32 laddr, __be16 lport,
					 __be32 raddr, __be16 rport)
{
	const struct mpip_session_tuple t =
		mpip_session_tuple(proto, laddr, lport, raddr, rport);

	return mpip_session_find(mn, &t);
}

/* Find a session by (node ID, session ID).  Caller holds RCU. */
struct mpip_session *mpip_session_by_id(struct mpip_net *mn, u32 node_id,
					u16 sid)
{
	const struct mpip_session_key k = { .node_id = node_id, .sid = sid };

	return rhashtable_lookup(&mn->sessions.by_id, &k, mpip_id_params);
}

/* Does this host pick @sid for sessions with node @n?  Caller holds RCU. */
bool mpip_sid_is_ours(const struct mpip_node *n, u16 sid)
{
	return mpip_sid_parity(n) == (sid & 1);
}

/*
 * A session ID of ours not in use with @n, at random: a sequential one
 * would be guessed (review C3).  Our IDs have the parity that
 * mpip_sid_is_ours() gives us.  Caller holds the lock.
 */
static u16 mpip_session_new_sid(struct mpip_net *mn, struct mpip_node *n)
{
	u16 mine = mpip_sid_is_ours(n, 1) ? 1 : 0;
	unsigned int tries;
	u16 sid;

	for (tries = 0; tries < 64; tries++) {
		sid = (get_random_u16() & ~1) | mine;
		if (sid && !mpip_session_by_id(mn, n->id, sid))
			return sid;
	}
	return 0;
}

static struct mpip_session *
mpip_session_alloc(u32 node_id, const struct mpip_session_tuple *t)
{
	struct mpip_session *s = kzalloc(sizeof(*s), GFP_ATOMIC);

	if (!s)
		return NULL;
	s->id.node_id = node_id;
	s->t = *t;
	s->stamp = jiffies;
	s->learn_due = jiffies;
	atomic64_set(&s->tx_pkts, 0);
	atomic64_set(&s->rx_pkts, 0);
	return s;
}

/*
 * Link @s under @sid.  Caller holds the lock.  On failure @s may have
 * been visible to readers for a moment: the caller frees it after a
 * grace period.
 */
static int mpip_session_link(struct mpip_sessions *st,
			     struct mpip_session *s, u16 sid)
{
	int err;

	s->id.sid = sid;
	err = rhashtable_insert_fast(&st->by_tuple, &s->tuple_node,
				     mpip_tuple_params);
	if (err)
		return err;
	err = rhashtable_insert_fast(&st->by_id, &s->id_node, mpip_id_params);
	if (err) {
		rhashtable_remove_fast(&st->by_tuple, &s->tuple_node,
				       mpip_tuple_params);
		return err;
	}
	WRITE_ONCE(st->count, st->count + 1);
	return 0;
}

static bool mpip_sessions_have_room(struct mpip_net *mn)
{
	if (READ_ONCE(mn->sessions.count) < MPIP_SESSION_MAX)
		return true;
	mpip_inc(mn, MPIP_STAT_TABLE_FULL);
	return false;
}

/*
 * Session @s, found by its flow's addresses for a packet to node @n, if
 * it is @n's.  Another node's session ID names nothing the peer knows
 * under @n: sealed for @n, what went to other paths under it was dropped
 * there (drop_session), a TCP flow's ACKs for minutes once, while the
 * peer, plain on its side, sent nothing that moved the session to @n
 * (mpip_session_takes()).  The flow's destination answers for @n since
 * its availability entry left the old node, which it does only once that
 * one is silent or gone (a peer that restarted and shook hands anew):
 * then the session is orphaned, the collector removes it within a
 * second, and the flow's next packet makes one with @n.  Until then, or
 * while the old node speaks again, the flow's packets go without a
 * session, on their own addresses.  Caller holds RCU.
 */
static struct mpip_session *mpip_session_of(struct mpip_net *mn,
					    struct mpip_node *n,
					    struct mpip_session *s)
{
	u32 id = READ_ONCE(s->id.node_id);
	struct mpip_node *old;

	if (likely(id == n->id))
		return s;
	old = mpip_node_lookup(mn, id);
	if ((!old || mpip_node_silent(mn, old)) && !READ_ONCE(s->orphan)) {
		WRITE_ONCE(s->orphan, true);
		mpip_gc_kick(mn);
	}
	return NULL;
}

/*
 * The session of an outgoing packet of a flow with node @n, created with
 * a new session ID if there is none.  Caller holds RCU.  NULL when the
 * table is full or memory is short, or the flow's session is another
 * node's (mpip_session_of()): the packet then goes without one.
 */
struct mpip_session *mpip_session_tx(struct mpip_net *mn,
				     struct mpip_node *n, u8 proto,
				     __be32 laddr, __be16 lport,
				     __be32 raddr, __be16 rport)
{
	const struct mpip_session_tuple t = mpip_session_tuple(proto, laddr,
							       lport, raddr,
							       rport);
	struct mpip_sessions *st = &mn->sessions;
	struct mpip_session *s, *old;
	u16 sid;

	s = mpip_session_find(mn, &t);
	if (s)
		return mpip_session_of(mn, n, s);
	if (!mpip_sessions_have_room(mn))
		return NULL;
	s = mpip_session_alloc(n->id, &t);
	if (!s) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NULL;
	}

	spin_lock_bh(&st->lock);
	old = mpip_session_find(mn, &t);
	if (old) {
		spin_unlock_bh(&st->lock);
		kfree(s);
		return old;
	}
	sid = mpip_session_new_sid(mn, n);
	if (!sid) {
		spin_unlock_bh(&st->lock);
		kfree(s);
		mpip_inc(mn, MPIP_STAT_TABLE_FULL);
		return NULL;
	}
	if (mpip_session_link(st, s, sid)) {
		spin_unlock_bh(&st->lock);
		kfree_rcu(s, rcu);
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NULL;
	}
	spin_unlock_bh(&st->lock);
	mpip_inc(mn, MPIP_STAT_SESSION_NEW);
	return s;
}

/*
 * Move @s to session ID @sid of node @node_id, which @proved that it
 * receives at the flow's remote address or not.  Caller holds the lock.
 * If it cannot be linked under the new ID, it is unlinked; returns false
 * then, and the caller frees it once it has released the lock.
 */
static bool mpip_session_rekey(struct mpip_sessions *st,
			       struct mpip_session *s, u32 node_id, u16 sid,
			       bool proved)
{
	rhashtable_remove_fast(&st->by_id, &s->id_node, mpip_id_params);
	if (proved && READ_ONCE(s->proved) != node_id)
		WRITE_ONCE(s->proved, node_id);
	WRITE_ONCE(s->id.node_id, node_id);
	WRITE_ONCE(s->id.sid, sid);
	WRITE_ONCE(s->orphan, false);
	if (!rhashtable_insert_fast(&st->by_id, &s->id_node, mpip_id_params))
		return true;
	mpip_session_unlink(st, s);
	return false;
}

/*
 * Does session @s, found by its flow's addresses, take the ID @sid that a
 * packet of node @n gives it?  From its own node, unless we picked a
 * winning ID ourselves at the same time.  From another node only if that
 * one is gone or silent (its peer restarted and shook hands anew: it is
 * @n now) and @n proved that it receives at the flow's remote address
 * (mpip_node_proved()): no other host that shook hands with us may take a
 * flow of another peer (review C3).  Caller holds RCU and the lock.
 */
static bool mpip_session_takes(struct mpip_net *mn, struct mpip_node *n,
			       const struct mpip_session *s, u16 sid)
{
	struct mpip_node *old;

	if (s->id.node_id == n->id)
		return !(mpip_sid_is_ours(n, s->id.sid) && (s->id.sid & 1) &&
			 !(sid & 1));
	old = mpip_node_lookup(mn, s->id.node_id);
	if (old && !mpip_node_silent(mn, old))
		return false;
	return mpip_node_proved(n, s->t.raddr);
}

/*
 * A packet of an unknown session @sid of node @n arrived with the flow's
 * original addresses.  Adopt the peer's session ID for the flow, unless we
 * picked a winning one ourselves at the same time; a flow's session of a
 * node that went silent moves to @n (mpip_session_takes()).  A new flow
 * makes a session only if @n proved that it receives at the flow's remote
 * address (mpip_node_proved()): anyone who shook hands with us seals CMs
 * that authenticate, and could send them from another host's address; its
 * session would send our replies over its own paths, and restore its
 * packets to that address.  Caller holds RCU.
 */
struct mpip_session *mpip_session_rx(struct mpip_net *mn,
				     struct mpip_node *n, u16 sid, u8 proto,
				     __be32 laddr, __be16 lport,
				     __be32 raddr, __be16 rport)
{
	const struct mpip_session_tuple t = mpip_session_tuple(proto, laddr,
							       lport, raddr,
							       rport);
	struct mpip_session *s, *other, *gone = NULL;
	struct mpip_sessions *st = &mn->sessions;
	bool proved = mpip_node_proved(n, raddr);
	int err = -ENOMEM;

	s = mpip_session_alloc(n->id, &t);
	if (s && proved)
		s->proved = n->id;
	spin_lock_bh(&st->lock);
	other = mpip_session_by_id(mn, n->id, sid);
	if (other && mpip_tuple_eq(&other->t, &t)) {
		/* Created meanwhile on another CPU. */
		spin_unlock_bh(&st->lock);
		kfree(s);
		return other;
	}
	if (other) {
		/* Another flow holds @sid: the peer forgot it. */
		mpip_session_unlink(st, other);
		gone = other;
	}
	other = mpip_session_find(mn, &t);
	if (other) {
		if (mpip_session_takes(mn, n, other, sid) &&
		    !mpip_session_rekey(st, other, n->id, sid, proved)) {
			spin_unlock_bh(&st->lock);
			mpip_session_free(gone);
			mpip_session_free(other);
			kfree(s);
			return NULL;
		}
		spin_unlock_bh(&st->lock);
		mpip_session_free(gone);
		kfree(s);
		return other;
	}
	if (!proved)
		err = -EACCES;
	else if (s && READ_ONCE(st->count) >= MPIP_SESSION_MAX)
		err = -ENOSPC;
	else if (s)
		err = mpip_session_link(st, s, sid);
	spin_unlock_bh(&st->lock);
	mpip_session_free(gone);

	if (err) {
		mpip_inc(mn, err == -EACCES ? MPIP_STAT_SESSION_UNPROVEN :
			     err == -ENOSPC ? MPIP_STAT_TABLE_FULL :
					      MPIP_STAT_DROP_NOMEM);
		if (s)
			kfree_rcu(s, rcu);
		return NULL;
	}
	mpip_inc(mn, MPIP_STAT_SESSION_NEW);
	return s;
}
