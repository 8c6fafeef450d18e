#!/usr/bin/env bash
# test_natedge.sh - mpip on both hosts through NATs that make things hard
# (issue 21), each lab a strict NAT per link of A's (topo.sh nat):
# - n2 forwards no UDP (--udp-blocked): TCP both ways byte-exact, over
#   n1 and over n2 (A's connection from its eth2 address: once the probes
#   of its path went unanswered, its segments go bare, on that path
#   only); mpip's UDP into n2 was dropped (so the test did meet the
#   block), the path through n1 carries data inside UDP, nothing is
#   INVALID at a NAT, nothing leaks.  These are the first connections
#   between the hosts: their segments go bare until a path's probe is
#   answered.  (Before: the connection over n2 never got through, its
#   segments with trailers INVALID at n2; and 34 segments of the first
#   connection over n1 were INVALID there.)
# - attacks from the internet router R, a third host on none of A's
#   links (198.18.3.254, mpip off), in that lab: R holds back A's
#   datagrams to B's control port for 3 s and sends B copies of them
#   from its own address and port: they authenticate (a NAT may rewrite
#   both), so B learns a path back to R, but that path is never verified
#   and carries none of B's data, B probes R no more often than R sent,
#   and TCP between A and B goes on; the flow's datagrams among the
#   copies reach no application; datagrams to B's control port with
#   a bad shim, or a good one and garbage inside, are dropped and
#   counted (rx_encap_bad), and deliver nothing; so do those with a good
#   shim and a CM of A's token under a random MAC inside (rx_auth_fail),
#   and they make no path; copies R kept of A's
#   datagrams that it let through, sent from a second address of R's,
#   are replays and make no path; 16 held copies sent from 16 addresses
#   make B at most 8 learned paths of A's node, none verified; R's SYNs to B's control
#   port get no SYN-ACK (B answers only addresses of verified paths it
#   learned through a NAT).
# - fake TCP (nat_mode faketcp on A), through the plain strict NATs: A's
#   paths through the NATs open TCP connections of their own to B's
#   control port, B answers with cookies and opens its paths back on
#   the first authenticated packet inside them; then TCP both ways is
#   byte-exact over both links, its packets cross the NATs as TCP to or
#   from port 19792 (captured at the internet router), nothing INVALID,
#   nothing leaks; A sends no packet too big for the path (it lowered
#   the MSS of B's SYN-ACKs, which left room for UDP only: B is in
#   nat_mode auto); the segments of a TCP GSO packet leave each host as
#   one TCP GSO packet of its fake connection, which the other splits.
#   R then forges 32 RSTs (unknown sequence numbers),
#   32 SYN-ACKs and 32 bare ACKs to B on each fake TCP connection: B
#   answers none, no connection closes or opens again, TCP both ways
#   still intact inside fake TCP alone.  32 forged SYNs on each and
#   copies of A's own SYNs get no SYN-ACK and cost nothing (a SYN is
#   authenticated, and its counter taken once), and R's copies of the
#   ACKs with which A opened B's ends open nothing again.  B in faketcp
#   too, but public (it opens no fake TCP connection): it keeps the MSS
#   of A's SYNs, which left fake TCP's room, and its segments to A fill
#   the path (1500 bytes) without fragments.  Then fake TCP
#   set on A's eth1 alone (mpipctl link set dev eth1 nat faketcp,
#   nat_mode auto): after a flush eth1's paths
#   go inside fake TCP, eth2's inside UDP; TCP both ways over both links.
# - links with a round trip of 300 ms: A's fake TCP connections open while
#   a UDP flow of 40 Mbit/s runs; nothing INVALID at a NAT (the opener
#   keeps to the SYN-ACK's window until it hears from B).
# - the NATs' wan links have MTU 1400: TCP both ways byte-exact, no black
#   hole (each transfer has 110 s; a black hole fails it), over both
#   links, nothing INVALID, nothing leaks.  Then R forges "fragmentation
#   needed" errors (MTU 552) about B's packets inside UDP, quoting their
#   outer headers only: B takes none, and TCP both ways is still intact
#   over both links.
# TIMEOUT: 1500
# (about 190 s on an idle machine in one guest; in a loaded run, a -j2
# kernel build beside two guests, it ran 9 of its 12 subtests in 600 s;
# with 19 subtests, 477-571 s in loaded runs, and 825 s with a debug
# kernel guest as a third VM)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_router_globals ne

# lab ARGS...: a fresh NAT lab (the last one removed), mpip on A and B
# only, A reaches B
lab() {
	local ns
	"$TOPO" clean --prefix "$P"
	"$TOPO" nat --prefix "$P" --link1 40mbit,2ms --link2 20mbit,2ms "$@"
	for ns in "${P}n1" "${P}n2" "$R"; do
		mpipctl_in "$ns" disable
	done
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 198.18.3.2 >/dev/null ||
		fail "A cannot reach B through the NATs"
}

nat_report() {
	echo "invalid: n1 $(nat_counter "${P}n1" ct_invalid), n2 $(nat_counter "${P}n2" ct_invalid);" \
		"udp_blocked: $(nat_counter "${P}n2" udp_blocked); leak: $(nat_counter "$R" leak)"
	mpip_paths "$A" | jq -c '[.[] | {saddr, daddr, state, verified, nat, encap, tx_pkts}]'
	mpip_paths "$B" | jq -c '[.[] | {saddr, daddr, dport, state, verified, learned, tx_pkts}]'
}

# no packet INVALID at a NAT since n1 and n2 INVALID counts I1 I2, and
# no private address leaked
nat_clean() {
	(($(nat_counter "${P}n1" ct_invalid) == $1 && $(nat_counter "${P}n2" ct_invalid) == $2)) ||
		fail "a NAT found packets INVALID"
	(($(nat_counter "$R" leak) == 0)) || fail "a private address leaked"
}

# both_ways TAG PORT: a file A -> B and one B -> A (A connects), to B's
# address, byte-exact; TCP_BIND as for tcp_send_file
both_ways() {
	tcp_send_file "$A" "$B" 198.18.3.2 "$2" "$T/f" "$T/g.$1"
	sha256_equal "$T/f" "$T/g.$1" || fail "$1: TCP data A -> B differs"
	tcp_fetch_file "$A" "$B" 198.18.3.2 $(($2 + 1)) "$T/f" "$T/h.$1"
	sha256_equal "$T/f" "$T/h.$1" || fail "$1: TCP data B -> A differs"
}

# warm_up: a UDP flow from A over n1 first, until A's paths through n1
# are up inside UDP, so that the transfers after it go inside UDP from
# their start; its datagrams fit an MTU of 1400
warm_up() {
	UDP_SIZE=1000 UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6002 1000 7002 2000 ||
		{ warm_up_why; fail "datagrams lost: $(cat "$(tmpdir)/udp-res.6002")"; }
	wait_for 20 n1_encap || fail "A's paths through n1 are not up inside UDP"
}

# warm_up_why: where a lost warm-up datagram may have gone: the NATs'
# INVALID drops, the paths, each host's counters that are not 0, B's UDP
# counters.  (One datagram of the 1000 was lost now and then under load:
# B dropped it as rx_spoofed.  It came over a path that A had verified
# and B had not yet: one A moved data onto (fixed by 25fc4eb), or, with
# no path up yet, the one B was heard over last (558c704); test_nat's
# data_only_on_paths_both_ends_verified.)
warm_up_why() {
	nat_report
	loss_counters "$B" "$A" "$B"
}

