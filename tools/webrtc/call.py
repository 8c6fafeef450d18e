#!/usr/bin/python3
"""A WebRTC call between two lab hosts, with a real stack (aiortc: ICE,
DTLS, SRTP, VP8, Opus) and synthetic media, for the WebRTC rows of the
mpip lab (paper section 5.1.2, issue 22).

    call.py recv --bind ADDR --port P --seconds N --out FILE
    call.py send --bind ADDR --peer ADDR --port P --seconds N --out FILE
                 [--video pattern|noise|ladder] [--ladder FILE]
                 [--width W --height H --fps F]

The receiver listens for the offer on TCP ADDR:P (one JSON line each
way, no trickle ICE); the sender sends a video track (a moving textured
picture, so that the encoder always has detail to spend bits on) and an
audio track (a tone).  ICE offers only --bind: the call uses the address pair a
host without multipath would, and mpip spreads its packets.

Every second each end writes a sample of what the user sees: the
receiver the video frames and audio frames it decoded, the RTP packets
received and lost per kind and the jitter; the sender the bytes and
packets it sent per kind (the encoder's rate) and the RTT its receiver
reports give, and the video encoder's target rate.  The receiver also
keeps each bitrate estimate (REMB) it sends, with the state of the
delay-based overuse detector behind it (log_estimates).  The one-way
delay of each RTP packet comes from captures at both ends
(rtp_delay.py): SRTP leaves RTP headers in clear.
"""
import argparse
import asyncio
import collections
import fcntl
import fractions
import json
import pickle
import socket
import struct
import sys
import time

import aioice.ice
import aiortc.clock
import aiortc.codecs.vpx
import aiortc.jitterbuffer
import aiortc.rate
import aiortc.rtcdtlstransport
import aiortc.rtcrtpreceiver
import aiortc.rtp
import aiortc.utils
import av
import numpy
from aiortc import (MediaStreamTrack, RTCPeerConnection,
                    RTCSessionDescription, VideoStreamTrack)
from aiortc.codecs import HEADER_EXTENSIONS

from analyze import pct


def fix_bundle_extension_ids():
    """aiortc 1.4 gives audio-level (audio) and abs-send-time (video) the
    same ID 2, and parses both m-lines of a BUNDLE with one map: every
    audio packet then fails to parse and nothing is received (aiortc issue
    745).  Give audio-level ID 3, at both ends."""
    for ext in HEADER_EXTENSIONS["audio"]:
        if ext.uri.endswith("ssrc-audio-level"):
            ext.id = 3


def fix_jitter_origin():
    """aiortc 1.4's jitter buffer takes the first packet to arrive for the
    stream's first, and drops any older one for good without asking for a
    keyframe (JitterBuffer.add: misorder < MAX_MISORDER).  When the first
    packet of a call's first keyframe arrives after the second (sent on a
    path 30 ms slower), that frame lacks its start, every later frame
    depends on it, and the receiver decodes no video for the whole call
    (the delay scenario over mpip: 2 of 5 calls with a rule, 0 of 5
    without, 2026-11-27/28).  Until the
    buffer has given out a frame, an older packet, up to a quarter of its
    capacity back, moves its origin back instead."""
    jb = aiortc.jitterbuffer
    add = jb.JitterBuffer.add

    def patched(self, packet):
        if self._origin is not None and not getattr(self, "_had_frame", False):
            back = jb.uint16_add(self._origin, -packet.sequence_number)
            if 0 < back < self._capacity // 4:
                self._origin = packet.sequence_number
        pli, frame = add(self, packet)
        if frame is not None:
            self._had_frame = True
        return pli, frame

    jb.JitterBuffer.add = patched


def fix_interarrival_reorder():
    """aiortc 1.4's bitrate estimator (InterArrival.compute_deltas) drops
    a packet as out of order only if its send time (abs-send-time) is
    older than the *first* of the current group of packets sent within
    5 ms.  One sent between the group's first and last that arrives more
    than 5 ms after the group's last (over another path) starts a new
    group that begins before the old one ended: the next delta between
    the groups' last send times is negative, and in the 24-bit
    abs-send-time clock that is 64 s.  One such delta throws the Kalman
    filter of the overuse estimator off (a call's replay, replay.py:
    slope from 0.007 to 0.27 ms/byte and offset to -200 ms at the
    first, 0.73 and -420 ms at the next, -2000 ms later);
    its detector then says "underusing" for the rest of the call, in
    which the rate control holds the estimate: the REMB stood still for
    40 s in every call over mpip's two paths (2026-11-29).  libwebrtc's
    send-side estimator orders packets by their transport sequence
    number before it computes deltas, so a browser's does not meet this.
    Here a packet older than the newest one of the current group is out
    of order: it counts for the incoming rate, not for the delays."""
    ia = aiortc.rate.InterArrival

    def out_of_order(self, timestamp):
        return aiortc.rate.uint32_add(
            timestamp, -self.current_group.last_timestamp) >= 0x80000000

    ia.packet_out_of_order = out_of_order


