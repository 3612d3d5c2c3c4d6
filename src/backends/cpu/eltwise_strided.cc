// Strided copies (see eltwise_strided.h): coalesce once, then walk the view
// with an odometer over the outer dims and a typed inner loop; whole views
// that transpose the innermost axis go by tiles, short runs run by run.
#include "backends/cpu/eltwise_strided.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/gemm_isa.h"
#include "runtime/reference/kernel_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CAGR_HAVE_AVX2_TILES 1
#else
#define CAGR_HAVE_AVX2_TILES 0
#endif

namespace cagr::cpu {
namespace {

// Runs shorter than this are copied by a loop the compiler inlines: a
// memcpy call per short run (a transpose's 16-float rows) costs more.
constexpr int64_t kShortRun = 64;

template <typename E>
void copyInner(const E* s, int64_t stride, int64_t n, E* d) {
  if (stride == 1 && n < kShortRun) {
    for (int64_t j = 0; j < n; ++j) d[j] = s[j];
  } else if (stride == 1) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(E));
  } else if (stride == 0) {
    std::fill_n(d, n, *s);
  } else {
    for (int64_t j = 0; j < n; ++j) d[j] = s[j * stride];
  }
}

template <typename E>
void copyTyped(const E* src, const StridedLayout& l, int64_t begin, int64_t count, E* dst) {
  size_t r = l.shape.size();
  if (r == 0) {
    std::fill_n(dst, count, src[l.start]);
    return;
  }
  std::vector<int64_t> idx(r, 0);
  int64_t off = l.start, rem = begin;
  for (size_t d = r; d-- > 0;) {
    idx[d] = rem % l.shape[d];
    rem /= l.shape[d];
    off += idx[d] * l.strides[d];
  }
  const int64_t inner = l.shape[r - 1], is = l.strides[r - 1];
  while (count > 0) {
    int64_t n = std::min(count, inner - idx[r - 1]);
    copyInner(src + off, is, n, dst);
    dst += n;
    count -= n;
    off += n * is;
    idx[r - 1] += n;
    if (idx[r - 1] < inner) continue;
    off -= inner * is;
    idx[r - 1] = 0;
    for (size_t d = r - 1; d-- > 0;) {  // carry into the outer dims
      off += l.strides[d];
      if (++idx[d] < l.shape[d]) break;
      off -= l.strides[d] * l.shape[d];
      idx[d] = 0;
    }
  }
}

// ---- transposes: the innermost output dim is strided in the source ----

// A transposing view: output dim `a` reads the source contiguously (stride
// 1) and the innermost output dim `b` (the last) with stride sB. Each
// [A, B] plane is copied in 8 x 8 tiles, so both the reads (along a) and
// the writes (along b) touch whole cache lines; the remaining dims are
// walked by an odometer.
struct Transposed {
  size_t a = 0, b = 0;
  int64_t A = 0, B = 0, sB = 0, dA = 0;  // dA: the output's stride of dim a
  std::vector<int64_t> outerShape, outerSrc, outerDst;
  int64_t outer = 1;
};

bool asTransposed(const StridedLayout& l, Transposed& t) {
  size_t r = l.shape.size();
  if (r < 2 || l.strides[r - 1] == 1 || l.strides[r - 1] == 0) return false;
  t.b = r - 1;
  bool found = false;
  for (size_t d = 0; d + 1 < r; ++d) {
    if (l.strides[d] == 1) t.a = d, found = true;
  }
  if (!found) return false;
  std::vector<int64_t> dstStride(r, 1);
  for (size_t d = r - 1; d-- > 0;) dstStride[d] = dstStride[d + 1] * l.shape[d + 1];
  t.A = l.shape[t.a];
  t.B = l.shape[t.b];
  t.sB = l.strides[t.b];
  t.dA = dstStride[t.a];
  for (size_t d = 0; d + 1 < r; ++d) {
    if (d == t.a) continue;
    t.outerShape.push_back(l.shape[d]);
    t.outerSrc.push_back(l.strides[d]);
    t.outerDst.push_back(dstStride[d]);
    t.outer *= l.shape[d];
  }
  return true;
}

constexpr int64_t kTileSide = 8;

// dst[i * dA + j] = src[i + j * sB] for i < rows, j < cols (any tile, any element type).
template <typename E>
void tileScalar(const E* src, int64_t sB, int64_t rows, int64_t cols, E* dst, int64_t dA) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[i * dA + j] = src[i + j * sB];
  }
}

