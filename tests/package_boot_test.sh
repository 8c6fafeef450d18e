#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/package_boot_test.sh DEBDIR - the Debian packages as a user lives
# with them, on a Debian 12 machine that boots with systemd (make
# check-packages; issue 23).  The machine is a root filesystem of Debian
# packages (tools/rootfs.sh) on a disk image, booted by QEMU from its own
# kernel and initramfs, without network.
#
#  1. In that root (chroot, on the host): dpkg -i installs mpip-dkms and
#     mpipctl; DKMS builds and installs the module for the installed
#     kernel (6.1).  The user writes /etc/mpip/mpip.conf and enables
#     mpip.service (systemctl enable).
#  2. Boot on 6.1 (tests/boot_guest.sh, stage "first"): systemd ran
#     mpip.service, the DKMS module is loaded, the file is applied;
#     reload applies a changed file; the 6.12 kernel packages installed
#     in the guest have DKMS build the module for 6.12.
#  3. Boot on 6.12, from the kernel and initramfs the guest installed
#     (stage "upgraded"): the service ran, the module is the DKMS one for
#     6.12, the changed file is applied; stop; purge.
#  4. On the host, in tools/vm.sh's 6.12 guest: selftests against the
#     module DKMS built in the guest (MPIP_KO; PACKAGE_SELFTESTS, default
#     test_netlink test_multipath).
#
# Output is KTAP; the last line is "packages-boot: N passed, N failed".
# Work files, the disk image and the guests' consoles: build/boot/.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
DEBS=$(cd "${1:?DEBDIR}" && pwd -P)
W=$ROOT/build/boot
R=$W/root
IMG=$W/disk.img
TMP=$W/tmp
VERSION=$(sed -n 's/^#define[[:space:]]*MPIP_VERSION[[:space:]]*"\(.*\)".*/\1/p' "$ROOT/kernel/mpip.h")
SELFTESTS=${PACKAGE_SELFTESTS:-test_netlink test_multipath}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-1800}

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[i]}"
	done
	mounted=()
}
trap cleanup EXIT

# newest DIR SERIES: the newest kernel of SERIES (6.1, 6.12) in DIR
newest() {
	local d
	for d in "$1/$2".*; do
		[ -d "$d" ] && echo "${d##*/}"
	done | sort -V | tail -n 1
}

