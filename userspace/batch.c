// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl -b FILE: run one command a line, as "ip -batch" does.
 *
 * A line is split into words at blanks; a double-quoted part of a word
 * ("a b") keeps its blanks (no escapes).  A word that starts with '#'
 * ends the line, so blank lines and comments run nothing.  Every line runs
 * with the options given before -b.  The first line that fails stops the
 * batch (with -f, the rest still runs); its errors are prefixed with
 * FILE:LINE, and its exit status is the batch's.
 */
#define _GNU_SOURCE		/* getline */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpipctl.h"

#define BATCH_MAX_WORDS	128

enum { SPLIT_QUOTE = -1, SPLIT_MANY = -2 };

/*
 * Split @line into at most @max words, in place; argv[n] is set to NULL.
 * Returns the number of words, SPLIT_QUOTE for a quote left open or
 * SPLIT_MANY for too many words.
 */
static int split_words(char *line, char **argv, int max)
{
	char *r = line, *w;
	int n = 0;

	for (;;) {
		while (isspace((unsigned char)*r))
			r++;
		if (!*r || *r == '#')
			break;
		if (n == max)
			return SPLIT_MANY;
		argv[n++] = w = r;
		/* w never passes r: the word shrinks by its quotes */
		while (*r && !isspace((unsigned char)*r)) {
			if (*r != '"') {
				*w++ = *r++;
				continue;
			}
			for (r++; *r && *r != '"'; )
				*w++ = *r++;
			if (!*r)
				return SPLIT_QUOTE;
			r++;
		}
		if (*r)
			r++;
		*w = '\0';
	}
	argv[n] = NULL;
	return n;
}

int batch_run(struct ctx *c, const char *file, bool force)
{
	bool use_stdin = strcmp(file, "-") == 0;
	const char *name = use_stdin ? "<stdin>" : file;
	char *argv[BATCH_MAX_WORDS + 1];
	char where[PATH_MAX + 32];
	unsigned long lineno = 0;
	int status = EXIT_OK;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;

	f = use_stdin ? stdin : fopen(file, "re");
	if (!f) {
		err_msg("cannot open %s: %s", file, strerror(errno));
		return EXIT_FAIL;
	}
	while (getline(&line, &cap, f) >= 0) {
		int n, ret;

		lineno++;
		n = split_words(line, argv, BATCH_MAX_WORDS);
		if (n == 0)
			continue;
		snprintf(where, sizeof(where), "%s:%lu", name, lineno);
		err_where = where;
		if (n == SPLIT_QUOTE) {
			err_msg("unterminated double quote");
			ret = EXIT_FAIL;
		} else if (n == SPLIT_MANY) {
			err_msg("more than %d words", BATCH_MAX_WORDS);
			ret = EXIT_FAIL;
		} else {
			c->cmd = NULL;
			c->key = NULL;
			ret = mpipctl_command(c, n, argv);
		}
		err_where = NULL;
		/* this line's output before the next line's errors */
		fflush(stdout);
		if (ret != EXIT_OK && status == EXIT_OK)
			status = ret;
		if (ret != EXIT_OK && !force)
			break;
	}
	if (ferror(f)) {
		err_msg("cannot read %s: %s", name, strerror(errno));
		status = EXIT_FAIL;
	}
	free(line);
	if (!use_stdin)
		fclose(f);
	return status;
}
