// Suffix arrays in slices: the prefix doubling of sa.cuh in bounded memory, about 13 bytes a
// base (the text, the suffix array, the ranks, two bitmaps and slice buffers of a fixed size),
// where sa.cuh's construction takes about 62. The state between steps is the suffix array itself,
// the ranks, and two bitmaps over its rows: done (the row's suffix is in place) and head (the row
// starts a group). A group is a run of rows from a head to the next; its suffixes share their
// first h bytes and their rank is the group's first row.
//
// Start: the suffixes are taken in parts by their first q codes (bins; a part is a run of bins, so
// its rows are a known run of the suffix array), each part sorted by its 64-bit key (sa.cuh's
// first key), its groups found (sa_init_flags), its ranks set (sa_headidx) and its rows written
// (sp_finish). A round then takes the rows not done in slices cut at group heads, sorts each
// slice's groups by rank[i+h] (sa_large_keys: the group's ordinal above the rank key), splits them
// (sa_flags, sa_headidx) and writes the rows back (sp_finish). Ranks updated by one slice are read
// by the next in the same round: they only ever refine a group into subgroups that start at or
// after its first row, so the order they give stays that of the suffixes (Larsson and Sadakane's
// argument), and every group is sorted on at least 2h bytes after the round.

#define SP_T 256
#define SP_ROWS (SP_T * 32) // rows a tile of the bitmaps' kernels: a 32-bit word a thread

// sp_bin returns the bin of suffix i: its first q codes of b bits (codes past the end are 0).
__device__ __forceinline__ u32 sp_bin(const u8 *__restrict__ text, u32 n, const u8 *code, u32 b, u32 q, u64 i) {
	u32 bin = 0;
	for (u32 k = 0; k < q; k++) bin = (bin << b) | (i + k < n ? code[text[i + k]] : 0);
	return bin;
}

// sp_prefix_hist counts the suffixes of text by their first q codes (b bits each; codes past the
// end are 0), the top q*b bits of sa.cuh's first key.
extern "C" __global__ void sp_prefix_hist(const u8 *__restrict__ text, u32 n, const u8 *__restrict__ codes, u32 b, u32 q,
                                          u32 *__restrict__ hist) {
	__shared__ u8 code[256];
	code[threadIdx.x] = codes[threadIdx.x];
	__syncthreads();
	u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&hist[sp_bin(text, n, code, b, q, i)], 1);
}

// sp_key returns sa.cuh's first key of suffix i: c codes of b bits from the top of 64 bits.
__device__ __forceinline__ u64 sp_key(const u8 *__restrict__ text, u32 n, const u8 *code, u32 b, u32 c, u64 i) {
	u64 key = 0;
	for (u32 k = 0; k < c; k++) key = (key << b) | (i + k < n ? code[text[i + k]] : 0);
	return key << (64 - b * c);
}

#define SPP_I 8 // positions a thread of the part kernels
#define SPP_TILE (SP_T * SPP_I)

// sp_part_select returns the bits k of the thread's SPP_I positions from base whose suffix's bin
// lies in [lo, hi).
__device__ __forceinline__ u32 sp_part_select(const u8 *__restrict__ text, u32 n, const u8 *code, u32 b, u32 q, u32 lo, u32 hi, u64 base) {
	u32 sel = 0;
	for (int k = 0; k < SPP_I; k++) {
		u64 i = base + k;
		if (i >= n) break;
		u32 bin = sp_bin(text, n, code, b, q, i);
		if (bin >= lo && bin < hi) sel |= 1u << k;
	}
	return sel;
}

// sp_part_count counts, per tile of SPP_TILE positions, the suffixes whose first q codes (their
// bin) lie in [lo, hi).
extern "C" __global__ void __launch_bounds__(SP_T) sp_part_count(const u8 *__restrict__ text, u32 n, const u8 *__restrict__ codes, u32 b,
                                                                 u32 q, u32 lo, u32 hi, u32 *__restrict__ cnt) {
	typedef cub::BlockReduce<u32, SP_T> R;
	__shared__ typename R::TempStorage tmp;
	__shared__ u8 code[256];
	code[threadIdx.x] = codes[threadIdx.x];
	__syncthreads();
	u64 base = (u64)blockIdx.x * SPP_TILE + (u64)threadIdx.x * SPP_I;
	u32 c = R(tmp).Sum(__popc(sp_part_select(text, n, code, b, q, lo, hi, base)));
	if (threadIdx.x == 0) cnt[blockIdx.x] = c;
}

// sp_part_keys writes the key and position of every suffix of the part (bin in [lo, hi)), in
// decreasing position order (as init_keys: with a stable sort, a suffix shorter than its key comes
// before an equal longer one): the suffix of rank r among the part's, by position, goes to slot
// m-1-r. off holds sp_part_count's exclusive scan.
extern "C" __global__ void __launch_bounds__(SP_T) sp_part_keys(const u8 *__restrict__ text, u32 n, const u8 *__restrict__ codes, u32 b,
                                                                u32 q, u32 c, u32 lo, u32 hi, const u32 *__restrict__ off, u32 m,
                                                                u64 *__restrict__ keys, u32 *__restrict__ vals) {
	typedef cub::BlockScan<u32, SP_T> S;
	__shared__ typename S::TempStorage tmp;
	__shared__ u8 code[256];
	code[threadIdx.x] = codes[threadIdx.x];
	__syncthreads();
	u64 base = (u64)blockIdx.x * SPP_TILE + (u64)threadIdx.x * SPP_I;
	u32 sel = sp_part_select(text, n, code, b, q, lo, hi, base), ex;
	S(tmp).ExclusiveSum((u32)__popc(sel), ex);
	u32 r = off[blockIdx.x] + ex;
	for (int k = 0; k < SPP_I; k++) {
		if (sel >> k & 1) {
			u64 i = base + k;
			keys[m - 1 - r] = sp_key(text, n, code, b, c, i);
			vals[m - 1 - r] = (u32)i;
			r++;
		}
	}
}

