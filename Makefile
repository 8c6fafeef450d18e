# mpip top-level Makefile.
#
#   make            build kernel/mpip.ko and userspace/mpipctl
#   make kmod KVER=V  the module for installed kernel V, in build/kmod/V
#   make check      install what is missing, run unit tests and VM selftests
#                   (all on 6.12, a set on 6.1; under 40 min)
#   make check-full  make check with all selftests on both kernels and
#                   the benchmarks' smoke run (over an hour)
#   make check-debug  selftests on a debug kernel (KASAN, lockdep, kmemleak...;
#                   built once, ~1 h); SUMMARY=FILE keeps the summary, TESTS=a,b
#   make check-packages  the Debian packages in a Debian 12 root booted with
#                   systemd: installed, mpip.conf applied at boot, kernel
#                   6.12 installed and booted (DKMS), purge; selftests
#                   against the module DKMS built (~20 min)
#   make check-stall  test_fastpath 3 times in a guest stopped 0.7 s every
#                   4 s (TESTS="a b" for others), ~10 min
#   make demo       boot the lab and show mpip at work
#   make bench      benchmarks vs. MPTCP in the lab VM (BENCH="--quick tcp")
#   make webrtc     WebRTC calls over the lab, off vs. mpip (WEBRTC="fail rate
#                   delay", WEBRTC_OUT=build/webrtc): summary and webrtc.png
#   make coord      two applications, all paths then coordinated rules (paper
#                   Fig. 8; COORD="--phase 30 --reps 3 off mpip",
#                   COORD_OUT=build/coord), ~8 min for one run of each
#   make profile    where the CPU time goes: perf in the lab VM (performance.rst)
#   make unit       host unit tests only (ASan/UBSan)
#   make fuzz       fuzz the core's network parsers (FUZZ_SECONDS=30 each)
#   make dkms-install  the module's sources to /usr/src/mpip-VERSION, built
#                   and installed by DKMS (DKMS_KERNEL=VERSION, as root)
#   make dkms-remove   undo dkms-install
#   make deb        Debian packages mpip-dkms and mpipctl in build/deb/
#   make clean

# Kernel to build against: the running kernel's headers if present, else the
# newest /lib/modules/*/build on this machine.
KDIR ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then \
		echo /lib/modules/$$(uname -r)/build; \
	else \
		ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1; \
	fi)

PWD := $(CURDIR)

.PHONY: all module kmod mpipctl unit fuzz check check-full check-debug check-stall check-packages debug-kernel demo bench webrtc coord profile deps clean help
.PHONY: dkms-source dkms-install dkms-remove deb

all: module mpipctl

module:
	@if [ -z "$(KDIR)" ]; then \
		echo "mpip: no kernel headers found; install linux-headers-$$(uname -r) or set KDIR" >&2; \
		exit 1; \
	fi
	$(MAKE) -C $(KDIR) M=$(PWD) modules

# The module for another installed kernel, KVER (a /lib/modules/KVER/build
# must exist), built from a copy of its sources in build/kmod/KVER, so that
# kernel/ keeps the build for KDIR: build/kmod/KVER/kernel/mpip.ko
kmod:
	@test -n "$(KVER)" -a -d /lib/modules/$(KVER)/build || { \
		echo "mpip: kmod needs KVER=VERSION with /lib/modules/VERSION/build" >&2; \
		exit 1; \
	}
	rm -rf $(CURDIR)/build/kmod/$(KVER)
	$(MAKE) --no-print-directory dkms-source DESTDIR=$(CURDIR)/build/kmod/$(KVER) DKMS_SRC=
	$(MAKE) -C /lib/modules/$(KVER)/build M=$(CURDIR)/build/kmod/$(KVER) modules

mpipctl:
	$(MAKE) -C userspace

unit:
	$(MAKE) -C tests/unit run

fuzz:
	$(MAKE) -C tests/fuzz run $(if $(FUZZ_SECONDS),FUZZ_SECONDS=$(FUZZ_SECONDS))

deps:
	tools/deps.sh

check:
	tools/check.sh

# make check with every selftest on every kernel and the bench smoke run
# (over an hour): before submitting a change to kernel/
check-full:
	tools/check.sh --full

# the debug kernel (Documentation/debug-kernel.rst)
check-debug:
	tools/debug-kernel.sh $(if $(SUMMARY),--summary $(SUMMARY)) \
		$(if $(TESTS),--tests $(TESTS)) check

debug-kernel:
	tools/debug-kernel.sh build

# the Debian packages installed in a Debian 12 root (tools/rootfs.sh),
# booted with systemd on 6.1, upgraded to 6.12 by its kernel packages,
# booted again and purged; selftests against the module DKMS built in it
# (tests/package_boot_test.sh), ~20 min
check-packages: deb
	tests/package_boot_test.sh build/deb

# selftests in a guest stopped for 0.7 s every 4 s (a loaded or suspended
# host): paths must not time out for time the host itself did not run
check-stall: module mpipctl
	tools/vm.sh --stall 4:700 -- tests/selftests/run.sh \
		$(or $(TESTS),fastpath fastpath fastpath)

demo:
	tools/demo.sh

bench:
	tools/bench.sh $(BENCH)

