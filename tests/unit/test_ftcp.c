// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kernel/core/ftcp.c: a path's fake TCP connection.
 * Its segments are checked against a model of what a Linux NAT's
 * connection tracking accepts (nf_conntrack_proto_tcp.c, tcp_in_window():
 * sequence within the window the other side offered, acknowledgment of
 * no more than the other side sent), over long random exchanges with loss.
 */
#include <stdio.h>
#include <string.h>

#include "ftcp.h"
#include "ktap.h"

static bool seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static bool seq_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/* One direction of a tracked connection, as conntrack keeps it. */
struct track {
	u32 td_end;	/* highest seq + len sent */
	u32 td_maxend;	/* highest ack + window the other side offered */
	u32 td_maxwin;	/* largest window this side offered */
};

static u32 max_ack_window(const struct track *s)
{
	return s->td_maxwin > 66000 ? s->td_maxwin : 66000;
}

/*
 * Would conntrack let segment @g (with @len bytes) from @s to @r pass?
 * Updates both directions when it does.  Windows are scaled by
 * MPIP_FTCP_WSCALE (both ends sent the option).
 */
static bool track_ok(struct track *s, struct track *r,
		     const struct mpip_ftcp_seg *g, u32 len)
{
	u32 end = g->seq + len, win = (u32)MPIP_FTCP_WINDOW << MPIP_FTCP_WSCALE;

	if (!seq_before(g->seq, s->td_maxend + 1) ||
	    !seq_after(end, s->td_end - r->td_maxwin - 1) ||
	    !seq_before(g->ack, r->td_end + 1) ||
	    !seq_after(g->ack, r->td_end - max_ack_window(s)))
		return false;
	if (seq_after(end, s->td_end))
		s->td_end = end;
	if (win > s->td_maxwin)
		s->td_maxwin = win;
	if (seq_after(g->ack + win, r->td_maxend))
		r->td_maxend = g->ack + win;
	return true;
}

/* A segment through a header on the wire and back. */
static void wire(struct unit_ctx *ctx, struct mpip_ftcp_seg *g)
{
	u8 b[MPIP_FTCP_ASYN_HDR_LEN];
	struct mpip_ftcp_seg back;
	bool syn = g->flags == MPIP_FTCP_SYN;
	unsigned int n;

	if (syn)
		memset(g->auth, 0xa5, sizeof(g->auth));
	n = mpip_ftcp_hdr_put(b, 19792, 40000, g);
	CHECK_EQ(n, mpip_ftcp_hdr_len(g->flags));
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &back), n);
	CHECK_EQ(back.seq, g->seq);
	CHECK_EQ(back.ack, g->ack);
	CHECK_EQ(back.flags, g->flags);
	CHECK_EQ(back.mss, g->flags & MPIP_FTCP_SYN ? g->mss : 0);
	CHECK_EQ(back.authed, syn);
	if (syn)
		CHECK(!memcmp(back.auth, g->auth, sizeof(g->auth)));
	*g = back;
}

/*
 * A handshake through a header each way: both ends open; @wup is the ACK
 * the passive end sends once open (the window update).
 */
static void handshake(struct unit_ctx *ctx, struct mpip_ftcp *a,
		      struct mpip_ftcp *b, u32 isn, u32 cookie,
		      struct mpip_ftcp_seg *wup)
{
	struct mpip_ftcp_seg syn, synack, ack;

