#!/usr/bin/env bash
# tools/tcg-keys.sh - set the guest kernel's static branches that tests
# would otherwise flip, once, with one CPU online, and keep them set.
#
# Run by tools/vm.sh inside a TCG guest with more than one vCPU, before the
# command.  Why: the kernel patches its own code when a static branch
# (jump label) changes, while the other CPUs go on running it
# (text_poke_bp(): an int3 first, then the new bytes, each step followed
# by a sync on every CPU).  Under QEMU's multi-threaded TCG a vCPU can
# still execute the int3 after the patch is complete, and the guest dies
# with "Oops: int3" in whatever code the branch sits in (ip_rcv(),
# ip_local_deliver(), inet_ehashfn() ...), no mpip code involved.  On a
# real CPU this does not happen.  Measured: adding and deleting an
# nftables input chain in a loop while iperf3 runs in another namespace
# crashed a 6.12 guest within 25 s in 3 of 3 boots.  CI lost whole runs
# this way (test_reload, then a file of the NAT tests).
#
# What flips during the tests, and how it is kept set:
#   - netfilter hooks (nf_hooks_needed, per family and hook; nf_hooks_ingress
#     and _egress): nftables tables mpip_tcg_keys in the initial namespace
#     with a base chain at every hook of the families the tests use;
#   - tc ingress/egress and tc filters (clsact in test_reorder, ingress
#     and u32 in test_table7, an egress matchall in test_blackout): a
#     clsact qdisc on lo with a filter (clsact's init counts both
#     directions; the first software filter of any block, the global
#     tcf_sw_enabled_key);
#   - WireGuard (test_policy): its module and its crypto modules' keys are
#     set at load, and an interface that is up holds sockets with
#     SOCK_MEMALLOC and UDP tunnel (IPv4 and IPv6) keys: the module is
#     loaded and an interface mpip-keys-wg0, without peers, kept up;
#   - the once-only keys of net_get_random_once() (the hash secrets of TCP
#     and UDP lookups, sequence numbers, route exceptions): traffic over
#     lo, TCP and UDP, IPv4 and IPv6, a "fragmentation needed" error over
#     lo that gives a route an exception (its PMTU), and a datagram
#     fragmented at it (reassembly looks up an inet_peer), so that they
#     are set now;
#   - the scheduler's tracepoints sched_switch, sched_wakeup and
#     sched_wakeup_new (their static keys, and the static calls of their
#     sites, which go from a direct call to the iterator at a second
#     probe): starting the function tracer (test_netlink's hook_calls)
#     registers a probe on each, to record the tasks' names, and a guest
#     died in __schedule() that way: the three events enabled in two
#     trace instances, mpip_tcg_keys1 and 2, whose buffers stay off;
#   - packet timestamps (netstamp_needed_key: captures, scapy) and UDP
#     encapsulation (udp_encap_needed_key: WireGuard, ESP in UDP): a
#     process that holds a socket with SO_TIMESTAMP and one with UDP_ENCAP
#     for the whole guest.
# (What still flips during the selftests, traced with kprobes on
# arch_jump_label_transform_apply and arch_static_call_transform: only
# the code of a module being loaded, which nothing runs yet.)
# The other CPUs are offline meanwhile, so that nothing runs the code that
# is patched.  Any other branch a test flips still risks the crash.
#
# Prints nothing unless a step cannot be done (then names it on stderr);
# never fails the guest.
set -uo pipefail

cpus_online() { # 0|1: every CPU but CPU 0 offline, or back online
	local c
	for c in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[[ -w $c ]] && echo "$1" >"$c"
	done
}

# nft_table FAMILY HOOK...: an nftables table mpip_tcg_keys of FAMILY with
# an empty base chain that accepts at each HOOK ("ingress" and "egress"
# on lo)
nft_table() {
	local h dev
	echo "table $1 mpip_tcg_keys {"
	for h in "${@:2}"; do
		dev=
		[[ $h == ingress || $h == egress ]] && dev="device lo "
		echo "chain k_$h { type filter hook $h ${dev}priority 500; policy accept; }"
	done
	echo "}"
}

# sched_events: two probes on each tracepoint the function tracer's task
# name recording uses, so that its own is a third (no key or call flips)
sched_events() {
	local t=/sys/kernel/tracing i e
	mountpoint -q "$t" || mount -t tracefs nodev "$t" 2>/dev/null ||
		{ echo "tcg-keys: no tracefs (scheduler tracepoints not set)" >&2; return 0; }
	for i in 1 2; do
		mkdir -p "$t/instances/mpip_tcg_keys$i" 2>/dev/null &&
			echo 0 >"$t/instances/mpip_tcg_keys$i/tracing_on" ||
			{ echo "tcg-keys: no trace instance (scheduler tracepoints not set)" >&2; return 0; }
		for e in sched_switch sched_wakeup sched_wakeup_new; do
			echo 1 >"$t/instances/mpip_tcg_keys$i/events/sched/$e/enable" ||
				echo "tcg-keys: tracepoint $e not set" >&2
		done
	done
}

set_keys() {
	local ip=(prerouting input forward output postrouting) fam
	local -A hooks=([inet]="${ip[*]} ingress" [bridge]="${ip[*]}"
		[arp]="input output" [netdev]="ingress egress")
	# a table per family, each on its own: a kernel without one of the
	# families (the debug kernel has no arp or netdev tables) still gets
	# the others (one nft -f of all four set none there)
	for fam in inet bridge arp netdev; do
		# shellcheck disable=SC2086 # a list of hooks
		nft_table "$fam" ${hooks[$fam]} | nft -f - 2>/dev/null ||
			echo "tcg-keys: no nftables $fam table (hooks ${hooks[$fam]} not set)" >&2
	done
	sched_events
	ip link set lo up
	tc qdisc replace dev lo clsact || echo "tcg-keys: no clsact on lo" >&2
	tc filter replace dev lo ingress pref 49152 matchall action pass ||
		echo "tcg-keys: no tc filter on lo" >&2
	if modprobe -q wireguard 2>/dev/null; then
		ip link add mpip-keys-wg0 type wireguard &&
			ip link set mpip-keys-wg0 up ||
			echo "tcg-keys: no WireGuard interface" >&2
	fi
	# the holder: prints "ready" once its sockets are set, then sleeps
	# until the guest ends (its stdout closed, so the command's own
	# output stays the command's)
	coproc HOLD {
		exec /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/tcg_keys_holder.py"
	}
	local line=
	read -r -t 60 line <&"${HOLD[0]}" || true
	[[ $line == ready ]] || echo "tcg-keys: the socket holder did not start" >&2
}

# (never on the host: it takes CPUs offline and changes the namespace)
[[ -n ${MPIP_IN_VM:-} ]] || { echo "tcg-keys: only inside tools/vm.sh's guest" >&2; exit 2; }
cpus_online 0
set_keys
cpus_online 1
exit 0
