#!/usr/bin/python3
"""Byte-counter sampler and link switch for one network namespace.

    sampler.py OUT [--interval S] [--devs eth1,eth2] [--ready FILE]
               [--trigger FILE [--trigger-bytes N]]
               [--control FIFO --ack FILE]

Writes one line per sample to OUT (flushed at once, so another process can
follow it):

    # t eth1.tx_bytes eth1.rx_bytes eth1.qdisc_bytes eth1.qdisc_drops \
        eth1.qdisc_qlen eth2.tx_bytes ... cpu.busy cpu.total cpu0.busy \
        cpu0.total cpu1.busy ...
    1732251234.104511 1234 5678 1300 0 17 ... 81234 95000 40100 47500 ...

t is the wall clock (time.time(), the clock bash's $EPOCHREALTIME reads),
so samples from several namespaces and events logged by a shell script share
one time base.  tx_bytes and rx_bytes come from /proc/net/dev; qdisc_bytes
is what the device's root qdisc sent (an rtnetlink dump), which counts each
segment of a GSO packet with its headers, as a netem rate does, where
rx_bytes counts the headers of such a packet once; qdisc_drops is the
packets that qdisc dropped so far (a netem queue that overflowed) and
qdisc_qlen the packets queued in it at the time of the sample.  Both
sources list the devices of the reader's namespace: start the sampler
inside the namespace (`ip netns exec NS sampler.py ...`).  cpu.busy and
cpu.total are the machine's CPU time in clock ticks, all CPUs together,
from /proc/stat (which no namespace separates): total is every field's
sum, busy the total less idle and iowait; cpuN.busy and cpuN.total the
same for each CPU (those online when the sampler started).  A device (or qdisc) that is missing
reads as an empty field.  Runs until SIGTERM/SIGINT; creates FILE (--ready)
after the first sample.

--trigger FILE: each SIGUSR1 arms a trigger; once the devices together have
received N more bytes (default 64 KiB) than when it was armed, the sampler
writes into FILE the time of the last sample before the data started (fewer
than 16 KiB received), i.e. when a transfer started to arrive.

--control FIFO: reads commands, one a line: "up DEV" or "down DEV" set DEV's
administrative state (as `ip link set dev DEV up|down` does) and append
"START END COMMAND DEV ok|error..." to the --ack file, START and END being
when the change began and when it was complete (taking a link down waits
for RCU grace periods, which can take a while under TCG).  This is much
faster and more precise than starting `ip` under TCG.

Kept to the standard library and cheap to start: under TCG every process
start costs a lot.
"""
import argparse
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def read_counters(fd):
    """Map device -> (rx_bytes, tx_bytes) from /proc/net/dev."""
    data = b""
    off = 0
    while True:
        chunk = os.pread(fd, 65536, off)
        if not chunk:
            break
        data += chunk
        off += len(chunk)
    out = {}
    for line in data.decode("ascii", "replace").splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        if len(f) >= 9:
            out[name.strip()] = (int(f[0]), int(f[8]))
    return out


def read_cpu(fd):
    """Map "cpu" (all CPUs) and "cpuN" -> (busy, total) CPU ticks, from
    /proc/stat."""
    out = {}
    for line in os.pread(fd, 1 << 16, 0).split(b"\n"):
        f = line.split()
        if len(f) < 6 or not f[0].startswith(b"cpu"):
            continue
        # user nice system idle iowait irq softirq steal (guest time is
        # counted in user already)
        v = [int(x) for x in f[1:9]]
        out[f[0].decode()] = (sum(v) - v[3] - v[4], sum(v))
    return out


RTM_GETQDISC = 38
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
TCA_STATS = 3
TC_H_ROOT = 0xFFFFFFFF


