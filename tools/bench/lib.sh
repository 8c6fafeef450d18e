# shellcheck shell=bash
# tools/bench/lib.sh - guest-side lab helpers shared by tools/demo.sh and
# tools/bench.sh.  Source it as root inside the VM (tools/vm.sh).
#
# A "lab" is the twolink topology of tools/topo.sh (hosts ${LAB_P}a and
# ${LAB_P}b, link 1 = eth1 10.1.1.0/24, link 2 = eth2 10.1.2.0/24) plus one
# byte-counter sampler per host (tools/bench/sampler.py, /proc/net/dev every
# LAB_INTERVAL s) writing LAB_DIR/sa.txt and LAB_DIR/sb.txt.  A "run" is one
# iperf3 session from a to b (data flows a -> b) in its own directory:
#
#   run.json      what was run (kind, mode, duration, link specs, ...)
#   events.txt    "EPOCH_SECONDS NAME" lines: start (client launched),
#                 flowing (first sample with data at b), down/up (link 2
#                 failure, when the command had completed), end
#   client.json   iperf3 -J of the client, server.json of the server
#                 (receiver side, 0.1 s intervals)
#   *.txt/*.json  snapshots: mpipctl paths/stats, ss, nstat (NAME-before.*:
#                 counters before a run that is not the lab's first)
#
# tools/bench/analyze.py turns a run directory into figures.
#
# Everything here avoids forking where it can: under TCG each exec costs
# ~0.2 s of a CPU that the measured traffic also needs.

LAB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
LAB_TOPO=$LAB_REPO/tools/topo.sh
LAB_SAMPLER=$LAB_REPO/tools/bench/sampler.py
LAB_PY=/usr/bin/python3
MPIPCTL=${MPIPCTL:-$LAB_REPO/userspace/mpipctl}
MPIP_KO=${MPIP_KO:-$LAB_REPO/kernel/mpip.ko}

LAB_P=${LAB_P:-mpb}             # namespace prefix
LAB_A=${LAB_P}a
LAB_B=${LAB_P}b
LAB_INTERVAL=${LAB_INTERVAL:-0.1}  # sampler period, s
LAB_FAIL_END=${LAB_FAIL_END:-a} # link failure: a | b | both ends go down
LAB_MODE=                       # see lab_mode
LAB_MPIP=0                      # 1: mpip is on in this mode
LAB_MPTCP=0                     # 1: iperf3 runs under mptcpize
LAB_DIR=
LAB_SERVER=10.1.1.2             # b's address iperf3 connects to (lab_up)
LAB_LINK1=
LAB_LINK2=
LAB_SA_PID=
LAB_SB_PID=
LAB_CTL_A=
LAB_CTL_B=
LAB_BG_PIDS=()
LAB_RUNS=0                      # runs in the current lab so far
LAB_TMP=
LINK_T=
_LAB_NAP_FD=
export LC_ALL=C

lab_log() { printf '%s\n' "$*" >&2; }
lab_die() {
	printf 'lab: %s\n' "$*" >&2
	exit 1
}

# lab_init: checks and one-time setup of the calling shell
lab_init() {
	local c
	[[ $EUID == 0 ]] || lab_die "must run as root inside the VM (tools/vm.sh -- ...)"
	for c in ip tc iperf3 "$LAB_PY"; do
		command -v "$c" >/dev/null || lab_die "missing $c (run tools/deps.sh on the host)"
	done
	# FIFOs live in the guest's /tmp, not on the shared repository
	[[ -n $LAB_TMP ]] || LAB_TMP=$(mktemp -d /tmp/mpip-lab.XXXXXX)
	# nap: sleep without forking - read with a timeout on a FIFO nobody writes
	if [[ -z $_LAB_NAP_FD ]]; then
		mkfifo "$LAB_TMP/nap" "$LAB_TMP/ctl-a" "$LAB_TMP/ctl-b"
		exec {_LAB_NAP_FD}<>"$LAB_TMP/nap"
	fi
	# room for iperf3 -w with UDP (global sysctls: only in the throw-away VM)
	if [[ ${MPIP_IN_VM:-0} == 1 ]]; then
		sysctl -qw net.core.rmem_max=16777216 net.core.wmem_max=16777216 || true
	fi
}

nap() { read -rt "$1" -u "$_LAB_NAP_FD" _ || true; }

# now_us: microseconds since the epoch in NOW_US (no fork)
now_us() { NOW_US=${EPOCHREALTIME/./}; }

# us_to_s US: print seconds with 6 decimals
us_to_s() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }

