// SPDX-License-Identifier: GPL-2.0
/*
 * mpip per-path delay tracking and path weights.
 *
 * Portable C: no kernel API, only the types that compat.h provides.  No
 * 64-bit division either, so that the object links on 32-bit kernels.
 * The model is described in path.h.
 */
#include "path.h"

/* Wrap-safe: true if @a is before (smaller than) @b mod 2^32. */
static bool path_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/**
 * mpip_path_delay_init() - forget all samples of a path
 * @pd: delay state
 *
 * Use it when the path is (re)created, or when its samples can no longer
 * be compared with the new ones (the peer's clock jumped).
 */
void mpip_path_delay_init(struct mpip_path_delay *pd)
{
	pd->d_min = 0;
	pd->d_rt = 0;
	pd->q = 0;
	pd->q_max = 0;
	pd->have_sample = false;
}

/**
 * mpip_path_delay_sample() - account one raw one-way delay sample
 * @pd: delay state of the path
 * @sample: receiver clock minus sender timestamp, in us, mod 2^32
 * @smooth_shift: smoothing weight 1/2^@smooth_shift of the new sample;
 *	0 takes the sample as is, values above MPIP_DELAY_SHIFT_MAX are
 *	clamped
 *
 * The first sample sets D and D_min to @sample and Q, Q_max to 0.  Later
 * ones move the smoothed delay D towards @sample by the distance divided
 * by 2^@smooth_shift, rounded towards zero but at least 1 us, so that D
 * never overshoots @sample and reaches a constant input exactly.  Then,
 * as in the paper: D_min = min(D_min, @sample), Q = D - D_min,
 * Q_max = max(Q_max, Q).  D_min tracks the raw samples: the lowest delay
 * ever seen is the best estimate of the constant part of the delay.
 * Since D always lies between earlier samples and @sample, Q >= 0.
 */
void mpip_path_delay_sample(struct mpip_path_delay *pd, u32 sample,
			    unsigned int smooth_shift)
{
	u32 diff, step;
	s32 q;

	if (!pd->have_sample) {
		pd->d_min = sample;
		pd->d_rt = sample;
		pd->q = 0;
		pd->q_max = 0;
		pd->have_sample = true;
		return;
	}

	if (smooth_shift > MPIP_DELAY_SHIFT_MAX)
		smooth_shift = MPIP_DELAY_SHIFT_MAX;

	/* D += (sample - D) / 2^shift, on the magnitude: no signed shifts. */
	diff = sample - pd->d_rt;
	if ((s32)diff < 0) {
		step = (0U - diff) >> smooth_shift;
		pd->d_rt -= step ? step : 1;
	} else if (diff) {
		step = diff >> smooth_shift;
		pd->d_rt += step ? step : 1;
	}

	if (path_before(sample, pd->d_min))
		pd->d_min = sample;

	q = (s32)(pd->d_rt - pd->d_min);
	pd->q = q > 0 ? (u32)q : 0;
	if (pd->q > pd->q_max)
		pd->q_max = pd->q;
}

/**
 * mpip_min_delay_index() - path with the lowest delay (responsiveness first)
 * @pd: delay state of @n paths; all of them between the same two nodes,
 *	so that they share one clock offset
 * @n: number of paths
 *
 * Compares the smoothed delays D wrap-safe.  Ties go to the lowest index.
 * Paths without a sample come after all paths with one.
 *
 * Return: the index of the chosen path: 0 if no path has a sample yet,
 * MPIP_PATH_NONE if @n is 0.
 */
unsigned int mpip_min_delay_index(const struct mpip_path_delay *pd,
				  unsigned int n)
{
	unsigned int i, best = MPIP_PATH_NONE;

	for (i = 0; i < n; i++) {
		if (!pd[i].have_sample)
			continue;
		if (best == MPIP_PATH_NONE ||
		    path_before(pd[i].d_rt, pd[best].d_rt))
			best = i;
	}
	if (best == MPIP_PATH_NONE && n)
		best = 0;
	return best;
}

/*
 * Of the first @n paths with a measured delay in @d (bit i of @have), the
 * one of lowest delay, or of highest if @highest; ties go to the lowest
 * index.  MPIP_PATH_NONE if none has a measured delay.
 */
static unsigned int delay_extreme(const u32 *d, u32 have, unsigned int n,
				  bool highest)
{
	unsigned int i, best = MPIP_PATH_NONE;

	if (n < 32)
		have &= (1U << n) - 1;
	for (i = 0; i < n; i++) {
		if (!(have & (1U << i)))
			continue;
		if (best == MPIP_PATH_NONE ||
		    (highest ? path_before(d[best], d[i]) :
			       path_before(d[i], d[best])))
			best = i;
	}
	return best;
}

