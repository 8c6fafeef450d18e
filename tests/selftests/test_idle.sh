#!/usr/bin/env bash
# test_idle.sh - a namespace where mpip has nothing to do costs no
# periodic work: its tick (weights, heartbeats, path timeouts) runs only
# while it knows peers, and its collector only while a table has entries.
# The function tracer counts calls of both work functions, in every
# namespace, over a few seconds: none while the lab is idle, some while
# two hosts exchange datagrams, none again after a flush.  Two peers
# whose traffic ended stop sending heartbeats, and probe a path that went
# down only a few times once their traffic ended.
# TIMEOUT: 480
# (about 81 s alone in one guest: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink id
TR=/sys/kernel/tracing

# work_calls SECONDS: calls of mpip_tick_work and mpip_gc_work in that
# many seconds, as "TICK GC"; fails if the tracer cannot count them
work_calls() {
	local tick gc
	mountpoint -q "$TR" || mount -t tracefs nodev "$TR" || return 1
	echo 'mpip_tick_work mpip_gc_work' >"$TR"/set_ftrace_filter || return 1
	echo >"$TR"/trace
	echo function >"$TR"/current_tracer || return 1
	echo 1 >"$TR"/tracing_on
	sleep "$1"
	echo 0 >"$TR"/tracing_on
	tick=$(grep -c ' mpip_tick_work' "$TR"/trace) || true
	gc=$(grep -c ' mpip_gc_work' "$TR"/trace) || true
	echo nop >"$TR"/current_tracer
	echo 1 >"$TR"/tracing_on
	echo >"$TR"/set_ftrace_filter
	echo "$tick $gc"
}

# quiet_within SECONDS: a 3 s window without either work function
# begins within SECONDS
quiet_within() {
	local end=$(($(date +%s) + $1)) calls
	while (($(date +%s) < end)); do
		calls=$(work_calls 3) || fail "the function tracer cannot count mpip's work functions"
		echo "calls (tick gc) in 3 s: $calls"
		[[ $calls == "0 0" ]] && return 0
	done
	return 1
}

t_idle() {
	quiet_within 20 || fail "mpip's periodic work runs in an idle lab"
}

t_busy() {
	local calls tick gc
	udp_exchange "$A" "$B" 10.1.1.2 6600 50 7600
	calls=$(work_calls 2) || fail "the function tracer cannot count mpip's work functions"
	read -r tick gc <<<"$calls"
	echo "with two peers, calls in 2 s: tick $tick, gc $gc"
	((tick >= 3)) || fail "the tick hardly ran while the hosts are peers"
	((gc >= 1)) || fail "the collector did not run while tables have entries"
}

# hb_pair: both hosts' tx_heartbeat, as "A B"
hb_pair() {
	echo "$(mpip_stat "$A" tx_heartbeat) $(mpip_stat "$B" tx_heartbeat)"
}

# Two peers whose traffic ended stop sending each other heartbeats: a
# heartbeat that carries reports back wants none itself (QUIET), so the
# reports they owe each other run out.  The module before the flag sent
# one heartbeat per tick each way for as long as the pair lived.
t_peers_quiet() {
	local end=$(($(date +%s) + 40)) a0 b0 a1 b1
	udp_exchange "$A" "$B" 10.1.1.2 6601 50 7601
	udp_exchange "$B" "$A" 10.1.1.1 6602 50 7602
	while (($(date +%s) < end)); do
		read -r a0 b0 <<<"$(hb_pair)"
		sleep 3
		read -r a1 b1 <<<"$(hb_pair)"
		echo "heartbeats sent in 3 s: A $((a1 - a0)), B $((b1 - b0))"
		((a1 == a0 && b1 == b0)) && return 0
	done
	mpipctl_in "$A" show paths
	mpipctl_in "$B" show paths
	fail "two idle peers keep sending each other heartbeats"
}

# A path that went down is probed at every heartbeat while data flows,
# then, once the hosts are idle, at gaps that double (up to about 10 s):
# a few probes, not one every 300 ms for as long as the node lives (the
# module before: 10 per 3 s, each keeping the node alive).  When data
# flows again, the path comes back at once.
t_down_path_backoff() {
	local h0 h1
	trap '"$TOPO" up "$B" eth2 || true' EXIT
	udp_exchange "$A" "$B" 10.1.1.2 6603 100 7603
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	"$TOPO" down "$B" eth2
	# data on it, no reports: the path times out
	UDP_RECV_TIMEOUT=8 udp_exchange "$A" "$B" 10.1.1.2 6604 300 7604 10000 ||
		true
	wait_for 10 mpip_path_is "$A" 10.1.2.1 10.1.2.2 down ||
		fail "A: path over eth2 did not go down"
	sleep 10
	h0=$(mpip_stat "$A" tx_heartbeat)
	sleep 15
	h1=$(mpip_stat "$A" tx_heartbeat)
	echo "A, idle, one path down: $((h1 - h0)) heartbeats in 15 s"
	((h1 - h0 <= 4)) || fail "A probes a down path of an idle peer too often"
	"$TOPO" up "$B" eth2
	UDP_RECV_TIMEOUT=8 udp_exchange "$A" "$B" 10.1.1.2 6605 300 7605 10000 ||
		true
	wait_for 10 mpip_path_is "$A" 10.1.2.1 10.1.2.2 up ||
		fail "A: path over eth2 not back up once data flowed again"
}

# Switched off, the hosts forget each other and learn nothing more.  (A
# flush alone is not enough: packets on the way, and the other host's
# probes until its own flush, teach each host the other again, and a
# known node keeps the tick going until node_timeout_ms.)
t_idle_again() {
	mpipctl_in "$A" disable
	mpipctl_in "$B" disable
	quiet_within 20 || fail "periodic work goes on in namespaces switched off"
	mpipctl_in "$A" enable
	mpipctl_in "$B" enable
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 6
	ktap_run idle_lab_runs_no_work t_idle
	ktap_run peers_run_tick_and_collector t_busy
	ktap_run idle_peers_stop_heartbeats t_peers_quiet
	ktap_run idle_peer_down_path_backs_off t_down_path_backoff
	ktap_run disabled_lab_runs_no_work t_idle_again
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
