// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/path.c: one-way delay tracking, the
 * queueing delay trend, path weights (Algorithm 1 of the MPIP paper, with
 * its step boost) and weighted path choice.
 *
 * Delay samples are built as "relative delay + clock offset" mod 2^32 and
 * checked against a reference model in signed 64-bit arithmetic that
 * never wraps, so every wrap of the u32 clock is cross-checked.
 */
#include <stdio.h>
#include <string.h>

#include "path.h"
#include "ktap.h"

#define PICK_DRAWS	1000000

/* Clock offsets (receiver minus sender) that put samples across 2^32. */
static const u32 offsets[] = {
	0, 1, 0xffffff80, 0xfffffa00, 0xffffffff, 0x7fffff00, 0x80000000,
	(u32)-1000, (u32)-50000, (u32)-5000000, 0x12345678,
};

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- delay tracking ---------------------------------------------------- */

/* Reference model: relative delays in s64, no wrap anywhere. */
struct ref_delay {
	long long d_min, d_rt, q, q_max;
	int have;
};

static void ref_sample(struct ref_delay *r, long long s, unsigned int shift)
{
	long long diff, step;

	if (!r->have) {
		r->d_min = s;
		r->d_rt = s;
		r->q = 0;
		r->q_max = 0;
		r->have = 1;
		return;
	}
	if (shift > 31)
		shift = 31;
	diff = s - r->d_rt;
	step = (diff < 0 ? -diff : diff) >> shift;
	if (!step && diff)
		step = 1;
	r->d_rt += diff < 0 ? -step : step;
	if (s < r->d_min)
		r->d_min = s;
	r->q = r->d_rt - r->d_min;
	if (r->q > r->q_max)
		r->q_max = r->q;
}

/* @pd matches @r shifted by clock offset @off. */
static int delay_matches(struct unit_ctx *ctx, const struct mpip_path_delay *pd,
			 const struct ref_delay *r, u32 off, const char *what,
			 unsigned int step)
{
	return CHECK_EQ_MSG(pd->have_sample, 1, "%s step %u", what, step) &&
	       CHECK_EQ_MSG(pd->d_rt, (u32)(r->d_rt + off),
			    "%s step %u off 0x%x", what, step, off) &&
	       CHECK_EQ_MSG(pd->d_min, (u32)(r->d_min + off),
			    "%s step %u off 0x%x", what, step, off) &&
	       CHECK_EQ_MSG(pd->q, r->q, "%s step %u off 0x%x",
			    what, step, off) &&
	       CHECK_EQ_MSG(pd->q_max, r->q_max, "%s step %u off 0x%x",
			    what, step, off);
}

UNIT_TEST(delay_init_and_first_sample)
{
	struct mpip_path_delay pd, zero;

	memset(&zero, 0, sizeof(zero));
	memset(&pd, 0xa5, sizeof(pd));
	mpip_path_delay_init(&pd);
	CHECK(!pd.have_sample);
	CHECK_EQ(pd.d_min, 0);
	CHECK_EQ(pd.d_rt, 0);
	CHECK_EQ(pd.q, 0);
	CHECK_EQ(pd.q_max, 0);

	/* A zeroed struct is "no sample"; the first sample sets everything. */
	mpip_path_delay_sample(&zero, 0xfffffff0, 3);
	CHECK(zero.have_sample);
	CHECK_EQ(zero.d_min, 0xfffffff0);
	CHECK_EQ(zero.d_rt, 0xfffffff0);
	CHECK_EQ(zero.q, 0);
	CHECK_EQ(zero.q_max, 0);

	/* Re-init after samples: the next sample is a first sample again. */
	mpip_path_delay_sample(&zero, 0x100, 0);
	CHECK_EQ(zero.q_max, 0x110);
	mpip_path_delay_init(&zero);
	mpip_path_delay_sample(&zero, 42, 0);
	CHECK_EQ(zero.d_min, 42);
	CHECK_EQ(zero.d_rt, 42);
	CHECK_EQ(zero.q, 0);
	CHECK_EQ(zero.q_max, 0);
}

/* Hand-computed, no smoothing: D is the last sample. */
static const struct {
	u32 rel, d_min, q, q_max;
} raw_table[] = {
	{ 200, 200, 0, 0 },
	{ 100, 100, 0, 0 },
	{ 350, 100, 250, 250 },
	{ 180, 100, 80, 250 },
	{ 50, 50, 0, 250 },
	{ 600, 50, 550, 550 },
	{ 50, 50, 0, 550 },
	{ 51, 50, 1, 550 },
};

UNIT_TEST(delay_table_no_smoothing_across_wrap)
{
	unsigned int o, i;

	for (o = 0; o < ARRAY_LEN(offsets); o++) {
		struct mpip_path_delay pd = { 0 };
		u32 off = offsets[o];

		for (i = 0; i < ARRAY_LEN(raw_table); i++) {
			mpip_path_delay_sample(&pd, raw_table[i].rel + off, 0);
			CHECK_EQ_MSG(pd.d_rt, (u32)(raw_table[i].rel + off),
				     "off 0x%x row %u", off, i);
			CHECK_EQ_MSG(pd.d_min, (u32)(raw_table[i].d_min + off),
				     "off 0x%x row %u", off, i);
			CHECK_EQ_MSG(pd.q, raw_table[i].q,
				     "off 0x%x row %u", off, i);
			CHECK_EQ_MSG(pd.q_max, raw_table[i].q_max,
				     "off 0x%x row %u", off, i);
		}
	}
}

UNIT_TEST(delay_wrap_absolute_values)
{
	struct mpip_path_delay pd = { 0 };

	/* Offset -128: samples straddle 0xffffffff -> 0. */
	mpip_path_delay_sample(&pd, 0x00000048, 0);	/* rel 200 */
	mpip_path_delay_sample(&pd, 0xffffffe4, 0);	/* rel 100 */
	CHECK_EQ(pd.d_min, 0xffffffe4);
	CHECK_EQ(pd.q, 0);
	mpip_path_delay_sample(&pd, 0x000000de, 0);	/* rel 350 */
	CHECK_EQ(pd.d_min, 0xffffffe4);		/* not 0xde: wrap-safe */
	CHECK_EQ(pd.d_rt, 0x000000de);
	CHECK_EQ(pd.q, 250);
	CHECK_EQ(pd.q_max, 250);
	mpip_path_delay_sample(&pd, 0xffffffb2, 0);	/* rel 50 */
	CHECK_EQ(pd.d_min, 0xffffffb2);
	CHECK_EQ(pd.q, 0);
	CHECK_EQ(pd.q_max, 250);
	mpip_path_delay_sample(&pd, 0x00000000, 0);	/* rel 128 */
	CHECK_EQ(pd.q, 78);
	mpip_path_delay_sample(&pd, 0xffffffff, 0);	/* rel 127 */
	CHECK_EQ(pd.q, 77);
	CHECK_EQ(pd.d_min, 0xffffffb2);
}

/*
 * Hand-computed with smooth_shift 2 (weight 1/4), offset 0:
 *   1000: first sample
 *   2000: D += 1000/4 = 250            -> 1250, Q 250
 *   2000: D += 750/4 = 187             -> 1437, Q 437
 *    600: D -= 837/4 = 209             -> 1228, D_min 600, Q 628
 *   1230: 2/4 = 0, at least 1          -> 1229, Q 629
 *   1230:                              -> 1230, Q 630
 *   1230: no change                    -> 1230, Q 630
 *    590: D -= 640/4 = 160             -> 1070, D_min 590, Q 480
 *   1070: no change                    -> 1070, Q 480
 */
static const struct {
	u32 rel, d_rt, d_min, q, q_max;
} ewma_table[] = {
	{ 1000, 1000, 1000, 0, 0 },
	{ 2000, 1250, 1000, 250, 250 },
	{ 2000, 1437, 1000, 437, 437 },
	{ 600, 1228, 600, 628, 628 },
	{ 1230, 1229, 600, 629, 629 },
	{ 1230, 1230, 600, 630, 630 },
	{ 1230, 1230, 600, 630, 630 },
	{ 590, 1070, 590, 480, 630 },
	{ 1070, 1070, 590, 480, 630 },
};

UNIT_TEST(delay_table_smoothed_across_wrap)
{
	unsigned int o, i;

	for (o = 0; o < ARRAY_LEN(offsets); o++) {
		struct mpip_path_delay pd = { 0 };
		u32 off = offsets[o];

		for (i = 0; i < ARRAY_LEN(ewma_table); i++) {
			mpip_path_delay_sample(&pd, ewma_table[i].rel + off, 2);
			CHECK_EQ_MSG(pd.d_rt, (u32)(ewma_table[i].d_rt + off),
				     "off 0x%x row %u", off, i);
			CHECK_EQ_MSG(pd.d_min,
				     (u32)(ewma_table[i].d_min + off),
				     "off 0x%x row %u", off, i);
			CHECK_EQ_MSG(pd.q, ewma_table[i].q,
				     "off 0x%x row %u", off, i);
			CHECK_EQ_MSG(pd.q_max, ewma_table[i].q_max,
				     "off 0x%x row %u", off, i);
		}
	}
}

UNIT_TEST(delay_smoothing_reaches_constant_input)
{
	static const unsigned int shifts[] = { 1, 3, 8, 31 };
	unsigned int s, i;

	for (s = 0; s < ARRAY_LEN(shifts); s++) {
		struct mpip_path_delay pd = { 0 };
		u32 prev, step;

		/* Down from +5000 to a constant 0xfffffff0 + 100, crossing 0. */
		mpip_path_delay_sample(&pd, 0xfffffff0 + 5000, 0);
		prev = pd.d_rt;
		for (i = 0; i < 6000; i++) {
			mpip_path_delay_sample(&pd, 0xfffffff0 + 100,
					       shifts[s]);
			/* monotone, never overshoots */
			if (!CHECK((s32)(pd.d_rt - prev) <= 0) ||
			    !CHECK((s32)(pd.d_rt - (0xfffffff0 + 100)) >= 0))
				break;
			prev = pd.d_rt;
		}
		CHECK_EQ_MSG(pd.d_rt, (u32)(0xfffffff0 + 100), "shift %u",
			     shifts[s]);
		CHECK_EQ_MSG(pd.q, 0, "shift %u", shifts[s]);
		/* Q peaked at the first step down: D_min fell at once. */
		step = 4900 >> shifts[s];
		CHECK_EQ_MSG(pd.q_max, 4900 - (step ? step : 1), "shift %u",
			     shifts[s]);

		/* And back up to a constant: Q follows D up to 4900. */
		for (i = 0; i < 6000; i++)
			mpip_path_delay_sample(&pd, 0xfffffff0 + 5000,
					       shifts[s]);
		CHECK_EQ_MSG(pd.d_rt, (u32)(0xfffffff0 + 5000), "shift %u",
			     shifts[s]);
		CHECK_EQ_MSG(pd.q, 4900, "shift %u", shifts[s]);
		CHECK_EQ_MSG(pd.q_max, 4900, "shift %u", shifts[s]);
	}
}

UNIT_TEST(delay_large_shift_clamped)
{
	static const unsigned int shifts[] = { 31, 32, 33, 64, 1000, ~0U };
	unsigned int s;

	for (s = 0; s < ARRAY_LEN(shifts); s++) {
		struct mpip_path_delay pd = { 0 };

		mpip_path_delay_sample(&pd, 1000, shifts[s]);
		mpip_path_delay_sample(&pd, 1500, shifts[s]);
		CHECK_EQ_MSG(pd.d_rt, 1001, "shift %u", shifts[s]);
		mpip_path_delay_sample(&pd, 900, shifts[s]);
		CHECK_EQ_MSG(pd.d_rt, 1000, "shift %u", shifts[s]);
		CHECK_EQ_MSG(pd.d_min, 900, "shift %u", shifts[s]);
		CHECK_EQ_MSG(pd.q, 100, "shift %u", shifts[s]);
		CHECK_EQ_MSG(pd.q_max, 100, "shift %u", shifts[s]);
	}
}

UNIT_TEST(delay_half_range_difference_is_defined)
{
	struct mpip_path_delay pd = { 0 };

	/*
	 * Samples 2^31 apart are outside the comparable window; the result
	 * is meaningless but defined (no signed overflow, no big shifts).
	 */
	mpip_path_delay_sample(&pd, 0, 1);
	mpip_path_delay_sample(&pd, 0x80000000, 1);
	CHECK_EQ(pd.d_rt, 0xc0000000);
	CHECK_EQ(pd.d_min, 0x80000000);
	CHECK_EQ(pd.q, 0x40000000);

	memset(&pd, 0, sizeof(pd));
	mpip_path_delay_sample(&pd, 0x7fffffff, 0);
	mpip_path_delay_sample(&pd, 0xffffffff, 0);	/* "before" */
	CHECK_EQ(pd.d_rt, 0xffffffff);
	CHECK_EQ(pd.d_min, 0xffffffff);
	CHECK_EQ(pd.q, 0);
	CHECK_EQ(pd.q_max, 0);

	/* D "below" D_min: only outside the window; Q is clamped to 0. */
	memset(&pd, 0, sizeof(pd));
	mpip_path_delay_sample(&pd, 0, 0);
	mpip_path_delay_sample(&pd, 0x70000000, 0);
	CHECK_EQ(pd.q, 0x70000000);
	mpip_path_delay_sample(&pd, 0xe0000000, 1);
	CHECK_EQ(pd.d_rt, 0xa8000000);
	CHECK_EQ(pd.d_min, 0xe0000000);
	CHECK_EQ(pd.q, 0);
	CHECK_EQ(pd.q_max, 0x70000000);
}

