// SPDX-License-Identifier: GPL-2.0
/*
 * mpip routing rules: checking, matching, table changes and reading a
 * packet's keys (rule.h).  Portable: no kernel API.
 */
#include "rule.h"

#define IPPROTO_TCP_	6
#define IPPROTO_UDP_	17
#define TCP_FIN_	0x01
#define TCP_SYN_	0x02
#define TCP_RST_	0x04
#define TCP_ACK_	0x10

static const char *const rule_errs[] = {
	[-MPIP_RULE_E_MATCH] = "unknown match key",
	[-MPIP_RULE_E_PLEN] = "prefix length over 32",
	[-MPIP_RULE_E_HOSTBITS] = "address has bits set past its prefix length",
	[-MPIP_RULE_E_RANGE] = "range ends below its start",
	[-MPIP_RULE_E_PORTPROTO] = "ports need proto tcp or udp",
	[-MPIP_RULE_E_ACKPROTO] = "pure-ack needs proto tcp",
	[-MPIP_RULE_E_DSCP] = "DSCP over 63",
	[-MPIP_RULE_E_MASK] = "fwmark mask is 0",
	[-MPIP_RULE_E_MODE] = "unknown mode or fallback",
	[-MPIP_RULE_E_COPIES] = "copies go with mode protected, 2 to 8",
	[-MPIP_RULE_E_IFS] =
		"dev/nodev go with modes selected (which needs them), single, protected; up to 8",
	[-MPIP_RULE_E_EXIST] = "a rule has this preference",
	[-MPIP_RULE_E_NOENT] = "no rule has this preference",
	[-MPIP_RULE_E_FULL] = "the table is full",
	[-MPIP_RULE_E_METERED] =
		"nometered goes with modes all, single, selected and protected",
	[-MPIP_RULE_E_NOPREF] = "no preference left below the first rule's",
};

const char *mpip_rule_strerror(int err)
{
	if (err >= 0 || -err >= (int)ARRAY_SIZE(rule_errs))
		return "unknown error";
	return rule_errs[-err];
}

/* A big-endian address as a number, whatever the host's byte order. */
static u32 addr_host(u32 wire)
{
	u8 b[4];

	memcpy(b, &wire, 4);
	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}

static u32 plen_mask(u8 plen)
{
	return plen ? ~(u32)0 << (32 - plen) : 0;
}

static int check_prefix(u32 addr, u8 plen)
{
	if (plen > 32)
		return MPIP_RULE_E_PLEN;
	if (addr_host(addr) & ~plen_mask(plen))
		return MPIP_RULE_E_HOSTBITS;
	return 0;
}

static int check_keys(const struct mpip_rule *r)
{
	bool tcp_udp = (r->match & MPIP_RM_PROTO) &&
		       (r->proto == IPPROTO_TCP_ || r->proto == IPPROTO_UDP_);
	int err;

	if (r->match & ~(u32)MPIP_RM_ALL)
		return MPIP_RULE_E_MATCH;
	err = r->match & MPIP_RM_DST ? check_prefix(r->daddr, r->dplen) : 0;
	if (!err && (r->match & MPIP_RM_SRC))
		err = check_prefix(r->saddr, r->splen);
	if (err)
		return err;
	if (((r->match & MPIP_RM_DPORT) && r->dport_lo > r->dport_hi) ||
	    ((r->match & MPIP_RM_SPORT) && r->sport_lo > r->sport_hi) ||
	    ((r->match & MPIP_RM_LEN) && r->len_lo > r->len_hi))
		return MPIP_RULE_E_RANGE;
	if ((r->match & (MPIP_RM_DPORT | MPIP_RM_SPORT)) && !tcp_udp)
		return MPIP_RULE_E_PORTPROTO;
	if ((r->match & MPIP_RM_PURE_ACK) &&
	    (!(r->match & MPIP_RM_PROTO) || r->proto != IPPROTO_TCP_))
		return MPIP_RULE_E_ACKPROTO;
	if ((r->match & MPIP_RM_DSCP) && r->dscp > 63)
		return MPIP_RULE_E_DSCP;
	if ((r->match & MPIP_RM_MARK) && !r->mark_mask)
		return MPIP_RULE_E_MASK;
	return 0;
}

