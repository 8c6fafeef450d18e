// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/rule.c: checking rules, matching each
 * key, first match in preference order (the paper's Table 7), table
 * changes against a reference model, and reading a packet's keys.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"
#include "ktap.h"

static u32 ip(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static struct mpip_rule rule(u32 match)
{
	struct mpip_rule r;

	memset(&r, 0, sizeof(r));
	r.match = match;
	return r;
}

static struct mpip_rule_key key(u8 proto, const char *s, u16 sport,
				const char *d, u16 dport, u16 len)
{
	struct mpip_rule_key k;

	memset(&k, 0, sizeof(k));
	k.proto = proto;
	k.saddr = ip(s);
	k.daddr = ip(d);
	k.sport = sport;
	k.dport = dport;
	k.len = len;
	k.has_ports = proto == 6 || proto == 17;
	return k;
}

/* ---- checking ------------------------------------------------------------ */

UNIT_TEST(rule_check_names_each_bad_field)
{
	struct mpip_rule r;

	r = rule(0x200);
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_MATCH);
	r = rule(MPIP_RM_DST);
	r.dplen = 33;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_PLEN);
	r = rule(MPIP_RM_SRC);
	r.saddr = ip("10.1.1.1");
	r.splen = 24;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_HOSTBITS);
	r.saddr = ip("10.1.1.0");
	CHECK_EQ(mpip_rule_check(&r), 0);
	r = rule(MPIP_RM_PROTO | MPIP_RM_DPORT);
	r.proto = 6;
	r.dport_lo = 90;
	r.dport_hi = 80;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_RANGE);
	r = rule(MPIP_RM_LEN);
	r.len_lo = 2;
	r.len_hi = 1;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_RANGE);
	r = rule(MPIP_RM_SPORT);
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_PORTPROTO);
	r = rule(MPIP_RM_PROTO | MPIP_RM_DPORT);
	r.proto = 1;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_PORTPROTO);
	r = rule(MPIP_RM_PROTO | MPIP_RM_PURE_ACK);
	r.proto = 17;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_ACKPROTO);
	r = rule(MPIP_RM_DSCP);
	r.dscp = 64;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_DSCP);
	r = rule(MPIP_RM_MARK);
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_MASK);
	r = rule(0);
	r.mode = MPIP_MODE_COUNT;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_MODE);
	r = rule(0);
	r.fallback = MPIP_FALLBACK_COUNT;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_MODE);
	r = rule(0);
	r.copies = 2;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_COPIES);
	r = rule(0);
	r.mode = MPIP_MODE_PROTECTED;
	r.copies = MPIP_RULE_MAX_COPIES + 1;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_COPIES);
	r = rule(0);
	r.mode = MPIP_MODE_SELECTED;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	r.nifs = 1;
	r.ifs[0] = 0;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	r.ifs[0] = 3;
	CHECK_EQ(mpip_rule_check(&r), 0);
	r.mode = MPIP_MODE_ALL;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	r.mode = MPIP_MODE_ORIGINAL;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	r.mode = MPIP_MODE_OFF;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	r.nifs = MPIP_RULE_MAX_IFS + 1;
	r.mode = MPIP_MODE_SINGLE;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	r = rule(0);
	r.ifs_deny = 1;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	CHECK(strcmp(mpip_rule_strerror(MPIP_RULE_E_NOPREF), "unknown error"));
	CHECK(!strcmp(mpip_rule_strerror(-100), "unknown error"));
	CHECK(!strcmp(mpip_rule_strerror(1), "unknown error"));
}

/* single and protected take a dev or nodev list; unlike selected, they
 * need none */
UNIT_TEST(rule_check_lists_for_single_and_protected)
{
	static const u8 modes[] = { MPIP_MODE_SINGLE, MPIP_MODE_PROTECTED };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		struct mpip_rule r = rule(0);

		r.mode = modes[i];
		CHECK_EQ(mpip_rule_check(&r), 0);
		r.nifs = 2;
		r.ifs[0] = 2;
		r.ifs[1] = 3;
		CHECK_EQ(mpip_rule_check(&r), 0);
		r.ifs_deny = 1;
		CHECK_EQ(mpip_rule_check(&r), 0);
		CHECK(!mpip_rule_link_ok(&r, 2) && mpip_rule_link_ok(&r, 4));
		r.ifs[1] = -1;
		CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
		r.ifs[1] = 3;
		r.nifs = 0;
		CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_IFS);
	}
}

