#!/usr/bin/python3
"""Tests of tools/bench/report.py on made-up result lines, in a scratch
repository (standard library only):

    python3 tools/bench/test_report.py [-v]
"""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import analyze  # noqa: E402
import sampler  # noqa: E402


def tcp_line(date, agg=100.0, good=93.5, magg=100.0, mgood=94.0, **kw):
    line = {"bench": "tcp", "desc": "d", "quick": False, "date": date,
            "commit": "abc1234", "code": "c0de00000001", "fail_end": "a",
            "kind": "tcp", "duration": 10.0, "link1": "40mbit,1ms,-", "link2": "20mbit,1ms,-",
            "modes": {
                "mpip": {"mode": "mpip", "aggregate_pct": agg, "goodput_pct": good,
                         "capacity_mbps": 60.0, "split_error_pts": 0.1, "retrans_pct": 0.01},
                "mptcp": {"mode": "mptcp", "aggregate_pct": magg, "goodput_pct": mgood,
                          "capacity_mbps": 60.0, "split_error_pts": 0.2, "retrans_pct": 0.0},
            }}
    line.update(kw)
    return line


class Repo:
    """A scratch repository with the two documents and their markers."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="report-test.")
        os.makedirs(os.path.join(self.root, "Documentation"))
        self.write("README.md", "# x\n\n<!-- perf:begin summary -->\n<!-- perf:end summary -->\n")
        self.write("Documentation/performance.rst",
                   "T\n=\n\n.. perf:begin tcp\n.. perf:end tcp\n\n"
                   ".. perf:begin failover\n.. perf:end failover\n")

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read()

    def results(self, lines, name="results.jsonl"):
        path = os.path.join(self.root, name)
        with open(path, "w", encoding="utf-8") as f:
            for ln in lines:
                f.write(json.dumps(ln) + "\n")
        return path

    def run(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = report.main(["--root", self.root] + list(args))
        return rc, out.getvalue(), err.getvalue()

    def perf(self, bench):
        try:
            with open(os.path.join(self.root, "Documentation", "perf", bench + ".jsonl")) as f:
                return [json.loads(x) for x in f if x.strip()]
        except OSError:
            return []


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.repo = Repo()

    def tearDown(self):
        shutil.rmtree(self.repo.root)

    def test_add_refuses_and_says_why(self):
        lines = [tcp_line("2026-12-01T00:00:00Z", quick=True),
                 tcp_line("2026-12-02T00:00:00Z", commit="abc1234-dirty"),
                 tcp_line("2026-12-03T00:00:00Z", commit="unknown"),
                 tcp_line("2026-12-04T00:00:00Z", settings={"LAB_SYSCTL": "a=1"}),
                 tcp_line("2026-12-05T00:00:00Z", fail_end="b"),
                 tcp_line("2026-12-07T00:00:00Z", code="c0de00000001-dirty")]
        lines.append(tcp_line("2026-12-06T00:00:00Z"))
        lines[-1]["modes"]["mptcp"]["error"] = "iperf3 client: x"
        rc, _, err = self.repo.run("--add", self.repo.results(lines))
        self.assertEqual(rc, 1)
        self.assertEqual(self.repo.perf("tcp"), [])
        for why in ("--quick", "dirty tree", "no commit", "LAB_SYSCTL=a=1", "--fail-end=b",
                    "mptcp: iperf3 client: x", "code id c0de00000001-dirty",
                    "7 lines not added"):
            self.assertIn(why, err)

    def test_add_full_runs_once(self):
        path = self.repo.results([tcp_line("2026-12-01T00:00:00Z")])
        self.assertEqual(self.repo.run("--add", path)[0], 0)
        rc, out, _ = self.repo.run("--add", path)
        self.assertEqual(rc, 0)
        self.assertIn("already in", out)
        self.assertEqual(len(self.repo.perf("tcp")), 1)

    def test_force_adds_and_the_block_says_so(self):
        path = self.repo.results([tcp_line("2026-12-01T00:00:00Z", quick=True)])
        self.assertEqual(self.repo.run("--add", path, "--force")[0], 0)
        self.assertEqual(self.repo.run("--write")[0], 0)
        self.assertIn("**Not the benchmarks' figures: --quick runs", self.repo.read("README.md"))

    def test_median_spread_and_pools(self):
        lines = [tcp_line("2026-12-01T00:00:00Z", agg=90.0, code="old000000000"),
                 tcp_line("2026-12-02T00:00:00Z", agg=97.0, good=92.0, magg=100.0, mgood=93.0),
                 tcp_line("2026-12-03T00:00:00Z", agg=99.0, good=93.0, commit="def5678"),
                 tcp_line("2026-12-04T00:00:00Z", agg=98.0, good=94.0, magg=99.0, mgood=95.0),
                 tcp_line("2026-12-05T00:00:00Z", agg=50.0, quick=True, commit="def5678")]
        path = self.repo.results(lines)
        self.repo.run("--add", path, "--force")
        self.assertEqual(len(self.repo.perf("tcp")), 5)
        rc, out, _ = self.repo.run("--show", "tcp")
        self.assertEqual(rc, 0)
        # the newest pool of full runs: code c0de00000001, three runs of two
        # commits; the older code and the quick run are left out
        flat = " ".join(out.split())
        self.assertIn("3 runs of commits `abc1234` (2), `def5678` (1), the same code", flat)
        self.assertIn("(2 other runs there", flat)
        self.assertIn("| links busy, % of 60 Mbit/s | 98.0 (97.0–99.0) |", out)
        self.assertIn("| goodput, same window, % of 60 Mbit/s | 93.0 (92.0–94.0) |", out)
        # busy and goodput side by side, mode differences within each run
        self.assertLess(out.index("links busy, %"), out.index("goodput, same window"))
        self.assertIn("−1.0 (−3.0 to −1.0)", out)
        self.assertIn("≥ 95: 3 of 3 runs", out)

    def test_a_failed_mode_is_left_out_and_counted(self):
        lines = [tcp_line("2026-12-0%dT00:00:00Z" % d, agg=95.0 + d) for d in (1, 2, 3)]
        lines[1]["modes"]["mptcp"]["error"] = "boom"
        self.repo.run("--add", self.repo.results(lines), "--force")
        out = self.repo.run("--show", "tcp")[1]
        self.assertIn("100.0 (100.0–100.0, 2 runs)", out)
        self.assertIn("MPTCP failed in 1 of the 3 runs", out)

    def test_no_results_said_plainly(self):
        self.assertEqual(self.repo.run("--write")[0], 0)
        self.assertIn("No committed results yet", self.repo.read("README.md"))
        rst = self.repo.read("Documentation/performance.rst")
        self.assertIn("``tcp``: no committed results yet: run ``make bench``, then", rst)
        self.assertIn("``tools/bench/report.py --add results/bench/results.jsonl``", rst)

    def test_failover_lower_bound(self):
        line = {"bench": "failover", "quick": False, "date": "2026-12-01T00:00:00Z",
                "commit": "abc1234", "code": "c0de00000001", "kind": "failover",
                "duration": 30.0, "link1": "40mbit,1ms,-", "link2": "40mbit,1ms,-",
                "modes": {"mpip": {"stall_s": 0.2, "link2_back_s": 0.1},
                          "mptcp": {"stall_s": 1.5, "link2_back_s": None,
                                    "link2_back_none_s": 9.9}}}
        self.repo.run("--add", self.repo.results([line]))
        out = self.repo.run("--show", "failover", "--format", "rst")[1]
        self.assertIn("> 9.90", out)

    def test_check_fails_with_a_diff_and_write_fixes_it(self):
        self.repo.run("--add", self.repo.results([tcp_line("2026-12-01T00:00:00Z")]))
        rc, out, _ = self.repo.run("--check", "--ktap")
        self.assertEqual(rc, 1)
        self.assertIn("not ok 2 README.md: summary", out)
        self.assertIn("# +| `tcp` |", out)
        # (the summary, tcp and failover blocks, now no longer empty)
        self.assertTrue(out.rstrip().endswith("perfdocs: 3 passed, 3 failed"), out)
        self.assertEqual(self.repo.run("--write")[0], 0)
        rc, out, _ = self.repo.run("--check", "--ktap")
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.rstrip().endswith("perfdocs: 6 passed, 0 failed"))
        # a hand edit inside a block is caught
        self.repo.write("README.md", self.repo.read("README.md").replace("93.5", "95.3"))
        self.assertEqual(self.repo.run("--check")[0], 1)

    def test_broken_markers(self):
        self.repo.write("README.md", "<!-- perf:begin summary -->\n<!-- perf:begin tcp -->\n"
                        "<!-- perf:end tcp -->\n<!-- perf:end nope -->\n")
        rc, out, _ = self.repo.run("--check", "--ktap")
        self.assertEqual(rc, 1)
        self.assertIn("has no matching end marker", out)
        self.assertIn("without its begin", out)
        before = self.repo.read("README.md")
        self.assertEqual(self.repo.run("--write")[0], 1)
        self.assertEqual(self.repo.read("README.md"), before)

    def test_broken_result_file(self):
        os.makedirs(os.path.join(self.repo.root, "Documentation", "perf"))
        self.repo.write("Documentation/perf/tcp.jsonl", '{"bench": "udp", "date": "x"}\nnot json\n')
        self.repo.run("--write")
        rc, out, _ = self.repo.run("--check", "--ktap")
        self.assertEqual(rc, 1)
        self.assertIn("not ok 1 result files", out)



class CombineRepsTest(unittest.TestCase):
    """analyze.combine_reps(): a mode's rounds give medians, not the first
    round's figures (the goodput of the NAT tables was the first round's)."""

    def test_goodput_is_the_median_of_the_rounds(self):
        rounds = [{"goodput_pct": g, "goodput_mbps": g * 0.6, "aggregate_pct": a}
                  for g, a in ((75.6, 83.0), (84.2, 91.5), (81.7, 88.9))]
        m = analyze.combine_reps(rounds)
        self.assertEqual(m["goodput_pct"], 81.7)
        self.assertEqual((m["goodput_pct_min"], m["goodput_pct_max"]), (75.6, 84.2))
        self.assertEqual(m["goodput_mbps"], round(81.7 * 0.6, 2))
        self.assertEqual(m["aggregate_pct"], 88.9)
        self.assertEqual([r["goodput_pct"] for r in m["runs"]], [75.6, 84.2, 81.7])

    def test_every_number_is_the_median(self):
        """The receiver's rx aggregate and the counters were the first
        round's (aggregate_rx_pct of the natdown table)."""
        rounds = [{"aggregate_rx_pct": a, "tx_steered": n, "note": t,
                   "mptcp_verified": True}
                  for a, n, t in ((92.2, 2072, "x"), (96.7, 2250, "y"),
                                  (98.8, 2100, "z"))]
        m = analyze.combine_reps(rounds)
        self.assertEqual(m["aggregate_rx_pct"], 96.7)
        self.assertEqual((m["aggregate_rx_pct_min"], m["aggregate_rx_pct_max"]),
                         (92.2, 98.8))
        self.assertEqual(m["tx_steered"], 2100)
        self.assertEqual(m["note"], "x")
        self.assertIs(m["mptcp_verified"], True)


