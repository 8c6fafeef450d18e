#!/usr/bin/python3
"""Kernel CPU time per UDP datagram with many concurrent flows.

    scale.py sink PORT [--ready FILE]
    scale.py send DST PORT --flows N[,N...] --packets P [--cycles C]
                           [--netns NS[,NS...]] [--base-port B]
                           [--mpipctl PATH]

sink: receive and discard datagrams on PORT until SIGTERM.

send: for each N, open N UDP sockets bound to distinct source ports (so N
flows, hence N mpip sessions) in its own network namespace (--netns, one
per N, by name under /run/netns; without it all in the caller's), send one
datagram on each (the warm-up that creates the sessions), wait two seconds
(so that the receiver's heartbeats confirm them), with --mpipctl repeat
that until the namespace's session count reaches N (the very first
datagram to a peer only starts mpip's handshake; at most 5 times).  Each
namespace is the sending host of a lab of its own, so each N has its own
mpip tables: the one-flow lab holds one session, the 10,000-flow lab
10,000.

Then C cycles of measured rounds.  A cycle visits the flow counts forward
and back (1, 100, 10000, 10000, 100, 1); a round sends P datagrams of 64
bytes round-robin over one count's sockets and measures the kernel time
this took: system, IRQ and soft-IRQ time of all CPUs from /proc/stat,
before and after, divided by P.  Everything the kernel does per datagram
counts: the sender's syscall and UDP/IP output (mpip's output hook), veth,
the receiver's input (mpip's input hook) and socket delivery; the Python
interpreter's own work is user time and does not.

The emulated machine's speed drifts by tens of % over minutes.  Measuring
all of one count before the next (the method before) put that drift into
the ratios; in a cycle, the first count's two rounds enclose the others',
so a cycle's ratio (mean of N's rounds over mean of the first count's)
cancels a steady drift.  The figure is the median of the cycles' ratios.

Prints one JSON object per N:

    {"flows": N, "packets": P, "seconds": S, "kernel_ns_per_pkt": X,
     "rounds_ns_per_pkt": [X1, ...], "cycle_ratios_pct": [R1, ...],
     "ratio_pct": R, "sessions": SESSIONS or null, "rewritten_pct": W}

(kernel_ns_per_pkt and seconds: medians of the rounds; ratio_pct: median
of the cycle ratios, against the first count; sessions: the namespace's
mpip session count before the first round; rewritten_pct, with
--mpipctl: the share of the measured datagrams with a CM that mpip sent
on another path than their own, which costs both hosts a rewrite.)

The kernel time is sampled, not measured: at each timer tick (HZ=250 in
Debian's kernel, which has no IRQ time accounting) the tick's 4 ms go to
whatever the CPU was doing.  With 50,000 datagrams of 20-40 us each, a round
holds some 250-500 ticks of kernel time, a few % of sampling noise.
"""
import argparse
import ctypes
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

PAYLOAD = b"m" * 64
CLONE_NEWNET = 0x40000000


def kernel_ns():
    """System + IRQ + soft-IRQ time of all CPUs since boot, in ns."""
    with open("/proc/stat") as f:
        v = f.readline().split()
    # cpu user nice system idle iowait irq softirq ...
    ticks = int(v[3]) + int(v[6]) + int(v[7])
    return ticks * 1e9 / os.sysconf("SC_CLK_TCK")


class Netns:
    """Enter a network namespace by name for a while (setns(2))."""
    libc = ctypes.CDLL(None, use_errno=True)

    def __init__(self, name):
        self.path = "/run/netns/" + name if name else None
        self.home_fd = -1

    def _setns(self, fd, what):
        if self.libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "setns %s: %s" % (what, os.strerror(err)))

    def __enter__(self):
        if self.path:
            self.home_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
            try:
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    self._setns(fd, self.path)
                finally:
                    os.close(fd)
            except OSError:
                os.close(self.home_fd)
                raise
        return self

    def __exit__(self, *exc):
        if self.path:
            try:
                self._setns(self.home_fd, "back")
            finally:
                os.close(self.home_fd)
        return False


def mpipctl_json(mpipctl, cmd):
    """`mpipctl -j CMD` in the current namespace as a dict, or None."""
    if not mpipctl:
        return None
    try:
        out = subprocess.run([mpipctl, "-j", cmd], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=60, check=True).stdout
        d = json.loads(out)
        return d if isinstance(d, dict) else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def sessions(mpipctl):
    """The mpip session count of the current namespace, or None."""
    return (mpipctl_json(mpipctl, "status") or {}).get("sessions")


