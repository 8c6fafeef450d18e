#!/usr/bin/env bash
# test_multipath.sh - the multipath datapath between two MPIP hosts joined
# by two links: once they know each other, every TCP and UDP flow becomes a
# session with the same ID on both ends and its packets are spread over the
# paths (address pairs) that are up, while the applications see only the
# original 5-tuple.  The two direct pairs are up, the two cross pairs
# "noroute"; a 4 MiB TCP file each way and 1000 UDP datagrams each way
# arrive intact, and each link carries at least 20 % of the bytes.
# (test_router.sh does the same over four paths.)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink mp
# shellcheck disable=SC2034 # mpip_lib.sh's tcp_spread and udp_spread read it
MIN_PCT=20
SIZE_MIB=4

t_setup() {
	local ns
	random_file "$T/file" "$SIZE_MIB"
	# sessions_same_id_both_ends reads the sessions of all the transfers:
	# they must not expire meanwhile, however slow the machine (on the
	# debug kernel the transfers took over session_timeout_ms, 120 s)
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set session_timeout_ms 1800000
	done
	mpip_twolink_warm_up
	mpip_paths_show "$A"
	mpip_paths_show "$B"
}

# twolink_paths NS PEER_NS L1 L2 R1 R2: NS has exactly the four pairs
# towards PEER_NS's node; L1->R1 (eth1) and L2->R2 (eth2) up and used, the
# cross pairs noroute and unused
twolink_paths() {
	local ns=$1 peer=$2 l1=$3 l2=$4 r1=$5 r2=$6 id paths
	id=$(mpip_peer_node "$ns" "$peer")
	paths=$(mpip_paths "$ns")
	jq -c '.[]' <<<"$paths"
	jq -e --arg id "$id" --arg l1 "$l1" --arg l2 "$l2" \
		--arg r1 "$r1" --arg r2 "$r2" '
		[.[] | select(.node_id == $id)] as $p |
		def one($s; $d): [$p[] | select(.saddr == $s and .daddr == $d)] |
			if length == 1 then .[0] else null end;
		($p | length) == 4 and
		(one($l1; $r1) | .state == "up" and .dev == "eth1" and .tx_pkts > 0) and
		(one($l2; $r2) | .state == "up" and .dev == "eth2" and .tx_pkts > 0) and
		(one($l1; $r2) | .state == "noroute" and .tx_pkts == 0) and
		(one($l2; $r1) | .state == "noroute" and .tx_pkts == 0)' \
		<<<"$paths" >/dev/null ||
		fail "$ns: expected $l1->$r1 and $l2->$r2 up (and used), cross pairs noroute"
}

t_paths() {
	twolink_paths "$A" "$B" 10.1.1.1 10.1.2.1 10.1.1.2 10.1.2.2
	twolink_paths "$B" "$A" 10.1.1.2 10.1.2.2 10.1.1.1 10.1.2.1
}

# For each flow of the transfers above, A holds one session (found by a
# port) and B the mirror one: same ID, both confirmed, each naming its
# other's node, the original addresses and ports swapped, packets counted
# as sent by the sender ($out: A sends) and received by the receiver.
# shellcheck disable=SC2016
SESSIONS_CHECK='
def chk($name; $p; $out; f):
	[$a[] | select(.proto == $p and f)] as $sa |
	if ($sa | length) != 1 then "\($name): A holds \($sa | length) sessions"
	else $sa[0] as $s |
		[$b[] | select(.proto == $p and .lport == $s.rport and .rport == $s.lport)] as $sb |
		if ($sb | length) != 1 then "\($name): B holds \($sb | length) sessions"
		else $sb[0] as $t |
			if $t.id != $s.id then "\($name): session id \($s.id) on A, \($t.id) on B"
			elif ($s.confirmed and $t.confirmed) | not then "\($name): not confirmed"
			elif $s.node_id != $nb or $t.node_id != $na then "\($name): wrong node ids"
			elif $s.laddr != $t.raddr or $s.raddr != $t.laddr then "\($name): addresses differ"
			elif ($out and ($s.tx_pkts == 0 or $t.rx_pkts == 0)) or
				(($out | not) and ($t.tx_pkts == 0 or $s.rx_pkts == 0))
			then "\($name): no packets counted"
			else empty end
		end
	end;