/* May a rule of mode @mode have a dev or nodev list? */
static bool mode_takes_ifs(u8 mode)
{
	return mode == MPIP_MODE_SELECTED || mode == MPIP_MODE_SINGLE ||
	       mode == MPIP_MODE_PROTECTED;
}

static int check_action(struct mpip_rule *r)
{
	unsigned int i;

	if (r->mode >= MPIP_MODE_COUNT || r->fallback >= MPIP_FALLBACK_COUNT)
		return MPIP_RULE_E_MODE;
	if (r->mode == MPIP_MODE_PROTECTED && !r->copies)
		r->copies = 2;
	if ((r->copies && r->mode != MPIP_MODE_PROTECTED) ||
	    (r->mode == MPIP_MODE_PROTECTED &&
	     (r->copies < 2 || r->copies > MPIP_RULE_MAX_COPIES)))
		return MPIP_RULE_E_COPIES;
	if (r->nifs > MPIP_RULE_MAX_IFS || r->ifs_deny > 1 ||
	    (r->ifs_deny && !r->nifs) ||
	    (r->nifs && !mode_takes_ifs(r->mode)) ||
	    (r->mode == MPIP_MODE_SELECTED && !r->nifs))
		return MPIP_RULE_E_IFS;
	for (i = 0; i < r->nifs; i++)
		if (r->ifs[i] <= 0)
			return MPIP_RULE_E_IFS;
	if (r->nometered > 1 ||
	    (r->nometered && (r->mode == MPIP_MODE_ORIGINAL ||
			      r->mode == MPIP_MODE_OFF)))
		return MPIP_RULE_E_METERED;
	return 0;
}

int mpip_rule_check(struct mpip_rule *r)
{
	int err = check_keys(r);

	return err ? err : check_action(r);
}

static bool prefix_match(u32 addr, u32 net, u8 plen)
{
	return !((addr_host(addr) ^ addr_host(net)) & plen_mask(plen));
}

static bool within(u16 v, u16 lo, u16 hi)
{
	return v >= lo && v <= hi;
}

bool mpip_rule_match(const struct mpip_rule *r, const struct mpip_rule_key *k)
{
	u32 m = r->match;

	if ((m & MPIP_RM_PROTO) && k->proto != r->proto)
		return false;
	if ((m & MPIP_RM_DST) && !prefix_match(k->daddr, r->daddr, r->dplen))
		return false;
	if ((m & MPIP_RM_SRC) && !prefix_match(k->saddr, r->saddr, r->splen))
		return false;
	if ((m & (MPIP_RM_DPORT | MPIP_RM_SPORT | MPIP_RM_PURE_ACK)) &&
	    !k->has_ports)
		return false;
	if ((m & MPIP_RM_DPORT) && !within(k->dport, r->dport_lo, r->dport_hi))
		return false;
	if ((m & MPIP_RM_SPORT) && !within(k->sport, r->sport_lo, r->sport_hi))
		return false;
	if ((m & MPIP_RM_LEN) && !within(k->len, r->len_lo, r->len_hi))
		return false;
	if ((m & MPIP_RM_DSCP) && k->dscp != r->dscp)
		return false;
	if ((m & MPIP_RM_MARK) && (k->mark & r->mark_mask) != r->mark)
		return false;
	if ((m & MPIP_RM_PURE_ACK) && !k->pure_ack)
		return false;
	return true;
}

const struct mpip_rule *mpip_rules_lookup(const struct mpip_rules *t,
					  const struct mpip_rule_key *k)
{
	u32 i;

	for (i = 0; t && i < t->n; i++)
		if (mpip_rule_match(&t->r[i], k))
			return &t->r[i];
	return NULL;
}

/*
 * The packed key: word 0 the destination and source addresses as numbers
 * (so that a prefix is a run of high bits), word 1 the fwmark, protocol,
 * DSCP and two flags.  PK_NEVER is 0 in every packet's key: a rule that
 * can match nothing wants it 1.
 */
#define PK_PROTO_SHIFT	24
#define PK_DSCP_SHIFT	16
#define PK_PURE_ACK	0x100
#define PK_NEVER	0x2
#define PK_HAS_PORTS	0x1

