#!/usr/bin/python3
"""Plots of lab runs (matplotlib; see tools/bench/lib.sh and analyze.py).

    plot.py bench RESULTS_DIR   one PNG per benchmark in RESULTS_DIR/results.jsonl,
                                RESULTS_DIR/NAME.png: one panel per mode (and
                                part of a mode's run); with scenarios, box
                                plots of the runs; scale: cost per flows
    plot.py demo DEMO_DIR       DEMO_DIR/demo.png, one panel per demo phase
    plot.py run RUNDIR OUT.png  one run

Each panel shows the rate each link delivered to the receiver (interface
counters sampled every 0.1 s, per 0.2 s), their sum, and the receiver's
goodput (iperf3 server intervals), against the time since data started to
flow; a link failure is shaded.
"""
import bisect
import json
import os
import sys

# (in the VM ~/.config is read-only: keep matplotlib's font cache with the
# results, so that it is built once)
if os.environ.get("MPIP_IN_VM") == "1" and "MPLCONFIGDIR" not in os.environ:
    os.environ["MPLCONFIGDIR"] = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                              "..", "..", "results", ".matplotlib")

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402

COLORS = {"link1": "#1f77b4", "link2": "#ff7f0e", "sum": "#555555", "goodput": "#2ca02c"}


BIN = 0.2      # s: link rates are plotted per 0.2 s


def binned_goodput(gp, step):
    """Goodput intervals [(t0, t1, Mbit/s)] re-cut into STEP s bins."""
    if not gp:
        return []
    # cumulative bits at the interval edges, interpolated linearly
    edges = [gp[0][0]]
    cum = [0.0]
    for s, e, v in gp:
        if s > edges[-1]:            # a gap: nothing received in it
            edges.append(s)
            cum.append(cum[-1])
        edges.append(e)
        cum.append(cum[-1] + v * (e - s))

    def at(t):
        i = bisect.bisect_right(edges, t)
        if i <= 0:
            return cum[0]
        if i >= len(edges):
            return cum[-1]
        a, b = edges[i - 1], edges[i]
        return cum[i - 1] + (cum[i] - cum[i - 1]) * (t - a) / (b - a) if b > a else cum[i]

    out = []
    t = edges[0]
    while t + step <= edges[-1] + 1e-9:
        out.append((t, t + step, (at(t + step) - at(t)) / step))
        t += step
    return out


def panel(ax, run_dir, title):
    r = analyze.Run(run_dir)
    m = r.metrics()
    if not r.sb or r.t0 is None:
        ax.set_title(title + " (no data)")
        ax.text(0.5, 0.5, m.get("error", "no data"), ha="center", transform=ax.transAxes)
        return
    t0 = r.t0
    lo = t0 - 0.5
    hi = t0 + r.duration + 1.0
    rates = {}
    for key, col in (("link1", analyze.DATA_COLS[0]), ("link2", analyze.DATA_COLS[1])):
        s = r.sb.binned(col, lo, min(hi, r.sb.t[-1]), BIN)
        rates[key] = ([(a + b) / 2 - t0 for a, b, _ in s], [v for _, _, v in s])
    cap = {"link1": r.cap1, "link2": r.cap2}
    for key, label in (("link1", "link 1 (eth1)"), ("link2", "link 2 (eth2)")):
        t, v = rates[key]
        if cap[key]:
            label += " %g Mbit/s" % cap[key]
        ax.plot(t, v, color=COLORS[key], lw=1.2, label=label)
    n = min(len(rates["link1"][1]), len(rates["link2"][1]))
    if n:
        ax.plot(rates["link1"][0][:n], [a + b for a, b in zip(rates["link1"][1][:n], rates["link2"][1][:n])],
                color=COLORS["sum"], lw=1.0, ls="--", label="link 1 + link 2")
    gp = binned_goodput(r.goodput_series(), BIN)
    if gp:
        ts, vs = [], []
        for s, e, v in gp:
            ts += [s - t0, e - t0]
            vs += [v, v]
        ax.plot(ts, vs, color=COLORS["goodput"], lw=0.9, alpha=0.9, label="goodput (iperf3, receiver)")
    if r.failover() and "down" in r.ev and "up" in r.ev:
        ax.axvspan(r.ev["down"] - t0, r.ev["up"] - t0, color="red", alpha=0.08, label="link 2 down")
    total = (r.cap1 or 0) + (r.cap2 or 0)
    if total:
        ax.axhline(total, color="grey", lw=0.6, ls=":")
    ax.set_xlim(-0.5, r.duration + 1.0)
    # (a goodput interval right after a hole is filled can be far above the
    # link rates: do not let it squash the plot)
    ax.set_ylim(0, 1.3 * total if total else None)
    ax.set_xlabel("time since data started (s)\n" + analyze.run_line(m), fontsize=8)
    ax.set_ylabel("Mbit/s")
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10, loc="left")


