// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: control MPIP (network-layer multipath) through the "mpip"
 * generic netlink family.  See mpipctl(8) and Documentation/netlink.rst.
 *
 * Every command checks its arguments before it opens a netlink socket.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include "mpipctl.h"

#ifndef MPIPCTL_VERSION
#define MPIPCTL_VERSION "unknown"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *err_where;

void err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("mpipctl: ", stderr);
	if (err_where)
		fprintf(stderr, "%s: ", err_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Counter names: enum mpip_stat lower-cased, without MPIP_STAT_. */
static const char *const stat_names[MPIP_STAT_MAX + 1] = {
	[MPIP_STAT_TX_CM]		= "tx_cm",
	[MPIP_STAT_RX_CM]		= "rx_cm",
	[MPIP_STAT_TX_QUERY]		= "tx_query",
	[MPIP_STAT_RX_QUERY]		= "rx_query",
	[MPIP_STAT_TX_CONFIRM]		= "tx_confirm",
	[MPIP_STAT_RX_CONFIRM]		= "rx_confirm",
	[MPIP_STAT_RX_CTRL]		= "rx_ctrl",
	[MPIP_STAT_PROBE_GIVEUP]	= "probe_giveup",
	[MPIP_STAT_PEER_LOST]		= "peer_lost",
	[MPIP_STAT_MSS_CLAMPED]		= "mss_clamped",
	[MPIP_STAT_TX_GSO_SPLIT]	= "tx_gso_split",
	[MPIP_STAT_TX_NO_ROOM]		= "tx_no_room",
	[MPIP_STAT_DROP_NOMEM]		= "drop_nomem",
	[MPIP_STAT_TABLE_FULL]		= "table_full",
	[MPIP_STAT_RX_NOT_LOCAL]	= "rx_not_local",
	[MPIP_STAT_SESSION_NEW]		= "session_new",
	[MPIP_STAT_SESSION_EXPIRED]	= "session_expired",
	[MPIP_STAT_TX_REWRITE]		= "tx_rewrite",
	[MPIP_STAT_RX_RESTORE]		= "rx_restore",
	[MPIP_STAT_TX_FEEDBACK]		= "tx_feedback",
	[MPIP_STAT_RX_FEEDBACK]		= "rx_feedback",
	[MPIP_STAT_TX_HEARTBEAT]	= "tx_heartbeat",
	[MPIP_STAT_RX_HEARTBEAT]	= "rx_heartbeat",
	[MPIP_STAT_PATH_UP]		= "path_up",
	[MPIP_STAT_PATH_DOWN]		= "path_down",
	[MPIP_STAT_TX_IP_CHANGE]	= "tx_ip_change",
	[MPIP_STAT_RX_IP_CHANGE]	= "rx_ip_change",
	[MPIP_STAT_DROP_SESSION]	= "drop_session",
	[MPIP_STAT_DROP_NOROUTE]	= "drop_noroute",
	[MPIP_STAT_TX_GSO_KEPT]		= "tx_gso_kept",
	[MPIP_STAT_RX_GSO_KEPT]		= "rx_gso_kept",
	[MPIP_STAT_REORDER_HELD]	= "reorder_held",
	[MPIP_STAT_REORDER_IN_ORDER]	= "reorder_in_order",
	[MPIP_STAT_REORDER_TIMEOUT]	= "reorder_timeout",
	[MPIP_STAT_REORDER_OVERFLOW]	= "reorder_overflow",
	[MPIP_STAT_TX_BARE]		= "tx_bare",
	[MPIP_STAT_REORDER_LOST]	= "reorder_lost",
	[MPIP_STAT_TX_STEERED]		= "tx_steered",
	[MPIP_STAT_RX_REASSEMBLED]	= "rx_reassembled",
	[MPIP_STAT_TX_POLICY_KEPT]	= "tx_policy_kept",
	[MPIP_STAT_RX_ICMP_PMTU]	= "rx_icmp_pmtu",
	[MPIP_STAT_RX_SPOOFED]		= "rx_spoofed",
	[MPIP_STAT_RX_AUTH_FAIL]	= "rx_auth_fail",
	[MPIP_STAT_RX_REPLAY]		= "rx_replay",
	[MPIP_STAT_RX_V1]		= "rx_v1",
	[MPIP_STAT_RR_VERIFIED]		= "rr_verified",
	[MPIP_STAT_CTRL_LIMITED]	= "ctrl_limited",
	[MPIP_STAT_RR_HELD]		= "rr_held",
	[MPIP_STAT_RX_PLAIN]		= "rx_plain",
	[MPIP_STAT_RULE_DROPPED]	= "rule_dropped",
	[MPIP_STAT_RX_DUP]		= "rx_dup",
	[MPIP_STAT_EVENT_DROP]		= "event_drop",
	[MPIP_STAT_BACKUP_HOLD]		= "backup_hold",
	[MPIP_STAT_RR_NAT]		= "rr_nat",
	[MPIP_STAT_PATH_LEARNED]	= "path_learned",
	[MPIP_STAT_TX_ENCAP]		= "tx_encap",
	[MPIP_STAT_RX_ENCAP]		= "rx_encap",
	[MPIP_STAT_RX_ENCAP_BAD]	= "rx_encap_bad",
	[MPIP_STAT_TX_ENCAP_FRAG]	= "tx_encap_frag",
	[MPIP_STAT_FTCP_CTRL]		= "ftcp_ctrl",
	[MPIP_STAT_FTCP_OPEN]		= "ftcp_open",
	[MPIP_STAT_RX_GRO_UNOPENED]	= "rx_gro_unopened",
	[MPIP_STAT_TABLE_EVICT]		= "table_evict",
	[MPIP_STAT_CTRL_BUDGET]		= "ctrl_budget",
	[MPIP_STAT_PATH_LOSSY]		= "path_lossy",
	[MPIP_STAT_RX_ENCAP_GRO]	= "rx_encap_gro",
	[MPIP_STAT_RX_ICMP_REFUSED]	= "rx_icmp_refused",
	[MPIP_STAT_SESSION_UNPROVEN]	= "session_unproven",
	[MPIP_STAT_SESSION_RESYNC]	= "session_resync",
	[MPIP_STAT_RX_PAIR_TAKEN]	= "rx_pair_taken",
	[MPIP_STAT_TX_UNKNOWN]		= "tx_unknown",
	[MPIP_STAT_TX_ENCAP_GSO]	= "tx_encap_gso",
	[MPIP_STAT_TX_RESEND]		= "tx_resend",
	[MPIP_STAT_TX_PATH_MTU]		= "tx_path_mtu",
};

/* Tunable names: enum mpip_cfg lower-cased, without MPIP_CFG_. */
static const char *const cfg_names[MPIP_CFG_MAX + 1] = {
	[MPIP_CFG_QUERY_THRESHOLD]	= "query_threshold",
	[MPIP_CFG_PEER_TIMEOUT_MS]	= "peer_timeout_ms",
	[MPIP_CFG_AVAIL_TIMEOUT_MS]	= "avail_timeout_ms",
	[MPIP_CFG_NODE_TIMEOUT_MS]	= "node_timeout_ms",
	[MPIP_CFG_SESSION_TIMEOUT_MS]	= "session_timeout_ms",
	[MPIP_CFG_WEIGHT_STEP]		= "weight_step",
	[MPIP_CFG_WEIGHT_INTERVAL_MS]	= "weight_interval_ms",
	[MPIP_CFG_HEARTBEAT_MS]		= "heartbeat_ms",
	[MPIP_CFG_PATH_TIMEOUT_MS]	= "path_timeout_ms",
	[MPIP_CFG_DELAY_SMOOTH_SHIFT]	= "delay_smooth_shift",
	[MPIP_CFG_TX_GSO]		= "tx_gso",
	[MPIP_CFG_REORDER]		= "reorder",
	[MPIP_CFG_REORDER_MAX_PKTS]	= "reorder_max_pkts",
	[MPIP_CFG_REORDER_MAX_HOLD_MS]	= "reorder_max_hold_ms",
	[MPIP_CFG_WEIGHT_TREND_MS]	= "weight_trend_ms",
	[MPIP_CFG_WEIGHT_BOOST]		= "weight_boost",
	[MPIP_CFG_BARE_CM_MS]		= "bare_cm_ms",
	[MPIP_CFG_QUEUE_STEER]		= "queue_steer",
	[MPIP_CFG_RULE_EVENT_PKTS]	= "rule_event_pkts",
	[MPIP_CFG_NAT_MODE]		= "nat_mode",
	[MPIP_CFG_CTRL_PPS]		= "ctrl_pps",
	[MPIP_CFG_LOSS_PCT]		= "loss_pct",
	[MPIP_CFG_WEIGHT_TIE_US]	= "weight_tie_us",
};

/*
 * The tunable names as one comma-separated line, for error messages;
 * built from cfg_names (as is the list in the usage text) so that it
 * cannot fall out of step.
 */
static const char *cfg_list(void)
{
	static char buf[512];
	size_t off = 0;
	int i;

	if (buf[0])
		return buf;
	for (i = 1; i <= MPIP_CFG_MAX && off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s",
				i > 1 ? ", " : "", cfg_names[i]);
	return buf;
}

static int cfg_lookup(const char *name)
{
	int i;

	for (i = 1; i <= MPIP_CFG_MAX; i++)
		if (strcmp(name, cfg_names[i]) == 0)
			return i;
	return -1;
}

/* A decimal u32: digits only, the whole string, no overflow. */
static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	const char *p;

	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
	errno = 0;
	v = strtoull(s, NULL, 10);
	if (errno == ERANGE || v > UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

/* status */

struct status {
	bool has_enabled;
	uint8_t enabled;
	uint32_t node_id, avail_count, node_count;
	/* Older modules send no session or path count, nor chains. */
	bool has_session_count, has_path_count, has_chains;
	uint32_t session_count, path_count, avail_chain, node_chain;
	char version[64];
};

static int status_reply(struct nlattr **tb, void *arg)
{
	struct status *st = arg;

	if (!tb[MPIP_A_ENABLED])
		return -1;
	st->has_enabled = true;
	st->enabled = nla_get_u8(tb[MPIP_A_ENABLED]);
	if (tb[MPIP_A_NODE_ID])
		st->node_id = nla_get_u32(tb[MPIP_A_NODE_ID]);
	if (tb[MPIP_A_VERSION])
		snprintf(st->version, sizeof(st->version), "%s",
			 nla_get_string(tb[MPIP_A_VERSION]));
	if (tb[MPIP_A_AVAIL_COUNT])
		st->avail_count = nla_get_u32(tb[MPIP_A_AVAIL_COUNT]);
	if (tb[MPIP_A_NODE_COUNT])
		st->node_count = nla_get_u32(tb[MPIP_A_NODE_COUNT]);
	if (tb[MPIP_A_SESSION_COUNT]) {
		st->has_session_count = true;
		st->session_count = nla_get_u32(tb[MPIP_A_SESSION_COUNT]);
	}
	if (tb[MPIP_A_PATH_COUNT]) {
		st->has_path_count = true;
		st->path_count = nla_get_u32(tb[MPIP_A_PATH_COUNT]);
	}
	if (tb[MPIP_A_AVAIL_CHAIN] && tb[MPIP_A_NODE_CHAIN]) {
		st->has_chains = true;
		st->avail_chain = nla_get_u32(tb[MPIP_A_AVAIL_CHAIN]);
		st->node_chain = nla_get_u32(tb[MPIP_A_NODE_CHAIN]);
	}
	return 0;
}

static int cmd_status(struct ctx *c, int argc, char **argv)
{
	struct status st = { 0 };
	char idbuf[16];
	struct json j;
	int ret;

	(void)argc, (void)argv;
	ret = mpip_simple(c, MPIP_CMD_GET_STATUS, status_reply, &st);
	if (ret != EXIT_OK)
		return ret;
	if (!st.has_enabled) {
		err_msg("status: no reply from the kernel");
		return EXIT_FAIL;
	}
	if (!c->json) {
		printf("mpip:           %s\n",
		       st.enabled ? "enabled" : "disabled");
		printf("node id:        %s\n", st.node_id ?
		       fmt_node_id(st.node_id, idbuf, sizeof(idbuf)) : "-");
		printf("version:        %s\n", st.version[0] ? st.version : "-");
		printf("avail entries:  %u\n", st.avail_count);
		printf("node entries:   %u\n", st.node_count);
		if (st.has_session_count)
			printf("sessions:       %u\n", st.session_count);
		if (st.has_path_count)
			printf("paths:          %u\n", st.path_count);
		if (st.has_chains) {
			printf("avail chain:    %u\n", st.avail_chain);
			printf("node chain:     %u\n", st.node_chain);
		}
		return EXIT_OK;
	}
	json_init(&j, stdout);
	json_obj_begin(&j);
	json_key(&j, "enabled");
	json_bool(&j, st.enabled);
	json_key(&j, "node_id");
	if (st.node_id)
		json_str(&j, fmt_node_id(st.node_id, idbuf, sizeof(idbuf)));
	else
		json_null(&j);
	json_key(&j, "version");
	if (st.version[0])
		json_str(&j, st.version);
	else
		json_null(&j);
	/* The counts are named after the tables of "show". */
	json_key(&j, "avail");
	json_uint(&j, st.avail_count);
	json_key(&j, "nodes");
	json_uint(&j, st.node_count);
	if (st.has_session_count) {
		json_key(&j, "sessions");
		json_uint(&j, st.session_count);
	}
	if (st.has_path_count) {
		json_key(&j, "paths");
		json_uint(&j, st.path_count);
	}
	if (st.has_chains) {
		json_key(&j, "avail_chain");
		json_uint(&j, st.avail_chain);
		json_key(&j, "nodes_chain");
		json_uint(&j, st.node_chain);
	}
	json_obj_end(&j);
	json_finish(&j);
	return EXIT_OK;
}

/* enable, disable */

static int set_status(struct ctx *c, uint8_t on)
{
	struct nl_msg *msg = mpip_req(c, MPIP_CMD_SET_STATUS, 0);

	if (!msg)
		return EXIT_FAIL;
	if (nla_put_u8(msg, MPIP_A_ENABLED, on) < 0) {
		nlmsg_free(msg);
		err_msg("out of memory");
		return EXIT_FAIL;
	}
	return mpip_run(c, msg, NULL, NULL);
}

static int cmd_enable(struct ctx *c, int argc, char **argv)
{
	(void)argc, (void)argv;
	return set_status(c, 1);
}

static int cmd_disable(struct ctx *c, int argc, char **argv)
{
	(void)argc, (void)argv;
	return set_status(c, 0);
}

/* flush */

static int cmd_flush(struct ctx *c, int argc, char **argv)
{
	(void)argc, (void)argv;
	return mpip_simple(c, MPIP_CMD_FLUSH, NULL, NULL);
}

/*
 * Name/value lists: stats (u64) and get (u32).  Values present in the
 * reply are printed in attribute-type order.  A counter this mpipctl has
 * no name for (from a newer module) is still printed, as "stat_N" with N
 * its attribute type; tunables it does not know are skipped.
 */
#define VALUES_CAP 256			/* attribute types 1..255 are kept */

_Static_assert(MPIP_STAT_MAX < VALUES_CAP && MPIP_CFG_MAX < VALUES_CAP,
	       "VALUES_CAP too small");

struct values {
	int max;			/* MPIP_STAT_MAX or MPIP_CFG_MAX */
	const char *const *names;
	const char *prefix;		/* for types without a name */
	bool seen;			/* the reply carried the nest */
	bool has[VALUES_CAP];
	uint64_t val[VALUES_CAP];
};

/*
 * MPIP_A_STATS is walked by hand rather than with nla_parse_nested: a
 * kernel that needs to align the u64s may insert pad attributes, which
 * must be skipped, whatever their type.
 */
static int stats_reply(struct nlattr **tb, void *arg)
{
	struct values *v = arg;
	struct nlattr *a;
	int rem;

	if (!tb[MPIP_A_STATS])
		return -1;
	v->seen = true;
	nla_for_each_nested(a, tb[MPIP_A_STATS], rem) {
		int type = nla_type(a);

		if (nla_len(a) == 0)	/* padding */
			continue;
		if (nla_len(a) != sizeof(uint64_t))
			return -1;
		if (type >= 1 && type < VALUES_CAP) {
			v->has[type] = true;
			v->val[type] = nla_get_u64(a);
		}
	}
	return 0;
}

static struct nla_policy cfg_policy[MPIP_CFG_MAX + 1] = {
	[MPIP_CFG_QUERY_THRESHOLD]	= { .type = NLA_U32 },
	[MPIP_CFG_PEER_TIMEOUT_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_AVAIL_TIMEOUT_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_NODE_TIMEOUT_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_SESSION_TIMEOUT_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_WEIGHT_STEP]		= { .type = NLA_U32 },
	[MPIP_CFG_WEIGHT_INTERVAL_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_HEARTBEAT_MS]		= { .type = NLA_U32 },
	[MPIP_CFG_PATH_TIMEOUT_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_DELAY_SMOOTH_SHIFT]	= { .type = NLA_U32 },
	[MPIP_CFG_TX_GSO]		= { .type = NLA_U32 },
	[MPIP_CFG_REORDER]		= { .type = NLA_U32 },
	[MPIP_CFG_REORDER_MAX_PKTS]	= { .type = NLA_U32 },
	[MPIP_CFG_REORDER_MAX_HOLD_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_WEIGHT_TREND_MS]	= { .type = NLA_U32 },
	[MPIP_CFG_WEIGHT_BOOST]		= { .type = NLA_U32 },
	[MPIP_CFG_BARE_CM_MS]		= { .type = NLA_U32 },
	[MPIP_CFG_QUEUE_STEER]		= { .type = NLA_U32 },
	[MPIP_CFG_RULE_EVENT_PKTS]	= { .type = NLA_U32 },
	[MPIP_CFG_NAT_MODE]		= { .type = NLA_U32 },
	[MPIP_CFG_CTRL_PPS]		= { .type = NLA_U32 },
	[MPIP_CFG_LOSS_PCT]		= { .type = NLA_U32 },
	[MPIP_CFG_WEIGHT_TIE_US]	= { .type = NLA_U32 },
};

static int config_reply(struct nlattr **tb, void *arg)
{
	struct nlattr *cfg[MPIP_CFG_MAX + 1];
	struct values *v = arg;
	int i;

	if (!tb[MPIP_A_CONFIG] ||
	    nla_parse_nested(cfg, MPIP_CFG_MAX, tb[MPIP_A_CONFIG],
			     cfg_policy) < 0)
		return -1;
	v->seen = true;
	for (i = 1; i <= MPIP_CFG_MAX; i++) {
		if (cfg[i]) {
			v->has[i] = true;
			v->val[i] = nla_get_u32(cfg[i]);
		}
	}
	return 0;
}

/* Print entry @only, or all of them when @only is 0. */
static void print_values(struct ctx *c, const struct values *v,
			 const char *title, int only)
{
	const char *const hdr[2] = { title, "VALUE" };
	struct table t;
	struct json j;
	int i;

	if (c->json) {
		json_init(&j, stdout);
		json_obj_begin(&j);
	} else {
		table_init(&t, 2, "lr", hdr);
	}
	for (i = 1; i < VALUES_CAP; i++) {
		const char *name = i <= v->max ? v->names[i] : NULL;
		char buf[32];

		if (!v->has[i] || (only && i != only))
			continue;
		if (!name) {
			snprintf(buf, sizeof(buf), "%s%d", v->prefix, i);
			name = buf;
		}
		if (c->json) {
			json_key(&j, name);
			json_uint(&j, v->val[i]);
		} else {
			table_cell(&t, "%s", name);
			table_cell(&t, "%llu", (unsigned long long)v->val[i]);
		}
	}
	if (c->json) {
		json_obj_end(&j);
		json_finish(&j);
	} else {
		table_print(&t, stdout);
		table_free(&t);
	}
}

static int cmd_stats(struct ctx *c, int argc, char **argv)
{
	struct values v = { .max = MPIP_STAT_MAX, .names = stat_names,
			    .prefix = "stat_" };
	int ret;

	(void)argc, (void)argv;
	ret = mpip_simple(c, MPIP_CMD_GET_STATS, stats_reply, &v);
	if (ret == EXIT_OK && !v.seen) {
		err_msg("stats: no reply from the kernel");
		ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK)
		print_values(c, &v, "COUNTER", 0);
	return ret;
}

/* get, set */

static int cmd_get(struct ctx *c, int argc, char **argv)
{
	struct values v = { .max = MPIP_CFG_MAX, .names = cfg_names,
			    .prefix = "cfg_" };
	int key = 0, ret;

	if (argc > 1) {
		key = cfg_lookup(argv[1]);
		if (key < 0) {
			err_msg("get: unknown tunable '%s' (one of %s)",
				argv[1], cfg_list());
			return EXIT_FAIL;
		}
	}
	ret = mpip_open(c);
	if (ret != EXIT_OK)
		return ret;
	ret = mpip_simple(c, MPIP_CMD_GET_CONFIG, config_reply, &v);
	mpip_close(c);
	if (ret == EXIT_OK && (!v.seen || (key && !v.has[key]))) {
		err_msg("get: no %s in the kernel's reply",
			key ? cfg_names[key] : "tunables");
		ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK)
		print_values(c, &v, "TUNABLE", key);
	return ret;
}

/*
 * nat_mode takes the names of enum mpip_nat_mode as well: those of enum
 * mpip_link_nat but "default" (link_nat_lookup()).
 */
static int parse_nat_mode(const char *s, uint32_t *out)
{
	int v = link_nat_lookup(s);

	if (v < MPIP_LINK_NAT_AUTO)
		return -EINVAL;
	*out = (uint32_t)(v - MPIP_LINK_NAT_AUTO) + MPIP_NAT_MODE_AUTO;
	return 0;
}

static int cmd_set(struct ctx *c, int argc, char **argv)
{
	struct nlattr *nest;
	struct nl_msg *msg;
	uint32_t val;
	int key, ret;

	if (argc < 3) {
		err_msg("set: missing %s (usage: mpipctl set KEY VALUE)",
			argc < 2 ? "KEY and VALUE" : "VALUE");
		return EXIT_FAIL;
	}
	key = cfg_lookup(argv[1]);
	if (key < 0) {
		err_msg("set: unknown tunable '%s' (one of %s)",
			argv[1], cfg_list());
		return EXIT_FAIL;
	}
	ret = parse_u32(argv[2], &val);
	if (ret == -EINVAL && key == MPIP_CFG_NAT_MODE)
		ret = parse_nat_mode(argv[2], &val);
	if (ret == -EINVAL) {
		err_msg("set: invalid value '%s' for %s: not a non-negative decimal integer%s",
			argv[2], argv[1], key == MPIP_CFG_NAT_MODE ?
			" or one of auto, none, udp, faketcp" : "");
		return EXIT_FAIL;
	}
	if (ret == -ERANGE) {
		err_msg("set: value '%s' for %s is out of range (0..%u)",
			argv[2], argv[1], UINT32_MAX);
		return EXIT_FAIL;
	}

	c->key = cfg_names[key];
	ret = mpip_open(c);
	if (ret != EXIT_OK)
		return ret;
	msg = mpip_req(c, MPIP_CMD_SET_CONFIG, 0);
	if (!msg) {
		mpip_close(c);
		return EXIT_FAIL;
	}
	nest = nla_nest_start(msg, MPIP_A_CONFIG | NLA_F_NESTED);
	if (!nest || nla_put_u32(msg, key, val) < 0 ||
	    nla_nest_end(msg, nest) < 0) {
		nlmsg_free(msg);
		mpip_close(c);
		err_msg("out of memory");
		return EXIT_FAIL;
	}
	ret = mpip_run(c, msg, NULL, NULL);
	mpip_close(c);
	return ret;
}

/* link set dev IF SETTING VALUE... */

#define LINK_USAGE "usage: mpipctl link set dev IF [advertise on|off] [backup|nobackup|tier 0-7] [metered|nometered] [nat default|auto|none|udp|faketcp]"

/* a link's tier: "0" to "7", else -1 */
static int parse_tier(const char *s)
{
	return s[0] >= '0' && s[0] <= '7' && !s[1] ? s[0] - '0' : -1;
}

/* "on" 1, "off" 0, anything else -1 */
static int parse_on_off(const char *s)
{
	if (strcmp(s, "on") == 0)
		return 1;
	if (strcmp(s, "off") == 0)
		return 0;
	return -1;
}

struct link_req {
	const char *dev;
	int advertise;		/* -1: not given */
	int backup;		/* -1: not given */
	int tier;		/* -1: not given */
	int metered;		/* -1: not given */
	int nat;		/* enum mpip_link_nat, -1: not given */
};

/* The name/value pairs after "link set"; prints why when they are bad. */
static int link_parse(int argc, char **argv, struct link_req *r)
{
	int i;

	r->dev = NULL;
	r->advertise = -1;
	r->backup = -1;
	r->tier = -1;
	r->metered = -1;
	r->nat = -1;
	for (i = 0; i < argc; i += 2) {
		bool dev = strcmp(argv[i], "dev") == 0;
		bool adv = strcmp(argv[i], "advertise") == 0;
		bool nat = strcmp(argv[i], "nat") == 0;
		bool tier = strcmp(argv[i], "tier") == 0;

		if (strcmp(argv[i], "metered") == 0 ||
		    strcmp(argv[i], "nometered") == 0) {
			if (r->metered >= 0) {
				err_msg("link set: metered given twice");
				return -1;
			}
			r->metered = argv[i][0] == 'm';
			i--;
			continue;
		}
		/* backup, nobackup, or backup on|off */
		if (strcmp(argv[i], "backup") == 0 ||
		    strcmp(argv[i], "nobackup") == 0) {
			int b = argv[i][0] == 'b';

			if (r->backup >= 0 || r->tier >= 0) {
				err_msg("link set: backup or tier given twice");
				return -1;
			}
			if (b && i + 1 < argc && parse_on_off(argv[i + 1]) >= 0)
				b = parse_on_off(argv[++i]);
			r->backup = b;
			i--;
			continue;
		}

		if (!dev && !adv && !nat && !tier) {
			err_msg("link set: unknown setting '%s' (" LINK_USAGE ")",
				argv[i]);
			return -1;
		}
		if (i + 1 == argc) {
			err_msg("link set: missing value after '%s' (" LINK_USAGE ")",
				argv[i]);
			return -1;
		}
		if ((dev && r->dev) || (adv && r->advertise >= 0) ||
		    (nat && r->nat >= 0)) {
			err_msg("link set: '%s' given twice", argv[i]);
			return -1;
		}
		if (tier && (r->backup >= 0 || r->tier >= 0)) {
			err_msg("link set: backup or tier given twice");
			return -1;
		}
		if (dev) {
			r->dev = argv[i + 1];
			continue;
		}
		if (tier) {
			r->tier = parse_tier(argv[i + 1]);
			if (r->tier < 0) {
				err_msg("link set: tier is 0 to 7, not '%s'",
					argv[i + 1]);
				return -1;
			}
			continue;
		}
		if (nat) {
			r->nat = link_nat_lookup(argv[i + 1]);
			if (r->nat < 0) {
				err_msg("link set: nat is default, auto, none, udp or faketcp, not '%s'",
					argv[i + 1]);
				return -1;
			}
			continue;
		}
		r->advertise = parse_on_off(argv[i + 1]);
		if (r->advertise < 0) {
			err_msg("link set: advertise is on or off, not '%s'",
				argv[i + 1]);
			return -1;
		}
	}
	if (!r->dev) {
		err_msg("link set: missing dev IF (" LINK_USAGE ")");
		return -1;
	}
	if (r->advertise < 0 && r->backup < 0 && r->tier < 0 &&
	    r->metered < 0 && r->nat < 0) {
		err_msg("link set: nothing to change (" LINK_USAGE ")");
		return -1;
	}
	if (!r->dev[0] || strlen(r->dev) >= IF_NAMESIZE) {
		err_msg("link set: '%s' is not an interface name", r->dev);
		return -1;
	}
	return 0;
}

static int link_send(struct ctx *c, const struct link_req *r)
{
	unsigned int ifindex;
	struct nlattr *nest;
	struct nl_msg *msg;

	/* after mpip_open(): the name is looked up in the namespace of -n */
	ifindex = if_nametoindex(r->dev);
	if (!ifindex) {
		err_msg("link set: no interface '%s'%s%s", r->dev,
			c->netns ? " in network namespace " : "",
			c->netns ? c->netns : "");
		return EXIT_FAIL;
	}
	msg = mpip_req(c, MPIP_CMD_SET_LINK, 0);
	if (!msg)
		return EXIT_FAIL;
	nest = nla_nest_start(msg, MPIP_A_LINK | NLA_F_NESTED);
	if (!nest || nla_put_u32(msg, MPIP_LINK_A_IFINDEX, ifindex) < 0 ||
	    (r->advertise >= 0 &&
	     nla_put_u8(msg, MPIP_LINK_A_ADVERTISE, r->advertise) < 0) ||
	    (r->backup >= 0 &&
	     nla_put_u8(msg, MPIP_LINK_A_BACKUP, r->backup) < 0) ||
	    (r->tier >= 0 && nla_put_u8(msg, MPIP_LINK_A_TIER, r->tier) < 0) ||
	    (r->metered >= 0 &&
	     nla_put_u8(msg, MPIP_LINK_A_METERED, r->metered) < 0) ||
	    (r->nat >= 0 && nla_put_u8(msg, MPIP_LINK_A_NAT, r->nat) < 0) ||
	    nla_nest_end(msg, nest) < 0) {
		nlmsg_free(msg);
		err_msg("out of memory");
		return EXIT_FAIL;
	}
	return mpip_run(c, msg, NULL, NULL);
}

static int cmd_link(struct ctx *c, int argc, char **argv)
{
	struct link_req r;
	int ret;

	if (argc < 2 || strcmp(argv[1], "set") != 0) {
		if (argc < 2)
			err_msg("link: missing 'set' (" LINK_USAGE ")");
		else
			err_msg("link: unknown subcommand '%s' (" LINK_USAGE "; the settings: mpipctl show links)",
				argv[1]);
		return EXIT_FAIL;
	}
	if (link_parse(argc - 2, argv + 2, &r) < 0)
		return EXIT_FAIL;
	ret = mpip_open(c);
	if (ret != EXIT_OK)
		return ret;
	ret = link_send(c, &r);
	mpip_close(c);
	return ret;
}

/* Command table and dispatch. */

static void usage(FILE *f);

static int cmd_help(struct ctx *c, int argc, char **argv)
{
	(void)c, (void)argc, (void)argv;
	usage(stdout);
	return EXIT_OK;
}

/*
 * A command takes at most max_args arguments; handlers check the rest
 * themselves.  With open_nl the dispatcher opens the netlink socket around
 * the handler; commands with arguments to check (show, get, set) open it
 * themselves once the arguments are known to be good.  Only commands with
 * json set print anything that -j could change; the others refuse -j.
 */
static const struct cmd {
	const char *name;
	const char *args;
	const char *help;
	int max_args;
	bool open_nl;
	bool json;
	int (*fn)(struct ctx *c, int argc, char **argv);
} cmds[] = {
	{ "status", "", "show whether MPIP is on, node ID, version, table sizes",
	  0, true, true, cmd_status },
	{ "enable", "", "switch MPIP on in this network namespace",
	  0, true, false, cmd_enable },
	{ "disable", "", "switch MPIP off (also empties the tables)",
	  0, true, false, cmd_disable },
	{ "show", SHOW_TABLES,
	  "list a table: availability, nodes, sessions, paths, links",
	  1, false, true, cmd_show },
	{ "stats", "", "show the counters",
	  0, true, true, cmd_stats },
	{ "get", "[KEY]", "show one tunable, or all of them",
	  1, false, true, cmd_get },
	{ "set", "KEY VALUE", "change one tunable",
	  2, false, false, cmd_set },
	{ "flush", "", "empty the availability, node, session (and so path) tables",
	  0, true, false, cmd_flush },
	{ "rule", "add|del|flush ...",
	  "add or remove routing rules (list them: show rules)",
	  64, false, false, cmd_rule },
	{ "link", "set dev IF [advertise on|off] [backup|tier N] [metered] [nat MODE]",
	  "use an interface or not; its tier, cost, NAT MODE",
	  10, false, false, cmd_link },
	{ "monitor", "", "print events: peers, paths, failovers",
	  0, true, true, cmd_monitor },
	{ "help", "", "print this help",
	  0, false, false, cmd_help },
};

static void usage(FILE *f)
{
	size_t i, col;

	fprintf(f,
		"Usage: mpipctl [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Control MPIP (network-layer multipath) in the current network namespace.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		char buf[80];

		snprintf(buf, sizeof(buf), "%s%s%s", cmds[i].name,
			 cmds[i].args[0] ? " " : "", cmds[i].args);
		if (strlen(buf) > 18)	/* help text on the next line */
			fprintf(f, "  %s\n  %-18s %s\n", buf, "", cmds[i].help);
		else
			fprintf(f, "  %-18s %s\n", buf, cmds[i].help);
	}
	fprintf(f,
		"\n"
		"Options:\n"
		"  -j, --json         print JSON (status, show, stats, get, monitor)\n"
		"  -n, --netns NAME   act in network namespace NAME (see ip-netns(8))\n"
		"  -b, --batch FILE   run the commands in FILE, one a line ('-': stdin)\n"
		"  -f, --force        with -b: go on after a line that failed\n"
		"  -h, --help         print this help and exit\n"
		"  -V, --version      print the version and exit\n"
		"\n"
		"Tunables:");
	/* The names, wrapped at 76 columns. */
	col = 9;
	for (i = 1; i <= MPIP_CFG_MAX; i++) {
		size_t len = strlen(cfg_names[i]) + (i < MPIP_CFG_MAX);

		if (col + 1 + len > 76) {
			fputs("\n ", f);
			col = 1;
		}
		fprintf(f, " %s%s", cfg_names[i], i < MPIP_CFG_MAX ? "," : "");
		col += 1 + len;
	}
	fprintf(f,
		"\n"
		"enable, disable, set, flush, rule and link set need CAP_NET_ADMIN.\n");
}

/* "-j", "--json", "--": an option, not a value such as "-5". */
static bool looks_like_option(const char *s)
{
	return s[0] == '-' && (isalpha((unsigned char)s[1]) || s[1] == '-');
}

static int run(struct ctx *c, const struct cmd *cmd, int argc, char **argv)
{
	int i, ret;

	c->cmd = cmd->name;
	if (c->json && !cmd->json) {
		err_msg("%s: option -j applies to status, show, stats, get and monitor only",
			cmd->name);
		return EXIT_FAIL;
	}
	for (i = 1; i < argc; i++) {
		if (looks_like_option(argv[i])) {
			err_msg("%s: option '%s' must come before the command (usage: mpipctl [OPTIONS] %s%s%s)",
				cmd->name, argv[i], cmd->name,
				cmd->args[0] ? " " : "", cmd->args);
			return EXIT_FAIL;
		}
	}
	if (argc - 1 > cmd->max_args) {
		err_msg("%s: unexpected argument '%s' (usage: mpipctl %s%s%s)",
			cmd->name, argv[cmd->max_args + 1], cmd->name,
			cmd->args[0] ? " " : "", cmd->args);
		return EXIT_FAIL;
	}
	if (!cmd->open_nl)
		return cmd->fn(c, argc, argv);
	ret = mpip_open(c);
	if (ret != EXIT_OK)
		return ret;
	ret = cmd->fn(c, argc, argv);
	mpip_close(c);
	return ret;
}

int mpipctl_command(struct ctx *c, int argc, char **argv)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[0], cmds[i].name) == 0)
			return run(c, &cmds[i], argc, argv);
	err_msg("unknown command '%s' (try 'mpipctl --help')", argv[0]);
	return EXIT_FAIL;
}