	mpip_ftcp_connect(a, isn, 1400, &syn);
	wire(ctx, &syn);
	CHECK_EQ(syn.flags, MPIP_FTCP_SYN);
	CHECK_EQ(syn.mss, 1400);
	mpip_ftcp_synack(&syn, cookie, 1380, &synack);
	wire(ctx, &synack);
	CHECK_EQ(mpip_ftcp_rx(a, &synack, 0, &ack), MPIP_FTCP_REPLY);
	CHECK_EQ(a->state, MPIP_FTCP_OPEN);
	wire(ctx, &ack);
	CHECK_EQ(ack.flags, MPIP_FTCP_ACK);
	CHECK(mpip_ftcp_accept(b, &ack, 0, cookie, false, wup));
	CHECK_EQ(b->state, MPIP_FTCP_OPEN);
	wire(ctx, wup);
	CHECK_EQ(wup->flags, MPIP_FTCP_ACK);
	CHECK_EQ(wup->seq, cookie + 1);
	CHECK_EQ(wup->ack, isn + 1);
	CHECK_EQ(mpip_ftcp_rx(a, wup, 0, &ack), MPIP_FTCP_TAKE);
}

UNIT_TEST(ftcp_handshake_opens_both_ends)
{
	struct mpip_ftcp a, b;
	struct mpip_ftcp_seg g, r;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	handshake(ctx, &a, &b, 0xfffffff0u, 0x7ffffffeu, &r);
	CHECK_EQ(a.snd_nxt, 0xfffffff1u);
	CHECK_EQ(a.rcv_nxt, 0x7fffffffu);
	CHECK_EQ(b.snd_nxt, 0x7fffffffu);
	CHECK_EQ(b.rcv_nxt, 0xfffffff1u);
	/* data across the wrap of the sequence space */
	CHECK(mpip_ftcp_data(&a, 100, &g));
	CHECK_EQ(g.seq, 0xfffffff1u);
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 100, &r), MPIP_FTCP_TAKE);
	CHECK_EQ(b.rcv_nxt, 0x55u);
	/* the passive end opens from a first data segment as well */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	CHECK(!mpip_ftcp_accept(&b, &g, 100, 0x7ffffffdu, false, &r));
	CHECK(mpip_ftcp_accept(&b, &g, 100, 0x7ffffffeu, false, &r));
	CHECK_EQ(b.rcv_nxt, 0x55u);
	CHECK_EQ(r.ack, 0x55u);
}

UNIT_TEST(ftcp_wrong_answers_and_closed_ends_drop)
{
	struct mpip_ftcp a, b, closed;
	struct mpip_ftcp_seg syn, g, r;

	memset(&closed, 0, sizeof(closed));
	CHECK(!mpip_ftcp_data(&closed, 10, &g));
	memset(&a, 0, sizeof(a));
	mpip_ftcp_connect(&a, 1000, 1400, &syn);
	CHECK(!mpip_ftcp_data(&a, 10, &g));
	/* a SYN-ACK for another SYN, a bare ACK, a SYN: dropped */
	mpip_ftcp_synack(&syn, 5, 1400, &g);
	g.ack++;
	CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_DROP);
	g.ack--;
	g.flags = MPIP_FTCP_ACK;
	CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_DROP);
	g.flags = MPIP_FTCP_SYN;
	CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(a.state, MPIP_FTCP_SYN_SENT);
	/* a RST that does not acknowledge the SYN leaves it */
	g.flags = MPIP_FTCP_RST | MPIP_FTCP_ACK;
	g.ack = 5;
	CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(a.state, MPIP_FTCP_SYN_SENT);
	g.ack = 1001;
	CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(a.state, MPIP_FTCP_CLOSED);
	/* accept wants a plain ACK of the cookie + 1 */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	g.flags = MPIP_FTCP_ACK | MPIP_FTCP_SYN;
	g.ack = 78;
	CHECK(!mpip_ftcp_accept(&b, &g, 0, 77, false, &r));
	g.flags = MPIP_FTCP_ACK | MPIP_FTCP_RST;
	CHECK(!mpip_ftcp_accept(&b, &g, 0, 77, false, &r));
	g.flags = MPIP_FTCP_PSH;
	CHECK(!mpip_ftcp_accept(&b, &g, 0, 77, false, &r));
	CHECK_EQ(b.state, MPIP_FTCP_CLOSED);
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 0, &r), MPIP_FTCP_DROP);
}

