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

# headline metric per benchmark kind
declare -A KEY=(
	[tcp]=iperf3_mbps [failover]=stall_s [reorder]=iperf3_mbps
	[udp]=received_mbps [overhead]=iperf3_mbps [overhead_udp]=pps
	[scale]=ns_per_pkt_1
)

mapfile -t NAMES < <("$REPO/tools/bench.sh" --list | awk '{print $1}')
rm -rf "$OUT"
mkdir -p "$OUT"
echo "KTAP version 1"
echo "1..${#NAMES[@]}"
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
		key=${KEY[$kind]:-iperf3_mbps}
		# every mode ran, without error, with a number for the key metric
		why=$(jq -r --arg k "$key" '.modes | to_entries[] |
			select(.value.error != null or (.value[$k] | type) != "number") |
			"\(.key): \(.value.error // "no \($k)")"' <<<"$line" | paste -sd';')
		[[ $(jq '.modes | length' <<<"$line") -gt 0 ]] || why="no modes"
		jq -r --arg k "$key" '"# \(.bench): " + ([.modes | to_entries[] |
			"\(.key) \($k)=\(.value[$k])"] | join(", "))' <<<"$line"
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
if ((fail)); then
	echo "# tools/bench.sh log (tail):"
	tail -n 40 "$OUT/bench.log" | sed 's/^/# /'
fi
echo "bench: $pass passed, $fail failed"
((fail == 0))
