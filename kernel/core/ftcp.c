// SPDX-License-Identifier: GPL-2.0
/*
 * mpip fake-TCP encapsulation: the state of a path's fake connection and
 * its TCP headers (see ftcp.h).  Portable: no kernel API.
 */
#include "ftcp.h"

#define MPIP_FTCP_URG		0x20
#define MPIP_FTCP_ECE		0x40
#define MPIP_FTCP_CWR		0x80

/* Is sequence number @a after @b, modulo 2^32? */
static bool mpip_ftcp_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/* Does @seq lie within the window around @expected, either way? */
static bool mpip_ftcp_near(u32 seq, u32 expected)
{
	u32 d = seq - expected;

	return d < MPIP_FTCP_MAX_WIN || -d < MPIP_FTCP_MAX_WIN;
}

void mpip_ftcp_connect(struct mpip_ftcp *c, u32 isn, u16 mss,
		       struct mpip_ftcp_seg *syn)
{
	syn->seq = isn;
	syn->ack = 0;
	syn->flags = MPIP_FTCP_SYN;
	syn->mss = mss;
	c->snd_nxt = isn + 1;
	c->snd_first = c->snd_nxt;
	c->rcv_nxt = 0;
	c->ack_sent = 0;
	c->snd_max = 0;
	c->wide = false;
	c->state = MPIP_FTCP_SYN_SENT;
}

void mpip_ftcp_synack(const struct mpip_ftcp_seg *in, u32 cookie, u16 mss,
		      struct mpip_ftcp_seg *out)
{
	out->seq = cookie;
	out->ack = in->seq + 1;
	out->flags = MPIP_FTCP_SYN | MPIP_FTCP_ACK;
	out->mss = mss;
}

/* An ACK of all we received, which we note as sent. */
static void mpip_ftcp_ack(struct mpip_ftcp *c, struct mpip_ftcp_seg *out)
{
	out->seq = c->snd_nxt;
	out->ack = c->rcv_nxt;
	out->flags = MPIP_FTCP_ACK;
	out->mss = 0;
	c->ack_sent = c->rcv_nxt;
}

bool mpip_ftcp_accept(struct mpip_ftcp *c, const struct mpip_ftcp_seg *in,
		      u32 len, u32 cookie, bool again,
		      struct mpip_ftcp_seg *ack)
{
	if ((in->flags & (MPIP_FTCP_SYN | MPIP_FTCP_RST | MPIP_FTCP_ACK)) !=
	    MPIP_FTCP_ACK || in->ack != cookie + 1 ||
	    (c->state == MPIP_FTCP_OPEN && !again))
		return false;
	c->snd_nxt = cookie + 1;
	c->snd_first = c->snd_nxt;
	c->rcv_nxt = in->seq + len;
	c->snd_max = c->snd_nxt;
	/* @in crossed the middleboxes with the opener's scaled window */
	c->wide = true;
	c->state = MPIP_FTCP_OPEN;
	c->was_open = true;
	mpip_ftcp_ack(c, ack);
	return true;
}

bool mpip_ftcp_data(struct mpip_ftcp *c, u32 len, struct mpip_ftcp_seg *out)
{
	if (c->state != MPIP_FTCP_OPEN ||
	    (!c->wide && mpip_ftcp_after(c->snd_nxt + len, c->snd_max)))
		return false;
	out->seq = c->snd_nxt;
	out->ack = c->rcv_nxt;
	out->flags = MPIP_FTCP_ACK | MPIP_FTCP_PSH;
	out->mss = 0;
	c->snd_nxt += len;
	c->ack_sent = c->rcv_nxt;
	return true;
}

/* The SYN-ACK to our SYN: the connection opens, and we acknowledge it. */
static enum mpip_ftcp_verdict mpip_ftcp_rx_synack(struct mpip_ftcp *c,
						  const struct mpip_ftcp_seg *in,
						  struct mpip_ftcp_seg *reply)
{
	if (in->flags != (MPIP_FTCP_SYN | MPIP_FTCP_ACK) ||
	    in->ack != c->snd_nxt)
		return MPIP_FTCP_DROP;
	c->rcv_nxt = in->seq + 1;
	/*
	 * What a NAT lets us send until it sees the peer's window scaled;
	 * or nothing, if it may have kept the path's old connection and
	 * not followed this one (the peer opens its end from our ACK).
	 */
	c->snd_max = c->snd_nxt + (c->was_open ? 0 : MPIP_FTCP_WINDOW);
	c->state = MPIP_FTCP_OPEN;
	c->was_open = true;
	mpip_ftcp_ack(c, reply);
	return MPIP_FTCP_REPLY;
}

