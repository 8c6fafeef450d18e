#!/usr/bin/env bash
# tools/bench.sh - mpip benchmarks, with Linux MPTCP side by side.
#
#   tools/bench.sh [options] [NAME...]        (on the host: boots the lab VM)
#   tools/vm.sh -- tools/bench.sh [options] [NAME...]   (already in the VM)
#   make bench [BENCH="[options] [NAME...]"]
#
# Runs the named benchmarks (default: all, in the order below), each in
# fresh namespaces (tools/topo.sh twolink) once per mode:
#   mpip   mpip.ko on in both hosts, plain iperf3 (TCP or UDP)
#   mptcp  mpip off in both hosts; Linux MPTCP: both hosts allow 2 subflows,
#          b announces 10.1.2.2 (ADD_ADDR), iperf3 under `mptcpize run`
#   off    mpip off, plain iperf3: the single-path baseline (not by default)
#
# Benchmarks:
#   tcp       40/20 Mbit/s links, iperf3 TCP: aggregate, per-link split
#   udp       40/20 Mbit/s links, iperf3 UDP offered at 55 Mbit/s: fraction
#             the receiver got (MPTCP does not carry UDP: single path)
#   failover  40/40 Mbit/s links, iperf3 TCP; link 2 goes down 5 s after
#             data starts and comes back at 10 s: longest goodput stall,
#             time until link 2 carries traffic again
#
# Each benchmark prints ONE JSON line on stdout (all modes side by side);
# progress goes to stderr.  RESULTS_DIR (default results/bench) gets
# results.jsonl (this invocation's lines), summary.md (Markdown tables with
# the spec's thresholds, reported not enforced), NAME.png (plots: made on
# the host after the VM run, or in the VM when started there) and the raw
# data per benchmark and mode in NAME/MODE/.  Metric definitions:
# tools/bench/analyze.py.
#
# Options:
#   --quick          short runs (3 s; failover 7 s with the link down from
#                    2 s to 4 s), as a smoke test
#   --modes LIST     comma-separated modes (default mpip,mptcp)
#   --out DIR        results directory (inside the repository: the VM can
#                    write only there)
#   --fail-end E     which end of link 2 goes down: a (sender, default),
#                    b (receiver) or both
#   --no-plot        do not make PNGs
#   --list           list the benchmarks and exit
#   -h, --help
#
# Environment: BENCH_UDP_RATE (default 55M), BENCH_UDP_LEN (iperf3 -l),
# MPIP_VM_* as for tools/vm.sh.
#
# Adding a benchmark: bench_register NAME DESCRIPTION LINK1 LINK2 below and
# a function bench_NAME RUNDIR that generates traffic in the prepared lab,
# normally with lab_run (tools/bench/lib.sh).  Its figures come from
# tools/bench/analyze.py (per-kind metrics, CHECKS, ROWS).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SELF=$REPO/tools/bench.sh
PY=/usr/bin/python3

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "$SELF" >&2
	exit "${1:-2}"
}

log() { printf '%s\n' "$*" >&2; }

# ----------------------------------------------------------------- registry
BENCH_NAMES=()
declare -A BENCH_DESC=() BENCH_LINK1=() BENCH_LINK2=()

# bench_register NAME DESCRIPTION LINK1_SPEC LINK2_SPEC
bench_register() {
	BENCH_NAMES+=("$1")
	BENCH_DESC[$1]=$2
	BENCH_LINK1[$1]=$3
	BENCH_LINK2[$1]=$4
}

# Durations (set by set_durations from --quick)
set_durations() {
	if ((QUICK)); then
		DUR_TCP=3 DUR_UDP=3 DUR_FAIL=7 FAIL_DOWN=2 FAIL_UP=4
		export LAB_WARMUP=0.5
	else
		DUR_TCP=10 DUR_UDP=10 DUR_FAIL=20 FAIL_DOWN=5 FAIL_UP=10
		export LAB_WARMUP=1
	fi
}

bench_register tcp "TCP bulk transfer: aggregate and per-link split" \
	40mbit,1ms,- 20mbit,1ms,-
# shellcheck disable=SC2317  # called as "bench_$name"
bench_tcp() {
	lab_run "$1" tcp "$DUR_TCP"
}

bench_register udp "UDP offered at ${BENCH_UDP_RATE:-55M}bit/s: fraction delivered" \
	40mbit,1ms,- 20mbit,1ms,-
# shellcheck disable=SC2317  # called as "bench_$name"
bench_udp() {
	LAB_UDP_RATE=${BENCH_UDP_RATE:-55M} LAB_UDP_LEN=${BENCH_UDP_LEN:-} \
		lab_run "$1" udp "$DUR_UDP"
}

bench_register failover "link 2 fails and comes back during a TCP transfer" \
	40mbit,1ms,- 40mbit,1ms,-
# shellcheck disable=SC2317  # called as "bench_$name"
bench_failover() {
	lab_run "$1" tcp "$DUR_FAIL" "$FAIL_DOWN" "$FAIL_UP"
}

