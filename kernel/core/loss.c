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

/* The oldest probe awaiting an answer is settled: @lost or answered. */
static void mpip_loss_settle(struct mpip_loss *l, bool lost)
{
	l->head = (u8)((l->head + 1) % MPIP_LOSS_OUT);
	l->out--;
	mpip_loss_push(l, lost);
}

/* Probes that had no answer for @wait_ms by @now_ms were lost. */
static void mpip_loss_expire(struct mpip_loss *l, u32 now_ms, u32 wait_ms)
{
	while (l->out && now_ms - l->sent[l->head] >= wait_ms)
		mpip_loss_settle(l, true);
}

/*
 * A probe goes at @now_ms.  Those that waited @wait_ms for their answer
 * were lost; so was the oldest, if MPIP_LOSS_OUT wait already.
 */
void mpip_loss_sent(struct mpip_loss *l, u32 now_ms, u32 wait_ms)
{
	mpip_loss_expire(l, now_ms, wait_ms);
	if (l->out == MPIP_LOSS_OUT)
		mpip_loss_settle(l, true);
	l->sent[(l->head + l->out) % MPIP_LOSS_OUT] = now_ms;
	l->out++;
}

/*
 * An answer came at @now_ms: it settles the oldest probe still awaiting
 * one, unless that waited @wait_ms (then lost, as are all as old).  An
 * answer to nothing outstanding (a second answer, or one to a probe
 * already counted lost) counts nothing.
 */
void mpip_loss_answered(struct mpip_loss *l, u32 now_ms, u32 wait_ms)
{
	mpip_loss_expire(l, now_ms, wait_ms);
	if (l->out)
		mpip_loss_settle(l, false);
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
