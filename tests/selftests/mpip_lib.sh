# shellcheck shell=bash
# tests/selftests/mpip_lib.sh - mpip helpers on top of lib.sh.

MPIPCTL=$REPO/userspace/mpipctl
MPIP_KO=${MPIP_KO:-$REPO/kernel/mpip.ko}   # tools/debug-kernel.sh sets it
export MPIPCTL MPIP_KO

mpip_loaded() { [[ -d /sys/module/mpip ]]; }

# mpip_load: load the module unless it is loaded already
mpip_load() {
	mpip_loaded && return 0
	modprobe -q libcrc32c	# insmod does not load what mpip.ko needs
	insmod "$MPIP_KO"
}

mpip_unload() {
	mpip_loaded || return 0
	rmmod mpip
}

# mpip_require: fail the whole file (one failed test) if it cannot run:
# not root, the module or mpipctl missing, a tool missing, or the module
# does not load.  `make check` provides all of them, so none is a skip.
mpip_require() {
	local c
	[[ $EUID == 0 ]] || ktap_fail_all "needs root (run inside tools/vm.sh)"
	[[ -f $MPIP_KO ]] || ktap_fail_all "kernel/mpip.ko not built"
	[[ -x $MPIPCTL ]] || ktap_fail_all "userspace/mpipctl not built"
	for c in jq python3 socat; do
		command -v "$c" >/dev/null || ktap_fail_all "missing $c"
	done
	mpip_load || ktap_fail_all "cannot load $MPIP_KO"
}

# mpipctl_in NS ARGS...: mpipctl in a namespace
# (mpipctl -n: setns() only; `ip netns exec` also makes a mount namespace
# and mounts a sysfs, which costs 100+ ms under TCG)
mpipctl_in() {
	local ns=$1
	shift
	"$MPIPCTL" -n "$ns" "$@"
}

# _mpip_value NAME: NAME's value in the two-column table of mpipctl's
# stats or get on stdin; fails (prints nothing) unless it is a number
_mpip_value() {
	local k v
	while read -r k v; do
		if [[ $k == "$1" ]]; then
			[[ $v =~ ^[0-9]+$ ]] || return 1
			printf '%s\n' "$v"
			return 0
		fi
	done
	return 1
}

# mpip_stat NS NAME: one counter; fails (prints nothing) if there is no
# numeric counter NAME, so an assertion on it cannot pass by accident
# (the text table read by bash: a jq costs ~0.5-1 s of CPU under TCG)
mpip_stat() {
	local out
	out=$("$MPIPCTL" -n "$1" stats) || return 1
	_mpip_value "$2" <<<"$out"
}

# mpip_cfg NS NAME: one tunable's value; fails (prints nothing) if NS has
# no tunable NAME
mpip_cfg() {
	local out
	out=$("$MPIPCTL" -n "$1" get "$2") || return 1
	_mpip_value "$2" <<<"$out"
}

# mpip_node_id NS: this namespace's node ID as mpipctl prints it; fails if
# there is none
mpip_node_id() {
	mpipctl_in "$1" -j status | jq -er '.node_id | strings'
}

# mpip_peer_node NS PEER_NS: the ID of NS's node for PEER_NS (node IDs are
# per peer pair: NS's node whose peer ID is the ID of a node of PEER_NS
# whose peer ID is NS's node's); fails (prints nothing) if there is none
mpip_peer_node() {
	local mine theirs
	mine=$(mpipctl_in "$1" -j show nodes) || return 1
	theirs=$(mpipctl_in "$2" -j show nodes) || return 1
	# (a table of thousands of nodes is longer than one argument may be)
	jq -ner --slurpfile a <(printf '%s' "$mine") \
		--slurpfile b <(printf '%s' "$theirs") '
		[$a[0][] as $n | $b[0][] |
		 select(.node_id == $n.peer_id and .peer_id == $n.node_id) |
		 $n.node_id] | first // empty'
}

# mpip_avail_state NS ADDR PORT: state of one availability entry, or "none"
mpip_avail_state() {
	mpipctl_in "$1" -j show avail |
		jq -r --arg a "$2" --argjson p "$3" \
			'[.[] | select(.addr == $a and .port == $p)][0].state // "none"'
}

# mpip_avail_is NS ADDR PORT STATE: the availability entry is in STATE.
# For polling: `wait_for 15 mpip_avail_is ...`, never
# `wait_for 15 test "$(mpip_avail_state ...)" = yes` (expanded only once).
mpip_avail_is() {
	[[ $(mpip_avail_state "$1" "$2" "$3") == "$4" ]]
}

# _bg_stop PID LOG: stop a helper started in the background by the functions
# below, reap it and show what it printed
_bg_stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	[[ -s $2 ]] && cat "$2" >&2
	return 0
}

