#!/usr/bin/env bash
# test_backup.sh - backup links (issue 22, MultiMob): `mpipctl link set dev
# eth2 backup` on A.  While the path over eth1 works, A's data stays off
# eth2; when link 1 stops carrying packets with both interfaces up (100 %
# loss both ways, as when a WiFi network loses its uplink: A learns it
# only from missing delay reports), A's data goes over eth2 and the
# stream, whose own addresses are on link 1, goes on; when link 1 is back
# and its path has stayed up for a second, the data returns to it (until
# then it stays on eth2: backup_hold counts those packets).  B
# learns from A's address list (an IP_CHANGE's extension) that A's eth2
# address is a backup, and keeps its own data to A off it too.  Each
# host's `mpipctl monitor` shows the failover to the backup and the
# failback.  Then tiers: eth2 at tier 1 and eth1 at tier 2 take the same
# turns, the events naming the tiers; and B learns a tier above 1 and a
# metered link of A's and keeps off them (the latter under a rule).  Last,
# a metered backup is a cold standby: nothing goes over it until needed.
# TIMEOUT: 600
# (about 53 s alone in one guest before the tiers' subtest, which adds
# about 30 s; 235 s in a loaded run before it: about five times its time
# alone, as a loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink bk

# window_share SECONDS: "E1 E2", the data bytes A sent on its paths over
# eth1 and eth2 in the next SECONDS seconds
window_share() { mpip_window_share "$A" "$1"; }

# backup_why: what both hosts know of their paths and the stream's TCP
# state, when the stream does not do what a check waited for
backup_why() {
	local ns
	date +%T.%N
	for ns in "$A" "$B"; do
		mpip_paths_show "$ns" || true
		mpipctl_in "$ns" -j stats | jq -c --arg ns "$ns" '{ns: $ns,
			path_up, path_down, peer_lost, tx_bare, tx_cm, rx_cm,
			drop_session, rx_spoofed, reorder_held,
			reorder_timeout}' || true
		ip netns exec "$ns" ss -tin '( sport = :5301 or dport = :5301 )' ||
			true
	done
}

# told_backup: A sends B a datagram (to a closed port); B has had an
# IP_CHANGE since $T/b0
told_backup() {
	ip netns exec "$A" bash -c 'echo x >/dev/udp/10.1.1.2/5399' || true
	mpip_stats_since "$B" "$T/b0" '.rx_ip_change > 0'
}

t_setup() {
	random_file "$T/f" 4
	random_file "$T/blk" 1
	mpip_twolink_warm_up
	mpipctl_in "$B" -j stats >"$T/b0"
	mpipctl_in "$A" link set dev eth2 backup
	# B hears of it in an IP_CHANGE round, which goes to a node only
	# while the pair is active (heartbeat.c): 5 s after the warm-up's
	# last packet it is idle, and the checks after the warm-up took that
	# long on the debug kernel (B was told nothing for 100 s).  So A
	# sends B a datagram at every look.
	wait_for 20 told_backup ||
		fail "B got no IP_CHANGE after eth2 became a backup"
	mpipctl_in "$A" -j show links | tee "$T/links"
	jq -e 'map(select(.dev == "eth2"))[0].backup == true and
		map(select(.dev == "eth1"))[0].backup == false' "$T/links" \
		>/dev/null || fail "show links does not show eth2 as backup"
}

# send_split SRC DST ADDR PORT: $T/f from SRC to DST's ADDR, port PORT,
# intact; prints "E1 E2", the bytes SRC sent on its paths over eth1 and
# eth2 meanwhile
send_split() {
	local a0 b0 a1 b1
	read -r a0 b0 <<<"$(mpip_path_tx "$1")"
	tcp_send_file "$1" "$2" "$3" "$4" "$T/f" "$T/g.$4" >&2
	sha256_equal "$T/f" "$T/g.$4" || fail "TCP data to port $4 differs"
	read -r a1 b1 <<<"$(mpip_path_tx "$1")"
	echo "$((a1 - a0)) $((b1 - b0))"
}

# carried_file BYTES: fail unless the paths carried BYTES, at least 95 %
# of the file sent (4 MiB; less on the debug kernel: random_file)
carried_file() {
	(($1 > $(file_size "$T/f") * 95 / 100)) ||
		fail "the paths carried only $1 bytes of the $(file_size "$T/f")"
}

# With the primary working, at most 1 % of A's data bytes on the backup
t_primary_only() {
	local out e1 e2
	out=$(send_split "$A" "$B" 10.1.1.2 5300) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "$(file_size "$T/f") bytes from A: eth1 $e1 bytes, eth2 (backup) $e2 bytes"
	carried_file "$((e1 + e2))"
	((e2 * 100 <= (e1 + e2))) || fail "more than 1 % on the backup link"
	mpip_path_is "$A" 10.1.2.1 10.1.2.2 up || fail "the backup path is not up"
}

