// SPDX-License-Identifier: GPL-2.0
/*
 * wsim - a packet-level model of one window-limited connection whose
 * packets mpip spreads over paths with remote bottlenecks, driven by the
 * weight code of kernel/core/path.c, the way kernel/paths.c runs it each
 * weight round.  A model, not a measurement: it shows how the weights
 * move and what the bottlenecks and the receiver's reorder buffer see,
 * so that a change of the weight rounds can be tried in seconds before
 * it is measured in the lab (make bench, natdown).
 *
 *   wsim [-w WINDOW_PKTS] [-t SECONDS] [-r RATE1,RATE2 (Mbit/s)]
 *        [-d DELAY_MS (each bottleneck's delay after it)] [-s SEED]
 *        [-S STEP] [-b BOOST] [-T TREND_MS] [-B TIE_US] [-g SEGS] [-R]
 *        [-p REF_US] [-W WARM_MS] [-v]
 *
 * Four paths, as in the nat lab (natdown): two into each bottleneck, the
 * sender's own line 1 Gbit/s.  The window is fixed: no congestion
 * control, no loss; the receiver holds out-of-order packets as mpip's
 * reorder buffer does, without its limit (the figures count what went
 * over 100).  Every acknowledgement brings the delay of its packet back
 * to the sender (mpip reports one path's delay per CM).  Figures from
 * the second second on (-W: from WARM_MS on; 0 counts the start-up too,
 * as a short transfer sees it): goodput in order, each bottleneck's busy time,
 * the slow link's share of the weights at the rounds, the mean
 * difference of the two bottlenecks' queueing delays at the rounds.
 * Paths are picked as the kernel picks them, by weight with a node's
 * draws along the golden ratio (mpip_weights_draw()).
 * -g SEGS: a pick takes a GSO packet of 2 to SEGS segments (random), all
 * on one path, as the kernel sends one (default: a pick per packet).
 * -S, -b, -T, -B: weight_step, weight_boost, weight_trend_ms,
 * weight_tie_us.  Trials of what the kernel does not do: -R draws each
 * pick's number at random, as the kernel did until 2026-12-06 (in the
 * model, random draws put many more packets into the reorder buffer);
 * -p REF_US moves each path by STEP per REF_US of its distance from the
 * mean predicted delay, at most STEP, instead of STEP always.
 * -v also prints each weight round.
 *
 * Build: make -C tools/wsim (the binary is tools/wsim/wsim).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

#define NPATH		4
#define NLINK		2
#define PKT_BYTES	1500
#define MAX_PKTS	(1 << 22)
#define MAX_EV		(1 << 20)
#define REORDER_LIMIT	100
#define QDELAY_FLOOR_US	1000	/* kernel/mpip.h */
#define BOOST_SPREAD_US	10000	/* kernel/mpip.h */

enum ev_type { EV_AT_LINK, EV_DEPART, EV_RECV, EV_ACK, EV_ROUND };

struct ev {
	u64 t;
	u32 seq;	/* tie-break: events at one time in scheduling order */
	u8 type;
	u8 link;
	u32 pkt;
};

struct pkt {
	u64 t_send;
	u8 path;
};

struct sim {
	/* configuration */
	u32 window, interval_us, trend_ms, step, boost, smooth, tie_us;
	u8 idle_rounds;
	u64 end_us, warm_us;
	double rate_mbit[NLINK];
	u64 d_to_link_us, d_after_us, d_back_us, line_us;
	bool verbose;
	u32 prop_ref_us;	/* -p: proportional rounds, step S per this much */
	bool random;		/* -R: random draws, not the kernel's */
	unsigned int gso;	/* -g: segments per pick, 2..this (1: one) */
	u32 draws;		/* picks so far */
	/* state */
	struct ev *heap;
	unsigned int nev;
	u32 evseq;
	struct pkt *pkts;
	u32 next_seq, inflight;
	u64 line_free;
	u32 q[NLINK][8192];	/* FIFO of packet numbers per bottleneck */
	unsigned int qh[NLINK], qn[NLINK];
	bool busy[NLINK];
	struct mpip_path_delay pd[NPATH];
	u64 last_fb[NPATH];
	u32 w[NPATH], q_prev[NPATH];
	bool q_prev_ok[NPATH];
	struct mpip_wboost wb;
	u64 rng;
	/* receiver */
	u8 *got;
	u32 expect, held, held_max, overflow_pkts, held_at_warm;
	bool warm;
	/* figures, after the warm-up */
	u64 busy_us[NLINK], delivered, rounds;
	double share_sum, share_min, share_max, qspread_sum;
	u64 qsamples;
};