# A's paths over eth1 are up, verified, inside UDP (or fake TCP)
n1_encap() {
	mpip_paths "$A" | jq -e '[.[] | select(.dev == "eth1" and .verified and
		.encap != "none" and .state == "up")] | length == 2' >/dev/null
}

# both_links TAG PORT: both_ways, and each host's two links carried the
# data it sent (2 % of the file each at least), no packet INVALID at a
# NAT, nothing leaked
both_links() {
	local i1 i2 a1 a2 b1 b2 min
	i1=$(nat_counter "${P}n1" ct_invalid)
	i2=$(nat_counter "${P}n2" ct_invalid)
	min=$(($(stat -c %s "$T/f") / 50))
	a1=$(tx_bytes "$A" eth1)
	a2=$(tx_bytes "$A" eth2)
	b1=$(tx_bytes "$B" eth1)
	b2=$(tx_bytes "$B" eth2)
	both_ways "$1" "$2"
	a1=$(($(tx_bytes "$A" eth1) - a1))
	a2=$(($(tx_bytes "$A" eth2) - a2))
	b1=$(($(tx_bytes "$B" eth1) - b1))
	b2=$(($(tx_bytes "$B" eth2) - b2))
	echo "$1: sent A eth1 $a1 B, eth2 $a2 B; B eth1 $b1 B, eth2 $b2 B"
	nat_report
	((a1 > min && a2 > min)) || fail "$1: A's data did not go over both links"
	((b1 > min && b2 > min)) || fail "$1: B's data did not go over both links"
	nat_clean "$i1" "$i2"
}

t_blocked_setup() {
	lab --udp-blocked
	random_file "$T/f" 2
}

t_blocked() {
	local i1 i2 e1
	i1=$(nat_counter "${P}n1" ct_invalid)
	i2=$(nat_counter "${P}n2" ct_invalid)
	e1=$(tx_bytes "$A" eth1)
	both_ways n1 5000
	TCP_BIND=192.168.2.2 both_ways n2 5010
	nat_report
	(($(nat_counter "${P}n2" udp_blocked) > 0)) ||
		fail "n2 dropped no UDP: mpip did not try UDP through it"
	# (the file: 2 MiB; less on the debug kernel, random_file)
	(($(tx_bytes "$A" eth1) - e1 > $(file_size "$T/f") * 95 / 100)) ||
		fail "A sent less than the file's $(file_size "$T/f") bytes on eth1"
	mpip_paths "$A" | jq -e '[.[] | select(.dev == "eth1" and .encap == "udp" and
		.verified and .tx_pkts > 0)] | length > 0' >/dev/null ||
		fail "no path through n1 carried packets inside UDP"
	nat_clean "$i1" "$i2"
}

# R's nftables table "attack": counts B's datagrams to R's address, and
# with HOLD, drops what n1 forwards to B's control port, counting the
# datagrams that carry data (hold_data) apart from the control datagrams
# (heartbeats: UDP length 8, their CM in the surplus area) and from
# fragments, for those do not make a whole datagram to send on
attack_table() {
	ip netns exec "$R" nft -f - <<-EOF
		table ip attack {
			counter hold { }
			counter hold_data { }
			counter to_r { }
			chain hold_fwd {
				type filter hook forward priority -10; policy accept;
				${1:+ip saddr 198.18.1.1 ip daddr 198.18.3.2 udp dport 19792 udp length != 8 ip frag-off & 0x3fff == 0 counter name "hold_data"}
				${1:+ip saddr 198.18.1.1 ip daddr 198.18.3.2 udp dport 19792 counter name "hold" drop}
			}
			chain count_in {
				type filter hook input priority -10; policy accept;
				ip saddr 198.18.3.2 ip daddr 198.18.3.254 counter name "to_r"
			}
		}
	EOF
}

attack_counter() {
	nft_packets "$R" ip attack "$1"
}

# B's paths to R's address
r_path() {
	mpip_paths "$B" | jq -c '[.[] | select(.daddr == "198.18.3.254")]'
}

# hold_from_a NAME PORT MIN: R holds what n1 forwards to B's control
# port (A's heartbeats and the datagrams of flows of A's to B's PORT, 3 s
# each, inside UDP), B never gets it, and capture NAME keeps it; prints
# how many packets.  It starts once A's paths through n1 are up inside
# UDP (after an earlier hold they may still be coming back: on the debug
# kernel a flow of 3 s once met them down, and R held 10 datagrams), and
# sends flows until R held MIN datagrams of data or 60 s passed.  A's
# paths through n1 get no report meanwhile: path_timeout_ms is at its
# most, 60 s, so that they stay up and carry the flows (on the debug
# kernel they went down once, and R then held only heartbeats).
hold_from_a() {
	local end pto
	wait_for 60 n1_encap || fail "A's paths through n1 are not up inside UDP"
	n1_weighed "$2" || {
		mpip_paths_show "$A" >&2
		fail "A's path through n1 to 198.18.3.2 kept under $N1_MIN_WEIGHT of the weight"
	}
	pto=$(mpip_cfg "$A" path_timeout_ms) || fail "no path_timeout_ms"
	# shellcheck disable=SC2064
	trap "mpipctl_in '$A' set path_timeout_ms $pto" EXIT
	mpipctl_in "$A" set path_timeout_ms 60000
	attack_table hold
	capture_start "$R" w1 "$1" 'udp and src host 198.18.1.1 and dst host 198.18.3.2 and dst port 19792'
	end=$((SECONDS + 60 * ${MPIP_TEST_WAIT_SCALE:-1}))
	while (($(attack_counter hold_data) < $3 && SECONDS < end)); do
		UDP_RECV_TIMEOUT=3 UDP_MIN_GOOD=1 udp_exchange "$A" "$B" 198.18.3.2 "$2" 300 $(($2 + 1000)) 10000 >/dev/null 2>&1 || true
	done
	echo "R held $(attack_counter hold_data) datagrams of data of $(attack_counter hold) packets" >&2
	(($(attack_counter hold_data) >= $3)) || mpip_paths_show "$A" >&2
	capture_count "$1"
	ip netns exec "$R" nft delete table ip attack
}

# The weight (of 1000) A's path through n1 to 198.18.3.2 needs before a
# hold: the flows of a hold go by weight, and R holds only what that
# path carries
N1_MIN_WEIGHT=100

# n1_weight: that path's weight (0 if there is none)
n1_weight() {
	mpip_paths "$A" | jq -r '[.[] | select(.dev == "eth1" and
		.daddr == "198.18.3.2") | .weight] | max // 0'
}

# n1_weighed PORT: A's path through n1 to 198.18.3.2 has N1_MIN_WEIGHT of
# the weight, after small exchanges to B's PORT - 1 if it had not: an
# earlier hold left it without reports for a while, and with a weight
# near nothing it carries no flow, and R holds nothing of one (on the
# debug kernel R held 0 datagrams of data in 300 s of flows so).  The
# flows' reports bring it back; false if they do not within 60 s, or if
# A's paths cannot be read.
n1_weighed() {
	local end=$((SECONDS + 60 * ${MPIP_TEST_WAIT_SCALE:-1})) w
	while :; do
		w=$(n1_weight) || { echo "A's paths could not be read" >&2; return 1; }
		((w >= N1_MIN_WEIGHT)) && return 0
		((SECONDS < end)) || return 1
		echo "A's path through n1 to 198.18.3.2 has weight $w: warming it" >&2
		UDP_RECV_TIMEOUT=3 UDP_MIN_GOOD=1 udp_exchange "$A" "$B" 198.18.3.2 $(($1 - 1)) 100 $(($1 + 999)) 10000 >/dev/null 2>&1 || true
	done
}

