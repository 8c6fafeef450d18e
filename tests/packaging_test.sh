#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/packaging_test.sh - the Debian packages, built and looked at, not
# installed: `make deb` (into a scratch directory, not build/deb), lintian
# on the .debs, their contents (dpkg-deb -c), control data and maintainer
# scripts, the packaged mpipctl and dkms.conf, mpip.service and the example
# /etc/mpip/mpip.conf (a conffile; the unit passes systemd-analyze verify,
# and is neither enabled nor started on install), and that debian/changelog
# must agree with MPIP_VERSION in kernel/mpip.h; then DKMS builds the
# packaged sources in a DKMS tree of its own (not the system's: dkms status
# does not change) for every kernel here with headers (tools/deps.sh
# installs Debian's 6.1 and 6.12), one after the other in the same tree,
# as DKMS's kernel hook does when a new kernel is installed.
# Needs dpkg-dev, debhelper, dh-dkms, lintian, dkms and systemd
# (tools/deps.sh), and
# about 50 s a kernel on a 2-core machine (12 s without the DKMS builds).
# The DKMS build signs the module with /var/lib/dkms/mok.key as dkms does;
# when that key pair had to be made for it, it is removed again.
# DKMS_KERNEL=VERSION picks one kernel.  Output is KTAP; the last line
# is "packaging: N passed, N failed, N skipped" and the exit status is
# non-zero when a test failed.  KEEP_TMP=1 keeps the scratch directory.
#
# SKIP-OK: *DKMS*: no kernel headers on this machine
# SKIP-OK: *systemd-analyze*: systemd is not installed (a container without it)

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
OUT=$TMP/deb
VERSION=$(sed -n 's/^#define[[:space:]]*MPIP_VERSION[[:space:]]*"\(.*\)".*/\1/p' "$ROOT/kernel/mpip.h")
DKMS_DEB=$OUT/mpip-dkms_${VERSION}_all.deb
ARCH=$(dpkg --print-architecture 2>/dev/null)
CTL_DEB=$OUT/mpipctl_${VERSION}_$ARCH.deb
SRC=./usr/src/mpip-$VERSION

# shellcheck source=tests/unit/ktap_lib.sh
source "$ROOT/tests/unit/ktap_lib.sh"
skipped=0

# contents DEB: the paths in DEB, one a line.
contents() {
	dpkg-deb -c "$1" | awk '{ print $6 }'
}

# has DEB PATH...: every PATH is in DEB.
has() {
	local deb=$1 p
	shift
	contents "$deb" >"$TMP/list" || fail "dpkg-deb -c $deb failed" || return 1
	for p in "$@"; do
		grep -qxF -- "$p" "$TMP/list" || fail "$(basename "$deb") lacks $p" || return 1
	done
}

t_tools() {
	local t
	for t in dpkg-buildpackage dh dh_dkms lintian dpkg-deb; do
		command -v "$t" >/dev/null || fail "$t is missing (tools/deps.sh installs it)" || return 1
	done
	[ -n "$VERSION" ] || fail "no MPIP_VERSION in kernel/mpip.h"
}

t_build() {
	make -s -C "$ROOT" deb DEB_OUT="$OUT" >"$TMP/build.log" 2>&1 ||
		fail "make deb failed: $(tail -n 15 "$TMP/build.log")" || return 1
	if grep -q 'warning:' "$TMP/build.log"; then
		fail "compiler warnings: $(grep 'warning:' "$TMP/build.log" | head -n 5)"
		return 1
	fi
	[ -f "$DKMS_DEB" ] && [ -f "$CTL_DEB" ] ||
		fail "not both of $(basename "$DKMS_DEB") and $(basename "$CTL_DEB") in: $(ls "$OUT")" || return 1
	[ "$(find "$OUT" -maxdepth 1 -name '*.deb' | wc -l)" -eq 2 ] ||
		fail "other packages: $(ls "$OUT")"
}

t_lintian() {
	# lintian exits non-zero on tags at the --fail-on levels
	lintian --fail-on error,warning --display-level '>=warning' \
		"$DKMS_DEB" "$CTL_DEB" >"$TMP/lintian.log" 2>&1 ||
		fail "lintian: $(grep -v 'running with root' "$TMP/lintian.log")" || return 1
	! grep -q '^[EW]: ' "$TMP/lintian.log" ||
		fail "lintian: $(grep '^[EW]: ' "$TMP/lintian.log")"
}

