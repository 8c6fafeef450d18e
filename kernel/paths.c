// SPDX-License-Identifier: GPL-2.0
/*
 * mpip paths (paper Table 5, sections 3.4 and 3.5.1): every local address
 * times every address a remote node advertised.  A path is usable when a
 * route to the remote address leaves through the interface that owns the
 * local address; its packets get that route, so no policy routing is
 * needed.  A path carries data only once the remote node reported a delay
 * for it, and in proportion to its weight (Algorithm 1).
 *
 * Paths live in the slots of their node; slot i holds path ID i + 1.  The
 * slots are written under the node's lock and read under RCU.
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/ip.h>
#include <net/ip_fib.h>
#include <net/route.h>
#include <net/sch_generic.h>

#include "mpip.h"

static void mpip_path_free_rcu(struct rcu_head *head)
{
	struct mpip_path *p = container_of(head, struct mpip_path, rcu);

	dst_cache_destroy(&p->dst);
	free_percpu(p->pcpu);
	kfree(p);
}

static struct mpip_path *mpip_path_alloc(u8 id, const struct mpip_laddr *la,
					 __be32 daddr)
{
	struct mpip_path *p = kzalloc(sizeof(*p), GFP_ATOMIC);
	int cpu;

	if (!p)
		return NULL;
	p->pcpu = alloc_percpu_gfp(struct mpip_path_pcpu, GFP_ATOMIC);
	if (!p->pcpu)
		goto err;
	if (dst_cache_init(&p->dst, GFP_ATOMIC))
		goto err_pcpu;
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(p->pcpu, cpu)->syncp);
	p->id = id;
	p->saddr = la->addr;
	p->daddr = daddr;
	p->ifindex = la->ifindex;
	p->dport = htons(MPIP_CTRL_PORT);
	p->state = MPIP_PATH_PROBING;
	p->weight = MPIP_WEIGHT_MAX / 2;
	p->last_fb = jiffies;
	spin_lock_init(&p->lock);
	mpip_path_delay_init(&p->delay);
	mpip_rr_init(p);
	return p;

err_pcpu:
	free_percpu(p->pcpu);
err:
	kfree(p);
	return NULL;
}

/* A path slot of @n, for the holder of its lock. */
static struct mpip_path *mpip_path_slot(struct mpip_node *n,
					unsigned int slot)
{
	return rcu_dereference_protected(n->paths[slot],
					 lockdep_is_held(&n->lock));
}

/* Unpublish the path in @slot.  Caller holds the node's lock. */
static void mpip_path_remove(struct mpip_node *n, unsigned int slot)
{
	struct mpip_path *p = mpip_path_slot(n, slot);
	unsigned int hi = n->path_hi;

	RCU_INIT_POINTER(n->paths[slot], NULL);
	call_rcu(&p->rcu, mpip_path_free_rcu);
	while (hi && !rcu_access_pointer(n->paths[hi - 1]))
		hi--;
	WRITE_ONCE(n->path_hi, hi);
}

/*
 * Free all paths of a node that was unlinked from the node table.  A CPU
 * that found the node before may still want to add or remove paths
 * (mpip_paths_sync()): the dead mark, set under the same lock, stops it.
 */
void mpip_paths_release(struct mpip_node *n)
{
	unsigned int i;

	spin_lock_bh(&n->lock);
	n->dead = true;
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		if (mpip_path_slot(n, i))
			mpip_path_remove(n, i);
	}
	spin_unlock_bh(&n->lock);
}

/*
 * Is there a route (not just the "assume on link" fallback of an output
 * lookup) from @la to @daddr through the interface that owns @la?
 */
static bool mpip_path_routable(struct net *net, const struct mpip_laddr *la,
			       __be32 daddr)
{
	struct flowi4 fl4 = {
		.daddr = daddr,
		.saddr = la->addr,
		.flowi4_oif = la->ifindex,
		.flowi4_scope = RT_SCOPE_UNIVERSE,
	};
	struct fib_result res;
	bool ok;

	rcu_read_lock();
	ok = !fib_lookup(net, &fl4, &res, 0) && res.type == RTN_UNICAST;
	rcu_read_unlock();
	return ok;
}

/* Does a path's interface have a working link? */
bool mpip_path_dev_up(struct net *net, int ifindex)
{
	struct net_device *dev;
	bool up;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(net, ifindex);
	up = dev && netif_running(dev) && netif_carrier_ok(dev);
	rcu_read_unlock();
	return up;
}

static u32 mpip_paths_avg_weight(struct mpip_node *n)
{
	unsigned int i, k = 0;
	struct mpip_path *p;
	u32 sum = 0;

	rcu_read_lock();
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = rcu_dereference(n->paths[i]);
		if (p && READ_ONCE(p->state) == MPIP_PATH_UP) {
			sum += READ_ONCE(p->weight);
			k++;
		}
	}
	rcu_read_unlock();
	return k ? max_t(u32, sum / k, MPIP_WEIGHT_MIN) : MPIP_WEIGHT_MAX / 2;
}

/* Change a path's state; a path that comes up gets the average weight. */
void mpip_path_set_state(struct mpip_net *mn, struct mpip_node *n,
			 struct mpip_path *p, int state)
{
	int old;

	if (state == MPIP_PATH_UP)
		WRITE_ONCE(p->weight, mpip_paths_avg_weight(n));
	old = xchg(&p->state, state);
	if (old == state)
		return;
	if (state == MPIP_PATH_UP)
		WRITE_ONCE(p->up_again, old == MPIP_PATH_DOWN ? jiffies | 1 : 0);
	if (state == MPIP_PATH_UP) {
		mpip_inc(mn, MPIP_STAT_PATH_UP);
		mpip_event_path(mn, n, p, state);
	} else if (old == MPIP_PATH_UP) {
		mpip_inc(mn, MPIP_STAT_PATH_DOWN);
		mpip_event_path(mn, n, p, state);
	}
	WRITE_ONCE(p->pending, 0);
}

