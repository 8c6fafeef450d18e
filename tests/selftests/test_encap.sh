#!/usr/bin/env bash
# test_encap.sh - nat_mode udp between two MPIP hosts joined by two links
# (no NAT): every path carries its packets inside UDP (issue 21).  The
# paths are up with ENCAP udp, and neither NAT-detected nor learned; a
# 4 MiB TCP file each way (tx_gso 1 and 0) and 1000 UDP datagrams arrive
# intact, both links carry data, and packets went inside UDP both ways,
# none of them dropped as bad, as UDP GSO packets that the receiver split
# with tx_gso 1 (one by one with 0); datagrams that GRO merged at the receiver
# are split again.  Back to auto, after a flush, the paths
# carry their packets as they are; with one link set to udp (mpipctl
# link set dev eth2 nat udp), only the path from it goes inside UDP, and
# that link's setting alone (nat_mode none) makes A's SYNs leave room for
# the UDP header and shim in their MSS.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ec

t_setup() {
	local ns
	random_file "$T/file" 4
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set nat_mode udp
	done
	[[ $(mpipctl_in "$A" -j get nat_mode | jq .nat_mode) == 2 ]] || fail "nat_mode udp did not read back as 2"
	head -c 100000 /dev/urandom >"$T/small"
	ip netns exec "$B" timeout 40 socat -u TCP-LISTEN:4999,reuseaddr "OPEN:$T/small.out,creat,trunc" \
		</dev/null &
	wait_for 30 tcp_listening "$B" 4999 || fail "nothing listens on B:4999"
	if ! in_ns "$A" timeout 30 socat -u "OPEN:$T/small" TCP:10.1.1.2:4999; then
		in_ns "$A" ss -tin
		for ns in "$A" "$B"; do
			mpipctl_in "$ns" -j stats | jq -c 'with_entries(select(.value != 0))'
			mpip_paths_show "$ns"
			mpipctl_in "$ns" show sessions
		done
		fail "the first TCP flow, with every path inside UDP, did not finish in 30 s"
	fi
	wait
	sha256_equal "$T/small" "$T/small.out" || fail "warm-up TCP data differs"
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1
}

# both hosts' up paths: inside UDP to the peer's control port, not NATed
t_paths_encap() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths "$ns" | jq -e '[.[] | select(.state == "up")] | length == 2 and
			all(.[]; .encap == "udp" and .dport == 19792 and (.nat | not) and
			(.learned | not))' >/dev/null ||
			fail "$ns: paths not inside UDP: $(mpip_paths "$ns" | jq -c '[.[] | {saddr, daddr, state, encap, nat}]')"
	done
}

# transfer TAG: the file both ways and 1000 datagrams A -> B, intact, both
# links of A carrying data, packets inside UDP at both ends, none bad
transfer() {
	local tag=$1 a1 a2 ta tb ga gb
	ta=$(mpip_stat "$A" tx_encap)
	tb=$(mpip_stat "$B" tx_encap)
	ga=$(mpip_stat "$A" tx_encap_gso)
	gb=$(mpip_stat "$B" rx_encap_gro)
	a1=$(tx_bytes "$A" eth1)
	a2=$(tx_bytes "$A" eth2)
	tcp_send_file "$A" "$B" 10.1.1.2 5000 "$T/file" "$T/g.$tag"
	sha256_equal "$T/file" "$T/g.$tag" || fail "$tag: TCP data A -> B differs"
	tcp_send_file "$B" "$A" 10.1.1.1 5001 "$T/file" "$T/h.$tag"
	sha256_equal "$T/file" "$T/h.$tag" || fail "$tag: TCP data B -> A differs"
	udp_exchange "$A" "$B" 10.1.1.2 6000 1000 7000 200 || fail "$tag: datagrams lost"
	a1=$(($(tx_bytes "$A" eth1) - a1))
	a2=$(($(tx_bytes "$A" eth2) - a2))
	ga=$(($(mpip_stat "$A" tx_encap_gso) - ga))
	gb=$(($(mpip_stat "$B" rx_encap_gro) - gb))
	echo "$tag: A sent eth1 $a1 B, eth2 $a2 B; inside UDP: A +$(($(mpip_stat "$A" tx_encap) - ta)), B +$(($(mpip_stat "$B" tx_encap) - tb)); A sent $ga UDP GSO packets, B split $gb"
	# tx_gso 1: the datagrams of A's TCP GSO packets leave as UDP GSO
	# packets, which B splits; tx_gso 0: one by one
	if [[ $tag == gso1 ]]; then
		((ga > 0 && gb > 0)) || fail "$tag: A sent $ga UDP GSO packets, B split $gb"
	else
		((ga == 0)) || fail "$tag: A sent $ga UDP GSO packets with tx_gso 0"
	fi
	((a1 > 100000 && a2 > 100000)) || fail "$tag: A's data did not go over both links"
	(($(mpip_stat "$A" tx_encap) > ta && $(mpip_stat "$B" tx_encap) > tb)) ||
		fail "$tag: no packet inside UDP one way"
	(($(mpip_stat "$A" rx_encap_bad) == 0 && $(mpip_stat "$B" rx_encap_bad) == 0)) ||
		fail "$tag: datagrams inside UDP dropped as bad"
}

