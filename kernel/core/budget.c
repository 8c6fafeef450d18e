// SPDX-License-Identifier: GPL-2.0
/*
 * mpip's budget of control packets (budget.h).
 */
#include "budget.h"

u32 mpip_budget_burst(u32 rate)
{
	u32 b = rate / 4;

	return b < MPIP_BUDGET_MIN ? MPIP_BUDGET_MIN : b;
}

bool mpip_budget_take(u64 tat, u64 now, u32 rate, u32 burst, u64 *next)
{
	u64 interval, start;

	if (!rate) {
		*next = tat;
		return true;
	}
	if (!burst)
		burst = 1;
	interval = MPIP_BUDGET_NSEC / rate;
	start = tat > now ? tat : now;
	/* interval <= 10^9 and burst < 2^32: no overflow */
	if (start - now > (u64)(burst - 1) * interval)
		return false;
	*next = start + interval;
	return true;
}
