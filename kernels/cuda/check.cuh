// Checks of an index file's page on the device (check.go): the structural checks of
// kernels/cpu's LoadPage (page_store.go), run on the arrays as copied to the card, so that a GPU
// run need not read them on the host as well. Each kernel only finds whether something is wrong:
// bad[k] ends at the least index where check k failed (all ones when it passed); the host then
// runs LoadPage's own checks for the error's words. Nothing here trusts the arrays: every index it
// follows is bounded first.

#define CK_SA 0       // a suffix array row out of range
#define CK_SIDE 1     // a side-table entry out of order, not escaped, or out of range
#define CK_BLOCK 2    // an LCP block whose least value is not min1's
#define CK_MIN2 3     // a min2 entry that is not the least of its min1 entries
#define CK_OCC_SYM 4  // a rank block holding a symbol >= sigma
#define CK_OCC_CNT 5  // a rank block whose stored counts are not those of the planes before it
#define CK_ESCAPES 6  // (a count) escaped LCP rows
#define CK_ENDS 7     // (a count) end-of-text symbols in the rank structure

// ck_text_hist counts the codes of a window of the text (at any byte offset) into hist[256].
extern "C" __global__ void __launch_bounds__(256) ck_text_hist(const u8 *__restrict__ w, u32 n, u32 *__restrict__ hist) {
	__shared__ u32 h[256];
	h[threadIdx.x] = 0;
	__syncthreads();
	u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&h[w[i]], 1);
	__syncthreads();
	if (h[threadIdx.x]) atomicAdd(&hist[threadIdx.x], h[threadIdx.x]);
}

// ck_sa: every row 1..n of sa is below n.
extern "C" __global__ void ck_sa(const u32 *__restrict__ sa, u32 n, unsigned long long *__restrict__ bad) {
	u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 i = 1 + (u64)blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += stride)
		if (sa[i] >= n) atomicMin(&bad[CK_SA], (unsigned long long)i);
}

// ck_lcp_side: side-table entry i's row is in range, after the previous one's, escaped in small,
// and its value lies in [MT_LCP_ESCAPE, n].
extern "C" __global__ void ck_lcp_side(const int *__restrict__ bigRow, const int *__restrict__ bigVal, u32 nBig, const u8 *__restrict__ small,
                                       u32 rows, u32 n, unsigned long long *__restrict__ bad) {
	u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nBig) return;
	int r = bigRow[i], v = bigVal[i];
	bool ok = r >= 0 && (u32)r < rows && (i == 0 || r > bigRow[i - 1]) && small[r] == MT_LCP_ESCAPE && v >= MT_LCP_ESCAPE && (u32)v <= n;
	if (!ok) atomicMin(&bad[CK_SIDE], (unsigned long long)i);
}

// ck_lcp_blocks: a thread per 64-row block b: its escapes are counted, and its least value (a byte,
// or where all are escapes the least side-table value of its rows, found by binary search: the
// table's order is checked by ck_lcp_side, and the search stays within it regardless) is min1[b].
extern "C" __global__ void ck_lcp_blocks(const u8 *__restrict__ small, u32 rows, const int *__restrict__ min1, const int *__restrict__ bigRow,
                                         const int *__restrict__ bigVal, u32 nBig, unsigned long long *__restrict__ bad) {
	u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	u64 lo = b * 64;
	u32 esc = 0;
	if (lo < rows) {
		u32 hi = (u32)min((u64)rows, lo + 64);
		u32 m = MT_LCP_ESCAPE;
		for (u32 k = (u32)lo; k < hi; k++) {
			u32 v = small[k];
			m = min(m, v);
			esc += v == MT_LCP_ESCAPE;
		}
		int want = min1[b];
		if (m < MT_LCP_ESCAPE || want < MT_LCP_ESCAPE) {
			if ((int)m != want) atomicMin(&bad[CK_BLOCK], (unsigned long long)b);
		} else {
			u32 a = 0, z = nBig; // first entry with row >= lo
			while (a < z) {
				u32 mid = (a + z) / 2;
				if ((u64)(long long)bigRow[mid] < lo || bigRow[mid] < 0) a = mid + 1;
				else z = mid;
			}
			int least = -1;
			for (u32 i = a; i < nBig && bigRow[i] >= 0 && (u32)bigRow[i] < hi; i++)
				if (least < 0 || bigVal[i] < least) least = bigVal[i];
			if (least != want) atomicMin(&bad[CK_BLOCK], (unsigned long long)b);
		}
	}
	typedef cub::BlockReduce<u32, 256> R;
	__shared__ typename R::TempStorage tmp;
	esc = R(tmp).Sum(esc);
	if (threadIdx.x == 0 && esc) atomicAdd(&bad[CK_ESCAPES], (unsigned long long)esc);
}