UNIT_TEST(ftcp_open_end_checks_window_ack_rst_syn)
{
	struct mpip_ftcp a, b;
	struct mpip_ftcp_seg g, r;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	handshake(ctx, &a, &b, 100, 5000, &r);
	CHECK(mpip_ftcp_data(&a, 500, &g));
	/* far outside the window either way */
	g.seq += MPIP_FTCP_MAX_WIN + 10;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 500, &r), MPIP_FTCP_DROP);
	g.seq -= 2 * (MPIP_FTCP_MAX_WIN + 10);
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 500, &r), MPIP_FTCP_DROP);
	g.seq += MPIP_FTCP_MAX_WIN + 10;
	/* acknowledging what b never sent */
	g.ack = b.snd_nxt + 1;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 500, &r), MPIP_FTCP_DROP);
	g.ack = b.snd_nxt;
	/* no ACK flag */
	g.flags = MPIP_FTCP_PSH;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 500, &r), MPIP_FTCP_DROP);
	g.flags = MPIP_FTCP_ACK | MPIP_FTCP_PSH;
	CHECK_EQ(b.rcv_nxt, 101u);
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 500, &r), MPIP_FTCP_TAKE);
	CHECK_EQ(b.rcv_nxt, 601u);
	/* an old segment is taken, the acknowledgment does not go back */
	g.seq -= 1000;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 500, &r), MPIP_FTCP_TAKE);
	CHECK_EQ(b.rcv_nxt, 601u);
	/* a RST closes only with the sequence number expected */
	g.flags = MPIP_FTCP_RST;
	g.seq = 602;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(b.state, MPIP_FTCP_OPEN);
	g.seq = 600;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(b.state, MPIP_FTCP_OPEN);
	g.seq = 601;
	CHECK_EQ(mpip_ftcp_rx(&b, &g, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(b.state, MPIP_FTCP_CLOSED);
	/* SYN and SYN-ACK on an open connection change nothing */
	CHECK_EQ(mpip_ftcp_rx(&a, &(struct mpip_ftcp_seg){ .seq = 9,
			      .flags = MPIP_FTCP_SYN }, 0, &r), MPIP_FTCP_DROP);
	CHECK_EQ(mpip_ftcp_rx(&a, &(struct mpip_ftcp_seg){ .seq = 9,
			      .ack = a.snd_nxt,
			      .flags = MPIP_FTCP_SYN | MPIP_FTCP_ACK }, 0, &r),
		 MPIP_FTCP_DROP);
	CHECK_EQ(a.state, MPIP_FTCP_OPEN);
}

/*
 * The tracker of a connection after its handshake, as conntrack leaves
 * it: the SYN-ACK's window counts unscaled (the opener may send 65535
 * bytes past it), the opener's ACK's scaled; then the passive end's
 * window update @wup passes it.
 */
static bool track_open(struct track *ta, struct track *tb, u32 isn,
		       u32 cookie, const struct mpip_ftcp_seg *wup)
{
	u32 win = (u32)MPIP_FTCP_WINDOW << MPIP_FTCP_WSCALE;

	*ta = (struct track){ .td_end = isn + 1, .td_maxwin = win,
			      .td_maxend = isn + 1 + MPIP_FTCP_WINDOW };
	*tb = (struct track){ .td_end = cookie + 1,
			      .td_maxwin = MPIP_FTCP_WINDOW,
			      .td_maxend = cookie + 1 + win };
	return track_ok(tb, ta, wup, 0);
}

/*
 * The opener sends before the passive end's window update has crossed
 * the NAT (a round trip of a path that has just opened, during a bulk
 * flow): it keeps inside the SYN-ACK's window, which the NAT takes
 * unscaled, until a segment of the peer's comes in; then it may run on.
 * Before the limit, segments past 64 KB went out, and the NAT found
 * them INVALID.
 */
UNIT_TEST(ftcp_opener_keeps_to_the_synack_window_until_it_hears_the_peer)
{
	u32 win = (u32)MPIP_FTCP_WINDOW << MPIP_FTCP_WSCALE;
	u32 isn = 0xffff8000u, cookie = 0x1234u;
	struct mpip_ftcp a, b;
	struct mpip_ftcp_seg syn, synack, ack, wup, g, r;
	struct track ta, tb;
	unsigned int n = 0, i;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	mpip_ftcp_connect(&a, isn, 1400, &syn);
	mpip_ftcp_synack(&syn, cookie, 1380, &synack);
	CHECK_EQ(mpip_ftcp_rx(&a, &synack, 0, &ack), MPIP_FTCP_REPLY);
	ta = (struct track){ .td_end = isn + 1, .td_maxwin = win,
			     .td_maxend = isn + 1 + MPIP_FTCP_WINDOW };
	tb = (struct track){ .td_end = cookie + 1,
			     .td_maxwin = MPIP_FTCP_WINDOW,
			     .td_maxend = cookie + 1 };
	CHECK(track_ok(&ta, &tb, &ack, 0));
	/* 46 segments of 1400 bytes fit in 65535, then one of 135 */
	while (n < 1000 && mpip_ftcp_data(&a, 1400, &g)) {
		CHECK(track_ok(&ta, &tb, &g, 1400));
		n++;
	}
	CHECK_EQ(n, MPIP_FTCP_WINDOW / 1400);
	CHECK(mpip_ftcp_data(&a, MPIP_FTCP_WINDOW % 1400, &g));
	CHECK(track_ok(&ta, &tb, &g, MPIP_FTCP_WINDOW % 1400));
	CHECK(!mpip_ftcp_data(&a, 1, &g));
	CHECK_EQ(a.snd_nxt, isn + 1 + MPIP_FTCP_WINDOW);
	/* what the NAT would do with the segment after the next */
	g = (struct mpip_ftcp_seg){ .seq = a.snd_nxt + 1400, .ack = a.rcv_nxt,
				    .flags = MPIP_FTCP_ACK };
	CHECK(!track_ok(&ta, &tb, &g, 1400));
	/* b opens from a's ACK; its window update crosses the NAT to a */
	CHECK(mpip_ftcp_accept(&b, &ack, 0, cookie, false, &wup));
	CHECK(track_ok(&tb, &ta, &wup, 0));
	CHECK_EQ(mpip_ftcp_rx(&a, &wup, 0, &r), MPIP_FTCP_TAKE);
	/* both may run on now: 1.4 MB from a, 140 kB from b, all passed */
	for (i = 0; i < 1000; i++) {
		if (!CHECK(mpip_ftcp_data(&a, 1400, &g)) ||
		    !CHECK(track_ok(&ta, &tb, &g, 1400)))
			break;
		if (i % 10 || !CHECK(mpip_ftcp_data(&b, 1400, &g)) ||
		    !CHECK(track_ok(&tb, &ta, &g, 1400)))
			continue;
		CHECK(mpip_ftcp_rx(&a, &g, 1400, &r) != MPIP_FTCP_DROP);
	}
}

/*
 * A stranger's segments on the opener's four-tuple, before the peer's
 * window update came: out of the window, acknowledging what the opener
 * never sent, without ACK, a RST off its number, a SYN-ACK again.  None
 * of them lets the opener past the SYN-ACK's window (a NAT would find
 * what it sent there INVALID); the peer's own segment does.
 */
UNIT_TEST(ftcp_forged_segments_do_not_widen_the_opener)
{
	u32 isn = 0x40000000u, cookie = 0x9000u;
	struct mpip_ftcp a;
	struct mpip_ftcp_seg syn, synack, ack, g, r;
	const struct mpip_ftcp_seg good = { .seq = cookie + 1,
					    .ack = isn + 1,
					    .flags = MPIP_FTCP_ACK };
	struct mpip_ftcp_seg bad[] = {
		{ .seq = cookie + 1 + MPIP_FTCP_MAX_WIN + 10, .ack = isn + 1,
		  .flags = MPIP_FTCP_ACK },
		{ .seq = cookie + 1 - MPIP_FTCP_MAX_WIN - 10, .ack = isn + 1,
		  .flags = MPIP_FTCP_ACK },
		{ .seq = cookie + 1, .ack = isn + 2, .flags = MPIP_FTCP_ACK },
		{ .seq = cookie + 1, .ack = isn + 1, .flags = MPIP_FTCP_PSH },
		{ .seq = cookie + 2, .ack = isn + 1, .flags = MPIP_FTCP_RST },
		{ .seq = cookie, .ack = isn + 1,
		  .flags = MPIP_FTCP_SYN | MPIP_FTCP_ACK },
	};
	unsigned int i;

	memset(&a, 0, sizeof(a));
	mpip_ftcp_connect(&a, isn, 1400, &syn);
	mpip_ftcp_synack(&syn, cookie, 1380, &synack);
	CHECK_EQ(mpip_ftcp_rx(&a, &synack, 0, &ack), MPIP_FTCP_REPLY);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		g = bad[i];
		CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_DROP);
		CHECK_EQ(a.state, MPIP_FTCP_OPEN);
		CHECK(!a.wide);
	}
	CHECK(!mpip_ftcp_data(&a, MPIP_FTCP_WINDOW + 1, &g));
	CHECK(mpip_ftcp_data(&a, MPIP_FTCP_WINDOW, &g));
	CHECK(!mpip_ftcp_data(&a, 1, &g));
	g = good;
	CHECK_EQ(mpip_ftcp_rx(&a, &g, 0, &r), MPIP_FTCP_TAKE);
	CHECK(a.wide);
	CHECK(mpip_ftcp_data(&a, 1400, &g));
}

