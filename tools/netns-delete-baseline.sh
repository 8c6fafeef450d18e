#!/usr/bin/env bash
# tools/netns-delete-baseline.sh - test_unload's netns_delete_under_load
# without mpip: the same namespaces, links, shaping and iperf3 flows, the
# same deletion, and mpip.ko never loaded.  Run as root inside a VM (the
# debug kernel's, normally):
#
#   tools/vm.sh --kernel-tree TREE --console-log LOG -- \
#       tools/netns-delete-baseline.sh [ROUNDS]
#
# then `tools/debug-kernel.sh scan LOG`.  It answers whether the hung-task
# reports that the debug kernel gives in test_unload (tc blocked in
# synchronize_rcu() from lockdep_unregister_key() with RTNL held, during a
# namespace deletion) need mpip.  Prints how long each deletion took and
# the kernel-log lines that the selftests' check (tests/klog.sh) calls
# bugs, hung tasks among them; exits 1 if mpip is loaded.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TOPO=$REPO/tools/topo.sh
ROUNDS=${1:-2}
# test_unload's shaping, shape(), DURATION and PARALLEL
# shellcheck source=tests/selftests/stress_lib.sh
source "$REPO/tests/selftests/stress_lib.sh"
# the selftests' kernel-log check, klog_bad
# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"
pids=()

die() { echo "baseline: $*" >&2; exit 1; }

# say MSG: MSG, after the guest's uptime (the kernel log's clock)
say() { echo "baseline: [$(cut -d' ' -f1 /proc/uptime)] $*"; }

# flows NSA NSB PORT: iperf3 both ways, PARALLEL streams each
flows() {
	local a=$1 b=$2 port=$3
	ip netns exec "$b" iperf3 -s -D -p "$port"
	ip netns exec "$a" iperf3 -s -D -p $((port + 1))
	sleep 1
	ip netns exec "$a" iperf3 -c 10.1.1.2 -p "$port" -t $DURATION \
		-P $PARALLEL >/dev/null 2>&1 </dev/null &
	pids+=($!)
	ip netns exec "$b" iperf3 -c 10.1.1.1 -p $((port + 1)) -t $DURATION \
		-P $PARALLEL >/dev/null 2>&1 </dev/null &
	pids+=($!)
}

main() {
	local i q t0 t1
	! grep -q '^mpip ' /proc/modules || die "mpip is loaded: this is the run without it"
	dmesg -C
	say "kernel $(uname -r), $(nproc) CPUs, mpip not loaded"
	# the lab that test_unload keeps busy during the deletions
	"$TOPO" twolink --prefix blm
	shape blma blmb
	flows blma blmb 5201
	sleep 30
	for ((i = 1; i <= ROUNDS; i++)); do
		q=bln$i
		say "round $i: lab and shaping"
		"$TOPO" twolink --prefix "$q"
		shape "${q}a" "${q}b"
		say "round $i: flows"
		flows "${q}a" "${q}b" 5401
		# test_unload waits until B holds segments: a few seconds here
		sleep 20
		t0=$(date +%s)
		"$TOPO" clean --prefix "$q"
		t1=$(date +%s)
		say "round $i: topo clean took $((t1 - t0)) s"
	done
	# the namespaces' cleanup runs in a work item: wait until it is done
	t0=$(date +%s)
	while ip netns list | grep -q '^bln'; do sleep 5; done
	sleep 5
	say "waited $(($(date +%s) - t0)) s more"
	kill "${pids[@]}" 2>/dev/null || true
	"$TOPO" clean --prefix blm
	say "kernel log lines that tests/klog.sh calls bugs:"
	dmesg | klog_bad || echo "baseline: none"
}

main "$@"