/* Re-evaluate an existing path after an address or link change. */
static void mpip_path_refresh(struct mpip_net *mn, struct mpip_node *n,
			      struct mpip_path *p, const struct mpip_laddr *la)
{
	int state = READ_ONCE(p->state);

	if (!mpip_path_dev_up(mn->net, la->ifindex)) {
		if (state != MPIP_PATH_NOROUTE)
			mpip_path_set_state(mn, n, p, MPIP_PATH_DOWN);
		return;
	}
	if (!mpip_path_routable(mn->net, la, p->daddr))
		mpip_path_set_state(mn, n, p, MPIP_PATH_NOROUTE);
	else if (state == MPIP_PATH_NOROUTE)
		mpip_path_set_state(mn, n, p, MPIP_PATH_PROBING);
}

/*
 * Give path @p the tier and metered bit node @n says its remote address
 * has (none if @n does not list it).  Under n->lock.
 */
static void mpip_path_set_rpol(const struct mpip_node *n, struct mpip_path *p)
{
	const struct mpip_cm_lpol *l = &n->addr_lpol;
	unsigned int i;

	for (i = 0; i < n->naddrs; i++)
		if (n->addrs[i] == p->daddr)
			break;
	if (i == n->naddrs) {
		WRITE_ONCE(p->rtier, 0);
		WRITE_ONCE(p->rmetered, false);
		return;
	}
	WRITE_ONCE(p->rtier, mpip_cm_lpol_tier(l, i));
	WRITE_ONCE(p->rmetered, !!(l->metered & BIT(i)));
}

static const struct mpip_laddr *mpip_laddr_find(const struct mpip_laddr *la,
						unsigned int n, __be32 addr)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (la[i].addr == addr)
			return &la[i];
	return NULL;
}

/*
 * The pair's path, if it has one; if not, *@free is a free slot, or -1.
 * Caller holds the node's lock.
 */
static struct mpip_path *mpip_path_locate(struct mpip_node *n, __be32 saddr,
					  __be32 daddr, int *free)
{
	struct mpip_path *p;
	int i;

	*free = -1;
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = mpip_path_slot(n, i);
		if (!p) {
			if (*free < 0)
				*free = i;
		} else if (p->saddr == saddr && p->daddr == daddr) {
			return p;
		}
	}
	return NULL;
}

/*
 * Add a path, to the peer's control port or, if @rport is not 0, to the
 * NAT's port @rport learned from its CMs; true if it is to be probed
 * (neither unroutable nor down).
 */
static bool mpip_path_add(struct mpip_net *mn, struct mpip_node *n,
			  unsigned int slot, const struct mpip_laddr *la,
			  __be32 daddr, __be16 rport)
{
	struct mpip_path *p = mpip_path_alloc(slot + 1, la, daddr);

	if (!p) {
		mpip_inc(mn, MPIP_STAT_DROP_NOMEM);
		return false;
	}
	if (rport) {
		p->dport = rport;
		p->learned = true;
	}
	p->encap = rport ||
		   mpip_link_nat_mode(mn, la->ifindex) == MPIP_NAT_MODE_UDP ?
		   MPIP_ENCAP_UDP : MPIP_ENCAP_NONE;
	if (!mpip_path_routable(mn->net, la, daddr))
		p->state = MPIP_PATH_NOROUTE;
	else if (!mpip_path_dev_up(mn->net, la->ifindex))
		p->state = MPIP_PATH_DOWN;
	rcu_assign_pointer(n->paths[slot], p);
	if (slot >= n->path_hi)
		WRITE_ONCE(n->path_hi, slot + 1);
	return p->state == MPIP_PATH_PROBING;
}

/*
 * Bring @n's paths in line with the local addresses and the addresses the
 * node advertised: remove paths whose addresses went away (and learned
 * ones to an address the node now lists), add the missing pairs, re-check
 * routes and links of the others.  Returns true if it
 * added a path that is waiting for its first probe.
 */
bool mpip_paths_sync(struct mpip_net *mn, struct mpip_node *n)
{
	struct mpip_laddr la[MPIP_CM_MAX_ADDRS];
	const struct mpip_laddr *l;
	unsigned int nla, i, j;
	struct mpip_path *p;
	bool probe = false;
	int slot;

	nla = mpip_local_addrs(mn, la, ARRAY_SIZE(la), false);

	spin_lock_bh(&n->lock);
	if (n->dead) {
		spin_unlock_bh(&n->lock);
		return false;
	}
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = mpip_path_slot(n, i);
		if (!p)
			continue;
		l = mpip_laddr_find(la, nla, p->saddr);
		if (!l || l->ifindex != p->ifindex ||
		    p->learned == mpip_addr_listed(p->daddr, n->addrs,
						   n->naddrs))
			mpip_path_remove(n, i);
		else
			mpip_path_refresh(mn, n, p, l);
	}
	for (i = 0; i < nla; i++) {
		for (j = 0; j < n->naddrs; j++) {
			if (mpip_path_locate(n, la[i].addr, n->addrs[j],
					     &slot) || slot < 0)
				continue;
			probe |= mpip_path_add(mn, n, slot, &la[i],
					       n->addrs[j], 0);
		}
	}
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = mpip_path_slot(n, i);
		if (p)
			mpip_path_set_rpol(n, p);
	}
	spin_unlock_bh(&n->lock);
	return probe;
}

/* How many of @n's paths were learned.  Caller holds the node's lock. */
static unsigned int mpip_paths_learned(struct mpip_node *n)
{
	unsigned int i, k = 0;
	struct mpip_path *p;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = mpip_path_slot(n, i);
		k += p && p->learned;
	}
	return k;
}

