#!/usr/bin/env python3
"""Check a TCP stream of copies of a block as it arrives; keep no data.

  streamcheck.py BLOCK OUT

Reads standard input to its end and checks that it is copies of the file
BLOCK, one after the other (the last one may be cut short until the
stream ends).  OUT's size follows the bytes received: it is a sparse file
of that length, for callers that watch a stream's progress by its size,
and it takes no room.  (The stream's data were written to OUT before: a
stream of some minutes on a fast machine filled the guest's /tmp, a
tmpfs, and its receiver failed.)

Exits 0 at the end of the stream if every byte matched, 1 at the first
byte that did not (the offset is printed to standard error), 2 on a
usage error.
"""
import os
import sys

CHUNK = 1 << 16


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        block = f.read()
    if not block:
        print("streamcheck: empty block", file=sys.stderr)
        return 2
    # two copies, so that any chunk that fits in one block is one slice
    twice = block + block
    size = len(block)
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    inp = sys.stdin.buffer.raw
    total = 0
    while True:
        got = inp.read(min(CHUNK, size))
        if not got:
            break
        at = total % size
        if got != twice[at:at + len(got)]:
            for i, b in enumerate(got):
                if b != twice[at + i]:
                    break
            print("streamcheck: byte %d differs from the block's byte %d"
                  % (total + i, (at + i) % size), file=sys.stderr)
            os.ftruncate(fd, total + i)
            return 1
        total += len(got)
        os.ftruncate(fd, total)
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
