/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * mpip: multipath IP for end hosts -- generic netlink interface.
 *
 * Family name MPIP_GENL_NAME, version MPIP_GENL_VERSION.  Every command
 * acts on the network namespace of the calling socket.  Commands that
 * change state (marked "admin") need CAP_NET_ADMIN in the user namespace
 * that owns that network namespace; the others are open to everyone.
 *
 * Attributes are strictly validated, each refusal with an extack message:
 * unknown attributes and integers of the wrong length get -EINVAL;
 * out-of-range values, and flags or binary attributes of the wrong
 * length, -ERANGE.
 * Addresses are IPv4 in network byte order (NLA_BE32 / struct in_addr
 * layout); ports are in host byte order (NLA_U16).
 *
 * See Documentation/netlink.rst for examples.
 */
#ifndef _UAPI_LINUX_MPIP_H
#define _UAPI_LINUX_MPIP_H

#include <linux/types.h>

#define MPIP_GENL_NAME		"mpip"
#define MPIP_GENL_VERSION	1

/**
 * enum mpip_cmd - generic netlink commands
 * @MPIP_CMD_UNSPEC: unused
 * @MPIP_CMD_GET_STATUS: doit.  Reply carries MPIP_A_ENABLED, MPIP_A_NODE_ID,
 *	MPIP_A_VERSION, MPIP_A_AVAIL_COUNT, MPIP_A_NODE_COUNT,
 *	MPIP_A_SESSION_COUNT, MPIP_A_PATH_COUNT, MPIP_A_AVAIL_CHAIN and
 *	MPIP_A_NODE_CHAIN.
 * @MPIP_CMD_SET_STATUS: doit, admin.  Request carries MPIP_A_ENABLED (u8,
 *	0 or 1): switches MPIP off or on in the namespace.  Switching off
 *	flushes the availability, node and session tables (and so the
 *	paths).
 * @MPIP_CMD_GET_AVAIL: dumpit.  One message per availability-table entry,
 *	each with one nested MPIP_A_AVAIL (enum mpip_avail_attr).
 * @MPIP_CMD_GET_NODES: dumpit.  One message per node-table entry, each with
 *	one nested MPIP_A_NODE (enum mpip_node_attr).
 * @MPIP_CMD_GET_STATS: doit.  Reply carries nested MPIP_A_STATS with one
 *	u64 attribute per counter (enum mpip_stat), summed over all CPUs.
 * @MPIP_CMD_GET_CONFIG: doit.  Reply carries nested MPIP_A_CONFIG with one
 *	u32 attribute per tunable (enum mpip_cfg).
 * @MPIP_CMD_SET_CONFIG: doit, admin.  Request carries nested MPIP_A_CONFIG
 *	with the tunables to change; each value is range-checked and the
 *	request is applied all or nothing.
 * @MPIP_CMD_FLUSH: doit, admin.  Empties the availability, node, session
 *	and path tables.
 * @MPIP_CMD_GET_SESSIONS: dumpit.  One message per session, each with one
 *	nested MPIP_A_SESSION (enum mpip_session_attr).
 * @MPIP_CMD_GET_PATHS: dumpit.  One message per path, each with one nested
 *	MPIP_A_PATH (enum mpip_path_attr).
 * @MPIP_CMD_GET_LINKS: dumpit.  One message per interface of the namespace
 *	(loopback excepted), each with one nested MPIP_A_LINK (enum
 *	mpip_link_attr): its index, name and settings.
 * @MPIP_CMD_SET_LINK: doit, admin.  Request carries nested MPIP_A_LINK with
 *	MPIP_LINK_A_IFINDEX and the settings to change; -ENODEV if the
 *	namespace has no such interface or it is the loopback.  Settings
 *	last as long as the interface stays in the namespace.
 * @MPIP_CMD_RULE_ADD: doit, admin.  Request carries nested MPIP_A_RULE
 *	(enum mpip_rule_attr): the rule's match keys and action.  With
 *	NLM_F_REPLACE a rule of the same preference is replaced, else that
 *	is -EEXIST.
 * @MPIP_CMD_RULE_DEL: doit, admin.  Request carries nested MPIP_A_RULE
 *	with MPIP_RULE_A_PREF; -ENOENT if no rule has it.
 * @MPIP_CMD_RULE_FLUSH: doit, admin.  Removes every rule.
 * @MPIP_CMD_GET_RULES: dumpit.  One message per rule, in preference
 *	order, each with one nested MPIP_A_RULE.
 * @MPIP_CMD_EVENT: notification only, sent to the multicast group
 *	MPIP_MCGRP_EVENTS of the namespace where it happened: MPIP_A_EVENT
 *	(enum mpip_event) and, for a peer, a failover or a failback,
 *	nested MPIP_A_NODE with MPIP_NODE_A_ID and MPIP_NODE_A_PEER_ID (a
 *	failover or a failback also MPIP_NODE_A_TIER, the tier now); for
 *	a path, nested MPIP_A_PATH with MPIP_PATH_A_NODE_ID, _ID, _SADDR,
 *	_DADDR, _IFINDEX and _STATE (the new state; for MPIP_EVENT_PATH_NAT
 *	the path's state, and also MPIP_PATH_A_SEEN_ADDR and
 *	MPIP_PATH_A_SEEN_PORT); for a rule, nested MPIP_A_RULE with
 *	MPIP_RULE_A_PREF, _PKTS and _BYTES.  At most
 *	MPIP_EVENTS_PER_SEC a second per namespace; the others are counted
 *	in MPIP_STAT_EVENT_DROP.
 */
enum mpip_cmd {
	MPIP_CMD_UNSPEC,
	MPIP_CMD_GET_STATUS,
	MPIP_CMD_SET_STATUS,
	MPIP_CMD_GET_AVAIL,
	MPIP_CMD_GET_NODES,
	MPIP_CMD_GET_STATS,
	MPIP_CMD_GET_CONFIG,
	MPIP_CMD_SET_CONFIG,
	MPIP_CMD_FLUSH,
	MPIP_CMD_GET_SESSIONS,
	MPIP_CMD_GET_PATHS,
	MPIP_CMD_GET_LINKS,
	MPIP_CMD_SET_LINK,
	MPIP_CMD_RULE_ADD,
	MPIP_CMD_RULE_DEL,
	MPIP_CMD_RULE_FLUSH,
	MPIP_CMD_GET_RULES,
	MPIP_CMD_EVENT,

	__MPIP_CMD_MAX,
};

#define MPIP_CMD_MAX (__MPIP_CMD_MAX - 1)

/* The multicast group of MPIP_CMD_EVENT (mpipctl monitor) */
#define MPIP_MCGRP_EVENTS	"events"
#define MPIP_EVENTS_PER_SEC	100

