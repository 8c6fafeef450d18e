#!/usr/bin/env bash
# tools/bench.sh - mpip benchmarks, with Linux MPTCP side by side.
#
#   tools/bench.sh [options] [NAME...]        (on the host: boots the lab VM)
#   tools/vm.sh -- tools/bench.sh [options] [NAME...]   (already in the VM)
#   make bench [BENCH="[options] [NAME...]"]
#
# Runs the named benchmarks (default: all, in the order below), each in
# fresh namespaces (tools/topo.sh twolink) once per mode:
#   mpip            mpip.ko on in both hosts, plain iperf3 (TCP or UDP)
#   mpip-noreorder  the same with the reorder buffer off (reorder 0)
#   mpip-udp        mpip with nat_mode udp on both hosts
#   mpip-faketcp    mpip with nat_mode faketcp on both hosts
#   mptcp           mpip off in both hosts; Linux MPTCP: both hosts allow 2
#                   subflows, b announces 10.1.2.2 (ADD_ADDR), iperf3 under
#                   `mptcpize run`
#   mptcp-nogso     MPTCP as above with GSO and TSO off on both hosts'
#                   links: every segment goes through IP on its own, as
#                   with mpip's tx_gso 0
#   mptcp-mpip      MPTCP as above over mpip (both on)
#   off             mpip off, plain iperf3: the single-path baseline
#   unloaded        no mpip.ko in the kernel at all
# A benchmark has its own modes (below); --modes overrides them for all.
#
# Benchmarks (issue 3 and 4 figures; full run / --quick):
#   tcp       40/20 Mbit/s, iperf3 TCP 10 s: aggregate, per-link split
#             (Fig. 4(a)); modes mpip, mptcp
#   nat       40/20 Mbit/s, 2 ms, a behind two strict NATs (topo.sh nat),
#             iperf3 TCP 10 s from a to b: goodput, aggregate, split;
#             modes mpip (nat_mode auto), mpip-udp, mpip-faketcp, mptcp;
#             3 rounds (quick: 1)
#   natrev    as nat, data from b to a on the connection a opens (iperf3
#             -R: a downloads); modes as nat
#   natdown   as natrev, but b's links have no rate limit (topo.sh nat
#             --b-no-rate): a's two links are the only bottlenecks, as
#             they are for a -> b (natrev adds a second stage on b's side)
#   natgso0   as nat with tx_gso 0 on both hosts (GSO packets split before
#             mpip; the nat lab's routes have gateways, so tx_gso 1 keeps
#             none whole either); modes mpip, mpip-udp, mpip-faketcp
#   natrevgso0  as natrev with tx_gso 0 on both hosts: b sends, splitting
#             its GSO packets before mpip; modes as nat and mptcp-nogso
#             (MPTCP does not use tx_gso: its column is natrev's, in the
#             same run; mptcp-nogso sends every segment on its own, too)
#   natstart  the natrevgso0 lab: 20 downloads of 2 MB from b to a, each on
#             connections of its own (iperf3 -R -n; quick: 3 of 1 MB), so
#             that each meets what a new connection's first flight meets:
#             per download, segments a's TCP queued out of order, segments
#             b sent again (and of those, ones a already had), goodput;
#             modes mpip, mpip-udp, mpip-faketcp, mptcp, off
#   natloss   as natrev, with netem dropping 0.1 % of the packets at every
#             shaped hop (three on the way from b to a, two back: about
#             0.3 % of the data and 0.2 % of the ACKs); modes mpip, mptcp
#   natmtu    as nat, with the NATs' far links at MTU 1400 (topo.sh nat
#             --wan-mtu 1400): mpip's full-size segments inside UDP go in
#             two fragments
#   udp       40/20 Mbit/s, iperf3 UDP offered at 55 Mbit/s: fraction the
#             receiver got (MPTCP does not carry UDP: single path)
#   failover  40/40 Mbit/s, iperf3 TCP 30 s; link 2 goes down 10 s after
#             data starts and comes back at 20 s (Fig. 4(b)): longest
#             goodput stall, time until link 2 carries traffic again
#   overhead  one unshaped link (link 2 down): iperf3 TCP, then 64-byte UDP
#             datagrams at full speed (receiver's datagrams/s); module not
#             loaded vs. mpip active, 5 rounds, every second one in
#             reverse order (quick: 1), no snapshot during the runs; mpip
#             in % of the module-less figures: the median of the rounds'
#             ratios
#   backup    as failover, 40/40 Mbit/s, with link 1 a backup link on a
#             (mpipctl link set dev eth1 backup; the flow's own addresses
#             are on link 1): share of link 1 before the failure, stall
#             while the data moves to it, time until link 2 carries the
#             data again after its return (Documentation/routing.rst);
#             mpip only
#   backuploss  40/40 Mbit/s, link 1 a backup link on a, link 2 (the main
#             link) dropping 1 % at every shaped hop (a's and b's egress);
#             iperf3 TCP 10 s from a to b's link 2 address, so that the
#             connection's own path is the main link: goodput, link 1's
#             share, gaps b's reorder buffer released as lost and by
#             timeout; modes mpip and off (plain TCP over link 2); 3
#             rounds (quick: 1)
#   interleave  one unshaped link (link 2 down): iperf3 TCP in runs of 2 s,
#             mpip switched on and off in both hosts between runs in ABBA
#             order, 24 cycles (quick: 1 cycle of 1 s runs); off, mpip's
#             hooks are unregistered, so those runs take the module-less
#             path; on in % of off: the median of the cycles' ratios
#   reorder   40/20 Mbit/s with 10 ms / 2 ms extra delay (Fig. 4(c)):
#             throughput and retransmissions, mpip, mpip-noreorder, mptcp
#   fig4d     (Fig. 4(d)) scenarios normal 40+40, delay (+10 ms on path 1),
#             limit (path 1 at 20 Mbit/s); mpip, mptcp, mptcp-mpip; 5 runs
#             of 5 s each (quick: 1 of 2 s), box plots in fig4d.png
#   scale     kernel time per UDP datagram with 1, 100 and 10,000 flows,
#             each count in a lab of its own, 5 cycles of interleaved rounds
#             of 50,000 datagrams (quick: 1 and 1000 flows, one cycle of
#             4000), mpip and off (tools/bench/scale.py)
#   rules     kernel time per UDP datagram of one flow with no routing
#             rules and with 100 that it runs through without a match
#             (each rule tests proto udp and the destination, and fails on
#             the port), each in a lab of its own, measured as scale does
#             (same rounds and cycles; quick: one cycle of 4000), mpip only
#
# Each benchmark prints ONE JSON line on stdout (all modes side by side);
# progress goes to stderr.  Every line records what was measured: "date"
# (UTC, the invocation's start), "quick", "commit" (git describe --always
# --dirty of the tree, taken on the host before the build), "kernel" (the
# guest's uname -r), "code" (an id
# of the files the figures depend on, see bench_code_id) and, for runs with
# experimental settings, "settings" (the environment variables below).
# RESULTS_DIR (default results/bench) gets
# results.jsonl (this invocation's lines), summary.md (Markdown tables with
# the spec's thresholds, reported not enforced), NAME.png (plots: made on
# the host after the VM run, or in the VM when started there) and the raw
# data per benchmark and mode in NAME/MODE/.  Metric definitions:
# tools/bench/analyze.py.  The figures the documentation quotes come from
# full runs committed with tools/bench/report.py --add (see
# Documentation/performance.rst, "Producing the figures").
#
# Options:
#   --quick          short runs (3 s; failover 7 s with the link down from
#                    2 s to 4 s; fig4d 1 x 2 s), as a smoke test
#   --modes LIST     comma-separated modes (default mpip,mptcp)
#   --out DIR        results directory (inside the repository: the VM can
#                    write only there)
#   --fail-end E     which end of link 2 goes down: a (sender, default),
#                    b (receiver) or both
#   --no-plot        do not make PNGs
#   --list           list the benchmarks and exit
#   -h, --help
#
# Environment (handed on to the VM): LAB_MPIP_SET="key=value ..." (mpip
# tunables set in the mpip modes), LAB_SYSCTL="key=value ..." (sysctls of
# both hosts in every mode, e.g. net.ipv4.tcp_reordering=127), both for
# experiments; BENCH_UDP_RATE (default 55M), BENCH_UDP_LEN (iperf3 -l);
# BENCH_TCP_RATE (iperf3 -b for every TCP run: a sender held under the
# links' rate, to compare the CPU modes spend on the same goodput);
# MPIP_VM_* as for tools/vm.sh.
#
# Adding a benchmark: bench_register NAME DESCRIPTION LINK1 LINK2 below and
# a function bench_NAME RUNDIR that generates traffic in the prepared lab,
# normally with lab_run (tools/bench/lib.sh); several runs in one lab go to
# subdirectories of RUNDIR (lab_reps for repetitions).  bench_scenario adds
# link setups of its own (each mode runs in each).  Its figures come from
# tools/bench/analyze.py (per-kind metrics, CHECKS, ROWS).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SELF=$REPO/tools/bench.sh
PY=/usr/bin/python3
# the environment variables that change what the benchmarks measure: handed
# on to the guest, and recorded in each result line's "settings"
BENCH_SETTING_VARS=(LAB_MPIP_SET LAB_SYSCTL BENCH_UDP_RATE BENCH_UDP_LEN BENCH_TCP_RATE)

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "$SELF" >&2
	exit "${1:-2}"
}