/*
 * Under the node's lock: move learned path @p to port @rport, or, with
 * no path between @la's address and @raddr, make one there, within
 * MPIP_LEARNED_MAX and a free slot.  Returns whether anything changed.
 */
static bool mpip_path_learn_locked(struct mpip_net *mn, struct mpip_node *n,
				   const struct mpip_laddr *la, __be32 raddr,
				   __be16 rport)
{
	struct mpip_path *p;
	int slot;

	/* an address the peer lists is its own end: no NAT in between */
	if (!n->naddrs || mpip_addr_listed(raddr, n->addrs, n->naddrs))
		return false;
	p = mpip_path_locate(n, la->addr, raddr, &slot);
	if (p) {
		if (!p->learned || p->dport == rport)
			return false;
		spin_lock(&p->lock);
		WRITE_ONCE(p->dport, rport);
		spin_unlock(&p->lock);
		return true;
	}
	if (slot < 0 || mpip_paths_learned(n) >= MPIP_LEARNED_MAX)
		return false;
	mpip_path_add(mn, n, slot, la, raddr, rport);
	return true;
}

/*
 * An authenticated CM of node @n, not seen before, came inside UDP or as
 * a control datagram to our address @laddr from @raddr:@rport.  If no
 * path of ours goes there, that is the NAT's end of one of the peer's
 * paths: a path back to it, on which the peer's packets come in, and
 * ours go out, inside UDP.  It carries data once it answered its probes
 * (rr.c), so a CM copied and sent from elsewhere makes a path that never
 * does.  One that moved to another port (the NAT rebound it) follows, as
 * the CM proves.  Caller holds RCU.
 */
void mpip_path_learn(struct mpip_net *mn, struct mpip_node *n, __be32 laddr,
		     __be32 raddr, __be16 rport)
{
	struct mpip_laddr la[MPIP_CM_MAX_ADDRS];
	const struct mpip_laddr *l;
	struct mpip_path *p;
	unsigned int nla;
	bool learned;

	p = mpip_path_find(n, laddr, raddr);
	if (p && (!p->learned || READ_ONCE(p->dport) == rport))
		return;
	nla = mpip_local_addrs(mn, la, ARRAY_SIZE(la), false);
	l = mpip_laddr_find(la, nla, laddr);
	if (!l || mpip_link_nat_mode(mn, l->ifindex) == MPIP_NAT_MODE_NONE)
		return;
	spin_lock_bh(&n->lock);
	learned = !n->dead && mpip_path_learn_locked(mn, n, l, raddr, rport);
	spin_unlock_bh(&n->lock);
	if (learned)
		mpip_inc(mn, MPIP_STAT_PATH_LEARNED);
}

/*
 * Bytes waiting in the qdisc of device @ifindex, or MPIP_BACKLOG_UNKNOWN.
 * Only a root qdisc that keeps its own count can tell (netem, tbf, htb,
 * fq_codel ... at the root of a device); a multiqueue root, a lockless
 * qdisc with per-CPU counts or a device without a queue cannot.  A racy
 * read: a hint, not a count.  Caller holds RCU.
 */
static u32 mpip_dev_backlog(struct net *net, int ifindex)
{
	struct net_device *dev = dev_get_by_index_rcu(net, ifindex);
	struct Qdisc *q;

	if (!dev)
		return MPIP_BACKLOG_UNKNOWN;
	q = rcu_dereference(dev->qdisc);
	if (!q || (q->flags & (TCQ_F_BUILTIN | TCQ_F_MQROOT)) ||
	    qdisc_is_percpu_stats(q))
		return MPIP_BACKLOG_UNKNOWN;
	return min_t(u32, READ_ONCE(q->qstats.backlog),
		     MPIP_BACKLOG_UNKNOWN - 1);
}

/*
 * The path to send on instead of @cand[@pick] because its device's queue
 * here is shorter for its weight (core/path.c: mpip_paths_steer()), or
 * @pick.
 */
static unsigned int mpip_path_steer(struct mpip_net *mn,
				    struct mpip_path *const *cand,
				    const u32 *w, unsigned int k,
				    unsigned int pick)
{
	u32 q[MPIP_MAX_PATHS], dev[MPIP_MAX_PATHS], backlog[MPIP_MAX_PATHS];
	u32 far[MPIP_MAX_PATHS];
	struct mpip_steer st = {
		.w = w, .dev = dev, .far = far, .backlog = backlog, .q = q,
	};
	unsigned int i, j;
	u32 alt;

	/* nothing queued here, or unknown: no path can do better */
	backlog[pick] = mpip_dev_backlog(mn->net, cand[pick]->ifindex);
	if (!backlog[pick] || backlog[pick] == MPIP_BACKLOG_UNKNOWN)
		return pick;
	for (i = 0; i < k; i++) {
		dev[i] = cand[i]->ifindex;
		far[i] = (__force u32)cand[i]->daddr;
		if (i != pick)
			backlog[i] = mpip_dev_backlog(mn->net,
						      cand[i]->ifindex);
		q[i] = READ_ONCE(cand[i]->qdelay);
	}
	alt = mpip_paths_steer(&st, k, pick);
	if (!alt)
		return pick;
	j = mpip_weights_pick_mask(w, k, alt, get_random_u32());
	if (j == MPIP_PATH_NONE)
		return pick;
	mpip_inc(mn, MPIP_STAT_TX_STEERED);
	return j;
}

/*
 * A path's tier: the higher of its link's (mpipctl link set dev IF tier
 * N; backup is 1) and the one the peer gives its address.  0 is the main
 * tier.
 */
unsigned int mpip_path_tier(struct mpip_net *mn, const struct mpip_path *p)
{
	unsigned int tier = mpip_link_tier(mn, p->ifindex);

	return max_t(unsigned int, tier, READ_ONCE(p->rtier));
}

