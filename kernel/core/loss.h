/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip's loss oracle (MultiMob): which paths lose too many of their
 * probes to carry data.  Portable: no kernel API, no state of its own;
 * the caller owns the struct and does the locking.
 *
 * While data flows, each path up sends one probe per heartbeat whose
 * nonce the peer answers (rr.c).  Answers carry no probe number; they
 * come back in order, so each settles the oldest probe still awaiting
 * one.  A probe that had no answer for the wait the caller gives (a
 * second or more, well past a round trip) counts as lost, as does the
 * oldest when MPIP_LOSS_OUT await at once; one answered, as delivered.
 * A path whose answers take longer than a heartbeat is slow, not lossy.
 * The last MPIP_LOSS_WINDOW outcomes are kept as bits.  A path is lossy
 * once at least MPIP_LOSS_MIN outcomes are known and the share lost
 * reaches the threshold; it stays lossy until the share drops to half
 * the threshold (hysteresis: a path near the threshold does not flap).
 */
#ifndef MPIP_CORE_LOSS_H
#define MPIP_CORE_LOSS_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_LOSS_WINDOW	16	/* outcomes kept: the bits of @lost */
#define MPIP_LOSS_MIN		8	/* outcomes known before any verdict */
#define MPIP_LOSS_OUT		8	/* probes awaiting an answer at most */

/**
 * struct mpip_loss - the last outcomes of a path's loss probes
 * @sent: when the probes awaiting an answer went (ms, any epoch that
 *	wraps at 2^32), a ring: the oldest at @head
 * @lost: bit i set if the i-th newest outcome was a loss
 * @known: outcomes kept, 0..MPIP_LOSS_WINDOW
 * @head: the oldest probe awaiting an answer, in @sent
 * @out: probes awaiting an answer, 0..MPIP_LOSS_OUT
 * @lossy: the verdict
 *
 * A zeroed struct is a path with no probe yet, not lossy.
 */
struct mpip_loss {
	u32 sent[MPIP_LOSS_OUT];
	u16 lost;
	u8 known;
	u8 head;
	u8 out;
	bool lossy;
};

void mpip_loss_sent(struct mpip_loss *l, u32 now_ms, u32 wait_ms);
void mpip_loss_answered(struct mpip_loss *l, u32 now_ms, u32 wait_ms);
unsigned int mpip_loss_pct(const struct mpip_loss *l);
bool mpip_loss_judge(struct mpip_loss *l, unsigned int pct);

#endif /* MPIP_CORE_LOSS_H */
