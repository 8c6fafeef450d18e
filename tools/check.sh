#!/usr/bin/env bash
# tools/check.sh - what `make check` runs.
#
# Installs what is missing, builds the module and mpipctl with W=1, runs the
# host unit tests (ASan/UBSan), the mpipctl and scapy-layer tests, then the
# kernel selftests inside a QEMU guest, then a short run of every benchmark
# (tests/bench_smoke.sh) in another.  Every suite ends with a line
# "NAME: N passed, N failed"; this script adds them up and ends with one
# line "N passed, N failed".  Exit status is non-zero if anything failed or
# a suite did not report.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO" || exit 1
LOG=${MPIP_CHECK_LOG:-$REPO/build/check}
mkdir -p "$LOG"

total_pass=0
total_fail=0

# run_suite NAME COMMAND...: run, show output, add up its summary line.
run_suite() {
	local name=$1 line pass fail
	shift
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$LOG/$name.log"
	line=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$LOG/$name.log" | tail -n 1)
	if [[ -z $line ]]; then
		echo "=== $name: no summary line; counted as one failure"
		total_fail=$((total_fail + 1))
		return
	fi
	pass=$(sed -E 's/^[a-z]+: ([0-9]+) passed.*/\1/' <<<"$line")
	fail=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
}

# The scapy tests use plain unittest; turn its verdict into a summary line.
scapy_suite() {
	local out rc ran failed
	out=$(/usr/bin/python3 -m unittest discover -s tests/scapy 2>&1)
	rc=$?
	echo "$out"
	ran=$(sed -nE 's/^Ran ([0-9]+) tests?.*/\1/p' <<<"$out")
	failed=$(sed -nE 's/.*FAILED \((.*)\).*/\1/p' <<<"$out" |
		grep -oE '[0-9]+' | paste -sd+ | bc)
	ran=${ran:-0}
	failed=${failed:-0}
	[[ $rc -ne 0 && $failed -eq 0 ]] && failed=1
	echo "scapy: $((ran - failed)) passed, $failed failed"
}

tools/deps.sh || { echo "0 passed, 1 failed"; exit 1; }

echo "=== build"
if ! make -s all W=1 >"$LOG/build.log" 2>&1 ||
   grep -qE 'warning:|error:' "$LOG/build.log"; then
	cat "$LOG/build.log"
	echo "=== build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

run_suite unit make -s --no-print-directory -C tests/unit run
run_suite mpipctl bash tests/unit/test_mpipctl.sh
run_suite scapy scapy_suite
run_suite selftests tools/vm.sh --timeout 2400 --console-log "$LOG/console.log" -- tests/selftests/run.sh
run_suite bench tools/vm.sh --timeout 1200 -- tests/bench_smoke.sh

echo "$total_pass passed, $total_fail failed"
[[ $total_fail -eq 0 ]]
