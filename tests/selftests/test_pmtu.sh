#!/usr/bin/env bash
# test_pmtu.sh - a path whose MTU is smaller further on.  Two MPIP hosts
# behind a router (no policy routing, four paths); the router's link to
# B's eth2 has MTU 1280, so full-size TCP segments on the two paths to
# B's 10.3.2.2 need fragmentation and the router answers them with ICMP
# "fragmentation needed", quoting the path's addresses.  mpip records
# that MTU on the path's route (counter rx_icmp_pmtu): TCP A -> B's link-1
# address then arrives intact, no path ever goes down (a black hole would
# take them down after path_timeout_ms and again after every probe), and
# the paths to 10.3.2.2 still carry what fits.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_router_globals pm
PATHS_A=(10.2.1.1:10.3.1.2 10.2.1.1:10.3.2.2 10.2.2.1:10.3.1.2 10.2.2.1:10.3.2.2)

t_setup() {
	"$TOPO" router --no-policy --prefix "$P"
	mpipctl_in "$R" disable
	head -c 100000 /dev/urandom >"$T/small"
	tcp_send_file "$A" "$B" 10.3.1.2 4999 "$T/small" "$T/small.out"
	sha256_equal "$T/small" "$T/small.out" || fail "warm-up TCP data differs"
	mpip_wait_paths_up "$A" "${PATHS_A[@]}"
	# the far end of link 2, beyond the router: MTU 1280
	ip -n "$R" link set b2 mtu 1280
	ip -n "$B" link set eth2 mtu 1280
	random_file "$T/file" 4
}

t_transfer() {
	local down0 out=$T/file.out
	down0=$(mpip_stat "$A" path_down)
	tcp_send_file "$A" "$B" 10.3.1.2 5001 "$T/file" "$out"
	sha256_equal "$T/file" "$out" || fail "data differs"
	tcp_send_file "$A" "$B" 10.3.1.2 5002 "$T/file" "$out"
	sha256_equal "$T/file" "$out" || fail "data differs (second transfer)"
	mpip_paths_show "$A"
	echo "A: rx_icmp_pmtu $(mpip_stat "$A" rx_icmp_pmtu), path_down $down0 -> $(mpip_stat "$A" path_down)"
	(($(mpip_stat "$A" rx_icmp_pmtu) > 0)) ||
		fail "A recorded no path MTU: did the router send its errors?"
	(($(mpip_stat "$A" path_down) == down0)) ||
		fail "paths of A went down during the transfers: packets were black-holed"
}

# The route of a path to 10.3.2.2 knows the smaller MTU.
t_route_mtu() {
	local out
	out=$(ip -n "$A" route get 10.3.2.2 from 10.2.1.1 oif eth1)
	echo "$out"
	grep -Eq 'mtu 12[0-9][0-9]' <<<"$out" || fail "no MTU exception for the path to 10.3.2.2"
	mpip_paths_in "$A" up "${PATHS_A[@]}" || fail "not every path of A is up"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 4
	ktap_run setup t_setup
	ktap_run tcp_intact_no_path_down t_transfer
	ktap_run path_route_has_the_mtu t_route_mtu
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