# in_root CMD...: CMD in the root, with /dev, /proc and /sys
in_root() {
	local m
	if [ ${#mounted[@]} -eq 0 ]; then
		for m in dev proc sys; do
			if ! mount --rbind "/$m" "$R/$m"; then
				cleanup
				return 1
			fi
			mounted+=("$R/$m")
			mount --make-rslave "$R/$m"
		done
	fi
	chroot "$R" "$@"
}

t_root() {
	rm -rf "$W"
	mkdir -p "$R" "$TMP"
	"$ROOT/tools/rootfs.sh" >"$TMP/rootfs.log" 2>&1 ||
		fail "tools/rootfs.sh: $(tail -n 15 "$TMP/rootfs.log")" || return 1
	tar -xpf "$(tail -n 1 "$TMP/rootfs.log")" -C "$R" --numeric-owner ||
		fail "cannot unpack the root" || return 1
	ls "$R"/root/upgrade/linux-image-6.12*.deb >/dev/null 2>&1 ||
		fail "no 6.12 kernel package in the root's /root/upgrade"
}

t_install() {
	local k
	mkdir -p "$R/root/debs"
	cp "$DEBS"/mpip-dkms_"$VERSION"_all.deb "$DEBS"/mpipctl_"$VERSION"_*.deb "$R/root/debs/" ||
		fail "no packages of $VERSION in $DEBS" || return 1
	in_root sh -c 'dpkg -i /root/debs/*.deb' >"$TMP/dpkg.log" 2>&1 ||
		fail "dpkg -i: $(tail -n 15 "$TMP/dpkg.log")" || return 1
	cleanup
	k=$(newest "$R/lib/modules" 6.1)
	echo "# installed kernel $k"
	ls "$R/lib/modules/$k"/updates/dkms/mpip.ko* >/dev/null 2>&1 ||
		fail "no DKMS module for $k: $(tail -n 15 "$TMP/dpkg.log")"
}

# what the user does: the configuration file, the unit enabled
t_configure() {
	printf 'set heartbeat_ms 250\nrule add pref 10 proto tcp dport 22 mode original\n' \
		>"$R/etc/mpip/mpip.conf"
	chroot "$R" systemctl enable mpip.service >"$TMP/enable.log" 2>&1 ||
		fail "systemctl enable: $(cat "$TMP/enable.log")" || return 1
	install -D -m 755 "$ROOT/tests/boot_guest.sh" "$R/usr/local/sbin/mpip-boot-test"
	install -D -m 644 "$ROOT/tests/unit/ktap_lib.sh" "$R/usr/local/lib/mpip-boot/ktap_lib.sh"
	cat >"$R/etc/systemd/system/mpip-boot-test.service" <<-EOF
		[Unit]
		Description=mpip package test (tests/package_boot_test.sh)
		After=mpip.service

		[Service]
		Type=oneshot
		ExecStart=/usr/local/sbin/mpip-boot-test
		StandardOutput=journal+console

		[Install]
		WantedBy=multi-user.target
	EOF
	chroot "$R" systemctl enable mpip-boot-test.service >>"$TMP/enable.log" 2>&1 ||
		fail "systemctl enable: $(cat "$TMP/enable.log")" || return 1
	if grep -q " $R/" /proc/mounts; then
		fail "still mounted in the root: $(grep " $R/" /proc/mounts)" || return 1
	fi
	# a disk as large as the root and the 6.12 kernel installed in it need
	truncate -s 6G "$IMG"
	mkfs.ext4 -q -F -L mpiproot -d "$R" "$IMG" >"$TMP/mkfs.log" 2>&1 ||
		fail "mkfs.ext4: $(cat "$TMP/mkfs.log")"
}

# boot STAGE KVER: the disk image booted on KVER's kernel and initramfs
# (read from the image); the guest's results are in $TMP/ktap.STAGE, or
# there, why there are none
boot() {
	local stage=$1 kver=$2 f res=$TMP/ktap.$1
	for f in "vmlinuz-$kver" "initrd.img-$kver"; do
		debugfs -R "dump /boot/$f $TMP/$f" "$IMG" >/dev/null 2>&1
		[ -s "$TMP/$f" ] || { echo "# no /boot/$f in the image" >"$res"; return; }
	done
	echo "# boot $stage on $kver"
	timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -m 2048 -smp 2 \
		-display none -monitor none -serial "file:$W/console.$stage.log" \
		-no-reboot -nic none \
		-kernel "$TMP/vmlinuz-$kver" -initrd "$TMP/initrd.img-$kver" \
		-append "root=LABEL=mpiproot rw console=ttyS0 mpip_stage=$stage" \
		-drive "file=$IMG,format=raw,if=virtio" ||
		echo "# qemu: exit status $? (timeout $BOOT_TIMEOUT s)"
	debugfs -R "dump /root/ktap.$stage $res" "$IMG" >/dev/null 2>&1
	[ -s "$res" ] || {
		echo "the guest wrote no results; its console ($W/console.$stage.log):"
		tail -n 20 "$W/console.$stage.log"
	} | sed 's/^/# /' >"$res"
}

# relay STAGE COUNT: the guest's COUNT results of STAGE, as ours; missing
# ones fail
relay() {
	local line seen=0 why=""
	while IFS= read -r line; do
		case $line in
		"ok "*)
			line=${line#ok }
			check "${line#* }" true
			seen=$((seen + 1))
			;;
		"not ok "*)
			line=${line#not ok }
			check "${line#* }" fail "$why"
			why=""
			seen=$((seen + 1))
			;;
		"# "*) why+="${why:+$'\n'}${line#\# }" ;;
		esac
	done <"$TMP/ktap.$1"
	while [ "$seen" -lt "$2" ]; do
		check "$1: result $((seen + 1)) (the guest did not get there)" fail "$why"
		seen=$((seen + 1))
	done
}

t_selftests() {
	debugfs -R "dump /root/mpip.ko $TMP/mpip.ko" "$IMG" >/dev/null 2>&1
	[ -n "$OTHER" ] && [ -s "$TMP/mpip.ko" ] ||
		fail "no 6.12 kernel in the image, or the guest kept no copy of its module" ||
		return 1
	echo "# $(modinfo -F vermagic "$TMP/mpip.ko")"
	# shellcheck disable=SC2086 # a list of test names
	"$ROOT/tools/vm.sh" --kernel "$OTHER" --timeout 1200 -- \
		env MPIP_KO="$TMP/mpip.ko" "$ROOT/tests/selftests/run.sh" $SELFTESTS \
		>"$TMP/selftests.log" 2>&1
	sed 's/^/# /' "$TMP/selftests.log" | grep -E '^# (not )?ok|^# selftests:'
	grep -q '^selftests: [1-9][0-9]* passed, 0 failed' "$TMP/selftests.log" ||
		fail "selftests against the packaged module failed"
}

echo "KTAP version 1"
PLAN=14
echo "1..$PLAN"
echo "# mpip $VERSION"
check "a Debian 12 root with its 6.1 kernel and 6.12's packages" t_root || {
	ktap_end packages-boot
	exit
}
check "dpkg -i in the root: DKMS builds and installs the module" t_install
check "mpip.conf written, mpip.service enabled, the root on a disk" t_configure
KVER1=$(newest "$R/lib/modules" 6.1)
boot first "$KVER1"
relay first 5
OTHER=$(debugfs -R "ls -p /lib/modules" "$IMG" 2>/dev/null | tr '/' '\n' | grep '^6\.12\.' |
	sort -V | tail -n 1)
boot upgraded "${OTHER:-6.12}"
relay upgraded 5
check "selftests ($SELFTESTS) on 6.12 against the module DKMS built there" t_selftests
ktap_end packages-boot
