#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/rootfs.sh - a Debian 12 root filesystem to boot with systemd in a
# guest, as a tar archive, for tests/package_boot_test.sh (make
# check-packages); prints the archive's path.  It holds what a user's
# machine would have before installing mpip: systemd, udev, kmod,
# iproute2, DKMS with its compiler, Debian 12's default kernel (6.1) with
# its headers, and the libraries mpipctl needs.  The packages of the
# 6.12 kernel (linux-image-6.12-amd64, linux-headers-6.12-amd64 and what
# they pull in) are downloaded into /root/upgrade, to be installed in the
# guest, which has no network, as a user would upgrade.
#
# Built with mmdebstrap from the Debian archive (the only network use),
# once: the archive's name has a digest of this script, so a second call
# finds it and returns at once, and a change here builds a new one (older
# ones are removed).  Needs root (ownership and device nodes in the tree).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
DIR=$REPO/build/rootfs
OUT=$DIR/bookworm-$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12).tar
MIRROR=${MPIP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${MPIP_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}

PKGS=(
	systemd-sysv udev kmod iproute2 procps
	dkms make gcc libc6-dev
	linux-image-amd64 linux-headers-amd64 initramfs-tools
	libnl-3-200 libnl-genl-3-200 jq
)
UPGRADE=(linux-image-6.12-amd64 linux-headers-6.12-amd64)

if [[ -s $OUT ]]; then
	echo "$OUT"
	exit 0
fi
[[ $(id -u) == 0 ]] || { echo "rootfs: must run as root" >&2; exit 1; }
command -v mmdebstrap >/dev/null || {
	echo "rootfs: mmdebstrap missing (tools/deps.sh installs it)" >&2
	exit 1
}
mkdir -p "$DIR"

# In the new tree: the 6.12 packages that installing UPGRADE would add,
# downloaded, not installed; root's password empty (the console is the
# test's); the guest's hostname; no getty on the serial console (the test
# prints its results there).  $1: the tree, when mmdebstrap runs it.
# shellcheck disable=SC2016
hook='set -e
chroot "$1" sh -c "cd /root && mkdir upgrade && cd upgrade &&
	apt-get -s install '"${UPGRADE[*]}"' | sed -n \"s/^Inst \([^ ]*\) .*/\1/p\" |
	xargs apt-get download"
chroot "$1" passwd -d root
echo mpip-guest >"$1/etc/hostname"
ln -sf /dev/null "$1/etc/systemd/system/serial-getty@ttyS0.service"
'

mmdebstrap --variant=apt --mode=root --format=tar \
	--aptopt='APT::Install-Recommends "false"' \
	--include="$(IFS=,; echo "${PKGS[*]}")" \
	--customize-hook="$hook" \
	bookworm "$OUT.tmp" \
	"deb $MIRROR bookworm main" \
	"deb $MIRROR bookworm-updates main" \
	"deb $SECURITY bookworm-security main"
rm -f "$DIR"/bookworm-*.tar
mv "$OUT.tmp" "$OUT"
echo "$OUT"
