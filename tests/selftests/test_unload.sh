#!/usr/bin/env bash
# test_unload.sh - delete namespaces and unload mpip while TCP flows have
# segments held in reorder buffers and timers armed, with TCP both ways
# over two links whose delays differ by 40 ms (segments overtake each
# other, so the receivers hold some); test_teardown.sh does the same for
# flush, disable and session expiry.
# Nothing may hang, leak, oops or warn (the kernel log is checked; under
# the debug kernel, lockdep, KASAN and kmemleak watch every step), the
# module unloads every time, and traffic flows again afterwards.
# TIMEOUT: 600
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ul
cleanup_push mpip_load
DURATION=1000
PARALLEL=3

# shape LAB_A LAB_B: link 1 slow and long, link 2 short
shape() {
	"$TOPO" netem "$1" eth1 40mbit,42ms,-
	"$TOPO" netem "$2" eth1 40mbit,42ms,-
	"$TOPO" netem "$1" eth2 20mbit,2ms,-
	"$TOPO" netem "$2" eth2 20mbit,2ms,-
}

# iperf_start SRC DST ADDR PORT [ARG...]: a long iperf3 run in the background
iperf_start() {
	local src=$1 dst=$2 addr=$3 port=$4 log
	shift 4
	log=$T/iperf.$src.$port
	iperf3_server_start "$dst" "$port" || fail "no iperf3 server in $dst"
	ip netns exec "$src" iperf3 -c "$addr" -p "$port" -t "$DURATION" \
		-P "$PARALLEL" -i 1 --forceflush "$@" </dev/null >"$log" 2>&1 &
	echo $! >"$log.pid"
	wait_for 20 grep -q 'sec' "$log" || { cat "$log"; fail "iperf3 $src -> $addr:$port shows no progress"; }
}

# held NS: segments held in NS's reorder buffers so far
held() { mpip_stat "$1" reorder_held; }

# holding NS BEFORE: NS held more segments since its count was BEFORE
holding() { (($(held "$1") > $2)); }

# flowing NS DEV: NS's DEV receives more than 500 kB within 20 s
flowing() {
	local before
	before=$(rx_bytes "$1" "$2")
	wait_for 20 rx_grew "$1" "$2" "$before" 500000 ||
		fail "$1 $2: less than 500 kB arrived within 20 s"
}

rx_grew() {
	local now
	now=$(rx_bytes "$1" "$2") || return 1
	((now - $3 > $4))
}

# wait_holding NS: NS holds segments again (the stress meets held ones)
wait_holding() {
	local h
	h=$(held "$1")
	wait_for 30 holding "$1" "$h" || fail "$1 held no segment within 30 s"
}

t_start() {
	shape "$A" "$B"
	mpip_twolink_warm_up
	iperf_start "$A" "$B" 10.1.1.2 5201
	iperf_start "$B" "$A" 10.1.1.1 5202
	wait_holding "$B"
	wait_holding "$A"
	echo "held so far: A $(held "$A"), B $(held "$B")"
}

t_netns_delete() {
	local i q qa qb
	for i in 1 2; do
		q=${P}n$i
		qa=${q}a
		qb=${q}b
		"$TOPO" twolink --prefix "$q"
		cleanup_push "$TOPO" clean --prefix "$q"
		shape "$qa" "$qb"
		iperf_start "$qa" "$qb" 10.1.1.2 5401
		iperf_start "$qb" "$qa" 10.1.1.1 5402
		wait_holding "$qb"
		# the receiver's namespace goes first, then the sender's
		"$TOPO" clean --prefix "$q"
		! ip netns list | grep -q "^$qb\b" || fail "$qb still exists"
	done
	# the namespaces' cleanup runs in a work item: let it finish
	sleep 5
}

t_rmmod() {
	local i
	for i in 1 2; do
		wait_holding "$B"
		timeout 60 rmmod mpip || fail "rmmod failed or hung (round $i)"
		! mpip_loaded || fail "module still loaded"
		flowing "$B" eth1
		mpip_load || fail "module did not load again"
		wait_for 20 mpip_avail_is "$A" 10.1.1.2 5201 yes ||
			fail "A did not find B again (round $i)"
		shape "$A" "$B"
	done
	wait_holding "$B"
}

t_survived() {
	local f pid
	for f in "$T"/iperf.*.pid; do
		pid=$(cat "$f")
		kill -0 "$pid" || { cat "${f%.pid}"; fail "iperf3 ${f%.pid} exited early"; }
		! grep -qi 'error' "${f%.pid}" || fail "iperf3 ${f%.pid} reported an error"
		kill -INT "$pid"
		wait_for 10 bash -c "! kill -0 $pid" || kill -KILL "$pid"
	done
	random_file "$T/last" 2
	tcp_send_file "$A" "$B" 10.1.1.2 5501 "$T/last" "$T/last.out"
	sha256_equal "$T/last" "$T/last.out" || fail "final transfer differs"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 5
	ktap_run flows_with_held_segments t_start
	ktap_run netns_delete_under_load t_netns_delete
	ktap_run rmmod_with_segments_held t_rmmod
	ktap_run flows_survived t_survived
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
