// SPDX-License-Identifier: GPL-2.0
/*
 * mpip CM authentication for wire format v2: SipHash-2-4, key and token
 * derivation, the MAC of a CM and a replay window.
 *
 * Portable C: in the module SipHash is the kernel's (lib/siphash.c); on
 * the host it is the implementation below, written from the SipHash
 * paper (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * INDOCRYPT 2012).  No allocation, no 64-bit division.  The formats are
 * described in auth.h and Documentation/security.rst.
 */
#include "auth.h"

#define AUTH_PURPOSE_MAC	1	/* key derivation: a MAC key */
#define AUTH_PURPOSE_TOKEN	2	/* key derivation: a token */

#ifdef __KERNEL__
u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1)
{
	const siphash_key_t key = { { k0, k1 } };

	return siphash(data, len, &key);
}
#else
/* The initial state: "somepseudorandomlygeneratedbytes" as four words. */
#define SIP_C0	0x736f6d6570736575ULL
#define SIP_C1	0x646f72616e646f6dULL
#define SIP_C2	0x6c7967656e657261ULL
#define SIP_C3	0x7465646279746573ULL

struct sip_state {
	u64 v0, v1, v2, v3;
};

static u64 sip_rotl(u64 x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = sip_rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = sip_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = sip_rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = sip_rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = sip_rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = sip_rotl(s->v2, 32);
}

/* One message word: 2 compression rounds (the "2" of SipHash-2-4). */
static void sip_word(struct sip_state *s, u64 m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* Up to 8 bytes at @p as a little-endian number. */
static u64 sip_le(const u8 *p, unsigned int n)
{
	unsigned int i;
	u64 m = 0;

	for (i = 0; i < n; i++)
		m |= (u64)p[i] << (8 * i);
	return m;
}

u64 mpip_siphash(const void *data, unsigned int len, u64 k0, u64 k1)
{
	struct sip_state s = {
		k0 ^ SIP_C0, k1 ^ SIP_C1, k0 ^ SIP_C2, k1 ^ SIP_C3,
	};
	const u8 *p = data;
	unsigned int off, i;

	for (off = 0; off + 8 <= len; off += 8)
		sip_word(&s, sip_le(p + off, 8));
	/* The last word: the 0..7 bytes left, and the length mod 256 on top. */
	sip_word(&s, sip_le(p + off, len - off) | (u64)(len & 0xff) << 56);
	/* Finalisation: 4 rounds (the "4"). */
	s.v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
#endif

static void auth_put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void auth_put32(u8 *p, u32 v)
{
	auth_put16(p, (u16)(v >> 16));
	auth_put16(p + 2, (u16)v);
}

static void auth_put64(u8 *p, u64 v)
{
	auth_put32(p, (u32)(v >> 32));
	auth_put32(p + 4, (u32)v);
}

static u32 auth_get32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) |
	       ((u32)p[2] << 8) | (u32)p[3];
}

static u64 auth_get64(const u8 *p)
{
	return (u64)auth_get32(p) << 32 | auth_get32(p + 4);
}

/* One 64-bit output of the key-derivation PRF under @k. */
static u64 auth_kdf(const struct mpip_auth_key *k, u8 purpose, u8 dir,
		    u8 half)
{
	const u8 in[8] = { 'm', 'p', 'i', 'p', MPIP_AUTH_VERSION, purpose,
			   dir, half };

	return mpip_siphash(in, sizeof(in), k->k0, k->k1);
}

/**
 * mpip_auth_token() - the token of a key
 * @key: a node's random key for one peer
 *
 * The token identifies the peer pair at the node that drew @key: the peer
 * writes it into every CM it sends to that node.  It depends on @key only,
 * so a node can check when it draws a key that the token is not 0 and not
 * in use towards another peer, and draw again otherwise (as MPTCP does).
 *
 * Return: the token, or 0 if @key must not be used.
 */
u32 mpip_auth_token(u64 key)
{
	const struct mpip_auth_key k = { key, 0 };

	if (!key)
		return 0;
	return (u32)(auth_kdf(&k, AUTH_PURPOSE_TOKEN, 0, 0) >> 32);
}

static void auth_mac_key(const struct mpip_auth_key *master, u8 dir,
			 struct mpip_auth_key *out)
{
	out->k0 = auth_kdf(master, AUTH_PURPOSE_MAC, dir, 0);
	out->k1 = auth_kdf(master, AUTH_PURPOSE_MAC, dir, 1);
}

