#!/usr/bin/env bash
# test_spoof.sh - a stranger who knows the token a peer writes into its
# CMs, a session's ID and its ports (review C1, C3) cannot use them.  Two
# MPIP hosts on two links; a third host X (namespace ${P}r, mpip off)
# hangs off B on its own link, 10.1.9.9, and is none of A's addresses.
# The test hands X the token as B knows it (an attacker on one of the
# paths would see it); X cannot know the keys, so its MACs are random.
# With a UDP session from A (10.1.1.1:7100) to B (10.1.1.2:6100) running,
# X sends B:
# - data CMs naming the session and its ports, from its own address:
#   before wire format v2, B restored them to 10.1.1.1 and delivered them
#   as if from A; now they are dropped (rx_auth_fail) and the application
#   sees none;
# - CMs with F_ORIG claiming the session's ID for another flow: before,
#   B unlinked A's session; now it stays, and A's datagrams still arrive;
# - IP_CHANGE with its own address as A's list, and delay reports: before,
#   B made a path to X's address and sent A's traffic there; now B has no
#   path to it and its paths to A stay as they were.
# - copies of A's control messages (heartbeats, probes, address lists)
#   taken off link 1 and sent again, A's addresses and all: counted as
#   replays (rx_replay) and dropped; B's paths do not change;
# - 20,000 queries, each with a key of its own, from random ports: B's
#   tables stay within their limits, B answers at most 200 per second
#   (ctrl_limited counts the rest: fewer packets out than in), the nodes
#   they made expire after 10 s, and A's session goes on working.
# And session IDs are drawn at random, not counted up from 1.
# TIMEOUT: 600
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

/usr/bin/python3 -c 'import scapy' 2>/dev/null || ktap_skip_all "missing python3-scapy"
mpip_setup_twolink sp
X=${P}r
NFORGED=50

# receiver NS ADDR PORT OUT: log every datagram to ADDR:PORT in NS as
# "SRC PAYLOAD" lines into OUT, in the background
receiver() {
	in_ns "$1" /usr/bin/python3 -u - "$2" "$3" >"$4" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
while True:
    data, src = s.recvfrom(65535)
    print(src[0], src[1], data.decode(errors="replace"), flush=True)
PY
	echo $! >"$T/receiver.pid"
	cleanup_push kill "$!"
	wait_for 20 grep -q '^ready' "$4" || fail "receiver did not start"
}

# send_good N: N datagrams "GOOD i" from A's 10.1.1.1:7100 to B's 6100
send_good() {
	in_ns "$A" /usr/bin/python3 - "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.1.1", 7100))
for i in range(int(sys.argv[1])):
    s.sendto(b"GOOD %d" % i, ("10.1.1.2", 6100))
    time.sleep(0.02)
PY
}

# count WORD: datagrams received with WORD in them
count() { grep -c "$1" "$T/rx" || true; }

# b_session: B's session of the flow (JSON), or fail
b_session() {
	mpip_session_json "$B" udp 6100 7100
}

t_setup() {
	mpip_twolink_warm_up
	ip netns add "$X"
	ip link add eth9 netns "$B" type veth peer name eth0 netns "$X"
	ip -n "$B" addr add 10.1.9.2/24 dev eth9
	ip -n "$X" addr add 10.1.9.9/24 dev eth0
	ip -n "$B" link set eth9 up
	ip -n "$X" link set eth0 up
	ip -n "$X" link set lo up
	ip -n "$X" route add default via 10.1.9.2
	ip netns exec "$B" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.eth9.rp_filter=0
	mpipctl_in "$X" disable
	wait_for 20 in_ns "$X" ping -q -n -c 1 -W 1 10.1.1.2 >/dev/null ||
		fail "X cannot reach B"
	receiver "$B" 0.0.0.0 6100 "$T/rx"
	send_good 20
	wait_for 10 test "$(count GOOD)" -ge 20 || fail "B got $(count GOOD) of 20 datagrams from A"
	wait_for 10 b_session >/dev/null || fail "B has no session for A's flow"
	b_session
}

