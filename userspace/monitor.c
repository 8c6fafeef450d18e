// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl monitor: print the module's events (MPIP_CMD_EVENT, multicast
 * group MPIP_MCGRP_EVENTS of the namespace) as they happen, one line or
 * one JSON object per line each, until interrupted.  Output is line
 * buffered, so that a pipe or file sees each event when it happens.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "mpipctl.h"

static const char *const event_names[] = {
	[MPIP_EVENT_PEER_FOUND]	= "peer_found",
	[MPIP_EVENT_PEER_LOST]	= "peer_lost",
	[MPIP_EVENT_PATH_UP]	= "path_up",
	[MPIP_EVENT_PATH_DOWN]	= "path_down",
	[MPIP_EVENT_FAILOVER]	= "failover",
	[MPIP_EVENT_FAILBACK]	= "failback",
	[MPIP_EVENT_RULE_HITS]	= "rule_hits",
	[MPIP_EVENT_PATH_NAT]	= "path_nat",
};

/* What a rule event's nest (MPIP_A_RULE) carries */
static struct nla_policy rule_ev_policy[MPIP_RULE_A_MAX + 1] = {
	[MPIP_RULE_A_PREF]	= { .type = NLA_U32 },
	[MPIP_RULE_A_PKTS]	= { .type = NLA_U64 },
	[MPIP_RULE_A_BYTES]	= { .type = NLA_U64 },
};

#define MON_RCVBUF	(1 << 20)

struct mon {
	bool json;
	unsigned long bad;	/* events that could not be read */
};

/*
 * An event's JSON object up to what is common: {"event":.., and for a
 * peer's or a path's event (@id not NULL) "node_id":..
 */
static void ev_json_begin(struct json *j, const char *name, const char *id)
{
	json_init(j, stdout);
	json_obj_begin(j);
	json_key(j, "event");
	json_str(j, name);
	if (id) {
		json_key(j, "node_id");
		json_str(j, id);
	}
}

/* "peer_found: node 0x... (peer 0x...)", or its JSON object; the same
 * for a failover and a failback, with " tier N" (the tier the node's data
 * goes over now) if the module sends it */
static int print_peer(const struct mon *m, const char *name,
		      struct nlattr *nest)
{
	struct nlattr *tb[MPIP_NODE_A_MAX + 1];
	char id[16], peer[16];
	struct json j;

	if (!nest || nla_parse_nested(tb, MPIP_NODE_A_MAX, nest,
				      node_policy) < 0 ||
	    !tb[MPIP_NODE_A_ID] || !tb[MPIP_NODE_A_PEER_ID])
		return -1;
	fmt_node_id(nla_get_u32(tb[MPIP_NODE_A_ID]), id, sizeof(id));
	fmt_node_id(nla_get_u32(tb[MPIP_NODE_A_PEER_ID]), peer, sizeof(peer));
	if (!m->json) {
		printf("%s: node %s (peer %s)", name, id, peer);
		if (tb[MPIP_NODE_A_TIER])
			printf(" tier %u", nla_get_u8(tb[MPIP_NODE_A_TIER]));
		printf("\n");
		return 0;
	}
	ev_json_begin(&j, name, id);
	json_key(&j, "peer_id");
	json_str(&j, peer);
	if (tb[MPIP_NODE_A_TIER]) {
		json_key(&j, "tier");
		json_uint(&j, nla_get_u8(tb[MPIP_NODE_A_TIER]));
	}
	json_obj_end(&j);
	json_finish(&j);
	return 0;
}

/*
 * "path_up: 10.1.1.1 -> 10.1.1.2 dev eth1 state up (node 0x..., path 1)";
 * a path_nat event ends in "seen as ADDR:PORT".
 */
static int print_path(const struct mon *m, const char *name,
		      struct nlattr *nest)
{
	char saddr[INET_ADDRSTRLEN], daddr[INET_ADDRSTRLEN];
	char id[16], sbuf[8], devbuf[IF_NAMESIZE] = "-", seen[24];
	struct nlattr *tb[MPIP_PATH_A_MAX + 1];
	uint32_t ifindex;
	const char *st;
	struct json j;

	if (!nest || nla_parse_nested(tb, MPIP_PATH_A_MAX, nest,
				      path_policy) < 0 ||
	    !tb[MPIP_PATH_A_NODE_ID] || !tb[MPIP_PATH_A_ID] ||
	    !tb[MPIP_PATH_A_SADDR] || !tb[MPIP_PATH_A_DADDR] ||
	    !tb[MPIP_PATH_A_IFINDEX] || !tb[MPIP_PATH_A_STATE])
		return -1;
	fmt_node_id(nla_get_u32(tb[MPIP_PATH_A_NODE_ID]), id, sizeof(id));
	fmt_addr(nla_get_u32(tb[MPIP_PATH_A_SADDR]), saddr, sizeof(saddr));
	fmt_addr(nla_get_u32(tb[MPIP_PATH_A_DADDR]), daddr, sizeof(daddr));
	st = path_state_name(nla_get_u8(tb[MPIP_PATH_A_STATE]), sbuf,
			     sizeof(sbuf));
	ifindex = nla_get_u32(tb[MPIP_PATH_A_IFINDEX]);
	/* the interface may be gone already: then its index */
	if (!if_indextoname(ifindex, devbuf))
		snprintf(devbuf, sizeof(devbuf), "#%u", ifindex);
	fmt_path_seen(tb, seen, sizeof(seen));
	if (!m->json) {
		printf("%s: %s -> %s dev %s state %s (node %s, path %u)%s%s\n",
		       name, saddr, daddr, devbuf, st, id,
		       nla_get_u8(tb[MPIP_PATH_A_ID]),
		       seen[0] ? " seen as " : "", seen);
		return 0;
	}
	ev_json_begin(&j, name, id);
	json_key(&j, "id");
	json_uint(&j, nla_get_u8(tb[MPIP_PATH_A_ID]));
	json_key(&j, "saddr");
	json_str(&j, saddr);
	json_key(&j, "daddr");
	json_str(&j, daddr);
	json_key(&j, "dev");
	json_str(&j, devbuf);
	json_key(&j, "state");
	json_str(&j, st);
	if (seen[0]) {
		json_key(&j, "seen");
		json_str(&j, seen);
	}
	json_obj_end(&j);
	json_finish(&j);
	return 0;
}