/**
 * mpip_auth_derive() - keys and tokens of a peer pair
 * @ap: filled in; all zeros on failure
 * @local_key: the key this node drew for the peer
 * @remote_key: the key the peer sent
 *
 * Both nodes get the same two MAC keys, each its own @tx being the other's
 * @rx, without knowing which of them started the handshake: the keys are
 * ordered by value.  The direction is part of the MAC key, so a CM sent
 * back to its sender never verifies there.
 *
 * Return: 0, or MPIP_AUTH_E_KEY if a key is 0, the keys are equal or a
 * token is 0 (the node whose key it is draws again).
 */
int mpip_auth_derive(struct mpip_auth_peer *ap, u64 local_key,
		     u64 remote_key)
{
	struct mpip_auth_key master;
	u8 dir;

	memset(ap, 0, sizeof(*ap));
	if (!local_key || !remote_key || local_key == remote_key)
		return MPIP_AUTH_E_KEY;
	dir = local_key > remote_key;
	master.k0 = dir ? remote_key : local_key;
	master.k1 = dir ? local_key : remote_key;

	ap->tx_token = mpip_auth_token(remote_key);
	ap->rx_token = mpip_auth_token(local_key);
	if (!ap->tx_token || !ap->rx_token) {
		memset(ap, 0, sizeof(*ap));
		return MPIP_AUTH_E_KEY;
	}
	auth_mac_key(&master, dir, &ap->tx);
	auth_mac_key(&master, !dir, &ap->rx);
	return 0;
}

/**
 * mpip_auth_input() - the bytes a CM's MAC covers
 * @cm: the CM; its node_id field holds the token
 * @ctr: the CM's counter, not 0
 * @ctx: protocol and extension bytes
 * @buf: MPIP_AUTH_INPUT_MAX bytes
 *
 * Return: the number of bytes written to @buf, or MPIP_AUTH_E_INVAL.
 */
int mpip_auth_input(const struct mpip_cm *cm, u64 ctr,
		    const struct mpip_auth_ctx *ctx, u8 *buf)
{
	unsigned int a = MPIP_AUTH_HDR_LEN + 4 * cm->naddrs;

	if (!ctr || cm->naddrs > MPIP_CM_MAX_ADDRS ||
	    cm->xflags > MPIP_CM_X_MASK || ctx->ext_len > MPIP_AUTH_EXT_MAX ||
	    ctx->ext_len % 4 || (ctx->ext_len && !ctx->ext))
		return MPIP_AUTH_E_INVAL;

	buf[0] = MPIP_CM_MAGIC;
	buf[1] = MPIP_AUTH_VERSION;
	buf[2] = MPIP_AUTH_DOMAIN_CM;
	buf[3] = ctx->proto;
	auth_put64(buf + 4, ctr);
	auth_put32(buf + 12, cm->node_id);
	auth_put16(buf + 16, cm->session_id);
	buf[18] = cm->path_id;
	buf[19] = cm->fb_path_id;
	auth_put32(buf + 20, cm->timestamp_us);
	auth_put32(buf + 24, cm->path_delay_us);
	buf[28] = cm->flags;
	buf[29] = cm->xflags << 4 | cm->naddrs;
	buf[30] = ctx->ext_len;
	buf[31] = 0;
	memcpy(buf + MPIP_AUTH_HDR_LEN, cm->addrs, 4 * cm->naddrs);
	if (ctx->ext_len)
		memcpy(buf + a, ctx->ext, ctx->ext_len);
	return (int)(a + ctx->ext_len);
}

/**
 * mpip_auth_mac() - the MAC of a CM
 * @key: the MAC key of the CM's direction
 * @cm: the CM
 * @ctr: its counter, not 0
 * @ctx: protocol and extension bytes
 * @mac: set to the MAC
 *
 * Return: 0, or MPIP_AUTH_E_INVAL (see mpip_auth_input()).
 */
int mpip_auth_mac(const struct mpip_auth_key *key, const struct mpip_cm *cm,
		  u64 ctr, const struct mpip_auth_ctx *ctx, u64 *mac)
{
	u8 in[MPIP_AUTH_INPUT_MAX];
	int n;

	n = mpip_auth_input(cm, ctr, ctx, in);
	if (n < 0)
		return n;
	*mac = mpip_siphash(in, (unsigned int)n, key->k0, key->k1);
	return 0;
}