/**
 * mpip_single_index() - the path of a flow in mode single, with hysteresis
 * @d: smoothed one-way delays D of @n paths between the same two nodes
 *	(one clock offset, compared wrap-safe)
 * @have: bit i set if @d[i] is a measured delay; others are not compared
 * @n: number of paths, at most 32
 * @cur: index of the flow's path so far, or MPIP_PATH_NONE (or any
 *	value >= @n) if it has none among them
 * @margin: how much lower, in us, another path's delay must be than
 *	@cur's to take the flow from it
 *
 * A flow keeps its path while no other is better by more than @margin,
 * so that two paths of about equal delay do not take turns with every
 * sample.  A path without a measured delay is kept only if no path has
 * one.  Ties go to the lowest index.
 *
 * Return: the index of the chosen path; MPIP_PATH_NONE if @n is 0.
 */
unsigned int mpip_single_index(const u32 *d, u32 have, unsigned int n,
			       unsigned int cur, u32 margin)
{
	unsigned int best;

	if (!n)
		return MPIP_PATH_NONE;
	best = delay_extreme(d, have, n, false);
	if (cur >= n)
		return best == MPIP_PATH_NONE ? 0 : best;
	if (best == MPIP_PATH_NONE)
		return cur;
	if (!(have & (1U << cur)))
		return best;
	/* wrap-safe: d[cur] - d[best] > margin */
	if ((s32)(d[cur] - d[best]) > 0 && d[cur] - d[best] > margin)
		return best;
	return cur;
}

/**
 * mpip_max_delay_index() - the path of highest delay
 * @d: smoothed one-way delays of @n paths between the same two nodes (one
 *	clock offset, compared wrap-safe)
 * @have: bit i set if @d[i] is a measured delay; others are not compared
 * @n: number of paths, at most 32
 *
 * Ties go to the lowest index.
 *
 * Return: the index of the path; MPIP_PATH_NONE if none has a measured
 * delay.
 */
unsigned int mpip_max_delay_index(const u32 *d, u32 have, unsigned int n)
{
	return delay_extreme(d, have, n, true);
}

/* Does path @i rank before path @j by delay (a measured one first)? */
static bool pair_before(const u32 *d, u32 have, unsigned int i,
			unsigned int j)
{
	bool hi = have & (1U << i), hj = have & (1U << j);

	if (hi != hj)
		return hi;
	return hi && path_before(d[i], d[j]);
}

/* How much path @i shares with the @k paths at @idx: links and addresses. */
static unsigned int copies_shared(const u32 *link, const u32 *raddr,
				  const unsigned int *idx, unsigned int k,
				  unsigned int i)
{
	unsigned int c, shared = 0;

	for (c = 0; c < k; c++)
		shared += (link[i] == link[idx[c]]) + (raddr[i] == raddr[idx[c]]);
	return shared;
}

/**
 * mpip_copies_index() - the paths of a packet's copies in mode protected
 * @d: smoothed one-way delays D of @n paths, as for mpip_single_index()
 * @have: bit i set if @d[i] is a measured delay
 * @link: the local link of each path (paths with equal values share it)
 * @raddr: the remote address of each path (likewise)
 * @n: number of paths, at most 32
 * @want: how many paths to choose, at most 32
 * @idx: the indexes chosen, in order (room for @want)
 *
 * @idx[0] is the path of lowest delay; each next one, of the paths not
 * chosen yet, one that shares the fewest links and remote addresses with
 * those chosen (a link or an address shared with two counts twice), and
 * of those the one of lowest delay: the copies of a packet should not
 * meet the same loss.  Paths without a measured delay rank after those
 * with one; ties go to the lowest index.
 *
 * Return: how many paths were chosen: the lesser of @n and @want.
 */
unsigned int mpip_copies_index(const u32 *d, u32 have, const u32 *link,
			       const u32 *raddr, unsigned int n,
			       unsigned int want, unsigned int *idx)
{
	unsigned int i, k, pick, shared, least = 0;
	u32 taken = 0;

	if (n > 32)
		n = 32;
	if (n < 32)
		have &= (1U << n) - 1;
	for (k = 0; k < want && k < n; k++) {
		pick = MPIP_PATH_NONE;
		for (i = 0; i < n; i++) {
			if (taken & (1U << i))
				continue;
			shared = copies_shared(link, raddr, idx, k, i);
			if (pick == MPIP_PATH_NONE || shared < least ||
			    (shared == least && pair_before(d, have, i, pick))) {
				pick = i;
				least = shared;
			}
		}
		idx[k] = pick;
		taken |= 1U << pick;
	}
	return k;
}

