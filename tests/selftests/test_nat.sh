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
# - With mpip on both hosts, TCP stays intact, every datagram of a new
#   flow arrives, and nothing leaks.  What mpip does not do yet (issue 21)
#   is printed, not asserted: the INVALID drops (B's confirmations and
#   TCP control packets), which paths came up.
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

t_mpip() {
	local inv0
	inv0=$(nat_counter "${P}n1" ct_invalid)
	mpipctl_in "$B" enable
	tcp_send_file "$A" "$B" 198.18.3.2 5002 "$T/f" "$T/g.mpip"
	sha256_equal "$T/f" "$T/g.mpip" || fail "TCP data differs"
	udp_all 6002
	nat_report
	echo "n1 INVALID drops during the transfers: $(($(nat_counter "${P}n1" ct_invalid) - inv0))"
	mpip_paths_show "$A" || true
	mpip_paths_show "$B" || true
	mpipctl_in "$A" -j stats | jq -c '{tx_query, rx_confirm, probe_giveup, peer_lost, tx_cm, tx_bare, rr_verified}'
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 5
ktap_run nat_lab_up t_setup
ktap_run plain_ip_crosses_nats t_plain
ktap_run udp_new_flow_to_legacy_host_all_arrive t_udp_legacy
ktap_run mpip_hosts_tcp_udp_intact_no_leak t_mpip
ktap_run dmesg_clean t_dmesg
ktap_finish