/*
 * Random delay sequences (base delay, queueing bursts, jitter), each run
 * at every clock offset and several shifts against the s64 model.  Also
 * checks the invariants Q >= 0, D_min <= every sample, D between the
 * extreme samples seen, Q_max monotone and >= Q.
 */
UNIT_TEST(delay_random_sequences_match_model)
{
	static const unsigned int shifts[] = { 0, 1, 2, 3, 4, 7 };
	unsigned int seq, o, s, i;

	for (seq = 0; seq < 20; seq++) {
		long long rel[400];
		long long base = 1000 + unit_below(ctx, 200000);

		for (i = 0; i < ARRAY_LEN(rel); i++) {
			long long queue = unit_below(ctx, 8) ?
					  unit_below(ctx, 3000) :
					  unit_below(ctx, 400000);

			rel[i] = base + queue;
			if (unit_below(ctx, 50) == 0)	/* below base: new min */
				rel[i] = base - unit_below(ctx, 900);
		}
		for (o = 0; o <= ARRAY_LEN(offsets); o++) {
			u32 off = o < ARRAY_LEN(offsets) ? offsets[o] :
				  unit_rand32(ctx);

			for (s = 0; s < ARRAY_LEN(shifts); s++) {
				struct mpip_path_delay pd = { 0 };
				struct ref_delay r = { 0 };
				long long lo = rel[0], hi = rel[0];
				u32 qmax_prev = 0;
				int ok = 1;

				for (i = 0; i < ARRAY_LEN(rel) && ok; i++) {
					u32 smp = (u32)(rel[i] + off);

					if (rel[i] < lo)
						lo = rel[i];
					if (rel[i] > hi)
						hi = rel[i];
					mpip_path_delay_sample(&pd, smp,
							       shifts[s]);
					ref_sample(&r, rel[i], shifts[s]);
					ok = delay_matches(ctx, &pd, &r, off,
							   "random", i);
					ok = ok && CHECK(r.d_rt >= lo &&
							 r.d_rt <= hi);
					ok = ok && CHECK(r.d_min == lo);
					ok = ok && CHECK((s32)pd.q >= 0);
					ok = ok && CHECK(pd.q <= pd.q_max);
					ok = ok && CHECK(pd.q_max >= qmax_prev);
					qmax_prev = pd.q_max;
				}
			}
		}
	}
}

/* ---- queueing delay trend ---------------------------------------------- */

UNIT_TEST(qdelay_predict_table)
{
	/* Hand-computed: Q + (Q - Q_prev) * horizon / interval, clamped. */
	static const struct {
		u32 q, q_prev, interval, horizon, want;
	} tab[] = {
		/* rising and falling, ratio 1 */
		{ 1000, 800, 100, 100, 1200 },
		{ 800, 1000, 100, 100, 600 },
		/* ratios other than 1: 5x, 1/2, 3/2, 1/4, 2x */
		{ 1000, 900, 100, 500, 1500 },
		{ 900, 1000, 100, 500, 400 },
		{ 1000, 800, 100, 50, 1100 },
		{ 1000, 800, 100, 150, 1300 },
		{ 1000, 1400, 400, 100, 900 },
		{ 1000, 1400, 250, 500, 200 },
		/* no trend: Q itself */
		{ 1234, 1234, 100, 500, 1234 },
		{ 0, 0, 100, 500, 0 },
		/* falling to exactly 0, and past it: clamped to 0 */
		{ 500, 600, 100, 500, 0 },
		{ 501, 600, 100, 500, 6 },
		{ 100, 200, 100, 500, 0 },
		{ 0, 50000, 100, 500, 0 },
		{ 1, 0xffffffff, 1, 1, 0 },
		{ 0x80000000, 0xffffffff, 1, 0xffffff, 0 },
		/* rising to just below U32_MAX, to it and past it: clamped */
		{ 0x7fffffff, 0, 1, 1, 0xfffffffe },
		{ 0x80000000, 0, 1, 1, 0xffffffff },
		{ 0xaaaaaaaa, 0x55555555, 1, 1, 0xffffffff },
		{ 0xfffffff0, 0xffffff00, 1, 1, 0xffffffff },
		{ 0xffffffff, 0, 100, 500, 0xffffffff },
		{ 1, 0, 1, 0xffffff, 0x1000000 },
		{ 0x1000000, 0, 1, 0xffffff, 0xffffffff },
		/* horizon or interval 0: Q itself, whatever the trend */
		{ 1000, 0, 100, 0, 1000 },
		{ 1000, 0, 0, 500, 1000 },
		{ 1000, 5000, 0, 0, 1000 },
		{ 0xffffffff, 0, 0, 0xffffffff, 0xffffffff },
		{ 0, 0xffffffff, 0xffffffff, 0, 0 },
	};
	unsigned int t;

	for (t = 0; t < ARRAY_LEN(tab); t++)
		CHECK_EQ_MSG(mpip_qdelay_predict(tab[t].q, tab[t].q_prev,
						 tab[t].interval,
						 tab[t].horizon),
			     tab[t].want, "row %u", t);
}

UNIT_TEST(qdelay_predict_huge_horizon_clamped)
{
	static const u32 horizons[] = {
		MPIP_TREND_HORIZON_MAX + 1, 0x01000001, 0x10000000,
		0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff,
	};
	unsigned int t;

	/* The clamp itself: 2^24 - 1 ahead of a rise of 1 per unit. */
	CHECK_EQ(mpip_qdelay_predict(1, 0, 1, MPIP_TREND_HORIZON_MAX),
		 1 + MPIP_TREND_HORIZON_MAX);
	for (t = 0; t < ARRAY_LEN(horizons); t++) {
		u32 h = horizons[t];

		/* as far ahead as the clamp, not wrapped to something short */
		CHECK_EQ_MSG(mpip_qdelay_predict(1, 0, 1, h),
			     1 + MPIP_TREND_HORIZON_MAX, "horizon 0x%x", h);
		CHECK_EQ_MSG(mpip_qdelay_predict(1000, 999, 1, h),
			     1000 + MPIP_TREND_HORIZON_MAX, "horizon 0x%x", h);
		CHECK_EQ_MSG(mpip_qdelay_predict(0x02000000, 0x02000001, 1, h),
			     0x02000000 - MPIP_TREND_HORIZON_MAX,
			     "horizon 0x%x", h);
		CHECK_EQ_MSG(mpip_qdelay_predict(1000, 1001, 1, h), 0,
			     "horizon 0x%x", h);
		/* a long interval: ratio (2^24 - 1) / (2^24 - 1) = 1 */
		CHECK_EQ_MSG(mpip_qdelay_predict(1000, 900,
						 MPIP_TREND_HORIZON_MAX, h),
			     1100, "horizon 0x%x", h);
		CHECK_EQ_MSG(mpip_qdelay_predict(1000, 900, 0xffffffff, h),
			     1000, "horizon 0x%x", h);
		CHECK_EQ_MSG(mpip_qdelay_predict(0xfffffff0, 0, 1, h),
			     0xffffffff, "horizon 0x%x", h);
	}
}

/*
 * Random Q, Q_prev, interval and horizon against Q + (Q - Q_prev) *
 * horizon / interval in exact arithmetic: the result may fall short of
 * it by rounding (at most 1 + |Q - Q_prev| / 256 towards Q), never go
 * past it, and is exact when horizon / interval is a multiple of 1/256.
 */
UNIT_TEST(qdelay_predict_matches_model)
{
	unsigned int t;

	for (t = 0; t < 200000; t++) {
		u32 q, q_prev, interval, horizon, got, h;
		__int128 d, exact, slack, lo, hi;

		switch (t % 4) {
		case 0:		/* kernel-like: ms and us */
			q = unit_below(ctx, 200000);
			q_prev = unit_below(ctx, 200000);
			interval = 1 + unit_below(ctx, 1000);
			horizon = unit_below(ctx, 10001);
			break;
		case 1:		/* small numbers */
			q = unit_below(ctx, 64);
			q_prev = unit_below(ctx, 64);
			interval = 1 + unit_below(ctx, 16);
			horizon = unit_below(ctx, 64);
			break;
		case 2:		/* anything */
			q = unit_rand32(ctx);
			q_prev = unit_rand32(ctx);
			interval = unit_rand32(ctx) >> unit_below(ctx, 32);
			horizon = unit_rand32(ctx) >> unit_below(ctx, 32);
			break;
		default:	/* exact: interval divides horizon * 256 */
			q = unit_rand32(ctx) >> unit_below(ctx, 32);
			q_prev = unit_rand32(ctx) >> unit_below(ctx, 32);
			interval = 1U << unit_below(ctx, 9);
			horizon = unit_below(ctx, MPIP_TREND_HORIZON_MAX + 1);
			break;
		}
		got = mpip_qdelay_predict(q, q_prev, interval, horizon);
		h = horizon > MPIP_TREND_HORIZON_MAX ? MPIP_TREND_HORIZON_MAX
						     : horizon;
		if (!interval || !h) {
			if (!CHECK_EQ_MSG(got, q, "q %u prev %u i %u h %u",
					  q, q_prev, interval, horizon))
				break;
			continue;
		}
		d = (__int128)q - q_prev;
		/* truncated towards Q, as the rounding goes */
		exact = d * h / interval;
		slack = ((d < 0 ? -d : d) >> 8) + 1;
		if (((unsigned long long)h << 8) % interval == 0)
			slack = 0;
		if (d >= 0) {
			lo = q + exact - slack;
			hi = q + exact;
		} else {
			lo = q + exact;
			hi = q + exact + slack;
		}
		if (lo < q && d >= 0)
			lo = q;
		if (hi > q && d < 0)
			hi = q;
		if (lo < 0)
			lo = 0;
		if (hi < 0)
			hi = 0;
		if (lo > 0xffffffff)
			lo = 0xffffffff;
		if (hi > 0xffffffff)
			hi = 0xffffffff;
		if (!CHECK(got >= lo && got <= hi)) {
			unit_diag("q %u prev %u interval %u horizon %u: got %u, want %llu..%llu",
				  q, q_prev, interval, horizon, got,
				  (unsigned long long)lo,
				  (unsigned long long)hi);
			break;
		}
	}
}

/* Larger trends and longer horizons predict further. */
UNIT_TEST(qdelay_predict_monotonic)
{
	unsigned int t;

	for (t = 0; t < 20000; t++) {
		u32 q = unit_below(ctx, 1000000);
		u32 q_prev = unit_below(ctx, 1000000);
		u32 interval = 1 + unit_below(ctx, 1000);
		u32 horizon = unit_below(ctx, 10000);
		u32 p = mpip_qdelay_predict(q, q_prev, interval, horizon);
		u32 p_h = mpip_qdelay_predict(q, q_prev, interval, horizon + 1);
		u32 p_up = mpip_qdelay_predict(q, q_prev ? q_prev - 1 : 0,
					       interval, horizon);
		int rising = q >= q_prev;

		if (!CHECK(rising ? p >= q && p_h >= p : p <= q && p_h <= p) ||
		    !CHECK(p_up >= p)) {
			unit_diag("q %u prev %u interval %u horizon %u", q,
				  q_prev, interval, horizon);
			break;
		}
	}
}

/* ---- Algorithm 1 ------------------------------------------------------- */

UNIT_TEST(weights_init_values)
{
	static const struct {
		unsigned int n;
		u32 w;
	} tab[] = {
		{ 1, 1000 }, { 2, 500 }, { 3, 333 }, { 7, 142 }, { 8, 125 },
		{ 999, 1 }, { 1000, 1 }, { 1001, 1 }, { 4000, 1 },
	};
	static u32 w[4001];
	unsigned int t, i;

	for (t = 0; t < ARRAY_LEN(tab); t++) {
		for (i = 0; i <= tab[t].n; i++)
			w[i] = 0xdead;
		mpip_weights_init(w, tab[t].n);
		for (i = 0; i < tab[t].n; i++)
			if (!CHECK_EQ_MSG(w[i], tab[t].w, "n %u i %u",
					  tab[t].n, i))
				break;
		CHECK_EQ_MSG(w[tab[t].n], 0xdead, "n %u: wrote past end",
			     tab[t].n);
	}
	w[0] = 0xdead;
	mpip_weights_init(w, 0);
	CHECK_EQ(w[0], 0xdead);
}

/*
 * Two paths, q = {5, 20}, S = 10, from 500/500: Q_avg = 12.5, path 0
 * gains and path 1 loses 10 per iteration until 1000 and 1.  Then the
 * congestion moves to path 0 and path 1 climbs back from the floor.
 */
