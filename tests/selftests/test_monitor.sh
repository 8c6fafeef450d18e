#!/usr/bin/env bash
# test_monitor.sh - events (issue 23): `mpipctl monitor` prints a peer
# found and both paths up when a pair starts talking, a path down when its
# interface goes down and up again when it returns, each once and in that
# order; `mpipctl -j monitor` prints one JSON object a line; the kernel's
# ynl CLI, subscribed to the family's "events" group with the YAML spec,
# decodes the same events; with rule_event_pkts, a rule's packet count
# reaching its multiples is an event, at most one a second; a namespace
# with nobody listening builds none (event_drop stays 0); 250 events at
# once: at most 100 sent, the rest counted in event_drop.  Two hosts
# joined by two links (topo.sh twolink).
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

YNL=$REPO/build/ynl/tools/net/ynl/cli.py
SPEC=$REPO/Documentation/netlink/specs/mpip.yaml

mpip_setup_twolink mo

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
	wait_for 10 mon_has "$T/ev" '.event == "path_up" and .daddr == "10.1.2.2"' ||
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
	wait_for 10 mon_has "$T/ev" '.event == "path_down" and .daddr == "10.1.2.2"' ||
		fail "no path_down when eth2 went down: $(cat "$T/ev")"
	"$TOPO" up "$A" eth2
	# traffic makes the path come up again within a few heartbeats
	head -c 20000 /dev/urandom >"$T/s2"
	tcp_send_file "$A" "$B" 10.1.1.2 4998 "$T/s2" "$T/s2.out"
	wait_for 15 mon_has "$T/ev" '.event == "path_up" and .daddr == "10.1.2.2"' ||
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
	# (ynl listens for --sleep seconds once it has subscribed.  Starting
	# it, Python and the spec, took more than 15 s in a loaded run:
	# a minute is given to that, and eth2 must go down and up within
	# the 20 s after it)
	in_ns "$A" /usr/bin/python3 "$YNL" --spec "$SPEC" --no-schema --output-json \
		--subscribe events --sleep 20 >"$T/ynl" 2>&1 &
	echo $! >"$T/ynl.pid"
	wait_for 60 genl_listening "$A" $((n + 1)) || fail "ynl not subscribed"
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

# rule_event_pkts 100: a rule that matched 450 datagrams reports reaching
# 400, at most once a second, each event at a higher multiple of 100
t_rule_hits() {
	local t0 secs
	: >"$T/ev"
	mpipctl_in "$A" set rule_event_pkts 100
	mpipctl_in "$A" rule add pref 100 proto udp dport 5400 mode all
	t0=$(date +%s)
	udp_exchange "$A" "$B" 10.1.1.2 5400 450 4400 || fail "UDP datagrams lost"
	wait_for 5 mon_has "$T/ev" '.event == "rule_hits" and .pref == 100 and .pkts >= 400' ||
		fail "no rule_hits event for 400 packets: $(cat "$T/ev")"
	secs=$(($(date +%s) - t0 + 1))
	mpipctl_in "$A" set rule_event_pkts 0
	mpipctl_in "$A" rule flush
	cat "$T/ev"
	jq -e -s --argjson s "$secs" '[.[] | select(.event == "rule_hits")] as $h |
		($h | length) <= $s + 1 and all($h[]; .pref == 100 and .bytes > .pkts) and
		([$h[].pkts / 100 | floor] | . == unique and all(.[]; . >= 1))' "$T/ev" \
		>/dev/null || fail "more than one rule_hits event a second, or not each at a new multiple"
}

t_stats() {
	mon_stop "$T/ev"
	[[ $(mpip_stat "$A" event_drop) == 0 ]] || fail "events dropped"
}

# rules_hit NS FIRST N: rules FIRST..FIRST+N-1 of NS each counted a packet
rules_hit() {
	mpipctl_in "$1" -j show rules | jq -e --argjson a "$2" --argjson n "$3" '
		[.[] | select(.pref >= $a and .pref < $a + $n and .pkts >= 1)] |
		length == $n' >/dev/null
}

# drop_above NS N: NS's event_drop is above N
drop_above() { (($(mpip_stat "$1" event_drop) > $2)); }

# look_over NS FILE D0 N: the monitor's FILE holds N rule_hits events, but
# for those counted in NS's event_drop since it was D0 (the monitor
# prints each event as it comes)
look_over() {
	local got
	got=$(grep -c '"rule_hits"' "$2") || true
	((got + $(mpip_stat "$1" event_drop) - $3 >= $4))
}

# 250 rules that each reached rule_event_pkts make 250 events in one look
# (the datagrams went before rule_event_pkts was set): the namespace sends
# at most MPIP_EVENTS_PER_SEC (100) of them in each second of its limiter
# and counts every other one in event_drop.  A slow kernel's look (a
# debug kernel's, a loaded guest's) may span two of those seconds or
# more: the look lasted at most S seconds, from before rule_event_pkts
# was set until each event was seen sent or dropped, so it touched at
# most floor(S) + 1 of them (one more if an event came in the second
# before: its limiter second may have begun then), and at most 100
# events went in each
t_event_limit() {
	local p d0 got drop t0 t1 cap early=0
	for ((p = 6000; p < 6250; p++)); do
		echo "rule add pref $((p - 5000)) proto udp dport $p mode all"
	done >"$T/rules"
	mpipctl_in "$A" -b "$T/rules"
	# shellcheck disable=SC2016 # the guest's shell expands it
	in_ns "$A" bash -c 'for ((p = 6000; p < 6250; p++)); do
		echo x >/dev/udp/10.1.1.2/$p; done'
	wait_for 10 rules_hit "$A" 1000 250 || fail "not every rule counted its datagram"
	mon_start "$A" "$T/ev.limit" -j
	d0=$(mpip_stat "$A" event_drop)
	sleep 1.1
	[[ ! -s $T/ev.limit && $(mpip_stat "$A" event_drop) == "$d0" ]] || early=1
	t0=$EPOCHREALTIME
	mpipctl_in "$A" set rule_event_pkts 1
	wait_for 10 drop_above "$A" "$d0" ||
		fail "no event dropped: $(wc -l <"$T/ev.limit") events"
	wait_for 20 look_over "$A" "$T/ev.limit" "$d0" 250 ||
		fail "events neither sent nor counted as dropped"
	t1=$EPOCHREALTIME
	cap=$(awk -v a="$t0" -v b="$t1" -v e="$early" 'BEGIN { print 100 * (int(b - a) + 1 + e) }')
	# the monitor prints what was sent before it is stopped
	sleep 1
	mon_stop "$T/ev.limit"
	got=$(jq -s '[.[] | select(.event == "rule_hits")] | length' "$T/ev.limit")
	drop=$(($(mpip_stat "$A" event_drop) - d0))
	mpipctl_in "$A" set rule_event_pkts 0
	mpipctl_in "$A" rule flush
	echo "250 rule events at once: $got sent, $drop dropped; the look lasted at most $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s: at most $cap may go"
	((got >= 1 && got <= cap)) || fail "$got rule events sent in one look, not 1 to $cap"
	((got + drop >= 250)) || fail "events neither sent nor counted as dropped"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 8
ktap_run no_listener_no_event t_quiet
ktap_run peer_found_and_paths_up t_found_and_up
ktap_run path_down_and_up t_down_and_up
ktap_run ynl_decodes_events t_ynl_events
ktap_run rule_hits_at_multiples t_rule_hits
ktap_run nothing_dropped t_stats
ktap_run at_most_100_events_a_second t_event_limit
ktap_run dmesg_clean t_dmesg
ktap_finish
