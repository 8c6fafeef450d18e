# SPDX-License-Identifier: GPL-2.0
"""Scapy support for the mpip control-message (CM) trailer, wire formats v1
and v2.

Written from Documentation/wire-format.rst and Documentation/security.rst,
independently of the C code in kernel/core/cm.c and auth.c, so that the two
can be checked against each other.

    MPIPTrailer        the v1 trailer as a scapy Packet (build and dissect)
    encode(...)        bytes of a v1 trailer from field values
    validate(raw)      0 or a negative error code (same codes as cm.h)
    find_trailer(pkt)  the v1 MPIPTrailer at the end of an IP packet, or None
    strip(pkt)         the IP packet without its trailer
    add(pkt, trailer)  the IP packet with a trailer appended
    udp_confirmation(...)  a UDP availability confirmation (ENABLED|CTRL)

Version 2 (authenticated CMs, what the module sends):

    siphash24(k0, k1, data)      SipHash-2-4, the key as two 64-bit words
    auth_token(key), auth_derive(local_key, remote_key)
                                 tokens and MAC keys from handshake keys
    mac_input(...), cm_mac(...), seal(...)
                                 the MAC of a CM and its 12-byte auth block
    encode_v2(key, counter, proto, ...)  a v2 trailer, MAC computed
    write_v2(auth, ...)          a v2 trailer with a given auth block
    validate_v2(raw), decode_v2(raw), verify_v2(key, raw, counter, proto)
    peek_any(tail, avail), validate_any(raw)   v1 or v2
    MPIPTrailerV2                the v2 trailer as a scapy Packet
"""

import socket
import struct
import sys

try:
    import scapy  # noqa: F401
except ImportError:  # a python without scapy: use Debian's python3-scapy
    sys.path.append("/usr/lib/python3/dist-packages")

from scapy.fields import (BitField, ByteField, FieldListField, FlagsField,
                          IPField,
                          IntField, ShortField, StrField, XByteField,
                          XIntField, XLongField, XShortField)
from scapy.layers.inet import IP, TCP, UDP
from scapy.packet import Packet

VERSION = 1
MAGIC = 0xD7
BODY_LEN = 16
FOOTER_LEN = 12
TAIL_LEN = 8
MAX_ADDRS = 8
MIN_LEN = BODY_LEN + FOOTER_LEN
MAX_LEN = MIN_LEN + 4 * MAX_ADDRS
CSUM_SUM = 0x4000

F_ENABLE = 0x01
F_ENABLED = 0x02
F_CTRL = 0x04
F_IP_CHANGE = 0x08
F_HB = 0x10
F_HS = 0x20
F_ORIG = 0x40
F_NEW = 0x80

# Extended flags: the high nibble of the address-count byte.
X_SOLE = 0x01
X_QUIET = 0x02
X_DUP = 0x04
X_CARRIER = 0x08
X_MASK = 0x0F

# Bit i of the flags byte is FLAG_NAMES[i].
FLAG_NAMES = ["ENABLE", "ENABLED", "CTRL", "IP_CHANGE", "HB", "HS",
              "ORIG", "NEW"]

E_SHORT = -1
E_MAGIC = -2
E_VERSION = -3
E_LENGTH = -4
E_ADDRS = -5
E_CHECK = -6
E_INVAL = -7
E_EXT = -8

ERROR_NAMES = {
    E_SHORT: "short", E_MAGIC: "magic", E_VERSION: "version",
    E_LENGTH: "length", E_ADDRS: "addrs", E_CHECK: "check",
    E_INVAL: "inval", E_EXT: "ext",
}

# Wire format v2: T = 40 + 4 N + E.
VERSION2 = 2
AUTH_LEN = 12          # counter low 32 bits, 64-bit MAC
EXT_MAX = 32
MIN_LEN2 = MIN_LEN + AUTH_LEN
MAX_LEN2 = MIN_LEN2 + 4 * MAX_ADDRS + EXT_MAX

IPPROTO_TCP = 6
IPPROTO_UDP = 17
# A TCP GSO packet kept whole with one data CM between its IP and TCP
# headers (wire-format.rst), checksum still pending (captured only between
# namespaces).
IPPROTO_MPIP_GSO = 253


class MPIPError(ValueError):
    """A trailer was rejected; .code is one of the E_* values."""

    def __init__(self, code):
        super().__init__("invalid MPIP trailer: %s" % ERROR_NAMES[code])
        self.code = code


# ---- checksums -----------------------------------------------------------

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    """CRC32C of data, continuing from a previous result (start with 0)."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ _CRC_TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def ones_sum(data):
    """RFC 1071 folded 16-bit ones'-complement sum (odd tail zero-padded)."""
    data = bytes(data)
    if len(data) & 1:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def internet_checksum(data):
    """The value an RFC 1071 checksum field takes for data."""
    return ~ones_sum(data) & 0xFFFF


