#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the example /etc/mpip/mpip.conf (debian/mpip.conf)
# that mpip.service runs with "mpipctl -b": mpipctl is built against the
# fake kernel of test_mpipctl.sh, as test_batch.sh does, and
#  - the file as shipped runs: comment lines run nothing, every command
#    line sends its request;
#  - every example in it ("#COMMAND", a '#' right before a command) is a
#    command that mpipctl accepts and sends, once uncommented (interface
#    names replaced by lo, which every host has);
#  - the unit (debian/mpipctl.mpip.service) runs the file that the package
#    installs.
# Output is KTAP; the last line is "conf: N passed, N failed" and the exit
# status is non-zero when a test failed.
#
#   bash tests/unit/test_conf.sh       (KEEP_TMP=1 keeps the scratch dir)

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CONF=$ROOT/debian/mpip.conf
UNIT=$ROOT/debian/mpipctl.mpip.service
TMP=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"
rc=0
out=""
err=""
req=""

build() { build_fake; }

# fake ARGS... : mpipctl against the fake kernel; leaves rc, out, err and
# the requests it sent, one a line, in req.
fake() {
	rm -f "$TMP/log"
	FAKE=full FAKE_LOG="$TMP/log" "$TMP/fake" "$@" </dev/null \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
	req=$(cat "$TMP/log" 2>/dev/null)
}

# The command lines of FILE: what is left of each line without its
# comment, blank lines dropped (as batch.c splits them: '#' at the start
# of a word ends the line).
commands() {
	sed -e 's/^[[:space:]]*#.*//' -e 's/[[:space:]]#.*//' \
		-e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$1" | grep -v '^$'
}

# The examples of FILE: lines "#WORD ..." (no blank after the '#'), without
# the '#', with every "dev NAME" / "nodev NAME" naming lo.
examples() {
	sed -n 's/^#\([a-z]\)/\1/p' "$1" |
		sed -E 's/\b(dev|nodev) [^ ]+/\1 lo/g'
}

t_file() {
	[ -f "$CONF" ] || fail "no $CONF" || return 1
	grep -q '^#' "$CONF" || fail "$CONF has no comments" || return 1
	[ "$(examples "$CONF" | wc -l)" -ge 5 ] ||
		fail "fewer than 5 examples ('#COMMAND' lines) in $CONF" || return 1
	# prose comments have a blank after '#', so they are no examples
	! grep -nE '^#[A-Z]' "$CONF" ||
		fail "a comment line that looks like an example: $(grep -nE '^#[A-Z]' "$CONF")"
}

# As shipped: exit 0, nothing printed, one request per command line (and
# none for the comments).
t_as_shipped() {
	local want
	want=$(commands "$CONF" | wc -l)
	fake -b "$CONF"
	[ "$rc" -eq 0 ] || fail "mpipctl -b $CONF: exit $rc: $err" || return 1
	[ -z "$out$err" ] || fail "mpipctl -b $CONF printed: $out$err" || return 1
	[ "$(grep -c . <<<"$req")" -eq "$want" ] ||
		fail "$want command lines, requests: ${req:-none}"
}

# Every example, one at a time: accepted, one request sent.
t_examples() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line" >"$TMP/one"
		fake -b "$TMP/one"
		[ "$rc" -eq 0 ] || fail "example '$line': exit $rc: $err" || return 1
		[ -n "$req" ] || fail "example '$line' sent nothing" || return 1
	done < <(examples "$CONF")
}

# All of them uncommented, in the file's order: the file still runs
# through (no rule added twice, no preference taken twice).
t_all_examples() {
	local want
	examples "$CONF" >"$TMP/all"
	want=$(wc -l <"$TMP/all")
	fake -b "$TMP/all"
	[ "$rc" -eq 0 ] || fail "all examples: exit $rc: $err" || return 1
	[ "$(grep -c . <<<"$req")" -eq "$want" ] ||
		fail "$want examples, requests: $req"
}

# A mistake in the file is reported as FILE:LINE (what the journal shows).
t_error_line() {
	local lines
	cp "$CONF" "$TMP/bad.conf"
	echo 'set no_such_tunable 1' >>"$TMP/bad.conf"
	lines=$(wc -l <"$TMP/bad.conf")
	fake -b "$TMP/bad.conf"
	[ "$rc" -eq 1 ] || fail "exit $rc" || return 1
	[[ $err == "mpipctl: $TMP/bad.conf:$lines: set: unknown tunable 'no_such_tunable'"* ]] ||
		fail "stderr: $err"
}

# The unit runs the file the package installs (debian/mpipctl.install).
t_unit_runs_it() {
	local dest
	dest=$(awk '$1 == "debian/mpip.conf" { print "/" $2 "/mpip.conf" }' \
		"$ROOT/debian/mpipctl.install")
	[ "$dest" = /etc/mpip/mpip.conf ] ||
		fail "debian/mpipctl.install puts debian/mpip.conf in '$dest'" || return 1
	if ! grep -qxF "ExecStart=/usr/sbin/mpipctl -b $dest" "$UNIT" ||
		! grep -qxF "ExecReload=/usr/sbin/mpipctl -b $dest" "$UNIT"; then
		fail "$UNIT does not run mpipctl -b $dest on start and reload"
		return 1
	fi
}

echo "KTAP version 1"
PLAN=7
echo "1..$PLAN"
check "mpipctl and the fake kernel build" build
check "debian/mpip.conf: comments and '#COMMAND' examples" t_file
if [ -x "$TMP/fake" ]; then
	check "mpipctl -b runs it as shipped: comment lines run nothing" t_as_shipped
	check "every example in it is a command mpipctl accepts" t_examples
	check "all examples uncommented run through" t_all_examples
	check "an error in it names FILE:LINE" t_error_line
else
	while [ "$n" -lt $((PLAN - 1)) ]; do
		n=$((n + 1))
		echo "not ok $n fake kernel test (the fake kernel did not build)"
		failed=$((failed + 1))
	done
fi
check "mpip.service runs the installed /etc/mpip/mpip.conf" t_unit_runs_it

ktap_end conf
