#!/usr/bin/env bash
# tests/harness_test.sh - self-test of the test harness, on the host, in a
# few seconds: feeds tools/check.sh's run_suite, tests/ktap_verify.py,
# tests/selftests/run.sh, tests/scapy/run.py, tests/klog.sh and
# tools/debug-kernel.sh's merge made-up
# suites, test files and kernel logs, and checks that each way of failing
# is caught (and that a clean suite passes).  Nothing here touches the
# kernel: run.sh gets a scratch file as its kernel log (KLOG_FILE).
#
#   bash tests/harness_test.sh
#
# Prints KTAP and a last line "harness: N passed, N failed"; exit status
# non-zero if a check failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
TMP=$(mktemp -d /tmp/mpip-harness.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3
VERIFY=$REPO/tests/ktap_verify.py

n=0
passed=0
failed=0
PLAN=55

# check NAME CMD...: one test; CMD's output becomes diagnostics if it fails
check() {
	local name=$1 out l
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $name"
		passed=$((passed + 1))
	else
		[[ -z $out ]] || while IFS= read -r l; do printf '# %s\n' "$l"; done <<<"$out"
		echo "not ok $n $name"
		failed=$((failed + 1))
	fi
}

echo "KTAP version 1"
echo "1..$PLAN"

# ------------------------------------------------------ tests/ktap_verify.py

# verify_is WANT NAME LOG [SOURCE...]: ktap_verify.py exits WANT (0 clean,
# 1 problem); prints its output
verify_is() {
	local want=$1 rc=0
	shift
	"$PY" "$VERIFY" "$@" || rc=$?
	[[ $rc == "$want" ]] || { echo "exit status $rc, want $want"; return 1; }
}

# counts_are "P F S" NAME LOG [SOURCE...]: its last line is "P F S"
counts_are() {
	local want=$1 got
	shift
	got=$("$PY" "$VERIFY" "$@" | tail -n 1)
	[[ $got == "$want" ]] || { echo "counts '$got', want '$want'"; return 1; }
}

suite() { # NAME FILE LINES...: write a made-up suite's output
	local f=$TMP/$1
	shift
	printf '%s\n' "$@" >"$f"
}

suite good 'KTAP version 1' '1..3' 'ok 1 - a' 'ok 2 b' '# diag' 'ok 3 c d e' \
	'x: 3 passed, 0 failed'
check "verify: a clean suite passes" verify_is 0 x "$TMP/good"
check "verify: a clean suite's counts" counts_are "3 0 0" x "$TMP/good"

suite short 'KTAP version 1' '1..5' 'ok 1 a' 'ok 2 b' 'ok 3 c' 'ok 4 d' \
	'x: 4 passed, 0 failed'
check "verify: plans 5, runs 4: fails" verify_is 1 x "$TMP/short"
check "verify: plans 5, runs 4: 1 failure" counts_are "4 1 0" x "$TMP/short"

suite nosum 'KTAP version 1' '1..1' 'ok 1 a'
check "verify: no summary line fails" verify_is 1 x "$TMP/nosum"
suite twosum 'KTAP version 1' '1..1' 'not ok 1 a' 'x: 0 passed, 1 failed' \
	'x: 1 passed, 0 failed'
check "verify: two summary lines fail" verify_is 1 x "$TMP/twosum"
suite lie 'KTAP version 1' '1..2' 'ok 1 a' 'not ok 2 b' 'x: 2 passed, 0 failed'
check "verify: a summary the results contradict fails" verify_is 1 x "$TMP/lie"
suite empty 'KTAP version 1' '1..0' 'x: 0 passed, 0 failed'
check "verify: a suite of no tests fails" verify_is 1 x "$TMP/empty"

# skips: reason and SKIP-OK
printf '%s\n' '# SKIP-OK: allowed*: the tool may be missing' >"$TMP/src.sh"
suite skips 'KTAP version 1' '1..3' 'ok 1 allowed one # SKIP no tool' \
	'ok 2 other # SKIP no tool' 'ok 3 allowed two # SKIP' \
	'x: 0 passed, 0 failed, 3 skipped'
check "verify: only a declared skip with a reason is a skip" \
	counts_are "0 2 1" x "$TMP/skips" "$TMP/src.sh"
suite skipok 'KTAP version 1' '1..2' 'ok 1 allowed one # SKIP no tool' 'ok 2 b' \
	'x: 1 passed, 0 failed, 1 skipped'
check "verify: a declared skip passes" verify_is 0 x "$TMP/skipok" "$TMP/src.sh"

# nested blocks (run.sh's output)
suite nested 'KTAP version 1' '1..2' '    # Subtest: test_a' '    1..3' \
	'    ok 1 s1' '    ok 2 s2' 'ok 1 test_a' '    # Subtest: test_b' \
	'    1..1' '    ok 1 s1' 'ok 2 test_b' 'y: 3 passed, 1 failed, 0 skipped'
check "verify: a file that runs 2 of 3 subtests fails" \
	counts_are "3 1 0" y "$TMP/nested"
suite nested_ok 'KTAP version 1' '1..1' '    # Subtest: test_a' '    1..2' \
	'    ok 1 s1' '    ok 2 s2 # SKIP no tool' 'ok 1 test_a' \
	'y: 1 passed, 0 failed, 1 skipped'
printf '%s\n' '# SKIP-OK: s2: may be missing' >"$TMP/test_a.sh"
printf '%s\n' '# SKIP-OK: other: x' >"$TMP/test_b.sh"
check "verify: a subtest's skip is looked up in its own file" \
	verify_is 0 y "$TMP/nested_ok" "$TMP/test_b.sh" "$TMP/test_a.sh"
check "verify: not in another file's" \
	verify_is 1 y "$TMP/nested_ok" "$TMP/test_b.sh"

# ------------------------------------------------------------ tests/klog.sh
# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"

klog_flags_all() {
	local l miss=0
	for l in "WARNING: CPU: 1 PID: 7 at net/core/dev.c:10 f+0x1/0x2" \
		"BUG: unable to handle page fault for address: 0" "kernel BUG at mm/slub.c:1!" \
		"Oops: 0000 [#1] PREEMPT SMP NOPTI" "invalid opcode: 0000 [#1] SMP" \
		"BUG: KASAN: slab-out-of-bounds in f+0x1" "BUG: KFENCE: use-after-free read" \
		"UBSAN: shift-out-of-bounds in x.c:1:2" "general protection fault, probably" \
		"refcount_t: underflow; use-after-free." "kmemleak: 2 new suspected memory leaks" \
		"WARNING: possible circular locking dependency detected" \
		"WARNING: possible recursive locking detected" "WARNING: inconsistent lock state" \
		"WARNING: suspicious RCU usage" "WARNING: lock held when returning to user space!" \
		"BUG: sleeping function called from invalid context at x" \
		"BUG: scheduling while atomic: a/1/0x1" \
		"rcu: INFO: rcu_preempt self-detected stall on CPU" \
		"rcu: INFO: rcu_sched detected stalls on CPUs/tasks:" \
		"INFO: task kworker/0:1:12 blocked for more than 120 seconds." \
		"unregister_netdevice: waiting for eth1 to become free. Usage count = 2" \
		"list_add corruption. prev->next should be next" "list_del corruption, ffff" \
		"BUG: KASAN: double-free in f" "watchdog: BUG: soft lockup - CPU#0 stuck for 22s!" \
		"Call Trace:"; do
		klog_bad <<<"[  1.0] $l" >/dev/null || { echo "not caught: $l"; miss=1; }
	done
	return "$miss"
}
check "klog: every kind of kernel bug report is caught" klog_flags_all

klog_passes_benign() {
	local l out
	for l in "mpip 0.1.0 loaded" "PCI: Using host bridge windows from ACPI; if necessary, use \"pci=nocrs\" and report a bug" \
		"AMD-Vi: AMD IOMMUv2 functionality not available on this system - This is not a bug." \
		"mpip: loading out-of-tree module taints kernel." "netem: version 1.3" \
		"mpip-klog-mark-WARNING-BUG-1-2" "CONFIG_DEBUG_INFO ok" \
		"rcu: 	RCU callback double-/use-after-free debug is enabled." \
		"sysrq: Show Blocked State" "Call Trace:"; do
		printf '[  1.0] %s\n' "$l"
	done >"$TMP/benign"
	if out=$(klog_bad <"$TMP/benign"); then
		echo "false positives: $out"
		return 1
	fi
	# a trace after the SysRq dump's is one again once another report began
	printf '[  2.0] %s\n' "WARNING: CPU: 0 at x" "Call Trace:" >>"$TMP/benign"
	[[ $(klog_bad <"$TMP/benign" | wc -l) == 2 ]]
}
check "klog: boot noise, our marks and a SysRq dump are not" klog_passes_benign

klog_report_whole() {
	local out
	printf '[  1.0] %s\n' "mpip 0.1.0 loaded" "mpip-klog-mark-BUG-1" "Oops: int3: 0000 [#1]" \
		"RIP: 0010:f+0x1/0x2" "Call Trace:" " <IRQ>" "Kernel panic - not syncing" >"$TMP/oops"
	out=$(klog_report 3 <"$TMP/oops")
	[[ $out == "$(sed -n 3,5p "$TMP/oops")" ]] || { echo "got: $out"; return 1; }
	! klog_report <<<"[  1.0] mpip 0.1.0 loaded" >/dev/null
}
check "klog: the first report is printed whole, from its first line" klog_report_whole

# known_report [SITE [FRAME]]: a debug kernel's "suspicious RCU usage"
# report, as Linux 6.1 prints it for a new nft set (tests/klog.sh), its
# site line SITE and one more stack frame FRAME if given
known_report() {
	printf '[ 2577.9] %s\n' "" "=============================" \
		"WARNING: suspicious RCU usage" \
		"6.1.192-mpip-debug #1 Tainted: G           O" \
		"-----------------------------" \
		"${1:-net/netfilter/nf_tables_api.c:4122 RCU-list traversed in non-reader section!!}" \
		"1 lock held by nft/4565:" \
		" #0: ff1100010e2be8b8 (&nft_net->commit_mutex){+.+.}-{3:3}, at: nf_tables_valid_genid+0x2a/0xf0" \
		"stack backtrace:" "Call Trace:" " <TASK>" " dump_stack_lvl+0x6a/0x9f" \
		" lockdep_rcu_suspicious.cold+0x96/0x112" " nft_set_lookup.part.0+0x12f/0x170" \
		" nf_tables_newset+0xc73/0x4020" ${2:+" $2"} " nfnetlink_rcv_batch+0x1505/0x24f0" \
		" do_syscall_64+0x34/0x90" " </TASK>"
}

klog_known_reports() {
	local out
	{ echo "[  1.0] mpip 0.1.0 loaded"; known_report; known_report; } >"$TMP/known"
	if out=$(klog_bad <"$TMP/known"); then
		echo "the known nf_tables report was taken for a bug: $out"
		return 1
	fi
	# the same with an mpip frame in its stack, or at another site, is one
	known_report "" "mpip_out_hook+0x1/0x2 [mpip]" >"$TMP/known"
	klog_bad <"$TMP/known" >/dev/null || { echo "missed with an mpip frame"; return 1; }
	known_report "net/netfilter/nf_tables_api.c:99 suspicious rcu_dereference_check() usage!" >"$TMP/known"
	klog_bad <"$TMP/known" >/dev/null || { echo "missed at another site"; return 1; }
	known_report "net/ipv4/route.c:99 RCU-list traversed in non-reader section!!" >"$TMP/known"
	klog_bad <"$TMP/known" >/dev/null || { echo "missed in another file"; return 1; }
	# a set's elements, from the same debug run
	known_report "net/netfilter/nft_set_bitmap.c:96 RCU-list traversed in non-reader section!!" >"$TMP/known"
	if out=$(klog_bad <"$TMP/known"); then
		echo "the known nft_set_bitmap report was taken for a bug: $out"
		return 1
	fi
	# and one after it is still found
	{ known_report; printf '[  3.0] %s\n' "WARNING: CPU: 0 PID: 1 at x" "Call Trace:"; } >"$TMP/known"
	[[ $(klog_bad <"$TMP/known" | wc -l) == 2 ]] || { echo "a report after the known one was lost"; return 1; }
}
check "klog: the debug kernel's known nf_tables RCU report is not a finding; with an mpip frame it is" klog_known_reports

# ---------------------------------------------------- tests/selftests/run.sh

# runsh NAME: run run.sh on the stub test file $TMP/t/NAME.sh with a
# scratch kernel log and a time limit of RUNSH_TIMEOUT (default 20 s);
# output in $TMP/NAME.out, status in RC
runsh() {
	RC=0
	LIB=${LIB:-} MPIP_SELFTEST_LOGDIR=$TMP/logs KLOG_FILE=${KLOG:-$TMP/kmsg.$1} MPIP_IN_VM='' \
		bash "$REPO/tests/selftests/run.sh" --timeout "${RUNSH_TIMEOUT:-20}" "$TMP/t/$1.sh" \
		>"$TMP/$1.out" 2>&1 || RC=$?
	cat "$TMP/$1.out"
}
stub() { # NAME LINES...: a test file
	mkdir -p "$TMP/t"
	printf '%s\n' '#!/usr/bin/env bash' "${@:2}" >"$TMP/t/$1.sh"
}
# runsh_fails NAME PATTERN: run.sh fails, its last line has "1 failed"
# or more, and the output matches PATTERN (grep -E)
runsh_fails() {
	local got
	runsh "$1"
	((RC != 0)) || { echo "run.sh exited 0"; return 1; }
	tail -n 1 "$TMP/$1.out" | grep -qE '^selftests: [0-9]+ passed, [1-9][0-9]* failed' ||
		{ echo "no failure counted"; return 1; }
	grep -qE -- "$2" "$TMP/$1.out" || { echo "no '$2'"; return 1; }
	got=$("$PY" "$VERIFY" selftests "$TMP/$1.out" "$TMP/t/$1.sh" | tail -n 1)
	[[ $got =~ ^[0-9]+\ [1-9][0-9]*\ [0-9]+$ ]] ||
		{ echo "ktap_verify.py counts no failure: $got"; return 1; }
}

stub clean 'echo "1..2"' 'echo "ok 1 a"' 'echo "ok 2 b # SKIP no tool"' \
	'# SKIP-OK: b: the tool is optional'
runsh_passes() {
	runsh clean
	((RC == 0)) || { echo "run.sh exited $RC"; return 1; }
	tail -n 1 "$TMP/clean.out" | grep -qx 'selftests: 2 passed, 0 failed, 1 skipped' ||
		{ echo "wrong summary"; return 1; }
	verify_is 0 selftests "$TMP/clean.out" "$TMP/t/clean.sh"
}
check "run.sh: a clean file with an allowed skip passes" runsh_passes
check "run.sh + ktap_verify: check.sh's counts for it" \
	counts_are "2 0 1" selftests "$TMP/clean.out" "$TMP/t/clean.sh"

stub exit1 'echo "1..1"' 'echo "ok 1 a"' 'echo "# Totals: pass:1"' 'exit 1'
check "run.sh: a file that exits 1 after its results fails" \
	runsh_fails exit1 'exited with status 1'
# shellcheck disable=SC2016 # the stubs' lines are code
stub short 'echo "1..5"' 'for i in 1 2 3 4; do echo "ok $i t$i"; done'
check "run.sh: a file that plans 5 and runs 4 fails" \
	runsh_fails short 'ran 4 of 5 planned'
stub noreason 'echo "1..1"' 'echo "ok 1 a # SKIP"' '# SKIP-OK: a: fine'
check "run.sh: a skip without a reason fails" runsh_fails noreason 'this skip is a failure'
stub undeclared 'echo "1..1"' 'echo "ok 1 a # SKIP no tool"'
check "run.sh: a skip without a SKIP-OK line fails" \
	runsh_fails undeclared 'no SKIP-OK line'
stub skipall 'echo "1..0 # SKIP cannot load mpip.ko"' 'exit 4'
check "run.sh: a whole file skipped without SKIP-OK fails" \
	runsh_fails skipall 'no SKIP-OK line for skipall'
stub slow 'echo "1..1"' 'sleep 4' 'echo "ok 1 a"'
runsh_slow_fails() { RUNSH_TIMEOUT=2 runsh_fails slow 'timed out after 2s'; }
check "run.sh: a file over its time limit fails" runsh_slow_fails
# its own limit, declared below a header of 30 lines: 1200 * 2 / 300 s
# (run.sh once read only the first 20 lines, and test_spoof's limit of
# 600 s was 300 s)
hdr=()
for i in {1..30}; do hdr+=("# header line $i"); done
stub slowok "${hdr[@]}" '# TIMEOUT: 1200' 'echo "1..1"' 'sleep 4' 'echo "ok 1 a"'
runsh_slow_passes() {
	RUNSH_TIMEOUT=2 runsh slowok
	((RC == 0)) || { echo "run.sh exited $RC"; return 1; }
	tail -n 1 "$TMP/slowok.out" | grep -qx 'selftests: 2 passed, 0 failed, 0 skipped' ||
		{ echo "wrong summary"; return 1; }
}
check "run.sh: a TIMEOUT line past a long header is honoured" runsh_slow_passes
stub noplan 'echo "1..0"'
check "run.sh: a file that plans nothing fails" runsh_fails noplan 'plans no subtests'
# shellcheck disable=SC2016
stub warn 'echo "1..1"' 'echo "[ 9.9] WARNING: CPU: 0 PID: 1 at x" >>"$KLOG_FILE"' \
	'echo "ok 1 a"'
check "run.sh: a WARNING in the kernel log while a file runs fails it" \
	runsh_fails warn 'kernel log: .*WARNING'
stub fine 'echo "1..1"' 'echo "ok 1 a"'
echo "[ 0.5] unregister_netdevice: waiting for eth1 to become free" >"$TMP/kmsg.fine"
check "run.sh: an old report no file is blamed for fails kernel_log_at_end" \
	runsh_fails fine 'not ok 2 kernel_log_at_end'
with_klog() { # FILE CMD...: CMD with run.sh's kernel log in FILE
	local KLOG=$1
	shift
	"$@"
}
check "run.sh: a mark that cannot be written fails" \
	with_klog "$TMP/no/such/dir/kmsg" runsh_fails fine 'cannot write a mark'


# lib.sh's dmesg_clean subtest, as the test files use it (set -e)
# shellcheck disable=SC2016 # the stubs' lines are code
stub dmesg 'set -euo pipefail' 'source "$LIB"' 'MARK=$(dmesg_mark)' \
	't_dmesg() { check_dmesg_clean "$MARK"; }' 'ktap_header' 'ktap_plan 2' \
	'ktap_run dmesg_clean t_dmesg' \
	'echo "[ 3.0] BUG: scheduling while atomic: x/1/0x2" >>"$KLOG_FILE"' \
	'ktap_run dmesg_after_a_bug t_dmesg' 'ktap_finish'
lib_dmesg_clean() {
	LIB=$REPO/tests/selftests/lib.sh runsh dmesg
	grep -q '^    ok 1 dmesg_clean$' "$TMP/dmesg.out" ||
		{ echo "a clean log fails dmesg_clean"; return 1; }
	grep -q '^    not ok 2 dmesg_after_a_bug$' "$TMP/dmesg.out" ||
		{ echo "dmesg_clean misses a BUG"; return 1; }
}
check "lib.sh: dmesg_clean passes a clean log and fails on a BUG" lib_dmesg_clean

# ------------------------------------------------------- tests/scapy/run.py

scapy_counts() { # DIR WANT_RC "P F S"
	local rc=0 got
	"$PY" "$REPO/tests/scapy/run.py" "$1" >"$TMP/scapy.out" 2>&1 || rc=$?
	cat "$TMP/scapy.out"
	got=$(sed -nE 's/^scapy: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/p' "$TMP/scapy.out")
	[[ $rc == "$2" && $got == "$3" ]] || { echo "exit $rc, counts '$got'"; return 1; }
}
mkdir -p "$TMP/py"
cat >"$TMP/py/test_x.py" <<'EOF'
import unittest
class T(unittest.TestCase):
    def test_ok(self): pass
    def test_fail(self): self.assertEqual(1, 2)
    def test_error(self): raise KeyError("x")
    def test_skip(self): self.skipTest("no tool")
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 1)
    @unittest.expectedFailure
    def test_unexpected(self): pass