UNIT_TEST(weights_adjust_two_path_table)
{
	static const struct {
		unsigned int iter;
		u32 w0, w1;
	} tab[] = {
		{ 1, 510, 490 }, { 2, 520, 480 }, { 3, 530, 470 },
		{ 10, 600, 400 }, { 25, 750, 250 }, { 48, 980, 20 },
		{ 49, 990, 10 }, { 50, 1000, 1 }, { 51, 1000, 1 },
		{ 60, 1000, 1 },
	};
	static const struct {
		unsigned int iter;
		u32 w0, w1;
	} back[] = {
		{ 1, 990, 11 }, { 2, 980, 21 }, { 50, 500, 501 },
		{ 99, 10, 991 }, { 100, 1, 1000 }, { 101, 1, 1000 },
	};
	const u32 q[2] = { 5, 20 }, q2[2] = { 20, 5 };
	unsigned int it = 0, t;
	u32 w[2];

	mpip_weights_init(w, 2);
	CHECK_EQ(w[0], 500);
	CHECK_EQ(w[1], 500);
	for (t = 0; t < ARRAY_LEN(tab); t++) {
		while (it < tab[t].iter) {
			mpip_weights_adjust(q, w, 2, 10);
			it++;
		}
		CHECK_EQ_MSG(w[0], tab[t].w0, "iteration %u", it);
		CHECK_EQ_MSG(w[1], tab[t].w1, "iteration %u", it);
	}
	it = 0;
	for (t = 0; t < ARRAY_LEN(back); t++) {
		while (it < back[t].iter) {
			mpip_weights_adjust(q2, w, 2, 10);
			it++;
		}
		CHECK_EQ_MSG(w[0], back[t].w0, "back iteration %u", it);
		CHECK_EQ_MSG(w[1], back[t].w1, "back iteration %u", it);
	}
}

UNIT_TEST(weights_adjust_equal_q_all_increase)
{
	static const u32 qs[][3] = {
		{ 7, 7, 7 }, { 0, 0, 0 }, { 0xffffffff, 0xffffffff, 0xffffffff },
	};
	unsigned int k, it;
	u32 w[3];

	for (k = 0; k < ARRAY_LEN(qs); k++) {
		mpip_weights_init(w, 3);
		for (it = 1; it <= 68; it++) {
			u32 want = it < 67 ? 333 + 10 * it : 1000;

			mpip_weights_adjust(qs[k], w, 3, 10);
			CHECK_EQ_MSG(w[0], want, "set %u iteration %u", k, it);
			CHECK_EQ_MSG(w[1], want, "set %u iteration %u", k, it);
			CHECK_EQ_MSG(w[2], want, "set %u iteration %u", k, it);
		}
	}
}

UNIT_TEST(weights_adjust_three_path_table)
{
	/* One iteration from 333/333/333 with S = 10, hand-computed. */
	static const struct {
		u32 q[3];
		u32 w[3];
	} tab[] = {
		{ { 10, 30, 20 }, { 343, 323, 343 } },	/* avg 20: = counts */
		{ { 10, 11, 12 }, { 343, 343, 323 } },	/* avg 11 */
		{ { 0, 0, 1 }, { 343, 343, 323 } },	/* avg 1/3 */
		{ { 1, 1, 0 }, { 323, 323, 343 } },	/* avg 2/3 */
		{ { 100, 0, 0 }, { 323, 343, 343 } },
		{ { 0xffffffff, 0xfffffffe, 0xfffffffe },
		  { 323, 343, 343 } },			/* sum > 2^32 */
		{ { 0xffffffff, 0xffffffff, 0xfffffffe },
		  { 323, 323, 343 } },
	};
	unsigned int t, i;

	for (t = 0; t < ARRAY_LEN(tab); t++) {
		u32 w[3];

		mpip_weights_init(w, 3);
		mpip_weights_adjust(tab[t].q, w, 3, 10);
		for (i = 0; i < 3; i++)
			CHECK_EQ_MSG(w[i], tab[t].w[i], "row %u path %u", t, i);
	}

	/* Two paths with a non-integer average: 5 <= 5.5 < 6. */
	{
		const u32 q[2] = { 5, 6 };
		u32 w[2] = { 500, 500 };

		mpip_weights_adjust(q, w, 2, 10);
		CHECK_EQ(w[0], 510);
		CHECK_EQ(w[1], 490);
	}
}

UNIT_TEST(weights_adjust_bounds)
{
	/* Steps larger than the range: straight to the bounds. */
	{
		const u32 q[2] = { 5, 20 };
		u32 w[2] = { 500, 500 };

		mpip_weights_adjust(q, w, 2, 0xffffffff);
		CHECK_EQ(w[0], 1000);
		CHECK_EQ(w[1], 1);
		mpip_weights_adjust(q, w, 2, 999);
		CHECK_EQ(w[0], 1000);
		CHECK_EQ(w[1], 1);
	}
	/* Exactly to the bounds, and one past. */
	{
		const u32 q[2] = { 0, 1 };
		u32 w[2] = { 990, 11 };

		mpip_weights_adjust(q, w, 2, 10);
		CHECK_EQ(w[0], 1000);
		CHECK_EQ(w[1], 1);
		w[0] = 991;
		w[1] = 10;
		mpip_weights_adjust(q, w, 2, 10);
		CHECK_EQ(w[0], 1000);
		CHECK_EQ(w[1], 1);
	}
	/* Step 0 only brings out-of-range weights back in range. */
	{
		const u32 q[4] = { 1, 0, 1, 0 };
		u32 w[4] = { 0, 1500, 2000, 0 };

		mpip_weights_adjust(q, w, 4, 0);
		CHECK_EQ(w[0], 1);
		CHECK_EQ(w[1], 1000);
		CHECK_EQ(w[2], 1000);
		CHECK_EQ(w[3], 1);
		mpip_weights_adjust(q, w, 4, 0);
		CHECK_EQ(w[0], 1);
		CHECK_EQ(w[1], 1000);
		CHECK_EQ(w[2], 1000);
		CHECK_EQ(w[3], 1);
	}
	/* One path: always at or below the average. */
	{
		const u32 q[1] = { 123456 };
		u32 w[1];
		unsigned int it;

		mpip_weights_init(w, 1);
		for (it = 0; it < 5; it++)
			mpip_weights_adjust(q, w, 1, 10);
		CHECK_EQ(w[0], 1000);
	}
	/* No paths: nothing is touched. */
	mpip_weights_adjust(NULL, NULL, 0, 10);
}

/*
 * Paths of capacity cap[i] units per period T share an offered load of
 * @load units per period, split by weight, and Algorithm 1 (S = 10) runs
 * once per period.  Returns the weights averaged over the last 200 of
 * 2000 periods in @mean.
 *
 * SIM_UTIL: a path's queueing delay grows with its utilisation,
 * load share / capacity, and goes straight into Algorithm 1.  Delays are
 * equal when utilisations are, i.e. when weights are proportional to
 * capacities.
 *
 * SIM_TRACKER: the same delays reach Algorithm 1 only through the delay
 * tracker, as raw one-way samples (4 per period, smooth_shift 2) with a
 * clock offset across the u32 wrap, a propagation delay of its own per
 * path and jitter.  The first 20 periods are idle (no queueing, as while
 * the paths are set up), so D_min learns the propagation delay and Q is
 * the queueing delay.
 */
enum sim_mode { SIM_UTIL, SIM_TRACKER };

static void simulate(struct unit_ctx *ctx, const double *cap,
		     unsigned int n, double load, enum sim_mode mode,
		     double *mean)
{
	static const u32 prop[4] = { 10000, 35000, 20000, 5000 };
	const u32 off = 0xfff00000;
	struct mpip_path_delay pd[4];
	u32 w[4], q[4];
	unsigned int it, i, k;

	memset(pd, 0, sizeof(pd));
	mpip_weights_init(w, n);
	for (i = 0; i < n; i++)
		mean[i] = 0;

	for (it = 0; it < 20 && mode == SIM_TRACKER; it++)
		for (i = 0; i < n; i++)
			mpip_path_delay_sample(&pd[i], off + prop[i] +
					       unit_below(ctx, 300), 2);

	for (it = 0; it < 2000; it++) {
		u32 sum = 0;

		for (i = 0; i < n; i++)
			sum += w[i];
		for (i = 0; i < n; i++) {
			u32 qd = (u32)(20000.0 * load * w[i] / sum / cap[i]);

			if (mode == SIM_UTIL) {
				q[i] = qd;
				continue;
			}
			for (k = 0; k < 4; k++)
				mpip_path_delay_sample(&pd[i], off + prop[i] +
						       qd + unit_below(ctx, 300),
						       2);
			q[i] = pd[i].q;
		}
		mpip_weights_adjust(q, w, n, 10);
		for (i = 0; i < n; i++)
			CHECK(w[i] >= MPIP_WEIGHT_MIN &&
			      w[i] <= MPIP_WEIGHT_MAX);
		if (it >= 1800)
			for (i = 0; i < n; i++)
				mean[i] += w[i] / 200.0;
	}
}

UNIT_TEST(weights_normalize)
{
	u32 a[2] = { 1000, 1000 }, b[2] = { 800, 400 }, c[3] = { 1, 1, 998 };
	u32 d[4] = { 1000, 1000, 1000, 1 }, e[2] = { 0, 0 };
	u32 f[2] = { 0xffffffff, 0xffffffff }, g[3] = { 0, 600, 600 };

	mpip_weights_normalize(a, 2, MPIP_WEIGHT_MAX);
	CHECK_EQ(a[0], 500);
	CHECK_EQ(a[1], 500);
	mpip_weights_normalize(b, 2, MPIP_WEIGHT_MAX);
	CHECK_EQ(b[0], 667);
	CHECK_EQ(b[1], 333);
	/* already at the sum: untouched */
	mpip_weights_normalize(c, 3, MPIP_WEIGHT_MAX);
	CHECK_EQ(c[0], 1);
	CHECK_EQ(c[2], 998);
	/* never below the minimum */
	mpip_weights_normalize(d, 4, MPIP_WEIGHT_MAX);
	CHECK_EQ(d[0], 333);
	CHECK_EQ(d[3], MPIP_WEIGHT_MIN);
	/* a parked path stays parked, the others share the sum */
	mpip_weights_normalize(g, 3, MPIP_WEIGHT_MAX);
	CHECK_EQ(g[0], MPIP_WEIGHT_PARKED);
	CHECK_EQ(g[1], 500);
	CHECK_EQ(g[2], 500);
	/* all zero stays zero; no overflow with huge weights */
	mpip_weights_normalize(e, 2, MPIP_WEIGHT_MAX);
	CHECK_EQ(e[0], 0);
	mpip_weights_normalize(f, 2, MPIP_WEIGHT_MAX);
	CHECK_EQ(f[0], 500);
	mpip_weights_normalize(NULL, 0, MPIP_WEIGHT_MAX);
}

/*
 * Normalized, a step is always the same share: after an idle spell, which
 * without normalization leaves every weight at the maximum, a 2:1 split
 * takes as many iterations as from the start, not three times as many.
 */
UNIT_TEST(weights_normalized_converge_fast_after_idle)
{
	u32 w[2] = { 500, 500 }, w_raw[2], idle[2] = { 0, 0 };
	u32 busy[2] = { 0, 40000 };	/* path 1 is the fast one */
	unsigned int it, n_norm = 0, n_raw = 0;

	for (it = 0; it < 100; it++) {
		mpip_weights_adjust(idle, w, 2, 10);
		mpip_weights_normalize(w, 2, MPIP_WEIGHT_MAX);
	}
	CHECK(w[0] + w[1] >= 998 && w[0] + w[1] <= 1002);
	w_raw[0] = 500;
	w_raw[1] = 500;
	for (it = 0; it < 100; it++)
		mpip_weights_adjust(idle, w_raw, 2, 10);
	CHECK_EQ(w_raw[0], MPIP_WEIGHT_MAX);

	while (3 * w[0] < 2 * (w[0] + w[1]) && n_norm < 100) {
		mpip_weights_adjust(busy, w, 2, 10);
		mpip_weights_normalize(w, 2, MPIP_WEIGHT_MAX);
		n_norm++;
	}
	while (3 * w_raw[0] < 2 * (w_raw[0] + w_raw[1]) && n_raw < 100) {
		mpip_weights_adjust(busy, w_raw, 2, 10);
		n_raw++;
	}
	unit_diag("iterations to a 2:1 split: %u normalized, %u raw", n_norm,
		  n_raw);
	CHECK(n_norm <= 20);
	CHECK(n_raw >= 2 * n_norm);
}

static int ratio_ok(double a, double b)
{
	return a >= 1.6 * b && a <= 2.5 * b;
}

UNIT_TEST(weights_converge_to_capacity_ratio)
{
	static const double loads[] = { 30.0, 54.0, 72.0 };	/* of 60 */
	const double cap[2] = { 40.0, 20.0 }, rev[2] = { 20.0, 40.0 };
	double mean[2];
	unsigned int l;

	for (l = 0; l < ARRAY_LEN(loads); l++) {
		simulate(ctx, cap, 2, loads[l], SIM_UTIL, mean);
		unit_diag("util load %.0f: 40/20 weights %.1f/%.1f", loads[l],
			  mean[0], mean[1]);
		CHECK(ratio_ok(mean[0], mean[1]));

		simulate(ctx, rev, 2, loads[l], SIM_UTIL, mean);
		unit_diag("util load %.0f: 20/40 weights %.1f/%.1f", loads[l],
			  mean[0], mean[1]);
		CHECK(ratio_ok(mean[1], mean[0]));
	}
}

UNIT_TEST(weights_converge_three_paths)
{
	const double cap[3] = { 40.0, 20.0, 20.0 };
	double mean[3];

	simulate(ctx, cap, 3, 54.0, SIM_UTIL, mean);
	unit_diag("util 40/20/20 weights %.1f/%.1f/%.1f", mean[0], mean[1],
		  mean[2]);
	CHECK(ratio_ok(mean[0], mean[1]));
	CHECK(ratio_ok(mean[0], mean[2]));
	CHECK(mean[1] >= 0.8 * mean[2] && mean[1] <= 1.25 * mean[2]);
}

