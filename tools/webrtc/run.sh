#!/usr/bin/env bash
# tools/webrtc/run.sh - WebRTC calls over the two-link lab, with and without
# mpip (paper section 5.1.2, Fig. 5; issue 22).  Runs as root in the VM:
#
#   tools/vm.sh -- tools/webrtc/run.sh OUT [--seconds N] [--reps N] [SCENARIO...]
#
# Each run is a call (tools/webrtc/call.py) from a to b: synthetic VP8
# video and Opus audio, ICE on the link-1 addresses only (what a host
# without multipath uses), with packet captures at both ends for the
# one-way delay of every RTP packet.  The video (WEBRTC_VIDEO, call.py's
# --video): "ladder" (the default), encoded on the host ahead of the call
# at several rates, OUT/ladder.pkl (tools/webrtc/ladder.py), from which
# the sender takes for each frame the rate aiortc's congestion control
# allows; "pattern" or "noise", encoded live in the guest, which under
# TCG manages 10-12 frames a second (WEBRTC_SIZE=WxH: their size,
# default 320x240).  Scenarios (all by default):
#
#   fail    two 10 Mbit/s links, 10 ms; at 1/3 of the call link 1 loses
#           every packet, both ways: off (no mpip) vs mpip
#   rate    two 1 Mbit/s links (WEBRTC_RATE), 10 ms: video rate, off vs mpip
#           (every scenario: WEBRTC_STOCK_ESTIMATOR=1 runs the receiver's
#           bitrate estimator as aiortc ships it, without call.py's
#           fix_interarrival_reorder(); WEBRTC_LOOP_ARRIVAL=1 times its
#           packets when the event loop reads them, as aiortc does, not
#           by the kernel's receive time, call.py's fix_arrival_time())
#   delay   links of 50 ms and 80 ms one-way delay (10 Mbit/s): off (the
#           call on link 1, the short path, alone), mpip with all paths,
#           and mpip with a rule that puts the audio (marked DSCP EF,
#           audio_ef) on the lowest-delay path (mode single) and the rest
#           on all
#
# OUT/SCENARIO-MODE-REP/ holds run.json (what ran, and the failure time),
# send.json and recv.json (call.py's per-second samples; send.json also
# the offer's SDP and the RTP send log), b.pcap (the receiver's UDP
# headers) and paths.jsonl (a's path table twice a second: weights and
# delays; empty lists without mpip).  tools/webrtc/analyze.py makes the
# figures.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd -P)
# the lab's helpers: lab_mpip_load, and MPIPCTL, MPIP_KO (their defaults)
# shellcheck source=tools/bench/lib.sh
source "$REPO/tools/bench/lib.sh"
TOPO=$LAB_TOPO
CALL=$REPO/tools/webrtc/call.py
PY=$LAB_PY
P=wrt
A=${P}a
B=${P}b
SECONDS_CALL=45
REPS=1

log() { printf 'webrtc: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

# audio_ef NS: NS's Opus packets leave with DSCP EF (46), as WebRTC
# stacks mark audio (RFC 8837); aiortc marks nothing, so nftables does it
# for it: RTP version 2, payload type 96 (aiortc's Opus), before mpip's
# output hook (mangle priority).  The other packets of the bundled flow
# (VP8 97, its RTX 98, RTCP, STUN, DTLS) keep DSCP 0.  A length rule
# (len 0-600, the first version of this) also took the small last packet
# of many video frames to the short path, ahead of the rest of the frame.
audio_ef() {
	ip netns exec "$1" nft -f - <<-'NFT'
		table inet wrtef {
			chain out {
				type filter hook output priority mangle;
				meta l4proto udp @th,64,2 2 @th,73,7 96 ip dscp set ef
			}
		}
	NFT
}

# lab LINK1 LINK2 MODE: a fresh twolink lab, mpip on (mpip, mpip-rule) or
# off in both hosts; mpip-rule: Opus marked EF (audio_ef) and the rule
# "proto udp dscp 46 mode single" in both
lab() {
	local ns
	"$TOPO" clean --prefix "$P" 2>/dev/null || true
	"$TOPO" twolink --prefix "$P" --link1 "$1" --link2 "$2"
	for ns in "$A" "$B"; do
		case $3 in
		mpip*) ip netns exec "$ns" "$MPIPCTL" enable >/dev/null ;;
		off) ip netns exec "$ns" "$MPIPCTL" disable >/dev/null ;;
		esac
	done
	if [[ $3 == mpip-rule ]]; then
		for ns in "$A" "$B"; do
			audio_ef "$ns"
			ip netns exec "$ns" "$MPIPCTL" rule add proto udp dscp 46 mode single
		done
	fi
	if [[ $3 == mpip* ]]; then
		# the paths come up with the first packets between the hosts
		ip netns exec "$A" ping -c 3 -i 0.3 -q 10.1.1.2 >/dev/null || true
	fi
}