/*
 * Does @in acknowledge what we may have sent: nothing past our next
 * byte, and, until we heard from the peer, only bytes of this connection
 * (a segment the peer sent on the path's old one acknowledges others)?
 */
static bool mpip_ftcp_ack_ok(const struct mpip_ftcp *c,
			     const struct mpip_ftcp_seg *in)
{
	if (!c->wide)
		return in->ack - c->snd_first <= c->snd_nxt - c->snd_first;
	return !mpip_ftcp_after(in->ack, c->snd_nxt) &&
	       mpip_ftcp_near(in->ack, c->snd_nxt);
}

/*
 * A segment on the open connection: in the window, acknowledging nothing
 * we did not send.  The acknowledgment we send moves to the end of the
 * highest one seen; gaps are left behind.  An ACK goes back when what we
 * received ran MPIP_FTCP_ACK_GAP past the last one sent.
 */
static enum mpip_ftcp_verdict mpip_ftcp_rx_open(struct mpip_ftcp *c,
						const struct mpip_ftcp_seg *in,
						u32 len,
						struct mpip_ftcp_seg *reply)
{
	u32 end = in->seq + len;

	if ((in->flags & (MPIP_FTCP_SYN | MPIP_FTCP_ACK)) != MPIP_FTCP_ACK ||
	    !mpip_ftcp_near(in->seq, c->rcv_nxt) || !mpip_ftcp_ack_ok(c, in))
		return MPIP_FTCP_DROP;
	/* it crossed the middleboxes with the peer's scaled window */
	c->wide = true;
	if (mpip_ftcp_after(end, c->rcv_nxt))
		c->rcv_nxt = end;
	if (c->rcv_nxt - c->ack_sent < MPIP_FTCP_ACK_GAP)
		return MPIP_FTCP_TAKE;
	mpip_ftcp_ack(c, reply);
	return MPIP_FTCP_TAKE_REPLY;
}

enum mpip_ftcp_verdict mpip_ftcp_rx(struct mpip_ftcp *c,
				    const struct mpip_ftcp_seg *in, u32 len,
				    struct mpip_ftcp_seg *reply)
{
	switch (c->state) {
	case MPIP_FTCP_SYN_SENT:
		if (in->flags & MPIP_FTCP_RST) {
			if ((in->flags & MPIP_FTCP_ACK) && in->ack == c->snd_nxt)
				c->state = MPIP_FTCP_CLOSED;
			return MPIP_FTCP_DROP;
		}
		return mpip_ftcp_rx_synack(c, in, reply);
	case MPIP_FTCP_OPEN:
		/*
		 * A RST closes only with the very sequence number expected
		 * (RFC 5961: one in the window is too easy to guess when the
		 * window is a quarter of the space); a SYN changes nothing
		 * (the opener opens again when its path goes down).
		 */
		if (in->flags & (MPIP_FTCP_RST | MPIP_FTCP_SYN)) {
			if (!(in->flags & MPIP_FTCP_SYN) && in->seq == c->rcv_nxt)
				c->state = MPIP_FTCP_CLOSED;
			return MPIP_FTCP_DROP;
		}
		return mpip_ftcp_rx_open(c, in, len, reply);
	default:
		return MPIP_FTCP_DROP;
	}
}

unsigned int mpip_ftcp_hdr_len(u8 flags)
{
	if (!(flags & MPIP_FTCP_SYN))
		return MPIP_FTCP_HDR_LEN;
	return flags & MPIP_FTCP_ACK ? MPIP_FTCP_SYN_HDR_LEN :
				       MPIP_FTCP_ASYN_HDR_LEN;
}

static void mpip_ftcp_put16(u8 *b, u16 v)
{
	b[0] = v >> 8;
	b[1] = v & 0xff;
}

