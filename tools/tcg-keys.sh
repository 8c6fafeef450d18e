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
#   - tc ingress/egress (clsact in test_reorder, ingress in test_table7):
#     a clsact qdisc on lo;
#   - the once-only keys of net_get_random_once() (the hash secrets of TCP
#     and UDP lookups, sequence numbers): traffic over lo, TCP and UDP, IPv4
#     and IPv6, so that they are set now;
#   - packet timestamps (netstamp_needed_key: captures, scapy) and UDP
#     encapsulation (udp_encap_needed_key: WireGuard, ESP in UDP): a
#     process that holds a socket with SO_TIMESTAMP and one with UDP_ENCAP
#     for the whole guest.
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

set_keys() {
	nft -f - <<-'EOF' || echo "tcg-keys: nftables tables not set" >&2
		table inet mpip_tcg_keys {
			chain k_pre { type filter hook prerouting priority 500; policy accept; }
			chain k_in { type filter hook input priority 500; policy accept; }
			chain k_fwd { type filter hook forward priority 500; policy accept; }
			chain k_out { type filter hook output priority 500; policy accept; }
			chain k_post { type filter hook postrouting priority 500; policy accept; }
			chain k_ing { type filter hook ingress device lo priority 500; policy accept; }
		}
		table bridge mpip_tcg_keys {
			chain k_pre { type filter hook prerouting priority 500; policy accept; }
			chain k_in { type filter hook input priority 500; policy accept; }
			chain k_fwd { type filter hook forward priority 500; policy accept; }
			chain k_out { type filter hook output priority 500; policy accept; }
			chain k_post { type filter hook postrouting priority 500; policy accept; }
		}
		table arp mpip_tcg_keys {
			chain k_in { type filter hook input priority 500; policy accept; }
			chain k_out { type filter hook output priority 500; policy accept; }
		}
		table netdev mpip_tcg_keys {
			chain k_ing { type filter hook ingress device lo priority 500; policy accept; }
			chain k_egr { type filter hook egress device lo priority 500; policy accept; }
		}
	EOF
	ip link set lo up
	tc qdisc replace dev lo clsact || echo "tcg-keys: no clsact on lo" >&2
	# the holder: prints "ready" once its sockets are set, then sleeps
	# until the guest ends (its stdout closed, so the command's own
	# output stays the command's)
	coproc HOLD {
		exec /usr/bin/python3 -c '
import socket, sys, time
SO_TIMESTAMP, UDP_ENCAP, ESPINUDP = 29, 100, 2
held = []
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        srv = socket.socket(fam, socket.SOCK_STREAM)
        srv.bind((addr, 0)); srv.listen(1)
        c = socket.create_connection(srv.getsockname()[:2], timeout=5)
        a, _ = srv.accept(); c.sendall(b"x"); a.recv(1)
        for s in (c, a, srv):
            s.close()
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.bind((addr, 0))
        u.sendto(b"x", u.getsockname()[:2]); u.recv(1)
        u.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
        held.append(u)
    except OSError as e:
        print("tcg-keys: lo traffic:", e, file=sys.stderr)
try:
    e = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    e.setsockopt(socket.IPPROTO_UDP, UDP_ENCAP, ESPINUDP)
    held.append(e)
except OSError as e:
    print("tcg-keys: UDP_ENCAP:", e, file=sys.stderr)
print("ready", flush=True)
sys.stdout.close()
while True:
    time.sleep(3600)
'
	}
	local line=
	read -r -t 60 line <&"${HOLD[0]}" || true
	[[ $line == ready ]] || echo "tcg-keys: the socket holder did not start" >&2
}

cpus_online 0
set_keys
cpus_online 1
exit 0
