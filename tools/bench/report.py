#!/usr/bin/python3
"""tools/bench/report.py - the benchmark figures the documentation quotes,
generated from committed results (standard library only).

    report.py --add RESULTS.jsonl... [--force]
        append the full runs among the lines of tools/bench.sh's
        results.jsonl to Documentation/perf/BENCH.jsonl, one file per
        benchmark.  Refused, and said so, unless --force: --quick runs,
        runs of a dirty tree or an unknown commit, runs with experimental
        settings (LAB_MPIP_SET, LAB_SYSCTL, BENCH_UDP_*, --fail-end other
        than a) and runs in which a mode failed.  A line already there is
        skipped.  Exit status 1 if any line was refused.
    report.py --write
        rewrite the generated blocks of README.md and
        Documentation/performance.rst from Documentation/perf/*.jsonl
    report.py --check [--ktap]
        exit 1, with a unified diff, if a generated block differs from what
        --write would write, or if a result file or a block's markers are
        broken; --ktap prints KTAP for tools/check.sh (last line
        "perfdocs: N passed, N failed")
    report.py --show NAME [--format md|rst]
        print one block as --write would render it

    --root DIR       the repository (default: the one holding this script)
    --perf-dir DIR   the result files (default ROOT/Documentation/perf)

A generated block sits between two marker lines that --write leaves alone
and replaces everything between:

    Markdown:  <!-- perf:begin NAME -->  ...  <!-- perf:end NAME -->
    RST:       .. perf:begin NAME        ...  .. perf:end NAME

NAME is a benchmark (tcp, nat, natrev, natdown, natgso0, natrevgso0, natstart, natloss, natmtu, udp,
failover, backup, backuploss, overhead, interleave, reorder, fig4d, scale, rules: its table)
or "summary" (a few headline figures of all of them).  The format follows the file's extension (.md, .rst).

Which runs a block shows.  Each line of a result file is one run of one
benchmark (all its modes), with the commit measured ("commit": git
describe --always --dirty) and an id of the code the figures depend on
("code": tools/bench.sh's bench_code_id).  Runs with the same code id,
the same settings and the same --quick are pooled, whatever commit they
were made at (a change of the documentation does not split them; a change
of the module or of the benchmarks does); a run of a dirty tree is never
pooled with another.  A block shows the pool of full runs with default
settings whose newest run is the newest; other pools are counted, not
shown.  Only if there is no such pool does it show another one, and then
it says in bold what kind of runs these are.

The figures.  Per benchmark, mode and figure: the median over the pooled
runs, with the smallest and largest value beside it ("median (min-max)";
the number of runs in the caption, and in the cell if it differs).  A
run's figure is what analyze.py put in its line (for benchmarks with
repetitions or rounds, already the median of those).  A mode that reported
an error in a run is left out of that run and the block says so.  How
often the spec's threshold (analyze.py's CHECKS and RATIOS) was met is
counted per run.  A figure that flatters, the links' busy share (the
shapers' counters, headers and trailers included), always has goodput
(application bytes, the receiver's count) on the next row; mode
differences are taken within each run, then their median.
"""
import argparse
import difflib
import json
import os
import re
import sys
import textwrap

sys.dont_write_bytecode = True       # (run by make check: leave no __pycache__)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402  (thresholds: CHECKS, RATIOS; parse_rate_mbps)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ("README.md", os.path.join("Documentation", "performance.rst"))
PERF_DIR = os.path.join("Documentation", "perf")
BENCH_NAME = re.compile(r"^[a-z0-9_]+$")
WIDTH = 74

HOW_TO_ADD = ("run {make bench}, then {tools/bench/report.py --add "
              "results/bench/results.jsonl} (three runs or more: the figures are "
              "their median), then {tools/bench/report.py --write}")

MODE_NAMES = {
    "mpip": "mpip", "mptcp": "MPTCP", "mpip-noreorder": "mpip, reorder buffer off",
    "mpip-udp": "mpip, nat_mode udp", "mpip-faketcp": "mpip, nat_mode faketcp",
    "mptcp-mpip": "MPTCP over mpip", "mptcp-nogso": "MPTCP, GSO off",
    "off": "mpip off", "unloaded": "no module",
}


# ---------------------------------------------------------------- values