/*
 * Name the option getopt_long() stopped at.  @elem is the element it was
 * working on: a long option ("--name" or "--name=value", printed without
 * the value) or a cluster of short ones ("-jx"), where only optopt tells
 * which letter was wrong.
 */
static const char *bad_option(const char *elem, char *buf, size_t len)
{
	if (strncmp(elem, "--", 2) == 0)
		snprintf(buf, len, "%.*s", (int)strcspn(elem, "="), elem);
	else
		snprintf(buf, len, "-%c", optopt);
	return buf;
}

/*
 * Everything printed goes through stdout's buffer: a write that failed
 * (disk full, a closed pipe's reader gone with SIGPIPE ignored) shows up
 * here at the latest, and makes the command fail.  A stdout that was
 * closed before we started is no error as long as nothing was printed.
 */
static int close_stdout(int status)
{
	bool pending = __fpending(stdout) > 0;
	bool prev_fail = ferror(stdout);
	int fclose_fail = fclose(stdout) != 0;

	if (fclose_fail && errno == EBADF && !pending && !prev_fail)
		return status;
	if (prev_fail || fclose_fail) {
		if (fclose_fail)
			err_msg("write error: %s", strerror(errno));
		else
			err_msg("write error");
		return EXIT_FAIL;
	}
	return status;
}

