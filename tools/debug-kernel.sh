#!/usr/bin/env bash
# tools/debug-kernel.sh - build a debug kernel and run the selftests on it.
#
#   tools/debug-kernel.sh [options] [COMMAND]
#
# Commands:
#   check   (default; `make check-debug`) build (once, cached), build mpip.ko
#           against it, boot it with tools/vm.sh, run every selftest, scan the
#           guest's console for KASAN/KFENCE/UBSAN/lockdep/kmemleak/... reports;
#           print a summary; exit non-zero on any report or failed test
#   build   only build the kernel (cached) and print its tree
#   module  build + mpip.ko against it; print the .ko's path
#   tree    print the cached tree's path (exit 1 if not built yet)
#   scan LOG  only scan a saved console log and print the reports found
#   plan    print which VM runs `check` would make of the selftest files
#           (all, or those of --tests): "lane FILE..." per VM side by
#           side; "alone FILE...": with --vms 2 or more, the files whose
#           source has a line "# DEBUG-ALONE: WHY" run after the others,
#           in one VM with no other beside it
#   merge OUT PART...  one summary (OUT/summary.txt) of a run over the whole
#           suite made in parts (`check --tests LIST`, each part's last-run
#           directory copied): the same module on the same kernel build,
#           no file twice, every selftest file in one of them
#
# The kernel is Debian's linux-source-6.1 configured by x86_64 defconfig +
# kvm_guest.config + virtme-ng's fragment + tools/debug.config (merged last),
# built with `nice -n 19 make -j$MPIP_DEBUGK_JOBS` (default 2) under
# ~/.cache/mpip/debugk/VERSION-HASH, HASH being the hash of all config inputs.
# See Documentation/debug-kernel.rst.
#
# Options:
#   --summary FILE   also write the summary to FILE (e.g. under Documentation/)
#   --console-log FILE  keep the guest's console log there
#                    (default /tmp/debugk-console.log)
#   --timeout SECS   per-test-file timeout in the guest (default 3600)
#   --vm-timeout SECS   whole VM run (default 21600)
#   --vm-per-file    boot a fresh VM for each test file (lockdep reports only
#                    its first problem per boot; ~1-2 min more per file)
#   --tests LIST     only these selftest files (comma-separated, e.g.
#                    test_netlink,test_paths); default all
#   --vms N          N VMs side by side, the files dealt out among them in
#                    turn (default 1; each VM wants --mem, 4G by default)
#   -j N             build jobs (default 2; $MPIP_DEBUGK_JOBS)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mpip
VENV=${MPIP_VENV:-$CACHE/venv}
FRAG=$REPO/tools/debug.config
# Debian packages needed only for this (not for `make check`)
# selftest data files are this many times smaller in the debug guest
# (random_file in tests/selftests/lib.sh): its data path is tens of times
# slower than the release kernel's, and the checks need the code paths
DATA_DIV=8
# ... and their waits (wait_for) this many times longer: iperf3 took over
# 20 s to show progress there
WAIT_SCALE=5
# ... and so is the hung-task watchdog's limit (120 s in the config), in
# the guest before the first file: in test_unload's namespace deletions
# under load, tc replacing a qdisc waits in synchronize_rcu() (called by
# lockdep_unregister_key() as the old qdisc goes) for more than 120 s with
# RTNL held, and the watchdog reported it in every run of that file, with
# mpip.ko never loaded as well (tools/netns-delete-baseline.sh,
# Documentation/debug-kernel.rst).  A task blocked for good is still
# reported, after 600 s.
HUNG_TASK_S=$((120 * WAIT_SCALE))
DEBUGK_PKGS=(linux-source-6.1 flex bison libelf-dev libssl-dev bc cpio rsync xz-utils)
# bump when the way the config is put together changes
RECIPE=1

die() {
	printf 'debug-kernel: %s\n' "$*" >&2
	exit 2
}
log() { printf 'debug-kernel: %s\n' "$*" >&2; }

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

# ------------------------------------------------------------------- build
# shellcheck source=tools/pkgs.sh
source "$(dirname "${BASH_SOURCE[0]}")/pkgs.sh"
# the kernel reports known to be no bug (_KLOG_KNOWN_*)
# shellcheck source=tests/klog.sh
source "$REPO/tests/klog.sh"
ensure_pkgs() { pkgs_ensure debug-kernel "${DEBUGK_PKGS[@]}"; }

src_tarball() {
	local t
	t=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
	[[ -n $t ]] || die "no /usr/src/linux-source-6.1.tar.xz (apt-get install linux-source-6.1)"
	echo "$t"
}

# virtme-ng's own fragment, without the symbols tools/debug.config sets
virtme_fragment() {
	local vck=$VENV/bin/virtme-configkernel
	[[ -x $vck ]] || die "no $vck (run tools/deps.sh)"
	"$vck" --dry-run | awk -v frag="$FRAG" '
		function sym(l) {
			if (match(l, /CONFIG_[A-Za-z0-9_]+/)) return substr(l, RSTART, RLENGTH)
			return ""
		}
		BEGIN { while ((getline l < frag) > 0) { s = sym(l); if (s != "") own[s] = 1 } }
		/^##/ { print; next }
		{ s = sym($0); if (s == "" || !(s in own)) print }'
}

