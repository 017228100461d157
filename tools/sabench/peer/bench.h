/* bench.h: what the peer drivers of tools/sabench share: reading the input, the clock, and the
 * report ("seconds peak_rss_kb", and the suffix array written out for the agreement check). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	/* SABENCH_CPU=1: process CPU time, steadier than wall time on a shared machine. */
	clock_gettime(getenv("SABENCH_CPU") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* read_input returns the bytes of path (*n of them, at most 2^31-1: the peers take 32-bit
 * lengths) and room for their suffix array in *sa; it exits on failure. */
static unsigned char *read_input(const char *path, long *n, int32_t **sa) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	*n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (*n > 0x7fffffffL) {
		fprintf(stderr, "%s: over 2^31-1 bytes\n", path);
		exit(1);
	}
	unsigned char *t = malloc(*n > 0 ? *n : 1);
	*sa = malloc(*n > 0 ? *n * sizeof(int32_t) : 1);
	if (!t || !*sa || fread(t, 1, *n, f) != (size_t)*n) {
		fprintf(stderr, "%s: cannot read\n", path);
		exit(1);
	}
	fclose(f);
	return t;
}

/* report writes the suffix array to saout (when not NULL) as little-endian int32 and prints the
 * best time and the peak RSS. */
static int report(double best, const int32_t *sa, long n, const char *saout) {
	if (saout) {
		FILE *o = fopen(saout, "wb");
		if (!o || fwrite(sa, sizeof(int32_t), n, o) != (size_t)n || fclose(o) != 0) {
			perror(saout);
			return 1;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.6f %ld\n", best, ru.ru_maxrss);
	return 0;
}
