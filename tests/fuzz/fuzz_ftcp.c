// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the fake-TCP headers and connection states of
 * kernel/core/ftcp.c, which read what anyone sends to the control port.
 *
 * The input is a TCP header and more, read with mpip_ftcp_hdr_get() from
 * a heap buffer of exactly its length (ASan sees any read beyond); what
 * it accepts is checked against a model of RFC 9293's header written
 * here, then given to a connection in each state, with a payload length
 * from the input's first bytes.
 *
 * Checks, any failure aborts:
 *  - an accepted header has a data offset of 20 to 60 bytes within the
 *    input, none of FIN, URG, ECE, CWR, and the sequence, acknowledgment
 *    and flags of the bytes themselves; the MSS is 0 unless SYN is set;
 *  - no segment moves an open connection's acknowledgment backwards or
 *    further than the window, nor closes it unless it is a RST with the
 *    sequence number expected, nor opens a closed one;
 *  - until the peer was heard in the connection, a segment is taken only
 *    if it acknowledges bytes of this connection;
 *  - a connection waiting for a SYN-ACK opens only on a SYN-ACK that
 *    acknowledges its SYN, and then answers with an ACK; it sends no
 *    further than the SYN-ACK's window, or, on a path whose connection
 *    was open before, nothing.
 *
 * Build and run: make -C tests/fuzz run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcp.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_ftcp: %s\n", what);
	abort();
}

static u32 be(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/*
 * Does a SYN (no ACK) header @b of @doff bytes hold, among its options,
 * the auth option as sent (kind 253, length 16, ExID 0x6d70) with the
 * block @g read?
 */
static int auth_option_there(const u8 *b, unsigned int doff,
			     const struct mpip_ftcp_seg *g)
{
	unsigned int i;

	if ((g->flags & (MPIP_FTCP_SYN | MPIP_FTCP_ACK)) != MPIP_FTCP_SYN)
		return 0;
	for (i = 20; i + 16 <= doff; i++)
		if (b[i] == 253 && b[i + 1] == 16 && b[i + 2] == 0x6d &&
		    b[i + 3] == 0x70 && !memcmp(b + i + 4, g->auth, 12))
			return 1;
	return 0;
}

static void check_header(const u8 *b, size_t n, unsigned int doff,
			 const struct mpip_ftcp_seg *g)
{
	if (doff < 20 || doff > 60 || doff > n || doff != (unsigned int)(b[12] >> 4) * 4)
		fail("data offset");
	if (b[13] & 0xe1)
		fail("flags taken that a fake connection never sends");
	if (g->seq != be(b + 4) || g->ack != be(b + 8) || g->flags != b[13])
		fail("fields differ from the bytes");
	if (g->mss && !(g->flags & MPIP_FTCP_SYN))
		fail("MSS without SYN");
	if (g->authed && !auth_option_there(b, doff, g))
		fail("auth block taken that is not in an exact option of a SYN");
}

static void check_open(const struct mpip_ftcp_seg *g, u32 len)
{
	struct mpip_ftcp c = { .snd_nxt = 5000, .snd_first = 3000,
			       .rcv_nxt = 1000, .ack_sent = 1000,
			       .state = MPIP_FTCP_OPEN };
	struct mpip_ftcp_seg r;
	enum mpip_ftcp_verdict v = mpip_ftcp_rx(&c, g, len, &r);

	if ((v == MPIP_FTCP_TAKE || v == MPIP_FTCP_TAKE_REPLY) &&
	    g->ack - 3000 > 2000)
		fail("taken before the peer was heard, acknowledging other bytes");

	if ((s32)(c.rcv_nxt - 1000) < 0 ||
	    c.rcv_nxt - 1000 > MPIP_FTCP_MAX_WIN + len)
		fail("acknowledgment moved backwards or past the window");
	if (c.state == MPIP_FTCP_CLOSED &&
	    ((g->flags & (MPIP_FTCP_RST | MPIP_FTCP_SYN)) != MPIP_FTCP_RST ||
	     g->seq != 1000))
		fail("closed by a segment that is no exact RST");
	if (c.state != MPIP_FTCP_OPEN && c.state != MPIP_FTCP_CLOSED)
		fail("open connection in another state");
	if (v == MPIP_FTCP_TAKE_REPLY && (r.ack != c.rcv_nxt || r.seq != 5000))
		fail("reply with other numbers");
}

static void check_closed_and_syn_sent(const struct mpip_ftcp_seg *g, u32 len,
				      bool was_open)
{
	struct mpip_ftcp c = { .state = MPIP_FTCP_CLOSED, .was_open = was_open };
	u32 win = was_open ? 0 : MPIP_FTCP_WINDOW;
	struct mpip_ftcp_seg r, syn;
	enum mpip_ftcp_verdict v;

	if (mpip_ftcp_rx(&c, g, len, &r) != MPIP_FTCP_DROP ||
	    c.state != MPIP_FTCP_CLOSED)
		fail("closed connection took a segment");
	mpip_ftcp_connect(&c, 77, 1400, &syn);
	v = mpip_ftcp_rx(&c, g, len, &r);
	if (c.state == MPIP_FTCP_OPEN &&
	    (g->flags != (MPIP_FTCP_SYN | MPIP_FTCP_ACK) || g->ack != 78 ||
	     v != MPIP_FTCP_REPLY || r.flags != MPIP_FTCP_ACK ||
	     r.ack != g->seq + 1))
		fail("opened without a SYN-ACK of our SYN, or no ACK back");
	/* nothing from the peer yet: the SYN-ACK's window, no more */
	if (c.state == MPIP_FTCP_OPEN &&
	    (mpip_ftcp_data(&c, win + 1, &r) || !mpip_ftcp_data(&c, win, &r) ||
	     mpip_ftcp_data(&c, 1, &r)))
		fail("the opener ran past the window it has before the peer's");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mpip_ftcp_seg g;
	unsigned int doff;
	u8 *b;
	u32 len;

	if (size < 4)
		return 0;
	len = be(data);
	b = malloc(size - 4);
	if (!b && size > 4)
		return 0;
	memcpy(b, data + 4, size - 4);
	doff = mpip_ftcp_hdr_get(b, (unsigned int)(size - 4), &g);
	if (doff) {
		check_header(b, size - 4, doff, &g);
		check_open(&g, len);
		check_closed_and_syn_sent(&g, len, false);
		check_closed_and_syn_sent(&g, len, true);
	}
	free(b);
	return 0;
}