t_gso() { transfer gso1; }

t_nogso() {
	local ns
	for ns in "$A" "$B"; do mpipctl_in "$ns" set tx_gso 0; done
	transfer gso0
	for ns in "$A" "$B"; do mpipctl_in "$ns" set tx_gso 1; done
}

# gro_on FEATURE on|off: GRO and FEATURE on B's ends of both links, and
# at A's ends TSO off (on: a veth hands a packet to its peer's GRO only
# if it has no TSO, or the packet came from a UDP socket, veth_xmit())
# and a netem delay of 2 ms (none), whose timer sends what is due in a
# burst, which B's GRO then finds together
gro_on() {
	local dev tso=on
	[[ $2 == on ]] && tso=off
	for dev in eth1 eth2; do
		in_ns "$A" ethtool -K "$dev" tso "$tso"
		if [[ $2 == on ]]; then
			tc -n "$A" qdisc replace dev "$dev" root netem delay 2ms
		else
			tc -n "$A" qdisc del dev "$dev" root 2>/dev/null || true
		fi
		in_ns "$B" ethtool -K "$dev" gro "$2" "$1" "$2"
	done
}

# GRO on B's ends of both links, with rx-udp-gro-forwarding, then with
# rx-gro-list: no socket is bound to B's control port, so GRO takes A's
# datagrams to it for ones to forward and merges those of a flow.  B
# splits them again and takes each packet out (rx_encap_gro); the file
# arrives intact and nothing is dropped as bad.  (Review 57, F2: before,
# B took the first packet out of a merged datagram and dropped it with
# the rest behind it as bad.)
t_gro_merged() {
	local feat port=5010 g0 bad0 g bad
	for feat in rx-udp-gro-forwarding rx-gro-list; do
		# shellcheck disable=SC2064 # this feature's, now
		trap "gro_on $feat off || true" EXIT
		gro_on "$feat" on
		g0=$(mpip_stat "$B" rx_encap_gro)
		bad0=$(mpip_stat "$B" rx_encap_bad)
		tcp_send_file "$A" "$B" 10.1.1.2 "$port" "$T/file" "$T/gro.$port"
		gro_on "$feat" off
		trap - EXIT
		g=$(($(mpip_stat "$B" rx_encap_gro) - g0))
		bad=$(($(mpip_stat "$B" rx_encap_bad) - bad0))
		echo "$feat: B split $g merged datagrams, dropped $bad as bad"
		sha256_equal "$T/file" "$T/gro.$port" || fail "$feat: TCP data A -> B differs"
		((bad == 0)) || fail "$feat: B dropped $bad datagrams inside UDP as bad"
		((g > 0)) || fail "$feat: GRO merged no datagrams to B's control port"
		port=$((port + 1))
	done
}

# csum_send TAG N: N datagrams "TAG" from A:7030 to B:6030, 20 ms apart
csum_send() {
	in_ns "$A" /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.1.1.1", 7030))
for i in range(int(sys.argv[2])):
    s.sendto(sys.argv[1].encode(), ("10.1.1.2", 6030))
    time.sleep(0.02)' "$1" "$2"
}

# one more "warm" datagram; has A put a packet inside UDP since TX0?
csum_warm() {
	csum_send warm 1
	(($(mpip_stat "$A" tx_encap) > $1))
}

