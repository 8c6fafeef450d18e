#!/usr/bin/env bash
# tools/check.sh - what `make check` runs.
#
# Installs what is missing, builds mpipctl, and the module for each kernel
# of tools/kernels.sh, with W=1, runs a self-test of this harness
# (tests/harness_test.sh), the host unit tests
# (ASan/UBSan/LSan), the mpipctl tests (commands, batch mode, the example
# /etc/mpip/mpip.conf run in batch mode (conf), bash completion), the
# weight model tools/wsim (tests/unit/test_wsim.sh), the Debian
# packages (tests/packaging_test.sh: built, lintian, contents, mpip.service,
# a DKMS build), the YAML netlink spec against the kernel's schema and
# kernel/uapi/mpip.h (nlspec), the scapy-layer tests, the bench tools'
# own tests (tools/bench/test_*.py: benchtools), the check that the
# benchmark figures in README.md and Documentation/performance.rst are what
# tools/bench/report.py generates from Documentation/perf/*.jsonl (perfdocs),
# then the kernel selftests inside QEMU guests, for each kernel of
# tools/kernels.sh (Debian's 6.1 and 6.12: the module built for each by
# `make kmod`): every test file on the newest kernel, the files of
# OTHER_KERNEL_TESTS on the others, two guests side by side (GUESTS,
# below).  With --full (make check-full) every file on every kernel, then
# a short run of every benchmark (tests/bench_smoke.sh) in another guest,
# with the default kernel (the top Makefile's KDIR).  The host's suites
# run while the guests do.  make check took 28 minutes on a 2-core
# machine under emulation (2026-12-04; README.md); check-full takes over
# an hour, and is run before a change to kernel/ is submitted.
#
# Every suite prints KTAP and one summary line "NAME: N passed, N failed"
# (", N skipped" may follow).  A suite passes only if
#  - it exits with status 0 (a guest that crashed, exit status 255 from
#    tools/vm.sh, or was killed at its timeout, 124, fails);
#  - it printed exactly one summary line, and its KTAP output agrees with
#    it (tests/ktap_verify.py): a top-level plan 1..N with N > 0 and N
#    results, every indented block of subtests (one per selftest file) as
#    many results as it planned, and the counts add up;
#  - every skip gives a reason and is allowed by a "# SKIP-OK: GLOB: WHY"
#    line in the test's source (see tests/ktap_verify.py); any other skip
#    counts as a failure;
#  - no sanitizer report appears anywhere in its output, also after the
#    summary (LeakSanitizer runs at exit);
#  - for the guests: their whole kernel console log (--console-log) has no
#    line that tests/klog.sh calls a kernel bug.
# For each suite this script prints "=== NAME: N passed, N failed, N
# skipped": the suite's own counts, with each disallowed skip moved to the
# failures, and at least one failure if any other check failed.  The last
# line is "N passed, N failed, N skipped", the sums; before it, if anything
# failed, "=== what failed:" and a line for each failed test (with its
# failed subtests) or other problem, so that the end of the log says it.  Exit status is non-zero
# if anything failed.  Logs go to build/check/ (or $MPIP_CHECK_LOG).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO" || exit 1
LOG=${MPIP_CHECK_LOG:-$REPO/build/check}
# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"

# reports of ASan, LSan, UBSan (and the others, should they be used)
SANITIZER_RE='ERROR: (Address|Leak|Memory|Thread)Sanitizer|detected memory leaks'
SANITIZER_RE+='|runtime error:|SUMMARY: [A-Za-z]*Sanitizer'

total_pass=0
total_fail=0
total_skip=0
what_failed=()
kernel_reports=()
fail_output=()

