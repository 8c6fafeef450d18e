#!/usr/bin/env bash
# test_blackout.sh - both links stop carrying packets under a TCP stream
# (100 % loss both ways on both, interfaces up) until A's paths are down
# and each host has heard nothing from the other for longer than
# peer_timeout_ms; then link 2 works again.  A's path over it must come
# back up, the stream go on over it, and then link 1 come back too.
#
# Two bugs kept link 2 unused until link 1 returned (test_backup failed
# so under load: every path of both hosts down for 20 s, link 2 working):
#  - A path that is down comes back when the peer reports the delay of a
#    probe sent on it.  A host sent each report with whatever CM it sent
#    next, which while every path was down was its probe on link 1: lost.
#    Each host's probes on link 1 took the reports the other's probes on
#    link 2 had asked for.  Now a CM on a path not up carries only the
#    report of the packets that came over that path the other way, and an
#    idle host sends the report a probe asked for (feedback.c).
#  - A silent peer's flows go plain and query it under their own
#    addresses, on the broken link, and the node, with nothing sent to it
#    any more, went idle and was no longer probed.  Now a flow waiting for
#    its node keeps all the node's paths probed, and its entry is "yes"
#    again once the node was heard since (output.c, mpip_avail_revive()).
# And one more kept the stream stalled for minutes once in a dozen runs:
#  - A peer counted as lost after peer_timeout_ms without a word from it,
#    though nothing had gone to it that it would answer.  TCP's backed-off
#    retransmissions came more than that apart, with A's path over link 2
#    up: each went plain on link 1, and the next found the entry waiting
#    for the node to be heard again.  Now a peer is lost only while no
#    path to it is up; and while none is, packets go over the path it was
#    heard over last (feedback.c), not under the flow's own addresses.
#  - A peer was also lost when it left a question unanswered for
#    peer_timeout_ms, and probes of a path that is down were such
#    questions: with link 1 black, a stalled stream (TCP backing off)
#    sent nothing but those probes, the peer had nothing to say, and the
#    next retransmission found it lost, with A's path over link 2 up; it
#    went plain on link 1 (failed once in about twenty runs of this
#    file, with A's retransmission timeout grown to 18 s).  Now only a
#    CM on a path that is up counts as a question (node.c,
#    mpip_node_asks()).  Subtest silent_peer_not_lost_for_probes.
#  - The receiver of a one-way flow sent its reports over paths chosen by
#    weight, half of them over a link that had broken before it found
#    out.  A sender resuming after an idle pause (its peer silent since)
#    then had its working path go without a report for path_timeout_ms
#    too, took it down, and the peer for lost (idle_pair_resumes_own_
#    link_broken failed so in a full run).  Now reports go over the path
#    the sender was heard over last (heartbeat.c, mpip_fb_path()).
# TIMEOUT: 660
# (about 122 s alone in one guest: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink bo

# loss DEV SPEC: netem SPEC on DEV of both hosts ("" takes it off)
loss() {
	"$TOPO" netem "$A" "$1" "$2"
	"$TOPO" netem "$B" "$1" "$2"
}

# mute NS DEV: NS sends no IP packet out of DEV; ARP still goes (unmute
# takes it off).  A peer silent this way still answers ARP, as one with
# nothing to say does.  With netem's 100 % loss instead, the other host's
# neighbour entry for it could expire during the silence and fail, and
# the datagrams then meant to show that it was not taken for lost were
# dropped before they left (silent_peer_not_lost_for_probes failed so on
# CI: none of 20 arrived, with A's path over link 2 up).
mute() {
	tc -n "$1" qdisc replace dev "$2" clsact
	tc -n "$1" filter add dev "$2" egress protocol ip prio 1 matchall action drop
}
unmute() { tc -n "$1" qdisc del dev "$2" clsact; }

blackout_why() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths_show "$ns" || true
		mpipctl_in "$ns" -j stats | jq -c --arg ns "$ns" '{ns: $ns,
			path_up, path_down, tx_heartbeat, rx_heartbeat,
			tx_feedback, rx_feedback, peer_lost, tx_query,
			rx_plain, rx_spoofed, drop_session}' || true
		mpip_peers_show "$ns"
		ip netns exec "$ns" ss -tino '( sport = :5400 or dport = :5400 )' ||
			true
		# (a stream that stalled: TCP's timeouts, retransmissions held
		# back by a copy still queued in this host, the qdiscs' drops)
		ip netns exec "$ns" nstat -asz TcpRetransSegs TcpExtTCPTimeouts \
			TcpExtTCPSpuriousRTOs TcpExtTCPSpuriousRtxHostQueues \
			TcpExtTCPLossProbes TcpExtTCPLostRetransmit |
			sed -n "s/^\([A-Za-z]\)/$ns nstat: \1/p" || true
		ip netns exec "$ns" tc -s qdisc show | sed "s/^/$ns qdisc: /" || true
	done
}

