// SPDX-License-Identifier: GPL-2.0
/*
 * mpip per network namespace state: creation, teardown, hooks, counters
 * and the garbage collector that expires table entries.
 */
#include <linux/random.h>
#include <linux/netfilter_ipv4.h>
#include <net/netns/generic.h>

#include "mpip.h"

unsigned int mpip_net_id __read_mostly;

/*
 * Input runs after conntrack's defragmentation, where that is loaded, and
 * before raw, conntrack and the filter table, so that they all see packets
 * without trailers; it reassembles fragments for this host itself.  Output
 * runs after SNAT and every other POST_ROUTING hook except the conntrack
 * confirmation, so that conntrack and NAT only see the original packet.
 */
static const struct nf_hook_ops mpip_nf_ops[MPIP_NF_OPS] = {
	[MPIP_NF_IN] = {
		.hook = mpip_in_hook,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP_PRI_CONNTRACK_DEFRAG + 1,
	},
	[MPIP_NF_OUT] = {
		.hook = mpip_out_hook,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = NF_IP_PRI_CONNTRACK_CONFIRM - 1,
	},
};

/*
 * The namespace's own copy of the hook table: each hook finds its
 * namespace's state in @priv, without a net_generic() lookup per packet.
 * Netfilter copies hook and priv when registering; it keeps the pointer
 * to these ops to find them again when unregistering.
 */
static void mpip_nf_ops_init(struct mpip_net *mn)
{
	unsigned int i;

	for (i = 0; i < MPIP_NF_OPS; i++) {
		mn->nf_ops[i] = mpip_nf_ops[i];
		mn->nf_ops[i].priv = mn;
	}
}

/*
 * Where a packet that hook @which of @mn took (a held segment, one of a
 * split packet, a copy) goes on: at the entry after mpip's own in @e, the
 * namespace's current hooks of that kind.  Looked up again each time, as
 * nf_reinject() does, since hooks come and go while a packet is held;
 * while mpip's hook is unregistered, the first hook of a later priority.
 */
unsigned int mpip_hook_next(const struct mpip_net *mn, unsigned int which,
			    const struct nf_hook_entries *e)
{
	const struct nf_hook_ops *self = &mn->nf_ops[which];
	struct nf_hook_ops **ops = nf_hook_entries_get_hook_ops(e);
	unsigned int i;

	for (i = 0; i < e->num_hook_entries; i++)
		if (ops[i] == self)
			return i + 1;
	for (i = 0; i < e->num_hook_entries; i++)
		if (ops[i]->priority > self->priority)
			break;
	return i;
}

static const struct mpip_config mpip_config_default = {
	.query_threshold = 5,
	.peer_timeout_ms = 3000,
	.avail_timeout_ms = 300000,
	.node_timeout_ms = 300000,
	.session_timeout_ms = 120000,
	.weight_step = 10,
	.weight_interval_ms = 100,
	.weight_trend_ms = 500,
	.weight_boost = 3,
	.bare_cm_ms = 10,
	.queue_steer = 1,
	.rule_event_pkts = 0,
	.heartbeat_ms = 300,
	.path_timeout_ms = 500,
	.delay_smooth_shift = 3,
	.tx_gso = 1,
	.reorder = 1,
	.reorder_max_pkts = 1000,
	.reorder_max_hold_ms = 100,
	.nat_mode = MPIP_NAT_MODE_AUTO,
	.ctrl_pps = 1000,
	.loss_pct = 0,
	.weight_tie_us = 2000,
};

u64 mpip_stat_sum(const struct mpip_net *mn, enum mpip_stat s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(mn->stats, cpu)->cnt[s];
	return sum;
}

void mpip_flush(struct mpip_net *mn)
{
	mpip_sessions_sweep(mn, 0, true);
	mpip_table_sweep(&mn->avail, 0, true);
	mpip_table_sweep(&mn->nodes, 0, true);
}

/*
 * The hooks are registered only while mpip is enabled in the namespace:
 * the packets of a disabled one meet no mpip code at all.  Caller holds
 * mn->hook_lock.
 *
 * Unregistering does not wait for the CPUs that are in a hook: one may
 * still add a session, a node or an availability entry.  Callers that
 * empty the tables next wait for a grace period first.
 */
