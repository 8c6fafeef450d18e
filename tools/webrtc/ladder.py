#!/usr/bin/python3
"""Encode the WebRTC sender's video ahead of the call, at several bit
rates (a ladder), for call.py --video ladder.

    ladder.py OUT [--width W --height H --fps F --seconds S]
              [--rates KBPS,KBPS,...]

Under TCG the guest's two emulated CPUs need 35-42 ms to encode a VP8
frame of 320x240, so a call's video runs at 10-12 frames a second and
its rate is what the encoder manages, not what the congestion control
allows (performance.rst, "WebRTC calls", (b)).  This runs on the host,
with aiortc's own encoder and settings (VP8 in CBR, keyframes only when
asked for) and the picture of a live call (call.py's PatternVideo, with
a faint grain so that even the top rung spends its budget).  Each rung
is a keyframe and then --seconds of inter frames; the sender takes, at
every frame, the frame of the rung the congestion control allows, as
aiortc's encoder changes its rate between two frames.  The frames are
encoded error resilient (no entropy state carried from frame to frame),
so a frame taken after one of another rung decodes; its picture is
predicted from the other rung's, which these figures do not measure
(rates, delays, frames decoded).

OUT is a pickle: {"fps", "width", "height", "rungs": [{"kbps": target,
"measured_kbps": what the inter frames add up to, "key": the keyframe,
"frames": [the inter frames' VP8 bitstreams]}]}, rungs by measured rate,
lowest first.
"""
import argparse
import os
import pickle
import sys

from aiortc.codecs.vpx import Vp8Encoder, ffi, vp8_depayload

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call import PatternVideo  # noqa: E402

# aiortc's rate control gives the encoder targets of 250-1500 kbit/s
RATES = (250, 300, 360, 430, 520, 620, 750, 900, 1080, 1280, 1500)


def error_resilient(enc):
    """Set g_error_resilient in ENC's libvpx configuration, which aiortc's
    binding does not declare: the field between g_timebase and g_pass
    (vpx_encoder.h), checked against the binding's offsets."""
    cfg = "vpx_codec_enc_cfg_t"
    at = ffi.offsetof(cfg, "g_timebase") + ffi.sizeof("struct vpx_rational")
    if at + 8 != ffi.offsetof(cfg, "g_lag_in_frames"):
        raise RuntimeError("unexpected vpx_codec_enc_cfg_t layout")
    ffi.cast("unsigned int *", ffi.cast("char *", enc.cfg) + at)[0] = 1


def encode_rung(video, kbps, count):
    """A keyframe and COUNT inter frames of VIDEO at KBPS: their VP8
    bitstreams."""
    enc = Vp8Encoder()
    error_resilient(enc)
    enc.target_bitrate = kbps * 1000
    frames = []
    for n in range(count + 1):
        payloads, _ = enc.encode(video.image(n), force_keyframe=n == 0)
        frames.append(b"".join(vp8_depayload(p) for p in payloads))
    return frames[0], frames[1:]


def is_keyframe(frame):
    """VP8's frame tag: bit 0 of the first byte is 0 on a keyframe."""
    return len(frame) > 0 and frame[0] & 1 == 0


def build(args):
    count = args.fps * args.seconds
    rungs = []
    for kbps in args.rates:
        video = PatternVideo(args.width, args.height, args.fps, grain=True)
        key, frames = encode_rung(video, kbps, count)
        if not is_keyframe(key) or any(map(is_keyframe, frames)):
            raise RuntimeError("%d kbit/s: keyframes out of place" % kbps)
        measured = sum(map(len, frames)) * 8 * args.fps / count / 1000
        rungs.append({"kbps": kbps, "measured_kbps": round(measured, 1),
                      "key": key, "frames": frames})
        print("ladder: %4d kbit/s target, %6.1f measured" % (kbps, measured),
              file=sys.stderr)
    rungs.sort(key=lambda r: r["measured_kbps"])
    return {"fps": args.fps, "width": args.width, "height": args.height,
            "rungs": rungs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--fps", type=int, default=15)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rates", default=",".join(map(str, RATES)),
                    help="the rungs' targets, kbit/s")
    args = ap.parse_args()
    args.rates = [int(r) for r in args.rates.split(",")]
    ladder = build(args)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(ladder, f)
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