# B honours A's backup: its data to A stays off A's eth2 address
t_peer_honours() {
	local out e1 e2
	out=$(send_split "$B" "$A" 10.1.1.1 5303) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "$(file_size "$T/f") bytes from B: to A's eth1 $e1 bytes, to A's eth2 (backup) $e2 bytes"
	carried_file "$((e1 + e2))"
	((e2 * 100 <= (e1 + e2))) || fail "more than 1 % to A's backup link"
}

# link_breaks DEV: with A's stream (to $T/st) running, DEV loses every
# packet both ways; the stream goes on, A's path over DEV goes down, and
# the other link carries over 500 kB in the next 2 s
link_breaks() {
	local s0 e1 e2 other
	"$TOPO" netem "$A" "$1" ",,100%"
	"$TOPO" netem "$B" "$1" ",,100%"
	s0=$(file_size "$T/st")
	wait_for 20 file_grew "$T/st" "$s0" 2000000 || {
		backup_why
		fail "stream stalled after $1 broke"
	}
	wait_for 10 mpip_path_is "$A" "$(dev_addr "$1" 1)" "$(dev_addr "$1" 2)" down ||
		fail "A: path over $1 not down"
	read -r e1 e2 <<<"$(window_share 2)"
	echo "$1 broken, 2 s: eth1 $e1 bytes, eth2 $e2 bytes"
	other=$e2
	[[ $1 == eth2 ]] && other=$e1
	((other > 500000)) || fail "the other link carried only $other bytes"
}

# link_returns DEV: DEV works again; once A's path over it is back up,
# and 2 s after, DEV carries over 500 kB in 3 s, the other link at most
# 2 % of it
link_returns() {
	local e1 e2 on other
	"$TOPO" netem "$A" "$1" ""
	"$TOPO" netem "$B" "$1" ""
	wait_for 20 mpip_path_is "$A" "$(dev_addr "$1" 1)" "$(dev_addr "$1" 2)" up ||
		fail "A: path over $1 not back up"
	sleep 2
	read -r e1 e2 <<<"$(window_share 3)"
	echo "$1 back, 3 s: eth1 $e1 bytes, eth2 $e2 bytes"
	on=$e1 other=$e2
	[[ $1 == eth2 ]] && on=$e2 other=$e1
	((on > 500000)) || fail "$1 carried only $on bytes after its return"
	((other * 100 <= (e1 + e2) * 2)) || fail "the data did not go back to $1"
}

# dev_addr DEV HOST: the address of host HOST (1: A, 2: B) on link DEV
dev_addr() { echo "10.1.${1#eth}.$2"; }

# The primary breaks: the stream goes on over the backup; the primary comes
# back: after a second, the data returns to it
t_failover_and_back() {
	local ha hb ha1 hb1
	trap '"$TOPO" netem "$A" eth1 "" || true; "$TOPO" netem "$B" eth1 "" || true' EXIT
	mon_start "$A" "$T/ev.a" -j
	mon_start "$B" "$T/ev.b" -j
	tcp_stream_bg "$A" "$B" 10.1.1.2 5301 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
	link_breaks eth1
	ha=$(mpip_stat "$A" backup_hold)
	hb=$(mpip_stat "$B" backup_hold)
	link_returns eth1
	# for a second after eth1's path came back, the data stayed on the
	# backup (A's segments and B's ACKs, both streams that never stop)
	ha1=$(mpip_stat "$A" backup_hold)
	hb1=$(mpip_stat "$B" backup_hold)
	echo "backup_hold: A $ha -> $ha1, B $hb -> $hb1"
	((ha1 > ha)) || fail "A's data went back to eth1 as soon as its path came up"
	((hb1 > hb)) ||
		fail "B's data went back to A's eth1 as soon as the path came up"
	tcp_stream_end "$T/blk" "$T/st" 60
	# both hosts' data (A's segments, B's ACKs) failed over and back: a
	# failover event, then a failback, for the peer
	mon_stop "$T/ev.a"
	mon_stop "$T/ev.b"
	failover_events "$A" "$B" "$T/ev.a"
	failover_events "$B" "$A" "$T/ev.b"
}

# failover_events NS PEER FILE: NS's monitor (FILE) printed a failover
# and after it a failback, both for PEER's node
failover_events() {
	local node
	cat "$3"
	node=$(mpip_peer_node "$1" "$2")
	jq -e -s --arg n "$node" '[.[] | select(.node_id == $n) | .event |
		select(. == "failover" or . == "failback")] as $e |
		($e | index("failover")) as $i | $i != null and
		($e[$i:] | index("failback")) != null' "$3" >/dev/null ||
		fail "$1: no failover and then failback event for node $node"
}

