#!/usr/bin/env bash
# tools/vm.sh - run a command as root inside a throw-away QEMU guest.
#
#   tools/vm.sh [options] -- COMMAND [ARG...]
#
# Boots the Debian kernel the module is built for with virtme-ng (vng) over
# the host filesystem (read-only root with tmpfs overlays on /etc, /var, /tmp
# ...), with the repository mounted read-write, runs COMMAND as root with the
# repository root as current directory and exits with COMMAND's status.
# The guest's stdout/stderr are this script's stdout/stderr; vm.sh itself
# prints one timing line on stderr (unless -q) and nothing on stdout.
#
# Environment: MPIP_VM_ACCEL (as --accel), MPIP_VM_TIMEOUT (as --timeout),
# MPIP_VM_BZIMAGE=1 boot /boot/vmlinuz-VER itself instead of the cached
# uncompressed vmlinux, MPIP_VM_9P=1 share the host root over 9p even when
# virtiofsd (built by tools/deps.sh) is available, MPIP_VM_KERNEL_TREE (as
# --kernel-tree).
#
# Options:
#   --cpus N        guest CPUs (default 2)
#   --mem SIZE      guest memory, qemu syntax (default 2G)
#   --kernel VER    kernel version under /lib/modules and /boot/vmlinuz-VER
#                   (default: running kernel if its headers are installed,
#                   else the newest /lib/modules/*/build - same rule as the
#                   top Makefile's KDIR)
#   --kernel-tree DIR  boot the kernel built in the kernel build tree DIR
#                   (DIR/arch/x86/boot/bzImage, with its modules, as
#                   `vng --run DIR` does) instead of /boot's; e.g. the debug
#                   kernel of tools/debug-kernel.sh
#   --timeout SECS  kill the VM after SECS (default 3600, 0 = never);
#                   exit status 124 on timeout
#   --boot-timeout SECS  if the guest has not started COMMAND SECS after
#                   launch, kill it and boot once more (default 900, 0 =
#                   never; also $MPIP_VM_BOOT_TIMEOUT); a guest that hangs
#                   at boot twice gives exit status 124.  Needs --timeout.
#   --accel A       kvm | tcg | auto (default auto; also $MPIP_VM_ACCEL)
#   --tcg-thread T  multi | single: under TCG, one host thread per vCPU
#                   (multi, QEMU's default) or all vCPUs in one host thread
#                   taking turns (also $MPIP_VM_TCG_THREAD)
#   --console-log FILE  write the guest's full kernel log (serial console,
#                   all levels) to FILE on the host, so that an oops or panic
#                   that kills the guest can still be read (also
#                   $MPIP_VM_CONSOLE_LOG); slows printk-heavy guests a little
#   --stall EVERY:MS  once the guest runs COMMAND, stop the whole guest
#                   (SIGSTOP to its QEMU process) for MS milliseconds every
#                   EVERY seconds, as a loaded host or a laptop's suspend
#                   does to a real machine (also $MPIP_VM_STALL); e.g. 4:700
#   -q, --quiet     no timing line on stderr
#   -v, --verbose   show vng's command and the guest's boot console on stderr
#
# KVM is used only if /dev/kvm exists and a probe boot shows that a guest
# really runs (nested KVM can be present but hang); the result is cached per
# host boot in ~/.cache/mpip.  Otherwise QEMU's TCG emulation is used.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mpip
VENV=${MPIP_VENV:-$CACHE/venv}
SELF=$REPO/tools/vm.sh

# Kernel modules that udev would load in a q35 guest and that we never need;
# loading them under TCG costs many seconds of boot time.  Only alias-based
# autoloading is blocked; an explicit modprobe still works.
BLACKLIST=kvm,kvm_amd,kvm_intel,ccp,irqbypass,aesni_intel,ghash_clmulni_intel
BLACKLIST+=,crc32_pclmul,crct10dif_pclmul,sha1_ssse3,sha256_ssse3,sha512_ssse3
BLACKLIST+=,pcspkr,psmouse,serio_raw,evdev,joydev,button,i2c_i801,i2c_smbus
BLACKLIST+=,iTCO_wdt,iTCO_vendor_support,intel_pmc_bxt,lpc_ich,i6300esb
BLACKLIST+=,ahci,libahci,sr_mod,cdrom,sg,qemu_fw_cfg,powernow_k8,edac_mce_amd
BLACKLIST+=,intel_rapl_msr,intel_rapl_common,snd_pcsp

