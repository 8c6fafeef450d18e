#!/usr/bin/env bash
# test_firewall.sh - mpip under a stateful firewall and NAT.  mpip restores
# the original addresses in PRE_ROUTING before conntrack and rewrites them
# in POST_ROUTING after NAT, so conntrack and nftables only ever see a
# flow's original 5-tuple, whichever path its packets take.
#
# B's input chain drops everything but lo, established/related and the
# listening ports; A has counting chains only (and conntrack) plus a DNAT
# rule in output.  TCP both ways, UDP to B and TCP to a DNATed address
# arrive intact over both links; the conntrack tables of both hosts hold
# each flow with its original addresses, in its original direction, and
# never with a 10.1.2.x address; no nftables chain sees a flow's packet
# with a path address; no reply of B's outgoing connection falls through
# to the drop policy; datagrams to a port B's firewall does not open are
# not delivered; the answers to B's outgoing UDP flow that sends only GSO
# packets, which mpip splits, are established at B.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink fw
MIN_PCT=20

# the flows' well-known ports (server side) and the UDP senders' ports
FLOW_PORTS="4999, 5000, 5001, 5003, 5005, 5999, 6000, 6001, 6999, 7000, 7001, 7005"

# path_rules COUNTER: rules counting TCP/UDP packets of the test flows that
# carry a link 2 address (which mpip must hide from netfilter)
path_rules() {
	local c=$1 dir port
	for dir in saddr daddr; do
		for port in sport dport; do
			echo "ip $dir 10.1.2.0/24 meta l4proto { tcp, udp } th $port { $FLOW_PORTS } counter name \"$c\""
		done
	done
}

rules_b() {
	cat <<EOF
table ip mpipfw {
	counter pre_path { }
	counter in_path { }
	counter out_path { }
	counter invalid { }
	counter reply_dropped { }
	counter dropped { }
	chain pre {
		type filter hook prerouting priority mangle; policy accept;
		$(path_rules pre_path)
	}
	chain input {
		type filter hook input priority filter; policy drop;
		$(path_rules in_path)
		iif "lo" accept
		ct state established,related accept
		ct state invalid counter name "invalid"
		tcp dport { 4999, 5000, 5003 } accept
		udp dport { 5999, 6000 } accept
		tcp sport 5001 counter name "reply_dropped"
		counter name "dropped"
	}
	chain output {
		type filter hook output priority filter; policy accept;
		$(path_rules out_path)
	}
}
EOF
}

rules_a() {
	cat <<EOF
table ip mpipfw {
	counter pre_path { }
	counter in_path { }
	counter out_path { }
	counter post_path { }
	chain pre {
		type filter hook prerouting priority mangle; policy accept;
		$(path_rules pre_path)
	}
	chain input {
		type filter hook input priority filter; policy accept;
		$(path_rules in_path)
		ct state established,related accept
	}
	chain output {
		type filter hook output priority filter; policy accept;
		$(path_rules out_path)
	}
	chain post {
		type filter hook postrouting priority filter; policy accept;
		$(path_rules post_path)
	}
}
table ip mpipnat {
	chain output {
		type nat hook output priority -100; policy accept;
		ip daddr 10.9.9.9 tcp dport 5003 dnat to 10.1.1.2
	}
}
EOF
}

t_setup() {
	modprobe nf_conntrack
	rules_a >"$T/a.nft"
	rules_b >"$T/b.nft"
	in_ns "$A" nft -f "$T/a.nft" || fail "cannot load A's ruleset"
	in_ns "$B" nft -f "$T/b.nft" || fail "cannot load B's ruleset"
	in_ns "$B" test -r /proc/net/nf_conntrack || fail "no /proc/net/nf_conntrack"
	ip -n "$A" route add 10.9.9.9/32 dev eth1
	random_file "$T/file" 4
	head -c 100000 /dev/urandom >"$T/small"
	# warm-up through the firewall
	tcp_send_file "$A" "$B" 10.1.1.2 4999 "$T/small" "$T/small.out"
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1
}

