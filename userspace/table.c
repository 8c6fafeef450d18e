// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: aligned text tables.  Cells are collected first, then printed
 * with every column as wide as its widest cell, two spaces apart.
 */
#define _GNU_SOURCE		/* vasprintf */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpipctl.h"

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		err_msg("out of memory");
		exit(EXIT_FAIL);
	}
	return p;
}

static void add(struct table *t, char *s)
{
	if (t->ncells == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->cells = xrealloc(t->cells, t->cap * sizeof(*t->cells));
	}
	t->cells[t->ncells++] = s;
}

void table_init(struct table *t, int ncols, const char *align,
		const char *const *header)
{
	int i;

	*t = (struct table){ .ncols = ncols, .align = align };
	for (i = 0; i < ncols; i++)
		table_cell(t, "%s", header[i]);
}

/* Append one cell; rows fill left to right. */
void table_cell(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		err_msg("out of memory");
		exit(EXIT_FAIL);
	}
	add(t, s);
}

void table_print(const struct table *t, FILE *f)
{
	size_t *w = xrealloc(NULL, t->ncols * sizeof(*w));
	size_t i;
	int col;

	for (col = 0; col < t->ncols; col++)
		w[col] = 0;
	for (i = 0; i < t->ncells; i++) {
		size_t len = strlen(t->cells[i]);

		col = i % t->ncols;
		if (len > w[col])
			w[col] = len;
	}
	for (i = 0; i < t->ncells; i++) {
		const char *s = t->cells[i];
		int width = (int)w[i % t->ncols];

		col = i % t->ncols;
		if (t->align[col] != 'r' && col == t->ncols - 1)
			width = 0;	/* no trailing blanks */
		fprintf(f, t->align[col] == 'r' ? "%*s" : "%-*s", width, s);
		fputs(col == t->ncols - 1 ? "\n" : "  ", f);
	}
	free(w);
}

void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	*t = (struct table){ 0 };
}
