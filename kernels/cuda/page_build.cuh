// Building a page's index on the device from its suffix array: the arrays of kernels/cpu's Page
// (page.go, lcp.go, occ.go), value for value, in the layout match.cuh reads. Host side:
// match_build.go. The window w has n codes; the suffix array sa has n+1 rows, row 0 the empty
// suffix (sa[0] = n); the LCP array has n+2 rows (rows 0, 1 and n+1 are 0).

#define PB_OCC_WARPS (MT_OCC_BLOCK / 32)

// pb_phi: phi[sa[i]] = sa[i-1] for rows i = 2..n, phi[sa[1]] = -1 (PLCP's first step).
extern "C" __global__ void __launch_bounds__(256) pb_phi(const int *__restrict__ sa, u32 n, int *__restrict__ phi) {
	u32 i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
	if (i > n) return;
	phi[sa[i]] = i == 1 ? -1 : sa[i - 1];
}

// pb_plcp: the permuted LCP array in place of phi, a chunk of chunk positions a thread: the first
// position of a chunk compares from start (0, or a value already known to be matched), the others
// start one below their predecessor's value (Kärkkäinen, Manzini and Puglisi), so the values are
// exactly PLCP's. A chunk whose first value exceeds cap is left as it is, marked in failed, and sets
// *tooLong: a later launch with onlyFailed redoes those chunks alone from start = that cap, with a
// larger one (a repeat of more than cap bases), so that a few long repeats cost only their length.
extern "C" __global__ void __launch_bounds__(128) pb_plcp(const u8 *__restrict__ w, u32 n, int *__restrict__ phi, u32 chunk, u32 cap,
                                                          u32 start, u8 *__restrict__ failed, u32 onlyFailed,
                                                          u32 *__restrict__ tooLong) {
	u64 c = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	u64 p0 = c * chunk;
	if (p0 >= n) return;
	if (onlyFailed && !failed[c]) return;
	u32 p1 = (u32)min((u64)n, p0 + chunk);
	u32 l = start;
	for (u32 p = (u32)p0; p < p1; p++) {
		int q = phi[p];
		if (q < 0) {
			phi[p] = 0;
			l = 0;
			continue;
		}
		u32 limit = p == p0 ? cap : 0xffffffffu;
		// Eight symbols at a time while they are short of the limit and the text's end (a
		// repeat's long comparisons were most of the kernel's time), then one at a time.
		u32 far = max(p, (u32)q);
		while ((u64)l + 8 <= limit && (u64)far + l + 8 <= n) {
			u64 x = mt_load8(w + p + l) ^ mt_load8(w + q + l);
			if (x) {
				l += (__ffsll((long long)x) - 1) / 8; // the first symbol that differs
				break;
			}
			l += 8;
		}
		while (p + l < n && (u32)q + l < n && w[p + l] == w[q + l]) {
			if (l == limit) {
				failed[c] = 1;
				*tooLong = 1;
				return;
			}
			l++;
		}
		phi[p] = (int)l;
		l = l > 0 ? l - 1 : 0;
	}
	failed[c] = 0;
}

// pb_lcp_of: row k's LCP, plcp[sa[k]] for rows 2..n, 0 for rows 0, 1 and n+1.
__device__ __forceinline__ int pb_lcp_of(const int *__restrict__ sa, const int *__restrict__ plcp, u32 n, u64 k) {
	return (k <= 1 || k > n) ? 0 : plcp[sa[k]];
}

// pb_lcp_escapes counts, per 256 rows, the rows whose LCP needs the compact LCP's side table.
extern "C" __global__ void __launch_bounds__(256) pb_lcp_escapes(const int *__restrict__ sa, const int *__restrict__ plcp, u32 n,
                                                                 u32 *__restrict__ cnt) {
	typedef cub::BlockReduce<u32, 256> R;
	__shared__ typename R::TempStorage tmp;
	u64 k = (u64)blockIdx.x * 256 + threadIdx.x;
	u32 e = k < n + 2 && pb_lcp_of(sa, plcp, n, k) >= MT_LCP_ESCAPE;
	e = R(tmp).Sum(e);
	if (threadIdx.x == 0) cnt[blockIdx.x] = e;
}

