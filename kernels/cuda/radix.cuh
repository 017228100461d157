// Device-wide LSD radix sort of (u64 key, u32 value) pairs, 8 bits a pass. A pass is three steps
// launched from Go: radix_hist counts each tile's digits (digit-major: counts[d*tiles+t]), a scan
// of the counts gives every (digit, tile) its first output slot, and radix_scatter sorts each tile
// by the digit in shared memory (stable) and writes it out, digit runs contiguous. The kernels come
// in tile sizes of 256 threads times 8, 12 or 16 items (the suffix _8, _12, _16).

#define RS_T 256

template <int ITEMS>
__device__ __forceinline__ void radix_hist(const u64 *__restrict__ keys, u32 n, u32 shift, u32 *__restrict__ counts, u32 tiles) {
	__shared__ u32 h[256];
	h[threadIdx.x] = 0;
	__syncthreads();
	u64 base = (u64)blockIdx.x * (RS_T * ITEMS);
	u32 lane = threadIdx.x & 31;
#pragma unroll 4
	for (int i = 0; i < ITEMS; i++) {
		u64 j = base + i * RS_T + threadIdx.x;
		u32 d = j < n ? (u32)(keys[j] >> shift) & 255 : 256;
		// A digit shared by the whole warp (common in high digits) is added once.
		if (__all_sync(0xffffffffu, d == __shfl_sync(0xffffffffu, d, 0)) && d < 256) {
			if (lane == 0) atomicAdd(&h[d], 32);
		} else if (d < 256) {
			atomicAdd(&h[d], 1);
		}
	}
	__syncthreads();
	counts[(u64)threadIdx.x * tiles + blockIdx.x] = h[threadIdx.x];
}

template <int ITEMS>
__device__ __forceinline__ void radix_scatter(const u64 *__restrict__ kin, const u32 *__restrict__ vin, u32 n, u32 shift,
                                              const u32 *__restrict__ counts, const u32 *__restrict__ offs, u32 tiles,
                                              u64 *__restrict__ kout, u32 *__restrict__ vout) {
	typedef cub::BlockLoad<u64, RS_T, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE> LK;
	typedef cub::BlockLoad<u32, RS_T, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE> LV;
	typedef cub::BlockRadixSort<u64, RS_T, ITEMS, u32> Sort;
	typedef cub::BlockScan<u32, RS_T> Scan;
	__shared__ union {
		typename LK::TempStorage lk;
		typename LV::TempStorage lv;
		typename Sort::TempStorage sort;
	} tmp;
	__shared__ typename Scan::TempStorage scan;
	__shared__ u32 start[256], goff[256];
	u32 t = threadIdx.x, tile = blockIdx.x;
	u64 base = (u64)tile * (RS_T * ITEMS);
	int valid = (int)min((u64)(RS_T * ITEMS), n - base);
	u32 c = counts[(u64)t * tiles + tile];
	goff[t] = offs[(u64)t * tiles + tile];
	u32 ex;
	Scan(scan).ExclusiveSum(c, ex);
	start[t] = ex;
	u64 k[ITEMS];
	u32 v[ITEMS];
	LK(tmp.lk).Load(kin + base, k, valid, ~0ull);
	__syncthreads();
	LV(tmp.lv).Load(vin + base, v, valid, 0u);
	__syncthreads();
	// Padding keys are all ones: they sort after every real key of digit 255 and are not written.
	Sort(tmp.sort).SortBlockedToStriped(k, v, (int)shift, (int)shift + 8);
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		int p = i * RS_T + t;
		if (p < valid) {
			u32 d = (u32)(k[i] >> shift) & 255;
			u32 dst = goff[d] + p - start[d];
			kout[dst] = k[i];
			vout[dst] = v[i];
		}
	}
}

#define RADIX_KERNELS(I)                                                                                                               \
	extern "C" __global__ void __launch_bounds__(RS_T) radix_hist_##I(const u64 *__restrict__ keys, u32 n, u32 shift,               \
	                                                                  u32 *__restrict__ counts, u32 tiles) {                        \
		radix_hist<I>(keys, n, shift, counts, tiles);                                                                                \
	}                                                                                                                                \
	extern "C" __global__ void __launch_bounds__(RS_T) radix_scatter_##I(                                                            \
	    const u64 *__restrict__ kin, const u32 *__restrict__ vin, u32 n, u32 shift, const u32 *__restrict__ counts,                  \
	    const u32 *__restrict__ offs, u32 tiles, u64 *__restrict__ kout, u32 *__restrict__ vout) {                                   \
		radix_scatter<I>(kin, vin, n, shift, counts, offs, tiles, kout, vout);                                                       \
	}

