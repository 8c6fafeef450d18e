/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip: multipath IP for end hosts -- internal declarations.
 */
#ifndef _MPIP_H
#define _MPIP_H

#include <linux/types.h>
#include <linux/jhash.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/rculist.h>
#include <linux/rhashtable.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/netfilter.h>
#include <linux/netfilter_bridge.h>
#include <linux/u64_stats_sync.h>
#include <linux/ratelimit_types.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "kcompat.h"
#include "uapi/mpip.h"
#include "core/cm.h"
#include "core/auth.h"
#include "core/rule.h"
#include "core/path.h"
#include "core/reorder.h"
#include "core/encap.h"
#include "core/ftcp.h"
#include "core/loss.h"

#define MPIP_VERSION		"0.1.0"

/* Room every TCP segment must leave for a data trailer (v2, no list). */
#define MPIP_DATA_CM_LEN	MPIP_CM2_MIN_LEN
/*
 * Extension of a handshake CM (a query or a confirmation): the sender's
 * key for the peer pair and the high half of its counter (keys.c).
 */
#define MPIP_HS_EXT_LEN		12
/* An unverified node asks for the peer's addresses at most this often. */
#define MPIP_ADDR_QUERY_GAP	HZ
#define MPIP_ADDR_ROUNDS	4	/* IP_CHANGE rounds per change */

/*
 * Entries are per remote (address, port): a receiver of many flows has
 * one per flow, so the table has as many buckets as its maximum of 16384
 * entries allows at a load of about 4 (chains of a few, not dozens).
 */
#define MPIP_AVAIL_BITS		12
#define MPIP_AVAIL_MAX		16384
/*
 * Nodes are looked up by token for every packet from a peer; half of the
 * table may be strangers' (a flood of forged queries fills it), so it
 * has a bucket for every 4 entries too.
 */
#define MPIP_NODE_BITS		10
#define MPIP_NODE_MAX		4096
#define MPIP_NODE_MAX_EP	8
/*
 * A full table evicts the least recently used stranger's entry of a
 * sample: at most this many of them, in at most this many buckets, with
 * at most this many entries walked (table.c).
 */
#define MPIP_EVICT_SAMPLE	8
#define MPIP_EVICT_BUCKETS	8
#define MPIP_EVICT_WALK		64
/* A full endpoint list changes at most this often (node.c). */
#define MPIP_NODE_EP_REPLACE	(HZ / 10)
/* A node's paths are rebuilt for a new address list at most this often. */
#define MPIP_NODE_SYNC_GAP	(HZ / 10)

#define MPIP_GC_INTERVAL	HZ

/* Paths per remote node; a path's ID is its slot plus one. */
#define MPIP_MAX_PATHS		16
/* Of those, paths to a NAT's end, learned from where CMs came from */
#define MPIP_LEARNED_MAX	8
#define MPIP_SESSION_MAX	65536
/*
 * After each round of Algorithm 1 the weights of a node's paths are
 * rescaled to this sum, so that a step S is always the same share of the
 * traffic (S / total per path; core/path.c).
 */
#define MPIP_WEIGHT_TOTAL	1000
/* Queueing delays below this are measurement noise for Algorithm 1. */
#define MPIP_QDELAY_FLOOR_US	1000
/* The start-up boost counts rounds whose queueing delays differ this much. */
#define MPIP_BOOST_MIN_SPREAD_US	10000
/* UDP port of heartbeats and path probes (both ends): "MP". */
#define MPIP_CTRL_PORT		0x4d50
/* IP protocol of a GSO packet kept whole with one trailer (gso.c). */
#define MPIP_GSO_PROTO		253

/* A session's carriers through a NAT, until it is confirmed (output.c) */
#define MPIP_CARRIER_GAP	(HZ / 100)
/* A session's first packets all carry a CM, even on a sole path. */
#define MPIP_BARE_CM_FIRST	4
/*
 * A node that never proved that it holds the pair's keys (our query not
 * answered yet, or a stranger's query answered) lives this long: hosts
 * without mpip and query floods must not fill the table for
 * node_timeout_ms.
 */
#define MPIP_NODE_UNVERIFIED_TTL	(10 * HZ)
/*
 * A node we neither sent to nor had data from for this long is idle: not
 * probed, not told of new addresses.  (Our own probes keep it active, as
 * long as they come more often than this: see mpip_probe_due().)
 */
#define MPIP_NODE_IDLE		(5 * HZ)
/*
 * Mode single (rules.c): another path takes a flow from its path only if
 * its one-way delay is this much lower, and not within MPIP_SINGLE_DWELL
 * of the flow's last move, unless the flow's path went down.
 */
#define MPIP_SINGLE_MARGIN_US	3000
/*
 * While no data goes to or comes from a node, the probes of its paths
 * that are down space out: heartbeat_ms, twice that, ... up to
 * heartbeat_ms << MPIP_PROBE_IDLE_SHIFT (about 10 s by default).
 */
#define MPIP_PROBE_IDLE_SHIFT	5
/*
 * Backup links (mpipctl link set dev IF backup): a path that came back up
 * after being down counts as working again, and takes the data back from
 * the backup paths, only once it has stayed up this long.
 */
#define MPIP_BACKUP_RETURN	HZ
#define MPIP_SINGLE_DWELL	HZ
/*
 * "No such session" (heartbeat.c): at most one per session ID to a node
 * every MPIP_UNKNOWN_GAP (the packets a peer sends under an ID we do not
 * know come at its flow's rate, and the first answer already sets that
 * session back), an ID's stamp kept in one of MPIP_UNKNOWN_SLOTS slots by
 * its low bits (a slot another ID took answers again sooner); and at most
 * MPIP_UNKNOWN_PER_SEC a second to a node, with a burst of
 * MPIP_UNKNOWN_BURST: a peer that restarted lost all its sessions at once,
 * and each of them is told, but a node cannot make us send more.
 */
#define MPIP_UNKNOWN_GAP	(HZ / 10)
#define MPIP_UNKNOWN_SLOTS	8
#define MPIP_UNKNOWN_PER_SEC	10
#define MPIP_UNKNOWN_BURST	32
/*
 * A destination given up (query_threshold queries unanswered) is asked
 * again while our flows still go there, at gaps that double from
 * MPIP_AVAIL_RETRY up to MPIP_AVAIL_RETRY << MPIP_AVAIL_RETRY_SHIFT
 * (about 5 min): a peer that was briefly disabled, or restarted while
 * its flows ran, is not left single-path for as long as they run, and a
 * host without mpip costs query_threshold queries per gap.
 */
#define MPIP_AVAIL_RETRY	(10 * HZ)
#define MPIP_AVAIL_RETRY_SHIFT	5

struct mpip_stats {
	unsigned long cnt[__MPIP_STAT_MAX];
};