# ct_flow NS PROTO PORT SRC DST: NS's conntrack table holds the flow to
# PORT with SRC -> DST:PORT as its original direction, and no entry of a
# flow with PORT on either side names a link 2 address
ct_flow() {
	local ns=$1 proto=$2 port=$3 src=$4 dst=$5 lines orig
	lines=$(in_ns "$ns" cat /proc/net/nf_conntrack |
		grep -E "^ipv4 +2 +$proto .*(sport|dport)=$port( |$)" || true)
	printf '%s conntrack: %s\n' "$ns" "$lines"
	[[ -n $lines ]] || fail "$ns: no conntrack entry for $proto port $port"
	grep -q '10\.1\.2\.' <<<"$lines" &&
		fail "$ns: conntrack saw $proto port $port with a link 2 address"
	# the original direction is the first tuple of an entry
	orig=$(sed -E 's/^[^=]*(src=[0-9.]+ dst=[0-9.]+ sport=[0-9]+ dport=[0-9]+).*/\1/' <<<"$lines")
	grep -qE "^src=$src dst=$dst sport=[0-9]+ dport=$port\$" <<<"$orig" ||
		fail "$ns: no entry with original direction $src -> $dst:$port"
	return 0
}

# spread_failed: fail the subtest if mpip_spread found a link unused (its
# verdict is given last, after the checks of the firewall itself)
spread_failed() {
	fail "an interface carried less than $MIN_PCT% of the bytes"
}

t_tcp_a_to_b() {
	local ok=1
	mpip_spread "$A" "$B" "$MIN_PCT" tcp_send_file "$A" "$B" 10.1.1.2 5000 "$T/file" "$T/o1" || ok=0
	sha256_equal "$T/file" "$T/o1" || fail "received file differs"
	ct_flow "$A" tcp 5000 10.1.1.1 10.1.1.2
	ct_flow "$B" tcp 5000 10.1.1.1 10.1.1.2
	((ok)) || spread_failed
}

# B's outgoing connection: A's replies must be "established" at B's input
t_tcp_b_to_a() {
	local ok=1
	mpip_spread "$B" "$A" "$MIN_PCT" tcp_send_file "$B" "$A" 10.1.1.1 5001 "$T/file" "$T/o2" || ok=0
	sha256_equal "$T/file" "$T/o2" || fail "received file differs"
	ct_flow "$A" tcp 5001 10.1.1.2 10.1.1.1
	ct_flow "$B" tcp 5001 10.1.1.2 10.1.1.1
	((ok)) || spread_failed
}

t_udp_a_to_b() {
	local ok=1
	mpip_spread "$A" "$B" "$MIN_PCT" udp_exchange "$A" "$B" 10.1.1.2 6000 1000 7000 || ok=0
	ct_flow "$A" udp 6000 10.1.1.1 10.1.1.2
	ct_flow "$B" udp 6000 10.1.1.1 10.1.1.2
	((ok)) || spread_failed
}

# A connects to 10.9.9.9, DNATed in A's output to B: mpip works on the
# translated flow, conntrack on A keeps the translation
t_tcp_dnat() {
	local ok=1
	mpip_spread "$A" "$B" "$MIN_PCT" tcp_send_file "$A" "$B" 10.9.9.9 5003 "$T/file" "$T/o3" || ok=0
	sha256_equal "$T/file" "$T/o3" || fail "received file differs"
	ct_flow "$A" tcp 5003 10.1.1.1 10.9.9.9
	ct_flow "$B" tcp 5003 10.1.1.1 10.1.1.2
	in_ns "$A" cat /proc/net/nf_conntrack | grep -E 'dport=5003 ' |
		grep -q 'src=10.1.1.2 dst=10.1.1.1 sport=5003' ||
		fail "A: the DNAT entry's reply direction is not 10.1.1.2:5003 -> 10.1.1.1"
	((ok)) || spread_failed
}

# udp_gso_out COUNT: B sends COUNT datagrams of 1200 bytes from
# 10.1.1.2:7005 to A's 10.1.1.1:5005 with UDP_SEGMENT 400 (each a GSO
# packet of three), 50 ms apart; prints how many answers came back
udp_gso_out() {
	in_ns "$B" /usr/bin/python3 - "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.2", 7005))
s.setsockopt(socket.SOL_UDP, 103, 400)  # UDP_SEGMENT
for _ in range(int(sys.argv[1])):
    s.sendto(b"g" * 1200, ("10.1.1.1", 5005))
    time.sleep(0.05)
s.settimeout(3)
n = 0
try:
    while True:
        s.recv(2048)
        n += 1
except socket.timeout:
    pass
print(n)
PY
}