/**
 * mpip_qdelay_predict() - queueing delay extrapolated along its trend
 * @q: queueing delay now, in us
 * @q_prev: queueing delay @interval earlier, in us
 * @interval: time between the two values (any unit, not 0)
 * @horizon: how far ahead to extrapolate, in the unit of @interval;
 *	values of 2^24 and above count as 2^24 - 1
 *
 * A queue integrates the difference between what is sent into it and what
 * its link drains, so a path's queueing delay lags behind its share of the
 * traffic, and Algorithm 1 fed with the delay alone keeps correcting long
 * after the share is right: the weights and the queues oscillate.  Its
 * trend reacts at once.  Fed with Q + (Q - Q_prev) * @horizon / @interval
 * instead, Algorithm 1 stops moving a weight when the queue that was too
 * long is shrinking fast enough to be as long as the others within
 * @horizon.  The result is clamped to 0 .. U32_MAX.
 *
 * Return: the predicted queueing delay; @q itself if @horizon or
 * @interval is 0.
 */
u32 mpip_qdelay_predict(u32 q, u32 q_prev, u32 interval, u32 horizon)
{
	u64 delta;
	u32 ratio;

	if (!interval || !horizon || q == q_prev)
		return q;
	if (horizon > MPIP_TREND_HORIZON_MAX)
		horizon = MPIP_TREND_HORIZON_MAX;
	/* @horizon / @interval in 24.8 fixed point, a 32-bit division */
	ratio = (horizon << 8) / interval;
	if (q > q_prev) {
		delta = ((u64)(q - q_prev) * ratio) >> 8;
		return delta >= 0xffffffffULL - q ? 0xffffffffU : q + (u32)delta;
	}
	delta = ((u64)(q_prev - q) * ratio) >> 8;
	return delta >= q ? 0 : q - (u32)delta;
}

/**
 * mpip_weights_init() - initial path weights
 * @w: weights of @n paths
 * @n: number of paths
 *
 * Every path gets MPIP_WEIGHT_MAX / @n, at least MPIP_WEIGHT_MIN.
 */
void mpip_weights_init(u32 *w, unsigned int n)
{
	u32 v;
	unsigned int i;

	if (!n)
		return;
	v = MPIP_WEIGHT_MAX / n;
	if (v < MPIP_WEIGHT_MIN)
		v = MPIP_WEIGHT_MIN;
	for (i = 0; i < n; i++)
		w[i] = v;
}

/* Does path @i of @q[@n] gain weight in Algorithm 1 (Q <= Q_avg)? */
static bool weights_gains(const u32 *q, unsigned int n, unsigned int i,
			  u64 sum)
{
	return (u64)q[i] * n <= sum;
}

static u64 weights_qsum(const u32 *q, unsigned int n)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += q[i];
	return sum;
}

/**
 * mpip_weights_gainers() - the paths Algorithm 1 gives more weight
 * @q: queueing delays Q of @n paths
 * @n: number of paths, at most 32
 *
 * Return: a mask with bit i set for every path i with Q <= Q_avg, the
 * comparison mpip_weights_adjust() makes.
 */
u32 mpip_weights_gainers(const u32 *q, unsigned int n)
{
	u64 sum = weights_qsum(q, n);
	unsigned int i;
	u32 mask = 0;

	for (i = 0; i < n && i < 32; i++)
		if (weights_gains(q, n, i, sum))
			mask |= 1U << i;
	return mask;
}

static u32 weights_step_shifted(u32 step, unsigned int shift)
{
	u64 big = (u64)step << shift;

	return big < MPIP_WEIGHT_MAX ? (u32)big : MPIP_WEIGHT_MAX;
}

