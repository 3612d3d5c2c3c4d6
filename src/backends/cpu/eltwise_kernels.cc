// Tile kernels of the CPU elementwise program (see eltwise_kernels.h). Each
// op is one flat loop over contiguous operands (a scalar operand is hoisted
// out of the loop), dispatched once per tile on op and element type.
// GCC keeps float selects (clamps, NaN checks, max) as branches under
// -ftrapping-math and then does not vectorise the loops; CAGR never reads
// floating-point exception flags, so this file's loops drop that guarantee.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include "backends/cpu/eltwise_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <type_traits>

#include "runtime/reference/kernel_util.h"
#include "runtime/reference/precision.h"

namespace cagr::cpu {
namespace {

// Calls f(T{}) for the element types the arithmetic kernels compute in.
template <typename F>
bool visitNum(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      return f(float{});
    case DType::kF64:
      return f(double{});
    case DType::kI64:
      return f(int64_t{});
    case DType::kI32:
      return f(int32_t{});
    default:
      return false;
  }
}

bool isFloatType(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}
bool isNumType(DType t) {
  return isFloatType(t) || t == DType::kI64 || t == DType::kI32;
}

template <typename T>
bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  return false;
}

template <typename T, typename F>
CAGR_CPU_CLONES void mapTile(const T* x, T* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// A map computed in double and rounded to T, as the reference computes it.
template <typename T, typename F>
CAGR_CPU_CLONES void mapDouble(const T* x, T* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(f(static_cast<double>(x[i])));
}

double sigmoidD(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

template <typename T>
CAGR_CPU_CLONES void sigmoidTile(const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t i = 0; i < n; ++i) {
      float e = fastExp(-std::fabs(x[i]));
      float s = 1.0f / (1.0f + e);
      y[i] = x[i] >= 0 ? s : e * s;
    }
  } else {
    mapDouble(x, y, n, sigmoidD);
  }
}

template <typename T>
CAGR_CPU_CLONES void expTile(const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t i = 0; i < n; ++i) y[i] = fastExp(x[i]);
  } else {
    mapDouble(x, y, n, [](double v) { return std::exp(v); });
  }
}

void geluTile(const EltOp& op, auto x, auto y, int64_t n) {
  if (op.tanhGelu) {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    mapDouble(x, y, n, [c](double v) { return 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))); });
  } else {
    mapDouble(x, y, n, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); });
  }
}

// The maps defined on floating types only.
template <typename T>
void floatUnary(const EltOp& op, const T* x, T* y, int64_t n) {
  switch (op.op) {
    case OpKind::kLeakyRelu: {
      double a = op.a;
      return mapDouble(x, y, n, [a](double v) { return v >= 0 ? v : a * v; });
    }
    case OpKind::kSigmoid:
      return sigmoidTile(x, y, n);
    case OpKind::kTanh:
      return mapDouble(x, y, n, [](double v) { return std::tanh(v); });
    case OpKind::kGelu:
      return geluTile(op, x, y, n);
    case OpKind::kExp:
      return expTile(x, y, n);
    case OpKind::kLog:
      return mapDouble(x, y, n, [](double v) { return std::log(v); });
    case OpKind::kSqrt:
      return mapDouble(x, y, n, [](double v) { return std::sqrt(v); });
    case OpKind::kReciprocal:
      return mapDouble(x, y, n, [](double v) { return 1.0 / v; });
    case OpKind::kErf:
      return mapDouble(x, y, n, [](double v) { return std::erf(v); });
    case OpKind::kSoftplus:
      return mapDouble(x, y, n,
                       [](double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); });
    default:
      return;
  }
}

template <typename T>
void unaryTile(const EltOp& op, const T* x, T* y, int64_t n) {
  switch (op.op) {
    case OpKind::kRelu:
      return mapTile(x, y, n, [](T v) -> T { return v < 0 ? T{0} : v; });  // NaN stays NaN
    case OpKind::kNeg:
      return mapTile(x, y, n, [](T v) -> T { return -v; });
    case OpKind::kAbs:
      return mapTile(x, y, n, [](T v) -> T { return v < 0 ? -v : v; });
    case OpKind::kClip: {
      double lo = op.a, hi = op.b;
      // An infinite bound is never taken; its conversion must not be evaluated for integers.
      T loT = std::isfinite(lo) || std::is_floating_point_v<T> ? static_cast<T>(lo) : T{0};
      T hiT = std::isfinite(hi) || std::is_floating_point_v<T> ? static_cast<T>(hi) : T{0};
      return mapTile(x, y, n, [=](T v) -> T {
        double d = static_cast<double>(v);
        return d < lo ? loT : d > hi ? hiT : v;
      });
    }
    default:
      if constexpr (std::is_floating_point_v<T>) floatUnary(op, x, y, n);
      return;
  }
}

