#!/usr/bin/env bash
# test_longrtt.sh - paths whose round trip is longer than path_timeout_ms
# (a geostationary satellite's 600 ms, a cellular uplink under load) stay
# up while they work: both links delay 300 ms each way, and path_timeout_ms
# is 500, so the first delay report of a burst after an idle pause comes
# back later than that.  Each path's timeout is path_timeout_ms beyond the
# round trip of its reports, which both hosts measure (mpipctl show
# paths: RTT_US, TIMEOUT).  Bursts of datagrams each way with idle gaps
# between them, then a TCP transfer: everything arrives intact, both
# links carry data, and no path of either host goes down.  With a timeout
# of path_timeout_ms alone, the module before took paths down 26 to 31
# times in 8 bursts, and 6 or 7 times in the 2 MB transfer.
# TIMEOUT: 600
# (145 s in one guest beside a loaded run's two and a kernel build, with
# 8 bursts each way; about four times that, as a loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink lr --link1 ,300ms --link2 ,300ms

# downs: both hosts' path_down, as "A B"
downs() {
	echo "$(mpip_stat "$A" path_down) $(mpip_stat "$B" path_down)"
}

# rtt_known NS: NS's direct paths measured their reports' round trip, at
# least the links' 600 ms, and their timeout is path_timeout_ms (500 ms)
# beyond it
rtt_known() {
	local paths
	paths=$(mpip_paths "$1")
	jq -r '.[] | select(.state == "up") |
		"\(.saddr) -> \(.daddr): rtt_us \(.rtt_us), timeout_ms \(.timeout_ms)"' <<<"$paths"
	jq -e '[.[] | select(.state == "up" and
		(.saddr | split(".")[2]) == (.daddr | split(".")[2]))] |
		length == 2 and all(.[]; .rtt_us != null and
			.rtt_us >= 600000 and .rtt_us < 5000000 and
			.timeout_ms >= 500 + .rtt_us / 1000 and
			.timeout_ms <= 4000)' <<<"$paths" >/dev/null
}

t_setup() {
	mpipctl_in "$A" set path_timeout_ms 500
	mpipctl_in "$B" set path_timeout_ms 500
	mpip_twolink_warm_up
	rtt_known "$A" || fail "A: no round trip of 600 ms or more on its paths"
	rtt_known "$B" || fail "B: no round trip of 600 ms or more on its paths"
}

# bursts SRC DST ADDR PORT: 5 bursts of 100 datagrams (1 ms apart) of one
# flow (from port PORT + 100), each after an idle pause longer than the
# round trip; each arrives whole
bursts() {
	local i
	for i in 1 2 3 4 5; do
		UDP_SIZE=600 udp_exchange "$1" "$2" "$3" "$4" 100 $(($4 + 100)) 1000 ||
			fail "burst $i: datagrams lost or damaged"
		sleep 1.5
	done
}

# no_downs BEFORE: neither host took a path down since BEFORE ("A B")
no_downs() {
	local a0 b0 a1 b1
	read -r a0 b0 <<<"$1"
	read -r a1 b1 <<<"$(downs)"
	echo "path_down: A +$((a1 - a0)), B +$((b1 - b0))"
	if ((a1 != a0 || b1 != b0)); then
		mpip_paths_show "$A" >&2 || true
		mpip_paths_show "$B" >&2 || true
		fail "a path that works went down (A +$((a1 - a0)), B +$((b1 - b0)))"
	fi
}

# both_links_sent NS BEFORE: NS sent data on both links since BEFORE
# (mpip_path_tx's "E1 E2")
both_links_sent() {
	local e1 e2 n1 n2
	read -r e1 e2 <<<"$2"
	read -r n1 n2 <<<"$(mpip_path_tx "$1")"
	echo "$1 sent on eth1 $((n1 - e1)) B, on eth2 $((n2 - e2)) B"
	((n1 - e1 > 20000 && n2 - e2 > 20000)) ||
		fail "$1 did not use both links"
}

# stays_up NS CMD...: CMD succeeds, NS sends on both links meanwhile, and
# neither host takes a path down
stays_up() {
	local ns=$1 d0 tx0
	shift
	d0=$(downs)
	tx0=$(mpip_path_tx "$ns")
	"$@"
	no_downs "$d0"
	both_links_sent "$ns" "$tx0"
}

# tcp_intact: 2 MB from A to B over TCP, intact
tcp_intact() {
	head -c 2000000 /dev/urandom >"$T/file"
	tcp_send_file "$A" "$B" 10.1.1.2 5300 "$T/file" "$T/file.out"
	sha256_equal "$T/file" "$T/file.out" || fail "received file differs"
}

t_bursts_a() { stays_up "$A" bursts "$A" "$B" 10.1.1.2 6200; }
t_bursts_b() { stays_up "$B" bursts "$B" "$A" 10.1.1.1 6400; }
t_tcp() { stays_up "$A" tcp_intact; }

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 5
	ktap_run setup_600ms_rtt_paths_up t_setup
	ktap_run bursts_a_to_b_paths_stay_up t_bursts_a
	ktap_run bursts_b_to_a_paths_stay_up t_bursts_b
	ktap_run tcp_a_to_b_paths_stay_up t_tcp
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