class Above(float):
    """A lower bound: the event did not happen within the VALUE seconds the
    run went on (failover's link 2 back)."""


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n % 2:
        return xs[n // 2]
    a, b = xs[n // 2 - 1], xs[n // 2]
    m = (a + b) / 2
    return Above(m) if isinstance(a, Above) or isinstance(b, Above) else m


def mode_of(line, mode, scen=None):
    """The mode's figures in a run, or None if it did not run or failed."""
    if scen:
        m = ((line.get("scenarios") or {}).get(scen) or {}).get("modes", {}).get(mode)
    else:
        m = (line.get("modes") or {}).get(mode)
    if not isinstance(m, dict) or m.get("error"):
        return None
    return m


def key(k, scale=1.0):
    """Accessor: a mode's figure K (times SCALE)."""
    def get(line, mode, scen):
        m = mode_of(line, mode, scen)
        v = m.get(k) if m else None
        return v * scale if num(v) else None
    return get


def back_key(line, mode, scen):
    """failover's link 2 back: a lower bound if it did not come back."""
    m = mode_of(line, mode, scen)
    if not m:
        return None
    if num(m.get("link2_back_s")):
        return m["link2_back_s"]
    if num(m.get("link2_back_none_s")):
        return Above(m["link2_back_none_s"])
    return None


def diff_key(k, other):
    """Accessor: this mode's K minus OTHER's, within the same run."""
    def get(line, mode, scen):
        a, b = key(k)(line, mode, scen), key(k)(line, other, scen)
        return a - b if a is not None and b is not None else None
    return get


def ratio_key(k):
    """Accessor: overhead's mpip in % of no module (analyze.py: the median
    of the rounds' paired ratios), only if both modes ran cleanly."""
    def get(line, mode, scen):
        if mode_of(line, "mpip") is None or mode_of(line, "unloaded") is None:
            return None
        v = (line.get("mpip_vs_unloaded_pct") or {}).get(k)
        return v if num(v) else None
    return get


def check_of(kind, metric):
    """(op, limit) of analyze.CHECKS for a kind's metric, or None."""
    for k, op, limit, _ in analyze.CHECKS.get(kind, []):
        if k == metric:
            return op, limit
    return None


def ratio_check(k):
    for key_, _, thr in analyze.RATIOS.get("overhead", []):
        if key_ == k and thr is not None:
            return ">=", thr
    return None


# --------------------------------------------------------------- the specs

class Row:
    """One figure: LABEL (a str, or a function of the runs), ACCESSOR
    (line, mode, scenario) -> value, FMT for the value; CHECK (op, limit)
    judged per run in the column CHECK_COL; COLS: the modes it has a value
    for (None: all the block's)."""

    def __init__(self, rid, label, get, fmt="%.1f", check=None, cols=None, scen=None,
                 check_col="mpip", short=None):
        self.id, self.label, self.get, self.fmt = rid, label, get, fmt
        self.short = short or label
        self.check, self.cols, self.scen, self.check_col = check, cols, scen, check_col

    def label_for(self, runs, short=False):
        label = self.short if short else self.label
        return label(runs) if callable(label) else label


def first(runs, f, default=None):
    """The first run's value of F(line) that is not None."""
    for line in runs:
        try:
            v = f(line)
        except (KeyError, TypeError, AttributeError):
            v = None
        if v is not None:
            return v
    return default


def capacity(runs):
    cap = first(runs, lambda ln: next((m["capacity_mbps"] for m in ln["modes"].values()
                                       if num(m.get("capacity_mbps"))), None))
    return "%g Mbit/s" % cap if cap else "capacity"


def offered(runs):
    v = first(runs, lambda ln: next((m["offered_mbps"] for m in ln["modes"].values()
                                     if num(m.get("offered_mbps"))), None))
    return "%g Mbit/s" % v if v else "the rate"


def most_flows(runs):
    vals = {m.get("flows_max") for ln in runs for m in (ln.get("modes") or {}).values()
            if num(m.get("flows_max"))}
    return "{:,}".format(vals.pop()) if len(vals) == 1 else "the most"


def scen_links(scen):
    return lambda runs: links_text(first(runs, lambda ln: ln["scenarios"][scen]["link1"]),
                                   first(runs, lambda ln: ln["scenarios"][scen]["link2"]))


def link_text(spec):
    """topo.sh's "40mbit,10ms,-" -> "40 Mbit/s +10ms"."""
    if not spec or spec == "-":
        return "unshaped"
    parts = (spec.split(",") + ["-", "-"])[:3]
    rate = analyze.parse_rate_mbps(parts[0])
    out = "%g Mbit/s" % rate if rate else "unshaped"
    if parts[1] not in ("", "-"):
        out += " +" + parts[1]
    if parts[2] not in ("", "-"):
        out += " loss " + parts[2]
    return out


def links_text(l1, l2):
    if not l1 and not l2:
        return "one unshaped link"
    return "%s / %s" % (link_text(l1), link_text(l2))


def pct_of_cap(what):
    return lambda runs: "%s, %% of %s" % (what, capacity(runs))


BUSY = "links busy"
GOODPUT = "goodput, same window"
# what the two mean, under every table that has them
BUSY_NOTE = ("links busy: what the sender's shapers sent on both links (headers and "
             "mpip trailers included) in % of the links' rates; goodput: the "
             "receiver's application bytes over the same window, in % of the same.  "
             "Even a full link reads below 100 % as goodput.")


# mpip's modes in the benchmarks through the NATs
NAT_MPIP = ["mpip", "mpip-udp", "mpip-faketcp"]


def nat_rows(kind, diff_cols=None, split=True):
    """The rows of a TCP benchmark through the NATs: goodput (with kind's
    check, if it has one), links busy, goodput against MPTCP's for
    diff_cols, the link split (if split) and retransmissions."""
    rows = [Row("goodput", pct_of_cap(GOODPUT), key("goodput_pct"),
                check=check_of(kind, "goodput_pct")),
            Row("busy", pct_of_cap(BUSY), key("aggregate_pct"))]
    if diff_cols:
        rows.append(Row("goodput_diff", "goodput, mpip − MPTCP in the same run (points)",
                        diff_key("goodput_pct", "mptcp"), fmt="%+.1f", cols=diff_cols))
    if split:
        rows.append(Row("split", "link split, points off the links' 2:1",
                        key("split_error_pts")))
    rows.append(Row("retrans", "retransmitted, % of segments sent", key("retrans_pct"),
                    fmt="%.2f"))
    return rows


BENCHES = {
    "tcp": {
        "what": "one iperf3 TCP connection",
        "cols": ["mpip", "mptcp"],
        "notes": [BUSY_NOTE],
        "rows": [
            Row("busy", pct_of_cap(BUSY), key("aggregate_pct"),
                check=check_of("tcp", "aggregate_pct")),
            Row("goodput", pct_of_cap(GOODPUT), key("goodput_pct")),
            Row("busy_diff", "links busy, mpip − MPTCP in the same run (points)",
                diff_key("aggregate_pct", "mptcp"), fmt="%+.1f", check=(">=", 0.0),
                cols=["mpip"]),
            Row("goodput_diff", "goodput, mpip − MPTCP in the same run (points)",
                diff_key("goodput_pct", "mptcp"), fmt="%+.1f", cols=["mpip"]),
            Row("split", "link split, points off the links' 2:1", key("split_error_pts"),
                check=check_of("tcp", "split_error_pts")),
            Row("retrans", "retransmitted, % of segments sent", key("retrans_pct"),
                fmt="%.2f"),
        ],
    },
    "nat": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs, to b",
        "cols": NAT_MPIP + ["mptcp"],
        "notes": [BUSY_NOTE, "mpip: nat_mode auto (its paths inside UDP, as all "
                  "paths are with udp); with faketcp, inside TCP connections of "
                  "their own; MPTCP: four subflows, from each of a's "
                  "addresses to each of b's (b announces its second)."],
        "rows": nat_rows("nat", NAT_MPIP),
    },
    "natrev": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs, to b; "
                "b sends (iperf3 -R: a downloads)",
        "cols": NAT_MPIP + ["mptcp"],
        "notes": [BUSY_NOTE, "Modes as in nat; the data flows from b, the public "
                  "host, to a through the NATs' mappings that a's connection made."],
        "rows": nat_rows("natrev", NAT_MPIP),
    },
    "natdown": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs, to b; "
                "b sends (iperf3 -R), b's links without a rate limit",
        "cols": NAT_MPIP + ["mptcp"],
        "notes": [BUSY_NOTE, "Modes as in nat.  Only a's two links limit the rate, "
                  "as in nat; b's shapers only delay, so links busy is what b "
                  "sent on its two links (not a's), and their split is not shown."],
        "rows": nat_rows("natdown", NAT_MPIP, split=False),
    },
    "natgso0": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs, to b, "
                "tx_gso 0 on both hosts",
        "cols": NAT_MPIP,
        "notes": [BUSY_NOTE, "GSO packets are split before mpip sees them.  With "
                  "tx_gso 1 (the nat row) none is kept whole either: the lab's "
                  "routes have gateways (tx_gso_kept 0)."],
        "rows": nat_rows("natgso0"),
    },
    "natrevgso0": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs, to b; "
                "b sends (iperf3 -R), tx_gso 0 on both hosts",
        "cols": NAT_MPIP + ["mptcp", "mptcp-nogso"],
        "notes": [BUSY_NOTE, "Modes as in nat; GSO packets are split before mpip "
                  "sees them.  MPTCP does not use tx_gso: its column is natrev's, "
                  "measured in the same run; with GSO and TSO off on the hosts' "
                  "links, its TCP too hands each segment to IP on its own."],
        "rows": nat_rows("natrevgso0", NAT_MPIP),
    },
    "natloss": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs, to b; "
                "b sends (iperf3 -R); netem drops 0.1 % at every shaped hop",
        "cols": ["mpip", "mptcp"],
        "notes": [BUSY_NOTE, "Random loss: three shaped hops from b to a (b's link, "
                  "the router's, the NAT's LAN side), two back, each dropping 0.1 % "
                  "of what it sends: about 0.3 % of the data and 0.2 % of the ACKs.  "
                  "mpip carries the connection as one TCP connection, with one "
                  "congestion window that every path's losses cut; MPTCP's subflows "
                  "have one each.  No target: the issue's figures are for links "
                  "without loss."],
        "rows": nat_rows("natloss", ["mpip"]),
    },
    "natmtu": {
        "what": "one iperf3 TCP connection from a, behind two strict NATs whose far "
                "links have MTU 1400, to b",
        "cols": ["mpip", "mptcp"],
        "notes": [BUSY_NOTE, "mpip: nat_mode auto.  The NATs' first errors give a "
                  "path its MTU and the TCP flow that MTU less mpip's 52 bytes, so "
                  "that its segments fit inside UDP whole (since 7b39be2; before, "
                  "each full-size one went in two fragments, tx_encap_frag)."],
        "rows": nat_rows("natmtu", ["mpip"], split=False),
    },
    "udp": {
        "what": "one iperf3 UDP stream",
        "cols": ["mpip", "mptcp"],
        "rows": [
            Row("received", lambda runs: "goodput: received, %% of the %s offered" % offered(runs),
                key("delivered_of_offered_pct")),
            Row("delivered", "datagrams delivered, % of those sent", key("delivered_pct"),
                check=check_of("udp", "delivered_pct")),
            Row("sent", "sent by iperf3, Mbit/s", key("sent_mbps")),
        ],
        "notes": ["MPTCP does not carry UDP: its column is single-path UDP."],
    },
    "failover": {
        "what": "one iperf3 TCP connection; link 2 goes down and comes back",
        "cols": ["mpip", "mptcp"],
        "rows": [
            Row("stall", "longest goodput stall, s", key("stall_s"), fmt="%.2f",
                check=check_of("failover", "stall_s")),
            Row("back", "link 2 carries traffic again after, s", back_key, fmt="%.2f",
                check=check_of("failover", "link2_back_s")),
            Row("during", "goodput while link 2 is down, Mbit/s", key("goodput_during_mbps")),
            Row("whole", "goodput, whole run (iperf3), Mbit/s", key("iperf3_mbps")),
        ],
    },
    "backup": {
        "what": "one iperf3 TCP connection; link 1 is a backup link on the sender "
                "(mpipctl link set dev eth1 backup), link 2 goes down and comes back",
        "cols": ["mpip"],
        "rows": [
            Row("before", "link 1 (backup), % of the data before the failure",
                key("link1_before_pct"), fmt="%.2f", check=check_of("backup", "link1_before_pct")),
            Row("stall", "longest goodput stall, s", key("stall_s"), fmt="%.2f",
                check=check_of("backup", "stall_s")),
            Row("back", "link 2 carries traffic again after, s", back_key, fmt="%.2f",
                check=check_of("backup", "link2_back_s")),
            Row("during", "goodput while link 2 is down, Mbit/s", key("goodput_during_mbps")),
            Row("whole", "goodput, whole run (iperf3), Mbit/s", key("iperf3_mbps")),
        ],
    },
    "backuploss": {
        "what": "one iperf3 TCP connection to b's link 2 address; link 1 is a backup "
                "link on the sender (mpipctl link set dev eth1 backup), link 2 drops "
                "1 % at every shaped hop",
        "cols": ["mpip", "off"],
        "notes": ["off: plain TCP over link 2 alone, mpip off on both hosts.  "
                  "mpip's data keeps to link 2; link 1 carries a heartbeat every "
                  "heartbeat_ms (300 ms) while data flows, and b's reorder buffer "
                  "holds the segments behind each loss on link 2 until the paths "
                  "show the gap lost or reorder_max_hold_ms (100 ms) runs out."],
        "rows": [
            Row("goodput", "goodput, same window, Mbit/s", key("goodput_mbps")),
            Row("link1", "link 1 (backup), % of the bytes on the links",
                key("link1_share_pct"), fmt="%.2f"),
            Row("retrans", "retransmitted, % of segments sent", key("retrans_pct"),
                fmt="%.2f"),
            Row("lost", "segments b released as lost", key("reorder_lost"),
                fmt="%.0f", cols=["mpip"]),
            Row("timeout", "segments b released by timeout", key("reorder_timeout"),
                fmt="%.0f", cols=["mpip"]),
        ],
    },
    "overhead": {
        "what": "iperf3 TCP, then 64-byte UDP datagrams, over one unshaped link; "
                "each run's ratio is the median of its alternating rounds' ratios",
        "cols": ["mpip", "unloaded"],
        "links": False,
        "per": "%g s per round",
        "rows": [
            Row("tcp", "TCP goodput, Mbit/s", key("tcp_iperf3_mbps")),
            Row("tcp_ratio", "TCP goodput, mpip in % of no module",
                ratio_key("tcp_iperf3_mbps"), check=ratio_check("tcp_iperf3_mbps"),
                cols=["mpip"]),
            Row("udp", "64-byte UDP datagrams received per second", key("udp_pps"),
                fmt="%.0f"),
            Row("udp_ratio", "64-byte UDP datagrams/s, mpip in % of no module",
                ratio_key("udp_pps"), check=ratio_check("udp_pps"), cols=["mpip"]),
        ],
    },
    "natstart": {
        "what": "a behind two strict NATs, tx_gso 0 on both hosts; downloads from b "
                "to a (iperf3 -R -n), one after the other, each on connections of its "
                "own; the counts are over all of a run's downloads",
        "cols": ["mpip", "mpip-udp", "mpip-faketcp", "mptcp", "off"],
        "per_key": "downloads",
        "per": "%d downloads per mode and run",
        "rows": [
            Row("goodput", "goodput per download, Mbit/s (the run's median download)",
                key("mbps")),
            Row("n", "downloads", key("downloads"), fmt="%.0f"),
            Row("size", "bytes per download, MB", key("size_mb")),
            Row("ofo", "downloads in which a's TCP queued segments out of order "
                "(MPTCP: its subflows)", key("ofo_downloads"), fmt="%.0f"),
            Row("ofo_segs", "segments a's TCP queued out of order", key("ofo_segs"),
                fmt="%.0f"),
            Row("mptcp_ofo", "MPTCP's data level: segments out of order",
                key("mptcp_ofo_segs"), fmt="%.0f", cols=["mptcp"]),
            Row("rtx", "downloads in which b sent segments again",
                key("retrans_downloads"), fmt="%.0f"),
            Row("rtx_segs", "segments b sent again", key("retrans_segs"), fmt="%.0f"),
            Row("dsack_n", "downloads in which b sent one a already had (DSACK)",
                key("dsack_downloads"), fmt="%.0f"),
            Row("dsack", "segments b sent again that a already had (DSACK)",
                key("dsack_segs"), fmt="%.0f"),
        ],
    },
    "interleave": {
        "what": "iperf3 TCP over one unshaped link in short runs, mpip switched on "
                "and off (no mpip hooks) between them in ABBA cycles",
        "cols": ["mpip"],
        "links": False,
        "per": "%g s per short run",
        "rows": [
            Row("ratio", "TCP goodput, on in % of off (median of the cycles)",
                key("ratio_pct"), check=check_of("interleave", "ratio_pct")),
            Row("ratio_all", "TCP goodput, on in % of off (all runs pooled)",
                key("ratio_all_pct")),
            Row("on", "TCP goodput on, Mbit/s (median run)", key("on_mbps")),
            Row("off", "TCP goodput off, Mbit/s (median run)", key("off_mbps")),
        ],
    },
    "reorder": {
        "what": "one iperf3 TCP connection over links of different delay",
        "cols": ["mpip", "mpip-noreorder", "mptcp"],
        "notes": [BUSY_NOTE],
        "rows": [
            Row("busy", pct_of_cap(BUSY), key("aggregate_pct"),
                check=check_of("reorder", "aggregate_pct")),
            Row("goodput", pct_of_cap(GOODPUT), key("goodput_pct")),
            Row("retrans", "retransmitted, % of segments sent", key("retrans_pct"),
                fmt="%.2f", check=check_of("reorder", "retrans_pct")),
            Row("dsack", "of them already received (DSACK), segments", key("dsack_segs"),
                fmt="%.0f"),
        ],
    },
    "fig4d": {
        "what": "one iperf3 TCP connection per repetition (Fig. 4(d)); each run's "
                "figure is the median of its repetitions",
        "cols": ["mpip", "mptcp", "mptcp-mpip"],
        "links": False,
        "per": "%g s per repetition",
        "rows": [r for sc in ("normal", "delay", "limit") for r in (
            Row(sc + "_goodput", (lambda s: lambda runs: "%s (%s): goodput (iperf3), Mbit/s" %
                                  (s, scen_links(s)(runs)))(sc), key("iperf3_mbps"), scen=sc),
            Row(sc + "_busy", (lambda s: lambda runs: "%s: links busy, %% of capacity" % s)(sc),
                key("aggregate_pct"), scen=sc),
        )],
        "notes": ["goodput: iperf3's receiver figure for the whole run; " + BUSY_NOTE.split(
            ";")[0] + "."],
    },
    "scale": {
        "what": "64-byte UDP datagrams round-robin over many flows, each number of "
                "flows in a lab of its own; kernel time per datagram",
        "cols": ["mpip", "off"],
        "links": False,
        "per_key": "packets",
        "per": "%d datagrams per round",
        "rows": [
            Row("ratio", lambda runs: "%s flows, in %% of 1 flow (median of the cycles)" %
                most_flows(runs), key("cost_ratio_pct"), check=check_of("scale", "cost_ratio_pct")),
            Row("ratio100", "100 flows, in % of 1 flow", key("cost_ratio_pct_100")),
            Row("one", "1 flow, µs per datagram", key("ns_per_pkt_1", 1e-3)),
            Row("max", lambda runs: "%s flows, µs per datagram" % most_flows(runs),
                key("ns_per_pkt_max", 1e-3)),
        ],
    },
    "rules": {
        "what": "64-byte UDP datagrams of one flow, in a lab without routing rules and "
                "in one with 100 rules that each datagram runs through without a match; "
                "kernel time per datagram",
        "cols": ["mpip"],
        "links": False,
        "per_key": "packets",
        "per": "%d datagrams per round",
        "rows": [
            Row("ratio", "100 rules, in % of none (median of the cycles)",
                key("cost_ratio_pct"), check=check_of("rules", "cost_ratio_pct")),
            Row("none", "no rules, µs per datagram", key("ns_per_pkt_none", 1e-3)),
            Row("many", "100 rules, µs per datagram", key("ns_per_pkt_100", 1e-3)),
        ],
    },
}

