#!/usr/bin/env bash
# test_pmtu.sh - a path whose MTU is smaller further on.  Two MPIP hosts
# behind a router (no policy routing, four paths); the router's link to
# B's eth2 has MTU 1280, so full-size TCP segments on the two paths to
# B's 10.3.2.2 need fragmentation and the router answers them with ICMP
# "fragmentation needed", quoting the path's addresses.  mpip records
# that MTU on the path and its route (counter rx_icmp_pmtu) and
# translates the error back to the flow, less the 40 bytes of its
# trailer, so that TCP lowers its MSS and its segments fit the path with
# their trailer (the flow's own route, to 10.3.1.2, gets 1240): TCP A ->
# B's link-1 address then arrives intact, no path ever goes down (a black
# hole would take them down after path_timeout_ms and again after every
# probe), the paths to 10.3.2.2 still carry what fits, and the segments
# on the flow's own path, 1240 bytes with a 40-byte trailer, go whole
# past the route's 1240 (tx_path_mtu).  Forged errors that quote a path's
# addresses but no session's ports, or a live session's ports with a
# sequence number its socket did not send, or one it sent and had
# acknowledged, change nothing.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_router_globals pm
PATHS_A=(10.2.1.1:10.3.1.2 10.2.1.1:10.3.2.2 10.2.2.1:10.3.1.2 10.2.2.1:10.3.2.2)

t_setup() {
	"$TOPO" router --no-policy --prefix "$P"
	mpipctl_in "$R" disable
	head -c 100000 /dev/urandom >"$T/small"
	tcp_send_file "$A" "$B" 10.3.1.2 4999 "$T/small" "$T/small.out"
	sha256_equal "$T/small" "$T/small.out" || fail "warm-up TCP data differs"
	mpip_wait_paths_up "$A" "${PATHS_A[@]}"
	# the far end of link 2, beyond the router: MTU 1280
	ip -n "$R" link set b2 mtu 1280
	ip -n "$B" link set eth2 mtu 1280
	random_file "$T/file" 4
}

t_transfer() {
	local down0 out=$T/file.out
	down0=$(mpip_stat "$A" path_down)
	tcp_send_file "$A" "$B" 10.3.1.2 5001 "$T/file" "$out"
	sha256_equal "$T/file" "$out" || fail "data differs"
	tcp_send_file "$A" "$B" 10.3.1.2 5002 "$T/file" "$out"
	sha256_equal "$T/file" "$out" || fail "data differs (second transfer)"
	mpip_paths_show "$A"
	echo "A: rx_icmp_pmtu $(mpip_stat "$A" rx_icmp_pmtu), path_down $down0 -> $(mpip_stat "$A" path_down)"
	(($(mpip_stat "$A" rx_icmp_pmtu) > 0)) ||
		fail "A recorded no path MTU: did the router send its errors?"
	(($(mpip_stat "$A" path_down) == down0)) ||
		fail "paths of A went down during the transfers: packets were black-holed"
	(($(mpip_stat "$A" tx_path_mtu) > 0)) ||
		fail "A sent no packet whole past its flow's MTU: its own path's segments with their trailers were dropped"
}

# icmp_unreach_in: how many ICMP "destination unreachable" A received
icmp_unreach_in() {
	in_ns "$A" nstat -az IcmpInDestUnreachs | awk '/IcmpInDestUnreachs/ { print $2 }'
}

