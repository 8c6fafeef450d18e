#!/usr/bin/env bash
# test_nat.sh - mpip behind two strict NATs (issue 21, the lab first).
# Host A sits behind two masquerading routers (topo.sh nat: conntrack
# verifies checksums and TCP windows, INVALID packets are dropped and
# counted), host B is public, and the "internet" router between them
# drops and counts any packet with a private source address.
# - Without mpip on either host, TCP and UDP cross the NATs intact, no
#   INVALID packet, no leak: the lab itself is sound.
# - With mpip on A only, every datagram of a new UDP flow arrives, the
#   ones carrying queries included (their trailers keep the UDP checksum
#   valid over the whole IP payload, as conntrack checks it), and the NAT
#   finds none of A's datagrams INVALID.  (Before: the first 5 of 300
#   lost, 5 INVALID.)
# - With mpip on both hosts, the handshake of a UDP flow crosses the NAT,
#   every datagram arrives, no packet of it is INVALID at a NAT, each of
#   A's paths is found translated and verified through it, B learns a
#   path back to each NAT's end, and the flow's datagrams go inside UDP
#   over both of A's links; TCP after it stays intact; nothing leaks.
# - TCP both ways (B -> A on a connection A opened), with tx_gso 1 and
#   nat_mode auto, then tx_gso 0 and nat_mode udp:
#   byte-exact, both links of the sender carry data, no packet INVALID at
#   a NAT (TCP queries and sessions cross in carriers, the data inside
#   UDP).
# - A path carries data only once both ends verified it: with A's echoes
#   from n2's end lost at B, A's paths over eth2 pass A's own check but
#   stay unused, and every datagram of a flow arrives over eth1; once
#   the echoes get through, the paths come up and carry data.
# - nat_mode none on both hosts: paths through the NATs unused, nothing
#   inside UDP, UDP and TCP both ways intact on one path, nothing INVALID.
# - The same through a double NAT with random source ports.
# TIMEOUT: 900
# (about 150 s alone on an idle machine; 300 s was not enough in a make
# check whose two guests ran beside a niced kernel build)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

# P, A, B, R (the internet router), T, MARK; the NATs are ${P}n1, ${P}n2
mpip_setup_router_globals nat

# nat_report: the NATs' INVALID drops and the internet's leak count
nat_report() {
	echo "invalid: n1 $(nat_counter "${P}n1" ct_invalid), n2 $(nat_counter "${P}n2" ct_invalid); leak: $(nat_counter "$R" leak)"
}

t_setup() {
	local ns
	"$TOPO" nat --prefix "$P" --link1 40mbit,2ms --link2 20mbit,2ms
	# the routers forward plain IP; the hosts start without mpip
	for ns in "${P}n1" "${P}n2" "$R" "$A" "$B"; do
		mpipctl_in "$ns" disable
	done
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 198.18.3.2 >/dev/null ||
		fail "A cannot reach B through the NAT"
	random_file "$T/f" 2
}

# udp_all PORT: 300 checked datagrams from A to B's eth1 address (through
# n1), a new flow to PORT; all of them arrive
udp_all() {
	UDP_RECV_TIMEOUT=15 udp_exchange "$A" "$B" 198.18.3.2 "$1" 300 $(($1 + 1000)) 2000 ||
		fail "datagrams of a new flow to port $1 lost: $(cat "$(tmpdir)/udp-res.$1")"
}

