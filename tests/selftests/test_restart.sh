#!/usr/bin/env bash
# test_restart.sh - each host in turn restarts mpip (disable, enable: a
# new node, new keys, empty tables) while TCP runs both ways over two
# links whose delays differ by 40 ms.  After every restart each data
# stream of both directions moves on within 30 s: none stalls.
# Regression: a host kept sending a flow's packets with the session ID of
# the peer's old node, sealed for its new one, while the peer sent the
# flow plain; the peer dropped the ones that went over other paths
# (drop_session), and a stream whose ACKs all went that way stood still
# for minutes (test_teardown, a loaded run: RTO backed off to 39 s; here,
# before the fix, one restart of six left a stream still for 44 s).
# And (resync_*): an end that lost a flow's session while the other kept
# it under a winning ID gets the flow's packets again, whether it sends
# on the flow first or not, and with 16 such flows at once.  And (flushes_close_*): after both hosts
# flushed their tables within 2 s of each other, they stop failing each
# other's CMs within 20 s, and neither holds two nodes for one of the
# other's.
# TIMEOUT: 900
# (72 s, two guests side by side, about 60 s for the resync subtests
# and 15-20 s each for the flushes; a stalled stream costs up to 60 s a
# round)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"
source "$(dirname "$0")/stress_lib.sh"

mpip_setup_twolink rs
cleanup_push mpip_load

# acked NS PORT: "LOCAL-PORT BYTES-ACKED" for each of NS's TCP sockets
# connected to port PORT
acked() {
	in_ns "$1" ss -tinH state established "( dport = :$2 )" |
		awk '/^[0-9]/ { n = split($3, a, ":"); port = a[n]; next }
		     match($0, /bytes_acked:[0-9]+/) {
			print port, substr($0, RSTART + 12, RLENGTH - 12) }'
}

# moved_on NS PORT FILE: every stream in FILE (a snapshot of acked: its
# data streams, those past 100 kB) got more acknowledged since
moved_on() {
	local port bytes now
	while read -r port bytes; do
		((bytes > 100000)) || continue
		now=$(acked "$1" "$2" | awk -v p="$port" '$1 == p { print $2 }')
		[[ -n $now ]] && ((now > bytes)) || return 1
	done <"$3"
}

# streams_move_on: the data streams of both directions each move on
# within 30 s of the restart (a stream that lost packets to it, for up to
# peer_timeout_ms, 3 s, waits for its retransmission timer, backed off to
# 6.4 s at most then; the rounds took 6-9 s with the fix, two guests side
# by side)
streams_move_on() {
	snapshot "$A" 5201 "A -> B" "$T/acked.a"
	snapshot "$B" 5202 "B -> A" "$T/acked.b"
	wait_on "$A" 5201 "A -> B" "$T/acked.a"
	wait_on "$B" 5202 "B -> A" "$T/acked.b"
}

# snapshot NS PORT WHAT FILE: NS's streams to PORT into FILE, all
# PARALLEL of them sending data
snapshot() {
	acked "$1" "$2" >"$4"
	(($(awk '$2 > 100000' "$4" | wc -l) == PARALLEL)) ||
		{ cat "$4"; fail "$3: not $PARALLEL data streams"; }
}

# wait_on NS PORT WHAT FILE: each stream of snapshot FILE moves on
# within 30 s
wait_on() {
	local t0=${EPOCHREALTIME/[.,]/}
	wait_for 30 moved_on "$1" "$2" "$4" || {
		stress_why
		fail "a stream $3 stood still for 30 s"
	}
	# how near the limit each wait came: a figure for the loaded runs
	printf '%s: every stream moved on within %s s\n' "$3" "$(since_s "$t0")"
}

# t_running: stress_lib's runs going, both hosts holding segments, and
# the streams moving
t_running() {
	t_start
	streams_move_on
}

# t_restart NS: NS restarts mpip; the streams move on
t_restart() {
	local ns=$1
	mpipctl_in "$ns" disable
	sleep 0.5
	mpipctl_in "$ns" enable
	streams_move_on
	echo "A: $(mpipctl_in "$A" -j stats | jq -c '{session_expired, session_resync, drop_session, rx_auth_fail, peer_lost}')"
	echo "B: $(mpipctl_in "$B" -j stats | jq -c '{session_expired, session_resync, drop_session, rx_auth_fail, peer_lost}')"
}

# auth_fails: both hosts' rx_auth_fail, "A B"
auth_fails() {
	echo "$(mpip_stat "$A" rx_auth_fail) $(mpip_stat "$B" rx_auth_fail)"
}