UNIT_TEST(weights_converge_through_delay_tracker)
{
	static const double loads[] = { 30.0, 54.0, 72.0 };	/* of 60 */
	const double cap[2] = { 40.0, 20.0 }, rev[2] = { 20.0, 40.0 };
	const double cap3[3] = { 40.0, 20.0, 20.0 };
	double mean[3];
	unsigned int l;

	for (l = 0; l < ARRAY_LEN(loads); l++) {
		simulate(ctx, cap, 2, loads[l], SIM_TRACKER, mean);
		unit_diag("tracker load %.0f: 40/20 weights %.1f/%.1f",
			  loads[l], mean[0], mean[1]);
		CHECK(ratio_ok(mean[0], mean[1]));

		simulate(ctx, rev, 2, loads[l], SIM_TRACKER, mean);
		unit_diag("tracker load %.0f: 20/40 weights %.1f/%.1f",
			  loads[l], mean[0], mean[1]);
		CHECK(ratio_ok(mean[1], mean[0]));
	}

	simulate(ctx, cap3, 3, 54.0, SIM_TRACKER, mean);
	unit_diag("tracker 40/20/20 weights %.1f/%.1f/%.1f", mean[0], mean[1],
		  mean[2]);
	CHECK(ratio_ok(mean[0], mean[1]));
	CHECK(ratio_ok(mean[0], mean[2]));
	CHECK(mean[1] >= 0.8 * mean[2] && mean[1] <= 1.25 * mean[2]);
}

/* ---- gaining paths and step boost -------------------------------------- */

UNIT_TEST(weights_gainers_table)
{
	static const struct {
		unsigned int n;
		u32 q[4];
		u32 want;
	} tab[] = {
		/* equal queues: every path gains */
		{ 1, { 123456 }, 0x1 },
		{ 2, { 7, 7 }, 0x3 },
		{ 3, { 0, 0, 0 }, 0x7 },
		{ 4, { 5, 5, 5, 5 }, 0xf },
		{ 3, { 0xffffffff, 0xffffffff, 0xffffffff }, 0x7 },
		/* one path higher than the others */
		{ 2, { 5, 20 }, 0x1 },
		{ 2, { 20, 5 }, 0x2 },
		{ 2, { 5, 6 }, 0x1 },			/* 5 <= 5.5 < 6 */
		{ 3, { 10, 10, 40 }, 0x3 },
		{ 3, { 0, 1, 0 }, 0x5 },
		{ 4, { 9, 9, 9, 10 }, 0x7 },
		/* three paths, the same as weights_adjust_three_path_table */
		{ 3, { 10, 30, 20 }, 0x5 },		/* Q = Q_avg gains */
		{ 3, { 10, 11, 12 }, 0x3 },
		{ 3, { 0, 0, 1 }, 0x3 },
		{ 3, { 1, 1, 0 }, 0x4 },
		{ 3, { 100, 0, 0 }, 0x6 },
		{ 3, { 0xffffffff, 0xfffffffe, 0xfffffffe }, 0x6 },
		{ 3, { 0xffffffff, 0xffffffff, 0xfffffffe }, 0x4 },
		/* one path lower than the others */
		{ 4, { 40, 40, 0, 40 }, 0x4 },
	};
	unsigned int t;

	for (t = 0; t < ARRAY_LEN(tab); t++)
		CHECK_EQ_MSG(mpip_weights_gainers(tab[t].q, tab[t].n),
			     tab[t].want, "row %u", t);
	CHECK_EQ(mpip_weights_gainers(NULL, 0), 0);
}

UNIT_TEST(weights_gainers_many_paths)
{
	u32 q[40];
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(q); i++)
		q[i] = 1000;
	CHECK_EQ(mpip_weights_gainers(q, 32), 0xffffffff);
	CHECK_EQ(mpip_weights_gainers(q, 31), 0x7fffffff);
	/* only the first 32 have a bit */
	CHECK_EQ(mpip_weights_gainers(q, 40), 0xffffffff);
	q[31] = 2000;
	CHECK_EQ(mpip_weights_gainers(q, 32), 0x7fffffff);
	q[0] = 2000;
	CHECK_EQ(mpip_weights_gainers(q, 32), 0x7ffffffe);
}

/* The mask names exactly the paths mpip_weights_adjust() gives more. */
UNIT_TEST(weights_gainers_match_adjust)
{
	unsigned int t, i;

	for (t = 0; t < 20000; t++) {
		unsigned int n = 1 + unit_below(ctx, 16);
		u32 q[16], w[16], mask, want = 0;

		for (i = 0; i < n; i++) {
			switch (unit_below(ctx, 3)) {
			case 0:
				q[i] = unit_below(ctx, 4);
				break;
			case 1:
				q[i] = unit_below(ctx, 100000);
				break;
			default:
				q[i] = unit_rand32(ctx);
				break;
			}
			w[i] = 500;
		}
		mask = mpip_weights_gainers(q, n);
		mpip_weights_adjust(q, w, n, 10);
		for (i = 0; i < n; i++)
			if (w[i] > 500)
				want |= 1U << i;
		if (!CHECK_EQ_MSG(mask, want, "case %u n %u", t, n))
			break;
		/* the path of the least delay always gains */
		CHECK(mask != 0);
	}
}

/* Step of each round for a fixed up set 0x3, S = 10, max_shift 2. */
static u32 boost(struct mpip_wboost *st, u32 gain)
{
	return mpip_weights_boost_step(st, 0x3, gain, false, 10, 2);
}

/* The same in a round whose predicted delays turned against @gain. */
static u32 boost_turned(struct mpip_wboost *st, u32 gain)
{
	return mpip_weights_boost_step(st, 0x3, gain, true, 10, 2);
}

UNIT_TEST(weights_boost_repeated_gain_doubles)
{
	struct mpip_wboost st;
	unsigned int i;

	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 40);
	for (i = 0; i < 10; i++)
		CHECK_EQ_MSG(boost(&st, 0x1), 40, "round %u", 4 + i);

	/* the other path alone gains, from a fresh state as well */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 20);
	CHECK_EQ(boost(&st, 0x2), 40);
	CHECK_EQ(boost(&st, 0x2), 40);
}

UNIT_TEST(weights_boost_resets_on_gain_change)
{
	struct mpip_wboost st;
	unsigned int i;

	/* a change before the step has grown to 4S only restarts the growth */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 20);
	CHECK_EQ(boost(&st, 0x2), 40);
	/* the balance was crossed after growing: halving back, then S */
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 10);
	for (i = 0; i < 10; i++)
		CHECK_EQ_MSG(boost(&st, 0x1), 10, "round %u", i);
	for (i = 0; i < 10; i++)
		CHECK_EQ_MSG(boost(&st, i & 1 ? 0x1 : 0x2), 10, "round %u", i);
	for (i = 0; i < 10; i++)
		CHECK_EQ_MSG(boost(&st, 0x2), 10, "round %u", i);

	/* the same at the largest step: it stays at 4S, then halves */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 20);
	CHECK_EQ(boost(&st, 0x2), 40);
	CHECK_EQ(boost(&st, 0x2), 40);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x2), 10);

	/* three paths, up to 8S: a different non-empty subset is a change */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 40);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 80);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 80);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x1, false, 10, 3), 40);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x1, false, 10, 3), 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x3, false, 10, 3), 10);

	/* bits of paths outside @up do not count */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x5, false, 10, 3), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0xf5, false, 10, 3), 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x80000005, false, 10, 3),
		 40);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0xfffffff9, false, 10, 3),
		 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0xfffffff9, false, 10, 3),
		 10);
}

UNIT_TEST(weights_boost_turned_prediction)
{
	struct mpip_wboost st;
	unsigned int i;

	/* a turn before the step has grown to 4S restarts the growth */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost_turned(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 40);
	/* after it: the balance is crossed, halving back, then S */
	CHECK_EQ(boost_turned(&st, 0x1), 20);
	CHECK_EQ(boost_turned(&st, 0x1), 10);
	for (i = 0; i < 10; i++)
		CHECK_EQ_MSG(boost(&st, 0x1), 10, "round %u", i);

	/* a turn in a round without information changes nothing */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 20);
	CHECK_EQ(boost_turned(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x2), 40);
	CHECK_EQ(boost(&st, 0x2), 40);

	/* with max_shift 1, a grown step of 2S is as far as it goes */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, true, 10, 1), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 10);

	/* a turn with the boost off: S */
	memset(&st, 0, sizeof(st));
	for (i = 0; i < 4; i++)
		CHECK_EQ_MSG(mpip_weights_boost_step(&st, 0x3, 0x1, i & 1, 10,
						     0), 10, "round %u", i);
}

UNIT_TEST(weights_boost_resets_on_path_change)
{
	struct mpip_wboost st;

	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 40);
	/* a third path came up: the same path gaining starts over */
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x1, false, 10, 2), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x1, false, 10, 2), 20);
	/* and went down again */
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 40);
	/* another path instead of path 1: the same count, other paths */
	CHECK_EQ(mpip_weights_boost_step(&st, 0x5, 0x1, false, 10, 2), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x5, 0x1, false, 10, 2), 20);

	/*
	 * After the balance was crossed, a change of paths (one lost and
	 * back, one added) does not start the growth again: the weights
	 * are near their balance, and a grown step would overshoot.
	 */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	CHECK_EQ(boost(&st, 0x1), 40);
	CHECK_EQ(boost(&st, 0x2), 20);
	/* a change of paths while halving back: S at once */
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x2, false, 10, 2), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x2, false, 10, 2), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x7, 0x2, false, 10, 2), 10);
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 10);
}

UNIT_TEST(weights_boost_all_gain_changes_nothing)
{
	struct mpip_wboost st;

	/* all gain from the start: S, and the next round starts at S */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x1), 10);
	CHECK_EQ(boost(&st, 0x1), 20);
	/* an all-gain round in between: S, and the growth goes on */
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x1), 40);
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x1), 40);
	/* bits outside @up do not make an all-gain round informative */
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0xff, false, 10, 2), 10);
	CHECK_EQ(boost(&st, 0x1), 40);
	/* ... and do not hide a change of the gaining set */
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x2), 20);
	CHECK_EQ(boost(&st, 0x2), 10);
	/* nor do they undo the end of the growth */
	CHECK_EQ(boost(&st, 0x3), 10);
	CHECK_EQ(boost(&st, 0x2), 10);
	CHECK_EQ(boost(&st, 0x2), 10);
}

UNIT_TEST(weights_boost_max_shift_zero)
{
	static const u32 gains[] = { 0x1, 0x1, 0x1, 0x2, 0x2, 0x3, 0x1, 0x1 };
	struct mpip_wboost st;
	unsigned int i;

	memset(&st, 0, sizeof(st));
	for (i = 0; i < ARRAY_LEN(gains); i++)
		CHECK_EQ_MSG(mpip_weights_boost_step(&st, 0x3, gains[i], false, 10, 0),
			     10, "round %u", i);
	for (i = 0; i < 5; i++)
		CHECK_EQ_MSG(mpip_weights_boost_step(&st, 0x7, 0x4, false, 7, 0), 7,
			     "round %u", i);
	/* max_shift 1: S, 2S, 2S, and a change settles at once */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 20);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x2, false, 10, 1), 10);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 1), 10);
}

UNIT_TEST(weights_boost_capped_at_weight_max)
{
	static const u32 s8[] = { 10, 20, 40, 80, 160, 320, 640, 1000, 1000 };
	struct mpip_wboost st;
	unsigned int i;

	/* the largest max_shift the tunable allows, S = 10 */
	memset(&st, 0, sizeof(st));
	for (i = 0; i < ARRAY_LEN(s8); i++)
		CHECK_EQ_MSG(mpip_weights_boost_step(&st, 0x3, 0x1, false, 10, 8),
			     s8[i], "round %u", i);
	/* a large step */
	memset(&st, 0, sizeof(st));
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x2, false, 400, 2), 400);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x2, false, 400, 2), 800);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x2, false, 400, 2), 1000);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x2, false, 400, 2), 1000);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 400, 2), 800);
	CHECK_EQ(mpip_weights_boost_step(&st, 0x3, 0x1, false, 400, 2), 400);
	/* huge steps and shifts: no overflow, still the cap */
	memset(&st, 0, sizeof(st));
	for (i = 0; i < 40; i++)
		CHECK_EQ_MSG(mpip_weights_boost_step(&st, 0x3, 0x1, false, 0xffffffff,
						     0xffffffff),
			     MPIP_WEIGHT_MAX, "round %u", i);
	memset(&st, 0, sizeof(st));
	for (i = 0; i < 40; i++)
		CHECK_EQ_MSG(mpip_weights_boost_step(&st, 0x3, 0x1, false, 1, 100),
			     i < 10 ? 1U << i : MPIP_WEIGHT_MAX, "round %u", i);
}

/*
 * Closed loop: paths of capacity cap[i] units per round T = 100 ms, each
 * with a queue that integrates what is sent into it minus what its link
 * drains, share an offered load of @load units per round, split by
 * weight.  Once per round, Algorithm 1 runs on the queueing delays,
 * predicted @horizon ms ahead along their trend since the last round,
 * with the step boosted up to S << @boost, and the weights are
 * normalized, as the kernel's weight round does.  From equal weights,
 * *@settle is the first round in which no link is overloaded and no
 * queue holds anything (-1 if none), *@peak the largest queueing delay
 * of the run and *@tail that of the last 500 of 1000 rounds, in us.
 */