# trace_paths FILE: a's path table (weights, delays) twice a second, one
# JSON line each, {"t": epoch seconds, "paths": [...]}, until killed
trace_paths() {
	local out=$1 j
	while :; do
		j=$(ip netns exec "$A" "$MPIPCTL" -j show paths 2>/dev/null) || j=null
		printf '{"t": %s, "paths": %s}\n' "$EPOCHREALTIME" "${j:-null}" >>"$out"
		sleep 0.5
	done
}

# call DIR FAIL_AT: one call into DIR; at FAIL_AT seconds (0: never)
# link 1 starts losing every packet at both ends; the video is
# WEBRTC_VIDEO, call.py's --video (default ladder: $OUT/ladder.pkl)
call() {
	local dir=$1 fail_at=$2 video=${WEBRTC_VIDEO:-ladder} t0 tf='' pids=() p rc=0 i
	local size=${WEBRTC_SIZE:-320x240}
	mkdir -p "$dir"
	ip netns exec "$B" tcpdump -i any -s 96 -U -w "$dir/b.pcap" udp 2>/dev/null &
	pids+=($!)
	rm -f "$dir/.ready"
	# shellcheck disable=SC2046 # no option or one
	ip netns exec "$B" "$PY" "$CALL" recv --bind 10.1.1.2 --port 7900 \
		--seconds "$SECONDS_CALL" --ready "$dir/.ready" \
		$( ((${WEBRTC_STOCK_ESTIMATOR:-0})) && echo --stock-estimator) \
		$( ((${WEBRTC_LOOP_ARRIVAL:-0})) && echo --loop-arrival) \
		--out "$dir/recv.json" >"$dir/recv.log" 2>&1 &
	local rpid=$!
	trace_paths "$dir/paths.jsonl" &
	pids+=($!)
	ip netns exec "$A" "$PY" "$CALL" send --bind 10.1.1.1 --peer 10.1.1.2 \
		--port 7900 --seconds "$((SECONDS_CALL + 5))" --video "$video" \
		--ladder "$OUT/ladder.pkl" --width "${size%x*}" --height "${size#*x}" \
		--out "$dir/send.json" >"$dir/send.log" 2>&1 &
	local spid=$!
	# the call starts when the receiver has answered the offer (python
	# and aiortc take seconds to start under TCG)
	for ((i = 0; i < 600; i++)); do
		[[ -e $dir/.ready ]] && break
		sleep 0.2
	done
	t0=$EPOCHREALTIME
	if ((fail_at > 0)); then
		sleep "$fail_at"
		"$TOPO" netem "$A" eth1 ",,100%"
		"$TOPO" netem "$B" eth1 ",,100%"
		tf=$EPOCHREALTIME
	fi
	wait "$rpid" || rc=1
	wait "$spid" || rc=1
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	printf '{"start": %s, "fail": %s}\n' "$t0" "${tf:-null}" >"$dir/run.json"
	((rc == 0)) || log "$dir: a call end failed: $(tail -2 "$dir"/*.log)"
	return "$rc"
}

# scenario_fail REP (and the others alike): both modes, in a fresh lab each
scenario_fail() {
	local m
	for m in off mpip; do
		lab 10mbit,10ms,- 10mbit,10ms,- "$m"
		call "$OUT/fail-$m-$1" "$((SECONDS_CALL / 3))"
	done
}

scenario_rate() {
	local m r=${WEBRTC_RATE:-1mbit}
	for m in off mpip; do
		lab "$r,10ms,-" "$r,10ms,-" "$m"
		call "$OUT/rate-$m-$1" 0
	done
}

scenario_delay() {
	local m
	for m in off mpip mpip-rule; do
		lab 10mbit,50ms,- 10mbit,80ms,- "$m"
		call "$OUT/delay-$m-$1" 0
	done
}

main() {
	local s r list=()
	[[ $EUID == 0 ]] || die "run as root inside the VM: tools/vm.sh -- $0 OUT"
	[[ $# -ge 1 ]] || die "usage: $0 OUT [--seconds N] [--reps N] [fail|rate|delay...]"
	OUT=$(realpath -m "$1")
	shift
	while (($#)); do
		case $1 in
		--seconds)
			SECONDS_CALL=$2
			shift
			;;
		--reps)
			REPS=$2
			shift
			;;
		fail | rate | delay) list+=("$1") ;;
		*) die "unknown argument '$1'" ;;
		esac
		shift
	done
	((${#list[@]})) || list=(fail rate delay)
	"$PY" -c 'import aiortc' 2>/dev/null || die "python3-aiortc missing (tools/deps.sh)"
	if [[ ${WEBRTC_VIDEO:-ladder} == ladder && ! -s $OUT/ladder.pkl ]]; then
		die "no $OUT/ladder.pkl: build it on the host first (tools/webrtc/ladder.py, make webrtc does)"
	fi
	command -v tcpdump >/dev/null || die "tcpdump missing (tools/deps.sh)"
	lab_mpip_load || die "cannot load $MPIP_KO"
	trap '"$TOPO" clean --prefix "$P" 2>/dev/null || true' EXIT
	mkdir -p "$OUT"
	for ((r = 1; r <= REPS; r++)); do
		for s in "${list[@]}"; do
			log "scenario $s, run $r of $REPS"
			"scenario_$s" "$r"
		done
	done
}

main "$@"