template <typename T, typename F>
CAGR_CPU_CLONES void binTile(TileIn a, TileIn b, T* y, int64_t n, F f) {
  const T* pa = static_cast<const T*>(a.p);
  const T* pb = static_cast<const T*>(b.p);
  if (!a.scalar && !b.scalar) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(pa[i], pb[i]);
  } else if (a.scalar && !b.scalar) {
    T va = pa[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(va, pb[i]);
  } else if (!a.scalar) {
    T vb = pb[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(pa[i], vb);
  } else {
    std::fill_n(y, n, f(pa[0], pb[0]));
  }
}

template <typename T>
bool hasZero(TileIn b, int64_t n) {
  const T* p = static_cast<const T*>(b.p);
  return std::find(p, p + (b.scalar ? 1 : n), T{0}) != p + (b.scalar ? 1 : n);
}

template <typename T>
bool binaryTile(const EltOp& op, const TileIn* in, T* y, int64_t n) {
  switch (op.op) {
    case OpKind::kAdd:
      binTile(in[0], in[1], y, n, [](T a, T b) -> T { return a + b; });
      return true;
    case OpKind::kSub:
      binTile(in[0], in[1], y, n, [](T a, T b) -> T { return a - b; });
      return true;
    case OpKind::kMul:
      binTile(in[0], in[1], y, n, [](T a, T b) -> T { return a * b; });
      return true;
    case OpKind::kDiv:
      if constexpr (std::is_integral_v<T>) {
        if (hasZero<T>(in[1], n)) return false;
      }
      binTile(in[0], in[1], y, n, [](T a, T b) -> T { return a / b; });
      return true;
    case OpKind::kPow:
      binTile(in[0], in[1], y, n,
              [](T a, T b) { return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b))); });
      return true;
    case OpKind::kMax:
      binTile(in[0], in[1], y, n, [](T a, T b) { return (a > b || isNan(a)) ? a : b; });
      return true;
    case OpKind::kMin:
      binTile(in[0], in[1], y, n, [](T a, T b) { return (a < b || isNan(a)) ? a : b; });
      return true;
    default:
      return false;
  }
}

// ---- Cast: through double like Tensor::cast, i32/i64 -> i64 exactly ----
struct BoolTag {};
template <typename T>
using Stored = std::conditional_t<std::is_same_v<T, BoolTag>, uint8_t, T>;

template <typename F>
bool visitCastType(DType t, F&& f) {
  if (t == DType::kBool) return f(BoolTag{});
  return visitNum(t, f);
}

template <typename S, typename D>
void castTile(const Stored<S>* x, Stored<D>* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<D, int64_t> && std::is_integral_v<S>) {
      y[i] = static_cast<int64_t>(x[i]);
    } else {
      double v = std::is_same_v<S, BoolTag> ? (x[i] ? 1.0 : 0.0) : static_cast<double>(x[i]);
      if constexpr (std::is_same_v<D, BoolTag>) {
        y[i] = v != 0.0;
      } else {
        y[i] = static_cast<D>(v);
      }
    }
  }
}

bool castAny(const EltOp& op, const void* x, void* y, int64_t n) {
  return visitCastType(op.in, [&](auto s) {
    return visitCastType(op.out, [&](auto d) {
      using S = decltype(s);
      using D = decltype(d);
      castTile<S, D>(static_cast<const Stored<S>*>(x), static_cast<Stored<D>*>(y), n);
      return true;
    });
  });
}

bool whereTile(const TileIn* in, void* y, int64_t n, size_t elemSize) {
  const uint8_t* c = static_cast<const uint8_t*>(in[0].p);
  ref::visitElementBytes(elemSize, [&](auto tag) {
    using E = decltype(tag);
    const E* a = static_cast<const E*>(in[1].p);
    const E* b = static_cast<const E*>(in[2].p);
    E* py = static_cast<E*>(y);
    for (int64_t i = 0; i < n; ++i) py[i] = c[i] ? a[i] : b[i];
  });
  return true;
}