/* nometered goes with the modes that pick among paths */
UNIT_TEST(rule_check_nometered)
{
	static const u8 ok[] = { MPIP_MODE_ALL, MPIP_MODE_SINGLE,
				 MPIP_MODE_PROTECTED };
	struct mpip_rule r = rule(0);
	unsigned int i;

	r.nometered = 1;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		r.mode = ok[i];
		r.copies = 0;
		CHECK_EQ(mpip_rule_check(&r), 0);
		CHECK(mpip_rule_restricts(&r));
	}
	r.mode = MPIP_MODE_SELECTED;
	r.copies = 0;
	r.nifs = 1;
	r.ifs[0] = 2;
	CHECK_EQ(mpip_rule_check(&r), 0);
	r.nifs = 0;
	r.mode = MPIP_MODE_ORIGINAL;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_METERED);
	r.mode = MPIP_MODE_OFF;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_METERED);
	r.mode = MPIP_MODE_ALL;
	r.nometered = 2;
	CHECK_EQ(mpip_rule_check(&r), MPIP_RULE_E_METERED);
	r.nometered = 0;
	CHECK(!mpip_rule_restricts(&r));
	CHECK(strcmp(mpip_rule_strerror(MPIP_RULE_E_METERED), "unknown error"));
}

UNIT_TEST(rule_check_gives_protected_two_copies)
{
	struct mpip_rule r = rule(0);

	r.mode = MPIP_MODE_PROTECTED;
	CHECK_EQ(mpip_rule_check(&r), 0);
	CHECK_EQ(r.copies, 2);
}

/* ---- matching ------------------------------------------------------------ */

UNIT_TEST(rule_match_each_key_alone)
{
	struct mpip_rule_key k = key(6, "10.0.1.1", 40000, "10.0.2.2", 22, 100);
	struct mpip_rule r;

	r = rule(0);
	CHECK(mpip_rule_match(&r, &k));		/* no key: everything */
	r = rule(MPIP_RM_PROTO);
	r.proto = 6;
	CHECK(mpip_rule_match(&r, &k));
	r.proto = 17;
	CHECK(!mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_DST);
	r.daddr = ip("10.0.2.0");
	r.dplen = 24;
	CHECK(mpip_rule_match(&r, &k));
	r.daddr = ip("10.0.3.0");
	CHECK(!mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_SRC);
	r.saddr = ip("10.0.1.1");
	r.splen = 32;
	CHECK(mpip_rule_match(&r, &k));
	r.saddr = ip("10.0.1.2");
	CHECK(!mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_DPORT);
	r.dport_lo = 22;
	r.dport_hi = 22;
	CHECK(mpip_rule_match(&r, &k));
	r.dport_lo = 23;
	r.dport_hi = 65535;
	CHECK(!mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_SPORT);
	r.sport_lo = 32768;
	r.sport_hi = 60999;
	CHECK(mpip_rule_match(&r, &k));
	r.sport_hi = 39999;
	CHECK(!mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_LEN);
	r.len_lo = 0;
	r.len_hi = 100;
	CHECK(mpip_rule_match(&r, &k));
	r.len_hi = 99;
	CHECK(!mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_DSCP);
	r.dscp = 46;
	CHECK(!mpip_rule_match(&r, &k));
	k.dscp = 46;
	CHECK(mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_MARK);
	r.mark = 0x10;
	r.mark_mask = 0xf0;
	k.mark = 0x1234;
	CHECK(!mpip_rule_match(&r, &k));
	k.mark = 0xff1f;
	CHECK(mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_PURE_ACK);
	CHECK(!mpip_rule_match(&r, &k));
	k.pure_ack = 1;
	CHECK(mpip_rule_match(&r, &k));
}

UNIT_TEST(rule_match_ports_need_ports)
{
	struct mpip_rule_key k = key(6, "10.0.1.1", 0, "10.0.2.2", 0, 100);
	struct mpip_rule r = rule(MPIP_RM_DPORT);

	r.dport_lo = 0;
	r.dport_hi = 65535;
	k.has_ports = 0;	/* a later fragment */
	CHECK(!mpip_rule_match(&r, &k));
	k.has_ports = 1;
	CHECK(mpip_rule_match(&r, &k));
	r = rule(MPIP_RM_PURE_ACK);
	k.pure_ack = 1;
	k.has_ports = 0;
	CHECK(!mpip_rule_match(&r, &k));
}

