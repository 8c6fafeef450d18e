// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/auth.c: SipHash-2-4 against the
 * reference vectors, and the replay window with the counter's high half
 * inferred from it (duplicates, the window's edge, big jumps, no
 * wraparound, a model run with random arrivals).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "ktap.h"

#define W	MPIP_REPLAY_WINDOW

/* The key of the SipHash paper's test vectors: bytes 00 01 .. 0f. */
static const struct mpip_auth_key ref_key = {
	0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL,
};

/*
 * SipHash-2-4 of the messages (empty), 00, 00 01, ..., 00 .. 3e under
 * ref_key: vectors_sip64 of the reference implementation (vectors.h),
 * each output as its 8 little-endian bytes.
 */
static const u8 sip_ref[64][8] = {
	{ 0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72 },
	{ 0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74 },
	{ 0x5a, 0x4f, 0xa9, 0xd9, 0x09, 0x80, 0x6c, 0x0d },
	{ 0x2d, 0x7e, 0xfb, 0xd7, 0x96, 0x66, 0x67, 0x85 },
	{ 0xb7, 0x87, 0x71, 0x27, 0xe0, 0x94, 0x27, 0xcf },
	{ 0x8d, 0xa6, 0x99, 0xcd, 0x64, 0x55, 0x76, 0x18 },
	{ 0xce, 0xe3, 0xfe, 0x58, 0x6e, 0x46, 0xc9, 0xcb },
	{ 0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab },
	{ 0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93 },
	{ 0xb0, 0xe4, 0xa9, 0x0b, 0xdf, 0x82, 0x00, 0x9e },
	{ 0xf3, 0xb9, 0xdd, 0x94, 0xc5, 0xbb, 0x5d, 0x7a },
	{ 0xa7, 0xad, 0x6b, 0x22, 0x46, 0x2f, 0xb3, 0xf4 },
	{ 0xfb, 0xe5, 0x0e, 0x86, 0xbc, 0x8f, 0x1e, 0x75 },
	{ 0x90, 0x3d, 0x84, 0xc0, 0x27, 0x56, 0xea, 0x14 },
	{ 0xee, 0xf2, 0x7a, 0x8e, 0x90, 0xca, 0x23, 0xf7 },
	{ 0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1 },
	{ 0xdb, 0x9b, 0xc2, 0x57, 0x7f, 0xcc, 0x2a, 0x3f },
	{ 0x94, 0x47, 0xbe, 0x2c, 0xf5, 0xe9, 0x9a, 0x69 },
	{ 0x9c, 0xd3, 0x8d, 0x96, 0xf0, 0xb3, 0xc1, 0x4b },
	{ 0xbd, 0x61, 0x79, 0xa7, 0x1d, 0xc9, 0x6d, 0xbb },
	{ 0x98, 0xee, 0xa2, 0x1a, 0xf2, 0x5c, 0xd6, 0xbe },
	{ 0xc7, 0x67, 0x3b, 0x2e, 0xb0, 0xcb, 0xf2, 0xd0 },
	{ 0x88, 0x3e, 0xa3, 0xe3, 0x95, 0x67, 0x53, 0x93 },
	{ 0xc8, 0xce, 0x5c, 0xcd, 0x8c, 0x03, 0x0c, 0xa8 },
	{ 0x94, 0xaf, 0x49, 0xf6, 0xc6, 0x50, 0xad, 0xb8 },
	{ 0xea, 0xb8, 0x85, 0x8a, 0xde, 0x92, 0xe1, 0xbc },
	{ 0xf3, 0x15, 0xbb, 0x5b, 0xb8, 0x35, 0xd8, 0x17 },
	{ 0xad, 0xcf, 0x6b, 0x07, 0x63, 0x61, 0x2e, 0x2f },
	{ 0xa5, 0xc9, 0x1d, 0xa7, 0xac, 0xaa, 0x4d, 0xde },
	{ 0x71, 0x65, 0x95, 0x87, 0x66, 0x50, 0xa2, 0xa6 },
	{ 0x28, 0xef, 0x49, 0x5c, 0x53, 0xa3, 0x87, 0xad },
	{ 0x42, 0xc3, 0x41, 0xd8, 0xfa, 0x92, 0xd8, 0x32 },
	{ 0xce, 0x7c, 0xf2, 0x72, 0x2f, 0x51, 0x27, 0x71 },
	{ 0xe3, 0x78, 0x59, 0xf9, 0x46, 0x23, 0xf3, 0xa7 },
	{ 0x38, 0x12, 0x05, 0xbb, 0x1a, 0xb0, 0xe0, 0x12 },
	{ 0xae, 0x97, 0xa1, 0x0f, 0xd4, 0x34, 0xe0, 0x15 },
	{ 0xb4, 0xa3, 0x15, 0x08, 0xbe, 0xff, 0x4d, 0x31 },
	{ 0x81, 0x39, 0x62, 0x29, 0xf0, 0x90, 0x79, 0x02 },
	{ 0x4d, 0x0c, 0xf4, 0x9e, 0xe5, 0xd4, 0xdc, 0xca },
	{ 0x5c, 0x73, 0x33, 0x6a, 0x76, 0xd8, 0xbf, 0x9a },
	{ 0xd0, 0xa7, 0x04, 0x53, 0x6b, 0xa9, 0x3e, 0x0e },
	{ 0x92, 0x59, 0x58, 0xfc, 0xd6, 0x42, 0x0c, 0xad },
	{ 0xa9, 0x15, 0xc2, 0x9b, 0xc8, 0x06, 0x73, 0x18 },
	{ 0x95, 0x2b, 0x79, 0xf3, 0xbc, 0x0a, 0xa6, 0xd4 },
	{ 0xf2, 0x1d, 0xf2, 0xe4, 0x1d, 0x45, 0x35, 0xf9 },
	{ 0x87, 0x57, 0x75, 0x19, 0x04, 0x8f, 0x53, 0xa9 },
	{ 0x10, 0xa5, 0x6c, 0xf5, 0xdf, 0xcd, 0x9a, 0xdb },
	{ 0xeb, 0x75, 0x09, 0x5c, 0xcd, 0x98, 0x6c, 0xd0 },
	{ 0x51, 0xa9, 0xcb, 0x9e, 0xcb, 0xa3, 0x12, 0xe6 },
	{ 0x96, 0xaf, 0xad, 0xfc, 0x2c, 0xe6, 0x66, 0xc7 },
	{ 0x72, 0xfe, 0x52, 0x97, 0x5a, 0x43, 0x64, 0xee },
	{ 0x5a, 0x16, 0x45, 0xb2, 0x76, 0xd5, 0x92, 0xa1 },
	{ 0xb2, 0x74, 0xcb, 0x8e, 0xbf, 0x87, 0x87, 0x0a },
	{ 0x6f, 0x9b, 0xb4, 0x20, 0x3d, 0xe7, 0xb3, 0x81 },
	{ 0xea, 0xec, 0xb2, 0xa3, 0x0b, 0x22, 0xa8, 0x7f },
	{ 0x99, 0x24, 0xa4, 0x3c, 0xc1, 0x31, 0x57, 0x24 },
	{ 0xbd, 0x83, 0x8d, 0x3a, 0xaf, 0xbf, 0x8d, 0xb7 },
	{ 0x0b, 0x1a, 0x2a, 0x32, 0x65, 0xd5, 0x1a, 0xea },
	{ 0x13, 0x50, 0x79, 0xa3, 0x23, 0x1c, 0xe6, 0x60 },
	{ 0x93, 0x2b, 0x28, 0x46, 0xe4, 0xd7, 0x06, 0x66 },
	{ 0xe1, 0x91, 0x5f, 0x5c, 0xb1, 0xec, 0xa4, 0x6c },
	{ 0xf3, 0x25, 0x96, 0x5c, 0xa1, 0x6d, 0x62, 0x9f },
	{ 0x57, 0x5f, 0xf2, 0x8e, 0x60, 0x38, 0x1b, 0xe5 },
	{ 0x72, 0x45, 0x06, 0xeb, 0x4c, 0x32, 0x8a, 0x95 },
};