/**
 * mpip_weights_boost_step() - the step S of this round, larger at start-up
 * @st: the node's boost state
 * @up: the paths in this round, a bit each (any fixed numbering)
 * @gain: those of them whose measured queueing delay says they gain
 * @turned: the predicted delays (which lead the measured ones) say
 *	otherwise: the queues have started to turn
 * @step: the configured step S
 * @max_shift: the step grows to at most S << @max_shift; 0 keeps S always
 *
 * With a fixed step, Algorithm 1 moves a path's share by at most S per
 * mille a round: from equal weights to links of 2:1 it takes 17 rounds,
 * 1.7 s at the paper's S and T, while the faster link idles.  Until the
 * weights first cross their balance, the step doubles in every round in
 * which the same paths gain as in the round before, up to S << @max_shift
 * (10, 20, 40, 80 ...).
 *
 * The balance is crossed when, after the step has grown to at least
 * S << MPIP_BOOST_SETTLE_SHIFT (or to its maximum), the gaining set
 * changes or the prediction turns against it.  The measured queues lag
 * behind the weights by about a queueing delay, so the weights are then
 * past the balance by a few steps: the step halves in each of the next
 * rounds, down to S, a binary search back towards it (the direction is
 * the caller's, from the predicted delays).  From then on the step is S
 * for good.  A path that comes back, or a new one, moves at S: restarting
 * the growth there swung the weights past the balance when a link
 * returned (40/20 Mbit/s: the 40 Mbit/s link down to 10 Mbit/s for 3 s).
 *
 * A change or a turn before the step has grown that far only restarts
 * the growth: the first rounds of a flow are noisy, and a path that
 * carried the flow alone until the others came up starts with a queue
 * that drains while theirs grow.  So does a change of the set of paths
 * before the first crossing.  Rounds in which every path gains (all
 * queues alike, e.g. idle) tell nothing and change nothing.  Growing the
 * step whenever the direction holds makes the weights overshoot on flows
 * whose delay reports are sparse (one-way UDP): hence start-up only.
 *
 * Return: the step to use this round, at most MPIP_WEIGHT_MAX.
 */
u32 mpip_weights_boost_step(struct mpip_wboost *st, u32 up, u32 gain,
			    bool turned, u32 step, unsigned int max_shift)
{
	unsigned int grown;

	gain &= up;
	if (st->up != up) {
		st->up = up;
		st->gain = 0;
		st->shift = 0;
	}
	if (!max_shift)
		return step;
	if (!st->settled) {
		if (gain == up)
			return step;
		if (!turned && gain == st->gain) {
			if (st->shift < max_shift && st->shift < 16)
				st->shift++;
			return weights_step_shifted(step, st->shift);
		}
		if (st->shift < MPIP_BOOST_SETTLE_SHIFT &&
		    st->shift < max_shift) {
			st->shift = 0;
			st->gain = gain;
			return weights_step_shifted(step, 0);
		}
		/* crossed the balance: half the last step back */
		st->settled = true;
		st->shift--;
	}
	/* halving back towards the balance, then S */
	grown = st->shift;
	if (st->shift)
		st->shift--;
	return weights_step_shifted(step, grown);
}

/**
 * mpip_weights_adjust() - one iteration of Algorithm 1
 * @q: queueing delays Q of @n paths, in us
 * @w: weights of the same @n paths, updated in place
 * @n: number of paths
 * @step: adjustment granularity S
 *
 * With Q_avg the mean of @q, every path with Q <= Q_avg gains @step, up to
 * MPIP_WEIGHT_MAX, and every other path loses @step, down to
 * MPIP_WEIGHT_MIN.  The comparison is exact: Q * @n <= sum of @q, in
 * 64 bits.  A weight outside the bounds on entry is brought back inside,
 * so a path that a tie round parked (MPIP_WEIGHT_PARKED) carries data
 * again after any round of Algorithm 1: @step if it gains, else
 * MPIP_WEIGHT_MIN.
 */
void mpip_weights_adjust(const u32 *q, u32 *w, unsigned int n, u32 step)
{
	u64 sum = weights_qsum(q, n);
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (weights_gains(q, n, i, sum)) {
			if (w[i] >= MPIP_WEIGHT_MAX ||
			    step >= MPIP_WEIGHT_MAX - w[i])
				w[i] = MPIP_WEIGHT_MAX;
			else
				w[i] += step;
			if (w[i] < MPIP_WEIGHT_MIN)
				w[i] = MPIP_WEIGHT_MIN;
		} else {
			if (w[i] > MPIP_WEIGHT_MAX)
				w[i] = MPIP_WEIGHT_MAX;
			if (w[i] < MPIP_WEIGHT_MIN ||
			    w[i] - MPIP_WEIGHT_MIN <= step)
				w[i] = MPIP_WEIGHT_MIN;
			else
				w[i] -= step;
		}
	}
}

/* The index of the lowest of @d[@n], compared wrap-safe (mod 2^32). */
static unsigned int ties_lowest(const u32 *d, unsigned int n)
{
	unsigned int i, lo = 0;

	for (i = 1; i < n; i++)
		if (path_before(d[i], d[lo]))
			lo = i;
	return lo;
}