class S(unittest.TestCase):
    @classmethod
    def setUpClass(cls): raise RuntimeError("cannot build the C helper")
    def test_a(self): pass
    def test_b(self): pass
EOF
check "scapy runner: failures, errors, subtests, skips, setUpClass counted" \
	scapy_counts "$TMP/py" 1 "1 6 1"
check "scapy runner: its output passes ktap_verify only with the skip allowed" \
	bash -c "'$PY' '$VERIFY' scapy '$TMP/scapy.out' '$TMP/py/test_x.py' | tail -n 1 | grep -qx '1 7 0'"
mkdir -p "$TMP/py0"
check "scapy runner: no tests found fails" scapy_counts "$TMP/py0" 1 "0 1 0"

# ------------------------------------------------- tools/check.sh run_suite

# (sourced in a subshell: it cds to the repository and sets globals)
# shellcheck disable=SC2030 # (each subshell sets its own)
suite_result() { # WANT "P F S" NAME CONSOLE COMMAND...: run_suite's line
	local want=$1 sname=$2 console=$3
	shift 3
	(
		export MPIP_CHECK_LOG=$TMP/check
		mkdir -p "$MPIP_CHECK_LOG"
		# shellcheck source=tools/check.sh
		source "$REPO/tools/check.sh"
		CONSOLE=$console run_suite "$sname" "$TMP/none" "$@"
	) >"$TMP/suite.out" 2>&1
	cat "$TMP/suite.out"
	tail -n 1 "$TMP/suite.out" | grep -qx "=== $sname: $want" ||
		{ echo "want '=== $sname: $want'"; return 1; }
}
fake() { # FILE STATUS: a command that prints FILE and exits STATUS
	printf 'cat %q; exit %d\n' "$1" "$2" >"$TMP/fake.sh"
	echo "$TMP/fake.sh"
}
suite ok1 'KTAP version 1' '1..1' 'ok 1 a' 'z: 1 passed, 0 failed'
check "check.sh: a clean suite passes" suite_result "1 passed, 0 failed, 0 skipped" z "" bash "$(fake "$TMP/ok1" 0)"
check "check.sh: exit status 2 after a clean summary fails" \
	suite_result "1 passed, 1 failed, 0 skipped" z "" bash "$(fake "$TMP/ok1" 2)"
