# SPDX-License-Identifier: GPL-2.0
# tests/unit/ktap_lib.sh - sourced by the host-side shell suites
# (test_batch.sh, test_conf.sh, test_completion.sh, ../packaging_test.sh):
# KTAP counters and check(), and the mpipctl built against the fake kernel
# of test_mpipctl.sh.  The sourcing script sets ROOT and TMP first.
# shellcheck shell=bash

passed=0
failed=0
n=0
msg=""

# fail MESSAGE...: why the current test failed; returns 1
fail() {
	msg="$*"
	return 1
}

# check NAME FUNCTION [ARGS...]: one KTAP result; a failure prints the
# message of fail(), each of its lines as a comment
check() {
	local name=$1
	shift
	n=$((n + 1))
	msg=""
	if "$@"; then
		echo "ok $n $name"
		passed=$((passed + 1))
	else
		echo "# ${msg//$'\n'/$'\n'# }"
		echo "not ok $n $name"
		failed=$((failed + 1))
	fi
}

# build_fake: mpipctl against the fake kernel of test_mpipctl.sh (its
# fake.c, between the heredoc markers of write_fake) in $TMP/fake, which
# logs one line per request to $FAKE_LOG
build_fake() {
	local cflags libs version src f
	cflags=$(pkg-config --cflags libnl-3.0 libnl-genl-3.0) &&
		libs=$(pkg-config --libs libnl-genl-3.0 libnl-3.0) ||
		fail "no libnl-genl-3.0" || return 1
	version=$(sed -n 's/^#define[[:space:]]*MPIP_VERSION[[:space:]]*"\(.*\)".*/\1/p' \
		"$ROOT/kernel/mpip.h")
	# shellcheck disable=SC2016 # a literal $TMP, as in that file
	sed -n '/^	cat >"$TMP\/fake.c" <<'\''EOF'\''$/,/^EOF$/p' \
		"$ROOT/tests/unit/test_mpipctl.sh" | sed '1d;$d' >"$TMP/fake.c"
	grep -q 'int fake_send_auto' "$TMP/fake.c" ||
		fail "cannot find fake.c in tests/unit/test_mpipctl.sh" || return 1
	# the flags of userspace/Makefile: no warnings allowed
	# shellcheck disable=SC2086
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$ROOT/userspace" \
		-I"$ROOT/kernel/uapi" $cflags -Dmain=mpipctl_main \
		-DMPIPCTL_VERSION="\"$version\"" \
		-c -o "$TMP/mpipctl_main.o" "$ROOT/userspace/mpipctl.c" \
		>"$TMP/cc.log" 2>&1 ||
		fail "cannot compile: $(head -c 600 "$TMP/cc.log")" || return 1
	src=()
	for f in batch show rule json table monitor; do
		src+=("$ROOT/userspace/$f.c")
	done
	# shellcheck disable=SC2086
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I"$ROOT/userspace" \
		-I"$ROOT/kernel/uapi" $cflags -DFAKE_VERSION="\"$version\"" \
		-o "$TMP/fake" "$TMP/fake.c" "$TMP/mpipctl_main.o" "${src[@]}" \
		$libs >"$TMP/cc.log" 2>&1 ||
		fail "cannot compile: $(head -c 600 "$TMP/cc.log")"
}

# ktap_end NAME: the plan check and the summary line "NAME: N passed, N
# failed" (", N skipped" if $skipped is set); exit status 1 if any failed
ktap_end() {
	if [ "$n" -ne "$PLAN" ]; then
		echo "# ran $n tests, planned $PLAN"
		failed=$((failed + 1))
	fi
	if [ -n "${skipped+set}" ]; then
		echo "$1: $passed passed, $failed failed, $skipped skipped"
	else
		echo "$1: $passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ]
}
