#!/usr/bin/env bash
# test_loss.sh - the loss oracle (issue 22, MultiMob): a path that loses
# most of its packets goes down when its delay reports are lost too
# (path_timeout_ms) and up when they come, and without the oracle
# (loss_pct 0, the default) carries data each time it is up.  With `mpipctl set loss_pct 30` on A, A probes each path up once
# a heartbeat while data flows, finds the path over eth1 lossy (60 %
# loss on A's eth1) and moves the data off it; when the loss ends, the
# path is no longer lossy and carries data again.  With eth2 a backup
# link, a lossy eth1 fails the data over to the backup.  A stranger's
# flood of queries from forged addresses, which takes all the answers
# B has for strangers, leaves A's probes answered and its paths not
# lossy.  Turning the oracle off ends its verdicts.  The stream runs
# through all of it and arrives intact.
# TIMEOUT: 600
# DEBUG-ALONE: the stranger's flood, paced for the debug kernel, keeps a
# debug guest's CPUs busy; with a second debug guest on the two cores, A's
# paths lost their delay reports as well (down 29 times, lossy at 56 %),
# data reports that no budget touches, so the subtest could not tell
# what a budget did (Documentation/debug-kernel.rst, twenty-third run)
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink ls
X=${P}x

# share_of SECONDS [MIN]: "E1 E2" of A's data in the next SECONDS
# seconds; fails (saying so) unless the paths carried MIN bytes (100 kB)
share_of() {
	local e1 e2
	read -r e1 e2 <<<"$(mpip_window_share "$A" "$1")"
	echo "$e1 $e2"
	((e1 + e2 >= ${2:-100000})) || {
		echo "only $((e1 + e2)) bytes in $1 s" >&2
		return 1
	}
}

# stall_why: why the stream stood still: its sockets, both hosts' paths
# and counters (those moved since the files $T/a-snap and $T/b-snap, if
# there), and A's qdiscs
stall_why() {
	local ns f
	for ns in "$A" "$B"; do
		ip netns exec "$ns" ss -tino '( sport = :5400 or dport = :5400 )' |
			sed "s/^/$ns ss: /" || true
		mpip_paths_show "$ns" || true
		f=$T/${ns: -1}-snap
		if [[ -f $f ]]; then
			echo "$ns moved: $(mpip_stats_moved "$ns" "$f")" || true
		fi
	done
	tc -n "$A" -s qdisc show | sed "s/^/$A qdisc: /" || true
}

# eth1_lossy VALUE: A's path over eth1 says lossy VALUE (true or false)
eth1_lossy() {
	mpipctl_in "$A" -j show paths | jq -e --argjson v "$1" '
		map(select(.saddr == "10.1.1.1" and .daddr == "10.1.1.2"))[0] |
		.lossy == $v' >/dev/null
}

# eth1_loss: what A's paths over eth1 and eth2 say, and how often A's
# paths went down
eth1_loss() {
	mpipctl_in "$A" -j show paths | jq -c '
		map(select(.dev == "eth1" or .dev == "eth2") |
		select(.state != "noroute") | {dev, state, loss_pct, lossy})'
	echo "A's paths went down $(mpip_stat "$A" path_down) times"
}

# off_eth1 WHAT: in the next 3 s, eth1 carries at most 2 % of A's data
off_eth1() {
	local out e1 e2
	out=$(share_of 3) || fail "the stream all but stopped"
	read -r e1 e2 <<<"$out"
	echo "$1, 3 s: eth1 $e1 bytes, eth2 $e2 bytes"
	eth1_loss
	((e1 * 100 <= (e1 + e2) * 2)) || fail "eth1 carried over 2 % ($1)"
}

t_setup() {
	local pct
	random_file "$T/blk" 1
	mpip_twolink_warm_up
	pct=$(mpip_cfg "$A" loss_pct) ||
		fail "cannot read loss_pct"
	((pct == 0)) || fail "loss_pct is $pct by default, not 0"
	tcp_stream_bg "$A" "$B" 10.1.1.2 5400 "$T/blk" "$T/st"
	wait_for 30 file_grew "$T/st" 0 2000000 || fail "stream did not start"
}

