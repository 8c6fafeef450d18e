#!/usr/bin/python3
"""Figures from lab runs recorded by tools/bench/lib.sh (standard library only).

    analyze.py run DIR                    metrics of a mode's run(s) (JSON)
    analyze.py line DIR                   its runs, one line of text each
    analyze.py bench NAME DESC [SCENARIO:]MODE=DIR... [--KEY=VALUE...]
                                          one benchmark: one JSON line
    analyze.py summary RESULTS.jsonl      Markdown summary of benchmark lines
    analyze.py demo DEMODIR               demo summary (writes summary.json,
                                          prints a table)

Definitions (data flows from host a to host b; "link N" is ethN; a run
recorded with "reverse" (iperf3 -R: b sends on the connection a opened)
is read with the hosts' roles swapped, a's counters taken for b's):

  link N rate      bytes that a's shaper on ethN sent (the root qdisc's
                   counter, sampled every 0.1 s): Ethernet/IP/TCP headers
                   and mpip trailers included, and, like the netem rate it
                   is compared with, the headers of every segment of a GSO
                   packet.  Averages leave out the first WARMUP s after
                   data starts to flow (1 s; 0.5 s with --quick).  Runs
                   recorded without that counter use b's ethN rx_bytes.
  link N rx rate   bytes received by b's ethN (interface counter).  A GSO
                   packet's headers count once there, so this reads low by
                   a few % and by more for flows sent in larger GSO packets
                   (one TCP flow at 57 Mbit/s: about 5 %; two MPTCP
                   subflows: about 4 %): reported beside, not compared.
  aggregate        link 1 + link 2 rate; aggregate % = of the sum of the
                   two links' netem rates (aggregate_rx_*: from rx rates).
  goodput %        the receiver's application bytes (iperf3's 0.1 s
                   intervals) over the same window, in % of the sum of the
                   netem rates; headers and trailers do not count, so even
                   a full link reads below 100 % (1448 of 1514 bytes).
  link 1 share     link 1 / aggregate in %; its target is link 1's share of
                   the capacity (2:1 -> 66.7 %), split error = |share-target|.
  iperf3 goodput   iperf3's own receiver figure (application bytes).
  UDP delivered    1 - lost/sent datagrams as the iperf3 server (receiver)
                   counts them; also received rate / offered rate, and
                   whether the sender reached 95 % of the offered rate
                   (under TCG it may not).
  goodput stall    from the receiver's 0.1 s iperf3 intervals: the longest
                   run of consecutive intervals whose goodput is below 10 %
                   of the mean before the failure (first 0.5 s and the last
                   interval left out).
  shifted away     from link 2's failure to the start of the first 0.5 s
                   during which the receiver's goodput averaged at least 80 %
                   of link 1's rate: the transfer runs on link 1 alone.
  link 2 back      time from the moment `ip link set eth2 up` returned to
                   the middle of the first 0.1 s sample in which b received
                   at least max(1 Mbit/s, 10 % of link 2's rate) on eth2.
  retransmitted    the sender's TcpRetransSegs / TcpOutSegs (nstat in a,
                   the data and iperf3's control connection), in %.
  DSACKed          retransmitted segments that the receiver reported it
                   already had (the sender's TcpExtTCPDSACKRecvSegs):
                   spurious retransmissions, e.g. of segments overtaken
                   on a faster path, not lost.
  shaper drops     packets a's shapers (the links' netem qdiscs) dropped
                   from the start of the run to its end: queues that
                   overflowed (sampler.py's qdisc_drops, both links).
  sender's RTT     the smoothed RTT (ss -ti, rtt:) of the sending host's TCP
                   sockets to or from the iperf3 port, in a snapshot
                   taken 40 % into the run, weighted by the bytes each had
                   acknowledged (MPTCP: its subflows; the control
                   connection weighs nothing); minimum RTT the same of
                   their minrtt:.  Their difference is about what the
                   data waited in queues.
  guest CPU busy   CPU time the guest spent outside its idle loop over the
                   same window as the link rates, in % of both its CPUs
                   (sampler.py's cpu.busy / cpu.total, /proc/stat: the
                   whole guest, every namespace, the lab's shapers and
                   routers included).  Busiest CPU: in each 0.1 s sample
                   the share of the CPU that was busiest in it, averaged
                   over the window.  Near 100 %, one CPU was saturated
                   all the time (a packet's way through the lab's
                   namespaces runs mostly on one CPU, in softirq), and
                   the guest's CPU, not the links, may be what limits a
                   run.
  datagrams/s      UDP datagrams the receiver got per second (iperf3 server).
  kernel time per datagram   see tools/bench/scale.py.
  rules cost       (bench rules) kernel time per datagram of one UDP flow
                   in a lab with 100 routing rules that it runs through
                   without a match, in % of a lab with none: the median
                   of the cycles' ratios (tools/bench/scale.py).
  short downloads  (bench natstart) per download of SIZE bytes on a new
                   connection (lab_starts): goodput (iperf3, median with
                   the lowest and highest); downloads in which a's TCP
                   queued segments out of order (TcpExtTCPOFOQueue; for
                   MPTCP, its subflows', and its data level's apart), in
                   which b sent segments again (TcpRetransSegs) and sent
                   ones a already had (TcpExtTCPDSACKRecvSegs), with the
                   totals over all downloads.
  interleaved on/off   TCP goodput (iperf3 receiver) of short runs with
                   mpip switched on and off between them in ABBA order;
                   per cycle, the sum of its two on runs over the sum of
                   its two off runs; the figure is the median of the
                   cycles' ratios ("all runs": the sum of every on run
                   over the sum of every off run).

A mode's directory holds one run (run.json) or several in subdirectories:
repetitions rep1..repN, whose figures are the medians (KEY_min and KEY_max
beside, "runs" lists each), or parts run one after the other (tcp, udp),
whose figures are named PART_KEY (tcp_iperf3_mbps, udp_pps).  A benchmark
with scenarios (bench.sh: bench_scenario) has "scenarios": {NAME: {link1,
link2, modes}} in its line instead of "modes".
"""
import bisect
import json
import math
import os
import re
import sys

DATA_COLS = ("eth1.rx_bytes", "eth2.rx_bytes")
SHAPER_COLS = ("eth1.qdisc_bytes", "eth2.qdisc_bytes")
DROP_COLS = ("eth1.qdisc_drops", "eth2.qdisc_drops")
CPU_COLS = ("cpu.busy", "cpu.total")
# a run whose busiest CPU was this busy (cpu_max_pct) may have been
# limited by the guest's CPU: summary.md says so (performance.rst: on a
# slower machine, mpip's use of the links fell as this rose past ~85 %)
CPU_BOUND_PCT = 85.0
STALL_FRACTION = 0.10
SHIFT_FRACTION, SHIFT_SPAN = 0.80, 0.5

# the TCP benchmarks through the NATs (issue 21)
NAT_CHECKS = [
    ("goodput_pct", ">=", 85.0, "goodput through the NATs >= 85 % of capacity"),
]

# Thresholds of the spec, reported (not enforced).
CHECKS = {
    "tcp": [
        ("aggregate_pct", ">=", 95.0, "aggregate >= 95 % of capacity"),
        ("split_error_pts", "<=", 10.0, "link split within 10 points of capacity ratio"),
    ],
    "udp": [
        ("delivered_pct", ">=", 95.0, "UDP delivered >= 95 %"),
    ],
    "nat": NAT_CHECKS,
    "natrev": NAT_CHECKS,
    "natdown": NAT_CHECKS,
    "natgso0": NAT_CHECKS,
    "natrevgso0": NAT_CHECKS,
    "failover": [
        ("stall_s", "<=", 1.0, "longest goodput stall <= 1 s"),
        ("link2_back_s", "<=", 1.0, "returning link used within 1 s"),
    ],
    "scale": [
        ("cost_ratio_pct", "<=", 120.0, "per-packet cost with the most flows within 20 % of one"),
    ],
    "backup": [
        ("link1_before_pct", "<=", 1.0, "backup link carries <= 1 % while the main link works"),
        ("stall_s", "<=", 1.0, "goodput back within 1 s on the backup"),
        ("link2_back_s", "<=", 2.0, "main link carries the data again within 2 s of its return"),
    ],
    "rules": [
        ("cost_ratio_pct", "<=", 110.0, "per-packet cost with 100 rules within 10 % of none"),
    ],
    "interleave": [
        ("ratio_pct", ">=", 95.0, "TCP goodput with mpip on >= 95 % of off"),
    ],
    "reorder": [
        ("aggregate_pct", ">=", 90.0, "aggregate >= 90 % of capacity"),
        ("retrans_pct", "<=", 1.0, "retransmissions <= 1 % of segments"),
    ],
}

# Benchmarks whose modes include "unloaded" report mpip's figures as a
# percentage of the module-less ones: [(metric, label, threshold or None)]
RATIOS = {
    "overhead": [("tcp_iperf3_mbps", "TCP goodput", 95.0),
                 ("udp_pps", "64-byte UDP datagrams/s", None)],
}


# ------------------------------------------------------------------ inputs