/* "rule_hits: pref 100, 20000 packets, 1400000 bytes" */
static int print_rule(const struct mon *m, const char *name,
		      struct nlattr *nest)
{
	struct nlattr *tb[MPIP_RULE_A_MAX + 1];
	unsigned long long pkts, bytes;
	struct json j;
	uint32_t pref;

	if (!nest || nla_parse_nested(tb, MPIP_RULE_A_MAX, nest,
				      rule_ev_policy) < 0 ||
	    !tb[MPIP_RULE_A_PREF] || !tb[MPIP_RULE_A_PKTS] ||
	    !tb[MPIP_RULE_A_BYTES])
		return -1;
	pref = nla_get_u32(tb[MPIP_RULE_A_PREF]);
	pkts = nla_get_u64(tb[MPIP_RULE_A_PKTS]);
	bytes = nla_get_u64(tb[MPIP_RULE_A_BYTES]);
	if (!m->json) {
		printf("%s: pref %u, %llu packets, %llu bytes\n", name, pref,
		       pkts, bytes);
		return 0;
	}
	ev_json_begin(&j, name, NULL);
	json_key(&j, "pref");
	json_uint(&j, pref);
	json_key(&j, "pkts");
	json_uint(&j, pkts);
	json_key(&j, "bytes");
	json_uint(&j, bytes);
	json_obj_end(&j);
	json_finish(&j);
	return 0;
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[MPIP_A_MAX + 1];
	struct mon *m = arg;
	const char *name;
	uint8_t ev;
	int ret;

	if (g->cmd != MPIP_CMD_EVENT)
		return NL_SKIP;
	if (mpip_parse(msg, tb) < 0 || !tb[MPIP_A_EVENT])
		goto bad;
	ev = nla_get_u8(tb[MPIP_A_EVENT]);
	/* a newer module's event: skipped, as its meaning is unknown */
	if (ev >= sizeof(event_names) / sizeof(event_names[0]) ||
	    !event_names[ev])
		return NL_SKIP;
	name = event_names[ev];
	if (ev == MPIP_EVENT_PATH_UP || ev == MPIP_EVENT_PATH_DOWN ||
	    ev == MPIP_EVENT_PATH_NAT)
		ret = print_path(m, name, tb[MPIP_A_PATH]);
	else if (ev == MPIP_EVENT_RULE_HITS)
		ret = print_rule(m, name, tb[MPIP_A_RULE]);
	else
		ret = print_peer(m, name, tb[MPIP_A_NODE]);
	if (ret == 0)
		return NL_OK;
bad:
	if (m->bad++ == 0)
		err_msg("an event could not be read (more are counted quietly)");
	return NL_SKIP;
}

int cmd_monitor(struct ctx *c, int argc, char **argv)
{
	struct mon m = { .json = c->json };
	int grp, ret;

	(void)argc;
	(void)argv;
	if (err_where) {
		err_msg("monitor does not end: not in a batch");
		return EXIT_FAIL;
	}
	grp = genl_ctrl_resolve_grp(c->sk, MPIP_GENL_NAME, MPIP_MCGRP_EVENTS);
	if (grp < 0) {
		err_msg("this mpip module sends no events (%s)",
			nl_geterror(grp));
		return EXIT_FAIL;
	}
	/*
	 * Room for a second's worth of events (MPIP_EVENTS_PER_SEC) and
	 * more: libnl's default of 32 KiB holds about 40, and a burst of
	 * events then overflows it before the first is read.  The kernel
	 * caps the size at net.core.rmem_max.
	 */
	ret = nl_socket_set_buffer_size(c->sk, MON_RCVBUF, 0);
	if (ret < 0)
		err_msg("cannot enlarge the socket's buffer: %s (going on)",
			nl_geterror(ret));
	ret = nl_socket_add_membership(c->sk, grp);
	if (ret < 0) {
		err_msg("cannot listen to mpip events: %s", nl_geterror(ret));
		return EXIT_FAIL;
	}
	nl_socket_disable_seq_check(c->sk);
	nl_socket_modify_cb(c->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, &m);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		ret = nl_recvmsgs_default(c->sk);
		/* ENOBUFS: the socket overflowed and events were lost */
		if (ret == -NLE_NOMEM) {
			err_msg("events lost: the socket's buffer was full");
			continue;
		}
		if (ret < 0 && ret != -NLE_INTR && ret != -NLE_AGAIN) {
			err_msg("reading events: %s", nl_geterror(ret));
			return EXIT_FAIL;
		}
	}
}
