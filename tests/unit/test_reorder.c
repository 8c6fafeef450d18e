// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/reorder.c: TCP reorder decisions and
 * the hold time, including sequence numbers that wrap around 2^32.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "ktap.h"

#define NSEG	64
#define MSS	1400

UNIT_TEST(reorder_first_segment_sets_nxt)
{
	struct mpip_ro_seq st = { 0 };

	CHECK_EQ(mpip_ro_arrive(&st, 1000, 2400), MPIP_RO_PASS);
	CHECK(st.valid);
	CHECK_EQ(st.nxt, 2400);
	CHECK_EQ(mpip_ro_arrive(&st, 2400, 3800), MPIP_RO_PASS);
	CHECK_EQ(st.nxt, 3800);
}

UNIT_TEST(reorder_gap_holds_old_and_overlap_pass)
{
	struct mpip_ro_seq st = { 0 };

	mpip_ro_arrive(&st, 0, 100);
	/* beyond the expected byte: hold, nxt unchanged */
	CHECK_EQ(mpip_ro_arrive(&st, 200, 300), MPIP_RO_HOLD);
	CHECK_EQ(st.nxt, 100);
	/* a retransmission of old data passes and moves nothing */
	CHECK_EQ(mpip_ro_arrive(&st, 0, 100), MPIP_RO_PASS);
	CHECK_EQ(st.nxt, 100);
	/* overlapping the expected byte: passes, nxt moves to its end */
	CHECK_EQ(mpip_ro_arrive(&st, 50, 200), MPIP_RO_PASS);
	CHECK_EQ(st.nxt, 200);
	/* the held one is now releasable without force */
	CHECK(mpip_ro_release(&st, 200, 300, false));
	CHECK_EQ(st.nxt, 300);
}

UNIT_TEST(reorder_release_waits_unless_forced)
{
	struct mpip_ro_seq st = { 0 };

	mpip_ro_arrive(&st, 0, 100);
	CHECK(!mpip_ro_release(&st, 150, 250, false));
	CHECK_EQ(st.nxt, 100);
	CHECK(mpip_ro_release(&st, 150, 250, true));
	CHECK_EQ(st.nxt, 250);
	/* an older held segment after a forced release passes unchanged */
	CHECK(mpip_ro_release(&st, 100, 150, false));
	CHECK_EQ(st.nxt, 250);
}

/*
 * One path, most segments unseen: the segment with MPIP_CM_X_SOLE makes
 * the tracking start afresh, so the next seen segment, far beyond the
 * last known end, is not held for a gap the unseen ones filled.
 */
UNIT_TEST(reorder_forget_restarts_tracking)
{
	struct mpip_ro_seq st = { 0 };

	mpip_ro_arrive(&st, 0, 100);
	/* without forgetting, a segment beyond unseen ones would wait */
	CHECK_EQ(mpip_ro_arrive(&st, 90000, 91400), MPIP_RO_HOLD);
	CHECK_EQ(st.nxt, 100);
	mpip_ro_forget(&st);
	CHECK(!st.valid);
	CHECK_EQ(mpip_ro_arrive(&st, 500000, 501400), MPIP_RO_PASS);
	CHECK(st.valid);
	CHECK_EQ(st.nxt, 501400);
	/* from here on, gaps count again */
	CHECK_EQ(mpip_ro_arrive(&st, 502800, 504200), MPIP_RO_HOLD);
	CHECK_EQ(mpip_ro_arrive(&st, 501400, 502800), MPIP_RO_PASS);
	CHECK(mpip_ro_release(&st, 502800, 504200, false));
	CHECK_EQ(st.nxt, 504200);
	/* a forced release while forgotten leaves the next arrival in charge */
	mpip_ro_forget(&st);
	CHECK(mpip_ro_release(&st, 600000, 601400, true));
	CHECK_EQ(mpip_ro_arrive(&st, 700000, 701400), MPIP_RO_PASS);
	CHECK_EQ(st.nxt, 701400);
}

