#!/usr/bin/python3
"""A paced stream of timestamped messages, and its one-way delays.

    stream.py recv --proto tcp|udp --port P --out FILE [--ready FILE]
                   [--size N]
    stream.py send --proto tcp|udp HOST P --rate BITS --seconds S
                   [--size N] [--tos T] [--abort]

The sender sends a message of N bytes (default 1000) every
N * 8 / BITS seconds for S seconds, over one TCP connection or as UDP
datagrams; with --rate 0 (TCP only) as fast as the connection takes
them, a bulk transfer.  Each message starts with its number and the
sender's CLOCK_MONOTONIC time in nanoseconds.  SIGTERM ends the sending
early.  With --abort a TCP sender resets the connection at its end
rather than closing it: what it queued and the peer did not get yet is
dropped, so that a bulk transfer stops at once (a download cancelled),
not when its socket's buffer has drained.  That clock is the same in every
network namespace of one kernel, so a receiver in another namespace of
the same machine (the lab's hosts) reads each message's one-way delay:
for TCP the time until the whole message can be read, head-of-line
blocking and reordering included, as an application sees it.  The
sender is paced from its start (a late message does not shift the ones
after it) and never sends ahead of time.

The receiver runs until SIGTERM or SIGINT (or, for TCP, until the
sender closes), then writes FILE: one line "SEQ SENT_NS DELAY_US" per
message received, in the order received, after a first line
"# stream PROTO SIZE".  summarize() (used by analyze.py) turns such a
file into delay figures.  --ready FILE is created once the receiver
listens.

Standard library only, and cheap to start: under TCG every process
start costs a lot.
"""
import argparse
import os
import signal
import socket
import struct
import sys
import time

HEAD = struct.Struct("!QQ")     # message number, send time (ns)


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def message(seq, size):
    return HEAD.pack(seq, now_ns()) + bytes(size - HEAD.size)


class Stop(Exception):
    pass


def _stop(_sig, _frame):
    raise Stop()