# identity of the kernel to build: source version + hash of config inputs
kernel_id() {
	local srcver h
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	h=$({
		echo "recipe $RECIPE"
		echo "source $srcver"
		virtme_fragment
		cat "$FRAG"
	} | sha256sum | cut -c1-12)
	echo "$srcver-$h"
}

kdir_of() { echo "$CACHE/debugk/$1"; }

frag_hash() { sha256sum "$FRAG" | cut -c1-12; }

build_kernel() {
	local id dir src jobs=${MPIP_DEBUGK_JOBS:-2} t0 t1 missing
	ensure_pkgs
	id=$(kernel_id)
	dir=$(kdir_of "$id")
	if [[ -f $dir/.done ]]; then
		echo "$dir"
		return 0
	fi
	src=$(src_tarball)
	mkdir -p "$dir"
	exec 8>"$dir/.lock"
	flock 8
	if [[ -f $dir/.done ]]; then
		echo "$dir"
		return 0
	fi
	t0=$(date +%s)
	log "building $id in $dir (log: $dir/build.log); this takes 30-60 min"
	(
		if [[ ! -f $dir/.extracted ]]; then
			rm -rf "$dir/linux"
			mkdir -p "$dir/linux"
			tar -xJf "$src" -C "$dir/linux" --strip-components=1
			touch "$dir/.extracted"
		fi
		virtme_fragment >"$dir/virtme.config"
		cp "$FRAG" "$dir/debug.config"
		cd "$dir/linux"
		make -s defconfig
		make -s kvm_guest.config
		cat "$dir/virtme.config" "$dir/debug.config" >>.config
		make -s olddefconfig
	) >"$dir/build.log" 2>&1 || { tail -n 30 "$dir/build.log" >&2; die "configuring failed"; }
	# every y/m/value of the fragment must have survived olddefconfig
	missing=$(grep -E '^CONFIG_' "$FRAG" | while IFS= read -r l; do
		grep -qxF "$l" "$dir/linux/.config" || echo "$l"
	done)
	if [[ -n $missing ]]; then
		log "these lines of tools/debug.config did not make it into .config:"
		local lines
		mapfile -t lines <<<"$missing"
		printf '  %s\n' "${lines[@]}" >&2
		echo "$missing" >"$dir/config-missing.txt"
	fi
	(
		cd "$dir/linux"
		# (no modules_install: vng --run DIR links the tree's modules and
		# modules.builtin into the guest's /lib/modules itself)
		nice -n 19 make -j"$jobs" all
	) >>"$dir/build.log" 2>&1 || { tail -n 40 "$dir/build.log" >&2; die "build failed (see $dir/build.log)"; }
	t1=$(date +%s)
	echo "$((t1 - t0))" >"$dir/build-seconds"
	make -s -C "$dir/linux" kernelrelease >"$dir/kernelrelease"
	touch "$dir/.done"
	log "built in $(((t1 - t0) / 60)) min: $dir"
	echo "$dir"
}

# mpip.ko against the debug tree, built in a copy of the sources under the
# cache so that the regular build in kernel/ is left alone
build_module() {
	local dir=$1 mdir=$1/mpip jobs=${MPIP_DEBUGK_JOBS:-2}
	rm -rf "$mdir"
	mkdir -p "$mdir"
	cp "$REPO/Kbuild" "$mdir/"
	cp -r "$REPO/kernel" "$mdir/"
	find "$mdir/kernel" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
		-o -name 'modules.order' -o -name 'Module.symvers' \) -delete
	if ! nice -n 19 make -j"$jobs" -C "$dir/linux" M="$mdir" modules >"$dir/mpip-build.log" 2>&1; then
		cat "$dir/mpip-build.log" >&2
		die "mpip.ko does not build against the debug kernel"
	fi
	grep -E 'warning:' "$dir/mpip-build.log" >&2 || true
	[[ -f $mdir/kernel/mpip.ko ]] || die "no $mdir/kernel/mpip.ko after the build"
	echo "$mdir/kernel/mpip.ko"
}

# ------------------------------------------------------------- guest side
# Built-in features the selftests, the lab and the benchmarks use: modprobe
# must succeed for each (through modules.builtin) in the guest.
MODPROBE_CHECK=(veth bridge br_netfilter nf_conntrack nf_nat nf_conntrack_ftp
	nf_tables nft_ct nft_nat nft_masq nft_log nft_compat nft_objref
	nfnetlink_queue nft_queue
	nf_log_syslog
	ip_tables iptable_filter iptable_nat sch_netem sch_tbf sch_fq_codel
	sch_htb sch_prio ifb vrf wireguard xfrm_user esp4 esp6 dummy macvlan tun
	9p 9pnet_virtio virtiofs overlay)