/**
 * mpip_auth_seal() - the auth block of a CM to send
 * @key: the sender's tx MAC key for the peer
 * @cm: the CM, with the peer's token in its node_id field
 * @ctr: the next counter of this direction: 1 for the first CM, then one
 *       more for each CM; the sender stops (new handshake) before it would
 *       wrap
 * @ctx: protocol and extension bytes
 * @blk: MPIP_AUTH_BLOCK_LEN bytes, written
 *
 * Return: 0, or MPIP_AUTH_E_INVAL.
 */
int mpip_auth_seal(const struct mpip_auth_key *key, const struct mpip_cm *cm,
		   u64 ctr, const struct mpip_auth_ctx *ctx, u8 *blk)
{
	u64 mac;
	int ret;

	ret = mpip_auth_mac(key, cm, ctr, ctx, &mac);
	if (ret)
		return ret;
	auth_put32(blk, (u32)ctr);
	auth_put64(blk + 4, mac);
	return 0;
}

/**
 * mpip_auth_mac_ok() - does a received CM's MAC verify under a known counter?
 * @key: the receiver's rx MAC key for the peer
 * @cm: the CM as decoded
 * @ctr: the full counter (from a handshake extension, or inferred)
 * @ctx: protocol and extension bytes, as received
 * @blk: the auth block as received
 * @len: bytes at @blk
 *
 * The counter's low half in @blk is not compared with @ctr: the MAC
 * covers the full counter, so a wrong one fails the MAC.  No window is
 * looked at or changed.
 *
 * Return: 0, or a negative enum mpip_auth_err.
 */
int mpip_auth_mac_ok(const struct mpip_auth_key *key, const struct mpip_cm *cm,
		     u64 ctr, const struct mpip_auth_ctx *ctx, const u8 *blk,
		     unsigned int len)
{
	u64 mac;
	int ret;

	if (len < MPIP_AUTH_BLOCK_LEN)
		return MPIP_AUTH_E_SHORT;
	ret = mpip_auth_mac(key, cm, ctr, ctx, &mac);
	if (ret)
		return ret;
	/* One comparison of the whole value, no early exit per byte. */
	if (mac ^ auth_get64(blk + 4))
		return MPIP_AUTH_E_MAC;
	return 0;
}

/*
 * The full counter @c of the low half in auth block @blk, as the window
 * @win infers it: one before the first, which no CM of this pair has,
 * fails as a wrong MAC, since anyone who saw a CM of the pair can make
 * one up.  One past the last is MPIP_AUTH_E_WRAP.
 */
static int auth_infer(const struct mpip_replay *win, const u8 *blk, u64 *c)
{
	int ret = mpip_replay_infer(win, auth_get32(blk), c);

	return ret == MPIP_AUTH_E_OLD ? MPIP_AUTH_E_MAC : ret;
}

/* After its MAC verified: counter @c, if the window takes it, is @ctr. */
static int auth_fresh(const struct mpip_replay *win, u64 c, u64 *ctr)
{
	int ret = mpip_replay_check(win, c);

	if (!ret)
		*ctr = c;
	return ret;
}

/**
 * mpip_auth_check() - verify a received CM, without changing any state
 * @key: the receiver's rx MAC key for the peer
 * @win: the receiver's replay window for the peer
 * @cm: the CM as decoded
 * @ctx: protocol and extension bytes, as received
 * @blk: the auth block as received
 * @len: bytes at @blk
 * @ctr: set to the full counter on success
 *
 * The MAC is checked before the window: MPIP_AUTH_E_DUP and
 * MPIP_AUTH_E_OLD mean a copy of a CM the peer did send, which the caller
 * may let go on as plain IP would deliver it.  A CM that only claims a
 * counter seen before, or one that no counter of this pair can have,
 * fails as MPIP_AUTH_E_MAC: anyone who saw one CM knows such a counter.
 * A genuine CM from behind the window, up to 2^31 counters, is
 * MPIP_AUTH_E_OLD (mpip_replay_infer()).  On success the caller commits
 * @ctr with mpip_replay_commit() (under the window's lock; the commit
 * checks the window again, so of two copies checked at once only one
 * gets through).
 *
 * Return: 0, or a negative enum mpip_auth_err.
 */