# the README's block: (benchmark, row, column beside mpip's)
SUMMARY = [
    ("tcp", "busy", "mptcp"), ("tcp", "goodput", "mptcp"),
    ("udp", "received", "mptcp"), ("udp", "delivered", "mptcp"),
    ("failover", "stall", "mptcp"), ("failover", "back", "mptcp"),
    ("reorder", "busy", "mptcp"), ("reorder", "goodput", "mptcp"),
    ("overhead", "tcp_ratio", None), ("interleave", "ratio", None),
    ("scale", "ratio", "off"),
]


# ------------------------------------------------------------ result files

def load_perf(perf_dir):
    """({bench: [line]}, [problem]) of PERF_DIR/*.jsonl."""
    runs, problems = {}, []
    try:
        names = sorted(n for n in os.listdir(perf_dir) if n.endswith(".jsonl"))
    except OSError:
        names = []
    for n in names:
        bench = n[:-len(".jsonl")]
        path = os.path.join(perf_dir, n)
        with open(path, encoding="utf-8") as f:
            for i, text in enumerate(f, 1):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except ValueError as e:
                    problems.append("%s:%d: not JSON: %s" % (path, i, e))
                    continue
                if not isinstance(line, dict) or line.get("bench") != bench:
                    problems.append("%s:%d: not a line of benchmark %s" % (path, i, bench))
                    continue
                if not isinstance(line.get("date"), str):
                    problems.append("%s:%d: no date" % (path, i))
                    continue
                runs.setdefault(bench, []).append(line)
    return runs, problems


