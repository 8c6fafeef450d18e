// SPDX-License-Identifier: GPL-2.0
/*
 * mpip per-peer keys: wire format v2 in the module.
 *
 * Every CM is sealed (kernel/core/auth.h): it carries the receiver's
 * token instead of a node ID, a counter and a 64-bit MAC under the MAC
 * key of its direction.  A handshake CM (a query, flag ENABLE, or a
 * confirmation, ENABLED) also carries the sender's key for the pair and
 * the high half of its counter in a 12-byte extension while the peer may
 * lack that key (mpip_cm_hs_ext()).
 *
 * Keys.  An initiator draws a random key per peer node (its token, the
 * node's ID here, unique in the table) and sends it in its queries; until
 * the peer's key arrives, a query has token 0 and a zero MAC.  A
 * responder derives its key from the initiator's and a per-namespace
 * secret, so that every query carrying the same key finds the same node
 * without another index, and answers with an authenticated confirmation.
 * Whoever learns both keys (one from its own draw or derivation, one from
 * an authenticated handshake CM) installs them; a handshake CM whose key
 * differs from the one installed re-keys the node if its MAC verifies
 * under the new pair, which only a holder of our key can compute (a peer
 * that restarted), unless another node of ours pairs with that key
 * already: a peer's node holds one pair at a time, so one node of ours
 * at most may pair with its key (mpip_rkey_holder()).
 *
 * Counters.  A node's counter starts at the boot-time clock in
 * nanoseconds when the node is made, so a node made again for the same
 * pair (the responder's derivation gives it the same key) continues above
 * every counter it used before.  The receiver of a handshake CM takes the
 * full counter from it and so follows such a jump; all other CMs carry
 * the low half only (auth.h).
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "mpip.h"

/* Derivations a responder key may take (a token collision moves it on). */
#define MPIP_RESPONDER_KEYS	4

/* A key of ours, drawn at random, whose token no node here has yet. */
int mpip_key_new(struct mpip_net *mn, u64 *key)
{
	unsigned int tries;
	u32 tok;

	for (tries = 0; tries < 8; tries++) {
		*key = get_random_u64();
		tok = mpip_auth_token(*key);
		if (*key && tok && !mpip_node_lookup(mn, tok))
			return 0;
	}
	return -EEXIST;
}

/* The keys of a pair with the peer's key @rkey and derived keys @ap. */
static struct mpip_keys *mpip_keys_alloc(const struct mpip_auth_peer *ap,
					 u64 rkey)
{
	struct mpip_keys *k = kzalloc(sizeof(*k), GFP_ATOMIC);

	if (!k)
		return NULL;
	k->ap = *ap;
	k->rkey = rkey;
	spin_lock_init(&k->lock);
	mpip_replay_init(&k->win);
	return k;
}

/* The keys of the pair (@lkey, @rkey), or NULL (no memory, bad keys). */
struct mpip_keys *mpip_keys_make(u64 lkey, u64 rkey)
{
	struct mpip_auth_peer ap;
	struct mpip_keys *k = NULL;

	if (!mpip_auth_derive(&ap, lkey, rkey))
		k = mpip_keys_alloc(&ap, rkey);
	memzero_explicit(&ap, sizeof(ap));
	return k;
}

bool mpip_node_keyed(const struct mpip_node *n)
{
	return rcu_access_pointer(n->keys);
}

/* Session IDs of parity 1 are picked by the holder of the lower key. */
bool mpip_sid_parity(const struct mpip_node *n)
{
	const struct mpip_keys *k = rcu_dereference(n->keys);

	return k && n->lkey < k->rkey;
}

static bool mpip_cm_is_hs(const struct mpip_cm *cm)
{
	return cm->flags & (MPIP_CM_F_ENABLE | MPIP_CM_F_ENABLED);
}

const struct mpip_cm_ext mpip_cm_key_ext = { .len = MPIP_HS_EXT_LEN };

/*
 * The extension of @cm, a CM to node @n that would carry @ext.  A query
 * carries our key (mpip_cm_key_ext) while the peer may lack it, and
 * else none: the peer may lack it before an authenticated CM from it
 * came (@n not verified), and once it has been silent, or has left a
 * question unanswered, for peer_timeout_ms (it may have restarted and
 * lost the pair's keys; then only a query with our key starts a new
 * handshake).  A confirmation carries what its caller gives: our key if
 * the query it answers showed the peer's (the peer is starting over, and
 * may need our key and the full counter of a node we made again).  So a
 * pair that talks does not show its keys again, and an on-path attacker
 * who missed the handshake does not learn them from a later query or
 * confirmation (security.rst).  Computed once per CM: its length and its
 * sealing must agree.  Caller holds RCU.
 */