# tcp_send_file NS_SRC NS_DST DST_ADDR PORT FILE OUT: copy FILE over TCP;
# sets TCP_SEND_MS to the milliseconds from starting the sender to the
# receiver's exit (the connection's lifetime, give or take an exec).
# TCP_BIND=ADDR: the connection's source address
#
# Background helpers here write to files, never to the subtest's stdout or
# stderr: ktap_run reads those through a pipe, and a helper left running
# after a failure would hold it open (and the subtest with it) until its own
# timeout.  They are started with `ip netns exec` rather than in_ns (a shell
# function, which would run in a subshell) so that $! is the helper itself
# and can be killed.
# The listening end's timeout counts from before the wait for it to
# listen (up to 30 s), the connecting end's from after: so the connecting
# end's 110 s are what ends a transfer too slow, with a message that says
# so.  (With 120 s for the listener, a listener slow to start on the
# debug kernel ended first, and the sender failed with a broken pipe.)
tcp_send_file() {
	local src=$1 dst=$2 addr=$3 port=$4 file=$5 out=$6 log lpid rc=0 t0
	log=$(tmpdir)/tcp-recv.$port.log
	rm -f "$out"
	ip netns exec "$dst" timeout 150 socat -u "TCP-LISTEN:$port,reuseaddr" \
		"OPEN:$out,creat,trunc" </dev/null >"$log" 2>&1 &
	lpid=$!
	if ! wait_for 30 tcp_listening "$dst" "$port"; then
		_bg_stop "$lpid" "$log"
		fail "nothing listens on $dst:$port"
	fi
	t0=$(date +%s%N)
	if ! in_ns "$src" timeout 110 socat -u "OPEN:$file" "TCP:$addr:$port${TCP_BIND:+,bind=$TCP_BIND}"; then
		_bg_stop "$lpid" "$log"
		fail "TCP sender $src -> $addr:$port failed after $((($(date +%s%N) - t0) / 1000000)) ms"
	fi
	wait "$lpid" || rc=$?
	# shellcheck disable=SC2034 # for the test files
	TCP_SEND_MS=$((($(date +%s%N) - t0) / 1000000))
	[[ -s $log ]] && cat "$log" >&2
	((rc == 0)) || fail "TCP receiver on $dst:$port failed (exit $rc)"
}

# tcp_fetch_file NS_SRC NS_DST ADDR PORT FILE OUT: NS_SRC connects to
# ADDR:PORT (NS_DST) and NS_DST sends FILE down the connection, which
# NS_SRC writes to OUT.  TCP_BIND=ADDR: the connection's source address.
tcp_fetch_file() {
	local src=$1 dst=$2 addr=$3 port=$4 file=$5 out=$6 log spid rc=0
	log=$(tmpdir)/tcp-send.$port.log
	rm -f "$out"
	ip netns exec "$dst" timeout 150 socat -u "OPEN:$file" "TCP-LISTEN:$port,reuseaddr" \
		</dev/null >"$log" 2>&1 &
	spid=$!
	if ! wait_for 30 tcp_listening "$dst" "$port"; then
		_bg_stop "$spid" "$log"
		fail "nothing listens on $dst:$port"
	fi
	if ! in_ns "$src" timeout 110 socat -u "TCP:$addr:$port${TCP_BIND:+,bind=$TCP_BIND}" \
		"OPEN:$out,creat,trunc"; then
		_bg_stop "$spid" "$log"
		fail "TCP receiver $src from $addr:$port failed"
	fi
	wait "$spid" || rc=$?
	[[ -s $log ]] && cat "$log" >&2
	((rc == 0)) || fail "TCP sender on $dst:$port failed (exit $rc)"
}

# udp_exchange NS_SRC NS_DST DST_ADDR PORT COUNT [SPORT [GAP_US]]: send COUNT
# checked datagrams, GAP_US (default 200) microseconds apart; succeeds when
# exactly COUNT good ones arrive, each once.  UDP_NO_DF=1: sent without the
# don't-fragment bit.  UDP_RECV_TIMEOUT: how long the receiver waits for
# missing datagrams once the sender is done (default 120 s).  UDP_SIZE=N:
# every datagram N bytes (default: sizes from 1 to 1400).  UDP_MIN_GOOD=M: succeeds when at least
# M good ones arrive, none twice (a lossy link), and the receiver stops
# once nothing arrived for 5 s.  UDP_FLOWS=F: from F sockets in turn, on
# ports SPORT to SPORT + F - 1 (F flows).
udp_exchange() {
	local src=$1 dst=$2 addr=$3 port=$4 count=$5 sport=${6:-0} gap=${7:-200}
	local ready res err sent rpid rc=0 opt=() ropt=()
	[[ ${UDP_NO_DF:-0} == 1 ]] && opt=(--no-df)
	opt+=(--size "${UDP_SIZE:-0}" --flows "${UDP_FLOWS:-1}")
	[[ -n ${UDP_MIN_GOOD:-} ]] && ropt=(--min-good "$UDP_MIN_GOOD" --idle 5)
	ready=$(tmpdir)/udp-ready.$port
	res=$(tmpdir)/udp-res.$port
	err=$(tmpdir)/udp-err.$port
	sent=$(tmpdir)/udp-sent.$port
	rm -f "$ready" "$res" "$sent"
	# output to files, $! the receiver itself: see tcp_send_file
	ip netns exec "$dst" python3 -S "$REPO/tests/selftests/udpcheck.py" recv \
		"$port" "$count" --timeout "${UDP_RECV_TIMEOUT:-120}" --linger 1 --ready "$ready" \
		--sent "$sent" --size "${UDP_SIZE:-0}" "${ropt[@]}" \
		</dev/null >"$res" 2>"$err" &
	rpid=$!
	if ! wait_for 60 test -e "$ready"; then
		_bg_stop "$rpid" "$err"
		fail "UDP receiver on $dst:$port not ready"
	fi
	if ! in_ns "$src" python3 -S "$REPO/tests/selftests/udpcheck.py" send \
		"$addr" "$port" "$count" --sport "$sport" --gap-us "$gap" \
		"${opt[@]}"; then
		_bg_stop "$rpid" "$err"
		fail "UDP sender failed"
	fi
	: >"$sent"
	wait "$rpid" || rc=$?
	echo "udp $src -> $dst:$port: $(cat "$res")"
	[[ -s $err ]] && cat "$err" >&2
	return "$rc"
}

