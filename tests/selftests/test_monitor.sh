#!/usr/bin/env bash
# test_monitor.sh - events (issue 23): `mpipctl monitor` prints a peer
# found and both paths up when a pair starts talking, a path down when its
# interface goes down and up again when it returns, each once and in that
# order; `mpipctl -j monitor` prints one JSON object a line; the kernel's
# ynl CLI, subscribed to the family's "events" group with the YAML spec,
# decodes the same events; a namespace with nobody listening builds none
# (event_drop stays 0).  Two hosts joined by two links (topo.sh twolink).
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

YNL=$REPO/build/ynl/tools/net/ynl/cli.py
SPEC=$REPO/Documentation/netlink/specs/mpip.yaml

mpip_setup_twolink mo

# genl_members NS: how many generic netlink sockets of NS are members of
# a multicast group (first 32 groups: the Groups column of
# /proc/net/netlink)
genl_members() {
	in_ns "$1" cat /proc/net/netlink | awk '$2 == 16 && $4 != "00000000"' | wc -l
}

# genl_listening NS N: at least N such sockets
genl_listening() { (($(genl_members "$1") >= $2)); }

# mon_start NS FILE [ARGS]: mpipctl ARGS monitor in NS, in the background,
# writing to FILE (its pid in FILE.pid: lib.sh kills it at exit); returns
# once it listens
mon_start() {
	local ns=$1 out=$2 n
	shift 2
	n=$(genl_members "$ns")
	# appending: the file may be emptied while the monitor writes to it
	in_ns "$ns" "$MPIPCTL" "$@" monitor >>"$out" 2>"$out.err" &
	echo $! >"$out.pid"
	wait_for 15 genl_listening "$ns" $((n + 1)) ||
		fail "mpipctl monitor not listening after 15 s: $(cat "$out.err")"
}

mon_stop() { kill "$(cat "$1.pid")" 2>/dev/null || true; }

# has FILE JQ: some line of FILE (JSON) matches JQ
has() { jq -e -s "any(.[]; $2)" "$1" >/dev/null; }

t_quiet() {
	# nobody listens yet: no event is built, none dropped
	mpip_twolink_warm_up
	[[ $(mpip_stat "$A" event_drop) == 0 ]] || fail "events dropped with nobody listening"
	mpipctl_in "$A" flush
	mpipctl_in "$B" flush
}

t_found_and_up() {
	mon_start "$A" "$T/ev" -j
	mon_start "$A" "$T/ev.txt"
	mpip_twolink_warm_up
	wait_for 10 has "$T/ev" '.event == "path_up" and .daddr == "10.1.2.2"' ||
		fail "no path_up for 10.1.2.1 -> 10.1.2.2: $(cat "$T/ev")"
	cat "$T/ev" "$T/ev.txt"
	jq -e -s --arg peer "$(mpip_peer_node "$A" "$B")" '
		([.[] | select(.event == "peer_found")] | length == 1 and
		 .[0].node_id == $peer) and
		([.[] | select(.event == "path_up") | [.saddr, .daddr, .dev, .state]] |
		 unique == [["10.1.1.1", "10.1.1.2", "eth1", "up"],
			  ["10.1.2.1", "10.1.2.2", "eth2", "up"]]) and
		(.[0].event == "peer_found")' "$T/ev" >/dev/null ||
		fail "events not as expected"
	grep -qE '^path_up: 10\.1\.2\.1 -> 10\.1\.2\.2 dev eth2 state up \(node 0x[0-9a-f]+, path [0-9]+\)$' "$T/ev.txt" ||
		fail "text line not as documented: $(cat "$T/ev.txt")"
}

t_down_and_up() {
	: >"$T/ev"
	"$TOPO" down "$A" eth2
	wait_for 10 has "$T/ev" '.event == "path_down" and .daddr == "10.1.2.2"' ||
		fail "no path_down when eth2 went down: $(cat "$T/ev")"
	"$TOPO" up "$A" eth2
	# traffic makes the path come up again within a few heartbeats
	head -c 20000 /dev/urandom >"$T/s2"
	tcp_send_file "$A" "$B" 10.1.1.2 4998 "$T/s2" "$T/s2.out"
	wait_for 15 has "$T/ev" '.event == "path_up" and .daddr == "10.1.2.2"' ||
		fail "no path_up when eth2 came back: $(cat "$T/ev")"
	cat "$T/ev"
	jq -e -s '[.[] | select(.daddr == "10.1.2.2") | .event] ==
		["path_down", "path_up"]' "$T/ev" >/dev/null ||
		fail "not exactly path_down then path_up for eth2's path"
}

t_ynl_events() {
	local n
	[[ -f $YNL ]] || fail "no $YNL (tools/deps.sh unpacks it)"
	n=$(genl_members "$A")
	in_ns "$A" /usr/bin/python3 "$YNL" --spec "$SPEC" --no-schema --output-json \
		--subscribe events --sleep 12 >"$T/ynl" 2>&1 &
	echo $! >"$T/ynl.pid"
	wait_for 15 genl_listening "$A" $((n + 1)) || fail "ynl not subscribed"
	"$TOPO" down "$A" eth2
	sleep 1
	"$TOPO" up "$A" eth2
	wait "$(cat "$T/ynl.pid")" || fail "ynl failed: $(cat "$T/ynl")"
	cat "$T/ynl"
	jq -e '[.[] | select(.name == "event") | .msg |
		select(.event == "path-down" and .path.daddr == "10.1.2.2" and
		       .path.state == "down")] | length == 1' "$T/ynl" >/dev/null ||
		fail "ynl did not decode one path-down event of eth2's path"
}

t_stats() {
	mon_stop "$T/ev"
	[[ $(mpip_stat "$A" event_drop) == 0 ]] || fail "events dropped"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 6
ktap_run no_listener_no_event t_quiet
ktap_run peer_found_and_paths_up t_found_and_up
ktap_run path_down_and_up t_down_and_up
ktap_run ynl_decodes_events t_ynl_events
ktap_run nothing_dropped t_stats
ktap_run dmesg_clean t_dmesg
ktap_finish
