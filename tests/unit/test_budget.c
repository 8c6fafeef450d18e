// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/budget.c: the namespace's budget of
 * control packets (a rate and a burst in one number).
 */
#include <stdint.h>

#include "budget.h"
#include "ktap.h"

#define MS	1000000ULL
#define T0	(5 * MPIP_BUDGET_NSEC)

/* Offer a packet at @now; on success, the state moves. */
static bool offer(u64 *tat, u64 now, u32 rate, u32 burst)
{
	u64 next = 0xdeadbeef;

	if (!mpip_budget_take(*tat, now, rate, burst, &next))
		return false;
	*tat = next;
	return true;
}

UNIT_TEST(budget_burst_is_a_quarter_second_at_least_min)
{
	CHECK_EQ(mpip_budget_burst(0), MPIP_BUDGET_MIN);
	CHECK_EQ(mpip_budget_burst(1), MPIP_BUDGET_MIN);
	CHECK_EQ(mpip_budget_burst(20), 5);
	CHECK_EQ(mpip_budget_burst(1000), 250);
	CHECK_EQ(mpip_budget_burst(UINT32_MAX), UINT32_MAX / 4);
}

/* Rate 0 is no limit, and leaves the state alone. */
UNIT_TEST(budget_rate_zero_lets_all_through)
{
	u64 next = 0;
	unsigned int i;

	for (i = 0; i < 1000; i++) {
		CHECK(mpip_budget_take(T0 + 77, T0, 0, 1, &next));
		CHECK_EQ(next, T0 + 77);
	}
}

/* A whole budget lets exactly @burst packets through at one instant. */
UNIT_TEST(budget_burst_then_refused_state_kept)
{
	u64 tat = 0, next = 1234;
	unsigned int i;

	for (i = 0; i < 4; i++)
		CHECK_MSG(offer(&tat, T0, 100, 4), "packet %u of the burst", i);
	CHECK_EQ(tat, T0 + 4 * 10 * MS);
	CHECK(!mpip_budget_take(tat, T0, 100, 4, &next));
	CHECK_EQ(next, 1234);
	/* one interval later, one more; not two */
	CHECK(!offer(&tat, T0 + 10 * MS - 1, 100, 4));
	CHECK(offer(&tat, T0 + 10 * MS, 100, 4));
	CHECK(!offer(&tat, T0 + 10 * MS, 100, 4));
}

/* Burst 0 is taken as 1: one packet per interval, none saved up. */
UNIT_TEST(budget_burst_zero_is_one)
{
	u64 tat = 0;

	CHECK(offer(&tat, T0, 10, 0));
	CHECK(!offer(&tat, T0 + 99 * MS, 10, 0));
	CHECK(offer(&tat, T0 + 100 * MS, 10, 0));
	CHECK(!offer(&tat, T0 + 100 * MS, 10, 0));
}

/*
 * Packets offered every millisecond for 10 s: at most rate * 10 + burst
 * go, and at least rate * 10 (the budget does let its rate through).
 */
UNIT_TEST(budget_bounds_a_flood_over_any_span)
{
	static const u32 rates[] = { 1, 20, 200, 999, 1000 };
	unsigned int r, i;

	for (r = 0; r < ARRAY_SIZE(rates); r++) {
		u32 rate = rates[r], burst = mpip_budget_burst(rate);
		u64 tat = 0, sent = 0;

		for (i = 0; i < 10000; i++)
			sent += offer(&tat, T0 + i * MS, rate, burst);
		CHECK_MSG(sent <= (u64)rate * 10 + burst,
			  "rate %u: %llu sent", rate,
			  (unsigned long long)sent);
		CHECK_MSG(sent >= (u64)rate * 10, "rate %u: %llu sent", rate,
			  (unsigned long long)sent);
	}
}

/* Left alone for burst intervals, the budget is whole again. */
UNIT_TEST(budget_refills_after_idle)
{
	u64 tat = 0, now;
	unsigned int i;

	for (i = 0; i < 5; i++)
		CHECK(offer(&tat, T0, 20, 5));
	CHECK(!offer(&tat, T0, 20, 5));
	now = T0 + 5 * 50 * MS;
	for (i = 0; i < 5; i++)
		CHECK_MSG(offer(&tat, now, 20, 5), "packet %u after idle", i);
	CHECK(!offer(&tat, now, 20, 5));
	/* a state far in the past counts as a whole budget, not more */
	tat = 1;
	for (i = 0; i < 5; i++)
		CHECK(offer(&tat, T0, 20, 5));
	CHECK(!offer(&tat, T0, 20, 5));
}

/* The largest rate and burst do not overflow. */
UNIT_TEST(budget_extremes_no_overflow)
{
	u64 next = 0;

	CHECK(mpip_budget_take(T0 + (u64)(UINT32_MAX - 1) * MPIP_BUDGET_NSEC,
			       T0, 1, UINT32_MAX, &next));
	CHECK_EQ(next, T0 + (u64)UINT32_MAX * MPIP_BUDGET_NSEC);
	CHECK(!mpip_budget_take(T0 + (u64)UINT32_MAX * MPIP_BUDGET_NSEC, T0, 1,
				UINT32_MAX, &next));
	CHECK(mpip_budget_take(T0, T0, UINT32_MAX, 1, &next));
	CHECK_EQ(next, T0 + MPIP_BUDGET_NSEC / UINT32_MAX);
}