# The router (on path, but any host that can reach A could send them)
# sends A 20 "fragmentation needed, MTU 576" errors quoting a TCP packet
# on the path 10.2.2.1 -> 10.3.1.2 with ports no session has, and 20
# quoting the ports of a live connection's session (A:40050 -> B:5050,
# idle after two lines of data, the second sent once A knows that B's
# port runs MPIP, its own addresses 10.2.1.1 -> 10.3.1.2)
# with a sequence number its socket never sent, and 20 quoting those
# ports with the sequence number of the connection's SYN (sent, and long
# acknowledged): A receives them, records
# no MTU on that path's route and translates nothing.  (Review 57, F3: before, the second kind
# lowered the path's MTU, which kept full-size packets off it for ten
# minutes, before TCP ever checked the sequence number.)
t_forged() {
	local icmp0 pmtu0 out spid cpid isn
	# (ip netns exec, not in_ns: $! must be socat itself)
	ip netns exec "$B" socat -u TCP-LISTEN:5050,reuseaddr /dev/null \
		</dev/null >/dev/null 2>&1 &
	spid=$!
	wait_for 30 tcp_listening "$B" 5050 || fail "nothing listens on B:5050"
	capture_start "$R" any syn5050 'tcp port 5050 and tcp[tcpflags] & tcp-syn != 0'
	ip netns exec "$A" socat -u SYSTEM:'echo x; sleep 1; echo y; sleep 60' \
		TCP:10.3.1.2:5050,sourceport=40050 </dev/null >/dev/null 2>&1 &
	cpid=$!
	# shellcheck disable=SC2064 # the PIDs, now
	trap "kill $spid $cpid 2>/dev/null || true" EXIT
	wait_for 30 mpip_session_json "$A" tcp 40050 5050 >/dev/null ||
		fail "A has no session of the connection to B:5050"
	mpip_session_json "$A" tcp 40050 5050
	capture_stop syn5050
	isn=$(/usr/bin/python3 - "$T/syn5050.pcap" <<'PY'
import sys
from scapy.layers.inet import TCP
from scapy.utils import rdpcap
print(next(p[TCP].seq for p in rdpcap(sys.argv[1])
           if TCP in p and p[TCP].sport == 40050 and p[TCP].flags == "S"))
PY
	) || fail "no SYN of A's to B:5050 captured"
	echo "the connection's SYN: sequence number $isn"
	icmp0=$(icmp_unreach_in)
	pmtu0=$(mpip_stat "$A" rx_icmp_pmtu)
	in_ns "$R" /usr/bin/python3 - "$isn" <<'PY'
import sys, time
from scapy.layers.inet import ICMP, IP, TCP
from scapy.sendrecv import send
def err(sport, dport, seq=1000):
    return (IP(src="10.2.2.254", dst="10.2.2.1") /
            ICMP(type=3, code=4, nexthopmtu=576) /
            IP(src="10.2.2.1", dst="10.3.1.2", len=1500) /
            TCP(sport=sport, dport=dport, seq=seq, flags="A"))
acked = err(40050, 5050, int(sys.argv[1]))
for e in [err(40000, 5001)] * 20 + [err(40050, 5050)] * 20 + [acked] * 20:
    send(e, verbose=False)
    time.sleep(0.05)
PY
	sleep 1
	out=$(ip -n "$A" route get 10.3.1.2 from 10.2.2.1 oif eth2)
	echo "$out"
	echo "A: IcmpInDestUnreachs $icmp0 -> $(icmp_unreach_in)," \
		"rx_icmp_pmtu $pmtu0 -> $(mpip_stat "$A" rx_icmp_pmtu)"
	(($(icmp_unreach_in) - icmp0 >= 60)) || fail "A did not receive the forged errors"
	! grep -q ' mtu ' <<<"$out" || fail "a forged error set the path's MTU"
	mpip_paths "$A" | jq -e 'all(.[]; .mtu == null)' >/dev/null ||
		fail "a forged error gave a path of A an MTU of its own"
	(($(mpip_stat "$A" rx_icmp_pmtu) == pmtu0)) || fail "a forged error was taken"
}

# The route of a path to 10.3.2.2 knows the smaller MTU: of the one (or
# both) that carried a full-size segment before TCP, told by the
# translated errors, made its segments smaller.
t_route_mtu() {
	local out
	out=$(ip -n "$A" route get 10.3.2.2 from 10.2.1.1 oif eth1
		ip -n "$A" route get 10.3.2.2 from 10.2.2.1 oif eth2)
	echo "$out"
	grep -Eq 'mtu 12[0-9][0-9]' <<<"$out" || fail "no MTU exception for a path to 10.3.2.2"
	mpip_paths "$A" | jq -e 'any(.[]; .daddr == "10.3.2.2" and .mtu == 1280)' >/dev/null ||
		fail "no path of A to 10.3.2.2 shows the MTU 1280 of its own"
	mpip_paths_in "$A" up "${PATHS_A[@]}" || fail "not every path of A is up"
}

# The errors reached TCP, translated: the flow's own route (to 10.3.1.2,
# whose link has MTU 1500 all the way) took the MTU from the socket, the
# path's 1280 less the trailer's 40 bytes.
t_flow_mtu() {
	local out
	out=$(ip -n "$A" route get 10.3.1.2 from 10.2.1.1 oif eth1)
	echo "$out"
	grep -Eq 'mtu 1240 *$' <<<"$out" ||
		fail "the flow's route has not the path's MTU less the trailer: the errors were not translated to its socket"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 6
	ktap_run setup t_setup
	ktap_run forged_errors_change_nothing t_forged
	ktap_run tcp_intact_no_path_down t_transfer
	ktap_run path_route_has_the_mtu t_route_mtu
	ktap_run errors_translated_to_the_flow t_flow_mtu
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