/**
 * enum mpip_event - what happened, in MPIP_A_EVENT
 * @MPIP_EVENT_UNSPEC: unused
 * @MPIP_EVENT_PEER_FOUND: the first authenticated CM from a peer arrived:
 *	its node is verified
 * @MPIP_EVENT_PEER_LOST: a peer was found lost (it left a question
 *	unanswered, or went silent with no path up): its flows go plain
 *	until it answers again
 * @MPIP_EVENT_PATH_UP: a path came up (its first delay report, or one
 *	after it was down)
 * @MPIP_EVENT_PATH_DOWN: an up path went down: its reports stopped, or
 *	its interface or route went away
 * @MPIP_EVENT_FAILOVER: data to a peer left the paths of its tier for
 *	paths of a higher one (MPIP_NODE_A_TIER; tier 1 and up: backup
 *	links, of either end): no path of the lower tier was up any more
 * @MPIP_EVENT_FAILBACK: data to a peer went back to paths of a lower tier
 *	(one has been up for a second, or no path of the higher one is left)
 * @MPIP_EVENT_RULE_HITS: a routing rule's packet count reached a multiple
 *	of MPIP_CFG_RULE_EVENT_PKTS
 * @MPIP_EVENT_PATH_NAT: a path was found translated by a NAT: the peer saw
 *	its probe come from MPIP_PATH_A_SEEN_ADDR and _PORT, not from the
 *	path's own end; it carries its packets inside UDP or fake TCP (its
 *	link's nat mode), or with nat mode none no data
 */
enum mpip_event {
	MPIP_EVENT_UNSPEC,
	MPIP_EVENT_PEER_FOUND,
	MPIP_EVENT_PEER_LOST,
	MPIP_EVENT_PATH_UP,
	MPIP_EVENT_PATH_DOWN,
	MPIP_EVENT_FAILOVER,
	MPIP_EVENT_FAILBACK,
	MPIP_EVENT_RULE_HITS,
	MPIP_EVENT_PATH_NAT,
};

/**
 * enum mpip_attr - top-level attributes
 * @MPIP_A_UNSPEC: unused
 * @MPIP_A_ENABLED: u8, 1 when MPIP is on in this namespace
 * @MPIP_A_NODE_ID: u32, a random label of this namespace (never 0); not
 *	sent on the wire: each peer knows this host by a token of its own
 * @MPIP_A_VERSION: string, module version
 * @MPIP_A_AVAIL_COUNT: u32, entries in the availability table
 * @MPIP_A_NODE_COUNT: u32, entries in the node table
 * @MPIP_A_AVAIL: nested, enum mpip_avail_attr
 * @MPIP_A_NODE: nested, enum mpip_node_attr
 * @MPIP_A_STATS: nested, enum mpip_stat (u64 each)
 * @MPIP_A_CONFIG: nested, enum mpip_cfg (u32 each)
 * @MPIP_A_PAD: reserved; the 64-bit counters inside MPIP_A_STATS are
 *	padded with MPIP_STAT_UNSPEC attributes, which readers skip
 * @MPIP_A_SESSION: nested, enum mpip_session_attr
 * @MPIP_A_PATH: nested, enum mpip_path_attr
 * @MPIP_A_SESSION_COUNT: u32, entries in the session table
 * @MPIP_A_PATH_COUNT: u32, paths over all nodes
 * @MPIP_A_LINK: nested, enum mpip_link_attr
 * @MPIP_A_RULE: nested, enum mpip_rule_attr
 * @MPIP_A_EVENT: u8, enum mpip_event (MPIP_CMD_EVENT only)
 * @MPIP_A_AVAIL_CHAIN: u32, the longest hash-bucket chain of the
 *	availability table since its last expiry sweep
 * @MPIP_A_NODE_CHAIN: u32, the same for the node table
 */
enum mpip_attr {
	MPIP_A_UNSPEC,
	MPIP_A_ENABLED,
	MPIP_A_NODE_ID,
	MPIP_A_VERSION,
	MPIP_A_AVAIL_COUNT,
	MPIP_A_NODE_COUNT,
	MPIP_A_AVAIL,
	MPIP_A_NODE,
	MPIP_A_STATS,
	MPIP_A_CONFIG,
	MPIP_A_PAD,
	MPIP_A_SESSION,
	MPIP_A_PATH,
	MPIP_A_SESSION_COUNT,
	MPIP_A_PATH_COUNT,
	MPIP_A_LINK,
	MPIP_A_RULE,
	MPIP_A_EVENT,
	MPIP_A_AVAIL_CHAIN,
	MPIP_A_NODE_CHAIN,

	__MPIP_A_MAX,
};

#define MPIP_A_MAX (__MPIP_A_MAX - 1)

/**
 * enum mpip_link_attr - attributes nested in MPIP_A_LINK
 * @MPIP_LINK_A_UNSPEC: unused
 * @MPIP_LINK_A_IFINDEX: u32, interface index
 * @MPIP_LINK_A_NAME: string, interface name (in dumps only)
 * @MPIP_LINK_A_ADVERTISE: u8, 1 (the default) if the interface's addresses
 *	are advertised to peers and are the local ends of paths; 0 if they
 *	are neither: peers never learn them, and only flows whose own
 *	route uses the interface send from them
 * @MPIP_LINK_A_BACKUP: u8, 1 if the interface is a backup link, of tier
 *	1 or more (MPIP_LINK_A_TIER); 0 (the default) if not.  In a
 *	request, 1 sets tier 1 and 0 tier 0 (not with MPIP_LINK_A_TIER)
 * @MPIP_LINK_A_NAT: u8, enum mpip_link_nat: how the paths from the
 *	interface cross a NAT (MPIP_LINK_NAT_DEFAULT: as MPIP_CFG_NAT_MODE
 *	says)
 * @MPIP_LINK_A_TIER: u8, 0 (the default) to 7: the paths from the
 *	interface carry this host's data only while no path of a lower tier
 *	is up (a path back from a failure beyond its link after a second of
 *	being up); peers learn each address's tier and metered bit from
 *	the address list's extension, and a path's tier is the higher of
 *	its two ends'; an extension that is only the backup mask (sent
 *	while every tier is 0 or 1 and nothing is metered) gives each
 *	address in the mask tier 1
 * @MPIP_LINK_A_METERED: u8, 1 if the interface is paid by the byte:
 *	routing rules with MPIP_RULE_A_NOMETERED keep off its paths, and
 *	peers learn it with its addresses (MPIP_LINK_A_TIER); 0 (the
 *	default) if not
 */
enum mpip_link_attr {
	MPIP_LINK_A_UNSPEC,
	MPIP_LINK_A_IFINDEX,
	MPIP_LINK_A_NAME,
	MPIP_LINK_A_ADVERTISE,
	MPIP_LINK_A_BACKUP,
	MPIP_LINK_A_NAT,
	MPIP_LINK_A_TIER,
	MPIP_LINK_A_METERED,

	__MPIP_LINK_A_MAX,
};

/**
 * enum mpip_link_nat - an interface's NAT traversal (MPIP_LINK_A_NAT)
 * @MPIP_LINK_NAT_DEFAULT: the namespace's MPIP_CFG_NAT_MODE
 * @MPIP_LINK_NAT_AUTO: as MPIP_NAT_MODE_AUTO, for the paths from it
 * @MPIP_LINK_NAT_NONE: as MPIP_NAT_MODE_NONE
 * @MPIP_LINK_NAT_UDP: as MPIP_NAT_MODE_UDP
 * @MPIP_LINK_NAT_FAKETCP: as MPIP_NAT_MODE_FAKETCP
 */
enum mpip_link_nat {
	MPIP_LINK_NAT_DEFAULT,
	MPIP_LINK_NAT_AUTO,
	MPIP_LINK_NAT_NONE,
	MPIP_LINK_NAT_UDP,
	MPIP_LINK_NAT_FAKETCP,
};

#define MPIP_LINK_A_MAX (__MPIP_LINK_A_MAX - 1)

