#!/usr/bin/env bash
# test_rules.sh - routing rules (issue 22, first part): `mpipctl rule add`
# with modes selected, original and off, fallback drop, deletion and
# flush, and bad rules refused with a clear message and nothing
# installed.  Two hosts joined by two links (topo.sh twolink); the rules
# are A's, so A's transmit counters per link say where its data went.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ru

# tx2 NS: bytes NS sent on eth2
tx2() {
	local r1 t1 r2 t2
	read -r r1 t1 r2 t2 <<<"$(link_bytes "$1")"
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
	refused "dev and nodev go with mode selected" add mode selected
	refused "dev and nodev go with mode selected" add mode all dev eth1
	refused "not built yet" add mode single
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
	((e > 4194304 / 5)) || fail "without a rule, eth2 carried only $e bytes"
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
# packets are dropped rather than sent on eth1
t_drop() {
	mpipctl_in "$A" rule add pref 130 proto tcp dport 5103 mode selected \
		dev eth2 fallback drop
	# eth2 comes back however this subtest ends (it runs in a subshell)
	trap '"$TOPO" up "$A" eth2' EXIT
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
	"$TOPO" up "$A" eth2
	wait_for 20 mpip_path_is "$A" 10.1.2.1 10.1.2.2 up ||
		fail "A: path over eth2 not back up"
}

t_del_flush() {
	local e
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpipctl_in "$A" rule del pref 100
	mpipctl_in "$A" -j show rules | jq -e 'map(.pref) == [110, 120, 130]' \
		>/dev/null || fail "rule 100 still listed, or others gone"
	e=$(send_eth2 5104)
	echo "rule 100 deleted, port 5104: $e bytes on eth2"
	mpipctl_in "$A" rule flush
	mpipctl_in "$A" -j show rules | jq -e 'length == 0' >/dev/null ||
		fail "rules left after a flush"
	e=$(send_eth2 5100)
	echo "after the flush, port 5100: $e bytes on eth2"
	((e > 4194304 / 5)) || fail "after the flush, eth2 carried only $e bytes"
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 8
	ktap_run setup t_setup
	ktap_run bad_rules_refused t_bad_rules
	ktap_run selected_keeps_flow_on_its_links t_selected
	ktap_run original_keeps_flow_on_its_path t_original
	ktap_run off_leaves_flow_alone t_off
	ktap_run fallback_drop_drops t_drop
	ktap_run del_and_flush t_del_flush
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
