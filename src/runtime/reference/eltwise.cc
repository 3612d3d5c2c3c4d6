// Reference kernels of the elementwise ops: unary maps (computed in double for
// f32/f64), Cast, NumPy-broadcasting binary ops and Where.
#include <cmath>
#include <numbers>

#include "ir/op_table.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"

namespace cagr::ref {
namespace {

// y[i] = f(x[i]) computed in double; f32 and f64 only.
template <typename F>
Status mapFloat(const Tensor& x, Tensor& y, F f) {
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* s = x.data<T>();
    T* d = y.data<T>();
    for (int64_t i = 0, e = x.numel(); i < e; ++i) d[i] = static_cast<T>(f(static_cast<double>(s[i])));
    return Status::ok();
  });
}

// y[i] = f(x[i]) in the element type itself (exact ops that also make sense
// on integers: Relu, Neg, Abs, Clip).
template <typename F>
Status mapNumeric(const Tensor& x, Tensor& y, F f) {
  return visitNumeric(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* s = x.data<T>();
    T* d = y.data<T>();
    for (int64_t i = 0, e = x.numel(); i < e; ++i) d[i] = static_cast<T>(f(s[i]));
    return Status::ok();
  });
}

// y = op(a, b) with NumPy broadcasting; a, b and y share y's element type.
template <typename Op>
Status binary(const Tensor& a, const Tensor& b, Tensor& y, Op op) {
  CAGR_RETURN_IF_ERROR(requireSameType(a, b, "binary operands"));
  return visitNumeric(y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    std::array<std::vector<int64_t>, 2> strides{broadcastStrides(a.shape(), y.shape()),
                                                broadcastStrides(b.shape(), y.shape())};
    forEachStrided<2>(y.shape(), strides, {0, 0}, [&](int64_t o, const std::array<int64_t, 2>& off) {
      py[o] = static_cast<T>(op(pa[off[0]], pb[off[1]]));
    });
    return Status::ok();
  });
}

bool hasZero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.getI64(i) == 0) return true;
  }
  return false;
}

double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

}  // namespace

// ---- unary ----
CAGR_REF_KERNEL(Relu) {
  // x < 0 ? 0 : x: NaN stays NaN, as ONNX Relu (and ONNX Runtime) has it.
  return mapNumeric(*in[0], out[0], [](auto x) { return x < 0 ? decltype(x){0} : x; });
}

CAGR_REF_KERNEL(LeakyRelu) {
  double alpha = floatAttr(n, "alpha");
  return mapFloat(*in[0], out[0], [alpha](double x) { return x >= 0 ? x : alpha * x; });
}

CAGR_REF_KERNEL(Sigmoid) { return mapFloat(*in[0], out[0], sigmoid); }

CAGR_REF_KERNEL(Tanh) {
  return mapFloat(*in[0], out[0], [](double x) { return std::tanh(x); });
}

CAGR_REF_KERNEL(Gelu) {
  std::string approx = stringAttr(n, "approximate");
  if (approx == "none") {
    return mapFloat(*in[0], out[0], [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); });
  }
  if (approx == "tanh") {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    return mapFloat(*in[0], out[0],
                    [c](double x) { return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x))); });
  }
  return invalidArgument("approximate must be 'none' or 'tanh', got '" + approx + "'");
}

CAGR_REF_KERNEL(Exp) {
  return mapFloat(*in[0], out[0], [](double x) { return std::exp(x); });
}
CAGR_REF_KERNEL(Log) {
  return mapFloat(*in[0], out[0], [](double x) { return std::log(x); });
}
CAGR_REF_KERNEL(Neg) {
  return mapNumeric(*in[0], out[0], [](auto x) { return -x; });
}
CAGR_REF_KERNEL(Abs) {
  return mapNumeric(*in[0], out[0], [](auto x) { return x < 0 ? -x : x; });
}
CAGR_REF_KERNEL(Sqrt) {
  return mapFloat(*in[0], out[0], [](double x) { return std::sqrt(x); });
}
CAGR_REF_KERNEL(Reciprocal) {
  return mapFloat(*in[0], out[0], [](double x) { return 1.0 / x; });
}
CAGR_REF_KERNEL(Erf) {
  return mapFloat(*in[0], out[0], [](double x) { return std::erf(x); });
}