t_dkms_files() {
	local f want=()
	for f in $(cd "$ROOT" && find Kbuild kernel -name Kbuild -o -name '*.[ch]' ! -name '*.mod.c'); do
		want+=("$SRC/$f")
	done
	[ "${#want[@]}" -gt 20 ] || fail "only ${#want[@]} module sources in the tree" || return 1
	has "$DKMS_DEB" "$SRC/dkms.conf" "$SRC/Kbuild" "$SRC/kernel/Kbuild" \
		"$SRC/kernel/core/cm.c" "$SRC/kernel/uapi/mpip.h" "${want[@]}" || return 1
	! grep -qE '\.(o|ko|cmd|mod)$|/usr/sbin|/man/' "$TMP/list" ||
		fail "mpip-dkms has $(grep -E '\.(o|ko|cmd|mod)$|/usr/sbin|/man/' "$TMP/list" | head -n 3)"
}

t_dkms_conf() {
	local conf
	conf=$(dpkg-deb --fsys-tarfile "$DKMS_DEB" | tar -xOf - "$SRC/dkms.conf") ||
		fail "cannot read $SRC/dkms.conf" || return 1
	local line
	for line in 'PACKAGE_NAME="mpip"' "PACKAGE_VERSION=\"$VERSION\"" \
		'BUILT_MODULE_NAME[0]="mpip"' 'BUILT_MODULE_LOCATION[0]="kernel/"' \
		'DEST_MODULE_LOCATION[0]="/updates/dkms"' 'AUTOINSTALL="yes"'; do
		grep -qxF -- "$line" <<<"$conf" || fail "dkms.conf lacks $line: $conf" || return 1
	done
	# shellcheck disable=SC2016 # the literal ${kernel_source_dir} of dkms.conf
	grep -q '^MAKE\[0\]="make -C ${kernel_source_dir} .*modules"$' <<<"$conf" ||
		fail "dkms.conf: no MAKE[0] for the module only: $conf"
}

t_dkms_control() {
	local f
	f=$(dpkg-deb -f "$DKMS_DEB" Architecture Depends)
	grep -qx 'Architecture: all' <<<"$f" || fail "control: $f" || return 1
	grep -q '^Depends: .*dkms' <<<"$f" || fail "control: $f" || return 1
	dpkg-deb -e "$DKMS_DEB" "$TMP/ctrl" || fail "dpkg-deb -e failed" || return 1
	grep -qx 'DKMS_NAME=mpip' "$TMP/ctrl/postinst" &&
		grep -qx "DKMS_VERSION=$VERSION" "$TMP/ctrl/postinst" &&
		grep -q 'common.postinst' "$TMP/ctrl/postinst" ||
		fail "postinst does not register mpip $VERSION with DKMS" || return 1
	grep -q "dkms remove -m \$DKMS_NAME -v \$DKMS_VERSION --all" "$TMP/ctrl/prerm" ||
		fail "prerm does not remove it from DKMS"
}

t_ctl_files() {
	has "$CTL_DEB" ./usr/sbin/mpipctl ./usr/share/man/man8/mpipctl.8.gz \
		./usr/share/bash-completion/completions/mpipctl \
		./usr/share/doc/mpipctl/copyright ./etc/mpip/mpip.conf || return 1
	! grep -q '^\./usr/src/' "$TMP/list" || fail "mpipctl has module sources" || return 1
	unit_path >/dev/null
}

# unit_path: where mpip.service is in the mpipctl package (./lib/systemd/system
# with debhelper compat 13, ./usr/lib/... with later ones).
unit_path() {
	local p
	p=$(contents "$CTL_DEB" | grep -E '^\./(usr/)?lib/systemd/system/mpip\.service$')
	if [ -z "$p" ] || [ "$(wc -l <<<"$p")" -ne 1 ]; then
		fail "no (or more than one) mpip.service in $(basename "$CTL_DEB"): $p"
		return 1
	fi
	echo "$p"
}

