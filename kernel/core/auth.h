/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip CM authentication, portable building blocks for wire format v2:
 * SipHash-2-4, the per-peer keys and tokens derived from the two random
 * keys of a handshake, the MAC of a CM and a replay window.
 *
 * This file and auth.c build in the kernel module (where SipHash is the
 * kernel's own, <linux/siphash.h>) and, unchanged, in host unit tests
 * (where auth.c has a SipHash of its own).  No allocation, no locking:
 * the caller owns the state and serialises changes to a replay window.
 * Documentation/security.rst explains the design; the module's side of
 * it (handshake, keys per node, sealing and opening CMs) is keys.c.
 *
 * All byte strings below are big-endian, except SipHash's own input and
 * key, which the algorithm reads little-endian.
 *
 * Keys.  Each side of a peer pair draws a random 64-bit key at the
 * handshake (as MPTCP's MP_CAPABLE keys).  0 means "no key" and is never
 * drawn; two equal keys are refused (a reflected handshake).  From the
 * two keys, ordered by value (lo < hi), both sides derive
 *
 *   master = SipHash key (k0 = lo, k1 = hi)
 *   MAC key of direction d, 128 bits:
 *     k0 = SipHash(master, "mpip" 02 01 d 00)
 *     k1 = SipHash(master, "mpip" 02 01 d 01)
 *   where d = 0 for CMs sent by the holder of lo, 1 for those of hi;
 *   token of a key K, 32 bits (MPTCP-style: from the receiver's key only):
 *     SipHash((k0 = K, k1 = 0), "mpip" 02 02 00 00) >> 32
 *
 * A CM carries its receiver's token where v1 has the sender's node ID, so
 * the receiver finds the peer by a value it chose itself (unique in its
 * table, redraw the key otherwise) that nobody who missed the handshake
 * can know.
 *
 * MAC input of one CM (32 + 4N + E bytes; N addresses, E extension bytes):
 *
 *   off     size  field
 *   0       1     0xd7 (MPIP_CM_MAGIC)
 *   1       1     2 (MPIP_AUTH_VERSION)
 *   2       1     1 (MPIP_AUTH_DOMAIN_CM: what is being authenticated)
 *   3       1     IP protocol of the flow the CM belongs to (6, 17)
 *   4       8     counter, 64 bits
 *   12      4     token (the v1 node-ID field)
 *   16      2     session ID
 *   18      1     path ID
 *   19      1     feedback path ID
 *   20      4     timestamp
 *   24      4     path delay
 *   28      1     flags
 *   29      1     extended flags << 4 | N
 *   30      1     E
 *   31      1     0
 *   32      4N    addresses, as on the wire
 *   32+4N   E     extension bytes, as on the wire
 *
 * MAC = SipHash-2-4 of the MAC input under the direction's MAC key, all 64
 * bits.  The IP addresses and ports of the packet are not covered: NATs
 * rewrite them (see Documentation/security.rst, "MAC coverage").
 *
 * On the wire: a 12-byte auth block, the counter's low 32 bits
 * and the MAC, both big-endian.  The receiver infers the counter's high
 * 32 bits from its replay window, as IPsec's extended sequence numbers do
 * (RFC 4303, appendix A), but as the value nearest the window's newest
 * (mpip_replay_infer()); a wrong guess fails the MAC.
 */
#ifndef MPIP_CORE_AUTH_H
#define MPIP_CORE_AUTH_H

#include "compat.h"
#include "cm.h"

#define MPIP_AUTH_VERSION	2	/* the wire format this belongs to */
#define MPIP_AUTH_DOMAIN_CM	1	/* MAC input byte 2: a CM */
#define MPIP_AUTH_DOMAIN_SYN	2	/* MAC input byte 2: a fake-TCP SYN */
#define MPIP_AUTH_MAC_LEN	8	/* bytes of MAC on the wire */
#define MPIP_AUTH_BLOCK_LEN	12	/* counter low 32 bits + MAC */
#define MPIP_AUTH_EXT_MAX	32	/* extension bytes a MAC covers */
#define MPIP_AUTH_HDR_LEN	32	/* MAC input before the addresses */
#define MPIP_AUTH_INPUT_MAX	(MPIP_AUTH_HDR_LEN + 4 * MPIP_CM_MAX_ADDRS + \
				 MPIP_AUTH_EXT_MAX)
#define MPIP_AUTH_SYN_INPUT_LEN	20	/* MAC input of a SYN (below) */

/*
 * Replay window: a counter is accepted if it is newer than any accepted
 * so far, or at most MPIP_REPLAY_WINDOW - 1 behind the newest and not yet
 * seen.  The bitmap is a ring of MPIP_REPLAY_WORDS words (a power of two)
 * of which one is the word being filled, as in WireGuard.
 *
 * 8128 counters, not IPsec's 32 or 64: one counter serves all paths of a
 * direction, and paths of different delay reorder CMs by the packets sent
 * during the delay difference.  A CM further behind than that is lost to
 * its flow; at 60 Mbit/s of 1500-byte packets, 8128 are 1.6 s of the
 * slower path's lag, at 1 Gbit/s 98 ms.  (960 counters, 190 ms at 60
 * Mbit/s, were less than the queues of the NAT lab's links: every CM of
 * the slower paths then failed for a while.)  1 KiB per peer.
 */
#define MPIP_REPLAY_WORDS	128
#define MPIP_REPLAY_WINDOW	((MPIP_REPLAY_WORDS - 1) * 64)

/*
 * Results: 0 for success, negative for one of these.
 *
 * MPIP_AUTH_E_KEY: a key is 0, the keys are equal, or a token is 0: the
 * node whose key it is draws another.  MPIP_AUTH_E_INVAL: too many
 * addresses or extension bytes, an extension length that is not a
 * multiple of 4, extended flags beyond 4 bits, or counter 0.
 */
enum mpip_auth_err {
	MPIP_AUTH_E_KEY = -1,	/* unusable keys */
	MPIP_AUTH_E_INVAL = -2,	/* arguments the MAC input cannot hold */
	MPIP_AUTH_E_SHORT = -3,	/* auth block shorter than its length */
	MPIP_AUTH_E_OLD = -4,	/* counter 0 or behind the window */
	MPIP_AUTH_E_DUP = -5,	/* counter seen already: a replay */
	MPIP_AUTH_E_WRAP = -6,	/* counter beyond 2^64 - 1: never wraps */
	MPIP_AUTH_E_MAC = -7,	/* MAC mismatch: forged or corrupted */
};

/* A SipHash-2-4 key: k0 is key bytes 0..7 read little-endian, k1 8..15. */
struct mpip_auth_key {
	u64 k0;
	u64 k1;
};

/**
 * struct mpip_auth_peer - what a node derives from a peer pair's keys
 * @tx: MAC key of the CMs this node sends to the peer
 * @rx: MAC key of the CMs this node receives from the peer
 * @tx_token: token this node writes into CMs to the peer (the peer's)
 * @rx_token: token the peer writes into CMs to this node (this node's)
 */
struct mpip_auth_peer {
	struct mpip_auth_key tx;
	struct mpip_auth_key rx;
	u32 tx_token;
	u32 rx_token;
};

/**
 * struct mpip_auth_ctx - what a MAC covers besides the CM's fields
 * @proto: IP protocol of the flow the CM belongs to (6 TCP, 17 UDP)
 * @ext_len: extension bytes (0..MPIP_AUTH_EXT_MAX, a multiple of 4)
 * @ext: the extension bytes, as on the wire (may be NULL if @ext_len is 0)
 */
struct mpip_auth_ctx {
	u8 proto;
	u8 ext_len;
	const u8 *ext;
};

/**
 * struct mpip_replay - replay window of one direction of a peer pair
 * @top: the newest counter accepted so far; 0 before the first
 * @bits: ring bitmap: bit c % (64 * MPIP_REPLAY_WORDS) is set when
 *        counter c, between @top - MPIP_REPLAY_WINDOW + 1 and @top, was
 *        accepted
 *
 * All zeros (mpip_replay_init()) is the initial state.
 */
struct mpip_replay {
	u64 top;
	u64 bits[MPIP_REPLAY_WORDS];
};

/* SipHash-2-4 of @len bytes at @data under (@k0, @k1): 64-bit output. */
u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1);

u32 mpip_auth_token(u64 key);
int mpip_auth_derive(struct mpip_auth_peer *ap, u64 local_key,
		     u64 remote_key);

int mpip_auth_input(const struct mpip_cm *cm, u64 ctr,
		    const struct mpip_auth_ctx *ctx, u8 *buf);
int mpip_auth_mac(const struct mpip_auth_key *key, const struct mpip_cm *cm,
		  u64 ctr, const struct mpip_auth_ctx *ctx, u64 *mac);
int mpip_auth_seal(const struct mpip_auth_key *key, const struct mpip_cm *cm,
		   u64 ctr, const struct mpip_auth_ctx *ctx, u8 *blk);
int mpip_auth_mac_ok(const struct mpip_auth_key *key, const struct mpip_cm *cm,
		     u64 ctr, const struct mpip_auth_ctx *ctx, const u8 *blk,
		     unsigned int len);
int mpip_auth_check(const struct mpip_auth_key *key,
		    const struct mpip_replay *win, const struct mpip_cm *cm,
		    const struct mpip_auth_ctx *ctx, const u8 *blk,
		    unsigned int len, u64 *ctr);
int mpip_auth_verify(const struct mpip_auth_key *key, struct mpip_replay *win,
		     const struct mpip_cm *cm, const struct mpip_auth_ctx *ctx,
		     const u8 *blk, unsigned int len, u64 *ctr);

/*
 * A fake-TCP SYN (ftcp.h) opens a path's connection at the peer, which
 * answers it and holds its own end of that path out of the connection
 * for a while; so a SYN is authenticated as a CM is, with an auth block
 * of the same form and a counter from the same sequence as the sender's
 * CMs to that peer (one replay window covers both).  MAC input, 20
 * bytes:
 *
 *   off  size  field
 *   0    1     0xd7 (MPIP_CM_MAGIC)
 *   1    1     2 (MPIP_AUTH_VERSION)
 *   2    1     2 (MPIP_AUTH_DOMAIN_SYN): no CM's MAC input is a SYN's
 *   3    1     0
 *   4    8     counter, 64 bits
 *   12   4     the receiver's token
 *   16   4     the SYN's sequence number
 */
int mpip_auth_syn_seal(const struct mpip_auth_key *key, u64 ctr, u32 token,
		       u32 seq, u8 *blk);
int mpip_auth_syn_check(const struct mpip_auth_key *key,
			const struct mpip_replay *win, u32 token, u32 seq,
			const u8 *blk, u64 *ctr);

void mpip_replay_init(struct mpip_replay *win);
int mpip_replay_infer(const struct mpip_replay *win, u32 lo, u64 *ctr);
int mpip_replay_check(const struct mpip_replay *win, u64 ctr);
int mpip_replay_commit(struct mpip_replay *win, u64 ctr);

#endif /* MPIP_CORE_AUTH_H */
