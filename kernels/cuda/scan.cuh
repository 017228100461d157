// Device-wide scans of u32 arrays, in three launches: scan_reduce (one sum per tile), scan_single
// (one block scans the tile sums) and scan_down (each tile scans itself and adds its offset).

#define SC_T 256
#define SC_I 8
#define SC_TILE (SC_T * SC_I)

extern "C" __global__ void __launch_bounds__(SC_T) scan_reduce(const u32 *__restrict__ in, u32 n, u32 *__restrict__ sums) {
	typedef cub::BlockReduce<u32, SC_T> R;
	__shared__ typename R::TempStorage tmp;
	u64 base = (u64)blockIdx.x * SC_TILE;
	u32 s = 0;
#pragma unroll
	for (int i = 0; i < SC_I; i++) {
		u64 j = base + i * SC_T + threadIdx.x;
		if (j < n) s += in[j];
	}
	s = R(tmp).Sum(s);
	if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

// scan_single: one block of 1024 threads per array; array blockIdx.x is data + blockIdx.x*stride.
// Exclusive sum in place; the array's total goes to total[blockIdx.x] when total is not null.
extern "C" __global__ void __launch_bounds__(1024) scan_single(u32 *data, u32 n, u32 stride, u32 *total) {
	typedef cub::BlockScan<u32, 1024> S;
	__shared__ typename S::TempStorage tmp;
	__shared__ u32 carry;
	data += (u64)blockIdx.x * stride;
	if (threadIdx.x == 0) carry = 0;
	__syncthreads();
	for (u32 base = 0; base < n; base += 1024 * 4) {
		u32 v[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			u32 j = base + threadIdx.x * 4 + i;
			v[i] = j < n ? data[j] : 0;
		}
		u32 agg;
		S(tmp).ExclusiveSum(v, v, agg);
		u32 c = carry;
#pragma unroll
		for (int i = 0; i < 4; i++) {
			u32 j = base + threadIdx.x * 4 + i;
			if (j < n) data[j] = v[i] + c;
		}
		__syncthreads();
		if (threadIdx.x == 0) carry = c + agg;
		__syncthreads();
	}
	if (threadIdx.x == 0 && total) total[blockIdx.x] = carry;
}

extern "C" __global__ void __launch_bounds__(SC_T) scan_down(const u32 *__restrict__ in, u32 *__restrict__ out, u32 n, const u32 *__restrict__ sums) {
	typedef cub::BlockLoad<u32, SC_T, SC_I, cub::BLOCK_LOAD_WARP_TRANSPOSE> L;
	typedef cub::BlockStore<u32, SC_T, SC_I, cub::BLOCK_STORE_WARP_TRANSPOSE> St;
	typedef cub::BlockScan<u32, SC_T> S;
	__shared__ union {
		typename L::TempStorage l;
		typename St::TempStorage st;
		typename S::TempStorage s;
	} tmp;
	u64 base = (u64)blockIdx.x * SC_TILE;
	int valid = (int)min((u64)SC_TILE, n - base);
	u32 v[SC_I];
	L(tmp.l).Load(in + base, v, valid, 0u);
	__syncthreads();
	S(tmp.s).ExclusiveSum(v, v);
	__syncthreads();
	u32 off = sums[blockIdx.x];
#pragma unroll
	for (int i = 0; i < SC_I; i++) v[i] += off;
	St(tmp.st).Store(out + base, v, valid);
}

struct MaxOp {
	__device__ __forceinline__ u32 operator()(u32 a, u32 b) const { return a > b ? a : b; }
};

struct MinOp {
	__device__ __forceinline__ u32 operator()(u32 a, u32 b) const { return a < b ? a : b; }
};

// scan_max_single: one block; exclusive running maximum of data[0..n) in place (0 first).
extern "C" __global__ void __launch_bounds__(1024) scan_max_single(u32 *data, u32 n) {
	typedef cub::BlockScan<u32, 1024> S;
	__shared__ typename S::TempStorage tmp;
	__shared__ u32 carry;
	if (threadIdx.x == 0) carry = 0;
	__syncthreads();
	for (u32 base = 0; base < n; base += 1024 * 4) {
		u32 v[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			u32 j = base + threadIdx.x * 4 + i;
			v[i] = j < n ? data[j] : 0;
		}
		u32 agg;
		S(tmp).ExclusiveScan(v, v, 0u, MaxOp(), agg);
		u32 c = carry;
#pragma unroll
		for (int i = 0; i < 4; i++) {
			u32 j = base + threadIdx.x * 4 + i;
			if (j < n) data[j] = max(v[i], c);
		}
		__syncthreads();
		if (threadIdx.x == 0) carry = max(c, agg);
		__syncthreads();
	}
}