log() { printf '%s\n' "$*" >&2; }

# ----------------------------------------------------------------- registry
BENCH_NAMES=()
declare -A BENCH_DESC=() BENCH_LINK1=() BENCH_LINK2=() BENCH_MODES=() BENCH_SCEN=()
declare -A BENCH_ROUNDS=() BENCH_TOPO=() BENCH_TOPO_ARGS=()

# bench_register NAME DESCRIPTION LINK1_SPEC LINK2_SPEC [MODES]
# MODES (comma-separated) are the benchmark's own; --modes overrides them.
bench_register() {
	BENCH_NAMES+=("$1")
	BENCH_DESC[$1]=$2
	BENCH_LINK1[$1]=$3
	BENCH_LINK2[$1]=$4
	BENCH_MODES[$1]=${5:-}
}

# bench_scenario NAME LABEL LINK1_SPEC LINK2_SPEC: NAME runs each of its
# modes in each of its scenarios (in the order given), results in
# NAME/LABEL/MODE/; the links of bench_register are then not used
bench_scenario() {
	BENCH_SCEN[$1]+="${BENCH_SCEN[$1]:+ }$2=$3/$4"
}

# bench_rounds NAME R: run NAME's modes R times, alternating (mode 1, mode
# 2, mode 2, mode 1, ...; --quick: once), each round in fresh namespaces, results
# in NAME/MODE/roundK/: for figures compared between modes, so that slow
# drifts of the emulated machine's speed hit every mode alike
bench_rounds() {
	BENCH_ROUNDS[$1]=$2
}

