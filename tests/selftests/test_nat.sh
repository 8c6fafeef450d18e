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
#   from both NATs' ends lost at B, A's paths pass A's own check but stay
#   unused, and every datagram of a flow arrives; with those from n2's
#   end lost, the paths over eth1 come up, those over eth2 stay unused,
#   and every datagram arrives; once the echoes get through, the paths
#   over eth2 come up and carry data.
# - Likewise with A's address list lost at B: B has no path back to A's
#   probes and says so; A's paths stay unused, every datagram arrives;
#   once the list gets through the paths come up.
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

# tcp_watch_start: until tcp_watch_stop, B's links' bare TCP segments
# with SYN, FIN or RST are captured and both hosts' TCP counters noted;
# if the subtest fails meanwhile, what they saw is printed (why a
# connection broke: the debug kernel once saw "Connection reset by peer")
tcp_watch_start() {
	local n ns
	for n in 1 2; do
		capture_start "$B" eth$n tw$n 'tcp[tcpflags] & (tcp-syn|tcp-fin|tcp-rst) != 0'
	done
	for ns in "$A" "$B"; do
		in_ns "$ns" nstat -asz >"$T/nstat.$ns"
	done
	trap tcp_watch_report EXIT
}

tcp_watch_stop() {
	trap - EXIT
	kill -INT "$(cat "$T/tw1.pid")" "$(cat "$T/tw2.pid")" 2>/dev/null || true
}

