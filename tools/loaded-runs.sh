#!/usr/bin/env bash
# tools/loaded-runs.sh - the selftests on a busy machine: the whole
# selftest suite several times in a row in the guest, while a kernel build
# keeps the host's CPUs busy all along (issue 19: no test may depend on an
# idle machine).  The suite runs as make check runs it: in two guests side
# by side (tools/check.sh's plan_guests and run_guests; MPIP_CHECK_GUESTS).
#
#   tools/loaded-runs.sh [--runs N] [--jobs J] [--kernel KVER] [--out DIR]
#                        [--series FILE]
#
#   --runs N      runs of the suite, one after another (default 5)
#   --jobs J      the build's make -j (default: the number of CPUs); 0: no
#                 build of its own, the load is another job's (a second
#                 series beside this one, whose VM loads the CPUs as a
#                 build would; the measured load is in the summary)
#   --kernel KVER the guest's kernel (default: the newest of
#                 tools/kernels.sh); every test file runs
#   --out DIR     logs and summary (default build/loaded)
#   --series FILE a series of runs in a row that goes on over several
#                 invocations (sessions): FILE gets every run's line, with
#                 the day it started, and this invocation's runs are
#                 numbered on from FILE's.  Refused (exit 2, nothing run)
#                 if a run in FILE failed (the series ended there), or was
#                 of another tree (series_tree: what the selftests'
#                 outcome depends on; commits of documentation between the
#                 runs are allowed, changes of code or tests are not), or
#                 if that tree has changes not committed
#
# The load is Linux's own build (vmlinux, x86_64 defconfig) from Debian's
# linux-source-6.12, unpacked once into ~/.cache/mpip/hog; when a build
# ends, the next starts from clean.  It runs at the same priority as the
# guest.  Each run is judged as make check judges a suite
# (tools/check.sh's judge_suite: exit status, KTAP plan and counts, skips,
# the guests' kernel logs).  DIR/summary has a line per run: its number,
# start, duration, counts, the host's 1-minute load average over the run
# (sampled every 30 s into DIR/load: median, lowest and highest) and the
# builds finished during it, and the tree and commit it ran (so the tree
# must have no changes not committed, --series or not).  Runs the module
# of `make kmod` for KVER (built here first).  Exit status: non-zero if a
# run failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO" || exit 1
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mpip
HOG_PKGS=(linux-source-6.12 flex bison bc libelf-dev libssl-dev)

die() {
	printf 'loaded-runs: %s\n' "$*" >&2
	exit 2
}

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# shellcheck source=tools/pkgs.sh
source "$REPO/tools/pkgs.sh"

# the source tree the load builds, unpacked and configured once
hog_tree() {
	local dir=$CACHE/hog/linux-source-6.12
	if [[ ! -f $dir/.config ]]; then
		if ! { rm -rf "$CACHE/hog" && mkdir -p "$CACHE/hog" &&
			tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$CACHE/hog" &&
			make -s -C "$dir" defconfig >/dev/null; }; then
			die "cannot unpack and configure linux-source-6.12"
		fi
	fi
	echo "$dir"
}

# hog DIR JOBS COUNTER: build DIR at -jJOBS over and over; each finished
# build appends a line to COUNTER
hog() {
	while :; do
		make -s -C "$1" -j"$2" vmlinux >/dev/null 2>&1 && date +%T >>"$3"
		make -s -C "$1" clean >/dev/null 2>&1
	done
}

# sample_load FILE: the 1-minute load average every 30 s, a line each
sample_load() {
	while :; do
		cut -d' ' -f1 /proc/loadavg >>"$1"
		sleep 30
	done
}