/*
 * Is @p metered at either end: its link (mpipctl link set dev IF
 * metered), or the peer's address by what the peer says?
 */
bool mpip_path_metered(struct mpip_net *mn, const struct mpip_path *p)
{
	return mpip_link_metered(mn, p->ifindex) || READ_ONCE(p->rmetered);
}

/*
 * Ranks from here on: paths back up just now, and from the next on, paths
 * the loss oracle finds lossy (mpip_path_rank()).
 */
#define MPIP_RANK_BACK	(MPIP_LINK_TIER_MAX + 1)
#define MPIP_RANK_LOSSY	(2 * MPIP_RANK_BACK)
#define MPIP_RANKS	(3 * MPIP_RANK_BACK)

/*
 * How a path up ranks for data, best first: by its tier; after every
 * path of any tier, by tier again, a path that came back up less than
 * MPIP_BACKUP_RETURN ago: not yet trusted to take the data back from a
 * path of a higher tier, but better than none; last, by tier, the paths
 * that lose too many probes (loss_pct: heartbeat.c; a verdict from before
 * the oracle was turned off counts no more).  mpip_paths_usable() asks
 * only while the namespace or the peer has backup links, or the loss
 * oracle is on.
 */
static unsigned int mpip_path_rank(struct mpip_net *mn, struct mpip_path *p)
{
	unsigned long t = READ_ONCE(p->up_again);
	unsigned int tier = mpip_path_tier(mn, p);

	if (READ_ONCE(p->lossy) && READ_ONCE(mn->cfg.loss_pct))
		return MPIP_RANK_LOSSY + tier;
	if (t && time_before(jiffies, t + MPIP_BACKUP_RETURN))
		return MPIP_RANK_BACK + tier;
	return tier;
}

/*
 * Is @p up and of the first rank (mpip_path_rank()): on no backup link,
 * not back up just now, not lossy?  Then data may take it whatever the
 * other paths are.
 */
bool mpip_path_first_rank(struct mpip_net *mn, struct mpip_path *p)
{
	return READ_ONCE(p->state) == MPIP_PATH_UP && !mpip_path_rank(mn, p);
}

/*
 * Note the tier data to @n goes over now; a change is an event, a
 * failover (to a higher tier) or a failback.  Called per packet: one
 * read when nothing changed.
 */
static void mpip_paths_note_tier(struct mpip_net *mn, struct mpip_node *n,
				 unsigned int tier)
{
	unsigned long old = READ_ONCE(n->data_tier);

	if (old == tier)
		return;
	if (cmpxchg(&n->data_tier, old, tier) != old)
		return;		/* another CPU saw the change first */
	mpip_event_tier(mn, n, tier > old ? MPIP_EVENT_FAILOVER :
			MPIP_EVENT_FAILBACK, tier);
}

/*
 * The paths up that @rule allows (all if NULL), into @cand; their count.
 * With backup links or the loss oracle on, only those of the first rank
 * that has any (mpip_path_rank()): the lowest tier with a path up, else
 * paths that came back just now, else lossy ones.  Which tier that is,
 * when the rule does not choose links itself, is noted
 * (mpip_paths_note_tier()).  Caller holds RCU.
 */
static unsigned int mpip_paths_usable(struct mpip_net *mn,
				      struct mpip_node *n,
				      const struct mpip_rule *rule,
				      struct mpip_path **cand)
{
	bool tiers = READ_ONCE(mn->nbackup) || READ_ONCE(n->addr_lpol.tiers) ||
		     READ_ONCE(mn->cfg.loss_pct);
	unsigned int i, k = 0, j, best = MPIP_RANKS;
	u8 rank[MPIP_MAX_PATHS];
	bool back = false;
	struct mpip_path *p;

	for (i = 0; i < mpip_path_slots(n); i++) {
		p = rcu_dereference(n->paths[i]);
		if (!p || READ_ONCE(p->state) != MPIP_PATH_UP)
			continue;
		if (rule && !mpip_rule_allows(mn, rule, p))
			continue;
		rank[k] = tiers ? mpip_path_rank(mn, p) : 0;
		best = min_t(unsigned int, best, rank[k]);
		cand[k++] = p;
	}
	if (k && (!rule || !mpip_rule_restricts(rule)))
		mpip_paths_note_tier(mn, n, best % MPIP_RANK_BACK);
	if (!tiers)
		return k;
	for (i = 0, j = 0; i < k; i++) {
		if (rank[i] == best)
			cand[j++] = cand[i];
		else if (best < MPIP_RANK_BACK && rank[i] >= MPIP_RANK_BACK &&
			 rank[i] - MPIP_RANK_BACK < best)
			back = true;	/* a lower tier's, held back */
	}
	if (back)
		mpip_inc(mn, MPIP_STAT_BACKUP_HOLD);
	return j;
}

/*
 * How long @p may go without a delay report, in jiffies: path_timeout_ms
 * beyond the round trip of its reports (mpip_rtt_timeout()), so that a
 * path whose round trip is longer (a satellite link's, a cellular
 * uplink's under load) does not go down at the start of each burst, its
 * first report still on the way.
 */
static unsigned long mpip_path_timeout(struct mpip_net *mn,
				       struct mpip_path *p)
{
	u32 base = READ_ONCE(mn->cfg.path_timeout_ms), t;

	spin_lock_bh(&p->lock);
	t = mpip_rtt_timeout(&p->rtt, base);
	spin_unlock_bh(&p->lock);
	return msecs_to_jiffies(t);
}

/*
 * Has @p gone without a delay report for its timeout?  A host that
 * sends only reports on a path (quiet heartbeats: the peer's flow is
 * one-way) never finds out that it broke, and keeps sending reports
 * there, lost; its heartbeats then ask for a report (heartbeat.c).
 */
