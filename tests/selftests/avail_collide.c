// SPDX-License-Identifier: GPL-2.0
/*
 * avail_collide - keys that would all fall into one bucket of mpip's
 * availability table if its hash had a known seed.
 *
 *	avail_collide ADDR PORT SEED BITS N FIRST LAST
 *
 * Prints up to N lines "ADDR PORT": remote endpoints with an address from
 * FIRST to LAST (IPv4, inclusive) and a port of 1024..65535 whose bucket,
 * with hash seed SEED and 2^BITS buckets, is the one of ADDR:PORT.  The
 * table's hash is the kernel's jhash_2words() of the address and the port
 * as they lie in memory (network byte order, read as host-order words);
 * before review M2 its seed was 0.  test_spoof.sh sends queries from
 * these endpoints to a host whose seed is random, and checks that the
 * chains stay short.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t rol32(uint32_t x, unsigned int k)
{
	return (x << k) | (x >> (32 - k));
}

/* The kernel's jhash_2words(a, b, seed) (include/linux/jhash.h). */
static uint32_t hash2(uint32_t a, uint32_t b, uint32_t seed)
{
	uint32_t c = seed + 0xdeadbeefU + (2 << 2);

	a += c;
	b += c;
	c ^= b; c -= rol32(b, 14);
	a ^= c; a -= rol32(c, 11);
	b ^= a; b -= rol32(a, 25);
	c ^= b; c -= rol32(b, 16);
	a ^= c; a -= rol32(c, 4);
	b ^= a; b -= rol32(a, 14);
	c ^= b; c -= rol32(b, 24);
	return c;
}

static uint32_t bucket(struct in_addr addr, unsigned int port, uint32_t seed,
		       uint32_t mask)
{
	return hash2(addr.s_addr, htons(port), seed) & mask;
}

static int parse_addr(const char *s, struct in_addr *a)
{
	if (inet_pton(AF_INET, s, a) != 1) {
		fprintf(stderr, "avail_collide: not an IPv4 address: %s\n", s);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct in_addr target, first, last, a;
	unsigned long port, bits, n, found = 0;
	uint32_t seed, mask, want, h, h_end;

	if (argc != 8) {
		fprintf(stderr, "usage: avail_collide ADDR PORT SEED BITS N FIRST LAST\n");
		return 2;
	}
	if (parse_addr(argv[1], &target) || parse_addr(argv[6], &first) ||
	    parse_addr(argv[7], &last))
		return 2;
	port = strtoul(argv[2], NULL, 0);
	seed = strtoul(argv[3], NULL, 0);
	bits = strtoul(argv[4], NULL, 0);
	n = strtoul(argv[5], NULL, 0);
	if (port > 65535 || bits < 1 || bits > 31) {
		fprintf(stderr, "avail_collide: bad PORT or BITS\n");
		return 2;
	}
	mask = (1U << bits) - 1;
	want = bucket(target, port, seed, mask);
	h_end = ntohl(last.s_addr);
	for (h = ntohl(first.s_addr); h <= h_end && found < n; h++) {
		a.s_addr = htonl(h);
		for (port = 1024; port <= 65535 && found < n; port++) {
			if (bucket(a, port, seed, mask) != want)
				continue;
			printf("%s %lu\n", inet_ntoa(a), port);
			found++;
		}
		if (h == UINT32_MAX)
			break;
	}
	return found == n ? 0 : 1;
}
