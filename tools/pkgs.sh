# shellcheck shell=bash
# tools/pkgs.sh - sourced by the tools that need Debian packages beyond
# tools/deps.sh's (the debug kernel's and the loaded runs' builds).
#
# pkgs_ensure WHO PKG...: install those of PKG... that are missing, with
# apt-get (as root, else through sudo -n), saying "WHO: installing ..."
# on stderr first.  Returns 0 when all are there, else apt-get's status.
pkgs_ensure() {
	local who=$1 missing=() p sudo=()
	shift
	for p; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -qx 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	printf '%s: installing %s\n' "$who" "${missing[*]}" >&2
	((EUID == 0)) || sudo=(sudo -n)
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y update >&2 &&
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
			-o DPkg::Lock::Timeout=600 install --no-install-recommends \
			"${missing[@]}" >&2
}
