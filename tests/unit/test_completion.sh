#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the bash completion for mpipctl (userspace/completion/mpipctl),
# without a kernel module: the completion is sourced here and its
# COMPREPLY checked, its word lists against what userspace/mpipctl
# prints and accepts (the command list and tunables of --help, the rule
# keywords, modes and fallbacks that "rule add" parses).
# Output is KTAP; the last line is "completion: N passed, N failed" and
# the exit status is non-zero when a test failed.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MPIPCTL=$ROOT/userspace/mpipctl
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"


# comp WORDS...: complete the last word, as bash would; the words offered
# are in $got, sorted, one line each.
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_mpipctl
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort)
}

# lines WORDS...: the words sorted, one a line.
lines() {
	printf '%s\n' "$@" | sed '/^$/d' | sort
}

# expect_comp WANT WORDS...: WANT is the sorted list offered.
expect_comp() {
	local want=$1
	shift
	comp "$@"
	[ "$got" = "$want" ] || fail "offered: ${got//$'\n'/ } (want: ${want//$'\n'/ })"
}

# What mpipctl --help lists: commands, the tables of show, options and
# tunables.
help_commands() {
	"$MPIPCTL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]\+\).*/\1/p'
}

help_tables() {
	"$MPIPCTL" --help | sed -n 's/^  show \([a-z|]\+\).*/\1/p' | tr '|' '\n'
}

help_options() {
	"$MPIPCTL" --help |
		sed -n '/^Options:/,/^$/s/^  \(-[a-zA-Z]\), \(--[a-z-]*\).*/\1\n\2/p'
}

help_tunables() {
	"$MPIPCTL" --help | sed -n '/^Tunables:/,/^[^ T]/p' | sed '$d' |
		sed 's/^Tunables://' | grep -o '[a-z0-9_]\+'
}

t_registered() {
	[[ $(complete -p mpipctl 2>/dev/null) == "complete -F _mpipctl mpipctl" ]] ||
		fail "complete -p mpipctl: $(complete -p mpipctl 2>&1)"
}

t_commands() {
	local want
	want=$(help_commands | sort)
	[ -n "$want" ] || fail "no commands in mpipctl --help" || return 1
	expect_comp "$want" "$MPIPCTL" ""
}

t_options() {
	local want
	want=$(help_options | sort)
	[ -n "$want" ] || fail "no options in mpipctl --help" || return 1
	expect_comp "$want" "$MPIPCTL" -
}

t_tables() {
	local want
	want=$(help_tables | sort)
	[ -n "$want" ] || fail "no tables of show in mpipctl --help" || return 1
	expect_comp "$want" "$MPIPCTL" -j show ""
}

t_get_tunables() {
	local want
	want=$(help_tunables | sort)
	[ "$(wc -l <<<"$want")" -ge 18 ] || fail "tunables in --help: $want" || return 1
	expect_comp "$want" "$MPIPCTL" get "" || return 1
	# as typed: ~/ not expanded yet
	# shellcheck disable=SC2088 # the tilde is meant literally
	HOME=$ROOT/userspace expect_comp "$want" "~/mpipctl" get "" || return 1
	# not in PATH: nothing (or the /usr/sbin one's tunables)
	PATH=/usr/bin:/bin expect_comp "$([ -x /usr/sbin/mpipctl ] && echo "$want")" mpipctl get ""
}

t_set_prefix() {
	expect_comp "heartbeat_ms" "$MPIPCTL" -n ns1 set heart || return 1
	expect_comp "" "$MPIPCTL" set heartbeat_ms ""
}

t_no_mpipctl() {
	expect_comp "" "$TMP/no-such-mpipctl" get ""
}

t_ifaces() {
	local want
	want=$(lines "$(ls /sys/class/net)")
	[ -n "$want" ] || fail "no interfaces in /sys/class/net" || return 1
	expect_comp "$want" "$MPIPCTL" link set dev "" || return 1
	expect_comp "$want" "$MPIPCTL" rule add mode selected dev ""
}