# s_to_us SECONDS: decimal seconds to integer microseconds in S_US
s_to_us() {
	local s=$1 int frac
	int=${s%%.*}
	[[ $s == *.* ]] && frac=${s#*.} || frac=
	frac=${frac}000000
	frac=${frac:0:6}
	S_US=$((10#${int:-0} * 1000000 + 10#$frac))
}

# sleep_until_us T: nap until the epoch microsecond T
sleep_until_us() {
	local d
	now_us
	d=$(($1 - NOW_US))
	((d > 0)) || return 0
	nap "$(us_to_s "$d")"
}

# lab_event DIR NAME [EPOCHREALTIME]
lab_event() {
	printf '%s %s\n' "${3:-$EPOCHREALTIME}" "$2" >>"$1/events.txt"
}

# wait_until TIMEOUT_S CMD...: poll CMD every 0.1 s
wait_until() {
	local tmo=$1 end
	shift
	now_us
	end=$((NOW_US + ${tmo%%.*} * 1000000))
	until "$@"; do
		now_us
		((NOW_US < end)) || return 1
		nap 0.1
	done
}

pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# ------------------------------------------------------------------ the lab

lab_mpip_loaded() { [[ -d /sys/module/mpip ]]; }

# lab_mpip_load: load mpip.ko unless loaded; fails if it cannot be
lab_mpip_load() {
	lab_mpip_loaded && return 0
	[[ -f $MPIP_KO ]] || return 1
	modprobe -q libcrc32c	# insmod does not load what mpip.ko needs
	insmod "$MPIP_KO"
}

# lab_up DIR LINK1 LINK2: fresh lab (SPEC as for topo.sh), samplers on
# both hosts writing DIR/sa.txt and DIR/sb.txt.  The twolink topology, or
# with LAB_TOPO_KIND=nat topo.sh's nat lab: a behind two strict NATs
# (${LAB_P}n1, ${LAB_P}n2, which with the router ${LAB_P}r never run
# mpip), b public; iperf3 connects to b's eth1 address (LAB_SERVER).
# LAB_TOPO_ARGS: more arguments for topo.sh nat (words).
lab_up() {
	local ns targs
	LAB_DIR=$1 LAB_LINK1=$2 LAB_LINK2=$3 LAB_RUNS=0
	mkdir -p "$LAB_DIR"
	lab_samplers_stop
	case ${LAB_TOPO_KIND:-twolink} in
	twolink)
		LAB_SERVER=10.1.1.2
		"$LAB_TOPO" twolink --prefix "$LAB_P" --link1 "$LAB_LINK1" --link2 "$LAB_LINK2" || return 1
		;;
	nat)
		LAB_SERVER=198.18.3.2
		read -ra targs <<<"${LAB_TOPO_ARGS:-}"
		"$LAB_TOPO" nat --prefix "$LAB_P" --link1 "$LAB_LINK1" --link2 "$LAB_LINK2" \
			"${targs[@]}" || return 1
		;;
	*) lab_die "unknown topology '$LAB_TOPO_KIND'" ;;
	esac
	lab_mpip_load 2>/dev/null || lab_log "lab: mpip.ko not loaded (mpip runs will fail)"
	if [[ ${LAB_TOPO_KIND:-twolink} == nat ]] && lab_mpip_loaded; then
		for ns in "${LAB_P}n1" "${LAB_P}n2" "${LAB_P}r"; do
			ip netns exec "$ns" "$MPIPCTL" disable >/dev/null || return 1
		done
	fi
	lab_samplers_start "$LAB_DIR"
}

# lab_down: stop everything and delete the namespaces
lab_down() {
	local p
	for p in "${LAB_BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	LAB_BG_PIDS=()
	lab_samplers_stop
	"$LAB_TOPO" clean --prefix "$LAB_P" 2>/dev/null || true
}

# lab_fini: lab_down and remove the scratch directory (for an EXIT trap)
lab_fini() {
	lab_down
	[[ -z $_LAB_NAP_FD ]] || exec {_LAB_NAP_FD}>&-
	_LAB_NAP_FD=''
	[[ -z $LAB_TMP ]] || rm -rf "$LAB_TMP"
	LAB_TMP=''
}

lab_samplers_start() {
	local dir=$1 ra=$1/.ready-a rb=$1/.ready-b
	rm -f "$ra" "$rb" "$dir/ack-a.txt" "$dir/ack-b.txt"
	# (the samplers also switch links on command: see lab_link_set)
	ip netns exec "$LAB_A" nice -n -10 "$LAB_PY" "$LAB_SAMPLER" "$dir/sa.txt" \
		--interval "$LAB_INTERVAL" --ready "$ra" --trigger "$dir/.trigger-a" \
		--control "$LAB_TMP/ctl-a" --ack "$dir/ack-a.txt" </dev/null 2>"$dir/sampler-a.err" &
	LAB_SA_PID=$!
	ip netns exec "$LAB_B" nice -n -10 "$LAB_PY" "$LAB_SAMPLER" "$dir/sb.txt" \
		--interval "$LAB_INTERVAL" --ready "$rb" --trigger "$dir/.trigger" \
		--control "$LAB_TMP/ctl-b" --ack "$dir/ack-b.txt" </dev/null 2>"$dir/sampler-b.err" &
	LAB_SB_PID=$!
	# read-write opens of a FIFO never block
	[[ -n $LAB_CTL_A ]] || exec {LAB_CTL_A}<>"$LAB_TMP/ctl-a"
	[[ -n $LAB_CTL_B ]] || exec {LAB_CTL_B}<>"$LAB_TMP/ctl-b"
	# python starts slowly under TCG (several seconds with two at once)
	if ! wait_until 60 test -e "$ra" -a -e "$rb"; then
		lab_log "lab: byte counter samplers did not start: $(cat "$dir"/sampler-?.err 2>/dev/null)"
		return 1
	fi
	rm -f "$ra" "$rb"
}