# paths_back PORT DEV: both hosts' paths over both links come back up
# after DEV's link was broken, with A sending B datagrams to PORT
# meanwhile (mpip_poke).  Without them the waits passed only while the
# subtest's last datagrams were recent: the debug kernel's runs failed
# there (no probe in 12 s, A's path over link 2 down with both links
# working, the pair idle).  On a failure, link_why DEV.
paths_back() {
	wait_for 20 mpip_poked_paths_up "$A" 10.1.1.2 "$1" \
		"$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2 ||
		{ link_why "$2"; fail "A's paths are not all back up"; }
	wait_for 20 mpip_poked_paths_up "$A" 10.1.1.2 "$1" \
		"$B" 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1 ||
		{ blackout_why; fail "B's paths are not all back up"; }
}

t_setup() {
	random_file "$T/blk" 1
	mpip_twolink_warm_up
}

# A flow resumes after the pair was idle for longer than peer_timeout_ms
# (3 s), with its own link broken meanwhile: A's paths are up (nothing
# failed while nothing was sent), so B is not lost, and the flow moves to
# link 2 as soon as A's path over link 1 times out.
t_idle_resume() {
	udp_exchange "$A" "$B" 10.1.1.2 6400 30 6401 ||
		fail "datagrams before the pause did not all arrive"
	sleep 6
	mpipctl_in "$A" -j stats >"$T/a0"
	loss eth1 ",,100%"
	# (a subtest is a subshell: this runs when it ends, failed or not,
	# so that the next one starts with both links working)
	trap 'loss eth1 "" || true' EXIT
	UDP_MIN_GOOD=140 udp_exchange "$A" "$B" 10.1.1.2 6400 200 6401 10000 ||
		{ blackout_why; fail "the flow did not go on over link 2"; }
	mpip_stats_since "$A" "$T/a0" '.peer_lost == 0' ||
		{ blackout_why; fail "A took idle B for lost"; }
	loss eth1 ""
	paths_back 6400 eth1
}

# A one-way UDP flow from A to B over both links; link 2 stops carrying
# packets.  B sends A nothing but delay reports, in heartbeats that want
# no answer: B must still find its path over link 2 broken, or half its
# reports go there and are lost.
t_one_way_udp() {
	local pid rc=0
	mpipctl_in "$A" -j stats >"$T/a1"
	UDP_MIN_GOOD=450 udp_exchange "$A" "$B" 10.1.1.2 6500 600 6501 10000 &
	pid=$!
	sleep 2
	loss eth2 ",,100%"
	trap 'loss eth2 "" || true' EXIT
	wait_for 10 mpip_paths_in "$B" down 10.1.2.2:10.1.2.1 || rc=1
	wait "$pid" || { blackout_why; fail "datagrams lost over link 1"; }
	((rc == 0)) || { blackout_why; fail "B's path over the broken link 2 stays up"; }
	mpip_paths_in "$A" up 10.1.1.1:10.1.1.2 ||
		{ blackout_why; fail "A's path over link 1 is not up"; }
	# (for the record: once is A's path over link 2; more, A's over link 1
	# flapped)
	echo "A's paths went down $(($(mpip_stat "$A" path_down) -
		$(jq -r .path_down "$T/a1"))) times"
	loss eth2 ""
	paths_back 6500 eth2
}

# link_why DEV: blackout_why, and what each host's DEV did: its
# neighbour entries, qdisc counters and mpip's probe and feedback
# counters, then again after 12 s (more than the longest probe gap) with
# a capture of A's DEV over those 12 s
link_why() {
	local ns
	blackout_why
	capture_start "$A" "$1" lwhy "arp or ip"
	for ns in "$A" "$B"; do
		ip -n "$ns" neigh show dev "$1" | sed "s/^/$ns neigh: /"
		tc -n "$ns" -s qdisc show dev "$1" | sed "s/^/$ns qdisc: /"
	done
	sleep 12
	capture_stop lwhy
	tcpdump -nn -r "$T/lwhy.pcap" 2>/dev/null | sed "s/^/A $1: /" || true
	for ns in "$A" "$B"; do
		ip -n "$ns" neigh show dev "$1" | sed "s/^/$ns neigh (12 s on): /"
		mpip_paths_show "$ns" || true
		mpipctl_in "$ns" -j stats | jq -c --arg ns "$ns" '{ns: $ns,
			tx_heartbeat, rx_heartbeat, ctrl_limited, rr_held,
			tx_feedback, rx_feedback, path_up, path_down}' || true
	done
}