t_stolen_cms() {
	local n sent l0 r0 rpid
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	n=$(hold_from_a held 6100 3)
	echo "R held $n of A's datagrams to B's control port"
	((n >= 3)) || fail "too few datagrams held"
	attack_table
	l0=$(mpip_stat "$B" path_learned)
	r0=$(mpip_stat "$B" rx_replay)
	in_ns "$B" socat -u UDP-RECV:6100 OPEN:"$T/got6100",creat,trunc </dev/null >/dev/null 2>&1 &
	rpid=$!
	sent=$(in_ns "$R" /usr/bin/python3 - "$T/held.pcap" <<-'PY'
		import sys
		from scapy.layers.inet import IP, UDP
		from scapy.utils import rdpcap
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		n = 0
		for p in rdpcap(sys.argv[1]):
		    if UDP not in p:
		        continue
		    send(IP(src="198.18.3.254", dst="198.18.3.2") /
		         UDP(sport=40000, dport=19792) / bytes(p[UDP].payload))
		    n += 1
		print(n)
	PY
	) || fail "R could not send its copies"
	echo "R sent $sent copies from 198.18.3.254:40000"
	sleep 10
	kill "$rpid" 2>/dev/null || true
	wait "$rpid" 2>/dev/null || true
	[[ ! -s $T/got6100 ]] || fail "B delivered $(stat -c %s "$T/got6100") bytes of R's copies"
	r_path
	mpipctl_in "$B" -j stats | jq -c '{path_learned, rx_replay, rx_spoofed, rx_auth_fail, rr_verified, probe_giveup}'
	echo "B sent R $(attack_counter to_r) packets"
	(($(mpip_stat "$B" path_learned) - l0 <= 1)) || fail "B learned more than one path from R's copies"
	r_path | jq -e 'all(.[]; (.verified | not) and .state != "up")' >/dev/null ||
		fail "B's path to R was verified or up"
	(($(attack_counter to_r) <= sent)) ||
		fail "B sent R $(attack_counter to_r) packets for R's $sent"
	tcp_send_file "$A" "$B" 198.18.3.2 5030 "$T/f" "$T/g.stolen"
	sha256_equal "$T/f" "$T/g.stolen" || fail "TCP data A -> B differs after the attack"
	(($(attack_counter to_r) <= sent)) ||
		fail "B sent R $(attack_counter to_r) packets for R's $sent, after TCP"
	echo "rx_replay grew by $(($(mpip_stat "$B" rx_replay) - r0))"
	ip netns exec "$R" nft delete table ip attack
}

# R lets A's datagrams to B's control port through (B takes them) and
# keeps copies, then sends the copies again from a second address of its
# own, 198.18.3.253: B finds them replays (rx_replay), and a replay makes
# no learned path (security.rst: learned paths come only from fresh CMs).
# B learns no path, has none to that address and sends it nothing.
# (stolen_cms_from_third_host_make_no_usable_path holds the originals
# back, so its copies are fresh.)
t_replayed_cms() {
	local n sent l0 r0 paths
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	CAPTURE_SNAP=0 capture_start "$R" w1 passed 'udp and src host 198.18.1.1 and dst host 198.18.3.2 and dst port 19792'
	UDP_RECV_TIMEOUT=10 udp_exchange "$A" "$B" 198.18.3.2 6101 300 7101 10000 >/dev/null 2>&1 ||
		fail "A's datagrams did not all reach B"
	n=$(capture_count passed)
	echo "R kept copies of $n of A's datagrams to B's control port"
	((n >= 3)) || fail "too few datagrams kept"
	ip -n "$R" addr add 198.18.3.253/24 dev b1
	capture_start "$R" b1 answers 'src host 198.18.3.2 and dst host 198.18.3.253'
	l0=$(mpip_stat "$B" path_learned)
	r0=$(mpip_stat "$B" rx_replay)
	mpipctl_in "$B" -j stats >"$T/b-replay0"
	sent=$(in_ns "$R" /usr/bin/python3 - "$T/passed.pcap" <<-'PY'
		import sys
		from scapy.layers.inet import IP, UDP
		from scapy.utils import rdpcap
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		pkts = [IP(src="198.18.3.253", dst="198.18.3.2") /
		        UDP(sport=40001, dport=19792) / bytes(p[UDP].payload)
		        for p in rdpcap(sys.argv[1]) if UDP in p]
		send(pkts, inter=0.01)
		print(len(pkts))
	PY
	) || fail "R could not send its copies"
	sleep 3
	paths=$(mpip_paths "$B" | jq -c '[.[] | select(.daddr == "198.18.3.253")]')
	echo "R sent $sent copies from 198.18.3.253:40001; B: rx_replay +$(($(mpip_stat "$B" rx_replay) - r0)), path_learned +$(($(mpip_stat "$B" path_learned) - l0)); paths to it: $paths"
	# what B made of the copies (a run with copies cut to the capture's
	# 256 bytes: rx_replay +47, rx_encap_bad +81 of 128)
	echo "B's counters that moved: $(mpip_stats_moved "$B" "$T/b-replay0")"
	(($(capture_count answers) == 0)) || fail "B sent R's second address something"
	ip -n "$R" addr del 198.18.3.253/24 dev b1
	(($(mpip_stat "$B" rx_replay) > r0)) || fail "B took none of the copies for a replay"
	(($(mpip_stat "$B" path_learned) == l0)) || fail "B learned a path from a replay"
	[[ $paths == "[]" ]] || fail "B has a path to R's second address"
}

# R sends B's control port N datagrams with a good shim, each with a
# datagram to port 6200 inside whose CM names A's node (B's token for
# it, ORIG) under a random MAC
forged_inside_udp() {
	local tok
	tok=$(mpip_peer_node "$B" "$A") || fail "B has no node for A"
	in_ns "$R" /usr/bin/python3 - "$REPO/tests/scapy" "$tok" "$1" <<-'PY'
		import os, sys
		sys.path.insert(0, sys.argv[1])
		import mpip_cm
		from scapy.layers.inet import IP, UDP
		from scapy.packet import Raw
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		tok, n = int(sys.argv[2], 0), int(sys.argv[3])
		b = IP(src="198.18.3.254", dst="198.18.3.2") / UDP(sport=40001, dport=19792)
		pkts = []
		for i in range(n):
		    t = mpip_cm.write_v2(os.urandom(12), token=tok, session_id=1,
		                         path_id=1, fb_path_id=1, flags=mpip_cm.F_ORIG)
		    inner = mpip_cm.add(IP(src="198.18.3.254", dst="198.18.3.2") /
		                        UDP(sport=1, dport=6200, chksum=0) / Raw(b"EVIL %d" % i), t)
		    pkts.append(b / Raw(b"\x4d\x11\x11\x00" + bytes(inner)[20:]))
		send(pkts, inter=0.01)
	PY
}

# B's learned paths: their addresses; how many go to t_learned_cap's
# decoy addresses 198.18.3.230-249, and how many of those are verified
learned_paths() {
	mpip_paths "$B" | jq -c '[.[] | select(.learned)] |
		(map(select(.daddr | test("^198\\.18\\.3\\.2[34][0-9]$")))) as $d |
		{daddrs: (map(.daddr) | sort), decoys: ($d | length),
		 decoys_verified: ($d | map(select(.verified)) | length)}'
}

