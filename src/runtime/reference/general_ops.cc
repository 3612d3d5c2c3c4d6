// Reference kernels of the general ops third-party models bring: Mod,
// comparisons and logic, GatherElements, Tile, Pad, Range, TopK, CumSum and
// the 2-D Conv.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"

namespace cagr::ref {
namespace {

// Calls f(T{}) for the numeric types and for i1 (as uint8_t).
template <typename F>
Status visitComparable(DType t, F&& f) {
  if (t == DType::kBool) return f(uint8_t{});
  return visitNumeric(t, std::forward<F>(f));
}

// y[o] = op(a[.], b[.]) with NumPy broadcasting; a and b of element type A, y of Y.
template <typename A, typename Y, typename Op>
void broadcast2(const Tensor& a, const Tensor& b, Tensor& y, Op op) {
  const A* pa = a.data<A>();
  const A* pb = b.data<A>();
  Y* py = y.data<Y>();
  std::array<std::vector<int64_t>, 2> strides{broadcastStrides(a.shape(), y.shape()), broadcastStrides(b.shape(), y.shape())};
  forEachStrided<2>(y.shape(), strides, {0, 0}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    py[o] = static_cast<Y>(op(pa[off[0]], pb[off[1]]));
  });
}

// Row-major coordinates of linear index `o` in `shape`.
void unravel(int64_t o, const std::vector<int64_t>& shape, std::vector<int64_t>& idx) {
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : o % shape[d];
    o = shape[d] == 0 ? 0 : o / shape[d];
  }
}

int64_t offsetOf(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
  return off;
}

}  // namespace

CAGR_REF_KERNEL(Mod) {
  CAGR_RETURN_IF_ERROR(requireSameType(*in[0], *in[1], "mod operands"));
  bool cStyle = intAttr(n, "fmod") != 0;
  bool integral = in[0]->dtype() == DType::kI64 || in[0]->dtype() == DType::kI32;
  if (integral) {
    for (int64_t i = 0; i < in[1]->numel(); ++i) {
      if (in[1]->getI64(i) == 0) return invalidArgument("integer modulo by zero");
    }
  }
  return visitNumeric(out[0].dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    broadcast2<T, T>(*in[0], *in[1], out[0], [cStyle](T a, T b) -> T {
      if constexpr (std::is_integral_v<T>) {
        T r = a % b;
        return (!cStyle && r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
      } else {
        T r = std::fmod(a, b);
        return (!cStyle && r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
      }
    });
    return Status::ok();
  });
}

CAGR_REF_KERNEL(Compare) {
  CAGR_RETURN_IF_ERROR(requireSameType(*in[0], *in[1], "compare operands"));
  std::string cmp = stringAttr(n, "cmp");
  return visitComparable(in[0]->dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto run = [&](auto op) { broadcast2<T, uint8_t>(*in[0], *in[1], out[0], op); };
    if (cmp == "eq") run([](T a, T b) { return a == b; });
    else if (cmp == "lt") run([](T a, T b) { return a < b; });
    else if (cmp == "le") run([](T a, T b) { return a <= b; });
    else if (cmp == "gt") run([](T a, T b) { return a > b; });
    else if (cmp == "ge") run([](T a, T b) { return a >= b; });
    else return invalidArgument("unknown comparison '" + cmp + "'");
    return Status::ok();
  });
}

CAGR_REF_KERNEL(Logic) {
  std::string fn = stringAttr(n, "fn");
  if (fn == "not") {
    const uint8_t* x = in[0]->data<uint8_t>();
    for (int64_t i = 0; i < out[0].numel(); ++i) out[0].data<uint8_t>()[i] = x[i] ? 0 : 1;
    return Status::ok();
  }
  auto run = [&](auto op) { broadcast2<uint8_t, uint8_t>(*in[0], *in[1], out[0], op); };
  if (fn == "and") run([](uint8_t a, uint8_t b) { return a && b; });
  else if (fn == "or") run([](uint8_t a, uint8_t b) { return a || b; });
  else if (fn == "xor") run([](uint8_t a, uint8_t b) { return (a != 0) != (b != 0); });
  else return invalidArgument("unknown logic function '" + fn + "'");
  return Status::ok();
}

CAGR_REF_KERNEL(GatherElements) {
  const Tensor& data = *in[0];
  const Tensor& idx = *in[1];
  CAGR_RETURN_IF_ERROR(requireIndexType(idx, "indices"));
  CAGR_ASSIGN_OR_RETURN(int64_t axis, axisOf(n, data.rank()));
  auto ax = static_cast<size_t>(axis);
  for (size_t d = 0; d < idx.shape().size(); ++d) {
    if (d != ax && idx.shape()[d] > data.shape()[d]) {
      return invalidArgument("indices " + shapeString(idx.shape()) + " exceed data " + shapeString(data.shape()));
    }
  }
  std::vector<int64_t> strides = contiguousStrides(data.shape()), pos(idx.shape().size());
  size_t es = dtypeSize(data.dtype());
  for (int64_t o = 0; o < idx.numel(); ++o) {
    unravel(o, idx.shape(), pos);
    CAGR_ASSIGN_OR_RETURN(pos[ax], wrapIndex(idx.getI64(o), data.dim(axis), o, axis));
    std::memcpy(out[0].rawData() + o * static_cast<int64_t>(es), data.rawData() + offsetOf(pos, strides) * static_cast<int64_t>(es), es);
  }
  return Status::ok();
}

