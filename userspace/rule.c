// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: "rule add", "rule del", "rule flush" and the entries of
 * "show rules": routing rules, in the style of ip-rule(8).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/msg.h>

#include "mpipctl.h"

#define RULE_USAGE "usage: mpipctl rule add [pref N] [SELECTOR] mode MODE|intent INTENT [dev IF]...|[nodev IF]... [nometered] [copies N] [fallback any|original|drop]; rule del pref N; rule flush"
#define RULE_MAX_IFS 8

static const char *const mode_names[] = {
	[MPIP_RULE_MODE_ALL] = "all",
	[MPIP_RULE_MODE_SINGLE] = "single",
	[MPIP_RULE_MODE_SELECTED] = "selected",
	[MPIP_RULE_MODE_PROTECTED] = "protected",
	[MPIP_RULE_MODE_ORIGINAL] = "original",
	[MPIP_RULE_MODE_OFF] = "off",
};

/*
 * Presets named after Socket Intents (Schmidt et al.: traffic category,
 * timeliness, disruption resilience), each the mode it stands for.
 */
static const struct {
	const char *name;
	int mode;
} intents[] = {
	{ "interactive", MPIP_RULE_MODE_SINGLE },	/* lowest delay */
	{ "bulk", MPIP_RULE_MODE_ALL },			/* every path */
	{ "critical", MPIP_RULE_MODE_PROTECTED },	/* copies */
	{ "background", MPIP_RULE_MODE_ORIGINAL },	/* its own path */
};

static const char *const fallback_names[] = {
	[MPIP_RULE_FALLBACK_ANY] = "any",
	[MPIP_RULE_FALLBACK_ORIGINAL] = "original",
	[MPIP_RULE_FALLBACK_DROP] = "drop",
};

/* What "rule add" was given. */
struct rule_req {
	uint32_t pref;
	int proto;			/* -1: any */
	bool has_to, has_from, has_dport, has_sport, has_len, has_mark;
	uint32_t to, from;		/* network byte order */
	uint8_t to_len, from_len;
	struct mpip_rule_range dport, sport, len;
	int dscp;			/* -1: any */
	uint32_t mark, mark_mask;
	bool pure_ack;
	bool nometered;
	int mode;			/* -1: not given */
	const char *intent;		/* the intent that gave @mode, if one */
	int fallback;			/* -1: not given */
	int copies;			/* 0: not given */
	const char *ifs[RULE_MAX_IFS];
	int nifs;
	int ifs_deny;			/* -1: no list */
};

static int name_index(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* A decimal or 0x number up to @max; -1 if it is not one. */
static int parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end || *v > max ? -1 : 0;
}

/* "A" or "A-B", each 0..65535. */
static int parse_range(const char *s, struct mpip_rule_range *r)
{
	char buf[32], *dash;
	uint64_t a, b;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_num(buf, 65535, &a) ||
	    (dash && parse_num(dash + 1, 65535, &b)))
		return -1;
	r->start = (uint16_t)a;
	r->end = dash ? (uint16_t)b : (uint16_t)a;
	return 0;
}

/* "A.B.C.D" (a /32) or "A.B.C.D/LEN". */
static int parse_prefix(const char *s, uint32_t *addr, uint8_t *plen)
{
	char buf[32], *slash;
	struct in_addr a;
	uint64_t l = 32;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (parse_num(slash + 1, 32, &l))
			return -1;
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*addr = a.s_addr;
	*plen = (uint8_t)l;
	return 0;
}

static int parse_proto(const char *s)
{
	uint64_t v;

	if (strcmp(s, "tcp") == 0)
		return 6;
	if (strcmp(s, "udp") == 0)
		return 17;
	return parse_num(s, 255, &v) ? -1 : (int)v;
}

/* DSCP: 0..63, or ef, csN, afXY. */
static int parse_dscp(const char *s)
{
	uint64_t v;

	if (strcmp(s, "ef") == 0)
		return 46;
	if (s[0] == 'c' && s[1] == 's' && s[2] >= '0' && s[2] <= '7' && !s[3])
		return (s[2] - '0') * 8;
	if (s[0] == 'a' && s[1] == 'f' && s[2] >= '1' && s[2] <= '4' &&
	    s[3] >= '1' && s[3] <= '3' && !s[4])
		return (s[2] - '0') * 8 + (s[3] - '0') * 2;
	return parse_num(s, 63, &v) ? -1 : (int)v;
}

