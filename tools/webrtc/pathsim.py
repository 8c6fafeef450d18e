#!/usr/bin/python3
"""A model of scenario (b): a video sender whose rate follows the REMB of
aiortc's own receive-side estimator, its packets spread over two links.

    pathsim.py [--policy single|packet|rr|smooth|earliest|frame|flowlet]
               [--seconds S] [--seeds N]
               [--rate KBIT,KBIT] [--delay MS,MS] [--fps N] [--max-kbit N]
               [--stock] [--fixed-weights]

A model, not a measurement: it asks whether spreading a call's packets
over two paths, as mpip does, lets aiortc's delay-based estimate grow
past what one path carries, apart from what the lab's sender can
encode.  The sender makes --fps frames a second of its target rate
(each 0.7 to 1.3 times the mean, at most 1200 bytes of payload a
packet, sent back to back) and takes each REMB as its new target, one
link's delay after the receiver sent it (start 500 kbit/s, at least 100,
at most --max-kbit).  Each link is a FIFO of its rate with its delay
after it; a packet that would wait over 500 ms is dropped.  The receiver
feeds every packet, in arrival order, to aiortc.rate's
RemoteBitrateEstimator (abs-send-time from its send time, the packet's
size), with call.py's fix_interarrival_reorder() unless --stock.

Policies: single (one link: the call without mpip, no trailer); packet
(each packet picks a link by weight, as mpip's default mode does, with
its 40-byte trailer); rr (packets alternate); smooth (each packet to
the link furthest behind its share by weight, a smooth weighted round
robin: no random draws); earliest (each packet to the link where it
would arrive first, knowing both queues: what a sender that knew the
paths' queueing delays exactly could do); frame (a whole frame on
one link, picked at random: keeping a burst of a flow on one path);
flowlet (a whole frame on one link, picked by weight).  With packet,
smooth and flowlet, the weights follow mpip's Algorithm 1 every 100 ms
(step 10 of 1000, the queueing delays of the round before) unless
--fixed-weights (half each).

Prints, for each seed, the sender's median target after the first 20 s,
the shares of packets the detector saw overusing and underusing, and
the share of packets that arrived behind one sent later (after the
first 10 s; a receiver that asks for a missing packet at once, as
libwebrtc's and aiortc's do, has each of those resent), then the
medians over the seeds.
"""
import argparse
import heapq
import os
import random
import statistics
import sys

import aiortc.rate

MTU_PAYLOAD = 1200
OVERHEAD = 12 + 10 + 8 + 20     # RTP, SRTP tag, UDP, IP
TRAILER = 40                    # mpip's data CM (wire format v2)
QUEUE_MAX_S = 0.5
ROUND_S = 0.1
STEP = 10


def ast_of(t):
    """abs-send-time (6.18 fixed point seconds, 24 bits) of time t."""
    return int(t * (1 << 18)) & 0xFFFFFF


