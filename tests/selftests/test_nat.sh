#!/usr/bin/env bash
# test_nat.sh - mpip behind two strict NATs (issue 21, the lab first).
# Host A sits behind two masquerading routers (topo.sh nat: conntrack
# verifies checksums and TCP windows, INVALID packets are dropped and
# counted), host B is public, and the "internet" router between them
# drops and counts any packet with a private source address.
# - Without mpip on either host, TCP and UDP cross the NATs intact, no
#   INVALID packet, no leak: the lab itself is sound.
# - With mpip on A only, every datagram of a new UDP flow arrives, the
#   ones carrying queries included (their trailers keep the UDP checksum
#   valid over the whole IP payload, as conntrack checks it), and the NAT
#   finds none of A's datagrams INVALID.  (Before: the first 5 of 300
#   lost, 5 INVALID.)
# - With mpip on both hosts, the handshake of a UDP flow crosses the NAT,
#   every datagram arrives, no packet of it is INVALID at a NAT, each of
#   A's paths is found translated and carries no data; TCP after it stays
#   intact; nothing leaks.  What mpip does not do yet (issue 21) is
#   printed, not asserted: the INVALID drops of TCP control packets.
# - The same through a double NAT with random source ports.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

# P, A, B, R (the internet router), T, MARK; the NATs are ${P}n1, ${P}n2
mpip_setup_router_globals nat

# nat_counter NS NAME: packets counted by counter NAME of table inet natlab
nat_counter() {
	ip netns exec "$1" nft -j list counter inet natlab "$2" |
		jq -er '.nftables[] | select(.counter) | .counter.packets'
}

# nat_report: the NATs' INVALID drops and the internet's leak count
nat_report() {
	echo "invalid: n1 $(nat_counter "${P}n1" ct_invalid), n2 $(nat_counter "${P}n2" ct_invalid); leak: $(nat_counter "$R" leak)"
}

t_setup() {
	local ns
	"$TOPO" nat --prefix "$P" --link1 40mbit,2ms --link2 20mbit,2ms
	# the routers forward plain IP; the hosts start without mpip
	for ns in "${P}n1" "${P}n2" "$R" "$A" "$B"; do
		mpipctl_in "$ns" disable
	done
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 198.18.3.2 >/dev/null ||
		fail "A cannot reach B through the NAT"
	random_file "$T/f" 2
}

# udp_all PORT: 300 checked datagrams from A to B's eth1 address (through
# n1), a new flow to PORT; all of them arrive
udp_all() {
	UDP_RECV_TIMEOUT=15 udp_exchange "$A" "$B" 198.18.3.2 "$1" 300 $(($1 + 1000)) 2000 ||
		fail "datagrams of a new flow to port $1 lost: $(cat "$(tmpdir)/udp-res.$1")"
}

t_plain() {
	tcp_send_file "$A" "$B" 198.18.3.2 5000 "$T/f" "$T/g.plain"
	sha256_equal "$T/f" "$T/g.plain" || fail "TCP data differs"
	udp_all 6000
	nat_report
	(($(nat_counter "${P}n1" ct_invalid) == 0)) || fail "n1 dropped INVALID packets without mpip"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

# A runs mpip, B does not: A's queries ride on the flow's datagrams
t_udp_legacy() {
	local inv0
	mpipctl_in "$A" enable
	inv0=$(nat_counter "${P}n1" ct_invalid)
	udp_all 6001
	nat_report
	echo "A: $(mpipctl_in "$A" -j stats | jq -c '{tx_query, probe_giveup}')"
	(($(mpip_stat "$A" tx_query) > 0)) || fail "A sent no queries"
	(($(nat_counter "${P}n1" ct_invalid) == inv0)) ||
		fail "n1 found $(($(nat_counter "${P}n1" ct_invalid) - inv0)) of A's datagrams INVALID"
}

# A has paths to B, and each was found translated by one of the NATs
all_paths_translated() {
	mpip_paths "$A" | jq -e 'length > 0 and all(.[]; .nat and (.verified | not) and
		(.seen | startswith("198.18.1.1:") or startswith("198.18.2.1:")))' >/dev/null
}

# A's paths: ends, state, return routability
paths_brief() {
	mpip_paths "$A" | jq -c '[.[] | {saddr, daddr, state, verified, nat, seen}]'
	mpipctl_in "$A" -j stats | jq -c '{rr_verified, rr_nat, rr_held, tx_heartbeat, rx_heartbeat}'
}

# the growth of counter NAME of NS since its value V0
grown() { echo $(($(mpip_stat "$1" "$2") - $3)); }

