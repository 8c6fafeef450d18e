# shellcheck shell=bash
# tests/selftests/stress_lib.sh - shared by test_teardown.sh and
# test_unload.sh: two MPIP hosts with long iperf3 runs both ways over two
# links whose delays differ by 40 ms, so that the receivers hold segments
# in their reorder buffers while the tests tear state down.  Needs lib.sh,
# mpip_lib.sh and mpip_setup_twolink's globals.

# the iperf3 runs: long enough for any test (they are stopped at its end),
# so longer than test_teardown's time limit (1200 s): in a loaded run it
# took 1125 s, and runs of 1000 s ended before its gc_expiry_under_load
# and flows_survived; as long again as the waits are scaled
# (MPIP_TEST_WAIT_SCALE): on the debug kernel test_unload's namespace
# deletions alone took 1140-1216 s, and runs of 1000 s had ended before
# the subtests after them
DURATION=$((1500 * ${MPIP_TEST_WAIT_SCALE:-1}))
PARALLEL=3
# ... as fast as they go, but on the debug kernel (its data divided,
# MPIP_TEST_DATA_DIV > 1) at 1 Mbit/s a stream: there every freed buffer
# queues an RCU callback (kmemleak), slow ones (debug objects, lockdep),
# and runs that keep both CPUs busy left the callbacks so far behind
# that a synchronize_rcu() (a qdisc's lockdep key, under RTNL) waited
# for as long as they ran, over 30 min once; it returned within seconds
# of their end (debug-kernel.rst).  A few hundred packets a second still
# cross both links and fill the reorder buffers.
# Elsewhere (release kernel under TCG) 4 Mbit/s a stream, 12 a direction:
# unpaced, the runs took ~60 % of the guests' CPU time for themselves
# (process accounting: 490 of 800 CPU-s of test_teardown), slowing every
# step they were the load for; a few hundred packets a second is what the
# held segments need (see above), and `flowing` asks 500 kB in 60 s.
RATE=(-b 4M)
((${MPIP_TEST_DATA_DIV:-1} == 1)) || RATE=(-b 1M)

# shape LAB_A LAB_B: link 1 slow and long, link 2 short
shape() {
	"$TOPO" netem "$1" eth1 40mbit,42ms,-
	"$TOPO" netem "$2" eth1 40mbit,42ms,-
	"$TOPO" netem "$1" eth2 20mbit,2ms,-
	"$TOPO" netem "$2" eth2 20mbit,2ms,-
}

# iperf_start SRC DST ADDR PORT [ARG...]: a long iperf3 run in the background
iperf_start() {
	local src=$1 dst=$2 addr=$3 port=$4 log
	shift 4
	log=$T/iperf.$src.$port
	iperf3_server_start "$dst" "$port" || fail "no iperf3 server in $dst"
	ip netns exec "$src" iperf3 -c "$addr" -p "$port" -t "$DURATION" \
		-P "$PARALLEL" "${RATE[@]}" -i 1 --forceflush "$@" </dev/null >"$log" 2>&1 &
	echo $! >"$log.pid"
	wait_for 20 grep -q 'sec' "$log" || { cat "$log"; fail "iperf3 $src -> $addr:$port shows no progress"; }
}

# held NS: segments held in NS's reorder buffers so far
held() { mpip_stat "$1" reorder_held; }

# holding NS BEFORE: NS held more segments since its count was BEFORE
holding() { (($(held "$1") > $2)); }

# holding_any NS BEFORE [NS BEFORE]...: one of them holding
holding_any() {
	while (($# >= 2)); do
		holding "$1" "$2" && return 0
		shift 2
	done
	return 1
}

# stress_why: both hosts' paths and the counters that tell why traffic
# did not do what a check waited for
stress_why() {
	local ns
	for ns in "$A" "$B"; do
		mpip_paths_show "$ns" || true
		mpip_peers_show "$ns"
		mpipctl_in "$ns" show sessions | sed "s/^/$ns session: /" || true
		mpipctl_in "$ns" -j stats | jq -c --arg ns "$ns" '{ns: $ns,
			peer_lost, path_up, path_down, rr_verified, rr_held,
			rx_auth_fail, rx_replay, rx_plain, tx_query, rx_confirm,
			reorder_held, reorder_timeout}' || true
		# the stress flows' sockets: a stalled one shows its backoff
		in_ns "$ns" ss -tin state established '( sport >= :5201 and sport <= :5299 ) or ( dport >= :5201 and dport <= :5299 )' |
			sed "s/^/$ns ss: /" | head -n 24 || true
	done
}

# flowing NS DEV: NS's DEV receives more than 500 kB within 60 s; if not,
# stress_why.  Not sooner: each flush or disable costs the flows the
# packets their peer moved to other paths until it finds the keys lost
# (peer_timeout_ms, 3 s), and after a few such rounds TCP's
# retransmission timer has backed off to several seconds (seen: an
# iperf3 run that sent nothing for over 20 s, the tables all right).
flowing() {
	local before
	before=$(rx_bytes "$1" "$2")
	wait_for 60 dev_rx_grew "$1" "$2" "$before" 500000 || {
		stress_why
		fail "$1 $2: less than 500 kB arrived within 60 s"
	}
}

# wait_holding NS...: one of the NSs holds segments again (the stress
# meets held ones)
wait_holding() {
	local ns
	local -a before=()
	for ns; do
		before+=("$ns" "$(held "$ns")")
	done
	wait_for 30 holding_any "${before[@]}" || {
		stress_why
		fail "$(date +%T) $* held no segment within 30 s"
	}
}

# t_start: both runs going, both hosts holding segments
t_start() {
	shape "$A" "$B"
	mpip_twolink_warm_up
	iperf_start "$A" "$B" 10.1.1.2 5201
	iperf_start "$B" "$A" 10.1.1.1 5202
	wait_holding "$B"
	wait_holding "$A"
	echo "held so far: A $(held "$A"), B $(held "$B")"
}

# t_survived: both runs survived, and a new transfer is intact
t_survived() {
	local f pid
	# the lab's own runs (test_unload's extra labs are gone with theirs)
	for f in "$T/iperf.$A".*.pid "$T/iperf.$B".*.pid; do
		pid=$(cat "$f")
		kill -0 "$pid" || { cat "${f%.pid}"; fail "iperf3 ${f%.pid} exited early"; }
		! grep -qi 'error' "${f%.pid}" || fail "iperf3 ${f%.pid} reported an error"
		kill -INT "$pid"
		wait_for 10 bash -c "! kill -0 $pid" || kill -KILL "$pid"
	done
	random_file "$T/last" 2
	tcp_send_file "$A" "$B" 10.1.1.2 5501 "$T/last" "$T/last.out"
	sha256_equal "$T/last" "$T/last.out" || fail "final transfer differs"
}
