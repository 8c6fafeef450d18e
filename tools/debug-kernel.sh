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
#   --tests LIST     only these selftest files (comma-separated, e.g.
#                    test_netlink,test_paths); default all
#   -j N             build jobs (default 2; $MPIP_DEBUGK_JOBS)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mpip
VENV=${MPIP_VENV:-$CACHE/venv}
FRAG=$REPO/tools/debug.config
# Debian packages needed only for this (not for `make check`)
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
ensure_pkgs() {
	local missing=() p
	for p in "${DEBUGK_PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	log "installing ${missing[*]}"
	local sudo=()
	((EUID == 0)) || sudo=(sudo -n)
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y update >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
		-o DPkg::Lock::Timeout=600 install --no-install-recommends "${missing[@]}" >&2
}

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
		sed 's/^/  /' <<<"$missing" >&2
		echo "$missing" >"$dir/config-missing.txt"
	fi
	(
		cd "$dir/linux"
		nice -n 19 make -j"$jobs" all
		rm -rf "$dir/mods"
		nice -n 19 make -s INSTALL_MOD_PATH="$dir/mods" modules_install
	) >>"$dir/build.log" 2>&1 || { tail -n 40 "$dir/build.log" >&2; die "build failed (see $dir/build.log)"; }
	t1=$(date +%s)
	echo "$((t1 - t0))" >"$dir/build-seconds"
	make -s -C "$dir/linux" kernelrelease >"$dir/kernelrelease"
	touch "$dir/.done"
	log "built in $(((t1 - t0) / 60)) min: $dir"
	echo "$dir"
}

main() {
	local cmd=check
	while (($#)); do
		case $1 in
		--summary) SUMMARY=${2:?}; shift 2 ;;
		--console-log) CONSOLE_LOG=${2:?}; shift 2 ;;
		--timeout) TEST_TIMEOUT=${2:?}; shift 2 ;;
		--vm-timeout) VM_TIMEOUT=${2:?}; shift 2 ;;
		--tests) TESTS=${2:?}; shift 2 ;;
		-j) MPIP_DEBUGK_JOBS=${2:?}; shift 2 ;;
		-h | --help) usage 0 ;;
		build | module | tree | check | scan) cmd=$1; shift; break ;;
		*) echo "debug-kernel: unknown argument '$1'" >&2; usage ;;
		esac
	done
	case $cmd in
	build) build_kernel ;;
	*) die "not yet" ;;
	esac
}

main "$@"
