// SPDX-License-Identifier: GPL-2.0
/*
 * mpip routing rules (mpipctl rule): which paths the packets of a local
 * MPIP session may take.  The rules themselves, their checks and their
 * matching are in the portable core (core/rule.c).
 *
 * Each namespace publishes one table with RCU.  A change builds a new
 * table next to the current one under rules_lock, publishes it and frees
 * the old one after a grace period; the output hook looks packets up in
 * whatever table it finds, under the RCU read lock netfilter holds.  A
 * namespace without rules has no table, and its packets pay one pointer
 * read.
 */
#include <linux/ip.h>
#include <linux/slab.h>

#include "mpip.h"

struct mpip_rule_table {
	struct rcu_head rcu;
	struct mpip_rules t;	/* last: its rules follow */
};

static struct mpip_rule_table *mpip_rules_cur(struct mpip_net *mn)
{
	return rcu_dereference_protected(mn->rules,
					 lockdep_is_held(&mn->rules_lock));
}

static struct mpip_rule_table *mpip_rule_table_alloc(u32 n)
{
	return kvzalloc(offsetof(struct mpip_rule_table, t) +
			mpip_rules_size(n), GFP_KERNEL);
}

/* Publish @w (NULL: no rules) and free the table it replaces. */
static void mpip_rules_publish(struct mpip_net *mn, struct mpip_rule_table *w)
{
	struct mpip_rule_table *old = mpip_rules_cur(mn);

	if (w && !w->t.n) {
		kvfree(w);
		w = NULL;
	}
	rcu_assign_pointer(mn->rules, w);
	if (old)
		kvfree_rcu(old, rcu);
}

/* The core's message for @err: static strings, as extack wants them. */
static void mpip_rule_msg(struct netlink_ext_ack *extack, int err)
{
	if (extack)
		extack->_msg = mpip_rule_strerror(err);
}

static int mpip_rule_errno(int err)
{
	switch (err) {
	case MPIP_RULE_E_EXIST:
		return -EEXIST;
	case MPIP_RULE_E_NOENT:
		return -ENOENT;
	case MPIP_RULE_E_FULL:
	case MPIP_RULE_E_NOPREF:
		return -ENOSPC;
	default:
		return -EINVAL;
	}
}

/*
 * Add rule @r (checked here), or with @replace put it in the place of the
 * rule of the same preference.  0 or a negative errno, with a message.
 */
int mpip_rules_add_one(struct mpip_net *mn, struct mpip_rule *r, bool replace,
		       struct netlink_ext_ack *extack)
{
	static const struct mpip_rules empty;
	struct mpip_rule_table *cur, *w;
	int err;

	if (r->mode == MPIP_MODE_SINGLE || r->mode == MPIP_MODE_PROTECTED) {
		NL_SET_ERR_MSG(extack, "modes single and protected are not built yet");
		return -EOPNOTSUPP;
	}
	err = mpip_rule_check(r);
	if (err) {
		mpip_rule_msg(extack, err);
		return -EINVAL;
	}
	mutex_lock(&mn->rules_lock);
	cur = mpip_rules_cur(mn);
	w = mpip_rule_table_alloc((cur ? cur->t.n : 0) + 1);
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	err = mpip_rules_add(cur ? &cur->t : &empty, r, replace, &w->t);
	if (err) {
		mpip_rule_msg(extack, err);
		kvfree(w);
		err = mpip_rule_errno(err);
		goto out;
	}
	mpip_rules_publish(mn, w);
out:
	mutex_unlock(&mn->rules_lock);
	return err;
}

/* Remove the rule of preference @pref: 0, -ENOENT or -ENOMEM. */
int mpip_rules_del_one(struct mpip_net *mn, u32 pref,
		       struct netlink_ext_ack *extack)
{
	struct mpip_rule_table *cur, *w;
	int err = -ENOENT;

	mutex_lock(&mn->rules_lock);
	cur = mpip_rules_cur(mn);
	if (!cur)
		goto out_noent;
	w = mpip_rule_table_alloc(cur->t.n);
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	err = mpip_rules_del(&cur->t, pref, &w->t);
	if (err) {
		kvfree(w);
		err = mpip_rule_errno(err);
		goto out_noent;
	}
	mpip_rules_publish(mn, w);
	goto out;
out_noent:
	mpip_rule_msg(extack, MPIP_RULE_E_NOENT);
out:
	mutex_unlock(&mn->rules_lock);
	return err;
}

void mpip_rules_flush(struct mpip_net *mn)
{
	mutex_lock(&mn->rules_lock);
	mpip_rules_publish(mn, NULL);
	mutex_unlock(&mn->rules_lock);
}

/*
 * Copy the @i-th rule into @r; false past the last.  For dumps: the
 * table may change between two calls.
 */
bool mpip_rules_get(struct mpip_net *mn, u32 i, struct mpip_rule *r)
{
	struct mpip_rule_table *w;
	bool ok = false;

	rcu_read_lock();
	w = rcu_dereference(mn->rules);
	if (w && i < w->t.n) {
		*r = w->t.r[i];
		ok = true;
	}
	rcu_read_unlock();
	return ok;
}

/*
 * The rule for outgoing packet @skb, or NULL (mode all).  The rule stays
 * valid for as long as the caller's RCU read-side section.
 */
const struct mpip_rule *mpip_rule_for(struct mpip_net *mn,
				      const struct sk_buff *skb)
{
	struct mpip_rule_table *w = rcu_dereference(mn->rules);
	struct mpip_rule_key k;
	u8 buf[60 + 20];
	unsigned int n;
	const u8 *h;

	if (likely(!w))
		return NULL;
	n = min_t(unsigned int, skb->len - skb_network_offset(skb),
		  sizeof(buf));
	h = skb_header_pointer(skb, skb_network_offset(skb), n, buf);
	if (!h || mpip_rule_key_parse(h, n, skb->mark, &k))
		return NULL;
	return mpip_rules_lookup(&w->t, &k);
}

void mpip_rules_init(struct mpip_net *mn)
{
	mutex_init(&mn->rules_lock);
	RCU_INIT_POINTER(mn->rules, NULL);
}

/* The namespace goes away, its hooks gone and their readers with them. */
void mpip_rules_destroy(struct mpip_net *mn)
{
	struct mpip_rule_table *w;

	mutex_lock(&mn->rules_lock);
	w = mpip_rules_cur(mn);
	RCU_INIT_POINTER(mn->rules, NULL);
	mutex_unlock(&mn->rules_lock);
	kvfree(w);
	mutex_destroy(&mn->rules_lock);
}