/**
 * mpip_weights_tie_step() - the step of a tie round
 * @idle_rounds: the node's count of idle rounds in a row
 * @idle: no path queues this round (every measured queueing delay below
 *	the band of mpip_weights_tie_round())
 * @step: the configured step S
 * @max_shift: the step grows to at most S << @max_shift (weight_boost)
 *
 * A light flow over paths of unequal fixed delay should be on the
 * shortest within a second or two, not after the 50 rounds S takes from
 * even weights, during which it is spread and reordered.  A tie round
 * cannot overshoot (it moves each weight towards a bound or an even
 * share, never past), so in rounds in which no path queues the step
 * doubles from S, as the start-up boost's does; any round with a queue
 * starts it again at S.
 *
 * Return: the step to pass to mpip_weights_tie_round().
 */
u32 mpip_weights_tie_step(u8 *idle_rounds, bool idle, u32 step,
			  unsigned int max_shift)
{
	unsigned int shift = *idle_rounds;

	if (!idle) {
		*idle_rounds = 0;
		return step;
	}
	if (shift > max_shift)
		shift = max_shift;
	if (shift > 16)
		shift = 16;
	if (*idle_rounds < 255)
		(*idle_rounds)++;
	return weights_step_shifted(step, shift);
}

/* Move @w by at most @step towards @target. */
static u32 ties_toward(u32 w, u32 target, u32 step)
{
	if (w > target)
		return w - target > step ? w - step : target;
	return target - w > step ? w + step : target;
}

/* The band @wide, widened to @longer (a path's extra fixed delay), capped. */
static u32 ties_widen(u32 wide, u32 longer)
{
	if (longer > MPIP_TIE_BAND_MAX_US)
		longer = MPIP_TIE_BAND_MAX_US;
	return longer > wide ? longer : wide;
}

/**
 * mpip_weights_tie_round() - a round of Algorithm 1 in which no path queues
 * @raw: the measured queueing delays of @n paths, in us
 * @dmin: the same paths' minimum one-way delays D_min, in us, mod 2^32;
 *	all towards one node, so that they share one clock offset and
 *	their differences are real
 * @w: the paths' weights, updated in place if the delays tie
 * @n: number of paths
 * @band: queueing delays all within @band of each other tie (within
 *	more where the fixed delays differ more, below); 0 never
 * @step: the step S
 * @total: the sum the caller normalises the weights to
 *
 * Algorithm 1 moves weight from the paths whose queueing delay is above
 * the mean to the others, however small the difference.  A flow far below
 * its paths' capacity queues nowhere, and the differences between its
 * paths' queueing delays are the jitter of the hosts and of the flow's
 * own bursts, not a queue: Algorithm 1 then random-walks the weights, a
 * step S a round, until they pin at the bounds, on the longer path as
 * often as on the shorter one.  Over a 50 and an 80 ms path, how much of
 * a call takes the longer one, and is reordered, is then a matter of
 * chance.
 *
 * When the delays in @raw all lie within the band of each other, this
 * round compares instead each path's fixed delay over the shortest
 * path's, D_min - min(D_min), below @band counting as none.  The band is
 * @band, or, where the paths' fixed delays differ by more, their largest
 * difference up to MPIP_TIE_BAND_MAX_US: a queue on the shortest path
 * that leaves it still the fastest is no reason to send anything over a
 * longer one, which would only arrive late.  In a call over a 50 and an
 * 80 ms path under load, the short path's smoothed queueing delay now
 * and then read 2-5 ms while the idle long one read none, and each such
 * round gave the long path S or more: 20-30 video packets of the call
 * took it in a few seconds.  Above the cap the paper's round decides, as
 * for the start-up boost (a spread below 10 ms is as likely noise as a
 * queue), so that a flow that fills the shortest path, whose queue may
 * hold less than the difference, spills over:
 *
 * - paths that are that much longer lose S, the others gain S, as
 *   Algorithm 1 does with queueing delays: the flow moves to the paths
 *   with the lowest fixed delay and stays there.  The longer paths go
 *   down to MPIP_WEIGHT_PARKED, not MPIP_WEIGHT_MIN: at a weight of 1 in
 *   1000 a path still took a packet of the flow now and then, each one
 *   late by the difference of the fixed delays (over a 50 and an 80 ms
 *   path, 5-10 video packets a minute of a call, each 30 ms behind its
 *   frame).  While no path queues, the shorter paths have room for the
 *   flow, and heartbeats keep measuring the parked ones;
 * - where all fixed delays are alike and no path queues (every delay in
 *   @raw below @band), every weight moves S towards an even share, where
 *   the paper's algorithm starts;
 * - where they are alike but the paths queue alike (a flow that fills
 *   them all, at its balance), the weights stay.
 *
 * Once a path's queueing delay is @band above another's, this returns
 * false and the caller runs the paper's round, which unparks every path
 * (mpip_weights_adjust()): a flow that needs more than the shortest path
 * gets the others too.
 *
 * Return: true if the delays tied and @w was dealt with, false if
 * Algorithm 1 decides this round.
 */