UNIT_TEST(reorder_wraps_around)
{
	struct mpip_ro_seq st = { 0 };
	u32 base = 0xffffffff - 2 * MSS + 7;

	mpip_ro_arrive(&st, base, base + MSS);
	CHECK_EQ(mpip_ro_arrive(&st, base + 2 * MSS, base + 3 * MSS),
		 MPIP_RO_HOLD);
	CHECK_EQ(mpip_ro_arrive(&st, base + MSS, base + 2 * MSS), MPIP_RO_PASS);
	CHECK_EQ(st.nxt, base + 2 * MSS);
	CHECK(mpip_ro_release(&st, base + 2 * MSS, base + 3 * MSS, false));
	CHECK_EQ(st.nxt, (u32)(base + 3 * MSS));
	CHECK(st.nxt < 0x10000);
}

/*
 * A model receiver: segments of a stream arrive in a random order within
 * a window; held ones sit in a list sorted by sequence number and are
 * released in order as the core allows.  Without loss nothing is ever
 * forced, and the delivered stream must be exactly in order.
 */
struct held {
	u32 seq, end;
};

static unsigned int release_in_order(struct mpip_ro_seq *st, struct held *h,
				     unsigned int *nh, u32 *out,
				     unsigned int nout)
{
	unsigned int i = 0;

	while (i < *nh && mpip_ro_release(st, h[i].seq, h[i].end, false))
		out[nout++] = h[i++].seq;
	memmove(h, h + i, (*nh - i) * sizeof(*h));
	*nh -= i;
	return nout;
}

static void hold_sorted(struct held *h, unsigned int *nh, u32 seq, u32 end)
{
	unsigned int i = *nh;

	while (i && mpip_seq_before(seq, h[i - 1].seq)) {
		h[i] = h[i - 1];
		i--;
	}
	h[i].seq = seq;
	h[i].end = end;
	(*nh)++;
}