t_link() {
	expect_comp "set" "$MPIPCTL" link "" || return 1
	expect_comp "$(lines advertise backup dev metered nat nobackup nometered tier)" "$MPIPCTL" link set "" || return 1
	expect_comp "$(lines advertise backup dev metered nat nobackup nometered tier)" "$MPIPCTL" link set dev lo backup "" || return 1
	expect_comp "$(lines 0 1 2 3 4 5 6 7)" "$MPIPCTL" link set dev lo tier "" || return 1
	expect_comp "$(lines auto default faketcp none udp)" "$MPIPCTL" link set dev lo nat "" || return 1
	expect_comp "$(lines off on)" "$MPIPCTL" link set dev lo advertise ""
}

# every word offered after KEYWORD in "rule add" is one mpipctl parses:
# ARGS with @ for the word, and what its error must not say.
t_rule_words() {
	local words=$1 bad=$2 w a args=()
	shift 2
	for w in $words; do
		args=()
		for a in "$@"; do
			args+=("${a/@/$w}")
		done
		err=$("$MPIPCTL" "${args[@]}" 2>&1 </dev/null)
		[[ $err != *"$bad"* ]] || fail "mpipctl ${args[*]}: $err" || return 1
	done
}

t_rule_keys() {
	comp "$MPIPCTL" rule add ""
	[ "$(wc -l <<<"$got")" -ge 14 ] || fail "offered: $got" || return 1
	t_rule_words "$got" "unknown keyword" rule add @ 1
}

t_rule_modes() {
	comp "$MPIPCTL" rule add proto tcp mode ""
	[ "$(wc -l <<<"$got")" -ge 4 ] || fail "offered: $got" || return 1
	t_rule_words "$got" "invalid mode" rule add mode @
}

t_rule_intents() {
	comp "$MPIPCTL" rule add intent ""
	[ "$got" = "$(lines background bulk critical interactive)" ] || fail "offered: $got" || return 1
	t_rule_words "$got" "invalid intent" rule add intent @
}

t_rule_fallbacks() {
	comp "$MPIPCTL" rule add mode all fallback ""
	[ "$got" = "$(lines any drop original)" ] || fail "offered: $got" || return 1
	t_rule_words "$got" "invalid fallback" rule add mode all fallback @
}

t_rule() {
	expect_comp "$(lines add del flush)" "$MPIPCTL" rule "" || return 1
	expect_comp "pref" "$MPIPCTL" rule del "" || return 1
	expect_comp "$(lines tcp udp)" "$MPIPCTL" rule add proto ""
}

t_batch() {
	: >"$TMP/cmds"
	expect_comp "$TMP/cmds" "$MPIPCTL" -j -b "$TMP/cm" || return 1
	expect_comp "" "$MPIPCTL" -b "$TMP/cmds" "" || return 1
	expect_comp "--force" "$MPIPCTL" -b "$TMP/cmds" --fo
}

t_options_skipped() {
	expect_comp "$(lines set show stats status)" "$MPIPCTL" -jn foo s || return 1
	expect_comp "$(lines set show stats status)" "$MPIPCTL" --netns foo -j s
}

echo "KTAP version 1"
PLAN=16
echo "1..$PLAN"
if [ ! -x "$MPIPCTL" ]; then
	make -s -C "$ROOT/userspace" >"$TMP/make.log" 2>&1 || sed 's/^/# /' "$TMP/make.log"
fi
# shellcheck source=userspace/completion/mpipctl
source "$ROOT/userspace/completion/mpipctl"
check "complete -F _mpipctl mpipctl" t_registered
check "the commands of mpipctl --help" t_commands
check "the options of mpipctl --help" t_options
check "show: the tables of mpipctl --help" t_tables
check "get: the tunables of mpipctl --help (also ~/, not in PATH)" t_get_tunables
check "set: tunables by prefix, nothing for the value" t_set_prefix
check "get: nothing when mpipctl cannot be run" t_no_mpipctl
check "dev: the interfaces in /sys/class/net" t_ifaces
check "link set dev IF advertise on|off" t_link
check "rule add: mpipctl knows every keyword offered" t_rule_keys
check "rule add mode: mpipctl knows every mode offered" t_rule_modes
check "rule add intent: mpipctl knows every intent offered" t_rule_intents
check "rule add fallback: mpipctl knows every fallback offered" t_rule_fallbacks
check "rule add|del|flush, del pref, proto tcp|udp" t_rule
check "-b: file names, then no command" t_batch
check "options before the command are skipped" t_options_skipped

ktap_end completion
