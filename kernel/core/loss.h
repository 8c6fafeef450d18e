/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip's loss oracle (MultiMob): which paths lose too many of their
 * probes to carry data.  Portable: no kernel API, no state of its own;
 * the caller owns the struct and does the locking.
 *
 * While data flows, each path up sends one probe per heartbeat whose
 * nonce the peer answers (rr.c).  A probe still unanswered when the next
 * one goes counts as lost, one that was answered as delivered; the last
 * MPIP_LOSS_WINDOW outcomes are kept as bits.  A path is lossy once at
 * least MPIP_LOSS_MIN outcomes are known and the share lost reaches the
 * threshold; it stays lossy until the share drops to half the threshold
 * (hysteresis: a path near the threshold does not flap).
 */
#ifndef MPIP_CORE_LOSS_H
#define MPIP_CORE_LOSS_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_LOSS_WINDOW	16	/* outcomes kept: the bits of @lost */
#define MPIP_LOSS_MIN		8	/* outcomes known before any verdict */

/**
 * struct mpip_loss - the last outcomes of a path's loss probes
 * @lost: bit i set if the i-th newest outcome was a loss
 * @known: outcomes kept, 0..MPIP_LOSS_WINDOW
 * @waiting: a probe went and neither its answer nor the next probe yet
 * @lossy: the verdict
 *
 * A zeroed struct is a path with no probe yet, not lossy.
 */
struct mpip_loss {
	u16 lost;
	u8 known;
	bool waiting;
	bool lossy;
};

void mpip_loss_sent(struct mpip_loss *l);
void mpip_loss_answered(struct mpip_loss *l);
unsigned int mpip_loss_pct(const struct mpip_loss *l);
bool mpip_loss_judge(struct mpip_loss *l, unsigned int pct);

#endif /* MPIP_CORE_LOSS_H */
