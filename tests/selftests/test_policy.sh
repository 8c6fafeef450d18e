#!/usr/bin/env bash
# test_policy.sh - mpip honours the host's routing and security policy.
# Two MPIP hosts on two links (A eth1/eth2 10.1.{1,2}.1, B .2), then:
#
# - A WireGuard full tunnel on A, as wg-quick sets it up: every packet
#   not marked by WireGuard itself goes to table 51820, whose default
#   route is wg0 (routes of the links themselves stay outside).  TCP and
#   UDP between A and B's service address (on neither link), and from B
#   to A's tunnel address, must travel inside the tunnel only: on A's two
#   underlay links no TCP segment and no datagram of the test's ports may
#   appear, although mpip has paths over both links to B's link
#   addresses (it counts the packets it kept on their own route:
#   tx_policy_kept).  No TCP carrier inside the tunnel ends where the
#   next segment of its flow starts: WireGuard checks no checksums, and
#   its GRO merged the two, the next segment's trailer became data.
# - IPsec (ESP, transport mode) between the link-1 addresses: no cleartext
#   TCP or test datagram on link 1, whatever path mpip would choose.
# - A VRF on A holding both links: TCP both ways intact (the VRF device
#   runs the hooks a second time; mpip must not add a second trailer).
# TIMEOUT: 360
# (about 58 s alone in one guest: about five times that, as a
# loaded run may take)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink po
command -v wg >/dev/null || fail_all=1

# leaks NAME...: the packets the captures NAME... saw, shown; fails if any
no_leaks() {
	local n total=0 name
	for name in "$@"; do
		n=$(capture_count "$name")
		echo "capture $name: $n packets"
		if ((n)); then
			tcpdump -nn -r "$T/$name.pcap" 2>/dev/null | head -n 5
		fi
		total=$((total + n))
	done
	((total == 0))
}