# nobackup: both links carry data again
t_nobackup() {
	local out e1 e2
	mpipctl_in "$A" link set dev eth2 nobackup
	out=$(send_split "$A" "$B" 10.1.1.2 5302) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "nobackup, 4 MB: eth1 $e1 bytes, eth2 $e2 bytes"
	((e2 * 5 > (e1 + e2))) || fail "eth2 carried under 20 %"
}

# tier_events FILE: A's monitor (FILE) printed a failover to tier 2 and
# after it a failback to tier 1, for B's node
tier_events() {
	local node
	cat "$1"
	node=$(mpip_peer_node "$A" "$B")
	jq -e -s --arg n "$node" '[.[] | select(.node_id == $n and
		(.event == "failover" or .event == "failback")) | [.event, .tier]]
		as $e | ($e | index([["failover", 2]])) as $i | $i != null and
		($e[$i:] | index([["failback", 1]])) != null' "$1" >/dev/null ||
		fail "A: no failover to tier 2 and then failback to tier 1"
}

# Tiers: eth2 at tier 1, eth1 at tier 2.  A's data goes on eth2, the
# lowest tier with a path up; when eth2 breaks, on eth1; a second after
# eth2 is back, on eth2 again.  The events say the tiers.
t_tiers() {
	local out e1 e2
	trap '"$TOPO" netem "$A" eth2 "" || true; "$TOPO" netem "$B" eth2 "" || true
		mpipctl_in "$A" link set dev eth1 tier 0 || true
		mpipctl_in "$A" link set dev eth2 tier 0 || true' EXIT
	mpipctl_in "$A" link set dev eth1 tier 2
	mpipctl_in "$A" link set dev eth2 tier 1
	mpipctl_in "$A" -j show links | jq -e 'map(select(.dev == "eth1"))[0] |
		.tier == 2 and .backup' >/dev/null || fail "show links does not show eth1 at tier 2"
	out=$(send_split "$A" "$B" 10.1.1.2 5304) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "$(file_size "$T/f") bytes from A: eth1 (tier 2) $e1 bytes, eth2 (tier 1) $e2 bytes"
	carried_file "$((e1 + e2))"
	((e1 * 100 <= (e1 + e2))) || fail "more than 1 % on eth1, the higher tier"
	mon_start "$A" "$T/ev.t" -j
	tcp_stream_bg "$A" "$B" 10.1.1.2 5305 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
	link_breaks eth2
	link_returns eth2
	tcp_stream_end "$T/blk" "$T/st" 60
	mon_stop "$T/ev.t"
	tier_events "$T/ev.t"
}

# b_heard TIER METERED: A sends B a datagram (to a closed port); B's path
# to A's eth2 address has tier TIER and metered METERED (true or false),
# as A's last IP_CHANGE said
b_heard() {
	ip netns exec "$A" bash -c 'echo x >/dev/udp/10.1.1.2/5399' || true
	mpipctl_in "$B" -j show paths | jq -e --argjson t "$1" --argjson m "$2" \
		'map(select(.daddr == "10.1.2.1"))[0] | .tier == $t and
		.metered == $m' >/dev/null
}

# The peer learns tiers above 1 and metered links: with A's eth2 at tier
# 3, B's data to A stays off it; with A's eth2 metered (tier 0 again),
# B's rule with nometered keeps B's data to a port off it.
t_peer_tiers() {
	local out e1 e2
	trap 'mpipctl_in "$A" link set dev eth2 tier 0 nometered || true
		mpipctl_in "$B" rule flush || true' EXIT
	mpipctl_in "$A" link set dev eth2 tier 3 metered
	wait_for 20 b_heard 3 true || {
		mpipctl_in "$B" -j show paths
		fail "B's path to A's eth2 does not have tier 3, metered"
	}
	out=$(send_split "$B" "$A" 10.1.1.1 5306) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "A's eth2 at tier 3: from B, to A's eth1 $e1 bytes, to A's eth2 $e2 bytes"
	carried_file "$((e1 + e2))"
	((e2 * 100 <= (e1 + e2))) || fail "more than 1 % to A's tier 3 link"
	mpipctl_in "$A" link set dev eth2 tier 0
	wait_for 20 b_heard 0 true || fail "B did not hear that eth2 is tier 0"
	mpipctl_in "$B" rule add pref 10 proto tcp dport 5307 mode all nometered
	out=$(send_split "$B" "$A" 10.1.1.1 5307) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "A's eth2 metered, B's rule nometered: to A's eth1 $e1 bytes, to A's eth2 $e2 bytes"
	carried_file "$((e1 + e2))"
	((e2 * 100 <= (e1 + e2))) || fail "more than 1 % to A's metered link"
	out=$(send_split "$B" "$A" 10.1.1.1 5308) || fail "the transfer failed"
	read -r e1 e2 <<<"$out"
	echo "without the rule: to A's eth1 $e1 bytes, to A's eth2 $e2 bytes"
	((e2 * 5 > (e1 + e2))) || fail "A's eth2 carried under 20 % without the rule"
}

