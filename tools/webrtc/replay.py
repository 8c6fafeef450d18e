#!/usr/bin/python3
"""Replay a call's video packets, as the receiver's capture saw them
arrive, through aiortc's receive-side bitrate estimator, and say what
its overuse detector made of them.

    replay.py CALLDIR [--patched] [--every SECONDS]

CALLDIR is one call of tools/webrtc/run.sh (its b.pcap).  Each video RTP
packet with an abs-send-time extension (ID 2, as call.py's offer maps
it) goes to aiortc.rate.RemoteBitrateEstimator in arrival order, with
the capture's arrival time, as aiortc's receiver would feed it (every
packet counted as 1000 bytes: the capture keeps headers only).  Prints,
every SECONDS (default 3), the detector's state and the estimator's
offset (ms) and slope (ms per byte), then the number of packets seen in
each state, and how many arrived behind a later one of their stream.  --patched first
applies call.py's fix_interarrival_reorder().  Replay only: no rate
control loop (the sender's rate is the one captured).
"""
import argparse
import os
import struct
import sys

import aiortc.rate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402 (pcap_udp, behind_later)

ABS_SEND_TIME_ID = 2


def abs_send_time(p):
    """The abs-send-time of RTP packet head p, or None."""
    if len(p) < 12 or p[0] >> 6 != 2 or 200 <= p[1] <= 204 or \
            not p[0] & 0x10:
        return None
    off = 12 + 4 * (p[0] & 15)
    if len(p) < off + 4:
        return None
    profile, words = struct.unpack(">HH", p[off:off + 4])
    if profile != 0xBEDE:
        return None
    ext, i = p[off + 4:off + 4 + 4 * words], 0
    while i < len(ext):
        if ext[i] == 0:     # padding
            i += 1
            continue
        eid, n = ext[i] >> 4, (ext[i] & 15) + 1
        if eid == ABS_SEND_TIME_ID and n == 3 and i + 4 <= len(ext):
            return int.from_bytes(ext[i + 1:i + 4], "big")
        i += 1 + n
    return None


def packets(pcap):
    """[(arrival time, abs-send-time, SSRC, sequence number)] in arrival
    order, each packet once (the capture is on every interface)."""
    out, seen = [], set()
    for t, p in analyze.pcap_udp(pcap):
        ast = abs_send_time(p)
        if ast is None:
            continue
        key = (p[8:12], p[2:4])
        if key in seen:
            continue
        seen.add(key)
        out.append((t, ast, int.from_bytes(p[8:12], "big"),
                    int.from_bytes(p[2:4], "big")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("calldir")
    ap.add_argument("--patched", action="store_true")
    ap.add_argument("--every", type=float, default=3.0)
    args = ap.parse_args()
    if args.patched:
        import call
        call.fix_interarrival_reorder()
    pkts = packets(os.path.join(args.calldir, "b.pcap"))
    if not pkts:
        sys.exit("no video packets with abs-send-time in the capture")
    rbe = aiortc.rate.RemoteBitrateEstimator()
    late = sum(analyze.behind_later((ssrc, seq) for _, _, ssrc, seq in pkts))
    states, next_t = {}, pkts[0][0]
    for t, ast, _, _ in pkts:
        rbe.add(arrival_time_ms=int(t * 1000), abs_send_time=ast,
                payload_size=1000, ssrc=1)
        state = rbe.detector.state().name.lower()
        states[state] = states.get(state, 0) + 1
        if t >= next_t:
            print("%6.1f s  %-10s offset %9.1f ms  slope %.4f ms/B" % (
                t - pkts[0][0], state, rbe.estimator.offset(),
                rbe.estimator.slope))
            next_t += args.every
    print("packets %d, arrived behind a later one %d; detector: %s" % (
        len(pkts), late, ", ".join("%s %d" % kv for kv in sorted(states.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
