/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip routing rules (issue 22; the paper's Table 7): which packets of
 * local MPIP sessions go over which paths.  Portable: no kernel API, unit
 * tested and fuzzed on the host.
 *
 * A table is an array of rules sorted by preference (lowest first), as
 * `ip rule` orders its own; the first rule whose every key matches a
 * packet decides its mode.  No match means MPIP_MODE_ALL, the paper's
 * default.  Tables are never changed in place: mpip_rules_add() and
 * mpip_rules_del() write a new table next to the old one, so that the
 * kernel can publish it with RCU while readers walk the old one.
 *
 * Keys are read from the packet as the flow's own socket sent it: before
 * any rewriting and without a trailer.  Addresses are IPv4 in network
 * byte order, as on the wire; ports and lengths in host order.
 */
#ifndef MPIP_CORE_RULE_H
#define MPIP_CORE_RULE_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#define MPIP_RULES_MAX		1024	/* rules per table */
#define MPIP_RULE_MAX_IFS	8	/* interfaces in a dev / nodev list */
#define MPIP_RULE_MAX_COPIES	8	/* copies of a protected packet */
#define MPIP_RULE_PREF_AUTO	0	/* add: pick one below the first */
#define MPIP_RULE_PREF_FIRST	32000	/* what the first automatic one gets */

/* Keys a rule tests (struct mpip_rule.match). */
#define MPIP_RM_PROTO		0x001
#define MPIP_RM_DST		0x002	/* destination prefix */
#define MPIP_RM_SRC		0x004	/* source prefix */
#define MPIP_RM_DPORT		0x008	/* destination port range */
#define MPIP_RM_SPORT		0x010	/* source port range */
#define MPIP_RM_LEN		0x020	/* IP total length range */
#define MPIP_RM_DSCP		0x040
#define MPIP_RM_MARK		0x080	/* fwmark under a mask */
#define MPIP_RM_PURE_ACK	0x100	/* TCP: ACK only, no payload */
#define MPIP_RM_ALL		0x1ff
/* Keys that differ between packets of one flow. */
#define MPIP_RM_PER_PACKET	(MPIP_RM_LEN | MPIP_RM_PURE_ACK)

enum mpip_rmode {
	MPIP_MODE_ALL,		/* weighted over all paths up (paper: TF) */
	MPIP_MODE_SINGLE,	/* one path, the lowest delay (paper: RF) */
	MPIP_MODE_SELECTED,	/* weighted over the paths of listed links */
	MPIP_MODE_PROTECTED,	/* copies on distinct paths */
	MPIP_MODE_ORIGINAL,	/* the flow's own path only */
	MPIP_MODE_OFF,		/* mpip leaves the flow alone */
	MPIP_MODE_COUNT,
};

enum mpip_rfallback {
	MPIP_FALLBACK_ANY,	/* no path the rule allows is up: any path */
	MPIP_FALLBACK_ORIGINAL,	/* ... the flow's own path */
	MPIP_FALLBACK_DROP,	/* ... drop the packet */
	MPIP_FALLBACK_COUNT,
};

/* What a packet offers the rules. */
struct mpip_rule_key {
	u32 saddr;		/* network byte order */
	u32 daddr;
	u32 mark;
	u16 sport;		/* 0 when the packet has no ports */
	u16 dport;
	u16 len;		/* IP total length, no trailer */
	u8 proto;
	u8 dscp;		/* 0..63 */
	u8 pure_ack;		/* 1: TCP, ACK set, no SYN/FIN/RST, no data */
	u8 has_ports;		/* 1: TCP or UDP, first fragment */
};

struct mpip_rule {
	u32 pref;
	u32 match;		/* MPIP_RM_* */
	u32 daddr;		/* network byte order, no bits past the prefix */
	u32 saddr;
	u8 dplen;		/* 0..32 */
	u8 splen;
	u8 proto;
	u8 dscp;
	u16 dport_lo, dport_hi;	/* inclusive */
	u16 sport_lo, sport_hi;
	u16 len_lo, len_hi;
	u32 mark;
	u32 mark_mask;		/* not 0 when MPIP_RM_MARK */
	/* what to do with a packet that matches */
	u8 mode;		/* enum mpip_rmode */
	u8 fallback;		/* enum mpip_rfallback */
	u8 copies;		/* MPIP_MODE_PROTECTED: 2..MPIP_RULE_MAX_COPIES */
	u8 nifs;		/* entries of @ifs: selected (1 or more), */
				/* single, protected (0 or more) */
	u8 ifs_deny;		/* 1: @ifs lists the links not to use */
	u8 nometered;		/* 1: no path from a metered link */
	int ifs[MPIP_RULE_MAX_IFS];
	/* counters, kept by the user of the table */
	u64 pkts;
	u64 bytes;
};

struct mpip_rules {
	u32 n;
	struct mpip_rule r[];	/* by pref, lowest first, prefs unique */
};

/* Errors (negative); each has a message from mpip_rule_strerror(). */
enum mpip_rule_err {
	MPIP_RULE_E_MATCH = -1,		/* unknown bit in match */
	MPIP_RULE_E_PLEN = -2,		/* prefix length over 32 */
	MPIP_RULE_E_HOSTBITS = -3,	/* address bits past the prefix */
	MPIP_RULE_E_RANGE = -4,		/* a range's low end above its high end */
	MPIP_RULE_E_PORTPROTO = -5,	/* ports without proto tcp or udp */
	MPIP_RULE_E_ACKPROTO = -6,	/* pure-ack without proto tcp */
	MPIP_RULE_E_DSCP = -7,		/* DSCP over 63 */
	MPIP_RULE_E_MASK = -8,		/* fwmark mask 0 */
	MPIP_RULE_E_MODE = -9,		/* unknown mode or fallback */
	MPIP_RULE_E_COPIES = -10,	/* copies out of range, or not protected */
	MPIP_RULE_E_IFS = -11,		/* dev list: bad, or not mode selected */
	MPIP_RULE_E_EXIST = -12,	/* a rule has this pref */
	MPIP_RULE_E_NOENT = -13,	/* no rule has this pref */
	MPIP_RULE_E_FULL = -14,		/* MPIP_RULES_MAX rules */
	MPIP_RULE_E_NOPREF = -15,	/* no automatic pref left below the first */
	MPIP_RULE_E_METERED = -16,	/* nometered, not a mode that picks paths */
};

const char *mpip_rule_strerror(int err);

/*
 * Is @r a rule a table may hold?  0 or an enum mpip_rule_err.  A
 * protected rule with @copies 0 is given 2 (the only field changed).
 */
int mpip_rule_check(struct mpip_rule *r);

/* Does packet @k match every key @r tests? */
bool mpip_rule_match(const struct mpip_rule *r, const struct mpip_rule_key *k);

/*
 * The first rule of @t that @k matches, or NULL (mode all): rule by rule
 * with mpip_rule_match().  The packet path uses the compiled form below.
 */
const struct mpip_rule *mpip_rules_lookup(const struct mpip_rules *t,
					  const struct mpip_rule_key *k);

/*
 * A rule compiled for the packet path (mpip_rules_compile()): its exact
 * and prefix keys as (mask, value) pairs over the packed key of a packet,
 * two 64-bit words, and its three ranges as (low end, width).  A key the
 * rule does not test has mask 0 or the full range, so a match is the same
 * five tests for every rule, without a branch per key, and a table of
 * them takes half the memory of its rules.  mpip_rules_lookup() is the
 * definition it is tested against.
 */
struct mpip_rule_fast {
	u64 mask[2];
	u64 val[2];
	u16 lo[3];		/* dport, sport, len */
	u16 span[3];		/* high end - low end */
};

/* Write the compiled form of @t's rules into @out (@t->n entries). */
void mpip_rules_compile(const struct mpip_rules *t, struct mpip_rule_fast *out);

/*
 * The index of the first of the @n compiled rules at @f that @k matches,
 * or -1: the index mpip_rules_lookup() finds in the table they were
 * compiled from.
 */
int mpip_rules_match(const struct mpip_rule_fast *f, u32 n,
		     const struct mpip_rule_key *k);

/* Bytes a table of @n rules takes. */
static inline size_t mpip_rules_size(u32 n)
{
	return sizeof(struct mpip_rules) + n * sizeof(struct mpip_rule);
}

/*
 * Write into @out (room for @old's rules and one more) @old with @r
 * added: at @r->pref, or if that is MPIP_RULE_PREF_AUTO, one below the
 * first rule's (MPIP_RULE_PREF_FIRST in an empty table), stored back in
 * @r->pref.  With @replace, a rule of the same pref is replaced (its
 * counters kept), else that is MPIP_RULE_E_EXIST.  @r must pass
 * mpip_rule_check().  0 or an enum mpip_rule_err; @out is then unused.
 */
int mpip_rules_add(const struct mpip_rules *old, struct mpip_rule *r,
		   bool replace, struct mpip_rules *out);

/* Write @old without the rule of @pref into @out: 0 or _E_NOENT. */
int mpip_rules_del(const struct mpip_rules *old, u32 pref,
		   struct mpip_rules *out);

/*
 * Read the keys of an IPv4 packet: @len bytes at @pkt, from its IP
 * header on, at least the IP and transport headers (more is not read);
 * @mark is the packet's fwmark.  0 on success, -1 if the bytes are not
 * an IPv4 header the kernel would have sent.  A packet without ports
 * (another protocol, a later fragment, a transport header cut short)
 * has has_ports 0 and matches no rule that tests ports or pure-ack.
 */
int mpip_rule_key_parse(const u8 *pkt, unsigned int len, u32 mark,
			struct mpip_rule_key *k);

/*
 * May a packet under @r go on a path whose local end is on @ifindex, as
 * its dev or nodev list says?  (Its user checks nometered.)
 */
bool mpip_rule_link_ok(const struct mpip_rule *r, int ifindex);

/*
 * Does @r keep its packets off some links (a dev or nodev list, or
 * nometered)?  Then its fallback applies when none of the paths it
 * allows is up.
 */
static inline bool mpip_rule_restricts(const struct mpip_rule *r)
{
	return r->nifs || r->nometered;
}

#endif /* MPIP_CORE_RULE_H */