# eth2_counter: count the IPv4 packets A's eth2 sends and receives (ARP,
# which an idle neighbour entry may still send, not): a tc filter each
# way, which every kernel of the lab has (the debug kernel has no
# nftables netdev family)
eth2_counter() {
	local dir
	tc -n "$A" qdisc add dev eth2 clsact || return 1
	for dir in ingress egress; do
		tc -n "$A" filter add dev eth2 "$dir" protocol ip pref 1 \
			matchall action pass || return 1
	done
}

# eth2_ip_packets: what eth2_counter counted so far
eth2_ip_packets() {
	local dir out n=0
	for dir in ingress egress; do
		out=$(tc -n "$A" -s filter show dev eth2 "$dir") || return 1
		[[ $out =~ Sent\ [0-9]+\ bytes\ ([0-9]+)\ pkt ]] || return 1
		n=$((n + BASH_REMATCH[1]))
	done
	echo "$n"
}

# eth2_count SECONDS: the IPv4 packets A's eth2 sent and received in the
# next SECONDS seconds
eth2_count() {
	local n0 n1
	n0=$(eth2_ip_packets) || return 1
	sleep "$1"
	n1=$(eth2_ip_packets) || return 1
	echo "$((n1 - n0))"
}

# path_cold NS SADDR DADDR BOOL: NS's path from SADDR to DADDR says cold
# BOOL (true or false) in show paths
path_cold() {
	[[ $(mpip_path_get "$1" "$2" "$3" cold) == "$4" ]]
}

# A cold standby (MultiMob): eth2 a metered backup.  While eth1 works and
# a stream runs, neither host sends anything over eth2, where both probe
# a backup that is not metered at every heartbeat; when eth1 breaks, the
# stream goes over eth2 within the same bounds as a warm backup's; once
# eth1 is back, eth2 is cold again.
t_cold() {
	local warm cold
	trap '"$TOPO" netem "$A" eth1 "" || true; "$TOPO" netem "$B" eth1 "" || true
		tc -n "$A" qdisc del dev eth2 clsact || true
		mpipctl_in "$A" link set dev eth2 tier 0 nometered || true' EXIT
	eth2_counter || fail "cannot count eth2's packets"
	mpipctl_in "$A" link set dev eth2 backup
	wait_for 20 b_heard 1 false || fail "B did not hear that eth2 is a backup"
	tcp_stream_bg "$A" "$B" 10.1.1.2 5309 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
	warm=$(eth2_count 5)
	mpipctl_in "$A" link set dev eth2 metered
	wait_for 20 b_heard 1 true || fail "B did not hear that eth2 is metered"
	path_cold "$A" 10.1.2.1 10.1.2.2 true || fail "A: eth2's path is not cold"
	path_cold "$B" 10.1.2.2 10.1.2.1 true || fail "B: the path to A's eth2 is not cold"
	cold=$(eth2_count 5)
	echo "5 s of the stream: eth2 a backup, $warm packets on it; a metered backup, $cold"
	((warm >= 10)) || fail "a warm backup had only $warm packets in 5 s: no test"
	((cold == 0)) || fail "the cold standby had $cold packets in 5 s"
	link_breaks eth1
	path_cold "$A" 10.1.2.1 10.1.2.2 false || fail "A: eth2's path still cold"
	link_returns eth1
	# B's data (the ACKs) returns to eth1 a second after B's path is up
	wait_for 20 mpip_path_is "$B" 10.1.1.2 10.1.1.1 up ||
		fail "B: path over eth1 not back up"
	sleep 2
	cold=$(eth2_count 5)
	echo "eth1 back: $cold packets on eth2 in 5 s"
	((cold == 0)) || fail "eth2 did not go cold again: $cold packets in 5 s"
	tcp_stream_end "$T/blk" "$T/st" 60
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 9
	ktap_run setup t_setup
	ktap_run primary_carries_the_data t_primary_only
	ktap_run peer_honours_the_backup t_peer_honours
	ktap_run backup_takes_over_and_gives_back t_failover_and_back
	ktap_run nobackup_spreads_again t_nobackup
	ktap_run tiers_order_the_links t_tiers
	ktap_run peer_learns_tiers_and_metered t_peer_tiers
	ktap_run metered_backup_stays_cold t_cold
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
