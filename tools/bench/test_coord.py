#!/usr/bin/python3
"""Tests of tools/coord/analyze.py on made-up runs: the figures of one
run's phases, and the median with its spread over several runs of a mode
(standard library only):

    python3 tools/bench/test_coord.py [-v]
"""
import importlib.util
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
# tools/coord/analyze.py under a name of its own: tools/bench has an
# analyze.py too, which the other tests here import
_spec = importlib.util.spec_from_file_location(
    "coord_analyze", os.path.join(HERE, "..", "coord", "analyze.py"))
analyze = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(analyze)

S = 10**9


def write_run(d, mode, delay_ms, lose=()):
    """A run in D of three 30 s phases: a stream message every 10 ms, each
    DELAY_MS late (its number in LOSE: never arrived), and a download
    message of 8000 bytes every 40 ms in the first two phases."""
    os.makedirs(d)
    run = {"mode": mode, "phase_s": 30, "rate": "2mbit", "stream_size": 1000,
           "bulk_size": 8000, "t_ns": [0, 30 * S, 60 * S, 90 * S],
           "b_tx_bytes": [[0, 0], [7500000, 0], [15000000, 3750000],
                          [18750000, 3750000]]}
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(run, f)
    with open(os.path.join(d, "stream.txt"), "w") as f:
        f.write("# stream udp 1000\n")
        for seq in range(9000):
            if seq not in lose:
                f.write("%d %d %d\n" % (seq, seq * 10**7, delay_ms * 1000))
    with open(os.path.join(d, "bulk.txt"), "w") as f:
        f.write("# stream tcp 8000\n")
        for seq in range(1500):
            f.write("%d %d %d\n" % (seq, seq * 4 * 10**7, 1000))


class Coord(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="coord-test.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_one_run_figures(self):
        write_run(os.path.join(self.dir, "mpip"), "mpip", 12,
                  lose=range(1000, 1100))
        res = analyze.load([self.dir])
        self.assertEqual(list(res), ["mpip"])
        figs = res["mpip"][0][3]
        self.assertAlmostEqual(figs["all"]["delay_median_ms"], 12.0)
        self.assertAlmostEqual(figs["all"]["jitter_ms"], 0.0)
        # 100 of the 2500 messages after the first 5 s
        self.assertAlmostEqual(figs["all"]["lost_pct"], 4.0)
        self.assertAlmostEqual(figs["coord"]["stream_mbps"], 0.8, places=2)
        self.assertAlmostEqual(figs["coord"]["bulk_mbps"], 1.6, places=2)
        # the download's last message arrived at 60.001 s: from then on
        self.assertAlmostEqual(figs["alone"]["bulk_mbps"], 0.0)
        self.assertAlmostEqual(figs["all"]["link1_mbps"], 2.0)
        self.assertAlmostEqual(figs["coord"]["link2_mbps"], 1.0)

    def test_runs_give_median_and_spread(self):
        for k, ms in ((1, 10), (2, 30), (3, 20)):
            write_run(os.path.join(self.dir, "r%d" % k, "mpip"), "mpip", ms)
        write_run(os.path.join(self.dir, "r1", "off"), "off", 250)
        res = analyze.load([self.dir])
        self.assertEqual([len(res[m]) for m in ("off", "mpip")], [1, 3])
        agg = analyze.aggregate(res)
        v = agg["mpip"]["all"]["delay_median_ms"]
        self.assertEqual((v["median"], v["min"], v["max"], v["runs"]),
                         (20.0, 10.0, 30.0, 3))
        rows = {(r[0], r[1]): r for r in analyze.table_rows(res)}
        self.assertEqual(rows[("mpip (3 runs)", "all")][2], "20.0 (10.0-30.0)")
        self.assertEqual(rows[("off", "all")][2], "250.0")

    def test_runs_from_several_dirs(self):
        other = tempfile.mkdtemp(prefix="coord-test.")
        self.addCleanup(shutil.rmtree, other)
        write_run(os.path.join(self.dir, "mpip"), "mpip", 10)
        write_run(os.path.join(other, "mpip"), "mpip", 14)
        with redirect_stdout(io.StringIO()) as out:
            self.assertEqual(analyze.main([self.dir, other]), 0)
        self.assertIn("12.0 (10.0-14.0)", out.getvalue())
        with open(os.path.join(self.dir, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(len(summary["mpip"]["runs"]), 2)
        self.assertEqual(summary["mpip"]["spread"]["coord"]["delay_median_ms"]["median"], 12.0)

    def test_mode_mismatch_refused(self):
        write_run(os.path.join(self.dir, "mpip"), "off", 10)
        with self.assertRaises(ValueError):
            analyze.load([self.dir])

    def test_no_run_fails(self):
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(analyze.main([self.dir]), 1)
            self.assertEqual(analyze.main(["--bogus", self.dir]), 2)
        self.assertIn("no run", err.getvalue())


if __name__ == "__main__":
    unittest.main()