static u32 rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (u32)(s->rng >> 16);
}

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct sim *s, u64 t, u8 type, u8 link, u32 pkt)
{
	unsigned int i = s->nev++;
	struct ev e = { t, s->evseq++, type, link, pkt }, tmp;

	if (s->nev > MAX_EV) {
		fprintf(stderr, "wsim: event queue full\n");
		exit(2);
	}
	s->heap[i] = e;
	while (i && ev_less(&s->heap[i], &s->heap[(i - 1) / 2])) {
		tmp = s->heap[i];
		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct ev ev_pop(struct sim *s)
{
	struct ev top = s->heap[0], tmp;
	unsigned int i = 0, l, m;

	s->heap[0] = s->heap[--s->nev];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < s->nev && ev_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (l + 1 < s->nev && ev_less(&s->heap[l + 1], &s->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = tmp;
		i = m;
	}
	return top;
}

static unsigned int path_link(unsigned int path)
{
	return path / 2;
}

static u64 service_us(const struct sim *s, unsigned int link)
{
	return (u64)(PKT_BYTES * 8 / s->rate_mbit[link]);
}

/* The sender fills its window, one packet per line time, by weight. */
static void try_send(struct sim *s, u64 now)
{
	unsigned int path = 0, burst = 0;
	u32 n;

	while (s->inflight < s->window && s->next_seq < MAX_PKTS) {
		if (s->line_free < now)
			s->line_free = now;
		s->line_free += s->line_us;
		if (!burst) {
			/* one pick per GSO packet of 2..gso segments */
			burst = s->gso > 1 ? 2 + rnd(s) % (s->gso - 1) : 1;
			path = mpip_weights_pick(s->w, NPATH, s->random ?
						 rnd(s) :
						 mpip_weights_draw(s->draws++));
		}
		burst--;
		n = s->next_seq++;
		s->pkts[n].t_send = s->line_free;
		s->pkts[n].path = (u8)path;
		s->inflight++;
		ev_push(s, s->line_free + s->d_to_link_us, EV_AT_LINK,
			(u8)path_link(path), n);
	}
}

static void link_start(struct sim *s, u64 now, unsigned int l)
{
	if (s->busy[l] || !s->qn[l])
		return;
	s->busy[l] = true;
	ev_push(s, now + service_us(s, l), EV_DEPART, (u8)l, 0);
	if (now >= s->warm_us)
		s->busy_us[l] += service_us(s, l);
}

static void at_link(struct sim *s, u64 now, unsigned int l, u32 pkt)
{
	if (s->qn[l] == 8192) {
		fprintf(stderr, "wsim: bottleneck queue full\n");
		exit(2);
	}
	s->q[l][(s->qh[l] + s->qn[l]++) % 8192] = pkt;
	link_start(s, now, l);
}

static void depart(struct sim *s, u64 now, unsigned int l)
{
	u32 pkt = s->q[l][s->qh[l]];

	s->qh[l] = (s->qh[l] + 1) % 8192;
	s->qn[l]--;
	s->busy[l] = false;
	ev_push(s, now + s->d_after_us, EV_RECV, (u8)l, pkt);
	link_start(s, now, l);
}

/* In-order delivery with a reorder buffer of REORDER_LIMIT packets. */
static void recv_pkt(struct sim *s, u64 now, u32 pkt)
{
	if (now >= s->warm_us && !s->warm) {
		/* released later, but received before the window */
		s->warm = true;
		s->held_at_warm = s->held;
		s->held_max = s->held;
	}
	s->got[pkt] = 1;
	if (pkt != s->expect) {
		s->held++;
		if (s->held > s->held_max)
			s->held_max = s->held;
		if (s->held > REORDER_LIMIT && now >= s->warm_us)
			s->overflow_pkts++;
	}
	while (s->expect < MAX_PKTS && s->got[s->expect]) {
		if (s->expect != pkt)
			s->held--;
		if (now >= s->warm_us)
			s->delivered++;
		s->expect++;
	}
	ev_push(s, now + s->d_back_us, EV_ACK, 0, pkt);
}

static void ack(struct sim *s, u64 now, u32 pkt)
{
	unsigned int p = s->pkts[pkt].path;
	u64 owd = now - s->d_back_us - s->pkts[pkt].t_send;

	mpip_path_delay_sample(&s->pd[p], (u32)owd, s->smooth);
	s->last_fb[p] = now;
	s->inflight--;
	try_send(s, now);
}

/*
 * Trial: each path moves by @step per prop_ref_us of its distance from
 * the mean predicted delay (signed), at most @step.
 */
static void prop_adjust(struct sim *s, const u32 *q, u32 step)
{
	s64 sum = 0, d, v;
	unsigned int i;

	for (i = 0; i < NPATH; i++)
		sum += q[i];
	for (i = 0; i < NPATH; i++) {
		d = sum / NPATH - (s64)q[i];
		v = d * (s64)step / (s64)s->prop_ref_us;
		if (v > (s64)step)
			v = step;
		if (v < -(s64)step)
			v = -(s64)step;
		v += s->w[i];
		s->w[i] = v < 1 ? 1 : v > 1000 ? 1000 : (u32)v;
	}
}

/* One weight round, as kernel/paths.c: mpip_paths_adjust_weights(). */
static void round_weights(struct sim *s, u64 now)
{
	u32 raw[NPATH], q[NPATH], qmin = ~0U, qmax = 0, mask, gain, step = 0;
	u32 dmin[NPATH], all = (1U << NPATH) - 1;
	unsigned int i;
	bool idle, all_have = true;
	double share;

	for (i = 0; i < NPATH; i++) {
		raw[i] = now > s->last_fb[i] + 2 * s->interval_us ? 0 :
			 s->pd[i].q;
		if (raw[i] < QDELAY_FLOOR_US)
			raw[i] = 0;
		qmin = raw[i] < qmin ? raw[i] : qmin;
		qmax = raw[i] > qmax ? raw[i] : qmax;
		q[i] = mpip_qdelay_predict(raw[i],
					   s->q_prev_ok[i] ? s->q_prev[i] : raw[i],
					   s->interval_us / 1000, s->trend_ms);
		s->q_prev[i] = raw[i];
		s->q_prev_ok[i] = true;
		dmin[i] = s->pd[i].d_min;
		all_have &= s->pd[i].have_sample;
	}
	idle = all_have && qmax < s->tie_us;
	step = mpip_weights_tie_step(&s->idle_rounds, idle, s->step, s->boost);
	if (all_have &&
	    mpip_weights_tie_round(raw, dmin, s->w, NPATH, s->tie_us, step,
				   1000)) {
		if (idle)
			memset(&s->wb, 0, sizeof(s->wb));
		goto out;
	}
	mask = mpip_weights_gainers(raw, NPATH);
	gain = qmax - qmin < BOOST_SPREAD_US ? all : mask;
	step = mpip_weights_boost_step(&s->wb, all, gain,
				       mpip_weights_gainers(q, NPATH) != mask,
				       s->step, s->boost);
	if (s->prop_ref_us)
		prop_adjust(s, q, step);
	else
		mpip_weights_adjust(q, s->w, NPATH, step);
out:
	mpip_weights_normalize(s->w, NPATH, 1000);

	share = (s->w[2] + s->w[3]) / 1000.0;
	if (now >= s->warm_us) {
		s->rounds++;
		s->share_sum += share;
		if (share < s->share_min)
			s->share_min = share;
		if (share > s->share_max)
			s->share_max = share;
	}
	if (s->verbose)
		printf("t=%.1f w=%u,%u,%u,%u slow=%.2f q_link=%.1f,%.1f ms "
		       "raw=%u,%u,%u,%u step=%u\n", now / 1e6, s->w[0], s->w[1],
		       s->w[2], s->w[3], share,
		       s->qn[0] * service_us(s, 0) / 1e3,
		       s->qn[1] * service_us(s, 1) / 1e3,
		       raw[0], raw[1], raw[2], raw[3], step);
}

static void sample_queues(struct sim *s, u64 now)
{
	double d0 = s->qn[0] * service_us(s, 0) / 1e3;
	double d1 = s->qn[1] * service_us(s, 1) / 1e3;

	if (now < s->warm_us)
		return;
	s->qspread_sum += d0 > d1 ? d0 - d1 : d1 - d0;
	s->qsamples++;
}

static void run(struct sim *s)
{
	struct ev e;

	mpip_weights_init(s->w, NPATH);
	ev_push(s, s->interval_us, EV_ROUND, 0, 0);
	try_send(s, 0);
	while (s->nev) {
		e = ev_pop(s);
		if (e.t > s->end_us)
			break;
		switch (e.type) {
		case EV_AT_LINK:
			at_link(s, e.t, e.link, e.pkt);
			break;
		case EV_DEPART:
			depart(s, e.t, e.link);
			break;
		case EV_RECV:
			recv_pkt(s, e.t, e.pkt);
			break;
		case EV_ACK:
			ack(s, e.t, e.pkt);
			break;
		case EV_ROUND:
			round_weights(s, e.t);
			sample_queues(s, e.t);
			ev_push(s, e.t + s->interval_us, EV_ROUND, 0, 0);
			break;
		}
	}
}

static void report(const struct sim *s)
{
	double secs = (s->end_us - s->warm_us) / 1e6;
	double cap = s->rate_mbit[0] + s->rate_mbit[1];
	double good = (s->delivered - s->held_at_warm) * PKT_BYTES * 8 /
		      secs / 1e6;

	printf("window %u: goodput %.1f %% of %.0f Mbit/s; links busy %.1f %%, %.1f %%; "
	       "slow link's share %.2f (%.2f-%.2f, its capacity %.2f); "
	       "queue delay spread %.1f ms; reorder held max %u, over %d: %u pkts\n",
	       s->window, 100 * good / cap, cap,
	       100.0 * s->busy_us[0] / (secs * 1e6),
	       100.0 * s->busy_us[1] / (secs * 1e6),
	       s->share_sum / (s->rounds ? s->rounds : 1), s->share_min,
	       s->share_max, s->rate_mbit[1] / cap,
	       s->qspread_sum / (s->qsamples ? s->qsamples : 1),
	       s->held_max, REORDER_LIMIT, s->overflow_pkts);
}

/* The natdown lab's figures and mpip's default tunables. */
static void sim_defaults(struct sim *s)
{
	s->window = 200;
	s->interval_us = 100000;
	s->trend_ms = 500;
	s->tie_us = 2000;
	s->step = 10;
	s->boost = 3;
	s->smooth = 3;
	s->rate_mbit[0] = 40;
	s->rate_mbit[1] = 20;
	s->d_to_link_us = 500;
	s->d_after_us = 2000;
	s->d_back_us = 2500;
	s->line_us = 12;
	s->rng = 88172645463325252ULL;
	s->end_us = 10000000;
	s->warm_us = 1000000;
	s->share_min = 1;
}

/* One option; false if it is unknown or its value is not understood. */
static bool sim_option(struct sim *s, int c, const char *arg)
{
	switch (c) {
	case 'w':
		s->window = (u32)atoi(arg);
		return s->window > 0;
	case 't':
		s->end_us = (u64)(atof(arg) * 1e6);
		return s->end_us > 1000000;
	case 'r':
		return sscanf(arg, "%lf,%lf", &s->rate_mbit[0],
			      &s->rate_mbit[1]) == 2 &&
		       s->rate_mbit[0] > 0 && s->rate_mbit[1] > 0;
	case 'd':
		s->d_after_us = (u64)(atof(arg) * 1000);
		return true;
	case 's':
		s->rng ^= (u64)atoll(arg) * 0x9e3779b97f4a7c15ULL;
		return true;
	case 'S':
		s->step = (u32)atoi(arg);
		return true;
	case 'b':
		s->boost = (u32)atoi(arg);
		return true;
	case 'T':
		s->trend_ms = (u32)atoi(arg);
		return true;
	case 'B':
		s->tie_us = (u32)atoi(arg);
		return true;
	case 'g':
		s->gso = (unsigned int)atoi(arg);
		return true;
	case 'p':
		s->prop_ref_us = (u32)atoi(arg);
		return true;
	case 'W':
		s->warm_us = (u64)atoi(arg) * 1000;
		return s->warm_us < s->end_us;
	}
	return false;
}

int main(int argc, char **argv)
{
	static struct sim s;
	int c;

	sim_defaults(&s);
	while ((c = getopt(argc, argv, "w:t:r:d:s:vp:S:T:b:B:Rg:W:")) != -1) {
		if (c == 'v')
			s.verbose = true;
		else if (c == 'R')
			s.random = true;
		else if (!sim_option(&s, c, optarg))
			goto usage;
	}
	s.heap = calloc(MAX_EV, sizeof(*s.heap));
	s.pkts = calloc(MAX_PKTS, sizeof(*s.pkts));
	s.got = calloc(MAX_PKTS, 1);
	if (!s.heap || !s.pkts || !s.got)
		return 2;
	run(&s);
	report(&s);
	free(s.heap);
	free(s.pkts);
	free(s.got);
	return 0;
usage:
	fprintf(stderr, "usage: wsim [-w PKTS] [-t S (over 1)] [-r R1,R2] [-d MS] "
		"[-s SEED] [-S STEP] [-b BOOST] [-T MS] [-B US] [-g SEGS] [-R] "
		"[-p US] [-W MS] [-v]\n");
	return 2;
}
