// Suffix arrays by prefix doubling (Manber-Myers as refined by Larsson and Sadakane; on the GPU
// after Wang, Baxter and Owens). Terms used below:
//
//   SA      the suffix array being built; rank[i] is the group of suffix i: the position in SA of
//           the first suffix of its group. Suffixes in one group share their first h bytes.
//   active  the suffixes of groups with two or more members, compacted into act_sa (their
//           positions) and act_gposf (their place in SA, bit 31 set on a group's first member).
//           Small groups (at most S members) come first, so many fit one shared-memory tile;
//           large ones follow, each with its ordinal among large groups (act_ord).
//
// Start: every suffix gets a 64-bit key packing its first characters (alphabet codes of b bits,
// b = 2 for DNA), and one radix sort orders them. A round then re-sorts each active group by
// rank[i+h], splits it where that key changes, updates ranks, writes finished suffixes into SA and
// compacts the rest; h doubles. Suffixes shorter than the packed prefix are groups of their own,
// ordered before equal longer keys (the keys are laid out in decreasing position order, and the
// sort is stable).

#define FL_T 256
// The flag, head, classify and scatter kernels walk tiles of FL_T*items members, items taken
// from the grid the host chose (fewer for small rounds, so that they spread over more SMs).
__device__ __forceinline__ u32 fl_items(u32 m) { return (u32)((m + (u64)FL_T * gridDim.x - 1) / ((u64)FL_T * gridDim.x)); }
#define HEAD_FLAG 0x80000000u
#define GPOS_MASK 0x7fffffffu

// byte_hist counts the bytes of text into hist[256]: 16 bytes a thread a step, into one shared
// histogram per warp.
extern "C" __global__ void __launch_bounds__(256) byte_hist(const u8 *__restrict__ text, u32 n, u32 *__restrict__ hist) {
	__shared__ u32 h[8][256];
	u32 *mine = h[threadIdx.x >> 5];
	for (int w = 0; w < 8; w++) h[w][threadIdx.x] = 0;
	__syncthreads();
	u64 stride = (u64)gridDim.x * blockDim.x * 16;
	for (u64 j = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 16; j < n; j += stride) {
		if (j + 16 <= n) {
			uint4 q = *(const uint4 *)(text + j);
			u32 w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
			for (int k = 0; k < 4; k++) {
#pragma unroll
				for (int b = 0; b < 4; b++) atomicAdd(&mine[(w[k] >> (8 * b)) & 255], 1);
			}
		} else {
			for (u64 k = j; k < n; k++) atomicAdd(&mine[text[k]], 1);
		}
	}
	__syncthreads();
	u32 c = 0;
	for (int w = 0; w < 8; w++) c += h[w][threadIdx.x];
	if (c) atomicAdd(&hist[threadIdx.x], c);
}

// init_keys: for each suffix i, the codes of text[i..i+c) packed b bits each from the top of a
// 64-bit key (codes past the end are 0), stored with value i at slot n-1-i. A block codes a
// window of the text into shared memory and each thread packs its keys from there, so that
// loads and stores are coalesced.
#define IK_T 256
#define IK_I 4
#define IK_TILE (IK_T * IK_I)
template <typename K>
__device__ __forceinline__ void init_keys(const u8 *__restrict__ text, u32 n, const u8 *__restrict__ codes, u32 b, u32 c,
                                          K *__restrict__ keys, u32 *__restrict__ vals) {
	__shared__ u8 code[256];
	__shared__ u8 win[IK_TILE + 64];
	code[threadIdx.x] = codes[threadIdx.x];
	__syncthreads();
	u64 i0 = (u64)blockIdx.x * IK_TILE;
	for (u32 k = threadIdx.x; k < IK_TILE + 64; k += IK_T) {
		u64 j = i0 + k;
		win[k] = j < n ? code[text[j]] : 0;
	}
	__syncthreads();
#pragma unroll
	for (int r = 0; r < IK_I; r++) {
		u32 p = r * IK_T + threadIdx.x;
		u64 i = i0 + p;
		if (i >= n) break;
		u64 key = 0;
		for (u32 k = 0; k < c; k++) key = (key << b) | win[p + k];
		key <<= 64 - b * c; // codes from the top; b*c is 57..64
		keys[n - 1 - i] = (K)(key >> (64 - 8 * sizeof(K)));
		vals[n - 1 - i] = (u32)i;
	}
}