class SummaryTest(unittest.TestCase):
    """analyze.summary_md(): a table has a row per figure (the NAT
    benchmarks' tables had none: kind "nat" was missing from ROWS)."""

    def test_nat_table_has_goodput(self):
        # (natrev's and the others' had no rows until 2026-12-06)
        for kind in ("nat", "natrev", "natdown", "natgso0", "natrevgso0", "natloss", "natmtu"):
            line = {"bench": kind, "kind": kind, "duration": 10.0, "reps": 3,
                    "modes": {"mpip": {"goodput_pct": 91.8, "reps": 3,
                                       "goodput_pct_min": 91.7,
                                       "goodput_pct_max": 92.0,
                                       "cpu_max_pct": 93.5},
                              "mptcp": {"goodput_pct": 93.8}}}
            md = analyze.summary_md([line])
            row = [x for x in md.splitlines()
                   if x.startswith("| goodput, same window")]
            self.assertEqual(len(row), 1, md)
            self.assertIn("91.8 (91.7–92.0)", row[0])
            self.assertIn("93.8", row[0])
            row = [x for x in md.splitlines() if x.startswith("| busiest guest CPU")]
            self.assertEqual(len(row), 1, md)
            self.assertIn("93.5", row[0])
            # mpip's CPU was the limit, MPTCP's (not sampled) was not said to be
            self.assertIn("- mpip: the busiest guest CPU was 93.5 % busy", md)
            self.assertNotIn("- mptcp: the busiest", md)