# carriers_apart PCAP: the TCP carriers in PCAP (taken where they were
# sent, whole packets) and how many of them end where the next segment of
# their flow in the same direction starts, which a receiver's GRO would
# merge with them; succeeds if there are carriers and none of them does
carriers_apart() {
	local res
	res=$(/usr/bin/python3 "$REPO/tests/scapy/decode_pcap.py" --all --json "$1" | jq -s -c '
		[.[] | select(.proto == "tcp" and .tcp_seq != null)]
		| group_by([.src, .sport, .dst, .dport])
		| [.[] | . as $f | range(0; length) | $f[.] as $p
		   | select($p.trailer != null and
			    ((($p.trailer.xflags / 8) | floor) % 2) == 1)
		   | {next: ($f[. + 1].tcp_seq // null), end: $p.tcp_end}]
		| {carriers: length, meeting_next: map(select(.next == .end)) | length}')
	echo "carriers on A's wg0: $res"
	jq -e '.carriers > 0 and .meeting_next == 0' <<<"$res" >/dev/null
}

# traffic TAG ADDR_AT_B ADDR_AT_A: TCP A -> B, TCP B -> A and UDP A -> B,
# all intact
traffic() {
	tcp_send_file "$A" "$B" "$2" "${1}01" "$T/f" "$T/g1"
	sha256_equal "$T/f" "$T/g1" || fail "A -> B: data differs"
	tcp_send_file "$B" "$A" "$3" "${1}02" "$T/f" "$T/g2"
	sha256_equal "$T/f" "$T/g2" || fail "B -> A: data differs"
	udp_exchange "$A" "$B" "$2" "${1}03" 300 "${1}04"
}

t_setup() {
	[[ -z ${fail_all:-} ]] || fail "wg (wireguard-tools) is not installed"
	modprobe wireguard
	modprobe vrf
	random_file "$T/f" 1
	mpip_twolink_warm_up
}

t_wireguard() {
	local ka kb pa pb policy_a policy_b t0 ns
	ka=$(wg genkey)
	kb=$(wg genkey)
	pa=$(wg pubkey <<<"$ka")
	pb=$(wg pubkey <<<"$kb")
	ip -n "$A" link add wg0 type wireguard
	ip -n "$B" link add wg0 type wireguard
	in_ns "$A" wg set wg0 private-key <(echo "$ka") listen-port 51820 fwmark 51820 \
		peer "$pb" endpoint 10.1.1.2:51820 allowed-ips 0.0.0.0/0
	in_ns "$B" wg set wg0 private-key <(echo "$kb") listen-port 51820 \
		peer "$pa" endpoint 10.1.1.1:51820 allowed-ips 10.8.0.1/32
	ip -n "$A" addr add 10.8.0.1/24 dev wg0
	ip -n "$B" addr add 10.8.0.2/24 dev wg0
	ip -n "$A" link set wg0 up
	ip -n "$B" link set wg0 up
	# B's service address, beyond its links (as a VPN server's network is)
	ip -n "$B" link add svc type dummy
	ip -n "$B" addr add 10.9.9.2/32 dev svc
	ip -n "$B" link set svc up
	in_ns "$B" wg set wg0 peer "$pa" allowed-ips 10.8.0.1/32
	# wg-quick's full tunnel
	ip -n "$A" route add default dev wg0 table 51820
	ip -n "$A" rule add not fwmark 51820 table 51820 pref 100
	ip -n "$A" rule add table main suppress_prefixlength 0 pref 99
	# (WireGuard's handshake retries every 5 s; its first ones can take
	# seconds on a loaded emulated machine)
	t0=$(date +%s%N)
	if ! wait_for 40 in_ns "$A" ping -c1 -W1 10.9.9.2; then
		for ns in "$A" "$B"; do
			in_ns "$ns" wg show wg0 || true
			mpipctl_in "$ns" -j stats | jq -c 'with_entries(select(.value != 0))' || true
		done
		fail "no ping through the tunnel"
	fi
	echo "first ping through the tunnel after $((($(date +%s%N) - t0) / 1000000)) ms"
	ip -n "$A" route get 10.9.9.2 | grep -q 'dev wg0' || fail "A's route to B is not the tunnel"

	# A's underlay: only WireGuard's datagrams and mpip's own control
	capture_start "$A" eth1 wg1 'tcp or (udp and not port 51820 and not port 19792)'
	capture_start "$A" eth2 wg2 'tcp or (udp and not port 51820 and not port 19792)'
	CAPTURE_SNAP=0 capture_start "$A" wg0 wgin tcp
	sleep 1
	policy_a=$(mpip_stat "$A" tx_policy_kept)
	policy_b=$(mpip_stat "$B" tx_policy_kept)
	traffic 61 10.9.9.2 10.8.0.1
	no_leaks wg1 wg2 || fail "cleartext TCP or UDP of the flows left A outside the tunnel"
	capture_stop wgin
	# (ending where the next segment starts, a carrier was merged with it
	# by GRO behind WireGuard, and TCP took that segment's trailer for data)
	carriers_apart "$T/wgin.pcap" || fail "a carrier ends where the next segment of its flow starts"
	mpip_paths_show "$A"
	echo "tx_policy_kept: A $policy_a -> $(mpip_stat "$A" tx_policy_kept), B $policy_b -> $(mpip_stat "$B" tx_policy_kept)"
	# the flows were mpip sessions with paths to choose from
	(($(mpip_stat "$A" tx_policy_kept) > policy_a)) ||
		fail "A never had to keep a packet in the tunnel: the test proves nothing"
	(($(mpip_stat "$B" tx_policy_kept) > policy_b)) ||
		fail "B never had to keep a packet in the tunnel: the test proves nothing"
}

t_wireguard_down() {
	ip -n "$A" rule del pref 100
	ip -n "$A" rule del pref 99
	ip -n "$A" link del wg0
	ip -n "$B" link del wg0
	ip -n "$B" link del svc
}

t_ipsec() {
	local ns src dst k1=0x0123456789abcdef0123456789abcdef01234567
	local k2=0x89abcdef0123456789abcdef0123456789abcdef
	for ns in "$A" "$B"; do
		in_ns "$ns" ip xfrm state add src 10.1.1.1 dst 10.1.1.2 proto esp \
			spi 0x100 mode transport aead 'rfc4106(gcm(aes))' "$k1" 128
		in_ns "$ns" ip xfrm state add src 10.1.1.2 dst 10.1.1.1 proto esp \
			spi 0x200 mode transport aead 'rfc4106(gcm(aes))' "$k2" 128
	done
	for ns in "$A" "$B"; do
		if [[ $ns == "$A" ]]; then src=10.1.1.1 dst=10.1.1.2; else src=10.1.1.2 dst=10.1.1.1; fi
		in_ns "$ns" ip xfrm policy add src "$src" dst "$dst" dir out \
			tmpl src "$src" dst "$dst" proto esp mode transport
		in_ns "$ns" ip xfrm policy add src "$dst" dst "$src" dir in \
			tmpl src "$dst" dst "$src" proto esp mode transport
	done
	# link 1 may carry only ESP (and ARP); link 2 carries what it likes
	capture_start "$A" eth1 esp1 'tcp or (udp and not port 19792)'
	sleep 1
	traffic 62 10.1.1.2 10.1.1.1
	# flows between the link-2 addresses may use link 1 only under ESP
	tcp_send_file "$A" "$B" 10.1.2.2 6205 "$T/f" "$T/g5"
	sha256_equal "$T/f" "$T/g5" || fail "A -> B link 2: data differs"
	no_leaks esp1 || fail "cleartext left A on the IPsec-protected link"
	# ESP did carry the flows between the link-1 addresses
	in_ns "$A" ip -s xfrm state | grep -A12 'spi 0x00000100' >"$T/esp.txt" || true
	cat "$T/esp.txt"
	grep -Eq '[1-9][0-9]*\(bytes\)' "$T/esp.txt" || fail "no bytes went through ESP on A"
	for ns in "$A" "$B"; do
		in_ns "$ns" ip xfrm policy flush
		in_ns "$ns" ip xfrm state flush
	done
}

# vrf_send NS_SRC NS_DST ADDR PORT SRC_OPT DST_OPT: copy $T/f with socat
# options (such as so-bindtodevice=red) on either end; intact
vrf_send() {
	local out=$T/vrf.$4 log=$T/vrf.$4.log lpid rc=0
	ip netns exec "$2" timeout 120 socat -u "TCP-LISTEN:$4,reuseaddr$6" \
		"OPEN:$out,creat,trunc" </dev/null >"$log" 2>&1 &
	lpid=$!
	wait_for 30 tcp_listening "$2" "$4" || { kill "$lpid"; fail "nothing listens on $2:$4"; }
	in_ns "$1" timeout 110 socat -u "OPEN:$T/f" "TCP:$3:$4$5" || {
		kill "$lpid"
		cat "$log"
		fail "TCP sender $1 -> $3:$4 failed"
	}
	wait "$lpid" || rc=$?
	((rc == 0)) || { cat "$log"; fail "receiver exited $rc"; }
	sha256_equal "$T/f" "$out" || fail "$1 -> $3:$4: data differs"
}

t_vrf() {
	ip -n "$A" link add red type vrf table 10
	ip -n "$A" link set red up
	ip -n "$A" link set eth1 master red
	ip -n "$A" link set eth2 master red
	wait_for 15 in_ns "$A" ping -c1 -W1 -I red 10.1.1.2 || fail "no ping in the VRF"
	vrf_send "$A" "$B" 10.1.1.2 6301 ",so-bindtodevice=red" ""
	vrf_send "$B" "$A" 10.1.2.1 6302 "" ",so-bindtodevice=red"
	vrf_send "$A" "$B" 10.1.2.2 6303 ",so-bindtodevice=red" ""
	echo "A: tx_cm $(mpip_stat "$A" tx_cm), rx_cm $(mpip_stat "$A" rx_cm)"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 6
	ktap_run setup t_setup
	ktap_run wireguard_full_tunnel_no_cleartext t_wireguard
	ktap_run wireguard_removed t_wireguard_down
	ktap_run ipsec_transport_no_cleartext t_ipsec
	ktap_run vrf_tcp_intact t_vrf
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
