#!/usr/bin/env bash
# test_reorder.sh - the fast path and the TCP reorder buffer between two
# MPIP hosts on two veth links, link 1 with 10 ms and link 2 with 2 ms of
# extra delay each way, so that segments of one connection overtake each
# other.  Every transfer is an 8 MiB file that must arrive byte-identical;
# each subtest then checks the counters of the mechanism it exercises:
# GSO packets kept whole over a direct veth (and split with tx_gso 0),
# segments held and released in order, a session's first flight kept to
# its own path until acknowledged, held segments seen once by tc ingress
# and packet sockets (not again when released), held and released behind
# an NFQUEUE whose verdicts run mpip's hook in process context, nothing
# held with reorder 0, gaps
# released as lost when link 2 loses packets and link 1 has delivered
# what was sent after them, or carries next to nothing (a backup link),
# segments sent again counted (tx_resend) as no more than TCP sent again,
# gaps given up when link 1 goes silent, released by timeout at
# reorder_max_hold_ms, overflow with a 2-segment buffer, and GSO packets
# split, not kept, towards a peer whose veth end is a bridge port.
# TIMEOUT: 420
# (about 65 s alone in one guest: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ro
SIZE_MIB=8
PORT=5100

t_setup() {
	random_file "$T/file" "$SIZE_MIB"
	"$TOPO" netem "$A" eth1 40mbit,10ms,-
	"$TOPO" netem "$B" eth1 40mbit,10ms,-
	"$TOPO" netem "$A" eth2 20mbit,2ms,-
	"$TOPO" netem "$B" eth2 20mbit,2ms,-
	mpip_twolink_warm_up
}

# counters NS NAME...: "NAME=VALUE ..." for the counters named (one call)
counters() {
	local ns=$1
	shift
	mpipctl_in "$ns" -j stats | jq -r --args \
		'. as $s | [$ARGS.positional[] | "\(.)=\($s[.] // "none")"] | join(" ")' "$@"
}

# send_file [ADDR [FILE]]: FILE (default: the test's file) A -> B (ADDR,
# default 10.1.1.2) on a fresh port, intact
send_file() {
	local out=$T/out.$PORT file=${2:-$T/file}
	tcp_send_file "$A" "$B" "${1:-10.1.1.2}" "$PORT" "$file" "$out"
	PORT=$((PORT + 1))
	sha256_equal "$file" "$out" || fail "received file differs"
	rm -f "$out"
}

# count BEFORE AFTER NAME: sets COUNT to how much counter NAME (from
# `counters` strings) grew.  Fails the subtest if NAME is not a number in
# both, so that `! grew` cannot pass because a counter is missing.
count() {
	local b a
	b=$(sed -n "s/.*\b$3=\([0-9][0-9]*\)\( .*\)\{0,1\}$/\1/p" <<<"$1")
	a=$(sed -n "s/.*\b$3=\([0-9][0-9]*\)\( .*\)\{0,1\}$/\1/p" <<<"$2")
	[[ -n $b && -n $a ]] || fail "counter $3 missing: before '$1', after '$2'"
	COUNT=$((a - b))
}

# grew BEFORE AFTER NAME: counter NAME grew (count)
grew() {
	count "$@"
	((COUNT > 0))
}

# transfer NS NAME...: send the file, print NS's counters NAME before and
# after; sets BEFORE and AFTER.  TO, FILE: as ADDR and FILE of send_file.
transfer() {
	local ns=$1
	shift
	BEFORE=$(counters "$ns" "$@")
	send_file "${TO:-}" "${FILE:-}"
	AFTER=$(counters "$ns" "$@")
	echo "$ns before: $BEFORE"
	echo "$ns after:  $AFTER"
}

t_gso_kept() {
	transfer "$A" tx_gso_kept tx_gso_split
	grew "$BEFORE" "$AFTER" tx_gso_kept || fail "A sent no GSO packet whole"
	mpip_stats_check "$B" '.rx_gso_kept > 0' || fail "B received none"
}

t_gso_split() {
	mpipctl_in "$A" set tx_gso 0
	transfer "$A" tx_gso_kept tx_gso_split
	mpipctl_in "$A" set tx_gso 1
	grew "$BEFORE" "$AFTER" tx_gso_split || fail "A split no GSO packet"
	! grew "$BEFORE" "$AFTER" tx_gso_kept || fail "A kept GSO packets with tx_gso 0"
}

