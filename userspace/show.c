// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: "show avail", "show nodes", "show sessions" and "show paths",
 * dumps of the four tables, and "show links", the interfaces' settings.
 *
 * Entries are collected into a table (text) or a memory stream (JSON) and
 * printed only once the dump completed, so a failure never leaves half a
 * listing on stdout.
 */
#define _GNU_SOURCE		/* open_memstream */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "mpipctl.h"

struct out {
	bool json;
	struct json j;
	struct table t;
	char *buf;		/* JSON text */
	size_t len;
};

const char *fmt_addr(uint32_t be_addr, char *buf, size_t len)
{
	struct in_addr a = { .s_addr = be_addr };

	return inet_ntop(AF_INET, &a, buf, len);
}

/* "ADDR:PORT"; @port in host byte order */
const char *fmt_endpoint(uint32_t be_addr, uint16_t port, char *buf,
			 size_t len)
{
	char a[INET_ADDRSTRLEN];

	fmt_addr(be_addr, a, sizeof(a));
	snprintf(buf, len, "%s:%u", a, port);
	return buf;
}

const char *fmt_node_id(uint32_t id, char *buf, size_t len)
{
	snprintf(buf, len, "0x%08x", id);
	return buf;
}

/*
 * Enumerated values print as their names, or as their number for one
 * this mpipctl does not know; in JSON always as a string, so that a
 * value's type never depends on the value.
 */
static const char *state_name(uint8_t state, char *buf, size_t len)
{
	static const char *const names[] = {
		[MPIP_AVAIL_PROBING]	= "probing",
		[MPIP_AVAIL_YES]	= "yes",
		[MPIP_AVAIL_NO]		= "no",
	};

	if (state < sizeof(names) / sizeof(names[0]))
		return names[state];
	snprintf(buf, len, "%u", state);
	return buf;
}

const char *proto_name(uint8_t proto, char *buf, size_t len)
{
	if (proto == IPPROTO_TCP)
		return "tcp";
	if (proto == IPPROTO_UDP)
		return "udp";
	snprintf(buf, len, "%u", proto);
	return buf;
}

static uint8_t get_u8(struct nlattr *a)
{
	return a ? nla_get_u8(a) : 0;
}

static uint16_t get_u16(struct nlattr *a)
{
	return a ? nla_get_u16(a) : 0;
}

static uint32_t get_u32(struct nlattr *a)
{
	return a ? nla_get_u32(a) : 0;
}

static uint64_t get_u64(struct nlattr *a)
{
	return a ? nla_get_u64(a) : 0;
}

/* @a's value, or null if the module sent none */
static void json_opt_u32(struct json *j, struct nlattr *a)
{
	if (a)
		json_uint(j, nla_get_u32(a));
	else
		json_null(j);
}

/* "12.345s" */
static const char *fmt_age(uint32_t ms, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%03us", ms / 1000, ms % 1000);
	return buf;
}

static int out_begin(struct out *o, bool json, int ncols, const char *align,
		     const char *const *header)
{
	memset(o, 0, sizeof(*o));
	o->json = json;
	if (!json) {
		table_init(&o->t, ncols, align, header);
		return 0;
	}
	json_init(&o->j, open_memstream(&o->buf, &o->len));
	if (!o->j.f) {
		err_msg("out of memory");
		return -1;
	}
	json_arr_begin(&o->j);
	return 0;
}

/* Print what was collected if @status is success; free it in any case. */
static int out_end(struct out *o, int status)
{
	if (!o->json) {
		if (status == EXIT_OK)
			table_print(&o->t, stdout);
		table_free(&o->t);
		return status;
	}
	json_arr_end(&o->j);
	json_finish(&o->j);
	if (fclose(o->j.f) != 0) {
		err_msg("out of memory");
		status = EXIT_FAIL;
	}
	if (status == EXIT_OK)
		fwrite(o->buf, 1, o->len, stdout);
	free(o->buf);
	return status;
}

static struct nla_policy avail_policy[MPIP_AVAIL_A_MAX + 1] = {
	[MPIP_AVAIL_A_ADDR]	= { .type = NLA_U32 },
	[MPIP_AVAIL_A_PORT]	= { .type = NLA_U16 },
	[MPIP_AVAIL_A_PROTO]	= { .type = NLA_U8 },
	[MPIP_AVAIL_A_STATE]	= { .type = NLA_U8 },
	[MPIP_AVAIL_A_QUERIES]	= { .type = NLA_U32 },
	[MPIP_AVAIL_A_NODE_ID]	= { .type = NLA_U32 },
	[MPIP_AVAIL_A_AGE_MS]	= { .type = NLA_U32 },
};