suite leak 'KTAP version 1' '1..1' 'ok 1 a' 'z: 1 passed, 0 failed' '' \
	'==42==ERROR: LeakSanitizer: detected memory leaks'
check "check.sh: an LSan report after the summary fails" \
	suite_result "1 passed, 1 failed, 0 skipped" z "" bash "$(fake "$TMP/leak" 0)"
suite ubsan 'KTAP version 1' '1..1' 'x.c:3:5: runtime error: signed integer overflow' \
	'ok 1 a' 'z: 1 passed, 0 failed'
check "check.sh: a UBSan report fails" \
	suite_result "1 passed, 1 failed, 0 skipped" z "" bash "$(fake "$TMP/ubsan" 0)"
echo "[ 99.0] WARNING: CPU: 1 PID: 1 at kernel/x.c:1" >"$TMP/console"
check "check.sh: a WARNING in the guest's console log fails" \
	suite_result "1 passed, 1 failed, 0 skipped" z "$TMP/console" bash "$(fake "$TMP/ok1" 0)"
printf '#!/usr/bin/env bash\ncat %q; exit 255\n' "$TMP/ok1" >"$TMP/vm255.sh"
check "check.sh: a crashed guest (exit 255) after a clean summary fails" \
	suite_result "1 passed, 1 failed, 0 skipped" z "" bash "$TMP/vm255.sh"
