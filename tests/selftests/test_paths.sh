#!/usr/bin/env bash
# test_paths.sh - paths, delay feedback, heartbeats and weights (paper
# §3.4.2, §3.4.4, §3.5) between two MPIP hosts joined by two links:
#  - one-way UDP is their first traffic: the receiving application never
#    sends, yet the receiving host sends heartbeats back, the sender gets
#    delay feedback for both paths and, once both are up, spreads the
#    stream over both links;
#  - `mpipctl -j show paths|sessions` is valid JSON with every documented
#    field;
#  - while iperf3 runs A -> B, 20 ms of extra delay on the link whose path
#    weighs more raises that path's queueing delay (one-way delay minus its
#    minimum, reported by the peer) and Algorithm 1 makes it weigh less
#    than the other path;
#  - a light flow over paths whose fixed delays differ by 20 ms goes over
#    the shorter one alone: the ties park the longer (weight 0).
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink pa
MIN_PCT=20
command -v iperf3 >/dev/null || ktap_skip_all "missing iperf3"

t_defaults() {
	mpipctl_in "$A" -j get | tee "$T/cfg"
	jq -e '.heartbeat_ms == 300 and .path_timeout_ms == 500 and
		.weight_step == 10 and .weight_interval_ms == 100 and
		.weight_trend_ms == 500 and .weight_boost == 3 and
		.bare_cm_ms == 10 and .weight_tie_us == 2000' "$T/cfg" >/dev/null ||
		fail "unexpected defaults"
}

t_empty() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths "$ns" | jq -e 'type == "array" and length == 0' >/dev/null ||
			fail "$ns: path table not an empty JSON array before any traffic"
		mpip_sessions "$ns" | jq -e 'type == "array" and length == 0' >/dev/null ||
			fail "$ns: session table not an empty JSON array before any traffic"
	done
}

# 2000 datagrams of 1..1400 bytes over a few seconds, one way only, twice:
# first while A finds its paths (every datagram must arrive; how much of
# it the second link carries depends on how soon its path came up, so the
# split is only printed), then, with both of A's paths up, again on the
# same flow: now each link carries at least MIN_PCT % of it
t_oneway() {
	mpip_spread "$A" "$B" 0 udp_stream "$A" "$B" 10.1.1.2 6200 2000 7200 1000 ||
		fail "the first stream carried no bytes"
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpip_spread "$A" "$B" "$MIN_PCT" udp_stream "$A" "$B" 10.1.1.2 6200 2000 7200 1000
}

t_heartbeats() {
	local bad=0
	mpip_stats_check "$B" '.tx_heartbeat >= 5 and .tx_feedback >= 5' || bad=1
	mpip_stats_check "$A" '.rx_heartbeat >= 5 and .rx_feedback >= 5' || bad=1
	((bad == 0)) || fail "fewer than 5 heartbeats / delay reports from B to A"
}

# A, the sender, has delay feedback for both paths, and used both
t_sender_feedback() {
	local paths
	paths=$(mpip_paths "$A")
	jq -r '.[] | "\(.saddr) -> \(.daddr) \(.state) w=\(.weight) have_delay=\(.have_delay) fb=\(.feedback) tx=\(.tx_pkts)"' <<<"$paths"
	jq -e 'def p($s; $d): [.[] | select(.saddr == $s and .daddr == $d)] |
			length == 1 and (.[0] | .state == "up" and .have_delay and
				.feedback >= 2 and .tx_pkts > 100);
		p("10.1.1.1"; "10.1.1.2") and p("10.1.2.1"; "10.1.2.2")' <<<"$paths" >/dev/null ||
		fail "A: a path is not up, lacks delay feedback or carried no data"
}

# the receiver's session: confirmed, with the same ID as the sender's
t_session() {
	local sa sb
	sa=$(mpip_session_json "$A" udp 7200 6200) || fail "A: no single session 7200 -> 6200"
	sb=$(mpip_session_json "$B" udp 6200 7200) || fail "B: no single session 6200 -> 7200"
	echo "A: $sa"
	echo "B: $sb"
	jq -e --argjson b "$sb" '.id == $b.id and .confirmed and $b.confirmed and
		.tx_pkts > 0 and $b.rx_pkts > 0' <<<"$sa" >/dev/null ||
		fail "the two ends disagree about the session"
}