# bench_topo NAME KIND [ARG...]: NAME runs in topo.sh's KIND lab (twolink
# or nat; default twolink), with ARGs for topo.sh
bench_topo() {
	BENCH_TOPO[$1]=$2
	BENCH_TOPO_ARGS[$1]=${*:3}
}

# Durations (set by set_durations from --quick)
set_durations() {
	if ((QUICK)); then
		DUR_TCP=3 DUR_UDP=3 DUR_FAIL=7 FAIL_DOWN=2 FAIL_UP=4 DUR_4D=2 REPS_4D=1
		SCALE_FLOWS=1,1000 SCALE_PKTS=4000 SCALE_CYCLES=1
		IL_CYCLES=1 IL_DUR=1 START_N=3 START_SIZE=1M
		export LAB_WARMUP=0.5
	else
		DUR_TCP=10 DUR_UDP=10 DUR_FAIL=30 FAIL_DOWN=10 FAIL_UP=20 DUR_4D=5 REPS_4D=5
		SCALE_FLOWS=1,100,10000 SCALE_PKTS=50000 SCALE_CYCLES=5
		IL_CYCLES=24 IL_DUR=2 START_N=20 START_SIZE=2M
		export LAB_WARMUP=1
	fi
}

bench_register tcp "TCP bulk transfer: aggregate and per-link split" \
	40mbit,1ms,- 20mbit,1ms,-