/*
 * The opener opens again on a path whose connection was open (its path
 * went down under load): a NAT may still track the old connection, and
 * follows the new one only if no segment passed between the SYN and the
 * SYN-ACK; the peer may send on the old one until it opens the new.  So
 * the opener sends nothing inside until the peer answered in the new
 * connection (its window update, after our ACK opened its end), and a
 * segment of the old one, whose ACK is of the old numbers, is not that
 * answer.  Before, the old segment made the opener run on and
 * acknowledge the old numbers (so the peer never opened its end), and a
 * NAT that had not followed found 64 KB INVALID.
 */
UNIT_TEST(ftcp_reopen_sends_nothing_until_the_peer_answers)
{
	u32 isn1 = 0x50000000u, isn2 = isn1 + 3000000, cookie = 0xabcd0000u;
	struct mpip_ftcp a, b;
	struct mpip_ftcp_seg syn, synack, ack, old, g, wup, r;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	handshake(ctx, &a, &b, isn1, cookie, &wup);
	for (i = 0; i < 100; i++) {
		CHECK(mpip_ftcp_data(&a, 1400, &g));
		CHECK(mpip_ftcp_rx(&b, &g, 1400, &r) != MPIP_FTCP_DROP);
		CHECK(mpip_ftcp_data(&b, 1000, &g));
		CHECK(mpip_ftcp_rx(&a, &g, 1000, &r) != MPIP_FTCP_DROP);
	}
	/* the same four-tuple, so the same cookie */
	mpip_ftcp_connect(&a, isn2, 1400, &syn);
	CHECK(!a.wide);
	mpip_ftcp_synack(&syn, cookie, 1380, &synack);
	CHECK_EQ(mpip_ftcp_rx(&a, &synack, 0, &ack), MPIP_FTCP_REPLY);
	CHECK_EQ(a.state, MPIP_FTCP_OPEN);
	CHECK_EQ(ack.ack, cookie + 1);
	/* b still sends on the old connection */
	CHECK(mpip_ftcp_data(&b, 1000, &old));
	CHECK(old.ack == isn1 + 1 + 140000);
	CHECK_EQ(mpip_ftcp_rx(&a, &old, 1000, &r), MPIP_FTCP_DROP);
	CHECK(!a.wide);
	CHECK(!mpip_ftcp_data(&a, 1, &g));
	/*
	 * b opens the new connection from a's ACK (b got a's SYN: again);
	 * its answer widens a
	 */
	CHECK(mpip_ftcp_accept(&b, &ack, 0, cookie, true, &wup));
	CHECK_EQ(wup.seq, cookie + 1);
	CHECK_EQ(wup.ack, isn2 + 1);
	CHECK_EQ(mpip_ftcp_rx(&a, &wup, 0, &r), MPIP_FTCP_TAKE);
	CHECK(a.wide);
	for (i = 0; i < 100; i++) {
		CHECK(mpip_ftcp_data(&a, 1400, &g));
		CHECK(mpip_ftcp_rx(&b, &g, 1400, &r) != MPIP_FTCP_DROP);
	}
	/* the first connection of a path still starts with the 64 KB */
	memset(&a, 0, sizeof(a));
	mpip_ftcp_connect(&a, isn2, 1400, &syn);
	CHECK_EQ(mpip_ftcp_rx(&a, &synack, 0, &ack), MPIP_FTCP_REPLY);
	CHECK(mpip_ftcp_data(&a, MPIP_FTCP_WINDOW, &g));
}