# R holds A's datagrams to B's control port again, captured whole, then
# sends the newest 16 on from 16 addresses of B's link that belong to no
# host, one from each: each CM authenticates and is fresh, and would make
# B a path to its source (learned, never verified).  B learns at most 8 paths of a
# node (MPIP_LEARNED_MAX); the copies fill that, or they tested nothing.
# (After bad_shims_dropped_and_counted, whose "no path learned" a full
# node could not tell; the next subtest builds a new lab.)
t_learned_cap() {
	local n sent r0 l
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	n=$(CAPTURE_SNAP=0 hold_from_a held16 6110 16)
	echo "R held $n of A's datagrams to B's control port"
	((n >= 16)) || fail "too few datagrams held"
	r0=$(mpip_stat "$B" rx_replay)
	mpipctl_in "$B" -j stats >"$T/b-cap0"
	echo "B's learned paths before: $(learned_paths)"
	sent=$(in_ns "$R" /usr/bin/python3 - "$T/held16.pcap" <<-'PY'
		import sys
		from scapy.layers.inet import IP, UDP
		from scapy.utils import rdpcap
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		held = [p for p in rdpcap(sys.argv[1])
		        if UDP in p and len(p[UDP].payload) == p[UDP].len - 8][-16:]
		if len(held) < 16:
		    sys.exit("only %d whole datagrams of data in the capture" % len(held))
		send([IP(src="198.18.3.%d" % (230 + i), dst="198.18.3.2") /
		      UDP(sport=40000, dport=19792) / bytes(p[UDP].payload)
		      for i, p in enumerate(held)], inter=0.05)
		print(len(held))
	PY
	) || fail "R could not send its copies"
	sleep 2
	l=$(learned_paths)
	echo "R sent $sent copies from 198.18.3.230-245; rx_replay +$(($(mpip_stat "$B" rx_replay) - r0)); B's learned paths: $l"
	echo "B's counters that moved: $(mpip_stats_moved "$B" "$T/b-cap0")"
	jq -e '.daddrs | length <= 8' <<<"$l" >/dev/null || fail "B learned more than 8 paths of A's node"
	jq -e '.daddrs | length == 8' <<<"$l" >/dev/null ||
		fail "the copies did not fill A's node's 8 learned paths: not a test of the limit"
	jq -e '.decoys > 0' <<<"$l" >/dev/null || fail "no copy made a path"
	jq -e '.decoys_verified == 0' <<<"$l" >/dev/null || fail "B verified a path to an address of no host"
}

# datagrams to B's control port with a bad shim, with a good shim and
# garbage inside, and with a good shim and a forged CM inside: dropped,
# counted, nothing delivered, nothing learned
t_bad_shim() {
	local b0 f0 l0 syn
	b0=$(mpip_stat "$B" rx_encap_bad)
	f0=$(mpip_stat "$B" rx_auth_fail)
	l0=$(mpip_stat "$B" path_learned)
	in_ns "$B" socat -u UDP-RECV:6200 OPEN:"$T/got6200",creat,trunc </dev/null >/dev/null 2>&1 &
	local rpid=$!
	in_ns "$R" /usr/bin/python3 - <<-'PY' || fail "R could not send"
		import os
		from scapy.layers.inet import IP, UDP
		from scapy.packet import Raw
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		b = IP(src="198.18.3.254", dst="198.18.3.2") / UDP(sport=40001, dport=19792)
		for shim in (b"\x4d\x11\x06\x01", b"\x4d\x21\x11\x00", b"\x00\x11\x11\x00"):
		    send(b / Raw(shim + os.urandom(60)))
		# a good shim, a UDP datagram to port 6200 inside, no CM
		send(b / Raw(b"\x4d\x11\x11\x00" + bytes(UDP(sport=1, dport=6200) / Raw(b"x" * 40))))
		for _ in range(20):
		    send(b / Raw(b"\x4d\x11\x06\x00" + os.urandom(80)))
	PY
	forged_inside_udp 20 || fail "R could not send the forged CMs"
	sleep 1
	kill "$rpid" 2>/dev/null || true
	wait "$rpid" 2>/dev/null || true
	echo "rx_encap_bad grew by $(($(mpip_stat "$B" rx_encap_bad) - b0)), rx_auth_fail by $(($(mpip_stat "$B" rx_auth_fail) - f0)), path_learned by $(($(mpip_stat "$B" path_learned) - l0))"
	# a SYN to the control port from R, whose address B has a learned
	# path to (the stolen CMs'), never verified: no SYN-ACK
	syn=$(in_ns "$R" /usr/bin/python3 - <<-'PY'
		from scapy.layers.inet import IP, TCP
		from scapy.sendrecv import sr1
		from scapy.config import conf
		conf.verb = 0
		n = 0
		for port in (40000, 40003):
		    a = sr1(IP(src="198.18.3.254", dst="198.18.3.2") /
		            TCP(sport=port, dport=19792, flags="S", seq=1000,
		                options=[("MSS", 1400), ("NOP", None), ("WScale", 14)]),
		            timeout=2)
		    n += a is not None and TCP in a and (int(a[TCP].flags) & 0x12) == 0x12
		print(n)
	PY
	) || fail "R could not send SYNs"
	echo "SYN-ACKs R got: $syn"
	((syn == 0)) || fail "B answered a stranger's SYN"
	(($(mpip_stat "$B" rx_encap_bad) - b0 >= 24)) || fail "not every bad datagram was counted"
	(($(mpip_stat "$B" rx_auth_fail) - f0 >= 20)) || fail "not every forged CM inside UDP was counted"
	(($(mpip_stat "$B" path_learned) == l0)) || fail "B learned a path from a forged CM"
	[[ ! -s $T/got6200 ]] || fail "B delivered a datagram inside"
}

# (R keeps the handshakes' segments it forwards to and from B, for
# t_ftcp_replayed_acks)
t_ftcp_setup() {
	lab
	capture_start "$R" b1 hs1 'tcp port 19792 and less 120'
	capture_start "$R" b2 hs2 'tcp port 19792 and less 120'
	mpipctl_in "$A" set nat_mode faketcp
	warm_up
	wait_for 20 ftcp_all_open || fail "the fake TCP connections did not open: $(ftcp_brief)"
	capture_stop hs1
	capture_stop hs2
	ftcp_brief
}

# A's paths inside fake TCP, and B's four learned ones too
ftcp_all_open() {
	mpip_paths "$A" | jq -e 'length == 4 and all(.[]; .encap == "faketcp")' >/dev/null &&
		mpip_paths "$B" | jq -e '[.[] | select(.learned and .encap == "faketcp")] |
			length == 4' >/dev/null
}

ftcp_brief() {
	mpip_paths "$A" | jq -c '[.[] | {saddr, daddr, state, verified, encap, tx_pkts}]'
	mpip_paths "$B" | jq -c '[.[] | select(.learned) | {saddr, daddr, dport, state, encap, tx_pkts}]'
	mpipctl_in "$A" -j stats | jq -c '{ftcp_ctrl, ftcp_open, tx_encap, rx_encap, rx_encap_bad, tx_gso_split, tx_encap_gso, rx_encap_gro, tx_encap_frag}'
	mpipctl_in "$B" -j stats | jq -c '{ftcp_ctrl, ftcp_open, tx_encap, rx_encap, rx_encap_bad, tx_gso_split, tx_encap_gso, rx_encap_gro, tx_encap_frag}'
}

