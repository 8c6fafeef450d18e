#!/usr/bin/env bash
# test_rules.sh - routing rules (issue 22): `mpipctl rule add` with modes
# selected, original, off, single and protected, dev and nodev lists for
# the last two, three copies in protected, nometered, fallback drop,
# per-rule counters, deletion and flush, and bad rules refused with a
# clear message and nothing installed.  Two hosts joined by two links
# (topo.sh twolink); the rules are A's, so A's transmit counters per link
# or per path say where its data went.
# TIMEOUT: 720
# (about 100 s on an idle machine in one guest before its last three
# subtests, which add about a third; in a loaded run, a -j2 kernel build
# beside two guests, it took 282 s then)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ru

# tx2 NS: bytes NS sent on eth2
tx2() {
	local t2
	read -r _ _ _ t2 <<<"$(link_bytes "$1")"
	echo "$t2"
}

# send_eth2 PORT: send $T/f from A to B's eth1 address, port PORT, intact;
# prints the bytes A sent on eth2 meanwhile
send_eth2() {
	local b0
	b0=$(tx2 "$A")
	tcp_send_file "$A" "$B" 10.1.1.2 "$1" "$T/f" "$T/g.$1"
	sha256_equal "$T/f" "$T/g.$1" || fail "TCP data to port $1 differs"
	echo $(($(tx2 "$A") - b0))
}

# refused WANT ARGS...: `mpipctl rule ARGS` fails and says WANT
refused() {
	local want=$1
	shift
	if mpipctl_in "$A" rule "$@" 2>"$T/err"; then
		fail "rule $* was accepted"
	fi
	grep -qF "$want" "$T/err" || fail "rule $*: no '$want' in: $(cat "$T/err")"
}

t_setup() {
	random_file "$T/f" 4
	mpip_twolink_warm_up
}

t_bad_rules() {
	refused "invalid protocol 'icmp'" add proto icmp mode all
	refused "ports need proto tcp or udp" add proto 1 dport 5 mode all
	refused "address has bits set past its prefix length" add to 10.1.1.1/24 mode all
	refused "dev/nodev go with modes selected (which needs them), single, protected" add mode selected
	refused "dev/nodev go with modes selected (which needs them), single, protected" add mode all dev eth1
	refused "dev/nodev go with modes selected (which needs them), single, protected" add mode original nodev eth1
	refused "no interface 'nosuch0'" add mode selected dev nosuch0
	refused "no rule has this preference" del pref 7
	refused "missing mode" add proto tcp
	mpipctl_in "$A" -j show rules | jq -e 'length == 0' >/dev/null ||
		fail "a refused rule was installed"
}

# mode selected dev eth1: A's data to that port stays off eth2; a port
# without a rule still uses both links.
t_selected() {
	local e
	mpipctl_in "$A" rule add pref 100 proto tcp dport 5100 mode selected dev eth1
	mpipctl_in "$A" -j show rules | tee "$T/rules"
	jq -e '.[0].pref == 100 and
		.[0].rule == "proto tcp dport 5100-5100 mode selected dev eth1"' \
		"$T/rules" >/dev/null || fail "show rules does not show the rule"
	e=$(send_eth2 5100)
	echo "port 5100 (selected dev eth1): $e bytes on eth2"
	((e < 4194304 / 100)) || fail "$e bytes of 4 MB left on eth2"
	e=$(send_eth2 5101)
	echo "port 5101 (no rule): $e bytes on eth2"
	# (a fifth of the file: 4 MiB, less on the debug kernel: random_file)
	((e > $(file_size "$T/f") / 5)) || fail "without a rule, eth2 carried only $e bytes"
}

# mode original: trailers, but the flow's own path only
t_original() {
	local e
	mpipctl_in "$A" rule add pref 110 proto tcp dport 5102 mode original
	mpipctl_in "$A" -j stats >"$T/a0"
	e=$(send_eth2 5102)
	echo "port 5102 (original): $e bytes on eth2"
	((e < 4194304 / 100)) || fail "$e bytes of 4 MB left on eth2"
	mpip_stats_since "$A" "$T/a0" '.tx_cm > 0' || fail "A sent no CM"
}

