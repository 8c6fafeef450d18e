#!/usr/bin/env bash
# test_links.sh - per-interface settings: `mpipctl link set dev IF
# advertise off` keeps an interface out of mpip (issue 20, privacy): its
# addresses are in no address list a peer gets and are the local end of
# no path, so the interface carries none of the traffic mpip spreads;
# `advertise on` gives it back, and the peer learns the address again.
# Two hosts joined by two links (topo.sh twolink); A sets its eth2.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ln

# eth2_bytes NS: bytes received plus sent on NS's eth2
eth2_bytes() {
	local r2 t2
	read -r _ _ r2 t2 <<<"$(link_bytes "$1")"
	echo $((r2 + t2))
}

# advertised NS: NS's eth2 setting as show links prints it (true/false)
advertised() {
	mpipctl_in "$1" -j show links |
		jq -er '.[] | select(.dev == "eth2") | .advertise'
}

# b_knows ADDR: B's node for A lists ADDR among A's addresses
b_knows() {
	mpipctl_in "$B" -j show nodes |
		jq -e --arg a "$1" 'any(.[]; any(.addrs[]; . == $a))' >/dev/null
}

# b_forgot ADDR: B's node for A does not list ADDR
b_forgot() { ! b_knows "$1"; }

# paths_use NS ADDR: a path of NS has ADDR at one end
paths_use() {
	mpip_paths "$1" |
		jq -e --arg a "$2" 'any(.[]; .saddr == $a or .daddr == $a)' >/dev/null
}

# no_path_uses NS ADDR: no path of NS has ADDR at either end
no_path_uses() { ! paths_use "$1" "$2"; }

t_setup() {
	random_file "$T/f" 2
}

t_show() {
	mpipctl_in "$A" -j show links | tee "$T/links"
	jq -e 'map(.dev) | index("eth1") != null and index("eth2") != null and
		index("lo") == null' "$T/links" >/dev/null ||
		fail "show links does not list eth1 and eth2 (and only them)"
	jq -e 'all(.[]; .advertise == true and .ifindex > 0)' "$T/links" \
		>/dev/null || fail "an interface is not advertised by default"
	if mpipctl_in "$A" link set dev nosuch0 advertise off 2>"$T/err"; then
		fail "link set of a missing interface succeeded"
	fi
	grep -q "no interface 'nosuch0'" "$T/err" ||
		fail "no clear error for a missing interface: $(cat "$T/err")"
}

# Off before any traffic: B never learns 10.1.2.1, no path uses it, and
# a transfer leaves A's eth2 idle.
t_off() {
	local b0 b1
	mpipctl_in "$A" link set dev eth2 advertise off
	[[ $(advertised "$A") == false ]] || fail "show links still says advertise on"
	b0=$(eth2_bytes "$A")
	tcp_send_file "$A" "$B" 10.1.1.2 5001 "$T/f" "$T/g1"
	sha256_equal "$T/f" "$T/g1" || fail "TCP data differs"
	udp_exchange "$B" "$A" 10.1.1.1 6001 100 7001
	b1=$(eth2_bytes "$A")
	echo "A's eth2 carried $((b1 - b0)) bytes of a 2 MB transfer"
	b_knows 10.1.1.1 || fail "B does not know A's address on eth1"
	! b_knows 10.1.2.1 || fail "B learned the address of A's eth2"
	! paths_use "$A" 10.1.2.1 || fail "A has a path from 10.1.2.1"
	! paths_use "$B" 10.1.2.1 || fail "B has a path to 10.1.2.1"
	# ARP and a neighbour probe at most
	((b1 - b0 < 20000)) || fail "A's eth2 carried $((b1 - b0)) bytes"
}

# On again: B learns the address, both ends get paths over eth2, and the
# next transfer uses it.
t_on() {
	local b0 b1 min
	mpipctl_in "$A" link set dev eth2 advertise on
	[[ $(advertised "$A") == true ]] || fail "show links still says advertise off"
	tcp_send_file "$A" "$B" 10.1.1.2 5002 "$T/f" "$T/g2"
	wait_for 20 b_knows 10.1.2.1 || fail "B did not learn 10.1.2.1 again"
	mpip_wait_paths_up "$A" 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.2.2:10.1.2.1
	b0=$(eth2_bytes "$A")
	tcp_send_file "$A" "$B" 10.1.1.2 5003 "$T/f" "$T/g3"
	sha256_equal "$T/f" "$T/g3" || fail "TCP data differs"
	b1=$(eth2_bytes "$A")
	# a tenth of the file (the debug kernel's tests send an eighth of it)
	min=$(($(file_size "$T/f") / 10))
	echo "A's eth2 carried $((b1 - b0)) bytes of a $(file_size "$T/f")-byte transfer"
	((b1 - b0 > min)) || fail "eth2 carried only $((b1 - b0)) bytes, not more than $min"
}

# Off while a stream runs over both links: the stream stays intact, B
# forgets the address and the paths over eth2 go.
t_off_under_load() {
	tcp_stream_bg "$A" "$B" 10.1.1.2 5004 "$T/f" "$T/s"
	wait_for 30 file_grew "$T/s" 0 3000000 || fail "the stream does not flow"
	mpipctl_in "$A" link set dev eth2 advertise off
	wait_for 20 b_forgot 10.1.2.1 || fail "B still lists 10.1.2.1"
	wait_for 10 no_path_uses "$A" 10.1.2.1 ||
		fail "A kept its paths from 10.1.2.1"
	wait_for 10 no_path_uses "$B" 10.1.2.1 ||
		fail "B kept its paths to 10.1.2.1"
	tcp_stream_end "$T/f" "$T/s" 60
}

# An interface's settings go with it: a new interface that gets the index
# of a removed one starts with the defaults.
t_forgotten() {
	local idx
	ip -n "$A" link add d0 type dummy
	idx=$(ip -n "$A" -j link show d0 | jq -r '.[0].ifindex')
	mpipctl_in "$A" link set dev d0 advertise off
	ip -n "$A" link del d0
	ip -n "$A" link add d1 index "$idx" type dummy
	mpipctl_in "$A" -j show links |
		jq -e '.[] | select(.dev == "d1") | .advertise == true' >/dev/null ||
		fail "d1 inherited the setting of d0 (index $idx)"
	ip -n "$A" link del d1
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 7
	ktap_run setup t_setup
	ktap_run show_links_lists_interfaces t_show
	ktap_run advertise_off_keeps_link_out t_off
	ktap_run advertise_on_gives_it_back t_on
	ktap_run advertise_off_under_load t_off_under_load
	ktap_run settings_go_with_the_interface t_forgotten
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