# shellcheck disable=SC2317  # called as "bench_$name"
bench_tcp() {
	lab_run "$1" tcp "$DUR_TCP"
}

bench_register nat "TCP bulk transfer, a behind two strict NATs (issue 21)" \
	40mbit,2ms,- 20mbit,2ms,- mpip,mpip-udp,mpip-faketcp,mptcp
bench_topo nat nat
bench_rounds nat 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_nat() {
	LAB_TAG=nat lab_run "$1" tcp "$DUR_TCP"
}

bench_register natrev "TCP bulk transfer b -> a (a downloads), a behind two strict NATs" \
	40mbit,2ms,- 20mbit,2ms,- mpip,mpip-udp,mpip-faketcp,mptcp
bench_topo natrev nat
bench_rounds natrev 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_natrev() {
	LAB_TAG=natrev LAB_REVERSE=1 lab_run "$1" tcp "$DUR_TCP"
}

bench_register natdown "TCP bulk transfer b -> a (a downloads) through two strict NATs, b's links without a rate limit" \
	40mbit,2ms,- 20mbit,2ms,- mpip,mpip-udp,mpip-faketcp,mptcp
bench_topo natdown nat --b-no-rate
bench_rounds natdown 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_natdown() {
	LAB_TAG=natdown LAB_REVERSE=1 lab_run "$1" tcp "$DUR_TCP"
}

bench_register natgso0 "TCP bulk transfer, a behind two strict NATs, tx_gso 0 on both hosts" \
	40mbit,2ms,- 20mbit,2ms,- mpip,mpip-udp,mpip-faketcp
bench_topo natgso0 nat
bench_rounds natgso0 3
# bench_tx_gso0: tx_gso 0 on both hosts, in the modes where mpip is on
# (in the MPTCP modes mpip is off, and tx_gso means nothing to MPTCP)
bench_tx_gso0() {
	local ns
	((LAB_MPIP)) || return 0
	for ns in "$LAB_A" "$LAB_B"; do
		ip netns exec "$ns" "$MPIPCTL" set tx_gso 0 || return 1
	done
}

# shellcheck disable=SC2317  # called as "bench_$name"
bench_natgso0() {
	bench_tx_gso0 || return 1
	LAB_TAG=natgso0 lab_run "$1" tcp "$DUR_TCP"
}

bench_register natrevgso0 "TCP bulk transfer b -> a (a downloads), a behind two strict NATs, tx_gso 0 on both hosts" \
	40mbit,2ms,- 20mbit,2ms,- mpip,mpip-udp,mpip-faketcp,mptcp,mptcp-nogso
bench_topo natrevgso0 nat
bench_rounds natrevgso0 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_natrevgso0() {
	bench_tx_gso0 || return 1
	LAB_TAG=natrevgso0 LAB_REVERSE=1 lab_run "$1" tcp "$DUR_TCP"
}

bench_register natstart "short downloads b -> a (a downloads 2 MB on a new connection, 20 times), a behind two strict NATs, tx_gso 0 on both hosts" \
	40mbit,2ms,- 20mbit,2ms,- mpip,mpip-udp,mpip-faketcp,mptcp,off