# the receiver at B:6030 ended (it got "end")
csum_ended() {
	csum_send end 1
	[[ -s $T/csum.out ]]
}

# corrupt_at_b on|off: every datagram to port 19792 with something behind
# its UDP header (a packet inside: a control datagram has UDP length 8)
# that reaches B gets the UDP checksum 0x0001, before mpip's input hook
# sees it (nftables in prerouting at priority -450; raw payload, so
# nothing fixes the checksum up; the debug kernel has no tc pedit)
corrupt_at_b() {
	if [[ $1 == off ]]; then
		in_ns "$B" nft delete table ip csum
		return
	fi
	in_ns "$B" nft -f - <<'NFT'
table ip csum {
	chain pre {
		type filter hook prerouting priority -450; policy accept;
		udp dport 19792 udp length > 8 @th,48,16 set 0x0001 counter
	}
}
NFT
}

# tx_csum_at_a on|off: checksum offload on A's ends of both links.  Off,
# A's stack fills in the outer checksums it leaves to the device, and B
# receives them as from a wire, unchecked; on (the default), a veth hands
# them over still to be filled in, which B's stack trusts as any local
# packet's.
tx_csum_at_a() {
	local dev
	for dev in eth1 eth2; do
		in_ns "$A" ethtool -K "$dev" tx "$1"
	done
}

# A datagram inside UDP whose outer checksum does not hold is dropped and
# counted (rx_encap_bad): that checksum alone covers the outer header and
# the shim.  A flow A:7030 -> B:6030 whose datagrams go inside UDP; then
# 50 whose outer checksums are corrupted on their way into B: at most 2
# of them arrive (one whose checksum was 0x0001 anyway passes: 1 in
# 65536); after, the flow goes on.  A's checksums are filled in before
# they leave it, as they would be on a wire (tx_csum_at_a).
t_bad_outer_csum() {
	local tx0 bad0 counts
	rm -f "$T/csum.out"
	in_ns "$B" /usr/bin/python3 -c '
import collections, os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.2", 6030))
s.settimeout(120)
n = collections.Counter()
while not n["end"]:
    n[s.recv(100).decode()] += 1
open(sys.argv[1] + ".tmp", "w").write("%d %d %d\n" % (n["warm"], n["bad"], n["end"]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])' \
		"$T/csum.out" &
	# (a subtest is a subshell of its own: this runs when it ends)
	# shellcheck disable=SC2064
	trap "kill $! 2>/dev/null || true
		ip netns exec '$B' nft delete table ip csum 2>/dev/null || true
		ip netns exec '$A' ethtool -K eth1 tx on || true
		ip netns exec '$A' ethtool -K eth2 tx on || true" EXIT
	tx_csum_at_a off
	tx0=$(mpip_stat "$A" tx_encap)
	wait_for 30 csum_warm "$tx0" || fail "the flow's datagrams did not go inside UDP"
	bad0=$(mpip_stat "$B" rx_encap_bad)
	corrupt_at_b on
	csum_send bad 50
	in_ns "$B" nft list table ip csum | grep -o 'counter packets [0-9]*' || true
	corrupt_at_b off
	wait_for 30 csum_ended || fail "the flow carried nothing after the corruption ended"
	read -r -a counts <"$T/csum.out"
	bad0=$(($(mpip_stat "$B" rx_encap_bad) - bad0))
	echo "B received ${counts[0]} warm-up datagrams, ${counts[1]} of 50 with a bad outer checksum, ${counts[2]} after; rx_encap_bad +$bad0"
	((counts[1] <= 2)) || fail "${counts[1]} of 50 datagrams with a bad outer UDP checksum delivered"
	((bad0 >= 48)) || fail "rx_encap_bad grew by $bad0, not by the 48 or more dropped"
}

# nat_mode auto and a flush: the paths found again go as they are
t_auto() {
	local ns t0
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set nat_mode auto
		mpipctl_in "$ns" flush
	done
	mpip_twolink_warm_up
	t0=$(mpip_stat "$A" tx_encap)
	tcp_send_file "$A" "$B" 10.1.1.2 5002 "$T/file" "$T/g.auto"
	sha256_equal "$T/file" "$T/g.auto" || fail "auto: TCP data differs"
	mpip_paths "$A" | jq -e 'all(.[]; .encap == "none")' >/dev/null || fail "a path is still inside UDP"
	(($(mpip_stat "$A" tx_encap) == t0)) || fail "packets went inside UDP with nat_mode auto and no NAT"
}