lab_samplers_stop() {
	local p
	for p in $LAB_SA_PID $LAB_SB_PID; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	LAB_SA_PID='' LAB_SB_PID=''
	# drop commands nobody read
	[[ -z $LAB_CTL_A ]] || exec {LAB_CTL_A}>&-
	[[ -z $LAB_CTL_B ]] || exec {LAB_CTL_B}>&-
	LAB_CTL_A='' LAB_CTL_B=''
	return 0
}

# lab_ns_mode NS...: mpip on or off in these namespaces as LAB_MODE says
# (lab_mode sets it), with LAB_MPIP_SET's tunables and LAB_SYSCTL's sysctls
lab_ns_mode() {
	local ns kv
	for ns in "$@"; do
		case $LAB_MODE in
		mpip | mpip-noreorder | mpip-udp | mpip-faketcp | mptcp-mpip)
			ip netns exec "$ns" "$MPIPCTL" enable >/dev/null || return 1
			if [[ $LAB_MODE == mpip-noreorder ]]; then
				ip netns exec "$ns" "$MPIPCTL" set reorder 0 || return 1
			fi
			if [[ $LAB_MODE == mpip-udp || $LAB_MODE == mpip-faketcp ]]; then
				ip netns exec "$ns" "$MPIPCTL" set nat_mode "${LAB_MODE#mpip-}" ||
					return 1
			fi
			# LAB_MPIP_SET="key=value ...": tunables for experiments
			for kv in ${LAB_MPIP_SET:-}; do
				ip netns exec "$ns" "$MPIPCTL" set "${kv%%=*}" "${kv#*=}" || return 1
			done
			;;
		off | mptcp | mptcp-nogso)
			if lab_mpip_loaded; then
				ip netns exec "$ns" "$MPIPCTL" disable >/dev/null || return 1
			fi
			;;
		esac
		# LAB_SYSCTL="key=value ...": sysctls of the hosts, in every
		# mode, for experiments (e.g. net.ipv4.tcp_reordering=10)
		for kv in ${LAB_SYSCTL:-}; do
			ip netns exec "$ns" sysctl -qw "$kv" || return 1
		done
	done
}

# lab_gso_off NS...: no GSO or TSO on these namespaces' Ethernet links:
# their TCP hands every segment to IP on its own, as mpip does with
# tx_gso 0 (mode mptcp-nogso)
lab_gso_off() {
	local ns dev
	for ns in "$@"; do
		for dev in $(ip netns exec "$ns" ls /sys/class/net); do
			[[ $dev == eth* ]] || continue
			ip netns exec "$ns" ethtool -K "$dev" gso off tso off >/dev/null ||
				return 1
		done
	done
}

# lab_mode MODE: mpip (mpip on in both hosts), off (mpip off, plain TCP/UDP),
# mptcp (mpip off, Linux MPTCP with a second subflow over link 2) or
# mptcp-nogso (mptcp with GSO and TSO off on the hosts' links)
lab_mode() {
	local ns kv
	LAB_MODE=$1
	LAB_MPIP=0
	LAB_MPTCP=0
	case $LAB_MODE in
	mpip | mpip-noreorder | mpip-udp | mpip-faketcp | mptcp-mpip)
		LAB_MPIP=1
		lab_mpip_load || { lab_log "lab: cannot load mpip.ko"; return 1; }
		;;
	off | mptcp | mptcp-nogso) ;;
	unloaded)
		! lab_mpip_loaded || rmmod mpip || return 1
		;;
	*) lab_die "unknown mode '$LAB_MODE'" ;;
	esac
	lab_ns_mode "$LAB_A" "$LAB_B" || return 1
	[[ $LAB_MODE == mptcp* ]] || return 0
	LAB_MPTCP=1
	if [[ $LAB_MODE == mptcp-nogso ]]; then
		lab_gso_off "$LAB_A" "$LAB_B" || return 1
	fi
	command -v mptcpize >/dev/null || { lab_log "lab: mptcpize missing (Debian package mptcpd)"; return 1; }
	if [[ ${LAB_TOPO_KIND:-twolink} == nat ]]; then
		# Behind the NATs a opens the subflows itself: from each of its
		# addresses (fullmesh "subflow" endpoints; its link-2 address
		# is routed by source through n2) to each of b's, b's second
		# announced (ADD_ADDR): four subflows, through both NATs and
		# both of b's links, as mpip's four paths.  (With a's link-2
		# subflow alone, both subflows ended at b's first address, and
		# all b sent left through b's link 1.)
		ip -n "$LAB_A" -batch - <<-EOF || return 1
			mptcp limits set subflows 3 add_addr_accepted 1
			mptcp endpoint flush
			mptcp endpoint add 192.168.1.2 dev eth1 subflow fullmesh
			mptcp endpoint add 192.168.2.2 dev eth2 subflow fullmesh
		EOF
		ip -n "$LAB_B" -batch - <<-EOF || return 1
			mptcp limits set subflows 3 add_addr_accepted 0
			mptcp endpoint flush
			mptcp endpoint add 198.18.4.2 dev eth2 signal
		EOF
		for ns in "$LAB_A" "$LAB_B"; do
			ip netns exec "$ns" sysctl -qw net.mptcp.enabled=1 || return 1
		done
		return 0
	fi
	# Both hosts may run 2 subflows and accept announced addresses.  b
	# announces its link-2 address (ADD_ADDR); a's in-kernel path manager
	# then opens the second subflow 10.1.2.1 -> 10.1.2.2 (source chosen by
	# routing).  A client-side "subflow" endpoint would not do: a subflow
	# from 10.1.2.1 to b's first address 10.1.1.2 is routed through eth1.
	ip -n "$LAB_A" -batch - <<-EOF || return 1
		mptcp limits set subflows 2 add_addr_accepted 2
		mptcp endpoint flush
	EOF
	ip -n "$LAB_B" -batch - <<-EOF || return 1
		mptcp limits set subflows 2 add_addr_accepted 2
		mptcp endpoint flush
		mptcp endpoint add 10.1.2.2 dev eth2 signal
	EOF
	for ns in "$LAB_A" "$LAB_B"; do
		ip netns exec "$ns" sysctl -qw net.mptcp.enabled=1 || return 1
	done
}