def parse_rate_mbps(spec):
    """Rate of a topo.sh SPEC "RATE,DELAY,LOSS" in Mbit/s, or None."""
    rate = (spec or "").split(",")[0].strip()
    if not rate or rate == "-":
        return None
    m = re.fullmatch(r"([0-9.]+)\s*([kKmMgGtT]?)(bit|bps)?", rate)
    if not m:
        return None
    v = float(m.group(1))
    v *= {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2).lower()]
    if m.group(3) == "bps":     # tc: bps = bytes per second
        v *= 8
    return v / 1e6


def load_jsonl(path):
    """The JSON objects of a file with one per line (bad lines skipped; no
    file: none)."""
    out = []
    try:
        with open(path) as f:
            for ln in f:
                try:
                    out.append(json.loads(ln))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def load_json(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        # iperf3 may print text around its JSON when it fails
        i, j = text.find("{"), text.rfind("}")
        if 0 <= i < j:
            try:
                return json.loads(text[i:j + 1])
            except ValueError:
                pass
    return None


def ss_sockets(text):
    """(ends, line) for each line of socket details in `ss -tinH` output
    TEXT, ends being the (local, peer) addresses of the socket line above
    it, or None if that line had no such columns."""
    ends = None
    for line in text.splitlines():
        if line.startswith((" ", "\t")):
            yield ends, line
            continue
        f = line.split()
        ends = (f[3], f[4]) if len(f) >= 5 else None


def load_events(path):
    ev = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 2:
                    ev[p[1]] = float(p[0])
    except OSError:
        pass
    return ev


class Samples:
    """Cumulative byte counters sampled over time (sampler.py output)."""

    def __init__(self, path):
        self.t = []
        self.v = {}
        cols = None
        rows = []
        with open(path) as f:
            for line in f:
                if line.startswith("#"):
                    cols = line[1:].split()[1:]
                    continue
                p = line.split(" ")
                if cols is None or len(p) < 1 + len(cols):
                    continue
                rows.append(p)
        cols = cols or []
        self.v = {c: [] for c in cols}
        last = {c: 0 for c in cols}
        for p in rows:
            self.t.append(float(p[0]))
            for i, c in enumerate(cols):
                s = p[1 + i].strip()
                # a missing device reads as empty: hold the last value
                if s:
                    last[c] = int(s)
                self.v[c].append(last[c])

    def __bool__(self):
        return len(self.t) >= 2

    def at(self, col, t):
        """Counter value at time t, interpolated linearly."""
        ts, vs = self.t, self.v[col]
        if t <= ts[0]:
            return vs[0]
        if t >= ts[-1]:
            return vs[-1]
        i = bisect.bisect_right(ts, t)
        t0, t1 = ts[i - 1], ts[i]
        return vs[i - 1] + (vs[i] - vs[i - 1]) * (t - t0) / (t1 - t0)

    def mbps(self, col, t0, t1):
        if t1 <= t0:
            return None
        return (self.at(col, t1) - self.at(col, t0)) * 8 / (t1 - t0) / 1e6

    def binned(self, col, t0, t1, step):
        """[(t_start, t_end, Mbit/s)] over fixed bins of STEP s from t0 to
        t1 (interpolated: robust to irregular sampling)."""
        out = []
        n = int((t1 - t0) / step)
        for i in range(n):
            a = t0 + i * step
            out.append((a, a + step, self.mbps(col, a, a + step)))
        return out

    def series(self, col):
        """[(t_start, t_end, Mbit/s)] for each sample interval."""
        ts, vs = self.t, self.v[col]
        out = []
        for i in range(1, len(ts)):
            dt = ts[i] - ts[i - 1]
            if dt > 0:
                out.append((ts[i - 1], ts[i], max(0, vs[i] - vs[i - 1]) * 8 / dt / 1e6))
        return out


def iperf_intervals(doc):
    """[(start_s, end_s, bytes)] of an iperf3 -J document's intervals."""
    out = []
    for iv in (doc or {}).get("intervals", []):
        s = iv.get("sum") or {}
        if "start" in s and "end" in s and "bytes" in s and s["end"] > s["start"]:
            out.append((float(s["start"]), float(s["end"]), int(s["bytes"])))
    return out


def pearson(x, y):
    n = len(x)
    if n < 3:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def align(intervals, sb, guess, span=1.0, step=0.01):
    """Wall-clock time of iperf3's interval origin.

    iperf3 reports intervals relative to its own test start.  Find the
    offset within guess +- span that best correlates the receiver's
    interval goodput with the bytes b's interfaces received in the same
    windows.  Returns (offset, correlation or None)."""
    if not intervals or not sb:
        return guess, None
    g = [b for _, _, b in intervals]
    best = (None, guess, None)
    n = int(round(span / step))
    for k in range(-n, n + 1):
        o = guess + k * step
        x = [sum(sb.at(c, o + e) - sb.at(c, o + s) for c in DATA_COLS)
             for s, e, _ in intervals]
        r = pearson(g, x)
        if r is None:
            continue
        score = r - abs(k) * 1e-5      # ties: stay near the guess
        if best[0] is None or score > best[0]:
            best = (score, o, r)
    return best[1], best[2]


# ----------------------------------------------------------------- a run

class Run:
    def __init__(self, d):
        self.dir = d
        self.meta = load_json(os.path.join(d, "run.json")) or {}
        self.ev = load_events(os.path.join(d, "events.txt"))
        self.client = load_json(os.path.join(d, "client.json"))
        self.server = load_json(os.path.join(d, "server.json"))
        self.sa = self._samples("sampler_a", "sa.txt")
        self.sb = self._samples("sampler_b", "sb.txt")
        # iperf3's sums, both ends' (the client's "end" has both)
        self.sums = (self.client or {}).get("end", {})
        self.sender_nstat = "nstat-a.txt"
        self.mpip_stats = ("stats-a.json", "stats-b.json")   # sender, receiver
        # Reverse (iperf3 -R): data flows b -> a.  Everything below calls
        # the receiver b and the sender a: swap the hosts' samples and the
        # two iperf3 documents (with -R the client's intervals are the
        # receiver's).
        self.reverse = bool(self.meta.get("reverse"))
        if self.reverse:
            self.sa, self.sb = self.sb, self.sa
            self.client, self.server = self.server, self.client
            self.sender_nstat = "nstat-b.txt"
            self.mpip_stats = self.mpip_stats[::-1]
        self.kind = self.meta.get("kind", "tcp")
        self.tag = self.meta.get("tag")   # a benchmark's own kind of tcp/udp run
        self.mode = self.meta.get("mode", "?")
        self.duration = float(self.meta.get("duration", 0))
        self.warmup = float(self.meta.get("warmup", 1))
        self.cap1 = parse_rate_mbps(self.meta.get("link1"))
        self.cap2 = parse_rate_mbps(self.meta.get("link2"))
        self.t0 = self.ev.get("flowing", self.ev.get("start"))
        self._off = None

    def _samples(self, key, default):
        p = os.path.join(self.dir, self.meta.get(key, default))
        try:
            s = Samples(p)
        except OSError:
            return None
        return s if s else None

    def failover(self):
        return "down_at" in self.meta

    def counters(self, name, read):
        """Counters read(DIR/NAME) after the run, minus those of
        NAME-before.EXT where the lab had carried an earlier run."""
        cur = read(os.path.join(self.dir, name))
        base, ext = os.path.splitext(name)
        before = read(os.path.join(self.dir, base + "-before" + ext))
        if not isinstance(cur, dict) or not isinstance(before, dict):
            return cur

        def count(v):
            return isinstance(v, int) and not isinstance(v, bool)
        return {k: v - before[k] if count(v) and count(before.get(k)) else v
                for k, v in cur.items()}

    def intervals(self):
        return iperf_intervals(self.server)

    def offset(self):
        """(wall-clock origin of the server's intervals, correlation)."""
        if self._off is None:
            guess = self.t0 if self.t0 is not None else 0.0
            self._off = align(self.intervals(), self.sb, guess)
        return self._off

    def goodput_series(self):
        """[(t_start, t_end, Mbit/s)] in wall-clock time."""
        off, _ = self.offset()
        return [(off + s, off + e, b * 8 / (e - s) / 1e6) for s, e, b in self.intervals()]

    def window(self):
        """Averaging window: WARMUP s after data flows until the run's end."""
        if self.t0 is None or not self.sb:
            return None
        w0 = self.t0 + self.warmup
        w1 = self.t0 + self.duration
        w1 = min(w1, self.ev.get("end", w1), self.sb.t[-1])
        return (w0, w1) if w1 > w0 else None

    def link_rates(self, w, rx=False):
        """Link 1 and 2 rates over window w: a's shaper counters, or b's
        rx counters if @rx or if the run has no shaper counters."""
        if not rx and self.sa and all(c in self.sa.v for c in SHAPER_COLS):
            rates = tuple(self.sa.mbps(c, *w) for c in SHAPER_COLS)
            if any(rates):
                return rates
        return tuple(self.sb.mbps(c, *w) for c in DATA_COLS)

    def sender_rtt_ms(self, tag="mid"):
        """(RTT, minimum RTT) in ms of the sender's TCP sockets on the
        iperf3 port in ss snapshot TAG, weighted by their bytes_acked;
        None if there is no such snapshot or socket."""
        name = "ss-b-%s.txt" if self.reverse else "ss-%s.txt"
        try:
            text = open(os.path.join(self.dir, name % tag)).read()
        except OSError:
            return None
        port = ":%d" % int(self.meta.get("port", 5201))
        srtt = minrtt = acked = 0.0
        for ends, line in ss_sockets(text):
            if not ends or not any(e.endswith(port) for e in ends):
                continue
            a = re.search(r"\bbytes_acked:(\d+)", line)
            r = re.search(r"\brtt:([0-9.]+)/", line)
            mr = re.search(r"\bminrtt:([0-9.]+)", line)
            if a and r and mr and int(a.group(1)) > 0:
                w = int(a.group(1))
                srtt += w * float(r.group(1))
                minrtt += w * float(mr.group(1))
                acked += w
        return (srtt / acked, minrtt / acked) if acked else None

    def _cpu_samples(self):
        """a's samples, or b's, whichever has the CPU columns (both
        samplers read the same guest's /proc/stat)."""
        for s in (self.sa, self.sb):
            if s and all(c in s.v for c in CPU_COLS):
                return s
        return None

    def cpu_busy_pct(self, w):
        """The guest's CPU busy over window w, in % of all its CPUs (None:
        not sampled)."""
        s = self._cpu_samples()
        if not s:
            return None
        busy, total = (s.at(c, w[1]) - s.at(c, w[0]) for c in CPU_COLS)
        return 100 * busy / total if total > 0 else None

    def cpu_max_pct(self, w):
        """The busiest CPU's busy share in each sample interval inside
        window w, averaged over the window (weighted by the intervals'
        lengths), in %: near 100, one CPU was always saturated, whichever
        it was (None: not sampled per CPU)."""
        s = self._cpu_samples()
        cpus = sorted(c[:-5] for c in (s.v if s else ()) if re.fullmatch(r"cpu[0-9]+[.]busy", c))
        if not cpus:
            return None
        got = span = 0.0
        for i in range(1, len(s.t)):
            if s.t[i - 1] < w[0] or s.t[i] > w[1]:
                continue
            shares = []
            for c in cpus:
                dt = s.v[c + ".total"][i] - s.v[c + ".total"][i - 1]
                if dt > 0:
                    shares.append((s.v[c + ".busy"][i] - s.v[c + ".busy"][i - 1]) / dt)
            if shares:
                d = s.t[i] - s.t[i - 1]
                got += d * min(1.0, max(shares))
                span += d
        return 100 * got / span if span > 0 else None

    def goodput_mbps(self, w):
        """The receiver's goodput over window w (iperf3 intervals)."""
        got = 0.0
        for s, e, v in self.goodput_series():
            lo, hi = max(s, w[0]), min(e, w[1])
            if hi > lo:
                got += v * (hi - lo)
        return got / (w[1] - w[0])

    def error(self):
        for doc, who in ((self.client, "client"), (self.server, "server")):
            if doc is None:
                return "no iperf3 %s output" % who
            if doc.get("error"):
                return "iperf3 %s: %s" % (who, doc["error"])
        if self.t0 is None:
            return "no events"
        if not self.sb:
            return "no counter samples"
        return None

    # -------------------------------------------------------------- metrics

    def metrics(self):
        if self.kind == "scale":
            return self._scale()
        if self.kind == "rules":
            return self._rules()
        if self.kind == "interleave":
            return self._interleave()
        if self.kind == "starts":
            return self._starts()
        m = {"kind": self.tag or ("failover" if self.failover() else self.kind),
             "mode": self.mode}
        err = self.error()
        if err:
            m["error"] = err
            if not self.sb or self.t0 is None:
                return m
        cap = (self.cap1 or 0) + (self.cap2 or 0)
        w = self.window()
        if w:
            l1, l2 = self.link_rates(w)
            agg = l1 + l2
            m.update(link1_mbps=r1(l1), link2_mbps=r1(l2), aggregate_mbps=r1(agg),
                     window_s=r1(w[1] - w[0]))
            r1x, r2x = self.link_rates(w, rx=True)
            m["aggregate_rx_mbps"] = r1(r1x + r2x)
            gp = self.goodput_mbps(w) if self.intervals() else None
            m["goodput_mbps"] = r1(gp)
            for k, f in (("cpu_busy_pct", self.cpu_busy_pct),
                         ("cpu_max_pct", self.cpu_max_pct)):
                v = f(w)
                if v is not None:
                    m[k] = r1(v)
            if cap:
                m["capacity_mbps"] = r1(cap)
                m["aggregate_pct"] = r1(100 * agg / cap)
                m["aggregate_rx_pct"] = r1(100 * (r1x + r2x) / cap)
                if gp is not None:
                    m["goodput_pct"] = r1(100 * gp / cap)
            if agg > 0:
                m["link1_share_pct"] = r1(100 * l1 / agg)
                if cap and self.cap1 is not None:
                    target = 100 * self.cap1 / cap
                    m["target_link1_share_pct"] = r1(target)
                    m["split_error_pts"] = r1(abs(100 * l1 / agg - target))
        if self.kind == "udp":
            self._udp(m)
        else:
            self._tcp(m, cap)
        if self.failover():
            self._failover(m)
        self._machinery(m)
        apply_checks(m)
        return m

    def _tcp(self, m, cap):
        end = self.sums
        rcv = end.get("sum_received") or {}
        snd = end.get("sum_sent") or {}
        if "bits_per_second" in rcv:
            m["iperf3_mbps"] = r1(rcv["bits_per_second"] / 1e6)
            if cap:
                m["iperf3_pct"] = r1(100 * rcv["bits_per_second"] / 1e6 / cap)
        if "retransmits" in snd:
            m["retransmits"] = snd["retransmits"]
        # the sender's counters over the lab's life (the run and iperf3's
        # control connection)
        ns = self.counters(self.sender_nstat, read_nstat)
        if ns.get("TcpOutSegs"):
            m["out_segs"] = ns["TcpOutSegs"]
            m["retrans_pct"] = r2(100 * ns.get("TcpRetransSegs", 0) / ns["TcpOutSegs"])
        if isinstance(ns.get("TcpExtTCPDSACKRecvSegs"), int):
            m["dsack_segs"] = ns["TcpExtTCPDSACKRecvSegs"]
        drops = self.shaper_drops()
        if drops is not None:
            m["shaper_drops"] = drops
        rtt = self.sender_rtt_ms()
        if rtt:
            m["sender_rtt_ms"], m["sender_minrtt_ms"] = r1(rtt[0]), r1(rtt[1])

    def shaper_drops(self):
        """Packets a's shapers dropped during the run (None: not sampled)."""
        if not self.sa or not all(c in self.sa.v for c in DROP_COLS):
            return None
        t0 = self.ev.get("start", self.t0)
        t1 = self.ev.get("end", self.sa.t[-1])
        if t0 is None:
            return None
        return int(round(sum(self.sa.at(c, t1) - self.sa.at(c, t0) for c in DROP_COLS)))

    def _udp(self, m):
        offered = parse_rate_mbps(self.meta.get("udp_rate", ""))
        cend = (self.client or {}).get("end", {})
        sent = cend.get("sum_sent") or cend.get("sum") or {}
        rsum = (self.server or {}).get("end", {}).get("sum") or {}
        if offered:
            m["offered_mbps"] = r1(offered)
        if "bits_per_second" in sent:
            m["sent_mbps"] = r1(sent["bits_per_second"] / 1e6)
            if offered:
                m["sender_limited"] = sent["bits_per_second"] / 1e6 < 0.95 * offered
        if "packets" in rsum:
            pk, lost = rsum["packets"], rsum.get("lost_packets", 0)
            m["packets"] = pk
            m["lost_packets"] = lost
            if pk:
                m["delivered_pct"] = r1(100 * (pk - lost) / pk)
        # (iperf3 3.12's server leaves bytes/bits_per_second of its UDP sum
        # at 0; the client's sum_received has the receiver's figures)
        recv = cend.get("sum_received") or {}
        bps = recv.get("bits_per_second") or rsum.get("bits_per_second")
        if bps:
            m["received_mbps"] = r1(bps / 1e6)
            if offered:
                m["delivered_of_offered_pct"] = r1(100 * bps / 1e6 / offered)
        if rsum.get("packets") and rsum.get("seconds"):
            m["pps"] = round((rsum["packets"] - rsum.get("lost_packets", 0)) / rsum["seconds"])
        if "jitter_ms" in rsum:
            m["jitter_ms"] = round(rsum["jitter_ms"], 3)
        ooo = sum((s.get("udp") or {}).get("out_of_order", 0)
                  for s in (self.server or {}).get("end", {}).get("streams", []))
        m["out_of_order"] = ooo
        # datagrams the receiving host dropped itself (socket buffer full):
        # a slow receiver, not the network
        ns = self.counters("nstat-b.txt", read_nstat)
        if ns:
            m["receiver_drops"] = ns.get("UdpRcvbufErrors", 0)

    def _interleave(self):
        """Goodput with mpip on and off, interleaved (lab_interleave)."""
        m = {"kind": "interleave", "mode": self.mode}
        runs = load_jsonl(os.path.join(self.dir, "interleave.jsonl"))
        on = [r["mbps"] for r in runs if r.get("mpip")]
        off = [r["mbps"] for r in runs if not r.get("mpip")]
        if not on or not off:
            m["error"] = "no interleaved runs"
            return m
        ratios = []
        for c in sorted({r["cycle"] for r in runs}):
            s_on = sum(r["mbps"] for r in runs if r["cycle"] == c and r.get("mpip"))
            s_off = sum(r["mbps"] for r in runs if r["cycle"] == c and not r.get("mpip"))
            if s_on and s_off:
                ratios.append(r1(100 * s_on / s_off))
        m.update({
            "cycles": len(ratios),
            "on_mbps": r1(median(on)), "off_mbps": r1(median(off)),
            "on_min_mbps": r1(min(on)), "on_max_mbps": r1(max(on)),
            "off_min_mbps": r1(min(off)), "off_max_mbps": r1(max(off)),
            "cycle_ratios_pct": ratios,
            "ratio_pct": r1(median(ratios)) if ratios else None,
            "ratio_all_pct": r1(100 * sum(on) / sum(off)),
            "retransmits_on": sum(r.get("retransmits") or 0 for r in runs if r.get("mpip")),
            "retransmits_off": sum(r.get("retransmits") or 0 for r in runs if not r.get("mpip")),
        })
        apply_checks(m)
        return m

    def _starts(self):
        """Short downloads on new connections (lab_starts)."""
        m = {"kind": self.tag or "natstart", "mode": self.mode}
        runs = load_jsonl(os.path.join(self.dir, "starts.jsonl"))
        mbps = [r["mbps"] for r in runs if isinstance(r.get("mbps"), (int, float))]
        if not mbps:
            m["error"] = "no downloads"
            return m
        want = self.meta.get("downloads")
        if want and len(runs) < want:
            m["error"] = "%d of %d downloads" % (len(runs), want)

        def total(k):
            return sum(r.get(k) or 0 for r in runs)

        def some(k):
            return sum(1 for r in runs if (r.get(k) or 0) > 0)
        m.update({
            "downloads": len(runs),
            "size_mb": r2(median([r.get("bytes") or 0 for r in runs]) / 1e6),
            "mbps": r1(median(mbps)), "mbps_min": r1(min(mbps)), "mbps_max": r1(max(mbps)),
            "ofo_downloads": some("ofo"), "ofo_segs": total("ofo"),
            "mptcp_ofo_downloads": some("mptcp_ofo"), "mptcp_ofo_segs": total("mptcp_ofo"),
            "retrans_downloads": some("retrans"), "retrans_segs": total("retrans"),
            "dsack_downloads": some("dsack"), "dsack_segs": total("dsack"),
            "reorder_lost": total("reorder_lost"), "tx_resend": total("tx_resend"),
        })
        apply_checks(m)
        return m

    def _scale(self):
        """Kernel time per datagram for each number of flows (scale.py)."""
        m = {"kind": "scale", "mode": self.mode}
        pts = load_jsonl(os.path.join(self.dir, "scale.jsonl"))
        if not pts:
            m["error"] = "no scale figures"
            return m
        m["points"] = pts
        base = pts[0].get("kernel_ns_per_pkt")
        for p in pts:
            m["ns_per_pkt_%d" % p["flows"]] = p.get("kernel_ns_per_pkt")
            # scale.py's median of the cycles' paired ratios; else (older
            # results) the ratio of the medians
            if not isinstance(p.get("ratio_pct"), (int, float)) and base and \
                    isinstance(p.get("kernel_ns_per_pkt"), (int, float)):
                p["ratio_pct"] = r1(100 * p["kernel_ns_per_pkt"] / base)
            m["cost_ratio_pct_%d" % p["flows"]] = p.get("ratio_pct")
        counted = [p for p in pts if isinstance(p.get("sessions"), int)]
        if counted:
            # every flow had its session when the datagrams were counted
            m["sessions_ok"] = all(p["sessions"] >= p["flows"] for p in counted)
        last = pts[-1]
        m["flows_max"] = last.get("flows")
        m["ns_per_pkt_1"] = base
        m["ns_per_pkt_max"] = last.get("kernel_ns_per_pkt")
        m["cost_ratio_pct"] = last.get("ratio_pct")
        if last.get("cycle_ratios_pct"):
            m["cycle_ratios_pct"] = last["cycle_ratios_pct"]
        st = load_json(os.path.join(self.dir, "status-a.json"))
        if isinstance(st, dict) and "sessions" in st:
            m["sessions"] = st["sessions"]
        if self.mode == "mpip":     # (off is the baseline)
            apply_checks(m)
        return m

    def _rules(self):
        """Kernel time per datagram without rules and with 100 (scale.py's
        two labs of one flow each: the first without rules)."""
        m = {"kind": "rules", "mode": self.mode}
        pts = load_jsonl(os.path.join(self.dir, "scale.jsonl"))
        if len(pts) != 2:
            m["error"] = "expected 2 scale figures, got %d" % len(pts)
            return m
        none, many = pts
        m["ns_per_pkt_none"] = none.get("kernel_ns_per_pkt")
        m["ns_per_pkt_100"] = many.get("kernel_ns_per_pkt")
        m["cost_ratio_pct"] = many.get("ratio_pct")
        m["cycle_ratios_pct"] = many.get("cycle_ratios_pct")
        m["sessions_ok"] = all(isinstance(p.get("sessions"), int) and p["sessions"] >= 1
                               for p in pts)
        apply_checks(m)
        return m

    def _failover(self, m):
        down, up = self.ev.get("down"), self.ev.get("up")
        m["fail_end"] = self.meta.get("fail_end")
        if down is None or up is None:
            m.setdefault("error", "no link down/up events")
            return
        m["down_at_s"] = r2(down - self.t0)
        m["up_at_s"] = r2(up - self.t0)
        if "down_cmd" in self.ev:
            m["link_cmd_s"] = r2(down - self.ev["down_cmd"])
        gp = self.goodput_series()
        off, corr = self.offset()
        m["goodput_align_r"] = r2(corr) if corr is not None else None
        if gp:
            def mean(a, b):
                xs = [(e - s, v) for s, e, v in gp if s >= a and e <= b]
                tot = sum(d for d, _ in xs)
                return sum(d * v for d, v in xs) / tot if tot > 0 else None
            pre = mean(self.t0 + self.warmup, down)
            m["goodput_before_mbps"] = r1(pre)
            m["goodput_during_mbps"] = r1(mean(down, up))
            m["goodput_after_mbps"] = r1(mean(up + 1.0, self.t0 + self.duration))
            if pre:
                lim = STALL_FRACTION * pre
                body = [x for x in gp[:-1] if x[0] >= self.t0 + 0.5]
                best = (0.0, None)
                run_s, run_start = 0.0, None
                for s, e, v in body:
                    if v < lim:
                        if run_start is None:
                            run_start, run_s = s, 0.0
                        run_s += e - s
                        if run_s > best[0]:
                            best = (run_s, run_start)
                    else:
                        run_start = None
                m["stall_s"] = r2(best[0])
                m["stall_start_s"] = r2(best[1] - down) if best[1] is not None else None
            if self.cap1:
                m["shift_s"] = None
                for s, _, _ in gp:
                    v = mean(s, s + SHIFT_SPAN + 1e-6) if s >= down else None
                    if v is not None and v >= SHIFT_FRACTION * self.cap1:
                        m["shift_s"] = r2(s - down)
                        break
        if self.sb:
            thr = max(1.0, 0.1 * (self.cap2 or 10))
            back = None
            for s, e, v in self.sb.series(DATA_COLS[1]):
                if e > up and v >= thr:
                    back = max(0.0, (s + e) / 2 - up)
                    break
            m["link2_back_s"] = r2(back)
            if back is None:
                # not within the run: say how long we watched
                end = min(self.sb.t[-1], self.ev.get("end", self.sb.t[-1]),
                          self.t0 + self.duration)
                m["link2_back_none_s"] = r1(end - up)
            stop = None
            for s, e, v in self.sb.series(DATA_COLS[1]):
                if s >= down and v < thr:
                    stop = max(0.0, (s + e) / 2 - down)
                    break
            m["link2_stopped_s"] = r2(stop)
            # link 1's share of the data before the failure (a backup
            # link should carry none)
            w0, w1 = self.t0 + self.warmup, down
            if w1 > w0:
                r1_, r2_ = (self.sb.mbps(c, w0, w1) for c in DATA_COLS)
                if r1_ + r2_ > 0:
                    m["link1_before_pct"] = r2(100 * r1_ / (r1_ + r2_))
            end = min(self.t0 + self.duration, self.sb.t[-1])
            if end > up + 1:
                m["link2_after_mbps"] = r1(self.sb.mbps(DATA_COLS[1], up + 1, end))

    def sb_step(self):
        return float(self.meta.get("interval", 0.1))

    def _machinery(self, m):
        """What the multipath machinery says it did."""
        if self.mode.startswith("mptcp") and self.kind == "tcp":
            self._mptcp(m)
        if self.mode.startswith("mpip") or self.mode == "mptcp-mpip":
            self._mpip(m)

    def _mptcp(self, m):
        # subflows per MPTCP connection from `ss -tin` snapshots on a (the
        # data connection and iperf3's control connection are both MPTCP)
        best = None
        for tag in ("mid", "down", "up"):
            p = os.path.join(self.dir, "ss-%s.txt" % tag)
            try:
                text = open(p).read()
            except OSError:
                continue
            conns = {}
            sent = {}
            for cur, line in ss_sockets(text):
                b = re.search(r"bytes_sent:(\d+)", line)
                # token:REMOTE(id:N)/LOCAL(id:N): the local token names
                # the MPTCP connection
                tok = re.search(r"token:[0-9a-f]+\(id:\d+\)/([0-9a-f]+)", line)
                if cur and "tcp-ulp-mptcp" in line and tok:
                    conns.setdefault(tok.group(1), []).append("%s->%s" % cur)
                    sent[tok.group(1)] = sent.get(tok.group(1), 0) + (int(b.group(1)) if b else 0)
            if conns:
                # the data connection: the one that sent the most
                sub = conns[max(conns, key=lambda k: sent[k])]
                if best is None or len(sub) > len(best[1]):
                    best = (tag, sub)
        if best:
            m["mptcp_subflows"] = len(best[1])
            m["mptcp_subflow_addrs"] = best[1]
        # all of a's established TCP sockets to the iperf3 port (subflows of
        # the data and the control connection), from /proc/net/tcp
        port = int(self.meta.get("port", 5201))
        socks = []
        data = None
        for tag in ("mid", "down", "up"):
            cur = []
            groups = {}
            try:
                with open(os.path.join(self.dir, "tcp-%s.txt" % tag)) as f:
                    for line in f:
                        p = line.split()
                        if len(p) > 9 and p[3] == "01" and ":" in p[2]:
                            loc, rem = hex_addr(p[1]), hex_addr(p[2])
                            if rem and rem.endswith(":%d" % port):
                                sf = "%s->%s" % (loc, rem)
                                cur.append(sf)
                                # the subflows of one MPTCP connection show
                                # its socket's inode; the data connection
                                # is the one with data queued
                                g = groups.setdefault(p[9], [0, []])
                                g[0] += int(p[4].split(":")[0], 16)
                                g[1].append(sf)
            except (OSError, ValueError):
                continue
            if len(cur) > len(socks):
                socks = cur
            if groups:
                best = max(groups.values(), key=lambda g: (g[0], len(g[1])))
                if data is None or len(best[1]) > len(data):
                    data = best[1]
        if socks:
            m["mptcp_tcp_sockets"] = socks
        if data and len(data) > (m.get("mptcp_subflows") or 0):
            m["mptcp_subflows"] = len(data)
            m["mptcp_subflow_addrs"] = data
        ns = self.counters("nstat-a.txt", read_nstat)
        if "MPTcpExtMPCapableSYNACKRX" in ns:
            m["mptcp_connections"] = ns["MPTcpExtMPCapableSYNACKRX"]
        if "MPTcpExtMPJoinSynAckRx" in ns:
            m["mptcp_joins"] = ns["MPTcpExtMPJoinSynAckRx"]
        m["mptcp_verified"] = bool(m.get("mptcp_subflows", 0) >= 2 or m.get("mptcp_joins", 0) >= 1) \
            and (m.get("link2_mbps") or 0) > 1.0

    def _mpip(self, m):
        doc = load_json(os.path.join(self.dir, "paths-end.json"))
        if not isinstance(doc, list):
            if isinstance(doc, dict):
                doc = doc.get("paths")
        if isinstance(doc, list):
            paths = []
            for p in doc:
                if not isinstance(p, dict):
                    continue
                paths.append({k: p.get(k) for k in ("saddr", "daddr", "dev", "state", "weight",
                                                    "tx_pkts", "rx_pkts") if k in p})
            m["mpip_paths"] = paths
            m["mpip_paths_used"] = sum(1 for p in paths if (p.get("tx_pkts") or 0) > 0)
        st = self.counters(self.mpip_stats[1], load_json)
        if isinstance(st, dict):
            for k in ("reorder_held", "reorder_in_order", "reorder_lost",
                      "reorder_timeout", "reorder_overflow", "rx_gso_kept"):
                m[k] = st.get(k)
        st = self.counters(self.mpip_stats[0], load_json)
        if isinstance(st, dict):
            m["tx_steered"] = st.get("tx_steered")


# ------------------------------------------------------------ a mode's runs

REP_DIR = re.compile(r"(rep|round)[0-9]+")
# figures of repeated runs given as median, with _min and _max
REP_KEYS = ("aggregate_mbps", "aggregate_pct", "aggregate_rx_mbps", "aggregate_rx_pct",
            "link1_mbps", "link2_mbps", "link1_share_pct",
            "split_error_pts", "goodput_mbps", "goodput_pct", "iperf3_mbps", "iperf3_pct",
            "retransmits", "retrans_pct", "dsack_segs", "shaper_drops",
            "cpu_busy_pct", "cpu_max_pct", "sender_rtt_ms", "sender_minrtt_ms",
            "tcp_iperf3_mbps", "udp_pps")


def holds_run(d):
    """Does directory d hold a run, or runs one level down (a round of
    parts)?"""
    if os.path.exists(os.path.join(d, "run.json")):
        return True
    try:
        return any(os.path.exists(os.path.join(d, n, "run.json")) for n in os.listdir(d))
    except OSError:
        return False


def sub_runs(d):
    """[(label, dir)]: the runs of a mode's directory - [("", d)] if it is
    one run, else its subdirectories that hold one (repN: repetitions;
    roundN: rounds alternating with other modes, each a run or parts of
    one; other names: parts of the benchmark, e.g. tcp and udp)."""
    if os.path.exists(os.path.join(d, "run.json")):
        return [("", d)]
    try:
        names = [n for n in os.listdir(d) if holds_run(os.path.join(d, n))]
    except OSError:
        return []
    names.sort(key=lambda n: (re.sub("[0-9]+", "", n), int(re.sub("[^0-9]", "", n) or 0)))
    return [(n, os.path.join(d, n)) for n in names]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def mode_metrics(d):
    """(metrics, first Run) of a mode's directory, (None, None) if it holds
    no run."""
    runs = sub_runs(d)
    if not runs:
        return None, None
    if runs[0][0] == "":
        first = Run(runs[0][1])
        return first.metrics(), first
    ms, first = [], None
    for label, p in runs:
        x, r = mode_metrics(p)
        if x is not None:
            ms.append((label, x))
            first = first or r
    if not ms:
        return None, None
    if all(REP_DIR.fullmatch(label) for label, _ in ms):
        m = combine_reps([x for _, x in ms])
    else:
        m = combine_parts(ms)
    errs = ["%s: %s" % (label, x["error"]) for label, x in ms if x.get("error")]
    if errs:
        m["error"] = "; ".join(errs)
    apply_checks(m)
    return m, first


def combine_reps(runs):
    """Repetitions: every number the runs have in common is their median;
    REP_KEYS have KEY_min and KEY_max beside; the machinery's verdicts are
    taken over all runs.  (Other values, lists and text, are the first
    run's.)"""
    m = {k: v for k, v in runs[0].items() if k not in ("checks", "error")}
    m["reps"] = len(runs)
    for k in runs[0]:
        vals = [x.get(k) for x in runs]
        if k not in REP_KEYS and all(
                isinstance(x, (int, float)) and not isinstance(x, bool)
                for x in vals):
            m[k] = round(median(vals), 2)
    for k in REP_KEYS:
        m.pop(k, None)
        vals = [x[k] for x in runs if isinstance(x.get(k), (int, float))]
        if vals:
            m[k] = round(median(vals), 2)
            m[k + "_min"], m[k + "_max"] = min(vals), max(vals)
    m["runs"] = [{k: x.get(k) for k in ("iperf3_mbps", "goodput_pct", "aggregate_pct",
                                         "retrans_pct", "tcp_iperf3_mbps", "udp_pps")
                  if k in x}
                 for x in runs]
    if "mptcp_verified" in m:
        m["mptcp_verified"] = all(x.get("mptcp_verified") for x in runs)
    if "mpip_paths_used" in m:
        m["mpip_paths_used"] = min(x.get("mpip_paths_used") or 0 for x in runs)
    return m


def combine_parts(ms):
    """Parts of one benchmark run one after the other (e.g. tcp, udp): each
    part's figures as PART_KEY (tcp_iperf3_mbps, udp_pps)."""
    m = {"kind": ms[0][1].get("kind"), "mode": ms[0][1].get("mode")}
    for label, x in ms:
        for k, v in x.items():
            if k not in ("kind", "mode", "error", "checks") and not isinstance(v, (dict, list)):
                m["%s_%s" % (label, k)] = v
        if "mpip_paths_used" in x:
            m.setdefault("mpip_paths_used", x["mpip_paths_used"])
    return m


def apply_checks(m):
    """m["checks"]: the spec's thresholds (CHECKS) for m's kind, judged."""
    checks = []
    for key, op, limit, name in CHECKS.get(m.get("kind"), []):
        v = m.get(key)
        ok = None
        if isinstance(v, (int, float)):
            ok = v >= limit if op == ">=" else v <= limit
        elif key == "link2_back_s" and (m.get("link2_back_none_s") or 0) > limit:
            ok = False
        checks.append({"name": name, "metric": key, "op": op, "limit": limit,
                       "value": v, "ok": ok})
    if checks:
        m["checks"] = checks


def hex_addr(s):
    """/proc/net/tcp "0101010A:1F90" -> "10.1.1.1:8080" (IPv4 only)."""
    h, _, port = s.partition(":")
    if len(h) != 8:
        return None
    b = bytes.fromhex(h)[::-1]
    return "%d.%d.%d.%d:%d" % (b[0], b[1], b[2], b[3], int(port, 16))


def read_nstat(path):
    """Counters of `nstat -a` output."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 2 and p[1].isdigit():
                    out[p[0]] = int(p[1])
    except OSError:
        pass
    return out


def r1(x):
    return None if x is None else round(x, 1)


def r2(x):
    return None if x is None else round(x, 2)


# ------------------------------------------------------------- reporting

def fmt(v, unit=""):
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return ("%.2f" % v if abs(v) < 10 and unit == "s" else "%.1f" % v) + unit
    return "%s%s" % (v, unit)


def run_line(m):
    """One human line for a run's metrics."""
    if m.get("kind") == "rules" and m.get("ns_per_pkt_none") is not None:
        return "kernel time per datagram: no rules %s ns, 100 rules %s ns (%s %%)" % (
            m.get("ns_per_pkt_none"), m.get("ns_per_pkt_100"), fmt(m.get("cost_ratio_pct")))
    if m.get("kind") == "scale" and m.get("points"):
        return "kernel time per datagram: " + ", ".join(
            "%d flow(s) %s ns" % (p["flows"], p.get("kernel_ns_per_pkt")) for p in m["points"])
    if m.get("kind") == "interleave" and m.get("cycle_ratios_pct"):
        return ("mpip on %s, off %s Mbit/s (medians); on in %% of off: %s "
                "(median of cycles: %s)" % (
                    fmt(m.get("on_mbps")), fmt(m.get("off_mbps")), fmt(m.get("ratio_pct")),
                    ", ".join(fmt(x) for x in m["cycle_ratios_pct"])))
    if m.get("kind") == "natstart" and m.get("downloads"):
        return ("%d downloads: goodput %s Mbit/s (median; %s-%s); out of order at a's "
                "TCP in %s (%s segments); b sent segments again in %s (%s, %s of them "
                "in vain)%s" % (
                    m["downloads"], fmt(m.get("mbps")), fmt(m.get("mbps_min")),
                    fmt(m.get("mbps_max")), m.get("ofo_downloads"), m.get("ofo_segs"),
                    m.get("retrans_downloads"), m.get("retrans_segs"), m.get("dsack_segs"),
                    " (error: %s)" % m["error"] if m.get("error") else ""))
    if m.get("error") and "aggregate_mbps" not in m:
        return "error: %s" % m["error"]
    parts = ["link 1 %s, link 2 %s, aggregate %s Mbit/s" % (
        fmt(m.get("link1_mbps")), fmt(m.get("link2_mbps")), fmt(m.get("aggregate_mbps")))]
    if "aggregate_pct" in m:
        parts.append("%s %% of %s" % (fmt(m["aggregate_pct"]), fmt(m.get("capacity_mbps"))))
    if "link1_share_pct" in m:
        parts.append("link 1 share %s %%" % fmt(m["link1_share_pct"]))
    if "iperf3_mbps" in m:
        parts.append("iperf3 %s Mbit/s" % fmt(m["iperf3_mbps"]))
    if "delivered_pct" in m:
        parts.append("delivered %s %% (sent %s of %s Mbit/s offered)" % (
            fmt(m["delivered_pct"]), fmt(m.get("sent_mbps")), fmt(m.get("offered_mbps"))))
    if "pps" in m:
        parts.append("%s datagrams/s" % m["pps"])
    if m.get("kind") == "failover":
        back = m.get("link2_back_s")
        parts.append("stall %s s, on link 1 alone after %s s, link 2 back %s" % (
            fmt(m.get("stall_s")), fmt(m.get("shift_s")), "after %s s" % fmt(back) if back is not None else
            "not within %s s" % fmt(m.get("link2_back_none_s"))))
    if m.get("error"):
        parts.append("(error: %s)" % m["error"])
    return "; ".join(parts)


# a row that tcp and reorder share
STEERED_ROW = ("tx_steered", "packets a steered to a shorter local queue (queue_steer)", "")

# rows of the Markdown summary, per benchmark kind: (metric, label, unit)
ROWS = {
    "tcp": [
        ("aggregate_mbps", "aggregate, link level (Mbit/s)", ""),
        ("aggregate_pct", "aggregate, % of capacity", ""),
        ("goodput_pct", "goodput, same window, % of capacity", ""),
        ("aggregate_rx_pct", "aggregate from b's rx counters, % of capacity", ""),
        ("link1_mbps", "link 1 (Mbit/s)", ""),
        ("link2_mbps", "link 2 (Mbit/s)", ""),
        ("link1_share_pct", "link 1 share (%)", ""),
        ("split_error_pts", "split error vs. capacity ratio (points)", ""),
        ("iperf3_mbps", "iperf3 goodput (Mbit/s)", ""),
        ("retransmits", "TCP retransmits", ""),
        ("retrans_pct", "retransmitted, % of segments sent", ""),
        ("dsack_segs", "retransmitted segments the receiver already had (DSACK)", ""),
        ("shaper_drops", "packets dropped by the shapers (queue full)", ""),
        ("sender_rtt_ms", "sender's RTT 40 % into the run (ms)", ""),
        ("sender_minrtt_ms", "sender's minimum RTT (ms)", ""),
        ("cpu_busy_pct", "guest CPU busy, % of its CPUs", ""),
        ("cpu_max_pct", "busiest guest CPU busy, %", ""),
        STEERED_ROW,
    ],
    "udp": [
        ("offered_mbps", "offered (Mbit/s)", ""),
        ("sent_mbps", "sent (Mbit/s)", ""),
        ("received_mbps", "received (Mbit/s)", ""),
        ("delivered_pct", "delivered, % of sent datagrams", ""),
        ("delivered_of_offered_pct", "received, % of offered rate", ""),
        ("link1_mbps", "link 1 (Mbit/s)", ""),
        ("link2_mbps", "link 2 (Mbit/s)", ""),
        ("out_of_order", "datagrams out of order", ""),
    ],
    "reorder": [
        ("aggregate_mbps", "aggregate, link level (Mbit/s)", ""),
        ("aggregate_pct", "aggregate, % of capacity", ""),
        ("goodput_pct", "goodput, same window, % of capacity", ""),
        ("aggregate_rx_pct", "aggregate from b's rx counters, % of capacity", ""),
        ("iperf3_mbps", "iperf3 goodput (Mbit/s)", ""),
        ("retransmits", "TCP retransmits", ""),
        ("retrans_pct", "retransmitted, % of segments sent", ""),
        ("dsack_segs", "retransmitted segments the receiver already had (DSACK)", ""),
        ("shaper_drops", "packets dropped by the shapers (queue full)", ""),
        ("reorder_held", "segments held by the reorder buffer", ""),
        ("reorder_in_order", "released in order", ""),
        ("reorder_lost", "released as lost (the paths had moved on)", ""),
        ("reorder_timeout", "released by timeout", ""),
        ("reorder_overflow", "released by overflow", ""),
        STEERED_ROW,
    ],
    "overhead": [
        ("tcp_iperf3_mbps", "TCP goodput (Mbit/s)", ""),
        ("tcp_retrans_pct", "TCP retransmitted, % of segments sent", ""),
        ("udp_pps", "64-byte UDP datagrams received per second", ""),
        ("udp_sent_mbps", "UDP sent (Mbit/s)", ""),
        ("udp_delivered_pct", "UDP delivered, % of sent datagrams", ""),
        ("udp_receiver_drops", "UDP dropped by the receiving socket", ""),
    ],
    "interleave": [
        ("off_mbps", "TCP goodput, mpip off: its hooks not registered (Mbit/s)", ""),
        ("on_mbps", "TCP goodput, mpip on (Mbit/s)", ""),
        ("ratio_pct", "on in % of off, median of the cycles' ratios", ""),
        ("ratio_all_pct", "on in % of off, all runs", ""),
        ("cycles", "ABBA cycles", ""),
        ("retransmits_on", "TCP retransmits, on runs", ""),
        ("retransmits_off", "TCP retransmits, off runs", ""),
    ],
    "natstart": [
        ("downloads", "downloads", ""),
        ("mbps", "goodput per download, median (Mbit/s)", ""),
        ("mbps_min", "goodput per download, lowest (Mbit/s)", ""),
        ("mbps_max", "goodput per download, highest (Mbit/s)", ""),
        ("ofo_downloads", "downloads in which a's TCP queued segments out of order", ""),
        ("ofo_segs", "segments a's TCP queued out of order, all downloads", ""),
        ("mptcp_ofo_segs", "MPTCP: out of order at the data level, all downloads", ""),
        ("retrans_downloads", "downloads in which b sent segments again", ""),
        ("retrans_segs", "segments b sent again, all downloads", ""),
        ("dsack_downloads", "downloads with a segment sent again in vain (DSACK)", ""),
        ("dsack_segs", "segments sent again that a already had (DSACK)", ""),
        ("reorder_lost", "gaps a's reorder buffer released as lost", ""),
        ("tx_resend", "segments b's mpip found sent again (tx_resend)", ""),
    ],
    "scale": [
        ("cost_ratio_pct", "most flows vs. 1 flow (%, median of the cycles' paired ratios)", ""),
        ("sessions", "mpip sessions on the sender afterwards", ""),
    ],
    "rules": [
        ("ns_per_pkt_none", "kernel time per datagram, no rules (ns)", ""),
        ("ns_per_pkt_100", "kernel time per datagram, 100 rules (ns)", ""),
        ("cost_ratio_pct", "100 rules vs. none (%, median of the cycles' paired ratios)", ""),
    ],
    "fig4d": [
        ("iperf3_mbps", "iperf3 goodput (Mbit/s)", ""),
        ("aggregate_mbps", "aggregate, link level (Mbit/s)", ""),
        ("aggregate_pct", "aggregate, % of capacity", ""),
        ("link1_mbps", "link 1 (Mbit/s)", ""),
        ("link2_mbps", "link 2 (Mbit/s)", ""),
        ("retrans_pct", "retransmitted, % of segments sent", ""),
    ],
    "failover": [
        ("goodput_before_mbps", "goodput before failure (Mbit/s)", ""),
        ("goodput_during_mbps", "goodput while link 2 is down (Mbit/s)", ""),
        ("goodput_after_mbps", "goodput after link 2 returns (Mbit/s)", ""),
        ("stall_s", "longest goodput stall (s)", ""),
        ("shift_s", "goodput at ≥ 80 % of link 1 again after (s)", ""),
        ("link2_back_s", "link 2 carries traffic again after (s)", ""),
        ("link1_before_pct", "link 1's share before the failure (%)", ""),
        ("link2_after_mbps", "link 2 after its return (Mbit/s)", ""),
        ("iperf3_mbps", "iperf3 goodput, whole run (Mbit/s)", ""),
    ],
}

# a failover run with a backup link (bench backup) has the same figures
ROWS["backup"] = ROWS["failover"]
# a backup link beside a lossy main link: what a plain TCP run has, and
# how b's reorder buffer let the gaps go
ROWS["backuploss"] = ROWS["tcp"] + [
    ("reorder_lost", "segments b's reorder buffer released as lost", ""),
    ("reorder_timeout", "segments it released by timeout", ""),
]
# the NAT benchmarks measure what tcp does, through the NATs
for _kind in ("nat", "natrev", "natdown", "natgso0", "natrevgso0", "natloss", "natmtu"):
    ROWS[_kind] = ROWS["tcp"]


def check_mark(m, key):
    for c in m.get("checks", []):
        if c["metric"] == key:
            return {True: " ✓", False: " ✗"}.get(c["ok"], " ?")
    return ""


def threshold_of(kind, key):
    for k, op, limit, _ in CHECKS.get(kind, []):
        if k == key:
            return "%s %g" % ("≥" if op == ">=" else "≤", limit)
    return ""


def rows_of(kind, modes):
    """ROWS of a kind; for scale, one row per number of flows measured."""
    if kind != "scale":
        return ROWS.get(kind, [])
    flows = sorted({p["flows"] for m in modes.values() for p in m.get("points", [])})
    return [("ns_per_pkt_%d" % n, "kernel time per datagram, %d flow%s (ns)" %
             (n, "s" if n > 1 else ""), "") for n in flows] + \
        [("cost_ratio_pct_%d" % n, "%d flows vs. 1 flow (%%)" % n, "") for n in flows[1:-1]] + \
        ROWS["scale"]


def mode_table(kind, modes):
    """Markdown lines: one row per metric, one column per mode, then notes."""
    names = list(modes)
    out = ["| metric | threshold | " + " | ".join(names) + " |",
           "| --- | --- |" + " --- |" * len(names)]
    for key, label, unit in rows_of(kind, modes):
        cells = []
        for m in modes.values():
            v = fmt(m.get(key), unit)
            if key == "link2_back_s" and m.get(key) is None and "link2_back_none_s" in m:
                v = "not within %s" % fmt(m["link2_back_none_s"], " s")
            if "%s_min" % key in m and m.get("reps", 1) > 1:
                v += " (%s–%s)" % (fmt(m["%s_min" % key], unit), fmt(m["%s_max" % key], unit))
            cells.append(v + check_mark(m, key))
        out.append("| %s | %s | %s |" % (label, threshold_of(kind, key), " | ".join(cells)))
    extra = []
    for mo, m in modes.items():
        if mo.startswith("mptcp") and kind != "udp" and "mptcp_verified" in m:
            seen = []
            if m.get("mptcp_subflow_addrs"):
                seen.append("subflows of the data connection: " +
                            ", ".join(m["mptcp_subflow_addrs"]))
            if "mptcp_joins" in m:
                seen.append("MP_JOINs completed: %d (iperf3's control connection "
                            "joins too)" % m["mptcp_joins"])
            extra.append("%s: %s; both links used: %s" % (
                mo, "; ".join(seen) or "no subflow information", fmt(m.get("mptcp_verified"))))
        if mo.startswith("mpip") and "mpip_paths_used" in m:
            extra.append("%s: %d path(s) carried data" % (mo, m["mpip_paths_used"]))
        if m.get("sender_limited"):
            extra.append("%s: the sender reached only %s of %s Mbit/s (CPU-bound under "
                         "emulation?)" % (mo, fmt(m.get("sent_mbps")), fmt(m.get("offered_mbps"))))
        cpu = m.get("cpu_max_pct_max", m.get("cpu_max_pct"))
        if isinstance(cpu, (int, float)) and cpu >= CPU_BOUND_PCT:
            extra.append("%s: the busiest guest CPU was %s %% busy (in its busiest run): "
                         "the CPU under emulation, not the links, may have limited it"
                         % (mo, fmt(cpu)))
        if m.get("sessions_ok") is False:
            extra.append("%s: fewer mpip sessions than flows when measured" % mo)
        if m.get("error"):
            extra.append("%s: error: %s" % (mo, m["error"]))
    if kind == "udp" and "mptcp" in modes:
        extra.append("MPTCP does not carry UDP: its column is plain single-path UDP.")
    if kind == "failover" and modes:
        m0 = next(iter(modes.values()))
        extra.append("link 2 down at %s s, up at %s s (end: %s)" % (
            fmt(m0.get("down_at_s")), fmt(m0.get("up_at_s")), m0.get("fail_end")))
    if kind == "reorder" and "mpip" in modes and "mpip-noreorder" in modes:
        on, off = modes["mpip"], modes["mpip-noreorder"]
        extra.append("reorder buffer on / off: aggregate %s / %s %% of capacity, "
                     "retransmitted %s / %s %% of segments" % (
                         fmt(on.get("aggregate_pct")), fmt(off.get("aggregate_pct")),
                         fmt(on.get("retrans_pct")), fmt(off.get("retrans_pct"))))
    if any(m.get("reps", 1) > 1 for m in modes.values()):
        extra.append("medians of %d runs, (min–max)" % max(m.get("reps", 1) for m in modes.values()))
    if extra:
        out.append("")
        out += ["- " + e for e in extra]
    return out


# per kind with scenarios: the figure of the overview table
OVERVIEW = {"fig4d": ("iperf3_mbps", "iperf3 goodput (Mbit/s)")}


def bench_md(b):
    """Markdown section of one benchmark line."""
    kind = b.get("kind", "tcp")
    out = ["## %s — %s" % (b["bench"], b.get("desc", "")), ""]
    per_run = "%s s per run%s" % (b.get("duration"),
                                  ", %s runs each" % b["reps"] if b.get("reps", 1) > 1 else "")
    if b.get("packets"):
        per_run = "%s datagrams per number of flows" % b["packets"]
    if b.get("downloads"):
        per_run = "%s downloads per mode" % b["downloads"]
    scens = b.get("scenarios")
    if not scens:
        out += ["%s%s" % ("links: %s / %s, " % (b["link1"], b["link2"]) if b.get("link1") else "",
                          per_run), ""]
        out += mode_table(kind, b.get("modes", {}))
    else:
        key, label = OVERVIEW.get(kind, ("aggregate_pct", "aggregate, % of capacity"))
        names = list(next(iter(scens.values())).get("modes", {}))
        out += ["%s, %s; median (min–max) of the runs." % (label, per_run), "",
                "| scenario | links | " + " | ".join(names) + " |",
                "| --- | --- |" + " --- |" * len(names)]
        for sn, sc in scens.items():
            cells = []
            for mo in names:
                m = sc["modes"].get(mo, {})
                v = fmt(m.get(key))
                if "%s_min" % key in m and m.get("reps", 1) > 1:
                    v += " (%s–%s)" % (fmt(m["%s_min" % key]), fmt(m["%s_max" % key]))
                cells.append(v)
            out.append("| %s | %s / %s | %s |" % (sn, sc.get("link1"), sc.get("link2"),
                                                 " | ".join(cells)))
        for sn, sc in scens.items():
            out += ["", "### %s: links %s / %s" % (sn, sc.get("link1"), sc.get("link2")), ""]
            out += mode_table(kind, sc.get("modes", {}))
    ratios = b.get("mpip_vs_unloaded_pct", {})
    rounds = b.get("mpip_vs_unloaded_rounds_pct", {})
    notes = []
    for key, label, thr in RATIOS.get(kind, []):
        if key in ratios:
            c = [x for x in b.get("checks", []) if x["metric"].endswith("." + key)]
            how = ""
            if rounds.get(key):
                how = " (median of %d alternating rounds: %s)" % (
                    len(rounds[key]), ", ".join(fmt(x) for x in rounds[key]))
            notes.append("%s with mpip loaded and active: %s %% of the figure without the "
                         "module%s%s" % (label, fmt(ratios[key]), how, " (threshold ≥ %g %%: %s)" % (
                             thr, "✓" if c and c[0]["ok"] else "✗") if thr else ""))
    modes = b.get("modes", {})
    if kind == "tcp" and "mpip" in modes and "mptcp" in modes:
        d = []
        for key, label in (("aggregate_pct", "aggregate"), ("goodput_pct", "goodput")):
            a, c = modes["mpip"].get(key), modes["mptcp"].get(key)
            if a is not None and c is not None:
                d.append("%s %+.1f points (%s)" % (label, a - c, "≥ MPTCP ✓" if a >= c
                                                   else "below MPTCP ✗"))
        if d:
            notes.append("mpip − MPTCP, same run: " + "; ".join(d))
    extra = b.get("mpip_extra_ns_per_pkt")
    if extra:
        notes.append("mpip's share of the kernel time per datagram (mpip − off): " +
                     ", ".join("%s flow(s) %s ns" % (n, v) for n, v in extra.items()))
    if notes:
        out += [""] + ["- " + n for n in notes]
    out += ["", "![%s](%s.png)" % (b["bench"], b["bench"]), ""]
    return out


def summary_md(lines):
    out = ["# mpip benchmarks", ""]
    if lines:
        q = lines[0].get("quick")
        what = ""
        if lines[0].get("commit"):
            what = " of commit %s (code id %s)" % (lines[0]["commit"], lines[0].get("code", "?"))
        if lines[0].get("settings"):
            what += " with %s" % ", ".join("%s=%s" % kv for kv in sorted(lines[0]["settings"].items()))
        out.append("Run %s%s%s. Values from the receiver; link rates from the "
                   "sender's shapers (headers included, every segment of a GSO "
                   "packet counted). ✓/✗: the spec's thresholds, "
                   "reported, not enforced. Definitions: `tools/bench/analyze.py`."
                   % (lines[0].get("date", ""), what, " with --quick (short runs)" if q else ""))
        out.append("")
    for b in lines:
        out += bench_md(b)
    return "\n".join(out) + "\n"


def demo_table(s):
    """Text table for the demo."""
    rows = [("phase", "link 1", "link 2", "aggregate", "% capacity", "link 1 share", "iperf3")]
    for key, label in (("off", "(a) MPIP off"), ("on", "(b) MPIP on"), ("fail", "(c) MPIP on, link 2 fails")):
        m = s.get(key)
        if not m:
            continue
        rows.append((label, fmt(m.get("link1_mbps")), fmt(m.get("link2_mbps")),
                     fmt(m.get("aggregate_mbps")), fmt(m.get("aggregate_pct"), " %"),
                     fmt(m.get("link1_share_pct"), " %"), fmt(m.get("iperf3_mbps"))))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r))
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append("(rates in Mbit/s; links from the shapers' counters, iperf3 = goodput)")
    f = s.get("fail")
    if f:
        lines.append("")
        lines.append("(c) link 2 down at %s s, up at %s s:" % (fmt(f.get("down_at_s")), fmt(f.get("up_at_s"))))
        lines.append("    longest goodput stall      %s s" % fmt(f.get("stall_s")))
        lines.append("    goodput before/during/after %s / %s / %s Mbit/s" % (
            fmt(f.get("goodput_before_mbps")), fmt(f.get("goodput_during_mbps")),
            fmt(f.get("goodput_after_mbps"))))
        back = f.get("link2_back_s")
        lines.append("    link 2 carries traffic again %s" % (
            "%s s after it came back" % fmt(back, "") if back is not None else
            "not within the %s s the run went on" % fmt(f.get("link2_back_none_s"))))
    for key in ("off", "on", "fail"):
        if s.get(key, {}).get("error"):
            lines.append("%s: error: %s" % (key, s[key]["error"]))
    return "\n".join(lines)