static void run_shuffled(struct unit_ctx *ctx, u32 base, unsigned int win,
			 unsigned int seed)
{
	unsigned int order[NSEG], i, j, t, nh = 0, nout = 0;
	struct mpip_ro_seq st = { 0 };
	struct held h[NSEG];
	u32 out[NSEG];

	srand(seed);
	for (i = 0; i < NSEG; i++)
		order[i] = i;
	/* local shuffles: every segment moves by less than @win */
	for (i = 1; i + 1 < NSEG; i++) {
		j = i + rand() % win;
		if (j >= NSEG)
			j = NSEG - 1;
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	/* the first segment defines the start of the stream */
	for (i = 0; i < NSEG; i++) {
		u32 seq = base + order[i] * MSS;

		if (mpip_ro_arrive(&st, seq, seq + MSS) == MPIP_RO_HOLD) {
			hold_sorted(h, &nh, seq, seq + MSS);
			continue;
		}
		out[nout++] = seq;
		nout = release_in_order(&st, h, &nh, out, nout);
	}
	CHECK_EQ(nh, 0);
	CHECK_EQ(nout, NSEG);
	for (i = 0; i < nout; i++)
		CHECK_EQ_MSG(out[i], base + i * MSS, "seed %u pos %u", seed, i);
}

UNIT_TEST(reorder_shuffled_stream_comes_out_in_order)
{
	unsigned int seed;

	for (seed = 1; seed <= 200; seed++) {
		run_shuffled(ctx, 1000, 1 + seed % 8, seed);
		run_shuffled(ctx, 0xffffffff - 10 * MSS, 1 + seed % 8, seed);
	}
}

/* Margins of up to four paths, all @m us. */
static const u32 *margins(u32 m)
{
	static u32 a[4];
	unsigned int i;

	for (i = 0; i < 4; i++)
		a[i] = m;
	return a;
}

/*
 * The packet rule alone: mpip_ro_gap_wait_us() over @n busy paths (never
 * quiet) with these newest send times and margins, at the segment's own
 * send time (so that no clock shows anything): lost if no wait.
 */
static bool gap_lost(u32 ts_us, const u32 *latest, const u32 *margin,
		     unsigned int n)
{
	struct mpip_ro_path p[4] = {};
	unsigned int i;

	for (i = 0; i < n; i++) {
		p[i].latest_us = latest[i];
		p[i].margin_us = margin[i];
		p[i].delay_us = 1000;
		p[i].lend = i;
		p[i].rend = i;
	}
	return !mpip_ro_gap_wait_us(ts_us, ts_us, p, n, 1);
}

UNIT_TEST(reorder_gap_lost_needs_every_path_past_it)
{
	u32 past[] = { 5001, 5001, 6000 };
	u32 behind[] = { 5001, 4999, 6000 };

	/* sent at 5000: all three paths delivered something newer */
	CHECK(gap_lost(5000, past, margins(0), 3));
	/* path 2 has not delivered anything sent after it yet */
	CHECK(!gap_lost(5000, behind, margins(0), 3));
	/* sent in the same microsecond is not after */
	CHECK(!gap_lost(5001, past, margins(0), 3));
	/* its own path counts too: path 1 delivered it (5000) and nothing
	 * newer, and a missing segment may be behind it on path 1
	 */
	past[0] = 5000;
	CHECK(!gap_lost(5000, past, margins(0), 3));
	/* one path is all there is */
	CHECK(gap_lost(5000, past + 2, margins(0), 1));
	CHECK(gap_lost(5000, NULL, NULL, 0));
	/* a margin: path 3 (6000) is 1000 us past 5000, path 2 only 1 */
	past[0] = 6000;
	CHECK(!gap_lost(5000, past, margins(1), 3));
	CHECK(gap_lost(4000, past, margins(1000), 3));
	CHECK(!gap_lost(4000, past, margins(1001), 3));
}

UNIT_TEST(reorder_gap_lost_margin_per_path)
{
	u32 latest[] = { 5000, 7000, 9000 };
	/* path 2 reorders by up to 2500 us, path 3 by 3500 */
	u32 m[] = { 0, 2500, 3500 };

	/* path 2 is 2000 past, within its margin: not lost yet */
	CHECK(!gap_lost(4999, latest, m, 3));
	/* 2501 past path 2's and 3501 past path 3's: lost */
	CHECK(gap_lost(4499, latest, m, 3));
	/* path 3's own margin is what counts for path 3 */
	m[1] = 0;
	CHECK(!gap_lost(5500, latest, m, 3));
	m[0] = 0;
	CHECK(gap_lost(4999, latest, m, 3));
	/* path 1's margin counts for path 1 */
	m[0] = 1;
	CHECK(!gap_lost(4999, latest, m, 3));
}

UNIT_TEST(reorder_gap_lost_wraps_around)
{
	/* the sender's clock wrapped between the segment and the news */
	u32 past[] = { 0x10, 0x10 };
	u32 before[] = { 0x10, 0xffffff00 };

	CHECK(gap_lost(0xfffffff0, past, margins(0), 2));
	CHECK(!gap_lost(0xfffffff0, before, margins(0), 2));
	CHECK(!gap_lost(0x10, before, margins(0), 2));
	/* and with a margin across the wrap */
	CHECK(gap_lost(0xfffffff0, past, margins(0x1f), 2));
	CHECK(!gap_lost(0xfffffff0, past, margins(0x20), 2));
}

/* A path: newest send time, margin, last delay, idle since; its own ends */
static struct mpip_ro_path rp(u32 latest, u32 margin, u32 delay, u32 idle)
{
	static u32 ends;
	struct mpip_ro_path p = {
		.latest_us = latest, .margin_us = margin,
		.delay_us = delay, .idle_us = idle,
		.lend = ++ends, .rend = ++ends,
	};

	return p;
}

UNIT_TEST(reorder_gap_wait_by_packet_or_clock)
{
	/* our clock runs 1,000,000 us ahead of the peer's, plus the delay */
	struct mpip_ro_path p[2];
	u32 ts = 5000, off = 1000000;

	/* both paths delivered something sent after it: lost now */
	p[0] = rp(5100, 50, off + 2000, 0);
	p[1] = rp(5200, 50, off + 10000, 0);
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 9000, p, 2, 20000), 0);
	/* path 2 has not, and still delivers: wait until it has been
	 * quiet for 20 ms (here 5 ms more), although by the clock (due at
	 * ts + 2,000 + 50) it would be lost
	 */
	p[1] = rp(4000, 50, off + 2000, 15000);
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 9000, p, 2, 20000), 5000);
	p[1].idle_us = 20000;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 9000, p, 2, 20000), 0);
	/* quiet, but with a delay of 10 ms what was sent on it with the
	 * gap is due only at ts + 10,000 + 50 on our clock: 6,050 us from
	 * now
	 */
	p[1].delay_us = off + 10000;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 9000, p, 2, 20000), 6050);
	/* and past that, lost by the clock */
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 15050, p, 2, 20000), 0);
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 15049, p, 2, 20000), 1);
	/* the longer of the two waits counts */
	p[1].idle_us = 0;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 15050, p, 2, 20000), 20000);
	/* the packet rule needs no quiet path: path 2 delivered one sent
	 * more than its margin after the gap
	 */
	p[1].latest_us = 5051;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 9000, p, 2, 20000), 0);
	p[1].latest_us = 5050;
	CHECK(mpip_ro_gap_wait_us(ts, off + 9000, p, 2, 20000) > 0);
	/* no path: nothing can be on its way */
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off, NULL, 0, 20000), 0);
}