static int avail_entry(struct nlattr **top, void *arg)
{
	struct nlattr *tb[MPIP_AVAIL_A_MAX + 1];
	char addr[INET_ADDRSTRLEN], sbuf[8], pbuf[8], idbuf[16];
	const char *state, *proto;
	struct out *o = arg;
	uint32_t node, age;

	if (!top[MPIP_A_AVAIL] ||
	    nla_parse_nested(tb, MPIP_AVAIL_A_MAX, top[MPIP_A_AVAIL],
			     avail_policy) < 0 ||
	    !tb[MPIP_AVAIL_A_ADDR] || !tb[MPIP_AVAIL_A_PORT] ||
	    !tb[MPIP_AVAIL_A_PROTO] || !tb[MPIP_AVAIL_A_STATE])
		return -1;

	fmt_addr(nla_get_u32(tb[MPIP_AVAIL_A_ADDR]), addr, sizeof(addr));
	state = state_name(nla_get_u8(tb[MPIP_AVAIL_A_STATE]), sbuf,
			   sizeof(sbuf));
	proto = proto_name(nla_get_u8(tb[MPIP_AVAIL_A_PROTO]), pbuf,
			   sizeof(pbuf));
	node = get_u32(tb[MPIP_AVAIL_A_NODE_ID]);
	age = get_u32(tb[MPIP_AVAIL_A_AGE_MS]);

	if (!o->json) {
		table_cell(&o->t, "%s", addr);
		table_cell(&o->t, "%u", nla_get_u16(tb[MPIP_AVAIL_A_PORT]));
		table_cell(&o->t, "%s", proto);
		table_cell(&o->t, "%s", state);
		table_cell(&o->t, "%u", get_u32(tb[MPIP_AVAIL_A_QUERIES]));
		table_cell(&o->t, "%s",
			   node ? fmt_node_id(node, idbuf, sizeof(idbuf)) : "-");
		table_cell(&o->t, "%u.%03us", age / 1000, age % 1000);
		return 0;
	}

	json_obj_begin(&o->j);
	json_key(&o->j, "addr");
	json_str(&o->j, addr);
	json_key(&o->j, "port");
	json_uint(&o->j, nla_get_u16(tb[MPIP_AVAIL_A_PORT]));
	json_key(&o->j, "proto");
	json_str(&o->j, proto);
	json_key(&o->j, "state");
	json_str(&o->j, state);
	json_key(&o->j, "queries");
	json_uint(&o->j, get_u32(tb[MPIP_AVAIL_A_QUERIES]));
	json_key(&o->j, "node_id");
	if (node)
		json_str(&o->j, fmt_node_id(node, idbuf, sizeof(idbuf)));
	else
		json_null(&o->j);
	json_key(&o->j, "age_ms");
	json_uint(&o->j, age);
	json_obj_end(&o->j);
	return 0;
}

struct nla_policy node_policy[MPIP_NODE_A_MAX + 1] = {
	[MPIP_NODE_A_ID]	= { .type = NLA_U32 },
	[MPIP_NODE_A_ENDPOINTS]	= { .type = NLA_NESTED },
	[MPIP_NODE_A_ADDRS]	= { .type = NLA_NESTED },
	[MPIP_NODE_A_AGE_MS]	= { .type = NLA_U32 },
	[MPIP_NODE_A_PEER_ID]	= { .type = NLA_U32 },
	[MPIP_NODE_A_VERIFIED]	= { .type = NLA_U8 },
	[MPIP_NODE_A_TIER]	= { .type = NLA_U8 },
};

static struct nla_policy ep_policy[MPIP_EP_A_MAX + 1] = {
	[MPIP_EP_A_ADDR]	= { .type = NLA_U32 },
	[MPIP_EP_A_PORT]	= { .type = NLA_U16 },
};

/*
 * Walk the MPIP_NODE_A_ENDPOINT entries of @eps: append "addr:port,..." to
 * @s (text) or an array of {addr, port} objects to @j (JSON).
 */
static int node_endpoints(struct nlattr *eps, char **s, struct json *j)
{
	char addr[INET_ADDRSTRLEN];
	struct nlattr *ep;
	int rem;

	if (j)
		json_arr_begin(j);
	if (eps) {
		nla_for_each_nested(ep, eps, rem) {
			struct nlattr *tb[MPIP_EP_A_MAX + 1];
			uint16_t port;

			if (nla_type(ep) != MPIP_NODE_A_ENDPOINT ||
			    nla_parse_nested(tb, MPIP_EP_A_MAX, ep,
					     ep_policy) < 0 ||
			    !tb[MPIP_EP_A_ADDR] || !tb[MPIP_EP_A_PORT])
				return -1;
			fmt_addr(nla_get_u32(tb[MPIP_EP_A_ADDR]), addr,
				 sizeof(addr));
			port = nla_get_u16(tb[MPIP_EP_A_PORT]);
			if (j) {
				json_obj_begin(j);
				json_key(j, "addr");
				json_str(j, addr);
				json_key(j, "port");
				json_uint(j, port);
				json_obj_end(j);
			} else {
				char *n;

				if (asprintf(&n, "%s%s%s:%u", *s ? *s : "",
					     *s ? "," : "", addr, port) < 0)
					return -1;
				free(*s);
				*s = n;
			}
		}
	}
	if (j)
		json_arr_end(j);
	return 0;
}