def figure(panels, out, suptitle):
    n = len(panels)
    fig, axes = plt.subplots(n, 1, figsize=(10, 3.2 * n), squeeze=False)
    for ax, (d, title) in zip(axes[:, 0], panels):
        panel(ax, d, title)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for ax in axes[1:, 0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="upper center", ncol=min(6, len(labels)), fontsize=8,
               bbox_to_anchor=(0.5, 1.0 - 0.02 / n))
    fig.suptitle(suptitle, y=1.0 + 0.03 / n, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1.0 - 0.06 / n))
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)


def scale_figure(b, d, out):
    """Kernel time per datagram against the number of flows, per mode."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, m in b.get("modes", {}).items():
        pts = m.get("points") or []
        if pts:
            ax.plot([p["flows"] for p in pts], [p["kernel_ns_per_pkt"] / 1000 for p in pts],
                    marker="o", label=mode)
    ax.set_xscale("log")
    ax.set_xlabel("concurrent UDP flows (sessions)")
    ax.set_ylabel("kernel time per datagram (us)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("scale: %s" % b.get("desc", ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def interleave_figure(b, d, out):
    """Each run's goodput in run order, mpip on and off marked."""
    fig, ax = plt.subplots(figsize=(8, 4))
    for mode in b.get("modes", {}):
        try:
            with open(os.path.join(d, b["bench"], mode, "interleave.jsonl")) as f:
                runs = [json.loads(x) for x in f if x.strip()]
        except (OSError, ValueError):
            continue
        for on, colour, label in ((False, "#7f7f7f", "mpip off (no hooks)"),
                                  (True, "#1f77b4", "mpip on")):
            xs = [i + 1 for i, r in enumerate(runs) if bool(r.get("mpip")) == on]
            ys = [r["mbps"] for r in runs if bool(r.get("mpip")) == on]
            ax.plot(xs, ys, "o", color=colour, label=label)
    ax.set_xlabel("run (ABBA cycles: off, on, on, off)")
    ax.set_ylabel("TCP goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    m = next(iter(b.get("modes", {}).values()), {})
    ax.set_title("%s: on in %% of off %s (median of %s cycles)" % (
        b["bench"], m.get("ratio_pct"), m.get("cycles")), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def starts_figure(b, d, out):
    """natstart: each download's goodput per mode, the downloads in which
    a's TCP queued segments out of order marked."""
    fig, ax = plt.subplots(figsize=(8, 4))
    modes = list(b.get("modes", {}))
    for x, mode in enumerate(modes):
        try:
            with open(os.path.join(d, b["bench"], mode, "starts.jsonl")) as f:
                runs = [json.loads(y) for y in f if y.strip()]
        except (OSError, ValueError):
            continue
        for ofo, colour, label in ((False, "#1f77b4", "in order"),
                                   (True, "#d62728", "out of order at a's TCP")):
            ys = [r["mbps"] for r in runs if bool(r.get("ofo")) == ofo and "mbps" in r]
            ax.plot([x] * len(ys), ys, "o", color=colour, alpha=0.6,
                    label=label if x == 0 else None)
    ax.set_xticks(range(len(modes)))
    ax.set_xticklabels(modes)
    ax.set_ylabel("goodput per download (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title("%s: %s" % (b["bench"], b.get("desc", "")), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def box_figure(b, out):
    """A benchmark with scenarios (Fig. 4(d)): box plots of each mode's runs
    (their iperf3 goodput), one group per scenario, the runs as dots, the
    scenario's capacity dotted."""
    key, label = analyze.OVERVIEW.get(b.get("kind"), ("aggregate_pct", "aggregate, % of capacity"))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    data, labels, pos, caps, x = [], [], [], [], 0
    for sn, sc in b["scenarios"].items():
        x0 = x
        for mode, m in sc.get("modes", {}).items():
            vals = [r[key] for r in m.get("runs", [m]) if isinstance(r.get(key), (int, float))]
            data.append(vals or [0.0])
            labels.append("%s\n%s" % (sn, mode))
            pos.append(x)
            ax.plot([x] * len(vals), vals, ".", color="#1f77b4", alpha=0.6)
            x += 1
        cap = sum(analyze.parse_rate_mbps(sc.get(k)) or 0 for k in ("link1", "link2"))
        if cap and key.endswith("_mbps"):
            caps.append(cap)
            ax.hlines(cap, x0 - 0.4, x - 0.6, color="grey", lw=0.8, ls=":")
            ax.text(x - 0.6, cap, " %g" % cap, va="center", fontsize=7, color="grey")
        x += 0.6
    ax.boxplot(data, positions=pos, widths=0.6)
    ax.set_xticks(pos)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel(label)
    ax.set_ylim(0, 1.08 * max([ax.get_ylim()[1]] + caps))
    ax.grid(axis="y", alpha=0.3)
    runs = max(len(m.get("runs", [m])) for sc in b["scenarios"].values()
               for m in sc.get("modes", {}).values())
    ax.set_title("%s: %s (%d run%s of %g s each)" % (
        b["bench"], b.get("desc", ""), runs, "s" if runs > 1 else "", b.get("duration", 0)),
        fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cmd, d = argv[1], argv[2]
    written = []
    if cmd == "bench":
        with open(os.path.join(d, "results.jsonl")) as f:
            lines = [json.loads(x) for x in f if x.strip()]
        for b in lines:
            name = b["bench"]
            out = os.path.join(d, name + ".png")
            if b.get("kind") == "scale":
                scale_figure(b, d, out)
                written.append(out)
                continue
            if b.get("kind") == "interleave":
                interleave_figure(b, d, out)
                written.append(out)
                continue
            if b.get("kind") == "natstart":
                starts_figure(b, d, out)
                written.append(out)
                continue
            if b.get("scenarios"):
                box_figure(b, out)
                written.append(out)
                continue
            # a panel per mode, or per part of a mode (repetitions and
            # rounds: the first)
            panels = []
            for mode in b.get("modes", {}):
                for label, rd in analyze.sub_runs(os.path.join(d, name, mode)):
                    if analyze.REP_DIR.fullmatch(label) and label not in ("rep1", "round1"):
                        continue
                    parts = [(lb, p) for lb, p in analyze.sub_runs(rd) if lb]
                    for lb, p in parts or [("", rd)]:
                        what = ", ".join(x for x in (label, lb) if x)
                        panels.append((p, "%s: %s%s" % (name, mode, " (%s)" % what if what else "")))
            if not panels:
                continue
            figure(panels, out, "%s — %s (links %s / %s)" % (name, b.get("desc", ""), b.get("link1"), b.get("link2")))
            written.append(out)
    elif cmd == "demo":
        titles = {"off": "(a) MPIP off (disabled on both hosts)", "on": "(b) MPIP on",
                  "fail": "(c) MPIP on, link 2 fails and comes back"}
        panels = [(os.path.join(d, k), t) for k, t in titles.items()
                  if os.path.exists(os.path.join(d, k, "run.json"))]
        if panels:
            meta = analyze.load_json(os.path.join(panels[0][0], "run.json")) or {}
            out = os.path.join(d, "demo.png")
            figure(panels, out, "mpip demo: two hosts, two links (%s / %s)" % (meta.get("link1"), meta.get("link2")))
            written.append(out)
    elif cmd == "run":
        out = argv[3] if len(argv) > 3 else os.path.join(d, "run.png")
        figure([(d, os.path.basename(os.path.normpath(d)))], out, "")
        written.append(out)
    else:
        sys.stderr.write(__doc__)
        return 2
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
