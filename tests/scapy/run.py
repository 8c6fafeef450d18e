#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run the scapy-layer tests and print KTAP with exact counts.

  /usr/bin/python3 tests/scapy/run.py [DIR [LABEL]]

Discovers DIR/test*.py (default: tests/scapy/test*.py) with unittest and runs them.  Prints one
KTAP result per test method, in the order they ran:

  ok N ID                  passed (an expected failure counts as passed)
  not ok N ID              failed, raised an error, had a failing subTest,
                           or passed although marked expectedFailure
  ok N ID # SKIP REASON    skipped

with the tracebacks as "# " lines, and a last line
"LABEL: N passed, N failed, N skipped" (LABEL: scapy unless given).
An error outside a test (a module that does not import, a failing
setUpClass) is a failed result of its own.  The plan is the number of tests discovered; if fewer results come
out, the missing ones count as failed.  Exit status 1 if anything failed
or no test was found.  Skips are reported as skips here; tools/check.sh
counts one as a failure unless the test file allows it ("# SKIP-OK:").
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class KtapResult(unittest.TestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.n = 0
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}
        self.cur = None

    def emit(self, verdict, test_id, text=None, reason=None):
        self.n += 1
        for line in (text or "").rstrip("\n").splitlines():
            print("# " + line)
        if verdict == "passed":
            print("ok %d %s" % (self.n, test_id))
        elif verdict == "skipped":
            print("ok %d %s # SKIP %s" % (self.n, test_id, reason or ""))
        else:
            print("not ok %d %s" % (self.n, test_id))
        self.counts[verdict] += 1
        sys.stdout.flush()

    # one verdict per test: the worst of its outcomes
    def startTest(self, test):
        super().startTest(test)
        self.cur = {"verdict": "passed", "text": "", "reason": None}

    def _fail(self, test, err):
        text = self._exc_info_to_string(err, test)
        if self.cur is None:   # outside a test: setUpClass, an import
            self.emit("failed", test.id(), text)
            return
        self.cur["verdict"] = "failed"
        self.cur["text"] += text

    def addError(self, test, err):
        super().addError(test, err)
        self._fail(test, err)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._fail(test, err)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.cur["verdict"] = "failed"
            self.cur["text"] += "%s:\n%s" % (subtest, self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if self.cur is None:
            self.emit("skipped", test.id(), reason=reason)
            return
        if self.cur["verdict"] == "passed":
            self.cur["verdict"] = "skipped"
            self.cur["reason"] = reason

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.cur["verdict"] = "failed"
        self.cur["text"] += "passed although marked expectedFailure\n"

    def stopTest(self, test):
        super().stopTest(test)
        c = self.cur
        self.cur = None
        self.emit(c["verdict"], test.id(), c["text"], c["reason"])


def main(argv):
    where = argv[1] if len(argv) > 1 else HERE
    label = argv[2] if len(argv) > 2 else "scapy"
    suite = unittest.defaultTestLoader.discover(where, top_level_dir=where)
    plan = suite.countTestCases()
    print("KTAP version 1")
    print("1..%d" % plan)
    sys.stdout.flush()
    result = KtapResult()
    suite.run(result)
    counts = result.counts
    if plan == 0:
        print("# no tests found in %s" % where)
        counts["failed"] += 1
    if result.n < plan:
        print("# ran %d of %d planned tests" % (result.n, plan))
        counts["failed"] += plan - result.n
    print("%s: %d passed, %d failed, %d skipped"
          % (label, counts["passed"], counts["failed"], counts["skipped"]))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