bool mpip_weights_tie_round(const u32 *raw, const u32 *dmin, u32 *w,
			    unsigned int n, u32 band, u32 step, u32 total)
{
	u32 lo = ~0U, hi = 0, base, wide = band;
	unsigned int i, longer = 0;

	if (!band || n < 2)
		return false;
	base = dmin[ties_lowest(dmin, n)];
	for (i = 0; i < n; i++) {
		if (raw[i] < lo)
			lo = raw[i];
		if (raw[i] > hi)
			hi = raw[i];
		if (dmin[i] - base >= band) {
			longer++;
			wide = ties_widen(wide, dmin[i] - base);
		}
	}
	if (hi - lo >= wide)
		return false;
	for (i = 0; i < n; i++) {
		if (longer)
			w[i] = ties_toward(w[i], dmin[i] - base >= band ?
					   MPIP_WEIGHT_PARKED :
					   MPIP_WEIGHT_MAX, step);
		else if (hi < band)
			w[i] = ties_toward(w[i], total / n, step);
	}
	return true;
}

/**
 * mpip_weights_normalize() - rescale weights to a fixed sum
 * @w: weights of @n paths, updated in place
 * @n: number of paths
 * @total: the sum to rescale to (at most MPIP_WEIGHT_MAX)
 *
 * Keeps every path's share (up to rounding) and brings the sum back to
 * @total, each weight at least MPIP_WEIGHT_MIN but for parked ones
 * (MPIP_WEIGHT_PARKED), which stay parked.  Applied after
 * each iteration of Algorithm 1, it keeps one step S worth the same share
 * of traffic whatever came before: without it, paths that all show the
 * same queueing delay (an idle spell) all gain S until every weight sits
 * at MPIP_WEIGHT_MAX, and a later imbalance then takes several times
 * longer to correct.
 */
void mpip_weights_normalize(u32 *w, unsigned int n, u32 total)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += w[i];
	if (!sum || sum == total)
		return;
	for (i = 0; i < n; i++) {
		if (w[i] == MPIP_WEIGHT_PARKED)
			continue;
		w[i] = (u32)(((u64)w[i] * total + sum / 2) / sum);
		if (w[i] < MPIP_WEIGHT_MIN)
			w[i] = MPIP_WEIGHT_MIN;
	}
}

/* floor(@rnd * @sum / 2^32), in 64 bits: @sum may exceed 32 bits. */
static u64 weights_scale(u64 sum, u32 rnd)
{
	return (sum >> 32) * rnd + (((sum & 0xffffffffULL) * rnd) >> 32);
}

/* May path @i be chosen: every path if @mask is NULL, else bit @i of it. */
static bool weights_in(const u32 *mask, unsigned int i)
{
	return !mask || (i < 32 && (*mask & (1U << i)));
}