die() {
	printf 'vm.sh: %s\n' "$*" >&2
	exit 125
}

usage() {
	sed -n '2,/^set -/{/^#/s/^# \{0,1\}//p;}' "$SELF" >&2
	exit "${1:-125}"
}

# ---------------------------------------------------------------- guest side
# Invoked by the host side as the guest's script:
#   vm.sh --guest T0 QUIET MARKER -- COMMAND...
# MARKER: a file in the repository that tells the host the guest is up.
guest_main() {
	local t0=$1 quiet=$2 marker=$3 now up
	shift 4
	: >"$marker" 2>/dev/null || true
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root MPIP_IN_VM=1
	export TERM=${TERM:-dumb}
	unset PYENV_VERSION PYTHONPATH VIRTUAL_ENV
	cd "$REPO"
	# under TCG with more than one vCPU, set the static branches the
	# tests would flip, once (the emulation can crash on a flip)
	# (and check that the CPU has no CX16, which the host side asked for)
	if grep -qw 'mpip_accel=tcg' /proc/cmdline; then
		if (($(nproc) > 1)); then
			"$REPO/tools/tcg-keys.sh"
		fi
		if grep -qw cx16 /proc/cpuinfo; then
			echo "vm.sh: warning: this TCG guest's CPU has cx16; QEMU 7.2 can corrupt its flags" >&2
		fi
	fi
	if [[ $quiet == 0 ]]; then
		now=$(date +%s.%N)
		read -r up _ </proc/uptime || up='?'
		awk -v k="$(uname -r)" -v t0="$t0" -v now="$now" -v up="$up" \
			-v a="$(grep -o 'mpip_accel=[a-z]*' /proc/cmdline | cut -d= -f2)" \
			'BEGIN { printf "vm.sh: %s %s, command starts %.1f s after launch (guest uptime %s s)\n", k, a, now - t0, up }' >&2 || true
	fi
	exec "$@"
}

