#!/usr/bin/python3
"""Figures of the WebRTC runs of tools/webrtc/run.sh.

    analyze.py OUT [--plot] [--rst]

For each run directory OUT/SCENARIO-MODE: per second of the call, the
video frames the receiver decoded and the video bit rate the sender's
encoder sent; the one-way delay of every RTP packet (its arrival in the
receiver's capture minus its send time in the sender's log, one clock:
both run in the lab VM), per kind.  Writes OUT/summary.json (one object
per run, and per scenario and mode each figure's median, minimum and
maximum over the runs) and prints the latter; --plot also writes OUT/webrtc.png, --rst prints
the tables Documentation/performance.rst quotes.

Figures: fps_median and video_kbps_median over the call after its first
5 s (or, with a failure, from 5 s after it to the end), and
video_kbps_mean over the same seconds (the sender's encoder takes the
rates of a ladder whose rungs are 17-21 % apart, so a run's median sits
on a rung, where the mean also tells how long it held each); freeze_s, the
longest stretch after the failure in which the receiver decoded no video
frame (whole sample seconds), and below_half_fps_s, the seconds after it
with under half the frame rate before it; audio/video delay medians and 95th
percentiles in ms; the share of audio packets that arrived at all;
video_reordered, the share of video packets that arrived behind a later
one, and video_resent, the retransmissions (RTX) the sender sent per
video packet; video_slow_share, the share of video packets whose one-way
delay was more than 15 ms over the run's lowest (in the delay scenario:
those that took the 80 ms path); video_late_per_min, the video packets
sent after the first 5 s whose delay was more than 25 ms over the run's
lowest, per minute (late_per_min()); weight_slow_share, from the path
table a's run.sh traced (paths.jsonl), the median share of a's path
weights held by paths whose minimum delay is more than 15 ms over the
lowest (in the delay scenario: the 80 ms path), after the first 5 s;
remb_* (estimates()), the receiver's bitrate estimates; kernel_timed_share
and loop_lag_ms_p95 (arrival_timing()), how the receiver timed packets
for its estimator.
"""
import json
import os
import statistics
import struct
import sys

LINKTYPE_SLL = 113
LINKTYPE_SLL2 = 276


def pcap_udp(path):
    """(time, UDP payload head) of each IPv4 UDP packet in a pcap."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    skip = {LINKTYPE_SLL: 16, LINKTYPE_SLL2: 20}.get(linktype)
    if skip is None:
        raise ValueError("%s: link type %d" % (path, linktype))
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(endian + "IIII",
                                           data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ip = pkt[skip:]
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 15) * 4
        yield sec + frac / (1e9 if nano else 1e6), ip[ihl + 8:]


def pt_kinds(sdp):
    """{payload type: kind} from the offer's m-lines."""
    kinds, kind = {}, None
    for line in sdp.splitlines():
        if line.startswith("m="):
            kind = line[2:].split()[0]
            for pt in line.split()[3:]:
                kinds[int(pt)] = kind
    return kinds


def resent(send):
    """Retransmissions (RTX packets) per video packet the sender sent."""
    kinds = pt_kinds(send["sdp"])
    rtx = {int(line.split(":")[1].split()[0])
           for line in send["sdp"].splitlines()
           if line.startswith("a=rtpmap:") and " rtx/" in line}
    n = {True: 0, False: 0}
    for _, pt, _, _ in send["rtp_sent"]:
        if kinds.get(pt) == "video":
            n[pt in rtx] += 1
    return n[True] / n[False] if n[False] else None


def arrivals(pcap):
    """{(ssrc, seq): first arrival time} of the RTP packets captured."""
    seen = {}
    for t, p in pcap_udp(pcap):
        if len(p) < 12 or p[0] >> 6 != 2 or 200 <= p[1] <= 204:
            continue
        key = (int.from_bytes(p[8:12], "big"),
               int.from_bytes(p[2:4], "big"))
        seen.setdefault(key, t)
    return seen


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def delays(send, got):
    """{kind: [(send time, one-way delay ms)]} and {kind: share of
    packets arrived}, from the sender's log and GOT (arrivals())."""
    kinds = pt_kinds(send["sdp"])
    out, sent = {}, {}
    for t, pt, seq, ssrc in send["rtp_sent"]:
        kind = kinds.get(pt, "other")
        sent[kind] = sent.get(kind, 0) + 1
        a = got.get((ssrc, seq))
        if a is not None:
            out.setdefault(kind, []).append((t, (a - t) * 1000))
    share = {k: len(out.get(k, [])) / n for k, n in sent.items()}
    return out, share


