// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/loss.c: the loss oracle's outcomes and
 * verdict.
 */
#include <string.h>

#include "loss.h"
#include "ktap.h"

/* @n probes: each answered unless bit i of @lost (oldest first) says not. */
static void probes(struct mpip_loss *l, unsigned int n, u32 lost)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		mpip_loss_sent(l);
		if (!(lost >> i & 1))
			mpip_loss_answered(l);
	}
}

UNIT_TEST(loss_outcome_known_at_answer_or_next_probe)
{
	struct mpip_loss l;

	memset(&l, 0, sizeof(l));
	CHECK_EQ(mpip_loss_pct(&l), 0U);
	mpip_loss_sent(&l);
	CHECK_EQ(l.known, 0);		/* not yet known */
	mpip_loss_answered(&l);
	CHECK_EQ(l.known, 1);
	CHECK_EQ(l.lost, 0);
	mpip_loss_answered(&l);		/* a second answer counts nothing */
	CHECK_EQ(l.known, 1);
	mpip_loss_sent(&l);
	mpip_loss_sent(&l);		/* the one before was lost */
	CHECK_EQ(l.known, 2);
	CHECK_EQ(l.lost, 1);
	CHECK_EQ(mpip_loss_pct(&l), 50U);
	mpip_loss_answered(&l);
	CHECK_EQ(l.known, 3);
	CHECK_EQ(l.lost, 2);
	CHECK_EQ(mpip_loss_pct(&l), 33U);
}

UNIT_TEST(loss_window_keeps_the_last_sixteen)
{
	struct mpip_loss l;

	memset(&l, 0, sizeof(l));
	/* 16 lost (each found at the next probe; the last still waits) */
	probes(&l, MPIP_LOSS_WINDOW + 1, ~0U);
	CHECK_EQ(l.known, MPIP_LOSS_WINDOW);
	CHECK_EQ(mpip_loss_pct(&l), 100U);
	/* then 8 answered: half the window */
	mpip_loss_answered(&l);		/* the 17th, late but answered */
	probes(&l, 7, 0);
	CHECK_EQ(l.known, MPIP_LOSS_WINDOW);
	CHECK_EQ(mpip_loss_pct(&l), 50U);
	probes(&l, 8, 0);
	CHECK_EQ(mpip_loss_pct(&l), 0U);
}

UNIT_TEST(loss_verdict_needs_enough_outcomes)
{
	struct mpip_loss l;

	memset(&l, 0, sizeof(l));
	/* 7 of 7 lost: too few to judge */
	probes(&l, MPIP_LOSS_MIN, ~0U);
	CHECK_EQ(l.known, MPIP_LOSS_MIN - 1);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
	mpip_loss_sent(&l);
	CHECK(mpip_loss_judge(&l, 30));
	CHECK(l.lossy);
	CHECK(!mpip_loss_judge(&l, 30));	/* no change: false */
}

UNIT_TEST(loss_verdict_has_hysteresis)
{
	struct mpip_loss l;

	memset(&l, 0, sizeof(l));
	/* 16 outcomes, 5 lost (31 %): lossy at 30 */
	probes(&l, 16, 0x1f);
	mpip_loss_answered(&l);
	CHECK_EQ(l.known, 16);
	CHECK_EQ(mpip_loss_pct(&l), 31U);
	CHECK(mpip_loss_judge(&l, 30));
	/* 4 of 16 (25 %): still lossy, above half the threshold */
	probes(&l, 1, 0);
	CHECK_EQ(mpip_loss_pct(&l), 25U);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(l.lossy);
	/* 2 of 16 (12 %): no longer */
	probes(&l, 2, 0);
	CHECK_EQ(mpip_loss_pct(&l), 12U);
	CHECK(mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
	/* 4 of 16 again: not lossy, below the threshold */
	probes(&l, 2, 3);
	mpip_loss_sent(&l);
	CHECK(!mpip_loss_judge(&l, 30));
	CHECK(!l.lossy);
}

UNIT_TEST(loss_threshold_zero_is_off)
{
	struct mpip_loss l;

	memset(&l, 0, sizeof(l));
	probes(&l, 17, ~0U);
	CHECK(!mpip_loss_judge(&l, 0));
	CHECK(mpip_loss_judge(&l, 100));
	CHECK(l.lossy);
	CHECK(mpip_loss_judge(&l, 0));
	CHECK(!l.lossy);
}