/* Same for the MPIP_NODE_A_ADDR entries of @addrs. */
static int node_addrs(struct nlattr *addrs, char **s, struct json *j)
{
	char addr[INET_ADDRSTRLEN];
	struct nlattr *a;
	int rem;

	if (j)
		json_arr_begin(j);
	if (addrs) {
		nla_for_each_nested(a, addrs, rem) {
			if (nla_type(a) != MPIP_NODE_A_ADDR ||
			    nla_len(a) != sizeof(uint32_t))
				return -1;
			fmt_addr(nla_get_u32(a), addr, sizeof(addr));
			if (j) {
				json_str(j, addr);
			} else {
				char *n;

				if (asprintf(&n, "%s%s%s", *s ? *s : "",
					     *s ? "," : "", addr) < 0)
					return -1;
				free(*s);
				*s = n;
			}
		}
	}
	if (j)
		json_arr_end(j);
	return 0;
}

static int node_entry(struct nlattr **top, void *arg)
{
	struct nlattr *tb[MPIP_NODE_A_MAX + 1];
	char *eps = NULL, *addrs = NULL, idbuf[16], peerbuf[16];
	struct out *o = arg;
	uint32_t age, peer;
	bool verified;
	int ret;

	if (!top[MPIP_A_NODE] ||
	    nla_parse_nested(tb, MPIP_NODE_A_MAX, top[MPIP_A_NODE],
			     node_policy) < 0 ||
	    !tb[MPIP_NODE_A_ID])
		return -1;
	fmt_node_id(nla_get_u32(tb[MPIP_NODE_A_ID]), idbuf, sizeof(idbuf));
	peer = get_u32(tb[MPIP_NODE_A_PEER_ID]);
	fmt_node_id(peer, peerbuf, sizeof(peerbuf));
	verified = tb[MPIP_NODE_A_VERIFIED] &&
		   nla_get_u8(tb[MPIP_NODE_A_VERIFIED]);
	age = get_u32(tb[MPIP_NODE_A_AGE_MS]);

	if (o->json) {
		/*
		 * A malformed entry makes the whole command fail, so a
		 * half-written object in the buffer is never printed.
		 */
		json_obj_begin(&o->j);
		json_key(&o->j, "node_id");
		json_str(&o->j, idbuf);
		json_key(&o->j, "peer_id");
		if (peer)
			json_str(&o->j, peerbuf);
		else
			json_null(&o->j);
		json_key(&o->j, "verified");
		json_bool(&o->j, verified);
		json_key(&o->j, "endpoints");
		if (node_endpoints(tb[MPIP_NODE_A_ENDPOINTS], NULL, &o->j) < 0)
			return -1;
		json_key(&o->j, "addrs");
		if (node_addrs(tb[MPIP_NODE_A_ADDRS], NULL, &o->j) < 0)
			return -1;
		json_key(&o->j, "age_ms");
		json_uint(&o->j, age);
		json_obj_end(&o->j);
		return 0;
	}

	ret = -1;
	if (node_endpoints(tb[MPIP_NODE_A_ENDPOINTS], &eps, NULL) == 0 &&
	    node_addrs(tb[MPIP_NODE_A_ADDRS], &addrs, NULL) == 0) {
		table_cell(&o->t, "%s", idbuf);
		table_cell(&o->t, "%s", peer ? peerbuf : "-");
		table_cell(&o->t, "%s", verified ? "yes" : "no");
		table_cell(&o->t, "%s", eps ? eps : "-");
		table_cell(&o->t, "%s", addrs ? addrs : "-");
		table_cell(&o->t, "%u.%03us", age / 1000, age % 1000);
		ret = 0;
	}
	free(eps);
	free(addrs);
	return ret;
}

/*
 * The session and path attributes have fixed sizes: anything else is a
 * malformed reply (libnl only checks a minimum length on its own).
 */

static struct nla_policy session_policy[MPIP_SESSION_A_MAX + 1] = {
	[MPIP_SESSION_A_NODE_ID]	= ATTR(NLA_U32, 4),
	[MPIP_SESSION_A_ID]		= ATTR(NLA_U16, 2),
	[MPIP_SESSION_A_PROTO]		= ATTR(NLA_U8, 1),
	[MPIP_SESSION_A_LADDR]		= ATTR(NLA_U32, 4),
	[MPIP_SESSION_A_LPORT]		= ATTR(NLA_U16, 2),
	[MPIP_SESSION_A_RADDR]		= ATTR(NLA_U32, 4),
	[MPIP_SESSION_A_RPORT]		= ATTR(NLA_U16, 2),
	[MPIP_SESSION_A_CONFIRMED]	= ATTR(NLA_U8, 1),
	[MPIP_SESSION_A_AGE_MS]		= ATTR(NLA_U32, 4),
	[MPIP_SESSION_A_TX_PKTS]	= ATTR(NLA_U64, 8),
	[MPIP_SESSION_A_RX_PKTS]	= ATTR(NLA_U64, 8),
};

/*
 * The node ID, session ID, protocol and original addresses and ports
 * identify a session and must be present; the rest defaults to 0.
 */
