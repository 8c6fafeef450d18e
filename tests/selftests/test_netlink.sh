#!/usr/bin/env bash
# test_netlink.sh - the generic netlink API through mpipctl: per-namespace
# status and switch (hooks registered only while on), permissions, tunables
# with range checks, flush, JSON.
# shellcheck disable=SC2317
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpip_lib.sh"

mpip_setup_twolink nl

t_status() {
	mpipctl_in "$A" -j status | tee "$T/st"
	jq -e '.enabled == true and (.node_id | test("^0x[0-9a-f]{8}$"))' "$T/st"
}

t_disable_is_per_namespace() {
	mpipctl_in "$A" disable
	mpipctl_in "$A" -j status | jq -e '.enabled == false'
	mpipctl_in "$B" -j status | jq -e '.enabled == true'
	mpipctl_in "$A" enable
	mpipctl_in "$A" -j status | jq -e '.enabled == true'
}

# hook_calls CMD...: how often mpip's hooks ran, in any namespace, while
# CMD ran, as the function tracer counts.  Fails, saying why, if the tracer
# cannot count them: no tracefs, or either hook cannot be traced (renamed
# or inlined), so that "0 calls" always means the hooks did not run.
hook_calls() {
	local t=/sys/kernel/tracing n f
	mountpoint -q "$t" || mount -t tracefs nodev "$t" ||
		{ echo "cannot mount tracefs on $t" >&2; return 1; }
	[[ -w "$t/set_ftrace_filter" ]] ||
		{ echo "no function tracer ($t/set_ftrace_filter)" >&2; return 1; }
	for f in mpip_in_hook mpip_out_hook; do
		grep -qE "^$f( \[mpip\])?$" "$t/available_filter_functions" ||
			{ echo "$f cannot be traced (not in available_filter_functions)" >&2; return 1; }
	done
	if ! echo 'mpip_in_hook mpip_out_hook' >"$t/set_ftrace_filter" ||
		[[ $(sed 's/ .*//' "$t/set_ftrace_filter" | sort | tr '\n' ' ') != "mpip_in_hook mpip_out_hook " ]]; then
		echo "cannot set the filter to the two hooks: $(tr '\n' ' ' <"$t/set_ftrace_filter")" >&2
		echo >"$t/set_ftrace_filter"
		return 1
	fi
	echo >"$t/trace"
	echo 1 >"$t/tracing_on"
	if ! echo function >"$t/current_tracer"; then
		echo "cannot start the function tracer" >&2
		echo >"$t/set_ftrace_filter"
		return 1
	fi
	"$@" >/dev/null
	echo 0 >"$t/tracing_on"
	# before the tracer goes: switching it empties the buffer
	n=$(grep -c 'mpip_\(in\|out\)_hook' "$t/trace") || true
	echo nop >"$t/current_tracer"
	echo 1 >"$t/tracing_on"
	echo >"$t/set_ftrace_filter"
	echo "$n"
}

# mpip's hooks are registered only while it is enabled: with both hosts
# off, packets between them never enter mpip code
t_hooks_follow_switch() {
	local n
	mpipctl_in "$A" disable
	mpipctl_in "$B" disable
	n=$(hook_calls in_ns "$A" ping -c 3 -i 0.2 10.1.1.2) ||
		fail "cannot count the hooks' calls"
	echo "hook calls, both off: $n"
	((n == 0)) || fail "mpip's hooks ran in disabled namespaces"
	mpipctl_in "$A" enable
	mpipctl_in "$B" enable
	n=$(hook_calls in_ns "$A" ping -c 3 -i 0.2 10.1.1.2) ||
		fail "cannot count the hooks' calls"
	echo "hook calls, both on: $n"
	# 3 echo requests and 3 replies, each through an output and an input
	((n >= 12)) || fail "hooks not back after enable"
}

