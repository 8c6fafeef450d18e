#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tools/wsim, the model of mpip's weight rounds over remote
# bottlenecks: it builds without warnings against kernel/core; its
# figures tell the kernel's golden-ratio draws from the random trial
# (-R, the kernel's draws until 2026-12-06): with a window of 200
# packets over 40 + 20 Mbit/s, the random ones put more than 100 packets
# into the receiver's reorder buffer at times, the kernel's never; and
# the model is deterministic (the same run twice prints the same line).
# And of tools/webrtc/pathsim.py, the model of WebRTC scenario (b): over
# two 1 Mbit/s links aiortc's (fixed) estimate grows past one link's rate
# when packets are spread one by one, and its stock estimator, which
# reordering misleads, says "underusing" most of the time.  And of the
# WebRTC calls' sender and receiver helpers: ladder.py's video encoded
# ahead of a call, call.py's LadderVideo that sends it at the rate
# allowed, its paced NACKs and its kernel-timed arrivals; and
# analyze.py's per-packet figures (reordering, the share on the slower
# path).
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
	r=$("$WSIM" -w 200 -t 5 -R) && k=$("$WSIM" -w 200 -t 5) ||
		fail "wsim failed" || return 1
	figures over "$r" "$k" || return 1
	if [ "$(over "$r")" -eq 0 ] || [ "$(over "$k")" -ne 0 ]; then
		fail "random: $r"$'\n'"kernel's: $k"
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
reordered() { sed -n 's/.*reordered \([0-9.]*\).*/\1/p' <<<"$1"; }

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

# pathsim's reorder share: mpip's weighted draws put a fifth of the
# packets and more behind a later one, the earliest-arrival policy
# almost none
t_pathsim_reorder() {
	local r e
	r=$(pathsim --policy packet --fps 15) && e=$(pathsim --policy earliest --fps 15) ||
		fail "pathsim failed: $r $e" || return 1
	figures reordered "$r" "$e" || return 1
	r=$(reordered "$r") e=$(reordered "$e")
	awk -v r="$r" -v e="$e" 'BEGIN { exit !(r > 0.2 && e < 0.01) }' ||
		fail "packet $r, earliest $e"
}

# ladder.py, the video encoded ahead of a call: each rung a keyframe and
# then inter frames only, at its target rate within 10 % (320x240, 20 s)
t_ladder() {
	local l=$TMP/ladder.pkl
	/usr/bin/python3 "$ROOT/tools/webrtc/ladder.py" "$l" --seconds 20 \
		--rates 250,1500 2>"$TMP/ladder.log" ||
		fail "ladder.py: $(tail -3 "$TMP/ladder.log")" || return 1
	PYTHONPATH=$ROOT/tools/webrtc /usr/bin/python3 - "$l" <<-'PY' || fail "$(cat "$TMP/ladder.log")"
		import pickle, sys
		from ladder import is_keyframe
		rungs = pickle.load(open(sys.argv[1], "rb"))["rungs"]
		assert [r["kbps"] for r in rungs] == [250, 1500], rungs
		for r in rungs:
		    assert abs(r["measured_kbps"] / r["kbps"] - 1) < 0.1, r["kbps"]
		    assert is_keyframe(r["key"]) and len(r["frames"]) == 300
		    assert not any(map(is_keyframe, r["frames"]))
	PY
}

# call.py's LadderVideo takes for each frame the highest rung within the
# encoder's target, the lowest when none is; a keyframe first and when
# asked for, inter frames in turn otherwise
t_ladder_choose() {
	PYTHONPATH=$ROOT/tools/webrtc /usr/bin/python3 - "$TMP" <<-'PY' || fail "see above"
		import asyncio, pickle, sys
		from call import LadderVideo
		rungs = [{"kbps": k, "measured_kbps": k - 5, "key": b"K%d" % k,
		          "frames": [b"%d-%d" % (k, i) for i in range(3)]}
		         for k in (300, 600, 900)]
		path = sys.argv[1] + "/fake.pkl"
		pickle.dump({"fps": 200, "rungs": rungs}, open(path, "wb"))
		targets = iter([100000, 700000, 2000000, 895000, 895000, 590000])
		pli = iter([False, False, False, True, False, False])
		v = LadderVideo(path, lambda: next(targets), lambda: next(pli))
		got = [bytes(asyncio.run(v.recv())) for _ in range(6)]
		want = [b"K300", b"600-0", b"900-1", b"K900", b"900-0", b"300-1"]
		assert got == want, got
		assert [s[2] for s in v.switches] == [295, 595, 895, 295], v.switches
		assert len(v.keyframes) == 2, v.keyframes
	PY
}

# call.py's PacedNackGenerator: a gap is asked for at once, again only
# after 100 ms, not once it arrived, and across the 16-bit wrap
t_nack() {
	PYTHONPATH=$ROOT/tools/webrtc /usr/bin/python3 - <<-'PY' || fail "see above"
		from types import SimpleNamespace as P
		from call import PacedNackGenerator
		g = PacedNackGenerator()
		now = [0.0]
		due = g.due
		g.due = lambda t: due(now[0])
		assert not g.add(P(sequence_number=65533))
		assert g.add(P(sequence_number=1)) and g.missing == {65534, 65535, 0}
		assert not g.add(P(sequence_number=2))
		assert not g.add(P(sequence_number=65535))
		now[0] = 0.05
		assert not g.add(P(sequence_number=3))
		now[0] = 0.11
		assert g.add(P(sequence_number=4)) and g.missing == {65534, 0}, g.missing
		assert g.add(P(sequence_number=6)) and g.missing == {5}, g.missing
		for i in range(20):
		    now[0] += 0.2
		    g.add(P(sequence_number=7 + i))
		assert 0 not in g.asked, "asked for more than MAX_TRIES"
	PY
}