# load_since FILE N: median (lowest-highest) of FILE's samples after line N
load_since() {
	tail -n +"$(($2 + 1))" "$1" | sort -g | awk '
		{ v[NR] = $1 }
		END {
			if (!NR) { print "no samples"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.1f (%.1f-%.1f)\n", m, v[1], v[NR]
		}'
}

# series_tree: an id of what a run's outcome depends on (12 hex digits):
# the files of kernel/, userspace/, tests/, tools/ and Documentation/netlink/
# (test_ynl reads the spec) at HEAD, but for this script and its harness
# test, which run the series and do not change what it runs; fails if
# any of them has changes not committed
SERIES_PATHS=(kernel userspace tests tools Documentation/netlink)
SERIES_NOT=(tools/loaded-runs.sh tests/harness_test.sh)
series_tree() {
	local x=() f
	for f in "${SERIES_NOT[@]}"; do
		x+=(":!$f")
	done
	[[ -z $(git status --porcelain -- "${SERIES_PATHS[@]}" "${x[@]}") ]] || return 1
	git ls-tree -r HEAD -- "${SERIES_PATHS[@]}" |
		awk -F '\t' -v not="${SERIES_NOT[*]}" '
			BEGIN { n = split(not, v, " "); for (i = 1; i <= n; i++) skip[v[i]] = 1 }
			!($2 in skip)' | sha1sum | cut -c1-12
}

# series_next FILE TREE: the number the series in FILE gives its next run
# (1 if FILE does not exist yet); fails, saying why, if a run there
# failed or ran another tree than TREE
series_next() {
	local n=0 line
	if [[ -e $1 ]]; then
		while IFS= read -r line; do
			[[ $line == "run "* ]] || continue
			if [[ $line != *"; tree $2, commit "* ]]; then
				echo "loaded-runs: $1: a run of another tree than $2: $line" >&2
				return 1
			fi
			if [[ $line != *", 0 failed, "* ]]; then
				echo "loaded-runs: $1: the series ended with a failed run: $line" >&2
				return 1
			fi
			n=$((n + 1))
		done <"$1"
	fi
	echo $((n + 1))
}

main() {
	local runs=5 jobs kver dir tree hogpid samplerpid i t0 secs line failed=0
	local series="" stree first=1 n
	jobs=$(nproc)
	dir=$REPO/build/loaded
	while (($#)); do
		case $1 in
		--runs) runs=${2:?}; shift ;;
		--jobs) jobs=${2:?}; shift ;;
		--kernel) kver=${2:?}; shift ;;
		--out) dir=${2:?}; shift ;;
		--series) series=${2:?}; shift ;;
		*) usage ;;
		esac
		shift
	done
	[[ $runs =~ ^[1-9][0-9]*$ && $jobs =~ ^[0-9]+$ ]] || usage
	stree=$(series_tree) || die "${SERIES_PATHS[*]}: changes not committed"
	if [[ -n $series ]]; then
		first=$(series_next "$series" "$stree") || exit 2
	fi
	tools/deps.sh || die "tools/deps.sh failed"
	if ((jobs)); then
		pkgs_ensure loaded-runs "${HOG_PKGS[@]}" || die "cannot install ${HOG_PKGS[*]}"
	fi
	[[ -n ${kver:-} ]] || kver=$(tools/kernels.sh | sort -V | tail -n 1)
	[[ -n $kver ]] || die "no kernel to run"
	if ! make -s all W=1 >/dev/null || ! make -s kmod KVER="$kver" W=1 >/dev/null; then
		die "the build failed"
	fi
	if ((jobs)); then
		tree=$(hog_tree) || exit 2
	fi
	mkdir -p "$dir"
	: >"$dir/builds"
	: >"$dir/load"
	# (run_guests and its counters; each run's logs go to $dir/run-N)
	# shellcheck source=tools/check.sh
	MPIP_CHECK_LOG=$dir MPIP_CHECK_GUEST_TIMEOUT=5400 source "$REPO/tools/check.sh"
	sample_load "$dir/load" &
	samplerpid=$!
	# shellcheck disable=SC2064 # the ID, now
	trap "kill $samplerpid 2>/dev/null" EXIT
	if ((jobs)); then
		# a process group of its own, so that the build's compilers stop too
		set -m
		hog "$tree" "$jobs" "$dir/builds" &
		hogpid=$!
		set +m
		# shellcheck disable=SC2064 # the IDs, now
		trap "kill $samplerpid 2>/dev/null; kill -- -$hogpid 2>/dev/null; sleep 1; make -s -C '$tree' clean >/dev/null 2>&1" EXIT
		line="load: make -j$jobs vmlinux in $tree, over and over (PID $hogpid)"
	else
		line="load: none of its own (--jobs 0): another job's"
	fi
	echo "$line" | tee "$dir/summary"
	for ((i = 1; i <= runs; i++)); do
		n=$((first + i - 1))
		t0=$(date +%s)
		local b0 l0 p0=$total_pass f0=$total_fail s0=$total_skip
		b0=$(wc -l <"$dir/builds")
		l0=$(wc -l <"$dir/load")
		LOG=$dir/run-$i
		mkdir -p "$LOG"
		run_guests "$(plan_guests 1 "$kver")"
		secs=$(($(date +%s) - t0))
		((total_fail == f0)) || failed=$((failed + 1))
		line="run $n: started $(date -d "@$t0" '+%F %T'), $((secs / 60)) min $((secs % 60)) s,"
		line+=" $((total_pass - p0)) passed, $((total_fail - f0)) failed, $((total_skip - s0)) skipped;"
		line+=" load $(load_since "$dir/load" "$l0"), builds finished $(($(wc -l <"$dir/builds") - b0))"
		line+="; tree $stree, commit $(git rev-parse --short HEAD)"
		echo "$line" | tee -a "$dir/summary"
		[[ -z $series ]] || echo "$line" >>"$series"
	done
	echo "$runs runs on $kver, $failed failed; commit $(git rev-parse --short HEAD)" |
		tee -a "$dir/summary"
	((failed == 0))
}

# (tests/harness_test.sh sources this file for series_tree and series_next)
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
	exit
fi