# ----------------------------------------------------------------- host side
# (all in a function: bash reads a script lazily, and this one runs for a
# long time; a function is parsed whole, so editing the file meanwhile is safe)
host_main() {
	cpus=2
	mem=2G
	kver=
	timeout_s=${MPIP_VM_TIMEOUT:-3600}
	boot_timeout=${MPIP_VM_BOOT_TIMEOUT:-900}
	accel=${MPIP_VM_ACCEL:-auto}
	quiet=0
	verbose=0
	console_log=${MPIP_VM_CONSOLE_LOG:-}
	ktree=${MPIP_VM_KERNEL_TREE:-}
	stall=${MPIP_VM_STALL:-}
	tcg_thread=${MPIP_VM_TCG_THREAD:-multi}

	while (($#)); do
		case $1 in
		--cpus) cpus=${2:?}; shift 2 ;;
		--cpus=*) cpus=${1#*=}; shift ;;
		--mem | --memory) mem=${2:?}; shift 2 ;;
		--mem=* | --memory=*) mem=${1#*=}; shift ;;
		--kernel) kver=${2:?}; shift 2 ;;
		--kernel=*) kver=${1#*=}; shift ;;
		--kernel-tree) ktree=${2:?}; shift 2 ;;
		--kernel-tree=*) ktree=${1#*=}; shift ;;
		--timeout) timeout_s=${2:?}; shift 2 ;;
		--timeout=*) timeout_s=${1#*=}; shift ;;
		--boot-timeout) boot_timeout=${2:?}; shift 2 ;;
		--boot-timeout=*) boot_timeout=${1#*=}; shift ;;
		--console-log) console_log=${2:?}; shift 2 ;;
		--console-log=*) console_log=${1#*=}; shift ;;
		--accel) accel=${2:?}; shift 2 ;;
		--accel=*) accel=${1#*=}; shift ;;
		--tcg-thread) tcg_thread=${2:?}; shift 2 ;;
		--tcg-thread=*) tcg_thread=${1#*=}; shift ;;
		--stall) stall=${2:?}; shift 2 ;;
		--stall=*) stall=${1#*=}; shift ;;
		-q | --quiet) quiet=1; shift ;;
		-v | --verbose) verbose=1; shift ;;
		-h | --help) usage 0 ;;
		--) shift; break ;;
		*) echo "vm.sh: unknown option '$1'" >&2; usage ;;
		esac
	done
	(($#)) || { echo "vm.sh: no command given" >&2; usage; }
	[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "bad --cpus '$cpus'"
	[[ $tcg_thread == multi || $tcg_thread == single ]] || die "bad --tcg-thread '$tcg_thread'"
	[[ $timeout_s =~ ^[0-9]+$ ]] || die "bad --timeout '$timeout_s'"
	[[ $boot_timeout =~ ^[0-9]+$ ]] || die "bad --boot-timeout '$boot_timeout'"
	((timeout_s > 0)) || boot_timeout=0
	[[ $REPO != *[[:space:]]* ]] || die "the repository path must not contain spaces: $REPO"
	[[ -z $stall || $stall =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] ||
		die "bad --stall '$stall' (EVERY:MS, e.g. 4:700)"

	if [[ -n $ktree ]]; then
		[[ -z $kver ]] || die "--kernel and --kernel-tree exclude each other"
		ktree=$(cd "$ktree" 2>/dev/null && pwd -P) || die "no kernel tree '$ktree'"
		[[ -f $ktree/.config && -f $ktree/arch/x86/boot/bzImage ]] ||
			die "$ktree is not a built kernel tree (no .config or arch/x86/boot/bzImage)"
		[[ $ktree != *[[:space:]]* ]] || die "the kernel tree path must not contain spaces"
		kimg=$ktree/arch/x86/boot/bzImage
		boot_img=$ktree
	elif [[ -z $kver ]]; then
		if [[ -d /lib/modules/$(uname -r)/build ]]; then
			kver=$(uname -r)
		else
			kver=$(find /lib/modules -mindepth 2 -maxdepth 2 -name build 2>/dev/null |
				awk -F/ '{print $4}' | sort -V | tail -n 1)
		fi
		[[ -n $kver ]] || die "no kernel headers in /lib/modules/*/build; run tools/deps.sh"
	fi
	if [[ -z $ktree ]]; then
		kimg=/boot/vmlinuz-$kver
		[[ -r $kimg ]] || die "no readable kernel image $kimg (install linux-image-$kver)"
		[[ -d /lib/modules/$kver/kernel ]] || die "no modules in /lib/modules/$kver"
	fi

	# Under TCG, decompressing Debian's xz bzImage takes ~10 s of emulated CPU.
	# QEMU can boot the uncompressed ELF vmlinux directly (PVH entry point,
	# CONFIG_PVH=y in Debian's kernels), so extract it once and cache it.
	# Falls back to the bzImage if anything about this does not work out.
	extract_vmlinux() {
		local img=$1 out=$2 off tmp
		off=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$img" 2>/dev/null | head -n 1 | cut -d: -f1)
		[[ -n $off ]] || return 1
		tmp=$(mktemp "$out.XXXXXX") || return 1
		# (xz stops reading after its stream: no pipe, or tail's SIGPIPE would
		# fail the pipeline)
		if xz -dc --single-stream < <(tail -c +$((off + 1)) "$img" 2>/dev/null) >"$tmp" 2>/dev/null &&
			[[ $(head -c 4 "$tmp" | od -An -c | tr -d ' ') == 177ELF ]] &&
			LC_ALL=C grep -aq "Linux version $kver " "$tmp"; then
			chmod 644 "$tmp"
			mv -f "$tmp" "$out"
		else
			rm -f "$tmp"
			return 1
		fi
	}
	[[ -n $ktree ]] || boot_img=$kimg
	if [[ -z $ktree && ${MPIP_VM_BZIMAGE:-0} != 1 ]] && command -v xz >/dev/null &&
		grep -qx 'CONFIG_PVH=y' "/boot/config-$kver" 2>/dev/null; then
		vmlinux=$CACHE/vmlinux-$kver
		if [[ ! -s $vmlinux || $vmlinux -ot $kimg ]]; then
			mkdir -p "$CACHE"
			extract_vmlinux "$kimg" "$vmlinux" || rm -f "$vmlinux"
		fi
		[[ -s $vmlinux ]] && boot_img=$vmlinux
	fi

	# Find vng: our venv first, then PATH; install if missing.
	find_vng() {
		if [[ -x $VENV/bin/vng ]]; then
			echo "$VENV/bin/vng"
		else
			command -v vng || true
		fi
	}
	vng=$(find_vng)
	if [[ -z $vng ]] || ! command -v qemu-system-x86_64 >/dev/null; then
		echo "vm.sh: virtme-ng or qemu missing, running tools/deps.sh" >&2
		"$REPO/tools/deps.sh" >&2
		vng=$(find_vng)
		[[ -n $vng ]] || die "vng not found after tools/deps.sh"
	fi
	# vng runs virtme-run & co. from PATH
	PATH=$(dirname "$vng"):$PATH
	[[ -x $CACHE/virtiofsd/bin/virtiofsd ]] && PATH=$CACHE/virtiofsd/bin:$PATH

	# Does KVM really work?  Boot the kernel with -accel kvm for a few seconds
	# and look for its first console line.
	kvm_probe() {
		local out pid i ok=0
		out=$(mktemp /tmp/mpip-kvm-probe.XXXXXX)
		qemu-system-x86_64 -accel kvm -cpu host -m 256 -display none -no-reboot \
			-nodefaults -serial "file:$out" -kernel "$kimg" \
			-append 'console=ttyS0 earlyprintk=ttyS0 panic=-1' \
			</dev/null >/dev/null 2>&1 &
		pid=$!
		for ((i = 0; i < 60; i++)); do
			if grep -aq 'Linux version' "$out" 2>/dev/null; then
				ok=1
				break
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		rm -f "$out"
		((ok))
	}

	kvm_usable() {
		local bootid stamp
		[[ -c /dev/kvm && -r /dev/kvm && -w /dev/kvm ]] || return 1
		bootid=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
		stamp=$CACHE/kvm-probe.$bootid
		if [[ ! -f $stamp ]]; then
			mkdir -p "$CACHE"
			if kvm_probe 2>/dev/null; then echo ok >"$stamp"; else echo no >"$stamp"; fi
		fi
		[[ $(<"$stamp") == ok ]]
	}

	case $accel in
	auto) if kvm_usable; then accel=kvm; else accel=tcg; fi ;;
	kvm | tcg) ;;
	*) die "bad --accel '$accel' (kvm, tcg or auto)" ;;
	esac

	# Build the guest command: this script in guest mode.  Quote every word
	# for a POSIX shell.
	q() {
		local s=$1
		printf "'%s'" "${s//\'/\'\\\'\'}"
	}
	t0=$(date +%s.%N)
	mkdir -p "$REPO/build/vm"
	marker=$REPO/build/vm/started.$$
	gcmd="$(q "$SELF") --guest $t0 $quiet $(q "$marker") --"
	for a in "$@"; do
		gcmd+=" $(q "$a")"
	done

	vng_args=(
		--run "$boot_img"
		--name mpip-vm
		--cpus "$cpus"
		--memory "$mem"
		--rwdir "$REPO"
		--cwd "$REPO"
		--append "log_buf_len=8M"
		--append "mpip_accel=$accel"
		# Under TCG the vCPUs' TSCs all follow the host clock, but the
		# guest's boot check calls them unsynchronized and falls back to
		# the emulated HPET, whose every read (ktime_get(), TCP's clock,
		# mpip's timestamps) is a slow device access.  Real hosts use the TSC.
		--append "tsc=reliable"
		--exec "$gcmd"
	)
	# (not for a kernel tree: it has its own, smaller, set of modules, and
	# x86 cuts the kernel command line at 2048 bytes, where vng puts init=)
	[[ -n $ktree ]] || vng_args+=(--append "modprobe.blacklist=$BLACKLIST")
	# A kernel tree is the debug kernel (generic KASAN).  With 5-level
	# paging, an interrupt taken while identify_cpu() has the boot CPU's
	# feature words cleared makes KASAN call every direct-map address
	# wild: a false report now and then at boot (debug-kernel.rst,
	# thirty-fifth run).  Its guests use 4-level paging.
	[[ -z $ktree ]] || vng_args+=(--append "no5lvl")
	# Under TCG, a CPU without CMPXCHG16B, whose flags QEMU 7.2 gets
	# wrong: the guest died of it now and then (CI lost two runs; why,
	# in tools/tcg-flags-probe.c).  The kernel has a fallback.  (vng's
	# "-cpu max" comes first; QEMU takes the last -cpu.)
	[[ $accel == tcg ]] && vng_args+=(--disable-kvm "--qemu-opts=-accel tcg,thread=$tcg_thread"
		"--qemu-opts=-cpu max,cx16=off")
	# Under TCG, three costs of a hardened host that the tests do not need:
	# - norandmaps: QEMU keeps the code it translated by virtual address,
	#   so with address space randomisation every exec (a test runs
	#   thousands: ip, jq, mpipctl) translates ld.so and libc again;
	# - mitigations=off: retpolines and RSB filling, emulated;
	# - init_on_alloc=0: Debian zeroes every page and slab object it hands
	#   out (skbs included); without it a read of memory never written
	#   shows garbage rather than zeroes, which hides no bug of ours.
	# Measured 2026-12-02: 200 forks of /bin/true 15.9 s -> 5.6 s, boot to
	# the command 31.6 -> 19.2 s, and test_legacy, test_reorder,
	# test_netlink and test_spoof in one guest 647 -> 517 CPU-seconds
	# (-20 %), all passing.
	[[ $accel == tcg ]] && vng_args+=(--append "norandmaps mitigations=off init_on_alloc=0")
	[[ ${MPIP_VM_9P:-0} == 1 ]] && vng_args+=(--force-9p)
	if [[ -n $console_log ]]; then
		[[ $console_log == /* ]] || console_log=$PWD/$console_log
		[[ $console_log != *[[:space:],]* ]] || die "--console-log path must not contain spaces or commas"
		: >"$console_log" || die "cannot write $console_log"
		# An extra virtio console (hvc0) logging to the file, as a second kernel
		# console (the 8250 driver cannot drive two serial consoles at once).
		vng_args+=("--qemu-opts=-chardev file,id=mpiplog,path=$console_log"
			"--qemu-opts=-device virtio-serial-pci,id=mpiplogbus"
			"--qemu-opts=-device virtconsole,chardev=mpiplog,bus=mpiplogbus.0"
			--append "console=hvc0" --append "ignore_loglevel")
	fi
	((verbose)) && vng_args+=(--verbose)

	cmd=("$vng" "${vng_args[@]}")
	if ((timeout_s > 0)); then
		if [[ -t 0 ]]; then
			cmd=(timeout --foreground --kill-after=20 "$timeout_s" "${cmd[@]}")
		else
			cmd=(timeout --kill-after=20 "$timeout_s" "${cmd[@]}")
		fi
	fi
	((verbose)) && printf 'vm.sh: %q ' "${cmd[@]}" >&2 && echo >&2

	cd "$REPO"

	# QEMU opens /proc/self/fd/{1,2} itself, with O_TRUNC and one file offset per
	# chardev: with a regular file as stdout/stderr that would truncate it and let
	# the guest's streams overwrite each other.  Hand it pipes instead (a tty is
	# fine as it is).  Without a tty on stdin, give it /dev/null: vng needs a
	# valid fd 0.
	[[ -t 0 ]] || exec </dev/null
	errpid=
	if [[ ! -t 2 ]]; then
		exec 4> >(cat >&2)
		errpid=$!
	else
		exec 4>&2
	fi

	# A guest that hangs at boot (seen once in many: no console output
	# after 17 min) is killed and booted again, once; so is one that
	# dies before it starts its command (seen once: the 6.12 kernel's
	# "Oops: int3" in sched_clock_idle_wakeup_event at 2.7 s, under TCG,
	# as a static key was patched; no module loaded, nothing of ours had
	# run).  Its console log is kept beside the new one, as FILE.boot1.
	hung=0
	for attempt in 1 2; do
		vm_boot
		if ((!hung && rc != 0 && attempt == 1)) && [[ ! -e $marker ]]; then
			echo "vm.sh: the guest died before it started its command" \
				"(exit status $rc, attempt 1), booted again" >&2
			[[ -z $console_log ]] ||
				cp "$console_log" "$console_log.boot1" 2>/dev/null || true
			continue
		fi
		((hung)) || break
		echo "vm.sh: the guest did not start its command within" \
			"${boot_timeout} s (attempt $attempt), killed" >&2
	done
	rm -f "$marker"
	exec 4>&-
	[[ -z $errpid ]] || wait "$errpid" 2>/dev/null || true
	if ((hung)); then
		rc=124
	elif ((rc == 124 && timeout_s > 0)); then
		echo "vm.sh: guest did not finish within ${timeout_s} s, killed" >&2
	elif ((rc == 255)); then
		echo "vm.sh: exit status 255: the guest may have crashed (kernel panic?);" \
			"rerun with --console-log FILE or -v to see its console" >&2
	fi
	return "$rc"
}

# vm_boot: run "${cmd[@]}" (host_main's) once: rc its exit status; hung=1
# if the guest had not started its command ($marker) boot_timeout s after
# launch and was killed
vm_boot() {
	local pid waited=0
	rm -f "$marker"
	hung=0
	set +e
	if [[ -t 1 ]]; then
		"${cmd[@]}" 2>&4 &
	else
		{
			"${cmd[@]}" 2>&4 | cat
			exit "${PIPESTATUS[0]}"
		} &
	fi
	pid=$!
	spid=
	if [[ -n $stall ]]; then
		stall_guest "$pid" "${stall%%:*}" "${stall#*:}" &
		spid=$!
	fi
	while ((boot_timeout > 0)) && [[ ! -e $marker ]] && kill -0 "$pid" 2>/dev/null; do
		if ((waited >= boot_timeout)); then
			hung=1
			# timeout(1) passes the signal on to the guest's process group
			pkill -TERM -x timeout -P "$pid" 2>/dev/null || kill -TERM "$pid"
			break
		fi
		sleep 1
		waited=$((waited + 1))
	done
	wait "$pid"
	rc=$?
	[[ -z $spid ]] || { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
	set -e
}

# descendants PID: every process below PID
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# stall_guest PID EVERY MS: once the guest started its command ($marker),
# stop the QEMU process below PID for MS ms every EVERY s, until PID ends
stall_guest() {
	local pid=$1 every=$2 ms=$3 q=
	trap '[[ -z $q ]] || kill -CONT "$q" 2>/dev/null; exit 0' TERM
	while [[ ! -e $marker ]]; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 1
	done
	while kill -0 "$pid" 2>/dev/null; do
		sleep "$every"
		q=$(descendants "$pid" | while read -r c; do
			[[ $(ps -o comm= -p "$c" 2>/dev/null) == qemu-system* ]] && echo "$c"
		done | head -n 1)
		[[ -n $q ]] || continue
		kill -STOP "$q" 2>/dev/null || continue
		sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
		kill -CONT "$q" 2>/dev/null || true
	done
}

if [[ ${1:-} == --guest ]]; then
	shift
	guest_main "$@"
else
	host_main "$@"
fi
exit