UNIT_TEST(reorder_gap_wait_shared_end_delay)
{
	/* path 2 is quiet with an old sample of 2 ms; path 1, busy and
	 * past the gap, shares our end with it and now takes 30 ms: a
	 * queue there would hold path 2's packets too
	 */
	struct mpip_ro_path p[3];
	u32 ts = 5000, off = 1000000;

	p[0] = rp(9000, 0, off + 30000, 0);
	p[1] = rp(4000, 0, off + 2000, 50000);
	p[1].lend = p[0].lend;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 8000, p, 2, 20000), 27000);
	/* sharing the peer's end counts the same */
	p[1].lend = 77;
	p[1].rend = p[0].rend;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 8000, p, 2, 20000), 27000);
	/* sharing no end, its own sample counts: due at ts + 2,000 */
	p[1].rend = 78;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 8000, p, 2, 20000), 0);
	/* a smaller delay at a shared end does not lower its own */
	p[2] = rp(9000, 0, off + 1000, 0);
	p[2].lend = 77;
	p[1].delay_us = off + 4000;
	CHECK_EQ(mpip_ro_gap_wait_us(ts, off + 8000, p, 3, 20000), 1000);
}

UNIT_TEST(reorder_gap_wait_wraps_around)
{
	/* the peer's clock and ours both wrap between the gap and now */
	struct mpip_ro_path p = rp(0xffffff00, 0, 0x300, 30000);
	u32 ts = 0xfffffff0;

	/* due at ts + 0x300 = 0x2f0 on our clock */
	CHECK_EQ(mpip_ro_gap_wait_us(ts, 0x2f0, &p, 1, 20000), 0);
	CHECK_EQ(mpip_ro_gap_wait_us(ts, 0x2ef, &p, 1, 20000), 1);
	CHECK_EQ(mpip_ro_gap_wait_us(ts, 0xfffffff0, &p, 1, 20000), 0x300);
	/* a due time long past is no wait, not 2^32 less the lag */
	CHECK_EQ(mpip_ro_gap_wait_us(ts, 0x7000, &p, 1, 20000), 0);
}