/**
 * enum mpip_rule_mode - what a rule does with the packets it matches
 * @MPIP_RULE_MODE_ALL: spread over all paths up, by weight (the default)
 * @MPIP_RULE_MODE_SINGLE: one path per flow, the lowest one-way delay,
 *	with hysteresis; another when it goes down
 * @MPIP_RULE_MODE_SELECTED: spread over the paths whose local end is on
 *	one of the listed interfaces (or, with MPIP_RULE_A_IFS_DENY, on none)
 * @MPIP_RULE_MODE_PROTECTED: each packet twice (MPIP_RULE_A_COPIES
 *	times), on the path of lowest one-way delay and on the ones that
 *	share least with those chosen; the receiver delivers the first copy
 *	(MPIP_STAT_RX_DUP)
 * @MPIP_RULE_MODE_ORIGINAL: the flow's own addresses only, with trailers
 * @MPIP_RULE_MODE_OFF: mpip leaves the packets alone: no query, no trailer
 */
enum mpip_rule_mode {
	MPIP_RULE_MODE_ALL,
	MPIP_RULE_MODE_SINGLE,
	MPIP_RULE_MODE_SELECTED,
	MPIP_RULE_MODE_PROTECTED,
	MPIP_RULE_MODE_ORIGINAL,
	MPIP_RULE_MODE_OFF,
};

/**
 * enum mpip_rule_fallback - when no path a rule allows is up
 * @MPIP_RULE_FALLBACK_ANY: any path up
 * @MPIP_RULE_FALLBACK_ORIGINAL: the flow's own addresses
 * @MPIP_RULE_FALLBACK_DROP: drop the packet (counter rule_dropped)
 */
enum mpip_rule_fallback {
	MPIP_RULE_FALLBACK_ANY,
	MPIP_RULE_FALLBACK_ORIGINAL,
	MPIP_RULE_FALLBACK_DROP,
};

/**
 * enum mpip_rule_attr - attributes nested in MPIP_A_RULE
 * @MPIP_RULE_A_UNSPEC: unused
 * @MPIP_RULE_A_PREF: u32, 1..0xffffffff, lower first; absent in an add:
 *	one below the first rule's (32000 in an empty table)
 * @MPIP_RULE_A_PROTO: u8, IP protocol to match
 * @MPIP_RULE_A_DADDR: be32, destination prefix (with MPIP_RULE_A_DPLEN)
 * @MPIP_RULE_A_DPLEN: u8, 0..32
 * @MPIP_RULE_A_SADDR: be32, source prefix (with MPIP_RULE_A_SPLEN)
 * @MPIP_RULE_A_SPLEN: u8, 0..32
 * @MPIP_RULE_A_DPORT: struct mpip_rule_range, destination ports
 * @MPIP_RULE_A_SPORT: struct mpip_rule_range, source ports
 * @MPIP_RULE_A_LEN: struct mpip_rule_range, IP total length (no trailer)
 * @MPIP_RULE_A_DSCP: u8, 0..63
 * @MPIP_RULE_A_MARK: u32, fwmark (with MPIP_RULE_A_MARK_MASK, default
 *	0xffffffff)
 * @MPIP_RULE_A_MARK_MASK: u32, not 0
 * @MPIP_RULE_A_PURE_ACK: flag: TCP segments with ACK and nothing else
 * @MPIP_RULE_A_MODE: u8, enum mpip_rule_mode (default ALL)
 * @MPIP_RULE_A_FALLBACK: u8, enum mpip_rule_fallback (default ANY)
 * @MPIP_RULE_A_IFS: binary, an array of 1 to 8 u32 interface indexes
 *	(host byte order); modes SINGLE, SELECTED (required there) and
 *	PROTECTED only.  The policy checks only the maximum length, 32
 *	bytes (-ERANGE); an empty list, or one that is not a whole number
 *	of u32, is refused with -EINVAL
 * @MPIP_RULE_A_IFS_DENY: flag: MPIP_RULE_A_IFS lists the interfaces not
 *	to use (only with MPIP_RULE_A_IFS)
 * @MPIP_RULE_A_PAD: padding for the u64 attributes
 * @MPIP_RULE_A_PKTS: u64, dumps only: packets this host sent that
 *	matched the rule (a GSO packet counts its segments)
 * @MPIP_RULE_A_BYTES: u64, dumps only: their bytes (IP, no trailer)
 * @MPIP_RULE_A_COPIES: u8, 2..8: mode PROTECTED only (-EINVAL with
 *	another), how many copies of each packet, on that many paths if
 *	they are up, else on as many as are (one packet with one path up)
 *	(default 2; dumps give it for PROTECTED rules)
 * @MPIP_RULE_A_NOMETERED: flag: no path metered at either end: from a
 *	metered interface (MPIP_LINK_A_METERED), or to an address the peer
 *	says is metered; modes ALL, SINGLE, SELECTED and PROTECTED
 */
enum mpip_rule_attr {
	MPIP_RULE_A_UNSPEC,
	MPIP_RULE_A_PREF,
	MPIP_RULE_A_PROTO,
	MPIP_RULE_A_DADDR,
	MPIP_RULE_A_DPLEN,
	MPIP_RULE_A_SADDR,
	MPIP_RULE_A_SPLEN,
	MPIP_RULE_A_DPORT,
	MPIP_RULE_A_SPORT,
	MPIP_RULE_A_LEN,
	MPIP_RULE_A_DSCP,
	MPIP_RULE_A_MARK,
	MPIP_RULE_A_MARK_MASK,
	MPIP_RULE_A_PURE_ACK,
	MPIP_RULE_A_MODE,
	MPIP_RULE_A_FALLBACK,
	MPIP_RULE_A_IFS,
	MPIP_RULE_A_IFS_DENY,
	MPIP_RULE_A_PAD,
	MPIP_RULE_A_PKTS,
	MPIP_RULE_A_BYTES,
	MPIP_RULE_A_COPIES,
	MPIP_RULE_A_NOMETERED,

	__MPIP_RULE_A_MAX,
};

#define MPIP_RULE_A_MAX (__MPIP_RULE_A_MAX - 1)

/* A range of u16 values, both ends included (host byte order). */
struct mpip_rule_range {
	__u16 start;
	__u16 end;
};

/**
 * enum mpip_avail_state - MPIP availability of a remote (address, port)
 * @MPIP_AVAIL_PROBING: queries are being sent, no answer yet
 * @MPIP_AVAIL_YES: the remote runs MPIP (it answered, or it queried us)
 * @MPIP_AVAIL_NO: the query threshold was reached without an answer;
 *	no more queries until the next try, 10 s later (twice as long
 *	after each try that fails, up to about 5 min), if traffic still
 *	goes there
 */
enum mpip_avail_state {
	MPIP_AVAIL_PROBING,
	MPIP_AVAIL_YES,
	MPIP_AVAIL_NO,
};

/**
 * enum mpip_avail_attr - attributes nested in MPIP_A_AVAIL
 * @MPIP_AVAIL_A_UNSPEC: unused
 * @MPIP_AVAIL_A_ADDR: be32, remote IPv4 address
 * @MPIP_AVAIL_A_PORT: u16, remote port (host byte order)
 * @MPIP_AVAIL_A_PROTO: u8, IP protocol of the flow that created the entry
 * @MPIP_AVAIL_A_STATE: u8, enum mpip_avail_state
 * @MPIP_AVAIL_A_QUERIES: u32, queries sent to this destination
 * @MPIP_AVAIL_A_NODE_ID: u32, ID of the node (MPIP_NODE_A_ID) the entry
 *	belongs to, 0 while unknown
 * @MPIP_AVAIL_A_AGE_MS: u32, milliseconds since the entry was last used
 */