t_ftcp() {
	local n min fa h o
	local -A sent split
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	fa=$(mpip_stat "$A" tx_encap_frag)
	for h in A B; do
		sent[$h]=$(mpip_stat "${!h}" tx_encap_gso)
		split[$h]=$(mpip_stat "${!h}" rx_encap_gro)
	done
	capture_start "$R" w1 ftcp1 'tcp port 19792'
	capture_start "$R" w2 ftcp2 'tcp port 19792'
	both_links ftcp 5040
	capture_stop ftcp1
	capture_stop ftcp2
	n=$(($(capture_packets ftcp1) + $(capture_packets ftcp2)))
	echo "packets of fake TCP connections at the internet router: $n"
	ftcp_brief
	# A's segments fit the path inside fake TCP: B, in nat_mode auto,
	# left room in the MSS of its SYN-ACKs for UDP only, and A lowered
	# it by what fake TCP adds beyond.  (Before: A sent half its packets
	# to B fragmented.)
	fa=$(($(mpip_stat "$A" tx_encap_frag) - fa))
	echo "A sent $fa packets inside fake TCP too big for the path"
	((fa == 0)) || fail "A sent $fa packets inside fake TCP too big for the path"
	# tx_gso 1: each host's segments of a TCP GSO packet left as one TCP
	# GSO packet of its fake connection, which veths and routers passed
	# on whole and the other host split
	for h in A B; do
		o=B
		[[ $h == B ]] && o=A
		sent[$h]=$(($(mpip_stat "${!h}" tx_encap_gso) - sent[$h]))
		split[$o]=$(($(mpip_stat "${!o}" rx_encap_gro) - split[$o]))
		echo "$h sent ${sent[$h]} GSO packets of fake TCP segments, $o split ${split[$o]}"
		((sent[$h] > 0 && split[$o] > 0)) ||
			fail "$h sent ${sent[$h]} GSO packets of fake TCP segments, $o split ${split[$o]}"
	done
	# a third of the data segments of the file both ways (965 for the
	# 2 MiB file; the debug kernel's is an eighth of it, random_file)
	min=$(($(stat -c %s "$T/f") * 2 / 1448 / 3))
	((n > min)) || fail "only $n packets crossed the NATs inside fake TCP (want over $min)"
}

# forge_to_b FILE [KINDS]: R sends B, from each NAT address and port of
# a fake TCP connection in FILE (lines "NAT_ADDR NAT_PORT B_ADDR"), 32
# segments of each kind of KINDS (default "rst synack ack"): RSTs with
# sequence numbers it cannot know, SYN-ACKs whose sequence numbers are
# 0x5eed0000 + i, bare ACKs of numbers it cannot know (one of the cookie
# would open B's end again), SYNs without an auth option, and SYNs with
# one of the right form and random bytes in it; prints how many it sent
# (scapy makes about 25
# a second in a guest under emulation: 100 of each took 35 s, and took
# no more chances: a RST counts only with the one sequence number)
forge_to_b() {
	in_ns "$R" /usr/bin/python3 - "$1" "${2:-rst synack ack}" <<-'PY'
		import random, sys
		from scapy.layers.inet import IP, TCP
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		r32 = lambda: random.getrandbits(32)
		kinds = {
		    "rst": lambda i: dict(flags="R", seq=r32()),
		    "synack": lambda i: dict(flags="SA", seq=0x5eed0000 + i, ack=r32()),
		    "ack": lambda i: dict(flags="A", seq=r32(), ack=r32()),
		    "syn": lambda i: dict(flags="S", seq=r32()),
		    "asyn": lambda i: dict(flags="S", seq=r32(), options=[
		        ("MSS", 1400), ("NOP", None), ("WScale", 14),
		        (253, bytes.fromhex("6d70") + random.randbytes(12))]),
		}
		n = 0
		for line in open(sys.argv[1]):
		    src, sport, dst = line.split()
		    ip = IP(src=src, dst=dst)
		    segs = [ip / TCP(sport=int(sport), dport=19792, **kinds[k](i))
		            for k in sys.argv[2].split() for i in range(32)]
		    send(segs)
		    n += len(segs)
		print(n)
	PY
}

# only_inside_ftcp NAME PORT OPEN0 [REOPENS]: TCP both ways over both
# links (both_links NAME PORT) goes inside the fake TCP connections alone:
# no full-size datagram to or from port 19792 at R (none closed or kept
# its path out), and B's ftcp_open is at most REOPENS (default 0) above
# OPEN0 (no more opened again)
only_inside_ftcp() {
	local big reopened
	capture_start "$R" w1 big1 'udp port 19792 and greater 1000'
	capture_start "$R" w2 big2 'udp port 19792 and greater 1000'
	both_links "$1" "$2"
	big=$(($(capture_count big1) + $(capture_count big2)))
	echo "full-size datagrams to or from port 19792 at R during the transfer: $big"
	ftcp_brief
	((big == 0)) || fail "a path's packets went inside UDP, not its fake TCP connection"
	reopened=$(($(mpip_stat "$B" ftcp_open) - $3))
	echo "fake TCP connections opened again: $reopened (allowed: ${4:-0})"
	((reopened >= 0 && reopened <= ${4:-0})) || fail "a fake TCP connection opened again"
}

# After the transfer of t_ftcp: R forges RSTs, SYN-ACKs and bare ACKs to
# B on each fake TCP connection that crossed it (their NAT ends from its
# capture).
# B answers none (no segment of B's acknowledges a forged SYN-ACK), no
# connection closes (the next transfer goes inside fake TCP alone: no
# full-size datagram to or from port 19792 at R) and none opens again
# (B's ftcp_open), and TCP both ways is intact over both links.
t_ftcp_forged() {
	local sent open0 acks n
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	for n in 1 2; do
		tcpdump -nn -r "$T/ftcp$n.pcap" 'tcp and dst port 19792 and not src net 198.18.3.0/24 and not src net 198.18.4.0/24' 2>/dev/null
	done | awk '{ split($3, s, "."); split($5, d, ".");
		print s[1] "." s[2] "." s[3] "." s[4], s[5], d[1] "." d[2] "." d[3] "." d[4] }' |
		sort -u >"$T/ftcp-conns"
	cat "$T/ftcp-conns"
	(($(wc -l <"$T/ftcp-conns") >= 2)) || fail "no fake TCP connections at R to attack"
	open0=$(mpip_stat "$B" ftcp_open)
	capture_start "$R" b1 frg1 'tcp and src port 19792'
	capture_start "$R" b2 frg2 'tcp and src port 19792'
	sent=$(forge_to_b "$T/ftcp-conns") || fail "R could not send"
	capture_stop frg1
	capture_stop frg2
	acks=$(for n in 1 2; do tcpdump -nn -S -r "$T/frg$n.pcap" 2>/dev/null; done |
		awk '{ for (i = 1; i < NF; i++) if ($i == "ack") {
			a = $(i + 1); sub(",", "", a);
			if (a + 0 > 1592590336 && a + 0 <= 1592590436) n++ } }
			END { print n + 0 }')
	echo "forged segments sent: $sent; B's segments acknowledging a forged SYN-ACK: $acks"
	((acks == 0)) || fail "B answered forged SYN-ACKs"
	only_inside_ftcp forged 5070 "$open0"
}

