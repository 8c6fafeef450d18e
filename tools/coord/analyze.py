#!/usr/bin/python3
"""Figures of the coordination runs of tools/coord/run.sh.

    analyze.py OUT [OUT...] [--plot] [--rst]

A run is a directory OUT/MODE, or OUT/rK/MODE (run.sh --reps); each OUT
may hold one run of each mode or several.  For each run and each phase (all, coord, alone: from
the download's last message on), after its first SETTLE_S seconds (a third of a shorter phase: the queues
of the phase before drain then):
the stream's one-way message delay (median, 95th and 99th percentile,
jitter: the mean change between consecutive messages, in ms), the share
of its messages lost (numbered between the first and last received in
the phase, never received), and both
applications' goodput (Mbit/s of their messages that arrived in the
phase), and the Mbit/s b sent on each link over the whole phase.  With
more than one run of a mode, a cell is the median over its runs with the
smallest and largest value beside it, "median (min-max)".  Writes
summary.json into the first OUT (every run's figures, and per mode and
phase the median, minimum and maximum) and prints a table; --rst prints
it as the table Documentation/performance.rst quotes; --plot writes
coord.png there: the stream's delay over time and both applications'
goodput per second in the first run of each mode, the phases marked.
"""
import glob
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import stream  # noqa: E402

PHASES = ("all", "coord", "alone")
SETTLE_S = 5
MODES = ("off", "mpip")


def phase_figures(run, rows, bulk):
    """One dict per phase of a run."""
    t = list(run["t_ns"])
    size = run.get("stream_size", 1000)
    bsize = run.get("bulk_size", 8000)
    # the stream is alone once the download's last message arrived
    if bulk:
        t[2] = max(t[2], min(t[3], max(sent + d * 1000 for _s, sent, d in bulk)))
    out = {}
    for i, name in enumerate(PHASES):
        t0, t1 = t[i], t[i + 1]
        t0 += int(min(SETTLE_S, (t1 - t0) / 3e9) * 1e9)
        s = stream.summarize(rows, t0, t1)
        n = s["received"] + s.get("lost", 0)
        s["lost_pct"] = 100.0 * s.get("lost", 0) / n if n else None
        s["stream_mbps"] = stream.goodput_mbps(rows, size, t0, t1)
        s["bulk_mbps"] = stream.goodput_mbps(bulk, bsize, t0, t1)
        # b's link counters: over the whole phase
        tx0, tx1 = run["b_tx_bytes"][i], run["b_tx_bytes"][i + 1]
        whole = (run["t_ns"][i + 1] - run["t_ns"][i]) / 1e9
        s["link1_mbps"] = (tx1[0] - tx0[0]) * 8 / whole / 1e6 if whole > 0 else 0.0
        s["link2_mbps"] = (tx1[1] - tx0[1]) * 8 / whole / 1e6 if whole > 0 else 0.0
        s["seconds"] = round((t1 - t0) / 1e9, 2)
        out[name] = s
    return out


def load_run(d, mode):
    """(run, rows, bulk, figures) of the run in directory D."""
    with open(os.path.join(d, "run.json")) as f:
        run = json.load(f)
    if run.get("mode", mode) != mode:
        raise ValueError("%s: run.json says mode %s" % (d, run["mode"]))
    rows = stream.read_file(os.path.join(d, "stream.txt"))[2]
    bulk = stream.read_file(os.path.join(d, "bulk.txt"))[2]
    return run, rows, bulk, phase_figures(run, rows, bulk)


def run_dirs(out):
    """OUT itself and its rK subdirectories (run.sh --reps), in order."""
    reps = glob.glob(os.path.join(out, "r[0-9]*"))
    reps.sort(key=lambda p: int(os.path.basename(p)[1:])
              if os.path.basename(p)[1:].isdigit() else 0)
    return [out] + [r for r in reps if os.path.basename(r)[1:].isdigit()]


def load(outs):
    """{mode: [(run, rows, bulk, figures), ...]} of the runs under OUTS."""
    res = {}
    for out in outs:
        for d in run_dirs(out):
            for mode in MODES:
                md = os.path.join(d, mode)
                if os.path.exists(os.path.join(md, "run.json")):
                    res.setdefault(mode, []).append(load_run(md, mode))
    return {m: res[m] for m in MODES if m in res}


def spread(xs):
    """median, min and max of the numbers in XS, or None."""
    xs = [x for x in xs if isinstance(x, (int, float))]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "runs": len(xs)}


