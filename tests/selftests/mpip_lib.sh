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

# mpip_stat NS NAME: one counter
mpip_stat() {
	mpipctl_in "$1" -j stats | jq -r --arg k "$2" '.[$k]'
}

# mpip_node_id NS: this namespace's node ID as mpipctl prints it
mpip_node_id() {
	mpipctl_in "$1" -j status | jq -r .node_id
}

# mpip_avail_state NS ADDR PORT: state of one availability entry, or "none"
mpip_avail_state() {
	mpipctl_in "$1" -j show avail |
		jq -r --arg a "$2" --argjson p "$3" \
			'[.[] | select(.addr == $a and .port == $p)][0].state // "none"'
}

# tcp_send_file NS_SRC NS_DST DST_ADDR PORT FILE OUT: copy FILE over TCP
tcp_send_file() {
	local src=$1 dst=$2 addr=$3 port=$4 file=$5 out=$6
	rm -f "$out"
	in_ns "$dst" timeout 120 socat -u "TCP-LISTEN:$port,reuseaddr" \
		"OPEN:$out,creat,trunc" &
	local lpid=$!
	wait_for 30 tcp_listening "$dst" "$port" ||
		fail "nothing listens on $dst:$port"
	in_ns "$src" timeout 110 socat -u "OPEN:$file" "TCP:$addr:$port" ||
		fail "TCP sender $src -> $addr:$port failed"
	wait "$lpid" || fail "TCP receiver on $dst:$port failed"
}

# udp_exchange NS_SRC NS_DST DST_ADDR PORT COUNT [SPORT]: send COUNT checked
# datagrams; succeeds when exactly COUNT good ones arrive, each once.
udp_exchange() {
	local src=$1 dst=$2 addr=$3 port=$4 count=$5 sport=${6:-0}
	local ready res
	ready=$(tmpdir)/udp-ready.$port
	rm -f "$ready"
	res=$(tmpdir)/udp-res.$port
	in_ns "$dst" python3 "$REPO/tests/selftests/udpcheck.py" recv "$port" \
		"$count" --timeout 60 --linger 1 --ready "$ready" >"$res" &
	local rpid=$!
	wait_for 60 test -e "$ready" || fail "UDP receiver on $dst:$port not ready"
	in_ns "$src" python3 "$REPO/tests/selftests/udpcheck.py" send "$addr" \
		"$port" "$count" --sport "$sport" || fail "UDP sender failed"
	local rc=0
	wait "$rpid" || rc=$?
	echo "udp $src -> $dst:$port: $(cat "$res")"
	return "$rc"
}

# mpip_setup_twolink TAG: the usual start of a test file.  Checks what the
# tests need, builds a fresh two-link topology and sets the globals
# P (namespace prefix), A and B (the two hosts), T (scratch directory) and
# MARK (kernel log mark).  Call it from the test's main shell.
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
