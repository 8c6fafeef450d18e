# shellcheck shell=bash
# tests/selftests/lib.sh - helpers for mpip's kselftest-style tests.
#
# A test file looks like:
#
#   #!/usr/bin/env bash
#   set -euo pipefail
#   source "$(dirname "$0")/lib.sh"
#   P=$(unique_prefix foo)            # namespaces ${P}a ${P}b ...
#   cleanup_push "$TOPO" clean --prefix "$P"
#   t_ping() { in_ns "${P}a" ping -c1 -W1 10.1.1.2; }
#   main() {
#       ktap_header
#       ktap_plan 1
#       "$TOPO" twolink --prefix "$P"
#       ktap_run ping t_ping
#       ktap_finish
#   }
#   main "$@"; exit
#
# (Keeping the top level in a function that ends the script on the same
# line lets the file be edited on the host while a guest runs it.)
#
# ktap_run runs a subtest function in a subshell with `set -e`: the first
# failing command fails the subtest.  Its output becomes "# " diagnostic
# lines.  A subtest calls `skip REASON` to report a skip, `fail MSG` to fail
# with a message.  ktap_finish exits 0 if nothing failed, else 1.
#
# run.sh counts a skip as a failure unless the file allows it with a line
#
#   # SKIP-OK: GLOB: WHY
#
# where the shell pattern GLOB matches the subtest's name (or the file's
# name, for ktap_skip_all) and WHY says why skipping is fine; so a file
# that cannot run for want of the module or a tool fails (ktap_fail_all).
#
# All output is KTAP on stdout; tests should not print anything else there.

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$LIB_DIR/../.." && pwd -P)
TOPO=$REPO/tools/topo.sh
export REPO TOPO
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

_ktap_n=0
_ktap_plan=
_ktap_pass=0
_ktap_fail=0
_ktap_skip=0
_lib_tmp=$(mktemp -d /tmp/mpip-selftest.XXXXXX)
_lib_cleanups=()

# MPIP_TEST_XTRACE=DIR: trace every command the file runs into
# DIR/NAME.xtrace, each with the time, the process, its source line and
# the functions it is in (tools/xtrace-gaps.py: where a file's time goes)
if [[ -n ${MPIP_TEST_XTRACE:-} ]]; then
	mkdir -p "$MPIP_TEST_XTRACE"
	exec {BASH_XTRACEFD}>>"$MPIP_TEST_XTRACE/$(basename "$0" .sh).xtrace"
	PS4='+${EPOCHREALTIME} ${BASHPID} ${BASH_SOURCE##*/}:${LINENO} [${FUNCNAME[*]}] '
	set -x
fi

# ------------------------------------------------------------------ cleanup

# cleanup_push CMD [ARG...]: run at exit (LIFO), errors ignored.  Call it
# from the test's main shell, not from inside a ktap_run subtest (a subshell).
cleanup_push() {
	local q
	q=$(printf '%q ' "$@")
	_lib_cleanups+=("$q")
}