static int parse_mark(const char *s, uint32_t *mark, uint32_t *mask)
{
	char buf[32], *slash;
	uint64_t m, k = 0xffffffff;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (parse_num(slash + 1, 0xffffffff, &k) || !k)
			return -1;
	}
	if (parse_num(buf, 0xffffffff, &m))
		return -1;
	*mark = (uint32_t)m;
	*mask = (uint32_t)k;
	return 0;
}

/* One keyword of "rule add" with its value @v (NULL if none followed). */
static int rule_word(struct rule_req *q, const char *w, const char *v,
		     int *used)
{
	uint64_t n;

	*used = 1;
	if (strcmp(w, "pure-ack") == 0 || strcmp(w, "nometered") == 0) {
		*(w[0] == 'p' ? &q->pure_ack : &q->nometered) = true;
		*used = 0;
		return 0;
	}
	if (!v) {
		err_msg("rule add: missing value after '%s' (" RULE_USAGE ")", w);
		return -1;
	}
#define BAD(what, hint) do { \
		err_msg("rule add: invalid %s '%s' (%s)", what, v, hint); \
		return -1; \
	} while (0)
	if (strcmp(w, "pref") == 0) {
		if (parse_num(v, 0xffffffff, &n) || !n)
			BAD("preference", "1..4294967295");
		q->pref = (uint32_t)n;
	} else if (strcmp(w, "proto") == 0) {
		q->proto = parse_proto(v);
		if (q->proto < 0)
			BAD("protocol", "tcp, udp or 0..255");
	} else if (strcmp(w, "to") == 0 || strcmp(w, "from") == 0) {
		bool to = w[0] == 't';

		if (parse_prefix(v, to ? &q->to : &q->from,
				 to ? &q->to_len : &q->from_len))
			BAD("prefix", "A.B.C.D or A.B.C.D/LEN");
		*(to ? &q->has_to : &q->has_from) = true;
	} else if (strcmp(w, "dport") == 0 || strcmp(w, "sport") == 0) {
		bool d = w[0] == 'd';

		if (parse_range(v, d ? &q->dport : &q->sport))
			BAD("port range", "P or P-P, 0..65535");
		*(d ? &q->has_dport : &q->has_sport) = true;
	} else if (strcmp(w, "len") == 0) {
		if (parse_range(v, &q->len))
			BAD("length range", "N or N-N, 0..65535");
		q->has_len = true;
	} else if (strcmp(w, "dscp") == 0) {
		q->dscp = parse_dscp(v);
		if (q->dscp < 0)
			BAD("DSCP", "0..63, ef, csN, afXY");
	} else if (strcmp(w, "fwmark") == 0) {
		if (parse_mark(v, &q->mark, &q->mark_mask))
			BAD("fwmark", "MARK or MARK/MASK, mask not 0");
		q->has_mark = true;
	} else if (strcmp(w, "intent") == 0) {
		size_t i;

		if (q->mode >= 0 && !q->intent) {
			err_msg("rule add: give mode or intent, not both");
			return -1;
		}
		for (i = 0; i < sizeof(intents) / sizeof(intents[0]); i++)
			if (strcmp(v, intents[i].name) == 0)
				break;
		if (i == sizeof(intents) / sizeof(intents[0]))
			BAD("intent", "interactive, bulk, critical, background");
		q->mode = intents[i].mode;
		q->intent = intents[i].name;
	} else if (strcmp(w, "mode") == 0) {
		if (q->intent) {
			err_msg("rule add: give mode or intent, not both");
			return -1;
		}
		q->mode = name_index(v, mode_names, 6);
		if (strcmp(v, "tf") == 0)
			q->mode = MPIP_RULE_MODE_ALL;
		else if (strcmp(v, "rf") == 0)
			q->mode = MPIP_RULE_MODE_SINGLE;
		if (q->mode < 0)
			BAD("mode", "all, tf, single, rf, selected, protected, original, off");
	} else if (strcmp(w, "fallback") == 0) {
		q->fallback = name_index(v, fallback_names, 3);
		if (q->fallback < 0)
			BAD("fallback", "any, original, drop");
	} else if (strcmp(w, "copies") == 0) {
		if (parse_num(v, 8, &n) || n < 2)
			BAD("number of copies", "2..8");
		q->copies = (int)n;
	} else if (strcmp(w, "dev") == 0 || strcmp(w, "nodev") == 0) {
		int deny = w[0] == 'n';

		if (q->ifs_deny >= 0 && q->ifs_deny != deny) {
			err_msg("rule add: dev and nodev do not mix");
			return -1;
		}
		if (q->nifs == RULE_MAX_IFS) {
			err_msg("rule add: more than %d interfaces", RULE_MAX_IFS);
			return -1;
		}
		if (!*v || strlen(v) >= IF_NAMESIZE)
			BAD("interface name", "1 to 15 bytes");
		q->ifs_deny = deny;
		q->ifs[q->nifs++] = v;
	} else {
		err_msg("rule add: unknown keyword '%s' (" RULE_USAGE ")", w);
		return -1;
	}
