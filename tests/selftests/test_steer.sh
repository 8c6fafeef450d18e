#!/usr/bin/env bash
# test_steer.sh - steering by the local queues (queue_steer): A's two links
# are shaped at A's own egress, 40 and 20 Mbit/s, so their queues are in
# A's qdiscs, where mpip can read them:
#  - the default is on;
#  - a TCP transfer A -> B arrives intact over both links, and A sent some
#    of its packets on another path than the weights chose (tx_steered);
#  - the same with tbf instead of netem as the shaper: any root qdisc that
#    keeps one byte count can be read, not just netem;
#  - with queue_steer 0 the weights alone choose: tx_steered stays put,
#    and the transfer still arrives intact over both links.
# SKIP-OK: tbf_tcp_intact_and_steered: only if neither tbf qdisc ever held a packet back (overlimits 0): the transfer never met the links' rates, so no queue formed to steer by
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink st
MIN_PCT=15
SIZE_MIB=8

shape_netem() {
	mpip_shape "$A" eth1 40mbit 1ms 1000
	mpip_shape "$A" eth2 20mbit 1ms 1000
}

# (rates divided as the test data is, MPIP_TEST_DATA_DIV: a kernel whose
# data path is that much slower still meets a shaper that limits it)
shape_tbf() {
	local d=${MPIP_TEST_DATA_DIV:-1}
	tc -n "$A" qdisc replace dev eth1 root tbf rate $((40000 / d))kbit burst 16k latency 200ms
	tc -n "$A" qdisc replace dev eth2 root tbf rate $((20000 / d))kbit burst 16k latency 200ms
}

# tbf_held: packets A's two tbf qdiscs held back for their rate
# (overlimits), or nothing if they cannot be read
tbf_held() {
	local dev n sum=0
	for dev in eth1 eth2; do
		n=$(qdisc_stat "$A" "$dev" overlimits) || return 1
		sum=$((sum + n))
	done
	echo "$sum"
}

# send PORT: SIZE_MIB of random data A -> B over TCP, intact, over both
# links
send() {
	random_file "$T/data" "$SIZE_MIB"
	mpip_spread "$A" "$B" "$MIN_PCT" tcp_send_file "$A" "$B" 10.1.1.2 "$1" \
		"$T/data" "$T/data.out" || fail "a link carried too little"
	sha256_equal "$T/data" "$T/data.out" || fail "TCP data differs"
}

t_default() {
	mpipctl_in "$A" -j get queue_steer | tee "$T/cfg"
	jq -e '.queue_steer == 1' "$T/cfg" >/dev/null || fail "queue_steer is not on by default"
}

t_warm_up() {
	shape_netem
	mpip_twolink_warm_up
}

t_netem() {
	mpipctl_in "$A" -j stats >"$T/a0"
	send 5401
	mpip_stats_since "$A" "$T/a0" '.tx_steered > 0 and .tx_rewrite > 0' ||
		fail "A steered no packet to another path"
}

t_tbf() {
	local held
	shape_tbf
	mpipctl_in "$A" -j stats >"$T/a0"
	send 5402
	held=$(tbf_held) || fail "cannot read the tbf qdiscs' counters"
	echo "the tbf qdiscs held back packets $held times"
	# no queue, nothing to steer by: the CPU limited the transfer
	((held > 0)) || skip "no tbf ever held a packet back (the debug kernel's data path is slower than the links)"
	mpip_stats_since "$A" "$T/a0" '.tx_steered > 0' ||
		fail "A steered no packet with tbf as the shaper"
}

t_off() {
	shape_netem
	mpipctl_in "$A" set queue_steer 0
	mpipctl_in "$A" -j stats >"$T/a0"
	send 5403
	mpip_stats_since "$A" "$T/a0" '.tx_steered == 0 and .tx_rewrite > 0' ||
		fail "A steered packets with queue_steer 0"
	mpipctl_in "$A" set queue_steer 1
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 6
ktap_run queue_steer_default_on t_default
ktap_run warm_up_paths_up t_warm_up
ktap_run netem_tcp_intact_and_steered t_netem
ktap_run tbf_tcp_intact_and_steered t_tbf
ktap_run off_weights_alone t_off
ktap_run dmesg_clean t_dmesg
ktap_finish
