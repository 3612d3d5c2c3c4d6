// Interaction, FM and CIN kernels. Interaction transposes the sample to
// [D, F] in cache so the dots of 8 rows i with 16 columns j accumulate in 8
// vector registers over d by broadcast FMAs (no horizontal sums). CIN never
// writes the [B,H,F,D] outer product to memory: per tile of samples it forms
// Z[h*F+f, (b,d)] = xk[b,h,d] * x0[b,f,d] (a few MB, cache resident) and
// contracts it with W in one oneDNN sgemm, which is where the ~100 GFLOP of
// an xDeepFM layer at batch 4096 go (measured ~270 GFLOP/s on the 2-core VM).
#include "backends/cpu/rec_kernels.h"

#if CAGR_HAVE_ONEDNN
#include <dnnl.h>
#else
#include <cblas.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>

namespace cagr::cpu {
namespace {

// Columns (samples x D) of one CIN tile: wide enough for an efficient sgemm,
// small enough that the tile's Z stays in L2/L3.
constexpr int64_t kCinColumns = 256;

#define CAGR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

CAGR_CLONES void formOuterProducts(const CinShape& s, const float* xk, const float* x0, int64_t samples, float* z) {
  const int64_t d = s.dim, n = samples * d;
  for (int64_t h = 0; h < s.hk; ++h) {
    for (int64_t f = 0; f < s.fields; ++f) {
      float* __restrict row = z + (h * s.fields + f) * n;
      for (int64_t t = 0; t < samples; ++t) {
        const float* a = xk + (t * s.hk + h) * d;
        const float* b = x0 + (t * s.fields + f) * d;
        for (int64_t i = 0; i < d; ++i) row[t * d + i] = a[i] * b[i];
      }
    }
  }
}

CAGR_CLONES void scatterTile(const CinShape& s, const float* y, const float* bias, int64_t samples, float* out) {
  const int64_t d = s.dim, n = samples * d;
  for (int64_t t = 0; t < samples; ++t) {
    for (int64_t o = 0; o < s.outCh; ++o) {
      const float* src = y + o * n + t * d;
      float* __restrict dst = out + (t * s.outCh + o) * d;
      const float bo = bias != nullptr ? bias[o] : 0.0f;
      for (int64_t i = 0; i < d; ++i) dst[i] = src[i] + bo;
    }
  }
}

// Interaction dots computed per block (one AVX-512 register).
constexpr int64_t kLanes = 16;
// Rows of dots computed together (independent FMA chains).
constexpr int64_t kRows = 8;
// One block of dots: a GCC vector, one zmm / two ymm / four xmm registers
// depending on the clone.
using Lanes = float __attribute__((vector_size(kLanes * sizeof(float))));

int64_t paddedFields(int64_t fields) {
  return (fields + kLanes - 1) / kLanes * kLanes;
}

}  // namespace

int64_t interactionScratchFloats(int64_t fields, int64_t dim) {
  return std::max(dim * paddedFields(fields), interactionLanesScratchFloats(fields, dim, /*self=*/true));
}

// Row offset of dot row i in the DLRM order (i * (i - 1) / 2, or i * (i + 1) / 2 with self).
inline int64_t rowStart(int64_t i, bool self) {
  return self ? i * (i + 1) / 2 : i * (i - 1) / 2;
}

// The short copies below the diagonal stay inline loops, not memcpy calls.
CAGR_CLONES __attribute__((optimize("no-tree-loop-distribute-patterns"))) void interactionRows(
    const float* x, int64_t count, int64_t ldx, int64_t fields, int64_t dim, bool self, float* out, int64_t ldOut,
    float* scratch) {
  if (interactionRowsLanes(x, count, ldx, fields, dim, self, out, ldOut, scratch)) return;
  // xt [D, Fp] (zero padded): the dots of kRows rows i with a block of
  // kLanes columns j accumulate in kRows independent registers over d.
  const int64_t fp = paddedFields(fields);
  float* __restrict xt = scratch;
  std::fill_n(xt, dim * fp, 0.0f);
  for (int64_t s = 0; s < count; ++s) {
    const float* __restrict xs = x + s * ldx;
    float* __restrict y = out + s * ldOut;
    for (int64_t j = 0; j < fields; ++j) {
      for (int64_t d = 0; d < dim; ++d) xt[d * fp + j] = xs[j * dim + d];
    }
    for (int64_t j0 = 0; j0 < fields; j0 += kLanes) {
      // Rows with an entry in this block: i > j0 (i >= j0 with self).
      for (int64_t i0 = self ? j0 : j0 + 1; i0 < fields; i0 += kRows) {
        const float* rows[kRows];
        for (int64_t r = 0; r < kRows; ++r) rows[r] = xs + std::min(i0 + r, fields - 1) * dim;
        Lanes acc[kRows] = {};
        for (int64_t d = 0; d < dim; ++d) {
          Lanes t;
          std::memcpy(&t, xt + d * fp + j0, sizeof(t));
#pragma GCC unroll 8
          for (int64_t r = 0; r < kRows; ++r) acc[r] += rows[r][d] * t;
        }
        for (int64_t r = 0; r < kRows && i0 + r < fields; ++r) {
          const int64_t i = i0 + r, m = std::min(kLanes, (self ? i + 1 : i) - j0);
          float* row = y + rowStart(i, self) + j0;
          for (int64_t j = 0; j < m; ++j) row[j] = acc[r][j];
        }
      }
    }
  }
}

CAGR_CLONES void fmRows(const float* x, int64_t count, int64_t ldx, int64_t fields, int64_t dim, bool reduce,
                        float* out, int64_t ldOut) {
  constexpr int64_t kBlock = 64;
  std::array<double, kBlock> sum{}, sq{};
  for (int64_t s = 0; s < count; ++s) {
    const float* xs = x + s * ldx;
    double total = 0;
    for (int64_t d0 = 0; d0 < dim; d0 += kBlock) {
      const int64_t len = std::min(kBlock, dim - d0);
      std::fill_n(sum.begin(), len, 0.0);
      std::fill_n(sq.begin(), len, 0.0);
      for (int64_t f = 0; f < fields; ++f) {
        const float* row = xs + f * dim + d0;
        for (int64_t i = 0; i < len; ++i) {
          const double v = row[i];
          sum[static_cast<size_t>(i)] += v;
          sq[static_cast<size_t>(i)] += v * v;
        }
      }
      for (int64_t i = 0; i < len; ++i) {
        const double term =
            0.5 * (sum[static_cast<size_t>(i)] * sum[static_cast<size_t>(i)] - sq[static_cast<size_t>(i)]);
        total += term;
        if (!reduce) out[s * ldOut + d0 + i] = static_cast<float>(term);
      }
    }
    if (reduce) out[s * ldOut] = static_cast<float>(total);
  }
}

int64_t cinTileSamples(const CinShape& s) {
  return std::max<int64_t>(1, kCinColumns / std::max<int64_t>(s.dim, 1));
}

int64_t cinScratchFloats(const CinShape& s) {
  int64_t n = cinTileSamples(s) * s.dim;
  return (s.hk * s.fields + s.outCh) * n;
}

bool cinTile(const CinShape& s, const float* xk, const float* x0, const float* w, const float* bias, int64_t b0,
             int64_t b1, float* out, float* scratch) {
  const int64_t samples = b1 - b0, n = samples * s.dim, k = s.hk * s.fields;
  if (samples <= 0) return true;
  float* z = scratch;
  float* y = scratch + k * cinTileSamples(s) * s.dim;
  formOuterProducts(s, xk + b0 * s.hk * s.dim, x0 + b0 * s.fields * s.dim, samples, z);
#if CAGR_HAVE_ONEDNN
  if (dnnl_sgemm('N', 'N', s.outCh, n, k, 1.0f, w, k, z, n, 0.0f, y, n) != dnnl_success) return false;
#else
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.outCh), static_cast<int>(n),
              static_cast<int>(k), 1.0f, w, static_cast<int>(k), z, static_cast<int>(n), 0.0f, y, static_cast<int>(n));
#endif
  scatterTile(s, y, bias, samples, out + b0 * s.outCh * s.dim);
  return true;
}

}  // namespace cagr::cpu