#undef BAD
	return 0;
}

static int rule_parse(int argc, char **argv, struct rule_req *q)
{
	int i, used;

	memset(q, 0, sizeof(*q));
	q->proto = q->dscp = q->mode = q->fallback = q->ifs_deny = -1;
	for (i = 0; i < argc; i += 1 + used)
		if (rule_word(q, argv[i], i + 1 < argc ? argv[i + 1] : NULL,
			      &used) < 0)
			return -1;
	if (q->mode < 0) {
		err_msg("rule add: missing mode or intent (" RULE_USAGE ")");
		return -1;
	}
	return 0;
}

static int put_range(struct nl_msg *m, int type, bool has,
		     const struct mpip_rule_range *r)
{
	return has ? nla_put(m, type, sizeof(*r), r) : 0;
}

/* The request's MPIP_A_RULE; interface names looked up here. */
static int rule_put(struct nl_msg *m, const struct rule_req *q)
{
	uint32_t ifs[RULE_MAX_IFS];
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(m, MPIP_A_RULE | NLA_F_NESTED);
	if (!nest ||
	    (q->pref && nla_put_u32(m, MPIP_RULE_A_PREF, q->pref) < 0) ||
	    (q->proto >= 0 && nla_put_u8(m, MPIP_RULE_A_PROTO, q->proto) < 0) ||
	    (q->has_to && (nla_put_u32(m, MPIP_RULE_A_DADDR, q->to) < 0 ||
			   nla_put_u8(m, MPIP_RULE_A_DPLEN, q->to_len) < 0)) ||
	    (q->has_from && (nla_put_u32(m, MPIP_RULE_A_SADDR, q->from) < 0 ||
			     nla_put_u8(m, MPIP_RULE_A_SPLEN, q->from_len) < 0)) ||
	    put_range(m, MPIP_RULE_A_DPORT, q->has_dport, &q->dport) < 0 ||
	    put_range(m, MPIP_RULE_A_SPORT, q->has_sport, &q->sport) < 0 ||
	    put_range(m, MPIP_RULE_A_LEN, q->has_len, &q->len) < 0 ||
	    (q->dscp >= 0 && nla_put_u8(m, MPIP_RULE_A_DSCP, q->dscp) < 0) ||
	    (q->has_mark && (nla_put_u32(m, MPIP_RULE_A_MARK, q->mark) < 0 ||
			     nla_put_u32(m, MPIP_RULE_A_MARK_MASK, q->mark_mask) < 0)) ||
	    (q->pure_ack && nla_put_flag(m, MPIP_RULE_A_PURE_ACK) < 0) ||
	    nla_put_u8(m, MPIP_RULE_A_MODE, q->mode) < 0 ||
	    (q->fallback >= 0 && nla_put_u8(m, MPIP_RULE_A_FALLBACK, q->fallback) < 0) ||
	    (q->copies && nla_put_u8(m, MPIP_RULE_A_COPIES, q->copies) < 0) ||
	    (q->nometered && nla_put_flag(m, MPIP_RULE_A_NOMETERED) < 0) ||
	    (q->ifs_deny == 1 && nla_put_flag(m, MPIP_RULE_A_IFS_DENY) < 0))
		goto nomem;
	for (i = 0; i < q->nifs; i++) {
		ifs[i] = if_nametoindex(q->ifs[i]);
		if (!ifs[i]) {
			err_msg("rule add: no interface '%s'", q->ifs[i]);
			return -1;
		}
	}
	if (q->nifs &&
	    nla_put(m, MPIP_RULE_A_IFS, q->nifs * sizeof(ifs[0]), ifs) < 0)
		goto nomem;
	nla_nest_end(m, nest);
	return 0;
nomem:
	err_msg("out of memory");
	return -1;
}

static int rule_send(struct ctx *c, uint8_t cmd, const struct rule_req *q,
		     uint32_t del_pref)
{
	struct nl_msg *m = mpip_req(c, cmd, 0);
	struct nlattr *nest;

	if (!m)
		return EXIT_FAIL;
	if (cmd == MPIP_CMD_RULE_ADD && rule_put(m, q) < 0) {
		nlmsg_free(m);
		return EXIT_FAIL;
	}
	if (cmd == MPIP_CMD_RULE_DEL) {
		nest = nla_nest_start(m, MPIP_A_RULE | NLA_F_NESTED);
		if (!nest || nla_put_u32(m, MPIP_RULE_A_PREF, del_pref) < 0) {
			nlmsg_free(m);
			err_msg("out of memory");
			return EXIT_FAIL;
		}
		nla_nest_end(m, nest);
	}
	return mpip_run(c, m, NULL, NULL);
}