CAGR_REF_KERNEL(Tile) {
  const Tensor& x = *in[0];
  std::vector<int64_t> strides = contiguousStrides(x.shape()), pos(x.shape().size());
  size_t es = dtypeSize(x.dtype());
  for (int64_t o = 0; o < out[0].numel(); ++o) {
    unravel(o, out[0].shape(), pos);
    for (size_t d = 0; d < pos.size(); ++d) pos[d] %= x.shape()[d];
    std::memcpy(out[0].rawData() + o * static_cast<int64_t>(es), x.rawData() + offsetOf(pos, strides) * static_cast<int64_t>(es), es);
  }
  return Status::ok();
}

CAGR_REF_KERNEL(Pad) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  double value = floatAttr(n, "value");
  for (int64_t i = 0; i < y.numel(); ++i) y.setF64(i, value);
  auto pads = intsAttr(n, "pads");
  std::vector<int64_t> yStrides = contiguousStrides(y.shape());
  int64_t start = 0;
  for (size_t d = 0; d < x.shape().size(); ++d) start += pads[d] * yStrides[d];
  std::array<std::vector<int64_t>, 2> strides{yStrides, contiguousStrides(x.shape())};
  visitElementBytes(dtypeSize(x.dtype()), [&](auto tag) {
    using E = decltype(tag);
    const E* src = x.data<E>();
    E* dst = y.data<E>();
    forEachStrided<2>(x.shape(), strides, {start, 0},
                      [&](int64_t, const std::array<int64_t, 2>& off) { dst[off[0]] = src[off[1]]; });
  });
  return Status::ok();
}

CAGR_REF_KERNEL(Range) {
  double start = floatAttr(n, "start"), delta = floatAttr(n, "delta");
  for (int64_t i = 0; i < out[0].numel(); ++i) out[0].setF64(i, start + static_cast<double>(i) * delta);
  return Status::ok();
}

CAGR_REF_KERNEL(TopK) {
  const Tensor& x = *in[0];
  CAGR_ASSIGN_OR_RETURN(int64_t axis, axisOf(n, x.rank()));
  int64_t k = intAttr(n, "k"), dim = x.dim(axis);
  if (k > dim) return invalidArgument("k = " + std::to_string(k) + " exceeds the axis size " + std::to_string(dim));
  bool largest = intAttr(n, "largest") != 0;
  int64_t outer = product(x.shape(), 0, static_cast<size_t>(axis));
  int64_t inner = product(x.shape(), static_cast<size_t>(axis) + 1);
  std::vector<int64_t> order(static_cast<size_t>(dim));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return x.getF64((o * dim + j) * inner + i); };
      for (int64_t j = 0; j < dim; ++j) order[static_cast<size_t>(j)] = j;
      // Ties keep the lower index first, as ONNX Runtime does.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return largest ? at(a) > at(b) : at(a) < at(b); });
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = order[static_cast<size_t>(j)], dst = (o * k + j) * inner + i;
        out[0].setF64(dst, at(src));
        out[1].data<int64_t>()[dst] = src;
      }
    }
  }
  return Status::ok();
}

CAGR_REF_KERNEL(CumSum) {
  const Tensor& x = *in[0];
  CAGR_ASSIGN_OR_RETURN(int64_t axis, axisOf(n, x.rank()));
  bool exclusive = intAttr(n, "exclusive") != 0, reverse = intAttr(n, "reverse") != 0;
  int64_t dim = x.dim(axis), outer = product(x.shape(), 0, static_cast<size_t>(axis));
  int64_t inner = product(x.shape(), static_cast<size_t>(axis) + 1);
  return visitNumeric(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out[0].data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        T acc = 0;
        for (int64_t s = 0; s < dim; ++s) {
          int64_t j = reverse ? dim - 1 - s : s, at = (o * dim + j) * inner + i;
          if (exclusive) dst[at] = acc;
          acc = static_cast<T>(acc + src[at]);
          if (!exclusive) dst[at] = acc;
        }
      }
    }
    return Status::ok();
  });
}

CAGR_REF_KERNEL(Conv) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  CAGR_ASSIGN_OR_RETURN(ConvParams p, convParams(n));
  const auto& xs = x.shape();
  const auto& ws = w.shape();
  const auto& ys = out[0].shape();
  int64_t cPerGroup = ws[1], oPerGroup = ws[0] / p.group;
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = out[0].data<T>();
    for (int64_t b = 0; b < ys[0]; ++b) {
      for (int64_t oc = 0; oc < ys[1]; ++oc) {
        int64_t c0 = (oc / oPerGroup) * cPerGroup;
        for (int64_t oh = 0; oh < ys[2]; ++oh) {
          for (int64_t ow = 0; ow < ys[3]; ++ow) {
            double acc = bias != nullptr ? bias->getF64(oc) : 0.0;
            for (int64_t c = 0; c < cPerGroup; ++c) {
              for (int64_t kh = 0; kh < ws[2]; ++kh) {
                int64_t ih = oh * p.strides[0] - p.pads[0] + kh * p.dilations[0];
                if (ih < 0 || ih >= xs[2]) continue;
                for (int64_t kw = 0; kw < ws[3]; ++kw) {
                  int64_t iw = ow * p.strides[1] - p.pads[1] + kw * p.dilations[1];
                  if (iw < 0 || iw >= xs[3]) continue;
                  acc += static_cast<double>(px[((b * xs[1] + c0 + c) * xs[2] + ih) * xs[3] + iw]) *
                         static_cast<double>(pw[((oc * cPerGroup + c) * ws[2] + kh) * ws[3] + kw]);
                }
              }
            }
            py[((b * ys[1] + oc) * ys[2] + oh) * ys[3] + ow] = static_cast<T>(acc);
          }
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace cagr::ref