static void loop_simulate(const double *cap, unsigned int n, double load,
			  u32 horizon, unsigned int boost, int *settle,
			  u32 *peak, u32 *tail)
{
	double backlog[3] = { 0 };
	u32 w[3], q[3], q_prev[3] = { 0 }, qp[3], gain, step;
	struct mpip_wboost st;
	unsigned int it, i;

	memset(&st, 0, sizeof(st));
	mpip_weights_init(w, n);
	*settle = -1;
	*peak = 0;
	*tail = 0;
	for (it = 0; it < 1000; it++) {
		double sum = 0;
		int calm = 1;

		for (i = 0; i < n; i++)
			sum += w[i];
		for (i = 0; i < n; i++) {
			double sent = load * w[i] / sum;

			if (sent > cap[i])
				calm = 0;
			backlog[i] += sent - cap[i];
			if (backlog[i] < 0)
				backlog[i] = 0;
			q[i] = (u32)(backlog[i] / cap[i] * 100000.0);
			if (q[i])
				calm = 0;
			if (q[i] > *peak)
				*peak = q[i];
			if (it >= 500 && q[i] > *tail)
				*tail = q[i];
			qp[i] = mpip_qdelay_predict(q[i], q_prev[i], 100,
						    horizon);
			q_prev[i] = q[i];
		}
		if (*settle < 0 && calm)
			*settle = (int)it;
		/* as the kernel: boost on measured, direction on predicted */
		gain = mpip_weights_gainers(q, n);
		step = mpip_weights_boost_step(&st, (1U << n) - 1, gain,
					       mpip_weights_gainers(qp, n) != gain,
					       10, boost);
		mpip_weights_adjust(qp, w, n, step);
		mpip_weights_normalize(w, n, MPIP_WEIGHT_MAX);
	}
}

/*
 * With the defaults (trend 500 ms at T = 100 ms, boost 3) the weights
 * settle at least twice as fast as with the paper's plain Algorithm 1,
 * the queues built meanwhile peak no higher, and afterwards they stay
 * within a tenth of T (a boost that overshoots swings by whole periods).
 */
#define LOOP_TREND_MS	500	/* weight_trend_ms default */
#define LOOP_BOOST	3	/* weight_boost default */

UNIT_TEST(weights_trend_boost_closed_loop)
{
	static const struct {
		unsigned int n;
		double cap[3];
		double load;
	} tab[] = {
		{ 2, { 40.0, 20.0 }, 54.0 },
		{ 2, { 20.0, 40.0 }, 54.0 },
		{ 2, { 40.0, 20.0 }, 58.0 },
		{ 2, { 20.0, 40.0 }, 58.0 },
		{ 2, { 50.0, 10.0 }, 54.0 },
		{ 3, { 40.0, 20.0, 20.0 }, 72.0 },
		{ 3, { 20.0, 20.0, 40.0 }, 72.0 },
	};
	unsigned int t;

	for (t = 0; t < ARRAY_LEN(tab); t++) {
		int s_plain, s_new;
		u32 p_plain, p_new, t_plain, t_new;

		loop_simulate(tab[t].cap, tab[t].n, tab[t].load, 0, 0,
			      &s_plain, &p_plain, &t_plain);
		loop_simulate(tab[t].cap, tab[t].n, tab[t].load,
			      LOOP_TREND_MS, LOOP_BOOST,
			      &s_new, &p_new, &t_new);
		unit_diag("row %u: settled after %d rounds (plain %d)", t,
			  s_new, s_plain);
		unit_diag("row %u: peak Q %u us (plain %u), then %u (plain %u)",
			  t, p_new, p_plain, t_new, t_plain);
		CHECK_EQ_MSG(s_new >= 0, 1, "row %u", t);
		CHECK_EQ_MSG(s_plain >= 0, 1, "row %u", t);
		CHECK_EQ_MSG(2 * s_new <= s_plain, 1, "row %u: %d vs %d", t,
			     s_new, s_plain);
		CHECK_EQ_MSG(p_new <= p_plain, 1, "row %u: %u vs %u", t,
			     p_new, p_plain);
		CHECK_EQ_MSG(t_new <= 10000, 1, "row %u: %u", t, t_new);
	}
}

/* ---- weighted pick ----------------------------------------------------- */

/* Index whose share holds r in [0, sum): independent linear search. */
static unsigned int ref_owner(const u32 *w, unsigned int n,
			      unsigned __int128 r)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return MPIP_PATH_NONE;
}

/*
 * Path k gets the rnd values in [ceil(C_k * 2^32 / sum),
 * ceil(C_{k+1} * 2^32 / sum)), C_k the sum of the weights before k: check
 * both ends of every non-empty range and the value just below it, and
 * that the range holds floor or ceil of w[k] * 2^32 / sum values.
 */
static void check_boundaries(struct unit_ctx *ctx, const u32 *w,
			     unsigned int n)
{
	unsigned __int128 sum = 0, c = 0;
	unsigned long long expect = 0;
	unsigned int k, prev = MPIP_PATH_NONE;

	for (k = 0; k < n; k++)
		sum += w[k];
	for (k = 0; k < n; k++) {
		unsigned __int128 first, end, cnt, lo;

		first = ((c << 32) + sum - 1) / sum;
		c += w[k];
		end = ((c << 32) + sum - 1) / sum;
		cnt = end - first;
		lo = ((unsigned __int128)w[k] << 32) / sum;
		CHECK_EQ_MSG(first, expect, "k %u", k);
		CHECK(cnt == lo || cnt == lo + 1);
		if (!w[k])
			CHECK_EQ_MSG(cnt, 0, "k %u", k);
		if (first == end)
			continue;
		CHECK_EQ_MSG(mpip_weights_pick(w, n, (u32)first), k,
			     "k %u first 0x%llx", k,
			     (unsigned long long)first);
		CHECK_EQ_MSG(mpip_weights_pick(w, n, (u32)(end - 1)), k,
			     "k %u end 0x%llx", k, (unsigned long long)end);
		CHECK_EQ_MSG(ref_owner(w, n, (first * sum) >> 32), k,
			     "k %u", k);
		if (prev != MPIP_PATH_NONE)
			CHECK_EQ_MSG(mpip_weights_pick(w, n, (u32)first - 1),
				     prev, "k %u", k);
		else
			CHECK_EQ_MSG(first, 0, "k %u", k);
		prev = k;
		expect = (unsigned long long)end;
	}
	CHECK_EQ(expect, 1ULL << 32);
	CHECK_EQ(mpip_weights_pick(w, n, 0xffffffff), prev);
}

UNIT_TEST(pick_exact_boundaries)
{
	static const u32 w1[] = { 1, 2, 3 };
	static const u32 w2[] = { 500, 500 };
	static const u32 w3[] = { 1, 999 };
	static const u32 w4[] = { 0, 7, 0, 0, 13, 1, 0 };
	static const u32 w5[] = { 1000, 1, 1, 1000, 500, 333 };
	static const u32 w6[] = { 0xffffffff, 0xffffffff, 0xffffffff };
	static const u32 w7[] = { 0xffffffff, 1, 0x80000000 };
	u32 wr[16];
	unsigned int i, t;

	check_boundaries(ctx, w1, ARRAY_LEN(w1));
	check_boundaries(ctx, w2, ARRAY_LEN(w2));
	check_boundaries(ctx, w3, ARRAY_LEN(w3));
	check_boundaries(ctx, w4, ARRAY_LEN(w4));
	check_boundaries(ctx, w5, ARRAY_LEN(w5));
	check_boundaries(ctx, w6, ARRAY_LEN(w6));
	check_boundaries(ctx, w7, ARRAY_LEN(w7));

	/* Hand-computed: {1, 2, 3}, sum 6, first rnd of path 1 is 2^32/6. */
	CHECK_EQ(mpip_weights_pick(w1, 3, 0), 0);
	CHECK_EQ(mpip_weights_pick(w1, 3, 715827882), 0);
	CHECK_EQ(mpip_weights_pick(w1, 3, 715827883), 1);
	CHECK_EQ(mpip_weights_pick(w1, 3, 2147483647), 1);
	CHECK_EQ(mpip_weights_pick(w1, 3, 2147483648U), 2);
	/* Three times 2^32 - 1: the second third starts at 1431655766. */
	CHECK_EQ(mpip_weights_pick(w6, 3, 1431655765), 0);
	CHECK_EQ(mpip_weights_pick(w6, 3, 1431655766), 1);

	for (t = 0; t < 200; t++) {
		unsigned int n = 1 + unit_below(ctx, ARRAY_LEN(wr));

		for (i = 0; i < n; i++)
			wr[i] = unit_below(ctx, 4) ? 1 + unit_below(ctx, 1000)
						   : 0;
		wr[unit_below(ctx, n)] |= 1;
		check_boundaries(ctx, wr, n);
	}
}

UNIT_TEST(pick_matches_model_on_random_draws)
{
	static const u32 w[] = { 3, 0, 1000, 1, 0, 77, 0xfffffff0, 5 };
	unsigned __int128 sum = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(w); i++)
		sum += w[i];
	for (i = 0; i < 100000; i++) {
		u32 rnd = unit_rand32(ctx);

		if (!CHECK_EQ_MSG(mpip_weights_pick(w, ARRAY_LEN(w), rnd),
				  ref_owner(w, ARRAY_LEN(w),
					    (sum * rnd) >> 32),
				  "rnd 0x%x", rnd))
			break;
	}
}

static void check_distribution(struct unit_ctx *ctx, const u32 *w,
			       unsigned int n)
{
	unsigned long count[16] = { 0 };
	double sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += w[i];
	for (i = 0; i < PICK_DRAWS; i++) {
		unsigned int k = mpip_weights_pick(w, n, unit_rand32(ctx));

		if (!CHECK(k < n))
			return;
		count[k]++;
	}
	for (i = 0; i < n; i++) {
		double p = w[i] / sum, f = (double)count[i] / PICK_DRAWS;
		double var = PICK_DRAWS * p * (1 - p);
		double dev = count[i] - PICK_DRAWS * p;

		CHECK(f - p <= 0.01 && p - f <= 0.01);
		/* and within 5 sigma (+1), far tighter for small p */
		dev = dev < 0 ? -dev : dev;
		if (!CHECK(dev <= 1 || (dev - 1) * (dev - 1) <= 25 * var))
			unit_diag("path %u weight %u: %lu of %u, want %.1f",
				  i, w[i], count[i], PICK_DRAWS,
				  PICK_DRAWS * p);
		if (w[i])
			CHECK(count[i] > 0);
		else
			CHECK_EQ(count[i], 0);
	}
}

UNIT_TEST(pick_distribution)
{
	static const u32 w1[] = { 500, 500 };
	static const u32 w2[] = { 1, 999 };
	static const u32 w3[] = { 1000, 1, 1, 1000, 500 };
	static const u32 w4[] = { 667, 333 };
	static const u32 w5[] = { 10, 20, 30, 40 };
	static const u32 w6[] = { 0, 5, 0, 5, 0 };

	check_distribution(ctx, w1, ARRAY_LEN(w1));
	check_distribution(ctx, w2, ARRAY_LEN(w2));
	check_distribution(ctx, w3, ARRAY_LEN(w3));
	check_distribution(ctx, w4, ARRAY_LEN(w4));
	check_distribution(ctx, w5, ARRAY_LEN(w5));
	check_distribution(ctx, w6, ARRAY_LEN(w6));
}

/*
 * In every run of @len consecutive draws of mpip_weights_draw(), from
 * 200 starting points (0, one just below the wrap, random ones), each
 * path's count is within @slack of its weight's share.  Random draws
 * give a path of a third 167 +- 11 (one sigma) of 500.
 */
static void check_draw_runs(struct unit_ctx *ctx, const u32 *w,
			    unsigned int n, unsigned int len, double slack)
{
	double sum = 0, worst = 0;
	unsigned int r, i, k;

	for (i = 0; i < n; i++)
		sum += w[i];
	for (r = 0; r < 200; r++) {
		u32 seq = r < 2 ? (r ? 0xffffff00U : 0) : unit_rand32(ctx);
		unsigned long count[16] = { 0 };

		for (i = 0; i < len; i++) {
			k = mpip_weights_pick(w, n, mpip_weights_draw(seq + i));
			if (!CHECK(k < n))
				return;
			count[k]++;
		}
		for (i = 0; i < n; i++) {
			double dev = count[i] - len * w[i] / sum;

			dev = dev < 0 ? -dev : dev;
			worst = dev > worst ? dev : worst;
		}
	}
	if (!CHECK(worst <= slack))
		unit_diag("%u draws: a path's count %.1f off its share", len,
			  worst);
}

UNIT_TEST(draws_follow_weights_in_every_run)
{
	static const u32 w1[] = { 333, 333, 167, 167 };
	static const u32 w2[] = { 667, 333 };
	static const u32 w3[] = { 1, 999 };
	static const u32 w4[] = { 10, 20, 30, 40, 900 };

	check_draw_runs(ctx, w1, ARRAY_LEN(w1), 500, 3);
	check_draw_runs(ctx, w1, ARRAY_LEN(w1), 5000, 3);
	check_draw_runs(ctx, w2, ARRAY_LEN(w2), 50, 2);
	check_draw_runs(ctx, w2, ARRAY_LEN(w2), 500, 2);
	check_draw_runs(ctx, w3, ARRAY_LEN(w3), 2000, 2);
	check_draw_runs(ctx, w4, ARRAY_LEN(w4), 1000, 3);
	/* consecutive counts: the wrap of the u32 changes nothing */
	CHECK_EQ(mpip_weights_draw(0), 0);
	CHECK_EQ(mpip_weights_draw(1), MPIP_DRAW_STRIDE);
	CHECK_EQ(mpip_weights_draw(0xffffffffU), 0U - MPIP_DRAW_STRIDE);
}