// pb_lcp_rows writes, from the permuted LCP, 256 rows a block: the one-byte LCP, the side table's
// rows and values in row order (off: pb_lcp_escapes's exclusive scan), the least LCP of each 64 rows
// (min1), and the deep bits (LCP at least minLen). The LCP is never stored a word a row.
extern "C" __global__ void __launch_bounds__(256) pb_lcp_rows(const int *__restrict__ sa, const int *__restrict__ plcp, u32 n, u32 minLen,
                                                              const u32 *__restrict__ off, u8 *__restrict__ small, int *__restrict__ bigRow,
                                                              int *__restrict__ bigVal, int *__restrict__ min1, u64 *__restrict__ deep) {
	typedef cub::BlockScan<u32, 256> S;
	__shared__ typename S::TempStorage tmp;
	__shared__ int wmin[8];
	__shared__ u32 wdeep[8];
	u64 k = (u64)blockIdx.x * 256 + threadIdx.x;
	u64 rows = (u64)n + 2;
	bool in = k < rows;
	int v = in ? pb_lcp_of(sa, plcp, n, k) : 0x7fffffff;
	u32 esc = in && v >= MT_LCP_ESCAPE, ex;
	S(tmp).ExclusiveSum(esc, ex);
	if (in) {
		if (esc) {
			small[k] = MT_LCP_ESCAPE;
			bigRow[off[blockIdx.x] + ex] = (int)k;
			bigVal[off[blockIdx.x] + ex] = v;
		} else {
			small[k] = (u8)v;
		}
	}
	int m = v;
	for (int d = 16; d > 0; d >>= 1) m = min(m, __shfl_xor_sync(0xffffffffu, m, d));
	u32 bits = __ballot_sync(0xffffffffu, in && v >= (int)minLen);
	u32 warp = threadIdx.x >> 5;
	if ((threadIdx.x & 31) == 0) {
		wmin[warp] = m;
		wdeep[warp] = bits;
	}
	__syncthreads();
	if (threadIdx.x < 4) {
		u64 lo = (u64)blockIdx.x * 256 + threadIdx.x * 64; // the 64 rows of warps 2t and 2t+1
		if (lo < rows) {
			min1[lo / 64] = min(wmin[2 * threadIdx.x], wmin[2 * threadIdx.x + 1]);
			deep[lo / 64] = (u64)wdeep[2 * threadIdx.x] | (u64)wdeep[2 * threadIdx.x + 1] << 32;
		}
	}
}

// pb_block_min: out[b] = the least of in[64b .. 64b+64) (within len).
extern "C" __global__ void __launch_bounds__(256) pb_block_min(const int *__restrict__ in, u32 len, int *__restrict__ out) {
	u32 b = blockIdx.x * blockDim.x + threadIdx.x;
	u64 lo = (u64)b * 64;
	if (lo >= len) return;
	u32 hi = (u32)min((u64)len, lo + 64);
	int v = in[lo];
	for (u32 k = (u32)lo + 1; k < hi; k++) v = min(v, in[k]);
	out[b] = v;
}

// pb_big_start: bigStart[b] for b < nb (PageDev.bigStart): the first of the side table's nBig
// rows (ascending) at or past row b << MT_BIG_BUCKET, nBig where there is none; a search each.
extern "C" __global__ void __launch_bounds__(256) pb_big_start(const int *__restrict__ bigRow, u32 nBig, int *__restrict__ bigStart, u32 nb) {
	u32 b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= nb) return;
	u64 row = (u64)b << MT_BIG_BUCKET;
	u32 lo = 0, hi = nBig;
	while (lo < hi) {
		u32 m = (lo + hi) >> 1;
		if ((u64)(u32)bigRow[m] < row) lo = m + 1;
		else hi = m;
	}
	bigStart[b] = (int)lo;
}

// pb_bwt_sym: the BWT symbol of row i.
__device__ __forceinline__ u32 pb_bwt_sym(const int *sa, const u8 *w, u32 i) {
	int s = sa[i];
	return s == 0 ? 0 : w[s - 1];
}

// pb_occ_planes: a CUDA block per rank block of 128 rows: its bit planes (rows past the last are
// 0), and in cnt[(c-2)*nb + b] how many of its rows hold each matchable symbol c < sigma.
extern "C" __global__ void __launch_bounds__(MT_OCC_BLOCK) pb_occ_planes(const int *__restrict__ sa, const u8 *__restrict__ w, u32 rows,
                                                                         u32 nb, u32 sigma, u32 planes, u32 counts, u32 stride,
                                                                         u64 *__restrict__ occ, u32 *__restrict__ cnt) {
	__shared__ u32 h[256];
	u32 b = blockIdx.x, t = threadIdx.x;
	for (u32 c = t; c < 256; c += MT_OCC_BLOCK) h[c] = 0;
	__syncthreads();
	u32 i = b * MT_OCC_BLOCK + t;
	u32 sym = 0;
	if (i < rows) {
		sym = pb_bwt_sym(sa, w, i);
		atomicAdd(&h[sym], 1);
	}
	u32 *pl = (u32 *)(occ + (u64)b * stride + counts);
	u32 warp = t >> 5;
	for (u32 p = 0; p < planes; p++) {
		u32 bitsOf = __ballot_sync(0xffffffffu, (sym >> p) & 1);
		if ((t & 31) == 0) pl[2 * (2 * p + (warp >> 1)) + (warp & 1)] = bitsOf;
	}
	__syncthreads();
	for (u32 c = MT_FIRST + t; c < sigma; c += MT_OCC_BLOCK) cnt[(u64)(c - MT_FIRST) * nb + b] = h[c];
}

