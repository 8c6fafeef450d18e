#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tests/ktap_verify.py - judge one suite's output for tools/check.sh.

  ktap_verify.py NAME LOG [SOURCE...]

LOG is everything the suite printed (stdout and stderr).  Checks, on its
own, what the suite's summary line claims:

 - exactly one summary line "NAME: N passed, N failed[, N skipped]" at the
   start of a line;
 - a KTAP plan "1..N" (N > 0) at the top level, and exactly N results
   numbered 1..N;
 - for each top-level result, the block of subtests indented by 4 spaces
   above it (tests/selftests/run.sh prints one per test file) has its own
   plan and as many results as planned; a block that plans nothing is a
   failure unless it says "# SKIP";
 - that the results add up to the summary's counts (a failed top-level
   result with no failed subtest counts as one failure, and each planned
   subtest that did not run as one);
 - the skip policy: a skip ("ok N NAME # SKIP REASON") counts as a
   failure unless it gives a REASON and a SOURCE allows it with a line

       # SKIP-OK: GLOB: WHY

   (any comment leader: "#", "//", "/*" or "*"), where GLOB is a shell
   pattern (fnmatch) for NAME, without ": ", and WHY is not empty.  A
   skipped subtest in a block "# Subtest: X" is looked up in the SOURCE
   named X.* (a test file); any other skip in every SOURCE.

Prints one "# ..." line per problem, then a last line "P F S": the counts
to report (the summary's, with disallowed skips moved from skipped to
failed, and at least one failure if there was any problem).  Exit status
1 if there was a problem, else 0.
"""

import fnmatch
import os
import re
import sys

RESULT = re.compile(r"^(not )?ok (\d+)(?: - | |$)(.*)$")
DIRECTIVE = re.compile(r"^(.*?)\s+#\s*(SKIP|TODO)\b\s*(.*)$", re.IGNORECASE)
PLAN = re.compile(r"^1\.\.(\d+)\s*(#.*)?$")
SUBTEST = re.compile(r"^#\s*Subtest:\s*(\S+)")
SKIP_OK = re.compile(r"^\s*(?:#|//|/\*|\*)\s*SKIP-OK:\s*(.+?):\s+(\S.*?)\s*(?:\*/)?\s*$")


def allowances(path):
    """The (glob, why) pairs a source file declares."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = SKIP_OK.match(line)
                if m:
                    out.append((m.group(1), m.group(2)))
    except OSError:
        pass
    return out


def parse_result(text):
    """(ok, number, name, directive, reason) of a result line, or None."""
    m = RESULT.match(text)
    if not m:
        return None
    ok, num, rest = m.group(1) is None, int(m.group(2)), m.group(3)
    directive = reason = ""
    d = DIRECTIVE.match(rest)
    if d:
        rest, directive, reason = d.group(1), d.group(2).upper(), d.group(3)
    return ok, num, rest.strip(), directive, reason.strip()


class Block:
    def __init__(self):
        self.name = None
        self.plan = None
        self.plan_skip = False
        self.results = []


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    name, log = argv[1], argv[2]
    sources = argv[3:]
    problems = []

    with open(log, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()

    summary = re.compile(r"^%s: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$"
                         % re.escape(name))
    sums = [m for m in map(summary.match, lines) if m]
    if not sums:
        problems.append("no summary line '%s: N passed, N failed'" % name)
    elif len(sums) > 1:
        problems.append("%d summary lines; the first counts" % len(sums))

    top_plan = None
    top = []            # (result tuple, Block)
    block = Block()
    for raw in lines:
        if raw.startswith("    ") and not raw.startswith("     "):
            text = raw[4:]
            m = SUBTEST.match(text)
            if m:
                block.name = m.group(1)
                continue
            m = PLAN.match(text)
            if m and block.plan is None:
                block.plan = int(m.group(1))
                block.plan_skip = bool(m.group(2)) and "SKIP" in m.group(2).upper()
                continue
            r = parse_result(text)
            if r:
                block.results.append(r)
            continue
        m = PLAN.match(raw)
        if m:
            if top_plan is None:
                top_plan = int(m.group(1))
            else:
                problems.append("a second top-level plan '%s'" % raw)
            continue
        r = parse_result(raw)
        if r:
            top.append((r, block))
            block = Block()

    by_stem = {}
    for s in sources:
        by_stem.setdefault(os.path.splitext(os.path.basename(s))[0], s)
    every = [a for s in sources for a in allowances(s)]

    def allowed(test, reason, where):
        if not reason:
            return False
        allow = allowances(by_stem[where]) if where in by_stem else every
        return any(fnmatch.fnmatchcase(test, g) for g, _ in allow)

    passed = failed = skipped = disallowed = 0

    def count(r, where, label):
        nonlocal passed, failed, skipped, disallowed
        ok, _, test, directive, reason = r
        if not ok:
            failed += 1
        elif directive == "SKIP":
            skipped += 1
            if not allowed(test, reason, where):
                disallowed += 1
                problems.append("%s: skip not allowed (%s; no SKIP-OK for it)"
                                % (label, "reason: " + reason if reason
                                   else "no reason given"))
        else:
            passed += 1

    def numbered(results, label):
        nums = [r[1] for r in results]
        if nums != list(range(1, len(nums) + 1)):
            problems.append("%s: results numbered %s, not 1..%d"
                            % (label, " ".join(map(str, nums[:20])), len(nums)))

    if top_plan is None:
        problems.append("no top-level KTAP plan")
        failed += 1
    elif top_plan == 0:
        problems.append("the plan is 1..0: no tests")
        failed += 1
    elif len(top) != top_plan:
        problems.append("%d top-level results, %d planned" % (len(top), top_plan))
        failed += max(top_plan - len(top), 0)
    numbered([r for r, _ in top], "top level")

    for r, b in top:
        label = r[2]
        f0 = failed
        if b.results or b.plan is not None or b.name is not None:
            if b.plan is None:
                problems.append("%s: no plan" % label)
                failed += 1
            elif b.plan == 0 and not b.plan_skip:
                problems.append("%s: plans no subtests" % label)
                failed += 1
            elif len(b.results) != b.plan:
                problems.append("%s: ran %d of %d planned subtests"
                                % (label, len(b.results), b.plan))
                failed += max(b.plan - len(b.results), 0)
            numbered(b.results, label)
        if b.results:
            for sub in b.results:
                count(sub, b.name or label, "%s/%s" % (label, sub[2]))
            if not r[0] and failed == f0:
                failed += 1
        else:
            count(r, label, label)

    if sums:
        p, f, s = (int(g) if g is not None else None for g in sums[0].groups())
        claim = (p, f, s if s is not None else skipped)
        if claim != (passed, failed, skipped):
            problems.append("summary says %d passed, %d failed, %d skipped; "
                            "the results say %d, %d, %d"
                            % (claim + (passed, failed, skipped)))
    else:
        p, f, s = passed, failed, skipped

    if s is None:
        s = skipped
    f += disallowed
    s = max(s - disallowed, 0)
    if problems and f == 0:
        f = 1
    for msg in problems:
        print("# %s" % msg)
    print(p, f, s)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