UNIT_TEST(pick_single_path_and_none)
{
	static const u32 one[] = { 1 }, big[] = { 0xffffffff }, k[] = { 500 };
	static const u32 zeros[] = { 0, 0, 0 };
	unsigned int i;

	for (i = 0; i < 10000; i++) {
		u32 rnd = i < 2 ? (i ? 0xffffffff : 0) : unit_rand32(ctx);

		if (!CHECK_EQ(mpip_weights_pick(one, 1, rnd), 0) ||
		    !CHECK_EQ(mpip_weights_pick(big, 1, rnd), 0) ||
		    !CHECK_EQ(mpip_weights_pick(k, 1, rnd), 0))
			break;
	}
	CHECK_EQ(mpip_weights_pick(NULL, 0, 0), MPIP_PATH_NONE);
	CHECK_EQ(mpip_weights_pick(one, 0, 12345), MPIP_PATH_NONE);
	CHECK_EQ(mpip_weights_pick(zeros, 3, 0), MPIP_PATH_NONE);
	CHECK_EQ(mpip_weights_pick(zeros, 3, 0xffffffff), MPIP_PATH_NONE);
}

/* ---- pick among some paths, idle links first --------------------------- */

/* The masked pick is the plain pick over the weights of @mask, 0 elsewhere. */
UNIT_TEST(pick_mask_matches_zeroed_weights)
{
	u32 w[12], z[12];
	unsigned int t, i, n;

	for (t = 0; t < 20000; t++) {
		u32 mask = unit_rand32(ctx), rnd = unit_rand32(ctx);

		n = 1 + unit_below(ctx, ARRAY_LEN(w));
		for (i = 0; i < n; i++) {
			w[i] = unit_below(ctx, 4) ? unit_below(ctx, 1001) : 0;
			z[i] = mask & (1U << i) ? w[i] : 0;
		}
		if (!CHECK_EQ_MSG(mpip_weights_pick_mask(w, n, mask, rnd),
				  mpip_weights_pick(z, n, rnd),
				  "t %u mask 0x%x rnd 0x%x", t, mask, rnd))
			return;
	}
}

UNIT_TEST(pick_mask_edges)
{
	static const u32 w[] = { 300, 0, 700, 5 };
	u32 big[40];
	unsigned int i;

	/* never a path outside the mask, nor one of weight 0 */
	for (i = 0; i < 1000; i++) {
		u32 rnd = unit_rand32(ctx);

		CHECK_EQ(mpip_weights_pick_mask(w, 4, 0x4, rnd), 2);
		CHECK(mpip_weights_pick_mask(w, 4, 0x3, rnd) == 0);
		CHECK(mpip_weights_pick_mask(w, 4, 0xf, rnd) != 1);
	}
	CHECK_EQ(mpip_weights_pick_mask(w, 4, 0, 0), MPIP_PATH_NONE);
	CHECK_EQ(mpip_weights_pick_mask(w, 4, 0x2, 0xffffffff),
		 MPIP_PATH_NONE);
	/* bits past @n are not paths */
	CHECK_EQ(mpip_weights_pick_mask(w, 2, 0xc, 0), MPIP_PATH_NONE);
	CHECK_EQ(mpip_weights_pick_mask(NULL, 0, ~0U, 7), MPIP_PATH_NONE);
	/* only the first 32 paths can be masked in */
	for (i = 0; i < ARRAY_LEN(big); i++)
		big[i] = i < 32 ? 0 : 10;
	CHECK_EQ(mpip_weights_pick_mask(big, ARRAY_LEN(big), ~0U, 123),
		 MPIP_PATH_NONE);
	CHECK_EQ(mpip_weights_pick(big, ARRAY_LEN(big), 0), 32);
	/* the same proportions as the plain pick among the masked paths */
	{
		unsigned long c[4] = { 0 };

		for (i = 0; i < PICK_DRAWS; i++)
			c[mpip_weights_pick_mask(w, 4, 0x5,
						 unit_rand32(ctx))]++;
		CHECK(c[1] == 0 && c[3] == 0);
		/* 30 % +- 0.3 points */
		CHECK(c[0] > PICK_DRAWS / 1000 * 297 &&
		      c[0] < PICK_DRAWS / 1000 * 303);
	}
}

#define UNK	MPIP_BACKLOG_UNKNOWN

/* mpip_paths_steer() with paths to far ends @far (NULL: all different) */
static u32 steer_far(const u32 *w, const u32 *dev, const u32 *far,
		     const u32 *b, const u32 *q, unsigned int n,
		     unsigned int pick)
{
	static const u32 own[32] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	};
	struct mpip_steer st = {
		.w = w, .dev = dev, .far = far ? far : own, .backlog = b,
		.q = q,
	};

	return mpip_paths_steer(&st, n, pick);
}

static u32 steer(const u32 *w, const u32 *dev, const u32 *b, const u32 *q,
		 unsigned int n, unsigned int pick)
{
	return steer_far(w, dev, NULL, b, q, n, pick);
}

UNIT_TEST(steer_by_backlog_per_weight)
{
	/* paths 0, 1 on device 7; path 2 on device 9; path 3 on device 4 */
	u32 w[4] = { 300, 300, 300, 100 };
	u32 dev[4] = { 7, 7, 9, 4 };
	u32 q[4] = { 0, 0, 0, 0 };
	u32 b[4];

	/* nothing queued at the pick: the weights alone decide */
	memset(b, 0, sizeof(b));
	CHECK_EQ(steer(w, dev, b, q, 4, 0), 0);
	CHECK_EQ(steer(w, dev, b, q, 4, 3), 0);
	b[0] = b[1] = 6000;
	CHECK_EQ(steer(w, dev, b, q, 4, 3), 0);
	/*
	 * each backlog with a packet of 1500 B more, per unit of weight:
	 * device 7 (weight 600) 7500 / 600 = 12.5, device 9 (300) 3500 /
	 * 300 = 11.7, device 4 (100) 2000 / 100 = 20
	 */
	b[2] = 2000;
	b[3] = 500;
	CHECK_EQ(steer(w, dev, b, q, 4, 0), 0x4);
	CHECK_EQ(steer(w, dev, b, q, 4, 1), 0x4);
	CHECK_EQ(steer(w, dev, b, q, 4, 3), 0x4);
	CHECK_EQ(steer(w, dev, b, q, 4, 2), 0);
	/* equal per unit of weight (3750 / 300): keep the pick */
	b[2] = 2250;
	CHECK_EQ(steer(w, dev, b, q, 4, 0), 0);
	CHECK_EQ(steer(w, dev, b, q, 4, 2), 0);
	/* the lowest device wins, and all its paths are offered */
	b[0] = b[1] = 9000;	/* 17.5 */
	b[2] = 5000;		/* 21.7 */
	b[3] = 0;		/* 15 */
	CHECK_EQ(steer(w, dev, b, q, 4, 2), 0x8);
	b[3] = 5000;		/* 65 */
	CHECK_EQ(steer(w, dev, b, q, 4, 3), 0x3);
	/*
	 * an empty queue is not free: behind a weight of 1 it counts
	 * 1500 per unit, more than device 7's 12.5 ...
	 */
	b[0] = b[1] = 6000;
	w[3] = 1;
	b[3] = 0;
	CHECK_EQ(steer(w, dev, b, q, 4, 0), 0);
	/* ... but less than queues that are long for their weight */
	b[0] = b[1] = 1000000;	/* 1669 */
	b[2] = 500000;		/* 1672 */
	CHECK_EQ(steer(w, dev, b, q, 4, 0), 0x8);
	/* a device whose paths weigh nothing never gets a packet */
	w[3] = 0;
	CHECK_EQ(steer(w, dev, b, q, 4, 0), 0);
}

UNIT_TEST(steer_respects_reported_delay)
{
	u32 w[3] = { 500, 400, 100 };
	u32 dev[3] = { 1, 2, 3 };
	u32 b[3] = { 90000, 0, 0 };
	u32 q[3] = { 20000, 20001, 20000 };

	/* path 1 idles here but reports a longer queue than path 0: its
	 * bottleneck is further along; path 2 qualifies */
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0x4);
	q[2] = 30000;
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0);
	q[1] = 100;
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0x2);
	/* paths of the chosen device with a higher delay are left out */
	dev[2] = 2;
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0x2);
	q[2] = 0;
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0x6);
}

/* Two devices, each with a path to each of two far ends (natdown). */
UNIT_TEST(steer_keeps_far_end)
{
	u32 w[4] = { 350, 150, 350, 150 };
	u32 dev[4] = { 1, 1, 2, 2 };
	u32 far[4] = { 7, 9, 7, 9 };
	u32 b[4] = { 9000, 9000, 1000, 1000 };
	u32 q[4] = { 10000, 30000, 10000, 29000 };

	/*
	 * off device 1: to the same far end on device 2, although the
	 * path to the other one reports less delay
	 */
	CHECK_EQ(steer_far(w, dev, far, b, q, 4, 1), 0x8);
	CHECK_EQ(steer_far(w, dev, far, b, q, 4, 0), 0x4);
	/* the one to the same far end reports more delay: stay */
	q[3] = 31000;
	CHECK_EQ(steer_far(w, dev, far, b, q, 4, 1), 0);
	/*
	 * all far ends different (one path a device, twolink): as before,
	 * any path of the other device with no more delay
	 */
	CHECK_EQ(steer(w, dev, b, q, 4, 1), 0x4);
	/* device 2 has no path to far end 9: any of its paths then */
	far[3] = 8;
	CHECK_EQ(steer_far(w, dev, far, b, q, 4, 1), 0x4);
}

UNIT_TEST(steer_unknown_and_edges)
{
	u32 w[3] = { 500, 500, 500 };
	u32 dev[3] = { 1, 2, 3 };
	u32 b[3] = { UNK, 0, 0 };
	u32 q[3] = { 0, 0, 0 };

	/* the pick's own queue unknown: keep it */
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0);
	/* unknown queues are never alternatives */
	b[0] = 5000;
	b[1] = UNK;
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0x4);
	b[2] = UNK;
	CHECK_EQ(steer(w, dev, b, q, 3, 0), 0);
	/* @pick out of range, no paths, paths past @n */
	b[1] = b[2] = 0;
	CHECK_EQ(steer(w, dev, b, q, 3, 3), 0);
	CHECK_EQ(steer(w, dev, b, q, 3, MPIP_PATH_NONE), 0);
	CHECK_EQ(steer(w, dev, b, q, 0, 0), 0);
	CHECK_EQ(steer(w, dev, b, q, 1, 0), 0);
	CHECK_EQ(steer(w, dev, b, q, 2, 0), 0x2);
	/* largest values: no overflow in the comparison */
	b[0] = UNK - 1;
	b[1] = UNK - 2;
	w[0] = w[1] = 0xffffffff;
	CHECK_EQ(steer(w, dev, b, q, 2, 0), 0x2);
	CHECK_EQ(steer(w, dev, b, q, 2, 1), 0);
}

/* Against a model: the mask is one device, the one of least backlog (plus
 * a packet of 1500 B) per unit of weight among the pick's and the
 * qualifying ones; none if nothing is queued at the pick. */
UNIT_TEST(steer_matches_model)
{
	u32 w[8], dev[8], far[8], b[8], q[8];
	unsigned int t, i, n, pick;

	for (t = 0; t < 50000; t++) {
		double dw[8] = { 0 }, score, best;
		u32 mask, want = 0, alt[4];
		int bd;

		n = 1 + unit_below(ctx, 8);
		for (i = 0; i < n; i++) {
			w[i] = unit_below(ctx, 5) ? 1 + unit_below(ctx, 1000) : 0;
			dev[i] = unit_below(ctx, 4);
			far[i] = unit_below(ctx, 3);
			q[i] = unit_below(ctx, 3) * 1000;
		}
		for (i = 0; i < n; i++) {
			b[i] = unit_below(ctx, 6) ? unit_below(ctx, 4) * 1500 :
						    UNK;
			dw[dev[i]] += w[i];
		}
		/* one device, one backlog */
		for (i = 0; i < n; i++) {
			unsigned int j;

			for (j = 0; j < i; j++)
				if (dev[j] == dev[i])
					b[i] = b[j];
		}
		pick = unit_below(ctx, n);
		if (!w[pick])
			continue;
		mask = steer_far(w, dev, far, b, q, n, pick);
		/*
		 * each device's alternatives: its paths to the pick's far
		 * end if it has any, else all; with no more delay
		 */
		memset(alt, 0, sizeof(alt));
		for (i = 0; i < n; i++)
			if (far[i] == far[pick])
				alt[dev[i]] |= 1U << i;
		for (bd = 0; bd < 4; bd++) {
			u32 all = 0, lowq = 0;

			for (i = 0; i < n; i++) {
				if ((int)dev[i] != bd)
					continue;
				all |= 1U << i;
				if (q[i] <= q[pick])
					lowq |= 1U << i;
			}
			alt[bd] = (alt[bd] ? alt[bd] : all) & lowq;
		}
		if (b[pick] != UNK && b[pick]) {
			bd = (int)dev[pick];
			best = (b[pick] + 1500.0) / dw[bd];
			for (i = 0; i < n; i++) {
				if (b[i] == UNK || !alt[dev[i]] || !dw[dev[i]] ||
				    dev[i] == dev[pick])
					continue;
				score = (b[i] + 1500.0) / dw[dev[i]];
				if (score < best) {
					best = score;
					bd = (int)dev[i];
				}
			}
			if (bd != (int)dev[pick])
				want = alt[bd];
		}
		if (!CHECK_EQ_MSG(mask, want, "t %u n %u pick %u", t, n, pick))
			return;
	}
}