UNIT_TEST(reorder_reo_peak_halves_every_second)
{
	CHECK_EQ(mpip_ro_reo_now(8000, 0), 8000);
	CHECK_EQ(mpip_ro_reo_now(8000, 999), 8000);
	CHECK_EQ(mpip_ro_reo_now(8000, 1000), 4000);
	CHECK_EQ(mpip_ro_reo_now(8000, 3500), 1000);
	CHECK_EQ(mpip_ro_reo_now(0xffffffff, 31000), 1);
	/* no shift by 32 or more (undefined in C) */
	CHECK_EQ(mpip_ro_reo_now(0xffffffff, 32000), 0);
	CHECK_EQ(mpip_ro_reo_now(0xffffffff, 0xffffffff), 0);
	/* a larger lag replaces the peak, a smaller one leaves it */
	CHECK_EQ(mpip_ro_reo_track(3000, 0, 5000), 5000);
	CHECK_EQ(mpip_ro_reo_track(3000, 0, 2000), 3000);
	/* ... as it has decayed by now */
	CHECK_EQ(mpip_ro_reo_track(8000, 2000, 2500), 2500);
	CHECK_EQ(mpip_ro_reo_track(8000, 2000, 1500), 2000);
}

UNIT_TEST(reorder_order_of_a_path)
{
	u32 lag = 7;

	/* no history: fresh, whatever the time */
	CHECK_EQ(mpip_ro_order(false, 5000, 4000, 1000000, &lag),
		 MPIP_RO_ORD_FRESH);
	CHECK_EQ(lag, 0);
	/* the same time again, or later: the newest */
	CHECK_EQ(mpip_ro_order(true, 5000, 5000, 1000000, &lag),
		 MPIP_RO_ORD_NEWEST);
	CHECK_EQ(mpip_ro_order(true, 5000, 1005000, 1000000, &lag),
		 MPIP_RO_ORD_NEWEST);
	/* earlier: late by the difference, up to the limit */
	CHECK_EQ(mpip_ro_order(true, 5000, 4000, 1000000, &lag),
		 MPIP_RO_ORD_LATE);
	CHECK_EQ(lag, 1000);
	CHECK_EQ(mpip_ro_order(true, 1005000, 5000, 1000000, &lag),
		 MPIP_RO_ORD_LATE);
	CHECK_EQ(lag, 1000000);
	/* further apart either way: a new clock or a long silence */
	CHECK_EQ(mpip_ro_order(true, 1005001, 5000, 1000000, &lag),
		 MPIP_RO_ORD_FRESH);
	CHECK_EQ(lag, 0);
	CHECK_EQ(mpip_ro_order(true, 5000, 1005001, 1000000, &lag),
		 MPIP_RO_ORD_FRESH);
	/* across the wrap of the 32-bit clock */
	CHECK_EQ(mpip_ro_order(true, 0xfffffc18, 0x3e8, 1000000, &lag),
		 MPIP_RO_ORD_NEWEST);
	CHECK_EQ(mpip_ro_order(true, 0x3e8, 0xfffffc18, 1000000, &lag),
		 MPIP_RO_ORD_LATE);
	CHECK_EQ(lag, 2000);
	/* half the clock apart: fresh, not late by 2^31 */
	CHECK_EQ(mpip_ro_order(true, 0x80000000, 0, 1000000, &lag),
		 MPIP_RO_ORD_FRESH);
	CHECK_EQ(mpip_ro_order(true, 0, 0x80000000, 1000000, &lag),
		 MPIP_RO_ORD_FRESH);
}

UNIT_TEST(reorder_lost_margin)
{
	/* no reordering: the fixed margin */
	CHECK_EQ(mpip_ro_lost_margin_us(0, 1000, 20000), 1000);
	/* the peak and a quarter on top of it */
	CHECK_EQ(mpip_ro_lost_margin_us(4000, 1000, 20000), 6000);
	CHECK_EQ(mpip_ro_lost_margin_us(40000, 1000, 20000), 20000);
	/* no overflow anywhere near 2^32 */
	CHECK_EQ(mpip_ro_lost_margin_us(0xffffffff, 0xffffffff, 0xfffffffe),
		 0xfffffffe);
}
