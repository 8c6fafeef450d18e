/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip fake-TCP encapsulation of a path (issue 21, nat_mode faketcp): for
 * NATs and firewalls that pass TCP but drop UDP.  Portable: no kernel API.
 * Wired into the module by kernel/ftcp.c (nat_mode or link nat faketcp).
 *
 * A path inside fake TCP carries its packets as segments of one TCP
 * connection of its own, between the control port and the path's port:
 *
 *   IP (path addresses, protocol TCP) | TCP header (this file) | shim
 *   (encap.h, type MPIP_ENCAP_T_DATA) | inner TCP or UDP header, payload
 *   and CM trailer
 *
 * with a TCP checksum valid over all of it.  No segment is ever sent
 * again, and nothing waits for acknowledgments: the connection exists
 * only for the middleboxes, which must see one they can track.  A Linux
 * NAT (nf_conntrack_proto_tcp.c, tcp_in_window()) passes a segment whose
 *  - sequence number lies below the highest acknowledgment it saw from
 *    the other side plus that side's window, and above what this side
 *    sent less the other side's largest window;
 *  - acknowledgment number does not pass what the other side sent.
 * So each end numbers its bytes in sequence (a lost segment leaves a gap,
 * which conntrack does not mind), acknowledges the highest end of what it
 * received (never more than the peer sent), and offers the largest window
 * there is (65535 << 14, from a window scale option on the SYN and the
 * SYN-ACK).  A NAT takes the window of a SYN or SYN-ACK unscaled, so the
 * end that answered the SYN sends an ACK as soon as its end opens, and
 * either end sends one whenever what it received ran a quarter of the
 * window past what it last acknowledged: a bulk flow in one direction
 * then never leaves the window.  Until the first segment from the
 * passive end arrives (that ACK, or anything after it), a NAT knows only
 * the SYN-ACK's 65535 bytes: the opener sends no further than that
 * inside the connection in the meantime (what would go further goes
 * inside UDP).  A Linux NAT lets segments past that window through for
 * up to one more window and finds the rest INVALID: a flow of more than
 * 128 KB a round trip over a path that had just opened lost most of its
 * packets that way.
 *
 * The handshake is a real one, so that a NAT makes its mapping and a
 * firewall sees an established connection: the end behind the NAT sends
 * a SYN, the peer answers with a SYN-ACK whose sequence number is a
 * cookie (the caller's keyed hash of the four-tuple: the peer keeps no
 * state for a SYN), and the first segment after it (an ACK, or data)
 * acknowledges cookie + 1.  The SYN carries an auth block in an option
 * (below), which the caller fills in and checks (auth.h): the peer
 * answers only the SYNs of the node it shares keys with, once each.  A
 * RST with the sequence number expected closes it; the initiator then
 * starts again, as it does when its path goes down.
 */
#ifndef MPIP_CORE_FTCP_H
#define MPIP_CORE_FTCP_H

#include "compat.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

/* TCP header flags, as in the header's 14th byte */
#define MPIP_FTCP_FIN		0x01
#define MPIP_FTCP_SYN		0x02
#define MPIP_FTCP_RST		0x04
#define MPIP_FTCP_PSH		0x08
#define MPIP_FTCP_ACK		0x10

#define MPIP_FTCP_HDR_LEN	20	/* a segment without options */
#define MPIP_FTCP_SYN_HDR_LEN	28	/* a SYN-ACK: MSS, NOP, WS */
/*
 * A SYN: a SYN-ACK's options and the SYN's auth block (auth.h) in an
 * experimental option (RFC 6994): kind 253, length 16, ExID 0x6d70
 * ("mp"), the block's 12 bytes.  A SYN without it, or with it of another
 * length, opens nothing.
 */
#define MPIP_FTCP_ASYN_HDR_LEN	44
#define MPIP_FTCP_OPT_EXP	253
#define MPIP_FTCP_OPT_AUTH_LEN	16
#define MPIP_FTCP_EXID		0x6d70
#define MPIP_FTCP_AUTH_LEN	12	/* MPIP_AUTH_BLOCK_LEN */
/* The longest header read: a TCP header's longest */
#define MPIP_FTCP_MAX_HDR_LEN	60
#define MPIP_FTCP_WSCALE	14
#define MPIP_FTCP_WINDOW	0xffff
/*
 * How far a sequence number may lie from the one expected, either way,
 * and still be taken: the window offered (65535 << 14 is just under
 * 2^30), as conntrack allows.
 */
#define MPIP_FTCP_MAX_WIN	(0xffffu << MPIP_FTCP_WSCALE)
/* What an end receives past its last acknowledgment before it sends one */
#define MPIP_FTCP_ACK_GAP	(MPIP_FTCP_MAX_WIN / 4)

enum mpip_ftcp_state {
	MPIP_FTCP_CLOSED,
	MPIP_FTCP_SYN_SENT,	/* we sent a SYN */
	MPIP_FTCP_OPEN,
};