# guest KO TIMEOUT TEST...: runs inside the VM (through tools/vm.sh)
guest_main() {
	local ko=$1 tmo=$2 km=/sys/kernel/debug/kmemleak t name t0 rc bad=() m
	shift 2
	# test files of 1/DATA_DIV the size (tests/selftests/lib.sh: random_file),
	# waits for something to happen WAIT_SCALE times longer (wait_for)
	export MPIP_TEST_DATA_DIV=$DATA_DIV MPIP_TEST_WAIT_SCALE=$WAIT_SCALE
	echo "debugk: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024) " MiB"}' /proc/meminfo)"
	echo "debugk: test data divided by $MPIP_TEST_DATA_DIV, waits multiplied by $MPIP_TEST_WAIT_SCALE"
	if echo "$HUNG_TASK_S" >/proc/sys/kernel/hung_task_timeout_secs; then
		echo "debugk: hung-task watchdog at $HUNG_TASK_S s"
	else
		echo "debugk: hung-task watchdog left at $(cat /proc/sys/kernel/hung_task_timeout_secs) s"
	fi
	for m in "${MODPROBE_CHECK[@]}"; do
		modprobe -q "$m" 2>/dev/null || bad+=("$m")
	done
	echo "debugk: modprobe of ${#MODPROBE_CHECK[@]} built-in features: ${#bad[@]} failed${bad[*]:+: ${bad[*]}}"
	# the console log (hvc0) starts a few seconds into the boot: keep what
	# came before it
	echo "debugk: boot log begin"
	dmesg
	echo "debugk: boot log end"
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
	if [[ -w $km ]]; then
		# forget what the boot left unreferenced: only later leaks count
		echo scan >"$km" || true
		echo clear >"$km" || true
	else
		echo "debugk: no $km (kmemleak off?)"
	fi
	for t in "$@"; do
		name=$(basename "$t" .sh)
		echo "debugk-file-start: $name" >/dev/kmsg
		t0=$(date +%s)
		set +e
		MPIP_KO=$ko tests/selftests/run.sh --timeout "$tmo" "$t"
		rc=$?
		set -e
		echo "debugk-file-end: $name" >/dev/kmsg
		echo "debugk: file $name rc=$rc $(($(date +%s) - t0))s"
		# what the file's own last kmemleak scan (check_dmesg_clean) found;
		# the next file's dmesg_mark clears it
		if [[ -r $km ]]; then
			echo "debugk: kmemleak report begin $name"
			cat "$km"
			echo "debugk: kmemleak report end"
		fi
	done
	echo "debugk-file-start: (end: rmmod, kmemleak)" >/dev/kmsg
	if [[ -d /sys/module/mpip ]]; then
		if rmmod mpip; then echo "debugk: rmmod mpip ok"; else echo "debugk: rmmod mpip FAILED"; fi
	fi
	if [[ -w $km ]]; then
		# kmemleak only reports objects older than 5 s and wants to have
		# seen them unreferenced in more than one scan
		sleep 6
		echo scan >"$km" || true
		sleep 6
		echo scan >"$km" || true
		echo "debugk: kmemleak report begin (end: after rmmod)"
		cat "$km"
		echo "debugk: kmemleak report end"
	fi
	echo "debugk: guest done"
}