/* The network of host-order address @a under a prefix of @plen bits. */
static u32 net_of(u32 a, unsigned int plen)
{
	return plen ? a >> (32 - plen) << (32 - plen) : 0;
}

/* Prefix match against a reference that shifts instead of masking. */
UNIT_TEST(rule_match_prefixes_as_reference)
{
	struct mpip_rule r = rule(MPIP_RM_DST);
	struct mpip_rule_key k;
	unsigned int i, plen;
	u32 net, a;
	bool want;

	memset(&k, 0, sizeof(k));
	for (i = 0; i < 200000; i++) {
		plen = unit_below(ctx, 33);
		net = net_of(unit_rand32(ctx), plen);
		a = unit_below(ctx, 2) ? net ^ (1u << unit_below(ctx, 32)) :
					 unit_rand32(ctx);
		want = plen == 0 || (a >> (32 - plen)) == (net >> (32 - plen));
		r.daddr = htonl(net);
		r.dplen = plen;
		k.daddr = htonl(a);
		if (!CHECK_EQ(mpip_rule_check(&r), 0) ||
		    !CHECK_EQ(mpip_rule_match(&r, &k), want))
			return;
	}
}

/* The paper's Table 7, as three rules: first match decides. */
UNIT_TEST(rules_table7_first_match_wins)
{
	struct mpip_rules *t = calloc(1, mpip_rules_size(4));
	struct mpip_rules *u = calloc(1, mpip_rules_size(4));
	struct mpip_rule r[3] = { rule(MPIP_RM_PROTO | MPIP_RM_DPORT | MPIP_RM_LEN),
				  rule(MPIP_RM_DST | MPIP_RM_PROTO | MPIP_RM_DPORT | MPIP_RM_LEN),
				  rule(MPIP_RM_DST | MPIP_RM_PROTO | MPIP_RM_DPORT | MPIP_RM_LEN) };
	struct mpip_rule_key k;
	const struct mpip_rule *m;
	unsigned int i;

	r[0].pref = 100;
	r[0].proto = 6;
	r[0].dport_lo = r[0].dport_hi = 22;
	r[0].len_hi = 200;
	r[0].mode = MPIP_MODE_SINGLE;
	r[1].pref = 110;
	r[1].daddr = ip("192.168.1.2");
	r[1].dplen = 32;
	r[1].proto = 17;
	r[1].dport_lo = r[1].dport_hi = 5222;
	r[1].len_lo = 200;
	r[1].len_hi = 65535;
	r[1].mode = MPIP_MODE_ALL;
	r[2] = r[1];
	r[2].pref = 120;
	r[2].dport_lo = r[2].dport_hi = 5221;
	r[2].len_lo = 0;
	r[2].len_hi = 500;
	r[2].mode = MPIP_MODE_SINGLE;
	for (i = 0; i < 3; i++) {
		struct mpip_rules *tmp;

		if (!CHECK_EQ(mpip_rule_check(&r[i]), 0) ||
		    !CHECK_EQ(mpip_rules_add(t, &r[i], false, u), 0))
			goto out;
		tmp = t;
		t = u;
		u = tmp;
	}
	k = key(6, "10.0.0.1", 50000, "192.168.1.2", 22, 60);
	m = mpip_rules_lookup(t, &k);
	CHECK(m && m->pref == 100);
	k.len = 1500;				/* bulk ssh: no rule */
	CHECK(!mpip_rules_lookup(t, &k));
	k = key(17, "10.0.0.1", 50000, "192.168.1.2", 5222, 1200);
	m = mpip_rules_lookup(t, &k);
	CHECK(m && m->pref == 110 && m->mode == MPIP_MODE_ALL);
	k = key(17, "10.0.0.1", 50000, "192.168.1.2", 5221, 300);
	m = mpip_rules_lookup(t, &k);
	CHECK(m && m->pref == 120 && m->mode == MPIP_MODE_SINGLE);
	k.daddr = ip("192.168.1.3");
	CHECK(!mpip_rules_lookup(t, &k));
	CHECK(!mpip_rules_lookup(NULL, &k));
out:
	free(t);
	free(u);
}

/* ---- the compiled form ---------------------------------------------------- */

/* One of a few values, so that random rules and keys often meet. */
static u16 near16(struct unit_ctx *ctx)
{
	static const u16 v[] = { 0, 1, 22, 443, 5000, 5001, 65534, 65535 };

	return v[unit_below(ctx, ARRAY_SIZE(v))];
}