static int mpip_hooks_set(struct mpip_net *mn, bool on)
{
	struct net *net = mn->net;
	int err;

	if (on == mn->hooked)
		return 0;
	if (!on) {
		/* No wait for the CPUs in the hooks: see above. */
		nf_unregister_net_hooks(net, mn->nf_ops, MPIP_NF_OPS);
		mn->hooked = false;
		return 0;
	}
	err = nf_register_net_hooks(net, mn->nf_ops, MPIP_NF_OPS);
	if (err)
		return err;
	mn->hooked = true;
	return 0;
}

/*
 * Switch mpip on or off in a namespace.  Off: the hooks go first, then
 * the tables, so nothing is learned after the flush.  Sleeps.
 */
int mpip_set_enabled(struct mpip_net *mn, bool on)
{
	int err = 0;

	mutex_lock(&mn->hook_lock);
	if (on) {
		/* before any node: they start out told (node.c) */
		mpip_addrs_note(mn);
		err = mpip_hooks_set(mn, true);
		if (!err)
			WRITE_ONCE(mn->enabled, true);
	} else {
		WRITE_ONCE(mn->enabled, false);
		if (mn->hooked) {
			mpip_hooks_set(mn, false);
			/*
			 * For the CPUs still in a hook (see above).  Expedited:
			 * a normal grace period's wait is a callback queued
			 * behind all others, and under heavy traffic (every
			 * freed buffer queues one with kmemleak) it waited
			 * over 10 min, its caller holding genl's cb_lock.
			 */
			synchronize_rcu_expedited();
		}
		mpip_flush(mn);
	}
	mutex_unlock(&mn->hook_lock);
	return err;
}

/*
 * Derive what the packet path reads in jiffies from the settings, once
 * per change rather than per packet.  The gap between a session's CMs
 * while it sends bare packets stays well below path_timeout_ms: the peer
 * counts on our delay reports for its path to stay up, and on our delay
 * samples for its reports.
 */
void mpip_cfg_update(struct mpip_net *mn)
{
	const struct mpip_config *c = &mn->cfg;
	u32 gap = min(READ_ONCE(c->bare_cm_ms),
		      READ_ONCE(c->path_timeout_ms) / 4);

	WRITE_ONCE(mn->peer_timeout_j,
		   msecs_to_jiffies(READ_ONCE(c->peer_timeout_ms)));
	WRITE_ONCE(mn->bare_cm_gap_j, gap ? msecs_to_jiffies(gap) : 0);
}

static void mpip_gc_work(struct work_struct *work)
{
	struct mpip_net *mn = container_of(to_delayed_work(work),
					   struct mpip_net, gc_work);

	mpip_table_sweep(&mn->avail,
			 msecs_to_jiffies(READ_ONCE(mn->cfg.avail_timeout_ms)),
			 false);
	mpip_table_sweep(&mn->nodes,
			 msecs_to_jiffies(READ_ONCE(mn->cfg.node_timeout_ms)),
			 false);
	mpip_sessions_sweep(mn,
			    msecs_to_jiffies(READ_ONCE(mn->cfg.session_timeout_ms)),
			    false);
	mpip_rules_events(mn);
	/* An empty namespace has nothing to expire: kicked again on use. */
	if (READ_ONCE(mn->avail.count) || READ_ONCE(mn->nodes.count) ||
	    READ_ONCE(mn->sessions.count))
		queue_delayed_work(system_power_efficient_wq, &mn->gc_work,
				   MPIP_GC_INTERVAL);
}

/*
 * An entry was added to a table: make sure the collector runs.  Cheap
 * when it is queued already (one bit test); called when an entry is
 * created, not per packet.
 */
void mpip_gc_kick(struct mpip_net *mn)
{
	if (!delayed_work_pending(&mn->gc_work))
		queue_delayed_work(system_power_efficient_wq, &mn->gc_work,
				   MPIP_GC_INTERVAL);
}

static u32 mpip_new_node_id(void)
{
	u32 id;

	do {
		id = get_random_u32();
	} while (!id);
	return id;
}

