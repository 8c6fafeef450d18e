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
# TIMEOUT: 900
# (72 s, two guests side by side; a stalled stream costs up to 60 s a
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
	wait_for 30 moved_on "$1" "$2" "$4" || {
		stress_why
		fail "a stream $3 stood still for 30 s"
	}
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
	echo "A: $(mpipctl_in "$A" -j stats | jq -c '{session_expired, drop_session, rx_auth_fail, peer_lost}')"
	echo "B: $(mpipctl_in "$B" -j stats | jq -c '{session_expired, drop_session, rx_auth_fail, peer_lost}')"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 9
	ktap_run streams_running t_running
	ktap_run restart_b_1 t_restart "$B"
	ktap_run restart_a_1 t_restart "$A"
	ktap_run restart_b_2 t_restart "$B"
	ktap_run restart_a_2 t_restart "$A"
	ktap_run restart_b_3 t_restart "$B"
	ktap_run restart_a_3 t_restart "$A"
	ktap_run flows_survived t_survived
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
