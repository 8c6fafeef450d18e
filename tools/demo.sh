#!/usr/bin/env bash
# tools/demo.sh - what `make demo` runs: build, boot the lab VM, load mpip
# on two hosts, send TCP and UDP traffic and show the handshake result.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO"

if [[ ${1:-} != --guest ]]; then
	tools/deps.sh
	make -s all
	exec tools/vm.sh -- tools/demo.sh --guest
fi

# ------------------------------------------------------------ inside the VM
P=demo
A=${P}a
B=${P}b
MPIPCTL=$REPO/userspace/mpipctl
trap 'tools/topo.sh clean --prefix $P' EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "Two hosts, two links: $A (10.1.1.1, 10.1.2.1) and $B (10.1.1.2, 10.1.2.2)"
tools/topo.sh twolink --prefix "$P" --link1 40mbit,1ms,- --link2 20mbit,1ms,-
modprobe nf_defrag_ipv4
[[ -d /sys/module/mpip ]] || insmod kernel/mpip.ko
for ns in "$A" "$B"; do
	echo "--- $ns"
	ip netns exec "$ns" "$MPIPCTL" status
done

say "TCP: iperf3 from $A to $B for 5 s"
ip netns exec "$B" iperf3 -s -D -1 -p 5201
sleep 1
ip netns exec "$A" iperf3 -c 10.1.1.2 -t 5 | tail -n 4

say "UDP: 200 datagrams from $A:7000 to $B:6000"
ip netns exec "$B" python3 tests/selftests/udpcheck.py recv 6000 200 --timeout 20 &
sleep 1
ip netns exec "$A" python3 tests/selftests/udpcheck.py send 10.1.1.2 6000 200 --sport 7000
wait

for ns in "$A" "$B"; do
	say "What $ns learned"
	run ip netns exec "$ns" "$MPIPCTL" show avail
	echo
	run ip netns exec "$ns" "$MPIPCTL" show nodes
	echo
	run ip netns exec "$ns" "$MPIPCTL" stats
done

say "Done: both hosts marked each other MPIP-capable (state yes) and know each other's node ID and addresses."