enum mpip_avail_attr {
	MPIP_AVAIL_A_UNSPEC,
	MPIP_AVAIL_A_ADDR,
	MPIP_AVAIL_A_PORT,
	MPIP_AVAIL_A_PROTO,
	MPIP_AVAIL_A_STATE,
	MPIP_AVAIL_A_QUERIES,
	MPIP_AVAIL_A_NODE_ID,
	MPIP_AVAIL_A_AGE_MS,

	__MPIP_AVAIL_A_MAX,
};

#define MPIP_AVAIL_A_MAX (__MPIP_AVAIL_A_MAX - 1)

/**
 * enum mpip_node_attr - attributes nested in MPIP_A_NODE
 * @MPIP_NODE_A_UNSPEC: unused
 * @MPIP_NODE_A_ID: u32, the node's ID: this host's token of the peer pair
 *	(derived from its key), unique in the namespace
 * @MPIP_NODE_A_ENDPOINTS: nested; one MPIP_NODE_A_ENDPOINT per (address,
 *	port) that authenticated CMs from this node were seen to come from,
 *	at most 8 (then a new one replaces the oldest, at most every 100 ms)
 * @MPIP_NODE_A_ENDPOINT: nested, enum mpip_ep_attr
 * @MPIP_NODE_A_ADDRS: nested; one MPIP_NODE_A_ADDR per address the node
 *	advertised in the address list of its control messages
 * @MPIP_NODE_A_ADDR: be32, one advertised address
 * @MPIP_NODE_A_AGE_MS: u32, milliseconds since the last authenticated CM
 *	from it (or since the entry was made)
 * @MPIP_NODE_A_PEER_ID: u32, the peer's token for the pair: the node ID
 *	the peer has for this host (0 while the peer's key is unknown)
 * @MPIP_NODE_A_VERIFIED: u8, 1 once an authenticated CM from it arrived
 * @MPIP_NODE_A_TIER: u8, in MPIP_EVENT_FAILOVER and _FAILBACK only: the
 *	tier (MPIP_LINK_A_TIER) of the paths the node's data goes over now
 */
enum mpip_node_attr {
	MPIP_NODE_A_UNSPEC,
	MPIP_NODE_A_ID,
	MPIP_NODE_A_ENDPOINTS,
	MPIP_NODE_A_ENDPOINT,
	MPIP_NODE_A_ADDRS,
	MPIP_NODE_A_ADDR,
	MPIP_NODE_A_AGE_MS,
	MPIP_NODE_A_PEER_ID,
	MPIP_NODE_A_VERIFIED,
	MPIP_NODE_A_TIER,

	__MPIP_NODE_A_MAX,
};

#define MPIP_NODE_A_MAX (__MPIP_NODE_A_MAX - 1)

/**
 * enum mpip_ep_attr - attributes nested in MPIP_NODE_A_ENDPOINT
 * @MPIP_EP_A_UNSPEC: unused
 * @MPIP_EP_A_ADDR: be32, address
 * @MPIP_EP_A_PORT: u16, port (host byte order)
 */
enum mpip_ep_attr {
	MPIP_EP_A_UNSPEC,
	MPIP_EP_A_ADDR,
	MPIP_EP_A_PORT,

	__MPIP_EP_A_MAX,
};

#define MPIP_EP_A_MAX (__MPIP_EP_A_MAX - 1)

/**
 * enum mpip_session_attr - attributes nested in MPIP_A_SESSION
 * @MPIP_SESSION_A_UNSPEC: unused
 * @MPIP_SESSION_A_NODE_ID: u32, ID of the session's node (MPIP_NODE_A_ID)
 * @MPIP_SESSION_A_ID: u16, session ID (the same on both nodes)
 * @MPIP_SESSION_A_PROTO: u8, IPPROTO_TCP or IPPROTO_UDP
 * @MPIP_SESSION_A_LADDR: be32, original local address
 * @MPIP_SESSION_A_LPORT: u16, original local port
 * @MPIP_SESSION_A_RADDR: be32, original remote address
 * @MPIP_SESSION_A_RPORT: u16, original remote port
 * @MPIP_SESSION_A_CONFIRMED: u8, 1 once the peer has shown it knows the
 *	session; only then do its packets use other paths than the original
 * @MPIP_SESSION_A_AGE_MS: u32, milliseconds since the last packet
 * @MPIP_SESSION_A_TX_PKTS: u64, packets sent with a data trailer
 * @MPIP_SESSION_A_RX_PKTS: u64, packets received with a data trailer
 * @MPIP_SESSION_A_PAD: padding for the u64 attributes
 */
enum mpip_session_attr {
	MPIP_SESSION_A_UNSPEC,
	MPIP_SESSION_A_NODE_ID,
	MPIP_SESSION_A_ID,
	MPIP_SESSION_A_PROTO,
	MPIP_SESSION_A_LADDR,
	MPIP_SESSION_A_LPORT,
	MPIP_SESSION_A_RADDR,
	MPIP_SESSION_A_RPORT,
	MPIP_SESSION_A_CONFIRMED,
	MPIP_SESSION_A_AGE_MS,
	MPIP_SESSION_A_TX_PKTS,
	MPIP_SESSION_A_RX_PKTS,
	MPIP_SESSION_A_PAD,

	__MPIP_SESSION_A_MAX,
};

#define MPIP_SESSION_A_MAX (__MPIP_SESSION_A_MAX - 1)

/**
 * enum mpip_path_state - state of one path (local address to peer address)
 * @MPIP_PATH_NOROUTE: no route leaves through the interface that owns the
 *	local address towards the peer address; never used
 * @MPIP_PATH_PROBING: new or recovering: probed, carries no data until
 *	the peer reports that packets arrive through it and the remote
 *	address answered a probe from itself (return routability)
 * @MPIP_PATH_UP: confirmed; carries data in proportion to its weight
 * @MPIP_PATH_DOWN: no feedback within its timeout (MPIP_PATH_A_TIMEOUT_MS:
 *	path_timeout_ms beyond the round trip of its reports and four times
 *	its deviation, at most 8 times path_timeout_ms), or its interface
 *	went down; probed, carries no data
 */
enum mpip_path_state {
	MPIP_PATH_NOROUTE,
	MPIP_PATH_PROBING,
	MPIP_PATH_UP,
	MPIP_PATH_DOWN,
};