# syn_refusals: B's counters that a refused SYN grows, and their sum
syn_refusals() {
	local a r l
	a=$(mpip_stat "$B" rx_auth_fail)
	r=$(mpip_stat "$B" rx_replay)
	l=$(mpip_stat "$B" ctrl_limited)
	echo "$a $r $l $((a + r + l))"
}

# replay_syns PCAP...: R sends B again, three times each, A's SYNs in
# PCAP (from the NATs' ends, as B got them); prints how many it sent
replay_syns() {
	in_ns "$R" /usr/bin/python3 - "$@" <<-'PY'
		import sys
		from scapy.layers.inet import IP, TCP
		from scapy.sendrecv import send
		from scapy.utils import rdpcap
		from scapy.config import conf
		conf.verb = 0
		syns = [p[IP] for f in sys.argv[1:] for p in rdpcap(f)
		        if TCP in p and p[TCP].dport == 19792 and p[TCP].flags == "S"]
		send(syns * 3)
		print(3 * len(syns))
	PY
}

# R forges SYNs to B on each fake TCP connection that crossed it, from
# its NAT end, as A's own SYN of a new connection would come: 32 without
# the auth option and 32 with it, of random contents, on each; then, 2 s
# later (the budget of answers to strangers whole again), it replays A's
# own SYNs (captured while the connections opened).  A SYN that B
# answered would make it keep that path's packets out of the connection
# (inside UDP) for 3 s, and a NAT whose UDP mapping had expired then cost
# a reopen.  Now a SYN carries a counter and a MAC under the pair's keys:
# B answers none (no SYN-ACK at R), counts each forged one (rx_auth_fail,
# or ctrl_limited when over the budget of answers, which it checks
# first) and each copy (its counter was taken: rx_replay, in the replay
# window or behind it; or ctrl_limited), and a transfer both ways right
# after goes inside fake TCP alone, with no connection opened again.
# (security.rst, "Fake TCP")
t_ftcp_forged_syns() {
	local sent copies open0 synacks f='tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)'
	local -a c0 c1 c2
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	open0=$(mpip_stat "$B" ftcp_open)
	read -r -a c0 <<<"$(syn_refusals)"
	# (B's SYN-ACKs: the NAT ends' ports are 19792 too, the forged SYNs'
	# source ports)
	capture_start "$R" b1 syn1 "tcp and src port 19792 and $f"
	capture_start "$R" b2 syn2 "tcp and src port 19792 and $f"
	sent=$(forge_to_b "$T/ftcp-conns" "syn asyn") || fail "R could not send"
	sleep 1
	read -r -a c1 <<<"$(syn_refusals)"
	sleep 1
	copies=$(replay_syns "$T/hs1.pcap" "$T/hs2.pcap") || fail "R could not replay"
	capture_stop syn1
	capture_stop syn2
	synacks=$(($(capture_packets syn1) + $(capture_packets syn2)))
	read -r -a c2 <<<"$(syn_refusals)"
	echo "forged SYNs sent: $sent (B's rx_auth_fail +$((c1[0] - c0[0])), ctrl_limited +$((c1[2] - c0[2])));" \
		"copies of A's SYNs: $copies (rx_auth_fail +$((c2[0] - c1[0])), rx_replay +$((c2[1] - c1[1])), ctrl_limited +$((c2[2] - c1[2])));" \
		"B's SYN-ACKs: $synacks"
	((copies >= 3)) || fail "no SYN of A's captured to replay"
	((synacks == 0)) || fail "B answered $synacks forged or replayed SYNs"
	((c1[0] - c0[0] + c1[2] - c0[2] >= sent)) ||
		fail "B counted $((c1[0] - c0[0] + c1[2] - c0[2])) of the $sent forged SYNs refused"
	((c2[1] - c1[1] + c2[2] - c1[2] >= copies)) ||
		fail "B counted $((c2[1] - c1[1] + c2[2] - c1[2])) of the $copies copies as replays or over the budget"
	only_inside_ftcp forgedsyn 5090 "$open0"
}

# replay_cookie_acks PCAP...: R sends B again, three times each, the
# bare ACKs in PCAP that acknowledge a SYN-ACK of B's in PCAP (its
# sequence number, the cookie, + 1) from the address and port it went to:
# those with which A opened B's ends; prints how many it sent
replay_cookie_acks() {
	in_ns "$R" /usr/bin/python3 - "$@" <<-'PY'
		import sys
		from scapy.layers.inet import IP, TCP
		from scapy.sendrecv import send
		from scapy.utils import rdpcap
		from scapy.config import conf
		conf.verb = 0
		pkts = [p[IP] for f in sys.argv[1:] for p in rdpcap(f) if TCP in p]
		cookie = {(p.dst, p[TCP].dport, p.src): p[TCP].seq for p in pkts
		          if p[TCP].sport == 19792 and p[TCP].flags == "SA"}
		acks = [p for p in pkts if p[TCP].dport == 19792 and
		        p[TCP].flags == "A" and not bytes(p[TCP].payload) and
		        cookie.get((p.src, p[TCP].sport, p.dst), -2) + 1 == p[TCP].ack]
		send(acks * 3)
		print(3 * len(acks))
	PY
}

# R, on the path, replays to B the ACKs with which A opened B's ends of
# the fake TCP connections (captured during faketcp_lab_up).  B has sent
# on those connections since, and no SYN came lately: each copy is old.
# Before, each opened B's end again (ftcp_open) and took B's numbers back
# to its cookie's, far behind what the NAT had seen of them.  Now none
# opens, and a transfer both ways then goes inside fake TCP alone, with
# nothing INVALID at the NATs.
t_ftcp_replayed_acks() {
	local sent open0
	open0=$(mpip_stat "$B" ftcp_open)
	sent=$(replay_cookie_acks "$T/hs1.pcap" "$T/hs2.pcap") || fail "R could not replay"
	echo "copies of A's ACKs of B's cookies sent: $sent"
	((sent >= 3)) || fail "no ACK of A's captured to replay"
	sleep 1
	(($(mpip_stat "$B" ftcp_open) == open0)) ||
		fail "a copy of A's ACK opened B's end again"
	only_inside_ftcp replayed 5095 "$open0"
}

# A's two paths through n1 (over eth1) are in state $1
eth1_paths() {
	mpip_paths "$A" | jq -e --arg s "$1" '[.[] | select(.dev == "eth1" and
		.state == $s)] | length == 2' >/dev/null
}

# n1 forwards nothing (cut) or all again (uncut); conntrack still sees
# what it drops
cut_n1() {
	in_ns "${P}n1" nft -f - <<-EOF
		table inet cut {
			chain hold { type filter hook forward priority -10; policy drop; }
		}
	EOF
}
uncut_n1() { in_ns "${P}n1" nft delete table inet cut; }

# invalid_log_start / invalid_log_show: n1 copies what it finds INVALID
# to NFLOG group 7, where a tcpdump keeps it until the subtest ends, so
# that a failure can say which packets they were (diagnostics only:
# without NFLOG, nothing)
invalid_log_start() {
	in_ns "${P}n1" nft insert rule inet natlab filt ct state invalid log group 7 \
		2>/dev/null || return 0
	ip netns exec "${P}n1" tcpdump -i nflog:7 -nn -U -w "$T/inv.pcap" \
		</dev/null >/dev/null 2>&1 &
	# (the subtest's subshell ends it when it ends)
	# shellcheck disable=SC2064
	trap "kill $! 2>/dev/null || true" EXIT
}
invalid_log_show() {
	sleep 1
	echo "what n1 found INVALID (from NFLOG):"
	tcpdump -nn -S -r "$T/inv.pcap" 2>/dev/null | head -n 20 || true
}