def paired_ratio(a, b, key):
    """(a's KEY in % of b's, [per round]): with rounds (both modes ran
    alternately, "runs" in the same order), the median of the rounds'
    ratios, so that a drift of the machine's speed cancels out; else the
    ratio of the two figures."""
    ra = [x.get(key) for x in a.get("runs", [])]
    rb = [x.get(key) for x in b.get("runs", [])]
    if ra and len(ra) == len(rb):
        per = [r1(100 * x / y) for x, y in zip(ra, rb)
               if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y]
        if per:
            return r1(median(per)), per
    x, y = a.get(key), b.get(key)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y:
        return r1(100 * x / y), None
    return None, None


def bench_line(name, desc, specs):
    """One benchmark's JSON line from specs [SCENARIO:]MODE=DIR and
    --KEY=VALUE (added as they are, VALUE parsed as JSON if it can be)."""
    line = {"bench": name, "desc": desc}
    modes = {}
    for spec in specs:
        if spec.startswith("--"):
            k, _, v = spec[2:].partition("=")
            try:
                line[k] = json.loads(v)
            except ValueError:
                line[k] = v
            continue
        key, _, d = spec.partition("=")
        scen, _, mode = key.rpartition(":")
        m, r = mode_metrics(d)
        links = {}
        if m is None:
            err = "no run"
            try:
                err = open(os.path.join(d, "error.txt")).read().strip() or err
            except OSError:
                pass
            m = {"mode": mode, "error": err}
        else:
            line.setdefault("kind", m["kind"])
            links = {"link1": r.meta.get("link1"), "link2": r.meta.get("link2")}
            line.setdefault("duration", r.duration)
            if "packets" in r.meta:
                line.setdefault("packets", r.meta["packets"])
            if "downloads" in r.meta:
                line.setdefault("downloads", r.meta["downloads"])
            if "reps" in m:
                line.setdefault("reps", m["reps"])
        if scen:
            sc = line.setdefault("scenarios", {}).setdefault(scen, {})
            sc.update({k: v for k, v in links.items() if k not in sc})
            sc.setdefault("modes", {})[mode] = m
        else:
            line.update({k: v for k, v in links.items() if k not in line})
            modes[mode] = m
    if modes or "scenarios" not in line:
        line["modes"] = modes
    for key, label, thr in RATIOS.get(line.get("kind"), []):
        pct, per_round = paired_ratio(modes.get("mpip", {}), modes.get("unloaded", {}), key)
        if pct is not None:
            line.setdefault("mpip_vs_unloaded_pct", {})[key] = pct
            if per_round:
                line.setdefault("mpip_vs_unloaded_rounds_pct", {})[key] = per_round
            if thr is not None:
                line.setdefault("checks", []).append({
                    "name": "%s with mpip >= %g %% of no module" % (label, thr),
                    "metric": "mpip_vs_unloaded_pct." + key, "op": ">=", "limit": thr,
                    "value": pct, "ok": pct >= thr})
    if line.get("kind") == "scale" and "mpip" in modes and "off" in modes:
        # what mpip adds to a datagram's kernel time, per number of flows
        off = {p["flows"]: p.get("kernel_ns_per_pkt") for p in modes["off"].get("points", [])}
        extra = {}
        for p in modes["mpip"].get("points", []):
            if isinstance(off.get(p["flows"]), (int, float)) and \
                    isinstance(p.get("kernel_ns_per_pkt"), (int, float)):
                extra[str(p["flows"])] = p["kernel_ns_per_pkt"] - off[p["flows"]]
        if extra:
            line["mpip_extra_ns_per_pkt"] = extra
    return line


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "run":
        print(json.dumps(mode_metrics(argv[2])[0] or Run(argv[2]).metrics()))
    elif cmd == "line":
        runs = sub_runs(argv[2]) or [("", argv[2])]
        print("\n      ".join(("%s: " % label if label else "") + run_line(Run(p).metrics())
                               for label, p in runs))
    elif cmd == "bench":
        print(json.dumps(bench_line(argv[2], argv[3], argv[4:]), ensure_ascii=False))
    elif cmd == "summary":
        lines = []
        with open(argv[2]) as f:
            for ln in f:
                ln = ln.strip()
                if ln:
                    try:
                        lines.append(json.loads(ln))
                    except ValueError:
                        pass
        sys.stdout.write(summary_md(lines))
    elif cmd == "demo":
        d = argv[2]
        s = {}
        for key in ("off", "on", "fail"):
            if os.path.exists(os.path.join(d, key, "run.json")):
                s[key] = Run(os.path.join(d, key)).metrics()
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(s, f, indent=1)
            f.write("\n")
        print(demo_table(s))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
