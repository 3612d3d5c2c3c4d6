// Table storage conversion (compile time) and the pooling kernel. The
// kernel is written once over a row reader per storage format (f32, bf16,
// f16 and int8 rows widened to f32 in registers) with GCC vector types for
// the common widths (16 / 32 / 64: a bag accumulates in registers) and plain
// loops otherwise; target_clones compiles it for AVX-512, AVX2 and baseline
// x86-64 and picks one at load time, so it vectorises without -march flags.
// The first row of the bag four ahead is prefetched.
#include "backends/cpu/rec_tables.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cagr/mir.h"

// The row readers return GCC vectors by value; they are always inlined in
// this file, so the ABI note about passing them without AVX does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace cagr::cpu {
namespace {

struct Stored {
  Tensor f32;                  // kF32: the constant itself (shared storage)
  std::vector<uint16_t> half;  // kBF16 / kF16 bit patterns
  std::vector<uint8_t> q;      // kInt8Rowwise codes
  std::vector<float> scaleBias;
};

// Same quantisation as ref::quantizeRowwiseInt8: per row scale = (max -
// min) / 255, bias = min, q = nearbyint((x - bias) / scale) clamped to [0, 255].
void quantizeRow(const float* x, int64_t dim, uint8_t* q, float* scaleBias) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (int64_t d = 0; d < dim; ++d) {
    lo = std::min(lo, x[d]);
    hi = std::max(hi, x[d]);
  }
  float scale = (hi - lo) / 255.0f;
  for (int64_t d = 0; d < dim; ++d) {
    float v = scale > 0 ? std::nearbyint((x[d] - lo) / scale) : 0.0f;
    q[d] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
  }
  scaleBias[0] = scale;
  scaleBias[1] = dim > 0 ? lo : 0.0f;
}

// Rows of the common widths are read kVec floats at a time as GCC vectors
// (one zmm, two ymm or four xmm registers, whichever clone runs).
constexpr int64_t kVec = 16;
using F16x = float __attribute__((vector_size(kVec * 4)));
using U32x = uint32_t __attribute__((vector_size(kVec * 4)));
using I32x = int32_t __attribute__((vector_size(kVec * 4)));
using U16x = uint16_t __attribute__((vector_size(kVec * 2)));
using U8x = uint8_t __attribute__((vector_size(kVec)));

template <typename U>
using FloatOf = std::conditional_t<std::is_same_v<U, uint32_t>, float, F16x>;

// Bit reinterpretation for scalars (std::bit_cast) and GCC vectors (a cast).
template <typename To, typename From>
[[gnu::always_inline]] inline To bitsAs(From x) {
  if constexpr (std::is_scalar_v<From>) {
    return std::bit_cast<To>(x);
  } else {
    return (To)x;  // NOLINT: same-size GCC vector types reinterpret
  }
}

// IEEE half bit patterns (in uint32_t lanes) -> float bits, integer ops only
// (subnormals, infinities and NaN included); scalar or vector.
template <typename U>
[[gnu::always_inline]] inline U halfBitsToFloatBits(U h) {
  const U sign = (h & 0x8000u) << 16;
  const U em = h & 0x7fffu;
  const U finite = bitsAs<U>(bitsAs<FloatOf<U>>(em << 13) * 0x1p112f);
  const U special = 0u - ((0x7bffu - em) >> 31);  // all ones for infinity / NaN
  return (finite & ~special) | (((em << 13) | 0x7f800000u) & special) | sign;
}

