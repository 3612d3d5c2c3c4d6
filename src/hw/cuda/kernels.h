// CAGR's own CUDA kernels that the profiler measures (own.gather,
// own.eltwise, own.reduce), plus fills and the empty kernel for launch
// probes. Host-callable launchers; each returns the launch's cudaError_t
// (cudaGetLastError), and runs asynchronously on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cagr::cuda {

/// p[i] = uniform in [lo, hi) from a hash of (seed, i): reproducible, no zeros.
cudaError_t launchFillUniform(float* p, int64_t n, uint64_t seed, float lo, float hi, cudaStream_t stream);

/// dst[i] = bf16(src[i]); `dst` holds __nv_bfloat16.
cudaError_t launchToBf16(const float* src, void* dst, int64_t n, cudaStream_t stream);

/// An empty kernel, one warp.
cudaError_t launchEmpty(cudaStream_t stream);

/// Embedding bag, sum pooling: out[b, :] = sum_p table[ids[b * pooling + p], :].
/// dim/4 must be a power of two in [1, 32] (dim 4..128). Rows are read as
/// float4; one warp per bag, or a power-of-two sub-warp per bag when the
/// pooling is too small to keep 32 lanes busy (pooling 1, dim 16: 4 lanes).
cudaError_t launchGatherSum(const float* table, int64_t dim, const int32_t* ids, int64_t bags, int64_t pooling,
                            float* out, cudaStream_t stream);
bool gatherDimSupported(int64_t dim);

/// y = relu(a + b) over n floats (n % 4 == 0), float4 grid-stride with
/// L1-bypassing loads (ld.global.cg), the whole pass repeated `reps` times
/// inside the kernel; at most `maxBlocks` blocks of 256 threads.
cudaError_t launchReluAdd(const float* a, const float* b, float* y, int64_t n, int reps, int maxBlocks,
                          cudaStream_t stream);

/// out[r] = sum_c x[r, c] over a row-major [rows, cols] matrix (cols % 4 == 0).
cudaError_t launchRowSums(const float* x, int64_t rows, int64_t cols, float* out, cudaStream_t stream);

/// The CUDA compiler that built the kernels: "nvcc 13.0".
const char* kernelCompilerVersion();

}  // namespace cagr::cuda