/* ---- responsiveness first ---------------------------------------------- */

/* Four paths' delays on a clock offset by @off: 30, 10, 11.5 and 5 ms. */
static void four_delays(u32 *d, u32 off)
{
	d[0] = off + 30000;
	d[1] = off + 10000;
	d[2] = off + 11500;
	d[3] = off + 5000;
}

/* a segment sent again: the highest measured delay, wrap-safe */
UNIT_TEST(max_delay_index_measured_only)
{
	u32 d[4] = { 0 };
	unsigned int o;

	CHECK_EQ(mpip_max_delay_index(d, 0, 0), MPIP_PATH_NONE);
	CHECK_EQ(mpip_max_delay_index(d, 0, 4), MPIP_PATH_NONE);
	for (o = 0; o < ARRAY_LEN(offsets); o++) {
		u32 off = offsets[o];

		four_delays(d, off);
		CHECK_EQ_MSG(mpip_max_delay_index(d, 0xf, 4), 0, "off 0x%x", off);
		/* path 0 has no measured delay: not compared */
		CHECK_EQ_MSG(mpip_max_delay_index(d, 0xe, 4), 2, "off 0x%x", off);
		CHECK_EQ_MSG(mpip_max_delay_index(d, 0x8, 4), 3, "off 0x%x", off);
		/* bits beyond @n count for nothing */
		CHECK_EQ_MSG(mpip_max_delay_index(d, 0xe, 2), 1, "off 0x%x", off);
		/* ties: the lowest index */
		d[3] = d[2];
		CHECK_EQ_MSG(mpip_max_delay_index(d, 0xc, 4), 2, "off 0x%x", off);
	}
}

UNIT_TEST(single_index_hysteresis)
{
	u32 d[4] = { 0 };
	unsigned int o;

	CHECK_EQ(mpip_single_index(d, 0, 0, MPIP_PATH_NONE, 0), MPIP_PATH_NONE);
	for (o = 0; o < ARRAY_LEN(offsets); o++) {
		u32 off = offsets[o];

		four_delays(d, off);
		/* no measured delay: the flow keeps its path, else the first */
		CHECK_EQ_MSG(mpip_single_index(d, 0, 4, 2, 2000), 2, "off 0x%x", off);
		CHECK_EQ_MSG(mpip_single_index(d, 0, 4, MPIP_PATH_NONE, 2000), 0,
			     "off 0x%x", off);
		/* a new flow takes the lowest measured delay */
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, MPIP_PATH_NONE, 2000),
			     1, "off 0x%x", off);
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 9, 2000), 1,
			     "off 0x%x", off);
		/* 1.5 ms better is within the margin: no move */
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 2, 2000), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 2, 1500), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 2, 1499), 1,
			     "off 0x%x", off);
		/* 20 ms better is not */
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 0, 2000), 1,
			     "off 0x%x", off);
		/* the current path is the best: it stays */
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 1, 0), 1,
			     "off 0x%x", off);
		/* a current path without a measured delay gives way */
		CHECK_EQ_MSG(mpip_single_index(d, 0x3, 4, 2, 2000), 1,
			     "off 0x%x", off);
		/* unmeasured paths are not compared, whatever @d holds */
		CHECK_EQ_MSG(mpip_single_index(d, 0x7, 4, 1, 2000), 1,
			     "off 0x%x", off);
		CHECK_EQ_MSG(mpip_single_index(d, 0xf, 4, 1, 2000), 3,
			     "off 0x%x", off);
		/* bits past @n are ignored */
		CHECK_EQ_MSG(mpip_single_index(d, 0xf, 3, 2, 2000), 2,
			     "off 0x%x", off);
		/* ties: the lowest index */
		d[0] = d[1];
		CHECK_EQ_MSG(mpip_single_index(d, 0x3, 4, MPIP_PATH_NONE, 0), 0,
			     "off 0x%x", off);
		CHECK_EQ_MSG(mpip_single_index(d, 0x3, 4, 1, 0), 1,
			     "off 0x%x", off);
	}
}

/* mode protected: the lowest delay, and the path that shares least with it */
UNIT_TEST(copies_index_two_apart_then_delay)
{
	/* paths: 0 eth1->B1, 1 eth1->B2, 2 eth2->B1, 3 eth2->B2 */
	const u32 link[4] = { 1, 1, 2, 2 }, raddr[4] = { 10, 20, 10, 20 };
	const u32 link3[3] = { 1, 1, 2 }, raddr3[3] = { 10, 20, 20 };
	unsigned int two[2], o;
	u32 d[4] = { 0 }, d3[3];

	CHECK_EQ(mpip_copies_index(d, 0, link, raddr, 0, 2, two), 0);
	for (o = 0; o < ARRAY_LEN(offsets); o++) {
		u32 off = offsets[o];

		d[0] = off + 40000;
		d[1] = off + 2000;
		d[2] = off + 3000;
		d[3] = off + 42000;
		/* one path: only it */
		CHECK_EQ_MSG(mpip_copies_index(d, 0x1, link, raddr, 1, 2, two), 1,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 0, "off 0x%x", off);
		/* 1 is fastest; 2 shares nothing with it, though 0 is faster */
		CHECK_EQ_MSG(mpip_copies_index(d, 0xf, link, raddr, 4, 2, two), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 1, "off 0x%x", off);
		CHECK_EQ_MSG(two[1], 2, "off 0x%x", off);
		/* 2 shares nothing with 1: chosen, measured or not */
		d[2] = off + 50000;
		d3[0] = d[0];
		d3[1] = d[1];
		d3[2] = d[3];
		CHECK_EQ_MSG(mpip_copies_index(d, 0xb, link, raddr, 4, 2, two), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 1, "off 0x%x", off);
		CHECK_EQ_MSG(two[1], 2, "off 0x%x", off);
		/* 0, 1, 3 only: 0 and 3 share one thing each with 1; 0 is faster */
		CHECK_EQ_MSG(mpip_copies_index(d3, 0x7, link3, raddr3, 3, 2, two), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 1, "off 0x%x", off);
		CHECK_EQ_MSG(two[1], 0, "off 0x%x", off);
		/* unmeasured paths rank last, whatever @d holds */
		CHECK_EQ_MSG(mpip_copies_index(d, 0x5, link, raddr, 4, 2, two), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 0, "off 0x%x", off);
		CHECK_EQ_MSG(two[1], 3, "off 0x%x", off);
		/* none measured: the first, and the first apart from it */
		CHECK_EQ_MSG(mpip_copies_index(d, 0, link, raddr, 4, 2, two), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 0, "off 0x%x", off);
		CHECK_EQ_MSG(two[1], 3, "off 0x%x", off);
		/* two paths on one link to one address: still two copies */
		CHECK_EQ_MSG(mpip_copies_index(d, 0x3, link, link, 2, 2, two), 2,
			     "off 0x%x", off);
		CHECK_EQ_MSG(two[0], 1, "off 0x%x", off);
		CHECK_EQ_MSG(two[1], 0, "off 0x%x", off);
	}
}

/* more copies: each next path shares least with all those chosen */
UNIT_TEST(copies_index_more_copies)
{
	/* paths: 0 eth1->B1, 1 eth1->B2, 2 eth2->B1, 3 eth2->B2, 4 eth3->B1 */
	const u32 link[5] = { 1, 1, 2, 2, 3 }, raddr[5] = { 10, 20, 10, 20, 10 };
	u32 d[5] = { 5000, 2000, 3000, 4000, 1000 };
	unsigned int idx[8], i;

	/* 4 fastest; 1 and 3 share nothing with it (1 faster); then 2 and 3
	 * share one thing each with 4 and 1, 0 two: 2 is faster than 3 */
	CHECK_EQ(mpip_copies_index(d, 0x1f, link, raddr, 5, 3, idx), 3);
	CHECK_EQ(idx[0], 4);
	CHECK_EQ(idx[1], 1);
	CHECK_EQ(idx[2], 2);
	/* more wanted than there are: each path once */
	CHECK_EQ(mpip_copies_index(d, 0x1f, link, raddr, 5, 8, idx), 5);
	CHECK_EQ(idx[3], 3);
	CHECK_EQ(idx[4], 0);
	for (i = 0; i < 5; i++)
		CHECK_EQ(mpip_copies_index(d, 0x1f, link, raddr, 5, i, idx), i);
	/* three paths on one link to one address: three copies anyway */
	CHECK_EQ(mpip_copies_index(d, 0x7, link, link, 3, 3, idx), 3);
	CHECK_EQ(idx[0] + idx[1] + idx[2], 0 + 1 + 2);
}

UNIT_TEST(min_delay_index)
{
	struct mpip_path_delay pd[5];
	unsigned int o;

	memset(pd, 0, sizeof(pd));
	CHECK_EQ(mpip_min_delay_index(NULL, 0), MPIP_PATH_NONE);
	CHECK_EQ(mpip_min_delay_index(pd, 5), 0);	/* no samples yet */

	for (o = 0; o < ARRAY_LEN(offsets); o++) {
		u32 off = offsets[o];

		memset(pd, 0, sizeof(pd));
		/* path 2 only: it wins over paths that have no sample */
		mpip_path_delay_sample(&pd[2], off + 30000, 0);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 2, "off 0x%x", off);
		mpip_path_delay_sample(&pd[4], off + 20000, 0);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 4, "off 0x%x", off);
		mpip_path_delay_sample(&pd[1], off + 25000, 0);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 4, "off 0x%x", off);
		/* tie: the lowest index wins */
		mpip_path_delay_sample(&pd[3], off + 20000, 0);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 3, "off 0x%x", off);
		mpip_path_delay_sample(&pd[1], off + 20000, 0);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 1, "off 0x%x", off);
		/* smoothed delay counts, not the last sample or D_min */
		mpip_path_delay_sample(&pd[2], off + 1000, 2);	/* D 22750 */
		CHECK_EQ_MSG(pd[2].d_rt, (u32)(off + 22750), "off 0x%x", off);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 1, "off 0x%x", off);
		mpip_path_delay_sample(&pd[2], off + 1000, 2);	/* D 17313 */
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 5), 2, "off 0x%x", off);
		/* a prefix of the array */
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 2), 1, "off 0x%x", off);
		CHECK_EQ_MSG(mpip_min_delay_index(pd, 1), 0, "off 0x%x", off);
	}

	/* Wrap-safe across paths: 0xfffffff0 is before 0x10. */
	memset(pd, 0, sizeof(pd));
	mpip_path_delay_sample(&pd[0], 0x00000010, 0);
	mpip_path_delay_sample(&pd[1], 0xfffffff0, 0);
	CHECK_EQ(mpip_min_delay_index(pd, 2), 1);
}

/* ---- report round trips ------------------------------------------------ */

/*
 * The clocks' offset cancels out of a report's round trip, whatever it
 * is; the first sample sets the deviation to half of it, later ones are
 * smoothed as RFC 6298 does; a sum above a minute is refused.
 */
UNIT_TEST(rtt_sum_of_one_way_delays)
{
	struct mpip_rtt r;
	unsigned int i;
	u32 off;

	for (i = 0; i < ARRAY_LEN(offsets); i++) {
		off = offsets[i];
		memset(&r, 0, sizeof(r));
		/* 300 ms out, 300 ms back: a geostationary satellite's */
		CHECK(mpip_rtt_sample(&r, 300000 + off, 300000 - off));
		CHECK(r.have);
		CHECK_EQ_MSG(r.srtt, 600000, "off 0x%x", off);
		CHECK_EQ_MSG(r.rttvar, 300000, "off 0x%x", off);
		CHECK(mpip_rtt_sample(&r, 200000 + off, 200000 - off));
		CHECK_EQ_MSG(r.rttvar, 275000, "off 0x%x", off);	/* (3 x 300 + 200) / 4 */
		CHECK_EQ_MSG(r.srtt, 575000, "off 0x%x", off);	/* (7 x 600 + 400) / 8 */
		CHECK(!mpip_rtt_sample(&r, 60000001 + off, 0 - off));
		CHECK(!mpip_rtt_sample(&r, 1000 + off, (u32)-2000 - off));
		CHECK_EQ(r.srtt, 575000);
	}
	memset(&r, 0, sizeof(r));
	CHECK(mpip_rtt_sample(&r, 60000000, 0));
	CHECK(!mpip_rtt_sample(&r, 0xffffffff, 0xffffffff));
	/* steady samples: the deviation shrinks, the mean stays */
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 100; i++)
		mpip_rtt_sample(&r, 400000, 200000);
	CHECK_EQ(r.srtt, 600000);
	CHECK(r.rttvar < 1000);
}

/*
 * The timeout: the base until a round trip is known, then the base beyond
 * the round trip and four deviations, at most 8 times the base.
 */