static int mpipctl(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "netns", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "batch", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	bool help = false, version = false, force = false;
	const char *batch = NULL;
	struct ctx c = { 0 };
	char buf[64];
	int opt;

	/*
	 * '+': stop at the command; ':': report a missing argument as ':'.
	 * -h and -V act once every option has been read, so that a bad
	 * option after them (-Vx) is still an error.
	 */
	opterr = 0;
	for (;;) {
		int elem = optind;

		opt = getopt_long(argc, argv, "+:jn:hVb:f", longopts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'j':
			c.json = true;
			break;
		case 'n':
			c.netns = optarg;
			break;
		case 'h':
			help = true;
			break;
		case 'V':
			version = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'f':
			force = true;
			break;
		case ':':
			err_msg("option '%s' needs an argument (try 'mpipctl --help')",
				bad_option(argv[elem], buf, sizeof(buf)));
			return EXIT_FAIL;
		default:
			if (strncmp(argv[elem], "--", 2) == 0 && optopt)
				err_msg("option '%s' takes no argument (try 'mpipctl --help')",
					bad_option(argv[elem], buf, sizeof(buf)));
			else
				err_msg("unknown option '%s' (try 'mpipctl --help')",
					bad_option(argv[elem], buf, sizeof(buf)));
			return EXIT_FAIL;
		}
	}
	if (help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (version) {
		printf("mpipctl %s (netlink family %s version %d)\n",
		       MPIPCTL_VERSION, MPIP_GENL_NAME, MPIP_GENL_VERSION);
		return EXIT_OK;
	}
	if (c.netns && (!c.netns[0] || strchr(c.netns, '/') ||
			strcmp(c.netns, ".") == 0 ||
			strcmp(c.netns, "..") == 0)) {
		err_msg("invalid network namespace name '%s'", c.netns);
		return EXIT_FAIL;
	}
	if (force && !batch) {
		err_msg("option -f applies to -b only");
		return EXIT_FAIL;
	}
	if (batch && optind < argc) {
		err_msg("-b: unexpected command '%s' (the commands are in %s)",
			argv[optind], batch);
		return EXIT_FAIL;
	}
	if (batch)
		return batch_run(&c, batch, force);
	if (optind >= argc) {
		err_msg("missing command (try 'mpipctl --help')");
		return EXIT_FAIL;
	}
	return mpipctl_command(&c, argc - optind, argv + optind);
}

int main(int argc, char **argv)
{
	return close_stdout(mpipctl(argc, argv));
}