/*
 * Copies of the segments that opened the peer's end, which acknowledge
 * its cookie: the opener's ACK, replayed by someone on the path or late,
 * and its data sent before the peer's answer.  On the open connection
 * none opens it again unless a SYN came (again): before, one did once
 * the peer had sent, and took its numbers back to the cookie's, far
 * behind what a NAT had seen.  They are taken as the connection's own
 * segments instead, and change neither end's numbers.
 */
UNIT_TEST(ftcp_copies_of_the_first_segments_do_not_reopen)
{
	u32 isn = 0x1000u, cookie = 0xfffff000u, snd, rcv;
	struct mpip_ftcp a, b;
	struct mpip_ftcp_seg syn, synack, ack, first, g, wup, r;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	mpip_ftcp_connect(&a, isn, 1400, &syn);
	mpip_ftcp_synack(&syn, cookie, 1380, &synack);
	CHECK_EQ(mpip_ftcp_rx(&a, &synack, 0, &ack), MPIP_FTCP_REPLY);
	CHECK(mpip_ftcp_data(&a, 1400, &first));
	CHECK_EQ(first.ack, cookie + 1);
	CHECK(mpip_ftcp_accept(&b, &ack, 0, cookie, false, &wup));
	CHECK_EQ(mpip_ftcp_rx(&a, &wup, 0, &r), MPIP_FTCP_TAKE);
	for (i = 0; i < 100; i++) {
		CHECK(mpip_ftcp_data(&b, 1400, &g));
		CHECK(mpip_ftcp_rx(&a, &g, 1400, &r) != MPIP_FTCP_DROP);
	}
	CHECK(mpip_ftcp_rx(&b, &first, 1400, &r) != MPIP_FTCP_DROP);
	snd = b.snd_nxt;
	rcv = b.rcv_nxt;
	CHECK_EQ(snd, cookie + 1 + 140000);
	CHECK(!mpip_ftcp_accept(&b, &ack, 0, cookie, false, &r));
	CHECK(!mpip_ftcp_accept(&b, &first, 1400, cookie, false, &r));
	CHECK_EQ(mpip_ftcp_rx(&b, &ack, 0, &r), MPIP_FTCP_TAKE);
	CHECK_EQ(mpip_ftcp_rx(&b, &first, 1400, &r), MPIP_FTCP_TAKE);
	CHECK_EQ(b.snd_nxt, snd);
	CHECK_EQ(b.rcv_nxt, rcv);
	CHECK_EQ(b.state, MPIP_FTCP_OPEN);
	/* what a SYN announced is taken: the numbers start again */
	CHECK(mpip_ftcp_accept(&b, &ack, 0, cookie, true, &r));
	CHECK_EQ(b.snd_nxt, cookie + 1);
}