# mpip_setup_twolink TAG [TOPO_OPTION...]: the usual start of a test file.
# Checks what the tests need, builds a fresh two-link topology (topo.sh
# twolink with the options given) and sets the globals
# P (namespace prefix), A and B (the two hosts), T (scratch directory) and
# MARK (kernel log mark).  Call it from the test's main shell.
# The globals are used by the sourcing test file:
# shellcheck disable=SC2034
mpip_setup_twolink() {
	mpip_require
	P=$(unique_prefix "$1")
	shift
	A=${P}a
	B=${P}b
	T=$(tmpdir)
	cleanup_push "$TOPO" clean --prefix "$P"
	MARK=$(dmesg_mark)
	"$TOPO" twolink --prefix "$P" "$@"
}

# mpip_setup_router_globals TAG: what mpip_setup_twolink does, for the
# router and nat topologies, without building them (their tests do, with
# the options they need): P, A, B, R (the router), T and MARK.
# shellcheck disable=SC2034
mpip_setup_router_globals() {
	mpip_require
	P=$(unique_prefix "$1")
	A=${P}a
	B=${P}b
	R=${P}r
	T=$(tmpdir)
	cleanup_push "$TOPO" clean --prefix "$P"
	MARK=$(dmesg_mark)
}

# nat_counter NS NAME: packets counted by counter NAME of table inet natlab
# (topo.sh nat)
nat_counter() {
	nft_packets "$1" inet natlab "$2"
}

# mpip_twolink_warm_up: 100 kB over TCP from A to B's link-1 address (port
# 4999), intact, then both hosts have both of their paths up
mpip_twolink_warm_up() {
	head -c 100000 /dev/urandom >"$T/small"
	tcp_send_file "$A" "$B" 10.1.1.2 4999 "$T/small" "$T/small.out"
	sha256_equal "$T/small" "$T/small.out" || fail "warm-up TCP data differs"
	mpip_wait_paths_up "$A" 10.1.1.1:10.1.1.2 10.1.2.1:10.1.2.2
	mpip_wait_paths_up "$B" 10.1.1.2:10.1.1.1 10.1.2.2:10.1.2.1
}

# ------------------------------------------------------ sessions and paths
#
# Under TCG every exec costs a good fraction of a second: the helpers below
# read a table once and check everything they need in one jq call.

# mpip_paths NS / mpip_sessions NS: the path / session table as JSON
mpip_paths() { mpipctl_in "$1" -j show paths; }
mpip_sessions() { mpipctl_in "$1" -j show sessions; }

# many flows (flows.py): test_teardown's flush of thousands of sessions,
# test_reload's reloads while new flows keep coming
FLOWS_PORT=9

# flows_sink NS: a UDP sink on NS's port $FLOWS_PORT in the background
# (killed at exit), so that the flows' datagrams meet a socket rather than
# an ICMP error
flows_sink() {
	local ready pidf
	ready=$(tmpdir)/flows-ready.$1
	pidf=$(tmpdir)/flows-sink.$1.pid
	[[ -f $pidf ]] && return 0
	ip netns exec "$1" python3 -S "$REPO/tests/selftests/flows.py" sink \
		"$FLOWS_PORT" --ready "$ready" </dev/null >/dev/null 2>&1 &
	echo $! >"$pidf"
	wait_for 30 test -e "$ready" || fail "no UDP sink in $1"
}

# flows_send NS ADDR COUNT: COUNT datagrams to ADDR:$FLOWS_PORT, each from
# a new socket: COUNT new flows
flows_send() {
	in_ns "$1" python3 -S "$REPO/tests/selftests/flows.py" send "$2" \
		"$FLOWS_PORT" "$3" >/dev/null || fail "flows.py in $1 sent fewer than $3"
}

# _flows_probe NS ADDR PEER: one more flow; NS knows ADDR:$FLOWS_PORT as
# an MPIP peer's (new flows to it get a session at once), and PEER made a
# session of a flow to its port, so it authenticates NS's CMs.  (NS's
# entry alone may be stale: a flush on PEER after NS's last handshake
# leaves it "yes" until NS finds the peer lost, and the flows sent
# meanwhile go plain when it does.)
_flows_probe() {
	flows_send "$1" "$2" 1
	mpip_avail_is "$1" "$2" "$FLOWS_PORT" yes || return 1
	(($(flows_sessions "$3" in) > 0))
}

# flows_ready NS ADDR PEER: PEER runs the sink, NS knows ADDR's port and
# PEER takes NS's flows to it
flows_ready() {
	flows_sink "$3"
	wait_for 30 _flows_probe "$1" "$2" "$3" ||
		fail "$1 does not know $2:$FLOWS_PORT as an MPIP peer's, or $3 makes no sessions of its flows"
}