// ck_min2: min2[s] is the least of min1[64s .. 64s+64).
extern "C" __global__ void ck_min2(const int *__restrict__ min1, u32 len1, const int *__restrict__ min2, u32 len2,
                                   unsigned long long *__restrict__ bad) {
	u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= len2) return;
	u64 lo = s * 64;
	u32 hi = (u32)min((u64)len1, lo + 64);
	int m = min1[lo];
	for (u32 k = (u32)lo + 1; k < hi; k++) m = min(m, min1[k]);
	if (m != min2[s]) atomicMin(&bad[CK_MIN2], (unsigned long long)s);
}

// ck_occ_syms: a CUDA block per rank block b of MT_OCC_BLOCK rows (rows in all): the symbol of each
// of its rows that exists, from the bit planes; how many of each matchable code < sigma into
// cnt[(c-MT_FIRST)*nb + b] (for the scan that ck_occ_counts compares with the stored counts), the
// end-of-text symbols into bad[CK_ENDS], and a symbol >= sigma into bad[CK_OCC_SYM].
extern "C" __global__ void __launch_bounds__(MT_OCC_BLOCK) ck_occ_syms(const u64 *__restrict__ occ, u32 rows, u32 nb, u32 sigma, u32 planes,
                                                                       u32 counts, u32 stride, u32 *__restrict__ cnt,
                                                                       unsigned long long *__restrict__ bad) {
	__shared__ u32 h[256];
	u32 b = blockIdx.x, t = threadIdx.x;
	for (u32 c = t; c < 256; c += MT_OCC_BLOCK) h[c] = 0;
	__syncthreads();
	u64 row = (u64)b * MT_OCC_BLOCK + t;
	if (row < rows) {
		const u64 *pl = occ + (u64)b * stride + counts;
		u32 sym = 0;
		for (u32 p = 0; p < planes; p++) sym |= (u32)(pl[2 * p + (t >> 6)] >> (t & 63) & 1) << p;
		atomicAdd(&h[sym], 1);
	}
	__syncthreads();
	for (u32 c = t; c < 256; c += MT_OCC_BLOCK) {
		u32 k = h[c];
		if (c >= MT_FIRST && c < sigma) cnt[(u64)(c - MT_FIRST) * nb + b] = k;
		else if (k && c >= sigma) atomicMin(&bad[CK_OCC_SYM], (unsigned long long)b);
		else if (k && c == 0) atomicAdd(&bad[CK_ENDS], (unsigned long long)k);
	}
}

// ck_occ_counts: each rank block's stored count of each matchable code is that of the planes before
// it (off: the exclusive scan of ck_occ_syms's counts, code after code, as pb_occ_counts reads it).
extern "C" __global__ void ck_occ_counts(const u64 *__restrict__ occ, const u32 *__restrict__ off, u32 nb, u32 sigma, u32 stride,
                                         unsigned long long *__restrict__ bad) {
	u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= nb) return;
	const u32 *words = (const u32 *)(occ + b * stride);
	for (u32 c = MT_FIRST; c < sigma; c++) {
		u64 base = (u64)(c - MT_FIRST) * nb;
		if (words[c - MT_FIRST] != off[base + b] - off[base]) {
			atomicMin(&bad[CK_OCC_CNT], b);
			return;
		}
	}
}

// pb_deep_small: the deep bits (LCP at least minLen) of a page loaded from an index file, from its
// one-byte LCP and, for escaped rows when minLen is over the escape value, its side table.
extern "C" __global__ void pb_deep_small(const u8 *__restrict__ small, u32 rows, u32 minLen, const int *__restrict__ bigRow,
                                         const int *__restrict__ bigVal, u32 nBig, u64 *__restrict__ deep) {
	u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	u64 lo = j * 64;
	if (lo >= rows) return;
	u32 hi = (u32)min((u64)rows, lo + 64);
	u64 bits = 0;
	for (u32 k = (u32)lo; k < hi; k++) {
		u32 v = small[k];
		bool d = v >= minLen;
		if (v == MT_LCP_ESCAPE && minLen > MT_LCP_ESCAPE) {
			u32 a = 0, z = nBig;
			while (a < z) {
				u32 mid = (a + z) / 2;
				if ((u32)bigRow[mid] < k) a = mid + 1;
				else z = mid;
			}
			d = a < nBig && (u32)bigVal[a] >= minLen;
		}
		if (d) bits |= 1ull << (k - lo);
	}
	deep[j] = bits;
}