t_plain() {
	tcp_send_file "$A" "$B" 198.18.3.2 5000 "$T/f" "$T/g.plain"
	sha256_equal "$T/f" "$T/g.plain" || fail "TCP data differs"
	udp_all 6000
	nat_report
	(($(nat_counter "${P}n1" ct_invalid) == 0)) || fail "n1 dropped INVALID packets without mpip"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

# A runs mpip, B does not: A's queries ride on the flow's datagrams
t_udp_legacy() {
	local inv0
	mpipctl_in "$A" enable
	inv0=$(nat_counter "${P}n1" ct_invalid)
	udp_all 6001
	nat_report
	echo "A: $(mpipctl_in "$A" -j stats | jq -c '{tx_query, probe_giveup}')"
	(($(mpip_stat "$A" tx_query) > 0)) || fail "A sent no queries"
	(($(nat_counter "${P}n1" ct_invalid) == inv0)) ||
		fail "n1 found $(($(nat_counter "${P}n1" ct_invalid) - inv0)) of A's datagrams INVALID"
}

# A has paths to B, and each was found translated by one of the NATs,
# verified through it (the answer came back), and goes inside UDP
all_paths_translated() {
	mpip_paths "$A" | jq -e 'length > 0 and all(.[]; .nat and .verified and
		.encap == "udp" and (.learned | not) and
		(.seen | startswith("198.18.1.1:") or startswith("198.18.2.1:")))' >/dev/null
}

# B learned a path back to the NAT's end of each of A's paths, to the
# address and port the NAT gave it (what A's path says B saw), verified,
# inside UDP
all_paths_learned() {
	local a b
	a=$(mpip_paths "$A")
	b=$(mpip_paths "$B")
	jq -n -e --argjson a "$a" --argjson b "$b" '
		($a | length) == 4 and
		([$b[] | select(.learned)] | length) == 4 and
		all($a[]; . as $p | any($b[]; .learned and .verified and
			.encap == "udp" and .saddr == $p.daddr and
			"\(.daddr):\(.dport)" == $p.seen))' >/dev/null
}

# the paths of A and B: ends, state, return routability, encapsulation
paths_brief() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths "$ns" | jq -c '[.[] | {saddr, daddr, dport, state, verified, nat, seen, encap, learned}]'
		mpipctl_in "$ns" -j stats | jq -c '{rr_verified, rr_nat, rr_held, path_learned, tx_encap, rx_encap, rx_encap_bad, tx_heartbeat, rx_heartbeat}'
	done
}

# the growth of counter NAME of NS since its value V0
grown() { echo $(($(mpip_stat "$1" "$2") - $3)); }

# packets A sent inside UDP on its paths over interface DEV
encap_pkts_on() {
	mpip_paths "$A" | jq --arg d "$1" '[.[] | select(.dev == $d) | .tx_pkts] | add'
}

