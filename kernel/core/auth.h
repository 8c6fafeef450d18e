/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpip CM authentication, portable building blocks for wire format v2:
 * SipHash-2-4 and a replay window.
 *
 * This file and auth.c build in the kernel module (where SipHash is the
 * kernel's own, <linux/siphash.h>) and, unchanged, in host unit tests
 * (where auth.c has a SipHash of its own).  No allocation, no locking:
 * the caller owns the state and serialises changes to a replay window.
 */
#ifndef MPIP_CORE_AUTH_H
#define MPIP_CORE_AUTH_H

#include "compat.h"

/*
 * Replay window: a counter is accepted if it is newer than any accepted
 * so far, or at most MPIP_REPLAY_WINDOW - 1 behind the newest and not yet
 * seen.  The bitmap is a ring of MPIP_REPLAY_WORDS words (a power of two)
 * of which one is the word being filled, as in WireGuard.
 *
 * 960 counters, not IPsec's 32 or 64: one counter serves all paths of a
 * direction, and paths of different delay reorder CMs by the packets sent
 * during the delay difference (at 40 Mbit/s of 1500-byte packets, 960 are
 * 288 ms).  136 bytes per peer.
 */
#define MPIP_REPLAY_WORDS	16
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

/* A SipHash-2-4 key: k0 is key bytes 0..7 read little-endian, k1 8..15. */
struct mpip_auth_key {
	u64 k0;
	u64 k1;
};

/* SipHash-2-4 of @len bytes at @data under (@k0, @k1): 64-bit output. */
u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1);

void mpip_replay_init(struct mpip_replay *win);
int mpip_replay_infer(const struct mpip_replay *win, u32 lo, u64 *ctr);
int mpip_replay_check(const struct mpip_replay *win, u64 ctr);
int mpip_replay_commit(struct mpip_replay *win, u64 ctr);

#endif /* MPIP_CORE_AUTH_H */
