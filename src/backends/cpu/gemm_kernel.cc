// own.gemm: C blocks of MB x NB, each accumulated over K in KB steps from a
// packed B panel (L2) by an MR x NR register tile: one NR-wide vector per
// row, MR rows as the instruction set has registers for (12 on AVX-512, 6
// on AVX2), one panel load and MR broadcast FMAs per k; see gemm_kernel.h.
#include "backends/cpu/gemm_kernel.h"

#include <omp.h>

#include <algorithm>

#include "backends/cpu/gemm_isa.h"

// The tile's rows are explicit vectors; the loop vectoriser would only
// version the k loop with gathers.
#if defined(__GNUC__) && !defined(__clang__)
#define CAGR_GEMM_OPT __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define CAGR_GEMM_OPT
#endif

namespace cagr::cpu {
namespace {

constexpr int kNR = 16;
constexpr int64_t kMB = 96;   // A block: 96 x 256 floats = 96 KiB (L2)
constexpr int64_t kNB = 256;  // packed B: 256 x 256 floats = 256 KiB (L2)
constexpr int64_t kKB = 256;  // one NR panel: 256 x 16 floats = 16 KiB (L1)

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
int64_t padNR(int64_t n) {
  return ceilDiv(n, kNR) * kNR;
}

// One NR-wide row of the tile: one zmm on AVX-512, two ymm on AVX2, four
// xmm on the baseline (the compiler splits the generic vector).
typedef float RowVec __attribute__((vector_size(kNR * sizeof(float))));
typedef float RowVecU __attribute__((vector_size(kNR * sizeof(float)), aligned(sizeof(float))));

// C[R rows, nr] += A[R rows, kc] * panel[kc, NR]: R row accumulators stay
// in registers, each k step is one panel load and R broadcast FMAs.
template <int R>
CAGR_INLINE void tile(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc, int nr) {
  RowVec acc[R] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const RowVec b = *reinterpret_cast<const RowVecU*>(bp + k * kNR);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] += a[r * lda + k] * b;
  }
  for (int r = 0; r < R; ++r) {
    if (nr == kNR) {
      *reinterpret_cast<RowVecU*>(c + r * ldc) += acc[r];
    } else {
      for (int j = 0; j < nr; ++j) c[r * ldc + j] += acc[r][j];
    }
  }
}

// C block [mb, nb] += A block [mb, kc] (row stride lda) * packed panels,
// in tiles of MR rows (as many as the instruction set has registers for).
template <int MR>
CAGR_INLINE void blockBody(const float* a, int64_t lda, const float* bp, int64_t kc, float* c, int64_t ldc, int64_t mb,
                           int64_t nb) {
  for (int64_t jp = 0; jp < nb; jp += kNR) {
    const int nr = static_cast<int>(std::min<int64_t>(kNR, nb - jp));
    const float* panel = bp + jp * kc;
    int64_t i = 0;
    for (; i + MR <= mb; i += MR) tile<MR>(a + i * lda, lda, panel, kc, c + i * ldc + jp, ldc, nr);
    for (; i < mb; ++i) tile<1>(a + i * lda, lda, panel, kc, c + i * ldc + jp, ldc, nr);
  }
}

#define CAGR_BLOCK_PARAMS \
  const float *a, int64_t lda, const float *bp, int64_t kc, float *c, int64_t ldc, int64_t mb, int64_t nb
CAGR_GEMM_OPT void blockBaseline(CAGR_BLOCK_PARAMS) {
  blockBody<2>(a, lda, bp, kc, c, ldc, mb, nb);
}
#if CAGR_HAVE_ISA_VARIANTS
CAGR_TARGET_AVX2 CAGR_GEMM_OPT void blockAvx2(CAGR_BLOCK_PARAMS) {
  blockBody<6>(a, lda, bp, kc, c, ldc, mb, nb);
}
CAGR_TARGET_AVX512 CAGR_GEMM_OPT void blockAvx512(CAGR_BLOCK_PARAMS) {
  blockBody<12>(a, lda, bp, kc, c, ldc, mb, nb);
}
#endif

void block(CAGR_BLOCK_PARAMS) {
#if CAGR_HAVE_ISA_VARIANTS
  if (hostIsa() == Isa::kAvx512) return blockAvx512(a, lda, bp, kc, c, ldc, mb, nb);
  if (hostIsa() == Isa::kAvx2) return blockAvx2(a, lda, bp, kc, c, ldc, mb, nb);
#endif
  blockBaseline(a, lda, bp, kc, c, ldc, mb, nb);
}
#undef CAGR_BLOCK_PARAMS

// Packs B[k0:k0+kc, j0:j0+nb] (element (r, c) at b[r*rs + c*cs]) into
// NR-wide panels [nb/NR][kc][NR], zero padded.
void packB(const float* b, int64_t rs, int64_t cs, int64_t k0, int64_t kc, int64_t j0, int64_t nb, float* out) {
  for (int64_t jp = 0; jp < nb; jp += kNR) {
    const int64_t nr = std::min<int64_t>(kNR, nb - jp);
    float* panel = out + jp * kc;
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = b + (k0 + k) * rs + (j0 + jp) * cs;
      float* dst = panel + k * kNR;
      int64_t j = 0;
      if (cs == 1) {
        for (; j < nr; ++j) dst[j] = src[j];
      } else {
        for (; j < nr; ++j) dst[j] = src[j * cs];
      }
      for (; j < kNR; ++j) dst[j] = 0.0f;
    }
  }
}