# stop_b_flow: end t_ftcp_reopen's iperf3 -R in A (the iperf3 itself,
# not only the shell of in_ns: left running, its flow went on into the
# next subtest's flush and warm-up); fails if it had ended already
stop_b_flow() { in_ns "$A" pkill -f "iperf3 -c 198.18.3.2 -p 5310"; }

# A's paths through n1 go down (n1 passes nothing for a while) while B
# sends to A over all paths (iperf3 -R), and come back: A opens their
# fake TCP connections again, on four-tuples that n1 still tracks as
# established, while B goes on sending.  Conntrack follows a new
# connection there only if the SYN-ACK is the next segment it sees of
# it; in a loaded run B's segments came between, n1 kept the old one and
# found what A sent in the new one INVALID (63 packets, 62 of 1000
# datagrams lost).  So: all of 3000 datagrams from A (6 s), sent from
# when n1 passes again, arrive, and n1 finds no more than 4 packets
# INVALID (A's ACK of each of the two connections, in up to two attempts
# it did not follow: A sends nothing else inside before B answers).
t_ftcp_reopen() {
	local i1 pid syn0 inv
	iperf3_server_start "$B" 5310 || fail "no iperf3 server on B"
	in_ns "$A" iperf3 -c 198.18.3.2 -p 5310 -u -b 8M -l 1000 -R \
		-t $((60 * ${MPIP_TEST_WAIT_SCALE:-1})) >/dev/null 2>&1 &
	pid=$!
	sleep 2
	syn0=$(mpip_stat "$A" ftcp_ctrl)
	cut_n1
	wait_for 30 eth1_paths down || { uncut_n1; fail "A's paths through n1 not down: $(ftcp_brief)"; }
	i1=$(nat_counter "${P}n1" ct_invalid)
	invalid_log_start
	uncut_n1
	UDP_SIZE=1000 UDP_RECV_TIMEOUT=30 udp_exchange "$A" "$B" 198.18.3.2 6003 3000 7003 2000 ||
		{ stop_b_flow; nat_report; invalid_log_show; fail "datagrams lost: $(cat "$(tmpdir)/udp-res.6003")"; }
	wait_for 20 eth1_paths up || { stop_b_flow; fail "A's paths through n1 not up again: $(ftcp_brief)"; }
	# (counted before B's flow stops: A's ICMP errors to the rest of
	# B's datagrams then, port unreachable, are INVALID at n1 too, as
	# NFLOG showed once: 6 of them, none of fake TCP)
	inv=$(($(nat_counter "${P}n1" ct_invalid) - i1))
	if stop_b_flow; then
		echo "B's flow to A ran throughout"
	else
		echo "B's flow to A ended early (iperf3's control connection)"
	fi
	wait "$pid" 2>/dev/null || true
	echo "A's SYNs and ACKs of its own since the cut: $(($(mpip_stat "$A" ftcp_ctrl) - syn0))"
	ftcp_brief
	nat_report
	echo "INVALID at n1 from the cut's end to A's paths up: $inv"
	((inv <= 4)) || {
		invalid_log_show
		fail "n1 found $inv packets INVALID"
	}
}

# A's paths over eth1 inside fake TCP, those over eth2 inside UDP
ftcp_eth1_only() {
	mpip_paths "$A" | jq -e 'length == 4 and
		all(.[]; (.dev == "eth1") == (.encap == "faketcp") and .encap != "none")' >/dev/null
}

# B in nat_mode faketcp too, but public: it opens no fake TCP connection
# of its own, so a SYN from A, which left fake TCP's room in its MSS,
# keeps that MSS at B.  B, with tx_gso 0, sends A a file: its segments
# inside A's fake TCP connections fill the 1500-byte path (before:
# B lowered the MSS by 12 more, and its largest packet was 1488 bytes),
# none is fragmented, the data arrives intact.
t_ftcp_syn_room() {
	local fa full big min
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	mpipctl_in "$B" set nat_mode faketcp
	mpipctl_in "$B" set tx_gso 0
	fa=$(mpip_stat "$B" tx_encap_frag)
	capture_start "$R" b1 synroom 'src host 198.18.3.2 and tcp src port 19792'
	tcp_fetch_file "$A" "$B" 198.18.3.2 5085 "$T/f" "$T/h.synroom"
	capture_stop synroom
	mpipctl_in "$B" set tx_gso 1
	mpipctl_in "$B" set nat_mode auto
	sha256_equal "$T/f" "$T/h.synroom" || fail "TCP data B -> A differs"
	fa=$(($(mpip_stat "$B" tx_encap_frag) - fa))
	full=$(capture_packets synroom 'ip[2:2] == 1500')
	big=$(capture_packets synroom 'ip[2:2] > 1500')
	echo "B's fake TCP segments at R's b1: $full of 1500 bytes, $big larger; $fa too big for the path"
	((fa == 0 && big == 0)) || fail "B sent $fa packets too big for the path ($big over 1500 bytes)"
	# a quarter of the file's segments (B's eth1 carries about two thirds)
	min=$(($(stat -c %s "$T/f") / 1448 / 4))
	((full > min)) || fail "B's segments did not fill the path: $full of 1500 bytes (want over $min)"
}

# fake TCP set on eth1 only (mpipctl link set ... nat faketcp), the
# namespace back to auto, tables flushed: eth1's paths go inside fake TCP,
# eth2's inside UDP, TCP both ways over both links
t_ftcp_link() {
	mpipctl_in "$A" set nat_mode auto
	mpipctl_in "$A" link set dev eth1 nat faketcp
	mpipctl_in "$A" -j show links | jq -c '.[] | {dev, nat}'
	mpipctl_in "$A" flush
	mpipctl_in "$B" flush
	warm_up
	wait_for 20 ftcp_eth1_only || fail "not eth1's paths alone inside fake TCP: $(ftcp_brief)"
	both_links ftcplink 5060
	ftcp_brief
	mpipctl_in "$A" link set dev eth1 nat default
}

# a lab whose links delay each packet 60 ms at each of their shapers (a
# round trip of 300 ms, a satellite's), A's paths inside UDP
t_burst_setup() {
	lab --link1 40mbit,60ms --link2 20mbit,60ms
	warm_up
}

# nat_mode faketcp on A, both hosts flushed, then 8 s of UDP offered at
# 40 Mbit/s from A to B (iperf3; the debug kernel's guest gets longer):
# A's paths form again and their fake TCP connections open in the middle
# of it, where each would take more than 128 KB of it in the round trip
# before B's window update crosses the NAT (conntrack lets a segment
# that runs past the SYN-ACK's 64 KB window through for up to another
# window, then finds them INVALID).  All four open while it runs, and no
# packet is INVALID at a NAT.  (Before the opener kept to the SYN-ACK's
# window: 9210 packets INVALID at n1 and 3905 at n2, 70 % of the
# datagrams lost, and B's connections opened 7 times for 4.)
t_burst() {
	local i1 i2 out
	iperf3_server_start "$B" 5300 || fail "no iperf3 server on B"
	mpipctl_in "$A" set nat_mode faketcp
	mpipctl_in "$A" flush
	mpipctl_in "$B" flush
	i1=$(nat_counter "${P}n1" ct_invalid)
	i2=$(nat_counter "${P}n2" ct_invalid)
	out=$(in_ns "$A" iperf3 -c 198.18.3.2 -p 5300 -u -b 40M -l 1200 \
		-t $((8 * ${MPIP_TEST_WAIT_SCALE:-1})) -J) ||
		fail "iperf3 failed"
	echo "opened while the flow ran: $(mpip_stat "$B" ftcp_open) of 4"
	jq -c '.end.sum | {bytes, lost_percent}' <<<"$out"
	(($(mpip_stat "$B" ftcp_open) >= 4)) ||
		fail "the fake TCP connections did not all open during the flow: $(ftcp_brief)"
	ftcp_brief
	nat_report
	nat_clean "$i1" "$i2"
}

