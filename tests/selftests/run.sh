#!/usr/bin/env bash
# tests/selftests/run.sh - run the selftests (inside the VM, as root).
#
#   tests/selftests/run.sh [--timeout SECS] [TEST...]
#
# Runs every tests/selftests/test_*.sh in order, or the TESTs named (a file
# name, a path, or a bare name like "lab" or "test_lab"), each with a time
# limit (default 300 s, or $MPIP_TEST_TIMEOUT).  A file that needs longer
# says so in a line "# TIMEOUT: SECS" (its header); that limit is scaled
# as the default is (SECS * the limit in force / 300).  Output is KTAP: one
# top-level test per file with its subtests indented by 4 spaces, and a
# last top-level test, kernel_log_at_end.  The last line is "selftests: N
# passed, N failed, N skipped" counting subtests (a skipped file and
# kernel_log_at_end count as one each).  Exit status is 0 unless something
# failed.
#
# Besides the test's own verdicts, a file fails if it exits non-zero, times
# out, plans no subtests, runs another number of subtests than planned, or
# if the kernel log gains a line that tests/klog.sh calls a kernel bug
# (WARNING, BUG, oops, lockdep, RCU stall, hung task, ...) while it runs
# (after a mark written to /dev/kmsg; all of the log if the mark cannot be
# written or found).
#
# A skip counts as a failure unless the file allows it: a skipped subtest
# must give a reason ("ok N NAME # SKIP REASON"), and the file must have a
# line "# SKIP-OK: GLOB: WHY" whose shell pattern GLOB matches NAME (for a
# whole file skipped with "1..0 # SKIP REASON", NAME is the file's name,
# e.g. test_paths).  An allowed skip is counted as skipped; any other as a
# failed subtest ("not ok").
#
# kernel_log_at_end: after the last file, waits until its namespaces are
# gone (their cleanup in the kernel is asynchronous), unloads mpip (which
# waits for a namespace cleanup in progress), and checks the whole kernel
# log since boot for bug reports that no file was blamed for.  With no
# test file at all, run.sh fails.
#
# In a TCG guest, tools/vm.sh sets the kernel's static branches that the
# tests would flip (netfilter hooks, tc, timestamps...) before the run
# (tools/tcg-keys.sh): a flip under the emulation can crash the guest
# ("Oops: int3", no mpip code involved).
#
# Raw logs of each file go to /tmp/mpip-selftests/ (or
# $MPIP_SELFTEST_LOGDIR; nothing else outside /tmp and the repo is
# written).  KLOG_FILE (see tests/klog.sh) replaces the kernel log with a
# file, for tests/harness_test.sh; kernel_log_at_end waits for namespaces
# and unloads mpip only inside the VM ($MPIP_IN_VM).
#
# Typical use, from the host:  tools/vm.sh -- tests/selftests/run.sh
set -uo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$DIR/../.." && pwd -P)
cd "$REPO" || exit 1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
LOGDIR=${MPIP_SELFTEST_LOGDIR:-/tmp/mpip-selftests}
timeout_s=${MPIP_TEST_TIMEOUT:-300}

# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"

# file_time_limit FILE: the time limit for FILE, in seconds: its own
# "# TIMEOUT: SECS" line (the first, wherever it is: a long header once
# pushed it past the lines looked at, and the file ran under the default)
# scaled by timeout_s / 300, else timeout_s
file_time_limit() {
	local own
	own=$(sed -nE 's/^#[[:space:]]*TIMEOUT:[[:space:]]*([0-9]+)[[:space:]]*$/\1/p' "$1" | head -n 1)
	if [[ -n $own ]]; then
		echo $((own * timeout_s / 300))
	else
		echo "$timeout_s"
	fi
}

# skip_allowed FILE NAME REASON: FILE has a "# SKIP-OK: GLOB: WHY" line
# whose GLOB matches NAME, and REASON is not empty
skip_allowed() {
	local file=$1 name=$2 reason=$3 glob
	[[ -n $reason ]] || return 1
	while IFS= read -r glob; do
		# shellcheck disable=SC2053 # GLOB is a pattern
		[[ $name == $glob ]] && return 0
	done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*SKIP-OK:[[:space:]]*(([^:]|:[^[:space:]])+):[[:space:]]+[^[:space:]].*$/\1/p' "$file")
	return 1
}