/**
 * enum mpip_path_attr - attributes nested in MPIP_A_PATH
 * @MPIP_PATH_A_UNSPEC: unused
 * @MPIP_PATH_A_NODE_ID: u32, ID of the path's node (MPIP_NODE_A_ID)
 * @MPIP_PATH_A_ID: u8, path ID (1..16, per remote node, chosen locally)
 * @MPIP_PATH_A_SADDR: be32, local (source) address on the wire
 * @MPIP_PATH_A_DADDR: be32, remote (destination) address on the wire
 * @MPIP_PATH_A_IFINDEX: u32, interface that owns the source address
 * @MPIP_PATH_A_STATE: u8, enum mpip_path_state
 * @MPIP_PATH_A_WEIGHT: u32, current weight (1..1000)
 * @MPIP_PATH_A_HAVE_DELAY: u8, 1 once a delay report arrived; the delay
 *	attributes below are 0 until then
 * @MPIP_PATH_A_MIN_DELAY_US: u32, minimum one-way delay seen, us (contains
 *	the clock offset between the two nodes)
 * @MPIP_PATH_A_DELAY_US: u32, smoothed real-time one-way delay, us (same
 *	offset)
 * @MPIP_PATH_A_QDELAY_US: u32, queueing delay (real-time minus minimum), us
 * @MPIP_PATH_A_MAX_QDELAY_US: u32, largest queueing delay seen, us
 * @MPIP_PATH_A_TX_PKTS: u64, data packets sent on the path
 * @MPIP_PATH_A_TX_BYTES: u64, bytes of those packets (IP length)
 * @MPIP_PATH_A_RX_PKTS: u64, packets received on the reverse of the path
 *	(from the remote address to the local address)
 * @MPIP_PATH_A_RX_BYTES: u64, bytes of those packets
 * @MPIP_PATH_A_FEEDBACK: u64, delay reports received for the path
 * @MPIP_PATH_A_FB_AGE_MS: u32, milliseconds since the last delay report
 *	for the path (0xffffffff: never)
 * @MPIP_PATH_A_PAD: padding for the u64 attributes
 * @MPIP_PATH_A_VERIFIED: u8, 1 once the remote address echoed the path's
 *	nonce (return routability): only such a path carries data
 * @MPIP_PATH_A_NAT: u8, 1 if the peer saw the path's probes come from
 *	another address or port than the path's own: a NAT translates the
 *	path, which then carries data only inside UDP, or inside fake TCP
 *	with nat mode faketcp (MPIP_PATH_A_ENCAP), and none with nat mode
 *	none (its link's MPIP_LINK_A_NAT, or MPIP_CFG_NAT_MODE)
 * @MPIP_PATH_A_SEEN_ADDR: be32, the address the peer saw the probe it
 *	answered come from (present once it answered)
 * @MPIP_PATH_A_SEEN_PORT: u16, the UDP port it saw (host byte order)
 * @MPIP_PATH_A_ENCAP: u8, 1 if the path's packets travel inside UDP, 2 if
 *	inside fake TCP (inside UDP until its connection is open)
 *	(Documentation/wire-format.rst, "UDP encapsulation")
 * @MPIP_PATH_A_DPORT: u16, the UDP port the path's control and
 *	encapsulated packets go to (host byte order): the peer's control
 *	port, or the one its NAT gave it
 * @MPIP_PATH_A_LEARNED: u8, 1 if the path was not made from the peer's
 *	address list but from where its CMs came from: its end is a NAT's
 * @MPIP_PATH_A_TIER: u8, the path's tier, 0..7: the higher of its link's
 *	(MPIP_LINK_A_TIER) and the one the peer gives its address
 * @MPIP_PATH_A_METERED: u8, 1 if the path's link is metered
 *	(MPIP_LINK_A_METERED) or the peer says its address is
 * @MPIP_PATH_A_LOSS_PCT: u8, the share of the path's last loss probes
 *	(up to 16) that went unanswered, in percent (MPIP_CFG_LOSS_PCT)
 * @MPIP_PATH_A_LOSSY: u8, 1 if the loss oracle finds the path lossy
 *	(MPIP_CFG_LOSS_PCT not 0)
 * @MPIP_PATH_A_COLD: u8, 1 if the path is a cold standby: metered at
 *	either end, of a tier above the one the node's data goes over;
 *	nothing but data goes on it: no probes, loss probes, fake TCP SYNs
 *	or address lists
 * @MPIP_PATH_A_RTT_US: u32, smoothed round trip of the path's delay
 *	reports, us: the path's one-way delay plus that of the packet that
 *	brought each report back, less the time the peer held it; absent
 *	until a report gave one
 * @MPIP_PATH_A_TIMEOUT_MS: u32, how long the path may go without a delay
 *	report before it goes down: MPIP_CFG_PATH_TIMEOUT_MS beyond the
 *	round trip and four times its deviation, at most 8 times the former
 *	(the former alone until a round trip is known)
 * @MPIP_PATH_A_MTU: u32, the MTU that a "fragmentation needed" error
 *	about one of the path's packets gave; absent when none did, or once
 *	it expired (with the route's PMTU exceptions, ip_rt_mtu_expires)
 */
enum mpip_path_attr {
	MPIP_PATH_A_UNSPEC,
	MPIP_PATH_A_NODE_ID,
	MPIP_PATH_A_ID,
	MPIP_PATH_A_SADDR,
	MPIP_PATH_A_DADDR,
	MPIP_PATH_A_IFINDEX,
	MPIP_PATH_A_STATE,
	MPIP_PATH_A_WEIGHT,
	MPIP_PATH_A_HAVE_DELAY,
	MPIP_PATH_A_MIN_DELAY_US,
	MPIP_PATH_A_DELAY_US,
	MPIP_PATH_A_QDELAY_US,
	MPIP_PATH_A_MAX_QDELAY_US,
	MPIP_PATH_A_TX_PKTS,
	MPIP_PATH_A_TX_BYTES,
	MPIP_PATH_A_RX_PKTS,
	MPIP_PATH_A_RX_BYTES,
	MPIP_PATH_A_FEEDBACK,
	MPIP_PATH_A_FB_AGE_MS,
	MPIP_PATH_A_PAD,
	MPIP_PATH_A_VERIFIED,
	MPIP_PATH_A_NAT,
	MPIP_PATH_A_SEEN_ADDR,
	MPIP_PATH_A_SEEN_PORT,
	MPIP_PATH_A_ENCAP,
	MPIP_PATH_A_DPORT,
	MPIP_PATH_A_LEARNED,
	MPIP_PATH_A_TIER,
	MPIP_PATH_A_METERED,
	MPIP_PATH_A_LOSS_PCT,
	MPIP_PATH_A_LOSSY,
	MPIP_PATH_A_COLD,
	MPIP_PATH_A_RTT_US,
	MPIP_PATH_A_TIMEOUT_MS,
	MPIP_PATH_A_MTU,

	__MPIP_PATH_A_MAX,
};

#define MPIP_PATH_A_MAX (__MPIP_PATH_A_MAX - 1)