template <typename T>
CAGR_CPU_CLONES void batchNormTyped(const T* x, T* y, int64_t n, int64_t first, int64_t channels, int64_t inner,
                                    const double* mean, const double* mul, const double* bias) {
  int64_t p = first % inner, c = (first / inner) % channels;
  for (int64_t j = 0; j < n;) {
    int64_t len = std::min(n - j, inner - p);
    double m = mean[c], s = mul[c], b = bias[c];
    for (int64_t k = j; k < j + len; ++k) y[k] = static_cast<T>((static_cast<double>(x[k]) - m) * s + b);
    j += len;
    p = 0;
    if (++c == channels) c = 0;
  }
}

bool isUnary(OpKind k) {
  switch (k) {
    case OpKind::kRelu:
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kClip:
    case OpKind::kLeakyRelu:
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kGelu:
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kSqrt:
    case OpKind::kReciprocal:
    case OpKind::kErf:
    case OpKind::kSoftplus:
      return true;
    default:
      return false;
  }
}

bool isIntegerSafe(OpKind k) {
  return k == OpKind::kRelu || k == OpKind::kNeg || k == OpKind::kAbs || k == OpKind::kClip;
}

bool isBinary(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kSub || k == OpKind::kMul || k == OpKind::kDiv || k == OpKind::kPow ||
         k == OpKind::kMax || k == OpKind::kMin;
}

}  // namespace

std::string eltOpSupport(const EltOp& op) {
  std::string types = std::string(dtypeName(op.in)) + " -> " + dtypeName(op.out);
  if (op.op == OpKind::kIdentity) return "";
  if (op.op == OpKind::kCast) {
    bool ok = (isNumType(op.in) || op.in == DType::kBool) && (isNumType(op.out) || op.out == DType::kBool);
    return ok ? "" : "cast " + types + " is not supported";
  }
  if (op.op == OpKind::kWhere) {
    size_t s = dtypeSize(op.out);
    return s == 1 || s == 2 || s == 4 || s == 8 ? "" : "where on " + types + " is not supported";
  }
  if (op.in != op.out) return std::string(opInfo(op.op).name) + " changes the element type (" + types + ")";
  if (isUnary(op.op)) {
    bool ok = isIntegerSafe(op.op) ? isNumType(op.in) : isFloatType(op.in);
    return ok ? "" : std::string(opInfo(op.op).name) + " on " + dtypeName(op.in) + " is not supported";
  }
  if (isBinary(op.op))
    return isNumType(op.in) ? "" : std::string(opInfo(op.op).name) + " on " + dtypeName(op.in) + " is not supported";
  if (op.op == OpKind::kBatchNorm) return isFloatType(op.in) ? "" : "batch_norm on " + types + " is not supported";
  return std::string(opInfo(op.op).name) + " is not an elementwise tile op";
}

bool runTile(const EltOp& op, const TileIn* in, void* y, int64_t n) {
  if (n <= 0) return true;
  switch (op.op) {
    case OpKind::kIdentity:
      std::memcpy(y, in[0].p, static_cast<size_t>(n) * dtypeSize(op.out));
      return true;
    case OpKind::kCast:
      return castAny(op, in[0].p, y, n);
    case OpKind::kWhere:
      return whereTile(in, y, n, dtypeSize(op.out));
    default:
      break;
  }
  return visitNum(op.out, [&](auto tag) {
    using T = decltype(tag);
    if (isBinary(op.op)) return binaryTile<T>(op, in, static_cast<T*>(y), n);
    unaryTile<T>(op, static_cast<const T*>(in[0].p), static_cast<T*>(y), n);
    return true;
  });
}

void batchNormTile(DType t, const void* x, void* y, int64_t n, int64_t first, int64_t channels, int64_t inner,
                   const double* mean, const double* mul, const double* bias) {
  if (t == DType::kF64) {
    batchNormTyped(static_cast<const double*>(x), static_cast<double*>(y), n, first, channels, inner, mean, mul, bias);
  } else {
    batchNormTyped(static_cast<const float*>(x), static_cast<float*>(y), n, first, channels, inner, mean, mul, bias);
  }
}

void roundTile(float* y, int64_t n, Precision p) {
  for (int64_t i = 0; i < n; ++i) y[i] = ref::roundTo(y[i], p);
}

}  // namespace cagr::cpu
