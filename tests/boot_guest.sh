#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/boot_guest.sh - the guest half of tests/package_boot_test.sh.
# Installed in the Debian root that test boots as
# /usr/local/sbin/mpip-boot-test and run by mpip-boot-test.service, after
# mpip.service, at every boot; the kernel command line's mpip_stage= says
# which boot this is.  Its KTAP results go to /root/ktap.STAGE, which the
# host reads from the disk image after the guest powered itself off.
#
#   first     (Debian 12's 6.1, the first boot after the packages were
#             installed and mpip.service enabled): the service ran, the
#             module loaded is the one DKMS built, mpip.conf was applied;
#             reload applies a changed file; installing the 6.12 kernel
#             packages (from /root/upgrade: the guest has no network)
#             builds the module for 6.12 through DKMS's hook.
#   upgraded  (6.12): the service ran, the DKMS module for 6.12 is loaded,
#             the file was applied; stop switches mpip off; dpkg --purge
#             leaves no module, no DKMS record and no mpipctl.  Before the
#             purge, the module is copied to /root/mpip.ko, for the host
#             to run selftests against the packaged build.
set -u

STAGE=$(sed -n 's/.*mpip_stage=\([a-z]*\).*/\1/p' /proc/cmdline)
OUT=/root/ktap.$STAGE
KVER=$(uname -r)
UNIT=mpip.service
TMP=$(mktemp -d)

# shellcheck source=tests/unit/ktap_lib.sh
source /usr/local/lib/mpip-boot/ktap_lib.sh

# dkms_ko KVER: the module DKMS installed for KVER, or nothing
dkms_ko() {
	local f
	for f in "/lib/modules/$1/updates/dkms/mpip.ko" "/lib/modules/$1/updates/dkms/mpip.ko.xz"; do
		[ -f "$f" ] && echo "$f" && return 0
	done
	return 1
}

# hb: the tunable heartbeat_ms
hb() { mpipctl -j get | jq .heartbeat_ms; }

t_started() {
	systemctl is-active -q "$UNIT" ||
		fail "$UNIT $(systemctl is-active "$UNIT"):
$(journalctl -b -u "$UNIT" --no-pager | tail -n 15)"
}

t_dkms_module() {
	local ko
	ko=$(dkms_ko "$KVER") || fail "no DKMS module for $KVER" || return 1
	[ -d /sys/module/mpip ] || fail "mpip is not loaded" || return 1
	[ "$(cat /sys/module/mpip/srcversion)" = "$(modinfo -F srcversion "$ko")" ] ||
		fail "the loaded module is not $ko"
}

# applied HB: the file's heartbeat_ms HB and its rule are in force, mpip on
applied() {
	[ "$(hb)" = "$1" ] || fail "heartbeat_ms $(hb), not $1" || return 1
	mpipctl -j show rules | jq -e 'any(.[]; .pref == 10)' >/dev/null ||
		fail "the file's rule (pref 10) is not there" || return 1
	mpipctl -j status | jq -e '.enabled == true' >/dev/null || fail "mpip is not enabled"
}

t_reload() {
	sed -i 's/heartbeat_ms 250/heartbeat_ms 400/' /etc/mpip/mpip.conf
	systemctl reload "$UNIT" || fail "systemctl reload failed" || return 1
	applied 400
}

t_upgrade() {
	local other ko k
	dpkg -i /root/upgrade/*.deb >"$TMP/dpkg.log" 2>&1 ||
		fail "dpkg -i: $(tail -n 15 "$TMP/dpkg.log")" || return 1
	other=$(for k in /lib/modules/6.12.*; do [ -d "$k" ] && echo "${k##*/}"; done |
		sort -V | tail -n 1)
	[ -n "$other" ] || fail "no 6.12 kernel in /lib/modules" || return 1
	echo "# installed $other"
	ko=$(dkms_ko "$other") || fail "no DKMS module for $other: $(tail -n 15 "$TMP/dpkg.log")" ||
		return 1
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$other" ] ||
		fail "$ko: vermagic $(modinfo -F vermagic "$ko")" || return 1
	[ -f "/boot/initrd.img-$other" ] || fail "no initrd for $other"
}

t_stop() {
	systemctl stop "$UNIT" || fail "systemctl stop failed" || return 1
	mpipctl -j status | jq -e '.enabled == false' >/dev/null || fail "still enabled after stop"
}

t_purge() {
	local k
	cp "$(dkms_ko "$KVER")" /root/mpip.ko || fail "cannot keep a copy of the module" || return 1
	rmmod mpip || fail "rmmod mpip failed" || return 1
	dpkg --purge mpipctl mpip-dkms >"$TMP/purge.log" 2>&1 ||
		fail "dpkg --purge: $(tail -n 15 "$TMP/purge.log")" || return 1
	for k in /lib/modules/*; do
		dkms_ko "${k##*/}" >/dev/null && fail "a DKMS module is left in $k" && return 1
	done
	[ -z "$(dkms status -m mpip 2>/dev/null)" ] || fail "dkms status: $(dkms status -m mpip)" ||
		return 1
	if [ -e /usr/sbin/mpipctl ] || [ -e "/lib/systemd/system/$UNIT" ]; then
		fail "mpipctl or its unit is left"
	fi
}

{
	echo "# stage $STAGE, kernel $KVER"
	case $STAGE in
	first)
		check "boot on $KVER: mpip.service ran" t_started
		check "boot on $KVER: the module DKMS built is loaded" t_dkms_module
		check "boot on $KVER: mpip.conf applied" applied 250
		check "systemctl reload applies a changed mpip.conf" t_reload
		check "the 6.12 kernel packages installed: DKMS builds mpip for it" t_upgrade
		;;
	upgraded)
		check "boot on $KVER: mpip.service ran" t_started
		check "boot on $KVER: the module DKMS built is loaded" t_dkms_module
		check "boot on $KVER: mpip.conf applied" applied 400
		check "systemctl stop switches mpip off" t_stop
		check "dpkg --purge leaves no module, no DKMS record, no mpipctl" t_purge
		;;
	*)
		echo "not ok 1 unknown stage '$STAGE'"
		;;
	esac
} 2>&1 | tee "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
rm -rf "$TMP"
sync
systemctl --no-block poweroff