static int session_entry(struct nlattr **top, void *arg)
{
	struct nlattr *tb[MPIP_SESSION_A_MAX + 1];
	char laddr[INET_ADDRSTRLEN], raddr[INET_ADDRSTRLEN];
	char idbuf[16], pbuf[8], abuf[24];
	uint16_t lport, rport;
	struct out *o = arg;
	const char *proto;
	uint8_t confirmed;
	uint32_t age;

	if (!top[MPIP_A_SESSION] ||
	    nla_parse_nested(tb, MPIP_SESSION_A_MAX, top[MPIP_A_SESSION],
			     session_policy) < 0 ||
	    !tb[MPIP_SESSION_A_NODE_ID] || !tb[MPIP_SESSION_A_ID] ||
	    !tb[MPIP_SESSION_A_PROTO] ||
	    !tb[MPIP_SESSION_A_LADDR] || !tb[MPIP_SESSION_A_LPORT] ||
	    !tb[MPIP_SESSION_A_RADDR] || !tb[MPIP_SESSION_A_RPORT])
		return -1;

	fmt_node_id(nla_get_u32(tb[MPIP_SESSION_A_NODE_ID]), idbuf,
		    sizeof(idbuf));
	proto = proto_name(nla_get_u8(tb[MPIP_SESSION_A_PROTO]), pbuf,
			   sizeof(pbuf));
	fmt_addr(nla_get_u32(tb[MPIP_SESSION_A_LADDR]), laddr, sizeof(laddr));
	fmt_addr(nla_get_u32(tb[MPIP_SESSION_A_RADDR]), raddr, sizeof(raddr));
	lport = nla_get_u16(tb[MPIP_SESSION_A_LPORT]);
	rport = nla_get_u16(tb[MPIP_SESSION_A_RPORT]);
	confirmed = get_u8(tb[MPIP_SESSION_A_CONFIRMED]);
	age = get_u32(tb[MPIP_SESSION_A_AGE_MS]);

	if (!o->json) {
		table_cell(&o->t, "%s", idbuf);
		table_cell(&o->t, "%u", nla_get_u16(tb[MPIP_SESSION_A_ID]));
		table_cell(&o->t, "%s", proto);
		table_cell(&o->t, "%s:%u", laddr, lport);
		table_cell(&o->t, "%s:%u", raddr, rport);
		table_cell(&o->t, "%s", confirmed ? "yes" : "no");
		table_cell(&o->t, "%s", fmt_age(age, abuf, sizeof(abuf)));
		table_cell(&o->t, "%llu", (unsigned long long)
			   get_u64(tb[MPIP_SESSION_A_TX_PKTS]));
		table_cell(&o->t, "%llu", (unsigned long long)
			   get_u64(tb[MPIP_SESSION_A_RX_PKTS]));
		return 0;
	}

	json_obj_begin(&o->j);
	json_key(&o->j, "node_id");
	json_str(&o->j, idbuf);
	json_key(&o->j, "id");
	json_uint(&o->j, nla_get_u16(tb[MPIP_SESSION_A_ID]));
	json_key(&o->j, "proto");
	json_str(&o->j, proto);
	json_key(&o->j, "laddr");
	json_str(&o->j, laddr);
	json_key(&o->j, "lport");
	json_uint(&o->j, lport);
	json_key(&o->j, "raddr");
	json_str(&o->j, raddr);
	json_key(&o->j, "rport");
	json_uint(&o->j, rport);
	json_key(&o->j, "confirmed");
	json_bool(&o->j, confirmed);
	json_key(&o->j, "age_ms");
	json_uint(&o->j, age);
	json_key(&o->j, "tx_pkts");
	json_uint(&o->j, get_u64(tb[MPIP_SESSION_A_TX_PKTS]));
	json_key(&o->j, "rx_pkts");
	json_uint(&o->j, get_u64(tb[MPIP_SESSION_A_RX_PKTS]));
	json_obj_end(&o->j);
	return 0;
}

const char *path_state_name(uint8_t state, char *buf, size_t len)
{
	static const char *const names[] = {
		[MPIP_PATH_NOROUTE]	= "noroute",
		[MPIP_PATH_PROBING]	= "probing",
		[MPIP_PATH_UP]		= "up",
		[MPIP_PATH_DOWN]	= "down",
	};

	if (state < sizeof(names) / sizeof(names[0]))
		return names[state];
	snprintf(buf, len, "%u", state);
	return buf;
}