bool mpip_path_unreported(struct mpip_net *mn, struct mpip_path *p)
{
	return time_after(jiffies,
			  READ_ONCE(p->last_fb) + mpip_path_timeout(mn, p));
}

/* Is @p a path up with a backup link at either end (heartbeat.c probes)? */
bool mpip_path_is_backup(struct mpip_net *mn, struct mpip_path *p)
{
	return READ_ONCE(p->state) == MPIP_PATH_UP && mpip_path_tier(mn, p);
}

/*
 * The tier @n's data goes over, as mpip_paths_usable() ranks the paths
 * (mpip_path_rank()): the lowest among its paths up that are neither
 * lossy nor back up just now; MPIP_RANK_BACK, above every tier, if none
 * is.  Caller holds RCU.
 */
unsigned int mpip_paths_low_tier(struct mpip_net *mn,
				 const struct mpip_node *n)
{
	unsigned int i, low = MPIP_RANK_BACK;
	struct mpip_path *p;

	for (i = 0; i < mpip_path_slots(n); i++) {
		p = rcu_dereference(n->paths[i]);
		if (p && READ_ONCE(p->state) == MPIP_PATH_UP)
			low = min(low, mpip_path_rank(mn, p));
	}
	return low;
}

/*
 * Is @p a cold standby (MultiMob: a metered backup stays idle until it is
 * needed)?  So is a path of a backup tier, metered at either end, while
 * the data goes over a lower tier, @low (mpip_paths_low_tier()).
 * Nothing is sent on it then but data a rule puts there: no probes, no
 * loss probes, no fake TCP SYNs, no address lists (heartbeat.c).  It
 * learns nothing meanwhile: if it broke, the data that fails over to it
 * finds out within path_timeout_ms, and the path is probed from then on.
 */
bool mpip_path_cold(struct mpip_net *mn, struct mpip_path *p,
		    unsigned int low)
{
	return mpip_path_tier(mn, p) > low && mpip_path_metered(mn, p);
}

/*
 * Choose a path for one packet, by weight among the paths up that @rule
 * allows (all if NULL), with the node's next draw (core/path.c:
 * mpip_weights_draw(): the split follows the weights packet by packet,
 * not only on average); for a data packet (@tx) with queue_steer on,
 * steered by the device queues here (mpip_path_steer()).  If the ties
 * parked all of them (a rule or the links' tiers allow only paths longer
 * than the node's shortest), they count as equal.  NULL if none is up.
 * Caller holds RCU.
 */
struct mpip_path *mpip_path_pick(struct mpip_net *mn, struct mpip_node *n,
				 const struct mpip_rule *rule, bool tx)
{
	struct mpip_path *cand[MPIP_MAX_PATHS];
	u32 w[MPIP_MAX_PATHS], any = 0;
	unsigned int i, k, pick;

	k = mpip_paths_usable(mn, n, rule, cand);
	for (i = 0; i < k; i++) {
		w[i] = READ_ONCE(cand[i]->weight);
		any |= w[i];
	}
	for (i = 0; !any && i < k; i++)
		w[i] = MPIP_WEIGHT_MIN;
	if (k <= 1)
		return k ? cand[0] : NULL;
	pick = mpip_weights_pick(w, k, mpip_weights_draw((u32)
				 atomic_inc_return(&n->draws)));
	if (pick == MPIP_PATH_NONE)
		return NULL;
	if (tx && READ_ONCE(mn->cfg.queue_steer))
		pick = mpip_path_steer(mn, cand, w, k, pick);
	return cand[pick];
}

/*
 * The smoothed one-way delays of the @k paths in @cand, into @d; returns
 * a mask of those that are measured (mpip_single_index() compares only
 * those).
 */
static u32 mpip_paths_delays(struct mpip_path *const *cand, unsigned int k,
			     u32 *d)
{
	unsigned int i;
	u32 have = 0;

	for (i = 0; i < k; i++) {
		if (READ_ONCE(cand[i]->drt_ok))
			have |= BIT(i);
		d[i] = READ_ONCE(cand[i]->drt);
	}
	return have;
}

/*
 * The path of a TCP segment sent again: of the paths up that @rule allows
 * (all if NULL), the one with the highest one-way delay (output.c:
 * mpip_out_resend()).  NULL if none of them has a measured delay.  Caller
 * holds RCU.
 */
struct mpip_path *mpip_path_slowest(struct mpip_net *mn, struct mpip_node *n,
				    const struct mpip_rule *rule)
{
	struct mpip_path *cand[MPIP_MAX_PATHS];
	u32 d[MPIP_MAX_PATHS], have;
	unsigned int k, i;

	k = mpip_paths_usable(mn, n, rule, cand);
	have = mpip_paths_delays(cand, k, d);
	i = mpip_max_delay_index(d, have, k);
	return i == MPIP_PATH_NONE ? NULL : cand[i];
}

/*
 * The path of a packet of session @s under @rule, of mode single: of the
 * paths up that it allows, the one with the lowest one-way delay, with
 * the hysteresis of core/path.c: mpip_single_index() and
 * MPIP_SINGLE_DWELL.  The session remembers its path; concurrent senders
 * of one session may both move it, and either move is right.  NULL if no
 * path it allows is up.  Caller holds RCU.
 */
struct mpip_path *mpip_path_single(struct mpip_net *mn, struct mpip_node *n,
				   const struct mpip_rule *rule,
				   struct mpip_session *s)
{
	unsigned int i, k, cur = MPIP_PATH_NONE, pick;
	struct mpip_path *cand[MPIP_MAX_PATHS];
	u8 id = READ_ONCE(s->single_id);
	u32 d[MPIP_MAX_PATHS], have;

