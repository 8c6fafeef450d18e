// SPDX-License-Identifier: GPL-2.0
/*
 * mpip budgets of control packets (issue 20, review C2).
 *
 * Three bounds:
 *  - what strangers can make us send: answers to probes and confirmations
 *    of queries that nobody authenticated get MPIP_RR_PER_SEC a second
 *    per namespace, of which one source address (by a keyed hash, one of
 *    MPIP_RR_SRC_SLOTS) gets MPIP_RR_PER_SRC (ctrl_limited);
 *  - what a peer can: answers to the nonces of its authenticated CMs
 *    get MPIP_RR_NODE_PER_SEC a second per node (ctrl_limited), a budget
 *    of their own, so that strangers who spend theirs (from forged
 *    addresses, say) leave a peer's probes answered;
 *  - everything mpip sends of its own that carries no data: those
 *    answers, queries and confirmations, probes, heartbeats, IP_CHANGE,
 *    fake TCP handshakes: ctrl_pps a second, with a burst of a quarter
 *    of a second's worth, per namespace (core/budget.h; ctrl_budget).
 *    However many peers and paths this host has, and whoever they are,
 *    its control traffic stays within a rate its owner chose.
 * A packet over a budget is not sent, and mpip goes on as if it had
 * been lost on the way: a query still counts towards query_threshold, a
 * probe goes again at the next heartbeat.
 */
#include <linux/ktime.h>
#include <linux/siphash.h>

#include "mpip.h"
#include "core/budget.h"

/*
 * May an answer to a packet from @saddr that nobody authenticated go?
 * Within the namespace's budget, MPIP_RR_PER_SEC, of which each source
 * address gets at most MPIP_RR_PER_SRC per second (addresses share one
 * of MPIP_RR_SRC_SLOTS by a keyed hash): one address that floods us takes
 * a tenth of the budget, not all of it, and a new peer's query still
 * draws its answer.  (A flood from forged addresses still takes it all.)
 * The source's share is checked first, so that what it may not send
 * does not use up the namespace's budget.  Counts a refusal.
 */
bool mpip_ctrl_may_answer(struct mpip_net *mn, __be32 saddr)
{
	u32 h = siphash_1u32((__force u32)saddr, &mn->secret);
	struct mpip_src_budget *b = &mn->ctrl_src[h % MPIP_RR_SRC_SLOTS];
	unsigned long now = jiffies;

	/* racing resets: both start a new second, one count may be lost */
	if (time_after_eq(now, READ_ONCE(b->start) + HZ)) {
		WRITE_ONCE(b->start, now);
		atomic_set(&b->used, 0);
	}
	if (!atomic_add_unless(&b->used, 1, MPIP_RR_PER_SRC) ||
	    !mpip_budget_try(&mn->answer_tat, MPIP_RR_PER_SEC,
			     MPIP_RR_PER_SEC)) {
		mpip_inc(mn, MPIP_STAT_CTRL_LIMITED);
		return false;
	}
	return true;
}

/*
 * May an answer to a nonce in an authenticated CM from @n go (rr.c)?
 * Within @n's own budget, MPIP_RR_NODE_PER_SEC: a peer's loss probes
 * and return-routability checks are not at the mercy of what strangers
 * draw from theirs.  The CM was fresh (not a replay), so each answer
 * costs the peer a packet of its own.  Counts a refusal.
 */
bool mpip_node_may_answer(struct mpip_net *mn, struct mpip_node *n)
{
	if (mpip_budget_try(&n->answer_tat, MPIP_RR_NODE_PER_SEC,
			    MPIP_RR_NODE_PER_SEC))
		return true;
	mpip_inc(mn, MPIP_STAT_CTRL_LIMITED);
	return false;
}

/*
 * May one more packet go within the budget whose state is @state, @rate
 * packets a second with @burst?  Lockless: the state moves by
 * compare-and-exchange, so that two CPUs never both take the last packet
 * of the budget, and neither is refused for the other's sake (as a
 * trylock would refuse it).
 */
bool mpip_budget_try(atomic64_t *state, u32 rate, u32 burst)
{
	s64 tat = atomic64_read(state);
	u64 now = ktime_get_mono_fast_ns(), next;

	do {
		if (!mpip_budget_take(tat, now, rate, burst, &next))
			return false;
	} while (!atomic64_try_cmpxchg(state, &tat, next));
	return true;
}

/* May one more control packet go, within ctrl_pps?  Counts a refusal. */
bool mpip_ctrl_may_send(struct mpip_net *mn)
{
	u32 rate = READ_ONCE(mn->cfg.ctrl_pps);

	if (!rate)
		return true;
	if (!mpip_budget_try(&mn->ctrl_tat, rate, mpip_budget_burst(rate))) {
		mpip_inc(mn, MPIP_STAT_CTRL_BUDGET);
		return false;
	}
	return true;
}

void mpip_budget_init_net(struct mpip_net *mn)
{
	unsigned int i;

	for (i = 0; i < MPIP_RR_SRC_SLOTS; i++) {
		mn->ctrl_src[i].start = jiffies - HZ;
		atomic_set(&mn->ctrl_src[i].used, 0);
	}
	atomic64_set(&mn->ctrl_tat, 0);
	atomic64_set(&mn->answer_tat, 0);
}
