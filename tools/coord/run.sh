#!/usr/bin/env bash
# tools/coord/run.sh - two competing applications over the two-link lab,
# routed in a coordinated way (paper section 5.2.2, Fig. 8; issue 22).
# Runs as root in the VM:
#
#   tools/vm.sh -- tools/coord/run.sh OUT [--phase SECONDS] [--reps N] [MODE...]
#
# Two links of 2 Mbit/s (COORD_RATE), link 1 5 ms one-way and link 2
# 25 ms (the paper's 20 ms more on one path), each with a queue of 50
# packets (COORD_LIMIT; about 300 ms at 2 Mbit/s, netem's default of
# 1000 would be 6 s).  Host b sends two applications' data to a:
#
#   stream  tools/bench/stream.py, 1000-byte messages at 1 Mbit/s
#           (COORD_STREAM_RATE), over UDP: a live stream, what the
#           queues cannot hold is lost and nothing waits at the sender;
#           COORD_STREAM_PROTO=tcp: over TCP, as the paper's video,
#           whose backlog carries over from one phase into the next
#   bulk    a download, stream.py unpaced over TCP, 8000-byte messages,
#           cancelled at the end of the second phase
#
# Both start 3 s before the first of three phases of --phase seconds
# (default 30):
#
#   all     both applications, every packet over all paths by weight
#   coord   rules on both hosts: the stream's packets on link 1, the
#           short path, the download's on link 2 (mode selected dev
#           eth1, dev eth2)
#   alone   the download is over; the stream alone, rules kept
#
# Modes (both by default): off (no mpip: everything on link 1, the
# flows' own addresses; no rules in phase coord) and mpip.
#
# --reps N (default 1) runs the modes N times, in turn (off, mpip, off,
# mpip, ...), into OUT/r1/MODE/ to OUT/rN/MODE/; one run goes to
# OUT/MODE/.  Each such directory holds run.json (what ran, the phases' start times on the
# clock of the messages' timestamps, CLOCK_MONOTONIC, and each link's
# bytes b sent by then), stream.txt and bulk.txt (stream.py's receiver
# files: each message's send time and one-way delay).  tools/coord/analyze.py makes the figures.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd -P)
# the lab's helpers: lab_mpip_load, and MPIPCTL, MPIP_KO (their defaults)
# shellcheck source=tools/bench/lib.sh
source "$REPO/tools/bench/lib.sh"
TOPO=$LAB_TOPO
STREAM=$REPO/tools/bench/stream.py
PY=$LAB_PY
P=crd
A=${P}a
B=${P}b
PHASE=30
RATE=${COORD_RATE:-2mbit}
STREAM_RATE=${COORD_STREAM_RATE:-1000000}
STREAM_PORT=6100
STREAM_PROTO=${COORD_STREAM_PROTO:-udp}
BULK_PORT=5201
WARM=3
LIMIT=${COORD_LIMIT:-50}

log() { printf 'coord: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "$0" >&2
	exit 2
}

mono_ns() { "$PY" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }

in_ns() { ip netns exec "$@"; }

# sleep_until E0 S: sleep until S seconds after E0 (an $EPOCHREALTIME)
sleep_until() {
	local left
	left=$(awk -v e0="$1" -v s="$2" -v now="$EPOCHREALTIME" 'BEGIN { d = e0 + s - now; print (d > 0 ? d : 0) }')
	sleep "$left"
}

# since_ns T0 E0: CLOCK_MONOTONIC now, in ns, as T0 (that clock when
# $EPOCHREALTIME read E0) plus the time since; no process to start, which
# under TCG takes long
since_ns() {
	awk -v t0="$1" -v e0="$2" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", t0 + (now - e0) * 1e9 }'
}

# link_bytes: b's bytes sent on eth1 and eth2, "N1 N2" (one process)
link_bytes() {
	in_ns "$B" cat /sys/class/net/eth1/statistics/tx_bytes \
		/sys/class/net/eth2/statistics/tx_bytes | paste -sd' '
}

# recv_start PROTO PORT NAME DIR SIZE: a stream.py receiver of SIZE-byte
# messages on a's PORT, its file DIR/NAME.txt, in the background; its PID
# in recv_pid (ip netns exec execs it: a signal reaches it)
recv_start() {
	rm -f "$4/$3.ready"
	ip netns exec "$A" "$PY" "$STREAM" recv --proto "$1" --port "$2" \
		--out "$4/$3.txt" --ready "$4/$3.ready" --size "$5" &
	recv_pid=$!
	wait_file "$4/$3.ready" || die "$3: receiver not ready"
}

# coord_rules: the stream on link 1, the short path, the download on
# link 2, as the paper assigns them, on both hosts (b sends the data, a
# the ACKs)
coord_rules() {
	in_ns "$B" "$MPIPCTL" rule add pref 10 proto "$STREAM_PROTO" dport "$STREAM_PORT" mode selected dev eth1
	in_ns "$B" "$MPIPCTL" rule add pref 20 proto tcp dport "$BULK_PORT" mode selected dev eth2
	in_ns "$A" "$MPIPCTL" rule add pref 10 proto "$STREAM_PROTO" sport "$STREAM_PORT" mode selected dev eth1
	in_ns "$A" "$MPIPCTL" rule add pref 20 proto tcp sport "$BULK_PORT" mode selected dev eth2
}