t_mtu_setup() {
	lab --wan-mtu 1400
	warm_up
}

# The NATs' wan links (n1, n2 and R's ends) have MTU 1400, which neither
# host's links show: the host that sends first learns it from the errors
# of the router before the wan link (mtu_run FIRST PORT; t_mtu: A, whose
# paths are its own through n1 and n2; t_mtu_b: B, whose paths are
# learned, to the NATs' addresses).  Data is intact both ways over both
# links.  Once the first errors came, the flows' segments leave room for
# mpip's trailer and UDP, so that mpip sends hardly any packet to be
# fragmented (tx_encap_frag: before, every full-size one went so, its
# segment as big as the path's MTU and mpip's 52 bytes on top), and the
# other host's segments, cut to the MSS the first host's SYNs now give,
# fit as well.  The first host's paths inside UDP show the MTU.
mtu_run() {
	local first=$1 port=$2 h e f
	local -A e0 f0
	for h in "$A" "$B"; do
		e0[$h]=$(mpip_stat "$h" tx_encap)
		f0[$h]=$(mpip_stat "$h" tx_encap_frag)
	done
	if [[ $first == "$B" ]]; then
		tcp_fetch_file "$A" "$B" 198.18.3.2 "$port" "$T/f" "$T/h.first"
		sha256_equal "$T/f" "$T/h.first" || fail "TCP data B -> A differs"
	fi
	both_links mtu $((port + 1))
	for h in "$A" "$B"; do
		mpipctl_in "$h" -j stats | jq -c '{tx_no_room, tx_bare, tx_encap, rx_encap, tx_encap_frag, tx_path_mtu, rx_icmp_pmtu}'
		mpip_paths "$h" | jq -c '[.[] | {saddr, daddr, encap, mtu, tx_pkts}]'
		e=$(($(mpip_stat "$h" tx_encap) - e0[$h]))
		f=$(($(mpip_stat "$h" tx_encap_frag) - f0[$h]))
		echo "$h: $e packets sent inside UDP, $f of them to be fragmented"
		((f * 50 <= e)) ||
			fail "$h sent $f of its $e packets inside UDP to be fragmented (at most 2 % may)"
	done
	(($(mpip_stat "$first" rx_icmp_pmtu) > 0)) ||
		fail "$first took no \"fragmentation needed\" error: the lab did not shrink its paths"
	mpip_paths "$first" | jq -e '[.[] | select(.encap == "udp" and .mtu == 1400)] |
		length > 0' >/dev/null ||
		fail "no path of $first inside UDP shows the MTU 1400"
}

t_mtu() { mtu_run "$A" 5020; }

t_mtu_b() { mtu_run "$B" 5030; }

# R forges "fragmentation needed" errors to B, MTU 552, quoting a packet
# inside UDP on each of B's learned paths, as far as a stranger can: its
# outer headers (the control port and the NAT's, ports any stranger can
# guess), not the packet inside, whose ports would name a session.  B
# refuses them all (rx_icmp_refused) and no route of B's takes their MTU:
# neither mpip (review 57, F3: before, it lowered those routes' MTU to
# the kernel's floor) nor the kernel's UDP, which would take it for any
# UDP datagram quoted; TCP both ways is still intact over both links.
t_forged_pmtu() {
	local p0 r0 routes
	mpip_paths "$B" | jq -r '.[] | select(.learned and .encap != "none") |
		"\(.saddr) \(.daddr) \(.dport)"' >"$T/learned"
	[[ -s $T/learned ]] || fail "B has no learned path inside UDP"
	p0=$(mpip_stat "$B" rx_icmp_pmtu)
	r0=$(mpip_stat "$B" rx_icmp_refused)
	in_ns "$R" /usr/bin/python3 - "$T/learned" <<-'PY' || fail "R could not send"
		import sys
		from scapy.layers.inet import IP, UDP, ICMP
		from scapy.packet import Raw
		from scapy.sendrecv import send
		from scapy.config import conf
		conf.verb = 0
		for line in open(sys.argv[1]):
		    b, nat, port = line.split()
		    quote = IP(src=b, dst=nat, len=1480) / UDP(sport=19792, dport=int(port), len=1460)
		    send(IP(src=nat, dst=b) / ICMP(type=3, code=4, nexthopmtu=552) /
		         Raw(bytes(quote)[:28]))
	PY
	sleep 1
	routes=$(while read -r b nat _; do
		in_ns "$B" ip route get "$nat" from "$b"
	done <"$T/learned")
	echo "$routes"
	echo "B: rx_icmp_pmtu $p0 -> $(mpip_stat "$B" rx_icmp_pmtu)," \
		"rx_icmp_refused $r0 -> $(mpip_stat "$B" rx_icmp_refused)"
	(($(mpip_stat "$B" rx_icmp_refused) - r0 >= $(wc -l <"$T/learned"))) ||
		fail "B did not refuse every forged error"
	(($(mpip_stat "$B" rx_icmp_pmtu) == p0)) || fail "B took a forged error"
	! grep -q 'mtu 552' <<<"$routes" || fail "a forged error set a path's MTU"
	mpip_paths "$B" | jq -e 'all(.[]; .mtu != 552)' >/dev/null ||
		fail "a forged error gave a path of B the MTU 552"
	both_links forgedmtu 5080
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 22
ktap_run udp_blocked_lab_up t_blocked_setup
ktap_run udp_blocked_tcp_both_ways_over_both_nats t_blocked
ktap_run stolen_cms_from_third_host_make_no_usable_path t_stolen_cms
ktap_run replayed_cms_from_third_host_make_no_path t_replayed_cms
ktap_run bad_shims_dropped_and_counted t_bad_shim
ktap_run learned_paths_at_most_8_per_node t_learned_cap
ktap_run faketcp_lab_up t_ftcp_setup
ktap_run faketcp_tcp_both_ways_over_both_nats t_ftcp
ktap_run forged_rsts_and_synacks_change_nothing t_ftcp_forged
ktap_run forged_and_replayed_syns_change_nothing t_ftcp_forged_syns
ktap_run replayed_acks_of_cookies_open_nothing t_ftcp_replayed_acks
ktap_run faketcp_reopens_while_b_sends t_ftcp_reopen
ktap_run faketcp_public_peer_keeps_syn_mss t_ftcp_syn_room
ktap_run faketcp_on_one_link_only t_ftcp_link
ktap_run delay_300ms_lab_up t_burst_setup
ktap_run faketcp_opens_under_a_udp_flow t_burst
ktap_run wan_mtu_1400_lab_up t_mtu_setup
ktap_run wan_mtu_1400_tcp_both_ways_no_black_hole t_mtu
ktap_run wan_mtu_1400_b_first_lab_up t_mtu_setup
ktap_run wan_mtu_1400_b_sends_first t_mtu_b
ktap_run forged_frag_needed_taken_not t_forged_pmtu
ktap_run dmesg_clean t_dmesg
ktap_finish
