#!/usr/bin/python3
"""tcg_keys_holder.py - for tools/tcg-keys.sh, in the guest only: set the
once-only static keys that TCP, UDP, route exceptions and inet_peer set
at their first use over lo, and hold sockets that keep SO_TIMESTAMP's
and UDP_ENCAP's keys set.  Prints "ready" once done, closes its stdout,
then sleeps until the guest ends."""
import socket, struct, sys, time
SO_TIMESTAMP, UDP_ENCAP, ESPINUDP = 29, 100, 2
held = []
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        srv = socket.socket(fam, socket.SOCK_STREAM)
        srv.bind((addr, 0)); srv.listen(1)
        c = socket.create_connection(srv.getsockname()[:2], timeout=5)
        a, _ = srv.accept(); c.sendall(b"x"); a.recv(1)
        for s in (c, a, srv):
            s.close()
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.bind((addr, 0))
        u.sendto(b"x", u.getsockname()[:2]); u.recv(1)
        u.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
        held.append(u)
    except OSError as e:
        print("tcg-keys: lo traffic:", e, file=sys.stderr)
try:
    e = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    e.setsockopt(socket.IPPROTO_UDP, UDP_ENCAP, ESPINUDP)
    held.append(e)
except OSError as e:
    print("tcg-keys: UDP_ENCAP:", e, file=sys.stderr)

def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF

# a route exception (PMTU): "fragmentation needed" about a datagram of
# a connected UDP socket over lo, from a raw socket
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0)); u.connect(("127.0.0.1", 9))
    sp = u.getsockname()[1]
    q = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 0, 0x4000, 64, 17, 0,
                    socket.inet_aton("127.0.0.1"), socket.inet_aton("127.0.0.1"))
    q += struct.pack("!HHHH", sp, 9, 8, 0)
    icmp = struct.pack("!BBHHH", 3, 4, 0, 0, 1000) + q
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    r.sendto(icmp, ("127.0.0.1", 0))
    time.sleep(0.2)
    held += [u, r]
    # and a datagram over lo fragmented at that MTU: its reassembly
    # looks up the inet_peer of the sender (ip4_frag_init)
    rcv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rcv.bind(("127.0.0.1", 0)); rcv.settimeout(5)
    f = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    f.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER: DONT
    f.sendto(b"x" * 1500, rcv.getsockname())
    rcv.recv(2000)
except OSError as e:
    print("tcg-keys: route exception or fragments:", e, file=sys.stderr)
print("ready", flush=True)
sys.stdout.close()
while True:
    time.sleep(3600)
