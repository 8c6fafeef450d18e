// SPDX-License-Identifier: GPL-2.0
/*
 * KTAP runner for the mpip host unit tests: runs every case registered
 * with UNIT_TEST(), or only those named on the command line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"

#define UNIT_MAX_CASES	256
#define UNIT_MAX_DIAG	12	/* failure messages printed per case */

struct unit_case {
	const char *name;
	const char *file;
	int line;
	unit_fn fn;
};

static struct unit_case cases[UNIT_MAX_CASES];
static unsigned int ncases;

void unit_register(const char *name, const char *file, int line, unit_fn fn)
{
	if (ncases == UNIT_MAX_CASES) {
		fprintf(stderr, "unit: too many cases\n");
		exit(2);
	}
	cases[ncases].name = name;
	cases[ncases].file = file;
	cases[ncases].line = line;
	cases[ncases].fn = fn;
	ncases++;
}

void unit_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

void unit_fail(struct unit_ctx *ctx, const char *file, int line,
	       const char *fmt, ...)
{
	va_list ap;

	ctx->failures++;
	if (ctx->failures > UNIT_MAX_DIAG)
		return;
	printf("# %s: %s:%d: ", ctx->name, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

uint64_t unit_rand64(struct unit_ctx *ctx)
{
	uint64_t x = ctx->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ctx->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint32_t unit_rand32(struct unit_ctx *ctx)
{
	return (uint32_t)(unit_rand64(ctx) >> 32);
}

uint32_t unit_below(struct unit_ctx *ctx, uint32_t n)
{
	return (uint32_t)(((uint64_t)unit_rand32(ctx) * n) >> 32);
}

void unit_fill(struct unit_ctx *ctx, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(unit_rand64(ctx) >> 56);
}

static int case_cmp(const void *a, const void *b)
{
	const struct unit_case *x = a, *y = b;
	int r = strcmp(x->file, y->file);

	return r ? r : x->line - y->line;
}

/* FNV-1a of the case name: each case gets its own fixed seed. */
static uint64_t case_seed(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*name) {
		h ^= (unsigned char)*name++;
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

static int selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int i, n = 0, passed = 0, failed = 0;

	qsort(cases, ncases, sizeof(cases[0]), case_cmp);
	for (i = 0; i < ncases; i++)
		n += selected(cases[i].name, argc, argv);

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..%u\n", n);
	n = 0;
	for (i = 0; i < ncases; i++) {
		struct unit_ctx ctx = { .name = cases[i].name };

		if (!selected(cases[i].name, argc, argv))
			continue;
		ctx.rng = case_seed(cases[i].name);
		cases[i].fn(&ctx);
		n++;
		if (ctx.failures > UNIT_MAX_DIAG)
			unit_diag("%s: %lu more failures not shown",
				  ctx.name, ctx.failures - UNIT_MAX_DIAG);
		if (ctx.failures) {
			failed++;
			printf("not ok %u - %s\n", n, cases[i].name);
		} else {
			passed++;
			printf("ok %u - %s\n", n, cases[i].name);
		}
	}
	printf("unit: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
