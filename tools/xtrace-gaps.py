#!/usr/bin/env python3
"""Where a selftest file's time goes, from its trace.

  tools/xtrace-gaps.py [--min SECS] [--width N] FILE.xtrace

FILE.xtrace is what a test file writes when run with
MPIP_TEST_XTRACE=DIR (tests/selftests/lib.sh): one line per command,
"+<time> <pid> <file>:<line> [<functions>] <command>".  For each process,
the time between one of its commands and its next is what the first took
(with the expansions of the second: a `$(...)` is done before its line
is traced).  Prints every such gap of at least --min seconds (default
1), longest first, with the subtest function (t_*) it falls in, the
command, and the one after it; then each subtest function's time in its
own process (from its first traced command to its last).
"""
import argparse
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^\++(\d+\.\d+) (\d+) (\S+) \[([^\]]*)\] ?(.*)$')


def parse(path):
    """{pid: [(time, where, functions, command)]}, each in time order"""
    procs = defaultdict(list)
    with open(path, errors='replace') as f:
        for raw in f:
            m = LINE.match(raw.rstrip('\n'))
            if not m:
                continue  # a continuation line of a multi-line command
            t, pid, where, funcs, cmd = m.groups()
            procs[int(pid)].append((float(t), where, funcs.split(), cmd))
    for lines in procs.values():
        lines.sort(key=lambda x: x[0])
    return procs


def subtest(funcs):
    """the outermost t_* function the command runs in, or '-'"""
    for f in reversed(funcs):
        if f.startswith('t_'):
            return f
    return '-'


def cut(s, width):
    return s if len(s) <= width else s[:width - 3] + '...'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--min', type=float, default=1.0)
    ap.add_argument('--width', type=int, default=100)
    ap.add_argument('file')
    a = ap.parse_args()
    procs = parse(a.file)
    if not procs:
        print(f'{a.file}: no traced command', file=sys.stderr)
        return 1
    gaps = []
    spans = defaultdict(float)
    for pid, lines in procs.items():
        for (t0, w0, f0, c0), (t1, w1, _, c1) in zip(lines, lines[1:]):
            if t1 - t0 >= a.min:
                gaps.append((t1 - t0, pid, subtest(f0), w0, c0, w1, c1))
        # a subtest's time in each process that ran its commands: the
        # longest of them is the subshell ktap_run started for it
        by = defaultdict(list)
        for t, _, funcs, _ in lines:
            by[subtest(funcs)].append(t)
        for name, ts in by.items():
            spans[name] = max(spans[name], ts[-1] - ts[0])
    gaps.sort(reverse=True)
    for d, pid, name, w0, c0, w1, c1 in gaps:
        print(f'{d:7.1f}s {pid:>7} {name:<24} {w0:<22} {cut(c0, a.width)}')
        print(f'{"":49} then {w1:<17} {cut(c1, a.width)}')
    print()
    for name, s in sorted(spans.items(), key=lambda x: -x[1]):
        if name != '-':
            print(f'{s:7.1f}s {name}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
