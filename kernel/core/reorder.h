/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip TCP reorder decisions (MPIP paper, section 4.2).
 *
 * Segments of one TCP session that took different paths can arrive out of
 * order.  The receiver tracks the next expected sequence number and holds
 * segments that arrive beyond it until the gap before them is filled, the
 * paths show it lost, the hold time's cap runs out, or too many are held.  This file decides; the
 * kernel side (reorder.c) owns the packets, the lock and the timer.  It
 * is portable: it builds in the module and, unchanged, in host unit tests.
 *
 * Sequence numbers are TCP's, mod 2^32, compared wrap-safe.
 */
#ifndef MPIP_CORE_REORDER_H
#define MPIP_CORE_REORDER_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

/* True if sequence number @a lies before @b. */
static inline bool mpip_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/**
 * struct mpip_ro_seq - sequence state of one session, one direction
 * @nxt: next expected sequence number (end of the contiguous data seen)
 * @valid: @nxt is known (a data segment was seen)
 */
struct mpip_ro_seq {
	u32 nxt;
	bool valid;
};

enum mpip_ro_verdict {
	MPIP_RO_PASS,	/* deliver now: in order, old, or first seen */
	MPIP_RO_HOLD,	/* a gap lies before it: hold it */
};

/*
 * A segment covering [@seq, @end) arrives (@end: @seq plus payload, plus
 * one for a FIN).  Returns whether to deliver or hold it; a delivered
 * segment advances @st->nxt to its end if that lies beyond.
 */
enum mpip_ro_verdict mpip_ro_arrive(struct mpip_ro_seq *st, u32 seq, u32 end);

/*
 * The sender sends segments the receiver does not see (MPIP_CM_X_SOLE):
 * what @st knows is stale.  The segment that said so is delivered as it
 * is, and the next one that arrives starts the tracking afresh.
 */
void mpip_ro_forget(struct mpip_ro_seq *st);

/*
 * Release of a held segment [@seq, @end), in sequence order.  @force:
 * the paths show the gap before it lost, reorder_max_hold_ms ran out or
 * the buffer overflowed, so the gap is given up.  Returns true if the
 * segment is released (and @st->nxt advanced past it), false if it must
 * stay held.
 */
bool mpip_ro_release(struct mpip_ro_seq *st, u32 seq, u32 end, bool force);

/**
 * struct mpip_ro_path - what the receiver knows of one path of the peer
 * @latest_us: the newest send time the path delivered (the peer's clock)
 * @margin_us: how far it lets a packet fall behind a newer one
 *	(mpip_ro_lost_margin_us())
 * @delay_us: its last one-way delay sample: our clock minus the peer's
 * @idle_us: how long ago it delivered a packet last
 * @lend: its end on this host, @rend: its end on the peer (addresses, or
 *	any ids that are equal where two paths share an end)
 */
struct mpip_ro_path {
	u32 latest_us;
	u32 margin_us;
	u32 delay_us;
	u32 idle_us;
	u32 lend;
	u32 rend;
};

/*
 * Is the gap before a held segment lost, rather than on its way?  The
 * segment was sent at @ts_us (the sender's clock, from its CM); TCP sent
 * the segments missing before it earlier.  @p[@n] are the paths that
 * currently deliver the peer's packets.  Returns how many us from @now_us
 * (our clock) until every path shows the gap lost, by a packet or by the
 * clock; 0 if they do now.
 *
 * By a packet: a path that has delivered a packet sent more than its
 * margin after the segment has delivered, or lost, whatever was sent on
 * it before the segment.  The segment's own path counts as well: it may
 * have overtaken a missing segment on the way.
 *
 * By the clock: a path that has delivered nothing for @quiet_us carries
 * no stream of ours whose queue could have grown since its last packet,
 * so what was sent on it before the segment would have arrived by @ts_us
 * plus its delay and its margin.  Its delay is its last sample, or that
 * of a path sharing an end with it if more (a queue at a shared end that
 * the other's stream filled).  A path that delivered within @quiet_us is
 * given until it has been quiet that long, or shows the gap lost by a
 * packet.  A path that carries next to nothing (a backup link's
 * heartbeats, a path the weights left nearly idle) would otherwise keep
 * every gap open until the hold time's cap, for want of a packet sent
 * after it.
 *
 * Times are compared wrap-safe.
 */
u32 mpip_ro_gap_wait_us(u32 ts_us, u32 now_us, const struct mpip_ro_path *p,
			unsigned int n, u32 quiet_us);

/*
 * Reordering within one path.  A path mostly delivers in the order it
 * was sent to, but not quite: packets stamped on two CPUs can join its
 * queue in the other order, and a host that hands packets to per-CPU
 * queues on the way can let one overtake another.  The receiver keeps,
 * per path, the recent peak of the lag of late packets (how long before
 * the newest one delivered a late one was sent).  The peak halves every
 * second; mpip_ro_reo_now() gives its value @age_ms after it was set,
 * and mpip_ro_reo_track() the new peak after a packet @lag_us late.
 */
u32 mpip_ro_reo_now(u32 peak_us, u32 age_ms);
u32 mpip_ro_reo_track(u32 peak_us, u32 age_ms, u32 lag_us);

/*
 * A path that has not shown how it reorders yet is taken to reorder this
 * much, in us: a gap waits for it (up to the cap of the margin)
 * until the peak, halving every second, has come down to what the path
 * shows.  Taking it for 0 released gaps as lost at the start of a
 * transfer, before the first late packet, and one segment sent twice so
 * early costs TCP seconds of growth (Documentation/design.rst).
 */
#define MPIP_RO_REO_FIRST_US	16000

enum mpip_ro_order {
	MPIP_RO_ORD_NEWEST,	/* sent after all the path delivered before */
	MPIP_RO_ORD_LATE,	/* one sent after it came first */
	MPIP_RO_ORD_FRESH,	/* no history to compare it with */
};

/*
 * Where a packet sent at @ts_us stands on a path that delivered packets
 * sent up to @newest_us (@known: it delivered any).  Late by *@lag_us if
 * it came after one sent later, by at most @max_us; fresh if the path
 * has no history, or the two lie more than @max_us apart either way (a
 * clock that started again, a path silent that long).  Wrap-safe.
 */
enum mpip_ro_order mpip_ro_order(bool known, u32 newest_us, u32 ts_us,
				 u32 max_us, u32 *lag_us);

/*
 * How far past a held segment a path must have delivered before the gap
 * before the segment counts as lost: @min_us (scheduling jitter) plus
 * the path's recent reordering @reo_us and a quarter, capped at @cap_us.
 */
u32 mpip_ro_lost_margin_us(u32 reo_us, u32 min_us, u32 cap_us);

#endif /* MPIP_CORE_REORDER_H */