# ------------------------------------------------------------- scanning
# scan_reports FILE...: print the reports found in console logs and run
# logs as blocks "### KIND | HEADLINE | FILE | FIRST_MPIP_FRAME" followed by
# the excerpt (indented).  Kinds: kasan kfence ubsan lockdep rcu-lockdep
# atomic-sleep preempt debugobjects kmemleak list-corruption refcount
# rcu-stall hung-task soft-lockup netdev-wait oops bug warning
scan_reports() {
	awk -v khead="$_KLOG_KNOWN_HEAD" -v ksite="$_KLOG_KNOWN_SITE" \
		-v kfunc="$_KLOG_KNOWN_FUNC" '
	function kind_of(l) {
		if (l ~ /BUG: KASAN:/) return "kasan"
		if (l ~ /BUG: KFENCE:/) return "kfence"
		if (l ~ /UBSAN:/) return "ubsan"
		if (l ~ /suspicious RCU usage/) return "rcu-lockdep"
		if (l ~ /possible circular locking dependency|inconsistent lock state|possible recursive locking|possible irq lock inversion|bad unlock balance|held lock freed|lock held when returning|lock held at task exit|still has locks held|trying to register non-static key|BUG: held lock|possible deadlock|circular locking|lock\(s\) held when returning/) return "lockdep"
		if (l ~ /sleeping function called from invalid context|scheduling while atomic|Voluntary context switch within RCU read-side critical section/) return "atomic-sleep"
		if (l ~ /BUG: using (smp_processor_id|__this_cpu_|this_cpu_)/) return "preempt"
		if (l ~ /ODEBUG:/) return "debugobjects"
		if (l ~ /^unreferenced object 0x/) return "kmemleak"
		if (l ~ /list_(add|del) corruption|list corruption|list_del corruption/) return "list-corruption"
		if (l ~ /refcount_t:/) return "refcount"
		if (l ~ /rcu: INFO: .*detected stalls|self-detected stall|rcu_(preempt|sched) detected stall/) return "rcu-stall"
		if (l ~ /INFO: task .* blocked for more than/) return "hung-task"
		if (l ~ /BUG: soft lockup|BUG: workqueue lockup/) return "soft-lockup"
		if (l ~ /unregister_netdevice: waiting for/) return "netdev-wait"
		if (l ~ /Oops:|general protection fault|BUG: unable to handle|Kernel panic|kernel BUG at/) return "oops"
		if (l ~ /(^|[^A-Za-z])BUG: /) return "bug"
		if (l ~ /WARNING: CPU: |WARNING: .* at /) return "warning"
		return ""
	}
	function flush() {
		if (cur == "") return
		# the kernel reports tests/klog.sh knows to be no bug, with no
		# mpip function in them, are counted apart
		if (head ~ khead && body ~ ksite && body ~ kfunc && body !~ /\[mpip\]/ && frame == "")
			cur = "known"
		printf "### %s | %s | %s | %s\n%s", cur, head, where, (frame == "" ? "-" : frame), body
		cur = ""
	}
	FNR == 1 { flush(); phase = "boot"; fname = FILENAME }
	{
		l = $0
		sub(/\r$/, "", l)
		sub(/^\[ *[0-9]+\.[0-9]+\]( \[ *[A-Z]?[0-9]+\])? ?/, "", l)
		if (l ~ /^debugk-file-start: /) { flush(); phase = substr(l, 20); next }
		if (l ~ /^debugk-file-end: /) { flush(); next }
		# lockdep and KASAN repeat their own headline words inside a
		# report; the lines of an open report are part of it
		if (cur != "" && n < 80 && l !~ /^(debugk|mpip-selftest)/) {
			# the end of a report: a trace end, a closing rule of
			# equal signs (KASAN, KFENCE, UBSAN) or the end of the
			# last stack (others; KASAN/KFENCE go on after it)
			if (l ~ /^---\[ end trace|^=+$/ && n > 3 ||
			    l ~ /^ *<\/TASK>/ && cur != "kasan" && cur != "kfence") {
				body = body "    " l "\n"; flush(); next
			}
			k = kind_of(l)
			if (k == "" || k == "warning" && (cur == "lockdep" || cur == "rcu-lockdep") || n < 3 && k == cur) {
				body = body "    " l "\n"; n++
				if (frame == "" && match(l, /mpip_[A-Za-z0-9_]+/)) frame = substr(l, RSTART, RLENGTH)
				next
			}
		}
		if (cur != "" && n >= 80) flush()
		k = kind_of(l)
		if (k == "") {
			if (cur != "" && l ~ /^$/) flush()
			next
		}
		# a WARNING line that only introduces a lockdep report
		if (k == "warning" && l !~ /WARNING: CPU: /) { next }
		flush()
		cur = k; head = l; n = 0; frame = ""; where = phase " (" fname ")"
		body = "    " l "\n"
		if (match(l, /mpip_[A-Za-z0-9_]+/)) frame = substr(l, RSTART, RLENGTH)
	}
	END { flush() }
	' "$@"
}

# kmemleak sections of the guest's output, each behind a file marker
kmemleak_sections() {
	awk '
		/^debugk: kmemleak report begin/ {
			on = 1; n = $0; sub(/^debugk: kmemleak report begin ?/, "", n)
			print "debugk-file-start: " n; next
		}
		/^debugk: kmemleak report end/ { on = 0; next }
		on' "$1"
}

# boot_section RUN_LOG CONSOLE_LOG: the guest's boot-time kernel log lines
# older than the console log's first line
boot_section() {
	local first
	first=$(awk 'match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
		s = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "", s); print s; exit }' "$2")
	awk -v first="${first:-1e9}" '
		/^debugk: boot log begin/ { on = 1; next }
		/^debugk: boot log end/ { on = 0; next }
		on && match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
			s = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "", s)
			if (s + 0 < first + 0) print
		}' "$1"
}

# group reports: "COUNT  KIND  HEADLINE (first mpip frame; files)" with
# addresses, CPU/PID numbers and sizes taken out of the headline
report_groups() {
	awk -F' \\| ' '
		/^### / {
			kind = substr($1, 5); h = $2; where = $3; fr = $4
			sub(/ \(.*/, "", where)
			gsub(/0x[0-9a-f]+/, "ADDR", h)
			gsub(/CPU: [0-9]+ PID: [0-9]+/, "CPU: N PID: N", h)
			gsub(/\+0xADDR\/0xADDR/, "", h)
			gsub(/\(size [0-9]+\)/, "(size N)", h)
			gsub(/comm "[^"]*", pid [0-9]+/, "", h)
			key = kind " | " h " | " fr
			if (!(key in cnt)) order[++nk] = key
			cnt[key]++
			if (index(files[key], where) == 0) files[key] = files[key] (files[key] == "" ? "" : ", ") where
		}
		END {
			for (i = 1; i <= nk; i++) {
				k = order[i]; split(k, a, / \| /)
				printf "  %3d  %-14s %s\n        first mpip frame: %s; in: %s\n", cnt[k], a[1], a[2], a[3], files[k]
			}
		}' "$1"
}

