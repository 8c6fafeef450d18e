#!/usr/bin/env bash
# tools/deps.sh - install everything mpip needs to build and test.
#
# Idempotent and non-interactive: when everything is already present it only
# runs a few dpkg-query checks and exits (well under a second).  Otherwise it
# runs `apt-get update` once, installs the missing Debian packages and
# creates a private Python venv with virtme-ng (used by tools/vm.sh).
#
# Environment:
#   MPIP_VENV   where the virtme-ng venv lives
#               (default: ${XDG_CACHE_HOME:-$HOME/.cache}/mpip/venv)
#   MPIP_DEPS_QUIET=1   print nothing but errors
set -euo pipefail

VNG_VERSION=1.42
VENV=${MPIP_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mpip/venv}

APT_PKGS=(
	# build: module, mpipctl, unit tests, sparse
	build-essential sparse pkg-config libnl-3-dev libnl-genl-3-dev
	# the kernel the module is built for and booted in the VM
	linux-image-amd64 linux-headers-amd64 kmod
	# VM: QEMU (TCG works without KVM), virtme-ng's needs: busybox for its
	# initramfs, udev in the guest, python3-venv for its venv
	qemu-system-x86 busybox-static udev python3-venv python3-pip
	# lab tools used inside the guest
	iproute2 iputils-ping iperf3 nftables tcpdump ethtool socat procps
	util-linux psmisc jq bc mptcpd
	python3 python3-scapy python3-matplotlib
	# lint
	shellcheck
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

# Fast path: nothing to do.
mapfile -t missing < <(missing_pkgs)
if ((${#missing[@]} == 0)) && vng_ok; then
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
log "all dependencies present"
