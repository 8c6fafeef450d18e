// SPDX-License-Identifier: GPL-2.0
/*
 * mpip generic netlink family: status, tables, counters and tunables.
 * Every command acts on the caller's network namespace.
 */
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "mpip.h"

static struct genl_family mpip_genl_family;

static struct netlink_range_validation mpip_range_threshold = {
	.min = 1, .max = 100,
};

static struct netlink_range_validation mpip_range_peer = {
	.min = 100, .max = 600000,
};

static struct netlink_range_validation mpip_range_expiry = {
	.min = 1000, .max = 86400000,
};

static struct netlink_range_validation mpip_range_step = {
	.min = 1, .max = MPIP_WEIGHT_MAX,
};

static struct netlink_range_validation mpip_range_interval = {
	.min = 10, .max = 10000,
};

static struct netlink_range_validation mpip_range_path_timeout = {
	.min = 50, .max = 60000,
};

static struct netlink_range_validation mpip_range_shift = {
	.min = 0, .max = 10,
};

static struct netlink_range_validation mpip_range_bool = {
	.min = 0, .max = 1,
};

static struct netlink_range_validation mpip_range_reorder = {
	.min = 1, .max = 10000,
};

static struct netlink_range_validation mpip_range_trend = {
	.min = 0, .max = 10000,
};

static struct netlink_range_validation mpip_range_bare = {
	.min = 0, .max = 1000,
};

static struct netlink_range_validation mpip_range_boost = {
	.min = 0, .max = 8,
};

static struct netlink_range_validation mpip_range_rule_event = {
	.min = 0, .max = 1000000000,
};

static struct netlink_range_validation mpip_range_nat = {
	.min = MPIP_NAT_MODE_AUTO, .max = MPIP_NAT_MODE_FAKETCP,
};

static struct netlink_range_validation mpip_range_ctrl_pps = {
	.min = 0, .max = 1000000,
};

static struct netlink_range_validation mpip_range_tie = {
	.min = 0, .max = 100000,
};

static struct netlink_range_validation mpip_range_pct = {
	.min = 0, .max = 100,
};

static const struct nla_policy mpip_cfg_policy[MPIP_CFG_MAX + 1] = {
	[MPIP_CFG_QUERY_THRESHOLD] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_threshold),
	[MPIP_CFG_PEER_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_peer),
	[MPIP_CFG_AVAIL_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_expiry),
	[MPIP_CFG_NODE_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_expiry),
	[MPIP_CFG_SESSION_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_expiry),
	[MPIP_CFG_WEIGHT_STEP] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_step),
	[MPIP_CFG_WEIGHT_INTERVAL_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_interval),
	[MPIP_CFG_HEARTBEAT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_interval),
	[MPIP_CFG_PATH_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_path_timeout),
	[MPIP_CFG_DELAY_SMOOTH_SHIFT] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_shift),
	[MPIP_CFG_TX_GSO] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_bool),
	[MPIP_CFG_REORDER] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_bool),
	[MPIP_CFG_REORDER_MAX_PKTS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_reorder),
	[MPIP_CFG_REORDER_MAX_HOLD_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_reorder),
	[MPIP_CFG_WEIGHT_TREND_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_trend),
	[MPIP_CFG_WEIGHT_BOOST] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_boost),
	[MPIP_CFG_BARE_CM_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_bare),
	[MPIP_CFG_QUEUE_STEER] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_bool),
	[MPIP_CFG_RULE_EVENT_PKTS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_rule_event),
	[MPIP_CFG_NAT_MODE] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_nat),
	[MPIP_CFG_CTRL_PPS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_ctrl_pps),
	[MPIP_CFG_LOSS_PCT] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_pct),
	[MPIP_CFG_WEIGHT_TIE_US] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mpip_range_tie),
};

