#!/usr/bin/env python3
"""Make many UDP flows: one datagram from each of many fresh sockets.

  flows.py send HOST PORT COUNT    COUNT datagrams, each from a socket of
                                   its own bound to the next source port
                                   from 20000 up (ports in use skipped):
                                   COUNT new flows, COUNT new mpip
                                   sessions; prints how many it sent
  flows.py flood HOST PORT SECS [--rate N]
                                   the same, N flows a second (default
                                   1000) for SECS seconds (or until
                                   killed), from port 20000 to 59999 and
                                   round again
  flows.py sink PORT [--ready F]   receive and discard on PORT until
                                   killed (touches F once it listens), so
                                   that the datagrams meet a socket rather
                                   than an ICMP error

Used by test_teardown.sh (a flush of thousands of sessions) and
test_unload.sh (namespace deletion and rmmod while new flows keep coming).
"""
import argparse
import socket
import sys
import time


FIRST_PORT = 20000
LAST_PORT = 59999


def one(host, port, sport):
    """One datagram from source port @sport; False if that port is taken."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("0.0.0.0", sport))
        s.sendto(b"flow", (host, port))
        return True
    except OSError:
        # the port is in use, or no route for a moment (a link going down
        # in the test): the next port tries again
        return False
    finally:
        s.close()


def ports():
    while True:
        yield from range(FIRST_PORT, LAST_PORT + 1)


def send(args):
    sent = 0
    for sport in range(FIRST_PORT, LAST_PORT + 1):
        if sent == args.count:
            break
        sent += one(args.host, args.port, sport)
    print(sent)
    return 0 if sent == args.count else 1


def flood(args):
    start = time.monotonic()
    sent = 0
    for n, sport in enumerate(ports()):
        now = time.monotonic()
        if now - start >= args.secs:
            break
        ahead = n / args.rate - (now - start)
        if ahead > 0:
            time.sleep(ahead)
        sent += one(args.host, args.port, sport)
    print(sent)
    return 0


def sink(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", args.port))
    if args.ready:
        open(args.ready, "w").close()
    while True:
        s.recv(2048)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    # send and flood: HOST PORT, then a count or a duration
    for cmd, last, kind in (("send", "count", int), ("flood", "secs", float)):
        p = sub.add_parser(cmd)
        p.add_argument("host")
        p.add_argument("port", type=int)
        p.add_argument(last, type=kind)
    p.add_argument("--rate", type=float, default=1000)
    p = sub.add_parser("sink")
    p.add_argument("port", type=int)
    p.add_argument("--ready")
    args = ap.parse_args()
    return {"send": send, "flood": flood, "sink": sink}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