bench_topo natstart nat
# shellcheck disable=SC2317  # called as "bench_$name"
bench_natstart() {
	bench_tx_gso0 || return 1
	lab_starts "$1" "$START_N" "$START_SIZE"
}

bench_register natloss "TCP bulk transfer b -> a (a downloads), a behind two strict NATs, 0.1 % random loss at every shaped hop" \
	40mbit,2ms,0.1% 20mbit,2ms,0.1% mpip,mptcp
bench_topo natloss nat
bench_rounds natloss 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_natloss() {
	LAB_TAG=natloss LAB_REVERSE=1 lab_run "$1" tcp "$DUR_TCP"
}

bench_register natmtu "TCP bulk transfer, a behind two strict NATs whose far links have MTU 1400" \
	40mbit,2ms,- 20mbit,2ms,-
bench_topo natmtu nat --wan-mtu 1400
bench_rounds natmtu 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_natmtu() {
	LAB_TAG=natmtu lab_run "$1" tcp "$DUR_TCP"
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

# MultiMob's backup link: link 1 a backup on a, link 2 the main link; link
# 2 fails and comes back as in failover
bench_register backup "link 1 a backup link on a; link 2 fails and comes back during a TCP transfer" \
	40mbit,1ms,- 40mbit,1ms,- mpip
# shellcheck disable=SC2317  # called as "bench_$name"
bench_backup() {
	ip netns exec "$LAB_A" "$MPIPCTL" link set dev eth1 backup || return 1
	LAB_TAG=backup lab_run "$1" tcp "$DUR_FAIL" "$FAIL_DOWN" "$FAIL_UP"
}

# A backup link beside a lossy main link (issue 22's backup, a WiFi with
# losses beside a cellular link): link 1 a backup on a, link 2 losing 1 %
# at every shaped hop; iperf3 connects to b's link 2 address, so that the
# connection keeps to the main link from its first packet; off: plain TCP
# over link 2
bench_register backuploss "link 1 a backup link on a; link 2, the main link, drops 1 % at every shaped hop" \
	40mbit,1ms,- 40mbit,1ms,1% mpip,off
bench_rounds backuploss 3
# shellcheck disable=SC2317  # called as "bench_$name"
bench_backuploss() {
	if [[ $LAB_MODE == mpip ]]; then
		ip netns exec "$LAB_A" "$MPIPCTL" link set dev eth1 backup || return 1
	fi
	LAB_SERVER=10.1.2.2 LAB_TAG=backuploss lab_run "$1" tcp "$DUR_TCP"
}

# one unshaped link: link 2 is taken down at both ends before the run
# shellcheck disable=SC2317  # called from the bench_ functions
one_link() {
	ip -n "$LAB_A" link set eth2 down && ip -n "$LAB_B" link set eth2 down
}

bench_register overhead "one unshaped link, TCP and 64-byte UDP: module not loaded vs. mpip active" \
	- - unloaded,mpip
bench_rounds overhead 5
# shellcheck disable=SC2317  # called as "bench_$name"
bench_overhead() {
	one_link || return 1
	LAB_TAG=overhead LAB_SNAPSHOT=0 lab_run "$1/tcp" tcp "$DUR_TCP" || return 1
	LAB_TAG=overhead LAB_SNAPSHOT=0 LAB_UDP_RATE=0 LAB_UDP_LEN=64 lab_run "$1/udp" udp "$DUR_UDP"
}

# one unshaped link; mpip switched on and off between short TCP runs in
# the same lab (ABBA); off, its hooks are not registered
bench_register interleave "one unshaped link, TCP: mpip on vs. off (no mpip hooks), interleaved short runs" \
	- - mpip
# shellcheck disable=SC2317  # called as "bench_$name"
bench_interleave() {
	one_link || return 1
	lab_interleave "$1" "$IL_CYCLES" "$IL_DUR"
}

bench_register reorder "TCP with 10 ms / 2 ms extra delay: reorder buffer on and off" \
	40mbit,10ms,- 20mbit,2ms,- mpip,mpip-noreorder,mptcp
# shellcheck disable=SC2317  # called as "bench_$name"
bench_reorder() {
	LAB_TAG=reorder lab_run "$1" tcp "$DUR_TCP"
}

# Fig. 4(d): three scenarios, TCP over mpip, MPTCP over plain IP, MPTCP
# over mpip; REPS_4D runs each, box plots of their goodput
bench_register fig4d "Fig. 4(d): TCP over mpip, MPTCP, MPTCP over mpip in three scenarios" \
	- - mpip,mptcp,mptcp-mpip
bench_scenario fig4d normal 40mbit,1ms,- 40mbit,1ms,-
bench_scenario fig4d delay 40mbit,11ms,- 40mbit,1ms,-
bench_scenario fig4d limit 20mbit,1ms,- 40mbit,1ms,-
# shellcheck disable=SC2317  # called as "bench_$name"
bench_fig4d() {
	LAB_TAG=fig4d lab_reps "$1" "$REPS_4D" tcp "$DUR_4D"
}

bench_register scale "per-packet cost with 1, 100 and 10,000 concurrent UDP sessions" \
	- - mpip,off
# shellcheck disable=SC2317  # called as "bench_$name"
bench_scale() {
	lab_scale "$1" "$SCALE_FLOWS" "$SCALE_PKTS" "$SCALE_CYCLES"
}

# shellcheck disable=SC2317  # called through LAB_SCALE_PREP
# rules_100 NS: 100 routing rules in NS that the benchmark's datagrams (to
# 10.1.1.2, UDP port 9700) go through without a match: each tests the
# protocol and the destination, which match, and then a port that does not
rules_100() {
	local k
	for ((k = 1; k <= 100; k++)); do
		echo "rule add pref $((1000 + k)) proto udp to 10.1.1.2 dport $((30000 + k)) mode original"
	done | ip netns exec "$1" "$MPIPCTL" -b - || return 1
	[[ $(ip netns exec "$1" "$MPIPCTL" -j show rules | jq length) == 100 ]]
}

bench_register rules "per-packet cost of one UDP flow with 100 routing rules vs. none" \
	- - mpip
# shellcheck disable=SC2317  # called as "bench_$name"
bench_rules() {
	LAB_SCALE_KIND=rules LAB_SCALE_PREP=rules_100 \
		lab_scale "$1" 1,1 "$SCALE_PKTS" "$SCALE_CYCLES"
}

# bench_links NAME: its link specs, for people
bench_links() {
	local sc out=
	for sc in ${BENCH_SCEN[$1]:-}; do
		out+="${out:+; }${sc%%=*}: ${sc#*=}"
	done
	out=${out:-${BENCH_LINK1[$1]}/${BENCH_LINK2[$1]}}
	printf '%s' "${out//\// / }"
}

# ------------------------------------------------------------------ options
QUICK=0
MODES=mpip,mptcp
MODES_SET=0
OUT=$REPO/results/bench
PLOT=1
GUEST=0
SEL=()
FAIL_END=${LAB_FAIL_END:-a}
ARGS=("$@")
while (($#)); do
	case $1 in
	--quick) QUICK=1 ;;
	--modes) MODES=${2:?--modes needs a value}; MODES_SET=1; shift ;;
	--modes=*) MODES=${1#*=}; MODES_SET=1 ;;
	--out) OUT=${2:?--out needs a value}; shift ;;
	--out=*) OUT=${1#*=} ;;
	--fail-end) FAIL_END=${2:?--fail-end needs a value}; shift ;;
	--fail-end=*) FAIL_END=${1#*=} ;;
	--no-plot) PLOT=0 ;;
	--guest) GUEST=1 ;;
	--list)
		for n in "${BENCH_NAMES[@]}"; do
			printf '%-10s %s (links %s)\n' "$n" "${BENCH_DESC[$n]}" "$(bench_links "$n")"
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
	case $m in
	mpip | mpip-noreorder | mpip-udp | mpip-faketcp | mptcp | mptcp-nogso | mptcp-mpip | off | unloaded) ;;
	*) log "bench.sh: bad mode '$m'"; exit 2 ;;
	esac