# every path object has exactly the documented fields, each of its type
PATH_SCHEMA='
def ip: type == "string" and test("^[0-9]{1,3}(\\.[0-9]{1,3}){3}$");
def u: type == "number" and . >= 0 and . == floor;
type == "array" and length > 0 and all(.[];
	(keys == (["node_id", "id", "saddr", "daddr", "ifindex", "dev", "state",
		"weight", "have_delay", "min_delay_us", "delay_us", "qdelay_us",
		"max_qdelay_us", "tx_pkts", "tx_bytes", "rx_pkts", "rx_bytes",
		"feedback", "fb_age_ms", "verified", "nat", "seen", "encap",
		"dport", "learned", "tier", "metered", "loss_pct", "lossy",
		"cold", "rtt_us", "timeout_ms", "mtu"] |
		sort)) and
	(.node_id | type == "string" and test("^0x[0-9a-f]{8}$")) and
	(.id | u and . >= 1 and . <= 16) and
	(.saddr | ip) and (.daddr | ip) and (.ifindex | u) and
	(.dev == null or (.dev | type == "string")) and
	(.state | IN("noroute", "probing", "up", "down")) and
	(.weight | u and . <= 1000) and
	(.have_delay | type == "boolean") and
	all(.min_delay_us, .delay_us, .qdelay_us, .max_qdelay_us, .tx_pkts,
		.tx_bytes, .rx_pkts, .rx_bytes, .feedback; u) and
	(.fb_age_ms == null or (.fb_age_ms | u)) and
	(.have_delay or (.qdelay_us == 0 and .max_qdelay_us == 0)) and
	(.qdelay_us <= .max_qdelay_us) and
	(.verified | type == "boolean") and (.nat | type == "boolean") and
	(.seen == null or (.seen | type == "string" and
		test("^[0-9]{1,3}(\\.[0-9]{1,3}){3}:[0-9]{1,5}$"))) and
	(.encap | IN("none", "udp")) and
	(.dport | u and . >= 1 and . <= 65535) and
	(.learned | type == "boolean") and
	(.tier | u and . <= 7) and (.metered | type == "boolean") and
	(.loss_pct | u and . <= 100) and (.lossy | type == "boolean") and
	(.cold | type == "boolean") and (.metered or (.cold | not)) and
	(.rtt_us == null or (.rtt_us | u and . < 60000000)) and
	(.rtt_us != null or (.have_delay | not)) and
	(.timeout_ms | u and . >= 50) and
	(.mtu == null or (.mtu | u and . >= 68 and . <= 65535)))'

SESSION_SCHEMA='
def ip: type == "string" and test("^[0-9]{1,3}(\\.[0-9]{1,3}){3}$");
def u: type == "number" and . >= 0 and . == floor;
type == "array" and length > 0 and all(.[];
	(keys == (["node_id", "id", "proto", "laddr", "lport", "raddr", "rport",
		"confirmed", "age_ms", "tx_pkts", "rx_pkts"] | sort)) and
	(.node_id | type == "string" and test("^0x[0-9a-f]{8}$")) and
	(.id | u) and (.proto | IN("tcp", "udp")) and
	(.laddr | ip) and (.raddr | ip) and
	(.lport | u and . >= 1 and . <= 65535) and
	(.rport | u and . >= 1 and . <= 65535) and
	(.confirmed | type == "boolean") and
	all(.age_ms, .tx_pkts, .rx_pkts; u))'

