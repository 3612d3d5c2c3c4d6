// Shapes of the CUDA backend's generated GEMM forms (nvrtc.gemm_small), for
// the code generator that picks a form (backends/cuda/codegen_gemm.cc) and the
// cost model that prices a plan's generated GEMM by its form's probe
// (cost/kernel_class.cc generatedGemmFormClass): one definition, so the two
// cannot drift. Static N (columns) and K; the callers check batch, layout and
// math.
#pragma once

#include <cstdint>

namespace cagr::gemm_forms {

/// cagr_gemm_narrow: N of 16 / 32 / 64 and K <= 256 in multiples of 4 (all
/// of B and a 32-row tile of A in shared memory).
inline bool narrowShape(int64_t n, int64_t k) { return (n == 16 || n == 32 || n == 64) && k % 4 == 0 && k <= 256; }

/// cagr_gemm_rowk's threads per output row: the largest of 128 / 64 / 32
/// dividing N.
inline int64_t rowThreadsPerRow(int64_t n) { return n % 128 == 0 ? 128 : n % 64 == 0 ? 64 : 32; }

/// cagr_gemm_rowk: K <= 16 and N = 32 q <= 512 with at most 64 weights held
/// in registers a thread.
inline bool rowShape(int64_t n, int64_t k) {
  return k <= 16 && n % 32 == 0 && n >= 32 && n <= 512 && k * (n / rowThreadsPerRow(n)) <= 64;
}

}  // namespace cagr::gemm_forms