def trailer_check(raw):
    """The check field for trailer bytes raw (adjustment taken as zero)."""
    t = len(raw)
    return crc32c(bytes(raw[:t - 12]) + b"\0\0" + bytes(raw[t - 10:t - 4]))


def trailer_adjust(raw, target=CSUM_SUM):
    """The checksum adjustment for trailer bytes raw (check filled in)
    that makes its words sum to target."""
    t = len(raw)
    s = ones_sum(bytes(raw[:t - 12]) + b"\0\0" + bytes(raw[t - 10:]))
    a = (target - s) % 0xFFFF
    return a if a else 0xFFFF


CTRL_DELTA = 0x8000


def udp_sum(t, off, flags=0):
    """What the words of a v2 trailer of t bytes at offset off from its
    UDP header sum to: -t, byte-swapped at an odd offset, so that the UDP
    checksum also verifies over the whole IP payload (as a NAT's conntrack
    checks it).  A control CM (flag CTRL) sums to CTRL_DELTA more: its
    datagram's checksum, valid over the whole IP payload, then fails over
    the UDP length, so a host without MPIP drops it."""
    s = 0xFFFF - t
    s = ((s << 8) | (s >> 8)) & 0xFFFF if off & 1 else s
    if flags & F_CTRL:
        s += CTRL_DELTA
        s = (s & 0xFFFF) + (s >> 16)
    return s


def trailer_sum(proto, off, t, version=VERSION2, flags=0):
    """The sum a trailer's words must have at its place: udp_sum() for a
    v2 trailer of a UDP datagram, CSUM_SUM otherwise."""
    if proto == IPPROTO_UDP and version == VERSION2:
        return udp_sum(t, off, flags)
    return CSUM_SUM


def resum(raw, target):
    """Trailer bytes raw with the adjustment that makes them sum to
    target (the check does not cover the adjustment)."""
    raw = bytearray(raw)
    t = len(raw)
    raw[t - 12:t - 10] = struct.pack("!H", trailer_adjust(raw, target))
    return bytes(raw)


# ---- plain encode / decode -----------------------------------------------

def encode(node_id=0, session_id=0, path_id=0, fb_path_id=0,
           timestamp_us=0, path_delay_us=0, flags=0, addrs=(), xflags=0):
    """Trailer bytes for the given field values (addresses as strings)."""
    addrs = list(addrs)
    if len(addrs) > MAX_ADDRS or not 0 <= xflags <= X_MASK:
        raise MPIPError(E_INVAL)
    t = MIN_LEN + 4 * len(addrs)
    raw = bytearray(struct.pack("!IHBBII", node_id, session_id, path_id,
                                fb_path_id, timestamp_us, path_delay_us))
    for a in addrs:
        raw += socket.inet_aton(a)
    raw += struct.pack("!HBBBBHI", 0, flags, len(addrs) | xflags << 4, MAGIC,
                       VERSION, t, 0)
    raw[t - 4:] = struct.pack("!I", trailer_check(raw))
    raw[t - 12:t - 10] = struct.pack("!H", trailer_adjust(raw))
    return bytes(raw)


def peek(tail, avail):
    """Trailer length from the last 8 bytes of an avail-byte payload,
    or a negative error code."""
    if avail < TAIL_LEN or avail < MIN_LEN or len(tail) < TAIL_LEN:
        return E_SHORT
    tail = bytes(tail[-TAIL_LEN:])
    if tail[0] != MAGIC:
        return E_MAGIC
    if tail[1] != VERSION:
        return E_VERSION
    t = struct.unpack("!H", tail[2:4])[0]
    if t < MIN_LEN or t > MAX_LEN or (t - MIN_LEN) % 4 or t > avail:
        return E_LENGTH
    return t


def validate(raw):
    """0 if raw is exactly one valid trailer, else a negative error code."""
    raw = bytes(raw)
    t = len(raw)
    if t < MIN_LEN:
        return E_SHORT
    r = peek(raw[-TAIL_LEN:], t)
    if r < 0:
        return r
    if r != t:
        return E_LENGTH
    n = raw[t - 9] & 0x0F
    if n > MAX_ADDRS or MIN_LEN + 4 * n != t:
        return E_ADDRS
    if struct.unpack("!I", raw[t - 4:])[0] != trailer_check(raw):
        return E_CHECK
    if raw[t - 12:t - 10] == b"\0\0" or ones_sum(raw) != CSUM_SUM:
        return E_CHECK
    return 0