def aggregate(res):
    """{mode: {phase: {figure: spread}}} over each mode's runs."""
    agg = {}
    for mode, runs in res.items():
        agg[mode] = {}
        for ph in PHASES:
            keys = sorted({k for r in runs for k in r[3][ph]})
            agg[mode][ph] = {k: spread([r[3][ph].get(k) for r in runs])
                             for k in keys}
    return agg


COLS = (("delay_median_ms", "delay median (ms)", "%.1f"),
        ("delay_p95_ms", "delay p95 (ms)", "%.1f"),
        ("jitter_ms", "jitter (ms)", "%.2f"),
        ("lost_pct", "stream lost (%)", "%.1f"),
        ("stream_mbps", "stream (Mbit/s)", "%.2f"),
        ("bulk_mbps", "download (Mbit/s)", "%.2f"),
        ("link1_mbps", "b on link 1", "%.2f"),
        ("link2_mbps", "b on link 2", "%.2f"))


def cell(v, fmt):
    if v is None:
        return "-"
    if v["min"] == v["max"]:
        return fmt % v["median"]
    return (fmt + " (" + fmt + "-" + fmt + ")") % (v["median"], v["min"], v["max"])


def table_rows(res):
    agg = aggregate(res)
    rows = []
    for mode, runs in res.items():
        name = mode if len(runs) == 1 else "%s (%d runs)" % (mode, len(runs))
        for ph in PHASES:
            cells = [name, ph]
            for key, _title, fmt in COLS:
                cells.append(cell(agg[mode][ph].get(key), fmt))
            rows.append(cells)
    return rows


def print_text(res):
    head = ["mode", "phase"] + [c[1] for c in COLS]
    rows = table_rows(res)
    width = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, width)))


def print_rst(res):
    head = ["mode", "phase"] + [c[1] for c in COLS]
    print(".. list-table::\n   :header-rows: 1\n")
    for r in [head] + table_rows(res):
        print("   * - " + r[0])
        for c in r[1:]:
            print("     - " + c)
    print()


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    colors = {"off": "tab:gray", "mpip": "tab:blue"}
    for mode, runs in res.items():
        run, rows, bulk, _f = runs[0]
        t0 = run["t_ns"][0]
        pts = sorted((sent, d) for _s, sent, d in rows)
        ax[0].plot([(s - t0) / 1e9 for s, _d in pts], [d / 1000 for _s, d in pts],
                   ".", ms=2, color=colors[mode], label="%s: stream delay" % mode)
        for data, size, style, what in ((bulk, run.get("bulk_size", 8000), "-", "download"),
                                        (rows, run.get("stream_size", 1000), "--", "stream")):
            per_s = {}
            for _seq, sent, d in data:
                k = int((sent + d * 1000 - t0) // 10**9)
                per_s[k] = per_s.get(k, 0) + size * 8 / 1e6
            ks = sorted(per_s)
            ax[1].plot([k + 0.5 for k in ks], [per_s[k] for k in ks], style,
                       color=colors[mode], label="%s: %s" % (mode, what))
    run = next(iter(res.values()))[0][0]
    for a in ax:
        for i, name in enumerate(PHASES):
            x = (run["t_ns"][i] - run["t_ns"][0]) / 1e9
            a.axvline(x, color="k", lw=0.5)
            a.text(x + 0.5, 0.98, name, transform=a.get_xaxis_transform(),
                   va="top", fontsize=8)
    ax[0].set_ylabel("one-way delay (ms)")
    ax[0].set_yscale("log")
    ax[1].set_ylabel("goodput (Mbit/s)")
    ax[1].set_xlabel("time (s)")
    for a in ax:
        a.legend(fontsize=7, loc="upper right")
    fig.suptitle("A %s stream and a download on links of %s (5 ms, 25 ms): all "
                 "paths, then coordinated rules" % (run.get("stream_proto", "tcp").upper(),
                                                    run["rate"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv):
    outs = [a for a in argv if not a.startswith("-")]
    if not outs or any(a not in ("--plot", "--rst") for a in argv if a.startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    res = load(outs)
    if not res:
        print("coord: no run in %s" % " ".join(outs), file=sys.stderr)
        return 1
    summary = {m: {"runs": [{"run": r, "phases": f} for r, _x, _b, f in runs],
                   "spread": aggregate(res)[m]}
               for m, runs in res.items()}
    with open(os.path.join(outs[0], "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    if "--rst" in argv:
        print_rst(res)
    else:
        print_text(res)
    if "--plot" in argv:
        plot(res, os.path.join(outs[0], "coord.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
