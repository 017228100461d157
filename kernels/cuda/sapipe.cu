// Kernels of sapipe's GPU backend. `make kernels` compiles this one translation unit (with the
// .cuh files it includes) into sapipe.fatbin, which kernels/cuda embeds; the Go code launches every
// kernel by its extern "C" name. Device-wide steps (scans, radix-sort passes, compaction) are
// sequences of these kernels driven from Go; CUB supplies only block-level primitives.
//
// Sizes: texts are at most 2^31-1 bytes, so positions, ranks and counts fit in 32 bits.

#include <stdint.h>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

#include "scan.cuh"
#include "radix.cuh"
#include "sa.cuh"
#include "sa_sliced.cuh"
#include "match.cuh"
#include "check.cuh"

// probe writes v+i to out[i]: the smallest kernel, used to check that the module loads and runs.
extern "C" __global__ void probe(u32 *out, u32 n, u32 v) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = v + i;
}