# reports_in NAME: the CMs with a delay report in capture NAME
reports_in() {
	/usr/bin/python3 - "$REPO/tests/scapy" "$T/$1.pcap" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import mpip_cm
from scapy.layers.inet import IP
from scapy.utils import rdpcap
n = 0
for p in rdpcap(sys.argv[2]):
    t = mpip_cm.find_trailer(p[IP]) if IP in p else None
    n += t is not None and t.fb_path_id != 0
print(n)
PY
}

# A one-way UDP flow from A to B while link 1 carries nothing from A to B
# (from B to A it works): B hears A over link 2 only, and sends its delay
# reports back that way.  Sent by weight, half of them went over link 1,
# and where link 1 was broken both ways, B had not found it out yet and
# A resumed after a pause, A's path over link 2 went without a report for
# path_timeout_ms and A took B for lost (idle_pair_resumes_own_link_broken
# failed so once in a full run).
t_reports_way_back() {
	local r1 r2
	udp_exchange "$A" "$B" 10.1.1.2 6700 30 6701 ||
		fail "datagrams before the break did not all arrive"
	"$TOPO" netem "$A" eth1 ",,100%"
	# shellcheck disable=SC2016
	trap '"$TOPO" netem "$A" eth1 "" || true' EXIT
	capture_start "$B" eth1 rep1 "udp and src host 10.1.1.2"
	capture_start "$B" eth2 rep2 "udp and src host 10.1.2.2"
	UDP_MIN_GOOD=200 udp_exchange "$A" "$B" 10.1.1.2 6700 300 6701 10000 ||
		{ blackout_why; fail "the flow did not go on over link 2"; }
	capture_stop rep1
	capture_stop rep2
	r1=$(reports_in rep1)
	r2=$(reports_in rep2)
	echo "B's CMs with a delay report: over link 1 $r1, over link 2 $r2"
	((r2 >= 10)) || fail "B sent only $r2 reports over link 2"
	((r1 * 4 <= r2)) ||
		fail "B sent $r1 reports over link 1, which A's packets did not come over"
}

# With link 1 black, A's path over it is down and A probes it at every
# heartbeat; A's flow pauses for longer than peer_timeout_ms while B says
# nothing (its sends on link 2 dropped: B had nothing to say, as a
# receiver of a stalled stream has not), with A's path over link 2 up.
# A must not take B for lost when the flow resumes: its datagrams go
# over link 2.
t_silent_peer() {
	udp_exchange "$A" "$B" 10.1.1.2 6600 30 6601 ||
		fail "datagrams before the break did not all arrive"
	mpipctl_in "$A" -j stats >"$T/a2"
	loss eth1 ",,100%"
	trap 'loss eth1 "" || true' EXIT
	UDP_MIN_GOOD=50 udp_exchange "$A" "$B" 10.1.1.2 6600 100 6601 10000 ||
		{ blackout_why; fail "the flow did not go on over link 2"; }
	wait_for 10 mpip_paths_in "$A" down 10.1.1.1:10.1.1.2 ||
		{ blackout_why; fail "A's path over the broken link 1 is not down"; }
	mpip_paths_in "$A" up 10.1.2.1:10.1.2.2 ||
		{ blackout_why; fail "A's path over link 2 is not up"; }
	# B's last reports arrive; then B goes silent.  (The datagrams
	# after the pause ask for reports B cannot send: A's path over link 2
	# must not time out for that while they go, however slowly.  The
	# silence is a pause of 4.5 s and an exchange whose two programs took
	# seconds to start on the debug kernel: with path_timeout_ms at 10 s
	# it outlasted the timeout there once, and A rightly took B for lost.
	# So the timeout is at its most, 60 s, meanwhile.)
	local pto rc=0 t0
	pto=$(mpip_cfg "$A" path_timeout_ms) || fail "no path_timeout_ms"
	mpipctl_in "$A" set path_timeout_ms 60000
	sleep 1
	mute "$B" eth2
	t0=${EPOCHREALTIME/[.,]/}
	# shellcheck disable=SC2064
	trap "loss eth1 '' || true; unmute '$B' eth2 || true
		mpipctl_in '$A' set path_timeout_ms $pto || true" EXIT
	sleep 4.5
	UDP_MIN_GOOD=15 udp_exchange "$A" "$B" 10.1.1.2 6600 20 6601 5000 || rc=$?
	unmute "$B" eth2
	echo "B was silent for $(since_s "$t0") s"
	mpipctl_in "$A" set path_timeout_ms "$pto"
	((rc == 0)) || { blackout_why; fail "the flow did not resume over link 2"; }
	mpip_stats_since "$A" "$T/a2" '.peer_lost == 0' ||
		{ blackout_why; fail "A took B for lost: its probes of the broken link went unanswered"; }
	loss eth1 ""
	paths_back 6600 eth1
}

