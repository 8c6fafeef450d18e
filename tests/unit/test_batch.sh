#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of "mpipctl -b FILE" (batch mode), without a kernel
# module: mpipctl is built against the fake kernel of test_mpipctl.sh
# (its fake.c is taken from that file, between the heredoc markers of
# write_fake), which logs one line per request to $TMP/log.
# Output is KTAP; the last line is "batch: N passed, N failed" and the
# exit status is non-zero when a test failed.
#
#   bash tests/unit/test_batch.sh       (KEEP_TMP=1 keeps the scratch dir)

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MPIPCTL=$ROOT/userspace/mpipctl
TMP=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"
rc=0
out=""
err=""

build() {
	make -s -C "$ROOT/userspace" >"$TMP/make.log" 2>&1 ||
		fail "make -C userspace: $(head -c 600 "$TMP/make.log")" || return 1
	build_fake
}

# [SCENARIO=S] fake ARGS... <INPUT: mpipctl against the fake kernel (FAKE=S,
# default full), stdin from the caller (not a pipe: fake sets variables);
# leaves rc, out, err and the requests in req.
fake() {
	rm -f "$TMP/log"
	FAKE=${SCENARIO:-full} FAKE_LOG="$TMP/log" "$TMP/fake" "$@" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
	req=$(cat "$TMP/log" 2>/dev/null)
}

# expect RC STDOUT STDERR REQUESTS: what the last fake run did.
expect() {
	[ "$rc" -eq "$1" ] || fail "exit $rc, expected $1 (stderr: $err)" || return 1
	[ "$out" = "$2" ] || fail "stdout: $out" || return 1
	[ "$err" = "$3" ] || fail "stderr: $err" || return 1
	[ "$req" = "$4" ] || fail "requests: ${req//$'\n'/ | }"
}

ENABLE="cmd=2 version=1 dump=0 enabled:1=1"
DISABLE="cmd=2 version=1 dump=0 enabled:1=0"
FLUSH="cmd=8 version=1 dump=0"

t_two_lines() {
	printf 'enable\nflush\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	expect 0 "" "" "$ENABLE"$'\n'"$FLUSH"
}

t_skip_comments() {
	printf '# a comment\n\n \t \n   # indented comment\nflush # the rest is a comment\n#enable\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	expect 0 "" "" "$FLUSH"
}

t_bad_line_stops() {
	printf 'enable\n\nset bogus 1\nflush\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	[[ $err == "mpipctl: $TMP/b:3: set: unknown tunable 'bogus' ("* ]] ||
		fail "stderr: $err" || return 1
	expect 1 "" "$err" "$ENABLE"
}

t_unknown_command() {
	printf 'enable\nfrobnicate now\ndisable\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	expect 1 "" "mpipctl: $TMP/b:2: unknown command 'frobnicate' (try 'mpipctl --help')" "$ENABLE"
}

t_kernel_error() {
	printf '# the kernel refuses\nenable\nflush\n' >"$TMP/b"
	SCENARIO=err-perm fake -b "$TMP/b" </dev/null
	expect 1 "" "mpipctl: $TMP/b:2: permission denied (CAP_NET_ADMIN needed)" "$ENABLE"
}

t_missing_file() {
	fake -b "$TMP/nonexistent" </dev/null
	expect 1 "" "mpipctl: cannot open $TMP/nonexistent: No such file or directory" ""
}

# monitor never ends: refused in a batch, with the line, nothing sent
t_monitor_refused() {
	printf 'enable\nmonitor\nflush\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	expect 1 "" "mpipctl: $TMP/b:2: monitor does not end: not in a batch" "$ENABLE"
}

t_stdin() {
	printf 'enable\ndisable\n' >"$TMP/b"
	fake -b - <"$TMP/b"
	expect 0 "" "" "$ENABLE"$'\n'"$DISABLE"
}

t_stdin_error() {
	printf 'enable\nset heartbeat_ms\n' >"$TMP/b"
	fake -b - <"$TMP/b"
	expect 1 "" "mpipctl: <stdin>:2: set: missing VALUE (usage: mpipctl set KEY VALUE)" "$ENABLE"
}