done
[[ $FAIL_END == a || $FAIL_END == b || $FAIL_END == both ]] || { log "bench.sh: bad --fail-end '$FAIL_END'"; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)

# bench_code_id: an id of what the figures depend on: the module, mpipctl,
# the VM, the labs and the benchmarks themselves (not the reporting), as a
# hash of HEAD's blobs there, "-dirty" added if any of them differs from
# HEAD (untracked files too).  Runs with the same id measured the same code,
# whatever else changed between their commits (tools/bench/report.py pools
# them).  "unknown" without git.
bench_code_id() {
	local re='^(kernel|userspace)/|^(Makefile|Kbuild|tools/(vm|topo|deps|bench)[.]sh)$'
	re+='|^tools/bench/(lib[.]sh|sampler[.]py|analyze[.]py|scale[.]py)$'
	local id st
	if ! git --no-optional-locks -C "$REPO" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
		! id=$(git --no-optional-locks -C "$REPO" ls-tree -r --full-tree HEAD |
			awk -F '\t' -v re="$re" '$2 ~ re' | git hash-object --stdin) ||
		[[ -z $id ]]; then
		echo unknown
		return
	fi
	id=${id:0:12}
	# (a status that fails cannot vouch for the tree either)
	if ! st=$(git --no-optional-locks -C "$REPO" status --porcelain --untracked-files=normal -- \
		kernel userspace Makefile Kbuild tools/vm.sh tools/topo.sh tools/deps.sh \
		tools/bench.sh tools/bench/lib.sh tools/bench/sampler.py \
		tools/bench/analyze.py tools/bench/scale.py 2>/dev/null) || [[ -n $st ]]; then
		id+=-dirty
	fi
	echo "$id"
}

