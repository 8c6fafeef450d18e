# SPDX-License-Identifier: GPL-2.0
"""Tests of the python CM trailer layer against the C encoders (v1 and
v2, with the MAC of kernel/core/auth.c).

Run from the repository root:  /usr/bin/python3 tests/scapy/run.py
(or python3 -m unittest discover -s tests/scapy)
"""

import json
import os
import random
import re
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
WIRE_FORMAT = os.path.join(ROOT, "Documentation", "wire-format.rst")

FIELDS = ("node_id", "session_id", "path_id", "fb_path_id", "timestamp_us",
          "path_delay_us", "flags", "xflags", "naddrs", "addrs", "length",
          "csum_adjust", "check")


def c_vectors(name="cm_vectors"):
    """The JSON lines of a vectors program of tests/unit (cm_vectors,
    cm2_vectors, auth_vectors); builds it if needed (make keeps it up to
    date with the C sources).  Raises if it cannot be built or run: these
    tests are the only check that the layer matches the kernel's code, so
    they fail rather than skip."""
    prog = os.path.join(UNIT, "build", name)
    r = subprocess.run(["make", "-s", "-C", UNIT, "build/" + name],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       check=False)
    if r.returncode or not os.access(prog, os.X_OK):
        raise RuntimeError("cannot build %s:\n%s"
                           % (prog, r.stdout.decode(errors="replace")))
    out = subprocess.run([prog], stdout=subprocess.PIPE, check=True)
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

    def test_udp_control_v2_crosses_nat_not_legacy(self):
        # A v2 control CM: its datagram's checksum holds over the whole IP
        # payload (conntrack) and fails over the UDP length (a host without
        # MPIP); without CTRL both would hold, and find_trailer() wants the
        # sum that goes with the flags.
        for addrs in ([], ["10.0.2.1", "10.0.3.1"]):
            tr = m.write_v2(bytes(12), token=0x01020304, addrs=addrs,
                            flags=m.F_ENABLED | m.F_CTRL)
            c = m.udp_confirmation("10.0.2.1", "10.0.1.1", 5001, 4000, tr)
            self.assertEqual(c[UDP].len, 8)
            self.assertTrue(m.ct_checksum_ok(c))
            self.assertFalse(m.l4_checksum_ok(c))
            t = m.find_trailer(c)
            self.assertEqual(t.flag_names(), ["ENABLED", "CTRL"])
            self.assertEqual(m.ones_sum(bytes(t)),
                             m.udp_sum(len(tr), 8, m.F_CTRL))
            self.assertEqual(m.udp_sum(len(tr), 8, m.F_CTRL),
                             (m.udp_sum(len(tr), 8) + 0x8000) % 0xFFFF)
            raw = bytearray(bytes(c))
            raw[-10] &= ~m.F_CTRL & 0xFF   # the flag without its sum
            self.assertIsNone(m.find_trailer(bytes(raw)))
        q = m.add(IP(src="10.0.1.1", dst="10.0.2.1") /
                  UDP(sport=4000, dport=5001) / Raw(b"data"),
                  m.write_v2(bytes(12), flags=m.F_ENABLE))
        self.assertTrue(m.ct_checksum_ok(q))
        self.assertTrue(m.l4_checksum_ok(q))

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


# ---- wire format v2 --------------------------------------------------------

REF_KEY = (0x0706050403020100, 0x0F0E0D0C0B0A0908)


def v2_args(v):
    """write_v2()/encode_v2() keyword arguments of a C vector."""
    args = {f: v[f] for f in m.V2_FIELDS if f != "ext"}
    args["ext"] = bytes.fromhex(v["ext"])
    return args


