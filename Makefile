# mpip top-level Makefile.
#
#   make            build kernel/mpip.ko and userspace/mpipctl
#   make check      install what is missing, run unit tests and VM selftests
#   make check-debug  selftests on a debug kernel (KASAN, lockdep, kmemleak...;
#                   built once, ~1 h); SUMMARY=FILE keeps the summary, TESTS=a,b
#   make check-stall  test_fastpath 3 times in a guest stopped 0.7 s every
#                   4 s (TESTS="a b" for others), ~10 min
#   make demo       boot the lab and show mpip at work
#   make bench      benchmarks vs. MPTCP in the lab VM (BENCH="--quick tcp")
#   make profile    where the CPU time goes: perf in the lab VM (performance.rst)
#   make unit       host unit tests only (ASan/UBSan)
#   make fuzz       fuzz the core's network parsers (FUZZ_SECONDS=30 each)
#   make clean

# Kernel to build against: the running kernel's headers if present, else the
# newest /lib/modules/*/build on this machine.
KDIR ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then \
		echo /lib/modules/$$(uname -r)/build; \
	else \
		ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1; \
	fi)

PWD := $(CURDIR)

.PHONY: all module mpipctl unit fuzz check check-debug check-stall debug-kernel demo bench profile deps clean help

all: module mpipctl

module:
	@if [ -z "$(KDIR)" ]; then \
		echo "mpip: no kernel headers found; install linux-headers-$$(uname -r) or set KDIR" >&2; \
		exit 1; \
	fi
	$(MAKE) -C $(KDIR) M=$(PWD) modules

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

# the debug kernel (Documentation/debug-kernel.rst)
check-debug:
	tools/debug-kernel.sh $(if $(SUMMARY),--summary $(SUMMARY)) \
		$(if $(TESTS),--tests $(TESTS)) check

debug-kernel:
	tools/debug-kernel.sh build

# selftests in a guest stopped for 0.7 s every 4 s (a loaded or suspended
# host): paths must not time out for time the host itself did not run
check-stall: module mpipctl
	tools/vm.sh --stall 4:700 -- tests/selftests/run.sh \
		$(or $(TESTS),fastpath fastpath fastpath)

demo:
	tools/demo.sh

bench:
	tools/bench.sh $(BENCH)

profile:
	tools/deps.sh
	$(MAKE) all
	tools/vm.sh -- tools/bench/profile.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/fuzz clean

help:
	@sed -n '3,15p' Makefile