# (on the subtest's exit: if it failed, the segments and counters)
tcp_watch_report() {
	local rc=$? ns n
	((rc != 0)) || return 0
	for n in 1 2; do
		capture_stop tw$n
		echo "B eth$n, bare TCP with SYN, FIN or RST:"
		tcpdump -nn -tt -r "$T/tw$n.pcap" 2>/dev/null | head -n 30
	done
	for ns in "$A" "$B"; do
		echo "$ns, TCP counters that changed:"
		in_ns "$ns" nstat -asz | awk 'NR == FNR { v[$1] = $2; next }
			$1 ~ /^(Tcp|TcpExt)/ && $2 != v[$1] { printf " %s +%d", $1, $2 - v[$1] }
			END { print "" }' "$T/nstat.$ns" -
		echo "$ns, mpip: $(mpipctl_in "$ns" -j stats | jq -c 'with_entries(select(.value != 0))')"
	done
	exit "$rc"
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
	tcp_watch_start
	tcp_send_file "$A" "$B" 198.18.3.2 "$port" "$T/f" "$T/g.$tag"
	sha256_equal "$T/f" "$T/g.$tag" || fail "$tag: TCP data A -> B differs"
	a1=$(($(tx_bytes "$A" eth1) - a1))
	a2=$(($(tx_bytes "$A" eth2) - a2))
	b1=$(tx_bytes "$B" eth1)
	b2=$(tx_bytes "$B" eth2)
	tcp_fetch_file "$A" "$B" 198.18.3.2 $((port + 1)) "$T/f" "$T/h.$tag"
	sha256_equal "$T/f" "$T/h.$tag" || fail "$tag: TCP data B -> A differs"
	tcp_watch_stop
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

# answers_from ADDRS|delete: B drops, and counts, the answers that come
# from the NAT ends ADDRS ("198.18.1.1, 198.18.2.1") of A's paths:
# control datagrams of IP length 92 (20 + 8 + a CM of 40 bytes with a
# 24-byte extension: our nonce field, the echo, the endpoint seen), before
# mpip sees them (its hook is at priority -399).  A's answers to B's
# probes of its paths back to those ends are lost, so B cannot verify
# them, while A's own probes get through and are answered.  A new set of
# ADDRS replaces the old in one transaction: no answer slips through in
# between.
answers_from() {
	if [[ $1 == delete ]]; then
		in_ns "$B" nft delete table ip answers 2>/dev/null || true
		return
	fi
	in_ns "$B" nft -f - <<-EOF
	table ip answers { }
	delete table ip answers
	table ip answers {
		counter lost { }
		chain pre {
			type filter hook prerouting priority -450; policy accept;
			ip saddr { $1 } udp dport 19792 ip length 92 counter name lost drop
		}
	}
	EOF
}

answers_lost() {
	nft_packets "$B" ip answers lost
}

# DEV_paths DEV FILTER: A has two paths over DEV, and FILTER holds for
# both
dev_paths() {
	mpip_paths "$A" | jq -e --arg d "$1" "[.[] | select(.dev == \$d)] |
		length == 2 and all(.[]; $2)" >/dev/null
}
eth2_paths() { dev_paths eth2 "$1"; }

# a_paths FILTER: A has its four paths to B, and FILTER holds for all
a_paths() { mpip_paths "$A" | jq -e "length == 4 and all(.[]; $1)" >/dev/null; }

# drops_delete: B drops nothing more (answers_from, lists_from_a)
drops_delete() {
	answers_from delete
	in_ns "$B" nft delete table ip lists 2>/dev/null || true
}

# answered_flow PORT COUNT WAIT_FOR...: a flow of COUNT datagrams from A
# to B's eth1 address in the background while the check WAIT_FOR holds
# within 30 s; then a second to let data move (it did, before).  Sets
# flow_pid; the flow's output in $T/flow.PORT.
answered_flow() {
	local port=$1 count=$2
	shift 2
	UDP_SIZE=1000 UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 "$port" "$count" \
		$((port + 1000)) 2000 >"$T/flow.$port" 2>&1 &
	flow_pid=$!
	if ! wait_for 30 "$@"; then
		drops_delete
		wait "$flow_pid" || true
		fail "A's paths did not reach the state to test ($*): $(paths_brief)"
	fi
	sleep 1
}

# answered_flow_end PORT UP LOST S0: the flow on PORT ended, every datagram
# arrived, B dropped none of A's packets as spoofed since S0; UP non-zero
# says a path came up that must not have; LOST is how many packets B's
# rule dropped (the test tests nothing if none).
answered_flow_end() {
	local port=$1 up=$2 lost=$3 s0=$4 res=0
	wait "$flow_pid" || res=1
	cat "$T/flow.$port"
	if ((up || res)); then
		drops_delete
		loss_counters "$B" "$A" "$B"
		((up)) && fail "a path of A's came up though B could not verify its way back; the flow: $(cat "$(tmpdir)/udp-res.$port")"
		fail "datagrams of the flow lost: $(cat "$(tmpdir)/udp-res.$port")"
	fi
	((lost > 0)) || { drops_delete; fail "B's rule dropped nothing: the test tests nothing"; }
	(($(grown "$B" rx_spoofed "$s0") == 0)) || {
		drops_delete
		fail "B dropped $(grown "$B" rx_spoofed "$s0") of A's packets as spoofed"
	}
}

flush_both() {
	mpipctl_in "$A" flush
	mpipctl_in "$B" flush
}

# eth2_carries PORT S0 WHAT: once WHAT got through, A's paths over eth2
# come up within 20 s and carry data of a flow of 500 datagrams on PORT,
# all of which arrive; B dropped none of A's packets as spoofed since S0.
# A trickle of datagrams to B's port $FLOWS_PORT (10 a second, one flow)
# keeps the pair busy meanwhile: a node with no traffic is not probed,
# and B asks for A's list only when a packet of A's comes (on the debug
# kernel the flow before was over by then, and nothing came up in 100 s)
eth2_carries() {
	local e2 pid up=0
	flows_sink "$B"
	ip netns exec "$A" python3 "$REPO/tests/selftests/udpcheck.py" send \
		198.18.3.2 "$FLOWS_PORT" 100000 --gap-us 100000 --size 100 >/dev/null 2>&1 &
	pid=$!
	wait_for 20 eth2_paths '.state == "up"' || up=1
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	((up == 0)) ||
		fail "A's paths over eth2 did not come up once $3 got through: $(paths_brief)"
	e2=$(encap_pkts_on eth2)
	UDP_SIZE=1000 UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 "$1" 500 $(($1 + 1000)) 2000 ||
		fail "datagrams of the flow after it lost: $(cat "$(tmpdir)/udp-res.$1")"
	echo "packets on A's paths over eth2 during it: $(($(encap_pkts_on eth2) - e2))"
	(($(encap_pkts_on eth2) - e2 >= 25)) || fail "link 2 carried no data of the flow after it"
	(($(grown "$B" rx_spoofed "$2") == 0)) ||
		fail "B dropped $(grown "$B" rx_spoofed "$2") of A's packets as spoofed"
}

# A path carries data only once both ends verified it.  Tables flushed,
# B loses the answers that come from NAT ends of A's paths (answers_from)
# while UDP flows run: A's probes are answered, so A verifies those
# paths, but B's answers tell it that B has not verified its paths back
# (they carry B's nonce), and A's echoes of that nonce are lost.
# - Answers from both NATs lost: A's four paths pass A's own check, none
#   comes up, every datagram arrives (on the flow's own addresses).
#   (Before 25fc4eb A moved data onto them as soon as its own check
#   passed; before this test, with no path up, data went on the path B
#   was heard over last if A had verified it, mpip_fb_heard_over(): B,
#   which takes data under other addresses only from an address it
#   verified itself, dropped it as spoofed.)
# - Answers from n2's end lost: the paths over eth1 come up, those over
#   eth2 do not, every datagram arrives.
# - All answers get through: B verifies, tells A, and A's paths over eth2
#   come up and carry the next flow.
t_answers_lost() {
	local s0 lost up=0
	flush_both
	s0=$(mpip_stat "$B" rx_spoofed)
	answers_from "198.18.1.1, 198.18.2.1"
	answered_flow 6020 3000 a_paths '.verified'
	echo "answers from both NATs' ends lost at B: $(answers_lost)"
	paths_brief
	a_paths '.state != "up"' || up=1
	lost=$(answers_lost)
	answers_from "198.18.2.1"
	answered_flow_end 6020 "$up" "$lost" "$s0"

	answered_flow 6021 3000 dev_paths eth1 '.state == "up"'
	echo "answers from n2's end lost at B: $(answers_lost)"
	paths_brief
	eth2_paths '.state != "up"' || up=1
	lost=$(answers_lost)
	answers_from delete
	answered_flow_end 6021 "$up" "$lost" "$s0"

	eth2_carries 6022 "$s0" "B's answers"
}

# lists_from_a add|delete: B drops, and counts, every CM that carries an
# address list (N, the low 4 bits of the byte 9 before the packet's end,
# not 0) in a UDP datagram of 68 to 200 bytes, before mpip sees it: A's
# address query and its confirmations of B's, whatever their extension.
# The tail of a CM is at a fixed distance from the end of the packet, so
# a rule per IP length finds it: magic 0xd7 and version 2 at 8 and 7
# bytes before the end, N at 9 (transport offsets L - 28 and L - 29).
# Probes and answers carry no list and get through.
lists_from_a() {
	local len rules=
	if [[ $1 == delete ]]; then
		in_ns "$B" nft delete table ip lists
		return
	fi
	for ((len = 68; len <= 200; len += 4)); do
		rules+="meta l4proto udp ip length $len @th,$(((len - 28) * 8)),16 0xd702 @th,$(((len - 29) * 8 + 4)),4 != 0 counter name lost drop"$'\n'
	done
	in_ns "$B" nft -f - <<-EOF
	table ip lists {
		counter lost { }
		chain pre {
			type filter hook prerouting priority -450; policy accept;
			$rules
		}
	}
	EOF
}

lists_lost() {
	nft_packets "$B" ip lists lost
}

# A path carries data only once the peer has a path back.  Tables
# flushed, B loses A's address list (lists_from_a) while it gets A's data
# and tells A its own list: A makes its paths to B's addresses and probes
# them, but B, not knowing A's addresses, knows no path back to where the
# probes come from (A's own addresses, or the NATs' ends of them, which B
# learns only from a probe of an address in the list).  Its answers say
# so (MPIP_RR_NO_PATH): A keeps the paths from data, and every datagram
# of a flow arrives on the flow's own addresses, none dropped at B as
# spoofed.  (Before f53d033 such an answer read as "verified the way
# back": A moved data onto paths over which B takes nothing.)  Once the
# list gets through, B makes its paths, verifies them, and A's paths come
# up and carry the next flow.
t_no_path_back() {
	local s0 lost up=0
	flush_both
	s0=$(mpip_stat "$B" rx_spoofed)
	lists_from_a add
	answered_flow 6030 3000 a_paths '.verified'
	echo "CMs with A's address list lost at B: $(lists_lost)"
	paths_brief
	a_paths '.state != "up"' || up=1
	[[ $(mpip_paths "$B" | jq length) == 0 ]] || {
		drops_delete
		fail "B has paths to A though A's address list never reached it: $(paths_brief)"
	}
	lost=$(lists_lost)
	lists_from_a delete
	answered_flow_end 6030 "$up" "$lost" "$s0"
	eth2_carries 6031 "$s0" "A's address list"
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
ktap_plan 11
ktap_run nat_lab_up t_setup
ktap_run plain_ip_crosses_nats t_plain
ktap_run udp_new_flow_to_legacy_host_all_arrive t_udp_legacy
ktap_run mpip_hosts_handshake_crosses_nat_udp_tcp_intact t_mpip
ktap_run tcp_both_ways_both_links_no_invalid_gso t_tcp_gso
ktap_run tcp_both_ways_both_links_no_invalid_nogso_nat_mode_udp t_tcp_nogso
ktap_run data_only_on_paths_both_ends_verified t_answers_lost
ktap_run data_only_once_peer_has_path_back t_no_path_back
ktap_run nat_mode_none_single_path_intact t_nat_none
ktap_run double_nat_random_ports_handshake_and_detection t_double_random
ktap_run dmesg_clean t_dmesg
ktap_finish