# mode off: no query, no trailer; the datagrams arrive as plain IP
t_off() {
	mpipctl_in "$A" rule add pref 120 proto udp dport 6100 mode off
	mpipctl_in "$A" -j stats >"$T/a0"
	mpipctl_in "$B" -j stats >"$T/b0"
	udp_exchange "$A" "$B" 10.1.1.2 6100 200 7100
	mpip_stats_since "$A" "$T/a0" '.tx_query == 0' ||
		fail "A queried for a flow mpip leaves alone"
	mpip_stats_since "$B" "$T/b0" '.rx_cm == 0' ||
		fail "B got trailers on a flow mpip leaves alone"
}

# fallback drop: the only link the rule allows is down, so the flow's
# packets are dropped rather than sent on eth1; for mode selected, and
# for mode single with a dev list (a datagram of a new flow goes on its
# own addresses until B confirms the session, the rest are dropped)
t_drop() {
	mpipctl_in "$A" rule add pref 130 proto tcp dport 5103 mode selected \
		dev eth2 fallback drop
	mpipctl_in "$A" rule add pref 131 proto udp dport 6131 mode single \
		dev eth2 fallback drop
	# eth2 comes back however this subtest ends (it runs in a subshell)
	trap '"$TOPO" up "$A" eth2 || true' EXIT
	"$TOPO" down "$A" eth2
	wait_for 10 mpip_path_is "$A" 10.1.2.1 10.1.2.2 down ||
		fail "A: path over eth2 not down"
	mpipctl_in "$A" -j stats >"$T/a0"
	# the connection cannot last: its data has nowhere to go
	ip netns exec "$B" timeout 20 socat -u TCP-LISTEN:5103,reuseaddr \
		OPEN:/dev/null </dev/null >/dev/null 2>&1 &
	wait_for 10 tcp_listening "$B" 5103 || fail "nothing listens on 5103"
	in_ns "$A" timeout 10 socat -u "OPEN:$T/f" TCP:10.1.1.2:5103 || true
	mpip_stats_since "$A" "$T/a0" '.rule_dropped > 0' ||
		fail "nothing was dropped by the rule"
	mpipctl_in "$A" -j stats >"$T/a0"
	# (a datagram the hook drops fails its send with EPERM)
	in_ns "$A" python3 "$REPO/tests/selftests/udpcheck.py" send 10.1.1.2 6131 \
		100 --gap-us 20000 --size 200 --refused-ok || fail "UDP sender failed"
	mpip_stats_since "$A" "$T/a0" '.rule_dropped >= 50' ||
		fail "rule 131 (single dev eth2) dropped fewer than 50 of 100 datagrams"
	"$TOPO" up "$A" eth2
	wait_for 20 mpip_path_is "$A" 10.1.2.1 10.1.2.2 up ||
		fail "A: path over eth2 not back up"
}

# single_udp ADDR PORT DEV [PCT]: 2000 datagrams of 1000 bytes from A to
# ADDR:PORT arrive, and at least PCT % (default 95) of the bytes A sent on
# its paths went over DEV
single_udp() {
	local a0 b0 a1 b1 da db on pct=${4:-95}
	read -r a0 b0 <<<"$(mpip_path_tx "$A")"
	UDP_SIZE=1000 udp_exchange "$A" "$B" "$1" "$2" 2000 0 1000 ||
		fail "UDP to $1:$2 not delivered"
	read -r a1 b1 <<<"$(mpip_path_tx "$A")"
	da=$((a1 - a0))
	db=$((b1 - b0))
	on=$db
	[[ $3 == eth1 ]] && on=$da
	echo "UDP to $1:$2 (single): eth1 $da bytes, eth2 $db bytes"
	((da + db >= 2000 * 1000)) || fail "the paths carried only $((da + db)) bytes"
	((on * 100 >= (da + db) * pct)) ||
		fail "only $on of $((da + db)) bytes on $3, below $pct %"
}