class CpuTest(unittest.TestCase):
    """The guest's CPU busy over a run's window: sampler.py's /proc/stat
    columns, read by analyze.Run.cpu_busy_pct()."""

    def test_read_cpu(self):
        with tempfile.NamedTemporaryFile("w", suffix=".stat") as f:
            f.write("cpu  100 5 50 800 40 3 2 0 7 0\n"
                    "cpu0 60 5 30 390 20 2 1 0 7 0\n"
                    "cpu1 40 0 20 410 20 1 1 0 0 0\nintr 5 1 2\n")
            f.flush()
            fd = os.open(f.name, os.O_RDONLY)
            try:
                # busy: user nice system irq softirq steal; guest is in user
                self.assertEqual(sampler.read_cpu(fd),
                                 {"cpu": (160, 1000), "cpu0": (98, 508),
                                  "cpu1": (62, 492)})
            finally:
                os.close(fd)

    def test_busy_over_the_window(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"kind": "tcp", "duration": 4, "warmup": 1}, f)
        with open(os.path.join(d, "events.txt"), "w") as f:
            f.write("100.0 flowing\n104.0 end\n")
        cols = ("eth1.rx_bytes eth2.rx_bytes cpu.busy cpu.total cpu0.busy "
                "cpu0.total cpu1.busy cpu1.total")
        with open(os.path.join(d, "sb.txt"), "w") as f:
            f.write("# t " + cols + "\n")
            # idle until t=101; to 103 CPU 0 busy all the time, CPU 1 half;
            # to 104 CPU 1 busy all the time, CPU 0 idle
            for t, b0, t0, b1, t1 in ((100, 0, 0, 0, 0), (101, 5, 50, 5, 50),
                                      (103, 105, 150, 55, 150),
                                      (104, 105, 200, 105, 200)):
                f.write("%d 0 0 %d %d %d %d %d %d\n"
                        % (t, b0 + b1, t0 + t1, b0, t0, b1, t1))
        run = analyze.Run(d)
        self.assertEqual(run.window(), (101.0, 104.0))
        self.assertAlmostEqual(run.cpu_busy_pct(run.window()), 200 / 300 * 100)
        self.assertAlmostEqual(run.cpu_busy_pct((101.0, 103.0)), 75.0)
        # the busiest CPU: all the time, though not the same one
        self.assertAlmostEqual(run.cpu_max_pct(run.window()), 100.0)
        m = run.metrics()
        self.assertEqual((m["cpu_busy_pct"], m["cpu_max_pct"]), (66.7, 100.0))

    def test_not_sampled(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "sb.txt"), "w") as f:
            f.write("# t eth1.rx_bytes eth2.rx_bytes\n1 0 0\n2 5 5\n")
        self.assertIsNone(analyze.Run(d).cpu_busy_pct((1.0, 2.0)))
        self.assertIsNone(analyze.Run(d).cpu_max_pct((1.0, 2.0)))