UNIT_TEST(rtt_timeout)
{
	struct mpip_rtt r;
	unsigned int i;

	memset(&r, 0, sizeof(r));
	CHECK_EQ(mpip_rtt_timeout(&r, 500), 500);
	mpip_rtt_sample(&r, 1000, 1000);	/* a LAN's 2 ms */
	CHECK_EQ(mpip_rtt_timeout(&r, 500), 506);
	memset(&r, 0, sizeof(r));
	mpip_rtt_sample(&r, 300000, 300000);	/* 600 + 4 x 300 */
	CHECK_EQ(mpip_rtt_timeout(&r, 500), 2300);
	for (i = 0; i < 100; i++)
		mpip_rtt_sample(&r, 300000, 300000);
	CHECK_EQ(mpip_rtt_timeout(&r, 500), 1100);
	CHECK_EQ(mpip_rtt_timeout(&r, 50), 400);	/* capped */
	/* no overflow at the top of the ranges */
	r.srtt = 0xffffffff;
	r.rttvar = 0xffffffff;
	CHECK_EQ(mpip_rtt_timeout(&r, 60000), 480000);
	CHECK_EQ(mpip_rtt_timeout(&r, 0xffffffff), 0xffffffff);
}

/*
 * mpip_weights_tie_round(): queueing delays within the band tie; then the
 * minimum delays (over the lowest, wrap-safe, differences under the band
 * counting as none) decide; otherwise it leaves the round to Algorithm 1.
 * One round from 500/300/200, S = 10.
 */
UNIT_TEST(weights_tie_round_table)
{
	static const struct {
		u32 raw[3], dmin[3], band;
		unsigned int n;
		bool tie;
		u32 w[3];
	} tab[] = {
		/* no queue to speak of: the 30 ms longer path loses */
		{ { 1200, 0, 0 }, { 50000, 80000, 0 }, 2000, 2, true,
		  { 510, 290, 200 } },
		/* order does not matter */
		{ { 0, 1999, 0 }, { 80000, 50000, 0 }, 2000, 2, true,
		  { 490, 310, 200 } },
		/* 30 ms apart, the band widens to 10 ms: a tie below it */
		{ { 0, 9999, 0 }, { 50000, 80000, 0 }, 2000, 2, true,
		  { 510, 290, 200 } },
		/* the queues differ by the widened band: Algorithm 1's round */
		{ { 0, 10000, 0 }, { 50000, 80000, 0 }, 2000, 2, false,
		  { 500, 300, 200 } },
		/* 5 ms apart: widened to 5 ms, not more */
		{ { 4999, 0, 0 }, { 50000, 55000, 0 }, 2000, 2, true,
		  { 510, 290, 200 } },
		{ { 5000, 0, 0 }, { 50000, 55000, 0 }, 2000, 2, false,
		  { 500, 300, 200 } },
		/* fixed delays alike: the band as configured */
		{ { 0, 2000, 0 }, { 50000, 51000, 0 }, 2000, 2, false,
		  { 500, 300, 200 } },
		/* band 0: never */
		{ { 0, 0, 0 }, { 50000, 80000, 0 }, 0, 2, false,
		  { 500, 300, 200 } },
		/* one path: never */
		{ { 0, 0, 0 }, { 50000, 0, 0 }, 2000, 1, false,
		  { 500, 300, 200 } },
		/* fixed delays within the band are alike; path 2 is longer */
		{ { 500, 0, 1500 }, { 50000, 51999, 52000 }, 2000, 3, true,
		  { 510, 310, 190 } },
		/* the clocks' offset wraps: 0xfffffff0 is before 20000 */
		{ { 0, 0, 0 }, { 20000, 0xfffffff0, 0xfffffff8 }, 2000, 3, true,
		  { 490, 310, 210 } },
		/* alike and no queue: towards 333 each */
		{ { 1999, 0, 1000 }, { 10, 20, 1500 }, 2000, 3, true,
		  { 490, 310, 210 } },
		/* alike but queueing alike (a full flow's balance): stay */
		{ { 9000, 8000, 9500 }, { 10, 20, 1500 }, 2000, 3, true,
		  { 500, 300, 200 } },
	};
	unsigned int t, i;

	for (t = 0; t < ARRAY_LEN(tab); t++) {
		u32 w[3] = { 500, 300, 200 };

		CHECK_EQ_MSG(mpip_weights_tie_round(tab[t].raw, tab[t].dmin, w,
						    tab[t].n, tab[t].band, 10,
						    1000),
			     tab[t].tie, "row %u", t);
		for (i = 0; i < 3; i++)
			CHECK_EQ_MSG(w[i], tab[t].w[i], "row %u path %u", t, i);
	}
}

/* A small deterministic generator for the jitter below. */
static u32 ties_rand(u32 *s)
{
	*s = *s * 1103515245U + 12345U;
	return *s >> 8;
}

/*
 * @rounds of Algorithm 1 over two paths with fixed delays @d0 and @d1 and
 * no queue, only jitter of 0-1.5 ms in the measured queueing delays (the
 * trend and the boost left out), S = 10, the tie step growing to 80 as
 * with weight_boost 3, normalised to 1000 as the module does; @band as
 * weight_tie_us.  Starts from path 0 at @w0.  Returns path
 * 0's weight; *@lo and *@hi: the lowest and highest it had.
 */
static u32 ties_walk(u32 seed, u32 d0, u32 d1, u32 band, u32 w0,
		     unsigned int rounds, u32 *lo, u32 *hi)
{
	const u32 dmin[2] = { d0, d1 };
	u32 w[2] = { w0, 1000 - w0 }, raw[2], step;
	unsigned int r;
	u8 idle = 0;

	*lo = *hi = w[0];
	for (r = 0; r < rounds; r++) {
		raw[0] = ties_rand(&seed) % 1500;
		raw[1] = ties_rand(&seed) % 1500;
		step = mpip_weights_tie_step(&idle, raw[0] < band &&
					     raw[1] < band, 10, 3);
		if (!mpip_weights_tie_round(raw, dmin, w, 2, band, step, 1000))
			mpip_weights_adjust(raw, w, 2, 10);
		mpip_weights_normalize(w, 2, 1000);
		if (w[0] < *lo)
			*lo = w[0];
		if (w[0] > *hi)
			*hi = w[0];
	}
	return w[0];
}

/*
 * What the ties are for.  Without them (band 0) jitter alone walks a
 * light flow's weights: over 50 and 80 ms paths, after 60 s of rounds
 * the longer path carries most of the flow in some of the seeds; over
 * equal paths the weights stray far from even.  With the default band
 * the flow is on the 50 ms path alone (the other parked) within 1.5 s
 * in every seed, equal paths stay even, and equal paths that a change
 * left at 999:1 are even again within 1.5 s.
 */
UNIT_TEST(weights_ties_light_flow)
{
	unsigned int seed, long_wins = 0, strayed = 0;
	u32 w0, lo, hi;

	for (seed = 1; seed <= 200; seed++) {
		w0 = ties_walk(seed, 50000, 80000, 0, 500, 600, &lo, &hi);
		long_wins += w0 < 500;
		w0 = ties_walk(seed, 50000, 50000, 0, 500, 600, &lo, &hi);
		strayed += lo < 300 || hi > 700;

		w0 = ties_walk(seed, 50000, 80000, 2000, 500, 15, &lo, &hi);
		CHECK_MSG(w0 == MPIP_WEIGHT_MAX,
			  "seed %u: short path at %u, not alone", seed, w0);
		w0 = ties_walk(seed, 50000, 50000, 2000, 500, 600, &lo, &hi);
		CHECK_MSG(lo == 500 && hi == 500,
			  "seed %u: equal paths strayed to %u-%u", seed, lo, hi);
		w0 = ties_walk(seed, 50000, 50000, 2000, 999, 15, &lo, &hi);
		CHECK_MSG(w0 == 500, "seed %u: 999:1 became %u", seed, w0);
	}
	CHECK_MSG(long_wins >= 20, "band 0: longer path won %u of 200",
		  long_wins);
	CHECK_MSG(strayed >= 20, "band 0: equal paths strayed in %u of 200",
		  strayed);
}

/*
 * @rounds of a light flow over two paths, path 1 @d1 us longer and idle
 * (no reports: no queue), path 0's queueing delay jittering over
 * 0..@jitter us, as the module runs them (S = 10, weight_boost 3, band
 * 2 ms).  Returns the highest weight path 1 had after round 100.
 */
static u32 ties_spikes(u32 seed, u32 d1, u32 jitter, unsigned int rounds)
{
	const u32 dmin[2] = { 50000, 50000 + d1 };
	u32 w[2] = { 500, 500 }, raw[2] = { 0, 0 }, step, hi = 0;
	unsigned int r;
	u8 idle = 0;

	for (r = 0; r < rounds; r++) {
		raw[0] = ties_rand(&seed) % jitter;
		step = mpip_weights_tie_step(&idle, raw[0] < 2000, 10, 3);
		if (!mpip_weights_tie_round(raw, dmin, w, 2, 2000, step, 1000))
			mpip_weights_adjust(raw, w, 2, 10);
		mpip_weights_normalize(w, 2, 1000);
		if (r >= 100 && w[1] > hi)
			hi = w[1];
	}
	return hi;
}

/*
 * The band widens with the paths' fixed delays: jitter of up to 8 ms on
 * the short path of a light flow never gives any of it to a path 30 ms
 * longer, which stays parked.  A path only 3 ms longer gets the band of
 * 3 ms, and such jitter then gives it a share now and then (Algorithm 1
 * takes a queue of more than 3 ms for one).
 */
UNIT_TEST(weights_ties_band_widens)
{
	unsigned int seed, strays = 0;

	for (seed = 1; seed <= 200; seed++) {
		CHECK_EQ_MSG(ties_spikes(seed, 30000, 8000, 600), 0,
			     "seed %u", seed);
		strays += ties_spikes(seed, 3000, 8000, 600) > 0;
	}
	CHECK_MSG(strays >= 100, "3 ms apart: strayed in %u of 200", strays);
}

/*
 * The ties park a longer path (weight 0): no packet is drawn for it, and
 * it stays parked through the normalisation and further tie rounds.  A
 * round of Algorithm 1 unparks it: S if it gains, else the minimum.
 */
UNIT_TEST(weights_ties_park)
{
	const u32 none[2] = { 0, 0 }, dmin[2] = { 50000, 80000 };
	const u32 q_short[2] = { 5000, 0 }, q_long[2] = { 0, 5000 };
	u32 w[2] = { 990, 10 }, a[2], r;
	unsigned int i;

	CHECK(mpip_weights_tie_round(none, dmin, w, 2, 2000, 10, 1000));
	mpip_weights_normalize(w, 2, 1000);
	CHECK_EQ(w[0], MPIP_WEIGHT_MAX);
	CHECK_EQ(w[1], MPIP_WEIGHT_PARKED);
	CHECK(mpip_weights_tie_round(none, dmin, w, 2, 2000, 80, 1000));
	mpip_weights_normalize(w, 2, 1000);
	CHECK_EQ(w[1], MPIP_WEIGHT_PARKED);
	for (i = 0; i < 4096; i++) {
		r = i * 0x100001U + (i >> 4);
		CHECK_EQ_MSG(mpip_weights_pick(w, 2, r), 0, "rnd %#x", r);
	}
	CHECK_EQ(mpip_weights_pick(w, 2, 0xffffffff), 0);
	CHECK_EQ(mpip_weights_pick_mask(w, 2, 2, 0), MPIP_PATH_NONE);

	/* the short path queues: the parked one gains S */
	memcpy(a, w, sizeof(a));
	mpip_weights_adjust(q_short, a, 2, 10);
	mpip_weights_normalize(a, 2, 1000);
	CHECK_EQ(a[1], 10);
	/* the parked one is the one that queues: back to the minimum */
	memcpy(a, w, sizeof(a));
	mpip_weights_adjust(q_long, a, 2, 10);
	CHECK_EQ(a[1], MPIP_WEIGHT_MIN);
}

/*
 * A flow that fills the shorter path makes it queue: past the band the
 * paper's comparison is back (the caller's), and nothing is moved here.
 */
UNIT_TEST(weights_ties_queue_wins)
{
	const u32 raw[2] = { 12000, 1000 }, dmin[2] = { 50000, 80000 };
	u32 w[2] = { 900, 100 };

	CHECK(!mpip_weights_tie_round(raw, dmin, w, 2, 2000, 10, 1000));
	CHECK_EQ(w[0], 900);
	CHECK_EQ(w[1], 100);
	mpip_weights_adjust(raw, w, 2, 10);
	mpip_weights_normalize(w, 2, 1000);
	CHECK_EQ(w[0], 890);
	CHECK_EQ(w[1], 110);
}

/*
 * The tie step: S in the first idle round, doubling in each idle round
 * in a row up to S << max_shift, back to S (and the count to 0) in a
 * round with a queue; the count saturates.
 */
UNIT_TEST(weights_tie_step)
{
	static const u32 want[] = { 10, 20, 40, 80, 80, 80 };
	unsigned int i;
	u8 idle = 0;

	for (i = 0; i < ARRAY_LEN(want); i++)
		CHECK_EQ_MSG(mpip_weights_tie_step(&idle, true, 10, 3), want[i],
			     "round %u", i);
	CHECK_EQ(mpip_weights_tie_step(&idle, false, 10, 3), 10);
	CHECK_EQ(idle, 0);
	CHECK_EQ(mpip_weights_tie_step(&idle, true, 10, 3), 10);
	CHECK_EQ(mpip_weights_tie_step(&idle, true, 10, 0), 10);
	CHECK_EQ(mpip_weights_tie_step(&idle, true, 10, 3), 40);
	idle = 254;
	mpip_weights_tie_step(&idle, true, 10, 3);
	mpip_weights_tie_step(&idle, true, 10, 3);
	CHECK_EQ(idle, 255);
	CHECK_EQ(mpip_weights_tie_step(&idle, true, 600, 8), 1000);
}