RADIX_KERNELS(8)
RADIX_KERNELS(12)
RADIX_KERNELS(16)

// One-pass-per-digit radix sort (after Adinets and Merrill's Onesweep). radix_hist_all reads the
// keys once and counts the digits of every pass; then each pass is one launch of radix_pass:
// a tile ranks its keys by digit with warp-level matching (stable: warp-striped loads), publishes
// its digit counts, and finds the counts of the tiles before it by decoupled look-back over a
// status array, so no scan launches and no second read of the keys are needed. Tiles take their
// number from a counter in launch order, so a tile only ever waits on tiles already running.
//
// A status word is epoch<<40 | flag<<32 | count, flag 1 for a tile's own count and 2 for the
// count of all tiles up to it; the epoch (the pass, from 1) makes stale words from earlier passes
// read as not ready, so the array is cleared once per sort.

#define OS_T 256
#define OS_WARPS (OS_T / 32)

template <typename K>
__device__ __forceinline__ void radix_hist_all(const K *__restrict__ keys, u32 n, u32 lo, u32 passes, u32 *__restrict__ hist) {
	__shared__ u32 h[8][256];
	for (int p = 0; p < 8; p++) h[p][threadIdx.x] = 0;
	__syncthreads();
	u32 lane = threadIdx.x & 31;
	u64 stride = (u64)gridDim.x * blockDim.x;
	u64 rounds = (n + stride - 1) / stride;
	for (u64 r = 0; r < rounds; r++) {
		u64 j = r * stride + (u64)blockIdx.x * blockDim.x + threadIdx.x;
		K k = j < n ? keys[j] : 0;
		u32 full = __ballot_sync(0xffffffffu, j < n) == 0xffffffffu;
		for (u32 p = 0; p < passes; p++) {
			u32 d = (u32)(k >> (lo + 8 * p)) & 255;
			// A digit shared by the whole warp (common in high digits) is added once;
			// otherwise each lane adds its own.
			if (full && __all_sync(0xffffffffu, d == __shfl_sync(0xffffffffu, d, 0))) {
				if (lane == 0) atomicAdd(&h[p][d], 32);
			} else if (j < n) {
				atomicAdd(&h[p][d], 1);
			}
		}
	}
	__syncthreads();
	for (u32 p = 0; p < passes; p++) {
		u32 c = h[p][threadIdx.x];
		if (c) atomicAdd(&hist[p * 256 + threadIdx.x], c);
	}
}

extern "C" __global__ void __launch_bounds__(256) radix_hist_all(const u64 *__restrict__ keys, u32 n, u32 lo, u32 passes,
                                                                 u32 *__restrict__ hist) {
	radix_hist_all<u64>(keys, n, lo, passes, hist);
}

extern "C" __global__ void __launch_bounds__(256) radix_hist_all32(const u32 *__restrict__ keys, u32 n, u32 lo, u32 passes,
                                                                   u32 *__restrict__ hist) {
	radix_hist_all<u32>(keys, n, lo, passes, hist);
}

template <int ITEMS, bool VALS, typename K>
__device__ __forceinline__ void radix_pass(const K *__restrict__ kin, const u32 *__restrict__ vin, u32 n, u32 shift,
                                           const u32 *__restrict__ digitStart, u64 *status, u32 *tileCounter, u32 epoch,
                                           K *__restrict__ kout, u32 *__restrict__ vout) {
	const int TILE = OS_T * ITEMS;
	__shared__ K sk[TILE];
	__shared__ u32 sv[VALS ? TILE : 1];
	__shared__ u32 whist[OS_WARPS][256];
	__shared__ u32 localStart[256];
	__shared__ u32 globalOff[256];
	__shared__ u32 tileId;
	typedef cub::BlockScan<u32, OS_T> Scan;
	__shared__ typename Scan::TempStorage scan;

	u32 t = threadIdx.x, w = t >> 5, lane = t & 31;
	if (t == 0) tileId = atomicAdd(tileCounter, 1);
	for (int i = 0; i < OS_WARPS; i++) whist[i][t] = 0;
	__syncthreads();
	u32 tile = tileId;
	u64 base = (u64)tile * TILE + (u64)w * 32 * ITEMS;

	K k[ITEMS];
	u32 v[ITEMS], d[ITEMS], rank[ITEMS];
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		u64 j = base + i * 32 + lane;
		k[i] = j < n ? kin[j] : 0;
		v[i] = VALS && j < n ? vin[j] : 0;
		d[i] = j < n ? (u32)(k[i] >> shift) & 255 : 256;
	}
	u32 lt = (1u << lane) - 1;
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		// The lanes holding the same digit, from eight ballots (cheaper than __match_any_sync);
		// lanes past the end (digit 256) are told apart by a ninth.
		u32 peers = 0xffffffffu;
