# SPDX-License-Identifier: GPL-2.0
"""Tests of the python CM trailer layer against the C encoder.

Run from the repository root:  /usr/bin/python3 tests/scapy/run.py
(or python3 -m unittest discover -s tests/scapy)
"""

import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mpip_cm as m  # noqa: E402

from scapy.layers.inet import IP, TCP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
UNIT = os.path.join(ROOT, "tests", "unit")
VECTORS = os.path.join(UNIT, "build", "cm_vectors")

FIELDS = ("node_id", "session_id", "path_id", "fb_path_id", "timestamp_us",
          "path_delay_us", "flags", "xflags", "naddrs", "addrs", "length",
          "csum_adjust", "check")


def c_vectors():
    """The C encoder's vectors; builds tests/unit/build/cm_vectors if
    needed.  Raises if it cannot be built or run: these tests are the only
    check that the layer matches the kernel's encoder, so they fail rather
    than skip."""
    if not os.access(VECTORS, os.X_OK):
        r = subprocess.run(["make", "-s", "-C", UNIT, "build/cm_vectors"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           check=False)
        if r.returncode or not os.access(VECTORS, os.X_OK):
            raise RuntimeError("cannot build %s:\n%s"
                               % (VECTORS, r.stdout.decode(errors="replace")))
    out = subprocess.run([VECTORS], stdout=subprocess.PIPE, check=True)
    return [json.loads(line) for line in out.stdout.decode().splitlines()]


def random_fields(rng, naddrs=None):
    if naddrs is None:
        naddrs = rng.randrange(m.MAX_ADDRS + 1)
    return {
        "node_id": rng.getrandbits(32),
        "session_id": rng.getrandbits(16),
        "path_id": rng.getrandbits(8),
        "fb_path_id": rng.getrandbits(8),
        "timestamp_us": rng.getrandbits(32),
        "path_delay_us": rng.getrandbits(32),
        "flags": rng.getrandbits(8),
        "xflags": rng.getrandbits(4),
        "addrs": ["%d.%d.%d.%d" % tuple(rng.getrandbits(8) for _ in range(4))
                  for _ in range(naddrs)],
    }


class CrcTest(unittest.TestCase):
    def test_known_vectors(self):
        self.assertEqual(m.crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(m.crc32c(b""), 0)
        self.assertEqual(m.crc32c(bytes(32)), 0x8A9136AA)
        self.assertEqual(m.crc32c(b"\xff" * 32), 0x62A8AB43)
        self.assertEqual(m.crc32c(bytes(range(32))), 0x46DD794E)
        self.assertEqual(m.crc32c(bytes(range(31, -1, -1))), 0x113FDB5C)
        self.assertEqual(
            m.crc32c(b"The quick brown fox jumps over the lazy dog"),
            0x22620404)

    def test_chaining(self):
        data = bytes(random.Random(1).getrandbits(8) for _ in range(100))
        for split in range(len(data) + 1):
            self.assertEqual(m.crc32c(data[split:], m.crc32c(data[:split])),
                             m.crc32c(data))


class CVectorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vectors = c_vectors()

    def test_have_vectors(self):
        self.assertGreaterEqual(len(self.vectors), 8)
        self.assertEqual({v["naddrs"] for v in self.vectors},
                         set(range(m.MAX_ADDRS + 1)))

    def test_layer_decodes_c_vectors(self):
        for v in self.vectors:
            raw = bytes.fromhex(v["hex"])
            with self.subTest(hex=v["hex"]):
                self.assertEqual(m.validate(raw), 0)
                d = m.MPIPTrailer(raw).to_dict()
                for f in FIELDS:
                    self.assertEqual(d[f], v[f], f)
                self.assertEqual(m.decode(raw), d)
                self.assertEqual(len(raw), v["length"])

    def test_python_encodes_like_c(self):
        for v in self.vectors:
            args = {f: v[f] for f in ("node_id", "session_id", "path_id",
                                      "fb_path_id", "timestamp_us",
                                      "path_delay_us", "flags", "addrs",
                                      "xflags")}
            with self.subTest(hex=v["hex"]):
                self.assertEqual(m.encode(**args).hex(), v["hex"])
                self.assertEqual(bytes(m.MPIPTrailer(**args)).hex(),
                                 v["hex"])

    def test_flag_names(self):
        for v in self.vectors:
            names = m.MPIPTrailer(bytes.fromhex(v["hex"])).flag_names()
            bits = sum(1 << m.FLAG_NAMES.index(n) for n in names)
            self.assertEqual(bits, v["flags"])


class PythonCodecTest(unittest.TestCase):
    def test_round_trip_and_sum(self):
        rng = random.Random(2)
        for i in range(2000):
            f = random_fields(rng, i % (m.MAX_ADDRS + 1))
            raw = m.encode(**f)
            self.assertEqual(len(raw), 28 + 4 * len(f["addrs"]))
            self.assertEqual(m.validate(raw), 0)
            self.assertEqual(m.ones_sum(raw), m.CSUM_SUM)
            self.assertNotEqual(raw[-12:-10], b"\0\0")
            self.assertEqual(m.ones_sum(b"\0" + raw), 0x0040)  # odd offset
            d = m.decode(raw)
            for k, val in f.items():
                self.assertEqual(d[k], val, k)
            self.assertEqual(bytes(m.MPIPTrailer(raw)), raw)

    def test_limits(self):
        for val in (0, 0xFFFFFFFF):
            f = {"node_id": val, "session_id": val & 0xFFFF,
                 "path_id": val & 0xFF, "fb_path_id": val & 0xFF,
                 "timestamp_us": val, "path_delay_us": val,
                 "flags": val & 0xFF}
            for n in range(m.MAX_ADDRS + 1):
                raw = m.encode(addrs=["255.255.255.255"] * n, **f)
                self.assertEqual(m.validate(raw), 0)
        with self.assertRaises(m.MPIPError):
            m.encode(addrs=["1.2.3.4"] * 9)
        with self.assertRaises(m.MPIPError):
            m.encode(xflags=16)

    def test_sole_flag_shares_the_count_byte(self):
        raw = m.encode(node_id=7, flags=m.F_ORIG, xflags=m.X_SOLE,
                       addrs=["10.0.0.1", "10.0.0.2"])
        self.assertEqual(raw[-9], 0x12)
        d = m.decode(raw)
        self.assertEqual((d["naddrs"], d["xflags"]), (2, m.X_SOLE))
        self.assertEqual(bytes(m.MPIPTrailer(
            node_id=7, flags="ORIG", xflags=m.X_SOLE,
            addrs=["10.0.0.1", "10.0.0.2"])), raw)

    def test_every_bit_flip_rejected(self):
        rng = random.Random(3)
        for n in range(m.MAX_ADDRS + 1):
            raw = bytearray(m.encode(**random_fields(rng, n)))
            t = len(raw)
            expect = {t - 9: m.E_ADDRS, t - 8: m.E_MAGIC, t - 7: m.E_VERSION,
                      t - 6: m.E_LENGTH, t - 5: m.E_LENGTH}
            for i in range(t):
                for bit in range(8):
                    raw[i] ^= 1 << bit
                    # the count byte's high nibble: flags, checked by CRC
                    want = expect.get(i, m.E_CHECK)
                    if i == t - 9 and bit >= 4:
                        want = m.E_CHECK
                    self.assertEqual(m.validate(raw), want, (n, i, bit))
                    raw[i] ^= 1 << bit

    def test_rejection_classes(self):
        raw = bytearray(m.encode(node_id=7, addrs=["10.0.0.1", "10.0.0.2"]))
        t = len(raw)
        for k in range(28):
            self.assertEqual(m.validate(raw[-k:] if k else b""), m.E_SHORT)
        self.assertEqual(m.validate(raw[4:]), m.E_LENGTH)
        self.assertEqual(m.validate(b"\0\0\0\0" + raw), m.E_LENGTH)
        bad = bytearray(raw)
        bad[t - 9] = 3  # truncated address list: 3 claimed, 2 present
        bad[t - 4:] = struct.pack("!I", m.trailer_check(bad))
        bad[t - 12:t - 10] = struct.pack("!H", m.trailer_adjust(bad))
        self.assertEqual(m.validate(bad), m.E_ADDRS)
        self.assertEqual(m.peek(raw[-8:], t - 4), m.E_LENGTH)
        self.assertEqual(m.peek(raw[-8:], t), t)


class PacketTest(unittest.TestCase):
    def trailer(self, **kw):
        return m.MPIPTrailer(node_id=0x11223344, session_id=9, path_id=1,
                             timestamp_us=123, **kw)

    def test_udp_surplus_area(self):
        for plen in (0, 1, 2, 3, 100, 1001):
            p = IP(src="10.0.1.1", dst="10.0.2.1") / \
                UDP(sport=4000, dport=5001) / Raw(b"x" * plen)
            q = m.add(p, self.trailer(flags="ENABLE"))
            self.assertEqual(q[UDP].len, 8 + plen)
            self.assertEqual(q.len, 20 + 8 + plen + 28)
            tr = m.find_trailer(q)
            self.assertIsNotNone(tr)
            self.assertEqual(tr.flag_names(), ["ENABLE"])
            self.assertEqual(tr.node_id, 0x11223344)
            self.assertEqual(bytes(m.strip(q)), bytes(p))
            self.assertTrue(m.l4_checksum_ok(q))
            self.assertIsNone(m.find_trailer(p))
            # The same bytes inside the UDP payload are not a trailer.
            inner = IP(src="10.0.1.1", dst="10.0.2.1") / \
                UDP(sport=4000, dport=5001) / \
                Raw(b"x" * plen + bytes(self.trailer()))
            self.assertIsNone(m.find_trailer(inner))
            # Nor is a trailer followed by more surplus bytes.
            self.assertIsNone(m.find_trailer(m.add(q, b"\0\0\0\0")))

    def test_tcp_segment(self):
        for plen in (0, 1, 2, 3, 1000, 1001):
            p = IP(src="10.0.1.1", dst="10.0.2.1") / \
                TCP(sport=4000, dport=5001, flags="PA") / Raw(b"y" * plen)
            tr = self.trailer(addrs=["10.0.1.1", "10.0.3.1"])
            q = m.add(p, tr)
            self.assertEqual(bytes(m.find_trailer(q)), bytes(tr))
            self.assertEqual(bytes(m.strip(q)), bytes(p))
            # Valid without the trailer, invalid with it, at both parities.
            self.assertTrue(m.l4_checksum_ok(q))
            self.assertFalse(m.l4_checksum_ok(q, without_trailer=False))

    def test_kept_gso_and_other_protocols(self):
        p = IP(src="10.0.1.1", dst="10.0.2.1") / \
            TCP(sport=4000, dport=5001, flags="PA") / Raw(b"y" * 3000)
        plain = bytes(p)
        tr = bytes(self.trailer())
        # A kept GSO packet: protocol 253, the CM between IP and TCP header.
        raw = bytearray(plain[:20] + tr + plain[20:])
        raw[9] = m.IPPROTO_MPIP_GSO
        raw[2:4] = struct.pack("!H", len(raw))
        raw[10:12] = b"\0\0"
        raw[10:12] = struct.pack("!H", m.internet_checksum(raw[:20]))
        self.assertEqual(bytes(m.find_trailer(bytes(raw))), tr)
        self.assertEqual(m.l4_offset(bytes(raw)), 20 + len(tr))
        # Stripped, it is the TCP packet again.
        self.assertEqual(bytes(m.strip(bytes(raw))), bytes(IP(plain)))
        # Its checksum is pending: not checked.
        self.assertIsNone(m.l4_checksum_ok(bytes(raw)))
        # The same CM at the tail of a protocol-253 packet is not one.
        tail = bytearray(plain + tr)
        tail[9] = m.IPPROTO_MPIP_GSO
        tail[2:4] = struct.pack("!H", len(tail))
        tail[10:12] = b"\0\0"
        tail[10:12] = struct.pack("!H", m.internet_checksum(tail[:20]))
        self.assertIsNone(m.find_trailer(bytes(tail)))
        # Any other protocol never carries a trailer.
        raw[9] = 1
        raw[10:12] = b"\0\0"
        raw[10:12] = struct.pack("!H", m.internet_checksum(raw[:20]))
        self.assertIsNone(m.find_trailer(bytes(raw)))

    def test_with_ethernet_padding(self):
        p = Ether() / IP(src="10.0.1.1", dst="10.0.2.1") / \
            UDP(sport=1, dport=2)
        q = Ether() / m.add(p[IP], self.trailer())
        frame = Ether(bytes(q) + b"\0" * 6)  # padding beyond the IP length
        self.assertIsNotNone(m.find_trailer(frame))

    def test_fragments_ignored(self):
        p = IP(src="10.0.1.1", dst="10.0.2.1", flags="MF") / \
            UDP(sport=1, dport=2) / Raw(b"z" * 8)
        self.assertIsNone(m.find_trailer(m.add(p, self.trailer())))

    def test_corrupt_trailer_ignored(self):
        p = IP(src="10.0.1.1", dst="10.0.2.1") / UDP(sport=1, dport=2)
        raw = bytearray(bytes(m.add(p, self.trailer())))
        raw[30] ^= 1
        self.assertIsNone(m.find_trailer(bytes(raw)))

    def test_udp_confirmation(self):
        tr = self.trailer(flags="ENABLED+CTRL", addrs=["10.0.2.1"])
        c = m.udp_confirmation("10.0.2.1", "10.0.1.1", 5001, 4000, tr)
        self.assertEqual(c[UDP].len, 8)
        self.assertEqual(c.len, 20 + 8 + 32)
        self.assertEqual(m.find_trailer(c).flag_names(), ["ENABLED", "CTRL"])
        self.assertFalse(m.l4_checksum_ok(c))
        good = UDP(bytes(m.strip(c)[UDP]))
        good.chksum = None
        fixed = IP(bytes(IP(src="10.0.2.1", dst="10.0.1.1") / good))
        self.assertTrue(m.l4_checksum_ok(fixed))
        self.assertNotEqual(c[UDP].chksum, 0)
        self.assertEqual(c[UDP].chksum ^ fixed[UDP].chksum, 0x8000)

    def test_tcp_control_packet(self):
        seg = IP(src="10.0.1.1", dst="10.0.2.1") / \
            TCP(sport=4000, dport=5001, seq=1000, ack=2000, flags="PA",
                options=[("NOP", None), ("NOP", None),
                         ("Timestamp", (1, 2))]) / Raw(b"data" * 10)
        c = m.control_packet(seg, self.trailer(flags="ENABLE+CTRL"))
        self.assertEqual(str(c[TCP].flags), "A")
        self.assertEqual((c[TCP].seq, c[TCP].ack), (1000, 2000))
        self.assertEqual(c.len, 20 + 32 + 28)
        self.assertEqual(m.find_trailer(c).flag_names(), ["ENABLE", "CTRL"])
        self.assertTrue(m.l4_checksum_ok(c))
        self.assertFalse(m.l4_checksum_ok(c, without_trailer=False))


class DecodePcapTest(unittest.TestCase):
    def test_decode_pcap_json(self):
        tr = m.MPIPTrailer(node_id=0xABCDEF01, session_id=3, path_id=2,
                           fb_path_id=1, timestamp_us=5, path_delay_us=6,
                           flags="ENABLED+CTRL", addrs=["10.0.2.1"])
        pkts = [
            Ether() / IP(src="10.0.1.1", dst="10.0.2.1") /
            UDP(sport=4000, dport=5001) / Raw(b"plain"),
            Ether() / m.add(IP(src="10.0.1.1", dst="10.0.2.1") /
                            TCP(sport=4000, dport=5001) / Raw(b"a" * 11),
                            m.MPIPTrailer(node_id=1, path_id=1)),
            Ether() / m.udp_confirmation("10.0.2.1", "10.0.1.1", 5001,
                                         4000, tr),
        ]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cap.pcap")
            wrpcap(path, pkts)
            out = subprocess.run(
                [sys.executable, os.path.join(HERE, "decode_pcap.py"),
                 path, "--json"], stdout=subprocess.PIPE, check=True)
            text = subprocess.run(
                [sys.executable, os.path.join(HERE, "decode_pcap.py"),
                 path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                check=True)
        lines = [json.loads(x) for x in out.stdout.decode().splitlines()]
        self.assertEqual([x["index"] for x in lines], [1, 2])
        tcp, conf = lines
        self.assertEqual((tcp["proto"], tcp["sport"], tcp["dport"]),
                         ("tcp", 4000, 5001))
        self.assertTrue(tcp["l4_csum_ok"])
        self.assertEqual(tcp["trailer"]["flags"], [])
        self.assertEqual(conf["proto"], "udp")
        self.assertEqual((conf["src"], conf["dst"]), ("10.0.2.1", "10.0.1.1"))
        self.assertFalse(conf["l4_csum_ok"])
        t = conf["trailer"]
        self.assertEqual(t["flags"], ["ENABLED", "CTRL"])
        self.assertEqual(t["flags_raw"], 6)
        self.assertEqual(t["node_id"], 0xABCDEF01)
        self.assertEqual(t["addrs"], ["10.0.2.1"])
        self.assertEqual((t["session_id"], t["path_id"], t["fb_path_id"],
                          t["timestamp_us"], t["path_delay_us"],
                          t["length"]), (3, 2, 1, 5, 6, 32))
        self.assertEqual(len(text.stdout.decode().splitlines()), 2)


if __name__ == "__main__":
    unittest.main()