def dirty(v):
    return not isinstance(v, str) or v in ("", "unknown") or v.endswith("-dirty")


def settings_of(line):
    """The run's experimental settings (a dict; {} for the defaults)."""
    s = dict(line.get("settings") or {})
    if line.get("fail_end", "a") != "a":
        s["--fail-end"] = line["fail_end"]
    return s


def pool_key(line):
    """Runs with equal keys measured the same thing (see the header)."""
    code, commit = line.get("code"), line.get("commit")
    if not dirty(code):
        ident = "code " + code
    elif code in (None, "", "unknown") and not dirty(commit):
        ident = "commit " + commit      # (a line without a code id)
    else:                               # a dirty tree: never pooled
        ident = "run %s %s" % (commit, line.get("date"))
    return (bool(line.get("quick")), ident, json.dumps(settings_of(line), sort_keys=True))


def choose(lines):
    """(the runs a block shows, oldest first; the number of runs left out)."""
    pools = {}
    for line in lines:
        pools.setdefault(pool_key(line), []).append(line)
    if not pools:
        return [], 0

    # the newest pool of full runs with the defaults; failing that, the
    # newest of the others
    order = sorted(pools, key=lambda k: max(x["date"] for x in pools[k]), reverse=True)
    best = sorted(order, key=lambda k: (k[0], k[2] != "{}"))[0]
    chosen = sorted(pools[best], key=lambda x: x["date"])
    return chosen, len(lines) - len(chosen)


