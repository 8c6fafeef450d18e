/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpipctl: shared declarations.
 */
#ifndef MPIPCTL_H
#define MPIPCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>

#include "mpip.h"

/* Exit statuses. */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* usage error, kernel error */
#define EXIT_NOMOD	2	/* the "mpip" family is not registered */

struct ctx {
	bool json;
	const char *netns;	/* -n NAME, or NULL */
	const char *cmd;	/* command name, for messages */
	const char *key;	/* set: the tunable, for a range error */
	struct nl_sock *sk;
	int family;
};

/* mpipctl.c */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* When set ("FILE:LINE" in a batch), err_msg() puts it after "mpipctl: ". */
extern const char *err_where;
/* Run argv[0], the name of a command, with its arguments. */
int mpipctl_command(struct ctx *c, int argc, char **argv);

/* batch.c: -b FILE; with @force, a failing line does not stop the rest. */
int batch_run(struct ctx *c, const char *file, bool force);

/* An attribute policy of a fixed length: libnl's minlen alone is a floor. */
#define ATTR(t, len)	{ .type = (t), .minlen = (len), .maxlen = (len) }

/* nl.c */

/*
 * Called once per reply message with its top-level attributes parsed
 * against the mpip policy.  Return 0, or -1 for a malformed reply.
 */
typedef int (*reply_fn)(struct nlattr **tb, void *arg);

int mpip_open(struct ctx *c);
void mpip_close(struct ctx *c);
struct nl_msg *mpip_req(struct ctx *c, uint8_t cmd, int flags);
int mpip_run(struct ctx *c, struct nl_msg *msg, reply_fn fn, void *arg);
int mpip_simple(struct ctx *c, uint8_t cmd, reply_fn fn, void *arg);
/* A message's top-level attributes against the mpip policy; < 0: bad. */
int mpip_parse(struct nl_msg *msg, struct nlattr **tb);

/* json.c: a streaming JSON writer, compact output. */
#define JSON_MAX_DEPTH 8

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool after_key;
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
void json_finish(struct json *j);

/* table.c: aligned text tables. */
struct table {
	int ncols;
	const char *align;	/* one 'l' or 'r' per column */
	size_t ncells, cap;
	char **cells;		/* row-major; row 0 is the header */
};

void table_init(struct table *t, int ncols, const char *align,
		const char *const *header);
void table_cell(struct table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

/* rule.c */
int cmd_rule(struct ctx *c, int argc, char **argv);
struct rule_desc {
	uint32_t pref;
	uint64_t pkts;		/* packets that matched it */
	uint64_t bytes;
	char text[512];		/* as "rule add" takes it */
};
int rule_describe(struct nlattr *nest, struct rule_desc *d);

/* show.c */
#define SHOW_TABLES "avail|nodes|sessions|paths|links|rules"

int cmd_show(struct ctx *c, int argc, char **argv);

/* Formatting helpers shared by the commands (show.c). */
const char *fmt_addr(uint32_t be_addr, char *buf, size_t len);
const char *fmt_endpoint(uint32_t be_addr, uint16_t port, char *buf,
			 size_t len);
void fmt_path_seen(struct nlattr **tb, char *buf, size_t len);
const char *fmt_node_id(uint32_t id, char *buf, size_t len);
/* "tcp", "udp", or the protocol's number */
const char *proto_name(uint8_t proto, char *buf, size_t len);
/* The attributes nested in MPIP_A_NODE and MPIP_A_PATH, as replies have them */
extern struct nla_policy node_policy[MPIP_NODE_A_MAX + 1];
extern struct nla_policy path_policy[MPIP_PATH_A_MAX + 1];
/* The enum mpip_link_nat named @s ("default", "auto", ...), or -1 */
int link_nat_lookup(const char *s);
/* "up", "down" ... (enum mpip_path_state), or the number */
const char *path_state_name(uint8_t state, char *buf, size_t len);

/* monitor.c */
int cmd_monitor(struct ctx *c, int argc, char **argv);

#endif /* MPIPCTL_H */
