/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip per-path delay tracking and path weights (MPIP paper, sections
 * 3.4.2 and 3.5.1, Algorithm 1).
 *
 * This file and path.c are portable: they build inside the kernel module
 * and, unchanged, in host unit tests.  They use no kernel API and keep no
 * state of their own; the caller owns the arrays and does the locking.
 *
 * Delays are one-way delay samples in microseconds, mod 2^32: the
 * receiver's clock at arrival minus the sender's timestamp.  They contain
 * an arbitrary clock offset between the two nodes, so only differences
 * between samples mean anything.  All paths from one sender to one
 * receiver share that offset, so their delays can be compared with each
 * other.  Every comparison is wrap-safe (signed 32-bit difference), which
 * requires the values compared to lie within 2^31 us (about 35 minutes)
 * of each other.
 */
#ifndef MPIP_CORE_PATH_H
#define MPIP_CORE_PATH_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_WEIGHT_MAX		1000	/* upper bound of a path weight */
#define MPIP_WEIGHT_MIN		1	/* lower bound of Algorithm 1's weights */
/* No data: only a tie round parks a path (mpip_weights_tie_round()) */
#define MPIP_WEIGHT_PARKED	0
#define MPIP_DELAY_SHIFT_MAX	31	/* larger smoothing shifts are clamped */
#define MPIP_TREND_HORIZON_MAX	0xffffffU	/* mpip_qdelay_predict() clamp */
#define MPIP_BOOST_SETTLE_SHIFT	2	/* see mpip_weights_boost_step() */
/* The widest band a tie round grants paths of unequal fixed delay */
#define MPIP_TIE_BAND_MAX_US	10000U

/* A device queue whose length this host cannot read (mpip_paths_steer()). */
#define MPIP_BACKLOG_UNKNOWN	(~0U)
/* The packet mpip_paths_steer() counts in each backlog it compares. */
#define MPIP_STEER_PKT_BYTES	1500U

/* 2^32 / phi, phi the golden ratio, rounded to odd (mpip_weights_draw()) */
#define MPIP_DRAW_STRIDE	0x9e3779b9U

/* Returned by the index functions when there is no path to choose. */
#define MPIP_PATH_NONE		(~0U)

/**
 * struct mpip_path_delay - delay state of one path, one direction
 * @d_min: minimum of all raw samples (the constant part of the delay)
 * @d_rt: smoothed real-time delay D
 * @q: real-time queueing delay Q = @d_rt - @d_min, in us, never negative
 * @q_max: maximum of @q since the first sample
 * @have_sample: false until the first sample; then the fields are valid
 *
 * @d_min and @d_rt carry the clock offset; @q and @q_max do not.
 * A zeroed struct is a valid "no sample yet" state.
 */
struct mpip_path_delay {
	u32 d_min;
	u32 d_rt;
	u32 q;
	u32 q_max;
	bool have_sample;
};

void mpip_path_delay_init(struct mpip_path_delay *pd);
u32 mpip_qdelay_predict(u32 q, u32 q_prev, u32 interval, u32 horizon);
void mpip_path_delay_sample(struct mpip_path_delay *pd, u32 sample,
			    unsigned int smooth_shift);
unsigned int mpip_min_delay_index(const struct mpip_path_delay *pd,
				  unsigned int n);
unsigned int mpip_single_index(const u32 *d, u32 have, unsigned int n,
			       unsigned int cur, u32 margin);
unsigned int mpip_max_delay_index(const u32 *d, u32 have, unsigned int n);
unsigned int mpip_copies_index(const u32 *d, u32 have, const u32 *link,
			       const u32 *raddr, unsigned int n,
			       unsigned int want, unsigned int *idx);

/**
 * struct mpip_rtt - the round trip of a path's delay reports
 * @srtt: smoothed round trip, us
 * @rttvar: its mean deviation, us
 * @have: false until the first sample; then the fields are valid
 *
 * A report's round trip, less the time the peer held it: the one-way
 * delay of the path that the report gives, plus the one-way delay of the
 * packet that brought the report back.  Each holds the offset between
 * the two clocks, with opposite signs: their sum does not.  Smoothed as
 * TCP smooths its round trips (RFC 6298).  A zeroed struct has no sample.
 */
struct mpip_rtt {
	u32 srtt;
	u32 rttvar;
	bool have;
};

#define MPIP_RTT_MAX_US		60000000U	/* a longer sum is no round trip */
#define MPIP_RTT_TIMEOUT_CAP	8	/* timeout at most 8 times the base */

bool mpip_rtt_sample(struct mpip_rtt *r, u32 fwd_us, u32 back_us);
u32 mpip_rtt_timeout(const struct mpip_rtt *r, u32 base_ms);

/**
 * struct mpip_wboost - start-up step growth of a node's weight rounds
 * @up: the set of paths (a bit each) of the last round
 * @gain: the paths that gained weight in the last informative round
 * @shift: the last round's step was S << @shift (once @settled: the next
 *	round's step is S << @shift)
 * @settled: the weights crossed their balance: the step halves back
 *	to S, and stays S for good
 *
 * A zeroed struct is the state of a node without rounds yet.
 */
struct mpip_wboost {
	u32 up;
	u32 gain;
	u8 shift;
	bool settled;
};

void mpip_weights_init(u32 *w, unsigned int n);
u32 mpip_weights_gainers(const u32 *q, unsigned int n);
u32 mpip_weights_boost_step(struct mpip_wboost *st, u32 up, u32 gain,
			    bool turned, u32 step, unsigned int max_shift);
void mpip_weights_adjust(const u32 *q, u32 *w, unsigned int n, u32 step);
u32 mpip_weights_tie_step(u8 *idle_rounds, bool idle, u32 step,
			  unsigned int max_shift);
bool mpip_weights_tie_round(const u32 *raw, const u32 *dmin, u32 *w,
			    unsigned int n, u32 band, u32 step, u32 total);
void mpip_weights_normalize(u32 *w, unsigned int n, u32 total);
unsigned int mpip_weights_pick(const u32 *w, unsigned int n, u32 rnd);
u32 mpip_weights_draw(u32 seq);
/**
 * struct mpip_steer - what mpip_paths_steer() knows of each path
 * @w: weights
 * @dev: the local device: paths with equal values share one device
 *	queue at this host
 * @far: the far end: paths with equal values end at the same remote
 *	address
 * @backlog: bytes waiting in the path's device queue at this host, or
 *	MPIP_BACKLOG_UNKNOWN where the device cannot tell
 * @q: queueing delays the paths report, in us
 */
struct mpip_steer {
	const u32 *w, *dev, *far, *backlog, *q;
};

u32 mpip_paths_steer(const struct mpip_steer *st, unsigned int n,
		     unsigned int pick);
unsigned int mpip_weights_pick_mask(const u32 *w, unsigned int n, u32 mask,
				    u32 rnd);

#endif /* MPIP_CORE_PATH_H */