# forge FLAGS SPORT N [ADDRS]: X sends N datagrams "EVIL" to
# 10.1.1.2:6100 from its own address and port SPORT with a v2 CM for B's
# node of A (its token), the session's ID, path 1, flags FLAGS, the
# address list ADDRS (comma-separated) and a delay report for path 1;
# counters and MACs at random
forge() {
	local tok sid
	tok=$(mpip_peer_node "$B" "$A") || fail "B has no node for A"
	sid=$(b_session | jq -r '.id')
	echo "forging token $tok session $sid flags $1 addrs '${4:-}' from 10.1.9.9:$2"
	in_ns "$X" /usr/bin/python3 - "$REPO/tests/scapy" "$tok" "$sid" "$1" "$2" "$3" "${4:-}" <<'PY'
import os, struct, sys, time
sys.path.insert(0, sys.argv[1])
import mpip_cm
from scapy.all import IP, UDP, Raw, send, conf
conf.verb = 0
tok, sid, flags, sport, n = (int(sys.argv[2], 0), int(sys.argv[3]),
                             int(sys.argv[4], 0), int(sys.argv[5]),
                             int(sys.argv[6]))
addrs = [a for a in sys.argv[7].split(",") if a]
for i in range(n):
    t = mpip_cm.write_v2(os.urandom(12), token=tok, session_id=sid,
                         path_id=1, fb_path_id=1, path_delay_us=100,
                         flags=flags, addrs=addrs)
    pkt = IP(src="10.1.9.9", dst="10.1.1.2") / UDP(sport=sport, dport=6100) / Raw(b"EVIL %d" % i)
    send(mpip_cm.add(pkt, t))
    time.sleep(0.01)
PY
}

t_inject() {
	local fail0 rx0 srx0 srx
	fail0=$(mpip_stat "$B" rx_auth_fail)
	rx0=$(rx_packets "$B" eth9)
	srx0=$(b_session | jq .rx_pkts)
	forge 0 7100 "$NFORGED"
	sleep 1
	srx=$(b_session | jq .rx_pkts)
	echo "B: eth9 rx $rx0 -> $(rx_packets "$B" eth9), rx_auth_fail $fail0 -> $(mpip_stat "$B" rx_auth_fail), session rx_pkts $srx0 -> $srx"
	grep EVIL "$T/rx" | head -n 3 || true
	(($(rx_packets "$B" eth9) - rx0 >= NFORGED)) || fail "the forged datagrams did not reach B"
	(($(count EVIL) == 0)) || fail "B's application got $(count EVIL) forged datagrams"
	(($(mpip_stat "$B" rx_auth_fail) - fail0 >= NFORGED)) || fail "rx_auth_fail did not count them"
	((srx == srx0)) || fail "the forged datagrams counted as the session's"
}

t_unlink() {
	local before after good0
	before=$(b_session)
	forge 0x40 40000 20
	sleep 1
	after=$(b_session) || fail "B lost A's session"
	echo "before: $before"
	echo "after:  $after"
	[[ $(jq -r .id <<<"$before") == "$(jq -r .id <<<"$after")" ]] ||
		fail "the session changed its ID"
	! mpip_session_json "$B" udp 6100 40000 >/dev/null 2>&1 ||
		fail "B made a session of X's flow"
	good0=$(count GOOD)
	send_good 20
	wait_for 10 test "$(count GOOD)" -ge $((good0 + 20)) ||
		fail "A's datagrams after the attack: $(($(count GOOD) - good0)) of 20"
}