# eth1_sent_since BYTES MIN: A's paths over eth1 sent over MIN bytes since
# they had sent BYTES in all
eth1_sent_since() {
	local e1 e2
	read -r e1 e2 <<<"$(mpip_path_tx "$A")"
	((e1 - $1 > $2))
}

# Without the oracle, 60 % loss on A's eth1 leaves the path in use: it
# goes down and up (A's paths went down 7 or 8 times before the oracle,
# turned on some 6 s in, found it lossy), and its share varies (89 kB to
# 319 kB in 3 s, 1 % to 56 %, in six runs).  The stream, a third of its
# segments lost, may also stall for seconds as TCP backs off (1488 bytes
# in 3 s once, in a loaded run): so the path has 20 s to carry 20 kB.
t_off() {
	local e1 e2 tx1 t0
	"$TOPO" netem "$A" eth1 ",,60%"
	sleep 3
	read -r tx1 e2 <<<"$(mpip_path_tx "$A")"
	t0=$SECONDS
	wait_for 20 eth1_sent_since "$tx1" 20000 || {
		eth1_loss
		fail "eth1 carried under 20 kB in 20 s without the oracle"
	}
	read -r e1 e2 <<<"$(mpip_path_tx "$A")"
	echo "loss_pct 0, eth1 at 60 % loss: eth1 $((e1 - tx1)) bytes in about $((SECONDS - t0 + 1)) s"
	eth1_loss
	eth1_lossy false || fail "A's eth1 path is lossy with the oracle off"
}

# With loss_pct 30 the path is found lossy and the data leaves it
t_lossy() {
	mpipctl_in "$A" -j stats >"$T/a0"
	mpipctl_in "$A" set loss_pct 30
	wait_for 20 eth1_lossy true || {
		eth1_loss
		fail "A's eth1 path not lossy within 20 s"
	}
	eth1_loss
	mpip_stats_since "$A" "$T/a0" '.path_lossy >= 1' ||
		fail "path_lossy did not count it"
	off_eth1 "loss_pct 30, eth1 lossy"
}

# The loss ends: the path is no longer lossy and carries data again
t_recovers() {
	local out e1 e2
	"$TOPO" netem "$A" eth1 ""
	wait_for 20 eth1_lossy false || {
		eth1_loss
		fail "A's eth1 path still lossy 20 s after the loss ended"
	}
	sleep 2
	out=$(share_of 3) || fail "the stream all but stopped"
	read -r e1 e2 <<<"$out"
	echo "loss over, 3 s: eth1 $e1 bytes, eth2 $e2 bytes"
	((e1 * 5 >= e1 + e2)) || fail "eth1 carried under 20 % after the loss"
}

# any_lossy: whether one of A's paths to B says lossy
any_lossy() {
	mpipctl_in "$A" -j show paths | jq -e 'any(.[]; .lossy)' >/dev/null
}