def random_v2(rng, naddrs=None, ext_len=None):
    f = random_fields(rng, naddrs)
    f["token"] = f.pop("node_id")
    if ext_len is None:
        ext_len = 4 * rng.randrange(m.EXT_MAX // 4 + 1)
    f["ext"] = bytes(rng.getrandbits(8) for _ in range(ext_len))
    return f


def refix(raw):
    """raw with check and adjustment made right for its bytes as they
    are."""
    raw = bytearray(raw)
    t = len(raw)
    raw[t - 4:] = struct.pack("!I", m.trailer_check(raw))
    raw[t - 12:t - 10] = struct.pack("!H", m.trailer_adjust(raw))
    return bytes(raw)


class SipHashTest(unittest.TestCase):
    # SipHash-2-4 of 00 01 .. (n-1) under the key 00 01 .. 0f: the
    # reference implementation's vectors (tests/unit/test_auth.c has all
    # 64 as bytes).
    REF = {0: 0x726FDB47DD0E0E31, 1: 0x74F839C593DC67FD,
           7: 0xAB0200F58B01D137, 8: 0x93F5F5799A932462,
           9: 0x9E0082DF0BA9E4B0, 15: 0xA129CA6149BE45E5,
           16: 0x3F2ACC7F57C29BDB, 31: 0x32D892FAD841C342,
           32: 0x7127512F72F27CCE, 63: 0x958A324CEB064572}

    def test_reference_vectors(self):
        for n, want in self.REF.items():
            self.assertEqual(m.siphash24(REF_KEY[0], REF_KEY[1],
                                         bytes(range(n))), want, n)

    def test_tokens_and_derivation(self):
        self.assertEqual(m.auth_token(0x0123456789ABCDEF), 0x23DDAAE7)
        self.assertEqual(m.auth_token(0xFEDCBA9876543210), 0x3E2D80D3)
        self.assertEqual(m.auth_token(0), 0)
        a = m.auth_derive(0x0123456789ABCDEF, 0xFEDCBA9876543210)
        b = m.auth_derive(0xFEDCBA9876543210, 0x0123456789ABCDEF)
        self.assertEqual(a["tx"], (0x23C0DE22ACFD24E4, 0x78867F4563B83683))
        self.assertEqual((a["tx"], a["rx"]), (b["rx"], b["tx"]))
        self.assertEqual((a["tx_token"], a["rx_token"]),
                         (b["rx_token"], b["tx_token"]))
        for bad in ((0, 1), (1, 0), (5, 5)):
            with self.assertRaises(ValueError):
                m.auth_derive(*bad)


class AuthVectorTest(unittest.TestCase):
    """The python MAC against tests/unit/build/auth_vectors."""

    @classmethod
    def setUpClass(cls):
        cls.vectors = c_vectors("auth_vectors")

    def test_derive(self):
        derives = [v for v in self.vectors if v["kind"] == "derive"]
        self.assertGreaterEqual(len(derives), 3)
        for v in derives:
            ka, kb = int(v["key_a"], 16), int(v["key_b"], 16)
            a = m.auth_derive(ka, kb)
            self.assertEqual(a["tx"], tuple(int(x, 16) for x in v["a_tx"]))
            self.assertEqual(a["rx"], tuple(int(x, 16) for x in v["a_rx"]))
            self.assertEqual((a["rx_token"], a["tx_token"]),
                             (v["token_a"], v["token_b"]))

    def test_mac(self):
        macs = [v for v in self.vectors if v["kind"] == "mac"]
        self.assertGreaterEqual(len(macs), 10)
        for v in macs:
            key = tuple(int(x, 16) for x in v["key"])
            ctr = int(v["counter"], 16)
            args = v2_args(v)
            with self.subTest(input=v["input"]):
                self.assertEqual(m.mac_input(ctr, v["proto"], **args).hex(),
                                 v["input"])
                self.assertEqual(m.cm_mac(key, ctr, v["proto"], **args),
                                 int(v["mac"], 16))
                self.assertEqual(m.seal(key, ctr, v["proto"], **args).hex(),
                                 v["block"])


class V2VectorTest(unittest.TestCase):
    """The python v2 layer against tests/unit/build/cm2_vectors: the same
    bytes from the same keys and fields, the same codes for the same
    malformed trailers."""

    @classmethod
    def setUpClass(cls):
        cls.vectors = c_vectors("cm2_vectors")
        cls.encodes = [v for v in cls.vectors if v["kind"] == "encode"]
        cls.rejects = [v for v in cls.vectors if v["kind"] == "reject"]

    def test_have_vectors(self):
        self.assertGreaterEqual(len(self.encodes), 13)
        self.assertEqual({v["naddrs"] for v in self.encodes},
                         set(range(m.MAX_ADDRS + 1)))
        self.assertEqual({len(v["ext"]) // 2 for v in self.encodes},
                         set(range(0, m.EXT_MAX + 1, 4)))
        self.assertEqual({v["error"] for v in self.rejects},
                         {m.E_SHORT, m.E_MAGIC, m.E_VERSION, m.E_LENGTH,
                          m.E_ADDRS, m.E_EXT, m.E_CHECK})

    def test_keys(self):
        keys = [v for v in self.vectors if v["kind"] == "keys"]
        self.assertEqual(len(keys), 1)
        v = keys[0]
        a = m.auth_derive(int(v["key_a"], 16), int(v["key_b"], 16))
        self.assertEqual(a["tx"], tuple(int(x, 16) for x in v["a_tx"]))
        self.assertEqual(a["tx_token"], v["token_b"])

    def test_python_encodes_like_c(self):
        for v in self.encodes:
            key = tuple(int(x, 16) for x in v["key"])
            ctr = int(v["counter"], 16)
            args = v2_args(v)
            with self.subTest(hex=v["hex"]):
                raw = m.encode_v2(key, ctr, v["proto"], **args)
                self.assertEqual(raw.hex(), v["hex"])
                self.assertEqual(len(raw), v["length"])
                self.assertEqual(m.seal(key, ctr, v["proto"], **args).hex(),
                                 v["auth"])
                pkt = m.MPIPTrailerV2.sealed(key, ctr, v["proto"], **args)
                self.assertEqual(bytes(pkt).hex(), v["hex"])
                self.assertEqual(m.write_v2(bytes.fromhex(v["auth"]),
                                            **args).hex(), v["hex"])

    def test_layer_decodes_c_vectors(self):
        for v in self.encodes:
            raw = bytes.fromhex(v["hex"])
            key = tuple(int(x, 16) for x in v["key"])
            ctr = int(v["counter"], 16)
            with self.subTest(hex=v["hex"]):
                self.assertEqual(m.validate_v2(raw), 0)
                self.assertEqual(m.validate_any(raw), 0)
                self.assertEqual(m.peek_any(raw[-8:], len(raw) + 100),
                                 len(raw))
                d = m.decode_v2(raw)
                for f in ("token", "session_id", "path_id", "fb_path_id",
                          "timestamp_us", "path_delay_us", "flags",
                          "xflags", "naddrs", "addrs", "length",
                          "csum_adjust", "check"):
                    self.assertEqual(d[f], v[f], f)
                self.assertEqual(d["ext"].hex(), v["ext"])
                self.assertEqual(d["auth"].hex(), v["auth"])
                self.assertEqual(d["counter_lo"], ctr & 0xFFFFFFFF)
                self.assertEqual(m.MPIPTrailerV2(raw).to_dict(), d)
                self.assertTrue(m.verify_v2(key, raw, ctr, v["proto"]))
                self.assertFalse(m.verify_v2(key, raw, ctr + (1 << 32),
                                             v["proto"]))
                self.assertFalse(m.verify_v2(key, raw, ctr,
                                             v["proto"] ^ 0x17))
                # the v1 layer never takes it
                self.assertEqual(m.validate(raw), m.E_VERSION)

    def test_same_rejections_as_c(self):
        for v in self.rejects:
            raw = bytes.fromhex(v["hex"])
            with self.subTest(why=v["why"]):
                self.assertEqual(m.validate_v2(raw), v["error"])
                with self.assertRaises(m.MPIPError) as cm:
                    m.decode_v2(raw)
                self.assertEqual(cm.exception.code, v["error"])


class V2DocTest(unittest.TestCase):
    """The v2 examples pinned in Documentation/wire-format.rst: each
    ".. cm2-vector: K" comment names the cm2_vectors line K (0 for the
    first "encode" line) whose bytes the literal block after it shows."""

    def test_pinned_vectors(self):
        encodes = [v for v in c_vectors("cm2_vectors")
                   if v["kind"] == "encode"]
        with open(WIRE_FORMAT) as f:
            lines = f.read().splitlines()
        pinned = 0
        for i, line in enumerate(lines):
            mark = re.match(r"\.\. cm2-vector: (\d+)$", line)
            if not mark:
                continue
            j = i + 1
            while not lines[j].endswith("::"):
                j += 1
            j += 1
            shown = []
            while j < len(lines) and (not lines[j] or
                                      lines[j].startswith("   ")):
                for tok in lines[j].split():
                    if not re.fullmatch(r"[0-9a-f]{2}", tok):
                        break  # the label at the end of the line
                    shown.append(tok)
                j += 1
            with self.subTest(vector=mark.group(1)):
                self.assertEqual("".join(shown),
                                 encodes[int(mark.group(1))]["hex"])
            pinned += 1
        self.assertGreaterEqual(pinned, 2)


class V2CodecTest(unittest.TestCase):
    def test_round_trip_every_n_and_e(self):
        rng = random.Random(20)
        for n in range(m.MAX_ADDRS + 1):
            for e in range(0, m.EXT_MAX + 1, 4):
                f = random_v2(rng, n, e)
                ctr = rng.getrandbits(rng.randrange(1, 65)) or 1
                proto = rng.choice((6, 17))
                raw = m.encode_v2(REF_KEY, ctr, proto, **f)
                self.assertEqual(len(raw), 40 + 4 * n + e)
                self.assertEqual(m.validate_v2(raw), 0)
                self.assertEqual(m.ones_sum(raw), m.CSUM_SUM)
                self.assertEqual(m.ones_sum(b"\0" + raw), 0x0040)
                d = m.decode_v2(raw)
                for k, val in f.items():
                    self.assertEqual(d[k], val, k)
                self.assertEqual(d["naddrs"], n)
                self.assertEqual(raw[-24:-12], m.seal(REF_KEY, ctr, proto,
                                                      **f))
                self.assertEqual(bytes(m.MPIPTrailerV2(raw)), raw)
                self.assertEqual(m.write_v2(d["auth"], **f), raw)
                self.assertTrue(m.verify_v2(REF_KEY, raw, ctr, proto))

    def test_layout(self):
        raw = m.encode_v2(REF_KEY, 0x1122334455667788, 17,
                          token=0x01020304, session_id=0x0506, path_id=7,
                          fb_path_id=8, timestamp_us=0x090A0B0C,
                          path_delay_us=0x0D0E0F10, flags=0xA5, xflags=9,
                          addrs=["64.65.66.67"], ext=bytes(range(8)))
        t = len(raw)
        self.assertEqual(t, 40 + 4 + 8)
        self.assertEqual(raw[:16].hex(), "0102030405060708090a0b0c0d0e0f10")
        self.assertEqual(raw[16:20], bytes([64, 65, 66, 67]))
        self.assertEqual(raw[20:28], bytes(range(8)))
        self.assertEqual(raw[t - 24:t - 20].hex(), "55667788")
        self.assertEqual(raw[t - 10:t - 4].hex(), "a591d7020034")

    def test_first_query(self):
        # token 0, a zero MAC, the key and the full counter split between
        # extension and auth block, as a responder reads them
        key, ctr = 0x0123456789ABCDEF, 5 << 32 | 7
        raw = m.first_query(key, ctr, addrs=["10.0.0.1"])
        self.assertEqual(m.validate_v2(raw), 0)
        d = m.decode_v2(raw)
        self.assertEqual((d["token"], d["mac"], d["flags"]),
                         (0, 0, m.F_ENABLE))
        self.assertEqual(d["addrs"], ["10.0.0.1"])
        self.assertEqual(d["ext"], struct.pack("!QI", key, 5))
        self.assertEqual(d["counter_lo"], 7)
        self.assertEqual(raw, m.write_v2(struct.pack("!IQ", 7, 0),
                                         flags=m.F_ENABLE,
                                         addrs=["10.0.0.1"],
                                         ext=struct.pack("!QI", key, 5)))

    def test_with_ext(self):
        # with_ext() of a template is write_v2() of the new extension,
        # summing to any target asked for
        rng = random.Random(22)
        for n in (0, 3, m.MAX_ADDRS):
            for e in (4, 12, m.EXT_MAX):
                f = random_v2(rng, n, e)
                auth = bytes(rng.getrandbits(8) for _ in range(12))
                tmpl = m.write_v2(auth, **f)
                for target in (m.CSUM_SUM, m.udp_sum(len(tmpl), 13),
                               m.udp_sum(len(tmpl), 8, m.F_CTRL)):
                    ext = bytes(rng.getrandbits(8) for _ in range(e))
                    raw = m.with_ext(tmpl, ext, target)
                    f2 = dict(f, ext=ext)
                    self.assertEqual(raw, m.resum(m.write_v2(auth, **f2),
                                                  target))
                    self.assertEqual(m.validate_v2(raw, target), 0)
                    self.assertEqual(m.ones_sum(raw), target)
                    self.assertEqual(m.decode_v2(m.resum(raw, m.CSUM_SUM))
                                     ["ext"], ext)
        tmpl = m.write_v2(bytes(12), ext=bytes(12))
        for ext in (bytes(8), bytes(16)):
            with self.assertRaises(m.MPIPError):
                m.with_ext(tmpl, ext)
        with self.assertRaises(m.MPIPError):
            m.with_ext(tmpl[1:], bytes(12))
        with self.assertRaises(m.MPIPError):
            m.with_ext(m.encode(), b"")

    def test_limits_and_refusals(self):
        for val in (0, 0xFFFFFFFF):
            f = {"token": val, "session_id": val & 0xFFFF,
                 "path_id": val & 0xFF, "fb_path_id": val & 0xFF,
                 "timestamp_us": val, "path_delay_us": val,
                 "flags": val & 0xFF, "xflags": val & 0xF}
            for n in (0, m.MAX_ADDRS):
                for e in (0, m.EXT_MAX):
                    raw = m.encode_v2(REF_KEY, (1 << 64) - 1, 255,
                                      addrs=["255.255.255.255"] * n,
                                      ext=b"\xff" * e, **f)
                    self.assertEqual(m.validate_v2(raw), 0)
        bad = [{"addrs": ["1.2.3.4"] * 9}, {"xflags": 16},
               {"ext": bytes(36)}, {"ext": bytes(3)}, {"ext": bytes(30)}]
        for kw in bad:
            with self.assertRaises(m.MPIPError):
                m.encode_v2(REF_KEY, 1, 17, **kw)
        with self.assertRaises(m.MPIPError):
            m.encode_v2(REF_KEY, 0, 17)
        with self.assertRaises(m.MPIPError):
            m.encode_v2(REF_KEY, 1 << 64, 17)
        with self.assertRaises(m.MPIPError):
            m.write_v2(bytes(11))

    def test_every_length_and_count(self):
        rng = random.Random(21)
        valid = 0
        for t in range(40, 105, 4):
            for v in range(256):
                raw = bytearray(rng.getrandbits(8) for _ in range(t))
                raw[t - 9] = v
                raw[t - 8:t - 4] = struct.pack("!BBH", m.MAGIC, 2, t)
                raw = refix(raw)
                n = v & 0xF
                if n > 8 or 4 * n > t - 40:
                    want = m.E_ADDRS
                elif t - 40 - 4 * n > 32:
                    want = m.E_EXT
                else:
                    want = 0
                self.assertEqual(m.validate_v2(raw), want, (t, v))
                if not want:
                    valid += 1
                    d = m.decode_v2(raw)
                    self.assertEqual(len(d["ext"]), t - 40 - 4 * n)
                    self.assertEqual(d["naddrs"], n)
        self.assertEqual(valid, 81 * 16)

    def test_every_bit_flip_rejected(self):
        rng = random.Random(22)
        for n, e in ((0, 0), (1, 8), (3, 32), (8, 0), (8, 32), (5, 12)):
            raw = bytearray(m.encode_v2(REF_KEY, 5, 17,
                                        **random_v2(rng, n, e)))
            t = len(raw)
            for i in range(t):
                for bit in range(8):
                    raw[i] ^= 1 << bit
                    if i == t - 9 and bit < 4:
                        n2 = n ^ (1 << bit)
                        want = m.E_ADDRS if n2 > 8 or 4 * n2 > t - 40 \
                            else m.E_EXT if t - 40 - 4 * n2 > 32 \
                            else m.E_CHECK
                    else:
                        want = {t - 8: m.E_MAGIC, t - 7: m.E_VERSION,
                                t - 6: m.E_LENGTH,
                                t - 5: m.E_LENGTH}.get(i, m.E_CHECK)
                    self.assertEqual(m.validate_v2(raw), want, (n, e, i, bit))
                    raw[i] ^= 1 << bit

    def test_short_and_lengths(self):
        raw = m.encode_v2(REF_KEY, 1, 17, ext=bytes(8))
        for k in range(40):
            self.assertEqual(m.validate_v2(raw[-k:] if k else b""),
                             m.E_SHORT)
        self.assertEqual(m.validate_v2(b"\0\0\0\0" + raw), m.E_LENGTH)
        self.assertEqual(m.peek_v2(raw[-8:], len(raw) - 4), m.E_LENGTH)
        self.assertEqual(m.peek_v2(raw[-8:], 39), m.E_SHORT)
        self.assertEqual(m.peek_any(raw[-8:], 39), m.E_SHORT)
        self.assertEqual(m.peek_any(raw[-8:], 27), m.E_SHORT)
        for length in range(0x10000):
            tail = struct.pack("!BBH", m.MAGIC, 2, length) + bytes(4)
            want = length if 40 <= length <= 104 and length % 4 == 0 \
                else m.E_LENGTH
            self.assertEqual(m.peek_v2(tail, 1500), want)
            self.assertEqual(m.peek_any(tail, 1500), want)

    def test_dispatch(self):
        v1 = m.encode(node_id=7, addrs=["10.0.0.1"])
        v2 = m.encode_v2(REF_KEY, 9, 6, token=7, addrs=["10.0.0.1"])
        self.assertEqual(m.validate_any(v1), 0)
        self.assertEqual(m.validate_any(v2), 0)
        self.assertEqual(m.peek_any(v1[-8:], 100), len(v1))
        self.assertEqual(m.peek_any(v2[-8:], 100), len(v2))
        self.assertEqual(m.validate(v2), m.E_VERSION)
        self.assertEqual(m.validate_v2(v1), m.E_SHORT)
        self.assertEqual(m.validate_v2(bytes(12) + v1), m.E_VERSION)
        for version in (0, 3, 255):
            raw = bytearray(v2)
            raw[-7] = version
            self.assertEqual(m.validate_any(refix(raw)), m.E_VERSION)

    def test_mac_covers_everything(self):
        rng = random.Random(23)
        f = random_v2(rng, 2, 8)
        raw = m.encode_v2(REF_KEY, 1000, 17, **f)
        for k in f:
            g = dict(f)
            if k == "addrs":
                g[k] = f[k][:1] + ["1.2.3.4"]
            elif k == "ext":
                g[k] = f[k][:4] + bytes(4)
            elif k == "xflags":
                g[k] = f[k] ^ 1
            else:
                g[k] = f[k] ^ 1
            forged = m.write_v2(raw[-24:-12], **g)
            self.assertEqual(m.validate_v2(forged), 0)
            self.assertFalse(m.verify_v2(REF_KEY, forged, 1000, 17), k)
        other = (REF_KEY[0], REF_KEY[1] ^ 1)
        self.assertFalse(m.verify_v2(other, raw, 1000, 17))
        self.assertTrue(m.verify_v2(REF_KEY, raw, 1000, 17))

    def test_between_peers(self):
        a = m.auth_derive(0x0123456789ABCDEF, 0xFEDCBA9876543210)
        b = m.auth_derive(0xFEDCBA9876543210, 0x0123456789ABCDEF)
        raw = m.encode_v2(a["tx"], 1, 6, token=a["tx_token"],
                          session_id=0x1235, path_id=3, fb_path_id=2,
                          timestamp_us=0x80000000, path_delay_us=0x7FFFFFFF,
                          flags=m.F_ORIG)
        d = m.decode_v2(raw)
        self.assertEqual(d["token"], b["rx_token"])
        self.assertTrue(m.verify_v2(b["rx"], raw, 1, 6))
        self.assertFalse(m.verify_v2(a["rx"], raw, 1, 6))  # reflected

    def test_packet_class(self):
        p = m.MPIPTrailerV2.sealed(REF_KEY, 12345, 6, token=0xCAFEF00D,
                                   session_id=42, path_id=1, fb_path_id=1,
                                   timestamp_us=1000000, path_delay_us=250,
                                   flags="HB+ORIG", xflags=m.X_SOLE,
                                   addrs=["10.4.0.1"],
                                   ext=bytes(range(0xE0, 0xE8)))
        raw = bytes(p)
        self.assertEqual(len(raw), 52)
        q = m.MPIPTrailerV2(raw)
        self.assertEqual(q.flag_names(), ["HB", "ORIG"])
        self.assertEqual((q.naddrs, q.length, q.version), (1, 52, 2))
        self.assertEqual(q.ext, bytes(range(0xE0, 0xE8)))
        self.assertEqual(q.counter_lo, 12345)
        self.assertTrue(m.verify_v2(REF_KEY, raw, 12345, 6))
        self.assertIn("token=", q.mysummary())
        # in a UDP surplus area, as a v2 peer would send it: the same
        # trailer but for the adjustment, which makes it sum to
        # udp_sum(T, UDP length), so that the UDP checksum verifies over
        # the whole IP payload too (as conntrack checks it), at an odd
        # and at an even offset
        for data in (b"x", b"xy"):
            ip = m.add(IP(src="10.0.1.1", dst="10.0.2.1") /
                       UDP(sport=1, dport=2) / Raw(data), p)
            tb = bytes(ip)[-52:]
            self.assertEqual(tb[:40] + tb[42:], raw[:40] + raw[42:])
            self.assertEqual(m.ones_sum(tb), m.udp_sum(52, 8 + len(data)))
            self.assertIsNotNone(m.find_trailer(ip))
            self.assertTrue(m.l4_checksum_ok(ip))
            whole = bytes(ip)[20:]
            pseudo = bytes(ip)[12:20] + struct.pack("!BBH", 0, 17, len(whole))
            self.assertEqual(m.ones_sum(pseudo + whole), 0xFFFF)
            # with the TCP sum there, conntrack finds the checksum wrong
            ip2 = IP(bytes(ip)[:-52] + raw)
            self.assertIsNone(m.find_trailer(ip2))


if __name__ == "__main__":
    unittest.main()