extern "C" __global__ void __launch_bounds__(IK_T) init_keys(const u8 *__restrict__ text, u32 n, const u8 *__restrict__ codes, u32 b, u32 c,
                                                             u64 *__restrict__ keys, u32 *__restrict__ vals) {
	init_keys<u64>(text, n, codes, b, c, keys, vals);
}

// init_keys32 keeps the top 32 bits of each key (short first keys of DNA).
extern "C" __global__ void __launch_bounds__(IK_T) init_keys32(const u8 *__restrict__ text, u32 n, const u8 *__restrict__ codes, u32 b,
                                                               u32 c, u32 *__restrict__ keys, u32 *__restrict__ vals) {
	init_keys<u32>(text, n, codes, b, c, keys, vals);
}

// sa_init_flags marks group heads after the first sort of m of the n suffixes (all of them, or a
// part of sa_sliced.cuh): a key (its bits from shift up) differs from the previous one, or either
// suffix is shorter than tail bytes (each such suffix is alone).
// tileMax[t] is the largest head position of tile t.
template <typename K>
__device__ __forceinline__ void sa_init_flags(const K *__restrict__ keys, const u32 *__restrict__ sa, u32 m, u32 n, u32 shift, u32 tail,
                                              u8 *__restrict__ head, u32 *__restrict__ tileMax) {
	typedef cub::BlockReduce<u32, FL_T> R;
	__shared__ typename R::TempStorage tmp;
	u32 items = fl_items(m);
	u64 base = (u64)blockIdx.x * FL_T * items;
	u32 mx = 0;
	for (u32 i = 0; i < items; i++) {
		u64 j = base + i * FL_T + threadIdx.x;
		if (j < m) {
			bool h = j == 0;
			if (!h) {
				h = (keys[j] >> shift) != (keys[j - 1] >> shift) || n - sa[j] < tail || n - sa[j - 1] < tail;
			}
			head[j] = h;
			if (h) mx = max(mx, (u32)j);
		}
	}
	mx = R(tmp).Reduce(mx, MaxOp());
	if (threadIdx.x == 0) tileMax[blockIdx.x] = mx;
}

extern "C" __global__ void __launch_bounds__(FL_T) sa_init_flags(const u64 *__restrict__ keys, const u32 *__restrict__ sa, u32 m, u32 n, u32 shift,
                                                                 u32 tail, u8 *__restrict__ head, u32 *__restrict__ tileMax) {
	sa_init_flags<u64>(keys, sa, m, n, shift, tail, head, tileMax);
}

extern "C" __global__ void __launch_bounds__(FL_T) sa_init_flags32(const u32 *__restrict__ keys, const u32 *__restrict__ sa, u32 m, u32 n,
                                                                   u32 shift, u32 tail, u8 *__restrict__ head, u32 *__restrict__ tileMax) {
	sa_init_flags<u32>(keys, sa, m, n, shift, tail, head, tileMax);
}

// sa_flags marks group heads after a round's sort: a group's first member, or a key change.
extern "C" __global__ void __launch_bounds__(FL_T) sa_flags(const u32 *__restrict__ key, const u32 *__restrict__ gposf, u32 m,
                                                            u8 *__restrict__ head, u32 *__restrict__ tileMax) {
	typedef cub::BlockReduce<u32, FL_T> R;
	__shared__ typename R::TempStorage tmp;
	u32 items = fl_items(m);
	u64 base = (u64)blockIdx.x * FL_T * items;
	u32 mx = 0;
	for (u32 i = 0; i < items; i++) {
		u64 j = base + i * FL_T + threadIdx.x;
		if (j < m) {
			bool h = (gposf[j] & HEAD_FLAG) || key[j] != key[j - 1]; // position 0 always has HEAD_FLAG
			head[j] = h;
			if (h) mx = max(mx, (u32)j);
		}
	}
	mx = R(tmp).Reduce(mx, MaxOp());
	if (threadIdx.x == 0) tileMax[blockIdx.x] = mx;
}

__device__ __forceinline__ u32 gpos_of(const u32 *gposf, u32 j) { return gposf ? (gposf[j] & GPOS_MASK) : j; }

