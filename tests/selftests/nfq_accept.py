#!/usr/bin/python3
"""nfq_accept.py QUEUE COUNT_FILE: give NF_ACCEPT to every packet of
netfilter queue QUEUE, in this process (so the kernel runs the hooks after
the queue's in its sendmsg(), in process context), until SIGTERM; write
how many packets it accepted to COUNT_FILE then, and "bound" to it once
the queue is bound.

Raw nfnetlink, no library: a config message binds the queue with packet
metadata only (NFQNL_COPY_META) and GSO packets queued whole
(NFQA_CFG_F_GSO: the kernel would segment them first, and a kept GSO
packet of mpip's, IP protocol 253, cannot be), each NFQNL_MSG_PACKET gets
a verdict by its packet ID.
(include/uapi/linux/netfilter/nfnetlink_queue.h)
"""
import errno
import signal
import socket
import struct
import sys

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 4, 5
NFQA_CFG_F_GSO = 1 << 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NF_ACCEPT = 1


def attr(kind, payload):
    """One netlink attribute, padded to 4 bytes."""
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def message(msg, queue, attrs, flags=NLM_F_REQUEST, seq=0):
    """An nfnetlink message of the queue subsystem for queue QUEUE."""
    body = struct.pack("!BBH", socket.AF_UNSPEC, 0, queue) + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body),
                       NFNL_SUBSYS_QUEUE << 8 | msg, flags, seq, 0) + body


def attrs_of(body):
    """{type: payload} of the attributes after the nfgenmsg header."""
    out, off = {}, 4
    while off + 4 <= len(body):
        alen, kind = struct.unpack_from("=HH", body, off)
        if alen < 4:
            break
        out[kind & 0x3FFF] = body[off + 4:off + alen]
        off += (alen + 3) & ~3
    return out


def check_ack(sock):
    """Fail unless the kernel acknowledged the last request."""
    data = sock.recv(65536)
    _, kind, _, _, _ = struct.unpack_from("=IHHII", data)
    if kind != NLMSG_ERROR:
        sys.exit("nfq_accept: no acknowledgement")
    err = struct.unpack_from("=i", data, 16)[0]
    if err:
        sys.exit("nfq_accept: the kernel refused: errno %d" % -err)


def main():
    queue, count_file = int(sys.argv[1]), sys.argv[2]
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                         NETLINK_NETFILTER)
    sock.bind((0, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    cmd = struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, socket.AF_INET)
    sock.send(message(NFQNL_MSG_CONFIG, queue, [attr(NFQA_CFG_CMD, cmd)],
                      NLM_F_REQUEST | NLM_F_ACK, 1))
    check_ack(sock)
    params = struct.pack("!IB", 0, NFQNL_COPY_META)
    gso = struct.pack("!I", NFQA_CFG_F_GSO)
    sock.send(message(NFQNL_MSG_CONFIG, queue,
                      [attr(NFQA_CFG_PARAMS, params),
                       attr(NFQA_CFG_MASK, gso), attr(NFQA_CFG_FLAGS, gso)],
                      NLM_F_REQUEST | NLM_F_ACK, 2))
    check_ack(sock)
    accepted = 0

    def stop(_sig, _frame):
        with open(count_file, "w") as f:
            f.write("%d\n" % accepted)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    with open(count_file, "w") as f:
        f.write("bound\n")
    while True:
        try:
            data = sock.recv(1 << 16)
        except OSError as e:
            if e.errno != errno.ENOBUFS:
                raise
            continue  # the kernel dropped what did not fit
        off = 0
        while off + 16 <= len(data):
            mlen, kind = struct.unpack_from("=IH", data, off)
            if mlen < 16:
                break
            if kind == NFNL_SUBSYS_QUEUE << 8 | NFQNL_MSG_PACKET:
                hdr = attrs_of(data[off + 16:off + mlen]).get(NFQA_PACKET_HDR)
                if hdr:
                    pid = struct.unpack_from("!I", hdr)[0]
                    verdict = struct.pack("!II", NF_ACCEPT, pid)
                    sock.send(message(NFQNL_MSG_VERDICT, queue,
                                      [attr(NFQA_VERDICT_HDR, verdict)]))
                    accepted += 1
            off += (mlen + 3) & ~3


if __name__ == "__main__":
    main()