# ------------------------------------------------------------ statistics

def fmt_value(v, f):
    s = f % v
    if s.startswith("-"):
        s = "−" + s[1:]          # a real minus, as "+" is a real plus
    return ("> " + s) if isinstance(v, Above) else s


def cell(vals, f, nruns):
    """"median (min–max)" of VALS; "—" if none."""
    if not vals:
        return "—"
    med = fmt_value(median(vals), f)
    lo, hi = fmt_value(min(vals), f), fmt_value(max(vals), f)
    extra = "" if len(vals) == nruns else "%d run%s" % (len(vals), "s" * (len(vals) != 1))
    if len(vals) == 1:
        return "%s (%s)" % (med, extra) if extra else med
    # (an en dash between signed values would read as a minus)
    dash = " to " if any(x[0] in "−+>" for x in (lo, hi)) else "–"
    return "%s (%s%s%s%s)" % (med, lo, dash, hi, ", " + extra if extra else "")


def judged(vals, check):
    """"≥ 95: 3 of 5 runs" for CHECK (op, limit) over VALS."""
    op, limit = check
    ok = sum(1 for v in vals if (v >= limit if op == ">=" else v <= limit))
    return "%s %g: %d of %d run%s" % ("≥" if op == ">=" else "≤", limit, ok, len(vals),
                                     "s" * (len(vals) != 1))


