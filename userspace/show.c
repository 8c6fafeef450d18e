// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: "show avail" and "show nodes", dumps of the two tables.
 *
 * Entries are collected into a table (text) or a memory stream (JSON) and
 * printed only once the dump completed, so a failure never leaves half a
 * listing on stdout.
 */
#define _GNU_SOURCE		/* open_memstream */
#include <arpa/inet.h>
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

const char *fmt_node_id(uint32_t id, char *buf, size_t len)
{
	snprintf(buf, len, "0x%08x", id);
	return buf;
}

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

static const char *proto_name(uint8_t proto, char *buf, size_t len)
{
	if (proto == IPPROTO_TCP)
		return "tcp";
	if (proto == IPPROTO_UDP)
		return "udp";
	snprintf(buf, len, "%u", proto);
	return buf;
}

static uint32_t get_u32(struct nlattr *a)
{
	return a ? nla_get_u32(a) : 0;
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
	if (proto == pbuf)
		json_uint(&o->j, nla_get_u8(tb[MPIP_AVAIL_A_PROTO]));
	else
		json_str(&o->j, proto);
	json_key(&o->j, "state");
	if (state == sbuf)
		json_uint(&o->j, nla_get_u8(tb[MPIP_AVAIL_A_STATE]));
	else
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

static struct nla_policy node_policy[MPIP_NODE_A_MAX + 1] = {
	[MPIP_NODE_A_ID]	= { .type = NLA_U32 },
	[MPIP_NODE_A_ENDPOINTS]	= { .type = NLA_NESTED },
	[MPIP_NODE_A_ADDRS]	= { .type = NLA_NESTED },
	[MPIP_NODE_A_AGE_MS]	= { .type = NLA_U32 },
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
	char *eps = NULL, *addrs = NULL, idbuf[16];
	struct out *o = arg;
	uint32_t age;
	int ret;

	if (!top[MPIP_A_NODE] ||
	    nla_parse_nested(tb, MPIP_NODE_A_MAX, top[MPIP_A_NODE],
			     node_policy) < 0 ||
	    !tb[MPIP_NODE_A_ID])
		return -1;
	fmt_node_id(nla_get_u32(tb[MPIP_NODE_A_ID]), idbuf, sizeof(idbuf));
	age = get_u32(tb[MPIP_NODE_A_AGE_MS]);

	if (o->json) {
		/*
		 * A malformed entry makes the whole command fail, so a
		 * half-written object in the buffer is never printed.
		 */
		json_obj_begin(&o->j);
		json_key(&o->j, "node_id");
		json_str(&o->j, idbuf);
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
		table_cell(&o->t, "%s", eps ? eps : "-");
		table_cell(&o->t, "%s", addrs ? addrs : "-");
		table_cell(&o->t, "%u.%03us", age / 1000, age % 1000);
		ret = 0;
	}
	free(eps);
	free(addrs);
	return ret;
}

static const struct table_def {
	const char *name;
	uint8_t cmd;
	reply_fn fn;
	int ncols;
	const char *align;
	const char *const header[7];
} tables[] = {
	{ "avail", MPIP_CMD_GET_AVAIL, avail_entry, 7, "lrllrlr",
	  { "ADDRESS", "PORT", "PROTO", "STATE", "QUERIES", "NODE-ID",
	    "AGE" } },
	{ "nodes", MPIP_CMD_GET_NODES, node_entry, 4, "lllr",
	  { "NODE-ID", "ENDPOINTS", "ADDRESSES", "AGE" } },
};

int cmd_show(struct ctx *c, int argc, char **argv)
{
	const struct table_def *def = NULL;
	struct nl_msg *msg;
	struct out o;
	size_t i;
	int ret;

	if (argc < 2) {
		err_msg("show: missing table name (usage: mpipctl show avail|nodes)");
		return EXIT_FAIL;
	}
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (strcmp(argv[1], tables[i].name) == 0)
			def = &tables[i];
	if (!def) {
		err_msg("show: unknown table '%s' (usage: mpipctl show avail|nodes)",
			argv[1]);
		return EXIT_FAIL;
	}
	if (argc > 2) {
		err_msg("show: unexpected argument '%s' (usage: mpipctl show avail|nodes)",
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
