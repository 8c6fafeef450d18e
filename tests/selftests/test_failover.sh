#!/usr/bin/env bash
# test_failover.sh - paths change under a long TCP transfer between two
# MPIP hosts (two links shaped to 2 Mbit/s each), which never breaks and
# whose data arrives intact:
#  - link 2 fails: the paths over it go "down" (A: its interface went
#    down; B: its interface lost carrier and no feedback comes back), the
#    transfer goes on over link 1; once link 2 is back it is probed, comes
#    up and carries data again;
#  - then B's eth2 address changes from 10.1.2.2 to 10.1.2.22 (not the
#    address the connection uses): B tells A (IP_CHANGE), both rebuild
#    their paths, the paths to and from the new address come up and carry
#    data, nothing refers to the old address any more, and the session
#    keeps its ID;
#  - after the transfer, B's eth2 address changes again while every
#    control packet from B to A is dropped: B's first IP_CHANGE is lost,
#    and A learns the new address from the rounds that follow.
# TIMEOUT: 420
# (about 69 s alone in one guest; 181 s in a loaded run: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink fo
PORT=5100
OUT=$T/out

t_setup() {
	local ns dev
	for ns in "$A" "$B"; do
		for dev in eth1 eth2; do
			mpip_shape "$ns" "$dev" 2mbit 1ms 40
		done
	done
	random_file "$T/block" 1
	head -c 100000 /dev/urandom >"$T/small"
	tcp_send_file "$A" "$B" 10.1.1.2 4999 "$T/small" "$T/small.out"
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1
}

# running: the stream still runs (a failed connection ends it early)
running() {
	! tcp_stream_done "$OUT" || {
		cat "$OUT.slog" "$OUT.rlog" 2>/dev/null
		fail "the TCP stream ended ($(file_size "$OUT") bytes arrived)"
	}
}

t_start() {
	local dev r s
	tcp_stream_bg "$A" "$B" 10.1.1.2 "$PORT" "$T/block" "$OUT"
	wait_for 30 file_grew "$OUT" 0 300000 ||
		fail "less than 300 kB arrived in 30 s"
	for dev in eth1 eth2; do
		r=$(rx_bytes "$B" "$dev")
		wait_for 10 dev_rx_grew "$B" "$dev" "$r" 150000 ||
			fail "B $dev received less than 150 kB in 10 s"
	done
	running
	echo "$(file_size "$OUT") bytes arrived so far"
	s=$(mpip_session_json "$A" tcp 0 "$PORT") || {
		mpip_sessions "$A"
		fail "A: no single session towards port $PORT"
	}
	echo "A's session: $s"
	jq -e .confirmed <<<"$s" >/dev/null || fail "session not confirmed"
	jq .id <<<"$s" >"$T/sid"
	jq .lport <<<"$s" >"$T/lport"
}

t_down() {
	"$TOPO" down "$A" eth2
	# A: its interface went down
	if ! wait_for 10 mpip_path_is "$A" 10.1.2.1 10.1.2.2 down; then
		mpip_paths_show "$A"
		fail "A: path 10.1.2.1 -> 10.1.2.2 over the downed eth2 not in state down (or missing) after 10 s"
	fi
	# B: its eth2 lost carrier, and no feedback comes back over it
	if ! wait_for 10 mpip_path_is "$B" 10.1.2.2 10.1.2.1 down; then
		mpip_paths_show "$B"
		fail "B: path 10.1.2.2 -> 10.1.2.1 over link 2 not in state down (or missing) after 10 s"
	fi
	mpip_paths_show "$A"
	mpip_paths_show "$B"
}

t_survives() {
	local s0 r1
	running
	s0=$(file_size "$OUT")
	r1=$(rx_bytes "$B" eth1)
	wait_for 20 file_grew "$OUT" "$s0" 600000 ||
		fail "less than 600 kB arrived in 20 s over link 1 alone ($(($(file_size "$OUT") - s0)) bytes)"
	# Not at once: some of what the file grew by had arrived before r1
	# (B's socket and reorder buffers), and arrives on link 1 meanwhile.
	wait_for 10 dev_rx_grew "$B" eth1 "$r1" 600000 ||
		fail "the data did not come over link 1 ($(($(rx_bytes "$B" eth1) - r1)) bytes in all)"
	mpip_paths_in "$A" up 10.1.1.1:10.1.1.2 || fail "A: link 1 path not up"
	mpip_paths_in "$B" up 10.1.1.2:10.1.1.1 || fail "B: link 1 path not up"
	running
	echo "$(file_size "$OUT") bytes arrived so far"
}