	mpip_touch(&n->single_used);
	k = mpip_paths_usable(mn, n, rule, cand);
	have = mpip_paths_delays(cand, k, d);
	for (i = 0; i < k; i++)
		if (cand[i]->id == id)
			cur = i;
	if (!k)
		return NULL;
	if (cur != MPIP_PATH_NONE &&
	    time_before(jiffies, READ_ONCE(s->single_since) + MPIP_SINGLE_DWELL))
		return cand[cur];
	pick = mpip_single_index(d, have, k, cur, MPIP_SINGLE_MARGIN_US);
	if (pick != cur) {
		WRITE_ONCE(s->single_id, cand[pick]->id);
		WRITE_ONCE(s->single_since, jiffies);
	}
	return cand[pick];
}

/*
 * The paths of a packet's copies under @rule, of mode protected, into
 * @out (room for @rule->copies): of the paths up that it allows, the one
 * of lowest one-way delay, then each time the one that shares least with
 * those chosen (links, remote addresses), of lowest delay among those
 * (core/path.c: mpip_copies_index()).  Returns how many there are: at
 * most @rule->copies.  Caller holds RCU.
 */
unsigned int mpip_path_copies(struct mpip_net *mn, struct mpip_node *n,
			      const struct mpip_rule *rule,
			      struct mpip_path **out)
{
	u32 d[MPIP_MAX_PATHS], link[MPIP_MAX_PATHS], raddr[MPIP_MAX_PATHS];
	unsigned int i, k, got, idx[MPIP_RULE_MAX_COPIES];
	struct mpip_path *cand[MPIP_MAX_PATHS];
	u32 have;

	k = mpip_paths_usable(mn, n, rule, cand);
	have = mpip_paths_delays(cand, k, d);
	for (i = 0; i < k; i++) {
		link[i] = cand[i]->ifindex;
		raddr[i] = (__force u32)cand[i]->daddr;
	}
	got = mpip_copies_index(d, have, link, raddr, k,
				min_t(unsigned int, rule->copies,
				      MPIP_RULE_MAX_COPIES), idx);
	for (i = 0; i < got; i++)
		out[i] = cand[idx[i]];
	return got;
}

/*
 * A referenced route for the path's packets, through the interface that
 * owns its source address; NULL if there is none.
 */
struct dst_entry *mpip_path_dst(struct mpip_net *mn, struct mpip_path *p)
{
	struct flowi4 fl4 = {
		.daddr = p->daddr,
		.saddr = p->saddr,
		.flowi4_oif = p->ifindex,
	};
	struct rtable *rt;
	__be32 saddr;

	local_bh_disable();
	rt = dst_cache_get_ip4(&p->dst, &saddr);
	if (!rt) {
		rt = ip_route_output_key(mn->net, &fl4);
		if (IS_ERR(rt)) {
			rt = NULL;
		} else if (rt->rt_type != RTN_UNICAST) {
			ip_rt_put(rt);
			rt = NULL;
		} else {
			dst_cache_set_ip4(&p->dst, &rt->dst, fl4.saddr);
		}
	}
	local_bh_enable();
	return rt ? &rt->dst : NULL;
}

/*
 * The MTU of route @dst without its PMTU exception (its mtu metric, else
 * its device's), by which IP output sizes a packet marked forwarded: the
 * kernel's own figure for it (ip_dst_mtu_maybe_forward(), which
 * ip_skb_dst_mtu() takes; mpip_out_size()).  0 if that is the exception
 * too (ip_forward_use_pmtu set, or the MTU locked).
 */
unsigned int mpip_route_mtu(const struct dst_entry *dst)
{
	if (READ_ONCE(dev_net(dst->dev)->ipv4.sysctl_ip_fwd_use_pmtu) ||
	    ip_mtu_locked(dst))
		return 0;
	return ip_dst_mtu_maybe_forward(dst, true);
}

/*
 * The MTU of the packets that go on path @p by its route @dst.  A flow's
 * route may hold a PMTU exception that mpip lowered by the room its
 * trailer and encapsulation take (icmp.c), so that the flow's packets
 * leave that room; a path to the same address, from the same link,
 * shares the exception.  So a path's MTU is its route's without it
 * (mpip_route_mtu()), lowered to what an error about one of the path's
 * packets gave while that holds (mpip_path_set_mtu()); the route's MTU,
 * exception and all, if IP output would size the path's packets by that
 * (then mpip_route_mtu() is 0), or for an unknown path (@p NULL), whose
 * errors mpip would not take.
 */
unsigned int mpip_path_mtu(const struct mpip_path *p,
			   const struct dst_entry *dst)
{
	unsigned int mtu = mpip_route_mtu(dst);
	u32 pmtu;

	if (!p || !mtu)
		return dst_mtu(dst);
	pmtu = mpip_path_err_mtu(p);
	return pmtu ? min(mtu, pmtu) : mtu;
}

/* The MTU an error about one of @p's packets gave, while it holds; or 0. */
u32 mpip_path_err_mtu(const struct mpip_path *p)
{
	u32 mtu = READ_ONCE(p->mtu);

	return mtu && time_before(jiffies, READ_ONCE(p->mtu_expires)) ? mtu : 0;
}

/*
 * Path @p's packets need fragmentation beyond @mtu (an error about one of
 * them said so, icmp.c): keep to it for as long as the route code keeps
 * a PMTU exception, and no lower than its floor.
 */
void mpip_path_set_mtu(struct mpip_path *p, const struct net *net, u32 mtu)
{
	WRITE_ONCE(p->mtu_expires, jiffies +
		   READ_ONCE(net->ipv4.ip_rt_mtu_expires));
	WRITE_ONCE(p->mtu, max(mtu, READ_ONCE(net->ipv4.ip_rt_min_pmtu)));
}