#pragma unroll
		for (int bit = 0; bit < 9; bit++) {
			u32 b = __ballot_sync(0xffffffffu, (d[i] >> bit) & 1);
			peers &= (d[i] >> bit) & 1 ? b : ~b;
		}
		u32 leader = __ffs(peers) - 1;
		u32 old = 0;
		if (lane == leader && d[i] < 256) {
			old = whist[w][d[i]];
			whist[w][d[i]] = old + __popc(peers);
		}
		old = __shfl_sync(0xffffffffu, old, leader);
		rank[i] = old + __popc(peers & lt);
		__syncwarp();
	}
	__syncthreads();
	// Thread t owns digit t: the tile's count, the warps' offsets, and the look-back.
	u32 c = 0;
#pragma unroll
	for (int i = 0; i < OS_WARPS; i++) {
		u32 x = whist[i][t];
		whist[i][t] = c;
		c += x;
	}
	u64 *my = status + (u64)tile * 256 + t;
	u64 tag = (u64)epoch << 40;
	if (tile == 0) {
		atomicExch((unsigned long long *)my, tag | (2ull << 32) | c);
	} else {
		atomicExch((unsigned long long *)my, tag | (1ull << 32) | c);
	}
	u32 ex;
	Scan(scan).ExclusiveSum(c, ex);
	localStart[t] = ex;
	if (tile > 0) {
		u32 sum = 0;
		for (u32 pt = tile - 1;; pt--) {
			const volatile u64 *s = status + (u64)pt * 256 + t;
			u64 x;
			do {
				x = *s;
			} while ((x >> 40) != epoch);
			sum += (u32)x;
			if (((x >> 32) & 3) == 2) break;
		}
		atomicExch((unsigned long long *)my, tag | (2ull << 32) | (sum + c));
		globalOff[t] = digitStart[t] + sum;
	} else {
		globalOff[t] = digitStart[t];
	}
	__syncthreads();
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		if (d[i] < 256) {
			u32 p = localStart[d[i]] + whist[w][d[i]] + rank[i];
			sk[p] = k[i];
			if (VALS) sv[p] = v[i];
		}
	}
	__syncthreads();
	u32 valid = (u32)min((u64)TILE, n - (u64)tile * TILE);
#pragma unroll
	for (int i = 0; i < ITEMS; i++) {
		u32 p = i * OS_T + t;
		if (p < valid) {
			K key = sk[p];
			u32 dd = (u32)(key >> shift) & 255;
			u32 dst = globalOff[dd] + p - localStart[dd];
			kout[dst] = key;
			if (VALS) vout[dst] = sv[p];
		}
	}
}

#define ONESWEEP_KERNEL(NAME, I, VALS, K)                                                                                              \
	extern "C" __global__ void __launch_bounds__(OS_T) NAME(const K *__restrict__ kin, const u32 *__restrict__ vin, u32 n, u32 shift, \
	                                                        const u32 *__restrict__ digitStart, u64 *status, u32 *tileCounter,      \
	                                                        u32 epoch, K *__restrict__ kout, u32 *__restrict__ vout) {              \
		radix_pass<I, VALS, K>(kin, vin, n, shift, digitStart, status, tileCounter, epoch, kout, vout);                              \
	}

ONESWEEP_KERNEL(radix_pass_8, 8, true, u64)
ONESWEEP_KERNEL(radix_pass_12, 12, true, u64)
ONESWEEP_KERNEL(radix_pass_keys_8, 8, false, u64)
ONESWEEP_KERNEL(radix_pass_keys_12, 12, false, u64)
ONESWEEP_KERNEL(radix_pass32_8, 8, true, u32)
ONESWEEP_KERNEL(radix_pass32_12, 12, true, u32)
ONESWEEP_KERNEL(radix_pass32_16, 16, true, u32)