int mpip_auth_check(const struct mpip_auth_key *key,
		    const struct mpip_replay *win, const struct mpip_cm *cm,
		    const struct mpip_auth_ctx *ctx, const u8 *blk,
		    unsigned int len, u64 *ctr)
{
	u64 c;
	int ret;

	if (len < MPIP_AUTH_BLOCK_LEN)
		return MPIP_AUTH_E_SHORT;
	ret = auth_infer(win, blk, &c);
	if (ret)
		return ret;
	ret = mpip_auth_mac_ok(key, cm, c, ctx, blk, len);
	if (ret)
		return ret;
	return auth_fresh(win, c, ctr);
}

/**
 * mpip_auth_verify() - verify a received CM and commit its counter
 * @key: as for mpip_auth_check()
 * @win: the window; changed only if the CM verified
 * @cm: as for mpip_auth_check()
 * @ctx: as for mpip_auth_check()
 * @blk: as for mpip_auth_check()
 * @len: as for mpip_auth_check()
 * @ctr: as for mpip_auth_check()
 *
 * For a caller that holds the window's lock throughout.
 *
 * Return: 0, or a negative enum mpip_auth_err.
 */
int mpip_auth_verify(const struct mpip_auth_key *key, struct mpip_replay *win,
		     const struct mpip_cm *cm, const struct mpip_auth_ctx *ctx,
		     const u8 *blk, unsigned int len, u64 *ctr)
{
	u64 c;
	int ret;

	ret = mpip_auth_check(key, win, cm, ctx, blk, len, &c);
	if (ret)
		return ret;
	ret = mpip_replay_commit(win, c);
	if (ret)
		return ret;
	*ctr = c;
	return 0;
}

/* The MAC of a SYN (auth.h) with counter @ctr. */
static u64 auth_syn_mac(const struct mpip_auth_key *key, u64 ctr, u32 token,
			u32 seq)
{
	u8 in[MPIP_AUTH_SYN_INPUT_LEN];

	in[0] = MPIP_CM_MAGIC;
	in[1] = MPIP_AUTH_VERSION;
	in[2] = MPIP_AUTH_DOMAIN_SYN;
	in[3] = 0;
	auth_put64(in + 4, ctr);
	auth_put32(in + 12, token);
	auth_put32(in + 16, seq);
	return mpip_siphash(in, sizeof(in), key->k0, key->k1);
}

/**
 * mpip_auth_syn_seal() - the auth block of a fake-TCP SYN to send
 * @key: the sender's tx MAC key for the peer
 * @ctr: the next counter of this direction, as for a CM
 * @token: the peer's token (what CMs to it carry)
 * @seq: the SYN's sequence number
 * @blk: MPIP_AUTH_BLOCK_LEN bytes, written
 *
 * Return: 0, or MPIP_AUTH_E_INVAL for counter 0.
 */
int mpip_auth_syn_seal(const struct mpip_auth_key *key, u64 ctr, u32 token,
		       u32 seq, u8 *blk)
{
	if (!ctr)
		return MPIP_AUTH_E_INVAL;
	auth_put32(blk, (u32)ctr);
	auth_put64(blk + 4, auth_syn_mac(key, ctr, token, seq));
	return 0;
}

/**
 * mpip_auth_syn_check() - verify a received SYN's auth block
 * @key: the receiver's rx MAC key for the peer
 * @win: the receiver's replay window for the peer (not changed)
 * @token: the receiver's own token of the pair
 * @seq: the SYN's sequence number
 * @blk: MPIP_AUTH_BLOCK_LEN bytes, as received
 * @ctr: set to the full counter on success
 *
 * As mpip_auth_check(): the MAC first, then the window, and a SYN from
 * behind the window is MPIP_AUTH_E_OLD; the caller commits @ctr with
 * mpip_replay_commit().
 *
 * Return: 0, or a negative enum mpip_auth_err.
 */
int mpip_auth_syn_check(const struct mpip_auth_key *key,
			const struct mpip_replay *win, u32 token, u32 seq,
			const u8 *blk, u64 *ctr)
{
	u64 c;
	int ret;

	ret = auth_infer(win, blk, &c);
	if (ret)
		return ret;
	/* One comparison of the whole value, no early exit per byte. */
	if (auth_syn_mac(key, c, token, seq) ^ auth_get64(blk + 4))
		return MPIP_AUTH_E_MAC;
	return auth_fresh(win, c, ctr);
}

