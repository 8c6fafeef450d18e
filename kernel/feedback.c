// SPDX-License-Identifier: GPL-2.0
/*
 * mpip delay feedback (paper section 3.4.2, Table 6).  Every data trailer
 * carries the sender's timestamp and path ID; the receiver keeps the last
 * one-way delay sample of each of the sender's paths and reports one of
 * them back in each trailer it sends to that node: the one reported least
 * recently among those with new samples.  Heartbeats carry reports when
 * there is no reverse traffic.
 *
 * A report is only as good as the packet that carries it.  One on a path
 * that is not up (a probe, or data that had no other way) is most likely
 * lost, and with it the sample: when every path of a pair was down, each
 * host's probes on the broken link claimed the samples that the other's
 * probes on the working one had brought, and no path ever came back up.
 * So a CM on a path not up carries only the sample that came over the
 * path's own addresses the other way, the one sample it proves it can
 * carry.
 *
 * The entries are lockless: a sample is a few independent words, and a
 * report claims an entry by clearing its fresh bit.
 */
#include "mpip.h"

/* A trailer this much older than its path's newest is no late one. */
#define MPIP_FB_LAG_MAX_US	USEC_PER_SEC

/*
 * A trailer sent at @ts_us arrived on the path of @rx: keep the newest
 * send time the path delivered and, if one sent later arrived before it,
 * how late it is (core/reorder.h).  Send times more than
 * MPIP_FB_LAG_MAX_US apart are no reordering but a new clock (the peer
 * restarted) or a path silent that long: it starts afresh, taken to
 * reorder MPIP_RO_REO_FIRST_US until it shows less.  Racing CPUs may
 * lose an update; the reorder buffer only reads these.
 */
static void mpip_fb_order(struct mpip_rxpath *rx, u32 ts_us)
{
	u32 lag, age;

	switch (mpip_ro_order(READ_ONCE(rx->last_rx), READ_ONCE(rx->ts_us),
			      ts_us, MPIP_FB_LAG_MAX_US, &lag)) {
	case MPIP_RO_ORD_FRESH:
		WRITE_ONCE(rx->reo_us, MPIP_RO_REO_FIRST_US);
		WRITE_ONCE(rx->reo_at, jiffies);
		fallthrough;
	case MPIP_RO_ORD_NEWEST:
		WRITE_ONCE(rx->ts_us, ts_us);
		return;
	case MPIP_RO_ORD_LATE:
		age = jiffies_to_msecs(jiffies - READ_ONCE(rx->reo_at));
		WRITE_ONCE(rx->reo_us,
			   mpip_ro_reo_track(READ_ONCE(rx->reo_us), age, lag));
		WRITE_ONCE(rx->reo_at, jiffies);
		return;
	}
}

/*
 * A trailer from @n's path @path_id, sent at @ts_us, arrived now, @delay_us
 * later (our clock minus @ts_us), under the addresses of @iph; it wants a
 * delay report unless @quiet (MPIP_CM_X_QUIET).
 */
void mpip_fb_record(struct mpip_node *n, const struct iphdr *iph, u8 path_id,
		    u32 ts_us, u32 delay_us, bool quiet)
{
	struct mpip_rxpath *rx;

	if (!path_id || path_id > MPIP_MAX_PATHS)
		return;
	rx = &n->rx[path_id - 1];
	WRITE_ONCE(rx->saddr, iph->saddr);
	WRITE_ONCE(rx->daddr, iph->daddr);
	WRITE_ONCE(rx->delay_us, delay_us);
	mpip_fb_order(rx, ts_us);
	/* pairs with the barrier in mpip_ro_paths_read() */
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

/* Did the last sample of @rx come over @p's addresses the other way? */
static bool mpip_fb_came_over(const struct mpip_rxpath *rx,
			      const struct mpip_path *p)
{
	return READ_ONCE(rx->saddr) == p->daddr &&
	       READ_ONCE(rx->daddr) == p->saddr;
}

/*
 * Put the stalest unreported sample into @cm, which goes to @n on path @p
 * (NULL: under a flow's own addresses).  On a path not up, only the one
 * that came over it.  Returns false if there is none.
 */
bool mpip_fb_pick(struct mpip_net *mn, struct mpip_node *n,
		  const struct mpip_path *p, struct mpip_cm *cm)
{
	bool any = !p || READ_ONCE(p->state) == MPIP_PATH_UP;
	struct mpip_rxpath *rx, *best = NULL;
	unsigned int i;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		rx = &n->rx[i];
		if (!READ_ONCE(rx->fresh))
			continue;
		if (!any && !mpip_fb_came_over(rx, p))
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

/*
 * A path of @n, not up, over which a sample not reported yet came the
 * other way: the one way left to report it while no path is up.  NULL if
 * there is none.  Caller holds RCU.
 */
struct mpip_path *mpip_fb_way_back(struct mpip_node *n)
{
	struct mpip_rxpath *rx;
	struct mpip_path *p;
	unsigned int i;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		rx = &n->rx[i];
		if (!READ_ONCE(rx->fresh))
			continue;
		p = mpip_path_find(n, READ_ONCE(rx->daddr), READ_ONCE(rx->saddr));
		if (p && READ_ONCE(p->state) != MPIP_PATH_UP)
			return p;
	}
	return NULL;
}

/*
 * The path back over which @n was heard last, within peer_timeout_ms, if
 * both ends verified it (rr.c): while no path of @n is up, the one way
 * that is known to work.  A peer whose paths all timed out, heard again
 * over one link before it is up at this end (its report is a round trip
 * away), would otherwise be answered under the flow's own addresses,
 * maybe on the link that broke.  Our own check of the path is not
 * enough: the peer drops data from an address it has not verified
 * (rx_spoofed), and at the start of a flow the path it was heard over
 * last may be one whose answers came back before the peer could verify
 * its way back.  NULL if there is none.
 * Caller holds RCU.
 */
struct mpip_path *mpip_fb_heard_over(struct mpip_net *mn, struct mpip_node *n)
{
	unsigned long within = READ_ONCE(mn->peer_timeout_j), last;
	struct mpip_rxpath *rx, *best = NULL;
	unsigned long best_rx = 0;
	struct mpip_path *p;
	unsigned int i;

	for (i = 0; i < MPIP_MAX_PATHS; i++) {
		rx = &n->rx[i];
		last = READ_ONCE(rx->last_rx);
		if (!last || !time_before(jiffies, last + within))
			continue;
		if (!best || time_after(last, best_rx)) {
			best = rx;
			best_rx = last;
		}
	}
	if (!best)
		return NULL;
	p = mpip_path_find(n, READ_ONCE(best->daddr), READ_ONCE(best->saddr));
	if (!p || !mpip_rr_done(p) ||
	    READ_ONCE(p->state) == MPIP_PATH_NOROUTE)
		return NULL;
	return p;
}
