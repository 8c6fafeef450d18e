#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tools/wsim, the model of mpip's weight rounds over remote
# bottlenecks: it builds without warnings against kernel/core; its
# figures tell the kernel's random draws from the golden-ratio trial
# (-G): with a window of 200 packets over 40 + 20 Mbit/s, the random ones
# put more than 100 packets into the receiver's reorder buffer at times,
# the trial's never; and the model is deterministic (the same run twice
# prints the same line).
# Output is KTAP; the last line is "wsim: N passed, N failed" and the
# exit status is non-zero when a test failed.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
WSIM=$TMP/wsim

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"

t_build() {
	make -s -C "$ROOT/tools/wsim" OUT="$WSIM" >"$TMP/cc.log" 2>&1 ||
		fail "make -C tools/wsim: $(head -c 600 "$TMP/cc.log")"
}

# over LINE: the packets over 100 in the reorder buffer that LINE reports
over() { sed -n 's/.*over 100: \([0-9]*\) pkts.*/\1/p' <<<"$1"; }

t_draws() {
	local r k
	[ -x "$WSIM" ] || fail "no wsim" || return 1
	r=$("$WSIM" -w 200 -t 5) && k=$("$WSIM" -w 200 -t 5 -G) ||
		fail "wsim failed" || return 1
	[ -n "$(over "$r")" ] && [ -n "$(over "$k")" ] ||
		fail "no figures: $r / $k" || return 1
	if [ "$(over "$r")" -eq 0 ] || [ "$(over "$k")" -ne 0 ]; then
		fail "random: $r"$'\n'"golden: $k"
	fi
}

t_same() {
	[ -x "$WSIM" ] || fail "no wsim" || return 1
	[ "$("$WSIM" -w 300 -t 3)" = "$("$WSIM" -w 300 -t 3)" ] ||
		fail "two runs differ"
}

t_usage() {
	[ -x "$WSIM" ] || fail "no wsim" || return 1
	if "$WSIM" -x >/dev/null 2>"$TMP/err" || ! grep -q usage "$TMP/err"; then
		fail "a bad option does not fail with the usage"
	fi
}

PLAN=4
echo "KTAP version 1"
echo "1..$PLAN"
check "tools/wsim builds (-Wall -Wextra -Werror)" t_build
check "random draws overflow the reorder buffer, golden-ratio ones not" t_draws
check "the model is deterministic" t_same
check "a bad option fails with the usage" t_usage
ktap_end wsim
