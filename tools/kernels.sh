#!/usr/bin/env bash
# tools/kernels.sh - the kernels mpip is tested on, one per line: the newest
# installed kernel of each Debian series it supports (Debian 12's 6.1, and
# 6.12 from bookworm-security) that has its headers and its image
# (tools/deps.sh installs both).  Exit status 1, with a message, if one is
# missing.  make check runs the selftests on each.
set -euo pipefail

SERIES=(6.1 6.12)

for series in "${SERIES[@]}"; do
	best=
	for d in /lib/modules/"$series".*-amd64/build; do
		v=${d#/lib/modules/}
		v=${v%/build}
		[[ -d $d && -f /boot/vmlinuz-$v ]] || continue
		best=$(printf '%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -n 1)
	done
	[[ -n $best ]] || { echo "kernels: no Debian $series kernel with headers (tools/deps.sh)" >&2; exit 1; }
	echo "$best"
done