# A stranger X, on a link of its own to B, floods B with first queries
# from 240 forged addresses, 600 a second (250 on the debug kernel),
# each with a key of its own for 16 s (a key sent again is a replay, and
# draws no answer): three times the 200 answers a second B has for
# strangers (ctrl_limited counts the rest; B's confirmations stay within
# it), and every address gets a share.  B answers A's loss probes,
# which are nonces in authenticated CMs, within A's own budget: no path
# of A's goes lossy.  (Before, one budget served both: A's probes got a
# share of it, and at 1,000 queries a second a path of A's went lossy 8 s
# into the flood, at 62 %.  At 1,000 a second the debug kernel's B
# answered late, and an oracle that took late for lost found both paths
# lossy.)
t_flood() {
	local lim0 lim fpid t0 sent secs rate=600 tb0
	# the debug kernel (test data divided) pays many times more per
	# query: at 600 a second its CPUs were busy and lost or delayed A's
	# probes as well (both paths lossy at 37 %), and at 300 once
	# (path_lossy +2, 2026-12-04, on a shared host); 250 is still more
	# than the 200 answers a second B has for strangers
	((${MPIP_TEST_DATA_DIV:-1} == 1)) || rate=250
	# (a subtest is a subshell of its own: this runs when it ends, and
	# takes X away, as the cleanup mpip_hang_off pushes here would not)
	# shellcheck disable=SC2064
	trap "touch '$T/flood.stop'; ip netns del '$X' 2>/dev/null || true" EXIT
	mpip_hang_off "$B" "$X" eth9 9
	mpipctl_in "$X" disable
	wait_for 20 in_ns "$X" ping -q -n -c 1 -W 1 10.1.1.2 >/dev/null ||
		fail "X cannot reach B"
	! any_lossy || fail "a path of A's is lossy before the flood"
	mpipctl_in "$A" -j stats >"$T/a0"
	tb0=$EPOCHREALTIME
	mpipctl_in "$B" -j stats >"$T/b0"
	lim0=$(jq -e .ctrl_limited "$T/b0") || fail "no ctrl_limited in B's stats"
	mpip_query_flood "$X" 10.1.9.9 10.1.1.2 $((rate * 50 / 3)) forged "$rate" \
		"$T/flood.stop" >"$T/flood.out" &
	fpid=$!
	# the flood is on once B refuses answers: then 12 s of it, each
	# path's 16 outcomes and more (a probe a heartbeat, 300 ms)
	mpip_flood_reaches "$B" "$fpid" "$(jq .rx_query "$T/b0")"
	wait_for 60 mpip_stat_ge "$B" ctrl_limited $((lim0 + 200)) ||
		fail "B refused only $(($(mpip_stat "$B" ctrl_limited) - lim0)) answers: no flood, not a test"
	echo "$(date +%T) B refuses answers to strangers"
	t0=$SECONDS
	while ((SECONDS - t0 < 12)); do
		sleep 1
		kill -0 "$fpid" 2>/dev/null ||
			fail "the flood ended after $((SECONDS - t0)) s; not a test"
		! any_lossy || {
			eth1_loss
			flood_stats
			fail "a path of A's went lossy $((SECONDS - t0)) s into the flood"
		}
	done
	lim=$(($(mpip_stat "$B" ctrl_limited) - lim0))
	touch "$T/flood.stop"
	wait "$fpid" || fail "the flood failed"
	read -r sent secs <"$T/flood.out"
	echo "$(date +%T) X sent $sent queries in $secs s; B refused $lim answers"
	eth1_loss
	flood_stats
	strangers_ceiling "$tb0"
	mpip_stats_since "$A" "$T/a0" '.path_lossy == 0' ||
		fail "path_lossy counted a path during the flood"
}

# strangers_ceiling T0: B's confirmations since t_flood's $T/b0, read at
# T0 ($EPOCHREALTIME: B's clock, all hosts being one guest's
# namespaces), stay within its budget for strangers, 200 a second and a
# burst of 200 (security.rst), and 20 more for its peers' new flows.
# The flood draws more than that budget (B refused 200 of its answers
# before the flood counted), and its forged sources, each 2.5 queries a
# second at 600, are far within their share: only the namespace's
# budget holds it
strangers_ceiling() {
	local conf
	conf=$(($(mpip_stat "$B" tx_confirm) - $(jq -e .tx_confirm "$T/b0"))) ||
		fail "no tx_confirm in B's stats"
	awk -v n="$conf" -v a="${1/,/.}" -v b="${EPOCHREALTIME/,/.}" '
		BEGIN { printf "B sent %d confirmations in %.1f s (at most %d)\n",
				n, b - a, 200 * (b - a) + 220
			exit !(n <= 200 * (b - a) + 220) }' ||
		fail "B answered strangers more than 200 times a second"
}

# flood_stats: what the flood did to B since t_flood's $T/b0
flood_stats() {
	mpip_stats_since "$B" "$T/b0" '[.rx_query, .tx_confirm, .ctrl_limited,
		.ctrl_budget, .table_full, .table_evict, .rr_held] | length > 0' || true
}