static void le64(u64 v, u8 *out)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		out[i] = (u8)(v >> (8 * i));
}

UNIT_TEST(auth_siphash_reference_vectors)
{
	u8 msg[64], buf[64 + 8], key[16], out[8];
	unsigned int i, off;
	u64 k0 = 0, k1 = 0;

	/* the key as the paper writes it, bytes read little-endian */
	for (i = 0; i < 16; i++)
		key[i] = (u8)i;
	for (i = 0; i < 8; i++) {
		k0 |= (u64)key[i] << (8 * i);
		k1 |= (u64)key[8 + i] << (8 * i);
	}
	CHECK_EQ(k0, ref_key.k0);
	CHECK_EQ(k1, ref_key.k1);

	for (i = 0; i < 64; i++)
		msg[i] = (u8)i;
	for (i = 0; i < 64; i++) {
		le64(mpip_siphash(msg, i, k0, k1), out);
		CHECK_EQ_MSG(memcmp(out, sip_ref[i], 8), 0, "length %u", i);
		/* the same at every alignment */
		for (off = 1; off < 8; off++) {
			memcpy(buf + off, msg, i);
			le64(mpip_siphash(buf + off, i, k0, k1), out);
			CHECK_EQ_MSG(memcmp(out, sip_ref[i], 8), 0,
				     "length %u offset %u", i, off);
		}
	}
}