# single_measured DEV: a short flow under rule 140 (mode single) makes A
# probe its idle paths; then A measures its path over DEV as the faster
single_measured() {
	UDP_SIZE=1000 udp_exchange "$A" "$B" 10.1.1.2 6202 200 0 1000 ||
		fail "UDP to port 6202 not delivered"
	wait_for 20 mpip_faster "$A" "$1" || fail "A never measured $1 as faster"
}

# mode single: a flow takes the path of lowest one-way delay, and the next
# flow the other link once the delays swap; each flow starts on the
# slower link (its own addresses).  The rule counts every datagram.
t_single() {
	trap '"$TOPO" netem "$A" eth1 "" || true; "$TOPO" netem "$A" eth2 "" || true' EXIT
	mpipctl_in "$A" rule add pref 140 proto udp dport 6200-6202 mode single
	"$TOPO" netem "$A" eth1 ",20ms"
	single_measured eth2
	single_udp 10.1.1.2 6200 eth2
	"$TOPO" netem "$A" eth1 ""
	"$TOPO" netem "$A" eth2 ",20ms"
	single_measured eth1
	single_udp 10.1.2.2 6201 eth1
	mpipctl_in "$A" -j show rules | tee "$T/rules"
	jq -e '.[] | select(.pref == 140) | .pkts == 4400 and
		.bytes == 4400 * 1028' "$T/rules" >/dev/null ||
		fail "rule 140 did not count 4400 datagrams of 1028 bytes"
}

# mode single nodev eth2: the flow stays on eth1 although A measures eth2
# as the lower delay (without the list it moves there: t_single)
t_single_devs() {
	trap '"$TOPO" netem "$A" eth1 "" || true' EXIT
	"$TOPO" netem "$A" eth2 ""
	"$TOPO" netem "$A" eth1 ",20ms"
	single_measured eth2
	mpipctl_in "$A" rule add pref 145 proto udp dport 6210 mode single nodev eth2
	single_udp 10.1.1.2 6210 eth1 99
}

# b_rx_dup: B's count of second copies dropped
b_rx_dup() { mpip_stat "$B" rx_dup; }

# udp_paths PORT SPORT COUNT: COUNT datagrams of 1000 bytes from A's SPORT
# to B's eth1 address, port PORT, 1 ms apart, arrive, each once (as
# udp_exchange checks it, UDP_MIN_GOOD included); prints "E1 E2 DUPS":
# the bytes A sent on its paths over eth1 and eth2 meanwhile, and the
# later copies B dropped
udp_paths() {
	local a0 b0 a1 b1 d0
	d0=$(b_rx_dup)
	read -r a0 b0 <<<"$(mpip_path_tx "$A")"
	UDP_SIZE=1000 udp_exchange "$A" "$B" 10.1.1.2 "$1" "$3" "$2" 1000 >&2 || return 1
	read -r a1 b1 <<<"$(mpip_path_tx "$A")"
	echo "$((a1 - a0)) $((b1 - b0)) $(($(b_rx_dup) - d0))"
}

# mode protected: with 10 % random loss on each of A's links, 2000 UDP
# datagrams to a port with the rule arrive at least 98 % (one path alone
# would deliver about 90 %), none twice: A sent each on both links, and B
# dropped the copy that came second (rx_dup).  The flow (its source port
# fixed) sent 20 datagrams before the loss starts: a session's first
# packets go once, on its own path, until the peer confirms it.
t_protected() {
	local out da db dups
	trap '"$TOPO" netem "$A" eth1 "" || true; "$TOPO" netem "$A" eth2 "" || true' EXIT
	mpipctl_in "$A" rule add pref 160 proto udp dport 6300 mode protected
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	UDP_SIZE=1000 udp_exchange "$A" "$B" 10.1.1.2 6300 20 7300 1000 ||
		fail "the first 20 datagrams did not arrive"
	"$TOPO" netem "$A" eth1 ",,10%"
	"$TOPO" netem "$A" eth2 ",,10%"
	out=$(UDP_MIN_GOOD=1960 udp_paths 6300 7300 2000) ||
		fail "fewer than 98 % of the datagrams arrived, or some twice"
	read -r da db dups <<<"$out"
	echo "protected: eth1 $da bytes, eth2 $db bytes; B dropped $dups second copies"
	((da >= 1900 * 1000 && db >= 1900 * 1000)) ||
		fail "the datagrams did not go on both links"
	((dups >= 1000)) || fail "B dropped few second copies"
}