static u32 near_addr(struct unit_ctx *ctx)
{
	static const char *const v[] = { "0.0.0.0", "10.0.0.1", "10.0.0.2",
					 "10.0.1.1", "10.128.0.1", "192.168.1.2",
					 "255.255.255.255" };

	return ip(v[unit_below(ctx, ARRAY_SIZE(v))]);
}

/* A random rule that mpip_rule_check() accepts, host bits cleared. */
static struct mpip_rule random_rule(struct unit_ctx *ctx)
{
	static const u8 protos[] = { 6, 17, 1 };
	struct mpip_rule r = rule(unit_rand32(ctx) & MPIP_RM_ALL);
	u16 a, b;

	r.proto = protos[unit_below(ctx, 3)];
	if (r.proto != 6)
		r.match &= ~(u32)MPIP_RM_PURE_ACK;
	if (r.proto == 1)
		r.match &= ~(u32)(MPIP_RM_DPORT | MPIP_RM_SPORT);
	if (r.match & (MPIP_RM_DPORT | MPIP_RM_SPORT | MPIP_RM_PURE_ACK))
		r.match |= MPIP_RM_PROTO;
	r.dplen = (u8)unit_below(ctx, 33);
	r.splen = (u8)unit_below(ctx, 33);
	r.daddr = htonl(net_of(ntohl(near_addr(ctx)), r.dplen));
	r.saddr = htonl(net_of(ntohl(near_addr(ctx)), r.splen));
	a = near16(ctx);
	b = near16(ctx);
	r.dport_lo = a < b ? a : b;
	r.dport_hi = a < b ? b : a;
	r.sport_lo = r.sport_hi = near16(ctx);
	a = near16(ctx);
	r.len_lo = a;
	r.len_hi = a > 1500 ? a : 1500;
	r.dscp = (u8)unit_below(ctx, 4) * 16;
	r.mark_mask = unit_below(ctx, 2) ? 0xff : ~(u32)0;
	r.mark = unit_below(ctx, 3);
	if (unit_below(ctx, 8) == 0)
		r.mark |= 0x100;	/* outside a mask of 0xff: never */
	return r;
}

static struct mpip_rule_key random_key(struct unit_ctx *ctx)
{
	struct mpip_rule_key k;

	memset(&k, 0, sizeof(k));
	k.proto = unit_below(ctx, 2) ? 17 : unit_below(ctx, 2) ? 6 : 1;
	k.daddr = near_addr(ctx);
	k.saddr = near_addr(ctx);
	k.has_ports = k.proto != 1 && unit_below(ctx, 8);
	k.dport = k.has_ports ? near16(ctx) : 0;
	k.sport = k.has_ports ? near16(ctx) : 0;
	k.pure_ack = k.proto == 6 && k.has_ports && unit_below(ctx, 2);
	k.len = near16(ctx);
	k.dscp = (u8)unit_below(ctx, 4) * 16;
	k.mark = unit_below(ctx, 3) | (unit_below(ctx, 4) ? 0 : 0x100);
	return k;
}

/*
 * Random tables of 1 to 8 rules, compiled: mpip_rules_match() finds the
 * rule mpip_rules_lookup() finds, for random keys near the rules' values.
 */
UNIT_TEST(rules_compiled_match_as_lookup)
{
	struct mpip_rules *t = calloc(1, mpip_rules_size(8));
	struct mpip_rule_fast f[8];
	const struct mpip_rule *want;
	struct mpip_rule_key k;
	unsigned int i, j, hits = 0, never = 0;
	int got;

	for (i = 0; i < 20000; i++) {
		t->n = 1 + unit_below(ctx, 8);
		for (j = 0; j < t->n; j++) {
			t->r[j] = random_rule(ctx);
			t->r[j].pref = j + 1;
			if (!CHECK_EQ(mpip_rule_check(&t->r[j]), 0))
				goto out;
		}
		mpip_rules_compile(t, f);
		for (j = 0; j < 50; j++) {
			k = random_key(ctx);
			want = mpip_rules_lookup(t, &k);
			got = mpip_rules_match(f, t->n, &k);
			if (!CHECK_EQ(got, want ? (int)(want - t->r) : -1))
				goto out;
			hits += got >= 0;
			never += !want;
		}
	}
	/* both answers were seen often */
	CHECK(hits > 20000 * 50 / 20 && never > 20000 * 50 / 20);
out:
	free(t);
}

