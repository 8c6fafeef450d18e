#!/usr/bin/env bash
# test_legacy.sh - an MPIP host and a host without MPIP (disabled in its
# namespace): data arrives byte-identical both ways, the legacy UDP socket
# gets exactly the datagrams sent, TCP queries are dropped by the legacy
# host's TCP as old data (never delivered), and probing stops at the
# threshold.  SYNs to a destination given up keep their MSS.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink lg
THRESHOLD=5

t_setup() {
	mpipctl_in "$B" disable
	mpipctl_in "$B" -j status | jq -e '.enabled == false'
	mpipctl_in "$A" set query_threshold "$THRESHOLD"
	in_ns "$B" nstat -n
	random_file "$T/f5" 5
}

t_tcp_a_to_b() {
	tcp_send_file "$A" "$B" 10.1.1.2 5001 "$T/f5" "$T/g1"
	sha256_equal "$T/f5" "$T/g1"
}

t_tcp_b_to_a() {
	tcp_send_file "$B" "$A" 10.1.1.1 5002 "$T/f5" "$T/g2"
	sha256_equal "$T/f5" "$T/g2"
}

t_udp_a_to_b() { udp_exchange "$A" "$B" 10.1.1.2 6001 500 7001; }
t_udp_b_to_a() { udp_exchange "$B" "$A" 10.1.1.1 6002 500 7002; }

t_probing_stopped() {
	local avail no
	avail=$(mpipctl_in "$A" -j show avail)
	jq -c '.[]' <<<"$avail"
	mpipctl_in "$A" -j stats
	# every destination on B ends "no" after exactly THRESHOLD queries
	jq -e --argjson t "$THRESHOLD" \
		'length >= 2 and all(.[]; .state == "no" and .queries == $t)' \
		<<<"$avail" || fail "a destination was not given up after $THRESHOLD queries"
	no=$(jq 'length' <<<"$avail")
	(($(mpip_stat "$A" probe_giveup) == no)) ||
		fail "probe_giveup $(mpip_stat "$A" probe_giveup) != $no destinations"
	(($(mpip_stat "$A" tx_query) == no * THRESHOLD)) ||
		fail "tx_query $(mpip_stat "$A" tx_query) != $((no * THRESHOLD))"
	(($(mpip_stat "$A" tx_cm) == 0)) || fail "A sent data trailers to a legacy host"
	(($(mpip_stat "$A" rx_confirm) == 0)) || fail "A got a confirmation from a legacy host"
}

t_tcp_queries_dropped() {
	local tcpq=0 csum old
	# TCP destinations on B: queries were sent in carriers, segments of
	# old data (before what B acknowledged) with valid checksums
	tcpq=$(mpipctl_in "$A" -j show avail |
		jq '[.[] | select(.proto == "tcp") | .queries] | add')
	csum=$(in_ns "$B" nstat -az TcpInCsumErrors | awk '$1 == "TcpInCsumErrors" {print $2}')
	# B's TCP took each one for old data (a D-SACK, or a duplicate ACK
	# for one before its window), but those copied from SYNs, which
	# reach a listener that drops them without a count
	old=$(in_ns "$B" nstat -az TcpExtTCPDSACKOldSent TcpExtDelayedACKLost | awk '
		$1 == "TcpExtTCPDSACKOldSent" || $1 == "TcpExtDelayedACKLost" {s += $2; n++}
		END {if (n != 2) exit 1; print s}') || fail "no D-SACK counters on B"
	echo "A sent $tcpq TCP queries; B's TcpInCsumErrors: $csum, old segments: $old"
	[[ $tcpq =~ ^[0-9]+$ ]] || fail "no TCP destinations on A"
	[[ $csum =~ ^[0-9]+$ ]] || fail "no TcpInCsumErrors counter on B"
	((tcpq == 2 * THRESHOLD)) || fail "expected $((2 * THRESHOLD)) TCP queries"
	((csum == 0)) || fail "B counted $csum TCP checksum errors: a query with a bad checksum"
	((old >= tcpq - 2)) || fail "B took $old segments for old data, not the $((tcpq - 2)) queries after the SYNs"
}

t_udp_no_errors() {
	local err
	# both counters must be there: a missing one is not a zero
	err=$(in_ns "$B" nstat -az UdpInErrors UdpInCsumErrors | awk '
		$1 == "UdpInErrors" || $1 == "UdpInCsumErrors" {s += $2; n++}
		END {if (n != 2) exit 1; print s}') || fail "UDP error counters missing"
	((err == 0)) || fail "legacy host counted $err UDP errors"
}

# A SYN to a destination given up keeps its MSS (B's segments never carry
# trailers); one to a destination not known yet is still lowered.
t_syn_mss_to_legacy() {
	local c0 c1 c2
	c0=$(mpip_stat "$A" mss_clamped)
	tcp_send_file "$A" "$B" 10.1.1.2 5001 "$T/f5" "$T/g3"
	sha256_equal "$T/f5" "$T/g3" || fail "data to the legacy host differs"
	c1=$(mpip_stat "$A" mss_clamped)
	echo "mss_clamped: $c0 before, $c1 after a connection to B:5001 (given up)"
	((c1 == c0)) || fail "A lowered the MSS of a SYN to a host without MPIP"
	tcp_send_file "$A" "$B" 10.1.1.2 5003 "$T/f5" "$T/g4"
	sha256_equal "$T/f5" "$T/g4" || fail "data to the legacy host differs"
	c2=$(mpip_stat "$A" mss_clamped)
	echo "mss_clamped: $c2 after a connection to B:5003 (not known yet)"
	((c2 == c1 + 1)) || fail "A did not lower the MSS of a SYN to an unknown host"
}

# A legacy host's TCP data that happens to end in a valid trailer: the
# MPIP receiver must deliver it intact (its TCP checksum is valid over the
# whole segment, which a real trailer never allows).
t_lookalike_tail() {
	/usr/bin/python3 - "$REPO/tests/scapy" "$T/look" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
import mpip_cm
with open(sys.argv[2], "wb") as f:
    f.write(os.urandom(1000) + mpip_cm.encode(node_id=0x01020304))
PY
	tcp_send_file "$B" "$A" 10.1.1.1 5003 "$T/look" "$T/look.out"
	sha256_equal "$T/look" "$T/look.out" || fail "look-alike tail altered"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 11
ktap_run setup_legacy_b t_setup
ktap_run tcp_5MB_mpip_to_legacy t_tcp_a_to_b
ktap_run tcp_5MB_legacy_to_mpip t_tcp_b_to_a
ktap_run udp_500_mpip_to_legacy t_udp_a_to_b
ktap_run udp_500_legacy_to_mpip t_udp_b_to_a
ktap_run probing_stops_at_threshold t_probing_stopped
ktap_run tcp_queries_dropped_by_legacy t_tcp_queries_dropped
ktap_run legacy_udp_no_errors t_udp_no_errors
ktap_run legacy_data_ending_like_a_trailer t_lookalike_tail
ktap_run syn_mss_kept_for_legacy_destination t_syn_mss_to_legacy
ktap_run dmesg_clean t_dmesg
ktap_finish
