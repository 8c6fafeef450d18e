#!/usr/bin/env bash
# tests/bench_smoke.sh - every benchmark, short (tools/bench.sh --quick), as
# a test: each must print its JSON line, and every mode of it must have run
# without error and produced its headline figure.  No thresholds on the
# figures themselves: under emulation they are noise at this length (the
# real runs are `make bench`).  Runs inside the VM:
#
#   tools/vm.sh -- tests/bench_smoke.sh
#
# Prints KTAP and a last line "bench: N passed, N failed".
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
OUT=$REPO/results/smoke
export MPIP_IN_VM=1

# headline metrics per benchmark kind (space-separated)
declare -A KEY=(
	[tcp]="iperf3_mbps aggregate_pct goodput_pct shaper_drops" [failover]="iperf3_mbps stall_s"
	[reorder]="iperf3_mbps retrans_pct goodput_pct dsack_segs"
	[udp]=received_mbps [overhead]="tcp_iperf3_mbps udp_pps" [fig4d]=iperf3_mbps
	[scale]="ns_per_pkt_1 cost_ratio_pct" [interleave]="on_mbps off_mbps ratio_pct"
)

mapfile -t NAMES < <("$REPO/tools/bench.sh" --list | awk '{print $1}')
rm -rf "$OUT"
mkdir -p "$OUT"
echo "KTAP version 1"
echo "1..$((${#NAMES[@]} + 1))"
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

if ((fail)); then
	echo "# tools/bench.sh log (tail):"
	tail -n 40 "$OUT/bench.log" | sed 's/^/# /'
fi
echo "bench: $pass passed, $fail failed"
((fail == 0))
