// SPDX-License-Identifier: GPL-2.0
/*
 * mpipctl: generic netlink helpers.
 *
 * mpip_open() resolves the "mpip" family; mpip_run() sends one request and
 * reads replies until the kernel's ACK (doit), NLMSG_DONE (dump) or an
 * error, handing every reply to a callback.  Errors are reported on
 * stderr here, with the kernel's extack message when it sent one, and
 * turned into an exit status.
 */
#define _GNU_SOURCE		/* setns */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "mpipctl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK		270
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK		10
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED		0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS		0x200
#endif

/* Top-level attributes of every reply. */
static struct nla_policy mpip_policy[MPIP_A_MAX + 1] = {
	[MPIP_A_ENABLED]	= { .type = NLA_U8 },
	[MPIP_A_NODE_ID]	= { .type = NLA_U32 },
	[MPIP_A_VERSION]	= { .type = NLA_STRING },
	[MPIP_A_AVAIL_COUNT]	= { .type = NLA_U32 },
	[MPIP_A_NODE_COUNT]	= { .type = NLA_U32 },
	[MPIP_A_AVAIL]		= { .type = NLA_NESTED },
	[MPIP_A_NODE]		= { .type = NLA_NESTED },
	[MPIP_A_STATS]		= { .type = NLA_NESTED },
	[MPIP_A_CONFIG]		= { .type = NLA_NESTED },
	[MPIP_A_SESSION]	= { .type = NLA_NESTED },
	[MPIP_A_PATH]		= { .type = NLA_NESTED },
	[MPIP_A_SESSION_COUNT]	= { .type = NLA_U32 },
	[MPIP_A_PATH_COUNT]	= { .type = NLA_U32 },
	[MPIP_A_LINK]		= { .type = NLA_NESTED },
	[MPIP_A_RULE]		= { .type = NLA_NESTED },
	[MPIP_A_EVENT]		= { .type = NLA_U8 },
	[MPIP_A_AVAIL_CHAIN]	= { .type = NLA_U32 },
	[MPIP_A_NODE_CHAIN]	= { .type = NLA_U32 },
};

int mpip_parse(struct nl_msg *msg, struct nlattr **tb)
{
	return genlmsg_parse(nlmsg_hdr(msg), 0, tb, MPIP_A_MAX, mpip_policy);
}

/* Where "ip netns add" puts the named network namespaces. */
#ifndef NETNS_RUN_DIR
#define NETNS_RUN_DIR		"/var/run/netns"
#endif

struct run {
	reply_fn fn;
	void *arg;
	bool done;
	int error;		/* negative errno from the kernel */
	bool malformed;
	char extack[256];
	bool has_range;		/* the policy of the rejected attribute */
	uint64_t min, max;
};

/* -n NAME: move into that network namespace, as "ip -n NAME" does. */
static int enter_netns(const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_msg("cannot open network namespace '%s': %s", name,
			strerror(errno));
		return EXIT_FAIL;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		err_msg("cannot enter network namespace '%s': %s", name,
			strerror(errno));
		close(fd);
		return EXIT_FAIL;
	}
	close(fd);
	return EXIT_OK;
}

int mpip_open(struct ctx *c)
{
	int one = 1, ret;

	/* Once the arguments are known to be good, and only once. */
	if (c->netns) {
		ret = enter_netns(c->netns);
		if (ret != EXIT_OK)
			return ret;
		c->netns = NULL;
	}
	c->sk = nl_socket_alloc();
	if (!c->sk) {
		err_msg("out of memory");
		return EXIT_FAIL;
	}
	ret = genl_connect(c->sk);
	if (ret < 0) {
		err_msg("cannot open a generic netlink socket: %s",
			nl_geterror(ret));
		goto fail;
	}
	/* Ask for extack messages and do not echo requests back in ACKs. */
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));

	ret = genl_ctrl_resolve(c->sk, MPIP_GENL_NAME);
	if (ret == -NLE_OBJ_NOTFOUND) {
		err_msg("mpip kernel module is not loaded");
		mpip_close(c);
		return EXIT_NOMOD;
	}
	if (ret < 0) {
		err_msg("cannot resolve the %s generic netlink family: %s",
			MPIP_GENL_NAME, nl_geterror(ret));
		goto fail;
	}
	c->family = ret;
	return EXIT_OK;
fail:
	mpip_close(c);
	return EXIT_FAIL;
}

void mpip_close(struct ctx *c)
{
	nl_socket_free(c->sk);
	c->sk = NULL;
}

struct nl_msg *mpip_req(struct ctx *c, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0,
				flags, cmd, MPIP_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	if (!msg)
		err_msg("out of memory");
	return msg;
}

/*
 * Copy NLMSGERR_ATTR_MSG from the TLVs at @attrs into r->extack, and the
 * unsigned range of NLMSGERR_ATTR_POLICY (the policy of the attribute the
 * kernel rejected, sent since Linux 5.10) into r->min and r->max.
 */