template <typename V>
[[gnu::always_inline]] inline V loadVector(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Row readers: row(id)[d] is element d of row id as f32, row(id).load(d)
// elements d .. d + kVec - 1.
struct F32Rows {
  const float* base;
  int64_t dim;
  struct Row {
    const float* p;
    float operator[](int64_t d) const { return p[d]; }
    [[gnu::always_inline]] F16x load(int64_t d) const { return loadVector<F16x>(p + d); }
  };
  Row row(int64_t id) const { return {base + id * dim}; }
  const void* address(int64_t id) const { return base + id * dim; }
};

struct Bf16Rows {
  const uint16_t* base;
  int64_t dim;
  struct Row {
    const uint16_t* p;
    float operator[](int64_t d) const { return std::bit_cast<float>(static_cast<uint32_t>(p[d]) << 16); }
    [[gnu::always_inline]] F16x load(int64_t d) const {
      return bitsAs<F16x>(__builtin_convertvector(loadVector<U16x>(p + d), U32x) << 16);
    }
  };
  Row row(int64_t id) const { return {base + id * dim}; }
  const void* address(int64_t id) const { return base + id * dim; }
};

struct F16Rows {
  const uint16_t* base;
  int64_t dim;
  struct Row {
    const uint16_t* p;
    float operator[](int64_t d) const { return std::bit_cast<float>(halfBitsToFloatBits<uint32_t>(p[d])); }
    [[gnu::always_inline]] F16x load(int64_t d) const {
      return bitsAs<F16x>(halfBitsToFloatBits(__builtin_convertvector(loadVector<U16x>(p + d), U32x)));
    }
  };
  Row row(int64_t id) const { return {base + id * dim}; }
  const void* address(int64_t id) const { return base + id * dim; }
};

struct Int8Rows {
  const uint8_t* base;
  const float* scaleBias;
  int64_t dim;
  struct Row {
    const uint8_t* q;
    float scale, bias;
    float operator[](int64_t d) const { return static_cast<float>(q[d]) * scale + bias; }
    [[gnu::always_inline]] F16x load(int64_t d) const {
      // Bytes widen through u16 and i32: GCC 12 turns a direct u8 -> f32 convert into scalar code.
      const U16x w = __builtin_convertvector(loadVector<U8x>(q + d), U16x);
      return __builtin_convertvector(__builtin_convertvector(w, I32x), F16x) * scale + bias;
    }
  };
  Row row(int64_t id) const { return {base + id * dim, scaleBias[2 * id], scaleBias[2 * id + 1]}; }
  const void* address(int64_t id) const { return base + id * dim; }
};

constexpr int64_t kPrefetchBags = 4;

[[gnu::always_inline]] inline void range(const BagJob& j, int64_t b, int64_t& lo, int64_t& hi) {
  if (j.bounds != nullptr) {
    lo = j.bounds[b];
    hi = j.bounds[b + 1];
  } else {
    lo = j.first + b * j.stride;
    hi = lo + j.pooling;
  }
}

// The table row of `id` (Gather ids -R..-1 wrap), or -1 when out of range.
[[gnu::always_inline]] inline int64_t rowOf(const BagJob& j, int64_t id) {
  if (j.wrapNegative && id < 0) id += j.table.rows;
  return static_cast<uint64_t>(id) < static_cast<uint64_t>(j.table.rows) ? id : -1;
}

// Adds (or maxes) row r, weighted by w, into the kVecs vector accumulators.
template <int64_t kVecs, typename Row>
[[gnu::always_inline]] inline void accumulate(PoolMode mode, bool first, float w, const Row& r, F16x* acc) {
  for (int64_t c = 0; c < kVecs; ++c) {
    const F16x v = r.load(c * kVec);
    if (mode == PoolMode::kMax) {
      acc[c] = first ? v : (acc[c] > v ? acc[c] : v);
    } else {
      acc[c] = first ? w * v : acc[c] + w * v;
    }
  }
}

// Pools ids [lo, hi) of a table kVecs * kVec wide into y in vector registers
// (zeros for an empty bag); false when an id is out of range.
template <int64_t kVecs, typename Rows, typename Id>
[[gnu::always_inline]] inline bool poolVectors(const BagJob& j, const Rows& rows, const Id* ids, int64_t lo, int64_t hi,
                                               float* y) {
  F16x acc[kVecs] = {};
  for (int64_t p = lo; p < hi; ++p) {
    const int64_t id = rowOf(j, static_cast<int64_t>(ids[p]));
    if (id < 0) return false;
    accumulate<kVecs>(j.mode, p == lo, j.weights != nullptr ? j.weights[p] : 1.0f, rows.row(id), acc);
  }
  if (j.mode == PoolMode::kMean && hi - lo > 1) {
    const float scale = 1.0f / static_cast<float>(hi - lo);
    for (int64_t c = 0; c < kVecs; ++c) acc[c] *= scale;
  }
  std::memcpy(y, acc, sizeof(acc));
  return true;
}

// Pools ids [lo, hi) into y element by element (any width; the loops
// auto-vectorise); false when an id is out of range.
template <typename Rows, typename Id>
[[gnu::always_inline]] inline bool poolElements(const BagJob& j, const Rows& rows, const Id* ids, int64_t lo,
                                                int64_t hi, float* y) {
  const int64_t dim = j.table.dim;
  for (int64_t p = lo; p < hi; ++p) {
    const int64_t id = rowOf(j, static_cast<int64_t>(ids[p]));
    if (id < 0) return false;
    const auto r = rows.row(id);
    const float w = j.weights != nullptr ? j.weights[p] : 1.0f;
    if (j.mode == PoolMode::kMax) {
      for (int64_t d = 0; d < dim; ++d) y[d] = p == lo ? r[d] : std::max(y[d], r[d]);
    } else if (p == lo) {
      for (int64_t d = 0; d < dim; ++d) y[d] = w * r[d];
    } else {
      for (int64_t d = 0; d < dim; ++d) y[d] += w * r[d];
    }
  }
  if (hi == lo) std::fill_n(y, dim, 0.0f);
  if (j.mode == PoolMode::kMean && hi - lo > 1) {
    const float scale = 1.0f / static_cast<float>(hi - lo);
    for (int64_t d = 0; d < dim; ++d) y[d] *= scale;
  }
  return true;
}

// Pools one bag into y: the common widths (kDim > 0) accumulate in vector
// registers in one pass, any other width element by element.
template <int64_t kDim, typename Rows, typename Id>
[[gnu::always_inline]] inline bool poolOne(const BagJob& j, const Rows& rows, const Id* ids, int64_t lo, int64_t hi,
                                           float* y) {
  if constexpr (kDim > 0) {
    return poolVectors<kDim / kVec>(j, rows, ids, lo, hi, y);
  } else {
    return poolElements(j, rows, ids, lo, hi, y);
  }
}

template <typename Rows, typename Id>
[[gnu::always_inline]] inline void prefetchBag(const BagJob& j, const Rows& rows, const Id* ids, int64_t b) {
  int64_t lo, hi;
  range(j, b, lo, hi);
  if (lo >= hi) return;
  auto id = static_cast<int64_t>(ids[lo]);
  if (id < 0 || id >= j.table.rows) return;
  __builtin_prefetch(rows.address(id));
}

template <int64_t kDim, typename Rows, typename Id>
[[gnu::always_inline]] inline int64_t poolWith(const BagJob& j, const Rows& rows) {
  const Id* ids = static_cast<const Id*>(j.ids);
  for (int64_t b = j.begin; b < j.end; ++b) {
    if (b + kPrefetchBags < j.end) prefetchBag(j, rows, ids, b + kPrefetchBags);
    int64_t lo, hi;
    range(j, b, lo, hi);
    if (!poolOne<kDim>(j, rows, ids, lo, hi, j.out + (b - j.begin) * j.ldOut)) return b;
  }
  return -1;
}

template <int64_t kDim, typename Rows>
[[gnu::always_inline]] inline int64_t poolByIdType(const BagJob& j, const Rows& rows) {
  return j.ids32 ? poolWith<kDim, Rows, int32_t>(j, rows) : poolWith<kDim, Rows, int64_t>(j, rows);
}

// The common embedding widths get loops with a constant trip count.
template <typename Rows>
[[gnu::always_inline]] inline int64_t poolByDim(const BagJob& j, const Rows& rows) {
  switch (j.table.dim) {
    case 16:
      return poolByIdType<16>(j, rows);
    case 32:
      return poolByIdType<32>(j, rows);
    case 64:
      return poolByIdType<64>(j, rows);
    default:
      return poolByIdType<0>(j, rows);
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) int64_t poolDispatch(const BagJob& j) {
  const TableView& t = j.table;
  switch (t.storage) {
    case Precision::kBF16:
      return poolByDim(j, Bf16Rows{static_cast<const uint16_t*>(t.data), t.dim});
    case Precision::kF16:
      return poolByDim(j, F16Rows{static_cast<const uint16_t*>(t.data), t.dim});
    case Precision::kInt8Rowwise:
      return poolByDim(j, Int8Rows{static_cast<const uint8_t*>(t.data), t.scaleBias, t.dim});
    default:
      return poolByDim(j, F32Rows{static_cast<const float*>(t.data), t.dim});
  }
}

}  // namespace

StatusOr<PoolMode> parsePoolMode(const std::string& mode) {
  if (mode == "sum") return PoolMode::kSum;
  if (mode == "mean") return PoolMode::kMean;
  if (mode == "max") return PoolMode::kMax;
  return invalidArgument("mode must be sum, mean or max, got '" + mode + "'");
}

StatusOr<EmbeddingTable> EmbeddingTable::fromConstant(const Tensor& t, Precision storage) {
  if (t.dtype() != DType::kF32 || t.rank() != 2) {
    return unsupported("tables are f32 [rows, dim] here, got " + t.typeString());
  }
  auto s = std::make_shared<Stored>();
  EmbeddingTable out;
  out.dim_ = t.dim(1);
  out.view_.rows = t.dim(0);
  out.view_.dim = t.dim(1);
  out.view_.storage = storage;
  const float* x = t.data<float>();
  int64_t n = t.numel();
  switch (storage) {
    case Precision::kF32:
      s->f32 = t;
      out.view_.data = s->f32.data<float>();
      break;
    case Precision::kBF16:
    case Precision::kF16:
      s->half.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        s->half[static_cast<size_t>(i)] = storage == Precision::kBF16 ? floatToBf16(x[i]) : floatToHalf(x[i]);
      }
      out.view_.data = s->half.data();
      break;
    case Precision::kInt8Rowwise:
      s->q.resize(static_cast<size_t>(n));
      s->scaleBias.resize(static_cast<size_t>(2 * t.dim(0)));
      for (int64_t r = 0; r < t.dim(0); ++r) {
        quantizeRow(x + r * out.dim_, out.dim_, s->q.data() + r * out.dim_, s->scaleBias.data() + 2 * r);
      }
      out.view_.data = s->q.data();
      out.view_.scaleBias = s->scaleBias.data();
      break;
    default:
      return unsupported(std::string("tables are not stored as ") + precisionName(storage));
  }
  out.owned_ = std::move(s);
  return out;
}

EmbeddingTable EmbeddingTable::fromValue(ValueId v, int64_t dim) {
  EmbeddingTable out;
  out.value_ = v;
  out.dim_ = dim;
  out.view_.dim = dim;
  return out;
}

TableView EmbeddingTable::view(const float* runtime, int64_t runtimeRows) const {
  if (isConstant()) return view_;
  TableView v = view_;
  v.data = runtime;
  v.rows = runtimeRows;
  return v;
}

int64_t poolBags(const BagJob& job) {
  if (job.begin >= job.end) return -1;
  return poolDispatch(job);
}

void bagRange(const BagJob& job, int64_t b, int64_t& lo, int64_t& hi) {
  range(job, b, lo, hi);
}

int64_t idAt(const BagJob& job, int64_t p) {
  return job.ids32 ? static_cast<const int32_t*>(job.ids)[p] : static_cast<const int64_t*>(job.ids)[p];
}

}  // namespace cagr::cpu
