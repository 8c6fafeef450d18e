/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip: multipath IP for end hosts -- internal declarations.
 */
#ifndef _MPIP_H
#define _MPIP_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/rculist.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/netfilter.h>
#include <net/net_namespace.h>

#include "uapi/mpip.h"
#include "core/cm.h"

#define MPIP_VERSION		"0.1.0"

/* Room every TCP segment must leave for a data trailer. */
#define MPIP_DATA_CM_LEN	MPIP_CM_MIN_LEN

#define MPIP_AVAIL_BITS		10
#define MPIP_AVAIL_MAX		16384
#define MPIP_NODE_BITS		8
#define MPIP_NODE_MAX		4096
#define MPIP_NODE_MAX_EP	8

#define MPIP_GC_INTERVAL	HZ

struct mpip_stats {
	unsigned long cnt[__MPIP_STAT_MAX];
};

/* Tunables; written under RTNL-free genl (parallel ops), read lockless. */
struct mpip_config {
	u32 query_threshold;
	u32 peer_timeout_ms;
	u32 avail_timeout_ms;
	u32 node_timeout_ms;
};

/*
 * Head of every table entry; must be the first member, since the entry is
 * freed through it with kfree_rcu().
 */
struct mpip_tnode {
	struct hlist_node hnode;
	struct rcu_head rcu;
	unsigned long stamp;	/* jiffies of last use, READ/WRITE_ONCE */
};

/* An RCU hash table (table.c). */
struct mpip_table {
	spinlock_t lock;	/* writers; readers use RCU */
	unsigned int count;
	unsigned int max;
	unsigned int size;	/* buckets, a power of two */
	struct hlist_head *buckets;
};

typedef bool (*mpip_same_t)(const struct mpip_tnode *a,
			    const struct mpip_tnode *b);

/* Availability table entry (paper Table 2), keyed by remote (addr, port). */
struct mpip_avail {
	struct mpip_tnode tn;	/* stamp: last sent or received */
	__be32 addr;
	__be16 port;
	u8 proto;
	int state;		/* enum mpip_avail_state, READ/WRITE_ONCE */
	unsigned long flags;	/* MPIP_AVF_* bits */
	atomic_t queries;
	u32 node_id;		/* READ/WRITE_ONCE */
	unsigned long last_rx;	/* jiffies of the last CM from it */
};

enum {
	MPIP_AVF_CONFIRM,	/* a TCP confirmation is owed to this peer */
};

struct mpip_endpoint {
	__be32 addr;
	__be16 port;
};

/* Node table entry (paper Table 3): what we know about one remote node. */
struct mpip_node {
	struct mpip_tnode tn;	/* stamp: last heard from */
	u32 id;
	spinlock_t lock;	/* protects the arrays below */
	u8 nep;
	u8 nep_next;		/* slot to replace when full */
	u8 naddrs;
	struct mpip_endpoint ep[MPIP_NODE_MAX_EP];
	__be32 addrs[MPIP_CM_MAX_ADDRS];
};

/* Per network namespace state. */
struct mpip_net {
	struct net *net;
	bool enabled;		/* READ/WRITE_ONCE */
	u32 node_id;
	struct mpip_config cfg;	/* fields READ/WRITE_ONCE */
	struct mpip_stats __percpu *stats;
	struct mpip_table avail;
	struct mpip_table nodes;
	struct hlist_head avail_buckets[1 << MPIP_AVAIL_BITS];
	struct hlist_head node_buckets[1 << MPIP_NODE_BITS];
	struct delayed_work gc_work;
};

/* pernet.c */
struct mpip_net *mpip_pernet(const struct net *net);
int mpip_pernet_register(void);
void mpip_pernet_unregister(void);
void mpip_set_enabled(struct mpip_net *mn, bool on);
void mpip_flush(struct mpip_net *mn);
extern bool mpip_default_enabled;

static inline void mpip_inc(struct mpip_net *mn, enum mpip_stat s)
{
	this_cpu_inc(mn->stats->cnt[s]);
}

u64 mpip_stat_sum(const struct mpip_net *mn, enum mpip_stat s);

/* Refresh a jiffies stamp, without dirtying the cache line if current. */
static inline void mpip_touch(unsigned long *stamp)
{
	unsigned long now = jiffies;

	if (READ_ONCE(*stamp) != now)
		WRITE_ONCE(*stamp, now);
}

/* table.c */
void mpip_table_init(struct mpip_table *t, struct hlist_head *buckets,
		     unsigned int size, unsigned int max);
bool mpip_table_has_room(struct mpip_net *mn, const struct mpip_table *t);
struct mpip_tnode *mpip_table_insert(struct mpip_table *t,
				     struct mpip_tnode *n, u32 b,
				     mpip_same_t same);
void mpip_table_sweep(struct mpip_table *t, unsigned long ttl, bool all);

/* avail.c */
struct mpip_avail *mpip_avail_lookup(struct mpip_net *mn, __be32 addr,
				     __be16 port);
struct mpip_avail *mpip_avail_get(struct mpip_net *mn, __be32 addr,
				  __be16 port, u8 proto);

/* node.c */
void mpip_node_learn(struct mpip_net *mn, u32 id, __be32 addr, __be16 port,
		     const struct mpip_cm *cm);

/* trailer.c: CM trailers on socket buffers */
void mpip_cm_fill(struct mpip_net *mn, struct mpip_cm *cm, u8 flags,
		  bool with_addrs);
int mpip_skb_add_cm(struct sk_buff *skb, const struct mpip_cm *cm);
unsigned int mpip_skb_room(const struct sk_buff *skb);

/* handshake.c: control packets */
void mpip_tcp_ctrl_send(struct mpip_net *mn, const struct sk_buff *skb,
			const struct nf_hook_state *state, u8 flags);
void mpip_udp_confirm_send(struct mpip_net *mn, const struct sk_buff *skb);

/* output.c / input.c: netfilter hooks */
unsigned int mpip_out_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *state);
unsigned int mpip_in_hook(void *priv, struct sk_buff *skb,
			  const struct nf_hook_state *state);

/* netlink.c */
int mpip_genl_register(void);
void mpip_genl_unregister(void);

#endif /* _MPIP_H */