# -j before -b applies to every line: the output is that of the
# commands run one by one.
t_json_every_line() {
	local want
	fake -j status </dev/null
	want=$out
	fake -j get heartbeat_ms </dev/null
	want+=$'\n'$out
	printf 'status\nget heartbeat_ms\n' >"$TMP/b"
	fake -j -b "$TMP/b" </dev/null
	expect 0 "$want" "" "cmd=1 version=1 dump=0"$'\n'"cmd=6 version=1 dump=0"
}

t_json_refused() {
	printf 'status\nenable\n' >"$TMP/b"
	fake --json --batch "$TMP/b" </dev/null
	[ -n "$out" ] || fail "no output from status" || return 1
	expect 1 "$out" "mpipctl: $TMP/b:2: enable: option -j applies to status, show, stats, get and monitor only" "cmd=1 version=1 dump=0"
}

t_quotes() {
	printf 'link set dev "lo" advertise off\nset "weight step" 3\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	[[ $err == "mpipctl: $TMP/b:2: set: unknown tunable 'weight step' ("* ]] ||
		fail "stderr: $err" || return 1
	expect 1 "" "$err" "cmd=12 version=1 dump=0 link(nested) 1:4=1 3:1=0"
}

t_open_quote() {
	printf 'enable\nset "heartbeat_ms 300\n' >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	expect 1 "" "mpipctl: $TMP/b:2: unterminated double quote" "$ENABLE"
}

t_force() {
	printf 'set bogus 1\nenable\nrule frob\nflush\n' >"$TMP/b"
	fake -f -b "$TMP/b" </dev/null
	[ "$(grep -c "^mpipctl: $TMP/b:[13]: " "$TMP/err")" -eq 2 ] ||
		fail "stderr: $err" || return 1
	expect 1 "" "$err" "$ENABLE"$'\n'"$FLUSH"
}

t_batch_and_command() {
	printf 'enable\n' >"$TMP/b"
	fake -b "$TMP/b" flush </dev/null
	expect 1 "" "mpipctl: -b: unexpected command 'flush' (the commands are in $TMP/b)" ""
}

t_force_alone() {
	fake -f enable </dev/null
	expect 1 "" "mpipctl: option -f applies to -b only" ""
}

t_empty_file() {
	: >"$TMP/b"
	fake -b "$TMP/b" </dev/null
	expect 0 "" "" ""
}

# The real mpipctl: -b in its help, and a missing file.
t_real() {
	"$MPIPCTL" --help | grep -q -- "-b, --batch FILE" ||
		fail "--help does not list -b" || return 1
	err=$("$MPIPCTL" -b "$TMP/nonexistent" 2>&1 </dev/null)
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit $rc" || return 1
	[ "$err" = "mpipctl: cannot open $TMP/nonexistent: No such file or directory" ] ||
		fail "stderr: $err"
}

echo "KTAP version 1"
PLAN=19
echo "1..$PLAN"
check "mpipctl and the fake kernel build with batch.c" build
if [ -x "$TMP/fake" ]; then
	check "two lines run in order" t_two_lines
	check "blank lines and comments run nothing" t_skip_comments
	check "a bad line: FILE:LINE, exit 1, later lines not run" t_bad_line_stops
	check "an unknown command: FILE:LINE" t_unknown_command
	check "a kernel error: FILE:LINE" t_kernel_error
	check "a missing file: exit 1" t_missing_file
	check "monitor in a batch: FILE:LINE, exit 1" t_monitor_refused
	check "-b - reads stdin" t_stdin
	check "-b -: errors name <stdin>" t_stdin_error
	check "-j before -b applies to every line" t_json_every_line
	check "-j with a line that prints nothing fails there" t_json_refused
	check "double quotes keep blanks in a word" t_quotes
	check "an open double quote is an error" t_open_quote
	check "-f runs the lines after a failure, exit 1" t_force
	check "-b with a command exits 1" t_batch_and_command
	check "-f without -b exits 1" t_force_alone
	check "an empty file runs nothing, exit 0" t_empty_file
else
	while [ "$n" -lt $((PLAN - 1)) ]; do
		n=$((n + 1))
		echo "not ok $n fake kernel test (the fake kernel did not build)"
		failed=$((failed + 1))
	done
fi
check "the real mpipctl: -b in --help, missing file" t_real

ktap_end batch