/**
 * enum mpip_stat - counters nested in MPIP_A_STATS (u64 each)
 * @MPIP_STAT_UNSPEC: unused
 * @MPIP_STAT_TX_CM: data packets sent with a CM trailer
 * @MPIP_STAT_RX_CM: data packets received with a valid CM trailer (stripped)
 * @MPIP_STAT_TX_QUERY: availability queries (Flags_Enable) sent
 * @MPIP_STAT_RX_QUERY: availability queries received
 * @MPIP_STAT_TX_CONFIRM: confirmations (Flags_Enabled) sent
 * @MPIP_STAT_RX_CONFIRM: confirmations received
 * @MPIP_STAT_RX_CTRL: control-only packets consumed by MPIP
 * @MPIP_STAT_PROBE_GIVEUP: destinations marked unavailable after the query
 *	threshold was reached without an answer
 * @MPIP_STAT_PEER_LOST: available peers downgraded to probing because they
 *	left an MPIP packet that wants an answer unanswered, or sent nothing
 *	while no path to them was up, for peer_timeout_ms
 * @MPIP_STAT_MSS_CLAMPED: outgoing SYNs whose MSS option was reduced,
 *	and, where paths may go inside fake TCP, incoming ones
 * @MPIP_STAT_TX_GSO_SPLIT: GSO packets split in software to carry trailers
 * @MPIP_STAT_TX_NO_ROOM: packets sent without a trailer because it would
 *	not fit in the route MTU
 * @MPIP_STAT_DROP_NOMEM: packets or control messages dropped for lack of
 *	memory
 * @MPIP_STAT_TABLE_FULL: table entries not created because a table was full
 * @MPIP_STAT_RX_NOT_LOCAL: valid trailers left in place because the packet
 *	was not addressed to this host
 * @MPIP_STAT_SESSION_NEW: sessions created
 * @MPIP_STAT_SESSION_EXPIRED: sessions removed after session_timeout_ms,
 *	or once their node went silent and the flow's destination moved to
 *	another (the peer restarted)
 * @MPIP_STAT_TX_REWRITE: packets sent with rewritten addresses (on a path
 *	other than the flow's original one)
 * @MPIP_STAT_RX_RESTORE: packets whose original addresses were restored
 * @MPIP_STAT_TX_FEEDBACK: delay reports sent (piggybacked or heartbeat)
 * @MPIP_STAT_RX_FEEDBACK: delay reports received
 * @MPIP_STAT_TX_HEARTBEAT: heartbeats and path probes sent
 * @MPIP_STAT_RX_HEARTBEAT: heartbeats and path probes received
 * @MPIP_STAT_PATH_UP: path transitions to MPIP_PATH_UP
 * @MPIP_STAT_PATH_DOWN: paths that left MPIP_PATH_UP (for DOWN or NOROUTE)
 * @MPIP_STAT_TX_IP_CHANGE: address-change notices (IP_CHANGE) sent
 * @MPIP_STAT_RX_IP_CHANGE: address-change notices received
 * @MPIP_STAT_DROP_SESSION: packets dropped because their session ID
 *	matched no session and their addresses were not the original ones
 * @MPIP_STAT_DROP_NOROUTE: packets that fell back to the original path
 *	because the chosen path had no route
 * @MPIP_STAT_TX_GSO_KEPT: GSO packets sent whole with one CM, since
 *	their route reaches the peer's stack without a wire (tunable tx_gso)
 * @MPIP_STAT_RX_GSO_KEPT: such GSO packets received
 * @MPIP_STAT_REORDER_HELD: TCP segments held back in a reorder buffer
 * @MPIP_STAT_REORDER_IN_ORDER: held segments released because the gap
 *	before them was filled
 * @MPIP_STAT_REORDER_TIMEOUT: held segments released because
 *	@MPIP_CFG_REORDER_MAX_HOLD_MS ran out while the paths could still
 *	deliver the gap, or the peer was gone
 * @MPIP_STAT_REORDER_OVERFLOW: held segments released because the buffer
 *	was full
 * @MPIP_STAT_TX_BARE: packets of sessions sent without a CM, on the
 *	only path to their peer (see @MPIP_CFG_BARE_CM_MS)
 * @MPIP_STAT_REORDER_LOST: held segments released because every path
 *	had delivered a packet sent enough after them, or had been quiet
 *	long enough for the gap to have come: it was lost
 * @MPIP_STAT_TX_STEERED: data packets sent on another path than the
 *	weights chose, whose local queue held fewer bytes per unit of weight
 *	(@MPIP_CFG_QUEUE_STEER)
 * @MPIP_STAT_RX_REASSEMBLED: datagrams for this host reassembled from
 *	fragments by mpip's input hook, to find their trailer
 * @MPIP_STAT_TX_POLICY_KEPT: data packets kept on their flow's own route
 *	because the host's routing rules or IPsec policies would not let the
 *	flow take the path the weights chose (see the design documentation)
 * @MPIP_STAT_RX_ICMP_PMTU: "fragmentation needed" errors about a
 *	session's packets sent on a path, whose MTU was recorded on the path
 *	and its route
 * @MPIP_STAT_RX_SPOOFED: data packets of a session dropped because they
 *	came, under other addresses than the session's own, from an
 *	address none of whose paths answered from it
 * @MPIP_STAT_RX_AUTH_FAIL: CMs dropped because their token named no node
 *	or their MAC did not verify (forged, corrupted, or from a peer
 *	that restarted)
 * @MPIP_STAT_RX_REPLAY: CMs whose counter was seen already or is too
 *	old: control CMs are dropped, data packets delivered without
 *	learning anything from their CM
 * @MPIP_STAT_RX_V1: packets with a wire format v1 trailer, taken for
 *	plain packets (a peer that does not authenticate is legacy)
 * @MPIP_STAT_RR_VERIFIED: paths whose remote address echoed the path's
 *	nonce (return routability): only those carry data
 * @MPIP_STAT_CTRL_LIMITED: answers to probes and confirmations of
 *	unauthenticated queries not sent: over the per-namespace budget
 *	(or, for a peer's probes, over that peer's own budget)
 * @MPIP_STAT_RR_HELD: probes of unverified paths held back because
 *	their node sent fewer authenticated packets than it got probes
 * @MPIP_STAT_RX_PLAIN: data packets whose CM did not authenticate (a
 *	peer that lost our keys, or a query there was no room for)
 *	delivered as plain IP: trailer stripped, nothing learned
 * @MPIP_STAT_RULE_DROPPED: packets dropped by a rule's fallback drop: no
 *	path the rule allows was up
 * @MPIP_STAT_RX_DUP: second copies dropped: packets a rule of mode
 *	protected sent on two paths, of which the other copy came first
 * @MPIP_STAT_EVENT_DROP: events (MPIP_CMD_EVENT) not sent although a
 *	socket listened: over MPIP_EVENTS_PER_SEC, or no memory
 * @MPIP_STAT_BACKUP_HOLD: packets sent on a backup link while a main path
 *	that had come back up less than a second before was up too (it must
 *	stay up that long before it takes the data back)
 * @MPIP_STAT_RR_NAT: paths found translated: the peer saw their probes
 *	come from another address or port (a NAT); they carry data only
 *	inside UDP, or inside fake TCP with nat mode faketcp, and none with
 *	nat mode none (MPIP_LINK_A_NAT, MPIP_CFG_NAT_MODE)
 * @MPIP_STAT_PATH_LEARNED: paths made, or moved to another port, from
 *	where a peer's authenticated control packets came from: its NAT's
 *	end of one of its paths
 * @MPIP_STAT_TX_ENCAP: data packets sent inside UDP
 * @MPIP_STAT_RX_ENCAP: packets received inside UDP and taken out
 * @MPIP_STAT_RX_ENCAP_BAD: datagrams to the control port with a shim but
 *	no valid packet inside, dropped
 * @MPIP_STAT_TX_ENCAP_FRAG: packets sent inside UDP that did not fit the
 *	path's MTU and went without the don't-fragment bit (IP fragments
 *	them), rather than bare on a path whose NAT would drop them
 * @MPIP_STAT_FTCP_CTRL: SYNs, SYN-ACKs and ACKs of fake TCP connections
 *	sent
 * @MPIP_STAT_FTCP_OPEN: fake TCP connections a peer opened to a path
 *	learned through its NAT
 * @MPIP_STAT_RX_GRO_UNOPENED: TCP packets that GRO merged without checking
 *	checksums (behind WireGuard) ending in a CM whose MAC did not
 *	verify, dropped
 * @MPIP_STAT_TABLE_EVICT: strangers' table entries removed to make room
 *	for new ones at a full table
 * @MPIP_STAT_CTRL_BUDGET: control packets (queries, confirmations,
 *	answers, probes, heartbeats, IP_CHANGE, fake TCP handshakes) not
 *	sent because the namespace's budget, MPIP_CFG_CTRL_PPS, was spent
 *	(the counters of their kinds, such as MPIP_STAT_TX_HEARTBEAT, count
 *	them as if they had been lost on the way)
 * @MPIP_STAT_PATH_LOSSY: paths the loss oracle found lossy
 *	(MPIP_CFG_LOSS_PCT)
 * @MPIP_STAT_RX_ENCAP_GRO: datagrams to the control port that GRO had
 *	merged (rx-udp-gro-forwarding, rx-gro-list), split again so that each
 *	packet inside is taken out
 * @MPIP_STAT_RX_ICMP_REFUSED: "fragmentation needed" errors about packets
 *	sent inside UDP on a path whose quote did not name the session of
 *	the packet inside (for TCP, with a sequence number its socket sent):
 *	forged, or from a router that quotes too little; dropped
 * @MPIP_STAT_SESSION_UNPROVEN: packets of a new flow that made no session
 *	because the node sent them from an address it has not proved to
 *	receive at (neither the one it shook hands from nor one a path
 *	answered from): the packet goes on as plain IP, with no session
 * @MPIP_STAT_SESSION_RESYNC: confirmed sessions the peer showed it had
 *	lost (it restarted): in a CM with the flow's own addresses it named
 *	another ID than ours, which won, or it said it knows no session of
 *	our ID (a heartbeat with NEW, sent when it dropped a packet under
 *	it); the session's packets keep to the flow's own addresses until
 *	the peer confirms the ID again
 * @MPIP_STAT_RX_PAIR_TAKEN: handshake CMs refused, though their MAC may
 *	verify, because they would pair a node of ours with a peer key that
 *	another node of ours pairs with already (the peer's node of that
 *	key can hold one pair only; see the security documentation)
 * @MPIP_STAT_TX_UNKNOWN: "no such session" heartbeats sent: a node's
 *	packet came under a session ID we know no session of (we lost it)
 *	and was dropped; at most one per ID every 100 ms, 10 a second per
 *	node with a burst of 32
 * @MPIP_STAT_TX_ENCAP_GSO: UDP or TCP GSO packets sent, each of the
 *	datagrams inside UDP, or fake TCP segments, that one TCP GSO packet
 *	was split into (tx_gso on)
 * @MPIP_STAT_TX_RESEND: TCP segments sent again (their sequence lies
 *	before the session's highest sent) that went on the path of highest
 *	delay rather than one by weight
 * @MPIP_STAT_TX_PATH_MTU: packets sized for their path's MTU, bigger
 *	than their route's PMTU exception, which mpip lowered for their flow
 *	by the room of its trailer and encapsulation; IP output leaves them
 *	whole (they are marked as forwarded packets are)
 * @__MPIP_STAT_MAX: number of counters; new ones are added before it
 */