#if CAGR_HAVE_AVX2_TILES
// One full 8 x 8 tile of 4-byte elements: eight row loads, the standard
// unpack / shuffle / lane-permute transpose, eight row stores. Pure bit
// moves, so any 4-byte type (and every NaN payload) is copied exactly.
__attribute__((target("avx2"))) inline void tile8x8(const float* src, int64_t sB, float* dst, int64_t dA) {
  __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + sB), r2 = _mm256_loadu_ps(src + 2 * sB),
         r3 = _mm256_loadu_ps(src + 3 * sB), r4 = _mm256_loadu_ps(src + 4 * sB), r5 = _mm256_loadu_ps(src + 5 * sB),
         r6 = _mm256_loadu_ps(src + 6 * sB), r7 = _mm256_loadu_ps(src + 7 * sB);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
         t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
         t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE),
         s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE),
         s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE),
         s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(dst + dA, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(dst + 2 * dA, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(dst + 3 * dA, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(dst + 4 * dA, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(dst + 5 * dA, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(dst + 6 * dA, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(dst + 7 * dA, _mm256_permute2f128_ps(s3, s7, 0x31));
}

// Rows [i0, i1) of one [A, B] plane (i1 - i0 >= 8, B >= 8) in full tiles;
// the last tile of a row or column overlaps its neighbour inside the range
// instead of running short (it rewrites the same values, and src never
// aliases dst).
__attribute__((target("avx2"))) void planeAvx2(const float* src, const Transposed& t, int64_t i0, int64_t i1,
                                                float* dst) {
  for (int64_t i = i0; i < i1; i += kTileSide) {
    int64_t ii = std::min(i, i1 - kTileSide);
    for (int64_t j = 0; j < t.B; j += kTileSide) {
      int64_t jj = std::min(j, t.B - kTileSide);
      tile8x8(src + ii + jj * t.sB, t.sB, dst + ii * t.dA + jj, t.dA);
    }
  }
}
#endif

template <typename E>
void planeRows(const E* src, const Transposed& t, int64_t i0, int64_t i1, E* dst) {
#if CAGR_HAVE_AVX2_TILES
  if constexpr (sizeof(E) == 4) {
    static const bool kAvx2 = hostIsa() != Isa::kBaseline;
    if (kAvx2 && i1 - i0 >= kTileSide && t.B >= kTileSide) {
      return planeAvx2(reinterpret_cast<const float*>(src), t, i0, i1, reinterpret_cast<float*>(dst));
    }
  }
#endif
  for (int64_t i = i0; i < i1; i += kTileSide) {
    int64_t rows = std::min(kTileSide, i1 - i);
    for (int64_t j = 0; j < t.B; j += kTileSide) {
      tileScalar(src + i + j * t.sB, t.sB, rows, std::min(kTileSide, t.B - j), dst + i * t.dA + j, t.dA);
    }
  }
}

// Tile rows of a plane: 8 rows each, the last one up to 15 (all of them when A < 8).
int64_t rowTiles(const Transposed& t) {
  return std::max<int64_t>(1, t.A / kTileSide);
}

// Work items [lo, hi): item k is tile row (k % rowTiles) of plane k / rowTiles.
template <typename E>
void copyTransposedRange(const E* src, int64_t start, const Transposed& t, int64_t lo, int64_t hi, E* dst) {
  const int64_t tiles = rowTiles(t);
  size_t r = t.outerShape.size();
  std::vector<int64_t> idx(r, 0);
  int64_t plane = lo / tiles, rem = plane, srcOff = start, dstOff = 0;
  for (size_t d = r; d-- > 0;) {
    idx[d] = rem % t.outerShape[d];
    rem /= t.outerShape[d];
    srcOff += idx[d] * t.outerSrc[d];
    dstOff += idx[d] * t.outerDst[d];
  }
  for (int64_t k = lo; k < hi;) {
    int64_t first = k % tiles, last = std::min(tiles, first + (hi - k));
    planeRows(src + srcOff, t, first * kTileSide, last == tiles ? t.A : last * kTileSide, dst + dstOff);
    k += last - first;
    for (size_t d = r; d-- > 0;) {  // next plane
      srcOff += t.outerSrc[d];
      dstOff += t.outerDst[d];
      if (++idx[d] < t.outerShape[d]) break;
      srcOff -= t.outerSrc[d] * t.outerShape[d];
      dstOff -= t.outerDst[d] * t.outerShape[d];
      idx[d] = 0;
    }
  }
}

// ---- short contiguous runs (a transpose that keeps the innermost axis) ----

// n runs of B bytes (a compile-time size: one or two vector moves each),
// run j from s + j * pitch to d + j * B.
template <size_t B>
void runsOf(const std::byte* s, int64_t pitch, int64_t n, std::byte* d) {
  for (int64_t j = 0; j < n; ++j) std::memcpy(d + j * static_cast<int64_t>(B), s + j * pitch, B);
}

void runsAny(const std::byte* s, int64_t pitch, int64_t n, int64_t bytes, std::byte* d) {
  switch (bytes) {
    case 8: return runsOf<8>(s, pitch, n, d);
    case 16: return runsOf<16>(s, pitch, n, d);
    case 32: return runsOf<32>(s, pitch, n, d);
    case 64: return runsOf<64>(s, pitch, n, d);
    case 128: return runsOf<128>(s, pitch, n, d);
    default:
      for (int64_t j = 0; j < n; ++j) std::memcpy(d + j * bytes, s + j * pitch, static_cast<size_t>(bytes));
  }
}

// Runs [lo, hi) of a view whose innermost dim is contiguous (stride 1, rank
// >= 2) to dst: the next-to-innermost dim is walked in one tight loop per
// step of the odometer over the others.
void copyRunsRange(const std::byte* src, size_t es, const StridedLayout& l, int64_t lo, int64_t hi, std::byte* dst) {
  const size_t r = l.shape.size();
  const int64_t runBytes = l.shape[r - 1] * static_cast<int64_t>(es);
  const int64_t M = l.shape[r - 2], pitch = l.strides[r - 2] * static_cast<int64_t>(es);
  std::vector<int64_t> idx(r - 1, 0);
  int64_t off = l.start * static_cast<int64_t>(es), rem = lo;
  for (size_t d = r - 1; d-- > 0;) {
    idx[d] = rem % l.shape[d];
    rem /= l.shape[d];
    off += idx[d] * l.strides[d] * static_cast<int64_t>(es);
  }
  for (int64_t k = lo; k < hi;) {
    const int64_t n = std::min(M - idx[r - 2], hi - k);
    runsAny(src + off, pitch, n, runBytes, dst);
    dst += n * runBytes;
    k += n;
    off += n * pitch;
    idx[r - 2] += n;
    if (idx[r - 2] < M) continue;
    off -= M * pitch;
    idx[r - 2] = 0;
    for (size_t d = r - 2; d-- > 0;) {  // carry into the outer dims
      off += l.strides[d] * static_cast<int64_t>(es);
      if (++idx[d] < l.shape[d]) break;
      off -= l.strides[d] * l.shape[d] * static_cast<int64_t>(es);
      idx[d] = 0;
    }
  }
}

}  // namespace

StridedLayout coalesce(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t start) {
  StridedLayout l;
  l.start = start;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!l.shape.empty() && l.strides.back() == strides[d] * shape[d]) {
      l.shape.back() *= shape[d];
      l.strides.back() = strides[d];
      continue;
    }
    l.shape.push_back(shape[d]);
    l.strides.push_back(strides[d]);
  }
  return l;
}

StridedLayout broadcastLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape) {
  return coalesce(outShape, ref::broadcastStrides(shape, outShape));
}

bool isContiguous(const StridedLayout& l) {
  return l.start == 0 && (l.shape.empty() ? false : l.shape.size() == 1 && l.strides[0] == 1);
}

void copyStrided(const std::byte* src, size_t elemSize, const StridedLayout& l, int64_t begin, int64_t count,
                 std::byte* dst) {
  if (count <= 0) return;
  ref::visitElementBytes(elemSize, [&](auto tag) {
    using E = decltype(tag);
    copyTyped(reinterpret_cast<const E*>(src), l, begin, count, reinterpret_cast<E*>(dst));
  });
}

int threadsFor(int64_t work, int threads) {
  return work >= kParallelWork ? std::max(threads, 1) : 1;
}

void copyStridedAll(const std::byte* src, size_t elemSize, const StridedLayout& l, int64_t total, std::byte* dst,
                    int threads) {
  Transposed t;
  if (total > 0 && asTransposed(l, t)) {
    // Tiles: about two streaming passes per element (measured), so weighed as two.
    const int64_t items = t.outer * rowTiles(t);
    Status done = parallelChunks(items, threadsFor(2 * total, threads), [&](int64_t lo, int64_t hi) {
      ref::visitElementBytes(elemSize, [&](auto tag) {
        using E = decltype(tag);
        copyTransposedRange(reinterpret_cast<const E*>(src), l.start, t, lo, hi, reinterpret_cast<E*>(dst));
      });
      return Status::ok();
    });
    (void)done;  // copies cannot fail
    return;
  }
  const size_t r = l.shape.size();
  if (total > 0 && r >= 2 && l.strides[r - 1] == 1 && l.shape[r - 1] < kShortRun) {
    // Short runs whole: about two streaming passes per element (measured), so weighed as two.
    Status done = parallelChunks(total / l.shape[r - 1], threadsFor(2 * total, threads), [&](int64_t lo, int64_t hi) {
      copyRunsRange(src, elemSize, l, lo, hi, dst + static_cast<size_t>(lo * l.shape[r - 1]) * elemSize);
      return Status::ok();
    });
    (void)done;  // copies cannot fail
    return;
  }
  Status done = parallelChunks(total, threadsFor(total, threads), [&](int64_t lo, int64_t hi) {
    copyStrided(src, elemSize, l, lo, hi - lo, dst + static_cast<size_t>(lo) * elemSize);
    return Status::ok();
  });
  (void)done;  // copies cannot fail
}

}  // namespace cagr::cpu