# mode protected dev eth1: of A's two paths only one is allowed, so each
# datagram goes once, on eth1, and B drops no second copy
t_protected_devs() {
	local out da db dups
	mpipctl_in "$A" rule add pref 165 proto udp dport 6310 mode protected dev eth1
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	out=$(udp_paths 6310 7310 500) || fail "UDP to port 6310 not delivered"
	read -r da db dups <<<"$out"
	echo "protected dev eth1: eth1 $da bytes, eth2 $db bytes; B dropped $dups second copies"
	((da >= 500 * 1000)) || fail "eth1 carried only $da bytes"
	((db * 100 <= (da + db))) || fail "$db bytes went on eth2"
	((dups == 0)) || fail "B dropped second copies: some went twice"
}

# udp_confirmed PORT SPORT: A's UDP session from SPORT to B's eth1
# address, port PORT, is confirmed
udp_confirmed() {
	mpip_session_json "$A" udp "$2" "$1" | jq -e .confirmed >/dev/null
}

# mode protected copies 3: with a second address on B's eth1, A has three
# paths; each datagram goes on all three (twice on eth1, once on eth2),
# all arrive once, and B drops two copies of each; the rule shows its
# copies.  The flow's first 20 datagrams go before, until B confirmed the
# session (until then they go once).  The checks ask for half a copy more
# than two copies could give, and for eth2 to carry 80 % of the
# datagrams, not for every copy: in 4 of 6 runs of 2026-11-30 (two
# guests side by side) 25 to 60 of the 500 went on fewer paths, though
# all three were up before and after: a path whose delay reports come
# late under load goes down for a moment (path_timeout_ms; in two later
# runs A's paths went down 2 and 3 times while the 500 went), and its
# copies with it.  A's paths are printed before and after.
t_protected_copies() {
	local out da db dups down
	trap 'ip -n "$B" addr del 10.1.1.3/24 dev eth1 2>/dev/null || true' EXIT
	ip -n "$B" addr add 10.1.1.3/24 dev eth1
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.1.1:10.1.1.3 10.1.2.1:10.1.2.2
	mpipctl_in "$A" rule add pref 166 proto udp dport 6320 mode protected copies 3
	mpipctl_in "$A" -j show rules | jq -e '.[] | select(.pref == 166) |
		.rule == "proto udp dport 6320-6320 mode protected copies 3"' >/dev/null ||
		fail "show rules does not show the copies"
	UDP_SIZE=1000 udp_exchange "$A" "$B" 10.1.1.2 6320 20 7320 1000 ||
		fail "the first 20 datagrams did not arrive"
	wait_for 10 udp_confirmed 6320 7320 || fail "B did not confirm the session"
	mpip_paths_show "$A"
	down=$(mpip_stat "$A" path_down)
	out=$(udp_paths 6320 7320 500) ||
		fail "UDP to port 6320 not delivered, or some datagrams twice"
	read -r da db dups <<<"$out"
	echo "protected copies 3: eth1 $da bytes, eth2 $db bytes; B dropped $dups later copies; A's paths went down $(($(mpip_stat "$A" path_down) - down)) times"
	mpip_paths_show "$A"
	((dups >= 3 * 250)) || fail "B dropped only $dups later copies of 500 datagrams"
	((da >= 3 * 250 * 1000 && db >= 400 * 1000)) ||
		fail "the copies did not go twice on eth1 and once on eth2"
}