/*
 * Segments of @max_len bytes at most, a share @pct_a % of them from the
 * opener, 10 % lost before the NAT (never seen) and 10 % after it (seen,
 * not delivered), in @conns connections of @segs segments with random
 * initial numbers: the tracker accepts every segment it sees, the ACKs
 * the ends send of their own included, and the receiver takes every
 * one it gets.  Returns the segments taken.
 */
static unsigned int exchange(struct unit_ctx *ctx, unsigned int conns,
			     unsigned int segs, u32 max_len,
			     unsigned int pct_a)
{
	unsigned int conn, i, taken = 0, bad = 0, acks = 0;

	for (conn = 0; conn < conns; conn++) {
		struct mpip_ftcp a, b, *s, *r;
		struct track ta, tb, *ts, *tr;
		u32 isn = unit_rand32(ctx), cookie = unit_rand32(ctx), len, loss;
		struct mpip_ftcp_seg g, rep;

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		handshake(ctx, &a, &b, isn, cookie, &rep);
		CHECK(track_open(&ta, &tb, isn, cookie, &rep));
		for (i = 0; i < segs; i++) {
			bool from_a = unit_below(ctx, 100) < pct_a;
			enum mpip_ftcp_verdict v;

			s = from_a ? &a : &b;
			r = from_a ? &b : &a;
			ts = from_a ? &ta : &tb;
			tr = from_a ? &tb : &ta;
			len = unit_below(ctx, max_len + 1);
			if (!CHECK(mpip_ftcp_data(s, len, &g)))
				return taken;
			loss = unit_below(ctx, 10);
			if (loss == 0)
				continue;
			if (!track_ok(ts, tr, &g, len)) {
				if (bad++ < 5)
					CHECK_MSG(0, "conn %u seg %u: seq %u ack %u len %u refused",
						  conn, i, g.seq, g.ack, len);
				continue;
			}
			if (loss == 1)
				continue;
			v = mpip_ftcp_rx(r, &g, len, &rep);
			taken += v == MPIP_FTCP_TAKE || v == MPIP_FTCP_TAKE_REPLY;
			if (v != MPIP_FTCP_TAKE_REPLY)
				continue;
			acks++;
			if (!track_ok(tr, ts, &rep, 0) && bad++ < 5)
				CHECK_MSG(0, "conn %u seg %u: the receiver's ACK refused",
					  conn, i);
		}
	}
	CHECK_EQ(bad, 0);
	unit_diag("%u segments taken, %u ACKs sent by the receivers", taken,
		  acks);
	return taken;
}

