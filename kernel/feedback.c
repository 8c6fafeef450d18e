// SPDX-License-Identifier: GPL-2.0
/*
 * mpip delay feedback (paper section 3.4.2, Table 6).  Every data trailer
 * carries the sender's timestamp and path ID; the receiver keeps the last
 * one-way delay sample of each of the sender's paths and reports one of
 * them back in each trailer it sends to that node: the one reported least
 * recently among those with new samples.  Heartbeats carry reports when
 * there is no reverse traffic.
 *
 * The entries are lockless: a sample is a few independent words, and a
 * report claims an entry by clearing its fresh bit.
 */
#include "mpip.h"

/*
 * A trailer from @n's path @path_id, sent at @ts_us, arrived now; it wants
 * a delay report unless @quiet (MPIP_CM_X_QUIET).
 */
void mpip_fb_record(struct mpip_node *n, u8 path_id, u32 ts_us, bool quiet)
{
	struct mpip_rxpath *rx;

	if (!path_id || path_id > MPIP_MAX_PATHS)
		return;
	rx = &n->rx[path_id - 1];
	WRITE_ONCE(rx->delay_us, mpip_now_us() - ts_us);
	/* a path delivers in order: the newest send time it delivered */
	WRITE_ONCE(rx->ts_us, ts_us);
	/* pairs with the barrier in mpip_ro_head_lost() */
	smp_wmb();
	mpip_touch(&rx->last_rx);
	if (!quiet && !READ_ONCE(rx->fresh))
		WRITE_ONCE(rx->fresh, 1);
}

/* Are there samples from @n not reported yet? */
bool mpip_fb_pending(struct mpip_node *n)
{
	unsigned int i;

	for (i = 0; i < MPIP_MAX_PATHS; i++)
		if (READ_ONCE(n->rx[i].fresh))
			return true;
	return false;
}

/*
 * Put the stalest unreported sample into @cm.  Returns false if there is
 * none.
 */
bool mpip_fb_pick(struct mpip_net *mn, struct mpip_node *n,
		  struct mpip_cm *cm)
{
	struct mpip_rxpath *rx, *best = NULL;
	unsigned int i;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		rx = &n->rx[i];
		if (!READ_ONCE(rx->fresh))
			continue;
		if (!best || time_before(READ_ONCE(rx->last_fb),
					 READ_ONCE(best->last_fb)))
			best = rx;
	}
	if (!best || !xchg(&best->fresh, 0))
		return false;
	WRITE_ONCE(best->last_fb, jiffies);
	cm->fb_path_id = best - n->rx + 1;
	cm->path_delay_us = READ_ONCE(best->delay_us);
	mpip_inc(mn, MPIP_STAT_TX_FEEDBACK);
	return true;
}