class Block:
    """The figures of one benchmark over its chosen runs."""

    def __init__(self, bench, lines, perf_rel):
        self.bench, self.spec = bench, BENCHES[bench]
        self.file = os.path.join(perf_rel, bench + ".jsonl").replace(os.sep, "/")
        self.runs, self.left_out = choose(lines)
        self.n = len(self.runs)

    def values(self, row, mode):
        out = []
        for line in self.runs:
            v = row.get(line, mode, row.scen)
            if v is not None:
                out.append(v)
        return out

    def cols(self, row):
        return row.cols or self.spec["cols"]

    def table(self):
        """[header, rows...] of cells."""
        cols = self.spec["cols"]
        checks = any(r.check for r in self.spec["rows"])
        out = [["figure"] + [MODE_NAMES.get(c, c) for c in cols] + (["target, runs meeting it"]
                                                                     if checks else [])]
        for row in self.spec["rows"]:
            cells = [row.label_for(self.runs)]
            for c in cols:
                cells.append(cell(self.values(row, c), row.fmt, self.n) if c in self.cols(row)
                             else "")
            if checks:
                vals = self.values(row, row.check_col) if row.check else []
                cells.append(judged(vals, row.check) if vals else "")
            out.append(cells)
        return out

    def errors(self):
        """Notes on modes that failed in some runs (left out there)."""
        out = []
        for c in self.spec["cols"]:
            bad = []
            for line in self.runs:
                scens = list((line.get("scenarios") or {}).keys()) or [None]
                for s in scens:
                    ms = ((line.get("scenarios") or {}).get(s, {}).get("modes") if s
                          else line.get("modes")) or {}
                    if c in ms and ms[c].get("error"):
                        bad.append(line["date"][:10])
            if bad:
                out.append("%s failed in %d of the %d runs (%s): left out there" % (
                    MODE_NAMES.get(c, c), len(bad), self.n, ", ".join(sorted(set(bad)))))
        return out

    def sender_limited(self):
        out = []
        for c in self.spec["cols"]:
            k = sum(1 for line in self.runs
                    if (mode_of(line, c) or {}).get("sender_limited"))
            if k:
                out.append("%s: iperf3's sender reached less than 95 %% of the offered "
                           "rate in %d of %d run%s" % (MODE_NAMES.get(c, c), k, self.n,
                                                       "s" * (self.n != 1)))
        return out

    def provenance(self):
        """Words on the runs: how many, which commits, when."""
        commits = {}
        for line in self.runs:
            c = line.get("commit") or "unknown"
            commits[c] = commits.get(c, 0) + 1
        cs = ", ".join("{%s}%s" % (c, " (%d)" % k if len(commits) > 1 else "")
                       for c, k in commits.items())
        dates = sorted(line["date"][:10] for line in self.runs)
        when = dates[0] if dates[0] == dates[-1] else "%s to %s" % (dates[0], dates[-1])
        code = self.runs[-1].get("code")
        same = ""
        if len(commits) > 1 and not dirty(code):
            same = ", the same code (id {%s})" % code
        return "%d run%s of commit%s %s%s, %s" % (
            self.n, "s" * (self.n != 1), "s" * (len(commits) > 1), cs, same, when)

    def warnings(self):
        """What is unusual about the runs shown (in bold)."""
        w = []
        last = self.runs[-1]
        if last.get("quick"):
            w.append("--quick runs (a smoke test): noise, not measurements")
        s = settings_of(last)
        if s:
            w.append("runs with experimental settings (%s)" % ", ".join(
                "%s=%s" % kv for kv in sorted(s.items())))
        if dirty(last.get("commit")):
            w.append("runs of %s" % ("an unknown commit" if last.get("commit") in
                                     (None, "", "unknown") else "a dirty tree"))
        return w


# -------------------------------------------------------------- rendering

class Fmt:
    """Markup of one format: inline code (text between braces), tables."""

    def __init__(self, kind):
        self.kind = kind

    def code(self, text):
        """{x} -> `x` (Markdown) or ``x`` (RST)."""
        q = "`" if self.kind == "md" else "``"
        return re.sub(r"\{([^{}]+)\}", lambda m: q + m.group(1) + q, text)

    def bold(self, text):
        return "**%s**" % text

    def wrap(self, text, width):
        """TEXT's lines of at most WIDTH characters, not broken inside
        inline code."""
        text = re.sub(r"\{([^{}]+)\}", lambda m: "{%s}" % m.group(1).replace(" ", "\0"), text)
        return [x.replace("\0", " ") for x in
                textwrap.wrap(self.code(text), width, break_long_words=False,
                              break_on_hyphens=False)]

    def para(self, text):
        return self.wrap(text, WIDTH)

    def bullets(self, items):
        out = []
        for it in items:
            w = self.wrap(it, WIDTH - 2)
            out += ["- " + w[0]] + ["  " + x for x in w[1:]]
        return out

    def table(self, rows):
        cols = len(rows[0])
        if self.kind == "md":
            def esc(c):
                return c.replace("|", "\\|")
            out = ["| " + " | ".join(esc(c) for c in rows[0]) + " |",
                   "|" + " --- |" * cols]
            out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows[1:]]
            return out
        # an RST simple table; no cell of the first column may be empty
        w = [max(len(r[i]) for r in rows) or 1 for i in range(cols)]
        rule = "  ".join("=" * x for x in w)

        def line(r):
            return "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip()
        return [rule, line(rows[0]), rule] + [line(r) for r in rows[1:]] + [rule]


def no_results(f, what):
    return f.para("%s: no committed results yet: %s." % (what, HOW_TO_ADD))


def render_bench(block, f):
    """The lines of a benchmark's block."""
    name = "{%s}" % block.bench
    if not block.runs:
        return no_results(f, name)
    spec = block.spec
    last = block.runs[-1]
    links = ""
    if spec.get("links", True):
        links = ", " + (links_text(last.get("link1"), last.get("link2"))
                        if last.get("link1") not in (None, "-") else "one unshaped link")
    per = ""
    v = last.get(spec.get("per_key", "duration"))
    if num(v) and v:
        per = ", " + spec.get("per", "%g s per run") % v
    text = ("%s: %s%s%s.  Median (min–max) of %s; generated by "
            "{tools/bench/report.py} from {%s}" % (
                name, spec["what"], links, per, block.provenance(), block.file))
    if block.left_out:
        text += " (%d other run%s there, of other code or settings, left out)" % (
            block.left_out, "s" * (block.left_out != 1))
    out = f.para(text + ".")
    warn = block.warnings()
    if warn:
        out += [""] + f.para(f.bold("Not the benchmark's figures: " + "; ".join(warn) + "."))
    out += [""] + f.table(block.table())
    notes = list(spec.get("notes", [])) + block.sender_limited() + block.errors()
    if notes:
        out += [""] + f.bullets(notes)
    return out


