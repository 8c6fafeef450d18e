#!/usr/bin/env bash
# test_router.sh - the multipath datapath over four paths: two MPIP hosts
# with two interfaces each behind a router, no policy routing (each host
# has one default route per interface, as a laptop with two uplinks has;
# without mpip everything would leave through eth1).  All 2x2 address
# pairs are paths up; a 4 MiB TCP file each way and 1000 UDP datagrams
# each way arrive intact, each of the sender's interfaces sends and each of
# the receiver's interfaces receives at least 20 % of the bytes, and all
# four paths carry data.  The router does not run mpip.  Datagrams the
# router fragments arrive intact too.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_router_globals rt
# shellcheck disable=SC2034 # mpip_lib.sh's tcp_spread and udp_spread read it
MIN_PCT=20
SIZE_MIB=4
PATHS_A=(10.2.1.1:10.3.1.2 10.2.1.1:10.3.2.2 10.2.2.1:10.3.1.2 10.2.2.1:10.3.2.2)
PATHS_B=(10.3.1.2:10.2.1.1 10.3.1.2:10.2.2.1 10.3.2.2:10.2.1.1 10.3.2.2:10.2.2.1)

t_setup() {
	"$TOPO" router --no-policy --prefix "$P"
	mpipctl_in "$R" disable
	random_file "$T/file" "$SIZE_MIB"
	head -c 100000 /dev/urandom >"$T/small"
	tcp_send_file "$A" "$B" 10.3.1.2 4999 "$T/small" "$T/small.out"
	sha256_equal "$T/small" "$T/small.out" || fail "warm-up TCP data differs"
	mpip_wait_paths_up "$A" "${PATHS_A[@]}"
	mpip_wait_paths_up "$B" "${PATHS_B[@]}"
	mpip_paths_show "$A"
	mpip_paths_show "$B"
}

# four_paths NS PEER_NS: four distinct paths towards the peer, all up and
# all used
four_paths() {
	local id paths
	id=$(mpip_peer_node "$1" "$2")
	paths=$(mpip_paths "$1")
	jq -r --arg ns "$1" '.[] | "\($ns): \(.saddr) -> \(.daddr) \(.dev) \(.state) w=\(.weight) tx=\(.tx_pkts) rx=\(.rx_pkts)"' <<<"$paths"
	jq -e --arg id "$id" '
		[.[] | select(.node_id == $id)] |
		length == 4 and all(.[]; .state == "up" and .tx_pkts > 0) and
		([.[] | [.saddr, .daddr]] | unique | length) == 4' <<<"$paths" >/dev/null ||
		fail "$1: expected 4 paths up with tx_pkts > 0"
}

# the router forwarded rewritten packets without taking part
t_router() {
	mpipctl_in "$R" -j status | jq -e '.enabled == false and .nodes == 0' >/dev/null ||
		fail "the router knows MPIP nodes"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

# The router's links to B get an MTU of 1280, and A sends without the
# don't-fragment bit: the datagrams that fit A's MTU with their trailers
# but not 1280 bytes reach B in fragments, the trailer in the last one.
# B's input hook reassembles them (rx_reassembled), strips the trailer and
# restores the addresses: every datagram arrives intact, each with a CM.
t_fragments() {
	local dev data=ok stats=ok
	for dev in b1 b2; do ip -n "$R" link set "$dev" mtu 1280; done
	mpipctl_in "$B" -j stats >"$T/frag-b0"
	UDP_NO_DF=1 udp_exchange "$A" "$B" 10.3.1.2 6113 300 7113 500 || data=bad
	mpip_stats_since "$B" "$T/frag-b0" '.rx_reassembled >= 20 and
		.rx_cm >= 300 and .drop_session == 0 and .drop_nomem == 0' ||
		stats=bad
	for dev in b1 b2; do ip -n "$R" link set "$dev" mtu 1500; done
	[[ $data == ok ]] || echo "fragmented datagrams did not all arrive intact" >&2
	[[ $stats == ok ]] || echo "B did not reassemble and strip fragmented datagrams" >&2
	[[ $data == ok && $stats == ok ]] || fail "fragmented datagrams (above)"
}

ktap_header
ktap_plan 10
ktap_run router_no_policy_warm_up t_setup
ktap_run tcp_4M_a_to_b_both_links tcp_spread "$A" "$B" 10.3.1.2 5011
ktap_run tcp_4M_b_to_a_both_links tcp_spread "$B" "$A" 10.2.1.1 5012
ktap_run udp_1000_a_to_b_both_links udp_spread "$A" "$B" 10.3.1.2 6111 7111
ktap_run udp_1000_b_to_a_both_links udp_spread "$B" "$A" 10.2.1.1 6112 7112
ktap_run a_uses_4_paths four_paths "$A" "$B"
ktap_run b_uses_4_paths four_paths "$B" "$A"
ktap_run router_not_involved t_router
ktap_run udp_300_fragmented_by_router t_fragments
ktap_run dmesg_clean t_dmesg
ktap_finish
