#!/usr/bin/env bash
# tools/topo.sh - build the lab topologies (network namespaces + veth + netem).
# Run as root, normally inside the VM (tools/vm.sh).  Prints nothing on success.
#
#   topo.sh twolink [--link1 SPEC] [--link2 SPEC] [--prefix P] [--ipv6]
#       ${P}a and ${P}b joined by two disjoint veth links:
#         link 1: ${P}a eth1 10.1.1.1/24 <-> ${P}b eth1 10.1.1.2/24
#         link 2: ${P}a eth2 10.1.2.1/24 <-> ${P}b eth2 10.1.2.2/24
#
#   topo.sh router [--link1 SPEC] [--link2 SPEC] [--prefix P] [--ipv6]
#                  [--no-policy]
#       ${P}a - ${P}r - ${P}b, every host link is its own /24:
#         ${P}a eth1 10.2.1.1/24 <-> ${P}r a1 10.2.1.254/24   (link 1)
#         ${P}a eth2 10.2.2.1/24 <-> ${P}r a2 10.2.2.254/24   (link 2)
#         ${P}b eth1 10.3.1.2/24 <-> ${P}r b1 10.3.1.254/24   (link 1)
#         ${P}b eth2 10.3.2.2/24 <-> ${P}r b2 10.3.2.254/24   (link 2)
#       The router forwards.  Hosts use source policy routing: table 101
#       (eth1) and 102 (eth2), `ip rule from <addr> table N`, and a main
#       default route via eth1, so all 4 (src,dst) pairs work and each packet
#       leaves by the interface owning its source address.
#       --no-policy: no rules and no tables 101/102; instead each host has
#       one default route per interface (eth1 metric 100, eth2 metric 200),
#       as a laptop with two uplinks would.  Without mpip, traffic then
#       leaves through eth1 whatever its source address.
#
#   topo.sh nat [--link1 SPEC] [--link2 SPEC] [--prefix P] [--double]
#               [--udp-blocked] [--short-timeouts] [--wan-mtu N] [--random]
#               [--b-no-rate]
#       ${P}a behind two masquerading NAT routers, ${P}b public:
#         ${P}a eth1 192.168.1.2/24 <-> ${P}n1 lan 192.168.1.1/24
#           ${P}n1 wan 198.18.1.1/24 <-> ${P}r w1 198.18.1.254/24
#         ${P}a eth2 192.168.2.2/24 <-> ${P}n2 lan 192.168.2.1/24
#           ${P}n2 wan 198.18.2.1/24 <-> ${P}r w2 198.18.2.254/24
#         ${P}b eth1 198.18.3.2/24 <-> ${P}r b1 198.18.3.254/24
#         ${P}b eth2 198.18.4.2/24 <-> ${P}r b2 198.18.4.254/24
#       Hosts route by source address as in the router topology.  Each NAT
#       is strict: conntrack verifies checksums (nf_conntrack_checksum=1)
#       and tracks TCP windows (tcp_loose=0, be_liberal=0), forwards only
#       established/related traffic inwards and drops INVALID packets
#       (nft counter "ct_invalid" in table inet natlab) and new TCP that is
#       not a SYN ("newtcp_nonsyn").  ${P}r, the internet, has no route to
#       private addresses and drops (counter "leak" in table inet natlab)
#       any packet with a private source (10/8, 172.16/12, 192.168/16,
#       100.64/10).  Shaping: --link1 on A eth1, n1 lan and wan, r w1 and
#       B eth1; --link2 likewise.
#       --double: link 2 crosses a second NAT, ${P}c (CGNAT): n2 wan
#       100.64.2.1/24 <-> c lan 100.64.2.254/24, c wan 198.18.2.1/24.
#       --udp-blocked: n2 forwards no UDP (but DNS).  --short-timeouts:
#       UDP mappings expire after 10 s on both NATs (udp_timeout 5,
#       udp_timeout_stream 10).  --wan-mtu N: the NATs' wan links have
#       MTU N.  --random: masquerade with random source ports.
#       --b-no-rate: B's eth1 and eth2 keep their links' delay and loss
#       but no rate: A's two links are the only bottlenecks also for
#       what B sends (a server on a fast line), as they are for what A
#       sends (r's b1 and b2 are never shaped); else B's two links and
#       r's w1 and w2 are two stages of bottlenecks on B's four paths.
#
#   topo.sh down|up NS DEV          set a link down/up
#   topo.sh netem NS DEV SPEC       change shaping of NS/DEV's egress live
#   topo.sh clean [--prefix P]      delete ${P}a ${P}b ${P}r (kills their processes)
#
# SPEC is RATE,DELAY,LOSS, e.g. 40mbit,1ms,0% ; an empty or "-" field means
# none (e.g. ",20ms," or "-,20ms,-"); "" or "-" alone removes all shaping.
# --link1/--link2 apply netem to both ends' egress of that link (in the
# router topology: to both the a-side and the b-side link).  Default prefix:
# mp.  IPv6 is disabled in the namespaces (no ND/MLD chatter in counters)
# unless --ipv6 is given.
set -euo pipefail