static const struct nla_policy mpip_link_policy[MPIP_LINK_A_MAX + 1] = {
	[MPIP_LINK_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	/* names are for people; requests name the interface by index */
	[MPIP_LINK_A_NAME] = { .type = NLA_REJECT },
	[MPIP_LINK_A_ADVERTISE] = NLA_POLICY_MAX(NLA_U8, 1),
	[MPIP_LINK_A_BACKUP] = NLA_POLICY_MAX(NLA_U8, 1),
	[MPIP_LINK_A_NAT] = NLA_POLICY_MAX(NLA_U8, MPIP_LINK_NAT_FAKETCP),
	[MPIP_LINK_A_TIER] = NLA_POLICY_MAX(NLA_U8, MPIP_LINK_TIER_MAX),
	[MPIP_LINK_A_METERED] = NLA_POLICY_MAX(NLA_U8, 1),
};

static const struct nla_policy mpip_rule_policy[MPIP_RULE_A_MAX + 1] = {
	[MPIP_RULE_A_PREF] = NLA_POLICY_MIN(NLA_U32, 1),
	[MPIP_RULE_A_PROTO] = { .type = NLA_U8 },
	[MPIP_RULE_A_DADDR] = { .type = NLA_BE32 },
	[MPIP_RULE_A_DPLEN] = NLA_POLICY_MAX(NLA_U8, 32),
	[MPIP_RULE_A_SADDR] = { .type = NLA_BE32 },
	[MPIP_RULE_A_SPLEN] = NLA_POLICY_MAX(NLA_U8, 32),
	[MPIP_RULE_A_DPORT] = NLA_POLICY_EXACT_LEN(sizeof(struct mpip_rule_range)),
	[MPIP_RULE_A_SPORT] = NLA_POLICY_EXACT_LEN(sizeof(struct mpip_rule_range)),
	[MPIP_RULE_A_LEN] = NLA_POLICY_EXACT_LEN(sizeof(struct mpip_rule_range)),
	[MPIP_RULE_A_DSCP] = NLA_POLICY_MAX(NLA_U8, 63),
	[MPIP_RULE_A_MARK] = { .type = NLA_U32 },
	[MPIP_RULE_A_MARK_MASK] = NLA_POLICY_MIN(NLA_U32, 1),
	[MPIP_RULE_A_PURE_ACK] = { .type = NLA_FLAG },
	[MPIP_RULE_A_MODE] = NLA_POLICY_MAX(NLA_U8, MPIP_RULE_MODE_OFF),
	[MPIP_RULE_A_FALLBACK] = NLA_POLICY_MAX(NLA_U8,
						MPIP_RULE_FALLBACK_DROP),
	[MPIP_RULE_A_IFS] = { .type = NLA_BINARY,
			      .len = MPIP_RULE_MAX_IFS * sizeof(u32) },
	[MPIP_RULE_A_IFS_DENY] = { .type = NLA_FLAG },
	[MPIP_RULE_A_PAD] = { .type = NLA_REJECT },
	[MPIP_RULE_A_PKTS] = { .type = NLA_REJECT },
	[MPIP_RULE_A_BYTES] = { .type = NLA_REJECT },
	[MPIP_RULE_A_COPIES] = NLA_POLICY_RANGE(NLA_U8, 2,
						MPIP_RULE_MAX_COPIES),
	[MPIP_RULE_A_NOMETERED] = { .type = NLA_FLAG },
};

static const struct nla_policy mpip_nl_policy[MPIP_A_MAX + 1] = {
	[MPIP_A_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[MPIP_A_CONFIG] = NLA_POLICY_NESTED(mpip_cfg_policy),
	[MPIP_A_LINK] = NLA_POLICY_NESTED(mpip_link_policy),
	[MPIP_A_RULE] = NLA_POLICY_NESTED(mpip_rule_policy),
};

static struct mpip_net *mpip_nl_net(struct genl_info *info)
{
	return mpip_pernet(genl_info_net(info));
}

static u32 mpip_age_ms(unsigned long stamp)
{
	return jiffies_to_msecs(jiffies - READ_ONCE(stamp));
}

typedef int (*mpip_nl_fill_t)(struct sk_buff *msg, struct mpip_net *mn);

/* Answer a doit request with the attributes @fill puts into the reply. */
static int mpip_nl_reply(struct genl_info *info, mpip_nl_fill_t fill)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &mpip_genl_family, 0,
				info->genlhdr->cmd);
	if (!hdr || fill(msg, mpip_nl_net(info))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int mpip_nl_fill_status(struct sk_buff *msg, struct mpip_net *mn)
{
	if (nla_put_u8(msg, MPIP_A_ENABLED, READ_ONCE(mn->enabled)) ||
	    nla_put_u32(msg, MPIP_A_NODE_ID, mn->node_id) ||
	    nla_put_string(msg, MPIP_A_VERSION, MPIP_VERSION) ||
	    nla_put_u32(msg, MPIP_A_AVAIL_COUNT, READ_ONCE(mn->avail.count)) ||
	    nla_put_u32(msg, MPIP_A_NODE_COUNT, READ_ONCE(mn->nodes.count)) ||
	    nla_put_u32(msg, MPIP_A_SESSION_COUNT,
			READ_ONCE(mn->sessions.count)) ||
	    nla_put_u32(msg, MPIP_A_PATH_COUNT, mpip_paths_count(mn)) ||
	    nla_put_u32(msg, MPIP_A_AVAIL_CHAIN,
			READ_ONCE(mn->avail.chain_max)) ||
	    nla_put_u32(msg, MPIP_A_NODE_CHAIN,
			READ_ONCE(mn->nodes.chain_max)))
		return -EMSGSIZE;
	return 0;
}

static int mpip_nl_get_status(struct sk_buff *skb, struct genl_info *info)
{
	return mpip_nl_reply(info, mpip_nl_fill_status);
}

static int mpip_nl_set_status(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, MPIP_A_ENABLED))
		return -EINVAL;
	return mpip_set_enabled(mpip_nl_net(info),
				nla_get_u8(info->attrs[MPIP_A_ENABLED]));
}

static int mpip_nl_flush(struct sk_buff *skb, struct genl_info *info)
{
	mpip_flush(mpip_nl_net(info));
	return 0;
}