# B's outgoing UDP flow whose every packet is a GSO packet, to a port of
# A that B knows runs MPIP: mpip splits each, and a segment must confirm
# B's conntrack entry, so that A's answers are "established" at B's
# input.  (Review 57, F5: before, the segments went straight to the
# device, past conntrack's confirmation: the entry never held, and B's
# firewall dropped every answer.)
t_udp_gso_out_replies() {
	local epid n d0
	# (ip netns exec, not in_ns: $! must be the answerer itself)
	ip netns exec "$A" /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.1", 5005))
s.settimeout(60)
while True:
    data, src = s.recvfrom(2048)
    s.sendto(b"ok", src)' >/dev/null 2>&1 &
	epid=$!
	# shellcheck disable=SC2064 # the PID, now
	trap "kill $epid 2>/dev/null || true" EXIT
	# a first flow to A:5005, not GSO, makes it known to run MPIP
	in_ns "$B" python3 "$REPO/tests/selftests/udpcheck.py" send 10.1.1.1 5005 20 \
		--sport 7004 --gap-us 20000
	wait_for 20 mpip_avail_is "$B" 10.1.1.1 5005 yes ||
		fail "B did not find A:5005 running MPIP"
	d0=$(mpip_stat "$B" tx_gso_split)
	n=$(udp_gso_out 20)
	echo "B got $n of 60 answers; tx_gso_split +$(($(mpip_stat "$B" tx_gso_split) - d0))"
	in_ns "$B" cat /proc/net/nf_conntrack | grep -E 'sport=7005 ' | sed 's/^/B conntrack: /' || true
	(($(mpip_stat "$B" tx_gso_split) > d0)) || fail "B split no GSO packet of the flow"
	((n >= 30)) || fail "B's firewall dropped the answers to its GSO flow"
	ct_flow "$B" udp 5005 10.1.1.2 10.1.1.1
}

# A sends to B's port 6002, which a socket listens on but B's firewall does
# not open: nothing may arrive (mpip's own answers must not make the flow
# look established to B's conntrack)
t_udp_closed_port() {
	local ready=$T/closed.ready res=$T/closed.res rpid
	ip netns exec "$B" python3 "$REPO/tests/selftests/udpcheck.py" recv 6002 20 \
		--timeout 15 --linger 0 --ready "$ready" </dev/null >"$res" 2>&1 &
	rpid=$!
	if ! wait_for 60 test -e "$ready"; then
		_bg_stop "$rpid" "$res"
		fail "UDP receiver on B:6002 not ready"
	fi
	in_ns "$A" python3 "$REPO/tests/selftests/udpcheck.py" send 10.1.1.2 6002 20 \
		--sport 7002 --gap-us 20000
	wait "$rpid" || true
	echo "B:6002, closed by the firewall: $(cat "$res")"
	in_ns "$B" cat /proc/net/nf_conntrack | grep -E 'port=6002 ' | sed 's/^/B conntrack: /' || true
	jq -e '.received == 0' "$res" >/dev/null ||
		fail "B's firewall let datagrams to a closed port through"
}

# counters NS: NS's named counters in table mpipfw as {name: packets}
counters() {
	in_ns "$1" nft -j list counters table ip mpipfw |
		jq -ec '[.nftables[] | .counter? // empty | {(.name): .packets}] | add'
}

t_counters() {
	local ca cb
	ca=$(counters "$A") || fail "A: cannot read the counters"
	cb=$(counters "$B") || fail "B: cannot read the counters"
	echo "A: $ca"
	echo "B: $cb"
	jq -e '.pre_path == 0 and .in_path == 0 and .out_path == 0 and .post_path == 0' \
		<<<"$ca" >/dev/null || fail "a chain of A saw a flow's packet with a link 2 address"
	jq -e '.pre_path == 0 and .in_path == 0 and .out_path == 0' \
		<<<"$cb" >/dev/null || fail "a chain of B saw a flow's packet with a link 2 address"
	jq -e '.reply_dropped == 0' <<<"$cb" >/dev/null ||
		fail "B's input dropped replies of its outgoing connection"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 9
ktap_run firewall_and_warm_up t_setup
ktap_run tcp_4M_a_to_b_through_firewall t_tcp_a_to_b
ktap_run tcp_4M_b_to_a_replies_established t_tcp_b_to_a
ktap_run udp_1000_a_to_b_through_firewall t_udp_a_to_b
ktap_run tcp_4M_a_to_b_through_dnat t_tcp_dnat
ktap_run udp_gso_out_answers_established t_udp_gso_out_replies
ktap_run udp_to_closed_port_dropped t_udp_closed_port
ktap_run nft_sees_original_addresses_only t_counters
ktap_run dmesg_clean t_dmesg
ktap_finish
