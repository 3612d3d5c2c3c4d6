// Device code of the profiler's own kernels (see kernels.h).
#include <cuda_bf16.h>

#include <algorithm>

#include "hw/cuda/kernels.h"

namespace cagr::cuda {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

__global__ void fillUniformKernel(float* p, int64_t n, uint64_t seed, float lo, float hi) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i));
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    p[i] = lo + (hi - lo) * u;
  }
}

__global__ void toBf16Kernel(const float* src, __nv_bfloat16* dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    dst[i] = __float2bfloat16(src[i]);
  }
}

__global__ void emptyKernel() {}

__device__ __forceinline__ void add4(float4& acc, const float4 v) {
  acc.x += v.x;
  acc.y += v.y;
  acc.z += v.z;
  acc.w += v.w;
}

__device__ __forceinline__ void xorReduce4(float4& acc, int from, int to) {
  for (int off = from; off < to; off <<= 1) {
    acc.x += __shfl_xor_sync(kFullMask, acc.x, off);
    acc.y += __shfl_xor_sync(kFullMask, acc.y, off);
    acc.z += __shfl_xor_sync(kFullMask, acc.z, off);
    acc.w += __shfl_xor_sync(kFullMask, acc.w, off);
  }
}

// A group of `lanesPerBag` lanes owns one bag; inside it, `lanesPerBag /
// lanesPerRow` rows are summed in parallel, each row read as lanesPerRow
// float4s, then the partial sums are folded with xor shuffles.
__global__ void gatherSumKernel(const float4* __restrict__ table, int lanesPerRow, const int32_t* __restrict__ ids,
                                int64_t bags, int64_t pooling, int lanesPerBag, float4* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) >> 5;
  const int bagsPerWarp = 32 / lanesPerBag;
  const int64_t bag = warp * bagsPerWarp + lane / lanesPerBag;
  const int bagLane = lane % lanesPerBag;
  const int slot = bagLane / lanesPerRow;
  const int col = bagLane % lanesPerRow;
  const int rowsPar = lanesPerBag / lanesPerRow;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  if (bag < bags) {
    const int32_t* bagIds = ids + bag * pooling;
    for (int64_t p = slot; p < pooling; p += rowsPar) {
      const int64_t row = __ldg(bagIds + p);
      add4(acc, __ldg(table + row * lanesPerRow + col));
    }
  }
  xorReduce4(acc, lanesPerRow, lanesPerBag);  // every lane takes part (full mask)
  if (bag < bags && slot == 0) out[bag * lanesPerRow + col] = acc;
}

__global__ void reluAddKernel(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ y,
                              int64_t n4, int reps) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int r = 0; r < reps; ++r) {
    for (int64_t i = first; i < n4; i += stride) {
      const float4 u = __ldcg(a + i);
      const float4 v = __ldcg(b + i);
      y[i] = make_float4(fmaxf(u.x + v.x, 0.f), fmaxf(u.y + v.y, 0.f), fmaxf(u.z + v.z, 0.f), fmaxf(u.w + v.w, 0.f));
    }
  }
}

__global__ void rowSumsKernel(const float4* __restrict__ x, int64_t rows, int cols4, int lanesPerRow,
                              float* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) >> 5;
  const int64_t row = warp * (32 / lanesPerRow) + lane / lanesPerRow;
  const int col = lane % lanesPerRow;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  if (row < rows) {
    for (int c = col; c < cols4; c += lanesPerRow) add4(acc, __ldg(x + row * cols4 + c));
  }
  xorReduce4(acc, 1, lanesPerRow);
  if (row < rows && col == 0) out[row] = acc.x + acc.y + acc.z + acc.w;
}

int gridFor(int64_t work, int64_t perBlock, int64_t cap) {
  const int64_t blocks = (work + perBlock - 1) / perBlock;
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, cap));
}

int pow2Ceil(int64_t v) {
  int p = 1;
  while (p < v && p < 32) p <<= 1;
  return p;
}

}  // namespace