struct nla_policy path_policy[MPIP_PATH_A_MAX + 1] = {
	[MPIP_PATH_A_NODE_ID]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_ID]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_SADDR]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_DADDR]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_IFINDEX]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_STATE]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_WEIGHT]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_HAVE_DELAY]	= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_MIN_DELAY_US]	= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_DELAY_US]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_QDELAY_US]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_MAX_QDELAY_US]	= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_TX_PKTS]		= ATTR(NLA_U64, 8),
	[MPIP_PATH_A_TX_BYTES]		= ATTR(NLA_U64, 8),
	[MPIP_PATH_A_RX_PKTS]		= ATTR(NLA_U64, 8),
	[MPIP_PATH_A_RX_BYTES]		= ATTR(NLA_U64, 8),
	[MPIP_PATH_A_FEEDBACK]		= ATTR(NLA_U64, 8),
	[MPIP_PATH_A_FB_AGE_MS]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_VERIFIED]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_NAT]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_SEEN_ADDR]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_SEEN_PORT]		= ATTR(NLA_U16, 2),
	[MPIP_PATH_A_ENCAP]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_DPORT]		= ATTR(NLA_U16, 2),
	[MPIP_PATH_A_LEARNED]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_TIER]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_METERED]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_LOSS_PCT]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_LOSSY]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_COLD]		= ATTR(NLA_U8, 1),
	[MPIP_PATH_A_RTT_US]		= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_TIMEOUT_MS]	= ATTR(NLA_U32, 4),
	[MPIP_PATH_A_MTU]		= ATTR(NLA_U32, 4),
};

#define FB_AGE_NEVER	0xffffffffu

/* Table columns after the delays: counters, in this order. */
static const int path_counters[] = {
	MPIP_PATH_A_TX_PKTS, MPIP_PATH_A_TX_BYTES,
	MPIP_PATH_A_RX_PKTS, MPIP_PATH_A_RX_BYTES,
	MPIP_PATH_A_FEEDBACK,
};

static const char *const path_counter_keys[] = {
	"tx_pkts", "tx_bytes", "rx_pkts", "rx_bytes", "feedback",
};

/* And the delays, with their JSON keys. */
static const int path_delays[] = {
	MPIP_PATH_A_MIN_DELAY_US, MPIP_PATH_A_DELAY_US,
	MPIP_PATH_A_QDELAY_US, MPIP_PATH_A_MAX_QDELAY_US,
};

static const char *const path_delay_keys[] = {
	"min_delay_us", "delay_us", "qdelay_us", "max_qdelay_us",
};

/*
 * "ADDR:PORT" the peer saw the path's probes come from into @buf, or ""
 * if it has not answered one.
 */
void fmt_path_seen(struct nlattr **tb, char *buf, size_t len)
{
	buf[0] = 0;
	if (tb[MPIP_PATH_A_SEEN_ADDR])
		fmt_endpoint(nla_get_u32(tb[MPIP_PATH_A_SEEN_ADDR]),
			     get_u16(tb[MPIP_PATH_A_SEEN_PORT]), buf, len);
}

/*
 * The node ID, path ID, addresses and state identify a path and must be
 * present.  A missing interface index gives no device name; a missing
 * feedback age reads as "never"; the rest defaults to 0.
 */