static void get_extack(struct run *r, void *attrs, int len)
{
	static struct nla_policy pol[NLMSGERR_ATTR_MAX + 1] = {
		[NLMSGERR_ATTR_MSG] = { .type = NLA_STRING },
		[NLMSGERR_ATTR_POLICY] = { .type = NLA_NESTED },
	};
	static struct nla_policy range_pol[NL_POLICY_TYPE_ATTR_MAX + 1] = {
		[NL_POLICY_TYPE_ATTR_MIN_VALUE_U] = { .type = NLA_U64,
						      .minlen = 8, .maxlen = 8 },
		[NL_POLICY_TYPE_ATTR_MAX_VALUE_U] = { .type = NLA_U64,
						      .minlen = 8, .maxlen = 8 },
	};
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *pt[NL_POLICY_TYPE_ATTR_MAX + 1];

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, len, pol) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(r->extack, sizeof(r->extack), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_POLICY] &&
	    nla_parse_nested(pt, NL_POLICY_TYPE_ATTR_MAX,
			     tb[NLMSGERR_ATTR_POLICY], range_pol) == 0 &&
	    pt[NL_POLICY_TYPE_ATTR_MIN_VALUE_U] &&
	    pt[NL_POLICY_TYPE_ATTR_MAX_VALUE_U]) {
		r->has_range = true;
		r->min = nla_get_u64(pt[NL_POLICY_TYPE_ATTR_MIN_VALUE_U]);
		r->max = nla_get_u64(pt[NL_POLICY_TYPE_ATTR_MAX_VALUE_U]);
	}
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct run *r = arg;
	int off = NLMSG_HDRLEN + sizeof(*e);

	(void)nla;
	r->error = e->error;
	r->done = true;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - NLMSG_HDRLEN;
		off = NLMSG_ALIGN(off);
		if ((unsigned int)off < nlh->nlmsg_len)
			get_extack(r, (char *)nlh + off, nlh->nlmsg_len - off);
	}
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct run *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

/* NLMSG_DONE ends a dump; its payload is an int error, then extack TLVs. */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct run *r = arg;
	int len = nlmsg_datalen(nlh);
	int err;

	r->done = true;
	if (len >= (int)sizeof(int)) {
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			r->error = err;
			if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
				get_extack(r, (char *)nlmsg_data(nlh) +
					   NLMSG_ALIGN(sizeof(int)),
					   len - NLMSG_ALIGN(sizeof(int)));
		}
	}
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[MPIP_A_MAX + 1];
	struct run *r = arg;

	/* Keep reading after a bad message so that the dump is drained. */
	if (mpip_parse(msg, tb) < 0 ||
	    (r->fn && r->fn(tb, r->arg) < 0))
		r->malformed = true;
	return NL_OK;
}

static int report(struct ctx *c, const struct run *r)
{
	char range[128] = "";
	int e = -r->error;

	if (e == EPERM || e == EACCES) {
		err_msg("permission denied (CAP_NET_ADMIN needed)");
		return EXIT_FAIL;
	}
	if (r->has_range)
		snprintf(range, sizeof(range), " (allowed range%s%s: %llu..%llu)",
			 c->key ? " for " : "", c->key ? c->key : "",
			 (unsigned long long)r->min,
			 (unsigned long long)r->max);
	if (r->extack[0])
		err_msg("%s: %s: %s%s", c->cmd, strerror(e), r->extack, range);
	else
		err_msg("%s: %s%s", c->cmd, strerror(e), range);
	return EXIT_FAIL;
}

/* Send @msg (consumed) and process the replies; returns an exit status. */
int mpip_run(struct ctx *c, struct nl_msg *msg, reply_fn fn, void *arg)
{
	struct run r = { .fn = fn, .arg = arg };
	struct nl_cb *cb;
	int ret;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		err_msg("out of memory");
		return EXIT_FAIL;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &r);

	ret = nl_send_auto(c->sk, msg);	/* adds NLM_F_REQUEST | NLM_F_ACK */
	nlmsg_free(msg);
	while (ret >= 0 && !r.done)
		ret = nl_recvmsgs(c->sk, cb);
	nl_cb_put(cb);

	if (r.error)
		return report(c, &r);
	if (ret < 0) {
		err_msg("%s: netlink: %s", c->cmd, nl_geterror(ret));
		return EXIT_FAIL;
	}
	if (r.malformed) {
		err_msg("%s: malformed reply from the kernel", c->cmd);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* A request without attributes. */
int mpip_simple(struct ctx *c, uint8_t cmd, reply_fn fn, void *arg)
{
	struct nl_msg *msg = mpip_req(c, cmd, 0);

	return msg ? mpip_run(c, msg, fn, arg) : EXIT_FAIL;
}