static void mpip_ftcp_put32(u8 *b, u32 v)
{
	mpip_ftcp_put16(b, v >> 16);
	mpip_ftcp_put16(b + 2, v & 0xffff);
}

static u32 mpip_ftcp_get32(const u8 *b)
{
	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}

unsigned int mpip_ftcp_hdr_put(u8 *b, u16 sport, u16 dport,
			       const struct mpip_ftcp_seg *s)
{
	unsigned int len = mpip_ftcp_hdr_len(s->flags);

	mpip_ftcp_put16(b, sport);
	mpip_ftcp_put16(b + 2, dport);
	mpip_ftcp_put32(b + 4, s->seq);
	mpip_ftcp_put32(b + 8, s->ack);
	b[12] = (u8)(len / 4 << 4);
	b[13] = s->flags;
	mpip_ftcp_put16(b + 14, MPIP_FTCP_WINDOW);
	memset(b + 16, 0, 4);		/* checksum, urgent pointer */
	if (len >= MPIP_FTCP_SYN_HDR_LEN) {
		b[20] = 2;			/* MSS */
		b[21] = 4;
		mpip_ftcp_put16(b + 22, s->mss);
		b[24] = 1;			/* NOP */
		b[25] = 3;			/* window scale */
		b[26] = 3;
		b[27] = MPIP_FTCP_WSCALE;
	}
	if (len == MPIP_FTCP_ASYN_HDR_LEN) {
		b[28] = MPIP_FTCP_OPT_EXP;
		b[29] = MPIP_FTCP_OPT_AUTH_LEN;
		mpip_ftcp_put16(b + 30, MPIP_FTCP_EXID);
		memcpy(b + 32, s->auth, MPIP_FTCP_AUTH_LEN);
	}
	return len;
}

/* Option @o, @n bytes long, of a SYN or SYN-ACK: into @s if it is ours. */
static void mpip_ftcp_opt(const u8 *o, unsigned int n,
			  struct mpip_ftcp_seg *s)
{
	if (o[0] == 2 && n == 4) {
		s->mss = (u16)(o[2] << 8 | o[3]);
	} else if (o[0] == MPIP_FTCP_OPT_EXP && n == MPIP_FTCP_OPT_AUTH_LEN &&
		   (o[2] << 8 | o[3]) == MPIP_FTCP_EXID &&
		   !(s->flags & MPIP_FTCP_ACK)) {
		memcpy(s->auth, o + 4, MPIP_FTCP_AUTH_LEN);
		s->authed = true;
	}
}

/*
 * The options @o, @n bytes, of a SYN or SYN-ACK, into @s; none if the
 * list runs past its end.
 */
static void mpip_ftcp_opts(const u8 *o, unsigned int n,
			   struct mpip_ftcp_seg *s)
{
	unsigned int i = 0;

	while (i < n && o[i] != 0) {
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= n || o[i + 1] < 2 || i + o[i + 1] > n) {
			/* a list no TCP would send: none of it counts */
			s->mss = 0;
			s->authed = false;
			return;
		}
		mpip_ftcp_opt(o + i, o[i + 1], s);
		i += o[i + 1];
	}
}

unsigned int mpip_ftcp_hdr_get(const u8 *b, unsigned int len,
			       struct mpip_ftcp_seg *s)
{
	unsigned int doff;

	if (len < MPIP_FTCP_HDR_LEN)
		return 0;
	doff = (unsigned int)(b[12] >> 4) * 4;
	if (doff < MPIP_FTCP_HDR_LEN || doff > len ||
	    (b[13] & (MPIP_FTCP_FIN | MPIP_FTCP_URG | MPIP_FTCP_ECE |
		      MPIP_FTCP_CWR)))
		return 0;
	s->seq = mpip_ftcp_get32(b + 4);
	s->ack = mpip_ftcp_get32(b + 8);
	s->flags = b[13];
	s->mss = 0;
	s->authed = false;
	if (s->flags & MPIP_FTCP_SYN)
		mpip_ftcp_opts(b + MPIP_FTCP_HDR_LEN, doff - MPIP_FTCP_HDR_LEN,
			       s);
	return doff;
}
