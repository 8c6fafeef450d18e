#!/usr/bin/env bash
# test_bridge.sh - a host that bridges two containers-style namespaces,
# with br_netfilter loaded and bridge-nf-call-iptables on (as Docker and
# Kubernetes set it), and mpip enabled on it.  br_netfilter runs the IPv4
# hooks for bridged frames; mpip must leave them alone: no oops, no MSS
# clamp, no query trailer, nothing stripped from the trailers of two mpip
# containers talking through the bridge.  The host's own traffic over
# its bridge still uses mpip with a container that runs it.
#
#   ${P}c1 eth0 10.9.0.1/24 --- v1 [br0 10.9.0.254/24] v2 --- eth0 10.9.0.2/24 ${P}c2
#                                   ${P}h
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_require
P=$(unique_prefix br)
H=${P}h
C1=${P}c1
C2=${P}c2
T=$(tmpdir)
MARK=$(dmesg_mark)
cleanup_push ip netns del "$C1"
cleanup_push ip netns del "$C2"
cleanup_push ip netns del "$H"

# stat_is NS NAME VALUE: counter NAME of NS is VALUE
stat_is() {
	local v
	v=$(mpip_stat "$1" "$2") || fail "$1: no counter $2"
	[[ $v == "$3" ]] || fail "$1: $2 is $v, expected $3"
}

t_setup() {
	local c i=0
	modprobe br_netfilter
	ip netns add "$H"
	ip -n "$H" link set lo up
	ip -n "$H" link add br0 type bridge
	for c in "$C1" "$C2"; do
		i=$((i + 1))
		ip netns add "$c"
		ip -n "$c" link set lo up
		ip -n "$H" link add "v$i" type veth peer name eth0 netns "$c"
		ip -n "$H" link set "v$i" master br0 up
		ip -n "$c" addr add "10.9.0.$i/24" dev eth0
		ip -n "$c" link set eth0 up
		# a container: mpip is not ours to run there (yet)
		mpipctl_in "$c" disable
	done
	ip -n "$H" addr add 10.9.0.254/24 dev br0
	ip -n "$H" link set br0 up
	in_ns "$H" sysctl -qw net.bridge.bridge-nf-call-iptables=1
	[[ $(in_ns "$H" sysctl -n net.bridge.bridge-nf-call-iptables) == 1 ]] ||
		fail "bridge-nf-call-iptables is not on"
	mpipctl_in "$H" -j status | jq -e '.enabled == true' >/dev/null ||
		fail "mpip is not enabled on the bridge host"
	# a rule so that the IPv4 hooks surely run for bridged frames
	in_ns "$H" nft -f - <<-EOF
		table ip brt {
			chain brfwd {
				type filter hook forward priority 0; policy accept;
				counter
			}
		}
	EOF
	wait_for 10 in_ns "$C1" ping -c1 -W1 10.9.0.2 || fail "no connectivity c1 -> c2"
	random_file "$T/f2" 2
}

# The first TCP connection between two containers crashed the host
# (NULL dereference in br_nf_dev_queue_xmit); several, both ways.
t_tcp_bridged() {
	tcp_send_file "$C1" "$C2" 10.9.0.2 5101 "$T/f2" "$T/g1"
	sha256_equal "$T/f2" "$T/g1" || fail "c1 -> c2: data differs"
	tcp_send_file "$C2" "$C1" 10.9.0.1 5102 "$T/f2" "$T/g2"
	sha256_equal "$T/f2" "$T/g2" || fail "c2 -> c1: data differs"
	tcp_send_file "$C1" "$C2" 10.9.0.2 5103 "$T/f2" "$T/g3"
	sha256_equal "$T/f2" "$T/g3" || fail "c1 -> c2 (again): data differs"
}

t_udp_bridged() {
	udp_exchange "$C1" "$C2" 10.9.0.2 6101 300 7101
	udp_exchange "$C2" "$C1" 10.9.0.1 6102 300 7102
}

