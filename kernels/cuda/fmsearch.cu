// FM-index backward search of pattern batches, for sapipe count and locate: kernels/cpu's Searcher
// (fmsearch.go, fmsearch_kmer.go and occ.go's Rank) step for step, one thread per pattern, so that
// each pattern's interval is exactly the one the CPU computes. Host side: fmsearch.go.
//
// A pattern's search starts from the k-mer table's rows for its last K symbols (or from all rows
// when there is no table or the pattern is shorter), steps back one symbol at a time through the
// rank structure, and once one row is left compares the rest of the pattern with the text before
// that row's suffix. The outcome is (lo, hi, shift, row): the occurrences start at sa[r] - shift for
// r in [lo, hi); (0, 0, 0, 0) when the pattern does not occur. row is sa[lo] where the search ended
// on one row with a shift (read here anyway), so that the host need not read it; else 0. Without
// a suffix array (sa null: counting only, the text and suffix array not on the device) every
// search steps back to the pattern's start: the same number of rows, with no shift.

#include <stdint.h>

#include "occ.cuh"

#define FM_CODE_NONE 1
#define FM_FIRST 2

// fm_search: pattern t is codes[ends[t-1] .. ends[t]) (ends[-1] = 0); its outcome goes to
// out[4t .. 4t+3]. n is the text length (rows 0..n), sigma the codes in use, k the k-mer length
// (0: no table).
extern "C" __global__ void fm_search(const uint8_t *text, const int32_t *sa, const uint64_t *occ,
                                     const int32_t *kmers, const uint32_t *cstart, uint32_t n,
                                     uint32_t sigma, uint32_t stride, uint32_t counts, uint32_t planes,
                                     uint32_t k, const uint8_t *codes, const uint32_t *ends,
                                     uint32_t npat, int32_t *out) {
	uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= npat) return;
	uint32_t start = t ? ends[t - 1] : 0;
	uint32_t len = ends[t] - start;
	const uint8_t *pat = codes + start;
	int32_t *o = out + 4 * (uint64_t)t;
	o[0] = 0, o[1] = 0, o[2] = 0, o[3] = 0;
	if (len == 0) return;
	uint32_t i = len, lo = 0, hi = n + 1;
	if (k > 0 && len >= k) {
		uint32_t base = sigma - FM_FIRST, code = 0;
		for (uint32_t j = len - k; j < len; j++) {
			uint32_t x = pat[j];
			if (x < FM_FIRST || x - FM_FIRST >= base) return;
			code = code * base + (x - FM_FIRST);
		}
		i = len - k;
		lo = (uint32_t)__ldg(kmers + 2 * (uint64_t)code);
		hi = (uint32_t)__ldg(kmers + 2 * (uint64_t)code + 1);
		if (lo >= hi) return;
		if (i == 0) {
			o[0] = (int32_t)lo, o[1] = (int32_t)hi;
			return;
		}
	}
	for (;;) {
		if (hi - lo == 1 && sa) {
			// One suffix left: the rest of the pattern against the text before it.
			uint32_t s = (uint32_t)__ldg(sa + lo);
			if (s < i) return;
			const uint8_t *w = text + (s - i);
			for (uint32_t j = 0; j < i; j++) {
				uint8_t c = pat[j];
				if (c == FM_CODE_NONE || __ldg(w + j) != c) return;
			}
			o[0] = (int32_t)lo, o[1] = (int32_t)(lo + 1), o[2] = (int32_t)i, o[3] = (int32_t)s;
			return;
		}
		i--;
		uint32_t x = pat[i];
		if (x < FM_FIRST || x >= sigma) return;
		uint32_t c0 = __ldg(cstart + x);
		uint32_t nlo = c0 + occ_rank(occ, stride, counts, planes, x, lo);
		uint32_t nhi = c0 + occ_rank(occ, stride, counts, planes, x, hi);
		if (nlo >= nhi) return;
		if (i == 0) {
			o[0] = (int32_t)nlo, o[1] = (int32_t)nhi;
			return;
		}
		lo = nlo, hi = nhi;
	}
}