t_unprivileged() {
	local out rc=0
	command -v setpriv >/dev/null || skip "no setpriv"
	in_ns "$A" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPIPCTL" status >/dev/null || fail "read denied to unprivileged user"
	out=$(in_ns "$A" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPIPCTL" disable 2>&1) || rc=$?
	echo "$out (exit $rc)"
	((rc == 1)) || fail "expected exit 1"
	grep -q 'permission denied' <<<"$out"
	mpipctl_in "$A" -j status | jq -e '.enabled == true'
}

t_tunables() {
	mpipctl_in "$A" set query_threshold 7
	[[ $(mpipctl_in "$A" -j get | jq .query_threshold) == 7 ]]
	[[ $(mpipctl_in "$B" -j get | jq .query_threshold) == 5 ]]
	mpipctl_in "$A" set peer_timeout_ms 2500
	[[ $(mpipctl_in "$A" get peer_timeout_ms | grep -oE '[0-9]+$') == 2500 ]]
	local rc=0
	mpipctl_in "$A" set query_threshold 0 2>"$T/err" || rc=$?
	cat "$T/err"
	((rc == 1)) || fail "out-of-range value accepted"
	[[ $(mpipctl_in "$A" -j get | jq .query_threshold) == 7 ]]
	rc=0
	mpipctl_in "$A" set no_such_key 1 2>/dev/null || rc=$?
	((rc == 1)) || fail "unknown key accepted"
	mpipctl_in "$A" set query_threshold 5
}

t_flush_and_json() {
	echo x | in_ns "$A" socat -u - UDP-SENDTO:10.1.1.2:9,sourceport=9999
	mpipctl_in "$A" -j show avail | jq -e 'length >= 1'
	# B probes the paths to a node it knows: flush it first, or its
	# probes would teach A about B again
	mpipctl_in "$B" flush
	mpipctl_in "$A" flush
	[[ $(mpipctl_in "$A" -j show avail) == "[]" ]]
	[[ $(mpipctl_in "$A" -j show nodes | jq -c .) == "[]" ]]
	mpipctl_in "$A" -j stats | jq -e 'type == "object" and has("tx_query")'
}

# many_udp NS DST PORT N: one datagram from each of N UDP source ports
many_udp() {
	in_ns "$1" python3 - "$2" "$3" "$4" <<'PY'
import resource, socket, sys
dst, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (min(n + 64, hard), hard))
socks = []
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 20000 + i))
    socks.append(s)
for s in socks:
    s.sendto(b"x", (dst, port))
PY
}

# a_sessions_are N: A holds N sessions
a_sessions_are() { [[ $(mpipctl_in "$A" -j status | jq .sessions) == "$1" ]]; }

# A dump of 3000 sessions spans many netlink messages (the session table
# resizes on the way): every session is listed, and as often as the
# status count says; idle ones expire and go from both.
t_many_sessions() {
	local n=3000 got
	mpipctl_in "$A" flush
	mpipctl_in "$B" flush
	# the first datagram to a peer only starts the handshake; the flows
	# get sessions once it is done
	many_udp "$A" 10.1.1.2 7 1
	wait_for 15 mpip_avail_is "$A" 10.1.1.2 7 yes ||
		fail "A does not know B as a peer: $(mpip_avail_state "$A" 10.1.1.2 7)"
	many_udp "$A" 10.1.1.2 7 "$n"
	got=$(mpipctl_in "$A" -j status | jq .sessions)
	echo "sessions after $n flows: $got"
	((got >= n)) || fail "only $got sessions for $n flows"
	mpipctl_in "$A" -j show sessions >"$T/sess"
	jq -e --argjson c "$got" 'length == $c and
		([.[] | "\(.proto) \(.lport) \(.rport)"] | unique | length) == $c' \
		"$T/sess" >/dev/null || fail "dump: $(jq length "$T/sess") entries, status $got"
	mpipctl_in "$A" set session_timeout_ms 1000
	wait_for 10 a_sessions_are 0 ||
		fail "sessions did not expire"
	[[ $(mpipctl_in "$A" -j show sessions) == "[]" ]] || fail "expired sessions still listed"
	mpipctl_in "$A" -j stats | jq -e --argjson c "$got" '.session_expired >= $c' >/dev/null ||
		fail "session_expired not counted"
	mpipctl_in "$A" set session_timeout_ms 120000
}

t_default_param() {
	local p=/sys/module/mpip/parameters/default_enabled old
	[[ -w $p ]] || skip "parameter not writable"
	old=$(cat "$p")
	# restore the parameter and remove the namespace however this subtest
	# ends (a subtest is a subshell: its EXIT trap is its own; topo.sh
	# clean does not know ${P}z)
	# shellcheck disable=SC2064 # expand now: the locals are gone at exit
	trap "echo $(printf %q "$old") >$p || true; ip netns del ${P}z 2>/dev/null || true" EXIT
	echo 0 >"$p"
	ip netns add "${P}z"
	in_ns "${P}z" "$MPIPCTL" -j status | jq -e '.enabled == false' ||
		fail "new namespace not disabled"
}

t_not_loaded_error() {
	# the error path of mpipctl itself is covered by tests/unit; here just
	# make sure the family name resolves in every namespace
	mpipctl_in "$B" status | grep -q enabled
}

ktap_header
ktap_plan 9
ktap_run status_json t_status
ktap_run disable_is_per_namespace t_disable_is_per_namespace
ktap_run hooks_only_while_enabled t_hooks_follow_switch
ktap_run unprivileged_read_only t_unprivileged
ktap_run tunables_range_checked t_tunables
ktap_run flush_and_json t_flush_and_json
ktap_run many_sessions_dump_and_expire t_many_sessions
ktap_run default_enabled_parameter t_default_param
ktap_run family_in_every_namespace t_not_loaded_error
ktap_finish