static int mpip_nl_fill_stats(struct sk_buff *msg, struct mpip_net *mn)
{
	struct nlattr *nest;
	int s;

	nest = nla_nest_start(msg, MPIP_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (s = MPIP_STAT_UNSPEC + 1; s <= MPIP_STAT_MAX; s++) {
		if (nla_put_u64_64bit(msg, s, mpip_stat_sum(mn, s),
				      MPIP_STAT_UNSPEC))
			return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int mpip_nl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	return mpip_nl_reply(info, mpip_nl_fill_stats);
}

/*
 * Where each tunable lives in struct mpip_config, as offset + 1 so that a
 * key without an entry reads as 0.  mpip_cfg_table_check() proves at load
 * time that every key has one.
 */
#define MPIP_CFG_FIELD(key, field) \
	[key] = offsetof(struct mpip_config, field) + 1

static const u16 mpip_cfg_off[MPIP_CFG_MAX + 1] = {
	MPIP_CFG_FIELD(MPIP_CFG_QUERY_THRESHOLD, query_threshold),
	MPIP_CFG_FIELD(MPIP_CFG_PEER_TIMEOUT_MS, peer_timeout_ms),
	MPIP_CFG_FIELD(MPIP_CFG_AVAIL_TIMEOUT_MS, avail_timeout_ms),
	MPIP_CFG_FIELD(MPIP_CFG_NODE_TIMEOUT_MS, node_timeout_ms),
	MPIP_CFG_FIELD(MPIP_CFG_SESSION_TIMEOUT_MS, session_timeout_ms),
	MPIP_CFG_FIELD(MPIP_CFG_WEIGHT_STEP, weight_step),
	MPIP_CFG_FIELD(MPIP_CFG_WEIGHT_INTERVAL_MS, weight_interval_ms),
	MPIP_CFG_FIELD(MPIP_CFG_HEARTBEAT_MS, heartbeat_ms),
	MPIP_CFG_FIELD(MPIP_CFG_PATH_TIMEOUT_MS, path_timeout_ms),
	MPIP_CFG_FIELD(MPIP_CFG_DELAY_SMOOTH_SHIFT, delay_smooth_shift),
	MPIP_CFG_FIELD(MPIP_CFG_TX_GSO, tx_gso),
	MPIP_CFG_FIELD(MPIP_CFG_REORDER, reorder),
	MPIP_CFG_FIELD(MPIP_CFG_REORDER_MAX_PKTS, reorder_max_pkts),
	MPIP_CFG_FIELD(MPIP_CFG_REORDER_MAX_HOLD_MS, reorder_max_hold_ms),
	MPIP_CFG_FIELD(MPIP_CFG_WEIGHT_TREND_MS, weight_trend_ms),
	MPIP_CFG_FIELD(MPIP_CFG_WEIGHT_BOOST, weight_boost),
	MPIP_CFG_FIELD(MPIP_CFG_BARE_CM_MS, bare_cm_ms),
	MPIP_CFG_FIELD(MPIP_CFG_QUEUE_STEER, queue_steer),
	MPIP_CFG_FIELD(MPIP_CFG_RULE_EVENT_PKTS, rule_event_pkts),
	MPIP_CFG_FIELD(MPIP_CFG_NAT_MODE, nat_mode),
	MPIP_CFG_FIELD(MPIP_CFG_CTRL_PPS, ctrl_pps),
	MPIP_CFG_FIELD(MPIP_CFG_LOSS_PCT, loss_pct),
	MPIP_CFG_FIELD(MPIP_CFG_WEIGHT_TIE_US, weight_tie_us),
};

static u32 *mpip_cfg_field(struct mpip_config *cfg, int key)
{
	return (u32 *)((u8 *)cfg + mpip_cfg_off[key] - 1);
}

/* Every key has a field, and no two share one. */
static int mpip_cfg_table_check(void)
{
	DECLARE_BITMAP(seen, sizeof(struct mpip_config) / sizeof(u32));
	unsigned int off;
	int key;

	BUILD_BUG_ON(sizeof(struct mpip_config) % sizeof(u32));
	bitmap_zero(seen, sizeof(struct mpip_config) / sizeof(u32));
	for (key = MPIP_CFG_UNSPEC + 1; key <= MPIP_CFG_MAX; key++) {
		off = mpip_cfg_off[key];
		if (WARN(!off || off - 1 >= sizeof(struct mpip_config) ||
			 test_and_set_bit((off - 1) / sizeof(u32), seen),
			 "mpip: config key %d has no field of its own\n", key))
			return -EINVAL;
	}
	return 0;
}

static int mpip_nl_fill_config(struct sk_buff *msg, struct mpip_net *mn)
{
	struct nlattr *nest;
	int key;

	nest = nla_nest_start(msg, MPIP_A_CONFIG);
	if (!nest)
		return -EMSGSIZE;
	for (key = MPIP_CFG_UNSPEC + 1; key <= MPIP_CFG_MAX; key++) {
		if (nla_put_u32(msg, key,
				READ_ONCE(*mpip_cfg_field(&mn->cfg, key))))
			return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int mpip_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	return mpip_nl_reply(info, mpip_nl_fill_config);
}

static int mpip_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct mpip_net *mn = mpip_nl_net(info);
	struct nlattr *tb[MPIP_CFG_MAX + 1];
	int key, err;

	if (GENL_REQ_ATTR_CHECK(info, MPIP_A_CONFIG))
		return -EINVAL;
	/* Validated against the policy here, before anything changes. */
	err = nla_parse_nested(tb, MPIP_CFG_MAX, info->attrs[MPIP_A_CONFIG],
			       mpip_cfg_policy, info->extack);
	if (err)
		return err;
	/* Concurrent requests (parallel_ops) apply one after the other. */
	mutex_lock(&mn->cfg_lock);
	for (key = MPIP_CFG_UNSPEC + 1; key <= MPIP_CFG_MAX; key++) {
		if (tb[key])
			WRITE_ONCE(*mpip_cfg_field(&mn->cfg, key),
				   nla_get_u32(tb[key]));
	}
	mpip_cfg_update(mn);
	mutex_unlock(&mn->cfg_lock);
	return 0;
}

static void *mpip_nl_dump_hdr(struct sk_buff *skb, struct netlink_callback *cb,
			      u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   &mpip_genl_family, NLM_F_MULTI, cmd);
}

static int mpip_nl_put_avail(struct sk_buff *skb, struct netlink_callback *cb,
			     const struct mpip_avail *e)
{
	struct nlattr *nest;
	void *hdr;

	/* The entries of port 0 are an index of ours (node.c), no peer's. */
	if (!e->port)
		return 0;
	hdr = mpip_nl_dump_hdr(skb, cb, MPIP_CMD_GET_AVAIL);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, MPIP_A_AVAIL);
	if (!nest ||
	    nla_put_in_addr(skb, MPIP_AVAIL_A_ADDR, e->addr) ||
	    nla_put_u16(skb, MPIP_AVAIL_A_PORT, ntohs(e->port)) ||
	    nla_put_u8(skb, MPIP_AVAIL_A_PROTO, e->proto) ||
	    nla_put_u8(skb, MPIP_AVAIL_A_STATE, READ_ONCE(e->state)) ||
	    nla_put_u32(skb, MPIP_AVAIL_A_QUERIES, atomic_read(&e->queries)) ||
	    nla_put_u32(skb, MPIP_AVAIL_A_NODE_ID, READ_ONCE(e->node_id)) ||
	    nla_put_u32(skb, MPIP_AVAIL_A_AGE_MS, mpip_age_ms(e->tn.stamp))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

static int mpip_nl_put_eps(struct sk_buff *skb, const struct mpip_node *n)
{
	struct nlattr *list, *ep;
	unsigned int i;

	list = nla_nest_start(skb, MPIP_NODE_A_ENDPOINTS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < n->nep; i++) {
		ep = nla_nest_start(skb, MPIP_NODE_A_ENDPOINT);
		if (!ep ||
		    nla_put_in_addr(skb, MPIP_EP_A_ADDR, n->ep[i].addr) ||
		    nla_put_u16(skb, MPIP_EP_A_PORT, ntohs(n->ep[i].port)))
			return -EMSGSIZE;
		nla_nest_end(skb, ep);
	}
	nla_nest_end(skb, list);

	list = nla_nest_start(skb, MPIP_NODE_A_ADDRS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < n->naddrs; i++) {
		if (nla_put_in_addr(skb, MPIP_NODE_A_ADDR,
				    (__force __be32)n->addrs[i]))
			return -EMSGSIZE;
	}
	nla_nest_end(skb, list);
	return 0;
}

static int mpip_nl_put_node(struct sk_buff *skb, struct netlink_callback *cb,
			    struct mpip_node *n)
{
	struct nlattr *nest;
	void *hdr;
	int err;

	hdr = mpip_nl_dump_hdr(skb, cb, MPIP_CMD_GET_NODES);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, MPIP_A_NODE);
	if (!nest ||
	    nla_put_u32(skb, MPIP_NODE_A_ID, n->id) ||
	    nla_put_u32(skb, MPIP_NODE_A_PEER_ID, mpip_node_peer_id(n)) ||
	    nla_put_u8(skb, MPIP_NODE_A_VERIFIED, READ_ONCE(n->verified)) ||
	    nla_put_u32(skb, MPIP_NODE_A_AGE_MS, mpip_age_ms(n->tn.stamp)))
		goto err;
	spin_lock_bh(&n->lock);
	err = mpip_nl_put_eps(skb, n);
	spin_unlock_bh(&n->lock);
	if (err)
		goto err;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
err:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

typedef int (*mpip_nl_put_t)(struct sk_buff *skb, struct netlink_callback *cb,
			     struct hlist_node *pos);

/*
 * Dump one RCU hash table: cb->args[0] is the bucket and cb->args[1] the
 * position inside it where the previous message stopped.
 */
static int mpip_nl_dump_table(struct sk_buff *skb, struct netlink_callback *cb,
			      struct hlist_head *buckets, unsigned long n,
			      mpip_nl_put_t put)
{
	struct hlist_node *pos;
	unsigned long b, i;

	rcu_read_lock();
	for (b = cb->args[0]; b < n; b++, cb->args[1] = 0) {
		i = 0;
		__hlist_for_each_rcu(pos, &buckets[b]) {
			if (i++ < cb->args[1])
				continue;
			if (put(skb, cb, pos)) {
				cb->args[1] = i - 1;
				goto out;
			}
		}
	}
out:
	cb->args[0] = b;
	rcu_read_unlock();
	return skb->len;
}

static int mpip_nl_put_avail_pos(struct sk_buff *skb,
				 struct netlink_callback *cb,
				 struct hlist_node *pos)
{
	return mpip_nl_put_avail(skb, cb,
				 hlist_entry(pos, struct mpip_avail, tn.hnode));
}

static int mpip_nl_put_node_pos(struct sk_buff *skb,
				struct netlink_callback *cb,
				struct hlist_node *pos)
{
	return mpip_nl_put_node(skb, cb,
				hlist_entry(pos, struct mpip_node, tn.hnode));
}

static int mpip_nl_dump_avail(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mpip_net *mn = mpip_pernet(sock_net(skb->sk));

	return mpip_nl_dump_table(skb, cb, mn->avail.buckets, mn->avail.size,
				  mpip_nl_put_avail_pos);
}

static int mpip_nl_dump_nodes(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mpip_net *mn = mpip_pernet(sock_net(skb->sk));

	return mpip_nl_dump_table(skb, cb, mn->nodes.buckets, mn->nodes.size,
				  mpip_nl_put_node_pos);
}

static int mpip_nl_put_session(struct sk_buff *skb,
			       struct netlink_callback *cb,
			       const struct mpip_session *s)
{
	struct nlattr *nest;
	void *hdr;

	hdr = mpip_nl_dump_hdr(skb, cb, MPIP_CMD_GET_SESSIONS);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, MPIP_A_SESSION);
	if (!nest ||
	    nla_put_u32(skb, MPIP_SESSION_A_NODE_ID, READ_ONCE(s->id.node_id)) ||
	    nla_put_u16(skb, MPIP_SESSION_A_ID, READ_ONCE(s->id.sid)) ||
	    nla_put_u8(skb, MPIP_SESSION_A_PROTO, s->t.proto) ||
	    nla_put_in_addr(skb, MPIP_SESSION_A_LADDR, s->t.laddr) ||
	    nla_put_u16(skb, MPIP_SESSION_A_LPORT, ntohs(s->t.lport)) ||
	    nla_put_in_addr(skb, MPIP_SESSION_A_RADDR, s->t.raddr) ||
	    nla_put_u16(skb, MPIP_SESSION_A_RPORT, ntohs(s->t.rport)) ||
	    nla_put_u8(skb, MPIP_SESSION_A_CONFIRMED,
		       READ_ONCE(s->confirmed)) ||
	    nla_put_u32(skb, MPIP_SESSION_A_AGE_MS, mpip_age_ms(s->stamp)) ||
	    nla_put_u64_64bit(skb, MPIP_SESSION_A_TX_PKTS,
			      atomic64_read(&s->tx_pkts), MPIP_SESSION_A_PAD) ||
	    nla_put_u64_64bit(skb, MPIP_SESSION_A_RX_PKTS,
			      atomic64_read(&s->rx_pkts), MPIP_SESSION_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * The session dump walks the resizable table with an iterator kept in
 * cb->args[0] from .start to .done; cb->args[1] says that the session
 * the iterator stands on did not fit in the previous message.  A resize
 * during the dump restarts the walk, so a session may be listed twice.
 */
static int mpip_nl_sessions_start(struct netlink_callback *cb)
{
	struct mpip_net *mn = mpip_pernet(sock_net(cb->skb->sk));
	struct rhashtable_iter *it = kmalloc(sizeof(*it), GFP_KERNEL);

	if (!it)
		return -ENOMEM;
	mpip_sessions_walk_enter(mn, it);
	cb->args[0] = (unsigned long)it;
	cb->args[1] = 0;
	return 0;
}

static int mpip_nl_sessions_done(struct netlink_callback *cb)
{
	struct rhashtable_iter *it = (struct rhashtable_iter *)cb->args[0];

	if (it) {
		rhashtable_walk_exit(it);
		kfree(it);
	}
	return 0;
}

static int mpip_nl_dump_sessions(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct rhashtable_iter *it = (struct rhashtable_iter *)cb->args[0];
	struct mpip_session *s;

	rhashtable_walk_start(it);
	s = cb->args[1] ? rhashtable_walk_peek(it) : rhashtable_walk_next(it);
	for (; s; s = rhashtable_walk_next(it)) {
		if (IS_ERR(s))
			continue;	/* resized: the walk starts over */
		if (mpip_nl_put_session(skb, cb, s)) {
			cb->args[1] = 1;
			goto out;
		}
	}
	cb->args[1] = 0;
out:
	rhashtable_walk_stop(it);
	return skb->len;
}

static void mpip_nl_path_sum(const struct mpip_path *p,
			     struct mpip_path_pcpu *sum)
{
	const struct mpip_path_pcpu *pc;
	u64 tp, tb, rp, rb;
	unsigned int start;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(p->pcpu, cpu);
		do {
			start = u64_stats_fetch_begin(&pc->syncp);
			tp = pc->tx_pkts;
			tb = pc->tx_bytes;
			rp = pc->rx_pkts;
			rb = pc->rx_bytes;
		} while (u64_stats_fetch_retry(&pc->syncp, start));
		sum->tx_pkts += tp;
		sum->tx_bytes += tb;
		sum->rx_pkts += rp;
		sum->rx_bytes += rb;
	}
}

static int mpip_nl_put_path_delay(struct sk_buff *skb, struct mpip_net *mn,
				  struct mpip_path *p)
{
	u32 mtu = mpip_path_err_mtu(p);
	struct mpip_path_delay d;
	struct mpip_rtt rtt;
	u64 fb;

	spin_lock_bh(&p->lock);
	d = p->delay;
	rtt = p->rtt;
	fb = p->feedback;
	spin_unlock_bh(&p->lock);
	if (rtt.have && nla_put_u32(skb, MPIP_PATH_A_RTT_US, rtt.srtt))
		return -EMSGSIZE;
	if (mtu && nla_put_u32(skb, MPIP_PATH_A_MTU, mtu))
		return -EMSGSIZE;
	if (nla_put_u32(skb, MPIP_PATH_A_TIMEOUT_MS,
			mpip_rtt_timeout(&rtt,
					 READ_ONCE(mn->cfg.path_timeout_ms))) ||
	    nla_put_u8(skb, MPIP_PATH_A_HAVE_DELAY, d.have_sample) ||
	    nla_put_u32(skb, MPIP_PATH_A_MIN_DELAY_US, d.d_min) ||
	    nla_put_u32(skb, MPIP_PATH_A_DELAY_US, d.d_rt) ||
	    nla_put_u32(skb, MPIP_PATH_A_QDELAY_US, d.q) ||
	    nla_put_u32(skb, MPIP_PATH_A_MAX_QDELAY_US, d.q_max) ||
	    nla_put_u64_64bit(skb, MPIP_PATH_A_FEEDBACK, fb, MPIP_PATH_A_PAD) ||
	    nla_put_u32(skb, MPIP_PATH_A_FB_AGE_MS,
			fb ? mpip_age_ms(p->last_fb) : U32_MAX))
		return -EMSGSIZE;
	return 0;
}

/*
 * Return routability: verified, or where a NAT made the probes come from;
 * and how the path crosses it.
 */
static int mpip_nl_put_path_rr(struct sk_buff *skb, struct mpip_path *p)
{
	__be16 port, dport;
	__be32 addr;

	spin_lock_bh(&p->lock);
	addr = p->seen_addr;
	port = p->seen_port;
	dport = p->dport;
	spin_unlock_bh(&p->lock);
	if (nla_put_u8(skb, MPIP_PATH_A_VERIFIED, READ_ONCE(p->rr_ok)) ||
	    nla_put_u8(skb, MPIP_PATH_A_NAT, READ_ONCE(p->nat)) ||
	    nla_put_u8(skb, MPIP_PATH_A_ENCAP, READ_ONCE(p->encap)) ||
	    nla_put_u16(skb, MPIP_PATH_A_DPORT, ntohs(dport)) ||
	    nla_put_u8(skb, MPIP_PATH_A_LEARNED, p->learned))
		return -EMSGSIZE;
	if (addr && (nla_put_in_addr(skb, MPIP_PATH_A_SEEN_ADDR, addr) ||
		     nla_put_u16(skb, MPIP_PATH_A_SEEN_PORT, ntohs(port))))
		return -EMSGSIZE;
	return 0;
}

/*
 * The link policy at both ends: the path's tier, whether it is metered
 * (and so, with a lower tier at work, cold); and what the loss oracle
 * finds.
 */
static int mpip_nl_put_path_policy(struct sk_buff *skb, struct mpip_net *mn,
				   const struct mpip_node *n,
				   struct mpip_path *p)
{
	unsigned int low = mpip_paths_low_tier(mn, n);
	struct mpip_loss l;

	spin_lock_bh(&p->lock);
	l = p->loss;
	spin_unlock_bh(&p->lock);
	if (nla_put_u8(skb, MPIP_PATH_A_TIER, mpip_path_tier(mn, p)) ||
	    nla_put_u8(skb, MPIP_PATH_A_METERED, mpip_path_metered(mn, p)) ||
	    nla_put_u8(skb, MPIP_PATH_A_LOSS_PCT, mpip_loss_pct(&l)) ||
	    nla_put_u8(skb, MPIP_PATH_A_LOSSY,
		       l.lossy && READ_ONCE(mn->cfg.loss_pct)) ||
	    nla_put_u8(skb, MPIP_PATH_A_COLD, mpip_path_cold(mn, p, low)))
		return -EMSGSIZE;
	return 0;
}

static int mpip_nl_put_path(struct sk_buff *skb, struct netlink_callback *cb,
			    struct mpip_net *mn, const struct mpip_node *n,
			    struct mpip_path *p)
{
	struct mpip_path_pcpu sum;
	struct nlattr *nest;
	void *hdr;

	hdr = mpip_nl_dump_hdr(skb, cb, MPIP_CMD_GET_PATHS);
	if (!hdr)
		return -EMSGSIZE;
	mpip_nl_path_sum(p, &sum);
	nest = nla_nest_start(skb, MPIP_A_PATH);
	if (!nest ||
	    nla_put_u32(skb, MPIP_PATH_A_NODE_ID, n->id) ||
	    nla_put_u8(skb, MPIP_PATH_A_ID, p->id) ||
	    nla_put_in_addr(skb, MPIP_PATH_A_SADDR, p->saddr) ||
	    nla_put_in_addr(skb, MPIP_PATH_A_DADDR, p->daddr) ||
	    nla_put_u32(skb, MPIP_PATH_A_IFINDEX, p->ifindex) ||
	    nla_put_u8(skb, MPIP_PATH_A_STATE, READ_ONCE(p->state)) ||
	    nla_put_u32(skb, MPIP_PATH_A_WEIGHT, READ_ONCE(p->weight)) ||
	    mpip_nl_put_path_delay(skb, mn, p) ||
	    mpip_nl_put_path_rr(skb, p) ||
	    mpip_nl_put_path_policy(skb, mn, n, p) ||
	    nla_put_u64_64bit(skb, MPIP_PATH_A_TX_PKTS, sum.tx_pkts,
			      MPIP_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, MPIP_PATH_A_TX_BYTES, sum.tx_bytes,
			      MPIP_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, MPIP_PATH_A_RX_PKTS, sum.rx_pkts,
			      MPIP_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, MPIP_PATH_A_RX_BYTES, sum.rx_bytes,
			      MPIP_PATH_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * One message per path: cb->args[0] is the node bucket, args[1] the node
 * inside it, args[2] the path slot where the previous message stopped and
 * args[3] that node's token.  A node found there with another token (the
 * one before went away meanwhile) is dumped from its first slot.
 */
static int mpip_nl_dump_paths(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mpip_net *mn = mpip_pernet(sock_net(skb->sk));
	struct mpip_node *n;
	struct mpip_path *p;
	unsigned long b, i, slot;

	rcu_read_lock();
	for (b = cb->args[0]; b < mn->nodes.size; b++, cb->args[1] = 0) {
		i = 0;
		hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
			if (i++ < cb->args[1])
				continue;
			slot = n->id == cb->args[3] ? cb->args[2] : 0;
			for (; slot < MPIP_MAX_PATHS; slot++) {
				p = rcu_dereference(n->paths[slot]);
				if (p && mpip_nl_put_path(skb, cb, mn, n, p)) {
					cb->args[1] = i - 1;
					cb->args[2] = slot;
					cb->args[3] = n->id;
					goto out;
				}
			}
			cb->args[2] = 0;
		}
	}
out:
	cb->args[0] = b;
	rcu_read_unlock();
	return skb->len;
}

static int mpip_nl_put_link(struct sk_buff *skb, struct netlink_callback *cb,
			    struct mpip_net *mn, const struct net_device *dev)
{
	struct nlattr *nest;
	void *hdr;

	hdr = mpip_nl_dump_hdr(skb, cb, MPIP_CMD_GET_LINKS);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, MPIP_A_LINK);
	if (!nest ||
	    nla_put_u32(skb, MPIP_LINK_A_IFINDEX, dev->ifindex) ||
	    nla_put_string(skb, MPIP_LINK_A_NAME, dev->name) ||
	    nla_put_u8(skb, MPIP_LINK_A_ADVERTISE,
		       mpip_link_advertised(mn, dev->ifindex)) ||
	    nla_put_u8(skb, MPIP_LINK_A_BACKUP,
		       mpip_link_backup(mn, dev->ifindex)) ||
	    nla_put_u8(skb, MPIP_LINK_A_NAT, mpip_link_nat(mn, dev->ifindex)) ||
	    nla_put_u8(skb, MPIP_LINK_A_TIER,
		       mpip_link_tier(mn, dev->ifindex)) ||
	    nla_put_u8(skb, MPIP_LINK_A_METERED,
		       mpip_link_metered(mn, dev->ifindex))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * One message per interface but loopback; cb->args[0]: those sent.  Under
 * RTNL, as renames are: under RCU alone a name could be read half old,
 * half new.
 */
static int mpip_nl_dump_links(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mpip_net *mn = mpip_pernet(sock_net(skb->sk));
	struct net_device *dev;
	long i = 0;

	rtnl_lock();
	for_each_netdev(mn->net, dev) {
		if (dev->flags & IFF_LOOPBACK || i++ < cb->args[0])
			continue;
		if (mpip_nl_put_link(skb, cb, mn, dev)) {
			i--;
			break;
		}
	}
	cb->args[0] = i;
	rtnl_unlock();
	return skb->len;
}

static int mpip_nl_set_link(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MPIP_LINK_A_MAX + 1];
	u32 mask = 0, flags = 0;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MPIP_A_LINK))
		return -EINVAL;
	err = nla_parse_nested(tb, MPIP_LINK_A_MAX, info->attrs[MPIP_A_LINK],
			       mpip_link_policy, info->extack);
	if (err)
		return err;
	if (NL_REQ_ATTR_CHECK(info->extack, info->attrs[MPIP_A_LINK], tb,
			      MPIP_LINK_A_IFINDEX))
		return -EINVAL;
	if (tb[MPIP_LINK_A_ADVERTISE]) {
		mask |= MPIP_LINK_F_NO_ADVERTISE;
		if (!nla_get_u8(tb[MPIP_LINK_A_ADVERTISE]))
			flags |= MPIP_LINK_F_NO_ADVERTISE;
	}
	if (tb[MPIP_LINK_A_BACKUP] && tb[MPIP_LINK_A_TIER]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[MPIP_LINK_A_TIER],
				    "give backup or tier, not both");
		return -EINVAL;
	}
	if (tb[MPIP_LINK_A_BACKUP] || tb[MPIP_LINK_A_TIER]) {
		mask |= MPIP_LINK_F_TIER;
		flags |= (tb[MPIP_LINK_A_TIER] ?
			  (u32)nla_get_u8(tb[MPIP_LINK_A_TIER]) :
			  (u32)nla_get_u8(tb[MPIP_LINK_A_BACKUP])) <<
			 MPIP_LINK_F_TIER_SHIFT;
	}
	if (tb[MPIP_LINK_A_METERED]) {
		mask |= MPIP_LINK_F_METERED;
		if (nla_get_u8(tb[MPIP_LINK_A_METERED]))
			flags |= MPIP_LINK_F_METERED;
	}
	if (tb[MPIP_LINK_A_NAT]) {
		mask |= MPIP_LINK_F_NAT;
		flags |= (u32)nla_get_u8(tb[MPIP_LINK_A_NAT]) <<
			 MPIP_LINK_F_NAT_SHIFT;
	}
	return mpip_link_set(mpip_nl_net(info),
			     nla_get_u32(tb[MPIP_LINK_A_IFINDEX]), mask, flags,
			     info->extack);
}

/* A range attribute into @lo and @hi; sets @bit in @r->match. */
static void mpip_nl_rule_range(const struct nlattr *a, struct mpip_rule *r,
			       u32 bit, u16 *lo, u16 *hi)
{
	struct mpip_rule_range rg;

	if (!a)
		return;
	nla_memcpy(&rg, a, sizeof(rg));
	*lo = rg.start;
	*hi = rg.end;
	r->match |= bit;
}

/* An address/prefix-length pair; both or neither.  */
static int mpip_nl_rule_prefix(struct nlattr **tb, int aa, int al,
			       struct mpip_rule *r, u32 bit, u32 *addr,
			       u8 *plen, struct netlink_ext_ack *extack)
{
	if (!tb[aa] && !tb[al])
		return 0;
	if (!tb[aa] || !tb[al]) {
		NL_SET_ERR_MSG(extack, "an address goes with its prefix length");
		return -EINVAL;
	}
	*addr = (__force u32)nla_get_in_addr(tb[aa]);
	*plen = nla_get_u8(tb[al]);
	r->match |= bit;
	return 0;
}

/* The u32 array of MPIP_RULE_A_IFS (at most 8: the policy's limit). */
static int mpip_nl_rule_ifs(const struct nlattr *a, struct mpip_rule *r,
			    struct netlink_ext_ack *extack)
{
	u32 ifs[MPIP_RULE_MAX_IFS];
	unsigned int i, len = nla_len(a);

	if (!len || len % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(extack, a, "not an array of u32 indexes");
		return -EINVAL;
	}
	nla_memcpy(ifs, a, len);
	r->nifs = len / sizeof(u32);
	for (i = 0; i < r->nifs; i++)
		r->ifs[i] = ifs[i];
	return 0;
}

/* The rule a request's nested MPIP_A_RULE describes (not checked yet). */
static int mpip_nl_rule_parse(struct genl_info *info, struct mpip_rule *r)
{
	struct nlattr *tb[MPIP_RULE_A_MAX + 1];
	int err;

	memset(r, 0, sizeof(*r));
	if (GENL_REQ_ATTR_CHECK(info, MPIP_A_RULE))
		return -EINVAL;
	err = nla_parse_nested(tb, MPIP_RULE_A_MAX, info->attrs[MPIP_A_RULE],
			       mpip_rule_policy, info->extack);
	if (err)
		return err;
	if (tb[MPIP_RULE_A_PREF])
		r->pref = nla_get_u32(tb[MPIP_RULE_A_PREF]);
	if (tb[MPIP_RULE_A_PROTO]) {
		r->proto = nla_get_u8(tb[MPIP_RULE_A_PROTO]);
		r->match |= MPIP_RM_PROTO;
	}
	err = mpip_nl_rule_prefix(tb, MPIP_RULE_A_DADDR, MPIP_RULE_A_DPLEN, r,
				  MPIP_RM_DST, &r->daddr, &r->dplen,
				  info->extack) ?:
	      mpip_nl_rule_prefix(tb, MPIP_RULE_A_SADDR, MPIP_RULE_A_SPLEN, r,
				  MPIP_RM_SRC, &r->saddr, &r->splen,
				  info->extack);
	if (err)
		return err;
	mpip_nl_rule_range(tb[MPIP_RULE_A_DPORT], r, MPIP_RM_DPORT,
			   &r->dport_lo, &r->dport_hi);
	mpip_nl_rule_range(tb[MPIP_RULE_A_SPORT], r, MPIP_RM_SPORT,
			   &r->sport_lo, &r->sport_hi);
	mpip_nl_rule_range(tb[MPIP_RULE_A_LEN], r, MPIP_RM_LEN,
			   &r->len_lo, &r->len_hi);
	if (tb[MPIP_RULE_A_DSCP]) {
		r->dscp = nla_get_u8(tb[MPIP_RULE_A_DSCP]);
		r->match |= MPIP_RM_DSCP;
	}
	if (tb[MPIP_RULE_A_MARK]) {
		r->mark = nla_get_u32(tb[MPIP_RULE_A_MARK]);
		r->mark_mask = tb[MPIP_RULE_A_MARK_MASK] ?
			       nla_get_u32(tb[MPIP_RULE_A_MARK_MASK]) : ~0U;
		r->match |= MPIP_RM_MARK;
	}
	if (nla_get_flag(tb[MPIP_RULE_A_PURE_ACK]))
		r->match |= MPIP_RM_PURE_ACK;
	if (tb[MPIP_RULE_A_MODE])
		r->mode = nla_get_u8(tb[MPIP_RULE_A_MODE]);
	if (tb[MPIP_RULE_A_FALLBACK])
		r->fallback = nla_get_u8(tb[MPIP_RULE_A_FALLBACK]);
	if (tb[MPIP_RULE_A_COPIES])
		r->copies = nla_get_u8(tb[MPIP_RULE_A_COPIES]);
	r->nometered = nla_get_flag(tb[MPIP_RULE_A_NOMETERED]);
	r->ifs_deny = nla_get_flag(tb[MPIP_RULE_A_IFS_DENY]);
	if (tb[MPIP_RULE_A_IFS])
		return mpip_nl_rule_ifs(tb[MPIP_RULE_A_IFS], r, info->extack);
	return 0;
}

static int mpip_nl_rule_add(struct sk_buff *skb, struct genl_info *info)
{
	struct mpip_rule r;
	int err = mpip_nl_rule_parse(info, &r);

	if (err)
		return err;
	return mpip_rules_add_one(mpip_nl_net(info), &r,
				  info->nlhdr->nlmsg_flags & NLM_F_REPLACE,
				  info->extack);
}

static int mpip_nl_rule_del(struct sk_buff *skb, struct genl_info *info)
{
	struct mpip_rule r;
	int err = mpip_nl_rule_parse(info, &r);

	if (err)
		return err;
	if (!r.pref) {
		NL_SET_ERR_MSG(info->extack, "which rule: its preference is missing");
		return -EINVAL;
	}
	return mpip_rules_del_one(mpip_nl_net(info), r.pref, info->extack);
}

static int mpip_nl_rule_flush(struct sk_buff *skb, struct genl_info *info)
{
	mpip_rules_flush(mpip_nl_net(info));
	return 0;
}

static int mpip_nl_put_range(struct sk_buff *skb, int type, u16 lo, u16 hi)
{
	struct mpip_rule_range rg = { .start = lo, .end = hi };

	return nla_put(skb, type, sizeof(rg), &rg);
}

/* The attributes of @r's match keys. */
static int mpip_nl_put_rule_keys(struct sk_buff *skb,
				 const struct mpip_rule *r)
{
	u32 m = r->match;

	if (((m & MPIP_RM_PROTO) &&
	     nla_put_u8(skb, MPIP_RULE_A_PROTO, r->proto)) ||
	    ((m & MPIP_RM_DST) &&
	     (nla_put_in_addr(skb, MPIP_RULE_A_DADDR, (__force __be32)r->daddr) ||
	      nla_put_u8(skb, MPIP_RULE_A_DPLEN, r->dplen))) ||
	    ((m & MPIP_RM_SRC) &&
	     (nla_put_in_addr(skb, MPIP_RULE_A_SADDR, (__force __be32)r->saddr) ||
	      nla_put_u8(skb, MPIP_RULE_A_SPLEN, r->splen))) ||
	    ((m & MPIP_RM_DPORT) &&
	     mpip_nl_put_range(skb, MPIP_RULE_A_DPORT, r->dport_lo,
			       r->dport_hi)) ||
	    ((m & MPIP_RM_SPORT) &&
	     mpip_nl_put_range(skb, MPIP_RULE_A_SPORT, r->sport_lo,
			       r->sport_hi)) ||
	    ((m & MPIP_RM_LEN) &&
	     mpip_nl_put_range(skb, MPIP_RULE_A_LEN, r->len_lo, r->len_hi)) ||
	    ((m & MPIP_RM_DSCP) &&
	     nla_put_u8(skb, MPIP_RULE_A_DSCP, r->dscp)) ||
	    ((m & MPIP_RM_MARK) &&
	     (nla_put_u32(skb, MPIP_RULE_A_MARK, r->mark) ||
	      nla_put_u32(skb, MPIP_RULE_A_MARK_MASK, r->mark_mask))) ||
	    ((m & MPIP_RM_PURE_ACK) && nla_put_flag(skb, MPIP_RULE_A_PURE_ACK)))
		return -EMSGSIZE;
	return 0;
}

static int mpip_nl_put_rule_ifs(struct sk_buff *skb,
				const struct mpip_rule *r)
{
	u32 ifs[MPIP_RULE_MAX_IFS];
	unsigned int i;

	if (!r->nifs)
		return 0;
	for (i = 0; i < r->nifs; i++)
		ifs[i] = r->ifs[i];
	if (nla_put(skb, MPIP_RULE_A_IFS, r->nifs * sizeof(u32), ifs) ||
	    (r->ifs_deny && nla_put_flag(skb, MPIP_RULE_A_IFS_DENY)))
		return -EMSGSIZE;
	return 0;
}

static int mpip_nl_put_rule(struct sk_buff *skb, struct netlink_callback *cb,
			    const struct mpip_rule *r)
{
	struct nlattr *nest;
	void *hdr;

	hdr = mpip_nl_dump_hdr(skb, cb, MPIP_CMD_GET_RULES);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, MPIP_A_RULE);
	if (!nest || nla_put_u32(skb, MPIP_RULE_A_PREF, r->pref) ||
	    mpip_nl_put_rule_keys(skb, r) ||
	    nla_put_u8(skb, MPIP_RULE_A_MODE, r->mode) ||
	    nla_put_u8(skb, MPIP_RULE_A_FALLBACK, r->fallback) ||
	    (r->copies && nla_put_u8(skb, MPIP_RULE_A_COPIES, r->copies)) ||
	    (r->nometered && nla_put_flag(skb, MPIP_RULE_A_NOMETERED)) ||
	    mpip_nl_put_rule_ifs(skb, r) ||
	    nla_put_u64_64bit(skb, MPIP_RULE_A_PKTS, r->pkts,
			      MPIP_RULE_A_PAD) ||
	    nla_put_u64_64bit(skb, MPIP_RULE_A_BYTES, r->bytes,
			      MPIP_RULE_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
}

/* One message per rule; cb->args[0]: rules sent. */
static int mpip_nl_dump_rules(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mpip_net *mn = mpip_pernet(sock_net(skb->sk));
	struct mpip_rule r;

	while (mpip_rules_get(mn, cb->args[0], &r)) {
		if (mpip_nl_put_rule(skb, cb, &r))
			break;
		cb->args[0]++;
	}
	return skb->len;
}

static const struct genl_ops mpip_genl_ops[] = {
	{
		.cmd = MPIP_CMD_GET_STATUS,
		.doit = mpip_nl_get_status,
	},
	{
		.cmd = MPIP_CMD_SET_STATUS,
		.doit = mpip_nl_set_status,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_GET_AVAIL,
		.dumpit = mpip_nl_dump_avail,
	},
	{
		.cmd = MPIP_CMD_GET_NODES,
		.dumpit = mpip_nl_dump_nodes,
	},
	{
		.cmd = MPIP_CMD_GET_STATS,
		.doit = mpip_nl_get_stats,
	},
	{
		.cmd = MPIP_CMD_GET_CONFIG,
		.doit = mpip_nl_get_config,
	},
	{
		.cmd = MPIP_CMD_SET_CONFIG,
		.doit = mpip_nl_set_config,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_FLUSH,
		.doit = mpip_nl_flush,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_GET_SESSIONS,
		.start = mpip_nl_sessions_start,
		.dumpit = mpip_nl_dump_sessions,
		.done = mpip_nl_sessions_done,
	},
	{
		.cmd = MPIP_CMD_GET_PATHS,
		.dumpit = mpip_nl_dump_paths,
	},
	{
		.cmd = MPIP_CMD_GET_LINKS,
		.dumpit = mpip_nl_dump_links,
	},
	{
		.cmd = MPIP_CMD_SET_LINK,
		.doit = mpip_nl_set_link,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_RULE_ADD,
		.doit = mpip_nl_rule_add,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_RULE_DEL,
		.doit = mpip_nl_rule_del,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_RULE_FLUSH,
		.doit = mpip_nl_rule_flush,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = MPIP_CMD_GET_RULES,
		.dumpit = mpip_nl_dump_rules,
	},
};

enum { MPIP_NL_MCGRP_EVENTS };

static const struct genl_multicast_group mpip_genl_mcgrps[] = {
	[MPIP_NL_MCGRP_EVENTS] = { .name = MPIP_MCGRP_EVENTS },
};

static struct genl_family mpip_genl_family __ro_after_init = {
	.name = MPIP_GENL_NAME,
	.version = MPIP_GENL_VERSION,
	.maxattr = MPIP_A_MAX,
	.policy = mpip_nl_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = mpip_genl_ops,
	.n_ops = ARRAY_SIZE(mpip_genl_ops),
	.resv_start_op = MPIP_CMD_GET_STATUS,
	.mcgrps = mpip_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(mpip_genl_mcgrps),
};

/*
 * The family's multicast group IDs are valid only while it is registered,
 * and events come from hooks, timers and work that run before the family
 * is registered and after it is gone.  So event.c asks here, under
 * rcu_read_lock(), and mpip_genl_unregister() clears the flag and waits
 * for an RCU grace period before it unregisters the family.
 */
static bool mpip_nl_live;

/* Does a socket of @net listen to events?  (event.c; RCU held) */
bool mpip_nl_event_listened(struct net *net)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "mpip: events without RCU");
	return READ_ONCE(mpip_nl_live) &&
	       genl_has_listeners(&mpip_genl_family, net, MPIP_NL_MCGRP_EVENTS);
}