# run_part DIR KO FILE...: boot the VM for these files (or one VM per file
# with --vm-per-file) and keep in DIR what the summary is made of: the
# guest's output (run.log), its console (console.log), the reports found in
# them (reports.txt) and a summary of this part alone (summary.txt)
run_part() {
	local pdir=$1 ko=$2 v vrc rc=0 t0 t1 tag
	shift 2
	# (bare test names: x86 cuts the kernel command line, which carries
	# the guest command, at 2048 bytes)
	local vms=("$*")
	((${VM_PER_FILE:-0})) && vms=("$@")
	tag=$(basename "$pdir")
	rm -rf "$pdir"
	mkdir -p "$pdir"
	: >"$pdir/run.log"
	: >"$pdir/console.log"
	: >"$pdir/boot.txt"
	t0=$(date +%s)
	for v in "${vms[@]}"; do
		set +e
		# (the debug kernel's guest starts its command after 4-5 min
		# under load: a boot watchdog of vm.sh's default would be too short)
		# shellcheck disable=SC2086 # $v: one or more test files
		"$REPO/tools/vm.sh" --kernel-tree "$TREE" --mem "${MPIP_DEBUGK_MEM:-4G}" \
			--boot-timeout 2400 \
			--timeout "${VM_TIMEOUT:-21600}" --console-log "$pdir/console.part" -- \
			tools/debug-kernel.sh guest "$ko" "${TEST_TIMEOUT:-3600}" $v 2>&1 |
			tee "$pdir/run.part" | { if ((${VMS:-1} > 1)); then sed -u "s/^/[$tag] /"; else cat; fi; }
		vrc=${PIPESTATUS[0]}
		set -e
		boot_section "$pdir/run.part" "$pdir/console.part" >>"$pdir/boot.txt"
		cat "$pdir/run.part" >>"$pdir/run.log"
		cat "$pdir/console.part" >>"$pdir/console.log"
		((vrc == 0)) || rc=$vrc
	done
	rm -f "$pdir/console.part" "$pdir/run.part"
	t1=$(date +%s)
	kmemleak_sections "$pdir/run.log" >"$pdir/kmemleak.txt"
	scan_reports "$pdir/boot.txt" "$pdir/console.log" "$pdir/kmemleak.txt" >"$pdir/reports.txt"
	write_summary "$pdir" "$KID" "$KVER" "$BUILD_S" "$((t1 - t0))" "$rc" \
		"$#" "${#vms[@]}" >"$pdir/summary.txt"
}

# file_results LOG...: the guest's line for each test file it ran,
# "# test_NAME: SECONDSs, pass:P fail:F skip:S" (tests/selftests/run.sh)
file_results() { grep -hE '^# test_[a-z0-9_]+: [0-9]+s, pass:' "$@" || true; }

# split_files N FILE...: N lines, the files dealt out in turn
split_files() {
	local n=$1 i=0 f
	shift
	local -a part=()
	for f in "$@"; do
		part[i % n]+="$f "
		i=$((i + 1))
	done
	for ((i = 0; i < n; i++)); do
		echo "${part[i]% }"
	done
}

