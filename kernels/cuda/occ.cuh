// The BWT rank structure on the device, shared by the matcher (match.cuh) and the pattern search
// (fmsearch.cu): kernels/cpu's Occ (occ.go), read the same way. Rows come in blocks of 128; a block
// is `stride` 64-bit words: the counts of codes 2..sigma-1 before the block, two to a word
// (`counts` words), then `planes` bit planes of the block's symbols, two words (rows 0-63, 64-127)
// a plane.

#ifndef SAPIPE_OCC_CUH
#define SAPIPE_OCC_CUH

#include <stdint.h>

#define OCC_FIRST 2      // the first code counted (0 and 1 are the sentinel and no-match codes)
#define OCC_BLOCK_ROWS 128

// occ_rank_in: the rows before offset off of the block at blk whose BWT symbol is c, plus the
// count word w of c's counts (the block's word (c-OCC_FIRST)/2, read by the caller).
__device__ __forceinline__ uint32_t occ_rank_in(const uint64_t *blk, uint64_t w, uint32_t counts, uint32_t planes,
                                                uint32_t c, uint32_t off) {
	uint32_t r = (uint32_t)(w >> (32 * ((c - OCC_FIRST) & 1)));
	if (off == 0) return r;
	const uint64_t *pl = blk + counts;
	uint64_t lo = ~0ull, hi = ~0ull;
	for (uint32_t t = 0; t < planes; t++) {
		uint64_t a = __ldg(pl + 2 * t), b = __ldg(pl + 2 * t + 1);
		if (!((c >> t) & 1)) {
			a = ~a;
			b = ~b;
		}
		lo &= a;
		hi &= b;
	}
	if (off < 64) return r + __popcll(lo & ((1ull << off) - 1));
	return r + __popcll(lo) + __popcll(hi & ((1ull << (off - 64)) - 1));
}

// occ_rank: the rows r < i whose BWT symbol is c (c >= OCC_FIRST).
__device__ __forceinline__ uint32_t occ_rank(const uint64_t *occ, uint32_t stride, uint32_t counts,
                                             uint32_t planes, uint32_t c, uint32_t i) {
	const uint64_t *blk = occ + (uint64_t)(i / OCC_BLOCK_ROWS) * stride;
	return occ_rank_in(blk, __ldg(blk + ((c - OCC_FIRST) >> 1)), counts, planes, c, i % OCC_BLOCK_ROWS);
}

#endif
