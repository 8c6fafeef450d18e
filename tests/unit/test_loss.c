// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/loss.c: the loss oracle's outcomes and
 * verdict.  Probes go every HB ms; an answer is awaited WAIT ms.
 */
#include <string.h>

#include "loss.h"
#include "ktap.h"

#define HB	300
#define WAIT	1000

/*
 * @n probes from *@t on, one every HB ms: each answered 50 ms later
 * unless bit i of @lost (oldest first) says not.
 */
static void probes(struct mpip_loss *l, u32 *t, unsigned int n, u32 lost)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		mpip_loss_sent(l, *t, WAIT);
		if (!(lost >> i & 1))
			mpip_loss_answered(l, *t + 50, WAIT);
		*t += HB;
	}
}

/* Time passes: every probe still awaiting an answer is found lost. */
static void wait_out(struct mpip_loss *l, u32 *t)
{
	*t += WAIT;
	mpip_loss_answered(l, *t, WAIT);	/* an answer to nothing */
}

UNIT_TEST(loss_outcome_known_at_answer_or_after_the_wait)
{
	struct mpip_loss l;

	memset(&l, 0, sizeof(l));
	CHECK_EQ(mpip_loss_pct(&l), 0U);
	mpip_loss_sent(&l, 0, WAIT);
	CHECK_EQ(l.known, 0);		/* not yet known */
	mpip_loss_answered(&l, 100, WAIT);
	CHECK_EQ(l.known, 1);
	CHECK_EQ(l.lost, 0);
	mpip_loss_answered(&l, 150, WAIT);	/* a second answer: nothing */
	CHECK_EQ(l.known, 1);
	mpip_loss_sent(&l, 300, WAIT);
	mpip_loss_sent(&l, 600, WAIT);
	CHECK_EQ(l.known, 1);		/* both await an answer */
	CHECK_EQ(l.out, 2);
	mpip_loss_sent(&l, 1300, WAIT);	/* the one of 300 waited too long */
	CHECK_EQ(l.known, 2);
	CHECK_EQ(l.lost, 1);
	CHECK_EQ(mpip_loss_pct(&l), 50U);
	mpip_loss_answered(&l, 1400, WAIT);	/* the one of 600 */
	CHECK_EQ(l.known, 3);
	CHECK_EQ(l.lost, 2);
	CHECK_EQ(mpip_loss_pct(&l), 33U);
	CHECK_EQ(l.out, 1);
}

/*
 * A round trip of 700 ms, over two heartbeats: every answer comes after
 * the next probe went.  None of them is lost (the first oracle counted
 * each probe whose answer had not come when the next went as lost, and
 * took such a path for lossy: half of its outcomes).
 */
UNIT_TEST(loss_slow_answers_are_not_losses)
{
	struct mpip_loss l;
	u32 t;

	memset(&l, 0, sizeof(l));
	for (t = 0; t <= 20 * HB + 700; t += 100) {
		if (t % HB == 0 && t < 20 * HB)
			mpip_loss_sent(&l, t, WAIT);
		if (t >= 700 && (t - 700) % HB == 0 && t - 700 < 20 * HB)
			mpip_loss_answered(&l, t, WAIT);
	}
	CHECK_EQ(l.known, MPIP_LOSS_WINDOW);
	CHECK_EQ(l.out, 0);
	CHECK_EQ(mpip_loss_pct(&l), 0U);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
}

UNIT_TEST(loss_at_most_eight_await_an_answer)
{
	struct mpip_loss l;
	u32 t;

	memset(&l, 0, sizeof(l));
	for (t = 0; t < MPIP_LOSS_OUT * 10; t += 10)
		mpip_loss_sent(&l, t, WAIT);
	CHECK_EQ(l.out, MPIP_LOSS_OUT);
	CHECK_EQ(l.known, 0);
	mpip_loss_sent(&l, t, WAIT);	/* the oldest gives way: lost */
	CHECK_EQ(l.out, MPIP_LOSS_OUT);
	CHECK_EQ(l.known, 1);
	CHECK_EQ(l.lost, 1);
	/* the answers settle the oldest first, in the ring's order */
	for (t += 10; l.out; t += 10)
		mpip_loss_answered(&l, t, WAIT);
	CHECK_EQ(l.known, 1 + MPIP_LOSS_OUT);
	CHECK_EQ(l.lost, 1U << MPIP_LOSS_OUT);
}