def counters(mpipctl):
    """The mpip counters of the current namespace, or None."""
    d = mpipctl_json(mpipctl, "stats")
    return d.get("stats", d) if d else None


def sink(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("0.0.0.0", args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.ready:
        open(args.ready, "w").close()
    while True:
        s.recv(2048)


class Group:
    """N flows from one namespace: their sockets and their rounds."""

    def __init__(self, n, netns, args, base):
        self.n, self.netns, self.ns_per_pkt, self.secs = n, netns, [], []
        self.socks = []
        with Netns(netns):
            for i in range(n):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(("0.0.0.0", base + i))
                s.connect((args.dst, args.port))
                self.socks.append(s)

    def warm_up(self, mpipctl):
        """Until every flow has its session (at most 5 times; without
        mpipctl once).  Returns the session count, or None."""
        nsess = None
        for _ in range(5):
            for s in self.socks:
                s.send(PAYLOAD)
            time.sleep(2)
            with Netns(self.netns):
                nsess = sessions(mpipctl)
            if nsess is None or nsess >= self.n:
                break
        return nsess

    def counters(self, mpipctl):
        with Netns(self.netns):
            return counters(mpipctl)

    def round(self, packets):
        socks, n = self.socks, self.n
        k0, t0 = kernel_ns(), time.monotonic()
        for i in range(packets):
            socks[i % n].send(PAYLOAD)
        k1, t1 = kernel_ns(), time.monotonic()
        self.ns_per_pkt.append(round((k1 - k0) / packets))
        self.secs.append(t1 - t0)
        return self.ns_per_pkt[-1]

    def close(self):
        for s in self.socks:
            s.close()


def send(args):
    counts = [int(x) for x in args.flows.split(",")]
    names = args.netns.split(",") if args.netns else [None] * len(counts)
    if len(names) != len(counts):
        sys.exit("scale.py: --netns needs one namespace per flow count")
    groups, nsess, base = [], [], args.base_port
    for n, name in zip(counts, names):
        groups.append(Group(n, name, args, base))
        base += n
    for g in groups:
        nsess.append(g.warm_up(args.mpipctl))
    before = [g.counters(args.mpipctl) for g in groups]
    ratios = [[] for _ in groups]
    for _ in range(args.cycles):
        cyc = [[] for _ in groups]
        for i in list(range(len(groups))) + list(range(len(groups) - 1, -1, -1)):
            cyc[i].append(groups[i].round(args.packets))
        ref = sum(cyc[0]) / len(cyc[0])
        for i, xs in enumerate(cyc):
            ratios[i].append(round(100 * sum(xs) / len(xs) / ref, 1) if ref else None)
    for g, rs, ns, c0 in zip(groups, ratios, nsess, before):
        ok = [r for r in rs if r is not None]
        out = {"flows": g.n, "packets": args.packets,
               "seconds": round(statistics.median(g.secs), 3),
               "kernel_ns_per_pkt": round(statistics.median(g.ns_per_pkt)),
               "rounds_ns_per_pkt": g.ns_per_pkt,
               "cycle_ratios_pct": rs,
               "ratio_pct": round(statistics.median(ok), 1) if ok else None,
               "sessions": ns}
        c1 = g.counters(args.mpipctl)
        if c0 and c1:
            # the share of the measured datagrams sent on another path
            # than their own (rewritten: more work on both hosts)
            d = {k: c1.get(k, 0) - c0.get(k, 0) for k in ("tx_cm", "tx_rewrite")}
            if d["tx_cm"] > 0:
                out["rewritten_pct"] = round(100.0 * d["tx_rewrite"] / d["tx_cm"], 1)
        print(json.dumps(out), flush=True)
        g.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("sink")
    a.add_argument("port", type=int)
    a.add_argument("--ready")
    a = sub.add_parser("send")
    a.add_argument("dst")
    a.add_argument("port", type=int)
    a.add_argument("--flows", required=True)
    a.add_argument("--packets", type=int, required=True)
    a.add_argument("--cycles", type=int, default=1)
    a.add_argument("--netns", help="one sending namespace per flow count")
    a.add_argument("--base-port", type=int, default=20000)
    a.add_argument("--mpipctl", help="mpipctl binary: record the session count")
    args = ap.parse_args()
    if args.cmd == "sink":
        sink(args)
    else:
        send(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