/* Tunables; written under mpip_net's cfg_lock, read lockless. */
struct mpip_config {
	u32 query_threshold;
	u32 peer_timeout_ms;
	u32 avail_timeout_ms;
	u32 node_timeout_ms;
	u32 session_timeout_ms;
	u32 weight_step;
	u32 weight_interval_ms;
	u32 weight_trend_ms;
	u32 weight_boost;
	u32 bare_cm_ms;
	u32 queue_steer;
	u32 rule_event_pkts;
	u32 heartbeat_ms;
	u32 path_timeout_ms;
	u32 delay_smooth_shift;
	u32 tx_gso;
	u32 reorder;
	u32 reorder_max_pkts;
	u32 reorder_max_hold_ms;
	u32 nat_mode;
	u32 ctrl_pps;
	u32 loss_pct;
	u32 weight_tie_us;
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

typedef void (*mpip_release_t)(struct mpip_tnode *n);
/* How long entry @n may stay unused, given the table's @ttl. */
typedef unsigned long (*mpip_ttl_t)(const struct mpip_tnode *n,
				    unsigned long ttl);

/* An RCU hash table (table.c). */
struct mpip_table {
	spinlock_t lock;	/* writers; readers use RCU */
	unsigned int count;
	unsigned int max;
	unsigned int size;	/* buckets, a power of two */
	u32 seed;		/* of the bucket hash, random per table */
	struct hlist_head *buckets;
	mpip_release_t release;	/* frees an unlinked entry after a grace period */
	mpip_ttl_t ttl;		/* an entry's own time to live, if set */
	/* is the entry a stranger's, that may give way at a full table? */
	bool (*evictable)(const struct mpip_tnode *n);
	unsigned int cursor;	/* the bucket eviction looked at last; lock */
	/*
	 * The longest bucket chain: the one the last sweep found, or a longer
	 * one an insertion made since (READ_ONCE; written under the lock).
	 * Chosen keys that share a bucket would show here (review M2).
	 */
	unsigned int chain_max;
	unsigned int chain_new;	/* longest an insertion made; lock */
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
	/* state NO: when to ask again, and how often that failed */
	unsigned long retry_at;
	u8 retry_shift;
	unsigned long lost_at;	/* jiffies: MPIP_AVF_LOST set */
};

enum {
	MPIP_AVF_CONFIRM,	/* a TCP confirmation is owed to this peer */
	MPIP_AVF_CONFIRM_KEY,	/* with our key: the query showed the peer's */
	MPIP_AVF_STRANGER,	/* only unauthenticated CMs named it so far */
	MPIP_AVF_LOST,		/* was "yes" until its node fell silent */
};

struct mpip_endpoint {
	__be32 addr;
	__be16 port;
};

struct mpip_path_pcpu {
	u64 tx_pkts;
	u64 tx_bytes;
	u64 rx_pkts;
	u64 rx_bytes;
	struct u64_stats_sync syncp;
};

/*
 * One path to a remote node (paper Table 5): a local address, the
 * interface that owns it, and a remote address.  Published in a slot of
 * its node under RCU; created and removed under the node's lock.
 */
struct mpip_path {
	struct rcu_head rcu;
	u8 id;
	__be32 saddr;
	__be32 daddr;
	int ifindex;
	int state;		/* enum mpip_path_state, READ/WRITE_ONCE */
	u32 weight;		/* READ/WRITE_ONCE */
	unsigned long last_fb;	/* jiffies of the last delay report */
	/* jiffies|1 of the first packet sent since the last report, or 0 */
	unsigned long pending;
	spinlock_t lock;	/* protects delay, rtt, feedback and seen_* */
	struct mpip_path_delay delay;
	struct mpip_rtt rtt;	/* its reports' round trip: its timeout */
	u32 qdelay;		/* delay.q for the packet path, READ/WRITE_ONCE */
	u32 drt;		/* delay.d_rt for the packet path, READ/WRITE_ONCE */
	bool drt_ok;		/* @drt is a measured delay; READ/WRITE_ONCE */
	/* Q at the last weight round, if the path was up then (its own) */
	u32 q_round;
	bool q_round_ok;
	u64 feedback;
	/* return routability (rr.c): the path's nonce, fixed for its life */
	u64 nonce;
	bool rr_ok;		/* the remote address echoed it; READ/WRITE_ONCE */
	/*
	 * The peer answered from there that it verified its path back
	 * (its nonce field was 0): only then do its checks let our data
	 * in from this address (input.c).  READ/WRITE_ONCE.
	 */
	bool rr_peer;
	u8 rr_tries;		/* probes with the nonce sent; written under lock */
	unsigned long rr_next;	/* jiffies: next one due; under lock */
	/*
	 * The peer's nonce we last answered with ours, while @rr_ok was
	 * not set, and where its probe came from: echoed again once our
	 * nonce comes back, so that the peer learns at once that we
	 * verified (rr.c).  Under lock; 0 when none is owed.
	 */
	u64 peer_nonce;
	__be32 peer_seen_addr;
	__be16 peer_seen_port;
	/*
	 * Where the peer saw the probe it answered come from (0 until
	 * then; under lock), and whether that was not our end of the path:
	 * a NAT translates the path, which then carries no data (rr.c).
	 */
	__be32 seen_addr;
	__be16 seen_port;
	bool nat;		/* written under lock; READ/WRITE_ONCE */
	/*
	 * The port the path's packets go to: the peer's control port, or,
	 * on a path learned from where the peer's CMs came from (through
	 * its NAT), the port the NAT gave it; then @learned (fixed).  Its
	 * packets go inside UDP or fake TCP if @encap (encap.c, ftcp.c).
	 */
	__be16 dport;		/* written under lock; READ/WRITE_ONCE */
	bool learned;
	u8 encap;		/* enum mpip_encap_kind; READ/WRITE_ONCE */
	/*
	 * Its fake TCP connection (ftcp.c), under @lock: the state, the
	 * port of the peer's end (a NAT's), when we last sent a SYN, and,
	 * on a path learned through the peer's NAT, when a SYN came while
	 * the connection was open (0: none since it opened).
	 */
	struct mpip_ftcp ftcp;
	__be16 ftcp_dport;
	unsigned long ftcp_syn;
	unsigned long ftcp_quiet;
	/*
	 * the tier the peer gives @daddr (0 if none) and whether it says
	 * @daddr is metered (node.c); READ/WRITE_ONCE
	 */
	u8 rtier;
	bool rmetered;
	/*
	 * the loss oracle (loss.c): outcomes of its probes, under @lock,
	 * kept while the path goes down and up (a lossy path's reports
	 * come late, and it flaps); @lossy is a copy of its verdict for
	 * the packet path, and @loss_next when the next probe is due
	 * (jiffies), READ/WRITE_ONCE
	 */
	struct mpip_loss loss;
	bool lossy;
	unsigned long loss_next;
	/* jiffies|1 when it last came up after being down, else 0 */
	unsigned long up_again;	/* READ/WRITE_ONCE */
	/* probes while down and the node idle (heartbeat.c); READ/WRITE_ONCE */
	u8 probe_shift;		/* the next gap is heartbeat_ms << this */
	unsigned long probe_next;	/* jiffies: the next one due */
	/*
	 * The MTU that the last "fragmentation needed" error about one of
	 * the path's packets gave (icmp.c), 0 if none, and until when it
	 * holds (jiffies); READ/WRITE_ONCE.  The path's packets are sized
	 * against it (mpip_path_mtu()), not against the PMTU exception of
	 * the route, which the flows' own errors lower by mpip's room.
	 */
	u32 mtu;
	unsigned long mtu_expires;
	struct dst_cache dst;
	struct mpip_path_pcpu __percpu *pcpu;
};

/*
 * What we measured about one of the remote node's paths to us, indexed by
 * the remote's path ID: the delay to report back.  Lockless: fields are
 * READ/WRITE_ONCE, a report claims the entry by clearing @fresh.
 */
struct mpip_rxpath {
	u32 delay_us;		/* last raw one-way delay sample */
	u32 ts_us;		/* newest send time delivered (its clock) */
	u32 reo_us;		/* recent peak of late trailers' lag, us */
	unsigned long reo_at;	/* jiffies: when @reo_us was set */
	unsigned long last_rx;	/* jiffies */
	unsigned long last_fb;	/* jiffies of the last report sent */
	unsigned long fresh;	/* 1: samples arrived since the last report */
	__be32 saddr;		/* the addresses the last sample came to */
	__be32 daddr;
};

/*
 * The keys of a peer pair, once both are known (keys.c).  Published in
 * the node under RCU; replaced (new handshake) under the node's lock.
 */
struct mpip_keys {
	struct rcu_head rcu;
	u64 rkey;			/* the peer's key */
	struct mpip_auth_peer ap;	/* derived MAC keys and tokens */
	spinlock_t lock;		/* protects win */
	struct mpip_replay win;		/* counters of CMs from the peer */
};

/*
 * Node table entry (paper Table 3): what we know about one remote node,
 * that is, one peer pair of keys.  Keyed by our own token of the pair
 * (@id), which the peer writes into every CM to us.
 */
struct mpip_node {
	struct mpip_tnode tn;	/* stamp: last heard from (authenticated) */
	u32 id;			/* our token: mpip_auth_token(@lkey) */
	u64 lkey;		/* our key for the pair, never changes */
	struct mpip_keys __rcu *keys;	/* NULL until the peer's key is known */
	atomic64_t tx_ctr;	/* counter of the last CM sent to the node */
	bool verified;		/* an authenticated CM arrived; READ/WRITE_ONCE */
	bool stranger;		/* made for a stranger's query (keys.c) */
	/*
	 * the address our first query went to, or its first query came
	 * from; 0 once a query of the pair came from another; READ/WRITE_ONCE
	 */
	__be32 hs_addr;
	unsigned long aq_stamp;	/* jiffies: last address query sent */
	/*
	 * "no such session" sent to it (heartbeat.c): per slot, the ID
	 * and jiffies | 1 when, READ/WRITE_ONCE; and the budget's state
	 */
	struct {
		u16 sid;
		unsigned long stamp;
	} unknown[MPIP_UNKNOWN_SLOTS];
	atomic64_t unknown_tat;
	/* our address list told to the node: heartbeat.c, READ/WRITE_ONCE */
	u32 addr_told;		/* digest of the list it last heard */
	unsigned int addr_sends;	/* IP_CHANGE rounds sent for it */
	unsigned long addr_due;	/* jiffies: the next round */
	unsigned int avail_lost;	/* its entries downgraded here; READ/WRITE_ONCE */
	unsigned long waited;	/* jiffies: last packet of a flow that waits
				 * for it to be heard again (output.c)
				 */
	unsigned long asked;	/* jiffies: oldest CM it owes an answer to,
				 * if after tn.stamp (node.c)
				 */
	atomic_t rr_credit;	/* probes of unverified paths we may send (rr.c) */
	atomic64_t answer_tat;	/* MPIP_RR_NODE_PER_SEC's state (budget.c) */
	atomic_t draws;		/* paths picked for it (paths.c) */
	spinlock_t lock;	/* protects the arrays below, path slots, dead */
	bool dead;		/* unlinked: its paths are gone for good */
	u8 nep;
	u8 nep_next;		/* slot to replace when full */
	u8 naddrs;
	/*
	 * the tier and metered bit of each of @addrs (IP_CHANGE: node.c);
	 * its fields READ_ONCE outside the lock
	 */
	struct mpip_cm_lpol addr_lpol;
	unsigned long ep_stamp;	/* jiffies: last endpoint replaced */
	/* its paths rebuilt for its address list (node.c), READ/WRITE_ONCE */
	unsigned long sync_stamp;	/* jiffies: last rebuild */
	bool sync_due;		/* the list changed since */
	struct mpip_endpoint ep[MPIP_NODE_MAX_EP];
	__be32 addrs[MPIP_CM_MAX_ADDRS];
	unsigned long last_tx;	/* jiffies: last packet sent to the node */
	unsigned long last_data_tx;	/* jiffies: last data trailer to it */
	unsigned long last_data_rx;	/* jiffies: last data trailer from it */
	/* jiffies: last packet sent to it under a rule of mode single */
	unsigned long single_used;
	/* the tier its data goes over (paths.c: failover events) */
	unsigned long data_tier;
	unsigned long w_stamp;	/* jiffies: last weight adjustment */
	struct mpip_wboost w_boost;	/* the weight round's own */
	u8 w_idle_rounds;		/* idle weight rounds in a row */
	u8 path_hi;		/* no path in slots from here on; READ/WRITE_ONCE */
	struct mpip_path __rcu *paths[MPIP_MAX_PATHS];
	struct mpip_rxpath rx[MPIP_MAX_PATHS];
};

/*
 * A session's keys.  The tables hash them as bytes, so the padding is
 * named and kept zero.
 */
struct mpip_session_tuple {
	__be32 laddr;
	__be32 raddr;
	__be16 lport;
	__be16 rport;
	u8 proto;
	u8 pad[3];
};

struct mpip_session_key {
	u32 node_id;
	u16 sid;
	u16 pad;
};

/*
 * Session table entry (paper Table 4): one transport flow with a remote
 * node, under its original addresses and ports as this host sees them.
 * Linked in two resizable RCU hash tables: by 5-tuple (tuple_node) and by
 * (node ID, session ID) (id_node).  What a lookup reads comes first, so
 * that a lookup touches one cache line of each entry it passes.
 */
struct mpip_session {
	struct rhash_head tuple_node;
	struct rhash_head id_node;
	struct mpip_session_tuple t;
	struct mpip_session_key id;	/* changes only under the lock; READ_ONCE */
	unsigned long stamp;	/* jiffies of the last packet, READ/WRITE_ONCE */
	bool confirmed;		/* READ/WRITE_ONCE */
	bool dead;		/* unlinked; under the lock */
	/* its node was left for another: the collector removes it */
	bool orphan;		/* READ/WRITE_ONCE */
	/*
	 * the node that proved it receives at the flow's remote address
	 * (mpip_node_proved()), 0 if none yet: only its packets may move to
	 * other paths (output.c); READ/WRITE_ONCE
	 */
	u32 proved;
	unsigned long hb_stamp;	/* jiffies of the last confirming heartbeat */
	unsigned long cm_stamp;	/* jiffies of the last trailer sent */
	unsigned long sole_stamp; /* jiffies it last went bare; 0: never */
	/*
	 * TCP: the sequence number after the first data segment it sent
	 * with a CM, and when (0: none yet; smp_store_release()); until the
	 * peer acknowledges it, or for reorder_max_hold_ms, the session's
	 * data keeps to its own path (output.c, mpip_out_starting())
	 */
	u32 start_end;
	unsigned long start_stamp;
	bool started;		/* READ/WRITE_ONCE */
	/*
	 * TCP: the sequence number after the data it sent, once it sent
	 * some on a path (output.c, mpip_out_resend()); READ/WRITE_ONCE
	 */
	u32 snd_end;
	bool snd_valid;
	/* mode single: the ID of its path, 0 if none; when it moved there */
	u8 single_id;		/* READ/WRITE_ONCE */
	unsigned long single_since;	/* READ/WRITE_ONCE */
	unsigned long learn_due;  /* jiffies its packets next refresh avail */
	unsigned int learn_lost;  /* its node's avail_lost at that refresh */
	atomic64_t tx_pkts;
	atomic64_t rx_pkts;
	struct mpip_reorder __rcu *ro;	/* TCP only, created on first use */
	struct rcu_head rcu;
};

struct mpip_sessions {
	spinlock_t lock;	/* writers; readers use RCU */
	unsigned int count;	/* READ/WRITE_ONCE */
	struct rhashtable by_tuple;
	struct rhashtable by_id;
};

/*
 * The answers one source address (hashed into one of
 * MPIP_RR_SRC_SLOTS) triggered in the second since @start (budget.c).
 */
#define MPIP_RR_SRC_SLOTS	256
struct mpip_src_budget {
	unsigned long start;	/* jiffies, READ/WRITE_ONCE */
	atomic_t used;
};

/* Per network namespace state. */
#define MPIP_NF_OPS	2	/* input and output hook */
#define MPIP_NF_IN	0	/* index of the input hook in nf_ops */
#define MPIP_NF_OUT	1	/* and of the output hook */

struct mpip_net {
	struct net *net;
	struct nf_hook_ops nf_ops[MPIP_NF_OPS];	/* priv: this mpip_net */
	bool enabled;		/* READ/WRITE_ONCE */
	bool hooked;		/* hooks registered; under hook_lock */
	struct mutex hook_lock;	/* enabling and disabling */
	u32 node_id;		/* a local label only: never sent since v2 */
	siphash_key_t secret;	/* responder keys from query keys (keys.c) */
	struct mpip_config cfg;	/* fields READ/WRITE_ONCE; written under cfg_lock */
	struct mutex cfg_lock;	/* settings changes, with what derives from them */
	/* cfg values the packet path needs in jiffies: mpip_cfg_update() */
	unsigned long peer_timeout_j;
	unsigned long bare_cm_gap_j;	/* 0: a CM on every packet */
	struct mpip_stats __percpu *stats;
	struct mpip_table avail;
	struct mpip_table nodes;
	struct mpip_sessions sessions;
	struct delayed_work gc_work;
	struct delayed_work tick_work;	/* weights, timeouts, heartbeats */
	struct work_struct addr_work;	/* local addresses changed */
	u32 addr_digest;	/* of our address list: heartbeat.c, READ/WRITE_ONCE */
	/* the same without the backup bits, which handshakes do not carry */
	u32 addr_digest_plain;
	unsigned long hb_stamp;		/* jiffies of the last heartbeat round */
	unsigned long tick_due;		/* when tick_work should run; 0: unknown */
	atomic_t ro_mem;		/* truesize held in reorder buffers */
	atomic64_t icmp_tat;	/* budget of path searches for ICMP errors */
	struct mpip_src_budget ctrl_src[MPIP_RR_SRC_SLOTS];	/* budget.c */
	atomic64_t ctrl_tat;	/* the ctrl_pps budget's state (budget.c) */
	atomic64_t answer_tat;	/* MPIP_RR_PER_SEC's state (budget.c) */
	struct ratelimit_state event_rs;	/* events multicast (event.c) */
	struct xarray links;	/* ifindex -> MPIP_LINK_F_* (links.c) */
	/* links of tier 1 or more; written under RTNL, READ_ONCE */
	unsigned int nbackup;
	/* links with nat faketcp; written under RTNL, READ_ONCE */
	unsigned int nftcp;
	/* links with nat auto or udp; written under RTNL, READ_ONCE */
	unsigned int nudp;
	/*
	 * A path of ours was found translated while its mode was faketcp:
	 * this host opens fake TCP connections (rr.c).  Never cleared;
	 * READ/WRITE_ONCE.
	 */
	bool ftcp_opener;
	struct mpip_rule_table __rcu *rules;	/* NULL: none (rules.c) */
	struct mutex rules_lock;	/* changes of @rules */
};

/* pernet.c */
extern unsigned int mpip_net_id;

/* The hooks' first step for every IPv4 packet: keep it inline. */
static inline struct mpip_net *mpip_pernet(const struct net *net)
{
	return net_generic(net, mpip_net_id);
}

int mpip_pernet_register(void);
void mpip_pernet_unregister(void);
int mpip_set_enabled(struct mpip_net *mn, bool on);
void mpip_cfg_update(struct mpip_net *mn);
void mpip_flush(struct mpip_net *mn);
void mpip_gc_kick(struct mpip_net *mn);
unsigned int mpip_hook_next(const struct mpip_net *mn, unsigned int which,
			    const struct nf_hook_entries *e);

/*
 * In a walk over all buckets of a table under rcu_read_lock() from
 * process context: every few buckets, leave the read-side section for a
 * moment so that the CPU may reschedule.  The walk goes on at the next
 * bucket, whose head it reads afresh.
 */
static inline void mpip_rcu_breather(unsigned int bucket)
{
	if ((bucket + 1) % 32 == 0) {
		rcu_read_unlock();
		cond_resched();
		rcu_read_lock();
	}
}

extern bool mpip_default_enabled;

static inline void mpip_inc(struct mpip_net *mn, enum mpip_stat s)
{
	this_cpu_inc(mn->stats->cnt[s]);
}

u64 mpip_stat_sum(const struct mpip_net *mn, enum mpip_stat s);

/*
 * Did @skb come through a bridge port, with br_netfilter running the IPv4
 * hooks for it?  Then it is either forwarded by the bridge, and not ours
 * to touch, or delivered to this host by the bridge, in the middle of
 * br_netfilter's own pass, where it must not be stolen and re-injected.
 */
static inline bool mpip_skb_bridged(const struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_BRIDGE_NETFILTER)
	return nf_bridge_info_exists(skb);
#else
	return false;
#endif
}