enum mpip_stat {
	MPIP_STAT_UNSPEC,
	MPIP_STAT_TX_CM,
	MPIP_STAT_RX_CM,
	MPIP_STAT_TX_QUERY,
	MPIP_STAT_RX_QUERY,
	MPIP_STAT_TX_CONFIRM,
	MPIP_STAT_RX_CONFIRM,
	MPIP_STAT_RX_CTRL,
	MPIP_STAT_PROBE_GIVEUP,
	MPIP_STAT_PEER_LOST,
	MPIP_STAT_MSS_CLAMPED,
	MPIP_STAT_TX_GSO_SPLIT,
	MPIP_STAT_TX_NO_ROOM,
	MPIP_STAT_DROP_NOMEM,
	MPIP_STAT_TABLE_FULL,
	MPIP_STAT_RX_NOT_LOCAL,
	MPIP_STAT_SESSION_NEW,
	MPIP_STAT_SESSION_EXPIRED,
	MPIP_STAT_TX_REWRITE,
	MPIP_STAT_RX_RESTORE,
	MPIP_STAT_TX_FEEDBACK,
	MPIP_STAT_RX_FEEDBACK,
	MPIP_STAT_TX_HEARTBEAT,
	MPIP_STAT_RX_HEARTBEAT,
	MPIP_STAT_PATH_UP,
	MPIP_STAT_PATH_DOWN,
	MPIP_STAT_TX_IP_CHANGE,
	MPIP_STAT_RX_IP_CHANGE,
	MPIP_STAT_DROP_SESSION,
	MPIP_STAT_DROP_NOROUTE,
	MPIP_STAT_TX_GSO_KEPT,
	MPIP_STAT_RX_GSO_KEPT,
	MPIP_STAT_REORDER_HELD,
	MPIP_STAT_REORDER_IN_ORDER,
	MPIP_STAT_REORDER_TIMEOUT,
	MPIP_STAT_REORDER_OVERFLOW,
	MPIP_STAT_TX_BARE,
	MPIP_STAT_REORDER_LOST,
	MPIP_STAT_TX_STEERED,
	MPIP_STAT_RX_REASSEMBLED,
	MPIP_STAT_TX_POLICY_KEPT,
	MPIP_STAT_RX_ICMP_PMTU,
	MPIP_STAT_RX_SPOOFED,
	MPIP_STAT_RX_AUTH_FAIL,
	MPIP_STAT_RX_REPLAY,
	MPIP_STAT_RX_V1,
	MPIP_STAT_RR_VERIFIED,
	MPIP_STAT_CTRL_LIMITED,
	MPIP_STAT_RR_HELD,
	MPIP_STAT_RX_PLAIN,
	MPIP_STAT_RULE_DROPPED,
	MPIP_STAT_RX_DUP,
	MPIP_STAT_EVENT_DROP,
	MPIP_STAT_BACKUP_HOLD,
	MPIP_STAT_RR_NAT,
	MPIP_STAT_PATH_LEARNED,
	MPIP_STAT_TX_ENCAP,
	MPIP_STAT_RX_ENCAP,
	MPIP_STAT_RX_ENCAP_BAD,
	MPIP_STAT_TX_ENCAP_FRAG,
	MPIP_STAT_FTCP_CTRL,
	MPIP_STAT_FTCP_OPEN,
	MPIP_STAT_RX_GRO_UNOPENED,
	MPIP_STAT_TABLE_EVICT,
	MPIP_STAT_CTRL_BUDGET,
	MPIP_STAT_PATH_LOSSY,
	MPIP_STAT_RX_ENCAP_GRO,
	MPIP_STAT_RX_ICMP_REFUSED,
	MPIP_STAT_SESSION_UNPROVEN,
	MPIP_STAT_SESSION_RESYNC,
	MPIP_STAT_RX_PAIR_TAKEN,
	MPIP_STAT_TX_UNKNOWN,
	MPIP_STAT_TX_ENCAP_GSO,
	MPIP_STAT_TX_RESEND,
	MPIP_STAT_TX_PATH_MTU,

	__MPIP_STAT_MAX,
};

#define MPIP_STAT_MAX (__MPIP_STAT_MAX - 1)