suite fails 'KTAP version 1' '1..2' '    1..2' '    # s1 says' '    ok 1 s1' '    # s2 waited' \
	'    # s2: no path came up' '    not ok 2 s2' 'not ok 1 f1' \
	'ok 2 f2' 'z: 1 passed, 1 failed'
# shellcheck disable=SC2030,SC2031 # (each subshell sets its own)
summary_names() { # the failure summary names the failed test and subtest
	(
		export MPIP_CHECK_LOG=$TMP/check
		# shellcheck source=tools/check.sh
		source "$REPO/tools/check.sh"
		run_suite z "$TMP/none" bash "$(fake "$TMP/fails" 1)" >/dev/null 2>&1
		failure_summary
	) >"$TMP/summary.out" 2>&1
	cat "$TMP/summary.out"
	grep -qx 'z: f1 (s2)' "$TMP/summary.out" && grep -qx 'z: exit status 1' "$TMP/summary.out"
}
check "check.sh: the failure summary names the failed test and subtest" summary_names
# ... and shows what the failed subtest printed, not what the others did
summary_output() {
	grep -qx -- '--- s2:' "$TMP/summary.out" &&
		grep -qx ' |     # s2: no path came up' "$TMP/summary.out" &&
		! grep -q 's1 says' "$TMP/summary.out"
}
check "check.sh: the failure summary shows the failed subtest's output" summary_output