static int window_is_initial(const struct mpip_replay *win)
{
	struct mpip_replay zero;

	mpip_replay_init(&zero);
	return !memcmp(win, &zero, sizeof(zero));
}

UNIT_TEST(replay_fresh_and_duplicates)
{
	struct mpip_replay win;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_check(&win, 1), 0);
	CHECK_EQ(mpip_replay_commit(&win, 1), 0);
	CHECK_EQ(mpip_replay_check(&win, 1), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, 1), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, 3), 0);
	CHECK_EQ(mpip_replay_commit(&win, 2), 0);
	CHECK_EQ(mpip_replay_commit(&win, 2), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, 3), MPIP_AUTH_E_DUP);
	CHECK_EQ(win.top, 3);
	/* a check alone changes nothing */
	CHECK_EQ(mpip_replay_check(&win, 4), 0);
	CHECK_EQ(mpip_replay_check(&win, 4), 0);
	CHECK_EQ(win.top, 3);
}

UNIT_TEST(replay_zero_never_accepted)
{
	struct mpip_replay win;
	u64 ctr = 12345;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_check(&win, 0), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_commit(&win, 0), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_infer(&win, 0, &ctr), MPIP_AUTH_E_OLD);
	CHECK(window_is_initial(&win));
}

UNIT_TEST(replay_window_edge)
{
	struct mpip_replay win;
	const u64 top = 100000;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, top), 0);
	CHECK_EQ(mpip_replay_check(&win, top - (W - 1)), 0);
	CHECK_EQ(mpip_replay_check(&win, top - W), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_commit(&win, top - W), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_commit(&win, top - (W - 1)), 0);
	CHECK_EQ(mpip_replay_commit(&win, top - (W - 1)), MPIP_AUTH_E_DUP);
	/* one step up pushes the oldest out */
	CHECK_EQ(mpip_replay_commit(&win, top + 1), 0);
	CHECK_EQ(mpip_replay_check(&win, top - (W - 1)), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_check(&win, top - (W - 2)), 0);
	/* a window that has not filled up yet: everything from 1 on */
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, W / 2), 0);
	CHECK_EQ(mpip_replay_commit(&win, 1), 0);
	CHECK_EQ(mpip_replay_commit(&win, 1), MPIP_AUTH_E_DUP);
}

/* Every counter of the window arrives, in a random order, then again. */
UNIT_TEST(replay_reorder_within_window)
{
	static u64 order[W];
	struct mpip_replay win;
	const u64 top = 5000;
	unsigned int i, j;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, top), 0);
	for (i = 0; i < W - 1; i++)
		order[i] = top - 1 - i;
	for (i = W - 2; i > 0; i--) {
		u64 x;

		j = unit_below(ctx, i + 1);
		x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (i = 0; i < W - 1; i++)
		CHECK_EQ_MSG(mpip_replay_commit(&win, order[i]), 0, "%llu",
			     (unsigned long long)order[i]);
	for (i = 0; i < W - 1; i++)
		CHECK_EQ_MSG(mpip_replay_commit(&win, order[i]),
			     MPIP_AUTH_E_DUP, "%llu",
			     (unsigned long long)order[i]);
	CHECK_EQ(win.top, top);
}

/*
 * Jumps ahead: of less than the window, of exactly the ring (the same bit
 * in the same word), of more than the ring.  Counters the jump skipped
 * that are still in the window are accepted, older ones are old, and no
 * stale bit of an earlier lap of the ring reads as a duplicate.
 */
