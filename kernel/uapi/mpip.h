/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * mpip: multipath IP for end hosts -- generic netlink interface.
 *
 * Family name MPIP_GENL_NAME, version MPIP_GENL_VERSION.  Every command
 * acts on the network namespace of the calling socket.  Commands that
 * change state (marked "admin") need CAP_NET_ADMIN in the user namespace
 * that owns that network namespace; the others are open to everyone.
 *
 * Attributes are strictly validated: unknown attributes, wrong lengths
 * and out-of-range values are rejected with -EINVAL and an extack message.
 * Addresses are IPv4 in network byte order (NLA_BE32 / struct in_addr
 * layout); ports are in host byte order (NLA_U16).
 *
 * See Documentation/netlink.rst for examples.
 */
#ifndef _UAPI_LINUX_MPIP_H
#define _UAPI_LINUX_MPIP_H

#define MPIP_GENL_NAME		"mpip"
#define MPIP_GENL_VERSION	1

/**
 * enum mpip_cmd - generic netlink commands
 * @MPIP_CMD_UNSPEC: unused
 * @MPIP_CMD_GET_STATUS: doit.  Reply carries MPIP_A_ENABLED, MPIP_A_NODE_ID,
 *	MPIP_A_VERSION, MPIP_A_AVAIL_COUNT and MPIP_A_NODE_COUNT.
 * @MPIP_CMD_SET_STATUS: doit, admin.  Request carries MPIP_A_ENABLED (u8,
 *	0 or 1): switches MPIP off or on in the namespace.  Switching off
 *	flushes the availability and node tables.
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
 * @MPIP_CMD_FLUSH: doit, admin.  Empties the availability and node tables.
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

	__MPIP_CMD_MAX,
};

#define MPIP_CMD_MAX (__MPIP_CMD_MAX - 1)

/**
 * enum mpip_attr - top-level attributes
 * @MPIP_A_UNSPEC: unused
 * @MPIP_A_ENABLED: u8, 1 when MPIP is on in this namespace
 * @MPIP_A_NODE_ID: u32, this namespace's random node ID (never 0)
 * @MPIP_A_VERSION: string, module version
 * @MPIP_A_AVAIL_COUNT: u32, entries in the availability table
 * @MPIP_A_NODE_COUNT: u32, entries in the node table
 * @MPIP_A_AVAIL: nested, enum mpip_avail_attr
 * @MPIP_A_NODE: nested, enum mpip_node_attr
 * @MPIP_A_STATS: nested, enum mpip_stat (u64 each)
 * @MPIP_A_CONFIG: nested, enum mpip_cfg (u32 each)
 * @MPIP_A_PAD: reserved; the 64-bit counters inside MPIP_A_STATS are
 *	padded with MPIP_STAT_UNSPEC attributes, which readers skip
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

	__MPIP_A_MAX,
};

#define MPIP_A_MAX (__MPIP_A_MAX - 1)

/**
 * enum mpip_avail_state - MPIP availability of a remote (address, port)
 * @MPIP_AVAIL_PROBING: queries are being sent, no answer yet
 * @MPIP_AVAIL_YES: the remote runs MPIP (it answered, or it queried us)
 * @MPIP_AVAIL_NO: the query threshold was reached without an answer;
 *	no more queries until the entry expires
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
 * @MPIP_AVAIL_A_NODE_ID: u32, remote node ID, 0 while unknown
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
 * @MPIP_NODE_A_ID: u32, remote node ID
 * @MPIP_NODE_A_ENDPOINTS: nested; one MPIP_NODE_A_ENDPOINT per (address,
 *	port) that MPIP packets from this node were seen to come from
 * @MPIP_NODE_A_ENDPOINT: nested, enum mpip_ep_attr
 * @MPIP_NODE_A_ADDRS: nested; one MPIP_NODE_A_ADDR per address the node
 *	advertised in the address list of its control messages
 * @MPIP_NODE_A_ADDR: be32, one advertised address
 * @MPIP_NODE_A_AGE_MS: u32, milliseconds since the last packet from it
 */
enum mpip_node_attr {
	MPIP_NODE_A_UNSPEC,
	MPIP_NODE_A_ID,
	MPIP_NODE_A_ENDPOINTS,
	MPIP_NODE_A_ENDPOINT,
	MPIP_NODE_A_ADDRS,
	MPIP_NODE_A_ADDR,
	MPIP_NODE_A_AGE_MS,

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
 * @MPIP_STAT_PEER_LOST: available peers downgraded to probing because no
 *	MPIP packet came from them within peer_timeout_ms
 * @MPIP_STAT_MSS_CLAMPED: outgoing SYNs whose MSS option was reduced
 * @MPIP_STAT_TX_GSO_SPLIT: GSO packets split in software to carry trailers
 * @MPIP_STAT_TX_NO_ROOM: packets sent without a trailer because it would
 *	not fit in the route MTU
 * @MPIP_STAT_DROP_NOMEM: packets or control messages dropped for lack of
 *	memory
 * @MPIP_STAT_TABLE_FULL: table entries not created because a table was full
 * @MPIP_STAT_RX_NOT_LOCAL: valid trailers left in place because the packet
 *	was not addressed to this host
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

	__MPIP_STAT_MAX,
};

#define MPIP_STAT_MAX (__MPIP_STAT_MAX - 1)

/**
 * enum mpip_cfg - tunables nested in MPIP_A_CONFIG (u32 each)
 * @MPIP_CFG_UNSPEC: unused
 * @MPIP_CFG_QUERY_THRESHOLD: queries sent to a destination before it is
 *	marked unavailable (1..100, default 5)
 * @MPIP_CFG_PEER_TIMEOUT_MS: an available TCP peer from which no MPIP packet
 *	arrived for this long is probed again (100..600000, default 3000)
 * @MPIP_CFG_AVAIL_TIMEOUT_MS: availability entries unused for this long are
 *	removed (1000..86400000, default 300000)
 * @MPIP_CFG_NODE_TIMEOUT_MS: node entries not heard from for this long are
 *	removed (1000..86400000, default 300000)
 */
enum mpip_cfg {
	MPIP_CFG_UNSPEC,
	MPIP_CFG_QUERY_THRESHOLD,
	MPIP_CFG_PEER_TIMEOUT_MS,
	MPIP_CFG_AVAIL_TIMEOUT_MS,
	MPIP_CFG_NODE_TIMEOUT_MS,

	__MPIP_CFG_MAX,
};

#define MPIP_CFG_MAX (__MPIP_CFG_MAX - 1)

#endif /* _UAPI_LINUX_MPIP_H */