struct rule_pkey {
	u64 w[2];
	u16 v[3];
};

static void pkey_of(const struct mpip_rule_key *k, struct rule_pkey *pk)
{
	pk->w[0] = (u64)addr_host(k->daddr) << 32 | addr_host(k->saddr);
	pk->w[1] = (u64)k->mark << 32 | (u32)k->proto << PK_PROTO_SHIFT |
		   (u32)k->dscp << PK_DSCP_SHIFT |
		   (k->pure_ack ? PK_PURE_ACK : 0) |
		   (k->has_ports ? PK_HAS_PORTS : 0);
	pk->v[0] = k->dport;
	pk->v[1] = k->sport;
	pk->v[2] = k->len;
}

/* Range @i of @f: [@lo, @hi] if @m tests it, else every value. */
static void fast_range(struct mpip_rule_fast *f, unsigned int i, bool m,
		       u16 lo, u16 hi)
{
	f->lo[i] = m ? lo : 0;
	f->span[i] = m ? hi - lo : 0xffff;
}

/* Test the bits @mask of word @w of the packed key for @val. */
static void fast_key(struct mpip_rule_fast *f, unsigned int w, u64 mask,
		     u64 val)
{
	f->mask[w] |= mask;
	f->val[w] |= val;
}

static void rule_compile(const struct mpip_rule *r, struct mpip_rule_fast *f)
{
	u32 m = r->match;

	memset(f, 0, sizeof(*f));
	if (m & MPIP_RM_DST)
		fast_key(f, 0, (u64)plen_mask(r->dplen) << 32,
			 (u64)addr_host(r->daddr) << 32);
	if (m & MPIP_RM_SRC)
		fast_key(f, 0, plen_mask(r->splen), addr_host(r->saddr));
	if (m & MPIP_RM_MARK) {
		fast_key(f, 1, (u64)r->mark_mask << 32, (u64)r->mark << 32);
		/* mark bits outside the mask: no packet has them */
		if (r->mark & ~r->mark_mask)
			fast_key(f, 1, PK_NEVER, PK_NEVER);
	}
	if (m & MPIP_RM_PROTO)
		fast_key(f, 1, (u32)0xff << PK_PROTO_SHIFT,
			 (u32)r->proto << PK_PROTO_SHIFT);
	if (m & MPIP_RM_DSCP)
		fast_key(f, 1, (u32)0xff << PK_DSCP_SHIFT,
			 (u32)r->dscp << PK_DSCP_SHIFT);
	if (m & MPIP_RM_PURE_ACK)
		fast_key(f, 1, PK_PURE_ACK, PK_PURE_ACK);
	if (m & (MPIP_RM_DPORT | MPIP_RM_SPORT | MPIP_RM_PURE_ACK))
		fast_key(f, 1, PK_HAS_PORTS, PK_HAS_PORTS);
	fast_range(f, 0, m & MPIP_RM_DPORT, r->dport_lo, r->dport_hi);
	fast_range(f, 1, m & MPIP_RM_SPORT, r->sport_lo, r->sport_hi);
	fast_range(f, 2, m & MPIP_RM_LEN, r->len_lo, r->len_hi);
}

void mpip_rules_compile(const struct mpip_rules *t, struct mpip_rule_fast *out)
{
	u32 i;

	for (i = 0; i < t->n; i++)
		rule_compile(&t->r[i], &out[i]);
}

static bool fast_match(const struct mpip_rule_fast *f,
		       const struct rule_pkey *pk)
{
	return !(((pk->w[0] ^ f->val[0]) & f->mask[0]) |
		 ((pk->w[1] ^ f->val[1]) & f->mask[1])) &&
	       (u16)(pk->v[0] - f->lo[0]) <= f->span[0] &&
	       (u16)(pk->v[1] - f->lo[1]) <= f->span[1] &&
	       (u16)(pk->v[2] - f->lo[2]) <= f->span[2];
}

int mpip_rules_match(const struct mpip_rule_fast *f, u32 n,
		     const struct mpip_rule_key *k)
{
	struct rule_pkey pk;
	u32 i;

	pkey_of(k, &pk);
	for (i = 0; i < n; i++)
		if (fast_match(&f[i], &pk))
			return (int)i;
	return -1;
}