const struct mpip_cm_ext *mpip_cm_hs_ext(const struct mpip_net *mn,
					 const struct mpip_node *n,
					 const struct mpip_cm *cm,
					 const struct mpip_cm_ext *ext)
{
	if (!(cm->flags & MPIP_CM_F_ENABLE))
		return ext;
	if (!mpip_node_keyed(n) || !READ_ONCE(n->verified) ||
	    mpip_node_silent(mn, n) || mpip_node_unanswered(mn, n))
		return &mpip_cm_key_ext;
	return NULL;
}

/* Bytes the v2 trailer of @cm with extension @ext (or none) takes. */
unsigned int mpip_cm_wire_len(const struct mpip_cm *cm,
			      const struct mpip_cm_ext *ext)
{
	return MPIP_CM2_MIN_LEN + 4 * cm->naddrs + (ext ? ext->len : 0);
}

/*
 * Write the v2 trailer of @cm, a CM to node @n of a flow of protocol
 * @proto, into @buf (@len bytes, at least mpip_cm_wire_len()), which
 * lies @off bytes from the transport header (mpip_cm2_sum()), with the
 * extension @ext, if given: mpip_cm_key_ext puts our key and the
 * counter's high half there.  Its counter is @ctr, if not 0 (the copies
 * of a packet of mode protected share one: mpip_cm_next_ctr()), else the
 * node's next.  Returns the length written or a negative error: a node
 * without keys can only be sent a query with our key.  Caller holds RCU.
 */
int mpip_cm_seal(struct mpip_node *n, const struct mpip_cm *cm,
		 const struct mpip_cm_ext *ext, u8 proto, unsigned int off,
		 u8 *buf, unsigned int len, u64 ctr)
{
	const struct mpip_keys *k = rcu_dereference(n->keys);
	struct mpip_cm2 c2 = { .cm = *cm };

	if (!k && (!(cm->flags & MPIP_CM_F_ENABLE) || ext != &mpip_cm_key_ext))
		return -ENOKEY;
	if (!ctr)
		ctr = mpip_cm_next_ctr(n);
	if (ext == &mpip_cm_key_ext) {
		put_unaligned_be64(n->lkey, c2.ext);
		put_unaligned_be32(ctr >> 32, c2.ext + 8);
		c2.ext_len = MPIP_HS_EXT_LEN;
	} else if (ext && ext->len) {
		memcpy(c2.ext, ext->b, ext->len);
		c2.ext_len = ext->len;
	}
	c2.sum = mpip_cm2_sum(proto, off, mpip_cm2_len(&c2));
	if (mpip_node_asks(n, cm))
		mpip_node_asked(n);
	if (k) {
		c2.cm.node_id = k->ap.tx_token;
		return mpip_cm2_encode(&c2, &k->ap.tx, ctr, proto, buf, len);
	}
	/* A query before the handshake: token 0, no MAC. */
	c2.cm.node_id = 0;
	put_unaligned_be32((u32)ctr, c2.auth);
	return mpip_cm2_write(&c2, buf, len);
}

/* The sender's key and full counter of a handshake CM. */
static bool mpip_cm_hs_fields(const struct mpip_cm2 *c2, u64 *key, u64 *ctr)
{
	if (!mpip_cm_is_hs(&c2->cm) || c2->ext_len != MPIP_HS_EXT_LEN)
		return false;
	*key = get_unaligned_be64(c2->ext);
	*ctr = (u64)get_unaligned_be32(c2->ext + 8) << 32 |
	       get_unaligned_be32(c2->auth);
	return *key && *ctr;
}

/* Does @c2's MAC verify under the keys @ap with counter @ctr? */
static bool mpip_cm_mac_ok(const struct mpip_auth_peer *ap,
			   const struct mpip_cm2 *c2, u8 proto, u64 ctr)
{
	struct mpip_auth_ctx ctx;

	mpip_cm2_auth_ctx(c2, proto, &ctx);
	return !mpip_auth_mac_ok(&ap->rx, &c2->cm, ctr, &ctx, c2->auth,
				 sizeof(c2->auth));
}

/* Accept counter @ctr into @k's window: 0 or an MPIP_AUTH_E_* error. */
static int mpip_cm_commit(struct mpip_keys *k, u64 ctr)
{
	int err;

	spin_lock_bh(&k->lock);
	err = mpip_replay_commit(&k->win, ctr);
	spin_unlock_bh(&k->lock);
	return err;
}

