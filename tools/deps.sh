#!/usr/bin/env bash
# tools/deps.sh - install everything mpip needs to build and test.
#
# Idempotent and non-interactive: when everything is already present it only
# runs a few dpkg-query checks and exits (well under a second).  Otherwise it
# runs `apt-get update` once, installs the missing Debian packages and
# creates a private Python venv with virtme-ng (used by tools/vm.sh).
#
# Optional speed-up: when a Rust toolchain (cargo) is available, it also
# builds virtiofsd from crates.io into ~/.cache/mpip/virtiofsd (about 3 min,
# once).  With it the VM shares the host filesystem over virtio-fs instead of
# 9p, which makes guest boots and every exec in the guest about twice as
# fast under TCG.  Debian 12 has no Rust virtiofsd package and QEMU 7.2's C
# virtiofsd is not usable by virtme-ng.  If the build fails, tools/vm.sh just
# uses 9p; the failure is remembered and not retried (delete
# ~/.cache/mpip/virtiofsd to retry).
#
# Environment:
#   MPIP_VENV   where the virtme-ng venv lives
#               (default: ${XDG_CACHE_HOME:-$HOME/.cache}/mpip/venv)
#   MPIP_NO_VIRTIOFSD=1  do not build virtiofsd
#   MPIP_DEPS_QUIET=1    print nothing but errors
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VNG_VERSION=1.42
VIRTIOFSD_VERSION=1.14.0
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mpip
VENV=${MPIP_VENV:-$CACHE/venv}
VFSD=$CACHE/virtiofsd

APT_PKGS=(
	# build: module, mpipctl, unit tests, sparse
	build-essential sparse pkg-config libnl-3-dev libnl-genl-3-dev
	# the kernels the module is built for and booted in the VM: Debian 12's
	# default (6.1) and the 6.12 of bookworm-security (make check tests both)
	linux-image-amd64 linux-headers-amd64 kmod
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	# VM: QEMU (TCG works without KVM), virtme-ng's needs: busybox for its
	# initramfs, udev in the guest, python3-venv for its venv
	qemu-system-x86 busybox-static udev python3-venv python3-pip file xz-utils
	# to build virtiofsd with cargo (optional speed-up, see above)
	libcap-ng-dev libseccomp-dev
	# lab tools used inside the guest
	iproute2 iputils-ping iperf3 nftables tcpdump ethtool socat procps
	util-linux psmisc jq bc mptcpd mptcpize wireguard-tools
	python3-pyftpdlib
	python3 python3-scapy python3-matplotlib
	# WebRTC in the lab (make webrtc): ICE, DTLS, SRTP, VP8, Opus
	python3-aiortc
	# profiling inside the guest (tools/bench/profile.sh)
	linux-perf
	# lint
	shellcheck
	# make dkms-install/dkms-remove: the module built and installed by DKMS
	dkms
	# make deb (dpkg-buildpackage is in dpkg-dev, with build-essential) and
	# the lintian check of its packages (tests/packaging_test.sh)
	debhelper dh-dkms lintian
	# systemd-analyze verify of mpip.service (tests/packaging_test.sh)
	systemd
	# make check-packages: a Debian 12 root (tools/rootfs.sh) on a disk
	# image booted with systemd (tests/package_boot_test.sh)
	mmdebstrap e2fsprogs
	# the YAML netlink spec against its schema (tests/unit/test_nlspec.py)
	# and the kernel's ynl library and CLI (tools/net/ynl of linux-source
	# 6.12: test_nlspec.py and selftest test_ynl)
	python3-yaml python3-jsonschema linux-source-6.12
	# fuzzing (make fuzz): clang with libFuzzer
	clang libclang-rt-14-dev
)

log() {
	[[ ${MPIP_DEPS_QUIET:-0} == 1 ]] || printf 'deps: %s\n' "$*" >&2
}