def late_per_min(timed, since, over_ms=25):
    """Of TIMED [(send time, one-way delay ms)], the packets sent from
    SINCE on whose delay was over the lowest of all by more than OVER_MS,
    per minute of those sends: in the delay scenario, whose paths differ
    by 30 ms, the packets that took the longer path (jitter reaches 12-25
    ms over the lowest on this host, rarely more)."""
    if not timed:
        return None
    low = min(d for _, d in timed)
    after = [(t, d) for t, d in timed if t >= since]
    if len(after) < 2 or after[-1][0] <= after[0][0]:
        return None
    minutes = (after[-1][0] - after[0][0]) / 60
    return round(sum(d > low + over_ms for _, d in after) / minutes, 2)


def slow_share(xs, over_ms=15):
    """Share of the one-way delays XS (ms) over their minimum plus
    OVER_MS: in the delay scenario, whose paths' fixed delays differ by
    30 ms, the packets that took the longer path."""
    if not xs:
        return None
    low = min(xs)
    return round(sum(x > low + over_ms for x in xs) / len(xs), 4)


def weight_slow_share(rows, since, over_us=15000):
    """From a's path table samples ROWS (run.sh's paths.jsonl, parsed),
    those taken at SINCE or later with two paths up or more: the median
    share of the weights held by paths whose minimum one-way delay is
    more than OVER_US over the lowest one's (in the delay scenario, the
    80 ms path).  None without such samples (no mpip)."""
    shares = []
    for row in rows:
        up = [p for p in row.get("paths") or []
              if p.get("state") == "up" and p.get("have_delay")]
        if row.get("t", 0) < since or len(up) < 2:
            continue
        low = min(p["min_delay_us"] for p in up)
        total = sum(p["weight"] for p in up)
        slow = sum(p["weight"] for p in up
                   if p["min_delay_us"] > low + over_us)
        shares.append(slow / total)
    return round(statistics.median(shares), 4) if shares else None


