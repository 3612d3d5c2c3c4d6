// DLRM interaction with the samples in the vector lanes (AVX-512). One block
// of 16 samples is transposed in registers to xt[k][16] (k = f * D + d, one
// zmm per k), every dot x_i . x_j of the block is then D fused multiply-adds
// of whole registers (no broadcasts, no horizontal sums, no wasted upper
// triangle), written to ot[w][16], and transposed back to the samples' output
// rows. Per sample that is F*(F-1)/2 * D / 16 FMAs plus two 16x16 register
// transposes per 16 columns, against the row kernel's broadcast FMAs over
// whole 16-wide column blocks and its scalar transposes.
#include <immintrin.h>

// GCC 12's _mm512_undefined_ps (inside the unpack / shuffle intrinsics) is a
// self-initialised variable, which -Wmaybe-uninitialized reports once inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdint>

#include "backends/cpu/gemm_isa.h"
#include "backends/cpu/rec_kernels.h"

namespace cagr::cpu {
namespace {

constexpr int64_t kBlock = 16;  // samples per block = floats per zmm

int64_t roundUp16(int64_t n) {
  return (n + kBlock - 1) / kBlock * kBlock;
}

#define CAGR_AVX512 __attribute__((target("avx512f")))

// In-register transpose of 16 rows of 16 floats (row r -> column r).
CAGR_AVX512 __attribute__((always_inline)) inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + c]: lane L holds column 4L + c of rows 4g .. 4g + 3.
  __m512 u[16];
  for (int g = 0; g < 4; ++g) {
    __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
    __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // Column 4L + c = lane L of u[c], u[4 + c], u[8 + c], u[12 + c].
  for (int c = 0; c < 4; ++c) {
    __m512 lo01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), lo23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44);
    __m512 hi01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE), hi23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
    r[c] = _mm512_shuffle_f32x4(lo01, lo23, 0x88);
    r[4 + c] = _mm512_shuffle_f32x4(lo01, lo23, 0xDD);
    r[8 + c] = _mm512_shuffle_f32x4(hi01, hi23, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(hi01, hi23, 0xDD);
  }
}

// Columns [0, width) of rows `rows` (< 16; the others read as zero) of src
// (stride ld) -> dst[k * 16 + row].
CAGR_AVX512 void toLanes(const float* src, int64_t ld, int64_t rows, int64_t width, float* dst) {
  __m512 r[16];
  for (int64_t k0 = 0; k0 < width; k0 += kBlock) {
    const int64_t n = std::min(kBlock, width - k0);
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
    for (int64_t s = 0; s < kBlock; ++s) {
      r[s] = s < rows ? _mm512_maskz_loadu_ps(m, src + s * ld + k0) : _mm512_setzero_ps();
    }
    transpose16(r);
    for (int64_t k = 0; k < n; ++k) _mm512_store_ps(dst + (k0 + k) * kBlock, r[k]);
  }
}

// src[k * 16 + row], k < width -> columns [0, width) of rows `rows` of dst.
CAGR_AVX512 void fromLanes(const float* src, int64_t width, int64_t rows, float* dst, int64_t ld) {
  __m512 r[16];
  for (int64_t k0 = 0; k0 < width; k0 += kBlock) {
    const int64_t n = std::min(kBlock, width - k0);
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
    for (int64_t k = 0; k < kBlock; ++k) r[k] = k < n ? _mm512_load_ps(src + (k0 + k) * kBlock) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t s = 0; s < rows; ++s) _mm512_mask_storeu_ps(dst + s * ld + k0, m, r[s]);
  }
}

// J dots of row a with rows b + q * stride (q < J), each over `dim` lanes
// vectors, into out + q * 16: J independent FMA chains.
template <int J>
CAGR_AVX512 __attribute__((always_inline)) inline void dots(const float* a, const float* b, int64_t stride, int64_t dim, float* out) {
  __m512 acc[J];
  for (int q = 0; q < J; ++q) acc[q] = _mm512_setzero_ps();
  for (int64_t d = 0; d < dim; ++d) {
    const __m512 x = _mm512_load_ps(a + d * kBlock);
#pragma GCC unroll 8
    for (int q = 0; q < J; ++q) acc[q] = _mm512_fmadd_ps(x, _mm512_load_ps(b + (q * stride + d) * kBlock), acc[q]);
  }
  for (int q = 0; q < J; ++q) _mm512_store_ps(out + q * kBlock, acc[q]);
}

CAGR_AVX512 void interactionBlock(const float* xt, int64_t fields, int64_t dim, bool self, float* ot) {
  float* o = ot;
  for (int64_t i = self ? 0 : 1; i < fields; ++i) {
    const float* a = xt + i * dim * kBlock;
    const int64_t end = self ? i + 1 : i;
    int64_t j = 0;
    for (; j + 8 <= end; j += 8, o += 8 * kBlock) dots<8>(a, xt + j * dim * kBlock, dim, dim, o);
    for (; j + 4 <= end; j += 4, o += 4 * kBlock) dots<4>(a, xt + j * dim * kBlock, dim, dim, o);
    for (; j < end; ++j, o += kBlock) dots<1>(a, xt + j * dim * kBlock, dim, dim, o);
  }
}

}  // namespace

int64_t interactionLanesScratchFloats(int64_t fields, int64_t dim, bool self) {
  // + one block: the start is rounded up to 64 bytes.
  return kBlock * (roundUp16(fields * dim) + roundUp16(interactionWidth(fields, self)) + 1);
}

bool interactionRowsLanes(const float* x, int64_t count, int64_t ldx, int64_t fields, int64_t dim, bool self,
                          float* out, int64_t ldOut, float* scratch) {
  if (hostIsa() != Isa::kAvx512) return false;
  // The scratch is a std::vector<float>: aligned to 16 bytes, not 64.
  float* xt = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
  float* ot = xt + kBlock * roundUp16(fields * dim);
  const int64_t width = interactionWidth(fields, self);
  for (int64_t s0 = 0; s0 < count; s0 += kBlock) {
    const int64_t rows = std::min(kBlock, count - s0);
    toLanes(x + s0 * ldx, ldx, rows, fields * dim, xt);
    interactionBlock(xt, fields, dim, self, ot);
    fromLanes(ot, width, rows, out + s0 * ldOut, ldOut);
  }
  return true;
}

}  // namespace cagr::cpu
