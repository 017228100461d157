/* libsais_bench: times libsais's suffix array construction (32-bit, libsais_omp with the threads
 * given) on one file, a peer column of tools/sabench. sabench.sh compiles it at bench time with
 * libsais.c from a source tree fetched outside the repository; not part of the sapipe binary.
 * Usage: libsais_bench FILE THREADS REPS [SAOUT]
 * Prints "seconds peak_rss_kb" for the best of REPS runs; with SAOUT, writes the suffix array
 * there as little-endian int32 so the script can check that the others agree. */
#include <libsais.h>
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

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: libsais_bench FILE THREADS REPS [SAOUT]\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n > 0x7fffffffL) {
		fprintf(stderr, "%s: over 2^31-1 bytes\n", argv[1]);
		return 1;
	}
	unsigned char *t = malloc(n > 0 ? n : 1);
	int32_t *sa = malloc(n > 0 ? n * sizeof(int32_t) : 1);
	if (!t || !sa || fread(t, 1, n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", argv[1]);
		return 1;
	}
	fclose(f);
	int threads = atoi(argv[2]);
	int reps = atoi(argv[3]);
	double best = 1e300;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		/* fs = 0: no extra space after the suffix array, as sapipe has none. */
		if (libsais_omp(t, sa, (int32_t)n, 0, NULL, threads) != 0) {
			fprintf(stderr, "libsais failed\n");
			return 1;
		}
		double dt = now() - t0;
		if (dt < best) best = dt;
	}
	if (argc > 4) {
		FILE *o = fopen(argv[4], "wb");
		if (!o || fwrite(sa, sizeof(int32_t), n, o) != (size_t)n || fclose(o) != 0) {
			perror(argv[4]);
			return 1;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.6f %ld\n", best, ru.ru_maxrss);
	return 0;
}
