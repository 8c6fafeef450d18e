// SPDX-License-Identifier: GPL-2.0
/*
 * tools/tcg-flags-probe.c - does CMPXCHG16B keep the flags it should?
 *
 * CMPXCHG16B sets ZF and leaves every other flag as the instruction
 * before it left them.  QEMU 7.2's TCG (Debian 12's qemu-system-x86)
 * computes the other flags from a stale record of which instruction set
 * them last, and can put any bit of an operand into RFLAGS, TF (0x100)
 * among them.  In the guest kernel, SLUB's per-CPU fast path runs
 * CMPXCHG16B on every allocation; an interrupt that arrives before the
 * next flag-setting instruction saves those flags and IRET restores
 * them, so the CPU single-steps (#DB) or the guest oopses with a
 * garbage EFLAGS.  tools/vm.sh therefore gives TCG guests a CPU without
 * CX16.
 *
 * Build and run, in a guest or on a real CPU:
 *   gcc -O2 -o build/tcg-flags-probe tools/tcg-flags-probe.c
 *   tools/vm.sh -- build/tcg-flags-probe
 * Prints the flags after the instruction and exits 1 when they are
 * wrong, 0 when they are right or the CPU has no CMPXCHG16B.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t slot[2] __attribute__((aligned(16)));

static int has_cx16(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
}

int main(void)
{
	uint64_t flags, x = 3, y = 0x100, lo = 0, hi = 0;

	if (!has_cx16()) {
		printf("no CMPXCHG16B on this CPU\n");
		return 0;
	}
	/*
	 * POPF ends QEMU's translation block with its flag record flushed;
	 * the ADD then leaves 0x100 in the record's operand, and the
	 * exchange succeeds (slot holds 0:0), setting ZF.  Right: the ADD's
	 * flags (0x103: PF) and ZF, with IF and bit 1: 0x246.
	 */
	asm volatile("pushq $0x202\n\t"
		     "popfq\n\t"
		     "addq %[y], %[x]\n\t"
		     "cmpxchg16b %[m]\n\t"
		     "pushfq\n\t"
		     "popq %[f]"
		     : [f] "=r"(flags), [x] "+r"(x), [m] "+m"(slot),
		       "+a"(lo), "+d"(hi)
		     : [y] "r"(y), "b"(1UL), "c"(0UL)
		     : "cc", "memory");
	printf("flags after CMPXCHG16B: %#llx (expected 0x246)\n",
	       (unsigned long long)flags);
	return flags == 0x246 ? 0 : 1;
}