/* Refresh a jiffies stamp, without dirtying the cache line if current. */
static inline void mpip_touch(unsigned long *stamp)
{
	unsigned long now = jiffies;

	if (READ_ONCE(*stamp) != now)
		WRITE_ONCE(*stamp, now);
}

/* @a is one of the @n addresses of @list. */
static inline bool mpip_addr_listed(__be32 a, const __be32 *list,
				    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (list[i] == a)
			return true;
	return false;
}

/* table.c */
void mpip_table_init(struct mpip_table *t, struct hlist_head *buckets,
		     unsigned int size, unsigned int max);
bool mpip_table_has_room(struct mpip_net *mn, struct mpip_table *t,
			 bool stranger);

/* Is @t full, for an entry only a stranger asks for (half the table)? */
static inline bool mpip_table_full(const struct mpip_table *t, bool stranger)
{
	return READ_ONCE(t->count) >= (stranger ? t->max / 2 : t->max);
}

struct mpip_tnode *mpip_table_insert(struct mpip_table *t,
				     struct mpip_tnode *n, u32 b,
				     mpip_same_t same);
void mpip_table_sweep(struct mpip_table *t, unsigned long ttl, bool all);
void mpip_table_release_kfree(struct mpip_tnode *n);

/*
 * The lookups every packet to a peer makes are inline: under the
 * emulation the lab runs in, a call and its return cost about as much
 * as the walk itself.  Callers hold RCU (the hooks: netfilter's).
 */

