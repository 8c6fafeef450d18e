#!/usr/bin/env bash
# test_teardown.sh - tear mpip's state down while TCP flows have segments
# held in reorder buffers and timers armed: flush, disable/enable and
# session expiry by the garbage collector, each repeated, and a flush of
# thousands of UDP sessions, with TCP both ways over two links whose delays differ by 40 ms (segments overtake
# each other, so the receivers hold some).  test_unload.sh does the same
# for namespace deletion and rmmod.
# Nothing may hang, leak, oops or warn (the kernel log is checked; under
# the debug kernel, lockdep, KASAN and kmemleak watch every step), the
# module unloads every time, and traffic flows again afterwards.
# TIMEOUT: 1200
# (about 160 s on an idle machine; its rounds of 3000 sessions, five then,
# took it past 600 s in a loaded run, two release-kernel series side by
# side)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"
source "$(dirname "$0")/stress_lib.sh"

mpip_setup_twolink td
cleanup_push mpip_load

t_flush() {
	local i ns
	for i in 1 2 3; do
		for ns in "$B" "$A"; do
			wait_holding "$ns"
			echo "$(date +%T.%N | cut -c1-12) round $i: flush $ns (held $(held "$ns"))"
			timeout 30 "$MPIPCTL" -n "$ns" flush || fail "flush in $ns failed or hung"
		done
	done
	flowing "$B" eth1
	flowing "$A" eth1
}

t_disable() {
	local i ns
	for i in 1 2; do
		for ns in "$B" "$A"; do
			wait_holding "$ns"
			mpipctl_in "$ns" disable
			sleep 0.5
			mpipctl_in "$ns" enable
		done
	done
	wait_holding "$B"
	flowing "$B" eth1
}

# The sessions of four transfers expire in the pauses between them
# (session_timeout_ms 1 s, pauses of 1.5 s), while the iperf3 streams go
# on.  On the debug kernel, where everything takes some five times
# longer (MPIP_TEST_WAIT_SCALE), both are that much longer.  With 1 s
# there, this subtest took 383 s for four transfers of 128 kB in one run
# (e7879b3), and the first transfer was cut off after some 95 s in the
# next (5e5a25a).  Not traced; most likely the transfers' own sessions
# expired in their middle too, at each pause of a second of theirs, a
# common thing there.  Each transfer's time and what B's session
# counters did meanwhile are printed now.
t_gc_expiry() {
	local before i ns scale=${MPIP_TEST_WAIT_SCALE:-1}
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set session_timeout_ms $((1000 * scale))
	done
	before=$(mpip_stat "$B" session_expired)
	random_file "$T/burst" 1
	for i in 1 2 3 4; do
		mpipctl_in "$B" -j stats >"$T/b-burst"
		tcp_send_file "$A" "$B" 10.1.2.2 $((5300 + i)) "$T/burst" "$T/burst.out"
		echo "transfer $i: $TCP_SEND_MS ms; B meanwhile: $(_mpip_stats_delta "$B" "$T/b-burst" |
			jq -c '{session_new, session_expired, session_resync, drop_session}')"
		sha256_equal "$T/burst" "$T/burst.out" || fail "transfer $i differs"
		sleep $((3 * scale / 2)).$((3 * scale % 2 * 5))
	done
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set session_timeout_ms 120000
	done
	echo "B: session_expired $before -> $(mpip_stat "$B" session_expired)"
	(($(mpip_stat "$B" session_expired) > before)) ||
		fail "the collector expired no session on B"
	flowing "$B" eth1
}

# a flush of thousands of sessions leaves none of them behind (its walk
# of the session table pauses every 256 sessions, and used to pass over
# one at a pause now and then); B learned the flows on receipt.  Two
# rounds, four flushes of 3000, each walk pausing 11 times (a round takes
# about 28 s in a guest under emulation, most of it making the flows and
# listing them)
t_flush_many() {
	local i ns n
	flows_ready "$A" 10.1.1.2 "$B"
	for i in 1 2; do
		mpipctl_in "$A" -j stats >"$T/a-flows"
		mpipctl_in "$B" -j stats >"$T/b-flows"
		flows_send "$A" 10.1.1.2 3000
		n=$(flows_sessions "$A")
		echo "round $i: A lists $n of the flows' sessions, B $(flows_sessions "$B")"
		echo "A meanwhile: $(mpip_stats_moved "$A" "$T/a-flows")"
		echo "B meanwhile: $(mpip_stats_moved "$B" "$T/b-flows")"
		# (A's flows go plain for a while when A finds B lost in the
		# middle: flows_ready waits for B to take A's flows, and A had
		# 2789 in a CI run before it did)
		# (with each host's nodes and availability entries: a loaded
		# run had A find B lost in round 1, B failing to authenticate
		# 1557 of A's CMs; are two nodes of one peer left after the
		# flushes?)
		((n >= 2900)) || {
			mpip_peers_show "$A" "$B"
			fail "A lists only $n sessions for 3000 flows"
		}
		for ns in "$A" "$B"; do
			timeout 30 "$MPIPCTL" -n "$ns" flush || fail "flush in $ns failed or hung"
			n=$(flows_sessions "$ns")
			((n == 0)) || fail "$ns: $n of the flows' sessions left after the flush (round $i)"
		done
		flows_ready "$A" 10.1.1.2 "$B"
	done
	flowing "$B" eth1
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 7
	ktap_run flows_with_held_segments t_start
	ktap_run flush_under_load t_flush
	ktap_run flush_of_thousands_of_sessions t_flush_many
	ktap_run disable_enable_under_load t_disable
	ktap_run gc_expiry_under_load t_gc_expiry
	ktap_run flows_survived t_survived
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
