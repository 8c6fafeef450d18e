#!/usr/bin/env bash
# test_rr.sh - return routability (review C2): an address a peer
# advertises carries data only after a probe sent to it was answered from
# it, and an address that never answers is probed a few times, with
# backoff, and then left alone.
# Two MPIP hosts on two links.  B advertises 10.1.2.2 as usual, but an
# nftables rule on B drops every control packet B sends from 10.1.2.2: as
# if 10.1.2.2 were a third party's address that B named.  B still
# receives A's probes there and reports their delays on link 1, which is
# all it took before: A brought the path up and sent data to 10.1.2.2.
# Now A's paths to 10.1.2.2 stay down, carry nothing, and A stops
# probing them after MPIP_RR_TRIES (6) probes.
# Then B names 6 more addresses (10.1.2.10-15: its list holds 8) where an nftables rule
# drops A's probes before mpip sees them (as if B had named a third
# party's addresses: B neither answers nor reports them), and goes quiet
# but for a datagram every 2 s, from A's first probe to the last of them
# on (A has B's whole list then: a rule puts A's addresses in a set that
# B's control packets to A are dropped by, in the kernel; a test that
# added the drop itself once A had the paths came too late on the debug
# kernel, after A had sent 35 of its 36 probes, and one that went quiet
# at the first probe to any of them cut off B's later lists, which name
# the others): A's probes to them are bounded
# by the per-node budget, the credit saved up before (at most 8) plus
# one per authenticated packet from B (before it, A sent every one of
# those paths its 6 probes, 36 for a handful of packets), and rr_held
# counts the probes held back.
# TIMEOUT: 480
# (about 83 s alone in one guest: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink rr
RR_TRIES=6

# probes_to ADDR: control packets B received for ADDR from A (nft counter,
# ahead of mpip's input hook, which consumes them)
probes_to() {
	nft_packets "$B" inet rrtest "probes_${1//./_}"
}

t_setup() {
	ip netns exec "$B" nft -f - <<'NFT'
table inet rrtest {
	counter probes_10_1_1_2 { }
	counter probes_10_1_2_2 { }
	counter probes_extra { }
	set quiet { type ipv4_addr; flags dynamic; }
	chain in {
		type filter hook prerouting priority -500;
		ip daddr 10.1.1.2 udp dport 19792 counter name probes_10_1_1_2
		ip daddr 10.1.2.2 udp dport 19792 counter name probes_10_1_2_2
		ip daddr 10.1.2.15 udp dport 19792 add @quiet { 10.1.1.1 } add @quiet { 10.1.2.1 }
		ip daddr 10.1.2.10-10.1.2.15 udp dport 19792 counter name probes_extra drop
	}
	chain out {
		type filter hook output priority -400;
		ip saddr 10.1.2.0/24 udp sport 19792 drop
		ip daddr @quiet udp sport 19792 drop
	}
}
NFT
	cleanup_push ip netns exec "$B" nft delete table inet rrtest
	probes_to 10.1.2.2 >/dev/null || fail "no nft counter"
}

t_transfer() {
	head -c 2000000 /dev/urandom >"$T/f"
	tcp_send_file "$A" "$B" 10.1.1.2 5000 "$T/f" "$T/g"
	sha256_equal "$T/f" "$T/g" || fail "TCP data differs"
	wait_for 20 mpip_path_is "$A" 10.1.1.1 10.1.1.2 up ||
		fail "A's path over link 1 not up"
	tcp_send_file "$A" "$B" 10.1.1.2 5001 "$T/f" "$T/g2"
	sha256_equal "$T/f" "$T/g2" || fail "TCP data differs"
}

# A's path to 10.1.2.2 heard delay reports, but 10.1.2.2 never answered
# from itself: never up, no data (its probes count as packets of 0 bytes)
t_unverified_unused() {
	local paths
	paths=$(mpip_paths "$A")
	jq -c '.[]' <<<"$paths"
	jq -e '[.[] | select(.daddr == "10.1.2.2")] | length >= 1 and
		all(.[]; .state != "up" and .tx_bytes == 0)' <<<"$paths" >/dev/null ||
		fail "A used a path to an address that never answered"
	jq -e '[.[] | select(.daddr == "10.1.1.2" and .state == "up")] | length >= 1' \
		<<<"$paths" >/dev/null || fail "A has no path to 10.1.1.2 up"
	(($(mpip_stat "$A" rr_verified) >= 1)) || fail "rr_verified did not count"
}