// sa_headidx finds each member's head (a running maximum of head positions, seeded with the
// tiles before), sets rank[sa[j]] to the head's place in SA, and records each group's size at its
// head. gposf null means the start, where active position j is SA position j. The tile is walked
// in block-wide steps so that every load and store but the rank scatter is coalesced. With pairs
// not null the rank updates are not made but listed there, (position << 32 | rank), for
// rank_scatter after a partition by position: random 4-byte stores over the whole rank array cost
// far more than a radix pass and stores that stay within a band of it.
extern "C" __global__ void __launch_bounds__(FL_T) sa_headidx(const u8 *__restrict__ head, u32 m, const u32 *__restrict__ tilePre,
                                                              const u32 *__restrict__ sa, const u32 *__restrict__ gposf,
                                                              u32 *__restrict__ headIdx, u32 *__restrict__ grpLen, u32 *__restrict__ rank,
                                                              u64 *__restrict__ pairs) {
	typedef cub::BlockScan<u32, FL_T> S;
	__shared__ typename S::TempStorage tmp;
	u32 items = fl_items(m);
	u64 base = (u64)blockIdx.x * FL_T * items;
	u32 run = tilePre[blockIdx.x];
	for (u32 i = 0; i < items; i++) {
		u64 j = base + i * FL_T + threadIdx.x;
		bool h = j < m && head[j];
		u32 v = h ? (u32)j : 0, hi, agg;
		S(tmp).InclusiveScan(v, hi, MaxOp(), agg);
		hi = max(hi, run);
		run = max(run, agg);
		if (j < m) {
			headIdx[j] = hi;
			if (pairs) {
				pairs[j] = (u64)sa[j] << 32 | gpos_of(gposf, hi);
			} else {
				rank[sa[j]] = gpos_of(gposf, hi);
			}
			if (j + 1 == m || head[j + 1]) grpLen[hi] = (u32)j - hi + 1;
		}
		__syncthreads();
	}
}

// rank_scatter applies the rank updates listed by sa_headidx, partitioned by position.
extern "C" __global__ void rank_scatter(const u64 *__restrict__ pairs, u32 m, u32 *__restrict__ rank) {
	u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= m) return;
	u64 p = pairs[j];
	rank[p >> 32] = (u32)p;
}

// sa_classify: members of one-member groups are done (their SA entry is written when sa_out is not
// null); the others are small (group of at most S) or large. Per tile it counts small members, small
// heads, large members and large heads into cnt[k*tiles+tile].
extern "C" __global__ void __launch_bounds__(FL_T) sa_classify(u32 m, const u8 *__restrict__ head, const u32 *__restrict__ headIdx,
                                                               const u32 *__restrict__ grpLen, const u32 *__restrict__ sa,
                                                               const u32 *__restrict__ gposf, u32 *__restrict__ sa_out, u32 S,
                                                               u32 *__restrict__ cnt, u32 tiles) {
	typedef cub::BlockReduce<u32, FL_T> R;
	__shared__ typename R::TempStorage tmp;
	u32 items = fl_items(m);
	u64 base = (u64)blockIdx.x * FL_T * items;
	u32 c[4] = {0, 0, 0, 0};
	for (u32 i = 0; i < items; i++) {
		u64 j = base + i * FL_T + threadIdx.x;
		if (j < m) {
			u32 len = grpLen[headIdx[j]];
			bool h = head[j] != 0;
			if (len == 1) {
				if (sa_out) sa_out[gpos_of(gposf, (u32)j)] = sa[j];
			} else if (len <= S) {
				c[0]++;
				c[1] += h;
			} else {
				c[2]++;
				c[3] += h;
			}
		}
	}
#pragma unroll
	for (int k = 0; k < 4; k++) {
		u32 s = R(tmp).Sum(c[k]);
		if (threadIdx.x == 0) cnt[(u64)k * tiles + blockIdx.x] = s;
		__syncthreads();
	}
}