# flows_sessions NS [in]: how many of NS's sessions are UDP flows to or
# from port $FLOWS_PORT (with "in": only those to NS's own port)
flows_sessions() {
	mpip_sessions "$1" | jq --argjson p "$FLOWS_PORT" --arg dir "${2:-}" \
		'[.[] | select(.proto == "udp" and
			(.lport == $p or ($dir != "in" and .rport == $p)))] | length'
}

# mpip_path_get NS SADDR DADDR FIELD: one field of the path SADDR -> DADDR
# (as jq prints it raw: a number, a string, true/false or null); fails,
# printing nothing, unless exactly one such path exists and it has FIELD
mpip_path_get() {
	mpip_paths "$1" | jq -er --arg s "$2" --arg d "$3" --arg f "$4" '
		[.[] | select(.saddr == $s and .daddr == $d)] |
		if length == 1 and (.[0] | has($f)) then .[0][$f] | tostring
		else error("no single path \($s) -> \($d) with \($f)") end'
}

# mpip_path_is NS SADDR DADDR STATE...: the path is in one of the STATEs
# (for polling: `wait_for 10 mpip_path_is "$A" 10.1.1.1 10.1.1.2 up`)
mpip_path_is() {
	local st s
	st=$(mpip_path_get "$1" "$2" "$3" state) || return 1
	shift 3
	for s; do
		[[ $st == "$s" ]] && return 0
	done
	return 1
}

# mpip_path_gt NS SADDR DADDR FIELD MIN: the numeric FIELD is > MIN
mpip_path_gt() {
	local v
	v=$(mpip_path_get "$1" "$2" "$3" "$4") || return 1
	[[ $v =~ ^[0-9]+$ ]] && ((v > $5))
}

# mpip_paths_in NS STATE SADDR:DADDR...: each listed path exists and is in
# STATE (one mpipctl call)
mpip_paths_in() {
	local ns=$1 st=$2 want='' p
	shift 2
	for p; do
		want+="${want:+,}[\"${p%%:*}\",\"${p#*:}\"]"
	done
	mpip_paths "$ns" | jq -e --argjson w "[$want]" --arg st "$st" '
		. as $p | all($w[]; . as [$s, $d] |
			any($p[]; .saddr == $s and .daddr == $d and .state == $st))' \
		>/dev/null
}

# mpip_wait_paths_up NS SADDR:DADDR...: wait (up to 20 s) until each listed
# path is up; on failure print the table and fail
mpip_wait_paths_up() {
	local ns=$1
	shift
	if ! wait_for 20 mpip_paths_in "$ns" up "$@"; then
		mpip_paths_show "$ns" >&2 || true
		fail "$ns: paths $* not all up within 20 s"
	fi
}

# mpip_poke NS ADDR PORT: NS sends ADDR:PORT a UDP datagram, so that
# something goes to ADDR's node: a pair that carried no data for
# MPIP_NODE_IDLE (5 s) is idle, and an idle node's paths that are down
# are not probed (heartbeat.c) until something goes to it.  A wait for
# such paths to come back must keep the pair busy so on a machine slow
# enough to let it go idle (the debug kernel's runs).  The first
# datagrams to a port new to NS carry its query (mpip_out_probe()), the
# rest are data once the answer came.  (Not a TCP connection attempt:
# mpip leaves SYNs and RSTs alone, output.c, so that touches no node.)
mpip_poke() {
	ip netns exec "$1" bash -c "echo x >/dev/udp/$2/$3" || true
}

# mpip_poked_paths_up FROM ADDR PORT NS PATH...: FROM pokes ADDR:PORT
# (mpip_poke), then NS's PATHs (as for mpip_paths_in) are all up; for
# wait_for
mpip_poked_paths_up() {
	mpip_poke "$1" "$2" "$3"
	mpip_paths_in "$4" up "${@:5}"
}

# mpip_paths_show NS: the path table, one compact line per path (for
# diagnostics in a subtest's output)
mpip_paths_show() {
	mpip_paths "$1" | jq -r --arg ns "$1" '.[] | "\($ns): \(.saddr) -> \(.daddr) \(.dev) \(.state) w=\(.weight) q=\(.qdelay_us)us maxq=\(.max_qdelay_us)us tx=\(.tx_pkts) rx=\(.rx_pkts) fb=\(.feedback) fb_age=\(.fb_age_ms)"'
}

# mpip_peers_show NS...: each NS's nodes and availability entries, a
# line each, prefixed "NS node:" and "NS avail:" (for the whys of failed
# checks)
mpip_peers_show() {
	local ns
	for ns; do
		mpipctl_in "$ns" show nodes | sed "s/^/$ns node: /" || true
		mpipctl_in "$ns" show avail | sed "s/^/$ns avail: /" || true
	done
}

# mpip_session_json NS PROTO LPORT RPORT: the one session with these ports
# (0 = any) as a JSON object; fails unless exactly one matches
mpip_session_json() {
	mpip_sessions "$1" | jq -ec --arg p "$2" --argjson l "$3" --argjson r "$4" '
		[.[] | select(.proto == $p and ($l == 0 or .lport == $l) and
			($r == 0 or .rport == $r))] |
		if length == 1 then .[0] else error("\(length) sessions match") end'
}

