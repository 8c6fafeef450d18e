// SPDX-License-Identifier: GPL-2.0
/*
 * mpip reorder buffer: TCP segments of a session that arrive ahead of a
 * gap (their predecessor took a slower path) are held, in sequence order,
 * and handed back to the stack once the gap is filled, the paths show it
 * lost (by a packet sent after it, or by the clock), reorder_max_hold_ms
 * runs out or the buffer is full.  The decisions are
 * in core/reorder.c.
 *
 * Ownership: a session owns at most one buffer (created with its first
 * TCP data segment, freed when the session is unlinked); the buffer owns
 * the segments it holds and a reference on each one's device.  A segment
 * leaves where it was taken, after mpip's input hook (mpip_in_reinject()):
 * the hooks after it (conntrack, the filter table), the IP layer and TCP
 * see it for the first time; taps and tc saw it once, when it arrived.
 * Segments leave in order: one CPU at a time delivers a session's ready
 * segments, and a segment that arrives in order meanwhile joins the end
 * of that queue instead of overtaking it.  Held segments are counted per
 * namespace and bounded, whatever the number of sessions.
 */
#include <linux/hrtimer.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/rbtree.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/ip.h>

#include "mpip.h"

/*
 * Memory (truesize) of the segments held at once in one namespace, over
 * all sessions: a peer's packets can make its sessions hold segments, and
 * a count of them would not bound what a segment may cost (a GRO packet
 * of 64 KiB, or a datagram in a page of its own).
 */
#define MPIP_RO_NET_MEM		(32 << 20)
/*
 * When the timer first looks at a gap (a gap no segment's arrival shows
 * lost: the sender may have stopped), and the longest margin of a path
 * (scheduling jitter: a packet may wait this long in a backlog on a busy
 * host).
 */
#define MPIP_RO_MARGIN_US	20000
/*
 * A path shows a gap lost with a packet sent this much after it, plus
 * the reordering it showed lately (core/reorder.h), up to
 * MPIP_RO_MARGIN_US.
 */
#define MPIP_RO_LOST_MARGIN_US	1000
/* A path that delivered nothing for this long does not count (it may be
 * cut, and could then never show a gap lost by a packet).
 */
#define MPIP_RO_SAMPLE_AGE	HZ
/*
 * A path that delivered nothing for this long carries no stream of ours
 * whose queue could be growing: it may show a gap lost by the clock
 * (core/reorder.h).
 */
#define MPIP_RO_QUIET_US	20000

struct mpip_reorder {
	spinlock_t lock;	/* everything below */
	struct mpip_ro_seq seq;
	struct rb_root_cached held;	/* by sequence number, skb->rbnode */
	struct sk_buff *held_last;	/* the highest sequence number held */
	unsigned int nheld;
	struct sk_buff_head ready;	/* released, to be delivered in order */
	bool delivering;	/* a CPU is delivering @ready */
	struct hrtimer timer;
	ktime_t gap_start;	/* when the oldest gap began to be held */
	ktime_t deadline;	/* when the timer looks at it next */
	bool dead;		/* the session is gone: hold nothing more */
	u32 node_id;		/* the session's peer */
	struct mpip_net *mn;
	struct rcu_head rcu;
};

/* Where a held segment keeps its range and when it was sent
 * (the IP control block is rebuilt when it enters the stack again).
 */
struct mpip_ro_cb {
	mpip_okfn_t okfn;	/* where the input hook's caller goes on */
	struct net_device *dev;	/* skb->dev, which skb->rbnode overlays */
	u32 seq;
	u32 end;
	u32 ts_us;	/* send time, from its CM (the peer's clock) */
	u32 mem;	/* its truesize when held, in mn->ro_mem */
};

static struct mpip_ro_cb *mpip_ro_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct mpip_ro_cb) > sizeof(skb->cb));
	return (struct mpip_ro_cb *)skb->cb;
}

/* The held segment with the lowest sequence number, or NULL. */
static struct sk_buff *mpip_ro_first(const struct mpip_reorder *ro)
{
	return rb_to_skb(rb_first_cached(&ro->held));
}