# no_auth_fail SECS: neither host fails a CM of the other's for SECS s
no_auth_fail() {
	local f0
	f0=$(auth_fails)
	sleep "$1"
	[[ $(auth_fails) == "$f0" ]]
}

# one_node_per_peer_node NS: no two of NS's nodes pair with the same node
# of the peer (PEER-ID: the peer's node ID, its token of the pair)
one_node_per_peer_node() {
	local dup
	dup=$(mpipctl_in "$1" -j show nodes |
		jq -r '[.[] | .peer_id | select(. != null)] | group_by(.) | map(select(length > 1) | .[0]) | .[]')
	[[ -z $dup ]] || {
		mpip_peers_show "$A" "$B"
		fail "$1: two nodes pair with the peer's node $dup"
	}
}

# t_flushes_close DELAY: B flushes its tables, A DELAY s after (both at
# once, as it were, each losing the other's keys), with the streams of
# both ways running.  Each host makes a new node and queries; the
# queries cross, and each host also answers the other's.  Regression: a
# query sent again found the node that crossing had keyed and made a
# responder node beside it, both confirmations came back, and two nodes
# of one host paired with the other's one node.  That node kept one pair
# at a time, and from peer_timeout_ms on (3 s: the node left out asks
# again, with its key) went to and fro between them, the CMs under the
# other pair failing (rx_auth_fail) for 20-30 s in 11 cycles of 32 (an
# exploratory test before the fix; it found the two nodes 7 s after the
# flushes each time it looked).  Now, from 8 s after the flushes on,
# neither host holds two nodes for one of the other's, and they stop
# failing each other's CMs for good within 20 s: 6 s without one.
t_flushes_close() {
	local d=$1 t0 scale=${MPIP_TEST_WAIT_SCALE:-1}
	mpipctl_in "$B" flush
	sleep "$d"
	mpipctl_in "$A" flush
	t0=${EPOCHREALTIME/[.,]/}
	sleep $((8 * scale))
	one_node_per_peer_node "$A"
	one_node_per_peer_node "$B"
	wait_for 12 no_auth_fail 6 || {
		mpip_peers_show "$A" "$B"
		fail "the hosts still failed each other's CMs 20 s after the flushes: $(auth_fails)"
	}
	echo "6 s without a failed CM, ending $(since_s "$t0") s after the flushes"
	streams_move_on
}

# sid NS LPORT RPORT: the ID of NS's UDP session LPORT -> RPORT
sid() {
	mpip_session_json "$1" udp "$2" "$3" | jq -er .id
}

# confirmed NS LPORT RPORT: that session is confirmed
confirmed() {
	mpip_session_json "$1" udp "$2" "$3" | jq -e .confirmed >/dev/null
}

# gone NS LPORT RPORT: NS has no such session
gone() {
	! mpip_session_json "$1" udp "$2" "$3" >/dev/null 2>&1
}

# The flow of the resync subtests: W, the host whose session IDs win
# (odd: its holder picked it), sends to L from WA:WP to LA:LP under
# session WID.  Set by t_resync_setup, kept in $T/resync.env for the
# subtests after (each runs in a subshell).
W='' L='' WA='' LA='' WP='' LP='' WID=''

# resync_start: W's first datagrams of the flow to L, and W's session
resync_start() {
	UDP_RECV_TIMEOUT=30 udp_exchange "$W" "$L" "$LA" "$LP" 20 "$WP" 20000 ||
		fail "$W's first datagrams to $L did not all arrive"
	wait_for 10 sid "$W" "$WP" "$LP" >/dev/null || fail "$W made no session"
}

# t_resync_setup: a UDP flow whose session W picked, confirmed
t_resync_setup() {
	local id
	mpip_twolink_warm_up
	W=$A L=$B WA=10.1.1.1 LA=10.1.1.2 WP=7301 LP=7302
	resync_start
	id=$(sid "$W" "$WP" "$LP")
	if ((id % 2 == 0)); then
		# B picks the odd IDs: the flow starts from B
		W=$B L=$A WA=10.1.1.2 LA=10.1.1.1 WP=7303 LP=7304
		resync_start
		id=$(sid "$W" "$WP" "$LP")
	fi
	echo "winner $W, session $id"
	((id % 2 == 1)) || fail "neither host picked an odd ID"
	WID=$id
	wait_for 10 confirmed "$W" "$WP" "$LP" || fail "the session is not confirmed"
	# W's datagrams of the flow go over link 2 once the session is
	# confirmed: under an ID that L must know
	mpipctl_in "$W" rule add pref 100 proto udp dport "$LP" mode selected dev eth2
	declare -p W L WA LA WP LP WID >"$T/resync.env"
}