die() {
	printf 'topo.sh: %s\n' "$*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# Quiet command runner: show output only if the command fails.
run() {
	local out
	if ! out=$("$@" 2>&1); then
		printf 'topo.sh: failed: %s\n%s\n' "$*" "$out" >&2
		return 1
	fi
}

# Batch runner: CMD... < lines (errors shown with the batch).
run_batch() {
	local out input
	input=$(cat)
	[[ -n $input ]] || return 0
	if ! out=$("$@" <<<"$input" 2>&1); then
		printf 'topo.sh: failed: %s <<EOF\n%s\nEOF\n%s\n' "$*" "$input" "$out" >&2
		return 1
	fi
}

ns_exists() {
	[[ -e /run/netns/$1 ]]
}

# ns_del NS...: kill the processes of and delete the existing namespaces.
# Everything is batched: under TCG every exec costs ~0.2 s.
ns_del() {
	local ns existing=() pids
	for ns in "$@"; do
		ns_exists "$ns" && existing+=("$ns")
	done
	((${#existing[@]})) || return 0
	pids=$(printf 'netns pids %s\n' "${existing[@]}" | ip -force -batch - 2>/dev/null || true)
	if [[ -n ${pids//[[:space:]]/} ]]; then
		# shellcheck disable=SC2086
		kill $pids 2>/dev/null || true
		sleep 0.2
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null || true
	fi
	printf 'netns del %s\n' "${existing[@]}" | ip -force -batch - >/dev/null 2>&1 || true
}

field_set() { [[ -n $1 && $1 != - ]]; }

# netem_args SPEC: print the netem arguments for SPEC (nothing = no shaping)
netem_args() {
	local spec=${1:-} rate delay loss args=()
	field_set "$spec" || return 0
	IFS=, read -r rate delay loss _ <<<"$spec"
	if field_set "${delay:-}"; then
		[[ $delay =~ ^[0-9.]+(s|ms|us)?$ ]] || die "bad delay '$delay' in '$spec'"
		args+=(delay "$delay")
	fi
	if field_set "${rate:-}"; then
		[[ $rate =~ ^[0-9.]+([kKmMgG]?(bit|bps))?$ ]] || die "bad rate '$rate' in '$spec'"
		args+=(rate "$rate")
	fi
	if field_set "${loss:-}"; then
		[[ $loss =~ ^[0-9.]+%?$ ]] || die "bad loss '$loss' in '$spec'"
		args+=(loss "$loss")
	fi
	echo "${args[*]}"
}

# no_rate KEEP SPEC: SPEC, or (KEEP 0) SPEC without its rate
no_rate() {
	if (($1)) || [[ -z $2 || $2 == - ]]; then
		printf '%s\n' "$2"
	elif [[ $2 != *,* ]]; then
		printf -- '-\n'
	else
		printf -- '-,%s\n' "${2#*,}"
	fi
}

# shape NS DEV SPEC: apply SPEC live (one tc call)
shape() {
	local ns=$1 dev=$2 args out
	args=$(netem_args "${3:-}")
	if [[ -z $args ]]; then
		# (no qdisc to delete is fine, a missing device is not)
		if ! out=$(tc -n "$ns" qdisc del dev "$dev" root 2>&1) &&
			[[ $out == *"Cannot find device"* || $out == *"annot open network namespace"* ]]; then
			die "$out"
		fi
	else
		# shellcheck disable=SC2086
		run tc -n "$ns" qdisc replace dev "$dev" root netem $args
	fi
}

# ---- topology builder: collect commands, then run them in few batches
declare -A B_IP=() B_TC=() B_SYSCTL=()
B_ROOT=
B_NS=()

b_ns() { # NS
	B_NS+=("$1")
	B_ROOT+="netns add $1"$'\n'
	B_IP[$1]="link set lo up"$'\n'
	B_TC[$1]=
	B_SYSCTL[$1]="net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0"
	B_SYSCTL[$1]+=" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2"
	if [[ $ipv6 == 0 ]]; then
		B_SYSCTL[$1]+=" net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1"
	fi
}

b_veth() { # NS1 DEV1 NS2 DEV2
	B_ROOT+="link add $2 netns $1 type veth peer name $4 netns $3"$'\n'
	B_SYSCTL[$1]+=" net.ipv4.conf.$2.rp_filter=0"
	B_SYSCTL[$3]+=" net.ipv4.conf.$4.rp_filter=0"
}

b_addr() { # NS DEV CIDR
	B_IP[$1]+="addr add $3 dev $2"$'\n'"link set $2 up"$'\n'
}

b_shape() { # NS DEV SPEC
	local args
	args=$(netem_args "${3:-}")
	[[ -z $args ]] || B_TC[$1]+="qdisc replace dev $2 root netem $args"$'\n'
}

b_flush() {
	local ns
	run_batch ip -batch - <<<"$B_ROOT"
	for ns in "${B_NS[@]}"; do
		# shellcheck disable=SC2086
		run ip netns exec "$ns" sysctl -qw ${B_SYSCTL[$ns]}
		run_batch ip -n "$ns" -batch - <<<"${B_IP[$ns]}"
		run_batch tc -n "$ns" -batch - <<<"${B_TC[$ns]}"
	done
}

parse_common() {
	prefix=mp
	link1=
	link2=
	ipv6=0
	policy=1
	while (($#)); do
		case $1 in
		--link1) link1=${2?--link1 needs a value}; shift 2 ;;
		--link1=*) link1=${1#*=}; shift ;;
		--link2) link2=${2?--link2 needs a value}; shift 2 ;;
		--link2=*) link2=${1#*=}; shift ;;
		--prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
		--prefix=*) prefix=${1#*=}; shift ;;
		--ipv6) ipv6=1; shift ;;
		--no-policy) policy=0; shift ;;
		-h | --help) usage ;;
		*) die "unknown argument '$1'" ;;
		esac
	done
	[[ $prefix =~ ^[A-Za-z0-9_.-]{1,12}$ ]] || die "bad prefix '$prefix'"
	# validate early, before anything is torn down
	netem_args "$link1" >/dev/null
	netem_args "$link2" >/dev/null
}

clean_prefix() {
	ns_del "${1}a" "${1}b" "${1}r" "${1}n1" "${1}n2" "${1}c"
}

cmd_twolink() {
	parse_common "$@"
	local A=${prefix}a B=${prefix}b
	clean_prefix "$prefix"
	b_ns "$A"
	b_ns "$B"
	b_veth "$A" eth1 "$B" eth1
	b_veth "$A" eth2 "$B" eth2
	b_addr "$A" eth1 10.1.1.1/24
	b_addr "$B" eth1 10.1.1.2/24
	b_addr "$A" eth2 10.1.2.1/24
	b_addr "$B" eth2 10.1.2.2/24
	b_shape "$A" eth1 "$link1"
	b_shape "$B" eth1 "$link1"
	b_shape "$A" eth2 "$link2"
	b_shape "$B" eth2 "$link2"
	b_flush
}

# b_host_policy NS ADDR1 GW1 NET1 ADDR2 GW2 NET2
b_host_policy() {
	if ((!policy)); then
		B_IP[$1]+="route replace default via $3 dev eth1 metric 100
route append default via $6 dev eth2 metric 200
"
		return
	fi
	B_IP[$1]+="route replace $4 dev eth1 src $2 table 101
route replace default via $3 dev eth1 src $2 table 101
route replace $7 dev eth2 src $5 table 102
route replace default via $6 dev eth2 src $5 table 102
rule add from $2 table 101 priority 1001
rule add from $5 table 102 priority 1002
route replace default via $3 dev eth1
"
}

cmd_router() {
	parse_common "$@"
	local A=${prefix}a B=${prefix}b R=${prefix}r
	clean_prefix "$prefix"
	b_ns "$A"
	b_ns "$B"
	b_ns "$R"
	B_SYSCTL[$R]+=" net.ipv4.ip_forward=1"
	b_veth "$A" eth1 "$R" a1
	b_veth "$A" eth2 "$R" a2
	b_veth "$B" eth1 "$R" b1
	b_veth "$B" eth2 "$R" b2
	b_addr "$A" eth1 10.2.1.1/24
	b_addr "$A" eth2 10.2.2.1/24
	b_addr "$B" eth1 10.3.1.2/24
	b_addr "$B" eth2 10.3.2.2/24
	b_addr "$R" a1 10.2.1.254/24
	b_addr "$R" a2 10.2.2.254/24
	b_addr "$R" b1 10.3.1.254/24
	b_addr "$R" b2 10.3.2.254/24
	b_host_policy "$A" 10.2.1.1 10.2.1.254 10.2.1.0/24 10.2.2.1 10.2.2.254 10.2.2.0/24
	b_host_policy "$B" 10.3.1.2 10.3.1.254 10.3.1.0/24 10.3.2.2 10.3.2.254 10.3.2.0/24
	b_shape "$A" eth1 "$link1"
	b_shape "$R" a1 "$link1"
	b_shape "$B" eth1 "$link1"
	b_shape "$R" b1 "$link1"
	b_shape "$A" eth2 "$link2"
	b_shape "$R" a2 "$link2"
	b_shape "$B" eth2 "$link2"
	b_shape "$R" b2 "$link2"
	b_flush
}

# nat_rules NS LAN WAN: the strict NAT's ruleset and conntrack settings
# (the ruleset first: it loads conntrack, whose sysctls exist only then)
nat_rules() {
	local udp_drop='' masq=masquerade
	[[ ${nat_udp_blocked:-0} == 1 && $1 == "${prefix}n2" ]] &&
		udp_drop='meta l4proto udp udp dport != 53 counter name "udp_blocked" drop'
	((nat_random)) && masq="masquerade random"
	run_batch ip netns exec "$1" nft -f - <<-EOF
		table inet natlab {
			counter ct_invalid { }
			counter newtcp_nonsyn { }
			counter udp_blocked { }
			chain filt {
				type filter hook forward priority filter; policy drop;
				ct state invalid counter name "ct_invalid" drop
				$udp_drop
				ct state established,related accept
				iifname "$2" tcp flags & (syn | ack | fin | rst) != syn ct state new counter name "newtcp_nonsyn" drop
				iifname "$2" ct state new accept
			}
			chain postnat {
				type nat hook postrouting priority srcnat; policy accept;
				oifname "$3" $masq
			}
		}
	EOF
	run ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1 \
		net.netfilter.nf_conntrack_checksum=1 \
		net.netfilter.nf_conntrack_tcp_loose=0 \
		net.netfilter.nf_conntrack_tcp_be_liberal=0
	if ((nat_short)); then
		run ip netns exec "$1" sysctl -qw \
			net.netfilter.nf_conntrack_udp_timeout=5 \
			net.netfilter.nf_conntrack_udp_timeout_stream=10
	fi
}

cmd_nat() {
	local A B R N1 N2 C args=() double=0 b_rate=1 mtu=
	nat_udp_blocked=0 nat_short=0 nat_random=0
	while (($#)); do
		case $1 in
		--double) double=1; shift ;;
		--udp-blocked) nat_udp_blocked=1; shift ;;
		--short-timeouts) nat_short=1; shift ;;
		--random) nat_random=1; shift ;;
		--b-no-rate) b_rate=0; shift ;;
		--wan-mtu) mtu=${2:?--wan-mtu needs a value}; shift 2 ;;
		--wan-mtu=*) mtu=${1#*=}; shift ;;
		*) args+=("$1"); shift ;;
		esac
	done
	[[ -z $mtu || $mtu =~ ^[0-9]+$ ]] || die "bad MTU '$mtu'"
	parse_common "${args[@]}"
	A=${prefix}a B=${prefix}b R=${prefix}r N1=${prefix}n1 N2=${prefix}n2 C=${prefix}c
	clean_prefix "$prefix"
	b_ns "$A"
	b_ns "$B"
	b_ns "$R"
	b_ns "$N1"
	b_ns "$N2"
	B_SYSCTL[$R]+=" net.ipv4.ip_forward=1"
	b_veth "$A" eth1 "$N1" lan
	b_veth "$A" eth2 "$N2" lan
	b_veth "$N1" wan "$R" w1
	b_veth "$B" eth1 "$R" b1
	b_veth "$B" eth2 "$R" b2
	b_addr "$A" eth1 192.168.1.2/24
	b_addr "$A" eth2 192.168.2.2/24
	b_addr "$N1" lan 192.168.1.1/24
	b_addr "$N2" lan 192.168.2.1/24
	b_addr "$N1" wan 198.18.1.1/24
	b_addr "$R" w1 198.18.1.254/24
	b_addr "$R" w2 198.18.2.254/24
	b_addr "$R" b1 198.18.3.254/24
	b_addr "$R" b2 198.18.4.254/24
	b_addr "$B" eth1 198.18.3.2/24
	b_addr "$B" eth2 198.18.4.2/24
	B_IP[$N1]+="route add default via 198.18.1.254"$'\n'
	if ((double)); then
		b_ns "$C"
		b_veth "$N2" wan "$C" lan
		b_veth "$C" wan "$R" w2
		b_addr "$N2" wan 100.64.2.1/24
		b_addr "$C" lan 100.64.2.254/24
		b_addr "$C" wan 198.18.2.1/24
		B_IP[$N2]+="route add default via 100.64.2.254"$'\n'
		B_IP[$C]+="route add default via 198.18.2.254"$'\n'
	else
		b_veth "$N2" wan "$R" w2
		b_addr "$N2" wan 198.18.2.1/24
		B_IP[$N2]+="route add default via 198.18.2.254"$'\n'
	fi
	if [[ -n $mtu ]]; then
		B_IP[$N1]+="link set wan mtu $mtu"$'\n'
		B_IP[$N2]+="link set wan mtu $mtu"$'\n'
		B_IP[$R]+="link set w1 mtu $mtu"$'\n'"link set w2 mtu $mtu"$'\n'
	fi
	b_host_policy "$A" 192.168.1.2 192.168.1.1 192.168.1.0/24 192.168.2.2 192.168.2.1 192.168.2.0/24
	b_host_policy "$B" 198.18.3.2 198.18.3.254 198.18.3.0/24 198.18.4.2 198.18.4.254 198.18.4.0/24
	b_shape "$A" eth1 "$link1"
	b_shape "$N1" lan "$link1"
	b_shape "$N1" wan "$link1"
	b_shape "$R" w1 "$link1"
	b_shape "$B" eth1 "$(no_rate "$b_rate" "$link1")"
	b_shape "$A" eth2 "$link2"
	b_shape "$N2" lan "$link2"
	b_shape "$N2" wan "$link2"
	b_shape "$R" w2 "$link2"
	b_shape "$B" eth2 "$(no_rate "$b_rate" "$link2")"
	b_flush
	nat_rules "$N1" lan wan
	nat_rules "$N2" lan wan
	((double)) && nat_rules "$C" lan wan
	run_batch ip netns exec "$R" nft -f - <<-'EOF'
		table inet natlab {
			counter leak { }
			chain filt {
				type filter hook forward priority filter; policy accept;
				ip saddr { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 } counter name "leak" drop
			}
		}
	EOF
}

need_ns() {
	ns_exists "$1" || die "no namespace '$1'"
}

main() {
	(($#)) || usage
	[[ $EUID == 0 ]] || die "must run as root (inside the VM: tools/vm.sh -- ...)"
	local sub=$1
	shift
	case $sub in
	twolink) cmd_twolink "$@" ;;
	router) cmd_router "$@" ;;
	nat) cmd_nat "$@" ;;
	down | up)
		[[ $# == 2 ]] || usage
		need_ns "$1"
		run ip -n "$1" link set dev "$2" "$sub"
		;;
	netem)
		[[ $# == 3 ]] || usage
		need_ns "$1"
		shape "$1" "$2" "$3"
		;;
	clean)
		parse_common "$@"
		clean_prefix "$prefix"
		;;
	-h | --help | help) usage ;;
	*) die "unknown subcommand '$sub'" ;;
	esac
}

main "$@"; exit
