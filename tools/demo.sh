#!/usr/bin/env bash
# tools/demo.sh - what `make demo` runs: mpip spreading one TCP connection
# over two links, and surviving the failure of one.
#
#   tools/demo.sh [options]
#
# On the host it installs what is missing (tools/deps.sh), builds mpip.ko
# and mpipctl, boots the lab VM (tools/vm.sh) to run the demo, then plots.
# In the VM: two hosts (network namespaces) a and b joined by two links,
# link 1 = eth1 10.1.1.1 <-> 10.1.1.2 and link 2 = eth2 10.1.2.1 <-> 10.1.2.2,
# shaped with netem; one iperf3 TCP connection from a to 10.1.1.2 in three
# phases:
#   (a) MPIP off (disabled on both hosts)     DURATION s
#   (b) MPIP on                               DURATION s
#   (c) MPIP on, link 2 goes down 5 s after data starts and comes back at
#       10 s                                  FAIL_DURATION s
# Per-link rates come from byte counters sampled every 0.1 s inside each
# host.  At the end it prints a table and writes to the results directory
# (default results/demo): demo.png (per-link throughput over time, one panel
# per phase), summary.json (throughputs, per-link split, aggregate as % of
# capacity, longest goodput stall, time until link 2 carries traffic again)
# and the raw data (off/, on/, fail/, sa.txt, sb.txt).
#
# Options (and environment variables):
#   --link1 SPEC         link 1 as RATE,DELAY,LOSS for tools/topo.sh
#                        (MPIP_DEMO_LINK1, default 40mbit,1ms,-)
#   --link2 SPEC         link 2 (MPIP_DEMO_LINK2, default 20mbit,1ms,-)
#   --duration S         phases (a) and (b) (MPIP_DEMO_DURATION, default 10)
#   --fail-duration S    phase (c) (MPIP_DEMO_FAIL_DURATION, default 20)
#   --fail-end E         link 2 goes down at a (sender, default), b or both
#                        (MPIP_DEMO_FAIL_END)
#   --out DIR            results directory, inside the repository
#   --no-plot            no PNG
#   -h, --help
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SELF=$REPO/tools/demo.sh
PY=/usr/bin/python3

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "$SELF" >&2
	exit "${1:-2}"
}
log() { printf '%s\n' "$*" >&2; }

LINK1=${MPIP_DEMO_LINK1:-40mbit,1ms,-}
LINK2=${MPIP_DEMO_LINK2:-20mbit,1ms,-}
DUR=${MPIP_DEMO_DURATION:-10}
FDUR=${MPIP_DEMO_FAIL_DURATION:-20}
FAIL_END=${MPIP_DEMO_FAIL_END:-a}
OUT=$REPO/results/demo
PLOT=1
GUEST=0
while (($#)); do
	case $1 in
	--link1) LINK1=${2:?}; shift ;;
	--link1=*) LINK1=${1#*=} ;;
	--link2) LINK2=${2:?}; shift ;;
	--link2=*) LINK2=${1#*=} ;;
	--duration) DUR=${2:?}; shift ;;
	--duration=*) DUR=${1#*=} ;;
	--fail-duration) FDUR=${2:?}; shift ;;
	--fail-duration=*) FDUR=${1#*=} ;;
	--fail-end) FAIL_END=${2:?}; shift ;;
	--fail-end=*) FAIL_END=${1#*=} ;;
	--out) OUT=${2:?}; shift ;;
	--out=*) OUT=${1#*=} ;;
	--no-plot) PLOT=0 ;;
	--guest) GUEST=1 ;;
	-h | --help) usage 0 ;;
	*) log "demo.sh: unknown argument '$1'"; usage ;;
	esac
	shift
done
[[ $DUR =~ ^[1-9][0-9]*$ ]] || { log "demo.sh: bad --duration '$DUR'"; exit 2; }
if ! [[ $FDUR =~ ^[1-9][0-9]*$ ]] || ((FDUR < 12)); then
	log "demo.sh: --fail-duration must be at least 12 s"
	exit 2