static int path_entry(struct nlattr **top, void *arg)
{
	struct nlattr *tb[MPIP_PATH_A_MAX + 1];
	char saddr[INET_ADDRSTRLEN], daddr[INET_ADDRSTRLEN];
	char idbuf[16], sbuf[8], abuf[24], devbuf[IF_NAMESIZE], seen[24];
	const char *state, *dev = NULL, *encap;
	uint32_t ifindex, fb_age;
	uint8_t have_delay, learned;
	struct out *o = arg;
	size_t i;

	if (!top[MPIP_A_PATH] ||
	    nla_parse_nested(tb, MPIP_PATH_A_MAX, top[MPIP_A_PATH],
			     path_policy) < 0 ||
	    !tb[MPIP_PATH_A_NODE_ID] || !tb[MPIP_PATH_A_ID] ||
	    !tb[MPIP_PATH_A_SADDR] || !tb[MPIP_PATH_A_DADDR] ||
	    !tb[MPIP_PATH_A_STATE])
		return -1;

	fmt_node_id(nla_get_u32(tb[MPIP_PATH_A_NODE_ID]), idbuf,
		    sizeof(idbuf));
	fmt_addr(nla_get_u32(tb[MPIP_PATH_A_SADDR]), saddr, sizeof(saddr));
	fmt_addr(nla_get_u32(tb[MPIP_PATH_A_DADDR]), daddr, sizeof(daddr));
	state = path_state_name(nla_get_u8(tb[MPIP_PATH_A_STATE]), sbuf,
				sizeof(sbuf));
	ifindex = get_u32(tb[MPIP_PATH_A_IFINDEX]);
	if (ifindex)
		dev = if_indextoname(ifindex, devbuf);
	have_delay = get_u8(tb[MPIP_PATH_A_HAVE_DELAY]);
	fb_age = tb[MPIP_PATH_A_FB_AGE_MS] ?
		 nla_get_u32(tb[MPIP_PATH_A_FB_AGE_MS]) : FB_AGE_NEVER;
	fmt_path_seen(tb, seen, sizeof(seen));
	learned = get_u8(tb[MPIP_PATH_A_LEARNED]);
	switch (get_u8(tb[MPIP_PATH_A_ENCAP])) {
	case 0:
		encap = "none";
		break;
	case 1:
		encap = "udp";
		break;
	default:
		encap = "faketcp";
	}

	if (!o->json) {
		table_cell(&o->t, "%s", idbuf);
		table_cell(&o->t, "%u", nla_get_u8(tb[MPIP_PATH_A_ID]));
		table_cell(&o->t, "%s", saddr);
		/* a learned path's end is a NAT's address and port */
		if (learned)
			table_cell(&o->t, "%s:%u", daddr,
				   get_u16(tb[MPIP_PATH_A_DPORT]));
		else
			table_cell(&o->t, "%s", daddr);
		if (dev)
			table_cell(&o->t, "%s", dev);
		else if (ifindex)
			table_cell(&o->t, "#%u", ifindex);
		else
			table_cell(&o->t, "-");
		table_cell(&o->t, "%s", state);
		table_cell(&o->t, "%u", get_u32(tb[MPIP_PATH_A_WEIGHT]));
		for (i = 0; i < sizeof(path_delays) / sizeof(path_delays[0]); i++) {
			if (have_delay)
				table_cell(&o->t, "%u",
					   get_u32(tb[path_delays[i]]));
			else
				table_cell(&o->t, "-");
		}
		for (i = 0; i < sizeof(path_counters) / sizeof(path_counters[0]); i++)
			table_cell(&o->t, "%llu", (unsigned long long)
				   get_u64(tb[path_counters[i]]));
		table_cell(&o->t, "%s", fb_age == FB_AGE_NEVER ? "-" :
			   fmt_age(fb_age, abuf, sizeof(abuf)));
		table_cell(&o->t, "%s", get_u8(tb[MPIP_PATH_A_NAT]) ? "nat" :
			   get_u8(tb[MPIP_PATH_A_VERIFIED]) ? "yes" : "no");
		table_cell(&o->t, "%s", seen[0] ? seen : "-");
		table_cell(&o->t, "%s", encap);
		table_cell(&o->t, "%u", get_u8(tb[MPIP_PATH_A_TIER]));
		/* a cold standby is metered */
		table_cell(&o->t, "%s", get_u8(tb[MPIP_PATH_A_COLD]) ? "cold" :
			   get_u8(tb[MPIP_PATH_A_METERED]) ? "yes" : "no");
		table_cell(&o->t, "%u%%%s", get_u8(tb[MPIP_PATH_A_LOSS_PCT]),
			   get_u8(tb[MPIP_PATH_A_LOSSY]) ? " lossy" : "");
		if (tb[MPIP_PATH_A_RTT_US])
			table_cell(&o->t, "%u",
				   nla_get_u32(tb[MPIP_PATH_A_RTT_US]));
		else
			table_cell(&o->t, "-");
		if (tb[MPIP_PATH_A_TIMEOUT_MS])
			table_cell(&o->t, "%s",
				   fmt_age(nla_get_u32(tb[MPIP_PATH_A_TIMEOUT_MS]),
					   abuf, sizeof(abuf)));
		else
			table_cell(&o->t, "-");
		if (tb[MPIP_PATH_A_MTU])
			table_cell(&o->t, "%u", nla_get_u32(tb[MPIP_PATH_A_MTU]));
		else
			table_cell(&o->t, "-");
		return 0;
	}

	json_obj_begin(&o->j);
	json_key(&o->j, "node_id");
	json_str(&o->j, idbuf);
	json_key(&o->j, "id");
	json_uint(&o->j, nla_get_u8(tb[MPIP_PATH_A_ID]));
	json_key(&o->j, "saddr");
	json_str(&o->j, saddr);
	json_key(&o->j, "daddr");
	json_str(&o->j, daddr);
	json_key(&o->j, "ifindex");
	json_uint(&o->j, ifindex);
	json_key(&o->j, "dev");
	if (dev)
		json_str(&o->j, dev);
	else
		json_null(&o->j);
	json_key(&o->j, "state");
	json_str(&o->j, state);
	json_key(&o->j, "weight");
	json_uint(&o->j, get_u32(tb[MPIP_PATH_A_WEIGHT]));
	json_key(&o->j, "have_delay");
	json_bool(&o->j, have_delay);
	for (i = 0; i < sizeof(path_delays) / sizeof(path_delays[0]); i++) {
		json_key(&o->j, path_delay_keys[i]);
		json_uint(&o->j, get_u32(tb[path_delays[i]]));
	}
	for (i = 0; i < sizeof(path_counters) / sizeof(path_counters[0]); i++) {
		json_key(&o->j, path_counter_keys[i]);
		json_uint(&o->j, get_u64(tb[path_counters[i]]));
	}
	json_key(&o->j, "fb_age_ms");
	if (fb_age == FB_AGE_NEVER)
		json_null(&o->j);
	else
		json_uint(&o->j, fb_age);
	json_key(&o->j, "verified");
	json_bool(&o->j, get_u8(tb[MPIP_PATH_A_VERIFIED]));
	json_key(&o->j, "nat");
	json_bool(&o->j, get_u8(tb[MPIP_PATH_A_NAT]));
	json_key(&o->j, "seen");
	if (seen[0])
		json_str(&o->j, seen);
	else
		json_null(&o->j);
	json_key(&o->j, "encap");
	json_str(&o->j, encap);
	json_key(&o->j, "dport");
	json_uint(&o->j, get_u16(tb[MPIP_PATH_A_DPORT]));
	json_key(&o->j, "learned");
	json_bool(&o->j, learned);
	json_key(&o->j, "tier");
	json_uint(&o->j, get_u8(tb[MPIP_PATH_A_TIER]));
	json_key(&o->j, "metered");
	json_bool(&o->j, get_u8(tb[MPIP_PATH_A_METERED]));
	json_key(&o->j, "loss_pct");
	json_uint(&o->j, get_u8(tb[MPIP_PATH_A_LOSS_PCT]));
	json_key(&o->j, "lossy");
	json_bool(&o->j, get_u8(tb[MPIP_PATH_A_LOSSY]));
	json_key(&o->j, "cold");
	json_bool(&o->j, get_u8(tb[MPIP_PATH_A_COLD]));
	json_key(&o->j, "rtt_us");
	json_opt_u32(&o->j, tb[MPIP_PATH_A_RTT_US]);
	json_key(&o->j, "timeout_ms");
	json_opt_u32(&o->j, tb[MPIP_PATH_A_TIMEOUT_MS]);
	json_key(&o->j, "mtu");
	json_opt_u32(&o->j, tb[MPIP_PATH_A_MTU]);
	json_obj_end(&o->j);
	return 0;
}