class QdiscReader:
    """Bytes sent, packets dropped and packets queued of each device's root
    qdisc, from an rtnetlink dump (struct tc_stats).

    The shaper charges a link for every segment of a GSO packet with its
    own headers; a device's rx_bytes counts such a packet's headers once.
    These counters are what the link's rate applies to."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  socket.NETLINK_ROUTE)
        self.seq = 0
        self.names = {}

    def name(self, ifindex):
        if ifindex not in self.names:
            try:
                self.names[ifindex] = socket.if_indextoname(ifindex)
            except OSError:
                self.names[ifindex] = None
        return self.names[ifindex]

    def read(self):
        """Map device -> (bytes sent, drops, qlen) of its root qdisc."""
        self.seq += 1
        tcm = struct.pack("=BxxxiIII", socket.AF_UNSPEC, 0, 0, 0, 0)
        hdr = struct.pack("=IHHII", 16 + len(tcm), RTM_GETQDISC,
                          NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0)
        self.sock.send(hdr + tcm)
        out = {}
        while True:
            data = self.sock.recv(1 << 16)
            off = 0
            while off + 16 <= len(data):
                ln, typ, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    return out
                if typ in (NLMSG_DONE, NLMSG_ERROR) and seq == self.seq:
                    return out
                if seq == self.seq and ln >= 36:
                    self._parse(data[off + 16:off + ln], out)
                off += (ln + 3) & ~3

    def _parse(self, msg, out):
        _, ifindex, _, parent, _ = struct.unpack_from("=BxxxiIII", msg, 0)
        if parent != TC_H_ROOT:
            return
        off = 20
        while off + 4 <= len(msg):
            ln, typ = struct.unpack_from("=HH", msg, off)
            if ln < 4:
                return
            if typ == TCA_STATS and ln >= 40:
                dev = self.name(ifindex)
                if dev:
                    # bytes, packets, drops, overlimits, bps, pps, qlen
                    st = struct.unpack_from("=QIIIIII", msg, off + 4)
                    out[dev] = (st[0], st[2], st[6])
                return
            off += (ln + 3) & ~3


def set_link(dev, up):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        name = dev.encode()[:15]
        r = fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH22x", name, 0))
        flags = struct.unpack("16sH22x", r)[1]
        flags = (flags | IFF_UP) if up else (flags & ~IFF_UP)
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", name, flags))
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--interval", type=float, default=0.1)
    ap.add_argument("--devs", default="eth1,eth2")
    ap.add_argument("--ready")
    ap.add_argument("--trigger")
    ap.add_argument("--trigger-bytes", type=int, default=65536)
    ap.add_argument("--control")
    ap.add_argument("--ack")
    a = ap.parse_args()
    devs = [d for d in a.devs.split(",") if d]

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    arm = []
    signal.signal(signal.SIGUSR1, lambda *_: arm.append(1))
    base = quiet_t = None

    ctl = None
    pending = b""
    if a.control:
        # read-write: never sees EOF when a writer goes away
        ctl = os.open(a.control, os.O_RDWR | os.O_NONBLOCK)

    fd = os.open("/proc/net/dev", os.O_RDONLY)
    cpu_fd = os.open("/proc/stat", os.O_RDONLY)
    cpus = ["cpu"] + sorted((c for c in read_cpu(cpu_fd) if c != "cpu"),
                            key=lambda c: int(c[3:]))
    qd = QdiscReader()

    def sample():
        # (time stamp: the middle of the reads, which a busy CPU can stretch)
        t1 = time.time()
        c = read_counters(fd)
        q = qd.read()
        t2 = time.time()
        fields = []
        for d in devs:
            rx, tx = c.get(d, ("", ""))
            fields += [str(tx), str(rx)]
            fields += [str(v) for v in q.get(d, ("", "", ""))]
        u = read_cpu(cpu_fd)
        for cpu in cpus:
            fields += [str(v) for v in u.get(cpu, ("", ""))]
        return c, "%.6f %s\n" % ((t1 + t2) / 2, " ".join(fields))

    def command(line):
        p = line.split()
        t1 = time.time()
        if len(p) == 2 and p[0] in ("up", "down"):
            try:
                set_link(p[1], p[0] == "up")
                res = "ok"
            except OSError as e:
                res = "error " + str(e).replace("\n", " ")
        else:
            res = "error unknown command"
        if a.ack:
            with open(a.ack, "a") as f:
                f.write("%.6f %.6f %s %s\n" % (t1, time.time(), " ".join(p), res))

    with open(a.out, "w", buffering=1) as f:
        f.write("# t " + " ".join("%s.tx_bytes %s.rx_bytes %s.qdisc_bytes "
                                  "%s.qdisc_drops %s.qdisc_qlen" % ((d,) * 5)
                                  for d in devs) +
                "".join(" %s.busy %s.total" % (c, c) for c in cpus) + "\n")
        nxt = time.time()
        first = True
        while not stop:
            c, line = sample()
            now = float(line.split(" ", 1)[0])
            f.write(line)
            if arm:
                del arm[:]
                base = sum(c.get(d, (0, 0))[0] for d in devs)
                quiet_t = now
            elif base is not None:
                got = sum(c.get(d, (0, 0))[0] for d in devs) - base
                if got < 16384:
                    quiet_t = now
                elif got >= a.trigger_bytes and a.trigger:
                    tmp = a.trigger + ".tmp"
                    with open(tmp, "w") as t:
                        t.write("%.6f\n" % quiet_t)
                    os.rename(tmp, a.trigger)
                    base = None
            if first and a.ready:
                open(a.ready, "w").close()
                first = False
            nxt += a.interval
            # wait for the next sample time, serving commands meanwhile
            while not stop:
                delay = nxt - time.time()
                if delay <= 0:
                    if delay < -a.interval:   # fell behind (busy CPU): no burst
                        nxt = time.time()
                    break
                if ctl is None:
                    time.sleep(delay)
                    continue
                try:
                    r, _, _ = select.select([ctl], [], [], delay)
                except InterruptedError:
                    continue
                if r:
                    try:
                        pending += os.read(ctl, 4096)
                    except BlockingIOError:
                        continue
                    while b"\n" in pending:
                        cmd, pending = pending.split(b"\n", 1)
                        command(cmd.decode("ascii", "replace"))
                        # a sample right after a change shows its effect
                        nxt = min(nxt, time.time())
        f.write(sample()[1])    # one last sample covers the end of a run
    return 0


if __name__ == "__main__":
    sys.exit(main())