# At most RR_TRIES probes per path to 10.1.2.2 (one path routes there),
# then none: the count stands still over the next 10 s
t_probes_bounded() {
	local c1 c2
	# the backoff doubles from heartbeat_ms (300 ms): the 6th probe
	# leaves about 10 s after the first
	sleep 12
	c1=$(probes_to 10.1.2.2)
	sleep 10
	c2=$(probes_to 10.1.2.2)
	echo "probes to 10.1.2.2: $c1, 10 s later $c2; to 10.1.1.2: $(probes_to 10.1.1.2)"
	mpipctl_in "$A" -j stats | jq -c '{tx_heartbeat, tx_ip_change, tx_query, tx_confirm, rr_held, rr_verified, peer_lost}'
	((c1 >= 1)) || fail "A never probed 10.1.2.2"
	((c1 <= RR_TRIES)) || fail "$c1 probes to an address that never answered"
	((c2 == c1)) || fail "A kept probing 10.1.2.2"
}

# B names 6 more addresses that never answer, then goes quiet but for a
# datagram every 2 s (an nftables rule drops its control packets to A): A
# probes them only as far as B's own authenticated packets pay for
t_budget() {
	local rx0 held0 p0 i rx held p spid
	# B's node for A is idle: B sends A a datagram every 2 s, which keeps
	# it active (an idle node is not told of new addresses nor probed)
	in_ns "$B" /usr/bin/python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.2", 6300))
for i in range(25):
    s.sendto(b"still here", ("10.1.1.1", 6300))
    time.sleep(2)' &
	spid=$!
	cleanup_push kill "$spid"
	sleep 1
	p0=$(probes_extra)
	rx0=$(($(mpip_stat "$A" rx_cm) + $(mpip_stat "$A" rx_ctrl)))
	held0=$(mpip_stat "$A" rr_held || echo 0)
	for i in $(seq 10 15); do
		ip -n "$B" addr add "10.1.2.$i/24" dev eth2
	done
	wait_for 20 a_has_path_to 10.1.2.15 || fail "A made no paths to B's new addresses"
	# B is quiet from A's first probe to 10.1.2.15 on (the set quiet)
	wait_for 20 b_quiet || fail "A never probed 10.1.2.15"
	sleep 20
	p=$(($(probes_extra) - p0))
	rx=$(($(mpip_stat "$A" rx_cm) + $(mpip_stat "$A" rx_ctrl) - rx0))
	held=$(($(mpip_stat "$A" rr_held || echo 0) - held0))
	echo "A: $(mpip_paths "$A" | jq length) paths; $p probes to the 6 new addresses; CMs from B since they were added $rx; rr_held +$held"
	# credit saved up before (at most MPIP_RR_CREDIT_MAX, 8) plus one
	# per CM from B
	((p <= 8 + rx)) || fail "$p probes for $rx CMs from B: more than the budget (8 + one per CM)"
	((held > 0)) || fail "no probe was held back (rr_held)"
}

# b_quiet: B drops its control packets to A (A probed 10.1.2.15)
b_quiet() {
	ip netns exec "$B" nft -j list set inet rrtest quiet |
		jq -e '[.nftables[] | select(.set) | .set.elem // [] | length] | add > 0' >/dev/null
}

# a_has_path_to ADDR: A has a path to B's ADDR
a_has_path_to() {
	mpip_paths "$A" | jq -e --arg d "$1" 'any(.[]; .daddr == $d)' >/dev/null
}

# probes_extra: A's probes to 10.1.2.10-15
probes_extra() {
	nft_packets "$B" inet rrtest probes_extra
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 6
	ktap_run setup_b_silent_on_link_2 t_setup
	ktap_run transfers t_transfer
	ktap_run unverified_path_carries_nothing t_unverified_unused
	ktap_run probes_bounded_then_stop t_probes_bounded
	ktap_run probes_within_node_budget t_budget
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