static struct nla_policy link_policy[MPIP_LINK_A_MAX + 1] = {
	[MPIP_LINK_A_IFINDEX]	= { .type = NLA_U32 },
	[MPIP_LINK_A_NAME]	= { .type = NLA_STRING },
	[MPIP_LINK_A_ADVERTISE]	= { .type = NLA_U8 },
	[MPIP_LINK_A_BACKUP]	= { .type = NLA_U8 },
	[MPIP_LINK_A_NAT]	= { .type = NLA_U8 },
	[MPIP_LINK_A_TIER]	= { .type = NLA_U8 },
	[MPIP_LINK_A_METERED]	= { .type = NLA_U8 },
};

/*
 * The names of enum mpip_link_nat; from MPIP_LINK_NAT_AUTO on, those of
 * enum mpip_nat_mode in the same order (the module relies on it too).
 */
static const char *const link_nat_names[] = {
	[MPIP_LINK_NAT_DEFAULT] = "default",
	[MPIP_LINK_NAT_AUTO] = "auto",
	[MPIP_LINK_NAT_NONE] = "none",
	[MPIP_LINK_NAT_UDP] = "udp",
	[MPIP_LINK_NAT_FAKETCP] = "faketcp",
};

#define LINK_NAT_COUNT	(sizeof(link_nat_names) / sizeof(link_nat_names[0]))

int link_nat_lookup(const char *s)
{
	unsigned int i;

	for (i = 0; i < LINK_NAT_COUNT; i++)
		if (strcmp(s, link_nat_names[i]) == 0)
			return (int)i;
	return -1;
}

/* The name of enum mpip_link_nat @v (a number it does not know). */
static const char *link_nat_name(unsigned int v, char *buf, size_t len)
{
	if (v < LINK_NAT_COUNT)
		return link_nat_names[v];
	snprintf(buf, len, "%u", v);
	return buf;
}

static int link_entry(struct nlattr **top, void *arg)
{
	struct nlattr *tb[MPIP_LINK_A_MAX + 1];
	const char *name, *nat;
	struct out *o = arg;
	char natbuf[12];
	bool adv, backup, metered;
	unsigned int tier;

	if (!top[MPIP_A_LINK] ||
	    nla_parse_nested(tb, MPIP_LINK_A_MAX, top[MPIP_A_LINK],
			     link_policy) < 0 ||
	    !tb[MPIP_LINK_A_IFINDEX] || !tb[MPIP_LINK_A_NAME] ||
	    !tb[MPIP_LINK_A_ADVERTISE])
		return -1;
	name = nla_get_string(tb[MPIP_LINK_A_NAME]);
	adv = nla_get_u8(tb[MPIP_LINK_A_ADVERTISE]);
	/* absent from a module without backup links, or NAT traversal */
	backup = tb[MPIP_LINK_A_BACKUP] && nla_get_u8(tb[MPIP_LINK_A_BACKUP]);
	/* and without tiers: a backup link's is 1 */
	tier = tb[MPIP_LINK_A_TIER] ? nla_get_u8(tb[MPIP_LINK_A_TIER]) : backup;
	metered = tb[MPIP_LINK_A_METERED] && nla_get_u8(tb[MPIP_LINK_A_METERED]);
	nat = link_nat_name(tb[MPIP_LINK_A_NAT] ?
			    nla_get_u8(tb[MPIP_LINK_A_NAT]) : 0,
			    natbuf, sizeof(natbuf));
	if (!o->json) {
		table_cell(&o->t, "%s", name);
		table_cell(&o->t, "%u", nla_get_u32(tb[MPIP_LINK_A_IFINDEX]));
		table_cell(&o->t, "%s", adv ? "on" : "off");
		table_cell(&o->t, "%s", backup ? "yes" : "no");
		table_cell(&o->t, "%u", tier);
		table_cell(&o->t, "%s", metered ? "yes" : "no");
		table_cell(&o->t, "%s", nat);
		return 0;
	}
	json_obj_begin(&o->j);
	json_key(&o->j, "dev");
	json_str(&o->j, name);
	json_key(&o->j, "ifindex");
	json_uint(&o->j, nla_get_u32(tb[MPIP_LINK_A_IFINDEX]));
	json_key(&o->j, "advertise");
	json_bool(&o->j, adv);
	json_key(&o->j, "backup");
	json_bool(&o->j, backup);
	json_key(&o->j, "tier");
	json_uint(&o->j, tier);
	json_key(&o->j, "metered");
	json_bool(&o->j, metered);
	json_key(&o->j, "nat");
	json_str(&o->j, nat);
	json_obj_end(&o->j);
	return 0;
}

