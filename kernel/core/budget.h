/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip's budget of control packets per namespace (issue 20, review C2):
 * a rate and a burst, kept in one number.  Portable: no kernel API.
 *
 * The state is the time at which the budget would be whole again if
 * nothing more were sent: every packet let through moves it one interval
 * (a second / rate) later, starting from now if it lies in the past; a
 * packet is refused while that time lies more than burst - 1 intervals
 * ahead.  (The generic cell rate algorithm's "theoretical arrival
 * time".)  So over any span of T seconds at most rate * T + burst
 * packets go, and a budget left alone for burst intervals is whole again.
 */
#ifndef MPIP_CORE_BUDGET_H
#define MPIP_CORE_BUDGET_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_BUDGET_NSEC	1000000000ULL

/*
 * The burst a namespace's budget of @rate control packets per second
 * allows: a quarter of a second's worth, and at least MPIP_BUDGET_MIN.
 */
#define MPIP_BUDGET_MIN		4
u32 mpip_budget_burst(u32 rate);

/*
 * May one more packet go at time @now (ns, monotonic), given state @tat,
 * @rate packets per second (0: no limit) and @burst (at least 1)?  If
 * so, *@next is the state after it; if not, the state stays @tat.
 */
bool mpip_budget_take(u64 tat, u64 now, u32 rate, u32 burst, u64 *next);

#endif /* MPIP_CORE_BUDGET_H */