static int __net_init mpip_net_init(struct net *net)
{
	struct mpip_net *mn = mpip_pernet(net);
	struct hlist_head *avail, *nodes;
	int err;

	avail = kvcalloc(1 << MPIP_AVAIL_BITS, sizeof(*avail), GFP_KERNEL);
	nodes = kvcalloc(1 << MPIP_NODE_BITS, sizeof(*nodes), GFP_KERNEL);
	if (!avail || !nodes) {
		kvfree(nodes);
		kvfree(avail);
		return -ENOMEM;
	}
	mn->net = net;
	mn->node_id = mpip_new_node_id();
	get_random_bytes(&mn->secret, sizeof(mn->secret));
	mpip_nf_ops_init(mn);
	mn->cfg = mpip_config_default;
	mpip_cfg_update(mn);
	mutex_init(&mn->hook_lock);
	mutex_init(&mn->cfg_lock);
	mpip_table_init(&mn->avail, avail, 1 << MPIP_AVAIL_BITS,
			MPIP_AVAIL_MAX);
	mpip_table_init(&mn->nodes, nodes, 1 << MPIP_NODE_BITS,
			MPIP_NODE_MAX);
	mn->nodes.release = mpip_node_release;
	mn->nodes.ttl = mpip_node_ttl;
	mn->nodes.evictable = mpip_node_evictable;
	mn->avail.ttl = mpip_avail_ttl;
	mn->avail.evictable = mpip_avail_evictable;
	INIT_DELAYED_WORK(&mn->gc_work, mpip_gc_work);
	mpip_tick_init(mn);
	mpip_icmp_init(mn);
	mpip_event_init(mn);
	mpip_budget_init_net(mn);
	mpip_links_init(mn);
	mpip_rules_init(mn);

	mn->stats = alloc_percpu(struct mpip_stats);
	if (!mn->stats) {
		err = -ENOMEM;
		goto err_avail;
	}
	err = mpip_sessions_init(&mn->sessions);
	if (err)
		goto err_stats;

	err = mpip_set_enabled(mn, READ_ONCE(mpip_default_enabled));
	if (err)
		goto err_sessions;

	return 0;

err_sessions:
	mpip_sessions_destroy(&mn->sessions);
err_stats:
	free_percpu(mn->stats);
err_avail:
	mutex_destroy(&mn->rules_lock);
	mutex_destroy(&mn->cfg_lock);
	mutex_destroy(&mn->hook_lock);
	kvfree(nodes);
	kvfree(avail);
	return err;
}

/*
 * A namespace goes, or the module: the hooks go first.  The netns core
 * waits for a grace period between the pre_exit and the exit methods
 * (for all namespaces of a batch at once), so no CPU is in a hook by the
 * time mpip_net_exit() empties the tables.
 */
static void __net_exit mpip_net_pre_exit(struct net *net)
{
	struct mpip_net *mn = mpip_pernet(net);

	mutex_lock(&mn->hook_lock);
	WRITE_ONCE(mn->enabled, false);
	mpip_hooks_set(mn, false);
	mutex_unlock(&mn->hook_lock);
}

/*
 * Nothing adds to the tables any more (mpip_net_pre_exit()): stop the
 * work items, which only expire entries and send heartbeats, empty the
 * tables and free them.  Nor does anything read them: the hooks were
 * their only readers besides the work items and netlink, and no netlink
 * socket is left in the namespace (nor the family, at unload).
 */
static void __net_exit mpip_net_exit(struct net *net)
{
	struct mpip_net *mn = mpip_pernet(net);

	cancel_delayed_work_sync(&mn->gc_work);
	mpip_tick_stop(mn);
	mpip_flush(mn);
	WARN_ON_ONCE(READ_ONCE(mn->sessions.count) ||
		     READ_ONCE(mn->nodes.count) || READ_ONCE(mn->avail.count));
	mpip_sessions_destroy(&mn->sessions);
	kvfree(mn->nodes.buckets);
	kvfree(mn->avail.buckets);
	free_percpu(mn->stats);
	mpip_links_destroy(mn);
	mpip_rules_destroy(mn);
	mutex_destroy(&mn->cfg_lock);
	mutex_destroy(&mn->hook_lock);
}

static struct pernet_operations mpip_net_ops = {
	.init = mpip_net_init,
	.pre_exit = mpip_net_pre_exit,
	.exit = mpip_net_exit,
	.id = &mpip_net_id,
	.size = sizeof(struct mpip_net),
};

int mpip_pernet_register(void)
{
	return register_pernet_subsys(&mpip_net_ops);
}

void mpip_pernet_unregister(void)
{
	unregister_pernet_subsys(&mpip_net_ops);
}