// sp_iota writes off+e to rows[e]: the suffix array rows of a sorted part.
extern "C" __global__ void sp_iota(u32 *__restrict__ rows, u32 m, u32 off) {
	u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (e < m) rows[e] = off + (u32)e;
}

// sp_finish writes a sorted slice back: each member's suffix to its row, the head bit of the rows
// that start a group (sa_flags's or sa_init_flags's head), the done bit of the rows whose group
// has one member (grpLen, at the group's first member, from sa_headidx).
extern "C" __global__ void sp_finish(u32 m, const u8 *__restrict__ head, const u32 *__restrict__ headIdx, const u32 *__restrict__ grpLen,
                                     const u32 *__restrict__ sa, const u32 *__restrict__ rows, u32 *__restrict__ SA,
                                     u32 *__restrict__ done, u32 *__restrict__ headb) {
	u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= m) return;
	u32 row = rows[e] & GPOS_MASK;
	SA[row] = sa[e];
	u32 bit = 1u << (row & 31);
	if (head[e]) atomicOr(&headb[row >> 5], bit);
	if (grpLen[headIdx[e]] == 1) atomicOr(&done[row >> 5], bit);
}

// sp_word returns the bits of word w of rows [r0, r1) not done, and those of them that are heads.
__device__ __forceinline__ u32 sp_word(const u32 *__restrict__ done, const u32 *__restrict__ headb, u64 w, u32 r0, u32 r1, u32 *heads) {
	u64 lo = w * 32;
	if (lo + 32 <= r0 || lo >= r1) {
		*heads = 0;
		return 0;
	}
	u32 mask = ~0u;
	if (lo < r0) mask &= ~0u << (r0 - lo);
	if (lo + 32 > r1) mask &= (u32)((1ull << (r1 - lo)) - 1);
	u32 act = ~done[w] & mask;
	*heads = headb[w] & act;
	return act;
}

// sp_tile_stats counts, per tile of SP_ROWS rows (from tile t0 on), the rows of [r0, r1) not done
// and the heads among them, and finds the tile's first head row of [r0, r1), done or not (a place
// where a slice may end: no group spans it); ~0 where there is none.
extern "C" __global__ void __launch_bounds__(SP_T) sp_tile_stats(const u32 *__restrict__ done, const u32 *__restrict__ headb, u32 r0,
                                                                 u32 r1, u32 t0, u32 *__restrict__ cntA, u32 *__restrict__ cntH,
                                                                 u32 *__restrict__ first) {
	typedef cub::BlockReduce<u32, SP_T> R;
	__shared__ typename R::TempStorage tmp;
	u64 w = (u64)(t0 + blockIdx.x) * SP_T + threadIdx.x;
	u32 h, a = sp_word(done, headb, w, r0, r1, &h);
	u32 f = ~0u;
	if (w * 32 < r1 && w * 32 + 32 > r0) {
		u32 any = headb[w];
		u64 lo = w * 32;
		if (lo < r0) any &= ~0u << (r0 - lo);
		if (lo + 32 > r1) any &= (u32)((1ull << (r1 - lo)) - 1);
		if (any) f = (u32)lo + __ffs(any) - 1;
	}
	u32 ca = R(tmp).Sum(__popc(a));
	__syncthreads();
	u32 ch = R(tmp).Sum(__popc(h));
	__syncthreads();
	f = R(tmp).Reduce(f, MinOp());
	if (threadIdx.x == 0) {
		cntA[blockIdx.x] = ca;
		cntH[blockIdx.x] = ch;
		first[blockIdx.x] = f;
	}
}

// sp_gather compacts the rows of [r0, r1) not done (tiles from t0; offA and offH the exclusive
// scans of sp_tile_stats's counts): each member's suffix into sa, its row into rows (HEAD_FLAG on
// a group's first member) and its group's ordinal within the slice into ord.
extern "C" __global__ void __launch_bounds__(SP_T) sp_gather(const u32 *__restrict__ done, const u32 *__restrict__ headb, u32 r0, u32 r1,
                                                             u32 t0, const u32 *__restrict__ offA, const u32 *__restrict__ offH,
                                                             const u32 *__restrict__ SA, u32 *__restrict__ sa, u32 *__restrict__ rows,
                                                             u32 *__restrict__ ord) {
	typedef cub::BlockScan<u64, SP_T> S;
	__shared__ typename S::TempStorage tmp;
	u64 w = (u64)(t0 + blockIdx.x) * SP_T + threadIdx.x;
	u32 h, a = sp_word(done, headb, w, r0, r1, &h);
	u64 v = (u64)__popc(a) << 32 | __popc(h), ex;
	S(tmp).ExclusiveSum(v, ex);
	u32 o = offA[blockIdx.x] + (u32)(ex >> 32);
	u32 g = offH[blockIdx.x] + (u32)ex; // heads before this word's
	while (a) {
		int k = __ffs(a) - 1;
		a &= a - 1;
		u32 row = (u32)(w * 32) + k;
		bool isHead = h >> k & 1;
		g += isHead;
		sa[o] = SA[row];
		rows[o] = row | (isHead ? HEAD_FLAG : 0);
		ord[o] = g - 1;
		o++;
	}
}