/* Weighted choice among the paths weights_in(@mask). */
static unsigned int weights_pick(const u32 *w, unsigned int n,
				 const u32 *mask, u32 rnd)
{
	u64 sum = 0, r;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (weights_in(mask, i))
			sum += w[i];
	if (!sum)
		return MPIP_PATH_NONE;

	r = weights_scale(sum, rnd);
	for (i = 0; i < n; i++) {
		if (!weights_in(mask, i))
			continue;
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return MPIP_PATH_NONE;	/* not reached: r < sum */
}

/**
 * mpip_weights_pick() - choose a path with probability proportional to weight
 * @w: weights of @n paths; any u32 values, 0 means never chosen
 * @n: number of paths
 * @rnd: a 32-bit number drawn over the whole range: random, or from
 *	mpip_weights_draw()
 *
 * Maps @rnd to r = floor(@rnd * sum / 2^32) in [0, sum) without a
 * division, and returns the path whose share of [0, sum) holds r.  Path k
 * is chosen for floor or ceil of w[k] * 2^32 / sum values of @rnd, so
 * its probability differs from w[k] / sum by less than 2^-32.
 *
 * Return: the index of the chosen path, or MPIP_PATH_NONE if @n is 0 or
 * all weights are 0.
 */
unsigned int mpip_weights_pick(const u32 *w, unsigned int n, u32 rnd)
{
	return weights_pick(w, n, NULL, rnd);
}

/**
 * mpip_weights_draw() - the number a node's @seq'th pick draws with
 * @seq: the node's count of picks
 *
 * Random draws split packets by weight only on average: of the 500
 * packets a 60 Mbit/s flow sends in a 100 ms weight round, a path of a
 * third weight gets 167 give or take 11, and where the paths' bottlenecks
 * are remote, with nothing else to even them out, those errors add up in
 * the bottlenecks' queues as a random walk; the receiver's reorder buffer
 * has to hold the difference.  The multiples of 2^32 / phi (phi the
 * golden ratio, mod 2^32) cover the range as evenly as a sequence can:
 * in any run of consecutive draws each path gets its weight's share
 * within a few packets, whatever the weights, and for weights that change
 * between runs as well.
 *
 * Return: @seq * MPIP_DRAW_STRIDE, mod 2^32, the @rnd of
 * mpip_weights_pick().
 */
u32 mpip_weights_draw(u32 seq)
{
	return seq * MPIP_DRAW_STRIDE;
}

/**
 * mpip_weights_pick_mask() - mpip_weights_pick() among some paths only
 * @w: weights of @n paths
 * @n: number of paths; only the first 32 can be in @mask
 * @mask: bit i set if path i may be chosen
 * @rnd: uniformly distributed 32-bit random number
 *
 * Return: the index of the chosen path, with probability proportional to
 * its weight among the paths of @mask, or MPIP_PATH_NONE if they all
 * weigh 0 (or there are none).
 */
unsigned int mpip_weights_pick_mask(const u32 *w, unsigned int n, u32 mask,
				    u32 rnd)
{
	return weights_pick(w, n, &mask, rnd);
}

/* Sum of the weights of the paths on device @dev. */
static u64 steer_dev_weight(const u32 *w, const u32 *dev, unsigned int n,
			    u32 d)
{
	unsigned int i;
	u64 sum = 0;

	for (i = 0; i < n; i++)
		if (dev[i] == d)
			sum += w[i];
	return sum;
}

/*
 * (@b1 + P) * @w2 < (@b2 + P) * @w1 with P = MPIP_STEER_PKT_BYTES: the
 * backlog of the first device with one packet more is lower per unit of
 * its weight @w1 than that of the second.  The weights are sums of up to
 * 32 u32 weights (below 2^37) and the backlogs plus P below 2^33, so
 * each product is below 2^70: it is compared as a 64-bit high part of
 * the weight times the backlog's high bits, plus the low part.
 */
static bool steer_less(u32 b1, u64 w1, u32 b2, u64 w2)
{
	u64 x1 = (u64)b1 + MPIP_STEER_PKT_BYTES;
	u64 x2 = (u64)b2 + MPIP_STEER_PKT_BYTES;
	u64 hi1 = (x1 >> 16) * w2, hi2 = (x2 >> 16) * w1;
	u64 lo1 = (x1 & 0xffff) * w2, lo2 = (x2 & 0xffff) * w1;

	/* x * w = (x >> 16) * w * 2^16 + (x & 0xffff) * w */
	hi1 += lo1 >> 16;
	hi2 += lo2 >> 16;
	if (hi1 != hi2)
		return hi1 < hi2;
	return (lo1 & 0xffff) < (lo2 & 0xffff);
}

/*
 * The paths on device @d that may take a packet steered from path @pick:
 * those to @pick's far end, if @d has any, else all of them; of these,
 * those that report no more queueing delay than @pick.
 */
static u32 steer_alternatives(const u32 *dev, const u32 *far, const u32 *q,
			      unsigned int n, unsigned int pick, u32 d)
{
	u32 same = 0, any = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (dev[i] != d)
			continue;
		if (far[i] == far[pick])
			same |= 1U << i;
		if (q[i] <= q[pick])
			any |= 1U << i;
	}
	return same ? same & any : any;
}

