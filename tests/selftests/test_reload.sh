#!/usr/bin/env bash
# test_reload.sh - unload and reload mpip three times while iperf3 runs
# between two MPIP hosts: no kernel warning, and traffic flows (and the
# hosts find each other again) after each reload; then five more while
# new flows keep coming both ways.
# TIMEOUT: 420
# (about 70 s alone in one guest: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink rl
cleanup_push mpip_load
DURATION=600

t_start() {
	iperf3_server_start "$B" 5201
	# (-b: paced at 10 Mbit/s; unpaced it ran at ~200 Mbit/s, as much as
	# the CPUs gave it, where `flowing` needs 2 MB in 15 s, ~1 Mbit/s)
	ip netns exec "$A" iperf3 -c 10.1.1.2 -t "$DURATION" -b 10M -i 1 --forceflush \
		</dev/null >"$T/iperf3.out" 2>&1 &
	echo $! >"$T/iperf3.pid"
	wait_for 15 grep -q 'sec' "$T/iperf3.out" || {
		cat "$T/iperf3.out"
		fail "iperf3 client reports no progress"
	}
	wait_for 15 mpip_avail_is "$A" 10.1.1.2 5201 yes ||
		fail "A does not mark B:5201 available"
}

# flowing: B's link 1 receives more than 2 MB within 15 s
flowing() {
	local before
	before=$(rx_bytes "$B" eth1)
	wait_for 15 dev_rx_grew "$B" eth1 "$before" 2000000 ||
		fail "less than 2 MB arrived within 15 s"
}

t_reload() {
	sleep 2
	mpip_unload
	! mpip_loaded || fail "module still loaded"
	flowing
	mpip_load
	mpip_loaded || fail "module did not load"
	flowing
	wait_for 15 mpip_avail_is "$A" 10.1.1.2 5201 yes ||
		fail "A did not find B again"
	(($(mpip_stat "$B" rx_cm) > 0)) || fail "no trailers after reload"
}

# unload and reload while both hosts start new flows as fast as they can,
# each a new session made in the output hook: a CPU still in a hook when
# the namespace's tables are emptied must find them gone first (a session
# it added after the flush was once left behind, found by kmemleak).  The
# unload warns if a table is not empty at the end (dmesg_clean).
# flows_made NS: NS made 100 sessions since the module was loaded (the
# floods make 1000 a second; the iperf3 connections, two)
flows_made() { (($(mpip_stat "$1" session_new) >= 100)); }

t_reload_new_flows() {
	local i pids=()
	flows_ready "$A" 10.1.1.2 "$B"
	flows_ready "$B" 10.1.1.1 "$A"
	echo "$(date +%T) both know the other's port $FLOWS_PORT; the floods start"
	ip netns exec "$A" python3 "$REPO/tests/selftests/flows.py" flood 10.1.1.2 \
		"$FLOWS_PORT" 600 >/dev/null 2>&1 &
	pids+=($!)
	ip netns exec "$B" python3 "$REPO/tests/selftests/flows.py" flood 10.1.1.1 \
		"$FLOWS_PORT" 600 >/dev/null 2>&1 &
	pids+=($!)
	# $! is python itself (ip netns exec execs it): killed however this
	# subtest ends (the trap is the subtest's own)
	trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
	for i in 1 2 3 4 5; do
		# 60 s: in a loaded run beside a third guest A had not made 100
		# in 15 s (round 1); its flood is a Python process under TCG
		wait_for 60 flows_made "$A" || fail "A makes no new sessions (round $i)"
		wait_for 60 flows_made "$B" || fail "B makes no new sessions (round $i)"
		echo "$(date +%T) round $i: sessions: A $(mpip_stat "$A" session_new)," \
			"B $(mpip_stat "$B" session_new) new; unload"
		mpip_unload
		mpip_load || fail "module did not load (round $i)"
	done
	kill "${pids[@]}"
	flowing
}

# the iperf3 connection survived every reload: still running, no error
t_iperf3_survived() {
	local pid
	pid=$(cat "$T/iperf3.pid")
	tail -n 3 "$T/iperf3.out"
	kill -0 "$pid" || fail "iperf3 client exited early"
	! grep -qi 'error' "$T/iperf3.out" || fail "iperf3 reported an error"
	flowing
	kill -INT "$pid"
	wait_for 10 bash -c "! kill -0 $pid" || kill -KILL "$pid"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 7
ktap_run iperf3_running t_start
ktap_run reload_1 t_reload
ktap_run reload_2 t_reload
ktap_run reload_3 t_reload
ktap_run reload_while_new_flows_come t_reload_new_flows
ktap_run iperf3_connection_survived t_iperf3_survived
ktap_run dmesg_clean t_dmesg
ktap_finish