# resync_lose: L loses the flow's session (it times out there first, as a
# restart would lose it) while W keeps it, confirmed
resync_lose() {
	mpipctl_in "$L" set session_timeout_ms 1000
	wait_for 20 gone "$L" "$LP" "$WP" || fail "the loser's session did not time out"
	mpipctl_in "$L" set session_timeout_ms 120000
	confirmed "$W" "$WP" "$LP" || fail "the winner lost its session too"
}

# resync_check R0: L took W's ID, and W's session_resync moved from R0
resync_check() {
	echo "session_resync +$(($(mpip_stat "$W" session_resync) - $1)); loser's session $(mpip_session_json "$L" udp "$LP" "$WP" | jq -c '{id, confirmed}')"
	(($(sid "$L" "$LP" "$WP") == WID)) || fail "the loser did not take the winner's ID"
	(($(mpip_stat "$W" session_resync) > $1)) ||
		fail "session_resync did not count the winner's session"
}

# t_resync_named: one end of a flow lost its session while the other
# kept it, confirmed, under an ID that wins.  The loser sends first and
# makes a session of its own; the winner's packets, which the rule sends
# over link 2, must still arrive: before the fix they went there under
# the ID the loser no longer knew, and all were dropped (drop_session),
# while the loser's own packets came plain and never told.  Now the
# loser's CM naming another ID takes the confirmation back
# (session_resync), the winner's packets go on the flow's own addresses
# until the loser took its ID, and then over link 2.
t_resync_named() {
	local r0 lid d0
	t_resync_setup
	resync_lose
	r0=$(mpip_stat "$W" session_resync)
	UDP_RECV_TIMEOUT=30 udp_exchange "$L" "$W" "$WA" "$WP" 20 "$LP" 20000 ||
		fail "the loser's datagrams did not all arrive"
	lid=$(sid "$L" "$LP" "$WP") || fail "the loser made no session"
	echo "loser's session: $lid"
	d0=$(mpip_stat "$L" drop_session)
	UDP_RECV_TIMEOUT=20 udp_exchange "$W" "$L" "$LA" "$LP" 50 "$WP" 20000 ||
		fail "the winner's datagrams did not all arrive (drop_session +$(($(mpip_stat "$L" drop_session) - d0)) at the loser)"
	resync_check "$r0"
}

# t_resync_told: the same loss, but the loser sends nothing: the
# winner's first datagrams over link 2 are dropped, and the loser tells
# the winner that it knows no session of that ID (HB | CTRL | NEW).  The
# winner takes the confirmation back, the loser makes the session from
# its next datagram and confirms it, and from then on every datagram
# arrives.  Before, none did, for as long as the flow ran.
t_resync_told() {
	local r0 d0
	# shellcheck source=/dev/null
	source "$T/resync.env" || fail "resync_named set up no flow"
	resync_lose
	r0=$(mpip_stat "$W" session_resync)
	d0=$(mpip_stat "$L" drop_session)
	# 200 ms apart: the loser's answer has 4 s to come back before the
	# last of them goes (it came within 50 ms in the loaded runs)
	UDP_MIN_GOOD=1 UDP_RECV_TIMEOUT=20 udp_exchange "$W" "$L" "$LA" "$LP" 20 "$WP" 200000 ||
		fail "none of the winner's datagrams arrived (drop_session +$(($(mpip_stat "$L" drop_session) - d0)) at the loser)"
	wait_for 30 confirmed "$W" "$WP" "$LP" || fail "the winner's session stayed unconfirmed"
	UDP_RECV_TIMEOUT=20 udp_exchange "$W" "$L" "$LA" "$LP" 50 "$WP" 20000 ||
		fail "the winner's datagrams did not all arrive (drop_session +$(($(mpip_stat "$L" drop_session) - d0)) at the loser)"
	resync_check "$r0"
	mpipctl_in "$W" rule del pref 100
}

# The flows of t_resync_told_many: from W's ports 7400-7415 to L's 7320
MANY=16 MSPORT=7400 MDPORT=7320