# The unit and the example config as in the tree; the config is a conffile;
# the unit is neither enabled nor started by the maintainer scripts.
t_ctl_service() {
	local unit line
	unit=$(unit_path) || return 1
	mkdir -p "$TMP/svc" && dpkg-deb -x "$CTL_DEB" "$TMP/svc" ||
		fail "dpkg-deb -x failed" || return 1
	cmp -s "$TMP/svc/$unit" "$ROOT/debian/mpipctl.mpip.service" ||
		fail "the packaged $unit is not debian/mpipctl.mpip.service" || return 1
	cmp -s "$TMP/svc/etc/mpip/mpip.conf" "$ROOT/debian/mpip.conf" ||
		fail "the packaged /etc/mpip/mpip.conf is not debian/mpip.conf" || return 1
	for line in Type=oneshot RemainAfterExit=yes 'ExecStartPre=/sbin/modprobe mpip' \
		'ExecStart=/usr/sbin/mpipctl -b /etc/mpip/mpip.conf' \
		'ExecReload=/usr/sbin/mpipctl rule flush' \
		'ExecReload=/usr/sbin/mpipctl -b /etc/mpip/mpip.conf' \
		'ExecStop=/usr/sbin/mpipctl disable' 'WantedBy=multi-user.target'; do
		grep -qxF -- "$line" "$TMP/svc/$unit" || fail "$unit lacks $line" || return 1
	done
	dpkg-deb -e "$CTL_DEB" "$TMP/ctlctrl" || fail "dpkg-deb -e failed" || return 1
	grep -qxF /etc/mpip/mpip.conf "$TMP/ctlctrl/conffiles" 2>/dev/null ||
		fail "conffiles: $(cat "$TMP/ctlctrl/conffiles" 2>&1)" || return 1
	# --no-enable: enabled only if it was before (an upgrade); --no-start
	grep -qF "deb-systemd-helper debian-installed 'mpip.service'" "$TMP/ctlctrl/postinst" ||
		fail "postinst may enable mpip.service: $(cat "$TMP/ctlctrl/postinst")" || return 1
	! grep -q 'deb-systemd-invoke' "$TMP/ctlctrl/"*inst "$TMP/ctlctrl/"*rm 2>/dev/null ||
		fail "a maintainer script starts or stops mpip.service: $(grep -l deb-systemd-invoke "$TMP/ctlctrl/"*)"
}

# systemd-analyze verify on the packaged unit.  mpipctl is not installed
# here, so its path in the unit is that of the unpacked package; man
# mpipctl(8) (Documentation=) is looked up in the unpacked package too.
t_unit_verify() {
	local unit out rc
	unit=$(unit_path) || return 1
	[ -f "$TMP/svc/$unit" ] || fail "t_ctl_service did not unpack $unit" || return 1
	mkdir -p "$TMP/verify" &&
		sed "s|/usr/sbin/mpipctl|$TMP/svc/usr/sbin/mpipctl|g" "$TMP/svc/$unit" \
			>"$TMP/verify/mpip.service" || fail "cannot copy $unit" || return 1
	if command -v man >/dev/null; then
		out=$(MANPATH=$TMP/svc/usr/share/man systemd-analyze verify "$TMP/verify/mpip.service" 2>&1)
	else
		out=$(systemd-analyze verify --man=no "$TMP/verify/mpip.service" 2>&1)
	fi
	rc=$?
	# unknown keys and the like are warnings, exit status 0
	if ((rc != 0)) || [ -n "$out" ]; then
		fail "systemd-analyze verify (exit $rc): $out"
		return 1
	fi
}

t_ctl_binary() {
	local v
	mkdir -p "$TMP/ctl" && dpkg-deb -x "$CTL_DEB" "$TMP/ctl" ||
		fail "dpkg-deb -x failed" || return 1
	v=$("$TMP/ctl/usr/sbin/mpipctl" -V 2>&1)
	[[ $v == "mpipctl $VERSION "* ]] || fail "mpipctl -V: $v" || return 1
	# hardening=+all: PIE and BIND_NOW
	readelf -h "$TMP/ctl/usr/sbin/mpipctl" | grep -q 'Type:.*DYN' ||
		fail "mpipctl is no PIE" || return 1
	readelf -d "$TMP/ctl/usr/sbin/mpipctl" | grep -q 'BIND_NOW' ||
		fail "mpipctl is not linked with -z now" || return 1
	cmp -s "$TMP/ctl/usr/share/bash-completion/completions/mpipctl" \
		"$ROOT/userspace/completion/mpipctl" ||
		fail "the packaged completion is not userspace/completion/mpipctl" || return 1
	zcat "$TMP/ctl/usr/share/man/man8/mpipctl.8.gz" | cmp -s - "$ROOT/Documentation/mpipctl.8" ||
		fail "the packaged man page is not Documentation/mpipctl.8"
}

t_ctl_control() {
	local f
	f=$(dpkg-deb -f "$CTL_DEB" Architecture Depends)
	grep -qx "Architecture: $ARCH" <<<"$f" || fail "control: $f" || return 1
	grep -q '^Depends: .*libnl-genl-3' <<<"$f" || fail "control: $f"
}

