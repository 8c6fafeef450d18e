// SPDX-License-Identifier: GPL-2.0
/*
 * mpip TCP reorder decisions: see reorder.h.
 */
#include "reorder.h"

enum mpip_ro_verdict mpip_ro_arrive(struct mpip_ro_seq *st, u32 seq, u32 end)
{
	if (!st->valid) {
		st->nxt = end;
		st->valid = true;
		return MPIP_RO_PASS;
	}
	if (mpip_seq_before(st->nxt, seq))
		return MPIP_RO_HOLD;
	if (mpip_seq_before(st->nxt, end))
		st->nxt = end;
	return MPIP_RO_PASS;
}

void mpip_ro_forget(struct mpip_ro_seq *st)
{
	st->valid = false;
}

bool mpip_ro_release(struct mpip_ro_seq *st, u32 seq, u32 end, bool force)
{
	if (!force && mpip_seq_before(st->nxt, seq))
		return false;
	if (mpip_seq_before(st->nxt, end))
		st->nxt = end;
	return true;
}

/* Has @p delivered a packet sent more than its margin after @ts_us? */
static bool mpip_ro_path_past(const struct mpip_ro_path *p, u32 ts_us)
{
	return (s32)(p->latest_us - ts_us - p->margin_us) > 0;
}

/* The delay of path @i of @p[@n]: its own, or a larger one at a shared end. */
static u32 mpip_ro_path_delay(const struct mpip_ro_path *p, unsigned int n,
			      unsigned int i)
{
	u32 delay = p[i].delay_us;
	unsigned int j;

	for (j = 0; j < n; j++)
		if ((p[j].lend == p[i].lend || p[j].rend == p[i].rend) &&
		    (s32)(p[j].delay_us - delay) > 0)
			delay = p[j].delay_us;
	return delay;
}

/* How long until path @i of @p[@n] shows the gap lost (see the header). */
static u32 mpip_ro_path_wait_us(const struct mpip_ro_path *p, unsigned int n,
				unsigned int i, u32 ts_us, u32 now_us,
				u32 quiet_us)
{
	u32 quiet = 0, clock = 0;
	s32 due;

	if (mpip_ro_path_past(&p[i], ts_us))
		return 0;
	if (p[i].idle_us < quiet_us)
		quiet = quiet_us - p[i].idle_us;
	due = (s32)(ts_us + mpip_ro_path_delay(p, n, i) + p[i].margin_us -
		    now_us);
	if (due > 0)
		clock = due;
	return quiet > clock ? quiet : clock;
}

u32 mpip_ro_gap_wait_us(u32 ts_us, u32 now_us, const struct mpip_ro_path *p,
			unsigned int n, u32 quiet_us)
{
	u32 wait = 0, w;
	unsigned int i;

	for (i = 0; i < n; i++) {
		w = mpip_ro_path_wait_us(p, n, i, ts_us, now_us, quiet_us);
		if (w > wait)
			wait = w;
	}
	return wait;
}

u32 mpip_ro_reo_now(u32 peak_us, u32 age_ms)
{
	u32 halvings = age_ms / 1000;

	return halvings >= 32 ? 0 : peak_us >> halvings;
}

u32 mpip_ro_reo_track(u32 peak_us, u32 age_ms, u32 lag_us)
{
	u32 now = mpip_ro_reo_now(peak_us, age_ms);

	return lag_us > now ? lag_us : now;
}

enum mpip_ro_order mpip_ro_order(bool known, u32 newest_us, u32 ts_us,
				 u32 max_us, u32 *lag_us)
{
	u32 ahead = ts_us - newest_us, behind = newest_us - ts_us;

	*lag_us = 0;
	if (!known)
		return MPIP_RO_ORD_FRESH;
	if ((s32)ahead >= 0)
		return ahead > max_us ? MPIP_RO_ORD_FRESH : MPIP_RO_ORD_NEWEST;
	if (behind > max_us)
		return MPIP_RO_ORD_FRESH;
	*lag_us = behind;
	return MPIP_RO_ORD_LATE;
}

u32 mpip_ro_lost_margin_us(u32 reo_us, u32 min_us, u32 cap_us)
{
	u64 margin = (u64)min_us + reo_us + reo_us / 4;

	return margin < cap_us ? (u32)margin : cap_us;
}