class SenderRttTest(unittest.TestCase):
    """analyze.Run.sender_rtt_ms(): the sender's sockets on the iperf3
    port, weighted by what each had acknowledged."""

    SS = ("ESTAB 0 0 [::ffff:10.1.1.1]:40000 [::ffff:10.1.1.2]:5201\n"
          "\t cubic rtt:200.0/1.0 mss:1448 bytes_acked:3000 minrtt:10.0\n"
          "ESTAB 0 0 [::ffff:10.1.2.1]:40001 [::ffff:10.1.2.2]:5201\n"
          "\t cubic rtt:40.0/1.0 mss:1448 bytes_acked:1000 minrtt:14.0\n"
          "ESTAB 0 0 [::ffff:10.1.1.1]:40002 [::ffff:10.1.1.2]:5201\n"
          "\t cubic rtt:900.0/1.0 bytes_acked:0 minrtt:900.0\n"
          "ESTAB 0 0 [::ffff:10.1.1.1]:22 [::ffff:10.1.1.9]:50000\n"
          "\t cubic rtt:500.0/1.0 bytes_acked:99999 minrtt:1.0\n")

    def run_dir(self, meta, name):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump(meta, f)
        with open(os.path.join(d, name), "w") as f:
            f.write(self.SS)
        return analyze.Run(d)

    def test_forward_reads_a(self):
        run = self.run_dir({"kind": "tcp"}, "ss-mid.txt")
        rtt, minrtt = run.sender_rtt_ms()
        self.assertAlmostEqual(rtt, (3000 * 200.0 + 1000 * 40.0) / 4000)
        self.assertAlmostEqual(minrtt, (3000 * 10.0 + 1000 * 14.0) / 4000)

    def test_reverse_reads_b(self):
        self.assertIsNone(self.run_dir({"kind": "tcp", "reverse": True},
                                       "ss-mid.txt").sender_rtt_ms())
        run = self.run_dir({"kind": "tcp", "reverse": True}, "ss-b-mid.txt")
        self.assertAlmostEqual(run.sender_rtt_ms()[0], 160.0)