# mpip_stat_ge NS NAME MIN: counter NAME is at least MIN (for polling)
mpip_stat_ge() {
	local v
	v=$(mpip_stat "$1" "$2") || return 1
	((v >= $3))
}

# _mpip_stats_eval LABEL JSON JQ_EXPR: print the counters of JSON that
# JQ_EXPR names (.name), then succeed if JQ_EXPR holds for JSON
# (one jq: the counters, then the verdict, whose value sets the status)
_mpip_stats_eval() {
	local out rc=0
	out=$(jq -ce --arg e "$3" '(. as $s | [$e | scan("\\.([a-z_0-9]+)") | .[0] |
		{(.): $s[.]}] | add), ('"$3"')' <<<"$2") || rc=$?
	echo "$1: ${out%%$'\n'*}"
	return "$rc"
}

# mpip_stats_check NS JQ_EXPR: print NS's counters that JQ_EXPR names
# (.name), then succeed if JQ_EXPR holds for the stats object (one call).
# Example: mpip_stats_check "$A" '.tx_rewrite > 0 and .path_down == 0'
mpip_stats_check() {
	local s
	s=$(mpipctl_in "$1" -j stats) || return 1
	_mpip_stats_eval "$1" "$s" "$2"
}

# mpip_stats_since NS BEFORE JQ_EXPR: as mpip_stats_check, for NS's
# counters now minus those in the file BEFORE (`mpipctl -j stats` output)
# Example: mpip_stats_since "$B" "$T/b0" '.tx_bare > .tx_cm'
mpip_stats_since() {
	local s
	s=$(_mpip_stats_delta "$1" "$2") || return 1
	_mpip_stats_eval "$1 (since)" "$s" "$3"
}

# mpip_stats_moved NS BEFORE: NS's counters that moved since the file
# BEFORE, and by how much (JSON; for a failure or a report to say why)
mpip_stats_moved() {
	local s
	s=$(_mpip_stats_delta "$1" "$2") || return 1
	jq -c 'with_entries(select(.value != 0))' <<<"$s"
}

# _mpip_stats_delta NS BEFORE: NS's counters now minus those in BEFORE
_mpip_stats_delta() {
	local s
	s=$(mpipctl_in "$1" -j stats) || return 1
	jq -c --slurpfile b "$2" 'with_entries(.value -= ($b[0][.key] // 0))' <<<"$s"
}

# ------------------------------------------------------- link counters