fi
[[ $FAIL_END =~ ^(a|b|both)$ ]] || { log "demo.sh: bad --fail-end '$FAIL_END'"; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)

B=$'\033[1m' N=$'\033[0m'
[[ -t 1 ]] || B='' N=''
say() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }

finish() {
	local png=
	if ((PLOT)) && [[ -s $OUT/summary.json ]]; then
		if "$PY" "$REPO/tools/bench/plot.py" demo "$OUT" >/dev/null; then
			png=$OUT/demo.png
		else
			log "demo.sh: plotting failed"
		fi
	fi
	say "Results"
	[[ -n $png ]] && echo "plot:    $png"
	echo "summary: $OUT/summary.json"
	echo "raw:     $OUT/{off,on,fail}/, $OUT/sa.txt, $OUT/sb.txt"
}

# ---------------------------------------------------------------- host side
host_main() {
	[[ $OUT == "$REPO"/* ]] || { log "demo.sh: --out must be inside $REPO (the VM writes only there)"; exit 2; }
	"$REPO/tools/deps.sh"
	make -s -C "$REPO" all
	local rc=0
	# plotting is done here, not in the VM (matplotlib is slow under TCG)
	"$REPO/tools/vm.sh" -- "$SELF" --guest --no-plot --out "$OUT" --link1 "$LINK1" --link2 "$LINK2" \
		--duration "$DUR" --fail-duration "$FDUR" --fail-end "$FAIL_END" || rc=$?
	finish
	return "$rc"
}

# --------------------------------------------------------------- guest side
phase() { # DIR TITLE ARGS...: one iperf3 run and its line of figures
	local dir=$1 title=$2
	shift 2
	say "$title"
	lab_run "$dir" tcp "$@" || log "demo.sh: the iperf3 run failed (see $dir)"
	printf '   %s\n' "$("$PY" "$REPO/tools/bench/analyze.py" line "$dir")"
}

guest_main() {
	# shellcheck source=tools/bench/lib.sh
	source "$REPO/tools/bench/lib.sh"
	LAB_P=demo LAB_A=demoa LAB_B=demob LAB_FAIL_END=$FAIL_END
	lab_init
	trap 'lab_fini' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	rm -rf "$OUT"/{off,on,fail} "$OUT"/summary.json "$OUT"/demo.png

	say "Two hosts, two links: $LAB_A (10.1.1.1, 10.1.2.1) and $LAB_B (10.1.1.2, 10.1.2.2)"
	echo "   link 1 (eth1): $LINK1    link 2 (eth2): $LINK2    (rate,delay,loss)"
	lab_up "$OUT" "$LINK1" "$LINK2" || lab_die "could not build the lab"
	lab_mpip_loaded || lab_die "mpip.ko is not loaded (build it: make)"
	echo "   mpip.ko loaded; byte counters sampled every ${LAB_INTERVAL} s on both hosts"

	lab_mode off || lab_die "could not switch mpip off"
	phase "$OUT/off" "(a) MPIP off on both hosts: iperf3 TCP $LAB_A -> 10.1.1.2 for $DUR s" "$DUR"

	lab_mode mpip || lab_die "could not switch mpip on"
	phase "$OUT/on" "(b) MPIP on: the same connection for $DUR s" "$DUR"
	echo "   paths of $LAB_A after (b):"
	ip netns exec "$LAB_A" "$MPIPCTL" show paths 2>&1 | sed 's/^/   /' || true

	phase "$OUT/fail" "(c) MPIP on, $FDUR s; link 2 goes down at 5 s ($LAB_FAIL_END end) and comes back at 10 s" \
		"$FDUR" 5 10

	lab_down
	say "Summary (links $LINK1 / $LINK2)"
	"$PY" "$REPO/tools/bench/analyze.py" demo "$OUT"
	((GUEST)) || finish
}

# (one line: bash reads scripts lazily, and this one may be edited meanwhile)
if ((GUEST)) || [[ ${MPIP_IN_VM:-0} == 1 ]]; then guest_main; else host_main; fi; exit