int cmd_rule(struct ctx *c, int argc, char **argv)
{
	struct rule_req q;
	uint64_t pref = 0;
	uint8_t cmd;
	int ret;

	if (argc < 2) {
		err_msg("rule: missing add, del or flush (" RULE_USAGE ")");
		return EXIT_FAIL;
	}
	if (strcmp(argv[1], "add") == 0) {
		if (rule_parse(argc - 2, argv + 2, &q) < 0)
			return EXIT_FAIL;
		cmd = MPIP_CMD_RULE_ADD;
	} else if (strcmp(argv[1], "del") == 0) {
		if (argc != 4 || strcmp(argv[2], "pref") != 0 ||
		    parse_num(argv[3], 0xffffffff, &pref) || !pref) {
			err_msg("rule del: which rule? (usage: mpipctl rule del pref N)");
			return EXIT_FAIL;
		}
		cmd = MPIP_CMD_RULE_DEL;
	} else if (strcmp(argv[1], "flush") == 0) {
		if (argc > 2) {
			err_msg("rule flush: unexpected argument '%s'", argv[2]);
			return EXIT_FAIL;
		}
		cmd = MPIP_CMD_RULE_FLUSH;
	} else {
		err_msg("rule: unknown subcommand '%s' (" RULE_USAGE "; the rules: mpipctl show rules)",
			argv[1]);
		return EXIT_FAIL;
	}
	ret = mpip_open(c);
	if (ret != EXIT_OK)
		return ret;
	ret = rule_send(c, cmd, &q, (uint32_t)pref);
	mpip_close(c);
	return ret;
}

/* "show rules": one rule per message. */

static struct nla_policy rule_policy[MPIP_RULE_A_MAX + 1] = {
	[MPIP_RULE_A_PREF]	= { .type = NLA_U32 },
	[MPIP_RULE_A_PROTO]	= { .type = NLA_U8 },
	[MPIP_RULE_A_DADDR]	= { .type = NLA_U32 },
	[MPIP_RULE_A_DPLEN]	= { .type = NLA_U8 },
	[MPIP_RULE_A_SADDR]	= { .type = NLA_U32 },
	[MPIP_RULE_A_SPLEN]	= { .type = NLA_U8 },
	[MPIP_RULE_A_DPORT]	= { .minlen = sizeof(struct mpip_rule_range) },
	[MPIP_RULE_A_SPORT]	= { .minlen = sizeof(struct mpip_rule_range) },
	[MPIP_RULE_A_LEN]	= { .minlen = sizeof(struct mpip_rule_range) },
	[MPIP_RULE_A_DSCP]	= { .type = NLA_U8 },
	[MPIP_RULE_A_MARK]	= { .type = NLA_U32 },
	[MPIP_RULE_A_MARK_MASK]	= { .type = NLA_U32 },
	[MPIP_RULE_A_PURE_ACK]	= { .type = NLA_FLAG },
	[MPIP_RULE_A_MODE]	= { .type = NLA_U8 },
	[MPIP_RULE_A_FALLBACK]	= { .type = NLA_U8 },
	[MPIP_RULE_A_IFS]	= { .minlen = 4 },
	[MPIP_RULE_A_IFS_DENY]	= { .type = NLA_FLAG },
	[MPIP_RULE_A_PKTS]	= { .type = NLA_U64 },
	[MPIP_RULE_A_BYTES]	= { .type = NLA_U64 },
	[MPIP_RULE_A_COPIES]	= { .type = NLA_U8 },
	[MPIP_RULE_A_NOMETERED]	= { .type = NLA_FLAG },
};

static const char *enum_name(unsigned int v, const char *const *names,
			     unsigned int n, char *buf, size_t len)
{
	if (v < n)
		return names[v];
	snprintf(buf, len, "%u", v);
	return buf;
}

