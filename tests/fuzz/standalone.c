// SPDX-License-Identifier: GPL-2.0
/*
 * A driver for the fuzz targets where clang's libFuzzer is missing: runs
 * the files named on the command line through LLVMFuzzerTestOneInput(),
 * or, without any, random inputs for -t SECONDS (default 10).  Built with
 * gcc and ASan/UBSan; random inputs find less than libFuzzer's guided
 * ones, but every check of the target still runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LEN	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rand64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static int run_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t buf[MAX_LEN];
	unsigned long runs = 0, secs = 10;
	time_t end;
	int i;

	if (argc > 2 && !strcmp(argv[1], "-t")) {
		secs = strtoul(argv[2], NULL, 10);
	} else if (argc > 1) {
		for (i = 1; i < argc; i++)
			if (run_file(argv[i]))
				return 1;
		printf("standalone: %d inputs run\n", argc - 1);
		return 0;
	}
	end = time(NULL) + (time_t)secs;
	while (time(NULL) < end) {
		size_t n = rand64() % (MAX_LEN + 1), k;

		for (k = 0; k < n; k++)
			buf[k] = (uint8_t)(rand64() >> 56);
		LLVMFuzzerTestOneInput(buf, n);
		runs++;
	}
	printf("standalone: %lu random inputs in %lu s, no failure\n", runs,
	       secs);
	return 0;
}
