// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the routing rules of kernel/core/rule.c.
 *
 * The input's first bytes make up to four rules (fields taken as they
 * come, then mpip_rule_check(); the ones it accepts are added to a
 * table with mpip_rules_add()); the rest is a packet from its IPv4
 * header on, parsed with mpip_rule_key_parse() from a heap buffer of
 * exactly its length (ASan sees any read beyond).
 *
 * Checks, any failure aborts:
 *  - the parsed keys equal those of a model written here from RFC 791
 *    and RFC 9293 (bytes read one by one, no shared helper);
 *  - every accepted rule matches the packet exactly when a model of the
 *    match (shifts instead of masks) says so;
 *  - the table stays sorted by unique prefs, and mpip_rules_lookup()
 *    finds the first rule the model matches, and so does
 *    mpip_rules_match() in the table's compiled form.
 *
 * Build and run: make -C tests/fuzz run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

#define NRULES	4
#define RULE_BYTES	40

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_rule: %s\n", what);
	abort();
}

static u32 be(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u16 be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

/* A rule from 40 bytes, as a fuzzer may write one. */
static void rule_from(const u8 *b, struct mpip_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->pref = b[0] & 1 ? 0 : b[1];
	r->match = be16(b + 2) & 0x3ff;
	memcpy(&r->daddr, b + 4, 4);
	memcpy(&r->saddr, b + 8, 4);
	r->dplen = b[12] % 40;
	r->splen = b[13] % 40;
	r->proto = b[14] & 1 ? 6 : b[14] & 2 ? 17 : b[14];
	r->dscp = b[15] % 70;
	r->dport_lo = be16(b + 16);
	r->dport_hi = be16(b + 18);
	r->sport_lo = be16(b + 20);
	r->sport_hi = be16(b + 22);
	r->len_lo = be16(b + 24);
	r->len_hi = be16(b + 26);
	r->mark = be(b + 28);
	r->mark_mask = be(b + 32);
	r->mode = b[36] % (MPIP_MODE_COUNT + 1);
	r->fallback = b[37] % (MPIP_FALLBACK_COUNT + 1);
	r->copies = b[38] % 10;
	r->nifs = b[39] % 10;
	r->ifs_deny = b[39] >> 7;
	for (unsigned int i = 0; i < MPIP_RULE_MAX_IFS; i++)
		r->ifs[i] = (int)(b[39] >> 4) - 2 + (int)i;
	/* most inputs would fail for host bits: clear them half the time */
	if (b[0] & 2) {
		u32 d = be((u8 *)&r->daddr), s = be((u8 *)&r->saddr);

		d = r->dplen >= 32 ? d : r->dplen ? d >> (32 - r->dplen) << (32 - r->dplen) : 0;
		s = r->splen >= 32 ? s : r->splen ? s >> (32 - r->splen) << (32 - r->splen) : 0;
		for (int i = 0; i < 4; i++) {
			((u8 *)&r->daddr)[i] = (u8)(d >> (24 - 8 * i));
			((u8 *)&r->saddr)[i] = (u8)(s >> (24 - 8 * i));
		}
	}
}

/* The model of the keys: -1 or 0 as the parser, and what it fills. */
static int model_parse(const u8 *p, size_t len, u32 mark,
		       struct mpip_rule_key *k)
{
	size_t ihl, tot, have, l4;

	memset(k, 0, sizeof(*k));
	if (len < 20 || (p[0] >> 4) != 4)
		return -1;
	ihl = (size_t)(p[0] & 15) * 4;
	tot = be16(p + 2);
	if (ihl < 20 || ihl > len || tot < ihl)
		return -1;
	k->len = (u16)tot;
	k->dscp = p[1] >> 2;
	k->proto = p[9];
	memcpy(&k->saddr, p + 12, 4);
	memcpy(&k->daddr, p + 16, 4);
	k->mark = mark;
	if (be16(p + 6) & 0x1fff)
		return 0;
	if (p[9] != 6 && p[9] != 17)
		return 0;
	have = (len < tot ? len : tot) - ihl;
	l4 = tot - ihl;
	if (have < 4)
		return 0;
	k->has_ports = 1;
	k->sport = be16(p + ihl);
	k->dport = be16(p + ihl + 2);
	if (p[9] == 6 && have >= 14) {
		u8 fl = p[ihl + 13];
		size_t doff = (size_t)(p[ihl + 12] >> 4) * 4;

		k->pure_ack = doff >= 20 && doff == l4 && (fl & 0x10) &&
			      !(fl & 0x07);
	}
	return 0;
}

static bool model_prefix(u32 a, u32 n, unsigned int plen)
{
	return !plen || (be((u8 *)&a) >> (32 - plen)) ==
			(be((u8 *)&n) >> (32 - plen));
}

static bool model_match(const struct mpip_rule *r, const struct mpip_rule_key *k)
{
	u32 m = r->match;
	bool ports = m & (MPIP_RM_DPORT | MPIP_RM_SPORT | MPIP_RM_PURE_ACK);

	return (!(m & MPIP_RM_PROTO) || k->proto == r->proto) &&
	       (!(m & MPIP_RM_DST) || model_prefix(k->daddr, r->daddr, r->dplen)) &&
	       (!(m & MPIP_RM_SRC) || model_prefix(k->saddr, r->saddr, r->splen)) &&
	       (!ports || k->has_ports) &&
	       (!(m & MPIP_RM_DPORT) || (k->dport >= r->dport_lo && k->dport <= r->dport_hi)) &&
	       (!(m & MPIP_RM_SPORT) || (k->sport >= r->sport_lo && k->sport <= r->sport_hi)) &&
	       (!(m & MPIP_RM_LEN) || (k->len >= r->len_lo && k->len <= r->len_hi)) &&
	       (!(m & MPIP_RM_DSCP) || k->dscp == r->dscp) &&
	       (!(m & MPIP_RM_MARK) || (k->mark & r->mark_mask) == r->mark) &&
	       (!(m & MPIP_RM_PURE_ACK) || k->pure_ack);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mpip_rules *t, *u;
	struct mpip_rule_fast f[NRULES];
	struct mpip_rule_key k, mk;
	const struct mpip_rule *hit;
	struct mpip_rule r;
	unsigned int i, nr;
	int ret, mret;
	u8 *pkt;

	if (!t) {
		t = calloc(1, mpip_rules_size(NRULES + 1));
		u = calloc(1, mpip_rules_size(NRULES + 1));
		if (!t || !u)
			fail("no memory");
	}
	t->n = 0;
	nr = size ? data[0] % (NRULES + 1) : 0;
	if (size < 1 + nr * RULE_BYTES)
		return 0;
	for (i = 0; i < nr; i++) {
		rule_from(data + 1 + i * RULE_BYTES, &r);
		if (mpip_rule_check(&r))
			continue;
		if (mpip_rules_add(t, &r, data[1 + i * RULE_BYTES] & 4, u))
			continue;
		memcpy(t, u, mpip_rules_size(u->n));
	}
	for (i = 0; i + 1 < t->n; i++)
		if (t->r[i].pref >= t->r[i + 1].pref)
			fail("table not sorted by unique prefs");

	size -= 1 + nr * RULE_BYTES;
	pkt = malloc(size ? size : 1);
	if (!pkt)
		fail("no memory");
	memcpy(pkt, data + 1 + nr * RULE_BYTES, size);
	ret = mpip_rule_key_parse(pkt, size, 0x5a5a, &k);
	mret = model_parse(pkt, size, 0x5a5a, &mk);
	free(pkt);
	if (ret != mret)
		fail("parse result differs from the model");
	if (ret)
		return 0;
	if (memcmp(&k, &mk, sizeof(k)))
		fail("keys differ from the model");
	hit = NULL;
	for (i = 0; i < t->n; i++) {
		bool m = model_match(&t->r[i], &k);

		if (m != mpip_rule_match(&t->r[i], &k))
			fail("match differs from the model");
		if (m && !hit)
			hit = &t->r[i];
	}
	if (mpip_rules_lookup(t, &k) != hit)
		fail("lookup is not the first match");
	mpip_rules_compile(t, f);
	if (mpip_rules_match(f, t->n, &k) != (hit ? (int)(hit - t->r) : -1))
		fail("compiled match is not the first match");
	return 0;
}