# mpip_path_tx NS: "BYTES1 BYTES2", the data bytes NS sent on its paths over
# eth1 and over eth2 (control packets count none)
mpip_path_tx() {
	mpip_paths "$1" | jq -r '
		([.[] | select(.dev == "eth1") | .tx_bytes] | add // 0) as $a |
		([.[] | select(.dev == "eth2") | .tx_bytes] | add // 0) as $b |
		"\($a) \($b)"'
}

# mpip_window_share NS SECONDS: "E1 E2", the data bytes NS sent on its
# paths over eth1 and eth2 in the next SECONDS seconds
mpip_window_share() {
	local a0 b0 a1 b1
	read -r a0 b0 <<<"$(mpip_path_tx "$1")"
	sleep "$2"
	read -r a1 b1 <<<"$(mpip_path_tx "$1")"
	echo "$((a1 - a0)) $((b1 - b0))"
}

# mpip_faster NS DEV: NS measures the one-way delay of its path over DEV 5 ms
# below that of the other link's
mpip_faster() {
	mpip_paths "$1" | jq -e --arg d "$2" '
		([.[] | select(.dev == $d and .have_delay) | .delay_us] | min) as $x |
		([.[] | select(.dev != $d and .have_delay) | .delay_us] | max) as $y |
		$x != null and $y != null and $x + 5000 < $y' >/dev/null
}

# link_bytes NS: "RX1 TX1 RX2 TX2", the byte counters of eth1 and eth2
# (one `ip` call)
link_bytes() {
	local out line name f rx tx r1=0 t1=0 r2=0 t2=0
	out=$(ip -n "$1" -s -o link show) || return 1
	while IFS= read -r line; do
		name=${line#*: }
		name=${name%%[@:]*}
		rx=${line#*RX:*\\}
		read -r -a f <<<"${rx%%\\*}"
		rx=${f[0]}
		tx=${line#*TX:*\\}
		read -r -a f <<<"${tx%%\\*}"
		tx=${f[0]}
		case $name in
		eth1) r1=$rx t1=$tx ;;
		eth2) r2=$rx t2=$tx ;;
		esac
	done <<<"$out"
	echo "$r1 $t1 $r2 $t2"
}

# capture_start NS DEV NAME FILTER: tcpdump on NS's DEV in the background
# into $T/NAME.pcap (the first CAPTURE_SNAP bytes of each packet, default
# 256; 0: whole packets); returns once its capture socket is open
capture_start() {
	ip netns exec "$1" tcpdump -i "$2" -nn -U -s "${CAPTURE_SNAP:-256}" -B 32768 \
		-w "$T/$3.pcap" "$4" \
		</dev/null >/dev/null 2>"$T/$3.log" &
	echo $! >"$T/$3.pid"
	wait_for 30 grep -q 'listening on' "$T/$3.log" || {
		cat "$T/$3.log"
		fail "tcpdump did not start on $1/$2"
	}
}

# capture_stop NAME: stop capture NAME (after a second for what is in
# flight)
capture_stop() {
	local pid
	pid=$(cat "$T/$1.pid")
	sleep 1
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# capture_packets NAME [FILTER]: how many packets capture NAME holds that
# match FILTER (default: all)
capture_packets() {
	local out
	out=$(tcpdump -nn -r "$T/$1.pcap" ${2:+"$2"} 2>/dev/null) ||
		fail "cannot read capture $1"
	if [[ -z $out ]]; then
		echo 0
	else
		wc -l <<<"$out"
	fi
}

# capture_count NAME: stop capture NAME, print the packets it holds
capture_count() {
	capture_stop "$1"
	capture_packets "$1"
}

# dev_rx_grew NS DEV BEFORE MIN: DEV's rx byte counter grew by more than
# MIN since it read BEFORE (a command for wait_for)
dev_rx_grew() {
	local now
	now=$(rx_bytes "$1" "$2") || return 1
	((now - $3 > $4))
}

# shares_ok LABEL B1 B2 MIN_PCT: print how two byte counts (eth1, eth2)
# split, succeed if each is at least MIN_PCT % of their sum
shares_ok() {
	local label=$1 b1=$2 b2=$3 pct=$4 sum
	sum=$((b1 + b2))
	if ((sum == 0)); then
		echo "$label: no bytes at all"
		return 1
	fi
	echo "$label: eth1 $b1 B ($((100 * b1 / sum))%), eth2 $b2 B ($((100 * b2 / sum))%)"
	((b1 * 100 >= sum * pct && b2 * 100 >= sum * pct))
}

# mpip_spread SRC DST MIN_PCT CMD [ARG...]: run CMD (a transfer from host
# SRC to host DST), then check that SRC's eth1 and eth2 each sent, and
# DST's eth1 and eth2 each received, at least MIN_PCT % of the bytes the
# two interfaces carried together while CMD ran.  Returns 1 if one did
# not; fails the subtest if CMD fails.
mpip_spread() {
	local src=$1 dst=$2 pct=$3 t1 t2 r1 r2 x1 x2 y1 y2 bad=0
	shift 3
	read -r _ t1 _ t2 <<<"$(link_bytes "$src")"
	read -r r1 _ r2 _ <<<"$(link_bytes "$dst")"
	"$@" || fail "transfer failed: $*"
	read -r _ x1 _ x2 <<<"$(link_bytes "$src")"
	read -r y1 _ y2 _ <<<"$(link_bytes "$dst")"
	shares_ok "$src tx" $((x1 - t1)) $((x2 - t2)) "$pct" || bad=1
	shares_ok "$dst rx" $((y1 - r1)) $((y2 - r2)) "$pct" || bad=1
	if ((bad)); then
		echo "an interface carried less than $pct% of the bytes" >&2
		return 1
	fi
}

# mpip_shape NS DEV RATE DELAY LIMIT: netem on DEV's egress with a short
# queue of LIMIT packets (topo.sh netem keeps netem's 1000, which at a few
# Mbit/s is seconds of queue)
mpip_shape() {
	tc -n "$1" qdisc replace dev "$2" root netem delay "$4" rate "$3" limit "$5"
}

# -------------------------------------------------- background transfers

# tcp_stream_bg NS_SRC NS_DST DST_ADDR PORT BLOCK OUT: start a TCP stream
# of copies of the file BLOCK in the background, received into OUT; it
# lasts until tcp_stream_end (so a test need not guess how long a transfer
# of a given size takes).  The receiver checks the data as it comes
# (streamcheck.py) and keeps none: OUT is a sparse file as long as the
# bytes received, which tests watch.  Returns once the receiver listens
# and the sender runs.  Each end writes its exit status to OUT.rrc / OUT.src and its
# messages to OUT.rlog / OUT.slog (files only: see tcp_send_file); both
# run in the namespaces, so `topo.sh clean` ends them if the test does not.
# Both ends give up after 280 and 270 s, times MPIP_TEST_WAIT_SCALE (on
# the debug kernel test_failover's stream ended by that limit once).
tcp_stream_bg() {
	local src=$1 dst=$2 addr=$3 port=$4 block=$5 out=$6
	local k=${MPIP_TEST_WAIT_SCALE:-1}
	rm -f "$out" "$out.rrc" "$out.src" "$out.rlog" "$out.slog" "$out.stop"
	# (the sh -c scripts take their values as "$1"...: single quotes wanted)
	# shellcheck disable=SC2016
	ip netns exec "$dst" bash -c 'set -o pipefail
		timeout "$3" socat -u "TCP-LISTEN:$1,reuseaddr" - |
			python3 -S "$4" "$5" "$2"; echo $? >"$2.rrc"' \
		bash "$port" "$out" $((280 * k)) "$REPO/tests/selftests/streamcheck.py" "$block" \
		</dev/null >"$out.rlog" 2>&1 &
	wait_for 30 tcp_listening "$dst" "$port" ||
		fail "nothing listens on $dst:$port"
	# shellcheck disable=SC2016
	ip netns exec "$src" sh -c 'while [ ! -e "$1.stop" ]; do cat "$2" || exit 1; done |
		timeout "$5" socat -u - "TCP:$3:$4"; echo $? >"$1.src"' \
		sh "$out" "$block" "$addr" "$port" $((270 * k)) </dev/null >"$out.slog" 2>&1 &
	return 0
}

# tcp_stream_done OUT: both ends of the stream into OUT have exited
tcp_stream_done() { [[ -s $1.rrc && -s $1.src ]]; }

# tcp_stream_end BLOCK OUT TIMEOUT: stop the sender after its current copy
# of BLOCK, wait for both ends to exit 0 (the receiver's 0: every byte was
# BLOCK's), and check that the stream was a whole number of copies
tcp_stream_end() {
	local block=$1 out=$2 t=$3 s r size bsize n
	touch "$out.stop"
	if ! wait_for "$t" tcp_stream_done "$out"; then
		cat "$out.slog" "$out.rlog" >&2 2>/dev/null
		fail "TCP stream into $out not finished ${t}s after the stop ($(file_size "$out") bytes arrived)"
	fi
	s=$(cat "$out.src")
	r=$(cat "$out.rrc")
	cat "$out.slog" "$out.rlog" >&2 2>/dev/null
	[[ $s == 0 ]] || fail "TCP stream sender for $out exited $s"
	[[ $r == 0 ]] || fail "TCP stream receiver for $out exited $r (1: the data differ)"
	size=$(file_size "$out")
	bsize=$(file_size "$block")
	n=$((size / bsize))
	echo "stream: $size bytes, $n copies of $bsize"
	((n > 0 && n * bsize == size)) || fail "stream of $size bytes is not whole copies of $bsize"
}

# file_size FILE: its size in bytes (0 if it does not exist)
file_size() {
	if [[ -e $1 ]]; then stat -c %s "$1"; else echo 0; fi
}

# file_grew FILE BEFORE MIN: FILE grew by more than MIN bytes since BEFORE
file_grew() {
	(($(file_size "$1") - $2 > $3))
}

# udp_stream NS_SRC NS_DST DST_ADDR PORT COUNT SPORT GAP_US: udp_exchange
# with GAP_US microseconds between datagrams, so that a stream can be made
# to last a few seconds
udp_stream() {
	udp_exchange "$@"
}

# loss_counters RECEIVER NS...: where lost datagrams may have gone: each
# NS's mpip counters that are not 0, then RECEIVER's IP and UDP input
# counters (for a test's report when datagrams were lost)
loss_counters() {
	local rcv=$1 ns
	shift
	for ns in "$@"; do
		echo "$ns: counters not 0: $(mpipctl_in "$ns" -j stats |
			jq -c 'with_entries(select(.value != 0))')" || true
	done
	echo "$rcv: $(in_ns "$rcv" nstat -az UdpInDatagrams UdpRcvbufErrors UdpInErrors \
		UdpNoPorts IpInDiscards IpInHdrErrors | awk 'NR > 1 { printf "%s %s ", $1, $2 }')" || true
}

# tcp_spread SRC DST ADDR PORT: send the test's file $T/file over TCP; it
# must arrive intact with each link carrying at least $MIN_PCT% of it
tcp_spread() {
	local out=$T/out.$4
	mpip_spread "$1" "$2" "$MIN_PCT" tcp_send_file "$1" "$2" "$3" "$4" "$T/file" "$out"
	sha256_equal "$T/file" "$out" || fail "received file differs"
}

# udp_spread SRC DST ADDR PORT SPORT: 1000 datagrams, exact and spread as
# in tcp_spread
udp_spread() {
	mpip_spread "$1" "$2" "$MIN_PCT" udp_exchange "$1" "$2" "$3" "$4" 1000 "$5"
}

# mpipctl monitor in the background (test_monitor, test_backup)

# genl_members NS: how many generic netlink sockets of NS are members of
# a multicast group (first 32 groups: the Groups column of
# /proc/net/netlink)
genl_members() {
	in_ns "$1" cat /proc/net/netlink | awk '$2 == 16 && $4 != "00000000"' | wc -l
}

# genl_listening NS N: at least N such sockets
genl_listening() { (($(genl_members "$1") >= $2)); }

# mon_start NS FILE [ARGS]: mpipctl ARGS monitor in NS, in the background,
# writing to FILE (its pid in FILE.pid: lib.sh kills it at exit); returns
# once it listens
mon_start() {
	local ns=$1 out=$2 n
	shift 2
	n=$(genl_members "$ns")
	# appending: the file may be emptied while the monitor writes to it
	in_ns "$ns" "$MPIPCTL" "$@" monitor >>"$out" 2>"$out.err" &
	echo $! >"$out.pid"
	wait_for 15 genl_listening "$ns" $((n + 1)) ||
		fail "mpipctl monitor not listening after 15 s: $(cat "$out.err")"
}

mon_stop() { kill "$(cat "$1.pid")" 2>/dev/null || true; }

# mon_has FILE JQ: some line of FILE (JSON) matches JQ
mon_has() { jq -e -s "any(.[]; $2)" "$1" >/dev/null; }

# ------------------------------------------------------------- strangers

# mpip_hang_off HOST NS DEV N: a new namespace NS on a veth link of its
# own to namespace HOST, HOST's end DEV with 10.1.N.2, NS's end eth0 with
# 10.1.N.N, HOST its gateway
mpip_hang_off() {
	ip netns add "$2"
	cleanup_push ip netns del "$2"
	ip link add "$3" netns "$1" type veth peer name eth0 netns "$2"
	ip -n "$1" addr add "10.1.$4.2/24" dev "$3"
	ip -n "$2" addr add "10.1.$4.$4/24" dev eth0
	ip -n "$1" link set "$3" up
	ip -n "$2" link set eth0 up
	ip -n "$2" link set lo up
	ip -n "$2" route add default via "10.1.$4.2"
}

# mpip_flood_reaches NS PID Q0: wait until NS counts a query past Q0
# (rx_query): the flood of process PID reached it.  Making the queries
# first takes the flooder 10-30 s in a guest under emulation, and more
# than a minute on a loaded machine (a fixed wait for the flood's effect
# ran out once before it began), so this waits for as long as the flood
# runs, up to 600 s; fails if it ended first
mpip_flood_reaches() {
	local end=$((SECONDS + 600 * ${MPIP_TEST_WAIT_SCALE:-1}))
	until mpip_stat_ge "$1" rx_query $(($3 + 1)); do
		if ! kill -0 "$2" 2>/dev/null; then
			mpip_stat_ge "$1" rx_query $(($3 + 1)) && return 0
			fail "the flood ended before a query of it reached $1"
		fi
		((SECONDS < end)) || fail "no query of the flood reached $1 in 600 s"
		sleep 1
	done
}

# mpip_query_flood NS SRC DST N [FROM] [RATE] [STOP]: a stranger's flood,
# from namespace NS: N first queries (UDP to port 6100) to DST, each with
# a key of its own, from random ports of NS's address SRC; with FROM
# "forged", from the 240 addresses .10-.249 of SRC's /24 in turn; with
# FROM a file of "ADDR PORT" lines, from those endpoints in turn; at RATE
# a second (default: as fast as they go); with a file STOP, the N queries
# over and over until STOP exists or its directory is gone, 20 times at
# most (a key comes back after N / RATE seconds, by when its node
# expired: a new one again); prints how many went out and in how many
# seconds, from the first to the last (not counting the making).  Two
# processes make half of the queries each, then send them: the
# receiver's part of each runs in its sender's softirq, on that CPU.
# (Made as they went, by one process, they reached the receiver at 680
# a second on the release kernel and at 100-230 on the debug kernel;
# made by one process first, 20,000 took some 50 s under emulation.)
mpip_query_flood() {
	in_ns "$1" /usr/bin/python3 - "$REPO/tests/scapy" "$2" "$3" "$4" "${5:-}" "${6:-0}" \
		"${7:-}" <<'PY'
import itertools, os, random, socket, struct, sys, time
sys.path.insert(0, sys.argv[1])
import mpip_cm
me, to = sys.argv[2], sys.argv[3]
n, frm, rate, stop = (int(sys.argv[4]), sys.argv[5], int(sys.argv[6]),
                      sys.argv[7])
procs = 2
rate /= procs  # queries a second, each sender (0: no limit)
eps = []
if frm and frm != "forged":
    eps = [(socket.inet_aton(a), int(p)) for a, p in
           (line.split() for line in open(frm))]
src, dst = socket.inet_aton(me), socket.inet_aton(to)
net = me.rsplit(".", 1)[0]
payload = b"flood"
# one query's trailer; each query puts its own key in its extension,
# summing as a UDP trailer there does (wire-format.rst)
tmpl = mpip_cm.first_query(0, 1)
tl = len(tmpl)
target = mpip_cm.udp_sum(tl, 8 + len(payload))
rfd, wfd = os.pipe()
kid = 0
for k in range(1, procs):
    if os.fork() == 0:
        kid = k
        random.seed()  # keys of its own, not its parent's
        break
mine = []
for i in range(kid, n, procs):
    sport = random.randint(1024, 65535)
    if frm == "forged":
        src = socket.inet_aton("%s.%d" % (net, 10 + i % 240))
    elif eps:
        src, sport = eps[i % len(eps)]
    key = random.getrandbits(64) | 1
    t = mpip_cm.with_ext(tmpl, struct.pack("!QI", key, 0), target)
    udp = struct.pack("!HHHH", sport, 6100, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + tl,
                     i & 0xffff, 0, 64, 17, 0, src, dst)
    mine.append(ip + udp + t)
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
sent, start = 0, time.monotonic()
if not kid:
    t0 = start
todo = itertools.islice(itertools.cycle(mine), 20 * len(mine)) if stop else mine
for i, p in enumerate(todo):
    if stop and i % 50 == 0 and (os.path.exists(stop) or
                                 not os.path.isdir(os.path.dirname(stop))):
        break
    ahead = i / rate - (time.monotonic() - start) if rate else 0
    if ahead > 0.01:
        time.sleep(ahead)
    try:
        s.sendto(p, (to, 0))
        sent += 1
    except OSError:
        pass
if kid:
    os.write(wfd, b"%d\n" % sent)
    os._exit(0)
os.close(wfd)
for _ in range(1, procs):
    os.wait()
print(sent + sum(int(x) for x in os.read(rfd, 4096).split()),
      "%.2f" % (time.monotonic() - t0))
PY
}
