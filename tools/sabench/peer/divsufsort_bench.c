/* divsufsort_bench: times libdivsufsort's divsufsort() on one file, the peer column of
 * tools/sabench. Compiled at bench time by sabench.sh; not part of the sapipe binary.
 * Usage: divsufsort_bench FILE REPS [SAOUT]
 * Prints "seconds peak_rss_kb" for the best of REPS runs; with SAOUT, writes the suffix array
 * there as little-endian int32 so the script can check that sapipe's agrees. */
#include <divsufsort.h>

#include "bench.h"

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: divsufsort_bench FILE REPS [SAOUT]\n");
		return 2;
	}
	long n;
	int32_t *sa;
	unsigned char *t = read_input(argv[1], &n, &sa);
	int reps = atoi(argv[2]);
	double best = 1e300;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		if (divsufsort(t, sa, n) != 0) {
			fprintf(stderr, "divsufsort failed\n");
			return 1;
		}
		double dt = now() - t0;
		if (dt < best) best = dt;
	}
	return report(best, sa, n, argc > 3 ? argv[3] : NULL);
}
