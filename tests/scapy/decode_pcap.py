#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print every mpip CM trailer found in a pcap file.

    decode_pcap.py PCAP [--json] [--all]

One line per IPv4 packet that carries a valid trailer (with --all, one per
IPv4 packet; "trailer" is then null when there is none).  With --json each
line is a JSON object:

    {"index": 3, "time": 1700000000.123456, "src": "10.0.1.1",
     "dst": "10.0.2.1", "proto": "udp", "sport": 40000, "dport": 5001,
     "ip_len": 97, "l4_csum_ok": true, "ct_csum_ok": true,
     "trailer": {"node_id": ..., "session_id": ..., "path_id": ...,
                 "fb_path_id": ..., "timestamp_us": ..., "path_delay_us": ...,
                 "flags": ["ENABLE", "CTRL"], "flags_raw": 5, "xflags": 0,
                 "naddrs": 0,
                 "addrs": [], "length": 28, "csum_adjust": ..., "check": ...}}

"index" counts all packets in the file from 0.  "proto" is "tcp", "udp",
"tcp-gso" (IP protocol 253: a TCP GSO packet kept whole with one CM,
between its IP and TCP headers,
its checksum still pending, so "l4_csum_ok" is null) or the protocol
number; sport/dport are null for other protocols.
"l4_csum_ok" is the TCP/UDP checksum of the packet as its transport layer
sees it, trailer removed (null when not applicable; packets captured on the
sending host may show bad checksums because of checksum offload).
"ct_csum_ok" is the same checksum over the whole IP payload, trailer
included, as a NAT's conntrack checks it (null when not applicable).
"tcp_seq" and "tcp_end" (TCP, not fragments; else null): the sequence
number of the segment and where the bytes after its TCP header end in
sequence space (trailer included), read from the headers, so right for a
packet cut short by the capture's snap length too.
"""

import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mpip_cm  # noqa: E402  (also makes scapy importable)

from scapy.layers.inet import IP  # noqa: E402
from scapy.layers import l2  # noqa: E402,F401  (Ether, CookedLinux)
from scapy.utils import PcapReader  # noqa: E402


def packet_info(index, pkt, show_all):
    if IP not in pkt:
        return None
    raw = mpip_cm._ip_bytes(pkt[IP])
    if raw is None:
        return None
    tr = mpip_cm.find_trailer(raw)
    if tr is None and not show_all:
        return None
    proto = raw[9]
    sport = dport = seq = end = None
    frag = struct.unpack("!H", raw[6:8])[0] & 0x1FFF
    if proto in (mpip_cm.IPPROTO_TCP, mpip_cm.IPPROTO_UDP,
                 mpip_cm.IPPROTO_MPIP_GSO) and not frag \
            and len(raw) >= mpip_cm.l4_offset(raw) + 4:
        off = mpip_cm.l4_offset(raw)
        sport, dport = struct.unpack("!HH", raw[off:off + 4])
        if proto == mpip_cm.IPPROTO_TCP and len(raw) >= off + 13:
            seq = struct.unpack("!I", raw[off + 4:off + 8])[0]
            tot = struct.unpack("!H", raw[2:4])[0]
            end = (seq + tot - off - (raw[off + 12] >> 4) * 4) % (1 << 32)
    info = {
        "index": index,
        "time": float(pkt.time),
        "src": pkt[IP].src,
        "dst": pkt[IP].dst,
        "proto": {6: "tcp", 17: "udp", 253: "tcp-gso"}.get(proto, proto),
        "sport": sport,
        "dport": dport,
        "ip_len": len(raw),
        "l4_csum_ok": mpip_cm.l4_checksum_ok(raw),
        "ct_csum_ok": mpip_cm.ct_checksum_ok(raw),
        "tcp_seq": seq,
        "tcp_end": end,
        "trailer": None,
    }
    if tr is not None:
        d = tr.to_dict()
        d["version"] = tr.version
        for k in ("ext", "auth"):
            if k in d:
                d[k] = d[k].hex()
        d["flags_raw"] = d["flags"]
        d["flags"] = tr.flag_names()
        info["trailer"] = d
    return info


def text_line(info):
    head = "#%d %s %s:%s > %s:%s len %d" % (
        info["index"], info["proto"], info["src"], info["sport"],
        info["dst"], info["dport"], info["ip_len"])
    tr = info["trailer"]
    if tr is None:
        return head + " (no trailer)"
    return head + (" node %#010x sess %d path %d fb %d ts %d delay %d "
                   "flags %s addrs [%s] T %d" % (
                       tr["node_id"], tr["session_id"], tr["path_id"],
                       tr["fb_path_id"], tr["timestamp_us"],
                       tr["path_delay_us"],
                       "|".join(tr["flags"] + [
                           name for bit, name in ((mpip_cm.X_SOLE, "SOLE"),
                                                  (mpip_cm.X_QUIET, "QUIET"),
                                                  (mpip_cm.X_DUP, "DUP"),
                                                  (mpip_cm.X_CARRIER, "CARRIER"))
                           if tr["xflags"] & bit]) or "0",
                       ", ".join(tr["addrs"]), tr["length"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pcap")
    ap.add_argument("--json", action="store_true",
                    help="one JSON object per line")
    ap.add_argument("--all", action="store_true",
                    help="also list IPv4 packets without a trailer")
    args = ap.parse_args(argv)

    found = 0
    with PcapReader(args.pcap) as reader:
        for index, pkt in enumerate(reader):
            info = packet_info(index, pkt, args.all)
            if info is None:
                continue
            found += info["trailer"] is not None
            if args.json:
                print(json.dumps(info, sort_keys=True))
            else:
                print(text_line(info))
    if not args.json:
        print("%d packets with a trailer" % found, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
