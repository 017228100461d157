/* divsufsort_bench: times libdivsufsort's divsufsort() on one file, the peer column of
 * tools/sabench. Compiled at bench time by sabench.sh; not part of the sapipe binary.
 * Usage: divsufsort_bench FILE REPS [SAOUT]
 * Prints "seconds peak_rss_kb" for the best of REPS runs; with SAOUT, writes the suffix array
 * there as little-endian int32 so the script can check that sapipe's agrees. */
#include <divsufsort.h>
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
	if (argc < 3) {
		fprintf(stderr, "usage: divsufsort_bench FILE REPS [SAOUT]\n");
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
	unsigned char *t = malloc(n > 0 ? n : 1);
	int *sa = malloc(n > 0 ? n * sizeof(int) : 1);
	if (!t || !sa || fread(t, 1, n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", argv[1]);
		return 1;
	}
	fclose(f);
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
	if (argc > 3) {
		FILE *o = fopen(argv[3], "wb");
		if (!o || fwrite(sa, sizeof(int), n, o) != (size_t)n || fclose(o) != 0) {
			perror(argv[3]);
			return 1;
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.6f %ld\n", best, ru.ru_maxrss);
	return 0;
}