// Copies the A block [mb, kc] at a (strides rs, cs) into contiguous rows.
void packA(const float* a, int64_t rs, int64_t cs, int64_t mb, int64_t kc, float* out) {
  for (int64_t i = 0; i < mb; ++i) {
    for (int64_t k = 0; k < kc; ++k) out[i * kc + k] = a[i * rs + k * cs];
  }
}

// One C block of one batch: zero it, accumulate over K, hand it to `done`.
void runBlock(const GemmShape& s, const float* a, const float* b, const PackedB* packed, float* c, int64_t i0,
              int64_t j0) {
  thread_local std::vector<float> bBuf, aBuf;
  const int64_t mb = std::min(kMB, s.m - i0), nb = std::min(kNB, s.n - j0);
  if (packed == nullptr && bBuf.size() < static_cast<size_t>(kKB * kNB)) bBuf.resize(kKB * kNB);
  if (s.acs != 1 && aBuf.size() < static_cast<size_t>(kMB * kKB)) aBuf.resize(kMB * kKB);
  float* cBlock = c + i0 * s.n + j0;
  for (int64_t i = 0; i < mb; ++i) std::fill(cBlock + i * s.n, cBlock + i * s.n + nb, 0.0f);
  for (int64_t k0 = 0; k0 < s.k; k0 += kKB) {
    const int64_t kc = std::min(kKB, s.k - k0);
    const float* panels = packed != nullptr ? packed->block(j0, k0) : bBuf.data();
    if (packed == nullptr) packB(b, s.brs, s.bcs, k0, kc, j0, nb, bBuf.data());
    const float* aBlock = a + i0 * s.ars + k0 * s.acs;
    int64_t lda = s.ars;
    if (s.acs != 1) {
      packA(aBlock, s.ars, s.acs, mb, kc, aBuf.data());
      aBlock = aBuf.data();
      lda = kc;
    }
    block(aBlock, lda, panels, kc, cBlock, s.n, mb, nb);
  }
}

}  // namespace

int64_t GemmShape::batchCount() const {
  int64_t n = 1;
  for (const BatchDim& d : batch) n *= d.size;
  return n;
}

void GemmShape::batchOffsets(int64_t bi, int64_t& offA, int64_t& offB) const {
  offA = 0;
  offB = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    const int64_t i = bi % batch[d].size;
    bi /= batch[d].size;
    offA += i * batch[d].strideA;
    offB += i * batch[d].strideB;
  }
}

void GemmShape::simplify() {
  std::vector<BatchDim> kept;
  for (const BatchDim& d : batch) {
    if (d.size == 1) continue;
    if (!kept.empty()) {
      BatchDim& outer = kept.back();
      if (outer.strideA == d.strideA * d.size && outer.strideB == d.strideB * d.size) {
        outer = {outer.size * d.size, d.strideA, d.strideB};
        continue;
      }
    }
    kept.push_back(d);
  }
  batch = std::move(kept);
  if (batch.size() == 1 && batch[0].strideB == 0 && batch[0].strideA == m * ars) {
    m *= batch[0].size;
    batch.clear();
  }
}

PackedB::PackedB(const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n) : k_(k), n_(n) {
  data_.resize(static_cast<size_t>(std::max<int64_t>(k, 1) * padNR(n)));
  for (int64_t j0 = 0; j0 < n; j0 += kNB) {
    const int64_t nb = std::min(kNB, n - j0);
    for (int64_t k0 = 0; k0 < k; k0 += kKB) {
      packB(b, rs, cs, k0, std::min(kKB, k - k0), j0, nb, data_.data() + (block(j0, k0) - data_.data()));
    }
  }
}

const float* PackedB::block(int64_t j0, int64_t k0) const {
  // Column blocks before j0 hold k_ x kNB floats each; within the block, the
  // depth blocks before k0 hold kKB x padNR(nb) each.
  const int64_t nb = std::min(kNB, n_ - j0);
  return data_.data() + j0 * k_ + k0 * padNR(nb);
}

void ownGemmBatched(const GemmShape& s, const float* a, const float* b, const PackedB* packed, float* c,
                    const BlockDone* done) {
  const int64_t mBlocks = ceilDiv(s.m, kMB), nBlocks = ceilDiv(s.n, kNB);
  const int64_t tasks = s.batchCount() * nBlocks * mBlocks;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t bi = t / (nBlocks * mBlocks), jb = t / mBlocks % nBlocks, ib = t % mBlocks;
    int64_t offA = 0, offB = 0;
    s.batchOffsets(bi, offA, offB);
    runBlock(s, a + offA, b + offB, packed, c + bi * s.m * s.n, ib * kMB, jb * kNB);
    if (done != nullptr) (*done)(bi, ib * kMB, std::min(kMB, s.m - ib * kMB), jb * kNB, std::min(kNB, s.n - jb * kNB));
  }
}

const char* ownGemmIsaName() {
  return isaName(hostIsa());
}

}  // namespace cagr::cpu
