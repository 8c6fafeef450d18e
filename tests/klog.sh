# shellcheck shell=bash
# tests/klog.sh - the kernel-log check, one definition for everyone who
# looks for kernel bugs in a log: tests/selftests/run.sh (after every test
# file and after the last one's namespaces are gone), the dmesg_clean
# subtests (tests/selftests/lib.sh), tests/bench_smoke.sh and tools/check.sh
# (the guest's whole console log).  Source it; it defines:
#
#   KLOG_BAD        extended regex (grep -E) of lines that report a kernel
#                   bug: WARN()/BUG()/oops, KASAN/KFENCE/UBSAN/kmemleak
#                   reports, refcount_t and list corruption, lockdep and
#                   RCU-lockdep splats, sleeping in atomic context, RCU
#                   stalls, hung tasks, soft/hard lockups, a device whose
#                   references are never dropped ("unregister_netdevice:
#                   waiting"), and any "Call Trace"
#   KLOG_BENIGN_TRACE  regex of the lines that may start a stack dump
#                   that is no bug (see klog_bad)
#   klog_bad        print the lines of its standard input that match
#                   KLOG_BAD, except our own mark lines, the "Call
#                   Trace" of a dump that a KLOG_BENIGN_TRACE line began
#                   and the reports of the kernel's own known to be no
#                   bug (_KLOG_KNOWN_*); succeeds if it printed any
#   klog_report [N] print N lines (default 60) of its standard input from
#                   the first line klog_bad reports: the first report
#                   whole (RIP, Code, Call Trace), for a log that shows
#                   only its summary; fails if klog_bad finds nothing
#   klog_mark TAG   write a unique mark line to the kernel log and print it;
#                   fails if it cannot be written
#   klog_read       print the kernel log (dmesg)
#   klog_since MARK print the kernel log after the line with MARK; the
#                   whole log (and a note on stderr) if MARK is empty or not
#                   in it; fails if the log cannot be read
#   klog_netns_settle [T [SETTLE]]  wait up to T s (default 60) until no
#                   named network namespace is left, then SETTLE s more
#                   for the kernel's asynchronous namespace cleanup
#
# KLOG_FILE, if set, is a file that stands in for the kernel log: marks are
# appended to it and it is read instead of dmesg (tests/harness_test.sh
# uses it to try the checks on the host without touching its kernel log).
#
# Lines are matched case-sensitively, as the kernel prints them.  Most of
# the sanitizers are not built into Debian's kernel (the guest's), so their
# terms can only fire with a debug kernel; WARN, BUG, oops, refcount_t,
# list corruption, stalls and hung tasks can fire with any.

KLOG_BAD='WARNING|\bBUG\b|Oops|Kernel panic|invalid opcode|general protection'
KLOG_BAD+='|double fault|stack segment|\[#[0-9]+\]|soft lockup|hard LOCKUP'
KLOG_BAD+='|KASAN|KFENCE|UBSAN|slab-out-of-bounds|use-after-free|double-free'
KLOG_BAD+='|kmemleak: [0-9]+ new suspected|unreferenced object 0x'
KLOG_BAD+='|refcount_t|list_add corruption|list_del corruption'
KLOG_BAD+='|possible circular locking|possible recursive locking'
KLOG_BAD+='|inconsistent lock state|suspicious RCU usage|lock held when returning'
KLOG_BAD+='|sleeping function called from invalid context|scheduling while atomic'
KLOG_BAD+='|rcu: INFO|self-detected stall|rcu_sched detected stalls|detected stalls on CPUs'
KLOG_BAD+='|blocked for more than|unregister_netdevice: waiting'
KLOG_BAD+='|Call Trace'

# A stack dump that somebody asked for (SysRq, e.g. `echo t >
# /proc/sysrq-trigger`) is no bug.  Nothing in this repository asks for one;
# add a cause here only with the reason it is harmless.
KLOG_BENIGN_TRACE='sysrq: (Show|Trigger)'

# our own marks (klog_mark), never a finding even if a tag looked like one
_KLOG_MARK_RE='mpip-klog-mark-[A-Za-z0-9_-]+$'
# boot lines that name a checker without reporting anything: the debug
# kernel's RCU announces that CONFIG_DEBUG_OBJECTS_RCU_HEAD is on
_KLOG_ANNOUNCE_RE='rcu:[[:space:]]+RCU callback double-/use-after-free debug is enabled'