# ------------------------------------------------- tools/debug-kernel.sh merge

# dk_part DIR MODULE FILE...: a made-up part of a debug-kernel run that ran
# these selftest files (a FILE "name:F" has F failed subtests)
dk_part() {
	local d=$1 mod=$2 f
	shift 2
	mkdir -p "$d"
	printf '%s\n' 'mpip debug-kernel run (make check-debug, tools/debug-kernel.sh)' \
		'kernel: 6.1.192-mpip-debug from linux-source-6.1 6.1.192-3' \
		'config: tools/debug.config sha256 0123456789ab (cache id 6.1.192-3-0123456789ab)' \
		"module: mpip $mod" \
		'VM: tools/vm.sh, tcg 4G, 2 vCPUs, 1 boot(s); per-file timeout 3600 s' \
		'build time: 15 min 49 s (once, cached)' \
		'run time: 58 min 32 s (VM exit status 0)' >"$d/summary.txt"
	{
		echo "debugk: modprobe of 35 built-in features: 0 failed"
		for f in "$@"; do
			[[ $f == *:* ]] || f=$f:0
			echo "# ${f%:*}: 10s, pass:3 fail:${f#*:} skip:0"
		done
		echo "debugk: guest done"
	} >"$d/run.log"
	: >"$d/reports.txt"
}