/* Each key alone, at and past its edges, compiled as a table of one. */
UNIT_TEST(rules_compiled_edges)
{
	struct mpip_rules *t = calloc(1, mpip_rules_size(1));
	struct mpip_rule_key k = key(6, "10.0.0.1", 1000, "10.0.1.2", 80, 100);
	struct mpip_rule_fast f;
	struct mpip_rule *r = &t->r[0];

	t->n = 1;
	*r = rule(MPIP_RM_PROTO | MPIP_RM_DPORT);
	r->proto = 6;
	r->dport_lo = 80;
	r->dport_hi = 80;
	mpip_rules_compile(t, &f);
	CHECK_EQ(mpip_rules_match(&f, 1, &k), 0);
	k.dport = 81;
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);
	k.dport = 79;
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);
	k.dport = 80;
	k.has_ports = 0;			/* a later fragment */
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);
	k.has_ports = 1;

	*r = rule(MPIP_RM_LEN);
	r->len_lo = 0;
	r->len_hi = 65535;
	mpip_rules_compile(t, &f);
	k.len = 65535;
	CHECK_EQ(mpip_rules_match(&f, 1, &k), 0);
	r->len_lo = 65535;
	mpip_rules_compile(t, &f);
	CHECK_EQ(mpip_rules_match(&f, 1, &k), 0);
	k.len = 0;
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);

	*r = rule(MPIP_RM_SRC | MPIP_RM_DST);
	r->saddr = ip("10.0.0.0");
	r->splen = 31;
	r->daddr = ip("10.0.0.0");
	r->dplen = 23;
	mpip_rules_compile(t, &f);
	CHECK_EQ(mpip_rules_match(&f, 1, &k), 0);	/* 10.0.0.1, 10.0.1.2 */
	k.daddr = ip("10.0.2.0");
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);
	k.daddr = ip("10.0.1.2");
	k.saddr = ip("10.0.0.2");
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);

	*r = rule(MPIP_RM_MARK);
	r->mark = 0x3;
	r->mark_mask = 0x1;			/* a bit outside: no match */
	mpip_rules_compile(t, &f);
	k.mark = 0x3;
	CHECK_EQ(mpip_rules_match(&f, 1, &k), -1);
	CHECK(!mpip_rule_match(r, &k));
	r->mark = 0x1;
	mpip_rules_compile(t, &f);
	CHECK_EQ(mpip_rules_match(&f, 1, &k), 0);
	CHECK_EQ(mpip_rules_match(&f, 0, &k), -1);	/* no rules */
	free(t);
}

/* ---- table changes ------------------------------------------------------- */

UNIT_TEST(rules_add_auto_pref_exist_replace_full)
{
	struct mpip_rules *t = calloc(1, mpip_rules_size(MPIP_RULES_MAX + 1));
	struct mpip_rules *u = calloc(1, mpip_rules_size(MPIP_RULES_MAX + 1));
	struct mpip_rule r = rule(0);
	unsigned int i;

	CHECK_EQ(mpip_rules_add(t, &r, false, u), 0);
	CHECK_EQ(r.pref, MPIP_RULE_PREF_FIRST);
	CHECK_EQ(u->n, 1);
	u->r[0].pkts = 7;
	r.pref = MPIP_RULE_PREF_AUTO;
	CHECK_EQ(mpip_rules_add(u, &r, false, t), 0);
	CHECK_EQ(r.pref, MPIP_RULE_PREF_FIRST - 1);
	CHECK(t->n == 2 && t->r[0].pref == MPIP_RULE_PREF_FIRST - 1 &&
	      t->r[1].pref == MPIP_RULE_PREF_FIRST && t->r[1].pkts == 7);
	r.pref = MPIP_RULE_PREF_FIRST;
	CHECK_EQ(mpip_rules_add(t, &r, false, u), MPIP_RULE_E_EXIST);
	r.mode = MPIP_MODE_OFF;
	CHECK_EQ(mpip_rules_add(t, &r, true, u), 0);
	CHECK(u->n == 2 && u->r[1].mode == MPIP_MODE_OFF && u->r[1].pkts == 7);
	r.pref = 1;
	CHECK_EQ(mpip_rules_add(u, &r, false, t), 0);
	r.pref = MPIP_RULE_PREF_AUTO;
	CHECK_EQ(mpip_rules_add(t, &r, false, u), MPIP_RULE_E_NOPREF);
	/* fill it up */
	t->n = 0;
	for (i = 0; i < MPIP_RULES_MAX; i++) {
		r.pref = 1000 + i;
		if (!CHECK_EQ(mpip_rules_add(t, &r, false, u), 0))
			break;
		memcpy(t, u, mpip_rules_size(u->n));
	}
	r.pref = 5;
	CHECK_EQ(mpip_rules_add(t, &r, false, u), MPIP_RULE_E_FULL);
	r.pref = 1000;
	r.mode = MPIP_MODE_ORIGINAL;
	CHECK_EQ(mpip_rules_add(t, &r, true, u), 0);	/* replace: no room needed */
	CHECK(u->n == MPIP_RULES_MAX && u->r[0].mode == MPIP_MODE_ORIGINAL &&
	      u->r[1].pref == 1001 && u->r[1].mode == MPIP_MODE_OFF &&
	      u->r[MPIP_RULES_MAX - 1].pref == 1000 + MPIP_RULES_MAX - 1);
	CHECK_EQ(mpip_rules_del(t, 5, u), MPIP_RULE_E_NOENT);
	free(t);
	free(u);
}

