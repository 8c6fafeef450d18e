/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal KTAP test harness for the mpip host unit tests.
 *
 * A test file defines cases with UNIT_TEST(name) { ... } and asserts with
 * CHECK(cond) and CHECK_EQ(a, b); both evaluate to 1 when they hold, so a
 * case can stop early with "if (!CHECK(...)) return;".  unit_main.c runs
 * every registered case in file/line order and prints KTAP, ending with
 * "unit: N passed, N failed".
 */
#ifndef MPIP_UNIT_KTAP_H
#define MPIP_UNIT_KTAP_H

#include <stdint.h>
#include <stddef.h>

struct unit_ctx {
	const char *name;
	unsigned long failures;
	uint64_t rng;
};

typedef void (*unit_fn)(struct unit_ctx *ctx);

void unit_register(const char *name, const char *file, int line, unit_fn fn);
void unit_fail(struct unit_ctx *ctx, const char *file, int line,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void unit_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Deterministic PRNG (xorshift64*), seeded per case from its name. */
uint64_t unit_rand64(struct unit_ctx *ctx);
uint32_t unit_rand32(struct unit_ctx *ctx);
/* Uniform-ish in [0, n); n > 0. */
uint32_t unit_below(struct unit_ctx *ctx, uint32_t n);
void unit_fill(struct unit_ctx *ctx, void *buf, size_t len);

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define UNIT_TEST(fn)							\
	static void fn(struct unit_ctx *ctx);				\
	__attribute__((constructor)) static void fn##_register(void)	\
	{								\
		unit_register(#fn, __FILE__, __LINE__, fn);		\
	}								\
	static void fn(struct unit_ctx *ctx)

#define CHECK(cond)							\
	({								\
		int ok_ = !!(cond);					\
		if (!ok_)						\
			unit_fail(ctx, __FILE__, __LINE__, "%s", #cond);\
		ok_;							\
	})

#define CHECK_EQ(a, b)							\
	({								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		int ok_ = a_ == b_;					\
		if (!ok_)						\
			unit_fail(ctx, __FILE__, __LINE__,		\
				  "%s == %s: %lld (0x%llx) != %lld (0x%llx)", \
				  #a, #b, a_, (unsigned long long)a_,	\
				  b_, (unsigned long long)b_);		\
		ok_;							\
	})

/* Like CHECK, with a printf-style note to tell iterations apart. */
#define CHECK_MSG(cond, fmt, ...)					\
	({								\
		int ok_ = !!(cond);					\
		if (!ok_)						\
			unit_fail(ctx, __FILE__, __LINE__, "%s; " fmt,	\
				  #cond, ##__VA_ARGS__);		\
		ok_;							\
	})

/* Like CHECK_EQ, with a printf-style note to tell iterations apart. */
#define CHECK_EQ_MSG(a, b, fmt, ...)					\
	({								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		int ok_ = a_ == b_;					\
		if (!ok_)						\
			unit_fail(ctx, __FILE__, __LINE__,		\
				  "%s == %s: %lld != %lld; " fmt,	\
				  #a, #b, a_, b_, ##__VA_ARGS__);	\
		ok_;							\
	})

#endif /* MPIP_UNIT_KTAP_H */