# bench_commit: git describe --always --dirty of the tree ("unknown" without
# git)
bench_commit() {
	git --no-optional-locks -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown
}

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
	# what is measured: taken before the build, and by the host (the guest
	# may not be able to run git on the shared tree)
	local gargs=() fwd=() rc=0 a v
	fwd+=("BENCH_COMMIT=$(bench_commit)" "BENCH_CODE=$(bench_code_id)")
	"$REPO/tools/deps.sh"
	make -s -C "$REPO" all >&2
	for a in "${ARGS[@]}"; do
		[[ $a == --no-plot ]] || gargs+=("$a")
	done
	gargs+=(--out "$OUT")
	# the guest starts with a clean environment: hand on the variables
	# that change the benchmarks
	for v in "${BENCH_SETTING_VARS[@]}"; do
		[[ -z ${!v:-} ]] || fwd+=("$v=${!v}")
	done
	rm -f "$OUT/summary.md" "$OUT/results.jsonl"
	# the guest does not plot (matplotlib is slow under emulation): we do
	"$REPO/tools/vm.sh" -- env "${fwd[@]}" "$SELF" --guest --no-plot "${gargs[@]}" || rc=$?
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
	export LAB_TCP_RATE=${BENCH_TCP_RATE:-}
	trap 'lab_fini' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	# (started on the host: it handed them on; run in the VM: ours)
	COMMIT=${BENCH_COMMIT:-$(bench_commit)}
	CODE=${BENCH_CODE:-$(bench_code_id)}
	SETTINGS=$(bench_settings)
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

# bench_settings: a JSON object of the experimental settings in force
# (BENCH_SETTING_VARS; {} if none), so that such runs are never taken for
# the benchmark's defaults
bench_settings() {
	"$PY" -c 'import json, os, sys
print(json.dumps({k: os.environ[k] for k in sys.argv[1:] if os.environ.get(k)},
                 sort_keys=True))' "${BENCH_SETTING_VARS[@]}"
}