# The SYN a container sends to another keeps its MSS (1460 on a 1500 MTU
# link): the bridge host does not clamp it.
t_syn_mss_untouched() {
	local cap=$T/syn.pcap pid mss
	ip netns exec "$C2" tcpdump -i eth0 -nn -U -c 1 -w "$cap" \
		'tcp[tcpflags] & tcp-syn != 0 and tcp[tcpflags] & tcp-ack == 0 and dst port 5104' \
		>/dev/null 2>&1 &
	pid=$!
	sleep 1
	tcp_send_file "$C1" "$C2" 10.9.0.2 5104 "$T/f2" "$T/g4"
	wait_for 10 test -s "$cap" || { kill "$pid" 2>/dev/null; fail "no SYN captured"; }
	wait "$pid" || true
	mss=$(tcpdump -nn -v -r "$cap" 2>/dev/null | grep -o 'mss [0-9]*' | head -n1)
	echo "SYN seen by c2: $mss"
	[[ $mss == "mss 1460" ]] || fail "the SYN's MSS was changed: $mss"
}

# Nothing of the containers' traffic reached mpip's state on the host.
t_host_untouched() {
	mpipctl_in "$H" -j stats
	stat_is "$H" tx_query 0
	stat_is "$H" tx_cm 0
	stat_is "$H" mss_clamped 0
	stat_is "$H" rx_cm 0
	mpipctl_in "$H" -j show avail | jq -e 'length == 0' >/dev/null ||
		fail "the bridge host learned availability from bridged traffic"
	# and the frames did go through the IPv4 forward hook
	chain_counted "$H" ip brt brfwd ||
		fail "bridged frames never ran the IPv4 hooks: the test proves nothing"
}

# Two mpip containers: their trailers cross the bridge intact.
t_mpip_containers() {
	local rx1
	mpipctl_in "$C1" enable
	mpipctl_in "$C2" enable
	tcp_send_file "$C1" "$C2" 10.9.0.2 5105 "$T/f2" "$T/g5"
	sha256_equal "$T/f2" "$T/g5" || fail "c1 -> c2 with mpip: data differs"
	udp_exchange "$C2" "$C1" 10.9.0.1 6105 200 7105
	tcp_send_file "$C2" "$C1" 10.9.0.1 5106 "$T/f2" "$T/g6"
	sha256_equal "$T/f2" "$T/g6" || fail "c2 -> c1 with mpip: data differs"
	rx1=$(mpip_stat "$C1" rx_cm)
	echo "c1 rx_cm $rx1, c2 rx_cm $(mpip_stat "$C2" rx_cm)"
	((rx1 > 0)) || fail "c1 received no trailer from c2: were they peers?"
	stat_is "$H" rx_cm 0
	stat_is "$H" tx_cm 0
}

# The host's own traffic over its bridge: mpip with container c1.
t_host_own_traffic() {
	tcp_send_file "$H" "$C1" 10.9.0.1 5107 "$T/f2" "$T/g7"
	sha256_equal "$T/f2" "$T/g7" || fail "host -> c1: data differs"
	tcp_send_file "$C1" "$H" 10.9.0.254 5108 "$T/f2" "$T/g8"
	sha256_equal "$T/f2" "$T/g8" || fail "c1 -> host: data differs"
	echo "host tx_cm $(mpip_stat "$H" tx_cm), rx_cm $(mpip_stat "$H" rx_cm)"
	(($(mpip_stat "$H" tx_cm) > 0)) || fail "the host sent no trailer to its peer c1"
	(($(mpip_stat "$H" rx_cm) > 0)) || fail "the host got no trailer from its peer c1"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 8
	ktap_run setup t_setup
	ktap_run tcp_between_containers_bridged t_tcp_bridged
	ktap_run udp_between_containers_bridged t_udp_bridged
	ktap_run syn_mss_untouched t_syn_mss_untouched
	ktap_run bridge_host_state_untouched t_host_untouched
	ktap_run mpip_containers_through_bridge t_mpip_containers
	ktap_run host_own_traffic_over_bridge t_host_own_traffic
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