# X claims that A's addresses are now its own, 10.1.9.9 (IP_CHANGE, on
# CTRL packets and on data), with delay reports: B keeps A's list and
# paths, makes none to 10.1.9.9, and A's datagrams still arrive
t_addr_list() {
	local fail0 before after good0
	before=$(mpip_paths "$B" | jq -c '[.[] | [.saddr, .daddr]] | sort')
	fail0=$(mpip_stat "$B" rx_auth_fail)
	forge 0x0c 7100 20 10.1.9.9
	forge 0x08 7100 20 10.1.9.9,10.1.1.1
	sleep 1
	after=$(mpip_paths "$B" | jq -c '[.[] | [.saddr, .daddr]] | sort')
	echo "paths before: $before"
	echo "paths after:  $after"
	mpipctl_in "$B" -j show nodes | jq -c '.[]'
	(($(mpip_stat "$B" rx_auth_fail) - fail0 >= 40)) || fail "rx_auth_fail did not count them"
	! mpip_paths "$B" | jq -e '[.[] | select(.daddr == "10.1.9.9")] | length > 0' >/dev/null ||
		fail "B made a path to X's address"
	! mpipctl_in "$B" -j show nodes | jq -e '[.[] | select(.addrs | index("10.1.9.9"))] | length > 0' >/dev/null ||
		fail "B took X's address into a node's list"
	[[ $before == "$after" ]] || fail "B's paths changed"
	good0=$(count GOOD)
	send_good 20
	wait_for 10 test "$(count GOOD)" -ge $((good0 + 20)) ||
		fail "A's datagrams after the attack: $(($(count GOOD) - good0)) of 20"
}

# An observer of link 1 sends B copies of A's control messages from X,
# unchanged (A's source address): each is a replay
t_replay() {
	local rep0 before after n
	command -v tcpdump >/dev/null || ktap_skip "missing tcpdump"
	capture_start "$B" eth1 ctl 'udp and src host 10.1.1.1 and dst port 19792'
	send_good 40
	sleep 2
	n=$(capture_count ctl)
	echo "captured $n control packets of A on link 1"
	((n >= 3)) || fail "too few control packets to replay"
	before=$(mpip_paths "$B" | jq -c '[.[] | [.saddr, .daddr]] | sort')
	rep0=$(mpip_stat "$B" rx_replay)
	in_ns "$X" /usr/bin/python3 - "$T/ctl.pcap" <<'PY'
import sys
from scapy.all import IP, rdpcap, send, conf
conf.verb = 0
pkts = [p[IP] for p in rdpcap(sys.argv[1]) if IP in p]
for _ in range(3):
    for p in pkts:
        send(p)
print("replayed", 3 * len(pkts))
PY
	sleep 1
	after=$(mpip_paths "$B" | jq -c '[.[] | [.saddr, .daddr]] | sort')
	echo "rx_replay $rep0 -> $(mpip_stat "$B" rx_replay)"
	(($(mpip_stat "$B" rx_replay) - rep0 >= 3 * n)) || fail "rx_replay did not count every copy"
	[[ $before == "$after" ]] || fail "B's paths changed"
}

# nodes_count NS / avail_count NS: entries in the tables (mpipctl status)
nodes_count() { mpipctl_in "$1" -j status | jq -er '.nodes'; }
avail_count() { mpipctl_in "$1" -j status | jq -er '.avail'; }

