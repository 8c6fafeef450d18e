// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: a tiny streaming JSON writer.
 *
 * Output is compact (no spaces).  The caller nests objects and arrays at
 * most JSON_MAX_DEPTH deep.  Strings are escaped per RFC 8259; bytes that
 * are not valid UTF-8 are replaced by U+FFFD so the output is always
 * valid JSON.
 */
#include <inttypes.h>

#include "mpipctl.h"

void json_init(struct json *j, FILE *f)
{
	*j = (struct json){ .f = f };
}

/* Emit the separator that goes before a value or a key. */
static void sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void begin(struct json *j, char ch)
{
	sep(j);
	fputc(ch, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void end(struct json *j, char ch)
{
	fputc(ch, j->f);
	if (j->depth > 0)
		j->depth--;
}

void json_obj_begin(struct json *j) { begin(j, '{'); }
void json_obj_end(struct json *j) { end(j, '}'); }
void json_arr_begin(struct json *j) { begin(j, '['); }
void json_arr_end(struct json *j) { end(j, ']'); }

/* Length of the valid UTF-8 sequence at @s, or 0 if it is not valid. */
static int utf8_len(const unsigned char *s)
{
	uint32_t cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static void put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		int n;

		switch (*s) {
		case '"':  fputs("\\\"", f); s++; continue;
		case '\\': fputs("\\\\", f); s++; continue;
		case '\b': fputs("\\b", f); s++; continue;
		case '\f': fputs("\\f", f); s++; continue;
		case '\n': fputs("\\n", f); s++; continue;
		case '\r': fputs("\\r", f); s++; continue;
		case '\t': fputs("\\t", f); s++; continue;
		}
		if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	sep(j);
	put_string(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void json_str(struct json *j, const char *s)
{
	sep(j);
	put_string(j->f, s);
}

void json_uint(struct json *j, uint64_t v)
{
	sep(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_bool(struct json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	sep(j);
	fputs("null", j->f);
}

/* End the document with a newline. */
void json_finish(struct json *j)
{
	fputc('\n', j->f);
}