/* 200,000 segments both ways, mostly from the opener, with loss */
UNIT_TEST(ftcp_segments_pass_a_conntrack_model_with_loss)
{
	CHECK(exchange(ctx, 20, 10000, 1400, 90) > 150000);
}

/*
 * One way only, from either end, far past the window (20,000 segments
 * of up to 1 MB: about 10 GB): the receiver's own ACKs keep the sender
 * in the window the NAT allows.
 */
UNIT_TEST(ftcp_one_way_bulk_stays_in_the_window)
{
	CHECK(exchange(ctx, 2, 10000, 1u << 20, 100) > 15000);
	CHECK(exchange(ctx, 2, 10000, 1u << 20, 0) > 15000);
}

UNIT_TEST(ftcp_header_parse_rejects_and_survives_garbage)
{
	u8 b[64];
	struct mpip_ftcp_seg g = { .seq = 1, .ack = 2, .flags = MPIP_FTCP_ACK };
	unsigned int i, n;

	n = mpip_ftcp_hdr_put(b, 1, 2, &g);
	CHECK_EQ(b[0], 0);
	CHECK_EQ(b[1], 1);
	CHECK_EQ(b[14], 0xff);
	CHECK_EQ(b[15], 0xff);
	CHECK_EQ(mpip_ftcp_hdr_get(b, n - 1, &g), 0);
	b[13] |= 0x01;				/* FIN */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), 0);
	b[13] = MPIP_FTCP_ACK | 0x20;		/* URG */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), 0);
	b[13] = MPIP_FTCP_ACK;
	b[12] = 4 << 4;				/* data offset 16 */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), 0);
	b[12] = 6 << 4;				/* past the bytes there */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), 0);
	/* random headers and options: no crash, MSS only from a SYN */
	for (i = 0; i < 100000; i++) {
		unit_fill(ctx, b, sizeof(b));
		n = mpip_ftcp_hdr_get(b, unit_below(ctx, sizeof(b) + 1), &g);
		if (n) {
			CHECK(n >= MPIP_FTCP_HDR_LEN && n <= sizeof(b));
			CHECK(g.mss == 0 || (g.flags & MPIP_FTCP_SYN));
			CHECK(!g.authed ||
			      (g.flags & (MPIP_FTCP_SYN | MPIP_FTCP_ACK)) ==
			      MPIP_FTCP_SYN);
		}
	}
}