/* avail.c */
static inline u32 mpip_avail_hash(const struct mpip_table *t, __be32 addr,
				  __be16 port)
{
	return jhash_2words((__force u32)addr, (__force u32)port, t->seed) &
	       ((1 << MPIP_AVAIL_BITS) - 1);
}

static inline struct mpip_avail *mpip_avail_lookup(struct mpip_net *mn,
						   __be32 addr, __be16 port)
{
	u32 b = mpip_avail_hash(&mn->avail, addr, port);
	struct mpip_avail *e;

	hlist_for_each_entry_rcu(e, &mn->avail.buckets[b], tn.hnode) {
		if (e->addr == addr && e->port == port)
			return e;
	}
	return NULL;
}

struct mpip_avail *mpip_avail_create(struct mpip_net *mn, __be32 addr,
				     __be16 port, u8 proto, bool stranger);
unsigned long mpip_avail_ttl(const struct mpip_tnode *tn, unsigned long ttl);
bool mpip_avail_evictable(const struct mpip_tnode *tn);

/* @e is "yes" again: forget its failed tries and the loss it had. */
static inline void mpip_avail_yes_again(struct mpip_avail *e)
{
	WRITE_ONCE(e->retry_shift, 0);
	if (test_bit(MPIP_AVF_LOST, &e->flags))
		clear_bit(MPIP_AVF_LOST, &e->flags);
}