t_back() {
	local r2
	running
	"$TOPO" up "$A" eth2
	r2=$(rx_bytes "$B" eth2)
	if ! wait_for 15 dev_rx_grew "$B" eth2 "$r2" 300000; then
		mpip_paths_show "$A"
		mpip_paths_show "$B"
		fail "link 2 carried less than 300 kB in the 15 s after coming back"
	fi
	running
	mpip_wait_paths_up "$A" 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.2.2:10.1.2.1
	mpip_paths_show "$A"
	mpip_paths_show "$B"
}

t_change() {
	local tx rx
	tx=$(mpip_stat "$B" tx_ip_change)
	rx=$(mpip_stat "$A" rx_ip_change)
	echo "before: B tx_ip_change $tx, A rx_ip_change $rx"
	running
	ip -n "$B" -batch - <<-EOF
		addr del 10.1.2.2/24 dev eth2
		addr add 10.1.2.22/24 dev eth2
	EOF
	ip -n "$B" -br addr show dev eth2
	wait_for 10 mpip_stat_ge "$B" tx_ip_change $((tx + 1)) ||
		fail "B sent no IP_CHANGE within 10 s"
	wait_for 10 mpip_stat_ge "$A" rx_ip_change $((rx + 1)) ||
		fail "A got no IP_CHANGE within 10 s"
}

# no_old_addr NS: no path of NS refers to 10.1.2.2 any more
no_old_addr() {
	mpip_paths "$1" | jq -e 'all(.[]; .saddr != "10.1.2.2" and .daddr != "10.1.2.2")'
}

t_new_paths() {
	mpip_wait_paths_up "$A" 10.1.2.1:10.1.2.22
	mpip_wait_paths_up "$B" 10.1.2.22:10.1.2.1
	wait_for 10 no_old_addr "$A" || {
		mpip_paths_show "$A"
		fail "A still has paths to the old address 10.1.2.2"
	}
	wait_for 10 no_old_addr "$B" || {
		mpip_paths_show "$B"
		fail "B still has paths from the old address 10.1.2.2"
	}
	mpip_paths_show "$A"
	mpip_paths_show "$B"
	# four pairs again: link 1's not disturbed, the new one up, the
	# cross pairs noroute
	mpip_paths_in "$A" up 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.22 ||
		fail "A: expected 10.1.1.1 -> 10.1.1.2 and 10.1.2.1 -> 10.1.2.22 up"
	mpip_paths_in "$A" noroute 10.1.1.1:10.1.2.22 10.1.2.1:10.1.1.2 ||
		fail "A: expected the cross pairs noroute"
	mpip_paths_in "$B" up 10.1.1.2:10.1.1.1 10.1.2.22:10.1.2.1 ||
		fail "B: expected 10.1.1.2 -> 10.1.1.1 and 10.1.2.22 -> 10.1.2.1 up"
}

t_new_path_used() {
	local r2
	running
	r2=$(rx_bytes "$B" eth2)
	wait_for 15 dev_rx_grew "$B" eth2 "$r2" 300000 ||
		fail "B eth2 received less than 300 kB in 15 s with its new address"
	wait_for 5 mpip_path_gt "$A" 10.1.2.1 10.1.2.22 tx_pkts 100 ||
		fail "A sent no data on the path to 10.1.2.22"
	running
	echo "A -> 10.1.2.22: $(mpip_path_get "$A" 10.1.2.1 10.1.2.22 tx_pkts) packets"
}

t_intact() {
	running
	tcp_stream_end "$T/block" "$OUT" 60
}