# A TCP session's first data keeps to its own path (link 1, the slower
# one here) until the peer has acknowledged the first segment sent with
# a CM.  B sends down a connection A opened: B's session comes from A's
# CMs, confirmed from its first segment (a session the peer has not
# confirmed keeps to its own path anyway), as with a download through a
# NAT.  No data segment of the connection leaves B on link 2 before A's
# ACK of the first one reaches B, and link 2 carries data after it.
# Spread over both, the first flight's segments on link 2 reached A's
# TCP before the first one, and A's buffer, which starts from the first
# segment it sees, took them for the start.  B splits its GSO packets
# (tx_gso 0), so that the first flight is ten segments a path each, not
# one GSO packet.  The hold cap, which also ends the wait, is raised
# for the subtest so that a slow guest cannot end it first.
t_first_flight() {
	local port=$PORT
	mpipctl_in "$B" set tx_gso 0
	mpipctl_in "$B" set reorder_max_hold_ms 5000
	capture_start "$B" eth1 ff1 "tcp port $port"
	capture_start "$B" eth2 ff2 "tcp port $port"
	tcp_fetch_file "$A" "$B" 10.1.1.2 "$port" "$T/file" "$T/out.$port"
	PORT=$((PORT + 1))
	capture_stop ff1
	capture_stop ff2
	mpipctl_in "$B" set reorder_max_hold_ms 100
	mpipctl_in "$B" set tx_gso 1
	sha256_equal "$T/file" "$T/out.$port" || fail "received file differs"
	rm -f "$T/out.$port"
	/usr/bin/python3 - "$T/ff1.pcap" "$T/ff2.pcap" "$port" <<'PY' ||
import re, subprocess, sys

port = sys.argv[3]
pat = re.compile(r'^(\d+\.\d+) IP (?:truncated-ip - \d+ bytes missing! )?'
                 r'\S+\.(\d+) > \S+\.(\d+): .*?'
                 r'(?:seq (\d+):(\d+), )?ack (\d+)')
data, acks = [], []
for link, f in (('eth1', sys.argv[1]), ('eth2', sys.argv[2])):
    out = subprocess.run(['tcpdump', '-nn', '-tt', '-S', '-r', f],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = pat.match(line)
        if not m:
            continue
        t, sport, dport = float(m[1]), m[2], m[3]
        if sport == port and m[4] and m[4] != m[5]:
            data.append((t, link, int(m[4]), int(m[5])))
        elif dport == port:
            acks.append((t, int(m[6])))
if not data:
    sys.exit('no data segment captured')
first = min(data)
end = first[3]
acked = [t for t, a in acks if (a - end) % 2**32 < 2**31]
if not acked:
    sys.exit('no ACK of the first data segment captured')
t_ack = min(acked)
early = [d for d in data if d[1] == 'eth2' and d[0] < t_ack]
late = [d for d in data if d[1] == 'eth2' and d[0] >= t_ack]
before = [d for d in data if d[0] < t_ack]
print('%d data segments before the first one was acknowledged (%.1f ms), '
      '%d of them on link 2; %d on link 2 after' %
      (len(before), (t_ack - first[0]) * 1000, len(early), len(late)))
if early or not late:
    sys.exit(1)
PY
		fail "the first flight did not keep to link 1, or link 2 carried no data after it"
}

t_reorder_in_order() {
	transfer "$B" reorder_held reorder_in_order
	grew "$BEFORE" "$AFTER" reorder_held || fail "B held no segment"
	grew "$BEFORE" "$AFTER" reorder_in_order ||
		fail "B released no held segment in order"
}

# tc_pkts NS DEV PREF: packets that matched DEV's ingress filter PREF
tc_pkts() {
	tc -n "$1" -s filter show dev "$2" ingress pref "$3" |
		sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | head -n 1
}

# On link 2, A's segments carry link 2's addresses; B restores the
# session's (10.1.1.1 -> 10.1.1.2) before it holds them.  A held segment
# must go on from mpip's hook, not enter the stack again from the
# device: then B's tc ingress and a packet socket on eth2 would see it a
# second time, with the session's addresses.  Link 2's own packets are
# the control that both count.
t_reorder_reinject_once() {
	local mine=0 again=0 tc_mine tc_again
	tc -n "$B" qdisc add dev eth2 clsact
	tc -n "$B" filter add dev eth2 ingress pref 1 protocol ip \
		u32 match ip src 10.1.2.1/32 action pass
	tc -n "$B" filter add dev eth2 ingress pref 2 protocol ip \
		u32 match ip src 10.1.1.1/32 action pass
	capture_start "$B" eth2 ro_eth2 ip
	transfer "$B" reorder_held reorder_in_order
	capture_stop ro_eth2
	tc_mine=$(tc_pkts "$B" eth2 1)
	tc_again=$(tc_pkts "$B" eth2 2)
	tc -n "$B" qdisc del dev eth2 clsact
	mine=$(capture_packets ro_eth2 'src host 10.1.2.1')
	again=$(capture_packets ro_eth2 'src host 10.1.1.1')
	echo "B eth2: tc link 2 $tc_mine, tc session $tc_again;" \
		"tap link 2 $mine, tap session $again"
	grew "$BEFORE" "$AFTER" reorder_held || fail "B held no segment"
	grep -h "dropped by kernel" "$T/ro_eth2.log" || true
	((tc_mine > 100 && mine > 20)) || fail "tc or tap missed link 2's packets"
	((tc_again == 0)) || fail "tc ingress saw $tc_again segments twice"
	((again == 0)) || fail "a packet socket saw $again segments twice"
}

# A queue before mpip's hook: an NFQUEUE rule in B's PRE_ROUTING at
# priority -450, below mpip's -399, whose reader (nfq_accept.py) accepts
# every packet.  The kernel then runs mpip's hook from the reader's
# sendmsg(), in process context with bottom halves on (nf_reinject()).
# The reorder buffer still holds and releases segments there, and the
# file arrives intact.  A splits its GSO packets meanwhile (tx_gso 0), so
# that each segment goes through the queue.  Two plain rules, not a set:
# an anonymous set draws a "suspicious RCU usage" from nf_tables itself
# on the debug kernel.  (Review 57, F4: before, the hook took the buffer's
# lock, which its soft-IRQ timer shares, with bottom halves on, and
# handed released segments to TCP so: a deadlock if the timer or a packet
# came in on that CPU meanwhile, an "inconsistent lock state" for lockdep
# on the debug kernel; the hook now turns bottom halves off.)
t_reorder_behind_queue() {
	local pid n min
	random_file "$T/file2" 2
	ip netns exec "$B" /usr/bin/python3 "$REPO/tests/selftests/nfq_accept.py" \
		7 "$T/nfq" 2>"$T/nfq.err" &
	pid=$!
	# shellcheck disable=SC2064 # the reader's PID, now
	trap "in_ns $B nft delete table ip mpipq 2>/dev/null; kill $pid 2>/dev/null
		mpipctl_in $A set tx_gso 1 || true" EXIT
	mpipctl_in "$A" set tx_gso 0
	wait_for 20 grep -qx bound "$T/nfq" ||
		{ cat "$T/nfq.err"; fail "the queue's reader did not bind"; }
	ip netns exec "$B" nft -f - <<-EOF
		table ip mpipq {
			chain pre {
				type filter hook prerouting priority -450; policy accept;
				ip saddr 10.1.1.1 queue num 7
				ip saddr 10.1.2.1 queue num 7
			}
		}
	EOF
	FILE=$T/file2 transfer "$B" reorder_held reorder_in_order
	ip netns exec "$B" nft delete table ip mpipq
	mpipctl_in "$A" set tx_gso 1
	kill -TERM "$pid"
	wait "$pid" || { cat "$T/nfq.err"; fail "the queue's reader failed"; }
	trap - EXIT
	n=$(cat "$T/nfq")
	# (half of the file's full-size segments at least)
	min=$(($(stat -c %s "$T/file2") / 1448 / 2))
	echo "the queue's reader accepted $n packets (at least $min wanted)"
	[[ $n =~ ^[0-9]+$ ]] && ((n >= min)) ||
		fail "the queue passed too few packets for the transfer"
	grew "$BEFORE" "$AFTER" reorder_held || fail "B held no segment behind the queue"
	grew "$BEFORE" "$AFTER" reorder_in_order ||
		fail "B released no held segment in order behind the queue"
}

t_reorder_off() {
	mpipctl_in "$B" set reorder 0
	transfer "$B" reorder_held
	mpipctl_in "$B" set reorder 1
	! grew "$BEFORE" "$AFTER" reorder_held || fail "B held segments with reorder 0"
}

# 2 % loss on link 2 (2 ms): a gap there is shown lost as soon as link 1
# (10 ms) delivers a packet sent after the segment held behind it.  Link 1
# gets a datagram every 5 ms meanwhile (a rule keeps them there): the
# weights the subtests before leave may give it almost none of the
# transfer (1 of 1000 was seen), and a path that delivered something in
# the last second but nothing newer than a gap keeps it held until
# reorder_max_hold_ms (released by timeout, not as lost).  So it went in
# runs of the whole file: 6-76 segments released as lost against
# 237-382 by timeout, and none at all in 2 of about 15 (the subtest
# failed there, once in make check).
t_reorder_lost() {
	local pid tick
	mpipctl_in "$A" rule add pref 100 proto udp dport 5999 mode selected dev eth1
	# (not in_ns, a function, whose subshell $! would name: the programs
	# themselves, with no hold on the subtest's output)
	ip netns exec "$B" socat -u UDP-RECV:5999 /dev/null </dev/null >/dev/null 2>&1 &
	pid=$!
	ip netns exec "$A" python3 -S -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + 120
while time.monotonic() < end:
    s.sendto(b"x", ("10.1.1.2", 5999))
    time.sleep(0.005)' </dev/null >/dev/null 2>&1 &
	tick=$!
	# shellcheck disable=SC2064
	trap "kill $pid $tick 2>/dev/null || true" EXIT
	"$TOPO" netem "$A" eth2 20mbit,2ms,2%
	transfer "$B" reorder_held reorder_lost reorder_timeout
	"$TOPO" netem "$A" eth2 20mbit,2ms,-
	kill "$pid" "$tick" 2>/dev/null || true
	mpipctl_in "$A" rule del pref 100
	grew "$BEFORE" "$AFTER" reorder_lost ||
		fail "no gap released as lost despite 2% loss"
}

# A path that carries next to nothing does not hold the gaps that another
# path's losses leave until reorder_max_hold_ms runs out.  A's link 1 is a
# backup link: A's data keeps to link 2, and A sends a heartbeat on link
# 1 every heartbeat_ms (300 ms) while data flows, so that B counts link 1
# as delivering (it did within the last second) while it has delivered
# nothing sent after most gaps.  Link 2 loses 2 % of A's packets.  A
# path that has delivered nothing for 20 ms is judged by the clock: what
# was sent on it before the held segment would have arrived by the
# segment's send time plus the path's delay and margin (core/reorder.c:
# mpip_ro_gap_wait_us()).  So B must release the gaps as lost, and few by
# timeout; before that rule, every gap waited for the next heartbeat sent
# after it, up to the 100 ms cap.
t_reorder_lost_idle() {
	local lost timeout
	# shellcheck disable=SC2064
	trap "'$TOPO' netem '$A' eth2 20mbit,2ms,- || true
		mpipctl_in '$A' link set dev eth1 nobackup || true" EXIT
	mpipctl_in "$A" link set dev eth1 backup
	"$TOPO" netem "$A" eth2 20mbit,2ms,2%
	TO=10.1.2.2 transfer "$B" reorder_held reorder_lost reorder_timeout
	count "$BEFORE" "$AFTER" reorder_lost
	lost=$COUNT
	count "$BEFORE" "$AFTER" reorder_timeout
	timeout=$COUNT
	echo "B released $lost segments as lost, $timeout by timeout"
	((lost > 0)) || fail "no gap released as lost despite 2% loss"
	((timeout * 4 <= lost)) ||
		fail "$timeout segments released by timeout against $lost as lost: gaps waited for the idle path"
}

# tcp_retrans NS: NS's TCP segments sent again so far
tcp_retrans() {
	in_ns "$1" nstat -asz TcpRetransSegs | awk '$1 == "TcpRetransSegs" { print $2 }'
}

# Segments sent again are told from new ones: link 1 loses 2 % of A's
# packets, A's TCP sends segments again, and tx_resend (segments sent
# again that went on the path of highest delay) grows by no more than the
# segments TCP sent again (TcpRetransSegs, which counts each segment of
# a GSO packet), so that no new segment was taken for one.  Which path
# is the slowest at each moment follows the queues, so this does not
# check where they went.
t_resend_counted() {
	local r0 r1 n0 n1
	"$TOPO" netem "$A" eth1 40mbit,10ms,2%
	r0=$(tcp_retrans "$A")
	n0=$(mpip_stat "$A" tx_resend)
	send_file
	r1=$(tcp_retrans "$A")
	n1=$(mpip_stat "$A" tx_resend)
	"$TOPO" netem "$A" eth1 40mbit,10ms,-
	echo "A's TCP sent $((r1 - r0)) segments again; tx_resend grew by $((n1 - n0))"
	((r1 > r0)) || fail "A's TCP sent nothing again despite 2% loss"
	((n1 > n0)) || fail "tx_resend did not grow"
	((n1 - n0 <= r1 - r0)) || fail "tx_resend counted more than TCP sent again"
}

# Link 1 goes silent in the middle of a transfer: it silently drops
# everything once B has had a first part of it and has held segments.
# The gaps of the segments lost there are given up: link 1 still counts
# as delivering for a second, but delivers nothing newer; quiet since the
# cut, it shows them lost by the clock once its delay has passed
# (reorder_lost), or reorder_max_hold_ms runs out first (reorder_timeout;
# the only way out before that rule).  The transfer is a stream
# (tcp_stream_bg) that goes on until B has had another file's worth after
# the cut, so that the cut always meets data in flight however slow the
# steps before it are.  (With a fixed 32 MiB file, a loaded machine made
# the cut at the end of the transfer at times: it met 21 packets, and B
# had nothing newer to hold behind them.  Cut at a fixed time after the
# start, a loaded machine could start the data late; cut before the
# transfer, link 1 had delivered nothing lately, so B held nothing for
# it.  The other ways out of the buffer are printed too.)
# The cut waits until link 1 carries the stream at that moment (B's eth1
# receives 10 kB within half a second).  B counts a path only while it
# delivered within the last second (reorder.c, MPIP_RO_SAMPLE_AGE): a
# gap behind a path silent for longer is shown lost by the next segment
# on the other, and is not held until the hold time runs out.  Cut at a
# moment when the stream stood still (A had had no delay report for 5 s,
# on the debug kernel), the gaps of the segments lost there came once
# link 1 was stale, and were all released as lost (reorder_lost +4,
# reorder_timeout +0; about once in 15 runs on the release kernel too).
# size_at_least FILE BYTES: FILE exists and holds BYTES or more
size_at_least() { [[ -f $1 ]] && (($(stat -c %s "$1") >= $2)); }

# link1_busy: B's eth1 receives 10 kB or more within half a second (the
# figure in $T/busy)
link1_busy() {
	local r0 r1
	r0=$(rx_bytes "$B" eth1) || return 1
	lib_sleep 0.5
	r1=$(rx_bytes "$B" eth1) || return 1
	echo $((r1 - r0)) >"$T/busy"
	((r1 - r0 >= 10000))
}

t_reorder_silent() {
	local at0 held0 lost pto out=$T/out.$PORT part
	part=$(file_size "$T/file")
	held0=$(mpip_stat "$B" reorder_held)
	# (cut only while A's path over link 1 is up.  On a loaded machine
	# its delay reports come late, seconds late on the debug kernel, and
	# with path_timeout_ms 500 it was down at times during the transfer,
	# so that the cut met little or nothing: here A gives it 2 s, times
	# the waits' scale, MPIP_TEST_WAIT_SCALE)
	pto=$(mpip_cfg "$A" path_timeout_ms) ||
		fail "cannot read A's path_timeout_ms"
	# (a subtest is a subshell of its own: this runs when it ends, and
	# puts back what a failure may have left)
	# shellcheck disable=SC2064
	trap "touch '$out.stop'; '$TOPO' netem '$A' eth1 40mbit,10ms,- || true
		mpipctl_in '$A' set path_timeout_ms $pto || true" EXIT
	mpipctl_in "$A" set path_timeout_ms $((2000 * ${MPIP_TEST_WAIT_SCALE:-1}))
	BEFORE=$(counters "$B" reorder_held reorder_timeout reorder_overflow reorder_lost)
	tcp_stream_bg "$A" "$B" 10.1.2.2 "$PORT" "$T/file" "$out"
	PORT=$((PORT + 1))
	wait_for 120 size_at_least "$out" "$part" ||
		fail "the stream brought B less than $part bytes"
	wait_for 60 mpip_stat_ge "$B" reorder_held $((held0 + 20)) ||
		fail "B held fewer than 20 segments of the stream"
	wait_for 60 mpip_path_is "$A" 10.1.1.1 10.1.1.2 up ||
		{ mpip_paths_show "$A"; fail "A's path over link 1 is not up"; }
	wait_for 60 link1_busy ||
		{ mpip_paths_show "$A"; fail "link 1 does not carry the stream"; }
	"$TOPO" netem "$A" eth1 40mbit,10ms,100%
	at0=$(qdisc_stat "$A" eth1 drops)
	echo "cut at $(file_size "$out") bytes, B's eth1 having received $(cat "$T/busy") bytes in the half second before; A's paths at the cut:"
	mpip_paths_show "$A"
	wait_for 60 size_at_least "$out" $(($(file_size "$out") + part)) ||
		fail "the stream did not go on after the cut"
	tcp_stream_end "$T/file" "$out" 60
	AFTER=$(counters "$B" reorder_held reorder_timeout reorder_overflow reorder_lost)
	echo "$B before: $BEFORE"
	echo "$B after:  $AFTER"
	rm -f "$out"
	# what the cut met: the packets netem dropped on A's eth1 since
	lost=$(($(qdisc_stat "$A" eth1 drops) - at0))
	echo "A's eth1 dropped $lost packets after the cut"
	"$TOPO" netem "$A" eth1 40mbit,10ms,-
	# (the pair may have gone idle since the transfer, and A's path over
	# link 1 is probed again only once something goes to B: mpip_poke,
	# datagrams to a port of their own)
	wait_for 20 mpip_poked_paths_up "$A" 10.1.2.2 5099 \
		"$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2 ||
		{ mpip_paths_show "$A"; fail "A's path over link 1 is not back up"; }
	((lost > 0)) ||
		fail "the cut of link 1 met no packet of the transfer: nothing to release"
	grew "$BEFORE" "$AFTER" reorder_timeout ||
		grew "$BEFORE" "$AFTER" reorder_lost ||
		fail "no segment released as lost or by timeout with link 1 silent"
}

# With reorder_max_hold_ms (4 ms) below what link 1 lags behind link 2
# (8 ms), the gaps that segments on link 2 leave before those still on
# their way on link 1 are given up when it runs out: link 1 is busy (not
# quiet), and has delivered nothing sent after them yet.
t_reorder_cap() {
	# shellcheck disable=SC2064
	trap "mpipctl_in '$B' set reorder_max_hold_ms 100 || true" EXIT
	mpipctl_in "$B" set reorder_max_hold_ms 4
	transfer "$B" reorder_held reorder_timeout reorder_lost
	grew "$BEFORE" "$AFTER" reorder_timeout ||
		fail "no segment released by timeout with a 4 ms cap on an 8 ms lag"
}

t_reorder_overflow() {
	mpipctl_in "$B" set reorder_max_pkts 2
	transfer "$B" reorder_held reorder_overflow
	mpipctl_in "$B" set reorder_max_pkts 1000
	grew "$BEFORE" "$AFTER" reorder_overflow ||
		fail "no overflow with a 2-segment buffer"
}

# B's end of link 1 becomes a bridge port (B's address moves to the
# bridge): GSO packets routed over link 1 may meet a wire behind the
# bridge, so they must be split; those over link 2 stay whole
t_gso_bridge_port() {
	ip -n "$B" link add br0 type bridge
	ip -n "$B" link set eth1 master br0
	ip -n "$B" addr del 10.1.1.2/24 dev eth1
	ip -n "$B" addr add 10.1.1.2/24 dev br0
	ip -n "$B" link set br0 up
	wait_for 20 in_ns "$A" ping -q -n -c 1 -W 1 10.1.1.2 >/dev/null ||
		fail "10.1.1.2 unreachable behind the bridge"
	transfer "$A" tx_gso_kept tx_gso_split
	grew "$BEFORE" "$AFTER" tx_gso_split ||
		fail "no GSO packet split although link 1 ends in a bridge port"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

ktap_header
ktap_plan 16
ktap_run setup_10ms_2ms t_setup
ktap_run gso_kept_whole_on_veth t_gso_kept
ktap_run gso_split_with_tx_gso_0 t_gso_split
ktap_run reorder_holds_and_releases_in_order t_reorder_in_order
ktap_run first_flight_keeps_to_own_path t_first_flight
ktap_run reorder_held_segments_seen_once_by_tc_and_taps t_reorder_reinject_once
ktap_run reorder_behind_a_queue t_reorder_behind_queue
ktap_run reorder_off_holds_nothing t_reorder_off
ktap_run reorder_lost_on_loss t_reorder_lost
ktap_run reorder_lost_beside_an_idle_path t_reorder_lost_idle
ktap_run resent_segments_told_from_new t_resend_counted
ktap_run reorder_gives_up_gaps_of_silent_path t_reorder_silent
ktap_run reorder_timeout_at_max_hold t_reorder_cap
ktap_run reorder_overflow_small_buffer t_reorder_overflow
ktap_run gso_split_towards_a_bridge_port t_gso_bridge_port
ktap_run dmesg_clean t_dmesg
ktap_finish
