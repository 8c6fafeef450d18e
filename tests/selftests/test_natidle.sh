#!/usr/bin/env bash
# test_natidle.sh - paths through NATs whose UDP mappings expire after
# 10 s (topo.sh nat --short-timeouts, issue 21): after 60 s without
# traffic, a new flow uses both of A's links again, inside UDP, through
# mappings the NATs made anew, with every datagram delivered and no
# packet INVALID.  How long that took is printed (a figure for make
# bench, not asserted here).
# TIMEOUT: 300
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_router_globals ni

# A's four paths and B's four learned ones, all up inside UDP
all_up() {
	mpip_paths "$A" | jq -e 'length == 4 and all(.[]; .nat and .verified and
		.encap == "udp" and .state == "up")' >/dev/null &&
		mpip_paths "$B" | jq -e '[.[] | select(.learned and .verified and
			.state == "up")] | length == 4' >/dev/null
}

paths_brief() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths "$ns" | jq -c '[.[] | {saddr, daddr, dport, state, verified, encap, learned}]'
	done
}

# packets A sent on its paths over interface DEV
pkts_on() {
	mpip_paths "$A" | jq --arg d "$1" '[.[] | select(.dev == $d) | .tx_pkts] | add'
}

t_setup() {
	local ns
	"$TOPO" nat --prefix "$P" --short-timeouts --link1 40mbit,2ms --link2 20mbit,2ms
	for ns in "${P}n1" "${P}n2" "$R"; do
		mpipctl_in "$ns" disable
	done
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 198.18.3.2 >/dev/null ||
		fail "A cannot reach B through the NATs"
	UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6000 600 7000 2000 ||
		fail "datagrams lost: $(cat "$(tmpdir)/udp-res.6000")"
	wait_for 20 all_up || fail "paths not all up inside UDP: $(paths_brief)"
	paths_brief
}

# 60 s without a packet of A's or B's flows, then a flow of 3000
# datagrams over 6 s: all delivered, both links carry it, nothing INVALID
t_idle() {
	local e1 e2 n1 n2 t0 t1=0 t2=0 now
	sleep 60
	paths_brief
	n1=$(nat_counter "${P}n1" ct_invalid)
	n2=$(nat_counter "${P}n2" ct_invalid)
	e1=$(pkts_on eth1)
	e2=$(pkts_on eth2)
	t0=$(date +%s%N)
	UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6001 3000 7001 2000 \
		>"$T/udp.out" 2>&1 &
	local upid=$!
	while kill -0 "$upid" 2>/dev/null; do
		now=$(date +%s%N)
		((t1 || $(pkts_on eth1) == e1)) || t1=$(((now - t0) / 1000000))
		((t2 || $(pkts_on eth2) == e2)) || t2=$(((now - t0) / 1000000))
		sleep 0.2
	done
	wait "$upid" || fail "datagrams lost after the idle time: $(cat "$T/udp.out")"
	cat "$T/udp.out"
	paths_brief
	echo "after 60 s idle: packets on A's eth1 paths after ${t1} ms, eth2 after ${t2} ms" \
		"(from the start of the UDP tools; one link $((t1 > t2 ? t1 - t2 : t2 - t1)) ms" \
		"after the other, polled every ~0.5 s)"
	mpipctl_in "$B" -j stats | jq -c '{path_learned, rx_encap, rx_encap_bad, rx_spoofed}'
	((t1 > 0 && t2 > 0)) || fail "the flow did not use both links again"
	(($(nat_counter "${P}n1" ct_invalid) == n1 && $(nat_counter "${P}n2" ct_invalid) == n2)) ||
		fail "a NAT found packets INVALID"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 3
ktap_run nat_short_timeouts_lab_up t_setup
ktap_run idle_60s_both_links_again t_idle
ktap_run dmesg_clean t_dmesg
ktap_finish