/* Random adds and deletes against a reference: a bitmap of prefs. */
UNIT_TEST(rules_random_changes_stay_sorted)
{
	struct mpip_rules *t = calloc(1, mpip_rules_size(257));
	struct mpip_rules *u = calloc(1, mpip_rules_size(257));
	unsigned char have[300] = { 0 };
	struct mpip_rule r = rule(0);
	unsigned int i, j, n = 0;
	int err, want;

	for (i = 0; i < 20000; i++) {
		u32 pref = 1 + unit_below(ctx, 256);

		if (unit_below(ctx, 2)) {
			r.pref = pref;
			r.mode = (u8)(pref % MPIP_MODE_COUNT);
			if (r.mode == MPIP_MODE_SELECTED ||
			    (r.mode == MPIP_MODE_SINGLE &&
			     (pref / MPIP_MODE_COUNT) % 2)) {
				r.nifs = 1;
				r.ifs[0] = 2;
			} else {
				r.nifs = 0;
			}
			r.copies = 0;
			if (!CHECK_EQ(mpip_rule_check(&r), 0))
				break;
			err = mpip_rules_add(t, &r, false, u);
			want = have[pref] ? MPIP_RULE_E_EXIST : 0;
			if (!err) {
				have[pref] = 1;
				n++;
			}
		} else {
			err = mpip_rules_del(t, pref, u);
			want = have[pref] ? 0 : MPIP_RULE_E_NOENT;
			if (!err) {
				have[pref] = 0;
				n--;
			}
		}
		if (!CHECK_EQ(err, want))
			break;
		if (err)
			continue;
		memcpy(t, u, mpip_rules_size(u->n));
		if (!CHECK_EQ(t->n, n))
			break;
		for (j = 0; j + 1 < t->n; j++)
			if (!CHECK(t->r[j].pref < t->r[j + 1].pref))
				goto out;
		for (j = 0; j < t->n; j++)
			if (!CHECK(have[t->r[j].pref] &&
				   t->r[j].mode == t->r[j].pref % MPIP_MODE_COUNT))
				goto out;
	}
out:
	free(t);
	free(u);
}

/* ---- a packet's keys ----------------------------------------------------- */

/* An IPv4 packet: header, then @l4len bytes of transport header/payload. */
static unsigned int pkt(u8 *b, u8 proto, u8 tos, unsigned int l4len)
{
	unsigned int tot = 20 + l4len;

	memset(b, 0, tot);
	b[0] = 0x45;
	b[1] = tos;
	b[2] = (u8)(tot >> 8);
	b[3] = (u8)tot;
	b[8] = 64;
	b[9] = proto;
	memcpy(b + 12, (u32[]){ ip("10.0.1.1") }, 4);
	memcpy(b + 16, (u32[]){ ip("10.0.2.2") }, 4);
	b[20] = 0x9c;		/* sport 40000 */
	b[21] = 0x40;
	b[22] = 0;		/* dport 22 */
	b[23] = 22;
	return tot;
}

static void tcp(u8 *b, unsigned int doff, u8 flags)
{
	b[20 + 12] = (u8)(doff / 4 << 4);
	b[20 + 13] = flags;
}