# A's eth2 alone set to udp (mpipctl link set dev eth2 nat udp): after a
# flush, A's path from eth2 goes inside UDP and the one from eth1 does
# not; the link table says so; data intact.  Back to default after.
t_link_nat() {
	local ns t0
	mpipctl_in "$A" link set dev eth2 nat udp
	mpipctl_in "$A" -j show links | jq -e 'any(.[]; .dev == "eth2" and .nat == "udp") and
		any(.[]; .dev == "eth1" and .nat == "default")' >/dev/null ||
		fail "show links: $(mpipctl_in "$A" -j show links)"
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" flush
	done
	mpip_twolink_warm_up
	t0=$(mpip_stat "$A" tx_encap)
	tcp_send_file "$A" "$B" 10.1.1.2 5003 "$T/file" "$T/g.link"
	sha256_equal "$T/file" "$T/g.link" || fail "link nat: TCP data differs"
	mpip_paths "$A" | jq -c '[.[] | select(.state == "up") | {dev, encap}]'
	mpip_paths "$A" | jq -e '[.[] | select(.state == "up")] | length == 2 and
		all(.[]; (.dev == "eth2") == (.encap == "udp"))' >/dev/null ||
		fail "not just eth2's path inside UDP"
	(($(mpip_stat "$A" tx_encap) > t0)) || fail "nothing went inside UDP on eth2"
}

# syn_mss PORT TAG: SYN_MSS = the MSS option of A's SYN to B:PORT, for a
# file sent on that connection (intact)
syn_mss() {
	local mss
	capture_start "$A" eth1 "syn.$2" "tcp dst port $1 and tcp[tcpflags] & tcp-syn != 0"
	tcp_send_file "$A" "$B" 10.1.1.2 "$1" "$T/small" "$T/s.$2"
	capture_stop "syn.$2"
	sha256_equal "$T/small" "$T/s.$2" || fail "$2: TCP data differs"
	mss=$(tcpdump -nn -v -r "$T/syn.$2.pcap" 2>/dev/null | grep -o 'mss [0-9]*' | head -n 1)
	[[ -n $mss ]] || fail "$2: no SYN with an MSS option captured"
	SYN_MSS=${mss#mss }
}

# With nat_mode none at both ends, A's SYN leaves room (12 bytes, the UDP
# header and shim) for a path inside UDP only when a link is set to udp:
# the namespace's mode alone decided that once, and full-size segments on
# such a link's paths went out as fragments.  Back to the defaults after.
t_link_nat_mode_none() {
	local ns plain link SYN_MSS
	trap 'mpipctl_in "$A" set nat_mode auto || true
		mpipctl_in "$B" set nat_mode auto || true
		mpipctl_in "$A" link set dev eth2 nat default || true' EXIT
	for ns in "$A" "$B"; do
		mpipctl_in "$ns" set nat_mode none
	done
	mpipctl_in "$A" link set dev eth2 nat default
	syn_mss 5004 plain
	plain=$SYN_MSS
	mpipctl_in "$A" link set dev eth2 nat udp
	syn_mss 5005 link
	link=$SYN_MSS
	echo "A's SYN MSS with nat_mode none: $plain; with eth2 set to udp: $link"
	((plain - link == 12)) ||
		fail "eth2 set to udp lowered the MSS by $((plain - link)), not by the 12 bytes of UDP header and shim"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 10
ktap_run nat_mode_udp_warm_up t_setup
ktap_run paths_inside_udp t_paths_encap
ktap_run tcp_udp_intact_both_links_gso t_gso
ktap_run tcp_udp_intact_both_links_nogso t_nogso
ktap_run gro_merged_datagrams_split t_gro_merged
ktap_run bad_outer_checksum_dropped t_bad_outer_csum
ktap_run nat_mode_auto_no_encap_without_nat t_auto
ktap_run link_nat_udp_one_link_inside_udp t_link_nat
ktap_run link_nat_udp_leaves_mss_room_under_nat_mode_none t_link_nat_mode_none
ktap_run dmesg_clean t_dmesg
ktap_finish
