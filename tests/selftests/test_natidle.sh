#!/usr/bin/env bash
# test_natidle.sh - paths through NATs whose UDP mappings expire after
# 10 s (topo.sh nat --short-timeouts, issue 21): after 60 s without
# traffic, a new flow uses both of A's links again, inside UDP, through
# mappings the NATs made anew, with every datagram delivered and no
# packet INVALID.  How long that took is printed (a figure for make
# bench, not asserted here): from the flow's first packet on A's links
# (captured on both, bare or inside UDP) to the first inside UDP on each.
# TIMEOUT: 540
# (about 94 s alone in one guest: about five times that, as a
# loaded run may take)
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
# first_ts NAME [FILTER]: the time of the first packet of capture NAME
# that matches FILTER, in seconds since the epoch, or nothing
first_ts() {
	tcpdump -tt -nn -r "$T/$1.pcap" ${2:+"$2"} 2>/dev/null | awk 'NR == 1 { print $1 }'
}

# ms_after T F: milliseconds from time F to time T (seconds)
ms_after() { awk -v t="$1" -v f="$2" 'BEGIN { printf "%d", (t - f) * 1000 }'; }

# idle_why FLOW INSIDE: where the datagrams went: per link, how many A
# sent bare and inside UDP, from when to when; the paths, every counter
# of A and B that is not 0, B's UDP and IP drops and the guest's backlog
# drops.  (The debug kernel's losses here were the last datagrams, to a
# closed port: UdpNoPorts.)
idle_why() {
	local c col d=0
	for c in idle1 idle2; do
		capture_stop "$c"
		echo "$c: bare $(tcpdump -nn -r "$T/$c.pcap" "$1" 2>/dev/null | wc -l)," \
			"inside $(tcpdump -nn -r "$T/$c.pcap" "$2" 2>/dev/null | wc -l)," \
			"from $(first_ts "$c") to $(tcpdump -tt -nn -r "$T/$c.pcap" 2>/dev/null |
				awk 'END { print $1 }')"
	done
	paths_brief
	loss_counters "$B" "$A" "$B"
	# backlog drops, all CPUs, the whole guest (second column, in hex)
	while read -r _ col _; do
		d=$((d + 16#$col))
	done </proc/net/softnet_stat
	echo "softnet backlog drops: $d"
}

t_idle() {
	local n1 n2 f c1 c2 flow inside
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	sleep 60
	# what A sends of the flow's datagrams, bare, and of packets inside
	# UDP (a control datagram has no UDP payload: its CM is past the UDP
	# length)
	flow='udp and src net 192.168.0.0/16 and src port 7001'
	inside='udp and src net 192.168.0.0/16 and src port 19792 and udp[4:2] > 8'
	capture_start "$A" eth1 idle1 "($flow) or ($inside)"
	capture_start "$A" eth2 idle2 "($flow) or ($inside)"
	paths_brief
	n1=$(nat_counter "${P}n1" ct_invalid)
	n2=$(nat_counter "${P}n2" ct_invalid)
	UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6001 3000 7001 2000 || {
		idle_why "$flow" "$inside"
		fail "datagrams lost after the idle time: $(cat "$(tmpdir)/udp-res.6001")"
	}
	capture_stop idle1
	capture_stop idle2
	paths_brief
	mpipctl_in "$B" -j stats | jq -c '{path_learned, rx_encap, rx_encap_bad, rx_spoofed}'
	f=$(printf '%s\n' "$(first_ts idle1)" "$(first_ts idle2)" | grep . | sort -n | head -n 1)
	c1=$(first_ts idle1 "$inside")
	c2=$(first_ts idle2 "$inside")
	[[ -n $f ]] || fail "no packet of the flow captured on A's links"
	[[ -n $c1 && -n $c2 ]] || fail "the flow did not go inside UDP on both links again"
	echo "after 60 s idle: from the flow's first packet, inside UDP on eth1 after" \
		"$(ms_after "$c1" "$f") ms, on eth2 after $(ms_after "$c2" "$f") ms"
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
