#!/usr/bin/python3
"""Kernel CPU time per UDP datagram with many concurrent flows.

    scale.py sink PORT [--ready FILE]
    scale.py send DST PORT --flows N[,N...] --packets P [--rounds R]
                           [--base-port B] [--mpipctl PATH]

sink: receive and discard datagrams on PORT until SIGTERM.

send: for each N, open N UDP sockets bound to distinct source ports (so N
flows, hence N mpip sessions), send one datagram on each (the warm-up
that creates the sessions), wait two seconds (so that the receiver's
heartbeats confirm them), with --mpipctl repeat that until the session
count reaches N (the very first datagram to a peer only starts mpip's
handshake; at most 5 times), then send P datagrams of 64 bytes round-robin
over the N sockets and measure the kernel time this took: system, IRQ and
soft-IRQ time of all CPUs from /proc/stat, before and after, divided by P;
R times (default 1), the median is the figure.
Everything the kernel does per datagram counts: the sender's syscall and
UDP/IP output (mpip's output hook), veth, the receiver's input (mpip's
input hook) and socket delivery; the Python interpreter's own work is
user time and does not.  With --mpipctl, `mpipctl -j status` just before
the measured part gives the sender's mpip session count (it must be at
least N for the figure to mean anything).  Prints one JSON object per N:

    {"flows": N, "packets": P, "seconds": S, "kernel_ns_per_pkt": X,
     "rounds_ns_per_pkt": [X1, ...], "sessions": SESSIONS or null}

The kernel time is sampled, not measured: at each timer tick (HZ=250 in
Debian's kernel, which has no IRQ time accounting) the tick's 4 ms go to
whatever the CPU was doing.  With 50,000 datagrams of 20-40 us each, a round
holds some 250-500 ticks of kernel time, a few % of sampling noise; hence
several rounds and their median, and comparisons only within one run.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

PAYLOAD = b"m" * 64


def kernel_ns():
    """System + IRQ + soft-IRQ time of all CPUs since boot, in ns."""
    with open("/proc/stat") as f:
        v = f.readline().split()
    # cpu user nice system idle iowait irq softirq ...
    ticks = int(v[3]) + int(v[6]) + int(v[7])
    return ticks * 1e9 / os.sysconf("SC_CLK_TCK")


def sessions(mpipctl):
    """The mpip session count of this namespace, or None."""
    if not mpipctl:
        return None
    try:
        out = subprocess.run([mpipctl, "-j", "status"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=60, check=True).stdout
        return json.loads(out).get("sessions")
    except (OSError, ValueError, subprocess.SubprocessError, AttributeError):
        return None


def sink(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("0.0.0.0", args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.ready:
        open(args.ready, "w").close()
    while True:
        s.recv(2048)


def send(args):
    base = args.base_port
    for n in [int(x) for x in args.flows.split(",")]:
        socks = []
        for i in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("0.0.0.0", base + i))
            s.connect((args.dst, args.port))
            socks.append(s)
        base += n
        # warm-up: the first datagram to a new peer only starts mpip's
        # handshake, so repeat until every flow has its session (at most
        # 5 times; without --mpipctl once)
        for _ in range(5):
            for s in socks:
                s.send(PAYLOAD)
            time.sleep(2)
            nsess = sessions(args.mpipctl)
            if nsess is None or nsess >= n:
                break
        ns, secs = [], []
        for _ in range(args.rounds):
            k0, t0 = kernel_ns(), time.monotonic()
            for i in range(args.packets):
                socks[i % n].send(PAYLOAD)
            k1, t1 = kernel_ns(), time.monotonic()
            ns.append(round((k1 - k0) / args.packets))
            secs.append(t1 - t0)
        print(json.dumps({"flows": n, "packets": args.packets,
                          "seconds": round(sorted(secs)[len(secs) // 2], 3),
                          "kernel_ns_per_pkt": sorted(ns)[len(ns) // 2],
                          "rounds_ns_per_pkt": ns, "sessions": nsess}),
              flush=True)
        for s in socks:
            s.close()


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
    a.add_argument("--rounds", type=int, default=1)
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