SIOCGSTAMP = 0x8906  # linux/sockios.h: the socket's last receive time
NTP_UNIX_S = 2208988800  # aiortc.clock counts from 1900, the kernel from 1970


class Arrived(bytes):
    """A datagram, with .ms: when the kernel received it, in
    aiortc.clock.current_ms()'s units (ms since the NTP epoch)."""


class ArrivalTimes:
    """What fix_arrival_time() did: how many RTP/RTCP datagrams got the
    kernel's receive time, how many the event loop's (no stamp), and by
    how much (ms) the loop's reading came after the kernel's."""

    def __init__(self):
        self.kernel = 0
        self.loop = 0
        self.lags = []

    def summary(self):
        return {"kernel": self.kernel, "loop": self.loop,
                "loop_lag_ms_median": pct(self.lags, 0.5),
                "loop_lag_ms_p95": pct(self.lags, 0.95),
                "loop_lag_ms_p99": pct(self.lags, 0.99),
                "loop_lag_ms_max": max(self.lags, default=None)}


def kernel_arrival(transport):
    """The kernel's receive time of the datagram TRANSPORT's socket
    returned last (SIOCGSTAMP), as aiortc.clock.current_ms() counts, or
    None."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return None
    try:
        raw = fcntl.ioctl(sock.fileno(), SIOCGSTAMP, bytes(16))
    except OSError:
        return None
    sec, usec = struct.unpack("qq", raw)
    return (sec + NTP_UNIX_S) * 1000 + usec // 1000


def fix_arrival_time(stats):
    """aiortc 1.4 times each SRTP packet for its bitrate estimator when
    the DTLS transport's task takes it from aioice's queue
    (RTCDtlsTransport._recv_next: clock.current_ms()), after whatever
    the event loop ran in between: decoding, the jitter buffer, RTCP,
    the packets before it.  In the lab's guest, emulated under TCG, that
    lag varies by tens of milliseconds, and the delay-based overuse
    detector takes its variation for queueing on the network: in the
    180 s calls of 2026-12-06 it said "overusing" for 18-36 % of the
    estimates in every mode, with no mpip too, while the same packets
    replayed with the capture's arrival times (replay.py) were "normal"
    throughout.  The video rate a call reached then varied by 14-17 %
    from call to call, on idle links.  libwebrtc on Linux takes the kernel's
    receive time of each datagram (SIOCGSTAMP on its socket); so does
    this: aioice's protocol reads it as soon as asyncio has read the
    datagram, the datagram carries it (Arrived) through aioice's queue,
    and the DTLS transport's clock gives it for that packet.  STATS
    (ArrivalTimes) counts what it did."""
    proto = aioice.ice.StunProtocol
    received = proto.datagram_received

    def stamped(self, data, addr):
        ms = kernel_arrival(self.transport)
        if ms is not None:
            data = Arrived(data)
            data.ms = ms
        received(self, data, addr)

    proto.datagram_received = stamped

    conn = aioice.ice.Connection
    recv = conn.recv
    current = [None]  # the receive time of the datagram recv() gave last

    async def recv_stamped(self):
        data = await recv(self)
        current[0] = getattr(data, "ms", None)
        return data

    conn.recv = recv_stamped

    class Clock:
        """aiortc.clock, but current_ms() is the receive time of the
        datagram the DTLS transport took last, once."""

        def __getattr__(self, name):
            return getattr(aiortc.clock, name)

        def current_ms(self):
            now = aiortc.clock.current_ms()
            ms, current[0] = current[0], None
            if ms is None:
                stats.loop += 1
                return now
            stats.kernel += 1
            stats.lags.append(now - ms)
            return ms

    aiortc.rtcdtlstransport.clock = Clock()


class PacedNackGenerator:
    """aiortc 1.4's NackGenerator, as libwebrtc's NackRequester paces it.
    aiortc's lists every packet still missing in each NACK it sends, and
    sends one whenever a packet arrives after a gap: a packet lost (or
    one whose retransmission is on its way) is asked for again at every
    later gap, and the sender, which resends whatever a NACK names,
    sends it again each time.  Over mpip's two paths, where four video
    packets in ten arrive behind a later one, that took the links to
    more than their rate in retransmissions alone (2026-12-05, a call
    with the video of ladder.py).  Here, as in libwebrtc, a packet is
    asked for when it is found missing, then again only when
    RETRY_S (libwebrtc's default RTT, 100 ms) has passed since, at most
    MAX_TRIES times.  Like both, it asks at once: a packet that arrives
    behind a later one is still asked for, and resent."""

    RETRY_S = 0.1
    MAX_TRIES = 10

    def __init__(self):
        self.max_seq = None
        self.asked = {}  # sequence number: [time last asked, times]
        self.missing = set()  # what the NACK that add() called for names

    def add(self, packet):
        """Note PACKET; True if a NACK is due, for self.missing."""
        seq = packet.sequence_number
        if self.max_seq is None:
            self.max_seq = seq
            return False
        if aiortc.utils.uint16_gt(seq, self.max_seq):
            gap = aiortc.utils.uint16_add(self.max_seq, 1)
            while aiortc.utils.uint16_gt(seq, gap):
                self.asked[gap] = [None, 0]
                gap = aiortc.utils.uint16_add(gap, 1)
            self.max_seq = seq
        else:
            self.asked.pop(seq, None)
        return self.due(time.monotonic())

    def due(self, now):
        low = aiortc.utils.uint16_add(self.max_seq, -aiortc.rtp.RTP_HISTORY_SIZE)
        self.missing = set()
        for seq, entry in list(self.asked.items()):
            if aiortc.utils.uint16_gt(low, seq) or entry[1] >= self.MAX_TRIES:
                del self.asked[seq]
            elif entry[0] is None or now - entry[0] >= self.RETRY_S:
                entry[0] = now
                entry[1] += 1
                self.missing.add(seq)
        return bool(self.missing)


def fix_nack_repeats():
    """Pace the receiver's NACKs (PacedNackGenerator)."""
    aiortc.rtcrtpreceiver.NackGenerator = PacedNackGenerator


def log_estimates(log):
    """Append to LOG each bitrate estimate (REMB) the receiver's
    delay-based estimator returns, with what it was based on: (wall
    time, estimate in bit/s, the overuse detector's state, its adaptive
    threshold and the delay-gradient offset it compared, in ms, the
    incoming bit rate).  The rate a call reaches is whatever the REMB
    lets the encoder spend; this says whether the estimate was held
    back by detected overuse (delay variation) or by the 1.5 times the
    incoming rate that it may not exceed (an encoder that does not fill
    its target)."""
    rbe = aiortc.rate.RemoteBitrateEstimator
    add = rbe.add

    def logged(self, arrival_time_ms, abs_send_time, payload_size, ssrc):
        remb = add(self, arrival_time_ms, abs_send_time, payload_size, ssrc)
        if remb is not None:
            log.append((round(time.time(), 3), remb[0],
                        self.detector.state().name.lower(),
                        round(self.detector.threshold, 2),
                        round(self.estimator.offset(), 2),
                        self.incoming_bitrate.rate(arrival_time_ms)))
        return remb

    rbe.add = logged


def video_sender(pc):
    """PC's sender of the video track, or None."""
    for sender in pc.getSenders():
        if sender.track is not None and sender.track.kind == "video":
            return sender
    return None


def encoder_target(pc):
    """The video encoder's target bit rate (aiortc clamps the REMB to
    250-1500 kbit/s), or None before it exists."""
    enc = getattr(video_sender(pc), "_RTCRtpSender__encoder", None)
    return getattr(enc, "target_bitrate", None)


def retransmit_rate(pc, rates):
    """The bit rate of PC's video retransmissions (RTX) in the last
    second, by RATES (a SendRate)."""
    pt = getattr(video_sender(pc), "_RTCRtpSender__rtx_payload_type", None)
    return rates.rate(pt) if pt is not None else 0


def keyframe_wanted(pc):
    """Whether the receiver asked for a keyframe (PLI) since the last
    call; aiortc keeps that for its encoder, which a track of encoded
    frames does not use."""
    sender = video_sender(pc)
    wanted = getattr(sender, "_RTCRtpSender__force_keyframe", False)
    if wanted:
        sender._RTCRtpSender__force_keyframe = False
    return wanted


def only_address(addr):
    """Make ICE gather a host candidate for ADDR only."""
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [addr]


class SendRate:
    """The bit rate of the RTP packets of one payload type sent in the
    last WINDOW_S seconds."""

    WINDOW_S = 1.0

    def __init__(self):
        self.sent = collections.deque()  # (monotonic time, payload type, bytes)

    def add(self, pt, size):
        self.sent.append((time.monotonic(), pt, size))

    def rate(self, pt):
        start = time.monotonic() - self.WINDOW_S
        while self.sent and self.sent[0][0] < start:
            self.sent.popleft()
        return sum(n for _, p, n in self.sent if p == pt) * 8 / self.WINDOW_S


def log_rtp_sends(log, rates):
    """Append (send time, payload type, sequence number, SSRC) of every RTP
    packet sent to LOG, just before SRTP protects it: the one-way delay of
    a packet is its arrival in the receiver's capture minus this time (a
    capture here would see it after the lab's netem delay on this host's
    egress).  RATES (a SendRate) gets each packet's size."""
    transport = aiortc.rtcdtlstransport.RTCDtlsTransport
    send = transport._send_rtp

    async def logged(self, data):
        if len(data) >= 12 and data[0] >> 6 == 2 and \
                not 200 <= data[1] <= 204:
            log.append((round(time.time(), 6), data[1] & 0x7F,
                        int.from_bytes(data[2:4], "big"),
                        int.from_bytes(data[8:12], "big")))
            rates.add(data[1] & 0x7F, len(data))
        return await send(self, data)

    transport._send_rtp = logged


class Pacer:
    """The clock of a track whose item N is due N periods after its
    first (the item is late, not skipped, when the loop falls behind)."""

    def __init__(self, period):
        self.period = period
        self.n = 0
        self.start = None

    async def next(self):
        """Wait until the next item is due; its index."""
        if self.start is None:
            self.start = time.monotonic()
        delay = self.start + self.n * self.period - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        self.n += 1
        return self.n - 1


class PatternVideo(VideoStreamTrack):
    """A random texture scrolling by a few pixels per frame; with noise,
    every frame's bytes also XORed with a random byte of its own, which
    no motion vector predicts: the encoder then needs all the bits its
    rate control allows, and the video rate is the congestion control's
    target rather than what a scroll costs.  With grain, the four low bits
    of every byte also change from frame to frame (at random): a detail
    that the rungs of ladder.py spend more bits on the higher they are,
    up to 1500 kbit/s, where the scroll alone stops at about 1240."""

    def __init__(self, width, height, fps, noise=False, grain=False):
        super().__init__()
        rng = numpy.random.default_rng(1)
        self.rng = rng if noise else None
        self.grain = numpy.random.default_rng(2) if grain else None
        self.tex = rng.integers(0, 256, (height, width * 2, 3),
                                dtype=numpy.uint8)
        self.width = width
        self.fps = fps
        self.pacer = Pacer(1 / fps)

    async def recv(self):
        return self.image(await self.pacer.next())

    def image(self, n):
        """Frame N of the picture (with noise, call it for 0, 1, 2...
        in turn: each frame draws its byte from one generator)."""
        x = (n * 4) % self.width
        img = self.tex[:, x:x + self.width].copy()  # C-contiguous
        if self.rng is not None:
            img ^= numpy.uint8(self.rng.integers(1, 256))
        if self.grain:
            img ^= self.grain.integers(0, 16, img.shape, dtype=numpy.uint8)
        frame = av.VideoFrame.from_ndarray(img, format="rgb24")
        frame.pts = n * (90000 // self.fps)
        frame.time_base = fractions.Fraction(1, 90000)
        return frame


class LadderVideo(MediaStreamTrack):
    """The picture of PatternVideo, encoded ahead of the call at several
    bit rates (ladder.py; the guest under TCG cannot encode in real
    time).  For each frame the track takes the rung with the highest
    rate at most the encoder's target (TARGET(): what the receiver's
    REMB sets; aiortc's start rate before there is one), as aiortc's
    encoder would change its rate from one frame to the next, and hands
    aiortc the encoded frame (an av.Packet), which it packetizes and
    sends as it does a MediaPlayer's that it does not decode.  The
    first frame is a keyframe, and so is the next frame after the
    receiver asked for one (KEYFRAME_WANTED(), a PLI); the others are
    inter frames, the rung's sequence looped.  As libwebrtc's sender
    does (it reports its NACK rate as protection overhead, which the
    encoder's target leaves room for), the target is what the estimate
    allows less what retransmissions took in the last second
    (RESENT(), bit/s); aiortc's encoder is given the estimate and its
    retransmissions come on top.  SWITCHES gets (wall time, target in
    bit/s, the rung's measured kbit/s) at each change of rung,
    KEYFRAMES the wall time of each keyframe."""

    kind = "video"

    def __init__(self, path, target, keyframe_wanted, resent=lambda: 0):
        super().__init__()
        with open(path, "rb") as f:
            ladder = pickle.load(f)
        self.fps = ladder["fps"]
        self.rungs = ladder["rungs"]
        self.target = target
        self.keyframe_wanted = keyframe_wanted
        self.resent = resent
        self.rung = None
        self.switches = []
        self.keyframes = []
        self.pacer = Pacer(1 / self.fps)

    def choose(self):
        target = self.target() or aiortc.codecs.vpx.DEFAULT_BITRATE
        target -= self.resent()
        fits = [r for r in self.rungs if r["measured_kbps"] * 1000 <= target]
        rung = fits[-1] if fits else self.rungs[0]
        if rung is not self.rung:
            self.switches.append((round(time.time(), 3), target,
                                  rung["measured_kbps"]))
            self.rung = rung

    def frame(self, n):
        """The encoded frame N: a keyframe first and when one is wanted."""
        self.choose()
        if self.keyframe_wanted() or n == 0:
            self.keyframes.append(round(time.time(), 3))
            return self.rung["key"]
        frames = self.rung["frames"]
        return frames[(n - 1) % len(frames)]

    async def recv(self):
        n = await self.pacer.next()
        packet = av.Packet(self.frame(n))
        packet.pts = n * (90000 // self.fps)
        packet.time_base = fractions.Fraction(1, 90000)
        return packet


class ToneAudio(MediaStreamTrack):
    """A 440 Hz tone, 20 ms frames at 48 kHz: Opus has something to code
    (aiortc's own AudioStreamTrack sends silence, a few bytes a packet)."""

    kind = "audio"

    def __init__(self):
        super().__init__()
        t = numpy.arange(960) / 48000
        self.pcm = (numpy.sin(2 * numpy.pi * 440 * t) * 8000).astype(
            numpy.int16).reshape(1, -1)
        self.pacer = Pacer(0.02)

    async def recv(self):
        n = await self.pacer.next()
        frame = av.AudioFrame.from_ndarray(self.pcm, format="s16",
                                           layout="mono")
        frame.sample_rate = 48000
        frame.pts = n * 960
        frame.time_base = fractions.Fraction(1, 48000)
        return frame


async def read_line(reader):
    line = await reader.readline()
    if not line:
        raise ConnectionError("signalling connection closed")
    return json.loads(line)


async def write_line(writer, obj):
    writer.write((json.dumps(obj) + "\n").encode())
    await writer.drain()


def desc_json(desc):
    return {"sdp": desc.sdp, "type": desc.type}


async def stats_of(pc):
    """{kind: {stats type: {field: value}}} of pc's RTP streams."""
    out = {}
    fields = ("packetsReceived", "packetsLost", "jitter", "packetsSent",
              "bytesSent", "roundTripTime", "fractionLost")
    report = await pc.getStats()
    for s in report.values():
        kind = getattr(s, "kind", None)
        if kind is None or not s.type.endswith("rtp"):
            continue
        d = out.setdefault(kind, {}).setdefault(s.type, {})
        for f in fields:
            v = getattr(s, f, None)
            if v is not None:
                d[f] = v
    return out


class Counter:
    """Frames decoded from one remote track."""

    def __init__(self):
        self.frames = 0

    async def consume(self, track):
        while True:
            try:
                await track.recv()
            except Exception:  # the track ended: MediaStreamError
                return
            self.frames += 1


async def sample_loop(pc, seconds, counters, out, target=False):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        await asyncio.sleep(1)
        s = {"t": round(time.monotonic() - t0, 3),
             "wall": time.time(), "state": pc.connectionState,
             "ice": pc.iceConnectionState, "rtp": await stats_of(pc)}
        if target:
            s["target_bps"] = encoder_target(pc)
        for kind, c in counters.items():
            s[kind + "_frames"] = c.frames
        out.append(s)


async def run_recv(args):
    only_address(args.bind)
    estimates = []
    log_estimates(estimates)
    pc = RTCPeerConnection()
    counters = {}
    tasks = []

    @pc.on("track")
    def on_track(track):
        c = counters.setdefault(track.kind, Counter())
        tasks.append(asyncio.ensure_future(c.consume(track)))

    done = asyncio.get_running_loop().create_future()

    async def serve(reader, writer):
        offer = await read_line(reader)
        await pc.setRemoteDescription(RTCSessionDescription(**offer))
        await pc.setLocalDescription(await pc.createAnswer())
        await write_line(writer, desc_json(pc.localDescription))
        if not done.done():
            done.set_result(writer)

    server = await asyncio.start_server(serve, args.bind, args.port)
    print("listening", flush=True)
    writer = await asyncio.wait_for(done, timeout=120)
    server.close()
    if args.ready:
        open(args.ready, "w").close()
    samples = []
    await sample_loop(pc, args.seconds, counters, samples)
    writer.close()
    await pc.close()
    for t in tasks:
        t.cancel()
    return {"role": "recv", "samples": samples, "remb": estimates}


async def run_send(args):
    only_address(args.bind)
    sent = []
    rates = SendRate()
    log_rtp_sends(sent, rates)
    pc = RTCPeerConnection()
    if args.video == "ladder":
        video = LadderVideo(args.ladder, lambda: encoder_target(pc),
                            lambda: keyframe_wanted(pc),
                            lambda: retransmit_rate(pc, rates))
    else:
        video = PatternVideo(args.width, args.height, args.fps,
                             noise=args.video == "noise")
    pc.addTrack(video)
    pc.addTrack(ToneAudio())
    await pc.setLocalDescription(await pc.createOffer())
    offer_sdp = pc.localDescription.sdp
    for i in range(60):
        try:
            reader, writer = await asyncio.open_connection(
                args.peer, args.port, local_addr=(args.bind, 0))
            break
        except OSError:
            await asyncio.sleep(0.5)
    else:
        raise ConnectionError("no receiver at %s:%d" % (args.peer, args.port))
    await write_line(writer, desc_json(pc.localDescription))
    answer = await read_line(reader)
    await pc.setRemoteDescription(RTCSessionDescription(**answer))
    samples = []
    await sample_loop(pc, args.seconds, {}, samples, target=True)
    writer.close()
    await pc.close()
    return {"role": "send", "samples": samples,
            "sdp": offer_sdp, "rtp_sent": sent,
            "ladder": getattr(video, "switches", None),
            "keyframes": getattr(video, "keyframes", None)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("role", choices=("send", "recv"))
    ap.add_argument("--bind", required=True)
    ap.add_argument("--peer")
    ap.add_argument("--port", type=int, default=7900)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ready", help="recv: create this file once the "
                    "answer is sent (the call starts)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--fps", type=int, default=15)
    ap.add_argument("--video", choices=("pattern", "noise", "ladder"),
                    default="pattern", help="send: a scrolling texture, "
                    "or one that also changes every frame (PatternVideo), "
                    "encoded live; or the texture encoded ahead of the "
                    "call at several rates (LadderVideo, --ladder)")
    ap.add_argument("--ladder", help="send --video ladder: ladder.py's "
                    "output")
    ap.add_argument("--stock-estimator", action="store_true",
                    help="recv: aiortc's bitrate estimator as shipped, "
                    "without fix_interarrival_reorder()")
    ap.add_argument("--loop-arrival", action="store_true",
                    help="recv: time each packet for the estimator when "
                    "the event loop gets to it, as aiortc does, not when "
                    "the kernel received it (fix_arrival_time())")
    args = ap.parse_args()
    if args.role == "send" and not args.peer:
        ap.error("send needs --peer")
    if args.video == "ladder" and not args.ladder:
        ap.error("--video ladder needs --ladder")
    socket.setdefaulttimeout(None)
    fix_bundle_extension_ids()
    fix_jitter_origin()
    fix_nack_repeats()
    if not args.stock_estimator:
        fix_interarrival_reorder()
    arrival = ArrivalTimes()
    if args.role == "recv" and not args.loop_arrival:
        fix_arrival_time(arrival)
    run = run_send if args.role == "send" else run_recv
    result = asyncio.run(run(args))
    result["args"] = vars(args)
    if args.role == "recv":
        result["arrival"] = arrival.summary()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