def render_summary(blocks, f):
    """The README's block: headline figures of every benchmark."""
    have = [b for b in SUMMARY if blocks[b[0]].runs]
    missing = [n for n in BENCHES if not blocks[n].runs and any(s[0] == n for s in SUMMARY)]
    out = []
    if not have:
        return f.para("No committed results yet: %s.  Documentation/performance.rst "
                      "has the method and, as historical notes, the hand-typed "
                      "figures of earlier runs." % HOW_TO_ADD)
    rows = [["benchmark", "figure", "mpip", "beside it", "runs, commit, date"]]
    for bench, rid, beside in have:
        b = blocks[bench]
        row = next(r for r in b.spec["rows"] if r.id == rid)
        other = ""
        if beside:
            other = "%s: %s" % (MODE_NAMES.get(beside, beside),
                                cell(b.values(row, beside), row.fmt, b.n))
        commits = sorted({ln.get("commit") or "unknown" for ln in b.runs})
        rows.append([f.code("{%s}" % bench), row.label_for(b.runs, short=True),
                     cell(b.values(row, "mpip"), row.fmt, b.n), other,
                     "%d, %s, %s" % (b.n, " ".join(commits), b.runs[-1]["date"][:10])])
    out += f.para("Median (min–max) over the committed runs of each benchmark, "
                  "generated by {tools/bench/report.py} from {Documentation/perf/}; "
                  "the tables, targets and notes are in Documentation/performance.rst.")
    warn = {}
    for n in dict.fromkeys(s[0] for s in have):
        for w in blocks[n].warnings():
            warn.setdefault(w, []).append("{%s}" % n)
    if warn:
        out += [""] + f.para(f.bold("Not the benchmarks' figures: " + "; ".join(
            "%s (%s)" % (w, ", ".join(ns)) for w, ns in warn.items()) + "."))
    out += [""] + f.table(rows)
    if missing:
        out += [""] + f.para("No committed results yet for %s: %s." % (
            ", ".join("{%s}" % n for n in missing), HOW_TO_ADD))
    return out


def render(name, blocks, kind):
    f = Fmt(kind)
    if name == "summary":
        return render_summary(blocks, f)
    return render_bench(blocks[name], f)


# ----------------------------------------------------------------- markers

MARK = {
    "md": (re.compile(r"^<!-- perf:begin ([a-z0-9_]+) -->$"),
           re.compile(r"^<!-- perf:end ([a-z0-9_]+) -->$")),
    "rst": (re.compile(r"^\.\. perf:begin ([a-z0-9_]+)$"),
            re.compile(r"^\.\. perf:end ([a-z0-9_]+)$")),
}


def kind_of(path):
    return "md" if path.endswith(".md") else "rst"


def generate(text, path, blocks):
    """(TEXT with every block regenerated, [block names], [problems])."""
    kind = kind_of(path)
    begin, end = MARK[kind]
    lines = text.split("\n")
    out, names, problems = [], [], []
    i = 0
    while i < len(lines):
        ln = lines[i]
        out.append(ln)
        m = begin.match(ln)
        if end.match(ln):
            problems.append("%s:%d: %s without its begin" % (path, i + 1, ln))
        if not m:
            i += 1
            continue
        name = m.group(1)
        j = i + 1
        while j < len(lines) and not end.match(lines[j]) and not begin.match(lines[j]):
            j += 1
        e = end.match(lines[j]) if j < len(lines) else None
        if not e or e.group(1) != name:
            problems.append("%s:%d: %s has no matching end marker" % (path, i + 1, ln))
            i += 1
            continue
        if name != "summary" and name not in BENCHES:
            problems.append("%s:%d: no block named %r (benchmarks: %s; or summary)" % (
                path, i + 1, name, ", ".join(BENCHES)))
            out += lines[i + 1:j + 1]
        else:
            names.append(name)
            out += [""] + render(name, blocks, kind) + ["", lines[j]]
        i = j + 1
    return "\n".join(out), names, problems


def build_blocks(perf_dir, root):
    runs, problems = load_perf(perf_dir)
    rel = os.path.relpath(perf_dir, root)
    blocks = {n: Block(n, runs.get(n, []), rel) for n in BENCHES}
    for n in runs:
        if n not in BENCHES:
            problems.append("%s.jsonl: no block renders benchmark %s (report.py's BENCHES)"
                            % (os.path.join(rel, n), n))
    return blocks, problems


# ----------------------------------------------------------------- commands

def do_docs(args, mode):
    """--write, --check: returns the exit status."""
    blocks, file_problems = build_blocks(args.perf_dir, args.root)
    results = [("result files in %s" % os.path.relpath(args.perf_dir, args.root),
                file_problems)]
    for doc in DOCS:
        path = os.path.join(args.root, doc)
        try:
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        except OSError as e:
            results.append((doc, ["cannot read: %s" % e.strerror]))
            continue
        new, names, problems = generate(old, doc, blocks)
        if not names and not problems:
            problems.append("%s has no generated block" % doc)
        if mode == "write":
            if problems:
                problems.append("%s left as it is" % doc)
            elif new != old:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(new)
                print("report.py: rewrote %s (%s)" % (doc, ", ".join(names)))
            for p in problems:
                print("report.py: %s" % p, file=sys.stderr)
            results.append((doc, problems))
            continue
        # --check: one result per block (a diff confined to its lines)
        for name in names:
            o, n = block_text(old, doc, name), block_text(new, doc, name)
            diff = list(difflib.unified_diff(o, n, "%s (%s, committed)" % (doc, name),
                                             "%s (%s, generated)" % (doc, name), lineterm=""))
            results.append(("%s: %s" % (doc, name), diff))
        results.append(("%s: markers" % doc, problems))
    if mode == "write":
        bad = [p for _, ps in results for p in ps]
        return 1 if bad else 0
    return report_check(results, args.ktap)


def block_text(text, path, name):
    begin, end = MARK[kind_of(path)]
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        m = begin.match(ln)
        if m and m.group(1) == name:
            for j in range(i + 1, len(lines)):
                e = end.match(lines[j])
                if e and e.group(1) == name:
                    return lines[i:j + 1]
    return []


