#!/usr/bin/env bash
# tests/bench_smoke.sh - every benchmark, short (tools/bench.sh --quick), as
# a test: each must print its JSON line, and every mode of it must have run
# without error and produced its headline figure.  No thresholds on the
# figures themselves: under emulation they are noise at this length (the
# real runs are `make bench`).  A last test, kernel_log_clean, waits until
# the benchmarks' namespaces are gone, unloads mpip (which waits for their
# cleanup in the kernel) and fails if the guest's kernel log, since boot,
# has a line that tests/klog.sh calls a kernel bug (WARNING, BUG, oops,
# lockdep, RCU stall, hung task, a device never freed, ...).  Runs inside
# the VM (a fresh guest: the whole log is this run's):
#
#   tools/vm.sh -- tests/bench_smoke.sh
#
# Prints KTAP and a last line "bench: N passed, N failed".
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"
OUT=$REPO/results/smoke
export MPIP_IN_VM=1

# headline metrics per benchmark kind (space-separated)
declare -A KEY=(
	[tcp]="iperf3_mbps aggregate_pct goodput_pct shaper_drops" [failover]="iperf3_mbps stall_s"
	[backup]="iperf3_mbps stall_s link1_before_pct"
	[reorder]="iperf3_mbps retrans_pct goodput_pct dsack_segs"
	[udp]=received_mbps [overhead]="tcp_iperf3_mbps udp_pps" [fig4d]=iperf3_mbps
	[nat]="iperf3_mbps aggregate_pct goodput_pct"
	[natmtu]="iperf3_mbps aggregate_pct goodput_pct"
	[scale]="ns_per_pkt_1 cost_ratio_pct" [interleave]="on_mbps off_mbps ratio_pct"
	[rules]="ns_per_pkt_none ns_per_pkt_100 cost_ratio_pct"
)

mapfile -t NAMES < <("$REPO/tools/bench.sh" --list | awk '{print $1}')
rm -rf "$OUT"
mkdir -p "$OUT"
echo "KTAP version 1"
echo "1..$((${#NAMES[@]} + 2))"
"$REPO/tools/bench.sh" --quick --no-plot --out "$OUT" >"$OUT/lines.jsonl" 2>"$OUT/bench.log"
echo "# tools/bench.sh --quick exited $?"

pass=0
fail=0
i=0
for name in "${NAMES[@]}"; do
	i=$((i + 1))
	line=$(jq -c --arg n "$name" 'select(.bench == $n)' "$OUT/lines.jsonl" 2>/dev/null | tail -n 1)
	why=
	if [[ -z $line ]]; then
		why="no JSON line"
	else
		kind=$(jq -r '.kind // "tcp"' <<<"$line")
		keys=$(jq -nc --arg k "${KEY[$kind]:-iperf3_mbps}" '$k | split(" ")')
		# every mode (of every scenario) ran, without error, with a number
		# for each key metric
		runs=$(jq -c '[(.modes // {} | to_entries[]), (.scenarios // {} | to_entries[] |
			.key as $s | .value.modes | to_entries[] | .key = "\($s)/\(.key)")]' <<<"$line")
		why=$(jq -r --argjson k "$keys" '.[] | .key as $m | .value as $v |
			($v.error // empty | "\($m): \(.)"),
			($k[] | select(($v[.] | type) != "number") | "\($m): no \(.)")' <<<"$runs" | paste -sd';')
		[[ $(jq length <<<"$runs") -gt 0 ]] || why="no modes"
		jq -r --argjson k "$keys" --arg n "$name" '"# \($n): " + ([.[] | .key as $m | .value as $v |
			"\($m) " + ([$k[] | "\(.)=\($v[.])"] | join(" "))] | join(", "))' <<<"$runs"
	fi
	if [[ -z $why ]]; then
		echo "ok $i bench_$name"
		pass=$((pass + 1))
	else
		echo "# $why"
		echo "not ok $i bench_$name"
		fail=$((fail + 1))
	fi
done
# the profile (tools/bench/profile.sh): both modes ran and perf saw
# mpip's hooks only when mpip was on
i=$((i + 1))
"$REPO/tools/bench/profile.sh" --quick --out "$OUT/profile" >"$OUT/profile.jsonl" 2>"$OUT/profile.log"
if jq -e '.median.mpip > .median.off and (.runs | length) == 2 and
	all(.runs[]; .samples > 1000 and .bytes > 0)' "$OUT/profile.jsonl" >/dev/null 2>&1; then
	echo "# profile: $(jq -c .median "$OUT/profile.jsonl")"
	echo "ok $i profile"
	pass=$((pass + 1))
else
	tail -n 20 "$OUT/profile.log" | sed 's/^/# /'
	echo "not ok $i profile"
	fail=$((fail + 1))
fi

# the kernel log of the whole run
i=$((i + 1))
why=
klog_netns_settle 60 2 || why="namespaces left: $(ip netns list | tr '\n' ' ')"
if [[ -d /sys/module/mpip ]] && ! out=$(timeout 120 rmmod mpip 2>&1); then
	why+="${why:+; }rmmod mpip failed: $out"
fi
if ! log=$(klog_read 2>&1); then
	why+="${why:+; }cannot read the kernel log: $log"
elif bad=$(klog_bad <<<"$log"); then
	head -n 20 <<<"$bad" | sed 's/^/# /'
	why+="${why:+; }the kernel log reports kernel bugs"
fi
if [[ -z $why ]]; then
	echo "ok $i kernel_log_clean"
	pass=$((pass + 1))
else
	echo "# $why"
	echo "not ok $i kernel_log_clean"
	fail=$((fail + 1))
fi

if ((fail)); then
	echo "# tools/bench.sh log (tail):"
	tail -n 40 "$OUT/bench.log" | sed 's/^/# /'
fi
echo "bench: $pass passed, $fail failed"
((fail == 0))