// sa_scatter compacts the members of groups still unsorted into the next active arrays: small
// groups from 0, large ones from totals[0] (the number of small members). cnt holds the exclusive
// scans of sa_classify's counts; totals their sums. Block-wide steps keep the stores coalesced.
extern "C" __global__ void __launch_bounds__(FL_T) sa_scatter(u32 m, const u8 *__restrict__ head, const u32 *__restrict__ headIdx,
                                                              const u32 *__restrict__ grpLen, const u32 *__restrict__ sa,
                                                              const u32 *__restrict__ gposf, u32 S, const u32 *__restrict__ cnt, u32 tiles,
                                                              const u32 *__restrict__ totals, u32 *__restrict__ sa_out,
                                                              u32 *__restrict__ gposf_out, u32 *__restrict__ ord_out) {
	typedef cub::BlockScan<u64, FL_T> S64;
	__shared__ typename S64::TempStorage tmp;
	u32 items = fl_items(m);
	u64 base = (u64)blockIdx.x * FL_T * items;
	u32 tile = blockIdx.x;
	u32 smallRun = cnt[tile], largeRun = totals[0] + cnt[2 * (u64)tiles + tile], ordRun = cnt[3 * (u64)tiles + tile];
	const u64 M21 = 0x1fffff;
	for (u32 i = 0; i < items; i++) {
		u64 j = base + i * FL_T + threadIdx.x;
		u32 cat = 0;
		bool h = false;
		u64 v = 0;
		// Three counters packed 21 bits apart: small members, large members, large heads.
		if (j < m) {
			u32 len = grpLen[headIdx[j]];
			h = head[j] != 0;
			if (len >= 2) {
				if (len <= S) {
					cat = 1;
					v = 1;
				} else {
					cat = 2;
					v = (1ull << 21) | ((u64)h << 42);
				}
			}
		}
		u64 ex, agg;
		S64(tmp).ExclusiveSum(v, ex, agg);
		if (cat) {
			u32 g = gpos_of(gposf, (u32)j) | (h ? HEAD_FLAG : 0);
			u32 s = sa[j];
			if (cat == 1) {
				u32 dst = smallRun + (u32)(ex & M21);
				sa_out[dst] = s;
				gposf_out[dst] = g;
			} else {
				u32 dst = largeRun + (u32)((ex >> 21) & M21);
				sa_out[dst] = s;
				gposf_out[dst] = g;
				ord_out[dst] = ordRun + (u32)(ex >> 42) + h - 1;
			}
		}
		smallRun += (u32)(agg & M21);
		largeRun += (u32)((agg >> 21) & M21);
		ordRun += (u32)(agg >> 42);
		__syncthreads();
	}
}

__device__ __forceinline__ u32 next_key(const u32 *__restrict__ rank, u32 s, u32 h, u32 n) {
	return (u64)s + h < n ? rank[s + h] + 1 : 0;
}

// sa_small_sort sorts the small groups by rank[i+h], one shared-memory tile of up to 256*ITEMS
// members per block. Tile t holds the groups whose first member lies in [t*step, (t+1)*step);
// with step <= tile-S+1 they fit. The composite key is (group within the tile, rank key), sorted
// RADIX_BITS at a time. Instances sa_small_sort_ITEMS_BITS.
#define SS_T 256
template <int SS_I, int RADIX_BITS>
__device__ __forceinline__ void sa_small_sort(u32 mSmall, u32 step, u32 *__restrict__ sa, const u32 *__restrict__ gposf,
                                              u32 *__restrict__ key, const u32 *__restrict__ rank, u32 n, u32 h, u32 kb) {
	typedef cub::BlockLoad<u32, SS_T, SS_I, cub::BLOCK_LOAD_WARP_TRANSPOSE> L;
	typedef cub::BlockScan<u32, SS_T> Scan;
	typedef cub::BlockRadixSort<u64, SS_T, SS_I, u32, RADIX_BITS> Sort;
	__shared__ union {
		typename L::TempStorage l;
		typename Scan::TempStorage scan;
		typename Sort::TempStorage sort;
	} tmp;
	__shared__ u32 bounds[2];
	u32 t = threadIdx.x;
	if (t < 64) {
		// Warp 0 finds the first group start at or after lo, warp 1 at or after lo+step.
		u32 lane = t & 31;
		u64 target = (u64)blockIdx.x * step + (t >> 5) * step;
		u32 found = mSmall;
		for (u64 at = target; at < mSmall; at += 32) {
			u64 j = at + lane;
			bool f = j >= mSmall || (gposf[j] & HEAD_FLAG);
			u32 bal = __ballot_sync(0xffffffffu, f);
			if (bal) {
				found = (u32)(at + __ffs(bal) - 1);
				break;
			}
		}
		if (lane == 0) bounds[t >> 5] = found;
	}
	__syncthreads();
	u32 start = bounds[0], end = bounds[1];
	if (start >= end) return;
	int cnt = (int)(end - start);
	u32 s[SS_I], f[SS_I];
	L(tmp.l).Load(sa + start, s, cnt, 0u);
	__syncthreads();
	L(tmp.l).Load(gposf + start, f, cnt, 0u);
	__syncthreads();
#pragma unroll
	for (int i = 0; i < SS_I; i++) f[i] = f[i] >> 31;
	Scan(tmp.scan).InclusiveSum(f, f);
	__syncthreads();
	u64 k[SS_I];
#pragma unroll
	for (int i = 0; i < SS_I; i++) {
		int p = t * SS_I + i;
		k[i] = p < cnt ? ((u64)(f[i] - 1) << kb) | next_key(rank, s[i], h, n) : ~0ull;
	}
	// At most tile/2 groups of two or more: the group index takes log2(tile/2) bits.
	const int SEG_BITS = SS_I == 16 ? 11 : SS_I == 8 ? 10 : 12;
	Sort(tmp.sort).SortBlockedToStriped(k, s, 0, (int)kb + SEG_BITS);
	u64 mask = (1ull << kb) - 1;
#pragma unroll
	for (int i = 0; i < SS_I; i++) {
		int p = i * SS_T + t;
		if (p < cnt) {
			sa[start + p] = s[i];
			key[start + p] = (u32)(k[i] & mask);
		}
	}
}