# With mpip on both hosts.  UDP first: its handshake crosses the NAT (the
# control datagrams' checksums hold over the whole IP payload, as
# conntrack checks them), the flow carries CMs, every datagram arrives,
# no NAT finds a packet INVALID; the peer's answers to A's probes show
# that every path of A's is translated (counted, and an event each for
# mpipctl monitor), and none carries data.  Then TCP after it, byte-exact.  Still
# printed, not asserted (issue 21): the INVALID drops of TCP control
# packets, which paths came up.
t_mpip() {
	local n1 n2 c0 s0 a1 a2
	n1=$(nat_counter "${P}n1" ct_invalid)
	n2=$(nat_counter "${P}n2" ct_invalid)
	mon_start "$A" "$T/ev" -j
	mon_start "$A" "$T/ev.txt"
	mpipctl_in "$B" enable
	c0=$(mpip_stat "$A" rx_confirm)
	s0=$(mpip_stat "$B" rx_spoofed)
	a1=$(tx_bytes "$A" eth1)
	a2=$(tx_bytes "$A" eth2)
	UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6002 2000 7002 2000 ||
		fail "datagrams of a UDP flow between mpip hosts lost: $(cat "$(tmpdir)/udp-res.6002")"
	echo "A sent during the UDP flow: eth1 $(($(tx_bytes "$A" eth1) - a1)) B, eth2 $(($(tx_bytes "$A" eth2) - a2)) B"
	nat_report
	mpipctl_in "$A" -j stats | jq -c '{tx_query, rx_confirm, tx_cm, rr_verified, rr_nat, probe_giveup}'
	mpipctl_in "$B" -j stats | jq -c '{rx_query, tx_confirm, rx_cm, rx_spoofed, rx_auth_fail, rx_replay}'
	mpip_paths_show "$A" || true
	mpip_paths_show "$B" || true
	(($(grown "$A" rx_confirm "$c0") > 0)) || fail "no confirmation crossed the NAT"
	# every path of A's goes through a NAT, which the peer's answers to
	# A's probes show: none carries data
	wait_for 20 all_paths_translated ||
		fail "A's paths through the NATs are not all found translated: $(paths_brief)"
	paths_brief
	(($(mpip_stat "$A" rr_nat) == 4)) || fail "rr_nat is $(mpip_stat "$A" rr_nat), not A's 4 paths"
	# and a path_nat event said so for each, once
	wait_for 10 mon_has "$T/ev" '.event == "path_nat"' || fail "no path_nat event"
	grep path_nat "$T/ev.txt" || true
	mpip_paths "$A" | jq -e --slurpfile ev "$T/ev" '
		[.[] | [.saddr, .daddr, .seen]] | sort ==
		([$ev[] | select(.event == "path_nat") | [.saddr, .daddr, .seen]] | sort)' >/dev/null ||
		fail "path_nat events differ from A's paths: $(cat "$T/ev")"
	grep -qE '^path_nat: 192\.168\.2\.2 -> 198\.18\.4\.2 dev eth2 state [a-z]+ \(node 0x[0-9a-f]+, path [0-9]+\) seen as 198\.18\.2\.1:[0-9]+$' "$T/ev.txt" ||
		fail "no path_nat line for eth2's path to 198.18.4.2 in the text output"
	mon_stop "$T/ev"
	mon_stop "$T/ev.txt"
	(($(grown "$B" rx_spoofed "$s0") == 0)) || fail "B dropped $(grown "$B" rx_spoofed "$s0") of A's packets as spoofed"
	(($(nat_counter "${P}n1" ct_invalid) == n1 && $(nat_counter "${P}n2" ct_invalid) == n2)) ||
		fail "a NAT found packets of the UDP flow INVALID"

	tcp_send_file "$A" "$B" 198.18.3.2 5002 "$T/f" "$T/g.mpip"
	sha256_equal "$T/f" "$T/g.mpip" || fail "TCP data differs"
	nat_report
	echo "INVALID drops during the TCP transfer: n1 $(($(nat_counter "${P}n1" ct_invalid) - n1)), n2 $(($(nat_counter "${P}n2" ct_invalid) - n2))"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

# A second lab: link 2 crosses two NATs (a CGNAT stage), and every NAT
# picks random source ports.  Between mpip hosts the handshake crosses,
# each path of A's is found translated (seen from the outer NAT's address,
# with its port), every datagram of a UDP flow arrives, no NAT finds one
# INVALID, nothing leaks.
t_double_random() {
	local ns c0
	"$TOPO" nat --prefix "$P" --double --random --link1 40mbit,2ms --link2 20mbit,2ms
	for ns in "${P}n1" "${P}n2" "${P}c" "$R"; do
		mpipctl_in "$ns" disable
	done
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 198.18.3.2 >/dev/null ||
		fail "A cannot reach B through the NATs"
	c0=$(mpip_stat "$A" rx_confirm)
	udp_all 6003
	echo "invalid: n1 $(nat_counter "${P}n1" ct_invalid), n2 $(nat_counter "${P}n2" ct_invalid), c $(nat_counter "${P}c" ct_invalid); leak: $(nat_counter "$R" leak)"
	(($(grown "$A" rx_confirm "$c0") > 0)) || fail "no confirmation crossed the NATs"
	wait_for 20 all_paths_translated ||
		fail "A's paths through the NATs are not all found translated: $(paths_brief)"
	paths_brief
	for ns in "${P}n1" "${P}n2" "${P}c"; do
		(($(nat_counter "$ns" ct_invalid) == 0)) || fail "$ns found packets INVALID"
	done
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 6
ktap_run nat_lab_up t_setup
ktap_run plain_ip_crosses_nats t_plain
ktap_run udp_new_flow_to_legacy_host_all_arrive t_udp_legacy
ktap_run mpip_hosts_handshake_crosses_nat_udp_tcp_intact t_mpip
ktap_run double_nat_random_ports_handshake_and_detection t_double_random
ktap_run dmesg_clean t_dmesg
ktap_finish
