// SPDX-License-Identifier: GPL-2.0
/*
 * mpip routing rules (mpipctl rule): which paths the packets of a local
 * MPIP session may take.  The rules themselves, their checks and their
 * matching are in the portable core (core/rule.c).
 *
 * Each namespace publishes one table with RCU.  A change builds a new
 * table next to the current one under rules_lock, publishes it and frees
 * the old one after a grace period; the output hook looks packets up in
 * whatever table it finds, under the RCU read lock netfilter holds, in
 * the compiled form the core writes for each table when it is built.  A
 * namespace without rules has no table, and its packets pay one pointer
 * read.
 */
#include <linux/ip.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/u64_stats_sync.h>

#include "mpip.h"

/* Per CPU, per rule of a table: what matched it. */
struct mpip_rule_pcpu {
	u64_stats_t pkts;
	u64_stats_t bytes;
	struct u64_stats_sync syncp;
};

/*
 * A published table.  The counters of its rules are the base in each
 * struct mpip_rule (what earlier tables counted for it) plus @cnt.
 * @told[i]: how many times rule i's packet count had reached a multiple
 * of rule_event_pkts when last looked at (mpip_rules_events()); read and
 * written under rules_lock only.  @fast: the rules compiled, what the
 * packet path matches; fixed once the table is published.
 */
struct mpip_rule_table {
	struct rcu_head rcu;
	struct mpip_rule_fast *fast;		/* @t.n entries */
	struct mpip_rule_pcpu __percpu *cnt;	/* @t.n entries per CPU */
	u64 *told;				/* @t.n entries */
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

static void mpip_rule_table_free(struct mpip_rule_table *w)
{
	if (w) {
		free_percpu(w->cnt);
		kvfree(w->told);
		kvfree(w->fast);
		kvfree(w);
	}
}

static void mpip_rule_table_free_rcu(struct rcu_head *head)
{
	mpip_rule_table_free(container_of(head, struct mpip_rule_table, rcu));
}

/*
 * Give @w (its @t.n rules written) zeroed counters and the compiled form
 * of its rules: 0 or -ENOMEM (then the caller frees @w with
 * mpip_rule_table_free()).
 */
static int mpip_rule_table_finish(struct mpip_rule_table *w)
{
	struct mpip_rule_pcpu *c;
	unsigned int cpu;
	u32 i;

	w->fast = kvmalloc_array(w->t.n, sizeof(*w->fast), GFP_KERNEL);
	w->told = kvcalloc(w->t.n, sizeof(*w->told), GFP_KERNEL);
	w->cnt = __alloc_percpu_gfp(w->t.n * sizeof(*c), __alignof__(*c),
				    GFP_KERNEL);
	if (!w->fast || !w->told || !w->cnt)
		return -ENOMEM;
	mpip_rules_compile(&w->t, w->fast);
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(w->cnt, cpu);
		for (i = 0; i < w->t.n; i++)
			u64_stats_init(&c[i].syncp);
	}
	return 0;
}

/* What the CPUs counted for rule @i of @w, added to @r's counters. */
static void mpip_rule_table_sum(const struct mpip_rule_table *w, u32 i,
				struct mpip_rule *r)
{
	const struct mpip_rule_pcpu *c;
	unsigned int cpu, start;
	u64 pkts, bytes;

	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(w->cnt, cpu) + i;
		do {
			start = u64_stats_fetch_begin(&c->syncp);
			pkts = u64_stats_read(&c->pkts);
			bytes = u64_stats_read(&c->bytes);
		} while (u64_stats_fetch_retry(&c->syncp, start));
		r->pkts += pkts;
		r->bytes += bytes;
	}
}

/*
 * Carry the counts of @old's rules into the rules of @w with the same
 * preference (both tables are sorted by it), and what was told of them.
 * What CPUs still count in @old until the grace period ends is lost.
 */
static void mpip_rule_table_carry(const struct mpip_rule_table *old,
				  struct mpip_rule_table *w)
{
	u32 i = 0, j;

	for (j = 0; j < w->t.n; j++) {
		while (i < old->t.n && old->t.r[i].pref < w->t.r[j].pref)
			i++;
		if (i < old->t.n && old->t.r[i].pref == w->t.r[j].pref) {
			mpip_rule_table_sum(old, i, &w->t.r[j]);
			w->told[j] = old->told[i];
		}
	}
}

/*
 * Publish @w (NULL: no rules; @w's counters allocated) and free the
 * table it replaces.
 */
