#!/usr/bin/env bash
# test_scapy.sh - the scapy layer (tests/scapy/mpip_cm.py) decodes MPIP
# packets captured on the wire into the expected fields, and a crafted
# query sent with scapy from a host with MPIP switched off is answered.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink sc
command -v tcpdump >/dev/null || ktap_skip_all "missing tcpdump"
/usr/bin/python3 -c 'import scapy' 2>/dev/null || ktap_skip_all "missing python3-scapy"
decode() { /usr/bin/python3 "$REPO/tests/scapy/decode_pcap.py" "$@"; }

t_capture() {
	ip netns exec "$B" tcpdump -U -n -i eth1 -w "$T/cap.pcap" -s 0 'ip' \
		</dev/null >/dev/null 2>"$T/tcpdump.err" &
	echo $! >"$T/tcpdump.pid"
	# tcpdump says "listening on" once its capture socket is open
	wait_for 30 grep -q 'listening on' "$T/tcpdump.err" || {
		cat "$T/tcpdump.err"
		fail "tcpdump did not start"
	}
	udp_exchange "$A" "$B" 10.1.1.2 6100 10 7100
	head -c 1000000 /dev/urandom >"$T/f"
	tcp_send_file "$A" "$B" 10.1.1.2 5100 "$T/f" "$T/g"
	sleep 1
	kill "$(cat "$T/tcpdump.pid")"
	wait "$(cat "$T/tcpdump.pid")" || true
	decode --json "$T/cap.pcap" >"$T/cms.json"
	wc -l <"$T/cms.json"
}

t_udp_query_fields() {
	local ida
	ida=$(mpip_node_id "$A")
	[[ $ida =~ ^0x[0-9a-f]{8}$ ]] || fail "bad node id '$ida'"
	# (no `| head`: jq could die of SIGPIPE, failing the subtest)
	jq -sc '[.[] | select(.proto == "udp" and .src == "10.1.1.1")][:2][]' "$T/cms.json"
	jq -es --argjson id "$((ida))" '
		[.[] | select(.proto == "udp" and .src == "10.1.1.1" and .sport == 7100
		  and .dport == 6100 and (.trailer.flags | index("ENABLE"))
		  and .trailer.node_id == $id and .trailer.length == 28 + 4 * .trailer.naddrs
		  and (.trailer.addrs | index("10.1.1.1") and index("10.1.2.1"))
		  and .l4_csum_ok == true)] | length >= 1' "$T/cms.json"
}

t_udp_confirm_fields() {
	local idb
	idb=$(mpip_node_id "$B")
	[[ $idb =~ ^0x[0-9a-f]{8}$ ]] || fail "bad node id '$idb'"
	jq -es --argjson id "$((idb))" '
		[.[] | select(.proto == "udp" and .src == "10.1.1.2" and .sport == 6100
		  and .dport == 7100 and .trailer.flags == ["ENABLED", "CTRL"]
		  and .trailer.node_id == $id and .l4_csum_ok == false)] | length >= 1' "$T/cms.json"
}

t_tcp_ctrl_fields() {
	jq -sc '[.[] | select(.proto == "tcp" and (.trailer.flags | index("CTRL")))][:3][]' "$T/cms.json"
	jq -es '[.[] | select(.proto == "tcp" and .src == "10.1.1.1" and .dport == 5100
		  and .trailer.flags == ["ENABLE", "CTRL"])] | length >= 1' "$T/cms.json"
}

# TCP data trailers, both ways: segments (checksum valid without the
# trailer) and, from the sender of the file, GSO packets kept whole
# (protocol 253, checksum pending)
t_tcp_data_fields() {
	jq -es '[.[] | select(.proto == "tcp" and (.dport == 5100 or .sport == 5100))
		  | select((.trailer.flags - ["ORIG", "NEW"]) == []
		  and .trailer.session_id > 0 and .trailer.length == 28
		  and .l4_csum_ok == true)] | length >= 10' "$T/cms.json"
}

t_tcp_gso_fields() {
	jq -sc '[.[] | select(.proto == "tcp-gso")][:2][]' "$T/cms.json"
	jq -es '[.[] | select(.proto == "tcp-gso" and .src == "10.1.1.1"
		  and .dport == 5100 and .ip_len > 1500
		  and (.trailer.flags - ["ORIG", "NEW"]) == []
		  and .trailer.session_id > 0 and .trailer.length == 28
		  and .l4_csum_ok == null)] | length >= 1' "$T/cms.json"
}

t_crafted_query() {
	mpipctl_in "$A" disable
	in_ns "$A" /usr/bin/python3 - "$REPO/tests/scapy" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import mpip_cm
from scapy.all import IP, UDP, Raw, send, conf
conf.verb = 0
t = mpip_cm.MPIPTrailer(node_id=0x11223344, flags=0x01, naddrs=1, addrs=["10.1.1.1"])
pkt = IP(src="10.1.1.1", dst="10.1.1.2") / UDP(sport=7200, dport=6200) / Raw(b"hello")
send(mpip_cm.add(pkt, t), iface="eth1")
PY
	mpipctl_in "$A" enable
	wait_for 5 mpip_avail_is "$B" 10.1.1.1 7200 yes ||
		fail "B did not learn the crafted query"
	mpipctl_in "$B" -j show nodes | jq -e '[.[] | select(.node_id == "0x11223344")] | length == 1'
}

ktap_header
ktap_plan 7
ktap_run capture_handshake t_capture
ktap_run decode_udp_query t_udp_query_fields
ktap_run decode_udp_confirmation t_udp_confirm_fields
ktap_run decode_tcp_query t_tcp_ctrl_fields
ktap_run decode_tcp_data_trailers t_tcp_data_fields
ktap_run decode_tcp_gso_kept t_tcp_gso_fields
ktap_run crafted_query_answered t_crafted_query
ktap_finish