# X floods B with 20,000 first queries, each with its own key, from
# random ports; A's session is used before and after
t_query_flood() {
	local conf0 lim0 q0 t0 t1 sent conf lim nodes avail good0 secs rx0 rx
	conf0=$(mpip_stat "$B" tx_confirm)
	rx0=$(rx_packets "$B" eth9)
	lim0=$(mpip_stat "$B" ctrl_limited)
	q0=$(mpip_stat "$B" rx_query)
	t0=$(date +%s)
	sent=$(in_ns "$X" /usr/bin/python3 - "$REPO/tests/scapy" 20000 <<'PY'
import os, random, socket, struct, sys
sys.path.insert(0, sys.argv[1])
import mpip_cm
n = int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
src, dst = socket.inet_aton("10.1.9.9"), socket.inet_aton("10.1.1.2")
sent = 0
for i in range(n):
    key = random.getrandbits(64) | 1
    t = mpip_cm.write_v2(struct.pack("!IQ", 1, 0), flags=0x01,
                         ext=struct.pack("!QI", key, 0))
    payload = b"flood"
    udp = struct.pack("!HHHH", random.randint(1024, 65535), 6100,
                      8 + len(payload), 0) + payload
    tot = 20 + len(udp) + len(t)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, tot, i & 0xffff, 0, 64, 17,
                     0, src, dst)
    try:
        s.sendto(ip + udp + t, ("10.1.1.2", 0))
        sent += 1
    except OSError:
        pass
print(sent)
PY
)
	t1=$(date +%s)
	secs=$((t1 - t0 + 1))
	nodes=$(nodes_count "$B")
	avail=$(avail_count "$B")
	rx=$(($(rx_packets "$B" eth9) - rx0))
	conf=$(($(mpip_stat "$B" tx_confirm) - conf0))
	lim=$(($(mpip_stat "$B" ctrl_limited) - lim0))
	echo "sent $sent queries in ${secs} s; B: eth9 rx $rx, rx_query +$(($(mpip_stat "$B" rx_query) - q0)), tx_confirm +$conf, ctrl_limited +$lim, nodes $nodes, avail $avail"
	((sent >= 19000)) || fail "X sent only $sent queries"
	((nodes <= 4096 && avail <= 16384)) || fail "tables beyond their limits"
	((conf <= 200 * (secs + 1))) || fail "$conf confirmations in $secs s: more than 200 per second"
	((conf < rx)) || fail "B answered as many packets as it got"
	good0=$(count GOOD)
	send_good 20
	wait_for 10 test "$(count GOOD)" -ge $((good0 + 20)) ||
		fail "A's datagrams during the flood's aftermath: $(($(count GOOD) - good0)) of 20"
	b_session >/dev/null || fail "B lost A's session"
	# the stranger's nodes never authenticated: gone 10 s after the last
	# one came (GC runs every second); A's node stays
	local i
	for i in $(seq 12); do
		nodes=$(nodes_count "$B")
		echo "$((i * 5 - 5)) s later: nodes $nodes, avail $(avail_count "$B"), rx_query +$(($(mpip_stat "$B" rx_query) - q0))"
		((nodes <= 2)) && break
		sleep 5
	done
	((nodes <= 2)) || fail "B still holds $nodes nodes"
	mpip_peer_node "$B" "$A" >/dev/null || fail "B lost its node for A"
}

# A opens 16 UDP flows to B: their session IDs are not a sequence
t_random_ids() {
	local ids
	in_ns "$A" /usr/bin/python3 - <<'PY'
import socket
for port in range(7200, 7216):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.1.1.1", port))
    s.sendto(b"hi", ("10.1.1.2", 6100))
    s.close()
PY
	ids=$(mpip_sessions "$A" | jq -c '[.[] | select(.proto == "udp" and .lport >= 7200 and .lport < 7216) | .id] | sort')
	echo "session IDs: $ids"
	jq -e 'length == 16' <<<"$ids" >/dev/null || fail "A does not hold 16 sessions"
	jq -e '[range(1; length) as $i | .[$i] - .[$i - 1]] | unique | length > 1' \
		<<<"$ids" >/dev/null || fail "session IDs in steps of one size: sequential"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 8
	ktap_run setup_session_and_stranger t_setup
	ktap_run stranger_cannot_inject_into_session t_inject
	ktap_run stranger_cannot_unlink_session t_unlink
	ktap_run stranger_cannot_change_address_list t_addr_list
	ktap_run replayed_control_messages_dropped t_replay
	ktap_run query_flood_bounded t_query_flood
	ktap_run session_ids_random t_random_ids
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