CAGR_REF_KERNEL(Softplus) {
  // log(1 + e^x) without overflow for large x.
  return mapFloat(*in[0], out[0],
                  [](double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); });
}

CAGR_REF_KERNEL(Identity) {
  copyBytes(*in[0], out[0]);
  return Status::ok();
}

CAGR_REF_KERNEL(Clip) {
  double lo = floatAttr(n, "min"), hi = floatAttr(n, "max");
  return mapNumeric(*in[0], out[0], [lo, hi](auto x) {
    using T = decltype(x);
    double v = static_cast<double>(x);
    return v < lo ? static_cast<T>(lo) : v > hi ? static_cast<T>(hi) : x;
  });
}

CAGR_REF_KERNEL(Cast) {
  out[0] = in[0]->cast(out[0].dtype());
  return Status::ok();
}

// ---- binary ----
CAGR_REF_KERNEL(Add) {
  return binary(*in[0], *in[1], out[0], [](auto a, auto b) { return a + b; });
}
CAGR_REF_KERNEL(Sub) {
  return binary(*in[0], *in[1], out[0], [](auto a, auto b) { return a - b; });
}
CAGR_REF_KERNEL(Mul) {
  return binary(*in[0], *in[1], out[0], [](auto a, auto b) { return a * b; });
}

CAGR_REF_KERNEL(Div) {
  // Integer division truncates toward zero (C++/ONNX Runtime); x / 0 is an error.
  bool integral = in[0]->dtype() == DType::kI64 || in[0]->dtype() == DType::kI32;
  if (integral && hasZero(*in[1])) return invalidArgument("integer division by zero");
  return binary(*in[0], *in[1], out[0], [](auto a, auto b) { return a / b; });
}

CAGR_REF_KERNEL(Pow) {
  // The exponent may have another element type: compute in f64, then convert
  // to the base's (= the output's) type.
  Tensor wide(DType::kF64, out[0].shape());
  CAGR_RETURN_IF_ERROR(binary(in[0]->cast(DType::kF64), in[1]->cast(DType::kF64), wide,
                              [](double a, double b) { return std::pow(a, b); }));
  out[0] = wide.cast(out[0].dtype());
  return Status::ok();
}

// Max/Min propagate NaN like numpy.maximum/minimum (x != x only for NaN).
CAGR_REF_KERNEL(Max) {
  return binary(*in[0], *in[1], out[0], [](auto a, auto b) { return (a > b || a != a) ? a : b; });
}
CAGR_REF_KERNEL(Min) {
  return binary(*in[0], *in[1], out[0], [](auto a, auto b) { return (a < b || a != a) ? a : b; });
}

CAGR_REF_KERNEL(Where) {
  const Tensor& cond = *in[0];
  const Tensor& a = *in[1];
  const Tensor& b = *in[2];
  if (cond.dtype() != DType::kBool) return invalidArgument("condition must be i1");
  CAGR_RETURN_IF_ERROR(requireSameType(a, b, "where operands"));
  Tensor& y = out[0];
  std::array<std::vector<int64_t>, 3> strides{broadcastStrides(cond.shape(), y.shape()),
                                              broadcastStrides(a.shape(), y.shape()),
                                              broadcastStrides(b.shape(), y.shape())};
  const uint8_t* c = cond.data<uint8_t>();
  visitElementBytes(dtypeSize(y.dtype()), [&](auto tag) {
    using E = decltype(tag);
    const E* pa = a.data<E>();
    const E* pb = b.data<E>();
    E* py = y.data<E>();
    forEachStrided<3>(y.shape(), strides, {0, 0, 0}, [&](int64_t o, const std::array<int64_t, 3>& off) {
      py[o] = c[off[0]] ? pa[off[1]] : pb[off[2]];
    });
  });
  return Status::ok();
}

}  // namespace cagr::ref