t_paths_json() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths "$ns" >"$T/paths.$ns"
		jq -c '.[]' "$T/paths.$ns"
		jq -e "$PATH_SCHEMA" "$T/paths.$ns" >/dev/null ||
			fail "$ns: show paths does not match the documented format"
	done
	# no NAT in this lab: every path that is up was verified, and the peer
	# saw its probes come from its own address and the control port; no
	# path was learned or goes inside UDP; and no link is smaller further
	# on: no path has an MTU from an error
	jq -e -s 'all(.[][]; (.nat | not) and (.state != "up" or
		(.verified and .seen == "\(.saddr):19792")) and
		.encap == "none" and .dport == 19792 and (.learned | not) and
		.mtu == null)' \
		"$T/paths.$A" "$T/paths.$B" >/dev/null ||
		fail "a path is taken for translated or learned, up but not verified, or has an MTU"
	# dev and ifindex agree with the interfaces of the namespace
	ip -n "$A" -j link show >"$T/links"
	jq -e --slurpfile l "$T/links" '
		all(.[] | select(.state != "noroute"); .ifindex as $i | .dev as $d |
			any($l[0][]; .ifindex == $i and .ifname == $d))' \
		"$T/paths.$A" >/dev/null || fail "A: a path's ifindex and dev do not match"
}

t_sessions_json() {
	local ns
	for ns in "$A" "$B"; do
		mpip_sessions "$ns" >"$T/sess.$ns"
		jq -c '.[]' "$T/sess.$ns"
		jq -e "$SESSION_SCHEMA" "$T/sess.$ns" >/dev/null ||
			fail "$ns: show sessions does not match the documented format"
	done
}