cudaError_t launchFillUniform(float* p, int64_t n, uint64_t seed, float lo, float hi, cudaStream_t stream) {
  fillUniformKernel<<<gridFor(n, kBlock, 65535), kBlock, 0, stream>>>(p, n, seed, lo, hi);
  return cudaGetLastError();
}

cudaError_t launchToBf16(const float* src, void* dst, int64_t n, cudaStream_t stream) {
  toBf16Kernel<<<gridFor(n, kBlock, 65535), kBlock, 0, stream>>>(src, static_cast<__nv_bfloat16*>(dst), n);
  return cudaGetLastError();
}

cudaError_t launchEmpty(cudaStream_t stream) {
  emptyKernel<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

bool gatherDimSupported(int64_t dim) {
  if (dim < 4 || dim > 128 || dim % 4 != 0) return false;
  const int64_t l = dim / 4;
  return (l & (l - 1)) == 0;
}

cudaError_t launchGatherSum(const float* table, int64_t dim, const int32_t* ids, int64_t bags, int64_t pooling,
                            float* out, cudaStream_t stream) {
  if (!gatherDimSupported(dim) || pooling < 1) return cudaErrorInvalidValue;
  const int lanesPerRow = static_cast<int>(dim / 4);
  const int lanesPerBag = lanesPerRow * std::min(32 / lanesPerRow, pow2Ceil(pooling));
  const int64_t bagsPerBlock = (kBlock / 32) * (32 / lanesPerBag);
  gatherSumKernel<<<gridFor(bags, bagsPerBlock, (int64_t{1} << 31) - 1), kBlock, 0, stream>>>(
      reinterpret_cast<const float4*>(table), lanesPerRow, ids, bags, pooling, lanesPerBag,
      reinterpret_cast<float4*>(out));
  return cudaGetLastError();
}

cudaError_t launchReluAdd(const float* a, const float* b, float* y, int64_t n, int reps, int maxBlocks,
                          cudaStream_t stream) {
  if (n % 4 != 0 || reps < 1) return cudaErrorInvalidValue;
  const int64_t n4 = n / 4;
  reluAddKernel<<<gridFor(n4, kBlock, std::max(maxBlocks, 1)), kBlock, 0, stream>>>(
      reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(y), n4, reps);
  return cudaGetLastError();
}

cudaError_t launchRowSums(const float* x, int64_t rows, int64_t cols, float* out, cudaStream_t stream) {
  if (cols % 4 != 0 || cols < 4) return cudaErrorInvalidValue;
  const int cols4 = static_cast<int>(cols / 4);
  const int lanesPerRow = pow2Ceil(std::min<int64_t>(cols4, 32));
  const int64_t rowsPerBlock = (kBlock / 32) * (32 / lanesPerRow);
  rowSumsKernel<<<gridFor(rows, rowsPerBlock, (int64_t{1} << 31) - 1), kBlock, 0, stream>>>(
      reinterpret_cast<const float4*>(x), rows, cols4, lanesPerRow, out);
  return cudaGetLastError();
}

const char* kernelCompilerVersion() {
#if defined(__CUDACC_VER_MAJOR__)
#define CAGR_STR2(x) #x
#define CAGR_STR(x) CAGR_STR2(x)
#if defined(__CUDA_ARCH_LIST__)
  return "nvcc " CAGR_STR(__CUDACC_VER_MAJOR__) "." CAGR_STR(__CUDACC_VER_MINOR__) "." CAGR_STR(
      __CUDACC_VER_BUILD__) ", __CUDA_ARCH_LIST__ " CAGR_STR(__CUDA_ARCH_LIST__);
#else
  return "nvcc " CAGR_STR(__CUDACC_VER_MAJOR__) "." CAGR_STR(__CUDACC_VER_MINOR__) "." CAGR_STR(__CUDACC_VER_BUILD__);
#endif
#else
  return "unknown";
#endif
}

}  // namespace cagr::cuda