UNIT_TEST(loss_times_wrap)
{
	struct mpip_loss l;
	u32 t = 0xffffffffU - 500;

	memset(&l, 0, sizeof(l));
	mpip_loss_sent(&l, t, WAIT);
	mpip_loss_answered(&l, t + 900, WAIT);	/* past 2^32, in time */
	CHECK_EQ(l.known, 1);
	CHECK_EQ(l.lost, 0);
	mpip_loss_sent(&l, t + 1000, WAIT);
	mpip_loss_sent(&l, t + 2000, WAIT);	/* that of t + 1000: lost */
	CHECK_EQ(l.known, 2);
	CHECK_EQ(l.lost, 1);
}

UNIT_TEST(loss_window_keeps_the_last_sixteen)
{
	struct mpip_loss l;
	u32 t = 0;

	memset(&l, 0, sizeof(l));
	probes(&l, &t, MPIP_LOSS_WINDOW + 1, ~0U);
	wait_out(&l, &t);
	CHECK_EQ(l.out, 0);
	CHECK_EQ(l.known, MPIP_LOSS_WINDOW);
	CHECK_EQ(mpip_loss_pct(&l), 100U);
	/* then 8 answered: half the window */
	probes(&l, &t, 8, 0);
	CHECK_EQ(l.known, MPIP_LOSS_WINDOW);
	CHECK_EQ(mpip_loss_pct(&l), 50U);
	probes(&l, &t, 8, 0);
	CHECK_EQ(mpip_loss_pct(&l), 0U);
}

UNIT_TEST(loss_verdict_needs_enough_outcomes)
{
	struct mpip_loss l;
	u32 t = 0;

	memset(&l, 0, sizeof(l));
	/* 7 of 7 lost: too few to judge */
	probes(&l, &t, MPIP_LOSS_MIN - 1, ~0U);
	wait_out(&l, &t);
	CHECK_EQ(l.known, MPIP_LOSS_MIN - 1);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
	probes(&l, &t, 1, ~0U);
	wait_out(&l, &t);
	CHECK(mpip_loss_judge(&l, 30));
	CHECK(l.lossy);
	CHECK(!mpip_loss_judge(&l, 30));	/* no change: false */
}

UNIT_TEST(loss_verdict_has_hysteresis)
{
	struct mpip_loss l;
	u32 t = 0;

	memset(&l, 0, sizeof(l));
	/* 16 outcomes, 5 lost (31 %): lossy at 30 */
	probes(&l, &t, 5, ~0U);
	wait_out(&l, &t);
	probes(&l, &t, 11, 0);
	CHECK_EQ(l.known, 16);
	CHECK_EQ(mpip_loss_pct(&l), 31U);
	CHECK(mpip_loss_judge(&l, 30));
	/* 4 of 16 (25 %): still lossy, above half the threshold */
	probes(&l, &t, 1, 0);
	CHECK_EQ(mpip_loss_pct(&l), 25U);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(l.lossy);
	/* 2 of 16 (12 %): no longer */
	probes(&l, &t, 2, 0);
	CHECK_EQ(mpip_loss_pct(&l), 12U);
	CHECK(mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
	/* 4 lost more, the 2 oldest losses gone: 4 of 16, below 30 */
	probes(&l, &t, 4, ~0U);
	wait_out(&l, &t);
	CHECK_EQ(mpip_loss_pct(&l), 25U);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
}

UNIT_TEST(loss_threshold_zero_is_off)
{
	struct mpip_loss l;
	u32 t = 0;

	memset(&l, 0, sizeof(l));
	probes(&l, &t, 17, ~0U);
	wait_out(&l, &t);
	CHECK(!mpip_loss_judge(&l, 0));
	CHECK(mpip_loss_judge(&l, 100));
	CHECK(l.lossy);
	CHECK(mpip_loss_judge(&l, 0));
	CHECK(!l.lossy);
}