chk("tcp a -> b:5001"; "tcp"; true; .rport == 5001),
chk("tcp b -> a:5002"; "tcp"; false; .lport == 5002),
chk("udp a:7101 -> b:6101"; "udp"; true; .lport == 7101 and .rport == 6101),
chk("udp b:7102 -> a:6102"; "udp"; false; .lport == 6102 and .rport == 7102)'

t_sessions() {
	local sa sb bad
	sa=$(mpip_sessions "$A")
	sb=$(mpip_sessions "$B")
	jq -c '.[]' <<<"$sa" | sed 's/^/A: /'
	jq -c '.[]' <<<"$sb" | sed 's/^/B: /'
	bad=$(jq -nr --argjson a "$sa" --argjson b "$sb" --arg na "$(mpip_peer_node "$B" "$A")" \
		--arg nb "$(mpip_peer_node "$A" "$B")" "$SESSIONS_CHECK")
	[[ -z $bad ]] || fail "$bad"
}

t_counters() {
	local ns bad=0
	for ns in "$A" "$B"; do
		mpip_stats_check "$ns" '.session_new > 0 and .tx_rewrite > 0 and
			.rx_restore > 0 and .tx_feedback > 0 and .rx_feedback > 0 and
			.path_up >= 2 and .drop_session == 0' || bad=1
	done
	((bad == 0)) || fail "unexpected counter values"
}

# path_port_entries NS: NS's availability entries that name an address
# of link 2 (a path's, never a flow's own here) with a port
path_port_entries() {
	mpipctl_in "$1" -j show avail | jq -c '.[] |
		select(.port != 0 and (.addr | startswith("10.1.2.")))'
}

# A packet that came over a path refreshes the availability entry of its
# flow's own address, not one of the path's address: no flow sends there.
# With avail_timeout_ms at 1 s, a session refreshes its entry every 250 ms
# (input.c, mpip_in_learn_due()), so in 3 s of a stream over both links
# both hosts learn from a dozen packets, about half of them moved.
# (Before, the moved ones made entries such as 10.1.2.1:PORT "yes".)
t_learn_flow_address() {
	local ns bad=0
	trap 'for ns in "$A" "$B"; do
		mpipctl_in "$ns" set avail_timeout_ms 300000; done' EXIT
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set avail_timeout_ms 1000
	done
	random_file "$T/blk" 1
	tcp_stream_bg "$A" "$B" 10.1.1.2 5010 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
	sleep 3
	for ns in "$A" "$B"; do
		path_port_entries "$ns" | sed "s/^/$ns: /" | grep . && bad=1
	done
	mpip_avail_is "$A" 10.1.1.2 5010 yes || fail "A: B:5010 not available"
	mpipctl_in "$B" -j show avail | jq -e '[.[] | select(.addr == "10.1.1.1"
		and .proto == "tcp" and .port != 0 and .state == "yes")] |
		length >= 1' >/dev/null || fail "B: A's TCP endpoint not available"
	tcp_stream_end "$T/blk" "$T/st" 60
	((bad == 0)) || fail "entries for a path's address and a flow's port"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 10
ktap_run warm_up_paths_up t_setup
ktap_run twolink_direct_up_cross_noroute t_paths
ktap_run tcp_4M_a_to_b_both_links tcp_spread "$A" "$B" 10.1.1.2 5001
ktap_run tcp_4M_b_to_a_both_links tcp_spread "$B" "$A" 10.1.1.1 5002
ktap_run udp_1000_a_to_b_both_links udp_spread "$A" "$B" 10.1.1.2 6101 7101
ktap_run udp_1000_b_to_a_both_links udp_spread "$B" "$A" 10.1.1.1 6102 7102
ktap_run sessions_same_id_both_ends t_sessions
ktap_run datapath_counters t_counters
ktap_run moved_packets_learn_flow_address t_learn_flow_address
ktap_run dmesg_clean t_dmesg
ktap_finish
