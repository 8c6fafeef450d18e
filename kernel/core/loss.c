// SPDX-License-Identifier: GPL-2.0
/*
 * mpip's loss oracle: the outcomes of a path's loss probes and the
 * verdict on them (loss.h).  Portable C: no kernel API.
 */
#include "loss.h"

static void mpip_loss_push(struct mpip_loss *l, bool lost)
{
	l->lost = (u16)(l->lost << 1 | (lost ? 1 : 0));
	if (l->known < MPIP_LOSS_WINDOW)
		l->known++;
}

/*
 * A probe goes now: the one before it, if still unanswered, was lost.
 */
void mpip_loss_sent(struct mpip_loss *l)
{
	if (l->waiting)
		mpip_loss_push(l, true);
	l->waiting = true;
}

/*
 * The answer to the last probe came.  Answers to nothing outstanding (a
 * second answer, or one to a probe already counted lost) count nothing.
 */
void mpip_loss_answered(struct mpip_loss *l)
{
	if (!l->waiting)
		return;
	l->waiting = false;
	mpip_loss_push(l, false);
}

/* The share of the known outcomes that were losses, in percent. */
unsigned int mpip_loss_pct(const struct mpip_loss *l)
{
	unsigned int i, n = 0;

	if (!l->known)
		return 0;
	for (i = 0; i < l->known; i++)
		n += l->lost >> i & 1;
	return n * 100 / l->known;
}

/**
 * mpip_loss_judge() - update the verdict on a path
 * @l: its outcomes
 * @pct: the threshold, 1..100; 0 turns the oracle off (never lossy)
 *
 * Lossy once at least MPIP_LOSS_MIN outcomes are known and the share lost
 * is @pct or more; no longer once it is @pct / 2 or less.
 *
 * Return: true if the verdict changed.
 */
bool mpip_loss_judge(struct mpip_loss *l, unsigned int pct)
{
	unsigned int share = mpip_loss_pct(l);
	bool was = l->lossy;

	if (!pct)
		l->lossy = false;
	else if (!l->lossy)
		l->lossy = l->known >= MPIP_LOSS_MIN && share >= pct;
	else
		l->lossy = share > pct / 2;
	return l->lossy != was;
}