UNIT_TEST(replay_big_jumps)
{
	static const u64 jumps[] = {
		1, 63, 64, 65, W - 1, W, W + 1, 64 * MPIP_REPLAY_WORDS,
		64 * MPIP_REPLAY_WORDS + 1, 2 * 64 * MPIP_REPLAY_WORDS,
		1000000, 1ULL << 31,
	};
	struct mpip_replay win;
	unsigned int i;
	u64 top, c;

	for (i = 0; i < ARRAY_SIZE(jumps); i++) {
		mpip_replay_init(&win);
		/* a full window: every counter 1000..1000+W-1 seen */
		for (c = 1000; c < 1000 + W; c++)
			mpip_replay_commit(&win, c);
		top = win.top + jumps[i];
		if (!CHECK_EQ(mpip_replay_commit(&win, top), 0))
			continue;
		CHECK_EQ(mpip_replay_check(&win, top), MPIP_AUTH_E_DUP);
		for (c = top - (W - 1); c < top; c++) {
			int want = c < 1000 + W ? MPIP_AUTH_E_DUP : 0;

			CHECK_EQ_MSG(mpip_replay_check(&win, c), want,
				     "jump %llu counter %llu",
				     (unsigned long long)jumps[i],
				     (unsigned long long)c);
		}
		CHECK_EQ_MSG(mpip_replay_check(&win, top - W),
			     MPIP_AUTH_E_OLD, "jump %llu",
			     (unsigned long long)jumps[i]);
	}
}

/* The counter never wraps: nothing after 2^64 - 1, nothing at 0 again. */
UNIT_TEST(replay_no_wraparound)
{
	const u64 max = ~0ULL;
	struct mpip_replay win;
	u64 ctr = 0;

	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, max - 5), 0);
	CHECK_EQ(mpip_replay_infer(&win, (u32)max, &ctr), 0);
	CHECK_EQ(ctr, max);
	CHECK_EQ(mpip_replay_commit(&win, max), 0);
	CHECK_EQ(mpip_replay_commit(&win, max), MPIP_AUTH_E_DUP);
	CHECK_EQ(mpip_replay_commit(&win, max - 3), 0);
	/* low halves that would follow 2^64 - 1 */
	CHECK_EQ(mpip_replay_infer(&win, 0, &ctr), MPIP_AUTH_E_WRAP);
	CHECK_EQ(mpip_replay_infer(&win, 1, &ctr), MPIP_AUTH_E_WRAP);
	CHECK_EQ(mpip_replay_infer(&win, 0x7fffffff, &ctr), MPIP_AUTH_E_WRAP);
	/* still inside the window */
	CHECK_EQ(mpip_replay_infer(&win, (u32)(max - 10), &ctr), 0);
	CHECK_EQ(ctr, max - 10);
	CHECK_EQ(mpip_replay_check(&win, 0), MPIP_AUTH_E_OLD);
	CHECK_EQ(win.top, max);
}

UNIT_TEST(replay_infer_cases)
{
	struct mpip_replay win;
	u64 ctr = 0;

	/* fresh: low halves are taken as they are */
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_infer(&win, 1, &ctr), 0);
	CHECK_EQ(ctr, 1);
	CHECK_EQ(mpip_replay_infer(&win, 0xfffff000, &ctr), 0);
	CHECK_EQ(ctr, 0xfffff000);
	/* within W - 1 below 2^32 it would be before counter 1 */
	CHECK_EQ(mpip_replay_infer(&win, 0xffffffff, &ctr), MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_infer(&win, (u32)-(W - 1), &ctr),
		 MPIP_AUTH_E_OLD);
	CHECK_EQ(mpip_replay_infer(&win, (u32)-W, &ctr), 0);
	CHECK_EQ(ctr, 0x100000000ULL - W);

	/* window reaching back into the previous 2^32 block */
	CHECK_EQ(mpip_replay_commit(&win, 0x100000005ULL), 0);
	CHECK_EQ(mpip_replay_infer(&win, 0xfffffff0, &ctr), 0);
	CHECK_EQ(ctr, 0xfffffff0ULL);
	CHECK_EQ(mpip_replay_infer(&win, 10, &ctr), 0);
	CHECK_EQ(ctr, 0x10000000aULL);
	CHECK_EQ(mpip_replay_infer(&win, 5 - (W - 1), &ctr), 0);
	CHECK_EQ(ctr, 0x100000005ULL - (W - 1));
	CHECK_EQ(mpip_replay_infer(&win, 5 - W, &ctr), 0);
	CHECK_EQ(ctr, 0x200000005ULL - W);

	/* window within one block */
	mpip_replay_init(&win);
	CHECK_EQ(mpip_replay_commit(&win, 0x280000000ULL), 0);
	CHECK_EQ(mpip_replay_infer(&win, 0x80000000 - (W - 1), &ctr), 0);
	CHECK_EQ(ctr, 0x280000000ULL - (W - 1));
	CHECK_EQ(mpip_replay_infer(&win, 0x80000000 - W, &ctr), 0);
	CHECK_EQ(ctr, 0x380000000ULL - W);
	CHECK_EQ(mpip_replay_infer(&win, 0xffffffff, &ctr), 0);
	CHECK_EQ(ctr, 0x2ffffffffULL);
	CHECK_EQ(mpip_replay_infer(&win, 0, &ctr), 0);
	CHECK_EQ(ctr, 0x300000000ULL);
}

