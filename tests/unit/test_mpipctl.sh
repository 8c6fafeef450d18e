#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of mpipctl that need no kernel module: option and
# argument handling, the "module not loaded" path, the JSON writer, and
# the parsing and printing of replies, with mpipctl built against a fake
# kernel that answers from memory (see fake.c below).
# Output is KTAP; the last line is "mpipctl: N passed, N failed, N skipped"
# and the exit status is non-zero when a test failed or the number of tests
# run is not the plan.  A test is skipped only with a reason, printed in
# its KTAP line.
#
#   MPIPCTL=/path/to/mpipctl tests/unit/test_mpipctl.sh
#
# Without MPIPCTL, userspace/mpipctl is used (and built if missing).  The
# tests that expect the mpip family to be absent are skipped when the
# module is loaded.  KEEP_TMP=1 keeps the scratch directory, with the
# fake kernel, for a look.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MPIPCTL=${MPIPCTL:-$ROOT/userspace/mpipctl}
TMP=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
# KTAP counters, fail() and check()
# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"

if [ ! -x "$MPIPCTL" ] && [ "$MPIPCTL" = "$ROOT/userspace/mpipctl" ]; then
	make -s -C "$ROOT/userspace" >"$TMP/build.log" 2>&1 || {
		echo "KTAP version 1"
		echo "1..0"
		sed 's/^/# /' "$TMP/build.log"
		echo "Bail out! cannot build mpipctl"
		echo "mpipctl: 0 passed, 1 failed, 0 skipped"
		exit 1
	}
fi

# The one version, MPIP_VERSION in kernel/mpip.h, as userspace/Makefile
# reads it.
VERSION=$(sed -n 's/^#define[[:space:]]*MPIP_VERSION[[:space:]]*"\(.*\)".*/\1/p' "$ROOT/kernel/mpip.h")

module_loaded=false
if [ -d /sys/module/mpip ]; then
	module_loaded=true
fi

# Every tunable of enum mpip_cfg; NEW_TUNABLES came with sessions and paths,
# GSO, the reorder buffer, the weight trend and step boost, bare packets
# steering by the local queues, rule events, NAT mode, the control budget
# and the loss oracle.
NEW_TUNABLES="session_timeout_ms weight_step weight_interval_ms heartbeat_ms path_timeout_ms delay_smooth_shift tx_gso reorder reorder_max_pkts reorder_max_hold_ms weight_trend_ms weight_boost bare_cm_ms queue_steer rule_event_pkts nat_mode ctrl_pps loss_pct weight_tie_us"
TUNABLES="query_threshold peer_timeout_ms avail_timeout_ms node_timeout_ms $NEW_TUNABLES"

skipped=0

# run ARGS...: run mpipctl, leaving rc, out and err.
run() {
	"$MPIPCTL" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# One line on stderr, prefixed "mpipctl: ", nothing on stdout.
one_line_error() {
	[ -z "$out" ] || fail "unexpected stdout: $out" || return 1
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "stderr is not one line: $err" || return 1
	[[ $err == "mpipctl: "* ]] || fail "stderr lacks the 'mpipctl: ' prefix: $err"
}

# expect_usage_error PATTERN ARGS...: exit 1 with a one-line error that
# matches PATTERN, without contacting the kernel.
expect_usage_error() {
	local pattern=$1
	shift
	run "$@"
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (stderr: $err)" || return 1
	one_line_error || return 1
	[[ $err != *"not loaded"* ]] || fail "reached netlink: $err" || return 1
	[[ $err == *$pattern* ]] || fail "stderr does not mention '$pattern': $err"
}

# skip NAME REASON: a skip without a reason is a failure.
skip() {
	n=$((n + 1))
	if [ -z "${2:-}" ]; then
		echo "not ok $n $1 # skipped without a reason"
		failed=$((failed + 1))
		return
	fi
	echo "ok $n $1 # SKIP $2"
	skipped=$((skipped + 1))
}

t_help() {
	local word
	run "$@"
	[ "$rc" -eq 0 ] || fail "exit $rc" || return 1
	[ -z "$err" ] || fail "stderr: $err" || return 1
	for word in status enable disable "show avail" nodes sessions paths \
		    stats "get [KEY]" "set KEY VALUE" flush help --json \
		    "--netns NAME" --help --version; do
		grep -qF -- "$word" "$TMP/out" || fail "help lacks '$word'" || return 1
	done
	for word in $TUNABLES; do
		grep -qwF -- "$word" "$TMP/out" || fail "help lacks tunable '$word'" || return 1
	done
	! grep -q '.\{81\}' "$TMP/out" || fail "help has lines over 80 columns" || return 1
	# every command's line whole (the buffer once cut link's short)
	grep -qxF -- "  link set dev IF [advertise on|off] [backup|tier N] [metered] [nat MODE]" "$TMP/out" ||
		fail "help lacks link's whole line"
}

t_version() {
	run "$@"
	[ "$rc" -eq 0 ] || fail "exit $rc" || return 1
	[ -z "$err" ] || fail "stderr: $err" || return 1
	[ "$out" = "mpipctl $VERSION (netlink family mpip version 1)" ] ||
		fail "stdout: $out"
}

t_not_loaded() {
	run "$@"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2 (stderr: $err)" || return 1
	one_line_error || return 1
	[ "$err" = "mpipctl: mpip kernel module is not loaded" ] ||
		fail "stderr: $err"
}

# The JSON writer, compiled against a small driver: nesting, commas,
# escaping of quotes, backslashes and control characters, invalid UTF-8.
t_json() {
	local cflags
	cflags=$(pkg-config --cflags libnl-3.0 2>/dev/null) || fail "no libnl-3.0" || return 1
	cat >"$TMP/j.c" <<'EOF'
#include "mpipctl.h"
void err_msg(const char *fmt, ...) { (void)fmt; }
int main(void)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_key(&j, "s");
	json_str(&j, "a\"b\\c\n\t\x01/\xc3\xa9\xff\xe2\x82");
	json_key(&j, "l");
	json_arr_begin(&j);
	json_uint(&j, 18446744073709551615ULL);
	json_null(&j);
	json_bool(&j, true);
	json_arr_begin(&j);
	json_arr_end(&j);
	json_obj_begin(&j);
	json_obj_end(&j);
	json_arr_end(&j);
	json_key(&j, "e");
	json_arr_begin(&j);
	json_arr_end(&j);
	json_obj_end(&j);
	json_finish(&j);
	return 0;
}
EOF
	# shellcheck disable=SC2086
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$ROOT/userspace" \
		-I"$ROOT/kernel/uapi" $cflags -o "$TMP/j" "$TMP/j.c" \
		"$ROOT/userspace/json.c" >"$TMP/cc.log" 2>&1 ||
		fail "cannot compile: $(head -c 300 "$TMP/cc.log")" || return 1
	local got want
	got=$("$TMP/j")
	want='{"s":"a\"b\\c\n\t\u0001/é\ufffd\ufffd\ufffd","l":[18446744073709551615,null,true,[],{}],"e":[]}'
	[ "$got" = "$want" ] || fail "got $got"
}