/*
 * Count a packet in this CPU's block.  Senders run in process context
 * with bottom halves on as well as in soft-IRQs: on 32-bit hosts the
 * writer's sequence count must not be interrupted by another writer on
 * the same CPU (the _irqsave variant; a no-op on 64-bit).
 */
static void mpip_path_count(struct mpip_path *p, bool rx, unsigned int len)
{
	struct mpip_path_pcpu *pc = get_cpu_ptr(p->pcpu);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&pc->syncp);
	if (rx) {
		pc->rx_pkts++;
		pc->rx_bytes += len;
	} else {
		pc->tx_pkts++;
		pc->tx_bytes += len;
	}
	u64_stats_update_end_irqrestore(&pc->syncp, flags);
	put_cpu_ptr(p->pcpu);
}

/*
 * Account one packet of @len bytes sent on @p; unless @quiet, it waits for
 * a delay report (the path's timeout runs from the first such packet).
 */
void mpip_path_tx(struct mpip_path *p, unsigned int len, bool quiet)
{
	if (!quiet && !READ_ONCE(p->pending))
		WRITE_ONCE(p->pending, jiffies | 1);
	mpip_path_count(p, false, len);
}

/* Account a packet that arrived from @saddr to @daddr (wire addresses). */
void mpip_path_rx(struct mpip_node *n, __be32 saddr, __be32 daddr,
		  unsigned int len)
{
	struct mpip_path *p = mpip_path_find(n, daddr, saddr);

	if (p)
		mpip_path_count(p, true, len);
}

/*
 * The remote node reported the one-way delay of our path @id, in a packet
 * whose own one-way delay was @back_us: a sample for the delay model and
 * for the round trip of the path's reports (struct mpip_rtt), and proof
 * that the path delivers.
 */
void mpip_path_feedback(struct mpip_net *mn, struct mpip_node *n,
			u8 id, u32 delay_us, u32 back_us)
{
	u32 shift = READ_ONCE(mn->cfg.delay_smooth_shift);
	struct mpip_path *p;

	if (!id || id > MPIP_MAX_PATHS)
		return;
	p = rcu_dereference(n->paths[id - 1]);
	if (!p)
		return;
	mpip_inc(mn, MPIP_STAT_RX_FEEDBACK);

	spin_lock_bh(&p->lock);
	mpip_path_delay_sample(&p->delay, delay_us, shift);
	WRITE_ONCE(p->qdelay, p->delay.q);
	WRITE_ONCE(p->drt, p->delay.d_rt);
	WRITE_ONCE(p->drt_ok, true);
	mpip_rtt_sample(&p->rtt, delay_us, back_us);
	p->feedback++;
	spin_unlock_bh(&p->lock);
	mpip_touch(&p->last_fb);
	if (READ_ONCE(p->pending))
		WRITE_ONCE(p->pending, 0);

	switch (READ_ONCE(p->state)) {
	case MPIP_PATH_PROBING:
	case MPIP_PATH_DOWN:
		/* Both ends verified it (rr.c). */
		if (mpip_rr_done(p) &&
		    mpip_path_dev_up(mn->net, p->ifindex))
			mpip_path_set_state(mn, n, p, MPIP_PATH_UP);
		break;
	}
}

/*
 * The queueing delay Algorithm 1 sees for @p.  A delay below
 * MPIP_QDELAY_FLOOR_US is noise, not a queue: it counts as none, so that
 * paths without queues keep equal weights.  So does the delay of a path
 * without a report for @stale jiffies: a path with a low weight carries
 * few packets and gets few reports, and its last delay may be long gone;
 * taking it as relieved lets its weight grow again (paper, section 3.5.1).
 */
static u32 mpip_path_qdelay(struct mpip_path *p, unsigned long stale,
			    u32 *dmin, bool *have)
{
	u32 q;

	spin_lock_bh(&p->lock);
	q = p->delay.q;
	*dmin = p->delay.d_min;
	*have = p->delay.have_sample;
	spin_unlock_bh(&p->lock);
	if (time_after(jiffies, READ_ONCE(p->last_fb) + stale))
		return 0;
	return q < MPIP_QDELAY_FLOOR_US ? 0 : q;
}

/*
 * The queueing delay of @p that Algorithm 1 compares: extrapolated
 * weight_trend_ms ahead along its change since the last round, which was
 * @interval_ms ago (core/path.c: mpip_qdelay_predict()); no trend in the
 * first round the path is up.  Only the weight round, one at a time per
 * namespace, touches q_round and q_round_ok.
 */
static u32 mpip_path_qdelay_trend(struct mpip_net *mn, struct mpip_path *p,
				  u32 q, u32 interval_ms)
{
	u32 q_prev = p->q_round_ok ? p->q_round : q;

	p->q_round = q;
	p->q_round_ok = true;
	return mpip_qdelay_predict(q, q_prev, interval_ms,
				   READ_ONCE(mn->cfg.weight_trend_ms));
}

/* The paths of @mask (bits of indexes into @up), as a mask of path ids. */
static u32 mpip_paths_id_mask(struct mpip_path *const *up, unsigned int k,
			      u32 mask)
{
	unsigned int i;
	u32 ids = 0;

	for (i = 0; i < k; i++)
		if (mask & BIT(i))
			ids |= BIT(up[i]->id - 1);
	return ids;
}