# lab_listening PORT: something in b listens on TCP PORT (reads b's
# /proc/net through the sampler's /proc/PID/net, no fork)
lab_listening() {
	local hex _sl loc st
	printf -v hex '%04X' "$1"
	for f in /proc/"$LAB_SB_PID"/net/tcp /proc/"$LAB_SB_PID"/net/tcp6; do
		[[ -r $f ]] || continue
		while read -r _sl loc _ st _; do
			[[ $st == 0A && $loc == *:"$hex" ]] && return 0
		done <"$f"
	done
	return 1
}

# lab_link_set STATE: set eth2 up or down at the end(s) LAB_FAIL_END of link
# 2.  The samplers do it (an ioctl, as `ip link set` does), so no process is
# started and the time of the change is known: LINK_T gets it.  For "down"
# it is when the first end began to go down (the link breaks at once; the
# rest is waiting for RCU), for "up" when the last end was up again.
lab_link_set() {
	local st=$1 e fd ack n lines t=
	local -A before=()
	case $LAB_FAIL_END in
	a) set -- a ;;
	b) set -- b ;;
	both) set -- a b ;;
	*) lab_die "bad LAB_FAIL_END '$LAB_FAIL_END' (a, b or both)" ;;
	esac
	for e in "$@"; do
		ack=$LAB_DIR/ack-$e.txt
		lines=()
		[[ -f $ack ]] && mapfile -t lines <"$ack"
		before[$e]=${#lines[@]}
		[[ $e == a ]] && fd=$LAB_CTL_A || fd=$LAB_CTL_B
		printf '%s eth2\n' "$st" >&"$fd"
	done
	for e in "$@"; do
		ack=$LAB_DIR/ack-$e.txt
		n=0
		while :; do
			lines=()
			[[ -f $ack ]] && mapfile -t lines <"$ack"
			((${#lines[@]} > before[$e])) && break
			((++n < 500)) || { lab_log "lab: no answer from the sampler in host $e"; return 1; }
			nap 0.02
		done
		# START END COMMAND DEV RESULT
		read -r -a f <<<"${lines[-1]}"
		[[ ${f[4]:-} == ok ]] || { lab_log "lab: link $st at $e: ${lines[-1]}"; return 1; }
		if [[ $st == down ]]; then
			[[ -n $t && ! ${f[0]} < $t ]] || t=${f[0]}
		else
			[[ -n $t && ! ${f[1]} > $t ]] || t=${f[1]}
		fi
	done
	LINK_T=$t
}

# json_str S: S as a JSON string
json_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# lab_snapshot RUNDIR TAG: state of the multipath machinery on host a,
# and the sending host's TCP sockets (one exec each: they are expensive
# under TCG)
lab_snapshot() {
	local dir=$1 tag=$2
	if ((LAB_MPIP)); then
		ip netns exec "$LAB_A" "$MPIPCTL" -j show paths >"$dir/paths-$tag.json" 2>/dev/null || true
	fi
	# b sends in a reverse run: its paths and its TCP sockets too
	if ((${LAB_REVERSE:-0})); then
		((LAB_MPIP)) && { ip netns exec "$LAB_B" "$MPIPCTL" -j show paths \
			>"$dir/paths-b-$tag.json" 2>/dev/null || true; }
		ip netns exec "$LAB_B" ss -tinH >"$dir/ss-b-$tag.txt" 2>/dev/null || true
	fi
	if ((LAB_MPTCP)); then
		# a's TCP sockets (the subflows) without starting a process, then
		# ss for the MPTCP tokens (which may come too late under load)
		local l=()
		[[ -r /proc/$LAB_SA_PID/net/tcp ]] && mapfile -t l <"/proc/$LAB_SA_PID/net/tcp"
		((${#l[@]} == 0)) || printf '%s\n' "${l[@]}" >"$dir/tcp-$tag.txt"
	fi
	# a's TCP sockets: MPTCP's subflows, and the sender's RTT when a sends
	# (analyze.py), in every mode alike
	if ((LAB_MPTCP)) || ! ((${LAB_REVERSE:-0})); then
		ip netns exec "$LAB_A" ss -tinH >"$dir/ss-$tag.txt" 2>/dev/null || true
	fi
}

# lab_run RUNDIR KIND DURATION [DOWN_AT UP_AT]
#   KIND tcp or udp.  One iperf3 session a -> b over link 1's address
#   (10.1.1.2) for DURATION s, in the current mode.  With DOWN_AT/UP_AT,
#   link 2 goes down DOWN_AT s after data starts to flow and comes back at
#   UP_AT s.  Options in the environment:
#     LAB_UDP_RATE   offered UDP rate for iperf3 -b (default 55M)
#     LAB_UDP_LEN    iperf3 -l for UDP (default: iperf3's)
#     LAB_TCP_RATE   iperf3 -b for TCP (default: none, as fast as it goes)
#     LAB_WARMUP     seconds left out of the throughput averages (default 1)
#     LAB_PORT       iperf3 port (default 5201)
#     LAB_SNAPSHOT   0: no snapshot half-way (it starts processes in mpip
#                    and MPTCP modes only, which a CPU-bound run would pay)
#     LAB_REVERSE    1: TCP data flows b -> a, on the connection a opens
#                    (iperf3 -R: a behind a NAT downloads); run.json says
#                    "reverse", and analyze.py takes a for the receiver
#   Returns non-zero if iperf3 failed (the data is kept for inspection).
lab_run() {
	local dir=$1 kind=$2 dur=$3 down_at=${4:-} up_at=${5:-}
	local port=${LAB_PORT:-5201} pre=() cargs=() spid cpid rc=0 t0 t0_us down_us up_us
	local trig=$LAB_DIR/.trigger rel snaps=() p rev=${LAB_REVERSE:-0} rx_pid=$LAB_SB_PID
	# the client's report interval; in a reverse run its intervals are the
	# receiver's, so as often as the server's in a run a -> b
	local ivl=0.5
	mkdir -p "$dir"
	rm -f "$dir"/{events.txt,client.json,server.json,client.err,server.err} "$dir"/paths-*.json \
		"$dir"/ss-*.txt "$dir"/tcp-*.txt "$dir"/*-before.*
	((LAB_MPTCP)) && pre=(mptcpize run)
	((rev)) && ivl=0.1
	cargs=(-c "$LAB_SERVER" -p "$port" -t "$dur" -J -i "$ivl")
	# UDP: big socket buffers, so that a receiver slowed down by emulation
	# loses no datagrams in its socket
	[[ $kind == udp ]] && cargs+=(-u -b "${LAB_UDP_RATE:-55M}" -w 4M)
	[[ $kind == udp && -n ${LAB_UDP_LEN:-} ]] && cargs+=(-l "$LAB_UDP_LEN")
	[[ $kind == tcp && -n ${LAB_TCP_RATE:-} ]] && cargs+=(-b "$LAB_TCP_RATE")
	if ((rev)); then
		cargs+=(-R)
		trig=$LAB_DIR/.trigger-a rx_pid=$LAB_SA_PID
	fi

	{
		printf '{"kind": %s, "mode": %s, "duration": %s, ' "$(json_str "$kind")" "$(json_str "$LAB_MODE")" "$dur"
		[[ -z ${LAB_TAG:-} ]] || printf '"tag": %s, ' "$(json_str "$LAB_TAG")"
		printf '"link1": %s, "link2": %s, ' "$(json_str "$LAB_LINK1")" "$(json_str "$LAB_LINK2")"
		printf '"warmup": %s, "interval": %s, "port": %s, ' "${LAB_WARMUP:-1}" "$LAB_INTERVAL" "$port"
		if [[ $dir -ef $LAB_DIR ]]; then
			rel=
		elif [[ ${dir%/*} -ef $LAB_DIR ]]; then
			rel=../
		else
			rel=$LAB_DIR/
		fi
		printf '"sampler_a": %s, "sampler_b": %s' "$(json_str "${rel}sa.txt")" "$(json_str "${rel}sb.txt")"
		[[ $kind == udp ]] && printf ', "udp_rate": %s' "$(json_str "${LAB_UDP_RATE:-55M}")"
		((rev)) && printf ', "reverse": true'
		[[ -n $down_at ]] && printf ', "down_at": %s, "up_at": %s, "fail_end": %s' \
			"$down_at" "$up_at" "$(json_str "$LAB_FAIL_END")"
		printf '}\n'
	} >"$dir/run.json"

	# the namespaces' counters are cumulative: after an earlier run in this
	# lab, take them before this one too (analyze.py subtracts)
	if ((LAB_RUNS++)); then
		ip netns exec "$LAB_A" nstat -asz >"$dir/nstat-a-before.txt" 2>/dev/null || true
		if [[ $kind == udp ]] || ((rev)); then
			ip netns exec "$LAB_B" nstat -asz >"$dir/nstat-b-before.txt" 2>/dev/null || true
		fi
		if ((LAB_MPIP)); then
			ip netns exec "$LAB_B" "$MPIPCTL" -j stats >"$dir/stats-b-before.json" 2>/dev/null || true
		fi
	fi

	ip netns exec "$LAB_B" timeout $((${dur%.*} + 60)) "${pre[@]}" iperf3 -s -1 -J -i 0.1 -p "$port" \
		</dev/null >"$dir/server.json" 2>"$dir/server.err" &
	spid=$!
	LAB_BG_PIDS+=("$spid")
	if ! wait_until 30 lab_listening "$port"; then
		lab_log "lab: iperf3 server in $LAB_B did not start listening"
		kill "$spid" 2>/dev/null
		return 1
	fi

	# arm the trigger: the receiver's sampler writes the time data starts
	# arriving
	rm -f "$trig"
	kill -USR1 "$rx_pid"
	lab_event "$dir" start
	ip netns exec "$LAB_A" timeout $((${dur%.*} + 45)) "${pre[@]}" iperf3 "${cargs[@]}" \
		</dev/null >"$dir/client.json" 2>"$dir/client.err" &
	cpid=$!
	LAB_BG_PIDS+=("$cpid")
	if wait_until 30 test -s "$trig"; then
		read -r t0 <"$trig"
		lab_event "$dir" flowing "$t0"
	else
		lab_log "lab: no data seen at $LAB_B within 30 s of starting the client"
		now_us
		t0=$(us_to_s "$NOW_US")
	fi
	s_to_us "$t0"
	t0_us=$S_US
	if [[ -n $down_at ]]; then
		s_to_us "$down_at"
		down_us=$((t0_us + S_US))
		s_to_us "$up_at"
		up_us=$((t0_us + S_US))
		sleep_until_us "$down_us"
		lab_event "$dir" down_cmd
		lab_link_set down && lab_event "$dir" down "$LINK_T"
		# snapshots (in the background: they must not delay the schedule)
		# half-way through the failure and 2 s after it
		sleep_until_us $(((down_us + up_us) / 2))
		lab_snapshot "$dir" down &
		snaps+=($!)
		sleep_until_us "$up_us"
		lab_event "$dir" up_cmd
		lab_link_set up && lab_event "$dir" up "$LINK_T"
		sleep_until_us $((up_us + 2000000))
		lab_snapshot "$dir" up &
		snaps+=($!)
	elif ((${LAB_SNAPSHOT:-1})); then
		# (early enough: under load the snapshot itself can take seconds)
		s_to_us "$dur"
		sleep_until_us $((t0_us + S_US * 2 / 5))
		lab_snapshot "$dir" mid &
		snaps+=($!)
	fi
	wait "$cpid" || rc=$?
	lab_event "$dir" end
	# a one-off server ends by itself after the test; do not hang on it
	wait_until 15 pid_gone "$spid" || kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null || true
	for p in "${snaps[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	LAB_BG_PIDS=()
	if [[ $kind == udp ]] || ((rev)); then
		ip netns exec "$LAB_B" nstat -asz >"$dir/nstat-b.txt" 2>/dev/null || true
	fi
	ip netns exec "$LAB_A" nstat -asz >"$dir/nstat-a.txt" 2>/dev/null || true
	if ((LAB_MPIP)); then
		ip netns exec "$LAB_A" "$MPIPCTL" -j show paths >"$dir/paths-end.json" 2>/dev/null || true
		ip netns exec "$LAB_A" "$MPIPCTL" -j stats >"$dir/stats-a.json" 2>/dev/null || true
		ip netns exec "$LAB_B" "$MPIPCTL" -j stats >"$dir/stats-b.json" 2>/dev/null || true
	fi
	if ((rc != 0)); then
		lab_log "lab: iperf3 client failed (exit $rc): $(head -c 300 "$dir/client.err" 2>/dev/null) $(jq -r '.error // empty' "$dir/client.json" 2>/dev/null)"
		return 1
	fi
	return 0
}

# lab_reps RUNDIR N KIND DURATION: lab_run N times in the same lab, into
# RUNDIR/rep1 ... RUNDIR/repN (analyze.py takes medians over them); all are
# run even if one fails, the status is that of the worst
lab_reps() {
	local dir=$1 n=$2 k rc=0
	shift 2
	for ((k = 1; k <= n; k++)); do
		lab_run "$dir/rep$k" "$@" || rc=1
	done
	return "$rc"
}

# lab_scale RUNDIR FLOWS PACKETS [CYCLES]: kernel time per UDP datagram from
# a to b with each number of concurrent flows in FLOWS (comma-separated),
# PACKETS datagrams per round, CYCLES cycles of rounds that visit the flow
# counts forward and back (tools/bench/scale.py).  The first count runs in
# the lab; each other count gets a lab of its own, with unshaped links and
# mpip as LAB_MODE says, so that each count has its own mpip tables (the
# one-flow lab holds one session).  The samplers are stopped first: their
# reads would count as kernel time.  Writes run.json, scale.jsonl (with
# each sending namespace's mpip session count before the rounds) and the
# last count's sender status afterwards (status-a.json).
# LAB_SCALE_KIND: the kind run.json records (default scale); LAB_SCALE_PREP:
# a command run with each other lab's sending namespace once it is up (the
# first lab gets none), e.g. to install routing rules there.
lab_scale() {
	local dir=$1 flows=$2 pkts=$3 cycles=${4:-1} port=9700 rc=0 ctl=() i=0
	local n p senders=() extra=() spids=()
	lab_samplers_stop
	((LAB_MPIP)) && ctl=(--mpipctl "$MPIPCTL")
	printf '{"kind": %s, "mode": %s, "flows": %s, "packets": %s, "cycles": %s}\n' \
		"$(json_str "${LAB_SCALE_KIND:-scale}")" "$(json_str "$LAB_MODE")" \
		"$(json_str "$flows")" "$pkts" "$cycles" >"$dir/run.json"
	for n in ${flows//,/ }; do
		if ((i++ == 0)); then
			senders+=("$LAB_A")
			p=$LAB_P
		else
			p=${LAB_P}s$i
			extra+=("$p")
			if ! "$LAB_TOPO" twolink --prefix "$p" --link1 - --link2 - >/dev/null ||
				! lab_ns_mode "${p}a" "${p}b" ||
				{ [[ -n ${LAB_SCALE_PREP:-} ]] && ! "$LAB_SCALE_PREP" "${p}a"; }; then
				lab_log "lab: scale lab $p not ready"
				rc=1
				break
			fi
			senders+=("${p}a")
		fi
		rm -f "$LAB_TMP/scale-ready"
		ip netns exec "${p}b" "$LAB_PY" "$LAB_REPO/tools/bench/scale.py" sink "$port" \
			--ready "$LAB_TMP/scale-ready" </dev/null >/dev/null 2>>"$dir/sink.err" &
		spids+=($!)
		wait_until 30 test -e "$LAB_TMP/scale-ready" || { lab_log "lab: scale sink not ready"; rc=1; break; }
	done
	LAB_BG_PIDS+=("${spids[@]}")
	if ((rc == 0)); then
		(IFS=,; ulimit -n 65536 && ip netns exec "$LAB_A" "$LAB_PY" "$LAB_REPO/tools/bench/scale.py" \
			send 10.1.1.2 "$port" --flows "$flows" --packets "$pkts" --cycles "$cycles" \
			--netns "${senders[*]}" "${ctl[@]}") \
			</dev/null >"$dir/scale.jsonl" 2>"$dir/scale.err" || rc=$?
		((rc == 0)) || lab_log "lab: scale sender failed: $(head -c 300 "$dir/scale.err")"
	fi
	((LAB_MPIP)) && ip netns exec "${senders[-1]}" "$MPIPCTL" -j status >"$dir/status-a.json" 2>/dev/null
	kill "${spids[@]}" 2>/dev/null
	wait "${spids[@]}" 2>/dev/null
	LAB_BG_PIDS=()
	for p in "${extra[@]}"; do
		"$LAB_TOPO" clean --prefix "$p" 2>/dev/null || true
	done
	return "$rc"
}

# lab_nstat NS NAME...: NS's counters NAME... (nstat), their values on one
# line in that order (0 for one the kernel does not count)
lab_nstat() {
	local ns=$1 out
	shift
	out=$(ip netns exec "$ns" nstat -asz "$@" 2>/dev/null) || return 1
	awk -v names="$*" 'BEGIN { n = split(names, k, " ") }
		{ v[$1] = $2 }
		END { for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), v[k[i]]; print "" }' <<<"$out"
}

# lab_mpip_stat NS NAME: NS's mpip counter NAME (0 with mpip off)
lab_mpip_stat() {
	((LAB_MPIP)) || { echo 0; return 0; }
	ip netns exec "$1" "$MPIPCTL" -j stats | jq -r --arg k "$2" '.[$k] // 0'
}

# lab_starts_snap: the counters lab_starts reads before and after each
# download, on one line: a's TcpExtTCPOFOQueue and MPTcpExtOFOQueue, b's
# TcpRetransSegs and TcpExtTCPDSACKRecvSegs, a's reorder_lost, b's
# tx_resend
lab_starts_snap() {
	local a b l r
	a=$(lab_nstat "$LAB_A" TcpExtTCPOFOQueue MPTcpExtOFOQueue) &&
		b=$(lab_nstat "$LAB_B" TcpRetransSegs TcpExtTCPDSACKRecvSegs) &&
		l=$(lab_mpip_stat "$LAB_A" reorder_lost) &&
		r=$(lab_mpip_stat "$LAB_B" tx_resend) || return 1
	echo "$a $b $l $r"
}

# lab_starts DIR N SIZE: N downloads of SIZE bytes from b to a (iperf3 -R
# -n SIZE), one after the other, each on connections of its own, so that
# each meets what a new connection's first flight meets.  One JSON line
# per download in DIR/starts.jsonl: "mbps", "bytes", "seconds" (what a
# got, iperf3), "ofo" (segments a's TCP queued out of order,
# TcpExtTCPOFOQueue; for MPTCP its subflows'), "mptcp_ofo" (MPTCP's data
# level, MPTcpExtOFOQueue), "retrans" (b's TcpRetransSegs), "dsack" (of
# those, ones a reported it already had: b's TcpExtTCPDSACKRecvSegs),
# "reorder_lost" (a's mpip counter: gaps its reorder buffer released as
# lost) and "tx_resend" (b's: segments mpip found sent again).  Counters
# are the hosts' totals before and after each download, iperf3's control
# connection included.
lab_starts() {
	local dir=$1 n=$2 size=$3 port=5292 spid i out pre=() rc=0 s0 s1
	printf '{"kind": "starts", "tag": "natstart", "mode": %s, "downloads": %s, "size": %s, ' \
		"$(json_str "$LAB_MODE")" "$n" "$(json_str "$size")" >"$dir/run.json"
	printf '"link1": %s, "link2": %s}\n' "$(json_str "$LAB_LINK1")" "$(json_str "$LAB_LINK2")" \
		>>"$dir/run.json"
	: >"$dir/starts.jsonl"
	((LAB_MPTCP)) && pre=(mptcpize run)
	ip netns exec "$LAB_B" "${pre[@]}" iperf3 -s -p "$port" </dev/null >/dev/null 2>"$dir/server.err" &
	spid=$!
	LAB_BG_PIDS+=("$spid")
	wait_until 30 lab_listening "$port" || { lab_log "lab: iperf3 server not up"; return 1; }
	lab_samplers_stop
	for ((i = 1; i <= n; i++)); do
		s0=$(lab_starts_snap) || { rc=1; break; }
		out=$(ip netns exec "$LAB_A" timeout 120 "${pre[@]}" iperf3 -c "$LAB_SERVER" \
			-p "$port" -R -n "$size" -J </dev/null 2>>"$dir/client.err") ||
			{ rc=1; break; }
		# (the last ACKs, and a retransmission they may still bring)
		nap 0.3
		s1=$(lab_starts_snap) || { rc=1; break; }
		jq -c --argjson n "$i" --arg s0 "$s0" --arg s1 "$s1" '
			def d($k): ($s1 | split(" ")[$k] | tonumber) - ($s0 | split(" ")[$k] | tonumber);
			{n: $n, mbps: (.end.sum_received.bits_per_second / 1e6),
			 bytes: .end.sum_received.bytes, seconds: .end.sum_received.seconds,
			 ofo: d(0), mptcp_ofo: d(1), retrans: d(2), dsack: d(3),
			 reorder_lost: d(4), tx_resend: d(5)}' <<<"$out" >>"$dir/starts.jsonl" ||
			{ rc=1; break; }
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	LAB_BG_PIDS=()
	((rc == 0)) || lab_log "lab: downloads failed: $(tail -c 300 "$dir/client.err")"
	return "$rc"
}

# lab_interleave DIR CYCLES DUR: TCP goodput with mpip on and off in the
# same lab, in runs of DUR seconds in ABBA order (off, on, on, off) for
# CYCLES cycles, mpip switched in both hosts between runs.  Off, mpip's
# hooks are not registered (mpip_set_enabled), so those runs take the
# module-less kernel's path; interleaving short runs keeps the emulated
# machine's drifts in speed out of the ratio.  One JSON line per run in
# DIR/interleave.jsonl: {"cycle", "mpip", "mbps", "retransmits"}.
lab_interleave() {
	local dir=$1 cycles=$2 dur=$3 port=5290 spid c on ns out rc=0
	printf '{"kind": "interleave", "mode": %s, "cycles": %s, "duration": %s}\n' \
		"$(json_str "$LAB_MODE")" "$cycles" "$dur" >"$dir/run.json"
	: >"$dir/interleave.jsonl"
	ip netns exec "$LAB_B" iperf3 -s -p "$port" </dev/null >/dev/null 2>"$dir/server.err" &
	spid=$!
	LAB_BG_PIDS+=("$spid")
	wait_until 30 lab_listening "$port" || { lab_log "lab: iperf3 server not up"; return 1; }
	# the samplers found the server (they live in the hosts' namespaces);
	# from here they would only take CPU time from the runs
	lab_samplers_stop
	for ((c = 1; c <= cycles; c++)); do
		for on in 0 1 1 0; do
			for ns in "$LAB_A" "$LAB_B"; do
				ip netns exec "$ns" "$MPIPCTL" "$( ((on)) && echo enable || echo disable)" \
					>/dev/null || { rc=1; break 3; }
			done
			out=$(ip netns exec "$LAB_A" iperf3 -c 10.1.1.2 -p "$port" -t "$dur" -J \
				</dev/null 2>>"$dir/client.err") || { rc=1; break 2; }
			jq -c --argjson c "$c" --argjson on "$on" '{cycle: $c, mpip: ($on == 1),
				mbps: (.end.sum_received.bits_per_second / 1e6),
				retransmits: .end.sum_sent.retransmits}' <<<"$out" \
				>>"$dir/interleave.jsonl" || { rc=1; break 2; }
		done
	done
	ip netns exec "$LAB_A" "$MPIPCTL" -j stats >"$dir/stats-a.json" 2>/dev/null || true
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	LAB_BG_PIDS=()
	((rc == 0)) || lab_log "lab: interleaved runs failed: $(tail -c 300 "$dir/client.err")"
	return "$rc"
}