/* Find or create the entry for (@addr, @port); NULL if none can be had. */
static inline struct mpip_avail *mpip_avail_get(struct mpip_net *mn,
						__be32 addr, __be16 port,
						u8 proto, bool stranger)
{
	struct mpip_avail *e = mpip_avail_lookup(mn, addr, port);

	return e ? e : mpip_avail_create(mn, addr, port, proto, stranger);
}

/* node.c */
static inline u32 mpip_node_hash(const struct mpip_table *t, u32 id)
{
	return jhash_1word(id, t->seed) & ((1 << MPIP_NODE_BITS) - 1);
}

/* The node of ID @id, or NULL; ID 0 names none (mpip_node_create()). */
static inline struct mpip_node *mpip_node_lookup(struct mpip_net *mn, u32 id)
{
	struct mpip_node *n;
	u32 b;

	if (!id)
		return NULL;
	b = mpip_node_hash(&mn->nodes, id);
	hlist_for_each_entry_rcu(n, &mn->nodes.buckets[b], tn.hnode) {
		if (n->id == id)
			return n;
	}
	return NULL;
}

struct mpip_node *mpip_node_create(struct mpip_net *mn, u64 lkey,
				   __be32 addr, struct mpip_keys *k,
				   bool stranger);
void mpip_cm_lpol_fill(struct mpip_net *mn, const struct mpip_cm *cm,
		       struct mpip_cm_lpol *l);
void mpip_node_sync_due(struct mpip_net *mn, struct mpip_node *n);
void mpip_node_learn(struct mpip_net *mn, struct mpip_node *n, __be32 addr,
		     __be16 port, const struct mpip_cm2 *c2);
void mpip_node_release(struct mpip_tnode *tn);
unsigned long mpip_node_ttl(const struct mpip_tnode *tn, unsigned long ttl);
bool mpip_node_evictable(const struct mpip_tnode *tn);
struct mpip_node *mpip_node_for_query(struct mpip_net *mn,
				      struct mpip_avail *e);
bool mpip_node_silent(const struct mpip_net *mn, const struct mpip_node *n);
bool mpip_node_asks(struct mpip_node *n, const struct mpip_cm *cm);
void mpip_node_asked(struct mpip_node *n);
bool mpip_node_unanswered(const struct mpip_net *mn,
			  const struct mpip_node *n);

/* keys.c: per-peer keys, sealing and opening CMs */
int mpip_key_new(struct mpip_net *mn, u64 *key);
struct mpip_keys *mpip_keys_make(u64 lkey, u64 rkey);
bool mpip_node_keyed(const struct mpip_node *n);
/*
 * Extension bytes of a CM other than a handshake CM: return routability
 * (rr.c), a nonce; or, in an answer, a nonce and an echo, then where the
 * probe came from as the answerer saw it (address, port, 2 zero bytes).
 */
#define MPIP_RR_NONCE_LEN	8
#define MPIP_RR_ECHO_LEN	16
/*
 * An answer's nonce field when the answerer has no path back to where the
 * probe came from (yet): not verified, nothing to echo.  No path's nonce.
 */
#define MPIP_RR_NO_PATH		U64_MAX
#define MPIP_RR_SEEN_LEN	24
struct mpip_cm_ext {
	u8 len;
	u8 b[MPIP_RR_SEEN_LEN];
};

/*
 * The extension that stands for our key and the counter's high half,
 * filled in when a handshake CM is sealed: mpip_cm_hs_ext() gives it.
 */
extern const struct mpip_cm_ext mpip_cm_key_ext;
const struct mpip_cm_ext *mpip_cm_hs_ext(const struct mpip_net *mn,
					 const struct mpip_node *n,
					 const struct mpip_cm *cm,
					 const struct mpip_cm_ext *ext);
unsigned int mpip_cm_wire_len(const struct mpip_cm *cm,
			      const struct mpip_cm_ext *ext);
/* The counter of the next CM to node @n (never 0). */
static inline u64 mpip_cm_next_ctr(struct mpip_node *n)
{
	return atomic64_inc_return(&n->tx_ctr);
}

int mpip_cm_seal(struct mpip_node *n, const struct mpip_cm *cm,
		 const struct mpip_cm_ext *ext, u8 proto, unsigned int off,
		 u8 *buf, unsigned int len, u64 ctr);
struct mpip_rx;
int mpip_cm_open(struct mpip_net *mn, struct mpip_rx *rx);
int mpip_syn_seal(struct mpip_node *n, struct mpip_ftcp_seg *syn);
int mpip_syn_open(struct mpip_node *n, const struct mpip_ftcp_seg *syn);
bool mpip_sid_parity(const struct mpip_node *n);

/* session.c */
int mpip_sessions_init(struct mpip_sessions *st);
void mpip_sessions_destroy(struct mpip_sessions *st);
void mpip_sessions_sweep(struct mpip_net *mn, unsigned long ttl, bool all);
void mpip_sessions_walk_enter(struct mpip_net *mn, struct rhashtable_iter *it);
struct mpip_session *mpip_session_by_id(struct mpip_net *mn, u32 node_id,
					u16 sid);
struct mpip_session *mpip_session_lookup(struct mpip_net *mn, u8 proto,
					 __be32 laddr, __be16 lport,
					 __be32 raddr, __be16 rport);