# A debian/changelog that says another version stops the build.
t_version_mismatch() {
	local tree=$TMP/mismatch/mpip-$VERSION
	mkdir -p "$tree" && cp -R "$OUT/src/mpip-$VERSION/." "$tree/" ||
		fail "cannot copy the tree" || return 1
	sed -i "1s/($VERSION)/($VERSION.1)/" "$tree/debian/changelog"
	if (cd "$tree" && dpkg-buildpackage -b -us -uc) >"$TMP/mismatch.log" 2>&1; then
		fail "built with changelog version $VERSION.1"
		return 1
	fi
	grep -q "debian/changelog says $VERSION.1, kernel/mpip.h $VERSION" "$TMP/mismatch.log" ||
		fail "no word of the mismatch: $(tail -n 5 "$TMP/mismatch.log")"
}

# The kernels to build for: DKMS_KERNEL, else every one with headers.
if [ -n "${DKMS_KERNEL:-}" ]; then
	KVERS=$DKMS_KERNEL
else
	KVERS=$(find /lib/modules -mindepth 2 -maxdepth 2 -name build 2>/dev/null |
		sort -V | cut -d/ -f4)
fi

# t_dkms_build KVER: DKMS builds the sources of mpip-dkms, unpacked in
# $TMP, in $TMP/dkms, for KVER.
t_dkms_build() {
	local had_key=false ko KVER=$1
	command -v dkms >/dev/null || fail "dkms is missing (tools/deps.sh installs it)" || return 1
	[ -f /var/lib/dkms/mok.key ] && had_key=true
	if [ ! -d "$TMP/src/usr/src" ]; then
		mkdir -p "$TMP/src" "$TMP/dkms" && dpkg-deb -x "$DKMS_DEB" "$TMP/src" ||
			fail "dpkg-deb -x failed" || return 1
	fi
	dkms build -m mpip -v "$VERSION" -k "$KVER" --sourcetree "$TMP/src/usr/src" \
		--dkmstree "$TMP/dkms" >"$TMP/dkms.log" 2>&1
	local rc=$?
	if ! $had_key && [ -f /var/lib/dkms/mok.key ]; then
		rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	fi
	((rc == 0)) || fail "dkms build: $(tail -n 15 "$TMP/dkms.log")" || return 1
	ko=$TMP/dkms/mpip/$VERSION/$KVER/$(uname -m)/module/mpip.ko
	[ -f "$ko" ] || ko=$ko.xz
	[ -f "$ko" ] || fail "no mpip.ko: $(find "$TMP/dkms" -name '*.ko*')" || return 1
	[ "$(modinfo -F version "$ko")" = "$VERSION" ] ||
		fail "modinfo $ko: version $(modinfo -F version "$ko")" || return 1
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$KVER" ] ||
		fail "modinfo $ko: vermagic $(modinfo -F vermagic "$ko")"
}

echo "KTAP version 1"
PLAN=$((12 + $(wc -w <<<"$KVERS")))
[ -n "$KVERS" ] || PLAN=13
echo "1..$PLAN"
check "dpkg-buildpackage, debhelper, dh_dkms and lintian are there" t_tools
check "make deb builds mpip-dkms and mpipctl, no warnings" t_build
check "lintian: no errors or warnings" t_lintian
check "mpip-dkms: every module source under /usr/src/mpip-$VERSION, no objects" t_dkms_files
check "mpip-dkms: dkms.conf with version $VERSION" t_dkms_conf
check "mpip-dkms: all, depends on dkms, postinst/prerm register it" t_dkms_control
check "mpipctl: binary, man page, bash completion, mpip.service, mpip.conf" t_ctl_files
check "mpipctl: runs, version $VERSION, hardened, same man page and completion" t_ctl_binary
check "mpipctl: $ARCH, depends on libnl" t_ctl_control
check "mpipctl: mpip.service and conffile /etc/mpip/mpip.conf, not enabled or started" t_ctl_service
if command -v systemd-analyze >/dev/null; then
	check "mpip.service passes systemd-analyze verify" t_unit_verify
else
	n=$((n + 1))
	echo "ok $n mpip.service passes systemd-analyze verify # SKIP systemd-analyze is not installed"
	skipped=$((skipped + 1))
fi
check "a debian/changelog version other than MPIP_VERSION fails the build" t_version_mismatch
if [ -n "$KVERS" ]; then
	for k in $KVERS; do
		check "the packaged sources build with DKMS for $k" t_dkms_build "$k"
	done
else
	n=$((n + 1))
	echo "ok $n the packaged sources build with DKMS # SKIP no kernel headers in /lib/modules/*/build"
	skipped=$((skipped + 1))
fi

ktap_end packaging