/**
 * enum mpip_cfg - tunables nested in MPIP_A_CONFIG (u32 each)
 * @MPIP_CFG_UNSPEC: unused
 * @MPIP_CFG_QUERY_THRESHOLD: queries sent to a destination before it is
 *	marked unavailable (1..100, default 5)
 * @MPIP_CFG_PEER_TIMEOUT_MS: an available peer whose node left an MPIP
 *	packet that wants an answer unanswered, or sent nothing while no path
 *	to it was up, for this long is probed again (100..600000, default 3000)
 * @MPIP_CFG_AVAIL_TIMEOUT_MS: availability entries unused for this long are
 *	removed (1000..86400000, default 300000)
 * @MPIP_CFG_NODE_TIMEOUT_MS: node entries not heard from for this long are
 *	removed (1000..86400000, default 300000)
 * @MPIP_CFG_SESSION_TIMEOUT_MS: sessions without a packet for this long are
 *	removed (1000..86400000, default 120000)
 * @MPIP_CFG_WEIGHT_STEP: Algorithm 1 step S (1..1000, default 10)
 * @MPIP_CFG_WEIGHT_INTERVAL_MS: Algorithm 1 period T (10..10000,
 *	default 100)
 * @MPIP_CFG_HEARTBEAT_MS: heartbeat and probe interval (10..10000,
 *	default 300)
 * @MPIP_CFG_PATH_TIMEOUT_MS: a path that carried data but got no delay
 *	report for this long beyond the round trip of its reports and four
 *	times its deviation (at most 8 times this in all) goes down; each
 *	path's is its MPIP_PATH_A_TIMEOUT_MS (50..60000, default 500)
 * @MPIP_CFG_DELAY_SMOOTH_SHIFT: each delay report moves the smoothed delay
 *	by 1/2^shift of the difference (0..10, default 3)
 * @MPIP_CFG_TX_GSO: 1 to send a GSO packet whole, with one CM, where
 *	its route reaches the peer's stack without a wire (a veth), and the
 *	datagrams inside UDP (fake TCP) it is split into as one UDP (TCP)
 *	GSO packet; 0 to
 *	split every GSO packet in software and send its segments one by one
 *	(0..1, default 1)
 * @MPIP_CFG_REORDER: 1 to hold out-of-order TCP segments from MPIP peers in
 *	a per-session reorder buffer (0..1, default 1)
 * @MPIP_CFG_REORDER_MAX_PKTS: segments one reorder buffer holds at most
 *	(1..10000, default 1000)
 * @MPIP_CFG_REORDER_MAX_HOLD_MS: cap on how long a segment is held
 *	(1..10000, default 100); a gap ends sooner when the paths show it
 *	lost, by a packet sent after it or by their delays
 * @MPIP_CFG_WEIGHT_TREND_MS: Algorithm 1 compares each path's queueing
 *	delay extrapolated this far ahead along its trend since the last
 *	round; 0 compares the queueing delays themselves, as in the paper
 *	(0..10000, default 500)
 * @MPIP_CFG_WEIGHT_BOOST: until a node's weights first cross their
 *	balance, the Algorithm 1 step doubles each round in which the same
 *	paths gain while their queueing delays differ by 10 ms or more, up
 *	to S * 2^weight_boost; 0 keeps it at S, as in the paper (0..8,
 *	default 3)
 * @MPIP_CFG_BARE_CM_MS: on a peer's only path, a session's packets
 *	go without a CM, except its first 4, TCP segments with SYN, FIN,
 *	RST or URG, and one at least every this many milliseconds (capped
 *	at a quarter of path_timeout_ms) that carries the delay sample and
 *	reports; 0 puts a CM on every packet (0..1000, default 10)
 * @MPIP_CFG_QUEUE_STEER: 1 to send a data packet on the path whose
 *	device queue at this host holds the fewest bytes (plus one packet)
 *	per unit of path weight, instead of the one its weight chose, where
 *	the chosen path's queue is not empty, the device's qdisc tells its
 *	backlog and that path reports no higher queueing delay (0..1,
 *	default 1)
 * @MPIP_CFG_RULE_EVENT_PKTS: an event (MPIP_EVENT_RULE_HITS) each time
 *	a routing rule's packet count reaches a multiple of this, seen
 *	within a second; 0: none (0..1000000000, default 0)
 * @MPIP_CFG_NAT_MODE: how paths through a NAT carry data, enum
 *	mpip_nat_mode (default MPIP_NAT_MODE_AUTO)
 * @MPIP_CFG_CTRL_PPS: control packets the namespace sends per second at
 *	most, with a burst of a quarter of that (at least 4); those over it
 *	are not sent (MPIP_STAT_CTRL_BUDGET); 0: no limit (0..1000000,
 *	default 1000)
 * @MPIP_CFG_LOSS_PCT: the loss oracle's threshold, in percent: while data
 *	flows, each path up sends a probe per heartbeat that the peer
 *	answers, and a path that lost this share of its last 16 probes or
 *	more (8 at least known) is lossy: it carries data only while no
 *	path that is not lossy is up, until its share drops to half the
 *	threshold; 0: off (0..100, default 0)
 * @MPIP_CFG_WEIGHT_TIE_US: when the measured queueing delays of a node's
 *	paths all lie within this many microseconds of each other (no path
 *	queues more than the others), Algorithm 1 compares the paths'
 *	minimum one-way delays instead, differences below this counting as
 *	none: a flow that fills no path moves to the shortest; 0 compares
 *	the queueing delays always, as in the paper (0..100000, default
 *	2000)
 */
enum mpip_cfg {
	MPIP_CFG_UNSPEC,
	MPIP_CFG_QUERY_THRESHOLD,
	MPIP_CFG_PEER_TIMEOUT_MS,
	MPIP_CFG_AVAIL_TIMEOUT_MS,
	MPIP_CFG_NODE_TIMEOUT_MS,
	MPIP_CFG_SESSION_TIMEOUT_MS,
	MPIP_CFG_WEIGHT_STEP,
	MPIP_CFG_WEIGHT_INTERVAL_MS,
	MPIP_CFG_HEARTBEAT_MS,
	MPIP_CFG_PATH_TIMEOUT_MS,
	MPIP_CFG_DELAY_SMOOTH_SHIFT,
	MPIP_CFG_TX_GSO,
	MPIP_CFG_REORDER,
	MPIP_CFG_REORDER_MAX_PKTS,
	MPIP_CFG_REORDER_MAX_HOLD_MS,
	MPIP_CFG_WEIGHT_TREND_MS,
	MPIP_CFG_WEIGHT_BOOST,
	MPIP_CFG_BARE_CM_MS,
	MPIP_CFG_QUEUE_STEER,
	MPIP_CFG_RULE_EVENT_PKTS,
	MPIP_CFG_NAT_MODE,
	MPIP_CFG_CTRL_PPS,
	MPIP_CFG_LOSS_PCT,
	MPIP_CFG_WEIGHT_TIE_US,

	__MPIP_CFG_MAX,
};

/**
 * enum mpip_nat_mode - NAT traversal (MPIP_CFG_NAT_MODE)
 * @MPIP_NAT_MODE_AUTO: a path the peer saw come from a NAT's address or
 *	port carries its packets inside UDP; the others go as they are
 * @MPIP_NAT_MODE_NONE: paths through a NAT carry no data; flows keep
 *	their own addresses there
 * @MPIP_NAT_MODE_UDP: every path carries its packets inside UDP
 * @MPIP_NAT_MODE_FAKETCP: as MPIP_NAT_MODE_AUTO, but a path through a NAT
 *	carries its packets inside a TCP connection of its own (fake TCP)
 *	once that is open, inside UDP until then
 */
enum mpip_nat_mode {
	MPIP_NAT_MODE_AUTO,
	MPIP_NAT_MODE_NONE,
	MPIP_NAT_MODE_UDP,
	MPIP_NAT_MODE_FAKETCP,
};

#define MPIP_CFG_MAX (__MPIP_CFG_MAX - 1)

#endif /* _UAPI_LINUX_MPIP_H */