# many_all CHECK NS: CHECK (confirmed or gone) holds for each of those
# flows at NS (its ends in NS's order)
many_all() {
	local k lp rp
	for ((k = 0; k < MANY; k++)); do
		lp=$((MSPORT + k)) rp=$MDPORT
		[[ $2 == "$L" ]] && lp=$MDPORT rp=$((MSPORT + k))
		"$1" "$2" "$lp" "$rp" || return 1
	done
}

# t_resync_told_many: the loser lost the sessions of 16 flows at once,
# as a restart loses them all, and the winner sends on each in turn, 25
# ms apart: 4 rounds of one datagram per flow, 400 ms between a flow's.
# The first of each flow goes over link 2 under an ID the loser does not
# know and is dropped, and the loser tells the winner of each ID
# (tx_unknown), each within 100 ms; the winner takes each confirmation
# back, and the next rounds arrive.  Before, the loser told a node once
# per 100 ms in all, whatever the ID: a few flows a round were told, and
# only 24 of 64 arrived.  At least 48 must arrive (one per flow may be
# lost), the loser's tx_unknown and the winner's session_resync grow by
# 16 or more, every flow is confirmed again, and then all arrive.
t_resync_told_many() {
	local r0 u0 d0
	# shellcheck source=/dev/null
	source "$T/resync.env" || fail "resync_named set up no flow"
	mpipctl_in "$W" rule add pref 101 proto udp dport "$MDPORT" mode selected dev eth2
	UDP_FLOWS=$MANY UDP_RECV_TIMEOUT=30 udp_exchange "$W" "$L" "$LA" "$MDPORT" $((2 * MANY)) "$MSPORT" 20000 ||
		fail "the flows' first datagrams did not all arrive"
	wait_for 20 many_all confirmed "$W" || fail "not every flow's session is confirmed at $W"
	mpipctl_in "$L" set session_timeout_ms 1000
	wait_for 20 many_all gone "$L" || fail "the loser's sessions did not all time out"
	mpipctl_in "$L" set session_timeout_ms 120000
	many_all confirmed "$W" || fail "the winner lost a session too"
	r0=$(mpip_stat "$W" session_resync)
	u0=$(mpip_stat "$L" tx_unknown)
	d0=$(mpip_stat "$L" drop_session)
	UDP_FLOWS=$MANY UDP_MIN_GOOD=$((3 * MANY)) UDP_RECV_TIMEOUT=20 \
		udp_exchange "$W" "$L" "$LA" "$MDPORT" $((4 * MANY)) "$MSPORT" 25000 ||
		fail "fewer than $((3 * MANY)) of the winner's datagrams arrived (drop_session +$(($(mpip_stat "$L" drop_session) - d0)), tx_unknown +$(($(mpip_stat "$L" tx_unknown) - u0)) at the loser)"
	echo "loser: tx_unknown +$(($(mpip_stat "$L" tx_unknown) - u0)), drop_session +$(($(mpip_stat "$L" drop_session) - d0)); winner: session_resync +$(($(mpip_stat "$W" session_resync) - r0))"
	(($(mpip_stat "$L" tx_unknown) - u0 >= MANY)) || fail "the loser did not tell of every ID"
	(($(mpip_stat "$W" session_resync) - r0 >= MANY)) || fail "the winner did not take back every confirmation"
	wait_for 30 many_all confirmed "$W" || fail "not every flow's session is confirmed again"
	UDP_FLOWS=$MANY UDP_RECV_TIMEOUT=20 udp_exchange "$W" "$L" "$LA" "$MDPORT" $((3 * MANY)) "$MSPORT" 20000 ||
		fail "the winner's datagrams did not all arrive after (drop_session +$(($(mpip_stat "$L" drop_session) - d0)))"
	mpipctl_in "$W" rule del pref 101
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 16
	ktap_run resync_named t_resync_named
	ktap_run resync_told t_resync_told
	ktap_run resync_told_many t_resync_told_many
	ktap_run streams_running t_running
	ktap_run restart_b_1 t_restart "$B"
	ktap_run restart_a_1 t_restart "$A"
	ktap_run restart_b_2 t_restart "$B"
	ktap_run restart_a_2 t_restart "$A"
	ktap_run restart_b_3 t_restart "$B"
	ktap_run restart_a_3 t_restart "$A"
	ktap_run flushes_close_0_3 t_flushes_close 0.3
	ktap_run flushes_close_0_6 t_flushes_close 0.6
	ktap_run flushes_close_1_0 t_flushes_close 1
	ktap_run flushes_close_2_0 t_flushes_close 2
	ktap_run flows_survived t_survived
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