# The fake kernel, see the comment at its top.
write_fake() {
	cat >"$TMP/fake.c" <<'EOF'
/*
 * mpipctl against a fake kernel: nl.c is compiled with its socket calls
 * redirected here, mpipctl.c with its main() renamed.  Replies are built
 * with libnl as the module sends them (nests flagged NLA_F_NESTED, pad
 * attributes before the u64s).  FAKE selects the replies: full (default),
 * min (only the required attributes; an older module's status and
 * config), empty, bad-len (an attribute of the wrong size), bad-missing
 * (a required attribute left out).  The err-* scenarios answer with an
 * error, as the kernel does: err-range (ERANGE with an extack message and
 * the policy of the rejected attribute, range 1..100), err-perm (EPERM),
 * err-plain (EINVAL, no extack), err-uncapped (EINVAL with the request
 * echoed before the extack), err-dump (a dump that sends its entries,
 * then fails in NLMSG_DONE with EMSGSIZE and an extack message).
 * FAKE_LOG names a file that receives one line per request.
 * FAKE_VERSION is the module version in the status reply.
 */
#define genl_connect		fake_genl_connect
#define genl_ctrl_resolve	fake_genl_ctrl_resolve
#define nl_send_auto		fake_send_auto
#define nl_recvmsgs		fake_recvmsgs
#define nl_cb_set		fake_cb_set
#define nl_cb_err		fake_cb_err
#include "nl.c"

#include <arpa/inet.h>
#include <stdlib.h>

int mpipctl_main(int argc, char **argv);

static nl_recvmsg_msg_cb_t cb_valid, cb_ack, cb_finish;
static nl_recvmsg_err_cb_t cb_err;
static void *cb_arg;
static int req_cmd, req_flags;
static unsigned char req_buf[4096];	/* the request, for err-uncapped */

int fake_genl_connect(struct nl_sock *sk)
{
	(void)sk;
	return 0;
}

int fake_genl_ctrl_resolve(struct nl_sock *sk, const char *name)
{
	(void)sk;
	return strcmp(name, "mpip") == 0 ? 0x20 : -NLE_OBJ_NOTFOUND;
}

int fake_cb_set(struct nl_cb *cb, enum nl_cb_type type, enum nl_cb_kind kind,
		nl_recvmsg_msg_cb_t fn, void *arg)
{
	(void)cb, (void)kind;
	if (type == NL_CB_VALID)
		cb_valid = fn;
	else if (type == NL_CB_ACK)
		cb_ack = fn;
	else if (type == NL_CB_FINISH)
		cb_finish = fn;
	cb_arg = arg;
	return 0;
}

int fake_cb_err(struct nl_cb *cb, enum nl_cb_kind kind, nl_recvmsg_err_cb_t fn,
		void *arg)
{
	(void)cb, (void)kind;
	cb_err = fn;
	cb_arg = arg;
	return 0;
}

/* Log the request: command, dump flag, top-level and config attributes. */
int fake_send_auto(struct nl_sock *sk, struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *g = nlmsg_data(nlh);
	const char *path = getenv("FAKE_LOG");
	struct nlattr *a, *c;
	int rem, rem2;
	FILE *f;

	(void)sk;
	req_cmd = g->cmd;
	req_flags = nlh->nlmsg_flags;
	if (nlh->nlmsg_len <= sizeof(req_buf))
		memcpy(req_buf, nlh, nlh->nlmsg_len);
	if (!path || !(f = fopen(path, "a")))
		return 0;
	fprintf(f, "cmd=%d version=%d dump=%d", g->cmd, g->version,
		(nlh->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP);
	nla_for_each_attr(a, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0),
			  rem) {
		if (nla_type(a) == MPIP_A_CONFIG) {
			fprintf(f, " config%s",
				a->nla_type & NLA_F_NESTED ? "(nested)" : "");
			nla_for_each_nested(c, a, rem2)
				fprintf(f, " %d:%d=%u", nla_type(c), nla_len(c),
					nla_get_u32(c));
		} else if (nla_type(a) == MPIP_A_LINK) {
			fprintf(f, " link%s",
				a->nla_type & NLA_F_NESTED ? "(nested)" : "");
			nla_for_each_nested(c, a, rem2)
				fprintf(f, " %d:%d=%u", nla_type(c), nla_len(c),
					nla_len(c) == 1 ? nla_get_u8(c) :
					nla_get_u32(c));
		} else if (nla_type(a) == MPIP_A_RULE) {
			fprintf(f, " rule%s",
				a->nla_type & NLA_F_NESTED ? "(nested)" : "");
			nla_for_each_nested(c, a, rem2) {
				if (c->nla_type & NLA_F_NESTED)
					fprintf(f, " %d(nested,%d)", nla_type(c),
						nla_len(c));
				else if (nla_len(c) == 0)
					fprintf(f, " %d", nla_type(c));
				else
					fprintf(f, " %d:%d=%u", nla_type(c),
						nla_len(c),
						nla_len(c) == 1 ? nla_get_u8(c) :
						nla_get_u32(c));
			}
		} else if (nla_type(a) == MPIP_A_ENABLED) {
			fprintf(f, " enabled:%d=%u", nla_len(a), nla_get_u8(a));
		} else {
			fprintf(f, " attr%d", nla_type(a));
		}
	}
	fputc('\n', f);
	fclose(f);
	return 0;
}

static const char *scenario(void)
{
	const char *s = getenv("FAKE");

	return s ? s : "full";
}

static bool is(const char *name)
{
	return strcmp(scenario(), name) == 0;
}

static struct nl_msg *reply(int flags)
{
	struct nl_msg *m = nlmsg_alloc();

	genlmsg_put(m, 0, 1, 0x20, 0, flags, req_cmd, MPIP_GENL_VERSION);
	return m;
}

static struct nlattr *nest(struct nl_msg *m, int type)
{
	return nla_nest_start(m, type | NLA_F_NESTED);
}

/* A u64 preceded by a zero-length pad, as an unaligned kernel sends it. */
static void put_u64(struct nl_msg *m, int type, int pad, uint64_t v)
{
	nla_put(m, pad, 0, NULL);
	nla_put_u64(m, type, v);
}

static uint32_t ip(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static void session(struct nl_msg *m, uint32_t node, uint16_t id,
		    uint8_t proto, const char *l, uint16_t lp, const char *r,
		    uint16_t rp, int confirmed, uint32_t age, uint64_t tx,
		    uint64_t rx)
{
	struct nlattr *n = nest(m, MPIP_A_SESSION);

	nla_put_u32(m, MPIP_SESSION_A_NODE_ID, node);
	nla_put_u16(m, MPIP_SESSION_A_ID, id);
	nla_put_u8(m, MPIP_SESSION_A_PROTO, proto);
	nla_put_u32(m, MPIP_SESSION_A_LADDR, ip(l));
	nla_put_u16(m, MPIP_SESSION_A_LPORT, lp);
	nla_put_u32(m, MPIP_SESSION_A_RADDR, ip(r));
	nla_put_u16(m, MPIP_SESSION_A_RPORT, rp);
	if (confirmed >= 0) {
		nla_put_u8(m, MPIP_SESSION_A_CONFIRMED, confirmed);
		nla_put_u32(m, MPIP_SESSION_A_AGE_MS, age);
		put_u64(m, MPIP_SESSION_A_TX_PKTS, MPIP_SESSION_A_PAD, tx);
		put_u64(m, MPIP_SESSION_A_RX_PKTS, MPIP_SESSION_A_PAD, rx);
	}
	nla_nest_end(m, n);
}

struct path {
	uint32_t node;
	uint8_t id;
	const char *s, *d;
	uint32_t ifindex;
	uint8_t state;
	int full;		/* 0: only the identifying attributes */
	uint32_t weight;
	uint8_t have_delay;
	uint32_t delay[4];
	uint64_t cnt[5];
	uint32_t fb_age;
	uint8_t verified, nat, encap, learned, tier, metered, loss, lossy, cold;
	uint8_t have_rtt;
	uint32_t mtu;
	uint32_t rtt, timeout;
	const char *seen;	/* address the peer saw, or NULL */
	uint16_t seen_port, dport;
};

static void path(struct nl_msg *m, const struct path *p)
{
	static const int delays[] = {
		MPIP_PATH_A_MIN_DELAY_US, MPIP_PATH_A_DELAY_US,
		MPIP_PATH_A_QDELAY_US, MPIP_PATH_A_MAX_QDELAY_US,
	};
	static const int cnts[] = {
		MPIP_PATH_A_TX_PKTS, MPIP_PATH_A_TX_BYTES, MPIP_PATH_A_RX_PKTS,
		MPIP_PATH_A_RX_BYTES, MPIP_PATH_A_FEEDBACK,
	};
	struct nlattr *n = nest(m, MPIP_A_PATH);
	int i;

	nla_put_u32(m, MPIP_PATH_A_NODE_ID, p->node);
	nla_put_u8(m, MPIP_PATH_A_ID, p->id);
	nla_put_u32(m, MPIP_PATH_A_SADDR, ip(p->s));
	nla_put_u32(m, MPIP_PATH_A_DADDR, ip(p->d));
	nla_put_u8(m, MPIP_PATH_A_STATE, p->state);
	if (p->full) {
		nla_put_u32(m, MPIP_PATH_A_IFINDEX, p->ifindex);
		nla_put_u32(m, MPIP_PATH_A_WEIGHT, p->weight);
		nla_put_u8(m, MPIP_PATH_A_HAVE_DELAY, p->have_delay);
		for (i = 0; i < 4; i++)
			nla_put_u32(m, delays[i], p->delay[i]);
		for (i = 0; i < 5; i++)
			put_u64(m, cnts[i], MPIP_PATH_A_PAD, p->cnt[i]);
		nla_put_u32(m, MPIP_PATH_A_FB_AGE_MS, p->fb_age);
		nla_put_u8(m, MPIP_PATH_A_VERIFIED, p->verified);
		nla_put_u8(m, MPIP_PATH_A_NAT, p->nat);
		nla_put_u8(m, MPIP_PATH_A_ENCAP, p->encap);
		nla_put_u16(m, MPIP_PATH_A_DPORT, p->dport);
		nla_put_u8(m, MPIP_PATH_A_LEARNED, p->learned);
		nla_put_u8(m, MPIP_PATH_A_TIER, p->tier);
		nla_put_u8(m, MPIP_PATH_A_METERED, p->metered);
		nla_put_u8(m, MPIP_PATH_A_LOSS_PCT, p->loss);
		nla_put_u8(m, MPIP_PATH_A_LOSSY, p->lossy);
		nla_put_u8(m, MPIP_PATH_A_COLD, p->cold);
		if (p->have_rtt)
			nla_put_u32(m, MPIP_PATH_A_RTT_US, p->rtt);
		nla_put_u32(m, MPIP_PATH_A_TIMEOUT_MS, p->timeout);
		if (p->mtu)
			nla_put_u32(m, MPIP_PATH_A_MTU, p->mtu);
	}
	if (p->seen) {
		nla_put_u32(m, MPIP_PATH_A_SEEN_ADDR, ip(p->seen));
		nla_put_u16(m, MPIP_PATH_A_SEEN_PORT, p->seen_port);
	}
	nla_nest_end(m, n);
}

static int nmsgs;
static struct nl_msg *msgs[8];

static void add(struct nl_msg *m)
{
	msgs[nmsgs++] = m;
}

static void build_status(void)
{
	struct nl_msg *m = reply(0);

	nla_put_u8(m, MPIP_A_ENABLED, 1);
	nla_put_u32(m, MPIP_A_NODE_ID, 0x3f2a9c41);
	nla_put_string(m, MPIP_A_VERSION, FAKE_VERSION);
	nla_put_u32(m, MPIP_A_AVAIL_COUNT, 2);
	nla_put_u32(m, MPIP_A_NODE_COUNT, 1);
	if (is("full")) {
		nla_put_u32(m, MPIP_A_SESSION_COUNT, 3);
		nla_put_u32(m, MPIP_A_PATH_COUNT, 4);
		nla_put_u32(m, MPIP_A_AVAIL_CHAIN, 5);
		nla_put_u32(m, MPIP_A_NODE_CHAIN, 6);
	}
	add(m);
}

/* Counter N is N * 1000; "full" adds one this mpipctl cannot name. */
static void build_stats(void)
{
	struct nl_msg *m = reply(0);
	struct nlattr *n = nest(m, MPIP_A_STATS);
	int i;

	for (i = 1; i <= MPIP_STAT_MAX; i++)
		put_u64(m, i, MPIP_STAT_UNSPEC, i * 1000ULL);
	if (is("full"))
		put_u64(m, 200, MPIP_STAT_UNSPEC, 1ULL << 40);
	nla_nest_end(m, n);
	add(m);
}

/* Tunable N is N * 10; "min" leaves the new ones out (an older module). */
static void build_config(void)
{
	struct nl_msg *m = reply(0);
	struct nlattr *n = nest(m, MPIP_A_CONFIG);
	int i;

	for (i = 1; i <= (is("min") ? MPIP_CFG_NODE_TIMEOUT_MS : MPIP_CFG_MAX); i++)
		nla_put_u32(m, i, i * 10);
	nla_nest_end(m, n);
	add(m);
}

static void avail(struct nl_msg *m, const char *addr, uint16_t port,
		  uint8_t proto, uint8_t state, int full, uint32_t queries,
		  uint32_t node, uint32_t age)
{
	struct nlattr *n = nest(m, MPIP_A_AVAIL);

	nla_put_u32(m, MPIP_AVAIL_A_ADDR, ip(addr));
	nla_put_u16(m, MPIP_AVAIL_A_PORT, port);
	nla_put_u8(m, MPIP_AVAIL_A_PROTO, proto);
	nla_put_u8(m, MPIP_AVAIL_A_STATE, state);
	if (full) {
		nla_put_u32(m, MPIP_AVAIL_A_QUERIES, queries);
		nla_put_u32(m, MPIP_AVAIL_A_NODE_ID, node);
		nla_put_u32(m, MPIP_AVAIL_A_AGE_MS, age);
	}
	nla_nest_end(m, n);
}

/* One entry per message, as the kernel dumps them. */
static void build_avail(void)
{
	struct nl_msg *m;

	if (is("empty"))
		return;
	if (is("min") || is("bad-missing")) {
		m = reply(NLM_F_MULTI);
		if (is("min")) {
			avail(m, "10.0.9.9", 1, 6, MPIP_AVAIL_NO, 0, 0, 0, 0);
		} else {		/* no state */
			struct nlattr *n = nest(m, MPIP_A_AVAIL);

			nla_put_u32(m, MPIP_AVAIL_A_ADDR, ip("10.0.9.9"));
			nla_put_u16(m, MPIP_AVAIL_A_PORT, 1);
			nla_put_u8(m, MPIP_AVAIL_A_PROTO, 6);
			nla_nest_end(m, n);
		}
		add(m);
		return;
	}
	m = reply(NLM_F_MULTI);
	avail(m, "10.0.1.2", 5201, 6, MPIP_AVAIL_YES, 1, 1, 0x7d01e3b8, 412);
	add(m);
	m = reply(NLM_F_MULTI);
	avail(m, "192.168.0.9", 53, 17, MPIP_AVAIL_PROBING, 1, 3, 0, 0);
	add(m);
	/* A protocol and a state this mpipctl has no name for. */
	m = reply(NLM_F_MULTI);
	avail(m, "10.0.0.7", 65535, 132, 7, 1, 4294967295u, 0xffffffff,
	      86400000);
	add(m);
}

static void endpoint(struct nl_msg *m, const char *addr, uint16_t port)
{
	struct nlattr *n = nest(m, MPIP_NODE_A_ENDPOINT);

	nla_put_u32(m, MPIP_EP_A_ADDR, ip(addr));
	nla_put_u16(m, MPIP_EP_A_PORT, port);
	nla_nest_end(m, n);
}

static void build_nodes(void)
{
	struct nlattr *n, *l;
	struct nl_msg *m;

	if (is("empty"))
		return;
	m = reply(NLM_F_MULTI);
	n = nest(m, MPIP_A_NODE);
	if (is("min")) {		/* the ID alone */
		nla_put_u32(m, MPIP_NODE_A_ID, 0x00000002);
		nla_nest_end(m, n);
		add(m);
		return;
	}
	nla_put_u32(m, MPIP_NODE_A_ID, 0x7d01e3b8);
	l = nest(m, MPIP_NODE_A_ENDPOINTS);
	endpoint(m, "10.0.1.2", 5201);
	endpoint(m, "10.0.2.2", 40000);
	nla_nest_end(m, l);
	l = nest(m, MPIP_NODE_A_ADDRS);
	nla_put_u32(m, MPIP_NODE_A_ADDR, ip("10.0.1.2"));
	if (is("bad-len"))	/* an address of 2 bytes */
		nla_put_u16(m, MPIP_NODE_A_ADDR, 1);
	else
		nla_put_u32(m, MPIP_NODE_A_ADDR, ip("10.0.2.2"));
	nla_nest_end(m, l);
	nla_put_u32(m, MPIP_NODE_A_AGE_MS, 380);
	nla_put_u32(m, MPIP_NODE_A_PEER_ID, 0x11223344);
	nla_put_u8(m, MPIP_NODE_A_VERIFIED, 1);
	nla_nest_end(m, n);
	add(m);
	/* Empty lists: a node that sent nothing yet. */
	m = reply(NLM_F_MULTI);
	n = nest(m, MPIP_A_NODE);
	nla_put_u32(m, MPIP_NODE_A_ID, 0xffffffff);
	nla_nest_end(m, nest(m, MPIP_NODE_A_ENDPOINTS));
	nla_nest_end(m, nest(m, MPIP_NODE_A_ADDRS));
	nla_put_u32(m, MPIP_NODE_A_AGE_MS, 1);
	nla_put_u32(m, MPIP_NODE_A_PEER_ID, 0);
	nla_put_u8(m, MPIP_NODE_A_VERIFIED, 0);
	nla_nest_end(m, n);
	add(m);
}

static void build_sessions(void)
{
	struct nl_msg *m;
	struct nlattr *n;

	if (is("empty"))
		return;
	if (is("min")) {
		m = reply(NLM_F_MULTI);
		session(m, 0x0000abcd, 1, 6, "10.0.1.1", 40000, "10.0.1.2",
			5201, -1, 0, 0, 0);
		add(m);
		return;
	}
	m = reply(NLM_F_MULTI);
	session(m, 0x7d01e3b8, 65535, 6, "10.0.1.1", 40000, "10.0.1.2", 5201,
		1, 1234, 5000000000ULL, 17);
	add(m);
	m = reply(NLM_F_MULTI);
	session(m, 0x00000001, 2, 17, "192.168.0.1", 53, "192.168.0.2", 65535,
		0, 0, 0, 0);
	add(m);
	m = reply(NLM_F_MULTI);
	session(m, 0xffffffff, 3, 132, "10.0.0.1", 1, "10.0.0.2", 2, 0, 5, 1,
		2);
	add(m);
	if (is("bad-len")) {		/* tx_pkts as a u32 */
		m = reply(NLM_F_MULTI);
		n = nest(m, MPIP_A_SESSION);
		nla_put_u32(m, MPIP_SESSION_A_NODE_ID, 1);
		nla_put_u16(m, MPIP_SESSION_A_ID, 1);
		nla_put_u8(m, MPIP_SESSION_A_PROTO, 6);
		nla_put_u32(m, MPIP_SESSION_A_LADDR, 1);
		nla_put_u16(m, MPIP_SESSION_A_LPORT, 1);
		nla_put_u32(m, MPIP_SESSION_A_RADDR, 1);
		nla_put_u16(m, MPIP_SESSION_A_RPORT, 1);
		nla_put_u32(m, MPIP_SESSION_A_TX_PKTS, 1);
		nla_nest_end(m, n);
		add(m);
	}
	if (is("bad-missing")) {	/* no session ID */
		m = reply(NLM_F_MULTI);
		n = nest(m, MPIP_A_SESSION);
		nla_put_u32(m, MPIP_SESSION_A_NODE_ID, 1);
		nla_nest_end(m, n);
		add(m);
	}
}

static void build_paths(void)
{
	struct path up = {
		.node = 0x7d01e3b8, .id = 1, .s = "10.0.1.1", .d = "10.0.1.2",
		.ifindex = 1, .state = MPIP_PATH_UP, .full = 1, .weight = 1000,
		.have_delay = 1, .delay = { 4294967295u, 12345, 678, 9012 },
		.cnt = { 10, 6000000000ULL, 20, 30, 40 }, .fb_age = 250,
		.verified = 1, .seen = "10.0.1.1", .seen_port = 19792,
		.dport = 19792, .have_rtt = 1, .rtt = 612345, .timeout = 1100,
		.mtu = 1400,
	};
	struct path probing = {
		.node = 0x7d01e3b8, .id = 255, .s = "10.0.2.1",
		.d = "10.0.2.2", .ifindex = 0x7ffffff0,
		.state = MPIP_PATH_PROBING, .full = 1, .weight = 1,
		.fb_age = 0xffffffff, .nat = 1, .seen = "198.18.2.1",
		.seen_port = 65535, .encap = 1, .dport = 40000, .learned = 1,
		.tier = 7, .metered = 1, .loss = 100, .lossy = 1, .cold = 1,
		.timeout = 500,
	};
	struct path odd = {
		.node = 0x00000002, .id = 7, .s = "10.0.3.1", .d = "10.0.3.2",
		.state = 9, .full = 0,
	};
	struct nl_msg *m;

	if (is("empty"))
		return;
	if (is("bad-len")) {		/* weight as a u8 */
		struct nlattr *n;

		m = reply(NLM_F_MULTI);
		n = nest(m, MPIP_A_PATH);
		nla_put_u32(m, MPIP_PATH_A_NODE_ID, 1);
		nla_put_u8(m, MPIP_PATH_A_ID, 1);
		nla_put_u32(m, MPIP_PATH_A_SADDR, 1);
		nla_put_u32(m, MPIP_PATH_A_DADDR, 1);
		nla_put_u8(m, MPIP_PATH_A_STATE, 1);
		nla_put_u8(m, MPIP_PATH_A_WEIGHT, 1);
		nla_nest_end(m, n);
		add(m);
		return;
	}
	if (is("bad-missing")) {	/* no state */
		struct nlattr *n;

		m = reply(NLM_F_MULTI);
		n = nest(m, MPIP_A_PATH);
		nla_put_u32(m, MPIP_PATH_A_NODE_ID, 1);
		nla_put_u8(m, MPIP_PATH_A_ID, 1);
		nla_put_u32(m, MPIP_PATH_A_SADDR, 1);
		nla_put_u32(m, MPIP_PATH_A_DADDR, 1);
		nla_nest_end(m, n);
		add(m);
		return;
	}
	if (is("min")) {
		m = reply(NLM_F_MULTI);
		path(m, &odd);
		add(m);
		return;
	}
	m = reply(NLM_F_MULTI);
	path(m, &up);
	add(m);
	m = reply(NLM_F_MULTI);
	path(m, &probing);
	add(m);
}

static void put_link(const char *name, uint32_t ifindex, int advertise,
		     int backup, int nat, int tier, int metered)
{
	struct nl_msg *m = reply(NLM_F_MULTI);
	struct nlattr *n = nest(m, MPIP_A_LINK);

	nla_put_u32(m, MPIP_LINK_A_IFINDEX, ifindex);
	if (name)
		nla_put_string(m, MPIP_LINK_A_NAME, name);
	if (advertise >= 0)
		nla_put_u8(m, MPIP_LINK_A_ADVERTISE, advertise);
	if (backup >= 0)
		nla_put_u8(m, MPIP_LINK_A_BACKUP, backup);
	if (nat >= 0)
		nla_put_u8(m, MPIP_LINK_A_NAT, nat);
	if (tier >= 0)
		nla_put_u8(m, MPIP_LINK_A_TIER, tier);
	if (metered >= 0)
		nla_put_u8(m, MPIP_LINK_A_METERED, metered);
	nla_nest_end(m, n);
	add(m);
}

static void build_rules(void)
{
	struct mpip_rule_range r22 = { 22, 22 }, l200 = { 0, 200 };
	struct nl_msg *m;
	struct nlattr *n;

	if (is("empty"))
		return;
	m = reply(NLM_F_MULTI);
	n = nest(m, MPIP_A_RULE);
	nla_put_u32(m, MPIP_RULE_A_PREF, 100);
	nla_put_u8(m, MPIP_RULE_A_PROTO, 6);
	nla_put(m, MPIP_RULE_A_DPORT, sizeof(r22), &r22);
	nla_put(m, MPIP_RULE_A_LEN, sizeof(l200), &l200);
	if (!is("bad-missing"))
		nla_put_u8(m, MPIP_RULE_A_MODE, MPIP_RULE_MODE_SINGLE);
	nla_put_u8(m, MPIP_RULE_A_FALLBACK, 0);
	nla_put_u64(m, MPIP_RULE_A_PKTS, 7);
	nla_put_u64(m, MPIP_RULE_A_BYTES, 5000000000ULL);
	nla_nest_end(m, n);
	add(m);
	m = reply(NLM_F_MULTI);
	n = nest(m, MPIP_A_RULE);
	nla_put_u32(m, MPIP_RULE_A_PREF, 32000);
	nla_put_u32(m, MPIP_RULE_A_DADDR, inet_addr("192.168.1.2"));
	nla_put_u8(m, MPIP_RULE_A_DPLEN, 32);
	nla_put_u32(m, MPIP_RULE_A_MARK, 0x10);
	nla_put_u32(m, MPIP_RULE_A_MARK_MASK, 0xf0);
	nla_put_flag(m, MPIP_RULE_A_PURE_ACK);
	nla_put_u8(m, MPIP_RULE_A_MODE, MPIP_RULE_MODE_SELECTED);
	nla_put_u8(m, MPIP_RULE_A_FALLBACK, MPIP_RULE_FALLBACK_DROP);
	nla_put_u32(m, MPIP_RULE_A_IFS, 1);
	nla_nest_end(m, n);
	add(m);
	m = reply(NLM_F_MULTI);
	n = nest(m, MPIP_A_RULE);
	nla_put_u32(m, MPIP_RULE_A_PREF, 32001);
	nla_put_u8(m, MPIP_RULE_A_MODE, MPIP_RULE_MODE_PROTECTED);
	nla_put_u8(m, MPIP_RULE_A_FALLBACK, 0);
	nla_put_u8(m, MPIP_RULE_A_COPIES, 3);
	nla_put_u32(m, MPIP_RULE_A_IFS, 1);
	nla_put_flag(m, MPIP_RULE_A_IFS_DENY);
	nla_put_flag(m, MPIP_RULE_A_NOMETERED);
	nla_nest_end(m, n);
	add(m);
}

static void build_links(void)
{
	if (is("empty"))
		return;
	put_link("eth0", 2, 1, 0, -1, 0, 0);
	/* no backup attribute: a module before backup links */
	put_link("wlp0s20f3", 0x7fffffff, 0, -1, MPIP_LINK_NAT_NONE, -1, -1);
	/* no tier or metered attribute: a module before tiers */
	put_link("wwan0", 4, 1, 1, MPIP_LINK_NAT_UDP, -1, -1);
	put_link("wwan1", 5, 1, 1, MPIP_LINK_NAT_FAKETCP, 3, 1);
	if (is("bad-missing"))		/* no advertise */
		put_link("eth1", 3, -1, -1, -1, -1, -1);
}

/*
 * An NLMSG_ERROR as the kernel sends it: struct nlmsgerr with the
 * request's header, the request's payload too unless NLM_F_CAPPED, then
 * the extack TLVs (NLM_F_ACK_TLVS).
 */
static void send_error(int error, bool capped, const char *text, bool range)
{
	struct nlmsghdr *req = (struct nlmsghdr *)req_buf;
	struct nlmsgerr e = { .error = error, .msg = *req };
	int flags = (capped ? NLM_F_CAPPED : 0) |
		    (text || range ? NLM_F_ACK_TLVS : 0);
	struct nl_msg *m = nlmsg_alloc_simple(NLMSG_ERROR, flags);

	nlmsg_append(m, &e, sizeof(e), NLMSG_ALIGNTO);
	if (!capped)
		nlmsg_append(m, req_buf + NLMSG_HDRLEN,
			     req->nlmsg_len - NLMSG_HDRLEN, NLMSG_ALIGNTO);
	if (text)
		nla_put_string(m, NLMSGERR_ATTR_MSG, text);
	if (range) {
		struct nlattr *n = nest(m, NLMSGERR_ATTR_POLICY);

		nla_put_u32(m, NL_POLICY_TYPE_ATTR_TYPE, NL_ATTR_TYPE_U32);
		put_u64(m, NL_POLICY_TYPE_ATTR_MIN_VALUE_U,
			NL_POLICY_TYPE_ATTR_PAD, 1);
		put_u64(m, NL_POLICY_TYPE_ATTR_MAX_VALUE_U,
			NL_POLICY_TYPE_ATTR_PAD, 100);
		nla_nest_end(m, n);
	}
	cb_err(NULL, nlmsg_data(nlmsg_hdr(m)), cb_arg);
	nlmsg_free(m);
}

int fake_recvmsgs(struct nl_sock *sk, struct nl_cb *cb)
{
	bool dump = (req_flags & NLM_F_DUMP) == NLM_F_DUMP;
	struct nl_msg *end;
	int i;

	(void)sk, (void)cb;
	if (is("err-range")) {
		send_error(-ERANGE, true, "integer out of range", true);
		return 0;
	}
	if (is("err-perm")) {
		send_error(-EPERM, true, NULL, false);
		return 0;
	}
	if (is("err-plain")) {
		send_error(-EINVAL, true, NULL, false);
		return 0;
	}
	if (is("err-uncapped")) {
		send_error(-EINVAL, false, "missing attribute", false);
		return 0;
	}
	nmsgs = 0;
	switch (req_cmd) {
	case MPIP_CMD_GET_STATUS:	build_status(); break;
	case MPIP_CMD_GET_AVAIL:	build_avail(); break;
	case MPIP_CMD_GET_NODES:	build_nodes(); break;
	case MPIP_CMD_GET_STATS:	build_stats(); break;
	case MPIP_CMD_GET_CONFIG:	build_config(); break;
	case MPIP_CMD_GET_SESSIONS:	build_sessions(); break;
	case MPIP_CMD_GET_PATHS:	build_paths(); break;
	case MPIP_CMD_GET_LINKS:	build_links(); break;
	case MPIP_CMD_GET_RULES:	build_rules(); break;
	}
	for (i = 0; i < nmsgs; i++) {
		cb_valid(msgs[i], cb_arg);
		nlmsg_free(msgs[i]);
	}
	end = nlmsg_alloc_simple(dump ? NLMSG_DONE : NLMSG_ERROR,
				 dump && is("err-dump") ? NLM_F_ACK_TLVS : 0);
	if (dump) {
		int err = is("err-dump") ? -EMSGSIZE : 0;

		nlmsg_append(end, &err, sizeof(err), NLMSG_ALIGNTO);
		if (err)
			nla_put_string(end, NLMSGERR_ATTR_MSG, "dump failed");
		cb_finish(end, cb_arg);
	} else {
		cb_ack(end, cb_arg);
	}
	nlmsg_free(end);
	return 0;
}

int main(int argc, char **argv)
{
	return mpipctl_main(argc, argv);
}
EOF
}

t_fake_build() {
	local cflags libs
	cflags=$(pkg-config --cflags libnl-3.0 libnl-genl-3.0 2>/dev/null) &&
		libs=$(pkg-config --libs libnl-genl-3.0 libnl-3.0 2>/dev/null) ||
		fail "no libnl-genl-3.0" || return 1
	write_fake
	# The same flags as userspace/Makefile: no warnings allowed.
	# shellcheck disable=SC2086
	if ! ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$ROOT/userspace" \
		-I"$ROOT/kernel/uapi" $cflags -Dmain=mpipctl_main \
		-DMPIPCTL_VERSION="\"$VERSION\"" \
		-c -o "$TMP/mpipctl_main.o" "$ROOT/userspace/mpipctl.c" \
		>"$TMP/cc.log" 2>&1; then
		fail "cannot compile: $(head -c 600 "$TMP/cc.log")"
		return 1
	fi
	# shellcheck disable=SC2086
	# -n NAME looks in $TMP/netns: "self" is this process's network
	# namespace, "file" is no namespace at all.
	mkdir -p "$TMP/netns" && : >"$TMP/netns/file" &&
		ln -sf /proc/self/ns/net "$TMP/netns/self" ||
		fail "cannot make $TMP/netns" || return 1
	# shellcheck disable=SC2086
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$ROOT/userspace" \
		-I"$ROOT/kernel/uapi" $cflags -DFAKE_VERSION="\"$VERSION\"" \
		-DNETNS_RUN_DIR="\"$TMP/netns\"" -o "$TMP/fake" "$TMP/fake.c" \
		"$TMP/mpipctl_main.o" "$ROOT/userspace/show.c" "$ROOT/userspace/rule.c" \
		"$ROOT/userspace/batch.c" "$ROOT/userspace/json.c" "$ROOT/userspace/table.c" \
		"$ROOT/userspace/monitor.c" $libs \
		>"$TMP/cc.log" 2>&1 ||
		fail "cannot compile: $(head -c 600 "$TMP/cc.log")"
}

# fake SCENARIO ARGS...: like run, against the fake kernel.
fake() {
	local scenario=$1
	shift
	[ -x "$TMP/fake" ] || { rc=99; out=""; err="fake kernel not built"; return; }
	FAKE=$scenario FAKE_LOG="$TMP/log" "$TMP/fake" "$@" \
		>"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# expect_fake SCENARIO WANT ARGS...: exit 0, nothing on stderr, stdout WANT.
expect_fake() {
	local scenario=$1 want=$2
	shift 2
	fake "$scenario" "$@"
	[ "$rc" -eq 0 ] || fail "exit $rc (stderr: $err)" || return 1
	[ -z "$err" ] || fail "stderr: $err" || return 1
	[ "$out" = "$want" ] || fail "stdout: $out" || return 1
}

# expect_fake_error SCENARIO STATUS WANT ARGS...: exit STATUS, nothing on
# stdout, the one line WANT on stderr.
expect_fake_error() {
	local scenario=$1 status=$2 want=$3
	shift 3
	fake "$scenario" "$@"
	[ "$rc" -eq "$status" ] || fail "exit $rc, expected $status (stdout: $out, stderr: $err)" || return 1
	one_line_error || return 1
	[ "$err" = "$want" ] || fail "stderr: $err"
}

# expect_malformed SCENARIO ARGS...: exit 1, one line, nothing printed.
expect_malformed() {
	expect_fake_error "$1" 1 "mpipctl: show: malformed reply from the kernel" "${@:2}"
}

# expect_request REQUEST STDOUT ARGS...: the one request sent was REQUEST
# and the output STDOUT.
expect_request() {
	local want=$1 stdout=$2
	shift 2
	rm -f "$TMP/log"
	expect_fake full "$stdout" "$@" || return 1
	[ "$(cat "$TMP/log" 2>/dev/null)" = "$want" ] ||
		fail "request: $(cat "$TMP/log" 2>/dev/null)"
}

# expect_write_error SCENARIO ARGS...: with stdout on /dev/full, exit 1
# and say so; SCENARIO "none" runs the real mpipctl, without a kernel.
expect_write_error() {
	local scenario=$1
	shift
	if [ "$scenario" = none ]; then
		"$MPIPCTL" "$@" >/dev/full 2>"$TMP/err" </dev/null
	else
		FAKE=$scenario "$TMP/fake" "$@" >/dev/full 2>"$TMP/err" </dev/null
	fi
	rc=$?
	err=$(cat "$TMP/err")
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (stderr: $err)" || return 1
	[ "$err" = "mpipctl: write error: No space left on device" ] ||
		fail "stderr: $err"
}

# expect_closed_stdout STATUS STDERR ARGS...: with stdout closed.
expect_closed_stdout() {
	local status=$1 want=$2
	shift 2
	FAKE=full "$TMP/fake" "$@" >&- 2>"$TMP/err" </dev/null
	rc=$?
	err=$(cat "$TMP/err")
	[ "$rc" -eq "$status" ] || fail "exit $rc, expected $status (stderr: $err)" || return 1
	[ "$err" = "$want" ] || fail "stderr: $err"
}

# The netns "self" can be entered only with CAP_SYS_ADMIN.
t_netns_self() {
	if nsenter --net=/proc/self/ns/net true 2>/dev/null; then
		expect_fake full "$STATUS_TEXT" -n self status
	else
		expect_fake_error full 1 "mpipctl: cannot enter network namespace 'self': Operation not permitted" -n self status
	fi
}

# The man page and the example in netlink.rst show the version of
# kernel/mpip.h.
t_doc_version() {
	local f
	grep -q "^\.TH MPIPCTL 8 .* \"mpip $VERSION\"" "$ROOT/Documentation/mpipctl.8" ||
		fail "mpipctl.8: .TH does not say mpip $VERSION" || return 1
	for f in "$ROOT/Documentation/mpipctl.8" "$ROOT/Documentation/netlink.rst"; do
		grep -qx " *version: *$VERSION" "$f" ||
			fail "$f: example status lacks version $VERSION" || return 1
		! grep -E '^ *version: ' "$f" | grep -qvx " *version: *$VERSION" ||
			fail "$f: another version in an example" || return 1
	done
}

# expect_get_missing KEY: an older module sends no KEY.
expect_get_missing() {
	local key=$1
	fake min get "$key"
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (stdout: $out)" || return 1
	one_line_error || return 1
	[ "$err" = "mpipctl: get: no $key in the kernel's reply" ] ||
		fail "stderr: $err"
}

SESSIONS_JSON='[{"node_id":"0x7d01e3b8","id":65535,"proto":"tcp","laddr":"10.0.1.1","lport":40000,"raddr":"10.0.1.2","rport":5201,"confirmed":true,"age_ms":1234,"tx_pkts":5000000000,"rx_pkts":17},{"node_id":"0x00000001","id":2,"proto":"udp","laddr":"192.168.0.1","lport":53,"raddr":"192.168.0.2","rport":65535,"confirmed":false,"age_ms":0,"tx_pkts":0,"rx_pkts":0},{"node_id":"0xffffffff","id":3,"proto":"132","laddr":"10.0.0.1","lport":1,"raddr":"10.0.0.2","rport":2,"confirmed":false,"age_ms":5,"tx_pkts":1,"rx_pkts":2}]'
SESSIONS_MIN_JSON='[{"node_id":"0x0000abcd","id":1,"proto":"tcp","laddr":"10.0.1.1","lport":40000,"raddr":"10.0.1.2","rport":5201,"confirmed":false,"age_ms":0,"tx_pkts":0,"rx_pkts":0}]'
SESSIONS_TEXT='NODE           ID  PROTO  LOCAL           REMOTE             CONFIRMED     AGE     TX_PKTS  RX_PKTS
0x7d01e3b8  65535  tcp    10.0.1.1:40000  10.0.1.2:5201      yes        1.234s  5000000000       17
0x00000001      2  udp    192.168.0.1:53  192.168.0.2:65535  no         0.000s           0        0
0xffffffff      3  132    10.0.0.1:1      10.0.0.2:2         no         0.005s           1        2'
# Interface 1 is the loopback device in every network namespace.
PATHS_JSON='[{"node_id":"0x7d01e3b8","id":1,"saddr":"10.0.1.1","daddr":"10.0.1.2","ifindex":1,"dev":"lo","state":"up","weight":1000,"have_delay":true,"min_delay_us":4294967295,"delay_us":12345,"qdelay_us":678,"max_qdelay_us":9012,"tx_pkts":10,"tx_bytes":6000000000,"rx_pkts":20,"rx_bytes":30,"feedback":40,"fb_age_ms":250,"verified":true,"nat":false,"seen":"10.0.1.1:19792","encap":"none","dport":19792,"learned":false,"tier":0,"metered":false,"loss_pct":0,"lossy":false,"cold":false,"rtt_us":612345,"timeout_ms":1100,"mtu":1400},{"node_id":"0x7d01e3b8","id":255,"saddr":"10.0.2.1","daddr":"10.0.2.2","ifindex":2147483632,"dev":null,"state":"probing","weight":1,"have_delay":false,"min_delay_us":0,"delay_us":0,"qdelay_us":0,"max_qdelay_us":0,"tx_pkts":0,"tx_bytes":0,"rx_pkts":0,"rx_bytes":0,"feedback":0,"fb_age_ms":null,"verified":false,"nat":true,"seen":"198.18.2.1:65535","encap":"udp","dport":40000,"learned":true,"tier":7,"metered":true,"loss_pct":100,"lossy":true,"cold":true,"rtt_us":null,"timeout_ms":500,"mtu":null}]'
PATHS_MIN_JSON='[{"node_id":"0x00000002","id":7,"saddr":"10.0.3.1","daddr":"10.0.3.2","ifindex":0,"dev":null,"state":"9","weight":0,"have_delay":false,"min_delay_us":0,"delay_us":0,"qdelay_us":0,"max_qdelay_us":0,"tx_pkts":0,"tx_bytes":0,"rx_pkts":0,"rx_bytes":0,"feedback":0,"fb_age_ms":null,"verified":false,"nat":false,"seen":null,"encap":"none","dport":0,"learned":false,"tier":0,"metered":false,"loss_pct":0,"lossy":false,"cold":false,"rtt_us":null,"timeout_ms":null,"mtu":null}]'
PATHS_TEXT='NODE         ID  SRC       DST             DEV          STATE    WEIGHT      MIN_US  DELAY_US  Q_US  QMAX_US  TX_PKTS    TX_BYTES  RX_PKTS  RX_BYTES  FB  FB_AGE  VERIFIED  SEEN_AS           ENCAP  TIER  METERED  LOSS        RTT_US  TIMEOUT   MTU
0x7d01e3b8    1  10.0.1.1  10.0.1.2        lo           up         1000  4294967295     12345   678     9012       10  6000000000       20        30  40  0.250s  yes       10.0.1.1:19792    none      0  no       0%          612345   1.100s  1400
0x7d01e3b8  255  10.0.2.1  10.0.2.2:40000  #2147483632  probing       1           -         -     -        -        0           0        0         0   0       -  nat       198.18.2.1:65535  udp       7  cold     100% lossy       -   0.500s     -'
PATHS_MIN_TEXT='NODE        ID  SRC       DST       DEV  STATE  WEIGHT  MIN_US  DELAY_US  Q_US  QMAX_US  TX_PKTS  TX_BYTES  RX_PKTS  RX_BYTES  FB  FB_AGE  VERIFIED  SEEN_AS  ENCAP  TIER  METERED  LOSS  RTT_US  TIMEOUT  MTU
0x00000002   7  10.0.3.1  10.0.3.2  -    9           0       -         -     -        -        0         0        0         0   0       -  no        -        none      0  no       0%         -        -    -'
AVAIL_TEXT='ADDRESS       PORT  PROTO  STATE       QUERIES  NODE-ID            AGE
10.0.1.2      5201  tcp    yes               1  0x7d01e3b8      0.412s
192.168.0.9     53  udp    probing           3  -               0.000s
10.0.0.7     65535  132    7        4294967295  0xffffffff  86400.000s'
# An unknown protocol and state are strings too, as in the table.
AVAIL_JSON='[{"addr":"10.0.1.2","port":5201,"proto":"tcp","state":"yes","queries":1,"node_id":"0x7d01e3b8","age_ms":412},{"addr":"192.168.0.9","port":53,"proto":"udp","state":"probing","queries":3,"node_id":null,"age_ms":0},{"addr":"10.0.0.7","port":65535,"proto":"132","state":"7","queries":4294967295,"node_id":"0xffffffff","age_ms":86400000}]'
AVAIL_MIN_TEXT='ADDRESS   PORT  PROTO  STATE  QUERIES  NODE-ID     AGE
10.0.9.9     1  tcp    no           0  -        0.000s'
AVAIL_MIN_JSON='[{"addr":"10.0.9.9","port":1,"proto":"tcp","state":"no","queries":0,"node_id":null,"age_ms":0}]'
NODES_TEXT='NODE-ID     PEER-ID     VERIFIED  ENDPOINTS                     ADDRESSES             AGE
0x7d01e3b8  0x11223344  yes       10.0.1.2:5201,10.0.2.2:40000  10.0.1.2,10.0.2.2  0.380s
0xffffffff  -           no        -                             -                  0.001s'
NODES_JSON='[{"node_id":"0x7d01e3b8","peer_id":"0x11223344","verified":true,"endpoints":[{"addr":"10.0.1.2","port":5201},{"addr":"10.0.2.2","port":40000}],"addrs":["10.0.1.2","10.0.2.2"],"age_ms":380},{"node_id":"0xffffffff","peer_id":null,"verified":false,"endpoints":[],"addrs":[],"age_ms":1}]'
NODES_MIN_TEXT='NODE-ID     PEER-ID  VERIFIED  ENDPOINTS  ADDRESSES     AGE
0x00000002  -        no        -          -          0.000s'
STATUS_JSON='{"enabled":true,"node_id":"0x3f2a9c41","version":"'$VERSION'","avail":2,"nodes":1,"sessions":3,"paths":4,"avail_chain":5,"nodes_chain":6}'
STATUS_MIN_JSON='{"enabled":true,"node_id":"0x3f2a9c41","version":"'$VERSION'","avail":2,"nodes":1}'
STATUS_TEXT="mpip:           enabled
node id:        0x3f2a9c41
version:        $VERSION
avail entries:  2
node entries:   1
sessions:       3
paths:          4
avail chain:    5
node chain:     6"
STATS_JSON='{"tx_cm":1000,"rx_cm":2000,"tx_query":3000,"rx_query":4000,"tx_confirm":5000,"rx_confirm":6000,"rx_ctrl":7000,"probe_giveup":8000,"peer_lost":9000,"mss_clamped":10000,"tx_gso_split":11000,"tx_no_room":12000,"drop_nomem":13000,"table_full":14000,"rx_not_local":15000,"session_new":16000,"session_expired":17000,"tx_rewrite":18000,"rx_restore":19000,"tx_feedback":20000,"rx_feedback":21000,"tx_heartbeat":22000,"rx_heartbeat":23000,"path_up":24000,"path_down":25000,"tx_ip_change":26000,"rx_ip_change":27000,"drop_session":28000,"drop_noroute":29000,"tx_gso_kept":30000,"rx_gso_kept":31000,"reorder_held":32000,"reorder_in_order":33000,"reorder_timeout":34000,"reorder_overflow":35000,"tx_bare":36000,"reorder_lost":37000,"tx_steered":38000,"rx_reassembled":39000,"tx_policy_kept":40000,"rx_icmp_pmtu":41000,"rx_spoofed":42000,"rx_auth_fail":43000,"rx_replay":44000,"rx_v1":45000,"rr_verified":46000,"ctrl_limited":47000,"rr_held":48000,"rx_plain":49000,"rule_dropped":50000,"rx_dup":51000,"event_drop":52000,"backup_hold":53000,"rr_nat":54000,"path_learned":55000,"tx_encap":56000,"rx_encap":57000,"rx_encap_bad":58000,"tx_encap_frag":59000,"ftcp_ctrl":60000,"ftcp_open":61000,"rx_gro_unopened":62000,"table_evict":63000,"ctrl_budget":64000,"path_lossy":65000,"rx_encap_gro":66000,"rx_icmp_refused":67000,"session_unproven":68000,"session_resync":69000,"rx_pair_taken":70000,"tx_unknown":71000,"tx_encap_gso":72000,"tx_resend":73000,"tx_path_mtu":74000,"stat_200":1099511627776}'
CONFIG_JSON='{"query_threshold":10,"peer_timeout_ms":20,"avail_timeout_ms":30,"node_timeout_ms":40,"session_timeout_ms":50,"weight_step":60,"weight_interval_ms":70,"heartbeat_ms":80,"path_timeout_ms":90,"delay_smooth_shift":100,"tx_gso":110,"reorder":120,"reorder_max_pkts":130,"reorder_max_hold_ms":140,"weight_trend_ms":150,"weight_boost":160,"bare_cm_ms":170,"queue_steer":180,"rule_event_pkts":190,"nat_mode":200,"ctrl_pps":210,"loss_pct":220,"weight_tie_us":230}'
LINKS_JSON='[{"dev":"eth0","ifindex":2,"advertise":true,"backup":false,"tier":0,"metered":false,"nat":"default"},{"dev":"wlp0s20f3","ifindex":2147483647,"advertise":false,"backup":false,"tier":0,"metered":false,"nat":"none"},{"dev":"wwan0","ifindex":4,"advertise":true,"backup":true,"tier":1,"metered":false,"nat":"udp"},{"dev":"wwan1","ifindex":5,"advertise":true,"backup":true,"tier":3,"metered":true,"nat":"faketcp"}]'
LINKS_TEXT='DEV           IFINDEX  ADVERTISE  BACKUP  TIER  METERED  NAT
eth0                2  on         no         0  no       default
wlp0s20f3  2147483647  off        no         0  no       none
wwan0               4  on         yes        1  no       udp
wwan1               5  on         yes        3  yes      faketcp'
RULES_TEXT=' PREF  PKTS       BYTES  RULE
  100     7  5000000000  proto tcp dport 22-22 len 0-200 mode single
32000     0           0  to 192.168.1.2/32 fwmark 0x10/0xf0 pure-ack mode selected dev lo fallback drop
32001     0           0  mode protected nodev lo nometered copies 3'
RULES_JSON='[{"pref":100,"rule":"proto tcp dport 22-22 len 0-200 mode single","pkts":7,"bytes":5000000000},{"pref":32000,"rule":"to 192.168.1.2/32 fwmark 0x10/0xf0 pure-ack mode selected dev lo fallback drop","pkts":0,"bytes":0},{"pref":32001,"rule":"mode protected nodev lo nometered copies 3","pkts":0,"bytes":0}]'

have_cc() {
	command -v "${CC:-cc}" >/dev/null 2>&1 && pkg-config --exists libnl-3.0 2>/dev/null
}

have_fake() {
	have_cc && pkg-config --exists libnl-genl-3.0 2>/dev/null
}

echo "KTAP version 1"
PLAN=270
echo "1..$PLAN"

check "--help exits 0 and lists every command" t_help --help
check "-h exits 0 and lists every command" t_help -h
check "help exits 0 and lists every command" t_help help
check "help with an argument exits 1" expect_usage_error "help: unexpected argument 'x'" help x
check "-V prints the version of kernel/mpip.h" t_version -V
check "--version prints the version of kernel/mpip.h" t_version --version
check "the man page and netlink.rst show the same version" t_doc_version
check "no command exits 1" expect_usage_error "missing command"
check "unknown command exits 1 with one line" expect_usage_error "unknown command 'frobnicate'" frobnicate
check "unknown option exits 1" expect_usage_error "mpipctl: unknown option '--frobnicate' (try 'mpipctl --help')" --frobnicate
check "unknown long option named without its value" expect_usage_error "unknown option '--frobnicate' (" --frobnicate=1 status
check "bad option first in a cluster is named" expect_usage_error "mpipctl: unknown option '-x' (try 'mpipctl --help')" -xj status
check "bad option last in a cluster is named" expect_usage_error "unknown option '-x' (" -jx status
check "bad option in a cluster after a long option is named" expect_usage_error "unknown option '-x' (" --json -xj status
check "-Vx exits 1" expect_usage_error "unknown option '-x' (" -Vx
check "-hx exits 1" expect_usage_error "unknown option '-x' (" -hx
check "--json=1 exits 1" expect_usage_error "option '--json' takes no argument" --json=1 status
check "-n without a name exits 1" expect_usage_error "option '-n' needs an argument" -n
check "--netns without a name exits 1" expect_usage_error "option '--netns' needs an argument" --netns
check "-jn without a name exits 1" expect_usage_error "option '-n' needs an argument" -jn
check "-n with a slash exits 1" expect_usage_error "invalid network namespace name 'a/b'" -n a/b status
check "-n .. exits 1" expect_usage_error "invalid network namespace name '..'" -n .. status
check "-n with an empty name exits 1" expect_usage_error "invalid network namespace name ''" -n "" status
check "-n: arguments are checked before the namespace" expect_usage_error "unknown tunable 'bogus'" -n nope set bogus 1
check "options go before the command" expect_usage_error "stats: option '-j' must come before the command (usage: mpipctl " stats -j
check "show -j paths says options go before the command" expect_usage_error "show: option '-j' must come before the command" show -j paths
check "get --json says options go before the command" expect_usage_error "get: option '--json' must come before the command" get --json
check "set KEY -5 is a bad value, not an option" expect_usage_error "invalid value '-5'" set query_threshold -5
check "-j enable exits 1" expect_usage_error "enable: option -j applies to status, show, stats, get and monitor only" -j enable
check "-j disable exits 1" expect_usage_error "disable: option -j applies to" -j disable
check "-j set exits 1" expect_usage_error "set: option -j applies to" -j set query_threshold 5
check "-j flush exits 1" expect_usage_error "flush: option -j applies to" -j flush
check "-j help exits 1" expect_usage_error "help: option -j applies to" -j help
check "--help on a full disk exits 1" expect_write_error none --help
check "help on a full disk exits 1" expect_write_error none help
check "-V on a full disk exits 1" expect_write_error none -V
check "status with an argument exits 1" expect_usage_error "unexpected argument 'now'" status now
check "show without a table exits 1" expect_usage_error "missing table" show
check "show with an unknown table exits 1" expect_usage_error "unknown table 'foo'" show foo
check "show with an extra argument exits 1" expect_usage_error "unexpected argument" show avail x
check "show sessions with an extra argument exits 1" expect_usage_error "unexpected argument 'x'" show sessions x
check "show paths -j says options go before the command" expect_usage_error "show: option '-j' must come before the command" show paths -j
check "show lists all four tables" expect_usage_error "avail|nodes|sessions|paths" show path
check "show table names are case-sensitive" expect_usage_error "unknown table 'PATHS'" show PATHS
check "get with a near-miss key exits 1" expect_usage_error "unknown tunable 'heartbeat'" get heartbeat
check "get's error lists the new tunables" expect_usage_error "delay_smooth_shift, tx_gso, reorder, reorder_max_pkts, reorder_max_hold_ms, weight_trend_ms, weight_boost, bare_cm_ms, queue_steer, rule_event_pkts, nat_mode, ctrl_pps, loss_pct, weight_tie_us)" get x
check "set's error lists the new tunables" expect_usage_error "weight_trend_ms, weight_boost, bare_cm_ms, queue_steer, rule_event_pkts, nat_mode, ctrl_pps, loss_pct, weight_tie_us)" set x 1
check "get with two keys exits 1" expect_usage_error "unexpected argument 'heartbeat_ms'" get weight_step heartbeat_ms
check "get with an unknown key exits 1" expect_usage_error "unknown tunable 'foo'" get foo
check "set without arguments exits 1" expect_usage_error "missing KEY and VALUE" set
check "set without a value exits 1" expect_usage_error "missing VALUE" set query_threshold
check "set with an unknown key exits 1" expect_usage_error "unknown tunable 'bogus'" set bogus 5
check "set non-numeric exits 1" expect_usage_error "invalid value 'abc'" set query_threshold abc
check "set negative exits 1" expect_usage_error "invalid value '-5'" set query_threshold -5
check "set empty exits 1" expect_usage_error "invalid value ''" set query_threshold ""
check "set trailing garbage exits 1" expect_usage_error "invalid value '5x'" set query_threshold 5x
check "set leading blank exits 1" expect_usage_error "invalid value ' 5'" set query_threshold " 5"
check "set leading plus exits 1" expect_usage_error "invalid value '+5'" set query_threshold +5
check "set hex exits 1" expect_usage_error "invalid value '0x10'" set query_threshold 0x10
check "set overflow 99999999999 exits 1" expect_usage_error "out of range" set peer_timeout_ms 99999999999
check "set 2^32 exits 1" expect_usage_error "out of range" set node_timeout_ms 4294967296
check "set 2^64 exits 1" expect_usage_error "out of range" set avail_timeout_ms 18446744073709551616
check "set with an extra argument exits 1" expect_usage_error "unexpected argument '6'" set query_threshold 5 6
check "set new tunable without a value exits 1" expect_usage_error "missing VALUE" set weight_step
check "set new tunable non-numeric exits 1" expect_usage_error "invalid value 'fast' for heartbeat_ms" set heartbeat_ms fast
check "set new tunable negative exits 1" expect_usage_error "invalid value '-1' for delay_smooth_shift" set delay_smooth_shift -1
check "set new tunable with a unit exits 1" expect_usage_error "invalid value '300ms'" set path_timeout_ms 300ms
check "set new tunable 2^32 exits 1" expect_usage_error "out of range" set session_timeout_ms 4294967296
check "set new tunable float exits 1" expect_usage_error "invalid value '1.5'" set weight_interval_ms 1.5
check "set weight_trend_ms with a unit exits 1" expect_usage_error "invalid value '500ms' for weight_trend_ms" set weight_trend_ms 500ms
check "set weight_boost negative exits 1" expect_usage_error "invalid value '-1' for weight_boost" set weight_boost -1
check "set upper-case key exits 1" expect_usage_error "unknown tunable 'WEIGHT_STEP'" set WEIGHT_STEP 10

not_loaded_args=("status" "-j status" "enable" "disable" "show avail" "-j show nodes"
		 "show sessions" "-j show sessions" "show paths" "-j show paths"
		 "stats" "get" "set query_threshold 4294967295")
# The new tunables pass the argument checks (value 0: the kernel, not
# mpipctl, checks ranges).
for key in $NEW_TUNABLES; do
	not_loaded_args+=("get $key" "set $key 0")
done
for args in "${not_loaded_args[@]}"; do
	if $module_loaded; then
		skip "$args without the module exits 2" "mpip module is loaded"
	else
		# shellcheck disable=SC2086
		check "$args without the module exits 2" t_not_loaded $args
	fi
done

if have_cc; then
	check "JSON writer escapes and nests correctly" t_json
else
	skip "JSON writer escapes and nests correctly" "no C compiler or libnl-3 headers"
fi

# fcheck NAME FUNCTION [ARGS...]: check, against the fake kernel.
fcheck() {
	if ! have_fake; then
		skip "$1" "no C compiler or libnl-genl-3 headers"
	elif [ "$2" != t_fake_build ] && [ ! -x "$TMP/fake" ]; then
		skip "$1" "the fake kernel did not build"
	else
		check "$@"
	fi
}

fcheck "fake kernel builds" t_fake_build
fcheck "-j show sessions" expect_fake full "$SESSIONS_JSON" -j show sessions
fcheck "show sessions table" expect_fake full "$SESSIONS_TEXT" show sessions
fcheck "-j show sessions, optional attributes absent" expect_fake min "$SESSIONS_MIN_JSON" -j show sessions
fcheck "-j show sessions, empty" expect_fake empty "[]" -j show sessions
fcheck "show sessions, empty: header only" expect_fake empty \
	"NODE  ID  PROTO  LOCAL  REMOTE  CONFIRMED  AGE  TX_PKTS  RX_PKTS" show sessions
fcheck "show sessions, wrong attribute size" expect_malformed bad-len show sessions
fcheck "-j show sessions, wrong attribute size" expect_malformed bad-len -j show sessions
fcheck "show sessions, session ID missing" expect_malformed bad-missing show sessions
fcheck "-j show paths" expect_fake full "$PATHS_JSON" -j show paths
fcheck "show paths table" expect_fake full "$PATHS_TEXT" show paths
fcheck "-j show paths, optional attributes absent" expect_fake min "$PATHS_MIN_JSON" -j show paths
fcheck "show paths, optional attributes absent" expect_fake min "$PATHS_MIN_TEXT" show paths
fcheck "-j show paths, empty" expect_fake empty "[]" -j show paths
fcheck "show paths, wrong attribute size" expect_malformed bad-len show paths
fcheck "-j show paths, state missing" expect_malformed bad-missing -j show paths
fcheck "show sessions sends a GET_SESSIONS dump" expect_request "cmd=9 version=1 dump=1" "$SESSIONS_TEXT" show sessions
fcheck "-j show paths sends a GET_PATHS dump" expect_request "cmd=10 version=1 dump=1" "$PATHS_JSON" -j show paths
fcheck "show avail table" expect_fake full "$AVAIL_TEXT" show avail
fcheck "-j show avail" expect_fake full "$AVAIL_JSON" -j show avail
fcheck "show avail, optional attributes absent" expect_fake min "$AVAIL_MIN_TEXT" show avail
fcheck "-j show avail, optional attributes absent" expect_fake min "$AVAIL_MIN_JSON" -j show avail
fcheck "show avail, empty: header only" expect_fake empty \
	"ADDRESS  PORT  PROTO  STATE  QUERIES  NODE-ID  AGE" show avail
fcheck "-j show avail, empty" expect_fake empty "[]" -j show avail
fcheck "show avail, state missing" expect_malformed bad-missing show avail
fcheck "-j show avail, state missing" expect_malformed bad-missing -j show avail
fcheck "show nodes table" expect_fake full "$NODES_TEXT" show nodes
fcheck "-j show nodes" expect_fake full "$NODES_JSON" -j show nodes
fcheck "show nodes, optional attributes absent" expect_fake min "$NODES_MIN_TEXT" show nodes
fcheck "-j show nodes, optional attributes absent" expect_fake min \
	'[{"node_id":"0x00000002","peer_id":null,"verified":false,"endpoints":[],"addrs":[],"age_ms":0}]' -j show nodes
fcheck "show nodes, empty: header only" expect_fake empty \
	"NODE-ID  PEER-ID  VERIFIED  ENDPOINTS  ADDRESSES  AGE" show nodes
fcheck "-j show nodes, empty" expect_fake empty "[]" -j show nodes
fcheck "show nodes, address of the wrong size" expect_malformed bad-len show nodes
fcheck "-j show nodes, address of the wrong size" expect_malformed bad-len -j show nodes
fcheck "show avail sends a GET_AVAIL dump" expect_request "cmd=3 version=1 dump=1" "$AVAIL_TEXT" show avail
fcheck "-j show nodes sends a GET_NODES dump" expect_request "cmd=4 version=1 dump=1" "$NODES_JSON" -j show nodes
fcheck "status sends GET_STATUS" expect_request "cmd=1 version=1 dump=0" "$STATUS_TEXT" status
fcheck "-j stats sends GET_STATS" expect_request "cmd=5 version=1 dump=0" "$STATS_JSON" -j stats
fcheck "-j get sends GET_CONFIG" expect_request "cmd=6 version=1 dump=0" "$CONFIG_JSON" -j get
fcheck "enable sends SET_STATUS with enabled 1" expect_request "cmd=2 version=1 dump=0 enabled:1=1" "" enable
fcheck "disable sends SET_STATUS with enabled 0" expect_request "cmd=2 version=1 dump=0 enabled:1=0" "" disable
fcheck "flush sends FLUSH without attributes" expect_request "cmd=8 version=1 dump=0" "" flush
fcheck "set out of range: extack and the allowed range" expect_fake_error err-range 1 \
	"mpipctl: set: Numerical result out of range: integer out of range (allowed range for query_threshold: 1..100)" \
	set query_threshold 500
fcheck "kernel range error without a key: the allowed range" expect_fake_error err-range 1 \
	"mpipctl: get: Numerical result out of range: integer out of range (allowed range: 1..100)" -j get
fcheck "EPERM: permission denied" expect_fake_error err-perm 1 \
	"mpipctl: permission denied (CAP_NET_ADMIN needed)" enable
fcheck "error without extack" expect_fake_error err-plain 1 "mpipctl: flush: Invalid argument" flush
fcheck "extack after the echoed request" expect_fake_error err-uncapped 1 \
	"mpipctl: disable: Invalid argument: missing attribute" disable
fcheck "a failed dump prints nothing of it" expect_fake_error err-dump 1 \
	"mpipctl: show: Message too long: dump failed" show paths
fcheck "-j: a failed dump prints nothing of it" expect_fake_error err-dump 1 \
	"mpipctl: show: Message too long: dump failed" -j show avail
fcheck "-j stats on a full disk exits 1" expect_write_error full -j stats
fcheck "show paths on a full disk exits 1" expect_write_error full show paths
fcheck "-j show nodes on a full disk exits 1" expect_write_error full -j show nodes
fcheck "status on a full disk exits 1" expect_write_error full status
fcheck "enable with stdout closed exits 0" expect_closed_stdout 0 "" enable
fcheck "status with stdout closed exits 1" expect_closed_stdout 1 \
	"mpipctl: write error: Bad file descriptor" status
fcheck "-n with an unknown namespace exits 1" expect_fake_error full 1 \
	"mpipctl: cannot open network namespace 'nope': No such file or directory" -n nope status
fcheck "-n with a file that is no namespace exits 1" expect_fake_error full 1 \
	"mpipctl: cannot enter network namespace 'file': Invalid argument" -n file status
fcheck "-n enters the namespace (or says why not)" t_netns_self
fcheck "-j status with session and path counts" expect_fake full "$STATUS_JSON" -j status
fcheck "status with session and path counts" expect_fake full "$STATUS_TEXT" status
fcheck "-j status from a module without the counts" expect_fake min "$STATUS_MIN_JSON" -j status
fcheck "-j stats names every counter, numbers unknown ones" expect_fake full "$STATS_JSON" -j stats
fcheck "-j get names every tunable" expect_fake full "$CONFIG_JSON" -j get
fcheck "-j get heartbeat_ms" expect_fake full '{"heartbeat_ms":80}' -j get heartbeat_ms
fcheck "-j get weight_trend_ms" expect_fake full '{"weight_trend_ms":150}' -j get weight_trend_ms
fcheck "-j get weight_boost" expect_fake full '{"weight_boost":160}' -j get weight_boost
fcheck "get weight_step from an older module exits 1" expect_get_missing weight_step
fcheck "get weight_boost from an older module exits 1" expect_get_missing weight_boost
fcheck "-j get bare_cm_ms" expect_fake full '{"bare_cm_ms":170}' -j get bare_cm_ms
fcheck "get bare_cm_ms from an older module exits 1" expect_get_missing bare_cm_ms
fcheck "set weight_step sends a u32 of type 6" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 6:4=20" "" set weight_step 20
fcheck "set delay_smooth_shift sends a u32 of type 10" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 10:4=3" "" set delay_smooth_shift 3
fcheck "set weight_trend_ms sends a u32 of type 15" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 15:4=500" "" set weight_trend_ms 500
fcheck "set weight_boost sends a u32 of type 16" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 16:4=8" "" set weight_boost 8
fcheck "set bare_cm_ms sends a u32 of type 17" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 17:4=0" "" set bare_cm_ms 0
check "set bare_cm_ms negative exits 1" expect_usage_error "invalid value '-1' for bare_cm_ms" set bare_cm_ms -1
fcheck "-j get queue_steer" expect_fake full '{"queue_steer":180}' -j get queue_steer
fcheck "get queue_steer from an older module exits 1" expect_get_missing queue_steer
fcheck "set queue_steer sends a u32 of type 18" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 18:4=0" "" set queue_steer 0
fcheck "set rule_event_pkts sends a u32 of type 19" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 19:4=1000" "" set rule_event_pkts 1000
fcheck "set nat_mode none sends a u32 1 of type 20" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 20:4=1" "" set nat_mode none
fcheck "set nat_mode udp sends a u32 2 of type 20" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 20:4=2" "" set nat_mode udp
fcheck "set nat_mode faketcp sends a u32 3 of type 20" expect_request \
	"cmd=7 version=1 dump=0 config(nested) 20:4=3" "" set nat_mode faketcp
check "set nat_mode tcp exits 1, naming the modes" expect_usage_error "invalid value 'tcp' for nat_mode: not a non-negative decimal integer or one of auto, none, udp, faketcp" set nat_mode tcp
check "link without a subcommand exits 1" expect_usage_error "link: missing 'set' (usage: mpipctl link set dev IF \\[advertise on|off\\] \\[backup|nobackup|tier 0-7\\] \\[metered|nometered\\] \\[nat default|auto|none|udp|faketcp\\])" link
check "link show points at show links" expect_usage_error "link: unknown subcommand 'show' (usage: mpipctl link set dev IF \\[advertise on|off\\] \\[backup|nobackup|tier 0-7\\] \\[metered|nometered\\] \\[nat default|auto|none|udp|faketcp\\]; the settings: mpipctl show links)" link show
check "link set without dev exits 1" expect_usage_error "link set: missing dev IF" link set advertise off
check "link set without a setting exits 1" expect_usage_error "link set: nothing to change" link set dev lo
check "link set advertise takes on or off" expect_usage_error "link set: advertise is on or off, not 'maybe'" link set dev lo advertise maybe
check "link set with an unknown setting exits 1" expect_usage_error "link set: unknown setting 'mtu'" link set dev lo mtu 1400
check "link set with a setting but no value exits 1" expect_usage_error "link set: missing value after 'advertise'" link set dev lo advertise
check "link set with dev twice exits 1" expect_usage_error "link set: 'dev' given twice" link set dev lo dev lo advertise on
check "link set with a name too long exits 1" expect_usage_error "link set: 'abcdefghijklmnopq' is not an interface name" link set dev abcdefghijklmnopq advertise on
check "-j link set exits 1" expect_usage_error "link: option -j applies to status, show, stats, get and monitor only" -j link set dev lo advertise on
fcheck "link set dev lo advertise off sends SET_LINK" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 3:1=0" "" link set dev lo advertise off
fcheck "link set dev lo backup sends BACKUP 1" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 4:1=1" "" link set dev lo backup
fcheck "link set dev lo nobackup sends BACKUP 0" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 4:1=0" "" link set dev lo nobackup
fcheck "link set dev lo nat udp sends MPIP_LINK_A_NAT 3" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 5:1=3" "" link set dev lo nat udp
fcheck "link set dev lo nat faketcp sends MPIP_LINK_A_NAT 4" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 5:1=4" "" link set dev lo nat faketcp
check "link set nat takes a mode" expect_usage_error "link set: nat is default, auto, none, udp or faketcp, not 'tcp'" link set dev lo nat tcp
fcheck "link set dev lo backup off advertise on sends both" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 3:1=1 4:1=0" "" link set dev lo backup off advertise on
check "link set with backup twice exits 1" expect_usage_error "link set: backup or tier given twice" link set dev lo backup nobackup
check "link set with backup and tier exits 1" expect_usage_error "link set: backup or tier given twice" link set dev lo backup tier 2
check "link set tier takes 0 to 7" expect_usage_error "link set: tier is 0 to 7, not '8'" link set dev lo tier 8
fcheck "link set dev lo tier 3 sends MPIP_LINK_A_TIER 3" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 6:1=3" "" link set dev lo tier 3
fcheck "link set dev lo metered sends MPIP_LINK_A_METERED 1" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 7:1=1" "" link set dev lo metered
fcheck "link set dev lo nometered sends MPIP_LINK_A_METERED 0" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 7:1=0" "" link set dev lo nometered
check "link set with metered twice exits 1" expect_usage_error "link set: metered given twice" link set dev lo metered nometered
# (every setting at once: ten arguments, the most link set can take)
fcheck "link set dev lo advertise off tier 2 metered nat udp sends all four" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 3:1=0 6:1=2 7:1=1 5:1=3" "" \
	link set dev lo advertise off tier 2 metered nat udp
fcheck "link set dev lo advertise on backup on nometered nat none sends all four" expect_request \
	"cmd=12 version=1 dump=0 link(nested) 1:4=1 3:1=1 4:1=1 7:1=0 5:1=2" "" \
	link set dev lo advertise on backup on nometered nat none
fcheck "link set of an unknown interface exits 1 before netlink" expect_fake_error full 1 \
	"mpipctl: link set: no interface 'nosuchif0'" link set dev nosuchif0 advertise on
fcheck "-j show links" expect_fake full "$LINKS_JSON" -j show links
fcheck "show links table" expect_fake full "$LINKS_TEXT" show links
fcheck "-j show links, empty" expect_fake empty "[]" -j show links
fcheck "show links, advertise missing" expect_malformed bad-missing show links
fcheck "show links sends a GET_LINKS dump" expect_request "cmd=11 version=1 dump=1" "$LINKS_TEXT" show links
check "rule without a subcommand exits 1" expect_usage_error "rule: missing add, del or flush" rule
check "rule show points at show rules" expect_usage_error "rule: unknown subcommand 'show'" rule show
check "rule add without a mode exits 1" expect_usage_error "rule add: missing mode" rule add proto tcp
check "rule add with an unknown mode exits 1" expect_usage_error "rule add: invalid mode 'foo'" rule add mode foo
check "rule add with a prefix over 32 exits 1" expect_usage_error "rule add: invalid prefix '10.1.1.0/33'" rule add to 10.1.1.0/33 mode all
check "rule add with a port over 65535 exits 1" expect_usage_error "rule add: invalid port range '70000'" rule add proto tcp dport 70000 mode all
check "rule add with DSCP 64 exits 1" expect_usage_error "rule add: invalid DSCP '64'" rule add dscp 64 mode all
check "rule add with a fwmark mask of 0 exits 1" expect_usage_error "rule add: invalid fwmark '1/0'" rule add fwmark 1/0 mode all
check "rule add with dev and nodev exits 1" expect_usage_error "rule add: dev and nodev do not mix" rule add mode selected dev lo nodev lo
check "rule add with copies 1 exits 1" expect_usage_error "rule add: invalid number of copies '1' (2..8)" rule add mode protected copies 1
check "rule add with copies 9 exits 1" expect_usage_error "rule add: invalid number of copies '9' (2..8)" rule add mode protected copies 9
check "rule add with an unknown keyword exits 1" expect_usage_error "rule add: unknown keyword 'bogus'" rule add bogus 1 mode all
check "rule add with a keyword but no value exits 1" expect_usage_error "rule add: missing value after 'fallback'" rule add mode all fallback
check "rule del pref 0 exits 1" expect_usage_error "rule del: which rule?" rule del pref 0
check "rule flush with an argument exits 1" expect_usage_error "rule flush: unexpected argument 'x'" rule flush x
fcheck "rule add sends RULE_ADD with the keys and mode" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 1:4=100 2:1=6 7:4=1441814 9:4=13107200 14:1=1" "" \
	rule add pref 100 proto tcp dport 22 len 0-200 mode rf
fcheck "rule add selected dev lo fallback drop" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 14:1=2 15:1=2 16:4=1" "" \
	rule add mode selected dev lo fallback drop
fcheck "rule add all nometered sends MPIP_RULE_A_NOMETERED" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 14:1=0 22" "" rule add mode all nometered
fcheck "rule add protected nodev lo copies 3" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 14:1=3 21:1=3 17 16:4=1" "" \
	rule add mode protected nodev lo copies 3
fcheck "rule add intent interactive sends mode single" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 2:1=17 14:1=1" "" rule add proto udp intent interactive
fcheck "rule add intent critical sends mode protected" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 14:1=3" "" rule add intent critical
fcheck "rule add intent background sends mode original" expect_request \
	"cmd=13 version=1 dump=0 rule(nested) 14:1=4" "" rule add intent background
check "rule add with a bad intent exits 1" expect_usage_error \
	"rule add: invalid intent 'fast' (interactive, bulk, critical, background)" rule add intent fast
check "rule add with mode and intent exits 1" expect_usage_error \
	"rule add: give mode or intent, not both" rule add mode all intent bulk
check "rule add with intent and mode exits 1" expect_usage_error \
	"rule add: give mode or intent, not both" rule add intent bulk mode all
fcheck "rule del sends RULE_DEL with the pref" expect_request \
	"cmd=14 version=1 dump=0 rule(nested) 1:4=100" "" rule del pref 100
fcheck "rule flush sends RULE_FLUSH" expect_request "cmd=15 version=1 dump=0" "" rule flush
fcheck "-j show rules" expect_fake full "$RULES_JSON" -j show rules
fcheck "show rules table, with counters" expect_fake full "$RULES_TEXT" show rules
fcheck "show rules, mode missing" expect_malformed bad-missing show rules

if [ "$n" -ne "$PLAN" ]; then
	echo "# ran $n tests, planned $PLAN"
	failed=$((failed + 1))
fi
echo "mpipctl: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