# reverse_into ARRAY ITEM...: ARRAY becomes the ITEMs, last first
reverse_into() {
	local -n _rev=$1
	local i
	shift
	_rev=()
	for ((i = $#; i >= 1; i--)); do
		_rev+=("${!i}")
	done
}

# run_bench NAME: the common runner - per scenario and mode a fresh lab,
# the mode set up, the benchmark function, then one JSON line for all
run_bench() {
	local name=$1 mode dir specs=() line sc label links k rounds order=() extra=()
	log "== $name: ${BENCH_DESC[$name]} (links $(bench_links "$name"))"
	local modes=("${MODE_LIST[@]}") scens=("=${BENCH_LINK1[$name]}/${BENCH_LINK2[$name]}")
	if ((!MODES_SET)) && [[ -n ${BENCH_MODES[$name]} ]]; then
		IFS=, read -ra modes <<<"${BENCH_MODES[$name]}"
	fi
	[[ -z ${BENCH_SCEN[$name]:-} ]] || read -ra scens <<<"${BENCH_SCEN[$name]}"
	rounds=${BENCH_ROUNDS[$name]:-1}
	((QUICK)) && rounds=1
	for sc in "${scens[@]}"; do
		label=${sc%%=*} links=${sc#*=}
		[[ -z $label ]] || log "   -- $label (links ${links/\// / })"
		for mode in "${modes[@]}"; do
			rm -rf "${OUT:?}/$name/${label:+$label/}$mode"
			specs+=("${label:+$label:}$mode=$OUT/$name/${label:+$label/}$mode")
		done
		for ((k = 1; k <= rounds; k++)); do
			((rounds == 1)) || log "   round $k of $rounds"
			order=("${modes[@]}")
			# every second round backwards (ABBA), so that a steady
			# drift of the machine's speed favours no mode
			((k % 2)) || reverse_into order "${modes[@]}"
			for mode in "${order[@]}"; do
				dir=$OUT/$name/${label:+$label/}$mode
				((rounds == 1)) || dir+=/round$k
				mkdir -p "$dir"
				LAB_TOPO_KIND=${BENCH_TOPO[$name]:-twolink}
				LAB_TOPO_ARGS=${BENCH_TOPO_ARGS[$name]:-}
				if ! lab_up "$dir" "${links%/*}" "${links#*/}"; then
					echo "lab setup failed" >"$dir/error.txt"
				elif ! lab_mode "$mode"; then
					echo "could not set up mode $mode" >"$dir/error.txt"
				elif ! "bench_$name" "$dir"; then
					echo "bench_$name failed" >"$dir/error.txt"
				fi
				lab_down
				[[ -s $dir/error.txt ]] && log "   $mode: $(<"$dir/error.txt")"
				log "   $mode: $("$PY" "$REPO/tools/bench/analyze.py" line "$dir" 2>&1)"
			done
		done
	done
	[[ $SETTINGS == '{}' ]] || extra+=("--settings=$SETTINGS")
	# (commit and code as JSON strings: analyze.py parses a value as JSON if
	# it can, and a hash may read as a number)
	line=$("$PY" "$REPO/tools/bench/analyze.py" bench "$name" "${BENCH_DESC[$name]}" \
		--quick="$( ((QUICK)) && echo true || echo false)" --date="$DATE" \
		--commit="\"$COMMIT\"" --code="\"$CODE\"" --kernel="\"$(uname -r)\"" "${extra[@]}" \
		--fail_end="$LAB_FAIL_END" "${specs[@]}") || return 1
	printf '%s\n' "$line" >>"$OUT/results.jsonl"
	printf '%s\n' "$line"
}

# (one line: bash reads scripts lazily, and this one may be edited meanwhile)
if ((GUEST)) || [[ ${MPIP_IN_VM:-0} == 1 ]]; then guest_main; else host_main; fi; exit