def report_check(results, ktap):
    failed = [(n, p) for n, p in results if p]
    if ktap:
        print("KTAP version 1")
        print("1..%d" % len(results))
        for i, (n, p) in enumerate(results, 1):
            for x in p:
                print("# " + x)
            print("%s %d %s" % ("not ok" if p else "ok", i, n))
        if failed:
            print("# the documentation's figures are not what tools/bench/report.py "
                  "generates: run tools/bench/report.py --write (and commit)")
        print("perfdocs: %d passed, %d failed" % (len(results) - len(failed), len(failed)))
    else:
        for n, p in failed:
            print("\n".join(p))
        if failed:
            print("report.py: %s: not what tools/bench/report.py generates; run "
                  "tools/bench/report.py --write" % ", ".join(n for n, _ in failed),
                  file=sys.stderr)
    return 1 if failed else 0


def refusals(line):
    """Why LINE is not a full run of the committed code with the
    benchmark's defaults ([] if it is one)."""
    why = []
    if line.get("quick"):
        why.append("a --quick run (a smoke test)")
    c, code = line.get("commit"), line.get("code")
    if c in (None, "", "unknown"):
        why.append("no commit recorded")
    elif c.endswith("-dirty"):
        why.append("a dirty tree (%s: uncommitted changes)" % c)
    elif isinstance(code, str) and code.endswith("-dirty"):
        why.append("a dirty tree (code id %s: files the figures depend on differ "
                   "from the commit, or are not in it)" % code)
    s = settings_of(line)
    if s:
        why.append("experimental settings (%s)" % ", ".join("%s=%s" % kv for kv in sorted(s.items())))
    errs = []
    for label, ms in [("", line.get("modes") or {})] + [
            (sc + ":", v.get("modes") or {}) for sc, v in (line.get("scenarios") or {}).items()]:
        errs += ["%s%s: %s" % (label, mo, m["error"]) for mo, m in ms.items()
                 if isinstance(m, dict) and m.get("error")]
    if errs:
        why.append("modes that failed (%s)" % "; ".join(errs))
    return why


def same_run(a, b):
    return all(a.get(k) == b.get(k) for k in ("bench", "date", "commit", "code", "quick"))


def do_add(args):
    existing, problems = load_perf(args.perf_dir)
    for p in problems:
        print("report.py: %s" % p, file=sys.stderr)
    refused = added = 0
    rel = os.path.relpath(args.perf_dir, args.root)
    for src in args.add:
        try:
            with open(src, encoding="utf-8") as fh:
                texts = [t.strip() for t in fh if t.strip()]
        except OSError as e:
            print("report.py: %s: %s" % (src, e.strerror), file=sys.stderr)
            refused += 1
            continue
        if not texts:
            print("report.py: %s: no result lines" % src, file=sys.stderr)
            refused += 1
        for k, text in enumerate(texts, 1):
            try:
                line = json.loads(text)
            except ValueError:
                print("report.py: %s:%d: not JSON: not added" % (src, k), file=sys.stderr)
                refused += 1
                continue
            bench = line.get("bench") if isinstance(line, dict) else None
            if not isinstance(bench, str) or not BENCH_NAME.match(bench) or \
                    not isinstance(line.get("date"), str):
                print("report.py: %s:%d: not a benchmark's line: not added" % (src, k),
                      file=sys.stderr)
                refused += 1
                continue
            what = "%s (%s, commit %s)" % (bench, line["date"], line.get("commit", "unknown"))
            if any(same_run(line, x) for x in existing.get(bench, [])):
                print("report.py: %s: already in %s/%s.jsonl" % (what, rel, bench))
                continue
            why = refusals(line)
            if why and not args.force:
                print("report.py: %s: not added: %s" % (what, "; ".join(why)),
                      file=sys.stderr)
                refused += 1
                continue
            os.makedirs(args.perf_dir, exist_ok=True)
            dest = os.path.join(args.perf_dir, bench + ".jsonl")
            with open(dest, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            existing.setdefault(bench, []).append(line)
            added += 1
            print("report.py: %s: added to %s/%s.jsonl (%d run%s there)%s" % (
                what, rel, bench, len(existing[bench]), "s" * (len(existing[bench]) != 1),
                " despite: " + "; ".join(why) if why else ""))
    if refused:
        print("report.py: %d line%s not added.  Only full runs (no --quick) of a clean "
              "tree with the benchmarks' defaults are figures to quote; --force adds "
              "such lines anyway, and the documentation then shows them only where no "
              "such full run exists, saying in bold what they are." % (
                  refused, "s" * (refused != 1)), file=sys.stderr)
    if added:
        print("report.py: now tools/bench/report.py --write, and commit %s/ with "
              "README.md and Documentation/performance.rst" % rel)
    return 1 if refused else 0


def do_show(args):
    blocks, problems = build_blocks(args.perf_dir, args.root)
    for p in problems:
        print("report.py: %s" % p, file=sys.stderr)
    if args.show != "summary" and args.show not in BENCHES:
        print("report.py: no block %r" % args.show, file=sys.stderr)
        return 2
    print("\n".join(render(args.show, blocks, args.format)))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(
        prog="report.py", description="The documentation's benchmark figures, generated "
        "from Documentation/perf/*.jsonl (see the header of tools/bench/report.py).")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--add", nargs="+", metavar="RESULTS.jsonl",
                   help="append full runs to Documentation/perf/BENCH.jsonl")
    g.add_argument("--write", action="store_true", help="rewrite the generated blocks")
    g.add_argument("--check", action="store_true",
                   help="exit 1 with a diff if the docs differ from what --write writes")
    g.add_argument("--show", metavar="NAME", help="print one block")
    ap.add_argument("--force", action="store_true",
                    help="--add: add quick runs, dirty trees, experimental settings too")
    ap.add_argument("--ktap", action="store_true", help="--check: print KTAP")
    ap.add_argument("--format", choices=("md", "rst"), default="md", help="--show: markup")
    ap.add_argument("--root", default=ROOT, help="the repository (default: %(default)s)")
    ap.add_argument("--perf-dir", help="the result files (default: ROOT/%s)" % PERF_DIR)
    args = ap.parse_args(argv)
    args.root = os.path.abspath(args.root)
    args.perf_dir = os.path.abspath(args.perf_dir or os.path.join(args.root, PERF_DIR))
    if args.add:
        return do_add(args)
    if args.show:
        return do_show(args)
    return do_docs(args, "write" if args.write else "check")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