/*
 * Hold @skb by its sequence number: in a red-black tree, as TCP keeps
 * its out-of-order queue, so that a peer that sends its segments in any
 * order makes each one cost a walk of log2(reorder_max_pkts) steps, not
 * one through all held.  A segment beyond all held, the usual case,
 * goes after the last without a walk.  Caller holds the lock.
 */
static void mpip_ro_insert(struct mpip_reorder *ro, struct sk_buff *skb)
{
	struct rb_node **p = &ro->held.rb_root.rb_node, *parent = NULL;
	u32 seq = mpip_ro_cb(skb)->seq;
	bool leftmost = true, last;

	mpip_ro_cb(skb)->dev = skb->dev;
	last = !ro->held_last ||
	       !mpip_seq_before(seq, mpip_ro_cb(ro->held_last)->seq);
	if (last && ro->held_last) {
		parent = &ro->held_last->rbnode;
		p = &parent->rb_right;
		leftmost = false;
	}
	while (*p) {
		parent = *p;
		if (mpip_seq_before(seq, mpip_ro_cb(rb_to_skb(parent))->seq)) {
			p = &parent->rb_left;
		} else {
			p = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(&skb->rbnode, parent, p);
	rb_insert_color_cached(&skb->rbnode, &ro->held, leftmost);
	if (last)
		ro->held_last = skb;
	ro->nheld++;
}

/* Take held @skb out of the tree; it gets its device back. */
static void mpip_ro_unhold(struct mpip_reorder *ro, struct sk_buff *skb)
{
	if (ro->held_last == skb)
		ro->held_last = rb_to_skb(rb_prev(&skb->rbnode));
	rb_erase_cached(&skb->rbnode, &ro->held);
	ro->nheld--;
	skb->dev = mpip_ro_cb(skb)->dev;
}

/* Hand segments back to the stack, in list order; drops their device refs. */
static void mpip_ro_deliver(const struct mpip_net *mn,
			    struct sk_buff_head *list)
{
	struct net_device *dev;
	struct sk_buff *skb;

	rcu_read_lock();
	while ((skb = __skb_dequeue(list))) {
		dev = skb->dev;
		/* Not to a device on its way out (see dev_close()). */
		if (netif_running(dev))
			mpip_in_reinject(mn, skb, mpip_ro_cb(skb)->okfn);
		else
			kfree_skb(skb);
		dev_put(dev);
	}
	rcu_read_unlock();
}

/*
 * Deliver the ready segments, and those that become ready meanwhile,
 * unless another CPU is already doing so.  Called with the lock held and
 * bottom halves off (we run in the input hook or the timer); returns with
 * the lock released.
 */
static void mpip_ro_run(struct mpip_reorder *ro)
	__releases(&ro->lock)
{
	struct sk_buff_head batch;

	if (ro->delivering || skb_queue_empty(&ro->ready)) {
		spin_unlock(&ro->lock);
		return;
	}
	ro->delivering = true;
	__skb_queue_head_init(&batch);
	while (!skb_queue_empty(&ro->ready)) {
		skb_queue_splice_init(&ro->ready, &batch);
		spin_unlock(&ro->lock);
		mpip_ro_deliver(ro->mn, &batch);
		spin_lock(&ro->lock);
	}
	ro->delivering = false;
	spin_unlock(&ro->lock);
}

/*
 * Move releasable segments from the head of the buffer to @out: those the
 * gap no longer blocks, and, if @force, the first one even so.  Returns
 * how many were moved.  Caller holds the lock.
 */
static unsigned int mpip_ro_take(struct mpip_reorder *ro,
				 struct sk_buff_head *out, bool force)
{
	struct mpip_ro_cb *cb;
	struct sk_buff *skb;
	unsigned int n = 0, mem = 0;

	while ((skb = mpip_ro_first(ro))) {
		cb = mpip_ro_cb(skb);
		if (!mpip_ro_release(&ro->seq, cb->seq, cb->end, force && !n))
			break;
		mpip_ro_unhold(ro, skb);
		__skb_queue_tail(out, skb);
		mem += cb->mem;
		n++;
	}
	atomic_sub(mem, &ro->mn->ro_mem);
	return n;
}

static void mpip_ro_add_stat(struct mpip_net *mn, enum mpip_stat s,
			     unsigned int n)
{
	this_cpu_add(mn->stats->cnt[s], n);
}

/*
 * Start holding the gap at the head: the timer looks at it once it has
 * been held MPIP_RO_MARGIN_US, or reorder_max_hold_ms if that is less.
 * Caller holds the lock.
 */
static void mpip_ro_arm(struct mpip_reorder *ro)
{
	u32 cap = READ_ONCE(ro->mn->cfg.reorder_max_hold_ms) * USEC_PER_MSEC;

	ro->gap_start = ktime_get();
	ro->deadline = ktime_add_us(ro->gap_start,
				    min_t(u32, cap, MPIP_RO_MARGIN_US));
	hrtimer_start(&ro->timer, ro->deadline, HRTIMER_MODE_ABS_SOFT);
}

/* Did path @i of @n deliver a trailer recently enough to count? */
static bool mpip_ro_rx_fresh(const struct mpip_node *n, unsigned int i)
{
	unsigned long last = READ_ONCE(n->rx[i].last_rx);

	return last && !time_after(jiffies, last + MPIP_RO_SAMPLE_AGE);
}

/* What the reorder decisions need of the peer's paths that delivered
 * recently (core/reorder.h).
 */
struct mpip_ro_paths {
	struct mpip_ro_path p[MPIP_MAX_PATHS];
	unsigned int n;
};

/* The margin of the path of @rx: its recent reordering, decayed. */
static u32 mpip_ro_margin(const struct mpip_rxpath *rx)
{
	u32 age = jiffies_to_msecs(jiffies - READ_ONCE(rx->reo_at));
	u32 reo = mpip_ro_reo_now(READ_ONCE(rx->reo_us), age);

	return mpip_ro_lost_margin_us(reo, MPIP_RO_LOST_MARGIN_US,
				      MPIP_RO_MARGIN_US);
}

static void mpip_ro_paths_read(const struct mpip_node *n,
			       struct mpip_ro_paths *pp)
{
	const struct mpip_rxpath *rx;
	struct mpip_ro_path *p;
	unsigned long idle;
	unsigned int i;

	pp->n = 0;
	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		if (!mpip_ro_rx_fresh(n, i))
			continue;
		rx = &n->rx[i];
		idle = jiffies - READ_ONCE(rx->last_rx);
		/* pairs with the barrier in mpip_fb_record() */
		smp_rmb();
		p = &pp->p[pp->n++];
		p->latest_us = READ_ONCE(rx->ts_us);
		p->margin_us = mpip_ro_margin(rx);
		p->delay_us = READ_ONCE(rx->delay_us);
		p->idle_us = jiffies_to_usecs(idle);
		p->lend = (__force u32)READ_ONCE(rx->daddr);
		p->rend = (__force u32)READ_ONCE(rx->saddr);
	}
}

/*
 * How long until the paths show the gap before the head of the buffer
 * lost, by a packet or by the clock (core/reorder.c:
 * mpip_ro_gap_wait_us()); 0 if they do now.  Caller holds the lock, and
 * something is held.
 */
static u32 mpip_ro_head_wait(struct mpip_reorder *ro,
			     const struct mpip_ro_paths *pp, u32 now_us)
{
	const struct mpip_ro_cb *cb = mpip_ro_cb(mpip_ro_first(ro));

	return mpip_ro_gap_wait_us(cb->ts_us, now_us, pp->p, pp->n,
				   MPIP_RO_QUIET_US);
}

/*
 * Move the segments behind gaps that the paths @pp show lost at @now_us
 * to @out, with those contiguous to them.  Returns how many were moved.
 * Caller holds the lock.
 */
static unsigned int mpip_ro_take_shown(struct mpip_reorder *ro,
				       const struct mpip_ro_paths *pp,
				       u32 now_us, struct sk_buff_head *out)
{
	unsigned int moved = 0;

	while (ro->nheld && !mpip_ro_head_wait(ro, pp, now_us))
		moved += mpip_ro_take(ro, out, true);
	return moved;
}

/*
 * A segment of the session arrived: move the segments behind gaps that
 * the paths of @n show lost to @out, and count them.  Returns how many
 * were moved.  Caller holds the lock.
 */
static unsigned int mpip_ro_take_lost(struct mpip_reorder *ro,
				      const struct mpip_node *n,
				      struct sk_buff_head *out)
{
	struct mpip_ro_paths pp;
	unsigned int moved;

	if (!ro->nheld)
		return 0;
	mpip_ro_paths_read(n, &pp);
	moved = mpip_ro_take_shown(ro, &pp, mpip_now_us(), out);
	if (moved)
		mpip_ro_add_stat(ro->mn, MPIP_STAT_REORDER_LOST, moved);
	return moved;
}

/*
 * The gap at the head changed: start holding the new one, or
 * stop the timer if nothing is held any more.  Caller holds the lock.
 */
static void mpip_ro_rearm(struct mpip_reorder *ro)
{
	if (!ro->nheld)
		hrtimer_try_to_cancel(&ro->timer);
	else
		mpip_ro_arm(ro);
}

/*
 * The timer came for the gap at the head: release it, and those after
 * it, as long as the paths show them lost, by a packet or the clock.
 * Moves them to the ready queue and returns how many it moved; 0 if the
 * gap is to be given up (reorder_max_hold_ms after it began, or its peer
 * is gone); -1 if it may still be filled: the timer is then set for
 * when the paths may show it lost, at most reorder_max_hold_ms after the
 * gap began.  Caller holds the lock, and something is held.
 */
static int mpip_ro_expire_lost(struct mpip_reorder *ro, ktime_t now)
{
	u32 cap = READ_ONCE(ro->mn->cfg.reorder_max_hold_ms);
	ktime_t end = ktime_add_ms(ro->gap_start, cap);
	const struct mpip_node *n;
	struct mpip_ro_paths pp;
	u32 now_us, wait;

	rcu_read_lock();
	n = mpip_node_lookup(ro->mn, ro->node_id);
	if (n)
		mpip_ro_paths_read(n, &pp);
	rcu_read_unlock();
	if (!n)
		return 0;
	/* the paths first: a timer that ran late still counts what they show */
	now_us = mpip_now_us();
	wait = mpip_ro_head_wait(ro, &pp, now_us);
	if (!wait)
		return mpip_ro_take_shown(ro, &pp, now_us, &ro->ready);
	if (!ktime_before(now, end))
		return 0;
	if (ktime_before(ktime_add_us(now, wait), end))
		end = ktime_add_us(now, wait);
	ro->deadline = end;
	hrtimer_start(&ro->timer, end, HRTIMER_MODE_ABS_SOFT);
	return -1;
}

/*
 * Soft-IRQ context.  A gap the paths show lost counts as such
 * (reorder_lost); one given up at reorder_max_hold_ms, or because its
 * peer is gone, as a timeout.
 */
static enum hrtimer_restart mpip_ro_expire(struct hrtimer *t)
{
	struct mpip_reorder *ro = container_of(t, struct mpip_reorder, timer);
	ktime_t now = ktime_get();
	unsigned int n = 0;
	int lost = -1;

	spin_lock(&ro->lock);
	if (ro->dead || !ro->nheld) {
		spin_unlock(&ro->lock);
		return HRTIMER_NORESTART;
	}
	if (ktime_before(now, ro->deadline)) {
		/* re-armed for a newer gap while this run waited */
		hrtimer_start(&ro->timer, ro->deadline, HRTIMER_MODE_ABS_SOFT);
	} else {
		lost = mpip_ro_expire_lost(ro, now);
		if (!lost)
			n = mpip_ro_take(ro, &ro->ready, true);
		if (lost >= 0 && ro->nheld)
			mpip_ro_arm(ro);
	}
	if (lost > 0)
		mpip_ro_add_stat(ro->mn, MPIP_STAT_REORDER_LOST, lost);
	mpip_ro_add_stat(ro->mn, MPIP_STAT_REORDER_TIMEOUT, n);
	mpip_ro_run(ro);
	return HRTIMER_NORESTART;
}

static struct mpip_reorder *mpip_ro_alloc(struct mpip_net *mn)
{
	struct mpip_reorder *ro = kzalloc(sizeof(*ro), GFP_ATOMIC);

	if (!ro)
		return NULL;
	spin_lock_init(&ro->lock);
	ro->held = RB_ROOT_CACHED;
	__skb_queue_head_init(&ro->ready);
	hrtimer_init(&ro->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	ro->timer.function = mpip_ro_expire;
	ro->mn = mn;
	return ro;
}

/*
 * What a released session's buffer pointer holds: no buffer, and none
 * may be installed any more.  A CPU that found the session under RCU
 * just before it was unlinked would otherwise give it a buffer that
 * nobody frees, with segments, device references and an armed timer.
 */
#define MPIP_RO_GONE	((struct mpip_reorder *)1UL)

/* The buffer of session @s, if it has one.  Caller holds RCU. */
static struct mpip_reorder *mpip_ro_find(struct mpip_session *s)
{
	struct mpip_reorder *ro = rcu_dereference(s->ro);

	return ro == MPIP_RO_GONE ? NULL : ro;
}

/*
 * The buffer of session @s with node @n, created on first use; NULL if
 * there is none to be had.  Caller holds RCU.
 */
static struct mpip_reorder *mpip_ro_get(struct mpip_net *mn,
					struct mpip_session *s,
					const struct mpip_node *n)
{
	struct mpip_reorder *ro = rcu_dereference(s->ro), *old;

	if (likely(ro))
		return ro == MPIP_RO_GONE ? NULL : ro;
	ro = mpip_ro_alloc(mn);
	if (!ro)
		return NULL;
	ro->node_id = n->id;
	old = cmpxchg((struct mpip_reorder __force **)&s->ro, NULL, ro);
	if (old) {
		kfree(ro);
		return old == MPIP_RO_GONE ? NULL : old;
	}
	return ro;
}

/*
 * Hold @skb, which lies beyond a gap.  Returns false if it cannot be held
 * (then it goes on as it is).  Overflowing segments become ready.  Caller
 * holds the lock.
 */
static bool mpip_ro_hold(struct mpip_reorder *ro, struct sk_buff *skb)
{
	struct mpip_net *mn = ro->mn;
	u32 max = READ_ONCE(mn->cfg.reorder_max_pkts);
	bool first = !ro->nheld;
	unsigned int over = 0;

	mpip_ro_cb(skb)->mem = skb->truesize;
	if (atomic_add_return(skb->truesize, &mn->ro_mem) > MPIP_RO_NET_MEM) {
		atomic_sub(skb->truesize, &mn->ro_mem);
		return false;
	}
	dev_hold(skb->dev);
	mpip_ro_insert(ro, skb);
	mpip_inc(mn, MPIP_STAT_REORDER_HELD);
	while (ro->nheld > max)
		over += mpip_ro_take(ro, &ro->ready, true);
	mpip_ro_add_stat(mn, MPIP_STAT_REORDER_OVERFLOW, over);
	if (!ro->nheld)
		return true;
	if (first || over)
		mpip_ro_arm(ro);
	return true;
}

/* The range [seq, end) of a TCP segment; false if it carries no data. */
static bool mpip_ro_range(const struct sk_buff *skb, struct mpip_ro_cb *r)
{
	unsigned int ihl = ip_hdrlen(skb), len;
	struct tcphdr _th;
	const struct tcphdr *th;

	th = skb_header_pointer(skb, ihl, sizeof(_th), &_th);
	if (!th || th->syn || th->rst)
		return false;
	len = skb->len - ihl - th->doff * 4 + th->fin;
	if (!len)
		return false;
	r->seq = ntohl(th->seq);
	r->end = r->seq + len;
	return true;
}

/*
 * A TCP data segment of session @s from node @n, trailer @cm already
 * stripped.  If @cm says MPIP_CM_X_SOLE, the peer sends most segments
 * without a CM, so we do not know what came before it.  Returns
 * NF_ACCEPT to let it go on now, or NF_STOLEN if the buffer took it: to
 * hold it, or to deliver it in order with segments released before or by
 * it.  Caller holds RCU, bottom halves are off.
 */
unsigned int mpip_reorder_rx(struct mpip_net *mn, struct mpip_session *s,
			     const struct mpip_node *n, struct sk_buff *skb,
			     const struct mpip_cm *cm, mpip_okfn_t okfn)
{
	bool sole = cm->xflags & MPIP_CM_X_SOLE;
	unsigned int in_order, lost;
	struct sk_buff_head rel;
	struct mpip_reorder *ro;
	struct mpip_ro_cb r;

	/* The lock is shared with the soft-IRQ timer: plain spin_lock. */
	DEBUG_NET_WARN_ON_ONCE(!in_softirq());
	if (!READ_ONCE(mn->cfg.reorder) || !mpip_ro_range(skb, &r))
		return NF_ACCEPT;
	r.ts_us = cm->timestamp_us;
	r.okfn = okfn;
	/* One path needs no buffer: only an existing one must forget. */
	ro = sole ? mpip_ro_find(s) : mpip_ro_get(mn, s, n);
	if (!ro)
		return NF_ACCEPT;

	spin_lock(&ro->lock);
	if (ro->dead) {
		spin_unlock(&ro->lock);
		return NF_ACCEPT;
	}
	if (sole) {
		mpip_ro_forget(&ro->seq);
	} else if (mpip_ro_arrive(&ro->seq, r.seq, r.end) == MPIP_RO_HOLD) {
		*mpip_ro_cb(skb) = r;
		if (!mpip_ro_hold(ro, skb)) {
			mpip_ipcb_reset(skb);
			mpip_ro_run(ro);
			return NF_ACCEPT;
		}
		if (mpip_ro_take_lost(ro, n, &ro->ready))
			mpip_ro_rearm(ro);
		mpip_ro_run(ro);
		return NF_STOLEN;
	}
	__skb_queue_head_init(&rel);
	in_order = mpip_ro_take(ro, &rel, false);
	lost = mpip_ro_take_lost(ro, n, &rel);
	if (in_order || lost) {
		mpip_ro_rearm(ro);
	} else if (!ro->delivering) {
		spin_unlock(&ro->lock);
		return NF_ACCEPT;
	}
	/* After what is ready already, before what it unblocked. */
	*mpip_ro_cb(skb) = r;
	dev_hold(skb->dev);
	__skb_queue_tail(&ro->ready, skb);
	skb_queue_splice_tail(&rel, &ro->ready);
	mpip_ro_add_stat(mn, MPIP_STAT_REORDER_IN_ORDER, in_order);
	mpip_ro_run(ro);
	return NF_STOLEN;
}

static void mpip_ro_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct mpip_reorder, rcu));
}

