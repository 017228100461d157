/* libsais_bench: times libsais's suffix array construction (32-bit, libsais_omp with the threads
 * given) on one file, a peer column of tools/sabench. sabench.sh compiles it at bench time with
 * libsais.c from a source tree fetched outside the repository; not part of the sapipe binary.
 * Usage: libsais_bench FILE THREADS REPS [SAOUT]
 * Prints "seconds peak_rss_kb" for the best of REPS runs; with SAOUT, writes the suffix array
 * there as little-endian int32 so the script can check that the others agree. */
#include <libsais.h>

#include "bench.h"

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: libsais_bench FILE THREADS REPS [SAOUT]\n");
		return 2;
	}
	long n;
	int32_t *sa;
	unsigned char *t = read_input(argv[1], &n, &sa);
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
	return report(best, sa, n, argc > 4 ? argv[4] : NULL);
}