# nometered: with eth2 metered, A's data to a port under "mode all
# nometered" stays off eth2; show links and show rules say so
t_nometered() {
	local e
	trap 'mpipctl_in "$A" link set dev eth2 nometered || true' EXIT
	mpipctl_in "$A" link set dev eth2 metered
	mpipctl_in "$A" -j show links | jq -e 'map(select(.dev == "eth2"))[0].metered' \
		>/dev/null || fail "show links does not show eth2 metered"
	mpipctl_in "$A" rule add pref 167 proto tcp dport 5108 mode all nometered
	mpipctl_in "$A" -j show rules | jq -e '.[] | select(.pref == 167) |
		.rule == "proto tcp dport 5108-5108 mode all nometered"' >/dev/null ||
		fail "show rules does not show nometered"
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	e=$(send_eth2 5108)
	echo "port 5108 (all nometered, eth2 metered): $e bytes on eth2"
	((e < 4194304 / 100)) || fail "$e bytes of 4 MB left on eth2"
}

# mode single fails over: the path it uses goes down mid-transfer, and the
# stream goes on over the other link, intact
t_single_failover() {
	local s0 a0 b0 a1 b1
	trap '"$TOPO" netem "$A" eth1 "" || true; "$TOPO" up "$A" eth2 || true' EXIT
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpipctl_in "$A" rule add pref 150 proto tcp dport 5106 mode single
	"$TOPO" netem "$A" eth2 ""
	"$TOPO" netem "$A" eth1 ",20ms"
	single_measured eth2
	random_file "$T/blk" 1
	read -r a0 b0 <<<"$(mpip_path_tx "$A")"
	tcp_stream_bg "$A" "$B" 10.1.1.2 5106 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
	read -r a1 b1 <<<"$(mpip_path_tx "$A")"
	echo "before eth2 went down: eth1 $((a1 - a0)) bytes, eth2 $((b1 - b0)) bytes"
	(((b1 - b0) * 100 >= (a1 - a0 + b1 - b0) * 80)) ||
		fail "the stream was not on eth2, the lowest delay"
	"$TOPO" down "$A" eth2
	s0=$(file_size "$T/st")
	wait_for 20 file_grew "$T/st" "$s0" 2000000 ||
		fail "stream stalled after eth2 went down"
	"$TOPO" up "$A" eth2
	tcp_stream_end "$T/blk" "$T/st" 60
	"$TOPO" netem "$A" eth1 ""
	wait_for 20 mpip_path_is "$A" 10.1.2.1 10.1.2.2 up ||
		fail "A: path over eth2 not back up"
}

t_del_flush() {
	local e
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpipctl_in "$A" rule del pref 100
	mpipctl_in "$A" -j show rules |
		jq -e 'map(.pref) == [110, 120, 130, 131, 140, 145, 150, 160, 165, 166, 167]' \
		>/dev/null || fail "rule 100 still listed, or others gone"
	e=$(send_eth2 5104)
	echo "rule 100 deleted, port 5104: $e bytes on eth2"
	mpipctl_in "$A" rule flush
	mpipctl_in "$A" -j show rules | jq -e 'length == 0' >/dev/null ||
		fail "rules left after a flush"
	e=$(send_eth2 5100)
	echo "after the flush, port 5100: $e bytes on eth2"
	((e > $(file_size "$T/f") / 5)) || fail "after the flush, eth2 carried only $e bytes"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 15
	ktap_run setup t_setup
	ktap_run bad_rules_refused t_bad_rules
	ktap_run selected_keeps_flow_on_its_links t_selected
	ktap_run original_keeps_flow_on_its_path t_original
	ktap_run off_leaves_flow_alone t_off
	ktap_run fallback_drop_drops t_drop
	ktap_run single_takes_lowest_delay t_single
	ktap_run single_keeps_to_its_devs t_single_devs
	ktap_run single_fails_over t_single_failover
	ktap_run protected_survives_loss t_protected
	ktap_run protected_keeps_to_its_devs t_protected_devs
	ktap_run protected_sends_more_copies t_protected_copies
	ktap_run nometered_keeps_off_metered_links t_nometered
	ktap_run del_and_flush t_del_flush
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