# Print the packages of APT_PKGS that are not installed (one dpkg-query call).
missing_pkgs() {
	local -A have=()
	local name st p
	while IFS=' ' read -r name st; do
		[[ $st == "install ok installed" ]] && have[${name%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${Status}\n' "${APT_PKGS[@]}" 2>/dev/null || true)
	for p in "${APT_PKGS[@]}"; do
		[[ -n ${have[$p]:-} ]] || printf '%s\n' "$p"
	done
}

vng_ok() {
	local d
	[[ -x $VENV/bin/vng && -x $VENV/bin/virtme-run ]] || return 1
	for d in "$VENV"/lib/python3*/site-packages/virtme_ng-"$VNG_VERSION".dist-info; do
		[[ -d $d ]] && return 0
	done
	return 1
}

find_cargo() {
	if command -v cargo >/dev/null; then
		command -v cargo
	elif [[ -x $HOME/.cargo/bin/cargo ]]; then
		echo "$HOME/.cargo/bin/cargo"
	fi
}

# virtiofsd is fine if built, if its build failed before (not retried), or
# if it cannot or should not be built here.
vfsd_done() {
	[[ ${MPIP_NO_VIRTIOFSD:-0} == 1 ]] && return 0
	[[ -f $VFSD/.stamp-$VIRTIOFSD_VERSION ]] && return 0
	[[ -z $(find_cargo) ]]
}

# The kernel's ynl (tools/net/ynl of linux-source-6.12) unpacked in
# build/ynl, where the guests find it too (selftest test_ynl); the stamp is
# the package's version.
YNL_DIR=$REPO/build/ynl
ynl_stamp() { dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null; }
ynl_ok() {
	[[ -f $YNL_DIR/tools/net/ynl/cli.py && -f $YNL_DIR/.stamp &&
		$(cat "$YNL_DIR/.stamp") == "$(ynl_stamp)" ]]
}
ynl_unpack() {
	local v
	v=$(ynl_stamp)
	log "unpacking tools/net/ynl of linux-source-6.12 $v into $YNL_DIR"
	rm -rf "$YNL_DIR"
	mkdir -p "$YNL_DIR"
	tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$YNL_DIR" \
		--strip-components=1 --wildcards 'linux-source-6.12/tools/net/ynl/*'
	[[ -f $YNL_DIR/tools/net/ynl/cli.py ]] || {
		echo "deps: no tools/net/ynl/cli.py in linux-source-6.12" >&2
		return 1
	}
	echo "$v" >"$YNL_DIR/.stamp"
}

# Fast path: nothing to do.
mapfile -t missing < <(missing_pkgs)
if ((${#missing[@]} == 0)) && vng_ok && vfsd_done && ynl_ok; then
	exit 0
fi

SUDO=()
if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "deps: need root (or sudo)" >&2; exit 1; }
	SUDO=(sudo -n)
fi

# Serialise concurrent runs (several tools may call us at once).
mkdir -p "$(dirname "$VENV")"
exec 9>"$(dirname "$VENV")/deps.lock"
flock 9

apt_get() {
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a \
		apt-get -q -y -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}

mapfile -t missing < <(missing_pkgs)
if ((${#missing[@]})); then
	log "installing: ${missing[*]}"
	ok=0
	for _ in 1 2 3; do
		if apt_get update >&2 && apt_get install --no-install-recommends "${missing[@]}" >&2; then
			ok=1
			break
		fi
		log "apt-get failed, retrying in 10 s"
		sleep 10
	done
	((ok)) || { echo "deps: apt-get install failed" >&2; exit 1; }
	mapfile -t missing < <(missing_pkgs)
	if ((${#missing[@]})); then
		echo "deps: still missing after install: ${missing[*]}" >&2
		exit 1
	fi
fi

if ! vng_ok; then
	log "installing virtme-ng $VNG_VERSION into $VENV"
	# Debian's python is externally managed: use a private venv built from
	# the system interpreter (independent of any pyenv/conda in PATH).
	if [[ ! -x $VENV/bin/pip ]] || ! "$VENV/bin/python3" -c 'import sys' 2>/dev/null; then
		rm -rf "$VENV"
		/usr/bin/python3 -m venv "$VENV"
	fi
	ok=0
	for _ in 1 2 3; do
		if "$VENV/bin/pip" install -q --disable-pip-version-check \
			"virtme-ng==$VNG_VERSION" >&2; then
			ok=1
			break
		fi
		log "pip install failed, retrying in 10 s"
		sleep 10
	done
	if ! ((ok)) || ! vng_ok; then
		echo "deps: could not install virtme-ng" >&2
		exit 1
	fi
fi
if ! vfsd_done; then
	cargo=$(find_cargo)
	log "building virtiofsd $VIRTIOFSD_VERSION with $cargo (once, ~3 min)"
	rm -rf "$VFSD"
	mkdir -p "$VFSD"
	if PATH=$(dirname "$cargo"):$PATH "$cargo" install --quiet --locked \
		--root "$VFSD" "virtiofsd@$VIRTIOFSD_VERSION" >"$VFSD/build.log" 2>&1 &&
		"$VFSD/bin/virtiofsd" --version >/dev/null 2>&1; then
		echo ok >"$VFSD/.stamp-$VIRTIOFSD_VERSION"
	else
		log "virtiofsd build failed (see $VFSD/build.log); the VM will use 9p"
		rm -rf "${VFSD:?}/bin"
		echo failed >"$VFSD/.stamp-$VIRTIOFSD_VERSION"
	fi
fi
ynl_ok || ynl_unpack
log "all dependencies present"