/*
 * Install @k on @n in place of whatever keys it had: a first handshake,
 * or a new one (never a pair another node of ours has the peer's key of:
 * mpip_rkey_holder()).  False if another CPU got there first with other keys
 * (then @k is freed).
 */
static bool mpip_node_set_keys(struct mpip_node *n, struct mpip_keys *k,
			       const struct mpip_keys *seen)
{
	struct mpip_keys *old;
	bool ok;

	spin_lock_bh(&n->lock);
	old = rcu_dereference_protected(n->keys, lockdep_is_held(&n->lock));
	ok = old == seen && !n->dead;
	if (ok)
		rcu_assign_pointer(n->keys, k);
	spin_unlock_bh(&n->lock);
	if (!ok) {
		kfree(k);
		return false;
	}
	if (old)
		kfree_rcu(old, rcu);
	return true;
}

/* The node our queries to @addr go to (its availability entry of port 0). */
static struct mpip_node *mpip_addr_node(struct mpip_net *mn, __be32 addr)
{
	struct mpip_avail *a = mpip_avail_lookup(mn, addr, 0);

	return a ? mpip_node_lookup(mn, READ_ONCE(a->node_id)) : NULL;
}

/*
 * A responder's key for the initiator's @rkey is derived, so that the
 * same @rkey always finds the same node; a node whose token collides
 * with one of another pair moves to the next derivation.  Returns our
 * responder node for @rkey, if we made one, else NULL with *@free (if
 * @free is not NULL) set to the key of the first derivation whose token
 * no node has, where it would be (0 if none).  Caller holds RCU.
 */
static struct mpip_node *mpip_responder_find(struct mpip_net *mn, u64 rkey,
					     u64 *free)
{
	const struct mpip_keys *k;
	struct mpip_node *n;
	unsigned int i;
	u64 lkey;

	if (free)
		*free = 0;
	for (i = 0; i < MPIP_RESPONDER_KEYS; i++) {
		lkey = siphash_2u64(rkey, i, &mn->secret);
		if (!lkey || lkey == rkey || !mpip_auth_token(lkey))
			continue;
		n = mpip_node_lookup(mn, mpip_auth_token(lkey));
		if (!n) {
			if (free)
				*free = lkey;
			return NULL;
		}
		k = rcu_dereference(n->keys);
		if (n->lkey == lkey && k && k->rkey == rkey)
			return n;
	}
	return NULL;
}

/*
 * Our node, other than @n, that pairs with the peer's key @rkey: our
 * responder node for it, or @m, the node our queries to the sender's
 * address go to (mpip_addr_node()), which a crossed query may have given
 * it.  When it returns NULL, *@free (if @free is not NULL) is as
 * mpip_responder_find() sets it.  The peer's node of that key
 * holds one pair at a time, so one node of ours at most can be its
 * partner: the first to pair with it keeps it.  Two would take it from
 * each other at each handshake CM, the CMs of the one that lost it
 * failing there until the next (test_restart flushes_close_*: after two
 * flushes close together, a retried query found its crossed node keyed
 * and made a responder node beside it).  Caller holds RCU.
 */
static struct mpip_node *mpip_rkey_holder(struct mpip_net *mn,
					  const struct mpip_node *n,
					  struct mpip_node *m, u64 rkey,
					  u64 *free)
{
	const struct mpip_keys *k;

	if (m && m != n) {
		k = rcu_dereference(m->keys);
		if (k && k->rkey == rkey)
			return m;
	}
	m = mpip_responder_find(mn, rkey, free);
	return m != n ? m : NULL;
}

/*
 * The keys of the pair (ours of @n, @rkey), made only once the CM of @rx
 * verified under them with counter @ctr: a handshake CM under a key that
 * no peer of ours holds costs no allocation.  NULL if not, with *@err
 * MPIP_AUTH_E_MAC or -ENOMEM.
 */
static struct mpip_keys *mpip_cm_hs_keys(const struct mpip_node *n,
					 const struct mpip_rx *rx, u64 rkey,
					 u64 ctr, int *err)
{
	struct mpip_keys *nk = NULL;
	struct mpip_auth_peer ap;

	*err = MPIP_AUTH_E_MAC;
	if (!mpip_auth_derive(&ap, n->lkey, rkey) &&
	    mpip_cm_mac_ok(&ap, &rx->c2, rx->proto, ctr)) {
		nk = mpip_keys_alloc(&ap, rkey);
		*err = nk ? 0 : -ENOMEM;
	}
	memzero_explicit(&ap, sizeof(ap));
	return nk;
}