struct mpip_session *mpip_session_tx(struct mpip_net *mn,
				     struct mpip_node *n, u8 proto,
				     __be32 laddr, __be16 lport,
				     __be32 raddr, __be16 rport);
struct mpip_session *mpip_session_rx(struct mpip_net *mn,
				     struct mpip_node *n, u16 sid, u8 proto,
				     __be32 laddr, __be16 lport,
				     __be32 raddr, __be16 rport);
bool mpip_sid_is_ours(const struct mpip_node *n, u16 sid);

/* paths.c: paths to remote nodes, routing and weights */
bool mpip_paths_sync(struct mpip_net *mn, struct mpip_node *n);
void mpip_path_learn(struct mpip_net *mn, struct mpip_node *n, __be32 laddr,
		     __be32 raddr, __be16 rport);
void mpip_paths_release(struct mpip_node *n);
bool mpip_path_is_backup(struct mpip_net *mn, struct mpip_path *p);
unsigned int mpip_path_tier(struct mpip_net *mn, const struct mpip_path *p);
bool mpip_path_first_rank(struct mpip_net *mn, struct mpip_path *p);
bool mpip_path_metered(struct mpip_net *mn, const struct mpip_path *p);
unsigned int mpip_paths_low_tier(struct mpip_net *mn,
				 const struct mpip_node *n);
bool mpip_path_cold(struct mpip_net *mn, struct mpip_path *p,
		    unsigned int low);
bool mpip_path_unreported(struct mpip_net *mn, struct mpip_path *p);
struct mpip_path *mpip_path_slowest(struct mpip_net *mn, struct mpip_node *n,
				    const struct mpip_rule *rule);
struct mpip_path *mpip_path_single(struct mpip_net *mn, struct mpip_node *n,
				   const struct mpip_rule *rule,
				   struct mpip_session *s);
unsigned int mpip_path_copies(struct mpip_net *mn, struct mpip_node *n,
			      const struct mpip_rule *rule,
			      struct mpip_path **out);
struct mpip_path *mpip_path_pick(struct mpip_net *mn, struct mpip_node *n,
				 const struct mpip_rule *rule,
				 bool tx);

/*
 * How many of @n's path slots a packet-path walk must look at: none from
 * path_hi on holds a path.  A walk that reads a stale value while a path
 * is added misses the new path this once, as if it had come a moment
 * later; one that reads it stale while a path goes looks at empty slots.
 */
static inline unsigned int mpip_path_slots(const struct mpip_node *n)
{
	return min_t(unsigned int, READ_ONCE(n->path_hi), MPIP_MAX_PATHS);
}

/* The peer's token for the pair (its ID for it), 0 until keyed.  RCU. */
static inline u32 mpip_node_peer_id(const struct mpip_node *n)
{
	const struct mpip_keys *k = rcu_dereference(n->keys);

	return k ? k->ap.tx_token : 0;
}

/* Is a path of @n other than @p (NULL: any path) up?  Caller holds RCU. */
static inline bool mpip_paths_up_but(struct mpip_node *n,
				     const struct mpip_path *p)
{
	struct mpip_path *q;
	unsigned int i;

	for (i = 0; i < mpip_path_slots(n); i++) {
		q = rcu_dereference(n->paths[i]);
		if (q && q != p && READ_ONCE(q->state) == MPIP_PATH_UP)
			return true;
	}
	return false;
}

/* Is @p up and the only path of @n that is? */
static inline bool mpip_path_sole(struct mpip_node *n,
				  const struct mpip_path *p)
{
	return READ_ONCE(p->state) == MPIP_PATH_UP && !mpip_paths_up_but(n, p);
}

/* The path of @n with these wire addresses, if any. */
static inline struct mpip_path *mpip_path_find(struct mpip_node *n,
					       __be32 saddr, __be32 daddr)
{
	struct mpip_path *p;
	unsigned int i;

	for (i = 0; i < mpip_path_slots(n); i++) {
		p = rcu_dereference(n->paths[i]);
		if (p && p->saddr == saddr && p->daddr == daddr)
			return p;
	}
	return NULL;
}

/*
 * Does node @n have a path to its address @daddr that answered from it
 * (rr.c)?  Caller holds RCU.
 */
static inline bool mpip_path_to(struct mpip_node *n, __be32 daddr)
{
	struct mpip_path *p;
	unsigned int i;

	for (i = 0; i < mpip_path_slots(n); i++) {
		p = rcu_dereference(n->paths[i]);
		if (p && p->daddr == daddr && READ_ONCE(p->rr_ok))
			return true;
	}
	return false;
}

/*
 * Did node @n prove that it receives at its address @addr?  A path to it
 * answered from it (mpip_path_to()), or the handshake went there and the
 * node authenticated since: only a host that received there holds the
 * keys (keys.c).  Caller holds RCU.
 */
static inline bool mpip_node_proved(struct mpip_node *n, __be32 addr)
{
	return (addr && addr == READ_ONCE(n->hs_addr) &&
		READ_ONCE(n->verified)) || mpip_path_to(n, addr);
}

struct dst_entry *mpip_path_dst(struct mpip_net *mn, struct mpip_path *p);
unsigned int mpip_route_mtu(const struct dst_entry *dst);
unsigned int mpip_path_mtu(const struct mpip_path *p,
			   const struct dst_entry *dst);
u32 mpip_path_err_mtu(const struct mpip_path *p);
void mpip_path_set_mtu(struct mpip_path *p, const struct net *net, u32 mtu);
bool mpip_path_dev_up(struct net *net, int ifindex);

/* icmp.c: "fragmentation needed" for packets on paths */
#define MPIP_ICMP_PER_SEC	100
bool mpip_icmp_rx(struct mpip_net *mn, struct sk_buff *skb);
void mpip_icmp_init(struct mpip_net *mn);

/* policy.c: the host's routing and IPsec policy */
bool mpip_policy_flow_plain(struct net *net, const struct sk_buff *skb);
bool mpip_policy_path_ok(struct net *net, const struct sk_buff *skb,
			 __be16 sport, __be16 dport,
			 const struct mpip_path *p, struct dst_entry *dst);
void mpip_path_set_state(struct mpip_net *mn, struct mpip_node *n,
			 struct mpip_path *p, int state);
void mpip_path_tx(struct mpip_path *p, unsigned int len, bool quiet);
void mpip_path_rx(struct mpip_node *n, __be32 saddr, __be32 daddr,
		  unsigned int len);
void mpip_path_feedback(struct mpip_net *mn, struct mpip_node *n,
			u8 id, u32 delay_us, u32 back_us);
void mpip_paths_tick(struct mpip_net *mn, struct mpip_node *n,
		     unsigned long late);
unsigned int mpip_paths_count(struct mpip_net *mn);

/* feedback.c: one-way delays measured here, reported back */
void mpip_fb_record(struct mpip_node *n, const struct iphdr *iph, u8 path_id,
		    u32 ts_us, u32 delay_us, bool quiet);
bool mpip_fb_pick(struct mpip_net *mn, struct mpip_node *n,
		  const struct mpip_path *p, struct mpip_cm *cm);
bool mpip_fb_pending(struct mpip_node *n);
struct mpip_path *mpip_fb_way_back(struct mpip_node *n);
struct mpip_path *mpip_fb_heard_over(struct mpip_net *mn, struct mpip_node *n);