_lib_cleanup() {
	local rc=$? i
	trap - EXIT
	set +e
	for ((i = ${#_lib_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_lib_cleanups[i]}" >/dev/null 2>&1
	done
	# daemons started with a pid file in our tmpdir (e.g. iperf3 servers
	# started from inside a subtest, whose cleanup_push was in a subshell)
	for i in "$_lib_tmp"/*.pid; do
		[[ -f $i ]] && kill "$(cat "$i")" 2>/dev/null
	done
	rm -rf "$_lib_tmp"
	exit "$rc"
}
trap _lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# tmpdir: a private scratch directory (removed at exit)
tmpdir() { printf '%s\n' "$_lib_tmp"; }

# ------------------------------------------------------------------- KTAP

ktap_header() { echo "KTAP version 1"; }

ktap_plan() {
	_ktap_plan=$1
	echo "1..$1"
}

# ktap_diag MSG...: one "# " line per line of MSG
ktap_diag() {
	local l
	while IFS= read -r l; do
		printf '# %s\n' "$l"
	done <<<"$*"
}

ktap_ok() {
	_ktap_n=$((_ktap_n + 1))
	_ktap_pass=$((_ktap_pass + 1))
	[[ $# -lt 2 || -z $2 ]] || ktap_diag "$2"
	echo "ok $_ktap_n $1"
}

ktap_fail() {
	_ktap_n=$((_ktap_n + 1))
	_ktap_fail=$((_ktap_fail + 1))
	[[ $# -lt 2 || -z $2 ]] || ktap_diag "$2"
	echo "not ok $_ktap_n $1"
}

ktap_skip() {
	_ktap_n=$((_ktap_n + 1))
	_ktap_skip=$((_ktap_skip + 1))
	echo "ok $_ktap_n $1 # SKIP ${2:-}"
}

# ktap_skip_all REASON: the whole file is skipped (call instead of ktap_plan)
ktap_skip_all() {
	echo "1..0 # SKIP $*"
	exit "$KSFT_SKIP"
}

# ktap_fail_all REASON: the file cannot run at all, for want of something
# that `make check` provides (the module, a tool): one failed test, exit 1
# (call instead of ktap_plan)
ktap_fail_all() {
	echo "1..1"
	ktap_diag "$*"
	echo "not ok 1 prerequisites"
	exit "$KSFT_FAIL"
}

# ktap_finish: report leftovers of the plan and exit 0 (all ok) or 1
ktap_finish() {
	if [[ -n $_ktap_plan && $_ktap_n -ne $_ktap_plan ]]; then
		ktap_diag "planned $_ktap_plan tests but ran $_ktap_n"
		exit "$KSFT_FAIL"
	fi
	ktap_diag "$(printf 'Totals: pass:%d fail:%d skip:%d' \
		"$_ktap_pass" "$_ktap_fail" "$_ktap_skip")"
	((_ktap_fail == 0)) && exit "$KSFT_PASS"
	exit "$KSFT_FAIL"
}

# Inside a subtest (ktap_run):
skip() {
	printf '%s\n' "$*" >"$_lib_tmp/.skip"
	exit "$KSFT_SKIP"
}
fail() {
	printf '%s\n' "$*" >&2
	exit 1
}

# ktap_run NAME FUNC [ARG...]: run FUNC as one subtest.
ktap_run() {
	local name=$1 rc had_e=0 t0
	shift
	[[ $- == *e* ]] && had_e=1
	rm -f "$_lib_tmp/.skip"
	t0=${EPOCHREALTIME/[.,]/}
	set +e
	(
		set -e
		"$@"
	) 2>&1 </dev/null | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	((had_e)) && set -e
	printf '# %s: %ss\n' "$name" "$(since_s "$t0")"
	if ((rc == 0)); then
		ktap_ok "$name"
	elif ((rc == KSFT_SKIP)) && [[ -f $_lib_tmp/.skip ]]; then
		ktap_skip "$name" "$(head -n1 "$_lib_tmp/.skip")"
	else
		ktap_fail "$name" "exit status $rc"
	fi
	return 0
}

# ---------------------------------------------------------------- helpers

# unique_prefix TAG: a short namespace prefix unique to this process
unique_prefix() {
	printf '%.4s%d\n' "$1" "$$"
}

# in_ns NS CMD...: run CMD in network namespace NS
in_ns() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}

# wait_for TIMEOUT_S CMD...: poll CMD every 0.1 s until it succeeds.
# MPIP_TEST_WAIT_SCALE (default 1) multiplies TIMEOUT_S: the debug kernel
# (tools/debug-kernel.sh) does everything many times slower.  A wait whose
# bound is what the test asserts passes MPIP_TEST_WAIT_SCALE=1 itself.
#
# (No exec of its own: under TCG a `date` or `sleep` costs 50-150 ms of
# CPU, and a poll loop of them kept a vCPU busy.  The clock is bash's
# $EPOCHREALTIME, the pause a `read -t` on a pipe that never has data.)
exec {_lib_sleep_fd}<> <(:)

# since_s T0: the time since T0 (a ${EPOCHREALTIME/[.,]/}, in microseconds)
# in seconds with tenths, e.g. "12.3"
since_s() {
	local d=$((${EPOCHREALTIME/[.,]/} - $1))
	printf '%d.%d\n' $((d / 1000000)) $((d / 100000 % 10))
}
lib_sleep() { read -r -t "$1" -u "$_lib_sleep_fd" _ || :; }
wait_for() {
	local t=$(($1 * ${MPIP_TEST_WAIT_SCALE:-1})) end
	shift
	end=$((${EPOCHREALTIME/[.,]/} + t * 1000000))
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		((${EPOCHREALTIME/[.,]/} >= end)) && return 1
		lib_sleep 0.1
	done
}

# tx_packets NS DEV / rx_packets NS DEV / tx_bytes / rx_bytes: interface
# counters (one `ip -n` call: cheaper than `ip netns exec` under TCG)
_stat() { # NS DEV RX|TX FIELD(1=bytes 2=packets)
	local out f
	out=$(ip -n "$1" -s -o link show dev "$2") || return 1
	out=${out#*"$3":*\\}
	read -r -a f <<<"${out%%\\*}"
	printf '%s\n' "${f[$4 - 1]}"
}
tx_packets() { _stat "$1" "$2" TX 2; }
rx_packets() { _stat "$1" "$2" RX 2; }
tx_bytes() { _stat "$1" "$2" TX 1; }
rx_bytes() { _stat "$1" "$2" RX 1; }

# qdisc_stat NS DEV FIELD: a counter of DEV's root qdisc as tc's JSON
# names it (drops, overlimits, packets ...); fails if it cannot be read
qdisc_stat() {
	tc -n "$1" -s -j qdisc show dev "$2" root | jq -er ".[0].$3"
}

# rx_mbps NS DEV SECONDS: DEV's receive rate in Mbit/s over the next
# SECONDS, from its byte counter and the clock.  Unlike the receiver rate
# iperf3 reports, a backlog still queued in netem when the sender stops
# cannot inflate it.
rx_mbps() {
	local b0 b1 t0 t1
	b0=$(rx_bytes "$1" "$2") && t0=$(date +%s.%N) || return 1
	sleep "$3"
	b1=$(rx_bytes "$1" "$2") && t1=$(date +%s.%N) || return 1
	awk -v b="$((b1 - b0))" -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "%.1f\n", b * 8 / (t1 - t0) / 1e6 }'
}

# ping_min_ms NS DST [PING ARGS...]: the smallest RTT in ms of 5 pings,
# after one warm-up ping (ARP resolution would inflate the first RTT).
# The smallest, not the average: netem's delay is a floor under every
# RTT, while a loaded machine only adds to some of them.
ping_min_ms() {
	local ns=$1 dst=$2 out
	shift 2
	in_ns "$ns" ping -q -n -c 1 -W 2 "$@" "$dst" >/dev/null 2>&1 || true
	out=$(in_ns "$ns" ping -q -n -c 5 -i 0.2 -W 2 "$@" "$dst") || return 1
	sed -n 's|^rtt [^=]*= \([0-9.]*\)/.*|\1|p' <<<"$out"
}

# tcp_listening NS PORT: true if something listens on TCP PORT in NS
tcp_listening() {
	local out
	out=$(in_ns "$1" ss -Htln "sport = :$2") && [[ -n $out ]]
}

# chain_counted NS FAMILY TABLE CHAIN: true if a counter of that nftables
# chain counted a packet; prints the chain when none did.  (Not `nft list
# | grep -q`: grep leaving early kills nft with SIGPIPE, which pipefail
# takes for a failure.)
chain_counted() {
	local chain
	chain=$(in_ns "$1" nft list chain "$2" "$3" "$4") || return 1
	grep -Eq 'packets [1-9]' <<<"$chain" && return 0
	echo "$chain"
	return 1
}

# nft_packets NS FAMILY TABLE NAME: the packets counted by the named
# counter NAME of TABLE in NS; fails (prints nothing) if there is none.
# (nft's text read by bash: `nft -j ... | jq` cost a jq, ~0.4-1 s of CPU
# under TCG, per reading)
nft_packets() {
	local out
	out=$(ip netns exec "$1" nft list counter "$2" "$3" "$4") || return 1
	[[ $out =~ [[:space:]]packets[[:space:]]+([0-9]+)[[:space:]] ]] || return 1
	printf '%s\n' "${BASH_REMATCH[1]}"
}

# iperf3_server_start NS [PORT]: start a daemonised iperf3 server in NS
iperf3_server_start() {
	local ns=$1 port=${2:-5201} pidf
	pidf=$_lib_tmp/iperf3.$ns.$port.pid
	in_ns "$ns" iperf3 -s -D -p "$port" -I "$pidf" >/dev/null 2>&1 || return 1
	cleanup_push iperf3_server_stop "$ns" "$port"
	wait_for 10 tcp_listening "$ns" "$port"
}

# iperf3_server_stop NS [PORT]
iperf3_server_stop() {
	local ns=$1 port=${2:-5201} pidf pid
	pidf=$_lib_tmp/iperf3.$ns.$port.pid
	[[ -f $pidf ]] || return 0
	pid=$(cat "$pidf" 2>/dev/null || true)
	[[ -n $pid ]] && kill "$pid" 2>/dev/null
	rm -f "$pidf"
	return 0
}

# iperf3_mbps NS SERVER_ADDR [IPERF3 ARGS...]: run a client, print the
# receiver's rate in Mbit/s (e.g. "19.4").  Default: 3 s, port 5201.
iperf3_mbps() {
	local ns=$1 dst=$2 json
	shift 2
	json=$(in_ns "$ns" iperf3 -J -c "$dst" -t 3 "$@") || {
		printf '%s\n' "$json" | jq -r '.error // empty' >&2 2>/dev/null
		return 1
	}
	jq -r '.end.sum_received.bits_per_second / 1e6 | . * 10 | round / 10' <<<"$json"
}

# float_between X LO HI: LO <= X <= HI
float_between() {
	awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'
}
float_gt() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x > y) }'; }
float_lt() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x < y) }'; }

# sha256_equal FILE1 FILE2
sha256_equal() {
	local a b
	a=$(sha256sum <"$1" | cut -d' ' -f1) || return 1
	b=$(sha256sum <"$2" | cut -d' ' -f1) || return 1
	[[ $a == "$b" ]]
}

# random_file PATH SIZE_MIB: a file of random bytes.  MPIP_TEST_DATA_DIV
# (default 1) divides the size, down to 64 KiB at least: the debug kernel
# (tools/debug-kernel.sh) moves data tens of times slower, and what it
# looks for (KASAN, lockdep, leaks) needs the code paths, not the volume.
random_file() {
	local bytes=$(($2 * 1024 * 1024 / ${MPIP_TEST_DATA_DIV:-1}))
	((bytes >= 65536)) || bytes=65536
	head -c "$bytes" /dev/urandom >"$1"
}

# ------------------------------------------------------------------ dmesg

# the kernel-log check shared with run.sh, the bench smoke and check.sh
# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"
# (not with a stand-in kernel log: the host's kmemleak is not ours)
_KMEMLEAK=/sys/kernel/debug/kmemleak
[[ -z ${KLOG_FILE:-} ]] || _KMEMLEAK=/nonexistent/kmemleak

# dmesg_mark: write a unique mark to the kernel log and print it (fails if
# it cannot be written)
dmesg_mark() {
	local m
	m=$(klog_mark selftest) || return 1
	[[ -w $_KMEMLEAK ]] && echo clear >"$_KMEMLEAK" 2>/dev/null
	printf '%s\n' "$m"
}

# check_dmesg_clean MARK: fail (printing the lines) if the kernel log gained
# lines that tests/klog.sh calls a kernel bug after MARK (whole log, with a
# note, if MARK is not in it), or if kmemleak (when enabled) reports new
# leaks.
check_dmesg_clean() {
	local mark=$1 log bad
	log=$(klog_since "$mark") || return 1
	# (klog_bad fails when it finds nothing, and subtests run with set -e)
	bad=$(klog_bad <<<"$log") || bad=
	if [[ -w $_KMEMLEAK ]]; then
		echo scan >"$_KMEMLEAK" 2>/dev/null
		bad+=$(cat "$_KMEMLEAK" 2>/dev/null || true)
	fi
	if [[ -n $bad ]]; then
		printf 'kernel log since %s:\n%s\n' "$mark" "$bad" >&2
		return 1
	fi
	echo "kernel log since $mark: no bug reports"
	return 0
}