/* A SYN's header, 44 bytes, with the auth block @fill everywhere. */
static unsigned int syn_hdr(u8 *b, u8 fill)
{
	struct mpip_ftcp_seg g = { .seq = 7, .flags = MPIP_FTCP_SYN,
				   .mss = 1400 };

	memset(g.auth, fill, sizeof(g.auth));
	return mpip_ftcp_hdr_put(b, 40000, 19792, &g);
}

/*
 * The SYN's auth option is read only as sent: kind 253, length 16, ExID
 * 0x6d70, and only from a SYN; with any of these changed, or in an
 * option list that runs past its end, the SYN has none (and opens
 * nothing), while the MSS is still read from a well-formed list.
 */
UNIT_TEST(ftcp_syn_auth_option_exact_or_ignored)
{
	struct mpip_ftcp_seg g;
	u8 b[MPIP_FTCP_ASYN_HDR_LEN];
	unsigned int n;

	n = syn_hdr(b, 0x3c);
	CHECK_EQ(n, MPIP_FTCP_ASYN_HDR_LEN);
	CHECK_EQ(b[28], 253);
	CHECK_EQ(b[29], 16);
	CHECK_EQ(b[30] << 8 | b[31], 0x6d70);
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(g.authed);
	CHECK_EQ(g.auth[0], 0x3c);
	CHECK_EQ(g.auth[11], 0x3c);
	CHECK_EQ(g.mss, 1400);

	syn_hdr(b, 0x3c);
	b[31] ^= 1;				/* another ExID */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(!g.authed);
	CHECK_EQ(g.mss, 1400);

	syn_hdr(b, 0x3c);
	b[28] = 254;				/* the other experimental kind */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(!g.authed);

	syn_hdr(b, 0x3c);
	b[29] = 12;				/* shorter, then 4 NOPs */
	memset(b + 40, 1, 4);
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(!g.authed);
	CHECK_EQ(g.mss, 1400);

	syn_hdr(b, 0x3c);
	b[29] = 20;				/* past the header's end */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(!g.authed);
	CHECK_EQ(g.mss, 0);

	syn_hdr(b, 0x3c);
	b[13] = MPIP_FTCP_SYN | MPIP_FTCP_ACK;	/* a SYN-ACK carries none */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(!g.authed);
	CHECK_EQ(g.mss, 1400);

	syn_hdr(b, 0x3c);
	b[13] = MPIP_FTCP_ACK;			/* nor does any other */
	CHECK_EQ(mpip_ftcp_hdr_get(b, n, &g), n);
	CHECK(!g.authed);
	CHECK_EQ(g.mss, 0);
}
