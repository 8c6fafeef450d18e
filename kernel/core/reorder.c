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

bool mpip_ro_gap_lost(u32 ts_us, const u32 *latest_us, const u32 *margin_us,
		      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if ((s32)(latest_us[i] - ts_us - margin_us[i]) <= 0)
			return false;
	return true;
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

u32 mpip_ro_spread_us(const u32 *delay_us, unsigned int n)
{
	u32 lo, hi;
	unsigned int i;

	if (n < 2)
		return 0;
	lo = delay_us[0];
	hi = delay_us[0];
	for (i = 1; i < n; i++) {
		if ((s32)(delay_us[i] - lo) < 0)
			lo = delay_us[i];
		if ((s32)(delay_us[i] - hi) > 0)
			hi = delay_us[i];
	}
	return hi - lo;
}

u32 mpip_ro_spread_track(u32 prev_us, u32 spread_us)
{
	u32 decayed = prev_us - prev_us / 8;

	return spread_us > decayed ? spread_us : decayed;
}

u32 mpip_ro_hold_us(u32 spread_us, u32 margin_us, u32 cap_us)
{
	u64 hold = (u64)spread_us + spread_us / 4 + margin_us;

	return hold < cap_us ? (u32)hold : cap_us;
}
