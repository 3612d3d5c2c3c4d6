#include "hw/own_kernels.h"

#include <omp.h>

#include <algorithm>
#include <vector>

namespace cagr::hw {
namespace {

// ---------------------------------------------------------------- ISA dispatch
// The build targets baseline x86-64; the hot loops are stamped out again for
// AVX2+FMA and AVX-512 and picked at run time, so the compiler's vectoriser
// gets the wide registers the machine has.

enum class Isa { kBaseline, kAvx2, kAvx512 };

Isa detectIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBaseline;
}

Isa isa() {
  static const Isa kIsa = detectIsa();
  return kIsa;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define CAGR_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define CAGR_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define CAGR_HAVE_ISA_VARIANTS 1
#else
#define CAGR_HAVE_ISA_VARIANTS 0
#endif
#define CAGR_INLINE inline __attribute__((always_inline))
// The GEMM tile is fully unrolled over its MR x NR accumulators; the SLP
// vectoriser turns that into register-resident vector FMAs. Left on, the loop
// vectoriser instead vectorises the k loop with gathers (10x slower).
#if defined(__GNUC__) && !defined(__clang__)
#define CAGR_GEMM_OPT __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define CAGR_GEMM_OPT
#endif

// ---------------------------------------------------------------- GEMM
// C block = A rows [i0, i0+mb) x packed B panel (k in [k0, k0+kc), columns
// [j0, j0+nb) in NR-wide panels, zero padded). The MR x NR register tile
// accumulates in a local array the vectoriser keeps in registers.

constexpr int kMR = 6;
constexpr int kNR = 16;
constexpr int64_t kMB = 96;   // A block: 96 x 256 floats = 96 KiB (L2)
constexpr int64_t kNB = 256;  // packed B: 256 x 256 floats = 256 KiB (L2)
constexpr int64_t kKB = 256;  // one NR panel: 256 x 16 floats = 16 KiB (L1)

template <int R>
CAGR_INLINE void tile(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc, int nr) {
  float acc[R][kNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const float* b = bp + k * kNR;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * lda + k];
#pragma GCC unroll 16
      for (int j = 0; j < kNR; ++j) acc[r][j] += ar * b[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < nr; ++j) c[r * ldc + j] += acc[r][j];
}

CAGR_INLINE void blockBody(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc, int64_t mb,
                           int64_t nb) {
  for (int64_t jp = 0; jp < nb; jp += kNR) {
    const int nr = static_cast<int>(std::min<int64_t>(kNR, nb - jp));
    const float* panel = bp + jp * kc;
    int64_t i = 0;
    for (; i + kMR <= mb; i += kMR) tile<kMR>(a + i * lda, lda, panel, kc, c + i * ldc + jp, ldc, nr);
    for (; i < mb; ++i) tile<1>(a + i * lda, lda, panel, kc, c + i * ldc + jp, ldc, nr);
  }
}

CAGR_GEMM_OPT void blockBaseline(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc,
                                 int64_t mb, int64_t nb) {
  blockBody(a, lda, bp, kc, c, ldc, mb, nb);
}
#if CAGR_HAVE_ISA_VARIANTS
CAGR_TARGET_AVX2 CAGR_GEMM_OPT void blockAvx2(const float* a, int64_t lda, const float* bp, int64_t kc, float* c,
                                              int64_t ldc, int64_t mb, int64_t nb) {
  blockBody(a, lda, bp, kc, c, ldc, mb, nb);
}
CAGR_TARGET_AVX512 CAGR_GEMM_OPT void blockAvx512(const float* a, int64_t lda, const float* bp, int64_t kc, float* c,
                                                  int64_t ldc, int64_t mb, int64_t nb) {
  blockBody(a, lda, bp, kc, c, ldc, mb, nb);
}
#endif

void block(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc, int64_t mb, int64_t nb) {
#if CAGR_HAVE_ISA_VARIANTS
  if (isa() == Isa::kAvx512) return blockAvx512(a, lda, bp, kc, c, ldc, mb, nb);
  if (isa() == Isa::kAvx2) return blockAvx2(a, lda, bp, kc, c, ldc, mb, nb);
#endif
  blockBaseline(a, lda, bp, kc, c, ldc, mb, nb);
}

/// Packs B[k0:k0+kc, j0:j0+nb] (row stride n) into NR-wide panels [nb/NR][kc][NR].
void packB(const float* b, int64_t n, int64_t k0, int64_t kc, int64_t j0, int64_t nb, float* out) {
  for (int64_t jp = 0; jp < nb; jp += kNR) {
    const int64_t nr = std::min<int64_t>(kNR, nb - jp);
    float* panel = out + jp * kc;
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = b + (k0 + k) * n + j0 + jp;
      float* dst = panel + k * kNR;
      int64_t j = 0;
      for (; j < nr; ++j) dst[j] = src[j];
      for (; j < kNR; ++j) dst[j] = 0.0f;
    }
  }
}

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
void addReluBaseline(const float* a, const float* b, float* y, int64_t lo, int64_t hi) {
  addReluBody(a, b, y, lo, hi);
}
#if CAGR_HAVE_ISA_VARIANTS
CAGR_TARGET_AVX2 void addReluAvx2(const float* a, const float* b, float* y, int64_t lo, int64_t hi) {
  addReluBody(a, b, y, lo, hi);
}
CAGR_TARGET_AVX512 void addReluAvx512(const float* a, const float* b, float* y, int64_t lo, int64_t hi) {
  addReluBody(a, b, y, lo, hi);
}
#endif
void addRelu(const float* a, const float* b, float* y, int64_t lo, int64_t hi) {
#if CAGR_HAVE_ISA_VARIANTS
  if (isa() == Isa::kAvx512) return addReluAvx512(a, b, y, lo, hi);
  if (isa() == Isa::kAvx2) return addReluAvx2(a, b, y, lo, hi);
#endif
  addReluBaseline(a, b, y, lo, hi);
}

}  // namespace

std::string ownGemmIsa() {
  switch (isa()) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2+fma";
    case Isa::kBaseline:
      break;
  }
  return "baseline";
}

void ownGemm(int64_t m, int64_t k, int64_t n, const float* a, const float* b, float* c) {
  const int64_t mBlocks = (m + kMB - 1) / kMB;
  const int64_t nBlocks = (n + kNB - 1) / kNB;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t jb = 0; jb < nBlocks; ++jb) {
    for (int64_t ib = 0; ib < mBlocks; ++ib) {
      thread_local std::vector<float> packed;
      const int64_t i0 = ib * kMB, j0 = jb * kNB;
      const int64_t mb = std::min(kMB, m - i0), nb = std::min(kNB, n - j0);
      const int64_t nbPadded = (nb + kNR - 1) / kNR * kNR;
      if (packed.size() < static_cast<size_t>(kKB * nbPadded)) packed.resize(kKB * kNB);
      float* cBlock = c + i0 * n + j0;
      for (int64_t i = 0; i < mb; ++i) std::fill(cBlock + i * n, cBlock + i * n + nb, 0.0f);
      for (int64_t k0 = 0; k0 < k; k0 += kKB) {
        const int64_t kc = std::min(kKB, k - k0);
        packB(b, n, k0, kc, j0, nb, packed.data());
        block(a + i0 * k + k0, k, packed.data(), kc, cBlock, n, mb, nb);
      }
    }
  }
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