# Reports of the kernel's own code that are no bug, each dropped whole
# (from its headline to the end of its stack) only if no mpip function is
# in it.  Linux 6.1 and 6.12 walk nf_tables' lists of sets and of set
# elements (nft_set_lookup(), nft_bitmap_elem_find(), ...) with
# list_for_each_entry_rcu() but no lockdep condition, under the commit
# mutex that protects them, so with CONFIG_PROVE_RCU_LIST (the debug
# kernel) every new nft set, an anonymous one such as
# "tcp dport { 1, 2 }" too, says "RCU-list traversed in non-reader
# section" (Documentation/debug-kernel.rst).
_KLOG_KNOWN_HEAD='suspicious RCU usage'
_KLOG_KNOWN_SITE='net/netfilter/(nf_tables_api|nft_set_[a-z]+)[.]c:[0-9]+ RCU-list traversed in non-reader section'
_KLOG_KNOWN_FUNC='[(]&nft_net->commit_mutex[)]'

# _klog_drop_known: standard input without the known reports above
_klog_drop_known() {
	awk -v head="$_KLOG_KNOWN_HEAD" -v site="$_KLOG_KNOWN_SITE" \
		-v func_re="$_KLOG_KNOWN_FUNC" '
		{ line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				if (line[i] !~ head || drop[i])
					continue
				at = 0; in_func = 0; ours = 0
				for (j = i; j <= NR && j < i + 80; j++) {
					if (j > i && line[j] ~ head)
						break
					if (line[j] ~ site) at = 1
					if (line[j] ~ func_re) in_func = 1
					if (line[j] ~ /mpip_|\[mpip\]/) ours = 1
					end = j
					if (line[j] ~ /<\/TASK>/)
						break
				}
				if (at && in_func && !ours)
					for (j = i; j <= end; j++)
						drop[j] = 1
			}
			for (i = 1; i <= NR; i++)
				if (!drop[i])
					print line[i]
		}'
}

klog_bad() {
	# After a KLOG_BENIGN_TRACE line, "Call Trace" lines are not findings
	# until the next other KLOG_BAD line (a SysRq task dump has one trace
	# per task).  Every other KLOG_BAD line is a finding.
	_klog_drop_known | grep -v -E -- "$_KLOG_MARK_RE|$_KLOG_ANNOUNCE_RE" |
		grep -E -- "$KLOG_BAD|$KLOG_BENIGN_TRACE" |
		awk -v benign="$KLOG_BENIGN_TRACE" '
			$0 ~ benign { in_benign = 1; next }
			/Call Trace/ { if (!in_benign) print; next }
			{ in_benign = 0; print }' | grep .
}

klog_report() {
	local in first
	in=$(cat)
	first=$(awk '{ printf "%d:%s\n", NR, $0 }' <<<"$in" | klog_bad | head -n 1) ||
		return 1
	tail -n "+${first%%:*}" <<<"$in" | head -n "${1:-60}"
}

klog_mark() {
	local m
	m="mpip-klog-mark-${1:-x}-$$-$RANDOM$RANDOM"
	echo "$m" >>"${KLOG_FILE:-/dev/kmsg}" || return 1
	printf '%s\n' "$m"
}

klog_read() {
	if [[ -n ${KLOG_FILE:-} ]]; then
		cat -- "$KLOG_FILE"
	else
		dmesg
	fi
}

klog_since() {
	local mark=$1 log
	log=$(klog_read) || {
		echo "klog: cannot read the kernel log" >&2
		return 1
	}
	if [[ -n $mark ]] && grep -qF -- "$mark" <<<"$log"; then
		awk -v m="$mark" 'found; index($0, m) { found = 1 }' <<<"$log"
	else
		echo "klog: mark '${mark}' not in the kernel log; checking all of it" >&2
		printf '%s\n' "$log"
	fi
}

# Deleting a named namespace only drops a reference: its devices and
# mpip's pernet state go later, in the kernel's cleanup_net work, which
# userspace cannot wait for.  Wait until no name is left, then SETTLE s
# (default 3) for that work: it takes well under a second unless something
# is stuck, and a device that cannot go prints "unregister_netdevice:
# waiting" every 10 s, which KLOG_BAD catches.  (tests/selftests/run.sh
# also unloads mpip at the end: unregistering pernet operations waits for
# a cleanup_net that is running.)  Fails if names are left after T s.
klog_netns_settle() {
	local t=${1:-60} settle=${2:-3} i
	for ((i = 0; i < t * 10; i++)); do
		[[ -z $(ip netns list 2>/dev/null) ]] && break
		sleep 0.1
	done
	sleep "$settle"
	[[ -z $(ip netns list 2>/dev/null) ]]
}