void mpip_replay_init(struct mpip_replay *win)
{
	memset(win, 0, sizeof(*win));
}

/**
 * mpip_replay_infer() - the full counter of a received low half
 * @win: the replay window
 * @lo: the counter's low 32 bits, as received
 * @ctr: set to the full counter
 *
 * The counter is taken as the value with these low bits nearest the
 * window's newest, @win->top: from 2^31 below it to 2^31 - 1 above.  So
 * a CM of a path that lags the others by more counters than the window
 * holds reads as what it is, old, and its genuine MAC verifies (a
 * receiver that took the window's bottom as the limit, as RFC 4303
 * does, would read it as 2^32 ahead and fail its MAC).  A sender 2^31 or
 * more ahead, one whose last 2^31 CMs were all lost, cannot be followed:
 * its MACs fail.
 *
 * Return: 0, MPIP_AUTH_E_OLD if the value would be 0 or below (before the
 * first counter), MPIP_AUTH_E_WRAP if it would be 2^64 or above.
 */
int mpip_replay_infer(const struct mpip_replay *win, u32 lo, u64 *ctr)
{
	u32 d = lo - (u32)win->top;	/* mod 2^32 */

	if (d < 1U << 31) {
		/* d ahead; top + d must stay below 2^64 */
		if (d > ~win->top)
			return MPIP_AUTH_E_WRAP;
		*ctr = win->top + d;
	} else {
		/* 2^32 - d behind, from 1 to 2^31; below 1 is before the first */
		d = -d;
		if (d >= win->top)
			return MPIP_AUTH_E_OLD;
		*ctr = win->top - d;
	}
	return *ctr ? 0 : MPIP_AUTH_E_OLD;
}

static u64 replay_bit(u64 ctr)
{
	return (u64)1 << (ctr & 63);
}

static unsigned int replay_word(u64 ctr)
{
	return (unsigned int)(ctr >> 6) & (MPIP_REPLAY_WORDS - 1);
}

/**
 * mpip_replay_check() - may a counter be accepted?
 * @win: the replay window
 * @ctr: the counter
 *
 * Return: 0 if @ctr is new, MPIP_AUTH_E_OLD if it is 0 or
 * MPIP_REPLAY_WINDOW or more behind the newest, MPIP_AUTH_E_DUP if it was
 * accepted before.
 */
int mpip_replay_check(const struct mpip_replay *win, u64 ctr)
{
	if (!ctr)
		return MPIP_AUTH_E_OLD;
	if (ctr > win->top)
		return 0;
	if (win->top - ctr >= MPIP_REPLAY_WINDOW)
		return MPIP_AUTH_E_OLD;
	if (win->bits[replay_word(ctr)] & replay_bit(ctr))
		return MPIP_AUTH_E_DUP;
	return 0;
}

/* Move the newest counter up to @ctr, clearing the words it passes. */
static void replay_advance(struct mpip_replay *win, u64 ctr)
{
	u64 from = win->top >> 6, to = ctr >> 6, w;

	if (to - from >= MPIP_REPLAY_WORDS) {
		memset(win->bits, 0, sizeof(win->bits));
	} else {
		for (w = from + 1; w <= to; w++)
			win->bits[w & (MPIP_REPLAY_WORDS - 1)] = 0;
	}
	win->top = ctr;
}

/**
 * mpip_replay_commit() - accept a counter whose CM verified
 * @win: the replay window; the caller serialises commits
 * @ctr: the counter
 *
 * Checks @ctr again (mpip_replay_check()), so a copy that passed a check
 * while its twin was committed is refused here.
 *
 * Return: 0, or MPIP_AUTH_E_OLD or MPIP_AUTH_E_DUP and @win unchanged.
 */
int mpip_replay_commit(struct mpip_replay *win, u64 ctr)
{
	int ret = mpip_replay_check(win, ctr);

	if (ret)
		return ret;
	if (ctr > win->top)
		replay_advance(win, ctr);
	win->bits[replay_word(ctr)] |= replay_bit(ctr);
	return 0;
}