t_iperf3() {
	local paths x
	iperf3_server_start "$B" 5201
	ip netns exec "$A" iperf3 -c 10.1.1.2 -p 5201 -t 120 -i 1 --forceflush \
		</dev/null >"$T/iperf3.out" 2>&1 &
	echo $! >"$T/iperf3c.pid"
	wait_for 20 grep -q 'sec' "$T/iperf3.out" || {
		cat "$T/iperf3.out"
		fail "iperf3 client reports no progress"
	}
	sleep 1
	paths=$(mpip_paths "$A")
	jq -r '.[] | "\(.saddr) -> \(.daddr) \(.state) w=\(.weight) q=\(.qdelay_us)us fb=\(.feedback) fb_age=\(.fb_age_ms)"' <<<"$paths"
	# the heavier of the two paths gets the extra delay (link 2 on a tie),
	# so that its weight has to come down
	x=$(jq -r '[.[] | select(.state == "up")] |
		if length != 2 then "none"
		elif (.[] | select(.saddr == "10.1.1.1") | .weight) >
			(.[] | select(.saddr == "10.1.2.1") | .weight) then 1 else 2 end' <<<"$paths")
	[[ $x == [12] ]] || fail "A: not exactly two paths up"
	echo "$x" >"$T/link"
	echo "link $x gets the extra delay"
	# the heavier path has fresh delay feedback
	jq -e --arg s "10.1.$x.1" '.[] | select(.saddr == $s and .state == "up") |
		.have_delay and .feedback > 0 and .fb_age_ms != null and .fb_age_ms < 2000' \
		<<<"$paths" >/dev/null || fail "A: no fresh delay feedback for link $x's path"
}

# qdelay_high NS S D: the path's qdelay is above 10 ms and its maximum too
qdelay_high() {
	mpip_paths "$1" | jq -e --arg s "$2" --arg d "$3" '.[] |
		select(.saddr == $s and .daddr == $d) |
		.qdelay_us > 10000 and .max_qdelay_us > 10000 and .qdelay_us <= .max_qdelay_us'
}

t_qdelay() {
	local x y
	x=$(cat "$T/link")
	y=$((3 - x))
	"$TOPO" netem "$A" "eth$x" -,20ms,-
	"$TOPO" netem "$B" "eth$x" -,20ms,-
	if ! wait_for 20 qdelay_high "$A" "10.1.$x.1" "10.1.$x.2"; then
		mpip_paths_show "$A"
		fail "A: link $x path's qdelay did not rise above 10 ms within 20 s"
	fi
	mpip_paths_show "$B"
	# the undelayed path shows less queueing delay than the delayed one
	mpip_paths "$A" >"$T/paths.q"
	jq -r '.[] | "A: \(.saddr) -> \(.daddr) \(.state) w=\(.weight) q=\(.qdelay_us)us maxq=\(.max_qdelay_us)us"' "$T/paths.q"
	jq -e --arg x "10.1.$x.1" --arg y "10.1.$y.1" '
		([.[] | select(.saddr == $y and .state == "up")][0].qdelay_us) <
		([.[] | select(.saddr == $x and .state == "up")][0].qdelay_us)' \
		"$T/paths.q" >/dev/null || fail "A: link $y path's qdelay is not below link $x's"
}

# lighter NS X: A's path over link X weighs less than the other one
lighter() {
	mpip_paths "$1" | jq -e --arg x "10.1.$2.1" --arg y "10.1.$((3 - $2)).1" '
		([.[] | select(.saddr == $x and .state == "up")][0].weight) <
		([.[] | select(.saddr == $y and .state == "up")][0].weight)'
}

t_weight() {
	local x
	x=$(cat "$T/link")
	if ! wait_for 20 lighter "$A" "$x"; then
		mpip_paths_show "$A"
		fail "A: link $x path does not weigh less than the other within 20 s"
	fi
	mpip_paths_show "$A"
	mpip_paths_in "$A" up "10.1.$x.1:10.1.$x.2" || fail "A: link $x path no longer up"
}

t_stop() {
	local pid
	pid=$(cat "$T/iperf3c.pid")
	tail -n 3 "$T/iperf3.out"
	kill -0 "$pid" || fail "iperf3 client exited early"
	kill -INT "$pid"
	wait_for 10 bash -c "! kill -0 $pid" || kill -KILL "$pid"
	! grep -qi 'error' "$T/iperf3.out" || fail "iperf3 reported an error"
}

# parked NS X: NS's path over link X is up and parked (weight 0)
parked() {
	mpip_paths "$1" | jq -e --arg x "10.1.$2.1" '
		[.[] | select(.saddr == $x and .state == "up")] |
		length == 1 and .[0].weight == 0' >/dev/null
}

# A light flow (50 datagrams of 200 bytes a second for 24 s) over the two
# links, link X now 20 ms longer each way: nothing queues, so the ties
# give the flow to the short link and park the long one (weight 0; at the
# minimum weight of 1 it would still take a datagram now and then, late).
# Every datagram arrives; once the path is parked, link X carries at most
# a few of them (a jittery round may give it S for a round or two).  The
# tables are flushed first: the paths' minimum delays, learned before
# the 20 ms, would make link X's path queue 20 ms for good, a matter for
# Algorithm 1, not the ties.
t_park() {
	local x y pid nx ny ns
	x=$(cat "$T/link")
	y=$((3 - x))
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" flush >/dev/null || fail "$ns: mpipctl flush failed"
	done
	UDP_SIZE=200 udp_exchange "$A" "$B" 10.1.1.2 6300 1200 7300 20000 \
		>"$T/park.out" 2>&1 &
	pid=$!
	if ! wait_for 20 parked "$A" "$x"; then
		mpip_paths_show "$A"
		wait "$pid" || true
		fail "A: link $x path not parked within 20 s of a light flow"
	fi
	mpip_paths_show "$A"
	capture_start "$A" "eth$x" "park$x" "udp dst port 6300"
	capture_start "$A" "eth$y" "park$y" "udp dst port 6300"
	if ! wait "$pid"; then
		cat "$T/park.out"
		fail "the light flow lost datagrams"
	fi
	cat "$T/park.out"
	nx=$(capture_count "park$x")
	ny=$(capture_count "park$y")
	echo "after parking: $nx datagrams over link $x, $ny over link $y"
	((ny >= 200)) || fail "link $y carried $ny datagrams of the light flow after parking"
	((nx * 20 <= ny)) || fail "link $x carried $nx datagrams while parked (link $y: $ny)"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 14
ktap_run path_tunable_defaults t_defaults
ktap_run tables_empty_before_traffic t_empty
ktap_run udp_oneway_uses_both_links t_oneway
ktap_run receiver_sends_heartbeats t_heartbeats
ktap_run sender_has_feedback_on_both_paths t_sender_feedback
ktap_run oneway_session_confirmed t_session
ktap_run paths_json_format t_paths_json
ktap_run sessions_json_format t_sessions_json
ktap_run iperf3_feedback_on_heavier_path t_iperf3
ktap_run delay_20ms_raises_qdelay t_qdelay
ktap_run delayed_path_weighs_less t_weight
ktap_run iperf3_ran_throughout t_stop
ktap_run light_flow_parks_longer_path t_park
ktap_run dmesg_clean t_dmesg
ktap_finish
