#!/usr/bin/env bash
# test_helper.sh - a connection that a conntrack helper works on, with NAT:
# A's FTP client (active mode) talks to B's FTP server through A's source
# NAT (to a second address of A's) and the FTP helper.  The NAT helper
# rewrites A's PORT command, to a different length, in conntrack's
# confirmation hook, which runs after mpip's output hook, and adjusts the
# sequence numbers of every later segment.  mpip must leave such a
# connection without trailers: a trailer would be summed into the TCP
# checksum by the helper and reach B's FTP server as data.  Files come
# back intact, the helper did rewrite (its NAT counter), and both hosts
# are MPIP peers on other flows.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink hl

t_setup() {
	modprobe nf_conntrack_ftp
	modprobe nf_nat_ftp
	python3 -c 'import pyftpdlib' || fail "python3-pyftpdlib is not installed"
	mpip_twolink_warm_up
	ip -n "$A" addr add 10.1.1.11/24 dev eth1
	in_ns "$A" nft -f - <<-'EOF'
		table ip ftpnat {
			ct helper ftph {
				type "ftp" protocol tcp
			}
			chain out {
				type filter hook output priority 0; policy accept;
				tcp dport 21 ct helper set "ftph"
			}
			chain post {
				type nat hook postrouting priority 100; policy accept;
				ip daddr 10.1.1.2 tcp dport 21 counter snat to 10.1.1.11
			}
		}
	EOF
	mkdir -p "$T/ftp"
	random_file "$T/ftp/one" 1
	head -c 300000 /dev/urandom >"$T/ftp/two"
	ip netns exec "$B" python3 -m pyftpdlib -D -p 21 -i 10.1.1.2 -d "$T/ftp" \
		</dev/null >"$T/ftpd.log" 2>&1 &
	echo $! >"$T/ftpd.pid"
	wait_for 30 tcp_listening "$B" 21 || { cat "$T/ftpd.log"; fail "no FTP server on B"; }
}

# fetch NAME...: fetch the files in active mode over one control
# connection (each PORT command is rewritten) into $T/got.NAME
fetch() {
	in_ns "$A" timeout 120 python3 - "$T" "$@" <<-'EOF'
		import ftplib, sys
		tmp, names = sys.argv[1], sys.argv[2:]
		f = ftplib.FTP()
		f.connect("10.1.1.2", 21, timeout=60)
		f.login()
		f.set_pasv(False)
		for n in names:
		    with open(f"{tmp}/got.{n}", "wb") as out:
		        f.retrbinary(f"RETR {n}", out.write)
		f.quit()
	EOF
}

t_active_ftp() {
	fetch one two one two
	sha256_equal "$T/ftp/one" "$T/got.one" || fail "file one differs"
	sha256_equal "$T/ftp/two" "$T/got.two" || fail "file two differs"
	# the helper and the NAT did their work on the control connection
	chain_counted "$A" ip ftpnat post ||
		fail "the source NAT rule never matched"
	# B saw A's PORT commands rewritten to the NAT address
	grep -E 'PORT 10,1,1,11,' "$T/ftpd.log" | head -n 2
	grep -Eq 'PORT 10,1,1,11,' "$T/ftpd.log" ||
		fail "B's server never saw a PORT command rewritten by the NAT helper"
}

# The two hosts still are MPIP peers for everything else.
t_peers() {
	mpip_twolink_warm_up
	(($(mpip_stat "$B" rx_cm) > 0)) || fail "B never received a trailer from A"
}

t_stop() {
	kill "$(cat "$T/ftpd.pid")" 2>/dev/null || true
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 5
	ktap_run setup t_setup
	ktap_run active_ftp_through_nat_helper t_active_ftp
	ktap_run still_mpip_peers t_peers
	ktap_run stop t_stop
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
