// AVX2 softmax rows (see eltwise_softmax_rows.h).
#include "backends/cpu/eltwise_softmax_rows.h"

#include "backends/cpu/gemm_isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <limits>

namespace cagr::cpu {
namespace {

#define CAGR_AVX2 __attribute__((target("avx2")))

// Lanes [0, n) set (n <= 8), as a maskload / maskstore mask.
CAGR_AVX2 inline __m256i firstLanes(int64_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
}

CAGR_AVX2 inline float horizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

CAGR_AVX2 inline float horizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// fastExp (eltwise_kernels.h), the same operations in the same order (no
// FMA), so a lane equals the scalar result bit for bit.
CAGR_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.72283905206835f), lo = _mm256_set1_ps(-86.6f);
  __m256 xc = _mm256_min_ps(x, hi);  // x < hi ? x : hi (NaN -> hi)
  xc = _mm256_max_ps(xc, lo);        // xc > lo ? xc : lo
  __m256 t = _mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f));
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  __m256 n = _mm256_sub_ps(_mm256_add_ps(t, magic), magic);
  __m256 r = _mm256_sub_ps(xc, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(-2.12194440e-4f)));
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201e-1f));
  __m256 y = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, r), r), r), _mm256_set1_ps(1.0f));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(126)), 23);
  y = _mm256_mul_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(e)), _mm256_set1_ps(2.0f));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// Vector i of a row of K >= 8 starts at min(8 i, K - 8): the last one
// overlaps the one before instead of running short. Its lanes below
// `fresh` (those the one before covered) are masked off for the sum; the
// overlapping stores write the same values twice.
CAGR_AVX2 inline int64_t vecAt(int64_t i, int64_t K) {
  return i * 8 < K - 8 ? i * 8 : K - 8;
}

CAGR_AVX2 inline __m256 newLanes(int64_t K) {
  const int64_t covered = (K / 8) * 8 - (K - 8);  // lanes of the last vector the one before covered
  return _mm256_castsi256_ps(_mm256_xor_si256(firstLanes(K % 8 == 0 ? 0 : covered), _mm256_set1_epi32(-1)));
}

// A row of 8 <= K <= 8 V held in V registers (no store is read back).
template <int V>
CAGR_AVX2 void rowInRegisters(const float* x, int64_t K, float* y) {
  __m256 v[V];
#pragma GCC unroll 8
  for (int i = 0; i < V; ++i) v[i] = _mm256_loadu_ps(x + vecAt(i, K));
  __m256 m = v[0];
#pragma GCC unroll 8
  for (int i = 1; i < V; ++i) m = _mm256_max_ps(m, v[i]);
  const __m256 mx = _mm256_set1_ps(horizontalMax(m));
  __m256 s = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < V; ++i) {
    v[i] = exp8(_mm256_sub_ps(v[i], mx));
    s = _mm256_add_ps(s, i == V - 1 ? _mm256_and_ps(v[i], newLanes(K)) : v[i]);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / horizontalSum(s));
#pragma GCC unroll 8
  for (int i = 0; i < V; ++i) _mm256_storeu_ps(y + vecAt(i, K), _mm256_mul_ps(v[i], inv));
}

// A longer row: e^x goes to y between the passes; the overlapping last
// vector stays in a register.
CAGR_AVX2 void rowLong(const float* x, int64_t K, float* y) {
  const int64_t last = K - 8, full = K / 8;
  __m256 m = _mm256_loadu_ps(x + last);
  for (int64_t i = 0; i < full; ++i) m = _mm256_max_ps(m, _mm256_loadu_ps(x + 8 * i));
  const __m256 mx = _mm256_set1_ps(horizontalMax(m));
  __m256 s = _mm256_setzero_ps();
  for (int64_t i = 0; i < full; ++i) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + 8 * i), mx));
    _mm256_storeu_ps(y + 8 * i, e);
    s = _mm256_add_ps(s, e);
  }
  __m256 tail = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + last), mx));
  if (K % 8 != 0) s = _mm256_add_ps(s, _mm256_and_ps(tail, newLanes(K)));
  const __m256 inv = _mm256_set1_ps(1.0f / horizontalSum(s));
  for (int64_t i = 0; i < full; ++i) _mm256_storeu_ps(y + 8 * i, _mm256_mul_ps(_mm256_loadu_ps(y + 8 * i), inv));
  _mm256_storeu_ps(y + last, _mm256_mul_ps(tail, inv));
}

// One row of 1 <= K < 8: one masked vector (masked-off lanes read as -inf
// for the max and 0 for the sum).
CAGR_AVX2 void rowNarrow(const float* x, int64_t K, float* y) {
  const __m256i lanes = firstLanes(K);
  const __m256 ninf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x, lanes), _mm256_castsi256_ps(lanes));
  __m256 e = exp8(_mm256_sub_ps(v, _mm256_set1_ps(horizontalMax(v))));
  e = _mm256_and_ps(e, _mm256_castsi256_ps(lanes));
  _mm256_maskstore_ps(y, lanes, _mm256_mul_ps(e, _mm256_set1_ps(1.0f / horizontalSum(e))));
}

CAGR_AVX2 void rowsAvx2(const float* x, int64_t rows, int64_t K, float* y) {
  auto each = [&](auto row) {
    for (int64_t o = 0; o < rows; ++o) row(x + o * K, K, y + o * K);
  };
  switch ((K + 7) / 8) {
    case 1: return K < 8 ? each(rowNarrow) : each(rowInRegisters<1>);
    case 2: return each(rowInRegisters<2>);
    case 3: return each(rowInRegisters<3>);
    case 4: return each(rowInRegisters<4>);
    case 5: return each(rowInRegisters<5>);
    case 6: return each(rowInRegisters<6>);
    case 7: return each(rowInRegisters<7>);
    case 8: return each(rowInRegisters<8>);
    default: return each(rowLong);
  }
}

}  // namespace

bool softmaxRowsAvx2(const float* x, int64_t rows, int64_t K, float* y) {
  static const bool kAvx2 = hostIsa() != Isa::kBaseline;
  if (!kAvx2 || K <= 0) return false;
  rowsAvx2(x, rows, K, y);
  return true;
}

}  // namespace cagr::cpu

#else

namespace cagr::cpu {

bool softmaxRowsAvx2(const float*, int64_t, int64_t, float*) {
  return false;
}

}  // namespace cagr::cpu

#endif