# analyze.py's per-packet figures: behind_later() flags exactly the
# packets that arrive behind a later one of their stream (across the
# 16-bit wrap, streams apart), slow_share() the delays over the lowest
# plus 15 ms, late_per_min() those over it plus 25 ms per minute
t_analyze() {
	PYTHONPATH=$ROOT/tools/webrtc /usr/bin/python3 - <<-'PY' || fail "see above"
		from analyze import (behind_later, late_per_min, slow_share,
		                     weight_slow_share)
		got = list(behind_later([(1, 65534), (1, 0), (2, 7), (1, 65535),
		                         (2, 6), (1, 1), (2, 8)]))
		assert got == [False, False, False, True, True, False, False], got
		assert slow_share([50.0, 52.0, 65.0, 65.1, 81.0]) == 0.4
		assert slow_share([]) is None
		timed = [(0, 50.0), (10, 52.0), (20, 80.0), (30, 75.0), (70, 50.5)]
		assert late_per_min(timed, 10) == 1.0, late_per_min(timed, 10)
		assert late_per_min(timed, 0) == 0.86
		assert late_per_min(timed, 71) is None and late_per_min([], 0) is None
		def up(w, d):
		    return {"state": "up", "have_delay": True, "weight": w,
		            "min_delay_us": d}
		rows = [{"t": 1, "paths": [up(500, 50000), up(500, 80000)]},
		        {"t": 6, "paths": [up(900, 50000), up(100, 80000)]},
		        {"t": 7, "paths": [up(990, 50000), up(10, 80000),
		                           dict(up(0, 0), state="down")]},
		        {"t": 8, "paths": [up(999, 50000), up(1, 60000)]},
		        {"t": 9, "paths": [up(1000, 50000)]}]
		assert weight_slow_share(rows, 5) == 0.01, weight_slow_share(rows, 5)
		assert weight_slow_share(rows, 0) == 0.055
		assert weight_slow_share([], 0) is None
	PY
}

# call.py's fix_arrival_time: a datagram the event loop reads 200 ms
# after it came carries the kernel's receive time through aioice's
# protocol and queue, and the DTLS transport's clock gives that time for
# it, once
t_arrival() {
	PYTHONPATH=$ROOT/tools/webrtc /usr/bin/python3 - <<-'PY' || fail "see above"
		import asyncio, socket, time
		import aioice.ice, aiortc.clock, aiortc.rtcdtlstransport
		import call
		stats = call.ArrivalTimes()
		call.fix_arrival_time(stats)
		got = []

		class Receiver:
		    def data_received(self, data, component):
		        got.append(data)

		class Candidate:
		    component = 1

		async def main():
		    loop = asyncio.get_running_loop()
		    def make():
		        p = aioice.ice.StunProtocol(Receiver())
		        p.local_candidate = Candidate()
		        return p
		    tr, _ = await loop.create_datagram_endpoint(
		        make, local_addr=("127.0.0.1", 0))
		    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		    rtp = b"\x80\x60" + bytes(30)  # not STUN
		    tx.sendto(rtp, tr.get_extra_info("sockname"))  # turns stamps on
		    while len(got) < 1:
		        await asyncio.sleep(0.01)
		    before = aiortc.clock.current_ms()
		    tx.sendto(rtp, tr.get_extra_info("sockname"))
		    after = aiortc.clock.current_ms()
		    time.sleep(0.2)  # the loop is busy
		    while len(got) < 2:
		        await asyncio.sleep(0.01)
		    read = aiortc.clock.current_ms()
		    d = got[1]
		    assert isinstance(d, call.Arrived) and d == rtp, d
		    assert before <= d.ms <= after and read - d.ms >= 150, \
		        (before, d.ms, after, read)
		    conn = aioice.ice.Connection(ice_controlling=True)
		    conn._nominated[1] = object()
		    conn._queue.put_nowait((d, 1))
		    assert await conn.recv() is d
		    clock = aiortc.rtcdtlstransport.clock
		    assert clock.current_ms() == d.ms
		    assert clock.current_ms() >= read  # once only
		    assert clock.current_datetime().year >= 2024
		    assert (stats.kernel, stats.loop) == (1, 1), vars(stats)
		    assert stats.summary()["loop_lag_ms_max"] >= 150
		    tr.close()

		asyncio.run(main())
	PY
}

PLAN=12
echo "KTAP version 1"
echo "1..$PLAN"
check "tools/wsim builds (-Wall -Wextra -Werror)" t_build
check "random draws overflow the reorder buffer, the kernel's golden-ratio ones not" t_draws
check "the model is deterministic" t_same
check "a bad option fails with the usage" t_usage
check "pathsim: packets spread over two links lift the estimate past one" t_pathsim_spread
check "pathsim: aiortc's stock estimator reads the spread as underuse" t_pathsim_stock
check "pathsim: weighted draws reorder, earliest arrival does not" t_pathsim_reorder
check "ladder.py: every rung at its target rate" t_ladder
check "PacedNackGenerator: once at once, again after 100 ms" t_nack
check "LadderVideo: per frame the highest rung within the target, keyframes when asked" t_ladder_choose
check "analyze.py: packets behind a later one, share (and weight) on the slower path" t_analyze
check "call.py: the estimator gets the kernel's receive time of a packet read late" t_arrival
ktap_end wsim
