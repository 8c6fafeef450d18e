#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of mpipctl that need no kernel module: option and
# argument handling, the "module not loaded" path and the JSON writer.
# Output is KTAP; the last line is "mpipctl: N passed, N failed" and the
# exit status is non-zero when a test failed.
#
#   MPIPCTL=/path/to/mpipctl tests/unit/test_mpipctl.sh
#
# Without MPIPCTL, userspace/mpipctl is used (and built if missing).  The
# tests that expect the mpip family to be absent are skipped when the
# module is loaded.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MPIPCTL=${MPIPCTL:-$ROOT/userspace/mpipctl}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$MPIPCTL" ] && [ "$MPIPCTL" = "$ROOT/userspace/mpipctl" ]; then
	make -s -C "$ROOT/userspace" >"$TMP/build.log" 2>&1 || {
		echo "KTAP version 1"
		echo "1..0"
		sed 's/^/# /' "$TMP/build.log"
		echo "Bail out! cannot build mpipctl"
		echo "mpipctl: 0 passed, 1 failed"
		exit 1
	}
fi

module_loaded=false
if [ -d /sys/module/mpip ]; then
	module_loaded=true
fi

passed=0
failed=0
n=0
msg=""

# run ARGS...: run mpipctl, leaving rc, out and err.
run() {
	"$MPIPCTL" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

fail() {
	msg="$*"
	return 1
}

# One line on stderr, prefixed "mpipctl: ", nothing on stdout.
one_line_error() {
	[ -z "$out" ] || fail "unexpected stdout: $out" || return 1
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "stderr is not one line: $err" || return 1
	[[ $err == "mpipctl: "* ]] || fail "stderr lacks the 'mpipctl: ' prefix: $err"
}

# expect_usage_error PATTERN ARGS...: exit 1 with a one-line error that
# matches PATTERN, without contacting the kernel.
expect_usage_error() {
	local pattern=$1
	shift
	run "$@"
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (stderr: $err)" || return 1
	one_line_error || return 1
	[[ $err != *"not loaded"* ]] || fail "reached netlink: $err" || return 1
	[[ $err == *$pattern* ]] || fail "stderr does not mention '$pattern': $err"
}

# check NAME FUNCTION [ARGS...]
check() {
	local name=$1
	shift
	n=$((n + 1))
	msg=""
	if "$@"; then
		echo "ok $n $name"
		passed=$((passed + 1))
	else
		echo "# $msg"
		echo "not ok $n $name"
		failed=$((failed + 1))
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

t_help() {
	local word
	run "$@"
	[ "$rc" -eq 0 ] || fail "exit $rc" || return 1
	[ -z "$err" ] || fail "stderr: $err" || return 1
	for word in status enable disable "show avail" nodes stats "get [KEY]" \
		    "set KEY VALUE" flush --json --help --version; do
		grep -qF -- "$word" "$TMP/out" || fail "help lacks '$word'" || return 1
	done
	for word in query_threshold peer_timeout_ms avail_timeout_ms node_timeout_ms; do
		grep -qF -- "$word" "$TMP/out" || fail "help lacks tunable '$word'" || return 1
	done
}

t_version() {
	run -V
	[ "$rc" -eq 0 ] || fail "exit $rc" || return 1
	[[ $out == "mpipctl "* ]] || fail "stdout: $out"
}

t_not_loaded() {
	run "$@"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2 (stderr: $err)" || return 1
	one_line_error || return 1
	[ "$err" = "mpipctl: mpip kernel module is not loaded" ] ||
		fail "stderr: $err"
}

# The JSON writer, compiled against a small driver: nesting, commas,
# escaping of quotes, backslashes and control characters, invalid UTF-8.
t_json() {
	local cflags
	cflags=$(pkg-config --cflags libnl-3.0 2>/dev/null) || fail "no libnl-3.0" || return 1
	cat >"$TMP/j.c" <<'EOF'
#include "mpipctl.h"
void err_msg(const char *fmt, ...) { (void)fmt; }
int main(void)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_key(&j, "s");
	json_str(&j, "a\"b\\c\n\t\x01/\xc3\xa9\xff\xe2\x82");
	json_key(&j, "l");
	json_arr_begin(&j);
	json_uint(&j, 18446744073709551615ULL);
	json_null(&j);
	json_bool(&j, true);
	json_arr_begin(&j);
	json_arr_end(&j);
	json_obj_begin(&j);
	json_obj_end(&j);
	json_arr_end(&j);
	json_key(&j, "e");
	json_arr_begin(&j);
	json_arr_end(&j);
	json_obj_end(&j);
	json_finish(&j);
	return 0;
}
EOF
	# shellcheck disable=SC2086
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$ROOT/userspace" \
		-I"$ROOT/kernel/uapi" $cflags -o "$TMP/j" "$TMP/j.c" \
		"$ROOT/userspace/json.c" >"$TMP/cc.log" 2>&1 ||
		fail "cannot compile: $(head -c 300 "$TMP/cc.log")" || return 1
	local got want
	got=$("$TMP/j")
	want='{"s":"a\"b\\c\n\t\u0001/é\ufffd\ufffd\ufffd","l":[18446744073709551615,null,true,[],{}],"e":[]}'
	[ "$got" = "$want" ] || fail "got $got"
}

have_cc() {
	command -v "${CC:-cc}" >/dev/null 2>&1 && pkg-config --exists libnl-3.0 2>/dev/null
}

echo "KTAP version 1"
PLAN=36
echo "1..$PLAN"

check "--help exits 0 and lists every command" t_help --help
check "-h exits 0 and lists every command" t_help -h
check "-V prints the version" t_version
check "no command exits 1" expect_usage_error "missing command"
check "unknown command exits 1 with one line" expect_usage_error "unknown command 'frobnicate'" frobnicate
check "unknown option exits 1" expect_usage_error "unknown option" --frobnicate
check "options go before the command" expect_usage_error "unexpected argument '-j'" stats -j
check "status with an argument exits 1" expect_usage_error "unexpected argument 'now'" status now
check "show without a table exits 1" expect_usage_error "missing table" show
check "show with an unknown table exits 1" expect_usage_error "unknown table 'foo'" show foo
check "show with an extra argument exits 1" expect_usage_error "unexpected argument" show avail x
check "get with an unknown key exits 1" expect_usage_error "unknown tunable 'foo'" get foo
check "set without arguments exits 1" expect_usage_error "missing KEY and VALUE" set
check "set without a value exits 1" expect_usage_error "missing VALUE" set query_threshold
check "set with an unknown key exits 1" expect_usage_error "unknown tunable 'bogus'" set bogus 5
check "set non-numeric exits 1" expect_usage_error "invalid value 'abc'" set query_threshold abc
check "set negative exits 1" expect_usage_error "invalid value '-5'" set query_threshold -5
check "set empty exits 1" expect_usage_error "invalid value ''" set query_threshold ""
check "set trailing garbage exits 1" expect_usage_error "invalid value '5x'" set query_threshold 5x
check "set leading blank exits 1" expect_usage_error "invalid value ' 5'" set query_threshold " 5"
check "set leading plus exits 1" expect_usage_error "invalid value '+5'" set query_threshold +5
check "set hex exits 1" expect_usage_error "invalid value '0x10'" set query_threshold 0x10
check "set overflow 99999999999 exits 1" expect_usage_error "out of range" set peer_timeout_ms 99999999999
check "set 2^32 exits 1" expect_usage_error "out of range" set node_timeout_ms 4294967296
check "set 2^64 exits 1" expect_usage_error "out of range" set avail_timeout_ms 18446744073709551616
check "set with an extra argument exits 1" expect_usage_error "unexpected argument '6'" set query_threshold 5 6

for args in "status" "-j status" "enable" "disable" "show avail" "-j show nodes" \
	    "stats" "get" "set query_threshold 4294967295"; do
	if $module_loaded; then
		skip "$args without the module exits 2" "mpip module is loaded"
	else
		# shellcheck disable=SC2086
		check "$args without the module exits 2" t_not_loaded $args
	fi
done

if have_cc; then
	check "JSON writer escapes and nests correctly" t_json
else
	skip "JSON writer escapes and nests correctly" "no C compiler or libnl-3 headers"
fi

if [ "$n" -ne "$PLAN" ]; then
	echo "# ran $n tests, planned $PLAN"
	failed=$((failed + 1))
fi
echo "mpipctl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