# ------------------------------------------------------------------ options
QUICK=0
MODES=mpip,mptcp
OUT=$REPO/results/bench
PLOT=1
GUEST=0
SEL=()
FAIL_END=${LAB_FAIL_END:-a}
ARGS=("$@")
while (($#)); do
	case $1 in
	--quick) QUICK=1 ;;
	--modes) MODES=${2:?--modes needs a value}; shift ;;
	--modes=*) MODES=${1#*=} ;;
	--out) OUT=${2:?--out needs a value}; shift ;;
	--out=*) OUT=${1#*=} ;;
	--fail-end) FAIL_END=${2:?--fail-end needs a value}; shift ;;
	--fail-end=*) FAIL_END=${1#*=} ;;
	--no-plot) PLOT=0 ;;
	--guest) GUEST=1 ;;
	--list)
		for n in "${BENCH_NAMES[@]}"; do
			printf '%-10s %s (links %s / %s)\n' "$n" "${BENCH_DESC[$n]}" "${BENCH_LINK1[$n]}" "${BENCH_LINK2[$n]}"
		done
		exit 0
		;;
	-h | --help) usage 0 ;;
	-*) log "bench.sh: unknown option '$1'"; usage ;;
	*)
		[[ -n ${BENCH_DESC[$1]+x} ]] || { log "bench.sh: no benchmark '$1' (--list)"; exit 2; }
		SEL+=("$1")
		;;
	esac
	shift
done
((${#SEL[@]})) || SEL=("${BENCH_NAMES[@]}")
IFS=, read -ra MODE_LIST <<<"$MODES"
for m in "${MODE_LIST[@]}"; do
	[[ $m == mpip || $m == mptcp || $m == off ]] || { log "bench.sh: bad mode '$m'"; exit 2; }
done
[[ $FAIL_END == a || $FAIL_END == b || $FAIL_END == both ]] || { log "bench.sh: bad --fail-end '$FAIL_END'"; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)

plot_and_summary() {
	if ((PLOT)); then
		log "== plots"
		"$PY" "$REPO/tools/bench/plot.py" bench "$OUT" >&2 || log "bench.sh: plotting failed"
	fi
	log ""
	cat "$OUT/summary.md" >&2
	log "results: $OUT/summary.md, $OUT/results.jsonl$( ((PLOT)) && printf ', %s/*.png' "$OUT")"
}

# ---------------------------------------------------------------- host side
host_main() {
	[[ $OUT == "$REPO"/* ]] || { log "bench.sh: --out must be inside $REPO (the VM writes only there)"; exit 2; }
	"$REPO/tools/deps.sh"
	make -s -C "$REPO" all >&2
	local gargs=() rc=0 a
	for a in "${ARGS[@]}"; do
		[[ $a == --no-plot ]] || gargs+=("$a")
	done
	gargs+=(--out "$OUT")
	rm -f "$OUT/summary.md" "$OUT/results.jsonl"
	# the guest does not plot (matplotlib is slow under emulation): we do
	"$REPO/tools/vm.sh" -- "$SELF" --guest --no-plot "${gargs[@]}" || rc=$?
	if [[ -s $OUT/summary.md ]]; then
		plot_and_summary
	fi
	return "$rc"
}

# --------------------------------------------------------------- guest side
guest_main() {
	# shellcheck source=tools/bench/lib.sh
	source "$REPO/tools/bench/lib.sh"
	lab_init
	LAB_FAIL_END=$FAIL_END
	set_durations
	trap 'lab_fini' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	: >"$OUT/results.jsonl"
	local name rc=0
	for name in "${SEL[@]}"; do
		run_bench "$name" || rc=1
	done
	"$PY" "$REPO/tools/bench/analyze.py" summary "$OUT/results.jsonl" >"$OUT/summary.md"
	if ((!GUEST)); then
		plot_and_summary
	fi
	return "$rc"
}

# run_bench NAME: the common runner - per mode a fresh lab, the mode set up,
# the benchmark function, then one JSON line for all modes
run_bench() {
	local name=$1 mode dir specs=() line
	log "== $name: ${BENCH_DESC[$name]} (links ${BENCH_LINK1[$name]} / ${BENCH_LINK2[$name]})"
	for mode in "${MODE_LIST[@]}"; do
		dir=$OUT/$name/$mode
		rm -rf "$dir"
		mkdir -p "$dir"
		if ! lab_up "$dir" "${BENCH_LINK1[$name]}" "${BENCH_LINK2[$name]}"; then
			echo "lab setup failed" >"$dir/error.txt"
		elif ! lab_mode "$mode"; then
			echo "could not set up mode $mode" >"$dir/error.txt"
		elif ! "bench_$name" "$dir"; then
			echo "bench_$name failed" >"$dir/error.txt"
		fi
		lab_down
		[[ -s $dir/error.txt ]] && log "   $mode: $(<"$dir/error.txt")"
		log "   $mode: $("$PY" "$REPO/tools/bench/analyze.py" line "$dir" 2>&1)"
		specs+=("$mode=$dir")
	done
	line=$("$PY" "$REPO/tools/bench/analyze.py" bench "$name" "${BENCH_DESC[$name]}" \
		--quick="$( ((QUICK)) && echo true || echo false)" --date="$DATE" \
		--fail_end="$LAB_FAIL_END" "${specs[@]}") || return 1
	printf '%s\n' "$line" >>"$OUT/results.jsonl"
	printf '%s\n' "$line"
}

# (one line: bash reads scripts lazily, and this one may be edited meanwhile)
if ((GUEST)) || [[ ${MPIP_IN_VM:-0} == 1 ]]; then guest_main; else host_main; fi; exit