# (everything in a function: bash reads scripts lazily and the repository
# is shared live with the host, so an edit during a run must not break it)
main() {
	tests=()
	while (($#)); do
		case $1 in
		--timeout) timeout_s=${2:?}; shift 2 ;;
		--timeout=*) timeout_s=${1#*=}; shift ;;
		-h | --help) sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
		*)
			t=$1
			if [[ ! -f $t ]]; then
				for c in "$DIR/$t" "$DIR/$t.sh" "$DIR/test_$t.sh"; do
					[[ -f $c ]] && { t=$c; break; }
				done
			fi
			[[ -f $t ]] || { echo "run.sh: no such test '$1'" >&2; exit 2; }
			tests+=("$t")
			shift
			;;
		esac
	done
	if ((${#tests[@]} == 0)); then
		for t in "$DIR"/test_*.sh; do
			[[ -f $t ]] && tests+=("$t")
		done
	fi
	if ((${#tests[@]} == 0)); then
		printf '%s\n' "KTAP version 1" "1..1" "# no test files in $DIR" \
			"not ok 1 test_files" "selftests: 0 passed, 1 failed, 0 skipped"
		exit 1
	fi

	mkdir -p "$LOGDIR"
	reported=$LOGDIR/kernel-log-reported
	: >"$reported"
	passed=0
	failed=0
	skipped=0

	echo "KTAP version 1"
	echo "1..$((${#tests[@]} + 1))"
	[[ $EUID == 0 ]] || echo "# warning: not running as root"
	[[ -n ${MPIP_IN_VM:-} ]] || echo "# warning: not inside tools/vm.sh"
	echo "# kernel $(uname -r), timeout ${timeout_s}s per file"

	netns_list() { ip netns list 2>/dev/null | awk '{print $1}' | sort; }

	idx=0
	for t in "${tests[@]}"; do
		idx=$((idx + 1))
		name=$(basename "$t" .sh)
		log=$LOGDIR/$name.log
		: >"$log"
		ns_before=$(netns_list)
		problems=()
		mark=$(klog_mark "run-$idx" 2>&1) ||
			{ problems+=("cannot write a mark to /dev/kmsg ($mark): checked all of the kernel log"); mark=; }
		start=$(date +%s)
		file_timeout=$(file_time_limit "$t")

		echo "    # Subtest: $name"
		plan=
		n_ok=0
		n_fail=0
		n_skip=0
		file_skip=
		# Stream the test's output: indent it, turn stray lines into
		# diagnostics, count its top-level results and apply the skip
		# policy.
		rc=
		while IFS= read -r line; do
			if [[ $line == *__mpip_run_rc=* ]]; then
				rc=${line##*__mpip_run_rc=}
				line=${line%__mpip_run_rc=*}
				[[ -n $line ]] || continue
			fi
			printf '%s\n' "$line" >>"$log"
			case $line in
			"KTAP version"* | "TAP version"* | "#"* | "    "* | "")
				printf '    %s\n' "$line"
				;;
			1..*)
				printf '    %s\n' "$line"
				if [[ -z $plan ]]; then
					plan=${line#1..}
					plan=${plan%%[!0-9]*}
					if [[ $line =~ \#[[:space:]]*(SKIP|skip)[[:space:]]*(.*)$ ]]; then
						file_skip=${BASH_REMATCH[2]:- }
					fi
				fi
				;;
			"not ok "*)
				printf '    %s\n' "$line"
				n_fail=$((n_fail + 1))
				;;
			"ok "*)
				if [[ $line =~ ^(ok [0-9]+[[:space:]]+(- )?(.*[^[:space:]]))[[:space:]]+\#[[:space:]]*(SKIP|skip)([[:space:]]+(.*))?$ ]]; then
					sname=${BASH_REMATCH[3]}
					reason=${BASH_REMATCH[6]}
					if skip_allowed "$t" "$sname" "$reason"; then
						printf '    %s\n' "$line"
						n_skip=$((n_skip + 1))
					else
						printf '    # %s\n' "$line" \
							"$sname: this skip is a failure (${reason:+reason \"$reason\", }no SKIP-OK line for it in $name.sh)"
						printf '    not %s\n' "${BASH_REMATCH[1]}"
						n_fail=$((n_fail + 1))
					fi
				else
					printf '    %s\n' "$line"
					n_ok=$((n_ok + 1))
				fi
				;;
			*)
				printf '    # %s\n' "$line"
				;;
			esac
		done < <(timeout --kill-after=10 "$file_timeout" bash "$t" 2>&1 </dev/null
			echo "__mpip_run_rc=$?")
		rc=${rc:-1}
		elapsed=$(($(date +%s) - start))

		if ((rc == 124 || rc == 137)); then
			problems+=("timed out after ${file_timeout}s")
		elif ((rc != 0 && rc != 4)); then
			((n_fail > 0)) || problems+=("exited with status $rc")
		fi
		ran=$((n_ok + n_fail + n_skip))
		if [[ -z $plan ]]; then
			problems+=("printed no KTAP plan")
		elif ((ran < plan)); then
			problems+=("ran $ran of $plan planned subtests")
			n_fail=$((n_fail + plan - ran))
		elif ((ran > plan)); then
			problems+=("ran $ran subtests, $plan planned")
		elif ((plan == 0)) && [[ -z $file_skip ]]; then
			problems+=("plans no subtests")
		fi
		file_skip_ok=0
		if [[ -n $file_skip && $plan == 0 && $ran == 0 ]]; then
			if skip_allowed "$t" "$name" "${file_skip# }"; then
				file_skip_ok=1
			else
				problems+=("skipped (reason: \"${file_skip# }\"); a failure: no SKIP-OK line for $name in it")
			fi
		fi
		if klog_since "$mark" >"$LOGDIR/klog" 2>"$LOGDIR/klog.err"; then
			sed 's/^/    # /' "$LOGDIR/klog.err"
		else
			problems+=("$(cat "$LOGDIR/klog.err")")
		fi
		bad=$(klog_bad <"$LOGDIR/klog")
		if [[ -n $bad ]]; then
			printf '%s\n' "$bad" >>"$reported"
			problems+=("kernel log: $(head -n 3 <<<"$bad" | tr '\n' ' ')")
		fi
		leftover=$(comm -13 <(printf '%s\n' "$ns_before") <(netns_list))
		if [[ -n $leftover ]]; then
			echo "    # leftover namespaces removed: $(echo "$leftover" | tr '\n' ' ')"
			for ns in $leftover; do
				# shellcheck disable=SC2046
				kill -9 $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null
				ip netns del "$ns" 2>/dev/null
			done
		fi

		for p in "${problems[@]}"; do
			echo "    # $name: ${p//$'\n'/ | }"
		done
		# Problems found outside the subtests count as one failed subtest.
		if ((${#problems[@]} > 0)) && ((n_fail == 0)); then
			n_fail=1
		fi
		passed=$((passed + n_ok))
		failed=$((failed + n_fail))
		skipped=$((skipped + n_skip))
		echo "# $name: ${elapsed}s, pass:$n_ok fail:$n_fail skip:$n_skip"
		if ((n_fail > 0)); then
			echo "not ok $idx $name"
		elif ((file_skip_ok)); then
			skipped=$((skipped + 1))
			echo "ok $idx $name # SKIP ${file_skip# }"
		else
			echo "ok $idx $name"
		fi
	done

	# Namespace teardown goes on after `ip netns del` returns; wait for it,
	# then look at all of the log, boot included, for anything not yet
	# blamed on a file.
	idx=$((idx + 1))
	problems=()
	# (only in the throw-away guest: a host may have namespaces and a
	# module of its own)
	if [[ -n ${MPIP_IN_VM:-} ]]; then
		klog_netns_settle 60 2 ||
			problems+=("namespaces left: $(netns_list | tr '\n' ' ')")
	fi
	if [[ -n ${MPIP_IN_VM:-} && -d /sys/module/mpip ]]; then
		if out=$(timeout 120 rmmod mpip 2>&1); then
			sleep 1
		else
			problems+=("rmmod mpip failed: $out")
		fi
	fi
	if klog_read >"$LOGDIR/klog" 2>"$LOGDIR/klog.err"; then
		# (no empty pattern: it would match every line)
		bad=$(klog_bad <"$LOGDIR/klog" | grep -vxF -f <(grep . "$reported"))
	else
		problems+=("cannot read the kernel log: $(cat "$LOGDIR/klog.err")")
		bad=
	fi
	if [[ -n $bad ]]; then
		problems+=("kernel log: $(head -n 3 <<<"$bad" | tr '\n' ' ')")
		printf '%s\n' "$bad" | sed 's/^/# /'
	fi
	for p in "${problems[@]}"; do
		echo "# kernel_log_at_end: ${p//$'\n'/ | }"
	done
	if ((${#problems[@]} > 0)); then
		failed=$((failed + 1))
		echo "not ok $idx kernel_log_at_end"
	else
		passed=$((passed + 1))
		echo "ok $idx kernel_log_at_end"
	fi

	echo "selftests: $passed passed, $failed failed, $skipped skipped"
	((failed == 0))
}

main "$@"; exit