/*
 * The session is unlinked: no buffer may be installed from now on; drop
 * what its buffer holds, wait for its timer and free it after a grace
 * period.  May run in atomic context, but never under a lock that the
 * timer's delivery can meet (the session table's: see session.c).
 */
void mpip_reorder_release(struct mpip_session *s)
{
	struct mpip_reorder *ro;
	struct sk_buff_head drop;
	struct sk_buff *skb;

	ro = (struct mpip_reorder __force *)
		xchg((struct mpip_reorder __force **)&s->ro, MPIP_RO_GONE);
	if (!ro || ro == MPIP_RO_GONE)
		return;
	__skb_queue_head_init(&drop);
	spin_lock_bh(&ro->lock);
	ro->dead = true;
	while ((skb = mpip_ro_first(ro))) {
		atomic_sub(mpip_ro_cb(skb)->mem, &ro->mn->ro_mem);
		mpip_ro_unhold(ro, skb);
		__skb_queue_tail(&drop, skb);
	}
	skb_queue_splice_init(&ro->ready, &drop);
	spin_unlock_bh(&ro->lock);
	hrtimer_cancel(&ro->timer);
	while ((skb = __skb_dequeue(&drop))) {
		dev_put(skb->dev);
		kfree_skb(skb);
	}
	call_rcu(&ro->rcu, mpip_ro_free_rcu);
}