t_blackout() {
	tcp_stream_bg "$A" "$B" 10.1.1.2 5400 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
	loss eth1 ",,100%"
	loss eth2 ",,100%"
	wait_for 20 mpip_paths_in "$A" down 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2 ||
		{ blackout_why; fail "A's paths not all down"; }
	# each host finds the other silent (peer_timeout_ms, 3 s): the
	# stream's packets go plain, with queries on link 1
	sleep 5
}

# tcp_rto_ms NS PORT: the (backed-off) retransmission timeout of NS's
# socket to PORT, in ms
tcp_rto_ms() {
	ip netns exec "$1" ss -tin "( dport = :$2 )" |
		sed -n 's/.* rto:\([0-9.]*\).*/\1/p' | head -n 1 | cut -d. -f1
}

# tcp_acked NS PORT: the bytes NS's socket to PORT has had acknowledged
tcp_acked() {
	ip netns exec "$1" ss -tin "( dport = :$2 )" |
		sed -n 's/.* bytes_acked:\([0-9]*\).*/\1/p' | head -n 1
}

# tcp_acked_beyond NS PORT N: more than N bytes of it acknowledged
tcp_acked_beyond() {
	local n
	n=$(tcp_acked "$1" "$2")
	[[ $n ]] && ((n > $3))
}

# The stream goes on in two steps, each within one of A's TCP
# retransmission timeouts (as it is when the step starts) and 15 s:
#  - TCP's timer backed off while nothing went through: its next
#    retransmission is up to one timeout away, and it must get through
#    and be acknowledged (the one that follows would be twice as far).
#  - That acknowledgement often ends the stall only after one more
#    timeout of TCP's own: in at least 7 of 16 runs of this subtest in
#    a scratch loop, the stream went on 14-40 s after A's path came up,
#    against 1-5 s in most others.  Segments sent before the blackout
#    that arrived, over link 2, behind ones lost on link 1 were
#    acknowledged selectively in ACKs lost in the blackout; their SACKs
#    now come for data never sent again, and TCP's F-RTO
#    (net.ipv4.tcp_frto, on by default) takes that for a spurious
#    timeout: it undoes the loss marks of the holes, which then wait for
#    the next timeout, twice the backed-off one before it (11.5-24 s in
#    those runs).  With tcp_frto 0 the stream went on within 5 s of
#    that acknowledgement in all 12 runs, A's timeout back at its base
#    (about 200 ms).  So the second wait is one timeout as A's TCP has
#    it after the acknowledgement.  (CI failed once when this subtest
#    waited only for the first.)
t_link2_back() {
	local s0 a0 t0 rto wait
	loss eth2 ""
	t0=$(date +%s)
	wait_for 15 mpip_paths_in "$A" up 10.1.2.1:10.1.2.2 ||
		{ blackout_why; fail "A's path over link 2 not back up"; }
	mpip_paths_in "$A" down 10.1.1.1:10.1.1.2 ||
		fail "A's path over the broken link 1 is not down"
	s0=$(file_size "$T/st")
	a0=$(tcp_acked "$A" 5400)
	rto=$(tcp_rto_ms "$A" 5400)
	[[ $rto && $a0 ]] || { blackout_why; fail "A's TCP socket not found"; }
	wait=$((rto / 1000 + 15))
	echo "A's path up $(($(date +%s) - t0)) s after link 2 came back;" \
		"A's TCP retransmission timeout now $rto ms: waiting $wait s"
	wait_for "$wait" tcp_acked_beyond "$A" 5400 "$a0" ||
		{ blackout_why; fail "A's retransmission over link 2 was not acknowledged"; }
	rto=$(tcp_rto_ms "$A" 5400)
	wait=$((rto / 1000 + 15))
	echo "acknowledged $(($(date +%s) - t0)) s after link 2 came back;" \
		"A's TCP retransmission timeout now $rto ms: waiting $wait s"
	wait_for "$wait" file_grew "$T/st" "$s0" 1000000 ||
		{ blackout_why; fail "the stream did not go on over link 2"; }
	echo "stream on $(($(date +%s) - t0)) s after link 2 came back"
	wait_for 10 mpip_paths_in "$B" up 10.1.2.2:10.1.2.1 ||
		{ blackout_why; fail "B's path over link 2 not up"; }
}

t_link1_back() {
	loss eth1 ""
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1
	tcp_stream_end "$T/blk" "$T/st" 60
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 9
	ktap_run setup t_setup
	ktap_run idle_pair_resumes_own_link_broken t_idle_resume
	ktap_run one_way_udp_receiver_finds_link_broken t_one_way_udp
	ktap_run receiver_reports_over_link_it_hears t_reports_way_back
	ktap_run silent_peer_not_lost_for_probes t_silent_peer
	ktap_run both_links_black_paths_down t_blackout
	ktap_run link2_back_paths_up_stream_goes_on t_link2_back
	ktap_run link1_back_paths_up_stream_intact t_link1_back
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