# wait_file FILE: FILE exists within 30 s
wait_file() {
	local i
	for ((i = 0; i < 300; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# run_mode MODE DIR: the three phases in a fresh lab
run_mode() {
	local mode=$1 dir=$2 ns t0 t1 t2 t3 e0 b0 b1 b2 b3 rpid spid bpid bpid_r
	mkdir -p "$dir"
	"$TOPO" clean --prefix "$P" >/dev/null 2>&1 || true
	"$TOPO" twolink --prefix "$P" --link1 "$RATE,5ms" --link2 "$RATE,25ms"
	for ns in "$A" "$B"; do
		in_ns "$ns" tc qdisc replace dev eth1 root netem delay 5ms rate "$RATE" limit "$LIMIT"
		in_ns "$ns" tc qdisc replace dev eth2 root netem delay 25ms rate "$RATE" limit "$LIMIT"
	done
	for ns in "$A" "$B"; do
		if [[ $mode == mpip ]]; then
			in_ns "$ns" "$MPIPCTL" enable
		elif [[ -d /sys/module/mpip ]]; then
			in_ns "$ns" "$MPIPCTL" disable
		fi
	done
	recv_start "$STREAM_PROTO" "$STREAM_PORT" stream "$dir" 1000
	rpid=$recv_pid
	recv_start tcp "$BULK_PORT" bulk "$dir" 8000
	bpid_r=$recv_pid
	# warm up: the handshake and the paths, before either application
	in_ns "$B" ping -q -c 3 -i 0.3 10.1.1.1 >/dev/null || true
	sleep 2

	in_ns "$B" "$PY" "$STREAM" send --proto "$STREAM_PROTO" 10.1.1.1 "$STREAM_PORT" \
		--rate "$STREAM_RATE" --seconds $((3 * PHASE + WARM)) &
	spid=$!
	# (ip itself, not in_ns: $! is then the sender, which the kill below
	# must reach, not a subshell)
	ip netns exec "$B" "$PY" "$STREAM" send --proto tcp 10.1.1.1 "$BULK_PORT" \
		--rate 0 --size 8000 --seconds $((4 * PHASE + WARM)) --abort &
	bpid=$!
	sleep "$WARM"
	b0=$(link_bytes)
	t0=$(mono_ns)
	e0=$EPOCHREALTIME
	sleep_until "$e0" "$PHASE"
	t1=$(since_ns "$t0" "$e0")
	b1=$(link_bytes)
	if [[ $mode == mpip ]]; then
		coord_rules
		in_ns "$B" "$MPIPCTL" show rules >"$dir/rules.txt"
	fi
	sleep_until "$e0" $((2 * PHASE))
	# the download is cancelled: what it queued goes too
	kill -TERM "$bpid"
	t2=$(since_ns "$t0" "$e0")
	b2=$(link_bytes)
	wait "$bpid" || die "$mode: bulk sender failed"
	sleep_until "$e0" $((3 * PHASE))
	t3=$(since_ns "$t0" "$e0")
	b3=$(link_bytes)
	wait "$spid" || die "$mode: stream sender failed"
	# a UDP receiver waits for more until told; a TCP one ends with the
	# connection
	if [[ $STREAM_PROTO == udp ]]; then
		sleep 2
		kill -TERM "$rpid"
	fi
	wait "$rpid" || die "$mode: stream receiver failed"
	wait "$bpid_r" || die "$mode: bulk receiver failed"
	if [[ $mode == mpip ]]; then
		in_ns "$B" "$MPIPCTL" -j show rules >"$dir/rules.json" || true
		in_ns "$B" "$MPIPCTL" -j show paths >"$dir/paths.json" || true
	fi
	cat >"$dir/run.json" <<-EOF
	{"mode": "$mode", "phase_s": $PHASE, "rate": "$RATE",
	 "link1": "$RATE,5ms", "link2": "$RATE,25ms",
	 "stream_proto": "$STREAM_PROTO", "stream_rate_bps": $STREAM_RATE,
	 "stream_size": 1000, "bulk_size": 8000,
	 "warm_s": $WARM, "netem_limit": $LIMIT,
	 "kernel": "$(uname -r)", "date": "$(date -u +%FT%TZ)",
	 "t_ns": [$t0, $t1, $t2, $t3],
	 "b_tx_bytes": [[${b0// /, }], [${b1// /, }], [${b2// /, }], [${b3// /, }]]}
	EOF
	"$TOPO" clean --prefix "$P" >/dev/null 2>&1 || true
	log "$mode: done"
}

main() {
	local out modes=() m reps=1 k dir
	[[ $# -ge 1 ]] || usage
	out=$1
	shift
	while (($#)); do
		case $1 in
		--phase) PHASE=$2; shift 2 ;;
		--reps) reps=$2; shift 2 ;;
		-h | --help) usage ;;
		off | mpip) modes+=("$1"); shift ;;
		*) usage ;;
		esac
	done
	((${#modes[@]})) || modes=(off mpip)
	[[ $PHASE =~ ^[1-9][0-9]*$ ]] || die "--phase: a number of seconds, not '$PHASE'"
	[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps: a number of runs, not '$reps'"
	[[ $(id -u) == 0 ]] || die "run as root (in the VM: tools/vm.sh -- $0 ...)"
	for m in "${modes[@]}"; do
		[[ $m == mpip ]] && { lab_mpip_load || die "cannot load $MPIP_KO"; }
	done
	mkdir -p "$out"
	for ((k = 1; k <= reps; k++)); do
		dir=$out
		((reps == 1)) || dir=$out/r$k
		for m in "${modes[@]}"; do
			log "$m: three phases of $PHASE s (run $k of $reps)"
			run_mode "$m" "$dir/$m"
		done
	done
}

main "$@"
