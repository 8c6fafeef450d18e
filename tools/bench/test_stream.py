#!/usr/bin/python3
"""Tests of tools/bench/stream.py: its figures on made-up delays, and a
short stream over the loopback device, TCP and UDP (standard library
only):

    python3 tools/bench/test_stream.py [-v]
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stream  # noqa: E402

STREAM = os.path.join(HERE, "stream.py")


def free_port(kind):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_receiver(test, proto, size):
    """A stream.py receiver on a free loopback port, ready: (Popen, port,
    its output file)."""
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    port = free_port(kind)
    d = tempfile.mkdtemp(prefix="stream-test.")
    out, ready = os.path.join(d, "out"), os.path.join(d, "ready")
    recv = subprocess.Popen([sys.executable, STREAM, "recv", "--proto", proto,
                             "--port", str(port), "--out", out, "--ready", ready,
                             "--size", str(size)])
    for _ in range(200):
        if os.path.exists(ready) or recv.poll() is not None:
            break
        time.sleep(0.05)
    if not os.path.exists(ready):
        recv.kill()
        test.fail("receiver not ready")
    return recv, port, out


class Summary(unittest.TestCase):
    def test_figures(self):
        # messages 0..9 sent 1 ms apart, 3 and 7 lost, 5 twice (the first
        # copy counts); delays 10 ms, and 30 ms for 8
        rows = [(i, i * 10**6, 30000 if i == 8 else 10000)
                for i in range(10) if i not in (3, 7)]
        rows.append((5, 5 * 10**6, 99000))
        s = stream.summarize(rows)
        self.assertEqual(s["received"], 8)
        self.assertEqual(s["lost"], 2)
        self.assertEqual(s["delay_median_ms"], 10.0)
        self.assertEqual(s["delay_p99_ms"], 30.0)
        # pairs (1,0) (2,1) (5,4) (6,5) (9,8): one step of 20 ms in five
        self.assertAlmostEqual(s["jitter_ms"], 4.0)

    def test_window(self):
        rows = [(i, i * 10**6, 1000 * (i + 1)) for i in range(10)]
        s = stream.summarize(rows, 2 * 10**6, 5 * 10**6)
        self.assertEqual((s["received"], s["lost"]), (3, 0))
        self.assertEqual(s["delay_median_ms"], 4.0)
        self.assertEqual(stream.summarize(rows, 20 * 10**6), {"received": 0})

    def test_goodput(self):
        # 1000-byte messages sent 1 ms apart, each 2 ms on its way: those
        # that arrived in [10, 20) ms are messages 8..17
        rows = [(i, i * 10**6, 2000) for i in range(30)]
        self.assertAlmostEqual(stream.goodput_mbps(rows, 1000, 10 * 10**6, 20 * 10**6), 8.0)
        self.assertEqual(stream.goodput_mbps(rows, 1000, 5, 5), 0.0)

    def test_percentile(self):
        v = list(range(1, 101))
        self.assertEqual(stream.percentile(v, 0.5), 50)
        self.assertEqual(stream.percentile(v, 0.95), 95)
        self.assertEqual(stream.percentile([7], 0.99), 7)
        self.assertIsNone(stream.percentile([], 0.5))


class Loopback(unittest.TestCase):
    def run_stream(self, proto):
        recv, port, out = start_receiver(self, proto, 200)
        try:
            # 200-byte messages at 160 kbit/s: one every 10 ms, 50 in 0.5 s
            subprocess.run([sys.executable, STREAM, "send", "--proto", proto,
                            "127.0.0.1", str(port), "--rate", "160000",
                            "--seconds", "0.5", "--size", "200"],
                           check=True, timeout=60)
            if proto == "udp":
                time.sleep(0.5)
                recv.send_signal(signal.SIGTERM)
            self.assertEqual(recv.wait(timeout=60), 0)
        finally:
            if recv.poll() is None:
                recv.kill()
        got_proto, size, rows = stream.read_file(out)
        self.assertEqual((got_proto, size), (proto, 200))
        self.assertEqual(sorted(r[0] for r in rows), list(range(50)))
        sent = [r[1] for r in sorted(rows)]
        # paced: the last message went out about 490 ms after the first
        self.assertGreaterEqual(sent[-1] - sent[0], 480 * 10**6)
        for _seq, _sent, delay in rows:
            self.assertGreaterEqual(delay, 0)
        s = stream.summarize(rows)
        self.assertEqual((s["received"], s["lost"]), (50, 0))

    def test_tcp(self):
        self.run_stream("tcp")

    def test_bulk(self):
        recv, port, out = start_receiver(self, "tcp", 8000)
        try:
            subprocess.run([sys.executable, STREAM, "send", "--proto", "tcp",
                            "127.0.0.1", str(port), "--rate", "0",
                            "--seconds", "0.3", "--size", "8000"],
                           check=True, timeout=60)
            self.assertEqual(recv.wait(timeout=60), 0)
        finally:
            if recv.poll() is None:
                recv.kill()
        _proto, _size, rows = stream.read_file(out)
        # unpaced: far more than a paced stream's handful, in order, none lost
        self.assertGreater(len(rows), 100)
        self.assertEqual([r[0] for r in rows], list(range(len(rows))))
        sent = [r[1] for r in rows]
        self.assertLess(sent[-1] - sent[0], 2 * 10**9)

    def test_abort(self):
        # SIGTERM ends an unpaced sender early; --abort resets the
        # connection, and the receiver ends as for a close
        recv, port, out = start_receiver(self, "tcp", 8000)
        send = None
        try:
            send = subprocess.Popen([sys.executable, STREAM, "send", "--proto", "tcp",
                                     "127.0.0.1", str(port), "--rate", "0",
                                     "--seconds", "600", "--size", "8000", "--abort"])
            time.sleep(1)
            t = time.monotonic()
            send.send_signal(signal.SIGTERM)
            self.assertEqual(send.wait(timeout=60), 0)
            self.assertEqual(recv.wait(timeout=60), 0)
            self.assertLess(time.monotonic() - t, 30)
        finally:
            for p in (send, recv):
                if p is not None and p.poll() is None:
                    p.kill()
        rows = stream.read_file(out)[2]
        self.assertGreater(len(rows), 0)
        self.assertEqual([r[0] for r in rows], list(range(len(rows))))

    def test_bad_args(self):
        for args in (["--rate", "0", "--proto", "udp"], ["--rate", "-1", "--proto", "tcp"]):
            r = subprocess.run([sys.executable, STREAM, "send", "127.0.0.1", "9",
                                "--seconds", "1"] + args, capture_output=True)
            self.assertEqual(r.returncode, 2, args)

    def test_udp(self):
        self.run_stream("udp")


if __name__ == "__main__":
    unittest.main()