/* Append the text form of @r's keys and action to @s (ip-rule style). */
static void rule_text(struct nlattr **tb, char *s, size_t len)
{
	char a[INET_ADDRSTRLEN], nb[16], ifn[IF_NAMESIZE];
	struct mpip_rule_range rg;
	uint32_t idx;
	size_t o = 0;
	int i;

#define ADD(...) (o += (size_t)snprintf(s + o, o < len ? len - o : 0, __VA_ARGS__))
	s[0] = '\0';
	if (tb[MPIP_RULE_A_PROTO])
		ADD("proto %s ", proto_name(nla_get_u8(tb[MPIP_RULE_A_PROTO]),
					    nb, sizeof(nb)));
	if (tb[MPIP_RULE_A_DADDR] && tb[MPIP_RULE_A_DPLEN])
		ADD("to %s/%u ", fmt_addr(nla_get_u32(tb[MPIP_RULE_A_DADDR]), a, sizeof(a)),
		    nla_get_u8(tb[MPIP_RULE_A_DPLEN]));
	if (tb[MPIP_RULE_A_SADDR] && tb[MPIP_RULE_A_SPLEN])
		ADD("from %s/%u ", fmt_addr(nla_get_u32(tb[MPIP_RULE_A_SADDR]), a, sizeof(a)),
		    nla_get_u8(tb[MPIP_RULE_A_SPLEN]));
	if (tb[MPIP_RULE_A_DPORT]) {
		memcpy(&rg, nla_data(tb[MPIP_RULE_A_DPORT]), sizeof(rg));
		ADD("dport %u-%u ", rg.start, rg.end);
	}
	if (tb[MPIP_RULE_A_SPORT]) {
		memcpy(&rg, nla_data(tb[MPIP_RULE_A_SPORT]), sizeof(rg));
		ADD("sport %u-%u ", rg.start, rg.end);
	}
	if (tb[MPIP_RULE_A_LEN]) {
		memcpy(&rg, nla_data(tb[MPIP_RULE_A_LEN]), sizeof(rg));
		ADD("len %u-%u ", rg.start, rg.end);
	}
	if (tb[MPIP_RULE_A_DSCP])
		ADD("dscp %u ", nla_get_u8(tb[MPIP_RULE_A_DSCP]));
	if (tb[MPIP_RULE_A_MARK])
		ADD("fwmark 0x%x/0x%x ", nla_get_u32(tb[MPIP_RULE_A_MARK]),
		    tb[MPIP_RULE_A_MARK_MASK] ?
		    nla_get_u32(tb[MPIP_RULE_A_MARK_MASK]) : 0xffffffffu);
	if (tb[MPIP_RULE_A_PURE_ACK])
		ADD("pure-ack ");
	ADD("mode %s", enum_name(nla_get_u8(tb[MPIP_RULE_A_MODE]), mode_names,
				 6, nb, sizeof(nb)));
	for (i = 0; tb[MPIP_RULE_A_IFS] &&
		    i + 4 <= nla_len(tb[MPIP_RULE_A_IFS]); i += 4) {
		memcpy(&idx, (char *)nla_data(tb[MPIP_RULE_A_IFS]) + i, 4);
		if (!if_indextoname(idx, ifn))
			snprintf(ifn, sizeof(ifn), "#%u", idx);
		ADD(" %s %s", tb[MPIP_RULE_A_IFS_DENY] ? "nodev" : "dev", ifn);
	}
	if (tb[MPIP_RULE_A_NOMETERED])
		ADD(" nometered");
	/* two, the default, is not shown */
	if (tb[MPIP_RULE_A_COPIES] && nla_get_u8(tb[MPIP_RULE_A_COPIES]) != 2)
		ADD(" copies %u", nla_get_u8(tb[MPIP_RULE_A_COPIES]));
	if (tb[MPIP_RULE_A_FALLBACK] && nla_get_u8(tb[MPIP_RULE_A_FALLBACK]))
		ADD(" fallback %s", enum_name(nla_get_u8(tb[MPIP_RULE_A_FALLBACK]),
					      fallback_names, 3, nb, sizeof(nb)));
#undef ADD
}

/*
 * A dumped rule (MPIP_A_RULE @nest): its preference, its text as "rule
 * add" takes it, and its counters (0 from a module without them).  -1 if
 * the nest is malformed.
 */
int rule_describe(struct nlattr *nest, struct rule_desc *d)
{
	struct nlattr *tb[MPIP_RULE_A_MAX + 1];

	if (!nest ||
	    nla_parse_nested(tb, MPIP_RULE_A_MAX, nest, rule_policy) < 0 ||
	    !tb[MPIP_RULE_A_PREF] || !tb[MPIP_RULE_A_MODE])
		return -1;
	d->pref = nla_get_u32(tb[MPIP_RULE_A_PREF]);
	d->pkts = tb[MPIP_RULE_A_PKTS] ? nla_get_u64(tb[MPIP_RULE_A_PKTS]) : 0;
	d->bytes = tb[MPIP_RULE_A_BYTES] ? nla_get_u64(tb[MPIP_RULE_A_BYTES]) : 0;
	rule_text(tb, d->text, sizeof(d->text));
	return 0;
}