/* budget.c: budgets of control packets */
#define MPIP_RR_PER_SEC		200	/* answers and confirmations, per netns */
#define MPIP_RR_PER_SRC		20	/* of those, per source address (slot) */
#define MPIP_RR_NODE_PER_SEC	200	/* answers to an authenticated node */
void mpip_budget_init_net(struct mpip_net *mn);
bool mpip_ctrl_may_answer(struct mpip_net *mn, __be32 saddr);
bool mpip_node_may_answer(struct mpip_net *mn, struct mpip_node *n);
bool mpip_ctrl_may_send(struct mpip_net *mn);
bool mpip_budget_try(atomic64_t *state, u32 rate, u32 burst);

/* rr.c: return routability of paths */
#define MPIP_RR_TRIES		6	/* probes of an unverified path */
#define MPIP_RR_CREDIT_INIT	4	/* a node's probes before its packets count */
#define MPIP_RR_CREDIT_MAX	8	/* probes a node's packets can save up */
void mpip_rr_init(struct mpip_path *p);
void mpip_rr_node_init(struct mpip_node *n);
void mpip_rr_earn(struct mpip_node *n);
bool mpip_rr_gave_up(const struct mpip_path *p);

/*
 * May @p carry data?  Its remote address answered from there, and the
 * peer verified the way back, so that it takes our data in (rr.c).
 */
static inline bool mpip_rr_done(const struct mpip_path *p)
{
	return READ_ONCE(p->rr_ok) && READ_ONCE(p->rr_peer);
}

bool mpip_rr_probe_due(struct mpip_net *mn, struct mpip_node *n,
		       struct mpip_path *p, struct mpip_cm_ext *ext);
void mpip_rr_rx(struct mpip_net *mn, struct mpip_node *n,
		const struct mpip_rx *rx);

/* heartbeat.c: the periodic tick, heartbeats, probes, address changes */
void mpip_ctrl_send_to(struct mpip_net *mn, struct mpip_node *n,
		       struct mpip_path *p, __be32 saddr, __be32 daddr,
		       __be16 dport, struct mpip_cm *cm,
		       const struct mpip_cm_ext *ext);
void mpip_ctrl_send(struct mpip_net *mn, struct mpip_node *n,
		    struct mpip_path *p, __be32 saddr, __be32 daddr,
		    struct mpip_cm *cm, const struct mpip_cm_ext *ext);
void mpip_tick_init(struct mpip_net *mn);
void mpip_tick_kick(struct mpip_net *mn);
void mpip_tick_stop(struct mpip_net *mn);
void mpip_heartbeat_session(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_session *s);
void mpip_heartbeat_unknown(struct mpip_net *mn, struct mpip_node *n,
			    struct mpip_path *p, u16 sid);
void mpip_node_probe(struct mpip_net *mn, struct mpip_node *n);
#define MPIP_LOSS_WAIT_MS	1000	/* a loss probe's answer, at least */
void mpip_loss_answer(struct mpip_net *mn, struct mpip_path *p);
void mpip_probe_path(struct mpip_net *mn, struct mpip_node *n,
		     struct mpip_path *p, bool quiet);
void mpip_addr_query(struct mpip_net *mn, struct mpip_node *n, __be32 saddr,
		     __be32 daddr);
void mpip_addrs_changed(struct net *net);
void mpip_addrs_note(struct mpip_net *mn);
int mpip_notify_register(void);
void mpip_notify_unregister(void);

/* rules.c: routing rules */
struct mpip_rule_table;
int mpip_rules_add_one(struct mpip_net *mn, struct mpip_rule *r, bool replace,
		       struct netlink_ext_ack *extack);
int mpip_rules_del_one(struct mpip_net *mn, u32 pref,
		       struct netlink_ext_ack *extack);
void mpip_rules_flush(struct mpip_net *mn);
bool mpip_rules_get(struct mpip_net *mn, u32 i, struct mpip_rule *r);
const struct mpip_rule *mpip_rule_for(struct mpip_net *mn,
				      const struct sk_buff *skb);
void mpip_rules_events(struct mpip_net *mn);
bool mpip_rule_allows(struct mpip_net *mn, const struct mpip_rule *r,
		      const struct mpip_path *p);
void mpip_rules_init(struct mpip_net *mn);
void mpip_rules_destroy(struct mpip_net *mn);

/* links.c: per-interface settings */
#define MPIP_LINK_F_NO_ADVERTISE	0x1	/* neither advertised nor used */
/* enum mpip_link_nat in bits 2-4 */
#define MPIP_LINK_F_NAT_SHIFT		2
#define MPIP_LINK_F_NAT			(0x7 << MPIP_LINK_F_NAT_SHIFT)
/*
 * the link's tier in bits 5-7, 0 (the default) to MPIP_LINK_TIER_MAX:
 * data uses the paths of the lowest tier that has one up; a backup
 * link is one of tier 1 or more
 */
#define MPIP_LINK_F_TIER_SHIFT		5
#define MPIP_LINK_F_TIER		(0x7 << MPIP_LINK_F_TIER_SHIFT)
#define MPIP_LINK_TIER_MAX		7
/* paid by the byte: rules with nometered keep off it */
#define MPIP_LINK_F_METERED		0x100
u32 mpip_link_flags(struct mpip_net *mn, int ifindex);
bool mpip_link_advertised(struct mpip_net *mn, int ifindex);
unsigned int mpip_link_tier(struct mpip_net *mn, int ifindex);
bool mpip_link_metered(struct mpip_net *mn, int ifindex);
bool mpip_link_backup(struct mpip_net *mn, int ifindex);
u32 mpip_link_nat(struct mpip_net *mn, int ifindex);
u32 mpip_link_nat_mode(struct mpip_net *mn, int ifindex);
unsigned int mpip_links_encap_room(struct mpip_net *mn);
int mpip_link_set(struct mpip_net *mn, int ifindex, u32 mask, u32 flags,
		  struct netlink_ext_ack *extack);
void mpip_link_forget(struct net_device *dev);
void mpip_links_init(struct mpip_net *mn);
void mpip_links_destroy(struct mpip_net *mn);

/* gso.c: GSO packets kept whole where no wire follows */
bool mpip_gso_keep(struct mpip_net *mn, struct sk_buff *skb,
		   const struct dst_entry *dst, unsigned int cm_len);
int mpip_gso_encap(struct sk_buff *skb, struct mpip_node *n,
		   const struct mpip_cm *cm);
int mpip_gso_decap(struct sk_buff *skb, unsigned int len);
bool mpip_gso_is_kept(const struct sk_buff *skb);
void mpip_gso_devs_changed(void);

/*
 * The IP control block of a received packet as ip_rcv_core() left it,
 * after mpip used skb->cb for its own purposes.
 */
static inline void mpip_ipcb_reset(struct sk_buff *skb)
{
	memset(IPCB(skb), 0, sizeof(struct inet_skb_parm));
	IPCB(skb)->iif = skb->skb_iif;
}

/* What a PRE_ROUTING hook's state calls when the hooks are done. */
typedef int (*mpip_okfn_t)(struct net *net, struct sock *sk,
			   struct sk_buff *skb);