def decode(raw):
    """Field values of the trailer raw as a dict; raises MPIPError."""
    err = validate(raw)
    if err:
        raise MPIPError(err)
    return MPIPTrailer(bytes(raw)).to_dict()


# ---- the scapy layer -----------------------------------------------------

class _AddrListField(FieldListField):
    """The address list.  Its count (N) comes after it on the wire, so when
    dissecting, the number of addresses is taken from the bytes left before
    the 12-byte footer."""

    def __init__(self, name, default):
        super().__init__(name, default, IPField("", "0.0.0.0"))

    def getfield(self, pkt, s):
        n = max(0, (len(s) - FOOTER_LEN) // 4)
        addrs = [socket.inet_ntoa(s[4 * i:4 * i + 4]) for i in range(n)]
        return s[4 * n:], addrs


def _footer_fields(version):
    """The fields of the 12-byte footer both versions end with."""
    return [
        XShortField("csum_adjust", None),
        FlagsField("flags", 0, 8, FLAG_NAMES),
        BitField("xflags", 0, 4),
        BitField("naddrs", None, 4),
        XByteField("magic", MAGIC),
        ByteField("version", version),
        ShortField("length", None),
        XIntField("check", None),
    ]


class _TrailerLayer:
    """What the layers of both versions share: the footer's fields left
    unset (count, length, check, adjustment) are filled in as the trailer
    is built, and a trailer is the last layer of its packet."""

    def post_build(self, p, pay):
        p = bytearray(p)
        t = len(p)
        if self.naddrs is None:
            p[t - 9] = (p[t - 9] & 0xF0) | len(self.addrs)
        if self.length is None:
            p[t - 6:t - 4] = struct.pack("!H", t)
        if self.check is None:
            p[t - 4:] = struct.pack("!I", trailer_check(p))
        if self.csum_adjust is None:
            p[t - 12:t - 10] = struct.pack("!H", trailer_adjust(p))
        return bytes(p) + pay

    def extract_padding(self, s):
        return b"", s

    def flag_names(self):
        """Names of the set flag bits, lowest bit first."""
        v = int(self.flags)
        return [FLAG_NAMES[i] for i in range(8) if v & (1 << i)]


class MPIPTrailer(_TrailerLayer, Packet):
    """The CM trailer.  Fields left as None (naddrs, length, check,
    csum_adjust) are computed when the packet is built."""

    name = "MPIP CM trailer"
    fields_desc = [
        XIntField("node_id", 0),
        ShortField("session_id", 0),
        ByteField("path_id", 0),
        ByteField("fb_path_id", 0),
        IntField("timestamp_us", 0),
        IntField("path_delay_us", 0),
        _AddrListField("addrs", []),
    ] + _footer_fields(VERSION)

    def to_dict(self):
        """Field values as plain python values (flags as an int)."""
        built = MPIPTrailer(bytes(self))
        return {
            "node_id": built.node_id,
            "session_id": built.session_id,
            "path_id": built.path_id,
            "fb_path_id": built.fb_path_id,
            "timestamp_us": built.timestamp_us,
            "path_delay_us": built.path_delay_us,
            "flags": int(built.flags),
            "xflags": built.xflags,
            "naddrs": built.naddrs,
            "addrs": list(built.addrs),
            "length": built.length,
            "csum_adjust": built.csum_adjust,
            "check": built.check,
        }

    def mysummary(self):
        return self.sprintf("MPIP node=%node_id% sess=%session_id% "
                            "path=%path_id% flags=%flags%")


# ---- IP packet helpers ---------------------------------------------------

def _ip_bytes(pkt):
    """Bytes of the IP datagram in pkt (bytes, an IP packet, or a packet
    with an IP layer), cut at the IP total length."""
    if isinstance(pkt, (bytes, bytearray)):
        raw = bytes(pkt)
    else:
        raw = bytes(pkt[IP] if IP in pkt else pkt)
    if len(raw) < 20 or raw[0] >> 4 != 4:
        return None
    ihl = (raw[0] & 0xF) * 4
    tot = struct.unpack("!H", raw[2:4])[0]
    if ihl < 20 or tot < ihl or tot > len(raw):
        return None
    return raw[:tot]


def _locate_gso(raw, ihl):
    """Length of the data CM behind the IP header of a kept GSO packet,
    or 0 if there is none (it never has addresses; v1: 28 bytes, v2:
    40)."""
    for n in (MIN_LEN2, MIN_LEN):
        head = raw[ihl:ihl + n]
        if len(head) < n or len(raw) < ihl + n + 20:
            continue
        if peek_any(head[-TAIL_LEN:], len(raw) - ihl) == n \
                and not validate_any(head):
            return n
    return 0


def _cm_span(raw):
    """(start, end) of the CM in IP datagram raw, or None if it has none:
    a trailer at the end, or the CM behind the IP header of a kept GSO
    packet."""
    ihl = (raw[0] & 0xF) * 4
    if struct.unpack("!H", raw[6:8])[0] & 0x3FFF:
        return None
    if raw[9] == IPPROTO_MPIP_GSO:
        t = _locate_gso(raw, ihl)
        return (ihl, ihl + t) if t else None
    t = _locate(raw)
    return (len(raw) - t, len(raw)) if t else None


def l4_offset(raw):
    """Offset of the transport header in IP datagram raw: behind the CM
    in a kept GSO packet."""
    ihl = (raw[0] & 0xF) * 4
    if raw[9] == IPPROTO_MPIP_GSO:
        return ihl + _locate_gso(raw, ihl)
    return ihl


def _locate(raw):
    """Trailer length T at the end of IP datagram raw, or 0 if none."""
    ihl = (raw[0] & 0xF) * 4
    frag = struct.unpack("!H", raw[6:8])[0]
    if frag & 0x3FFF:  # MF or a fragment offset: not a whole datagram
        return 0
    proto = raw[9]
    payload = raw[ihl:]
    avail = len(payload)
    if avail < MIN_LEN:
        return 0
    t = peek_any(payload[-TAIL_LEN:], avail)
    if t < 0 or validate_any(payload[-t:],
                             trailer_sum(proto, avail - t, t,
                                         flags=payload[-10])):
        return 0
    if proto == IPPROTO_UDP:
        if avail < 8 + t:
            return 0
        ulen = struct.unpack("!H", payload[4:6])[0]
        if ulen < 8 or ulen + t != avail:
            return 0
    elif proto == IPPROTO_TCP:
        if avail < 20 or (payload[12] >> 4) * 4 > avail - t:
            return 0
    else:
        return 0
    return t


def find_trailer(pkt):
    """The MPIPTrailer or MPIPTrailerV2 at the end of the IP datagram in
    pkt, or None.

    pkt may be bytes, an IP packet or any packet with an IP layer.  The
    trailer must be valid (magic, version, length, count, CRC32C, sum); for
    UDP it must fill the surplus area after the UDP length exactly, for TCP
    it must not overlap the TCP header.  In a kept GSO packet (protocol
    253) the CM sits behind the IP header instead.  Fragments are
    ignored."""
    raw = _ip_bytes(pkt)
    if raw is None:
        return None
    span = _cm_span(raw)
    if not span:
        return None
    cm = raw[span[0]:span[1]]
    return MPIPTrailerV2(cm) if cm[-7] == VERSION2 else MPIPTrailer(cm)


def _with_ip_len(raw, new_len):
    raw = bytearray(raw)
    ihl = (raw[0] & 0xF) * 4
    raw[2:4] = struct.pack("!H", new_len)
    raw[10:12] = b"\0\0"
    raw[10:12] = struct.pack("!H", internet_checksum(raw[:ihl]))
    return bytes(raw)


def strip(pkt):
    """The IP packet in pkt without its trailer (unchanged if it has none);
    IP total length and header checksum are fixed up."""
    raw = _ip_bytes(pkt)
    if raw is None:
        raise ValueError("not an IPv4 packet")
    span = _cm_span(raw)
    if not span:
        return IP(raw)
    out = raw[:span[0]] + raw[span[1]:]
    if raw[9] == IPPROTO_MPIP_GSO:  # the receiver restores TCP
        out = out[:9] + bytes([IPPROTO_TCP]) + out[10:]
    return IP(_with_ip_len(out, len(out)))


def add(pkt, trailer):
    """The IP packet in pkt with trailer (MPIPTrailer or bytes) appended.

    pkt is built first, so its transport checksum is that of the packet
    without the trailer; the IP total length and header checksum then
    account for the trailer.  For UDP the trailer lands in the surplus
    area (a v2 trailer gets the adjustment of udp_sum() there), for TCP it
    becomes part of the segment."""
    raw = _ip_bytes(pkt)
    if raw is None:
        raise ValueError("not an IPv4 packet")
    tb = bytes(trailer)
    if raw[9] == IPPROTO_UDP and len(tb) >= TAIL_LEN and tb[-7] == VERSION2:
        ihl = (raw[0] & 0xF) * 4
        tb = resum(tb, udp_sum(len(tb), len(raw) - ihl, tb[-10]))
    return IP(_with_ip_len(raw + tb, len(raw) + len(tb)))


def l4_checksum_ok(pkt, without_trailer=True):
    """Whether the TCP/UDP checksum of the datagram in pkt is valid.

    With without_trailer, a trailer found by find_trailer() is left out
    (the segment or datagram as the transport layer sees it after MPIP).
    Returns None for other protocols, fragments, and UDP without checksum.
    """
    raw = _ip_bytes(pkt)
    if raw is None or struct.unpack("!H", raw[6:8])[0] & 0x3FFF:
        return None
    if without_trailer:
        t = _locate(raw)
        if t:
            raw = raw[:-t]
    ihl = (raw[0] & 0xF) * 4
    proto = raw[9]
    seg = raw[ihl:]
    if proto == IPPROTO_UDP:
        if len(seg) < 8:
            return False
        ulen = struct.unpack("!H", seg[4:6])[0]
        if ulen < 8 or ulen > len(seg):
            return False
        if seg[6:8] == b"\0\0":
            return None
        seg = seg[:ulen]
    elif proto != IPPROTO_TCP:
        return None
    pseudo = raw[12:20] + struct.pack("!BBH", 0, proto, len(seg))
    return ones_sum(pseudo + seg) == 0xFFFF


def ct_checksum_ok(pkt):
    """Whether the TCP/UDP checksum of the datagram in pkt is valid over
    the whole IP payload, trailer included, with the pseudo-header length
    of the whole payload: what a NAT's conntrack checks.  None for other
    protocols, fragments and UDP without checksum."""
    raw = _ip_bytes(pkt)
    if raw is None or struct.unpack("!H", raw[6:8])[0] & 0x3FFF:
        return None
    ihl = (raw[0] & 0xF) * 4
    proto = raw[9]
    seg = raw[ihl:]
    if proto not in (IPPROTO_TCP, IPPROTO_UDP):
        return None
    if proto == IPPROTO_UDP and (len(seg) < 8 or seg[6:8] == b"\0\0"):
        return None if len(seg) >= 8 else False
    pseudo = raw[12:20] + struct.pack("!BBH", 0, proto, len(seg))
    return ones_sum(pseudo + seg) == 0xFFFF


def udp_confirmation(src, dst, sport, dport, trailer, ip_id=0, ttl=64):
    """A UDP control datagram (a confirmation, a heartbeat...): UDP length
    8, no payload, trailer in the surplus area.  With a v2 trailer (flag
    CTRL) the UDP checksum is computed over the whole IP payload, which
    the trailer's sum (udp_sum()) makes fail over the UDP length; with a
    v1 trailer it is the correct one XOR 0x8000 (0x7fff if that is 0)."""
    ip = IP(src=src, dst=dst, id=ip_id, ttl=ttl) / UDP(sport=sport,
                                                        dport=dport)
    raw = bytearray(bytes(ip))
    tb = bytes(trailer)
    if len(tb) >= TAIL_LEN and tb[-7] == VERSION2:
        raw[26:28] = b"\0\0"
        out = bytearray(bytes(add(bytes(raw), tb)))
        c = internet_checksum(out[12:20] +
                              struct.pack("!BBH", 0, IPPROTO_UDP,
                                          len(out) - 20) + out[20:])
        out[26:28] = struct.pack("!H", c if c else 0xFFFF)
        return IP(bytes(out))
    good = struct.unpack("!H", raw[26:28])[0]  # scapy: 0 is sent as 0xffff
    bad = good ^ 0x8000
    raw[26:28] = struct.pack("!H", bad if bad else 0x7FFF)
    return add(bytes(raw), trailer)


def control_packet(segment, trailer):
    """A TCP control packet: a copy of the IP and TCP headers of segment
    (an IP/TCP packet), TCP flags reduced to ACK, no payload, TCP checksum
    of that header-only segment, then trailer."""
    ip = IP(_ip_bytes(segment))
    hdr = ip.copy()
    hdr[TCP].remove_payload()
    hdr[TCP].flags = "A"
    hdr[TCP].chksum = None
    hdr.len = None
    hdr.chksum = None
    return add(hdr, trailer)


# ---- wire format v2: SipHash, keys, MAC ----------------------------------

_M64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash24(k0, k1, data):
    """SipHash-2-4 of data under the 128-bit key whose little-endian halves
    are k0 (key bytes 0..7) and k1 (8..15); a 64-bit int."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def sipround():
        v[0] = (v[0] + v[1]) & _M64
        v[1] = _rotl(v[1], 13) ^ v[0]
        v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & _M64
        v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & _M64
        v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & _M64
        v[1] = _rotl(v[1], 17) ^ v[2]
        v[2] = _rotl(v[2], 32)

    def compress(m):
        v[3] ^= m
        sipround()
        sipround()
        v[0] ^= m

    data = bytes(data)
    full = len(data) - len(data) % 8
    for off in range(0, full, 8):
        compress(int.from_bytes(data[off:off + 8], "little"))
    compress(int.from_bytes(data[full:], "little") |
             (len(data) & 0xFF) << 56)
    v[2] ^= 0xFF
    for _ in range(4):
        sipround()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _kdf(k0, k1, purpose, direction, half):
    """One output of the key-derivation PRF: SipHash of the 8 bytes
    "mpip" 02 purpose direction half (security.rst, "Keys")."""
    return siphash24(k0, k1, b"mpip" + bytes([2, purpose, direction, half]))


def auth_token(key):
    """The 32-bit token of a node's 64-bit key (0: the key is unusable)."""
    if not key:
        return 0
    return _kdf(key, 0, 2, 0, 0) >> 32


def auth_derive(local_key, remote_key):
    """What a node derives from its key and the peer's: a dict with "tx"
    and "rx" MAC keys, each a (k0, k1) pair, and "tx_token" (the peer's,
    written into CMs to it) and "rx_token" (its own).  ValueError for keys
    that must be drawn again."""
    if not local_key or not remote_key or local_key == remote_key:
        raise ValueError("unusable keys")
    d = 1 if local_key > remote_key else 0
    lo, hi = min(local_key, remote_key), max(local_key, remote_key)
    tx_token, rx_token = auth_token(remote_key), auth_token(local_key)
    if not tx_token or not rx_token:
        raise ValueError("a token is 0")

    def mac_key(direction):
        return (_kdf(lo, hi, 1, direction, 0), _kdf(lo, hi, 1, direction, 1))

    return {"tx": mac_key(d), "rx": mac_key(1 - d), "tx_token": tx_token,
            "rx_token": rx_token}


def _check_v2_fields(addrs, xflags, ext):
    if len(addrs) > MAX_ADDRS or not 0 <= xflags <= X_MASK or \
            len(ext) > EXT_MAX or len(ext) % 4:
        raise MPIPError(E_INVAL)


def mac_input(counter, proto, token=0, session_id=0, path_id=0,
              fb_path_id=0, timestamp_us=0, path_delay_us=0, flags=0,
              addrs=(), xflags=0, ext=b""):
    """The bytes a CM's MAC covers (security.rst, "MAC"): a canonical form
    of its fields, not the trailer."""
    addrs, ext = list(addrs), bytes(ext)
    _check_v2_fields(addrs, xflags, ext)
    if not 0 < counter <= _M64:
        raise MPIPError(E_INVAL)
    out = struct.pack("!BBBBQIHBBIIBBBB", MAGIC, VERSION2, 1, proto, counter,
                      token, session_id, path_id, fb_path_id, timestamp_us,
                      path_delay_us, flags, xflags << 4 | len(addrs),
                      len(ext), 0)
    return out + b"".join(socket.inet_aton(a) for a in addrs) + ext


def cm_mac(key, counter, proto, **fields):
    """The 64-bit MAC of a CM under key, a (k0, k1) pair."""
    return siphash24(key[0], key[1], mac_input(counter, proto, **fields))


def seal(key, counter, proto, **fields):
    """The 12-byte auth block of a CM: the counter's low 32 bits, then the
    MAC, big-endian."""
    return struct.pack("!IQ", counter & 0xFFFFFFFF,
                       cm_mac(key, counter, proto, **fields))


# ---- wire format v2: the trailer -----------------------------------------

def write_v2(auth, token=0, session_id=0, path_id=0, fb_path_id=0,
             timestamp_us=0, path_delay_us=0, flags=0, addrs=(), xflags=0,
             ext=b""):
    """Bytes of a v2 trailer with the auth block given as it is (12
    bytes); encode_v2() computes it."""
    addrs, ext, auth = list(addrs), bytes(ext), bytes(auth)
    _check_v2_fields(addrs, xflags, ext)
    if len(auth) != AUTH_LEN:
        raise MPIPError(E_INVAL)
    t = MIN_LEN2 + 4 * len(addrs) + len(ext)
    raw = bytearray(struct.pack("!IHBBII", token, session_id, path_id,
                                fb_path_id, timestamp_us, path_delay_us))
    for a in addrs:
        raw += socket.inet_aton(a)
    raw += ext + auth
    raw += struct.pack("!HBBBBHI", 0, flags, len(addrs) | xflags << 4, MAGIC,
                       VERSION2, t, 0)
    raw[t - 4:] = struct.pack("!I", trailer_check(raw))
    raw[t - 12:t - 10] = struct.pack("!H", trailer_adjust(raw))
    return bytes(raw)


def first_query(key, counter, flags=F_ENABLE, **fields):
    """Bytes of a first query's v2 trailer, as a sender that does not know
    the receiver's key yet sends it: token 0, no MAC (the auth block holds
    the counter's low 32 bits and zeros), its key and the counter's high
    32 bits in the extension (wire-format.rst, "Extension contents")."""
    return write_v2(struct.pack("!IQ", counter & 0xFFFFFFFF, 0),
                    flags=flags, ext=struct.pack("!QI", key, counter >> 32),
                    **fields)


def with_ext(raw, ext, target=CSUM_SUM):
    """The v2 trailer raw (unsealed, as write_v2() makes it) with its
    extension replaced by ext, of the same length, and check and
    adjustment made again, the words summing to target (trailer_sum() of
    its place).  Cheaper than write_v2() when many trailers differ only
    there (a flood of queries, each with its own key); the auth block is
    kept as it is, so a sealed trailer's MAC no longer holds."""
    raw = bytearray(raw)
    t = len(raw)
    if t < MIN_LEN2 or peek_v2(raw[-TAIL_LEN:], t) != t:
        raise MPIPError(E_LENGTH)
    sizes = _v2_sizes(raw)
    if not isinstance(sizes, tuple):
        raise MPIPError(sizes)
    n, e = sizes
    if len(ext) != e:
        raise MPIPError(E_INVAL)
    off = BODY_LEN + 4 * n
    raw[off:off + e] = ext
    raw[t - 4:] = struct.pack("!I", trailer_check(raw))
    return resum(raw, target)


def encode_v2(key, counter, proto, **fields):
    """Bytes of a v2 trailer: the MAC under key (a (k0, k1) pair) over the
    fields, counter (1..2^64-1) and IP protocol first, then the trailer,
    then check and adjustment over all of it.  Fields as for write_v2(),
    token where v1 has node_id."""
    return write_v2(seal(key, counter, proto, **fields), **fields)


def peek_v2(tail, avail):
    """v2 trailer length from the last 8 bytes of an avail-byte payload,
    or a negative error code."""
    if avail < MIN_LEN2 or len(tail) < TAIL_LEN:
        return E_SHORT
    tail = bytes(tail[-TAIL_LEN:])
    if tail[0] != MAGIC:
        return E_MAGIC
    if tail[1] != VERSION2:
        return E_VERSION
    t = struct.unpack("!H", tail[2:4])[0]
    if t < MIN_LEN2 or t > MAX_LEN2 or t % 4 or t > avail:
        return E_LENGTH
    return t


def peek_any(tail, avail):
    """Trailer length of either version, or a negative error code."""
    if avail < MIN_LEN or len(tail) < TAIL_LEN:
        return E_SHORT
    tail = bytes(tail[-TAIL_LEN:])
    if tail[0] != MAGIC:
        return E_MAGIC
    if tail[1] == VERSION:
        return peek(tail, avail)
    if tail[1] == VERSION2:
        return peek_v2(tail, avail)
    return E_VERSION


def _v2_sizes(raw):
    """(N, E) of the v2 trailer raw, or a negative error code."""
    t = len(raw)
    n = raw[t - 9] & 0x0F
    if n > MAX_ADDRS or 4 * n > t - MIN_LEN2:
        return E_ADDRS
    e = t - MIN_LEN2 - 4 * n
    if e > EXT_MAX:
        return E_EXT
    return n, e


def validate_v2(raw, target=CSUM_SUM):
    """0 if raw is exactly one valid v2 trailer whose words sum to target
    (trailer_sum() of its place), else a negative error code.  The MAC is
    not checked (verify_v2())."""
    raw = bytes(raw)
    t = len(raw)
    if t < MIN_LEN2:
        return E_SHORT
    r = peek_v2(raw[-TAIL_LEN:], t)
    if r < 0:
        return r
    if r != t:
        return E_LENGTH
    sizes = _v2_sizes(raw)
    if not isinstance(sizes, tuple):
        return sizes
    if struct.unpack("!I", raw[t - 4:])[0] != trailer_check(raw):
        return E_CHECK
    if raw[t - 12:t - 10] == b"\0\0" or ones_sum(raw) != target:
        return E_CHECK
    return 0


def validate_any(raw, target=CSUM_SUM):
    """0 if raw is exactly one valid trailer of either version (a v2 one
    summing to target, a v1 one to CSUM_SUM)."""
    raw = bytes(raw)
    if len(raw) < MIN_LEN:
        return E_SHORT
    r = peek_any(raw[-TAIL_LEN:], len(raw))
    if r < 0:
        return r
    return validate_v2(raw, target) if raw[-7] == VERSION2 else validate(raw)


def decode_v2(raw):
    """Field values of the v2 trailer raw as a dict (token, ..., ext as
    bytes, auth, counter_lo, mac); raises MPIPError.  The MAC is not
    checked."""
    err = validate_v2(raw)
    if err:
        raise MPIPError(err)
    return MPIPTrailerV2(bytes(raw)).to_dict()


def verify_v2(key, raw, counter, proto):
    """Whether the v2 trailer raw is valid and its auth block is that of
    its fields under key, with counter as the full 64-bit counter (its low
    32 bits must be those on the wire) and proto as the IP protocol."""
    if validate_v2(raw) or not 0 < counter <= _M64:
        return False
    d = decode_v2(raw)
    fields = {k: d[k] for k in V2_FIELDS}
    return counter & 0xFFFFFFFF == d["counter_lo"] and \
        seal(key, counter, proto, **fields) == bytes(raw)[-24:-12]


# The keyword arguments of write_v2(), encode_v2() and mac_input().
V2_FIELDS = ("token", "session_id", "path_id", "fb_path_id", "timestamp_us",
             "path_delay_us", "flags", "addrs", "xflags", "ext")


class _AddrListV2Field(FieldListField):
    """The v2 address list: N from the count byte 9 bytes before the end,
    never more addresses than the bytes before the auth block and the
    footer hold."""

    def __init__(self, name, default):
        super().__init__(name, default, IPField("", "0.0.0.0"))

    def getfield(self, pkt, s):
        room = max(0, (len(s) - AUTH_LEN - FOOTER_LEN) // 4)
        n = min(s[-9] & 0x0F, room) if len(s) >= 9 else 0
        addrs = [socket.inet_ntoa(s[4 * i:4 * i + 4]) for i in range(n)]
        return s[4 * n:], addrs


class _ExtField(StrField):
    """The extension: whatever lies between the address list and the auth
    block (E = T - 40 - 4 N)."""

    def getfield(self, pkt, s):
        e = max(0, len(s) - AUTH_LEN - FOOTER_LEN)
        return s[e:], s[:e]


class MPIPTrailerV2(_TrailerLayer, Packet):
    """The v2 CM trailer.  Fields left as None (naddrs, length, check,
    csum_adjust) are computed when the packet is built; counter_lo and mac
    are taken as they are: MPIPTrailerV2.sealed() computes them."""

    name = "MPIP CM trailer v2"
    fields_desc = [
        XIntField("token", 0),
        ShortField("session_id", 0),
        ByteField("path_id", 0),
        ByteField("fb_path_id", 0),
        IntField("timestamp_us", 0),
        IntField("path_delay_us", 0),
        _AddrListV2Field("addrs", []),
        _ExtField("ext", b""),
        XIntField("counter_lo", 0),
        XLongField("mac", 0),
    ] + _footer_fields(VERSION2)

    @classmethod
    def sealed(cls, key, counter, proto, **fields):
        """The trailer of fields with the auth block of counter and proto
        under key (a (k0, k1) pair)."""
        pkt = cls(**fields)
        d = cls(bytes(pkt)).to_dict()
        blk = seal(key, counter, proto, **{k: d[k] for k in V2_FIELDS})
        pkt.counter_lo, pkt.mac = struct.unpack("!IQ", blk)
        return pkt

    def to_dict(self):
        """Field values as plain python values (flags as an int, ext and
        auth as bytes)."""
        raw = bytes(self)
        built = MPIPTrailerV2(raw)
        return {
            "token": built.token,
            "session_id": built.session_id,
            "path_id": built.path_id,
            "fb_path_id": built.fb_path_id,
            "timestamp_us": built.timestamp_us,
            "path_delay_us": built.path_delay_us,
            "flags": int(built.flags),
            "xflags": built.xflags,
            "naddrs": built.naddrs,
            "addrs": list(built.addrs),
            "ext": bytes(built.ext),
            "counter_lo": built.counter_lo,
            "mac": built.mac,
            "auth": raw[len(raw) - 24:len(raw) - 12],
            "length": built.length,
            "csum_adjust": built.csum_adjust,
            "check": built.check,
        }

    def mysummary(self):
        return self.sprintf("MPIP v2 token=%token% sess=%session_id% "
                            "path=%path_id% ctr=%counter_lo% flags=%flags%")


__all__ = [
    "MPIPTrailer", "MPIPError", "encode", "decode", "validate", "peek",
    "crc32c", "ones_sum", "find_trailer", "strip", "add", "l4_checksum_ok",
    "ct_checksum_ok", "udp_sum", "trailer_sum", "udp_confirmation", "control_packet",
    "MPIPTrailerV2", "siphash24", "auth_token", "auth_derive", "mac_input",
    "cm_mac", "seal", "write_v2", "encode_v2", "peek_v2", "peek_any",
    "validate_v2", "validate_any", "decode_v2", "verify_v2",
]