def recv_udp(sock, got):
    while True:
        data = sock.recv(65536)
        t = now_ns()
        if len(data) >= HEAD.size:
            seq, sent = HEAD.unpack_from(data)
            got.append((seq, sent, (t - sent) // 1000))


def recv_exact(conn, size):
    buf = bytearray()
    while len(buf) < size:
        part = conn.recv(size - len(buf))
        if not part:
            return None
        buf += part
    return bytes(buf)


def recv_tcp(sock, size, got):
    conn, _ = sock.accept()
    with conn:
        while True:
            try:
                data = recv_exact(conn, size)
            except ConnectionResetError:
                return              # the sender's --abort
            if data is None:
                return
            t = now_ns()
            seq, sent = HEAD.unpack_from(data)
            got.append((seq, sent, (t - sent) // 1000))


def write_out(path, proto, size, got):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("# stream %s %d\n" % (proto, size))
        for seq, sent, delay in got:
            f.write("%d %d %d\n" % (seq, sent, delay))
    os.replace(tmp, path)


def cmd_recv(a):
    kind = socket.SOCK_STREAM if a.proto == "tcp" else socket.SOCK_DGRAM
    sock = socket.socket(socket.AF_INET, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if a.proto == "udp":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.bind(("0.0.0.0", a.port))
    if a.proto == "tcp":
        sock.listen(1)
    got = []
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if a.ready:
        open(a.ready, "w").close()
    try:
        if a.proto == "tcp":
            recv_tcp(sock, a.size, got)
        else:
            recv_udp(sock, got)
    except Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    write_out(a.out, a.proto, a.size, got)
    return 0


def cmd_send(a):
    gap = a.size * 8 / a.rate if a.rate else 0.0
    count = max(1, int(a.seconds / gap)) if gap else None
    if a.proto == "tcp":
        sock = socket.create_connection((a.host, a.port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.connect((a.host, a.port))
    if a.tos:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
    start = time.monotonic()
    seq = 0
    signal.signal(signal.SIGTERM, _stop)
    try:
        while count is None and time.monotonic() < start + a.seconds or \
                count is not None and seq < count:
            wait = start + seq * gap - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                sock.sendall(message(seq, a.size))
            except ConnectionRefusedError:
                pass                # UDP: an ICMP error from a late receiver
            seq += 1
    except Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if a.abort and a.proto == "tcp":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    print("stream: sent %d messages of %d bytes in %.2f s" %
          (seq, a.size, time.monotonic() - start), file=sys.stderr)
    return 0


def percentile(sorted_vals, q):
    """The q-quantile (0..1) of a sorted list, nearest rank."""
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, max(0, int(q * len(sorted_vals) + 0.5) - 1))
    return sorted_vals[k]


def read_file(path):
    """(proto, size, [(seq, sent_ns, delay_us)]) of a receiver's file."""
    with open(path) as f:
        head = f.readline().split()
        if head[:2] != ["#", "stream"]:
            raise ValueError("%s: not a stream file" % path)
        rows = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
    return head[2], int(head[3]), rows


def goodput_mbps(rows, size, t0_ns, t1_ns):
    """Mbit/s of the messages that arrived (sent + delay) in [t0_ns, t1_ns)."""
    n = sum(1 for _seq, sent, delay in rows if t0_ns <= sent + delay * 1000 < t1_ns)
    return n * size * 8 / ((t1_ns - t0_ns) / 1e9) / 1e6 if t1_ns > t0_ns else 0.0


def summarize(rows, t0_ns=None, t1_ns=None):
    """Delay figures of the messages sent in [t0_ns, t1_ns) (all: None).

    received, lost (numbers in the range never received), median, p95
    and p99 of the one-way delay in ms, and jitter in ms: the mean
    absolute difference of the delays of consecutive messages (by number)
    both received, as RFC 3550's interarrival jitter measures it, without
    its smoothing."""
    sel = [r for r in rows
           if (t0_ns is None or r[1] >= t0_ns) and (t1_ns is None or r[1] < t1_ns)]
    if not sel:
        return {"received": 0}
    by_seq = {}
    for seq, _sent, delay in sel:
        by_seq.setdefault(seq, delay)
    seqs = sorted(by_seq)
    delays = sorted(by_seq.values())
    diffs = [abs(by_seq[s] - by_seq[s - 1]) for s in seqs if s - 1 in by_seq]
    return {
        "received": len(by_seq),
        "lost": seqs[-1] - seqs[0] + 1 - len(by_seq),
        "delay_median_ms": percentile(delays, 0.5) / 1000.0,
        "delay_p95_ms": percentile(delays, 0.95) / 1000.0,
        "delay_p99_ms": percentile(delays, 0.99) / 1000.0,
        "jitter_ms": (sum(diffs) / len(diffs) / 1000.0) if diffs else 0.0,
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--proto", choices=("tcp", "udp"), required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--ready")
    r.add_argument("--size", type=int, default=1000)
    s = sub.add_parser("send")
    s.add_argument("--proto", choices=("tcp", "udp"), required=True)
    s.add_argument("host")
    s.add_argument("port", type=int)
    s.add_argument("--rate", type=float, required=True, help="bit/s")
    s.add_argument("--seconds", type=float, required=True)
    s.add_argument("--size", type=int, default=1000)
    s.add_argument("--tos", type=lambda v: int(v, 0), default=0)
    s.add_argument("--abort", action="store_true")
    a = p.parse_args(argv)
    if a.size < HEAD.size:
        p.error("--size must be at least %d" % HEAD.size)
    if a.cmd == "send" and (a.rate < 0 or a.seconds <= 0):
        p.error("--rate must not be negative, --seconds must be positive")
    if a.cmd == "send" and a.rate == 0 and a.proto != "tcp":
        p.error("--rate 0 (as fast as it goes) is for TCP only")
    return cmd_recv(a) if a.cmd == "recv" else cmd_send(a)


if __name__ == "__main__":
    sys.exit(main())