class Links:
    """Two FIFO links and the picks of a policy."""

    def __init__(self, a, rnd):
        self.a, self.rnd = a, rnd
        self.rates = [r * 1000 for r in a.rate]
        self.delays = [d / 1000 for d in a.delay]
        self.busy = [0.0, 0.0]
        self.w = [500, 500]
        self.alt = 0
        self.ahead = [0, 0]
        self.frame_link = 0
        self.next_round = ROUND_S
        self.q_prev = None

    def rounds(self, t):
        """mpip's Algorithm 1 on the queueing delays of the round before."""
        while self.a.policy in ("packet", "smooth", "flowlet") and \
                not self.a.fixed_weights and \
                t >= self.next_round:
            q = [max(0.0, b - self.next_round) for b in self.busy]
            qq = self.q_prev or q
            mean = sum(qq) / 2
            self.w = [min(1000, w + STEP) if qi <= mean else max(1, w - STEP)
                      for w, qi in zip(self.w, qq)]
            tot = sum(self.w)
            self.w = [w * 1000 // tot for w in self.w]
            self.q_prev = q
            self.next_round += ROUND_S

    def weighted(self):
        return 1 if self.rnd.random() * sum(self.w) >= self.w[0] else 0

    def new_frame(self):
        if self.a.policy == "flowlet":
            self.frame_link = self.weighted()
        else:
            self.frame_link = self.rnd.randrange(2)

    def pick(self):
        pol = self.a.policy
        if pol == "single":
            return 0
        if pol == "packet":
            return self.weighted()
        if pol == "rr":
            self.alt ^= 1
            return self.alt
        if pol == "smooth":
            self.ahead = [c + w for c, w in zip(self.ahead, self.w)]
            i = 0 if self.ahead[0] >= self.ahead[1] else 1
            self.ahead[i] -= sum(self.w)
            return i
        return self.frame_link

    def sent(self, i, ts, size):
        """When link i would finish sending a packet of size bytes
        given to it at ts."""
        return max(ts, self.busy[i]) + size * 8 / self.rates[i]

    def send(self, ts, size):
        """Arrival time of a packet of size bytes sent at ts; None: dropped."""
        if self.a.policy == "earliest":
            i = min((0, 1), key=lambda j: self.sent(j, ts, size) +
                    self.delays[j])
        else:
            i = self.pick()
        if max(ts, self.busy[i]) - ts > QUEUE_MAX_S:
            return None
        self.busy[i] = self.sent(i, ts, size)
        return self.busy[i] + self.delays[i]


def run(a, seed):
    rnd = random.Random(seed)
    rbe = aiortc.rate.RemoteBitrateEstimator()
    links = Links(a, rnd)
    target, seq, ev = 500_000, 0, []
    trailer = 0 if a.policy == "single" else TRAILER
    for i in range(int(a.seconds * a.fps)):
        heapq.heappush(ev, (i / a.fps, 0, "frame", None))
    states, targets, late, newest = {}, [], [0, 0], 0
    while ev:
        t, _, kind, data = heapq.heappop(ev)
        links.rounds(t)
        if kind == "frame":
            size = int(target / 8 / a.fps * rnd.uniform(0.7, 1.3))
            n = max(1, -(-size // MTU_PAYLOAD))
            links.new_frame()
            for k in range(n):
                ts = t + k * 12e-6
                pkt = size // n + OVERHEAD + trailer
                at = links.send(ts, pkt)
                if at is not None:
                    seq += 1
                    heapq.heappush(ev, (at, seq, "arrive", (ts, pkt, seq)))
            if t >= 20:
                targets.append(target)
        elif kind == "arrive":
            ts, pkt, sent = data
            if t >= 10:
                late[0] += sent < newest
                late[1] += 1
            newest = max(newest, sent)
            r = rbe.add(arrival_time_ms=int(t * 1000), abs_send_time=ast_of(ts),
                        payload_size=pkt, ssrc=1)
            if t >= 10:
                st = rbe.detector.state().name.lower()
                states[st] = states.get(st, 0) + 1
            if r is not None:
                seq += 1
                heapq.heappush(ev, (t + min(links.delays), seq, "remb", r[0]))
        else:
            target = max(100_000, min(a.max_kbit * 1000, data))
    tot = sum(states.values()) or 1
    return (statistics.median(targets) / 1000 if targets else 0.0,
            states.get("overusing", 0) / tot, states.get("underusing", 0) / tot,
            late[0] / (late[1] or 1))


def main():
    def pair(s):
        v = [float(x) for x in s.split(",")]
        if len(v) != 2 or min(v) <= 0:
            raise argparse.ArgumentTypeError("two positive numbers: A,B")
        return v

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy",
                    choices=("single", "packet", "rr", "smooth", "earliest",
                             "frame", "flowlet"),
                    default="packet")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rate", type=pair, default=[1000, 1000], help="kbit/s")
    ap.add_argument("--delay", type=pair, default=[10, 10], help="ms")
    ap.add_argument("--fps", type=float, default=30)
    ap.add_argument("--max-kbit", type=float, default=3000)
    ap.add_argument("--stock", action="store_true",
                    help="aiortc's estimator as it is (no reorder fix)")
    ap.add_argument("--fixed-weights", action="store_true")
    a = ap.parse_args()
    if a.seconds <= 20:
        ap.error("--seconds must be over 20 (the figures start there)")
    if not a.stock:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import call  # noqa: E402 (aiortc's patches)
        call.fix_interarrival_reorder()
    res = []
    for seed in range(1, a.seeds + 1):
        r = run(a, seed)
        res.append(r)
        print("%-7s seed %d: target %5.0f kbit/s, overusing %.3f, "
              "underusing %.3f, reordered %.3f" % ((a.policy, seed) + r))
    print("%-7s median: target %5.0f kbit/s, overusing %.3f, underusing %.3f, "
          "reordered %.3f"
          % ((a.policy,) + tuple(statistics.median(x) for x in zip(*res))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
