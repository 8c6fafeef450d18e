#!/usr/bin/env bash
# test_probe.sh - a new peer's paths are probed as soon as they exist, not
# at the next heartbeat: with heartbeat_ms at its maximum (10 s), the
# first datagram between two fresh MPIP hosts must bring both paths of
# each host up before a second heartbeat round could have probed them.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink pr
HB_MS=10000

# all_up NS PATH...: each listed path of NS is up
all_up() { mpip_paths_in "$@"; }

# heartbeat_ms is set before the hosts know each other (their ticks do
# not run then).  From the first datagram (t0), the paths must be up
# within 9 s: the first contact probes them (the new node's paths, and
# the tick's first round), and anything the first round missed would wait
# for the next heartbeat, 10 s later.  The datagram is written by the
# shell itself: no program to start between t0 and the packet.
t_early() {
	local t0 ns left
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set heartbeat_ms "$HB_MS"
	done
	t0=$(date +%s%N)
	in_ns "$A" bash -c 'echo hello >/dev/udp/10.1.1.2/6300'
	left=$(((t0 + 9000000000 - $(date +%s%N)) / 1000000000))
	((left >= 1)) || fail "sending one datagram took over 8 s"
	if ! MPIP_TEST_WAIT_SCALE=1 wait_for "$left" all_up "$A" up 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2 ||
		! all_up "$B" up 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1; then
		mpip_paths_show "$A" >&2 || true
		mpip_paths_show "$B" >&2 || true
		fail "paths not all up within 9 s with heartbeat_ms $HB_MS"
	fi
	echo "all paths of both hosts up $((($(date +%s%N) - t0) / 1000000)) ms after t0"
}

t_hb_set() {
	local ns
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" -j get | jq -e --argjson hb "$HB_MS" '.heartbeat_ms == $hb' >/dev/null ||
			fail "$ns: heartbeat_ms is not $HB_MS"
	done
	mpip_paths_show "$A"
	mpip_paths_show "$B"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 3
ktap_run new_paths_up_before_first_heartbeat t_early
ktap_run heartbeat_ms_was_10s t_hb_set
ktap_run dmesg_clean t_dmesg
ktap_finish
