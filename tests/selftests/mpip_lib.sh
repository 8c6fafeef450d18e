# shellcheck shell=bash
# tests/selftests/mpip_lib.sh - mpip helpers on top of lib.sh.

MPIPCTL=$REPO/userspace/mpipctl
MPIP_KO=$REPO/kernel/mpip.ko
export MPIPCTL MPIP_KO

mpip_loaded() { [[ -d /sys/module/mpip ]]; }

# mpip_load: load the module unless it is loaded already
mpip_load() {
	mpip_loaded && return 0
	modprobe nf_defrag_ipv4 && insmod "$MPIP_KO"
}

mpip_unload() {
	mpip_loaded || return 0
	rmmod mpip
}

# mpip_require: skip the whole file if the module or mpipctl are missing
mpip_require() {
	local c
	[[ $EUID == 0 ]] || ktap_skip_all "needs root (run inside tools/vm.sh)"
	[[ -f $MPIP_KO ]] || ktap_skip_all "kernel/mpip.ko not built"
	[[ -x $MPIPCTL ]] || ktap_skip_all "userspace/mpipctl not built"
	for c in jq python3 socat; do
		command -v "$c" >/dev/null || ktap_skip_all "missing $c"
	done
	mpip_load || ktap_skip_all "cannot load mpip.ko"
}

# mpipctl_in NS ARGS...: mpipctl in a namespace
mpipctl_in() {
	local ns=$1
	shift
	in_ns "$ns" "$MPIPCTL" "$@"
}

# mpip_stat NS NAME: one counter; fails (prints nothing) if there is no
# numeric counter NAME, so an assertion on it cannot pass by accident
mpip_stat() {
	mpipctl_in "$1" -j stats | jq -er --arg k "$2" '.[$k] | numbers'
}

# mpip_node_id NS: this namespace's node ID as mpipctl prints it; fails if
# there is none
mpip_node_id() {
	mpipctl_in "$1" -j status | jq -er '.node_id | strings'
}

# mpip_avail_state NS ADDR PORT: state of one availability entry, or "none"
mpip_avail_state() {
	mpipctl_in "$1" -j show avail |
		jq -r --arg a "$2" --argjson p "$3" \
			'[.[] | select(.addr == $a and .port == $p)][0].state // "none"'
}

# mpip_avail_is NS ADDR PORT STATE: the availability entry is in STATE.
# For polling: `wait_for 15 mpip_avail_is ...`, never
# `wait_for 15 test "$(mpip_avail_state ...)" = yes` (expanded only once).
mpip_avail_is() {
	[[ $(mpip_avail_state "$1" "$2" "$3") == "$4" ]]
}

# _bg_stop PID LOG: stop a helper started in the background by the functions
# below, reap it and show what it printed
_bg_stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	[[ -s $2 ]] && cat "$2" >&2
	return 0
}

# tcp_send_file NS_SRC NS_DST DST_ADDR PORT FILE OUT: copy FILE over TCP
#
# Background helpers here write to files, never to the subtest's stdout or
# stderr: ktap_run reads those through a pipe, and a helper left running
# after a failure would hold it open (and the subtest with it) until its own
# timeout.  They are started with `ip netns exec` rather than in_ns (a shell
# function, which would run in a subshell) so that $! is the helper itself
# and can be killed.
tcp_send_file() {
	local src=$1 dst=$2 addr=$3 port=$4 file=$5 out=$6 log lpid rc=0
	log=$(tmpdir)/tcp-recv.$port.log
	rm -f "$out"
	ip netns exec "$dst" timeout 120 socat -u "TCP-LISTEN:$port,reuseaddr" \
		"OPEN:$out,creat,trunc" </dev/null >"$log" 2>&1 &
	lpid=$!
	if ! wait_for 30 tcp_listening "$dst" "$port"; then
		_bg_stop "$lpid" "$log"
		fail "nothing listens on $dst:$port"
	fi
	if ! in_ns "$src" timeout 110 socat -u "OPEN:$file" "TCP:$addr:$port"; then
		_bg_stop "$lpid" "$log"
		fail "TCP sender $src -> $addr:$port failed"
	fi
	wait "$lpid" || rc=$?
	[[ -s $log ]] && cat "$log" >&2
	((rc == 0)) || fail "TCP receiver on $dst:$port failed (exit $rc)"
}

# udp_exchange NS_SRC NS_DST DST_ADDR PORT COUNT [SPORT]: send COUNT checked
# datagrams; succeeds when exactly COUNT good ones arrive, each once.
udp_exchange() {
	local src=$1 dst=$2 addr=$3 port=$4 count=$5 sport=${6:-0}
	local ready res err rpid rc=0
	ready=$(tmpdir)/udp-ready.$port
	res=$(tmpdir)/udp-res.$port
	err=$(tmpdir)/udp-err.$port
	rm -f "$ready" "$res"
	# output to files, $! the receiver itself: see tcp_send_file
	ip netns exec "$dst" python3 "$REPO/tests/selftests/udpcheck.py" recv \
		"$port" "$count" --timeout 60 --linger 1 --ready "$ready" \
		</dev/null >"$res" 2>"$err" &
	rpid=$!
	if ! wait_for 60 test -e "$ready"; then
		_bg_stop "$rpid" "$err"
		fail "UDP receiver on $dst:$port not ready"
	fi
	if ! in_ns "$src" python3 "$REPO/tests/selftests/udpcheck.py" send \
		"$addr" "$port" "$count" --sport "$sport"; then
		_bg_stop "$rpid" "$err"
		fail "UDP sender failed"
	fi
	wait "$rpid" || rc=$?
	echo "udp $src -> $dst:$port: $(cat "$res")"
	[[ -s $err ]] && cat "$err" >&2
	return "$rc"
}

# mpip_setup_twolink TAG: the usual start of a test file.  Checks what the
# tests need, builds a fresh two-link topology and sets the globals
# P (namespace prefix), A and B (the two hosts), T (scratch directory) and
# MARK (kernel log mark).  Call it from the test's main shell.
# The globals are used by the sourcing test file:
# shellcheck disable=SC2034
mpip_setup_twolink() {
	mpip_require
	P=$(unique_prefix "$1")
	A=${P}a
	B=${P}b
	T=$(tmpdir)
	cleanup_push "$TOPO" clean --prefix "$P"
	MARK=$(dmesg_mark)
	"$TOPO" twolink --prefix "$P"
}