/*
 * A handshake CM for our node @n, whose installed keys are @k (or none):
 * the sender's key is @rkey and the counter @ctr.  Verified under the
 * installed keys if the key is the same, else under the pair (ours,
 * @rkey), which then replaces them.
 */
static int mpip_cm_open_hs(struct mpip_net *mn, struct mpip_node *n,
			   struct mpip_keys *k, const struct mpip_rx *rx,
			   u64 rkey, u64 ctr)
{
	struct mpip_keys *nk;
	int err;

	if (k && k->rkey == rkey) {
		if (!mpip_cm_mac_ok(&k->ap, &rx->c2, rx->proto, ctr))
			return MPIP_AUTH_E_MAC;
		return mpip_cm_commit(k, ctr);
	}
	nk = mpip_cm_hs_keys(n, rx, rkey, ctr, &err);
	if (!nk)
		return err;
	/* Not if another node of ours is that peer node's partner. */
	if (mpip_rkey_holder(mn, n, mpip_addr_node(mn, rx->saddr), rkey,
			     NULL)) {
		kfree(nk);
		mpip_inc(mn, MPIP_STAT_RX_PAIR_TAKEN);
		return MPIP_AUTH_E_MAC;
	}
	err = mpip_replay_commit(&nk->win, ctr);
	if (err) {
		kfree(nk);
		return err;
	}
	return mpip_node_set_keys(n, nk, k) ? 0 : MPIP_AUTH_E_DUP;
}

/* Any other CM for our node @n: the counter is inferred (auth.h). */
static int mpip_cm_open_plain(struct mpip_keys *k, const struct mpip_rx *rx)
{
	struct mpip_auth_ctx ctx;
	u64 ctr;
	int err;

	if (!k)
		return MPIP_AUTH_E_KEY;
	mpip_cm2_auth_ctx(&rx->c2, rx->proto, &ctx);
	err = mpip_auth_check(&k->ap.rx, &k->win, &rx->c2.cm, &ctx,
			      rx->c2.auth, sizeof(rx->c2.auth), &ctr);
	if (err)
		return err;
	return mpip_cm_commit(k, ctr);
}

/*
 * Seal @syn, the SYN of a fake TCP connection on a path to node @n, its
 * sequence number set: its auth block, with the node's next counter
 * (core/auth.h).  -ENOKEY if the node has no keys yet.  Caller holds RCU.
 */
int mpip_syn_seal(struct mpip_node *n, struct mpip_ftcp_seg *syn)
{
	const struct mpip_keys *k = rcu_dereference(n->keys);

	BUILD_BUG_ON(MPIP_FTCP_AUTH_LEN != MPIP_AUTH_BLOCK_LEN);
	if (!k)
		return -ENOKEY;
	if (mpip_auth_syn_seal(&k->ap.tx, mpip_cm_next_ctr(n),
			       k->ap.tx_token, syn->seq, syn->auth))
		return -EINVAL;
	return 0;
}

/*
 * Did node @n's peer send @syn, which came from where a path of @n ends,
 * and is it no copy of one it sent?  0 (its counter is then taken), or an
 * MPIP_AUTH_E_* error: E_DUP or E_OLD for a copy, E_MAC for a SYN without
 * an auth block, or with one not of this pair.  Caller holds RCU.
 */
int mpip_syn_open(struct mpip_node *n, const struct mpip_ftcp_seg *syn)
{
	struct mpip_keys *k = rcu_dereference(n->keys);
	u64 ctr;
	int err;

	if (!k || !syn->authed)
		return MPIP_AUTH_E_MAC;
	err = mpip_auth_syn_check(&k->ap.rx, &k->win, k->ap.rx_token,
				  syn->seq, syn->auth, &ctr);
	if (err)
		return err;
	return mpip_cm_commit(k, ctr);
}

/*
 * A query of node @n's pair came from @addr before the node authenticated.
 * Whoever authenticates later got our confirmation to one of the
 * addresses its queries came from; if they were not all the same, which
 * one is unknown, and only return routability proves an address then
 * (mpip_node_proved()).
 */
static void mpip_node_hs_from(struct mpip_node *n, __be32 addr)
{
	if (READ_ONCE(n->hs_addr) != addr)
		WRITE_ONCE(n->hs_addr, 0);
}

/*
 * Our own query, still unanswered, crossed the peer's: @n, the node it
 * made (mpip_addr_node()), takes the peer's key @rkey, so that both
 * exchanges end with the same pair and the hosts with one node each, not
 * two.
 */