/* reorder.c: TCP reorder buffers */
unsigned int mpip_reorder_rx(struct mpip_net *mn, struct mpip_session *s,
			     const struct mpip_node *n, struct sk_buff *skb,
			     const struct mpip_cm *cm, mpip_okfn_t okfn);
void mpip_reorder_release(struct mpip_session *s);

/* rewrite.c */
int mpip_rewrite_addrs(struct sk_buff *skb, __be32 saddr, __be32 daddr);
int mpip_rewrite_ports(struct sk_buff *skb, __be16 sport, __be16 dport);
bool mpip_rewrite_mss(struct sk_buff *skb, unsigned int end,
		      unsigned int room, unsigned int limit);

/* A local address and the interface that owns it. */
struct mpip_laddr {
	__be32 addr;
	int ifindex;
};

/* trailer.c: CM trailers on socket buffers */
unsigned int mpip_local_addrs(struct mpip_net *mn, struct mpip_laddr *la,
			      unsigned int max, bool all);
void mpip_cm_fill(struct mpip_net *mn, struct mpip_cm *cm, u8 flags,
		  bool with_addrs);
int mpip_skb_add_cm(struct sk_buff *skb, struct mpip_node *n,
		    const struct mpip_cm *cm, const struct mpip_cm_ext *ext,
		    u64 ctr);
unsigned int mpip_skb_room(const struct sk_buff *skb);

/* handshake.c: control packets */
void mpip_tcp_carrier_send(struct mpip_net *mn, const struct sk_buff *skb,
			   struct mpip_node *n, struct mpip_cm *cm,
			   const struct mpip_cm_ext *ext);
void mpip_tcp_ctrl_send(struct mpip_net *mn, const struct sk_buff *skb,
			struct mpip_node *n, u8 flags,
			const struct mpip_cm_ext *ext);
void mpip_udp_confirm_send(struct mpip_net *mn, const struct sk_buff *skb,
			   struct mpip_node *n, bool keyed);
void mpip_ctrl_untrack(struct sk_buff *skb);
struct iphdr *mpip_ctrl_iph(struct sk_buff *skb, const struct rtable *rt,
			    u8 proto, __be32 saddr, __be32 daddr);
void mpip_udp_ctrl_xmit(struct mpip_net *mn, struct rtable *rt,
			__be32 saddr, __be32 daddr, __be16 sport,
			__be16 dport, struct mpip_node *n,
			const struct mpip_cm *cm, const struct mpip_cm_ext *ext);
u32 mpip_now_us(void);

/*
 * A received packet with a CM, as the input hook sees it.  @cm is
 * @c2.cm; @node, @authed and @replayed are what mpip_cm_open() found.
 */
struct mpip_rx {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	u8 proto;
	bool gso;		/* a GSO packet kept whole (gso.c) */
	bool unsummed;		/* merged by GRO: no checksum tested the CM */
	bool authed;		/* the MAC verified: @node sent it */
	bool replayed;		/* a data CM seen before: deliver, learn nothing */
	bool plain;		/* a data CM that did not open: plain IP */
	bool encap;		/* it came inside UDP or fake TCP (encap.c) */
	/* then: an outer checksum, checked, covered all of it (encap.c) */
	bool esummed;
	bool ftcp;		/* it came inside fake TCP (ftcp.c) */
	bool keyed;		/* a handshake CM with its sender's key */
	__be16 esport;		/* then the outer source port */
	struct mpip_ftcp_seg fseg;	/* the fake segment's header */
	u32 flen;			/* and its payload length */
	unsigned int cm_len;
	struct mpip_cm2 c2;
	struct mpip_node *node;		/* the sender, under RCU */
	struct mpip_session *sess;	/* the packet's session, under RCU */
};

/* encap.c: packets inside UDP or fake TCP on paths through NATs */
enum mpip_encap_kind {
	MPIP_ENCAP_NONE,
	MPIP_ENCAP_UDP,
	MPIP_ENCAP_FTCP,	/* fake TCP once its connection is open, UDP before */
};

/* What fake TCP adds to a packet: the TCP header and the shim */
#define MPIP_FTCP_ENCAP_LEN	(MPIP_FTCP_HDR_LEN + MPIP_ENCAP_SHIM_LEN)

int mpip_encap_push(struct sk_buff *skb, struct mpip_path *p);
unsigned int mpip_encap_len(const struct mpip_path *p);
bool mpip_encap_is(const struct sk_buff *skb, unsigned int ihl);
int mpip_encap_pull(struct sk_buff *skb, struct mpip_rx *rx);
int mpip_encap_pull_at(struct sk_buff *skb, struct mpip_rx *rx,
		       unsigned int outer, __be16 sport);

/* encap_gso.c: datagrams inside UDP sent as one UDP GSO packet */
struct mpip_ebatch {
	struct sk_buff *head;	/* the packet the others are copied behind */
	struct page_frag pf;	/* where their payloads go */
	unsigned int seg_len;	/* UDP payload of each segment but the last */
	unsigned int segs;
	bool closed;		/* a shorter segment came: it was the last */
};

bool mpip_ebatch_add(struct mpip_ebatch *b, struct sk_buff *skb);
struct sk_buff *mpip_ebatch_take(struct mpip_ebatch *b);
void mpip_ebatch_release(struct mpip_ebatch *b);

/* ftcp.c: fake TCP connections of paths through NATs */
bool mpip_ftcp_is(const struct sk_buff *skb, unsigned int ihl);
int mpip_ftcp_pull(struct mpip_net *mn, struct sk_buff *skb,
		   struct mpip_rx *rx);
void mpip_ftcp_learn(struct mpip_net *mn, struct mpip_node *n,
		     const struct mpip_rx *rx);
void mpip_ftcp_tick(struct mpip_net *mn, struct mpip_node *n,
		    struct mpip_path *p);
bool mpip_ftcp_open(struct mpip_path *p, u32 len, struct mpip_ftcp_seg *g,
		    __be16 *dport);

/* output.c / input.c: netfilter hooks */
unsigned int mpip_out_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *state);
unsigned int mpip_in_hook(void *priv, struct sk_buff *skb,
			  const struct nf_hook_state *state);
void mpip_in_reinject(const struct mpip_net *mn, struct sk_buff *skb,
		      mpip_okfn_t okfn);

/* netlink.c */
int mpip_genl_register(void);
void mpip_genl_unregister(void);
bool mpip_nl_event_listened(struct net *net);
void *mpip_nl_event_start(struct sk_buff *skb);
void mpip_nl_event_send(struct net *net, struct sk_buff *skb);

/* event.c: events for mpipctl monitor */
void mpip_event_init(struct mpip_net *mn);
void mpip_event_peer(struct mpip_net *mn, const struct mpip_node *n, u8 type);
void mpip_event_tier(struct mpip_net *mn, const struct mpip_node *n, u8 type,
		     unsigned int tier);
void mpip_event_rule(struct mpip_net *mn, const struct mpip_rule *r);
void mpip_event_path(struct mpip_net *mn, const struct mpip_node *n,
		     const struct mpip_path *p, int state);
void mpip_event_path_nat(struct mpip_net *mn, const struct mpip_node *n,
			 const struct mpip_path *p, __be32 addr, __be16 port);

#endif /* _MPIP_H */
