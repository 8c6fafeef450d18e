// SPDX-License-Identifier: GPL-2.0
/*
 * mpip session table (paper Table 4): one entry per TCP or UDP flow with a
 * remote MPIP node, holding the flow's original addresses and ports so
 * that packets sent over other paths can be restored on receipt.
 *
 * Both ends use the same session ID.  The node that sends the first data
 * trailer of a flow picks it; to keep the two nodes' choices apart, the
 * node with the lower node ID picks odd IDs and the other even ones.  If
 * both ends pick an ID for the same flow at once, the odd one wins.
 *
 * Entries sit in two RCU hash chains, by 5-tuple and by (node ID, session
 * ID).  Readers use RCU; insertion, re-keying and removal take the lock.
 */
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "mpip.h"

#define MPIP_SESSION_BUCKETS	BIT(MPIP_SESSION_BITS)

static u32 mpip_session_hash_tuple(u8 proto, __be32 laddr, __be16 lport,
				   __be32 raddr, __be16 rport)
{
	u32 ports = ((u32)(__force u16)lport << 16) | (__force u16)rport;

	return jhash_3words((__force u32)laddr, (__force u32)raddr,
			    ports ^ proto, 0) & (MPIP_SESSION_BUCKETS - 1);
}

static u32 mpip_session_hash_id(u32 node_id, u16 sid)
{
	return jhash_2words(node_id, sid, 0) & (MPIP_SESSION_BUCKETS - 1);
}

int mpip_sessions_init(struct mpip_sessions *st)
{
	unsigned int i;

	spin_lock_init(&st->lock);
	st->count = 0;
	st->by_tuple = kvcalloc(MPIP_SESSION_BUCKETS, sizeof(*st->by_tuple),
				GFP_KERNEL);
	st->by_id = kvcalloc(MPIP_SESSION_BUCKETS, sizeof(*st->by_id),
			     GFP_KERNEL);
	if (!st->by_tuple || !st->by_id) {
		mpip_sessions_destroy(st);
		return -ENOMEM;
	}
	for (i = 0; i < MPIP_SESSION_BUCKETS; i++) {
		INIT_HLIST_HEAD(&st->by_tuple[i]);
		INIT_HLIST_HEAD(&st->by_id[i]);
	}
	return 0;
}

/* The table must be empty and no reader left. */
void mpip_sessions_destroy(struct mpip_sessions *st)
{
	kvfree(st->by_tuple);
	kvfree(st->by_id);
	st->by_tuple = NULL;
	st->by_id = NULL;
}

/* Caller holds the lock. */
static void mpip_session_unlink(struct mpip_sessions *st,
				struct mpip_session *s)
{
	hlist_del_rcu(&s->tn.hnode);
	hlist_del_rcu(&s->id_node);
	WRITE_ONCE(st->count, st->count - 1);
	mpip_reorder_release(s);
	kfree_rcu(s, tn.rcu);
}

/* Remove the sessions idle for @ttl jiffies, or all of them. */
void mpip_sessions_sweep(struct mpip_net *mn, unsigned long ttl, bool all)
{
	struct mpip_sessions *st = &mn->sessions;
	struct mpip_session *s;
	struct hlist_node *tmp;
	unsigned int i;

	spin_lock_bh(&st->lock);
	for (i = 0; i < MPIP_SESSION_BUCKETS; i++) {
		hlist_for_each_entry_safe(s, tmp, &st->by_tuple[i], tn.hnode) {
			if (!all &&
			    !time_after(jiffies, READ_ONCE(s->tn.stamp) + ttl))
				continue;
			mpip_session_unlink(st, s);
			if (!all)
				mpip_inc(mn, MPIP_STAT_SESSION_EXPIRED);
		}
	}
	spin_unlock_bh(&st->lock);
}

static bool mpip_session_match(const struct mpip_session *s, u8 proto,
			       __be32 laddr, __be16 lport, __be32 raddr,
			       __be16 rport)
{
	return s->laddr == laddr && s->raddr == raddr && s->lport == lport &&
	       s->rport == rport && s->proto == proto;
}

/* Find a session by its original 5-tuple.  Caller holds RCU. */
struct mpip_session *mpip_session_lookup(struct mpip_net *mn, u8 proto,
					 __be32 laddr, __be16 lport,
					 __be32 raddr, __be16 rport)
{
	u32 b = mpip_session_hash_tuple(proto, laddr, lport, raddr, rport);
	struct mpip_session *s;

	hlist_for_each_entry_rcu(s, &mn->sessions.by_tuple[b], tn.hnode) {
		if (mpip_session_match(s, proto, laddr, lport, raddr, rport))
			return s;
	}
	return NULL;
}

/* Find a session by (node ID, session ID).  Caller holds RCU. */
struct mpip_session *mpip_session_by_id(struct mpip_net *mn, u32 node_id,
					u16 sid)
{
	u32 b = mpip_session_hash_id(node_id, sid);
	struct mpip_session *s;

	hlist_for_each_entry_rcu(s, &mn->sessions.by_id[b], id_node) {
		if (s->node_id == node_id && READ_ONCE(s->sid) == sid)
			return s;
	}
	return NULL;
}

/* Does this node pick @sid for sessions with node @peer? */
bool mpip_sid_is_ours(const struct mpip_net *mn, u32 peer, u16 sid)
{
	return (mn->node_id < peer) == (sid & 1);
}