class StartsTest(unittest.TestCase):
    """analyze.Run on a natstart run (tools/bench/lib.sh: lab_starts)."""

    def run_dir(self, downloads, want):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"kind": "starts", "tag": "natstart", "mode": "mpip-udp",
                       "downloads": want, "size": "2M"}, f)
        with open(os.path.join(d, "starts.jsonl"), "w") as f:
            for x in downloads:
                f.write(json.dumps(x) + "\n")
        return analyze.Run(d).metrics()

    @staticmethod
    def dl(mbps, ofo=0, retrans=0, dsack=0):
        return {"mbps": mbps, "bytes": 2097152, "seconds": 0.4, "ofo": ofo,
                "mptcp_ofo": 0, "retrans": retrans, "dsack": dsack,
                "reorder_lost": 0, "tx_resend": retrans}

    def test_counts_totals_and_median(self):
        m = self.run_dir([self.dl(40.0), self.dl(50.0, ofo=3, retrans=1, dsack=1),
                          self.dl(30.0, ofo=2)], 3)
        self.assertEqual(m["kind"], "natstart")
        self.assertNotIn("error", m)
        self.assertEqual((m["mbps"], m["mbps_min"], m["mbps_max"]), (40.0, 30.0, 50.0))
        self.assertEqual((m["ofo_downloads"], m["ofo_segs"]), (2, 5))
        self.assertEqual((m["retrans_downloads"], m["retrans_segs"]), (1, 1))
        self.assertEqual((m["dsack_downloads"], m["dsack_segs"]), (1, 1))
        self.assertEqual(m["size_mb"], 2.1)
        self.assertIn("3 downloads", analyze.run_line(m))

    def test_missing_downloads_are_an_error(self):
        self.assertEqual(self.run_dir([self.dl(40.0)], 20)["error"], "1 of 20 downloads")
        self.assertEqual(self.run_dir([], 20)["error"], "no downloads")


if __name__ == "__main__":
    unittest.main()
