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
source "$(dirname "$0")/stress_lib.sh"

mpip_setup_twolink ul
cleanup_push mpip_load

t_netns_delete() {
	local i q qa qb
	for i in 1 2; do
		q=${P}n$i
		qa=${q}a
		qb=${q}b
		"$TOPO" twolink --prefix "$q"
		cleanup_push "$TOPO" clean --prefix "$q"
		shape "$qa" "$qb"
		# the new lab answers (ARP) before iperf3 connects: under the
		# debug kernel's load its first connect once failed with "No
		# route to host"
		wait_for 20 in_ns "$qa" ping -c 1 -W 2 -q 10.1.1.2 >/dev/null ||
			fail "$qa cannot reach $qb"
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
		# one module serves both namespaces: segments held in either
		# are what the unload meets (the flow into B once backed off
		# for over 30 s after a reload, while A held thousands)
		wait_holding "$A" "$B"
		# (rmmod waits for grace periods, which take minutes under the
		# debug kernel's load: the limit is scaled as the waits are)
		timeout $((60 * ${MPIP_TEST_WAIT_SCALE:-1})) rmmod mpip ||
			fail "rmmod failed or hung (round $i)"
		! mpip_loaded || fail "module still loaded"
		flowing "$B" eth1
		mpip_load || fail "module did not load again"
		wait_for 20 mpip_avail_is "$A" 10.1.1.2 5201 yes ||
			fail "A did not find B again (round $i)"
		shape "$A" "$B"
	done
	wait_holding "$A" "$B"
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