/* A session ID of ours not in use with @n.  Caller holds the lock. */
static u16 mpip_session_new_sid(struct mpip_net *mn, struct mpip_node *n)
{
	unsigned int tries;
	u16 sid;

	for (tries = 0; tries < 64; tries++) {
		sid = n->sid_next++;
		if (!sid || !mpip_sid_is_ours(mn, n->id, sid))
			sid = n->sid_next++;
		if (!sid)
			continue;
		if (!mpip_session_by_id(mn, n->id, sid))
			return sid;
	}
	return 0;
}

static struct mpip_session *mpip_session_alloc(u32 node_id, u8 proto,
					       __be32 laddr, __be16 lport,
					       __be32 raddr, __be16 rport)
{
	struct mpip_session *s = kzalloc(sizeof(*s), GFP_ATOMIC);

	if (!s)
		return NULL;
	s->node_id = node_id;
	s->proto = proto;
	s->laddr = laddr;
	s->lport = lport;
	s->raddr = raddr;
	s->rport = rport;
	s->tn.stamp = jiffies;
	s->learn_due = jiffies;
	atomic64_set(&s->tx_pkts, 0);
	atomic64_set(&s->rx_pkts, 0);
	return s;
}

/* Link @s under @sid.  Caller holds the lock. */
static void mpip_session_link(struct mpip_sessions *st,
			      struct mpip_session *s, u16 sid)
{
	s->sid = sid;
	hlist_add_head_rcu(&s->tn.hnode,
			   &st->by_tuple[mpip_session_hash_tuple(s->proto,
						s->laddr, s->lport,
						s->raddr, s->rport)]);
	hlist_add_head_rcu(&s->id_node,
			   &st->by_id[mpip_session_hash_id(s->node_id, sid)]);
	WRITE_ONCE(st->count, st->count + 1);
}

static bool mpip_sessions_have_room(struct mpip_net *mn)
{
	if (READ_ONCE(mn->sessions.count) < MPIP_SESSION_MAX)
		return true;
	mpip_inc(mn, MPIP_STAT_TABLE_FULL);
	return false;
}

/*
 * The session of an outgoing packet of a flow with node @n, created with
 * a new session ID if there is none.  Caller holds RCU.  NULL when the
 * table is full or memory is short: the packet then goes without one.
 */
struct mpip_session *mpip_session_tx(struct mpip_net *mn,
				     struct mpip_node *n, u8 proto,
				     __be32 laddr, __be16 lport,
				     __be32 raddr, __be16 rport)
{
	struct mpip_sessions *st = &mn->sessions;
	struct mpip_session *s, *old;
	u16 sid;

	s = mpip_session_lookup(mn, proto, laddr, lport, raddr, rport);
	if (s)
		return s;
	if (!mpip_sessions_have_room(mn))
		return NULL;
	s = mpip_session_alloc(n->id, proto, laddr, lport, raddr, rport);
	if (!s) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return NULL;
	}

	spin_lock_bh(&st->lock);
	old = mpip_session_lookup(mn, proto, laddr, lport, raddr, rport);
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
	mpip_session_link(st, s, sid);
	spin_unlock_bh(&st->lock);
	mpip_inc(mn, MPIP_STAT_SESSION_NEW);
	return s;
}

/* Move @s to session ID @sid.  Caller holds the lock. */
static void mpip_session_rekey(struct mpip_sessions *st,
			       struct mpip_session *s, u16 sid)
{
	hlist_del_rcu(&s->id_node);
	WRITE_ONCE(s->sid, sid);
	hlist_add_head_rcu(&s->id_node,
			   &st->by_id[mpip_session_hash_id(s->node_id, sid)]);
}

/*
 * A packet of an unknown session @sid of node @n arrived with the flow's
 * original addresses.  Adopt the peer's session ID for the flow, unless we
 * picked a winning one ourselves at the same time.  Caller holds RCU.
 */
struct mpip_session *mpip_session_rx(struct mpip_net *mn,
				     struct mpip_node *n, u16 sid, u8 proto,
				     __be32 laddr, __be16 lport,
				     __be32 raddr, __be16 rport)
{
	struct mpip_sessions *st = &mn->sessions;
	struct mpip_session *s, *other;
	bool created = false;

	s = mpip_session_alloc(n->id, proto, laddr, lport, raddr, rport);
	spin_lock_bh(&st->lock);
	other = mpip_session_by_id(mn, n->id, sid);
	if (other && mpip_session_match(other, proto, laddr, lport, raddr,
					rport)) {
		/* Created meanwhile on another CPU. */
		spin_unlock_bh(&st->lock);
		kfree(s);
		return other;
	}
	if (other) {
		/* Another flow holds @sid: the peer forgot it. */
		mpip_session_unlink(st, other);
	}
	other = mpip_session_lookup(mn, proto, laddr, lport, raddr, rport);
	if (other) {
		if (other->node_id == n->id &&
		    !(mpip_sid_is_ours(mn, n->id, other->sid) &&
		      (other->sid & 1) && !(sid & 1)))
			mpip_session_rekey(st, other, sid);
		spin_unlock_bh(&st->lock);
		kfree(s);
		return other;
	}
	if (s && READ_ONCE(st->count) < MPIP_SESSION_MAX) {
		mpip_session_link(st, s, sid);
		created = true;
	}
	spin_unlock_bh(&st->lock);

	if (!created) {
		mpip_inc(mn, s ? MPIP_STAT_TABLE_FULL : MPIP_STAT_DROP_NOMEM);
		kfree(s);
		return NULL;
	}
	mpip_inc(mn, MPIP_STAT_SESSION_NEW);
	return s;
}
