#!/usr/bin/env bash
# tests/selftests/run.sh - run the selftests (inside the VM, as root).
#
#   tests/selftests/run.sh [--timeout SECS] [TEST...]
#
# Runs every tests/selftests/test_*.sh in order, or the TESTs named (a file
# name, a path, or a bare name like "lab" or "test_lab"), each with a time
# limit (default 300 s, or $MPIP_TEST_TIMEOUT).  Output is KTAP: one
# top-level test per file with its subtests indented by 4 spaces.  The last
# line is "selftests: N passed, N failed, N skipped" counting subtests.  Exit
# status is 0 unless something failed.
#
# Besides the test's own verdicts, a file fails if it exits non-zero, times
# out, runs fewer subtests than planned, or if the kernel log gains
# WARNING/BUG/KASAN/... lines while it runs.  Raw logs of each file go to
# /tmp/mpip-selftests/ (nothing else outside /tmp and the repo is written).
#
# Typical use, from the host:  tools/vm.sh -- tests/selftests/run.sh
set -uo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$DIR/../.." && pwd -P)
cd "$REPO" || exit 1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
LOGDIR=/tmp/mpip-selftests
timeout_s=${MPIP_TEST_TIMEOUT:-300}

# same pattern as lib.sh's check_dmesg_clean
DMESG_BAD='WARNING|BUG|KASAN|kmemleak|Oops|general protection|refcount_t|use-after-free'

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

	mkdir -p "$LOGDIR"
	passed=0
	failed=0
	skipped=0

	echo "KTAP version 1"
	echo "1..${#tests[@]}"
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
		mark="mpip-selftest-run-mark-$$-$idx-$RANDOM"
		echo "$mark" >/dev/kmsg 2>/dev/null || true
		start=$(date +%s)

		echo "    # Subtest: $name"
		plan=
		n_ok=0
		n_fail=0
		n_skip=0
		file_skip=0
		# Stream the test's output: indent it, turn stray lines into
		# diagnostics, and count its top-level results.
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
				plan=${line#1..}
				plan=${plan%%[!0-9]*}
				[[ $line == *"# SKIP"* ]] && file_skip=1
				;;
			"not ok "*)
				printf '    %s\n' "$line"
				n_fail=$((n_fail + 1))
				;;
			"ok "*)
				printf '    %s\n' "$line"
				if [[ $line =~ \#[[:space:]]*(SKIP|skip) ]]; then
					n_skip=$((n_skip + 1))
				else
					n_ok=$((n_ok + 1))
				fi
				;;
			*)
				printf '    # %s\n' "$line"
				;;
			esac
		done < <(timeout --kill-after=10 "$timeout_s" bash "$t" 2>&1 </dev/null
			echo "__mpip_run_rc=$?")
		rc=${rc:-1}
		elapsed=$(($(date +%s) - start))

		problems=()
		if ((rc == 124 || rc == 137)); then
			problems+=("timed out after ${timeout_s}s")
		elif ((rc != 0 && rc != 4)); then
			((n_fail > 0)) || problems+=("exited with status $rc")
		fi
		ran=$((n_ok + n_fail + n_skip))
		if [[ -n $plan ]] && ((ran < plan)); then
			problems+=("ran $ran of $plan planned subtests")
			n_fail=$((n_fail + plan - ran))
		fi
		if [[ -z $plan ]] && ((ran == 0 && rc != 4)); then
			problems+=("printed no KTAP plan")
		fi
		bad=$(dmesg 2>/dev/null | awk -v m="$mark" 'found; index($0, m) { found = 1 }' |
			grep -E -- "$DMESG_BAD" | grep -v mpip-selftest || true)
		if [[ -n $bad ]]; then
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
			echo "    # $name: $p"
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
		elif ((ran == 0 && (rc == 4 || file_skip))); then
			skipped=$((skipped + 1))
			echo "ok $idx $name # SKIP"
		else
			echo "ok $idx $name"
		fi
	done

	echo "selftests: $passed passed, $failed failed, $skipped skipped"
	((failed == 0))
}

main "$@"; exit