/*
 * Algorithm 1 over the paths of @n that are up.  The direction comes from
 * the predicted queueing delays (mpip_path_qdelay_trend()); the start-up
 * boost (core/path.c: mpip_weights_boost_step()) grows on the measured
 * ones, and learns from the prediction only that it turned against
 * them.  In the first rounds of a flow the prediction swings with every
 * burst: driven by it, the boost ended after a round or two, 100 ms into
 * a transfer, and the weights then crept to their balance at S for 1-2 s.
 * The boost also only counts rounds in which the measured delays differ
 * by MPIP_BOOST_MIN_SPREAD_US or more: below that, which paths gain is as
 * likely noise as a queue, and a step grown on noise would throw equal
 * links off balance.  A round in which no path queues more than the
 * others (weight_tie_us; core/path.c: mpip_weights_tie_round()) goes by
 * the paths' fixed delays instead, with a step that doubles while no path
 * queues (mpip_weights_tie_step()).  If no path queues at all, the node is
 * as good as idle and its boost starts afresh: a bulk flow that comes
 * next, maybe over weights that the ties gave to the shortest path alone,
 * finds its balance at the start-up pace, not at S a round.  Caller holds
 * RCU.
 */
static void mpip_paths_adjust_weights(struct mpip_net *mn,
				      struct mpip_node *n, unsigned long stale,
				      u32 interval_ms)
{
	u32 q[MPIP_MAX_PATHS], raw[MPIP_MAX_PATHS], w[MPIP_MAX_PATHS];
	u32 dmin[MPIP_MAX_PATHS];
	u32 ids = 0, gain, mask, step, tie, qmin = U32_MAX, qmax = 0;
	struct mpip_path *up[MPIP_MAX_PATHS], *p;
	unsigned int i, k = 0;
	bool have, idle, all_have = true;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = rcu_dereference(n->paths[i]);
		if (!p)
			continue;
		if (READ_ONCE(p->state) != MPIP_PATH_UP) {
			p->q_round_ok = false;
			continue;
		}
		raw[k] = mpip_path_qdelay(p, stale, &dmin[k], &have);
		all_have &= have;
		qmin = min(qmin, raw[k]);
		qmax = max(qmax, raw[k]);
		q[k] = mpip_path_qdelay_trend(mn, p, raw[k], interval_ms);
		w[k] = READ_ONCE(p->weight);
		ids |= BIT(p->id - 1);
		up[k++] = p;
	}
	if (k < 2)
		return;
	tie = READ_ONCE(mn->cfg.weight_tie_us);
	idle = all_have && qmax < tie;	/* no queue anywhere */
	step = mpip_weights_tie_step(&n->w_idle_rounds, idle,
				     READ_ONCE(mn->cfg.weight_step),
				     READ_ONCE(mn->cfg.weight_boost));
	if (all_have &&
	    mpip_weights_tie_round(raw, dmin, w, k, tie, step,
				   MPIP_WEIGHT_TOTAL)) {
		/* the next flow starts afresh */
		if (idle)
			memset(&n->w_boost, 0, sizeof(n->w_boost));
		goto out;
	}
	mask = mpip_weights_gainers(raw, k);
	gain = mpip_paths_id_mask(up, k, mask);
	if (qmax - qmin < MPIP_BOOST_MIN_SPREAD_US)
		gain = ids;	/* no information for the boost */
	step = mpip_weights_boost_step(&n->w_boost, ids, gain,
				       mpip_weights_gainers(q, k) != mask,
				       READ_ONCE(mn->cfg.weight_step),
				       READ_ONCE(mn->cfg.weight_boost));
	mpip_weights_adjust(q, w, k, step);
out:
	mpip_weights_normalize(w, k, MPIP_WEIGHT_TOTAL);
	for (i = 0; i < k; i++)
		WRITE_ONCE(up[i]->weight, w[i]);
}

/*
 * Path @p's pending stamp, moved @late jiffies on: the time this host
 * itself did not run (a stalled or suspended machine, a starved virtual
 * CPU) does not count against the peer, whose reports may wait in our
 * own receive queues.  Returns the stamp, or 0 if a report cleared it.
 */
static unsigned long mpip_path_pending(struct mpip_path *p,
				       unsigned long late)
{
	unsigned long old = READ_ONCE(p->pending);

	if (!old || !late)
		return old;
	/* A report or a new stamp in between wins: then leave it. */
	if (cmpxchg(&p->pending, old, (old + late) | 1) != old)
		return READ_ONCE(p->pending);
	return (old + late) | 1;
}

/*
 * Periodic work on one node: paths that carried data without a delay
 * report for their timeout (mpip_path_timeout()) of this host's running
 * time go down (the tick came @late jiffies after it was due); weights
 * follow Algorithm 1 every weight_interval_ms.  Caller holds RCU.
 */
void mpip_paths_tick(struct mpip_net *mn, struct mpip_node *n,
		     unsigned long late)
{
	unsigned long pending, interval, elapsed;
	struct mpip_path *p;
	unsigned int i;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		p = rcu_dereference(n->paths[i]);
		if (!p || READ_ONCE(p->state) != MPIP_PATH_UP)
			continue;
		pending = mpip_path_pending(p, late);
		if (pending &&
		    time_after(jiffies, pending + mpip_path_timeout(mn, p)))
			mpip_path_set_state(mn, n, p, MPIP_PATH_DOWN);
	}

	interval = msecs_to_jiffies(READ_ONCE(mn->cfg.weight_interval_ms));
	if (time_before(jiffies, READ_ONCE(n->w_stamp) + interval))
		return;
	elapsed = jiffies - READ_ONCE(n->w_stamp);
	WRITE_ONCE(n->w_stamp, jiffies);
	mpip_paths_adjust_weights(mn, n, 2 * interval,
				  jiffies_to_msecs(elapsed));
}

/* Paths of all nodes, for the status reply. */
unsigned int mpip_paths_count(struct mpip_net *mn)
{
	unsigned int b, i, count = 0;
	struct mpip_node *n;

	rcu_read_lock();
	for (b = 0; b < mn->nodes.size; b++) {
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			for (i = 0; i < MPIP_MAX_PATHS; i++)
				if (rcu_access_pointer(n->paths[i]))
					count++;
		}
	}
	rcu_read_unlock();
	return count;
}
