#!/usr/bin/env bash
# test_ynl.sh - the YAML netlink spec (Documentation/netlink/specs/mpip.yaml)
# against the module, through the kernel's own ynl CLI (tools/net/ynl/cli.py
# of linux-source-6.12, which tools/deps.sh unpacks in build/ynl): what ynl
# reads is what `mpipctl -j` prints, what ynl sets mpipctl sees and the
# other way round, and ynl's out-of-range value is refused as mpipctl's is
# (issue 23).  A spec whose attribute types, byte orders, enums or nesting
# differ from what the module sends fails here.  Two hosts joined by two
# links (topo.sh twolink) with both paths up.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

YNL=$REPO/build/ynl/tools/net/ynl/cli.py
SPEC=$REPO/Documentation/netlink/specs/mpip.yaml

[[ -f $YNL ]] || ktap_fail_all "no $YNL (tools/deps.sh unpacks it)"
mpip_setup_twolink yn

# ynl NS ARGS...: ynl's CLI in NS with mpip's spec, JSON output
ynl() {
	local ns=$1
	shift
	in_ns "$ns" /usr/bin/python3 "$YNL" --spec "$SPEC" --no-schema \
		--output-json "$@"
}

# by_name NAME CMD JQ: ynl's --do get-NAME and `mpipctl -j CMD` in A;
# JQ must hold with $y the reply's nest NAME under mpipctl's names (ynl's
# "query-threshold" is mpipctl's "query_threshold") and $c mpipctl's
# object
by_name() {
	local name=$1 cmd=$2
	ynl "$A" --do "get-$name" >"$T/$name.ynl"
	mpipctl_in "$A" -j "$cmd" >"$T/$name.ctl"
	# shellcheck disable=SC2016 # jq's variables
	jq -ne --slurpfile y "$T/$name.ynl" --slurpfile c "$T/$name.ctl" --arg n "$name" '
		($y[0][$n] | with_entries(.key |= gsub("-"; "_"))) as $y |
		$c[0] as $c | '"$3" >/dev/null ||
		fail "get-$name through ynl differs: $(cat "$T/$name.ynl") vs $(cat "$T/$name.ctl")"
}

t_setup() {
	mpip_twolink_warm_up
}

# status: the same switch, node ID, version, table sizes and chains
t_status() {
	ynl "$A" --do get-status >"$T/st.ynl"
	mpipctl_in "$A" -j status >"$T/st.ctl"
	cat "$T/st.ynl" "$T/st.ctl"
	jq -ne --slurpfile y "$T/st.ynl" --slurpfile c "$T/st.ctl" '
		$y[0] as $y | $c[0] as $c |
		($c.node_id | ltrimstr("0x") | ascii_downcase | explode |
		 map(if . >= 97 then . - 87 else . - 48 end) |
		 reduce .[] as $d (0; . * 16 + $d)) as $cid |
		($y.enabled == 1) == $c.enabled and $y["node-id"] == $cid and
		$y.version == $c.version and
		$y["node-count"] == $c.nodes and $y["path-count"] == $c.paths and
		$y["avail-chain"] == $c.avail_chain and
		$y["node-chain"] == $c.nodes_chain' \
		>/dev/null || fail "get-status through ynl differs from mpipctl -j status"
}

# config: every tunable, by name (ynl's "query-threshold" is mpipctl's
# "query_threshold"), with the same value, and no tunable only on one side
t_config() {
	# shellcheck disable=SC2016 # jq's variables
	by_name config get '($y | length) > 10 and $y == $c'
}

# set-config both ways, and a value out of range refused by ynl's request
# as by mpipctl's, the tunable unchanged
t_set_config() {
	ynl "$A" --do set-config --json '{"config": {"query-threshold": 7}}'
	[[ $(mpipctl_in "$A" -j get | jq .query_threshold) == 7 ]] ||
		fail "mpipctl does not see ynl's query-threshold 7"
	mpipctl_in "$A" set query_threshold 9
	[[ $(ynl "$A" --do get-config | jq '.config["query-threshold"]') == 9 ]] ||
		fail "ynl does not see mpipctl's query_threshold 9"
	if ynl "$A" --do set-config --json '{"config": {"query-threshold": 0}}'; then
		fail "ynl's query-threshold 0 accepted (range 1..100)"
	fi
	[[ $(mpipctl_in "$A" -j get | jq .query_threshold) == 9 ]] ||
		fail "a refused request changed query_threshold"
	mpipctl_in "$A" set query_threshold 5
}

# paths: the same paths (ends, interface, state) in ynl's dump and in
# mpipctl's table; both of A's paths up in both
t_paths() {
	ynl "$A" --dump get-paths >"$T/p.ynl"
	mpip_paths "$A" >"$T/p.ctl"
	cat "$T/p.ynl"
	jq -ne --slurpfile y "$T/p.ynl" --slurpfile c "$T/p.ctl" '
		[$y[0][].path | {saddr, daddr, state}] | sort as $y |
		[$c[0][] | {saddr, daddr, state}] | sort as $c |
		$y == $c and ([$y[] | select(.state == "up")] | length) == 2' \
		>/dev/null || fail "get-paths through ynl differs from mpipctl -j show paths: $(cat "$T/p.ctl")"
}

# stats: the same counters; read by ynl first, each is at most what
# mpipctl reads after it (counters only grow), and traffic was counted
t_stats() {
	# shellcheck disable=SC2016 # jq's variables
	by_name stats stats '($y | keys) == ($c | keys) and
		all($y | to_entries[]; .value <= $c[.key]) and
		$y.tx_rewrite > 0'
}

# set-link through ynl: mpipctl shows eth2 not advertised, and back
t_set_link() {
	local idx
	idx=$(in_ns "$A" cat /sys/class/net/eth2/ifindex)
	ynl "$A" --do set-link --json "{\"link\": {\"ifindex\": $idx, \"advertise\": 0}}"
	mpipctl_in "$A" -j show links |
		jq -e '.[] | select(.dev == "eth2") | .advertise == false' >/dev/null ||
		fail "mpipctl does not see ynl's advertise 0 on eth2"
	mpipctl_in "$A" link set dev eth2 advertise on
	ynl "$A" --dump get-links |
		jq -e --argjson i "$idx" '.[].link | select(.ifindex == $i) |
			.name == "eth2" and .advertise == 1' >/dev/null ||
		fail "ynl does not see mpipctl's advertise on for eth2"
}

ktap_header
ktap_plan 8
ktap_run setup t_setup
ktap_run status_ynl_as_mpipctl t_status
ktap_run config_ynl_as_mpipctl t_config
ktap_run set_config_both_ways t_set_config
ktap_run paths_ynl_as_mpipctl t_paths
ktap_run stats_ynl_as_mpipctl t_stats
ktap_run set_link_both_ways t_set_link
ktap_run dmesg_clean check_dmesg_clean "$MARK"
ktap_finish
