#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tools/wsim, the model of mpip's weight rounds over remote
# bottlenecks: it builds without warnings against kernel/core; its
# figures tell the kernel's random draws from the golden-ratio trial
# (-G): with a window of 200 packets over 40 + 20 Mbit/s, the random ones
# put more than 100 packets into the receiver's reorder buffer at times,
# the trial's never; and the model is deterministic (the same run twice
# prints the same line).  And of tools/webrtc/pathsim.py, the model of
# WebRTC scenario (b): over two 1 Mbit/s links aiortc's (fixed) estimate
# grows past one link's rate when packets are spread one by one, and its
# stock estimator, which reordering misleads, says "underusing" most of
# the time.
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

# figures FN LINE...: FN (over, target) finds its figure in every LINE
figures() {
	local fn=$1 l
	shift
	for l; do
		[ -n "$("$fn" "$l")" ] || fail "no figures: $*" || return 1
	done
}

t_draws() {
	local r k
	[ -x "$WSIM" ] || fail "no wsim" || return 1
	r=$("$WSIM" -w 200 -t 5) && k=$("$WSIM" -w 200 -t 5 -G) ||
		fail "wsim failed" || return 1
	figures over "$r" "$k" || return 1
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

# pathsim ARGS...: its line of medians, "POLICY median: target N kbit/s, ..."
pathsim() {
	/usr/bin/python3 "$ROOT/tools/webrtc/pathsim.py" --seeds 1 --seconds 40 "$@" | tail -n 1
}
target() { sed -n 's/.*target *\([0-9]*\) kbit.*/\1/p' <<<"$1"; }

t_pathsim_spread() {
	local one two
	one=$(pathsim --policy single) && two=$(pathsim --policy packet) ||
		fail "pathsim failed: $one $two" || return 1
	figures target "$one" "$two" || return 1
	# one link: at most its 1000 kbit/s; two: over one and a half links
	if [ "$(target "$one")" -gt 1000 ] || [ "$(target "$two")" -lt 1500 ]; then
		fail "one link: $one"$'\n'"two: $two"
	fi
}

t_pathsim_stock() {
	local r u
	r=$(pathsim --policy packet --stock) || fail "pathsim failed: $r" || return 1
	u=$(sed -n 's/.*underusing \([0-9.]*\).*/\1/p' <<<"$r")
	[ -n "$u" ] || fail "no figure: $r" || return 1
	awk -v u="$u" 'BEGIN { exit !(u > 0.5) }' || fail "stock: $r"
}

PLAN=6
echo "KTAP version 1"
echo "1..$PLAN"
check "tools/wsim builds (-Wall -Wextra -Werror)" t_build
check "random draws overflow the reorder buffer, golden-ratio ones not" t_draws
check "the model is deterministic" t_same
check "a bad option fails with the usage" t_usage
check "pathsim: packets spread over two links lift the estimate past one" t_pathsim_spread
check "pathsim: aiortc's stock estimator reads the spread as underuse" t_pathsim_stock
ktap_end wsim
