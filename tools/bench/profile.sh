#!/usr/bin/env bash
# tools/bench/profile.sh - where the CPU time goes: perf inside the VM.
#
#   tools/vm.sh -- tools/bench/profile.sh [--quick] [--rounds N] [--out DIR]
#   make profile
#
# Two namespaces joined by one unshaped veth; one iperf3 TCP stream, client
# and server both pinned to CPU 0, which `perf record -g -C 0` samples while
# it is busy all the time.  (With an idle CPU, TCG's timer interrupts land
# in the idle loop and perf sees nothing else: Documentation/performance.rst.)
# Modes, alternating, ROUNDS rounds each, in fresh namespaces:
#   off   mpip.ko loaded, mpip disabled in both namespaces
#   mpip  mpip enabled in both
# For each run, tools/bench/profile.py gives the share of all samples
# spent in (or below) mpip's hooks, timers and work, and their heaviest
# callees.  Prints one JSON line: the runs and, per mode, the median share;
# DIR (default results/profile) keeps the runs' JSON and perf reports.
# MPIP_KO (default kernel/mpip.ko) is the module loaded if none is;
# MPIP_SET="key=value ..." sets tunables in the mpip runs, for experiments.
#
# A share of CPU time is steadier under emulation than a throughput ratio:
# the emulated CPU's speed drifts with the host's load, which moves the
# throughput of a run by 10-20 %, but it slows mpip and the rest of the
# stack alike.  With the CPU saturated, a share P in mpip bounds the
# throughput mpip leaves to about 100 - P % of the kernel without it.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
CTL=$REPO/userspace/mpipctl
OUT=$REPO/results/profile
ROUNDS=3 DUR=10

while (($#)); do
	case $1 in
	--quick) ROUNDS=1 DUR=3 ;;
	--rounds) ROUNDS=${2:?--rounds needs a value}; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: $0 [--quick] [--rounds N] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done

if [[ $(id -u) != 0 ]]; then
	echo "profile.sh: run it inside the VM: tools/vm.sh -- $0" >&2
	exit 2
fi
command -v perf >/dev/null || { echo "profile.sh: perf missing (tools/deps.sh)" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.txt

P=prof$$
cleanup() {
	ip netns del "${P}a" 2>/dev/null || true
	ip netns del "${P}b" 2>/dev/null || true
}
trap cleanup EXIT

if [[ ! -e /sys/module/mpip ]]; then
	modprobe -q libcrc32c	# insmod does not load what mpip.ko needs
	insmod "${MPIP_KO:-$REPO/kernel/mpip.ko}"
fi

# run MODE ROUND: one profiled run in fresh namespaces
run() {
	local mode=$1 r=$2 a=${P}a b=${P}b on=disable bytes tag=$1-$2
	cleanup
	ip netns add "$a"
	ip netns add "$b"
	ip link add v0 netns "$a" type veth peer v1 netns "$b"
	ip -n "$a" addr add 10.9.1.1/24 dev v0
	ip -n "$b" addr add 10.9.1.2/24 dev v1
	for n in "$a" "$b"; do ip -n "$n" link set lo up; done
	ip -n "$a" link set v0 up
	ip -n "$b" link set v1 up
	[[ $mode == mpip ]] && on=enable
	ip netns exec "$a" "$CTL" "$on"
	ip netns exec "$b" "$CTL" "$on"
	if [[ $mode == mpip ]]; then
		for kv in ${MPIP_SET:-}; do
			ip netns exec "$a" "$CTL" set "${kv%%=*}" "${kv#*=}"
			ip netns exec "$b" "$CTL" set "${kv%%=*}" "${kv#*=}"
		done
	fi
	ip netns exec "$b" iperf3 -s -D -1 -p 5201 -A 0
	sleep 0.5
	# warm-up on its own port: mpip finds its peer, TCP its window
	ip netns exec "$b" iperf3 -s -D -1 -p 5202
	sleep 0.5
	ip netns exec "$a" iperf3 -c 10.9.1.2 -p 5202 -t 1 >/dev/null
	perf record -q -C 0 -g -o "$OUT/perf.data" -- \
		ip netns exec "$a" iperf3 -A 0,0 -c 10.9.1.2 -p 5201 -t "$DUR" -J \
		>"$OUT/iperf-$tag.json" 2>/dev/null
	bytes=$(jq '.end.sum_received.bytes' "$OUT/iperf-$tag.json")
	perf script -i "$OUT/perf.data" -F ip,sym 2>/dev/null >"$OUT/script.txt"
	python3 "$REPO/tools/bench/profile.py" "$OUT/script.txt" "$bytes" "$mode" \
		>"$OUT/$tag.json"
	perf report -i "$OUT/perf.data" --no-children --sort sym --stdio -g none \
		2>/dev/null >"$OUT/report.txt" || true
	grep -v -e '^#' -e '^$' "$OUT/report.txt" | head -60 >"$OUT/report-$tag.txt" || true
	rm -f "$OUT/perf.data" "$OUT/perf.data.old" "$OUT/script.txt" "$OUT/report.txt"
	echo "   $tag: $(jq -c '{mpip_pct, samples_per_mb}' "$OUT/$tag.json")" >&2
}

for r in $(seq 1 "$ROUNDS"); do
	run off "$r"
	run mpip "$r"
done

jq -sc '{bench: "profile", rounds: (length / 2),
	runs: .,
	median: (group_by(.mode) | map({key: .[0].mode,
		value: (map(.mpip_pct) | sort | .[length / 2 | floor])}) | from_entries)}' \
	"$OUT"/off-*.json "$OUT"/mpip-*.json | tee "$OUT/profile.jsonl"