# selected_files: the selftest files (bare names) of --tests LIST, in its
# order, or every one; dies on a name that is no selftest
selected_files() {
	local t f
	if [[ -z ${TESTS:-} ]]; then
		for f in "$REPO"/tests/selftests/test_*.sh; do
			basename "$f" .sh
		done
		return
	fi
	for t in ${TESTS//,/ }; do
		t=${t%.sh}
		[[ $t == test_* ]] || t=test_$t
		[[ -f $REPO/tests/selftests/$t.sh ]] || die "no selftest $t"
		echo "$t"
	done
}

# plan_parts N FILE...: the VM runs of `check --vms N` for these test
# files (bare names), one line each: "lane FILE..." for the N runs side by
# side, the files dealt out in turn; with N > 1, then "alone FILE..." for
# the files that run after them in one VM alone (alone_files), if any
plan_parts() {
	local n=$1 t l
	shift
	local -a alone=() rest=()
	((n == 1)) || mapfile -t alone < <(alone_files "$@")
	for t in "$@"; do
		[[ " ${alone[*]} " == *" $t "* ]] || rest+=("$t")
	done
	while IFS= read -r l; do
		[[ -z $l ]] || echo "lane $l"
	done < <(split_files "$n" "${rest[@]}")
	((${#alone[@]} == 0)) || echo "alone ${alone[*]}"
}

# alone_files FILE...: those of the test files (bare names) whose source
# has a line "# DEBUG-ALONE: WHY": on this kernel they cannot be judged
# with a second debug VM beside them on this machine's two cores
alone_files() {
	local t
	for t in "$@"; do
		! grep -q '^# DEBUG-ALONE: ' "$REPO/tests/selftests/$t.sh" || echo "$t"
	done
}

# a part summary's field: summary_field FILE SED-EXPRESSION
summary_field() { sed -nE "$2" "$1" | head -n 1; }

# merge_parts OUT PLANNED PART...: one summary (OUT/summary.txt) of parts
# run side by side or one after another, from the parts' own summaries,
# guest output and reports.  They must have run the same module on the
# same kernel build, no file twice; PLANNED is the number of files the
# whole run was to cover
merge_parts() {
	local out=$1 planned=$2 p rev id kver bs secs vrc boots nb=0 rc=0 max=0 dup each
	local times=()
	shift 2
	mkdir -p "$out"
	: >"$out/run.log"
	: >"$out/reports.txt"
	for p in "$@"; do
		[[ -f $p/summary.txt && -f $p/run.log && -f $p/reports.txt ]] ||
			die "$p: not a part of a debug-kernel run (no summary.txt, run.log or reports.txt)"
		rev=$(summary_field "$p/summary.txt" 's/^module: mpip (.*)/\1/p')
		id=$(summary_field "$p/summary.txt" 's/^config: .*\(cache id (.*)\)$/\1/p')
		kver=$(summary_field "$p/summary.txt" 's/^kernel: ([^ ]+) .*/\1/p')
		bs=$(summary_field "$p/summary.txt" 's/^build time: ([0-9]+) min ([0-9]+) s.*/\1 \2/p')
		secs=$(summary_field "$p/summary.txt" 's/^run time: ([0-9]+) min ([0-9]+) s.*/\1 \2/p')
		vrc=$(summary_field "$p/summary.txt" 's/^run time: .*VM exit status ([0-9]+).*/\1/p')
		boots=$(summary_field "$p/summary.txt" 's/^VM: .* ([0-9]+) boot\(s\).*/\1/p')
		[[ -n $rev && -n $id && -n $kver && -n $bs && -n $secs && -n $boots ]] ||
			die "$p/summary.txt: a field is missing"
		if [[ -z ${MODULE_REV:-} ]]; then
			MODULE_REV=$rev KID=$id KVER=$kver
			BUILD_S=$((${bs% *} * 60 + ${bs#* }))
		fi
		[[ $rev == "$MODULE_REV" && $id == "$KID" ]] ||
			die "$p: module $rev on $id, another part ran $MODULE_REV on $KID"
		[[ $rev != *-dirty ]] || log "$p: the module was built from a tree with changes ($rev)"
		secs=$((${secs% *} * 60 + ${secs#* }))
		((secs > max)) && max=$secs
		times+=("$((secs / 60)) min")
		((${vrc:-1} == 0)) || rc=${vrc:-1}
		nb=$((nb + boots))
		cat "$p/run.log" >>"$out/run.log"
		cat "$p/reports.txt" >>"$out/reports.txt"
	done
	dup=$(file_results "$out/run.log" | cut -d: -f1 | sort | uniq -d)
	[[ -z $dup ]] || die "a file ran in more than one part: ${dup//# /}"
	write_summary "$out" "$KID" "$KVER" "$BUILD_S" "$max" "$rc" "$planned" "$nb" >"$out/summary.txt"
	printf -v each '%s, ' "${times[@]}"
	(($# == 1)) || summary_note "$out/summary.txt" "parts: $# (run time: the longest; each: ${each%, })"
}

# summary_note FILE LINE: LINE into a summary, before its verdict
summary_note() {
	local tmp=$1.tmp
	awk -v l="$2" '/^verdict: / { print l } { print }' "$1" >"$tmp" && mv "$tmp" "$1"
}

check_main() {
	local dir ko out list t0 t1 k
	local -a files=() parts=() groups=()
	out=$CACHE/debugk/last-run
	rm -rf "$out"
	mkdir -p "$out"

	"$REPO/tools/deps.sh"
	dir=$(build_kernel)
	TREE=$dir/linux
	KID=$(basename "$dir")
	KVER=$(<"$dir/kernelrelease")
	BUILD_S=$(<"$dir/build-seconds")
	log "building mpip.ko against $KVER"
	# the revision the module is built from (HEAD may move during the run)
	MODULE_REV=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
	ko=$(build_module "$dir")
	make -s -C "$REPO" mpipctl >/dev/null

	list=$(selected_files) || exit 2
	mapfile -t files <<<"$list"

	# one VM for all files, or one per file (--vm-per-file): lockdep turns
	# itself off after its first report, a fresh boot re-arms it and
	# gives each file a clean kmemleak and kernel log; --vms N: N such
	# series side by side, the files dealt out among them, then the files
	# that must run alone, in one VM (plan_parts)
	mapfile -t groups < <(plan_parts "${VMS:-1}" "${files[@]}")
	log "running ${#files[@]} selftest files on $KVER in ${VMS:-1} VM(s) at a time (TCG: expect hours); log: $out"
	for k in "${groups[@]}"; do
		[[ $k != alone\ * ]] || log "then in one VM alone: ${k#alone }"
	done
	t0=$(date +%s)
	for ((k = 0; k < ${#groups[@]}; k++)); do
		[[ ${groups[k]} == lane\ * ]] || continue
		parts+=("$out/part$((k + 1))")
		# shellcheck disable=SC2086 # a group: file names
		run_part "$out/part$((k + 1))" "$ko" ${groups[k]#lane } &
	done
	wait
	for ((k = 0; k < ${#groups[@]}; k++)); do
		[[ ${groups[k]} == alone\ * ]] || continue
		parts+=("$out/part$((k + 1))")
		# shellcheck disable=SC2086 # a group: file names
		VMS=1 run_part "$out/part$((k + 1))" "$ko" ${groups[k]#alone }
	done
	t1=$(date +%s)
	merge_parts "$out" "${#files[@]}" "${parts[@]}"
	((${#parts[@]} == 1)) ||
		summary_note "$out/summary.txt" "wall-clock time: $(((t1 - t0) / 60)) min $(((t1 - t0) % 60)) s"
	console_of "${parts[@]}" >"${CONSOLE_LOG:-/tmp/debugk-console.log}"
	finish "$out"
}

# console_of PART...: the parts' console logs, one after another
console_of() {
	local p
	for p in "$@"; do
		(($# == 1)) || echo "debugk: console of $(basename "$p")"
		[[ ! -f $p/console.log ]] || cat "$p/console.log"
	done
}

# finish OUT: print the summary, copy it to --summary FILE; exit status
# non-zero unless it says PASS
finish() {
	cat "$1/summary.txt"
	if [[ -n ${SUMMARY:-} ]]; then
		cp "$1/summary.txt" "$SUMMARY"
		log "summary written to $SUMMARY"
	fi
	log "reports with excerpts: $1/reports.txt; console log: ${CONSOLE_LOG:-/tmp/debugk-console.log}"
	grep -qx 'verdict: PASS' "$1/summary.txt"
}

# merge_main OUT PART...: the parts of one run over the whole suite, each
# run by `check --tests LIST` (its last-run directory, copied), merged into
# OUT; every selftest file must be in one of them
merge_main() {
	local out=$1 f missing=() t ran
	local -a all=("$REPO"/tests/selftests/test_*.sh)
	shift
	(($# >= 1)) || usage
	merge_parts "$out" "${#all[@]}" "$@"
	ran=$(file_results "$out/run.log" | cut -d: -f1)
	for f in "${all[@]}"; do
		t=$(basename "$f" .sh)
		grep -qx "# $t" <<<"$ran" || missing+=("$t")
	done
	summary_note "$out/summary.txt" "parts merged by tools/debug-kernel.sh merge: ${*##*/}"
	((${#missing[@]} == 0)) || summary_note "$out/summary.txt" "files not run: ${missing[*]}"
	console_of "$@" >"$out/console.log"
	CONSOLE_LOG=$out/console.log finish "$out"
}

# write_summary OUT ID KVER BUILD_S RUN_S VM_RC NFILES NVMS
write_summary() {
	local out=$1 id=$2 kver=$3 build_s=$4 run_s=$5 vm_rc=$6 files_planned=$7 nvms=$8
	local run_log=$out/run.log sum pass=0 fail=0 skip=0 nrep files_run
	local rev kinds k c verdict=PASS
	rev=${MODULE_REV:-unknown}
	echo "mpip debug-kernel run (make check-debug, tools/debug-kernel.sh)"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "kernel: $kver from linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1)"
	echo "config: tools/debug.config sha256 $(frag_hash) (cache id $id)"
	echo "module: mpip $rev"
	echo "VM: tools/vm.sh, $(sed -nE 's/^vm\.sh: [^ ]+ ([a-z]+), command starts.*/\1/p' "$run_log" | head -n 1) ${MPIP_DEBUGK_MEM:-4G}, 2 vCPUs, $nvms boot(s); per-file timeout ${TEST_TIMEOUT:-3600} s"
	echo "build time: $((build_s / 60)) min $((build_s % 60)) s (once, cached)"
	echo "run time: $((run_s / 60)) min $((run_s % 60)) s (VM exit status $vm_rc)"
	grep -E '^debugk: (test data|hung-task)' "$run_log" | sed 's/^debugk: //' | sort -u || true
	grep -E '^debugk: modprobe' "$run_log" | sed 's/^debugk: //' | sort -u | grep . ||
		echo "modprobe check: did not run"
	echo "per file (seconds, subtests):"
	while IFS= read -r sum; do
		local name secs p f s
		name=$(sed -E 's/^# ([^:]+): .*/\1/' <<<"$sum")
		secs=$(sed -E 's/^# [^:]+: ([0-9]+)s.*/\1/' <<<"$sum")
		p=$(sed -E 's/.*pass:([0-9]+).*/\1/' <<<"$sum")
		f=$(sed -E 's/.*fail:([0-9]+).*/\1/' <<<"$sum")
		s=$(sed -E 's/.*skip:([0-9]+).*/\1/' <<<"$sum")
		printf '  %-16s %6s s  pass %3s  fail %3s  skip %3s\n' "$name" "$secs" "$p" "$f" "$s"
		pass=$((pass + p))
		fail=$((fail + f))
		skip=$((skip + s))
	done < <(file_results "$run_log" | sort)
	files_run=$(file_results "$run_log" | grep -c . || true)
	((files_run == files_planned)) || verdict=FAIL
	echo "tests: $files_run of $files_planned files run, subtests $pass passed, $fail failed, $skip skipped"
	grep -E '^debugk: rmmod' "$run_log" | sed 's/^debugk: //' | sort -u || true
	c=$(grep -c '^debugk: guest done' "$run_log" || true)
	((c == nvms)) || { echo "$((nvms - c)) of $nvms VM runs did not finish (timeout or crash)"; verdict=FAIL; }
	((fail == 0)) || verdict=FAIL
	grep -q '^debugk: modprobe.*: 0 failed' "$run_log" || verdict=FAIL
	grep -q '^debugk: rmmod mpip FAILED' "$run_log" && verdict=FAIL
	nrep=$(grep -c '^### ' "$out/reports.txt" || true)
	c=$(grep -c '^### known |' "$out/reports.txt" || true)
	nrep=$((nrep - c))
	echo "kernel reports: $nrep (and $c known to be no bug: tests/klog.sh)"
	kinds="kasan kfence ubsan lockdep rcu-lockdep atomic-sleep preempt debugobjects kmemleak list-corruption refcount rcu-stall hung-task soft-lockup netdev-wait oops bug warning"
	for k in $kinds; do
		c=$(grep -c "^### $k |" "$out/reports.txt" || true)
		printf '  %-16s %d\n' "$k" "$c"
	done
	if ((nrep > 0)); then
		verdict=FAIL
	fi
	if ((nrep + c > 0)); then
		echo "distinct reports (count, kind, headline):"
		report_groups "$out/reports.txt"
	fi
	echo "verdict: $verdict"
}

main() {
	local cmd=check dir
	while (($#)); do
		case $1 in
		--summary) SUMMARY=${2:?}; shift 2 ;;
		--console-log) CONSOLE_LOG=${2:?}; shift 2 ;;
		--timeout) TEST_TIMEOUT=${2:?}; shift 2 ;;
		--vm-timeout) VM_TIMEOUT=${2:?}; shift 2 ;;
		--tests) TESTS=${2:?}; shift 2 ;;
		--vm-per-file) VM_PER_FILE=1; shift ;;
		--vms) VMS=${2:?}; shift 2 ;;
		-j) MPIP_DEBUGK_JOBS=${2:?}; shift 2 ;;
		-h | --help) usage 0 ;;
		build | module | tree | check | scan | merge | plan | guest) cmd=$1; shift; break ;;
		*) echo "debug-kernel: unknown argument '$1'" >&2; usage ;;
		esac
	done
	[[ -z ${SUMMARY:-} || $SUMMARY == /* ]] || SUMMARY=$PWD/$SUMMARY
	[[ -z ${CONSOLE_LOG:-} || $CONSOLE_LOG == /* ]] || CONSOLE_LOG=$PWD/$CONSOLE_LOG
	[[ ${VMS:-1} =~ ^[1-9][0-9]*$ ]] || die "--vms wants a number of VMs, not '$VMS'"
	# (merge's directories, relative to where it was called from)
	if [[ $cmd == merge ]]; then
		local -a abs=()
		for dir; do
			abs+=("$(realpath -m -- "$dir")")
		done
		set -- "${abs[@]}"
	fi
	cd "$REPO"
	case $cmd in
	build) build_kernel ;;
	module)
		dir=$(build_kernel)
		build_module "$dir"
		;;
	tree)
		ensure_pkgs
		dir=$(kdir_of "$(kernel_id)")
		[[ -f $dir/.done ]] || { log "not built yet: $dir"; exit 1; }
		echo "$dir/linux"
		;;
	scan)
		(($# == 1)) || usage
		scan_reports "$1"
		;;
	guest) guest_main "$@" ;;
	plan)
		local -a files
		local list
		list=$(selected_files) || exit 2
		mapfile -t files <<<"$list"
		plan_parts "${VMS:-1}" "${files[@]}"
		;;
	check) check_main ;;
	merge) merge_main "$@" ;;
	esac
}

# (main is parsed whole before it runs: editing this file during a long run
# is safe)
main "$@"
exit