/* Index of the first rule of @t with a pref of at least @pref. */
static u32 rules_find(const struct mpip_rules *t, u32 pref)
{
	u32 lo = 0, hi = t->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->r[mid].pref < pref)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int mpip_rules_add(const struct mpip_rules *old, struct mpip_rule *r,
		   bool replace, struct mpip_rules *out)
{
	bool same;
	u32 i;

	if (r->pref == MPIP_RULE_PREF_AUTO) {
		if (!old->n)
			r->pref = MPIP_RULE_PREF_FIRST;
		else if (old->r[0].pref > 1)
			r->pref = old->r[0].pref - 1;
		else
			return MPIP_RULE_E_NOPREF;
	}
	i = rules_find(old, r->pref);
	same = i < old->n && old->r[i].pref == r->pref;
	if (same && !replace)
		return MPIP_RULE_E_EXIST;
	if (!same && old->n >= MPIP_RULES_MAX)
		return MPIP_RULE_E_FULL;
	memcpy(out->r, old->r, i * sizeof(old->r[0]));
	out->r[i] = *r;
	if (same) {
		out->r[i].pkts = old->r[i].pkts;
		out->r[i].bytes = old->r[i].bytes;
		i++;
	}
	memcpy(&out->r[i + !same], &old->r[i],
	       (old->n - i) * sizeof(old->r[0]));
	out->n = old->n + !same;
	return 0;
}

int mpip_rules_del(const struct mpip_rules *old, u32 pref,
		   struct mpip_rules *out)
{
	u32 i = rules_find(old, pref);

	if (i == old->n || old->r[i].pref != pref)
		return MPIP_RULE_E_NOENT;
	memcpy(out->r, old->r, i * sizeof(old->r[0]));
	memcpy(&out->r[i], &old->r[i + 1],
	       (old->n - i - 1) * sizeof(old->r[0]));
	out->n = old->n - 1;
	return 0;
}

/* The transport part of mpip_rule_key_parse(): @l4 has @len bytes. */
static void parse_l4(const u8 *l4, unsigned int len, unsigned int l4len,
		     struct mpip_rule_key *k)
{
	unsigned int doff;
	u8 flags;

	if (len < 4)
		return;
	k->sport = (u16)(l4[0] << 8 | l4[1]);
	k->dport = (u16)(l4[2] << 8 | l4[3]);
	k->has_ports = 1;
	if (k->proto != IPPROTO_TCP_ || len < 14)
		return;
	doff = (l4[12] >> 4) * 4;
	flags = l4[13];
	k->pure_ack = doff >= 20 && doff == l4len && (flags & TCP_ACK_) &&
		      !(flags & (TCP_SYN_ | TCP_FIN_ | TCP_RST_));
}

int mpip_rule_key_parse(const u8 *pkt, unsigned int len, u32 mark,
			struct mpip_rule_key *k)
{
	unsigned int ihl, tot;

	memset(k, 0, sizeof(*k));
	if (len < 20 || pkt[0] >> 4 != 4)
		return -1;
	ihl = (pkt[0] & 0x0f) * 4;
	tot = (unsigned int)pkt[2] << 8 | pkt[3];
	if (ihl < 20 || ihl > len || tot < ihl)
		return -1;
	k->dscp = pkt[1] >> 2;
	k->len = (u16)tot;
	k->proto = pkt[9];
	memcpy(&k->saddr, pkt + 12, 4);
	memcpy(&k->daddr, pkt + 16, 4);
	k->mark = mark;
	/* ports only in a first fragment (offset 0) of TCP or UDP */
	if ((pkt[6] & 0x1f) || pkt[7])
		return 0;
	if (k->proto != IPPROTO_TCP_ && k->proto != IPPROTO_UDP_)
		return 0;
	parse_l4(pkt + ihl, (len < tot ? len : tot) - ihl, tot - ihl, k);
	return 0;
}

bool mpip_rule_link_ok(const struct mpip_rule *r, int ifindex)
{
	unsigned int i;

	if (!r->nifs)
		return true;
	for (i = 0; i < r->nifs; i++)
		if (r->ifs[i] == ifindex)
			return !r->ifs_deny;
	return r->ifs_deny;
}