# ktap_failures LOG: one awk pass over the KTAP in LOG, for the summary
# of a log that shows only its tail.  Lines "T NAME (SUB, SUB...)": each
# top-level "not ok" with its failed subtests.  Lines "O TEXT": for each
# failed subtest, "--- NAME:" and the last 12 diagnostic ("# ") lines it
# printed since the result before it: why it failed.
ktap_failures() {
	awk '
	/^ +(not )?ok [0-9]+/ {
		if ($1 == "not") {
			name = $0
			sub(/^ +not ok [0-9]+ +(- )?/, "", name)
			subs = subs (subs == "" ? "" : ", ") name
			print "O --- " name ":"
			for (i = (n > 12 ? n - 12 : 0); i < n; i++)
				print "O  | " buf[i % 12]
		}
		n = 0
		next
	}
	/^ +# / { buf[n % 12] = $0; n++; next }
	/^ok [0-9]+/ { subs = ""; next }
	/^not ok [0-9]+/ {
		sub(/^not ok [0-9]+ +(- )?/, "")
		print "T " $0 (subs == "" ? "" : " (" subs ")")
		subs = ""
	}' "$1"
}

# failure_summary: what run_suite found failed, at most 30 lines
failure_summary() {
	((${#what_failed[@]})) || return 0
	echo "=== what failed:"
	printf '%s\n' "${what_failed[@]}" | head -n 30
	((${#fail_output[@]} == 0)) ||
		printf '%s\n' "=== the output of the failed subtests:" "${fail_output[@]}" | head -n 80
	((${#kernel_reports[@]} == 0)) || printf '%s\n' "${kernel_reports[@]}"
}

# What the kernels other than the newest run in make check: the files that
# cover most of the module's code in the least time (netlink, multipath
# with GSO packets kept and split, hosts without mpip, a bridge with
# br_netfilter, the bare fast path).  The version-dependent code of the
# module is only in kernel/kcompat.h.  test_reorder and test_nat (2 and 4
# min) ran here too until make check outgrew its 40 minutes: on 6.1 they
# run, with every other file, in make check-full and in make check-debug,
# whose kernel is a 6.1.
OTHER_KERNEL_TESTS="test_netlink test_multipath test_legacy test_bridge test_fastpath"

# run_suite NAME SOURCES COMMAND...: run COMMAND, show and keep its output,
# judge it as the header says and add up its counts.  SOURCES: the test
# sources (shell globs, one word) whose "# SKIP-OK:" lines allow skips.
# With CONSOLE=FILE set, FILE is the guest's console log to check; with
# SUMMARY=NAME, the summary line COMMAND prints is "NAME: ..." (a suite
# run more than once, under names of its own).
run_suite() {
	local name=$1 srcs=$2 rc
	shift 2
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$LOG/$name.log"
	rc=${PIPESTATUS[0]}
	judge_suite "$name" "$srcs" "$1" "$rc"
}

# judge_suite NAME SOURCES CMD RC: judge the output of suite NAME, in
# $LOG/NAME.log, whose command CMD (its first word) exited with status RC,
# as run_suite does
judge_suite() {
	local name=$1 srcs=$2 cmd=$3 rc=$4 log problems=() out p f s l
	log=$LOG/$name.log
	if ((rc != 0)); then
		case $cmd:$rc in
		tools/vm.sh:124) problems+=("the guest was killed at its time limit (exit status 124)") ;;
		tools/vm.sh:255) problems+=("the guest crashed (exit status 255; see ${CONSOLE:-its console})") ;;
		tools/vm.sh:125) problems+=("tools/vm.sh could not run the guest (exit status 125)") ;;
		*) problems+=("exit status $rc") ;;
		esac
	fi
	out=$(grep -nE -- "$SANITIZER_RE" "$log" | head -n 5)
	[[ -z $out ]] || problems+=("sanitizer report in the output: ${out//$'\n'/ | }")
	if [[ -n ${CONSOLE:-} ]]; then
		if [[ ! -s $CONSOLE ]]; then
			problems+=("no guest console log in $CONSOLE")
		else
			out=$(klog_bad <"$CONSOLE" | head -n 5)
			if [[ -n $out ]]; then
				problems+=("guest console log $CONSOLE: ${out//$'\n'/ | }")
				kernel_reports+=("=== $name: the first kernel report in its console log:"
					"$(klog_report 60 <"$CONSOLE" | sed 's/^/ | /')")
			fi
		fi
	fi
	# shellcheck disable=SC2086 # SOURCES are globs
	out=$(/usr/bin/python3 "$REPO/tests/ktap_verify.py" "${SUMMARY:-$name}" "$log" $srcs)
	while IFS= read -r l; do
		[[ $l == "# "* ]] && problems+=("${l#\# }")
	done <<<"$out"
	read -r p f s <<<"$(tail -n 1 <<<"$out")"
	if ! [[ $p =~ ^[0-9]+$ && $f =~ ^[0-9]+$ && $s =~ ^[0-9]+$ ]]; then
		problems+=("tests/ktap_verify.py gave no counts")
		p=0 f=0 s=0
	fi
	for l in "${problems[@]}"; do
		echo "=== $name: $l"
		what_failed+=("$name: $l")
	done
	out=()
	while IFS= read -r l; do
		case $l in
		"T "?*) what_failed+=("$name: ${l#T }") ;;
		"O "*) out+=("${l#O }") ;;
		esac
	done < <(ktap_failures "$log")
	((${#out[@]} == 0)) || fail_output+=("$(printf '%s\n' "${out[@]}")")
	((${#problems[@]} == 0 || f > 0)) || f=1
	echo "=== $name: $p passed, $f failed, $s skipped"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
}

# The selftest guests run side by side, GUESTS at a time
# (MPIP_CHECK_GUESTS, default 2): under TCG a guest keeps about 1.2 of
# the host's 2 CPUs busy, waiting much of the time (link delays, timers,
# hold and probe times), so two of them finish the files sooner than one
# (the 6.12 and 6.1 files in 36 min rather than 48, 2026-11-29).
# The files are dealt to the lanes longest first (by FILE_SECONDS: their
# durations in a run of make check on 6.12; a file not listed counts 60 s, and
# each guest's boot BOOT_SECONDS), each lane's files of one kernel in one
# guest, the lane's guests one after another.
GUESTS=${MPIP_CHECK_GUESTS:-2}
# a guest's time limit (vm.sh --timeout), MPIP_CHECK_GUEST_TIMEOUT
GUEST_TIMEOUT=${MPIP_CHECK_GUEST_TIMEOUT:-3600}
BOOT_SECONDS=40
# (test_NAME:SECONDS; 6.12, the mean of two runs of make check's two
# guests on clean clones, of 6eedadc and of this file's commit's parent,
# 2026-12-01 and 02, nothing else in VMs; test_teardown less the round of
# its flush of thousands that this commit took out; test_natedge and
# test_spoof from one run each, side by side, of 2026-12-02 with their
# new attack subtests; test_restart with its two resync subtests, 60 s)
FILE_SECONDS="
	backup:179 blackout:176 bridge:56 encap:110 failover:100
	fastpath:88 firewall:75 handshake:124 helper:34 idle:94 lab:66
	legacy:54 links:28 longrtt:96 loss:198 monitor:76 multipath:72
	nat:261 natedge:513 natidle:118 netlink:42 paths:63 pmtu:42
	policy:116 probe:11 reload:106 reorder:121 router:50 rr:92
	restart:120 rules:204 scapy:38 spoof:517 steer:32 table7:64
	teardown:180
	unload:134 ynl:54
"

# plan_guests FULL KERNELS...: the guests, a line "LANE KVER FILE..." each,
# the kernels in the order given (the first is the newest: every file)
plan_guests() {
	local full=$1 k f files first=1
	shift
	for k in "$@"; do
		files=$OTHER_KERNEL_TESTS
		if ((full || first)); then
			files=
			for f in tests/selftests/test_*.sh; do
				f=${f##*/}
				files+=" ${f%.sh}"
			done
		fi
		first=0
		for f in $files; do
			echo "$k $f"
		done
	done | awk -v lanes="$GUESTS" -v est="$FILE_SECONDS" -v boot="$BOOT_SECONDS" '
	BEGIN {
		n = split(est, e, " ")
		for (i = 1; i <= n; i++) {
			split(e[i], pair, ":")
			secs["test_" pair[1]] = pair[2]
		}
	}
	{
		kv[NR] = $1; file[NR] = $2; ord[NR] = NR
		d[NR] = ($2 in secs) ? secs[$2] : 60
		if (!($1 in kseen)) { kseen[$1] = 1; korder[++nk] = $1 }
	}
	END {
		for (i = 2; i <= NR; i++)
			for (j = i; j > 1 && d[ord[j - 1]] < d[ord[j]]; j--) {
				x = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = x
			}
		for (i = 1; i <= NR; i++) {
			u = ord[i]; best = 0
			for (l = 1; l <= lanes; l++) {
				c = load[l] + d[u] + (((l, kv[u]) in booted) ? 0 : boot)
				if (!best || c < bestc) { best = l; bestc = c }
			}
			load[best] = bestc; booted[best, kv[u]] = 1; lane[u] = best
		}
		for (l = 1; l <= lanes; l++)
			for (m = 1; m <= nk; m++) {
				line = ""
				for (u = 1; u <= NR; u++)
					if (lane[u] == l && kv[u] == korder[m])
						line = line " " file[u]
				if (line != "")
					print l, korder[m] line
			}
	}'
}

# guest_name LANE KVER: the suite name of a lane's guest for KVER
guest_name() {
	if ((GUESTS > 1)); then echo "selftests-$2-$1"; else echo "selftests-$2"; fi
}

# run_guest NAME KVER FILE...: a guest runs FILEs on KVER (the module of
# `make kmod` for it); its output goes to $LOG/NAME.log, vm.sh's exit
# status to $LOG/NAME.rc, its console to $LOG/console-NAME.log.
# (MPIP_CHECK_VM: another command in vm.sh's place, for
# tests/harness_test.sh)
run_guest() {
	local name=$1 k=$2 t0 rc=0
	shift 2
	t0=$SECONDS
	echo "=== $name: started, $# files"
	${MPIP_CHECK_VM:-tools/vm.sh} --kernel "$k" --timeout "$GUEST_TIMEOUT" --console-log "$LOG/console-$name.log" -- \
		env MPIP_KO="$REPO/build/kmod/$k/kernel/mpip.ko" tests/selftests/run.sh "$@" \
		>"$LOG/$name.log" 2>&1 || rc=$?
	echo "$rc" >"$LOG/$name.rc"
	echo "=== $name: finished after $((SECONDS - t0)) s"
}

# start_guests PLAN: the lanes of PLAN (plan_guests) side by side in the
# background, each lane's guests in turn; their PIDs in lane_pids
lane_pids=()
start_guests() {
	local plan=$1 l k files
	for ((l = 1; l <= GUESTS; l++)); do
		grep -q "^$l " <<<"$plan" || continue
		while read -r _ k files; do
			# shellcheck disable=SC2086 # a list of file names
			run_guest "$(guest_name "$l" "$k")" "$k" $files
		done < <(grep "^$l " <<<"$plan") &
		lane_pids+=($!)
	done
}

# finish_guests PLAN: wait for the lanes start_guests started; then each
# guest's output is shown and judged as run_suite does, in the order of
# PLAN
finish_guests() {
	local plan=$1 l k files name
	((${#lane_pids[@]} == 0)) || wait "${lane_pids[@]}"
	lane_pids=()
	while read -r l k files; do
		name=$(guest_name "$l" "$k")
		echo "=== $name: tools/vm.sh --kernel $k ... tests/selftests/run.sh $files"
		cat "$LOG/$name.log"
		CONSOLE=$LOG/console-$name.log SUMMARY=selftests judge_suite "$name" \
			'tests/selftests/test_*.sh' tools/vm.sh "$(cat "$LOG/$name.rc" 2>/dev/null || echo 125)"
	done <<<"$plan"
}

# run_guests PLAN: start_guests, then finish_guests
run_guests() {
	start_guests "$1"
	finish_guests "$1"
}

main() {
	local kernels k full=0 target plan
	case ${1:-} in
	--full) full=1 ;;
	"") ;;
	*) echo "usage: tools/check.sh [--full]" >&2; exit 2 ;;
	esac
	mkdir -p "$LOG"
	tools/deps.sh || { echo "0 passed, 1 failed"; exit 1; }

	echo "=== build"
	# (the module is built with W=1 for each kernel of tools/kernels.sh
	# below; `make all` builds it once more, for the top Makefile's KDIR,
	# one of those here: only --full needs that one, for the benchmarks)
	target=mpipctl
	((full)) && target=all
	if ! make -s "$target" W=1 >"$LOG/build.log" 2>&1 ||
		grep -qE 'warning:|error:' "$LOG/build.log"; then
		cat "$LOG/build.log"
		echo "=== build failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	if ! kernels=$(tools/kernels.sh); then
		echo "=== build failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	for k in $kernels; do
		if ! make -s kmod KVER="$k" W=1 >"$LOG/build-$k.log" 2>&1 ||
			grep -qE 'warning:|error:' "$LOG/build-$k.log"; then
			cat "$LOG/build-$k.log"
			echo "=== build for $k failed"
			echo "0 passed, 1 failed"
			exit 1
		fi
	done

	# The guests start now and the host's suites run while they boot and
	# run their first files (a host suite uses one CPU at most, for a few
	# minutes); their output is shown and judged once they are done.
	# (the newest kernel, the one run in full, first)
	# shellcheck disable=SC2046 # one word per kernel
	plan=$(plan_guests "$full" $(sort -rV <<<"$kernels"))
	start_guests "$plan"
	run_suite harness 'tests/harness_test.sh' bash tests/harness_test.sh
	run_suite unit 'tests/unit/*.c' make -s --no-print-directory -C tests/unit run
	run_suite mpipctl 'tests/unit/test_mpipctl.sh' bash tests/unit/test_mpipctl.sh
	run_suite batch 'tests/unit/test_batch.sh' bash tests/unit/test_batch.sh
	run_suite conf 'tests/unit/test_conf.sh' bash tests/unit/test_conf.sh
	run_suite nlspec 'tests/unit/test_nlspec.py' /usr/bin/python3 tests/unit/test_nlspec.py
	run_suite completion 'tests/unit/test_completion.sh' bash tests/unit/test_completion.sh
	run_suite wsim 'tests/unit/test_wsim.sh' bash tests/unit/test_wsim.sh
	run_suite packaging 'tests/packaging_test.sh' bash tests/packaging_test.sh
	run_suite scapy 'tests/scapy/test*.py' /usr/bin/python3 tests/scapy/run.py
	run_suite benchtools 'tools/bench/test_*.py' \
		/usr/bin/python3 tests/scapy/run.py tools/bench benchtools
	run_suite perfdocs 'tools/bench/report.py' \
		/usr/bin/python3 tools/bench/report.py --check --ktap
	finish_guests "$plan"
	if ((full)); then
		CONSOLE=$LOG/bench-console.log run_suite bench 'tests/bench_smoke.sh' \
			tools/vm.sh --timeout 1200 --console-log "$LOG/bench-console.log" -- tests/bench_smoke.sh
	fi

	failure_summary
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
	[[ $total_fail -eq 0 ]]
}

# (tests/harness_test.sh sources this file for run_suite)
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
	exit
fi
