#!/usr/bin/env bash
# test_idle.sh - a namespace where mpip has nothing to do costs no
# periodic work: its tick (weights, heartbeats, path timeouts) runs only
# while it knows peers, and its collector only while a table has entries.
# The function tracer counts calls of both work functions, in every
# namespace, over a few seconds: none while the lab is idle, some while
# two hosts exchange datagrams, none again after a flush.  Two peers
# whose traffic ended stop sending heartbeats.
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
	ktap_plan 5
	ktap_run idle_lab_runs_no_work t_idle
	ktap_run peers_run_tick_and_collector t_busy
	ktap_run idle_peers_stop_heartbeats t_peers_quiet
	ktap_run disabled_lab_runs_no_work t_idle_again
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