static void mpip_rules_publish(struct mpip_net *mn, struct mpip_rule_table *w)
{
	struct mpip_rule_table *old = mpip_rules_cur(mn);

	if (w && !w->t.n) {
		mpip_rule_table_free(w);
		w = NULL;
	}
	if (w && old)
		mpip_rule_table_carry(old, w);
	rcu_assign_pointer(mn->rules, w);
	if (old)
		call_rcu(&old->rcu, mpip_rule_table_free_rcu);
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
	r->pkts = 0;
	r->bytes = 0;
	err = mpip_rules_add(cur ? &cur->t : &empty, r, replace, &w->t);
	if (err) {
		mpip_rule_msg(extack, err);
		kvfree(w);
		err = mpip_rule_errno(err);
		goto out;
	}
	err = mpip_rule_table_finish(w);
	if (err) {
		mpip_rule_table_free(w);
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
	if (w->t.n) {
		err = mpip_rule_table_finish(w);
		if (err) {
			mpip_rule_table_free(w);
			goto out;
		}
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
 * Copy the @i-th rule, with its counters, into @r; false past the last.
 * For dumps: the table may change between two calls.
 */
bool mpip_rules_get(struct mpip_net *mn, u32 i, struct mpip_rule *r)
{
	struct mpip_rule_table *w;
	bool ok = false;

	rcu_read_lock();
	w = rcu_dereference(mn->rules);
	if (w && i < w->t.n) {
		*r = w->t.r[i];
		mpip_rule_table_sum(w, i, r);
		ok = true;
	}
	rcu_read_unlock();
	return ok;
}

/*
 * Count @skb (its segments, if GSO) for rule @i of @w, in this CPU's
 * block.  Senders run in process context as well as in soft-IRQs: see
 * mpip_path_count() in paths.c for the _irqsave.
 */
static void mpip_rule_count(struct mpip_rule_table *w, u32 i,
			    const struct sk_buff *skb)
{
	unsigned int segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	struct mpip_rule_pcpu *c = get_cpu_ptr(w->cnt);
	unsigned long flags;

	c += i;
	flags = u64_stats_update_begin_irqsave(&c->syncp);
	u64_stats_add(&c->pkts, max(segs, 1U));
	u64_stats_add(&c->bytes, skb->len);
	u64_stats_update_end_irqrestore(&c->syncp, flags);
	put_cpu_ptr(w->cnt);
}

/*
 * The rule for outgoing packet @skb, counted there, or NULL (mode all).
 * The rule stays valid for as long as the caller's RCU read-side
 * section.
 */
const struct mpip_rule *mpip_rule_for(struct mpip_net *mn,
				      const struct sk_buff *skb)
{
	struct mpip_rule_table *w = rcu_dereference(mn->rules);
	struct mpip_rule_key k;
	u8 buf[60 + 20];
	unsigned int n;
	const u8 *h;
	int i;

	if (likely(!w))
		return NULL;
	n = min_t(unsigned int, skb->len - skb_network_offset(skb),
		  sizeof(buf));
	h = skb_header_pointer(skb, skb_network_offset(skb), n, buf);
	if (!h || mpip_rule_key_parse(h, n, skb->mark, &k))
		return NULL;
	i = mpip_rules_match(w->fast, w->t.n, &k);
	if (i < 0)
		return NULL;
	mpip_rule_count(w, i, skb);
	return &w->t.r[i];
}

/*
 * May a packet under rule @r go on path @p: does its dev or nodev list
 * allow the path's link, and is the path metered at neither end if the
 * rule says nometered?
 */
bool mpip_rule_allows(struct mpip_net *mn, const struct mpip_rule *r,
		      const struct mpip_path *p)
{
	return mpip_rule_link_ok(r, p->ifindex) &&
	       !(r->nometered && mpip_path_metered(mn, p));
}

/*
 * With rule_event_pkts N, an event for each rule whose packet count
 * reached a multiple of N since the last call (the GC work: once a
 * second while the namespace has sessions).  A rule whose count has
 * passed several multiples since gets one event.
 */
void mpip_rules_events(struct mpip_net *mn)
{
	u32 every = READ_ONCE(mn->cfg.rule_event_pkts);
	struct mpip_rule_table *w;
	struct mpip_rule r;
	u64 times;
	u32 i;

	if (!every || !rcu_access_pointer(mn->rules))
		return;
	mutex_lock(&mn->rules_lock);
	w = mpip_rules_cur(mn);
	for (i = 0; w && i < w->t.n; i++) {
		r = w->t.r[i];
		mpip_rule_table_sum(w, i, &r);
		times = div_u64(r.pkts, every);
		if (times > w->told[i])
			mpip_event_rule(mn, &r);
		/* smaller after rule_event_pkts grew */
		w->told[i] = times;
	}
	mutex_unlock(&mn->rules_lock);
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
	mpip_rule_table_free(w);
	mutex_destroy(&mn->rules_lock);
}