/*
 * One end of a path's fake connection.  @wide: a segment of the peer's
 * came in after the handshake (or, at the passive end, the opener's
 * ACK), so every middlebox on the way has seen its window scaled; until
 * then the opener may send no further than @snd_max, the end of the
 * SYN-ACK's window taken unscaled, or, if the path had a connection
 * open before (@was_open), nothing: a NAT may still track the old one,
 * and it follows the new one only if it saw the SYN-ACK right after the
 * SYN (nf_conntrack_proto_tcp.c: an "ignored" SYN), which the opener
 * cannot tell before the peer answers its ACK.  So until @wide, only a
 * segment that acknowledges our bytes of this connection (from
 * @snd_first on) counts as the peer's: one of the old connection the
 * peer sent meanwhile acknowledges other numbers.
 */
struct mpip_ftcp {
	u32 snd_nxt;	/* the sequence number of our next byte */
	u32 snd_first;	/* the sequence number of our first byte */
	u32 rcv_nxt;	/* what we acknowledge: the end of the peer's bytes */
	u32 ack_sent;	/* the acknowledgment we sent last */
	u32 snd_max;	/* until @wide: the end of what we may send */
	u8 state;	/* enum mpip_ftcp_state */
	u8 wide;	/* the peer's scaled window was seen on the way */
	u8 was_open;	/* a connection of this end opened before */
};

/*
 * The fields of a fake segment's TCP header that are not fixed.  @auth:
 * a SYN's auth block, written by mpip_ftcp_hdr_put() into a SYN, and
 * read by mpip_ftcp_hdr_get() from a SYN that has it (then @authed).
 */
struct mpip_ftcp_seg {
	u32 seq;
	u32 ack;
	u8 flags;	/* MPIP_FTCP_* */
	u16 mss;	/* SYN and SYN-ACK only: the MSS option */
	bool authed;
	u8 auth[MPIP_FTCP_AUTH_LEN];
};

enum mpip_ftcp_verdict {
	MPIP_FTCP_DROP,		/* not one of the connection's: drop it */
	MPIP_FTCP_TAKE,		/* take its payload, if any */
	MPIP_FTCP_REPLY,	/* send the reply filled in (no payload) */
	MPIP_FTCP_TAKE_REPLY,	/* both */
};

/* Start the connection as its initiator: the SYN to send. */
void mpip_ftcp_connect(struct mpip_ftcp *c, u32 isn, u16 mss,
		       struct mpip_ftcp_seg *syn);

/*
 * The answer to a SYN @in, from an end that keeps no state: a SYN-ACK
 * whose sequence number is @cookie.
 */
void mpip_ftcp_synack(const struct mpip_ftcp_seg *in, u32 cookie, u16 mss,
		      struct mpip_ftcp_seg *out);

/*
 * Open the passive end of a connection from the first segment @in after
 * the SYN-ACK (an ACK, with or without payload, of length @len), if it
 * acknowledges @cookie + 1.  A connection that is open already is opened
 * again only if @again: the opener is opening a new one (a SYN for it
 * came lately).  Otherwise @in is a copy of the opener's first segment,
 * late or replayed, or one of those it sent before our answer (they
 * acknowledge the cookie too): taking it would move our numbers back,
 * behind what a NAT saw of the connection.  Returns whether it opened;
 * then @ack is an ACK to send, which gives the NAT the scaled window.
 */
bool mpip_ftcp_accept(struct mpip_ftcp *c, const struct mpip_ftcp_seg *in,
		      u32 len, u32 cookie, bool again,
		      struct mpip_ftcp_seg *ack);

/*
 * The header of a segment with @len bytes of payload on open connection
 * @c (which counts them); false if the connection is not open, or if it
 * is but the segment would end past @c->snd_max while the peer's scaled
 * window has not been seen (@c->wide).
 */
bool mpip_ftcp_data(struct mpip_ftcp *c, u32 len, struct mpip_ftcp_seg *out);

/*
 * Segment @in, with @len bytes of payload, came in on connection @c:
 * what to do with it, and @reply, when there is one to send.
 */
enum mpip_ftcp_verdict mpip_ftcp_rx(struct mpip_ftcp *c,
				    const struct mpip_ftcp_seg *in, u32 len,
				    struct mpip_ftcp_seg *reply);

/* The length of the header of a segment with flags @flags. */
unsigned int mpip_ftcp_hdr_len(u8 flags);

/*
 * Write the TCP header of @s, from port @sport to port @dport (host
 * order), to @b (mpip_ftcp_hdr_len() bytes); its checksum field is left
 * 0.  Returns its length.
 */
unsigned int mpip_ftcp_hdr_put(u8 *b, u16 sport, u16 dport,
			       const struct mpip_ftcp_seg *s);

/*
 * Read the TCP header at @b, @len bytes available, into @s; returns its
 * length (data offset), or 0 if it is not one a fake connection sends:
 * too short, a data offset past @len, or URG, FIN, ECE or CWR set.  Of
 * the options, those of a SYN or SYN-ACK are read: the MSS and a SYN's
 * auth block; any other is passed over.
 */
unsigned int mpip_ftcp_hdr_get(const u8 *b, unsigned int len,
			       struct mpip_ftcp_seg *s);

#endif /* MPIP_CORE_FTCP_H */