/*
 * The inference against its definition: the one value with the given low
 * half from the window's bottom (top - W + 1) to 2^32 - 1 above it, or an
 * error when that value is not in 1 .. 2^64 - 1.
 */
UNIT_TEST(replay_infer_model)
{
	struct mpip_replay win;
	unsigned int i;

	for (i = 0; i < 200000; i++) {
		__int128 bottom, want;
		u64 top, ctr = 0;
		u32 lo;
		int ret;

		switch (unit_below(ctx, 4)) {
		case 0:
			top = unit_below(ctx, 4 * W);
			break;
		case 1:
			top = ~0ULL - unit_below(ctx, 4 * W);
			break;
		case 2:
			top = ((u64)unit_rand32(ctx) << 32) +
			      unit_below(ctx, 2 * W) - W;
			break;
		default:
			top = unit_rand64(ctx);
		}
		lo = unit_below(ctx, 2) ? unit_rand32(ctx) :
		     (u32)top + unit_below(ctx, 4 * W) - 2 * W;
		mpip_replay_init(&win);
		win.top = top;
		bottom = (__int128)top - (W - 1);
		want = bottom + (u32)(lo - (u32)bottom);
		ret = mpip_replay_infer(&win, lo, &ctr);
		if (want < 1)
			CHECK_EQ_MSG(ret, MPIP_AUTH_E_OLD, "top 0x%llx lo 0x%x",
				     (unsigned long long)top, lo);
		else if (want > (__int128)~0ULL)
			CHECK_EQ_MSG(ret, MPIP_AUTH_E_WRAP, "top 0x%llx lo 0x%x",
				     (unsigned long long)top, lo);
		else if (CHECK_EQ_MSG(ret, 0, "top 0x%llx lo 0x%x",
				      (unsigned long long)top, lo))
			CHECK_EQ_MSG(ctr, (u64)want, "top 0x%llx lo 0x%x",
				     (unsigned long long)top, lo);
	}
}

/*
 * Random arrivals against a model that remembers every accepted counter:
 * mostly near the newest (reordering, duplicates), sometimes behind the
 * window, sometimes far ahead.  After some steps every counter of the
 * window is checked against the model too.
 */
#define MODEL_MAX	(1u << 24)

static int model_seen(const u8 *seen, u64 c)
{
	return seen[c / 8] >> (c % 8) & 1;
}

UNIT_TEST(replay_model_random)
{
	static u8 seen[MODEL_MAX / 8];
	struct mpip_replay win;
	u64 max = 0, c;
	unsigned int i;

	memset(seen, 0, sizeof(seen));
	mpip_replay_init(&win);
	for (i = 0; i < 100000 && max < MODEL_MAX - 10000; i++) {
		int want, ret;
		s64 d;

		switch (unit_below(ctx, 32)) {
		case 0:
			d = (s64)unit_below(ctx, 3000);	/* a jump ahead */
			break;
		case 1:
			d = -(s64)unit_below(ctx, 3 * W);	/* far behind */
			break;
		default:
			d = (s64)unit_below(ctx, 2 * W) - (s64)(W + W / 2);
		}
		c = (s64)max + d < 0 ? 0 : max + d;
		if (!c)
			want = MPIP_AUTH_E_OLD;
		else if (c > max)
			want = 0;
		else if (max - c >= W)
			want = MPIP_AUTH_E_OLD;
		else if (model_seen(seen, c))
			want = MPIP_AUTH_E_DUP;
		else
			want = 0;
		CHECK_EQ_MSG(mpip_replay_check(&win, c), want, "step %u c %llu",
			     i, (unsigned long long)c);
		ret = mpip_replay_commit(&win, c);
		if (!CHECK_EQ_MSG(ret, want, "step %u c %llu", i,
				  (unsigned long long)c))
			return;
		if (!ret) {
			seen[c / 8] |= (u8)(1u << (c % 8));
			if (c > max)
				max = c;
		}
		CHECK_EQ(win.top, max);
		if (i % 997)
			continue;
		for (c = max > W ? max - W + 1 : 1; c <= max; c++) {
			want = model_seen(seen, c) ? MPIP_AUTH_E_DUP : 0;
			CHECK_EQ_MSG(mpip_replay_check(&win, c), want,
				     "step %u window c %llu", i,
				     (unsigned long long)c);
		}
	}
	unit_diag("replay_model_random: %u arrivals, newest %llu", i,
		  (unsigned long long)max);
}
