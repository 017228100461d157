// Device-wide LSD radix sort of (u64 key, u32 value) pairs, 8 bits a pass. A pass is three steps
// launched from Go: radix_hist counts each tile's digits (digit-major: counts[d*tiles+t]), a scan
// of the counts gives every (digit, tile) its first output slot, and radix_scatter sorts each tile
// by the digit in shared memory (stable) and writes it out, digit runs contiguous.

#define RS_T 256
#define RS_I 16
#define RS_TILE (RS_T * RS_I)

extern "C" __global__ void __launch_bounds__(RS_T) radix_hist(const u64 *__restrict__ keys, u32 n, u32 shift, u32 *__restrict__ counts, u32 tiles) {
	__shared__ u32 h[256];
	h[threadIdx.x] = 0;
	__syncthreads();
	u64 base = (u64)blockIdx.x * RS_TILE;
	u32 lane = threadIdx.x & 31;
#pragma unroll 4
	for (int i = 0; i < RS_I; i++) {
		u64 j = base + i * RS_T + threadIdx.x;
		u32 d = j < n ? (u32)(keys[j] >> shift) & 255 : 256;
		// Lanes with the same digit add once: keys often share their high digits.
		u32 peers = __match_any_sync(0xffffffffu, d);
		if (d < 256 && lane == (u32)(__ffs(peers) - 1)) atomicAdd(&h[d], __popc(peers));
	}
	__syncthreads();
	counts[(u64)threadIdx.x * tiles + blockIdx.x] = h[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(RS_T) radix_scatter(const u64 *__restrict__ kin, const u32 *__restrict__ vin, u32 n, u32 shift,
                                                                 const u32 *__restrict__ counts, const u32 *__restrict__ offs, u32 tiles,
                                                                 u64 *__restrict__ kout, u32 *__restrict__ vout) {
	typedef cub::BlockLoad<u64, RS_T, RS_I, cub::BLOCK_LOAD_WARP_TRANSPOSE> LK;
	typedef cub::BlockLoad<u32, RS_T, RS_I, cub::BLOCK_LOAD_WARP_TRANSPOSE> LV;
	typedef cub::BlockRadixSort<u64, RS_T, RS_I, u32> Sort;
	typedef cub::BlockScan<u32, RS_T> Scan;
	__shared__ union {
		typename LK::TempStorage lk;
		typename LV::TempStorage lv;
		typename Sort::TempStorage sort;
	} tmp;
	__shared__ typename Scan::TempStorage scan;
	__shared__ u32 start[256], goff[256];
	u32 t = threadIdx.x, tile = blockIdx.x;
	u64 base = (u64)tile * RS_TILE;
	int valid = (int)min((u64)RS_TILE, n - base);
	u32 c = counts[(u64)t * tiles + tile];
	goff[t] = offs[(u64)t * tiles + tile];
	u32 ex;
	Scan(scan).ExclusiveSum(c, ex);
	start[t] = ex;
	u64 k[RS_I];
	u32 v[RS_I];
	LK(tmp.lk).Load(kin + base, k, valid, ~0ull);
	__syncthreads();
	LV(tmp.lv).Load(vin + base, v, valid, 0u);
	__syncthreads();
	// Padding keys are all ones: they sort after every real key of digit 255 and are not written.
	Sort(tmp.sort).SortBlockedToStriped(k, v, (int)shift, (int)shift + 8);
#pragma unroll
	for (int i = 0; i < RS_I; i++) {
		int p = i * RS_T + t;
		if (p < valid) {
			u32 d = (u32)(k[i] >> shift) & 255;
			u32 dst = goff[d] + p - start[d];
			kout[dst] = k[i];
			vout[dst] = v[i];
		}
	}
}