#define SMALL_SORT(I, B)                                                                                                               \
	extern "C" __global__ void __launch_bounds__(SS_T) sa_small_sort_##I##_##B(u32 mSmall, u32 step, u32 *__restrict__ sa,           \
	                                                                           const u32 *__restrict__ gposf, u32 *__restrict__ key,  \
	                                                                           const u32 *__restrict__ rank, u32 n, u32 h, u32 kb) {  \
		sa_small_sort<I, B>(mSmall, step, sa, gposf, key, rank, n, h, kb);                                                           \
	}

SMALL_SORT(16, 4)
SMALL_SORT(8, 4)
SMALL_SORT(8, 6)

// sa_large_keys builds the radix-sort input of the large groups: (group ordinal, rank key).
extern "C" __global__ void sa_large_keys(u32 mLarge, const u32 *__restrict__ sa, const u32 *__restrict__ ord, const u32 *__restrict__ rank,
                                         u32 n, u32 h, u32 kb, u64 *__restrict__ keys, u32 *__restrict__ vals) {
	u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= mLarge) return;
	u32 s = sa[e];
	keys[e] = ((u64)ord[e] << kb) | next_key(rank, s, h, n);
	vals[e] = s;
}

// sa_large_unpack writes the sorted large groups back.
extern "C" __global__ void sa_large_unpack(u32 mLarge, const u64 *__restrict__ keys, const u32 *__restrict__ vals, u32 kb,
                                           u32 *__restrict__ key, u32 *__restrict__ sa) {
	u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= mLarge) return;
	key[e] = (u32)(keys[e] & ((1ull << kb) - 1));
	sa[e] = vals[e];
}

// bwt_samples records, for every sampled text position s = k << shift (k >= 1), the row of its
// suffix in the transform's numbering (SA index + 1, row 0 being the sentinel's): samples[k-1],
// as kernels/cpu.BWTSampled does, so that the inverse transform can start walks there.
extern "C" __global__ void bwt_samples(const u32 *__restrict__ sa, u32 n, u32 shift, u32 *__restrict__ samples) {
	u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	u32 s = sa[i];
	if (s == 0 || (s & ((1u << shift) - 1)) != 0) return;
	samples[(s >> shift) - 1] = (u32)i + 1;
}

// bwt_gather writes the transform (kernels.BWTFromSA) from the finished SA and rank arrays:
// rank[0] is the row of the whole text, which the transform leaves out.
extern "C" __global__ void bwt_gather(const u8 *__restrict__ text, const u32 *__restrict__ sa, const u32 *__restrict__ rank, u32 n,
                                      u8 *__restrict__ out, u32 *__restrict__ primary) {
	u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	u32 z = rank[0];
	if (i == 0) {
		out[0] = text[n - 1];
		*primary = z + 1;
	}
	u32 s = sa[i];
	if (s == 0) return;
	out[i < z ? i + 1 : i] = text[s - 1];
}