# With mpip on both hosts.  UDP first: its handshake crosses the NAT (the
# control datagrams' checksums hold over the whole IP payload, as
# conntrack checks them), the flow carries CMs, every datagram arrives,
# no NAT finds a packet INVALID.  The peer's answers to A's probes show
# that every path of A's is translated (counted, and an event each for
# mpipctl monitor); the paths are verified through the NATs and carry
# their packets inside UDP; B learned a path back to each NAT's end.
# Both of A's links carried the flow's datagrams.  Then TCP after it,
# byte-exact, and no packet of it INVALID at a NAT either.
t_mpip() {
	local n1 n2 c0 s0 e0 a1 a2
	n1=$(nat_counter "${P}n1" ct_invalid)
	n2=$(nat_counter "${P}n2" ct_invalid)
	mon_start "$A" "$T/ev" -j
	mon_start "$A" "$T/ev.txt"
	mpipctl_in "$B" enable
	c0=$(mpip_stat "$A" rx_confirm)
	s0=$(mpip_stat "$B" rx_spoofed)
	e0=$(mpip_stat "$B" rx_encap)
	a1=$(tx_bytes "$A" eth1)
	a2=$(tx_bytes "$A" eth2)
	UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6002 2000 7002 2000 ||
		fail "datagrams of a UDP flow between mpip hosts lost: $(cat "$(tmpdir)/udp-res.6002")"
	echo "A sent during the UDP flow: eth1 $(($(tx_bytes "$A" eth1) - a1)) B, eth2 $(($(tx_bytes "$A" eth2) - a2)) B"
	nat_report
	mpipctl_in "$A" -j stats | jq -c '{tx_query, rx_confirm, tx_cm, tx_encap, rr_verified, rr_nat, probe_giveup}'
	mpipctl_in "$B" -j stats | jq -c '{rx_query, tx_confirm, rx_cm, rx_encap, rx_encap_bad, path_learned, rx_spoofed, rx_auth_fail, rx_replay}'
	mpip_paths_show "$A" || true
	mpip_paths_show "$B" || true
	(($(grown "$A" rx_confirm "$c0") > 0)) || fail "no confirmation crossed the NAT"
	wait_for 20 all_paths_translated ||
		fail "A's paths through the NATs are not all found translated and verified: $(paths_brief)"
	wait_for 20 all_paths_learned ||
		fail "B did not learn a verified path to each NAT's end of A's paths: $(paths_brief)"
	paths_brief
	(($(mpip_stat "$A" rr_nat) == 4)) || fail "rr_nat is $(mpip_stat "$A" rr_nat), not A's 4 paths"
	(($(mpip_stat "$B" path_learned) == 4)) || fail "path_learned is $(mpip_stat "$B" path_learned), not 4"
	# the datagrams went inside UDP, over both of A's links
	(($(grown "$B" rx_encap "$e0") > 0)) || fail "B received nothing inside UDP"
	(($(mpip_stat "$B" rx_encap_bad) == 0)) || fail "B dropped $(mpip_stat "$B" rx_encap_bad) datagrams inside UDP as bad"
	echo "packets on A's paths: eth1 $(encap_pkts_on eth1), eth2 $(encap_pkts_on eth2)"
	(($(encap_pkts_on eth1) > 0 && $(encap_pkts_on eth2) > 0)) ||
		fail "the flow did not use both of A's links"
	# and a path_nat event said so for each, once
	wait_for 10 mon_has "$T/ev" '.event == "path_nat"' || fail "no path_nat event"
	grep path_nat "$T/ev.txt" || true
	mpip_paths "$A" | jq -e --slurpfile ev "$T/ev" '
		[.[] | [.saddr, .daddr, .seen]] | sort ==
		([$ev[] | select(.event == "path_nat") | [.saddr, .daddr, .seen]] | sort)' >/dev/null ||
		fail "path_nat events differ from A's paths: $(cat "$T/ev")"
	grep -qE '^path_nat: 192\.168\.2\.2 -> 198\.18\.4\.2 dev eth2 state [a-z]+ \(node 0x[0-9a-f]+, path [0-9]+\) seen as 198\.18\.2\.1:[0-9]+$' "$T/ev.txt" ||
		fail "no path_nat line for eth2's path to 198.18.4.2 in the text output"
	mon_stop "$T/ev"
	mon_stop "$T/ev.txt"
	(($(grown "$B" rx_spoofed "$s0") == 0)) || fail "B dropped $(grown "$B" rx_spoofed "$s0") of A's packets as spoofed"
	(($(nat_counter "${P}n1" ct_invalid) == n1 && $(nat_counter "${P}n2" ct_invalid) == n2)) ||
		fail "a NAT found packets of the UDP flow INVALID"

	tcp_send_file "$A" "$B" 198.18.3.2 5002 "$T/f" "$T/g.mpip"
	sha256_equal "$T/f" "$T/g.mpip" || fail "TCP data differs"
	nat_report
	(($(nat_counter "${P}n1" ct_invalid) == n1 && $(nat_counter "${P}n2" ct_invalid) == n2)) ||
		fail "a NAT found packets of the TCP flow INVALID"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

# tcp_both_ways TAG PORT: a file from A to B and one from B to A (A
# connects), through the NATs: byte-exact, no packet INVALID at a NAT,
# each host's two links carry the flow it sends
tcp_both_ways() {
	local tag=$1 port=$2 n1 n2 a1 a2 b1 b2 min
	n1=$(nat_counter "${P}n1" ct_invalid)
	n2=$(nat_counter "${P}n2" ct_invalid)
	min=$(($(stat -c %s "$T/f") / 50))
	a1=$(tx_bytes "$A" eth1)
	a2=$(tx_bytes "$A" eth2)
	tcp_send_file "$A" "$B" 198.18.3.2 "$port" "$T/f" "$T/g.$tag"
	sha256_equal "$T/f" "$T/g.$tag" || fail "$tag: TCP data A -> B differs"
	a1=$(($(tx_bytes "$A" eth1) - a1))
	a2=$(($(tx_bytes "$A" eth2) - a2))
	b1=$(tx_bytes "$B" eth1)
	b2=$(tx_bytes "$B" eth2)
	tcp_fetch_file "$A" "$B" 198.18.3.2 $((port + 1)) "$T/f" "$T/h.$tag"
	sha256_equal "$T/f" "$T/h.$tag" || fail "$tag: TCP data B -> A differs"
	b1=$(($(tx_bytes "$B" eth1) - b1))
	b2=$(($(tx_bytes "$B" eth2) - b2))
	echo "$tag: A -> B sent eth1 $a1 B, eth2 $a2 B; B -> A sent eth1 $b1 B, eth2 $b2 B"
	nat_report
	(($(nat_counter "${P}n1" ct_invalid) == n1 && $(nat_counter "${P}n2" ct_invalid) == n2)) ||
		fail "$tag: a NAT found packets of the TCP flows INVALID"
	((a1 > min && a2 > min)) || fail "$tag: A's data did not go over both links"
	((b1 > min && b2 > min)) || fail "$tag: B's data did not go over both links"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

# TCP both ways through the NATs, with GSO packets kept whole (tx_gso 1,
# the default: those on paths inside UDP are split) and without
t_tcp_gso() {
	tcp_both_ways gso1 5010
	mpip_stats_brief
}

# (this one with nat_mode udp on both hosts: the same, and every path
# that carried data went inside UDP)
t_tcp_nogso() {
	local ns
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set tx_gso 0
		mpipctl_in "$ns" set nat_mode udp
	done
	tcp_both_ways gso0 5020
	mpip_paths "$A" | jq -e '[.[] | select(.tx_pkts > 0 and .verified)] |
		length >= 2 and all(.[]; .encap == "udp")' >/dev/null ||
		fail "with nat_mode udp A's two paths are not both inside UDP"
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set tx_gso 1
		mpipctl_in "$ns" set nat_mode auto
	done
}

# answers_from_n2 add|delete: B drops, and counts, the answers that come
# from n2's end of A's paths: control datagrams of IP length 92 (20 + 8 +
# a CM of 40 bytes with a 24-byte extension: our nonce field, the echo,
# the endpoint seen), before mpip sees them (its hook is at priority
# -399).  A's answers to B's probes of its paths back to n2 are lost, so
# B cannot verify those paths, while A's own probes get through and are
# answered.
answers_from_n2() {
	if [[ $1 == delete ]]; then
		in_ns "$B" nft delete table ip answers
		return
	fi
	in_ns "$B" nft -f - <<-EOF
	table ip answers {
		counter lost { }
		chain pre {
			type filter hook prerouting priority -450; policy accept;
			ip saddr 198.18.2.1 udp dport 19792 ip length 92 counter name lost drop
		}
	}
	EOF
}

answers_lost() {
	ip netns exec "$B" nft -j list counter ip answers lost |
		jq -er '.nftables[] | select(.counter) | .counter.packets'
}

# eth2_paths FILTER: A has two paths over eth2 (through n2), and FILTER
# holds for both
eth2_paths() {
	mpip_paths "$A" | jq -e "[.[] | select(.dev == \"eth2\")] |
		length == 2 and all(.[]; $1)" >/dev/null
}

# A path carries data only once both ends verified it.  Tables flushed,
# B loses every answer that comes from n2's end (answers_from_n2), and a
# UDP flow starts: A's probes over eth2 are answered, so A verifies those
# paths, but B's answers tell it that B has not verified its paths back to
# n2 (they carry B's nonce), and A's echoes of that nonce are lost.  A
# keeps them from data: all datagrams arrive over eth1, none is dropped at
# B as spoofed.  (Before, A moved data onto them as soon as its own check
# passed, and B, which takes data under other addresses only from an
# address it verified itself, dropped it: one datagram now and then when
# A's echo was only late, under load; every datagram on link 2 while it
# was lost.)  Once the answers get through, B verifies, tells A, and A's
# paths over eth2 come up and carry the next flow.
t_answers_lost() {
	local ns s0 e2 pid lost up=0 res=0
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" flush
	done
	s0=$(mpip_stat "$B" rx_spoofed)
	answers_from_n2 add
	UDP_SIZE=1000 UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6020 3000 7020 2000 \
		>"$T/answers.out" 2>&1 &
	pid=$!
	if ! wait_for 30 eth2_paths .verified; then
		answers_from_n2 delete
		wait "$pid" || true
		fail "A did not verify its paths over eth2: $(paths_brief)"
	fi
	# a heartbeat or more for data to move (it did, before)
	sleep 1
	echo "answers from n2's end lost at B: $(answers_lost)"
	paths_brief
	eth2_paths '.state != "up"' || up=1
	lost=$(answers_lost)
	answers_from_n2 delete
	wait "$pid" || res=1
	cat "$T/answers.out"
	if ((up || res)); then
		loss_counters "$B" "$A" "$B"
		((up)) && fail "A's paths over eth2 came up though B could not verify its paths back; the flow: $(cat "$(tmpdir)/udp-res.6020")"
		fail "datagrams of the flow lost: $(cat "$(tmpdir)/udp-res.6020")"
	fi
	((lost > 0)) || fail "B lost no answer from n2's end: the test tests nothing"
	(($(grown "$B" rx_spoofed "$s0") == 0)) ||
		fail "B dropped $(grown "$B" rx_spoofed "$s0") of A's packets as spoofed"
	wait_for 20 eth2_paths '.state == "up"' ||
		fail "A's paths over eth2 did not come up once B's answers got through: $(paths_brief)"
	e2=$(encap_pkts_on eth2)
	UDP_SIZE=1000 UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6021 500 7021 2000 ||
		fail "datagrams of the second flow lost: $(cat "$(tmpdir)/udp-res.6021")"
	echo "packets on A's paths over eth2 during it: $(($(encap_pkts_on eth2) - e2))"
	(($(encap_pkts_on eth2) - e2 >= 25)) || fail "link 2 carried no data of the second flow"
	(($(grown "$B" rx_spoofed "$s0") == 0)) ||
		fail "B dropped $(grown "$B" rx_spoofed "$s0") of A's packets as spoofed"
}

# both hosts' counters of the NAT traversal
mpip_stats_brief() {
	local ns
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" -j stats | jq -c '{tx_query, rx_confirm, tx_bare, tx_encap, rx_encap, rx_encap_bad, path_learned, rx_spoofed, drop_session, probe_giveup}'
	done
}

# A's four paths, each found translated, unverified and not inside UDP
all_paths_unused() {
	mpip_paths "$A" | jq -e 'length == 4 and all(.[]; .nat and
		(.verified | not) and .encap == "none")' >/dev/null
}

# nat_mode none on both hosts, tables flushed: the paths through the
# NATs are found translated again but left unverified and unused, no path
# is learned, nothing goes inside UDP; UDP and TCP both ways still work,
# single path, and no packet is INVALID at a NAT
t_nat_none() {
	local ns n1 n2 e0 t0
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set nat_mode none
		mpipctl_in "$ns" flush
	done
	[[ $(mpipctl_in "$A" -j get nat_mode | jq .nat_mode) == 1 ]] || fail "nat_mode none did not read back as 1"
	e0=$(mpip_stat "$B" rx_encap)
	t0=$(mpip_stat "$A" tx_encap)
	n1=$(nat_counter "${P}n1" ct_invalid)
	n2=$(nat_counter "${P}n2" ct_invalid)
	udp_all 6010
	wait_for 20 all_paths_unused ||
		fail "A's paths are not all found translated and left unused: $(paths_brief)"
	tcp_send_file "$A" "$B" 198.18.3.2 5030 "$T/f" "$T/g.none"
	sha256_equal "$T/f" "$T/g.none" || fail "nat_mode none: TCP data A -> B differs"
	tcp_fetch_file "$A" "$B" 198.18.3.2 5031 "$T/f" "$T/h.none"
	sha256_equal "$T/f" "$T/h.none" || fail "nat_mode none: TCP data B -> A differs"
	nat_report
	mpip_stats_brief
	paths_brief
	(($(nat_counter "${P}n1" ct_invalid) == n1 && $(nat_counter "${P}n2" ct_invalid) == n2)) ||
		fail "nat_mode none: a NAT found packets INVALID"
	(($(grown "$A" tx_encap "$t0") == 0 && $(grown "$B" rx_encap "$e0") == 0)) ||
		fail "nat_mode none: packets went inside UDP"
	mpip_paths "$B" | jq -e 'all(.[]; .learned | not)' >/dev/null || fail "nat_mode none: B learned a path"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set nat_mode auto
	done
}

# A second lab: link 2 crosses two NATs (a CGNAT stage), and every NAT
# picks random source ports.  Between mpip hosts the handshake crosses,
# each path of A's is found translated (seen from the outer NAT's address,
# with its port) and verified through it, B learns a path to each of
# those ports, every datagram of a UDP flow arrives, and so do those of a
# second flow once the paths are up, inside UDP, under the ports the NATs
# gave the flow at B (restored from the session: A sends its own); no NAT
# finds a packet INVALID, nothing leaks.
t_double_random() {
	local ns c0 e0
	"$TOPO" nat --prefix "$P" --double --random --link1 40mbit,2ms --link2 20mbit,2ms
	for ns in "${P}n1" "${P}n2" "${P}c" "$R"; do
		mpipctl_in "$ns" disable
	done
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 198.18.3.2 >/dev/null ||
		fail "A cannot reach B through the NATs"
	c0=$(mpip_stat "$A" rx_confirm)
	udp_all 6003
	echo "invalid: n1 $(nat_counter "${P}n1" ct_invalid), n2 $(nat_counter "${P}n2" ct_invalid), c $(nat_counter "${P}c" ct_invalid); leak: $(nat_counter "$R" leak)"
	(($(grown "$A" rx_confirm "$c0") > 0)) || fail "no confirmation crossed the NATs"
	wait_for 20 all_paths_translated ||
		fail "A's paths through the NATs are not all found translated and verified: $(paths_brief)"
	wait_for 20 all_paths_learned ||
		fail "B did not learn a verified path to each NAT's end of A's paths: $(paths_brief)"
	paths_brief
	e0=$(mpip_stat "$B" rx_encap)
	udp_all 6004
	(($(grown "$B" rx_encap "$e0") > 0)) || fail "B received nothing inside UDP"
	for ns in "${P}n1" "${P}n2" "${P}c"; do
		(($(nat_counter "$ns" ct_invalid) == 0)) || fail "$ns found packets INVALID"
	done
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 10
ktap_run nat_lab_up t_setup
ktap_run plain_ip_crosses_nats t_plain
ktap_run udp_new_flow_to_legacy_host_all_arrive t_udp_legacy
ktap_run mpip_hosts_handshake_crosses_nat_udp_tcp_intact t_mpip
ktap_run tcp_both_ways_both_links_no_invalid_gso t_tcp_gso
ktap_run tcp_both_ways_both_links_no_invalid_nogso_nat_mode_udp t_tcp_nogso
ktap_run data_only_on_paths_both_ends_verified t_answers_lost
ktap_run nat_mode_none_single_path_intact t_nat_none
ktap_run double_nat_random_ports_handshake_and_detection t_double_random
ktap_run dmesg_clean t_dmesg
ktap_finish
