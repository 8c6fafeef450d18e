#!/usr/bin/env python3
"""Where the CPU time of a profiled TCP run goes, from `perf script`.

    profile.py SCRIPT BYTES MODE

SCRIPT is the output of `perf script -F ip,sym` for a `perf record -g` of
one CPU: one block of stack lines (leaf first) per sample.  Prints one JSON
object: the samples, the bytes iperf3 moved (BYTES), and for each of mpip's
entry points (its netfilter hooks, its timers and work) the share of all
samples whose stack contains it ("inclusive": what it calls counts too),
with its heaviest direct callees.
"""
import collections
import json
import sys

ROOTS = ("mpip_out_hook", "mpip_in_hook", "mpip_tick_work",
         "mpip_ro_expire", "mpip_addr_work")


def stacks(path):
    """Yield each sample's symbols, leaf first."""
    syms = []
    with open(path, errors="replace") as f:
        for line in f:
            fields = line.split()
            if not fields:
                if syms:
                    yield syms
                syms = []
                continue
            syms.append(fields[1] if len(fields) > 1 else "?")
    if syms:
        yield syms


def main():
    path, nbytes, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    total = 0
    incl = collections.Counter()
    callees = {r: collections.Counter() for r in ROOTS}
    for syms in stacks(path):
        total += 1
        # a sample counts once, for the innermost entry point on its stack
        # (a softirq may run on top of a hook)
        for i, sym in enumerate(syms):
            if sym in callees:
                incl[sym] += 1
                callees[sym][syms[i - 1] if i else "(self)"] += 1
                break
    pct = (lambda n: round(100.0 * n / total, 2)) if total else (lambda n: 0)
    out = {
        "mode": mode,
        "samples": total,
        "bytes": nbytes,
        "samples_per_mb": round(total / (nbytes / 1e6), 2) if nbytes else None,
        "mpip_pct": pct(sum(incl.values())),
        "roots": {r: {"pct": pct(incl[r]),
                      "callees": {s: pct(n) for s, n in
                                  callees[r].most_common(8)}}
                  for r in ROOTS if incl[r]},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