def path_rows(path):
    """The samples of a run's paths.jsonl, [] if it has none."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def behind_later(packets):
    """For (SSRC, sequence number) pairs in arrival order: whether each
    arrived behind one with a higher sequence number of its stream."""
    top = {}
    for ssrc, seq in packets:
        hi = top.get(ssrc)
        late = hi is not None and (seq - hi) & 0xFFFF > 0x8000
        if not late:
            top[ssrc] = seq
        yield late


def reordered(send, got):
    """{kind: share of its RTP packets that arrived behind a later one
    of their stream}: the reordering the receiver's jitter buffer and
    bitrate estimator see; GOT as arrivals() gives it."""
    kinds = pt_kinds(send["sdp"])
    kind_of = {ssrc: kinds.get(pt, "other")
               for _, pt, _, ssrc in send["rtp_sent"]}
    order = [key for key, _ in sorted(got.items(),
                                      key=lambda kv: kv[1])
             if key[0] in kind_of]
    late, count = {}, {}
    for (ssrc, _), behind in zip(order, behind_later(order)):
        kind = kind_of[ssrc]
        count[kind] = count.get(kind, 0) + 1
        late[kind] = late.get(kind, 0) + behind
    return {k: late[k] / n for k, n in count.items()}


def series(samples, getter):
    """[(wall time, per-second increase of getter(sample))]."""
    out, prev = [], None
    for s in samples:
        v = getter(s)
        if v is None:
            continue
        if prev is not None and s["wall"] > prev[0]:
            out.append((s["wall"], (v - prev[1]) / (s["wall"] - prev[0])))
        prev = (s["wall"], v)
    return out


def video_bytes(s):
    return s["rtp"].get("video", {}).get("outbound-rtp", {}).get("bytesSent")


def analyze(d):
    with open(os.path.join(d, "run.json")) as f:
        run = json.load(f)
    with open(os.path.join(d, "send.json")) as f:
        send = json.load(f)
    with open(os.path.join(d, "recv.json")) as f:
        recv = json.load(f)
    fps = series(recv["samples"], lambda s: s.get("video_frames"))
    kbps = [(t, v * 8 / 1000) for t, v in series(send["samples"],
                                                 video_bytes)]
    t_start = recv["samples"][0]["wall"] if recv["samples"] else 0
    t_end = recv["samples"][-1]["wall"] if recv["samples"] else 0
    fail = run.get("fail")
    since = fail + 5 if fail else t_start + 5
    # the sender runs on for a few seconds after the receiver's last sample
    kbps = [(t, v) for t, v in kbps if t <= t_end]
    res = {"run": os.path.basename(d),
           "fps_median": statistics.median(
               [v for t, v in fps if t >= since] or [0]),
           "video_kbps_median": statistics.median(
               [v for t, v in kbps if t >= since] or [0]),
           "video_kbps_mean": round(statistics.mean(
               [v for t, v in kbps if t >= since] or [0]), 1)}
    if fail:
        before = statistics.median([v for t, v in fps if t < fail] or [0])
        worst = cur = low = 0
        for t, v in fps:
            if t < fail:
                continue
            cur = cur + 1 if v < 0.5 else 0
            worst = max(worst, cur)
            low += v < before / 2
        res["freeze_s"] = worst
        res["below_half_fps_s"] = low
    got = arrivals(os.path.join(d, "b.pcap"))
    timed, share = delays(send, got)
    owd = {k: [ms for _, ms in v] for k, v in timed.items()}
    late = reordered(send, got)
    for kind in ("audio", "video"):
        xs = owd.get(kind, [])
        res[kind + "_delay_ms_median"] = round(pct(xs, 0.5), 2) if xs else None
        res[kind + "_delay_ms_p95"] = round(pct(xs, 0.95), 2) if xs else None
        res[kind + "_arrived"] = round(share.get(kind, 0), 4)
        res[kind + "_reordered"] = round(late.get(kind, 0), 4)
    res["video_resent"] = resent(send)
    res["video_slow_share"] = slow_share(owd.get("video", []))
    res["video_late_per_min"] = late_per_min(timed.get("video"), since)
    res["weight_slow_share"] = weight_slow_share(
        path_rows(os.path.join(d, "paths.jsonl")), since)
    res.update(estimates(recv.get("remb"), since))
    res.update(arrival_timing(recv.get("arrival")))
    res["_fps"] = [(round(t - t_start, 2), v) for t, v in fps]
    res["_kbps"] = [(round(t - t_start, 2), v) for t, v in kbps]
    res["_fail_at"] = round(fail - t_start, 2) if fail else None
    res["_audio_owd"] = sorted(owd.get("audio", []))
    return res


def estimates(remb, since):
    """From the receiver's bitrate estimates (call.py log_estimates),
    after SINCE: their median in kbit/s, the shares sent while the
    detector saw overuse and underuse (in which aiortc's rate control
    holds the estimate where it is), and the share at the ceiling of 1.5 times the
    incoming rate plus 10 kbit/s that aiortc's rate control puts on an
    increase (within 1 %): at that ceiling the encoder, not the
    network, holds the rate back."""
    xs = [e for e in remb or [] if e[0] >= since]
    if not xs:
        return {}
    capped = [e for e in xs if e[5] and
              e[1] >= 0.99 * (1.5 * e[5] + 10000)]
    return {"remb_kbps_median": statistics.median(e[1] for e in xs) / 1000,
            "remb_overuse_share": round(
                sum(e[2] == "overusing" for e in xs) / len(xs), 3),
            "remb_underuse_share": round(
                sum(e[2] == "underusing" for e in xs) / len(xs), 3),
            "remb_capped_share": round(len(capped) / len(xs), 3)}


def arrival_timing(arrival):
    """From the receiver's count of how it timed SRTP packets (call.py
    fix_arrival_time): the share timed by the kernel's receive time, and
    the 95th percentile of how much later (ms) its event loop got to
    them.  None of it for a run without that count."""
    if not arrival:
        return {}
    n = arrival["kernel"] + arrival["loop"]
    return {"kernel_timed_share": round(arrival["kernel"] / n, 4) if n else 0,
            "loop_lag_ms_p95": arrival["loop_lag_ms_p95"]}


def group(name):
    """fail-mpip-2 -> fail-mpip"""
    head, _, rep = name.rpartition("-")
    return head if rep.isdigit() else name


def aggregate(summary):
    """Per scenario and mode: each figure's median over the runs, and its
    minimum and maximum."""
    groups = {}
    for r in summary:
        groups.setdefault(group(r["run"]), []).append(r)
    out = []
    for name, runs in sorted(groups.items()):
        agg = {"runs": len(runs), "name": name}
        for k in runs[0]:
            xs = [r[k] for r in runs if isinstance(r.get(k), (int, float))]
            if k == "run" or not xs:
                continue
            agg[k] = {"median": round(statistics.median(xs), 3),
                      "min": round(min(xs), 3), "max": round(max(xs), 3)}
        out.append(agg)
    return out


TABLES = {
    "fail": ["fps_median", "freeze_s", "below_half_fps_s",
             "video_kbps_median", "audio_arrived", "video_arrived"],
    "rate": ["video_kbps_median", "fps_median", "video_delay_ms_median",
             "video_delay_ms_p95", "video_reordered", "video_resent",
             "remb_kbps_median",
             "remb_overuse_share", "remb_underuse_share", "remb_capped_share",
             "loop_lag_ms_p95"],
    "delay": ["audio_delay_ms_median", "audio_delay_ms_p95",
              "video_kbps_median", "video_kbps_mean", "fps_median",
              "video_delay_ms_median", "video_slow_share",
              "video_late_per_min", "weight_slow_share", "video_resent",
              "remb_overuse_share", "loop_lag_ms_p95"],
}


def cell(v):
    if v is None:
        return "-"
    fmt = "%.0f" if abs(v["median"]) >= 100 else "%.1f" \
        if abs(v["median"]) >= 1 or v["median"] == 0 else "%.3f"
    if v["min"] == v["max"]:
        return fmt % v["median"]
    return (fmt + " (" + fmt + "-" + fmt + ")") % (
        v["median"], v["min"], v["max"])


def rst(agg):
    """The figures as RST tables, one per scenario: median (min-max)."""
    out = []
    for scen, figs in TABLES.items():
        modes = [a for a in agg if a["name"].startswith(scen + "-")]
        if not modes:
            continue
        head = ["figure"] + ["%s (%d runs)" % (a["name"], a["runs"])
                             for a in modes]
        rows = [[f] + [cell(a.get(f)) for a in modes] for f in figs]
        w = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        rule = "  ".join("=" * x for x in w)
        out += [rule, "  ".join(h.ljust(x) for h, x in zip(head, w)).rstrip(),
                rule]
        out += ["  ".join(c.ljust(x) for c, x in zip(r, w)).rstrip()
                for r in rows]
        out += [rule, ""]
    return "\n".join(out)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for r in results:
        name = r["run"]
        if group(name) != name and not name.endswith("-1"):
            continue    # the first run of each
        if name.startswith("fail-"):
            ax[0].plot(*zip(*r["_fps"]) if r["_fps"] else ([], []),
                       label=name)
            if r["_fail_at"] is not None:
                ax[0].axvline(r["_fail_at"], color="grey", ls=":")
        elif name.startswith("rate-"):
            ax[1].plot(*zip(*r["_kbps"]) if r["_kbps"] else ([], []),
                       label=name)
        elif name.startswith("delay-") and r["_audio_owd"]:
            xs = r["_audio_owd"]
            ax[2].plot(xs, [(i + 1) / len(xs) for i in range(len(xs))],
                       label=name)
    ax[0].set(title="(a) link 1 fails: video frames decoded",
              xlabel="s", ylabel="frames/s")
    ax[1].set(title="(b) two 1 Mbit/s links: video sent",
              xlabel="s", ylabel="kbit/s")
    ax[2].set(title="(c) 50/80 ms links: audio one-way delay",
              xlabel="ms", ylabel="CDF")
    for a in ax:
        if a.get_legend_handles_labels()[0]:
            a.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    results = []
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        if os.path.isfile(os.path.join(d, "run.json")):
            results.append(analyze(d))
    summary = [{k: v for k, v in r.items() if not k.startswith("_")}
               for r in results]
    agg = aggregate(summary)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"runs": summary, "by_mode": agg}, f, indent=1)
    json.dump(agg, sys.stdout, indent=1)
    print()
    if "--rst" in sys.argv:
        print(rst(agg))
    if "--plot" in sys.argv:
        plot(results, os.path.join(out, "webrtc.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
