#include "hw/own_kernels.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "backends/cpu/gemm_isa.h"
#include "backends/cpu/gemm_kernel.h"

namespace cagr::hw {
namespace {

// ---------------------------------------------------------------- streaming

/// [lo, hi) of this thread's chunk of n elements (64-byte aligned boundaries).
void chunk(int64_t n, int64_t& lo, int64_t& hi) {
  const int64_t t = omp_get_thread_num();
  const int64_t nt = omp_get_num_threads();
  const int64_t per = ((n + nt - 1) / nt + 15) / 16 * 16;
  lo = std::min(n, t * per);
  hi = std::min(n, lo + per);
}

CAGR_INLINE void addReluBody(const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t lo,
                             int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    const float s = a[i] + b[i];
    y[i] = s > 0.0f ? s : 0.0f;
  }
}
CAGR_ISA_DISPATCH(, addRelu, addReluBody, (const float* a, const float* b, float* y, int64_t lo, int64_t hi),
                  (a, b, y, lo, hi))

}  // namespace

// The GEMM is the CPU backend's own.gemm kernel (backends/cpu/gemm_kernel.h):
// the profile measures exactly what the backend runs.
std::string ownGemmIsa() {
  return cpu::ownGemmIsaName();
}

void ownGemm(int64_t m, int64_t k, int64_t n, const float* a, const float* b, float* c) {
  cpu::GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.ars = k;
  s.brs = n;
  cpu::ownGemmBatched(s, a, b, nullptr, c, nullptr);
}

void ownGatherSum(const float* table, int64_t dim, const int64_t* ids, int64_t bags, int64_t pooling, float* out) {
#pragma omp parallel for schedule(static)
  for (int64_t bag = 0; bag < bags; ++bag) {
    float* o = out + bag * dim;
    std::fill(o, o + dim, 0.0f);
    const int64_t* bagIds = ids + bag * pooling;
    for (int64_t p = 0; p < pooling; ++p) {
      const float* row = table + bagIds[p] * dim;
      for (int64_t d = 0; d < dim; ++d) o[d] += row[d];
    }
  }
}

void ownEltwiseAddRelu(const float* a, const float* b, float* y, int64_t n, int passes) {
#pragma omp parallel
  {
    int64_t lo = 0, hi = 0;
    chunk(n, lo, hi);
    for (int p = 0; p < passes; ++p) addRelu(a, b, y, lo, hi);
  }
}

void ownCopy(const float* a, float* c, int64_t n) {
#pragma omp parallel
  {
    int64_t lo = 0, hi = 0;
    chunk(n, lo, hi);
    std::copy(a + lo, a + hi, c + lo);
  }
}

void ownTriad(float* a, const float* b, const float* c, float s, int64_t n) {
#pragma omp parallel
  {
    int64_t lo = 0, hi = 0;
    chunk(n, lo, hi);
    for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  }
}

void ownRowSums(const float* x, int64_t rows, int64_t cols, float* out) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j) s += row[j];
    out[r] = s;
  }
}

void ownFill(float* p, int64_t n, float value) {
#pragma omp parallel
  {
    int64_t lo = 0, hi = 0;
    chunk(n, lo, hi);
    for (int64_t i = lo; i < hi; ++i) p[i] = value + static_cast<float>(i % 7) * 0.125f;
  }
}

void ownEmptyParallel() {
#pragma omp parallel
  { asm volatile("" ::: "memory"); }
}

int ownThreads() {
  return omp_get_max_threads();
}

void setOwnThreads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

}  // namespace cagr::hw
