#!/usr/bin/env bash
# test_fastpath.sh - pure TCP ACKs without trailers (ack_cm_ms) between two
# MPIP hosts on two veth links.  While both links are up, every ACK keeps
# its trailer (ACKs are spread over the paths like data).  With link 2
# down, the flow's own path is the peer's only one: most of the
# receiver's ACKs go bare, yet the delay reports still reach the sender,
# which keeps its path up and its peer known through a transfer longer
# than peer_timeout_ms; every file arrives byte-identical.  ack_cm_ms 0
# puts a trailer on every ACK again.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink fp

t_setup() {
	random_file "$T/file" 8
	random_file "$T/big" 16
	mpip_twolink_warm_up
}

# send FILE PORT: FILE from A to B's PORT, intact; A's and B's counters
# from before it are in $T/a0 and $T/b0.  Each subtest has its own port:
# a destination idle for peer_timeout_ms is probed again.
send() {
	local out=$T/out.$2
	mpipctl_in "$A" -j stats >"$T/a0"
	mpipctl_in "$B" -j stats >"$T/b0"
	tcp_send_file "$A" "$B" 10.1.1.2 "$2" "$1" "$out"
	sha256_equal "$1" "$out" || fail "received file differs"
	rm -f "$out"
}

t_two_paths() {
	send "$T/file" 5300
	mpip_stats_since "$B" "$T/b0" '.tx_cm > 100 and .tx_bare_ack == 0' ||
		fail "B sent bare ACKs while it had two paths to A"
}

t_one_path() {
	"$TOPO" down "$A" eth2
	"$TOPO" down "$B" eth2
	wait_for 10 mpip_path_is "$A" 10.1.2.1 10.1.2.2 down ||
		fail "A: path over link 2 not down"
	wait_for 10 mpip_path_is "$B" 10.1.2.2 10.1.2.1 down ||
		fail "B: path over link 2 not down"
	send "$T/file" 5301
	# the bare ones outnumber those with a trailer several times over
	mpip_stats_since "$B" "$T/b0" '.tx_bare_ack > 3 * .tx_cm and .tx_cm > 0' ||
		fail "B's ACKs on its only path to A still carried trailers"
	mpip_stats_since "$A" "$T/a0" '.rx_feedback > 0 and .peer_lost == 0 and
		.path_down == 0' || fail "A lost its delay reports, path or peer"
}

# 16 MiB at 20 Mbit/s: about 7 s, more than peer_timeout_ms (3 s)
t_long_transfer() {
	"$TOPO" netem "$A" eth1 20mbit,-,-
	send "$T/big" 5302
	"$TOPO" netem "$A" eth1 -
	# fewer ACKs per second at 20 Mbit/s: more of them carry the trailer
	# due every ack_cm_ms
	mpip_stats_since "$B" "$T/b0" '.tx_bare_ack > .tx_cm' ||
		fail "B's ACKs carried trailers"
	mpip_stats_since "$A" "$T/a0" '.rx_feedback > 20 and .peer_lost == 0 and
		.path_down == 0' ||
		fail "A lost track of B or its path during a long transfer"
	mpip_path_is "$A" 10.1.1.1 10.1.1.2 up || fail "A's path over link 1 not up"
}

t_ack_cm_0() {
	mpipctl_in "$B" set ack_cm_ms 0
	send "$T/file" 5303
	mpipctl_in "$B" set ack_cm_ms 10
	mpip_stats_since "$B" "$T/b0" '.tx_cm > 100 and .tx_bare_ack == 0' ||
		fail "B sent bare ACKs with ack_cm_ms 0"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 6
ktap_run setup t_setup
ktap_run two_paths_acks_keep_trailers t_two_paths
ktap_run one_path_acks_go_bare t_one_path
ktap_run long_transfer_keeps_peer_and_path t_long_transfer
ktap_run ack_cm_ms_0_every_ack_has_a_trailer t_ack_cm_0
ktap_run dmesg_clean t_dmesg
ktap_finish