# WebRTC calls over the lab, with and without mpip (tools/webrtc/run.sh):
# results and webrtc.png in $(WEBRTC_OUT)
WEBRTC_OUT ?= build/webrtc
webrtc: module mpipctl
	tools/deps.sh
	mkdir -p $(WEBRTC_OUT)
	/usr/bin/python3 tools/webrtc/ladder.py $(WEBRTC_OUT)/ladder.pkl
	tools/vm.sh --timeout 3000 -- tools/webrtc/run.sh $(WEBRTC_OUT) $(WEBRTC)
	/usr/bin/python3 tools/webrtc/analyze.py $(WEBRTC_OUT) --plot

# Two competing applications, all paths then coordinated routing rules
# (tools/coord/run.sh): results and coord.png in $(COORD_OUT)
COORD_OUT ?= build/coord
coord: module mpipctl
	tools/deps.sh
	tools/vm.sh --timeout 5400 -- tools/coord/run.sh $(COORD_OUT) $(COORD)
	/usr/bin/python3 tools/coord/analyze.py $(COORD_OUT) --plot

profile:
	tools/deps.sh
	$(MAKE) all
	tools/vm.sh -- tools/bench/profile.sh

# The one version of mpip, also the DKMS and package version.
MPIP_VERSION := $(shell sed -n 's/^\#define[[:space:]]*MPIP_VERSION[[:space:]]*"\(.*\)".*/\1/p' kernel/mpip.h)
DKMS_SRC := /usr/src/mpip-$(MPIP_VERSION)
# The kernel DKMS builds for: as KDIR, the running kernel if its headers are
# there, else the newest kernel with headers.
DKMS_KERNEL ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then \
		uname -r; \
	else \
		ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1 | cut -d/ -f4; \
	fi)
# A tree that package mpip-dkms installed is left to dpkg.
DKMS_NOT_DPKG = @if command -v dpkg >/dev/null && dpkg -S $(DKMS_SRC) >/dev/null 2>&1; then \
		echo "mpip: $(DKMS_SRC) belongs to package mpip-dkms (apt purge mpip-dkms)" >&2; \
		exit 1; \
	fi
# What the module is built from (not the objects of an earlier build).
DKMS_FILES = Kbuild $(sort $(shell find kernel -name Kbuild -o -name '*.[ch]' ! -name '*.mod.c'))

# the module's sources, without dkms.conf, in $(DESTDIR)$(DKMS_SRC)
dkms-source:
	@test -n "$(MPIP_VERSION)" || { echo "mpip: no MPIP_VERSION in kernel/mpip.h" >&2; exit 1; }
	install -d $(DESTDIR)$(DKMS_SRC)
	cp --parents $(DKMS_FILES) $(DESTDIR)$(DKMS_SRC)/

dkms-install:
	@command -v dkms >/dev/null || { echo "mpip: dkms is not installed (apt-get install dkms)" >&2; exit 1; }
	@test -n "$(DKMS_KERNEL)" || { echo "mpip: no kernel headers found; set DKMS_KERNEL" >&2; exit 1; }
	$(DKMS_NOT_DPKG)
	@if [ -n "$$(dkms status -m mpip -v $(MPIP_VERSION))" ]; then \
		echo "dkms remove -m mpip -v $(MPIP_VERSION) --all"; \
		dkms remove -m mpip -v $(MPIP_VERSION) --all; \
	fi
	rm -rf $(DKMS_SRC)
	$(MAKE) --no-print-directory dkms-source DESTDIR=
	sed 's/#MODULE_VERSION#/$(MPIP_VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf
	dkms add -m mpip -v $(MPIP_VERSION)
	dkms build -m mpip -v $(MPIP_VERSION) -k $(DKMS_KERNEL)
	dkms install -m mpip -v $(MPIP_VERSION) -k $(DKMS_KERNEL)

dkms-remove:
	$(DKMS_NOT_DPKG)
	@if command -v dkms >/dev/null && [ -n "$$(dkms status -m mpip -v $(MPIP_VERSION))" ]; then \
		echo "dkms remove -m mpip -v $(MPIP_VERSION) --all"; \
		dkms remove -m mpip -v $(MPIP_VERSION) --all; \
	fi
	rm -rf $(DKMS_SRC)

# Debian packages, built by dpkg-buildpackage in a copy of the tree that
# has only what they are made of.
DEB_OUT := build/deb
DEB_TREE := $(DEB_OUT)/src/mpip-$(MPIP_VERSION)
DEB_FILES = Makefile dkms.conf Documentation/mpipctl.8 $(DKMS_FILES) \
	$(sort $(shell find userspace -name Makefile -o -name '*.[ch]' -o -path 'userspace/completion/*' -type f)) \
	$(sort $(shell find debian -path debian/source -prune -o -maxdepth 1 -type f ! -name files ! -name '*.substvars' ! -name '*.log' ! -name '*debhelper*' -print)) \
	$(wildcard debian/source/*)

deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null || { \
		echo "mpip: make deb needs dpkg-dev, debhelper and dh-dkms (tools/deps.sh installs them)" >&2; \
		exit 1; }
	rm -rf $(DEB_OUT)
	mkdir -p $(DEB_TREE)
	cp --parents $(DEB_FILES) $(DEB_TREE)/
	cd $(DEB_TREE) && dpkg-buildpackage -b -us -uc
	mv $(DEB_OUT)/src/*.deb $(DEB_OUT)/src/*.changes $(DEB_OUT)/src/*.buildinfo $(DEB_OUT)/
	@ls -1 $(DEB_OUT)/*.deb

clean:
	-$(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/fuzz clean

help:
	@sed -n '3,/^$$/{/^#/p;}' Makefile
