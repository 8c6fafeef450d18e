#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/package_vm_test.sh DEBDIR OTHER_KVER - the Debian packages
# installed, used, upgraded and purged in a guest (make check-packages:
# tools/vm.sh --writable-usr, so that dpkg and DKMS may write /usr, /etc
# and /var, all in tmpfs overlays the host never sees).  Issue 23.
#
#  1. dpkg -i installs mpip-dkms and mpipctl from DEBDIR; DKMS builds and
#     installs the module for the running kernel (its postinst).  The
#     headers of OTHER_KVER are hidden first, as if that kernel were not
#     installed yet, so that the postinst builds for the running one only.
#  2. modprobe loads the module DKMS installed (updates/dkms), not the
#     tree's.
#  3. mpip.service's start, as systemd runs it at boot (its ExecStartPre
#     and ExecStart lines in order), applies /etc/mpip/mpip.conf; reload
#     applies a changed file; stop switches mpip off.  (The guest's init
#     is not systemd, so the unit's own lines are run here, not the unit.)
#  4. A kernel upgrade: OTHER_KVER's headers appear, as when its
#     linux-headers package is installed, and DKMS's hook for that
#     (/etc/kernel/header_postinst.d/dkms) builds and installs the module
#     for it.
#  5. dpkg --purge removes both packages, the modules and DKMS's record.
#
# Output is KTAP; the last line is "packages-vm: N passed, N failed".
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEBS=${1:?DEBDIR}
OTHER=${2:?OTHER_KVER}
KVER=$(uname -r)
VERSION=$(sed -n 's/^#define[[:space:]]*MPIP_VERSION[[:space:]]*"\(.*\)".*/\1/p' "$ROOT/kernel/mpip.h")
TMP=$(mktemp -d)
UNIT=/lib/systemd/system/mpip.service

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"

# dkms_ko KVER: the module DKMS installed for KVER, or nothing
dkms_ko() {
	local f
	for f in "/lib/modules/$1/updates/dkms/mpip.ko" "/lib/modules/$1/updates/dkms/mpip.ko.xz"; do
		[ -f "$f" ] && echo "$f" && return 0
	done
	return 1
}

# unit_run KEY: the unit's KEY= lines (ExecStart ...) in order, as systemd
# runs them: each must succeed
unit_run() {
	local line
	while IFS= read -r line; do
		echo "# $1: $line"
		# shellcheck disable=SC2086 # the unit's command line, word-split
		${line#*=} >>"$TMP/unit.log" 2>&1 ||
			{ msg="$line failed: $(tail -n 3 "$TMP/unit.log")"; return 1; }
	done < <(grep -E "^$1=" "$UNIT")
}

t_install() {
	[ -d "/lib/modules/$OTHER" ] || fail "no kernel $OTHER" || return 1
	# OTHER's headers "not installed yet"
	rm -f "/lib/modules/$OTHER/build" || fail "cannot hide $OTHER's headers" || return 1
	dpkg -i "$DEBS"/mpip-dkms_"$VERSION"_all.deb "$DEBS"/mpipctl_"$VERSION"_*.deb \
		>"$TMP/dpkg.log" 2>&1 || fail "dpkg -i: $(tail -n 15 "$TMP/dpkg.log")" || return 1
	dkms status -m mpip >"$TMP/status" 2>&1
	sed 's/^/# /' "$TMP/status"
	grep -q "^mpip/$VERSION, $KVER, [^:]*: installed" "$TMP/status" ||
		fail "dkms status: $(cat "$TMP/status")" || return 1
	if grep -q ", $OTHER," "$TMP/status"; then
		fail "built for $OTHER, whose headers were hidden"
	fi
}

t_modprobe() {
	local ko
	ko=$(dkms_ko "$KVER") || fail "no DKMS module for $KVER" || return 1
	[ "$(modinfo -n mpip)" = "$ko" ] || fail "modinfo -n mpip: $(modinfo -n mpip)" || return 1
	modprobe mpip || fail "modprobe mpip failed" || return 1
	if [ "$(cat /sys/module/mpip/version)" != "$VERSION" ] ||
		[ "$(cat /sys/module/mpip/srcversion)" != "$(modinfo -F srcversion "$ko")" ]; then
		fail "the loaded module is not $ko"
	fi
}

# hb: the tunable heartbeat_ms
hb() { mpipctl -j get | jq .heartbeat_ms; }

t_service() {
	[ -f "$UNIT" ] || fail "no $UNIT" || return 1
	printf 'set heartbeat_ms 250\nrule add pref 10 proto tcp dport 22 mode original\n' \
		>/etc/mpip/mpip.conf
	unit_run ExecStartPre && unit_run ExecStart || return 1
	[ "$(hb)" = 250 ] || fail "heartbeat_ms $(hb) after start, not 250" || return 1
	mpipctl -j show rules | jq -e 'any(.[]; .pref == 10)' >/dev/null ||
		fail "the file's rule is not there" || return 1
	sed -i 's/heartbeat_ms 250/heartbeat_ms 400/' /etc/mpip/mpip.conf
	unit_run ExecReload || return 1
	[ "$(hb)" = 400 ] || fail "heartbeat_ms $(hb) after reload, not 400" || return 1
	unit_run ExecStop || return 1
	mpipctl -j status | jq -e '.enabled == false' >/dev/null || fail "still enabled after stop"
}

t_upgrade() {
	local ko
	ln -s "/usr/src/linux-headers-$OTHER" "/lib/modules/$OTHER/build" ||
		fail "cannot restore $OTHER's headers" || return 1
	[ -x /etc/kernel/header_postinst.d/dkms ] ||
		fail "no /etc/kernel/header_postinst.d/dkms" || return 1
	/etc/kernel/header_postinst.d/dkms "$OTHER" >"$TMP/hook.log" 2>&1 ||
		fail "the hook failed: $(tail -n 15 "$TMP/hook.log")" || return 1
	ko=$(dkms_ko "$OTHER") || fail "no module for $OTHER: $(tail -n 15 "$TMP/hook.log")" || return 1
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$OTHER" ] ||
		fail "$ko: vermagic $(modinfo -F vermagic "$ko")"
}

t_purge() {
	rmmod mpip || fail "rmmod mpip failed" || return 1
	dpkg --purge mpipctl mpip-dkms >"$TMP/purge.log" 2>&1 ||
		fail "dpkg --purge: $(tail -n 15 "$TMP/purge.log")" || return 1
	if dkms_ko "$KVER" || dkms_ko "$OTHER"; then
		fail "a DKMS module is left" || return 1
	fi
	[ -z "$(dkms status -m mpip 2>/dev/null)" ] || fail "dkms status: $(dkms status -m mpip)" ||
		return 1
	if [ -e /usr/sbin/mpipctl ] || [ -e "$UNIT" ]; then
		fail "mpipctl or its unit is left"
	fi
}

echo "KTAP version 1"
PLAN=5
echo "1..$PLAN"
echo "# kernel $KVER, upgrade to $OTHER, mpip $VERSION"
check "dpkg -i: DKMS builds and installs the module for $KVER only" t_install
check "modprobe loads the module DKMS installed" t_modprobe
check "mpip.service's start applies mpip.conf, reload a changed one, stop switches off" t_service
check "headers of $OTHER installed: DKMS's hook builds the module for it" t_upgrade
check "dpkg --purge leaves no module, no DKMS record, no mpipctl" t_purge
rm -rf "$TMP"
ktap_end packages-vm