# dk_merge WANT_RC WANT_LINE PART...: merge exits WANT_RC and prints WANT_LINE
# shellcheck disable=SC2031 # (REPO is set once, at the top)
dk_merge() {
	local want=$1 line=$2 rc=0
	shift 2
	rm -rf "$TMP/dk-out"
	"$REPO/tools/debug-kernel.sh" merge "$TMP/dk-out" "$@" >"$TMP/dk.out" 2>&1 || rc=$?
	cat "$TMP/dk.out"
	[[ $rc == "$want" ]] || { echo "exit status $rc, want $want"; return 1; }
	grep -qF -- "$line" "$TMP/dk.out" || { echo "no line '$line'"; return 1; }
}

DK_FILES=()
# ------------------------------------------- tools/check.sh guests' lanes

# plan_ok GUESTS: plan_guests deals every selftest file once to the newest
# kernel and OTHER_KERNEL_TESTS once to the other, over at most GUESTS
# lanes, a guest per lane and kernel
# shellcheck disable=SC2030,SC2031 # (each subshell sets its own)
plan_ok() {
	(
		export MPIP_CHECK_LOG=$TMP/check MPIP_CHECK_GUESTS=$1
		# shellcheck source=tools/check.sh
		source "$REPO/tools/check.sh"
		plan_guests 0 knew kold >"$TMP/plan"
		cat "$TMP/plan"
		want=$(for f in tests/selftests/test_*.sh; do f=${f##*/}; echo "${f%.sh}"; done | sort)
		got=$(awk '$2 == "knew" { for (i = 3; i <= NF; i++) print $i }' "$TMP/plan" | sort)
		[[ $got == "$want" ]] || { echo "knew: not every file once"; exit 1; }
		want=$(tr ' ' '\n' <<<"$OTHER_KERNEL_TESTS" | sort)
		got=$(awk '$2 == "kold" { for (i = 3; i <= NF; i++) print $i }' "$TMP/plan" | sort)
		[[ $got == "$want" ]] || { echo "kold: not OTHER_KERNEL_TESTS once"; exit 1; }
		awk -v g="$1" '$1 < 1 || $1 > g || seen[$1, $2]++ { exit 1 }' "$TMP/plan"
	)
}
check "check.sh: plan_guests deals every file once, one lane" plan_ok 1
check "check.sh: plan_guests deals every file once, two lanes" plan_ok 2
# a stand-in for vm.sh: the files after run.sh pass, test_bad fails, and
# test_crash makes the guest exit 255
cat >"$TMP/fakevm.sh" <<'EOF2'
#!/usr/bin/env bash
while [[ $1 != -- ]]; do
	[[ $1 == --console-log ]] && echo "[ 1.0] booted" >"$2"
	shift
done
shift 4
echo "KTAP version 1"
echo "1..$#"
i=0 p=0 f=0 rc=0
for t in "$@"; do
	i=$((i + 1))
	if [[ $t == test_bad ]]; then echo "not ok $i $t"; f=$((f + 1)); else echo "ok $i $t"; p=$((p + 1)); fi
	[[ $t == test_crash ]] && rc=255
done
echo "selftests: $p passed, $f failed, 0 skipped"
exit $rc
EOF2
chmod +x "$TMP/fakevm.sh"
# lanes_result PLAN WANT...: run_guests on PLAN (with the stand-in); its
# total counts are "P F" and every WANT is a line of what failed
# shellcheck disable=SC2030,SC2031 # (each subshell sets its own)
lanes_result() {
	local plan=$1 want=$2
	shift 2
	(
		export MPIP_CHECK_LOG=$TMP/lanes MPIP_CHECK_VM=$TMP/fakevm.sh MPIP_CHECK_GUESTS=2
		rm -rf "$MPIP_CHECK_LOG"
		mkdir -p "$MPIP_CHECK_LOG"
		# shellcheck source=tools/check.sh
		source "$REPO/tools/check.sh"
		run_guests "$plan"
		failure_summary
		echo "totals: $total_pass $total_fail"
	) >"$TMP/lanes.out" 2>&1
	cat "$TMP/lanes.out"
	grep -qx "totals: $want" "$TMP/lanes.out" || { echo "want totals '$want'"; return 1; }
	for w in "$@"; do
		grep -qxF -- "$w" "$TMP/lanes.out" || { echo "want line '$w'"; return 1; }
	done
}
check "check.sh: side-by-side guests all count; a failure in the second lane fails" \
	lanes_result $'1 k test_a test_b\n2 k test_c test_bad' "3 1" "selftests-k-2: test_bad"
check "check.sh: a crashed guest in one lane fails the run" \
	lanes_result $'1 k test_a\n1 j test_b\n2 k test_crash' "3 1" \
	"selftests-k-2: the guest crashed (exit status 255; see $TMP/lanes/console-selftests-k-2.log)"

# shellcheck disable=SC2031 # (REPO is set once, at the top)
for f in "$REPO"/tests/selftests/test_*.sh; do
	f=${f##*/}
	DK_FILES+=("${f%.sh}")
done
DK_HALF=$((${#DK_FILES[@]} / 2))
dk_part "$TMP/dk1" abc1234 "${DK_FILES[@]:0:DK_HALF}"
dk_part "$TMP/dk2" abc1234 "${DK_FILES[@]:DK_HALF}"
check "debug-kernel merge: two parts that cover the suite pass" \
	dk_merge 0 "tests: ${#DK_FILES[@]} of ${#DK_FILES[@]} files run" "$TMP/dk1" "$TMP/dk2"
dk_part "$TMP/dk3" abc1234 "${DK_FILES[@]:DK_HALF:1}"
check "debug-kernel merge: a file no part ran fails" \
	dk_merge 1 "files not run: ${DK_FILES[*]:DK_HALF+1}" "$TMP/dk1" "$TMP/dk3"
dk_part "$TMP/dk4" abc1235 "${DK_FILES[@]:DK_HALF}"
check "debug-kernel merge: parts of two modules are refused" \
	dk_merge 2 "another part ran" "$TMP/dk1" "$TMP/dk4"
dk_part "$TMP/dk5" abc1234 "${DK_FILES[@]:DK_HALF}" "${DK_FILES[0]}:1"
printf '### kasan | BUG: KASAN: use-after-free in mpip_x | f | mpip_x\n    x\n' >"$TMP/dk2/reports.txt"
dk_twice_and_report() {
	dk_merge 2 "more than one part: ${DK_FILES[0]}" "$TMP/dk1" "$TMP/dk5" &&
		dk_merge 1 "kasan            1" "$TMP/dk1" "$TMP/dk2"
}
check "debug-kernel merge: a file run twice is refused; a report fails" dk_twice_and_report

# dk_plan N: tools/debug-kernel.sh --vms N plan deals out every selftest
# file exactly once, in N lanes; with N > 1 the files marked DEBUG-ALONE
# (and only they) go on the last line, "alone", after the lanes
dk_plan() {
	local out want lanes alone
	out=$("$REPO/tools/debug-kernel.sh" --vms "$1" plan) || return 1
	want=$(grep -l '^# DEBUG-ALONE: ' "$REPO"/tests/selftests/test_*.sh |
		xargs -r -n 1 basename | sed 's/\.sh$//' | paste -sd' ')
	lanes=$(grep -c '^lane ' <<<"$out")
	alone=$(sed -n 's/^alone //p' <<<"$out")
	cmp <(printf '%s\n' "${DK_FILES[@]}" | sort) \
		<(sed 's/^[a-z]* //' <<<"$out" | tr ' ' '\n' | sort) ||
		{ echo "not every file exactly once: $out"; return 1; }
	if (($1 == 1)); then
		[[ $lanes == 1 && -z $alone ]] || { echo "--vms 1: $out"; return 1; }
	else
		[[ $lanes == "$1" && $alone == "$want" && -n $want ]] &&
			[[ $(tail -n 1 <<<"$out") == "alone $want" ]] ||
			{ echo "--vms $1, alone '$want': $out"; return 1; }
	fi
}
check "debug-kernel plan: one VM runs every file" dk_plan 1
check "debug-kernel plan: two lanes, then the DEBUG-ALONE files alone" dk_plan 2

# dk_plan_tests: with --tests, plan deals out those files only, in the
# order given (a part of a merged run is planned as it will run), and
# refuses a name that is no selftest
dk_plan_tests() {
	local out want
	want=$'lane test_spoof test_rules\nlane test_natedge\nalone test_loss'
	out=$("$REPO/tools/debug-kernel.sh" --vms 2 --tests spoof,test_natedge,test_loss,rules.sh plan) ||
		return 1
	[[ $out == "$want" ]] || { echo "planned: $out"; return 1; }
	! "$REPO/tools/debug-kernel.sh" --tests spoof,nosuch plan >/dev/null 2>&1 ||
		{ echo "a name that is no selftest was planned"; return 1; }
}
check "debug-kernel plan --tests: those files, in order; no unknown name" dk_plan_tests

# xtrace_gaps: a test file run with MPIP_TEST_XTRACE traces itself, and
# tools/xtrace-gaps.py finds its slow step inside its subtest, the KTAP
# output unchanged
xtrace_gaps() {
	local f=$TMP/test_xt.sh out
	mkdir -p "$TMP/xt"
	cat >"$f" <<EOF
#!/usr/bin/env bash
set -euo pipefail
source "$REPO/tests/selftests/lib.sh"
t_slow() { true; sleep 1.2; true; }
main() { ktap_header; ktap_plan 1; ktap_run slow t_slow; ktap_finish; }
main "\$@"; exit
EOF
	out=$(MPIP_TEST_XTRACE=$TMP/xt bash "$f") || return 1
	[[ $(grep -c '^ok 1 slow$' <<<"$out") == 1 && $out != *"+"1[0-9]* ]] ||
		{ echo "KTAP output: $out"; return 1; }
	out=$("$REPO/tools/xtrace-gaps.py" "$TMP/xt/test_xt.xtrace") || return 1
	# (at least the sleep's 1.2 s; more on a loaded machine)
	awk '$1 ~ /s$/ && $1 + 0 >= 1.2 && $3 == "t_slow" && $4 == "test_xt.sh:4" &&
		$5 == "sleep" && $6 == "1.2" { found = 1 } END { exit !found }' <<<"$out" ||
		{ echo "gaps: $out"; return 1; }
}
check "xtrace: a traced file's slow step, found in its subtest" xtrace_gaps

# loaded_series: tools/loaded-runs.sh --series numbers a series on over
# invocations, and refuses one whose runs were of another tree, one that
# ended with a failed run, and a tree with changes not committed; a commit
# of documentation or of loaded-runs.sh keeps the tree, one of the netlink
# spec does not
loaded_series() {
	local g=$TMP/series-git f=$TMP/series t t2 line
	(
		set -e
		# shellcheck source=tools/loaded-runs.sh
		source "$REPO/tools/loaded-runs.sh"
		mkdir -p "$g"/{kernel,tests,tools,userspace,Documentation/netlink}
		cd "$g"
		git init -q .
		tgit() { git -c user.name=t -c user.email=t@t "$@"; }
		for d in kernel tests tools userspace Documentation Documentation/netlink; do
			echo 1 >"$d/f"
		done
		echo 1 >tools/loaded-runs.sh
		git add -A
		tgit commit -q -m one
		t=$(series_tree)
		[[ $t =~ ^[0-9a-f]{12}$ ]] || { echo "tree id: $t"; exit 1; }
		[[ $(series_next "$f" "$t") == 1 ]] || { echo "a new series does not start at 1"; exit 1; }
		line="passed, 0 failed, 0 skipped; load 5.0 (4.0-6.0), builds finished 1; tree $t, commit abc"
		printf 'run 1: started 2026-12-01 10:00:00, 45 min 0 s, 317 %s\nrun 2: started x, 317 %s\n' \
			"$line" "$line" >"$f"
		[[ $(series_next "$f" "$t") == 3 ]] || { echo "the series does not go on at 3"; exit 1; }
		echo 2 >Documentation/f
		echo 2 >tools/loaded-runs.sh
		tgit commit -q -am docs
		[[ $(series_tree) == "$t" ]] || { echo "a commit of documentation or loaded-runs.sh changed the tree"; exit 1; }
		echo 2 >Documentation/netlink/f
		tgit commit -q -am spec
		[[ $(series_tree) != "$t" ]] || { echo "a commit of the netlink spec kept the tree"; exit 1; }
		tgit revert --no-edit HEAD >/dev/null
		[[ $(series_tree) == "$t" ]] || { echo "the tree is not the same after a revert"; exit 1; }
		echo 2 >tests/f
		! series_tree >/dev/null || { echo "a change not committed was taken"; exit 1; }
		tgit commit -q -am tests
		t2=$(series_tree)
		[[ $t2 != "$t" ]] || { echo "a commit of tests kept the tree"; exit 1; }
		! series_next "$f" "$t2" 2>/dev/null || { echo "a series of another tree went on"; exit 1; }
		echo "run 3: started y, 310 passed, 1 failed, 0 skipped; load 5.0 (4.0-6.0), builds finished 1; tree $t, commit abc" >>"$f"
		! series_next "$f" "$t" 2>/dev/null || { echo "a series went on after a failed run"; exit 1; }
	)
}
check "loaded-runs --series: numbered on; another tree, a failed run, changes not committed refused" loaded_series

if ((n != PLAN)); then
	echo "# ran $n tests, planned $PLAN"
	failed=$((failed + 1))
fi
echo "harness: $passed passed, $failed failed"
((failed == 0))