static int rule_entry(struct nlattr **top, void *arg)
{
	struct out *o = arg;
	struct rule_desc d;

	if (rule_describe(top[MPIP_A_RULE], &d) < 0)
		return -1;
	if (!o->json) {
		table_cell(&o->t, "%u", d.pref);
		table_cell(&o->t, "%llu", (unsigned long long)d.pkts);
		table_cell(&o->t, "%llu", (unsigned long long)d.bytes);
		table_cell(&o->t, "%s", d.text);
		return 0;
	}
	json_obj_begin(&o->j);
	json_key(&o->j, "pref");
	json_uint(&o->j, d.pref);
	json_key(&o->j, "rule");
	json_str(&o->j, d.text);
	json_key(&o->j, "pkts");
	json_uint(&o->j, d.pkts);
	json_key(&o->j, "bytes");
	json_uint(&o->j, d.bytes);
	json_obj_end(&o->j);
	return 0;
}

static const struct table_def {
	const char *name;
	uint8_t cmd;
	reply_fn fn;
	int ncols;
	const char *align;
	const char *const header[26];
} tables[] = {
	{ "avail", MPIP_CMD_GET_AVAIL, avail_entry, 7, "lrllrlr",
	  { "ADDRESS", "PORT", "PROTO", "STATE", "QUERIES", "NODE-ID",
	    "AGE" } },
	{ "nodes", MPIP_CMD_GET_NODES, node_entry, 6, "lllllr",
	  { "NODE-ID", "PEER-ID", "VERIFIED", "ENDPOINTS", "ADDRESSES",
	    "AGE" } },
	{ "sessions", MPIP_CMD_GET_SESSIONS, session_entry, 9, "lrllllrrr",
	  { "NODE", "ID", "PROTO", "LOCAL", "REMOTE", "CONFIRMED", "AGE",
	    "TX_PKTS", "RX_PKTS" } },
	{ "paths", MPIP_CMD_GET_PATHS, path_entry, 26,
	  "lrllllrrrrrrrrrrrlllrllrrr",
	  { "NODE", "ID", "SRC", "DST", "DEV", "STATE", "WEIGHT", "MIN_US",
	    "DELAY_US", "Q_US", "QMAX_US", "TX_PKTS", "TX_BYTES", "RX_PKTS",
	    "RX_BYTES", "FB", "FB_AGE", "VERIFIED", "SEEN_AS", "ENCAP", "TIER",
	    "METERED", "LOSS", "RTT_US", "TIMEOUT", "MTU" } },
	{ "links", MPIP_CMD_GET_LINKS, link_entry, 7, "lrllrll",
	  { "DEV", "IFINDEX", "ADVERTISE", "BACKUP", "TIER", "METERED", "NAT" } },
	{ "rules", MPIP_CMD_GET_RULES, rule_entry, 4, "rrrl",
	  { "PREF", "PKTS", "BYTES", "RULE" } },
};

int cmd_show(struct ctx *c, int argc, char **argv)
{
	const struct table_def *def = NULL;
	struct nl_msg *msg;
	struct out o;
	size_t i;
	int ret;

	if (argc < 2) {
		err_msg("show: missing table name (usage: mpipctl show " SHOW_TABLES ")");
		return EXIT_FAIL;
	}
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (strcmp(argv[1], tables[i].name) == 0)
			def = &tables[i];
	if (!def) {
		err_msg("show: unknown table '%s' (usage: mpipctl show " SHOW_TABLES ")",
			argv[1]);
		return EXIT_FAIL;
	}
	if (argc > 2) {
		err_msg("show: unexpected argument '%s' (usage: mpipctl show " SHOW_TABLES ")",
			argv[2]);
		return EXIT_FAIL;
	}

	ret = mpip_open(c);
	if (ret != EXIT_OK)
		return ret;
	if (out_begin(&o, c->json, def->ncols, def->align, def->header) < 0) {
		mpip_close(c);
		return EXIT_FAIL;
	}
	msg = mpip_req(c, def->cmd, NLM_F_DUMP);
	ret = msg ? mpip_run(c, msg, def->fn, &o) : EXIT_FAIL;
	mpip_close(c);
	return out_end(&o, ret);
}