/**
 * mpip_paths_steer() - paths whose local queue is shorter for their weight
 * @st: the paths: weights, devices, far ends, backlogs and delays
 * @n: number of paths, at most 32
 * @pick: the path the weights chose for a packet
 *
 * Algorithm 1 moves a path's share by S per round and learns of a queue
 * a queueing delay late, so the share it gives a link swings around the
 * link's capacity, and a queue, which integrates the error, swings
 * further: when a link's queue runs dry the link idles while packets
 * wait on another one, and when one queue is much longer than the
 * other, segments that take the short one overtake those on the long
 * one by the difference.  Where the queues are at this host, it can
 * keep them in the proportion of the weights instead: a packet goes to
 * the device whose backlog is lowest per unit of weight (the sum of the
 * weights of its paths), and among its paths by weight.  Then no queue
 * runs dry while another holds packets, and the queueing delays, in the
 * proportion of weight to link rate, tell Algorithm 1 where the weights
 * are off at once rather than after an integration.  Ties keep @pick,
 * so that where nothing queues here the weights alone decide.
 *
 * Each backlog is counted with the packet it would take, one of
 * MPIP_STEER_PKT_BYTES: an empty queue is not free.  Counted bare, a
 * device with no backlog won over any other that held a byte, whatever
 * its weight, and a path that Algorithm 1 had left at a weight of 1
 * took a packet each time its queue drained: over a 50 and an 80 ms
 * link whose delay lines are qdiscs (netem), a light call whose weights
 * were 999:1 for the 50 ms path sent a packet on the 80 ms one about
 * every 80 ms, 5 % of its audio.  With the packet counted, a device
 * with little weight still takes packets when the others' queues are
 * long for their weight, and a device of equal weight as before.
 *
 * A local queue says nothing about a bottleneck further along the path,
 * so a path is an alternative only if the queueing delay it reports is
 * no higher than that of @pick: a path whose link is fast here and whose
 * bottleneck elsewhere is full gets nothing extra.  And where the other
 * device has paths to @pick's far end (the same remote address), only
 * those are: a packet moved to another local queue stays on its way to
 * the same remote link.  Otherwise, with two local devices each holding
 * a path to each of two remote bottlenecks, every packet steered off a
 * path to the slower one could land on the faster one (a lower delay)
 * but never the reverse; the weights then had to make up for it and
 * swung further (the natdown lab, Documentation/performance.rst).
 *
 * Return: a mask of the paths, all on one device, to choose from by
 * weight instead of @pick; 0 to keep @pick (also if @pick is out of
 * range or its own backlog is empty or unknown).
 */
u32 mpip_paths_steer(const struct mpip_steer *st, unsigned int n,
		     unsigned int pick)
{
	const u32 *dev = st->dev, *backlog = st->backlog;
	u32 mask, best_mask = 0;
	unsigned int i, best;
	u64 best_w, wi;

	if (n > 32)
		n = 32;
	if (pick >= n || !backlog[pick] ||
	    backlog[pick] == MPIP_BACKLOG_UNKNOWN)
		return 0;
	best = pick;
	best_w = steer_dev_weight(st->w, dev, n, dev[pick]);
	for (i = 0; i < n; i++) {
		if (dev[i] == dev[best] || dev[i] == dev[pick] ||
		    backlog[i] == MPIP_BACKLOG_UNKNOWN)
			continue;
		mask = steer_alternatives(dev, st->far, st->q, n, pick,
					  dev[i]);
		if (!mask)
			continue;
		wi = steer_dev_weight(st->w, dev, n, dev[i]);
		/* (backlog[i] + P) / wi < (backlog[best] + P) / best_w */
		if (steer_less(backlog[i], wi, backlog[best], best_w)) {
			best = i;
			best_w = wi;
			best_mask = mask;
		}
	}
	return best_mask;
}

/*
 * A report gave @fwd_us as the one-way delay of the path, and came back
 * in a packet whose one-way delay was @back_us (both mod 2^32, with the
 * clocks' offset).  Returns false, and keeps nothing, if their sum is no
 * round trip (above MPIP_RTT_MAX_US: a clock that jumped, a peer's lie).
 */
bool mpip_rtt_sample(struct mpip_rtt *r, u32 fwd_us, u32 back_us)
{
	u32 rtt = fwd_us + back_us, dev;

	if (rtt > MPIP_RTT_MAX_US)
		return false;
	if (!r->have) {
		r->srtt = rtt;
		r->rttvar = rtt / 2;
		r->have = true;
		return true;
	}
	dev = rtt > r->srtt ? rtt - r->srtt : r->srtt - rtt;
	r->rttvar = (u32)(((u64)r->rttvar * 3 + dev) / 4);
	r->srtt = (u32)(((u64)r->srtt * 7 + rtt) / 8);
	return true;
}

/*
 * How long a path may go without a report before it is taken for broken,
 * in ms: @base_ms (path_timeout_ms) beyond the reports' round trip and
 * four times its deviation, at most MPIP_RTT_TIMEOUT_CAP times @base_ms;
 * @base_ms until a round trip is known.
 */
u32 mpip_rtt_timeout(const struct mpip_rtt *r, u32 base_ms)
{
	u64 t, cap = (u64)base_ms * MPIP_RTT_TIMEOUT_CAP;

	if (!r->have)
		return base_ms;
	t = base_ms + ((u64)r->srtt + 4 * (u64)r->rttvar) / 1000;
	if (t > cap)
		t = cap;
	return t > 0xffffffffU ? 0xffffffffU : (u32)t;
}