# both ends still hold the transfer's session, with the same ID as before:
# looked at while the stream runs (after it, the stream's check, a cat
# per copy, took over two minutes on the debug kernel, and the session,
# idle for session_timeout_ms by then, was gone)
t_session_kept() {
	local sid lport sa sb
	running
	sid=$(cat "$T/sid")
	lport=$(cat "$T/lport")
	sa=$(mpip_session_json "$A" tcp "$lport" "$PORT") || fail "A lost the session"
	sb=$(mpip_session_json "$B" tcp "$PORT" "$lport") || fail "B lost the session"
	echo "A: $sa"
	echo "B: $sb"
	jq -e --argjson id "$sid" '.id == $id and .laddr == "10.1.1.1" and .raddr == "10.1.1.2"' \
		<<<"$sa" >/dev/null || fail "A's session changed (id was $sid)"
	jq -e --argjson id "$sid" '.id == $id and .laddr == "10.1.1.2" and .raddr == "10.1.1.1"' \
		<<<"$sb" >/dev/null || fail "B's session changed (id was $sid)"
}

t_counters() {
	local ns bad=0
	# two paths came up at the start, one again at the end
	for ns in "$A" "$B"; do
		mpip_stats_check "$ns" '.path_down >= 1 and .path_up >= 3' || bad=1
	done
	((bad == 0)) || fail "path transitions not counted"
}

# b_chatter SECONDS: B sends A a datagram every 0.5 s for SECONDS (in the
# background), which keeps B's node for A active
b_chatter() {
	in_ns "$B" /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.2", 6300))
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    s.sendto(b"still here", ("10.1.1.1", 6300))
    time.sleep(0.5)' "$1" &
	CHATTER=$!
	cleanup_push kill "$CHATTER"
}

# a_has_path_to ADDR: A has a path to B's ADDR
a_has_path_to() {
	mpip_paths "$A" | jq -e --arg d "$1" 'any(.[]; .daddr == $d)' >/dev/null
}

# B's first IP_CHANGE is lost (A drops every control packet from B until
# B counted one sent): A learns the address from a later round.  B's
# node for A must stay active meanwhile (an idle node is told its peer's
# addresses only once active again), so B chatters all along: for 30 s,
# times the waits' scale (on the debug kernel, 30 s ended before B's
# later rounds, and A never learned the address)
t_lost_change() {
	local tx rx rx1
	b_chatter $((30 * ${MPIP_TEST_WAIT_SCALE:-1}))
	sleep 2
	ip netns exec "$A" nft -f - <<'NFT'
table inet fotest {
	chain in {
		type filter hook prerouting priority -500;
		ip saddr 10.1.0.0/16 udp sport 19792 udp dport 19792 drop
	}
}
NFT
	tx=$(mpip_stat "$B" tx_ip_change)
	rx=$(mpip_stat "$A" rx_ip_change)
	ip -n "$B" -batch - <<-EOF
		addr del 10.1.2.22/24 dev eth2
		addr add 10.1.2.23/24 dev eth2
	EOF
	wait_for 10 mpip_stat_ge "$B" tx_ip_change $((tx + 1)) || {
		ip netns exec "$A" nft delete table inet fotest
		fail "B sent no IP_CHANGE within 10 s"
	}
	rx1=$(mpip_stat "$A" rx_ip_change)
	ip netns exec "$A" nft delete table inet fotest
	((rx1 == rx)) || fail "A received an IP_CHANGE through the drop rule"
	wait_for 15 a_has_path_to 10.1.2.23 || {
		mpip_paths_show "$A"
		fail "A never learned 10.1.2.23: the lost IP_CHANGE was not sent again"
	}
	echo "B: tx_ip_change +$(($(mpip_stat "$B" tx_ip_change) - tx)); A: rx_ip_change +$(($(mpip_stat "$A" rx_ip_change) - rx))"
	kill "$CHATTER" 2>/dev/null || true
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 13
ktap_run shaped_links_paths_up t_setup
ktap_run transfer_uses_both_links t_start
ktap_run link2_down_paths_down t_down
ktap_run transfer_goes_on_over_link1 t_survives
ktap_run link2_back_carries_data_again t_back
ktap_run b_eth2_address_changed_peer_told t_change
ktap_run paths_rebuilt_for_new_address t_new_paths
ktap_run new_address_carries_data t_new_path_used
ktap_run session_kept_its_id t_session_kept
ktap_run transfer_intact t_intact
ktap_run path_counters t_counters
ktap_run lost_ip_change_sent_again t_lost_change
ktap_run dmesg_clean t_dmesg
ktap_finish