static struct mpip_node *mpip_crossed_node(struct mpip_node *n, u64 rkey)
{
	struct mpip_keys *nk;

	if (!n || mpip_node_keyed(n) || n->lkey == rkey)
		return NULL;
	nk = mpip_keys_make(n->lkey, rkey);
	if (!nk || !mpip_node_set_keys(n, nk, NULL))
		return NULL;
	return n;
}

/*
 * The node for a query with the peer's key @rkey from @addr that names
 * none of ours, or fails under the pair it names: the one that pairs
 * with that key already, else our own unanswered query's, else our
 * responder node for it, made here.  NULL if there is no room or memory.
 * Caller holds RCU.
 */
static struct mpip_node *mpip_query_node(struct mpip_net *mn, u64 rkey,
					 __be32 addr)
{
	struct mpip_node *a = mpip_addr_node(mn, addr);
	struct mpip_keys *nk;
	struct mpip_node *n;
	u64 lkey;

	n = mpip_rkey_holder(mn, NULL, a, rkey, &lkey);
	if (n)
		return n;
	n = mpip_crossed_node(a, rkey);
	if (n || !lkey)
		return n;
	nk = mpip_keys_make(lkey, rkey);
	if (!nk)
		return NULL;
	n = mpip_node_create(mn, lkey, addr, nk, true);
	if (n && rcu_access_pointer(n->keys) != nk)
		n = NULL;	/* made by another CPU */
	return n;
}

/*
 * Authenticate the CM of @rx: find the node its token names and check
 * its MAC and counter.  A query that names no node of ours (token 0, or
 * a node this host no longer has) makes or finds a responder node and is
 * taken unauthenticated: it may only be answered.  Sets rx->node,
 * rx->authed and rx->replayed.  Returns 0 if the packet goes on, else a
 * negative MPIP_AUTH_E_* or errno (the caller drops it).  Caller holds
 * RCU.
 */
int mpip_cm_open(struct mpip_net *mn, struct mpip_rx *rx)
{
	const struct mpip_cm *cm = &rx->c2.cm;
	struct mpip_keys *k;
	struct mpip_node *n;
	u64 rkey, ctr;
	bool hs;
	int err = MPIP_AUTH_E_KEY;

	rx->node = NULL;
	rx->authed = false;
	rx->replayed = false;
	hs = mpip_cm_hs_fields(&rx->c2, &rkey, &ctr);
	rx->keyed = hs;
	n = mpip_node_lookup(mn, cm->node_id);
	if (n) {
		k = rcu_dereference(n->keys);
		err = hs ? mpip_cm_open_hs(mn, n, k, rx, rkey, ctr) :
			   mpip_cm_open_plain(k, rx);
		if (!err) {
			rx->node = n;
			rx->authed = true;
			mpip_rr_earn(n);
			return 0;
		}
	}
	/*
	 * A query for no node of ours, or one that does not verify (the
	 * peer lost its node and our keys): a first query.  A copy of one
	 * that did verify before is a replay, not a new handshake.
	 */
	if (hs && (cm->flags & MPIP_CM_F_ENABLE) &&
	    (!n || err == MPIP_AUTH_E_MAC || err == MPIP_AUTH_E_KEY)) {
		n = mpip_query_node(mn, rkey, rx->saddr);
		if (!n)	/* -ENOSPC: no room for a stranger's node */
			return mpip_table_full(&mn->nodes, true) ?
			       -ENOSPC : -ENOMEM;
		/*
		 * Not for a node whose peer authenticated: that peer holds
		 * our key and sends no such query.  The key in a query is
		 * no secret to whoever saw one, and a counter far ahead
		 * from it would shut the peer's own CMs out of the window.
		 */
		if (READ_ONCE(n->verified))
			return err;
		mpip_node_hs_from(n, rx->saddr);
		k = rcu_dereference(n->keys);
		/* Its counter: a replayed query is not answered twice. */
		err = k ? mpip_cm_commit(k, ctr) : MPIP_AUTH_E_KEY;
		if (!err) {
			rx->node = n;
			return 0;
		}
	}
	/*
	 * A data packet seen before (a UDP query rides on one) goes on, as
	 * plain IP would, but nothing is learned from its CM.
	 */
	if (n && (err == MPIP_AUTH_E_DUP || err == MPIP_AUTH_E_OLD) &&
	    !(cm->flags & MPIP_CM_F_CTRL)) {
		rx->node = n;
		rx->replayed = true;
		return 0;
	}
	return err;
}
