#!/usr/bin/env bash
# tools/loaded-runs.sh - the selftests on a busy machine: the whole
# selftest suite several times in a row in the guest, while a kernel build
# keeps the host's CPUs busy all along (issue 19: no test may depend on an
# idle machine).  The suite runs as make check runs it: in two guests side
# by side (tools/check.sh's plan_guests and run_guests; MPIP_CHECK_GUESTS).
#
#   tools/loaded-runs.sh [--runs N] [--jobs J] [--kernel KVER] [--out DIR]
#
#   --runs N      runs of the suite, one after another (default 5)
#   --jobs J      the build's make -j (default: the number of CPUs); 0: no
#                 build of its own, the load is another job's (a second
#                 series beside this one, whose VM loads the CPUs as a
#                 build would; the measured load is in the summary)
#   --kernel KVER the guest's kernel (default: the newest of
#                 tools/kernels.sh); every test file runs
#   --out DIR     logs and summary (default build/loaded)
#
# The load is Linux's own build (vmlinux, x86_64 defconfig) from Debian's
# linux-source-6.12, unpacked once into ~/.cache/mpip/hog; when a build
# ends, the next starts from clean.  It runs at the same priority as the
# guest.  Each run is judged as make check judges a suite
# (tools/check.sh's judge_suite: exit status, KTAP plan and counts, skips,
# the guests' kernel logs).  DIR/summary has a line per run: its number,
# start, duration, counts, the host's 1-minute load average over the run
# (sampled every 30 s into DIR/load: median, lowest and highest) and the
# builds finished during it.  Runs the module of `make kmod` for KVER
# (built here first).  Exit status: non-zero if a run failed.
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

main() {
	local runs=5 jobs kver dir tree hogpid samplerpid i t0 secs line failed=0
	jobs=$(nproc)
	dir=$REPO/build/loaded
	while (($#)); do
		case $1 in
		--runs) runs=${2:?}; shift ;;
		--jobs) jobs=${2:?}; shift ;;
		--kernel) kver=${2:?}; shift ;;
		--out) dir=${2:?}; shift ;;
		*) usage ;;
		esac
		shift
	done
	[[ $runs =~ ^[1-9][0-9]*$ && $jobs =~ ^[0-9]+$ ]] || usage
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
		t0=$(date +%s)
		local b0 l0 p0=$total_pass f0=$total_fail s0=$total_skip
		b0=$(wc -l <"$dir/builds")
		l0=$(wc -l <"$dir/load")
		LOG=$dir/run-$i
		mkdir -p "$LOG"
		run_guests "$(plan_guests 1 "$kver")"
		secs=$(($(date +%s) - t0))
		((total_fail == f0)) || failed=$((failed + 1))
		line="run $i: started $(date -d "@$t0" +%T), $((secs / 60)) min $((secs % 60)) s,"
		line+=" $((total_pass - p0)) passed, $((total_fail - f0)) failed, $((total_skip - s0)) skipped;"
		line+=" load $(load_since "$dir/load" "$l0"), builds finished $(($(wc -l <"$dir/builds") - b0))"
		echo "$line" | tee -a "$dir/summary"
	done
	echo "$runs runs on $kver, $failed failed; commit $(git rev-parse --short HEAD)" |
		tee -a "$dir/summary"
	((failed == 0))
}

main "$@"