/* The header of an event message in @skb, or NULL if there is no room. */
void *mpip_nl_event_start(struct sk_buff *skb)
{
	return genlmsg_put(skb, 0, 0, &mpip_genl_family, 0, MPIP_CMD_EVENT);
}

/* Multicast a finished event message to @net's listeners; consumes @skb. */
void mpip_nl_event_send(struct net *net, struct sk_buff *skb)
{
	genlmsg_multicast_netns(&mpip_genl_family, net, skb, 0,
				MPIP_NL_MCGRP_EVENTS, GFP_ATOMIC);
}

/* The uapi enums and the core's are the same numbers. */
#define MPIP_SAME(a, b)	((int)(a) == (int)(b))
static_assert(MPIP_SAME(MPIP_RULE_MODE_ALL, MPIP_MODE_ALL) &&
	      MPIP_SAME(MPIP_RULE_MODE_SINGLE, MPIP_MODE_SINGLE) &&
	      MPIP_SAME(MPIP_RULE_MODE_SELECTED, MPIP_MODE_SELECTED) &&
	      MPIP_SAME(MPIP_RULE_MODE_PROTECTED, MPIP_MODE_PROTECTED) &&
	      MPIP_SAME(MPIP_RULE_MODE_ORIGINAL, MPIP_MODE_ORIGINAL) &&
	      MPIP_SAME(MPIP_RULE_MODE_OFF + 1, MPIP_MODE_COUNT));
static_assert(MPIP_SAME(MPIP_RULE_FALLBACK_ANY, MPIP_FALLBACK_ANY) &&
	      MPIP_SAME(MPIP_RULE_FALLBACK_ORIGINAL, MPIP_FALLBACK_ORIGINAL) &&
	      MPIP_SAME(MPIP_RULE_FALLBACK_DROP + 1, MPIP_FALLBACK_COUNT));

int mpip_genl_register(void)
{
	int err = mpip_cfg_table_check();

	if (err)
		return err;
	err = genl_register_family(&mpip_genl_family);
	if (!err)
		WRITE_ONCE(mpip_nl_live, true);
	return err;
}

void mpip_genl_unregister(void)
{
	WRITE_ONCE(mpip_nl_live, false);
	/* events that saw it true are sent before the group IDs go */
	synchronize_rcu();
	genl_unregister_family(&mpip_genl_family);
}