# backup_takes_over: with eth2 a backup, 60 % loss on A's eth1; the path
# is found lossy, and the data leaves eth1 for the backup
backup_takes_over() {
	"$TOPO" netem "$A" eth1 ",,60%"
	wait_for 20 eth1_lossy true || {
		eth1_loss
		fail "A's eth1 path not lossy within 20 s"
	}
	off_eth1 "eth1 lossy, eth2 a backup"
}

# MultiMob: eth2 a backup; a lossy eth1 fails the data over to it, and
# the data comes back once eth1 is good again
t_backup() {
	local out e1 e2
	trap '"$TOPO" netem "$A" eth1 "" || true
		mpipctl_in "$A" link set dev eth2 nobackup || true' EXIT
	mpipctl_in "$A" link set dev eth2 backup
	sleep 2
	out=$(share_of 2) || fail "the stream all but stopped"
	read -r e1 e2 <<<"$out"
	echo "eth2 backup, 2 s: eth1 $e1 bytes, eth2 $e2 bytes"
	((e2 * 100 <= (e1 + e2))) || fail "the backup carried over 1 %"
	backup_takes_over
	"$TOPO" netem "$A" eth1 ""
	wait_for 20 eth1_lossy false || fail "A's eth1 path still lossy"
	sleep 2
	out=$(share_of 3) || fail "the stream all but stopped"
	read -r e1 e2 <<<"$out"
	echo "eth1 good again, 3 s: eth1 $e1 bytes, eth2 (backup) $e2 bytes"
	((e2 * 100 <= (e1 + e2) * 2)) || fail "the data did not come back to eth1"
}

# Turning the oracle off ends its verdicts: with eth2 a backup and eth1
# found lossy, loss_pct 0 (and the loss gone) brings the data back to
# eth1.  (Before, the verdict stood for the packet path, with no probe
# left to clear it, and the data stayed on the backup.)
t_forget() {
	local out e1 e2
	trap '"$TOPO" netem "$A" eth1 "" || true
		mpipctl_in "$A" link set dev eth2 nobackup || true' EXIT
	mpipctl_in "$A" set loss_pct 30
	mpipctl_in "$A" link set dev eth2 backup
	backup_takes_over
	mpipctl_in "$A" -j stats >"$T/a-snap"
	mpipctl_in "$B" -j stats >"$T/b-snap"
	"$TOPO" netem "$A" eth1 ""
	mpipctl_in "$A" set loss_pct 0
	# (60 % loss may have left it down: up again, it waits a second)
	wait_for 20 mpip_path_is "$A" 10.1.1.1 10.1.1.2 up ||
		fail "A's eth1 path not up 20 s after the loss ended"
	sleep 2
	out=$(share_of 3) || { stall_why; fail "the stream all but stopped"; }
	read -r e1 e2 <<<"$out"
	echo "loss_pct 0, 3 s: eth1 $e1 bytes, eth2 (backup) $e2 bytes"
	((e2 * 100 <= (e1 + e2) * 2)) ||
		fail "the data stayed on the backup with the oracle off"
}

t_intact() {
	mpipctl_in "$A" set loss_pct 0
	tcp_stream_end "$T/blk" "$T/st" 60
}

t_dmesg() { check_dmesg_clean "$MARK"; }

main() {
	ktap_header
	ktap_plan 9
	ktap_run setup t_setup
	ktap_run oracle_off_keeps_the_lossy_path t_off
	ktap_run lossy_path_leaves_the_data t_lossy
	ktap_run path_returns_after_the_loss t_recovers
	ktap_run stranger_flood_leaves_probes_answered t_flood
	ktap_run lossy_primary_fails_over_to_backup t_backup
	ktap_run oracle_off_ends_its_verdicts t_forget
	ktap_run stream_intact t_intact
	ktap_run dmesg_clean t_dmesg
	ktap_finish
}
main "$@"; exit