UNIT_TEST(rule_key_parse_tcp_udp_and_others)
{
	struct mpip_rule_key k;
	u8 b[200];
	unsigned int n;

	n = pkt(b, 6, 0xb8, 20);		/* DSCP 46, pure ACK */
	tcp(b, 20, 0x10);
	CHECK_EQ(mpip_rule_key_parse(b, n, 5, &k), 0);
	CHECK(k.proto == 6 && k.saddr == ip("10.0.1.1") &&
	      k.daddr == ip("10.0.2.2") && k.sport == 40000 && k.dport == 22 &&
	      k.len == 40 && k.dscp == 46 && k.mark == 5 && k.has_ports &&
	      k.pure_ack);
	n = pkt(b, 6, 0, 32);			/* ACK with 12 bytes of options */
	tcp(b, 32, 0x10);
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && k.pure_ack);
	n = pkt(b, 6, 0, 21);			/* one byte of data */
	tcp(b, 20, 0x10);
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && !k.pure_ack);
	n = pkt(b, 6, 0, 20);			/* SYN-ACK, FIN-ACK, RST-ACK */
	tcp(b, 20, 0x12);
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && !k.pure_ack);
	tcp(b, 20, 0x11);
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && !k.pure_ack);
	tcp(b, 20, 0x14);
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && !k.pure_ack);
	n = pkt(b, 17, 0, 108);			/* UDP */
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && k.has_ports &&
	      k.dport == 22 && !k.pure_ack && k.len == 128);
	n = pkt(b, 1, 0, 8);			/* ICMP: no ports */
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && !k.has_ports &&
	      k.proto == 1);
	n = pkt(b, 17, 0, 108);			/* a later fragment */
	b[7] = 1;
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && !k.has_ports);
	b[7] = 0;
	b[6] = 0x20;				/* MF, offset 0: first fragment */
	CHECK(!mpip_rule_key_parse(b, n, 0, &k) && k.has_ports);
	n = pkt(b, 17, 0, 108);
	CHECK(!mpip_rule_key_parse(b, 22, 0, &k) && !k.has_ports);
	CHECK_EQ(mpip_rule_key_parse(b, 19, 0, &k), -1);
	b[0] = 0x65;				/* IPv6 version */
	CHECK_EQ(mpip_rule_key_parse(b, n, 0, &k), -1);
	b[0] = 0x44;				/* IHL 16 bytes */
	CHECK_EQ(mpip_rule_key_parse(b, n, 0, &k), -1);
	b[0] = 0x4f;				/* IHL 60 bytes, total 128 */
	CHECK_EQ(mpip_rule_key_parse(b, 59, 0, &k), -1);
	b[2] = 0;
	b[3] = 30;				/* total shorter than IHL */
	CHECK_EQ(mpip_rule_key_parse(b, n, 0, &k), -1);
}

/* Random bytes of every length, each in a buffer of exactly that size. */
UNIT_TEST(rule_key_parse_reads_only_its_bytes)
{
	struct mpip_rule_key k;
	unsigned int i, len;
	u8 *b;

	for (i = 0; i < 100000; i++) {
		len = unit_below(ctx, 80);
		b = malloc(len ? len : 1);
		unit_fill(ctx, b, len);
		if (len)
			b[0] = (u8)(0x40 | (b[0] & 0x0f));
		if (len > 9 && unit_below(ctx, 2))
			b[9] = unit_below(ctx, 2) ? 6 : 17;
		if (!mpip_rule_key_parse(b, len, 0, &k))
			CHECK(k.len >= 20);
		free(b);
	}
}

UNIT_TEST(rule_link_ok_allow_and_deny)
{
	struct mpip_rule r = rule(0);

	CHECK(mpip_rule_link_ok(&r, 5));
	r.mode = MPIP_MODE_SINGLE;
	CHECK(mpip_rule_link_ok(&r, 5));
	r.mode = MPIP_MODE_SELECTED;
	r.nifs = 2;
	r.ifs[0] = 2;
	r.ifs[1] = 3;
	CHECK(mpip_rule_link_ok(&r, 2) && mpip_rule_link_ok(&r, 3) &&
	      !mpip_rule_link_ok(&r, 4));
	r.ifs_deny = 1;
	CHECK(!mpip_rule_link_ok(&r, 2) && !mpip_rule_link_ok(&r, 3) &&
	      mpip_rule_link_ok(&r, 4));
}