// pb_occ_counts: each rank block's counts of the matchable symbols before it, two to a word
// (off is the exclusive scan of cnt, symbol by symbol over the blocks).
extern "C" __global__ void __launch_bounds__(256) pb_occ_counts(const u32 *__restrict__ off, u32 nb, u32 sigma, u32 stride,
                                                                u64 *__restrict__ occ) {
	u32 b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= nb) return;
	u32 *words = (u32 *)(occ + (u64)b * stride);
	for (u32 c = MT_FIRST; c < sigma; c++) {
		u64 base = (u64)(c - MT_FIRST) * nb;
		words[c - MT_FIRST] = off[base + b] - off[base];
	}
}

// pb_copy_u32: dst[i] = src[i].
extern "C" __global__ void __launch_bounds__(256) pb_copy_u32(const u32 *__restrict__ src, u32 n, u32 *__restrict__ dst) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) dst[i] = src[i];
}

// pb_kmer: the table index of the k-mer that the suffix at s of the window starts with, -1 for a
// suffix shorter than k or one with a code below MT_FIRST in its first k (kernels/cpu's rowKmer).
__device__ __forceinline__ long long pb_kmer(const u8 *__restrict__ w, u32 n, u32 s, u32 k, u32 base) {
	if ((u64)s + k > n) return -1;
	long long code = 0;
	for (u32 i = 0; i < k; i++) {
		u32 x = w[s + i];
		if (x < MT_FIRST) return -1;
		code = code * base + (x - MT_FIRST);
	}
	return code;
}

// pb_kmers: the table of k-mers (kernels/cpu's KmerTable) from the suffix array's rows 0..n: the
// rows of one k-mer are a run, rows[2j] is its first row and rows[2j+1] one past its last. A k-mer
// that does not occur keeps 0, 0 (rows must be zero).
extern "C" __global__ void __launch_bounds__(256) pb_kmers(const int *__restrict__ sa, const u8 *__restrict__ w, u32 n, u32 k,
                                                           u32 base, int *__restrict__ rows) {
	u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (r > n) return;
	long long c = pb_kmer(w, n, (u32)sa[r], k, base);
	long long prev = r > 0 ? pb_kmer(w, n, (u32)sa[r - 1], k, base) : -1;
	if (c != prev) {
		if (c >= 0) rows[2 * c] = (int)r;
		if (prev >= 0) rows[2 * prev + 1] = (int)r;
	}
	if (r == n && c >= 0) rows[2 * c + 1] = (int)(n + 1);
}

// ---- a page's runs of one symbol (match.cuh, MT_RUN_RANGE), found on the device ----------------

// rl_mark: the symbols (codes from MT_FIRST) with a run of at least from in the window w[0, n):
// a thread for each position from-1 modulo from (a run that long holds one), which looks at most
// from symbols each way; mask bit x set.
extern "C" __global__ void __launch_bounds__(256) rl_mark(const u8 *__restrict__ w, u32 n, u32 from, u32 *__restrict__ mask) {
	u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x + 1) * from - 1;
	if (i >= n) return;
	u32 x = w[i];
	if (x < MT_FIRST || (__ldg(mask + (x >> 5)) >> (x & 31)) & 1) return;
	u32 a = (u32)i, b = (u32)i + 1;
	while (a > 0 && (u32)i - a < from && w[a - 1] == x) a--;
	while (b < n && b - a < from && w[b] == x) b++;
	if (b - a >= from) atomicOr(mask + (x >> 5), 1u << (x & 31));
}

// rl_list: the runs at least minLen long of the symbols in mask, each found by the thread of its
// first position that is minLen-1 modulo minLen: (window position, length, next code or
// MT_RUN_END at the window's end, code) into out while *count is under cap (counted past it).
extern "C" __global__ void __launch_bounds__(256) rl_list(const u8 *__restrict__ w, u32 n, u32 minLen, const u32 *__restrict__ mask,
                                                           uint4 *__restrict__ out, u32 cap, u32 *count) {
	u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x + 1) * minLen - 1;
	if (i >= n) return;
	u32 x = w[i];
	if (x < MT_FIRST || !((__ldg(mask + (x >> 5)) >> (x & 31)) & 1)) return;
	u32 a = (u32)i;
	while (a > 0 && w[a - 1] == x) {
		a--;
		if ((u32)i - a >= minLen) return; // the run holds an earlier such position
	}
	u32 b = (u32)i + 1;
	while (b < n && w[b] == x) b++;
	if (b - a < minLen) return;
	u32 k = atomicAdd(count, 1u);
	if (k < cap) out[k] = make_uint4(a, b - a, b < n ? (u32)w[b] : MT_RUN_END, x);
}
