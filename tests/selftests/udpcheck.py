#!/usr/bin/env python3
"""Send or receive a reproducible series of UDP datagrams and check them.

  udpcheck.py send HOST PORT COUNT [--sport P] [--seed S] [--gap-us U]
                                   [--no-df] [--size N] [--refused-ok]
                                   [--flows F]
  udpcheck.py recv PORT COUNT [--seed S] [--timeout SEC] [--size N]
                              [--min-good M] [--idle SEC] [--sent FILE]

Datagram i has a size drawn from the seed (1..1400 bytes), or N bytes
with --size N (both ends must be given the same), and content that
encodes i and the seed, so the receiver can tell a lost, duplicated,
truncated, extended or corrupted datagram from a good one.  The receiver
prints one JSON object: received, good, bad, duplicates, missing and,
when some are missing, lost (the first ranges of their numbers); it exits
0 only when exactly COUNT good datagrams arrived, each once, and nothing
else; with --min-good M, when at least M good ones arrived, none twice,
and nothing else.  With --idle SEC it stops waiting once nothing arrived
for SEC seconds after the first datagram (for a lossy link, where the
missing ones never come).  With --sent FILE, the --timeout seconds (and
--idle) count from when FILE appears, which the caller creates once the
sender is done: a sender that a slow guest runs for longer than the
timeout does not leave its last datagrams to a closed port.  With
--refused-ok the sender goes on when the host refuses a datagram (EPERM:
its own firewall, or mpip's hook, dropped it) and says how many were.
With --flows F the sender sends from F sockets in turn (datagram i from
socket i % F), bound to ports P to P + F - 1 with --sport P: F flows to
the one receiver.
"""
import argparse
import hashlib
import json
import os
import random
import socket
import sys
import time


def payload(seed, i, fixed=0):
    rng = random.Random(seed * 1000003 + i)
    size = fixed or rng.choice([1, 7, 28, 64, 200, 512, 999, 1200, 1400,
                                rng.randint(1, 1400)])
    head = b"%d:%d:" % (seed, i)
    body = hashlib.sha256(head).digest() * (size // 32 + 2)
    return (head + body)[:max(size, len(head))]


def sender_socket(args, k):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if args.no_df:
        # IP_PMTUDISC_DONT: DF clear, so routers fragment what is too big
        s.setsockopt(socket.IPPROTO_IP,
                     getattr(socket, "IP_MTU_DISCOVER", 10), 0)
    if args.sport:
        s.bind(("0.0.0.0", args.sport + k))
    return s


def send(args):
    socks = [sender_socket(args, k) for k in range(max(args.flows, 1))]
    refused = 0
    for i in range(args.count):
        s = socks[i % len(socks)]
        try:
            s.sendto(payload(args.seed, i, args.size), (args.host, args.port))
        except PermissionError:
            if not args.refused_ok:
                raise
            refused += 1
        if args.gap_us:
            time.sleep(args.gap_us / 1e6)
    if args.refused_ok:
        print("udpcheck: %d of %d datagrams refused by this host"
              % (refused, args.count), file=sys.stderr)
    return 0


# How long a receiver with --sent waits for the sender to be done at most.
SENDING_MAX = 900


def lost_ranges(seen, count, most=8):
    """The numbers below count missing from seen, as "A-B" ranges: the
    first few, and how many more ranges there were."""
    ranges = []
    i = 0
    while i < count:
        if i in seen:
            i += 1
            continue
        j = i
        while j + 1 < count and j + 1 not in seen:
            j += 1
        ranges.append(f"{i}-{j}" if j > i else str(i))
        i = j + 1
    if len(ranges) > most:
        ranges = ranges[:most] + [f"+{len(ranges) - most} more"]
    return ",".join(ranges)


def recv(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # Room for every datagram of a test (500 of up to 1400 bytes take
    # over 1 MB of buffer): a receiver that a loaded emulated guest
    # schedules late must not drop what mpip delivered.  SO_RCVBUF is
    # capped by net.core.rmem_max; root may force it (SO_RCVBUFFORCE).
    try:
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33),
                     16 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", args.port))
    if args.ready:
        open(args.ready, "w").close()
    seen = {}
    bad = 0
    received = 0
    start = time.monotonic()
    deadline = start + args.timeout
    # with --sent, the time to wait counts from when the sender is done
    sending = bool(args.sent)
    while True:
        now = time.monotonic()
        if sending and os.path.exists(args.sent):
            sending = False
            deadline = now + args.timeout
        if sending:
            if now - start > SENDING_MAX:
                break
            wait = 0.5
        elif now < deadline:
            wait = deadline - now
            if args.idle and received:
                wait = min(wait, args.idle)
        else:
            break
        s.settimeout(max(0.01, wait))
        try:
            data, _ = s.recvfrom(65535)
        except socket.timeout:
            if sending:
                continue
            break
        received += 1
        try:
            seed, i = data.split(b":", 2)[:2]
            i = int(i)
            ok = int(seed) == args.seed and data == payload(args.seed, i, args.size)
        except ValueError:
            ok = False
        if ok:
            seen[i] = seen.get(i, 0) + 1
        else:
            bad += 1
        if len(seen) == args.count and args.linger <= 0:
            break
        if len(seen) == args.count:
            end = time.monotonic() + args.linger
            # (a deadline set while the sender was sending is stale)
            deadline = end if sending else min(deadline, end)
            sending = False
            args.linger = 0
    dups = sum(n - 1 for n in seen.values())
    res = {"received": received, "good": len(seen), "bad": bad,
           "duplicates": dups, "missing": args.count - len(seen)}
    if res["missing"]:
        res["lost"] = lost_ranges(seen, args.count)
    print(json.dumps(res))
    want = args.min_good if args.min_good else args.count
    return 0 if (res["good"] >= want and not bad and not dups
                 and received == res["good"]) else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("host")
    ps.add_argument("port", type=int)
    ps.add_argument("count", type=int)
    ps.add_argument("--sport", type=int, default=0)
    ps.add_argument("--size", type=int, default=0)
    ps.add_argument("--seed", type=int, default=1)
    ps.add_argument("--gap-us", type=int, default=200)
    ps.add_argument("--no-df", action="store_true",
                    help="send without the don't-fragment bit")
    ps.add_argument("--flows", type=int, default=1)
    ps.add_argument("--refused-ok", action="store_true",
                    help="go on past datagrams this host drops (EPERM)")
    pr = sub.add_parser("recv")
    pr.add_argument("port", type=int)
    pr.add_argument("--size", type=int, default=0)
    pr.add_argument("count", type=int)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--timeout", type=float, default=20)
    pr.add_argument("--linger", type=float, default=0.5,
                    help="keep listening this long after the last one")
    pr.add_argument("--ready", help="file to create once bound")
    pr.add_argument("--sent", help="file that appears once the sender is "
                    "done: --timeout counts from then, not from the start "
                    f"(the sender may take up to {SENDING_MAX} s)")
    pr.add_argument("--min-good", type=int, default=0,
                    help="succeed with this many good ones (none twice)")
    pr.add_argument("--idle", type=float, default=0,
                    help="stop once nothing arrived for this long")
    args = p.parse_args()
    return send(args) if args.cmd == "send" else recv(args)


if __name__ == "__main__":
    sys.exit(main())
